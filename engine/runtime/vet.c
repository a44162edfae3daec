/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The host's side of vetting (vet.h): find a cached verdict, or spawn
 * `mpcengine-probe vet` on the module's checked descriptor, follow its steps
 * on a pipe, bound it by [tune] vet_timeout, and turn how it ended into a
 * verdict. Spawned like the tune (selector/spawn.c): posix_spawn, no fork,
 * the application's signal mask and dispositions not inherited, nothing but
 * the pipe and the module's descriptor handed down; in its own process
 * group, so a module that forks leaves nothing behind.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/runtime/vet.h"
#include "engine/runtime/vet_report.h"
#include "engine/selector/selector.h"

extern char **environ;

int mpce_vet_in_helper;
void (*mpce_vet_step_hook)(const char *step, const char *what);

/* Descriptor numbers the helper finds the pipe and the module on. */
#define VET_PIPE_FD 3
#define VET_MODULE_FD 4


/* Whether the helper's first process has ended, without reaping it: while
 * it is a zombie its process group cannot be another's. */
static int leader_ended(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
        return errno == ECHILD; /* reaped by the application (SIGCHLD ignored) */
    return si.si_pid == pid;
}

/* Kill what is left of the helper's process group, then reap the helper:
 * its wait status, or -1 if the application reaped it first. */
static int finish(pid_t pid)
{
    kill(-pid, SIGKILL);
    int status;
    pid_t r;
    while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    return r == pid ? status : -1;
}

/* What stopped a vet that is this process's, not the module's: *no_memory
 * says which (0: neither). */
enum { SHORT_MEMORY = 1, SHORT_LIMIT = 2 };

static int shortage(int err)
{
    if (err == ENOMEM)
        return SHORT_MEMORY;
    /* EINVAL: F_DUPFD asked for a descriptor above RLIMIT_NOFILE. */
    return err == EMFILE || err == ENFILE || err == EAGAIN || err == EINVAL ? SHORT_LIMIT : 0;
}

/* Spawn the helper on f; its pid and the read end of its pipe, or -1 with
 * why. */
static pid_t start(mpce_engine *e, const char *helper, const struct mpce_module_file *f,
                   int *rfd, int *no_memory, char *why, size_t len)
{
    const mpce_options *opts = e->create_opts;
    char flags[32], parent[32], ms[32];
    snprintf(parent, sizeof(parent), "%ld", (long)getpid());
    snprintf(ms, sizeof(ms), "%u", e->cfg.tune.vet_ms);
    const char *argv[24];
    size_t n = 0;
    argv[n++] = helper;
    argv[n++] = "vet";
    argv[n++] = "--module-fd";
    argv[n++] = "4";
    argv[n++] = "--path";
    argv[n++] = f->path;
    /* So that it ends with us, and by itself, whatever the module does. */
    argv[n++] = "--parent";
    argv[n++] = parent;
    argv[n++] = "--timeout-ms";
    argv[n++] = ms;
    n = mpce_selector_opts_argv(opts, argv, n, flags);
    argv[n] = NULL;

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        *no_memory = shortage(errno);
        snprintf(why, len, "pipe: %s", strerror(errno));
        return -1;
    }
    /* Above 4, so that placing them on 3 and 4 cannot clobber one with the
     * other. */
    int wfd = fcntl(fds[1], F_DUPFD_CLOEXEC, 10), mfd = fcntl(f->fd, F_DUPFD_CLOEXEC, 10);
    close(fds[1]);
    if (wfd < 0 || mfd < 0) {
        *no_memory = shortage(errno);
        snprintf(why, len, "fcntl(F_DUPFD): %s", strerror(errno));
        close(fds[0]);
        if (wfd >= 0)
            close(wfd);
        if (mfd >= 0)
            close(mfd);
        return -1;
    }
    const struct mpce_spawn_fd place[] = {{wfd, VET_PIPE_FD}, {mfd, VET_MODULE_FD}};
    pid_t pid;
    int rc = mpce_selector_spawn_helper(helper, argv, place, 2, 1, &pid);
    close(wfd);
    close(mfd);
    if (rc != 0) {
        close(fds[0]);
        *no_memory = shortage(rc);
        snprintf(why, len, "cannot start %s: %s", helper, strerror(rc));
        return -1;
    }
    *rfd = fds[0];
    return pid;
}

/* Run the helper on f: 0 with *v (pass or fail), or -1 with why when it
 * could not vet at all (*no_memory set when that was for want of memory
 * in this process). */
static int run_helper(mpce_engine *e, const char *helper, const struct mpce_module_file *f,
                      struct mpce_verdict *v, int *no_memory, char *why, size_t len)
{
    int rfd;
    pid_t pid = start(e, helper, f, &rfd, no_memory, why, len);
    if (pid < 0)
        return -1;
    struct mpce_vet_report r = {.v = v};
    struct mpce_lines lines = {.have = 0};
    const unsigned limit = e->cfg.tune.vet_ms;
    const long long deadline = mpce_monotonic_ms() + limit;
    int timed_out = 0, eof = 0;
    for (;;) {
        long long left = deadline - mpce_monotonic_ms();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd pfd = {.fd = rfd, .events = POLLIN};
        /* Wake every 50 ms: a module may hand the pipe to a child of its
         * own, so the helper's end is not always the last writer. */
        int pr = poll(&pfd, 1, (int)(left < 50 ? left : 50));
        if (pr > 0 && !eof) {
            ssize_t got = mpce_lines_read(&lines, rfd, mpce_vet_report_line, &r);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0)
                eof = 1;
        }
        if (leader_ended(pid)) {
            /* What it wrote before ending is in the pipe: take it. */
            int fl = fcntl(rfd, F_GETFL);
            fcntl(rfd, F_SETFL, fl | O_NONBLOCK);
            while (!eof) {
                ssize_t got = mpce_lines_read(&lines, rfd, mpce_vet_report_line, &r);
                if (got < 0 && errno == EINTR)
                    continue;
                if (got <= 0)
                    break;
            }
            break;
        }
        if (eof) {
            /* The pipe closed but the helper goes on: wait for it, not
             * for the pipe. */
            struct timespec ms = {0, 5000000};
            nanosleep(&ms, NULL);
        }
    }
    close(rfd);
    int status = finish(pid);
    return mpce_vet_report_judge(&r, status, timed_out, limit, no_memory, why, len);
}

/* Isolation is off in this process for a reason that does not depend on
 * the module: said once per process, and at DEBUG for each module. */
static enum mpce_vet_result off_at(mpce_engine *e, const struct mpce_module_file *f,
                                   int *said, mpce_log_level level, const char *why)
{
    if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED))
        mpce_log(&e->log, level, NULL, "module isolation is off (%s): modules are "
                 "loaded and self-tested in this process", why);
    mpce_log(&e->log, MPCE_LOG_DEBUG, NULL, "%s: not vetted out of process: module isolation "
             "is off (%s)", f->path, why);
    return MPCE_VET_OFF;
}

static enum mpce_vet_result off(mpce_engine *e, const struct mpce_module_file *f, int *said,
                                const char *why)
{
    return off_at(e, f, said, MPCE_LOG_INFO, why);
}

/* A failed verdict whose fault came after the entry point of a plugin this
 * engine's configuration disables: before vetting, such a module never
 * ran its probe or init here, so it is disabled, not failed. */
static int only_disabled_code(const mpce_engine *e, const struct mpce_verdict *v)
{
    if (v->pass || !v->late || !v->plugin[0])
        return 0;
    const struct mpce_plugin_setting *ps = mpce_config_plugin(&e->cfg, v->plugin);
    return ps && !ps->enabled;
}

static enum mpce_vet_result judged(mpce_engine *e, const struct mpce_module_file *f,
                                   struct mpce_verdict *v)
{
    if (v->pass)
        return MPCE_VET_PASS;
    if (only_disabled_code(e, v)) {
        mpce_log(&e->log, MPCE_LOG_DEBUG, NULL, "%s: its vet failed (%s), but only in code "
                 "that plugin %s, disabled here, does not run", f->path, v->reason, v->plugin);
        mpce_verdict_free(v);
        return MPCE_VET_DISABLED;
    }
    return MPCE_VET_FAIL;
}

/* A helper is there (or was named) but gave no verdict: the module's code
 * is not known to be safe to run here, so it is not loaded (fail closed),
 * and nothing is cached. */
static enum mpce_vet_result unvetted(mpce_engine *e, const struct mpce_module_file *f,
                                     struct mpce_verdict *v, const char *helper,
                                     const char *why, int no_memory)
{
    mpce_verdict_free(v);
    memset(v, 0, sizeof(*v));
    v->unvetted = 1;
    v->no_memory = no_memory == SHORT_MEMORY;
    if (no_memory == SHORT_MEMORY)
        snprintf(v->reason, sizeof(v->reason), "could not be vetted: %.150s vet: %.140s (this "
                 "process ran out of memory; nothing is known of the module)", helper, why);
    else if (no_memory == SHORT_LIMIT)
        snprintf(v->reason, sizeof(v->reason), "could not be vetted: %.150s vet: %.100s (this "
                 "process is at its limit of open files or processes: raise it, e.g. ulimit "
                 "-n or -u; nothing is known of the module)", helper, why);
    else
        snprintf(v->reason, sizeof(v->reason), "could not be vetted: %.150s vet: %.140s; fix "
                 "[tune] helper or set [tune] vet = no", helper, why);
    /* Logged as a warning once, as the loader skips it. */
    mpce_log(&e->log, MPCE_LOG_DEBUG, NULL, "%s: %s", f->path, v->reason);
    return MPCE_VET_FAIL;
}

/* A failed verdict's reason says where it is cached, so that a user who
 * fixed the module knows what to remove. */
static void say_cached_in(struct mpce_verdict *v, const char *file)
{
    size_t n = strlen(v->reason);
    snprintf(v->reason + n, sizeof(v->reason) - n, " (cached in %s: remove that file to vet it "
             "again)", file);
}

enum mpce_vet_result mpce_vet_module(mpce_engine *e, const struct mpce_module_file *f,
                                     struct mpce_verdict *v)
{
    static int said_off, said_secure, said_helper, said_named, said_cache;
    memset(v, 0, sizeof(*v));
    /* [tune] vet = no: as before vetting, nothing read, written or spawned. */
    if (!e->cfg.tune.vet)
        return off(e, f, &said_off, "[tune] vet = no");
    if (mpce_verdict_read(e, f, v)) {
        mpce_log(&e->log, MPCE_LOG_DEBUG, NULL, "%s: vet verdict from %s: %s", f->path,
                 v->source, v->pass ? "passed" : v->reason);
        /* The helper's own engines (tune workers) skip a failed module but
         * self-test the others in process, on first use, as before: they are
         * out of process already, and that first run is the warm-up their
         * measurements were made with. */
        if (v->pass && mpce_vet_in_helper) {
            mpce_verdict_free(v);
            return MPCE_VET_OFF;
        }
        if (!v->pass) {
            if (strcmp(v->source, MPCE_VERDICT_IN_MEMORY) == 0) {
                size_t n = strlen(v->reason);
                snprintf(v->reason + n, sizeof(v->reason) - n, " (remembered by this process, "
                         "which cannot write a state directory: vetted again by the next)");
            } else {
                say_cached_in(v, v->source);
            }
        }
        return judged(e, f, v);
    }
    if (mpce_vet_in_helper)
        return MPCE_VET_OFF;
    if (mpce_selector_secure())
        return off(e, f, &said_secure, "a setuid or setgid process does not start the probe "
                   "helper");
    const char *helper = mpce_selector_helper(e);
    char why[4400];
    const int helper_state = mpce_selector_helper_ok(e, helper, why, sizeof(why));
    if (helper_state < 0) /* there, but not one this process may run: fail closed */
        return unvetted(e, f, v, helper, why, 0);
    if (helper_state == 0 && e->cfg.tune.helper) {
        /* One named in [tune] helper that is missing: whoever named it
         * asked for isolation, so it fails closed as a helper that gives
         * no verdict does, rather than load a module that may crash the
         * process. Said once as a warning (it is the configuration's
         * mistake, not the modules'), each module skipped as unvetted. */
        char words[4600];
        snprintf(words, sizeof(words), "%.4400s, named in [tune] helper: every module is "
                 "skipped as not vetted; fix that path, remove it to use the installed "
                 "mpcengine-probe, or set [tune] vet = no", why);
        if (!__atomic_exchange_n(&said_named, 1, __ATOMIC_RELAXED))
            mpce_log(&e->log, MPCE_LOG_WARNING, NULL, "module isolation: %s", words);
        return unvetted(e, f, v, helper, why, 0);
    }
    if (helper_state == 0) {
        /* No helper installed: isolation off, as GStreamer scans in
         * process when its plugin scanner is not installed, so that the
         * library works without the tools package. A helper that is there
         * but cannot be started fails closed (run_helper). */
        char words[4600];
        snprintf(words, sizeof(words), "%.4400s; install mpcengine-probe or set [tune] "
                 "helper", why);
        return off_at(e, f, &said_helper, MPCE_LOG_INFO, words);
    }
    int no_memory = 0;
    if (run_helper(e, helper, f, v, &no_memory, why, sizeof(why)) != 0)
        return unvetted(e, f, v, helper, why, no_memory);
    /* A failure is logged once, as the loader skips the module. */
    mpce_log(&e->log, MPCE_LOG_DEBUG, NULL, "%s: vetted out of process: %s", f->path,
             v->pass ? "passed" : v->reason);
    if (v->pass && v->warning[0])
        mpce_log(&e->log, MPCE_LOG_WARNING, NULL, "%s: passed its vet, but %s (a device "
                 "runtime may keep these; otherwise a leak to report to its authors)", f->path,
                 v->warning);
    if (!v->cache) {
        mpce_log(&e->log, MPCE_LOG_DEBUG, NULL, "%s: vet verdict not cached: it may differ "
                 "next time", f->path);
    } else {
        int kept = mpce_verdict_write(e, f, v, why, sizeof(why));
        if (kept == 0) {
            mpce_log(&e->log, MPCE_LOG_DEBUG, NULL, "%s: vet verdict cached in %s", f->path,
                     why);
            if (!v->pass)
                say_cached_in(v, why);
        } else if (!__atomic_exchange_n(&said_cache, 1, __ATOMIC_RELAXED)) {
            mpce_log(&e->log, MPCE_LOG_INFO, NULL, "module vet verdicts cannot be cached (%s): "
                     "%s; set [tune] dir to a directory this process can write", why,
                     kept > 0 ? "they are kept in memory for this process's engines, and "
                                "every new process vets its modules again"
                              : "each engine vets its modules again");
        }
    }
    return judged(e, f, v);
}

size_t mpce_vet_apply(mpce_engine *e, const struct mpce_module *m, const struct mpce_verdict *v)
{
    size_t unvetted = 0;
    for (size_t i = 0; i < e->n_slots; i++) {
        struct mpce_slot *s = e->slots[i];
        if (s->module != m || mpce_slot_state(s) != MPCE_ST_UNTESTED)
            continue;
        const struct mpce_vet_impl *im = NULL;
        for (size_t k = 0; k < v->n_impls && !im; k++)
            if (strcmp(v->impls[k].name, s->impl->name) == 0)
                im = &v->impls[k];
        if (im && im->pass) {
            s->reason[0] = '\0';
            s->state = MPCE_ST_PASS;
        } else if (im) {
            snprintf(s->reason, sizeof(s->reason), "self-test failed: %.290s", im->reason);
            mpce_log(&e->log, MPCE_LOG_ERROR, m->name, "%s failed its self-test: %s",
                     s->impl->name, im->reason);
            s->state = MPCE_ST_FAIL;
        } else {
            /* Offered here, refused where it was vetted: its code has not
             * run out of process, so it does not run here either. */
            snprintf(s->reason, sizeof(s->reason), "not vetted: the module's vet in the probe "
                     "helper did not offer it (its probe refused it there: the environment or "
                     "the devices have changed since); the next engine vets the module again");
            mpce_log(&e->log, MPCE_LOG_WARNING, m->name, "%s: %s", s->impl->name, s->reason);
            s->state = MPCE_ST_FAIL;
            unvetted++;
        }
    }
    return unvetted;
}
