/* SPDX-License-Identifier: Apache-2.0 */
/* Public DPF operations: argument and key checks, seed drawing, one routed
 * call. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "engine/runtime/pool.h"
#include "engine/runtime/queue.h"
#include "engine/spec/dpf_key.h"
#include "engine/spec/dpf_keys.h"
#include "spec/dpf_batch.h"
#include "spec/spec.h"

/* Points (eval) and keys (eval_keys) per slice below which a worker thread
 * costs more than it saves (mpce_engine_slices): each is a walk of `bits`
 * levels, about 150 us for the portable kernel and for AES-NI at 32 bits. */
#define DPF_SLICE_MIN_POINTS 256u
#define DPF_SLICE_MIN_POINTS_FAST 4096u
/* Full-domain subtrees (below) per slice, likewise: one is ~2 ms for the
 * portable kernel, four ~130 us for AES-NI. */
#define DPF_EVALALL_MIN_CHUNKS 1u
#define DPF_EVALALL_MIN_CHUNKS_FAST 4u
/* Full-domain slices are whole subtrees of 2^14 leaves: at least the chunk
 * a backend expands at once (its tile knob, at most 2^13 leaves), so no
 * slice recomputes nodes its neighbour computed. */
#define DPF_EVALALL_CHUNK_LOG 14u

#define TBIT_BYTE MPCE_SPEC_DPF_TBIT_BYTE

struct mpce_dpf {
    struct mpce_ctx base;
    unsigned bits;
    mpce_dpf_group group;
    uint8_t kl[16], kr[16];
};

static int dpf_make(const struct mpce_ctx *base, const struct mpce_slot *slot, void **state)
{
    const struct mpce_dpf *ctx = (const struct mpce_dpf *)base;
    return mpce_op_dpf_ctx_new(&slot->ops.dpf, slot->module->state, ctx->bits,
                               (unsigned)ctx->group, ctx->kl, ctx->kr, state);
}

mpce_status mpce_dpf_new(mpce_engine *engine, unsigned bits, mpce_dpf_group group,
                         const uint8_t *kl, const uint8_t *kr, mpce_dpf **out)
{
    static const char fn[] = "mpce_dpf_new";
    if (!out)
        return mpce_error(MPCE_ERR_ARG, "%s: out is NULL", fn);
    if (bits < 1 || bits > MPCE_DPF_MAX_BITS)
        return mpce_error(MPCE_ERR_ARG, "%s: bits = %u; expected 1 to %u domain bits", fn, bits,
                          MPCE_DPF_MAX_BITS);
    if (group != MPCE_DPF_BYTES && group != MPCE_DPF_U64)
        return mpce_error(MPCE_ERR_ARG, "%s: group = %d; expected MPCE_DPF_BYTES or MPCE_DPF_U64",
                          fn, (int)group);
    if ((kl == NULL) != (kr == NULL))
        return mpce_error(MPCE_ERR_ARG,
                          "%s: give both PRG keys kl and kr, or neither for the defaults", fn);
    struct mpce_dpf *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return mpce_error(MPCE_ERR_NOMEM, "%s: out of memory", fn);
    ctx->bits = bits;
    ctx->group = group;
    mpce_status st = MPCE_OK;
    if (kl) {
        memcpy(ctx->kl, kl, 16);
        memcpy(ctx->kr, kr, 16);
    } else {
        st = mpce_dpf_default_keys(ctx->kl, ctx->kr);
    }
    mpce_engine *e = NULL;
    if (st == MPCE_OK)
        st = mpce_engine_acquire(engine, &e);
    if (st == MPCE_OK) {
        struct mpce_params params = {.dpf_bits = bits, .dpf_group = (unsigned)group};
        st = mpce_ctx_init(&ctx->base, e, MPCE_PRIM_DPF, &params, dpf_make);
        if (st != MPCE_OK)
            mpce_engine_unref(e);
    }
    if (st != MPCE_OK) {
        free(ctx);
        return st;
    }
    *out = ctx;
    return MPCE_OK;
}

mpce_status mpce_dpf_new_for_key(mpce_engine *engine, const mpce_dpf_key *key, mpce_dpf **out)
{
    if (!key)
        return mpce_error(MPCE_ERR_ARG, "mpce_dpf_new_for_key: key is NULL");
    return mpce_dpf_new(engine, key->k.bits, (mpce_dpf_group)key->k.group, key->k.kl, key->k.kr,
                        out);
}

void mpce_dpf_free(mpce_dpf *ctx)
{
    if (!ctx)
        return;
    mpce_ctx_destroy(&ctx->base);
    free(ctx);
}

/* ---- the ops, each described once as a slice ---------------------------------
 * eval by point range, eval_keys by key range, evalall by ranges of whole
 * subtrees (through evalall_range; one evalall call when unsplit or when the
 * implementation's table predates evalall_range). */
struct dpf_args {
    const mpce_dpf *ctx;
    const struct mpce_dpf_key_v1 *key;
    const struct mpce_dpf_key_v1 *const *keys;
    const uint64_t *points;
    uint8_t *out;
    size_t osz;
    uint64_t unit_len;  /* evalall: leaves per unit */
    uint64_t domain;    /* evalall: 2^bits */
    /* eval_batch */
    const struct mpce_dpf_batch_v1 *batch;
    size_t first;
    /* gen */
    uint64_t alpha;
    const uint8_t *beta, *s0, *s1;
    struct mpce_dpf_key_v1 *k0, *k1;
};

static int gen_slice(const struct mpce_job *job, const struct mpce_call *call, size_t i,
                     size_t count)
{
    const struct dpf_args *a = job->args;
    (void)i;
    (void)count;
    return mpce_op_dpf_gen(&job->route.slot->ops.dpf, job->route.state, call, a->alpha,
                           a->beta, a->s0, a->s1, a->k0, a->k1);
}

static int eval_slice(const struct mpce_job *job, const struct mpce_call *call, size_t i,
                      size_t count)
{
    const struct dpf_args *a = job->args;
    uint64_t b, e;
    mpce_slice_range(job->units, count, i, &b, &e);
    return mpce_op_dpf_eval(&job->route.slot->ops.dpf, job->route.state, call, a->key,
                            a->points + b, (size_t)(e - b), a->out + b * a->osz);
}

static int eval_keys_slice(const struct mpce_job *job, const struct mpce_call *call, size_t i,
                           size_t count)
{
    const struct dpf_args *a = job->args;
    uint64_t b, e;
    mpce_slice_range(job->units, count, i, &b, &e);
    return mpce_op_dpf_eval_keys(&job->route.slot->ops.dpf, job->route.state, call,
                                 a->keys + b, a->points + b, (size_t)(e - b),
                                 a->out + b * a->osz);
}

/* Keys unpacked a run at a time for a table without eval_batch (modules of
 * ABI 2.2 and before, or any that leave it out). */
static int eval_batch_unpacked(const struct mpce_job *job, const struct mpce_call *call,
                               const struct dpf_args *a, uint64_t b, uint64_t e)
{
    enum { RUN = 256 };
    const mpce_dpf *ctx = a->ctx;
    /* Each run must be finished before the next overwrites the keys: the
     * runs are plain host calls even for an implementation that could
     * complete them later (a call without `done` finishes before it
     * returns). */
    struct mpce_call sync = *call;
    sync.done = NULL;
    struct mpce_dpf_key_v1 *keys = malloc(RUN * sizeof(*keys));
    const struct mpce_dpf_key_v1 **ptrs = malloc(RUN * sizeof(*ptrs));
    int rc = keys && ptrs ? 0 : MPCE_ERR_NOMEM;
    for (uint64_t at = b; rc == 0 && at < e; at += RUN) {
        const size_t cnt = (size_t)(e - at < RUN ? e - at : RUN);
        mpce_spec_dpf_batch_unpack(a->batch, a->first + (size_t)at, cnt, ctx->bits,
                                   (unsigned)ctx->group, ctx->kl, ctx->kr, keys, ptrs);
        rc = mpce_op_dpf_eval_keys(&job->route.slot->ops.dpf, job->route.state, &sync, ptrs,
                                   a->points + at, cnt, a->out + at * a->osz);
    }
    if (keys)
        OPENSSL_cleanse(keys, RUN * sizeof(*keys));
    free(keys);
    free(ptrs);
    return rc;
}

static int eval_batch_slice(const struct mpce_job *job, const struct mpce_call *call, size_t i,
                            size_t count)
{
    const struct dpf_args *a = job->args;
    const struct mpce_dpf_ops *ops = &job->route.slot->ops.dpf;
    uint64_t b, e;
    mpce_slice_range(job->units, count, i, &b, &e);
    if (ops->eval_batch == NULL)
        return eval_batch_unpacked(job, call, a, b, e);
    return mpce_op_dpf_eval_batch(ops, job->route.state, call, a->batch, a->first + (size_t)b,
                                  a->points + b, (size_t)(e - b), a->out + b * a->osz);
}

static int evalall_slice(const struct mpce_job *job, const struct mpce_call *call, size_t i,
                         size_t count)
{
    const struct dpf_args *a = job->args;
    const struct mpce_dpf_ops *ops = &job->route.slot->ops.dpf;
    if (count == 1)
        return mpce_op_dpf_evalall(ops, job->route.state, call, a->key, a->out);
    uint64_t b, e;
    mpce_slice_range(job->units, count, i, &b, &e);
    uint64_t x0 = b * a->unit_len, x1 = e * a->unit_len;
    if (x1 > a->domain)
        x1 = a->domain;
    return mpce_op_dpf_evalall_range(ops, job->route.state, call, a->key, x0, x1,
                                     a->out + x0 * a->osz);
}

static const char *group_name(unsigned group)
{
    return group == MPCE_DPF_U64 ? "u64" : "bytes";
}

static struct mpce_dpf_keys_ctx batch_ctx(const mpce_dpf *ctx)
{
    struct mpce_dpf_keys_ctx c = {ctx->bits, (unsigned)ctx->group, ctx->kl, ctx->kr};
    return c;
}

/* A key is evaluated only by a context of the same domain, group and PRG
 * keys (mpce_dpf_key_fits, which key batches use too). */
static mpce_status check_key(const char *fn, const char *arg, size_t i, const mpce_dpf *ctx,
                             const mpce_dpf_key *key)
{
    const struct mpce_dpf_keys_ctx c = batch_ctx(ctx);
    return mpce_dpf_key_fits(fn, arg, i, 1, &c, key ? &key->k : NULL);
}

/* Every point inside the domain: one OR over all of them (a loop the
 * compiler vectorizes), and a search only when one is outside. */
static mpce_status check_points(const char *fn, const uint64_t *points, size_t n, unsigned bits)
{
    if (bits >= 64)
        return MPCE_OK;
    uint64_t any = 0;
    for (size_t i = 0; i < n; i++)
        any |= points[i];
    if ((any >> bits) == 0)
        return MPCE_OK;
    size_t i = 0;
    while ((points[i] >> bits) == 0)
        i++;
    return mpce_error(MPCE_ERR_ARG,
                      "%s: points[%zu] = %llu is outside the domain [0, 2^%u) of this context",
                      fn, i, (unsigned long long)points[i], bits);
}

mpce_status mpce_dpf_gen(mpce_dpf *ctx, const char *impl, uint64_t alpha, const uint8_t beta[16],
                         const uint8_t *seed0, const uint8_t *seed1, mpce_dpf_key **key0,
                         mpce_dpf_key **key1)
{
    static const char fn[] = "mpce_dpf_gen";
    if (!ctx)
        return mpce_error(MPCE_ERR_ARG, "%s: ctx is NULL", fn);
    if (!beta)
        return mpce_error(MPCE_ERR_ARG, "%s: beta is NULL", fn);
    if (!key0 || !key1)
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, key0 ? "key1" : "key0");
    if ((seed0 == NULL) != (seed1 == NULL))
        return mpce_error(MPCE_ERR_ARG,
                          "%s: give both seeds seed0 and seed1, or neither to draw them", fn);
    if (ctx->bits < 64 && (alpha >> ctx->bits) != 0)
        return mpce_error(MPCE_ERR_ARG, "%s: alpha = %llu is outside the domain [0, 2^%u)", fn,
                          (unsigned long long)alpha, ctx->bits);
    uint8_t b[16], s0[16], s1[16];
    memcpy(b, beta, 16);
    if (ctx->group == MPCE_DPF_U64) {
        for (int i = 8; i < 16; i++)
            if (b[i])
                return mpce_error(MPCE_ERR_ARG,
                                  "%s: beta bytes 8..15 must be zero for the u64 group (the "
                                  "value is 8 little-endian bytes)",
                                  fn);
    } else {
        b[TBIT_BYTE] &= 0xfe;
    }
    struct mpce_route route = {0};
    mpce_status st = mpce_ctx_route(&ctx->base, fn, MPCE_OP_dpf_gen, 1, 1, impl, &route);
    if (st != MPCE_OK)
        return st;
    if (seed0) {
        memcpy(s0, seed0, 16);
        memcpy(s1, seed1, 16);
    } else if (RAND_bytes(s0, 16) != 1 || RAND_bytes(s1, 16) != 1) {
        return mpce_error(MPCE_ERR_RANDOM,
                          "%s: OpenSSL RAND_bytes failed to draw root seeds; check the system "
                          "entropy source, or supply seed0 and seed1",
                          fn);
    }
    s0[TBIT_BYTE] &= 0xfe;
    s1[TBIT_BYTE] &= 0xfe;

    struct mpce_dpf_key_v1 *k0 = calloc(1, sizeof(*k0)), *k1 = calloc(1, sizeof(*k1));
    if (!k0 || !k1) {
        free(k0);
        free(k1);
        return mpce_error(MPCE_ERR_NOMEM, "%s: out of memory", fn);
    }
    struct dpf_args a = {.alpha = alpha, .beta = b, .s0 = s0, .s1 = s1, .k0 = k0, .k1 = k1};
    struct mpce_job job = {.route = route, .slice = gen_slice, .args = &a,
                           .op = MPCE_OP_dpf_gen, .units = 1, .min_portable = 1,
                           .min_fast = 1};
    st = mpce_job_run(ctx->base.engine, &job);
    mpce_dpf_key *w0 = NULL, *w1 = NULL;
    if (st == MPCE_OK) {
        w0 = mpce_dpf_key_wrap(k0);
        w1 = mpce_dpf_key_wrap(k1);
        if (!w0 || !w1) {
            mpce_dpf_key_free(w0);
            mpce_dpf_key_free(w1);
            st = mpce_error(MPCE_ERR_NOMEM, "%s: out of memory", fn);
        }
    }
    memset(k0, 0, sizeof(*k0));
    memset(k1, 0, sizeof(*k1));
    free(k0);
    free(k1);
    memset(s0, 0, sizeof(s0));
    memset(s1, 0, sizeof(s1));
    if (st != MPCE_OK)
        return st;
    *key0 = w0;
    *key1 = w1;
    return MPCE_OK;
}

mpce_status mpce_dpf_gen_u64(mpce_dpf *ctx, const char *impl, uint64_t alpha, uint64_t beta,
                             const uint8_t *seed0, const uint8_t *seed1, mpce_dpf_key **key0,
                             mpce_dpf_key **key1)
{
    if (ctx && ctx->group != MPCE_DPF_U64)
        return mpce_error(MPCE_ERR_ARG,
                          "mpce_dpf_gen_u64: the context's group is bytes; use mpce_dpf_gen");
    uint8_t b[16] = {0};
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(beta >> (8 * i));
    return mpce_dpf_gen(ctx, impl, alpha, b, seed0, seed1, key0, key1);
}

/* ---- evaluation ------------------------------------------------------------------ */

static struct mpce_job eval_job(enum mpce_op_id op, const struct dpf_args *a, uint64_t units)
{
    struct mpce_job job = {
        .slice = op == MPCE_OP_dpf_eval ? eval_slice : eval_keys_slice,
        .args = a,
        .op = op,
        .units = units,
        .min_portable = DPF_SLICE_MIN_POINTS,
        .min_fast = DPF_SLICE_MIN_POINTS_FAST,
        .elements_per_unit = 1,
    };
    return job;
}

/* The job of a full-domain evaluation: whole subtrees per slice, and no
 * split at all for a table without evalall_range. */
static struct mpce_job evalall_job(const mpce_dpf *ctx, struct dpf_args *a,
                                   const struct mpce_route *route)
{
    a->domain = (uint64_t)1 << ctx->bits;
    a->unit_len =
        ctx->bits < DPF_EVALALL_CHUNK_LOG ? a->domain : (uint64_t)1 << DPF_EVALALL_CHUNK_LOG;
    struct mpce_job job = {
        .route = *route,
        .slice = evalall_slice,
        .args = a,
        .op = MPCE_OP_dpf_evalall,
        .units = a->domain / a->unit_len,
        .min_portable = DPF_EVALALL_MIN_CHUNKS,
        .min_fast = DPF_EVALALL_MIN_CHUNKS_FAST,
        .elements_per_unit = a->unit_len,
    };
    if (route->slot->ops.dpf.evalall_range == NULL)
        job.units = 1;
    return job;
}

static mpce_status check_eval(const char *fn, const mpce_dpf *ctx, const mpce_dpf_key *key,
                              size_t npoints)
{
    if (!ctx)
        return mpce_error(MPCE_ERR_ARG, "%s: ctx is NULL", fn);
    mpce_status st = check_key(fn, "key", (size_t)-1, ctx, key);
    if (st == MPCE_OK && npoints > SIZE_MAX / 16)
        st = mpce_error(MPCE_ERR_ARG, "%s: npoints = %zu overflows the address space", fn,
                        npoints);
    return st;
}

mpce_status mpce_dpf_eval(mpce_dpf *ctx, const char *impl, const mpce_dpf_key *key,
                          const uint64_t *points, size_t npoints, uint8_t *out)
{
    static const char fn[] = "mpce_dpf_eval";
    mpce_status st = check_eval(fn, ctx, key, npoints);
    if (st != MPCE_OK)
        return st;
    if (npoints && (!points || !out))
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, points ? "out" : "points");
    if ((st = check_points(fn, points, npoints, ctx->bits)) != MPCE_OK)
        return st;
    struct dpf_args a = {.key = &key->k, .points = points, .out = out,
                         .osz = mpce_dpf_output_size(ctx->group)};
    struct mpce_job job = eval_job(MPCE_OP_dpf_eval, &a, npoints);
    st = mpce_ctx_route(&ctx->base, fn, job.op, npoints, npoints, impl, &job.route);
    if (st != MPCE_OK || npoints == 0)
        return st;
    return mpce_job_run(ctx->base.engine, &job);
}

mpce_status mpce_dpf_eval_keys(mpce_dpf *ctx, const char *impl, const mpce_dpf_key *const *keys,
                               const uint64_t *points, size_t nkeys, uint8_t *out)
{
    static const char fn[] = "mpce_dpf_eval_keys";
    if (!ctx)
        return mpce_error(MPCE_ERR_ARG, "%s: ctx is NULL", fn);
    if (nkeys > SIZE_MAX / 16 / sizeof(void *))
        return mpce_error(MPCE_ERR_ARG, "%s: nkeys = %zu overflows the address space", fn, nkeys);
    if (nkeys && (!keys || !points || !out))
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn,
                          !keys ? "keys" : !points ? "points" : "out");
    mpce_status st = check_points(fn, points, nkeys, ctx->bits);
    if (st != MPCE_OK)
        return st;
    struct dpf_args a = {.points = points, .out = out, .osz = mpce_dpf_output_size(ctx->group)};
    struct mpce_job job = eval_job(MPCE_OP_dpf_eval_keys, &a, nkeys);
    st = mpce_ctx_route(&ctx->base, fn, job.op, nkeys, nkeys, impl, &job.route);
    if (st != MPCE_OK || nkeys == 0)
        return st;
    /* The ABI takes the plain v1 structs; mpce_dpf_key wraps exactly one.
     * Each key is checked as its pointer is taken: one pass over keys that
     * are as likely as not in memory, not two (mpce_dpf_keys_new checks a
     * batch once for all its calls). */
    const struct mpce_dpf_key_v1 **raw = malloc(nkeys * sizeof(*raw));
    if (!raw)
        return mpce_error(MPCE_ERR_NOMEM, "%s: out of memory", fn);
    for (size_t i = 0; i < nkeys; i++) {
        if ((st = check_key(fn, "keys", i, ctx, keys[i])) != MPCE_OK) {
            free(raw);
            return st;
        }
        raw[i] = &keys[i]->k;
    }
    a.keys = raw;
    st = mpce_job_run(ctx->base.engine, &job);
    free(raw);
    return st;
}

/* ---- key batches ---------------------------------------------------------- */

/* The two ways to make a batch: parsed keys or serialized ones (src names
 * whichever is given, for its NULL check). */
static mpce_status keys_build(const char *fn, mpce_dpf *ctx, const char *src_name,
                              const void *src, const mpce_dpf_key *const *keys,
                              const uint8_t *buf, size_t len, size_t nkeys, mpce_dpf_keys **out)
{
    if (!ctx || !out)
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, ctx ? "out" : "ctx");
    if (nkeys && !src)
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, src_name);
    const struct mpce_dpf_keys_ctx c = batch_ctx(ctx);
    return mpce_dpf_keys_build(fn, &c, keys, buf, len, nkeys, out);
}

mpce_status mpce_dpf_keys_new(mpce_dpf *ctx, const mpce_dpf_key *const *keys, size_t nkeys,
                              mpce_dpf_keys **out)
{
    return keys_build("mpce_dpf_keys_new", ctx, "keys", keys, keys, NULL, 0, nkeys, out);
}

mpce_status mpce_dpf_keys_parse(mpce_dpf *ctx, const uint8_t *buf, size_t len, size_t nkeys,
                                mpce_dpf_keys **out)
{
    return keys_build("mpce_dpf_keys_parse", ctx, "buf", buf, NULL, buf, len, nkeys, out);
}

mpce_status mpce_dpf_eval_batch(mpce_dpf *ctx, const char *impl, const mpce_dpf_keys *batch,
                                size_t first, const uint64_t *points, size_t n, uint8_t *out)
{
    static const char fn[] = "mpce_dpf_eval_batch";
    if (!ctx || !batch)
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, ctx ? "batch" : "ctx");
    if (batch->bits != ctx->bits || batch->group != (unsigned)ctx->group ||
        memcmp(batch->kl, ctx->kl, 16) != 0 || memcmp(batch->kr, ctx->kr, 16) != 0)
        return mpce_error(MPCE_ERR_ARG,
                          "%s: the batch's keys are for %u domain bits, the %s group and "
                          "their own PRG keys; the context has %u bits and the %s group%s; "
                          "evaluate it with a context made like the one that made it",
                          fn, batch->bits, group_name(batch->group), ctx->bits,
                          group_name((unsigned)ctx->group),
                          batch->bits == ctx->bits && batch->group == (unsigned)ctx->group
                              ? ", but other PRG keys"
                              : "");
    if (first > batch->b.nkeys || n > batch->b.nkeys - first)
        return mpce_error(MPCE_ERR_ARG,
                          "%s: keys %zu .. %zu + %zu are past the batch's %zu keys", fn, first,
                          first, n, batch->b.nkeys);
    if (n && (!points || !out))
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, points ? "out" : "points");
    mpce_status st = check_points(fn, points, n, ctx->bits);
    if (st != MPCE_OK)
        return st;
    struct dpf_args a = {.ctx = ctx, .batch = &batch->b, .first = first, .points = points,
                         .out = out, .osz = mpce_dpf_output_size(ctx->group)};
    /* The implementation that evaluates many keys best: eval_keys's route. */
    struct mpce_job job = eval_job(MPCE_OP_dpf_eval_keys, &a, n);
    job.slice = eval_batch_slice;
    st = mpce_ctx_route(&ctx->base, fn, job.op, n, n, impl, &job.route);
    if (st != MPCE_OK || n == 0)
        return st;
    return mpce_job_run(ctx->base.engine, &job);
}

/* Full-domain output of ctx: 2^bits points, or an error naming fn. */
static mpce_status evalall_size(const char *fn, const mpce_dpf *ctx, uint64_t *need)
{
    if (ctx->bits > MPCE_DPF_MAX_EVALALL_BITS)
        return mpce_error(MPCE_ERR_ARG,
                          "%s: full-domain evaluation needs bits <= %u, the key has %u; use "
                          "mpce_dpf_eval on the points you need",
                          fn, MPCE_DPF_MAX_EVALALL_BITS, ctx->bits);
    *need = ((uint64_t)1 << ctx->bits) * mpce_dpf_output_size(ctx->group);
    if (*need > SIZE_MAX)
        return mpce_error(MPCE_ERR_ARG, "%s: 2^%u outputs do not fit in this address space", fn,
                          ctx->bits);
    return MPCE_OK;
}

mpce_status mpce_dpf_evalall(mpce_dpf *ctx, const char *impl, const mpce_dpf_key *key,
                             uint8_t *out, size_t out_len)
{
    static const char fn[] = "mpce_dpf_evalall";
    mpce_status st = check_eval(fn, ctx, key, 0);
    uint64_t need = 0;
    if (st == MPCE_OK)
        st = evalall_size(fn, ctx, &need);
    if (st != MPCE_OK)
        return st;
    if (!out)
        return mpce_error(MPCE_ERR_ARG, "%s: out is NULL", fn);
    if (out_len < need)
        return mpce_error(MPCE_ERR_ARG,
                          "%s: out_len = %zu bytes, but 2^%u points of %zu bytes need %llu", fn,
                          out_len, ctx->bits, mpce_dpf_output_size(ctx->group),
                          (unsigned long long)need);
    const uint64_t domain = (uint64_t)1 << ctx->bits;
    struct mpce_route route = {0};
    st = mpce_ctx_route(&ctx->base, fn, MPCE_OP_dpf_evalall, domain, domain, impl, &route);
    if (st != MPCE_OK)
        return st;
    struct dpf_args a = {.key = &key->k, .out = out, .osz = mpce_dpf_output_size(ctx->group)};
    struct mpce_job job = evalall_job(ctx, &a, &route);
    return mpce_job_run(ctx->base.engine, &job);
}

/* ---- buffers ------------------------------------------------------------------ */

mpce_status mpce_dpf_eval_buf(mpce_dpf *ctx, mpce_queue *q, const char *impl,
                              const mpce_dpf_key *key, const mpce_buffer *points,
                              size_t npoints, mpce_buffer *out)
{
    static const char fn[] = "mpce_dpf_eval_buf";
    mpce_status st = check_eval(fn, ctx, key, npoints);
    if (st != MPCE_OK)
        return st;
    const size_t osz = mpce_dpf_output_size(ctx->group);
    const mpce_buffer *bufs[2] = {out, points};
    const char *names[2] = {"out", "points"};
    const uint64_t need[2] = {(uint64_t)npoints * osz, (uint64_t)npoints * sizeof(uint64_t)};
    if ((st = mpce_buf_check(fn, &ctx->base, q, bufs, names, need, 2)) != MPCE_OK)
        return st;
    const uint64_t *pts = mpce_buf_addr(points);
    if (q->dev == NULL && (st = check_points(fn, pts, npoints, ctx->bits)) != MPCE_OK)
        return st;
    struct dpf_args a = {.key = &key->k, .points = pts, .out = mpce_buf_addr(out), .osz = osz};
    struct mpce_job job = eval_job(MPCE_OP_dpf_eval, &a, npoints);
    st = mpce_ctx_route_queue(&ctx->base, q, fn, job.op, npoints, npoints, impl, &job.route);
    if (st != MPCE_OK || npoints == 0)
        return st;
    mpce_buffer *held[2] = {out, (mpce_buffer *)points};
    return mpce_job_submit(q, &ctx->base, &job, held, 2);
}

mpce_status mpce_dpf_evalall_buf(mpce_dpf *ctx, mpce_queue *q, const char *impl,
                                 const mpce_dpf_key *key, mpce_buffer *out)
{
    static const char fn[] = "mpce_dpf_evalall_buf";
    mpce_status st = check_eval(fn, ctx, key, 0);
    uint64_t need = 0;
    if (st == MPCE_OK)
        st = evalall_size(fn, ctx, &need);
    const mpce_buffer *bufs[1] = {out};
    const char *names[1] = {"out"};
    if (st == MPCE_OK)
        st = mpce_buf_check(fn, &ctx->base, q, bufs, names, &need, 1);
    if (st != MPCE_OK)
        return st;
    const uint64_t domain = (uint64_t)1 << ctx->bits;
    struct mpce_route route = {0};
    st = mpce_ctx_route_queue(&ctx->base, q, fn, MPCE_OP_dpf_evalall, domain, domain, impl,
                              &route);
    if (st != MPCE_OK)
        return st;
    struct dpf_args a = {.key = &key->k, .out = mpce_buf_addr(out),
                         .osz = mpce_dpf_output_size(ctx->group)};
    struct mpce_job job = evalall_job(ctx, &a, &route);
    return mpce_job_submit(q, &ctx->base, &job, &out, 1);
}

mpce_status mpce_dpf_resolve(mpce_dpf *ctx, const char *impl, const char *op, size_t units,
                             const char **name)
{
    static const char fn[] = "mpce_dpf_resolve";
    if (!ctx || !name)
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, ctx ? "name" : "ctx");
    enum mpce_op_id id;
    mpce_status st = mpce_ctx_op_named(&ctx->base, fn, op, &id);
    if (st != MPCE_OK)
        return st;
    uint64_t n = id == MPCE_OP_dpf_gen ? 1 : units, bytes;
    if (id == MPCE_OP_dpf_evalall) {
        if ((st = evalall_size(fn, ctx, &bytes)) != MPCE_OK)
            return st; /* no evalall call could run on this context */
        n = (uint64_t)1 << ctx->bits;
    }
    struct mpce_route r = {0};
    st = mpce_ctx_route(&ctx->base, fn, id, n, n, impl, &r);
    if (st == MPCE_OK)
        *name = r.slot->impl->name;
    return st;
}
