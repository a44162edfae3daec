/* Per-context plugin state, one per implementation the context has used. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "engine/internal.h"

/* A plugin may return any non-zero int; callers must only ever see an
 * mpce_status. */
static mpce_status status_of_rc(int rc)
{
    return (rc > 0 && rc <= MPCE_ERR_STATE) ? (mpce_status)rc : MPCE_ERR_BACKEND;
}

void mpce_state_cache_init(struct mpce_state_cache *cache)
{
    memset(cache, 0, sizeof(*cache));
    pthread_mutex_init(&cache->lock, NULL);
}

mpce_status mpce_state_cache_get(struct mpce_state_cache *cache, const struct mpce_impl *impl,
                                 mpce_state_make_fn make, const void *args, void **state)
{
    mpce_status st = MPCE_OK;
    /* The lock is held only while looking up or creating state, never during
     * an op, so concurrent calls on one context do not serialise. */
    pthread_mutex_lock(&cache->lock);
    for (size_t i = 0; i < cache->count; i++) {
        if (cache->items[i].impl == impl) {
            if (cache->items[i].unsupported)
                st = mpce_error(MPCE_ERR_NOIMPL,
                                "%s does not serve this context's parameters; use another "
                                "implementation or \"auto\"",
                                impl->name);
            else
                *state = cache->items[i].state;
            goto out;
        }
    }
    if (cache->count == sizeof(cache->items) / sizeof(cache->items[0])) {
        st = mpce_error(MPCE_ERR_STATE,
                        "context has already been used with %zu implementations; "
                        "create a new context for '%s'",
                        cache->count, impl->name);
        goto out;
    }
    void *made = NULL;
    int rc = make(impl, args, &made);
    if (rc == MPCE_ERR_NOIMPL) {
        /* Remembered, so later calls do not retry the plugin. */
        char detail[512];
        snprintf(detail, sizeof(detail), "%s", mpce_last_error());
        cache->items[cache->count].impl = impl;
        cache->items[cache->count].state = NULL;
        cache->items[cache->count].unsupported = 1;
        cache->count++;
        st = mpce_error(MPCE_ERR_NOIMPL, "%s does not serve this context's parameters%s%s",
                        impl->name, detail[0] ? ": " : "", detail);
        goto out;
    }
    if (rc != 0) {
        /* Keep what the plugin said through host->set_error, if anything. */
        char detail[512];
        snprintf(detail, sizeof(detail), "%s", mpce_last_error());
        mpce_status code = status_of_rc(rc);
        st = (code == MPCE_ERR_NOMEM)
                 ? mpce_error(MPCE_ERR_NOMEM, "%s: out of memory creating its context state",
                              impl->name)
                 : mpce_error(code, "%s: creating its context state failed (%s)%s%s",
                              impl->name, mpce_status_name(code), detail[0] ? ": " : "",
                              detail);
        goto out;
    }
    cache->items[cache->count].impl = impl;
    cache->items[cache->count].state = made;
    cache->count++;
    *state = made;
out:
    pthread_mutex_unlock(&cache->lock);
    return st;
}

void mpce_state_cache_destroy(struct mpce_state_cache *cache, mpce_state_free_fn destroy)
{
    for (size_t i = 0; i < cache->count; i++)
        if (!cache->items[i].unsupported)
            destroy(cache->items[i].impl, cache->items[i].state);
    cache->count = 0;
    pthread_mutex_destroy(&cache->lock);
}

mpce_status mpce_dispatch(mpce_engine *engine, struct mpce_state_cache *cache,
                          mpce_primitive prim, const char *impl_name, mpce_state_make_fn make,
                          const void *args, const struct mpce_slot **slot, void **state)
{
    const struct mpce_slot *picked = mpce_pick(engine, prim, impl_name);
    if (!picked)
        return MPCE_ERR_NOIMPL;
    mpce_status st = mpce_state_cache_get(cache, picked->impl, make, args, state);
    if (st == MPCE_ERR_NOIMPL) {
        const struct mpce_slot *next[32];
        size_t n = mpce_pick_fallbacks(engine, prim, impl_name, picked, next, 32);
        for (size_t i = 0; i < n && st == MPCE_ERR_NOIMPL; i++) {
            st = mpce_state_cache_get(cache, next[i]->impl, make, args, state);
            if (st == MPCE_OK)
                picked = next[i];
        }
    }
    if (st == MPCE_OK)
        *slot = picked;
    return st;
}

mpce_status mpce_op_status(const struct mpce_slot *slot, const char *op, int rc)
{
    if (rc == 0)
        return MPCE_OK;
    char detail[512];
    snprintf(detail, sizeof(detail), "%s", mpce_last_error());
    mpce_status st = status_of_rc(rc);
    return mpce_error(st, "%s: %s failed (%s)%s%s", slot->impl->name, op, mpce_status_name(st),
                      detail[0] ? ": " : "", detail);
}
