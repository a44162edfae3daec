/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `mpcengine-probe slices`: where splitting a call over the engine's threads
 * starts to pay, for a row's winner. The pool hands a slice to a thread only
 * when the slice is worth the wake-up; that threshold was a fixed guess of
 * about 150 us of work per op. Here it is measured: at growing sizes the
 * winner runs through the public API on one thread and on all of them with
 * every call split, interleaved; the smallest size from which the split
 * calls win by more than the single thread's spread (probe_clears) and
 * 1 %, at that size and every larger one, is the crossover. A slice must then hold at least
 * crossover / threads work elements: the work that pays for waking one
 * thread, which is about the same whatever the thread count. If splitting
 * never wins up to the largest size tried, a slice must hold that size (the
 * tune says nothing about larger calls, so they are not kept whole forever).
 * An engine of one thread measures nothing.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/runtime/knobs.h"
#include "tools/bench/bench.h"
#include "tools/probe/probe.h"

#define MAX_POINTS 12

/* The sizes tried per op: printf formats with one %llu (and the variant's
 * parameter first where there is one), smallest first. */
static const struct slice_sweep {
    const char *op;
    const char *fmt;
    unsigned long long sizes[MAX_POINTS];
} sweeps[] = {
    {"prg.ecb", "n=%llu", {1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144}},
    {"prg.ctr", "n=%llu", {1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144}},
    {"prg.mmo", "m=2,n=%llu", {512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072}},
    {"ntt.forward", "N=4096,q=%s,B=%llu", {2, 4, 8, 16, 32, 64}},
    {"ntt.inverse", "N=4096,q=%s,B=%llu", {2, 4, 8, 16, 32, 64}},
    {"ntt.mul", "N=4096,q=%s,B=%llu", {2, 4, 8, 16, 32, 64}},
    {"lpn.fold", "logk=%s,n=%llu", {1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144}},
    {"dpf.evalall", "bits=%llu", {15, 16, 17, 18}},
    {"dpf.eval_keys", "bits=20,keys=%llu", {64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}},
};

static const struct slice_sweep *sweep_of(const char *op)
{
    for (size_t i = 0; i < sizeof(sweeps) / sizeof(sweeps[0]); i++)
        if (strcmp(sweeps[i].op, op) == 0)
            return &sweeps[i];
    return NULL;
}

/* The variant's parameter in the shape: the NTT's modulus, the LPN table. */
static const char *variant_param(const char *variant)
{
    if (strcmp(variant, "q50") == 0)
        return "50bit";
    if (strcmp(variant, "qwide") == 0)
        return "61bit";
    if (strcmp(variant, "k16") == 0)
        return "16";
    if (strcmp(variant, "kbig") == 0)
        return "19";
    return NULL;
}

static void say(const char *key, const char *impl, const char *value, const char *why)
{
    printf("slice %s %s %s %s\n", key, impl, value, why);
    fflush(stdout);
}

/* One size: single thread against every call split; 0, or -1 when either
 * could not be run (why set). */
static int time_point(mpce_engine *e, const char *impl, unsigned threads,
                      const struct mpce_bench_shape *shape, const struct mpce_bench_timing *t,
                      double *one, double *split, double *spread, char *why, size_t len)
{
    struct mpce_bench_fixture *f = NULL;
    struct mpce_bench_cand c[2];
    memset(c, 0, sizeof(c));
    int rc = -1;
    if (mpce_bench_fixture_new(shape, &f) != MPCE_OK) {
        snprintf(why, len, "%s", mpce_last_error());
        return -1;
    }
    if (mpce_bench_api_cand(e, impl, 1, shape, f, &c[0]) != MPCE_OK ||
        mpce_bench_api_cand(e, impl, threads, shape, f, &c[1]) != MPCE_OK) {
        snprintf(why, len, "%s", mpce_last_error());
        goto out;
    }
    /* Every call split, however small: the crossover is what is sought. */
    mpce_bench_api_cand_engine(&c[1])->slice_min_shift = 64;
    if (mpce_bench_measure(c, 2, t) != MPCE_OK || c[0].failed || c[1].failed) {
        snprintf(why, len, "%s", c[0].failed ? c[0].why : c[1].failed ? c[1].why
                                                                       : mpce_last_error());
        goto out;
    }
    *one = c[0].median;
    *split = c[1].median;
    *spread = c[0].median > 0 ? (c[0].max - c[0].min) / c[0].median : 0;
    rc = 0;
out:
    for (int i = 0; i < 2; i++) {
        free(c[i].samples);
        if (c[i].teardown)
            c[i].teardown(c[i].state);
    }
    mpce_bench_fixture_free(f);
    return rc;
}

static void slices_of(mpce_engine *e, const struct probe_opts *o, const char *key,
                      const char *impl)
{
    struct probe_row row;
    const struct slice_sweep *sw = NULL;
    char why[512];
    if (probe_plan_find(key, &row) == 0)
        sw = sweep_of(row.bench_op);
    printf("enter %s %s\n", key, impl);
    fflush(stdout);
    const unsigned threads = e->threads ? e->threads : 1;
    /* impl is the winner with its knob values ("IMPL:KNOB=VALUE:..."):
     * the calls split here are the ones "auto" will make. */
    const struct mpce_slot *slot = mpce_registry_find_named(e, impl);
    int skipped = 0;
    for (size_t i = 0; slot && i < o->n_skip; i++)
        skipped |= strcmp(o->skip[i], slot->module->path) == 0;
    if (slot == NULL) {
        say(key, impl, "0", "not measured: unknown implementation");
    } else if (sw == NULL) {
        say(key, impl, "0", "not measured: no size sweep for this operation");
    } else if (skipped) {
        say(key, impl, "0", "not measured: its module was blacklisted while tuning");
    } else if (threads < 2) {
        /* Nothing to learn, and nothing to keep: the row must not say
         * "never" to an engine that is given more threads later. */
        say(key, impl, "0", "not measured: the engine runs one thread ([engine] threads or "
            "one CPU)");
    } else {
        const char *vname = mpce_variant_name(mpce_op_info[row.op].prim, row.variant);
        const char *param = vname && vname[0] ? variant_param(vname) : NULL;
        struct mpce_bench_timing t;
        probe_timing(o->effort, &t);
        double one[MAX_POINTS], split[MAX_POINTS], spread[MAX_POINTS];
        uint64_t elements[MAX_POINTS];
        size_t n = 0, failed = 0, count = 0;
        while (count < MAX_POINTS && sw->sizes[count])
            count++;
        /* quick: every other size, and always the largest. */
        const size_t stride = strcmp(o->effort, "quick") == 0 ? 2 : 1;
        for (size_t i = (count - 1) % stride; i < count; i += stride) {
            char text[128];
            if (param)
                snprintf(text, sizeof(text), sw->fmt, param, sw->sizes[i]);
            else
                snprintf(text, sizeof(text), sw->fmt, sw->sizes[i]);
            struct mpce_bench_shape shape;
            if (mpce_bench_shape_parse(sw->op, text, &shape) != MPCE_OK ||
                time_point(e, impl, threads, &shape, &t, &one[n], &split[n], &spread[n], why,
                           sizeof(why)) != 0) {
                failed++;
                continue;
            }
            elements[n++] = mpce_bench_work_elements(&shape);
        }
        /* The smallest point from which splitting wins at every point. */
        size_t from = n;
        while (from > 0) {
            if (!(one[from - 1] > 0 && probe_clears(1.0 - split[from - 1] / one[from - 1],
                                                    spread[from - 1])))
                break;
            from--;
        }
        char value[32], verdict[400];
        if (n == 0) {
            snprintf(value, sizeof(value), "0");
            snprintf(verdict, sizeof(verdict), "not measured: %.300s", why);
        } else if (from == n) {
            /* Nothing is known past the largest size tried: calls up to
             * twice it stay whole, larger ones split into slices of it. */
            snprintf(value, sizeof(value), "%llu", (unsigned long long)elements[n - 1]);
            snprintf(verdict, sizeof(verdict), "%u threads never beat one up to %llu elements "
                     "(%.2fx there): slices of at least %llu elements, so only calls of "
                     "twice that split", threads, (unsigned long long)elements[n - 1],
                     one[n - 1] / split[n - 1], (unsigned long long)elements[n - 1]);
        } else {
            uint64_t per = (elements[from] + threads - 1) / threads;
            snprintf(value, sizeof(value), "%llu", (unsigned long long)per);
            snprintf(verdict, sizeof(verdict), "%u threads beat one from %llu elements "
                     "(%.2fx there, %.2fx at %llu%s%s): slices of at least %llu elements",
                     threads, (unsigned long long)elements[from], one[from] / split[from],
                     one[n - 1] / split[n - 1], (unsigned long long)elements[n - 1],
                     from == 0 ? "; already at the smallest size tried" : "",
                     failed ? "; some sizes could not be run" : "", (unsigned long long)per);
        }
        say(key, impl, value, verdict);
    }
    printf("done %s\n", key);
    fflush(stdout);
}

int probe_slices(mpce_engine *e, const struct probe_opts *o)
{
    return probe_each_winner(e, o, "slices", slices_of);
}
