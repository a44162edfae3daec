/*
 * AES-128 with VAES on zmm registers (compiled with -mvaes -mavx512f
 * -mavx512bw -maes): four blocks per register, R = 8 registers (32 blocks)
 * in flight. The 32 zmm registers hold all 11 round keys beside the state.
 * Partial registers use 64-bit-lane masks (two per block): masked loads
 * never fault on the lanes they skip, so tails need no copies.
 */
#include "config.h"

#include <immintrin.h>

#include "plugins/aesni/aesni.h"

#define R 8
#define B (4 * R) /* blocks per iteration */

/* The 64-bit lanes of register l (blocks 4l .. 4l+3) among the first cnt
 * blocks. */
static inline __mmask8 lanes(size_t cnt, unsigned l)
{
    size_t have = cnt > 4u * l ? cnt - 4u * l : 0;
    return have >= 4 ? (__mmask8)0xff : (__mmask8)((1u << (2 * have)) - 1u);
}

static inline __m512i ld(const uint8_t *p)
{
    return _mm512_loadu_si512((const void *)p);
}

static inline void st(uint8_t *p, __m512i v)
{
    _mm512_storeu_si512((void *)p, v);
}

static inline __m512i ldm(const uint8_t *p, __mmask8 m)
{
    return _mm512_maskz_loadu_epi64(m, (const void *)p);
}

static inline void stm(uint8_t *p, __mmask8 m, __m512i v)
{
    _mm512_mask_storeu_epi64((void *)p, m, v);
}

static inline void bcast_keys(const uint8_t *rk, __m512i k[11])
{
    for (unsigned r = 0; r < 11; r++)
        k[r] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(rk + 16 * r)));
}

static inline void load_keys(const uint8_t (*rk)[64], __m512i k[11])
{
    for (unsigned r = 0; r < 11; r++)
        k[r] = _mm512_load_si512((const void *)rk[r]);
}

static inline void enc_r(__m512i b[R], const __m512i k[11])
{
#pragma GCC unroll 8
    for (unsigned i = 0; i < R; i++)
        b[i] = _mm512_xor_si512(b[i], k[0]);
    for (unsigned r = 1; r < 10; r++) {
#pragma GCC unroll 8
        for (unsigned i = 0; i < R; i++)
            b[i] = _mm512_aesenc_epi128(b[i], k[r]);
    }
#pragma GCC unroll 8
    for (unsigned i = 0; i < R; i++)
        b[i] = _mm512_aesenclast_epi128(b[i], k[10]);
}

static inline void enc_r_lanes(__m512i b[R], const uint8_t (*const kp[R])[64])
{
#pragma GCC unroll 8
    for (unsigned i = 0; i < R; i++)
        b[i] = _mm512_xor_si512(b[i], _mm512_load_si512((const void *)kp[i][0]));
    for (unsigned r = 1; r < 10; r++) {
#pragma GCC unroll 8
        for (unsigned i = 0; i < R; i++)
            b[i] = _mm512_aesenc_epi128(b[i], _mm512_load_si512((const void *)kp[i][r]));
    }
#pragma GCC unroll 8
    for (unsigned i = 0; i < R; i++)
        b[i] = _mm512_aesenclast_epi128(b[i], _mm512_load_si512((const void *)kp[i][10]));
}

static void v4_ecb(const struct aesni_sched *ks, size_t j, const uint8_t *in, uint8_t *out,
                   size_t n)
{
    __m512i k[11], b[R];
    size_t i = 0;

    bcast_keys(ks->rk[j], k);
    for (; i + B <= n; i += B) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = ld(in + 16 * (i + 4 * l));
        enc_r(b, k);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            st(out + 16 * (i + 4 * l), b[l]);
    }
    if (i < n) {
        size_t rem = n - i;
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = ldm(in + 16 * (i + 4 * l), lanes(rem, l));
        enc_r(b, k);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            stm(out + 16 * (i + 4 * l), lanes(rem, l), b[l]);
    }
}

/* Counter lanes are 64-bit words beside zero words: the adds wrap mod 2^64. */
static void v4_ctr(const struct aesni_sched *ks, size_t j, uint64_t c0, uint8_t *out, size_t n)
{
    __m512i k[11], b[R];
    __m512i ctr = _mm512_set_epi64(0, (long long)(c0 + 3u), 0, (long long)(c0 + 2u), 0,
                                   (long long)(c0 + 1u), 0, (long long)c0);
    const __m512i step = _mm512_set_epi64(0, B, 0, B, 0, B, 0, B);

    bcast_keys(ks->rk[j], k);
    for (size_t i = 0; i < n; i += B) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = _mm512_add_epi64(ctr, _mm512_set_epi64(0, 4 * l, 0, 4 * l, 0, 4 * l, 0, 4 * l));
        ctr = _mm512_add_epi64(ctr, step);
        enc_r(b, k);
        if (n - i >= B) {
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                st(out + 16 * (i + 4 * l), b[l]);
        } else {
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                stm(out + 16 * (i + 4 * l), lanes(n - i, l), b[l]);
        }
    }
}

/* Two consecutive seeds a, b as (a, a, b, b): the m = 2 lane layout. */
static inline __m512i dup_pairs(const uint8_t *p, __mmask8 m)
{
    __m512i v = _mm512_maskz_loadu_epi64(m, (const void *)p);
    return _mm512_shuffle_i64x2(v, v, _MM_SHUFFLE(1, 1, 0, 0));
}

/* Mask of the first `have` (0..2) seeds' 64-bit lanes of a 2-seed load. */
static inline __mmask8 pair_mask(size_t have)
{
    return have >= 2 ? (__mmask8)0x0f : (__mmask8)((1u << (2 * have)) - 1u);
}

/* m = 2, the DPF shape: register l holds seeds 2l, 2l+1 each under
 * (k0, k1), outputs in order, lane keys resident. */
static void mmo_m2(const struct aesni_sched *ks, const uint8_t *seeds, uint8_t *out, size_t n)
{
    __m512i k[11], b[R], s[R];

    load_keys(ks->rk4[0], k);
    for (size_t i = 0; i < n; i += 2 * R) {
        size_t cnt = n - i < 2 * R ? n - i : 2 * R;
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++) {
            size_t have = cnt > 2u * l ? cnt - 2u * l : 0;
            b[l] = s[l] = dup_pairs(seeds + 16 * (i + 2 * l), pair_mask(have));
        }
        enc_r(b, k);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = _mm512_xor_si512(b[l], s[l]);
        if (cnt == 2 * R) {
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                st(out + 32 * (i + 2 * l), b[l]);
        } else {
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                stm(out + 32 * (i + 2 * l), lanes(2 * cnt, l), b[l]);
        }
    }
}

static void mmo_m1(const struct aesni_sched *ks, const uint8_t *seeds, uint8_t *out, size_t n)
{
    __m512i k[11], b[R], s[R];

    bcast_keys(ks->rk[0], k);
    for (size_t i = 0; i < n; i += B) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = s[l] = ldm(seeds + 16 * (i + 4 * l), lanes(n - i, l));
        enc_r(b, k);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            stm(out + 16 * (i + 4 * l), lanes(n - i, l), _mm512_xor_si512(b[l], s[l]));
    }
}

/* Any m: output f = i*m + j is seed i under key j; register l holds outputs
 * f+4l .. f+4l+3, whose lane keys are rk4[(f+4l) mod m]. */
static void v4_mmo(const struct aesni_sched *ks, const uint8_t *seeds, uint8_t *out, size_t n)
{
    const size_t m = ks->m, total = n * m;
    const uint8_t (*kp[R])[64];
    __m512i b[R], s[R];
    size_t si = 0, kj = 0;

    if (m == 2) {
        mmo_m2(ks, seeds, out, n);
        return;
    }
    if (m == 1) {
        mmo_m1(ks, seeds, out, n);
        return;
    }
    for (size_t f = 0; f < total; f += B) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++) {
            __m512i v = _mm512_setzero_si512();
            kp[l] = ks->rk4[kj];
            for (unsigned h = 0; h < 4; h++) {
                /* Lanes past the end read seed 0 and are never stored. */
                const uint8_t *p = seeds + 16 * (f + 4 * l + h < total ? si : 0);
                v = _mm512_mask_broadcast_i32x4(v, (__mmask16)(0xfu << (4 * h)),
                                                _mm_loadu_si128((const __m128i *)p));
                if (++kj == m) {
                    kj = 0;
                    si++;
                }
            }
            b[l] = s[l] = v;
        }
        enc_r_lanes(b, kp);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            stm(out + 16 * (f + 4 * l), lanes(total - f, l), _mm512_xor_si512(b[l], s[l]));
    }
}

static inline __m512i tmask(__m512i x)
{
    __m512i t = _mm512_srai_epi32(_mm512_slli_epi32(x, 31), 31);
    return _mm512_shuffle_epi32(t, (_MM_PERM_ENUM)0xff);
}

static inline __m512i clr_t(__m512i x)
{
    return _mm512_andnot_si512(
        _mm512_set_epi32(1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0), x);
}

/* The m = 2 mmo with the parent's control bit selecting the corrections. */
static void v4_dpf_expand(const struct aesni_sched *ks, const uint8_t *parents,
                          uint8_t *children, size_t n, const uint8_t cw[2][16])
{
    const __m512i cwv =
        _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)cw[0]));
    __m512i k[11], b[R], s[R], tm[R];

    load_keys(ks->rk4[0], k);
    for (size_t i = 0; i < n; i += 2 * R) {
        size_t cnt = n - i < 2 * R ? n - i : 2 * R;
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++) {
            size_t have = cnt > 2u * l ? cnt - 2u * l : 0;
            __m512i x = dup_pairs(parents + 16 * (i + 2 * l), pair_mask(have));
            tm[l] = tmask(x);
            b[l] = s[l] = clr_t(x);
        }
        enc_r(b, k);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = _mm512_ternarylogic_epi64(_mm512_xor_si512(b[l], s[l]), cwv, tm[l], 0x78);
        if (cnt == 2 * R) {
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                st(children + 32 * (i + 2 * l), b[l]);
        } else {
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                stm(children + 32 * (i + 2 * l), lanes(2 * cnt, l), b[l]);
        }
    }
}

static void v4_dpf_step(const struct aesni_sched *ks, uint8_t *nodes, const uint8_t *dir,
                        const uint8_t *cw, size_t n)
{
    const uint8_t (*kp[R])[64];
    __m512i b[R], s[R], tm[R];

    for (size_t i = 0; i < n; i += B) {
        size_t cnt = n - i < B ? n - i : B;
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++) {
            unsigned c = 0;
            for (unsigned h = 0; h < 4; h++)
                if (4 * l + h < cnt)
                    c |= (dir[i + 4 * l + h] & 1u) << h;
            __m512i x = ldm(nodes + 16 * (i + 4 * l), lanes(cnt, l));
            kp[l] = ks->sel4[c];
            tm[l] = tmask(x);
            b[l] = s[l] = clr_t(x);
        }
        enc_r_lanes(b, kp);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++) {
            __mmask8 mk = lanes(cnt, l);
            __m512i c = ldm(cw + 16 * (i + 4 * l), mk);
            stm(nodes + 16 * (i + 4 * l), mk,
                _mm512_ternarylogic_epi64(_mm512_xor_si512(b[l], s[l]), c, tm[l], 0x78));
        }
    }
}

const struct aesni_aes_kernel aesni_kernel_vaes512 = {
    .name = "vaes-zmm",
    .ecb = v4_ecb,
    .ctr = v4_ctr,
    .mmo = v4_mmo,
    .dpf_expand = v4_dpf_expand,
    .dpf_step = v4_dpf_step,
};
