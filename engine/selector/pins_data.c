/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pins data in memory (pins.h): deep copies in, frees, and the lookup
 * of a row by key. Nothing here touches a file.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/selector/pins.h"

/* Copies turn NULL strings into "": the file cannot tell them apart. */
static int copy_str(char **dst, const char *src)
{
    *dst = strdup(src ? src : "");
    return *dst ? 0 : -1;
}

static void module_free(struct mpce_pins_module *m)
{
    free(m->plugin);
    free(m->path);
    free(m->sha256);
    free(m->devices);
    memset(m, 0, sizeof(*m));
}

static int module_copy(struct mpce_pins_module *d, const struct mpce_pins_module *s)
{
    memset(d, 0, sizeof(*d));
    d->size = s->size;
    d->mtime = s->mtime;
    if (copy_str(&d->plugin, s->plugin) || copy_str(&d->path, s->path) ||
        copy_str(&d->sha256, s->sha256) || copy_str(&d->devices, s->devices)) {
        module_free(d);
        return -1;
    }
    return 0;
}

static void cand_free(struct mpce_pins_cand *c)
{
    free(c->impl);
    free(c->status);
    free(c->why);
    memset(c, 0, sizeof(*c));
}

static void row_free(struct mpce_pins_row *r)
{
    free(r->key);
    free(r->shape);
    free(r->winner);
    free(r->runner_up);
    free(r->verdict);
    free(r->slice_verdict);
    free(r->knobs);
    free(r->knob_verdict);
    free(r->crossover_impl);
    free(r->crossover_verdict);
    for (size_t i = 0; r->plugins && i < r->n_plugins; i++)
        free(r->plugins[i]);
    free(r->plugins);
    for (size_t i = 0; r->cands && i < r->n_cands; i++)
        cand_free(&r->cands[i]);
    free(r->cands);
    memset(r, 0, sizeof(*r));
}

static int row_copy(struct mpce_pins_row *d, const struct mpce_pins_row *s)
{
    memset(d, 0, sizeof(*d));
    if (copy_str(&d->key, s->key) || copy_str(&d->shape, s->shape) ||
        copy_str(&d->winner, s->winner) || copy_str(&d->runner_up, s->runner_up) ||
        copy_str(&d->verdict, s->verdict) || copy_str(&d->slice_verdict, s->slice_verdict) ||
        copy_str(&d->knobs, s->knobs) || copy_str(&d->knob_verdict, s->knob_verdict) ||
        copy_str(&d->crossover_impl, s->crossover_impl) ||
        copy_str(&d->crossover_verdict, s->crossover_verdict))
        goto fail;
    d->slice_min = s->slice_min;
    d->crossover = s->crossover;
    if (s->n_plugins) {
        if (!(d->plugins = calloc(s->n_plugins, sizeof(*d->plugins))))
            goto fail;
        d->n_plugins = s->n_plugins;
        for (size_t i = 0; i < s->n_plugins; i++)
            if (copy_str(&d->plugins[i], s->plugins[i]))
                goto fail;
    }
    if (s->n_cands) {
        if (!(d->cands = calloc(s->n_cands, sizeof(*d->cands))))
            goto fail;
        d->n_cands = s->n_cands;
        for (size_t i = 0; i < s->n_cands; i++) {
            const struct mpce_pins_cand *sc = &s->cands[i];
            struct mpce_pins_cand *dc = &d->cands[i];
            dc->median = sc->median;
            dc->spread = sc->spread;
            if (copy_str(&dc->impl, sc->impl) || copy_str(&dc->status, sc->status) ||
                copy_str(&dc->why, sc->why))
                goto fail;
        }
    }
    return 0;
fail:
    row_free(d);
    return -1;
}

static void blacklist_free(struct mpce_pins_blacklist *b)
{
    free(b->path);
    free(b->reason);
    memset(b, 0, sizeof(*b));
}

static int blacklist_copy(struct mpce_pins_blacklist *d, const struct mpce_pins_blacklist *s)
{
    memset(d, 0, sizeof(*d));
    d->size = s->size;
    d->mtime = s->mtime;
    if (copy_str(&d->path, s->path) || copy_str(&d->reason, s->reason)) {
        blacklist_free(d);
        return -1;
    }
    return 0;
}

void mpce_pins_free(struct mpce_pins *p)
{
    if (!p)
        return;
    free(p->engine_version);
    free(p->date);
    free(p->effort);
    free(p->cpu);
    free(p->policy);
    for (size_t i = 0; p->modules && i < p->n_modules; i++)
        module_free(&p->modules[i]);
    free(p->modules);
    for (size_t i = 0; p->rows && i < p->n_rows; i++)
        row_free(&p->rows[i]);
    free(p->rows);
    for (size_t i = 0; p->blacklist && i < p->n_blacklist; i++)
        blacklist_free(&p->blacklist[i]);
    free(p->blacklist);
    memset(p, 0, sizeof(*p));
}

int mpce_pins_set_header(struct mpce_pins *p, const char *engine_version, const char *date,
                         const char *effort, const char *cpu)
{
    char *v = NULL, *d = NULL, *e = NULL, *c = NULL;
    if (copy_str(&v, engine_version) || copy_str(&d, date) || copy_str(&e, effort) ||
        copy_str(&c, cpu)) {
        free(v);
        free(d);
        free(e);
        free(c);
        return -1;
    }
    free(p->engine_version);
    free(p->date);
    free(p->effort);
    free(p->cpu);
    p->engine_version = v;
    p->date = d;
    p->effort = e;
    p->cpu = c;
    p->format = MPCE_PINS_FORMAT;
    return 0;
}

int mpce_pins_set_policy(struct mpce_pins *p, const char *policy)
{
    char *c;
    if (copy_str(&c, policy))
        return -1;
    free(p->policy);
    p->policy = c;
    return 0;
}

int mpce_pins_add_module(struct mpce_pins *p, const struct mpce_pins_module *m)
{
    struct mpce_pins_module copy;
    if (module_copy(&copy, m))
        return -1;
    struct mpce_pins_module *tmp = realloc(p->modules, (p->n_modules + 1) * sizeof(*tmp));
    if (!tmp) {
        module_free(&copy);
        return -1;
    }
    p->modules = tmp;
    p->modules[p->n_modules++] = copy;
    return 0;
}

int mpce_pins_add_row(struct mpce_pins *p, const struct mpce_pins_row *row)
{
    struct mpce_pins_row copy;
    if (row_copy(&copy, row))
        return -1;
    struct mpce_pins_row *tmp = realloc(p->rows, (p->n_rows + 1) * sizeof(*tmp));
    if (!tmp) {
        row_free(&copy);
        return -1;
    }
    p->rows = tmp;
    p->rows[p->n_rows++] = copy;
    return 0;
}

int mpce_pins_add_blacklist(struct mpce_pins *p, const struct mpce_pins_blacklist *b)
{
    struct mpce_pins_blacklist copy;
    if (blacklist_copy(&copy, b))
        return -1;
    struct mpce_pins_blacklist *tmp =
        realloc(p->blacklist, (p->n_blacklist + 1) * sizeof(*tmp));
    if (!tmp) {
        blacklist_free(&copy);
        return -1;
    }
    p->blacklist = tmp;
    p->blacklist[p->n_blacklist++] = copy;
    return 0;
}

/* The index of the row with key, or p->n_rows. */
static size_t row_index(const struct mpce_pins *p, const char *key)
{
    for (size_t i = 0; i < p->n_rows; i++)
        if (p->rows[i].key && strcmp(p->rows[i].key, key) == 0)
            return i;
    return p->n_rows;
}

const struct mpce_pins_row *mpce_pins_find_row(const struct mpce_pins *p, const char *key)
{
    if (!p || !key)
        return NULL;
    size_t i = row_index(p, key);
    return i < p->n_rows ? &p->rows[i] : NULL;
}

int mpce_pins_put_row(struct mpce_pins *p, const struct mpce_pins_row *row)
{
    size_t i = row_index(p, row->key ? row->key : "");
    if (i == p->n_rows)
        return mpce_pins_add_row(p, row);
    struct mpce_pins_row copy;
    if (row_copy(&copy, row))
        return -1;
    row_free(&p->rows[i]);
    p->rows[i] = copy;
    return 0;
}
