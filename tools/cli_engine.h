/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mpcengine command's use of the global engine: start it with the
 * command's --config, report its errors in the command's one-line format.
 */
#ifndef MPCE_CLI_ENGINE_H
#define MPCE_CLI_ENGINE_H

#include "mpcengine.h"
#include "tools/cli_args.h"

/* The command run from the tree that built it (tools/build_tree.h) keeps
 * its state in that tree and uses that tree's probe helper, not the one
 * installed at the prefix (absent, or another version): without a helper
 * the library vets no module, and a crashing module in --plugin-path would
 * take the command down. Never for an installed command (its directory is
 * not that tree), so an installed command never runs a file from a build
 * directory; nor for a setuid run. [tune] helper and [tune] dir still win.
 * Call before any engine. */
void cli_use_build_tree(void);

/* mpce_init_with() with --config and --plugin-path, and the log routed to
 * stderr (MPCENGINE_LOG sets the level). Returns 0, or CLI_EXIT_ENGINE with
 * the message printed. */

int cli_engine_start(const struct cli_cmd *cmd);
/* The same with MPCE_OPT_* flags. */
int cli_engine_start_flags(const struct cli_cmd *cmd, unsigned flags);

struct mpce_engine;
/* For the selector's commands (tune, pins): the global engine, started
 * without tuning, with a reference the caller drops (mpce_engine_unref) to
 * reach its configuration. 0, or the exit status with the message printed. */
int cli_engine_untuned(const struct cli_cmd *cmd, struct mpce_engine **e);

/* --plugin-path with every relative entry made absolute against the working
 * directory (the library takes absolute directories only), or NULL when the
 * option is absent. Returns 0, or CLI_EXIT_USAGE with the message printed. */
int cli_plugin_path(const struct cli_cmd *cmd, const char **path);

/* Free the global engine if cli_engine_start() made it. */
void cli_engine_stop(void);

/* Print "<prog>: <mpce_last_error()>" (or the status name when the engine
 * gave no detail) and return CLI_EXIT_ENGINE. */
int cli_engine_fail(const struct cli_cmd *cmd, mpce_status status);

/* A setting's source as the command's user knows it: "--config" for
 * "mpce_options.config_path", and so on; other sources unchanged. */
const char *cli_source_name(const char *source);

/* An engine message as the command's user knows it, on one line in buf:
 * option fields become the options ("mpce_options.config_path" ->
 * "--config"), array arguments the option values ("moduli[0]" -> "--moduli
 * value 1", "in[5]" -> "word 5 of --in"), and a leading "mpce_fn: " goes
 * (the command's prefix names what failed). Returns buf. */
const char *cli_engine_detail(const char *detail, char *buf, size_t len);

/* mpce_last_error(), or fallback when it is empty. */
const char *cli_last_error_or(const char *fallback);

/* Print "<prog>: warning: ..." once for every pin that names nothing usable
 * (an implementation removed, failing or refused by policy): such a pin
 * fails the calls it routes, and `list` or `selftest` passing quietly
 * would hide it until then. Returns how many were printed. */
size_t cli_warn_dangling_pins(const struct cli_cmd *cmd);

/* The --impl value, or NULL (the engine's choice). */
const char *cli_impl(const struct cli_cmd *cmd);

#endif
