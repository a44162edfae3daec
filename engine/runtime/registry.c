/* SPDX-License-Identifier: Apache-2.0 */
/* Modules, devices and implementation slots of an engine, and their
 * self-test bookkeeping. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/runtime/loader.h"
#include "engine/verify/selftest.h"

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

mpce_status mpce_registry_add_device(mpce_engine *e, struct mpce_module *m,
                                     const struct mpce_device *dev)
{
    if (e->n_devices == e->cap_devices) {
        size_t cap = e->cap_devices ? e->cap_devices * 2 : 4;
        struct mpce_devrec **tmp = realloc(e->devices, cap * sizeof(*tmp));
        if (!tmp)
            return mpce_error(MPCE_ERR_NOMEM, "out of memory registering devices");
        e->devices = tmp;
        e->cap_devices = cap;
    }
    struct mpce_devrec *r = calloc(1, sizeof(*r));
    if (!r)
        return mpce_error(MPCE_ERR_NOMEM, "out of memory registering devices");
    e->devices[e->n_devices++] = r;
    r->name = dev->name;
    /* An older minor's descriptor is shorter: what it lacks stays NULL. */
    size_t have = dev->struct_size < sizeof(r->ops) ? dev->struct_size : sizeof(r->ops);
    memcpy(&r->ops, dev, have);
    r->module = m;
    return MPCE_OK;
}

const struct mpce_devrec *mpce_registry_device(const mpce_engine *e, const char *name)
{
    for (size_t i = 0; i < e->n_devices; i++)
        if (strcmp(e->devices[i]->name, name) == 0)
            return e->devices[i];
    return NULL;
}

int mpce_registry_valid_name(const char *s)
{
    size_t len = s ? strnlen(s, MPCE_NAME_MAX + 1) : 0;
    if (len == 0 || len > MPCE_NAME_MAX)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.' || c == '+'))
            return 0;
    }
    return 1;
}

mpce_status mpce_registry_add_slot(mpce_engine *e, struct mpce_module *m,
                                   const struct mpce_impl *impl, const union mpce_ops *ops,
                                   const struct mpce_devrec *dev, int priority,
                                   enum mpce_selftest_state state, const char *reason,
                                   int broken, const char *note)
{
    if (e->n_slots >= UINT16_MAX)
        return mpce_error(MPCE_ERR_PLUGIN, "more than %u implementations", UINT16_MAX);
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
    s->index = (unsigned)e->n_slots;
    s->impl = impl;
    s->ops = *ops;
    s->module = m;
    s->device = dev;
    /* A refused implementation may name a primitive that does not exist:
     * keep it out of every table. */
    s->prim = impl->primitive < MPCE_PRIM_COUNT ? (mpce_primitive)impl->primitive
                                                : MPCE_PRIM_COUNT;
    s->impl_class = impl->impl_class;
    s->priority = priority;
    s->flags = impl->flags;
    s->memory = impl->memory;
    s->state = state;
    snprintf(s->reason, sizeof(s->reason), "%s", reason ? reason : "");
    s->broken = broken;
    snprintf(s->note, sizeof(s->note), "%s", note ? note : "");
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
    /* Modules last: fini and dlclose make every op pointer above invalid. */
    for (size_t i = e->n_modules; i-- > 0;)
        mpce_loader_free_module(e->modules[i]);
    free(e->modules);
    for (size_t i = 0; i < e->n_devices; i++)
        free(e->devices[i]);
    free(e->devices);
    e->slots = NULL;
    e->modules = NULL;
    e->devices = NULL;
    e->n_slots = e->n_modules = e->n_devices = 0;
}

int mpce_registry_allowed(const mpce_engine *e, const struct mpce_slot *s)
{
    return !(s->flags & MPCE_IMPL_VARIABLE_TIME) || e->cfg.allow_variable_time;
}

/* Run the self-test of an untested slot; e->lock held. */
static void test_locked(mpce_engine *e, struct mpce_slot *s)
{
    if (mpce_slot_state(s) != MPCE_ST_UNTESTED)
        return;
    char why[sizeof(s->reason)];
    /* The test runs inside whatever call needed it; what its records leave
     * in the thread's error detail (a ctx_new that refused one) must not
     * outlive it: its verdict goes to the slot's reason. */
    char detail[1024];
    snprintf(detail, sizeof(detail), "%s", mpce_last_error());
    int rc = mpce_selftest_slot(s, why, sizeof(why)), ok = rc == 0;
    mpce_error(MPCE_OK, "%s", detail);
    if (rc == MPCE_SELFTEST_NO_MEMORY) {
        /* No verdict: the slot stays untested, and the next call that
         * needs it tries again. */
        snprintf(s->reason, sizeof(s->reason), "its self-test could not run: %.290s", why);
        mpce_log(&e->log, MPCE_LOG_WARNING, s->module->name, "%s: %s", s->impl->name,
                 s->reason);
        return;
    }
    if (ok) {
        s->reason[0] = '\0';
    } else {
        snprintf(s->reason, sizeof(s->reason), "self-test failed: %.290s", why);
        mpce_log(&e->log, MPCE_LOG_ERROR, s->module->name, "%s failed its self-test: %s",
                 s->impl->name, why);
    }
    __atomic_store_n(&s->state, ok ? MPCE_ST_PASS : MPCE_ST_FAIL, __ATOMIC_RELEASE);
    e->generation++;
}

void mpce_registry_ensure_tested(mpce_engine *e, struct mpce_slot *s)
{
    if (mpce_slot_state(s) != MPCE_ST_UNTESTED)
        return;
    pthread_mutex_lock(&e->lock);
    test_locked(e, s);
    pthread_mutex_unlock(&e->lock);
}

mpce_status mpce_registry_usable(mpce_engine *e, struct mpce_slot *s, const char *what)
{
    if (mpce_slot_state(s) == MPCE_ST_SKIPPED)
        return mpce_error(MPCE_ERR_NOIMPL, "%simplementation '%s' is skipped: %s", what,
                          s->impl->name, s->reason);
    if (!mpce_registry_allowed(e, s))
        return mpce_error(MPCE_ERR_NOIMPL, "%s%s is variable-time: set allow_variable_time = "
                          "yes in engine.conf to use it", what, s->impl->name);
    mpce_registry_ensure_tested(e, s);
    if (mpce_slot_state(s) == MPCE_ST_UNTESTED)
        return mpce_error(MPCE_ERR_NOMEM, "%simplementation '%s' cannot be used yet: %s; "
                          "free memory and call again", what, s->impl->name, s->reason);
    if (mpce_slot_state(s) != MPCE_ST_PASS)
        return mpce_error(MPCE_ERR_NOIMPL, "%simplementation '%s' is not selectable: %s: see "
                          "`mpcengine selftest`", what, s->impl->name, s->reason);
    return MPCE_OK;
}

mpce_status mpce_registry_strict_check(mpce_engine *e)
{
    for (size_t i = 0; i < e->n_modules; i++) {
        const struct mpce_module *m = e->modules[i];
        if (!m->broken)
            continue;
        if (m->skipped)
            return mpce_error(MPCE_ERR_PLUGIN, "strict = yes: module %s could not be used: %s: "
                              "remove or fix it, or set strict = no", m->path, m->reason);
        for (size_t j = 0; j < e->n_slots; j++) {
            const struct mpce_slot *s = e->slots[j];
            if (s->module == m && s->broken)
                return mpce_error(MPCE_ERR_PLUGIN, "strict = yes: module %s: implementation %s "
                                  "was refused: %s: fix the plugin, or set strict = no",
                                  m->path, s->impl->name, s->reason);
        }
        return mpce_error(MPCE_ERR_PLUGIN, "strict = yes: module %s: a device was refused: %s: "
                          "fix the plugin, or set strict = no", m->path,
                          m->n_device_faults ? m->device_faults[0].why : "see the log");
    }
    /* Every self-test runs (the listing shows them all), and the later ones
     * may set error details of their own: the first failure is reported. */
    const struct mpce_slot *first = NULL;
    pthread_mutex_lock(&e->lock);
    for (size_t i = 0; i < e->n_slots; i++) {
        struct mpce_slot *s = e->slots[i];
        test_locked(e, s);
        if (first == NULL && mpce_slot_state(s) == MPCE_ST_FAIL)
            first = s;
    }
    pthread_mutex_unlock(&e->lock);
    if (first != NULL)
        return mpce_error(MPCE_ERR_SELFTEST, "strict = yes: implementation %s (plugin %s, %s) "
                          "%s: remove or fix the plugin, or set strict = no",
                          first->impl->name, first->module->name, first->module->path,
                          first->reason);
    return MPCE_OK;
}
