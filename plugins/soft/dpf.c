/* SPDX-License-Identifier: Apache-2.0 */
/* The soft DPF: the shared tree walks over the bitsliced AES, with the
 * generic node operations. */
#include "config.h"

#include "plugins/common/dpf_walk.h"
#include "plugins/soft/soft.h"

MPCE_DPF_SKELETON_OPS(mpce_soft_dpf_ops, &mpce_soft_prg_bitslice_ops, NULL);
