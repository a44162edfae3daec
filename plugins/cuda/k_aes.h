/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES-128 encryption in the kernel dialect (kd.h), two ways:
 *
 * - bitsliced (constant time, the default): one thread holds 4 blocks as 8
 *   64-bit planes, the layout and Boyar-Peralta S-box circuit of the soft
 *   backend's bitsliced core (plugins/soft/aes_bitslice.c explains the bit
 *   positions); nothing indexes memory or branches on key or data, so on
 *   the GPU too the timing does not depend on secrets;
 * - T-table (variable time, MPCE_IMPL_VARIABLE_TIME): one block per thread
 *   through one 1 KiB table in shared memory, replicated once per bank
 *   (32 copies, 32 KiB) so that the 32 lanes of a warp, each reading its
 *   own copy, never conflict whatever bytes they look up.
 *
 * Key schedules are expanded on the host, once per context, by the same
 * functions (KD_HOSTDEV).
 */
#ifndef MPCE_CUDA_K_AES_H
#define MPCE_CUDA_K_AES_H

#include "plugins/cuda/kd.h"

#define CUDA_AES_ROUNDS 10
/* Words of one bitsliced schedule: 11 round keys of 8 planes. */
#define CUDA_BS_RK_WORDS (8 * (CUDA_AES_ROUNDS + 1))
/* Words of one T-table schedule: 44 little-endian column words. */
#define CUDA_TT_RK_WORDS (4 * (CUDA_AES_ROUNDS + 1))
/* Copies of the T-table in shared memory: one per bank. */
#define CUDA_TT_BANKS 32

KD_HOSTDEV uint64_t kd_ror64(uint64_t x, unsigned n)
{
    return (x >> n) | (x << (64 - n));
}

KD_HOSTDEV uint64_t kd_spread_bytes(uint32_t x)
{
    uint64_t z = x;
    z = (z | z << 16) & 0x0000FFFF0000FFFFull;
    z = (z | z << 8) & 0x00FF00FF00FF00FFull;
    return z;
}

KD_HOSTDEV uint32_t kd_gather_bytes(uint64_t z)
{
    z &= 0x00FF00FF00FF00FFull;
    z = (z | z >> 8) & 0x0000FFFF0000FFFFull;
    z = (z | z >> 16) & 0x00000000FFFFFFFFull;
    return (uint32_t)z;
}

#define KD_SWAPMOVE(a, b, mask, n)                                                         \
    do {                                                                                   \
        uint64_t sm_t = (((a) >> (n)) ^ (b)) & (mask);                                     \
        (b) ^= sm_t;                                                                       \
        (a) ^= sm_t << (n);                                                                \
    } while (0)

KD_HOSTDEV void kd_ortho(uint64_t w[8])
{
    KD_SWAPMOVE(w[0], w[1], 0x5555555555555555ull, 1);
    KD_SWAPMOVE(w[2], w[3], 0x5555555555555555ull, 1);
    KD_SWAPMOVE(w[4], w[5], 0x5555555555555555ull, 1);
    KD_SWAPMOVE(w[6], w[7], 0x5555555555555555ull, 1);
    KD_SWAPMOVE(w[0], w[2], 0x3333333333333333ull, 2);
    KD_SWAPMOVE(w[1], w[3], 0x3333333333333333ull, 2);
    KD_SWAPMOVE(w[4], w[6], 0x3333333333333333ull, 2);
    KD_SWAPMOVE(w[5], w[7], 0x3333333333333333ull, 2);
    KD_SWAPMOVE(w[0], w[4], 0x0F0F0F0F0F0F0F0Full, 4);
    KD_SWAPMOVE(w[1], w[5], 0x0F0F0F0F0F0F0F0Full, 4);
    KD_SWAPMOVE(w[2], w[6], 0x0F0F0F0F0F0F0F0Full, 4);
    KD_SWAPMOVE(w[3], w[7], 0x0F0F0F0F0F0F0F0Full, 4);
}

/* Block b of the group from its four little-endian column words. */
KD_HOSTDEV void kd_bs_pack_block(uint64_t w[8], unsigned b, const uint32_t c[4])
{
    w[b] = kd_spread_bytes(c[0]) | kd_spread_bytes(c[2]) << 8;
    w[b + 4] = kd_spread_bytes(c[1]) | kd_spread_bytes(c[3]) << 8;
}

KD_HOSTDEV void kd_bs_unpack_block(const uint64_t w[8], unsigned b, uint32_t c[4])
{
    c[0] = kd_gather_bytes(w[b]);
    c[2] = kd_gather_bytes(w[b] >> 8);
    c[1] = kd_gather_bytes(w[b + 4]);
    c[3] = kd_gather_bytes(w[b + 4] >> 8);
}

/* The Boyar-Peralta S-box on 8 planes; u0, the most significant bit, is
 * plane 7. */
KD_HOSTDEV void kd_bs_sbox(uint64_t q[8])
{
    uint64_t u0 = q[7], u1 = q[6], u2 = q[5], u3 = q[4];
    uint64_t u4 = q[3], u5 = q[2], u6 = q[1], u7 = q[0];

    uint64_t t1 = u0 ^ u3, t2 = u0 ^ u5, t3 = u0 ^ u6, t4 = u3 ^ u5;
    uint64_t t5 = u4 ^ u6, t6 = t1 ^ t5, t7 = u1 ^ u2, t8 = u7 ^ t6;
    uint64_t t9 = u7 ^ t7, t10 = t6 ^ t7, t11 = u1 ^ u5, t12 = u2 ^ u5;
    uint64_t t13 = t3 ^ t4, t14 = t6 ^ t11, t15 = t5 ^ t11, t16 = t5 ^ t12;
    uint64_t t17 = t9 ^ t16, t18 = u3 ^ u7, t19 = t7 ^ t18, t20 = t1 ^ t19;
    uint64_t t21 = u6 ^ u7, t22 = t7 ^ t21, t23 = t2 ^ t22, t24 = t2 ^ t10;
    uint64_t t25 = t20 ^ t17, t26 = t3 ^ t16, t27 = t1 ^ t12;

    uint64_t m1 = t13 & t6, m2 = t23 & t8, m3 = t14 ^ m1, m4 = t19 & u7;
    uint64_t m5 = m4 ^ m1, m6 = t3 & t16, m7 = t22 & t9, m8 = t26 ^ m6;
    uint64_t m9 = t20 & t17, m10 = m9 ^ m6, m11 = t1 & t15, m12 = t4 & t27;
    uint64_t m13 = m12 ^ m11, m14 = t2 & t10, m15 = m14 ^ m11, m16 = m3 ^ m2;
    uint64_t m17 = m5 ^ t24, m18 = m8 ^ m7, m19 = m10 ^ m15, m20 = m16 ^ m13;
    uint64_t m21 = m17 ^ m15, m22 = m18 ^ m13, m23 = m19 ^ t25, m24 = m22 ^ m23;
    uint64_t m25 = m22 & m20, m26 = m21 ^ m25, m27 = m20 ^ m21, m28 = m23 ^ m25;
    uint64_t m29 = m28 & m27, m30 = m26 & m24, m31 = m20 & m23, m32 = m27 & m31;
    uint64_t m33 = m27 ^ m25, m34 = m21 & m22, m35 = m24 & m34, m36 = m24 ^ m25;
    uint64_t m37 = m21 ^ m29, m38 = m32 ^ m33, m39 = m23 ^ m30, m40 = m35 ^ m36;
    uint64_t m41 = m38 ^ m40, m42 = m37 ^ m39, m43 = m37 ^ m38, m44 = m39 ^ m40;
    uint64_t m45 = m42 ^ m41;
    uint64_t m46 = m44 & t6, m47 = m40 & t8, m48 = m39 & u7, m49 = m43 & t16;
    uint64_t m50 = m38 & t9, m51 = m37 & t17, m52 = m42 & t15, m53 = m45 & t27;
    uint64_t m54 = m41 & t10, m55 = m44 & t13, m56 = m40 & t23, m57 = m39 & t19;
    uint64_t m58 = m43 & t3, m59 = m38 & t22, m60 = m37 & t20, m61 = m42 & t1;
    uint64_t m62 = m45 & t4, m63 = m41 & t2;

    uint64_t l0 = m61 ^ m62, l1 = m50 ^ m56, l2 = m46 ^ m48, l3 = m47 ^ m55;
    uint64_t l4 = m54 ^ m58, l5 = m49 ^ m61, l6 = m62 ^ l5, l7 = m46 ^ l3;
    uint64_t l8 = m51 ^ m59, l9 = m52 ^ m53, l10 = m53 ^ l4, l11 = m60 ^ l2;
    uint64_t l12 = m48 ^ m51, l13 = m50 ^ l0, l14 = m52 ^ m61, l15 = m55 ^ l1;
    uint64_t l16 = m56 ^ l0, l17 = m57 ^ l1, l18 = m58 ^ l8, l19 = m63 ^ l4;
    uint64_t l20 = l0 ^ l1, l21 = l1 ^ l7, l22 = l3 ^ l12, l23 = l18 ^ l2;
    uint64_t l24 = l15 ^ l9, l25 = l6 ^ l10, l26 = l7 ^ l9, l27 = l8 ^ l10;
    uint64_t l28 = l11 ^ l14, l29 = l11 ^ l17;

    q[7] = l6 ^ l24;
    q[6] = ~(l16 ^ l26);
    q[5] = ~(l19 ^ l28);
    q[4] = l6 ^ l21;
    q[3] = l20 ^ l22;
    q[2] = l25 ^ l29;
    q[1] = ~(l13 ^ l27);
    q[0] = ~(l6 ^ l23);
}

KD_HOSTDEV uint64_t kd_bs_shift_rows_word(uint64_t x)
{
    return (x & 0x000000000000FFFFull) | ((x >> 4) & 0x000000000FFF0000ull) |
           ((x << 12) & 0x00000000F0000000ull) | ((x >> 8) & 0x000000FF00000000ull) |
           ((x << 8) & 0x0000FF0000000000ull) | ((x >> 12) & 0x000F000000000000ull) |
           ((x << 4) & 0xFFF0000000000000ull);
}

KD_HOSTDEV void kd_bs_mix_columns(uint64_t q[8])
{
    uint64_t r1[8], a[8];
    for (unsigned i = 0; i < 8; i++) {
        r1[i] = kd_ror64(q[i], 16);
        a[i] = q[i] ^ r1[i];
    }
    for (unsigned i = 0; i < 8; i++)
        q[i] = r1[i] ^ kd_ror64(a[i], 32);
    q[0] ^= a[7];
    q[1] ^= a[0] ^ a[7];
    q[2] ^= a[1];
    q[3] ^= a[2] ^ a[7];
    q[4] ^= a[3] ^ a[7];
    q[5] ^= a[4];
    q[6] ^= a[5];
    q[7] ^= a[6];
}

/* The 4 blocks in q (plane form) encrypted in place under rk
 * (CUDA_BS_RK_WORDS words). */
KD_HOSTDEV void kd_bs_encrypt(uint64_t q[8], const uint64_t *rk)
{
    kd_ortho(q);
    for (unsigned i = 0; i < 8; i++)
        q[i] ^= rk[i];
    for (unsigned r = 1; r < CUDA_AES_ROUNDS; r++) {
        kd_bs_sbox(q);
        for (unsigned i = 0; i < 8; i++)
            q[i] = kd_bs_shift_rows_word(q[i]);
        kd_bs_mix_columns(q);
        for (unsigned i = 0; i < 8; i++)
            q[i] ^= rk[8 * r + i];
    }
    kd_bs_sbox(q);
    for (unsigned i = 0; i < 8; i++)
        q[i] = kd_bs_shift_rows_word(q[i]) ^ rk[8 * CUDA_AES_ROUNDS + i];
    kd_ortho(q);
}

/* The same with a key per block position: block b is encrypted under rkb
 * where bit b of `sel` is set, else under rka. The round keys are mixed
 * through plane masks (block b holds bits 4c + 16r + b of every plane),
 * so which key a block took is never a branch or an index. */
KD_HOSTDEV void kd_bs_encrypt_sel(uint64_t q[8], const uint64_t *rka, const uint64_t *rkb,
                                  unsigned sel)
{
    uint64_t m = 0;
    for (unsigned b = 0; b < 4; b++)
        m |= (0x1111111111111111ull << b) & (0ull - (uint64_t)((sel >> b) & 1u));
#define KD_RK(w) (rka[w] ^ ((rka[w] ^ rkb[w]) & m))
    kd_ortho(q);
    for (unsigned i = 0; i < 8; i++)
        q[i] ^= KD_RK(i);
    for (unsigned r = 1; r < CUDA_AES_ROUNDS; r++) {
        kd_bs_sbox(q);
        for (unsigned i = 0; i < 8; i++)
            q[i] = kd_bs_shift_rows_word(q[i]);
        kd_bs_mix_columns(q);
        for (unsigned i = 0; i < 8; i++)
            q[i] ^= KD_RK(8 * r + i);
    }
    kd_bs_sbox(q);
    for (unsigned i = 0; i < 8; i++)
        q[i] = kd_bs_shift_rows_word(q[i]) ^ KD_RK(8 * CUDA_AES_ROUNDS + i);
    kd_ortho(q);
#undef KD_RK
}

/* SubWord through the same circuit (key expansion). */
KD_HOSTDEV uint32_t kd_bs_sub_word(uint32_t x)
{
    uint64_t p[8];
    for (unsigned i = 0; i < 8; i++) {
        p[i] = 0;
        for (unsigned j = 0; j < 4; j++)
            p[i] |= (uint64_t)((x >> (8 * j + i)) & 1u) << j;
    }
    kd_bs_sbox(p);
    uint32_t y = 0;
    for (unsigned i = 0; i < 8; i++)
        for (unsigned j = 0; j < 4; j++)
            y |= (uint32_t)((p[i] >> j) & 1u) << (8 * j + i);
    return y;
}

/* FIPS-197 key expansion into 44 little-endian column words. */
KD_HOSTDEV void kd_aes_expand_words(const uint8_t key[16], uint32_t w[CUDA_TT_RK_WORDS])
{
    uint32_t rcon = 1;
    for (unsigned i = 0; i < 4; i++)
        w[i] = kd_load_le32(key + 4 * i);
    for (unsigned i = 4; i < CUDA_TT_RK_WORDS; i++) {
        uint32_t t = w[i - 1];
        if (i % 4 == 0) {
            t = kd_bs_sub_word((t >> 8) | (t << 24)) ^ rcon;
            rcon = (rcon << 1) ^ (0x11bu & (0u - (rcon >> 7)));
        }
        w[i] = w[i - 4] ^ t;
    }
}

/* The bitsliced schedule: each round key in plane form, the same key in all
 * 4 block positions. */
KD_HOSTDEV void kd_bs_expand(const uint8_t key[16], uint64_t rk[CUDA_BS_RK_WORDS])
{
    uint32_t w[CUDA_TT_RK_WORDS];
    kd_aes_expand_words(key, w);
    for (unsigned r = 0; r <= CUDA_AES_ROUNDS; r++) {
        uint64_t *p = rk + 8 * r;
        for (unsigned b = 0; b < 4; b++)
            kd_bs_pack_block(p, b, w + 4 * r);
        kd_ortho(p);
    }
    for (unsigned i = 0; i < CUDA_TT_RK_WORDS; i++)
        ((volatile uint32_t *)w)[i] = 0;
}

/* ---- T-table ---- */

KD_HOSTDEV uint32_t kd_rotl32(uint32_t x, unsigned n)
{
    return (x << n) | (x >> (32 - n));
}

/* T0[x] = LE32(2s, s, s, 3s) with s = S(x), computed through the
 * bitsliced S-box so that no second S-box table exists to get wrong. */
KD_HOSTDEV void kd_tt_fill(uint32_t t0[256])
{
    for (unsigned x = 0; x < 256; x++) {
        const uint32_t s = kd_bs_sub_word(x) & 0xffu;
        const uint32_t s2 = ((s << 1) ^ (0x11bu & (0u - (s >> 7)))) & 0xffu;
        t0[x] = s2 | s << 8 | s << 16 | (s2 ^ s) << 24;
    }
}

/* One block (four column words) in place; t is the bank-replicated table,
 * entry x of copy `lane` at t[x * CUDA_TT_BANKS + lane]. Variable time:
 * the lookups are indexed by state bytes. */
KD_DEVICE void kd_tt_encrypt(uint32_t c[4], const uint32_t *rk, const uint32_t *t,
                             unsigned lane)
{
#define KD_TT(x) (t[(size_t)(x) * CUDA_TT_BANKS + lane])
    uint32_t s0 = c[0] ^ rk[0], s1 = c[1] ^ rk[1], s2 = c[2] ^ rk[2], s3 = c[3] ^ rk[3];
    for (unsigned r = 1; r < CUDA_AES_ROUNDS; r++) {
        const uint32_t *k = rk + 4 * r;
        const uint32_t n0 = KD_TT(s0 & 0xff) ^ kd_rotl32(KD_TT((s1 >> 8) & 0xff), 8) ^
                            kd_rotl32(KD_TT((s2 >> 16) & 0xff), 16) ^
                            kd_rotl32(KD_TT(s3 >> 24), 24) ^ k[0];
        const uint32_t n1 = KD_TT(s1 & 0xff) ^ kd_rotl32(KD_TT((s2 >> 8) & 0xff), 8) ^
                            kd_rotl32(KD_TT((s3 >> 16) & 0xff), 16) ^
                            kd_rotl32(KD_TT(s0 >> 24), 24) ^ k[1];
        const uint32_t n2 = KD_TT(s2 & 0xff) ^ kd_rotl32(KD_TT((s3 >> 8) & 0xff), 8) ^
                            kd_rotl32(KD_TT((s0 >> 16) & 0xff), 16) ^
                            kd_rotl32(KD_TT(s1 >> 24), 24) ^ k[2];
        const uint32_t n3 = KD_TT(s3 & 0xff) ^ kd_rotl32(KD_TT((s0 >> 8) & 0xff), 8) ^
                            kd_rotl32(KD_TT((s1 >> 16) & 0xff), 16) ^
                            kd_rotl32(KD_TT(s2 >> 24), 24) ^ k[3];
        s0 = n0;
        s1 = n1;
        s2 = n2;
        s3 = n3;
    }
    /* Last round: S(x) is byte 1 of T0[x]. */
#define KD_SB(x) ((KD_TT(x) >> 8) & 0xffu)
    const uint32_t *k = rk + 4 * CUDA_AES_ROUNDS;
    c[0] = (KD_SB(s0 & 0xff) | KD_SB((s1 >> 8) & 0xff) << 8 | KD_SB((s2 >> 16) & 0xff) << 16 |
            KD_SB(s3 >> 24) << 24) ^ k[0];
    c[1] = (KD_SB(s1 & 0xff) | KD_SB((s2 >> 8) & 0xff) << 8 | KD_SB((s3 >> 16) & 0xff) << 16 |
            KD_SB(s0 >> 24) << 24) ^ k[1];
    c[2] = (KD_SB(s2 & 0xff) | KD_SB((s3 >> 8) & 0xff) << 8 | KD_SB((s0 >> 16) & 0xff) << 16 |
            KD_SB(s1 >> 24) << 24) ^ k[2];
    c[3] = (KD_SB(s3 & 0xff) | KD_SB((s0 >> 8) & 0xff) << 8 | KD_SB((s1 >> 16) & 0xff) << 16 |
            KD_SB(s2 >> 24) << 24) ^ k[3];
#undef KD_SB
#undef KD_TT
}

#endif
