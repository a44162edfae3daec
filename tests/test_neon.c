/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The AArch64 module against the soft backend, bit for bit: the PRG at
 * every length 0..200 (0, 1, 3 and every non-multiple of the 8-block
 * interleave) with unaligned buffers, in place and out, and at larger
 * lengths with every misalignment and counters that wrap; the NTT at every
 * N from 8 to 2^13 with 30..61-bit moduli, one to three of them and one to
 * three polynomials, random and extreme inputs; the LPN fold at odd
 * lengths and the production table; DPF gen, eval, eval_keys, evalall and
 * evalall_range slices. A child process sets MPCENGINE_NEON_DISABLE=aes to
 * check that the module still loads, lists its AES implementations as
 * skipped with the missing feature, keeps ntt-neon, and that soft then
 * serves PRG, LPN and DPF. Written to run under qemu-aarch64 -cpu max (the
 * sizes are kept to what emulation finishes in seconds) and on hardware.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/runtime/exec.h"
#include "engine/spec/ntt_params.h"
#include "mpcengine/plugin.h"
#include "testutil.h"

#define PATTERN 0xA5
#define REF_PRG "prg-soft-bitslice"

/* Whether impl passed its self-test in engine e. The module is built with
 * this test, so an implementation that is not listed or whose self-test
 * failed is a failure; one skipped for a feature this core lacks is a
 * visible skip (the line names the reason). */
static int have_impl(mpce_engine *e, mpce_primitive prim, const char *impl)
{
    const mpce_impl_info *rows;
    size_t n;

    (void)prim;
    CU_ASSERT_FATAL(mpce_list(e, 1, &rows, &n) == MPCE_OK);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].impl, impl) != 0)
            continue;
        if (strcmp(rows[i].selftest, "pass") == 0)
            return 1;
        if (strcmp(rows[i].selftest, "skipped") == 0) {
            printf("\n  skipped: %s: %s\n", impl, rows[i].reason);
            return 0;
        }
        fprintf(stderr, "\n  %s: self-test %s: %s\n", impl, rows[i].selftest, rows[i].reason);
        CU_FAIL("a neon implementation did not pass its self-test");
        return 0;
    }
    fprintf(stderr, "\n  %s is not listed: is mpce-neon.so in %s?\n", impl, TEST_PLUGIN_PATH);
    CU_FAIL("a neon implementation is not loaded");
    return 0;
}

/* ---- PRG: prg-neon against the bitsliced soft AES ------------------------ */

struct prg_case {
    mpce_prg *ctx[8]; /* ctx[m-1] holds m keys */
};

static void prg_case_new(mpce_engine *e, struct prg_case *c)
{
    uint8_t keys[8 * 16];

    tu_splitmix_bytes(4242, keys, sizeof keys);
    for (size_t m = 1; m <= 8; m++)
        CU_ASSERT_FATAL(mpce_prg_new(e, keys, m, &c->ctx[m - 1]) == MPCE_OK);
}

static void prg_case_free(struct prg_case *c)
{
    for (size_t m = 0; m < 8; m++)
        mpce_prg_free(c->ctx[m]);
}

/* ecb (out of place and in place), ctr and mmo of n blocks, against the
 * reference implementation, with the given misalignments; the byte past
 * each output must be untouched. */
static int prg_compare(const struct prg_case *c, const char *impl, size_t n, size_t m,
                       size_t mis_in, size_t mis_out, uint64_t c0)
{
    const size_t bytes = 16 * n, outb = 16 * n * m;
    mpce_prg *ctx = c->ctx[m - 1];
    size_t ki = n % m;
    uint8_t *in = tu_alloc_misaligned(bytes + 16, mis_in);
    uint8_t *out = tu_alloc_misaligned(outb + 16, mis_out);
    uint8_t *want = malloc(outb + 16);
    int ok = 1;

    CU_ASSERT_FATAL(in && out && want);
    tu_splitmix_bytes(n * 131 + m, in, bytes);

    ok &= mpce_prg_ecb(ctx, REF_PRG, ki, in, want, n) == MPCE_OK;
    memset(out, PATTERN, outb + 16);
    ok &= mpce_prg_ecb(ctx, impl, ki, in, out, n) == MPCE_OK;
    ok &= memcmp(out, want, bytes) == 0 && out[bytes] == PATTERN;
    memcpy(out, in, bytes);
    ok &= mpce_prg_ecb(ctx, impl, ki, out, out, n) == MPCE_OK;
    ok &= memcmp(out, want, bytes) == 0;

    ok &= mpce_prg_ctr(ctx, REF_PRG, ki, c0, want, n) == MPCE_OK;
    memset(out, PATTERN, outb + 16);
    ok &= mpce_prg_ctr(ctx, impl, ki, c0, out, n) == MPCE_OK;
    ok &= memcmp(out, want, bytes) == 0 && out[bytes] == PATTERN;

    ok &= mpce_prg_mmo(ctx, REF_PRG, in, want, n) == MPCE_OK;
    memset(out, PATTERN, outb + 16);
    ok &= mpce_prg_mmo(ctx, impl, in, out, n) == MPCE_OK;
    ok &= memcmp(out, want, outb) == 0 && out[outb] == PATTERN;

    if (!ok)
        fprintf(stderr, "  %s differs from %s: n %zu, m %zu, misalign %zu/%zu, c0 %llu\n", impl,
                REF_PRG, n, m, mis_in, mis_out, (unsigned long long)c0);
    tu_free_misaligned(in);
    tu_free_misaligned(out);
    free(want);
    return ok;
}

/* The FIPS-197 C.1 vector, so that agreeing with soft is also agreeing
 * with the standard. */
static void test_prg_fips(void)
{
    if (have_impl(tu_engine(0), MPCE_PRIM_PRG, "prg-neon"))
        CU_ASSERT(tu_ecb_fips_c1(tu_engine(0), "prg-neon") == MPCE_OK);
}

static void test_prg_small(void)
{
    struct prg_case c;

    if (!have_impl(tu_engine(0), MPCE_PRIM_PRG, "prg-neon"))
        return;
    prg_case_new(tu_engine(0), &c);
    for (size_t n = 0; n <= 200; n++) {
        /* Counters just below 2^64 wrap inside the longer calls; every m
         * from 1 to 8 meets every residue of n mod the interleave. */
        uint64_t c0 = n % 3 == 0 ? UINT64_MAX - n / 2 : n * 0x9e3779b97f4a7c15ull;
        CU_ASSERT(prg_compare(&c, "prg-neon", n, 1 + n % 8, n % 16, (5 * n + 3) % 16, c0));
        CU_ASSERT(prg_compare(&c, "prg-neon", n, 1 + (n / 8) % 8, (n + 7) % 16, n % 5, c0 ^ n));
    }
    prg_case_free(&c);
}

static void test_prg_large(void)
{
    static const size_t lens[] = {1000, 4099};
    struct prg_case c;

    if (!have_impl(tu_engine(0), MPCE_PRIM_PRG, "prg-neon"))
        return;
    prg_case_new(tu_engine(0), &c);
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (size_t mis = 0; mis < 16; mis++)
            CU_ASSERT(prg_compare(&c, "prg-neon", lens[li], 1 + mis % 8, mis, 15 - mis,
                                  UINT64_MAX - 100 * mis));
    CU_ASSERT(prg_compare(&c, "prg-neon", 65543, 2, 3, 9, UINT64_MAX - 5));
    prg_case_free(&c);
}

/* ---- NTT against ntt-soft ------------------------------------------------ */

static const unsigned prime_bits[] = {30, 40, 50, 59, 60, 61};
#define NBITS (sizeof(prime_bits) / sizeof(prime_bits[0]))

/* The index-th largest prime q < 2^bits with q = 1 mod 2^18 (valid for
 * every N up to 2^17). */
static uint64_t find_prime(unsigned bits, unsigned index)
{
    const uint64_t step = UINT64_C(1) << 18;
    uint64_t q = (((UINT64_C(1) << bits) - 1) / step) * step + 1;
    for (; q > step; q -= step) {
        if (mpce_is_prime64(q) && index-- == 0)
            return q;
    }
    CU_FAIL_FATAL("no prime found");
    return 0;
}

/* Every op of ntt-neon equals ntt-soft on `in` (and on `in` times a
 * shuffled copy of itself for mul), out of place into a buffer 8 bytes off
 * a 64-byte boundary, and in place. */
static int ntt_compare(mpce_ntt *ctx, const uint64_t *in, size_t words, size_t batch,
                       const char *what)
{
    const size_t bytes = words * sizeof(uint64_t), n = mpce_ntt_degree(ctx);
    uint64_t *want = malloc(bytes), *got = tu_alloc_misaligned(bytes, 8), *other = malloc(bytes);
    int ok = 1;

    CU_ASSERT_FATAL(want && got && other);
    for (size_t i = 0; i < words; i++)
        other[i] = in[(i / n) * n + (i * 5 + 3) % n];
    for (int op = 0; op < 3; op++) {
        static const char *const ops[] = {"forward", "inverse", "mul"};
        int good = 1;
        if (op == 0) {
            good &= mpce_ntt_forward(ctx, "ntt-soft", in, want, batch) == MPCE_OK;
            good &= mpce_ntt_forward(ctx, "ntt-neon", in, got, batch) == MPCE_OK;
        } else if (op == 1) {
            good &= mpce_ntt_inverse(ctx, "ntt-soft", in, want, batch) == MPCE_OK;
            good &= mpce_ntt_inverse(ctx, "ntt-neon", in, got, batch) == MPCE_OK;
        } else {
            good &= mpce_ntt_mul(ctx, "ntt-soft", in, other, want, batch) == MPCE_OK;
            good &= mpce_ntt_mul(ctx, "ntt-neon", in, other, got, batch) == MPCE_OK;
        }
        good &= memcmp(want, got, bytes) == 0;
        memcpy(got, in, bytes);
        if (op == 0)
            good &= mpce_ntt_forward(ctx, "ntt-neon", got, got, batch) == MPCE_OK;
        else if (op == 1)
            good &= mpce_ntt_inverse(ctx, "ntt-neon", got, got, batch) == MPCE_OK;
        else
            good &= mpce_ntt_mul(ctx, "ntt-neon", got, other, got, batch) == MPCE_OK;
        good &= memcmp(want, got, bytes) == 0;
        if (!good)
            fprintf(stderr, "  ntt-neon %s (%s, N = %zu, L = %zu, B = %zu) differs from "
                    "ntt-soft: %s\n", ops[op], what, n, mpce_ntt_modulus_count(ctx), batch,
                    mpce_last_error());
        ok &= good;
    }
    free(want);
    free(other);
    tu_free_misaligned(got);
    return ok;
}

static void test_ntt_random(void)
{
    uint64_t seed = 0x5eed;

    if (!have_impl(tu_engine(0), MPCE_PRIM_NTT, "ntt-neon"))
        return;
    for (size_t b = 0; b < NBITS; b++) {
        for (size_t n = 8; n <= 8192; n <<= 1) {
            /* {p0, p1, p0}: the repeat shares tables. */
            const uint64_t q[3] = {find_prime(prime_bits[b], 0), find_prime(prime_bits[b], 1),
                                   find_prime(prime_bits[b], 0)};
            const size_t l = 1 + (n + b) % 3, batch = 1 + (n / 8 + b) % 3;
            mpce_ntt *ctx = NULL;
            CU_ASSERT_FATAL(mpce_ntt_new(tu_engine(0), n, q, l, &ctx) == MPCE_OK);
            uint64_t *in = malloc(batch * l * n * sizeof(uint64_t));
            CU_ASSERT_FATAL(in != NULL);
            for (size_t p = 0; p < batch; p++)
                for (size_t r = 0; r < l; r++)
                    for (size_t i = 0; i < n; i++)
                        in[(p * l + r) * n + i] = tu_splitmix64(&seed) % q[r];
            CU_ASSERT(ntt_compare(ctx, in, batch * l * n, batch, "random"));
            free(in);
            mpce_ntt_free(ctx);
        }
    }
}

/* All q - 1 (the largest lazy values every stage sees), and q - 1 / 0
 * alternating. */
static void test_ntt_extremes(void)
{
    if (!have_impl(tu_engine(0), MPCE_PRIM_NTT, "ntt-neon"))
        return;
    for (size_t b = 0; b < NBITS; b++) {
        for (size_t n = 8; n <= 2048; n <<= 1) {
            const uint64_t q[2] = {find_prime(prime_bits[b], 0), find_prime(prime_bits[b], 1)};
            mpce_ntt *ctx = NULL;
            CU_ASSERT_FATAL(mpce_ntt_new(tu_engine(0), n, q, 2, &ctx) == MPCE_OK);
            uint64_t *in = malloc(2 * n * sizeof(uint64_t));
            CU_ASSERT_FATAL(in != NULL);
            for (int pattern = 0; pattern < 2; pattern++) {
                for (size_t i = 0; i < 2 * n; i++)
                    in[i] = (pattern == 0 || (i & 1)) ? q[i / n] - 1 : 0;
                CU_ASSERT(ntt_compare(ctx, in, 2 * n, 1, pattern ? "q-1/0" : "all q-1"));
            }
            free(in);
            mpce_ntt_free(ctx);
        }
    }
}

/* ---- LPN against lpn-soft ----------------------------------------------- */

static int lpn_compare(mpce_engine *e, const char *impl, unsigned logk, size_t n, uint64_t c0)
{
    const size_t k = (size_t)1 << logk;
    uint8_t seed[16];
    uint8_t *table = malloc(16 * k), *a = malloc(16 * n + 1), *b = malloc(16 * n + 1);
    uint64_t ca = 0, cb = 1;
    mpce_lpn *ctx;
    int ok;

    CU_ASSERT_FATAL(table && a && b);
    tu_splitmix_bytes(logk * 7 + n, seed, 16);
    tu_splitmix_bytes(logk, table, 16 * k);
    tu_splitmix_bytes(n, a, 16 * n);
    memcpy(b, a, 16 * n);
    CU_ASSERT_FATAL(mpce_lpn_new(e, seed, logk, &ctx) == MPCE_OK);
    ok = mpce_lpn_fold(ctx, impl, c0, table, k, a, n, &ca) == MPCE_OK &&
         mpce_lpn_fold(ctx, "lpn-soft", c0, table, k, b, n, &cb) == MPCE_OK && ca == cb &&
         memcmp(a, b, 16 * n) == 0;
    if (!ok)
        fprintf(stderr, "  %s differs from lpn-soft: logk %u, n %zu: %s\n", impl, logk, n,
                mpce_last_error());
    mpce_lpn_free(ctx);
    free(table);
    free(a);
    free(b);
    return ok;
}

static void test_lpn(void)
{
    /* 1 and 3: tails only; the rest straddle the 4-output groups, the
     * 8-block AES interleave and the 256-output chunks. */
    static const size_t ns[] = {1, 2, 3, 5, 7, 9, 31, 33, 65, 127, 257, 1029};

    if (!have_impl(tu_engine(0), MPCE_PRIM_LPN, "lpn-neon"))
        return;
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        CU_ASSERT(lpn_compare(tu_engine(0), "lpn-neon", 1 + (unsigned)(i * 5 % 30 % 19), ns[i],
                              UINT64_MAX - 3 * i));
    /* The production shape: the b13 table (2^19 blocks), one chunk. */
    CU_ASSERT(lpn_compare(tu_engine(0), "lpn-neon", 19, 8192, 12345));
}

/* ---- DPF against dpf-soft ----------------------------------------------- */

static int dpf_compare(mpce_engine *e, const char *impl, unsigned bits, mpce_dpf_group g,
                       uint64_t seed)
{
    enum { NK = 100 };
    const size_t osz = mpce_dpf_output_size(g);
    const uint64_t mask = bits < 64 ? ((uint64_t)1 << bits) - 1 : ~(uint64_t)0;
    const size_t nall = bits <= 14 ? (size_t)1 << bits : 0;
    uint8_t kl[16], kr[16], beta[16], s0[16], s1[16];
    uint8_t *a = malloc(NK * osz + nall * osz + 1), *b = malloc(NK * osz + nall * osz + 1);
    uint64_t xs[NK], st = seed;
    const mpce_dpf_key *keys[NK];
    mpce_dpf_key *k[2] = {NULL, NULL}, *ks[2] = {NULL, NULL};
    mpce_dpf *ctx;
    int ok = 1;

    CU_ASSERT_FATAL(a && b);
    tu_splitmix_bytes(seed, kl, 16);
    tu_splitmix_bytes(seed + 1, kr, 16);
    tu_splitmix_bytes(seed + 2, beta, 16);
    tu_splitmix_bytes(seed + 3, s0, 16);
    tu_splitmix_bytes(seed + 4, s1, 16);
    beta[12] &= 0xfe;
    if (g == MPCE_DPF_U64)
        memset(beta + 8, 0, 8);
    s0[12] &= 0xfe;
    s1[12] &= 0xfe;
    CU_ASSERT_FATAL(mpce_dpf_new(e, bits, g, kl, kr, &ctx) == MPCE_OK);
    uint64_t alpha = tu_splitmix64(&st) & mask;
    ok &= mpce_dpf_gen(ctx, impl, alpha, beta, s0, s1, &k[0], &k[1]) == MPCE_OK;
    ok &= mpce_dpf_gen(ctx, "dpf-soft", alpha, beta, s0, s1, &ks[0], &ks[1]) == MPCE_OK;
    for (int p = 0; p < 2 && ok; p++) {
        uint8_t sa[2048], sb[2048];
        size_t la = 0, lb = 0;
        ok &= mpce_dpf_key_serialize(k[p], sa, sizeof sa, &la) == MPCE_OK;
        ok &= mpce_dpf_key_serialize(ks[p], sb, sizeof sb, &lb) == MPCE_OK;
        ok &= la == lb && memcmp(sa, sb, la) == 0;
    }
    for (size_t j = 0; j < NK; j++) {
        xs[j] = j % 5 == 0 ? alpha : tu_splitmix64(&st) & mask;
        keys[j] = k[(j / 3) & 1];
    }
    for (int p = 0; p < 2 && ok; p++) {
        ok &= mpce_dpf_eval(ctx, impl, k[p], xs, NK, a) == MPCE_OK;
        ok &= mpce_dpf_eval(ctx, "dpf-soft", k[p], xs, NK, b) == MPCE_OK;
        ok &= memcmp(a, b, NK * osz) == 0;
        /* Fewer points than the interleave, and odd counts past it. */
        for (size_t few = 1; few <= 11 && ok; few += 2) {
            ok &= mpce_dpf_eval(ctx, impl, k[p], xs, few, a) == MPCE_OK;
            ok &= mpce_dpf_eval(ctx, "dpf-soft", k[p], xs, few, b) == MPCE_OK;
            ok &= memcmp(a, b, few * osz) == 0;
            ok &= mpce_dpf_eval_keys(ctx, impl, keys, xs, few, a) == MPCE_OK;
            ok &= mpce_dpf_eval_keys(ctx, "dpf-soft", keys, xs, few, b) == MPCE_OK;
            ok &= memcmp(a, b, few * osz) == 0;
        }
        if (nall) {
            ok &= mpce_dpf_evalall(ctx, impl, k[p], a, nall * osz) == MPCE_OK;
            ok &= mpce_dpf_evalall(ctx, "dpf-soft", k[p], b, nall * osz) == MPCE_OK;
            ok &= memcmp(a, b, nall * osz) == 0;
        }
    }
    if (ok) {
        ok &= mpce_dpf_eval_keys(ctx, impl, keys, xs, NK, a) == MPCE_OK;
        ok &= mpce_dpf_eval_keys(ctx, "dpf-soft", keys, xs, NK, b) == MPCE_OK;
        ok &= memcmp(a, b, NK * osz) == 0;
    }
    if (!ok)
        fprintf(stderr, "  %s differs from dpf-soft: bits %u, group %d: %s\n", impl, bits, (int)g,
                mpce_last_error());
    for (int p = 0; p < 2; p++) {
        mpce_dpf_key_free(k[p]);
        mpce_dpf_key_free(ks[p]);
    }
    mpce_dpf_free(ctx);
    free(a);
    free(b);
    return ok;
}

static int dpf_all(mpce_engine *e, const char *impl)
{
    static const unsigned bits[] = {1, 2, 3, 5, 8, 11, 13, 14, 17, 20, 33, 64};
    int ok = 1;

    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
        for (int g = 0; g < 2; g++)
            ok &= dpf_compare(e, impl, bits[i], g ? MPCE_DPF_U64 : MPCE_DPF_BYTES,
                              1000 + 10 * i + (uint64_t)g);
    return ok;
}

static void test_dpf(void)
{
    if (have_impl(tu_engine(0), MPCE_PRIM_DPF, "dpf-neon"))
        CU_ASSERT(dpf_all(tu_engine(0), "dpf-neon"));
}

/* evalall_range is not public API: call it through the engine's own
 * normalized op table of dpf-neon (the suite links the core). */
static void test_dpf_range(void)
{
    mpce_engine *e = tu_engine(0);
    if (!have_impl(e, MPCE_PRIM_DPF, "dpf-neon"))
        return;
    const struct mpce_slot *slot = mpce_registry_find(e, "dpf-neon");
    CU_ASSERT_FATAL(slot != NULL);
    const struct mpce_dpf_ops *vt = &slot->ops.dpf;
    const struct mpce_call *call = &mpce_host_call;
    CU_ASSERT_FATAL(vt->evalall_range != NULL);

    for (unsigned bits = 1; bits <= 15; bits += (bits < 13 ? 3 : 1)) {
        for (unsigned g = 0; g < 2; g++) {
            const size_t n = (size_t)1 << bits, osz = g ? 8 : 16;
            uint8_t kl[16], kr[16], beta[16], s0[16], s1[16];
            struct mpce_dpf_key_v1 k0, k1;
            uint8_t *all = malloc(n * osz), *part = malloc(n * osz + 1);
            void *st;
            uint64_t rs = bits;

            CU_ASSERT_FATAL(all && part);
            tu_splitmix_bytes(bits, kl, 16);
            tu_splitmix_bytes(bits + 1, kr, 16);
            tu_splitmix_bytes(bits + 2, beta, 16);
            tu_splitmix_bytes(bits + 3, s0, 16);
            tu_splitmix_bytes(bits + 4, s1, 16);
            beta[12] &= 0xfe;
            s0[12] &= 0xfe;
            s1[12] &= 0xfe;
            CU_ASSERT_FATAL(vt->ctx_new(slot->module->state, bits, g, kl, kr, &st) == 0);
            CU_ASSERT_FATAL(vt->gen(st, call, tu_splitmix64(&rs) & (n - 1), beta, s0, s1, &k0,
                                    &k1) == 0);
            CU_ASSERT(vt->evalall(st, call, &k1, all) == 0);
            for (int rep = 0; rep < 6; rep++) {
                uint64_t x0 = tu_splitmix64(&rs) % n, x1 = tu_splitmix64(&rs) % (n + 1);
                if (rep == 0)
                    x0 = 0, x1 = n;
                if (x1 < x0) {
                    uint64_t t = x0;
                    x0 = x1;
                    x1 = t;
                }
                memset(part, PATTERN, n * osz + 1);
                CU_ASSERT(vt->evalall_range(st, call, &k1, x0, x1, part) == 0);
                CU_ASSERT(memcmp(part, all + x0 * osz, (x1 - x0) * osz) == 0);
                CU_ASSERT(part[(x1 - x0) * osz] == PATTERN);
            }
            vt->ctx_free(st);
            free(all);
            free(part);
        }
    }
}

/* ---- AES hidden with MPCENGINE_NEON_DISABLE ------------------------------ */

static const mpce_impl_info *find_row(const mpce_impl_info *rows, size_t n, const char *impl)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].impl, impl) == 0)
            return &rows[i];
    return NULL;
}

/* In the child: an engine loading the module with AES masked. Its AES
 * implementations must be skipped with a reason naming AES, ntt-neon must
 * still pass, "auto" must route PRG, LPN and DPF to soft, and those must
 * compute (against soft's named implementations). Returns the failures. */
static int masked_child(void)
{
    static const char *const skip[] = {"prg-neon", "lpn-neon", "dpf-neon"};
    static const struct {
        const char *op, *want;
    } routes[] = {
        {"prg.ecb", "prg-soft-bitslice"}, {"prg.mmo", "prg-soft-bitslice"},
        {"lpn.fold", "lpn-soft"},         {"dpf.eval", "dpf-soft"},
        {"dpf.evalall", "dpf-soft"},
    };
    mpce_options opts = {
        .struct_size = sizeof opts,
        .plugin_path = TEST_PLUGIN_PATH,
        .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_SYSTEM_CONFIG,
    };
    const mpce_impl_info *rows;
    mpce_engine *e;
    size_t n;
    int bad = 0;

    setenv("MPCENGINE_NEON_DISABLE", "aes", 1);
    if (mpce_engine_new(&opts, &e) != MPCE_OK || mpce_list(e, 1, &rows, &n) != MPCE_OK) {
        fprintf(stderr, "  aes masked: %s\n", mpce_last_error());
        return 1;
    }
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++) {
        const mpce_impl_info *r = find_row(rows, n, skip[i]);
        if (r == NULL || strcmp(r->selftest, "skipped") != 0 || strstr(r->reason, "AES") == NULL ||
            strstr(r->reason, "masked:aes") == NULL) {
            fprintf(stderr, "  aes masked: %s not skipped for lacking AES (%s: %s)\n", skip[i],
                    r ? r->selftest : "not listed", r ? r->reason : "");
            bad++;
        } else {
            printf("    (MPCENGINE_NEON_DISABLE=aes) %s: %s\n", skip[i], r->reason);
        }
    }
    const mpce_impl_info *ntt = find_row(rows, n, "ntt-neon");
    if (ntt == NULL || strcmp(ntt->selftest, "pass") != 0) {
        fprintf(stderr, "  aes masked: ntt-neon did not pass (%s)\n", ntt ? ntt->reason : "not listed");
        bad++;
    }
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        const char *got = tu_auto(e, routes[i].op, NULL);
        if (got == NULL || strcmp(got, routes[i].want) != 0) {
            fprintf(stderr, "  aes masked: auto %s runs %s, not %s\n", routes[i].op,
                    got ? got : "nothing", routes[i].want);
            bad++;
        }
    }
    /* "auto" computes what soft computes: the served path works. */
    if (!lpn_compare(e, "auto", 5, 33, 0) || !dpf_compare(e, "auto", 11, MPCE_DPF_U64, 77))
        bad++;
    mpce_engine_free(e);
    return bad;
}

/* This program again, in a fresh process that sets the mask itself. */
static int run_child(void)
{
    int status = 0;
    pid_t pid;
    /* The program's own path, not /proc/self/exe itself: under valgrind
     * or qemu that link names the emulator, while readlink of it is
     * answered with this program's path. */
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len <= 0) {
        printf("\n  cannot read /proc/self/exe: %s\n", strerror(errno));
        return 0;
    }
    self[len] = '\0';
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        char *const argv[] = {"test_neon", "--masked-child", NULL};
        execv(self, argv);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Whether prg-neon passes in an engine made with `flags` while the mask
 * names AES: the variable obeys the engine's environment rules. */
static int prg_neon_unmasked(unsigned flags)
{
    mpce_options opts = {
        .struct_size = sizeof opts,
        .plugin_path = TEST_PLUGIN_PATH,
        .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_SYSTEM_CONFIG | flags,
    };
    mpce_engine *e = NULL;
    const mpce_impl_info *rows;
    size_t n;
    int ok = mpce_engine_new(&opts, &e) == MPCE_OK && mpce_list(e, 1, &rows, &n) == MPCE_OK;
    int pass = 0;
    for (size_t i = 0; ok && i < n; i++)
        pass |= strcmp(rows[i].impl, "prg-neon") == 0 && strcmp(rows[i].selftest, "pass") == 0;
    mpce_engine_free(e);
    return pass;
}

static void test_masked(void)
{
    if (!have_impl(tu_engine(0), MPCE_PRIM_PRG, "prg-neon")) {
        /* Nothing to mask: this core has no AES, and the unmasked listing
         * already is the refusal (tu_impls printed its reason). */
        return;
    }
    /* Ignored where every MPCENGINE_* variable is: with MPCE_OPT_NO_ENV,
     * and in root and setuid processes. (No pool runs yet: the child below
     * may still be forked under qemu-user.) */
    setenv("MPCENGINE_NEON_DISABLE", "aes", 1);
    CU_ASSERT(prg_neon_unmasked(MPCE_OPT_NO_ENV));
    if (geteuid() == 0)
        CU_ASSERT(prg_neon_unmasked(0));
    unsetenv("MPCENGINE_NEON_DISABLE");
    CU_ASSERT(run_child());
}

/* The masked child first: it is forked before any large call has started
 * the engine's pool, since qemu-user cannot fork a multi-threaded guest. */
static const struct tu_test tests[] = {
    {"MPCENGINE_NEON_DISABLE=aes: refusals, soft serves", test_masked},
    {"prg: FIPS-197 C.1", test_prg_fips},
    {"prg: prg-neon vs soft, n = 0..200, m = 1..8, unaligned", test_prg_small},
    {"prg: large n, every misalignment, wrapping counters", test_prg_large},
    {"ntt: random inputs, N 8..2^13, 30..61-bit moduli, L and B 1..3", test_ntt_random},
    {"ntt: extreme inputs", test_ntt_extremes},
    {"lpn: vs lpn-soft incl. the b13 table", test_lpn},
    {"dpf: gen/eval/eval_keys/evalall vs dpf-soft", test_dpf},
    {"dpf: evalall_range slices", test_dpf_range},
    {NULL, NULL},
};

static void test_child(void)
{
    CU_ASSERT(masked_child() == 0);
}

int main(int argc, char **argv)
{
    static const struct tu_test child[] = {{"AES masked", test_child}, {NULL, NULL}};

    if (argc == 2 && strcmp(argv[1], "--masked-child") == 0) {
        /* Root ignores MPCENGINE_* variables: the child that needs one runs
         * as nobody (the build tree stays readable, and root owns it). */
        if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
                               setuid(65534) != 0)) {
            perror("test_neon: dropping root for the masked child");
            return 1;
        }
        return tu_main("neon (child)", child);
    }
    return tu_main("neon", tests);
}
