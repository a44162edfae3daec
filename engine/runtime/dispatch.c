/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The dispatch table: for every operation, variant and size class, the order
 * in which "auto" tries implementations. The pick lives here and nowhere
 * else: an explicit pin (the most specific [pins] key or MPCENGINE_FORCE
 * entry) decides alone; then the selector's measured row, if one is current,
 * which reorders the implementations it measured among the places they hold
 * in priority order (an asynchronous one a format 2 row did not time keeps
 * its place), and where it measured a device implementation's crossover
 * inside the class keeps a second order for calls at or above it, that
 * implementation first; a device the row measured without a crossover goes
 * after every host implementation for the whole class; then priorities, with one rule of thumb where nothing was measured: an
 * accelerator ranks below every host implementation except for large calls,
 * where its launch cost is paid back.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "engine/runtime/knobs.h"
#include "engine/selector/selector.h"

/* Whether a should be tried before b for size class sc by priority. */
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
           mpce_registry_allowed(e, s) && !mpce_selector_blacklisted(e, s->module);
}

/* Where slot s stands in a measured row: its rank among the candidates that
 * ran correctly (the winner, the runner-up, then the others by median),
 * MEASURED_UNRANKED if the row does not rank it (it declined the tuning
 * shape, failed for a reason that is not a wrong answer, or is new to the
 * row), or MEASURED_BAD if it answered wrongly, crashed or hung there: then
 * "auto" never tries it for this row. The pins reader has checked that the
 * winner and runner-up are candidates that ran correctly. */
#define MEASURED_UNRANKED 100000
#define MEASURED_BAD (-1)
static int measured_rank(const struct mpce_pins_row *row, const struct mpce_slot *s)
{
    const char *name = s->impl->name;
    for (size_t i = 0; i < row->n_cands; i++) {
        const struct mpce_pins_cand *c = &row->cands[i];
        if (strcmp(c->impl, name) != 0)
            continue;
        const int ran = strcmp(c->status, "ok") == 0 || strcmp(c->status, "screened") == 0;
        if (ran && strcmp(row->winner, name) == 0)
            return 0;
        if (ran && strcmp(row->runner_up, name) == 0)
            return 1;
        if (ran) {
            int rank = 2; /* 2 + how many of the others beat it */
            for (size_t j = 0; j < row->n_cands; j++) {
                const struct mpce_pins_cand *o = &row->cands[j];
                if (j != i && o->median < c->median &&
                    (strcmp(o->status, "ok") == 0 || strcmp(o->status, "screened") == 0) &&
                    strcmp(o->impl, row->winner) != 0 && strcmp(o->impl, row->runner_up) != 0)
                    rank++;
            }
            return rank;
        }
        if (strcmp(c->status, "declined") == 0 || strcmp(c->status, "failed") == 0)
            return MEASURED_UNRANKED;
        return MEASURED_BAD;
    }
    return MEASURED_UNRANKED;
}

/* Whether the row measured s: the tuner times asynchronous (device)
 * implementations end to end on host memory since pins format 3; a row
 * that did not (format 2 declined them) leaves one its priority place. */
static int measurable(const struct mpce_pins_row *row, const struct mpce_slot *s)
{
    if (!(s->flags & MPCE_IMPL_ASYNC))
        return 1;
    for (size_t i = 0; i < row->n_cands; i++)
        if (strcmp(row->cands[i].impl, s->impl->name) == 0)
            return strcmp(row->cands[i].status, "ok") == 0 ||
                   strcmp(row->cands[i].status, "screened") == 0;
    return 0;
}

/* A measured row reorders only what it measured: the candidates are put in
 * priority order, then the places the measurable ones hold are refilled
 * with them in measured order (ties by priority). */
static void apply_row(const mpce_engine *e, const struct mpce_pins_row *row, uint16_t *cand,
                      unsigned n)
{
    uint16_t places[256], sorted[256];
    unsigned k = 0;
    for (unsigned i = 0; i < n && k < 256; i++)
        if (measurable(row, e->slots[cand[i]]))
            places[k++] = (uint16_t)i;
    for (unsigned i = 0; i < k; i++) {
        const struct mpce_slot *s = e->slots[cand[places[i]]];
        unsigned at = i;
        while (at > 0 && measured_rank(row, s) <
                             measured_rank(row, e->slots[sorted[at - 1]])) {
            sorted[at] = sorted[at - 1];
            at--;
        }
        sorted[at] = cand[places[i]];
    }
    for (unsigned i = 0; i < k; i++)
        cand[places[i]] = sorted[i];
}

static int host_impl(const struct mpce_slot *s)
{
    return !(s->flags & MPCE_IMPL_ASYNC) && !(s->memory & MPCE_MEM_DEVICE);
}

/* A row's crossover: above gets cand's order with the crossover's
 * implementation first; cand keeps its order with that implementation
 * moved after the last host one, so that calls below the crossover go to
 * the best host implementation first. Nothing (0) when the implementation
 * is not a candidate here (gone, blacklisted, not allowed) or is a host
 * one (not asynchronous, not on device memory: a crafted row must not
 * reorder the hosts). */
static int apply_crossover(const mpce_engine *e, const struct mpce_pins_row *row,
                           struct mpce_route_entry *r, uint16_t *cand, uint16_t *above)
{
    if (row->crossover == 0 || row->crossover_impl == NULL || !row->crossover_impl[0])
        return 0;
    unsigned at = r->n;
    for (unsigned i = 0; i < r->n; i++)
        if (strcmp(e->slots[cand[i]]->impl->name, row->crossover_impl) == 0)
            at = i;
    if (at == r->n || host_impl(e->slots[cand[at]]))
        return 0;
    const uint16_t dev = cand[at];
    above[0] = dev;
    for (unsigned i = 0, k = 1; i < r->n; i++)
        if (i != at)
            above[k++] = cand[i];
    unsigned last_host = at;
    for (unsigned i = at + 1; i < r->n; i++)
        if (host_impl(e->slots[cand[i]]))
            last_host = i;
    for (unsigned i = at; i < last_host; i++)
        cand[i] = cand[i + 1];
    cand[last_host] = dev;
    r->above = above;
    r->crossover = row->crossover;
    return 1;
}

/* A row without a crossover that applies here (none was found: the device
 * lost at the class's top, could not run there or was not searched): the
 * device implementations it measured go after the last host one, so a
 * device that won at the row's shape alone does not serve the whole class.
 * Those it did not measure (format 2) keep their priority place. */
static void hosts_first(const mpce_engine *e, const struct mpce_pins_row *row, uint16_t *cand,
                        unsigned n)
{
    uint16_t rest[256], dev[256];
    unsigned nr = 0, nd = 0;
    if (n > 256)
        return;
    for (unsigned i = 0; i < n; i++) {
        const struct mpce_slot *s = e->slots[cand[i]];
        if (!host_impl(s) && measured_rank(row, s) < MEASURED_UNRANKED)
            dev[nd++] = cand[i];
        else
            rest[nr++] = cand[i];
    }
    if (nd == 0)
        return;
    unsigned after = 0; /* how many of rest go before the devices */
    for (unsigned i = 0; i < nr; i++)
        if (host_impl(e->slots[rest[i]]))
            after = i + 1;
    unsigned k = 0;
    for (unsigned i = 0; i < after; i++)
        cand[k++] = rest[i];
    for (unsigned i = 0; i < nd; i++)
        cand[k++] = dev[i];
    for (unsigned i = after; i < nr; i++)
        cand[k++] = rest[i];
}

/* The row's knob values for its winner. They were measured with the
 * winner's own knob table, which the row's currency check ties to the
 * module file; values that still do not fit are left out, loudly. */
static void row_knobs(mpce_engine *e, const struct mpce_pins_row *row,
                      struct mpce_route_entry *r)
{
    if (row->knobs == NULL || row->knobs[0] == '\0' || row->winner[0] == '\0')
        return;
    struct mpce_slot *w = mpce_registry_find(e, row->winner);
    if (w == NULL || w->n_knobs == 0)
        return;
    char what[160];
    snprintf(what, sizeof(what), "pins row %s: ", row->key);
    if (mpce_knobs_values(w, row->knobs, what, r->knobs) != MPCE_OK) {
        mpce_log(&e->log, MPCE_LOG_WARNING, NULL, "%s; using its knobs' defaults",
                 mpce_last_error());
        return;
    }
    r->knob_slot = w;
}

/* The source string of a measured entry, kept in the table. */
static const char *row_source(char **strings, size_t *used, size_t *cap, const char *path,
                              const char *date, const struct mpce_pins_row *row)
{
    char buf[1024];
    char cross[160] = "";
    if (row->crossover != 0 && row->crossover_impl && row->crossover_impl[0])
        snprintf(cross, sizeof(cross), "; %.64s first from %llu work elements (its measured "
                 "crossover)", row->crossover_impl, (unsigned long long)row->crossover);
    int n = snprintf(buf, sizeof(buf), "measured: %s in %s (%s): %s%s", row->key, path, date,
                     row->verdict, cross);
    if (n < 0)
        return "measured";
    size_t len = (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
    if (*used + len + 1 > *cap) {
        /* Entries keep pointers into the buffer: it is sized once, below. */
        return "measured";
    }
    char *at = *strings + *used;
    memcpy(at, buf, len);
    at[len] = '\0';
    *used += len + 1;
    return at;
}

mpce_status mpce_dispatch_build(mpce_engine *e)
{
    struct mpce_table *t = calloc(1, sizeof(*t));
    size_t per = e->n_slots ? e->n_slots : 1;
    const size_t entries = (size_t)MPCE_OP_COUNT * MPCE_VARIANTS * MPCE_SIZE_CLASSES;
    uint16_t *pool = calloc(entries * per, sizeof(*pool));
    uint16_t *pool_above = calloc(entries * per, sizeof(*pool_above));
    size_t cap = 0, used = 0;
    for (unsigned op = 0; op < MPCE_OP_COUNT; op++)
        for (unsigned v = 0; v < MPCE_VARIANTS; v++)
            for (unsigned sc = 0; sc < MPCE_SIZE_CLASSES; sc++)
                cap += mpce_selector_row(e, (enum mpce_op_id)op, v, sc, NULL, NULL) ? 1024 : 0;
    char *strings = cap ? malloc(cap) : NULL;
    if (!t || !pool || !pool_above || (cap && !strings)) {
        free(t);
        free(pool);
        free(pool_above);
        free(strings);
        return mpce_error(MPCE_ERR_NOMEM, "out of memory building the dispatch table");
    }
    t->pool = pool;
    t->pool_above = pool_above;
    t->sources = strings;
    for (unsigned op = 0; op < MPCE_OP_COUNT; op++) {
        if (!mpce_op_routed((enum mpce_op_id)op))
            continue;
        const mpce_primitive prim = mpce_op_info[op].prim;
        for (unsigned v = 0; v < MPCE_VARIANTS; v++)
            for (unsigned sc = 0; sc < MPCE_SIZE_CLASSES; sc++) {
                struct mpce_route_entry *r = &t->e[op][v][sc];
                const size_t base =
                    ((size_t)(op * MPCE_VARIANTS + v) * MPCE_SIZE_CLASSES + sc) * per;
                uint16_t *cand = pool + base;
                r->cand = cand;
                const struct mpce_pin *pin =
                    mpce_config_pin(&e->cfg, mpce_op_info[op].name, sc);
                if (pin != NULL) {
                    r->pinned = 1;
                    r->pin_name = pin->name;
                    r->source = pin->source;
                    continue;
                }
                const char *path = NULL, *date = NULL;
                const struct mpce_pins_row *row =
                    mpce_selector_row(e, (enum mpce_op_id)op, v, sc, &path, &date);
                r->source = row ? row_source(&strings, &used, &cap, path, date, row)
                                : "priority";
                for (size_t i = 0; i < e->n_slots; i++) {
                    const struct mpce_slot *s = e->slots[i];
                    if (!candidate(e, s, prim))
                        continue;
                    if (row && measured_rank(row, s) == MEASURED_BAD)
                        continue;
                    unsigned at = r->n++;
                    while (at > 0 && before(s, e->slots[cand[at - 1]], sc)) {
                        cand[at] = cand[at - 1];
                        at--;
                    }
                    cand[at] = (uint16_t)i;
                }
                if (row) {
                    apply_row(e, row, cand, r->n);
                    if (!apply_crossover(e, row, r, cand, pool_above + base))
                        hosts_first(e, row, cand, r->n);
                    row_knobs(e, row, r);
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
        free(t->pool_above);
        free(t->sources);
        free(t);
        t = older;
    }
    e->table = NULL;
}
