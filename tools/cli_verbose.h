/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --verbose for the operation commands: after a call, one line on stderr
 * naming the implementation it ran and what decided that (--impl, a pin with
 * its file and line, an MPCENGINE_FORCE entry, the tuned pins file's row or
 * priority order). The reason is the engine's own, from mpce_routes(), the
 * table `mpcengine config` prints: the command never second-guesses the
 * selector.
 */
#ifndef MPCE_CLI_VERBOSE_H
#define MPCE_CLI_VERBOSE_H

#include <stdint.h>

#include "mpcengine.h"
#include "mpcengine/plugin.h"
#include "tools/cli_args.h"

/* Whether --verbose was given. */
int cli_verbose(const struct cli_cmd *cmd);

/*
 * Print what a call of `op` ("prg.ecb") ran: `ran` is what mpce_*_resolve()
 * returned for the call's --impl; `params` are the context's parameters
 * (they pick the variant row, e.g. NTT moduli below 2^50) and `elements`
 * the call's work elements (its size class), counted as the engine counts
 * them for the op.
 */
void cli_verbose_ran(const struct cli_cmd *cmd, const char *op, const struct mpce_params *params,
                     uint64_t elements, const char *ran);

#endif
