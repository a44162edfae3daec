/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpcengine-probe: the selector's helper. Engines spawn `tune --for-engine`
 * when their pins are missing or stale; `mpcengine tune` runs `tune` in the
 * foreground; `tune` runs `measure`, `knobs` and `slices` workers. Both sides open the engine with
 * the options of the engine being tuned, and never tune themselves.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/runtime/vet.h"
#include "tools/build_tree.h"
#include "tools/probe/probe.h"

static const char usage[] =
    "usage: mpcengine-probe tune [--effort quick|measure|patient] [--primitive P] [--force]\n"
    "                            [--config FILE] [--plugin-path DIRS] [--flags N]\n"
    "       mpcengine-probe measure [--effort E] [--skip-module FILE]... [options] -- ROW...\n"
    "       mpcengine-probe knobs [--effort E] [options] -- ROW=IMPL...\n"
    "       mpcengine-probe pipeline [--effort E] [options] -- ROW=SPEC|SPEC... ROW=SPEC|...\n"
    "       mpcengine-probe slices [--effort E] [options] -- ROW=IMPL...\n"
    "       mpcengine-probe crossover [--effort E] [options] -- ROW=DEVICE/HOST...\n"
    "       mpcengine-probe vet --module-fd N --path PATH [--parent PID] [--timeout-ms N]\n"
    "                           [options]\n"
    "The selector's helper (run by libmpcengine and `mpcengine tune`; not meant to be run\n"
    "by hand). tune: measure the missing or stale pins rows and write the pins file.\n"
    "measure: one worker, results on stdout. knobs: each row winner's knob values\n"
    "on the row's shape. pipeline: the DPF tree's and the LPN fold's knob values\n"
    "together, the tree's output feeding the fold. slices: where splitting a call\n"
    "over threads starts to pay for each row's winner. crossover: where a device\n"
    "implementation starts to beat the row's best host one in the row's class.\n"
    "vet: load the module open on\n"
    "descriptor N alone, run its entry point, probe, init and self-tests, and report\n"
    "each step on descriptor 3, so that the engine can refuse one that crashes.\n";

static void log_line(void *arg, mpce_log_level level, const char *plugin, const char *message)
{
    (void)arg;
    if (level >= MPCE_LOG_WARNING)
        fprintf(stderr, "%s: %s%s%s\n", mpce_log_level_name(level), plugin ? plugin : "",
                plugin ? ": " : "", message);
}

static int push(char ***list, size_t *n, char *v)
{
    char **grown = realloc(*list, (*n + 1) * sizeof(**list));
    if (!grown)
        return -1;
    *list = grown;
    (*list)[(*n)++] = v;
    return 0;
}

int probe_each_winner(mpce_engine *e, const struct probe_opts *o, const char *cmd,
                      void (*fn)(mpce_engine *e, const struct probe_opts *o, const char *key,
                                 const char *impl))
{
    /* A supervisor that is gone wants no more results: die on the closed
     * pipe rather than measure for nobody. */
    signal(SIGPIPE, SIG_DFL);
    for (size_t i = 0; i < o->n_rows; i++) {
        char key[128];
        const char *eq = strchr(o->rows[i], '=');
        if (eq == NULL || (size_t)(eq - o->rows[i]) >= sizeof(key)) {
            fprintf(stderr, "mpcengine-probe %s: expected ROW=IMPL, got %s\n", cmd, o->rows[i]);
            return 2;
        }
        memcpy(key, o->rows[i], (size_t)(eq - o->rows[i]));
        key[eq - o->rows[i]] = '\0';
        fn(e, o, key, eq + 1);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "tune") != 0 && strcmp(argv[1], "measure") != 0 &&
                      strcmp(argv[1], "slices") != 0 && strcmp(argv[1], "knobs") != 0 &&
                      strcmp(argv[1], "crossover") != 0 &&
                      strcmp(argv[1], "pipeline") != 0 && strcmp(argv[1], "vet") != 0)) {
        fputs(usage, argc < 2 || strcmp(argv[1], "--help") != 0 ? stderr : stdout);
        return argc >= 2 && strcmp(argv[1], "--help") == 0 ? 0 : 2;
    }
#if defined(MPCE_BUILD_TREE_TOOLS)
    mpce_tools_build_tree(MPCE_BUILD_TREE_TOOLS "/probe", MPCE_BUILD_TREE_TOOLS);
#endif
    const int tune = strcmp(argv[1], "tune") == 0;
    struct probe_opts o = {.effort = tune ? "measure" : "quick", .module_fd = -1};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const int has = i + 1 < argc;
        if (strcmp(a, "--") == 0) {
            for (i++; i < argc; i++)
                if (push(&o.rows, &o.n_rows, argv[i]) != 0)
                    return 1;
            break;
        } else if (strcmp(a, "--effort") == 0 && has) {
            o.effort = argv[++i];
        } else if (strcmp(a, "--primitive") == 0 && has) {
            o.primitive = argv[++i];
        } else if (strcmp(a, "--config") == 0 && has) {
            o.config = argv[++i];
        } else if (strcmp(a, "--plugin-path") == 0 && has) {
            o.plugin_path = argv[++i];
        } else if (strcmp(a, "--flags") == 0 && has) {
            o.flags = (unsigned)strtoul(argv[++i], NULL, 0);
        } else if (strcmp(a, "--skip-module") == 0 && has) {
            if (push(&o.skip, &o.n_skip, argv[++i]) != 0)
                return 1;
        } else if (strcmp(a, "--module-fd") == 0 && has) {
            o.module_fd = atoi(argv[++i]);
        } else if (strcmp(a, "--parent") == 0 && has) {
            o.parent = strtol(argv[++i], NULL, 10);
        } else if (strcmp(a, "--timeout-ms") == 0 && has) {
            o.timeout_ms = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(a, "--path") == 0 && has) {
            o.module_path = argv[++i];
        } else if (strcmp(a, "--force") == 0) {
            o.force = 1;
        } else if (strcmp(a, "--for-engine") == 0) {
            o.for_engine = 1;
        } else {
            fprintf(stderr, "mpcengine-probe: unknown or incomplete option %s\n%s", a, usage);
            return 2;
        }
    }
    /* This process is the isolation: its engines take the verdicts cached
     * by the engines that spawned it, and never spawn a vet of their own. */
    mpce_vet_in_helper = 1;
    /* The engine waits for the vet itself, on descriptor 3 (vet.c). */
    if (strcmp(argv[1], "vet") == 0)
        return probe_vet(&o);
    /* Whatever the application had open is not ours (a posix_spawn without
     * closefrom hands it all down): keep stdin, stdout and stderr only. */
    if (o.for_engine) {
        long max = sysconf(_SC_OPEN_MAX);
        for (int fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
            close(fd);
    }
    /* An engine waits on our stderr only as long as its timeout; after that
     * we finish for the next process, writing into a closed pipe. */
    signal(SIGPIPE, SIG_IGN);
    if (o.for_engine) {
        /* Detach: the engine reaps our first process at once and reads the
         * pipe until we are done or its timeout passes. */
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid > 0)
            _exit(0);
        setsid();
    }
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len <= 0) {
        fprintf(stderr, "mpcengine-probe: cannot find its own executable (/proc/self/exe)\n");
        return 1;
    }
    self[len] = '\0';

    mpce_options opts = {
        .struct_size = sizeof(opts),
        .config_path = o.config,
        .plugin_path = o.plugin_path,
        .flags = o.flags | MPCE_OPT_NO_TUNE,
        .log = log_line,
        .log_level = MPCE_LOG_WARNING,
    };
    mpce_engine *e;
    mpce_status st = mpce_engine_new(&opts, &e);
    if (st != MPCE_OK) {
        fprintf(stderr, "mpcengine-probe: %s\n", mpce_last_error());
        return 1;
    }
    int rc = tune                               ? probe_tune(e, &o, self)
             : strcmp(argv[1], "slices") == 0 ? probe_slices(e, &o)
             : strcmp(argv[1], "crossover") == 0 ? probe_crossover(e, &o)
             : strcmp(argv[1], "knobs") == 0  ? probe_knobs(e, &o)
             : strcmp(argv[1], "pipeline") == 0 ? probe_pipeline(e, &o)
                                              : probe_measure(e, &o);
    mpce_engine_free(e);
    free(o.rows);
    free(o.skip);
    return rc;
}
