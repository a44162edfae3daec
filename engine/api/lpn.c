/* SPDX-License-Identifier: Apache-2.0 */
/* Public LPN fold: argument checks, then one routed call. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/runtime/pool.h"
#include "engine/runtime/queue.h"
#include "spec/spec.h"

/* Outputs per slice below which a worker thread costs more than it saves
 * (mpce_engine_slices): about 150 us of folding for the portable kernel
 * (~150 ns an output, ten scattered table reads and AES) and for AES-NI
 * (~10 ns). */
#define LPN_SLICE_MIN_OUTPUTS 2048u
#define LPN_SLICE_MIN_OUTPUTS_FAST 16384u

struct mpce_lpn {
    struct mpce_ctx base;
    uint8_t seed[16];
    unsigned logk;
};

static int lpn_make(const struct mpce_ctx *base, const struct mpce_slot *slot, void **state)
{
    const struct mpce_lpn *ctx = (const struct mpce_lpn *)base;
    return mpce_op_lpn_ctx_new(&slot->ops.lpn, slot->module->state, ctx->seed, ctx->logk,
                               state);
}

uint64_t mpce_lpn_blocks_consumed(uint64_t n)
{
    return mpce_spec_lpn_consumed(n);
}

mpce_status mpce_lpn_new(mpce_engine *engine, const uint8_t seed[16], unsigned logk,
                         mpce_lpn **out)
{
    if (!out)
        return mpce_error(MPCE_ERR_ARG, "mpce_lpn_new: out is NULL");
    if (!seed)
        return mpce_error(MPCE_ERR_ARG, "mpce_lpn_new: seed is NULL");
    if (logk < MPCE_LPN_MIN_LOGK || logk > MPCE_LPN_MAX_LOGK)
        return mpce_error(MPCE_ERR_ARG, "mpce_lpn_new: logk = %u; expected %u to %u", logk,
                          MPCE_LPN_MIN_LOGK, MPCE_LPN_MAX_LOGK);
    mpce_engine *e;
    mpce_status st = mpce_engine_acquire(engine, &e);
    if (st != MPCE_OK)
        return st;
    struct mpce_lpn *ctx = calloc(1, sizeof(*ctx));
    if (!ctx) {
        mpce_engine_unref(e);
        return mpce_error(MPCE_ERR_NOMEM, "mpce_lpn_new: out of memory");
    }
    memcpy(ctx->seed, seed, 16);
    ctx->logk = logk;
    struct mpce_params params = {.lpn_logk = logk};
    st = mpce_ctx_init(&ctx->base, e, MPCE_PRIM_LPN, &params, lpn_make);
    if (st != MPCE_OK) {
        free(ctx);
        mpce_engine_unref(e);
        return st;
    }
    *out = ctx;
    return MPCE_OK;
}

void mpce_lpn_free(mpce_lpn *ctx)
{
    if (!ctx)
        return;
    mpce_ctx_destroy(&ctx->base);
    free(ctx);
}

/*
 * Slices by output range. Slices start on multiples of 4, where SPEC.md
 * section 3's stream layout makes outputs [o, n) of the call the call of
 * n - o outputs at c0 + consumed(o): the n mod 4 tail outputs keep their
 * blocks after 5*L4/2 and go with the last slice. job->units is n / 4.
 */
struct lpn_args {
    uint64_t c0;
    const uint8_t *table;
    uint8_t *out;
    size_t n;
};

static int lpn_slice(const struct mpce_job *job, const struct mpce_call *call, size_t i,
                     size_t count)
{
    const struct lpn_args *a = job->args;
    uint64_t g0, g1;
    mpce_slice_range(job->units, count, i, &g0, &g1);
    size_t o0 = (size_t)g0 * 4u;
    size_t o1 = i + 1 == count ? a->n : (size_t)g1 * 4u;
    return mpce_op_lpn_fold(&job->route.slot->ops.lpn, job->route.state, call,
                            a->c0 + mpce_spec_lpn_consumed(o0), a->table, a->out + o0 * 16u,
                            o1 - o0);
}

static struct mpce_job lpn_job(const struct lpn_args *a)
{
    struct mpce_job job = {
        .slice = lpn_slice,
        .args = a,
        .op = MPCE_OP_lpn_fold,
        .units = a->n / 4u,
        .min_portable = LPN_SLICE_MIN_OUTPUTS / 4u,
        .min_fast = LPN_SLICE_MIN_OUTPUTS_FAST / 4u,
        .elements_per_unit = 4u,
    };
    /* Fewer than four outputs are a tail only: still one call. */
    if (job.units == 0 && a->n > 0)
        job.units = 1;
    return job;
}

mpce_status mpce_lpn_fold(mpce_lpn *ctx, const char *impl, uint64_t c0, const uint8_t *table,
                          size_t table_blocks, uint8_t *out, size_t n, uint64_t *consumed)
{
    static const char fn[] = "mpce_lpn_fold";
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
    if (n && mpce_ranges_overlap(table, k * 16, out, n * 16))
        return mpce_error(MPCE_ERR_ARG, "%s: out overlaps table; use separate buffers", fn);
    struct lpn_args a = {.c0 = c0, .table = table, .out = out, .n = n};
    struct mpce_job job = lpn_job(&a);
    mpce_status st = mpce_ctx_route(&ctx->base, fn, job.op, n, n, impl, &job.route);
    if (st == MPCE_OK && n)
        st = mpce_job_run(ctx->base.engine, &job);
    if (st == MPCE_OK && consumed)
        *consumed = mpce_spec_lpn_consumed(n);
    return st;
}

mpce_status mpce_lpn_fold_buf(mpce_lpn *ctx, mpce_queue *q, const char *impl, uint64_t c0,
                              const mpce_buffer *table, mpce_buffer *out, size_t n)
{
    static const char fn[] = "mpce_lpn_fold_buf";
    if (!ctx)
        return mpce_error(MPCE_ERR_ARG, "%s: ctx is NULL", fn);
    if (n > SIZE_MAX / 16)
        return mpce_error(MPCE_ERR_ARG, "%s: n = %zu outputs overflows the address space", fn, n);
    const mpce_buffer *bufs[2] = {out, table};
    const char *names[2] = {"out", "table"};
    const uint64_t need[2] = {(uint64_t)n * 16u, ((uint64_t)1 << ctx->logk) * 16u};
    mpce_status st = mpce_buf_check(fn, &ctx->base, q, bufs, names, need, 2);
    if (st == MPCE_OK && table == out)
        st = mpce_error(MPCE_ERR_ARG, "%s: out is the table buffer; use separate buffers", fn);
    if (st != MPCE_OK)
        return st;
    struct lpn_args a = {.c0 = c0, .table = mpce_buf_addr(table), .out = mpce_buf_addr(out),
                         .n = n};
    struct mpce_job job = lpn_job(&a);
    st = mpce_ctx_route_queue(&ctx->base, q, fn, job.op, n, n, impl, &job.route);
    if (st != MPCE_OK || n == 0)
        return st;
    mpce_buffer *held[2] = {out, (mpce_buffer *)table};
    return mpce_job_submit(q, &ctx->base, &job, held, 2);
}

mpce_status mpce_lpn_resolve(mpce_lpn *ctx, const char *impl, size_t n, const char **name)
{
    static const char fn[] = "mpce_lpn_resolve";
    if (!ctx || !name)
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, ctx ? "name" : "ctx");
    struct mpce_route r = {0};
    mpce_status st = mpce_ctx_route(&ctx->base, fn, MPCE_OP_lpn_fold, n, n, impl, &r);
    if (st == MPCE_OK)
        *name = r.slot->impl->name;
    return st;
}
