/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The negacyclic NTT skeleton (SPEC.md section 2) that every CPU backend
 * shares: twiddle tables with Shoup companions, the context state, and the
 * scalar Harvey lazy butterflies. SIMD backends run their own kernels over
 * these tables and fall back to the scalar rows where vectors do not fit.
 *
 * Harvey's lazy reduction: with Shoup precomputed twiddles, values stay in
 * [0, 4q) (forward) or [0, 2q) (inverse) between stages, which q < 2^61
 * allows, and only the last pass reduces to canonical [0, q). Cooley-Tukey
 * with the psi powers merged into the twiddles (in bit-reversed order) maps
 * natural order to the bit-reversed output order of the spec;
 * Gentleman-Sande undoes it. Since outputs are canonical, any kernel that
 * keeps these ranges is bit-identical to any other.
 */
#ifndef MPCE_COMMON_NTT_HARVEY_H
#define MPCE_COMMON_NTT_HARVEY_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpcengine/common.h"

/* Twiddle tables of one distinct modulus. */
struct mpce_harvey_tables {
    uint64_t q;
    uint64_t psi;
    uint64_t *w;        /* w[k] = psi^brv(k), k in [0, n) */
    uint64_t *w_shoup;  /* floor(w[k] * 2^64 / q) */
    uint64_t *iw;       /* iw[k] = psi^-brv(k) */
    uint64_t *iw_shoup;
    uint64_t ninv, ninv_shoup;       /* n^-1 mod q */
    uint64_t last_w, last_w_shoup;   /* iw[1] * n^-1: the last inverse stage */
    unsigned bar_shift;              /* Barrett for mul: bit length of q */
    uint64_t bar_mu;                 /* floor(2^(2*bits) / q) */
};

struct mpce_harvey_state {
    size_t n;
    unsigned logn;
    size_t l;
    size_t ntables;
    const struct mpce_harvey_tables **row;   /* table of modulus i */
    struct mpce_harvey_tables *tables;
    uint64_t *words;                         /* one allocation for every table */
};

static inline uint64_t mpce_harvey_mulhi(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

static inline uint64_t mpce_harvey_mulmod(uint64_t a, uint64_t b, uint64_t q)
{
    return (uint64_t)(((unsigned __int128)a * b) % q);
}

static inline uint64_t mpce_harvey_shoup(uint64_t w, uint64_t q)
{
    return (uint64_t)(((unsigned __int128)w << 64) / q);
}

/* w * y mod q in [0, 2q) for any 64-bit y (Shoup). */
static inline uint64_t mpce_harvey_mul_lazy(uint64_t y, uint64_t w, uint64_t ws, uint64_t q)
{
    return w * y - mpce_harvey_mulhi(ws, y) * q;
}

/* x - m if x >= m, without a branch on the (secret) value. */
static inline uint64_t mpce_harvey_csub(uint64_t x, uint64_t m)
{
    uint64_t d = x - m;
    return d + (m & (uint64_t)-(int64_t)(d >> 63));
}

static inline size_t mpce_harvey_brv(size_t k, unsigned bits)
{
    size_t r = 0;
    for (unsigned i = 0; i < bits; i++) {
        r = (r << 1) | (k & 1);
        k >>= 1;
    }
    return r;
}

static inline void mpce_harvey_tables_fill(struct mpce_harvey_tables *t, size_t n,
                                           unsigned logn)
{
    const uint64_t q = t->q;
    /* psi^(2n) = 1, so psi^(2n - 1) is its inverse. */
    uint64_t inv = 1, base = t->psi, e = 2 * (uint64_t)n - 1;
    while (e) {
        if (e & 1)
            inv = mpce_harvey_mulmod(inv, base, q);
        base = mpce_harvey_mulmod(base, base, q);
        e >>= 1;
    }
    uint64_t p = 1, ip = 1;
    for (size_t k = 0; k < n; k++) {
        size_t r = mpce_harvey_brv(k, logn);
        t->w[r] = p;
        t->iw[r] = ip;
        p = mpce_harvey_mulmod(p, t->psi, q);
        ip = mpce_harvey_mulmod(ip, inv, q);
    }
    for (size_t k = 0; k < n; k++) {
        t->w_shoup[k] = mpce_harvey_shoup(t->w[k], q);
        t->iw_shoup[k] = mpce_harvey_shoup(t->iw[k], q);
    }
    /* n divides q - 1, so n * ((q - 1) / n) = -1 mod q. */
    t->ninv = q - (q - 1) / n;
    t->ninv_shoup = mpce_harvey_shoup(t->ninv, q);
    t->last_w = mpce_harvey_mulmod(t->iw[1], t->ninv, q);
    t->last_w_shoup = mpce_harvey_shoup(t->last_w, q);
    unsigned bits = 0;
    while (bits < 64 && (q >> bits) != 0)
        bits++;
    t->bar_shift = bits;
    t->bar_mu = (uint64_t)(((unsigned __int128)1 << (2 * bits)) / q);
}

static inline void mpce_harvey_state_free(struct mpce_harvey_state *s)
{
    if (s == NULL)
        return;
    free(s->words);
    free(s->tables);
    free(s->row);
    free(s);
}

/* The state for degree n and l moduli. Every table array starts on a
 * 64-byte boundary so vector kernels may use aligned loads on it. */
static inline int mpce_harvey_state_new(size_t n, size_t l, const uint64_t *q,
                                        const uint64_t *psi, struct mpce_harvey_state **state)
{
    if (n < 2 || (n & (n - 1)) != 0 || l == 0)
        return MPCE_ERR_ARG;
    unsigned logn = 0;
    while (((size_t)1 << logn) < n)
        logn++;

    struct mpce_harvey_state *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return MPCE_ERR_NOMEM;
    s->n = n;
    s->logn = logn;
    s->l = l;
    s->row = calloc(l, sizeof(*s->row));
    s->tables = calloc(l, sizeof(*s->tables));
    if (s->row == NULL || s->tables == NULL) {
        mpce_harvey_state_free(s);
        return MPCE_ERR_NOMEM;
    }
    /* Equal moduli share one set of tables (RNS bases may repeat a prime). */
    for (size_t i = 0; i < l; i++) {
        size_t j;
        for (j = 0; j < s->ntables; j++) {
            if (s->tables[j].q == q[i] && s->tables[j].psi == psi[i])
                break;
        }
        if (j == s->ntables) {
            s->tables[j].q = q[i];
            s->tables[j].psi = psi[i];
            s->ntables++;
        }
        s->row[i] = &s->tables[j];
    }
    const size_t arr = (n + 7) & ~(size_t)7;
    const size_t per = 4 * arr;
    s->words = aligned_alloc(64, s->ntables * per * sizeof(uint64_t));
    if (s->words == NULL) {
        mpce_harvey_state_free(s);
        return MPCE_ERR_NOMEM;
    }
    for (size_t j = 0; j < s->ntables; j++) {
        struct mpce_harvey_tables *t = &s->tables[j];
        uint64_t *base = s->words + j * per;
        t->w = base;
        t->w_shoup = base + arr;
        t->iw = base + 2 * arr;
        t->iw_shoup = base + 3 * arr;
        mpce_harvey_tables_fill(t, n, logn);
    }
    *state = s;
    return 0;
}

/* Forward stages m_begin, 2*m_begin, ... below n, in place, values kept in
 * [0, 4q); canonical inputs or outputs of earlier stages. */
static inline void mpce_harvey_forward_stages(const struct mpce_harvey_tables *t, size_t n,
                                              size_t m_begin, uint64_t *a)
{
    const uint64_t q = t->q, q2 = 2 * q;
    for (size_t m = m_begin; m < n; m <<= 1) {
        const size_t gap = n / (2 * m);
        for (size_t i = 0; i < m; i++) {
            const uint64_t w = t->w[m + i], ws = t->w_shoup[m + i];
            uint64_t *x = a + 2 * i * gap, *y = x + gap;
            for (size_t j = 0; j < gap; j++) {
                uint64_t u = mpce_harvey_csub(x[j], q2);
                uint64_t v = mpce_harvey_mul_lazy(y[j], w, ws, q);
                x[j] = u + v;
                y[j] = u - v + q2;
            }
        }
    }
}

/* Forward transform of one row in place: canonical in, canonical out. */
static inline void mpce_harvey_forward_row(const struct mpce_harvey_tables *t, size_t n,
                                           uint64_t *a)
{
    const uint64_t q = t->q, q2 = 2 * q;
    mpce_harvey_forward_stages(t, n, 1, a);
    for (size_t j = 0; j < n; j++)
        a[j] = mpce_harvey_csub(mpce_harvey_csub(a[j], q2), q);
}

/* Inverse transform of one row in place: canonical in, canonical out. */
static inline void mpce_harvey_inverse_row(const struct mpce_harvey_tables *t, size_t n,
                                           uint64_t *a)
{
    const uint64_t q = t->q, q2 = 2 * q;
    size_t gap = 1;
    for (size_t m = n; m > 2; m >>= 1) {
        const size_t h = m >> 1;
        for (size_t i = 0; i < h; i++) {
            const uint64_t w = t->iw[h + i], ws = t->iw_shoup[h + i];
            uint64_t *x = a + 2 * i * gap, *y = x + gap;
            for (size_t j = 0; j < gap; j++) {
                /* x, y in [0, 2q) on entry and exit. */
                uint64_t u = x[j], v = y[j];
                x[j] = mpce_harvey_csub(u + v, q2);
                y[j] = mpce_harvey_mul_lazy(u - v + q2, w, ws, q);
            }
        }
        gap <<= 1;
    }
    /* Last stage with n^-1 folded into both outputs. */
    uint64_t *x = a, *y = a + gap;
    for (size_t j = 0; j < gap; j++) {
        uint64_t u = x[j], v = y[j];
        x[j] = mpce_harvey_csub(mpce_harvey_mul_lazy(u + v, t->ninv, t->ninv_shoup, q), q);
        y[j] = mpce_harvey_csub(mpce_harvey_mul_lazy(u - v + q2, t->last_w, t->last_w_shoup, q),
                                q);
    }
}

/* a * b mod q by Barrett reduction (HAC 14.42 with base 2): both operands
 * vary, so Shoup's precomputation does not apply, and a 128-bit division
 * per word would be several times slower. */
static inline uint64_t mpce_harvey_mul_barrett(uint64_t a, uint64_t b,
                                               const struct mpce_harvey_tables *t)
{
    const unsigned k = t->bar_shift;
    const unsigned __int128 x = (unsigned __int128)a * b;
    const uint64_t q1 = (uint64_t)(x >> (k - 1));
    const uint64_t q3 = (uint64_t)(((unsigned __int128)q1 * t->bar_mu) >> (k + 1));
    uint64_t r = (uint64_t)x - q3 * t->q;   /* < 3q, exact modulo 2^64 */
    return mpce_harvey_csub(mpce_harvey_csub(r, t->q), t->q);
}

static inline void mpce_harvey_mul_row(const struct mpce_harvey_tables *t, size_t n,
                                       const uint64_t *a, const uint64_t *b, uint64_t *out)
{
    for (size_t j = 0; j < n; j++)
        out[j] = mpce_harvey_mul_barrett(a[j], b[j], t);
}

/* Row (b, i) of a batch: its offset in words and its tables. */
static inline size_t mpce_harvey_row_offset(const struct mpce_harvey_state *s, size_t b,
                                            size_t i)
{
    return (b * s->l + i) * s->n;
}

/* A transform of one row in place, canonical in and out: the scalar rows
 * above, or a backend's own over the same tables. */
typedef void (*mpce_harvey_row_fn)(const struct mpce_harvey_tables *t, size_t n, uint64_t *a);

/* fn over every row of a batch: the op tables' forward and inverse. The
 * rows are transformed in out, so in == out needs no copy. */
static inline int mpce_harvey_run_rows(const struct mpce_harvey_state *s, mpce_harvey_row_fn fn,
                                       const uint64_t *in, uint64_t *out, size_t batch)
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

/* Pointwise products of a batch, the op tables' mul: the Barrett row's
 * words are already independent, so the compiler interleaves them without
 * a backend's help. */
static inline int mpce_harvey_mul_rows(const struct mpce_harvey_state *s, const uint64_t *a,
                                       const uint64_t *b, uint64_t *out, size_t batch)
{
    for (size_t bi = 0; bi < batch; bi++) {
        for (size_t i = 0; i < s->l; i++) {
            const size_t off = mpce_harvey_row_offset(s, bi, i);
            mpce_harvey_mul_row(s->row[i], s->n, a + off, b + off, out + off);
        }
    }
    return 0;
}

#endif
