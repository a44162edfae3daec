/* SPDX-License-Identifier: Apache-2.0 */
/* The soft LPN fold: the shared index arithmetic over the bitsliced AES. */
#include "config.h"

#include "plugins/common/lpn_fold.h"
#include "plugins/soft/soft.h"

MPCE_LPN_SKELETON_OPS(mpce_soft_lpn_ops, &mpce_soft_prg_bitslice_ops);
