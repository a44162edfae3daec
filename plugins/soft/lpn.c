/* The soft LPN fold: the shared index arithmetic over the bitsliced AES. */
#include "config.h"

#include <stdlib.h>

#include "plugins/common/lpn_fold.h"
#include "plugins/soft/soft.h"

struct soft_lpn {
    void *prg;      /* bitsliced AES state, key 0 = the index-stream seed */
    unsigned logk;
};

static void soft_lpn_free(void *state)
{
    struct soft_lpn *s = state;

    if (s == NULL)
        return;
    if (s->prg != NULL)
        mpce_soft_prg_bitslice_vtable.ctx_free(s->prg);
    free(s);
}

static int soft_lpn_new(const uint8_t seed[16], unsigned logk, void **state)
{
    struct soft_lpn *s = calloc(1, sizeof *s);
    int rc;

    if (s == NULL)
        return MPCE_ERR_NOMEM;
    s->logk = logk;
    rc = mpce_soft_prg_bitslice_vtable.ctx_new(seed, 1, &s->prg);
    if (rc != 0) {
        soft_lpn_free(s);
        return rc;
    }
    *state = s;
    return 0;
}

static int soft_lpn_fold(void *state, uint64_t c0, const uint8_t *table, uint8_t *out,
                         size_t n)
{
    struct soft_lpn *s = state;

    return mpce_lpn_fold_all(&mpce_soft_prg_bitslice_vtable, s->prg, s->logk, c0, table, out,
                             n);
}

const struct mpce_lpn_vtable mpce_soft_lpn_vtable = {
    .struct_size = sizeof(struct mpce_lpn_vtable),
    .ctx_new = soft_lpn_new,
    .ctx_free = soft_lpn_free,
    .fold = soft_lpn_fold,
};
