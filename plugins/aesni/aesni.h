/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The x86-64 backend: what its files share. Kernels that need an ISA live in
 * files compiled with that ISA's flags (aes_ni.c, aes_vaes256.c,
 * aes_vaes512.c, ntt_avx512.c, ntt_ifma.c); everything else is plain C and
 * only calls them after the CPU has been probed.
 */
#ifndef MPCE_AESNI_H
#define MPCE_AESNI_H

#include <stddef.h>
#include <stdint.h>

#include "mpcengine/plugin.h"
#include "plugins/common/cpu_module.h"

/* CPU features this plugin cares about, after the OS-support checks (XCR0)
 * and, in a module state, after MPCENGINE_AESNI_DISABLE has masked some off. */
struct aesni_cpu {
    int aes;        /* AES-NI + SSE4.1 */
    int avx2;       /* AVX2 with OS ymm state */
    int vaes;       /* VAES (with avx2 for ymm, avx512f for zmm) */
    int avx512f;    /* AVX-512F with OS zmm and opmask state */
    int avx512dq;
    int avx512bw;
    int avx512vl;
    int avx512ifma;
};

/* What each VAES kernel needs: one rule for its probe and for the pick of
 * the best kernel the other primitives use. */
static inline int aesni_cpu_vaes256(const struct aesni_cpu *c)
{
    return c->vaes && c->avx2;
}
static inline int aesni_cpu_vaes512(const struct aesni_cpu *c)
{
    return c->vaes && c->avx512f && c->avx512bw;
}

/* What CPUID and XCR0 say, probed once per process; thread-safe. */
const struct aesni_cpu *aesni_cpu_raw(void);

/* The module state of one engine: its host and the CPU as that engine may
 * use it (MPCENGINE_AESNI_DISABLE, read through the host under the engine's
 * environment rules, masks features off so the refusals can be tried on
 * any machine). */
struct aesni_module {
    MPCE_CPU_MODULE_FIELDS(struct aesni_cpu);
};

/* cpu = the raw features less those named by the host's
 * MPCENGINE_AESNI_DISABLE. */
void aesni_cpu_masked(const struct mpce_host *host, struct aesni_cpu *cpu, char *masked,
                      size_t masked_len);
/* "AES-NI AVX2 VAES AVX-512F ..." and what was masked, for listings. */
void aesni_cpu_describe(const struct aesni_cpu *cpu, const char *masked, char *buf, size_t len);

/* ---- AES kernels (one per ISA file) --------------------------------------
 * A schedule holds m (1..8) expanded AES-128 keys, the 11 standard round keys
 * each in the layout _mm_aesenc_si128 takes, expanded once per context by
 * aesni_sched_init (which needs only AES-NI), plus the same keys laid out in
 * lanes so that the VAES kernels load a whole ymm/zmm round key with one
 * memory operand instead of broadcasting per call. */
struct aesni_sched {
    _Alignas(64) uint8_t rk[8][176];
    /* ymm: round r of keys j and j+1 (mod m) in lanes 0, 1. */
    _Alignas(64) uint8_t rk2[8][11][32];
    /* zmm: round r of keys j .. j+3 (mod m) in lanes 0 .. 3. */
    _Alignas(64) uint8_t rk4[8][11][64];
    /* DPF point steps: lane l holds key bit l of c (keys 0 and 1). */
    _Alignas(64) uint8_t sel2[4][11][32];
    _Alignas(64) uint8_t sel4[16][11][64];
    size_t m;
};

void aesni_sched_init(struct aesni_sched *ks, const uint8_t *keys, size_t m);

/*
 * Every kernel accepts any n (0 included), unaligned buffers and in == out.
 * The DPF kernels work on nodes: a seed with its control bit t in bit 0 of
 * byte 12 (SPEC.md section 4), keys 0 (kL) and 1 (kR) of a schedule with
 * m >= 2, and a correction word per side that carries the side's t
 * correction in that bit, so that correcting a child is one masked XOR.
 */
struct aesni_aes_kernel {
    const char *name;
    /* out[i] = AES_{key j}(in[i]) */
    void (*ecb)(const struct aesni_sched *ks, size_t j, const uint8_t *in, uint8_t *out,
                size_t n);
    /* out[i] = AES_{key j}(LE64(c0 + i mod 2^64) || 0^64) */
    void (*ctr)(const struct aesni_sched *ks, size_t j, uint64_t c0, uint8_t *out, size_t n);
    /* out[i*m + j] = AES_{key j}(seeds[i]) ^ seeds[i] */
    void (*mmo)(const struct aesni_sched *ks, const uint8_t *seeds, uint8_t *out, size_t n);
    /* child[2i+b] = G_b(clr p[i]) ^ (t(p[i]) ? cw[b] : 0) for n parents. */
    void (*dpf_expand)(const struct aesni_sched *ks, const uint8_t *parents, uint8_t *children,
                       size_t n, const uint8_t cw[2][16]);
    /* node[i] = G_{dir[i]}(clr node[i]) ^ (t(node[i]) ? cw[i] : 0), in place. */
    void (*dpf_step)(const struct aesni_sched *ks, uint8_t *nodes, const uint8_t *dir,
                     const uint8_t *cw, size_t n);
    /* Optional (NULL where a kernel lacks them): struct mpce_dpf_accel's
     * expand_leaves and walk (plugins/common/dpf_walk.h), same contracts;
     * walk's what is a group or AESNI_DPF_NODES. */
    void (*dpf_expand_leaves)(const struct aesni_sched *ks, const uint8_t *parents, uint8_t *out,
                              size_t n, const uint8_t cw[2][16],
                              const struct mpce_dpf_key_v1 *key, unsigned group, int stream);
    void (*dpf_walk)(const struct aesni_sched *ks, const struct mpce_dpf_key_v1 *const *keys,
                     size_t key_step, const uint64_t *points, size_t n, unsigned depth,
                     unsigned what, uint8_t *out);
    /* Optional: a walk of one point (aesni_dpf_walk1, which needs AVX: only
     * kernels of CPUs that have it name it). */
    void (*dpf_walk1)(const struct aesni_sched *ks, const struct mpce_dpf_key_v1 *key,
                      uint64_t point, unsigned depth, unsigned what, uint8_t *out);
    /* Optional: struct mpce_dpf_accel's walk_batch. */
    void (*dpf_walk_batch)(const struct aesni_sched *ks, const struct mpce_dpf_batch_v1 *batch,
                           size_t first, const uint64_t *points, size_t n, unsigned depth,
                           unsigned what, uint8_t *out);
};

/* dpf_walk's what for nodes (MPCE_DPF_NODES). */
#define AESNI_DPF_NODES 2u

/* One point's walk on one xmm register (aes_ni.c): its levels are a chain
 * of dependent AES calls, so a lane of a wide batch only adds to their
 * latency; a few points walk one by one here. Same contract as dpf_walk
 * for n = 1; out gets the node (AESNI_DPF_NODES) or the output in group
 * `what`. */
void aesni_dpf_walk1(const struct aesni_sched *ks, const struct mpce_dpf_key_v1 *key,
                     uint64_t point, unsigned depth, unsigned what, uint8_t *out);

extern const struct aesni_aes_kernel aesni_kernel_ni;       /* aes_ni.c */
extern const struct aesni_aes_kernel aesni_kernel_vaes256;  /* aes_vaes256.c */
extern const struct aesni_aes_kernel aesni_kernel_vaes512;  /* aes_vaes512.c */
/* The fastest kernel the module's CPU runs (vaes512 > vaes256 > ni), for
 * LPN/DPF. */
const struct aesni_aes_kernel *aesni_best_kernel(const struct aesni_module *module);

/* ---- the PRG state (prg.c), shared with lpn.c and dpf.c -------------------- */
struct aesni_prg {
    struct aesni_sched ks; /* first: the state is allocated 64-byte aligned */
    const struct aesni_aes_kernel *kernel;
};
/* The PRG ops of aesni_best_kernel(module). */
const struct mpce_prg_ops *aesni_best_prg_ops(const struct aesni_module *module);

/* ---- op tables (prg.c, ntt.c, lpn.c, dpf.c) ------------------------------- */
extern const struct mpce_prg_ops aesni_prg_ni_ops;
extern const struct mpce_prg_ops aesni_prg_vaes256_ops;
extern const struct mpce_prg_ops aesni_prg_vaes512_ops;
extern const struct mpce_ntt_ops aesni_ntt_avx512_ops;
extern const struct mpce_ntt_ops aesni_ntt_ifma_ops;
extern const struct mpce_lpn_ops aesni_lpn_ops;
extern const struct mpce_dpf_ops aesni_dpf_ops;

/* IFMA's 52-bit lazy values need every modulus below this (ntt_kernels.h). */
int aesni_ntt_ifma_serves(void *module_state, const struct mpce_params *params,
                          const struct mpce_shape *shape, char *why, size_t why_len);

#endif
