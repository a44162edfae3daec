/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/cli.h"
#include "tools/cli_args.h"

int cli_fail(const struct cli_cmd *cmd, int status, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: ", cmd->prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return status;
}

static struct cli_opt *find_opt(const struct cli_cmd *cmd, const char *name, size_t len)
{
    for (struct cli_opt *o = cmd->opts; o->name != NULL; o++)
        if (strlen(o->name) == len && memcmp(o->name, name, len) == 0)
            return o;
    return NULL;
}

const char *cli_value(const struct cli_cmd *cmd, const char *name)
{
    const struct cli_opt *o = find_opt(cmd, name, strlen(name));

    return o != NULL ? o->value : NULL;
}

int cli_is_std(const char *path)
{
    return path != NULL && strcmp(path, "-") == 0;
}

/* One command runs per process, and only a few of its options are ever
 * read from files: a small table is all the bookkeeping that needs. */
static struct {
    const char *name, *origin;
} origins[4];

void cli_set_origin(const char *name, const char *origin)
{
    for (size_t i = 0; i < sizeof(origins) / sizeof(origins[0]); i++)
        if (origins[i].name == NULL || strcmp(origins[i].name, name) == 0) {
            origins[i].name = name;
            origins[i].origin = origin;
            return;
        }
}

const char *cli_origin(const char *name, char *buf, size_t len)
{
    for (size_t i = 0; i < sizeof(origins) / sizeof(origins[0]) && origins[i].name; i++)
        if (strcmp(origins[i].name, name) == 0) {
            snprintf(buf, len, "%s", origins[i].origin);
            return buf;
        }
    snprintf(buf, len, "--%s", name);
    return buf;
}

/* "-" twice among the inputs (or the outputs) cannot work: standard input
 * is read once, and two outputs on standard output would run together. */
static int check_std(const struct cli_cmd *cmd, unsigned kind, const char *what)
{
    const char *first = NULL;
    int binary = 0;

    for (const struct cli_opt *o = cmd->opts; o->name != NULL; o++) {
        if (!(o->flags & kind) || !cli_is_std(o->value))
            continue;
        if (first != NULL)
            return cli_fail(cmd, CLI_EXIT_USAGE, "--%s and --%s both name '-' (standard %s): "
                            "at most one can; name a file for the other", first, o->name,
                            what);
        first = o->name;
        binary = !(o->flags & CLI_TEXT);
    }
    if (binary && kind == CLI_OUT && isatty(STDOUT_FILENO))
        return cli_fail(cmd, CLI_EXIT_USAGE, "--%s -: standard output is a terminal, and "
                        "the output is binary: redirect it to a file or a pipe, or name a "
                        "file", first);
    return 0;
}

static int wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    return 0;
}

int cli_parse(const struct cli_cmd *cmd, int argc, char **argv)
{
    /* Help wins over every other problem on the line, so that a user who
     * got an option wrong can always ask what the right one is. */
    if (wants_help(argc, argv)) {
        fputs(cmd->usage, stdout);
        return CLI_HELP_SHOWN;
    }
    for (struct cli_opt *o = cmd->opts; o->name != NULL; o++)
        o->value = NULL;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
            return cli_fail(cmd, CLI_EXIT_USAGE, "unexpected argument '%s' (see --help)", arg);
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq != NULL ? (size_t)(eq - name) : strlen(name);
        struct cli_opt *o = find_opt(cmd, name, len);
        /* 'mpcengine --verbose list' lands here too (main moves it behind
         * the command): say where it does apply. */
        if (o == NULL && len == 7 && memcmp(name, "verbose", 7) == 0)
            return cli_fail(cmd, CLI_EXIT_USAGE, "unknown option '--verbose': it applies to "
                            "prg, ntt, lpn and dpf only (see --help)");
        if (o == NULL)
            return cli_fail(cmd, CLI_EXIT_USAGE, "unknown option '--%.*s' (see --help)",
                            (int)len, name);
        if (o->value != NULL)
            return cli_fail(cmd, CLI_EXIT_USAGE, "--%s given twice", o->name);
        if (!(o->flags & CLI_ARG)) {
            if (eq != NULL)
                return cli_fail(cmd, CLI_EXIT_USAGE, "--%s takes no value", o->name);
            o->value = "";
            continue;
        }
        if (eq != NULL) {
            o->value = eq + 1;
        } else {
            /* "--key --in x" means the value was forgotten, not that the key
             * is "--in"; a value that really starts with "--" needs "=". */
            if (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)
                return cli_fail(cmd, CLI_EXIT_USAGE, "--%s: missing value", o->name);
            o->value = argv[++i];
        }
        if (o->value[0] == '\0')
            return cli_fail(cmd, CLI_EXIT_USAGE, "--%s: empty value", o->name);
    }

    for (const struct cli_opt *o = cmd->opts; o->name != NULL; o++)
        if ((o->flags & CLI_REQUIRED) && o->value == NULL)
            return cli_fail(cmd, CLI_EXIT_USAGE, "missing required option --%s (see --help)",
                            o->name);
    /* The engine opens and checks the configuration file itself (owner,
     * mode, the file it parsed is the file it checked), which standard
     * input cannot satisfy. */
    const struct cli_opt *conf = find_opt(cmd, "config", strlen("config"));
    if (conf && conf->value && strcmp(conf->value, "-") == 0)
        return cli_fail(cmd, CLI_EXIT_USAGE, "--config -: the configuration must be a file "
                        "(the engine checks who owns it); save it to a file and name that");
    int rc = check_std(cmd, CLI_IN, "input");
    if (rc == 0)
        rc = check_std(cmd, CLI_OUT, "output");
    return rc != 0 ? rc : CLI_PARSED;
}

int cli_parse_exit(int parse_result)
{
    return parse_result == CLI_HELP_SHOWN ? CLI_EXIT_OK : parse_result;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decimal, or hex after "0x"; no sign, no spaces, no overflow. */
static int parse_u64(const char *s, size_t len, uint64_t *out)
{
    unsigned base = 10;
    uint64_t v = 0;

    if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        len -= 2;
    }
    if (len == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        int d = base == 16 ? hex_digit(s[i]) : (s[i] >= '0' && s[i] <= '9' ? s[i] - '0' : -1);
        if (d < 0 || v > (UINT64_MAX - (uint64_t)d) / base)
            return -1;
        v = v * base + (uint64_t)d;
    }
    *out = v;
    return 0;
}

int cli_u64(const struct cli_cmd *cmd, const char *name, uint64_t min, uint64_t max,
            uint64_t *out)
{
    const char *s = cli_value(cmd, name);
    uint64_t v;

    if (s == NULL)
        return 0;
    if (parse_u64(s, strlen(s), &v) != 0 || v < min || v > max)
        return cli_fail(cmd, CLI_EXIT_USAGE,
                        "--%s: expected an integer in [%llu, %llu], got '%s'", name,
                        (unsigned long long)min, (unsigned long long)max, s);
    *out = v;
    return 0;
}

/* Number of comma-separated items in s. */
static size_t count_items(const char *s)
{
    size_t n = 1;

    for (; *s != '\0'; s++)
        n += *s == ',';
    return n;
}

int cli_u64_list(const struct cli_cmd *cmd, const char *name, uint64_t min, uint64_t max,
                 size_t max_count, uint64_t **out, size_t *count)
{
    const char *s = cli_value(cmd, name);
    size_t n = count_items(s);
    uint64_t *v;

    if (n > max_count)
        return cli_fail(cmd, CLI_EXIT_USAGE, "--%s: at most %zu values, got %zu", name,
                        max_count, n);
    v = malloc(n * sizeof(*v));
    if (v == NULL)
        return cli_fail(cmd, CLI_EXIT_ENGINE, "--%s: out of memory", name);
    for (size_t i = 0; i < n; i++) {
        const char *end = strchr(s, ',');
        size_t len = end != NULL ? (size_t)(end - s) : strlen(s);
        if (parse_u64(s, len, &v[i]) != 0 || v[i] < min || v[i] > max) {
            free(v);
            return cli_fail(cmd, CLI_EXIT_USAGE,
                            "--%s: value %zu: expected an integer in [%llu, %llu], got '%.*s'",
                            name, i + 1, (unsigned long long)min, (unsigned long long)max,
                            (int)len, s);
        }
        s += len + 1;
    }
    *out = v;
    *count = n;
    return 0;
}

/* Exactly 2*len hex digits from s[0..slen) into out; what = "--key" or
 * "--keys: value 2" for the message. */
static int parse_hex(const struct cli_cmd *cmd, const char *what, const char *s, size_t slen,
                     uint8_t *out, size_t len)
{
    if (slen != 2 * len)
        return cli_fail(cmd, CLI_EXIT_USAGE, "%s: expected %zu hex digits, got %zu", what,
                        2 * len, slen);
    for (size_t i = 0; i < slen; i++) {
        if (hex_digit(s[i]) >= 0)
            continue;
        /* A file's value may hold any byte: the message stays one line. */
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
            return cli_fail(cmd, CLI_EXIT_USAGE, "%s: byte 0x%02x at position %zu is not a "
                            "hex digit", what, (unsigned char)s[i], i + 1);
        return cli_fail(cmd, CLI_EXIT_USAGE, "%s: '%c' at position %zu is not a hex digit",
                        what, s[i], i + 1);
    }
    for (size_t i = 0; i < len; i++)
        out[i] = (uint8_t)(hex_digit(s[2 * i]) << 4 | hex_digit(s[2 * i + 1]));
    return 0;
}

int cli_hex(const struct cli_cmd *cmd, const char *name, uint8_t *out, size_t len)
{
    const char *s = cli_value(cmd, name);
    char what[4200];

    if (s == NULL)
        return 0;
    return parse_hex(cmd, cli_origin(name, what, sizeof(what)), s, strlen(s), out, len);
}

int cli_hex_list(const struct cli_cmd *cmd, const char *name, size_t len, size_t min_count,
                 size_t max_count, uint8_t *out, size_t *count)
{
    const char *s = cli_value(cmd, name);
    size_t n = count_items(s);
    char origin[4200], what[4300];

    cli_origin(name, origin, sizeof(origin));
    if (n < min_count || n > max_count) {
        if (min_count == max_count)
            return cli_fail(cmd, CLI_EXIT_USAGE, "%s: expected %zu comma-separated values, got %zu",
                            origin, min_count, n);
        return cli_fail(cmd, CLI_EXIT_USAGE,
                        "%s: expected %zu to %zu comma-separated values, got %zu", origin,
                        min_count, max_count, n);
    }
    for (size_t i = 0; i < n; i++) {
        const char *end = strchr(s, ',');
        size_t slen = end != NULL ? (size_t)(end - s) : strlen(s);
        snprintf(what, sizeof(what), "%s: value %zu", origin, i + 1);
        int rc = parse_hex(cmd, what, s, slen, out + i * len, len);
        if (rc != 0)
            return rc;
        s += slen + 1;
    }
    *count = n;
    return 0;
}
