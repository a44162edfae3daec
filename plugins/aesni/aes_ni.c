/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES-128 with AES-NI on xmm registers (compiled with -maes -msse4.1). One
 * aesenc has a latency of several cycles but more than one issues per cycle,
 * so every loop keeps W = 8 independent blocks in flight.
 */
#include "config.h"

#include <string.h>

#include <smmintrin.h>
#include <wmmintrin.h>

#include "plugins/aesni/aesni.h"
#include "plugins/common/dpf_walk.h"

#define W 8

static __m128i expand_step(__m128i k, __m128i g)
{
    g = _mm_shuffle_epi32(g, 0xff);
    k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
    k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
    k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
    return _mm_xor_si128(k, g);
}

/* aeskeygenassist takes its round constant as an immediate. */
#define EXPAND(i, rcon)                                                                    \
    do {                                                                                   \
        k = expand_step(k, _mm_aeskeygenassist_si128(k, rcon));                            \
        _mm_storeu_si128((__m128i *)(rk + 16 * (i)), k);                                   \
    } while (0)

static void expand(const uint8_t key[16], uint8_t rk[176])
{
    __m128i k = _mm_loadu_si128((const __m128i *)key);

    _mm_storeu_si128((__m128i *)rk, k);
    EXPAND(1, 0x01);
    EXPAND(2, 0x02);
    EXPAND(3, 0x04);
    EXPAND(4, 0x08);
    EXPAND(5, 0x10);
    EXPAND(6, 0x20);
    EXPAND(7, 0x40);
    EXPAND(8, 0x80);
    EXPAND(9, 0x1b);
    EXPAND(10, 0x36);
}

void aesni_sched_init(struct aesni_sched *ks, const uint8_t *keys, size_t m)
{
    memset(ks, 0, sizeof *ks);
    ks->m = m;
    for (size_t j = 0; j < m; j++)
        expand(keys + 16 * j, ks->rk[j]);
    for (size_t j = 0; j < m; j++)
        for (unsigned r = 0; r < 11; r++) {
            for (unsigned l = 0; l < 2; l++)
                memcpy(ks->rk2[j][r] + 16 * l, ks->rk[(j + l) % m] + 16 * r, 16);
            for (unsigned l = 0; l < 4; l++)
                memcpy(ks->rk4[j][r] + 16 * l, ks->rk[(j + l) % m] + 16 * r, 16);
        }
    for (unsigned c = 0; c < 16; c++)
        for (unsigned r = 0; r < 11; r++)
            for (unsigned l = 0; l < 4; l++) {
                const uint8_t *src = ks->rk[((c >> l) & 1u) % m] + 16 * r;
                memcpy(ks->sel4[c][r] + 16 * l, src, 16);
                if (c < 4 && l < 2)
                    memcpy(ks->sel2[c][r] + 16 * l, src, 16);
            }
}

static inline __m128i ld(const uint8_t *p)
{
    return _mm_loadu_si128((const __m128i *)p);
}

static inline void st(uint8_t *p, __m128i v)
{
    _mm_storeu_si128((__m128i *)p, v);
}

static inline void load_keys(const uint8_t *rk, __m128i k[11])
{
    for (unsigned r = 0; r < 11; r++)
        k[r] = ld(rk + 16 * r);
}

/* W blocks under one key. */
static inline void enc_w(__m128i b[W], const __m128i k[11])
{
#pragma GCC unroll 8
    for (unsigned i = 0; i < W; i++)
        b[i] = _mm_xor_si128(b[i], k[0]);
    for (unsigned r = 1; r < 10; r++) {
#pragma GCC unroll 8
        for (unsigned i = 0; i < W; i++)
            b[i] = _mm_aesenc_si128(b[i], k[r]);
    }
#pragma GCC unroll 8
    for (unsigned i = 0; i < W; i++)
        b[i] = _mm_aesenclast_si128(b[i], k[10]);
}

/* W blocks, block i under the schedule at kp[i]. */
static inline void enc_w_lanes(__m128i b[W], const uint8_t *const kp[W])
{
#pragma GCC unroll 8
    for (unsigned i = 0; i < W; i++)
        b[i] = _mm_xor_si128(b[i], ld(kp[i]));
    for (unsigned r = 1; r < 10; r++) {
#pragma GCC unroll 8
        for (unsigned i = 0; i < W; i++)
            b[i] = _mm_aesenc_si128(b[i], ld(kp[i] + 16 * r));
    }
#pragma GCC unroll 8
    for (unsigned i = 0; i < W; i++)
        b[i] = _mm_aesenclast_si128(b[i], ld(kp[i] + 160));
}

static void ni_ecb(const struct aesni_sched *ks, size_t j, const uint8_t *in, uint8_t *out,
                   size_t n)
{
    __m128i k[11], b[W];
    size_t i = 0;

    load_keys(ks->rk[j], k);
    for (; i + W <= n; i += W) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < W; l++)
            b[l] = ld(in + 16 * (i + l));
        enc_w(b, k);
#pragma GCC unroll 8
        for (unsigned l = 0; l < W; l++)
            st(out + 16 * (i + l), b[l]);
    }
    if (i < n) {
        size_t rem = n - i;
#pragma GCC unroll 8
        for (unsigned l = 0; l < W; l++)
            b[l] = l < rem ? ld(in + 16 * (i + l)) : _mm_setzero_si128();
        enc_w(b, k);
#pragma GCC unroll 8
        for (unsigned l = 0; l < W; l++)
            if (l < rem)
                st(out + 16 * (i + l), b[l]);
    }
}

/* The counter block is a 64-bit lane plus a zero lane, so the vector add
 * wraps mod 2^64 exactly as the stream definition does. */
static void ni_ctr(const struct aesni_sched *ks, size_t j, uint64_t c0, uint8_t *out, size_t n)
{
    __m128i k[11], b[W];
    __m128i ctr = _mm_set_epi64x(0, (long long)c0);
    const __m128i step = _mm_set_epi64x(0, W);
    size_t i = 0;

    load_keys(ks->rk[j], k);
    for (; i < n; i += W) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < W; l++)
            b[l] = _mm_add_epi64(ctr, _mm_set_epi64x(0, l));
        ctr = _mm_add_epi64(ctr, step);
        enc_w(b, k);
        if (n - i >= W) {
#pragma GCC unroll 8
            for (unsigned l = 0; l < W; l++)
                st(out + 16 * (i + l), b[l]);
        } else {
#pragma GCC unroll 8
            for (unsigned l = 0; l < W; l++)
                if (l < n - i)
                    st(out + 16 * (i + l), b[l]);
        }
    }
}

/* Output f = i*m + j is seed i under key j: W consecutive outputs are W
 * independent blocks whatever m is, so even m = 2 keeps W in flight. */
static void ni_mmo(const struct aesni_sched *ks, const uint8_t *seeds, uint8_t *out, size_t n)
{
    const size_t m = ks->m, total = n * m;
    const uint8_t *kp[W];
    __m128i b[W], s[W];
    size_t si = 0, kj = 0; /* seed and key of output f */

    for (size_t f = 0; f < total; f += W) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < W; l++) {
            /* Lanes past the end encrypt seed 0 and are never stored. */
            size_t idx = f + l < total ? si : 0;
            kp[l] = ks->rk[kj];
            s[l] = ld(seeds + 16 * idx);
            b[l] = s[l];
            if (++kj == m) {
                kj = 0;
                si++;
            }
        }
        enc_w_lanes(b, kp);
        if (total - f >= W) {
#pragma GCC unroll 8
            for (unsigned l = 0; l < W; l++)
                st(out + 16 * (f + l), _mm_xor_si128(b[l], s[l]));
        } else {
#pragma GCC unroll 8
            for (unsigned l = 0; l < W; l++)
                if (l < total - f)
                    st(out + 16 * (f + l), _mm_xor_si128(b[l], s[l]));
        }
    }
}

/* All-ones in every byte of a node's block when its t-bit is set. */
static inline __m128i tmask(__m128i x)
{
    __m128i t = _mm_srai_epi32(_mm_slli_epi32(x, 31), 31);
    return _mm_shuffle_epi32(t, 0xff);
}

static inline __m128i clr_t(__m128i x)
{
    return _mm_andnot_si128(_mm_set_epi32(1, 0, 0, 0), x);
}

static void ni_dpf_expand(const struct aesni_sched *ks, const uint8_t *parents,
                          uint8_t *children, size_t n, const uint8_t cw[2][16])
{
    const __m128i cwv[2] = {ld(cw[0]), ld(cw[1])};
    const uint8_t *kp[W];
    __m128i b[W], s[W], tm[W / 2];

    for (unsigned l = 0; l < W; l++)
        kp[l] = ks->rk[l & 1u];
    for (size_t p = 0; p < n; p += W / 2) {
        size_t cnt = n - p < W / 2 ? n - p : W / 2;
#pragma GCC unroll 4
        for (unsigned q = 0; q < W / 2; q++) {
            __m128i x = ld(parents + 16 * (p + (q < cnt ? q : 0)));
            tm[q] = tmask(x);
            s[2 * q] = s[2 * q + 1] = b[2 * q] = b[2 * q + 1] = clr_t(x);
        }
        enc_w_lanes(b, kp);
#pragma GCC unroll 8
        for (unsigned l = 0; l < W; l++)
            b[l] = _mm_xor_si128(_mm_xor_si128(b[l], s[l]),
                                 _mm_and_si128(cwv[l & 1u], tm[l / 2]));
#pragma GCC unroll 4
        for (unsigned q = 0; q < W / 2; q++)
            if (q < cnt) {
                st(children + 32 * (p + q), b[2 * q]);
                st(children + 32 * (p + q) + 16, b[2 * q + 1]);
            }
    }
}

static void ni_dpf_step(const struct aesni_sched *ks, uint8_t *nodes, const uint8_t *dir,
                        const uint8_t *cw, size_t n)
{
    const uint8_t *kp[W];
    __m128i b[W], s[W], tm[W];

    for (size_t i = 0; i < n; i += W) {
        size_t cnt = n - i < W ? n - i : W;
#pragma GCC unroll 8
        for (unsigned l = 0; l < W; l++) {
            size_t idx = i + (l < cnt ? l : 0);
            __m128i x = ld(nodes + 16 * idx);
            kp[l] = ks->rk[dir[idx] & 1u];
            tm[l] = tmask(x);
            s[l] = b[l] = clr_t(x);
        }
        enc_w_lanes(b, kp);
#pragma GCC unroll 8
        for (unsigned l = 0; l < W; l++)
            if (l < cnt)
                st(nodes + 16 * (i + l),
                   _mm_xor_si128(_mm_xor_si128(b[l], s[l]),
                                 _mm_and_si128(ld(cw + 16 * (i + l)), tm[l])));
    }
}

/* The leaf's output, out of line: with the node's bytes in a buffer of
 * the walk itself, GCC made that buffer the node's home through every
 * level (a store and a reload on each level's chain). */
static __attribute__((noinline)) void walk1_leaf(unsigned what,
                                                 const struct mpce_dpf_key_v1 *key, __m128i x,
                                                 uint8_t *out)
{
    uint8_t node[16];

    st(node, x);
    mpce_dpf__leaf(what, key, node, out);
}

/* Only kernels of CPUs with AVX name this as their dpf_walk1 (aesni.h):
 * its three-operand forms let the node stay in a register from level to
 * level, where SSE's two-operand ones made GCC reload it from the stack
 * (a store forward on every level's chain, a quarter of the walk). */
#if defined(__GNUC__)
__attribute__((target("avx")))
#endif
void aesni_dpf_walk1(const struct aesni_sched *ks, const struct mpce_dpf_key_v1 *key,
                     uint64_t point, unsigned depth, unsigned what, uint8_t *out)
{
    __m128i k[2][11];
    uint64_t tr;

    load_keys(ks->rk[0], k[0]);
    load_keys(ks->rk[1], k[1]);
    memcpy(&tr, key->cw_tr, 8);
    /* The root: the seed with the party as its control bit. */
    __m128i x = _mm_or_si128(clr_t(ld(key->seed)),
                             _mm_set_epi32((int)(key->party & 1u), 0, 0, 0));
    /* The correction is built in registers from the key (no byte stores
     * to reload as a block, which the store buffer cannot forward). */
    for (unsigned i = 0; i < depth; i++) {
        /* The direction is the point's bit: public, so it may pick the
         * round keys by branch and index. */
        const unsigned dir = (unsigned)(point >> (depth - 1u - i)) & 1u;
        const __m128i *rk = k[dir];
        /* Side dir's correction: cw_s[i] holds tLCW in its t-bit; going
         * right, tRCW (bit i of cw_tr) replaces it. */
        const __m128i cws = ld(key->cw_s[i]);
        const uint32_t tl = (uint32_t)_mm_extract_epi32(cws, 3) & 1u;
        const uint32_t flip = (tl ^ (uint32_t)(tr >> i)) & 1u & (0u - dir);
        const __m128i cw = _mm_xor_si128(cws, _mm_set_epi32((int)flip, 0, 0, 0));
        const __m128i s = clr_t(x), tm = tmask(x);
        __m128i b = _mm_xor_si128(s, rk[0]);
        /* aesenclast ends with an XOR of its key: MMO's feed-forward and
         * the correction ride in it, off the chain of rounds that is the
         * walk's whole latency. */
        const __m128i last = _mm_xor_si128(rk[10], _mm_xor_si128(s, _mm_and_si128(cw, tm)));
#pragma GCC unroll 9
        for (unsigned r = 1; r < 10; r++)
            b = _mm_aesenc_si128(b, rk[r]);
        x = _mm_aesenclast_si128(b, last);
    }
    if (what == AESNI_DPF_NODES)
        st(out, x);
    else
        walk1_leaf(what, key, x, out);
}

const struct aesni_aes_kernel aesni_kernel_ni = {
    .name = "aes-ni",
    .ecb = ni_ecb,
    .ctr = ni_ctr,
    .mmo = ni_mmo,
    .dpf_expand = ni_dpf_expand,
    .dpf_step = ni_dpf_step,
};
