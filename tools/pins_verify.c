/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpcengine pins --verify: each current row's winner against a fresh
 * side-by-side run of every implementation at the row's shape (the rows
 * `mpcengine bench` prints). A winner that is not the fastest there, by
 * more than that run's noise (its spread across rounds, and at least 1 %),
 * is reported: the pins are stale in a way no signature shows (a noisy
 * tune, a machine under other load then), and `mpcengine tune --force`
 * measures again. A device (asynchronous) winner, and a row's crossover,
 * are timed as the tuner timed them (tools/bench/bench_pair.c): the device
 * end to end on host memory against the row's best host implementation, at
 * the row's shape for a device winner, and at the crossover (where the
 * device must win) and half of it when that is still in the row's class
 * (where the host must).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "engine/internal.h"
#include "engine/selector/pins.h"
#include "engine/selector/selector.h"
#include "tools/bench/bench.h"
#include "tools/bench/bench_public.h"
#include "tools/cli.h"
#include "tools/cli_engine.h"

/* The fastest implementation of a row and the winner's figures. */
struct verify_row {
    mpce_engine *e;
    const char *winner;
    char fastest[96];
    double fastest_s, winner_s, winner_noise;
};

static int take_row(const mpce_bench_row *row, void *arg)
{
    struct verify_row *v = arg;
    /* Implementations only: peers and AES floors are not "auto"'s to pick. */
    if (row->skipped || mpce_registry_find(v->e, row->impl) == NULL)
        return 0;
    if (!v->fastest[0] || row->median_s < v->fastest_s) {
        snprintf(v->fastest, sizeof(v->fastest), "%s", row->impl);
        v->fastest_s = row->median_s;
    }
    if (strcmp(row->impl, v->winner) == 0) {
        v->winner_s = row->median_s;
        v->winner_noise = row->median_s > 0 ? (row->max_s - row->min_s) / row->median_s : 0;
    }
    return 0;
}

static int device_slot(const struct mpce_slot *s)
{
    return (s->flags & MPCE_IMPL_ASYNC) || (s->memory & MPCE_MEM_DEVICE);
}

/* The row's best host implementation that ran correctly: the winner when it
 * is one, else the fastest. */
static struct mpce_slot *best_host(mpce_engine *e, const struct mpce_pins_row *row)
{
    struct mpce_slot *best = NULL;
    double best_s = 0;
    for (size_t i = 0; i < row->n_cands; i++) {
        const struct mpce_pins_cand *c = &row->cands[i];
        struct mpce_slot *s = mpce_registry_find(e, c->impl);
        if (s == NULL || device_slot(s) ||
            (strcmp(c->status, "ok") != 0 && strcmp(c->status, "screened") != 0))
            continue;
        if (strcmp(c->impl, row->winner) == 0)
            return s;
        if (!best || c->median < best_s) {
            best = s;
            best_s = c->median;
        }
    }
    return best;
}

/* dev against host at `elements` of the row's shape (0: the shape itself);
 * device_should: whether the device is meant to win there. 1 when it
 * holds or is within the run's noise, 0 when not, -1 when not run. */
static int verify_pair(const struct mpce_pins_row *row, const char *op,
                       const struct mpce_slot *dev, const struct mpce_slot *host,
                       uint64_t elements, int device_should, const char *what)
{
    struct mpce_bench_shape s;
    struct mpce_bench_pair pr;
    struct mpce_bench_timing t = {.rounds = 7, .windows = 3, .window_s = 0.002};
    char label[96];
    snprintf(label, sizeof(label), "%s %s", row->key, what);
    int ok = elements ? mpce_bench_shape_at(op, row->shape, elements, &s)
                      : (mpce_bench_shape_parse(op, row->shape, &s) == MPCE_OK ? 0 : -1);
    if (ok != 0) {
        printf("  %-28s not run: no %s shape of %llu work elements\n", label, op,
               (unsigned long long)elements);
        return -1;
    }
    if (mpce_bench_pair(dev, NULL, host, NULL, &s, &t, &pr) != MPCE_OK) {
        printf("  %-28s not run: %s\n", label, pr.why);
        return -1;
    }
    const int k = device_should ? 0 : 1; /* the one meant to be faster */
    const struct mpce_slot *pinned = device_should ? dev : host;
    const struct mpce_slot *other = device_should ? host : dev;
    double gap = pr.median[1 - k] > 0 ? pr.median[k] / pr.median[1 - k] - 1.0 : 0;
    double noise = pr.spread[k] > 0.01 ? pr.spread[k] : 0.01;
    const char *verdict = gap <= 0 ? "fastest" : gap <= noise ? "within the run's noise"
                                                              : "NOT the fastest";
    printf("  %-28s pinned %-22s against %-22s gap %5.1f %%  noise %4.1f %%  %s\n", label,
           pinned->impl->name, other->impl->name, 100.0 * (gap > 0 ? gap : 0),
           100.0 * pr.spread[k], verdict);
    return gap <= noise;
}

/* A device winner at the row's shape, then the row's crossover. Counts
 * into *checked and *off. */
static void verify_device(mpce_engine *e, const struct mpce_pins_row *row, const char *op,
                          size_t *checked, size_t *off)
{
    struct mpce_slot *w = mpce_registry_find(e, row->winner);
    struct mpce_slot *dev = row->crossover ? mpce_registry_find(e, row->crossover_impl) : NULL;
    struct mpce_slot *host = best_host(e, row);
    if (host == NULL) {
        printf("  %-28s not run: no host implementation ran correctly in the row\n",
               row->key);
        return;
    }
    int rc;
    if (w && device_slot(w) && (rc = verify_pair(row, op, w, host, 0, 1, "(device)")) >= 0) {
        (*checked)++;
        *off += rc == 0;
    }
    if (dev == NULL)
        return;
    char what[64];
    snprintf(what, sizeof(what), "at %llu", (unsigned long long)row->crossover);
    if ((rc = verify_pair(row, op, dev, host, row->crossover, 1, what)) >= 0) {
        (*checked)++;
        *off += rc == 0;
    }
    unsigned v, sc;
    enum mpce_op_id id;
    uint64_t lo, top;
    if (mpce_row_parse(row->key, &id, &v, &sc) != 0)
        return;
    mpce_bench_class_span(sc, &lo, &top);
    /* Half the crossover, rounded down to a size of the row's shape (a
     * bracketed crossover is an odd multiple of a polynomial's N, say). */
    const uint64_t per = mpce_bench_count_unit(op, row->shape);
    uint64_t half = row->crossover / 2;
    if (per > 1)
        half -= half % per;
    if (half < lo || half == 0)
        return;
    snprintf(what, sizeof(what), "at %llu", (unsigned long long)half);
    if ((rc = verify_pair(row, op, dev, host, half, 0, what)) >= 0) {
        (*checked)++;
        *off += rc == 0;
    }
}

int cli_pins_verify(mpce_engine *e, const struct mpce_pins *p, const char *path)
{
    size_t checked = 0, off = 0;
    char cpu[512];
    mpce_signature_cpu(cpu, sizeof(cpu));
    printf("verifying %s against a side-by-side run at each row's shape (%s)\n", path, cpu);
    for (size_t i = 0; i < p->n_rows; i++) {
        const struct mpce_pins_row *row = &p->rows[i];
        char why[512], op[64];
        if (!row->winner[0] || !mpce_selector_row_current(e, p, row, why, sizeof(why)))
            continue;
        mpce_bench_row_op(row->key, op, sizeof(op));
        const struct mpce_slot *w = mpce_registry_find(e, row->winner);
        if ((w && device_slot(w)) || row->crossover) {
            verify_device(e, row, op, &checked, &off);
            if (w && device_slot(w))
                continue;
        }
        struct verify_row v = {.e = e, .winner = row->winner};
        mpce_bench_options o = {.struct_size = sizeof(o), .op = op, .shape = row->shape,
                                .rounds = 7, .windows = 3, .window_s = 0.002};
        if (mpce_bench_run(e, &o, take_row, &v) != MPCE_OK || !v.fastest[0] || !v.winner_s) {
            char detail[1024];
            printf("  %-28s not run: %s\n", row->key,
                   cli_engine_detail(cli_last_error_or("the winner did not run"), detail,
                                     sizeof(detail)));
            continue;
        }
        checked++;
        double gap = v.winner_s / v.fastest_s - 1.0;
        double noise = v.winner_noise > 0.01 ? v.winner_noise : 0.01;
        const char *verdict = strcmp(v.fastest, row->winner) == 0 ? "fastest"
                              : gap <= noise                     ? "within the run's noise"
                                                                 : "NOT the fastest";
        off += gap > noise && strcmp(v.fastest, row->winner) != 0;
        printf("  %-28s pinned %-22s fastest %-22s gap %5.1f %%  noise %4.1f %%  %s\n",
               row->key, row->winner, v.fastest, 100.0 * gap, 100.0 * v.winner_noise, verdict);
    }
    printf("%zu rows checked, %zu not the fastest beyond the noise%s\n", checked, off,
           off ? ": `mpcengine tune --force` measures them again" : "");
    return off ? CLI_EXIT_ENGINE : CLI_EXIT_OK;
}
