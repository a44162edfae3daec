/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Portable negacyclic NTT (SPEC.md section 2): the scalar Harvey lazy
 * butterflies of the shared skeleton, one row at a time.
 */
#include "config.h"

#include <string.h>

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

typedef void (*row_fn)(const struct mpce_harvey_tables *t, size_t n, uint64_t *a);

static int run_rows(const struct mpce_harvey_state *s, row_fn fn, const uint64_t *in,
                    uint64_t *out, size_t batch)
{
    const size_t n = s->n;
    for (size_t b = 0; b < batch; b++) {
        for (size_t i = 0; i < s->l; i++) {
            const size_t off = mpce_harvey_row_offset(s, b, i);
            if (out + off != in + off)
                memmove(out + off, in + off, n * sizeof(uint64_t));
            fn(s->row[i], n, out + off);
        }
    }
    return 0;
}

static int soft_ntt_forward(void *state, const struct mpce_call *call, const uint64_t *in,
                            uint64_t *out, size_t batch)
{
    return run_rows(state, mpce_harvey_forward_row, in, out, batch);
}

static int soft_ntt_inverse(void *state, const struct mpce_call *call, const uint64_t *in,
                            uint64_t *out, size_t batch)
{
    return run_rows(state, mpce_harvey_inverse_row, in, out, batch);
}

static int soft_ntt_mul(void *state, const struct mpce_call *call, const uint64_t *a,
                        const uint64_t *b, uint64_t *out, size_t batch)
{
    const struct mpce_harvey_state *s = state;
    for (size_t bi = 0; bi < batch; bi++) {
        for (size_t i = 0; i < s->l; i++) {
            const size_t off = mpce_harvey_row_offset(s, bi, i);
            mpce_harvey_mul_row(s->row[i], s->n, a + off, b + off, out + off);
        }
    }
    return 0;
}

const struct mpce_ntt_ops mpce_soft_ntt_ops = {
    .struct_size = sizeof(struct mpce_ntt_ops),
    .ctx_new = soft_ntt_new,
    .ctx_free = soft_ntt_free,
    .forward = soft_ntt_forward,
    .inverse = soft_ntt_inverse,
    .mul = soft_ntt_mul,
};
