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
 * stay unless a combination beats them by more than their spread and 1 %.
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
#define MIN_GAIN 0.01

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

/* The decision over the timed combinations (c[i] is sw->c[i]). */
static void decide(const struct mpce_slot *s, enum mpce_op_id op, const struct probe_row *row,
                   const struct sweep *sw, const struct mpce_bench_cand *c)
{
    char names[100], verdict[900], pick[160] = "-";
    size_t used = 0;
    tuned_names(s, op, names, sizeof(names));
    const struct mpce_bench_cand *def = &c[0];
    size_t best = 0, ntuned = 0;
    for (size_t i = 1; i < sw->n; i++) {
        if (sw->c[i].informational || c[i].failed)
            continue;
        ntuned++;
        if (c[best].failed || c[i].median < c[best].median)
            best = i;
    }
    if (def->failed) {
        used = (size_t)snprintf(verdict, sizeof(verdict), "defaults kept: the defaults (%s) "
                                "could not be timed: %.200s", sw->c[0].list, def->why);
    } else if (ntuned == 0 && names[0]) {
        used = (size_t)snprintf(verdict, sizeof(verdict), "defaults kept: no other value of "
                                "%s could be timed", names);
    } else if (names[0]) {
        const double spread = def->median > 0 ? (def->max - def->min) / def->median : 0;
        const double gain = best != 0 ? 1.0 - c[best].median / def->median : 0;
        used = (size_t)snprintf(verdict, sizeof(verdict), "%zu values of %s%s on %s: ",
                                ntuned + 1, names,
                                sw->joint         ? " jointly"
                                : sw->n_tuned > 1 ? " (each alone: too many combinations)"
                                                  : "",
                                row->shape);
        if (best != 0 && gain > spread && gain >= MIN_GAIN) {
            snprintf(pick, sizeof(pick), "%s", sw->c[best].list);
            used += (size_t)snprintf(verdict + used, sizeof(verdict) - used,
                                     "%s beats the defaults %s by %.1f %% (more than their "
                                     "spread %.1f %% and 1 %%)", sw->c[best].list,
                                     sw->c[0].list, 100.0 * gain, 100.0 * spread);
        } else if (best != 0) {
            used += (size_t)snprintf(verdict + used, sizeof(verdict) - used,
                                     "defaults %s kept: the best, %s, is faster by only %.1f "
                                     "%% (their spread is %.1f %%; a change needs more, and "
                                     "at least 1 %%)", sw->c[0].list, sw->c[best].list,
                                     100.0 * gain, 100.0 * spread);
        } else {
            used += (size_t)snprintf(verdict + used, sizeof(verdict) - used,
                                     "the defaults %s are fastest", sw->c[0].list);
        }
    }
    /* Informational knobs: each value against the defaults, reported only. */
    for (unsigned k = 0; k < s->n_knobs && !def->failed; k++) {
        const struct mpce_knob *kn = s->knobs[k];
        if (!mpce_knob_affects(s, k, op) || !(kn->flags & MPCE_KNOB_INFORMATIONAL))
            continue;
        if (used < sizeof(verdict))
            used += (size_t)snprintf(verdict + used, sizeof(verdict) - used,
                                     "%sinformational %s (never pinned):", used ? "; " : "",
                                     kn->name);
        for (size_t i = 0; i < sw->n && used < sizeof(verdict); i++) {
            int point = i == 0 || (sw->c[i].informational && sw->c[i].v[k] != sw->c[0].v[k]);
            if (!point)
                continue;
            if (i == 0)
                used += (size_t)snprintf(verdict + used, sizeof(verdict) - used, " [%u]",
                                         (unsigned)sw->c[0].v[k]);
            else if (c[i].failed)
                used += (size_t)snprintf(verdict + used, sizeof(verdict) - used,
                                         " %u failed", (unsigned)sw->c[i].v[k]);
            else
                used += (size_t)snprintf(verdict + used, sizeof(verdict) - used,
                                         " %u %+.1f %%", (unsigned)sw->c[i].v[k],
                                         100.0 * (c[i].median / def->median - 1.0));
        }
    }
    printf("knobs %s %s %s %s\n", row->key, s->impl->name, pick, verdict);
}

static void knobs_of(mpce_engine *e, const struct probe_opts *o, const char *key,
                     const char *impl)
{
    struct probe_row row;
    struct mpce_slot *s = mpce_registry_find(e, impl);
    struct mpce_bench_shape shape;
    struct mpce_bench_fixture *f = NULL;
    struct mpce_bench_cand *c = NULL;
    unsigned char *want = NULL;
    static struct sweep sw;
    size_t n = 0;
    char why[600];

    if (probe_plan_find(key, &row) != 0 || s == NULL) {
        printf("knobs %s %s - not measured: %s\n", key, impl,
               s ? "unknown row" : "unknown implementation");
        goto out;
    }
    plan_sweep(s, row.op, &sw);
    if (sw.n <= 1) {
        printf("knobs %s %s - %s has no knob that changes %s\n", key, impl, impl,
               mpce_op_info[row.op].name);
        goto out;
    }
    if (mpce_bench_shape_parse(row.bench_op, row.shape, &shape) != MPCE_OK ||
        mpce_bench_fixture_new(&shape, &f) != MPCE_OK) {
        printf("knobs %s %s - not measured: %s\n", key, impl, mpce_last_error());
        goto out;
    }
    c = calloc(sw.n, sizeof(*c));
    want = malloc(f->out_len ? f->out_len : 1);
    if (!c || !want) {
        printf("knobs %s %s - not measured: out of memory\n", key, impl);
        goto out;
    }
    /* The check, each combination once on the row's input. */
    for (n = 0; n < sw.n; n++) {
        c[n].baseline = -1;
        printf("enter %s %s:%s\n", key, impl, sw.c[n].list);
        fflush(stdout);
        if (mpce_bench_impl_cand_knobs(s, &shape, f, sw.c[n].v, &c[n]) != MPCE_OK) {
            printf("knobs %s %s - not measured: %s\n", key, impl, mpce_last_error());
            goto out;
        }
        memset(f->out, 0x5a, f->out_len);
        mpce_bench_error_clear();
        if (c[n].run(c[n].state) != 0) {
            snprintf(why, sizeof(why), "%s", mpce_last_error());
            if (n == 0) {
                printf("knobs %s %s - not measured: the defaults failed: %s\n", key, impl, why);
                n++;
                goto out;
            }
            c[n].failed = 1;
            snprintf(c[n].why, sizeof(c[n].why), "%.250s", why);
            continue;
        }
        if (n == 0) {
            memcpy(want, f->out, f->out_len);
        } else if (memcmp(want, f->out, f->out_len) != 0) {
            size_t at = 0;
            while (at < f->out_len && want[at] == f->out[at])
                at++;
            printf("kwrong %s %s knob values %s change the output of %s (byte %zu of %zu on "
                   "%s differs from the defaults' %s): every value of a knob must give the "
                   "same output\n", key, impl, sw.c[n].list, mpce_op_info[row.op].name, at,
                   f->out_len, row.shape, sw.c[0].list);
            printf("knobs %s %s - not measured: knob values change the output\n", key, impl);
            n++;
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
        printf("kcand %s %s %s %.6e %.6e %.6e\n", key, c[i].name, c[i].failed ? "failed" : "ok",
               c[i].median, c[i].min, c[i].max);
    decide(s, row.op, &row, &sw, c);
out:
    for (size_t i = 0; c && i < n; i++) {
        free(c[i].samples);
        if (c[i].teardown)
            c[i].teardown(c[i].state);
    }
    free(c);
    free(want);
    mpce_bench_fixture_free(f);
    printf("done %s\n", key);
    fflush(stdout);
}

int probe_knobs(mpce_engine *e, const struct probe_opts *o)
{
    return probe_each_winner(e, o, "knobs", knobs_of);
}
