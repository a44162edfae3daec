/* The aesni DPF: the shared tree walks over the fastest AES kernel this CPU
 * runs, with that kernel's fused node operations. */
#include "config.h"

#include "plugins/aesni/aesni.h"
#include "plugins/common/dpf_walk.h"

static void expand(const void *prg_state, const uint8_t *parents, uint8_t *children, size_t n,
                   const uint8_t cw[2][16])
{
    const struct aesni_prg *p = prg_state;

    p->kernel->dpf_expand(&p->ks, parents, children, n, cw);
}

static void step(const void *prg_state, uint8_t *nodes, const uint8_t *dir, const uint8_t *cw,
                 size_t n)
{
    const struct aesni_prg *p = prg_state;

    p->kernel->dpf_step(&p->ks, nodes, dir, cw, n);
}

static const struct mpce_dpf_accel accel = {.expand = expand, .step = step};

MPCE_DPF_VTABLE(aesni_dpf_vtable, aesni_best_prg_vtable(), &accel);
