/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cuda module on a real GPU: every implementation passes its self-test
 * (run in this process), then random differential tests against the soft
 * backend through the public API on host memory (PRG ecb/ctr/mmo in both
 * AES variants at odd lengths, misaligned, and long enough to take the
 * staged pipeline; NTT forward/inverse/mul at one-kernel and multi-pass
 * degrees with RNS; the LPN fold at b13's table; DPF gen, point, many-key,
 * batch and full-domain evaluation in both groups), and an NTT -> mul ->
 * inverse chain on cuda0 buffers. Without a usable device (no driver, no
 * GPU) it prints "skipped: no CUDA device" with the module's reason and
 * exits 77, which automake counts as SKIP: the kernels' logic is tested
 * on every machine by tests/test_cuda_emu instead.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/testutil.h"

#ifndef CUDA_PLUGIN_DIR
#error "CUDA_PLUGIN_DIR must name the directory of the built mpce-cuda.so"
#endif

#define REF_PRG "prg-soft-bitslice"
#define Q61 UINT64_C(0x1fffffffffe00001)
#define Q50 UINT64_C(1125899903827969)

static mpce_engine *engine;

static const char *const cuda_impls[] = {"prg-cuda", "prg-cuda-ttable", "ntt-cuda", "lpn-cuda",
                                         "dpf-cuda"};
#define NCUDA (sizeof cuda_impls / sizeof cuda_impls[0])

static const mpce_impl_info *find_row(const mpce_impl_info *rows, size_t n, const char *impl)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].impl, impl) == 0)
            return &rows[i];
    return NULL;
}

static void test_selftests(void)
{
    const mpce_impl_info *rows;
    size_t n;
    CU_ASSERT_FATAL(mpce_list(engine, 1, &rows, &n) == MPCE_OK);
    for (size_t i = 0; i < NCUDA; i++) {
        const mpce_impl_info *r = find_row(rows, n, cuda_impls[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        if (strcmp(r->selftest, "pass") != 0)
            fprintf(stderr, "  %s: self-test %s: %s\n", r->impl, r->selftest, r->reason);
        CU_ASSERT_STRING_EQUAL(r->selftest, "pass");
        CU_ASSERT_STRING_EQUAL(r->impl_class, "accel");
        CU_ASSERT_STRING_EQUAL(r->memory, "host,cuda0");
        CU_ASSERT(r->flags & MPCE_IMPL_ASYNC);
    }
    CU_ASSERT(find_row(rows, n, "prg-cuda-ttable")->flags & MPCE_IMPL_VARIABLE_TIME);
    CU_ASSERT(find_row(rows, n, "prg-cuda")->flags & MPCE_IMPL_CONSTANT_TIME);
}

/* ---- PRG ---- */

static int prg_compare(const char *impl, size_t n, size_t m, size_t mis_in, size_t mis_out,
                       uint64_t c0)
{
    uint8_t keys[8 * 16];
    mpce_prg *ctx;
    const size_t bytes = 16 * n, outb = 16 * n * m, ki = n % m;
    uint8_t *in = tu_alloc_misaligned(bytes + 16, mis_in);
    uint8_t *out = tu_alloc_misaligned(outb + 16, mis_out);
    uint8_t *want = malloc(outb + 16);
    int ok = 1;

    CU_ASSERT_FATAL(in && out && want);
    tu_splitmix_bytes(n * 7 + m, keys, sizeof keys);
    tu_splitmix_bytes(n * 131 + m, in, bytes);
    CU_ASSERT_FATAL(mpce_prg_new(engine, keys, m, &ctx) == MPCE_OK);
    ok &= mpce_prg_ecb(ctx, REF_PRG, ki, in, want, n) == MPCE_OK;
    memset(out, 0xA5, outb + 16);
    ok &= mpce_prg_ecb(ctx, impl, ki, in, out, n) == MPCE_OK;
    ok &= memcmp(out, want, bytes) == 0 && out[bytes] == 0xA5;
    memcpy(out, in, bytes);
    ok &= mpce_prg_ecb(ctx, impl, ki, out, out, n) == MPCE_OK;
    ok &= memcmp(out, want, bytes) == 0;
    ok &= mpce_prg_ctr(ctx, REF_PRG, ki, c0, want, n) == MPCE_OK;
    ok &= mpce_prg_ctr(ctx, impl, ki, c0, out, n) == MPCE_OK;
    ok &= memcmp(out, want, bytes) == 0;
    ok &= mpce_prg_mmo(ctx, REF_PRG, in, want, n) == MPCE_OK;
    memset(out, 0xA5, outb + 16);
    ok &= mpce_prg_mmo(ctx, impl, in, out, n) == MPCE_OK;
    ok &= memcmp(out, want, outb) == 0 && out[outb] == 0xA5;
    if (!ok)
        fprintf(stderr, "  %s differs from %s: n %zu, m %zu, misalign %zu/%zu: %s\n", impl,
                REF_PRG, n, m, mis_in, mis_out, mpce_last_error());
    mpce_prg_free(ctx);
    tu_free_misaligned(in);
    tu_free_misaligned(out);
    free(want);
    return ok;
}

static void test_prg(void)
{
    for (size_t v = 0; v < 2; v++) {
        const char *impl = v ? "prg-cuda-ttable" : "prg-cuda";
        for (size_t n = 1; n <= 70; n++)
            CU_ASSERT(prg_compare(impl, n, 1 + n % 8, n % 16, (3 * n) % 16,
                                  n % 3 ? n * 0x9e3779b97f4a7c15ull : UINT64_MAX - n));
        /* Staged and chunked: beyond CUDA_STAGE_BYTES per chunk. */
        CU_ASSERT(prg_compare(impl, ((size_t)1 << 21) + 3, 2, 0, 0, UINT64_MAX - 1000));
        CU_ASSERT(prg_compare(impl, 300001, 8, 5, 9, 42));
    }
}

/* ---- NTT ---- */

static int ntt_compare(size_t n, const uint64_t *q, size_t l, size_t batch)
{
    mpce_ntt *ctx;
    const size_t words = n * l * batch;
    uint64_t *a = malloc(words * 8), *b = malloc(words * 8), *want = malloc(words * 8),
             *got = malloc(words * 8), *fa = malloc(words * 8);
    uint64_t st = n + l + batch;
    int ok = 1;
    CU_ASSERT_FATAL(a && b && want && got && fa);
    CU_ASSERT_FATAL(mpce_ntt_new(engine, n, q, l, &ctx) == MPCE_OK);
    for (size_t r = 0; r < l * batch; r++)
        for (size_t j = 0; j < n; j++) {
            a[r * n + j] = tu_splitmix64(&st) % q[r % l];
            b[r * n + j] = tu_splitmix64(&st) % q[r % l];
        }
    ok &= mpce_ntt_forward(ctx, "ntt-soft", a, want, batch) == MPCE_OK;
    ok &= mpce_ntt_forward(ctx, "ntt-cuda", a, got, batch) == MPCE_OK;
    ok &= memcmp(got, want, words * 8) == 0;
    memcpy(fa, want, words * 8);
    ok &= mpce_ntt_inverse(ctx, "ntt-soft", b, want, batch) == MPCE_OK;
    ok &= mpce_ntt_inverse(ctx, "ntt-cuda", b, got, batch) == MPCE_OK;
    ok &= memcmp(got, want, words * 8) == 0;
    ok &= mpce_ntt_mul(ctx, "ntt-soft", fa, b, want, batch) == MPCE_OK;
    ok &= mpce_ntt_mul(ctx, "ntt-cuda", fa, b, got, batch) == MPCE_OK;
    ok &= memcmp(got, want, words * 8) == 0;
    ok &= mpce_ntt_inverse(ctx, "ntt-cuda", fa, fa, batch) == MPCE_OK;
    ok &= memcmp(fa, a, words * 8) == 0;
    if (!ok)
        fprintf(stderr, "  ntt-cuda differs from ntt-soft: n %zu, l %zu, batch %zu: %s\n", n, l,
                batch, mpce_last_error());
    mpce_ntt_free(ctx);
    free(a);
    free(b);
    free(want);
    free(got);
    free(fa);
    return ok;
}

static void test_ntt(void)
{
    static const uint64_t q1[] = {Q61}, q3[] = {Q61, Q50, Q61};
    CU_ASSERT(ntt_compare(1024, q1, 1, 7));
    CU_ASSERT(ntt_compare(4096, q3, 3, 5));
    CU_ASSERT(ntt_compare(4096, q1, 1, 600)); /* staged, several chunks */
    CU_ASSERT(ntt_compare(16384, q3, 3, 2));
    CU_ASSERT(ntt_compare(131072, q1, 1, 3));
}

/* An NTT -> mul -> inverse chain on cuda0 buffers: two uploads, one
 * download, soft's answer. */
static void test_device_chain(void)
{
    enum { N = 4096, L = 2, B = 3 };
    static const uint64_t q[L] = {Q61, Q50};
    const size_t words = (size_t)N * L * B;
    mpce_ntt *ctx;
    mpce_queue *qu;
    mpce_buffer *a, *b, *t;
    uint64_t *ha = malloc(words * 8), *hb = malloc(words * 8), *want = malloc(words * 8),
             *got = malloc(words * 8);
    uint64_t st = 5;
    CU_ASSERT_FATAL(ha && hb && want && got);
    for (size_t r = 0; r < (size_t)L * B; r++)
        for (size_t j = 0; j < N; j++) {
            ha[r * N + j] = tu_splitmix64(&st) % q[r % L];
            hb[r * N + j] = tu_splitmix64(&st) % q[r % L];
        }
    CU_ASSERT_FATAL(mpce_ntt_new(engine, N, q, L, &ctx) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_ntt_forward(ctx, "ntt-soft", ha, want, B) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_ntt_forward(ctx, "ntt-soft", hb, got, B) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_ntt_mul(ctx, "ntt-soft", want, got, want, B) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_ntt_inverse(ctx, "ntt-soft", want, want, B) == MPCE_OK);

    CU_ASSERT_FATAL(mpce_queue_new(engine, "cuda0", &qu) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, "cuda0", words * 8, &a) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, "cuda0", words * 8, &b) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(engine, "cuda0", words * 8, &t) == MPCE_OK);
    CU_ASSERT_PTR_NULL(mpce_buffer_host(a));
    CU_ASSERT_EQUAL(mpce_buffer_upload(qu, a, 0, ha, words * 8), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_buffer_upload(qu, b, 0, hb, words * 8), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_forward_buf(ctx, qu, "ntt-cuda", a, a, B), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_forward_buf(ctx, qu, "ntt-cuda", b, b, B), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_mul_buf(ctx, qu, "ntt-cuda", a, b, t, B), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_inverse_buf(ctx, qu, "ntt-cuda", t, t, B), MPCE_OK);
    memset(got, 0, words * 8);
    CU_ASSERT_EQUAL(mpce_buffer_download(qu, got, t, 0, words * 8), MPCE_OK);
    CU_ASSERT_EQUAL_FATAL(mpce_queue_wait(qu), MPCE_OK);
    CU_ASSERT(memcmp(got, want, words * 8) == 0);
    mpce_buffer_free(a);
    mpce_buffer_free(b);
    mpce_buffer_free(t);
    mpce_queue_free(qu);
    mpce_ntt_free(ctx);
    free(ha);
    free(hb);
    free(want);
    free(got);
}

/* Every other op on cuda0 buffers, queued, against soft on host memory:
 * the device branches of PRG, LPN (the table in device memory) and DPF
 * (evalall over a domain large enough to run in chunks). */
static mpce_buffer *device_copy(mpce_queue *qu, const void *data, size_t len)
{
    mpce_buffer *b = NULL;
    CU_ASSERT_FATAL(mpce_buffer_new(engine, "cuda0", len, &b) == MPCE_OK);
    if (data)
        CU_ASSERT(mpce_buffer_upload(qu, b, 0, data, len) == MPCE_OK);
    return b;
}

static void check_download(mpce_queue *qu, mpce_buffer *b, const void *want, size_t len,
                           const char *what)
{
    uint8_t *got = malloc(len);
    CU_ASSERT_FATAL(got != NULL);
    memset(got, 0x5A, len);
    CU_ASSERT(mpce_buffer_download(qu, got, b, 0, len) == MPCE_OK);
    CU_ASSERT_EQUAL_FATAL(mpce_queue_wait(qu), MPCE_OK);
    CU_ASSERT(memcmp(got, want, len) == 0);
    if (memcmp(got, want, len) != 0)
        fprintf(stderr, "  %s on cuda0 buffers differs from soft\n", what);
    free(got);
}

static void test_device_buffers(void)
{
    mpce_queue *qu;
    CU_ASSERT_FATAL(mpce_queue_new(engine, "cuda0", &qu) == MPCE_OK);

    /* PRG: ecb (in place too), mmo with m = 3, ctr. */
    enum { N = 4099, M = 3 };
    uint8_t keys[M * 16];
    uint8_t *in = malloc(16 * N), *want = malloc(16 * N * M);
    CU_ASSERT_FATAL(in && want);
    tu_splitmix_bytes(91, keys, sizeof keys);
    tu_splitmix_bytes(92, in, 16 * N);
    mpce_prg *prg;
    CU_ASSERT_FATAL(mpce_prg_new(engine, keys, M, &prg) == MPCE_OK);
    mpce_buffer *bin = device_copy(qu, in, 16 * N), *bout = device_copy(qu, NULL, 16 * N * M);
    CU_ASSERT_FATAL(mpce_prg_ecb(prg, REF_PRG, 1, in, want, N) == MPCE_OK);
    CU_ASSERT(mpce_prg_ecb_buf(prg, qu, "prg-cuda", 1, bin, bout, N) == MPCE_OK);
    check_download(qu, bout, want, 16 * N, "prg.ecb");
    CU_ASSERT(mpce_prg_ecb_buf(prg, qu, "prg-cuda", 1, bin, bin, N) == MPCE_OK);
    check_download(qu, bin, want, 16 * N, "prg.ecb in place");
    CU_ASSERT(mpce_buffer_upload(qu, bin, 0, in, 16 * N) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_prg_mmo(prg, REF_PRG, in, want, N) == MPCE_OK);
    CU_ASSERT(mpce_prg_mmo_buf(prg, qu, "prg-cuda", bin, bout, N) == MPCE_OK);
    check_download(qu, bout, want, 16 * N * M, "prg.mmo");
    const uint64_t c0 = UINT64_MAX - 100; /* the counter wraps inside the call */
    CU_ASSERT_FATAL(mpce_prg_ctr(prg, REF_PRG, 2, c0, want, N) == MPCE_OK);
    CU_ASSERT(mpce_prg_ctr_buf(prg, qu, "prg-cuda", 2, c0, bout, N) == MPCE_OK);
    check_download(qu, bout, want, 16 * N, "prg.ctr");
    mpce_buffer_free(bin);
    mpce_buffer_free(bout);
    mpce_prg_free(prg);
    free(in);
    free(want);

    /* LPN: the b13 table in device memory. */
    enum { LOGK = 19, NOUT = 10007 };
    uint8_t seed[16];
    tu_splitmix_bytes(93, seed, sizeof seed);
    const size_t k = (size_t)1 << LOGK;
    uint8_t *table = malloc(16 * k), *acc = malloc(16 * NOUT);
    CU_ASSERT_FATAL(table && acc);
    tu_splitmix_bytes(94, table, 16 * k);
    tu_splitmix_bytes(95, acc, 16 * NOUT);
    mpce_lpn *lpn;
    CU_ASSERT_FATAL(mpce_lpn_new(engine, seed, LOGK, &lpn) == MPCE_OK);
    mpce_buffer *btab = device_copy(qu, table, 16 * k), *bacc = device_copy(qu, acc, 16 * NOUT);
    uint64_t consumed = 0;
    CU_ASSERT_FATAL(mpce_lpn_fold(lpn, "lpn-soft", 77, table, k, acc, NOUT, &consumed) ==
                    MPCE_OK);
    CU_ASSERT_EQUAL(consumed, mpce_lpn_blocks_consumed(NOUT));
    CU_ASSERT(mpce_lpn_fold_buf(lpn, qu, "lpn-cuda", 77, btab, bacc, NOUT) == MPCE_OK);
    check_download(qu, bacc, acc, 16 * NOUT, "lpn.fold");
    mpce_buffer_free(btab);
    mpce_buffer_free(bacc);
    mpce_lpn_free(lpn);
    free(table);
    free(acc);

    /* DPF: points and a full domain of 2^22 (chunked) on device buffers. */
    enum { BITS = 22, NPTS = 1001 };
    uint8_t kl[16], kr[16], s0[16], s1[16], beta[16];
    tu_splitmix_bytes(96, kl, 16);
    tu_splitmix_bytes(97, kr, 16);
    tu_splitmix_bytes(98, s0, 16);
    tu_splitmix_bytes(99, s1, 16);
    tu_splitmix_bytes(100, beta, 16);
    mpce_dpf *dpf;
    CU_ASSERT_FATAL(mpce_dpf_new(engine, BITS, MPCE_DPF_BYTES, kl, kr, &dpf) == MPCE_OK);
    mpce_dpf_key *k0, *k1;
    const uint64_t alpha = 0x2a5a5a;
    CU_ASSERT_FATAL(mpce_dpf_gen(dpf, "dpf-soft", alpha, beta, s0, s1, &k0, &k1) == MPCE_OK);
    uint64_t pts[NPTS];
    uint64_t st = 17;
    for (size_t i = 0; i < NPTS; i++)
        pts[i] = i % 7 == 0 ? alpha : tu_splitmix64(&st) & (((uint64_t)1 << BITS) - 1);
    const size_t osz = mpce_dpf_output_size(MPCE_DPF_BYTES), all = osz << BITS;
    uint8_t *dw = malloc(osz * NPTS), *aw = malloc(all);
    CU_ASSERT_FATAL(dw && aw);
    mpce_buffer *bpts = device_copy(qu, pts, sizeof pts), *bout1 = device_copy(qu, NULL, osz * NPTS),
                *ball = device_copy(qu, NULL, all);
    CU_ASSERT_FATAL(mpce_dpf_eval(dpf, "dpf-soft", k1, pts, NPTS, dw) == MPCE_OK);
    CU_ASSERT(mpce_dpf_eval_buf(dpf, qu, "dpf-cuda", k1, bpts, NPTS, bout1) == MPCE_OK);
    check_download(qu, bout1, dw, osz * NPTS, "dpf.eval");
    CU_ASSERT_FATAL(mpce_dpf_evalall(dpf, "dpf-soft", k0, aw, all) == MPCE_OK);
    CU_ASSERT(mpce_dpf_evalall_buf(dpf, qu, "dpf-cuda", k0, ball) == MPCE_OK);
    check_download(qu, ball, aw, all, "dpf.evalall");
    mpce_buffer_free(bpts);
    mpce_buffer_free(bout1);
    mpce_buffer_free(ball);
    mpce_dpf_key_free(k0);
    mpce_dpf_key_free(k1);
    mpce_dpf_free(dpf);
    free(dw);
    free(aw);
    mpce_queue_free(qu);
}

/* ---- LPN ---- */

static int lpn_compare(unsigned logk, size_t n, uint64_t c0)
{
    uint8_t seed[16];
    mpce_lpn *ctx;
    const size_t k = (size_t)1 << logk;
    uint8_t *table = malloc(16 * k), *want = malloc(16 * n), *got = malloc(16 * n);
    uint64_t cw = 0, cg = 0;
    int ok = 1;
    CU_ASSERT_FATAL(table && want && got);
    tu_splitmix_bytes(logk + 1, seed, sizeof seed);
    tu_splitmix_bytes(logk + 2, table, 16 * k);
    tu_splitmix_bytes(n, want, 16 * n);
    memcpy(got, want, 16 * n);
    CU_ASSERT_FATAL(mpce_lpn_new(engine, seed, logk, &ctx) == MPCE_OK);
    ok &= mpce_lpn_fold(ctx, "lpn-soft", c0, table, k, want, n, &cw) == MPCE_OK;
    ok &= mpce_lpn_fold(ctx, "lpn-cuda", c0, table, k, got, n, &cg) == MPCE_OK;
    ok &= cw == cg && memcmp(got, want, 16 * n) == 0;
    if (!ok)
        fprintf(stderr, "  lpn-cuda differs from lpn-soft: logk %u, n %zu: %s\n", logk, n,
                mpce_last_error());
    mpce_lpn_free(ctx);
    free(table);
    free(want);
    free(got);
    return ok;
}

static void test_lpn(void)
{
    for (size_t n = 1; n <= 9; n++)
        CU_ASSERT(lpn_compare(3 + (unsigned)n, n, n * 1000));
    CU_ASSERT(lpn_compare(19, 8192, 0));
    CU_ASSERT(lpn_compare(19, ((size_t)1 << 20) + 3, 77)); /* staged, chunked */
}

/* The context's cached device copy of the table follows the table's
 * bytes, not its address: changed in place between calls, the next fold
 * uses the new bytes; the same bytes at another address are reused. */
static void test_lpn_table_cache(void)
{
    enum { LOGK = 10, N = 4099 };
    const size_t k = (size_t)1 << LOGK;
    uint8_t seed[16];
    uint8_t *table = malloc(16 * k), *other = malloc(16 * k);
    uint8_t *want = malloc(16 * N), *got = malloc(16 * N);
    mpce_lpn *ctx;
    uint64_t cw, cg;
    CU_ASSERT_FATAL(table && other && want && got);
    tu_splitmix_bytes(31, seed, sizeof seed);
    tu_splitmix_bytes(32, table, 16 * k);
    CU_ASSERT_FATAL(mpce_lpn_new(engine, seed, LOGK, &ctx) == MPCE_OK);
    for (int round = 0; round < 4; round++) {
        const uint8_t *t = table;
        if (round == 1) {
            table[16 * 77 + 5] ^= 0x40; /* one byte, in place */
        } else if (round == 2) {
            table[16 * (k - 1)] ^= 1;   /* the last block */
        } else if (round == 3) {
            memcpy(other, table, 16 * k);
            t = other;                  /* the same bytes elsewhere */
        }
        memset(want, 0, 16 * N);
        memset(got, 0, 16 * N);
        CU_ASSERT(mpce_lpn_fold(ctx, "lpn-soft", 5, t, k, want, N, &cw) == MPCE_OK);
        CU_ASSERT(mpce_lpn_fold(ctx, "lpn-cuda", 5, t, k, got, N, &cg) == MPCE_OK);
        CU_ASSERT(cw == cg && memcmp(got, want, 16 * N) == 0);
        if (memcmp(got, want, 16 * N) != 0)
            fprintf(stderr, "  lpn-cuda used a stale table in round %d\n", round);
    }
    mpce_lpn_free(ctx);
    free(table);
    free(other);
    free(want);
    free(got);
}

/* mpce_buffer_copy within one cuda0 buffer, the ranges overlapping both
 * ways: memmove's bytes, as buffer.h promises for every memory kind. */
static void test_overlapping_copy(void)
{
    enum { LEN = 1 << 20 };
    static const struct {
        size_t dst, src, len;
    } moves[] = {{8, 0, LEN / 2}, {0, 8, LEN / 2}, {1, 0, LEN - 1}, {0, 1, LEN - 1},
                 {4096, 0, 65536}, {100, 100, 1000}};
    uint8_t *init = malloc(LEN), *want = malloc(LEN);
    mpce_queue *qu;
    CU_ASSERT_FATAL(init && want);
    tu_splitmix_bytes(41, init, LEN);
    CU_ASSERT_FATAL(mpce_queue_new(engine, "cuda0", &qu) == MPCE_OK);
    mpce_buffer *b = device_copy(qu, NULL, LEN);
    for (size_t i = 0; i < sizeof(moves) / sizeof(moves[0]); i++) {
        memcpy(want, init, LEN);
        memmove(want + moves[i].dst, want + moves[i].src, moves[i].len);
        CU_ASSERT(mpce_buffer_upload(qu, b, 0, init, LEN) == MPCE_OK);
        CU_ASSERT(mpce_buffer_copy(qu, b, moves[i].dst, b, moves[i].src, moves[i].len) ==
                  MPCE_OK);
        check_download(qu, b, want, LEN, "an overlapping copy");
    }
    mpce_buffer_free(b);
    mpce_queue_free(qu);
    free(init);
    free(want);
}

/* A failed allocation leaves an error on the thread in the CUDA runtime;
 * the next call, which is fine, must not fail with it. */
static void test_failure_does_not_poison(void)
{
    uint8_t key[16], in[16 * 37], want[16 * 37], got[16 * 37];
    mpce_buffer *huge = NULL;
    mpce_prg *prg;
    tu_splitmix_bytes(51, key, sizeof key);
    tu_splitmix_bytes(52, in, sizeof in);
    CU_ASSERT_FATAL(mpce_prg_new(engine, key, 1, &prg) == MPCE_OK);
    CU_ASSERT(mpce_buffer_new(engine, "cuda0", (size_t)1 << 50, &huge) != MPCE_OK);
    CU_ASSERT_PTR_NULL(huge);
    CU_ASSERT(mpce_prg_ecb(prg, REF_PRG, 0, in, want, 37) == MPCE_OK);
    CU_ASSERT(mpce_prg_ecb(prg, "prg-cuda", 0, in, got, 37) == MPCE_OK);
    CU_ASSERT(memcmp(got, want, sizeof got) == 0);
    mpce_prg_free(prg);
}

/* ---- DPF ---- */

static int dpf_compare(unsigned bits, mpce_dpf_group group, size_t nkeys)
{
    mpce_dpf *ctx;
    const size_t osz = mpce_dpf_output_size(group);
    const uint64_t mask = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    mpce_dpf_key **k0 = calloc(nkeys, sizeof(*k0)), **k1 = calloc(nkeys, sizeof(*k1));
    mpce_dpf_key **g0 = calloc(nkeys, sizeof(*g0)), **g1 = calloc(nkeys, sizeof(*g1));
    uint64_t *pts = malloc(8 * nkeys), st = bits * 7 + group;
    uint8_t *want = malloc(osz * nkeys), *got = malloc(osz * nkeys);
    uint8_t beta[16], s0[16], s1[16], a[2048], b[2048];
    int ok = 1;
    CU_ASSERT_FATAL(k0 && k1 && g0 && g1 && pts && want && got);
    CU_ASSERT_FATAL(mpce_dpf_new(engine, bits, group, NULL, NULL, &ctx) == MPCE_OK);
    for (size_t j = 0; j < nkeys; j++) {
        const uint64_t alpha = tu_splitmix64(&st) & mask;
        tu_splitmix_bytes(st + j, beta, 16);
        tu_splitmix_bytes(st + j + 1, s0, 16);
        tu_splitmix_bytes(st + j + 2, s1, 16);
        s0[12] &= 0xfe;
        s1[12] &= 0xfe;
        pts[j] = j % 2 ? alpha : tu_splitmix64(&st) & mask;
        ok &= mpce_dpf_gen(ctx, "dpf-soft", alpha, beta, s0, s1, &k0[j], &k1[j]) == MPCE_OK;
        ok &= mpce_dpf_gen(ctx, "dpf-cuda", alpha, beta, s0, s1, &g0[j], &g1[j]) == MPCE_OK;
        size_t la = 0, lb = 0;
        ok &= mpce_dpf_key_serialize(k1[j], a, sizeof a, &la) == MPCE_OK;
        ok &= mpce_dpf_key_serialize(g1[j], b, sizeof b, &lb) == MPCE_OK;
        ok &= la == lb && memcmp(a, b, la) == 0;
    }
    ok &= mpce_dpf_eval_keys(ctx, "dpf-soft", (const mpce_dpf_key *const *)k1, pts, nkeys,
                             want) == MPCE_OK;
    ok &= mpce_dpf_eval_keys(ctx, "dpf-cuda", (const mpce_dpf_key *const *)k1, pts, nkeys, got) ==
          MPCE_OK;
    ok &= memcmp(got, want, osz * nkeys) == 0;
    mpce_dpf_keys *batch;
    ok &= mpce_dpf_keys_new(ctx, (const mpce_dpf_key *const *)k0, nkeys, &batch) == MPCE_OK;
    ok &= mpce_dpf_eval_batch(ctx, "dpf-soft", batch, 1, pts, nkeys - 1, want) == MPCE_OK;
    ok &= mpce_dpf_eval_batch(ctx, "dpf-cuda", batch, 1, pts, nkeys - 1, got) == MPCE_OK;
    ok &= memcmp(got, want, osz * (nkeys - 1)) == 0;
    mpce_dpf_keys_free(batch);
    ok &= mpce_dpf_eval(ctx, "dpf-soft", k0[0], pts, nkeys, want) == MPCE_OK;
    ok &= mpce_dpf_eval(ctx, "dpf-cuda", k0[0], pts, nkeys, got) == MPCE_OK;
    ok &= memcmp(got, want, osz * nkeys) == 0;
    if (bits <= 22) {
        const size_t len = osz << bits;
        uint8_t *w = malloc(len), *g = malloc(len);
        CU_ASSERT_FATAL(w && g);
        ok &= mpce_dpf_evalall(ctx, "dpf-soft", k1[0], w, len) == MPCE_OK;
        ok &= mpce_dpf_evalall(ctx, "dpf-cuda", k1[0], g, len) == MPCE_OK;
        ok &= memcmp(g, w, len) == 0;
        free(w);
        free(g);
    }
    if (!ok)
        fprintf(stderr, "  dpf-cuda differs from dpf-soft: bits %u, group %d: %s\n", bits,
                (int)group, mpce_last_error());
    for (size_t j = 0; j < nkeys; j++) {
        mpce_dpf_key_free(k0[j]);
        mpce_dpf_key_free(k1[j]);
        mpce_dpf_key_free(g0[j]);
        mpce_dpf_key_free(g1[j]);
    }
    free(k0);
    free(k1);
    free(g0);
    free(g1);
    free(pts);
    free(want);
    free(got);
    mpce_dpf_free(ctx);
    return ok;
}

static void test_dpf(void)
{
    static const unsigned bits[] = {1, 7, 20, 22, 40, 64};
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        CU_ASSERT(dpf_compare(bits[i], MPCE_DPF_BYTES, 37));
        CU_ASSERT(dpf_compare(bits[i], MPCE_DPF_U64, 1000));
    }
}

/* The configuration file is the process's own: removed on every way out
 * (the sanitizer build counts its name as a leak otherwise). */
static int done(char *conf, int rc)
{
    unlink(conf);
    free(conf);
    return rc;
}

/* argv[1]: the module's directory, for a copied tree (make cuda-bundle);
 * the build tree's by default. */
int main(int argc, char **argv)
{
    const char *plugin_dir = argc > 1 ? argv[1] : CUDA_PLUGIN_DIR;
    char *conf = tu_write_temp("[engine]\nallow_variable_time = yes\n[tune]\nvet = no\n");
    mpce_options opts = {
        .struct_size = sizeof(opts),
        .config_path = conf,
        .plugin_path = plugin_dir,
        .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV | MPCE_OPT_NO_SYSTEM_CONFIG,
    };
    const mpce_impl_info *rows;
    size_t n;
    if (mpce_engine_new(&opts, &engine) != MPCE_OK || mpce_list(engine, 0, &rows, &n) != MPCE_OK) {
        fprintf(stderr, "test_cuda: %s\n", mpce_last_error());
        return done(conf, 1);
    }
    if (find_row(rows, n, "prg-cuda") == NULL) {
        /* The module as a whole was skipped: a missing device is a SKIP,
         * anything else (it failed to load, init failed otherwise) a
         * failure. */
        for (size_t i = 0; i < n; i++) {
            if (strstr(rows[i].plugin, "mpce-cuda") == NULL)
                continue;
            if (strstr(rows[i].reason, "no CUDA device") != NULL) {
                printf("skipped: no CUDA device (%s)\n", rows[i].reason);
                mpce_engine_free(engine);
                return done(conf, 77);
            }
            fprintf(stderr, "test_cuda: the cuda module was not loaded: %s\n", rows[i].reason);
            mpce_engine_free(engine);
            return done(conf, 1);
        }
        fprintf(stderr, "test_cuda: no cuda module in %s\n", plugin_dir);
        mpce_engine_free(engine);
        return done(conf, 1);
    }
    static const struct tu_test tests[] = {
        {"every cuda implementation passes its self-test", test_selftests},
        {"PRG against soft (both AES kernels, staged)", test_prg},
        {"NTT against soft (one kernel, multi-pass, staged)", test_ntt},
        {"NTT -> mul -> inverse on cuda0 buffers", test_device_chain},
        {"PRG, LPN and DPF on cuda0 buffers against soft", test_device_buffers},
        {"LPN fold against soft (b13 table, staged)", test_lpn},
        {"LPN: the cached table follows the table's bytes", test_lpn_table_cache},
        {"overlapping copies within a cuda0 buffer are memmove's", test_overlapping_copy},
        {"a failed call does not fail the next one", test_failure_does_not_poison},
        {"DPF gen and evaluations against soft", test_dpf},
        {NULL, NULL},
    };
    int rc = tu_main("cuda module on the GPU", tests);
    mpce_engine_free(engine);
    return done(conf, rc);
}
