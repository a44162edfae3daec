/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The x86-64 NTT implementations: the shared Harvey tables and state, the
 * AVX-512 or IFMA kernels for every row of at least AESNI_NTT_VEC_MIN_N
 * words, and the scalar rows of the shared skeleton below that.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "plugins/aesni/aesni.h"
#include "plugins/aesni/ntt_kernels.h"

typedef void (*xform_fn)(const struct mpce_harvey_tables *t, size_t n, const uint64_t *in,
                         uint64_t *out);
typedef void (*scalar_fn)(const struct mpce_harvey_tables *t, size_t n, uint64_t *a);

static int run_rows(const struct mpce_harvey_state *s, xform_fn vec, scalar_fn scalar,
                    const uint64_t *in, uint64_t *out, size_t batch)
{
    const size_t n = s->n;
    for (size_t b = 0; b < batch; b++) {
        for (size_t i = 0; i < s->l; i++) {
            const size_t off = mpce_harvey_row_offset(s, b, i);
            if (n >= AESNI_NTT_VEC_MIN_N) {
                vec(s->row[i], n, in + off, out + off);
                continue;
            }
            if (out + off != in + off)
                memmove(out + off, in + off, n * sizeof(uint64_t));
            scalar(s->row[i], n, out + off);
        }
    }
    return 0;
}

typedef void (*mul_fn)(const struct mpce_harvey_tables *t, size_t n, const uint64_t *a,
                       const uint64_t *b, uint64_t *out);

static int mul_rows(const struct mpce_harvey_state *s, mul_fn fn, const uint64_t *a,
                    const uint64_t *b, uint64_t *out, size_t batch)
{
    for (size_t bi = 0; bi < batch; bi++) {
        for (size_t i = 0; i < s->l; i++) {
            const size_t off = mpce_harvey_row_offset(s, bi, i);
            fn(s->row[i], s->n, a + off, b + off, out + off);
        }
    }
    return 0;
}

static int ntt_new(void *module, size_t n, size_t l, const uint64_t *q, const uint64_t *psi,
                   void **state)
{
    struct mpce_harvey_state *s = NULL;
    int rc = mpce_harvey_state_new(n, l, q, psi, &s);
    if (rc == 0)
        *state = s;
    return rc;
}

static void ntt_free(void *state)
{
    mpce_harvey_state_free(state);
}

/* ---- AVX-512F/DQ: any q < 2^61 ------------------------------------------ */

static int avx512_forward(void *state, const struct mpce_call *call, const uint64_t *in,
                          uint64_t *out, size_t batch)
{
    return run_rows(state, aesni_ntt_avx512_forward, mpce_harvey_forward_row, in, out, batch);
}

static int avx512_inverse(void *state, const struct mpce_call *call, const uint64_t *in,
                          uint64_t *out, size_t batch)
{
    return run_rows(state, aesni_ntt_avx512_inverse, mpce_harvey_inverse_row, in, out, batch);
}

static int avx512_mul(void *state, const struct mpce_call *call, const uint64_t *a,
                      const uint64_t *b, uint64_t *out, size_t batch)
{
    return mul_rows(state, aesni_ntt_avx512_mul, a, b, out, batch);
}

const struct mpce_ntt_ops aesni_ntt_avx512_ops = {
    .struct_size = sizeof(struct mpce_ntt_ops),
    .ctx_new = ntt_new,
    .ctx_free = ntt_free,
    .forward = avx512_forward,
    .inverse = avx512_inverse,
    .mul = avx512_mul,
};

/* ---- IFMA: q < 2^50 only ------------------------------------------------ */

/* 0 if IFMA can take every modulus, else 1 with the one it cannot. */
static int ifma_refuses(const uint64_t *q, size_t l, char *why, size_t why_len)
{
    for (size_t i = 0; i < l; i++) {
        if (q[i] >= AESNI_NTT_IFMA_MAX_Q) {
            snprintf(why, why_len,
                     "moduli[%zu] = %" PRIu64 " needs q < 2^50 for IFMA (52-bit lazy values)", i,
                     q[i]);
            return 1;
        }
    }
    return 0;
}

int aesni_ntt_ifma_serves(void *module_state, const struct mpce_params *params,
                          const struct mpce_shape *shape, char *why, size_t why_len)
{
    return ifma_refuses(params->ntt_q, params->ntt_l, why, why_len);
}

/* serves() already refused larger moduli; checked again because a state
 * built for one would compute wrong values. */
static int ifma_new(void *module, size_t n, size_t l, const uint64_t *q, const uint64_t *psi,
                    void **state)
{
    const struct aesni_module *mod = module;
    char why[160];
    if (ifma_refuses(q, l, why, sizeof(why))) {
        mod->host->set_error(mod->host, "%s", why);
        return MPCE_ERR_NOIMPL;
    }
    return ntt_new(module, n, l, q, psi, state);
}

static int ifma_forward(void *state, const struct mpce_call *call, const uint64_t *in,
                        uint64_t *out, size_t batch)
{
    return run_rows(state, aesni_ntt_ifma_forward, mpce_harvey_forward_row, in, out, batch);
}

static int ifma_inverse(void *state, const struct mpce_call *call, const uint64_t *in,
                        uint64_t *out, size_t batch)
{
    return run_rows(state, aesni_ntt_ifma_inverse, mpce_harvey_inverse_row, in, out, batch);
}

static int ifma_mul(void *state, const struct mpce_call *call, const uint64_t *a,
                    const uint64_t *b, uint64_t *out, size_t batch)
{
    return mul_rows(state, aesni_ntt_ifma_mul, a, b, out, batch);
}

const struct mpce_ntt_ops aesni_ntt_ifma_ops = {
    .struct_size = sizeof(struct mpce_ntt_ops),
    .ctx_new = ifma_new,
    .ctx_free = ntt_free,
    .forward = ifma_forward,
    .inverse = ifma_inverse,
    .mul = ifma_mul,
};
