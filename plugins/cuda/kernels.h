/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the cuda backend's host code (plain C) knows of its kernels: the
 * launchers' arguments and prototypes. The launchers themselves are written
 * once in the kernel dialect (k_*.h) and compiled by nvcc (*.cu, extern
 * "C") or, for tests/test_cuda_emu.c, as static C functions over the
 * emulated grid (KD_EMULATE). Every pointer a launcher takes is a device
 * address; every launch goes on the stream given and returns at once.
 */
#ifndef MPCE_CUDA_KERNELS_H
#define MPCE_CUDA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
typedef cudaStream_t cudak_stream;
#define KD_LAUNCHER extern "C" __attribute__((visibility("hidden")))
#else
typedef void *cudak_stream;
#if defined(KD_EMULATE)
#define KD_LAUNCHER static
#else
#define KD_LAUNCHER
#endif
#endif

/* A PRG context's schedules in device memory. */
struct cudak_prg_keys {
    int ttable;             /* 0: bitsliced schedules, 1: T-table schedules */
    unsigned m;             /* keys */
    const void *rk;         /* m schedules of CUDA_BS_RK_WORDS uint64 or CUDA_TT_RK_WORDS uint32 */
    const uint32_t *t0;     /* T-table variant: T0, 256 words */
};

/* One distinct NTT modulus (the Harvey tables' scalars). */
struct cudak_ntt_mod {
    uint64_t q;
    uint64_t ninv, ninv_shoup;
    uint64_t last_w, last_w_shoup;
    uint64_t bar_mu;
    uint64_t bar_shift;
};

/* An NTT context in device memory: words holds, per distinct modulus j,
 * w, w_shoup, iw, iw_shoup (n words each) at words + 4 * n * j; row l of
 * a polynomial uses modulus rowmod[l]. */
struct cudak_ntt {
    size_t n;
    size_t l;
    const struct cudak_ntt_mod *mods;
    const uint64_t *words;
    const uint32_t *rowmod;
};

/* A DPF context: domain bits, group (0 bytes, 1 u64) and the bitsliced
 * schedules of kL then kR (2 * CUDA_BS_RK_WORDS words). */
struct cudak_dpf {
    unsigned bits, group;
    const uint64_t *rk;
};

/* Keys laid out level-major (struct mpce_dpf_batch_v1's layout): key j's
 * seed at seed + 4j, its level-i correction word at cw_s + 4 (i nkeys + j). */
struct cudak_dpf_keys {
    size_t nkeys;
    const uint32_t *seed;
    const uint8_t *party;
    const uint64_t *cw_tr;
    const uint32_t *cw_out;
    const uint32_t *cw_s;
};

/* Words of an NTT row that one block keeps in shared memory (32 KiB): rows
 * up to this long take one kernel, longer ones first (forward) or last
 * (inverse) go through one global pass per stage whose butterflies span
 * more than this. */
#define CUDAK_NTT_SMEM_WORDS 4096u

#if !defined(KD_EMULATE) || defined(__CUDACC__)
KD_LAUNCHER void cudak_prg_ecb(cudak_stream s, const struct cudak_prg_keys *k, size_t key_index,
                               const uint8_t *in, uint8_t *out, size_t n);
KD_LAUNCHER void cudak_prg_ctr(cudak_stream s, const struct cudak_prg_keys *k, size_t key_index,
                               uint64_t c0, uint8_t *out, size_t n);
KD_LAUNCHER void cudak_prg_mmo(cudak_stream s, const struct cudak_prg_keys *k,
                               const uint8_t *seeds, uint8_t *out, size_t n);
/* rows = batch * l rows of n words. */
KD_LAUNCHER void cudak_ntt_forward(cudak_stream s, const struct cudak_ntt *d, const uint64_t *in,
                                   uint64_t *out, size_t rows);
KD_LAUNCHER void cudak_ntt_inverse(cudak_stream s, const struct cudak_ntt *d, const uint64_t *in,
                                   uint64_t *out, size_t rows);
KD_LAUNCHER void cudak_ntt_mul(cudak_stream s, const struct cudak_ntt *d, const uint64_t *a,
                               const uint64_t *b, uint64_t *out, size_t rows);
/* out[o] ^= the 10 table rows of output o (SPEC.md section 3), the index
 * words read from stream (the ctr blocks of the call, already made). */
/* cudaSuccess (0) if this GPU can run the kernels, else the error. */
KD_LAUNCHER int cudak_image_check(void);
KD_LAUNCHER void cudak_lpn_fold(cudak_stream s, const uint32_t *stream, unsigned logk,
                                const uint8_t *table, uint8_t *out, size_t n);
/* n walks: item j is key j * key_step at points[j], out[j] its output. */
KD_LAUNCHER void cudak_dpf_eval(cudak_stream s, const struct cudak_dpf *d,
                                const struct cudak_dpf_keys *keys, unsigned key_step,
                                const uint64_t *points, size_t n, uint8_t *out);
/* Full-domain outputs of n subtrees of 2^sub_log leaves each (sub_log <=
 * bits, at most 32): subtree i belongs to key i / per_key and holds the
 * leaves below the node that points[i]'s high bits (the top bits - sub_log)
 * lead to; its outputs go to out + (i << sub_log) outputs. A whole key is
 * per_key = 2^(bits - sub_log) subtrees with points[i] = (i % per_key) <<
 * sub_log, so n keys' domains land one after the other; one key's range
 * is its subtrees there. roots: scratch of n nodes (16 bytes each).
 * Arguments out of range (sub_log past bits or 32, per_key or n 0) launch
 * nothing: callers check them. */
KD_LAUNCHER void cudak_dpf_subtrees(cudak_stream s, const struct cudak_dpf *d,
                                    const struct cudak_dpf_keys *keys, size_t per_key,
                                    const uint64_t *points, size_t n, unsigned sub_log,
                                    uint8_t *roots, uint8_t *out);
/* n key pairs (gen): per pair 64 seed-correction slots of 4 words, the tRCW
 * bits and the output correction (4 words). */
KD_LAUNCHER void cudak_dpf_gen(cudak_stream s, const struct cudak_dpf *d, size_t n,
                               const uint64_t *alpha, const uint32_t *beta, const uint32_t *s0,
                               const uint32_t *s1, uint32_t *cws, uint64_t *trs, uint32_t *cwout);
#endif

#endif
