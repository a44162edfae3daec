/* SPDX-License-Identifier: Apache-2.0 */
/* Reading the probe helper's report (vet_report.h). */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "engine/runtime/vet_report.h"

void mpce_vet_engine_line(char *buf, size_t len)
{
    snprintf(buf, len, "engine %s abi %u.%u", mpce_version(), MPCE_PLUGIN_ABI_MAJOR,
             MPCE_PLUGIN_ABI_MINOR);
}

void mpce_vet_report_line(void *arg, char *line)
{
    struct mpce_vet_report *r = arg;
    if (strncmp(line, "engine ", 7) == 0) {
        if (!r->engine[0])
            snprintf(r->engine, sizeof(r->engine), "%s", line);
    } else if (strncmp(line, "step ", 5) == 0) {
        const char *s = line + 5;
        /* Whether the step under way runs only for an enabled plugin (its
         * probe and later); loading, the entry point and unloading (its
         * destructors) run for every module the loader opens. */
        r->late = strcmp(s, "load") != 0 && strcmp(s, "entry") != 0 && strcmp(s, "unload") != 0;
        r->entered |= strcmp(s, "load") != 0;
        r->probed |= r->late;
        if (strcmp(s, "load") == 0)
            snprintf(r->step, sizeof(r->step), "while being loaded (dlopen, its constructors)");
        else if (strcmp(s, "unload") == 0)
            snprintf(r->step, sizeof(r->step), "while being unloaded (dlclose: its destructors "
                     "or atexit handlers)");
        else if (strcmp(s, "entry") == 0)
            snprintf(r->step, sizeof(r->step), "in its entry point (%s)",
                     MPCE_PLUGIN_ENTRY_SYMBOL);
        else if (strcmp(s, "probe") == 0 || strcmp(s, "init") == 0 || strcmp(s, "fini") == 0)
            snprintf(r->step, sizeof(r->step), "in its %s", s);
        else if (strncmp(s, "implprobe ", 10) == 0)
            snprintf(r->step, sizeof(r->step), "in the probe of implementation %.64s", s + 10);
        else if (strncmp(s, "selftest ", 9) == 0)
            snprintf(r->step, sizeof(r->step), "in the self-test of implementation %.64s",
                     s + 9);
        else
            snprintf(r->step, sizeof(r->step), "in step %.64s", s);
    } else if (strncmp(line, "kat ", 4) == 0) {
        char *name = line + 4, *sp = strchr(name, ' ');
        if (!sp)
            return;
        *sp = '\0';
        int pass = strcmp(sp + 1, "pass") == 0;
        struct mpce_verdict *v = r->v;
        struct mpce_vet_impl *grown = realloc(v->impls, (v->n_impls + 1) * sizeof(*grown));
        if (!grown || !mpce_registry_valid_name(name)) {
            r->oom |= !grown;
            if (grown)
                v->impls = grown;
            return;
        }
        v->impls = grown;
        struct mpce_vet_impl *im = &v->impls[v->n_impls++];
        snprintf(im->name, sizeof(im->name), "%s", name);
        im->pass = pass;
        snprintf(im->reason, sizeof(im->reason), "%s",
                 pass ? "" : strncmp(sp + 1, "fail ", 5) == 0 ? sp + 6 : sp + 1);
    } else if (strncmp(line, "fail ", 5) == 0) {
        if (!r->fail[0]) {
            snprintf(r->fail, sizeof(r->fail), "%s", line + 5);
            r->fail_late = r->late;
        }
    } else if (strncmp(line, "warn ", 5) == 0) {
        if (!r->v->warning[0])
            snprintf(r->v->warning, sizeof(r->v->warning), "%s", line + 5);
    } else if (strncmp(line, "error ", 6) == 0) {
        snprintf(r->error, sizeof(r->error), "%s", line + 6);
    } else if (strncmp(line, "skipped ", 8) == 0) {
        snprintf(r->skipped, sizeof(r->skipped), "%s", line + 8);
    } else if (strncmp(line, "plugin ", 7) == 0) {
        if (mpce_registry_valid_name(line + 7))
            snprintf(r->v->plugin, sizeof(r->v->plugin), "%s", line + 7);
    } else if (strcmp(line, "done") == 0) {
        r->done = 1;
    }
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGPIPE: return "SIGPIPE";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    default: return "a signal";
    }
}

int mpce_vet_report_judge(struct mpce_vet_report *r, int status, int timed_out,
                          unsigned limit_ms, int *no_memory, char *why, size_t len)
{
    struct mpce_verdict *v = r->v;
    const unsigned limit = limit_ms;
    /* Its report could not be kept: whatever the module did, nothing is
     * known of it, and the shortage is this process's. */
    if (r->oom) {
        *no_memory = 1;
        snprintf(why, len, "out of memory reading its report");
        return -1;
    }
    /* The helper announces loading before it dlopens anything: one that
     * said nothing failed on its own (not a helper, an old one without
     * `vet`, or one that cannot start), whatever the module is. */
    if (!r->step[0]) {
        if (r->error[0])
            snprintf(why, len, "%s", r->error);
        else if (timed_out)
            snprintf(why, len, "it said nothing within [tune] vet_timeout = %.1f s",
                     limit / 1000.0);
        else if (status != -1 && WIFEXITED(status))
            snprintf(why, len, "it exited with status %d having said nothing (not a "
                     "helper with `vet`?)", WEXITSTATUS(status));
        else if (status != -1 && WIFSIGNALED(status))
            snprintf(why, len, "it was killed by %s having said nothing",
                     signal_name(WTERMSIG(status)));
        else
            snprintf(why, len, "it ended having said nothing");
        return -1;
    }
    /* Another version's loader may refuse, or accept, what this one
     * would not: its verdict is no verdict here. */
    char mine[96];
    mpce_vet_engine_line(mine, sizeof(mine));
    if (strcmp(r->engine, mine) != 0) {
        if (r->engine[0])
            snprintf(why, len, "it is %.60s, this process's library is %.60s: install the "
                     "matching mpcengine-probe, or name one in [tune] helper", r->engine + 7,
                     mine + 7);
        else
            snprintf(why, len, "it did not say its engine version (an mpcengine-probe older "
                     "than this library, %.60s): install the matching one, or name one in "
                     "[tune] helper", mine + 7);
        return -1;
    }
    /* From here on the module's code ran in the helper: whatever happens,
     * the verdict is a fail unless the vet finished cleanly. Only what the
     * file itself did is cached; a timeout, SIGKILL (the OOM killer, or a
     * person), or the helper's own failure may not happen next time. */
    v->late = r->late;
    v->cache = 1;
    if (timed_out) {
        v->cache = 0;
        snprintf(v->reason, sizeof(v->reason), "could not be completed: timed out after %.1f s "
                 "%s ([tune] vet_timeout; not cached, vetted again next time)",
                 limit / 1000.0, r->step);
        return 0;
    }
    if (r->error[0]) {
        v->cache = 0;
        snprintf(v->reason, sizeof(v->reason), "could not be completed %.150s: %.160s (not cached, "
                 "vetted again next time)", r->step, r->error);
        return 0;
    }
    if (status != -1 && WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        if (sig == SIGABRT)
            snprintf(v->reason, sizeof(v->reason), "aborted (SIGABRT) %s", r->step);
        else
            snprintf(v->reason, sizeof(v->reason), "killed by %s (signal %d) %s",
                     signal_name(sig), sig, r->step);
        if (sig == SIGKILL) {
            v->cache = 0;
            snprintf(v->reason + strlen(v->reason), sizeof(v->reason) - strlen(v->reason),
                     ": could not be completed (out of memory?); not cached, vetted again "
                     "next time");
        }
        return 0;
    }
    if (!r->done) {
        if (status != -1 && WIFEXITED(status)) {
            snprintf(v->reason, sizeof(v->reason), "called exit(%d) %s", WEXITSTATUS(status),
                     r->step);
        } else {
            v->cache = 0;
            snprintf(v->reason, sizeof(v->reason), "could not be completed: the helper ended "
                     "%s before its vet finished (not cached, vetted again next time)", r->step);
        }
        return 0;
    }
    if (r->fail[0]) {
        v->late = r->fail_late;
        snprintf(v->reason, sizeof(v->reason), "%s", r->fail);
        return 0;
    }
    if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        /* Finished its report, then exited otherwise (an atexit handler or
         * destructor of the module's). */
        snprintf(v->reason, sizeof(v->reason), "exited with status %d after its vet (in its "
                 "destructors or atexit handlers)", WEXITSTATUS(status));
        return 0;
    }
    if (r->skipped[0] && !r->entered) {
        /* The helper could not even load it (a missing library, or symbols
         * only this application exports): its code was never judged, so it
         * is not loaded here either (fail closed), and not cached. */
        v->cache = 0;
        v->unvetted = 1; /* the reason is the whole story: no "failed its vet" */
        snprintf(v->reason, sizeof(v->reason), "could not be vetted: the probe helper could "
                 "not load it (%.160s); not a module: remove it; it needs a library: install "
                 "it; it needs this application's symbols: set [tune] vet = no (not cached)",
                 r->skipped);
        return 0;
    }
    v->pass = 1;
    /* Refused by its probe (a CPU feature, a device): the reason may go
     * away, so it is vetted again next time. Refused before any probe ran
     * (no entry symbol, another ABI, an invalid descriptor) is a property
     * of the file, which the fingerprint names: cached, so that a stray
     * file in a plugin directory does not cost a helper at every start. */
    v->cache = !r->skipped[0] || !r->probed;
    return 0;
}

