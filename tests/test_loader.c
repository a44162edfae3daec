/*
 * The module loader: every broken test module is skipped with a reason that
 * names the problem, unsafe files and directories are refused, and the
 * engine keeps computing correctly whatever it was given.
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

#include "tests/testutil.h"

#ifndef TEST_MODULE_DIR
#error "TEST_MODULE_DIR must name the directory of the built test modules"
#endif

#define ALL_MODULES "good", "noentry", "abimajor", "abiminor", "short", "dupname", \
                    "probe", "implprobe", "wrong"

static const unsigned private_flags =
    MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV | MPCE_OPT_NO_SYSTEM_CONFIG;

/* ---- helpers -------------------------------------------------------------- */

static char *make_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    char *dir = malloc(4096);
    CU_ASSERT_FATAL(dir != NULL);
    snprintf(dir, 4096, "%s/mpce-loader-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    CU_ASSERT_FATAL(chmod(dir, 0700) == 0);
    return dir;
}

/* Copy TEST_MODULE_DIR/mod_NAME.so into dir with mode 0755. */
static void copy_module(const char *dir, const char *name)
{
    char src[4096], dst[4096], buf[65536];
    snprintf(src, sizeof(src), "%s/mod_%s.so", TEST_MODULE_DIR, name);
    snprintf(dst, sizeof(dst), "%s/mod_%s.so", dir, name);
    int in = open(src, O_RDONLY);
    if (in < 0) {
        fprintf(stderr, "cannot open test module %s: build it with `make check`\n", src);
        CU_FAIL_FATAL("test module missing");
    }
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    CU_ASSERT_FATAL(out >= 0);
    ssize_t n;
    while ((n = read(in, buf, sizeof(buf))) > 0)
        CU_ASSERT_FATAL(write(out, buf, (size_t)n) == n);
    close(in);
    close(out);
    CU_ASSERT_FATAL(chmod(dst, 0755) == 0);
}

static void remove_dir(char *dir)
{
    chmod(dir, 0700);
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *ent;
        while ((ent = readdir(d)) != NULL) {
            if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
                continue;
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", dir, ent->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
    free(dir);
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

static void expect_skipped(mpce_engine *e, const char *module, const char *needle)
{
    const mpce_impl_info *row = find_row(e, 0, module, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->selftest, "skipped");
    CU_ASSERT_STRING_EQUAL(row->primitive, "");
    if (!strstr(row->reason, needle)) {
        fprintf(stderr, "  reason for %s: %s (wanted '%s')\n", module, row->reason, needle);
        CU_FAIL("skip reason does not name the problem");
    }
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

/* One broken module alone in a fresh directory. */
static void run_single(const char *module, const char *needle)
{
    char *dir = make_dir();
    copy_module(dir, module);
    mpce_engine *e = engine_with(dir, NULL);
    expect_skipped(e, module, needle);
    expect_computes(e);
    mpce_engine_free(e);
    remove_dir(dir);
}

/* ---- one test per way of being broken --------------------------------------- */

static void test_no_entry(void)
{
    run_single("noentry", "no entry symbol mpce_plugin_entry_v1");
}

static void test_abi_major(void)
{
    run_single("abimajor", "built for plugin ABI 2.0");
}

static void test_abi_minor(void)
{
    run_single("abiminor", "upgrade libmpcengine");
}

static void test_short_struct(void)
{
    run_single("short", "too small to hold impls");
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

static void test_wrong_answers(void)
{
    char *dir = make_dir();
    copy_module(dir, "wrong");
    mpce_engine *e = engine_with(dir, NULL);
    /* Highest priority, but "auto" must never reach it. */
    expect_computes(e);
    CU_ASSERT_STRING_EQUAL(mpce_resolve(e, MPCE_PRIM_PRG), "prg-soft-bitslice");
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
    CU_ASSERT_STRING_EQUAL(row->reason, "");
    /* The listing's fingerprint is the SHA-256 of the module file itself. */
    char path[4096], want[65];
    snprintf(path, sizeof(path), "%s/mod_good.so", dir);
    CU_ASSERT_STRING_EQUAL(row->path, path);
    CU_ASSERT_EQUAL(strlen(row->sha256), 64);
    CU_ASSERT_EQUAL(file_sha256_hex(path, want), 0);
    CU_ASSERT_STRING_EQUAL(row->sha256, want);
    /* Priority 200 beats soft's 100. */
    CU_ASSERT_STRING_EQUAL(mpce_resolve(e, MPCE_PRIM_PRG), "prg-test-good");
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
    CU_ASSERT_STRING_EQUAL(mpce_resolve(e, MPCE_PRIM_PRG), "prg-soft-bitslice");
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
    expect_skipped(e, "good", "chmod go-w");
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
    expect_skipped(e, "abimajor", "ABI 2.0");
    expect_skipped(e, "abiminor", "upgrade libmpcengine");
    expect_skipped(e, "short", "too small to hold impls");
    expect_skipped(e, "dupname", "duplicate plugin name");
    expect_skipped(e, "probe", "no test device present");
    expect_computes(e);
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(e, "prg-test-good"), MPCE_OK);
    TU_ASSERT_ERROR(tu_ecb_fips_c1(e, "prg-test-wrong"), MPCE_ERR_NOIMPL, "self-test");
    CU_ASSERT_STRING_EQUAL(mpce_resolve(e, MPCE_PRIM_PRG), "prg-test-good");
    const mpce_impl_info *good = find_row(e, 1, "good", "prg-test-good");
    const mpce_impl_info *wrong = find_row(e, 0, "wrong", "prg-test-wrong");
    CU_ASSERT_PTR_NOT_NULL_FATAL(good);
    CU_ASSERT_PTR_NOT_NULL_FATAL(wrong);
    CU_ASSERT_STRING_EQUAL(good->selftest, "pass");
    CU_ASSERT_STRING_EQUAL(wrong->selftest, "fail");
    size_t passed, failed;
    TU_ASSERT_ERROR(mpce_selftest(e, NULL, &passed, &failed), MPCE_ERR_SELFTEST,
                    "prg-test-wrong");
    CU_ASSERT_EQUAL(failed, 1);
    CU_ASSERT(passed >= 6); /* soft's five and prg-test-good */
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

static void test_strict_wrong_answers(void)
{
    mpce_engine *e = NULL;
    TU_ASSERT_ERROR(strict_engine_new("wrong", &e), MPCE_ERR_SELFTEST, "prg-test-wrong");
    CU_ASSERT_PTR_NULL(e);
}

static void test_strict_broken_module(void)
{
    mpce_engine *e = NULL;
    TU_ASSERT_ERROR(strict_engine_new("abiminor", &e), MPCE_ERR_PLUGIN, "mod_abiminor.so");
    CU_ASSERT_PTR_NULL(e);
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
        {"missing plugin directory", test_missing_dir},
        {"all modules in one directory", test_all_in_one_dir},
        {"strict: wrong answers are fatal", test_strict_wrong_answers},
        {"strict: a broken module is fatal", test_strict_broken_module},
        {"strict: good modules pass", test_strict_good},
        {NULL, NULL},
    };
    return tu_main("loader", tests);
}
