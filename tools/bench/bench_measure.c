/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Timing: interleaved rounds of windows (DESIGN.md: compare side by side in
 * one run, medians). On a shared machine a burst of load hits whichever
 * candidate is running; interleaving spreads bursts over all of them, the
 * fastest window in a round discards the burst, and the median over rounds
 * discards the rounds a long burst spoiled.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/bench/bench.h"

/* No window repeats a call more often than this (a call of a few ns would
 * otherwise make the loop itself the measurement). */
#define MAX_REPS 100000000.0

/* Sizing grows a batch of calls until it lasts at least this fraction of a
 * window: a call of 10-30 ns timed alone would mostly time the clock. */
#define SIZING_FRACTION 8.0

double mpce_bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void mpce_bench_stats(const double *samples, size_t n, double *median, double *min,
                      double *max)
{
    double sorted[64];
    double *v = n <= 64 ? sorted : malloc(n * sizeof(double));
    if (!v) {
        /* Out of memory for a scratch copy: min and max still hold. */
        v = sorted;
        n = 64;
    }
    memcpy(v, samples, n * sizeof(double));
    for (size_t i = 1; i < n; i++) {
        double x = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
    *min = v[0];
    *max = v[n - 1];
    *median = (n % 2) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    if (v != sorted)
        free(v);
}

static void drop(struct mpce_bench_cand *c, int rc)
{
    c->failed = 1;
    const char *detail = mpce_last_error();
    snprintf(c->why, sizeof(c->why), "failed during the run (%s)%s%.200s",
             mpce_status_name((mpce_status)rc), detail[0] ? ": " : "", detail);
}

static void enter(const struct mpce_bench_timing *t, const struct mpce_bench_cand *c)
{
    if (t->on_enter)
        t->on_enter(t->on_enter_arg, c);
}

/* Seconds per call over one window of reps calls; < 0 if a call failed. */
static double window(struct mpce_bench_cand *c, unsigned long reps)
{
    /* Successful calls leave the error detail alone: empty it so a failure
     * that explains nothing (a peer's) does not show an older one. */
    mpce_bench_error_clear();
    double t0 = mpce_bench_now();
    for (unsigned long i = 0; i < reps; i++) {
        int rc = c->run(c->state);
        if (rc != 0) {
            drop(c, rc);
            return -1;
        }
    }
    return (mpce_bench_now() - t0) / (double)reps;
}

mpce_status mpce_bench_measure(struct mpce_bench_cand *c, size_t n,
                               const struct mpce_bench_timing *t)
{
    unsigned long *reps = calloc(n ? n : 1, sizeof(*reps));
    if (!reps)
        return mpce_error(MPCE_ERR_NOMEM, "benchmark: out of memory");
    for (size_t i = 0; i < n; i++) {
        if (c[i].failed)
            continue;
        c[i].samples = calloc(t->rounds, sizeof(double));
        if (!c[i].samples) {
            free(reps);
            return mpce_error(MPCE_ERR_NOMEM, "benchmark: out of memory");
        }
        /* The warm-up faults pages in and fills caches and predictors. Then
         * batches of 1, 8, 64, ... calls, the first to last an eighth of a
         * window, size the windows: a call of a few ns timed alone would
         * mostly time the clock. */
        enter(t, &c[i]);
        if (window(&c[i], 1) < 0)
            continue;
        unsigned long batch = 1;
        double per = window(&c[i], batch);
        while (per >= 0 && per * (double)batch < t->window_s / SIZING_FRACTION &&
               (double)batch * 8 <= MAX_REPS) {
            batch *= 8;
            per = window(&c[i], batch);
        }
        if (per < 0)
            continue;
        double r = per > 0 ? t->window_s / per + 1 : MAX_REPS;
        reps[i] = (unsigned long)(r > MAX_REPS ? MAX_REPS : r);
    }
    for (unsigned round = 0; round < t->rounds; round++) {
        for (size_t i = 0; i < n; i++) {
            if (c[i].failed)
                continue;
            enter(t, &c[i]);
            double best = INFINITY;
            for (unsigned w = 0; w < t->windows && !c[i].failed; w++) {
                double per = window(&c[i], reps[i]);
                if (per >= 0 && per < best)
                    best = per;
            }
            c[i].samples[round] = best;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (!c[i].failed)
            mpce_bench_stats(c[i].samples, t->rounds, &c[i].median, &c[i].min, &c[i].max);
    free(reps);
    return MPCE_OK;
}
