/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The neon NTT: the shared Harvey tables and lazy ranges
 * (plugins/common/ntt_harvey.h) for any q < 2^61, with each stage's
 * butterflies run four at a time. A Harvey butterfly is a chain of a
 * 64x64 high product (UMULH, 3-5 cycles), a low product and three adds;
 * AArch64 cores issue two to four multiplies per cycle (Neoverse V1/V2,
 * Apple M-series), so one chain at a time leaves most of the multipliers
 * idle. Flattening a stage into n/2 butterflies and taking four
 * consecutive ones keeps four independent chains in flight at every
 * stage, the last two (gaps 2 and 1, where the butterflies of one twiddle
 * are too few) included. The final reduction to [0, q) is fused into the
 * last stage instead of a pass of its own. Outputs are canonical, hence
 * bit-identical to ntt-soft's. An ASIMD kernel (two 64-bit lanes, no
 * 64x64 high multiply) could only pay for q < 2^32 and was not written:
 * nothing here could measure whether it wins.
 */
#include "config.h"

#include "plugins/common/ntt_harvey.h"
#include "plugins/neon/neon.h"

/* Butterflies per group: the interleave width. */
#define NB 4u

/* log2 of a power of two. */
static unsigned log2_of(size_t v)
{
    return (unsigned)__builtin_ctzll((unsigned long long)v);
}

/* Forward (Cooley-Tukey) in place, canonical in and out. */
static void forward_row(const struct mpce_harvey_tables *t, size_t n, uint64_t *a)
{
    const uint64_t q = t->q, q2 = 2 * q;
    const unsigned logn = log2_of(n);

    if (n < 2 * NB) {
        mpce_harvey_forward_row(t, n, a);
        return;
    }
    for (size_t m = 1; m < n; m <<= 1) {
        const unsigned lg = logn - 1 - log2_of(m); /* log2 of the gap n / (2m) */
        const size_t gmask = ((size_t)1 << lg) - 1;
        const int last = m == n / 2;
        for (size_t k = 0; k < n / 2; k += NB) {
            uint64_t *x[NB], *y[NB], u[NB], v[NB];
#pragma GCC unroll 4
            for (unsigned l = 0; l < NB; l++) {
                const size_t kk = k + l, i = kk >> lg, j = kk & gmask;
                x[l] = a + (i << (lg + 1)) + j;
                y[l] = x[l] + ((size_t)1 << lg);
                u[l] = mpce_harvey_csub(*x[l], q2);
                v[l] = mpce_harvey_mul_lazy(*y[l], t->w[m + i], t->w_shoup[m + i], q);
            }
            if (last) {
#pragma GCC unroll 4
                for (unsigned l = 0; l < NB; l++) {
                    *x[l] = mpce_harvey_csub(mpce_harvey_csub(u[l] + v[l], q2), q);
                    *y[l] = mpce_harvey_csub(mpce_harvey_csub(u[l] - v[l] + q2, q2), q);
                }
            } else {
#pragma GCC unroll 4
                for (unsigned l = 0; l < NB; l++) {
                    *x[l] = u[l] + v[l];
                    *y[l] = u[l] - v[l] + q2;
                }
            }
        }
    }
}

/* Inverse (Gentleman-Sande) in place, canonical in and out; n^-1 is
 * folded into the last stage as in the skeleton. */
static void inverse_row(const struct mpce_harvey_tables *t, size_t n, uint64_t *a)
{
    const uint64_t q = t->q, q2 = 2 * q;

    if (n < 2 * NB) {
        mpce_harvey_inverse_row(t, n, a);
        return;
    }
    unsigned lg = 0; /* log2 of the gap */
    for (size_t m = n; m > 2; m >>= 1, lg++) {
        const size_t h = m >> 1, gmask = ((size_t)1 << lg) - 1;
        for (size_t k = 0; k < n / 2; k += NB) {
#pragma GCC unroll 4
            for (unsigned l = 0; l < NB; l++) {
                const size_t kk = k + l, i = kk >> lg, j = kk & gmask;
                uint64_t *x = a + (i << (lg + 1)) + j, *y = x + ((size_t)1 << lg);
                /* x, y in [0, 2q) on entry and exit. */
                const uint64_t u = *x, v = *y;
                *x = mpce_harvey_csub(u + v, q2);
                *y = mpce_harvey_mul_lazy(u - v + q2, t->iw[h + i], t->iw_shoup[h + i], q);
            }
        }
    }
    const size_t gap = n / 2;
    for (size_t j = 0; j < gap; j += NB) {
#pragma GCC unroll 4
        for (unsigned l = 0; l < NB; l++) {
            const uint64_t u = a[j + l], v = a[gap + j + l];
            a[j + l] =
                mpce_harvey_csub(mpce_harvey_mul_lazy(u + v, t->ninv, t->ninv_shoup, q), q);
            a[gap + j + l] = mpce_harvey_csub(
                mpce_harvey_mul_lazy(u - v + q2, t->last_w, t->last_w_shoup, q), q);
        }
    }
}

static void ntt_free(void *state)
{
    mpce_harvey_state_free(state);
}

static int ntt_new(void *module, size_t n, size_t l, const uint64_t *q, const uint64_t *psi,
                   void **state)
{
    const struct neon_module *mod = module;
    struct mpce_harvey_state *s = NULL;
    int rc = mpce_harvey_state_new(n, l, q, psi, &s);

    if (rc == MPCE_ERR_NOMEM && mod != NULL)
        mod->host->set_error(mod->host,
                             "neon: out of memory for the NTT tables of N = %zu with %zu moduli",
                             n, l);
    if (rc == 0)
        *state = s;
    return rc;
}

static int ntt_forward(void *state, const struct mpce_call *call, const uint64_t *in,
                       uint64_t *out, size_t batch)
{
    return mpce_harvey_run_rows(state, forward_row, in, out, batch);
}

static int ntt_inverse(void *state, const struct mpce_call *call, const uint64_t *in,
                       uint64_t *out, size_t batch)
{
    return mpce_harvey_run_rows(state, inverse_row, in, out, batch);
}

static int ntt_mul(void *state, const struct mpce_call *call, const uint64_t *a,
                   const uint64_t *b, uint64_t *out, size_t batch)
{
    return mpce_harvey_mul_rows(state, a, b, out, batch);
}

const struct mpce_ntt_ops neon_ntt_ops = {
    .struct_size = sizeof(struct mpce_ntt_ops),
    .ctx_new = ntt_new,
    .ctx_free = ntt_free,
    .forward = ntt_forward,
    .inverse = ntt_inverse,
    .mul = ntt_mul,
};
