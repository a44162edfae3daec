/* SPDX-License-Identifier: Apache-2.0 */
/* HWCAP probing: what the kernel says this core has and lets user space
 * run. On AArch64 Linux the kernel, not a CPUID-like instruction, is the
 * authority: it traps the ID registers and reports only features it has
 * enabled, so getauxval(AT_HWCAP) needs no OS-support check beside it. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "plugins/common/cpu_module.h"
#include "plugins/neon/neon.h"

/* The bits of the AArch64 AT_HWCAP word (arch/arm64/include/uapi/asm/hwcap.h),
 * spelled out for C libraries whose headers predate some of them. */
#define NEON_HWCAP_ASIMD (1ul << 1)
#define NEON_HWCAP_AES (1ul << 3)
#define NEON_HWCAP_PMULL (1ul << 4)
#define NEON_HWCAP_SHA3 (1ul << 17)
#define NEON_HWCAP_SVE (1ul << 22)

static struct neon_cpu raw;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void probe(void)
{
    const unsigned long hw = getauxval(AT_HWCAP);

    raw.asimd = (hw & NEON_HWCAP_ASIMD) != 0;
    /* The AES instructions operate on vector registers: without ASIMD
     * there is no register file for them. */
    raw.aes = raw.asimd && (hw & NEON_HWCAP_AES) != 0;
    raw.pmull = raw.asimd && (hw & NEON_HWCAP_PMULL) != 0;
    raw.sha3 = raw.asimd && (hw & NEON_HWCAP_SHA3) != 0;
    raw.sve = (hw & NEON_HWCAP_SVE) != 0;
}

const struct neon_cpu *neon_cpu_raw(void)
{
    pthread_once(&once, probe);
    return &raw;
}

/* MPCENGINE_NEON_DISABLE=aes,pmull,... hides features, so the refusal paths
 * (a Cortex-A53 or Raspberry Pi 4 without the Crypto Extensions) can be
 * exercised on any machine, under the rules of
 * plugins/common/cpu_module.h. */
void neon_cpu_masked(const struct mpce_host *host, struct neon_cpu *cpu, char *masked,
                     size_t masked_len)
{
    static const struct mpce_cpu_flag names[] = {
        {"asimd", offsetof(struct neon_cpu, asimd)}, {"aes", offsetof(struct neon_cpu, aes)},
        {"pmull", offsetof(struct neon_cpu, pmull)}, {"sha3", offsetof(struct neon_cpu, sha3)},
        {"sve", offsetof(struct neon_cpu, sve)},
    };

    *cpu = *neon_cpu_raw();
    mpce_cpu_mask(host, "MPCENGINE_NEON_DISABLE", names, sizeof(names) / sizeof(names[0]), cpu,
                  masked, masked_len);
    /* The same dependency as the probe's. */
    if (!cpu->asimd)
        cpu->aes = cpu->pmull = cpu->sha3 = 0;
}

void neon_cpu_describe(const struct neon_cpu *f, const char *masked, char *buf, size_t len)
{
    static const struct mpce_cpu_flag labels[] = {
        {"ASIMD", offsetof(struct neon_cpu, asimd)}, {"AES", offsetof(struct neon_cpu, aes)},
        {"PMULL", offsetof(struct neon_cpu, pmull)}, {"SHA3", offsetof(struct neon_cpu, sha3)},
        {"SVE", offsetof(struct neon_cpu, sve)},
    };

    mpce_cpu_describe(labels, sizeof(labels) / sizeof(labels[0]), f, masked, buf, len);
}
