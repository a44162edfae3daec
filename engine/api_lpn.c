/* Public LPN fold: argument checks, then dispatch. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "engine/pool.h"
#include "plugins/common/lpn_fold.h"

/* Outputs per slice below which a worker thread costs more than it saves
 * (mpce_engine_slices): about 150 us of folding for the portable kernel
 * (~150 ns an output, ten scattered table reads and AES) and for AES-NI
 * (~10 ns). */
#define LPN_SLICE_MIN_OUTPUTS 2048u
#define LPN_SLICE_MIN_OUTPUTS_FAST 16384u

/*
 * One split call, by output range. Slices start on multiples of 4, where
 * SPEC.md section 3's stream layout makes outputs [o, n) of the call the
 * call of n - o outputs at c0 + consumed(o): the n mod 4 tail outputs keep
 * their blocks after 5*L4/2 and go with the last slice.
 */
struct lpn_split {
    const struct mpce_lpn_vtable *vt;
    void *state;
    uint64_t c0;
    const uint8_t *table;
    uint8_t *out;
    size_t n;
    uint64_t groups;    /* n / 4 */
    size_t count;
};

static int lpn_slice(void *arg, size_t i)
{
    const struct lpn_split *s = arg;
    uint64_t g0, g1;
    mpce_slice_range(s->groups, s->count, i, &g0, &g1);
    size_t o0 = (size_t)g0 * 4u;
    size_t o1 = i + 1 == s->count ? s->n : (size_t)g1 * 4u;
    return s->vt->fold(s->state, s->c0 + mpce_lpn_consumed(o0), s->table, s->out + o0 * 16u,
                       o1 - o0);
}

struct mpce_lpn {
    mpce_engine *engine;
    uint8_t seed[16];
    unsigned logk;
    struct mpce_state_cache cache;
};

static int lpn_make(const struct mpce_impl *impl, const void *args, void **state)
{
    const struct mpce_lpn *ctx = args;
    const struct mpce_lpn_vtable *vt = impl->vtable;
    return vt->ctx_new(ctx->seed, ctx->logk, state);
}

static void lpn_destroy(const struct mpce_impl *impl, void *state)
{
    const struct mpce_lpn_vtable *vt = impl->vtable;
    vt->ctx_free(state);
}

uint64_t mpce_lpn_blocks_consumed(uint64_t n)
{
    return mpce_lpn_consumed(n);
}

mpce_status mpce_lpn_new(mpce_engine *engine, const uint8_t seed[16], unsigned logk,
                         mpce_lpn **out)
{
    mpce_error_clear();
    if (!out)
        return mpce_error(MPCE_ERR_ARG, "mpce_lpn_new: out is NULL");
    if (!seed)
        return mpce_error(MPCE_ERR_ARG, "mpce_lpn_new: seed is NULL");
    if (logk < MPCE_LPN_MIN_LOGK || logk > MPCE_LPN_MAX_LOGK)
        return mpce_error(MPCE_ERR_ARG, "mpce_lpn_new: logk = %u; expected %u to %u", logk,
                          MPCE_LPN_MIN_LOGK, MPCE_LPN_MAX_LOGK);
    mpce_status gst = mpce_engine_acquire(engine, &engine);
    if (gst != MPCE_OK)
        return gst;
    struct mpce_lpn *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return mpce_error(MPCE_ERR_NOMEM, "mpce_lpn_new: out of memory");
    ctx->engine = engine;
    memcpy(ctx->seed, seed, 16);
    ctx->logk = logk;
    mpce_state_cache_init(&ctx->cache);
    *out = ctx;
    return MPCE_OK;
}

void mpce_lpn_free(mpce_lpn *ctx)
{
    if (!ctx)
        return;
    mpce_state_cache_destroy(&ctx->cache, lpn_destroy);
    free(ctx);
}

mpce_status mpce_lpn_fold(mpce_lpn *ctx, const char *impl, uint64_t c0, const uint8_t *table,
                          size_t table_blocks, uint8_t *out, size_t n, uint64_t *consumed)
{
    static const char fn[] = "mpce_lpn_fold";
    mpce_error_clear();
    if (!ctx)
        return mpce_error(MPCE_ERR_ARG, "%s: ctx is NULL", fn);
    if (!table)
        return mpce_error(MPCE_ERR_ARG, "%s: table is NULL", fn);
    const size_t k = (size_t)1 << ctx->logk;
    if (table_blocks != k)
        return mpce_error(MPCE_ERR_ARG,
                          "%s: table_blocks = %zu, but logk = %u needs exactly 2^%u = %zu blocks",
                          fn, table_blocks, ctx->logk, ctx->logk, k);
    if (n > SIZE_MAX / 16)
        return mpce_error(MPCE_ERR_ARG, "%s: n = %zu outputs overflows the address space", fn, n);
    if (n && !out)
        return mpce_error(MPCE_ERR_ARG, "%s: out is NULL", fn);
    if (n) {
        uintptr_t t0 = (uintptr_t)table, t1 = t0 + k * 16;
        uintptr_t o0 = (uintptr_t)out, o1 = o0 + n * 16;
        if (o0 < t1 && t0 < o1)
            return mpce_error(MPCE_ERR_ARG, "%s: out overlaps table; use separate buffers", fn);
    }
    const struct mpce_slot *slot;
    void *state;
    mpce_status st = mpce_dispatch(ctx->engine, &ctx->cache, MPCE_PRIM_LPN, impl, lpn_make, ctx,
                                   &slot, &state);
    if (st != MPCE_OK)
        return st;
    if (n) {
        struct lpn_split s = {.vt = slot->impl->vtable, .state = state, .c0 = c0,
                              .table = table, .out = out, .n = n, .groups = n / 4u};
        s.count = mpce_engine_slices(ctx->engine, slot, s.groups, LPN_SLICE_MIN_OUTPUTS / 4u,
                                     LPN_SLICE_MIN_OUTPUTS_FAST / 4u);
        st = mpce_op_status(slot, "lpn.fold",
                            mpce_engine_run(ctx->engine, s.count, lpn_slice, &s));
        if (st != MPCE_OK)
            return st;
    }
    if (consumed)
        *consumed = mpce_lpn_blocks_consumed(n);
    return MPCE_OK;
}
