/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpcengine bench --plot: a sweep of shapes per op across the engine's four
 * size classes (tiny < 64 work elements, small < 4096, medium < 262144,
 * large), each point an ordinary row of the harness (every usable
 * implementation side by side, interleaved, the numbers `mpcengine bench`
 * prints), with what "auto" resolves to at each point; then one SVG of time
 * per unit against work elements, a panel per op, with the crossovers of
 * the fastest implementation marked. Plain fprintf: no libraries, not even
 * libm (the command does not link it), hence the small log helpers.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/bench/bench.h"

/* ---- the sweep ------------------------------------------------------------ */

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
    {"ntt.inverse", "N=32,B=1,q=61bit"},
    {"ntt.inverse", "N=1024,B=1,q=61bit"},
    {"ntt.inverse", "N=4096,B=1,q=61bit"},
    {"ntt.inverse", "N=4096,B=4,q=61bit"},
    {"ntt.inverse", "N=4096,B=16,q=61bit"},
    {"ntt.inverse", "N=4096,B=64,q=61bit"},
    {"ntt.inverse", "N=16384,B=64,q=61bit"},
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

/* One candidate of one point. */
struct entry {
    char impl[96];
    int reference;  /* a peer or an AES floor: not something "auto" can pick */
    int skipped;
    double y;       /* ns per plotted unit (per block for the PRG) */
    char note[256];
};

struct point {
    char op[24], shape[128];
    uint64_t x;               /* work elements */
    int prg;                  /* y is time per block, not the row's GB/s */
    char unit[16];            /* the row's unit */
    char auto_impl[96];       /* "" when it could not be resolved */
    char auto_why[256];
    char error[256];          /* the row as a whole was not measured */
    struct entry *e;
    size_t n, cap;
};

struct mpce_bench_plot {
    struct point *p;
    size_t n;
    unsigned rounds, windows;
    double window_s;
};

void mpce_bench_plot_free(struct mpce_bench_plot *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        free(p->p[i].e);
    free(p->p);
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
    struct point *pt;
    mpce_bench_row_fn fn;
    void *arg;
    int stopped, nomem;
};

/* Every row of a point: kept for the plot, passed on to the caller. */
static int collect(const mpce_bench_row *r, void *arg)
{
    struct sweep_run *w = arg;
    struct point *pt = w->pt;
    if (pt->n == pt->cap) {
        size_t cap = pt->cap ? 2 * pt->cap : 8;
        struct entry *e = realloc(pt->e, cap * sizeof(*e));
        if (e) {
            pt->e = e;
            pt->cap = cap;
        }
    }
    if (pt->n < pt->cap) {
        struct entry *en = &pt->e[pt->n++];
        memset(en, 0, sizeof(*en));
        snprintf(en->impl, sizeof(en->impl), "%s", r->impl);
        snprintf(en->note, sizeof(en->note), "%s", r->note ? r->note : "");
        en->reference = mpce_registry_find(w->e, r->impl) == NULL;
        en->skipped = r->skipped || !(r->median_s > 0);
        if (!en->skipped)
            en->y = pt->prg ? r->median_s * 1e9 / (double)pt->x : r->unit_rate;
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
static void resolve_auto(mpce_engine *e, const struct mpce_bench_shape *s, struct point *pt)
{
    struct mpce_bench_fixture *f = NULL;
    mpce_status st = mpce_bench_fixture_new(s, &f);
    if (st == MPCE_OK)
        st = mpce_bench_auto_impl(e, s, f, pt->auto_impl, sizeof(pt->auto_impl));
    if (st != MPCE_OK) {
        pt->auto_impl[0] = '\0';
        snprintf(pt->auto_why, sizeof(pt->auto_why), "%s", mpce_last_error()[0]
                 ? mpce_last_error() : mpce_status_name(st));
    }
    mpce_bench_fixture_free(f);
}

/* One point: its "auto", then its row through the ordinary harness. */
static mpce_status run_point(struct sweep_run *w, const mpce_bench_options *o,
                             const struct mpce_bench_shape *s)
{
    struct point *pt = w->pt;
    resolve_auto(w->e, s, pt);
    mpce_bench_options po = *o;
    po.op = pt->op;
    po.shape = pt->shape;
    po.start = NULL;
    mpce_status st = mpce_bench_run(w->e, &po, collect, w);
    if (w->nomem)
        return mpce_error(MPCE_ERR_NOMEM, "benchmark plot: out of memory");
    if (st == MPCE_OK)
        return st;
    /* The point is left out of the plot, which says why; the table too (with
     * --impl, for example, a point where that implementation declines). */
    snprintf(pt->error, sizeof(pt->error), "%s", mpce_last_error()[0] ? mpce_last_error()
                                                                       : mpce_status_name(st));
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
    p->p = calloc(N_SWEEP, sizeof(*p->p));
    if (!p->p)
        return mpce_error(MPCE_ERR_NOMEM, "benchmark plot: out of memory");
    for (size_t i = 0; i < N_SWEEP; i++) {
        if (o->op && strcmp(o->op, sweep[i].op) != 0)
            continue;
        mpce_status st = mpce_bench_shape_parse(sweep[i].op, sweep[i].shape, &s);
        if (st != MPCE_OK)
            return st;
        if (o->impl && !impl_in(e, o, &s, &known))
            continue;
        struct point *pt = &p->p[p->n++];
        snprintf(pt->op, sizeof(pt->op), "%s", s.op);
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
        return mpce_error(MPCE_ERR_NOMEM, "benchmark plot: out of memory");
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
        w.pt = &p->p[i];
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

/* ---- numbers without libm ------------------------------------------------- */

/* log2 of v > 0: the exponent by halving or doubling, then the mantissa's
 * bits by repeated squaring (about 1e-12 accurate, plenty for pixels). */
static double lg2(double v)
{
    double r = 0, bit = 1;
    if (!(v > 0) || v > 1e300) /* never asked, but no endless loop on 0 or inf */
        return 0;
    while (v >= 2) {
        v /= 2;
        r += 1;
    }
    while (v < 1) {
        v *= 2;
        r -= 1;
    }
    for (int i = 0; i < 40; i++) {
        v *= v;
        bit /= 2;
        if (v >= 2) {
            v /= 2;
            r += bit;
        }
    }
    return r;
}

#define LOG10_2 0.30102999566398119521

static double lg10(double v)
{
    return lg2(v) * LOG10_2;
}

static double pow10i(int k)
{
    double v = 1;
    for (; k > 0; k--)
        v *= 10;
    for (; k < 0; k++)
        v /= 10;
    return v;
}

static int floor_int(double x)
{
    int t = (int)x;
    return (double)t > x ? t - 1 : t;
}

static int ceil_int(double x)
{
    int t = (int)x;
    return (double)t < x ? t + 1 : t;
}

/* ---- SVG ------------------------------------------------------------------ */

/* Text as XML character data or an attribute value: markup characters
 * escaped, control characters and bytes outside ASCII replaced (names and
 * notes come from plugins and from /proc/cpuinfo; the file is ASCII). At
 * most max characters (0: all). */
static void esc(FILE *fp, const char *s, size_t max)
{
    size_t n = 0;
    for (; *s && (max == 0 || n < max); s++, n++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&':
            fputs("&amp;", fp);
            break;
        case '<':
            fputs("&lt;", fp);
            break;
        case '>':
            fputs("&gt;", fp);
            break;
        case '"':
            fputs("&quot;", fp);
            break;
        case '\'':
            fputs("&apos;", fp);
            break;
        default:
            fputc(c < 0x20 || c >= 0x7f ? '?' : c, fp);
        }
    }
    if (*s)
        fputs("...", fp);
}

#define W 1040
#define LEFT 90          /* the plot area's left edge */
#define PW 620           /* its width */
#define PH 300           /* its height */
#define LEGEND_X 740
#define HEAD 70          /* the title */
#define NOTE_LINE 13
#define MAX_NOTES 12
#define MAX_SERIES 32
#define MAX_GROUPS 64

static const char *const palette[] = {
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
    "#e377c2", "#17becf", "#bcbd22", "#393b79", "#637939", "#843c39",
};

#define N_COLORS (sizeof(palette) / sizeof(palette[0]))

static const double class_bound[3] = {64, 4096, 262144};
static const char *const class_name[4] = {"tiny", "small", "medium", "large"};

struct series {
    const char *name;
    int reference;
    int measured;   /* has at least one point */
    const char *color;
};

/* A note under a panel: one implementation's reason, at these shapes. */
struct group {
    const char *impl, *note;
    char shapes[400];
};

struct panel {
    const struct point *p;   /* the op's points, in order of x */
    size_t n;
    struct series s[MAX_SERIES];
    size_t ns;
    struct group g[MAX_GROUPS];
    size_t ng;
    size_t notes;            /* lines of notes, the shapes' lines included */
    double lx0, lx1, ly0, ly1; /* axis ranges: log2 x, log10 y */
    int have_y;
    double top;              /* of the panel */
};

static int series_of(const struct panel *pn, const char *name)
{
    for (size_t i = 0; i < pn->ns; i++)
        if (strcmp(pn->s[i].name, name) == 0)
            return (int)i;
    return -1;
}

static void add_series(struct panel *pn, const char *name, int reference, int measured)
{
    int at = series_of(pn, name);
    if (at >= 0) {
        pn->s[at].measured |= measured;
        return;
    }
    if (pn->ns == MAX_SERIES)
        return;
    pn->s[pn->ns].name = name;
    pn->s[pn->ns].reference = reference;
    pn->s[pn->ns].measured = measured;
    pn->ns++;
}

static void add_group(struct panel *pn, const char *impl, const char *note, const char *shape)
{
    size_t i = 0;
    while (i < pn->ng && !(strcmp(pn->g[i].impl, impl) == 0 && strcmp(pn->g[i].note, note) == 0))
        i++;
    if (i == pn->ng) {
        if (pn->ng == MAX_GROUPS)
            return;
        pn->g[i].impl = impl;
        pn->g[i].note = note;
        pn->g[i].shapes[0] = '\0';
        pn->ng++;
    }
    size_t used = strlen(pn->g[i].shapes);
    if (used + 1 < sizeof(pn->g[i].shapes))
        snprintf(pn->g[i].shapes + used, sizeof(pn->g[i].shapes) - used, "%s%s",
                 used ? "; " : "", shape);
}

/* The fastest implementation "auto" could pick at a point, or -1. */
static int fastest(const struct point *pt)
{
    int best = -1;
    for (size_t i = 0; i < pt->n; i++) {
        const struct entry *en = &pt->e[i];
        if (!en->skipped && !en->reference && (best < 0 || en->y < pt->e[best].y))
            best = (int)i;
    }
    return best;
}

static size_t points_lines(FILE *fp, const struct panel *pn, double y);

static void layout(struct panel *pn)
{
    /* Series: the implementations, then the references, then what "auto"
     * picked but was not measured; each in order of first appearance. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < pn->n; i++)
            for (size_t j = 0; j < pn->p[i].n; j++) {
                const struct entry *en = &pn->p[i].e[j];
                if (!en->skipped && en->reference == pass)
                    add_series(pn, en->impl, pass, 1);
            }
    for (size_t i = 0; i < pn->n; i++)
        if (pn->p[i].auto_impl[0])
            add_series(pn, pn->p[i].auto_impl, 0, 0);
    size_t color = 0;
    for (size_t i = 0; i < pn->ns; i++)
        pn->s[i].color = palette[color++ % N_COLORS];

    /* Notes: candidates not measured, "auto" unresolved, rows left out. */
    for (size_t i = 0; i < pn->n; i++) {
        const struct point *pt = &pn->p[i];
        for (size_t j = 0; j < pt->n; j++)
            if (pt->e[j].skipped)
                add_group(pn, pt->e[j].impl, pt->e[j].note, pt->shape);
        if (!pt->auto_impl[0])
            add_group(pn, "auto", pt->auto_why, pt->shape);
        if (pt->error[0])
            add_group(pn, "row not measured", pt->error, pt->shape);
    }
    pn->notes = points_lines(NULL, pn, 0) + (pn->ng > MAX_NOTES ? MAX_NOTES + 1 : pn->ng);

    /* x: log2, the class boundaries always in view; y: log10 by decades. */
    double xmin = 16, xmax = 262144 * 4.0, ymin = 0, ymax = 0;
    for (size_t i = 0; i < pn->n; i++) {
        const struct point *pt = &pn->p[i];
        if ((double)pt->x < xmin)
            xmin = (double)pt->x;
        if ((double)pt->x > xmax)
            xmax = (double)pt->x;
        for (size_t j = 0; j < pt->n; j++) {
            const struct entry *en = &pt->e[j];
            if (en->skipped || !(en->y > 0))
                continue;
            if (!pn->have_y || en->y < ymin)
                ymin = en->y;
            if (!pn->have_y || en->y > ymax)
                ymax = en->y;
            pn->have_y = 1;
        }
    }
    pn->lx0 = lg2(xmin) - 0.5;
    pn->lx1 = lg2(xmax) + 0.5;
    if (!pn->have_y)
        ymin = 1, ymax = 10;
    pn->ly0 = floor_int(lg10(ymin) + 1e-9);
    pn->ly1 = ceil_int(lg10(ymax) - 1e-9);
    if (pn->ly1 <= pn->ly0)
        pn->ly1 = pn->ly0 + 1;
}

static double panel_height(const struct panel *pn)
{
    /* title, plot area, axis labels, the "auto" strip and its labels, notes */
    return 46 + PH + 44 + 16 + 30 + (double)pn->notes * NOTE_LINE + 24;
}

static double px(const struct panel *pn, double x)
{
    return LEFT + (lg2(x) - pn->lx0) / (pn->lx1 - pn->lx0) * PW;
}

static double plot_top(const struct panel *pn)
{
    return pn->top + 46;
}

static double py(const struct panel *pn, double y)
{
    return plot_top(pn) + PH - (lg10(y) - pn->ly0) / (pn->ly1 - pn->ly0) * PH;
}

/* 2^k as 16, 4K, 1M. */
static void pow2_label(int k, char *buf, size_t len)
{
    unsigned long long v = 1ull << k;
    if (k >= 20)
        snprintf(buf, len, "%lluM", v >> 20);
    else if (k >= 10)
        snprintf(buf, len, "%lluK", v >> 10);
    else
        snprintf(buf, len, "%llu", v);
}

/* A y-axis label: 0.01 .. 10000 plainly, else m e k. */
static void y_label(double v, int k, char *buf, size_t len)
{
    if (k >= -2 && k <= 4)
        snprintf(buf, len, "%g", v);
    else
        snprintf(buf, len, "%.0fe%d", v / pow10i(k), k);
}

static const char *x_title(const char *op)
{
    if (strcmp(op, "prg.mmo") == 0)
        return "work elements: blocks (keys &#215; seeds), log2 scale";
    if (strncmp(op, "prg.", 4) == 0)
        return "work elements: 16-byte blocks, log2 scale";
    if (strncmp(op, "ntt.", 4) == 0)
        return "work elements: polynomial words N&#183;B, log2 scale";
    if (strcmp(op, "lpn.fold") == 0)
        return "work elements: outputs per call, log2 scale";
    if (strcmp(op, "dpf.evalall") == 0)
        return "work elements: leaves 2^bits, log2 scale";
    return "work elements: keys, log2 scale";
}

static void axes(FILE *fp, const struct panel *pn)
{
    double top = plot_top(pn), bottom = top + PH;
    fprintf(fp, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"#fff\" "
            "stroke=\"#888\"/>\n", LEFT, top, PW, PH);
    /* y: decades, and 2 and 5 between them when the range is short */
    for (int k = (int)pn->ly0; k <= (int)pn->ly1; k++) {
        static const double minor[] = {1, 2, 5};
        for (size_t m = 0; m < 3; m++) {
            double v = minor[m] * pow10i(k), lv = lg10(v);
            if (lv < pn->ly0 - 1e-9 || lv > pn->ly1 + 1e-9 || (m && pn->ly1 - pn->ly0 > 2))
                continue;
            double y = py(pn, v);
            char label[32];
            y_label(v, k, label, sizeof(label));
            fprintf(fp, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n",
                    LEFT, y, LEFT + PW, y, m ? "#f0f0f0" : "#ddd");
            fprintf(fp, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\">%s"
                    "</text>\n", LEFT - 5, y + 3.5, label);
        }
    }
    /* x: every power of two ticked, every other one labelled */
    for (int k = ceil_int(pn->lx0); k <= floor_int(pn->lx1); k++) {
        double x = px(pn, (double)(1ull << k));
        fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n",
                x, bottom, x, bottom + (k % 2 ? 3 : 6));
        if (k % 2 == 0) {
            char label[32];
            pow2_label(k, label, sizeof(label));
            fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\">"
                    "%s</text>\n", x, bottom + 17, label);
        }
    }
    fprintf(fp, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\">%s</text>\n",
            LEFT + PW / 2, bottom + 33, x_title(pn->p[0].op));
    /* y title, rotated */
    fprintf(fp, "<text transform=\"translate(%d,%.1f) rotate(-90)\" text-anchor=\"middle\" "
            "font-size=\"11\">", LEFT - 52, top + PH / 2.0);
    if (pn->p[0].prg)
        fputs("ns per block (median; lower is faster)", fp);
    else {
        esc(fp, pn->p[0].unit, 0);
        fputs(" (median; lower is faster)", fp);
    }
    fputs("</text>\n", fp);
}

/* The size-class boundaries, dashed, and the classes named above the area. */
static void classes(FILE *fp, const struct panel *pn)
{
    double top = plot_top(pn), lo = LEFT;
    for (int c = 0; c < 4; c++) {
        double hi = c < 3 ? px(pn, class_bound[c]) : LEFT + PW;
        if (c < 3)
            fprintf(fp, "<line class=\"size-class\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                    "y2=\"%.1f\" stroke=\"#aaa\" stroke-dasharray=\"4,4\"/>\n", hi, top, hi,
                    top + PH);
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\" "
                "fill=\"#777\">%s</text>\n", (lo + hi) / 2, top - 4, class_name[c]);
        lo = hi;
    }
}

/* A crossover whose new fastest wins by less than this at the next point
 * is drawn faint: within the noise of a shared machine, a tie. */
#define TIE 1.05

static void crossovers(FILE *fp, const struct panel *pn)
{
    double top = plot_top(pn);
    for (size_t i = 0; i + 1 < pn->n; i++) {
        const struct point *prev = &pn->p[i], *next = &pn->p[i + 1];
        int a = fastest(prev), b = fastest(next);
        if (a < 0 || b < 0 || strcmp(prev->e[a].impl, next->e[b].impl) == 0)
            continue;
        /* by how much the new one wins at the next point, if both ran there */
        double gain = 0;
        for (size_t j = 0; j < next->n; j++)
            if (!next->e[j].skipped && strcmp(next->e[j].impl, prev->e[a].impl) == 0)
                gain = next->e[j].y / next->e[b].y;
        int tie = gain > 0 && gain < TIE;
        /* midway between the two points on the log axis */
        double x = (px(pn, (double)prev->x) + px(pn, (double)next->x)) / 2;
        fprintf(fp, "<g class=\"crossover\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\"/>\n", x, top, x, top + PH,
                tie ? "#bbb" : "#333");
        fprintf(fp, "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" text-anchor=\"end\" "
                "font-size=\"10\" fill=\"%s\">", x + 11, top + 4, tie ? "#999" : "#333");
        esc(fp, prev->e[a].impl, 0);
        fputs(" &#8594; ", fp);
        esc(fp, next->e[b].impl, 0);
        if (gain > 0)
            fprintf(fp, " (%.2fx%s)", gain, tie ? ", a tie" : "");
        fputs("</text></g>\n", fp);
    }
}

static void series_lines(FILE *fp, const struct panel *pn)
{
    for (size_t k = 0; k < pn->ns; k++) {
        const struct series *se = &pn->s[k];
        if (!se->measured)
            continue;
        fprintf(fp, "<g class=\"series\"><title>");
        esc(fp, se->name, 0);
        fprintf(fp, "</title>\n<polyline data-impl=\"");
        esc(fp, se->name, 0);
        fprintf(fp, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", se->color,
                se->reference ? " stroke-dasharray=\"6,4\"" : "");
        for (size_t i = 0; i < pn->n; i++)
            for (size_t j = 0; j < pn->p[i].n; j++) {
                const struct entry *en = &pn->p[i].e[j];
                if (!en->skipped && strcmp(en->impl, se->name) == 0)
                    fprintf(fp, "%.1f,%.1f ", px(pn, (double)pn->p[i].x), py(pn, en->y));
            }
        fputs("\"/>\n", fp);
        for (size_t i = 0; i < pn->n; i++)
            for (size_t j = 0; j < pn->p[i].n; j++) {
                const struct entry *en = &pn->p[i].e[j];
                if (en->skipped || strcmp(en->impl, se->name) != 0)
                    continue;
                fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" "
                        "stroke=\"%s\"><title>", px(pn, (double)pn->p[i].x), py(pn, en->y),
                        se->reference ? "#fff" : se->color, se->color);
                esc(fp, se->name, 0);
                fputs(" at ", fp);
                esc(fp, pn->p[i].shape, 0);
                fprintf(fp, ": %.4g %s</title></circle>\n", en->y,
                        pn->p[i].prg ? "ns/block" : pn->p[i].unit);
            }
        fputs("</g>\n", fp);
    }
}

/* Under the axis: a cell per point in the colour of what "auto" picked,
 * outlined in red where that is not the fastest measured implementation;
 * the name written where the choice changes. */
static void auto_strip(FILE *fp, const struct panel *pn)
{
    double y = plot_top(pn) + PH + 44;
    fprintf(fp, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\">auto</text>\n",
            LEFT - 5, y + 11);
    fprintf(fp, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"14\" fill=\"#f7f7f7\" "
            "stroke=\"#ccc\"/>\n", LEFT, y, PW);
    int row = 0;
    for (size_t i = 0; i < pn->n; i++) {
        const struct point *pt = &pn->p[i];
        double x = px(pn, (double)pt->x);
        double lo = i ? (x + px(pn, (double)pn->p[i - 1].x)) / 2 : x - 12;
        double hi = i + 1 < pn->n ? (x + px(pn, (double)pn->p[i + 1].x)) / 2 : x + 12;
        if (lo < LEFT)
            lo = LEFT;
        if (hi > LEFT + PW)
            hi = LEFT + PW;
        int s = pt->auto_impl[0] ? series_of(pn, pt->auto_impl) : -1;
        int f = fastest(pt);
        int off = s >= 0 && f >= 0 && strcmp(pt->e[f].impl, pt->auto_impl) != 0;
        fprintf(fp, "<rect class=\"auto\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"14\" "
                "fill=\"%s\" stroke=\"%s\" stroke-width=\"%s\"><title>auto at ", lo + 0.5, y,
                hi - lo - 1, s >= 0 ? pn->s[s].color : "#fff", off ? "#e00" : "#fff",
                off ? "2" : "0.5");
        esc(fp, pt->shape, 0);
        fputs(": ", fp);
        esc(fp, pt->auto_impl[0] ? pt->auto_impl : "not resolved", 0);
        if (off) {
            fputs(" (fastest measured: ", fp);
            esc(fp, pt->e[f].impl, 0);
            fputs(")", fp);
        }
        fputs("</title></rect>\n", fp);
        if (pt->auto_impl[0] &&
            (i == 0 || strcmp(pt->auto_impl, pn->p[i - 1].auto_impl) != 0)) {
            fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" fill=\"%s\">", lo + 1,
                    y + 25 + 10 * row, s >= 0 ? pn->s[s].color : "#333");
            esc(fp, pt->auto_impl, 0);
            fputs("</text>\n", fp);
            row ^= 1;
        }
    }
}

static void legend(FILE *fp, const struct panel *pn)
{
    double y = plot_top(pn) + 8;
    for (size_t k = 0; k < pn->ns; k++, y += 16) {
        const struct series *se = &pn->s[k];
        fprintf(fp, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"%s\"%s/>\n", LEGEND_X, y, LEGEND_X + 22, y, se->color,
                se->measured ? "2" : "8", se->reference ? " stroke-dasharray=\"6,4\"" : "");
        fprintf(fp, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\">", LEGEND_X + 28, y + 4);
        esc(fp, se->name, 48);
        if (!se->measured)
            fputs(" (auto only)", fp);
        fputs("</text>\n", fp);
    }
    fprintf(fp, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" fill=\"#777\">dashed: reference "
            "(peer, AES floor)</text>\n", LEGEND_X, y + 6);
    fprintf(fp, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" fill=\"#777\">solid vertical: "
            "the fastest changes, A &#8594; B</text>\n", LEGEND_X, y + 18);
    fprintf(fp, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" fill=\"#777\">(B's speed-up over "
            "A at the next point;</text>\n", LEGEND_X, y + 30);
    fprintf(fp, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" fill=\"#777\">grey: under %.0f %%, "
            "a tie)</text>\n", LEGEND_X, y + 42, (TIE - 1) * 100);
    fprintf(fp, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" fill=\"#777\">red cell: auto is "
            "not the fastest there</text>\n", LEGEND_X, y + 54);
}

/* The sweep's shapes with their classes, wrapped at about POINTS_WIDTH
 * characters; the number of lines. fp NULL: only count them. */
#define POINTS_WIDTH 170

static size_t points_lines(FILE *fp, const struct panel *pn, double y)
{
    size_t lines = 1, col = 8;
    if (fp)
        fprintf(fp, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" fill=\"#555\">points: ",
                LEFT - 60, y);
    for (size_t i = 0; i < pn->n; i++) {
        const char *cls = class_name[mpce_size_class(pn->p[i].x)];
        size_t len = strlen(pn->p[i].shape) + strlen(cls) + 6;
        if (i && col + len > POINTS_WIDTH) {
            lines++;
            col = 8;
            y += NOTE_LINE;
            if (fp)
                fprintf(fp, "</text>\n<text x=\"%d\" y=\"%.1f\" font-size=\"9\" "
                        "fill=\"#555\">", LEFT - 60 + 36, y);
        } else if (i && fp) {
            fputs(" | ", fp);
        }
        col += len;
        if (fp) {
            esc(fp, pn->p[i].shape, 0);
            fprintf(fp, " (%s)", cls);
        }
    }
    if (fp)
        fputs("</text>\n", fp);
    return lines;
}

static void notes(FILE *fp, const struct panel *pn)
{
    double y = plot_top(pn) + PH + 44 + 16 + 30;
    y += (double)(points_lines(fp, pn, y) - 1) * NOTE_LINE;
    for (size_t i = 0; i < pn->ng && i <= MAX_NOTES; i++) {
        y += NOTE_LINE;
        fprintf(fp, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" fill=\"#555\">", LEFT - 60, y);
        if (i == MAX_NOTES) {
            fprintf(fp, "... and %zu more not measured</text>\n", pn->ng - MAX_NOTES);
            break;
        }
        fputs("not measured: ", fp);
        esc(fp, pn->g[i].impl, 40);
        fputs(" at ", fp);
        esc(fp, pn->g[i].shapes, 50);
        fputs(": ", fp);
        esc(fp, pn->g[i].note, 80);
        fputs("</text>\n", fp);
    }
}

static void panel(FILE *fp, const struct panel *pn)
{
    fprintf(fp, "<g class=\"panel\" data-op=\"%s\">\n", pn->p[0].op);
    fprintf(fp, "<text x=\"%d\" y=\"%.1f\" font-size=\"14\" font-weight=\"bold\">%s</text>\n",
            LEFT - 60, pn->top + 18, pn->p[0].op);
    axes(fp, pn);
    classes(fp, pn);
    if (!pn->have_y)
        fprintf(fp, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" "
                "fill=\"#a00\">nothing measured</text>\n", LEFT + PW / 2,
                plot_top(pn) + PH / 2.0);
    series_lines(fp, pn);
    crossovers(fp, pn);
    auto_strip(fp, pn);
    legend(fp, pn);
    notes(fp, pn);
    fputs("</g>\n", fp);
}

/* "model name" of /proc/cpuinfo, or "unknown CPU". */
static void cpu_model(char *buf, size_t len)
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

int mpce_bench_plot_svg(const struct mpce_bench_plot *p, FILE *fp)
{
    /* Panels: runs of points of one op, in the sweep's order. */
    struct panel *pn = calloc(p->n ? p->n : 1, sizeof(*pn));
    if (!pn)
        return -1;
    size_t np = 0;
    double height = HEAD;
    for (size_t i = 0; i < p->n; i++) {
        if (i == 0 || strcmp(p->p[i].op, p->p[i - 1].op) != 0) {
            pn[np].p = &p->p[i];
            np++;
        }
        pn[np - 1].n++;
    }
    for (size_t k = 0; k < np; k++) {
        layout(&pn[k]);
        pn[k].top = height;
        height += panel_height(&pn[k]);
    }

    char cpu[256], date[64];
    cpu_model(cpu, sizeof(cpu));
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm))
        strftime(date, sizeof(date), "%Y-%m-%d %H:%M", &tm);
    else
        snprintf(date, sizeof(date), "unknown date");

    fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
            "height=\"%.0f\" viewBox=\"0 0 %d %.0f\" font-family=\"sans-serif\">\n", W, height,
            W, height);
    fprintf(fp, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n");
    fprintf(fp, "<text x=\"%d\" y=\"26\" font-size=\"17\" font-weight=\"bold\">mpcengine bench: "
            "time per unit against shape, per implementation &#8212; ", LEFT - 60);
    esc(fp, cpu, 80);
    fprintf(fp, ", %s</text>\n", date);
    fprintf(fp, "<text x=\"%d\" y=\"46\" font-size=\"11\" fill=\"#555\">Each point is one "
            "row of the harness: every usable implementation side by side, interleaved, "
            "median of %u rounds of the best of %u window%s of at least %g ms; lower is faster."
            "</text>\n", LEFT - 60, p->rounds, p->windows, p->windows == 1 ? "" : "s",
            p->window_s * 1e3);
    fprintf(fp, "<text x=\"%d\" y=\"60\" font-size=\"11\" fill=\"#555\">Dashed verticals: "
            "the engine's size classes (64, 4096, 262144 work elements). Strip: what auto "
            "resolves to at each point.</text>\n", LEFT - 60);
    for (size_t k = 0; k < np; k++)
        panel(fp, &pn[k]);
    fputs("</svg>\n", fp);
    free(pn);
    return ferror(fp) ? -1 : 0;
}
