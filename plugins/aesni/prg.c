/*
 * The aesni PRG vtables: one per AES kernel, the state a schedule expanded
 * once in ctx_new plus the kernel that serves it. Plain C: it only reaches
 * ISA code through a kernel the CPU probe has allowed.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "plugins/aesni/aesni.h"

static int prg_new(const struct aesni_aes_kernel *kernel, const uint8_t *keys, size_t m,
                   void **state)
{
    /* aligned_alloc wants a multiple of the alignment. */
    size_t bytes = (sizeof(struct aesni_prg) + 63u) & ~(size_t)63u;
    struct aesni_prg *p = aligned_alloc(64, bytes);

    if (p == NULL) {
        if (aesni_host && aesni_host->set_error)
            aesni_host->set_error(aesni_host, "out of memory for %zu AES key schedules", m);
        return MPCE_ERR_NOMEM;
    }
    aesni_sched_init(&p->ks, keys, m);
    p->kernel = kernel;
    *state = p;
    return 0;
}

static void prg_free(void *state)
{
    if (state == NULL)
        return;
    /* Round keys are key material: clear them where the compiler cannot
     * drop the stores as dead. */
    volatile uint8_t *v = state;
    for (size_t i = 0; i < sizeof(struct aesni_prg); i++)
        v[i] = 0;
    free(state);
}

static int prg_ecb(void *state, size_t key_index, const uint8_t *in, uint8_t *out, size_t n)
{
    const struct aesni_prg *p = state;

    p->kernel->ecb(&p->ks, key_index, in, out, n);
    return 0;
}

static int prg_mmo(void *state, const uint8_t *seeds, uint8_t *out, size_t n)
{
    const struct aesni_prg *p = state;

    p->kernel->mmo(&p->ks, seeds, out, n);
    return 0;
}

static int prg_ctr(void *state, size_t key_index, uint64_t c0, uint8_t *out, size_t n)
{
    const struct aesni_prg *p = state;

    p->kernel->ctr(&p->ks, key_index, c0, out, n);
    return 0;
}

#define PRG_VTABLE(var, kern)                                                              \
    static int var##_new(const uint8_t *keys, size_t m, void **state)                      \
    {                                                                                      \
        return prg_new(&(kern), keys, m, state);                                           \
    }                                                                                      \
    const struct mpce_prg_vtable var = {                                                   \
        .struct_size = sizeof(struct mpce_prg_vtable),                                     \
        .ctx_new = var##_new,                                                              \
        .ctx_free = prg_free,                                                              \
        .ecb = prg_ecb,                                                                    \
        .mmo = prg_mmo,                                                                    \
        .ctr = prg_ctr,                                                                    \
    }

PRG_VTABLE(aesni_prg_ni_vtable, aesni_kernel_ni);
PRG_VTABLE(aesni_prg_vaes256_vtable, aesni_kernel_vaes256);
PRG_VTABLE(aesni_prg_vaes512_vtable, aesni_kernel_vaes512);

const struct aesni_aes_kernel *aesni_best_kernel(void)
{
    const struct aesni_cpu *f = aesni_cpu();

    if (f->vaes && f->avx512f && f->avx512bw)
        return &aesni_kernel_vaes512;
    if (f->vaes && f->avx2)
        return &aesni_kernel_vaes256;
    return &aesni_kernel_ni;
}

const struct mpce_prg_vtable *aesni_best_prg_vtable(void)
{
    const struct aesni_aes_kernel *k = aesni_best_kernel();

    if (k == &aesni_kernel_vaes512)
        return &aesni_prg_vaes512_vtable;
    if (k == &aesni_kernel_vaes256)
        return &aesni_prg_vaes256_vtable;
    return &aesni_prg_ni_vtable;
}
