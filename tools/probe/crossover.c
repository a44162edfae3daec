/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `mpcengine-probe crossover`: where a device implementation starts to win
 * inside a row's size class. A GPU pays a fixed cost per call (launches,
 * transfers, synchronisation) that a large batch pays back and a small one
 * does not, so its row alone would pin it for the whole class or for none
 * of it. Here it is timed end to end on host memory (each call submitted
 * with a completion and waited for, as "auto" runs it on host pointers)
 * against the row's best host implementation, at sizes doubling from the
 * class's lower bound to its top (mpce_bench_class_span), scanning down
 * from the top:
 *
 *   - it wins at every size down to the class's lower bound: it wins the
 *     whole class (crossover = the lower bound);
 *   - it wins at the top but loses lower down: it wins from the size above
 *     the first one it loses at, and one more size between those two
 *     (their geometric mean, rounded to the shape's unit) halves the
 *     bracket: the crossover is that size if it wins there too, else the
 *     size above;
 *   - it does not win at the top (probe_clears against the host's spread):
 *     in the bounded classes, no crossover (the next class up measures the
 *     larger calls). The large class has no top, and a GPU's fixed cost is
 *     often paid back only by batches far above the class's lower bound (a
 *     2048-polynomial NTT batch of N = 4096 is 2^23 words), so there the
 *     search goes on doubling, up to XOVER_CEILING work elements, the
 *     largest size of the op's shape or a host call of more than
 *     XOVER_HOST_CALL_BUDGET_S, and brackets the first size it wins
 *     at in the same way; no win up to there is no crossover, and says up
 *     to where it was looked for.
 *
 * So a row costs one size when the device loses at a bounded class's top,
 * at most log2(top / bottom) + 2 sizes inside a class (medium: 7, large:
 * 4), and at most 5 more above the large class's top; each is timed as
 * one interleaved pair with the effort's rounds and windows. Each size's
 * outputs are compared first; where they differ the search stops with no
 * crossover, and the device is reported wrong for the row (xwrong): the
 * host is its reference, checked against the built-in one at the row's
 * shape, and an implementation that disagrees with it anywhere in the class
 * must not serve the class (the supervisor writes it as a "wrong"
 * candidate, which "auto" never tries for the row).
 *
 * Rows: KEY=DEVICE/HOST[:KNOB=VALUE...] (the host with its pinned knob
 * values). Lines: xwrong KEY DEVICE WHY when the outputs differ, then
 * xover KEY DEVICE ELEMENTS VERDICT, ELEMENTS 0 when none.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/runtime/knobs.h"
#include "tools/bench/bench.h"
#include "tools/probe/probe.h"

#define MAX_POINTS 24

/* How far above the large class's top the search goes, in work elements:
 * 16 times the top (a batch of 4096 polynomials of N = 4096, 2^23 AES
 * blocks of mmo with m = 2). Each size above the top costs the host side
 * a call of that many elements per round, so the ceiling bounds the
 * search's time and memory on the machine being tuned. */
#define XOVER_CEILING (UINT64_C(1) << 24)
/* And no larger size once a host call of the last one took this long: the
 * ops whose elements are heavy (a DPF key, an LPN output) reach it first,
 * the PRG's blocks never. */
#define XOVER_HOST_CALL_BUDGET_S 0.25

struct xover {
    const char *key;
    const struct mpce_bench_cand *last;
};

static void say_enter(void *arg, const struct mpce_bench_cand *c)
{
    struct xover *x = arg;
    if (x->last == c)
        return;
    x->last = c;
    printf("enter %s %s\n", x->key, c->name);
    fflush(stdout);
}

/* The device's outputs differ from the host's: it is wrong for this row. */
static void say_wrong(const char *key, const char *dev, uint64_t elements, const char *why)
{
    printf("xwrong %s %s its outputs differ from the host's at %" PRIu64
           " work elements: %.400s\n", key, dev, elements, why);
    fflush(stdout);
}

static void say(const char *key, const char *dev, uint64_t elements, const char *why)
{
    printf("xover %s %s %" PRIu64 " %s\n", key, dev, elements, why);
    fflush(stdout);
}

/* One row's search: the pair timed and what it has seen. */
struct search {
    const char *key, *dev_name, *host_name;
    const struct mpce_slot *dev, *host;
    const uint32_t *host_knobs;
    const struct probe_row *row;
    struct mpce_bench_timing t;
    /* The last point: its ratio (host time / device time) and spread; why
     * and wrong when it could not be run. */
    double ratio, spread, host_s;
    int wrong;
    char why[600];
};

/* One size: 1 when the device wins there, 0 when it does not, -1 when it
 * could not be run (s->why says; s->wrong when its output differed), -2
 * when the size is not one of the row's shapes. */
static int point(struct search *s, uint64_t elements)
{
    struct mpce_bench_shape shape;
    s->ratio = s->spread = s->host_s = 0;
    s->wrong = 0;
    if (mpce_bench_shape_at(s->row->bench_op, s->row->shape, elements, &shape) != 0) {
        snprintf(s->why, sizeof(s->why), "no %s shape of %" PRIu64 " work elements",
                 s->row->bench_op, elements);
        return -2;
    }
    struct mpce_bench_pair p;
    if (mpce_bench_pair(s->dev, NULL, s->host, s->host_knobs, &shape, &s->t, &p) != MPCE_OK) {
        snprintf(s->why, sizeof(s->why), "%s", p.why);
        s->wrong = p.wrong;
        return -1;
    }
    s->ratio = p.median[0] > 0 ? p.median[1] / p.median[0] : 0;
    s->spread = p.spread[1];
    s->host_s = p.median[1];
    return p.median[1] > 0 && probe_clears(1.0 - p.median[0] / p.median[1], p.spread[1]);
}

/* The outputs differed at `elements`: no crossover rests on this device.
 * The host is the search's reference (checked against the built-in one at
 * the row's shape). */
static void wrong_at(const struct search *s, uint64_t elements)
{
    char verdict[700];
    say_wrong(s->key, s->dev_name, elements, s->why);
    snprintf(verdict, sizeof(verdict), "no crossover: outputs differ at %" PRIu64
             " work elements: %.400s", elements, s->why);
    say(s->key, s->dev_name, 0, verdict);
}

/* Lost at `lost` (ratio lost_ratio there), won at `from` (won_ratio): one
 * size between, then the verdict. context says where else it was timed. */
static void bracket(struct search *s, uint64_t lost, double lost_ratio, uint64_t from,
                    double won_ratio, const char *context)
{
    /* A DPF domain's sizes are powers of two: none between. */
    const uint64_t per = mpce_bench_count_unit(s->row->bench_op, s->row->shape);
    uint64_t mid = per ? (uint64_t)((double)lost * 1.41421356237) : 0;
    if (per)
        mid -= mid % per;
    int rm = -1, tried = 0;
    if (mid > lost && mid < from) {
        tried = 1;
        rm = point(s, mid);
        if (rm < 0 && s->wrong) {
            wrong_at(s, mid);
            return;
        }
    }
    const uint64_t at = rm == 1 ? mid : from;
    char between[120] = "", verdict[700];
    if (rm == 0)
        snprintf(between, sizeof(between), ", nor at %" PRIu64 " (%.2fx)", mid, s->ratio);
    else if (rm < 0 && tried)
        snprintf(between, sizeof(between), "; %" PRIu64 " between could not be run: %.60s",
                 mid, s->why);
    snprintf(verdict, sizeof(verdict), "%s beats %s by more than its spread from %" PRIu64
             " work elements (%.2fx there%s; %.2fx at %" PRIu64 ", where it does not%s)",
             s->dev_name, s->host_name, at, rm == 1 ? s->ratio : won_ratio, context,
             lost_ratio, lost, between);
    say(s->key, s->dev_name, at, verdict);
}

/* Lost at the large class's top (ratio top_ratio): on up, doubling. */
static void above_top(struct search *s, uint64_t top, double top_ratio, double top_spread)
{
    uint64_t lost = top;
    double lost_ratio = top_ratio, lost_spread = top_spread;
    char verdict[700], context[160];
    for (uint64_t size = 2 * top; size <= XOVER_CEILING; size *= 2) {
        const int r = point(s, size);
        if (r == -2)
            break; /* past the op's largest shape */
        if (r < 0 && s->wrong) {
            wrong_at(s, size);
            return;
        }
        if (r < 0) {
            snprintf(verdict, sizeof(verdict), "%s does not beat %s by more than its spread "
                     "from the class's top, %" PRIu64 ", to %" PRIu64 " work elements (%.3gx "
                     "there); %" PRIu64 " could not be run: %.300s: no crossover", s->dev_name,
                     s->host_name, top, lost, lost_ratio, size, s->why);
            say(s->key, s->dev_name, 0, verdict);
            return;
        }
        if (r == 1) {
            if (lost == top)
                snprintf(context, sizeof(context), ", above the class's top");
            else
                snprintf(context, sizeof(context), ", above the class's top, %" PRIu64
                         ", where it is %.2fx", top, top_ratio);
            bracket(s, lost, lost_ratio, size, s->ratio, context);
            return;
        }
        lost = size;
        lost_ratio = s->ratio;
        lost_spread = s->spread;
        if (s->host_s > XOVER_HOST_CALL_BUDGET_S && size < XOVER_CEILING) {
            snprintf(verdict, sizeof(verdict), "%s does not beat %s by more than its spread up "
                     "to %" PRIu64 " work elements (%.3gx there, the host's spread %.1f %%), "
                     "where a host call takes %.2f s: searched no further (calls of over %.2f "
                     "s): no crossover", s->dev_name, s->host_name, lost, lost_ratio,
                     100.0 * lost_spread, s->host_s, XOVER_HOST_CALL_BUDGET_S);
            say(s->key, s->dev_name, 0, verdict);
            return;
        }
    }
    snprintf(verdict, sizeof(verdict), "%s does not beat %s by more than its spread up to %"
             PRIu64 " work elements, %" PRIu64 " times the class's top (%.3gx there, the "
             "host's spread %.1f %%): no crossover", s->dev_name, s->host_name, lost,
             lost / top, lost_ratio, 100.0 * lost_spread);
    say(s->key, s->dev_name, 0, verdict);
}

static void search_row(struct search *s)
{
    uint64_t lo, top, sizes[MAX_POINTS];
    mpce_bench_class_span(s->row->size_class, &lo, &top);
    size_t n = 0;
    for (uint64_t size = lo; size <= top && n < MAX_POINTS; size *= 2) {
        struct mpce_bench_shape shape;
        if (mpce_bench_shape_at(s->row->bench_op, s->row->shape, size, &shape) == 0)
            sizes[n++] = size;
    }
    char verdict[700], context[160];
    if (n == 0) {
        say(s->key, s->dev_name, 0, "not searched: no shape of this row's op fits its class");
        return;
    }
    /* Down from the top while the device wins. */
    double top_ratio = 0, won_ratio = 0;
    size_t k = n;
    int r = -1;
    while (k > 0) {
        r = point(s, sizes[k - 1]);
        if (r < 0)
            break;
        if (k == n)
            top_ratio = s->ratio;
        if (r == 0)
            break;
        won_ratio = s->ratio;
        k--;
    }
    if (r < 0 && s->wrong) {
        wrong_at(s, sizes[k - 1]);
    } else if (r < 0 && k < n) {
        snprintf(verdict, sizeof(verdict), "%s beats %s by more than its spread from %" PRIu64
                 " work elements (%.2fx there, %.2fx at the class's top, %" PRIu64 "); %"
                 PRIu64 " could not be run: %.300s", s->dev_name, s->host_name, sizes[k],
                 won_ratio, top_ratio, sizes[n - 1], sizes[k - 1], s->why);
        say(s->key, s->dev_name, sizes[k], verdict);
    } else if (r < 0) {
        snprintf(verdict, sizeof(verdict), "not searched further: %.400s", s->why);
        say(s->key, s->dev_name, 0, verdict);
    } else if (k == n && s->row->size_class == MPCE_SIZE_CLASSES - 1) {
        above_top(s, sizes[n - 1], s->ratio, s->spread);
    } else if (k == n) {
        snprintf(verdict, sizeof(verdict), "%s does not beat %s by more than its spread up to "
                 "the class's top, %" PRIu64 " work elements (%.3gx there, the host's spread "
                 "%.1f %%): no crossover", s->dev_name, s->host_name, sizes[n - 1], s->ratio,
                 100.0 * s->spread);
        say(s->key, s->dev_name, 0, verdict);
    } else if (k == 0) {
        snprintf(verdict, sizeof(verdict), "%s beats %s at every size tried, %" PRIu64 " to %"
                 PRIu64 " work elements (%.2fx at the top): the whole class", s->dev_name,
                 s->host_name, sizes[0], sizes[n - 1], top_ratio);
        say(s->key, s->dev_name, sizes[0], verdict);
    } else {
        snprintf(context, sizeof(context), ", %.2fx at the class's top, %" PRIu64, top_ratio,
                 sizes[n - 1]);
        bracket(s, sizes[k - 1], s->ratio, sizes[k], won_ratio, context);
    }
}

static void crossover_of(mpce_engine *e, const struct probe_opts *o, const char *key,
                         const char *arg)
{
    struct probe_row row;
    char dev_name[96];
    const char *slash = strchr(arg, '/');
    size_t dlen = slash ? (size_t)(slash - arg) : 0;
    snprintf(dev_name, sizeof(dev_name), "%.*s", (int)(dlen < 95 ? dlen : 95), arg);
    printf("enter %s %s\n", key, dev_name);
    fflush(stdout);
    struct mpce_slot *dev = slash ? mpce_registry_find(e, dev_name) : NULL, *host = NULL;
    uint32_t host_knobs[MPCE_KNOB_MAX];
    int has_knobs = 0;
    if (slash && mpce_registry_find_spec(e, slash + 1, "", &host, host_knobs, &has_knobs) !=
                     MPCE_OK)
        host = NULL;
    int skipped = 0;
    for (size_t i = 0; dev && host && i < o->n_skip; i++)
        skipped |= strcmp(o->skip[i], dev->module->path) == 0 ||
                   strcmp(o->skip[i], host->module->path) == 0;
    if (probe_plan_find(key, &row) != 0 || dev == NULL || host == NULL) {
        say(key, slash ? dev_name : arg, 0, "not searched: unknown row or implementation");
    } else if (skipped) {
        say(key, dev_name, 0, "not searched: a module was blacklisted while tuning");
    } else {
        struct search s = {.key = key, .dev_name = dev_name, .host_name = slash + 1,
                           .dev = dev, .host = host, .row = &row,
                           .host_knobs = has_knobs ? host_knobs : NULL};
        struct xover x = {.key = key};
        probe_timing(o->effort, &s.t);
        s.t.on_enter = say_enter;
        s.t.on_enter_arg = &x;
        search_row(&s);
    }
    printf("done %s\n", key);
    fflush(stdout);
}

int probe_crossover(mpce_engine *e, const struct probe_opts *o)
{
    return probe_each_winner(e, o, "crossover", crossover_of);
}
