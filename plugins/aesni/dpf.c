/* SPDX-License-Identifier: Apache-2.0 */
/* The aesni DPF: the shared tree walks over the fastest AES kernel this CPU
 * runs, with that kernel's fused node operations. */
#include "config.h"

#include "plugins/aesni/aesni.h"
#include "plugins/common/dpf_walk.h"

_Static_assert(AESNI_DPF_NODES == MPCE_DPF_NODES, "walk's nodes code");

/* Points up to which a walk goes one point at a time. */
#define AESNI_DPF_WALK1_MAX 2u

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

static void expand_leaves(const void *prg_state, const uint8_t *parents, uint8_t *out, size_t n,
                          const uint8_t cw[2][16], const struct mpce_dpf_key_v1 *key,
                          unsigned group, int stream)
{
    const struct aesni_prg *p = prg_state;

    p->kernel->dpf_expand_leaves(&p->ks, parents, out, n, cw, key, group, stream);
}

static void walk(const void *prg_state, const struct mpce_dpf_key_v1 *const *keys,
                 size_t key_step, const uint64_t *points, size_t n, unsigned depth, unsigned what,
                 uint8_t *out)
{
    const struct aesni_prg *p = prg_state;

    /* Below a few points a batch is mostly empty lanes waiting on one
     * chain of AES: walk them one by one (aesni_dpf_walk1). */
    if (n <= AESNI_DPF_WALK1_MAX && p->kernel->dpf_walk1 != NULL) {
        const size_t osz = what == AESNI_DPF_NODES ? 16u : mpce_dpfw_output_bytes(what);
        for (size_t j = 0; j < n; j++)
            p->kernel->dpf_walk1(&p->ks, keys[j * key_step], points[j], depth, what,
                                 out + j * osz);
        return;
    }
    p->kernel->dpf_walk(&p->ks, keys, key_step, points, n, depth, what, out);
}

static void walk_batch(const void *prg_state, const struct mpce_dpf_batch_v1 *batch, size_t first,
                       const uint64_t *points, size_t n, unsigned depth, unsigned what,
                       uint8_t *out)
{
    const struct aesni_prg *p = prg_state;

    p->kernel->dpf_walk_batch(&p->ks, batch, first, points, n, depth, what, out);
}

static const struct mpce_dpf_accel accel_basic = {.expand = expand, .step = step};
static const struct mpce_dpf_accel accel_fused = {.expand = expand,
                                                  .step = step,
                                                  .expand_leaves = expand_leaves,
                                                  .walk = walk,
                                                  .walk_batch = walk_batch};

/* The PRG state's kernel is aesni_best_kernel(module): offer what it has. */
static const struct mpce_dpf_accel *aesni_dpf_accel(const struct aesni_module *module)
{
    const struct aesni_aes_kernel *k = aesni_best_kernel(module);

    return k->dpf_expand_leaves != NULL && k->dpf_walk != NULL && k->dpf_walk_batch != NULL
               ? &accel_fused
               : &accel_basic;
}

MPCE_DPF_SKELETON_OPS(aesni_dpf_ops, aesni_best_prg_ops(module), aesni_dpf_accel(module));
