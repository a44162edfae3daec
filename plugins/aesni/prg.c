/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The aesni PRG op tables: one per AES kernel, the state a schedule expanded
 * once in ctx_new plus the kernel that serves it. Plain C: it only reaches
 * ISA code through a kernel the CPU probe has allowed.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "plugins/aesni/aesni.h"
#include "plugins/common/key_state.h"

static int prg_new(const struct aesni_aes_kernel *kernel, void *module, const uint8_t *keys,
                   size_t m, void **state)
{
    const struct aesni_module *mod = module;
    struct aesni_prg *p =
        mpce_key_state_new(mod ? mod->host : NULL, "aesni", sizeof(struct aesni_prg), m);

    if (p == NULL)
        return MPCE_ERR_NOMEM;
    aesni_sched_init(&p->ks, keys, m);
    p->kernel = kernel;
    *state = p;
    return 0;
}

static void prg_free(void *state)
{
    mpce_key_state_free(state, sizeof(struct aesni_prg));
}

static int prg_ecb(void *state, const struct mpce_call *call, size_t key_index, const uint8_t *in, uint8_t *out, size_t n)
{
    const struct aesni_prg *p = state;

    p->kernel->ecb(&p->ks, key_index, in, out, n);
    return 0;
}

static int prg_mmo(void *state, const struct mpce_call *call, const uint8_t *seeds, uint8_t *out, size_t n)
{
    const struct aesni_prg *p = state;

    p->kernel->mmo(&p->ks, seeds, out, n);
    return 0;
}

static int prg_ctr(void *state, const struct mpce_call *call, size_t key_index, uint64_t c0, uint8_t *out, size_t n)
{
    const struct aesni_prg *p = state;

    p->kernel->ctr(&p->ks, key_index, c0, out, n);
    return 0;
}

#define PRG_OPS(var, kern)                                                                 \
    static int var##_new(void *module, const uint8_t *keys, size_t m, void **state)        \
    {                                                                                      \
        return prg_new(&(kern), module, keys, m, state);                                   \
    }                                                                                      \
    const struct mpce_prg_ops var = {                                                      \
        .struct_size = sizeof(struct mpce_prg_ops),                                        \
        .ctx_new = var##_new,                                                              \
        .ctx_free = prg_free,                                                              \
        .ecb = prg_ecb,                                                                    \
        .mmo = prg_mmo,                                                                    \
        .ctr = prg_ctr,                                                                    \
    }

PRG_OPS(aesni_prg_ni_ops, aesni_kernel_ni);
PRG_OPS(aesni_prg_vaes256_ops, aesni_kernel_vaes256);
PRG_OPS(aesni_prg_vaes512_ops, aesni_kernel_vaes512);

const struct aesni_aes_kernel *aesni_best_kernel(const struct aesni_module *module)
{
    const struct aesni_cpu *f = &module->cpu;

    if (aesni_cpu_vaes512(f))
        return &aesni_kernel_vaes512;
    if (aesni_cpu_vaes256(f))
        return &aesni_kernel_vaes256;
    return &aesni_kernel_ni;
}

const struct mpce_prg_ops *aesni_best_prg_ops(const struct aesni_module *module)
{
    const struct aesni_aes_kernel *k = aesni_best_kernel(module);

    if (k == &aesni_kernel_vaes512)
        return &aesni_prg_vaes512_ops;
    if (k == &aesni_kernel_vaes256)
        return &aesni_prg_vaes256_ops;
    return &aesni_prg_ni_ops;
}
