/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The x86-64 module's PRG, LPN and DPF against the soft backend: every PRG
 * kernel at every length 0..200 and at large lengths with every
 * misalignment; the LPN fold at the production table size; DPF evalall,
 * point and many-key evaluation, and evalall_range slices taken straight
 * from the module's op table. Child processes set MPCENGINE_AESNI_DISABLE
 * (read through the host, which forked children make simple) to check that
 * the module still
 * loads with VAES/AVX-512 hidden, lists those implementations as skipped
 * with the missing feature, and computes correctly with the narrower
 * kernels that LPN and DPF then use.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "vs_soft.h"

#define MAX_IMPLS 16

static const char *const prg_names[] = {"prg-aesni", "prg-aesni-vaes256", "prg-aesni-vaes512"};
#define NPRG (sizeof(prg_names) / sizeof(prg_names[0]))

/* Whether impl passed its self-test in engine e ("skipped:" line if not). */
static int have_impl(mpce_engine *e, mpce_primitive prim, const char *impl)
{
    const char *names[MAX_IMPLS];
    size_t n = tu_impls(e, prim, names, MAX_IMPLS);

    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], impl) == 0)
            return 1;
    printf("\n  skipped: %s is not loaded or cannot run here\n", impl);
    return 0;
}

/* ---- PRG: each kernel against the bitsliced soft AES --------------------- */

static void test_prg_small(void)
{
    struct vs_prg_case c;

    vs_prg_case_new(tu_engine(0), &c);
    for (size_t k = 0; k < NPRG; k++) {
        if (!have_impl(tu_engine(0), MPCE_PRIM_PRG, prg_names[k]))
            continue;
        for (size_t n = 0; n <= 200; n++) {
            /* Counters just below 2^64 wrap inside the longer calls. */
            uint64_t c0 = n % 3 == 0 ? UINT64_MAX - n / 2 : n * 0x9e3779b97f4a7c15ull;
            CU_ASSERT(vs_prg_compare(&c, prg_names[k], n, 1 + n % 8, n % 16, (5 * n + 3) % 16, c0));
        }
    }
    vs_prg_case_free(&c);
}

static void test_prg_large(void)
{
    static const size_t lens[] = {1000, 4099, 65543};
    struct vs_prg_case c;

    vs_prg_case_new(tu_engine(0), &c);
    for (size_t k = 0; k < NPRG; k++) {
        if (!have_impl(tu_engine(0), MPCE_PRIM_PRG, prg_names[k]))
            continue;
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
            for (size_t mis = 0; mis < 16; mis++)
                CU_ASSERT(vs_prg_compare(&c, prg_names[k], lens[li], mis % 4 == 3 ? 3 : 2, mis,
                                         15 - mis, UINT64_MAX - 100 * mis));
    }
    vs_prg_case_free(&c);
}

/* ---- LPN against lpn-soft ----------------------------------------------- */

static void test_lpn(void)
{
    static const size_t ns[] = {1, 2, 5, 7, 9, 31, 33, 65, 127, 257, 8192, 8195};

    if (!have_impl(tu_engine(0), MPCE_PRIM_LPN, "lpn-aesni"))
        return;
    CU_ASSERT(vs_lpn_all(tu_engine(0), "lpn-aesni", ns, sizeof ns / sizeof ns[0]));
}

/* ---- DPF against dpf-soft ----------------------------------------------- */

/* 300 points; evalall up to 2^16; the short calls 1..3 walk one point at a
 * time. */
static const struct vs_dpf_shape dpf_shape = {300, 16, 3, 1};

static int dpf_all(mpce_engine *e)
{
    static const unsigned bits[] = {1, 2, 3, 5, 8, 11, 12, 13, 14, 16, 17, 20, 33, 64};

    return vs_dpf_all(e, "dpf-aesni", bits, sizeof bits / sizeof bits[0], &dpf_shape);
}

static void test_dpf(void)
{
    if (have_impl(tu_engine(0), MPCE_PRIM_DPF, "dpf-aesni"))
        CU_ASSERT(dpf_all(tu_engine(0)));
}

static void test_dpf_range(void)
{
    if (have_impl(tu_engine(0), MPCE_PRIM_DPF, "dpf-aesni"))
        vs_dpf_range(tu_engine(0), "dpf-aesni", 18);
}

/* ---- features hidden with MPCENGINE_AESNI_DISABLE ------------------------ */

/* In a child: an engine loading the module with `disable` set; the named
 * implementations must pass or be skipped with a reason naming `feature`.
 * Then LPN and DPF (now on the narrower kernels) against soft. Returns the
 * number of failures. */
static char child_log[2048];

static void log_to_buffer(void *arg, mpce_log_level level, const char *plugin,
                          const char *message)
{
    (void)arg;
    (void)level;
    size_t used = strlen(child_log);
    snprintf(child_log + used, sizeof(child_log) - used, "%s: %s\n", plugin ? plugin : "-",
             message);
}

/* warn: a text the engine's log must hold (NULL: none asked for). */
static int masked_child(const char *disable, const char *const *pass, size_t npass,
                        const char *const *skip, size_t nskip, const char *feature,
                        const char *warn)
{
    mpce_options opts = {
        .struct_size = sizeof opts,
        .plugin_path = TEST_PLUGIN_PATH,
        .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_SYSTEM_CONFIG,
        .log = log_to_buffer,
        .log_level = MPCE_LOG_WARNING,
    };
    const mpce_impl_info *rows;
    mpce_engine *e;
    size_t n;
    int bad = 0;

    setenv("MPCENGINE_AESNI_DISABLE", disable, 1);
    if (mpce_engine_new(&opts, &e) != MPCE_OK || mpce_list(e, 1, &rows, &n) != MPCE_OK) {
        fprintf(stderr, "  %s: %s\n", disable, mpce_last_error());
        return 1;
    }
    for (size_t i = 0; i < npass; i++) {
        const mpce_impl_info *r = vs_find_row(rows, n, pass[i]);
        if (r == NULL || strcmp(r->selftest, "pass") != 0) {
            fprintf(stderr, "  %s: %s did not pass (%s)\n", disable, pass[i],
                    r ? r->reason : "not listed");
            bad++;
        }
    }
    for (size_t i = 0; i < nskip; i++) {
        const mpce_impl_info *r = vs_find_row(rows, n, skip[i]);
        /* Masked where the CPU has the feature, lacking where it does
         * not: either way the reason says which. */
        if (r == NULL || strcmp(r->selftest, "skipped") != 0 || strstr(r->reason, feature) == NULL ||
            (strstr(r->reason, "masked by MPCENGINE_AESNI_DISABLE (") == NULL &&
             strstr(r->reason, "this CPU lacks") == NULL)) {
            fprintf(stderr, "  %s: %s not skipped for lacking %s (%s: %s)\n", disable, skip[i],
                    feature, r ? r->selftest : "not listed", r ? r->reason : "");
            bad++;
        } else {
            printf("    (%s) %s: %s\n", disable, skip[i], r->reason);
        }
    }
    if (warn && !strstr(child_log, warn)) {
        fprintf(stderr, "  %s: no warning '%s' in the log:\n%s", disable, warn, child_log);
        bad++;
    }
    if (!vs_lpn_compare(e, "lpn-aesni", 19, 8195, 7) ||
        !vs_lpn_compare(e, "lpn-aesni", 5, 33, 0))
        bad++;
    if (!dpf_all(e))
        bad++;
    mpce_engine_free(e);
    return bad;
}

/* The cases, by index for the re-executed child. */
static int masked_case(int which)
{
    static const char *const base[] = {"prg-aesni", "lpn-aesni", "dpf-aesni"};
    static const char *const no_vaes[] = {"prg-aesni-vaes256", "prg-aesni-vaes512"};
    static const char *const ymm_ok[] = {"prg-aesni", "prg-aesni-vaes256", "lpn-aesni",
                                         "dpf-aesni"};
    static const char *const no_zmm[] = {"prg-aesni-vaes512"};

    /* AES-NI only: DPF and LPN run on the xmm kernels. Names in any case,
     * spaces around them ignored; an unknown one ignored, with a warning. */
    if (which == 0)
        return masked_child(" VAES, avx512 ,bogus", base, 3, no_vaes, 2, "VAES",
                            "MPCENGINE_AESNI_DISABLE: unknown feature 'bogus' ignored (it "
                            "takes: aes, ");
    /* No AVX-512: the ymm kernels. */
    return masked_child("avx512", ymm_ok, 4, no_zmm, 1, "AVX-512", NULL);
}

static int run_child(int which)
{
    char arg[16];
    char *const argv[] = {"test_aesni", "--masked-child", arg, NULL};

    snprintf(arg, sizeof arg, "%d", which);
    return vs_rerun_self(argv);
}

/* Whether prg-aesni-vaes512 is usable in an engine made with `flags` while
 * the mask names VAES: the variable obeys the engine's environment rules. */
static int vaes512_unmasked(unsigned flags)
{
    return vs_impl_passes(TEST_PLUGIN_PATH, flags, "prg-aesni-vaes512");
}

static void test_masked(void)
{
    if (!__builtin_cpu_supports("aes")) {
        printf("\n  skipped: this CPU lacks AES-NI; the aesni module does not load here\n");
        return;
    }
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("vaes")) {
        /* Ignored where every MPCENGINE_* variable is: with MPCE_OPT_NO_ENV,
         * and in root and setuid processes. */
        setenv("MPCENGINE_AESNI_DISABLE", "vaes", 1);
        CU_ASSERT(vaes512_unmasked(MPCE_OPT_NO_ENV));
        if (geteuid() == 0)
            CU_ASSERT(vaes512_unmasked(0));
        unsetenv("MPCENGINE_AESNI_DISABLE");
    }
    CU_ASSERT(run_child(0));
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("vaes"))
        printf("\n  skipped: this CPU lacks VAES/AVX2; the ymm kernels were not run\n");
    else
        CU_ASSERT(run_child(1));
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("vaes"))
        printf("\n  skipped: this CPU lacks VAES with AVX-512F/BW; the zmm kernels were not "
               "run\n");
}

static const struct tu_test tests[] = {
    {"prg: every kernel vs soft, n = 0..200", test_prg_small},
    {"prg: large n, every misalignment", test_prg_large},
    {"lpn: vs lpn-soft incl. the b13 table", test_lpn},
    {"dpf: gen/eval/eval_keys/evalall vs dpf-soft", test_dpf},
    {"MPCENGINE_AESNI_DISABLE: refusals and narrower kernels", test_masked},
    {"dpf: evalall_range slices", test_dpf_range},
    {NULL, NULL},
};

static int child_which;

static void test_child(void)
{
    CU_ASSERT(masked_case(child_which) == 0);
}

int main(int argc, char **argv)
{
    static const struct tu_test child[] = {{"masked features", test_child}, {NULL, NULL}};

    if (argc == 3 && strcmp(argv[1], "--masked-child") == 0) {
        child_which = atoi(argv[2]);
        if (vs_child_drop_root("test_aesni") != 0)
            return 1;
        return tu_main("aesni (child)", child);
    }
    return tu_main("aesni", tests);
}
