/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The soft backend's PRG op tables: the ecb/mmo/ctr loops, written once over
 * the AES core interface of aes.h and shared by the bitsliced and T-table
 * cores. The state records its core, so only ctx_new differs per table.
 * Work goes to the core in chunks of CHUNK blocks, a multiple of every
 * core's pass, so the bitsliced core pads at most one pass per call.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "plugins/soft/aes.h"
#include "plugins/soft/soft.h"
#include "spec/spec.h"

#define CHUNK 64

struct prg_state {
    const struct mpce_aes_core *core;
    size_t m;
    size_t alloc_bytes;
    uint64_t ks[]; /* m schedules of core->ks_bytes each */
};

static const void *schedule(const struct prg_state *st, size_t j)
{
    return (const uint8_t *)st->ks + j * st->core->ks_bytes;
}

static int prg_ctx_new(const struct mpce_aes_core *core, void *module, const uint8_t *keys,
                       size_t m, void **state)
{
    const struct mpce_host *host = module;
    size_t bytes = sizeof(struct prg_state) + m * core->ks_bytes;
    struct prg_state *st = malloc(bytes);

    if (!st) {
        if (host)
            host->set_error(host, "out of memory for %zu AES key schedules", m);
        return MPCE_ERR_NOMEM;
    }
    st->core = core;
    st->m = m;
    st->alloc_bytes = bytes;
    for (size_t j = 0; j < m; j++)
        core->expand((uint8_t *)st->ks + j * core->ks_bytes, keys + 16 * j);
    *state = st;
    return 0;
}

static int bitslice_ctx_new(void *module, const uint8_t *keys, size_t m, void **state)
{
    return prg_ctx_new(&mpce_aes_bitslice_core, module, keys, m, state);
}

static int ttable_ctx_new(void *module, const uint8_t *keys, size_t m, void **state)
{
    return prg_ctx_new(&mpce_aes_ttable_core, module, keys, m, state);
}

static void prg_ctx_free(void *state)
{
    struct prg_state *st = state;

    if (!st)
        return;
    mpce_wipe(st, st->alloc_bytes);
    free(st);
}

/* The ops take host memory only (the call says so; this backend serves
 * nothing else). */
static int prg_ecb(void *state, const struct mpce_call *call, size_t key_index,
                   const uint8_t *in, uint8_t *out, size_t n)
{
    const struct prg_state *st = state;

    st->core->encrypt(schedule(st, key_index), in, out, n);
    return 0;
}

static void xor_block(uint8_t *dst, const uint8_t *a, const uint8_t *b)
{
    uint64_t x[2], y[2];

    memcpy(x, a, 16);
    memcpy(y, b, 16);
    x[0] ^= y[0];
    x[1] ^= y[1];
    memcpy(dst, x, 16);
}

/* Key by key over a chunk of seeds, so each pass of the core uses one
 * schedule; the results are scattered to their interleaved slots. */
static int prg_mmo(void *state, const struct mpce_call *call, const uint8_t *seeds,
                   uint8_t *out, size_t n)
{
    const struct prg_state *st = state;
    const size_t m = st->m;
    uint8_t tmp[16 * CHUNK];

    for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
        size_t c = n - i0 < CHUNK ? n - i0 : CHUNK;
        const uint8_t *s = seeds + 16 * i0;
        for (size_t j = 0; j < m; j++) {
            st->core->encrypt(schedule(st, j), s, tmp, c);
            for (size_t i = 0; i < c; i++)
                xor_block(out + 16 * ((i0 + i) * m + j), tmp + 16 * i, s + 16 * i);
        }
    }
    return 0;
}

static int prg_ctr(void *state, const struct mpce_call *call, size_t key_index, uint64_t c0,
                   uint8_t *out, size_t n)
{
    const struct prg_state *st = state;
    const void *ks = schedule(st, key_index);
    uint8_t ctr[16 * CHUNK];
    uint64_t c = c0;

    for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
        size_t len = n - i0 < CHUNK ? n - i0 : CHUNK;
        for (size_t i = 0; i < len; i++, c++)
            mpce_spec_ctr_block(c, ctr + 16 * i);
        st->core->encrypt(ks, ctr, out + 16 * i0, len);
    }
    return 0;
}

const struct mpce_prg_ops mpce_soft_prg_bitslice_ops = {
    .struct_size = sizeof(struct mpce_prg_ops),
    .ctx_new = bitslice_ctx_new,
    .ctx_free = prg_ctx_free,
    .ecb = prg_ecb,
    .mmo = prg_mmo,
    .ctr = prg_ctr,
};

const struct mpce_prg_ops mpce_soft_prg_ttable_ops = {
    .struct_size = sizeof(struct mpce_prg_ops),
    .ctx_new = ttable_ctx_new,
    .ctx_free = prg_ctx_free,
    .ecb = prg_ecb,
    .mmo = prg_mmo,
    .ctr = prg_ctr,
};
