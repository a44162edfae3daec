/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sweep of mpcengine bench --plot: shapes per op across the engine's four
 * size classes (tiny < 64 work elements, small < 4096, medium < 262144,
 * large), each point an ordinary row of the harness (every usable
 * implementation side by side, interleaved, the numbers `mpcengine bench`
 * prints), with what "auto" resolves to at each point. bench_svg.c draws it.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"
#include "tools/bench/bench_sweep.h"

/* A point's panel: its op, and for the NTT and the LPN fold the variant the
 * selector pins apart (the modulus width, the table's size). */
static void panel_name(const struct mpce_bench_shape *s, char *buf, size_t len)
{
    if (s->prim == MPCE_PRIM_NTT)
        snprintf(buf, len, "%s, q %s 2^50", s->op, s->q >> 50 ? ">=" : "<");
    else if (s->prim == MPCE_PRIM_LPN)
        snprintf(buf, len, "%s, 2^%llu-block table", s->op, (unsigned long long)s->logk);
    else
        snprintf(buf, len, "%s", s->op);
}

/* Five to seven points per op, tiny to large, in order of work elements,
 * chosen so that the whole sweep takes well under a minute on two cores
 * with the sweep's timing: the soft implementations' large calls dominate
 * it, so the DPF and LPN stop at the first large point, and dpf.eval_keys
 * runs at bits=10 (its keys are made by dpf-soft's gen, untimed but slow).
 * LPN: chunk = n (one call, so "auto" resolves for n outputs). */
static const struct {
    const char *op, *shape;
} sweep[] = {
    {"prg.ecb", "n=16"},
    {"prg.ecb", "n=256"},
    {"prg.ecb", "n=4096"},
    {"prg.ecb", "n=65536"},
    {"prg.ecb", "n=262144"},
    {"prg.ecb", "n=1048576"},
    {"prg.mmo", "m=2,n=8"},
    {"prg.mmo", "m=2,n=128"},
    {"prg.mmo", "m=2,n=2048"},
    {"prg.mmo", "m=2,n=32768"},
    {"prg.mmo", "m=2,n=131072"},
    {"prg.mmo", "m=2,n=524288"},
    {"prg.ctr", "n=16"},
    {"prg.ctr", "n=256"},
    {"prg.ctr", "n=4096"},
    {"prg.ctr", "n=65536"},
    {"prg.ctr", "n=262144"},
    {"prg.ctr", "n=1048576"},
    {"ntt.forward", "N=32,B=1,q=61bit"},
    {"ntt.forward", "N=1024,B=1,q=61bit"},
    {"ntt.forward", "N=4096,B=1,q=61bit"},
    {"ntt.forward", "N=4096,B=4,q=61bit"},
    {"ntt.forward", "N=4096,B=16,q=61bit"},
    {"ntt.forward", "N=4096,B=64,q=61bit"},
    {"ntt.forward", "N=16384,B=64,q=61bit"},
    /* The modulus below 2^50 (IFMA's), which the selector pins apart. */
    {"ntt.forward", "N=1024,B=1,q=50bit"},
    {"ntt.forward", "N=4096,B=1,q=50bit"},
    {"ntt.forward", "N=4096,B=4,q=50bit"},
    {"ntt.forward", "N=4096,B=16,q=50bit"},
    {"ntt.forward", "N=4096,B=64,q=50bit"},
    {"ntt.forward", "N=16384,B=64,q=50bit"},
    {"ntt.inverse", "N=32,B=1,q=61bit"},
    {"ntt.inverse", "N=1024,B=1,q=61bit"},
    {"ntt.inverse", "N=4096,B=1,q=61bit"},
    {"ntt.inverse", "N=4096,B=4,q=61bit"},
    {"ntt.inverse", "N=4096,B=16,q=61bit"},
    {"ntt.inverse", "N=4096,B=64,q=61bit"},
    {"ntt.inverse", "N=16384,B=64,q=61bit"},
    /* A table in L2 (2^16 blocks) as well as Ferret's (2^19). */
    {"lpn.fold", "logk=16,n=16"},
    {"lpn.fold", "logk=16,n=256"},
    {"lpn.fold", "logk=16,n=4096"},
    {"lpn.fold", "logk=16,n=65536"},
    {"lpn.fold", "logk=16,n=262144"},
    {"lpn.fold", "logk=19,n=16"},
    {"lpn.fold", "logk=19,n=256"},
    {"lpn.fold", "logk=19,n=4096"},
    {"lpn.fold", "logk=19,n=65536"},
    {"lpn.fold", "logk=19,n=262144"},
    {"dpf.evalall", "bits=4"},
    {"dpf.evalall", "bits=8"},
    {"dpf.evalall", "bits=12"},
    {"dpf.evalall", "bits=16"},
    {"dpf.evalall", "bits=18"},
    {"dpf.eval_keys", "bits=10,keys=16"},
    {"dpf.eval_keys", "bits=10,keys=256"},
    {"dpf.eval_keys", "bits=10,keys=4096"},
    {"dpf.eval_keys", "bits=10,keys=65536"},
    {"dpf.eval_keys", "bits=10,keys=262144"},
};

#define N_SWEEP (sizeof(sweep) / sizeof(sweep[0]))

mpce_status mpce_bench_sweep_point(size_t index, const char **op, const char **shape)
{
    if (index >= N_SWEEP)
        return MPCE_ERR_ARG;
    if (op)
        *op = sweep[index].op;
    if (shape)
        *shape = sweep[index].shape;
    return MPCE_OK;
}

uint64_t mpce_bench_work_elements(const struct mpce_bench_shape *s)
{
    if (strcmp(s->op, "prg.mmo") == 0)
        return s->n * s->m;
    switch (s->prim) {
    case MPCE_PRIM_NTT:
        return s->N * s->B;
    case MPCE_PRIM_LPN:
        return s->chunk;
    case MPCE_PRIM_DPF:
        return strcmp(s->op, "dpf.evalall") == 0 ? UINT64_C(1) << s->bits : s->keys;
    default:
        return s->n;
    }
}

/* Why a call failed: its detail, or the status's name where it left none. */
static const char *failure(mpce_status st)
{
    return mpce_last_error()[0] ? mpce_last_error() : mpce_status_name(st);
}

static mpce_status out_of_memory(void)
{
    return mpce_error(MPCE_ERR_NOMEM, "benchmark plot: out of memory");
}

void mpce_bench_plot_free(struct mpce_bench_plot *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        free(p->point[i].cand);
    free(p->point);
    free(p);
}

/* Whether the sweep has points for op. */
static int swept(const char *op)
{
    for (size_t i = 0; i < N_SWEEP; i++)
        if (strcmp(sweep[i].op, op) == 0)
            return 1;
    return 0;
}

/* Whether --impl names something with a candidate in rows of s's op: an
 * implementation of its primitive, or a peer of the op. *known is set when
 * the name is an implementation or a peer at all. */
static int impl_in(mpce_engine *e, const mpce_bench_options *o,
                   const struct mpce_bench_shape *s, int *known)
{
    struct mpce_slot *slot = mpce_registry_find(e, o->impl);
    if (slot) {
        *known = 1;
        return slot->prim == s->prim;
    }
    size_t nb;
    const mpce_bench_peer *b = mpce_bench_builtin_peers(&nb);
    int in = 0;
    for (size_t i = 0; i < nb; i++)
        if (strcmp(b[i].name, o->impl) == 0) {
            *known = 1;
            in |= strcmp(b[i].op, s->op) == 0;
        }
    for (size_t i = 0; i < o->n_peers; i++)
        if (o->peers[i].name && strcmp(o->peers[i].name, o->impl) == 0) {
            *known = 1;
            in |= o->peers[i].op && strcmp(o->peers[i].op, s->op) == 0;
        }
    return in;
}

struct sweep_run {
    mpce_engine *e;
    struct mpce_bench_plot_point *pt;
    mpce_bench_row_fn fn;
    void *arg;
    int stopped, nomem;
};

/* Every row of a point: kept for the plot, passed on to the caller. */
static int collect(const mpce_bench_row *r, void *arg)
{
    struct sweep_run *w = arg;
    struct mpce_bench_plot_point *pt = w->pt;
    if (pt->n == pt->cap) {
        size_t cap = pt->cap ? 2 * pt->cap : 8;
        struct mpce_bench_plot_cand *grown = realloc(pt->cand, cap * sizeof(*grown));
        if (grown) {
            pt->cand = grown;
            pt->cap = cap;
        }
    }
    if (pt->n < pt->cap) {
        struct mpce_bench_plot_cand *c = &pt->cand[pt->n++];
        memset(c, 0, sizeof(*c));
        snprintf(c->impl, sizeof(c->impl), "%s", r->impl);
        snprintf(c->note, sizeof(c->note), "%s", r->note ? r->note : "");
        c->reference = mpce_registry_find(w->e, r->impl) == NULL;
        c->skipped = r->skipped || !(r->median_s > 0);
        if (!c->skipped)
            c->y = pt->prg ? r->median_s * 1e9 / (double)pt->x : r->unit_rate;
    } else {
        w->nomem = 1;
    }
    if (w->fn(r, w->arg) != 0) {
        w->stopped = 1;
        return 1;
    }
    return 0;
}

/* What "auto" runs at the point, on a fixture of the point's shape. */
static void resolve_auto(mpce_engine *e, const struct mpce_bench_shape *s,
                         struct mpce_bench_plot_point *pt)
{
    struct mpce_bench_fixture *f = NULL;
    mpce_status st = mpce_bench_fixture_new(s, &f);
    if (st == MPCE_OK)
        st = mpce_bench_auto_impl(e, s, f, pt->auto_impl, sizeof(pt->auto_impl));
    if (st != MPCE_OK) {
        pt->auto_impl[0] = '\0';
        snprintf(pt->auto_why, sizeof(pt->auto_why), "%s", failure(st));
    }
    mpce_bench_fixture_free(f);
}

/* One point: its "auto", then its row through the ordinary harness. */
static mpce_status run_point(struct sweep_run *w, const mpce_bench_options *o,
                             const struct mpce_bench_shape *s)
{
    struct mpce_bench_plot_point *pt = w->pt;
    resolve_auto(w->e, s, pt);
    mpce_bench_options po = *o;
    po.op = pt->op;
    po.shape = pt->shape;
    po.start = NULL;
    po.row_start = NULL; /* the sweep reports its points itself */
    mpce_status st = mpce_bench_run(w->e, &po, collect, w);
    if (w->nomem)
        return out_of_memory();
    if (st == MPCE_OK)
        return st;
    /* The point is left out of the plot, which says why; the table too (with
     * --impl, for example, a point where that implementation declines). */
    snprintf(pt->error, sizeof(pt->error), "%s", failure(st));
    mpce_bench_row row;
    memset(&row, 0, sizeof(row));
    row.op = pt->op;
    row.impl = o->impl ? o->impl : "-";
    row.shape = pt->shape;
    row.unit = mpce_bench_unit(s);
    row.note = pt->error;
    row.skipped = 1;
    if (w->fn(&row, w->arg) != 0)
        w->stopped = 1;
    return MPCE_OK;
}

static mpce_status select_points(mpce_engine *e, const mpce_bench_options *o,
                                 struct mpce_bench_plot *p)
{
    int known = 0;
    struct mpce_bench_shape s;
    p->point = calloc(N_SWEEP, sizeof(*p->point));
    if (!p->point)
        return out_of_memory();
    for (size_t i = 0; i < N_SWEEP; i++) {
        if (o->op && strcmp(o->op, sweep[i].op) != 0)
            continue;
        mpce_status st = mpce_bench_shape_parse(sweep[i].op, sweep[i].shape, &s);
        if (st != MPCE_OK)
            return st;
        if (o->impl && !impl_in(e, o, &s, &known))
            continue;
        struct mpce_bench_plot_point *pt = &p->point[p->n++];
        snprintf(pt->op, sizeof(pt->op), "%s", s.op);
        panel_name(&s, pt->panel, sizeof(pt->panel));
        snprintf(pt->shape, sizeof(pt->shape), "%s", s.text);
        snprintf(pt->unit, sizeof(pt->unit), "%s", mpce_bench_unit(&s));
        pt->x = mpce_bench_work_elements(&s);
        pt->prg = s.prim == MPCE_PRIM_PRG;
    }
    if (p->n == 0 && o->impl && !known)
        return mpce_error(MPCE_ERR_ARG, "unknown implementation '%.64s': see `mpcengine list` "
                          "(peers: openssl-evp-aes-128-ecb, openssl-evp-aes-128-ctr and those "
                          "the caller registers)", o->impl);
    if (p->n == 0)
        return mpce_error(MPCE_ERR_ARG, "implementation '%.64s' has no candidate in the "
                          "plotted ops%s%s", o->impl, o->op ? ": " : "", o->op ? o->op : "");
    return MPCE_OK;
}

static mpce_status check(const mpce_bench_options *o)
{
    if (o->struct_size < sizeof(mpce_bench_options))
        return mpce_error(MPCE_ERR_ARG, "mpce_bench_sweep: opts->struct_size is %zu, "
                          "expected %zu", o->struct_size, sizeof(mpce_bench_options));
    if (o->shape)
        return mpce_error(MPCE_ERR_ARG, "the plot's sweep runs its own shapes: no shape can "
                          "be given with it");
    if (o->op) {
        mpce_status st = mpce_bench_op_check(o->op);
        if (st != MPCE_OK)
            return st;
        if (!swept(o->op)) {
            char list[256];
            size_t used = 0;
            for (size_t i = 0; i < N_SWEEP && used < sizeof(list); i++)
                if (i == 0 || strcmp(sweep[i].op, sweep[i - 1].op) != 0)
                    used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
                                             used ? ", " : "", sweep[i].op);
            return mpce_error(MPCE_ERR_ARG, "%.40s has no sweep to plot (plotted: %s)", o->op,
                              list);
        }
    }
    if (o->rounds > 64 || o->windows > 100 || o->window_s > 10)
        return mpce_error(MPCE_ERR_ARG, "mpce_bench_sweep: rounds (1..64), windows (1..100) "
                          "or window_s (up to 10 s) out of range");
    if (o->n_peers && !o->peers)
        return mpce_error(MPCE_ERR_ARG, "mpce_bench_sweep: n_peers without peers");
    return MPCE_OK;
}

mpce_status mpce_bench_sweep(mpce_engine *engine, const mpce_bench_options *opts,
                             mpce_bench_row_fn fn, void *arg, struct mpce_bench_plot **out)
{
    *out = NULL;
    if (!opts || !fn)
        return mpce_error(MPCE_ERR_ARG, "mpce_bench_sweep: opts or fn is NULL");
    mpce_status st = check(opts);
    if (st != MPCE_OK)
        return st;
    mpce_engine *e;
    if ((st = mpce_engine_acquire(engine, &e)) != MPCE_OK)
        return st;
    struct mpce_bench_plot *p = calloc(1, sizeof(*p));
    if (!p) {
        mpce_engine_unref(e);
        return out_of_memory();
    }
    if ((st = select_points(e, opts, p)) != MPCE_OK)
        goto out;
    mpce_bench_options o = *opts;
    o.rounds = p->rounds = opts->rounds ? opts->rounds : MPCE_BENCH_SWEEP_ROUNDS;
    o.windows = p->windows = opts->windows ? opts->windows : MPCE_BENCH_SWEEP_WINDOWS;
    o.window_s = p->window_s = opts->window_s > 0 ? opts->window_s : MPCE_BENCH_SWEEP_WINDOW_S;
    if (opts->start)
        opts->start(p->n, arg);
    struct sweep_run w = {e, NULL, fn, arg, 0, 0};
    for (size_t i = 0; i < p->n && !w.stopped && st == MPCE_OK; i++) {
        struct mpce_bench_shape s;
        w.pt = &p->point[i];
        if (opts->row_start)
            opts->row_start(i, p->n, w.pt->op, w.pt->shape, arg);
        if ((st = mpce_bench_shape_parse(w.pt->op, w.pt->shape, &s)) == MPCE_OK)
            st = run_point(&w, &o, &s);
    }
out:
    mpce_engine_unref(e);
    if (st != MPCE_OK) {
        mpce_bench_plot_free(p);
        return st;
    }
    *out = p;
    return MPCE_OK;
}
