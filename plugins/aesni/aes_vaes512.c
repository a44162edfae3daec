/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES-128 with VAES on zmm registers (compiled with -mvaes -mavx512f
 * -mavx512bw -maes): four blocks per register, 8 registers (32 blocks) in
 * flight. The 32 zmm registers hold all 11 round keys beside the state.
 * Partial registers use 64-bit-lane masks (two per block): masked loads
 * never fault on the lanes they skip, so tails need no copies. The loops
 * shared with the ymm kernel are aes_vaes_body.h's; the fused DPF kernels
 * (leaf expansion, point walks) are zmm-only and live here.
 */
#include "config.h"

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "plugins/aesni/aesni.h"

typedef __m512i vec;
#define LANES 4
#define KW 64
#define RK_LANES rk4
#define SEL_LANES sel4

typedef __mmask8 vmask;

/* The 64-bit lanes of register l (blocks 4l .. 4l+3) among the first cnt
 * blocks. */
static inline vmask lanes(size_t cnt, unsigned l)
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

static inline __m512i ldm(const uint8_t *p, vmask m)
{
    return _mm512_maskz_loadu_epi64(m, (const void *)p);
}

static inline void stm(uint8_t *p, vmask m, __m512i v)
{
    _mm512_mask_storeu_epi64((void *)p, m, v);
}

static inline __m512i ld_key(const uint8_t *p)
{
    return _mm512_load_si512((const void *)p);
}

static inline __m512i bcast_block(const uint8_t *p)
{
    return _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)p));
}

static inline __m512i vxor(__m512i a, __m512i b)
{
    return _mm512_xor_si512(a, b);
}

static inline __m512i vadd64(__m512i a, __m512i b)
{
    return _mm512_add_epi64(a, b);
}

static inline __m512i aesenc(__m512i a, __m512i k)
{
    return _mm512_aesenc_epi128(a, k);
}

static inline __m512i aesenclast(__m512i a, __m512i k)
{
    return _mm512_aesenclast_epi128(a, k);
}

static inline __m512i ctr_first(uint64_t c0)
{
    return _mm512_set_epi64(0, (long long)(c0 + 3u), 0, (long long)(c0 + 2u), 0,
                            (long long)(c0 + 1u), 0, (long long)c0);
}

static inline __m512i ctr_splat(uint64_t x)
{
    return _mm512_set_epi64(0, (long long)x, 0, (long long)x, 0, (long long)x, 0, (long long)x);
}

static inline __m512i ld_blocks(const uint8_t *const p[4])
{
    __m512i v = _mm512_setzero_si512();

    for (unsigned h = 0; h < 4; h++)
        v = _mm512_mask_broadcast_i32x4(v, (__mmask16)(0xfu << (4 * h)),
                                        _mm_loadu_si128((const __m128i *)p[h]));
    return v;
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

/* Masked: missing seeds are never read, so `safe` is not needed. */
static inline __m512i dup_seeds(const uint8_t *p, const uint8_t *safe, size_t have)
{
    return dup_pairs(p, pair_mask(have));
}

/* The bits a node's t-bit occupies, one per block. */
static inline __m512i tbits(void)
{
    return _mm512_set_epi32(1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0);
}

static inline __m512i tmask(__m512i x)
{
    __m512i t = _mm512_srai_epi32(_mm512_slli_epi32(x, 31), 31);
    return _mm512_shuffle_epi32(t, (_MM_PERM_ENUM)0xff);
}

static inline __m512i clr_t(__m512i x)
{
    return _mm512_andnot_si512(tbits(), x);
}

static inline __m512i xor_and(__m512i a, __m512i c, __m512i m)
{
    return _mm512_ternarylogic_epi64(a, c, m, 0x78);
}

static inline __m512i bcast_cw_pair(const uint8_t cw[2][16])
{
    return _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)cw[0]));
}

#include "plugins/aesni/aes_vaes_body.h"

/* Leaf outputs of the four nodes of x: bytes, clr(x) ^ (t ? CW : 0); u64,
 * in the low word of each block, (lo(x) + (t ? CW : 0)) negated where neg
 * is all ones. */
static inline __m512i leaf_bytes(__m512i x, __m512i cwo)
{
    return xor_and(clr_t(x), cwo, tmask(x));
}

static inline __m512i leaf_u64(__m512i x, __m512i cwo, __m512i neg)
{
    __m512i y = _mm512_add_epi64(x, _mm512_and_si512(cwo, tmask(x)));
    /* The low words of the four blocks, packed into the low 256 bits. */
    y = _mm512_sub_epi64(_mm512_xor_si512(y, neg), neg);
    return _mm512_permutexvar_epi64(_mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0), y);
}

/* The first min(4, cnt - 4l) 64-bit lanes: u64 outputs 4l.. of cnt. */
static inline __mmask8 qlanes(size_t cnt, unsigned l)
{
    size_t have = cnt > 4u * l ? cnt - 4u * l : 0;
    return have >= 4 ? (__mmask8)0x0f : (__mmask8)((1u << have) - 1u);
}

/* The first `blocks` 16-byte blocks of y to 16-byte-aligned d, around the
 * caches. */
static inline void stream_blocks(uint8_t *d, __m512i y, unsigned blocks)
{
    _mm_stream_si128((__m128i *)d, _mm512_castsi512_si128(y));
    _mm_stream_si128((__m128i *)(d + 16), _mm512_extracti32x4_epi32(y, 1));
    if (blocks > 2) {
        _mm_stream_si128((__m128i *)(d + 32), _mm512_extracti32x4_epi32(y, 2));
        _mm_stream_si128((__m128i *)(d + 48), _mm512_extracti32x4_epi32(y, 3));
    }
}

/* group and nt are constants at each call: one loop each without tests. */
static inline __attribute__((always_inline)) void
expand_leaves_g(const struct aesni_sched *ks, const uint8_t *parents, uint8_t *out, size_t n,
                const uint8_t cw[2][16], const struct mpce_dpf_key_v1 *key, unsigned group,
                int nt)
{
    const __m512i cwv = bcast_cw_pair(cw);
    const __m512i cwo = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)key->cw_out));
    const __m512i neg = _mm512_set1_epi64(-(long long)(key->party & 1u));
    /* u64 outputs take half a register per two parents. */
    const size_t osz = group == 0 ? 32 : 16;
    __m512i k[11], b[R];

    load_keys(ks->rk4[0], k);
    for (size_t i = 0; i < n; i += 2 * R) {
        size_t cnt = n - i < 2 * R ? n - i : 2 * R;
        expand_r(k, parents, i, cnt, cwv, b);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = group == 0 ? leaf_bytes(b[l], cwo) : leaf_u64(b[l], cwo, neg);
        if (nt && cnt == 2 * R) {
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                stream_blocks(out + osz * (i + 2 * l), b[l], group == 0 ? 4 : 2);
        } else {
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                stm(out + osz * (i + 2 * l), group == 0 ? lanes(2 * cnt, l) : qlanes(2 * cnt, l),
                    b[l]);
        }
    }
}

static void v4_dpf_expand_leaves(const struct aesni_sched *ks, const uint8_t *parents,
                                 uint8_t *out, size_t n, const uint8_t cw[2][16],
                                 const struct mpce_dpf_key_v1 *key, unsigned group, int stream)
{
    if (stream && ((uintptr_t)out & 15u) == 0) {
        if (group == 0)
            expand_leaves_g(ks, parents, out, n, cw, key, 0, 1);
        else
            expand_leaves_g(ks, parents, out, n, cw, key, 1, 1);
        /* Streaming stores are weakly ordered: drain them before returning. */
        _mm_sfence();
    } else if (group == 0) {
        expand_leaves_g(ks, parents, out, n, cw, key, 0, 0);
    } else {
        expand_leaves_g(ks, parents, out, n, cw, key, 1, 0);
    }
}

/* The offset in sel4 of the round keys for the lane directions in a test
 * mask kd (both 64-bit lanes of block h set when lane h goes right). */
#define SEL_C(m) (((m) & 1u) | (((m) >> 1) & 2u) | (((m) >> 2) & 4u) | (((m) >> 3) & 8u))
#define SEL_O1(m) (uint16_t)(SEL_C(m) * sizeof(((const struct aesni_sched *)0)->sel4[0]))
#define SEL_O4(m) SEL_O1(m), SEL_O1((m) + 1u), SEL_O1((m) + 2u), SEL_O1((m) + 3u)
#define SEL_O16(m) SEL_O4(m), SEL_O4((m) + 4u), SEL_O4((m) + 8u), SEL_O4((m) + 12u)
#define SEL_O64(m) SEL_O16(m), SEL_O16((m) + 16u), SEL_O16((m) + 32u), SEL_O16((m) + 48u)
static const uint16_t sel_off[256] = {SEL_O64(0u), SEL_O64(64u), SEL_O64(128u), SEL_O64(192u)};

/* enc_r_lanes with the rounds unrolled too: a walk level is one chain of
 * rounds, with no other work to hide a loop's register copies behind. */
static inline void enc_r_lanes_full(__m512i b[R], const uint8_t (*const kp[R])[64])
{
    lanes_whiten(b, kp);
#pragma GCC unroll 9
    for (unsigned r = 1; r < 10; r++)
        lanes_round(b, kp, r);
    lanes_last(b, kp);
}

/* The 16 bytes at offset off of keys k[0..3], one block each. */
static inline __m512i gather4(const struct mpce_dpf_key_v1 *const k[4], size_t off)
{
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)((const uint8_t *)k[0] + off)));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)((const uint8_t *)k[1] + off)), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)((const uint8_t *)k[2] + off)), 2);
    return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)((const uint8_t *)k[3] + off)),
                              3);
}

/* Rows lev, lev+1 (lev <= 62) of the correction words of keys k[0..3],
 * one block per key: row0 holds row lev, row1 row lev+1. */
static inline void cw_rows2(const struct mpce_dpf_key_v1 *const k[4], unsigned lev,
                            __m512i *row0, __m512i *row1)
{
    __m512i ab = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)k[0]->cw_s[lev])),
        _mm256_loadu_si256((const __m256i *)k[1]->cw_s[lev]), 1);
    __m512i cd = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)k[2]->cw_s[lev])),
        _mm256_loadu_si256((const __m256i *)k[3]->cw_s[lev]), 1);

    *row0 = _mm512_shuffle_i64x2(ab, cd, _MM_SHUFFLE(2, 0, 2, 0));
    *row1 = _mm512_shuffle_i64x2(ab, cd, _MM_SHUFFLE(3, 1, 3, 1));
}

static inline uint64_t key_tr(const struct mpce_dpf_key_v1 *k)
{
    uint64_t v;

    memcpy(&v, k->cw_tr, 8);
    return v;
}

/* Where a walk's keys come from: keys[j * key_step] (one key when key_step
 * is 0), or keys first + j of a level-major batch. */
struct walk_src {
    const struct mpce_dpf_key_v1 *const *keys;
    size_t key_step;
    const struct mpce_dpf_batch_v1 *batch;
    size_t first;
};

/* Batch rows of keys j .. j + 3 (have of them, 1..4) as one register: 16
 * bytes per key, the lanes past `have` zero. */
static inline __m512i batch_row4(const uint8_t (*row)[16], size_t j, unsigned have)
{
    return ldm(row[j], have >= 4 ? (__mmask8)0xff : (__mmask8)((1u << (2 * have)) - 1u));
}

/*
 * Point walks key-major: B walks in flight through all levels, nodes in
 * registers. A lane's direction (public) picks its round keys from sel4 and
 * whether its correction takes tRCW: bit lev of the key's cw_tr words,
 * rotated into the t-bit, replaces tLCW under the direction mask. The two
 * key sources differ only in their loads and prefetches; `major` is a
 * constant at each caller, so each gets its own straight code.
 */
static inline __attribute__((always_inline)) void
walk_body(const struct aesni_sched *ks, const struct walk_src *src, const int major,
          const uint64_t *points, size_t n, unsigned depth, unsigned what, uint8_t *out)
{
    const __m512i tb = tbits();
    const size_t cw0 = offsetof(struct mpce_dpf_key_v1, cw_s);
    const struct mpce_dpf_batch_v1 *bt = src->batch;
    const size_t nk = major ? bt->nkeys : 0;

    for (size_t i = 0; i < n; i += B) {
        const size_t cnt = n - i < B ? n - i : B;
        const size_t j0 = major ? src->first + i : 0;
        const struct mpce_dpf_key_v1 *kp[B], *kn[B];
        const uint8_t (*kr[R])[64];
        unsigned have[R];
        __m512i x[R], pt[R], tr[R], b[R], sc[R], nxt[R];

        if (major) {
            /* The next walks' seeds, t and output corrections; their
             * correction rows are asked for level by level below. */
            const size_t jn = j0 + B < src->first + n ? j0 + B : j0;
            for (unsigned q = 0; q < B; q += 4) {
                __builtin_prefetch(bt->seed[jn + q < nk ? jn + q : jn], 0, 3);
                __builtin_prefetch(bt->cw_out[jn + q < nk ? jn + q : jn], 0, 3);
            }
            for (unsigned q = 0; q < B; q += 8)
                __builtin_prefetch(bt->cw_tr + (jn + q < nk ? jn + q : jn), 0, 3);
        } else {
            for (unsigned q = 0; q < B; q++) {
                kp[q] = src->keys[(i + (q < cnt ? q : 0)) * src->key_step];
                /* The next walks' keys (these again past the end): each
                 * level asks for one line of R of them, so that by the end
                 * all of their rows are on the way, with their t
                 * corrections and output words now. */
                kn[q] = src->keys[(i + B + q < n ? i + B + q : i) * src->key_step];
                __builtin_prefetch(kn[q]->cw_tr, 0, 3);
            }
        }
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++) {
            uint64_t p[4], t[4] = {0, 0, 0, 0}, par[4] = {0, 0, 0, 0};
            __m512i seed;
            have[l] = cnt > 4u * l ? (cnt - 4u * l < 4 ? (unsigned)(cnt - 4u * l) : 4u) : 0u;
            nxt[l] = _mm512_setzero_si512();
            for (unsigned h = 0; h < 4; h++)
                p[h] = h < have[l] ? points[i + 4 * l + h] : 0;
            if (major) {
                /* Lanes past the end read key j0 again: never outside the
                 * batch, their outputs masked off. */
                const size_t j = have[l] ? j0 + 4 * l : j0;
                for (unsigned h = 0; h < 4; h++)
                    if (h < have[l]) {
                        t[h] = bt->cw_tr[j + h];
                        par[h] = bt->party[j + h] & 1u;
                    }
                seed = batch_row4(bt->seed, j, have[l] ? have[l] : 1);
            } else {
                const struct mpce_dpf_key_v1 *const *k = kp + 4 * l;
                for (unsigned h = 0; h < 4; h++) {
                    t[h] = key_tr(k[h]);
                    par[h] = k[h]->party & 1u;
                }
                seed = gather4(k, offsetof(struct mpce_dpf_key_v1, seed));
            }
            pt[l] = _mm512_set_epi64((long long)p[3], (long long)p[3], (long long)p[2],
                                     (long long)p[2], (long long)p[1], (long long)p[1],
                                     (long long)p[0], (long long)p[0]);
            tr[l] = _mm512_set_epi64((long long)t[3], 0, (long long)t[2], 0, (long long)t[1], 0,
                                     (long long)t[0], 0);
            /* The root: the seed with the party as control bit. */
            x[l] = _mm512_or_si512(clr_t(seed),
                                   _mm512_set_epi64((long long)(par[3] << 32), 0,
                                                    (long long)(par[2] << 32), 0,
                                                    (long long)(par[1] << 32), 0,
                                                    (long long)(par[0] << 32), 0));
        }
        for (unsigned lev = 0; lev < depth; lev++) {
            const __m512i bit = _mm512_set1_epi64((long long)((uint64_t)1 << (depth - 1u - lev)));
            const __m512i rot = _mm512_set1_epi64((long long)((32u - lev) & 63u));
            const size_t off = cw0 + 16u * lev;
            const uint8_t (*row)[16] = major ? bt->cw_s + (size_t)lev * nk : NULL;
            __m512i one = _mm512_setzero_si512();

            if (!major && src->key_step == 0)
                one = _mm512_broadcast_i32x4(
                    _mm_loadu_si128((const __m128i *)((const uint8_t *)kp[0] + off)));
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++) {
                __mmask8 kd = _mm512_test_epi64_mask(pt[l], bit);
                __m512i cw = one;
                if (major) {
                    /* This level's row of the next walks' keys. */
                    const size_t jn = j0 + B + 4 * l;
                    if (jn < src->first + n)
                        __builtin_prefetch(row[jn], 0, 3);
                    cw = batch_row4(row, have[l] ? j0 + 4 * l : j0, have[l] ? have[l] : 1);
                } else {
                    __builtin_prefetch((const uint8_t *)kn[4 * l + (lev & 3u)] + 64u * (lev >> 2),
                                       0, 3);
                    if (src->key_step != 0 && (lev & 1u) == 0)
                        cw_rows2(kp + 4 * l, lev, &cw, &nxt[l]);
                    else if (src->key_step != 0)
                        cw = nxt[l];
                }
                kr[l] = (const uint8_t (*)[64])((const uint8_t *)ks->sel4 + sel_off[kd]);
                cw = _mm512_mask_ternarylogic_epi64(cw, kd, _mm512_rolv_epi64(tr[l], rot), tb,
                                                    0xd8);
                /* What the AES output is XORed with: the input, and the
                 * correction where the node's control bit is set. */
                __mmask16 kt = _mm512_test_epi32_mask(
                    _mm512_shuffle_epi32(x[l], (_MM_PERM_ENUM)0xff), _mm512_set1_epi32(1));
                b[l] = clr_t(x[l]);
                sc[l] = _mm512_mask_xor_epi32(b[l], kt, b[l], cw);
            }
            enc_r_lanes_full(b, kr);
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                x[l] = _mm512_xor_si512(b[l], sc[l]);
        }
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++) {
            __m512i cwo;
            if (what == AESNI_DPF_NODES) {
                stm(out + 16 * (i + 4 * l), lanes(cnt, l), x[l]);
                continue;
            }
            if (major)
                cwo = batch_row4(bt->cw_out, have[l] ? j0 + 4 * l : j0, have[l] ? have[l] : 1);
            else
                cwo = gather4(kp + 4 * l, offsetof(struct mpce_dpf_key_v1, cw_out));
            if (what == 0) {
                stm(out + 16 * (i + 4 * l), lanes(cnt, l), leaf_bytes(x[l], cwo));
            } else {
                uint64_t par[4] = {0, 0, 0, 0};
                for (unsigned h = 0; h < 4; h++)
                    if (major)
                        par[h] = h < have[l] ? bt->party[j0 + 4 * l + h] & 1u : 0u;
                    else
                        par[h] = kp[4 * l + h]->party & 1u;
                __m512i neg = _mm512_set_epi64(0, -(long long)par[3], 0, -(long long)par[2], 0,
                                               -(long long)par[1], 0, -(long long)par[0]);
                stm(out + 8 * (i + 4 * l), qlanes(cnt, l), leaf_u64(x[l], cwo, neg));
            }
        }
    }
}

static void v4_dpf_walk(const struct aesni_sched *ks, const struct mpce_dpf_key_v1 *const *keys,
                        size_t key_step, const uint64_t *points, size_t n, unsigned depth,
                        unsigned what, uint8_t *out)
{
    const struct walk_src src = {.keys = keys, .key_step = key_step};
    walk_body(ks, &src, 0, points, n, depth, what, out);
}

static void v4_dpf_walk_batch(const struct aesni_sched *ks, const struct mpce_dpf_batch_v1 *batch,
                              size_t first, const uint64_t *points, size_t n, unsigned depth,
                              unsigned what, uint8_t *out)
{
    const struct walk_src src = {.batch = batch, .first = first};
    walk_body(ks, &src, 1, points, n, depth, what, out);
}

const struct aesni_aes_kernel aesni_kernel_vaes512 = {
    .name = "vaes-zmm",
    .ecb = vaes_ecb,
    .ctr = vaes_ctr,
    .mmo = vaes_mmo,
    .dpf_expand = vaes_dpf_expand,
    .dpf_step = vaes_dpf_step,
    .dpf_expand_leaves = v4_dpf_expand_leaves,
    .dpf_walk = v4_dpf_walk,
    .dpf_walk1 = aesni_dpf_walk1,
    .dpf_walk_batch = v4_dpf_walk_batch,
};
