/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SVG of mpcengine bench --plot: the sweep (bench_sweep.c) as time per
 * unit against work elements, a panel per op, with the engine's size
 * classes, what "auto" resolved to at each point and the crossovers of the
 * fastest implementation marked. Plain fprintf: no libraries, not even libm
 * (the command does not link it), hence the small log helpers.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/bench/bench.h"
#include "tools/bench/bench_sweep.h"

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
    return -floor_int(-x);
}

/* v's place between lo and hi, as a length out of len: either axis. */
static double along(double v, double lo, double hi, double len)
{
    return (v - lo) / (hi - lo) * len;
}

/* The fewest work elements of size class c + 1: the engine's boundaries,
 * taken from mpce_size_class itself so that the plot follows them. */
static uint64_t class_bound(unsigned c)
{
    uint64_t lo = 0, hi = UINT64_MAX; /* class of lo <= c < class of hi */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (mpce_size_class(mid) > c)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
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
#define TEXT_X 30        /* titles and notes, left of the plot area */
#define LEFT 90          /* the plot area's left edge */
#define PW 620           /* its width */
#define PH 300           /* its height */
#define LEGEND_X 740
#define HEAD 70          /* the title */
/* Down a panel from its top: its title, then the plot area, the x axis's
 * labels, the "auto" strip and its labels, then the points and notes. */
#define PLOT_Y 46
#define STRIP_Y (PLOT_Y + PH + 44)
#define NOTES_Y (STRIP_Y + 16 + 30)
#define NOTE_LINE 13
#define MAX_NOTES 12
#define MAX_SERIES 32
#define MAX_GROUPS 64

static const char *const palette[] = {
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
    "#e377c2", "#17becf", "#bcbd22", "#393b79", "#637939", "#843c39",
};

#define N_COLORS (sizeof(palette) / sizeof(palette[0]))

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
    const struct mpce_bench_plot_point *point;  /* the op's points, in order of x */
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
static int fastest(const struct mpce_bench_plot_point *pt)
{
    int best = -1;
    for (size_t i = 0; i < pt->n; i++) {
        const struct mpce_bench_plot_cand *c = &pt->cand[i];
        if (!c->skipped && !c->reference && (best < 0 || c->y < pt->cand[best].y))
            best = (int)i;
    }
    return best;
}

/* impl's time at a point, or NULL where it was not measured there. */
static const struct mpce_bench_plot_cand *measured_at(const struct mpce_bench_plot_point *pt,
                                                      const char *impl)
{
    for (size_t i = 0; i < pt->n; i++)
        if (!pt->cand[i].skipped && strcmp(pt->cand[i].impl, impl) == 0)
            return &pt->cand[i];
    return NULL;
}

static size_t points_lines(FILE *fp, const struct panel *pn, double y);

static void layout(struct panel *pn)
{
    /* Series: the implementations, then the references, then what "auto"
     * picked but was not measured; each in order of first appearance. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < pn->n; i++)
            for (size_t j = 0; j < pn->point[i].n; j++) {
                const struct mpce_bench_plot_cand *c = &pn->point[i].cand[j];
                if (!c->skipped && c->reference == pass)
                    add_series(pn, c->impl, pass, 1);
            }
    for (size_t i = 0; i < pn->n; i++)
        if (pn->point[i].auto_impl[0])
            add_series(pn, pn->point[i].auto_impl, 0, 0);
    size_t color = 0;
    for (size_t i = 0; i < pn->ns; i++)
        pn->s[i].color = palette[color++ % N_COLORS];

    /* Notes: candidates not measured, "auto" unresolved, rows left out.
     * x: log2, the class boundaries always in view with two powers of two
     * to spare; y: log10 by decades. */
    double xmin = (double)class_bound(0) / 4;
    double xmax = (double)class_bound(MPCE_SIZE_CLASSES - 2) * 4, ymin = 0, ymax = 0;
    for (size_t i = 0; i < pn->n; i++) {
        const struct mpce_bench_plot_point *pt = &pn->point[i];
        for (size_t j = 0; j < pt->n; j++)
            if (pt->cand[j].skipped)
                add_group(pn, pt->cand[j].impl, pt->cand[j].note, pt->shape);
        if (!pt->auto_impl[0])
            add_group(pn, "auto", pt->auto_why, pt->shape);
        if (pt->error[0])
            add_group(pn, "row not measured", pt->error, pt->shape);

        if ((double)pt->x < xmin)
            xmin = (double)pt->x;
        if ((double)pt->x > xmax)
            xmax = (double)pt->x;
        for (size_t j = 0; j < pt->n; j++) {
            const struct mpce_bench_plot_cand *c = &pt->cand[j];
            if (c->skipped || !(c->y > 0))
                continue;
            if (!pn->have_y || c->y < ymin)
                ymin = c->y;
            if (!pn->have_y || c->y > ymax)
                ymax = c->y;
            pn->have_y = 1;
        }
    }
    pn->notes = points_lines(NULL, pn, 0) + (pn->ng > MAX_NOTES ? MAX_NOTES + 1 : pn->ng);
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
    return NOTES_Y + (double)pn->notes * NOTE_LINE + 24;
}

static double plot_top(const struct panel *pn)
{
    return pn->top + PLOT_Y;
}

static double px(const struct panel *pn, double x)
{
    return LEFT + along(lg2(x), pn->lx0, pn->lx1, PW);
}

static double py(const struct panel *pn, double y)
{
    return plot_top(pn) + PH - along(lg10(y), pn->ly0, pn->ly1, PH);
}

/* Where point i's column is. */
static double point_px(const struct panel *pn, size_t i)
{
    return px(pn, (double)pn->point[i].x);
}

/* References are dashed, in the plot and the legend alike. */
static const char *dash(const struct series *se)
{
    return se->reference ? " stroke-dasharray=\"6,4\"" : "";
}

/* A line of the points and notes under a panel, opened. */
static void note_line(FILE *fp, int x, double y)
{
    fprintf(fp, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" fill=\"#555\">", x, y);
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
            LEFT + PW / 2, bottom + 33, x_title(pn->point[0].op));
    /* y title, rotated */
    fprintf(fp, "<text transform=\"translate(%d,%.1f) rotate(-90)\" text-anchor=\"middle\" "
            "font-size=\"11\">", LEFT - 52, top + PH / 2.0);
    if (pn->point[0].prg)
        fputs("ns per block (median; lower is faster)", fp);
    else {
        esc(fp, pn->point[0].unit, 0);
        fputs(" (median; lower is faster)", fp);
    }
    fputs("</text>\n", fp);
}

/* The size-class boundaries, dashed, and the classes named above the area. */
static void classes(FILE *fp, const struct panel *pn)
{
    double top = plot_top(pn), lo = LEFT;
    for (unsigned c = 0; c < MPCE_SIZE_CLASSES; c++) {
        int last = c + 1 == MPCE_SIZE_CLASSES;
        double hi = last ? LEFT + PW : px(pn, (double)class_bound(c));
        if (!last)
            fprintf(fp, "<line class=\"size-class\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                    "y2=\"%.1f\" stroke=\"#aaa\" stroke-dasharray=\"4,4\"/>\n", hi, top, hi,
                    top + PH);
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\" "
                "fill=\"#777\">%s</text>\n", (lo + hi) / 2, top - 4, mpce_size_class_name(c));
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
        const struct mpce_bench_plot_point *prev = &pn->point[i], *next = &pn->point[i + 1];
        int a = fastest(prev), b = fastest(next);
        if (a < 0 || b < 0 || strcmp(prev->cand[a].impl, next->cand[b].impl) == 0)
            continue;
        /* by how much the new one wins at the next point, if both ran there */
        const struct mpce_bench_plot_cand *old = measured_at(next, prev->cand[a].impl);
        double gain = old ? old->y / next->cand[b].y : 0;
        int tie = gain > 0 && gain < TIE;
        /* midway between the two points on the log axis */
        double x = (point_px(pn, i) + point_px(pn, i + 1)) / 2;
        fprintf(fp, "<g class=\"crossover\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\"/>\n", x, top, x, top + PH,
                tie ? "#bbb" : "#333");
        fprintf(fp, "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" text-anchor=\"end\" "
                "font-size=\"10\" fill=\"%s\">", x + 11, top + 4, tie ? "#999" : "#333");
        esc(fp, prev->cand[a].impl, 0);
        fputs(" &#8594; ", fp);
        esc(fp, next->cand[b].impl, 0);
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
                dash(se));
        for (size_t i = 0; i < pn->n; i++) {
            const struct mpce_bench_plot_cand *c = measured_at(&pn->point[i], se->name);
            if (c)
                fprintf(fp, "%.1f,%.1f ", point_px(pn, i), py(pn, c->y));
        }
        fputs("\"/>\n", fp);
        for (size_t i = 0; i < pn->n; i++) {
            const struct mpce_bench_plot_point *pt = &pn->point[i];
            const struct mpce_bench_plot_cand *c = measured_at(pt, se->name);
            if (!c)
                continue;
            fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" "
                    "stroke=\"%s\"><title>", point_px(pn, i), py(pn, c->y),
                    se->reference ? "#fff" : se->color, se->color);
            esc(fp, se->name, 0);
            fputs(" at ", fp);
            esc(fp, pt->shape, 0);
            fprintf(fp, ": %.4g %s</title></circle>\n", c->y, pt->prg ? "ns/block" : pt->unit);
        }
        fputs("</g>\n", fp);
    }
}

/* Under the axis: a cell per point in the colour of what "auto" picked,
 * outlined in red where that is not the fastest measured implementation;
 * the name written where the choice changes. */
static void auto_strip(FILE *fp, const struct panel *pn)
{
    double y = pn->top + STRIP_Y;
    fprintf(fp, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\">auto</text>\n",
            LEFT - 5, y + 11);
    fprintf(fp, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"14\" fill=\"#f7f7f7\" "
            "stroke=\"#ccc\"/>\n", LEFT, y, PW);
    int row = 0;
    for (size_t i = 0; i < pn->n; i++) {
        const struct mpce_bench_plot_point *pt = &pn->point[i];
        double x = point_px(pn, i);
        double lo = i ? (x + point_px(pn, i - 1)) / 2 : x - 12;
        double hi = i + 1 < pn->n ? (x + point_px(pn, i + 1)) / 2 : x + 12;
        if (lo < LEFT)
            lo = LEFT;
        if (hi > LEFT + PW)
            hi = LEFT + PW;
        int s = pt->auto_impl[0] ? series_of(pn, pt->auto_impl) : -1;
        int f = fastest(pt);
        int off = s >= 0 && f >= 0 && strcmp(pt->cand[f].impl, pt->auto_impl) != 0;
        fprintf(fp, "<rect class=\"auto\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"14\" "
                "fill=\"%s\" stroke=\"%s\" stroke-width=\"%s\"><title>auto at ", lo + 0.5, y,
                hi - lo - 1, s >= 0 ? pn->s[s].color : "#fff", off ? "#e00" : "#fff",
                off ? "2" : "0.5");
        esc(fp, pt->shape, 0);
        fputs(": ", fp);
        esc(fp, pt->auto_impl[0] ? pt->auto_impl : "not resolved", 0);
        if (off) {
            fputs(" (fastest measured: ", fp);
            esc(fp, pt->cand[f].impl, 0);
            fputs(")", fp);
        }
        fputs("</title></rect>\n", fp);
        if (pt->auto_impl[0] &&
            (i == 0 || strcmp(pt->auto_impl, pn->point[i - 1].auto_impl) != 0)) {
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
                se->measured ? "2" : "8", dash(se));
        fprintf(fp, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\">", LEGEND_X + 28, y + 4);
        esc(fp, se->name, 48);
        if (!se->measured)
            fputs(" (auto only)", fp);
        fputs("</text>\n", fp);
    }
    char tie[64];
    snprintf(tie, sizeof(tie), "grey: under %.0f %%, a tie)", (TIE - 1) * 100);
    const char *const key[] = {
        "dashed: reference (peer, AES floor)",
        "solid vertical: the fastest changes, A &#8594; B",
        "(B's speed-up over A at the next point;",
        tie,
        "red cell: auto is not the fastest there",
    };
    for (size_t i = 0; i < sizeof(key) / sizeof(key[0]); i++)
        fprintf(fp, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" fill=\"#777\">%s</text>\n",
                LEGEND_X, y + 6 + 12.0 * (double)i, key[i]);
}

/* The sweep's shapes with their classes, wrapped at about POINTS_WIDTH
 * characters; the number of lines. fp NULL: only count them. */
#define POINTS_WIDTH 170

static size_t points_lines(FILE *fp, const struct panel *pn, double y)
{
    size_t lines = 1, col = 8;
    if (fp) {
        note_line(fp, TEXT_X, y);
        fputs("points: ", fp);
    }
    for (size_t i = 0; i < pn->n; i++) {
        const struct mpce_bench_plot_point *pt = &pn->point[i];
        const char *cls = mpce_size_class_name(mpce_size_class(pt->x));
        size_t len = strlen(pt->shape) + strlen(cls) + 6;
        if (i && col + len > POINTS_WIDTH) {
            lines++;
            col = 8;
            y += NOTE_LINE;
            if (fp) {
                fputs("</text>\n", fp);
                note_line(fp, TEXT_X + 36, y);
            }
        } else if (i && fp) {
            fputs(" | ", fp);
        }
        col += len;
        if (fp) {
            esc(fp, pt->shape, 0);
            fprintf(fp, " (%s)", cls);
        }
    }
    if (fp)
        fputs("</text>\n", fp);
    return lines;
}

static void notes(FILE *fp, const struct panel *pn)
{
    double y = pn->top + NOTES_Y;
    y += (double)(points_lines(fp, pn, y) - 1) * NOTE_LINE;
    for (size_t i = 0; i < pn->ng && i <= MAX_NOTES; i++) {
        y += NOTE_LINE;
        note_line(fp, TEXT_X, y);
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
    fprintf(fp, "<g class=\"panel\" data-op=\"%s\">\n", pn->point[0].op);
    fprintf(fp, "<text x=\"%d\" y=\"%.1f\" font-size=\"14\" font-weight=\"bold\">",
            TEXT_X, pn->top + 18);
    esc(fp, pn->point[0].panel, sizeof(pn->point[0].panel));
    fputs("</text>\n", fp);
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

/* The document's title and what every panel shows. */
static void heading(FILE *fp, const struct mpce_bench_plot *p)
{
    char cpu[256], date[64];
    mpce_bench_cpu_model(cpu, sizeof(cpu));
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm))
        strftime(date, sizeof(date), "%Y-%m-%d %H:%M", &tm);
    else
        snprintf(date, sizeof(date), "unknown date");

    fprintf(fp, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n");
    fprintf(fp, "<text x=\"%d\" y=\"26\" font-size=\"17\" font-weight=\"bold\">mpcengine bench: "
            "time per unit against shape, per implementation &#8212; ", TEXT_X);
    esc(fp, cpu, 80);
    fprintf(fp, ", %s</text>\n", date);
    fprintf(fp, "<text x=\"%d\" y=\"46\" font-size=\"11\" fill=\"#555\">Each point is one "
            "row of the harness: every usable implementation side by side, interleaved, "
            "median of %u rounds of the best of %u window%s of at least %g ms; lower is faster."
            "</text>\n", TEXT_X, p->rounds, p->windows, p->windows == 1 ? "" : "s",
            p->window_s * 1e3);
    fprintf(fp, "<text x=\"%d\" y=\"60\" font-size=\"11\" fill=\"#555\">Dashed verticals: "
            "the engine's size classes (", TEXT_X);
    for (unsigned c = 0; c + 1 < MPCE_SIZE_CLASSES; c++)
        fprintf(fp, "%s%llu", c ? ", " : "", (unsigned long long)class_bound(c));
    fputs(" work elements). Strip: what auto resolves to at each point.</text>\n", fp);
}

int mpce_bench_plot_svg(const struct mpce_bench_plot *p, FILE *fp)
{
    /* Panels: runs of points of one op and variant, in the sweep's order. */
    struct panel *pn = calloc(p->n ? p->n : 1, sizeof(*pn));
    if (!pn)
        return -1;
    size_t np = 0;
    double height = HEAD;
    for (size_t i = 0; i < p->n; i++) {
        if (i == 0 || strcmp(p->point[i].panel, p->point[i - 1].panel) != 0) {
            pn[np].point = &p->point[i];
            np++;
        }
        pn[np - 1].n++;
    }
    for (size_t k = 0; k < np; k++) {
        layout(&pn[k]);
        pn[k].top = height;
        height += panel_height(&pn[k]);
    }

    fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
            "height=\"%.0f\" viewBox=\"0 0 %d %.0f\" font-family=\"sans-serif\">\n", W, height,
            W, height);
    heading(fp, p);
    for (size_t k = 0; k < np; k++)
        panel(fp, &pn[k]);
    fputs("</svg>\n", fp);
    free(pn);
    return ferror(fp) ? -1 : 0;
}
