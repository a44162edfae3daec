/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The AArch64 backend: what its files share. Only aes_ce.c is compiled
 * with the Crypto Extensions (-march=armv8-a+crypto); everything else is
 * plain C for the base ISA and reaches AESE/AESMC code only after the
 * HWCAP probe (and MPCENGINE_NEON_DISABLE) allowed it.
 */
#ifndef MPCE_NEON_H
#define MPCE_NEON_H

#include <stddef.h>
#include <stdint.h>

#include "mpcengine/plugin.h"
#include "plugins/common/cpu_module.h"

/* CPU features this plugin reports, from getauxval(AT_HWCAP) and, in a
 * module state, after MPCENGINE_NEON_DISABLE has masked some off. Only
 * asimd and aes gate implementations; pmull, sha3 and sve are listed so
 * that a listing shows what the core has (nothing here uses them yet). */
struct neon_cpu {
    int asimd;
    int aes;   /* AESE/AESD/AESMC/AESIMC */
    int pmull; /* PMULL/PMULL2 (64x64 carry-less) */
    int sha3;  /* EOR3/RAX1/XAR/BCAX */
    int sve;
};

/* What the kernel reports, probed once per process; thread-safe. */
const struct neon_cpu *neon_cpu_raw(void);

/* The module state of one engine: its host and the CPU as that engine may
 * use it (MPCENGINE_NEON_DISABLE, read through the host under the engine's
 * environment rules, masks features off so the refusals can be tried on
 * any machine, or under qemu -cpu max, which has them all). */
struct neon_module {
    MPCE_CPU_MODULE_FIELDS(struct neon_cpu);
};

/* cpu = the raw features less those named by the host's
 * MPCENGINE_NEON_DISABLE. */
void neon_cpu_masked(const struct mpce_host *host, struct neon_cpu *cpu, char *masked,
                     size_t masked_len);
/* "ASIMD AES PMULL ..." and what was masked, for listings. */
void neon_cpu_describe(const struct neon_cpu *cpu, const char *masked, char *buf, size_t len);

/* ---- AES with the Crypto Extensions (aes_ce.c) ---------------------------
 * A schedule holds m (1..8) expanded AES-128 keys, the 11 standard round
 * keys each, expanded once per context. Every kernel accepts any n (0
 * included), unaligned buffers and in == out (ecb), and keeps
 * NEON_AES_WIDTH independent blocks in flight. The DPF kernels work on
 * nodes (seed with its control bit in bit 0 of byte 12, SPEC.md section 4)
 * with keys 0 (kL) and 1 (kR): plugins/common/dpf_walk.h's
 * struct mpce_dpf_accel contracts. */
#define NEON_AES_WIDTH 8u

struct neon_sched {
    _Alignas(64) uint8_t rk[8][176];
    size_t m;
};

void neon_sched_init(struct neon_sched *ks, const uint8_t *keys, size_t m);
/* out[i] = AES_{key j}(in[i]) */
void neon_aes_ecb(const struct neon_sched *ks, size_t j, const uint8_t *in, uint8_t *out,
                  size_t n);
/* out[i] = AES_{key j}(LE64(c0 + i mod 2^64) || 0^64) */
void neon_aes_ctr(const struct neon_sched *ks, size_t j, uint64_t c0, uint8_t *out, size_t n);
/* out[i*m + j] = AES_{key j}(seeds[i]) ^ seeds[i] */
void neon_aes_mmo(const struct neon_sched *ks, const uint8_t *seeds, uint8_t *out, size_t n);
/* child[2i+b] = G_b(clr p[i]) ^ (t(p[i]) ? cw[b] : 0) for n parents. */
void neon_dpf_expand(const struct neon_sched *ks, const uint8_t *parents, uint8_t *children,
                     size_t n, const uint8_t cw[2][16]);
/* node[i] = G_{dir[i]}(clr node[i]) ^ (t(node[i]) ? cw[i] : 0), in place. */
void neon_dpf_step(const struct neon_sched *ks, uint8_t *nodes, const uint8_t *dir,
                   const uint8_t *cw, size_t n);

/* ---- the PRG state (prg.c), shared with lpn.c and dpf.c ------------------ */
struct neon_prg {
    struct neon_sched ks; /* first: the state is allocated 64-byte aligned */
};

/* ---- op tables (prg.c, ntt.c, lpn.c, dpf.c) ------------------------------ */
extern const struct mpce_prg_ops neon_prg_ops;
extern const struct mpce_ntt_ops neon_ntt_ops;
extern const struct mpce_lpn_ops neon_lpn_ops;
extern const struct mpce_dpf_ops neon_dpf_ops;

#endif
