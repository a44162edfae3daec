/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The module loader: every broken test module (tests/modules/mod_variant.c)
 * is refused with a one-line reason that names the problem, or accepted and
 * working where the ABI says so; unsafe files and directories are refused;
 * the loaded bytes are the checked bytes; and the engine keeps computing
 * correctly whatever it was given.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "engine/runtime/module_file.h"
#include "mpcengine/plugin.h"
#include "tests/testutil.h"

#ifndef TEST_MODULE_DIR
#error "TEST_MODULE_DIR must name the directory of the built test modules"
#endif

#define ALL_MODULES                                                                    \
    "good", "wrong", "noentry", "abimajor", "newminor", "short", "dupname", "probe",        \
        "implprobe", "nullop", "notiming", "bothtiming", "unknownflag", "priohigh",        \
        "badclass", "nohost", "oldminor", "declineall", "badprim", "baddevice", "onekey",       \
        "refusem4"

static const unsigned private_flags =
    MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV | MPCE_OPT_NO_SYSTEM_CONFIG;

/* ---- helpers -------------------------------------------------------------- */

static char *make_dir(void)
{
    return tu_temp_dir();
}

/* Copy TEST_MODULE_DIR/mod_NAME.so into dir with mode 0755. */
static void copy_module(const char *dir, const char *name)
{
    char src[4096];
    snprintf(src, sizeof(src), "%s/mod_%s.so", TEST_MODULE_DIR, name);
    free(tu_copy_into(src, dir, 0755));
}

static void remove_dir(char *dir)
{
    tu_remove_dir(dir);
}

static mpce_engine *engine_with(const char *dir, const char *config_text)
{
    char *conf = config_text ? tu_write_temp(config_text) : NULL;
    mpce_options opts = {
        .struct_size = sizeof(opts),
        .config_path = conf,
        .plugin_path = dir,
        .flags = private_flags,
    };
    mpce_engine *e = NULL;
    mpce_status st = mpce_engine_new(&opts, &e);
    if (st != MPCE_OK)
        fprintf(stderr, "  mpce_engine_new: %s\n", mpce_last_error());
    if (conf) {
        unlink(conf);
        free(conf);
    }
    CU_ASSERT_FATAL(st == MPCE_OK);
    return e;
}

/* The row of a module skipped as a whole (impl "") or of an implementation. */
static const mpce_impl_info *find_row(mpce_engine *e, int run, const char *module,
                                      const char *impl)
{
    const mpce_impl_info *rows;
    size_t n;
    CU_ASSERT_FATAL(mpce_list(e, run, &rows, &n) == MPCE_OK);
    char suffix[64];
    snprintf(suffix, sizeof(suffix), "/mod_%s.so", module);
    for (size_t i = 0; i < n; i++) {
        size_t pl = strlen(rows[i].path), sl = strlen(suffix);
        if (pl >= sl && strcmp(rows[i].path + pl - sl, suffix) == 0 &&
            strcmp(rows[i].impl, impl ? impl : "") == 0)
            return &rows[i];
    }
    return NULL;
}

/* A reason is one line that says what is wrong. */
static void expect_reason(const char *what, const char *reason, const char *needle)
{
    if (!strstr(reason, needle)) {
        fprintf(stderr, "  reason for %s: %s (wanted '%s')\n", what, reason, needle);
        CU_FAIL("skip reason does not name the problem");
    }
    CU_ASSERT_PTR_NULL(strchr(reason, '\n'));
    printf("\n  refused: %s: %s", what, reason);
}

/* The self-tested row of module's impl: its state, and (reason non-NULL)
 * the text its reason must hold. */
static void expect_row(mpce_engine *e, const char *module, const char *impl,
                       const char *selftest, const char *reason)
{
    const mpce_impl_info *row = find_row(e, 1, module, impl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->selftest, selftest);
    if (reason)
        expect_reason(impl, row->reason, reason);
}

static void expect_skipped(mpce_engine *e, const char *module, const char *needle)
{
    const mpce_impl_info *row = find_row(e, 0, module, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->selftest, "skipped");
    CU_ASSERT_STRING_EQUAL(row->primitive, "");
    expect_reason(module, row->reason, needle);
}

/* The module loaded, but its one implementation was refused. */
static void expect_impl_skipped(mpce_engine *e, const char *module, const char *impl,
                                const char *needle)
{
    const mpce_impl_info *row = find_row(e, 1, module, impl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->selftest, "skipped");
    expect_reason(impl, row->reason, needle);
    TU_ASSERT_ERROR(tu_ecb_fips_c1(e, impl), MPCE_ERR_NOIMPL, impl);
}

/* FIPS-197 C.1 through "auto" (and through impl if given). */
/* Independent of the engine's own fingerprinting: OpenSSL's one-shot SHA256. */
static int file_sha256_hex(const char *path, char hex[65])
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    unsigned char *buf = malloc(1 << 24);
    size_t len = buf ? fread(buf, 1, 1 << 24, f) : 0;
    fclose(f);
    if (!buf)
        return -1;
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256(buf, len, md);
    free(buf);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return 0;
}

static void expect_computes(mpce_engine *e)
{
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(e, NULL), MPCE_OK);
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(e, "prg-soft-bitslice"), MPCE_OK);
}

/* One broken module alone in a fresh directory; impl NULL: refused as a
 * whole, else that implementation refused. */
static void run_single_impl(const char *module, const char *impl, const char *needle)
{
    char *dir = make_dir();
    copy_module(dir, module);
    mpce_engine *e = engine_with(dir, NULL);
    if (impl)
        expect_impl_skipped(e, module, impl, needle);
    else
        expect_skipped(e, module, needle);
    expect_computes(e);
    /* "auto" never reaches a refused implementation, for any op or size. */
    static const char *const ops[] = {"prg.ecb", "prg.mmo", "prg.ctr"};
    static const char *const sizes[] = {"tiny", "small", "medium", "large"};
    for (int o = 0; o < 3; o++)
        for (int z = 0; z < 4; z++)
            CU_ASSERT_STRING_EQUAL(tu_auto(e, ops[o], sizes[z]), "prg-soft-bitslice");
    mpce_engine_free(e);
    remove_dir(dir);
}

static void run_single(const char *module, const char *needle)
{
    run_single_impl(module, NULL, needle);
}

/* ---- one test per way of being broken --------------------------------------- */

static void test_no_entry(void)
{
    run_single("noentry", "no entry symbol mpce_plugin_entry_v2");
}

static void test_abi_major(void)
{
    run_single("abimajor", "built for plugin ABI 3.");
}

static void test_abi_minor(void)
{
    char want[96];
    snprintf(want, sizeof(want), "newer than this engine's 2.%u: upgrade libmpcengine",
             (unsigned)MPCE_PLUGIN_ABI_MINOR);
    run_single("newminor", want);
}

static void test_short_struct(void)
{
    run_single("short", "descriptor struct_size");
}

/* The classes the issue found accepted: each is now refused, per
 * implementation, with the host alive and the rest of the engine working. */
static void test_null_op(void)
{
    run_single_impl("nullop", "prg-test-nullop", "required op prg.ctx_free is NULL");
    /* The crash that used to follow: a context used with it, then freed. */
    char *dir = make_dir();
    copy_module(dir, "nullop");
    mpce_engine *e = engine_with(dir, NULL);
    static const uint8_t key[16], in[16];
    uint8_t out[16];
    mpce_prg *ctx;
    CU_ASSERT_FATAL(mpce_prg_new(e, key, 1, &ctx) == MPCE_OK);
    TU_ASSERT_ERROR(mpce_prg_ecb(ctx, "prg-test-nullop", 0, in, out, 1), MPCE_ERR_NOIMPL,
                    "skipped");
    CU_ASSERT_EQUAL(mpce_prg_ecb(ctx, NULL, 0, in, out, 1), MPCE_OK);
    mpce_prg_free(ctx);
    mpce_engine_free(e);
    remove_dir(dir);
}

static void test_timing_flags(void)
{
    /* flags = 0 at priority INT_MAX: refused, so the constant-time policy
     * cannot fail open, whatever allow_variable_time says. */
    run_single_impl("notiming", "prg-test-notiming", "neither");
    run_single_impl("bothtiming", "prg-test-bothtiming", "both");
    run_single_impl("unknownflag", "prg-test-unknownflag", "unknown bits 0x80000000");
    char *dir = make_dir();
    copy_module(dir, "notiming");
    mpce_engine *e = engine_with(dir, "[engine]\nallow_variable_time = yes\n");
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "prg.ecb", NULL), "prg-soft-bitslice");
    mpce_engine_free(e);
    remove_dir(dir);
}

/* Knobs (ABI 2.2) that break a rule: the implementation is refused, naming
 * the knob and the rule. */
static void test_bad_knobs(void)
{
    run_single_impl("knobdup", "prg-test-knobdup", "knob 'batch' is declared twice");
    run_single_impl("knoborder", "prg-test-knoborder",
                    "knob 'tile': values must be strictly ascending (64 after 128)");
    run_single_impl("knobdefault", "prg-test-knobdefault",
                    "knob 'tile': its default 100 is not one of its values");
    run_single_impl("knobops", "prg-test-knobops",
                    "knob 'tile': ops names 'lpn.fold', which is not one of its primitive's "
                    "data ops");
}

/* An implementation of a primitive that does not exist: refused, and naming
 * it (by call or by pin) is an error, not a crash. */
static void test_unknown_primitive(void)
{
    char *dir = make_dir();
    copy_module(dir, "badprim");
    mpce_engine *e = engine_with(dir, "[pins]\nprg = prg-test-badprim\n");
    const mpce_impl_info *row = find_row(e, 1, "badprim", "prg-test-badprim");
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->selftest, "skipped");
    CU_ASSERT_STRING_EQUAL(row->primitive, "");
    expect_reason("prg-test-badprim", row->reason, "unknown primitive 9");
    TU_ASSERT_ERROR(tu_ecb_fips_c1(e, "prg-test-badprim"), MPCE_ERR_NOIMPL, "skipped");
    TU_ASSERT_ERROR(tu_ecb_fips_c1(e, NULL), MPCE_ERR_NOIMPL, "[pins] prg = prg-test-badprim");
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(e, "prg-soft-bitslice"), MPCE_OK);
    mpce_engine_free(e);
    remove_dir(dir);
}

/* It declines every context the vectors use: it checked nothing, so it
 * fails its self-test instead of passing untested, and "auto" skips it. */
static void test_untested_is_not_passed(void)
{
    char *dir = make_dir();
    copy_module(dir, "declineall");
    mpce_engine *e = engine_with(dir, NULL);
    const mpce_impl_info *row = find_row(e, 1, "declineall", "prg-test-declineall");
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->selftest, "fail");
    expect_reason("prg-test-declineall", row->reason,
                  "no known-answer record checked prg.ecb");
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "prg.ecb", NULL), "prg-soft-bitslice");
    mpce_engine_free(e);
    remove_dir(dir);
}

static void test_bad_class_and_memory(void)
{
    run_single_impl("badclass", "prg-test-badclass", "impl_class 7 is unknown");
    run_single_impl("nohost", "prg-test-nohost", "must include MPCE_MEM_HOST");
}

/* Out of its class's range: clamped, said so, and otherwise a working
 * implementation that ranks at the top of its class, not above all. */
static void test_priority_clamped(void)
{
    char *dir = make_dir();
    copy_module(dir, "priohigh");
    mpce_engine *e = engine_with(dir, NULL);
    const mpce_impl_info *row = find_row(e, 1, "priohigh", "prg-test-priohigh");
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->selftest, "pass");
    CU_ASSERT_EQUAL(row->priority, 399);
    CU_ASSERT_STRING_EQUAL(row->impl_class, "simd");
    expect_reason("prg-test-priohigh", row->reason, "priority 2147483647 clamped to 399");
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "prg.ecb", NULL), "prg-test-priohigh");
    expect_computes(e);
    mpce_engine_free(e);
    remove_dir(dir);
}

/* Built for ABI 2.0: its DPF table ends before evalall_range. It loads,
 * passes its self-test, and works: full-domain evaluation runs unsplit
 * through evalall even on an engine that splits calls over threads, and a
 * key batch goes through eval_keys. */
static void test_older_minor(void)
{
    char *dir = make_dir();
    copy_module(dir, "oldminor");
    mpce_engine *e = engine_with(dir, "[engine]\nthreads = 3\n");
    const mpce_impl_info *row = find_row(e, 1, "oldminor", "dpf-test-oldminor");
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->selftest, "pass");
    CU_ASSERT_STRING_EQUAL(row->reason, "");
    const unsigned bits = 16;
    mpce_dpf *ctx;
    mpce_dpf_key *k0, *k1;
    uint8_t s0[16], s1[16];
    tu_splitmix_bytes(77, s0, 16);
    tu_splitmix_bytes(78, s1, 16);
    CU_ASSERT_FATAL(mpce_dpf_new(e, bits, MPCE_DPF_U64, NULL, NULL, &ctx) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_dpf_gen_u64(ctx, "dpf-test-oldminor", 12345, 42, s0, s1, &k0, &k1) ==
                    MPCE_OK);
    size_t len = ((size_t)1 << bits) * 8;
    uint8_t *a = malloc(len), *b = malloc(len);
    CU_ASSERT_FATAL(a && b);
    CU_ASSERT_EQUAL(mpce_dpf_evalall(ctx, "dpf-test-oldminor", k1, a, len), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_dpf_evalall(ctx, "dpf-soft", k1, b, len), MPCE_OK);
    CU_ASSERT(memcmp(a, b, len) == 0);
    /* A key batch on a table without eval_batch (2.3): the engine unpacks
     * it and calls eval_keys. */
    {
        /* More keys than one unpacked run (256), from an offset. */
        enum { NK = 600, FIRST = 7, N = NK - FIRST - 2 };
        const mpce_dpf_key **kk = malloc(NK * sizeof(*kk));
        uint64_t *xs = malloc(N * sizeof(*xs)), st = 5;
        uint8_t *got = malloc(8 * N), *want = malloc(8 * N);
        CU_ASSERT_FATAL(kk && xs && got && want);
        for (size_t i = 0; i < NK; i++)
            kk[i] = (i * 7) % 3 ? k0 : k1;
        for (size_t i = 0; i < N; i++)
            xs[i] = i % 5 == 0 ? 12345 : tu_splitmix64(&st) & 0xffff;
        mpce_dpf_keys *bt;
        CU_ASSERT_FATAL(mpce_dpf_keys_new(ctx, kk, NK, &bt) == MPCE_OK);
        CU_ASSERT_EQUAL(mpce_dpf_eval_batch(ctx, "dpf-test-oldminor", bt, FIRST, xs, N, got),
                        MPCE_OK);
        CU_ASSERT_EQUAL(mpce_dpf_eval_keys(ctx, "dpf-soft", kk + FIRST, xs, N, want), MPCE_OK);
        CU_ASSERT(memcmp(got, want, 8 * N) == 0);
        mpce_dpf_keys_free(bt);
        free(kk);
        free(xs);
        free(got);
        free(want);
    }
    mpce_dpf_key_free(k0);
    mpce_dpf_key_free(k1);
    mpce_dpf_free(ctx);
    free(a);
    free(b);
    mpce_engine_free(e);
    remove_dir(dir);
}

static void test_duplicate_name(void)
{
    run_single("dupname", "duplicate plugin name 'soft'");
}

static void test_probe_refuses(void)
{
    run_single("probe", "no test device present");
}

static void test_impl_probe_refuses(void)
{
    char *dir = make_dir();
    copy_module(dir, "implprobe");
    mpce_engine *e = engine_with(dir, NULL);
    const mpce_impl_info *row = find_row(e, 1, "implprobe", "prg-test-implprobe");
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->selftest, "skipped");
    CU_ASSERT_PTR_NOT_NULL(strstr(row->reason, "no imaginary AES-1024 instructions"));
    TU_ASSERT_ERROR(tu_ecb_fips_c1(e, "prg-test-implprobe"), MPCE_ERR_NOIMPL, "prg-test-implprobe");
    expect_computes(e);
    mpce_engine_free(e);
    remove_dir(dir);
}

/* MPCE_IMPL_CHECKS_NTT_INPUT lets the engine skip its input scan, so it is
 * refused where it cannot mean anything (a PRG, a 2.3 module) and fails
 * the self-test of an implementation that transforms a bad input. */
static void test_ntt_check_flag(void)
{
    run_single_impl("checksprg", "prg-test-checksprg", "only an NTT implementation may carry");
    char *dir = make_dir();
    copy_module(dir, "nttoldflag");
    copy_module(dir, "nttliar");
    mpce_engine *e = engine_with(dir, NULL);
    expect_row(e, "nttoldflag", "ntt-test-nttoldflag", "skipped", "needs a module of ABI 2.4");
    expect_row(e, "nttliar", "ntt-test-nttliar", "fail",
               "carries MPCE_IMPL_CHECKS_NTT_INPUT, but its ntt.");
    /* Never called with a bad input: named, it is refused; auto skips it. */
    const uint64_t q = UINT64_C(0x1fffffffffe00001);
    uint64_t in[16] = {0}, out[16];
    mpce_ntt *ctx = NULL;
    CU_ASSERT_FATAL(mpce_ntt_new(e, 16, &q, 1, &ctx) == MPCE_OK);
    in[3] = q;
    TU_ASSERT_ERROR(mpce_ntt_forward(ctx, "ntt-test-nttliar", in, out, 1), MPCE_ERR_NOIMPL,
                    "self-test failed");
    TU_ASSERT_ERROR(mpce_ntt_forward(ctx, NULL, in, out, 1), MPCE_ERR_ARG, "in[3]");
    mpce_ntt_free(ctx);
    mpce_engine_free(e);
    remove_dir(dir);
}

/* MPCE_IMPL_CHECKS_NTT_IN_PLACE (2.5) lets calls in place under
 * MPCE_NTT_REFUSAL_ZERO go unchecked: refused from a 2.4 module or without
 * the input flag, it fails the self-test of a kernel that does not check in
 * place, and without it (ntt24 and ntt25, the same source built for 2.4 and
 * for this header, check out of place only, as their flag asks) the engine
 * checks in-place calls first under either mode. */
static void test_ntt_check_flag_in_place(void)
{
    char *dir = make_dir();
    copy_module(dir, "ntt24");
    copy_module(dir, "ntt25");
    copy_module(dir, "nttplaceliar");
    copy_module(dir, "nttplaceold");
    copy_module(dir, "nttplacealone");
    mpce_engine *e = engine_with(dir, NULL);
    expect_row(e, "nttplaceliar", "ntt-test-nttplaceliar", "fail",
               "carries MPCE_IMPL_CHECKS_NTT_IN_PLACE, but its ntt.");
    expect_row(e, "nttplaceliar", "ntt-test-nttplaceliar", "fail",
               "in place, not below its modulus");
    expect_row(e, "nttplaceold", "ntt-test-nttplaceold", "skipped",
               "MPCE_IMPL_CHECKS_NTT_IN_PLACE, which needs a module of ABI 2.5");
    expect_row(e, "nttplacealone", "ntt-test-nttplacealone", "skipped",
               "extends MPCE_IMPL_CHECKS_NTT_INPUT and needs it too");
    expect_row(e, "ntt24", "ntt-test-ntt24", "pass", NULL);
    expect_row(e, "ntt25", "ntt-test-ntt25", "pass", NULL);
    const uint64_t q = UINT64_C(0x1fffffffffe00001);
    uint64_t a[16], b[16];
    for (unsigned i = 0; i < 16; i++)
        b[i] = i + 1;
    mpce_ntt *ctx = NULL;
    CU_ASSERT_FATAL(mpce_ntt_new(e, 16, &q, 1, &ctx) == MPCE_OK);
    static const char *const impls[] = {"ntt-test-ntt24", "ntt-test-ntt25"};
    for (unsigned k = 0; k < 2; k++) {
        for (unsigned mode = MPCE_NTT_REFUSAL_KEEP; mode <= MPCE_NTT_REFUSAL_ZERO; mode++) {
            CU_ASSERT_FATAL(mpce_ntt_set_refusal(ctx, mode) == MPCE_OK);
            for (unsigned op = 0; op < 3; op++) {
                for (unsigned i = 0; i < 16; i++)
                    a[i] = i == 5 ? q : 7 * i;
                mpce_status st = op == 0   ? mpce_ntt_forward(ctx, impls[k], a, a, 1)
                                 : op == 1 ? mpce_ntt_inverse(ctx, impls[k], a, a, 1)
                                           : mpce_ntt_mul(ctx, impls[k], a, b, a, 1);
                /* Named: the engine's own check ran before the op. */
                TU_ASSERT_ERROR(st, MPCE_ERR_ARG, op == 2 ? "a[5] = " : "in[5] = ");
                for (unsigned i = 0; i < 16; i++)
                    CU_ASSERT_EQUAL(a[i],
                                    mode == MPCE_NTT_REFUSAL_ZERO ? 0 : i == 5 ? q : 7 * i);
            }
        }
    }
    mpce_ntt_free(ctx);
    mpce_engine_free(e);
    remove_dir(dir);
}

static void test_wrong_answers(void)
{
    char *dir = make_dir();
    copy_module(dir, "wrong");
    mpce_engine *e = engine_with(dir, NULL);
    /* Highest priority, but "auto" must never reach it. */
    expect_computes(e);
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "prg.ecb", NULL), "prg-soft-bitslice");
    TU_ASSERT_ERROR(tu_ecb_fips_c1(e, "prg-test-wrong"), MPCE_ERR_NOIMPL, "self-test failed");
    const mpce_impl_info *row = find_row(e, 1, "wrong", "prg-test-wrong");
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->selftest, "fail");
    CU_ASSERT_PTR_NOT_NULL(strstr(row->reason, "prg.ecb record at prg.txt:"));
    size_t passed, failed;
    TU_ASSERT_ERROR(mpce_selftest(e, "prg-test-wrong", &passed, &failed), MPCE_ERR_SELFTEST,
                    "prg-test-wrong");
    CU_ASSERT_EQUAL(passed, 0);
    CU_ASSERT_EQUAL(failed, 1);
    mpce_engine_free(e);
    remove_dir(dir);
}

static void test_good_module(void)
{
    char *dir = make_dir();
    copy_module(dir, "good");
    mpce_engine *e = engine_with(dir, NULL);
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(e, "prg-test-good"), MPCE_OK);
    const mpce_impl_info *row = find_row(e, 0, "good", "prg-test-good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->selftest, "pass");
    CU_ASSERT_STRING_EQUAL(row->plugin, "testgood");
    CU_ASSERT_STRING_EQUAL(row->impl_class, "simd");
    CU_ASSERT_STRING_EQUAL(row->memory, "host");
    CU_ASSERT_STRING_EQUAL(row->reason, "");
    /* The listing's fingerprint is the SHA-256 of the module file itself. */
    char path[4096], want[65];
    snprintf(path, sizeof(path), "%s/mod_good.so", dir);
    CU_ASSERT_STRING_EQUAL(row->path, path);
    CU_ASSERT_EQUAL(strlen(row->sha256), 64);
    CU_ASSERT_EQUAL(file_sha256_hex(path, want), 0);
    CU_ASSERT_STRING_EQUAL(row->sha256, want);
    /* Priority 200 beats soft's 100. */
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "prg.ecb", NULL), "prg-test-good");
    size_t passed, failed;
    CU_ASSERT_EQUAL(mpce_selftest(e, "prg-test-good", &passed, &failed), MPCE_OK);
    CU_ASSERT_EQUAL(passed, 1);
    CU_ASSERT_EQUAL(failed, 0);
    expect_computes(e);
    mpce_engine_free(e);
    remove_dir(dir);
}

static void test_disabled_plugin(void)
{
    char *dir = make_dir();
    copy_module(dir, "good");
    mpce_engine *e = engine_with(dir, "[plugin.testgood]\nenabled = no\n");
    const mpce_impl_info *row = find_row(e, 1, "good", "prg-test-good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->selftest, "skipped");
    CU_ASSERT_PTR_NOT_NULL(strstr(row->reason, "disabled by"));
    TU_ASSERT_ERROR(tu_ecb_fips_c1(e, "prg-test-good"), MPCE_ERR_NOIMPL, "disabled by");
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "prg.ecb", NULL), "prg-soft-bitslice");
    mpce_engine_free(e);
    remove_dir(dir);
}

/* ---- unsafe files and directories ----------------------------------------- */

static void expect_mode_refused(mode_t mode, const char *needle)
{
    char *dir = make_dir();
    copy_module(dir, "good");
    char path[4096];
    snprintf(path, sizeof(path), "%s/mod_good.so", dir);
    CU_ASSERT_FATAL(chmod(path, mode) == 0);
    mpce_engine *e = engine_with(dir, NULL);
    expect_skipped(e, "good", needle);
    expect_skipped(e, "good", "run chmod ");
    TU_ASSERT_ERROR(tu_ecb_fips_c1(e, "prg-test-good"), MPCE_ERR_NOIMPL, "prg-test-good");
    expect_computes(e);
    mpce_engine_free(e);
    remove_dir(dir);
}

static void test_group_writable_file(void)
{
    expect_mode_refused(0775, "group-writable");
}

static void test_world_writable_file(void)
{
    expect_mode_refused(0757, "world-writable");
}

static void test_group_writable_dir(void)
{
    char *dir = make_dir();
    copy_module(dir, "good");
    CU_ASSERT_FATAL(chmod(dir, 0770) == 0);
    mpce_engine *e = engine_with(dir, NULL);
    expect_skipped(e, "good", "directory");
    expect_skipped(e, "good", "group-writable");
    expect_computes(e);
    mpce_engine_free(e);
    remove_dir(dir);
}

static void test_foreign_owner(void)
{
    if (geteuid() != 0) {
        fprintf(stderr, "  (not root: cannot give a file away; skipped)\n");
        return;
    }
    char *dir = make_dir();
    copy_module(dir, "good");
    char path[4096];
    snprintf(path, sizeof(path), "%s/mod_good.so", dir);
    CU_ASSERT_FATAL(chown(path, 65534, 65534) == 0);
    mpce_engine *e = engine_with(dir, NULL);
    expect_skipped(e, "good", "owned by uid 65534");
    expect_computes(e);
    mpce_engine_free(e);
    remove_dir(dir);
}

/* A module reached through a symlink whose target sits in a directory
 * anyone can write: refused, the file is never opened through the link. */
static void test_symlink_into_writable_dir(void)
{
    char *dir = make_dir(), *open_dir = make_dir();
    copy_module(open_dir, "good");
    CU_ASSERT_FATAL(chmod(open_dir, 0777) == 0);
    CU_ASSERT_FATAL(chmod(dir, 0755) == 0);
    char target[4096], link[4096];
    snprintf(target, sizeof(target), "%s/mod_good.so", open_dir);
    snprintf(link, sizeof(link), "%s/mod_good.so", dir);
    CU_ASSERT_FATAL(symlink(target, link) == 0);
    mpce_engine *e = engine_with(dir, NULL);
    expect_skipped(e, "good", "symbolic link");
    TU_ASSERT_ERROR(tu_ecb_fips_c1(e, "prg-test-good"), MPCE_ERR_NOIMPL, "prg-test-good");
    expect_computes(e);
    mpce_engine_free(e);
    unlink(link);
    remove_dir(dir);
    remove_dir(open_dir);
}

/* The file is replaced after it was checked and hashed, before it is loaded:
 * what runs is what was checked, and the listing's SHA-256 is of it. */
static char swap_from[4096], swap_to[4096];

static void swap_hook(const char *path)
{
    (void)path;
    CU_ASSERT(rename(swap_from, swap_to) == 0);
}

static void test_swap_between_check_and_load(void)
{
    char *dir = make_dir();
    copy_module(dir, "good");
    copy_module(dir, "wrong");
    char good[4096], sha_good[65];
    snprintf(good, sizeof(good), "%s/mod_good.so", dir);
    CU_ASSERT_FATAL(file_sha256_hex(good, sha_good) == 0);
    /* Only mod_good.so is scanned: the swap source lives in another name. */
    snprintf(swap_from, sizeof(swap_from), "%s/mod_wrong.so", dir);
    snprintf(swap_to, sizeof(swap_to), "%s/mod_good.so", dir);
    char hidden[4096];
    snprintf(hidden, sizeof(hidden), "%s/mod_wrong.hidden", dir);
    CU_ASSERT_FATAL(rename(swap_from, hidden) == 0);
    snprintf(swap_from, sizeof(swap_from), "%s", hidden);
    mpce_module_file_test_hook = swap_hook;
    mpce_engine *e = engine_with(dir, NULL);
    mpce_module_file_test_hook = NULL;
    /* On disk now: the wrong module. Loaded: the good one, as checked. */
    const mpce_impl_info *row = find_row(e, 1, "good", "prg-test-good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->selftest, "pass");
    CU_ASSERT_STRING_EQUAL(row->sha256, sha_good);
    CU_ASSERT_PTR_NULL(find_row(e, 0, "good", "prg-test-wrong"));
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(e, "prg-test-good"), MPCE_OK);
    mpce_engine_free(e);
    remove_dir(dir);
}

static void test_missing_dir(void)
{
    mpce_engine *e = engine_with("/nonexistent/mpcengine-plugins", NULL);
    expect_computes(e);
    mpce_engine_free(e);
}

/* ---- everything at once ---------------------------------------------------- */

static void test_all_in_one_dir(void)
{
    static const char *const modules[] = {ALL_MODULES};
    char *dir = make_dir();
    for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++)
        copy_module(dir, modules[i]);
    mpce_engine *e = engine_with(dir, NULL);
    expect_skipped(e, "noentry", "no entry symbol");
    expect_skipped(e, "abimajor", "ABI 3.");
    expect_skipped(e, "newminor", "upgrade libmpcengine");
    expect_skipped(e, "short", "struct_size");
    expect_skipped(e, "dupname", "duplicate plugin name");
    expect_skipped(e, "probe", "no test device present");
    expect_impl_skipped(e, "nullop", "prg-test-nullop", "required op");
    expect_impl_skipped(e, "notiming", "prg-test-notiming", "neither");
    expect_impl_skipped(e, "bothtiming", "prg-test-bothtiming", "both");
    expect_impl_skipped(e, "unknownflag", "prg-test-unknownflag", "unknown bits");
    expect_impl_skipped(e, "badclass", "prg-test-badclass", "impl_class");
    expect_impl_skipped(e, "nohost", "prg-test-nohost", "MPCE_MEM_HOST");
    expect_computes(e);
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(e, "prg-test-good"), MPCE_OK);
    TU_ASSERT_ERROR(tu_ecb_fips_c1(e, "prg-test-wrong"), MPCE_ERR_NOIMPL, "self-test");
    /* The clamped one tops its class; the wrong one failed its self-test. */
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "prg.ecb", NULL), "prg-test-priohigh");
    const mpce_impl_info *good = find_row(e, 1, "good", "prg-test-good");
    const mpce_impl_info *wrong = find_row(e, 0, "wrong", "prg-test-wrong");
    CU_ASSERT_PTR_NOT_NULL_FATAL(good);
    CU_ASSERT_PTR_NOT_NULL_FATAL(wrong);
    CU_ASSERT_STRING_EQUAL(good->selftest, "pass");
    CU_ASSERT_STRING_EQUAL(wrong->selftest, "fail");
    size_t passed, failed;
    TU_ASSERT_ERROR(mpce_selftest(e, NULL, &passed, &failed), MPCE_ERR_SELFTEST,
                    "3 implementation(s) failed the self-test");
    CU_ASSERT_EQUAL(failed, 3); /* wrong, declineall and onekey */
    CU_ASSERT(passed >= 8); /* soft's five, good, priohigh and oldminor */
    expect_impl_skipped(e, "badprim", "prg-test-badprim", "unknown primitive");
    mpce_engine_free(e);
    remove_dir(dir);
}

/* ---- strict mode ------------------------------------------------------------- */

/* mpce_engine_new with strict = yes over a directory holding only `module`;
 * the directory and configuration are gone on return, the error detail
 * (thread-local) is kept. */
static mpce_status strict_engine_new(const char *module, mpce_engine **e)
{
    char *dir = make_dir();
    copy_module(dir, module);
    char *conf = tu_write_temp("[engine]\nstrict = yes\n");
    mpce_options opts = {.struct_size = sizeof(opts), .config_path = conf, .plugin_path = dir,
                         .flags = private_flags};
    mpce_status st = mpce_engine_new(&opts, e);
    unlink(conf);
    free(conf);
    remove_dir(dir);
    return st;
}

/* The full reason: module, implementation and the vector that failed. */
static void test_strict_wrong_answers(void)
{
    mpce_engine *e = NULL;
    TU_ASSERT_ERROR(strict_engine_new("wrong", &e), MPCE_ERR_SELFTEST, "prg-test-wrong");
    CU_ASSERT(tu_error_mentions("mod_wrong.so"));
    CU_ASSERT(tu_error_mentions("prg.ecb record at prg.txt:"));
    CU_ASSERT(tu_error_mentions("strict = no"));
    CU_ASSERT_PTR_NULL(e);
}

/* The reason survives the self-tests that run after the failing one (IFMA
 * declining a vector's 61-bit modulus sets an error detail of its own). */
static void test_strict_reason_kept(void)
{
    if (!TEST_PLUGIN_PATH[0]) {
        printf("\n  skipped: no plugin built in this tree to test after the failing one\n");
        return;
    }
    char *dir = make_dir();
    copy_module(dir, "wrong");
    char path[8192];
    snprintf(path, sizeof(path), "%s:%s", dir, TEST_PLUGIN_PATH);
    char *conf = tu_write_temp("[engine]\nstrict = yes\n");
    mpce_options opts = {.struct_size = sizeof(opts), .config_path = conf, .plugin_path = path,
                         .flags = private_flags};
    mpce_engine *e = NULL;
    TU_ASSERT_ERROR(mpce_engine_new(&opts, &e), MPCE_ERR_SELFTEST, "prg-test-wrong");
    CU_ASSERT(tu_error_mentions("prg.ecb record at prg.txt:"));
    CU_ASSERT_PTR_NULL(e);
    unlink(conf);
    free(conf);
    remove_dir(dir);
}

static void test_strict_broken_module(void)
{
    mpce_engine *e = NULL;
    TU_ASSERT_ERROR(strict_engine_new("newminor", &e), MPCE_ERR_PLUGIN, "mod_newminor.so");
    CU_ASSERT(tu_error_mentions("upgrade libmpcengine"));
    CU_ASSERT_PTR_NULL(e);
    TU_ASSERT_ERROR(strict_engine_new("nullop", &e), MPCE_ERR_PLUGIN, "prg-test-nullop");
    CU_ASSERT(tu_error_mentions("required op prg.ctx_free is NULL"));
    CU_ASSERT_PTR_NULL(e);
}

/* A refused device: the implementation that serves it says why, and so
 * does strict mode, rather than pointing at a log nobody collected. */
static void test_refused_device(void)
{
    char *dir = make_dir();
    copy_module(dir, "baddevice");
    mpce_engine *e = engine_with(dir, NULL);
    /* Its own device's reason, not the first refused device's. */
    expect_impl_skipped(e, "baddevice", "prg-test-baddevice",
                        "its device bad1 was refused: a device descriptor is of the wrong "
                        "struct_size");
    mpce_engine_free(e);
    remove_dir(dir);
    e = NULL;
    TU_ASSERT_ERROR(strict_engine_new("baddevice", &e), MPCE_ERR_PLUGIN, "mod_baddevice.so");
    CU_ASSERT(tu_error_mentions("its device bad1 was refused: a device descriptor is of the "
                                "wrong struct_size"));
    CU_ASSERT_PTR_NULL(e);
}

/* serves() takes one-key contexts only: the mmo m = 1 records run, no ecb or
 * ctr record does, so it has not shown it computes those: fail. */
static void test_untested_ops_fail(void)
{
    char *dir = make_dir();
    copy_module(dir, "onekey");
    mpce_engine *e = engine_with(dir, NULL);
    const mpce_impl_info *row = find_row(e, 1, "onekey", "prg-test-onekey");
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->selftest, "fail");
    expect_reason("prg-test-onekey", row->reason, "no known-answer record checked prg.ecb");
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "prg.mmo", NULL), "prg-soft-bitslice");
    mpce_engine_free(e);
    remove_dir(dir);
}

/* The lazy self-test of the implementation a call resolves to runs inside
 * that call; ctx_new refusing some records writes error detail there, which
 * a call that succeeds must not leave behind (common.h). */
static void test_selftest_keeps_last_error(void)
{
    char *dir = make_dir();
    copy_module(dir, "refusem4");
    mpce_engine *e = engine_with(dir, NULL);
    mpce_prg *bad;
    CU_ASSERT_EQUAL(mpce_prg_new(e, NULL, 0, &bad), MPCE_ERR_ARG);
    char before[1024];
    snprintf(before, sizeof(before), "%s", mpce_last_error());
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(e, NULL), MPCE_OK); /* tests prg-test-refusem4 first */
    CU_ASSERT_STRING_EQUAL(mpce_last_error(), before);
    const mpce_impl_info *row = find_row(e, 0, "refusem4", "prg-test-refusem4");
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->selftest, "pass");
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "prg.ecb", NULL), "prg-test-refusem4");
    mpce_engine_free(e);
    remove_dir(dir);
}

/* A module whose library is missing is told about $ORIGIN (modules load from
 * /proc/self/fd/N); a file that is no shared object at all is not. The
 * missing library is made by renaming mod_good's libcrypto dependency. */
static void test_dlopen_failure_hint(void)
{
    char *dir = make_dir();
    char src[4096], dst[4200];
    snprintf(src, sizeof(src), "%s/mod_good.so", TEST_MODULE_DIR);
    snprintf(dst, sizeof(dst), "%s/mod_nodep.so", dir);
    FILE *f = fopen(src, "rb");
    CU_ASSERT_FATAL(f != NULL);
    static unsigned char buf[1 << 22];
    size_t len = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    CU_ASSERT_FATAL(len > 0 && len < sizeof(buf));
    static const char want[] = "libcrypto.so.", repl[] = "libcrypzz.so.";
    size_t renamed = 0;
    for (size_t i = 0; i + sizeof(want) - 1 <= len; i++)
        if (memcmp(buf + i, want, sizeof(want) - 1) == 0) {
            memcpy(buf + i, repl, sizeof(repl) - 1);
            renamed++;
        }
    if (renamed == 0) {
        printf("\n  skipped: mod_good.so does not name libcrypto.so.N here");
        remove_dir(dir);
        return;
    }
    f = fopen(dst, "wb");
    CU_ASSERT_FATAL(f != NULL && fwrite(buf, 1, len, f) == len && fclose(f) == 0);
    snprintf(dst, sizeof(dst), "%s/mod_junk.so", dir);
    tu_write_text(dst, "not an ELF file\n", 0644);
    mpce_engine *e = engine_with(dir, NULL);
    expect_skipped(e, "nodep", "cannot open shared object file");
    expect_skipped(e, "nodep", "$ORIGIN in their RUNPATH does not reach their directory");
    const mpce_impl_info *junk = find_row(e, 0, "junk", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(junk);
    CU_ASSERT_PTR_NOT_NULL(strstr(junk->reason, "dlopen failed"));
    CU_ASSERT_PTR_NULL(strstr(junk->reason, "$ORIGIN"));
    mpce_engine_free(e);
    remove_dir(dir);
}

static void test_strict_good(void)
{
    char *dir = make_dir();
    copy_module(dir, "good");
    copy_module(dir, "probe"); /* a probe refusal is not a fault */
    mpce_engine *e = engine_with(dir, "[engine]\nstrict = yes\n");
    /* strict ran every self-test at creation */
    const mpce_impl_info *row = find_row(e, 0, "good", "prg-test-good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->selftest, "pass");
    mpce_engine_free(e);
    remove_dir(dir);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"no entry symbol", test_no_entry},
        {"wrong ABI major", test_abi_major},
        {"newer ABI minor", test_abi_minor},
        {"short descriptor", test_short_struct},
        {"NULL required op", test_null_op},
        {"missing, double or unknown timing flags", test_timing_flags},
        {"the NTT input-check flag: where it is refused, and a module that lies",
         test_ntt_check_flag},
        {"the in-place check flag: refused where it cannot hold, a liar fails, without it "
         "the engine checks first",
         test_ntt_check_flag_in_place},
        {"knobs that break a rule: refused, naming the knob", test_bad_knobs},
        {"unknown class, no host memory", test_bad_class_and_memory},
        {"unknown primitive: refused, named without a crash", test_unknown_primitive},
        {"an implementation that declined every vector fails", test_untested_is_not_passed},
        {"priority out of its class: clamped", test_priority_clamped},
        {"older-minor op table loads and works", test_older_minor},
        {"duplicate plugin name", test_duplicate_name},
        {"plugin probe refuses", test_probe_refuses},
        {"implementation probe refuses", test_impl_probe_refuses},
        {"wrong answers fail the self-test", test_wrong_answers},
        {"good module passes and is selectable", test_good_module},
        {"disabled plugin", test_disabled_plugin},
        {"group-writable module refused", test_group_writable_file},
        {"world-writable module refused", test_world_writable_file},
        {"group-writable directory refused", test_group_writable_dir},
        {"foreign-owned module refused", test_foreign_owner},
        {"symlink into a writable directory refused", test_symlink_into_writable_dir},
        {"file swapped between check and load", test_swap_between_check_and_load},
        {"missing plugin directory", test_missing_dir},
        {"all modules in one directory", test_all_in_one_dir},
        {"strict: wrong answers are fatal", test_strict_wrong_answers},
        {"strict: a broken module is fatal", test_strict_broken_module},
        {"strict: the first failure's reason is kept", test_strict_reason_kept},
        {"strict: good modules pass", test_strict_good},
        {"a refused device, named in the reasons", test_refused_device},
        {"an op no record checked fails the self-test", test_untested_ops_fail},
        {"the lazy self-test leaves mpce_last_error() alone", test_selftest_keeps_last_error},
        {"dlopen failures: the $ORIGIN hint only for missing libraries",
         test_dlopen_failure_hint},
        {NULL, NULL},
    };
    return tu_main("loader", tests);
}
