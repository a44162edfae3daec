/* SPDX-License-Identifier: Apache-2.0 */
/* The mpcengine command: find the subcommand and hand it the rest of argv. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "mpcengine.h"
#include "tools/cli.h"
#include "tools/cli_engine.h"
#include "tools/cli_secret.h"

static const char usage[] =
    "usage: mpcengine COMMAND [OPTIONS]\n"
    "  list [--json|--names]     implementations, modules and self-test states\n"
    "  selftest [--json]         run the known-answer vectors through every implementation\n"
    "  config [--json]           the effective configuration and what \"auto\" runs, per\n"
    "                            operation, variant and size class\n"
    "  prg ecb|mmo|ctr           AES-128 PRG on files of 16-byte blocks\n"
    "  ntt forward|inverse|mul   negacyclic NTT on files of little-endian uint64 words\n"
    "  lpn                       Ferret LPN fold (d = 10) on files of 16-byte blocks\n"
    "  dpf gen|eval|evalall      two-party DPF keys (format v1) and their evaluation\n"
    "  bench [--op OP --shape S] every implementation side by side against baselines\n"
    "  tune [--effort E]         measure the implementations and pin the fastest correct\n"
    "                            one per operation, variant and size class\n"
    "  pins [--clear|--export F|--import F|--verify]\n"
    "                            the pins \"auto\" follows, where they came from, and\n"
    "                            whether they are current\n"
    "Every command takes --config FILE, --plugin-path DIRS and --help, and all but\n"
    "config, tune and pins take --impl NAME. The operation commands (prg, ntt, lpn,\n"
    "dpf) also take --verbose (before or after the command: 'mpcengine --verbose prg\n"
    "ctr ...'), which says on stderr which implementation ran and why. A file named\n"
    "'-' is standard input or output. Give keys and seeds with --key-file,\n"
    "--seed-file or --prg-key-file (FILE or '-'): values on the command line are\n"
    "visible in ps and kept in shell history. 'mpcengine COMMAND --help' lists the\n"
    "rest (e.g. 'mpcengine prg ctr --help'). 'mpcengine --version' prints the version.\n"
    "Exit status: 0 success, 1 engine error or output not written, 2 usage error.\n";

static const struct command {
    const char *group; /* NULL for a one-word command */
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;
} commands[] = {
    {NULL, "list", cmd_list, cli_usage_list},
    {NULL, "selftest", cmd_selftest, cli_usage_selftest},
    {NULL, "config", cmd_config, cli_usage_config},
    {NULL, "lpn", cmd_lpn, cli_usage_lpn},
    {NULL, "bench", cmd_bench, cli_usage_bench},
    {NULL, "tune", cmd_tune, cli_usage_tune},
    {NULL, "pins", cmd_pins, cli_usage_pins},
    {"prg", "ecb", cmd_prg_ecb, cli_usage_prg_ecb},
    {"prg", "mmo", cmd_prg_mmo, cli_usage_prg_mmo},
    {"prg", "ctr", cmd_prg_ctr, cli_usage_prg_ctr},
    {"ntt", "forward", cmd_ntt_forward, cli_usage_ntt_transform},
    {"ntt", "inverse", cmd_ntt_inverse, cli_usage_ntt_transform},
    {"ntt", "mul", cmd_ntt_mul, cli_usage_ntt_mul},
    {"dpf", "gen", cmd_dpf_gen, cli_usage_dpf_gen},
    {"dpf", "eval", cmd_dpf_eval, cli_usage_dpf_eval},
    {"dpf", "evalall", cmd_dpf_evalall, cli_usage_dpf_evalall},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static int is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0 || strcmp(arg, "help") == 0;
}

static int is_group(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (commands[i].group != NULL && strcmp(commands[i].group, name) == 0)
            return 1;
    return 0;
}

/* "ecb, mmo, ctr" for messages. */
static void group_names(const char *group, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (commands[i].group != NULL && strcmp(commands[i].group, group) == 0 && used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used > 0 ? ", " : "",
                                     commands[i].name);
}

static void group_help(const char *group)
{
    const char *last = NULL;

    for (size_t i = 0; i < NCOMMANDS; i++) {
        const struct command *c = &commands[i];
        /* forward and inverse share one text */
        if (c->group == NULL || strcmp(c->group, group) != 0 || c->usage == last)
            continue;
        fputs(c->usage, stdout);
        last = c->usage;
    }
}

static int run_group(const char *group, int argc, char **argv)
{
    char names[64];

    group_names(group, names, sizeof(names));
    if (argc >= 1 && is_help(argv[0])) {
        group_help(group);
        return CLI_EXIT_OK;
    }
    if (argc < 1 || strncmp(argv[0], "--", 2) == 0) {
        fprintf(stderr, "mpcengine %s: expected a subcommand: %s\n", group, names);
        return CLI_EXIT_USAGE;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (commands[i].group != NULL && strcmp(commands[i].group, group) == 0 &&
            strcmp(commands[i].name, argv[0]) == 0)
            return commands[i].run(argc, argv);
    fprintf(stderr, "mpcengine %s: unknown subcommand '%s' (expected %s)\n", group, argv[0],
            names);
    return CLI_EXIT_USAGE;
}

/* "mpcengine --verbose prg ecb ..." means "mpcengine prg ecb ... --verbose":
 * move it behind the command, whose own parser then takes or refuses it
 * (only the operation commands have it). */
static void move_leading_verbose(int argc, char **argv)
{
    if (argc < 3 || strcmp(argv[1], "--verbose") != 0)
        return;
    char *verbose = argv[1];
    memmove(&argv[1], &argv[2], (size_t)(argc - 2) * sizeof(argv[0]));
    argv[argc - 1] = verbose;
}

static int dispatch(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--verbose") == 0) {
        fprintf(stderr, "mpcengine: --verbose applies to prg, ntt, lpn and dpf: name one after "
                "it, e.g. 'mpcengine --verbose prg ctr ...' (see 'mpcengine --help')\n");
        return CLI_EXIT_USAGE;
    }
    move_leading_verbose(argc, argv);
    if (argc < 2) {
        fputs(usage, stderr);
        return CLI_EXIT_USAGE;
    }
    if (is_help(argv[1])) {
        fputs(usage, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("mpcengine %s\n", mpce_version());
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (commands[i].group == NULL && strcmp(commands[i].name, argv[1]) == 0)
            return commands[i].run(argc - 1, argv + 1);
    if (is_group(argv[1]))
        return run_group(argv[1], argc - 2, argv + 2);
    fprintf(stderr, "mpcengine: unknown command '%s' (see 'mpcengine --help')\n", argv[1]);
    return CLI_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    cli_use_build_tree();
    int rc = dispatch(argc, argv);

    cli_engine_stop();
    cli_secret_wipe();
    /* A listing cut short (disk full, closed pipe) must not report success. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "mpcengine: cannot write to standard output\n");
        if (rc == CLI_EXIT_OK)
            rc = CLI_EXIT_ENGINE;
    }
    return rc;
}
