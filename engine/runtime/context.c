/* SPDX-License-Identifier: Apache-2.0 */
/* Contexts' shared part: plugin states per implementation and resolved routes. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/runtime/context.h"
#include "engine/runtime/knobs.h"
#include "engine/selector/selector.h"

/* states[i] of an implementation whose ctx_new refused the context. */
static char unserved_marker;
#define UNSERVED ((void *)&unserved_marker)

mpce_status mpce_ctx_init(struct mpce_ctx *ctx, mpce_engine *e, mpce_primitive prim,
                          const struct mpce_params *params, mpce_ctx_make_fn make)
{
    unsigned nops = mpce_op_count_of(prim);
    ctx->engine = e;
    ctx->prim = prim;
    ctx->op0 = mpce_op_first(prim);
    ctx->params = *params;
    ctx->params.struct_size = sizeof(ctx->params);
    ctx->params.primitive = (uint32_t)prim;
    ctx->variant = mpce_shape_variant(&ctx->params);
    ctx->make = make;
    size_t slots = e->n_slots ? e->n_slots : 1;
    ctx->states = calloc(slots, sizeof(*ctx->states));
    ctx->unserved_why = calloc(slots, sizeof(*ctx->unserved_why));
    /* An empty set for no table: the first call resolves. */
    ctx->routes = calloc(1, sizeof(*ctx->routes) +
                                (size_t)nops * MPCE_SIZE_CLASSES * MPCE_ROUTE_HALVES *
                                    sizeof(struct mpce_route));
    ctx->dev_routes = calloc(nops, sizeof(*ctx->dev_routes));
    if (!ctx->states || !ctx->unserved_why || !ctx->routes || !ctx->dev_routes) {
        free(ctx->states);
        free(ctx->unserved_why);
        free(ctx->routes);
        free(ctx->dev_routes);
        return mpce_error(MPCE_ERR_NOMEM, "out of memory making a %s context",
                          mpce_primitive_name(prim));
    }
    pthread_mutex_init(&ctx->lock, NULL);
    pthread_mutex_init(&ctx->inflight_lock, NULL);
    pthread_cond_init(&ctx->idle, NULL);
    return MPCE_OK;
}

void mpce_ctx_hold(struct mpce_ctx *ctx)
{
    pthread_mutex_lock(&ctx->inflight_lock);
    ctx->inflight++;
    pthread_mutex_unlock(&ctx->inflight_lock);
}

void mpce_ctx_release(struct mpce_ctx *ctx)
{
    pthread_mutex_lock(&ctx->inflight_lock);
    if (--ctx->inflight == 0)
        pthread_cond_broadcast(&ctx->idle);
    pthread_mutex_unlock(&ctx->inflight_lock);
}

void mpce_ctx_destroy(struct mpce_ctx *ctx)
{
    mpce_engine *e = ctx->engine;
    pthread_mutex_lock(&ctx->inflight_lock);
    while (ctx->inflight > 0)
        pthread_cond_wait(&ctx->idle, &ctx->inflight_lock);
    pthread_mutex_unlock(&ctx->inflight_lock);
    for (size_t i = 0; i < e->n_slots; i++) {
        void *state = ctx->states[i];
        if (state != NULL && state != UNSERVED)
            mpce_ops_ctx_free(&e->slots[i]->ops, state);
        free(ctx->unserved_why[i]);
    }
    free(ctx->states);
    free(ctx->unserved_why);
    while (ctx->routes) {
        struct mpce_route_set *older = ctx->routes->older;
        free(ctx->routes);
        ctx->routes = older;
    }
    free(ctx->dev_routes);
    pthread_mutex_destroy(&ctx->lock);
    pthread_cond_destroy(&ctx->idle);
    pthread_mutex_destroy(&ctx->inflight_lock);
    ctx->engine = NULL;
    mpce_engine_unref(e);
}

/* This context's state for slot, made on first use; lock held. NOIMPL when
 * the implementation refuses the context (remembered: it is not asked
 * again). */
static mpce_status slot_state(struct mpce_ctx *ctx, struct mpce_slot *s, void **out)
{
    void *state = ctx->states[s->index];
    if (state == UNSERVED)
        return mpce_error(MPCE_ERR_NOIMPL, "%s does not serve this context's parameters: %s",
                          s->impl->name, ctx->unserved_why[s->index]);
    if (state != NULL) {
        *out = state;
        return MPCE_OK;
    }
    int rc = ctx->make(ctx, s, &state);
    if (rc == 0 && state == NULL)
        rc = MPCE_ERR_BACKEND;
    if (rc != 0) {
        char detail[512];
        mpce_plugin_detail_take(&s->module->host->host, detail, sizeof(detail));
        if (rc == MPCE_ERR_NOIMPL) {
            free(ctx->unserved_why[s->index]);
            ctx->unserved_why[s->index] = strdup(detail[0] ? detail : "its ctx_new refused it");
            ctx->states[s->index] = UNSERVED;
            return mpce_error(MPCE_ERR_NOIMPL, "%s does not serve this context's parameters%s%s",
                              s->impl->name, detail[0] ? ": " : "", detail);
        }
        mpce_status code = mpce_status_of_rc(rc);
        if (code == MPCE_ERR_NOMEM)
            return mpce_error(code, "%s: out of memory creating its context state%s%s",
                              s->impl->name, detail[0] ? ": " : "", detail);
        return mpce_error(code, "%s: creating its context state failed (%s)%s%s",
                          s->impl->name, mpce_status_name(code), detail[0] ? ": " : "",
                          detail);
    }
    ctx->states[s->index] = state;
    *out = state;
    return MPCE_OK;
}

/* Whether slot can take this call on this context, and its state; lock
 * held. `what` prefixes refusals (a pin's source, or ""). */
static mpce_status try_slot(struct mpce_ctx *ctx, struct mpce_slot *s,
                            const struct mpce_shape *shape, const struct mpce_devrec *dev,
                            const char *what, void **state)
{
    mpce_engine *e = ctx->engine;
    const char *pname = mpce_primitive_name(ctx->prim);
    /* Skipped first: a refused implementation's fields may be anything. */
    if (mpce_slot_state(s) == MPCE_ST_SKIPPED)
        return mpce_registry_usable(e, s, what);
    if (s->prim != ctx->prim) {
        const char *other = mpce_primitive_name(s->prim);
        return mpce_error(MPCE_ERR_NOIMPL, "%simplementation '%s' is %s %s implementation, not "
                          "%s: see `mpcengine list`", what, s->impl->name,
                          other[0] == 'n' ? "an" : "a", other, pname);
    }
    mpce_status st = mpce_registry_usable(e, s, what);
    if (st != MPCE_OK)
        return st;
    if (dev != NULL && !((s->memory & MPCE_MEM_DEVICE) && s->device == dev))
        return mpce_error(MPCE_ERR_NOIMPL, "%s%s does not work in %s memory: use an "
                          "implementation of that device (see `mpcengine list`) or \"auto\"",
                          what, s->impl->name, dev->name);
    if (s->impl->serves != NULL) {
        char why[256] = "";
        if (s->impl->serves(s->module->state, &ctx->params, shape, why, sizeof(why)) != 0) {
            why[sizeof(why) - 1] = '\0';
            return mpce_error(MPCE_ERR_NOIMPL, "%s%s does not serve %s on this context%s%s",
                              what, s->impl->name, shape->op, why[0] ? ": " : "", why);
        }
    }
    return slot_state(ctx, s, state);
}

/* Set a route once: readers that see slot see the rest. */
static void publish(struct mpce_route *r, const struct mpce_route *got)
{
    r->state = got->state;
    r->n_knobs = got->n_knobs;
    memcpy(r->knobs, got->knobs, sizeof(r->knobs));
    __atomic_store_n(&r->slot, got->slot, __ATOMIC_RELEASE);
}

/* The first candidate of entry that takes the call; lock held. */
static mpce_status resolve_auto(struct mpce_ctx *ctx, const struct mpce_route_entry *entry,
                                const struct mpce_shape *shape, const struct mpce_devrec *dev,
                                struct mpce_route *got)
{
    mpce_engine *e = ctx->engine;
    const char *pname = mpce_primitive_name(ctx->prim);
    memset(got, 0, sizeof(*got));
    if (entry->pinned) {
        char what[600];
        snprintf(what, sizeof(what), "%s: ", entry->source);
        struct mpce_slot *s;
        int has_knobs;
        mpce_status st =
            mpce_registry_find_spec(e, entry->pin_name, what, &s, got->knobs, &has_knobs);
        if (st != MPCE_OK && s == NULL && st == MPCE_ERR_NOIMPL)
            return mpce_error(MPCE_ERR_NOIMPL, "%sunknown implementation '%.*s' for %s: see "
                              "`mpcengine list`", what,
                              (int)mpce_impl_spec_name_len(entry->pin_name), entry->pin_name,
                              pname);
        if (st != MPCE_OK)
            return st;
        got->slot = s;
        got->n_knobs = has_knobs ? s->n_knobs : 0;
        return try_slot(ctx, s, shape, dev, what, &got->state);
    }
    char reasons[900] = "";
    size_t used = 0;
    /* A call that succeeds leaves mpce_last_error() alone, also when the
     * first candidates declined it on the way. */
    char before[1024];
    snprintf(before, sizeof(before), "%s", mpce_last_error());
    int short_of_memory = 0;
    for (unsigned i = 0; i < entry->n; i++) {
        struct mpce_slot *s = e->slots[entry->cand[i]];
        const mpce_status tried = try_slot(ctx, s, shape, dev, "", &got->state);
        /* The engine short of memory to run a candidate's self-test is no
         * verdict on it: moving on would route this context, for its
         * lifetime, to a lower one. The caller gets NOMEM and the next call
         * resolves afresh. A plugin whose own state cannot be made (device
         * memory full) is passed over as before. */
        if (tried == MPCE_ERR_NOMEM && mpce_slot_state(s) == MPCE_ST_UNTESTED)
            return tried;
        if (tried == MPCE_OK) {
            got->slot = s;
            /* The selector's knob values belong to the row's winner. */
            if (entry->knob_slot == s) {
                got->n_knobs = s->n_knobs;
                memcpy(got->knobs, entry->knobs, sizeof(got->knobs));
            }
            if (i > 0)
                mpce_error(MPCE_OK, "%s", before);
            return MPCE_OK;
        }
        short_of_memory |= tried == MPCE_ERR_NOMEM;
        if (used < sizeof(reasons))
            used += (size_t)snprintf(reasons + used, sizeof(reasons) - used, "%s%s",
                                     used ? "; " : "", mpce_last_error());
    }
    if (entry->n == 0)
        return mpce_error(MPCE_ERR_NOIMPL, "no usable %s implementation for %s in %s memory: "
                          "every candidate was skipped or is not allowed: see `mpcengine list`",
                          pname, shape->op, mpce_memory_kind_name(dev));
    /* Every candidate out, one of them for want of memory: a shortage,
     * which another call may not meet, not a call nothing serves. */
    return mpce_error(short_of_memory ? MPCE_ERR_NOMEM : MPCE_ERR_NOIMPL,
                      "no %s implementation takes this %s call: %s%s", pname, shape->op,
                      reasons, short_of_memory ? "; free memory and call again" : "");
}

/* Device calls: the implementations of that device, by priority. */
static mpce_status resolve_device(struct mpce_ctx *ctx, const struct mpce_shape *shape,
                                  const struct mpce_devrec *dev, struct mpce_route *got)
{
    mpce_engine *e = ctx->engine;
    struct mpce_route_entry entry = {0};
    uint16_t cand[256];
    for (size_t i = 0; i < e->n_slots && entry.n < 256; i++) {
        const struct mpce_slot *s = e->slots[i];
        if (s->prim != ctx->prim || s->device != dev || !(s->memory & MPCE_MEM_DEVICE))
            continue;
        unsigned at = entry.n++;
        while (at > 0 && e->slots[cand[at - 1]]->priority < s->priority) {
            cand[at] = cand[at - 1];
            at--;
        }
        cand[at] = (uint16_t)i;
    }
    entry.cand = cand;
    return resolve_auto(ctx, &entry, shape, dev, got);
}

/* A name, "IMPL" or "IMPL:KNOB=VALUE:..."; lock held. */
static mpce_status resolve_named(struct mpce_ctx *ctx, const char *impl,
                                 const struct mpce_shape *shape, const struct mpce_devrec *dev,
                                 struct mpce_route *got)
{
    struct mpce_slot *slot;
    int has_knobs;
    memset(got, 0, sizeof(*got));
    mpce_status st = mpce_registry_find_spec(ctx->engine, impl, "", &slot, got->knobs,
                                             &has_knobs);
    if (slot == NULL && st == MPCE_ERR_NOIMPL)
        return mpce_error(MPCE_ERR_NOIMPL, "unknown implementation '%.*s' for %s: see "
                          "`mpcengine list`",
                          (int)(mpce_impl_spec_name_len(impl) < 64 ? mpce_impl_spec_name_len(impl)
                                                                   : 64),
                          impl, mpce_primitive_name(ctx->prim));
    if (st != MPCE_OK)
        return st;
    got->slot = slot;
    got->n_knobs = has_knobs ? slot->n_knobs : 0;
    return try_slot(ctx, slot, shape, dev, "", &got->state);
}

mpce_status mpce_ctx_route_slow(struct mpce_ctx *ctx, const char *fn, enum mpce_op_id op,
                                uint64_t units, uint64_t elements, const char *impl,
                                const struct mpce_devrec *dev, struct mpce_route *out)
{
    mpce_engine *e = ctx->engine;
    if (mpce_engine_is_closed(e))
        return mpce_engine_closed_error(fn);
    const unsigned sc = mpce_size_class(elements);
    const unsigned local = (unsigned)op - (unsigned)ctx->op0;
    const struct mpce_shape shape = {
        .struct_size = sizeof(shape),
        .op = mpce_op_info[op].name,
        .memory = dev ? MPCE_MEM_DEVICE : MPCE_MEM_HOST,
        .units = units,
    };
    struct mpce_route got;
    mpce_status st;
    const int is_auto = mpce_impl_is_auto(impl);

    memset(&got, 0, sizeof(got));
    pthread_mutex_lock(&ctx->lock);
    if (dev != NULL) {
        struct mpce_dev_route *dr = &ctx->dev_routes[local];
        /* Only ever read under the lock: a device call costs far more. */
        if (is_auto && dr->dev == dev && dr->route.slot != NULL) {
            *out = dr->route;
            st = MPCE_OK;
        } else if (is_auto) {
            st = resolve_device(ctx, &shape, dev, &got);
            if (st == MPCE_OK) {
                dr->dev = dev;
                dr->route = got;
                *out = got;
            }
        } else {
            st = resolve_named(ctx, impl, &shape, dev, &got);
            if (st == MPCE_OK)
                *out = got;
        }
        pthread_mutex_unlock(&ctx->lock);
        return st;
    }

    if (is_auto) {
        const struct mpce_table *table = __atomic_load_n(&e->table, __ATOMIC_ACQUIRE);
        struct mpce_route_set *set = ctx->routes;
        if (set->table != table) {
            /* New pins: every route is resolved again, in a fresh set. */
            size_t n = (size_t)mpce_op_count_of(ctx->prim) * MPCE_SIZE_CLASSES *
                       MPCE_ROUTE_HALVES;
            struct mpce_route_set *fresh = calloc(1, sizeof(*fresh) + n * sizeof(fresh->r[0]));
            if (fresh == NULL) {
                pthread_mutex_unlock(&ctx->lock);
                return mpce_error(MPCE_ERR_NOMEM, "%s: out of memory resolving a route", fn);
            }
            fresh->table = table;
            fresh->older = set;
            __atomic_store_n(&ctx->routes, fresh, __ATOMIC_RELEASE);
            set = fresh;
        }
        const size_t at = mpce_route_index(table, op, local, ctx->variant, sc, elements);
        struct mpce_route *r = &set->r[at];
        st = MPCE_OK;
        if (r->slot == NULL) {
            /* At or above the class's crossover: the device's order. */
            struct mpce_route_entry entry = table->e[op][ctx->variant][sc];
            if (at % MPCE_ROUTE_HALVES != 0)
                entry.cand = entry.above;
            st = resolve_auto(ctx, &entry, &shape, NULL, &got);
            if (st == MPCE_OK)
                publish(r, &got);
        }
        if (st == MPCE_OK)
            *out = *r;
        pthread_mutex_unlock(&ctx->lock);
        return st;
    }

    /* A name: looked up once per context, op and size class. */
    unsigned n = ctx->n_named;
    for (unsigned i = 0; i < n; i++) {
        struct mpce_named_route *nr = &ctx->named[i];
        if (nr->op == op && nr->size_class == sc && strcmp(nr->name, impl) == 0) {
            *out = nr->route;
            pthread_mutex_unlock(&ctx->lock);
            return MPCE_OK;
        }
    }
    st = resolve_named(ctx, impl, &shape, NULL, &got);
    if (st == MPCE_OK) {
        /* With the cache full (or a name too long for it), later calls with
         * this name look it up here. */
        if (n < MPCE_CTX_NAMED && strlen(impl) < sizeof(ctx->named[n].name)) {
            struct mpce_named_route *nr = &ctx->named[n];
            snprintf(nr->name, sizeof(nr->name), "%s", impl);
            nr->op = op;
            nr->size_class = sc;
            nr->route = got;
            __atomic_store_n(&ctx->n_named, n + 1, __ATOMIC_RELEASE);
        }
        *out = got;
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

mpce_status mpce_ctx_op_named(const struct mpce_ctx *ctx, const char *fn, const char *op,
                              enum mpce_op_id *id)
{
    *id = mpce_op_by_name(op);
    if (*id < MPCE_OP_COUNT && mpce_op_info[*id].prim == ctx->prim && mpce_op_routed(*id))
        return MPCE_OK;
    char ops[200] = "";
    size_t used = 0;
    const enum mpce_op_id first = mpce_op_first(ctx->prim);
    for (unsigned k = 0; k < mpce_op_count_of(ctx->prim) && used < sizeof(ops); k++)
        if (mpce_op_routed((enum mpce_op_id)(first + k)))
            used += (size_t)snprintf(ops + used, sizeof(ops) - used, "%s%s", used ? ", " : "",
                                     mpce_op_info[first + k].name);
    return mpce_error(MPCE_ERR_ARG, "%s: op '%.32s' is not a %s operation: use one of %s", fn,
                      op ? op : "(null)", mpce_primitive_name(ctx->prim), ops);
}
