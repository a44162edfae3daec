/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `mpcengine-probe crossover`: where a device implementation starts to win
 * inside a row's size class. A GPU pays a fixed cost per call (launches,
 * transfers, synchronisation) that a large batch pays back and a small one
 * does not, so its row alone would pin it for the whole class or for none
 * of it. Here it is timed end to end on host memory (each call submitted
 * with a completion and waited for, as "auto" runs it on host pointers)
 * against the row's best host implementation, at sizes doubling from the
 * class's lower bound to its top (the large class: four times its lower
 * bound), scanning down from the top:
 *
 *   - it does not win at the top (probe_clears against the host's spread):
 *     no crossover, one size timed;
 *   - it wins at every size down to the class's lower bound: it wins the
 *     whole class (crossover = the lower bound);
 *   - else it wins from the size above the first one it loses at, and one
 *     more size between those two (their geometric mean, rounded to the
 *     shape's unit) halves the bracket: the crossover is that size if it
 *     wins there too, else the size above.
 *
 * So a row costs one size when the device loses at the top, and at most
 * log2(top / bottom) + 2 sizes (medium: 7, large: 4), each timed as one
 * interleaved pair with the effort's rounds and windows. Each size's
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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/runtime/knobs.h"
#include "tools/bench/bench.h"
#include "tools/probe/probe.h"

#define MAX_POINTS 24

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

/* One size: 1 when the device wins there, 0 when it does not, -1 when it
 * could not be run (why says; *wrong when its output differed). */
static int point(const struct mpce_slot *dev, const struct mpce_slot *host,
                 const uint32_t *host_knobs, const struct probe_row *row, uint64_t elements,
                 const struct mpce_bench_timing *t, double *ratio, int *wrong, char *why,
                 size_t len, double *spread)
{
    struct mpce_bench_shape s;
    if (mpce_bench_shape_at(row->bench_op, row->shape, elements, &s) != 0) {
        snprintf(why, len, "no %s shape of %" PRIu64 " work elements", row->bench_op, elements);
        return -1;
    }
    struct mpce_bench_pair p;
    if (mpce_bench_pair(dev, NULL, host, host_knobs, &s, t, &p) != MPCE_OK) {
        snprintf(why, len, "%s", p.why);
        *wrong = p.wrong;
        return -1;
    }
    *ratio = p.median[0] > 0 ? p.median[1] / p.median[0] : 0;
    *spread = p.spread[1];
    return p.median[1] > 0 && probe_clears(1.0 - p.median[0] / p.median[1], p.spread[1]);
}

static void crossover_of(mpce_engine *e, const struct probe_opts *o, const char *key,
                         const char *arg)
{
    struct probe_row row;
    char dev_name[96], why[600];
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
        struct mpce_bench_timing t;
        probe_timing(o->effort, &t);
        struct xover x = {.key = key};
        t.on_enter = say_enter;
        t.on_enter_arg = &x;
        const uint32_t *hk = has_knobs ? host_knobs : NULL;
        uint64_t lo, top, sizes[MAX_POINTS];
        mpce_bench_class_span(row.size_class, &lo, &top);
        size_t n = 0;
        for (uint64_t s = lo; s <= top && n < MAX_POINTS; s *= 2) {
            struct mpce_bench_shape probe_shape;
            if (mpce_bench_shape_at(row.bench_op, row.shape, s, &probe_shape) == 0)
                sizes[n++] = s;
        }
        double ratio = 0, top_ratio = 0, lost_ratio = 0, won_ratio = 0, spread = 0;
        double lost_spread = 0;
        int wrong = 0, r = -1;
        size_t k = n;
        /* Down from the top while the device wins. */
        while (k > 0) {
            r = point(dev, host, hk, &row, sizes[k - 1], &t, &ratio, &wrong, why, sizeof(why),
                      &spread);
            if (r < 0)
                break;
            if (k == n)
                top_ratio = ratio;
            if (r == 0) {
                lost_ratio = ratio;
                lost_spread = spread;
                break;
            }
            won_ratio = ratio;
            k--;
        }
        char verdict[700];
        if (n == 0) {
            say(key, dev_name, 0, "not searched: no shape of this row's op fits its class");
        } else if (r < 0 && wrong) {
            /* The host is this search's reference (checked against the
             * built-in one at the row's shape): the device is wrong for
             * the row, and no crossover rests on it. */
            say_wrong(key, dev_name, sizes[k - 1], why);
            snprintf(verdict, sizeof(verdict), "no crossover: outputs differ at %" PRIu64
                     " work elements: %.400s", sizes[k - 1], why);
            say(key, dev_name, 0, verdict);
        } else if (r < 0 && k < n) {
            snprintf(verdict, sizeof(verdict), "%s beats %s by more than its spread from %"
                     PRIu64 " work elements (%.2fx there, %.2fx at the class's top, %" PRIu64
                     "); %" PRIu64 " could not be run: %.300s", dev_name, slash + 1, sizes[k],
                     won_ratio, top_ratio, sizes[n - 1], sizes[k - 1], why);
            say(key, dev_name, sizes[k], verdict);
        } else if (r < 0) {
            snprintf(verdict, sizeof(verdict), "not searched further: %.400s", why);
            say(key, dev_name, 0, verdict);
        } else if (k == n) {
            snprintf(verdict, sizeof(verdict), "%s does not beat %s by more than its spread "
                     "up to the class's top, %" PRIu64 " work elements (%.3gx there, the "
                     "host's spread %.1f %%): no crossover", dev_name, slash + 1, sizes[n - 1],
                     lost_ratio, 100.0 * lost_spread);
            say(key, dev_name, 0, verdict);
        } else if (k == 0) {
            snprintf(verdict, sizeof(verdict), "%s beats %s at every size tried, %" PRIu64
                     " to %" PRIu64 " work elements (%.2fx at the top): the whole class",
                     dev_name, slash + 1, sizes[0], sizes[n - 1], top_ratio);
            say(key, dev_name, sizes[0], verdict);
        } else {
            /* Lost at sizes[k - 1], won at sizes[k]: one size between. */
            uint64_t from = sizes[k], lost = sizes[k - 1];
            struct mpce_bench_shape us;
            uint64_t per = 1;
            if (mpce_bench_shape_at(row.bench_op, row.shape, lost, &us) == 0 &&
                mpce_bench_work_elements(&us) > 0) {
                /* The unit: elements of one count (a polynomial's N, mmo's m). */
                for (uint64_t d = 1; d <= lost; d *= 2) {
                    struct mpce_bench_shape ds;
                    if (mpce_bench_shape_at(row.bench_op, row.shape, d, &ds) == 0) {
                        per = d;
                        break;
                    }
                }
            }
            uint64_t mid = (uint64_t)((double)lost * 1.41421356237);
            mid -= mid % per;
            double mid_ratio = 0;
            int rm = -1;
            char mwhy[600] = "";
            if (mid > lost && mid < from)
                rm = point(dev, host, hk, &row, mid, &t, &mid_ratio, &wrong, mwhy,
                           sizeof(mwhy), &spread);
            if (rm < 0 && wrong) {
                say_wrong(key, dev_name, mid, mwhy);
                snprintf(verdict, sizeof(verdict), "no crossover: outputs differ at %" PRIu64
                         " work elements: %.400s", mid, mwhy);
                say(key, dev_name, 0, verdict);
            } else {
                uint64_t at = rm == 1 ? mid : from;
                char between[120] = "";
                if (rm == 0)
                    snprintf(between, sizeof(between), ", and %.2fx at %" PRIu64, mid_ratio,
                             mid);
                snprintf(verdict, sizeof(verdict), "%s beats %s by more than its spread from "
                         "%" PRIu64 " work elements (%.2fx there, %.2fx at the class's top, "
                         "%" PRIu64 "; %.2fx at %" PRIu64 "%s, where it does not)", dev_name,
                         slash + 1, at, rm == 1 ? mid_ratio : won_ratio, top_ratio,
                         sizes[n - 1], lost_ratio, lost, between);
                say(key, dev_name, at, verdict);
            }
        }
    }
    printf("done %s\n", key);
    fflush(stdout);
}

int probe_crossover(mpce_engine *e, const struct probe_opts *o)
{
    return probe_each_winner(e, o, "crossover", crossover_of);
}
