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

/* For the row loop, also inside a caller compiled for a wider ISA (the
 * fused fold below): a call into a copy compiled for the baseline would
 * run legacy SSE encodings after AVX-512 code, and each of those waits to
 * merge the dirty upper half of its register, tying an output's loads to
 * the previous output's result. */
#if defined(__GNUC__)
#define MPCE_LPN_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define MPCE_LPN_ALWAYS_INLINE static inline
#endif


/* The fold's knobs (plugins/common/skeleton_knobs.h declares them), in the
 * order of the call's knob values. chunk: outputs per PRG call, whose index
 * blocks live on the stack (10 KiB at 256); prefetch: outputs ahead whose
 * table rows are asked for, 0 for none. The table (8 MiB at logk 19) misses
 * L2 on almost every read, but the loads are independent and the core
 * already issues them far ahead out of order: on a Zen 4 a prefetch adds
 * instructions and buys no further misses in flight, so none is the
 * default; how far ahead pays elsewhere depends on the core, hence a knob. */
enum { MPCE_LPN_KNOB_CHUNK, MPCE_LPN_KNOB_PREFETCH, MPCE_LPN_N_KNOBS };
#define MPCE_LPN_CHUNK 256u
#define MPCE_LPN_CHUNK_MAX 512u
#define MPCE_LPN_PREFETCH 0u
#define MPCE_LPN_PREFETCH_MAX 64u
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
    if (t.prefetch > MPCE_LPN_PREFETCH_MAX)
        t.prefetch = MPCE_LPN_PREFETCH;
    return t;
}

static inline uint32_t mpce_lpn__le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

/* A row as one vector register where the target has 16-byte vectors: one
 * load per row, not two, so each miss holds one load-queue entry. */
#if defined(__GNUC__) && (defined(__SSE2__) || defined(__aarch64__))
typedef uint64_t mpce_lpn__row __attribute__((vector_size(16)));
static inline mpce_lpn__row mpce_lpn__xor(mpce_lpn__row a, mpce_lpn__row b)
{
    return a ^ b;
}
#else
typedef struct {
    uint64_t lo, hi;
} mpce_lpn__row;
static inline mpce_lpn__row mpce_lpn__xor(mpce_lpn__row a, mpce_lpn__row b)
{
    a.lo ^= b.lo;
    a.hi ^= b.hi;
    return a;
}
#endif
static inline mpce_lpn__row mpce_lpn__load(const uint8_t *p)
{
    mpce_lpn__row v;
    memcpy(&v, p, 16);
    return v;
}

static inline const uint8_t *mpce_lpn__row_at(const uint8_t *table, uint32_t mask,
                                              const uint8_t *word)
{
    return table + ((size_t)(mpce_lpn__le32(word) & mask) << 4);
}

/* The row that the index word at `word` names. */
static inline mpce_lpn__row mpce_lpn__row_of(const uint8_t *table, uint32_t mask,
                                             const uint8_t *word)
{
    return mpce_lpn__load(mpce_lpn__row_at(table, mask, word));
}

/*
 * out[j] ^= XOR of the rows that the ten words at w + j*stride name, for
 * j < cnt; where pf is not NULL, output j first prefetches the rows that
 * the ten words at pf + 40j name. The words are read straight from the
 * PRG's blocks: a separate pass that turned them into indices first ran
 * between the gathers with no miss in flight, and cost a Zen 4 a fifth of
 * the fold. The ten rows are written out (d = 10 is SPEC's constant) so
 * that a row costs four instructions and the out-of-order window holds as
 * many rows as it can; every load is independent, and the two XOR chains
 * wait on the loads without holding anything up.
 */
MPCE_LPN_ALWAYS_INLINE void mpce_lpn__fold_rows(const uint8_t *table, uint32_t mask, const uint8_t *w,
                                       size_t stride, uint8_t *out, size_t cnt,
                                       const uint8_t *pf)
{
    _Static_assert(MPCE_LPN_D == 10, "the row loop below is written for d = 10");
    for (size_t j = 0; j < cnt; j++) {
        const uint8_t *x = w + j * stride;
#if defined(__GNUC__)
        if (pf != NULL)
            for (unsigned r = 0; r < MPCE_LPN_D; r++)
                __builtin_prefetch(mpce_lpn__row_at(table, mask, pf + 4u * (j * MPCE_LPN_D + r)),
                                   0, 1);
#endif
        mpce_lpn__row a = mpce_lpn__row_of(table, mask, x);
        mpce_lpn__row b = mpce_lpn__row_of(table, mask, x + 4);
        a = mpce_lpn__xor(a, mpce_lpn__row_of(table, mask, x + 8));
        b = mpce_lpn__xor(b, mpce_lpn__row_of(table, mask, x + 12));
        a = mpce_lpn__xor(a, mpce_lpn__row_of(table, mask, x + 16));
        b = mpce_lpn__xor(b, mpce_lpn__row_of(table, mask, x + 20));
        a = mpce_lpn__xor(a, mpce_lpn__row_of(table, mask, x + 24));
        b = mpce_lpn__xor(b, mpce_lpn__row_of(table, mask, x + 28));
        a = mpce_lpn__xor(a, mpce_lpn__row_of(table, mask, x + 32));
        b = mpce_lpn__xor(b, mpce_lpn__row_of(table, mask, x + 36));
        mpce_lpn__row acc = mpce_lpn__xor(mpce_lpn__load(out + j * 16u), mpce_lpn__xor(a, b));
        memcpy(out + j * 16u, &acc, 16);
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
        /* Outputs j < ahead prefetch the rows of output j + prefetch; the
         * last ones of the chunk have nothing ahead to ask for. */
        size_t ahead = t->prefetch != 0 && cnt > t->prefetch ? cnt - t->prefetch : 0;
        mpce_lpn__fold_rows(table, mask, w, 4u * MPCE_LPN_D, out + o * 16u, ahead,
                            w + 4u * MPCE_LPN_D * t->prefetch);
        mpce_lpn__fold_rows(table, mask, w + 4u * MPCE_LPN_D * ahead, 4u * MPCE_LPN_D,
                            out + (o + ahead) * 16u, cnt - ahead, NULL);
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
        mpce_lpn__fold_rows(table, mask, blocks, 48u, out + o * 16u, cnt, NULL);
    }
    return 0;
}

/* ---- the PRG inside the row loop ------------------------------------------
 * Made chunk by chunk, the index blocks cost a phase in which no table miss
 * is in flight: on a Zen 4 the AES of 2.5 blocks an output took 1.7 of the
 * fold's 11 ns. A backend whose AES can be inlined (a short fixed piece,
 * no call, keys in registers) folds through mpce_lpn_fold_fused instead,
 * which makes each group's blocks a few groups ahead, between the rows of
 * the groups before, so the AES runs while the misses wait. A PRG behind a
 * call cannot do this: its fixed cost per call is what a small piece
 * would have to amortize. */
#define MPCE_LPN_GROUP 8u /* outputs a generated piece serves */
#define MPCE_LPN_GROUP_BLOCKS (MPCE_LPN_GROUP * MPCE_LPN_D / 4u) /* 20 */
#define MPCE_LPN_LEAD 2u  /* groups made ahead of the one being read */

/* gen(key, b, dst): the MPCE_LPN_GROUP_BLOCKS blocks ctr(seed, b + i) into
 * dst, for the backend's key state. */
typedef void (*mpce_lpn_gen_fn)(const void *key, uint64_t block, uint8_t *dst);

/*
 * The whole call, as mpce_lpn_fold_all, with the main part's blocks made by
 * gen group by group (a constant gen that the compiler inlines here; the
 * caller compiles this with whatever ISA gen needs). Groups start on
 * multiples of 8 outputs, so group g reads blocks 20g .. 20g+19 exactly;
 * the main part's last outputs that fill no group, and the tail, go
 * through the PRG as in mpce_lpn_fold_range. The fused loop has no chunk
 * (its piece is gen's) and asks for no prefetch.
 */
MPCE_LPN_ALWAYS_INLINE int mpce_lpn_fold_fused(mpce_lpn_gen_fn gen, const void *key,
                                               const struct mpce_prg_ops *prg, void *prg_state,
                                               const struct mpce_lpn_tuning *t, unsigned logk,
                                               uint64_t c0, const uint8_t *table, uint8_t *out,
                                               size_t n)
{
    enum { RING = MPCE_LPN_LEAD + 1u };
    uint8_t ring[RING][MPCE_LPN_GROUP_BLOCKS * 16u];
    const uint32_t mask = (uint32_t)((1ull << logk) - 1u);
    const size_t groups = (n - n % 4u) / MPCE_LPN_GROUP;
    size_t made = 0;

    for (; made < groups && made < MPCE_LPN_LEAD; made++)
        gen(key, c0 + made * MPCE_LPN_GROUP_BLOCKS, ring[made % RING]);
    for (size_t g = 0; g < groups; g++) {
        /* Group g + LEAD's slot is the one group g - 1 has finished with. */
        if (made < groups) {
            gen(key, c0 + made * MPCE_LPN_GROUP_BLOCKS, ring[made % RING]);
            made++;
        }
        mpce_lpn__fold_rows(table, mask, ring[g % RING], 4u * MPCE_LPN_D,
                            out + g * MPCE_LPN_GROUP * 16u, MPCE_LPN_GROUP, NULL);
    }
    return mpce_lpn_fold_range(prg, prg_state, t, logk, c0, table, out, n,
                               groups * MPCE_LPN_GROUP, n);
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
