/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The dispatch table: for every operation and size class, the order in which
 * "auto" tries implementations. The pick lives here and nowhere else: an
 * explicit pin (the most specific [pins] key or MPCENGINE_FORCE entry)
 * decides alone; otherwise the priorities do, with one rule of thumb until
 * the selector measures: an accelerator ranks below every host
 * implementation except for large calls, where its launch cost is paid back.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"

/* Whether a should be tried before b for size class sc. */
static int before(const struct mpce_slot *a, const struct mpce_slot *b, unsigned sc)
{
    const unsigned large = MPCE_SIZE_CLASSES - 1u;
    int da = a->impl_class == MPCE_CLASS_ACCEL && sc != large;
    int db = b->impl_class == MPCE_CLASS_ACCEL && sc != large;
    if (da != db)
        return db;
    if (a->priority != b->priority)
        return a->priority > b->priority;
    return a->index < b->index; /* registration order: built-in soft first */
}

static int candidate(const mpce_engine *e, const struct mpce_slot *s, mpce_primitive prim)
{
    return s->prim == prim && mpce_slot_state(s) != MPCE_ST_SKIPPED &&
           mpce_registry_allowed(e, s);
}

mpce_status mpce_dispatch_build(mpce_engine *e)
{
    struct mpce_table *t = calloc(1, sizeof(*t));
    size_t per = e->n_slots ? e->n_slots : 1;
    uint16_t *pool = calloc((size_t)MPCE_OP_COUNT * MPCE_SIZE_CLASSES * per, sizeof(*pool));
    if (!t || !pool) {
        free(t);
        free(pool);
        return mpce_error(MPCE_ERR_NOMEM, "out of memory building the dispatch table");
    }
    t->pool = pool;
    for (unsigned op = 0; op < MPCE_OP_COUNT; op++) {
        if (!mpce_op_routed((enum mpce_op_id)op))
            continue;
        const mpce_primitive prim = mpce_op_info[op].prim;
        for (unsigned sc = 0; sc < MPCE_SIZE_CLASSES; sc++) {
            struct mpce_route_entry *r = &t->e[op][sc];
            uint16_t *cand = pool + ((size_t)op * MPCE_SIZE_CLASSES + sc) * per;
            r->cand = cand;
            const struct mpce_pin *pin = mpce_config_pin(&e->cfg, mpce_op_info[op].name, sc);
            if (pin != NULL) {
                r->pinned = 1;
                r->pin_name = pin->name;
                r->source = pin->source;
                continue;
            }
            r->source = "priority";
            for (size_t i = 0; i < e->n_slots; i++) {
                const struct mpce_slot *s = e->slots[i];
                if (!candidate(e, s, prim))
                    continue;
                unsigned at = r->n++;
                while (at > 0 && before(s, e->slots[cand[at - 1]], sc)) {
                    cand[at] = cand[at - 1];
                    at--;
                }
                cand[at] = (uint16_t)i;
            }
        }
    }
    t->older = e->table;
    __atomic_store_n(&e->table, t, __ATOMIC_RELEASE);
    return MPCE_OK;
}

void mpce_dispatch_free(mpce_engine *e)
{
    struct mpce_table *t = e->table;
    while (t != NULL) {
        struct mpce_table *older = t->older;
        free(t->pool);
        free(t);
        t = older;
    }
    e->table = NULL;
}
