/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Option parsing for the mpcengine command: a per-subcommand table of long
 * options, and strict parsers for the values (numbers with ranges, hex
 * strings, comma-separated lists). Every failure prints one line
 * "<prog>: <what is wrong>" on stderr and returns CLI_EXIT_USAGE, so that a
 * command can simply return what a helper returned.
 */
#ifndef MPCE_CLI_ARGS_H
#define MPCE_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

#define CLI_ARG 0x1u      /* the option takes a value */
#define CLI_REQUIRED 0x2u /* the option must be given */
#define CLI_IN 0x4u       /* the value names a file the command reads; "-" is stdin */
#define CLI_OUT 0x8u      /* the value names a file the command writes; "-" is stdout */
#define CLI_TEXT 0x10u    /* with CLI_OUT: the output is text, fit for a terminal */

struct cli_opt {
    const char *name;  /* without the leading "--" */
    unsigned flags;
    const char *value; /* set by cli_parse: the value, "" for a flag, NULL if absent */
};

/* Every table ends with the options all commands take, then the terminator. */
#define CLI_COMMON_OPTS                                                              \
    {"impl", CLI_ARG, NULL}, {"config", CLI_ARG, NULL}, {"plugin-path", CLI_ARG, NULL},  \
        {NULL, 0, NULL}

/* The operation commands' (prg, ntt, lpn, dpf) own common option, before
 * the others. */
#define CLI_OP_OPTS {"verbose", 0, NULL}, CLI_COMMON_OPTS

/* Its --help line, which the operation commands put before CLI_COMMON_HELP. */
#define CLI_OP_HELP                                                                  \
    "  --verbose          say on stderr which implementation ran and why (a pin\n"    \
    "                     and its file:line, MPCENGINE_FORCE, --impl, the tuned\n"     \
    "                     pins file or priority order)\n"

/* Their --help lines, which end every usage text. */
#define CLI_COMMON_HELP                                                              \
    "  --impl NAME        run exactly this implementation (see 'mpcengine list'),\n"  \
    "                     optionally with knob values: NAME:KNOB=VALUE[:KNOB=VALUE...]\n" \
    "  --config FILE      read FILE instead of the administrator's engine.conf\n"     \
    "  --plugin-path DIRS module directories, ':'-separated, replacing plugin_path\n" \
    "                     (also for root, which ignores MPCENGINE_PLUGIN_PATH)\n"    \
    "  --help             show this text\n"

struct cli_cmd {
    const char *prog;     /* "mpcengine prg ecb": the prefix of every message */
    const char *usage;    /* the --help text */
    struct cli_opt *opts; /* CLI_COMMON_OPTS-terminated */
};

#define CLI_PARSED 0
#define CLI_HELP_SHOWN (-1)

/* Fill cmd->opts from argv[1..argc). Returns CLI_PARSED, CLI_HELP_SHOWN
 * (usage printed on stdout) or CLI_EXIT_USAGE (message printed). It also
 * refuses "-" for two CLI_IN options (one standard input to share) or two
 * CLI_OUT options, and "-" for a binary CLI_OUT option (not CLI_TEXT) while
 * standard output is a terminal (the bytes, maybe a key, would land on the
 * screen). */
int cli_parse(const struct cli_cmd *cmd, int argc, char **argv);

/* The exit status for a cli_parse result other than CLI_PARSED. */
int cli_parse_exit(int parse_result);

/* The value of option `name` (without "--"), NULL if it was not given. */
const char *cli_value(const struct cli_cmd *cmd, const char *name);

/* Whether `path` (an option's value) means standard input or output. */
int cli_is_std(const char *path);

/* How messages name option `name`'s value: "--key-file 'k.hex'" when
 * cli_secret read it from a file (the user never typed "--key"), else
 * "--NAME". buf (len bytes) holds the text. */
const char *cli_origin(const char *name, char *buf, size_t len);
/* Record that option `name`'s value came from `origin` (kept, not copied). */
void cli_set_origin(const char *name, const char *origin);

/* Print "<prog>: <message>" on stderr and return `status`. */
int cli_fail(const struct cli_cmd *cmd, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Option `name` as an integer in [min, max], decimal or 0x-hex. An absent
 * option leaves *out unchanged and succeeds. */
int cli_u64(const struct cli_cmd *cmd, const char *name, uint64_t min, uint64_t max,
            uint64_t *out);

/* Option `name` as 1..max_count comma-separated integers in [min, max];
 * *out is malloc'd. */
int cli_u64_list(const struct cli_cmd *cmd, const char *name, uint64_t min, uint64_t max,
                 size_t max_count, uint64_t **out, size_t *count);

/* Option `name` as exactly 2*len hex digits. An absent option leaves out
 * unchanged and succeeds. */
int cli_hex(const struct cli_cmd *cmd, const char *name, uint8_t *out, size_t len);

/* Option `name` as min_count..max_count comma-separated hex strings of 2*len
 * digits each, concatenated into out (room for max_count * len bytes). */
int cli_hex_list(const struct cli_cmd *cmd, const char *name, size_t len, size_t min_count,
                 size_t max_count, uint8_t *out, size_t *count);

#endif
