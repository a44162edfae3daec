/* SPDX-License-Identifier: Apache-2.0 */
/* mpcengine pins: what the selector pinned, whether it is current, and the
 * administrator's tools to clear, export and import it. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/selector/pins.h"
#include "engine/selector/selector.h"
#include "tools/cli.h"
#include "tools/cli_args.h"
#include "tools/cli_engine.h"

const char cli_usage_pins[] =
    "usage: mpcengine pins [--clear | --export FILE | --import FILE | --verify]\n"
    "                      [--config FILE] [--plugin-path DIRS]\n"
    "  Show the selector's pins files (the system's, then the user's cache): when\n"
    "  and how hard they were measured, each row's winner, runner-up and verdict,\n"
    "  whether the row is current for the installed plugins and this CPU (and why\n"
    "  not), and the modules blacklisted while tuning.\n"
    "  --clear            delete the pins files this user can write: \"auto\" goes\n"
    "                     back to priority order until the next tune\n"
    "  --export FILE      write the first pins file measured on this machine (the\n"
    "                     system's, else the user's) to FILE, to ship to identical\n"
    "                     machines\n"
    "  --import FILE      install FILE as this machine's pins after checking its seal\n"
    "                     and that its signature (CPU, engine, variable-time policy,\n"
    "                     every module's file and SHA-256) matches this machine\n"
    "  --verify           run every implementation side by side at each current\n"
    "                     row's shape, as `mpcengine bench` does, and say whether the\n"
    "                     pinned winner is the fastest there or within that run's\n"
    "                     noise (exit 1 if one is not: `mpcengine tune --force`)\n"
    "  --config FILE      read FILE instead of the administrator's engine.conf\n"
    "  --plugin-path DIRS module directories, ':'-separated, replacing plugin_path\n"
    "  --help             show this text\n";

static void show(mpce_engine *e, const char *path)
{
    struct mpce_pins p;
    char why[1024];
    enum mpce_pins_read_result r = mpce_pins_read(path, &p, why, sizeof(why));
    if (r == MPCE_PINS_READ_MISSING) {
        printf("%s: none\n", path);
        return;
    }
    if (r != MPCE_PINS_READ_OK) {
        printf("%s: not used: %s\n", path, why);
        return;
    }
    printf("%s: measured %s (%s effort) by libmpcengine %s\n  cpu: %s\n", path, p.date,
           p.effort, p.engine_version, p.cpu);
    for (size_t i = 0; i < p.n_rows; i++) {
        const struct mpce_pins_row *row = &p.rows[i];
        int cur = mpce_selector_row_current(e, &p, row, why, sizeof(why));
        printf("  %-28s %-24s runner-up %-24s %s\n    %s\n", row->key,
               row->winner[0] ? row->winner : "-", row->runner_up[0] ? row->runner_up : "-",
               cur ? "current" : "STALE", row->verdict);
        if (!cur)
            printf("    stale: %s\n", why);
        if (row->knob_verdict[0])
            printf("    knobs: %s; %s\n", row->knobs[0] ? row->knobs : "defaults",
                   row->knob_verdict);
        if (row->slice_verdict[0])
            printf("    threads: %s\n", row->slice_verdict);
        for (size_t k = 0; k < row->n_cands; k++) {
            const struct mpce_pins_cand *c = &row->cands[k];
            if (strcmp(c->status, "ok") == 0)
                printf("      %-26s %12.1f ns/call  spread %5.1f %%%s%s\n", c->impl,
                       c->median * 1e9, c->spread * 100.0, c->why[0] ? "  " : "", c->why);
            else if (strcmp(c->status, "screened") == 0)
                printf("      %-26s %12.1f ns/call  screened: %s\n", c->impl,
                       c->median * 1e9, c->why);
            else
                printf("      %-26s %s: %s\n", c->impl, c->status, c->why);
        }
    }
    for (size_t i = 0; i < p.n_blacklist; i++)
        printf("  blacklisted: %s: %s\n", p.blacklist[i].path, p.blacklist[i].reason);
    mpce_pins_free(&p);
}

/* The first pins file that reads back sealed, as "auto" would look. */
/* The first pins file "auto" would use, read as the engine reads it, that
 * was measured on this machine (CPU, engine, policy): stale files are not
 * shipped. */
static int in_use(mpce_engine *e, char *path, size_t len, struct mpce_pins *p)
{
    char dirs[2][4096], why[1024];
    size_t n = mpce_selector_dirs(&e->cfg, dirs);
    for (size_t i = 0; i < n; i++) {
        if (mpce_selector_read(e, dirs[i], p, path, len, why, sizeof(why)) !=
            MPCE_PINS_READ_OK)
            continue;
        if (mpce_selector_header_current(e, p, why, sizeof(why)))
            return 1;
        mpce_pins_free(p);
    }
    return 0;
}

static int import(const struct cli_cmd *cmd, mpce_engine *e, const char *file)
{
    struct mpce_pins p;
    char why[1024];
    int rc;
    if (mpce_pins_read(file, &p, why, sizeof(why)) != MPCE_PINS_READ_OK)
        return cli_fail(cmd, CLI_EXIT_USAGE, "--import: %s", why);
    for (size_t i = 0; i < p.n_rows; i++)
        if (!mpce_selector_row_current(e, &p, &p.rows[i], why, sizeof(why))) {
            rc = cli_fail(cmd, CLI_EXIT_USAGE, "--import %s: row %s does not match this "
                          "machine: %s; run `mpcengine tune` here instead", file,
                          p.rows[i].key, why);
            mpce_pins_free(&p);
            return rc;
        }
    char dirs[2][4096];
    size_t n = mpce_selector_dirs(&e->cfg, dirs);
    for (size_t i = 0; i < n; i++) {
        int lock = mpce_pins_lock(dirs[i], 10000, why, sizeof(why));
        if (lock < 0)
            continue;
        char path[4200];
        snprintf(path, sizeof(path), "%s/%s", dirs[i], MPCE_PINS_FILE);
        rc = mpce_pins_write(path, &p, why, sizeof(why));
        mpce_pins_unlock(lock);
        if (rc == 0) {
            printf("imported %s into %s (%zu rows)\n", file, path, p.n_rows);
            mpce_pins_free(&p);
            return CLI_EXIT_OK;
        }
    }
    mpce_pins_free(&p);
    return cli_fail(cmd, CLI_EXIT_ENGINE, "--import: no pins directory could be written: %s",
                    why);
}

int cmd_pins(int argc, char **argv)
{
    struct cli_opt opts[] = {{"clear", 0, NULL}, {"export", CLI_ARG, NULL},
                             {"import", CLI_ARG, NULL}, {"verify", 0, NULL}, CLI_COMMON_OPTS};
    const struct cli_cmd cmd = {"mpcengine pins", cli_usage_pins, opts};
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_PARSED)
        return cli_parse_exit(rc);
    const char *exp = cli_value(&cmd, "export"), *imp = cli_value(&cmd, "import");
    const int clear = cli_value(&cmd, "clear") != NULL;
    const int verify = cli_value(&cmd, "verify") != NULL;
    if (cli_value(&cmd, "impl") != NULL || (!!exp + !!imp + clear + verify) > 1)
        return cli_fail(&cmd, CLI_EXIT_USAGE, "use at most one of --clear, --export, --import "
                        "and --verify (and no --impl)");
    mpce_engine *e;
    if ((rc = cli_engine_untuned(&cmd, &e)) != 0)
        return rc;
    char dirs[2][4096], path[4200], why[1024];
    size_t n = mpce_selector_dirs(&e->cfg, dirs);
    rc = CLI_EXIT_OK;
    if (imp) {
        rc = import(&cmd, e, imp);
    } else if (verify) {
        struct mpce_pins p;
        if (!in_use(e, path, sizeof(path), &p))
            rc = cli_fail(&cmd, CLI_EXIT_ENGINE, "--verify: no pins file measured on this "
                          "machine: run `mpcengine tune` first");
        else {
            rc = cli_pins_verify(e, &p, path);
            mpce_pins_free(&p);
        }
    } else if (exp) {
        struct mpce_pins p;
        if (!in_use(e, path, sizeof(path), &p))
            rc = cli_fail(&cmd, CLI_EXIT_ENGINE, "--export: no pins file measured on this "
                          "machine (CPU, engine version and variable-time policy) to export: "
                          "run `mpcengine tune` first");
        else {
            if (mpce_pins_write(exp, &p, why, sizeof(why)) != 0)
                rc = cli_fail(&cmd, CLI_EXIT_ENGINE, "--export: %s", why);
            else
                printf("exported %s to %s\n", path, exp);
            mpce_pins_free(&p);
        }
    } else if (clear) {
        for (size_t i = 0; i < n; i++) {
            snprintf(path, sizeof(path), "%s/%s", dirs[i], MPCE_PINS_FILE);
            if (access(path, F_OK) != 0)
                continue;
            /* Removing takes the directory's write permission: the system's
             * file is root's to clear, and a user clearing their own cache
             * has not failed because of it. EACCES only: another error (a
             * read-only file system) is a failure even for root. */
            if (access(dirs[i], W_OK | X_OK) != 0 && errno == EACCES) {
                printf("kept %s: not writable by this user (run as root to clear it)\n", path);
                continue;
            }
            int lock = mpce_pins_lock(dirs[i], 10000, why, sizeof(why));
            if (lock < 0 || unlink(path) != 0) {
                rc = cli_fail(&cmd, CLI_EXIT_ENGINE, "--clear: %s: %s", path,
                              lock < 0 ? why : strerror(errno));
            } else {
                printf("removed %s\n", path);
            }
            if (lock >= 0)
                mpce_pins_unlock(lock);
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            snprintf(path, sizeof(path), "%s/%s", dirs[i], MPCE_PINS_FILE);
            show(e, path);
        }
        /* The engine here runs with MPCE_OPT_NO_TUNE, whose mode is always
         * off: what the administrator configured is what matters. */
        printf("[tune] mode = %s (as configured; this command does not tune)\n",
               mpce_tune_mode_name(e->cfg.tune.configured_mode));
    }
    mpce_engine_unref(e);
    return rc;
}
