/* SPDX-License-Identifier: Apache-2.0 */
/* mpcengine tune: run the selector's probe helper in the foreground. */
#include "config.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "engine/internal.h"
#include "tools/cli.h"
#include "tools/cli_args.h"
#include "tools/cli_engine.h"

extern char **environ;

const char cli_usage_tune[] =
    "usage: mpcengine tune [--effort quick|measure|patient] [--primitive P] [--force]\n"
    "                      [--config FILE] [--plugin-path DIRS]\n"
    "  Measure every installed implementation side by side, per operation, variant and\n"
    "  size class, and pin the fastest correct one for \"auto\" in the pins file (the\n"
    "  system's under " MPCE_PINSDIR " when writable, else the user's\n"
    "  cache). Each candidate's output is checked against the reference first; a\n"
    "  module that crashes, hangs or answers wrongly is blacklisted. A challenger\n"
    "  replaces the priority default only if it wins by more than the default's\n"
    "  spread and by at least 1 %. Rows whose pins are current are kept.\n"
    "  --effort E         quick (common shapes, seconds), measure (default, under a\n"
    "                     minute), patient (every class, more rounds)\n"
    "  --primitive P      only prg, ntt, lpn or dpf\n"
    "  --force            measure every row again, current or not\n"
    "  --config FILE      read FILE instead of the administrator's engine.conf\n"
    "  --plugin-path DIRS module directories, ':'-separated, replacing plugin_path\n"
    "  --help             show this text\n";

int cmd_tune(int argc, char **argv)
{
    struct cli_opt opts[] = {{"effort", CLI_ARG, NULL}, {"primitive", CLI_ARG, NULL},
                             {"force", 0, NULL}, CLI_COMMON_OPTS};
    const struct cli_cmd cmd = {"mpcengine tune", cli_usage_tune, opts};
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_PARSED)
        return cli_parse_exit(rc);
    if (cli_value(&cmd, "impl") != NULL)
        return cli_fail(&cmd, CLI_EXIT_USAGE, "--impl: tune measures every implementation");
    rc = cli_engine_start_flags(&cmd, MPCE_OPT_NO_TUNE);
    if (rc != 0)
        return rc;
    mpce_engine *e;
    if (mpce_engine_acquire(NULL, &e) != MPCE_OK)
        return cli_engine_fail(&cmd, MPCE_ERR_STATE);
    char helper[4096];
    snprintf(helper, sizeof(helper), "%s", e->cfg.tune.helper ? e->cfg.tune.helper
                                                              : MPCE_PROBE_HELPER);
    mpce_engine_unref(e);
    const char *plugin_path = NULL;
    if ((rc = cli_plugin_path(&cmd, &plugin_path)) != 0)
        return rc;
    const char *argvv[16];
    size_t n = 0;
    argvv[n++] = helper;
    argvv[n++] = "tune";
    argvv[n++] = "--effort";
    argvv[n++] = cli_value(&cmd, "effort") ? cli_value(&cmd, "effort") : "measure";
    if (cli_value(&cmd, "primitive")) {
        argvv[n++] = "--primitive";
        argvv[n++] = cli_value(&cmd, "primitive");
    }
    if (cli_value(&cmd, "force"))
        argvv[n++] = "--force";
    if (cli_value(&cmd, "config")) {
        argvv[n++] = "--config";
        argvv[n++] = cli_value(&cmd, "config");
    }
    if (plugin_path) {
        argvv[n++] = "--plugin-path";
        argvv[n++] = plugin_path;
    }
    argvv[n] = NULL;
    fflush(stdout);
    pid_t pid;
    int err = posix_spawn(&pid, helper, NULL, NULL, (char *const *)argvv, environ);
    if (err != 0)
        return cli_fail(&cmd, CLI_EXIT_ENGINE, "cannot run the probe helper %s: %s (install "
                        "it, or set [tune] helper in engine.conf)", helper, strerror(err));
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status))
        return WEXITSTATUS(status) == 0 ? CLI_EXIT_OK
                                        : WEXITSTATUS(status) == 2 ? CLI_EXIT_USAGE
                                                                   : CLI_EXIT_ENGINE;
    return cli_fail(&cmd, CLI_EXIT_ENGINE, "the probe helper %s died of signal %d", helper,
                    WTERMSIG(status));
}
