/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every CPU-feature module (aesni, neon) wraps around its kernels,
 * written once so that the modules cannot drift apart on the rules a user
 * relies on: the feature-mask variable (MPCENGINE_<MODULE>_DISABLE) is read
 * through the host, so it obeys the engine's environment rules (ignored by
 * root, setuid programs and MPCE_OPT_NO_ENV); names match in any case,
 * spaces around them ignored; unknown names in it are ignored with a
 * warning, so a name from a newer release never stops an older module
 * loading; a refusal names what is missing and what the CPU has; and the
 * module descriptor is filled the same way. Header-only: each module
 * compiles it with its own files, and nothing here reaches engine/.
 */
#ifndef MPCE_COMMON_CPU_MODULE_H
#define MPCE_COMMON_CPU_MODULE_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpcengine/plugin.h"

/* One int flag of a module's CPU struct, by the name a mask or a listing
 * gives it. */
struct mpce_cpu_flag {
    const char *name;
    size_t off;
};

#define MPCE_CPU_MASKED_LEN 128

/* The fields of a module state: its host, and the CPU as that engine may
 * use it, with the features masked off listed comma-separated. */
#define MPCE_CPU_MODULE_FIELDS(cpu_type)                                                   \
    const struct mpce_host *host;                                                          \
    cpu_type cpu;                                                                          \
    char masked[MPCE_CPU_MASKED_LEN]

/* Clears in *cpu (a struct of int flags) every flag the host's variable
 * `var` names (comma-separated), recording each in masked. A flag may
 * appear under several names; the caller then applies the dependencies
 * between its features, which only it knows. */
static inline void mpce_cpu_mask(const struct mpce_host *host, const char *var,
                                 const struct mpce_cpu_flag *names, size_t n_names, void *cpu,
                                 char *masked, size_t masked_len)
{
    masked[0] = '\0';
    const char *env = host && host->getenv ? host->getenv(host, var) : NULL;
    if (!env || !*env)
        return;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", env);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        /* " AES " as "aes": listings print the names in capitals. */
        while (*tok == ' ' || *tok == '\t')
            tok++;
        size_t tl = strlen(tok);
        while (tl > 0 && (tok[tl - 1] == ' ' || tok[tl - 1] == '\t'))
            tok[--tl] = '\0';
        for (size_t k = 0; k < tl; k++)
            if (tok[k] >= 'A' && tok[k] <= 'Z')
                tok[k] = (char)(tok[k] - 'A' + 'a');
        int known = tl == 0;
        for (size_t i = 0; i < n_names; i++) {
            if (strcmp(tok, names[i].name) == 0) {
                known = 1;
                *(int *)((char *)cpu + names[i].off) = 0;
                size_t used = strlen(masked);
                snprintf(masked + used, masked_len - used, "%s%s", used ? "," : "", tok);
            }
        }
        /* Ignored (a newer release's name must not stop this one), but
         * said: a misspelt name would otherwise mask nothing silently. */
        if (!known && host->log) {
            char list[200];
            size_t lu = 0;
            list[0] = '\0';
            for (size_t i = 0; i < n_names && lu < sizeof(list); i++)
                lu += (size_t)snprintf(list + lu, sizeof(list) - lu, "%s%s", i ? ", " : "",
                                       names[i].name);
            host->log(host, MPCE_LOG_WARNING, "%s: unknown feature '%.40s' ignored (it takes: %s)",
                      var, tok, list);
        }
    }
}

/* "LABEL LABEL ... masked:a,b" for the flags set in cpu, for listings and
 * refusals; empty when nothing is set or masked. */
static inline void mpce_cpu_describe(const struct mpce_cpu_flag *labels, size_t n_labels,
                                     const void *cpu, const char *masked, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < n_labels && used < len; i++)
        if (*(const int *)((const char *)cpu + labels[i].off))
            used += (size_t)snprintf(buf + used, len - used, "%s ", labels[i].name);
    if (masked[0] && used < len)
        snprintf(buf + used, len - used, "masked:%s", masked);
    size_t n = strlen(buf);
    while (n > 0 && buf[n - 1] == ' ')
        buf[--n] = '\0';
}

/* The module glue of a CPU-feature module named `prefix`: struct
 * prefix##_module holds MPCE_CPU_MODULE_FIELDS, and prefix##_cpu_masked and
 * prefix##_cpu_describe fill and print its cpu; `var` names its mask
 * variable. Defines prefix##_refuse (a probe's refusal) and the plugin's
 * init, fini and describe. `none` is the listing when the CPU has none of
 * the features.
 *
 * prefix##_refuse(m, why, len, present, missing, note): `present` says
 * whether the CPU itself (before the mask) has what the probe asked for.
 * If it does, the user masked it, and the refusal says so: "MISSING is
 * masked by VAR (MASKED; has: ...)"; otherwise "this CPU lacks MISSING
 * (has: ...)". `note` (NULL for none) follows either after "; ". */
#define MPCE_CPU_MODULE_GLUE(prefix, var, none)                                            \
    static int prefix##_refuse(const struct prefix##_module *m, char *why, size_t len,     \
                               int present, const char *missing, const char *note)         \
    {                                                                                      \
        char have[160];                                                                    \
        const char *sep = note ? "; " : "", *tail = note ? note : "";                      \
        if (present && m->masked[0]) {                                                     \
            prefix##_cpu_describe(&m->cpu, "", have, sizeof(have));                        \
            snprintf(why, len, "%s is masked by %s (%s; has: %s)%s%s", missing, (var),     \
                     m->masked, have[0] ? have : "none of them", sep, tail);               \
        } else {                                                                           \
            prefix##_cpu_describe(&m->cpu, m->masked, have, sizeof(have));                 \
            snprintf(why, len, "this CPU lacks %s (has: %s)%s%s", missing,                 \
                     have[0] ? have : "none of them", sep, tail);                          \
        }                                                                                  \
        return 1;                                                                          \
    }                                                                                      \
    static int prefix##_init(const struct mpce_host *host, void **module_state, char *why, \
                             size_t len)                                                   \
    {                                                                                      \
        struct prefix##_module *m = calloc(1, sizeof(*m));                                 \
        if (m == NULL) {                                                                   \
            snprintf(why, len, "out of memory for the module state");                      \
            return MPCE_ERR_NOMEM;                                                         \
        }                                                                                  \
        m->host = host;                                                                    \
        prefix##_cpu_masked(host, &m->cpu, m->masked, sizeof(m->masked));                  \
        *module_state = m;                                                                 \
        return 0;                                                                          \
    }                                                                                      \
    static void prefix##_fini(void *module_state)                                          \
    {                                                                                      \
        free(module_state);                                                                \
    }                                                                                      \
    static void prefix##_describe(void *module_state, char *buf, size_t len)               \
    {                                                                                      \
        const struct prefix##_module *m = module_state;                                    \
        char have[160];                                                                    \
        prefix##_cpu_describe(&m->cpu, m->masked, have, sizeof(have));                     \
        snprintf(buf, len, "CPU: %s", have[0] ? have : (none));                            \
    }

/* One implementation descriptor of a host-memory module. */
#define MPCE_CPU_IMPL(var, prim, nm, cls, prio, fl, table, pr, sv, nk, kl)                 \
    static const struct mpce_impl var = {                                                  \
        .struct_size = sizeof(struct mpce_impl),                                           \
        .primitive = prim,                                                                 \
        .name = nm,                                                                        \
        .impl_class = cls,                                                                 \
        .priority = prio,                                                                  \
        .flags = fl,                                                                       \
        .memory = MPCE_MEM_HOST,                                                           \
        .ops = table,                                                                      \
        .probe = pr,                                                                       \
        .serves = sv,                                                                      \
        .n_knobs = nk,                                                                     \
        .knobs = kl,                                                                       \
    }

/* The descriptor of module `nm` built by MPCE_CPU_MODULE_GLUE(prefix, ...)
 * with the plugin probe `pr` and the array `list`, and the one symbol a
 * module exports. */
#define MPCE_CPU_PLUGIN(prefix, nm, pr, list)                                              \
    static const struct mpce_plugin prefix##_plugin = {                                    \
        .struct_size = sizeof(struct mpce_plugin),                                         \
        .abi_major = MPCE_PLUGIN_ABI_MAJOR,                                                \
        .abi_minor = MPCE_PLUGIN_ABI_MINOR,                                                \
        .name = nm,                                                                        \
        .version = PACKAGE_VERSION,                                                        \
        .probe = pr,                                                                       \
        .init = prefix##_init,                                                             \
        .fini = prefix##_fini,                                                             \
        .describe = prefix##_describe,                                                     \
        .n_impls = sizeof(list) / sizeof((list)[0]),                                       \
        .impls = list,                                                                     \
    };                                                                                     \
    MPCE_API const struct mpce_plugin *mpce_plugin_entry_v2(void);                         \
    const struct mpce_plugin *mpce_plugin_entry_v2(void)                                   \
    {                                                                                      \
        return &prefix##_plugin;                                                           \
    }

#endif
