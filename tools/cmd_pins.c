/* SPDX-License-Identifier: Apache-2.0 */
/* mpcengine pins: what the selector pinned, whether it is current, and the
 * administrator's tools to clear, export and import it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/selector/pins.h"
#include "engine/selector/selector.h"
#include "tools/bench/bench.h"
#include "tools/cli.h"
#include "tools/cli_args.h"
#include "tools/cli_engine.h"
#include "tools/cli_io.h"

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
    "                     system's, else the user's) to FILE ('-': stdout), to ship\n"
    "                     to identical machines\n"
    "  --import FILE      install FILE ('-': stdin) as this machine's pins after\n"
    "                     checking its seal and that its signature (CPU, engine,\n"
    "                     variable-time policy, every module's file and SHA-256)\n"
    "                     matches this machine\n"
    "  --verify           run every implementation side by side at each current\n"
    "                     row's shape, as `mpcengine bench` does, and say whether the\n"
    "                     pinned winner is the fastest there or within that run's\n"
    "                     noise (exit 1 if one is not: `mpcengine tune --force`)\n"
    "  --config FILE      read FILE instead of the administrator's engine.conf\n"
    "  --plugin-path DIRS module directories, ':'-separated, replacing plugin_path\n"
    "  --help             show this text\n";

/* dir/pins-file into path; a directory too long for it is reported and
 * skipped rather than turned into a truncated path (some other file). */
static int pins_path(char *path, size_t len, const char *dir)
{
    int w = snprintf(path, len, "%s/%s", dir, MPCE_PINS_FILE);
    if (w < 0 || (size_t)w >= len) {
        fprintf(stderr,
                "mpcengine pins: skipped %s: the directory name is too long for a pins file "
                "path (at most %zu bytes); use a shorter [tune] dir\n",
                dir, len - 1);
        return -1;
    }
    return 0;
}

/* The crossover as the batch a caller makes (polynomials, seeds, keys),
 * with the work elements the dispatch compares. */
static void show_crossover(const struct mpce_pins_row *row)
{
    char op[64], count[128] = "";
    mpce_bench_row_op(row->key, op, sizeof(op));
    if (mpce_bench_count_text(op, row->shape, row->crossover, count, sizeof(count)) != 0)
        count[0] = '\0';
    printf("    crossover: %s from %s%s%llu work elements%s; %s\n", row->crossover_impl, count,
           count[0] ? ", " : "", (unsigned long long)row->crossover, count[0] ? " a call" : "",
           row->crossover_verdict);
}

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
        if (row->crossover)
            show_crossover(row);
        else if (row->crossover_verdict[0])
            printf("    device: %s\n", row->crossover_verdict);
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

/* The pins reader takes regular files only (it refuses FIFOs and devices
 * before reading), so standard input is first copied into a private
 * temporary file; *tmp names it for the caller to remove, and the
 * reader's messages, which name that file, are given the user's name for
 * it. */
static int stdin_to_temp(const struct cli_cmd *cmd, char *tmp, size_t len)
{
    const char *dir = getenv("TMPDIR");
    uint8_t *data = NULL;
    size_t n = 0;
    snprintf(tmp, len, "%s/mpcengine-import-XXXXXX", dir && *dir ? dir : "/tmp");
    if (cli_read_fd(STDIN_FILENO, 0, 4u << 20, &data, &n) != 0)
        return cli_fail(cmd, CLI_EXIT_USAGE, "--import -: cannot read standard input: %s%s",
                        strerror(errno), errno == EFBIG ? " (a pins file is at most 4 MiB)" : "");
    int fd = mkstemp(tmp);
    int ok = fd >= 0;
    for (size_t off = 0; ok && off < n;) {
        ssize_t w = write(fd, data + off, n - off);
        ok = w > 0 || (w < 0 && errno == EINTR);
        off += w > 0 ? (size_t)w : 0;
    }
    int err = errno;
    if (fd >= 0 && close(fd) != 0 && ok) {
        ok = 0;
        err = errno;
    }
    free(data);
    if (!ok) {
        if (fd >= 0)
            unlink(tmp);
        tmp[0] = '\0';
        return cli_fail(cmd, CLI_EXIT_ENGINE, "--import -: cannot copy standard input to a "
                        "temporary file (set TMPDIR to a writable directory): %s",
                        strerror(err));
    }
    return 0;
}

/* why, with every mention of path replaced by name. */
static void rename_in(char *why, size_t len, const char *path, const char *name)
{
    char out[1024];
    size_t used = 0, plen = strlen(path);
    for (const char *p = why; *p && used + 1 < sizeof(out);) {
        if (plen > 0 && strncmp(p, path, plen) == 0) {
            int n = snprintf(out + used, sizeof(out) - used, "%s", name);
            used += n > 0 && (size_t)n < sizeof(out) - used ? (size_t)n : 0;
            p += plen;
        } else {
            out[used++] = *p++;
        }
    }
    out[used] = '\0';
    snprintf(why, len, "%s", out);
}

static int import(const struct cli_cmd *cmd, mpce_engine *e, const char *file)
{
    struct mpce_pins p;
    char why[1024], tmp[4200] = "";
    int rc;
    const char *source = file;
    if (cli_is_std(file)) {
        if ((rc = stdin_to_temp(cmd, tmp, sizeof(tmp))) != 0)
            return rc;
        source = tmp;
    }
    enum mpce_pins_read_result r = mpce_pins_read(source, &p, why, sizeof(why));
    if (tmp[0] != '\0') {
        unlink(tmp);
        rename_in(why, sizeof(why), tmp, "standard input");
        file = "- (standard input)";
    }
    if (r != MPCE_PINS_READ_OK)
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
        if (pins_path(path, sizeof(path), dirs[i]) != 0) {
            mpce_pins_unlock(lock);
            continue;
        }
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

/* --export -: the file in use, byte for byte (it was just read back sealed;
 * a tune that replaces it meanwhile renames a whole sealed file into place,
 * and --import checks the seal in any case). */
static int export_stdout(const struct cli_cmd *cmd, const char *path)
{
    uint8_t *data = NULL;
    size_t n = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 || cli_read_fd(fd, 0, 4u << 20, &data, &n) != 0) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        return cli_fail(cmd, CLI_EXIT_ENGINE, "--export -: cannot read %s: %s", path,
                        strerror(err));
    }
    close(fd);
    int rc = cli_write_stdout(cmd, "--export -", data, n);
    free(data);
    return rc;
}

int cmd_pins(int argc, char **argv)
{
    struct cli_opt opts[] = {{"clear", 0, NULL},
                             {"export", CLI_ARG | CLI_OUT | CLI_TEXT, NULL},
                             {"import", CLI_ARG | CLI_IN, NULL},
                             {"verify", 0, NULL},
                             CLI_COMMON_OPTS};
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
            rc = cli_is_std(exp) ? export_stdout(&cmd, path)
                 : mpce_pins_write(exp, &p, why, sizeof(why)) != 0
                     ? cli_fail(&cmd, CLI_EXIT_ENGINE, "--export: %s", why)
                     : CLI_EXIT_OK;
            if (rc == CLI_EXIT_OK && !cli_is_std(exp))
                printf("exported %s to %s\n", path, exp);
            mpce_pins_free(&p);
        }
    } else if (clear) {
        for (size_t i = 0; i < n; i++) {
            if (pins_path(path, sizeof(path), dirs[i]) != 0 || access(path, F_OK) != 0)
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
            if (pins_path(path, sizeof(path), dirs[i]) == 0)
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
