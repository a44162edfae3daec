/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `mpcengine-probe vet --module-fd 4 --path PATH`: the helper's side of
 * vetting (engine/runtime/vet.h). Loads the one module open on the inherited
 * descriptor (the bytes the engine checked and hashed) into an engine of its
 * own, through the library's loader, whatever [plugin.NAME] enabled says;
 * self-tests each of its implementations; unloads it. Each step is announced
 * on descriptor 3 before it runs, so a crash, exit or hang has a name:
 *
 *   engine V abi M.N      first: this helper's library (vet_report.h)
 *   step load | entry | probe | init | implprobe IMPL | selftest IMPL | fini
 *   plugin NAME           after the entry point: the plugin's name
 *   kat IMPL pass | kat IMPL fail REASON
 *   skipped REASON        the loader refused the module (an ordinary refusal)
 *   fail REASON           a fault found here: descriptors left open (before
 *                         init, or by every call of a self-test)
 *   warn REASON           worth saying, not a fault (descriptors kept after init)
 *   error MESSAGE         this helper could not vet (no verdict)
 *   done
 *
 * Descriptors left open by the constructors, the entry point or the probe
 * (before init) are a leak: nothing has been started that could own them.
 * From init on, a device runtime (CUDA's keeps its driver's descriptors
 * open for the life of the process, across fini) may keep some: that is a
 * warning in the verdict, not a fail.
 *
 * The helper ends with the engine that spawned it (PR_SET_PDEATHSIG), and
 * by its own alarm after --timeout-ms, so a module that hangs it cannot
 * outlive a host killed meanwhile.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "engine/runtime/loader.h"
#include "engine/runtime/vet.h"
#include "engine/runtime/vet_report.h"
#include "engine/verify/selftest.h"
#include "tools/probe/probe.h"

#define PIPE_FD 3

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    for (int i = 0; i < n; i++)
        if (line[i] == '\n' || line[i] == '\r')
            line[i] = ' ';
    line[n++] = '\n';
    /* Unbuffered: a crash right after must not lose the line. */
    for (size_t done = 0; done < (size_t)n;) {
        ssize_t w = write(PIPE_FD, line + done, (size_t)n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        done += (size_t)w;
    }
}

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    const struct dirent *de;
    while ((de = readdir(d)) != NULL)
        n += de->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

/* The step under way and the descriptors open when it began. */
static struct {
    char name[96];
    char words[160];
    int fds;
    int checked;       /* a step that must leave no descriptor behind */
    int before_init;   /* descriptors open before init, -1 if it never ran */
    int leaked;
} cur = {.before_init = -1};

static void end_step(void)
{
    if (!cur.checked || cur.leaked)
        return;
    int now = count_fds();
    if (now > cur.fds && cur.fds >= 0) {
        /* Before init a leak; from init on maybe a device runtime's. */
        say("%s left %d file descriptor%s open after %s", cur.before_init < 0 ? "fail" : "warn",
            now - cur.fds, now - cur.fds == 1 ? "" : "s", cur.words);
        cur.leaked = 1;
    }
}

static void begin(const char *name, const char *impl)
{
    if (strcmp(name, "plugin") == 0) { /* a name, not a step */
        say("plugin %s", impl ? impl : "");
        return;
    }
    end_step();
    snprintf(cur.name, sizeof(cur.name), "%s%s%s", name, impl ? " " : "", impl ? impl : "");
    /* A self-test's descriptors are judged by running it twice (below),
     * whether or not the plugin has an init. */
    cur.checked = strcmp(name, "init") != 0 && strcmp(name, "fini") != 0 &&
                  strcmp(name, "selftest") != 0;
    if (strcmp(name, "load") == 0)
        snprintf(cur.words, sizeof(cur.words), "it was loaded (its constructors)");
    else if (strcmp(name, "entry") == 0)
        snprintf(cur.words, sizeof(cur.words), "its entry point");
    else if (strcmp(name, "implprobe") == 0)
        snprintf(cur.words, sizeof(cur.words), "the probe of implementation %s", impl);
    else if (strcmp(name, "selftest") == 0)
        snprintf(cur.words, sizeof(cur.words), "the self-test of implementation %s", impl);
    else
        snprintf(cur.words, sizeof(cur.words), "its %s", name);
    cur.fds = count_fds();
    if (strcmp(name, "init") == 0)
        cur.before_init = cur.fds;
    say("step %s", cur.name);
}

int probe_vet(const struct probe_opts *o)
{
    if (o->module_fd < 0 || o->module_path == NULL) {
        fprintf(stderr, "mpcengine-probe vet: needs --module-fd N and --path PATH\n");
        return 2;
    }
    /* Never outlive the engine that waits for us: our process group is our
     * own, so its Ctrl-C or kill does not reach us. */
    if (o->parent > 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != o->parent) /* it died before the line above */
            return 1;
    }
    if (o->timeout_ms > 0)
        alarm((o->timeout_ms + 999) / 1000 + 1); /* the engine's own limit comes first */
    char engine_line[96];
    mpce_vet_engine_line(engine_line, sizeof(engine_line));
    say("%s", engine_line);
    mpce_vet_in_helper = 1;
    mpce_options opts = {
        .struct_size = sizeof(opts),
        .config_path = o->config,
        .flags = o->flags | MPCE_OPT_NO_TUNE | MPCE_OPT_NO_PLUGINS,
        .log_level = MPCE_LOG_ERROR,
    };
    mpce_engine *e;
    if (mpce_engine_new(&opts, &e) != MPCE_OK) {
        say("error cannot create an engine: %s", mpce_last_error());
        return 1;
    }
    const int at_start = count_fds();
    mpce_vet_step_hook = begin;
    size_t first_module = e->n_modules, first_slot = e->n_slots;
    mpce_status st = mpce_loader_load_fd(e, o->module_fd, o->module_path);
    end_step();
    if (st != MPCE_OK) {
        say("error loading: %s", mpce_last_error());
        mpce_engine_free(e);
        return 1;
    }
    const struct mpce_module *m = e->n_modules > first_module ? e->modules[first_module] : NULL;
    if (m && m->skipped)
        say("skipped %s", m->reason);
    for (size_t i = first_slot; i < e->n_slots; i++) {
        struct mpce_slot *s = e->slots[i];
        if (mpce_slot_state(s) != MPCE_ST_UNTESTED)
            continue;
        begin("selftest", s->impl->name);
        char why[300] = "";
        int rc = mpce_selftest_slot(s, why, sizeof(why));
        const int after_one = count_fds();
        if (rc == 0 && !cur.leaked && cur.fds >= 0 && after_one > cur.fds) {
            /* A runtime may open its driver lazily on the first call; a
             * leak opens again on every call, and a host making millions
             * of calls runs out: once more tells the two apart. */
            char again[300] = "";
            int rc2 = mpce_selftest_slot(s, again, sizeof(again));
            const int after_two = count_fds();
            if (rc2 == 0 && after_two > after_one)
                say("fail left %d file descriptor%s open on each of two runs of the "
                    "self-test of implementation %s (a leak on every call)",
                    after_two - after_one, after_two - after_one == 1 ? "" : "s",
                    s->impl->name);
            else
                say("warn left %d file descriptor%s open after the self-test of "
                    "implementation %s (on its first run only)", after_one - cur.fds,
                    after_one - cur.fds == 1 ? "" : "s", s->impl->name);
            cur.leaked = 1;
        }
        end_step();
        cur.checked = 0;
        /* Memory running out here says nothing of the module: no verdict,
         * so none is cached, and the host vets it again next time. */
        if (rc == MPCE_SELFTEST_NO_MEMORY)
            say("error the self-test of %s ran out of memory: %s", s->impl->name, why);
        else if (rc == 0)
            say("kat %s pass", s->impl->name);
        else
            say("kat %s fail %s", s->impl->name, why);
    }
    const int inited = m && m->inited;
    mpce_engine_free(e); /* fini, dlclose, and the module's descriptor closed */
    mpce_vet_step_hook = NULL;
    /* What init opened, fini must have closed; the module's own descriptor
     * is closed with it. */
    int now = count_fds();
    if (!cur.leaked && now >= 0 && at_start >= 0 && now > at_start - 1)
        say("%s left %d file descriptor%s open after %s", inited ? "warn" : "fail",
            now - (at_start - 1),
            now - (at_start - 1) == 1 ? "" : "s",
            inited ? "its fini (opened by init or later, never closed)" : "it was unloaded");
    say("done");
    return 0;
}
