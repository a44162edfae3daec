/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The x86-64 NTT implementations: the shared Harvey tables and state with
 * the kernels' own twiddle tables beside them, the AVX-512 or IFMA kernels
 * for every row of at least AESNI_NTT_VEC_MIN_N words, and the scalar rows
 * of the shared skeleton below that.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/aesni/aesni.h"
#include "plugins/aesni/ntt_kernels.h"

/* The Harvey state and, per distinct modulus, the kernels' own tables
 * (struct aesni_ntt_tables, 4n words each, all in `words`); rows of n
 * below AESNI_NTT_VEC_MIN_N go scalar and have none. */
struct aesni_ntt_state {
    struct mpce_harvey_state *h;
    struct aesni_ntt_tables *tabs;           /* one per distinct modulus */
    uint64_t *words;
};

enum companion { COMP_AVX512, COMP_IFMA };

/* n words of twiddles and companions from a Harvey table pair, the
 * distance-1 words in that stage's lane order. */
static void prep_table(const uint64_t *w, const uint64_t *ws, size_t n, enum companion kind,
                       uint64_t *ow, uint64_t *oc)
{
    for (size_t k = 0; k < n; k++) {
        size_t src = k;
        if (k >= n / 2)
            src = (k & ~(size_t)7) + aesni_ntt_d1_lane((unsigned)(k & 7));
        ow[k] = w[src];
        oc[k] = kind == COMP_IFMA ? ws[src] >> 12 : ws[src];
    }
}

static void state_free(struct aesni_ntt_state *s)
{
    if (s == NULL)
        return;
    mpce_harvey_state_free(s->h);
    free(s->tabs);
    free(s->words);
    free(s);
}

static int state_new(size_t n, size_t l, const uint64_t *q, const uint64_t *psi,
                     enum companion kind, struct aesni_ntt_state **state)
{
    struct aesni_ntt_state *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return MPCE_ERR_NOMEM;
    int rc = mpce_harvey_state_new(n, l, q, psi, &s->h);
    if (rc != 0) {
        free(s);
        return rc;
    }
    if (n >= AESNI_NTT_VEC_MIN_N) {
        const size_t nt = s->h->ntables, arrays = 4;
        s->tabs = calloc(nt, sizeof(*s->tabs));
        s->words = aligned_alloc(64, nt * arrays * n * sizeof(uint64_t));
        if (s->tabs == NULL || s->words == NULL) {
            state_free(s);
            return MPCE_ERR_NOMEM;
        }
        for (size_t j = 0; j < nt; j++) {
            const struct mpce_harvey_tables *t = &s->h->tables[j];
            uint64_t *base = s->words + j * arrays * n;
            uint64_t *w = base, *c = base + n, *iw = base + 2 * n, *ic = base + 3 * n;
            prep_table(t->w, t->w_shoup, n, kind, w, c);
            prep_table(t->iw, t->iw_shoup, n, kind, iw, ic);
            s->tabs[j] = (struct aesni_ntt_tables){.t = t, .w = w, .c = c, .iw = iw, .ic = ic};
            for (int k = 0; k < 2; k++) {
                uint64_t v = mpce_harvey_mulmod(t->iw[2 + k], t->ninv, t->q);
                s->tabs[j].last4_w[k] = v;
                s->tabs[j].last4_shoup[k] = mpce_harvey_shoup(v, t->q);
            }
        }
    }
    *state = s;
    return 0;
}

typedef int (*xform_fn)(const struct aesni_ntt_tables *k, size_t n, const uint64_t *in,
                        uint64_t *out);
typedef void (*scalar_fn)(const struct mpce_harvey_tables *t, size_t n, uint64_t *a);

/* Whether a word of row[0 .. n) is not below q: the scalar rows' input
 * check (MPCE_IMPL_CHECKS_NTT_INPUT), n < AESNI_NTT_VEC_MIN_N words. */
static int row_bad(const uint64_t *row, size_t n, uint64_t q)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad |= row[i] >= q;
    return bad;
}

static int run_rows(const struct aesni_ntt_state *s, xform_fn vec, scalar_fn scalar,
                    const uint64_t *in, uint64_t *out, size_t batch)
{
    const struct mpce_harvey_state *h = s->h;
    const size_t n = h->n;
    for (size_t b = 0; b < batch; b++) {
        for (size_t i = 0; i < h->l; i++) {
            const size_t off = mpce_harvey_row_offset(h, b, i);
            if (n >= AESNI_NTT_VEC_MIN_N) {
                /* Rows share tables as the Harvey state's rows do. */
                if (vec(&s->tabs[h->row[i] - h->tables], n, in + off, out + off))
                    return MPCE_OP_NONCANONICAL;
                continue;
            }
            if (row_bad(in + off, n, h->row[i]->q))
                return MPCE_OP_NONCANONICAL;
            if (out + off != in + off)
                memmove(out + off, in + off, n * sizeof(uint64_t));
            scalar(h->row[i], n, out + off);
        }
    }
    return 0;
}

typedef int (*mul_fn)(const struct mpce_harvey_tables *t, size_t n, const uint64_t *a,
                      const uint64_t *b, uint64_t *out);

static int mul_rows(const struct aesni_ntt_state *s, mul_fn fn, const uint64_t *a,
                    const uint64_t *b, uint64_t *out, size_t batch)
{
    const struct mpce_harvey_state *h = s->h;
    for (size_t bi = 0; bi < batch; bi++) {
        for (size_t i = 0; i < h->l; i++) {
            const size_t off = mpce_harvey_row_offset(h, bi, i);
            if (fn(h->row[i], h->n, a + off, b + off, out + off))
                return MPCE_OP_NONCANONICAL;
        }
    }
    return 0;
}

static int avx512_new(void *module, size_t n, size_t l, const uint64_t *q, const uint64_t *psi,
                      void **state)
{
    struct aesni_ntt_state *s = NULL;
    int rc = state_new(n, l, q, psi, COMP_AVX512, &s);
    if (rc == 0)
        *state = s;
    return rc;
}

static void ntt_free(void *state)
{
    state_free(state);
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
    .ctx_new = avx512_new,
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
    struct aesni_ntt_state *s = NULL;
    int rc = state_new(n, l, q, psi, COMP_IFMA, &s);
    if (rc == 0)
        *state = s;
    return rc;
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
