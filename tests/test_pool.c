/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Worker pool suite: large calls split over threads give the bytes of the
 * single-threaded call for every op of every implementation (sizes that are
 * not multiples of any slice, more slices than cores), concurrent calls on
 * one context, error reporting from worker threads, lazy start, and the
 * [engine] threads key. Timings never go here.
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/runtime/pool.h"
#include "testutil.h"

#define MAX_IMPLS 16
#define NENG 3

static const unsigned thread_counts[NENG] = {1, 2, 3};
static const uint64_t Q61 = UINT64_C(0x1fffffffffe00001);
static const uint64_t Q61B = UINT64_C(0x1fffffffffc80001);
static const uint64_t Q50 = UINT64_C(0x0003ffffffd20001);
static const uint64_t Q50B = UINT64_C(0x0003ffffffb80001);

/* A private engine with every implementation allowed and one more [engine]
 * line (the threads key) on line 3 of its file. */
static mpce_status engine_with(const char *threads_line, mpce_engine **out)
{
    char text[256];
    snprintf(text, sizeof(text), "[engine]\nallow_variable_time = yes\n%s\n", threads_line);
    return tu_engine_conf(text, out);
}

/* Engines with threads = 1, 2, 3, made fresh for each test so that each
 * test shows its own op started the pools. The split thresholds are lifted
 * so that every backend, however fast, cuts these calls into as many slices
 * as the engine allows (four per thread). */
static void engines_new(mpce_engine *e[NENG])
{
    for (int i = 0; i < NENG; i++) {
        char line[32];
        snprintf(line, sizeof(line), "threads = %u", thread_counts[i]);
        mpce_status st = engine_with(line, &e[i]);
        if (st != MPCE_OK)
            fprintf(stderr, "  engine (%s): %s\n", line, mpce_last_error());
        CU_ASSERT_FATAL(st == MPCE_OK);
        CU_ASSERT_EQUAL(mpce_engine_threads(e[i]), thread_counts[i]);
        e[i]->slice_min_shift = 64;
    }
}

/* Threads = 1 never starts a pool; the others must have split a call. */
static void engines_free(mpce_engine *e[NENG])
{
    for (int i = 0; i < NENG; i++) {
        if (thread_counts[i] == 1) {
            CU_ASSERT_PTR_NULL(e[i]->pool);
        } else {
            CU_ASSERT_PTR_NOT_NULL(e[i]->pool);
        }
        mpce_engine_free(e[i]);
    }
}

/* The implementations of prim that e lists: at least one. */
static size_t impls_of(mpce_engine *e, mpce_primitive prim, const char *impls[MAX_IMPLS])
{
    size_t ni = tu_impls(e, prim, impls, MAX_IMPLS);
    CU_ASSERT_FATAL(ni > 0);
    return ni;
}

/* Fresh engines (engines_new) and the implementations of prim. */
static size_t engines_impls(mpce_engine *e[NENG], mpce_primitive prim,
                            const char *impls[MAX_IMPLS])
{
    engines_new(e);
    return impls_of(e[0], prim, impls);
}

static uint8_t *random_bytes(uint64_t seed, size_t len)
{
    uint8_t *p = malloc(len ? len : 1);
    CU_ASSERT_FATAL(p != NULL);
    tu_splitmix_bytes(seed, p, len);
    return p;
}

/* out[1..] must equal out[0]; names the implementation on failure. */
static void assert_same(const char *what, const char *impl, uint8_t *const out[NENG],
                        size_t len)
{
    for (int i = 1; i < NENG; i++) {
        if (memcmp(out[0], out[i], len) != 0) {
            fprintf(stderr, "\n  %s (%s): threads = %u differs from threads = 1\n", what, impl,
                    thread_counts[i]);
            CU_FAIL("split output differs");
        }
    }
}

static void alloc_outs(uint8_t *out[NENG], size_t len, uint8_t fill)
{
    for (int i = 0; i < NENG; i++) {
        out[i] = malloc(len);
        CU_ASSERT_FATAL(out[i] != NULL);
        memset(out[i], fill, len);
    }
}

static void free_outs(uint8_t *out[NENG])
{
    for (int i = 0; i < NENG; i++)
        free(out[i]);
}

/* ---- PRG ------------------------------------------------------------------ */

static void test_prg(void)
{
    mpce_engine *e[NENG];
    const char *impls[MAX_IMPLS];
    size_t ni = engines_impls(e, MPCE_PRIM_PRG, impls);
    uint8_t keys[3][16];
    tu_splitmix_bytes(1, keys, sizeof(keys));
    mpce_prg *ctx[NENG];
    for (int i = 0; i < NENG; i++)
        CU_ASSERT_FATAL(mpce_prg_new(e[i], &keys[0][0], 3, &ctx[i]) == MPCE_OK);

    const size_t necb = 100003, nseeds = 40001, nctr = 100003;
    const uint64_t c0 = UINT64_MAX - 50000; /* slices straddle the wrap */
    uint8_t *in = random_bytes(2, necb * 16);
    uint8_t *out[NENG];
    alloc_outs(out, nseeds * 3 * 16 > necb * 16 ? nseeds * 3 * 16 : necb * 16, 0);
    for (size_t k = 0; k < ni; k++) {
        for (int i = 0; i < NENG; i++)
            CU_ASSERT_EQUAL(mpce_prg_ecb(ctx[i], impls[k], 2, in, out[i], necb), MPCE_OK);
        assert_same("prg.ecb", impls[k], out, necb * 16);
        for (int i = 0; i < NENG; i++)
            CU_ASSERT_EQUAL(mpce_prg_mmo(ctx[i], impls[k], in, out[i], nseeds), MPCE_OK);
        assert_same("prg.mmo", impls[k], out, nseeds * 3 * 16);
        for (int i = 0; i < NENG; i++)
            CU_ASSERT_EQUAL(mpce_prg_ctr(ctx[i], impls[k], 1, c0, out[i], nctr), MPCE_OK);
        assert_same("prg.ctr", impls[k], out, nctr * 16);
        /* In place: each slice reads and writes only its own blocks. */
        for (int i = 0; i < NENG; i++) {
            memcpy(out[i], in, necb * 16);
            CU_ASSERT_EQUAL(mpce_prg_ecb(ctx[i], impls[k], 0, out[i], out[i], necb), MPCE_OK);
        }
        assert_same("prg.ecb in place", impls[k], out, necb * 16);
    }
    free_outs(out);
    free(in);
    for (int i = 0; i < NENG; i++)
        mpce_prg_free(ctx[i]);
    engines_free(e);
}

/* ---- NTT ------------------------------------------------------------------ */

static uint64_t *ntt_input(uint64_t seed, size_t n, size_t l, size_t batch, const uint64_t *q)
{
    uint64_t *v = malloc(batch * l * n * sizeof(uint64_t));
    CU_ASSERT_FATAL(v != NULL);
    uint64_t st = seed;
    for (size_t b = 0; b < batch; b++)
        for (size_t r = 0; r < l; r++)
            for (size_t i = 0; i < n; i++)
                v[(b * l + r) * n + i] = tu_splitmix64(&st) % q[r];
    return v;
}

/* One modulus pair through every NTT implementation that serves it (IFMA
 * kernels take only q < 2^50 and answer MPCE_ERR_NOIMPL otherwise). */
static void ntt_case(mpce_engine *e[NENG], const uint64_t q[2])
{
    const char *impls[MAX_IMPLS];
    size_t ni = impls_of(e[0], MPCE_PRIM_NTT, impls);
    const size_t n = 1024, l = 2, batch = 37;
    const size_t len = batch * l * n * sizeof(uint64_t);
    mpce_ntt *ctx[NENG];
    for (int i = 0; i < NENG; i++)
        CU_ASSERT_FATAL(mpce_ntt_new(e[i], n, q, l, &ctx[i]) == MPCE_OK);
    uint64_t *a = ntt_input(3, n, l, batch, q), *b = ntt_input(4, n, l, batch, q);
    uint8_t *out[NENG];
    alloc_outs(out, len, 0);
    for (size_t k = 0; k < ni; k++) {
        mpce_status st = mpce_ntt_forward(ctx[0], impls[k], a, (uint64_t *)out[0], batch);
        if (st == MPCE_ERR_NOIMPL) {
            printf("\n  %s does not serve q = 0x%llx: %s\n", impls[k],
                   (unsigned long long)q[0], mpce_last_error());
            continue;
        }
        CU_ASSERT_EQUAL(st, MPCE_OK);
        for (int i = 1; i < NENG; i++)
            CU_ASSERT_EQUAL(mpce_ntt_forward(ctx[i], impls[k], a, (uint64_t *)out[i], batch),
                            MPCE_OK);
        assert_same("ntt.forward", impls[k], out, len);
        for (int i = 0; i < NENG; i++)
            CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx[i], impls[k], a, (uint64_t *)out[i], batch),
                            MPCE_OK);
        assert_same("ntt.inverse", impls[k], out, len);
        for (int i = 0; i < NENG; i++)
            CU_ASSERT_EQUAL(mpce_ntt_mul(ctx[i], impls[k], a, b, (uint64_t *)out[i], batch),
                            MPCE_OK);
        assert_same("ntt.mul", impls[k], out, len);
        /* In place, and back: the round trip is the input. */
        for (int i = 0; i < NENG; i++) {
            uint64_t *v = (uint64_t *)out[i];
            memcpy(v, a, len);
            CU_ASSERT_EQUAL(mpce_ntt_forward(ctx[i], impls[k], v, v, batch), MPCE_OK);
            CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx[i], impls[k], v, v, batch), MPCE_OK);
            CU_ASSERT(memcmp(v, a, len) == 0);
        }
    }
    free_outs(out);
    free(a);
    free(b);
    for (int i = 0; i < NENG; i++)
        mpce_ntt_free(ctx[i]);
}

static void test_ntt(void)
{
    mpce_engine *e[NENG];
    engines_new(e);
    ntt_case(e, (const uint64_t[2]){Q61, Q61B});
    ntt_case(e, (const uint64_t[2]){Q50, Q50B});
    engines_free(e);
}

/* A bad coefficient in a slice that a worker checks is reported as a single
 * pass would: the first one, with its index, on the calling thread. */
static void test_ntt_check_errors(void)
{
    mpce_engine *e[NENG];
    engines_new(e);
    const size_t n = 1024, l = 2, batch = 37;
    const uint64_t q[2] = {Q61, Q61B};
    uint64_t *a = ntt_input(5, n, l, batch, q), *b = ntt_input(6, n, l, batch, q);
    uint64_t *out = malloc(batch * l * n * sizeof(uint64_t));
    CU_ASSERT_FATAL(out != NULL);
    const size_t late = (30 * l + 1) * n + 7, later = (36 * l) * n + 1;
    a[later] = Q61;
    a[late] = Q61B;
    b[5] = Q61;
    for (int i = 0; i < NENG; i++) {
        mpce_ntt *ctx;
        CU_ASSERT_FATAL(mpce_ntt_new(e[i], n, q, l, &ctx) == MPCE_OK);
        TU_ASSERT_ERROR(mpce_ntt_forward(ctx, NULL, a, out, batch), MPCE_ERR_ARG, "in[62471]");
        CU_ASSERT(tu_error_mentions("polynomial 30, coefficient 7"));
        /* All of a is checked before b. */
        TU_ASSERT_ERROR(mpce_ntt_mul(ctx, NULL, a, b, out, batch), MPCE_ERR_ARG, "a[62471]");
        a[late] = 0;
        a[later] = 0;
        TU_ASSERT_ERROR(mpce_ntt_mul(ctx, NULL, a, b, out, batch), MPCE_ERR_ARG, "b[5]");
        a[later] = Q61;
        a[late] = Q61B;
        /* The checks split too: a valid call after them still works. */
        CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, NULL, b + n * l, out, batch - 1), MPCE_OK);
        mpce_ntt_free(ctx);
    }
    free(a);
    free(b);
    free(out);
    engines_free(e);
}

/* ---- LPN ------------------------------------------------------------------ */

static void test_lpn(void)
{
    mpce_engine *e[NENG];
    const char *impls[MAX_IMPLS];
    size_t ni = engines_impls(e, MPCE_PRIM_LPN, impls);
    const unsigned logk = 12;
    const size_t k = (size_t)1 << logk;
    uint8_t seed[16];
    tu_splitmix_bytes(7, seed, 16);
    uint8_t *table = random_bytes(8, k * 16);
    mpce_lpn *ctx[NENG];
    for (int i = 0; i < NENG; i++)
        CU_ASSERT_FATAL(mpce_lpn_new(e[i], seed, logk, &ctx[i]) == MPCE_OK);
    /* Every tail length, one of them odd-sized; counters across the wrap. */
    static const size_t sizes[] = {40003, 40000, 40001, 40002};
    const uint64_t c0 = UINT64_MAX - 60000;
    uint8_t *init = random_bytes(9, 40003 * 16);
    uint8_t *out[NENG];
    alloc_outs(out, 40003 * 16, 0);
    for (size_t kk = 0; kk < ni; kk++) {
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            uint64_t consumed[NENG];
            for (int i = 0; i < NENG; i++) {
                memcpy(out[i], init, sizes[s] * 16);
                CU_ASSERT_EQUAL(mpce_lpn_fold(ctx[i], impls[kk], c0, table, k, out[i], sizes[s],
                                              &consumed[i]),
                                MPCE_OK);
                CU_ASSERT_EQUAL(consumed[i], mpce_lpn_blocks_consumed(sizes[s]));
            }
            assert_same("lpn.fold", impls[kk], out, sizes[s] * 16);
        }
    }
    free_outs(out);
    free(init);
    free(table);
    for (int i = 0; i < NENG; i++)
        mpce_lpn_free(ctx[i]);
    engines_free(e);
}

/* ---- DPF ------------------------------------------------------------------ */

#define NKEYS_DISTINCT 8

static void test_dpf_eval(void)
{
    mpce_engine *e[NENG];
    const char *impls[MAX_IMPLS];
    size_t ni = engines_impls(e, MPCE_PRIM_DPF, impls);
    const unsigned bits = 40;
    const size_t npoints = 50001, nkeys = 4099;
    for (int g = 0; g < 2; g++) {
        mpce_dpf_group group = g ? MPCE_DPF_U64 : MPCE_DPF_BYTES;
        size_t osz = mpce_dpf_output_size(group);
        mpce_dpf *ctx[NENG];
        for (int i = 0; i < NENG; i++)
            CU_ASSERT_FATAL(mpce_dpf_new(e[i], bits, group, NULL, NULL, &ctx[i]) == MPCE_OK);
        uint8_t beta[16] = {0}, s[2][16];
        tu_splitmix_bytes(10, beta, 8);
        mpce_dpf_key *keys[NKEYS_DISTINCT];
        for (int j = 0; j < NKEYS_DISTINCT; j += 2) {
            tu_splitmix_bytes(11 + (uint64_t)j, s, sizeof(s));
            CU_ASSERT_FATAL(mpce_dpf_gen(ctx[0], NULL, 12345 + (uint64_t)j, beta, s[0], s[1],
                                         &keys[j], &keys[j + 1]) == MPCE_OK);
        }
        uint64_t *points = malloc(npoints * sizeof(uint64_t));
        const mpce_dpf_key **many = malloc(nkeys * sizeof(*many));
        CU_ASSERT_FATAL(points && many);
        uint64_t st = 13;
        for (size_t i = 0; i < npoints; i++)
            points[i] = i % 97 == 0 ? 12345 : tu_splitmix64(&st) >> (64 - bits);
        for (size_t i = 0; i < nkeys; i++)
            many[i] = keys[i % NKEYS_DISTINCT];
        uint8_t *out[NENG];
        alloc_outs(out, npoints * osz, 0);
        for (size_t k = 0; k < ni; k++) {
            for (int i = 0; i < NENG; i++)
                CU_ASSERT_EQUAL(mpce_dpf_eval(ctx[i], impls[k], keys[1], points, npoints, out[i]),
                                MPCE_OK);
            assert_same("dpf.eval", impls[k], out, npoints * osz);
            for (int i = 0; i < NENG; i++)
                CU_ASSERT_EQUAL(
                    mpce_dpf_eval_keys(ctx[i], impls[k], many, points, nkeys, out[i]), MPCE_OK);
            assert_same("dpf.eval_keys", impls[k], out, nkeys * osz);
        }
        free_outs(out);
        free(points);
        free(many);
        for (int j = 0; j < NKEYS_DISTINCT; j++)
            mpce_dpf_key_free(keys[j]);
        for (int i = 0; i < NENG; i++)
            mpce_dpf_free(ctx[i]);
    }
    engines_free(e);
}

static void test_dpf_evalall(void)
{
    mpce_engine *e[NENG];
    const char *impls[MAX_IMPLS];
    size_t ni = engines_impls(e, MPCE_PRIM_DPF, impls);
    const unsigned bits = 18;
    const uint64_t alpha = 0x2b3c5;
    for (int g = 0; g < 2; g++) {
        mpce_dpf_group group = g ? MPCE_DPF_U64 : MPCE_DPF_BYTES;
        size_t osz = mpce_dpf_output_size(group), len = ((size_t)1 << bits) * osz;
        mpce_dpf *ctx[NENG];
        for (int i = 0; i < NENG; i++)
            CU_ASSERT_FATAL(mpce_dpf_new(e[i], bits, group, NULL, NULL, &ctx[i]) == MPCE_OK);
        uint8_t beta[16] = {0}, s[2][16];
        tu_splitmix_bytes(20, beta, 8);
        tu_splitmix_bytes(21, s, sizeof(s));
        mpce_dpf_key *k0, *k1;
        CU_ASSERT_FATAL(mpce_dpf_gen(ctx[0], NULL, alpha, beta, s[0], s[1], &k0, &k1) ==
                        MPCE_OK);
        uint8_t *out[NENG], *other = malloc(len);
        CU_ASSERT_FATAL(other != NULL);
        alloc_outs(out, len, 0xee);
        for (size_t k = 0; k < ni; k++) {
            for (int i = 0; i < NENG; i++)
                CU_ASSERT_EQUAL(mpce_dpf_evalall(ctx[i], impls[k], k0, out[i], len), MPCE_OK);
            assert_same("dpf.evalall", impls[k], out, len);
            /* The shares still reconstruct the point function. */
            CU_ASSERT_EQUAL(mpce_dpf_evalall(ctx[NENG - 1], impls[k], k1, other, len), MPCE_OK);
            size_t wrong = 0;
            for (uint64_t x = 0; x < ((uint64_t)1 << bits); x++) {
                uint8_t y[16] = {0};
                if (g) {
                    uint64_t v0, v1;
                    memcpy(&v0, out[0] + x * 8, 8);
                    memcpy(&v1, other + x * 8, 8);
                    v0 += v1;
                    memcpy(y, &v0, 8);
                } else {
                    for (int b = 0; b < 16; b++)
                        y[b] = out[0][x * 16 + b] ^ other[x * 16 + b];
                }
                static const uint8_t zero[16];
                wrong += memcmp(y, x == alpha ? beta : zero, osz) != 0;
            }
            CU_ASSERT_EQUAL(wrong, 0);
        }
        free_outs(out);
        free(other);
        mpce_dpf_key_free(k0);
        mpce_dpf_key_free(k1);
        for (int i = 0; i < NENG; i++)
            mpce_dpf_free(ctx[i]);
    }
    engines_free(e);
}

/* ---- concurrency ---------------------------------------------------------- */

#define APP_THREADS 4
#define CONC_BLOCKS 70001
#define CONC_ROUNDS 6

struct conc {
    mpce_prg *prg;
    mpce_lpn *lpn;
    const uint8_t *in, *table;
    const uint8_t *want_ecb, *want_lpn; /* per thread */
    int id;
    int failures;
};

/* Each application thread runs large calls on the shared contexts with its
 * own inputs; every result must be its own. */
static void *conc_main(void *arg)
{
    struct conc *c = arg;
    uint8_t *out = malloc(CONC_BLOCKS * 16);
    if (!out) {
        c->failures++;
        return NULL;
    }
    for (int r = 0; r < CONC_ROUNDS; r++) {
        const uint8_t *in = c->in + (size_t)c->id * 16;
        if (mpce_prg_ecb(c->prg, NULL, 0, in, out, CONC_BLOCKS) != MPCE_OK ||
            memcmp(out, c->want_ecb, CONC_BLOCKS * 16) != 0)
            c->failures++;
        memset(out, (int)c->id, CONC_BLOCKS * 16);
        if (mpce_lpn_fold(c->lpn, NULL, 1000u * (uint64_t)c->id, c->table, 1u << 10, out,
                          CONC_BLOCKS, NULL) != MPCE_OK ||
            memcmp(out, c->want_lpn, CONC_BLOCKS * 16) != 0)
            c->failures++;
    }
    free(out);
    return NULL;
}

static void test_concurrent_callers(void)
{
    mpce_engine *e[NENG];
    engines_new(e);
    uint8_t key[16], seed[16];
    tu_splitmix_bytes(30, key, 16);
    tu_splitmix_bytes(31, seed, 16);
    uint8_t *in = random_bytes(32, (CONC_BLOCKS + APP_THREADS) * 16);
    uint8_t *table = random_bytes(33, (1u << 10) * 16);
    /* Expected results from the single-threaded engine. */
    mpce_prg *p1;
    mpce_lpn *l1;
    CU_ASSERT_FATAL(mpce_prg_new(e[0], key, 1, &p1) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_lpn_new(e[0], seed, 10, &l1) == MPCE_OK);
    uint8_t *want_ecb[APP_THREADS], *want_lpn[APP_THREADS];
    for (int t = 0; t < APP_THREADS; t++) {
        want_ecb[t] = malloc(CONC_BLOCKS * 16);
        want_lpn[t] = malloc(CONC_BLOCKS * 16);
        CU_ASSERT_FATAL(want_ecb[t] && want_lpn[t]);
        CU_ASSERT(mpce_prg_ecb(p1, NULL, 0, in + t * 16, want_ecb[t], CONC_BLOCKS) == MPCE_OK);
        memset(want_lpn[t], t, CONC_BLOCKS * 16);
        CU_ASSERT(mpce_lpn_fold(l1, NULL, 1000u * (uint64_t)t, table, 1u << 10, want_lpn[t],
                                CONC_BLOCKS, NULL) == MPCE_OK);
    }
    mpce_prg_free(p1);
    mpce_lpn_free(l1);
    for (int i = 1; i < NENG; i++) {
        mpce_prg *prg;
        mpce_lpn *lpn;
        CU_ASSERT_FATAL(mpce_prg_new(e[i], key, 1, &prg) == MPCE_OK);
        CU_ASSERT_FATAL(mpce_lpn_new(e[i], seed, 10, &lpn) == MPCE_OK);
        struct conc c[APP_THREADS];
        pthread_t th[APP_THREADS];
        for (int t = 0; t < APP_THREADS; t++) {
            c[t] = (struct conc){.prg = prg, .lpn = lpn, .in = in, .table = table,
                                 .want_ecb = want_ecb[t], .want_lpn = want_lpn[t], .id = t};
            CU_ASSERT_FATAL(pthread_create(&th[t], NULL, conc_main, &c[t]) == 0);
        }
        for (int t = 0; t < APP_THREADS; t++) {
            pthread_join(th[t], NULL);
            CU_ASSERT_EQUAL(c[t].failures, 0);
        }
        mpce_prg_free(prg);
        mpce_lpn_free(lpn);
    }
    for (int t = 0; t < APP_THREADS; t++) {
        free(want_ecb[t]);
        free(want_lpn[t]);
    }
    free(in);
    free(table);
    engines_free(e);
}

/* Application threads calling in place on one context while another
 * thread flips its refusal mode (ntt.h: each call reads it once). Good
 * inputs give the same transform under either mode; a bad word is refused
 * under either, leaving its array as that call's mode says. */
struct flip {
    mpce_ntt *ctx;
    const uint64_t *in, *want;
    size_t words, batch;
    int done, failures;
};

static void *flip_caller(void *arg)
{
    struct flip *f = arg;
    uint64_t *v = malloc(f->words * 8);
    if (!v) {
        __atomic_add_fetch(&f->failures, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&f->done, 1, __ATOMIC_RELEASE);
        return NULL;
    }
    for (int r = 0; r < 50; r++) {
        memcpy(v, f->in, f->words * 8);
        if (mpce_ntt_forward(f->ctx, NULL, v, v, f->batch) != MPCE_OK ||
            memcmp(v, f->want, f->words * 8) != 0)
            __atomic_add_fetch(&f->failures, 1, __ATOMIC_RELAXED);
        memcpy(v, f->in, f->words * 8);
        v[f->words / 2] = UINT64_MAX;
        if (mpce_ntt_forward(f->ctx, NULL, v, v, f->batch) != MPCE_ERR_ARG)
            __atomic_add_fetch(&f->failures, 1, __ATOMIC_RELAXED);
        /* Untouched (KEEP) or zeroed (ZERO): nothing in between. */
        v[f->words / 2] = f->in[f->words / 2];
        int zeroed = 1;
        for (size_t i = 0; i < f->words && zeroed; i++)
            zeroed = i == f->words / 2 || v[i] == 0;
        if (!zeroed && memcmp(v, f->in, f->words * 8) != 0)
            __atomic_add_fetch(&f->failures, 1, __ATOMIC_RELAXED);
    }
    free(v);
    __atomic_add_fetch(&f->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void test_refusal_mode_flipped(void)
{
    mpce_engine *e[NENG];
    engines_new(e);
    const uint64_t q[2] = {Q61, Q61B};
    const size_t n = 1024, l = 2, batch = 4, words = n * l * batch;
    uint64_t *in = ntt_input(40, n, l, batch, q), *want = malloc(words * 8);
    CU_ASSERT_FATAL(want != NULL);
    for (int i = 0; i < NENG; i++) {
        mpce_ntt *ctx;
        CU_ASSERT_FATAL(mpce_ntt_new(e[i], n, q, l, &ctx) == MPCE_OK);
        CU_ASSERT_FATAL(mpce_ntt_forward(ctx, NULL, in, want, batch) == MPCE_OK);
        struct flip f = {.ctx = ctx, .in = in, .want = want, .words = words, .batch = batch};
        pthread_t th[APP_THREADS];
        for (int t = 0; t < APP_THREADS; t++)
            CU_ASSERT_FATAL(pthread_create(&th[t], NULL, flip_caller, &f) == 0);
        /* Flipped for as long as any caller runs. */
        unsigned long flips = 0;
        while (__atomic_load_n(&f.done, __ATOMIC_ACQUIRE) < APP_THREADS) {
            if (mpce_ntt_set_refusal(ctx, flips & 1u ? MPCE_NTT_REFUSAL_ZERO
                                                      : MPCE_NTT_REFUSAL_KEEP) != MPCE_OK)
                __atomic_add_fetch(&f.failures, 1, __ATOMIC_RELAXED);
            flips++;
            sched_yield();
        }
        CU_ASSERT(flips > 0);
        for (int t = 0; t < APP_THREADS; t++)
            pthread_join(th[t], NULL);
        CU_ASSERT_EQUAL(__atomic_load_n(&f.failures, __ATOMIC_RELAXED), 0);
        mpce_ntt_free(ctx);
    }
    free(in);
    free(want);
    engines_free(e);
}

/* ---- the pool itself ------------------------------------------------------ */

struct fail_job {
    size_t fail_mask; /* slices that fail */
    int ran[16];
};

static int fail_slice(void *arg, size_t i)
{
    struct fail_job *j = arg;
    __atomic_add_fetch(&j->ran[i], 1, __ATOMIC_RELAXED);
    if (j->fail_mask & ((size_t)1 << i))
        return mpce_error(MPCE_ERR_BACKEND, "slice %zu failed", i);
    return 0;
}

/* Every slice runs once; the lowest failing slice's code and detail reach
 * the caller, whichever thread ran it. */
static void test_pool_errors(void)
{
    struct mpce_pool *p = mpce_pool_new(3);
    CU_ASSERT_FATAL(p != NULL);
    for (int round = 0; round < 50; round++) {
        struct fail_job j = {.fail_mask = round % 2 ? 0x2a0u : 0};
        mpce_error(MPCE_OK, "%s", "");
        int rc = mpce_pool_run(p, 16, fail_slice, &j);
        for (int i = 0; i < 16; i++)
            CU_ASSERT_EQUAL(j.ran[i], 1);
        if (round % 2) {
            CU_ASSERT_EQUAL(rc, MPCE_ERR_BACKEND);
            CU_ASSERT_STRING_EQUAL(mpce_last_error(), "slice 5 failed");
        } else {
            CU_ASSERT_EQUAL(rc, 0);
        }
    }
    /* A count of one runs on the caller alone. */
    struct fail_job j = {.fail_mask = 1};
    CU_ASSERT_EQUAL(mpce_pool_run(p, 1, fail_slice, &j), MPCE_ERR_BACKEND);
    CU_ASSERT_STRING_EQUAL(mpce_last_error(), "slice 0 failed");
    mpce_pool_free(p);
}

/* No threads before the first call worth splitting. */
static void test_lazy_start(void)
{
    mpce_engine *e;
    CU_ASSERT_FATAL(engine_with("threads = 2", &e) == MPCE_OK);
    CU_ASSERT_PTR_NULL(e->pool);
    uint8_t key[16] = {1}, buf[64 * 16] = {0};
    mpce_prg *prg;
    CU_ASSERT_FATAL(mpce_prg_new(e, key, 1, &prg) == MPCE_OK);
    CU_ASSERT_EQUAL(mpce_prg_ecb(prg, NULL, 0, buf, buf, 64), MPCE_OK);
    CU_ASSERT_PTR_NULL(e->pool);
    uint8_t *big = calloc(1u << 20, 16);
    CU_ASSERT_FATAL(big != NULL);
    CU_ASSERT_EQUAL(mpce_prg_ctr(prg, NULL, 0, 0, big, 1u << 20), MPCE_OK);
    CU_ASSERT_PTR_NOT_NULL(e->pool);
    /* A forked child has the pool but none of its threads: its calls still
     * complete, on the calling thread alone. */
    uint8_t *again = calloc(1u << 20, 16);
    CU_ASSERT_FATAL(again != NULL);
    const char *emu = tu_emulated();
    if (TU_TSAN) { /* see testutil.h */
        printf("\n  skipped: the forked child's calls: ThreadSanitizer cannot run its threads\n");
    } else if (emu != NULL) {
        printf("\n  skipped: the forked child's calls: under %s, which cannot fork a "
               "multi-threaded program\n", emu);
    } else {
        pid_t pid = fork();
        CU_ASSERT_FATAL(pid >= 0);
        if (pid == 0) {
            int ok = mpce_prg_ctr(prg, NULL, 0, 0, again, 1u << 20) == MPCE_OK &&
                     memcmp(again, big, (size_t)16 << 20) == 0;
            /* Freeing must not wait for the parent's threads. */
            mpce_prg_free(prg);
            mpce_engine_free(e);
            _exit(ok ? 0 : 1);
        }
        int status = 0;
        CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
        CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    free(again);
    free(big);
    mpce_prg_free(prg);
    mpce_engine_free(e);
}

/* ---- configuration -------------------------------------------------------- */

static void test_threads_key(void)
{
    mpce_engine *e;
    static const char *const bad[] = {"threads = lots", "threads = -1", "threads = 257",
                                      "threads = 2x", "threads = 1000", "threads = 0x2",
                                      "threads ="};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        TU_ASSERT_ERROR(engine_with(bad[i], &e), MPCE_ERR_CONFIG, "[engine] threads");
        /* The key's line: [engine] is line 1, allow_variable_time line 2. */
        CU_ASSERT(tu_error_mentions(":3: "));
        CU_ASSERT(tu_error_mentions("/mpce-test-"));
        CU_ASSERT(tu_error_mentions("256"));
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned want = cpus < 1 ? 1 : cpus > 256 ? 256 : (unsigned)cpus;
    static const char *const dflt[] = {"", "threads = 0", "threads = auto"};
    for (size_t i = 0; i < sizeof(dflt) / sizeof(dflt[0]); i++) {
        CU_ASSERT_FATAL(engine_with(dflt[i], &e) == MPCE_OK);
        CU_ASSERT_EQUAL(mpce_engine_threads(e), want);
        mpce_engine_free(e);
    }
    CU_ASSERT_FATAL(engine_with("threads = 256", &e) == MPCE_OK);
    CU_ASSERT_EQUAL(mpce_engine_threads(e), 256);
    mpce_engine_free(e);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"pool: lowest failing slice reported", test_pool_errors},
        {"pool: started by the first large call", test_lazy_start},
        {"config: [engine] threads", test_threads_key},
        {"split: prg ecb/mmo/ctr, threads 1/2/3", test_prg},
        {"split: ntt forward/inverse/mul, threads 1/2/3", test_ntt},
        {"split: ntt input check errors", test_ntt_check_errors},
        {"ntt refusal mode flipped while threads call in place", test_refusal_mode_flipped},
        {"split: lpn fold, threads 1/2/3", test_lpn},
        {"split: dpf eval/eval_keys, threads 1/2/3", test_dpf_eval},
        {"split: dpf evalall, threads 1/2/3", test_dpf_evalall},
        {"concurrent callers on one context", test_concurrent_callers},
        {NULL, NULL},
    };
    return tu_main("pool", tests);
}
