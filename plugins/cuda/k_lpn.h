/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The LPN fold (SPEC.md section 3) in the kernel dialect: one thread per
 * output, its 10 index words read from the call's ctr stream (made before
 * by the PRG kernel into device memory), its 10 rows gathered from the
 * table in device memory. Words: output o < L4 uses words 10o .. 10o+9;
 * tail output t uses the three blocks from block 5*L4/2 + 3t, that is
 * words 10*L4 + 12t onwards.
 */
#ifndef MPCE_CUDA_K_LPN_H
#define MPCE_CUDA_K_LPN_H

#include "plugins/cuda/kd.h"
#include "plugins/cuda/kernels.h"

#define KD_LPN_THREADS 256u
#define KD_LPN_D 10u

KD_KERNEL(kd_lpn_fold_k, const uint32_t *KD_RESTRICT stream, uint32_t mask,
          const uint8_t *KD_RESTRICT table, uint8_t *out, size_t n)
{
    KD_THREADS
    {
        const size_t o = KD_BID * KD_BDIM + kd_tid;
        if (o >= n)
            continue;
        const size_t l4 = n - n % 4;
        const size_t w0 = o < l4 ? KD_LPN_D * o : KD_LPN_D * l4 + 12 * (o - l4);
        uint32_t acc[4];
        kd_load_block(out + 16 * o, acc);
        for (unsigned d = 0; d < KD_LPN_D; d++) {
            uint32_t r[4];
            kd_load_block(table + 16 * (size_t)(stream[w0 + d] & mask), r);
            for (unsigned k = 0; k < 4; k++)
                acc[k] ^= r[k];
        }
        kd_store_block(out + 16 * o, acc);
    }
}

KD_LAUNCHER void cudak_lpn_fold(cudak_stream s, const uint32_t *stream, unsigned logk,
                                const uint8_t *table, uint8_t *out, size_t n)
{
    const uint32_t mask = (uint32_t)(((uint64_t)1 << logk) - 1);
    KD_LAUNCH(kd_lpn_fold_k, kd_ceil_div(n, KD_LPN_THREADS), KD_LPN_THREADS, s, stream, mask,
              table, out, n);
}

#endif
