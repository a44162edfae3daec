/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES-128 encryption in the kernel dialect (kd.h), two ways:
 *
 * - bitsliced (constant time, the default): one thread holds 4 blocks as 8
 *   64-bit planes, in the layout and through the Boyar-Peralta circuit of
 *   plugins/common/aes_bitslice.h (shared with the soft backend's core);
 *   nothing indexes memory or branches on key or data, so on the GPU too
 *   the timing does not depend on secrets;
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

#include "plugins/common/aes_bitslice.h"
#include "plugins/cuda/kd.h"

#define CUDA_AES_ROUNDS MPCE_AES_ROUNDS
/* Words of one bitsliced schedule: 11 round keys of 8 planes. */
#define CUDA_BS_RK_WORDS (8 * (CUDA_AES_ROUNDS + 1))
/* Words of one T-table schedule: 44 little-endian column words. */
#define CUDA_TT_RK_WORDS MPCE_AES_KEY_WORDS
/* Copies of the T-table in shared memory: one per bank. */
#define CUDA_TT_BANKS 32

/* The 4 blocks in q (plane form) encrypted in place under rk
 * (CUDA_BS_RK_WORDS words). */
KD_HOSTDEV void kd_bs_encrypt(uint64_t q[8], const uint64_t *rk)
{
    mpce_bs_ortho(q);
    for (unsigned i = 0; i < 8; i++)
        q[i] ^= rk[i];
    for (unsigned r = 1; r < CUDA_AES_ROUNDS; r++) {
        mpce_bs_sbox(q, 1);
        for (unsigned i = 0; i < 8; i++)
            q[i] = mpce_bs_shift_rows_word(q[i]);
        mpce_bs_mix_columns(q, 1);
        for (unsigned i = 0; i < 8; i++)
            q[i] ^= rk[8 * r + i];
    }
    mpce_bs_sbox(q, 1);
    for (unsigned i = 0; i < 8; i++)
        q[i] = mpce_bs_shift_rows_word(q[i]) ^ rk[8 * CUDA_AES_ROUNDS + i];
    mpce_bs_ortho(q);
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
    mpce_bs_ortho(q);
    for (unsigned i = 0; i < 8; i++)
        q[i] ^= KD_RK(i);
    for (unsigned r = 1; r < CUDA_AES_ROUNDS; r++) {
        mpce_bs_sbox(q, 1);
        for (unsigned i = 0; i < 8; i++)
            q[i] = mpce_bs_shift_rows_word(q[i]);
        mpce_bs_mix_columns(q, 1);
        for (unsigned i = 0; i < 8; i++)
            q[i] ^= KD_RK(8 * r + i);
    }
    mpce_bs_sbox(q, 1);
    for (unsigned i = 0; i < 8; i++)
        q[i] = mpce_bs_shift_rows_word(q[i]) ^ KD_RK(8 * CUDA_AES_ROUNDS + i);
    mpce_bs_ortho(q);
#undef KD_RK
}

/* The bitsliced schedule: each round key in plane form, the same key in all
 * 4 block positions. */
KD_HOSTDEV void kd_bs_expand(const uint8_t key[16], uint64_t rk[CUDA_BS_RK_WORDS])
{
    uint32_t w[CUDA_TT_RK_WORDS];
    mpce_aes_expand_words(key, w);
    for (unsigned r = 0; r <= CUDA_AES_ROUNDS; r++) {
        uint64_t *p = rk + 8 * r;
        for (unsigned b = 0; b < 4; b++)
            mpce_bs_pack_block(p, b, w + 4 * r);
        mpce_bs_ortho(p);
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
        const uint32_t s = mpce_bs_sub_word(x) & 0xffu;
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
