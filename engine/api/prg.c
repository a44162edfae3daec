/* SPDX-License-Identifier: Apache-2.0 */
/* Public PRG operations: argument checks, then one routed call. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/runtime/pool.h"
#include "engine/runtime/queue.h"

/* Output blocks per slice below which a worker thread costs more than it
 * saves (mpce_engine_slices): about 150 us of AES for the portable kernels
 * (~60 ns a block) and for AES-NI/VAES (~0.6 ns a block, memory-bound). */
#define PRG_SLICE_MIN_BLOCKS 4096u
#define PRG_SLICE_MIN_BLOCKS_FAST 262144u

struct mpce_prg {
    struct mpce_ctx base;
    size_t m;
    uint8_t keys[MPCE_PRG_MAX_KEYS][MPCE_BLOCK_BYTES];
};

static int prg_make(const struct mpce_ctx *base, const struct mpce_slot *slot, void **state)
{
    const struct mpce_prg *ctx = (const struct mpce_prg *)base;
    return mpce_op_prg_ctx_new(&slot->ops.prg, slot->module->state, &ctx->keys[0][0], ctx->m,
                               state);
}

static void wipe_keys(struct mpce_prg *ctx)
{
    /* Keys are secrets: do not leave them in freed memory. */
    memset(ctx->keys, 0, sizeof(ctx->keys));
    __asm__ __volatile__("" : : "r"(ctx->keys) : "memory");
}

mpce_status mpce_prg_new(mpce_engine *engine, const uint8_t *keys, size_t m, mpce_prg **out)
{
    if (!out)
        return mpce_error(MPCE_ERR_ARG, "mpce_prg_new: out is NULL");
    if (!keys)
        return mpce_error(MPCE_ERR_ARG, "mpce_prg_new: keys is NULL");
    if (m < 1 || m > MPCE_PRG_MAX_KEYS)
        return mpce_error(MPCE_ERR_ARG, "mpce_prg_new: m = %zu keys; expected 1 to %u", m,
                          MPCE_PRG_MAX_KEYS);
    mpce_engine *e;
    mpce_status st = mpce_engine_acquire(engine, &e);
    if (st != MPCE_OK)
        return st;
    struct mpce_prg *ctx = calloc(1, sizeof(*ctx));
    if (!ctx) {
        mpce_engine_unref(e);
        return mpce_error(MPCE_ERR_NOMEM, "mpce_prg_new: out of memory");
    }
    ctx->m = m;
    memcpy(ctx->keys, keys, m * MPCE_BLOCK_BYTES);
    struct mpce_params params = {.prg_keys = m};
    st = mpce_ctx_init(&ctx->base, e, MPCE_PRIM_PRG, &params, prg_make);
    if (st != MPCE_OK) {
        wipe_keys(ctx);
        free(ctx);
        mpce_engine_unref(e);
        return st;
    }
    *out = ctx;
    return MPCE_OK;
}

void mpce_prg_free(mpce_prg *ctx)
{
    if (!ctx)
        return;
    mpce_ctx_destroy(&ctx->base);
    wipe_keys(ctx);
    free(ctx);
}

size_t mpce_prg_key_count(const mpce_prg *ctx)
{
    return ctx ? ctx->m : 0;
}

/* ---- the ops, each described once as a slice --------------------------------
 * A slice is the op on a sub-range of items: blocks for ecb and ctr (block i
 * of a CTR call is counter c0 + i mod 2^64, so a slice at block b is the
 * call at c0 + b, wrap included), seeds for mmo. */
struct prg_args {
    size_t key_index;
    const uint8_t *in;
    uint8_t *out;
    uint64_t c0;
    size_t m;            /* output blocks per item */
};

static int ecb_slice(const struct mpce_job *job, const struct mpce_call *call, size_t i,
                     size_t count)
{
    const struct prg_args *a = job->args;
    uint64_t b, e;
    mpce_slice_range(job->units, count, i, &b, &e);
    return mpce_op_prg_ecb(&job->route.slot->ops.prg, job->route.state, call, a->key_index,
                           a->in + b * MPCE_BLOCK_BYTES, a->out + b * MPCE_BLOCK_BYTES,
                           (size_t)(e - b));
}

static int mmo_slice(const struct mpce_job *job, const struct mpce_call *call, size_t i,
                     size_t count)
{
    const struct prg_args *a = job->args;
    uint64_t b, e;
    mpce_slice_range(job->units, count, i, &b, &e);
    return mpce_op_prg_mmo(&job->route.slot->ops.prg, job->route.state, call,
                           a->in + b * MPCE_BLOCK_BYTES, a->out + b * a->m * MPCE_BLOCK_BYTES,
                           (size_t)(e - b));
}

static int ctr_slice(const struct mpce_job *job, const struct mpce_call *call, size_t i,
                     size_t count)
{
    const struct prg_args *a = job->args;
    uint64_t b, e;
    mpce_slice_range(job->units, count, i, &b, &e);
    return mpce_op_prg_ctr(&job->route.slot->ops.prg, job->route.state, call, a->key_index,
                           a->c0 + b, a->out + b * MPCE_BLOCK_BYTES, (size_t)(e - b));
}

static const mpce_job_slice_fn prg_slices[] = {ecb_slice, mmo_slice, ctr_slice};

enum prg_op { PRG_ECB, PRG_MMO, PRG_CTR };
static const enum mpce_op_id prg_op_ids[] = {MPCE_OP_prg_ecb, MPCE_OP_prg_mmo, MPCE_OP_prg_ctr};
static const char *const prg_fns[] = {"mpce_prg_ecb", "mpce_prg_mmo", "mpce_prg_ctr"};
static const char *const prg_buf_fns[] = {"mpce_prg_ecb_buf", "mpce_prg_mmo_buf",
                                          "mpce_prg_ctr_buf"};

static struct mpce_job prg_job(enum prg_op op, const struct prg_args *a, size_t n, size_t m)
{
    struct mpce_job job = {
        .slice = prg_slices[op],
        .args = a,
        .op = prg_op_ids[op],
        .units = n,
        .min_portable = PRG_SLICE_MIN_BLOCKS / m,
        .min_fast = PRG_SLICE_MIN_BLOCKS_FAST / m,
        .elements_per_unit = m,
    };
    return job;
}

static mpce_status check_count(const char *fn, const mpce_prg *ctx, size_t n,
                               size_t blocks_per_item)
{
    if (!ctx)
        return mpce_error(MPCE_ERR_ARG, "%s: ctx is NULL", fn);
    if (n > SIZE_MAX / MPCE_BLOCK_BYTES / blocks_per_item)
        return mpce_error(MPCE_ERR_ARG, "%s: n = %zu blocks overflows the address space", fn, n);
    return MPCE_OK;
}

static mpce_status check_key_index(const char *fn, const mpce_prg *ctx, size_t key_index)
{
    if (key_index >= ctx->m)
        return mpce_error(MPCE_ERR_ARG, "%s: key_index = %zu, but the context holds %zu key%s",
                          fn, key_index, ctx->m, ctx->m == 1 ? "" : "s");
    return MPCE_OK;
}

/* The checks of one host-pointer call; MPCE_OK or the refusal. */
static mpce_status check_host(enum prg_op op, const mpce_prg *ctx, size_t key_index,
                              const uint8_t *in, const uint8_t *out, size_t n)
{
    const char *fn = prg_fns[op];
    const size_t m = op == PRG_MMO && ctx ? ctx->m : 1;
    mpce_status st = check_count(fn, ctx, n, m);
    if (st != MPCE_OK)
        return st;
    if (op != PRG_MMO && (st = check_key_index(fn, ctx, key_index)) != MPCE_OK)
        return st;
    if (n == 0)
        return MPCE_OK;
    if (!out)
        return mpce_error(MPCE_ERR_ARG, "%s: out is NULL", fn);
    if (op != PRG_CTR && !in)
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, op == PRG_MMO ? "seeds" : "in");
    if (op == PRG_ECB && in != out &&
        mpce_ranges_overlap(in, n * MPCE_BLOCK_BYTES, out, n * MPCE_BLOCK_BYTES))
        return mpce_error(MPCE_ERR_ARG, "%s: in and out overlap without being equal", fn);
    if (op == PRG_MMO && mpce_ranges_overlap(in, n * MPCE_BLOCK_BYTES, out, n * m * MPCE_BLOCK_BYTES))
        return mpce_error(MPCE_ERR_ARG, "%s: out overlaps seeds; use separate buffers", fn);
    return MPCE_OK;
}

static mpce_status prg_run(enum prg_op op, mpce_prg *ctx, const char *impl, size_t key_index,
                           uint64_t c0, const uint8_t *in, uint8_t *out, size_t n)
{
    mpce_status st = check_host(op, ctx, key_index, in, out, n);
    if (st != MPCE_OK)
        return st;
    const size_t m = op == PRG_MMO ? ctx->m : 1;
    struct prg_args a = {.key_index = key_index, .in = in, .out = out, .c0 = c0, .m = m};
    struct mpce_job job = prg_job(op, &a, n, m);
    st = mpce_ctx_route(&ctx->base, prg_fns[op], job.op, n, (uint64_t)n * m, impl, &job.route);
    if (st != MPCE_OK || n == 0)
        return st;
    return mpce_job_run(ctx->base.engine, &job);
}

mpce_status mpce_prg_ecb(mpce_prg *ctx, const char *impl, size_t key_index, const uint8_t *in,
                         uint8_t *out, size_t n)
{
    return prg_run(PRG_ECB, ctx, impl, key_index, 0, in, out, n);
}

mpce_status mpce_prg_mmo(mpce_prg *ctx, const char *impl, const uint8_t *seeds, uint8_t *out,
                         size_t n)
{
    return prg_run(PRG_MMO, ctx, impl, 0, 0, seeds, out, n);
}

mpce_status mpce_prg_ctr(mpce_prg *ctx, const char *impl, size_t key_index, uint64_t c0,
                         uint8_t *out, size_t n)
{
    return prg_run(PRG_CTR, ctx, impl, key_index, c0, NULL, out, n);
}

/* ---- buffers ------------------------------------------------------------------ */

static mpce_status prg_run_buf(enum prg_op op, mpce_prg *ctx, mpce_queue *q, const char *impl,
                               size_t key_index, uint64_t c0, const mpce_buffer *in,
                               mpce_buffer *out, size_t n)
{
    const char *fn = prg_buf_fns[op];
    const size_t m = op == PRG_MMO && ctx ? ctx->m : 1;
    mpce_status st = check_count(fn, ctx, n, m);
    if (st == MPCE_OK && op != PRG_MMO)
        st = check_key_index(fn, ctx, key_index);
    const mpce_buffer *bufs[2] = {out, in};
    const char *names[2] = {"out", op == PRG_MMO ? "seeds" : "in"};
    const uint64_t need[2] = {(uint64_t)n * m * MPCE_BLOCK_BYTES, (uint64_t)n * MPCE_BLOCK_BYTES};
    unsigned nb = op == PRG_CTR ? 1 : 2;
    if (st == MPCE_OK)
        st = mpce_buf_check(fn, &ctx->base, q, bufs, names, need, nb);
    if (st == MPCE_OK && op == PRG_MMO && in == out)
        st = mpce_error(MPCE_ERR_ARG, "%s: out is the seeds buffer; use separate buffers", fn);
    if (st != MPCE_OK)
        return st;
    struct prg_args a = {.key_index = key_index,
                         .in = op == PRG_CTR ? NULL : mpce_buf_addr(in),
                         .out = mpce_buf_addr(out),
                         .c0 = c0,
                         .m = m};
    struct mpce_job job = prg_job(op, &a, n, m);
    st = mpce_ctx_route_queue(&ctx->base, q, fn, job.op, n, (uint64_t)n * m, impl, &job.route);
    if (st != MPCE_OK || n == 0)
        return st;
    mpce_buffer *held[2] = {out, (mpce_buffer *)in};
    return mpce_job_submit(q, &ctx->base, &job, held, nb);
}

mpce_status mpce_prg_ecb_buf(mpce_prg *ctx, mpce_queue *queue, const char *impl,
                             size_t key_index, const mpce_buffer *in, mpce_buffer *out, size_t n)
{
    return prg_run_buf(PRG_ECB, ctx, queue, impl, key_index, 0, in, out, n);
}

mpce_status mpce_prg_mmo_buf(mpce_prg *ctx, mpce_queue *queue, const char *impl,
                             const mpce_buffer *seeds, mpce_buffer *out, size_t n)
{
    return prg_run_buf(PRG_MMO, ctx, queue, impl, 0, 0, seeds, out, n);
}

mpce_status mpce_prg_ctr_buf(mpce_prg *ctx, mpce_queue *queue, const char *impl,
                             size_t key_index, uint64_t c0, mpce_buffer *out, size_t n)
{
    return prg_run_buf(PRG_CTR, ctx, queue, impl, key_index, c0, NULL, out, n);
}

mpce_status mpce_prg_resolve(mpce_prg *ctx, const char *impl, const char *op, size_t n,
                             const char **name)
{
    static const char fn[] = "mpce_prg_resolve";
    if (!ctx || !name)
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, ctx ? "name" : "ctx");
    enum mpce_op_id id;
    mpce_status st = mpce_ctx_op_named(&ctx->base, fn, op, &id);
    if (st != MPCE_OK)
        return st;
    struct mpce_route r = {0};
    uint64_t elements = (uint64_t)n * (id == MPCE_OP_prg_mmo ? ctx->m : 1);
    st = mpce_ctx_route(&ctx->base, fn, id, n, elements, impl, &r);
    if (st == MPCE_OK)
        *name = r.slot->impl->name;
    return st;
}
