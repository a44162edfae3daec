/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Buffers and queues on an emulated device (tests/modules/mod_emudev.c),
 * whose memory the host cannot touch (its addresses are mapped PROT_NONE)
 * and whose work completes on its own threads after a delay: an NTT -> mul
 * -> inverse chain stays on the device (the module counts every copy), gives
 * the soft backend's answer, reports an asynchronous failure on wait with the
 * plugin's message, and leaves nothing allocated behind. The same calls on
 * host buffers run at once.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/runtime/queue.h"
#include "tests/modules/emudev.h"
#include "tests/testutil.h"

#ifndef EMUDEV_SO
#error "EMUDEV_SO must name the built emulated-device module"
#endif

#define N 4096u
#define L 2u
#define BATCH 3u
#define WORDS ((size_t)N * L * BATCH)

static const uint64_t moduli[L] = {UINT64_C(0x1fffffffffe00001), UINT64_C(0x0fffffffffffc001)};

static char *plugin_dir;
static mpce_engine *engine;
static char *conf_path; /* [tune] vet = no */
static emudev_stats_fn stats;
static emudev_fail_after_fn fail_after;
static emudev_complete_and_return_fn complete_and_return;

/* An engine with the emulated device as its only module, and the module's
 * test hooks (dlopen of the same file returns the engine's handle). */
static void setup(void)
{
    plugin_dir = tu_temp_dir();
    char *so = tu_copy_into(EMUDEV_SO, plugin_dir, 0755);
    /* In process, whatever helper is installed: the suite drives the
     * module's failure injection through the handle this process loaded,
     * and its self-tests must run here, not come from a vet's verdict. */
    conf_path = tu_write_temp("[tune]\nvet = no\n");
    mpce_options opts = {
        .struct_size = sizeof(opts),
        .config_path = conf_path,
        .plugin_path = plugin_dir,
        .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV | MPCE_OPT_NO_SYSTEM_CONFIG,
    };
    if (mpce_engine_new(&opts, &engine) != MPCE_OK) {
        fprintf(stderr, "test_device: %s\n", mpce_last_error());
        abort();
    }
    void *h = dlopen(so, RTLD_NOW | RTLD_NOLOAD);
    void *s = h ? dlsym(h, EMUDEV_STATS_SYMBOL) : NULL;
    void *f = h ? dlsym(h, EMUDEV_FAIL_AFTER_SYMBOL) : NULL;
    void *c = h ? dlsym(h, EMUDEV_COMPLETE_AND_RETURN_SYMBOL) : NULL;
    if (!s || !f || !c) {
        fprintf(stderr, "test_device: the engine did not load %s\n", so);
        abort();
    }
    memcpy(&stats, &s, sizeof(stats));
    memcpy(&fail_after, &f, sizeof(fail_after));
    memcpy(&complete_and_return, &c, sizeof(complete_and_return));
    free(so);
}

static struct emudev_stats snap(void)
{
    struct emudev_stats st;
    stats(&st);
    return st;
}

static void random_input(uint64_t *v, uint64_t seed)
{
    for (size_t b = 0; b < BATCH; b++)
        for (size_t l = 0; l < L; l++)
            for (size_t i = 0; i < N; i++)
                v[(b * L + l) * N + i] = tu_splitmix64(&seed) % moduli[l];
}

/* The chain's answer on the host: inverse(forward(a) * forward(b)). */
static void reference(mpce_ntt *ctx, const uint64_t *a, const uint64_t *b, uint64_t *out)
{
    uint64_t *fa = malloc(WORDS * 8), *fb = malloc(WORDS * 8);
    CU_ASSERT_FATAL(fa && fb);
    CU_ASSERT_FATAL(mpce_ntt_forward(ctx, "ntt-soft", a, fa, BATCH) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_ntt_forward(ctx, "ntt-soft", b, fb, BATCH) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_ntt_mul(ctx, "ntt-soft", fa, fb, out, BATCH) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_ntt_inverse(ctx, "ntt-soft", out, out, BATCH) == MPCE_OK);
    free(fa);
    free(fb);
}

static void test_listed(void)
{
    const mpce_impl_info *rows;
    size_t n;
    int seen = 0;
    CU_ASSERT_FATAL(mpce_list(engine, 1, &rows, &n) == MPCE_OK);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].impl, "ntt-emudev") != 0)
            continue;
        seen = 1;
        CU_ASSERT_STRING_EQUAL(rows[i].selftest, "pass"); /* on host memory, asynchronously */
        CU_ASSERT_STRING_EQUAL(rows[i].impl_class, "accel");
        CU_ASSERT_STRING_EQUAL(rows[i].memory, "host,emu0");
        CU_ASSERT(rows[i].flags & MPCE_IMPL_ASYNC);
        CU_ASSERT(rows[i].flags & MPCE_IMPL_CONSTANT_TIME);
    }
    CU_ASSERT(seen);
}

/* Upload, forward, forward, mul, inverse, download: one round trip for the
 * whole chain, every op on device memory, the soft backend's answer. */
static void test_chain_stays_on_device(void)
{
    mpce_ntt *ctx;
    mpce_queue *q;
    mpce_buffer *a, *b, *t;
    uint64_t *ha = malloc(WORDS * 8), *hb = malloc(WORDS * 8), *want = malloc(WORDS * 8),
             *got = malloc(WORDS * 8);
    CU_ASSERT_FATAL(ha && hb && want && got);
    random_input(ha, 1);
    random_input(hb, 2);
    CU_ASSERT_FATAL(mpce_ntt_new(engine, N, moduli, L, &ctx) == MPCE_OK);
    reference(ctx, ha, hb, want);

    struct emudev_stats before = snap();
    CU_ASSERT_FATAL(mpce_queue_new(engine, "emu0", &q) == MPCE_OK);
    CU_ASSERT_STRING_EQUAL(mpce_queue_memory(q), "emu0");
    CU_ASSERT_FATAL(mpce_buffer_new(engine, "emu0", WORDS * 8, &a) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, "emu0", WORDS * 8, &b) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, "emu0", WORDS * 8, &t) == MPCE_OK);
    CU_ASSERT_PTR_NULL(mpce_buffer_host(a)); /* device memory has no host bytes */
    CU_ASSERT_STRING_EQUAL(mpce_buffer_memory(a), "emu0");
    CU_ASSERT_EQUAL(mpce_buffer_size(a), WORDS * 8);

    CU_ASSERT_EQUAL(mpce_buffer_upload(q, a, 0, ha, WORDS * 8), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_buffer_upload(q, b, 0, hb, WORDS * 8), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_forward_buf(ctx, q, NULL, a, a, BATCH), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_forward_buf(ctx, q, NULL, b, b, BATCH), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_mul_buf(ctx, q, NULL, a, b, t, BATCH), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_inverse_buf(ctx, q, "ntt-emudev", t, t, BATCH), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_buffer_download(q, got, t, 0, WORDS * 8), MPCE_OK);
    CU_ASSERT_EQUAL_FATAL(mpce_queue_wait(q), MPCE_OK);
    CU_ASSERT(memcmp(got, want, WORDS * 8) == 0);

    struct emudev_stats after = snap();
    CU_ASSERT_EQUAL(after.uploads - before.uploads, 2);
    CU_ASSERT_EQUAL(after.upload_bytes - before.upload_bytes, 2 * WORDS * 8);
    CU_ASSERT_EQUAL(after.downloads - before.downloads, 1);
    CU_ASSERT_EQUAL(after.download_bytes - before.download_bytes, WORDS * 8);
    CU_ASSERT_EQUAL(after.copies - before.copies, 0);
    CU_ASSERT_EQUAL(after.device_ops - before.device_ops, 4);
    CU_ASSERT_EQUAL(after.ops - before.ops, 4);
    CU_ASSERT_EQUAL(after.allocs_live - before.allocs_live, 3);
    CU_ASSERT_EQUAL(after.queues_live - before.queues_live, 1);

    /* A copy on the device, and a sub-range download. */
    CU_ASSERT_EQUAL(mpce_buffer_copy(q, a, 8, t, 16, 64), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_buffer_download(q, got, a, 8, 64), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_queue_wait(q), MPCE_OK);
    CU_ASSERT(memcmp(got, want + 2, 64) == 0);
    CU_ASSERT_EQUAL(snap().copies - before.copies, 1);

    mpce_buffer_free(a);
    mpce_buffer_free(b);
    mpce_buffer_free(t);
    mpce_queue_free(q);
    mpce_ntt_free(ctx);
    struct emudev_stats end = snap();
    CU_ASSERT_EQUAL(end.allocs_live, before.allocs_live);
    CU_ASSERT_EQUAL(end.queues_live, before.queues_live);
    CU_ASSERT_EQUAL(end.bad_frees, before.bad_frees);
    free(ha);
    free(hb);
    free(want);
    free(got);
}

/* mpce_buffer_copy within one buffer, the ranges overlapping both ways and
 * by a single byte, gives memmove's bytes: on host memory (the engine's
 * memmove) and on a device (the module's copy, which buffer.h holds to the
 * same promise). */
static void test_overlapping_copy(void)
{
    enum { LEN = 256 };
    static const struct {
        size_t dst, src, len;
    } moves[] = {{8, 0, 64}, {0, 8, 64}, {1, 0, 200}, {0, 1, 200}, {17, 16, 1}, {5, 5, 40}};
    const char *const kinds[] = {MPCE_MEMORY_HOST, "emu0"};
    for (size_t k = 0; k < 2; k++) {
        mpce_queue *q;
        mpce_buffer *buf;
        uint8_t init[LEN], want[LEN], got[LEN];
        for (size_t i = 0; i < LEN; i++)
            init[i] = (uint8_t)(i * 7 + 1);
        CU_ASSERT_FATAL(mpce_queue_new(engine, kinds[k], &q) == MPCE_OK);
        CU_ASSERT_FATAL(mpce_buffer_new(engine, kinds[k], LEN, &buf) == MPCE_OK);
        for (size_t m = 0; m < sizeof(moves) / sizeof(moves[0]); m++) {
            memcpy(want, init, LEN);
            memmove(want + moves[m].dst, want + moves[m].src, moves[m].len);
            CU_ASSERT_EQUAL(mpce_buffer_upload(q, buf, 0, init, LEN), MPCE_OK);
            CU_ASSERT_EQUAL(mpce_buffer_copy(q, buf, moves[m].dst, buf, moves[m].src,
                                             moves[m].len), MPCE_OK);
            CU_ASSERT_EQUAL(mpce_buffer_download(q, got, buf, 0, LEN), MPCE_OK);
            CU_ASSERT_EQUAL_FATAL(mpce_queue_wait(q), MPCE_OK);
            if (memcmp(got, want, LEN) != 0)
                fprintf(stderr, "%s: copy of %zu bytes from %zu to %zu is not memmove's\n",
                        kinds[k], moves[m].len, moves[m].src, moves[m].dst);
            CU_ASSERT(memcmp(got, want, LEN) == 0);
        }
        mpce_buffer_free(buf);
        mpce_queue_free(q);
    }
}

/* A failure on the device's thread: every submission returned MPCE_OK, the
 * wait returns the first failure with the plugin's own words, and the
 * queue works again afterwards. */
static void test_async_error_on_wait(void)
{
    mpce_ntt *ctx;
    mpce_queue *q;
    mpce_buffer *a, *t;
    uint64_t *ha = malloc(WORDS * 8);
    CU_ASSERT_FATAL(ha != NULL);
    random_input(ha, 3);
    CU_ASSERT_FATAL(mpce_ntt_new(engine, N, moduli, L, &ctx) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_queue_new(engine, "emu0", &q) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, "emu0", WORDS * 8, &a) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, "emu0", WORDS * 8, &t) == MPCE_OK);
    CU_ASSERT_EQUAL(mpce_buffer_upload(q, a, 0, ha, WORDS * 8), MPCE_OK);
    fail_after(0, "ntt.mul");
    CU_ASSERT_EQUAL(mpce_ntt_forward_buf(ctx, q, NULL, a, a, BATCH), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_mul_buf(ctx, q, NULL, a, a, t, BATCH), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_inverse_buf(ctx, q, NULL, t, t, BATCH), MPCE_OK);
    TU_ASSERT_ERROR(mpce_queue_wait(q), MPCE_ERR_BACKEND,
                    "emudev: injected failure in ntt.mul");
    CU_ASSERT(tu_error_mentions("ntt-emudev: ntt.mul failed"));
    /* Reported once: the next wait has nothing left to report. */
    CU_ASSERT_EQUAL(mpce_queue_wait(q), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_forward_buf(ctx, q, NULL, a, t, BATCH), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_queue_wait(q), MPCE_OK);
    /* Freed while work is queued: the buffer waits for it. */
    CU_ASSERT_EQUAL(mpce_ntt_inverse_buf(ctx, q, NULL, t, t, BATCH), MPCE_OK);
    mpce_buffer_free(t);
    mpce_buffer_free(a);
    mpce_queue_free(q);
    mpce_ntt_free(ctx);
    free(ha);
}

struct waiter {
    mpce_queue *q;
    uint64_t ops_before; /* device ops counted when the work was submitted */
    uint64_t ops_seen;   /* device ops counted when its wait returned */
    mpce_status st;
};

static void *wait_main(void *arg)
{
    struct waiter *w = arg;
    w->st = mpce_queue_wait(w->q);
    w->ops_seen = snap().device_ops;
    return NULL;
}

/* Two threads wait on one queue at once: neither returns before the work
 * submitted ahead of both has run (one of them used to find the list
 * already taken by the other and return at once). */
static void test_concurrent_waiters(void)
{
    enum { JOBS = 24 };
    mpce_ntt *ctx;
    mpce_queue *q;
    mpce_buffer *a;
    CU_ASSERT_FATAL(mpce_ntt_new(engine, N, moduli, L, &ctx) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_queue_new(engine, "emu0", &q) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, "emu0", WORDS * 8, &a) == MPCE_OK);
    CU_ASSERT_EQUAL(mpce_queue_wait(q), MPCE_OK);
    const uint64_t before = snap().device_ops;
    for (int i = 0; i < JOBS; i++)
        CU_ASSERT_EQUAL(mpce_ntt_forward_buf(ctx, q, NULL, a, a, 1), MPCE_OK);
    struct waiter w[2] = {{.q = q}, {.q = q}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        CU_ASSERT_FATAL(pthread_create(&th[i], NULL, wait_main, &w[i]) == 0);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        CU_ASSERT_EQUAL(w[i].st, MPCE_OK);
        CU_ASSERT(w[i].ops_seen - before >= JOBS);
    }
    mpce_buffer_free(a);
    mpce_queue_free(q);
    mpce_ntt_free(ctx);
}

/* A plugin that calls host->complete and also returns 0 (not
 * MPCE_OP_PENDING) breaks the ABI; the engine still counts the call finished
 * once (its buffers are released once, not twice), and a failure the
 * completion carried is the call's status rather than lost. */
static void test_complete_and_return(void)
{
    mpce_ntt *ctx;
    mpce_queue *q;
    mpce_buffer *a, *t;
    CU_ASSERT_FATAL(mpce_ntt_new(engine, N, moduli, L, &ctx) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_queue_new(engine, "emu0", &q) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, "emu0", WORDS * 8, &a) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, "emu0", WORDS * 8, &t) == MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_forward_buf(ctx, q, NULL, a, t, BATCH), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_queue_wait(q), MPCE_OK); /* the inline run must not race it */
    complete_and_return();
    CU_ASSERT_EQUAL(mpce_ntt_forward_buf(ctx, q, NULL, t, t, BATCH), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_inverse_buf(ctx, q, NULL, t, a, BATCH), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_queue_wait(q), MPCE_OK);
    complete_and_return();
    fail_after(0, "ntt.inverse");
    TU_ASSERT_ERROR(mpce_ntt_inverse_buf(ctx, q, NULL, t, a, BATCH), MPCE_ERR_BACKEND,
                    "injected failure in ntt.inverse");
    CU_ASSERT_EQUAL(mpce_queue_wait(q), MPCE_OK); /* reported once, by the call */
    CU_ASSERT_EQUAL(a->inflight, 0);
    CU_ASSERT_EQUAL(t->inflight, 0);
    if (a->inflight != 0 || t->inflight != 0)
        return; /* freeing would wait forever: leak them, the test failed */
    mpce_buffer_free(t);
    mpce_buffer_free(a);
    mpce_queue_free(q);
    mpce_ntt_free(ctx);
}

/* The same misbehaviour, with a failure, on the two other paths that settle
 * a returned op: a host-pointer call on the asynchronous implementation, and
 * its self-test (in a second engine, whose self-test has not run yet). The
 * failure the completion carried is what each reports. */
static void test_complete_and_return_other_paths(void)
{
    mpce_ntt *ctx;
    uint64_t *in = malloc(WORDS * 8), *out = malloc(WORDS * 8);
    CU_ASSERT_FATAL(in && out);
    random_input(in, 8);
    CU_ASSERT_FATAL(mpce_ntt_new(engine, N, moduli, L, &ctx) == MPCE_OK);
    complete_and_return();
    fail_after(0, "ntt.forward");
    TU_ASSERT_ERROR(mpce_ntt_forward(ctx, "ntt-emudev", in, out, BATCH), MPCE_ERR_BACKEND,
                    "emudev: injected failure in ntt.forward");
    CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, "ntt-emudev", in, out, BATCH), MPCE_OK);
    mpce_ntt_free(ctx);
    free(in);
    free(out);

    mpce_options opts = {
        .struct_size = sizeof(opts),
        .config_path = conf_path,
        .plugin_path = plugin_dir,
        .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV | MPCE_OPT_NO_SYSTEM_CONFIG,
    };
    mpce_engine *fresh = NULL;
    CU_ASSERT_FATAL(mpce_engine_new(&opts, &fresh) == MPCE_OK);
    complete_and_return();
    fail_after(0, NULL);
    size_t passed = 0, failed = 0;
    TU_ASSERT_ERROR(mpce_selftest(fresh, "ntt-emudev", &passed, &failed), MPCE_ERR_SELFTEST,
                    "emudev: injected failure");
    CU_ASSERT_EQUAL(failed, 1);
    mpce_engine_free(fresh);
}

/* Refused at submission, before anything is queued. */
static void test_refusals(void)
{
    mpce_ntt *ctx;
    mpce_queue *dq, *hq;
    mpce_buffer *dev, *small, *host;
    CU_ASSERT_FATAL(mpce_ntt_new(engine, N, moduli, L, &ctx) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_queue_new(engine, "emu0", &dq) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_queue_new(engine, MPCE_MEMORY_HOST, &hq) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, "emu0", WORDS * 8, &dev) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, "emu0", 64, &small) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, MPCE_MEMORY_HOST, WORDS * 8, &host) == MPCE_OK);
    struct emudev_stats before = snap();
    TU_ASSERT_ERROR(mpce_ntt_forward_buf(ctx, dq, NULL, host, dev, BATCH), MPCE_ERR_ARG,
                    "in is host memory but the queue is for emu0");
    TU_ASSERT_ERROR(mpce_ntt_forward_buf(ctx, hq, NULL, host, dev, BATCH), MPCE_ERR_ARG,
                    "out is emu0 memory");
    TU_ASSERT_ERROR(mpce_ntt_forward_buf(ctx, dq, NULL, small, dev, BATCH), MPCE_ERR_ARG,
                    "in holds 64 bytes");
    TU_ASSERT_ERROR(mpce_ntt_forward_buf(ctx, dq, "ntt-soft", dev, dev, BATCH), MPCE_ERR_NOIMPL,
                    "ntt-soft does not work in emu0 memory");
    TU_ASSERT_ERROR(mpce_buffer_upload(dq, small, 32, moduli, 64), MPCE_ERR_ARG, "past its end");
    TU_ASSERT_ERROR(mpce_buffer_upload(dq, host, 0, moduli, 8), MPCE_ERR_ARG,
                    "use a queue of the buffer's kind");
    mpce_buffer *x = NULL;
    TU_ASSERT_ERROR(mpce_buffer_new(engine, "gpu7", 64, &x), MPCE_ERR_ARG, "host, emu0");
    TU_ASSERT_ERROR(mpce_buffer_new(engine, "emu0", 0, &x), MPCE_ERR_ARG, "bytes is 0");
    CU_ASSERT_PTR_NULL(x);
    mpce_queue *y = NULL;
    TU_ASSERT_ERROR(mpce_queue_new(engine, NULL, &y), MPCE_ERR_ARG, "memory is NULL");
    CU_ASSERT_EQUAL(mpce_queue_wait(dq), MPCE_OK);
    struct emudev_stats after = snap();
    CU_ASSERT_EQUAL(after.ops, before.ops);
    CU_ASSERT_EQUAL(after.uploads, before.uploads);
    mpce_buffer_free(dev);
    mpce_buffer_free(small);
    mpce_buffer_free(host);
    mpce_queue_free(dq);
    mpce_queue_free(hq);
    mpce_ntt_free(ctx);
}

/* Host buffers and a host queue: the same calls, finished when they return,
 * inputs checked as for host pointers, and the same answer. */
static void test_host_buffers(void)
{
    mpce_ntt *ctx;
    mpce_queue *q;
    mpce_buffer *a, *b, *t;
    uint64_t *want = malloc(WORDS * 8);
    CU_ASSERT_FATAL(want != NULL);
    CU_ASSERT_FATAL(mpce_ntt_new(engine, N, moduli, L, &ctx) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_queue_new(engine, MPCE_MEMORY_HOST, &q) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, MPCE_MEMORY_HOST, WORDS * 8, &a) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, MPCE_MEMORY_HOST, WORDS * 8, &b) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, MPCE_MEMORY_HOST, WORDS * 8, &t) == MPCE_OK);
    uint64_t *ha = mpce_buffer_host(a), *hb = mpce_buffer_host(b), *ht = mpce_buffer_host(t);
    CU_ASSERT_FATAL(ha && hb && ht);
    CU_ASSERT_EQUAL((uintptr_t)ha % 64, 0);
    random_input(ha, 4);
    random_input(hb, 5);
    reference(ctx, ha, hb, want);
    CU_ASSERT_EQUAL(mpce_ntt_forward_buf(ctx, q, NULL, a, a, BATCH), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_forward_buf(ctx, q, NULL, b, b, BATCH), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_mul_buf(ctx, q, NULL, a, b, t, BATCH), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_inverse_buf(ctx, q, NULL, t, t, BATCH), MPCE_OK);
    CU_ASSERT(memcmp(ht, want, WORDS * 8) == 0); /* no wait needed on the host */
    CU_ASSERT_EQUAL(mpce_queue_wait(q), MPCE_OK);
    ha[5] = moduli[0]; /* not reduced: refused before anything is written */
    memset(ht, 0x5a, 64);
    TU_ASSERT_ERROR(mpce_ntt_forward_buf(ctx, q, NULL, a, t, BATCH), MPCE_ERR_ARG,
                    "in[5] = 2305843009211596801 is not below moduli[0]");
    CU_ASSERT_EQUAL(ht[0], UINT64_C(0x5a5a5a5a5a5a5a5a));
    mpce_buffer_free(a);
    mpce_buffer_free(b);
    mpce_buffer_free(t);
    mpce_queue_free(q);
    mpce_ntt_free(ctx);
    free(want);
}

/* Plain host-pointer calls reach the asynchronous implementation too (the
 * engine waits for its completion): by name, and through "auto" for large
 * calls, where an accelerator ranks first. */
static void test_host_pointers_async(void)
{
    mpce_ntt *ctx;
    uint64_t *in = malloc(WORDS * 8), *a = malloc(WORDS * 8), *b = malloc(WORDS * 8);
    CU_ASSERT_FATAL(in && a && b);
    random_input(in, 6);
    CU_ASSERT_FATAL(mpce_ntt_new(engine, N, moduli, L, &ctx) == MPCE_OK);
    struct emudev_stats before = snap();
    CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, "ntt-emudev", in, a, BATCH), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, "ntt-soft", in, b, BATCH), MPCE_OK);
    CU_ASSERT(memcmp(a, b, WORDS * 8) == 0);
    struct emudev_stats after = snap();
    CU_ASSERT_EQUAL(after.ops - before.ops, 1);
    CU_ASSERT_EQUAL(after.device_ops - before.device_ops, 0);
    /* A failure of a waited host call is this call's status and message,
     * and its input is untouched (common.h). */
    memcpy(in, a, WORDS * 8);
    fail_after(0, "ntt.inverse");
    TU_ASSERT_ERROR(mpce_ntt_inverse(ctx, "ntt-emudev", a, b, BATCH), MPCE_ERR_BACKEND,
                    "emudev: injected failure in ntt.inverse");
    CU_ASSERT(memcmp(in, a, WORDS * 8) == 0);
    const char *name;
    CU_ASSERT_EQUAL(mpce_ntt_resolve(ctx, NULL, "ntt.forward", 1, &name), MPCE_OK);
    CU_ASSERT_STRING_NOT_EQUAL(name, "ntt-emudev");
    CU_ASSERT_EQUAL(mpce_ntt_resolve(ctx, NULL, "ntt.forward", 64, &name), MPCE_OK);
    CU_ASSERT_STRING_EQUAL(name, "ntt-emudev"); /* 64 * 2 * 4096 words: large */
    mpce_ntt_free(ctx);
    free(in);
    free(a);
    free(b);
}

/* The other primitives' buffer forms on host buffers, against their plain
 * forms (no device implements them here). */
static void test_other_buffer_ops(void)
{
    mpce_queue *q;
    CU_ASSERT_FATAL(mpce_queue_new(engine, MPCE_MEMORY_HOST, &q) == MPCE_OK);
    uint8_t keys[32];
    tu_splitmix_bytes(7, keys, sizeof(keys));
    const size_t n = 37;
    mpce_prg *prg;
    mpce_buffer *in, *out;
    uint8_t want[2 * 37 * 16];
    CU_ASSERT_FATAL(mpce_prg_new(engine, keys, 2, &prg) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, MPCE_MEMORY_HOST, n * 16, &in) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, MPCE_MEMORY_HOST, 2 * n * 16, &out) == MPCE_OK);
    tu_splitmix_bytes(8, mpce_buffer_host(in), n * 16);
    CU_ASSERT_EQUAL(mpce_prg_ecb(prg, NULL, 1, mpce_buffer_host(in), want, n), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_prg_ecb_buf(prg, q, NULL, 1, in, out, n), MPCE_OK);
    CU_ASSERT(memcmp(mpce_buffer_host(out), want, n * 16) == 0);
    CU_ASSERT_EQUAL(mpce_prg_mmo(prg, NULL, mpce_buffer_host(in), want, n), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_prg_mmo_buf(prg, q, NULL, in, out, n), MPCE_OK);
    CU_ASSERT(memcmp(mpce_buffer_host(out), want, 2 * n * 16) == 0);
    CU_ASSERT_EQUAL(mpce_prg_ctr(prg, NULL, 0, UINT64_MAX - 3, want, n), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_prg_ctr_buf(prg, q, NULL, 0, UINT64_MAX - 3, out, n), MPCE_OK);
    CU_ASSERT(memcmp(mpce_buffer_host(out), want, n * 16) == 0);
    TU_ASSERT_ERROR(mpce_prg_mmo_buf(prg, q, NULL, in, in, n), MPCE_ERR_ARG, "out holds");
    mpce_prg_free(prg);
    mpce_buffer_free(in);
    mpce_buffer_free(out);

    const unsigned logk = 6;
    mpce_lpn *lpn;
    mpce_buffer *table, *folded;
    uint8_t fwant[37 * 16];
    CU_ASSERT_FATAL(mpce_lpn_new(engine, keys, logk, &lpn) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, MPCE_MEMORY_HOST, 16u << logk, &table) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, MPCE_MEMORY_HOST, n * 16, &folded) == MPCE_OK);
    tu_splitmix_bytes(9, mpce_buffer_host(table), 16u << logk);
    memset(fwant, 0, sizeof(fwant));
    CU_ASSERT_EQUAL(mpce_lpn_fold(lpn, NULL, 5, mpce_buffer_host(table), 1u << logk, fwant, n,
                                  NULL),
                    MPCE_OK);
    CU_ASSERT_EQUAL(mpce_lpn_fold_buf(lpn, q, NULL, 5, table, folded, n), MPCE_OK);
    CU_ASSERT(memcmp(mpce_buffer_host(folded), fwant, n * 16) == 0);
    mpce_lpn_free(lpn);
    mpce_buffer_free(table);
    mpce_buffer_free(folded);

    mpce_dpf *dpf;
    mpce_dpf_key *k0, *k1;
    mpce_buffer *pts, *vals;
    const unsigned bits = 9;
    uint8_t dwant[512 * 8];
    CU_ASSERT_FATAL(mpce_dpf_new(engine, bits, MPCE_DPF_U64, NULL, NULL, &dpf) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_dpf_gen_u64(dpf, NULL, 300, 99, keys, keys + 16, &k0, &k1) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, MPCE_MEMORY_HOST, n * 8, &pts) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, MPCE_MEMORY_HOST, 512 * 8, &vals) == MPCE_OK);
    uint64_t *p = mpce_buffer_host(pts);
    for (size_t i = 0; i < n; i++)
        p[i] = (i * 97) % 512;
    CU_ASSERT_EQUAL(mpce_dpf_eval(dpf, NULL, k0, p, n, dwant), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_dpf_eval_buf(dpf, q, NULL, k0, pts, n, vals), MPCE_OK);
    CU_ASSERT(memcmp(mpce_buffer_host(vals), dwant, n * 8) == 0);
    CU_ASSERT_EQUAL(mpce_dpf_evalall(dpf, NULL, k1, dwant, sizeof(dwant)), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_dpf_evalall_buf(dpf, q, NULL, k1, vals), MPCE_OK);
    CU_ASSERT(memcmp(mpce_buffer_host(vals), dwant, sizeof(dwant)) == 0);
    p[3] = 512; /* outside the domain: refused on host memory */
    TU_ASSERT_ERROR(mpce_dpf_eval_buf(dpf, q, NULL, k0, pts, n, vals), MPCE_ERR_ARG,
                    "points[3] = 512 is outside the domain");
    mpce_dpf_key_free(k0);
    mpce_dpf_key_free(k1);
    mpce_dpf_free(dpf);
    mpce_buffer_free(pts);
    mpce_buffer_free(vals);
    mpce_queue_free(q);
}

/* Everything the module allocated is gone once the engine is. */
static void test_nothing_leaks(void)
{
    struct emudev_stats before = snap();
    mpce_engine_free(engine);
    engine = NULL;
    struct emudev_stats after = snap();
    CU_ASSERT_EQUAL(after.allocs_live, 0);
    CU_ASSERT_EQUAL(after.bytes_live, 0);
    CU_ASSERT_EQUAL(after.queues_live, 0);
    CU_ASSERT_EQUAL(after.bad_frees, before.bad_frees);
    CU_ASSERT_EQUAL(after.bad_frees, 0);
    tu_remove_dir(plugin_dir);
    unlink(conf_path);
    free(conf_path);
    conf_path = NULL;
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"the device implementation is listed and self-tested", test_listed},
        {"NTT -> mul -> inverse chain stays on the device", test_chain_stays_on_device},
        {"an asynchronous failure surfaces on wait", test_async_error_on_wait},
        {"two threads waiting on one queue", test_concurrent_waiters},
        {"a plugin that completes and returns is counted once", test_complete_and_return},
        {"... also on host calls and in the self-test", test_complete_and_return_other_paths},
        {"refusals at submission", test_refusals},
        {"overlapping copies within a buffer are memmove's", test_overlapping_copy},
        {"the same calls on host buffers", test_host_buffers},
        {"host pointers on the asynchronous implementation", test_host_pointers_async},
        {"buffer forms of PRG, LPN and DPF on host buffers", test_other_buffer_ops},
        {"nothing leaks", test_nothing_leaks},
        {NULL, NULL},
    };
    setup();
    return tu_main("device", tests);
}
