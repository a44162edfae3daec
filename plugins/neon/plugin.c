/* SPDX-License-Identifier: Apache-2.0 */
/* The neon module's descriptor: every implementation with the CPU features
 * it needs; probes refuse what this core (or MPCENGINE_NEON_DISABLE) lacks,
 * and the soft backend serves those primitives instead. */
#include "config.h"

#include "plugins/common/cpu_module.h"
#include "plugins/common/skeleton_knobs.h"
#include "plugins/neon/neon.h"

MPCE_CPU_MODULE_GLUE(neon, "MPCENGINE_NEON_DISABLE", "none of ASIMD/AES/PMULL/SHA3/SVE")

/* The module needs only ASIMD (its NTT is scalar base-ISA code, and ASIMD
 * is mandatory on every AArch64 Linux system); the AES implementations ask
 * for the Crypto Extensions themselves, so a core without them (Cortex-A53
 * without the option, Raspberry Pi 4) still loads the NTT. Asked before
 * init, so it reads the mask itself. */
static int probe_plugin(const struct mpce_host *host, char *why, size_t len)
{
    struct neon_module m = {.host = host};
    neon_cpu_masked(host, &m.cpu, m.masked, sizeof(m.masked));
    return m.cpu.asimd ? 0
                       : neon_refuse(&m, why, len, neon_cpu_raw()->asimd, "ASIMD (Advanced SIMD)",
                                     NULL);
}

/* PRG, LPN and DPF all run on AESE/AESMC. */
static int probe_aes(void *module_state, char *why, size_t len)
{
    const struct neon_module *m = module_state;
    return m->cpu.aes ? 0
                      : neon_refuse(m, why, len, neon_cpu_raw()->aes,
                                    "the AES Crypto Extension (FEAT_AES)",
                                    "another implementation (soft) serves instead");
}

#define IMPL(var, prim, nm, cls, prio, table, pr, nk, kl)                                  \
    MPCE_CPU_IMPL(var, prim, nm, cls, prio, MPCE_IMPL_CONSTANT_TIME, table, pr, NULL, nk, kl)

/* The CE AES is constant time (no table, no data-dependent timing on any
 * published core), as is the NTT (branch-free lazy reductions). The NTT is
 * scalar base-ISA code (UMULH), so it is registered as portable, above
 * ntt-soft: it is the same arithmetic scheduled for AArch64's wide cores,
 * and the selector measures both anyway. */
IMPL(prg_neon, MPCE_PRIM_PRG, "prg-neon", MPCE_CLASS_SIMD, 300, &neon_prg_ops, probe_aes, 0,
     NULL);
IMPL(ntt_neon, MPCE_PRIM_NTT, "ntt-neon", MPCE_CLASS_PORTABLE, 150, &neon_ntt_ops, NULL, 0,
     NULL);
IMPL(lpn_neon, MPCE_PRIM_LPN, "lpn-neon", MPCE_CLASS_SIMD, 300, &neon_lpn_ops, probe_aes,
     MPCE_LPN_N_KNOBS, mpce_lpn_skeleton_knobs);
IMPL(dpf_neon, MPCE_PRIM_DPF, "dpf-neon", MPCE_CLASS_SIMD, 300, &neon_dpf_ops, probe_aes,
     MPCE_DPF_KNOB_KEY_PREFETCH, mpce_dpf_accel_knobs);

static const struct mpce_impl *const impls[] = {&prg_neon, &ntt_neon, &lpn_neon, &dpf_neon};

MPCE_CPU_PLUGIN(neon, "neon", probe_plugin, impls)
