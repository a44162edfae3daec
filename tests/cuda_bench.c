/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GPU benchmarks of the cuda module at the target shapes, run by
 * plugins/cuda/check-device (built on demand: make tests/cuda_bench; the
 * T-table PRG is reported beside the bitsliced one, without a target). Two
 * times per row, each the median of a few repetitions after a warm-up:
 * "device", the op on cuda0 buffers through the *_buf API and a queue wait
 * (the kernels plus launch and completion overhead, no transfers), and
 * "end to end", the plain host-memory API call (copies in and out
 * included). Prints one table, the last thing it prints; a row whose
 * implementation does not exist says so instead of a number.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpcengine.h"

#define REPS 5

static mpce_engine *engine;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct row {
    const char *name, *shape, *unit;
    double units;
    double target;      /* seconds per unit, 0: "per second" target in rate */
    double rate_target; /* units per second (PRG); 0 with target 0: reported only */
    double dev_s, e2e_s;
    char note[160];   /* set: not measured, why */
    char note2[96];   /* a remark on a measured row */
};

static struct row rows[10];
static size_t nrows;

#define TIMED(out, setup, body)                                                            \
    do {                                                                                   \
        double t_[REPS];                                                                   \
        setup;                                                                             \
        body; /* warm-up */                                                                \
        for (int r_ = 0; r_ < REPS; r_++) {                                                \
            const double t0_ = now();                                                      \
            body;                                                                          \
            t_[r_] = now() - t0_;                                                          \
        }                                                                                  \
        qsort(t_, REPS, sizeof(double), by_value);                                         \
        (out) = t_[REPS / 2];                                                              \
    } while (0)

static int check(mpce_status st, struct row *r, const char *what)
{
    if (st == MPCE_OK)
        return 1;
    snprintf(r->note, sizeof(r->note), "%s: %s", what, mpce_last_error());
    return 0;
}

/* impl: prg-cuda (bitsliced, the target's) or prg-cuda-ttable (variable
 * time, reported beside it; the engine here allows it). */
static void bench_prg(const char *impl, const char *name, double rate_target)
{
    struct row *r = &rows[nrows++];
    *r = (struct row){.name = name, .shape = "m=2, 2^26 seeds", .unit = "blocks",
                      .rate_target = rate_target};
    const size_t n = (size_t)1 << 26;
    r->units = 2.0 * (double)n;
    uint8_t keys[32] = {1, 2, 3};
    mpce_prg *ctx;
    mpce_queue *q;
    mpce_buffer *in, *out;
    if (!check(mpce_prg_new(engine, keys, 2, &ctx), r, "prg_new") ||
        !check(mpce_queue_new(engine, "cuda0", &q), r, "queue_new") ||
        !check(mpce_buffer_new(engine, "cuda0", 16 * n, &in), r, "buffer") ||
        !check(mpce_buffer_new(engine, "cuda0", 32 * n, &out), r, "buffer"))
        return;
    int ok = 1;
    TIMED(r->dev_s, (void)0,
          ok &= mpce_prg_mmo_buf(ctx, q, impl, in, out, n) == MPCE_OK &&
                mpce_queue_wait(q) == MPCE_OK);
    uint8_t *hin = calloc(n, 16), *hout = malloc(32 * n);
    if (hin && hout)
        TIMED(r->e2e_s, (void)0, ok &= mpce_prg_mmo(ctx, impl, hin, hout, n) == MPCE_OK);
    if (!ok)
        check(MPCE_ERR_BACKEND, r, "prg.mmo");
    free(hin);
    free(hout);
    mpce_buffer_free(in);
    mpce_buffer_free(out);
    mpce_queue_free(q);
    mpce_prg_free(ctx);
}

static void bench_ntt(size_t n, size_t batch, double target)
{
    struct row *r = &rows[nrows++];
    static char shape[2][64];
    char *sh = shape[n > 4096];
    snprintf(sh, 64, "N=%zu, B=%zu, q=2^61-2^21+1", n, batch);
    *r = (struct row){.name = "NTT forward (ntt-cuda)", .shape = sh, .unit = "NTT",
                      .units = (double)batch, .target = target};
    const uint64_t q61 = UINT64_C(0x1fffffffffe00001);
    const size_t words = n * batch;
    mpce_ntt *ctx;
    mpce_queue *q;
    mpce_buffer *a;
    if (!check(mpce_ntt_new(engine, n, &q61, 1, &ctx), r, "ntt_new") ||
        !check(mpce_queue_new(engine, "cuda0", &q), r, "queue_new") ||
        !check(mpce_buffer_new(engine, "cuda0", 8 * words, &a), r, "buffer"))
        return;
    uint64_t *h = calloc(words, 8);
    int ok = h != NULL;
    /* Zeros are canonical and the transform's cost does not depend on them. */
    ok &= mpce_buffer_upload(q, a, 0, h, 8 * words) == MPCE_OK && mpce_queue_wait(q) == MPCE_OK;
    TIMED(r->dev_s, (void)0,
          ok &= mpce_ntt_forward_buf(ctx, q, "ntt-cuda", a, a, batch) == MPCE_OK &&
                mpce_queue_wait(q) == MPCE_OK);
    TIMED(r->e2e_s, (void)0, ok &= mpce_ntt_forward(ctx, "ntt-cuda", h, h, batch) == MPCE_OK);
    if (!ok)
        check(MPCE_ERR_BACKEND, r, "ntt.forward");
    free(h);
    mpce_buffer_free(a);
    mpce_queue_free(q);
    mpce_ntt_free(ctx);
}

static void bench_lpn(void)
{
    struct row *r = &rows[nrows++];
    *r = (struct row){.name = "LPN fold (lpn-cuda)", .shape = "b13: logk 19, 2^22 outputs",
                      .unit = "output", .target = 0.5e-9};
    const size_t n = (size_t)1 << 22, k = (size_t)1 << 19;
    r->units = (double)n;
    uint8_t seed[16] = {9};
    mpce_lpn *ctx;
    mpce_queue *q;
    mpce_buffer *t, *o;
    if (!check(mpce_lpn_new(engine, seed, 19, &ctx), r, "lpn_new") ||
        !check(mpce_queue_new(engine, "cuda0", &q), r, "queue_new") ||
        !check(mpce_buffer_new(engine, "cuda0", 16 * k, &t), r, "buffer") ||
        !check(mpce_buffer_new(engine, "cuda0", 16 * n, &o), r, "buffer"))
        return;
    uint8_t *ht = calloc(k, 16), *ho = calloc(n, 16);
    uint64_t used;
    int ok = ht && ho;
    TIMED(r->dev_s, (void)0,
          ok &= mpce_lpn_fold_buf(ctx, q, "lpn-cuda", 0, t, o, n) == MPCE_OK &&
                mpce_queue_wait(q) == MPCE_OK);
    TIMED(r->e2e_s, (void)0,
          ok &= mpce_lpn_fold(ctx, "lpn-cuda", 0, ht, k, ho, n, &used) == MPCE_OK);
    if (!ok)
        check(MPCE_ERR_BACKEND, r, "lpn.fold");
    free(ht);
    free(ho);
    mpce_buffer_free(t);
    mpce_buffer_free(o);
    mpce_queue_free(q);
    mpce_lpn_free(ctx);
}

/* Point evaluation: 2^20 keys, one point each, as a level-major batch. */
static void bench_dpf_point(void)
{
    struct row *r = &rows[nrows++];
    *r = (struct row){.name = "DPF point eval (dpf-cuda)", .shape = "n=20, 2^20 keys",
                      .unit = "key", .target = 1.0e-9};
    const size_t nk = (size_t)1 << 20;
    r->units = (double)nk;
    mpce_dpf *ctx;
    mpce_dpf_key *k0, *k1;
    uint8_t beta[16] = {1}, s0[16] = {2}, s1[16] = {3};
    if (!check(mpce_dpf_new(engine, 20, MPCE_DPF_U64, NULL, NULL, &ctx), r, "dpf_new") ||
        !check(mpce_dpf_gen(ctx, "dpf-cuda", 12345, beta, s0, s1, &k0, &k1), r, "dpf_gen"))
        return;
    const mpce_dpf_key **keys = malloc(nk * sizeof(*keys));
    uint64_t *pts = malloc(8 * nk);
    uint8_t *out = malloc(8 * nk);
    mpce_dpf_keys *batch = NULL;
    if (!keys || !pts || !out)
        return;
    for (size_t j = 0; j < nk; j++) {
        keys[j] = k0;
        pts[j] = j & 0xfffff;
    }
    if (!check(mpce_dpf_keys_new(ctx, keys, nk, &batch), r, "keys_new"))
        return;
    int ok = 1;
    /* Keys always come from host memory (the ABI has no device form of a
     * key batch), so every call uploads them: there is no device-only
     * figure to hold against the kernel-time target. */
    TIMED(r->e2e_s, (void)0,
          ok &= mpce_dpf_eval_batch(ctx, "dpf-cuda", batch, 0, pts, nk, out) == MPCE_OK);
    r->dev_s = 0;
    snprintf(r->note2, sizeof(r->note2), "(no device figure: keys are host memory, uploaded "
             "by each call)");
    if (!ok)
        check(MPCE_ERR_BACKEND, r, "dpf.eval_batch");
    mpce_dpf_keys_free(batch);
    free(keys);
    free(pts);
    free(out);
    mpce_dpf_key_free(k0);
    mpce_dpf_key_free(k1);
    mpce_dpf_free(ctx);
}

/* Full domain: 1024 keys one after the other, device output buffer. */
static void bench_dpf_full(void)
{
    struct row *r = &rows[nrows++];
    *r = (struct row){.name = "DPF full domain (dpf-cuda)", .shape = "n=20, 1024 keys",
                      .unit = "output", .target = 0.1e-9};
    const size_t nk = 1024, leaves = (size_t)1 << 20;
    r->units = (double)nk * (double)leaves;
    mpce_dpf *ctx;
    mpce_dpf_key *k0, *k1;
    uint8_t beta[16] = {1}, s0[16] = {2}, s1[16] = {3};
    mpce_queue *q;
    mpce_buffer *dout;
    if (!check(mpce_dpf_new(engine, 20, MPCE_DPF_U64, NULL, NULL, &ctx), r, "dpf_new") ||
        !check(mpce_dpf_gen(ctx, "dpf-cuda", 777, beta, s0, s1, &k0, &k1), r, "dpf_gen") ||
        !check(mpce_queue_new(engine, "cuda0", &q), r, "queue_new") ||
        !check(mpce_buffer_new(engine, "cuda0", 8 * leaves, &dout), r, "buffer"))
        return;
    uint8_t *out = malloc(8 * leaves);
    int ok = out != NULL;
    TIMED(r->dev_s, (void)0, {
        for (size_t j = 0; j < nk; j++)
            ok &= mpce_dpf_evalall_buf(ctx, q, "dpf-cuda", k0, dout) == MPCE_OK;
        ok &= mpce_queue_wait(q) == MPCE_OK;
    });
    TIMED(r->e2e_s, (void)0, {
        for (size_t j = 0; j < nk; j++)
            ok &= mpce_dpf_evalall(ctx, "dpf-cuda", k0, out, 8 * leaves) == MPCE_OK;
    });
    if (!ok)
        check(MPCE_ERR_BACKEND, r, "dpf.evalall");
    free(out);
    mpce_buffer_free(dout);
    mpce_queue_free(q);
    mpce_dpf_key_free(k0);
    mpce_dpf_key_free(k1);
    mpce_dpf_free(ctx);
}

static void print_rows(void)
{
    printf("\ndevice: the op on cuda0 buffers, median of %d (its kernels, launches and the "
           "queue wait; no transfers); end to end: the host-memory call, transfers included. "
           "The targets are kernel time: a device figure holds launch overhead too, small only "
           "against long kernels.\n", REPS);
    printf("%-26s %-28s %-14s %-14s %-16s %s\n", "benchmark", "shape", "device", "end to end",
           "target", "met (device)");
    for (size_t i = 0; i < nrows; i++) {
        const struct row *r = &rows[i];
        char dev[32], e2e[32], tgt[32];
        const char *met;
        if (r->note[0]) {
            printf("%-26s %-28s n/a: %s\n", r->name, r->shape, r->note);
            continue;
        }
        if (r->dev_s <= 0) {
            snprintf(dev, sizeof dev, "-");
            snprintf(e2e, sizeof e2e, "%.3g ns/%s", 1e9 * r->e2e_s / r->units, r->unit);
            snprintf(tgt, sizeof tgt, "<= %.3g ns", 1e9 * r->target);
            met = "n/a";
        } else if (r->rate_target > 0 || r->target <= 0) {
            snprintf(dev, sizeof dev, "%.2f G%s/s", r->units / r->dev_s / 1e9, r->unit);
            snprintf(e2e, sizeof e2e, "%.2f G%s/s", r->units / r->e2e_s / 1e9, r->unit);
            if (r->rate_target > 0)
                snprintf(tgt, sizeof tgt, ">= %.0f G/s", r->rate_target / 1e9);
            else
                snprintf(tgt, sizeof tgt, "(reported)");
            met = r->rate_target <= 0 ? "-" : r->units / r->dev_s >= r->rate_target ? "yes" : "no";
        } else {
            snprintf(dev, sizeof dev, "%.3g ns/%s", 1e9 * r->dev_s / r->units, r->unit);
            snprintf(e2e, sizeof e2e, "%.3g ns/%s", 1e9 * r->e2e_s / r->units, r->unit);
            snprintf(tgt, sizeof tgt, "<= %.3g ns", 1e9 * r->target);
            met = r->dev_s / r->units <= r->target ? "yes" : "no";
        }
        printf("%-26s %-28s %-14s %-14s %-16s %s%s%s\n", r->name, r->shape, dev, e2e, tgt, met,
               r->note2[0] ? "  " : "", r->note2);
    }
}

/* argv[1]: the modules' directory. The T-table AES is variable time, so
 * the engine is opened with a configuration that allows it (every row
 * names its implementation: nothing else changes). */
int main(int argc, char **argv)
{
    const char *dir = getenv("TMPDIR");
    char conf[4096];
    snprintf(conf, sizeof(conf), "%s/cuda_bench-XXXXXX", dir && *dir ? dir : "/tmp");
    const int fd = mkstemp(conf);
    /* No vet or tune here: check-device vetted the modules already (its
     * listing), and a compiled-in helper path is not this machine's. */
    static const char text[] = "[engine]\nallow_variable_time = yes\nuser_config = no\n"
                               "[tune]\nvet = no\nmode = off\n";
    if (fd < 0 || write(fd, text, sizeof(text) - 1) != (ssize_t)(sizeof(text) - 1) ||
        close(fd) != 0) {
        fprintf(stderr, "cuda_bench: cannot write a configuration in %s (set TMPDIR)\n", conf);
        return 1;
    }
    mpce_options opts = {
        .struct_size = sizeof(opts),
        .config_path = conf,
        .plugin_path = argc > 1 ? argv[1] : NULL,
        .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_SYSTEM_CONFIG | MPCE_OPT_NO_ENV,
    };
    const mpce_status st = mpce_engine_new(&opts, &engine);
    unlink(conf);
    if (st != MPCE_OK) {
        fprintf(stderr, "cuda_bench: %s\n", mpce_last_error());
        return 1;
    }
    bench_prg("prg-cuda", "PRG mmo (prg-cuda)", 20e9);
    bench_prg("prg-cuda-ttable", "PRG mmo (prg-cuda-ttable)", 0);
    bench_ntt(4096, 2048, 0.1e-6);
    bench_ntt(65536, 64, 2e-6);
    bench_lpn();
    bench_dpf_point();
    bench_dpf_full();
    print_rows();
    mpce_engine_free(engine);
    return 0;
}
