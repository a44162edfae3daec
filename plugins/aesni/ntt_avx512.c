/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NTT kernels for AVX-512F/DQ, 8 words per vector, any q < 2^61. AVX-512
 * has no 64x64->128 multiply, so the Shoup quotient hi64(w' * y) is
 * estimated from three 32x32 products (see mul_lazy); the low words come
 * from vpmullq, which Zen 4 runs at the rate of vpmuludq.
 */
#include "config.h"

#include <immintrin.h>

#define AESNI_NTT_FN(name) aesni_ntt_avx512_##name

/* A twiddle w, its Shoup companion w' = floor(w * 2^64 / q) and w' >> 32. */
struct tw {
    __m512i w, s, sh;
};

static inline struct tw tw_make(__m512i w, __m512i ws)
{
    struct tw t = {w, ws, _mm512_srli_epi64(ws, 32)};
    return t;
}

/* A shift beside the multiplies costs no more than a third table. */
static inline struct tw tw_prep(__m512i w, __m512i c)
{
    return tw_make(w, c);
}

/*
 * Shoup's quotient from three 32x32 products: with s = w' and y < 2^63,
 * Q = hi(s) hi(y) + (lo(s) hi(y) >> 32) + (hi(s) lo(y) >> 32) drops the
 * product lo(s) lo(y) and the low halves of the middle ones, less than
 * 3 * 2^64 in all, so it falls short of floor(s * y / 2^64) by at most 2,
 * and of floor(w * y / q) by at most 3 (for any y < 2^64): w * y - Q * q
 * is in [0, 4q), below 2^63, exact from the low 64-bit words (mul_raw),
 * and one subtraction of 2q brings it into [0, 2q). No partial sum
 * overflows: s, y < 2^64.
 */
static inline __m512i mul_raw(__m512i y, struct tw t, __m512i q)
{
    __m512i yh = _mm512_srli_epi64(y, 32);
    __m512i hh = _mm512_mul_epu32(t.sh, yh);
    __m512i lh = _mm512_mul_epu32(t.s, yh), hl = _mm512_mul_epu32(t.sh, y);
    __m512i quot = _mm512_add_epi64(_mm512_add_epi64(hh, _mm512_srli_epi64(lh, 32)),
                                    _mm512_srli_epi64(hl, 32));
    return _mm512_sub_epi64(_mm512_mullo_epi64(t.w, y), _mm512_mullo_epi64(quot, q));
}

static inline __m512i mul_lazy(__m512i y, struct tw t, __m512i q, __m512i q2)
{
    __m512i r = mul_raw(y, t, q);
    return _mm512_min_epu64(r, _mm512_sub_epi64(r, q2));
}

/* mul_raw's values lie in [0, 4q); the estimate above holds for any
 * 64-bit y, so butterfly outputs below 6q may feed it directly. */
static inline __m512i raw_pad(__m512i q2)
{
    return _mm512_add_epi64(q2, q2);
}

#include "plugins/aesni/ntt_kernels.h"

/* The full product a * b as (hi, lo). */
static inline void mul128(__m512i a, __m512i b, __m512i *hi, __m512i *lo)
{
    const __m512i lo32 = _mm512_set1_epi64(0xffffffff);
    __m512i ah = _mm512_srli_epi64(a, 32), bh = _mm512_srli_epi64(b, 32);
    __m512i ll = _mm512_mul_epu32(a, b), lh = _mm512_mul_epu32(a, bh);
    __m512i hl = _mm512_mul_epu32(ah, b), hh = _mm512_mul_epu32(ah, bh);
    __m512i mid = _mm512_add_epi64(hl, _mm512_srli_epi64(ll, 32));
    __m512i mid2 = _mm512_add_epi64(lh, _mm512_and_si512(mid, lo32));
    *hi = _mm512_add_epi64(_mm512_add_epi64(hh, _mm512_srli_epi64(mid, 32)),
                           _mm512_srli_epi64(mid2, 32));
    *lo = _mm512_or_si512(_mm512_slli_epi64(mid2, 32), _mm512_and_si512(ll, lo32));
}

/*
 * Pointwise a * b mod q by the Barrett reduction of ntt_harvey.h, with both
 * 128-bit products summed from 32-bit pieces. With k = bit length of q,
 * q1 = (a*b) >> (k - 1) < 2^(k+1) and mu < 2^(k+1), so the shifts below
 * stay within 64 bits for every k <= 61.
 */
int aesni_ntt_avx512_mul(const struct mpce_harvey_tables *t, size_t n, const uint64_t *a,
                         const uint64_t *b, uint64_t *out)
{
    const unsigned k = t->bar_shift;
    const __m512i q = _mm512_set1_epi64((long long)t->q);
    const __m512i mu = _mm512_set1_epi64((long long)t->bar_mu);
    const __m128i hi1 = _mm_cvtsi32_si128((int)(65 - k)), lo1 = _mm_cvtsi32_si128((int)(k - 1));
    const __m128i hi3 = _mm_cvtsi32_si128((int)(63 - k)), lo3 = _mm_cvtsi32_si128((int)(k + 1));
    __m512i top = _mm512_setzero_si512();
    for (size_t j = 0; j < n; j += 8) {
        __m512i hi, lo, h3, l3, x = _mm512_loadu_si512(a + j), y = _mm512_loadu_si512(b + j);
        top = _mm512_max_epu64(top, _mm512_max_epu64(x, y));
        mul128(x, y, &hi, &lo);
        __m512i q1 = _mm512_or_si512(_mm512_sll_epi64(hi, hi1), _mm512_srl_epi64(lo, lo1));
        mul128(q1, mu, &h3, &l3);
        __m512i q3 = _mm512_or_si512(_mm512_sll_epi64(h3, hi3), _mm512_srl_epi64(l3, lo3));
        __m512i r = _mm512_sub_epi64(lo, _mm512_mullo_epi64(q3, q));
        _mm512_storeu_si512(out + j, csub(csub(r, q), q));
    }
    return top_bad(top, q);
}
