/* SPDX-License-Identifier: Apache-2.0 */
/* The aesni module's descriptor: every implementation with the CPU features
 * it needs; probes refuse what this CPU (or MPCENGINE_AESNI_DISABLE) lacks. */
#include "config.h"

#include "plugins/aesni/aesni.h"
#include "plugins/common/cpu_module.h"
#include "plugins/common/skeleton_knobs.h"

MPCE_CPU_MODULE_GLUE(aesni, "MPCENGINE_AESNI_DISABLE", "none of AES-NI/AVX2/VAES/AVX-512")

/* The whole module needs AES-NI; asked before init, so it reads the mask
 * itself. */
static int probe_plugin(const struct mpce_host *host, char *why, size_t len)
{
    struct aesni_module m = {.host = host};
    aesni_cpu_masked(host, &m.cpu, m.masked, sizeof(m.masked));
    return m.cpu.aes ? 0
                     : aesni_refuse(&m, why, len, aesni_cpu_raw()->aes, "AES-NI/SSE4.1", NULL);
}

static int probe_vaes256(void *module_state, char *why, size_t len)
{
    const struct aesni_module *m = module_state;
    return aesni_cpu_vaes256(&m->cpu)
               ? 0
               : aesni_refuse(m, why, len, aesni_cpu_vaes256(aesni_cpu_raw()), "VAES with AVX2",
                              NULL);
}

static int probe_vaes512(void *module_state, char *why, size_t len)
{
    const struct aesni_module *m = module_state;
    return aesni_cpu_vaes512(&m->cpu)
               ? 0
               : aesni_refuse(m, why, len, aesni_cpu_vaes512(aesni_cpu_raw()),
                              "VAES with AVX-512F/BW", NULL);
}

static int probe_avx512(void *module_state, char *why, size_t len)
{
    const struct aesni_module *m = module_state;
    const struct aesni_cpu *raw = aesni_cpu_raw();
    return (m->cpu.avx512f && m->cpu.avx512dq && m->cpu.avx512vl)
               ? 0
               : aesni_refuse(m, why, len, raw->avx512f && raw->avx512dq && raw->avx512vl,
                              "AVX-512F/DQ/VL", NULL);
}

static int probe_ifma(void *module_state, char *why, size_t len)
{
    const struct aesni_module *m = module_state;
    const struct aesni_cpu *raw = aesni_cpu_raw();
    return (m->cpu.avx512ifma && m->cpu.avx512vl)
               ? 0
               : aesni_refuse(m, why, len, raw->avx512ifma && raw->avx512vl, "AVX-512 IFMA/VL",
                              NULL);
}

/* Every NTT kernel of this module checks its input as it reads it, each
 * word before anything overwrites it, so in place too (ntt_kernels.h,
 * ntt.c's scalar rows). */
#define NTT_CHECKS(prim)                                                                   \
    ((prim) == MPCE_PRIM_NTT ? MPCE_IMPL_CHECKS_NTT_INPUT | MPCE_IMPL_CHECKS_NTT_IN_PLACE : 0u)

#define IMPL(var, prim, nm, prio, table, pr, sv, nk, kl)                                   \
    MPCE_CPU_IMPL(var, prim, nm, MPCE_CLASS_SIMD, prio,                                    \
                  MPCE_IMPL_CONSTANT_TIME | NTT_CHECKS(prim), table, pr, sv, nk, kl)

/* ymm below zmm by default: on some CPUs zmm down-clocks; the selector
 * measures both, so both are registered. */
IMPL(prg_ni, MPCE_PRIM_PRG, "prg-aesni", 300, &aesni_prg_ni_ops, NULL, NULL, 0, NULL);
IMPL(prg_vaes256, MPCE_PRIM_PRG, "prg-aesni-vaes256", 305, &aesni_prg_vaes256_ops,
     probe_vaes256, NULL, 0, NULL);
IMPL(prg_vaes512, MPCE_PRIM_PRG, "prg-aesni-vaes512", 310, &aesni_prg_vaes512_ops,
     probe_vaes512, NULL, 0, NULL);
/* IFMA (52-bit products) serves only moduli below 2^50: it says so before
 * any state is built, and "auto" moves on to the next implementation. */
IMPL(ntt_avx512, MPCE_PRIM_NTT, "ntt-aesni-avx512", 300, &aesni_ntt_avx512_ops, probe_avx512,
     NULL, 0, NULL);
IMPL(ntt_ifma, MPCE_PRIM_NTT, "ntt-aesni-ifma", 310, &aesni_ntt_ifma_ops, probe_ifma,
     aesni_ntt_ifma_serves, 0, NULL);
IMPL(lpn_aesni, MPCE_PRIM_LPN, "lpn-aesni", 300, &aesni_lpn_ops, NULL, NULL,
     MPCE_LPN_N_KNOBS, mpce_lpn_skeleton_knobs);
IMPL(dpf_aesni, MPCE_PRIM_DPF, "dpf-aesni", 300, &aesni_dpf_ops, NULL, NULL,
     MPCE_DPF_KNOB_KEY_PREFETCH, mpce_dpf_accel_knobs);

static const struct mpce_impl *const impls[] = {
    &prg_ni, &prg_vaes256, &prg_vaes512, &ntt_avx512, &ntt_ifma, &lpn_aesni, &dpf_aesni,
};

MPCE_CPU_PLUGIN(aesni, "aesni", probe_plugin, impls)
