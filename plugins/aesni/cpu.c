/* SPDX-License-Identifier: Apache-2.0 */
/* CPUID probing: what the CPU has and the OS has enabled. */
#include "config.h"

#include <cpuid.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/aesni/aesni.h"
#include "plugins/common/cpu_module.h"

static struct aesni_cpu raw;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* MPCENGINE_AESNI_DISABLE=avx512,vaes,... hides features, so the refusal
 * paths (a CPU without AVX-512) can be exercised on any machine, under
 * the rules of plugins/common/cpu_module.h. */
void aesni_cpu_masked(const struct mpce_host *host, struct aesni_cpu *cpu, char *masked,
                      size_t masked_len)
{
    static const struct mpce_cpu_flag names[] = {
        {"aes", offsetof(struct aesni_cpu, aes)},
        {"avx2", offsetof(struct aesni_cpu, avx2)},
        {"vaes", offsetof(struct aesni_cpu, vaes)},
        {"avx512", offsetof(struct aesni_cpu, avx512f)},
        {"avx512f", offsetof(struct aesni_cpu, avx512f)},
        {"avx512dq", offsetof(struct aesni_cpu, avx512dq)},
        {"avx512bw", offsetof(struct aesni_cpu, avx512bw)},
        {"avx512vl", offsetof(struct aesni_cpu, avx512vl)},
        {"ifma", offsetof(struct aesni_cpu, avx512ifma)},
        {"avx512ifma", offsetof(struct aesni_cpu, avx512ifma)},
    };

    *cpu = *aesni_cpu_raw();
    mpce_cpu_mask(host, "MPCENGINE_AESNI_DISABLE", names, sizeof(names) / sizeof(names[0]), cpu,
                  masked, masked_len);
    if (!cpu->aes)
        cpu->vaes = 0;
    /* Everything 512-bit needs AVX-512F. */
    if (!cpu->avx512f)
        cpu->avx512dq = cpu->avx512bw = cpu->avx512vl = cpu->avx512ifma = 0;
}

static void probe(void)
{
    struct aesni_cpu *const cpu = &raw;
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return;
    int aes = (c >> 25) & 1, sse41 = (c >> 19) & 1, osxsave = (c >> 27) & 1;
    int avx = (c >> 28) & 1;
    cpu->aes = aes && sse41;
    uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    int os_ymm = (xcr0 & 0x6) == 0x6;
    int os_zmm = (xcr0 & 0xe6) == 0xe6;
    if (__get_cpuid_max(0, NULL) < 7)
        return;
    __cpuid_count(7, 0, a, b, c, d);
    cpu->avx2 = avx && os_ymm && ((b >> 5) & 1);
    cpu->vaes = cpu->aes && os_ymm && ((c >> 9) & 1);
    cpu->avx512f = os_zmm && ((b >> 16) & 1);
    cpu->avx512dq = cpu->avx512f && ((b >> 17) & 1);
    cpu->avx512ifma = cpu->avx512f && ((b >> 21) & 1);
    cpu->avx512bw = cpu->avx512f && ((b >> 30) & 1);
    cpu->avx512vl = cpu->avx512f && ((b >> 31) & 1);
}

const struct aesni_cpu *aesni_cpu_raw(void)
{
    pthread_once(&once, probe);
    return &raw;
}

void aesni_cpu_describe(const struct aesni_cpu *f, const char *masked, char *buf, size_t len)
{
    static const struct mpce_cpu_flag labels[] = {
        {"AES-NI", offsetof(struct aesni_cpu, aes)},
        {"AVX2", offsetof(struct aesni_cpu, avx2)},
        {"VAES", offsetof(struct aesni_cpu, vaes)},
        {"AVX-512F", offsetof(struct aesni_cpu, avx512f)},
        {"DQ", offsetof(struct aesni_cpu, avx512dq)},
        {"BW", offsetof(struct aesni_cpu, avx512bw)},
        {"VL", offsetof(struct aesni_cpu, avx512vl)},
        {"IFMA", offsetof(struct aesni_cpu, avx512ifma)},
    };

    mpce_cpu_describe(labels, sizeof(labels) / sizeof(labels[0]), f, masked, buf, len);
}
