/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bitsliced AES-128 circuit, written once for the soft backend's
 * constant-time core (plugins/soft/aes_bitslice.c, host C) and the cuda
 * kernels (plugins/cuda/k_aes.h, nvcc and the emulated grid).
 *
 * Layout: a group of 4 blocks is 8 64-bit words ("planes"), plane i holding
 * bit i of every byte; the byte at row r, column c of block b sits at bit
 * 16r + 4c + b, so ShiftRows is a rotation inside each 16-bit row field and
 * the row rotations of MixColumns are whole-word rotations by 16. The S-box
 * is Boyar and Peralta's circuit (32 AND, 81 XOR/XNOR); nothing indexes
 * memory or branches on key or data.
 *
 * The plane functions take a pointer and a stride between planes: soft
 * keeps several groups interleaved word by word (plane i of lane l at
 * q[i * lanes + l]) so the compiler has independent work to schedule, cuda
 * keeps one group per thread (stride 1). Inlined with a constant stride,
 * both compile to straight-line code on registers.
 */
#ifndef MPCE_COMMON_AES_BITSLICE_H
#define MPCE_COMMON_AES_BITSLICE_H

#include <stddef.h>
#include <stdint.h>

/* Host and device under nvcc; nothing in C. */
#if defined(__CUDACC__)
#define MPCE_HOSTDEV __host__ __device__
#else
#define MPCE_HOSTDEV
#endif

/* Soft's speed depends on every call here being inlined (its lane loops
 * then unroll), so GCC is made to; nvcc inlines device functions by its
 * own rules, which the cuda kernels' register counts were measured with,
 * so there it stays a hint. */
#if defined(__CUDACC__) || !defined(__GNUC__)
#define MPCE_BS_FN static inline MPCE_HOSTDEV
#else
#define MPCE_BS_FN static inline __attribute__((always_inline))
#endif

#define MPCE_AES_ROUNDS 10
/* Little-endian column words of an expanded key: 4 per round key. */
#define MPCE_AES_KEY_WORDS (4 * (MPCE_AES_ROUNDS + 1))

MPCE_BS_FN uint64_t mpce_bs_ror64(uint64_t x, unsigned n)
{
    return (x >> n) | (x << (64 - n));
}

/* Byte j of x to byte 2j of the result. */
MPCE_BS_FN uint64_t mpce_bs_spread_bytes(uint32_t x)
{
    uint64_t z = x;
    z = (z | z << 16) & 0x0000FFFF0000FFFFull;
    z = (z | z << 8) & 0x00FF00FF00FF00FFull;
    return z;
}

MPCE_BS_FN uint32_t mpce_bs_gather_bytes(uint64_t z)
{
    z &= 0x00FF00FF00FF00FFull;
    z = (z | z >> 8) & 0x0000FFFF0000FFFFull;
    z = (z | z >> 16) & 0x00000000FFFFFFFFull;
    return (uint32_t)z;
}

#define MPCE_BS_SWAPMOVE(a, b, mask, n)                                                    \
    do {                                                                                   \
        uint64_t sm_t = (((a) >> (n)) ^ (b)) & (mask);                                     \
        (b) ^= sm_t;                                                                       \
        (a) ^= sm_t << (n);                                                                \
    } while (0)

/* Transpose the 8x8 bit matrix (word index x bit-in-byte) of every byte
 * position; its own inverse. */
MPCE_BS_FN void mpce_bs_ortho(uint64_t w[8])
{
    MPCE_BS_SWAPMOVE(w[0], w[1], 0x5555555555555555ull, 1);
    MPCE_BS_SWAPMOVE(w[2], w[3], 0x5555555555555555ull, 1);
    MPCE_BS_SWAPMOVE(w[4], w[5], 0x5555555555555555ull, 1);
    MPCE_BS_SWAPMOVE(w[6], w[7], 0x5555555555555555ull, 1);
    MPCE_BS_SWAPMOVE(w[0], w[2], 0x3333333333333333ull, 2);
    MPCE_BS_SWAPMOVE(w[1], w[3], 0x3333333333333333ull, 2);
    MPCE_BS_SWAPMOVE(w[4], w[6], 0x3333333333333333ull, 2);
    MPCE_BS_SWAPMOVE(w[5], w[7], 0x3333333333333333ull, 2);
    MPCE_BS_SWAPMOVE(w[0], w[4], 0x0F0F0F0F0F0F0F0Full, 4);
    MPCE_BS_SWAPMOVE(w[1], w[5], 0x0F0F0F0F0F0F0F0Full, 4);
    MPCE_BS_SWAPMOVE(w[2], w[6], 0x0F0F0F0F0F0F0F0Full, 4);
    MPCE_BS_SWAPMOVE(w[3], w[7], 0x0F0F0F0F0F0F0F0Full, 4);
}

/*
 * Block b of a group, from its four little-endian column words, into w
 * before the transpose (mpce_bs_ortho): word b (even columns) and word
 * b + 4 (odd columns) interleave two columns byte by byte, so that after
 * it byte (r, c, b) lands at bit 8 * (2r + c/2) + (b + 4 * (c & 1)), which
 * is 16r + 4c + b.
 */
MPCE_BS_FN void mpce_bs_pack_block(uint64_t w[8], unsigned b, const uint32_t c[4])
{
    w[b] = mpce_bs_spread_bytes(c[0]) | mpce_bs_spread_bytes(c[2]) << 8;
    w[b + 4] = mpce_bs_spread_bytes(c[1]) | mpce_bs_spread_bytes(c[3]) << 8;
}

/* The inverse of mpce_bs_pack_block (after the transpose back). */
MPCE_BS_FN void mpce_bs_unpack_block(const uint64_t w[8], unsigned b, uint32_t c[4])
{
    c[0] = mpce_bs_gather_bytes(w[b]);
    c[2] = mpce_bs_gather_bytes(w[b] >> 8);
    c[1] = mpce_bs_gather_bytes(w[b + 4]);
    c[3] = mpce_bs_gather_bytes(w[b + 4] >> 8);
}

/*
 * The S-box on every byte of one group's planes (q[i * stride], i < 8):
 * top linear layer, shared GF(2^4) inversion, bottom linear layer. u0 is
 * the most significant bit, hence plane 7.
 */
MPCE_BS_FN void mpce_bs_sbox(uint64_t *q, size_t stride)
{
    const uint64_t u0 = q[7 * stride], u1 = q[6 * stride], u2 = q[5 * stride];
    const uint64_t u3 = q[4 * stride], u4 = q[3 * stride], u5 = q[2 * stride];
    const uint64_t u6 = q[1 * stride], u7 = q[0];

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

    q[7 * stride] = l6 ^ l24;
    q[6 * stride] = ~(l16 ^ l26);
    q[5 * stride] = ~(l19 ^ l28);
    q[4 * stride] = l6 ^ l21;
    q[3 * stride] = l20 ^ l22;
    q[2 * stride] = l25 ^ l29;
    q[1 * stride] = ~(l13 ^ l27);
    q[0] = ~(l6 ^ l23);
}

MPCE_BS_FN uint64_t mpce_bs_shift_rows_word(uint64_t x)
{
    return (x & 0x000000000000FFFFull) | ((x >> 4) & 0x000000000FFF0000ull) |
           ((x << 12) & 0x00000000F0000000ull) | ((x >> 8) & 0x000000FF00000000ull) |
           ((x << 8) & 0x0000FF0000000000ull) | ((x >> 12) & 0x000F000000000000ull) |
           ((x << 4) & 0xFFF0000000000000ull);
}

/*
 * MixColumns on one group's planes (q[i * stride]):
 * s'[r] = 2(s[r] ^ s[r+1]) ^ s[r+1] ^ s[r+2] ^ s[r+3]; with a = s ^ rot16(s),
 * s[r+2] ^ s[r+3] is rot32(a). Doubling moves each plane up one and folds
 * plane 7 back in at planes 0, 1, 3 and 4 (x^8 = x^4 + x^3 + x + 1).
 */
MPCE_BS_FN void mpce_bs_mix_columns(uint64_t *q, size_t stride)
{
    uint64_t r1[8], a[8];
    for (unsigned i = 0; i < 8; i++) {
        r1[i] = mpce_bs_ror64(q[i * stride], 16);
        a[i] = q[i * stride] ^ r1[i];
    }
    for (unsigned i = 0; i < 8; i++)
        q[i * stride] = r1[i] ^ mpce_bs_ror64(a[i], 32);
    q[0 * stride] ^= a[7];
    q[1 * stride] ^= a[0] ^ a[7];
    q[2 * stride] ^= a[1];
    q[3 * stride] ^= a[2] ^ a[7];
    q[4 * stride] ^= a[3] ^ a[7];
    q[5 * stride] ^= a[4];
    q[6 * stride] ^= a[5];
    q[7 * stride] ^= a[6];
}

/* SubWord through the same circuit: byte j of x becomes bit j of each
 * plane (the key expansion; cuda's T-table is filled this way too, so no
 * second S-box exists to get wrong). */
MPCE_BS_FN uint32_t mpce_bs_sub_word(uint32_t x)
{
    uint64_t p[8];
    for (unsigned i = 0; i < 8; i++) {
        p[i] = 0;
        for (unsigned j = 0; j < 4; j++)
            p[i] |= (uint64_t)((x >> (8 * j + i)) & 1u) << j;
    }
    mpce_bs_sbox(p, 1);
    uint32_t y = 0;
    for (unsigned i = 0; i < 8; i++)
        for (unsigned j = 0; j < 4; j++)
            y |= (uint32_t)((p[i] >> j) & 1u) << (8 * j + i);
    return y;
}

/* FIPS-197 key expansion on little-endian column words (byte 0 lowest, so
 * RotWord is a rotation right by 8 and Rcon goes into the low byte). The
 * caller wipes w when it is done with it. */
MPCE_BS_FN void mpce_aes_expand_words(const uint8_t key[16], uint32_t w[MPCE_AES_KEY_WORDS])
{
    uint32_t rcon = 1;
    for (unsigned i = 0; i < 4; i++)
        w[i] = (uint32_t)key[4 * i] | (uint32_t)key[4 * i + 1] << 8 |
               (uint32_t)key[4 * i + 2] << 16 | (uint32_t)key[4 * i + 3] << 24;
    for (unsigned i = 4; i < MPCE_AES_KEY_WORDS; i++) {
        uint32_t t = w[i - 1];
        if (i % 4 == 0) {
            t = mpce_bs_sub_word((t >> 8) | (t << 24)) ^ rcon;
            rcon = (rcon << 1) ^ (0x11bu & (0u - (rcon >> 7)));
        }
        w[i] = w[i - 4] ^ t;
    }
}

#endif
