/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The NTT kernels of the x86-64 module: what ntt.c (plain C) may call once
 * the CPU has been probed, and, below, the loop skeleton that both ISA files
 * compile with their own flags and their own modular multiplication.
 *
 * Every kernel transforms one row of n words, n >= AESNI_NTT_VEC_MIN_N, over
 * the shared Harvey tables, reading in and writing out (in == out allowed,
 * no other overlap; any alignment), canonical in and canonical out.
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

void aesni_ntt_avx512_forward(const struct mpce_harvey_tables *t, size_t n, const uint64_t *in,
                              uint64_t *out);
void aesni_ntt_avx512_inverse(const struct mpce_harvey_tables *t, size_t n, const uint64_t *in,
                              uint64_t *out);
/* Pointwise a * b mod q for any n that is a multiple of 8. */
void aesni_ntt_avx512_mul(const struct mpce_harvey_tables *t, size_t n, const uint64_t *a,
                          const uint64_t *b, uint64_t *out);

/* The same for moduli below AESNI_NTT_IFMA_MAX_Q only. */
void aesni_ntt_ifma_forward(const struct mpce_harvey_tables *t, size_t n, const uint64_t *in,
                            uint64_t *out);
void aesni_ntt_ifma_inverse(const struct mpce_harvey_tables *t, size_t n, const uint64_t *in,
                            uint64_t *out);
void aesni_ntt_ifma_mul(const struct mpce_harvey_tables *t, size_t n, const uint64_t *a,
                        const uint64_t *b, uint64_t *out);

#endif

/*
 * ---- The loop skeleton, for ntt_avx512.c and ntt_ifma.c only --------------
 *
 * The including file defines, before its one include of this header,
 * AESNI_NTT_FN(name) (the kernel's exported name), a twiddle type
 * `struct tw`, tw_make(w, w_shoup) building one from vectors of table
 * words, and mul_lazy(y, tw, q) = w * y mod q in [0, 2q) for y < 4q.
 * The stages are the scalar ones of ntt_harvey.h (same ranges,
 * so canonical outputs are identical): stages whose butterfly distance is
 * 8 or more stream over memory, and the last three forward stages (the
 * first three inverse ones), distances 4, 2, 1, run in registers on 16-word
 * chunks, reshuffled between stages by permutes that are their own inverse.
 */
#ifdef AESNI_NTT_FN
#include <immintrin.h>

static inline __m512i csub(__m512i x, __m512i m)
{
    /* x - m wraps above x when x < m. */
    return _mm512_min_epu64(x, _mm512_sub_epi64(x, m));
}

static inline struct tw tw_bcast(uint64_t w, uint64_t ws)
{
    return tw_make(_mm512_set1_epi64((long long)w), _mm512_set1_epi64((long long)ws));
}

static inline __m512i load2(const uint64_t *p)
{
    return _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)p));
}

static inline __m512i load4(const uint64_t *p)
{
    return _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)p));
}

/* Twiddles of the distance-4 (2 words, each 4 times), distance-2 (4 words,
 * each twice) and distance-1 (8 words) stages of one chunk. */
static inline struct tw tw_rep4(const uint64_t *w, const uint64_t *ws)
{
    const __m512i idx = _mm512_setr_epi64(0, 0, 0, 0, 1, 1, 1, 1);
    return tw_make(_mm512_permutexvar_epi64(idx, load2(w)),
                   _mm512_permutexvar_epi64(idx, load2(ws)));
}

static inline struct tw tw_rep2(const uint64_t *w, const uint64_t *ws)
{
    const __m512i idx = _mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3);
    return tw_make(_mm512_permutexvar_epi64(idx, load4(w)),
                   _mm512_permutexvar_epi64(idx, load4(ws)));
}

static inline struct tw tw_seq(const uint64_t *w, const uint64_t *ws)
{
    return tw_make(_mm512_loadu_si512(w), _mm512_loadu_si512(ws));
}

/* Cooley-Tukey, x and y in [0, 4q) on entry and exit. */
static inline void ct_bfly(__m512i *x, __m512i *y, struct tw t, __m512i q, __m512i q2)
{
    __m512i u = csub(*x, q2);
    __m512i v = mul_lazy(*y, t, q);
    *x = _mm512_add_epi64(u, v);
    *y = _mm512_add_epi64(_mm512_sub_epi64(u, v), q2);
}

/* Gentleman-Sande, x and y in [0, 2q) on entry and exit. */
static inline void gs_bfly(__m512i *x, __m512i *y, struct tw t, __m512i q, __m512i q2)
{
    __m512i u = *x, v = *y;
    *x = csub(_mm512_add_epi64(u, v), q2);
    *y = mul_lazy(_mm512_add_epi64(_mm512_sub_epi64(u, v), q2), t, q);
}

/* Chunk layouts, as word indices 0..15 of the chunk held in (x, y):
 * d4 x = 0-3,8-11 y = 4-7,12-15; d2 x = 0,1,4,5,8,9,12,13 y = the rest;
 * d1 x = evens y = odds. Each pair of index vectors maps one layout to the
 * next one and back. */
static inline void perm2(__m512i *x, __m512i *y, __m512i ix, __m512i iy)
{
    __m512i a = _mm512_permutex2var_epi64(*x, ix, *y);
    *y = _mm512_permutex2var_epi64(*x, iy, *y);
    *x = a;
}

#define D4_D2_X _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13)
#define D4_D2_Y _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15)
#define D2_D1_X _mm512_setr_epi64(0, 8, 2, 10, 4, 12, 6, 14)
#define D2_D1_Y _mm512_setr_epi64(1, 9, 3, 11, 5, 13, 7, 15)
#define EVENS _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14)
#define ODDS _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15)

static void fwd_memory_stages(const struct mpce_harvey_tables *t, size_t n, const uint64_t *in,
                              uint64_t *out)
{
    const __m512i q = _mm512_set1_epi64((long long)t->q), q2 = _mm512_add_epi64(q, q);
    const uint64_t *src = in;
    for (size_t m = 1; 2 * m * 8 <= n; m <<= 1) {
        const size_t gap = n / (2 * m);
        for (size_t i = 0; i < m; i++) {
            const struct tw w = tw_bcast(t->w[m + i], t->w_shoup[m + i]);
            const uint64_t *sx = src + 2 * i * gap, *sy = sx + gap;
            uint64_t *dx = out + 2 * i * gap, *dy = dx + gap;
            for (size_t j = 0; j < gap; j += 8) {
                __m512i x = _mm512_loadu_si512(sx + j), y = _mm512_loadu_si512(sy + j);
                ct_bfly(&x, &y, w, q, q2);
                _mm512_storeu_si512(dx + j, x);
                _mm512_storeu_si512(dy + j, y);
            }
        }
        src = out;
    }
}

void AESNI_NTT_FN(forward)(const struct mpce_harvey_tables *t, size_t n, const uint64_t *in,
                           uint64_t *out)
{
    const __m512i q = _mm512_set1_epi64((long long)t->q), q2 = _mm512_add_epi64(q, q);
    fwd_memory_stages(t, n, in, out);
    const uint64_t *w4 = t->w + n / 8, *w4s = t->w_shoup + n / 8;
    const uint64_t *w2 = t->w + n / 4, *w2s = t->w_shoup + n / 4;
    const uint64_t *w1 = t->w + n / 2, *w1s = t->w_shoup + n / 2;
    for (size_t c = 0; c < n / 16; c++) {
        uint64_t *p = out + 16 * c;
        __m512i a = _mm512_loadu_si512(p), b = _mm512_loadu_si512(p + 8);
        __m512i x = _mm512_shuffle_i64x2(a, b, 0x44), y = _mm512_shuffle_i64x2(a, b, 0xee);
        ct_bfly(&x, &y, tw_rep4(w4 + 2 * c, w4s + 2 * c), q, q2);
        perm2(&x, &y, D4_D2_X, D4_D2_Y);
        ct_bfly(&x, &y, tw_rep2(w2 + 4 * c, w2s + 4 * c), q, q2);
        perm2(&x, &y, D2_D1_X, D2_D1_Y);
        ct_bfly(&x, &y, tw_seq(w1 + 8 * c, w1s + 8 * c), q, q2);
        x = csub(csub(x, q2), q);
        y = csub(csub(y, q2), q);
        /* Interleave evens and odds back into natural chunk order. */
        a = _mm512_permutex2var_epi64(x, _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), y);
        b = _mm512_permutex2var_epi64(x, _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15), y);
        _mm512_storeu_si512(p, a);
        _mm512_storeu_si512(p + 8, b);
    }
}

void AESNI_NTT_FN(inverse)(const struct mpce_harvey_tables *t, size_t n, const uint64_t *in,
                           uint64_t *out)
{
    const __m512i q = _mm512_set1_epi64((long long)t->q), q2 = _mm512_add_epi64(q, q);
    const uint64_t *w1 = t->iw + n / 2, *w1s = t->iw_shoup + n / 2;
    const uint64_t *w2 = t->iw + n / 4, *w2s = t->iw_shoup + n / 4;
    const uint64_t *w4 = t->iw + n / 8, *w4s = t->iw_shoup + n / 8;
    for (size_t c = 0; c < n / 16; c++) {
        __m512i a = _mm512_loadu_si512(in + 16 * c), b = _mm512_loadu_si512(in + 16 * c + 8);
        __m512i x = _mm512_permutex2var_epi64(a, EVENS, b);
        __m512i y = _mm512_permutex2var_epi64(a, ODDS, b);
        gs_bfly(&x, &y, tw_seq(w1 + 8 * c, w1s + 8 * c), q, q2);
        perm2(&x, &y, D2_D1_X, D2_D1_Y);
        gs_bfly(&x, &y, tw_rep2(w2 + 4 * c, w2s + 4 * c), q, q2);
        perm2(&x, &y, D4_D2_X, D4_D2_Y);
        gs_bfly(&x, &y, tw_rep4(w4 + 2 * c, w4s + 2 * c), q, q2);
        _mm512_storeu_si512(out + 16 * c, _mm512_shuffle_i64x2(x, y, 0x44));
        _mm512_storeu_si512(out + 16 * c + 8, _mm512_shuffle_i64x2(x, y, 0xee));
    }
    for (size_t gap = 8; gap <= n / 4; gap <<= 1) {
        const size_t h = n / (2 * gap);
        for (size_t i = 0; i < h; i++) {
            const struct tw w = tw_bcast(t->iw[h + i], t->iw_shoup[h + i]);
            uint64_t *px = out + 2 * i * gap, *py = px + gap;
            for (size_t j = 0; j < gap; j += 8) {
                __m512i x = _mm512_loadu_si512(px + j), y = _mm512_loadu_si512(py + j);
                gs_bfly(&x, &y, w, q, q2);
                _mm512_storeu_si512(px + j, x);
                _mm512_storeu_si512(py + j, y);
            }
        }
    }
    /* Last stage with n^-1 folded into both outputs. */
    const struct tw wn = tw_bcast(t->ninv, t->ninv_shoup);
    const struct tw wl = tw_bcast(t->last_w, t->last_w_shoup);
    uint64_t *px = out, *py = out + n / 2;
    for (size_t j = 0; j < n / 2; j += 8) {
        __m512i u = _mm512_loadu_si512(px + j), v = _mm512_loadu_si512(py + j);
        __m512i x = mul_lazy(_mm512_add_epi64(u, v), wn, q);
        __m512i y = mul_lazy(_mm512_add_epi64(_mm512_sub_epi64(u, v), q2), wl, q);
        _mm512_storeu_si512(px + j, csub(x, q));
        _mm512_storeu_si512(py + j, csub(y, q));
    }
}

#endif
