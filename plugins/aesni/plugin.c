/* The aesni module's descriptor: every implementation with the CPU features
 * it needs; probes refuse what this CPU (or MPCENGINE_AESNI_DISABLE) lacks. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>

#include "plugins/aesni/aesni.h"

const struct mpce_host *aesni_host;

static int refuse(char *why, size_t len, const char *missing)
{
    char have[160];
    aesni_cpu_describe(have, sizeof(have));
    snprintf(why, len, "this CPU lacks %s (has: %s)", missing, have[0] ? have : "none of them");
    return 1;
}

static int probe_plugin(const struct mpce_host *host, char *why, size_t len)
{
    return aesni_cpu()->aes ? 0 : refuse(why, len, "AES-NI/SSE4.1");
}

static int probe_vaes256(const struct mpce_host *host, char *why, size_t len)
{
    const struct aesni_cpu *f = aesni_cpu();
    return (f->vaes && f->avx2) ? 0 : refuse(why, len, "VAES with AVX2");
}

static int probe_vaes512(const struct mpce_host *host, char *why, size_t len)
{
    const struct aesni_cpu *f = aesni_cpu();
    return (f->vaes && f->avx512f && f->avx512bw) ? 0 : refuse(why, len, "VAES with AVX-512F/BW");
}

static int probe_avx512(const struct mpce_host *host, char *why, size_t len)
{
    const struct aesni_cpu *f = aesni_cpu();
    return (f->avx512f && f->avx512dq && f->avx512vl) ? 0 : refuse(why, len, "AVX-512F/DQ/VL");
}

static int probe_ifma(const struct mpce_host *host, char *why, size_t len)
{
    const struct aesni_cpu *f = aesni_cpu();
    return (f->avx512ifma && f->avx512vl) ? 0 : refuse(why, len, "AVX-512 IFMA/VL");
}

#define IMPL(var, prim, nm, prio, vt, pr)                                                      \
    static const struct mpce_impl var = {                                                  \
        .struct_size = sizeof(struct mpce_impl),                                          \
        .primitive = prim,                                                                 \
        .name = nm,                                                                        \
        .priority = prio,                                                                  \
        .flags = MPCE_IMPL_CONSTANT_TIME,                                                  \
        .vtable = vt,                                                                      \
        .probe = pr,                                                                       \
    }

/* ymm below zmm by default: on some CPUs zmm down-clocks; the selector of a
 * later issue measures both, so both are registered. */
IMPL(prg_ni, MPCE_PRIM_PRG, "prg-aesni", 300, &aesni_prg_ni_vtable, NULL);
IMPL(prg_vaes256, MPCE_PRIM_PRG, "prg-aesni-vaes256", 305, &aesni_prg_vaes256_vtable,
     probe_vaes256);
IMPL(prg_vaes512, MPCE_PRIM_PRG, "prg-aesni-vaes512", 310, &aesni_prg_vaes512_vtable,
     probe_vaes512);
/* IFMA (52-bit products) serves only moduli below 2^50: its ctx_new refuses
 * larger ones with MPCE_ERR_NOIMPL and "auto" falls back to the next. */
IMPL(ntt_avx512, MPCE_PRIM_NTT, "ntt-aesni-avx512", 300, &aesni_ntt_avx512_vtable,
     probe_avx512);
IMPL(ntt_ifma, MPCE_PRIM_NTT, "ntt-aesni-ifma", 310, &aesni_ntt_ifma_vtable, probe_ifma);
IMPL(lpn_aesni, MPCE_PRIM_LPN, "lpn-aesni", 300, &aesni_lpn_vtable, NULL);
IMPL(dpf_aesni, MPCE_PRIM_DPF, "dpf-aesni", 300, &aesni_dpf_vtable, NULL);

static const struct mpce_impl *const impls[] = {
    &prg_ni, &prg_vaes256, &prg_vaes512, &ntt_avx512, &ntt_ifma, &lpn_aesni, &dpf_aesni,
};

/* The version string also says what the CPU probe found, so listings show
 * what the module registered and why it left anything out. */
static char version[256];
static pthread_once_t version_once = PTHREAD_ONCE_INIT;

static void make_version(void)
{
    char have[160];
    aesni_cpu_describe(have, sizeof(have));
    snprintf(version, sizeof(version), "%s, CPU: %s", PACKAGE_VERSION,
             have[0] ? have : "none of AES-NI/AVX2/VAES/AVX-512");
}

static struct mpce_plugin plugin = {
    .struct_size = sizeof(struct mpce_plugin),
    .abi_major = MPCE_PLUGIN_ABI_MAJOR,
    .abi_minor = MPCE_PLUGIN_ABI_MINOR,
    .name = "aesni",
    .version = version,
    .probe = probe_plugin,
    .n_impls = sizeof(impls) / sizeof(impls[0]),
    .impls = impls,
};

MPCE_API const struct mpce_plugin *mpce_plugin_entry_v1(const struct mpce_host *host);

const struct mpce_plugin *mpce_plugin_entry_v1(const struct mpce_host *host)
{
    aesni_host = host;
    pthread_once(&version_once, make_version);
    return &plugin;
}
