/* The aesni LPN fold: the shared index arithmetic over the fastest AES
 * kernel this CPU runs. */
#include "config.h"

#include "plugins/aesni/aesni.h"
#include "plugins/common/lpn_fold.h"

MPCE_LPN_VTABLE(aesni_lpn_vtable, aesni_best_prg_vtable());
