/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the CUnit suites. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "engine/selector/selector.h"
#include "tests/testutil.h"

int tu_main(const char *suite_name, const struct tu_test *tests)
{
    /* Hermetic: a helper installed at the build's prefix (`make install`)
     * must not vet or tune for the suites. A suite that wants one names it
     * in [tune] helper (PROBE_BIN, the built one). */
    mpce_selector_default_helper_override = "/nonexistent/mpcengine-probe (the test suites use "
                                            "no installed helper: name one in [tune] helper)";
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite suite = CU_add_suite(suite_name, NULL, NULL);
    if (!suite)
        return 2;
    /* MPCE_TEST_ONLY=TEXT: only the tests whose names contain TEXT (while
     * working on one; a run that matches none fails, as one that ran
     * nothing). */
    const char *only = getenv("MPCE_TEST_ONLY");
    for (const struct tu_test *t = tests; t->name; t++)
        if ((!only || !*only || strstr(t->name, only)) && !CU_add_test(suite, t->name, t->fn))
            return 2;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_tests_failed();
    unsigned ran = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    /* A suite that ran nothing has proven nothing. */
    return (failed == 0 && ran > 0) ? 0 : 1;
}

char *tu_write_temp(const char *text)
{
    const char *dir = getenv("TMPDIR");
    char *path = malloc(4096);
    if (!path)
        abort();
    snprintf(path, 4096, "%s/mpce-test-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        abort();
    }
    size_t len = strlen(text);
    if (write(fd, text, len) != (ssize_t)len) {
        perror("write");
        abort();
    }
    close(fd);
    return path;
}

void tu_write_text(const char *path, const char *text, unsigned mode)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0 || chmod(path, (mode_t)mode) != 0) {
        perror(path);
        abort();
    }
}

mpce_status tu_engine_conf(const char *conf_text, mpce_engine **out)
{
    char *conf = tu_write_temp(conf_text);
    /* The plugins built in this tree (TEST_PLUGIN_PATH, from tests/local.am),
     * so every suite runs every backend this CPU can run. */
    const char *plugins = TEST_PLUGIN_PATH;
    mpce_options opts = {
        .struct_size = sizeof(opts),
        .config_path = conf,
        .plugin_path = plugins[0] ? plugins : NULL,
        .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV | MPCE_OPT_NO_SYSTEM_CONFIG |
                 (plugins[0] ? 0u : MPCE_OPT_NO_PLUGINS),
    };
    mpce_status st = mpce_engine_new(&opts, out);
    unlink(conf);
    free(conf);
    return st;
}

mpce_engine *tu_engine(int allow_variable_time)
{
    static mpce_engine *engines[2];
    int i = allow_variable_time ? 1 : 0;
    if (engines[i])
        return engines[i];
    if (tu_engine_conf(i ? "[engine]\nallow_variable_time = yes\n"
                         : "[engine]\nallow_variable_time = no\n",
                       &engines[i]) != MPCE_OK) {
        fprintf(stderr, "tu_engine: %s\n", mpce_last_error());
        abort();
    }
    return engines[i];
}

size_t tu_impls(mpce_engine *engine, mpce_primitive prim, const char **names, size_t max)
{
    const mpce_impl_info *rows;
    size_t count, found = 0;
    if (mpce_list(engine, 1, &rows, &count) != MPCE_OK) {
        fprintf(stderr, "tu_impls: %s\n", mpce_last_error());
        return 0;
    }
    const char *want = mpce_primitive_name(prim);
    for (size_t i = 0; i < count && found < max; i++) {
        if (strcmp(rows[i].primitive, want) != 0)
            continue;
        if (strcmp(rows[i].selftest, "pass") == 0) {
            names[found++] = rows[i].impl;
        } else {
            /* What this machine cannot run is reported, never silently passed. */
            printf("\n  skipped: %s (%s): %s\n", rows[i].impl, rows[i].selftest,
                   rows[i].reason);
        }
    }
    for (size_t i = 0; i < count; i++)
        if (rows[i].impl[0] == '\0')
            printf("\n  skipped module %s: %s\n", rows[i].path, rows[i].reason);
    return found;
}

uint64_t tu_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void tu_splitmix_bytes(uint64_t seed, void *buf, size_t len)
{
    uint8_t *p = buf;
    uint64_t state = seed;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v = tu_splitmix64(&state);
        for (size_t j = 0; j < 8 && i + j < len; j++)
            p[i + j] = (uint8_t)(v >> (8 * j));
    }
}

/* The allocation's start is kept just before the returned pointer. */
void *tu_alloc_misaligned(size_t len, size_t misalign)
{
    size_t pad = 64 + sizeof(void *) + (misalign % 64);
    uint8_t *base = malloc(len + pad + 64);
    if (!base)
        abort();
    uintptr_t start = ((uintptr_t)base + sizeof(void *) + 63) & ~(uintptr_t)63;
    uint8_t *p = (uint8_t *)start + (misalign % 64);
    memcpy(p - sizeof(void *), &base, sizeof(void *));
    return p;
}

void tu_free_misaligned(void *p)
{
    if (!p)
        return;
    void *base;
    memcpy(&base, (uint8_t *)p - sizeof(void *), sizeof(void *));
    free(base);
}

int tu_error_mentions(const char *needle)
{
    return strstr(mpce_last_error(), needle) != NULL;
}

int tu_ntt_serves(mpce_ntt *ctx, const char *impl)
{
    /* An empty batch resolves the implementation and its state, nothing else. */
    mpce_status st = mpce_ntt_forward(ctx, impl, NULL, NULL, 0);
    if (st == MPCE_OK)
        return 1;
    if (st == MPCE_ERR_NOIMPL && strstr(mpce_last_error(), "does not serve")) {
        printf("\n  skipped: %s for these moduli: %s\n", impl, mpce_last_error());
        return 0;
    }
    CU_FAIL("an empty NTT batch failed");
    fprintf(stderr, "  %s: %s\n", impl, mpce_last_error());
    return 0;
}

unsigned tu_impl_flags(mpce_engine *engine, const char *impl)
{
    const mpce_impl_info *rows;
    size_t count;
    if (!impl || mpce_list(engine, 0, &rows, &count) != MPCE_OK)
        return 0;
    for (size_t i = 0; i < count; i++)
        if (strcmp(rows[i].impl, impl) == 0)
            return rows[i].flags;
    return 0;
}

void tu_kat_run(const char *file, size_t min_records, const char *const *impls, size_t nimpl,
                int (*check)(const char *impl, const struct mpce_kat_record *rec))
{
    struct mpce_kat_set set;
    CU_ASSERT(nimpl >= 1);
    CU_ASSERT_FATAL(mpce_kat_load(file, &set) == 0);
    CU_ASSERT(set.count >= min_records);
    for (size_t k = 0; k < nimpl; k++)
        for (size_t r = 0; r < set.count; r++)
            CU_ASSERT(check(impls[k], &set.records[r]));
    mpce_kat_free(&set);
}

int tu_kat_expect_hex(const struct mpce_kat_record *rec, const char *name, const uint8_t *got,
                      size_t got_len)
{
    uint8_t *want = NULL;
    size_t len = 0;
    int ok = mpce_kat_hex(rec, name, &want, &len) == 0 && len == got_len &&
             memcmp(want, got, len) == 0;
    if (!ok)
        fprintf(stderr, "  %s line %u: %s differs\n", rec->file, rec->line, name);
    free(want);
    return ok;
}

mpce_status tu_ecb_fips_c1(mpce_engine *e, const char *impl)
{
    static const uint8_t key[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    static const uint8_t in[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                   0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
    static const uint8_t want[16] = {0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
                                     0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a};
    mpce_prg *ctx;
    uint8_t out[16];
    CU_ASSERT_FATAL(mpce_prg_new(e, key, 1, &ctx) == MPCE_OK);
    mpce_status st = mpce_prg_ecb(ctx, impl, 0, in, out, 1);
    if (st == MPCE_OK)
        CU_ASSERT(memcmp(out, want, 16) == 0);
    mpce_prg_free(ctx);
    return st;
}

const char *tu_emulated(void)
{
    const char *env = getenv("MPCE_TEST_EMULATOR");
    if (env != NULL && *env != '\0')
        return env;
#if defined(__aarch64__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return NULL;
    char line[512];
    int arm = 0;
    while (!arm && fgets(line, sizeof(line), f) != NULL)
        arm = strncmp(line, "CPU implementer", 15) == 0;
    fclose(f);
    if (!arm)
        return "qemu-user (this AArch64 program reads a non-ARM /proc/cpuinfo)";
#endif
    return NULL;
}

const char *tu_auto(mpce_engine *engine, const char *op, const char *size_class)
{
    const mpce_route_info *rows;
    size_t n;
    if (mpce_routes(engine, &rows, &n) != MPCE_OK)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].op, op) == 0 &&
            strcmp(rows[i].size_class, size_class ? size_class : "small") == 0)
            return rows[i].impl[0] ? rows[i].impl : NULL;
    return NULL;
}

char *tu_temp_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    char *dir = malloc(4096);
    if (!dir)
        abort();
    snprintf(dir, 4096, "%s/mpce-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir) || chmod(dir, 0700) != 0) {
        perror("tu_temp_dir");
        abort();
    }
    return dir;
}

char *tu_copy_into(const char *src, const char *dir, unsigned mode)
{
    const char *base = strrchr(src, '/');
    char *dst = malloc(4096);
    char buf[65536];
    if (!dst)
        abort();
    snprintf(dst, 4096, "%s/%s", dir, base ? base + 1 : src);
    int in = open(src, O_RDONLY);
    if (in < 0) {
        fprintf(stderr, "cannot open %s: build it with `make check`\n", src);
        abort();
    }
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ssize_t n;
    while (out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
        if (write(out, buf, (size_t)n) != n)
            abort();
    if (out < 0 || fchmod(out, (mode_t)mode) != 0) {
        perror(dst);
        abort();
    }
    close(in);
    close(out);
    return dst;
}

/* dir and everything under it (the tests' own directories only: symbolic
 * links are unlinked, never followed). */
static void remove_tree(const char *dir)
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
            struct stat st;
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
                remove_tree(path);
            else
                unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

void tu_remove_dir(char *dir)
{
    remove_tree(dir);
    free(dir);
}

int tu_unprivileged(int (*fn)(void *), void *arg)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
                               setuid(65534) != 0)) {
            perror("tu_unprivileged: dropping root");
            _exit(1);
        }
        int rc = fn(arg);
        fflush(stdout);
        _exit(rc == 0 ? 0 : 1);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
