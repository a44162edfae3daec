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

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "vs_soft.h"

/* How many tests compared something, and how many compared nothing
 * because what they test is not usable on this core. */
static unsigned n_compared, n_skipped;

/* Whether impl passed its self-test in engine e. The module is built with
 * this test, so an implementation that is not listed or whose self-test
 * failed is a failure; one skipped for a feature this core lacks is a
 * visible skip: CUnit has no skip, so the test prints a "skipped:" line
 * naming the reason, and is counted, so that a run which compared nothing
 * at all exits 77 (automake's SKIP) rather than passing. */
static int have_impl(mpce_engine *e, const char *impl)
{
    const mpce_impl_info *rows;
    size_t n;

    CU_ASSERT_FATAL(mpce_list(e, 1, &rows, &n) == MPCE_OK);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].impl, impl) != 0)
            continue;
        if (strcmp(rows[i].selftest, "pass") == 0) {
            n_compared++;
            return 1;
        }
        if (strcmp(rows[i].selftest, "skipped") == 0) {
            /* The engine's reason starts "not usable here: ". */
            printf("\n  skipped: %s %s\n", impl, rows[i].reason);
            n_skipped++;
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

/* The FIPS-197 C.1 vector, so that agreeing with soft is also agreeing
 * with the standard. */
static void test_prg_fips(void)
{
    if (have_impl(tu_engine(0), "prg-neon"))
        CU_ASSERT(tu_ecb_fips_c1(tu_engine(0), "prg-neon") == MPCE_OK);
}

static void test_prg_small(void)
{
    struct vs_prg_case c;

    if (!have_impl(tu_engine(0), "prg-neon"))
        return;
    vs_prg_case_new(tu_engine(0), &c);
    for (size_t n = 0; n <= 200; n++) {
        /* Counters just below 2^64 wrap inside the longer calls; every m
         * from 1 to 8 meets every residue of n mod the interleave. */
        uint64_t c0 = n % 3 == 0 ? UINT64_MAX - n / 2 : n * 0x9e3779b97f4a7c15ull;
        CU_ASSERT(vs_prg_compare(&c, "prg-neon", n, 1 + n % 8, n % 16, (5 * n + 3) % 16, c0));
        CU_ASSERT(
            vs_prg_compare(&c, "prg-neon", n, 1 + (n / 8) % 8, (n + 7) % 16, n % 5, c0 ^ n));
    }
    vs_prg_case_free(&c);
}

static void test_prg_large(void)
{
    static const size_t lens[] = {1000, 4099};
    struct vs_prg_case c;

    if (!have_impl(tu_engine(0), "prg-neon"))
        return;
    vs_prg_case_new(tu_engine(0), &c);
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (size_t mis = 0; mis < 16; mis++)
            CU_ASSERT(vs_prg_compare(&c, "prg-neon", lens[li], 1 + mis % 8, mis, 15 - mis,
                                     UINT64_MAX - 100 * mis));
    CU_ASSERT(vs_prg_compare(&c, "prg-neon", 65543, 2, 3, 9, UINT64_MAX - 5));
    vs_prg_case_free(&c);
}

/* ---- NTT against ntt-soft ------------------------------------------------ */

static const unsigned prime_bits[] = {30, 40, 50, 59, 60, 61};
#define NBITS (sizeof(prime_bits) / sizeof(prime_bits[0]))

static void test_ntt_random(void)
{
    uint64_t seed = 0x5eed;

    if (!have_impl(tu_engine(0), "ntt-neon"))
        return;
    for (size_t b = 0; b < NBITS; b++) {
        for (size_t n = 8; n <= 8192; n <<= 1) {
            /* {p0, p1, p0}: the repeat shares tables. */
            const uint64_t q[3] = {vs_find_prime(prime_bits[b], 0),
                                   vs_find_prime(prime_bits[b], 1),
                                   vs_find_prime(prime_bits[b], 0)};
            const size_t l = 1 + (n + b) % 3, batch = 1 + (n / 8 + b) % 3;
            mpce_ntt *ctx = NULL;
            CU_ASSERT_FATAL(mpce_ntt_new(tu_engine(0), n, q, l, &ctx) == MPCE_OK);
            uint64_t *in = malloc(batch * l * n * sizeof(uint64_t));
            CU_ASSERT_FATAL(in != NULL);
            for (size_t p = 0; p < batch; p++)
                for (size_t r = 0; r < l; r++)
                    for (size_t i = 0; i < n; i++)
                        in[(p * l + r) * n + i] = tu_splitmix64(&seed) % q[r];
            CU_ASSERT(vs_ntt_compare(ctx, "ntt-neon", in, batch * l * n, batch, "random"));
            free(in);
            mpce_ntt_free(ctx);
        }
    }
}

/* All q - 1 (the largest lazy values every stage sees), and q - 1 / 0
 * alternating. */
static void test_ntt_extremes(void)
{
    if (!have_impl(tu_engine(0), "ntt-neon"))
        return;
    for (size_t b = 0; b < NBITS; b++) {
        for (size_t n = 8; n <= 2048; n <<= 1) {
            const uint64_t q[2] = {vs_find_prime(prime_bits[b], 0),
                                   vs_find_prime(prime_bits[b], 1)};
            mpce_ntt *ctx = NULL;
            CU_ASSERT_FATAL(mpce_ntt_new(tu_engine(0), n, q, 2, &ctx) == MPCE_OK);
            uint64_t *in = malloc(2 * n * sizeof(uint64_t));
            CU_ASSERT_FATAL(in != NULL);
            for (int pattern = 0; pattern < 2; pattern++) {
                for (size_t i = 0; i < 2 * n; i++)
                    in[i] = (pattern == 0 || (i & 1)) ? q[i / n] - 1 : 0;
                CU_ASSERT(vs_ntt_compare(ctx, "ntt-neon", in, 2 * n, 1,
                                         pattern ? "q-1/0" : "all q-1"));
            }
            free(in);
            mpce_ntt_free(ctx);
        }
    }
}

/* ---- LPN against lpn-soft ----------------------------------------------- */

static void test_lpn(void)
{
    /* 1 and 3: tails only; the rest straddle the 4-output groups, the
     * 8-block AES interleave and the 256-output chunks. */
    static const size_t ns[] = {1, 2, 3, 5, 7, 9, 31, 33, 65, 127, 257, 1029};

    if (!have_impl(tu_engine(0), "lpn-neon"))
        return;
    CU_ASSERT(vs_lpn_all(tu_engine(0), "lpn-neon", ns, sizeof ns / sizeof ns[0]));
}

/* ---- DPF against dpf-soft ----------------------------------------------- */

/* Sized for emulation: 100 points, evalall up to 2^14; the short calls
 * 1, 3, .., 11 fall below and straddle the 8-block interleave. */
static const struct vs_dpf_shape dpf_shape = {100, 14, 11, 2};

static int dpf_all(mpce_engine *e, const char *impl)
{
    static const unsigned bits[] = {1, 2, 3, 5, 8, 11, 13, 14, 17, 20, 33, 64};

    return vs_dpf_all(e, impl, bits, sizeof bits / sizeof bits[0], &dpf_shape);
}

static void test_dpf(void)
{
    if (have_impl(tu_engine(0), "dpf-neon"))
        CU_ASSERT(dpf_all(tu_engine(0), "dpf-neon"));
}

static void test_dpf_range(void)
{
    if (have_impl(tu_engine(0), "dpf-neon"))
        vs_dpf_range(tu_engine(0), "dpf-neon", 15);
}

/* ---- AES hidden with MPCENGINE_NEON_DISABLE ------------------------------ */

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
        const mpce_impl_info *r = vs_find_row(rows, n, skip[i]);
        /* The core has AES (prg-neon passed unmasked): the reason says
         * the mask, not the CPU, took it away. */
        if (r == NULL || strcmp(r->selftest, "skipped") != 0 || strstr(r->reason, "AES") == NULL ||
            strstr(r->reason, "masked by MPCENGINE_NEON_DISABLE (aes") == NULL ||
            strstr(r->reason, "lacks") != NULL) {
            fprintf(stderr, "  aes masked: %s not skipped for masked AES (%s: %s)\n", skip[i],
                    r ? r->selftest : "not listed", r ? r->reason : "");
            bad++;
        } else {
            printf("    (MPCENGINE_NEON_DISABLE=aes) %s: %s\n", skip[i], r->reason);
        }
    }
    const mpce_impl_info *ntt = vs_find_row(rows, n, "ntt-neon");
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
    if (!vs_lpn_compare(e, "auto", 5, 33, 0) ||
        !vs_dpf_compare(e, "auto", 11, MPCE_DPF_U64, 77, &dpf_shape))
        bad++;
    mpce_engine_free(e);
    return bad;
}

static int run_child(void)
{
    char *const argv[] = {"test_neon", "--masked-child", NULL};

    return vs_rerun_self(argv);
}

/* Whether prg-neon passes in an engine made with `flags` while the mask
 * names AES: the variable obeys the engine's environment rules. */
static int prg_neon_unmasked(unsigned flags)
{
    return vs_impl_passes(TEST_PLUGIN_PATH, flags, "prg-neon");
}

static void test_masked(void)
{
    if (!have_impl(tu_engine(0), "prg-neon")) {
        /* Nothing to mask: this core has no AES, and have_impl printed
         * the refusal as a skip. */
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
        if (vs_child_drop_root("test_neon") != 0)
            return 1;
        return tu_main("neon (child)", child);
    }
    int rc = tu_main("neon", tests);
    if (n_skipped)
        printf("skipped: %u of %u neon tests compared nothing (not usable on this core)\n",
               n_skipped, n_skipped + n_compared);
    if (rc == 0 && n_compared == 0) {
        printf("skipped: no neon implementation is usable here; nothing was compared\n");
        return 77;
    }
    return rc;
}
