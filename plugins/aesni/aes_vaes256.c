/*
 * AES-128 with VAES on ymm registers (compiled with -mvaes -mavx2 -maes):
 * two blocks per register, R = 8 registers (16 blocks) in flight. Round keys
 * come from the schedule's lane layouts (rk2, sel2) as memory operands or
 * are broadcast once per call; nothing is re-expanded.
 */
#include "config.h"

#include <string.h>

#include <immintrin.h>

#include "plugins/aesni/aesni.h"

#define R 8
#define B (2 * R) /* blocks per iteration */

static inline __m256i ld(const uint8_t *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}

static inline void st(uint8_t *p, __m256i v)
{
    _mm256_storeu_si256((__m256i *)p, v);
}

static inline __m256i ld2(const uint8_t *lo, const uint8_t *hi)
{
    return _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)lo)),
        _mm_loadu_si128((const __m128i *)hi), 1);
}

static inline void bcast_keys(const uint8_t *rk, __m256i k[11])
{
    for (unsigned r = 0; r < 11; r++)
        k[r] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(rk + 16 * r)));
}

static inline void load_keys(const uint8_t (*rk)[32], __m256i k[11])
{
    for (unsigned r = 0; r < 11; r++)
        k[r] = _mm256_load_si256((const __m256i *)rk[r]);
}

static inline void enc_r(__m256i b[R], const __m256i k[11])
{
#pragma GCC unroll 8
    for (unsigned i = 0; i < R; i++)
        b[i] = _mm256_xor_si256(b[i], k[0]);
    for (unsigned r = 1; r < 10; r++) {
#pragma GCC unroll 8
        for (unsigned i = 0; i < R; i++)
            b[i] = _mm256_aesenc_epi128(b[i], k[r]);
    }
#pragma GCC unroll 8
    for (unsigned i = 0; i < R; i++)
        b[i] = _mm256_aesenclast_epi128(b[i], k[10]);
}

/* Register i under the lane-laid round keys kp[i] (11 x 32 bytes). */
static inline void enc_r_lanes(__m256i b[R], const uint8_t (*const kp[R])[32])
{
#pragma GCC unroll 8
    for (unsigned i = 0; i < R; i++)
        b[i] = _mm256_xor_si256(b[i], _mm256_load_si256((const __m256i *)kp[i][0]));
    for (unsigned r = 1; r < 10; r++) {
#pragma GCC unroll 8
        for (unsigned i = 0; i < R; i++)
            b[i] = _mm256_aesenc_epi128(b[i], _mm256_load_si256((const __m256i *)kp[i][r]));
    }
#pragma GCC unroll 8
    for (unsigned i = 0; i < R; i++)
        b[i] = _mm256_aesenclast_epi128(b[i], _mm256_load_si256((const __m256i *)kp[i][10]));
}

static void v2_ecb(const struct aesni_sched *ks, size_t j, const uint8_t *in, uint8_t *out,
                   size_t n)
{
    __m256i k[11], b[R];
    size_t i = 0;

    bcast_keys(ks->rk[j], k);
    for (; i + B <= n; i += B) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = ld(in + 16 * (i + 2 * l));
        enc_r(b, k);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            st(out + 16 * (i + 2 * l), b[l]);
    }
    if (i < n) {
        uint8_t buf[16 * B];
        size_t rem = n - i;
        memcpy(buf, in + 16 * i, 16 * rem);
        memset(buf + 16 * rem, 0, sizeof buf - 16 * rem);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = ld(buf + 32 * l);
        enc_r(b, k);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            st(buf + 32 * l, b[l]);
        memcpy(out + 16 * i, buf, 16 * rem);
    }
}

/* Counter lanes are 64-bit words beside zero words: the adds wrap mod 2^64. */
static void v2_ctr(const struct aesni_sched *ks, size_t j, uint64_t c0, uint8_t *out, size_t n)
{
    __m256i k[11], b[R];
    __m256i ctr = _mm256_set_epi64x(0, (long long)(c0 + 1u), 0, (long long)c0);
    const __m256i step = _mm256_set_epi64x(0, B, 0, B);

    bcast_keys(ks->rk[j], k);
    for (size_t i = 0; i < n; i += B) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = _mm256_add_epi64(ctr, _mm256_set_epi64x(0, 2 * l, 0, 2 * l));
        ctr = _mm256_add_epi64(ctr, step);
        enc_r(b, k);
        if (n - i >= B) {
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                st(out + 16 * (i + 2 * l), b[l]);
        } else {
            uint8_t buf[16 * B];
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                st(buf + 32 * l, b[l]);
            memcpy(out + 16 * i, buf, 16 * (n - i));
        }
    }
}

/* Store the first `cnt` blocks of R registers (cnt < B) through a buffer. */
static inline void store_part(uint8_t *out, const __m256i b[R], size_t cnt)
{
    uint8_t buf[16 * B];
#pragma GCC unroll 8
    for (unsigned l = 0; l < R; l++)
        st(buf + 32 * l, b[l]);
    memcpy(out, buf, 16 * cnt);
}

/* m = 2, the DPF shape: register l is seed l under (k0, k1), its two
 * outputs adjacent, so the lane keys stay in registers. */
static void mmo_m2(const struct aesni_sched *ks, const uint8_t *seeds, uint8_t *out, size_t n)
{
    __m256i k[11], b[R], s[R];

    load_keys(ks->rk2[0], k);
    for (size_t i = 0; i < n; i += R) {
        size_t cnt = n - i < R ? n - i : R;
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = s[l] = _mm256_broadcastsi128_si256(
                _mm_loadu_si128((const __m128i *)(seeds + 16 * (i + (l < cnt ? l : 0)))));
        enc_r(b, k);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = _mm256_xor_si256(b[l], s[l]);
        if (cnt == R) {
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                st(out + 32 * (i + l), b[l]);
        } else {
            store_part(out + 32 * i, b, 2 * cnt);
        }
    }
}

/* Any m: output f = i*m + j is seed i under key j; register l holds outputs
 * f+2l and f+2l+1, whose lane keys are rk2[(f+2l) mod m]. */
static void v2_mmo(const struct aesni_sched *ks, const uint8_t *seeds, uint8_t *out, size_t n)
{
    const size_t m = ks->m, total = n * m;
    const uint8_t (*kp[R])[32];
    __m256i b[R], s[R];
    size_t si = 0, kj = 0;

    if (m == 2) {
        mmo_m2(ks, seeds, out, n);
        return;
    }
    for (size_t f = 0; f < total; f += B) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++) {
            const uint8_t *p[2];
            kp[l] = ks->rk2[kj];
            for (unsigned h = 0; h < 2; h++) {
                /* Lanes past the end read seed 0 and are never stored. */
                p[h] = seeds + 16 * (f + 2 * l + h < total ? si : 0);
                if (++kj == m) {
                    kj = 0;
                    si++;
                }
            }
            b[l] = s[l] = ld2(p[0], p[1]);
        }
        enc_r_lanes(b, kp);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = _mm256_xor_si256(b[l], s[l]);
        if (total - f >= B) {
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                st(out + 16 * (f + 2 * l), b[l]);
        } else {
            store_part(out + 16 * f, b, total - f);
        }
    }
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

/* The m = 2 mmo with the parent's control bit selecting the corrections. */
static void v2_dpf_expand(const struct aesni_sched *ks, const uint8_t *parents,
                          uint8_t *children, size_t n, const uint8_t cw[2][16])
{
    const __m256i cwv = ld(cw[0]);
    __m256i k[11], b[R], s[R], tm[R];

    load_keys(ks->rk2[0], k);
    for (size_t i = 0; i < n; i += R) {
        size_t cnt = n - i < R ? n - i : R;
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++) {
            __m256i x = _mm256_broadcastsi128_si256(
                _mm_loadu_si128((const __m128i *)(parents + 16 * (i + (l < cnt ? l : 0)))));
            tm[l] = tmask(x);
            b[l] = s[l] = clr_t(x);
        }
        enc_r(b, k);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = _mm256_xor_si256(_mm256_xor_si256(b[l], s[l]), _mm256_and_si256(cwv, tm[l]));
        if (cnt == R) {
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                st(children + 32 * (i + l), b[l]);
        } else {
            store_part(children + 32 * i, b, 2 * cnt);
        }
    }
}

static void v2_dpf_step(const struct aesni_sched *ks, uint8_t *nodes, const uint8_t *dir,
                        const uint8_t *cw, size_t n)
{
    const uint8_t (*kp[R])[32];
    __m256i b[R], s[R], tm[R];

    for (size_t i = 0; i < n; i += B) {
        size_t cnt = n - i < B ? n - i : B;
        uint8_t nb[16 * B], cb[16 * B];
        const uint8_t *np = nodes + 16 * i, *cp = cw + 16 * i;

        if (cnt < B) {
            memcpy(nb, np, 16 * cnt);
            memset(nb + 16 * cnt, 0, sizeof nb - 16 * cnt);
            memcpy(cb, cp, 16 * cnt);
            np = nb;
            cp = cb;
        }
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++) {
            unsigned d0 = 2 * l < cnt ? dir[i + 2 * l] & 1u : 0;
            unsigned d1 = 2 * l + 1 < cnt ? dir[i + 2 * l + 1] & 1u : 0;
            __m256i x = ld(np + 32 * l);
            kp[l] = ks->sel2[d0 | (d1 << 1)];
            tm[l] = tmask(x);
            b[l] = s[l] = clr_t(x);
        }
        enc_r_lanes(b, kp);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = _mm256_xor_si256(_mm256_xor_si256(b[l], s[l]),
                                    _mm256_and_si256(ld(cp + 32 * l), tm[l]));
        if (cnt == B) {
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                st(nodes + 16 * (i + 2 * l), b[l]);
        } else {
            store_part(nodes + 16 * i, b, cnt);
        }
    }
}

const struct aesni_aes_kernel aesni_kernel_vaes256 = {
    .name = "vaes-ymm",
    .ecb = v2_ecb,
    .ctr = v2_ctr,
    .mmo = v2_mmo,
    .dpf_expand = v2_dpf_expand,
    .dpf_step = v2_dpf_step,
};
