/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES-128 with VAES on ymm registers (compiled with -mvaes -mavx2 -maes):
 * two blocks per register, 8 registers (16 blocks) in flight. Round keys
 * come from the schedule's lane layouts (rk2, sel2) as memory operands or
 * are broadcast once per call; nothing is re-expanded. The loops are
 * aes_vaes_body.h's; this file gives them ymm operations.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include <immintrin.h>

#include "plugins/aesni/aesni.h"

typedef __m256i vec;
#define LANES 2
#define KW 32
#define RK_LANES rk2
#define SEL_LANES sel2

/* How many of register l's two blocks are among the first cnt: AVX2's
 * masked stores are slow, so a partial register goes out as an xmm half. */
typedef size_t vmask;

static inline vmask lanes(size_t cnt, unsigned l)
{
    size_t have = cnt > 2u * l ? cnt - 2u * l : 0;
    return have < 2 ? have : 2;
}

static inline __m256i ld(const uint8_t *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}

static inline void st(uint8_t *p, __m256i v)
{
    _mm256_storeu_si256((__m256i *)p, v);
}

static inline __m256i ldm(const uint8_t *p, vmask have)
{
    if (have >= 2)
        return ld(p);
    if (have == 1)
        return _mm256_set_m128i(_mm_setzero_si128(), _mm_loadu_si128((const __m128i *)p));
    return _mm256_setzero_si256();
}

static inline void stm(uint8_t *p, vmask have, __m256i v)
{
    if (have >= 2)
        st(p, v);
    else if (have == 1)
        _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(v));
}

static inline __m256i ld_key(const uint8_t *p)
{
    return _mm256_load_si256((const __m256i *)p);
}

static inline __m256i bcast_block(const uint8_t *p)
{
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p));
}

static inline __m256i vxor(__m256i a, __m256i b)
{
    return _mm256_xor_si256(a, b);
}

static inline __m256i vadd64(__m256i a, __m256i b)
{
    return _mm256_add_epi64(a, b);
}

static inline __m256i aesenc(__m256i a, __m256i k)
{
    return _mm256_aesenc_epi128(a, k);
}

static inline __m256i aesenclast(__m256i a, __m256i k)
{
    return _mm256_aesenclast_epi128(a, k);
}

static inline __m256i ctr_first(uint64_t c0)
{
    return _mm256_set_epi64x(0, (long long)(c0 + 1u), 0, (long long)c0);
}

static inline __m256i ctr_splat(uint64_t x)
{
    return _mm256_set_epi64x(0, (long long)x, 0, (long long)x);
}

static inline __m256i ld_blocks(const uint8_t *const p[2])
{
    return _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p[0])),
        _mm_loadu_si128((const __m128i *)p[1]), 1);
}

/* One seed per register: a missing one reads `safe` instead (a pointer
 * select, no branch). */
static inline __m256i dup_seeds(const uint8_t *p, const uint8_t *safe, size_t have)
{
    return bcast_block(have ? p : safe);
}

static inline __m256i tmask(__m256i x)
{
    __m256i t = _mm256_srai_epi32(_mm256_slli_epi32(x, 31), 31);
    return _mm256_shuffle_epi32(t, 0xff);
}

static inline __m256i clr_t(__m256i x)
{
    return _mm256_andnot_si256(_mm256_set_epi32(1, 0, 0, 0, 1, 0, 0, 0), x);
}

static inline __m256i xor_and(__m256i a, __m256i c, __m256i m)
{
    return _mm256_xor_si256(a, _mm256_and_si256(c, m));
}

static inline __m256i bcast_cw_pair(const uint8_t cw[2][16])
{
    return ld(cw[0]);
}

#include "plugins/aesni/aes_vaes_body.h"

const struct aesni_aes_kernel aesni_kernel_vaes256 = {
    .name = "vaes-ymm",
    .ecb = vaes_ecb,
    .ctr = vaes_ctr,
    .mmo = vaes_mmo,
    .dpf_expand = vaes_dpf_expand,
    .dpf_step = vaes_dpf_step,
};
