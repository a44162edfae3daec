/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `mpcengine-probe knobs`: a row winner's knobs (plugin.h, struct mpce_knob),
 * measured on the row's production shape. The knobs that change the row's
 * op are scored jointly, every combination of their values interleaved in
 * one run (a tile and a batch share the cache: ranked apart, their winners
 * need not be the pair's winner), or, past MAX_COMBOS combinations, each
 * swept alone with the others at their defaults. Before anything is timed
 * every combination's output is compared with the defaults' byte for byte:
 * a knob whose values change an output is a broken module. The defaults
 * stay unless a combination beats them by more than their spread (as
 * ratios: probe_clears) and 1 %.
 * Informational knobs are swept the same way, one at a time, and only
 * reported. Lines:
 *   enter KEY IMPL:KNOBS
 *   kcand KEY IMPL:KNOBS STATUS MEDIAN MIN MAX
 *   kwrong KEY IMPL WHY...       outputs changed: blacklist the module
 *   knobs KEY IMPL PICK VERDICT... PICK is KNOB=VALUE[:...] or - (defaults)
 *   done KEY
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/runtime/knobs.h"
#include "tools/bench/bench.h"
#include "tools/probe/probe.h"

#define MAX_COMBOS 24

struct combo {
    uint32_t v[MPCE_KNOB_MAX];
    char list[160];
    int informational;           /* an informational sweep's point */
};

struct sweep {
    struct combo c[MAX_COMBOS + MPCE_KNOB_MAX * MPCE_KNOB_MAX_VALUES];
    size_t n;
    int joint;                   /* tuned knobs as a product, not one by one */
    unsigned n_tuned;            /* knobs of the op that may be pinned */
};

static void say_enter(void *arg, const struct mpce_bench_cand *c)
{
    const char *key = arg;
    printf("enter %s %s\n", key, c->name);
    fflush(stdout);
}

static size_t add_combo(struct sweep *sw, const struct mpce_slot *s, const uint32_t *v,
                        int informational)
{
    for (size_t i = 0; i < sw->n; i++)
        if (memcmp(sw->c[i].v, v, sizeof(sw->c[i].v)) == 0)
            return i;
    struct combo *c = &sw->c[sw->n];
    memcpy(c->v, v, sizeof(c->v));
    mpce_knobs_format(s, v, c->list, sizeof(c->list));
    c->informational = informational;
    return sw->n++;
}

/* The combinations to run: the defaults first, then the tuned knobs' (all
 * of them, or one knob at a time), then each informational knob's values. */
static void plan_sweep(const struct mpce_slot *s, enum mpce_op_id op, struct sweep *sw)
{
    uint32_t def[MPCE_KNOB_MAX] = {0};
    unsigned tuned[MPCE_KNOB_MAX], nt = 0;
    size_t product = 1;
    for (unsigned k = 0; k < s->n_knobs; k++) {
        def[k] = s->knobs[k]->default_value;
        if (mpce_knob_affects(s, k, op) && !(s->knobs[k]->flags & MPCE_KNOB_INFORMATIONAL)) {
            tuned[nt++] = k;
            product *= s->knobs[k]->n_values;
        }
    }
    sw->n = 0;
    add_combo(sw, s, def, 0);
    sw->joint = nt > 1 && product <= MAX_COMBOS;
    sw->n_tuned = nt;
    if (sw->joint) {
        for (size_t i = 0; i < product; i++) {
            uint32_t v[MPCE_KNOB_MAX];
            memcpy(v, def, sizeof(v));
            size_t rest = i;
            for (unsigned t = 0; t < nt; t++) {
                const struct mpce_knob *kn = s->knobs[tuned[t]];
                v[tuned[t]] = kn->values[rest % kn->n_values];
                rest /= kn->n_values;
            }
            add_combo(sw, s, v, 0);
        }
    } else {
        for (unsigned t = 0; t < nt; t++)
            for (size_t j = 0; j < s->knobs[tuned[t]]->n_values; j++) {
                uint32_t v[MPCE_KNOB_MAX];
                memcpy(v, def, sizeof(v));
                v[tuned[t]] = s->knobs[tuned[t]]->values[j];
                add_combo(sw, s, v, 0);
            }
    }
    for (unsigned k = 0; k < s->n_knobs; k++) {
        if (!mpce_knob_affects(s, k, op) || !(s->knobs[k]->flags & MPCE_KNOB_INFORMATIONAL))
            continue;
        for (size_t j = 0; j < s->knobs[k]->n_values; j++) {
            uint32_t v[MPCE_KNOB_MAX];
            memcpy(v, def, sizeof(v));
            v[k] = s->knobs[k]->values[j];
            add_combo(sw, s, v, 1);
        }
    }
}

/* "chunk x prefetch": the tuned knobs' names. */
static void tuned_names(const struct mpce_slot *s, enum mpce_op_id op, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned k = 0; k < s->n_knobs && used < len; k++)
        if (mpce_knob_affects(s, k, op) && !(s->knobs[k]->flags & MPCE_KNOB_INFORMATIONAL))
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " x " : "",
                                     s->knobs[k]->name);
}

/* One round: every combination checked against the defaults' output (the
 * first), then all timed interleaved. 0, or -1 with a knobs line printed
 * (not measured, or kwrong). c[0..n) hold their results either way. */
static int run_round(const struct mpce_slot *s, const struct probe_opts *o,
                     const struct probe_row *row, const struct mpce_bench_shape *shape,
                     const struct combo *cb, size_t n, struct mpce_bench_cand *c, size_t *made,
                     struct mpce_bench_fixture **fx, const char *tag)
{
    const char *key = row->key, *impl = s->impl->name;
    struct mpce_bench_fixture *f = NULL;
    unsigned char *want = NULL;
    char why[600];
    int rc = -1;
    *made = 0;
    if (mpce_bench_fixture_new(shape, &f) != MPCE_OK ||
        (want = malloc(f->out_len ? f->out_len : 1)) == NULL) {
        printf("knobs %s %s - not measured: %s\n", key, impl,
               f ? "out of memory" : mpce_last_error());
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        c[i].baseline = -1;
        printf("enter %s %s:%s\n", key, impl, cb[i].list);
        fflush(stdout);
        if (mpce_bench_impl_cand_knobs(s, shape, f, cb[i].v, &c[i]) != MPCE_OK) {
            printf("knobs %s %s - not measured: %s\n", key, impl, mpce_last_error());
            goto out;
        }
        *made = i + 1;
        memset(f->out, 0x5a, f->out_len);
        mpce_bench_error_clear();
        if (c[i].run(c[i].state) != 0) {
            snprintf(why, sizeof(why), "%s", mpce_last_error());
            if (i == 0) {
                printf("knobs %s %s - not measured: the defaults failed: %s\n", key, impl, why);
                goto out;
            }
            c[i].failed = 1;
            snprintf(c[i].why, sizeof(c[i].why), "%.250s", why);
            continue;
        }
        if (i == 0) {
            memcpy(want, f->out, f->out_len);
        } else if (memcmp(want, f->out, f->out_len) != 0) {
            size_t at = 0;
            while (at < f->out_len && want[at] == f->out[at])
                at++;
            printf("kwrong %s %s knob values %s change the output of %s (byte %zu of %zu on "
                   "%s differs from the defaults' %s): every value of a knob must give the "
                   "same output\n", key, impl, cb[i].list, mpce_op_info[row->op].name, at,
                   f->out_len, row->shape, cb[0].list);
            printf("knobs %s %s - not measured: knob values change the output\n", key, impl);
            goto out;
        }
    }
    struct mpce_bench_timing t;
    probe_timing(o->effort, &t);
    t.on_enter = say_enter;
    t.on_enter_arg = (void *)key;
    if (mpce_bench_measure(c, n, &t) != MPCE_OK) {
        printf("knobs %s %s - not measured: %s\n", key, impl, mpce_last_error());
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        printf("%s %s %s %s %.6e %.6e %.6e\n", tag, key, c[i].name,
               c[i].failed ? "failed" : "ok", c[i].median, c[i].min, c[i].max);
    rc = 0;
out:
    /* The candidates use the fixture until they are torn down
     * (release_round). */
    *fx = f;
    free(want);
    return rc;
}

static void release_round(struct mpce_bench_cand *c, size_t made,
                          struct mpce_bench_fixture **fx)
{
    for (size_t i = 0; i < made; i++) {
        free(c[i].samples);
        if (c[i].teardown)
            c[i].teardown(c[i].state);
    }
    memset(c, 0, made * sizeof(*c));
    mpce_bench_fixture_free(*fx);
    *fx = NULL;
}

static double gap_of(double a, double b)
{
    double mean = (a + b) / 2;
    return mean > 0 ? (a > b ? a - b : b - a) / mean : 0;
}

/* Informational knobs: each value against the defaults in round 1. */
static size_t report_informational(const struct mpce_slot *s, enum mpce_op_id op,
                                   const struct sweep *sw, const struct mpce_bench_cand *c,
                                   char *verdict, size_t used, size_t len)
{
    for (unsigned k = 0; k < s->n_knobs && !c[0].failed; k++) {
        const struct mpce_knob *kn = s->knobs[k];
        if (!mpce_knob_affects(s, k, op) || !(kn->flags & MPCE_KNOB_INFORMATIONAL))
            continue;
        if (used < len)
            used += (size_t)snprintf(verdict + used, len - used,
                                     "%sinformational %s (never pinned): [%u]", used ? "; " : "",
                                     kn->name, (unsigned)sw->c[0].v[k]);
        for (size_t i = 1; i < sw->n && used < len; i++) {
            if (!sw->c[i].informational || sw->c[i].v[k] == sw->c[0].v[k])
                continue;
            if (c[i].failed)
                used += (size_t)snprintf(verdict + used, len - used, " %u failed",
                                         (unsigned)sw->c[i].v[k]);
            else
                used += (size_t)snprintf(verdict + used, len - used, " %u %+.1f %%",
                                         (unsigned)sw->c[i].v[k],
                                         100.0 * (c[i].median / c[0].median - 1.0));
        }
    }
    return used;
}

/*
 * The decision. Round 1 ranks every combination; the best is then run again
 * against the defaults with new buffers (round 2), together with the best
 * with each of its changed knobs put back to its default, because the best
 * of many is flattered by chance and a knob that does nothing rides along
 * with one that matters. A candidate is a change only if it beats the
 * defaults in round 2 by more than its noise (probe_clears; the larger of
 * both spreads and of how far its and the defaults' medians moved between
 * the rounds) and by at least 1 %; of those, the one that changes fewest knobs is pinned.
 */
static void decide(const struct mpce_slot *s, const struct probe_opts *o,
                   const struct probe_row *row, const struct mpce_bench_shape *shape,
                   const struct sweep *sw, const struct mpce_bench_cand *c1)
{
    const enum mpce_op_id op = row->op;
    char names[100], verdict[900], pick[160] = "-", best_list[160];
    size_t used = 0, best = 0, ntuned = 0;
    tuned_names(s, op, names, sizeof(names));
    for (size_t i = 1; i < sw->n; i++) {
        if (sw->c[i].informational || c1[i].failed)
            continue;
        ntuned++;
        if (best == 0 || c1[i].median < c1[best].median)
            best = i;
    }
    if (names[0] && ntuned == 0) {
        used = (size_t)snprintf(verdict, sizeof(verdict), "defaults kept: no other value of "
                                "%s could be timed", names);
    } else if (names[0]) {
        const double gain1 = 1.0 - c1[best].median / c1[0].median;
        mpce_knobs_format_changed(s, sw->c[best].v, best_list, sizeof(best_list));
        used = (size_t)snprintf(verdict, sizeof(verdict), "%zu combinations of %s%s on %s; "
                                "best %s, %.1f %% faster than the defaults", ntuned + 1, names,
                                sw->joint         ? " jointly"
                                : sw->n_tuned > 1 ? " (each alone: too many to combine)"
                                                  : "",
                                row->shape, best_list, 100.0 * gain1);
        /* Round 2: the defaults, the best, the best less each change. */
        static struct combo cb[1 + 1 + MPCE_KNOB_MAX];
        struct mpce_bench_cand c2[1 + 1 + MPCE_KNOB_MAX];
        size_t n2 = 0, made = 0;
        struct mpce_bench_fixture *f2 = NULL;
        memset(c2, 0, sizeof(c2));
        cb[n2++] = sw->c[0];
        cb[n2++] = sw->c[best];
        for (unsigned k = 0; k < s->n_knobs && mpce_knobs_format_changed(s, sw->c[best].v, best_list,
                                                                         sizeof(best_list)) > 1; k++) {
            if (sw->c[best].v[k] == sw->c[0].v[k])
                continue;
            cb[n2] = sw->c[best];
            cb[n2].v[k] = sw->c[0].v[k];
            mpce_knobs_format(s, cb[n2].v, cb[n2].list, sizeof(cb[n2].list));
            n2++;
        }
        if (!probe_clears(gain1, probe_spread(&c1[0]))) {
            used += (size_t)snprintf(verdict + used, sizeof(verdict) - used,
                                     ": within the defaults' spread (%.1f %%) or below 1 %%; "
                                     "defaults kept", 100.0 * probe_spread(&c1[0]));
        } else if (run_round(s, o, row, shape, cb, n2, c2, &made, &f2, "kconf") != 0) {
            release_round(c2, made, &f2);
            return; /* the knobs line is printed */
        } else {
            size_t chosen = 0, fewest = MPCE_KNOB_MAX + 1;
            double chosen_gain = 0, chosen_noise = 0, noise_best = 0, gain_best = 0;
            const double def_gap = gap_of(c1[0].median, c2[0].median);
            const double best_gap = gap_of(c1[best].median, c2[1].median);
            for (size_t i = 1; i < n2; i++) {
                if (c2[i].failed || c2[0].failed)
                    continue;
                /* Its own run-to-run gap where round 1 timed it too; else
                 * (a sweep of one knob at a time did not) the best's. */
                double gap = best_gap;
                for (size_t j = 1; j < sw->n; j++)
                    if (!c1[j].failed && memcmp(sw->c[j].v, cb[i].v, sizeof(cb[i].v)) == 0) {
                        gap = gap_of(c1[j].median, c2[i].median);
                        break;
                    }
                double noise = probe_spread(&c2[0]);
                noise = probe_spread(&c2[i]) > noise ? probe_spread(&c2[i]) : noise;
                noise = def_gap > noise ? def_gap : noise;
                noise = gap > noise ? gap : noise;
                const double gain = 1.0 - c2[i].median / c2[0].median;
                char tmp[160];
                size_t changes = mpce_knobs_format_changed(s, cb[i].v, tmp, sizeof(tmp));
                if (i == 1) {
                    noise_best = noise;
                    gain_best = gain;
                }
                if (probe_clears(gain, noise) &&
                    (changes < fewest || (changes == fewest && gain > chosen_gain))) {
                    chosen = i;
                    fewest = changes;
                    chosen_gain = gain;
                    chosen_noise = noise;
                }
            }
            if (chosen != 0) {
                mpce_knobs_format_changed(s, cb[chosen].v, pick, sizeof(pick));
                used += (size_t)snprintf(verdict + used, sizeof(verdict) - used,
                                         "; again with new buffers, %s is %.1f %% faster "
                                         "(noise %.1f %%: it needed more than %.1f %%): "
                                         "pinned%s", pick, 100.0 * chosen_gain,
                                         100.0 * chosen_noise,
                                         100.0 * probe_needed_gain(chosen_noise),
                                         chosen != 1 ? " (the best's other changes were "
                                                       "within noise)"
                                                     : "");
            } else {
                used += (size_t)snprintf(verdict + used, sizeof(verdict) - used,
                                         "; again with new buffers, %.1f %% against noise of "
                                         "%.1f %%: defaults kept", 100.0 * gain_best,
                                         100.0 * noise_best);
            }
        }
        release_round(c2, made, &f2);
    }
    used = report_informational(s, op, sw, c1, verdict, used, sizeof(verdict));
    printf("knobs %s %s %s %s\n", row->key, s->impl->name, pick[0] ? pick : "-", verdict);
}

static void knobs_of(mpce_engine *e, const struct probe_opts *o, const char *key,
                     const char *impl)
{
    struct probe_row row;
    struct mpce_slot *s = mpce_registry_find(e, impl);
    struct mpce_bench_shape shape;
    struct mpce_bench_cand *c = NULL;
    struct mpce_bench_fixture *f = NULL;
    static struct sweep sw;
    size_t made = 0;

    if (probe_plan_find(key, &row) != 0 || s == NULL) {
        printf("knobs %s %s - not measured: %s\n", key, impl,
               s ? "unknown row" : "unknown implementation");
        goto out;
    }
    for (size_t i = 0; i < o->n_skip; i++)
        if (strcmp(o->skip[i], s->module->path) == 0) {
            printf("knobs %s %s - not measured: its module was blacklisted while tuning\n", key,
                   impl);
            goto out;
        }
    plan_sweep(s, row.op, &sw);
    if (sw.n <= 1) {
        printf("knobs %s %s - %s has no knob that changes %s\n", key, impl, impl,
               mpce_op_info[row.op].name);
        goto out;
    }
    if (mpce_bench_shape_parse(row.bench_op, row.shape, &shape) != MPCE_OK) {
        printf("knobs %s %s - not measured: %s\n", key, impl, mpce_last_error());
        goto out;
    }
    c = calloc(sw.n, sizeof(*c));
    if (!c) {
        printf("knobs %s %s - not measured: out of memory\n", key, impl);
        goto out;
    }
    if (run_round(s, o, &row, &shape, sw.c, sw.n, c, &made, &f, "kcand") == 0)
        decide(s, o, &row, &shape, &sw, c);
out:
    if (c)
        release_round(c, made, &f);
    free(c);
    printf("done %s\n", key);
    fflush(stdout);
}

int probe_knobs(mpce_engine *e, const struct probe_opts *o)
{
    return probe_each_winner(e, o, "knobs", knobs_of);
}
