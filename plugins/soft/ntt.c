/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Portable negacyclic NTT (SPEC.md section 2): the scalar Harvey lazy
 * butterflies of the shared skeleton, one row at a time.
 */
#include "config.h"

#include "plugins/common/ntt_harvey.h"
#include "plugins/soft/soft.h"

static void soft_ntt_free(void *state)
{
    mpce_harvey_state_free(state);
}

static int soft_ntt_new(void *module, size_t n, size_t l, const uint64_t *q,
                        const uint64_t *psi, void **state)
{
    struct mpce_harvey_state *s = NULL;
    int rc = mpce_harvey_state_new(n, l, q, psi, &s);
    if (rc == 0)
        *state = s;
    return rc;
}

static int soft_ntt_forward(void *state, const struct mpce_call *call, const uint64_t *in,
                            uint64_t *out, size_t batch)
{
    return mpce_harvey_run_rows(state, mpce_harvey_forward_row, in, out, batch);
}

static int soft_ntt_inverse(void *state, const struct mpce_call *call, const uint64_t *in,
                            uint64_t *out, size_t batch)
{
    return mpce_harvey_run_rows(state, mpce_harvey_inverse_row, in, out, batch);
}

static int soft_ntt_mul(void *state, const struct mpce_call *call, const uint64_t *a,
                        const uint64_t *b, uint64_t *out, size_t batch)
{
    return mpce_harvey_mul_rows(state, a, b, out, batch);
}

const struct mpce_ntt_ops mpce_soft_ntt_ops = {
    .struct_size = sizeof(struct mpce_ntt_ops),
    .ctx_new = soft_ntt_new,
    .ctx_free = soft_ntt_free,
    .forward = soft_ntt_forward,
    .inverse = soft_ntt_inverse,
    .mul = soft_ntt_mul,
};
