/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The LPN fold's index arithmetic (SPEC.md section 3), written once for every
 * backend. A backend supplies only its PRG: the index stream is its ctr()
 * with key 0, the AES key being the fold's seed.
 *
 * Stream layout of one call of n outputs starting at block c0, L4 = n - n%4:
 *   output o < L4 reads words 10o .. 10o+9 (two outputs per five blocks);
 *   tail output t = o - L4 reads words 0..9 of the three blocks starting at
 *   c0 + 5*L4/2 + 3t.
 * Because every output's position is a closed form, any range of outputs can
 * be folded on its own; a worker pool splits a call by output range.
 */
#ifndef MPCE_COMMON_LPN_FOLD_H
#define MPCE_COMMON_LPN_FOLD_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpcengine/common.h"
#include "mpcengine/plugin.h"
#include "plugins/common/host_call.h"
#include "spec/spec.h"

#define MPCE_LPN_D MPCE_SPEC_LPN_D

/* The fold's knobs (plugins/common/skeleton_knobs.h declares them), in the
 * order of the call's knob values. chunk: outputs per PRG call, whose index
 * blocks and indices live on the stack (10 KiB each at 256); prefetch:
 * outputs ahead whose table rows are asked for, since the production table
 * (8 MiB at logk 19) misses cache on almost every read. How far ahead pays
 * depends on memory latency and on how many misses the core keeps in
 * flight, hence knobs. */
enum { MPCE_LPN_KNOB_CHUNK, MPCE_LPN_KNOB_PREFETCH, MPCE_LPN_N_KNOBS };
#define MPCE_LPN_CHUNK 256u
#define MPCE_LPN_CHUNK_MAX 512u
#define MPCE_LPN_PREFETCH 4u
#define MPCE_LPN_CHUNK_BLOCKS ((MPCE_LPN_CHUNK_MAX * MPCE_LPN_D) / 4u + 2u)

struct mpce_lpn_tuning {
    size_t chunk;      /* 1..MPCE_LPN_CHUNK_MAX */
    size_t prefetch;   /* 0: none */
};

/* The call's knob values, each bounded here too: a value outside what the
 * skeleton declares is never used as a buffer size. */
static inline struct mpce_lpn_tuning mpce_lpn_tuning_of(const struct mpce_call *call)
{
    struct mpce_lpn_tuning t = {
        .chunk = mpce_call_knob(call, MPCE_LPN_KNOB_CHUNK, MPCE_LPN_CHUNK),
        .prefetch = mpce_call_knob(call, MPCE_LPN_KNOB_PREFETCH, MPCE_LPN_PREFETCH),
    };
    if (t.chunk == 0 || t.chunk > MPCE_LPN_CHUNK_MAX)
        t.chunk = MPCE_LPN_CHUNK;
    if (t.prefetch > 64)
        t.prefetch = MPCE_LPN_PREFETCH;
    return t;
}

static inline uint32_t mpce_lpn__le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

/* out[o] ^= XOR of the table rows idx[10o' .. 10o'+9] for cnt outputs. */
static inline void mpce_lpn__xor_rows(const uint8_t *table, const uint32_t *idx, uint8_t *out,
                                      size_t cnt, size_t prefetch)
{
    for (size_t j = 0; j < cnt; j++) {
#if defined(__GNUC__)
        if (prefetch != 0 && j + prefetch < cnt) {
            const uint32_t *ahead = idx + (j + prefetch) * MPCE_LPN_D;
            for (unsigned r = 0; r < MPCE_LPN_D; r++)
                __builtin_prefetch(table + (size_t)ahead[r] * 16u, 0, 0);
        }
#endif
        uint64_t lo, hi, a, b;
        memcpy(&lo, out + j * 16u, 8);
        memcpy(&hi, out + j * 16u + 8u, 8);
        for (unsigned r = 0; r < MPCE_LPN_D; r++) {
            const uint8_t *row = table + (size_t)idx[j * MPCE_LPN_D + r] * 16u;
            memcpy(&a, row, 8);
            memcpy(&b, row + 8, 8);
            lo ^= a;
            hi ^= b;
        }
        memcpy(out + j * 16u, &lo, 8);
        memcpy(out + j * 16u + 8u, &hi, 8);
    }
}

/*
 * Fold outputs [o_begin, o_end) of a call of n outputs whose stream starts at
 * block c0. `out` is out[0] of the whole call; only rows o_begin .. o_end-1
 * are touched. Any o_begin works; a range that starts on an even output
 * within L4 (a multiple of 4 is the natural split) shares no stream block
 * with the range before it. The table holds 2^logk blocks. Returns 0 or the
 * PRG's error.
 */
static inline int mpce_lpn_fold_range(const struct mpce_prg_ops *prg, void *prg_state,
                                      const struct mpce_lpn_tuning *t, unsigned logk,
                                      uint64_t c0, const uint8_t *table, uint8_t *out, size_t n,
                                      size_t o_begin, size_t o_end)
{
    uint8_t blocks[MPCE_LPN_CHUNK_BLOCKS * 16u];
    uint32_t idx[MPCE_LPN_CHUNK_MAX * MPCE_LPN_D];
    const uint32_t mask = (uint32_t)((1ull << logk) - 1u);
    const size_t l4 = n - (n % 4u);
    size_t o = o_begin;
    int rc;

    if (o_end > n)
        o_end = n;
    while (o < o_end && o < l4) {
        size_t end = o_end < l4 ? o_end : l4;
        size_t cnt = end - o;
        if (cnt > t->chunk)
            cnt = t->chunk;
        /* Words 10o .. 10(o+cnt)-1 lie in blocks first .. last-1. */
        uint64_t first = (uint64_t)o * MPCE_LPN_D / 4u;
        uint64_t last = ((uint64_t)(o + cnt) * MPCE_LPN_D + 3u) / 4u;
        rc = prg->ctr(prg_state, &mpce_common_host_call, 0, c0 + first, blocks, (size_t)(last - first));
        if (rc != 0)
            return rc;
        const uint8_t *w = blocks + ((uint64_t)o * MPCE_LPN_D - first * 4u) * 4u;
        for (size_t i = 0; i < cnt * MPCE_LPN_D; i++)
            idx[i] = mpce_lpn__le32(w + 4u * i) & mask;
        mpce_lpn__xor_rows(table, idx, out + o * 16u, cnt, t->prefetch);
        o += cnt;
    }
    /* The tail: emp-ot folds the last n mod 4 outputs one at a time, each
     * drawing three fresh blocks of which it uses ten words. */
    if (o < l4)
        o = l4;
    if (o < o_end) {
        size_t cnt = o_end - o;
        uint64_t first = (uint64_t)(l4 / 2u) * 5u + 3u * (uint64_t)(o - l4);
        rc = prg->ctr(prg_state, &mpce_common_host_call, 0, c0 + first, blocks, 3u * cnt);
        if (rc != 0)
            return rc;
        for (size_t j = 0; j < cnt; j++)
            for (unsigned r = 0; r < MPCE_LPN_D; r++)
                idx[j * MPCE_LPN_D + r] = mpce_lpn__le32(blocks + 48u * j + 4u * r) & mask;
        mpce_lpn__xor_rows(table, idx, out + o * 16u, cnt, t->prefetch);
    }
    return 0;
}

/* The whole call: outputs [0, n). */
static inline int mpce_lpn_fold_all(const struct mpce_prg_ops *prg, void *prg_state,
                                    const struct mpce_lpn_tuning *t, unsigned logk, uint64_t c0,
                                    const uint8_t *table, uint8_t *out, size_t n)
{
    return mpce_lpn_fold_range(prg, prg_state, t, logk, c0, table, out, n, 0, n);
}

/* ---- op-table glue ------------------------------------------------------
 * A backend's lpn.c is MPCE_LPN_SKELETON_OPS(name, its PRG ops): the state is
 * a PRG state whose key 0 is the seed, and the logk. */
struct mpce_lpn_ctx {
    const struct mpce_prg_ops *prg;
    void *prg_state;
    unsigned logk;
};

static inline void mpce_lpn_ctx_free(void *state)
{
    struct mpce_lpn_ctx *s = state;

    if (s == NULL)
        return;
    if (s->prg_state != NULL)
        s->prg->ctx_free(s->prg_state);
    free(s);
}

static inline int mpce_lpn_ctx_new(const struct mpce_prg_ops *prg, void *module,
                                   const uint8_t *seed, unsigned logk, void **state)
{
    struct mpce_lpn_ctx *s = calloc(1, sizeof *s);
    int rc;

    if (s == NULL)
        return MPCE_ERR_NOMEM;
    s->prg = prg;
    s->logk = logk;
    rc = prg->ctx_new(module, seed, 1, &s->prg_state);
    if (rc != 0) {
        s->prg_state = NULL;
        mpce_lpn_ctx_free(s);
        return rc;
    }
    *state = s;
    return 0;
}

static inline int mpce_lpn_ctx_fold(void *state, const struct mpce_call *call, uint64_t c0,
                                    const uint8_t *table, uint8_t *out, size_t n)
{
    struct mpce_lpn_ctx *s = state;
    /* Host memory: the skeleton runs on the CPU; the call carries knobs. */
    const struct mpce_lpn_tuning t = mpce_lpn_tuning_of(call);
    return mpce_lpn_fold_all(s->prg, s->prg_state, &t, s->logk, c0, table, out, n);
}

/* Defines `const struct mpce_lpn_ops name` over the PRG ops that the
 * expression yields at ctx_new, where it may use `module` (the module state). */
#define MPCE_LPN_SKELETON_OPS(name, prg_ops)                                               \
    static int name##_ctx_new(void *module, const uint8_t *seed, unsigned logk,            \
                              void **state)                                                \
    {                                                                                      \
        return mpce_lpn_ctx_new((prg_ops), module, seed, logk, state);                     \
    }                                                                                      \
    const struct mpce_lpn_ops name = {                                                     \
        .struct_size = sizeof(struct mpce_lpn_ops),                                        \
        .ctx_new = name##_ctx_new,                                                         \
        .ctx_free = mpce_lpn_ctx_free,                                                     \
        .fold = mpce_lpn_ctx_fold,                                                         \
    }

#endif
