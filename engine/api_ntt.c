/* Public NTT operations: parameter and input checks, then dispatch. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "engine/ntt_params.h"
#include "engine/pool.h"

/* Coefficients per slice below which a worker thread costs more than it
 * saves (mpce_engine_slices): about 150 us of transforms for the portable
 * kernel (~10 ns a coefficient) and for AVX-512/IFMA (~2 ns), and of the
 * input check, a memory-speed pass. */
#define NTT_SLICE_MIN_WORDS 16384u
#define NTT_SLICE_MIN_WORDS_FAST 131072u
#define NTT_CHECK_MIN_WORDS 524288u

struct mpce_ntt {
    mpce_engine *engine;
    size_t n, l;
    uint64_t *q, *g, *psi;
    struct mpce_state_cache cache;
};

static int ntt_make(const struct mpce_impl *impl, const void *args, void **state)
{
    const struct mpce_ntt *ctx = args;
    const struct mpce_ntt_vtable *vt = impl->vtable;
    return vt->ctx_new(ctx->n, ctx->l, ctx->q, ctx->psi, state);
}

static void ntt_destroy(const struct mpce_impl *impl, void *state)
{
    const struct mpce_ntt_vtable *vt = impl->vtable;
    vt->ctx_free(state);
}

mpce_status mpce_ntt_new(mpce_engine *engine, size_t n, const uint64_t *moduli, size_t l,
                         mpce_ntt **out)
{
    mpce_error_clear();
    if (!out)
        return mpce_error(MPCE_ERR_ARG, "mpce_ntt_new: out is NULL");
    if (!moduli)
        return mpce_error(MPCE_ERR_ARG, "mpce_ntt_new: moduli is NULL");
    if (l < 1 || l > MPCE_NTT_MAX_MODULI)
        return mpce_error(MPCE_ERR_ARG, "mpce_ntt_new: l = %zu moduli; expected 1 to %u", l,
                          MPCE_NTT_MAX_MODULI);
    mpce_status gst = mpce_engine_acquire(engine, &engine);
    if (gst != MPCE_OK)
        return gst;
    struct mpce_ntt *ctx = calloc(1, sizeof(*ctx));
    uint64_t *arrays = calloc(3 * l, sizeof(uint64_t));
    if (!ctx || !arrays) {
        free(ctx);
        free(arrays);
        return mpce_error(MPCE_ERR_NOMEM, "mpce_ntt_new: out of memory");
    }
    ctx->q = arrays;
    ctx->g = arrays + l;
    ctx->psi = arrays + 2 * l;
    mpce_status st = mpce_ntt_params(n, moduli, l, ctx->g, ctx->psi);
    if (st != MPCE_OK) {
        free(arrays);
        free(ctx);
        return st;
    }
    memcpy(ctx->q, moduli, l * sizeof(uint64_t));
    ctx->engine = engine;
    ctx->n = n;
    ctx->l = l;
    mpce_state_cache_init(&ctx->cache);
    *out = ctx;
    return MPCE_OK;
}

void mpce_ntt_free(mpce_ntt *ctx)
{
    if (!ctx)
        return;
    mpce_state_cache_destroy(&ctx->cache, ntt_destroy);
    free(ctx->q);
    free(ctx);
}

size_t mpce_ntt_degree(const mpce_ntt *ctx)
{
    return ctx ? ctx->n : 0;
}

size_t mpce_ntt_modulus_count(const mpce_ntt *ctx)
{
    return ctx ? ctx->l : 0;
}

mpce_status mpce_ntt_roots(const mpce_ntt *ctx, size_t l, uint64_t *g, uint64_t *psi)
{
    mpce_error_clear();
    if (!ctx)
        return mpce_error(MPCE_ERR_ARG, "mpce_ntt_roots: ctx is NULL");
    if (l >= ctx->l)
        return mpce_error(MPCE_ERR_ARG, "mpce_ntt_roots: l = %zu, but the context has %zu moduli",
                          l, ctx->l);
    if (g)
        *g = ctx->g[l];
    if (psi)
        *psi = ctx->psi[l];
    return MPCE_OK;
}

static mpce_status check_batch(const char *fn, const mpce_ntt *ctx, size_t batch)
{
    if (!ctx)
        return mpce_error(MPCE_ERR_ARG, "%s: ctx is NULL", fn);
    if (batch > SIZE_MAX / sizeof(uint64_t) / ctx->l / ctx->n)
        return mpce_error(MPCE_ERR_ARG, "%s: batch = %zu polynomials overflows the address space",
                          fn, batch);
    return MPCE_OK;
}

/* SPEC.md: plugins may assume canonical inputs, so the engine checks them in
 * one pass before any output is written. Polynomials [b0, b1) of v. */
static mpce_status check_canonical(const char *fn, const char *arg, const mpce_ntt *ctx,
                                   const uint64_t *v, size_t b0, size_t b1)
{
    for (size_t b = b0; b < b1; b++) {
        for (size_t r = 0; r < ctx->l; r++) {
            const uint64_t *row = v + (b * ctx->l + r) * ctx->n;
            const uint64_t q = ctx->q[r];
            uint64_t bad = 0;
            for (size_t i = 0; i < ctx->n; i++)
                bad |= (uint64_t)(row[i] >= q);
            if (!bad)
                continue;
            for (size_t i = 0; i < ctx->n; i++)
                if (row[i] >= q)
                    return mpce_error(MPCE_ERR_ARG,
                                      "%s: %s[%zu] = %llu is not below moduli[%zu] = %llu "
                                      "(polynomial %zu, coefficient %zu); inputs must be "
                                      "reduced to [0, q)",
                                      fn, arg, (b * ctx->l + r) * ctx->n + i,
                                      (unsigned long long)row[i], r, (unsigned long long)q, b,
                                      i);
        }
    }
    return MPCE_OK;
}

enum ntt_op { NTT_FORWARD, NTT_INVERSE, NTT_MUL };

/* One split call, by polynomial: a slice is the op (or the input check) on
 * a sub-batch. */
struct ntt_split {
    enum ntt_op op;
    const mpce_ntt *ctx;
    const char *fn;
    const char *arg;          /* the input being checked */
    const uint64_t *check;
    const struct mpce_ntt_vtable *vt;
    void *state;
    const uint64_t *a, *b;
    uint64_t *out;
    size_t batch, count;
};

static int check_slice(void *arg, size_t i)
{
    const struct ntt_split *s = arg;
    uint64_t b0, b1;
    mpce_slice_range(s->batch, s->count, i, &b0, &b1);
    return (int)check_canonical(s->fn, s->arg, s->ctx, s->check, (size_t)b0, (size_t)b1);
}

static int op_slice(void *arg, size_t i)
{
    const struct ntt_split *s = arg;
    uint64_t b0, b1;
    mpce_slice_range(s->batch, s->count, i, &b0, &b1);
    size_t off = (size_t)b0 * s->ctx->l * s->ctx->n, cnt = (size_t)(b1 - b0);
    switch (s->op) {
    case NTT_FORWARD:
        return s->vt->forward(s->state, s->a + off, s->out + off, cnt);
    case NTT_INVERSE:
        return s->vt->inverse(s->state, s->a + off, s->out + off, cnt);
    default:
        return s->vt->mul(s->state, s->a + off, s->b + off, s->out + off, cnt);
    }
}

/* Input v checked on the pool; the lowest slice's error is the first bad
 * coefficient, as a single pass would report. */
static mpce_status check_input(struct ntt_split *s, const char *arg, const uint64_t *v)
{
    if (!v)
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", s->fn, arg);
    s->arg = arg;
    s->check = v;
    return (mpce_status)mpce_engine_run(s->ctx->engine, s->count, check_slice, s);
}

/* Polynomials of `words` coefficients that hold at least min_words. */
static uint64_t polys(uint64_t min_words, size_t words)
{
    return (min_words + words - 1) / words;
}

static mpce_status ntt_run(enum ntt_op op, mpce_ntt *ctx, const char *impl, const uint64_t *a,
                           const uint64_t *b, uint64_t *out, size_t batch)
{
    static const char *const fns[] = {"mpce_ntt_forward", "mpce_ntt_inverse", "mpce_ntt_mul"};
    static const char *const ops[] = {"ntt.forward", "ntt.inverse", "ntt.mul"};
    const char *fn = fns[op];
    mpce_error_clear();
    mpce_status st = check_batch(fn, ctx, batch);
    if (st == MPCE_OK && batch && !out)
        st = mpce_error(MPCE_ERR_ARG, "%s: out is NULL", fn);
    struct ntt_split s = {.op = op, .ctx = ctx, .fn = fn, .a = a, .b = b, .out = out,
                          .batch = batch};
    const size_t words = ctx ? ctx->l * ctx->n : 1;
    if (st == MPCE_OK && batch) {
        s.count = mpce_engine_slices(ctx->engine, NULL, batch, polys(NTT_CHECK_MIN_WORDS, words),
                                     0);
        st = check_input(&s, op == NTT_MUL ? "a" : "in", a);
        if (st == MPCE_OK && op == NTT_MUL)
            st = check_input(&s, "b", b);
    }
    const struct mpce_slot *slot;
    void *state;
    if (st == MPCE_OK)
        st = mpce_dispatch(ctx->engine, &ctx->cache, MPCE_PRIM_NTT, impl, ntt_make, ctx, &slot,
                           &state);
    if (st != MPCE_OK || batch == 0)
        return st;
    s.vt = slot->impl->vtable;
    s.state = state;
    s.count = mpce_engine_slices(ctx->engine, slot, batch, polys(NTT_SLICE_MIN_WORDS, words),
                                 polys(NTT_SLICE_MIN_WORDS_FAST, words));
    return mpce_op_status(slot, ops[op], mpce_engine_run(ctx->engine, s.count, op_slice, &s));
}

mpce_status mpce_ntt_forward(mpce_ntt *ctx, const char *impl, const uint64_t *in, uint64_t *out,
                             size_t batch)
{
    return ntt_run(NTT_FORWARD, ctx, impl, in, NULL, out, batch);
}

mpce_status mpce_ntt_inverse(mpce_ntt *ctx, const char *impl, const uint64_t *in, uint64_t *out,
                             size_t batch)
{
    return ntt_run(NTT_INVERSE, ctx, impl, in, NULL, out, batch);
}

mpce_status mpce_ntt_mul(mpce_ntt *ctx, const char *impl, const uint64_t *a, const uint64_t *b,
                         uint64_t *out, size_t batch)
{
    return ntt_run(NTT_MUL, ctx, impl, a, b, out, batch);
}
