/* SPDX-License-Identifier: Apache-2.0 */
/* The aesni LPN fold: the shared index arithmetic over the fastest AES
 * kernel this CPU runs. */
#include "config.h"

#include "plugins/aesni/aesni.h"
#include "plugins/common/lpn_fold.h"

MPCE_LPN_SKELETON_OPS(aesni_lpn_ops, aesni_best_prg_ops(module));
