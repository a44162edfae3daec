/* SPDX-License-Identifier: Apache-2.0 */
/* mpcengine tune: become the selector's probe helper, in the foreground. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/selector/selector.h"
#include "tools/cli.h"
#include "tools/cli_args.h"
#include "tools/cli_engine.h"

const char cli_usage_tune[] =
    "usage: mpcengine tune [--effort quick|measure|patient] [--primitive P] [--force]\n"
    "                      [--config FILE] [--plugin-path DIRS]\n"
    "  Measure every installed implementation side by side, per operation, variant\n"
    "  and size class, and pin the fastest correct one for \"auto\" in the pins file:\n"
    "  the system's when writable, else the user's cache. The system's is in\n"
    "    " MPCE_PINSDIR "\n"
    "  Each candidate's output is checked against the reference first; a\n"
    "  module that crashes, hangs or answers wrongly is blacklisted. A challenger\n"
    "  replaces the priority default only if it wins by more than the default's\n"
    "  spread (the default takes more than 1 + spread times as long) and by at\n"
    "  least 1 %. Rows whose pins are current are kept.\n"
    "  --effort E         quick (common shapes, seconds), measure (default, under a\n"
    "                     minute), patient (every class, more rounds)\n"
    "  --primitive P      only prg, ntt, lpn or dpf\n"
    "  --force            measure every row again, current or not\n"
    "  --config FILE      read FILE instead of the administrator's engine.conf\n"
    "  --plugin-path DIRS module directories, ':'-separated, replacing plugin_path\n"
    "  --help             show this text\n";

static int helper_fail(const struct cli_cmd *cmd, const char *helper, int err)
{
    return cli_fail(cmd, CLI_EXIT_ENGINE, "cannot run the probe helper %s: %s (install it, "
                    "or set [tune] helper in engine.conf)", helper, strerror(err));
}

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
    const char *effort = cli_value(&cmd, "effort"), *prim = cli_value(&cmd, "primitive");
    if (effort && strcmp(effort, "quick") && strcmp(effort, "measure") && strcmp(effort, "patient"))
        return cli_fail(&cmd, CLI_EXIT_USAGE, "--effort %s: use quick, measure or patient",
                        effort);
    if (prim && strcmp(prim, "prg") && strcmp(prim, "ntt") && strcmp(prim, "lpn") &&
        strcmp(prim, "dpf"))
        return cli_fail(&cmd, CLI_EXIT_USAGE, "--primitive %s: use prg, ntt, lpn or dpf", prim);
    mpce_engine *e;
    if ((rc = cli_engine_untuned(&cmd, &e)) != 0)
        return rc;
    char helper[4096];
    snprintf(helper, sizeof(helper), "%s", mpce_selector_helper(e));
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
    /* Checked before the engine is torn down, so that the usual failure (no
     * helper installed, or not executable) is reported by this command as it
     * stands; execv's own failure below is the rarer case (a bad binary). */
    if (access(helper, X_OK) != 0)
        return helper_fail(&cmd, helper, errno);
    /* The helper replaces this process rather than running as its child: a
     * SIGTERM or Ctrl-C aimed at `mpcengine tune` then reaches the helper,
     * which stops its worker, instead of leaving both running and writing to
     * the terminal. The engine goes first: exec would drop it unflushed (its
     * census, its plugins' state), and pending output would be lost. */
    cli_engine_stop();
    fflush(stdout);
    fflush(stderr);
    execv(helper, (char *const *)argvv);
    return helper_fail(&cmd, helper, errno);
}
