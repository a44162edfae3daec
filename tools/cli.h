/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mpcengine command: exit codes and the subcommands main() dispatches to.
 * Each subcommand parses its own options (argv[0] is the subcommand's last
 * word) and returns the process exit status.
 */
#ifndef MPCE_CLI_H
#define MPCE_CLI_H

#define CLI_EXIT_OK 0
#define CLI_EXIT_ENGINE 1 /* the engine refused or failed; output could not be written */
#define CLI_EXIT_USAGE 2  /* bad option, value or input file */

int cmd_list(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_selftest(int argc, char **argv);
int cmd_prg_ecb(int argc, char **argv);
int cmd_prg_mmo(int argc, char **argv);
int cmd_prg_ctr(int argc, char **argv);
int cmd_ntt_forward(int argc, char **argv);
int cmd_ntt_inverse(int argc, char **argv);
int cmd_ntt_mul(int argc, char **argv);
int cmd_lpn(int argc, char **argv);
int cmd_dpf_gen(int argc, char **argv);
int cmd_dpf_eval(int argc, char **argv);
int cmd_dpf_evalall(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_pins(int argc, char **argv);

struct mpce_engine;
struct mpce_pins;
/* mpcengine pins --verify (tools/pins_verify.c): p's current rows against a
 * side-by-side run at each row's shape; CLI_EXIT_ENGINE if a winner is not
 * the fastest beyond that run's noise. */
int cli_pins_verify(struct mpce_engine *e, const struct mpce_pins *p, const char *path);

/* Usage text of each subcommand, shown by --help and by group help. */
extern const char cli_usage_list[];
extern const char cli_usage_config[];
extern const char cli_usage_selftest[];
extern const char cli_usage_prg_ecb[];
extern const char cli_usage_prg_mmo[];
extern const char cli_usage_prg_ctr[];
extern const char cli_usage_ntt_transform[];
extern const char cli_usage_ntt_mul[];
extern const char cli_usage_lpn[];
extern const char cli_usage_dpf_gen[];
extern const char cli_usage_dpf_eval[];
extern const char cli_usage_dpf_evalall[];
extern const char cli_usage_bench[];
extern const char cli_usage_tune[];
extern const char cli_usage_pins[];

#endif
