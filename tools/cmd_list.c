/* SPDX-License-Identifier: Apache-2.0 */
/* mpcengine list and mpcengine selftest: what the engine found and whether
 * each implementation passed the known-answer vectors on this machine. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tools/cli.h"
#include "tools/cli_args.h"
#include "tools/cli_engine.h"
#include "tools/cli_io.h"

const char cli_usage_list[] =
    "usage: mpcengine list [--json|--names] [--primitive P] [--impl NAME]\n"
    "                 [--config FILE]\n"
    "  Every implementation (self-tested first) and every module skipped as a\n"
    "  whole: plugin, primitive, implementation, class, priority, flags, memory\n"
    "  kinds, self-test state and the reason for a skip, failure or clamp.\n"
    "  --json             a JSON array of objects with keys plugin, primitive,\n"
    "                     impl, class, priority, flags (array of \"constant-time\",\n"
    "                     \"variable-time\", \"async\"), memory, selftest, reason,\n"
    "                     path, sha256, version\n"
    "  --names            only the implementations' names, one per line, at once:\n"
    "                     no self-test, and never a tune (for scripts and the shell\n"
    "                     completion)\n"
    "  --primitive P      only the implementations of P: prg|ntt|lpn|dpf\n" CLI_COMMON_HELP;

const char cli_usage_selftest[] =
    "usage: mpcengine selftest [--json] [--impl NAME] [--config FILE]\n"
    "  Run the known-answer vectors through every implementation (or only NAME)\n"
    "  and print one line each. Exit status 0 only if every one that ran passed.\n"
    "  --json             one JSON object: results, an array of objects with keys\n"
    "                     plugin, impl, path, result (\"pass\", \"fail\" or \"skipped\")\n"
    "                     and reason; then passed, failed and skipped, the counts\n" CLI_COMMON_HELP;

static const struct {
    unsigned bit;
    const char *name;
} flag_names[] = {
    {MPCE_IMPL_CONSTANT_TIME, "constant-time"},
    {MPCE_IMPL_VARIABLE_TIME, "variable-time"},
    {MPCE_IMPL_ASYNC, "async"},
};

#define NFLAGS (sizeof(flag_names) / sizeof(flag_names[0]))

static const char *dash(const char *s)
{
    return s != NULL && s[0] != '\0' ? s : "-";
}

static void flags_text(unsigned flags, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < NFLAGS; i++)
        if (flags & flag_names[i].bit)
            used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
                                     used > 0 ? "," : "", flag_names[i].name);
    if (used == 0)
        snprintf(buf, len, "-");
}

static int selected(const mpce_impl_info *row, const char *impl)
{
    return impl == NULL || strcmp(row->impl, impl) == 0;
}

/* What list's rows are filtered by: --impl and --primitive (NULL: any). */
struct list_filter {
    const char *impl, *primitive;
};

static int listed(const mpce_impl_info *row, const struct list_filter *f)
{
    return selected(row, f->impl) &&
           (f->primitive == NULL || strcmp(row->primitive, f->primitive) == 0);
}

static void print_json(const mpce_impl_info *rows, size_t count, const struct list_filter *f)
{
    int first = 1;

    putchar('[');
    for (size_t i = 0; i < count; i++) {
        const mpce_impl_info *r = &rows[i];
        if (!listed(r, f))
            continue;
        const char *const names[] = {"plugin", r->plugin, "primitive", r->primitive,
                                     "impl",   r->impl,   "class",     r->impl_class};
        const char *const state[] = {"memory", r->memory,  "selftest", r->selftest,
                                     "reason", r->reason,  "path",     r->path,
                                     "sha256", r->sha256,  "version",  r->version,
                                     "knobs",  r->knobs};
        printf("%s\n  {", first ? "" : ",");
        first = 0;
        cli_json_fields(names, 4);
        printf(", \"priority\": %d, \"flags\": [", r->priority);
        int nf = 0;
        for (size_t k = 0; k < NFLAGS; k++)
            if (r->flags & flag_names[k].bit) {
                printf("%s", nf++ > 0 ? ", " : "");
                cli_json_string(flag_names[k].name);
            }
        printf("], ");
        cli_json_fields(state, 7);
        putchar('}');
    }
    printf("%s]\n", first ? "" : "\n");
}

enum {
    COL_PLUGIN,
    COL_PRIM,
    COL_IMPL,
    COL_CLASS,
    COL_PRIO,
    COL_FLAGS,
    COL_MEMORY,
    COL_TEST,
    COL_REASON,
    NCOLS
};

/* The knobs, under the table: too long for a column. */
static void print_knobs(const mpce_impl_info *rows, size_t count, const struct list_filter *f)
{
    int width = 0, any = 0;
    for (size_t i = 0; i < count; i++)
        if (listed(&rows[i], f) && rows[i].knobs[0] != '\0') {
            any = 1;
            if ((int)strlen(rows[i].impl) > width)
                width = (int)strlen(rows[i].impl);
        }
    if (!any)
        return;
    printf("\nknobs ([default]; name values as IMPL:KNOB=VALUE[:KNOB=VALUE...] in [pins] or "
           "--impl; `mpcengine tune` measures them):\n");
    for (size_t i = 0; i < count; i++)
        if (listed(&rows[i], f) && rows[i].knobs[0] != '\0')
            printf("  %-*s  %s\n", width, rows[i].impl, rows[i].knobs);
}

static void print_table(const mpce_impl_info *rows, size_t count, const struct list_filter *f)
{
    static const char *const head[NCOLS] = {"PLUGIN", "PRIMITIVE", "IMPL",     "CLASS", "PRIORITY",
                                            "FLAGS",  "MEMORY",    "SELFTEST", "REASON"};
    int width[NCOLS];
    char prio[16], flags[64];

    /* One line per plugin first: its version says what it found here. */
    for (size_t i = 0; i < count; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(rows[j].plugin, rows[i].plugin) == 0;
        if (!seen && rows[i].impl[0] != '\0' && rows[i].version[0] != '\0')
            printf("plugin %s %s; %s\n", rows[i].plugin, rows[i].version,
                   rows[i].path[0] == '/' ? rows[i].path : "built into libmpcengine");
    }

    for (int c = 0; c < NCOLS; c++)
        width[c] = (int)strlen(head[c]);
    /* Two passes: widths first, so the columns line up. */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            for (int c = 0; c < NCOLS - 1; c++)
                printf(c == COL_PRIO ? "%*s  " : "%-*s  ", width[c], head[c]);
            printf("%s\n", head[NCOLS - 1]);
        }
        for (size_t i = 0; i < count; i++) {
            const mpce_impl_info *r = &rows[i];
            if (!listed(r, f))
                continue;
            snprintf(prio, sizeof(prio), "%d", r->priority);
            flags_text(r->flags, flags, sizeof(flags));
            const char *cell[NCOLS] = {dash(r->plugin),     dash(r->primitive), dash(r->impl),
                                       dash(r->impl_class), prio,               flags,
                                       dash(r->memory),     dash(r->selftest),  r->reason};
            if (pass == 0) {
                for (int c = 0; c < NCOLS; c++)
                    if ((int)strlen(cell[c]) > width[c])
                        width[c] = (int)strlen(cell[c]);
                continue;
            }
            /* no padding after the last non-empty cell */
            const int has_reason = cell[COL_REASON][0] != '\0';
            for (int c = 0; c < COL_TEST; c++)
                printf(c == COL_PRIO ? "%*s  " : "%-*s  ", width[c], cell[c]);
            printf("%-*s%s%s\n", has_reason ? width[COL_TEST] : 0, cell[COL_TEST],
                   has_reason ? "  " : "", cell[COL_REASON]);
        }
    }
    print_knobs(rows, count, f);
}

/* The row named impl exists, or an error naming it has been printed. */
static int check_named(const struct cli_cmd *cmd, const mpce_impl_info *rows, size_t count,
                       const char *impl)
{
    if (impl == NULL)
        return 0;
    for (size_t i = 0; i < count; i++)
        if (strcmp(rows[i].impl, impl) == 0)
            return 0;
    return cli_fail(cmd, CLI_EXIT_ENGINE, "--impl: no implementation named '%s' (see 'mpcengine list')",
                    impl);
}

/* --names: one name per line, what completing --impl needs and no more. */
static void print_names(const mpce_impl_info *rows, size_t count, const struct list_filter *f)
{
    for (size_t i = 0; i < count; i++)
        if (rows[i].impl[0] != '\0' && listed(&rows[i], f))
            printf("%s\n", rows[i].impl);
}

static int check_primitive(const struct cli_cmd *cmd, const char *primitive)
{
    static const char *const known[] = {"prg", "ntt", "lpn", "dpf"};

    if (primitive == NULL)
        return 0;
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(primitive, known[i]) == 0)
            return 0;
    return cli_fail(cmd, CLI_EXIT_USAGE, "--primitive: expected prg, ntt, lpn or dpf, got '%s'",
                    primitive);
}

int cmd_list(int argc, char **argv)
{
    struct cli_opt opts[] = {
        {"json", 0, NULL}, {"names", 0, NULL}, {"primitive", CLI_ARG, NULL}, CLI_COMMON_OPTS};
    const struct cli_cmd cmd = {"mpcengine list", cli_usage_list, opts};
    const mpce_impl_info *rows = NULL;
    size_t count = 0;
    mpce_status st;
    int rc = cli_parse(&cmd, argc, argv);

    if (rc != CLI_PARSED)
        return cli_parse_exit(rc);
    const struct list_filter f = {cli_impl(&cmd), cli_value(&cmd, "primitive")};
    const int names = cli_value(&cmd, "names") != NULL;
    if (names && cli_value(&cmd, "json") != NULL)
        return cli_fail(&cmd, CLI_EXIT_USAGE, "--json and --names: give one of them");
    rc = check_primitive(&cmd, f.primitive);
    if (rc != 0)
        return rc;
    /* --names runs on every Tab of the shell completion: it must answer at
     * once and change nothing, so its engine never tunes (a first-run tune
     * takes seconds and writes a pins file) and nothing is self-tested. */
    rc = cli_engine_start_flags(&cmd, names ? MPCE_OPT_NO_TUNE : 0);
    if (rc != 0)
        return rc;
    st = mpce_list(NULL, !names, &rows, &count);
    if (st != MPCE_OK)
        return cli_engine_fail(&cmd, st);
    rc = check_named(&cmd, rows, count, f.impl);
    if (rc != 0)
        return rc;
    if (names) {
        /* Without the dangling-pin warning: it needs the routes, which
         * self-test every candidate. */
        print_names(rows, count, &f);
        return 0;
    }
    if (cli_value(&cmd, "json") != NULL)
        print_json(rows, count, &f);
    else
        print_table(rows, count, &f);
    cli_warn_dangling_pins(&cmd);
    return 0;
}

/* selftest --json: the same rows and counts as the text, for machines. */
static void print_selftest_json(const mpce_impl_info *rows, size_t count, const char *impl,
                                size_t passed, size_t failed, size_t skipped)
{
    int first = 1;

    printf("{\"results\": [");
    for (size_t i = 0; i < count; i++) {
        const mpce_impl_info *r = &rows[i];
        if (!selected(r, impl))
            continue;
        const char *const kv[] = {"plugin", r->plugin, "impl",   r->impl,  "path",
                                  r->path,  "result", r->selftest, "reason", r->reason};
        printf("%s\n  {", first ? "" : ",");
        first = 0;
        cli_json_fields(kv, 5);
        putchar('}');
    }
    printf("%s],\n \"passed\": %zu, \"failed\": %zu, \"skipped\": %zu}\n", first ? "" : "\n",
           passed, failed, skipped);
}

int cmd_selftest(int argc, char **argv)
{
    struct cli_opt opts[] = {{"json", 0, NULL}, CLI_COMMON_OPTS};
    const struct cli_cmd cmd = {"mpcengine selftest", cli_usage_selftest, opts};
    const char *impl;
    const mpce_impl_info *rows = NULL;
    size_t count = 0, passed = 0, failed = 0, skipped = 0;
    mpce_status st, list_st;
    int rc = cli_parse(&cmd, argc, argv);

    if (rc != CLI_PARSED)
        return cli_parse_exit(rc);
    rc = cli_engine_start(&cmd);
    if (rc != 0)
        return rc;
    impl = cli_impl(&cmd);
    st = mpce_selftest(NULL, impl, &passed, &failed);
    if (st == MPCE_ERR_NOIMPL && impl != NULL)
        return cli_engine_fail(&cmd, st);
    /* Keep the self-test's error detail: a failing listing call would replace it. */
    char detail[2048];
    cli_engine_detail(cli_last_error_or(mpce_status_name(st)), detail, sizeof(detail));
    list_st = mpce_list(NULL, 0, &rows, &count);
    if (list_st != MPCE_OK)
        return cli_engine_fail(&cmd, list_st);
    for (size_t i = 0; i < count; i++)
        skipped += selected(&rows[i], impl) && strcmp(rows[i].selftest, "skipped") == 0;
    if (cli_value(&cmd, "json") != NULL) {
        print_selftest_json(rows, count, impl, passed, failed, skipped);
    } else {
        for (size_t i = 0; i < count; i++) {
            const mpce_impl_info *r = &rows[i];
            if (!selected(r, impl))
                continue;
            printf("%-8s %s%s%s\n", r->selftest, r->impl[0] != '\0' ? r->impl : r->path,
                   r->reason[0] != '\0' ? ": " : "", r->reason);
        }
        printf("%zu passed, %zu failed, %zu skipped\n", passed, failed, skipped);
    }
    cli_warn_dangling_pins(&cmd);
    if (st == MPCE_ERR_SELFTEST && cli_value(&cmd, "json") == NULL) {
        /* Each failure's reason and what to do is on its `fail` row above:
         * a third copy of the first one would only bury the others. */
        fprintf(stderr, "%s: %zu failed: the fail rows above say why and what to do\n",
                cmd.prog, failed);
        return CLI_EXIT_ENGINE;
    }
    if (st != MPCE_OK) {
        fprintf(stderr, "%s: %s\n", cmd.prog, detail);
        return CLI_EXIT_ENGINE;
    }
    return CLI_EXIT_OK;
}
