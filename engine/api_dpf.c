/* Public DPF operations: argument and key checks, seed drawing, dispatch. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "engine/dpf_key.h"
#include "engine/internal.h"
#include "engine/pool.h"

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
 * a backend expands at once (mpce_dpfw_evalall_chunk, 2^12 leaves), so no
 * slice recomputes nodes its neighbour computed. */
#define DPF_EVALALL_CHUNK_LOG 14u

/* The control bit of a block: bit 0 of byte 12 (SPEC.md section 4). */
#define TBIT_BYTE 12

struct mpce_dpf {
    mpce_engine *engine;
    unsigned bits;
    mpce_dpf_group group;
    uint8_t kl[16], kr[16];
    struct mpce_state_cache cache;
};

static int dpf_make(const struct mpce_impl *impl, const void *args, void **state)
{
    const struct mpce_dpf *ctx = args;
    const struct mpce_dpf_vtable *vt = impl->vtable;
    return vt->ctx_new(ctx->bits, (unsigned)ctx->group, ctx->kl, ctx->kr, state);
}

static void dpf_destroy(const struct mpce_impl *impl, void *state)
{
    const struct mpce_dpf_vtable *vt = impl->vtable;
    vt->ctx_free(state);
}

mpce_status mpce_dpf_new(mpce_engine *engine, unsigned bits, mpce_dpf_group group,
                         const uint8_t *kl, const uint8_t *kr, mpce_dpf **out)
{
    static const char fn[] = "mpce_dpf_new";
    mpce_error_clear();
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
    mpce_status gst = mpce_engine_acquire(engine, &engine);
    if (gst != MPCE_OK)
        return gst;
    struct mpce_dpf *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return mpce_error(MPCE_ERR_NOMEM, "%s: out of memory", fn);
    ctx->engine = engine;
    ctx->bits = bits;
    ctx->group = group;
    if (kl) {
        memcpy(ctx->kl, kl, 16);
        memcpy(ctx->kr, kr, 16);
    } else if (mpce_dpf_default_keys(ctx->kl, ctx->kr) != MPCE_OK) {
        free(ctx);
        return MPCE_ERR_BACKEND;
    }
    mpce_state_cache_init(&ctx->cache);
    *out = ctx;
    return MPCE_OK;
}

mpce_status mpce_dpf_new_for_key(mpce_engine *engine, const mpce_dpf_key *key, mpce_dpf **out)
{
    mpce_error_clear();
    if (!key)
        return mpce_error(MPCE_ERR_ARG, "mpce_dpf_new_for_key: key is NULL");
    return mpce_dpf_new(engine, key->k.bits, (mpce_dpf_group)key->k.group, key->k.kl, key->k.kr,
                        out);
}

void mpce_dpf_free(mpce_dpf *ctx)
{
    if (!ctx)
        return;
    mpce_state_cache_destroy(&ctx->cache, dpf_destroy);
    free(ctx);
}

static mpce_status pick(mpce_dpf *ctx, const char *impl, const struct mpce_slot **slot,
                        void **state)
{
    return mpce_dispatch(ctx->engine, &ctx->cache, MPCE_PRIM_DPF, impl, dpf_make, ctx, slot,
                         state);
}

/* One split call: eval by point range, eval_keys by key range, evalall by
 * ranges of whole subtrees. */
struct dpf_split {
    const struct mpce_dpf_vtable *vt;
    void *state;
    const struct mpce_dpf_key_v1 *key;
    const struct mpce_dpf_key_v1 *const *keys;
    const uint64_t *points;
    uint8_t *out;
    size_t osz;
    uint64_t units;
    uint64_t unit_len;  /* evalall: leaves per unit */
    uint64_t domain;    /* evalall: 2^bits */
    size_t count;
};

static int eval_slice(void *arg, size_t i)
{
    const struct dpf_split *s = arg;
    uint64_t b, e;
    mpce_slice_range(s->units, s->count, i, &b, &e);
    return s->vt->eval(s->state, s->key, s->points + b, (size_t)(e - b), s->out + b * s->osz);
}

static int eval_keys_slice(void *arg, size_t i)
{
    const struct dpf_split *s = arg;
    uint64_t b, e;
    mpce_slice_range(s->units, s->count, i, &b, &e);
    return s->vt->eval_keys(s->state, s->keys + b, s->points + b, (size_t)(e - b),
                            s->out + b * s->osz);
}

static int evalall_slice(void *arg, size_t i)
{
    const struct dpf_split *s = arg;
    uint64_t b, e;
    mpce_slice_range(s->units, s->count, i, &b, &e);
    uint64_t x0 = b * s->unit_len, x1 = e * s->unit_len;
    if (x1 > s->domain)
        x1 = s->domain;
    return s->vt->evalall_range(s->state, s->key, x0, x1, s->out + x0 * s->osz);
}

/* evalall_range arrived after evalall; a module built before it lacks it. */
static int has_evalall_range(const struct mpce_dpf_vtable *vt)
{
    return vt->struct_size >= offsetof(struct mpce_dpf_vtable, evalall_range) +
                                  sizeof(vt->evalall_range) &&
           vt->evalall_range != NULL;
}

static mpce_status check_point(const char *fn, const char *arg, size_t i, uint64_t x,
                               unsigned bits)
{
    if (bits < 64 && (x >> bits) != 0)
        return mpce_error(MPCE_ERR_ARG,
                          "%s: %s[%zu] = %llu is outside the domain [0, 2^%u) of this context",
                          fn, arg, i, (unsigned long long)x, bits);
    return MPCE_OK;
}

mpce_status mpce_dpf_gen(mpce_dpf *ctx, const char *impl, uint64_t alpha, const uint8_t beta[16],
                         const uint8_t *seed0, const uint8_t *seed1, mpce_dpf_key **key0,
                         mpce_dpf_key **key1)
{
    static const char fn[] = "mpce_dpf_gen";
    mpce_error_clear();
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
    const struct mpce_slot *slot;
    void *state;
    mpce_status st = pick(ctx, impl, &slot, &state);
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
    const struct mpce_dpf_vtable *vt = slot->impl->vtable;
    st = mpce_op_status(slot, "dpf.gen", vt->gen(state, alpha, b, s0, s1, k0, k1));
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
    mpce_error_clear();
    if (ctx && ctx->group != MPCE_DPF_U64)
        return mpce_error(MPCE_ERR_ARG,
                          "mpce_dpf_gen_u64: the context's group is bytes; use mpce_dpf_gen");
    uint8_t b[16] = {0};
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(beta >> (8 * i));
    return mpce_dpf_gen(ctx, impl, alpha, b, seed0, seed1, key0, key1);
}

/* A key is evaluated only by a context of the same domain, group and PRG keys. */
static mpce_status check_key(const char *fn, const char *arg, size_t i, const mpce_dpf *ctx,
                             const mpce_dpf_key *key)
{
    char name[48];
    if (i == (size_t)-1)
        snprintf(name, sizeof(name), "%s", arg);
    else
        snprintf(name, sizeof(name), "%s[%zu]", arg, i);
    if (!key)
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, name);
    if (key->k.bits != ctx->bits)
        return mpce_error(MPCE_ERR_ARG,
                          "%s: %s has %u domain bits, the context %u; make the context with "
                          "mpce_dpf_new_for_key",
                          fn, name, key->k.bits, ctx->bits);
    if (key->k.group != (unsigned)ctx->group)
        return mpce_error(MPCE_ERR_ARG, "%s: %s is for the %s group, the context for %s", fn,
                          name, key->k.group ? "u64" : "bytes",
                          ctx->group == MPCE_DPF_U64 ? "u64" : "bytes");
    if (memcmp(key->k.kl, ctx->kl, 16) != 0 || memcmp(key->k.kr, ctx->kr, 16) != 0)
        return mpce_error(MPCE_ERR_ARG,
                          "%s: %s was made with other PRG keys (kL, kR) than the context's", fn,
                          name);
    return MPCE_OK;
}

mpce_status mpce_dpf_eval(mpce_dpf *ctx, const char *impl, const mpce_dpf_key *key,
                          const uint64_t *points, size_t npoints, uint8_t *out)
{
    static const char fn[] = "mpce_dpf_eval";
    mpce_error_clear();
    if (!ctx)
        return mpce_error(MPCE_ERR_ARG, "%s: ctx is NULL", fn);
    mpce_status st = check_key(fn, "key", (size_t)-1, ctx, key);
    if (st != MPCE_OK)
        return st;
    if (npoints > SIZE_MAX / 16)
        return mpce_error(MPCE_ERR_ARG, "%s: npoints = %zu overflows the address space", fn,
                          npoints);
    if (npoints && (!points || !out))
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, points ? "out" : "points");
    for (size_t i = 0; i < npoints; i++)
        if ((st = check_point(fn, "points", i, points[i], ctx->bits)) != MPCE_OK)
            return st;
    const struct mpce_slot *slot;
    void *state;
    if ((st = pick(ctx, impl, &slot, &state)) != MPCE_OK || npoints == 0)
        return st;
    struct dpf_split s = {.vt = slot->impl->vtable, .state = state, .key = &key->k,
                          .points = points, .out = out,
                          .osz = mpce_dpf_output_size(ctx->group), .units = npoints};
    s.count = mpce_engine_slices(ctx->engine, slot, npoints, DPF_SLICE_MIN_POINTS,
                                 DPF_SLICE_MIN_POINTS_FAST);
    return mpce_op_status(slot, "dpf.eval", mpce_engine_run(ctx->engine, s.count, eval_slice, &s));
}

mpce_status mpce_dpf_eval_keys(mpce_dpf *ctx, const char *impl, const mpce_dpf_key *const *keys,
                               const uint64_t *points, size_t nkeys, uint8_t *out)
{
    static const char fn[] = "mpce_dpf_eval_keys";
    mpce_error_clear();
    if (!ctx)
        return mpce_error(MPCE_ERR_ARG, "%s: ctx is NULL", fn);
    if (nkeys > SIZE_MAX / 16 / sizeof(void *))
        return mpce_error(MPCE_ERR_ARG, "%s: nkeys = %zu overflows the address space", fn, nkeys);
    if (nkeys && (!keys || !points || !out))
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn,
                          !keys ? "keys" : !points ? "points" : "out");
    mpce_status st;
    for (size_t i = 0; i < nkeys; i++) {
        if ((st = check_key(fn, "keys", i, ctx, keys[i])) != MPCE_OK)
            return st;
        if ((st = check_point(fn, "points", i, points[i], ctx->bits)) != MPCE_OK)
            return st;
    }
    const struct mpce_slot *slot;
    void *state;
    if ((st = pick(ctx, impl, &slot, &state)) != MPCE_OK || nkeys == 0)
        return st;
    /* The ABI takes the plain v1 structs; mpce_dpf_key wraps exactly one. */
    const struct mpce_dpf_key_v1 **raw = malloc(nkeys * sizeof(*raw));
    if (!raw)
        return mpce_error(MPCE_ERR_NOMEM, "%s: out of memory", fn);
    for (size_t i = 0; i < nkeys; i++)
        raw[i] = &keys[i]->k;
    struct dpf_split s = {.vt = slot->impl->vtable, .state = state, .keys = raw,
                          .points = points, .out = out,
                          .osz = mpce_dpf_output_size(ctx->group), .units = nkeys};
    s.count = mpce_engine_slices(ctx->engine, slot, nkeys, DPF_SLICE_MIN_POINTS,
                                 DPF_SLICE_MIN_POINTS_FAST);
    st = mpce_op_status(slot, "dpf.eval_keys",
                        mpce_engine_run(ctx->engine, s.count, eval_keys_slice, &s));
    free(raw);
    return st;
}

mpce_status mpce_dpf_evalall(mpce_dpf *ctx, const char *impl, const mpce_dpf_key *key,
                             uint8_t *out, size_t out_len)
{
    static const char fn[] = "mpce_dpf_evalall";
    mpce_error_clear();
    if (!ctx)
        return mpce_error(MPCE_ERR_ARG, "%s: ctx is NULL", fn);
    mpce_status st = check_key(fn, "key", (size_t)-1, ctx, key);
    if (st != MPCE_OK)
        return st;
    if (ctx->bits > MPCE_DPF_MAX_EVALALL_BITS)
        return mpce_error(MPCE_ERR_ARG,
                          "%s: full-domain evaluation needs bits <= %u, the key has %u; use "
                          "mpce_dpf_eval on the points you need",
                          fn, MPCE_DPF_MAX_EVALALL_BITS, ctx->bits);
    const size_t osz = mpce_dpf_output_size(ctx->group);
    const uint64_t need = ((uint64_t)1 << ctx->bits) * osz;
    if (need > SIZE_MAX)
        return mpce_error(MPCE_ERR_ARG, "%s: 2^%u outputs do not fit in this address space", fn,
                          ctx->bits);
    if (!out)
        return mpce_error(MPCE_ERR_ARG, "%s: out is NULL", fn);
    if (out_len < need)
        return mpce_error(MPCE_ERR_ARG,
                          "%s: out_len = %zu bytes, but 2^%u points of %zu bytes need %llu", fn,
                          out_len, ctx->bits, osz, (unsigned long long)need);
    const struct mpce_slot *slot;
    void *state;
    if ((st = pick(ctx, impl, &slot, &state)) != MPCE_OK)
        return st;
    const struct mpce_dpf_vtable *vt = slot->impl->vtable;
    struct dpf_split s = {.vt = vt, .state = state, .key = &key->k, .out = out, .osz = osz,
                          .domain = (uint64_t)1 << ctx->bits};
    s.unit_len =
        ctx->bits < DPF_EVALALL_CHUNK_LOG ? s.domain : (uint64_t)1 << DPF_EVALALL_CHUNK_LOG;
    s.units = s.domain / s.unit_len;
    s.count = has_evalall_range(vt)
                  ? mpce_engine_slices(ctx->engine, slot, s.units, DPF_EVALALL_MIN_CHUNKS,
                                       DPF_EVALALL_MIN_CHUNKS_FAST)
                  : 1;
    if (s.count < 2)
        return mpce_op_status(slot, "dpf.evalall", vt->evalall(state, &key->k, out));
    return mpce_op_status(slot, "dpf.evalall",
                          mpce_engine_run(ctx->engine, s.count, evalall_slice, &s));
}
