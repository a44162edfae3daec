/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The probe helper, mpcengine-probe (installed in $(libexecdir)/mpcengine):
 * the selector's measuring, out of the application's process.
 *
 *   plan.c       the rows: one production shape per (op, variant, size class)
 *   worker.c     `measure`: check each candidate's output against the
 *                reference, then time them interleaved; results on stdout
 *   supervise.c  `tune`: run workers, survive the ones a module crashes or
 *                hangs, blacklist that module, decide, write the pins file
 *   gate.c       the decision: a challenger must beat the priority default by
 *                more than the default's spread (probe_clears) and 1 %
 *   knobs.c      `knobs`: a row winner's knob values, measured jointly on the
 *                row's shape, checked to leave outputs unchanged
 *   pipeline.c   `pipeline`: the DPF tree's and the LPN fold's knob values
 *                scored together where they share the cache, as in Ferret
 *   slices.c     `slices`: the pool's threshold, where splitting a call over
 *                the engine's threads starts to pay for a row's winner
 *   crossover.c  `crossover`: where a device implementation starts to beat
 *                the best host one inside a row's size class
 *   vet.c        `vet`: one module's code run alone, step by step, so that
 *                the engine can refuse one that crashes, hangs or leaks
 *                (engine/runtime/vet.h)
 *   probe.c      options and the engine both sides open
 *
 * Worker to supervisor, one line each, flushed:
 *   enter KEY IMPL                   about to call IMPL (so a crash or hang
 *                                    has a name)
 *   cand KEY IMPL STATUS MEDIAN MIN MAX WHY...
 *   done KEY
 */
#ifndef MPCE_TOOLS_PROBE_H
#define MPCE_TOOLS_PROBE_H

#include <stddef.h>

#include "engine/internal.h"
#include "engine/selector/pins.h"
#include "engine/selector/selector.h"
#include "tools/bench/bench.h"

struct probe_opts {
    const char *config;       /* mpce_options of the engine being tuned */
    const char *plugin_path;
    unsigned flags;
    const char *effort;       /* quick, measure, patient */
    const char *primitive;    /* only this primitive's rows; NULL: all */
    int force;                /* tune every planned row, current or not */
    int for_engine;           /* spawned by an engine: detach, lines on stderr */
    char **rows;              /* measure: the row keys */
    size_t n_rows;
    char **skip;              /* measure: module files not to call */
    size_t n_skip;
    int module_fd;            /* vet: the module's descriptor, -1 if none */
    const char *module_path;  /* vet: its path, for messages and the loader */
    long parent;              /* vet: the engine's pid: end with it; 0 if not given */
    unsigned timeout_ms;      /* vet: the engine's [tune] vet_timeout; 0 if not given */
};

/* ---- plan.c ------------------------------------------------------------------ */

struct probe_row {
    char key[96];             /* "ntt.forward.q50.medium" */
    enum mpce_op_id op;
    unsigned variant, size_class;
    char bench_op[24];        /* the harness's op */
    char shape[128];          /* the harness's shape string */
};

/* The rows an effort measures, or -1 for an unknown effort or primitive
 * (with the message printed). *rows is malloc'd. */
int probe_plan(const char *effort, const char *primitive, struct probe_row **rows,
               size_t *count);
/* With the census in dir (selector.h): the classes it counted that the plan
 * lacks are added (*added of them) and the rows ordered most called first. */
int probe_plan_census(const char *dir, const char *primitive, struct probe_row **rows,
                      size_t *count, size_t *added);
/* The row of key in any effort's plan; -1 if none. */
int probe_plan_find(const char *key, struct probe_row *out);

/* Timing per effort. */
struct mpce_bench_timing;
void probe_timing(const char *effort, struct mpce_bench_timing *t);

/* ---- gate.c -------------------------------------------------------------------- */

/* The gate's margin, wherever a change must beat an incumbent (gate.c,
 * knobs.c, pipeline.c): more than the noise, and at least this. */
#define PROBE_MIN_GAIN 0.01

/* Whether a challenger faster by gain (1 - its median / the incumbent's)
 * is faster beyond noise (a spread, below) and by at least PROBE_MIN_GAIN.
 * Noise is a ratio, so the test is one of ratios: the incumbent's median
 * must exceed the challenger's times 1 + noise. A shared machine's noise
 * mostly adds slow rounds; compared with the gain itself, a spread of 85 %
 * (seen on a loaded 2-core machine) kept a pair 4.8x faster (gain 79 %)
 * from ever being pinned. */
static inline int probe_clears(double gain, double noise)
{
    return gain >= PROBE_MIN_GAIN && (1.0 - gain) * (1.0 + noise) < 1.0;
}

/* The gain probe_clears needs to exceed over noise (at least PROBE_MIN_GAIN),
 * for verdicts that say what a challenger needed. */
static inline double probe_needed_gain(double noise)
{
    const double g = noise > 0 ? noise / (1.0 + noise) : 0;
    return g > PROBE_MIN_GAIN ? g : PROBE_MIN_GAIN;
}

/* A candidate's spread: (max - min) / median over its rounds. */
static inline double probe_spread(const struct mpce_bench_cand *c)
{
    return c->median > 0 ? (c->max - c->min) / c->median : 0;
}

/* Fill winner, runner_up and verdict of row from its cands; `order` is the
 * priority order (implementation names) "auto" follows without pins. */
void probe_gate(struct mpce_pins_row *row, const char *const *order, size_t n_order,
                char *winner, char *runner_up, char *verdict, size_t len);

/* ---- worker.c / supervise.c --------------------------------------------------- */

int probe_measure(mpce_engine *e, const struct probe_opts *o);
/* rows are KEY=IMPL: each row's winner. Lines: slice KEY IMPL VALUE VERDICT,
 * VALUE a number of work elements per slice, "never" or "0" (not measured). */
int probe_slices(mpce_engine *e, const struct probe_opts *o);
/* rows are KEY=IMPL: each row's winner. Lines: knobs KEY IMPL PICK VERDICT,
 * PICK KNOB=VALUE[:...] or "-" (the defaults); kwrong KEY IMPL WHY when a
 * knob's values change the output (knobs.c says more). */
int probe_knobs(mpce_engine *e, const struct probe_opts *o);
/* rows are KEY=DEVICE/HOST[:KNOBS]: a device implementation and the row's
 * best host one. Lines: xover KEY DEVICE ELEMENTS VERDICT, ELEMENTS where
 * the device starts to win in the row's class (0: nowhere) (crossover.c). */
int probe_crossover(mpce_engine *e, const struct probe_opts *o);
/* rows: dpf.evalall.large=SPEC|... lpn.fold.kbig.large=SPEC|..., each side's
 * own pick first. Line: pipeline DPF_PICK LPN_PICK VERDICT (pipeline.c). */
int probe_pipeline(mpce_engine *e, const struct probe_opts *o);
/* For `knobs` and `slices`: fn(e, o, key, impl) for each ROW=IMPL of o->rows
 * (impl may carry knob values); 2 after a message naming cmd if one is not
 * of that form. */
int probe_each_winner(mpce_engine *e, const struct probe_opts *o, const char *cmd,
                      void (*fn)(mpce_engine *e, const struct probe_opts *o, const char *key,
                                 const char *impl));
int probe_tune(mpce_engine *e, const struct probe_opts *o, const char *self);
/* `vet`: creates its own engine (no modules), loads o->module_fd. */
int probe_vet(const struct probe_opts *o);

#endif
