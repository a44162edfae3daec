/* SPDX-License-Identifier: Apache-2.0 */
/* The neon DPF: the shared tree walks (plugins/common/dpf_walk.h) over the
 * Crypto Extensions PRG, with its fused node operations (expand: both
 * children of four parents in eight lanes; step: one child each of eight
 * nodes), so the walk's AES keeps eight blocks in flight. */
#include "config.h"

#include "plugins/common/dpf_walk.h"
#include "plugins/neon/neon.h"

static void expand(const void *prg_state, const uint8_t *parents, uint8_t *children, size_t n,
                   const uint8_t cw[2][16])
{
    const struct neon_prg *p = prg_state;

    neon_dpf_expand(&p->ks, parents, children, n, cw);
}

static void step(const void *prg_state, uint8_t *nodes, const uint8_t *dir, const uint8_t *cw,
                 size_t n)
{
    const struct neon_prg *p = prg_state;

    neon_dpf_step(&p->ks, nodes, dir, cw, n);
}

static const struct mpce_dpf_accel neon_dpf_accel = {.expand = expand, .step = step};

MPCE_DPF_SKELETON_OPS(neon_dpf_ops, &neon_prg_ops, &neon_dpf_accel);
