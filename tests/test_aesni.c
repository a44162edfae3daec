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

#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/runtime/exec.h"
#include "mpcengine/plugin.h"
#include "testutil.h"

#define MAX_IMPLS 16
#define PATTERN 0xA5
#define REF_PRG "prg-soft-bitslice"

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

struct prg_case {
    mpce_prg *ctx[8]; /* ctx[m-1] holds m keys */
};

static void prg_case_new(struct prg_case *c)
{
    uint8_t keys[8 * 16];

    tu_splitmix_bytes(4242, keys, sizeof keys);
    for (size_t m = 1; m <= 8; m++)
        CU_ASSERT_FATAL(mpce_prg_new(tu_engine(0), keys, m, &c->ctx[m - 1]) == MPCE_OK);
}

static void prg_case_free(struct prg_case *c)
{
    for (size_t m = 0; m < 8; m++)
        mpce_prg_free(c->ctx[m]);
}

/* ecb (out of place and in place), ctr and mmo of n blocks, against the
 * reference implementation, with the given misalignments. */
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

static void test_prg_small(void)
{
    struct prg_case c;

    prg_case_new(&c);
    for (size_t k = 0; k < NPRG; k++) {
        if (!have_impl(tu_engine(0), MPCE_PRIM_PRG, prg_names[k]))
            continue;
        for (size_t n = 0; n <= 200; n++) {
            /* Counters just below 2^64 wrap inside the longer calls. */
            uint64_t c0 = n % 3 == 0 ? UINT64_MAX - n / 2 : n * 0x9e3779b97f4a7c15ull;
            CU_ASSERT(prg_compare(&c, prg_names[k], n, 1 + n % 8, n % 16, (5 * n + 3) % 16, c0));
        }
    }
    prg_case_free(&c);
}

static void test_prg_large(void)
{
    static const size_t lens[] = {1000, 4099, 65543};
    struct prg_case c;

    prg_case_new(&c);
    for (size_t k = 0; k < NPRG; k++) {
        if (!have_impl(tu_engine(0), MPCE_PRIM_PRG, prg_names[k]))
            continue;
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
            for (size_t mis = 0; mis < 16; mis++)
                CU_ASSERT(prg_compare(&c, prg_names[k], lens[li], mis % 4 == 3 ? 3 : 2, mis,
                                      15 - mis, UINT64_MAX - 100 * mis));
    }
    prg_case_free(&c);
}

/* ---- LPN against lpn-soft ----------------------------------------------- */

/* The fold of n outputs over a 2^logk table by impl and by lpn-soft. */
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
    static const size_t ns[] = {1, 2, 5, 7, 9, 31, 33, 65, 127, 257, 8192, 8195};

    if (!have_impl(tu_engine(0), MPCE_PRIM_LPN, "lpn-aesni"))
        return;
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        CU_ASSERT(lpn_compare(tu_engine(0), "lpn-aesni", 1 + (unsigned)(i * 5 % 30 % 19), ns[i],
                              UINT64_MAX - 3 * i));
    /* The production shape: the b13 table (2^19 blocks). */
    CU_ASSERT(lpn_compare(tu_engine(0), "lpn-aesni", 19, 8192, 12345));
}

/* ---- DPF against dpf-soft ----------------------------------------------- */

static int dpf_compare(mpce_engine *e, const char *impl, unsigned bits, mpce_dpf_group g,
                       uint64_t seed)
{
    enum { NK = 300 };
    const size_t osz = mpce_dpf_output_size(g);
    const uint64_t mask = bits < 64 ? ((uint64_t)1 << bits) - 1 : ~(uint64_t)0;
    const size_t nall = bits <= 16 ? (size_t)1 << bits : 0;
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
        /* One and two points and keys walk one point at a time. */
        for (size_t few = 1; few <= 3 && ok; few++) {
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

static int dpf_all(mpce_engine *e)
{
    static const unsigned bits[] = {1, 2, 3, 5, 8, 11, 12, 13, 14, 16, 17, 20, 33, 64};
    int ok = 1;

    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
        for (int g = 0; g < 2; g++)
            ok &= dpf_compare(e, "dpf-aesni", bits[i], g ? MPCE_DPF_U64 : MPCE_DPF_BYTES,
                              1000 + 10 * i + (uint64_t)g);
    return ok;
}

static void test_dpf(void)
{
    if (have_impl(tu_engine(0), MPCE_PRIM_DPF, "dpf-aesni"))
        CU_ASSERT(dpf_all(tu_engine(0)));
}

/* evalall_range is not public API: call it through the engine's own
 * normalized op table of dpf-aesni (the suite links the core). */
static void test_dpf_range(void)
{
    mpce_engine *e = tu_engine(0);
    if (!have_impl(e, MPCE_PRIM_DPF, "dpf-aesni"))
        return;
    const struct mpce_slot *slot = mpce_registry_find(e, "dpf-aesni");
    CU_ASSERT_FATAL(slot != NULL);
    const struct mpce_dpf_ops *vt = &slot->ops.dpf;
    const struct mpce_call *call = &mpce_host_call;
    CU_ASSERT_FATAL(vt->evalall_range != NULL);

    for (unsigned bits = 1; bits <= 18; bits += (bits < 13 ? 3 : 1)) {
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
            /* Slices at odd boundaries, including ones inside a forest. */
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

/* ---- features hidden with MPCENGINE_AESNI_DISABLE ------------------------ */

static const mpce_impl_info *find_row(const mpce_impl_info *rows, size_t n, const char *impl)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].impl, impl) == 0)
            return &rows[i];
    return NULL;
}

/* In a child: an engine loading the module with `disable` set; the named
 * implementations must pass or be skipped with a reason naming `feature`.
 * Then LPN and DPF (now on the narrower kernels) against soft. Returns the
 * number of failures. */
static int masked_child(const char *disable, const char *const *pass, size_t npass,
                        const char *const *skip, size_t nskip, const char *feature)
{
    mpce_options opts = {
        .struct_size = sizeof opts,
        .plugin_path = TEST_PLUGIN_PATH,
        .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_SYSTEM_CONFIG,
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
        const mpce_impl_info *r = find_row(rows, n, pass[i]);
        if (r == NULL || strcmp(r->selftest, "pass") != 0) {
            fprintf(stderr, "  %s: %s did not pass (%s)\n", disable, pass[i],
                    r ? r->reason : "not listed");
            bad++;
        }
    }
    for (size_t i = 0; i < nskip; i++) {
        const mpce_impl_info *r = find_row(rows, n, skip[i]);
        if (r == NULL || strcmp(r->selftest, "skipped") != 0 || strstr(r->reason, feature) == NULL) {
            fprintf(stderr, "  %s: %s not skipped for lacking %s (%s: %s)\n", disable, skip[i],
                    feature, r ? r->selftest : "not listed", r ? r->reason : "");
            bad++;
        } else {
            printf("    (%s) %s: %s\n", disable, skip[i], r->reason);
        }
    }
    if (!lpn_compare(e, "lpn-aesni", 19, 8195, 7) || !lpn_compare(e, "lpn-aesni", 5, 33, 0))
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

    if (which == 0) /* AES-NI only: DPF and LPN run on the xmm kernels. */
        return masked_child("vaes,avx512", base, 3, no_vaes, 2, "VAES");
    /* No AVX-512: the ymm kernels. */
    return masked_child("avx512", ymm_ok, 4, no_zmm, 1, "AVX-512");
}

/* This program again, in a fresh process that sets the mask itself. */
static int run_child(int which)
{
    char arg[16];
    int status = 0;
    pid_t pid;

    snprintf(arg, sizeof arg, "%d", which);
    /* The program's own path, not /proc/self/exe itself: under valgrind
     * that link names valgrind's tool, which refuses to run as a program,
     * while readlink of it is answered with this program's path. */
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
        char *const argv[] = {"test_aesni", "--masked-child", arg, NULL};
        execv(self, argv);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Whether prg-aesni-vaes512 is usable in an engine made with `flags` while
 * the mask names VAES: the variable obeys the engine's environment rules. */
static int vaes512_unmasked(unsigned flags)
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
    const mpce_impl_info *r = ok ? find_row(rows, n, "prg-aesni-vaes512") : NULL;
    ok = r != NULL && strcmp(r->selftest, "pass") == 0;
    mpce_engine_free(e);
    return ok;
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
        /* Root ignores MPCENGINE_* variables: the child that needs one runs
         * as nobody (the build tree stays readable, and root owns it). */
        if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
                               setuid(65534) != 0)) {
            perror("test_aesni: dropping root for the masked child");
            return 1;
        }
        return tu_main("aesni (child)", child);
    }
    return tu_main("aesni", tests);
}
