/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES-128 with the ARMv8 Crypto Extensions (compiled with
 * -march=armv8-a+crypto; called only after the HWCAP probe found AES).
 * AESE does AddRoundKey, SubBytes and ShiftRows, AESMC MixColumns, so a
 * round is one AESE+AESMC pair, which every core since Cortex-A57 fuses;
 * the pair has a latency of 2-4 cycles and two or four issue per cycle
 * (Neoverse N1: 2, V1/V2 and Apple M1+: 4), so W independent blocks must be
 * in flight to keep the units busy: 8 covers Neoverse N1/V1/V2 (latency
 * 2-3 x issue 2-4), and 8 blocks plus 11 round keys still fit the 32
 * vector registers without spills; Apple M1's 3 x 4 would want 12 (see
 * README), which would spill here. No table lookups: constant time.
 */
#include "config.h"

#include <string.h>

/* The Crypto Extension for this file whatever -march the user's CFLAGS
 * give (automake puts them after ours, and a distribution's
 * -march=armv8-a would otherwise take +crypto away); the probe decides
 * at run time whether these functions are called. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC target("+crypto")
#endif
#include <arm_neon.h>

/* clang gates the AES intrinsics' declarations on the target itself, so a
 * pragma cannot add them: a CFLAGS -march without +crypto, which automake
 * puts after the plugin's own, takes them away. Say so, rather than fail
 * on the first intrinsic. */
#if defined(__clang__) && !defined(__ARM_FEATURE_AES) && !defined(__ARM_FEATURE_CRYPTO)
#error "plugins/neon/aes_ce.c needs the Crypto Extensions: an -march in CFLAGS without +crypto overrides the plugin's -march=armv8-a+crypto under clang; add +crypto to it, drop it, or configure --disable-neon"
#endif
/* The counter block and the DPF node's t-bit lane are laid out for a
 * little-endian core (configure builds this only for aarch64, not
 * aarch64_be). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "plugins/neon/aes_ce.c assumes a little-endian AArch64 core"
#endif

#include "plugins/common/key_state.h"
#include "plugins/neon/neon.h"

#define W NEON_AES_WIDTH

_Static_assert(W == 8, "the unrolled loops below are written for 8 lanes");

static inline uint8x16_t ld(const uint8_t *p)
{
    return vld1q_u8(p);
}

static inline void st(uint8_t *p, uint8x16_t v)
{
    vst1q_u8(p, v);
}

/* SubWord(w): AESE with a zero round key is SubBytes(ShiftRows(state)),
 * and ShiftRows only permutes columns, which are all w here. Constant
 * time, unlike a table S-box on the (secret) key. */
static inline uint32_t sub_word(uint32_t w)
{
    uint8x16_t s = vreinterpretq_u8_u32(vdupq_n_u32(w));
    s = vaeseq_u8(s, vdupq_n_u8(0));
    return vgetq_lane_u32(vreinterpretq_u32_u8(s), 0);
}

static void expand(const uint8_t key[16], uint8_t rk[176])
{
    static const uint8_t rcon[10] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36};
    uint32_t w[44];

    /* FIPS-197 5.2 on little-endian words: byte 0 of a word is its low
     * byte, so RotWord is a right rotation and Rcon goes in the low byte. */
    memcpy(w, key, 16);
    for (unsigned i = 4; i < 44; i++) {
        uint32_t t = w[i - 1];
        if (i % 4 == 0)
            t = sub_word((t >> 8) | (t << 24)) ^ rcon[i / 4 - 1];
        w[i] = w[i - 4] ^ t;
    }
    memcpy(rk, w, 176);
    mpce_wipe(w, sizeof(w)); /* the words are key material */
}

void neon_sched_init(struct neon_sched *ks, const uint8_t *keys, size_t m)
{
    memset(ks, 0, sizeof *ks);
    ks->m = m;
    for (size_t j = 0; j < m; j++)
        expand(keys + 16 * j, ks->rk[j]);
}

static inline void load_keys(const uint8_t *rk, uint8x16_t k[11])
{
    for (unsigned r = 0; r < 11; r++)
        k[r] = ld(rk + 16 * r);
}

/* One block. */
static inline uint8x16_t enc1(uint8x16_t x, const uint8x16_t k[11])
{
    for (unsigned r = 0; r < 9; r++)
        x = vaesmcq_u8(vaeseq_u8(x, k[r]));
    return veorq_u8(vaeseq_u8(x, k[9]), k[10]);
}

/* W blocks under one key held in registers. Round-major so that the W
 * AESE/AESMC pairs of a round are independent and issue back to back. */
static inline void enc_w(uint8x16_t b[W], const uint8x16_t k[11])
{
#pragma GCC unroll 9
    for (unsigned r = 0; r < 9; r++) {
#pragma GCC unroll 8
        for (unsigned i = 0; i < W; i++)
            b[i] = vaesmcq_u8(vaeseq_u8(b[i], k[r]));
    }
#pragma GCC unroll 8
    for (unsigned i = 0; i < W; i++)
        b[i] = veorq_u8(vaeseq_u8(b[i], k[9]), k[10]);
}

/* W blocks, block i under the schedule at kp[i]: the round keys come from
 * memory (L1, two or three loads per cycle), as 8 lanes of different keys
 * would not fit the register file. */
static inline void enc_w_lanes(uint8x16_t b[W], const uint8_t *const kp[W])
{
    for (unsigned r = 0; r < 9; r++) {
#pragma GCC unroll 8
        for (unsigned i = 0; i < W; i++)
            b[i] = vaesmcq_u8(vaeseq_u8(b[i], ld(kp[i] + 16 * r)));
    }
#pragma GCC unroll 8
    for (unsigned i = 0; i < W; i++)
        b[i] = veorq_u8(vaeseq_u8(b[i], ld(kp[i] + 144)), ld(kp[i] + 160));
}

/* W blocks, the even lanes under k0 and the odd ones under k1, both
 * schedules held in registers: 22 round keys and 8 blocks are 30 of the
 * 32 vector registers, so callers reload what they XOR in afterwards (a
 * seed, a parent) rather than keep it live. This is the two-key shape of
 * the hot loops: mmo with m = 2 (Ferret's and the DPF's G) and the DPF
 * tree's expansion (kL, kR); enc_w_lanes would load 8 round keys a round
 * from L1, which binds before the AES units do on V1/V2. */
static inline void enc_w_pair(uint8x16_t b[W], const uint8x16_t k0[11], const uint8x16_t k1[11])
{
#pragma GCC unroll 9
    for (unsigned r = 0; r < 9; r++) {
#pragma GCC unroll 4
        for (unsigned q = 0; q < W / 2; q++) {
            b[2 * q] = vaesmcq_u8(vaeseq_u8(b[2 * q], k0[r]));
            b[2 * q + 1] = vaesmcq_u8(vaeseq_u8(b[2 * q + 1], k1[r]));
        }
    }
#pragma GCC unroll 4
    for (unsigned q = 0; q < W / 2; q++) {
        b[2 * q] = veorq_u8(vaeseq_u8(b[2 * q], k0[9]), k0[10]);
        b[2 * q + 1] = veorq_u8(vaeseq_u8(b[2 * q + 1], k1[9]), k1[10]);
    }
}

/* LE64(c) || 0^64: on a little-endian core, lane 0 of a 64-bit vector. */
static inline uint8x16_t ctr_block(uint64_t c)
{
    return vreinterpretq_u8_u64(vcombine_u64(vcreate_u64(c), vcreate_u64(0)));
}

/* Block i of a one-key stream: in[i] (ecb, mmo) or the counter block
 * c0 + i, which wraps mod 2^64 as the SPEC's counter does (ctr, in NULL). */
static inline uint8x16_t block_in(const uint8_t *in, uint64_t c0, size_t i)
{
    return in ? ld(in + 16 * i) : ctr_block(c0 + i);
}

/* n blocks under the key in k, W at a time through enc_w and the tail one
 * by one; with feed_forward each output is XORed with its input (mmo of
 * one key). ecb, ctr and mmo share this loop; inlined with constant in and
 * feed_forward, each is its own straight loop. */
static inline void one_key(const uint8x16_t k[11], const uint8_t *in, uint64_t c0, int feed_forward,
                           uint8_t *out, size_t n)
{
    uint8x16_t b[W], s[W];
    size_t i = 0;

    for (; i + W <= n; i += W) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < W; l++)
            s[l] = b[l] = block_in(in, c0, i + l);
        enc_w(b, k);
#pragma GCC unroll 8
        for (unsigned l = 0; l < W; l++)
            st(out + 16 * (i + l), feed_forward ? veorq_u8(b[l], s[l]) : b[l]);
    }
    for (; i < n; i++) {
        const uint8x16_t x = block_in(in, c0, i), y = enc1(x, k);
        st(out + 16 * i, feed_forward ? veorq_u8(y, x) : y);
    }
}

void neon_aes_ecb(const struct neon_sched *ks, size_t j, const uint8_t *in, uint8_t *out,
                  size_t n)
{
    uint8x16_t k[11];

    load_keys(ks->rk[j], k);
    one_key(k, in, 0, 0, out, n);
}

void neon_aes_ctr(const struct neon_sched *ks, size_t j, uint64_t c0, uint8_t *out, size_t n)
{
    uint8x16_t k[11];

    load_keys(ks->rk[j], k);
    one_key(k, NULL, c0, 0, out, n);
}

/* mmo with two keys: W / 2 seeds a pass, each loaded once and encrypted
 * under both keys from registers (enc_w_pair), reloaded for the
 * feed-forward; the tail seeds go one by one. out[2i + j] for key j. */
static void mmo_pair(const struct neon_sched *ks, const uint8_t *seeds, uint8_t *out, size_t n)
{
    uint8x16_t k0[11], k1[11], b[W];
    size_t i = 0;

    load_keys(ks->rk[0], k0);
    load_keys(ks->rk[1], k1);
    for (; i + W / 2 <= n; i += W / 2) {
#pragma GCC unroll 4
        for (unsigned q = 0; q < W / 2; q++)
            b[2 * q] = b[2 * q + 1] = ld(seeds + 16 * (i + q));
        enc_w_pair(b, k0, k1);
#pragma GCC unroll 4
        for (unsigned q = 0; q < W / 2; q++) {
            const uint8x16_t x = ld(seeds + 16 * (i + q));
            st(out + 32 * (i + q), veorq_u8(b[2 * q], x));
            st(out + 32 * (i + q) + 16, veorq_u8(b[2 * q + 1], x));
        }
    }
    for (; i < n; i++) {
        const uint8x16_t x = ld(seeds + 16 * i);
        st(out + 32 * i, veorq_u8(enc1(x, k0), x));
        st(out + 32 * i + 16, veorq_u8(enc1(x, k1), x));
    }
}

/* mmo with M = 3..8 keys, M a constant where it is inlined: W / M seeds a
 * pass (one for M > 4) in lanes q * M + j (seed q, key j), so out is
 * written in order. The M schedules do not fit the registers beside the
 * blocks, so each round loads each key's round key once and uses it for
 * its W / M lanes (M loads a round, not one per lane), and each seed is
 * loaded once for its M lanes and again for the feed-forward. The last
 * seeds, fewer than a pass, go one by one under each key. */
static inline __attribute__((always_inline)) void mmo_m(const struct neon_sched *ks,
                                                        const uint8_t *seeds, uint8_t *out,
                                                        size_t n, const unsigned M)
{
    const unsigned per = W / M;
    uint8x16_t b[W];
    size_t i = 0;

    for (; i + per <= n; i += per) {
#pragma GCC unroll 8
        for (unsigned q = 0; q < per; q++) {
            const uint8x16_t x = ld(seeds + 16 * (i + q));
#pragma GCC unroll 8
            for (unsigned j = 0; j < M; j++)
                b[q * M + j] = x;
        }
#pragma GCC unroll 9
        for (unsigned r = 0; r < 9; r++) {
#pragma GCC unroll 8
            for (unsigned j = 0; j < M; j++) {
                const uint8x16_t kr = ld(ks->rk[j] + 16 * r);
#pragma GCC unroll 8
                for (unsigned q = 0; q < per; q++)
                    b[q * M + j] = vaesmcq_u8(vaeseq_u8(b[q * M + j], kr));
            }
        }
#pragma GCC unroll 8
        for (unsigned j = 0; j < M; j++) {
            const uint8x16_t k9 = ld(ks->rk[j] + 144), k10 = ld(ks->rk[j] + 160);
#pragma GCC unroll 8
            for (unsigned q = 0; q < per; q++)
                b[q * M + j] = veorq_u8(vaeseq_u8(b[q * M + j], k9), k10);
        }
#pragma GCC unroll 8
        for (unsigned q = 0; q < per; q++) {
            const uint8x16_t x = ld(seeds + 16 * (i + q));
#pragma GCC unroll 8
            for (unsigned j = 0; j < M; j++)
                st(out + 16 * ((i + q) * M + j), veorq_u8(b[q * M + j], x));
        }
    }
    for (; i < n; i++) {
        const uint8x16_t x = ld(seeds + 16 * i);
        for (unsigned j = 0; j < M; j++) {
            uint8x16_t k[11];
            load_keys(ks->rk[j], k);
            st(out + 16 * (i * M + j), veorq_u8(enc1(x, k), x));
        }
    }
}

void neon_aes_mmo(const struct neon_sched *ks, const uint8_t *seeds, uint8_t *out, size_t n)
{
    const size_t m = ks->m;

    if (m == 1) {
        /* One key: ecb with the feed-forward, the key in registers. */
        uint8x16_t k[11];

        load_keys(ks->rk[0], k);
        one_key(k, seeds, 0, 1, out, n);
        return;
    }
    if (m == 2) {
        mmo_pair(ks, seeds, out, n);
        return;
    }
    switch (m) {
    case 3:
        mmo_m(ks, seeds, out, n, 3);
        break;
    case 4:
        mmo_m(ks, seeds, out, n, 4);
        break;
    case 5:
        mmo_m(ks, seeds, out, n, 5);
        break;
    case 6:
        mmo_m(ks, seeds, out, n, 6);
        break;
    case 7:
        mmo_m(ks, seeds, out, n, 7);
        break;
    default:
        mmo_m(ks, seeds, out, n, 8);
        break;
    }
}

/* All ones where the node's control bit (bit 0 of byte 12) is set: bit 0
 * of 32-bit lane 3, spread by a negation, no branch on the secret. */
static inline uint8x16_t tmask(uint8x16_t x)
{
    const uint32x4_t t = vandq_u32(vdupq_laneq_u32(vreinterpretq_u32_u8(x), 3), vdupq_n_u32(1));
    return vreinterpretq_u8_s32(vnegq_s32(vreinterpretq_s32_u32(t)));
}

static inline uint8x16_t clr_t(uint8x16_t x)
{
    const uint32x4_t bit = {0, 0, 0, 1};
    return vbicq_u8(x, vreinterpretq_u8_u32(bit));
}

/* child 2i+b of parent x: G_b(clr x) ^ clr x ^ (t(x) ? cw[b] : 0), the
 * AES output y given. */
static inline void expand_store(uint8_t *children, uint8x16_t x, uint8x16_t y0, uint8x16_t y1,
                                const uint8_t cw[2][16])
{
    const uint8x16_t s = clr_t(x), tm = tmask(x);
    st(children, veorq_u8(veorq_u8(y0, s), vandq_u8(ld(cw[0]), tm)));
    st(children + 16, veorq_u8(veorq_u8(y1, s), vandq_u8(ld(cw[1]), tm)));
}

void neon_dpf_expand(const struct neon_sched *ks, const uint8_t *parents, uint8_t *children,
                     size_t n, const uint8_t cw[2][16])
{
    uint8x16_t k0[11], k1[11], b[W];
    size_t p = 0;

    /* kL and kR in registers (enc_w_pair), W / 2 parents a pass; the
     * correction words and each parent's control mask are loaded again
     * after the rounds, not kept live through them. Whole passes store
     * unconditionally, so the compiler keeps the W lanes of a round
     * together in one block; the last parents go one by one. */
    load_keys(ks->rk[0], k0);
    load_keys(ks->rk[1], k1);
    for (; p + W / 2 <= n; p += W / 2) {
#pragma GCC unroll 4
        for (unsigned q = 0; q < W / 2; q++)
            b[2 * q] = b[2 * q + 1] = clr_t(ld(parents + 16 * (p + q)));
        enc_w_pair(b, k0, k1);
#pragma GCC unroll 4
        for (unsigned q = 0; q < W / 2; q++)
            expand_store(children + 32 * (p + q), ld(parents + 16 * (p + q)), b[2 * q],
                         b[2 * q + 1], cw);
    }
    for (; p < n; p++) {
        const uint8x16_t x = ld(parents + 16 * p), s = clr_t(x);
        expand_store(children + 32 * p, x, enc1(s, k0), enc1(s, k1), cw);
    }
}

void neon_dpf_step(const struct neon_sched *ks, uint8_t *nodes, const uint8_t *dir,
                   const uint8_t *cw, size_t n)
{
    const uint8_t *kp[W];
    uint8x16_t b[W], s[W], tm[W];

    for (size_t i = 0; i < n; i += W) {
        const size_t cnt = n - i < W ? n - i : W;
        /* dir is public (the evaluation point's bits): selecting the key
         * schedule by it is not a secret-dependent address. */
#pragma GCC unroll 8
        for (unsigned l = 0; l < W; l++) {
            const size_t idx = i + (l < cnt ? l : 0);
            const uint8x16_t x = ld(nodes + 16 * idx);
            kp[l] = ks->rk[dir[idx] & 1u];
            tm[l] = tmask(x);
            s[l] = b[l] = clr_t(x);
        }
        enc_w_lanes(b, kp);
#pragma GCC unroll 8
        for (unsigned l = 0; l < W; l++)
            if (l < cnt)
                st(nodes + 16 * (i + l),
                   veorq_u8(veorq_u8(b[l], s[l]), vandq_u8(ld(cw + 16 * (i + l)), tm[l])));
    }
}
