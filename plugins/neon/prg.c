/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The neon PRG op table: the state is a schedule expanded once in ctx_new.
 * Plain C: it reaches the Crypto Extensions (aes_ce.c) only through ops
 * whose implementation the HWCAP probe has allowed.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "plugins/common/key_state.h"
#include "plugins/neon/neon.h"

static int prg_new(void *module, const uint8_t *keys, size_t m, void **state)
{
    const struct neon_module *mod = module;
    struct neon_prg *p =
        mpce_key_state_new(mod ? mod->host : NULL, "neon", sizeof(struct neon_prg), m);

    if (p == NULL)
        return MPCE_ERR_NOMEM;
    neon_sched_init(&p->ks, keys, m);
    *state = p;
    return 0;
}

static void prg_free(void *state)
{
    mpce_key_state_free(state, sizeof(struct neon_prg));
}

static int prg_ecb(void *state, const struct mpce_call *call, size_t key_index,
                   const uint8_t *in, uint8_t *out, size_t n)
{
    const struct neon_prg *p = state;

    neon_aes_ecb(&p->ks, key_index, in, out, n);
    return 0;
}

static int prg_mmo(void *state, const struct mpce_call *call, const uint8_t *seeds, uint8_t *out,
                   size_t n)
{
    const struct neon_prg *p = state;

    neon_aes_mmo(&p->ks, seeds, out, n);
    return 0;
}

static int prg_ctr(void *state, const struct mpce_call *call, size_t key_index, uint64_t c0,
                   uint8_t *out, size_t n)
{
    const struct neon_prg *p = state;

    neon_aes_ctr(&p->ks, key_index, c0, out, n);
    return 0;
}

const struct mpce_prg_ops neon_prg_ops = {
    .struct_size = sizeof(struct mpce_prg_ops),
    .ctx_new = prg_new,
    .ctx_free = prg_free,
    .ecb = prg_ecb,
    .mmo = prg_mmo,
    .ctr = prg_ctr,
};
