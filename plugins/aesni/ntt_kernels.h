/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The NTT kernels of the x86-64 module: what ntt.c (plain C) may call once
 * the CPU has been probed, and, below, the loop skeleton that both ISA files
 * compile with their own flags and their own modular multiplication.
 *
 * Every kernel transforms one row of n words, n >= AESNI_NTT_VEC_MIN_N, over
 * the shared Harvey tables and the kernel's own copy of the twiddles of its
 * register stages, reading in and writing out (in == out allowed, no other
 * overlap; any alignment), canonical out. Each returns non-zero when a word
 * of in is not below q (MPCE_IMPL_CHECKS_NTT_INPUT): the first pass over
 * memory takes the unsigned maximum of the words it loads, one instruction
 * per vector, where a separate scan would read the row once more. out is
 * then garbage, but no word outside it was written.
 */
#ifndef MPCE_AESNI_NTT_KERNELS_H
#define MPCE_AESNI_NTT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "plugins/common/ntt_harvey.h"

/* The vector loops work on 16-word chunks; smaller rows go scalar. */
#define AESNI_NTT_VEC_MIN_N 16u
/* IFMA multiplies 52-bit limbs: lazy values below 4q must fit them. */
#define AESNI_NTT_IFMA_MAX_Q (UINT64_C(1) << 50)

/*
 * One modulus's tables for the vector kernels: the Harvey tables, and n
 * words each of twiddles (w, iw) and Shoup companions in the form the
 * kernel's multiplication takes them (c, ic: w_shoup for AVX-512F,
 * w_shoup >> 12 for IFMA), so the register stages load them as they are.
 * Words [n/2, n), read only by the distance-1 stage, are permuted within
 * each group of 8 as aesni_ntt_d1_lane() says, into that stage's lane order.
 */
struct aesni_ntt_tables {
    const struct mpce_harvey_tables *t;
    const uint64_t *w, *c;
    const uint64_t *iw, *ic;
    /* iw[2] * n^-1 and iw[3] * n^-1 with their Shoup companions (w_shoup
     * form): the inverse's last radix-4 pass scales there. */
    uint64_t last4_w[2], last4_shoup[2];
};

/* The word of a group of 8 distance-1 twiddles that lane j takes. */
static inline unsigned aesni_ntt_d1_lane(unsigned j)
{
    return 4 * (j & 1) + (j >> 1);
}

int aesni_ntt_avx512_forward(const struct aesni_ntt_tables *k, size_t n, const uint64_t *in,
                             uint64_t *out);
int aesni_ntt_avx512_inverse(const struct aesni_ntt_tables *k, size_t n, const uint64_t *in,
                             uint64_t *out);
/* Pointwise a * b mod q for any n that is a multiple of 8; non-zero when a
 * word of a or b is not below q. */
int aesni_ntt_avx512_mul(const struct mpce_harvey_tables *t, size_t n, const uint64_t *a,
                         const uint64_t *b, uint64_t *out);

/* The same for moduli below AESNI_NTT_IFMA_MAX_Q only. */
int aesni_ntt_ifma_forward(const struct aesni_ntt_tables *k, size_t n, const uint64_t *in,
                           uint64_t *out);
int aesni_ntt_ifma_inverse(const struct aesni_ntt_tables *k, size_t n, const uint64_t *in,
                           uint64_t *out);
int aesni_ntt_ifma_mul(const struct mpce_harvey_tables *t, size_t n, const uint64_t *a,
                       const uint64_t *b, uint64_t *out);

#endif

/*
 * ---- The loop skeleton, for ntt_avx512.c and ntt_ifma.c only --------------
 *
 * The including file defines, before its one include of this header,
 * AESNI_NTT_FN(name) (the kernel's exported name), a twiddle type
 * `struct tw`, tw_make(w, w_shoup) building one from vectors of Harvey table
 * words, tw_prep(w, c) the same from vectors of struct aesni_ntt_tables
 * words, mul_lazy(y, tw, q, q2) = w * y mod q in [0, 2q) for y < 4q, and
 * mul_raw(y, tw, q) and raw_pad(q2), the same product less reduced and the
 * multiple of q that keeps x - mul_raw(y) + pad non-negative (x < 2q).
 * The stages are the scalar ones of ntt_harvey.h (same butterflies, same
 * lazy ranges, so canonical outputs are identical), grouped differently:
 *
 * - Stages whose butterfly distance is 16 or more stream over memory two at
 *   a time (radix 4: four vectors loaded, four butterflies, four stored),
 *   which halves the loads and stores and gives four independent
 *   multiplications per step; an odd stage out runs alone first.
 * - The four stages of distance 8, 4, 2, 1 run in registers, on up to eight
 *   16-word chunks side by side: distance 8 between whole vectors, the
 *   other three after a zip (forward) or unzip (inverse) of the chunk's two
 *   vectors per stage.
 * - Rows larger than AESNI_NTT_BLOCK words go depth first: once the
 *   butterflies of a pass stay inside a block, every later stage of that
 *   block runs before the next block, so they find it in L1 and L2.
 */
#ifdef AESNI_NTT_FN
#include <immintrin.h>

/* Words that the later stages work on together (16 KiB, half of L1d: the
 * rest holds the twiddles those stages stream). On Zen 4, 1024 to 8192
 * words measured the same: its L2 keeps the passes fed either way. */
#define AESNI_NTT_BLOCK 2048u

#define UNROLL _Pragma("GCC unroll 8")

static inline __m512i csub(__m512i x, __m512i m)
{
    /* x - m wraps above x when x < m. */
    return _mm512_min_epu64(x, _mm512_sub_epi64(x, m));
}

/* Whether any lane of top, the maximum of the words read, is not below q. */
static inline int top_bad(__m512i top, __m512i q)
{
    return _mm512_cmpge_epu64_mask(top, q) != 0;
}

static inline struct tw tw_bcast(uint64_t w, uint64_t ws)
{
    return tw_make(_mm512_set1_epi64((long long)w), _mm512_set1_epi64((long long)ws));
}

/* Twiddles of the distance-4 (2 words), distance-2 (4 words) and
 * distance-1 (8 words) stages of one 16-word chunk, in the lane patterns of
 * the layouts below. */
static inline struct tw tw_bcast_prep(uint64_t w, uint64_t c)
{
    return tw_prep(_mm512_set1_epi64((long long)w), _mm512_set1_epi64((long long)c));
}

static inline __m512i tw4_words(const uint64_t *w)
{
    /* w0 w0 w1 w1 w0 w0 w1 w1: a merge-masked broadcast, no permute. */
    return _mm512_mask_set1_epi64(_mm512_set1_epi64((long long)w[0]), 0xcc, (long long)w[1]);
}

static inline struct tw tw_d4(const uint64_t *w, const uint64_t *c)
{
    return tw_prep(tw4_words(w), tw4_words(c));
}

static inline __m512i tw2_words(const uint64_t *w)
{
    return _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)w));
}

static inline struct tw tw_d2(const uint64_t *w, const uint64_t *c)
{
    return tw_prep(tw2_words(w), tw2_words(c));
}

/* w0 w4 w1 w5 w2 w6 w3 w7, stored so by ntt.c. */
static inline struct tw tw_d1(const uint64_t *w, const uint64_t *c)
{
    return tw_prep(_mm512_loadu_si512(w), _mm512_loadu_si512(c));
}

/* Cooley-Tukey, x and y in [0, 4q) on entry and exit. */
static inline void ct_bfly(__m512i *x, __m512i *y, struct tw t, __m512i q, __m512i q2)
{
    __m512i u = csub(*x, q2);
    __m512i v = mul_lazy(*y, t, q, q2);
    *x = _mm512_add_epi64(u, v);
    *y = _mm512_add_epi64(_mm512_sub_epi64(u, v), q2);
}

/* Cooley-Tukey whose outputs only feed multiplications as y: x in [0, 4q),
 * y as ct_bfly takes it; the outputs are what mul_raw takes (see the ISA
 * file: below 6q, or right in their low 52 bits). */
static inline void ct_bfly_raw(__m512i *x, __m512i *y, struct tw t, __m512i q, __m512i q2,
                               __m512i pad)
{
    __m512i u = csub(*x, q2);
    __m512i v = mul_raw(*y, t, q);
    *x = _mm512_add_epi64(u, v);
    *y = _mm512_add_epi64(_mm512_sub_epi64(u, v), pad);
}

/* Gentleman-Sande, x and y in [0, 2q) on entry and exit. */
static inline void gs_bfly(__m512i *x, __m512i *y, struct tw t, __m512i q, __m512i q2)
{
    __m512i u = *x, v = *y;
    *x = csub(_mm512_add_epi64(u, v), q2);
    *y = mul_lazy(_mm512_add_epi64(_mm512_sub_epi64(u, v), q2), t, q, q2);
}

/*
 * Chunk layouts, as word indices 0..15 of the 16-word chunk held in (x, y),
 * y holding x's partners:
 *   natural x = 0..7           (distance 8)
 *   d4      x = 0,2,8,10,1,3,9,11
 *   d2      x = 0,4,8,12,1,5,9,13
 *   d1      x = 0,8,2,10,4,12,6,14
 * The steps d4 -> d2 and d1 -> natural (and back) are unpacks, which stay
 * within 128-bit lanes; only natural -> d4 and d2 -> d1 cross lanes, with
 * one pair of index vectors for both. Zen 4 runs cross-lane permutes on
 * the pipes of its multipliers, in-lane unpacks beside them.
 */
static inline void cross_fwd(__m512i *x, __m512i *y)
{
    __m512i a = _mm512_permutex2var_epi64(*x, _mm512_setr_epi64(0, 2, 8, 10, 1, 3, 9, 11), *y);
    *y = _mm512_permutex2var_epi64(*x, _mm512_setr_epi64(4, 6, 12, 14, 5, 7, 13, 15), *y);
    *x = a;
}

static inline void cross_inv(__m512i *x, __m512i *y)
{
    __m512i a = _mm512_permutex2var_epi64(*x, _mm512_setr_epi64(0, 4, 1, 5, 8, 12, 9, 13), *y);
    *y = _mm512_permutex2var_epi64(*x, _mm512_setr_epi64(2, 6, 3, 7, 10, 14, 11, 15), *y);
    *x = a;
}

static inline void unpack(__m512i *x, __m512i *y)
{
    __m512i a = _mm512_unpacklo_epi64(*x, *y);
    *y = _mm512_unpackhi_epi64(*x, *y);
    *x = a;
}

/* ---- forward ------------------------------------------------------------- */

/* The first stage alone (distance n / 2), from in: it is always the first
 * pass, so it returns the maximum of the words it read. */
static __m512i fwd_radix2_first(const struct mpce_harvey_tables *t, size_t n,
                                const uint64_t *src, uint64_t *dst)
{
    const __m512i q = _mm512_set1_epi64((long long)t->q), q2 = _mm512_add_epi64(q, q);
    const size_t gap = n / 2;
    __m512i top = _mm512_setzero_si512();
    const struct tw w = tw_bcast(t->w[1], t->w_shoup[1]);
    const uint64_t *sx = src, *sy = sx + gap;
    uint64_t *dx = dst, *dy = dx + gap;
    for (size_t j = 0; j < gap; j += 8) {
        __m512i x = _mm512_loadu_si512(sx + j), y = _mm512_loadu_si512(sy + j);
        top = _mm512_max_epu64(top, _mm512_max_epu64(x, y));
        ct_bfly(&x, &y, w, q, q2);
        _mm512_storeu_si512(dx + j, x);
        _mm512_storeu_si512(dy + j, y);
    }
    return top;
}

/* Stages m and 2m on the blocks [ib, ie) of stage m; distance n / 4m >= 16
 * (each step loads 16 words of each quarter; the callers keep it so). With
 * check, the first pass: returns the maximum of the words it read. */
static inline __attribute__((always_inline)) __m512i
fwd_radix4_body(const struct mpce_harvey_tables *t, size_t n, size_t m, size_t ib, size_t ie,
                const uint64_t *src, uint64_t *dst, const int check)
{
    const __m512i q = _mm512_set1_epi64((long long)t->q), q2 = _mm512_add_epi64(q, q);
    const __m512i pad = raw_pad(q2);
    const size_t h = n / (4 * m);
    __m512i top = _mm512_setzero_si512();
    for (size_t i = ib; i < ie; i++) {
        const struct tw w1 = tw_bcast(t->w[m + i], t->w_shoup[m + i]);
        const struct tw w2 = tw_bcast(t->w[2 * m + 2 * i], t->w_shoup[2 * m + 2 * i]);
        const struct tw w3 = tw_bcast(t->w[2 * m + 2 * i + 1], t->w_shoup[2 * m + 2 * i + 1]);
        const uint64_t *s = src + 4 * i * h;
        uint64_t *d = dst + 4 * i * h;
        /* Two steps at a time (h >= 16): four independent butterflies. */
        for (size_t j = 0; j < h; j += 16) {
            __m512i x[4][2];
            UNROLL for (unsigned k = 0; k < 4; k++)
                UNROLL for (unsigned u = 0; u < 2; u++)
                    x[k][u] = _mm512_loadu_si512(s + k * h + j + 8 * u);
            if (check) {
                __m512i a = _mm512_max_epu64(_mm512_max_epu64(x[0][0], x[0][1]),
                                             _mm512_max_epu64(x[1][0], x[1][1]));
                __m512i b = _mm512_max_epu64(_mm512_max_epu64(x[2][0], x[2][1]),
                                             _mm512_max_epu64(x[3][0], x[3][1]));
                top = _mm512_max_epu64(top, _mm512_max_epu64(a, b));
            }
            /* x[1] and x[3] go on as the y of the next butterflies only. */
            UNROLL for (unsigned u = 0; u < 2; u++) {
                ct_bfly(&x[0][u], &x[2][u], w1, q, q2);
                ct_bfly_raw(&x[1][u], &x[3][u], w1, q, q2, pad);
            }
            UNROLL for (unsigned u = 0; u < 2; u++) {
                ct_bfly(&x[0][u], &x[1][u], w2, q, q2);
                ct_bfly(&x[2][u], &x[3][u], w3, q, q2);
            }
            UNROLL for (unsigned k = 0; k < 4; k++)
                UNROLL for (unsigned u = 0; u < 2; u++)
                    _mm512_storeu_si512(d + k * h + j + 8 * u, x[k][u]);
        }
    }
    return top;
}

static void fwd_radix4(const struct mpce_harvey_tables *t, size_t n, size_t m, size_t ib,
                       size_t ie, const uint64_t *src, uint64_t *dst)
{
    (void)fwd_radix4_body(t, n, m, ib, ie, src, dst, 0);
}

static __m512i fwd_radix4_first(const struct mpce_harvey_tables *t, size_t n, size_t m,
                                size_t ib, size_t ie, const uint64_t *src, uint64_t *dst)
{
    return fwd_radix4_body(t, n, m, ib, ie, src, dst, 1);
}

/*
 * The distance-4, 2, 1 stages of the K 16-word chunks c0 .. c0 + K - 1 held
 * in (a[k], b[k]), then the final reduction to [0, q); returns them in
 * natural order. The chunks go through each stage together: one chunk's
 * stages form a chain of dependent multiplications, too long for the
 * out-of-order window to overlap with the next chunk's.
 */
static inline __attribute__((always_inline)) void
fwd_chunks16(const struct aesni_ntt_tables *kt, size_t n, size_t c0, __m512i *a, __m512i *b,
             const unsigned K, __m512i q, __m512i q2)
{
    const uint64_t *w = kt->w, *cw = kt->c;
    __m512i *x = a, *y = b;
    UNROLL for (unsigned k = 0; k < K; k++) {
        const size_t c = c0 + k;
        cross_fwd(&x[k], &y[k]);
        const size_t o = n / 8 + 2 * c;
        ct_bfly(&x[k], &y[k], tw_d4(w + o, cw + o), q, q2);
    }
    UNROLL for (unsigned k = 0; k < K; k++) {
        const size_t c = c0 + k;
        unpack(&x[k], &y[k]);
        const size_t o = n / 4 + 4 * c;
        ct_bfly(&x[k], &y[k], tw_d2(w + o, cw + o), q, q2);
    }
    UNROLL for (unsigned k = 0; k < K; k++) {
        const size_t c = c0 + k;
        cross_fwd(&x[k], &y[k]);
        const size_t o = n / 2 + 8 * c;
        ct_bfly(&x[k], &y[k], tw_d1(w + o, cw + o), q, q2);
    }
    UNROLL for (unsigned k = 0; k < K; k++) {
        x[k] = csub(csub(x[k], q2), q);
        y[k] = csub(csub(y[k], q2), q);
        unpack(&x[k], &y[k]);
    }
}

/* The last four stages (distances 8, 4, 2, 1) on 16K-word groups from
 * word wb on, K = 2, 4 or 8. */
static inline __attribute__((always_inline)) void
fwd_tail_k(const struct aesni_ntt_tables *kt, size_t n, size_t wb, size_t we,
           const uint64_t *src, uint64_t *dst, const unsigned K)
{
    const __m512i q = _mm512_set1_epi64((long long)kt->t->q), q2 = _mm512_add_epi64(q, q);
    const uint64_t *w8 = kt->w + n / 16, *c8 = kt->c + n / 16;
    for (size_t o = wb; o < we; o += 16 * K) {
        __m512i a[8], b[8];
        UNROLL for (unsigned k = 0; k < K; k++) {
            a[k] = _mm512_loadu_si512(src + o + 16 * k);
            b[k] = _mm512_loadu_si512(src + o + 16 * k + 8);
        }
        UNROLL for (unsigned k = 0; k < K; k++) {
            const size_t c = o / 16 + k;
            ct_bfly(&a[k], &b[k], tw_bcast_prep(w8[c], c8[c]), q, q2);
        }
        fwd_chunks16(kt, n, o / 16, a, b, K, q, q2);
        UNROLL for (unsigned k = 0; k < K; k++) {
            _mm512_storeu_si512(dst + o + 16 * k, a[k]);
            _mm512_storeu_si512(dst + o + 16 * k + 8, b[k]);
        }
    }
}

/* Words [wb, we) through the last four stages: a multiple of 64 words, or
 * the 32 of a 32-word row. */
static void fwd_tail(const struct aesni_ntt_tables *kt, size_t n, size_t wb, size_t we,
                     const uint64_t *src, uint64_t *dst)
{
    if ((we - wb) % 128 == 0)
        fwd_tail_k(kt, n, wb, we, src, dst, 8);
    else if (we - wb == 64)
        fwd_tail_k(kt, n, wb, we, src, dst, 4);
    else
        fwd_tail_k(kt, n, wb, we, src, dst, 2);
}

/* The memory stages m, 4m, ... (distance >= 16, an even number of them)
 * on the stage-m blocks [ib, ie), then their tail. top non-NULL: src is
 * the input, and the first of those stages (there is one: forward() sends
 * a row here unread only when 32 <= n = n / m) takes its maximum. */
static void fwd_part(const struct aesni_ntt_tables *kt, size_t n, size_t m, size_t ib,
                     size_t ie, const uint64_t *src, uint64_t *dst, __m512i *top)
{
    const struct mpce_harvey_tables *t = kt->t;
    for (; 32 * m <= n; m <<= 2) {
        if (top != NULL)
            *top = _mm512_max_epu64(*top, fwd_radix4_first(t, n, m, ib, ie, src, dst));
        else
            fwd_radix4(t, n, m, ib, ie, src, dst);
        top = NULL;
        ib *= 4, ie *= 4, src = dst;
    }
    /* Block i of stage m is words [i * n / m, (i + 1) * n / m). */
    fwd_tail(kt, n, ib * (n / m), ie * (n / m), src, dst);
}

int AESNI_NTT_FN(forward)(const struct aesni_ntt_tables *kt, size_t n, const uint64_t *in,
                          uint64_t *out)
{
    const struct mpce_harvey_tables *t = kt->t;
    const __m512i q = _mm512_set1_epi64((long long)t->q), q2 = _mm512_add_epi64(q, q);
    if (n < 32) {
        /* n = 16: the distance-8 stage, then the 16-word chunk. */
        __m512i a = _mm512_loadu_si512(in), b = _mm512_loadu_si512(in + 8);
        const __m512i top = _mm512_max_epu64(a, b);
        ct_bfly(&a, &b, tw_bcast(t->w[1], t->w_shoup[1]), q, q2);
        fwd_chunks16(kt, n, 0, &a, &b, 1, q, q2);
        _mm512_storeu_si512(out, a);
        _mm512_storeu_si512(out + 8, b);
        return top_bad(top, q);
    }
    /* in may be out: whether a pass is the first is m's business alone. */
    const uint64_t *src = in;
    __m512i top = _mm512_setzero_si512();
    size_t m = 1;
    unsigned stages = 0;
    for (size_t k = n; k > 16; k >>= 1)
        stages++;
    if (stages & 1) {
        top = fwd_radix2_first(t, n, src, out);
        src = out, m = 2;
    }
    while (n / m > AESNI_NTT_BLOCK && 32 * m <= n) {
        if (m == 1)
            top = fwd_radix4_first(t, n, m, 0, m, src, out);
        else
            fwd_radix4(t, n, m, 0, m, src, out);
        src = out, m <<= 2;
    }
    /* Each stage-m block (n / m words, 32 at least per call) fits now:
     * finish it before the next. */
    const size_t per = n / m >= 32 ? 1 : 32 * m / n;
    for (size_t i = 0; i < m; i += per)
        fwd_part(kt, n, m, i, i + per, src, out, m == 1 ? &top : NULL);
    return top_bad(top, q);
}

/* ---- inverse ------------------------------------------------------------- */

/* The distance-1, 2, 4 stages of the K 16-word chunks c0 .. c0 + K - 1 held
 * in (a[k], b[k]) in natural order, returned in natural order; the chunks
 * go through each stage together, as in fwd_chunks16. */
static inline __attribute__((always_inline)) void
inv_chunks16(const struct aesni_ntt_tables *kt, size_t n, size_t c0, __m512i *a, __m512i *b,
             const unsigned K, __m512i q, __m512i q2)
{
    const uint64_t *w = kt->iw, *cw = kt->ic;
    __m512i *x = a, *y = b;
    UNROLL for (unsigned k = 0; k < K; k++) {
        const size_t c = c0 + k;
        unpack(&x[k], &y[k]);
        const size_t o = n / 2 + 8 * c;
        gs_bfly(&x[k], &y[k], tw_d1(w + o, cw + o), q, q2);
    }
    UNROLL for (unsigned k = 0; k < K; k++) {
        const size_t c = c0 + k;
        cross_inv(&x[k], &y[k]);
        const size_t o = n / 4 + 4 * c;
        gs_bfly(&x[k], &y[k], tw_d2(w + o, cw + o), q, q2);
    }
    UNROLL for (unsigned k = 0; k < K; k++) {
        const size_t c = c0 + k;
        unpack(&x[k], &y[k]);
        const size_t o = n / 8 + 2 * c;
        gs_bfly(&x[k], &y[k], tw_d4(w + o, cw + o), q, q2);
    }
    UNROLL for (unsigned k = 0; k < K; k++)
        cross_inv(&x[k], &y[k]);
}

/* The first four stages (distances 1, 2, 4, 8) on 16K-word groups from
 * word wb on, K = 2, 4 or 8. The first pass over the input: returns the
 * maximum of the words it read. */
static inline __attribute__((always_inline)) __m512i
inv_head_k(const struct aesni_ntt_tables *kt, size_t n, size_t wb, size_t we,
           const uint64_t *src, uint64_t *dst, const unsigned K)
{
    const __m512i q = _mm512_set1_epi64((long long)kt->t->q), q2 = _mm512_add_epi64(q, q);
    const uint64_t *w8 = kt->iw + n / 16, *c8 = kt->ic + n / 16;
    __m512i top = _mm512_setzero_si512();
    for (size_t o = wb; o < we; o += 16 * K) {
        __m512i a[8], b[8];
        UNROLL for (unsigned k = 0; k < K; k++) {
            a[k] = _mm512_loadu_si512(src + o + 16 * k);
            b[k] = _mm512_loadu_si512(src + o + 16 * k + 8);
            top = _mm512_max_epu64(top, _mm512_max_epu64(a[k], b[k]));
        }
        inv_chunks16(kt, n, o / 16, a, b, K, q, q2);
        UNROLL for (unsigned k = 0; k < K; k++) {
            const size_t c = o / 16 + k;
            gs_bfly(&a[k], &b[k], tw_bcast_prep(w8[c], c8[c]), q, q2);
            _mm512_storeu_si512(dst + o + 16 * k, a[k]);
            _mm512_storeu_si512(dst + o + 16 * k + 8, b[k]);
        }
    }
    return top;
}

/* Words [wb, we) through the first four stages: a multiple of 64 words, or
 * the 32 of a 32-word row; returns the maximum of the words read. */
static __m512i inv_head(const struct aesni_ntt_tables *kt, size_t n, size_t wb, size_t we,
                        const uint64_t *src, uint64_t *dst)
{
    if ((we - wb) % 128 == 0)
        return inv_head_k(kt, n, wb, we, src, dst, 8);
    if (we - wb == 64)
        return inv_head_k(kt, n, wb, we, src, dst, 4);
    return inv_head_k(kt, n, wb, we, src, dst, 2);
}

/* The stage of distance g (>= 8) on its blocks [ib, ie), in place. */
static void inv_radix2(const struct mpce_harvey_tables *t, size_t n, size_t g, size_t ib,
                       size_t ie, uint64_t *a)
{
    const __m512i q = _mm512_set1_epi64((long long)t->q), q2 = _mm512_add_epi64(q, q);
    const size_t h = n / (2 * g);
    for (size_t i = ib; i < ie; i++) {
        const struct tw w = tw_bcast(t->iw[h + i], t->iw_shoup[h + i]);
        uint64_t *px = a + 2 * i * g, *py = px + g;
        for (size_t j = 0; j < g; j += 8) {
            __m512i x = _mm512_loadu_si512(px + j), y = _mm512_loadu_si512(py + j);
            gs_bfly(&x, &y, w, q, q2);
            _mm512_storeu_si512(px + j, x);
            _mm512_storeu_si512(py + j, y);
        }
    }
}

/* The stages of distance g and 2g on the blocks [ib, ie) of 4g words. */
static void inv_radix4(const struct mpce_harvey_tables *t, size_t n, size_t g, size_t ib,
                       size_t ie, uint64_t *a)
{
    const __m512i q = _mm512_set1_epi64((long long)t->q), q2 = _mm512_add_epi64(q, q);
    const size_t h = n / (2 * g);
    for (size_t i = ib; i < ie; i++) {
        const struct tw w0 = tw_bcast(t->iw[h + 2 * i], t->iw_shoup[h + 2 * i]);
        const struct tw w1 = tw_bcast(t->iw[h + 2 * i + 1], t->iw_shoup[h + 2 * i + 1]);
        const struct tw w2 = tw_bcast(t->iw[h / 2 + i], t->iw_shoup[h / 2 + i]);
        uint64_t *p = a + 4 * i * g;
        /* Two steps at a time (g >= 16): four independent butterflies. */
        for (size_t j = 0; j < g; j += 16) {
            __m512i x[4][2];
            UNROLL for (unsigned k = 0; k < 4; k++)
                UNROLL for (unsigned u = 0; u < 2; u++)
                    x[k][u] = _mm512_loadu_si512(p + k * g + j + 8 * u);
            UNROLL for (unsigned u = 0; u < 2; u++) {
                gs_bfly(&x[0][u], &x[1][u], w0, q, q2);
                gs_bfly(&x[2][u], &x[3][u], w1, q, q2);
            }
            UNROLL for (unsigned u = 0; u < 2; u++) {
                gs_bfly(&x[0][u], &x[2][u], w2, q, q2);
                gs_bfly(&x[1][u], &x[3][u], w2, q, q2);
            }
            UNROLL for (unsigned k = 0; k < 4; k++)
                UNROLL for (unsigned u = 0; u < 2; u++)
                    _mm512_storeu_si512(p + k * g + j + 8 * u, x[k][u]);
        }
    }
}

/* The last stage's butterfly, n^-1 folded into both outputs: canonical. */
static inline void inv_last_bfly(__m512i *x, __m512i *y, struct tw wn, struct tw wl, __m512i q,
                                 __m512i q2)
{
    __m512i u = *x, v = *y;
    *x = csub(mul_lazy(_mm512_add_epi64(u, v), wn, q, q2), q);
    *y = csub(mul_lazy(_mm512_add_epi64(_mm512_sub_epi64(u, v), q2), wl, q, q2), q);
}

/* The last stage alone (distance n / 2). */
static void inv_last2(const struct mpce_harvey_tables *t, size_t n, uint64_t *a)
{
    const __m512i q = _mm512_set1_epi64((long long)t->q), q2 = _mm512_add_epi64(q, q);
    const struct tw wn = tw_bcast(t->ninv, t->ninv_shoup);
    const struct tw wl = tw_bcast(t->last_w, t->last_w_shoup);
    uint64_t *px = a, *py = a + n / 2;
    for (size_t j = 0; j < n / 2; j += 8) {
        __m512i x = _mm512_loadu_si512(px + j), y = _mm512_loadu_si512(py + j);
        inv_last_bfly(&x, &y, wn, wl, q, q2);
        _mm512_storeu_si512(px + j, x);
        _mm512_storeu_si512(py + j, y);
    }
}

/*
 * The last two stages (distances n / 4 and n / 2). n^-1 goes into the
 * first stage's products instead of after the second for the odd outputs
 * of the first (x1, x3): the second stage then adds them unscaled and
 * multiplies only their difference, five products per four words, not six.
 */
static void inv_last4(const struct aesni_ntt_tables *kt, size_t n, uint64_t *a)
{
    const struct mpce_harvey_tables *t = kt->t;
    const __m512i q = _mm512_set1_epi64((long long)t->q), q2 = _mm512_add_epi64(q, q);
    const struct tw w0 = tw_bcast(kt->last4_w[0], kt->last4_shoup[0]);
    const struct tw w1 = tw_bcast(kt->last4_w[1], kt->last4_shoup[1]);
    const struct tw w2 = tw_bcast(t->iw[1], t->iw_shoup[1]);
    const struct tw wn = tw_bcast(t->ninv, t->ninv_shoup);
    const struct tw wl = tw_bcast(t->last_w, t->last_w_shoup);
    const size_t g = n / 4;
    for (size_t j = 0; j < g; j += 16) {
        __m512i x[4][2];
        UNROLL for (unsigned k = 0; k < 4; k++)
            UNROLL for (unsigned u = 0; u < 2; u++)
                x[k][u] = _mm512_loadu_si512(a + k * g + j + 8 * u);
        UNROLL for (unsigned u = 0; u < 2; u++) {
            gs_bfly(&x[0][u], &x[1][u], w0, q, q2);
            gs_bfly(&x[2][u], &x[3][u], w1, q, q2);
        }
        UNROLL for (unsigned u = 0; u < 2; u++) {
            inv_last_bfly(&x[0][u], &x[2][u], wn, wl, q, q2);
            /* x1, x3 in [0, 2q), already scaled by n^-1. */
            __m512i u1 = x[1][u], v1 = x[3][u];
            x[1][u] = csub(csub(_mm512_add_epi64(u1, v1), q2), q);
            x[3][u] = csub(mul_lazy(_mm512_add_epi64(_mm512_sub_epi64(u1, v1), q2), w2, q, q2), q);
        }
        UNROLL for (unsigned k = 0; k < 4; k++)
            UNROLL for (unsigned u = 0; u < 2; u++)
                _mm512_storeu_si512(a + k * g + j + 8 * u, x[k][u]);
    }
}

int AESNI_NTT_FN(inverse)(const struct aesni_ntt_tables *kt, size_t n, const uint64_t *in,
                          uint64_t *out)
{
    const struct mpce_harvey_tables *t = kt->t;
    const __m512i q = _mm512_set1_epi64((long long)t->q), q2 = _mm512_add_epi64(q, q);
    if (n < 32) {
        /* n = 16: the 16-word chunk, then the last stage (distance 8). */
        __m512i a = _mm512_loadu_si512(in), b = _mm512_loadu_si512(in + 8);
        const __m512i top = _mm512_max_epu64(a, b);
        inv_chunks16(kt, n, 0, &a, &b, 1, q, q2);
        inv_last_bfly(&a, &b, tw_bcast(t->ninv, t->ninv_shoup),
                      tw_bcast(t->last_w, t->last_w_shoup), q, q2);
        _mm512_storeu_si512(out, a);
        _mm512_storeu_si512(out + 8, b);
        return top_bad(top, q);
    }
    /* Memory stages: distances 16 .. n / 2, the last one with n^-1. An odd
     * count (beyond the last alone) puts one radix-2 stage first. */
    unsigned stages = 0;
    for (size_t k = n; k > 16; k >>= 1)
        stages++;
    const size_t blk = n < AESNI_NTT_BLOCK ? n : AESNI_NTT_BLOCK;
    size_t g = 16;
    __m512i top = _mm512_setzero_si512();
    for (size_t b0 = 0; b0 < n; b0 += blk) {
        top = _mm512_max_epu64(top, inv_head(kt, n, b0, b0 + blk, in, out));
        g = 16;
        if ((stages & 1) && stages > 1) {
            inv_radix2(t, n, g, b0 / 32, (b0 + blk) / 32, out);
            g = 32;
        }
        for (; 4 * g < n && 4 * g <= blk; g *= 4)
            inv_radix4(t, n, g, b0 / (4 * g), (b0 + blk) / (4 * g), out);
    }
    for (; 4 * g < n; g *= 4)
        inv_radix4(t, n, g, 0, n / (4 * g), out);
    if (4 * g == n)
        inv_last4(kt, n, out);
    else
        inv_last2(t, n, out);
    return top_bad(top, q);
}

#endif
