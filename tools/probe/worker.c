/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `mpcengine-probe measure`: for each row, every usable implementation of
 * the primitive on the row's shape, through its op table (the harness's
 * direct candidates, one thread each). Before anything is timed, each
 * candidate's output on the row's input is compared with the reference's
 * (the built-in portable implementation, which the known-answer vectors pin
 * to SPEC.md): a mismatch disqualifies it. An asynchronous (device)
 * implementation is one candidate like the others, timed end to end on host
 * memory: each call submitted with a completion and waited for, its
 * transfers included (tools/bench/bench_impl.c). Then all of them are timed
 * interleaved. Any call may crash or hang; the `enter` lines tell the
 * supervisor whose call it was.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"
#include "tools/probe/probe.h"

/* Screening threshold, and the call time below which nothing is screened
 * (a first call of a few microseconds is mostly cold caches). */
#define SCREEN 3.0
#define SCREEN_MIN_S 200e-6

struct worker {
    const char *key;
    const struct mpce_bench_cand *last;
};

static void say_enter(void *arg, const struct mpce_bench_cand *c)
{
    struct worker *w = arg;
    if (w->last == c)
        return;
    w->last = c;
    printf("enter %s %s\n", w->key, c->name);
    fflush(stdout);
}

/* One line of text for the protocol: no newlines. */
static void one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r')
            *s = ' ';
}

static void say_cand(const char *key, const char *impl, const char *status, double median,
                     double min, double max, const char *why)
{
    char w[512];
    snprintf(w, sizeof(w), "%s", why ? why : "");
    one_line(w);
    printf("cand %s %s %s %.6e %.6e %.6e %s\n", key, impl, status, median, min, max, w);
    fflush(stdout);
}

static int skipped_module(const struct probe_opts *o, const struct mpce_slot *s)
{
    for (size_t i = 0; i < o->n_skip; i++)
        if (strcmp(o->skip[i], s->module->path) == 0)
            return 1;
    return 0;
}

/* The reference: the built-in module's best usable implementation. */
static struct mpce_slot *reference(mpce_engine *e, mpce_primitive prim)
{
    struct mpce_slot *best = NULL;
    char why[256];
    for (size_t i = 0; i < e->n_slots; i++) {
        struct mpce_slot *s = e->slots[i];
        if (s->prim != prim || strcmp(s->module->path, "(built-in)") != 0)
            continue;
        if (!mpce_bench_slot_usable(e, s, why, sizeof(why)))
            continue;
        if (!best || s->priority > best->priority)
            best = s;
    }
    return best;
}

static void measure_row(mpce_engine *e, const struct probe_opts *o, const struct probe_row *row)
{
    struct mpce_bench_shape shape;
    if (mpce_bench_shape_parse(row->bench_op, row->shape, &shape) != MPCE_OK) {
        printf("skip %s shape %s: %s\n", row->key, row->shape, mpce_last_error());
        printf("done %s\n", row->key);
        fflush(stdout);
        return;
    }
    const mpce_primitive prim = mpce_op_info[row->op].prim;
    struct mpce_slot *ref = reference(e, prim);
    struct mpce_bench_fixture *f = NULL;
    if (ref == NULL || mpce_bench_fixture_new(&shape, &f) != MPCE_OK) {
        printf("skip %s %s\n", row->key,
               ref ? mpce_last_error() : "no usable built-in reference implementation");
        printf("done %s\n", row->key);
        fflush(stdout);
        return;
    }
    struct mpce_bench_cand *c = calloc(e->n_slots + 1, sizeof(*c));
    double *warm_call = calloc(e->n_slots + 1, sizeof(*warm_call));
    unsigned char *want = malloc(f->out_len ? f->out_len : 1);
    size_t n = 0;
    struct worker w = {.key = row->key};
    if (!c || !want || !warm_call) {
        printf("skip %s out of memory\n", row->key);
        goto out;
    }
    /* The reference first: its setup also makes the row's shared inputs
     * (the DPF keys), so every candidate reads what the reference wrote. */
    struct mpce_slot *order[256];
    size_t n_order = 0;
    order[n_order++] = ref;
    for (size_t i = 0; i < e->n_slots && n_order < 256; i++)
        if (e->slots[i] != ref && e->slots[i]->prim == prim)
            order[n_order++] = e->slots[i];
    for (size_t k = 0; k < n_order; k++) {
        struct mpce_slot *s = order[k];
        char why[512];
        if (mpce_slot_state(s) == MPCE_ST_SKIPPED)
            continue;
        if (skipped_module(o, s)) {
            /* Said, so that every row shows why it is not a candidate. */
            say_cand(row->key, s->impl->name, "failed", 0, 0, 0,
                     "its module was blacklisted while tuning");
            continue;
        }
        printf("enter %s %s\n", row->key, s->impl->name);
        fflush(stdout);
        if (!mpce_bench_slot_usable(e, s, why, sizeof(why))) {
            say_cand(row->key, s->impl->name, "declined", 0, 0, 0, why);
            if (s == ref)
                goto no_reference;
            continue;
        }
        struct mpce_bench_cand *cand = &c[n];
        memset(cand, 0, sizeof(*cand));
        cand->baseline = -1;
        if (mpce_bench_impl_cand(s, &shape, f, cand) != MPCE_OK) {
            say_cand(row->key, s->impl->name, "declined", 0, 0, 0, mpce_last_error());
            if (s == ref)
                goto no_reference;
            continue;
        }
        /* The check: one call on the row's input, compared byte for byte. */
        memset(f->out, 0xa5, f->out_len);
        mpce_bench_error_clear();
        int rc = cand->run(cand->state);
        if (rc != 0 && s == ref)
            snprintf(why, sizeof(why), "%s", mpce_last_error());
        if (rc != 0) {
            say_cand(row->key, s->impl->name, "failed", 0, 0, 0, mpce_last_error());
            cand->teardown(cand->state);
            if (s == ref)
                goto no_reference;
            continue;
        }
        if (s == ref) {
            memcpy(want, f->out, f->out_len);
        } else if (memcmp(want, f->out, f->out_len) != 0) {
            size_t at = 0;
            while (at < f->out_len && want[at] == f->out[at])
                at++;
            snprintf(why, sizeof(why), "output differs from %s's at byte %zu of %zu on %s",
                     ref->impl->name, at, f->out_len, row->shape);
            say_cand(row->key, s->impl->name, "wrong", 0, 0, 0, why);
            cand->teardown(cand->state);
            continue;
        }
        /* A second, warm call for the screening (the first paid for cold
         * caches and whatever the implementation sets up lazily). */
        double t0 = mpce_bench_now();
        rc = cand->run(cand->state);
        warm_call[n] = mpce_bench_now() - t0;
        if (rc != 0) {
            say_cand(row->key, s->impl->name, "failed", 0, 0, 0, mpce_last_error());
            cand->teardown(cand->state);
            continue;
        }
        n++;
    }
    /* Screening: a candidate whose warm call took more than SCREEN times
     * the fastest one's cannot come within any gate's reach; timing it over
     * every round would spend most of a tune on losers (a portable DPF is
     * 60x behind). It keeps its one-call time, as "screened". */
    double best = 0;
    size_t left = n;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || warm_call[i] < best)
            best = warm_call[i];
    for (size_t i = 0; i < n && best > 0; i++)
        if (warm_call[i] > SCREEN * best && warm_call[i] > SCREEN_MIN_S) {
            char why[160];
            snprintf(why, sizeof(why), "one warm call took %.1fx the fastest's: not timed "
                     "further", warm_call[i] / best);
            say_cand(row->key, c[i].name, "screened", warm_call[i], warm_call[i],
                     warm_call[i], why);
            c[i].failed = 1;
            c[i].why[0] = '\0';
            left--;
        }
    /* With one candidate left there is nothing to decide: its warm call is
     * reported and nothing is timed (a portable-only machine tunes fast). */
    if (left <= 1) {
        for (size_t i = 0; i < n; i++)
            if (!c[i].failed) {
                say_cand(row->key, c[i].name, "ok", warm_call[i], warm_call[i], warm_call[i],
                         "the only candidate left: one warm call timed");
                c[i].failed = 1;
                c[i].why[0] = '\0';
            }
        goto out;
    }
    struct mpce_bench_timing t;
    probe_timing(o->effort, &t);
    t.on_enter = say_enter;
    t.on_enter_arg = &w;
    if (mpce_bench_measure(c, n, &t) != MPCE_OK) {
        printf("skip %s %s\n", row->key, mpce_last_error());
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (c[i].failed && c[i].why[0] == '\0')
            continue; /* screened: already reported */
        if (c[i].failed)
            say_cand(row->key, c[i].name, "failed", 0, 0, 0, c[i].why);
        else
            say_cand(row->key, c[i].name, "ok", c[i].median, c[i].min, c[i].max, "");
    }
    goto out;
no_reference:
    /* Without the reference's output nothing can be checked: the row is
     * not measured, and nobody is blamed. */
    printf("skip %s the reference %s could not run this shape\n", row->key, ref->impl->name);
out:
    for (size_t i = 0; i < n; i++) {
        free(c[i].samples);
        if (c[i].teardown)
            c[i].teardown(c[i].state);
    }
    free(c);
    free(warm_call);
    free(want);
    mpce_bench_fixture_free(f);
    printf("done %s\n", row->key);
    fflush(stdout);
}

int probe_measure(mpce_engine *e, const struct probe_opts *o)
{
    /* A supervisor that is gone wants no more results: die on the closed
     * pipe rather than measure for nobody. */
    signal(SIGPIPE, SIG_DFL);
    for (size_t i = 0; i < o->n_rows; i++) {
        struct probe_row row;
        if (probe_plan_find(o->rows[i], &row) != 0) {
            fprintf(stderr, "mpcengine-probe measure: unknown row %s\n", o->rows[i]);
            return 2;
        }
        measure_row(e, o, &row);
    }
    return 0;
}
