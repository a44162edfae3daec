/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The part every context shares (the front ends embed it first): its engine
 * reference, its parameters, one plugin state per implementation it has used
 * and its routes, so that a call on a context that has its state classifies
 * its size, loads one route and calls through it (the job's slice function,
 * then the plugin's op), with no name lookup and no lock.
 */
#ifndef MPCE_RUNTIME_CONTEXT_H
#define MPCE_RUNTIME_CONTEXT_H

#include <string.h>

#include "engine/internal.h"
#include "engine/selector/selector.h"

/* A resolved choice: the implementation and this context's state for it.
 * In a context's caches slot is stored last, with release, so a reader that
 * sees it sees state; a published route is never changed again. Callers get
 * copies. */
struct mpce_route {
    const struct mpce_slot *slot;
    void *state;
    /* Knob values for the slot (plugin.h, mpce_call.knobs): the selector's
     * for the row, or the ones a caller named; n_knobs 0: the defaults. */
    unsigned n_knobs;
    uint32_t knobs[MPCE_KNOB_MAX];
};

/* The host call of work on route r: mpce_host_call with r's knob values. */
static inline void mpce_route_host_call(const struct mpce_route *r, struct mpce_call *call)
{
    call->struct_size = sizeof(*call);
    call->memory = MPCE_MEM_HOST;
    call->queue = NULL;
    call->done = NULL;
    call->knobs = r->n_knobs ? r->knobs : NULL;
    call->n_knobs = r->n_knobs;
}

/* Routes per op and size class in a route set: the class's, and the one
 * for calls at or above the class's measured crossover (dispatch.c). */
#define MPCE_ROUTE_HALVES 2u

/* Where in a route set (resolved against table t) the route of a call of
 * `elements` work elements of op (local: its index among its primitive's
 * ops) in size class sc lies, for a context of `variant`. */
static inline size_t mpce_route_index(const struct mpce_table *t, enum mpce_op_id op,
                                      unsigned local, unsigned variant, unsigned sc,
                                      uint64_t elements)
{
    const uint64_t x = t ? t->e[op][variant][sc].crossover : 0;
    return ((size_t)local * MPCE_SIZE_CLASSES + sc) * MPCE_ROUTE_HALVES +
           (x != 0 && elements >= x);
}

/* The routes resolved against one dispatch table: [ops of prim][size class]
 * [below or at/above the crossover].
 * A new table gets a new set (the old ones stay until the context is freed,
 * since a caller may be reading them). */
struct mpce_route_set {
    const struct mpce_table *table;
    struct mpce_route_set *older;
    struct mpce_route r[];
};

/* Named calls ("prg-aesni", not "auto") resolve once per context, op and size
 * class too. */
#define MPCE_CTX_NAMED 8u
struct mpce_named_route {
    char name[96];                  /* as the caller wrote it, knobs included */
    enum mpce_op_id op;
    unsigned size_class;
    struct mpce_route route;
};

/* Calls on device buffers: the last device each op ran on. */
struct mpce_dev_route {
    const struct mpce_devrec *dev;
    struct mpce_route route;
};

struct mpce_ctx;
/* A front end's ctx_new call for slot (the primitive's parameters). */
typedef int (*mpce_ctx_make_fn)(const struct mpce_ctx *ctx, const struct mpce_slot *slot,
                                void **state);

struct mpce_ctx {
    mpce_engine *engine;            /* a reference */
    mpce_primitive prim;
    enum mpce_op_id op0;            /* the primitive's first op id */
    unsigned variant;               /* of params: which measured rows apply */
    struct mpce_params params;      /* for serves() */
    mpce_ctx_make_fn make;
    pthread_mutex_t lock;           /* creating states and routes only */
    void **states;                  /* [engine->n_slots]: NULL, a state, or UNSERVED */
    char **unserved_why;            /* [engine->n_slots]: why a slot refused */
    struct mpce_route_set *routes;  /* published with release */
    struct mpce_named_route named[MPCE_CTX_NAMED];
    unsigned n_named;               /* published with release */
    struct mpce_dev_route *dev_routes; /* [ops of prim] */
    /* Queued device work on this context's states: freeing waits for it
     * (plugin.h: ctx_free only after the state's ops completed). Its own
     * lock, since completions arrive on plugin threads. */
    pthread_mutex_t inflight_lock;
    pthread_cond_t idle;
    unsigned inflight;
};

/* Fill the shared part (takes a reference on e) and free it (releases the
 * states, then the reference). */
mpce_status mpce_ctx_init(struct mpce_ctx *ctx, mpce_engine *e, mpce_primitive prim,
                          const struct mpce_params *params, mpce_ctx_make_fn make);
void mpce_ctx_destroy(struct mpce_ctx *ctx);

/* Queued work on ctx's states: counted up when submitted, down on completion. */
void mpce_ctx_hold(struct mpce_ctx *ctx);
void mpce_ctx_release(struct mpce_ctx *ctx);

/* The route for a call, resolving it on first use (self-test, serves,
 * ctx_new; locked). dev NULL: host memory. `fn` names the public function for
 * messages. */
mpce_status mpce_ctx_route_slow(struct mpce_ctx *ctx, const char *fn, enum mpce_op_id op,
                                uint64_t units, uint64_t elements, const char *impl,
                                const struct mpce_devrec *dev, struct mpce_route *out);

/* For mpce_<prim>_resolve: the id of `op` ("prg.ecb") when it is one of the
 * operations of ctx's primitive, else MPCE_ERR_ARG listing them. */
mpce_status mpce_ctx_op_named(const struct mpce_ctx *ctx, const char *fn, const char *op,
                              enum mpce_op_id *id);

static inline int mpce_impl_is_auto(const char *impl)
{
    return impl == NULL || (impl[0] == 'a' && strcmp(impl, "auto") == 0);
}

/*
 * The hot path: a call of op over `units` (the op's count: blocks,
 * polynomials, outputs, points, keys) that amount to `elements` work elements
 * (its size class), on host memory.
 */
static inline mpce_status mpce_ctx_route(struct mpce_ctx *ctx, const char *fn,
                                         enum mpce_op_id op, uint64_t units,
                                         uint64_t elements, const char *impl,
                                         struct mpce_route *out)
{
    mpce_engine *e = ctx->engine;
    if (mpce_engine_is_closed(e))
        return mpce_engine_closed_error(fn);
    if (__builtin_expect(e->census != NULL, 0))
        mpce_census_count_slow(e, op, ctx->variant, mpce_size_class(elements));
    if (mpce_impl_is_auto(impl)) {
        const struct mpce_route_set *set = __atomic_load_n(&ctx->routes, __ATOMIC_ACQUIRE);
        if (set->table == __atomic_load_n(&e->table, __ATOMIC_ACQUIRE)) {
            const struct mpce_route *r =
                &set->r[mpce_route_index(set->table, op, (unsigned)op - (unsigned)ctx->op0,
                                         ctx->variant, mpce_size_class(elements), elements)];
            const struct mpce_slot *slot = __atomic_load_n(&r->slot, __ATOMIC_ACQUIRE);
            if (slot != NULL) {
                /* The whole route: its knob values too (published with it). */
                *out = *r;
                out->slot = slot;
                return MPCE_OK;
            }
        }
    } else {
        unsigned n = __atomic_load_n(&ctx->n_named, __ATOMIC_ACQUIRE);
        unsigned sc = mpce_size_class(elements);
        for (unsigned i = 0; i < n; i++) {
            const struct mpce_named_route *nr = &ctx->named[i];
            if (nr->op == op && nr->size_class == sc && strcmp(nr->name, impl) == 0) {
                *out = nr->route;
                return MPCE_OK;
            }
        }
    }
    return mpce_ctx_route_slow(ctx, fn, op, units, elements, impl, NULL, out);
}

#endif
