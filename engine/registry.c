/* Implementation slots, selection, listings and self-test bookkeeping. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/loader.h"
#include "engine/selftest.h"

/* Slot state is published with release stores after reason and selectable
 * are written, so readers on the fast path need no lock. */
static enum mpce_selftest_state state_of(const struct mpce_slot *s)
{
    return __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
}

static const char *variable_time_reason(const struct mpce_slot *s, char *buf, size_t len)
{
    snprintf(buf, len, "%s is variable-time: set allow_variable_time = yes in engine.conf "
             "to use it", s->impl->name);
    return buf;
}

static int policy_allows(const mpce_engine *e, const struct mpce_slot *s)
{
    return !(s->impl->flags & MPCE_IMPL_VARIABLE_TIME) || e->cfg.allow_variable_time;
}

mpce_status mpce_registry_keep_module(mpce_engine *e, struct mpce_module *m)
{
    if (e->n_modules == e->cap_modules) {
        size_t cap = e->cap_modules ? e->cap_modules * 2 : 8;
        struct mpce_module **tmp = realloc(e->modules, cap * sizeof(*tmp));
        if (!tmp) {
            mpce_loader_free_module(m);
            return mpce_error(MPCE_ERR_NOMEM, "out of memory registering modules");
        }
        e->modules = tmp;
        e->cap_modules = cap;
    }
    e->modules[e->n_modules++] = m;
    return MPCE_OK;
}

mpce_status mpce_registry_add_slot(mpce_engine *e, const struct mpce_module *m,
                                   const struct mpce_impl *impl,
                                   enum mpce_selftest_state state, const char *reason)
{
    if (e->n_slots == e->cap_slots) {
        size_t cap = e->cap_slots ? e->cap_slots * 2 : 16;
        struct mpce_slot **tmp = realloc(e->slots, cap * sizeof(*tmp));
        if (!tmp)
            return mpce_error(MPCE_ERR_NOMEM, "out of memory registering implementations");
        e->slots = tmp;
        e->cap_slots = cap;
    }
    struct mpce_slot *s = calloc(1, sizeof(*s));
    if (!s)
        return mpce_error(MPCE_ERR_NOMEM, "out of memory registering implementations");
    s->impl = impl;
    s->plugin = m->name;
    s->path = m->path;
    s->sha256 = m->sha256;
    s->version = (m->desc && m->desc->version) ? m->desc->version : "";
    s->state = state;
    snprintf(s->reason, sizeof(s->reason), "%s", reason ? reason : "");
    e->slots[e->n_slots++] = s;
    return MPCE_OK;
}

struct mpce_slot *mpce_registry_find(mpce_engine *e, const char *name)
{
    for (size_t i = 0; i < e->n_slots; i++)
        if (strcmp(e->slots[i]->impl->name, name) == 0)
            return e->slots[i];
    return NULL;
}

void mpce_registry_free(mpce_engine *e)
{
    for (size_t i = 0; i < e->n_slots; i++)
        free(e->slots[i]);
    free(e->slots);
    for (size_t i = 0; i < e->n_modules; i++)
        mpce_loader_free_module(e->modules[i]);
    free(e->modules);
    while (e->listings) {
        struct mpce_rows *r = e->listings;
        e->listings = r->next;
        free(r->rows);
        free(r);
    }
    e->slots = NULL;
    e->modules = NULL;
    e->n_slots = e->n_modules = 0;
}

/* Run the self-test of an untested slot; lock held. */
static void ensure_tested(mpce_engine *e, struct mpce_slot *s)
{
    if (state_of(s) != MPCE_ST_UNTESTED)
        return;
    char why[sizeof(s->reason)];
    int ok = mpce_selftest_impl(s->impl, why, sizeof(why)) == 0;
    if (ok) {
        if (policy_allows(e, s))
            s->reason[0] = '\0';
        else
            variable_time_reason(s, s->reason, sizeof(s->reason));
        s->selectable = policy_allows(e, s);
    } else {
        snprintf(s->reason, sizeof(s->reason), "self-test failed: %.230s", why);
        s->selectable = 0;
    }
    __atomic_store_n(&s->state, ok ? MPCE_ST_PASS : MPCE_ST_FAIL, __ATOMIC_RELEASE);
    e->generation++;
}

mpce_status mpce_registry_test_all(mpce_engine *e)
{
    pthread_mutex_lock(&e->lock);
    mpce_status st = MPCE_OK;
    for (size_t i = 0; i < e->n_slots; i++) {
        struct mpce_slot *s = e->slots[i];
        ensure_tested(e, s);
        if (st == MPCE_OK && state_of(s) == MPCE_ST_FAIL)
            st = mpce_error(MPCE_ERR_SELFTEST, "strict = yes: implementation %s (plugin %s, "
                            "%s) %s: remove or fix the plugin, or set strict = no",
                            s->impl->name, s->plugin, s->path, s->reason);
    }
    pthread_mutex_unlock(&e->lock);
    return st;
}

/* The highest-priority usable implementation of prim; lock held. Earlier
 * registration wins ties, so the built-in soft backend leads among equals. */
static struct mpce_slot *resolve_auto(mpce_engine *e, mpce_primitive prim)
{
    int tried[256] = {0};
    size_t limit = e->n_slots < 256 ? e->n_slots : 256;
    for (;;) {
        struct mpce_slot *best = NULL;
        size_t best_i = 0;
        for (size_t i = 0; i < limit; i++) {
            struct mpce_slot *s = e->slots[i];
            if (tried[i] || s->impl->primitive != (uint32_t)prim ||
                state_of(s) == MPCE_ST_SKIPPED || state_of(s) == MPCE_ST_FAIL ||
                !policy_allows(e, s))
                continue;
            if (!best || s->impl->priority > best->impl->priority) {
                best = s;
                best_i = i;
            }
        }
        if (!best) {
            mpce_error(MPCE_ERR_NOIMPL, "no usable %s implementation: every candidate was "
                       "skipped or failed its self-test: see `mpcengine list`",
                       mpce_primitive_name(prim));
            return NULL;
        }
        tried[best_i] = 1;
        ensure_tested(e, best);
        if (best->selectable)
            return best;
    }
}

/* A named implementation, checked for use; lock held. `src` names the pin
 * or override that chose it, for the error message. */
static struct mpce_slot *pick_named(mpce_engine *e, mpce_primitive prim, const char *name,
                                    const char *src)
{
    char pre[600] = "";
    if (src)
        snprintf(pre, sizeof(pre), "%s: ", src);
    const char *pname = mpce_primitive_name(prim);
    struct mpce_slot *s = mpce_registry_find(e, name);
    if (!s) {
        mpce_error(MPCE_ERR_NOIMPL, "%sunknown implementation '%.64s' for %s: see "
                   "`mpcengine list`", pre, name, pname);
        return NULL;
    }
    if (s->impl->primitive != (uint32_t)prim) {
        const char *other = mpce_primitive_name((mpce_primitive)s->impl->primitive);
        mpce_error(MPCE_ERR_NOIMPL, "%simplementation '%s' is %s %s implementation, not %s: "
                   "see `mpcengine list`", pre, name,
                   other && other[0] == 'n' ? "an" : "a", other ? other : "unknown", pname);
        return NULL;
    }
    if (state_of(s) == MPCE_ST_SKIPPED) {
        mpce_error(MPCE_ERR_NOIMPL, "%simplementation '%s' is skipped: %s", pre, name,
                   s->reason);
        return NULL;
    }
    if (!policy_allows(e, s)) {
        char buf[200];
        mpce_error(MPCE_ERR_NOIMPL, "%s%s", pre, variable_time_reason(s, buf, sizeof(buf)));
        return NULL;
    }
    ensure_tested(e, s);
    if (!s->selectable) {
        mpce_error(MPCE_ERR_NOIMPL, "%simplementation '%s' is not selectable: %s: see "
                   "`mpcengine selftest`", pre, name, s->reason);
        return NULL;
    }
    return s;
}

const struct mpce_slot *mpce_pick(mpce_engine *engine, mpce_primitive prim, const char *name)
{
    mpce_engine *e = mpce_engine_get(engine);
    if (!e)
        return NULL;
    if ((unsigned)prim >= MPCE_PRIM_COUNT) {
        mpce_error(MPCE_ERR_ARG, "unknown primitive %d", (int)prim);
        return NULL;
    }
    const char *src = NULL;
    if (!name || strcmp(name, "auto") == 0) {
        if (e->cfg.pin[prim]) {
            name = e->cfg.pin[prim];
            src = e->cfg.pin_src[prim];
        } else {
            const struct mpce_slot *s = __atomic_load_n(&e->auto_slot[prim], __ATOMIC_ACQUIRE);
            if (s)
                return s;
            pthread_mutex_lock(&e->lock);
            s = resolve_auto(e, prim);
            if (s)
                __atomic_store_n(&e->auto_slot[prim], s, __ATOMIC_RELEASE);
            pthread_mutex_unlock(&e->lock);
            return s;
        }
    }
    /* Fast path: the slot table is fixed after creation, and a passed,
     * selectable slot never changes again. */
    struct mpce_slot *s = mpce_registry_find(e, name);
    if (s && s->impl->primitive == (uint32_t)prim && state_of(s) == MPCE_ST_PASS &&
        s->selectable)
        return s;
    pthread_mutex_lock(&e->lock);
    s = pick_named(e, prim, name, src);
    pthread_mutex_unlock(&e->lock);
    return s;
}

size_t mpce_pick_fallbacks(mpce_engine *engine, mpce_primitive prim, const char *name,
                           const struct mpce_slot *first, const struct mpce_slot **out,
                           size_t max)
{
    mpce_engine *e = mpce_engine_get(engine);
    if (!e || (unsigned)prim >= MPCE_PRIM_COUNT || (name && strcmp(name, "auto") != 0) ||
        e->cfg.pin[prim])
        return 0;
    size_t n = 0;
    pthread_mutex_lock(&e->lock);
    for (size_t i = 0; i < e->n_slots; i++) {
        struct mpce_slot *s = e->slots[i];
        if (s == first || s->impl->primitive != (uint32_t)prim ||
            state_of(s) == MPCE_ST_SKIPPED || state_of(s) == MPCE_ST_FAIL ||
            !policy_allows(e, s))
            continue;
        ensure_tested(e, s);
        if (!s->selectable)
            continue;
        /* Insertion by priority, earlier registration first among equals. */
        size_t at = n < max ? n : max - 1;
        if (n == max && s->impl->priority <= out[max - 1]->impl->priority)
            continue;
        while (at > 0 && out[at - 1]->impl->priority < s->impl->priority) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = s;
        if (n < max)
            n++;
    }
    pthread_mutex_unlock(&e->lock);
    return n;
}

static const char *state_name(enum mpce_selftest_state st)
{
    switch (st) {
    case MPCE_ST_PASS:
        return "pass";
    case MPCE_ST_FAIL:
        return "fail";
    case MPCE_ST_SKIPPED:
        return "skipped";
    default:
        return "untested";
    }
}

/* A snapshot of the listing; lock held. Rows and their reason strings are
 * copied, so a later state change never rewrites an array a caller holds. */
static struct mpce_rows *build_rows(mpce_engine *e)
{
    size_t n = e->n_slots;
    for (size_t i = 0; i < e->n_modules; i++)
        n += e->modules[i]->skipped;
    struct mpce_rows *r = calloc(1, sizeof(*r));
    size_t reason_len = sizeof(((struct mpce_module *)0)->reason);
    char *text = NULL;
    if (r)
        r->rows = calloc(1, n * (sizeof(mpce_impl_info) + reason_len) + 1);
    if (!r || !r->rows) {
        free(r);
        return NULL;
    }
    text = (char *)(r->rows + n);
    size_t k = 0;
    for (size_t i = 0; i < e->n_slots; i++, k++) {
        const struct mpce_slot *s = e->slots[i];
        mpce_impl_info *row = &r->rows[k];
        const char *prim = mpce_primitive_name((mpce_primitive)s->impl->primitive);
        row->plugin = s->plugin;
        row->primitive = prim ? prim : "?";
        row->impl = s->impl->name;
        row->priority = s->impl->priority;
        row->flags = s->impl->flags;
        row->selftest = state_name(state_of(s));
        char *reason = text + k * reason_len;
        if (state_of(s) == MPCE_ST_UNTESTED && !policy_allows(e, s))
            variable_time_reason(s, reason, reason_len);
        else
            snprintf(reason, reason_len, "%s", s->reason);
        row->reason = reason;
        row->path = s->path;
        row->sha256 = s->sha256;
        row->version = s->version;
    }
    for (size_t i = 0; i < e->n_modules; i++) {
        const struct mpce_module *m = e->modules[i];
        if (!m->skipped)
            continue;
        mpce_impl_info *row = &r->rows[k];
        char *reason = text + k * reason_len;
        snprintf(reason, reason_len, "%s", m->reason);
        row->plugin = m->path;
        row->primitive = "";
        row->impl = "";
        row->selftest = "skipped";
        row->reason = reason;
        row->path = m->path;
        row->sha256 = m->sha256;
        row->version = "";
        k++;
    }
    r->count = n;
    r->generation = e->generation;
    r->next = e->listings;
    e->listings = r;
    return r;
}

mpce_status mpce_list(mpce_engine *engine, int run_selftests, const mpce_impl_info **rows,
                      size_t *count)
{
    mpce_error_clear();
    if (!rows || !count)
        return mpce_error(MPCE_ERR_ARG, "mpce_list: rows and count must not be NULL");
    mpce_engine *e;
    mpce_status gst = mpce_engine_acquire(engine, &e);
    if (gst != MPCE_OK)
        return gst;
    pthread_mutex_lock(&e->lock);
    if (run_selftests)
        for (size_t i = 0; i < e->n_slots; i++)
            ensure_tested(e, e->slots[i]);
    struct mpce_rows *r = e->listings;
    if (!r || r->generation != e->generation)
        r = build_rows(e);
    pthread_mutex_unlock(&e->lock);
    if (!r)
        return mpce_error(MPCE_ERR_NOMEM, "out of memory building the listing");
    *rows = r->rows;
    *count = r->count;
    return MPCE_OK;
}

mpce_status mpce_selftest(mpce_engine *engine, const char *impl, size_t *passed,
                          size_t *failed)
{
    mpce_error_clear();
    mpce_engine *e;
    mpce_status gst = mpce_engine_acquire(engine, &e);
    if (gst != MPCE_OK)
        return gst;
    size_t np = 0, nf = 0;
    const struct mpce_slot *first_fail = NULL;
    mpce_status st = MPCE_OK;
    pthread_mutex_lock(&e->lock);
    if (impl) {
        struct mpce_slot *s = mpce_registry_find(e, impl);
        if (!s)
            st = mpce_error(MPCE_ERR_NOIMPL, "unknown implementation '%.64s': see "
                            "`mpcengine list`", impl);
        else if (state_of(s) == MPCE_ST_SKIPPED)
            st = mpce_error(MPCE_ERR_NOIMPL, "implementation '%s' is not usable: %s", impl,
                            s->reason);
        else {
            ensure_tested(e, s);
            if (state_of(s) == MPCE_ST_PASS)
                np++;
            else
                nf++, first_fail = s;
        }
    } else {
        for (size_t i = 0; i < e->n_slots; i++) {
            struct mpce_slot *s = e->slots[i];
            if (state_of(s) == MPCE_ST_SKIPPED)
                continue;
            ensure_tested(e, s);
            if (state_of(s) == MPCE_ST_PASS) {
                np++;
            } else {
                nf++;
                if (!first_fail)
                    first_fail = s;
            }
        }
    }
    if (st == MPCE_OK && first_fail)
        st = mpce_error(MPCE_ERR_SELFTEST, "%zu implementation(s) failed the self-test; "
                        "first: %s (plugin %s, %s): %s", nf, first_fail->impl->name,
                        first_fail->plugin, first_fail->path, first_fail->reason);
    pthread_mutex_unlock(&e->lock);
    /* A self-test failure is still a count worth reporting; an unusable
     * name is not (common.h: a failing call writes nothing). */
    if (st == MPCE_OK || st == MPCE_ERR_SELFTEST) {
        if (passed)
            *passed = np;
        if (failed)
            *failed = nf;
    }
    return st;
}

const char *mpce_resolve(mpce_engine *engine, mpce_primitive prim)
{
    mpce_error_clear();
    const struct mpce_slot *s = mpce_pick(engine, prim, NULL);
    return s ? s->impl->name : NULL;
}
