/* The soft DPF: the shared tree walks over the bitsliced AES, with the
 * generic node operations. */
#include "config.h"

#include "plugins/common/dpf_walk.h"
#include "plugins/soft/soft.h"

MPCE_DPF_VTABLE(mpce_soft_dpf_vtable, &mpce_soft_prg_bitslice_vtable, NULL);
