/*
 * mpce_bench_run: for each selected row, gather the candidates (every
 * selectable implementation of the op's primitive, the baselines, the
 * peers), measure them side by side, and report one row per candidate with
 * its ratio to the row's baseline.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/bench.h"
#include "engine/engine.h"

#define MAX_CANDS 64
#define MAX_SKIPS 32

/* Everything one row needs; candidates and skipped notes in print order. */
struct row {
    mpce_engine *e;
    const mpce_bench_options *o;
    const mpce_bench_peer *peers;
    size_t n_peers;
    struct mpce_bench_shape s;
    struct mpce_bench_fixture *f;
    struct mpce_bench_cand c[MAX_CANDS];
    size_t n;
    struct {
        char impl[96];
        char note[400];
    } skip[MAX_SKIPS];
    size_t n_skip;
    int matched;                 /* a candidate is the one --impl names, or no
                                    --impl: the row is worth measuring */
    char missing_baseline[300];  /* why the baseline is absent, if it is */
};

static void skip(struct row *r, const char *impl, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void skip(struct row *r, const char *impl, const char *fmt, ...)
{
    if (r->n_skip == MAX_SKIPS)
        return;
    va_list ap;
    va_start(ap, fmt);
    snprintf(r->skip[r->n_skip].impl, sizeof(r->skip[0].impl), "%s", impl);
    vsnprintf(r->skip[r->n_skip].note, sizeof(r->skip[0].note), fmt, ap);
    va_end(ap);
    r->n_skip++;
}

static struct mpce_bench_cand *next_cand(struct row *r)
{
    if (r->n == MAX_CANDS)
        return NULL;
    struct mpce_bench_cand *c = &r->c[r->n];
    memset(c, 0, sizeof(*c));
    c->baseline = -1;
    return c;
}

static int find(const struct row *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->c[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* The name every candidate of a row is compared with; NULL where each
 * candidate has its own (DPF floors, thread scaling). */
static const char *baseline_name(const struct mpce_bench_shape *s)
{
    if (s->threads > 1 || s->prim == MPCE_PRIM_DPF)
        return NULL;
    switch (s->prim) {
    case MPCE_PRIM_PRG:
        return strcmp(s->op, "prg.ctr") == 0 ? "openssl-evp-aes-128-ctr"
                                             : "openssl-evp-aes-128-ecb";
    case MPCE_PRIM_NTT:
        return s->q == MPCE_BENCH_Q60 ? "ntl" : "ntt-soft";
    default:
        return "lpn-soft";
    }
}

static int wanted(const struct row *r, const char *name, const char *base)
{
    const char *only = r->o->impl;
    return !only || strcmp(only, name) == 0 || (base && strcmp(base, name) == 0);
}

static int selectable(mpce_engine *e, mpce_primitive prim, const char *name)
{
    int ok = mpce_pick(e, prim, name) != NULL;
    mpce_error_clear();
    return ok;
}

/* The AES floor of a DPF candidate: the highest-priority selectable PRG of
 * the same plugin, so a backend is compared with its own AES. */
static int add_floor(struct row *r, const struct mpce_slot *dpf)
{
    const struct mpce_slot *best = NULL;
    for (size_t i = 0; i < r->e->n_slots; i++) {
        const struct mpce_slot *s = r->e->slots[i];
        if (s->impl->primitive == MPCE_PRIM_PRG && strcmp(s->plugin, dpf->plugin) == 0 &&
            (!best || s->impl->priority > best->impl->priority) &&
            selectable(r->e, MPCE_PRIM_PRG, s->impl->name))
            best = s;
    }
    if (!best)
        return -1;
    char name[96];
    snprintf(name, sizeof(name), "aes-floor:%s", best->impl->name);
    int at = find(r, name);
    if (at >= 0)
        return at;
    struct mpce_bench_cand *c = next_cand(r);
    if (!c)
        return -1;
    if (mpce_bench_floor_cand(best->impl, &r->s, r->f, c) != MPCE_OK) {
        skip(r, name, "%s", mpce_last_error());
        return -1;
    }
    return (int)r->n++;
}

static void add_impls(struct row *r, const char *base)
{
    for (size_t i = 0; i < r->e->n_slots; i++) {
        const struct mpce_slot *slot = r->e->slots[i];
        const char *name = slot->impl->name;
        if (slot->impl->primitive != (uint32_t)r->s.prim || !wanted(r, name, base))
            continue;
        if (!selectable(r->e, r->s.prim, name)) {
            if (r->o->impl && strcmp(r->o->impl, name) == 0)
                skip(r, name, "not selectable: %s", slot->reason);
            continue;
        }
        struct mpce_bench_cand *c = next_cand(r);
        if (!c)
            return;
        if (mpce_bench_impl_cand(slot->impl, &r->s, r->f, c) != MPCE_OK) {
            skip(r, name, "%s", mpce_last_error());
            continue;
        }
        size_t at = r->n++;
        if (!r->o->impl || strcmp(r->o->impl, name) == 0)
            r->matched = 1;
        if (r->s.prim == MPCE_PRIM_DPF) {
            int fl = add_floor(r, slot);
            r->c[at].baseline = fl;
            if (fl < 0 && !r->c[at].note[0])
                snprintf(r->c[at].note, sizeof(r->c[at].note), "no PRG of plugin %s for "
                         "the AES floor", slot->plugin);
        }
    }
}

static void add_peer_list(struct row *r, const mpce_bench_peer *p, size_t count,
                          const char *base)
{
    for (size_t i = 0; i < count; i++, p++) {
        if (p->struct_size < sizeof(mpce_bench_peer) || !p->name || !p->op ||
            strcmp(p->op, r->s.op) != 0 || !wanted(r, p->name, base) || find(r, p->name) >= 0)
            continue;
        if (!p->run) {
            if (base && strcmp(base, p->name) == 0)
                snprintf(r->missing_baseline, sizeof(r->missing_baseline), "%s",
                         p->note ? p->note : "not available");
            continue;
        }
        struct mpce_bench_cand *c = next_cand(r);
        if (!c || mpce_bench_peer_cand(p, &r->s, c) != 0)
            continue;
        r->n++;
        if (!r->o->impl || strcmp(r->o->impl, p->name) == 0)
            r->matched = 1;
    }
}

/* What "auto" runs for this shape: its first choice, or the first of its
 * fallbacks whose state can be made for the shape (as mpce_dispatch does). */
static const char *auto_impl(struct row *r)
{
    const struct mpce_slot *list[33];
    list[0] = mpce_pick(r->e, r->s.prim, NULL);
    if (!list[0])
        return NULL;
    size_t n = 1 + mpce_pick_fallbacks(r->e, r->s.prim, NULL, list[0], list + 1, 32);
    for (size_t i = 0; i < n; i++) {
        struct mpce_bench_cand trial;
        memset(&trial, 0, sizeof(trial));
        if (mpce_bench_impl_cand(list[i]->impl, &r->s, r->f, &trial) == MPCE_OK) {
            trial.teardown(trial.state);
            return list[i]->impl->name;
        }
    }
    mpce_error(MPCE_ERR_NOIMPL, "no %s implementation serves this shape",
               mpce_primitive_name(r->s.prim));
    return NULL;
}

/* threads = 1 and threads = T through the public API, the same
 * implementation ("auto"'s choice for the shape unless one is named). */
static void add_thread_pair(struct row *r)
{
    const char *impl = r->o->impl;
    if (impl) {
        struct mpce_slot *s = mpce_registry_find(r->e, impl);
        if (!s || s->impl->primitive != (uint32_t)r->s.prim)
            return;
    } else {
        impl = auto_impl(r);
        if (!impl) {
            skip(r, "auto", "%s", mpce_last_error());
            return;
        }
    }
    r->matched = 1;
    /* The threads=1 row shows its own shape. */
    char one[128];
    const char *t = strstr(r->s.text, "threads=");
    int pre = t ? (int)(t - r->s.text) : (int)strlen(r->s.text);
    const char *rest = t ? strchr(t, ',') : NULL;
    snprintf(one, sizeof(one), "%.*sthreads=1%s", pre, r->s.text, rest ? rest : "");
    unsigned counts[2] = {1, (unsigned)r->s.threads};
    for (int k = 0; k < 2; k++) {
        struct mpce_bench_cand *c = next_cand(r);
        if (!c)
            return;
        if (mpce_bench_api_cand(r->e, impl, counts[k], &r->s, r->f, c) != MPCE_OK) {
            skip(r, impl, "%s", mpce_last_error());
            return;
        }
        if (k == 0)
            snprintf(c->shape, sizeof(c->shape), "%s", one);
        else
            c->baseline = 0;
        r->n++;
    }
}

static int emit(struct row *r, mpce_bench_row_fn fn, void *arg)
{
    const char *base = baseline_name(&r->s);
    int bi = base ? find(r, base) : -1;
    for (size_t i = 0; i < r->n; i++) {
        struct mpce_bench_cand *c = &r->c[i];
        mpce_bench_row row;
        memset(&row, 0, sizeof(row));
        row.op = r->s.op;
        row.impl = c->name;
        row.shape = c->shape[0] ? c->shape : r->s.text;
        row.unit = mpce_bench_unit(&r->s);
        row.note = c->note;
        if (c->failed) {
            row.skipped = 1;
            row.note = c->why;
        } else {
            row.median_s = c->median;
            row.min_s = c->min;
            row.max_s = c->max;
            row.unit_rate = mpce_bench_rate(&r->s, c->median);
            int b = base ? bi : c->baseline;
            char note[400];
            if (b >= 0 && !r->c[b].failed && c->median > 0) {
                row.baseline = r->c[b].name;
                row.ratio = r->c[b].median / c->median;
            } else if (base) {
                snprintf(note, sizeof(note), "%s%sbaseline %s not measured: %s", c->note,
                         c->note[0] ? "; " : "", base,
                         r->missing_baseline[0] ? r->missing_baseline
                         : bi >= 0             ? r->c[bi].why
                                               : "not available");
                row.note = note;
            }
            if (fn(&row, arg) != 0)
                return 1;
            continue;
        }
        if (fn(&row, arg) != 0)
            return 1;
    }
    for (size_t i = 0; i < r->n_skip; i++) {
        mpce_bench_row row;
        memset(&row, 0, sizeof(row));
        row.op = r->s.op;
        row.impl = r->skip[i].impl;
        row.shape = r->s.text;
        row.unit = mpce_bench_unit(&r->s);
        row.note = r->skip[i].note;
        row.skipped = 1;
        if (fn(&row, arg) != 0)
            return 1;
    }
    return 0;
}

static void release(struct row *r)
{
    for (size_t i = 0; i < r->n; i++) {
        if (r->c[i].teardown)
            r->c[i].teardown(r->c[i].state);
        free(r->c[i].samples);
    }
    mpce_bench_fixture_free(r->f);
}

/* One row; *stop set when the callback asked to stop. */
static mpce_status run_row(struct row *r, const char *op, const char *shape,
                           const struct mpce_bench_timing *t, mpce_bench_row_fn fn, void *arg,
                           int *stop)
{
    mpce_status st = mpce_bench_shape_parse(op, shape, &r->s);
    if (st != MPCE_OK)
        return st;
    if ((st = mpce_bench_fixture_new(&r->s, &r->f)) != MPCE_OK)
        return st;
    const char *base = baseline_name(&r->s);
    if (r->s.threads > 1) {
        add_thread_pair(r);
    } else {
        size_t nb;
        const mpce_bench_peer *builtin = mpce_bench_builtin_peers(&nb);
        add_impls(r, base);
        add_peer_list(r, builtin, nb, base);
        add_peer_list(r, r->peers, r->n_peers, base);
    }
    if (r->matched) {
        st = mpce_bench_measure(r->c, r->n, t);
        if (st == MPCE_OK)
            *stop = emit(r, fn, arg);
    }
    release(r);
    return st;
}

/* Whether name is an implementation or a peer the run knows. */
static int known_impl(mpce_engine *e, const mpce_bench_options *o)
{
    if (mpce_registry_find(e, o->impl))
        return 1;
    size_t nb;
    const mpce_bench_peer *b = mpce_bench_builtin_peers(&nb);
    for (size_t i = 0; i < nb; i++)
        if (strcmp(b[i].name, o->impl) == 0)
            return 1;
    for (size_t i = 0; i < o->n_peers; i++)
        if (o->peers[i].name && strcmp(o->peers[i].name, o->impl) == 0)
            return 1;
    return 0;
}

static mpce_status check_options(mpce_engine *e, const mpce_bench_options *o,
                                 struct mpce_bench_timing *t)
{
    if (o->struct_size < sizeof(mpce_bench_options))
        return mpce_error(MPCE_ERR_ARG, "mpce_bench_run: opts->struct_size is %zu, expected "
                          "%zu", o->struct_size, sizeof(mpce_bench_options));
    t->rounds = o->rounds ? o->rounds : 7;
    t->windows = o->windows ? o->windows : 3;
    t->window_s = o->window_s > 0 ? o->window_s : 0.02;
    if (t->rounds > 64 || t->windows > 100 || t->window_s > 10)
        return mpce_error(MPCE_ERR_ARG, "mpce_bench_run: rounds (1..64), windows (1..100) or "
                          "window_s (up to 10 s) out of range");
    if (o->n_peers && !o->peers)
        return mpce_error(MPCE_ERR_ARG, "mpce_bench_run: n_peers without peers");
    if (o->op && mpce_bench_op_check(o->op) != MPCE_OK)
        return MPCE_ERR_ARG;
    if (o->impl && !known_impl(e, o))
        return mpce_error(MPCE_ERR_ARG, "unknown implementation '%.64s': see `mpcengine list` "
                          "(peers: openssl-evp-aes-128-ecb, openssl-evp-aes-128-ctr and those "
                          "the caller registers)", o->impl);
    return MPCE_OK;
}

mpce_status mpce_bench_run(mpce_engine *engine, const mpce_bench_options *opts,
                           mpce_bench_row_fn fn, void *arg)
{
    mpce_error_clear();
    if (!fn)
        return mpce_error(MPCE_ERR_ARG, "mpce_bench_run: fn is NULL");
    mpce_engine *e;
    mpce_status gst = mpce_engine_acquire(engine, &e);
    if (gst != MPCE_OK)
        return gst;
    mpce_bench_options none;
    memset(&none, 0, sizeof(none));
    none.struct_size = sizeof(none);
    const mpce_bench_options *o = opts ? opts : &none;
    struct mpce_bench_timing t;
    mpce_status st = check_options(e, o, &t);
    if (st != MPCE_OK)
        return st;

    /* The rows to run, all checked before the first is measured. */
    const char *list[64][2];
    size_t n = 0;
    if (o->op && o->shape) {
        list[n][0] = o->op, list[n][1] = o->shape, n++;
    } else {
        const char *op, *shape;
        for (size_t i = 0; mpce_bench_default_row(i, &op, &shape) == MPCE_OK && n < 64; i++)
            if ((!o->op || strcmp(o->op, op) == 0) && (!o->shape || strcmp(o->shape, shape) == 0))
                list[n][0] = op, list[n][1] = shape, n++;
        if (n == 0)
            return mpce_error(MPCE_ERR_ARG, "no default benchmark row has shape '%.100s': "
                              "give the op with it (mpcengine bench --op OP --shape S)",
                              o->shape);
    }
    struct row *r = malloc(sizeof(*r));
    if (!r)
        return mpce_error(MPCE_ERR_NOMEM, "benchmark: out of memory");
    for (size_t i = 0; i < n; i++) {
        if ((st = mpce_bench_shape_parse(list[i][0], list[i][1], &r->s)) != MPCE_OK) {
            free(r);
            return st;
        }
    }
    int stop = 0, matched = 0;
    for (size_t i = 0; i < n && !stop && st == MPCE_OK; i++) {
        memset(r, 0, sizeof(*r));
        r->e = e;
        r->o = o;
        r->peers = o->peers;
        r->n_peers = o->n_peers;
        st = run_row(r, list[i][0], list[i][1], &t, fn, arg, &stop);
        matched |= r->matched;
    }
    free(r);
    if (st == MPCE_OK && !matched && o->impl)
        return mpce_error(MPCE_ERR_ARG, "implementation '%.64s' has no candidate in the "
                          "selected rows", o->impl);
    return st;
}
