/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpce_bench_run: for each selected row, gather the candidates (every
 * implementation of the op's primitive that passed its self-test and that
 * policy allows, the baselines, the peers), measure them side by side, and
 * report one row per candidate with its ratio to the row's baseline.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/runtime/knobs.h"
#include "tools/bench/bench.h"

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
    unsigned rounds;             /* samples per candidate */
    /* prg.dispatch: the api candidate, the direct one (-1 if absent) and the
     * implementation the call runs. */
    int dispatch_api, dispatch_direct;
    char dispatch_impl[96];
    char dispatch_why[400];      /* why there is no direct candidate */
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
 * candidate has its own (DPF floors, thread scaling, dispatch). */
static const char *baseline_name(const struct mpce_bench_shape *s)
{
    if (s->threads > 1 || s->dispatch || s->prim == MPCE_PRIM_DPF)
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

/* Whether --impl (IMPL or IMPL:KNOB=VALUE:...) names name. */
static int names(const char *impl, const char *name)
{
    size_t len = mpce_impl_spec_name_len(impl);
    return strncmp(impl, name, len) == 0 && name[len] == '\0';
}

static int wanted(const struct row *r, const char *name, const char *base)
{
    const char *only = r->o->impl;
    return !only || names(only, name) || (base && strcmp(base, name) == 0);
}

#define ASYNC_NOTE                                                                          \
    "asynchronous (MPCE_IMPL_ASYNC): its ops complete later, so it is not timed through "  \
    "its op table; it is measured through the public-API rows (threads=T)"

/* The AES floor of a DPF candidate: the highest-priority PRG of the same
 * module that can be timed directly, so a backend is compared with its own
 * AES. */
static const struct mpce_slot *floor_prg(const struct row *r, const struct mpce_slot *dpf)
{
    const struct mpce_slot *best = NULL;
    char why[320];
    for (size_t i = 0; i < r->e->n_slots; i++) {
        struct mpce_slot *s = r->e->slots[i];
        if (s->prim == MPCE_PRIM_PRG && s->module == dpf->module &&
            !(s->flags & MPCE_IMPL_ASYNC) && (!best || s->priority > best->priority) &&
            mpce_bench_slot_usable(r->e, s, why, sizeof(why)))
            best = s;
    }
    return best;
}

typedef mpce_status (*ref_cand_fn)(const struct mpce_slot *prg,
                                   const struct mpce_bench_shape *s,
                                   struct mpce_bench_fixture *f, struct mpce_bench_cand *c);

/* A DPF candidate's AES reference made by `make` on `best` (its plugin's
 * PRG) as NAME:PRG, once per row; its index, or -1. */
static int add_prg_ref(struct row *r, const struct mpce_slot *best, const char *kind,
                       ref_cand_fn make)
{
    if (!best)
        return -1;
    char name[96];
    snprintf(name, sizeof(name), "%s:%s", kind, best->impl->name);
    int at = find(r, name);
    if (at >= 0)
        return at;
    struct mpce_bench_cand *c = next_cand(r);
    if (!c)
        return -1;
    if (make(best, &r->s, r->f, c) != MPCE_OK) {
        skip(r, name, "%s", mpce_last_error());
        return -1;
    }
    return (int)r->n++;
}

/* --impl IMPL:KNOB=VALUE:...: that implementation with those knob values,
 * beside its defaults (at), which are its baseline. */
static void add_knob_cand(struct row *r, const struct mpce_slot *slot, size_t at)
{
    const char *list = r->o->impl ? mpce_impl_spec_knobs(r->o->impl) : NULL;
    uint32_t values[MPCE_KNOB_MAX];
    if (list == NULL || !names(r->o->impl, slot->impl->name) ||
        mpce_knobs_values(slot, list, "--impl: ", values) != MPCE_OK)
        return;
    struct mpce_bench_cand *c = next_cand(r);
    if (!c)
        return;
    if (mpce_bench_impl_cand_knobs(slot, &r->s, r->f, values, c) != MPCE_OK) {
        skip(r, r->o->impl, "%s", mpce_last_error());
        return;
    }
    c->baseline = (int)at;
    c->own_baseline = 1;
    r->n++;
}

static void add_impls(struct row *r, const char *base)
{
    char why[320];
    for (size_t i = 0; i < r->e->n_slots; i++) {
        struct mpce_slot *slot = r->e->slots[i];
        const char *name = slot->impl->name;
        if (slot->prim != r->s.prim || !wanted(r, name, base))
            continue;
        if (!mpce_bench_slot_usable(r->e, slot, why, sizeof(why))) {
            if (r->o->impl && names(r->o->impl, name))
                skip(r, name, "%s", why);
            continue;
        }
        if (slot->flags & MPCE_IMPL_ASYNC) {
            skip(r, name, ASYNC_NOTE);
            continue;
        }
        struct mpce_bench_cand *c = next_cand(r);
        if (!c)
            return;
        if (mpce_bench_impl_cand(slot, &r->s, r->f, c) != MPCE_OK) {
            skip(r, name, "%s", mpce_last_error());
            continue;
        }
        size_t at = r->n++;
        if (!r->o->impl || names(r->o->impl, name))
            r->matched = 1;
        if (r->s.prim == MPCE_PRIM_DPF) {
            /* The floor: its AES on as many blocks in one call. dpf.eval
             * also gets the chain, the same AES as dependent one-block
             * calls: a point's levels cannot run side by side. */
            const struct mpce_slot *prg = floor_prg(r, slot);
            int fl = add_prg_ref(r, prg, "aes-floor", mpce_bench_floor_cand);
            r->c[at].baseline = fl;
            if (fl < 0 && !r->c[at].note[0])
                snprintf(r->c[at].note, sizeof(r->c[at].note), "no PRG of plugin %s for "
                         "the AES floor", slot->module->name);
            if (strcmp(r->s.op, "dpf.eval") == 0)
                add_prg_ref(r, prg, "aes-chain", mpce_bench_chain_cand);
        }
        add_knob_cand(r, slot, at);
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

/* The implementation --impl names if it is one of the row's primitive;
 * NULL (and 0) if --impl names something else, which the row then leaves
 * out. */
static int named_impl(struct row *r, const char **impl)
{
    *impl = r->o->impl;
    if (!*impl)
        return 1;
    struct mpce_slot *s = mpce_registry_find_named(r->e, *impl);
    return s != NULL && s->prim == r->s.prim;
}

/* threads = 1 and threads = T through the public API, the same
 * implementation ("auto"'s choice for the shape unless one is named). */
static void add_thread_pair(struct row *r)
{
    const char *impl;
    char chosen[96];
    if (!named_impl(r, &impl))
        return;
    if (!impl) {
        if (mpce_bench_auto_impl(r->e, &r->s, r->f, chosen, sizeof(chosen)) != MPCE_OK) {
            skip(r, "auto", "%s", mpce_last_error());
            return;
        }
        impl = chosen;
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

/* prg.dispatch and ntt.dispatch: "direct", the op (ecb, forward) of the
 * implementation the API call runs, through its op table; "api", the
 * public call on a context. Both on the same buffers; api's baseline is
 * direct. */
static void add_dispatch_pair(struct row *r)
{
    const char *impl;
    if (!named_impl(r, &impl))
        return;
    r->matched = 1;
    r->dispatch_api = r->dispatch_direct = -1;
    struct mpce_bench_cand api;
    memset(&api, 0, sizeof(api));
    api.baseline = -1;
    const char *resolved = NULL;
    if (mpce_bench_dispatch_cand(r->e, impl, &r->s, r->f, &api, &resolved) != MPCE_OK) {
        skip(r, "api", "%s", mpce_last_error());
        return;
    }
    snprintf(r->dispatch_impl, sizeof(r->dispatch_impl), "%s", resolved);

    char why[320];
    struct mpce_slot *slot = mpce_registry_find(r->e, r->dispatch_impl);
    struct mpce_bench_cand *d = next_cand(r);
    if (!d)
        snprintf(r->dispatch_why, sizeof(r->dispatch_why), "too many candidates");
    else if (!slot)
        snprintf(r->dispatch_why, sizeof(r->dispatch_why), "%.64s is not an implementation "
                 "of this engine", r->dispatch_impl);
    else if (!mpce_bench_slot_usable(r->e, slot, why, sizeof(why)))
        snprintf(r->dispatch_why, sizeof(r->dispatch_why), "%.300s", why);
    else if (slot->flags & MPCE_IMPL_ASYNC)
        snprintf(r->dispatch_why, sizeof(r->dispatch_why), "%.64s is %s", r->dispatch_impl,
                 ASYNC_NOTE);
    else if (mpce_bench_impl_cand(slot, &r->s, r->f, d) != MPCE_OK)
        snprintf(r->dispatch_why, sizeof(r->dispatch_why), "%.64s: %.300s", r->dispatch_impl,
                 mpce_last_error());
    else {
        snprintf(d->name, sizeof(d->name), "direct");
        snprintf(d->note, sizeof(d->note), "%s's %s through its op table%s", r->dispatch_impl,
                 mpce_bench_engine_op(&r->s),
                 r->s.inplace == MPCE_BENCH_INPLACE_KEEP   ? ", in place; api's context keeps "
                                                             "a refused call's input"
                 : r->s.inplace == MPCE_BENCH_INPLACE_ZERO ? ", in place; api's context zeroes "
                                                             "a refused call's array"
                                                           : "");
        r->dispatch_direct = (int)r->n++;
    }
    if (r->dispatch_direct < 0)
        skip(r, "direct", "%s", r->dispatch_why);
    struct mpce_bench_cand *a = next_cand(r);
    if (!a) {
        api.teardown(api.state);
        return;
    }
    *a = api;
    a->baseline = r->dispatch_direct;
    r->dispatch_api = (int)r->n++;
}

/* The api row's note: the overhead per call over direct, from the medians,
 * with the spread of the same difference round by round (the rounds
 * interleave the two, so round i of each saw the same machine). */
static void dispatch_note(const struct row *r, const struct mpce_bench_cand *a, char *note,
                          size_t len)
{
    const char *how = r->o->impl ? "named" : "\"auto\" resolved to";
    if (r->dispatch_direct < 0 || r->c[r->dispatch_direct].failed) {
        snprintf(note, len, "%s %.64s; no direct baseline: %.280s", how, r->dispatch_impl,
                 r->dispatch_direct < 0 ? r->dispatch_why : r->c[r->dispatch_direct].why);
        return;
    }
    const struct mpce_bench_cand *d = &r->c[r->dispatch_direct];
    double lo = 0, hi = 0;
    for (unsigned i = 0; i < r->rounds; i++) {
        double diff = a->samples[i] - d->samples[i];
        if (i == 0 || diff < lo)
            lo = diff;
        if (i == 0 || diff > hi)
            hi = diff;
    }
    snprintf(note, len, "dispatch overhead %.1f ns/call, %.1f %% of direct (median api - "
             "median direct; per round %.1f to %.1f ns); %s %s", (a->median - d->median) * 1e9,
             d->median > 0 ? 100.0 * (a->median - d->median) / d->median : 0.0, lo * 1e9,
             hi * 1e9, how, r->dispatch_impl);
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
        char note[400];
        if (c->failed) {
            row.skipped = 1;
            row.note = c->why;
        } else {
            row.median_s = c->median;
            row.min_s = c->min;
            row.max_s = c->max;
            row.unit_rate = mpce_bench_rate(&r->s, c->median);
            int b = base && !c->own_baseline ? bi : c->baseline;
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
            if (r->s.dispatch && (int)i == r->dispatch_api) {
                dispatch_note(r, c, note, sizeof(note));
                row.note = note;
            }
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
    r->rounds = t->rounds;
    const char *base = baseline_name(&r->s);
    if (r->s.dispatch) {
        add_dispatch_pair(r);
    } else if (r->s.threads > 1) {
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
    if (mpce_registry_find_named(e, o->impl))
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
    if (o->impl && mpce_impl_spec_knobs(o->impl) != NULL) {
        struct mpce_slot *s;
        uint32_t values[MPCE_KNOB_MAX];
        int has;
        mpce_status st = mpce_registry_find_spec(e, o->impl, "--impl: ", &s, values, &has);
        if (st != MPCE_OK)
            return st;
    }
    return MPCE_OK;
}

/* The rows to run, all checked before the first is measured. */
static mpce_status select_rows(const mpce_bench_options *o, const char *list[][2], size_t max,
                               size_t *count)
{
    size_t n = 0;
    if (o->op && o->shape) {
        list[n][0] = o->op, list[n][1] = o->shape, n++;
    } else {
        const char *op, *shape;
        for (size_t i = 0; mpce_bench_default_row(i, &op, &shape) == MPCE_OK && n < max; i++)
            if ((!o->op || strcmp(o->op, op) == 0) && (!o->shape || strcmp(o->shape, shape) == 0))
                list[n][0] = op, list[n][1] = shape, n++;
        if (n == 0)
            return mpce_error(MPCE_ERR_ARG, "no default benchmark row has shape '%.100s': "
                              "give the op with it (mpcengine bench --op OP --shape S)",
                              o->shape);
    }
    struct mpce_bench_shape s;
    for (size_t i = 0; i < n; i++) {
        mpce_status st = mpce_bench_shape_parse(list[i][0], list[i][1], &s);
        if (st != MPCE_OK)
            return st;
    }
    *count = n;
    return MPCE_OK;
}

static mpce_status run_all(mpce_engine *e, const mpce_bench_options *o, mpce_bench_row_fn fn,
                           void *arg)
{
    struct mpce_bench_timing t = {0};
    mpce_status st = check_options(e, o, &t);
    if (st != MPCE_OK)
        return st;
    const char *list[64][2];
    size_t n = 0;
    if ((st = select_rows(o, list, 64, &n)) != MPCE_OK)
        return st;
    struct row *r = malloc(sizeof(*r));
    if (!r)
        return mpce_error(MPCE_ERR_NOMEM, "benchmark: out of memory");
    if (o->start)
        o->start(n, arg);
    int stop = 0, matched = 0;
    for (size_t i = 0; i < n && !stop && st == MPCE_OK; i++) {
        memset(r, 0, sizeof(*r));
        r->e = e;
        r->o = o;
        r->peers = o->peers;
        r->n_peers = o->n_peers;
        if (o->row_start)
            o->row_start(i, n, list[i][0], list[i][1], arg);
        st = run_row(r, list[i][0], list[i][1], &t, fn, arg, &stop);
        matched |= r->matched;
    }
    free(r);
    if (st == MPCE_OK && !matched && o->impl)
        return mpce_error(MPCE_ERR_ARG, "implementation '%.64s' has no candidate in the "
                          "selected rows", o->impl);
    return st;
}

mpce_status mpce_bench_run(mpce_engine *engine, const mpce_bench_options *opts,
                           mpce_bench_row_fn fn, void *arg)
{
    if (!fn)
        return mpce_error(MPCE_ERR_ARG, "mpce_bench_run: fn is NULL");
    mpce_bench_options none;
    memset(&none, 0, sizeof(none));
    none.struct_size = sizeof(none);
    mpce_engine *e;
    mpce_status st = mpce_engine_acquire(engine, &e);
    if (st != MPCE_OK)
        return st;
    st = run_all(e, opts ? opts : &none, fn, arg);
    mpce_engine_unref(e);
    return st;
}

void mpce_bench_cpu_model(char *buf, size_t len)
{

    snprintf(buf, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *v = strchr(line, ':');
        if (!v)
            continue;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t n = strcspn(v, "\n");
        if (n)
            snprintf(buf, len, "%.*s", (int)n, v);
        break;
    }
    fclose(f);
}
