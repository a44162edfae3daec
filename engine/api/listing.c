/* SPDX-License-Identifier: Apache-2.0 */
/* Listings: implementations and their self-tests, routes, configuration. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "engine/runtime/knobs.h"
#include "engine/selector/selector.h"

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

/* Strings a snapshot owns: appended to one kept block. */
struct text {
    char *buf;
    size_t used, cap;
};

static const char *put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    if (t->used >= t->cap)
        return ""; /* full: a string cut short rather than one past the block */
    va_start(ap, fmt);
    char *at = t->buf + t->used;
    int n = vsnprintf(at, t->cap - t->used, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    size_t w = (size_t)n + 1 <= t->cap - t->used ? (size_t)n + 1 : t->cap - t->used;
    t->used += w;
    return at;
}

/* The candidates of cand[0..n) that passed their self-tests, space-separated
 * into buf; returns the first one's name ("" when none). */
static const char *usable_order(const mpce_engine *e, const uint16_t *cand, unsigned n,
                                char *buf, size_t len)
{
    const char *first = "";
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < n; i++) {
        const struct mpce_slot *s = e->slots[cand[i]];
        if (mpce_slot_state(s) != MPCE_ST_PASS)
            continue;
        if (!first[0])
            first = s->impl->name;
        if (used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " " : "",
                                     s->impl->name);
    }
    return first;
}

/* "chunk=128:prefetch=8": knob values auto or a pin passes s. */
static const char *knob_text(struct text *t, const struct mpce_slot *s, const uint32_t *values)
{
    char buf[200];
    mpce_knobs_format(s, values, buf, sizeof(buf));
    return put(t, "%s", buf);
}

/* A snapshot of the listing; e->lock held. Reasons are copied, so a later
 * state change never rewrites rows a caller holds. */
static const mpce_impl_info *build_rows(mpce_engine *e, size_t *count)
{
    size_t n = e->n_slots;
    for (size_t i = 0; i < e->n_modules; i++)
        n += e->modules[i]->skipped;
    const size_t per_row = 1536;
    mpce_impl_info *rows = mpce_engine_keep(e, n * (sizeof(*rows) + per_row) + 1);
    if (rows == NULL)
        return NULL;
    struct text t = {(char *)(rows + n), 0, n * per_row + 1};
    size_t k = 0;
    for (size_t i = 0; i < e->n_slots; i++, k++) {
        const struct mpce_slot *s = e->slots[i];
        mpce_impl_info *row = &rows[k];
        enum mpce_selftest_state st = mpce_slot_state(s);
        row->plugin = s->module->name;
        row->primitive = s->prim < MPCE_PRIM_COUNT ? mpce_primitive_name(s->prim) : "";
        row->impl = s->impl->name;
        row->priority = s->priority;
        row->flags = s->flags;
        row->selftest = state_name(st);
        const char *why = s->reason;
        char vt[200] = "";
        if (st != MPCE_ST_SKIPPED && st != MPCE_ST_FAIL && !mpce_registry_allowed(e, s)) {
            snprintf(vt, sizeof(vt), "variable-time: set allow_variable_time = yes in "
                     "engine.conf to use it");
            why = vt;
        }
        const char *bl = mpce_selector_blacklisted(e, s->module);
        char blw[400];
        if (bl != NULL && !why[0]) {
            snprintf(blw, sizeof(blw), "auto never chooses it: blacklisted by the selector: "
                     "%.300s (see `mpcengine pins`)", bl);
            why = blw;
        }
        row->reason = put(&t, "%s%s%s", why, why[0] && s->note[0] ? "; " : "", s->note);
        row->path = s->module->path;
        row->sha256 = s->module->sha256;
        row->version = s->module->version;
        row->impl_class = mpce_impl_class_name(s->impl_class);
        row->memory = s->device ? put(&t, "host,%s", s->device->name) : MPCE_MEMORY_HOST;
        char knobs[400] = "";
        if (s->n_knobs)
            mpce_knobs_describe(s, knobs, sizeof(knobs));
        row->knobs = put(&t, "%s", knobs);
    }
    for (size_t i = 0; i < e->n_modules; i++) {
        const struct mpce_module *m = e->modules[i];
        if (!m->skipped)
            continue;
        mpce_impl_info *row = &rows[k++];
        row->plugin = m->path;
        row->primitive = "";
        row->impl = "";
        /* A module that crashed or hung in its vet failed; others were refused. */
        row->selftest = m->vet_failed ? "fail" : "skipped";
        row->reason = put(&t, "%s", m->reason);
        row->path = m->path;
        row->sha256 = m->sha256;
        row->version = "";
        row->impl_class = "";
        row->memory = "";
        row->knobs = "";
    }
    *count = n;
    return rows;
}

mpce_status mpce_list(mpce_engine *engine, int run_selftests, const mpce_impl_info **rows,
                      size_t *count)
{
    if (!rows || !count)
        return mpce_error(MPCE_ERR_ARG, "mpce_list: rows and count must not be NULL");
    mpce_engine *e;
    mpce_status st = mpce_engine_acquire(engine, &e);
    if (st != MPCE_OK)
        return st;
    if (run_selftests)
        for (size_t i = 0; i < e->n_slots; i++) {
            struct mpce_slot *s = e->slots[i];
            mpce_registry_ensure_tested(e, s);
            /* Memory ran out before its verdict: the listing would not be
             * the one asked for. */
            if (mpce_slot_state(s) == MPCE_ST_UNTESTED) {
                st = mpce_error(MPCE_ERR_NOMEM, "mpce_list: implementation '%s' (plugin %s): "
                                "%s; free memory and list again", s->impl->name,
                                s->module->name, s->reason);
                mpce_engine_unref(e);
                return st;
            }
        }
    pthread_mutex_lock(&e->lock);
    if (e->listing == NULL || e->listing_generation != e->generation) {
        size_t n = 0;
        const mpce_impl_info *r = build_rows(e, &n);
        if (r != NULL) {
            e->listing = r;
            e->listing_count = n;
            e->listing_generation = e->generation;
        } else {
            st = mpce_error(MPCE_ERR_NOMEM, "out of memory building the listing");
        }
    }
    if (st == MPCE_OK) {
        *rows = e->listing;
        *count = e->listing_count;
    }
    pthread_mutex_unlock(&e->lock);
    mpce_engine_unref(e);
    return st;
}

mpce_status mpce_selftest(mpce_engine *engine, const char *impl, size_t *passed,
                          size_t *failed)
{
    mpce_engine *e;
    mpce_status st = mpce_engine_acquire(engine, &e);
    if (st != MPCE_OK)
        return st;
    size_t np = 0, nf = 0;
    const struct mpce_slot *first_fail = NULL;
    for (size_t i = 0; i < e->n_slots; i++) {
        struct mpce_slot *s = e->slots[i];
        if (impl != NULL && strcmp(s->impl->name, impl) != 0)
            continue;
        if (mpce_slot_state(s) == MPCE_ST_SKIPPED) {
            if (impl != NULL)
                st = mpce_error(MPCE_ERR_NOIMPL, "implementation '%s' is not usable: %s", impl,
                                s->reason);
            continue;
        }
        mpce_registry_ensure_tested(e, s);
        if (mpce_slot_state(s) == MPCE_ST_UNTESTED) {
            /* Memory ran out before a verdict: no count, an error. */
            if (st == MPCE_OK)
                st = mpce_error(MPCE_ERR_NOMEM, "implementation '%s' (plugin %s): %s; free "
                                "memory and run the self-test again", s->impl->name,
                                s->module->name, s->reason);
        } else if (mpce_slot_state(s) == MPCE_ST_PASS) {
            np++;
        } else {
            nf++;
            if (!first_fail)
                first_fail = s;
        }
    }
    if (st == MPCE_OK && impl != NULL && np + nf == 0)
        st = mpce_error(MPCE_ERR_NOIMPL, "unknown implementation '%.64s': see `mpcengine list`",
                        impl);
    /* A module whose vet failed (it crashed or hung in the probe helper) was
     * never loaded: it counts as one failure, like its row in the listing. */
    const struct mpce_module *vet_fail = NULL;
    for (size_t i = 0; impl == NULL && i < e->n_modules; i++)
        if (e->modules[i]->vet_failed) {
            nf++;
            vet_fail = vet_fail ? vet_fail : e->modules[i];
        }
    if (st == MPCE_OK && vet_fail && !first_fail)
        st = mpce_error(MPCE_ERR_SELFTEST, "module %s: %s (%zu failure(s) in all): remove or "
                        "fix the module", vet_fail->path, vet_fail->reason, nf);
    if (st == MPCE_OK && first_fail)
        st = mpce_error(MPCE_ERR_SELFTEST, "%zu implementation(s) failed the self-test; "
                        "first: %s (plugin %s, %s): %s", nf, first_fail->impl->name,
                        first_fail->module->name, first_fail->module->path, first_fail->reason);
    /* A self-test failure is still a count worth reporting; an unusable
     * name is not (a refused call writes nothing). */
    if (st == MPCE_OK || st == MPCE_ERR_SELFTEST) {
        if (passed)
            *passed = np;
        if (failed)
            *failed = nf;
    }
    mpce_engine_unref(e);
    return st;
}

mpce_status mpce_routes(mpce_engine *engine, const mpce_route_info **rows, size_t *count)
{
    if (!rows || !count)
        return mpce_error(MPCE_ERR_ARG, "mpce_routes: rows and count must not be NULL");
    mpce_engine *e;
    mpce_status st = mpce_engine_acquire(engine, &e);
    if (st != MPCE_OK)
        return st;
    const struct mpce_table *t = __atomic_load_n(&e->table, __ATOMIC_ACQUIRE);
    size_t n = 0;
    for (unsigned op = 0; op < MPCE_OP_COUNT; op++)
        n += mpce_op_routed((enum mpce_op_id)op)
                 ? MPCE_SIZE_CLASSES * mpce_variant_count(mpce_op_info[op].prim)
                 : 0;
    /* `order` lists every usable candidate, so each one's self-test decides
     * whether it is listed: run them all (once per engine). */
    for (unsigned op = 0; op < MPCE_OP_COUNT; op++)
        for (unsigned v = 0; v < mpce_variant_count(mpce_op_info[op].prim); v++)
            for (unsigned sc = 0; mpce_op_routed((enum mpce_op_id)op) && sc < MPCE_SIZE_CLASSES;
                 sc++) {
                const struct mpce_route_entry *en = &t->e[op][v][sc];
                struct mpce_slot *pinned =
                    en->pinned ? mpce_registry_find_named(e, en->pin_name) : NULL;
                if (pinned != NULL && mpce_slot_state(pinned) != MPCE_ST_SKIPPED)
                    mpce_registry_ensure_tested(e, pinned);
                for (unsigned i = 0; i < en->n; i++)
                    mpce_registry_ensure_tested(e, e->slots[en->cand[i]]);
            }
    pthread_mutex_lock(&e->lock);
    if (e->routes != NULL && e->routes_table == t && e->routes_generation == e->generation) {
        /* Nothing changed since the last snapshot: hand it out again
         * rather than keep a new copy per call. */
        *rows = e->routes;
        *count = e->routes_count;
        pthread_mutex_unlock(&e->lock);
        mpce_engine_unref(e);
        return MPCE_OK;
    }
    const size_t per_row = 2048;
    mpce_route_info *r = mpce_engine_keep(e, n * (sizeof(*r) + per_row) + 1);
    if (r == NULL) {
        st = mpce_error(MPCE_ERR_NOMEM, "out of memory listing routes");
    } else {
        struct text tx = {(char *)(r + n), 0, n * per_row + 1};
        size_t k = 0;
        for (unsigned op = 0; op < MPCE_OP_COUNT; op++) {
            if (!mpce_op_routed((enum mpce_op_id)op))
                continue;
            const mpce_primitive prim = mpce_op_info[op].prim;
            for (unsigned x = 0; x < MPCE_SIZE_CLASSES * mpce_variant_count(prim); x++, k++) {
                const unsigned v = x / MPCE_SIZE_CLASSES, sc = x % MPCE_SIZE_CLASSES;
                const struct mpce_route_entry *en = &t->e[op][v][sc];
                mpce_route_info *row = &r[k];
                row->op = mpce_op_info[op].name;
                row->variant = mpce_variant_name(prim, v);
                row->size_class = mpce_size_class_name(sc);
                row->source = en->source;
                if (en->pinned) {
                    /* A pin that cannot be used is an error at first use,
                     * never a route: show it as none. */
                    struct mpce_slot *s = NULL;
                    uint32_t values[MPCE_KNOB_MAX];
                    int has_knobs = 0;
                    char before[1024], why[600] = "";
                    snprintf(before, sizeof(before), "%s", mpce_last_error());
                    mpce_status kst =
                        mpce_registry_find_spec(e, en->pin_name, "", &s, values, &has_knobs);
                    if (kst != MPCE_OK)
                        snprintf(why, sizeof(why), "%s", s == NULL && kst == MPCE_ERR_NOIMPL
                                                             ? "no implementation of that name"
                                                             : mpce_last_error());
                    else if (s->prim != mpce_op_info[op].prim)
                        snprintf(why, sizeof(why), "%s is not one of the %s implementations",
                                 s->impl->name, mpce_primitive_name(mpce_op_info[op].prim));
                    else if (mpce_slot_state(s) != MPCE_ST_PASS)
                        snprintf(why, sizeof(why), "%s", s->reason[0] ? s->reason
                                                                      : "it failed its self-test");
                    else if (!mpce_registry_allowed(e, s))
                        snprintf(why, sizeof(why), "variable-time: set allow_variable_time = "
                                 "yes to use it");
                    (void)mpce_error(MPCE_OK, "%s", before); /* a listing changes nothing */
                    const int ok = why[0] == '\0';
                    row->impl = ok ? s->impl->name : "";
                    row->order = row->impl;
                    row->knobs = ok && has_knobs ? knob_text(&tx, s, values) : "";
                    if (!ok)
                        row->source = put(&tx, "%s: unusable: %.500s", en->source, why);
                    continue;
                }
                char order[1024];
                const char *first = usable_order(e, en->cand, en->n, order, sizeof(order));
                row->impl = first;
                row->order = put(&tx, "%s", order);
                if (en->crossover != 0 && en->above != NULL) {
                    /* The calls at or above the crossover have an order of
                     * their own; `order` is the smaller calls'. */
                    char above[1024];
                    usable_order(e, en->above, en->n, above, sizeof(above));
                    row->source = put(&tx, "%.1000s; calls of at least %llu work elements: %s",
                                      en->source, (unsigned long long)en->crossover,
                                      above[0] ? above : "(none usable)");
                }
                row->knobs = first[0] && en->knob_slot != NULL &&
                                     strcmp(en->knob_slot->impl->name, first) == 0
                                 ? knob_text(&tx, en->knob_slot, en->knobs)
                                 : "";
            }
        }
        *rows = r;
        *count = n;
        e->routes = r;
        e->routes_count = n;
        e->routes_table = t;
        e->routes_generation = e->generation;
    }
    pthread_mutex_unlock(&e->lock);
    mpce_engine_unref(e);
    return st;
}

mpce_status mpce_config_info(mpce_engine *engine, const char *const **files, size_t *nfiles,
                             const mpce_setting_info **settings, size_t *nsettings)
{
    if (!files || !nfiles || !settings || !nsettings)
        return mpce_error(MPCE_ERR_ARG, "mpce_config_info: files, nfiles, settings and "
                          "nsettings must not be NULL");
    mpce_engine *e;
    mpce_status st = mpce_engine_acquire(engine, &e);
    if (st != MPCE_OK)
        return st;
    const struct mpce_config *c = &e->cfg;
    pthread_mutex_lock(&e->lock);
    /* The configuration never changes after the engine starts: the rows are
     * filled once, and only read after (callers read them without the lock). */
    mpce_setting_info *s = (mpce_setting_info *)e->config_rows;
    if (s == NULL && (s = mpce_engine_keep(e, (c->n_settings + 1) * sizeof(*s))) != NULL) {
        for (size_t i = 0; i < c->n_settings; i++) {
            s[i].section = c->settings[i].section;
            s[i].key = c->settings[i].key;
            s[i].value = c->settings[i].value;
            s[i].source = c->settings[i].source;
        }
        e->config_rows = s;
    }
    if (s == NULL) {
        st = mpce_error(MPCE_ERR_NOMEM, "out of memory listing the configuration");
    } else {
        *files = (const char *const *)c->files;
        *nfiles = c->n_files;
        *settings = s;
        *nsettings = c->n_settings;
    }
    pthread_mutex_unlock(&e->lock);
    mpce_engine_unref(e);
    return st;
}
