/* SPDX-License-Identifier: Apache-2.0 */
/* Public NTT operations: parameter and input checks, then one routed call. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/runtime/pool.h"
#include "engine/runtime/queue.h"
#include "engine/spec/ntt_params.h"

/* Coefficients per slice below which a worker thread costs more than it
 * saves (mpce_engine_slices): about 150 us of transforms for the portable
 * kernel (~10 ns a coefficient) and for AVX-512/IFMA (~2 ns), and of the
 * input check, a memory-speed pass. */
#define NTT_SLICE_MIN_WORDS 16384u
#define NTT_SLICE_MIN_WORDS_FAST 131072u
#define NTT_CHECK_MIN_WORDS 524288u

struct mpce_ntt {
    struct mpce_ctx base;
    size_t n, l;
    uint64_t *q, *g, *psi;
    unsigned refusal; /* MPCE_NTT_REFUSAL_*, read and written atomically */
};

static int ntt_make(const struct mpce_ctx *base, const struct mpce_slot *slot, void **state)
{
    const struct mpce_ntt *ctx = (const struct mpce_ntt *)base;
    return mpce_op_ntt_ctx_new(&slot->ops.ntt, slot->module->state, ctx->n, ctx->l, ctx->q,
                               ctx->psi, state);
}

mpce_status mpce_ntt_new(mpce_engine *engine, size_t n, const uint64_t *moduli, size_t l,
                         mpce_ntt **out)
{
    if (!out)
        return mpce_error(MPCE_ERR_ARG, "mpce_ntt_new: out is NULL");
    if (!moduli)
        return mpce_error(MPCE_ERR_ARG, "mpce_ntt_new: moduli is NULL");
    if (l < 1 || l > MPCE_NTT_MAX_MODULI)
        return mpce_error(MPCE_ERR_ARG, "mpce_ntt_new: l = %zu moduli; expected 1 to %u", l,
                          MPCE_NTT_MAX_MODULI);
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
    mpce_engine *e = NULL;
    if (st == MPCE_OK)
        st = mpce_engine_acquire(engine, &e);
    if (st == MPCE_OK) {
        memcpy(ctx->q, moduli, l * sizeof(uint64_t));
        ctx->n = n;
        ctx->l = l;
        struct mpce_params params = {.ntt_n = n, .ntt_l = l, .ntt_q = ctx->q};
        st = mpce_ctx_init(&ctx->base, e, MPCE_PRIM_NTT, &params, ntt_make);
        if (st != MPCE_OK)
            mpce_engine_unref(e);
    }
    if (st != MPCE_OK) {
        free(arrays);
        free(ctx);
        return st;
    }
    *out = ctx;
    return MPCE_OK;
}

void mpce_ntt_free(mpce_ntt *ctx)
{
    if (!ctx)
        return;
    mpce_ctx_destroy(&ctx->base);
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
 * one pass before any output is written, except for kernels that check as
 * they read (MPCE_IMPL_CHECKS_NTT_INPUT). Polynomials [b0, b1) of v. */
/* Whether any of row[0 .. n) is >= q, for q <= 2^62 (every modulus the
 * engine accepts: below 2^61). x >= q exactly when q - 1 - x borrows into
 * bit 63 or x has it set, so the portable test is subtractions, ORs and
 * one shift: on vectors of four words (GCC and clang vector extensions:
 * AVX2, or pairs of SSE2 or NEON operations, which lack a 64-bit unsigned
 * compare), eight words a step. It was a scalar compare per word, 15 % of
 * a 4096-point NTT call. */
/* Always inlined, so that the AVX2 copy below is compiled for AVX2. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int row_has_noncanonical_portable(const uint64_t *row, size_t n, uint64_t q)
{
    const uint64_t qm1 = q - 1;
    size_t i = 0;
    uint64_t bad = 0;
#if defined(__GNUC__)
    typedef uint64_t v4 __attribute__((vector_size(32)));
    v4 acc = {0, 0, 0, 0};
    const v4 vq = {qm1, qm1, qm1, qm1};
    for (; i + 8 <= n; i += 8) {
        v4 a, b;
        memcpy(&a, row + i, 32);
        memcpy(&b, row + i + 4, 32);
        acc |= ((vq - a) | a) | ((vq - b) | b);
    }
    bad = (acc[0] | acc[1] | acc[2] | acc[3]) >> 63;
#endif
    for (; i < n; i++)
        bad |= ((qm1 - row[i]) | row[i]) >> 63;
    return bad != 0;
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#include <immintrin.h>
#define NTT_CHECK_AVX 1
/* AVX2: the portable steps on ymm registers. A product reads two inputs
 * and does little else, so the check's instructions are a large share. */
__attribute__((target("avx2"))) static int row_has_noncanonical_avx2(const uint64_t *row,
                                                                      size_t n, uint64_t q)
{
    return row_has_noncanonical_portable(row, n, q);
}

/* AVX-512: the largest word is all that matters, one unsigned max per
 * eight words, a third of the portable steps' work. */
__attribute__((target("avx512f"))) static int row_has_noncanonical_avx512(const uint64_t *row,
                                                                          size_t n, uint64_t q)
{
    __m512i m0 = _mm512_setzero_si512(), m1 = m0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        m0 = _mm512_max_epu64(m0, _mm512_loadu_si512((const void *)(row + i)));
        m1 = _mm512_max_epu64(m1, _mm512_loadu_si512((const void *)(row + i + 8)));
    }
    uint64_t top = _mm512_reduce_max_epu64(_mm512_max_epu64(m0, m1));
    for (; i < n; i++)
        top = row[i] > top ? row[i] : top;
    return top >= q;
}

typedef int (*noncanonical_fn)(const uint64_t *, size_t, uint64_t);

static noncanonical_fn pick_noncanonical(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return row_has_noncanonical_avx512;
    if (__builtin_cpu_supports("avx2"))
        return row_has_noncanonical_avx2;
    return row_has_noncanonical_portable;
}
#endif

unsigned mpce_ntt_check_variants(const uint64_t *row, size_t n, uint64_t q, int *verdicts)
{
    unsigned k = 0;
    verdicts[k++] = row_has_noncanonical_portable(row, n, q);
#if defined(NTT_CHECK_AVX)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        verdicts[k++] = row_has_noncanonical_avx2(row, n, q);
    if (__builtin_cpu_supports("avx512f"))
        verdicts[k++] = row_has_noncanonical_avx512(row, n, q);
#endif
    return k;
}

static int row_has_noncanonical(const uint64_t *row, size_t n, uint64_t q)
{
#if defined(NTT_CHECK_AVX)
    /* Chosen on first use; a race only stores the same pointer twice. */
    static noncanonical_fn fn;
    noncanonical_fn f = __atomic_load_n(&fn, __ATOMIC_RELAXED);
    if (f == NULL) {
        f = pick_noncanonical();
        __atomic_store_n(&fn, f, __ATOMIC_RELAXED);
    }
    return f(row, n, q);
#else
    return row_has_noncanonical_portable(row, n, q);
#endif
}

static mpce_status check_canonical(const char *fn, const char *arg, const mpce_ntt *ctx,
                                   const uint64_t *v, size_t b0, size_t b1)
{
    for (size_t b = b0; b < b1; b++) {
        for (size_t r = 0; r < ctx->l; r++) {
            const uint64_t *row = v + (b * ctx->l + r) * ctx->n;
            const uint64_t q = ctx->q[r];
            if (!row_has_noncanonical(row, ctx->n, q))
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
static const enum mpce_op_id ntt_op_ids[] = {MPCE_OP_ntt_forward, MPCE_OP_ntt_inverse,
                                             MPCE_OP_ntt_mul};
static const char *const ntt_fns[] = {"mpce_ntt_forward", "mpce_ntt_inverse", "mpce_ntt_mul"};
static const char *const ntt_buf_fns[] = {"mpce_ntt_forward_buf", "mpce_ntt_inverse_buf",
                                          "mpce_ntt_mul_buf"};

/* One call's arguments. Slices split by polynomial: a slice is the op (or
 * the input check) on a sub-batch. */
struct ntt_args {
    enum ntt_op op;
    const mpce_ntt *ctx;
    const char *fn;
    const char *arg;          /* the input being checked */
    const uint64_t *check;
    const uint64_t *a, *b;
    uint64_t *out;
    size_t batch, count;      /* count: slices of the input check */
    int *noncanonical;        /* set when a checking kernel met a bad input */
};

static int check_slice(void *arg, size_t i)
{
    const struct ntt_args *s = arg;
    uint64_t b0, b1;
    mpce_slice_range(s->batch, s->count, i, &b0, &b1);
    return (int)check_canonical(s->fn, s->arg, s->ctx, s->check, (size_t)b0, (size_t)b1);
}

static int op_slice(const struct mpce_job *job, const struct mpce_call *call, size_t i,
                    size_t count)
{
    const struct ntt_args *s = job->args;
    const struct mpce_ntt_ops *ops = &job->route.slot->ops.ntt;
    void *state = job->route.state;
    uint64_t b0, b1;
    mpce_slice_range(job->units, count, i, &b0, &b1);
    size_t off = (size_t)b0 * s->ctx->l * s->ctx->n, cnt = (size_t)(b1 - b0);
    int rc;
    switch (s->op) {
    case NTT_FORWARD:
        rc = mpce_op_ntt_forward(ops, state, call, s->a + off, s->out + off, cnt);
        break;
    case NTT_INVERSE:
        rc = mpce_op_ntt_inverse(ops, state, call, s->a + off, s->out + off, cnt);
        break;
    default:
        rc = mpce_op_ntt_mul(ops, state, call, s->a + off, s->b + off, s->out + off, cnt);
        break;
    }
    /* Not an op failure: ntt_run finds and names the coefficient. */
    if (rc == MPCE_OP_NONCANONICAL && s->noncanonical != NULL) {
        __atomic_store_n(s->noncanonical, 1, __ATOMIC_RELAXED);
        return 0;
    }
    return rc;
}

/* Input v checked on the pool; the lowest slice's error is the first bad
 * coefficient, as a single pass would report. */
static mpce_status check_input(struct ntt_args *s, const char *arg, const uint64_t *v)
{
    s->arg = arg;
    s->check = v;
    return (mpce_status)mpce_engine_run(s->ctx->base.engine, s->count, check_slice, s);
}

/* Polynomials of `words` coefficients that hold at least min_words. */
static uint64_t polys(uint64_t min_words, size_t words)
{
    return (min_words + words - 1) / words;
}

static struct mpce_job ntt_job(const struct ntt_args *s)
{
    const size_t words = s->ctx->l * s->ctx->n;
    struct mpce_job job = {
        .slice = op_slice,
        .args = s,
        .op = ntt_op_ids[s->op],
        .units = s->batch,
        .min_portable = polys(NTT_SLICE_MIN_WORDS, words),
        .min_fast = polys(NTT_SLICE_MIN_WORDS_FAST, words),
        .elements_per_unit = words,
    };
    return job;
}

/* Reduced inputs, checked before anything is written (host memory). */
static mpce_status check_inputs(struct ntt_args *s)
{
    const size_t words = s->ctx->l * s->ctx->n;
    s->count = mpce_engine_slices(s->ctx->base.engine, NULL, s->batch,
                                  polys(NTT_CHECK_MIN_WORDS, words), 0);
    mpce_status st = check_input(s, s->op == NTT_MUL ? "a" : "in", s->a);
    if (st == MPCE_OK && s->op == NTT_MUL)
        st = check_input(s, "b", s->b);
    return st;
}

static mpce_status ntt_run(enum ntt_op op, mpce_ntt *ctx, const char *impl, const uint64_t *a,
                           const uint64_t *b, uint64_t *out, size_t batch)
{
    const char *fn = ntt_fns[op];
    mpce_status st = check_batch(fn, ctx, batch);
    if (st == MPCE_OK && batch && !out)
        st = mpce_error(MPCE_ERR_ARG, "%s: out is NULL", fn);
    if (st == MPCE_OK && batch && (!a || (op == NTT_MUL && !b)))
        st = mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn,
                        op != NTT_MUL ? "in" : !a ? "a" : "b");
    if (st != MPCE_OK)
        return st;
    /* In place is fine; a shifted overlap is not (slices run in parallel). */
    const size_t bytes = batch * ctx->l * ctx->n * sizeof(uint64_t);
    if (batch && a != out && mpce_ranges_overlap(a, bytes, out, bytes))
        return mpce_error(MPCE_ERR_ARG, "%s: %s and out overlap without being the same array: "
                          "pass the same pointer to work in place, or separate arrays", fn,
                          op == NTT_MUL ? "a" : "in");
    if (batch && op == NTT_MUL && b != out && mpce_ranges_overlap(b, bytes, out, bytes))
        return mpce_error(MPCE_ERR_ARG, "%s: b and out overlap without being the same array: "
                          "pass the same pointer to work in place, or separate arrays", fn);
    struct ntt_args s = {.op = op, .ctx = ctx, .fn = fn, .a = a, .b = b, .out = out,
                         .batch = batch};
    struct mpce_job job = ntt_job(&s);
    const uint64_t words = (uint64_t)batch * ctx->l * ctx->n;
    st = mpce_ctx_route(&ctx->base, fn, job.op, batch, words, impl, &job.route);
    if (st != MPCE_OK || batch == 0)
        return st;
    /* plugin.h: a checking kernel may be handed unchecked inputs only where
     * its writes cannot destroy them and the call ends before we return. */
    const uint32_t flags = job.route.slot->flags;
    const int out_of_place = a != out && (op != NTT_MUL || b != out);
    const int zero = __atomic_load_n(&ctx->refusal, __ATOMIC_RELAXED) == MPCE_NTT_REFUSAL_ZERO;
    /* In place, only where the caller gave up the input (ZERO) and the
     * implementation checks before it overwrites (plugin.h). */
    const int kernel_checks = (flags & MPCE_IMPL_CHECKS_NTT_INPUT) &&
                              !(flags & MPCE_IMPL_ASYNC) &&
                              (out_of_place || (zero && (flags & MPCE_IMPL_CHECKS_NTT_IN_PLACE)));
    int noncanonical = 0;
    if (!kernel_checks && (st = check_inputs(&s)) != MPCE_OK) {
        /* ntt.h: a refused call out of place, or in place under
         * MPCE_NTT_REFUSAL_ZERO, leaves out zeroed, whichever
         * implementation it was routed to. */
        if (out_of_place || zero)
            memset(out, 0, bytes);
        return st;
    }
    s.noncanonical = kernel_checks ? &noncanonical : NULL;
    st = mpce_job_run(ctx->base.engine, &job);
    if (st != MPCE_OK || !noncanonical)
        return st;
    /* out may hold partial transforms. */
    memset(out, 0, bytes);
    if (!out_of_place) {
        /* The input out overwrote is gone; mul's other operand is not. */
        if (op == NTT_MUL && a != b &&
            (st = check_canonical(fn, a != out ? "a" : "b", ctx, a != out ? a : b, 0, batch)) !=
                MPCE_OK)
            return st;
        const char *gone = op != NTT_MUL ? "in" : a != out ? "b" : b != out ? "a" : "a (= b)";
        return mpce_error(MPCE_ERR_ARG,
                          "%s: %s refused a coefficient of %s as not below its modulus "
                          "(inputs must be reduced to [0, q)). The call ran in place under "
                          "MPCE_NTT_REFUSAL_ZERO, so out is zeroed and the coefficient "
                          "cannot be named: run it on a copy of the input out of place, or "
                          "under MPCE_NTT_REFUSAL_KEEP, to find it; if every coefficient is "
                          "reduced, %s is at fault: report it to its authors",
                          fn, job.route.slot->impl->name, gone, job.route.slot->impl->name);
    }
    st = check_inputs(&s);
    if (st == MPCE_OK)
        st = mpce_error(MPCE_ERR_BACKEND,
                        "%s: %s refused the input as not reduced, but every coefficient is "
                        "below its modulus (the plugin breaks the ABI: report it to its "
                        "authors)",
                        fn, job.route.slot->impl->name);
    return st;
}

mpce_status mpce_ntt_set_refusal(mpce_ntt *ctx, unsigned mode)
{
    if (!ctx)
        return mpce_error(MPCE_ERR_ARG, "mpce_ntt_set_refusal: ctx is NULL");
    if (mode != MPCE_NTT_REFUSAL_KEEP && mode != MPCE_NTT_REFUSAL_ZERO)
        return mpce_error(MPCE_ERR_ARG, "mpce_ntt_set_refusal: mode = %u; expected "
                          "MPCE_NTT_REFUSAL_KEEP (0) or MPCE_NTT_REFUSAL_ZERO (1)", mode);
    __atomic_store_n(&ctx->refusal, mode, __ATOMIC_RELAXED);
    return MPCE_OK;
}

unsigned mpce_ntt_refusal(const mpce_ntt *ctx)
{
    return ctx ? __atomic_load_n(&ctx->refusal, __ATOMIC_RELAXED) : MPCE_NTT_REFUSAL_KEEP;
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

/* ---- buffers ------------------------------------------------------------------ */

static mpce_status ntt_run_buf(enum ntt_op op, mpce_ntt *ctx, mpce_queue *q, const char *impl,
                               const mpce_buffer *a, const mpce_buffer *b, mpce_buffer *out,
                               size_t batch)
{
    const char *fn = ntt_buf_fns[op];
    mpce_status st = check_batch(fn, ctx, batch);
    if (st != MPCE_OK)
        return st;
    const uint64_t bytes = (uint64_t)batch * ctx->l * ctx->n * sizeof(uint64_t);
    const mpce_buffer *bufs[3] = {out, a, b};
    const char *names[3] = {"out", op == NTT_MUL ? "a" : "in", "b"};
    const uint64_t need[3] = {bytes, bytes, bytes};
    const unsigned nb = op == NTT_MUL ? 3 : 2;
    if ((st = mpce_buf_check(fn, &ctx->base, q, bufs, names, need, nb)) != MPCE_OK)
        return st;
    struct ntt_args s = {.op = op, .ctx = ctx, .fn = fn, .a = mpce_buf_addr(a),
                         .b = op == NTT_MUL ? mpce_buf_addr(b) : NULL,
                         .out = mpce_buf_addr(out), .batch = batch};
    /* Host buffers are checked like host pointers; device memory cannot be
     * read here (buffer.h says so). */
    if (q->dev == NULL && batch && (st = check_inputs(&s)) != MPCE_OK)
        return st;
    struct mpce_job job = ntt_job(&s);
    const uint64_t words = (uint64_t)batch * ctx->l * ctx->n;
    st = mpce_ctx_route_queue(&ctx->base, q, fn, job.op, batch, words, impl, &job.route);
    if (st != MPCE_OK || batch == 0)
        return st;
    mpce_buffer *held[3] = {out, (mpce_buffer *)a, (mpce_buffer *)b};
    return mpce_job_submit(q, &ctx->base, &job, held, nb);
}

mpce_status mpce_ntt_forward_buf(mpce_ntt *ctx, mpce_queue *queue, const char *impl,
                                 const mpce_buffer *in, mpce_buffer *out, size_t batch)
{
    return ntt_run_buf(NTT_FORWARD, ctx, queue, impl, in, NULL, out, batch);
}

mpce_status mpce_ntt_inverse_buf(mpce_ntt *ctx, mpce_queue *queue, const char *impl,
                                 const mpce_buffer *in, mpce_buffer *out, size_t batch)
{
    return ntt_run_buf(NTT_INVERSE, ctx, queue, impl, in, NULL, out, batch);
}

mpce_status mpce_ntt_mul_buf(mpce_ntt *ctx, mpce_queue *queue, const char *impl,
                             const mpce_buffer *a, const mpce_buffer *b, mpce_buffer *out,
                             size_t batch)
{
    return ntt_run_buf(NTT_MUL, ctx, queue, impl, a, b, out, batch);
}

mpce_status mpce_ntt_resolve(mpce_ntt *ctx, const char *impl, const char *op, size_t batch,
                             const char **name)
{
    static const char fn[] = "mpce_ntt_resolve";
    if (!ctx || !name)
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, ctx ? "name" : "ctx");
    enum mpce_op_id id;
    mpce_status st = mpce_ctx_op_named(&ctx->base, fn, op, &id);
    if (st != MPCE_OK)
        return st;
    struct mpce_route r = {0};
    st = mpce_ctx_route(&ctx->base, fn, id, batch, (uint64_t)batch * ctx->l * ctx->n, impl, &r);
    if (st == MPCE_OK)
        *name = r.slot->impl->name;
    return st;
}
