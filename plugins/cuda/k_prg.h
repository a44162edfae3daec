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

/*
 * ecb and ctr differ only in where a block comes from: the input, or the
 * counter c0 + i (SPEC.md section 1). Their thread bodies are written once
 * with that step chosen by `ctr`, a constant in each kernel, so each
 * kernel compiles to its own case only.
 */
KD_DEVICE void kd_prg_block(int ctr, const uint8_t *in, uint64_t c0, size_t i, size_t n,
                            uint32_t c[4])
{
    if (ctr) {
        const uint64_t v = c0 + (uint64_t)i;
        c[0] = (uint32_t)v;
        c[1] = (uint32_t)(v >> 32);
        c[2] = c[3] = 0;
    } else if (i < n) {
        kd_load_block(in + 16 * i, c);
    } else {
        c[0] = c[1] = c[2] = c[3] = 0;
    }
}

/* ---- bitsliced ---- */

/* Thread g: blocks 4g .. 4g+3 (those below n). */
KD_DEVICE void kd_prg_bs_thread(int ctr, const uint64_t *KD_RESTRICT rk, const uint8_t *in,
                                uint64_t c0, uint8_t *out, size_t n, size_t g)
{
    if (4 * g >= n)
        return;
    uint64_t q[8];
    uint32_t c[4];
    for (unsigned b = 0; b < 4; b++) {
        kd_prg_block(ctr, in, c0, 4 * g + b, n, c);
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

KD_KERNEL(kd_prg_ecb_bs, const uint64_t *KD_RESTRICT rk, const uint8_t *in, uint8_t *out,
          size_t n)
{
    KD_THREADS
    {
        kd_prg_bs_thread(0, rk, in, 0, out, n, KD_BID * KD_BDIM + kd_tid);
    }
}

KD_KERNEL(kd_prg_ctr_bs, const uint64_t *KD_RESTRICT rk, uint64_t c0, uint8_t *out, size_t n)
{
    KD_THREADS
    {
        kd_prg_bs_thread(1, rk, NULL, c0, out, n, KD_BID * KD_BDIM + kd_tid);
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

/* Thread i: block i, through the block's shared table in copy `lane`. */
KD_DEVICE void kd_prg_tt_thread(int ctr, const uint32_t *KD_RESTRICT rk, const uint32_t *tab,
                                const uint8_t *in, uint64_t c0, uint8_t *out, size_t n,
                                size_t i, unsigned lane)
{
    if (i >= n)
        return;
    uint32_t c[4];
    kd_prg_block(ctr, in, c0, i, n, c);
    kd_tt_encrypt(c, rk, tab, lane);
    kd_store_block(out + 16 * i, c);
}

KD_KERNEL(kd_prg_ecb_tt, const uint32_t *KD_RESTRICT rk, const uint32_t *KD_RESTRICT t0,
          const uint8_t *in, uint8_t *out, size_t n)
{
    KD_SHARED uint32_t tab[256 * CUDA_TT_BANKS];
    KD_TT_LOAD(tab, t0);
    KD_THREADS
    {
        kd_prg_tt_thread(0, rk, tab, in, 0, out, n, KD_BID * KD_BDIM + kd_tid,
                         kd_tid % CUDA_TT_BANKS);
    }
}

KD_KERNEL(kd_prg_ctr_tt, const uint32_t *KD_RESTRICT rk, const uint32_t *KD_RESTRICT t0,
          uint64_t c0, uint8_t *out, size_t n)
{
    KD_SHARED uint32_t tab[256 * CUDA_TT_BANKS];
    KD_TT_LOAD(tab, t0);
    KD_THREADS
    {
        kd_prg_tt_thread(1, rk, tab, NULL, c0, out, n, KD_BID * KD_BDIM + kd_tid,
                         kd_tid % CUDA_TT_BANKS);
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
