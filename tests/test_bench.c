/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Benchmark harness (tools/bench, linked into the mpcengine command): its
 * statistics, the shape of its results, its peers and refusals, the dispatch
 * overhead row, asynchronous implementations left to the API rows, and the
 * command's output. Tiny rows and short windows only; no timing is ever
 * asserted (the machines that run this are shared).
 */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "tools/bench/bench.h"

#ifndef MPCENGINE_BIN
#error "MPCENGINE_BIN must name the built command (tests/local.am)"
#endif

extern char **environ;

#define MAX_ROWS 64

/* ---- collecting rows ------------------------------------------------------ */

struct got_row {
    char op[32], impl[96], shape[128], unit[16], baseline[96], note[400];
    double median, min, max, rate, ratio;
    int has_baseline, skipped;
};

static struct got_row rows[MAX_ROWS];
static size_t n_rows;

static int collect(const mpce_bench_row *r, void *arg)
{
    (void)arg;
    CU_ASSERT_FATAL(n_rows < MAX_ROWS);
    struct got_row *g = &rows[n_rows++];
    memset(g, 0, sizeof(*g));
    CU_ASSERT_FATAL(r->op && r->impl && r->shape && r->unit && r->note);
    snprintf(g->op, sizeof(g->op), "%s", r->op);
    snprintf(g->impl, sizeof(g->impl), "%s", r->impl);
    snprintf(g->shape, sizeof(g->shape), "%s", r->shape);
    snprintf(g->unit, sizeof(g->unit), "%s", r->unit);
    snprintf(g->note, sizeof(g->note), "%s", r->note);
    g->has_baseline = r->baseline != NULL;
    if (r->baseline)
        snprintf(g->baseline, sizeof(g->baseline), "%s", r->baseline);
    g->median = r->median_s;
    g->min = r->min_s;
    g->max = r->max_s;
    g->rate = r->unit_rate;
    g->ratio = r->ratio;
    g->skipped = r->skipped;
    return 0;
}

static const struct got_row *row_of(const char *impl)
{
    for (size_t i = 0; i < n_rows; i++)
        if (strcmp(rows[i].impl, impl) == 0)
            return &rows[i];
    return NULL;
}

static mpce_bench_options quick(const char *op, const char *shape)
{
    mpce_bench_options o;
    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.op = op;
    o.shape = shape;
    o.rounds = 3;
    o.windows = 2;
    o.window_s = 0.0005;
    return o;
}

static mpce_status run(mpce_bench_options *o)
{
    n_rows = 0;
    return mpce_bench_run(tu_engine(0), o, collect, NULL);
}

/* Every measured row is well formed and its ratio is baseline / this. */
static void check_rows(void)
{
    for (size_t i = 0; i < n_rows; i++) {
        const struct got_row *g = &rows[i];
        if (g->skipped)
            continue;
        CU_ASSERT(g->min > 0);
        CU_ASSERT(g->min <= g->median && g->median <= g->max);
        CU_ASSERT(g->rate > 0);
        if (!g->has_baseline) {
            CU_ASSERT_EQUAL(g->ratio, 0);
            continue;
        }
        const struct got_row *b = NULL;
        for (size_t j = 0; j < n_rows; j++)
            if (strcmp(rows[j].impl, g->baseline) == 0 &&
                (strstr(g->shape, "threads=") == NULL || strstr(rows[j].shape, "threads=1")))
                b = &rows[j];
        CU_ASSERT_FATAL(b != NULL);
        CU_ASSERT(fabs(g->ratio - b->median / g->median) <= 1e-9 * g->ratio);
    }
}

/* ---- statistics and the measuring loop ------------------------------------ */

static void test_stats(void)
{
    double odd[] = {5, 1, 4, 2, 3}, even[] = {8, 2, 6, 4}, one[] = {7};
    double med, lo, hi;

    mpce_bench_stats(odd, 5, &med, &lo, &hi);
    CU_ASSERT_EQUAL(med, 3);
    CU_ASSERT_EQUAL(lo, 1);
    CU_ASSERT_EQUAL(hi, 5);
    CU_ASSERT_EQUAL(odd[0], 5); /* not reordered */
    mpce_bench_stats(even, 4, &med, &lo, &hi);
    CU_ASSERT_EQUAL(med, 5);
    CU_ASSERT_EQUAL(lo, 2);
    CU_ASSERT_EQUAL(hi, 8);
    mpce_bench_stats(one, 1, &med, &lo, &hi);
    CU_ASSERT(med == 7 && lo == 7 && hi == 7);
}

static volatile unsigned long sink;
static unsigned long calls[2];

static int spin(void *state)
{
    unsigned long *count = state;
    for (unsigned long i = 0; i < 2000; i++)
        sink += i;
    (*count)++;
    return 0;
}

/* Fails on its third call: after the warm-up and the sizing call. */
static int fail_third(void *state)
{
    unsigned long *count = state;
    return ++*count >= 3 ? MPCE_ERR_BACKEND : 0;
}

static void test_measure(void)
{
    struct mpce_bench_cand c[2];
    struct mpce_bench_timing t = {.rounds = 4, .windows = 2, .window_s = 0.0005};
    memset(c, 0, sizeof(c));
    calls[0] = calls[1] = 0;
    c[0].run = spin;
    c[0].state = &calls[0];
    c[1].run = fail_third;
    c[1].state = &calls[1];
    CU_ASSERT_EQUAL_FATAL(mpce_bench_measure(c, 2, &t), MPCE_OK);
    CU_ASSERT(!c[0].failed);
    CU_ASSERT(calls[0] >= 2 + 4 * 2); /* warm-up, sizing, then every window */
    for (unsigned r = 0; r < 4; r++)
        CU_ASSERT(c[0].samples[r] > 0 && c[0].samples[r] >= c[0].min &&
                  c[0].samples[r] <= c[0].max);
    CU_ASSERT(c[0].min <= c[0].median && c[0].median <= c[0].max);
    CU_ASSERT(c[1].failed);
    CU_ASSERT(strstr(c[1].why, "MPCE_ERR_BACKEND") != NULL);
    free(c[0].samples);
    free(c[1].samples);
}

/* ---- rows through the API ------------------------------------------------- */

static size_t start_calls, start_rows, rows_at_start;

static void on_start(size_t count, void *arg)
{
    (void)arg;
    start_calls++;
    start_rows = count;
    rows_at_start = n_rows;
}

static void test_prg_row(void)
{
    mpce_bench_options o = quick("prg.ecb", "n=64");
    o.start = on_start;
    start_calls = 0;
    CU_ASSERT_EQUAL_FATAL(run(&o), MPCE_OK);
    /* Announced once, with the row count, before any row was reported. */
    CU_ASSERT_EQUAL(start_calls, 1);
    CU_ASSERT_EQUAL(start_rows, 1);
    CU_ASSERT_EQUAL(rows_at_start, 0);
    const struct got_row *soft = row_of("prg-soft-bitslice");
    const struct got_row *evp = row_of("openssl-evp-aes-128-ecb");
    CU_ASSERT_FATAL(soft != NULL && evp != NULL);
    CU_ASSERT_STRING_EQUAL(soft->op, "prg.ecb");
    CU_ASSERT_STRING_EQUAL(soft->shape, "n=64");
    CU_ASSERT_STRING_EQUAL(soft->unit, "GB/s");
    CU_ASSERT_STRING_EQUAL(soft->baseline, "openssl-evp-aes-128-ecb");
    CU_ASSERT(fabs(evp->ratio - 1) < 1e-12);
    /* GB/s is the bytes written per call over the median. */
    CU_ASSERT(fabs(soft->rate - 16.0 * 64 / soft->median / 1e9) <= 1e-9 * soft->rate);
    check_rows();
}

static void test_every_op(void)
{
    static const char *const cases[][2] = {
        {"prg.mmo", "m=2,n=32"},
        {"prg.ctr", "n=64"},
        {"prg.dispatch", "n=2"},
        {"ntt.forward", "N=64,B=2,q=61bit"},
        {"ntt.inverse", "N=64,B=2,q=61bit"},
        {"ntt.mul", "N=64,B=3,q=50bit"},
        {"ntt.mul", "N=64,B=2,q=61bit,threads=2"},
        {"lpn.fold", "logk=6,n=64,chunk=16"},
        {"dpf.evalall", "bits=6"},
        {"dpf.eval_keys", "bits=8,keys=8"},
        {"dpf.eval", "bits=9,points=3"},
        {"dpf.eval", "bits=20,points=1,threads=2"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mpce_bench_options o = quick(cases[i][0], cases[i][1]);
        CU_ASSERT_EQUAL(run(&o), MPCE_OK);
        CU_ASSERT(n_rows >= 1);
        for (size_t j = 0; j < n_rows; j++) {
            CU_ASSERT_STRING_EQUAL(rows[j].op, cases[i][0]);
            /* Only a backend that does not serve the shape may sit one out. */
            CU_ASSERT(!rows[j].skipped || strstr(rows[j].note, "does not serve") != NULL);
        }
        check_rows();
    }
    /* The DPF is compared with its own plugin's AES on as many blocks. */
    mpce_bench_options o = quick("dpf.evalall", "bits=6");
    CU_ASSERT_EQUAL_FATAL(run(&o), MPCE_OK);
    const struct got_row *d = row_of("dpf-soft");
    CU_ASSERT_FATAL(d != NULL);
    CU_ASSERT_STRING_EQUAL(d->baseline, "aes-floor:prg-soft-bitslice");
    CU_ASSERT_STRING_EQUAL(d->unit, "ns/output");
    CU_ASSERT_PTR_NOT_NULL(row_of("aes-floor:prg-soft-bitslice"));
    /* A point eval has the latency chain beside the floor; EvalAll not. */
    CU_ASSERT_PTR_NULL(row_of("aes-chain:prg-soft-bitslice"));
    o = quick("dpf.eval", "bits=9,points=3");
    CU_ASSERT_EQUAL_FATAL(run(&o), MPCE_OK);
    d = row_of("aes-chain:prg-soft-bitslice");
    CU_ASSERT_FATAL(d != NULL);
    CU_ASSERT(strstr(d->note, "27 dependent one-block ECB calls") != NULL);
    CU_ASSERT_STRING_EQUAL(d->unit, "ns/point");
    /* A product's unit, and IFMA's moduli reach its row. */
    o = quick("ntt.mul", "N=64,B=1,q=50bit");
    CU_ASSERT_EQUAL_FATAL(run(&o), MPCE_OK);
    d = row_of("ntt-soft");
    CU_ASSERT_FATAL(d != NULL);
    CU_ASSERT_STRING_EQUAL(d->unit, "ns/product");
}

/* The chain is dependent calls: one run leaves E^n(block) in its block,
 * as n one-block API calls in a row give. */
static void test_chain_is_dependent(void)
{
    struct mpce_bench_shape s;
    CU_ASSERT_EQUAL_FATAL(mpce_bench_shape_parse("dpf.eval", "bits=5,points=1", &s), MPCE_OK);
    struct mpce_bench_fixture *f = NULL;
    CU_ASSERT_EQUAL_FATAL(mpce_bench_fixture_new(&s, &f), MPCE_OK);
    CU_ASSERT_EQUAL_FATAL(f->floor_blocks, 5);
    mpce_engine *e = tu_engine(0);
    struct mpce_slot *slot = mpce_registry_find(e, "prg-soft-bitslice");
    CU_ASSERT_PTR_NOT_NULL_FATAL(slot);
    struct mpce_bench_cand c;
    memset(&c, 0, sizeof(c));
    CU_ASSERT_EQUAL_FATAL(mpce_bench_chain_cand(slot, &s, f, &c), MPCE_OK);
    uint8_t want[16], blocks_after[32];
    memcpy(want, f->floor_buf, 16);
    memcpy(blocks_after + 16, f->floor_buf + 16, 16);
    CU_ASSERT_EQUAL(c.run(c.state), 0);
    mpce_prg *prg = NULL;
    CU_ASSERT_EQUAL_FATAL(mpce_prg_new(e, f->keys, 1, &prg), MPCE_OK);
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(mpce_prg_ecb(prg, "prg-soft-bitslice", 0, want, want, 1), MPCE_OK);
    CU_ASSERT(memcmp(f->floor_buf, want, 16) == 0);
    /* One block only: the next is untouched. */
    CU_ASSERT(memcmp(f->floor_buf + 16, blocks_after + 16, 16) == 0);
    mpce_prg_free(prg);
    c.teardown(c.state);
    mpce_bench_fixture_free(f);
}

static void test_threads_row(void)
{
    mpce_bench_options o = quick("prg.ecb", "n=256,threads=2");
    CU_ASSERT_EQUAL_FATAL(run(&o), MPCE_OK);
    CU_ASSERT_EQUAL_FATAL(n_rows, 2);
    CU_ASSERT_STRING_EQUAL(rows[0].shape, "n=256,threads=1");
    CU_ASSERT_STRING_EQUAL(rows[1].shape, "n=256,threads=2");
    CU_ASSERT(!rows[0].has_baseline);
    CU_ASSERT_STRING_EQUAL(rows[1].baseline, rows[0].impl);
    check_rows();
}

static void test_impl_filter(void)
{
    mpce_bench_options o = quick("prg.ctr", "n=64");
    o.impl = "prg-soft-bitslice";
    CU_ASSERT_EQUAL_FATAL(run(&o), MPCE_OK);
    for (size_t i = 0; i < n_rows; i++)
        CU_ASSERT(strcmp(rows[i].impl, "prg-soft-bitslice") == 0 ||
                  strcmp(rows[i].impl, "openssl-evp-aes-128-ctr") == 0);
    CU_ASSERT_PTR_NOT_NULL(row_of("prg-soft-bitslice"));
    check_rows();

    o.impl = "no-such-impl";
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "no-such-impl");
    o.impl = "ntt-soft"; /* known, but not in a PRG row */
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "no candidate");
}

/* --impl with knob values: those values timed beside the defaults, which
 * are their baseline; a value the implementation lacks is refused first. */
static void test_impl_knobs(void)
{
    mpce_bench_options o = quick("lpn.fold", "logk=10,n=1000,chunk=300");
    o.impl = "lpn-soft:chunk=64:prefetch=0";
    CU_ASSERT_EQUAL_FATAL(run(&o), MPCE_OK);
    const struct got_row *plain = row_of("lpn-soft"), *tuned = row_of(o.impl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plain);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tuned);
    CU_ASSERT(tuned->has_baseline);
    CU_ASSERT_STRING_EQUAL(tuned->baseline, "lpn-soft");
    check_rows();
    o.impl = "lpn-soft:chunk=65";
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "--impl: lpn-soft: knob chunk takes no value 65");
    CU_ASSERT_EQUAL(n_rows, 0);
}

static void test_refusals(void)
{
    mpce_bench_options o = quick("prg.nope", "n=1");
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "unknown benchmark op");
    o = quick("prg.ecb", "n=abc");
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "not a decimal");
    o = quick("prg.ecb", "blocks=4");
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "unknown key");
    o = quick("prg.mmo", "n=4");
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "missing m");
    o = quick("ntt.forward", "N=64,B=1,q=59bit");
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "q=59bit");
    o = quick("ntt.forward", "N=48,B=1,q=61bit");
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "power of two");
    o = quick("prg.ecb", "n=0");
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "out of range");
    o = quick(NULL, "n=12345");
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "no default benchmark row");
    o = quick("prg.ecb", "n=4");
    o.rounds = 65;
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "rounds");
    CU_ASSERT_EQUAL(n_rows, 0); /* refused before anything ran */
    CU_ASSERT_EQUAL(mpce_bench_run(tu_engine(0), NULL, NULL, NULL), MPCE_ERR_ARG);
}

static void test_default_rows(void)
{
    const char *op, *shape;
    size_t n = 0, dispatch = 0;
    struct mpce_bench_shape s;
    while (mpce_bench_default_row(n, &op, &shape) == MPCE_OK) {
        CU_ASSERT_EQUAL(mpce_bench_shape_parse(op, shape, &s), MPCE_OK);
        if (strcmp(op, "prg.dispatch") == 0 && strcmp(shape, "n=1") == 0)
            dispatch++;
        n++;
    }
    CU_ASSERT(n >= 15);
    CU_ASSERT_EQUAL(n, mpce_bench_default_count());
    /* make bench reports the dispatch overhead of a one-block call. */
    CU_ASSERT_EQUAL(dispatch, 1);
    CU_ASSERT_EQUAL(mpce_bench_default_row(n, &op, &shape), MPCE_ERR_ARG);
}

/* A row's shape scaled to a number of work elements (the crossover
 * search's sizes), and that size said as a caller's batch (`mpcengine
 * pins`). */
static void test_shape_at_and_count(void)
{
    struct mpce_bench_shape s;
    char buf[128];
    /* NTT: polynomials of N words; a size that is not a whole batch is none. */
    CU_ASSERT_EQUAL(mpce_bench_shape_at("ntt.forward", "N=4096,B=8,q=50bit", 4096u * 2048u, &s),
                    0);
    CU_ASSERT_EQUAL(s.B, 2048);
    CU_ASSERT_EQUAL(s.N, 4096);
    CU_ASSERT_EQUAL(mpce_bench_count_text("ntt.forward", "N=4096,B=8,q=50bit", 4096u * 2048u,
                                          buf, sizeof(buf)),
                    0);
    CU_ASSERT_STRING_EQUAL(buf, "B=2048 (polynomials of N=4096)");
    CU_ASSERT_EQUAL(mpce_bench_shape_at("ntt.forward", "N=4096,B=8,q=50bit", 4097, &s), -1);
    CU_ASSERT_EQUAL(mpce_bench_count_text("ntt.forward", "N=4096,B=8,q=50bit", 4097, buf,
                                          sizeof(buf)),
                    -1);
    /* Past the op's range (N * B at most 2^26) is none either. */
    CU_ASSERT_EQUAL(mpce_bench_shape_at("ntt.forward", "N=4096,B=8,q=50bit", UINT64_C(1) << 27,
                                        &s),
                    -1);
    /* mmo: m blocks a seed. */
    CU_ASSERT_EQUAL(mpce_bench_count_text("prg.mmo", "m=2,n=131072", 1u << 21, buf, sizeof(buf)),
                    0);
    CU_ASSERT_STRING_EQUAL(buf, "n=1048576 (seeds, m=2 keys each)");
    CU_ASSERT_EQUAL(mpce_bench_count_text("prg.mmo", "m=2,n=131072", 3, buf, sizeof(buf)), -1);
    CU_ASSERT_EQUAL(mpce_bench_count_text("prg.ecb", "n=262144", 370727, buf, sizeof(buf)), 0);
    CU_ASSERT_STRING_EQUAL(buf, "n=370727 (blocks)");
    /* DPF: keys of one point each; a full-domain eval's domain bits. */
    CU_ASSERT_EQUAL(mpce_bench_count_text("dpf.eval_keys", "bits=20,keys=262144", 1u << 21, buf,
                                          sizeof(buf)),
                    0);
    CU_ASSERT_STRING_EQUAL(buf, "keys=2097152 (keys, a point each)");
    CU_ASSERT_EQUAL(mpce_bench_count_text("dpf.evalall", "bits=18", 1u << 20, buf, sizeof(buf)),
                    0);
    CU_ASSERT_STRING_EQUAL(buf, "bits=20 (2^20 outputs a key)");
    CU_ASSERT_EQUAL(mpce_bench_count_text("dpf.evalall", "bits=18", 3u << 19, buf, sizeof(buf)),
                    -1);
    /* A buffer too short is refused, not cut. */
    CU_ASSERT_EQUAL(mpce_bench_count_text("prg.ecb", "n=262144", 370727, buf, 8), -1);
    /* The classes' spans: the crossover search's bounds inside each. */
    uint64_t lo, top;
    mpce_bench_class_span(2, &lo, &top);
    CU_ASSERT(lo == 4096 && top == 131072);
    mpce_bench_class_span(3, &lo, &top);
    CU_ASSERT(lo == 262144 && top == 1048576);
}

/* ---- the public API's dispatch overhead ------------------------------------- */

/* What "auto" runs for a one-block ECB call on the test engine. */
static void auto_ecb(size_t n, char *name, size_t len)
{
    uint8_t key[16] = {0};
    mpce_prg *ctx;
    const char *got;
    CU_ASSERT_EQUAL_FATAL(mpce_prg_new(tu_engine(0), key, 1, &ctx), MPCE_OK);
    CU_ASSERT_EQUAL_FATAL(mpce_prg_resolve(ctx, NULL, "prg.ecb", n, &got), MPCE_OK);
    snprintf(name, len, "%s", got);
    mpce_prg_free(ctx);
}

static void check_dispatch_rows_of(const char *op, const char *shape, const char *impl)
{
    const struct got_row *direct = row_of("direct"), *api = row_of("api");
    CU_ASSERT_FATAL(direct != NULL && api != NULL);
    CU_ASSERT(!direct->skipped && !api->skipped);
    CU_ASSERT_STRING_EQUAL(api->op, op);
    CU_ASSERT_STRING_EQUAL(api->shape, shape);
    CU_ASSERT_STRING_EQUAL(api->unit, "ns/call");
    CU_ASSERT_STRING_EQUAL(direct->unit, "ns/call");
    /* direct is the api row's baseline; direct has none of its own. */
    CU_ASSERT(api->has_baseline);
    CU_ASSERT_STRING_EQUAL(api->baseline, "direct");
    CU_ASSERT(!direct->has_baseline);
    /* The rate is the time per call in ns. */
    CU_ASSERT(fabs(api->rate - api->median * 1e9) <= 1e-9 * api->rate);
    /* The overhead in ns per call, and the implementation the call ran. */
    CU_ASSERT(strstr(api->note, "ns/call") != NULL);
    CU_ASSERT(strstr(api->note, " ns)") != NULL);
    CU_ASSERT(strstr(api->note, impl) != NULL);
    CU_ASSERT(strstr(direct->note, impl) != NULL);
    if (strstr(api->note, impl) == NULL)
        fprintf(stderr, "  note was: %s (expected %s)\n", api->note, impl);
    /* And as a share of the op's own time: the API's checks against it. */
    CU_ASSERT(strstr(api->note, " % of direct") != NULL);
    check_rows();
}

static void check_dispatch_rows(const char *shape, const char *impl)
{
    check_dispatch_rows_of("prg.dispatch", shape, impl);
}

static void test_dispatch_row(void)
{
    char impl[96];
    auto_ecb(1, impl, sizeof(impl));
    mpce_bench_options o = quick("prg.dispatch", "n=1");
    CU_ASSERT_EQUAL_FATAL(run(&o), MPCE_OK);
    CU_ASSERT_EQUAL(n_rows, 2);
    check_dispatch_rows("n=1", impl);
    CU_ASSERT(strstr(row_of("api")->note, "\"auto\" resolved to") != NULL);
    /* Other small counts too. */
    auto_ecb(16, impl, sizeof(impl));
    o = quick("prg.dispatch", "n=16");
    CU_ASSERT_EQUAL_FATAL(run(&o), MPCE_OK);
    check_dispatch_rows("n=16", impl);
    /* An implementation named: that one, through the named route. */
    o = quick("prg.dispatch", "n=1");
    o.impl = "prg-soft-bitslice";
    CU_ASSERT_EQUAL_FATAL(run(&o), MPCE_OK);
    check_dispatch_rows("n=1", "prg-soft-bitslice");
    CU_ASSERT(strstr(row_of("api")->note, "named prg-soft-bitslice") != NULL);
    /* Selected by op alone: its default row. */
    o = quick("prg.dispatch", NULL);
    CU_ASSERT_EQUAL_FATAL(run(&o), MPCE_OK);
    CU_ASSERT_PTR_NOT_NULL(row_of("api"));
    CU_ASSERT_STRING_EQUAL(rows[0].shape, "n=1");
    /* Small calls only, and never split over threads. */
    o = quick("prg.dispatch", "n=0");
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "out of range");
    o = quick("prg.dispatch", "n=1048576");
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "out of range");
    o = quick("prg.dispatch", "n=1,threads=2");
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "unknown key");
    o = quick("prg.dispatch", "n=1");
    o.impl = "ntt-soft"; /* known, but not a PRG */
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "no candidate");

    /* ntt.dispatch: a forward transform through the API against the op
     * table of the implementation it resolves to, on one thread. */
    o = quick("ntt.dispatch", "N=64,B=3,q=61bit");
    o.impl = "ntt-soft";
    CU_ASSERT_EQUAL_FATAL(run(&o), MPCE_OK);
    CU_ASSERT_EQUAL(n_rows, 2);
    check_dispatch_rows_of("ntt.dispatch", "N=64,B=3,q=61bit", "ntt-soft");
    CU_ASSERT(strstr(row_of("direct")->note, "ntt-soft's ntt.forward through its op table") !=
              NULL);
    o = quick("ntt.dispatch", "N=64,B=3,q=61bit,threads=2");
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "unknown key");
    /* op= times the inverse and the product the same way: each pays the
     * API's input check of its own (mul: both operands). */
    static const struct {
        const char *shape, *note;
    } ops[] = {
        {"N=64,B=3,q=61bit,op=inverse", "ntt-soft's ntt.inverse through its op table"},
        {"N=64,B=3,q=50bit,op=mul", "ntt-soft's ntt.mul through its op table"},
        {"N=64,B=3,q=61bit,op=forward", "ntt-soft's ntt.forward through its op table"},
        /* In place, on a context of either refusal mode (ntt.h). */
        {"N=64,B=3,q=61bit,op=forward,inplace=keep",
         "ntt-soft's ntt.forward through its op table, in place; api's context keeps"},
        {"N=64,B=3,q=50bit,op=mul,inplace=zero",
         "ntt-soft's ntt.mul through its op table, in place; api's context zeroes"},
    };
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        o = quick("ntt.dispatch", ops[i].shape);
        o.impl = "ntt-soft";
        CU_ASSERT_EQUAL_FATAL(run(&o), MPCE_OK);
        CU_ASSERT_EQUAL(n_rows, 2);
        check_dispatch_rows_of("ntt.dispatch", ops[i].shape, "ntt-soft");
        CU_ASSERT(strstr(row_of("direct")->note, ops[i].note) != NULL);
    }
    o = quick("ntt.dispatch", "N=64,B=3,q=61bit,op=square");
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "op=square: expected forward, inverse or mul");
    o = quick("ntt.dispatch", "N=64,B=3,q=61bit,inplace=1");
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "inplace=1: expected keep or zero");
    o = quick("ntt.forward", "N=64,B=3,q=61bit,inplace=zero");
    TU_ASSERT_ERROR(run(&o), MPCE_ERR_ARG, "unknown key");
}

/* ---- asynchronous implementations --------------------------------------------- */

/* The emulated device's module (tests/modules), built by make check next to
 * the command: MPCENGINE_BIN is $(abs_top_builddir)/tools/mpcengine. */
static int emudev_path(char *buf, size_t len)
{
    const char *bin = MPCENGINE_BIN;
    const char *tail = "tools/mpcengine";
    size_t n = strlen(bin), t = strlen(tail);
    if (n < t || strcmp(bin + n - t, tail) != 0)
        return -1;
    snprintf(buf, len, "%.*stests/modules/.libs/mod_emudev.so", (int)(n - t), bin);
    return access(buf, R_OK) == 0 ? 0 : -1;
}

/* A copy of file `from` at `to` (the loader takes no symbolic links). */
static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    if (!in)
        return -1;
    int fd = open(to, O_WRONLY | O_CREAT | O_EXCL, 0755);
    FILE *out = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!out) {
        if (fd >= 0)
            close(fd);
        fclose(in);
        return -1;
    }
    char buf[65536];
    size_t n;
    int rc = 0;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            rc = -1;
    if (ferror(in))
        rc = -1;
    fclose(in);
    if (fclose(out) != 0)
        rc = -1;
    return rc;
}

static void test_async_left_to_api(void)
{
    char so[PATH_MAX], dir[PATH_MAX], copy[PATH_MAX + 32];
    if (emudev_path(so, sizeof(so)) != 0) {
        printf("skipped: %s not built (make check builds it) ", so);
        return;
    }
    /* A directory holding only the emulated device's module. */
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/mpce-bench-emu-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    snprintf(copy, sizeof(copy), "%s/mod_emudev.so", dir);
    CU_ASSERT_FATAL(copy_file(so, copy) == 0);
    mpce_options opts = {
        .struct_size = sizeof(opts),
        .plugin_path = dir,
        .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV | MPCE_OPT_NO_SYSTEM_CONFIG,
    };
    mpce_engine *e = NULL;
    CU_ASSERT_EQUAL_FATAL(mpce_engine_new(&opts, &e), MPCE_OK);

    /* Not timed through its op table: a skipped row pointing at the API rows. */
    mpce_bench_options o = quick("ntt.forward", "N=64,B=2,q=61bit");
    n_rows = 0;
    CU_ASSERT_EQUAL(mpce_bench_run(e, &o, collect, NULL), MPCE_OK);
    const struct got_row *g = row_of("ntt-emudev");
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT(g->skipped);
    CU_ASSERT(strstr(g->note, "MPCE_IMPL_ASYNC") != NULL);
    CU_ASSERT(strstr(g->note, "API rows") != NULL);
    CU_ASSERT_PTR_NOT_NULL(row_of("ntt-soft"));
    CU_ASSERT(!row_of("ntt-soft")->skipped);
    check_rows();

    /* The API rows measure it. */
    o = quick("ntt.forward", "N=64,B=2,q=61bit,threads=2");
    o.impl = "ntt-emudev";
    n_rows = 0;
    CU_ASSERT_EQUAL(mpce_bench_run(e, &o, collect, NULL), MPCE_OK);
    CU_ASSERT_EQUAL(n_rows, 2);
    for (size_t i = 0; i < n_rows; i++) {
        CU_ASSERT_STRING_EQUAL(rows[i].impl, "ntt-emudev");
        CU_ASSERT(!rows[i].skipped);
        if (rows[i].skipped)
            fprintf(stderr, "  note was: %s\n", rows[i].note);
    }
    check_rows();

    mpce_engine_free(e);
    unlink(copy);
    rmdir(dir);
}

/* ---- peers ---------------------------------------------------------------- */

static unsigned peer_setups, peer_teardowns;
static uint64_t peer_n;

static int peer_setup(const mpce_bench_case *c, void *arg, void **state)
{
    CU_ASSERT_STRING_EQUAL(c->op, "prg.ecb");
    CU_ASSERT_EQUAL(mpce_bench_param(c, "n", &peer_n), MPCE_OK);
    uint64_t v;
    CU_ASSERT_EQUAL(mpce_bench_param(c, "N", &v), MPCE_ERR_ARG);
    peer_setups++;
    *state = arg;
    return 0;
}

static void peer_teardown(void *state)
{
    peer_teardowns++;
}

static void test_peers(void)
{
    mpce_bench_peer p[2];
    memset(p, 0, sizeof(p));
    p[0].struct_size = sizeof(p[0]);
    p[0].name = "test-peer";
    p[0].op = "prg.ecb";
    p[0].note = "a test";
    p[0].setup = peer_setup;
    p[0].run = spin;
    p[0].teardown = peer_teardown;
    p[0].arg = &calls[0];
    /* Registered but unavailable, as the command does without NTL. */
    p[1].struct_size = sizeof(p[1]);
    p[1].name = "ntl";
    p[1].op = "ntt.forward";
    p[1].note = "NTL not installed here";

    peer_setups = peer_teardowns = 0;
    mpce_bench_options o = quick("prg.ecb", "n=32");
    o.peers = p;
    o.n_peers = 2;
    CU_ASSERT_EQUAL_FATAL(run(&o), MPCE_OK);
    const struct got_row *g = row_of("test-peer");
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT_STRING_EQUAL(g->note, "a test");
    CU_ASSERT_STRING_EQUAL(g->baseline, "openssl-evp-aes-128-ecb");
    CU_ASSERT_EQUAL(peer_n, 32);
    CU_ASSERT(peer_setups == 1 && peer_teardowns == 1);
    check_rows();

    o = quick("ntt.forward", "N=64,B=1,q=60bit");
    o.peers = p;
    o.n_peers = 2;
    CU_ASSERT_EQUAL_FATAL(run(&o), MPCE_OK);
    g = row_of("ntt-soft");
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT(!g->has_baseline);
    CU_ASSERT(strstr(g->note, "baseline ntl not measured: NTL not installed here") != NULL);
}

/* ---- the command ------------------------------------------------------------ */

static char out_path[4000], err_path[4100];

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    CU_ASSERT_FATAL(f != NULL);
    char *buf = calloc(1, 1 << 20);
    CU_ASSERT_FATAL(buf != NULL);
    size_t got = fread(buf, 1, (1 << 20) - 1, f);
    buf[got] = '\0';
    fclose(f);
    return buf;
}

/* The command's configuration: no tune may start (an installed helper and a
 * missing system pins file would otherwise make the first run tune, and
 * write pins, in the middle of the tests). */
static const char *quiet_config(void)
{
    static char path[4200];
    if (!path[0]) {
        char *dir = tu_temp_dir();
        snprintf(path, sizeof(path), "%s/engine.conf", dir);
        free(dir);
        tu_write_text(path, "[engine]\nuser_config = no\n[tune]\nmode = off\n", 0644);
    }
    return path;
}

/* The command with args; its exit status, stdout and stderr. */
static int command(const char *const *args, char **out, char **err)
{
    const char *argv[32];
    size_t n = 0;
    argv[n++] = MPCENGINE_BIN;
    argv[n++] = "bench";
    for (; *args && n < 26; args++)
        argv[n++] = *args;
    argv[n++] = "--config";
    argv[n++] = quiet_config();
    if (TEST_PLUGIN_PATH[0]) {
        argv[n++] = "--plugin-path";
        argv[n++] = TEST_PLUGIN_PATH;
    }
    argv[n] = NULL;
    const char *tmp = getenv("TMPDIR");
    snprintf(out_path, sizeof(out_path), "%s/mpce-bench-out-%d", tmp && *tmp ? tmp : "/tmp",
             (int)getpid());
    snprintf(err_path, sizeof(err_path), "%s.err", out_path);
    posix_spawn_file_actions_t fa;
    CU_ASSERT_FATAL(posix_spawn_file_actions_init(&fa) == 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int status;
    CU_ASSERT_FATAL(posix_spawn(&pid, MPCENGINE_BIN, &fa, NULL, (char *const *)argv, environ) ==
                    0);
    posix_spawn_file_actions_destroy(&fa);
    CU_ASSERT_FATAL(waitpid(pid, &status, 0) == pid);
    *out = slurp(out_path);
    *err = slurp(err_path);
    unlink(out_path);
    unlink(err_path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A strict little JSON reader: enough to prove the output parses, and to
 * collect the keys of each object in the top-level array. */
struct json {
    const char *p;
    int objects;
    int keys_ok; /* every object had the required keys */
};

static void ws(struct json *j)
{
    while (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r')
        j->p++;
}

static int value(struct json *j, int depth);

static int string(struct json *j, char *buf, size_t len)
{
    size_t n = 0;
    if (*j->p != '"')
        return -1;
    for (j->p++; *j->p != '"'; j->p++) {
        if (*j->p == '\0' || (unsigned char)*j->p < 0x20)
            return -1;
        if (*j->p == '\\') {
            j->p++;
            if (!strchr("\"\\/bfnrtu", *j->p) || *j->p == '\0')
                return -1;
        }
        if (buf && n + 1 < len)
            buf[n++] = *j->p;
    }
    if (buf)
        buf[n] = '\0';
    j->p++;
    return 0;
}

static int number(struct json *j)
{
    char *end;
    strtod(j->p, &end);
    if (end == j->p || !(*j->p == '-' || (*j->p >= '0' && *j->p <= '9')))
        return -1;
    j->p = end;
    return 0;
}

static int object(struct json *j, int depth)
{
    static const char *const need[] = {"op", "impl", "shape", "median_s", "min_s",
                                       "max_s", "unit_rate", "unit"};
    unsigned seen = 0;
    int has_baseline = 0, has_ratio = 0;
    j->p++;
    ws(j);
    if (*j->p == '}') {
        j->p++;
        return 0;
    }
    for (;;) {
        char key[64];
        ws(j);
        if (string(j, key, sizeof(key)) != 0)
            return -1;
        for (unsigned i = 0; i < sizeof(need) / sizeof(need[0]); i++)
            if (strcmp(key, need[i]) == 0)
                seen |= 1u << i;
        has_baseline |= strcmp(key, "baseline") == 0;
        has_ratio |= strcmp(key, "ratio") == 0;
        ws(j);
        if (*j->p++ != ':' || value(j, depth + 1) != 0)
            return -1;
        ws(j);
        if (*j->p == ',') {
            j->p++;
            continue;
        }
        if (*j->p++ != '}')
            return -1;
        break;
    }
    if (depth == 1) {
        j->objects++;
        if (seen != (1u << (sizeof(need) / sizeof(need[0]))) - 1 || has_baseline != has_ratio)
            j->keys_ok = 0;
    }
    return 0;
}

static int value(struct json *j, int depth)
{
    ws(j);
    if (depth > 8)
        return -1;
    if (*j->p == '{')
        return object(j, depth);
    if (*j->p == '"')
        return string(j, NULL, 0);
    if (*j->p == '[') {
        j->p++;
        ws(j);
        if (*j->p == ']') {
            j->p++;
            return 0;
        }
        for (;;) {
            if (value(j, depth + 1) != 0)
                return -1;
            ws(j);
            if (*j->p == ',') {
                j->p++;
                continue;
            }
            return *j->p++ == ']' ? 0 : -1;
        }
    }
    if (strncmp(j->p, "null", 4) == 0 || strncmp(j->p, "true", 4) == 0) {
        j->p += 4;
        return 0;
    }
    if (strncmp(j->p, "false", 5) == 0) {
        j->p += 5;
        return 0;
    }
    return number(j);
}

/* 0 if text is one JSON array of well-formed rows; *objects counted. */
static int parse_rows(const char *text, int *objects)
{
    struct json j = {text, 0, 1};
    ws(&j);
    if (*j.p != '[' || value(&j, 0) != 0)
        return -1;
    ws(&j);
    *objects = j.objects;
    return *j.p == '\0' && j.keys_ok ? 0 : -1;
}

static void test_json_reader(void)
{
    int n;
    CU_ASSERT_EQUAL(parse_rows("[]", &n), 0);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(parse_rows("[{\"op\": \"a\", \"impl\": \"b\", \"shape\": \"n=1\", "
                               "\"median_s\": 1e-3, \"min_s\": 1, \"max_s\": 2, "
                               "\"unit_rate\": 3.5, \"unit\": \"GB/s\"}]", &n), 0);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_NOT_EQUAL(parse_rows("[{\"op\": \"a\"}]", &n), 0);    /* keys missing */
    CU_ASSERT_NOT_EQUAL(parse_rows("[{\"op\": \"a\",}]", &n), 0);   /* trailing comma */
    CU_ASSERT_NOT_EQUAL(parse_rows("[{\"op\": nan}]", &n), 0);
    CU_ASSERT_NOT_EQUAL(parse_rows("[", &n), 0);
}

static void test_cli_json(void)
{
    const char *args[] = {"--json", "--op", "prg.ecb", "--shape", "n=64", "--rounds", "2",
                          "--window-ms", "1", NULL};
    char *out, *err;
    int n = 0;
    CU_ASSERT_EQUAL(command(args, &out, &err), 0);
    CU_ASSERT_EQUAL(parse_rows(out, &n), 0);
    CU_ASSERT(n >= 2); /* prg-soft-bitslice and the EVP peer at least */
    CU_ASSERT(strstr(out, "\"impl\": \"openssl-evp-aes-128-ecb\"") != NULL);
    CU_ASSERT(strstr(out, "\"baseline\": \"openssl-evp-aes-128-ecb\"") != NULL);
    if (parse_rows(out, &n) != 0)
        fprintf(stderr, "output was: %s\nstderr: %s\n", out, err);
    free(out);
    free(err);

    const char *table[] = {"--op", "prg.ecb", "--shape", "n=64", "--rounds", "1",
                           "--window-ms", "1", NULL};
    CU_ASSERT_EQUAL(command(table, &out, &err), 0);
    /* What is coming and on which CPU, then the table. */
    CU_ASSERT(strncmp(out, "bench: 1 row, CPU ", 18) == 0);
    const char *second = strchr(out, '\n');
    CU_ASSERT_FATAL(second != NULL);
    CU_ASSERT(strncmp(second + 1, "OP ", 3) == 0);
    CU_ASSERT(strstr(out, "prg-soft-bitslice") != NULL);
    free(out);
    free(err);

    /* The dispatch row, with its baseline and its note. */
    const char *disp[] = {"--json", "--op", "prg.dispatch", "--rounds", "2", "--window-ms", "1",
                          NULL};
    CU_ASSERT_EQUAL(command(disp, &out, &err), 0);
    CU_ASSERT_EQUAL(parse_rows(out, &n), 0);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT(strstr(out, "\"impl\": \"api\"") != NULL);
    CU_ASSERT(strstr(out, "\"baseline\": \"direct\"") != NULL);
    CU_ASSERT(strstr(out, "\"unit\": \"ns/call\"") != NULL);
    CU_ASSERT(strstr(out, "dispatch overhead") != NULL);
    /* The first line went to stderr: stdout is only the JSON array. */
    CU_ASSERT(strncmp(err, "bench: 1 row, CPU ", 18) == 0);
    free(out);
    free(err);
}

/* The first line comes at once, also through a pipe: read it while the
 * command is still measuring a row that takes a minute, then stop it. */
static void test_cli_first_line(void)
{
    int fds[2];
    CU_ASSERT_FATAL(pipe(fds) == 0);
    const char *argv[16];
    size_t n = 0;
    argv[n++] = MPCENGINE_BIN;
    argv[n++] = "bench";
    argv[n++] = "--op";
    argv[n++] = "prg.ecb";
    argv[n++] = "--shape";
    argv[n++] = "n=64";
    argv[n++] = "--rounds";
    argv[n++] = "64";
    argv[n++] = "--window-ms";
    argv[n++] = "200";
    argv[n++] = "--config";
    argv[n++] = quiet_config();
    if (TEST_PLUGIN_PATH[0]) {
        argv[n++] = "--plugin-path";
        argv[n++] = TEST_PLUGIN_PATH;
    }
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    CU_ASSERT_FATAL(posix_spawn_file_actions_init(&fa) == 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    pid_t pid;
    CU_ASSERT_FATAL(posix_spawn(&pid, MPCENGINE_BIN, &fa, NULL, (char *const *)argv, environ) ==
                    0);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    char line[512];
    size_t got = 0;
    while (got + 1 < sizeof(line)) {
        ssize_t r = read(fds[0], line + got, 1);
        if (r != 1 || line[got] == '\n')
            break;
        got++;
    }
    line[got] = '\0';
    int status;
    /* Still running: the line did not wait for the end (at least 64 rounds
     * of 3 windows of 200 ms each for each of the row's candidates). */
    CU_ASSERT_EQUAL(waitpid(pid, &status, WNOHANG), 0);
    CU_ASSERT(strncmp(line, "bench: 1 row, CPU ", 18) == 0);
    if (strncmp(line, "bench: 1 row, CPU ", 18) != 0)
        fprintf(stderr, "  first line was: %s\n", line);
    kill(pid, SIGTERM);
    CU_ASSERT(waitpid(pid, &status, 0) == pid);
    close(fds[0]);
}

static void test_cli_refusals(void)
{
    static const char *const cases[][5] = {
        {"--op", "prg.nope", NULL, NULL, "unknown benchmark op"},
        {"--op", "prg.ecb", "--shape", "n=zz", "not a decimal"},
        {"--op", "prg.ecb", "--shape", "q=61bit", "unknown key"},
        {"--shape", "n=3", NULL, NULL, "no default benchmark row"},
        {"--rounds", "0", NULL, NULL, "--rounds"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *args[] = {cases[i][0], cases[i][1], cases[i][2], cases[i][3], "--json",
                              NULL};
        if (!cases[i][2])
            args[2] = "--json", args[3] = NULL;
        char *out, *err;
        CU_ASSERT_EQUAL(command(args, &out, &err), 2);
        CU_ASSERT_STRING_EQUAL(out, "");
        CU_ASSERT(strstr(err, cases[i][4]) != NULL);
        CU_ASSERT(strncmp(err, "mpcengine bench: ", 17) == 0);
        free(out);
        free(err);
    }
}

/* ---- mpcengine bench --plot ------------------------------------------------ */

/* The measured implementations of `op` in a table on stdout (skipped rows
 * left out), space-separated with a space on either side. */
static void measured_impls(const char *out, const char *op, char *names, size_t len)
{
    size_t used = 0;
    names[0] = '\0';
    for (const char *line = out, *end; *line; line = end ? end + 1 : line + strlen(line)) {
        end = strchr(line, '\n');
        char o[32], shape[128], impl[96];
        if (sscanf(line, "%31s %127s %95s", o, shape, impl) != 3 || strcmp(o, op) != 0)
            continue;
        const char *skip = strstr(line, "skipped:");
        char key[100];
        snprintf(key, sizeof(key), " %s ", impl);
        if ((skip && (!end || skip < end)) || strstr(names, key))
            continue;
        used += (size_t)snprintf(names + used, len - used, "%s%s ", used ? "" : " ", impl);
        if (used >= len)
            break;
    }
}

static size_t count_of(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* xmllint --noout FILE: 0 when well-formed, 1 when not, -1 when there is
 * no xmllint to ask. */
static int xmllint(const char *path)
{
    const char *dirs[] = {"/usr/bin", "/bin", "/usr/local/bin"};
    char bin[64] = "";
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !bin[0]; i++) {
        snprintf(bin, sizeof(bin), "%s/xmllint", dirs[i]);
        if (access(bin, X_OK) != 0)
            bin[0] = '\0';
    }
    if (!bin[0])
        return -1;
    const char *argv[] = {bin, "--noout", path, NULL};
    pid_t pid;
    int status;
    if (posix_spawn(&pid, bin, NULL, NULL, (char *const *)argv, environ) != 0 ||
        waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static void plot_path(char *buf, size_t len, const char *name)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(buf, len, "%s/mpce-bench-%d-%s", tmp && *tmp ? tmp : "/tmp", (int)getpid(), name);
}

/* The sweep of prg.ecb (quick timing), its rows on stdout and the SVG. */
static void test_cli_plot(void)
{
    char svg_path[512];
    plot_path(svg_path, sizeof(svg_path), "plot.svg");
    unlink(svg_path);
    const char *args[] = {"--plot", svg_path, "--op", "prg.ecb", "--rounds", "2",
                          "--window-ms", "1", NULL};
    char *out, *err;
    CU_ASSERT_EQUAL_FATAL(command(args, &out, &err), 0);
    /* The sweep's rows, printed as the bench prints rows, tiny to large. */
    CU_ASSERT(strncmp(out, "bench: 6 rows, CPU ", 19) == 0);
    static const char *const shapes[] = {" n=16 ", " n=256 ", " n=4096 ", " n=65536 ",
                                         " n=262144 ", " n=1048576 "};
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        CU_ASSERT(strstr(out, shapes[i]) != NULL);
    CU_ASSERT(strstr(out, "bench: plot written to ") != NULL);
    char names[2048];
    measured_impls(out, "prg.ecb", names, sizeof(names));
    CU_ASSERT(strstr(names, " prg-soft-bitslice ") != NULL);
    CU_ASSERT(strstr(names, " openssl-evp-aes-128-ecb ") != NULL);

    char *svg = slurp(svg_path);
    size_t len = strlen(svg);
    while (len && (svg[len - 1] == '\n' || svg[len - 1] == ' '))
        svg[--len] = '\0';
    CU_ASSERT(strncmp(svg, "<svg", 4) == 0);
    CU_ASSERT(len > 6 && strcmp(svg + len - 6, "</svg>") == 0);
    /* One line per implementation that ran. */
    for (char *save = NULL, *name = strtok_r(names, " ", &save); name;
         name = strtok_r(NULL, " ", &save)) {
        char attr[128];
        snprintf(attr, sizeof(attr), "<polyline data-impl=\"%s\"", name);
        CU_ASSERT_EQUAL(count_of(svg, attr), 1);
        if (count_of(svg, attr) != 1)
            fprintf(stderr, "  no single line for %s\n", name);
    }
    /* The classes, their boundaries, and "auto" at each of the 6 points. */
    static const char *const classes[] = {">tiny<", ">small<", ">medium<", ">large<"};
    for (size_t i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(count_of(svg, classes[i]), 1);
    CU_ASSERT_EQUAL(count_of(svg, "class=\"size-class\""), 3);
    CU_ASSERT_EQUAL(count_of(svg, "<rect class=\"auto\""), 6);
    CU_ASSERT(strstr(svg, "data-op=\"prg.ecb\"") != NULL);
    CU_ASSERT(strstr(svg, "ns per block") != NULL);
    int lint = xmllint(svg_path);
    if (lint < 0)
        printf("\n  skipped: xmllint not installed (the SVG's well-formedness)\n");
    else
        CU_ASSERT_EQUAL(lint, 0);
    free(svg);
    free(out);
    free(err);
    unlink(svg_path);
}

/* A path that cannot be written is refused before anything is measured,
 * naming it; so are --shape and an op without a sweep. */
static void test_cli_plot_refusals(void)
{
    char dir[512], nodir[600], file[512];
    plot_path(dir, sizeof(dir), "dir");
    rmdir(dir);
    CU_ASSERT_FATAL(mkdir(dir, 0700) == 0);
    snprintf(nodir, sizeof(nodir), "%s/missing/plot.svg", dir);
    const char *targets[] = {dir, nodir};
    for (size_t i = 0; i < 2; i++) {
        const char *args[] = {"--plot", targets[i], "--op", "prg.ecb", NULL};
        char *out, *err;
        CU_ASSERT_NOT_EQUAL(command(args, &out, &err), 0);
        CU_ASSERT_STRING_EQUAL(out, ""); /* refused before the first line */
        CU_ASSERT(strncmp(err, "mpcengine bench: --plot: cannot write '", 39) == 0);
        CU_ASSERT(strstr(err, targets[i]) != NULL);
        CU_ASSERT(strstr(err, i == 0 ? "Is a directory" : "No such file") != NULL);
        free(out);
        free(err);
    }

    plot_path(file, sizeof(file), "refused.svg");
    unlink(file);
    static const char *const cases[][3] = {
        {"--shape", "n=64", "does not take --shape"},
        {"--op", "prg.dispatch", "no sweep"},
    };
    for (size_t i = 0; i < 2; i++) {
        const char *args[8] = {"--plot", file, cases[i][0], cases[i][1], NULL};
        if (i == 0)
            args[4] = "--op", args[5] = "prg.ecb", args[6] = NULL;
        char *out, *err;
        CU_ASSERT_EQUAL(command(args, &out, &err), 2);
        CU_ASSERT_STRING_EQUAL(out, "");
        CU_ASSERT(strstr(err, cases[i][2]) != NULL);
        CU_ASSERT(access(file, F_OK) != 0); /* nothing left behind */
        free(out);
        free(err);
    }
    rmdir(dir);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"statistics: median, min, max", test_stats},
        {"measure: interleaved rounds, a failing candidate dropped", test_measure},
        {"a PRG row: EVP baseline, ratio = baseline / this", test_prg_row},
        {"every op at a tiny shape; the DPF's AES floor", test_every_op},
        {"dpf.eval's latency chain is dependent one-block calls", test_chain_is_dependent},
        {"thread scaling: threads=T against threads=1", test_threads_row},
        {"--impl keeps the baseline; unknown names refused", test_impl_filter},
        {"--impl with knob values: beside the defaults", test_impl_knobs},
        {"unknown ops, keys and values refused with a message", test_refusals},
        {"the default rows parse and include prg.dispatch n=1", test_default_rows},
        {"a row's shape at a size, and that size as a batch", test_shape_at_and_count},
        {"prg.dispatch: api against direct, overhead in the note", test_dispatch_row},
        {"asynchronous implementations: skipped directly, API rows", test_async_left_to_api},
        {"caller peers, and an unavailable baseline peer", test_peers},
        {"the JSON checker itself", test_json_reader},
        {"mpcengine bench --json parses; the table prints", test_cli_json},
        {"mpcengine bench prints its first line at once, piped", test_cli_first_line},
        {"mpcengine bench refuses bad options with exit 2", test_cli_refusals},
        {"mpcengine bench --plot: a sweep, and an SVG of it", test_cli_plot},
        {"mpcengine bench --plot refuses a path it cannot write", test_cli_plot_refusals},
        {NULL, NULL},
    };
    return tu_main("bench", tests);
}
