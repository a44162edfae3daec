/* Public PRG operations: argument checks, then dispatch to the implementation. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "engine/pool.h"

/* Output blocks per slice below which a worker thread costs more than it
 * saves (mpce_engine_slices): about 150 us of AES for the portable kernels
 * (~60 ns a block) and for AES-NI/VAES (~0.6 ns a block, memory-bound). */
#define PRG_SLICE_MIN_BLOCKS 4096u
#define PRG_SLICE_MIN_BLOCKS_FAST 262144u

struct mpce_prg {
    mpce_engine *engine;
    size_t m;
    uint8_t keys[MPCE_PRG_MAX_KEYS][MPCE_BLOCK_BYTES];
    struct mpce_state_cache cache;
};

static int prg_make(const struct mpce_impl *impl, const void *args, void **state)
{
    const struct mpce_prg *ctx = args;
    const struct mpce_prg_vtable *vt = impl->vtable;
    return vt->ctx_new(&ctx->keys[0][0], ctx->m, state);
}

static void prg_destroy(const struct mpce_impl *impl, void *state)
{
    const struct mpce_prg_vtable *vt = impl->vtable;
    vt->ctx_free(state);
}

mpce_status mpce_prg_new(mpce_engine *engine, const uint8_t *keys, size_t m, mpce_prg **out)
{
    mpce_error_clear();
    if (!out)
        return mpce_error(MPCE_ERR_ARG, "mpce_prg_new: out is NULL");
    if (!keys)
        return mpce_error(MPCE_ERR_ARG, "mpce_prg_new: keys is NULL");
    if (m < 1 || m > MPCE_PRG_MAX_KEYS)
        return mpce_error(MPCE_ERR_ARG, "mpce_prg_new: m = %zu keys; expected 1 to %u", m,
                          MPCE_PRG_MAX_KEYS);
    mpce_status gst = mpce_engine_acquire(engine, &engine);
    if (gst != MPCE_OK)
        return gst;
    struct mpce_prg *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return mpce_error(MPCE_ERR_NOMEM, "mpce_prg_new: out of memory");
    ctx->engine = engine;
    ctx->m = m;
    memcpy(ctx->keys, keys, m * MPCE_BLOCK_BYTES);
    mpce_state_cache_init(&ctx->cache);
    *out = ctx;
    return MPCE_OK;
}

void mpce_prg_free(mpce_prg *ctx)
{
    if (!ctx)
        return;
    mpce_state_cache_destroy(&ctx->cache, prg_destroy);
    /* Keys are secrets: do not leave them in freed memory. */
    memset(ctx->keys, 0, sizeof(ctx->keys));
    __asm__ __volatile__("" : : "r"(ctx->keys) : "memory");
    free(ctx);
}

size_t mpce_prg_key_count(const mpce_prg *ctx)
{
    return ctx ? ctx->m : 0;
}

/* One split call: each slice is the same op on a sub-range of items. */
struct prg_split {
    const struct mpce_prg_vtable *vt;
    void *state;
    size_t key_index;
    const uint8_t *in;
    uint8_t *out;
    uint64_t c0;
    size_t m;        /* output blocks per item */
    uint64_t items;
    size_t count;
};

static int ecb_slice(void *arg, size_t i)
{
    const struct prg_split *s = arg;
    uint64_t b, e;
    mpce_slice_range(s->items, s->count, i, &b, &e);
    return s->vt->ecb(s->state, s->key_index, s->in + b * MPCE_BLOCK_BYTES,
                      s->out + b * MPCE_BLOCK_BYTES, (size_t)(e - b));
}

static int mmo_slice(void *arg, size_t i)
{
    const struct prg_split *s = arg;
    uint64_t b, e;
    mpce_slice_range(s->items, s->count, i, &b, &e);
    return s->vt->mmo(s->state, s->in + b * MPCE_BLOCK_BYTES,
                      s->out + b * s->m * MPCE_BLOCK_BYTES, (size_t)(e - b));
}

/* Block i of the call is counter c0 + i mod 2^64, so a slice starting at
 * block b is the call at c0 + b, wrap included. */
static int ctr_slice(void *arg, size_t i)
{
    const struct prg_split *s = arg;
    uint64_t b, e;
    mpce_slice_range(s->items, s->count, i, &b, &e);
    return s->vt->ctr(s->state, s->key_index, s->c0 + b, s->out + b * MPCE_BLOCK_BYTES,
                      (size_t)(e - b));
}

static mpce_status prg_split_run(mpce_prg *ctx, const struct mpce_slot *slot, const char *op,
                                 mpce_slice_fn fn, struct prg_split *s)
{
    s->count = mpce_engine_slices(ctx->engine, slot, s->items, PRG_SLICE_MIN_BLOCKS / s->m,
                                  PRG_SLICE_MIN_BLOCKS_FAST / s->m);
    return mpce_op_status(slot, op, mpce_engine_run(ctx->engine, s->count, fn, s));
}

/* Common checks; `blocks_per_item` is the output blocks per input item. */
/* in_name is NULL for ops without an input buffer. */
static mpce_status check_buffers(const char *fn, const mpce_prg *ctx, const char *in_name,
                                 const void *in, const void *out, size_t n,
                                 size_t blocks_per_item)
{
    if (!ctx)
        return mpce_error(MPCE_ERR_ARG, "%s: ctx is NULL", fn);
    if (n > SIZE_MAX / MPCE_BLOCK_BYTES / blocks_per_item)
        return mpce_error(MPCE_ERR_ARG, "%s: n = %zu blocks overflows the address space", fn, n);
    if (!out && n)
        return mpce_error(MPCE_ERR_ARG, "%s: out is NULL", fn);
    if (in_name && !in && n)
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, in_name);
    return MPCE_OK;
}

static mpce_status check_key_index(const char *fn, const mpce_prg *ctx, size_t key_index)
{
    if (key_index >= ctx->m)
        return mpce_error(MPCE_ERR_ARG, "%s: key_index = %zu, but the context holds %zu key%s",
                          fn, key_index, ctx->m, ctx->m == 1 ? "" : "s");
    return MPCE_OK;
}

static int ranges_overlap(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + blen && pb < pa + alen;
}

mpce_status mpce_prg_ecb(mpce_prg *ctx, const char *impl, size_t key_index, const uint8_t *in,
                         uint8_t *out, size_t n)
{
    static const char fn[] = "mpce_prg_ecb";
    mpce_error_clear();
    mpce_status st = check_buffers(fn, ctx, "in", in, out, n, 1);
    if (st == MPCE_OK)
        st = check_key_index(fn, ctx, key_index);
    if (st == MPCE_OK && in != out && n &&
        ranges_overlap(in, n * MPCE_BLOCK_BYTES, out, n * MPCE_BLOCK_BYTES))
        st = mpce_error(MPCE_ERR_ARG, "%s: in and out overlap without being equal", fn);
    const struct mpce_slot *slot;
    void *state;
    if (st == MPCE_OK)
        st = mpce_dispatch(ctx->engine, &ctx->cache, MPCE_PRIM_PRG, impl, prg_make, ctx, &slot,
                           &state);
    if (st != MPCE_OK || n == 0)
        return st;
    struct prg_split s = {.vt = slot->impl->vtable, .state = state, .key_index = key_index,
                          .in = in, .out = out, .m = 1, .items = n};
    return prg_split_run(ctx, slot, "prg.ecb", ecb_slice, &s);
}

mpce_status mpce_prg_mmo(mpce_prg *ctx, const char *impl, const uint8_t *seeds, uint8_t *out,
                         size_t n)
{
    static const char fn[] = "mpce_prg_mmo";
    mpce_error_clear();
    mpce_status st = check_buffers(fn, ctx, "seeds", seeds, out, n, ctx ? ctx->m : 1);
    if (st == MPCE_OK && n &&
        ranges_overlap(seeds, n * MPCE_BLOCK_BYTES, out, n * ctx->m * MPCE_BLOCK_BYTES))
        st = mpce_error(MPCE_ERR_ARG, "%s: out overlaps seeds; use separate buffers", fn);
    const struct mpce_slot *slot;
    void *state;
    if (st == MPCE_OK)
        st = mpce_dispatch(ctx->engine, &ctx->cache, MPCE_PRIM_PRG, impl, prg_make, ctx, &slot,
                           &state);
    if (st != MPCE_OK || n == 0)
        return st;
    struct prg_split s = {.vt = slot->impl->vtable, .state = state, .in = seeds, .out = out,
                          .m = ctx->m, .items = n};
    return prg_split_run(ctx, slot, "prg.mmo", mmo_slice, &s);
}

mpce_status mpce_prg_ctr(mpce_prg *ctx, const char *impl, size_t key_index, uint64_t c0,
                         uint8_t *out, size_t n)
{
    static const char fn[] = "mpce_prg_ctr";
    mpce_error_clear();
    mpce_status st = check_buffers(fn, ctx, NULL, NULL, out, n, 1);
    if (st == MPCE_OK)
        st = check_key_index(fn, ctx, key_index);
    const struct mpce_slot *slot;
    void *state;
    if (st == MPCE_OK)
        st = mpce_dispatch(ctx->engine, &ctx->cache, MPCE_PRIM_PRG, impl, prg_make, ctx, &slot,
                           &state);
    if (st != MPCE_OK || n == 0)
        return st;
    struct prg_split s = {.vt = slot->impl->vtable, .state = state, .key_index = key_index,
                          .out = out, .c0 = c0, .m = 1, .items = n};
    return prg_split_run(ctx, slot, "prg.ctr", ctr_slice, &s);
}
