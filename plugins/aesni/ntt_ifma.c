/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NTT kernels for AVX-512 IFMA, moduli q < 2^50 only: every lazy value is
 * below 4q < 2^52, so it is one 52-bit limb and a Shoup product needs three
 * 52-bit multiplies instead of AVX-512F's five.
 *
 * Shoup with 52-bit companions: s = floor(w * 2^52 / q) (the 64-bit
 * companion shifted right by 12) and Q = floor(s * y / 2^52) satisfy
 * w*y/q - 2 < Q <= w*y/q for y < 2^52, so w*y - Q*q lies in [0, 2q) and is
 * exact from the low 52 bits of both products.
 */
#include "config.h"

#include <immintrin.h>

#define AESNI_NTT_FN(name) aesni_ntt_ifma_##name

/* A twiddle w and its 52-bit Shoup companion. */
struct tw {
    __m512i w, s;
};

static inline struct tw tw_make(__m512i w, __m512i ws)
{
    struct tw t = {w, _mm512_srli_epi64(ws, 12)};
    return t;
}

static inline struct tw tw_prep(__m512i w, __m512i c)
{
    struct tw t = {w, c};
    return t;
}

/* The low product of Q and 2^52 - q is -Q * q mod 2^52, so accumulating it
 * onto the low word of w * y leaves w * y - Q * q in the low 52 bits, and
 * the multiplier inputs read no others: mul_raw leaves the bits above. */
static inline __m512i mul_raw(__m512i y, struct tw t, __m512i q)
{
    const __m512i zero = _mm512_setzero_si512();
    __m512i quot = _mm512_madd52hi_epu64(zero, t.s, y);
    __m512i wy = _mm512_madd52lo_epu64(zero, t.w, y);
    return _mm512_madd52lo_epu64(wy, quot, _mm512_sub_epi64(_mm512_set1_epi64(1ll << 52), q));
}

static inline __m512i mul_lazy(__m512i y, struct tw t, __m512i q, __m512i q2)
{
    (void)q2;
    return _mm512_and_si512(mul_raw(y, t, q), _mm512_set1_epi64((1ll << 52) - 1));
}

/* mul_raw's low 52 bits lie in [0, 2q). */
static inline __m512i raw_pad(__m512i q2)
{
    return q2;
}

#include "plugins/aesni/ntt_kernels.h"

/*
 * Pointwise a * b mod q by Barrett reduction (as in ntt_harvey.h) on 52-bit
 * limbs. With k = bit length of q (k <= 50), p = a*b = hi * 2^52 + lo,
 * q1 = p >> (k - 1) < 2^(k+1), mu = floor(2^2k / q) < 2^(k+1), and
 * q3 = (q1 * mu) >> (k + 1), p - q3 * q lies in [0, 3q) and fits 52 bits.
 */
int aesni_ntt_ifma_mul(const struct mpce_harvey_tables *t, size_t n, const uint64_t *a,
                       const uint64_t *b, uint64_t *out)
{
    const unsigned k = t->bar_shift;
    const __m512i zero = _mm512_setzero_si512(), lo52 = _mm512_set1_epi64((1ll << 52) - 1);
    const __m512i q = _mm512_set1_epi64((long long)t->q);
    const __m512i mu = _mm512_set1_epi64((long long)t->bar_mu);
    const __m128i hi1 = _mm_cvtsi32_si128((int)(53 - k)), lo1 = _mm_cvtsi32_si128((int)(k - 1));
    const __m128i hi3 = _mm_cvtsi32_si128((int)(51 - k)), lo3 = _mm_cvtsi32_si128((int)(k + 1));
    __m512i top = zero;
    for (size_t j = 0; j < n; j += 8) {
        __m512i x = _mm512_loadu_si512(a + j), y = _mm512_loadu_si512(b + j);
        top = _mm512_max_epu64(top, _mm512_max_epu64(x, y));
        __m512i lo = _mm512_madd52lo_epu64(zero, x, y), hi = _mm512_madd52hi_epu64(zero, x, y);
        __m512i q1 = _mm512_or_si512(_mm512_sll_epi64(hi, hi1), _mm512_srl_epi64(lo, lo1));
        __m512i l3 = _mm512_madd52lo_epu64(zero, q1, mu), h3 = _mm512_madd52hi_epu64(zero, q1, mu);
        __m512i q3 = _mm512_or_si512(_mm512_sll_epi64(h3, hi3), _mm512_srl_epi64(l3, lo3));
        __m512i qq = _mm512_madd52lo_epu64(zero, q3, q);
        __m512i r = _mm512_and_si512(_mm512_sub_epi64(lo, qq), lo52);
        r = csub(csub(r, q), q);
        _mm512_storeu_si512(out + j, r);
    }
    return top_bad(top, q);
}
