/* The soft DPF: the shared tree walks over the bitsliced AES. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "plugins/common/dpf_walk.h"
#include "plugins/soft/soft.h"

static void soft_dpf_free(void *state)
{
    struct mpce_dpf_walk *w = state;

    if (w == NULL)
        return;
    if (w->prg_state != NULL)
        mpce_soft_prg_bitslice_vtable.ctx_free(w->prg_state);
    free(w);
}

static int soft_dpf_new(unsigned bits, unsigned group, const uint8_t kl[16],
                        const uint8_t kr[16], void **state)
{
    struct mpce_dpf_walk *w = calloc(1, sizeof *w);
    uint8_t keys[32];
    int rc;

    if (w == NULL)
        return MPCE_ERR_NOMEM;
    w->prg = &mpce_soft_prg_bitslice_vtable;
    w->bits = bits;
    w->group = group;
    memcpy(w->kl, kl, 16);
    memcpy(w->kr, kr, 16);
    memcpy(keys, kl, 16);
    memcpy(keys + 16, kr, 16);
    rc = mpce_soft_prg_bitslice_vtable.ctx_new(keys, 2, &w->prg_state);
    if (rc != 0) {
        soft_dpf_free(w);
        return rc;
    }
    *state = w;
    return 0;
}

static int soft_dpf_gen(void *state, uint64_t alpha, const uint8_t beta[16],
                        const uint8_t s0[16], const uint8_t s1[16],
                        struct mpce_dpf_key_v1 *key0, struct mpce_dpf_key_v1 *key1)
{
    return mpce_dpfw_gen(state, alpha, beta, s0, s1, key0, key1);
}

static int soft_dpf_eval(void *state, const struct mpce_dpf_key_v1 *key,
                         const uint64_t *points, size_t npoints, uint8_t *out)
{
    return mpce_dpfw_eval_points(state, key, points, npoints, out);
}

static int soft_dpf_eval_keys(void *state, const struct mpce_dpf_key_v1 *const *keys,
                              const uint64_t *points, size_t nkeys, uint8_t *out)
{
    return mpce_dpfw_eval_keys(state, keys, points, nkeys, out);
}

static int soft_dpf_evalall(void *state, const struct mpce_dpf_key_v1 *key, uint8_t *out)
{
    return mpce_dpfw_evalall(state, key, out);
}

static int soft_dpf_evalall_range(void *state, const struct mpce_dpf_key_v1 *key,
                                  uint64_t x_begin, uint64_t x_end, uint8_t *out)
{
    return mpce_dpfw_evalall_range(state, key, x_begin, x_end, out);
}

const struct mpce_dpf_vtable mpce_soft_dpf_vtable = {
    .struct_size = sizeof(struct mpce_dpf_vtable),
    .ctx_new = soft_dpf_new,
    .ctx_free = soft_dpf_free,
    .gen = soft_dpf_gen,
    .eval = soft_dpf_eval,
    .eval_keys = soft_dpf_eval_keys,
    .evalall = soft_dpf_evalall,
    .evalall_range = soft_dpf_evalall_range,
};
