/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Constant-time AES-128 encryption, bitsliced over 64-bit words.
 *
 * A group of 4 blocks (64 bytes) is held as 8 words ("planes"): plane i holds
 * bit i of every byte. The byte at row r, column c of block b sits at bit
 * 16r + 4c + b, so ShiftRows is a rotation inside each 16-bit row field and
 * the row rotations of MixColumns are whole-word rotations by 16. The S-box
 * is the Boyar-Peralta circuit (32 AND, 81 XOR/XNOR) evaluated on the planes;
 * nothing indexes memory or branches on key or data.
 *
 * Long inputs go MAX_LANES groups (16 blocks) per pass, interleaved word by
 * word so the compiler has independent work to schedule and may pair lanes
 * in vector registers; the rest goes one group at a time, so short calls
 * (one DPF level, say) pay for 4 blocks rather than 16.
 */
#include "config.h"

#include <string.h>

#include "plugins/soft/aes.h"

#define MAX_LANES 4
#define GROUP_BLOCKS 4
#define ROUNDS 10

/* The round functions are instantiated per lane count; forcing them inline
 * lets the lane loops unroll into straight-line code. */
#if defined(__GNUC__)
#define BS_INLINE static inline __attribute__((always_inline))
#else
#define BS_INLINE static inline
#endif

/* Round keys, each already in plane form (the same key in all 4 positions). */
struct bs_schedule {
    uint64_t rk[ROUNDS + 1][8];
};

static inline uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void store_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint64_t ror64(uint64_t x, unsigned n)
{
    return (x >> n) | (x << (64 - n));
}

/* Byte j of x to byte 2j of the result. */
static inline uint64_t spread_bytes(uint32_t x)
{
    uint64_t z = x;
    z = (z | z << 16) & 0x0000FFFF0000FFFFull;
    z = (z | z << 8) & 0x00FF00FF00FF00FFull;
    return z;
}

static inline uint32_t gather_bytes(uint64_t z)
{
    z &= 0x00FF00FF00FF00FFull;
    z = (z | z >> 8) & 0x0000FFFF0000FFFFull;
    z = (z | z >> 16) & 0x00000000FFFFFFFFull;
    return (uint32_t)z;
}

#define SWAPMOVE(a, b, mask, n)                                                \
    do {                                                                       \
        uint64_t sm_t = (((a) >> (n)) ^ (b)) & (mask);                         \
        (b) ^= sm_t;                                                           \
        (a) ^= sm_t << (n);                                                    \
    } while (0)

/* Transpose the 8x8 bit matrix (word index x bit-in-byte) of every byte
 * position; its own inverse. */
static void ortho(uint64_t w[8])
{
    SWAPMOVE(w[0], w[1], 0x5555555555555555ull, 1);
    SWAPMOVE(w[2], w[3], 0x5555555555555555ull, 1);
    SWAPMOVE(w[4], w[5], 0x5555555555555555ull, 1);
    SWAPMOVE(w[6], w[7], 0x5555555555555555ull, 1);
    SWAPMOVE(w[0], w[2], 0x3333333333333333ull, 2);
    SWAPMOVE(w[1], w[3], 0x3333333333333333ull, 2);
    SWAPMOVE(w[4], w[6], 0x3333333333333333ull, 2);
    SWAPMOVE(w[5], w[7], 0x3333333333333333ull, 2);
    SWAPMOVE(w[0], w[4], 0x0F0F0F0F0F0F0F0Full, 4);
    SWAPMOVE(w[1], w[5], 0x0F0F0F0F0F0F0F0Full, 4);
    SWAPMOVE(w[2], w[6], 0x0F0F0F0F0F0F0F0Full, 4);
    SWAPMOVE(w[3], w[7], 0x0F0F0F0F0F0F0F0Full, 4);
}

/*
 * 4 blocks to planes. Before the transpose, word b (even columns) and word
 * b + 4 (odd columns) of block b interleave two columns byte by byte, so that
 * after it byte (r, c, b) lands at bit 8 * (2r + c/2) + (b + 4 * (c & 1)),
 * which is 16r + 4c + b.
 */
static void pack4(uint64_t w[8], const uint8_t *in)
{
    for (unsigned b = 0; b < 4; b++) {
        const uint8_t *p = in + 16 * b;
        w[b] = spread_bytes(load_le32(p)) | spread_bytes(load_le32(p + 8)) << 8;
        w[b + 4] = spread_bytes(load_le32(p + 4)) | spread_bytes(load_le32(p + 12)) << 8;
    }
    ortho(w);
}

static void unpack4(uint8_t *out, uint64_t w[8])
{
    ortho(w);
    for (unsigned b = 0; b < 4; b++) {
        uint8_t *p = out + 16 * b;
        store_le32(p, gather_bytes(w[b]));
        store_le32(p + 8, gather_bytes(w[b] >> 8));
        store_le32(p + 4, gather_bytes(w[b + 4]));
        store_le32(p + 12, gather_bytes(w[b + 4] >> 8));
    }
}

/*
 * The S-box on every byte of one plane set: Boyar and Peralta's circuit
 * (top linear layer, shared GF(2^4) inversion, bottom linear layer). u0 is
 * the most significant bit, hence plane 7.
 */
BS_INLINE void sbox_planes(uint64_t *q0, uint64_t *q1, uint64_t *q2, uint64_t *q3,
                               uint64_t *q4, uint64_t *q5, uint64_t *q6, uint64_t *q7)
{
    uint64_t u0 = *q7, u1 = *q6, u2 = *q5, u3 = *q4;
    uint64_t u4 = *q3, u5 = *q2, u6 = *q1, u7 = *q0;

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

    *q7 = l6 ^ l24;
    *q6 = ~(l16 ^ l26);
    *q5 = ~(l19 ^ l28);
    *q4 = l6 ^ l21;
    *q3 = l20 ^ l22;
    *q2 = l25 ^ l29;
    *q1 = ~(l13 ^ l27);
    *q0 = ~(l6 ^ l23);
}

/* State of up to MAX_LANES groups, plane-major: q[i][lane]. */
typedef uint64_t bs_state[8][MAX_LANES];

BS_INLINE void sub_bytes(bs_state q, unsigned lanes)
{
    for (unsigned l = 0; l < lanes; l++)
        sbox_planes(&q[0][l], &q[1][l], &q[2][l], &q[3][l], &q[4][l], &q[5][l], &q[6][l],
                    &q[7][l]);
}

static inline uint64_t shift_rows_word(uint64_t x)
{
    return (x & 0x000000000000FFFFull)
           | ((x >> 4) & 0x000000000FFF0000ull) | ((x << 12) & 0x00000000F0000000ull)
           | ((x >> 8) & 0x000000FF00000000ull) | ((x << 8) & 0x0000FF0000000000ull)
           | ((x >> 12) & 0x000F000000000000ull) | ((x << 4) & 0xFFF0000000000000ull);
}

BS_INLINE void shift_rows(bs_state q, unsigned lanes)
{
    for (unsigned i = 0; i < 8; i++)
        for (unsigned l = 0; l < lanes; l++)
            q[i][l] = shift_rows_word(q[i][l]);
}

/*
 * s'[r] = 2(s[r] ^ s[r+1]) ^ s[r+1] ^ s[r+2] ^ s[r+3]; with a = s ^ rot16(s),
 * s[r+2] ^ s[r+3] is rot32(a). Doubling moves each plane up one and folds
 * plane 7 back in at planes 0, 1, 3 and 4 (x^8 = x^4 + x^3 + x + 1).
 */
BS_INLINE void mix_columns(bs_state q, unsigned lanes)
{
    for (unsigned l = 0; l < lanes; l++) {
        uint64_t r1[8], a[8];
        for (unsigned i = 0; i < 8; i++) {
            r1[i] = ror64(q[i][l], 16);
            a[i] = q[i][l] ^ r1[i];
        }
        for (unsigned i = 0; i < 8; i++)
            q[i][l] = r1[i] ^ ror64(a[i], 32);
        q[0][l] ^= a[7];
        q[1][l] ^= a[0] ^ a[7];
        q[2][l] ^= a[1];
        q[3][l] ^= a[2] ^ a[7];
        q[4][l] ^= a[3] ^ a[7];
        q[5][l] ^= a[4];
        q[6][l] ^= a[5];
        q[7][l] ^= a[6];
    }
}

BS_INLINE void add_round_key(bs_state q, const uint64_t rk[8], unsigned lanes)
{
    for (unsigned i = 0; i < 8; i++)
        for (unsigned l = 0; l < lanes; l++)
            q[i][l] ^= rk[i];
}

/* One pass over 4 * lanes blocks; all input is read before any output is
 * written, which makes in == out safe. */
BS_INLINE void encrypt_lanes(const struct bs_schedule *ks, const uint8_t *in, uint8_t *out,
                             unsigned lanes)
{
    bs_state q;
    uint64_t w[8];

    for (unsigned l = 0; l < lanes; l++) {
        pack4(w, in + 16 * GROUP_BLOCKS * l);
        for (unsigned i = 0; i < 8; i++)
            q[i][l] = w[i];
    }
    add_round_key(q, ks->rk[0], lanes);
    for (unsigned r = 1; r < ROUNDS; r++) {
        sub_bytes(q, lanes);
        shift_rows(q, lanes);
        mix_columns(q, lanes);
        add_round_key(q, ks->rk[r], lanes);
    }
    sub_bytes(q, lanes);
    shift_rows(q, lanes);
    add_round_key(q, ks->rk[ROUNDS], lanes);
    for (unsigned l = 0; l < lanes; l++) {
        for (unsigned i = 0; i < 8; i++)
            w[i] = q[i][l];
        unpack4(out + 16 * GROUP_BLOCKS * l, w);
    }
}

static void encrypt_wide(const struct bs_schedule *ks, const uint8_t *in, uint8_t *out)
{
    encrypt_lanes(ks, in, out, MAX_LANES);
}

static void encrypt_group(const struct bs_schedule *ks, const uint8_t *in, uint8_t *out)
{
    encrypt_lanes(ks, in, out, 1);
}

static void bs_encrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    const struct bs_schedule *sched = ks;

    for (; n >= GROUP_BLOCKS * MAX_LANES; n -= GROUP_BLOCKS * MAX_LANES) {
        encrypt_wide(sched, in, out);
        in += 16 * GROUP_BLOCKS * MAX_LANES;
        out += 16 * GROUP_BLOCKS * MAX_LANES;
    }
    for (; n >= GROUP_BLOCKS; n -= GROUP_BLOCKS) {
        encrypt_group(sched, in, out);
        in += 16 * GROUP_BLOCKS;
        out += 16 * GROUP_BLOCKS;
    }
    if (n > 0) {
        uint8_t tmp[16 * GROUP_BLOCKS] = {0};
        memcpy(tmp, in, 16 * n);
        encrypt_group(sched, tmp, tmp);
        memcpy(out, tmp, 16 * n);
    }
}

/* SubWord through the same circuit: byte j of x becomes bit j of each plane. */
static uint32_t sub_word(uint32_t x)
{
    uint64_t p[8];

    for (unsigned i = 0; i < 8; i++) {
        p[i] = 0;
        for (unsigned j = 0; j < 4; j++)
            p[i] |= (uint64_t)((x >> (8 * j + i)) & 1u) << j;
    }
    sbox_planes(&p[0], &p[1], &p[2], &p[3], &p[4], &p[5], &p[6], &p[7]);
    uint32_t y = 0;
    for (unsigned i = 0; i < 8; i++)
        for (unsigned j = 0; j < 4; j++)
            y |= (uint32_t)((p[i] >> j) & 1u) << (8 * j + i);
    return y;
}

/* FIPS-197 key expansion on little-endian words (byte 0 lowest, so RotWord
 * is a rotation right by 8 and Rcon goes into the low byte); each round key
 * is then packed four times over into plane form. */
static void bs_expand(void *ks, const uint8_t key[16])
{
    struct bs_schedule *sched = ks;
    uint32_t w[4 * (ROUNDS + 1)];
    uint32_t rcon = 1;

    for (unsigned i = 0; i < 4; i++)
        w[i] = load_le32(key + 4 * i);
    for (unsigned i = 4; i < 4 * (ROUNDS + 1); i++) {
        uint32_t t = w[i - 1];
        if (i % 4 == 0) {
            t = sub_word((t >> 8) | (t << 24)) ^ rcon;
            rcon = (rcon << 1) ^ (0x11bu & (0u - (rcon >> 7)));
        }
        w[i] = w[i - 4] ^ t;
    }
    for (unsigned r = 0; r <= ROUNDS; r++) {
        uint8_t four[64];
        for (unsigned b = 0; b < 4; b++)
            for (unsigned j = 0; j < 4; j++)
                store_le32(four + 16 * b + 4 * j, w[4 * r + j]);
        pack4(sched->rk[r], four);
        mpce_aes_wipe(four, sizeof(four));
    }
    mpce_aes_wipe(w, sizeof(w));
}

const struct mpce_aes_core mpce_aes_bitslice_core = {
    .ks_bytes = sizeof(struct bs_schedule),
    .pass_blocks = GROUP_BLOCKS * MAX_LANES,
    .expand = bs_expand,
    .encrypt = bs_encrypt,
};
