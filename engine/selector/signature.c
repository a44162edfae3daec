/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU half of a pins file's signature: vendor, family, model, stepping
 * and the feature bits any backend dispatches on. Pins measured on one CPU
 * say nothing about another, so any difference here makes every row stale.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__linux__)
#include <sys/auxv.h>
#endif

#include "engine/selector/selector.h"

const char *mpce_signature_cpu_override;

#if defined(__x86_64__) || defined(__i386__)
static void cpu_x86(char *buf, size_t len)
{
    unsigned a, b, c, d;
    char vendor[13] = "";
    if (!__get_cpuid(0, &a, &b, &c, &d)) {
        snprintf(buf, len, "x86 (no cpuid)");
        return;
    }
    unsigned max = a;
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    __get_cpuid(1, &a, &b, &c, &d);
    unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf, stepping = a & 0xf;
    if (family == 0xf)
        family += (a >> 20) & 0xff;
    if (family == 0x6 || family >= 0xf)
        model |= ((a >> 16) & 0xf) << 4;
    unsigned c1 = c, d1 = d, b7 = 0, c7 = 0, d7 = 0, a71 = 0;
    if (max >= 7) {
        __cpuid_count(7, 0, a, b7, c7, d7);
        unsigned b_, c_, d_;
        __cpuid_count(7, 1, a71, b_, c_, d_);
    }
    /* The raw feature words: a backend may dispatch on any bit, and the
     * words are what the bits are read from. */
    snprintf(buf, len, "x86 %s family %u model %u stepping %u features %08x.%08x.%08x.%08x.%08x.%08x",
             vendor, family, model, stepping, c1, d1, b7, c7, d7, a71);
}
#endif

void mpce_signature_cpu(char *buf, size_t len)
{
    if (mpce_signature_cpu_override) {
        snprintf(buf, len, "%s", mpce_signature_cpu_override);
        return;
    }
#if defined(__x86_64__) || defined(__i386__)
    cpu_x86(buf, len);
#else
    char impl[64] = "?", part[64] = "?", variant[64] = "?";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof(line), f)) {
            char *colon = strchr(line, ':');
            if (!colon)
                continue;
            char *v = colon + 1 + strspn(colon + 1, " \t");
            v[strcspn(v, "\n")] = '\0';
            if (strncmp(line, "CPU implementer", 15) == 0)
                snprintf(impl, sizeof(impl), "%s", v);
            else if (strncmp(line, "CPU part", 8) == 0)
                snprintf(part, sizeof(part), "%s", v);
            else if (strncmp(line, "CPU variant", 11) == 0)
                snprintf(variant, sizeof(variant), "%s", v);
        }
        fclose(f);
    }
    unsigned long hw = 0, hw2 = 0;
#if defined(__linux__)
    hw = getauxval(AT_HWCAP);
#ifdef AT_HWCAP2
    hw2 = getauxval(AT_HWCAP2);
#endif
#endif
    snprintf(buf, len, "%s implementer %s part %s variant %s hwcap %lx.%lx", MPCE_HOST_CPU,
             impl, part, variant, hw, hw2);
#endif
}
