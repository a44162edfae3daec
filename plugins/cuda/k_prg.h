/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PRG kernels (SPEC.md section 1) and their launchers, in the kernel
 * dialect: compiled by nvcc in prg.cu and as C by tests/test_cuda_emu.c.
 * Bitsliced: one thread per group of 4 blocks (4 seeds and one key for
 * mmo). T-table: one thread per block.
 */
#ifndef MPCE_CUDA_K_PRG_H
#define MPCE_CUDA_K_PRG_H

#include "plugins/cuda/k_aes.h"
#include "plugins/cuda/kernels.h"

/* ---- bitsliced ---- */

KD_KERNEL(kd_prg_ecb_bs, const uint64_t *KD_RESTRICT rk, const uint8_t *in, uint8_t *out,
          size_t n)
{
    KD_THREADS
    {
        const size_t g = KD_BID * KD_BDIM + kd_tid;
        if (4 * g >= n)
            continue;
        uint64_t q[8];
        uint32_t c[4];
        for (unsigned b = 0; b < 4; b++) {
            const size_t i = 4 * g + b;
            if (i < n)
                kd_load_block(in + 16 * i, c);
            else
                c[0] = c[1] = c[2] = c[3] = 0;
            mpce_bs_pack_block(q, b, c);
        }
        kd_bs_encrypt(q, rk);
        for (unsigned b = 0; b < 4; b++) {
            const size_t i = 4 * g + b;
            if (i >= n)
                break;
            mpce_bs_unpack_block(q, b, c);
            kd_store_block(out + 16 * i, c);
        }
    }
}

KD_KERNEL(kd_prg_ctr_bs, const uint64_t *KD_RESTRICT rk, uint64_t c0, uint8_t *out, size_t n)
{
    KD_THREADS
    {
        const size_t g = KD_BID * KD_BDIM + kd_tid;
        if (4 * g >= n)
            continue;
        uint64_t q[8];
        for (unsigned b = 0; b < 4; b++) {
            const uint64_t ctr = c0 + (uint64_t)(4 * g + b);
            const uint32_t c[4] = {(uint32_t)ctr, (uint32_t)(ctr >> 32), 0, 0};
            mpce_bs_pack_block(q, b, c);
        }
        kd_bs_encrypt(q, rk);
        for (unsigned b = 0; b < 4; b++) {
            const size_t i = 4 * g + b;
            if (i >= n)
                break;
            uint32_t c[4];
            mpce_bs_unpack_block(q, b, c);
            kd_store_block(out + 16 * i, c);
        }
    }
}

/* Thread t: seeds 4g .. 4g+3 under key j, g = t / m, j = t % m. */
KD_KERNEL(kd_prg_mmo_bs, const uint64_t *KD_RESTRICT rk, unsigned m, const uint8_t *seeds,
          uint8_t *out, size_t n)
{
    KD_THREADS
    {
        const size_t t = KD_BID * KD_BDIM + kd_tid;
        const size_t g = t / m;
        const unsigned j = (unsigned)(t % m);
        if (4 * g >= n)
            continue;
        uint64_t q[8];
        uint32_t s[4][4];
        for (unsigned b = 0; b < 4; b++) {
            const size_t i = 4 * g + b;
            if (i < n)
                kd_load_block(seeds + 16 * i, s[b]);
            else
                s[b][0] = s[b][1] = s[b][2] = s[b][3] = 0;
            mpce_bs_pack_block(q, b, s[b]);
        }
        kd_bs_encrypt(q, rk + (size_t)CUDA_BS_RK_WORDS * j);
        for (unsigned b = 0; b < 4; b++) {
            const size_t i = 4 * g + b;
            if (i >= n)
                break;
            uint32_t c[4];
            mpce_bs_unpack_block(q, b, c);
            for (unsigned k = 0; k < 4; k++)
                c[k] ^= s[b][k];
            kd_store_block(out + 16 * (i * m + j), c);
        }
    }
}

/* ---- T-table ---- */

/* Section 1 of every T-table kernel: the block's shared copy of T0 in
 * every bank. */
#define KD_TT_LOAD(tab, t0)                                                                \
    KD_THREADS                                                                             \
    {                                                                                      \
        for (unsigned e = kd_tid; e < 256u * CUDA_TT_BANKS; e += KD_BDIM)                  \
            (tab)[e] = (t0)[e / CUDA_TT_BANKS];                                            \
    }                                                                                      \
    KD_SYNC()

KD_KERNEL(kd_prg_ecb_tt, const uint32_t *KD_RESTRICT rk, const uint32_t *KD_RESTRICT t0,
          const uint8_t *in, uint8_t *out, size_t n)
{
    KD_SHARED uint32_t tab[256 * CUDA_TT_BANKS];
    KD_TT_LOAD(tab, t0);
    KD_THREADS
    {
        const size_t i = KD_BID * KD_BDIM + kd_tid;
        if (i >= n)
            continue;
        uint32_t c[4];
        kd_load_block(in + 16 * i, c);
        kd_tt_encrypt(c, rk, tab, kd_tid % CUDA_TT_BANKS);
        kd_store_block(out + 16 * i, c);
    }
}

KD_KERNEL(kd_prg_ctr_tt, const uint32_t *KD_RESTRICT rk, const uint32_t *KD_RESTRICT t0,
          uint64_t c0, uint8_t *out, size_t n)
{
    KD_SHARED uint32_t tab[256 * CUDA_TT_BANKS];
    KD_TT_LOAD(tab, t0);
    KD_THREADS
    {
        const size_t i = KD_BID * KD_BDIM + kd_tid;
        if (i >= n)
            continue;
        const uint64_t ctr = c0 + (uint64_t)i;
        uint32_t c[4] = {(uint32_t)ctr, (uint32_t)(ctr >> 32), 0, 0};
        kd_tt_encrypt(c, rk, tab, kd_tid % CUDA_TT_BANKS);
        kd_store_block(out + 16 * i, c);
    }
}

KD_KERNEL(kd_prg_mmo_tt, const uint32_t *KD_RESTRICT rk, const uint32_t *KD_RESTRICT t0,
          unsigned m, const uint8_t *seeds, uint8_t *out, size_t n)
{
    KD_SHARED uint32_t tab[256 * CUDA_TT_BANKS];
    KD_TT_LOAD(tab, t0);
    KD_THREADS
    {
        const size_t t = KD_BID * KD_BDIM + kd_tid;
        const size_t i = t / m;
        const unsigned j = (unsigned)(t % m);
        if (i >= n)
            continue;
        uint32_t s[4], c[4];
        kd_load_block(seeds + 16 * i, s);
        for (unsigned k = 0; k < 4; k++)
            c[k] = s[k];
        kd_tt_encrypt(c, rk + (size_t)CUDA_TT_RK_WORDS * j, tab, kd_tid % CUDA_TT_BANKS);
        for (unsigned k = 0; k < 4; k++)
            c[k] ^= s[k];
        kd_store_block(out + 16 * (i * m + j), c);
    }
}

/* ---- launchers ---- */

#define KD_PRG_THREADS 256u

KD_LAUNCHER void cudak_prg_ecb(cudak_stream s, const struct cudak_prg_keys *k, size_t key_index,
                               const uint8_t *in, uint8_t *out, size_t n)
{
    if (k->ttable)
        KD_LAUNCH(kd_prg_ecb_tt, kd_ceil_div(n, KD_PRG_THREADS), KD_PRG_THREADS, s,
                  (const uint32_t *)k->rk + CUDA_TT_RK_WORDS * key_index, k->t0, in, out, n);
    else
        KD_LAUNCH(kd_prg_ecb_bs, kd_ceil_div(kd_ceil_div(n, 4), KD_PRG_THREADS), KD_PRG_THREADS,
                  s, (const uint64_t *)k->rk + CUDA_BS_RK_WORDS * key_index, in, out, n);
}

KD_LAUNCHER void cudak_prg_ctr(cudak_stream s, const struct cudak_prg_keys *k, size_t key_index,
                               uint64_t c0, uint8_t *out, size_t n)
{
    if (k->ttable)
        KD_LAUNCH(kd_prg_ctr_tt, kd_ceil_div(n, KD_PRG_THREADS), KD_PRG_THREADS, s,
                  (const uint32_t *)k->rk + CUDA_TT_RK_WORDS * key_index, k->t0, c0, out, n);
    else
        KD_LAUNCH(kd_prg_ctr_bs, kd_ceil_div(kd_ceil_div(n, 4), KD_PRG_THREADS), KD_PRG_THREADS,
                  s, (const uint64_t *)k->rk + CUDA_BS_RK_WORDS * key_index, c0, out, n);
}

KD_LAUNCHER void cudak_prg_mmo(cudak_stream s, const struct cudak_prg_keys *k, const uint8_t *seeds,
                               uint8_t *out, size_t n)
{
    const unsigned m = k->m;
    if (k->ttable)
        KD_LAUNCH(kd_prg_mmo_tt, kd_ceil_div((uint64_t)n * m, KD_PRG_THREADS), KD_PRG_THREADS,
                  s, (const uint32_t *)k->rk, k->t0, m, seeds, out, n);
    else
        KD_LAUNCH(kd_prg_mmo_bs, kd_ceil_div(kd_ceil_div(n, 4) * m, KD_PRG_THREADS),
                  KD_PRG_THREADS, s, (const uint64_t *)k->rk, m, seeds, out, n);
}

#ifdef __CUDACC__
/* Whether this GPU can run the module's code (machine code for its
 * architecture, or PTX it can compile): cudaSuccess, or the reason. */
KD_LAUNCHER int cudak_image_check(void)
{
    struct cudaFuncAttributes a;
    return (int)cudaFuncGetAttributes(&a, kd_prg_ecb_bs);
}
#endif

#endif
