/*
 * The soft backend's PRG vtables: the ecb/mmo/ctr loops, written once over
 * the AES core interface of aes.h and shared by the bitsliced and T-table
 * cores. The state records its core, so only ctx_new differs per vtable.
 * Work goes to the core in chunks of CHUNK blocks, a multiple of every
 * core's pass, so the bitsliced core pads at most one pass per call.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "plugins/soft/aes.h"
#include "plugins/soft/soft.h"

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

static int prg_ctx_new(const struct mpce_aes_core *core, const uint8_t *keys, size_t m,
                       void **state)
{
    size_t bytes = sizeof(struct prg_state) + m * core->ks_bytes;
    struct prg_state *st = malloc(bytes);

    if (!st) {
        if (mpce_soft_host && mpce_soft_host->set_error)
            mpce_soft_host->set_error(mpce_soft_host, "out of memory for %zu AES key schedules",
                                      m);
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

static int bitslice_ctx_new(const uint8_t *keys, size_t m, void **state)
{
    return prg_ctx_new(&mpce_aes_bitslice_core, keys, m, state);
}

static int ttable_ctx_new(const uint8_t *keys, size_t m, void **state)
{
    return prg_ctx_new(&mpce_aes_ttable_core, keys, m, state);
}

static void prg_ctx_free(void *state)
{
    struct prg_state *st = state;

    if (!st)
        return;
    mpce_aes_wipe(st, st->alloc_bytes);
    free(st);
}

static int prg_ecb(void *state, size_t key_index, const uint8_t *in, uint8_t *out, size_t n)
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
static int prg_mmo(void *state, const uint8_t *seeds, uint8_t *out, size_t n)
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

static int prg_ctr(void *state, size_t key_index, uint64_t c0, uint8_t *out, size_t n)
{
    const struct prg_state *st = state;
    const void *ks = schedule(st, key_index);
    uint8_t ctr[16 * CHUNK];
    uint64_t c = c0;

    memset(ctr, 0, sizeof(ctr));
    for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
        size_t len = n - i0 < CHUNK ? n - i0 : CHUNK;
        for (size_t i = 0; i < len; i++, c++)
            for (unsigned b = 0; b < 8; b++)
                ctr[16 * i + b] = (uint8_t)(c >> (8 * b));
        st->core->encrypt(ks, ctr, out + 16 * i0, len);
    }
    return 0;
}

const struct mpce_prg_vtable mpce_soft_prg_bitslice_vtable = {
    .struct_size = sizeof(struct mpce_prg_vtable),
    .ctx_new = bitslice_ctx_new,
    .ctx_free = prg_ctx_free,
    .ecb = prg_ecb,
    .mmo = prg_mmo,
    .ctr = prg_ctr,
};

const struct mpce_prg_vtable mpce_soft_prg_ttable_vtable = {
    .struct_size = sizeof(struct mpce_prg_vtable),
    .ctx_new = ttable_ctx_new,
    .ctx_free = prg_ctx_free,
    .ecb = prg_ecb,
    .mmo = prg_mmo,
    .ctr = prg_ctr,
};
