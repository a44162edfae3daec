/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Constant-time AES-128 encryption, bitsliced over 64-bit words: the layout
 * and the circuit are plugins/common/aes_bitslice.h's (shared with the cuda
 * kernels); this file runs them over host memory.
 *
 * Long inputs go MAX_LANES groups of 4 blocks (16 blocks) per pass,
 * interleaved word by word so the compiler has independent work to
 * schedule and may pair lanes in vector registers; the rest goes one group
 * at a time, so short calls (one DPF level, say) pay for 4 blocks rather
 * than 16.
 */
#include "config.h"

#include <string.h>

#include "plugins/common/aes_bitslice.h"
#include "plugins/soft/aes.h"

#define MAX_LANES 4
#define GROUP_BLOCKS 4
#define ROUNDS MPCE_AES_ROUNDS

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

/* 4 blocks to planes. */
static void pack4(uint64_t w[8], const uint8_t *in)
{
    for (unsigned b = 0; b < 4; b++) {
        const uint8_t *p = in + 16 * b;
        const uint32_t c[4] = {load_le32(p), load_le32(p + 4), load_le32(p + 8),
                               load_le32(p + 12)};
        mpce_bs_pack_block(w, b, c);
    }
    mpce_bs_ortho(w);
}

static void unpack4(uint8_t *out, uint64_t w[8])
{
    mpce_bs_ortho(w);
    for (unsigned b = 0; b < 4; b++) {
        uint8_t *p = out + 16 * b;
        uint32_t c[4];
        mpce_bs_unpack_block(w, b, c);
        for (unsigned j = 0; j < 4; j++)
            store_le32(p + 4 * j, c[j]);
    }
}

/* State of up to MAX_LANES groups, plane-major: plane i of lane l at
 * Q(i, l), so lane l's planes are q + l at stride MAX_LANES. */
typedef uint64_t bs_state[8 * MAX_LANES];
#define Q(i, l) q[(i) * MAX_LANES + (l)]

BS_INLINE void sub_bytes(bs_state q, unsigned lanes)
{
    for (unsigned l = 0; l < lanes; l++)
        mpce_bs_sbox(q + l, MAX_LANES);
}

BS_INLINE void shift_rows(bs_state q, unsigned lanes)
{
    for (unsigned i = 0; i < 8; i++)
        for (unsigned l = 0; l < lanes; l++)
            Q(i, l) = mpce_bs_shift_rows_word(Q(i, l));
}

BS_INLINE void mix_columns(bs_state q, unsigned lanes)
{
    for (unsigned l = 0; l < lanes; l++)
        mpce_bs_mix_columns(q + l, MAX_LANES);
}

BS_INLINE void add_round_key(bs_state q, const uint64_t rk[8], unsigned lanes)
{
    for (unsigned i = 0; i < 8; i++)
        for (unsigned l = 0; l < lanes; l++)
            Q(i, l) ^= rk[i];
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
            Q(i, l) = w[i];
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
            w[i] = Q(i, l);
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

/* The FIPS-197 schedule, each round key then packed four times over into
 * plane form. */
static void bs_expand(void *ks, const uint8_t key[16])
{
    struct bs_schedule *sched = ks;
    uint32_t w[MPCE_AES_KEY_WORDS];

    mpce_aes_expand_words(key, w);
    for (unsigned r = 0; r <= ROUNDS; r++) {
        uint8_t four[64];
        for (unsigned b = 0; b < 4; b++)
            for (unsigned j = 0; j < 4; j++)
                store_le32(four + 16 * b + 4 * j, w[4 * r + j]);
        pack4(sched->rk[r], four);
        mpce_wipe(four, sizeof(four));
    }
    mpce_wipe(w, sizeof(w));
}

const struct mpce_aes_core mpce_aes_bitslice_core = {
    .ks_bytes = sizeof(struct bs_schedule),
    .pass_blocks = GROUP_BLOCKS * MAX_LANES,
    .expand = bs_expand,
    .encrypt = bs_encrypt,
};
