/* SPDX-License-Identifier: Apache-2.0 */
/* The neon LPN fold: the shared index arithmetic (plugins/common/lpn_fold.h)
 * over the Crypto Extensions PRG, whose ctr makes the index stream. */
#include "config.h"

#include "plugins/common/lpn_fold.h"
#include "plugins/neon/neon.h"

MPCE_LPN_SKELETON_OPS(neon_lpn_ops, &neon_prg_ops);
