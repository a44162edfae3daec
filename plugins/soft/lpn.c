/* The soft LPN fold: the shared index arithmetic over the bitsliced AES. */
#include "config.h"

#include "plugins/common/lpn_fold.h"
#include "plugins/soft/soft.h"

MPCE_LPN_VTABLE(mpce_soft_lpn_vtable, &mpce_soft_prg_bitslice_vtable);
