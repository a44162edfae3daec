/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel dialect: what a kernel body of the cuda backend may use, so
 * that one body compiles twice, with nvcc for the GPU (the .cu files) and
 * as plain C11 over an emulated grid (tests/test_cuda_emu.c), which is how
 * the kernels' logic is tested on machines without a GPU.
 *
 * The one rule a body follows: it is a sequence of thread sections,
 *
 *     KD_THREADS { ... per-thread code, thread index kd_tid ... }
 *     KD_SYNC();
 *     KD_THREADS { ... }
 *
 * On the GPU a section is the thread's own code and KD_SYNC() is
 * __syncthreads(). Emulated, a section is a loop over the block's threads
 * (last first), so each section ends with every thread of the block past
 * it: that is the barrier, and KD_SYNC() is a marker, which the emulation
 * checks is there between any two sections. For the two to agree nothing
 * thread-private may live across a KD_SYNC() (declare it inside a section;
 * what must survive goes through KD_SHARED memory), threads of one section
 * do not communicate (they would need a barrier on the GPU anyway), and a
 * thread leaves a section early with `continue` (both a for loop), never
 * with `return`.
 *
 * Shared memory is declared with KD_SHARED at the top of the kernel, with a
 * size fixed at compile time: emulated it is the kernel function's locals,
 * one block running at a time.
 */
#ifndef MPCE_CUDA_KD_H
#define MPCE_CUDA_KD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__

#define KD_DEVICE static __device__ __forceinline__
/* Also compiled for the host: key schedules and tables are built there. */
#define KD_HOSTDEV static __host__ __device__ inline
#define KD_KERNEL(name, ...) static __global__ void name(__VA_ARGS__)
#define KD_SHARED __shared__
#define KD_RESTRICT __restrict__
#define KD_BID ((size_t)blockIdx.x)
#define KD_BDIM ((unsigned)blockDim.x)
#define KD_THREADS for (unsigned kd_tid = threadIdx.x, kd_once = 1; kd_once; kd_once = 0)
#define KD_SYNC() __syncthreads()
#define KD_MULHI64(a, b) __umul64hi((a), (b))
/* A one-dimensional grid of exactly nblocks blocks (x takes up to 2^31 - 1,
 * more than any call here needs), so that a kernel without an index guard,
 * such as one block per NTT row, never meets a block past its data; no
 * launch at all for 0 blocks, which CUDA refuses. */
#define KD_LAUNCH(kern, nblocks, nthreads, stream, ...)                                    \
    do {                                                                                   \
        const size_t kd_nb_ = (nblocks);                                                   \
        if (kd_nb_ != 0)                                                                   \
            kern<<<(unsigned)kd_nb_, (nthreads), 0, (stream)>>>(__VA_ARGS__);              \
    } while (0)

#else /* emulated: plain C11 */

#define KD_DEVICE static inline
#define KD_HOSTDEV static inline
#include <stdio.h>
#include <stdlib.h>
/* The emulation checks the dialect's rule that the GPU would not: two
 * sections of a block with no KD_SYNC() between them (each emulated section
 * ends with every thread past it, so a missing barrier would go unseen
 * here and race there). */
struct kd_sync {
    unsigned sections;
    int synced;
};
struct kd_grid {
    size_t bid;
    unsigned bdim;
    struct kd_sync *sync;
};
static inline unsigned kd_section_begin(const struct kd_grid *g, const char *file, int line)
{
    if (g->sync->sections++ > 0 && !g->sync->synced) {
        fprintf(stderr, "%s:%d: a kernel section follows another without KD_SYNC(): on the "
                "GPU its threads would race with the previous section's\n", file, line);
        abort();
    }
    g->sync->synced = 0;
    return g->bdim;
}
#define KD_KERNEL(name, ...) static void name(const struct kd_grid *kd_g, __VA_ARGS__)
#define KD_SHARED
#define KD_RESTRICT restrict
#define KD_BID (kd_g->bid)
#define KD_BDIM (kd_g->bdim)
/* Last thread first: threads of one section that communicate (they would
 * need a barrier on the GPU) then disagree with the GPU's any-order too. */
#define KD_THREADS                                                                         \
    for (unsigned kd_tid = kd_section_begin(kd_g, __FILE__, __LINE__); kd_tid-- > 0;)
#define KD_SYNC() ((void)(kd_g->sync->synced = 1))
#define KD_MULHI64(a, b) ((uint64_t)(((unsigned __int128)(a) * (b)) >> 64))
/* A grid dimension the GPU would not take is no reason to stop here: the
 * emulation runs any number of blocks, one after the other. */
#define KD_LAUNCH(kern, nblocks, nthreads, stream, ...)                                    \
    do {                                                                                   \
        struct kd_sync kd_s_;                                                              \
        struct kd_grid kd_g_ = {0, (nthreads), &kd_s_};                                    \
        (void)(stream);                                                                    \
        for (kd_g_.bid = 0; kd_g_.bid < (size_t)(nblocks); kd_g_.bid++) {                 \
            kd_s_ = (struct kd_sync){0, 0};                                                \
            kern(&kd_g_, __VA_ARGS__);                                                     \
        }                                                                                  \
    } while (0)

#endif

/* ---- helpers every body may use ---- */

KD_HOSTDEV uint32_t kd_load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

KD_HOSTDEV void kd_store_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

KD_HOSTDEV uint64_t kd_ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/* A block's four little-endian column words; word loads where the address
 * allows them (the device reads both the same way, little-endian). */
KD_DEVICE void kd_load_block(const uint8_t *p, uint32_t c[4])
{
#ifdef __CUDACC__
    /* One 128-bit load where the block is aligned (device buffers and the
     * module's own staging always are). */
    if (((uintptr_t)p & 15u) == 0) {
        const uint4 v = *(const uint4 *)(const void *)p;
        c[0] = v.x;
        c[1] = v.y;
        c[2] = v.z;
        c[3] = v.w;
        return;
    }
#endif
    if (((uintptr_t)p & 3u) == 0) {
        const uint32_t *w = (const uint32_t *)(const void *)p;
        c[0] = w[0];
        c[1] = w[1];
        c[2] = w[2];
        c[3] = w[3];
    } else {
        for (unsigned i = 0; i < 4; i++)
            c[i] = kd_load_le32(p + 4 * i);
    }
}

KD_DEVICE void kd_store_block(uint8_t *p, const uint32_t c[4])
{
#ifdef __CUDACC__
    if (((uintptr_t)p & 15u) == 0) {
        *(uint4 *)(void *)p = make_uint4(c[0], c[1], c[2], c[3]);
        return;
    }
#endif
    if (((uintptr_t)p & 3u) == 0) {
        uint32_t *w = (uint32_t *)(void *)p;
        w[0] = c[0];
        w[1] = c[1];
        w[2] = c[2];
        w[3] = c[3];
    } else {
        for (unsigned i = 0; i < 4; i++)
            kd_store_le32(p + 4 * i, c[i]);
    }
}

#endif
