/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mpcengine command, driven as a user would: every subcommand on files
 * in a scratch directory, its outputs checked against the known-answer
 * vectors, and its refusals checked for the promised exit status, a
 * one-line message and no output file left behind.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "engine/verify/kat.h"
#include "testutil.h"

#ifndef MPCENGINE_BIN
#error "MPCENGINE_BIN must name the built command (tests/local.am)"
#endif

extern char **environ;

#define MAX_ARGS 48

static char dir[4096];
static char conf[4200];
static char *out_text; /* stdout of the last run */
static char *err_text; /* stderr of the last run */

/* ---- scratch files --------------------------------------------------------- */

/* Path of `name` in the scratch directory; a few results stay valid at once. */
static const char *p(const char *name)
{
    static char slots[8][4400];
    static unsigned next;
    char *s = slots[next++ % 8];

    snprintf(s, sizeof(slots[0]), "%s/%s", dir, name);
    return s;
}

static void write_file(const char *name, const void *data, size_t len)
{
    FILE *f = fopen(p(name), "wb");

    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT_FATAL(len == 0 || fwrite(data, 1, len, f) == len);
    CU_ASSERT_FATAL(fclose(f) == 0);
}

/* Whole file, NUL-terminated, or NULL if it does not exist. */
static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t cap = 0, got = 0, r;

    if (f == NULL)
        return NULL;
    do {
        if (got + 4096 + 1 > cap) {
            cap = 2 * cap + 8192;
            buf = realloc(buf, cap);
            if (buf == NULL)
                abort();
        }
        r = fread(buf + got, 1, 4096, f);
        got += r;
    } while (r > 0);
    fclose(f);
    buf[got] = 0;
    if (len != NULL)
        *len = got;
    return buf;
}

static int exists(const char *name)
{
    struct stat st;

    return stat(p(name), &st) == 0;
}

static void remove_file(const char *name)
{
    unlink(p(name));
}

/* Temporary files the command might have left behind (it must not). */
static int leftovers(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        n += strstr(e->d_name, ".tmp-") != NULL;
    closedir(d);
    return n;
}

static void cleanup_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlink(p(e->d_name));
    closedir(d);
    rmdir(dir);
}

static void setup(void)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(dir, sizeof(dir), "%s/mpce-cli-XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        exit(1);
    }
    /* The user's own engine.conf must not change what the tests see, nor
     * the modules a `make install` put in the compiled-in plugin directory
     * (the README's demo does): no modules unless a test names them. The
     * scratch directory itself holds none. */
    snprintf(conf, sizeof(conf), "%s/engine.conf", dir);
    FILE *f = fopen(conf, "w");
    if (f == NULL ||
        fprintf(f, "[engine]\nuser_config = no\nplugin_path = %s\n[tune]\nmode = off\n", dir) < 0 ||
        fclose(f) != 0) {
        perror(conf);
        exit(1);
    }
    atexit(cleanup_dir);
}

/* ---- running the command ---------------------------------------------------- */

/* The environment minus MPCENGINE_* overrides, and with XDG dirs in the
 * scratch directory, so that the caller's settings cannot leak in. */
static char **child_env(void)
{
    static char *env[512];
    static char xdg_config[4300], xdg_cache[4300];
    size_t n = 0;

    snprintf(xdg_config, sizeof(xdg_config), "XDG_CONFIG_HOME=%s", dir);
    snprintf(xdg_cache, sizeof(xdg_cache), "XDG_CACHE_HOME=%s", dir);
    for (char **e = environ; *e != NULL && n < 508; e++)
        if (strncmp(*e, "MPCENGINE_", 10) != 0 && strncmp(*e, "XDG_CONFIG_HOME=", 16) != 0 &&
            strncmp(*e, "XDG_CACHE_HOME=", 15) != 0)
            env[n++] = *e;
    env[n++] = xdg_config;
    env[n++] = xdg_cache;
    env[n] = NULL;
    return env;
}

/* args as the command's argv: the binary first, --config appended unless
 * with_config is 0. */
static void build_argv(const char *const *args, int with_config, const char **argv)
{
    size_t n = 0;

    argv[n++] = MPCENGINE_BIN;
    for (; args[n - 1] != NULL; n++) {
        CU_ASSERT_FATAL(n <= MAX_ARGS);
        argv[n] = args[n - 1];
    }
    if (with_config) {
        argv[n++] = "--config";
        argv[n++] = conf;
    }
    argv[n] = NULL;
}

/* Run the command with argv (NULL-terminated) and --config appended unless
 * with_config is 0; returns its exit status (-1 if it died of a signal). */
static int run_argv(const char *const *args, int with_config)
{
    const char *argv[MAX_ARGS + 4];
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int status;

    build_argv(args, with_config, argv);

    CU_ASSERT_FATAL(posix_spawn_file_actions_init(&fa) == 0);
    posix_spawn_file_actions_addopen(&fa, 1, p("stdout.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, p("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(posix_spawn(&pid, MPCENGINE_BIN, &fa, NULL, (char *const *)argv,
                                child_env()) == 0);
    posix_spawn_file_actions_destroy(&fa);
    CU_ASSERT_FATAL(waitpid(pid, &status, 0) == pid);

    free(out_text);
    free(err_text);
    out_text = (char *)read_file(p("stdout.txt"), NULL);
    err_text = (char *)read_file(p("stderr.txt"), NULL);
    CU_ASSERT_FATAL(out_text != NULL && err_text != NULL);
    remove_file("stdout.txt");
    remove_file("stderr.txt");
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        fprintf(stderr, "  [mpcengine %s ... exit %d] %s", args[0], WEXITSTATUS(status),
                err_text);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run_va(int with_config, const char *first, va_list ap)
{
    const char *args[MAX_ARGS + 1];
    size_t n = 0;

    for (const char *a = first; a != NULL; a = va_arg(ap, const char *)) {
        CU_ASSERT_FATAL(n < MAX_ARGS);
        args[n++] = a;
    }
    args[n] = NULL;
    return run_argv(args, with_config);
}

static int run_cli(const char *first, ...)
{
    va_list ap;
    int rc;

    va_start(ap, first);
    rc = run_va(1, first, ap);
    va_end(ap);
    return rc;
}

#define CLI(...) run_cli(__VA_ARGS__, (const char *)NULL)

/* The last run failed as promised: `status`, one line on stderr naming the
 * command and mentioning `needle`, nothing on disk. */
static void assert_refused(int rc, int status, const char *prog, const char *needle,
                           const char *out_name)
{
    CU_ASSERT_EQUAL(rc, status);
    CU_ASSERT(strncmp(err_text, prog, strlen(prog)) == 0);
    CU_ASSERT(strchr(err_text, '\n') != NULL && strchr(err_text, '\n')[1] == '\0');
    if (needle != NULL && strstr(err_text, needle) == NULL) {
        CU_FAIL("message does not mention the expected text");
        fprintf(stderr, "  wanted '%s' in: %s", needle, err_text);
    }
    if (out_name != NULL)
        CU_ASSERT(!exists(out_name));
    CU_ASSERT_EQUAL(leftovers(), 0);
}

/* ---- vector helpers ----------------------------------------------------------- */

static void load(const char *name, struct mpce_kat_set *set)
{
    CU_ASSERT_FATAL(mpce_kat_load(name, set) == 0);
    CU_ASSERT_FATAL(set->count > 0);
}

static const char *field(const struct mpce_kat_record *r, const char *name)
{
    const char *v = mpce_kat_get(r, name);

    CU_ASSERT_FATAL(v != NULL);
    return v;
}

static uint8_t *hex_field(const struct mpce_kat_record *r, const char *name, size_t *len)
{
    uint8_t *b = NULL;

    CU_ASSERT_FATAL(mpce_kat_hex(r, name, &b, len) == 0);
    return b;
}

/* The file `name` holds exactly the bytes of hex field `fname`. */
static void assert_file_is(const char *name, const struct mpce_kat_record *r, const char *fname)
{
    size_t want_len, got_len = 0;
    uint8_t *want = hex_field(r, fname, &want_len);
    uint8_t *got = read_file(p(name), &got_len);

    CU_ASSERT_FATAL(got != NULL);
    CU_ASSERT_EQUAL(got_len, want_len);
    if (got_len != want_len || memcmp(got, want, want_len) != 0) {
        CU_FAIL("output differs from the vector");
        fprintf(stderr, "  %s:%u: %s\n", r->file, r->line, fname);
    }
    free(got);
    free(want);
}

/* "a b c" -> "a,b,c" (decimal lists), malloc'd. */
static char *commas(const char *list)
{
    char *s = strdup(list);

    if (s == NULL)
        abort();
    for (char *c = s; *c; c++)
        if (*c == ' ')
            *c = ',';
    return s;
}

/* Concatenated 32-digit hex blocks -> comma-separated, malloc'd. */
static char *split_blocks(const char *hex)
{
    size_t n = strlen(hex) / 32;
    char *s = malloc(n * 33 + 1);

    if (s == NULL)
        abort();
    for (size_t i = 0; i < n; i++) {
        memcpy(s + 33 * i, hex + 32 * i, 32);
        s[33 * i + 32] = i + 1 < n ? ',' : '\0';
    }
    return s;
}

/* A decimal list written as little-endian uint64 words. */
static void write_words(const char *name, const struct mpce_kat_record *r, const char *fname)
{
    uint64_t *v = NULL;
    size_t n = 0;

    CU_ASSERT_FATAL(mpce_kat_u64_list(r, fname, &v, &n) == 0);
    uint8_t *b = malloc(8 * n);
    CU_ASSERT_FATAL(b != NULL);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 8; k++)
            b[8 * i + (size_t)k] = (uint8_t)(v[i] >> (8 * k));
    write_file(name, b, 8 * n);
    free(b);
    free(v);
}

static void assert_words(const char *name, const struct mpce_kat_record *r, const char *fname)
{
    uint64_t *v = NULL;
    size_t n = 0, len = 0;

    CU_ASSERT_FATAL(mpce_kat_u64_list(r, fname, &v, &n) == 0);
    uint8_t *b = read_file(p(name), &len);
    CU_ASSERT_FATAL(b != NULL);
    CU_ASSERT_EQUAL_FATAL(len, 8 * n);
    for (size_t i = 0; i < n; i++) {
        uint64_t w = 0;
        for (int k = 7; k >= 0; k--)
            w = w << 8 | b[8 * i + (size_t)k];
        if (w != v[i]) {
            CU_FAIL("NTT output differs from the vector");
            fprintf(stderr, "  %s:%u: %s[%zu]\n", r->file, r->line, fname, i);
            break;
        }
    }
    free(b);
    free(v);
}

static void write_hex_field(const char *name, const struct mpce_kat_record *r, const char *fname)
{
    size_t len;
    uint8_t *b = hex_field(r, fname, &len);

    write_file(name, b, len);
    free(b);
}

static int sha256_matches(const char *name, const struct mpce_kat_record *r, const char *fname)
{
    size_t len = 0, want_len = 0;
    uint8_t *data = read_file(p(name), &len);
    uint8_t *want = hex_field(r, fname, &want_len);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    int ok = data != NULL && want_len == 32 &&
             EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) == 1 && mdlen == 32 &&
             memcmp(md, want, 32) == 0;

    free(data);
    free(want);
    return ok;
}

/* ---- list and selftest --------------------------------------------------------- */

static void test_list(void)
{
    CU_ASSERT_EQUAL(CLI("list", "--json"), 0);
    const char *s = out_text;
    while (*s == ' ' || *s == '\n')
        s++;
    CU_ASSERT(*s == '[');
    const char *end = out_text + strlen(out_text);
    while (end > s && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    CU_ASSERT(end > s && end[-1] == ']');
    CU_ASSERT(strstr(out_text, "\"prg-soft-bitslice\"") != NULL);
    CU_ASSERT(strstr(out_text, "\"selftest\": \"pass\"") != NULL);
    CU_ASSERT(strstr(out_text, "\"class\": \"portable\"") != NULL);
    CU_ASSERT(strstr(out_text, "\"memory\": \"host\"") != NULL);

    CU_ASSERT_EQUAL(CLI("list"), 0);
    CU_ASSERT(strstr(out_text, "IMPL") != NULL);
    CU_ASSERT(strstr(out_text, "CLASS") != NULL);
    CU_ASSERT(strstr(out_text, "MEMORY") != NULL);
    CU_ASSERT(strstr(out_text, "prg-soft-bitslice") != NULL);
    CU_ASSERT(strstr(out_text, "dpf-soft") != NULL);

    CU_ASSERT_EQUAL(CLI("list", "--impl", "ntt-soft"), 0);
    CU_ASSERT(strstr(out_text, "ntt-soft") != NULL);
    CU_ASSERT(strstr(out_text, "prg-soft-bitslice") == NULL);
    assert_refused(CLI("list", "--impl", "no-such-impl"), 1, "mpcengine list: ", "no-such-impl",
                   NULL);
}

/* --plugin-path works for every command, and a relative directory is taken
 * from the working directory (the library itself wants absolute ones). */
static void test_plugin_path(void)
{
    char plug[4200], cwd[4096], rel[8400];
    snprintf(plug, sizeof(plug), "%s/plug", dir);
    CU_ASSERT_FATAL(mkdir(plug, 0755) == 0);
    char *so = tu_copy_into(GOOD_MODULE_SO, plug, 0644);
    /* plug as seen from here: up to / and down again. */
    CU_ASSERT_FATAL(getcwd(cwd, sizeof(cwd)) != NULL);
    size_t used = 0;
    for (const char *c = cwd; *c; c++)
        if (*c == '/' && c[1])
            used += (size_t)snprintf(rel + used, sizeof(rel) - used, "../");
    snprintf(rel + used, sizeof(rel) - used, "%s", plug + 1);
    CU_ASSERT_EQUAL(CLI("list", "--plugin-path", rel), 0);
    CU_ASSERT(strstr(out_text, "prg-test-good") != NULL);
    CU_ASSERT_EQUAL(CLI("selftest", "--plugin-path", rel), 0);
    CU_ASSERT(strstr(out_text, "prg-test-good") != NULL);
    CU_ASSERT_EQUAL(CLI("config", "--plugin-path", plug), 0);
    CU_ASSERT(strstr(out_text, plug) != NULL); /* the setting, with its source */
    CU_ASSERT(strstr(out_text, "(--plugin-path") != NULL);
    CU_ASSERT(strstr(out_text, "mpce_options") == NULL);
    unlink(so);
    free(so);
    rmdir(plug);
}

static void test_selftest(void)
{
    CU_ASSERT_EQUAL(CLI("selftest"), 0);
    CU_ASSERT(strstr(out_text, "pass") != NULL);
    CU_ASSERT(strstr(out_text, "prg-soft-bitslice") != NULL);
    CU_ASSERT_EQUAL(CLI("selftest", "--impl", "lpn-soft"), 0);
    CU_ASSERT(strstr(out_text, "lpn-soft") != NULL);
    CU_ASSERT(strstr(out_text, "dpf-soft") == NULL);
    assert_refused(CLI("selftest", "--impl", "no-such-impl"), 1, "mpcengine selftest: ", NULL,
                   NULL);
}

static void test_help(void)
{
    static const char *const cmds[][2] = {
        {"list", NULL},   {"selftest", NULL}, {"prg", "ecb"},     {"prg", "mmo"},
        {"prg", "ctr"},   {"ntt", "forward"}, {"ntt", "inverse"}, {"ntt", "mul"},
        {"lpn", NULL},    {"dpf", "gen"},     {"dpf", "eval"},    {"dpf", "evalall"},
    };
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        const char *args[] = {cmds[i][0], cmds[i][1] ? cmds[i][1] : "--help",
                              cmds[i][1] ? "--help" : NULL, NULL};
        CU_ASSERT_EQUAL(run_argv(args, 0), 0);
        CU_ASSERT(strncmp(out_text, "usage: mpcengine ", 17) == 0);
        CU_ASSERT(strstr(out_text, "--impl") != NULL);
        CU_ASSERT(err_text[0] == '\0');
    }
    CU_ASSERT_EQUAL(run_cli("--help", (const char *)NULL), 0);
    CU_ASSERT(strstr(out_text, "dpf gen") != NULL);
    CU_ASSERT_EQUAL(run_cli("prg", "--help", (const char *)NULL), 0);
    CU_ASSERT(strstr(out_text, "prg ctr") != NULL);
}

/* ---- PRG ---------------------------------------------------------------------- */

static void test_prg(void)
{
    struct mpce_kat_set set;
    size_t ecb = 0, mmo = 0, ctr = 0;

    load("prg.txt", &set);
    for (size_t i = 0; i < set.count; i++) {
        const struct mpce_kat_record *r = &set.records[i];
        remove_file("out.bin");
        if (strcmp(r->op, "ecb") == 0) {
            write_hex_field("in.bin", r, "in");
            /* every other record through a named implementation */
            const char *impl = ecb++ % 2 ? "prg-soft-bitslice" : "auto";
            CU_ASSERT_EQUAL(CLI("prg", "ecb", "--key", field(r, "key"), "--in", p("in.bin"),
                                "--out", p("out.bin"), "--impl", impl),
                            0);
        } else if (strcmp(r->op, "mmo") == 0) {
            char *keys = split_blocks(field(r, "keys"));
            write_hex_field("in.bin", r, "in");
            CU_ASSERT_EQUAL(CLI("prg", "mmo", "--keys", keys, "--in", p("in.bin"), "--out",
                                p("out.bin")),
                            0);
            free(keys);
            mmo++;
        } else if (strcmp(r->op, "ctr") == 0) {
            CU_ASSERT_EQUAL(CLI("prg", "ctr", "--key", field(r, "key"), "--counter",
                                field(r, "c0"), "--blocks", field(r, "n"), "--out", p("out.bin")),
                            0);
            ctr++;
        } else {
            continue;
        }
        assert_file_is("out.bin", r, "out");
        CU_ASSERT_EQUAL(out_text[0], '\0');
    }
    CU_ASSERT(ecb > 0 && mmo > 0 && ctr > 0);
    mpce_kat_free(&set);
}

/* ---- NTT ---------------------------------------------------------------------- */

static void test_ntt(void)
{
    struct mpce_kat_set set;
    size_t ran = 0;

    load("ntt.txt", &set);
    for (size_t i = 0; i < set.count; i++) {
        const struct mpce_kat_record *r = &set.records[i];
        const char *op = r->op;
        char *moduli;
        const char *batch = "1";

        if (strcmp(op, "rns_forward") == 0) {
            moduli = commas(field(r, "moduli"));
            batch = field(r, "B");
        } else if (strcmp(op, "forward") == 0 || strcmp(op, "inverse") == 0 ||
                   strcmp(op, "mul") == 0) {
            moduli = commas(field(r, "q"));
        } else {
            continue;
        }
        remove_file("out.bin");
        if (strcmp(op, "mul") == 0) {
            write_words("a.bin", r, "a");
            write_words("b.bin", r, "b");
            CU_ASSERT_EQUAL(CLI("ntt", "mul", "--n", field(r, "N"), "--moduli", moduli, "--batch",
                                batch, "--in", p("a.bin"), "--in2", p("b.bin"), "--out",
                                p("out.bin")),
                            0);
            assert_words("out.bin", r, "out");
        } else {
            const char *dir_op = strcmp(op, "inverse") == 0 ? "inverse" : "forward";
            const char *back = strcmp(op, "inverse") == 0 ? "forward" : "inverse";
            write_words("in.bin", r, "in");
            CU_ASSERT_EQUAL(CLI("ntt", dir_op, "--n", field(r, "N"), "--moduli", moduli,
                                "--batch", batch, "--in", p("in.bin"), "--out", p("out.bin")),
                            0);
            assert_words("out.bin", r, "out");
            /* and back again, in place */
            CU_ASSERT_EQUAL(CLI("ntt", back, "--n", field(r, "N"), "--moduli", moduli,
                                "--batch", batch, "--in", p("out.bin"), "--out", p("out.bin")),
                            0);
            assert_words("out.bin", r, "in");
        }
        free(moduli);
        ran++;
    }
    CU_ASSERT(ran >= 4);
    mpce_kat_free(&set);
}

/* ---- LPN ---------------------------------------------------------------------- */

static void test_lpn(void)
{
    struct mpce_kat_set set;
    size_t ran = 0;

    load("lpn.txt", &set);
    for (size_t i = 0; i < set.count; i++) {
        const struct mpce_kat_record *r = &set.records[i];
        if (strcmp(r->op, "fold") != 0)
            continue;
        if (mpce_kat_get(r, "pre") != NULL) {
            write_hex_field("table.bin", r, "pre");
        } else {
            /* The table is itself a PRG stream: build it with the command. */
            char blocks[32];
            uint64_t logk = 0;
            CU_ASSERT_FATAL(mpce_kat_u64(r, "logk", &logk) == 0);
            snprintf(blocks, sizeof(blocks), "%llu", 1ULL << logk);
            CU_ASSERT_EQUAL(CLI("prg", "ctr", "--key", field(r, "pre_ctr_key"), "--counter", "0",
                                "--blocks", blocks, "--out", p("table.bin")),
                            0);
            CU_ASSERT(sha256_matches("table.bin", r, "pre_sha256"));
        }
        write_hex_field("in.bin", r, "out_in");
        remove_file("out.bin");
        CU_ASSERT_EQUAL(CLI("lpn", "--seed", field(r, "seed"), "--logk", field(r, "logk"),
                            "--counter", field(r, "c0"), "--table", p("table.bin"), "--in",
                            p("in.bin"), "--out", p("out.bin")),
                        0);
        assert_file_is("out.bin", r, "out");
        CU_ASSERT_EQUAL(strtoull(out_text, NULL, 10), strtoull(field(r, "blocks_consumed"), NULL, 10));
        CU_ASSERT(strchr(out_text, '\n') != NULL && strchr(out_text, '\n')[1] == '\0');
        ran++;
    }
    CU_ASSERT(ran >= 5);
    mpce_kat_free(&set);
}

/* ---- DPF ---------------------------------------------------------------------- */

static void test_dpf(void)
{
    struct mpce_kat_set set;
    size_t ran = 0;

    load("dpf.txt", &set);
    for (size_t i = 0; i < set.count; i++) {
        const struct mpce_kat_record *r = &set.records[i];
        if (strcmp(r->op, "dpf") != 0)
            continue;
        int bytes = strcmp(field(r, "group"), "bytes") == 0;
        char prg_keys[80], seeds[80];
        snprintf(prg_keys, sizeof(prg_keys), "%s,%s", field(r, "kL"), field(r, "kR"));
        snprintf(seeds, sizeof(seeds), "%s,%s", field(r, "seed0"), field(r, "seed1"));
        remove_file("k0.bin");
        remove_file("k1.bin");
        CU_ASSERT_EQUAL(CLI("dpf", "gen", "--bits", field(r, "n"), "--alpha", field(r, "alpha"),
                            "--beta", field(r, bytes ? "beta" : "beta_u64"), "--group",
                            field(r, "group"), "--prg-keys", prg_keys, "--seeds", seeds, "--out0",
                            p("k0.bin"), "--out1", p("k1.bin")),
                        0);
        assert_file_is("k0.bin", r, "key0");
        assert_file_is("k1.bin", r, "key1");

        char *points = commas(field(r, "eval_x"));
        for (int party = 0; party < 2; party++) {
            const char *key = party ? p("k1.bin") : p("k0.bin");
            remove_file("out.bin");
            CU_ASSERT_EQUAL(CLI("dpf", "eval", "--key", key, "--points", points, "--out",
                                p("out.bin")),
                            0);
            assert_file_is("out.bin", r, party ? "eval1" : "eval0");
        }
        free(points);

        uint64_t n = 0;
        CU_ASSERT_FATAL(mpce_kat_u64(r, "n", &n) == 0);
        if (n <= 16) { /* the larger domains only cost time here */
            for (int party = 0; party < 2; party++) {
                remove_file("out.bin");
                CU_ASSERT_EQUAL(CLI("dpf", "evalall", "--key", party ? p("k1.bin") : p("k0.bin"),
                                    "--out", p("out.bin")),
                                0);
                CU_ASSERT(sha256_matches("out.bin", r,
                                         party ? "evalall1_sha256" : "evalall0_sha256"));
            }
        }
        ran++;
    }
    CU_ASSERT(ran >= 4);
    mpce_kat_free(&set);
}

/* Without --seeds the engine draws them: two runs differ, and the shares
 * still reconstruct beta at alpha and 0 elsewhere. */
static void test_dpf_random_seeds(void)
{
    size_t l0, l1, len0 = 0, len1 = 0;

    CU_ASSERT_EQUAL(CLI("dpf", "gen", "--bits", "10", "--alpha", "0x2a", "--beta", "1000",
                        "--group", "u64", "--out0", p("k0.bin"), "--out1", p("k1.bin")),
                    0);
    uint8_t *k0 = read_file(p("k0.bin"), &l0), *k1 = read_file(p("k1.bin"), &l1);
    CU_ASSERT_FATAL(k0 != NULL && k1 != NULL);
    CU_ASSERT(l0 == l1 && memcmp(k0 + 40, k1 + 40, 16) != 0);
    CU_ASSERT_EQUAL(CLI("dpf", "eval", "--key", p("k0.bin"), "--points", "42,43,1023", "--out",
                        p("e0.bin")),
                    0);
    CU_ASSERT_EQUAL(CLI("dpf", "eval", "--key", p("k1.bin"), "--points", "42,43,1023", "--out",
                        p("e1.bin")),
                    0);
    uint8_t *e0 = read_file(p("e0.bin"), &len0), *e1 = read_file(p("e1.bin"), &len1);
    CU_ASSERT_FATAL(e0 != NULL && e1 != NULL && len0 == 24 && len1 == 24);
    for (int pt = 0; pt < 3; pt++) {
        uint64_t a = 0, b = 0;
        for (int k = 7; k >= 0; k--) {
            a = a << 8 | e0[8 * pt + k];
            b = b << 8 | e1[8 * pt + k];
        }
        CU_ASSERT_EQUAL(a + b, pt == 0 ? 1000u : 0u);
    }
    free(k0);
    free(k1);
    free(e0);
    free(e1);
}

/* ---- refusals ------------------------------------------------------------------ */

static const char key32[] = "000102030405060708090a0b0c0d0e0f";

/* Earlier tests leave outputs behind; a refusal must not create them. */
static void no_outputs(void)
{
    remove_file("out.bin");
    remove_file("k0.bin");
    remove_file("k1.bin");
}

static void test_bad_sizes(void)
{
    uint8_t buf[4096] = {0};

    no_outputs();

    write_file("in17.bin", buf, 17);
    assert_refused(CLI("prg", "ecb", "--key", key32, "--in", p("in17.bin"), "--out", p("out.bin")),
                   2, "mpcengine prg ecb: --in: ", "multiple of 16", "out.bin");
    write_file("empty.bin", buf, 0);
    assert_refused(CLI("prg", "mmo", "--keys", key32, "--in", p("empty.bin"), "--out",
                       p("out.bin")),
                   2, "mpcengine prg mmo: --in: ", "0 bytes", "out.bin");
    /* N = 8, one modulus, batch 2: 128 bytes, not 120 */
    write_file("ntt.bin", buf, 120);
    assert_refused(CLI("ntt", "forward", "--n", "8", "--moduli", "0x1fffffffffe00001", "--batch",
                       "2", "--in", p("ntt.bin"), "--out", p("out.bin")),
                   2, "mpcengine ntt forward: --in: ", "128", "out.bin");
    write_file("ntt.bin", buf, 128);
    write_file("ntt2.bin", buf, 64);
    assert_refused(CLI("ntt", "mul", "--n", "8", "--moduli", "0x1fffffffffe00001", "--batch", "2",
                       "--in", p("ntt.bin"), "--in2", p("ntt2.bin"), "--out", p("out.bin")),
                   2, "mpcengine ntt mul: --in2: ", NULL, "out.bin");
    /* logk 4: the table must be 256 bytes */
    write_file("table.bin", buf, 240);
    write_file("in.bin", buf, 32);
    assert_refused(CLI("lpn", "--seed", key32, "--logk", "4", "--counter", "0", "--table",
                       p("table.bin"), "--in", p("in.bin"), "--out", p("out.bin")),
                   2, "mpcengine lpn: --table: ", "256", "out.bin");
    assert_refused(CLI("prg", "ecb", "--key", key32, "--in", p("missing.bin"), "--out",
                       p("out.bin")),
                   2, "mpcengine prg ecb: --in: ", "missing.bin", "out.bin");
}

static void test_bad_values(void)
{
    uint8_t buf[64] = {0};

    no_outputs();

    write_file("in.bin", buf, 32);
    assert_refused(CLI("prg", "ecb", "--key", "000102030405060708090a0b0c0d0e0", "--in",
                       p("in.bin"), "--out", p("out.bin")),
                   2, "mpcengine prg ecb: ", "--key: expected 32 hex digits, got 31", "out.bin");
    assert_refused(CLI("prg", "ecb", "--key", "000102030405060708090a0b0c0d0e0g", "--in",
                       p("in.bin"), "--out", p("out.bin")),
                   2, "mpcengine prg ecb: --key: ", "not a hex digit", "out.bin");
    assert_refused(CLI("prg", "mmo", "--keys", "00000000000000000000000000000000,zz", "--in",
                       p("in.bin"), "--out", p("out.bin")),
                   2, "mpcengine prg mmo: --keys: value 2", NULL, "out.bin");
    assert_refused(CLI("prg", "ctr", "--key", key32, "--counter", "18446744073709551616",
                       "--blocks", "1", "--out", p("out.bin")),
                   2, "mpcengine prg ctr: --counter: ", NULL, "out.bin");
    assert_refused(CLI("prg", "ctr", "--key", key32, "--counter", "-1", "--blocks", "1", "--out",
                       p("out.bin")),
                   2, "mpcengine prg ctr: --counter: ", NULL, "out.bin");
    assert_refused(CLI("prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "0", "--out",
                       p("out.bin")),
                   2, "mpcengine prg ctr: --blocks: ", NULL, "out.bin");
    write_file("table.bin", buf, 32);
    assert_refused(CLI("lpn", "--seed", key32, "--logk", "31", "--counter", "0", "--table",
                       p("table.bin"), "--in", p("in.bin"), "--out", p("out.bin")),
                   2, "mpcengine lpn: --logk: ", "[1, 30]", "out.bin");
    assert_refused(CLI("lpn", "--seed", key32, "--logk", "0", "--counter", "0", "--table",
                       p("table.bin"), "--in", p("in.bin"), "--out", p("out.bin")),
                   2, "mpcengine lpn: --logk: ", NULL, "out.bin");
    assert_refused(CLI("dpf", "gen", "--bits", "65", "--alpha", "0", "--beta", "1", "--group",
                       "u64", "--out0", p("k0.bin"), "--out1", p("k1.bin")),
                   2, "mpcengine dpf gen: --bits: ", "[1, 64]", "k0.bin");
    CU_ASSERT(!exists("k1.bin"));
    assert_refused(CLI("dpf", "gen", "--bits", "8", "--alpha", "256", "--beta", "1", "--group",
                       "u64", "--out0", p("k0.bin"), "--out1", p("k1.bin")),
                   2, "mpcengine dpf gen: --alpha: ", "[0, 255]", "k0.bin");
    /* Both keys into one file would leave only key1 there, and exit 0. */
    assert_refused(CLI("dpf", "gen", "--bits", "8", "--alpha", "1", "--beta", "1", "--group",
                       "u64", "--out0", p("k0.bin"), "--out1", p("k0.bin")),
                   2, "mpcengine dpf gen: --out0 and --out1 name the same file", NULL, "k0.bin");
    assert_refused(CLI("dpf", "gen", "--bits", "8", "--alpha", "1", "--beta", "1", "--group",
                       "ring", "--out0", p("k0.bin"), "--out1", p("k1.bin")),
                   2, "mpcengine dpf gen: --group: ", NULL, "k0.bin");
    assert_refused(CLI("dpf", "gen", "--bits", "8", "--alpha", "1", "--beta", key32, "--group",
                       "bytes", "--seeds", key32, "--out0", p("k0.bin"), "--out1", p("k1.bin")),
                   2, "mpcengine dpf gen: --seeds: ", NULL, "k0.bin");
    assert_refused(CLI("ntt", "forward", "--n", "12", "--moduli", "97", "--batch", "1", "--in",
                       p("in.bin"), "--out", p("out.bin")),
                   2, "mpcengine ntt forward: --n: ", "power of two", "out.bin");
    assert_refused(CLI("ntt", "forward", "--n", "8", "--moduli", "0x2000000000000001", "--batch",
                       "1", "--in", p("in.bin"), "--out", p("out.bin")),
                   2, "mpcengine ntt forward: --moduli: ", NULL, "out.bin");
}

static void test_bad_usage(void)
{
    uint8_t buf[32] = {0};

    no_outputs();

    write_file("in.bin", buf, 32);
    assert_refused(CLI("prg", "ecb", "--key", key32, "--in", p("in.bin"), "--out", p("out.bin"),
                       "--frobnicate"),
                   2, "mpcengine prg ecb: ", "--frobnicate", "out.bin");
    assert_refused(CLI("prg", "ecb", "--key", key32, "--out", p("out.bin")), 2,
                   "mpcengine prg ecb: ", "--in", "out.bin");
    assert_refused(CLI("prg", "ecb", "--key", key32, "--key", key32, "--in", p("in.bin"), "--out",
                       p("out.bin")),
                   2, "mpcengine prg ecb: ", "twice", "out.bin");
    assert_refused(CLI("prg", "ecb", "stray", "--key", key32, "--in", p("in.bin"), "--out",
                       p("out.bin")),
                   2, "mpcengine prg ecb: ", "stray", "out.bin");
    assert_refused(CLI("prg", "ecb", "--key", key32, "--in", p("in.bin"), "--out"), 2,
                   "mpcengine prg ecb: ", "--out", NULL);
    assert_refused(CLI("prg", "cbc"), 2, "mpcengine prg: ", "cbc", NULL);
    assert_refused(CLI("prg"), 2, "mpcengine prg: ", NULL, NULL);
    assert_refused(CLI("frobnicate"), 2, "mpcengine: ", "frobnicate", NULL);
    assert_refused(CLI("list", "--json=yes"), 2, "mpcengine list: ", NULL, NULL);
}

/* mpcengine config: files, settings with their sources, and the routes. */
static void test_config(void)
{
    char where[4300];
    snprintf(where, sizeof(where), "(%s:2)", conf);
    CU_ASSERT_EQUAL(CLI("config"), 0);
    CU_ASSERT(strstr(out_text, conf) != NULL);
    CU_ASSERT(strstr(out_text, "[engine] user_config = no") != NULL);
    CU_ASSERT(strstr(out_text, where) != NULL);
    CU_ASSERT(strstr(out_text, "[engine] strict = no") != NULL);
    CU_ASSERT(strstr(out_text, "(default)") != NULL);
    CU_ASSERT(strstr(out_text, "prg.ecb") != NULL);
    CU_ASSERT(strstr(out_text, "dpf.evalall") != NULL);
    CU_ASSERT(strstr(out_text, "large") != NULL);
    CU_ASSERT(strstr(out_text, "priority;") != NULL);
    CU_ASSERT_EQUAL(CLI("config", "--json"), 0);
    CU_ASSERT(strstr(out_text, "\"files\": [") != NULL);
    CU_ASSERT(strstr(out_text, "\"settings\": [") != NULL);
    CU_ASSERT(strstr(out_text, "\"routes\": [") != NULL);
    CU_ASSERT(strstr(out_text, "\"size_class\": \"tiny\"") != NULL);
    assert_refused(CLI("config", "--impl", "prg-soft-bitslice"), 2, "mpcengine config: ",
                   "--impl", NULL);
    /* Standard input is no configuration file: said before any engine starts. */
    const char *const conf_stdin[] = {"config", "--config", "-", NULL};
    assert_refused(run_argv(conf_stdin, 0), 2, "mpcengine config: ",
                   "--config -: the configuration must be a file", NULL);
    const char *const list_stdin[] = {"list", "--config=-", NULL};
    assert_refused(run_argv(list_stdin, 0), 2, "mpcengine list: ", "save it to a file", NULL);
}

/* The library writes nothing itself; the command prints its warnings. */
static void test_warnings_printed(void)
{
    char odd[4300];
    snprintf(odd, sizeof(odd), "%s/odd.conf", dir);
    tu_write_text(odd, "[engine]\nuser_config = no\nfrobnicate = 1\n", 0644);
    const char *args[] = {"list", "--config", odd, NULL};
    CU_ASSERT_EQUAL(run_argv(args, 0), 0);
    CU_ASSERT(strstr(err_text, "mpcengine: warning: ") != NULL);
    CU_ASSERT(strstr(err_text, "odd.conf:3: unknown key 'frobnicate'") != NULL);
    unlink(odd);
}

/* A pin naming nothing usable (its plugin removed) fails only the calls it
 * routes; list and selftest still succeed but say so, once per pin. */
static void test_dangling_pin_warns(void)
{
    char pinned[4300];
    snprintf(pinned, sizeof(pinned), "%s/dangling.conf", dir);
    tu_write_text(pinned, "[engine]\nuser_config = no\n[pins]\nprg.ecb = prg-removed\n", 0644);
    static const char *const cmds[] = {"list", "selftest"};
    for (int c = 0; c < 2; c++) {
        const char *args[] = {cmds[c], "--config", pinned, NULL};
        CU_ASSERT_EQUAL(run_argv(args, 0), 0);
        const char *w = strstr(err_text, ": warning: [pins] prg.ecb = prg-removed (");
        CU_ASSERT_PTR_NOT_NULL(w);
        CU_ASSERT(strstr(err_text, "dangling.conf:4): unusable: no implementation of that "
                                   "name; the calls it routes fail") != NULL);
        if (w)
            CU_ASSERT_PTR_NULL(strstr(w + 1, ": warning: [pins] prg.ecb")); /* once */
    }
    unlink(pinned);
}

static void test_engine_refusals(void)
{
    uint8_t buf[64] = {0};

    no_outputs();

    assert_refused(CLI("prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4", "--out",
                       p("out.bin"), "--impl", "no-such-impl"),
                   1, "mpcengine prg ctr: ", NULL, "out.bin");
    /* a name that exists but belongs to another primitive */
    assert_refused(CLI("prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4", "--out",
                       p("out.bin"), "--impl", "ntt-soft"),
                   1, "mpcengine prg ctr: ", NULL, "out.bin");
    /* 33 = 1 mod 16 but is not prime */
    write_file("in.bin", buf, 64);
    assert_refused(CLI("ntt", "forward", "--n", "8", "--moduli", "33", "--batch", "1", "--in",
                       p("in.bin"), "--out", p("out.bin")),
                   1, "mpcengine ntt forward: ", NULL, "out.bin");
    /* a coefficient not reduced mod q: 97 = 1 mod 16 */
    memset(buf, 0xff, 8);
    write_file("in.bin", buf, 64);
    assert_refused(CLI("ntt", "forward", "--n", "8", "--moduli", "97", "--batch", "1", "--in",
                       p("in.bin"), "--out", p("out.bin")),
                   1, "mpcengine ntt forward: ", NULL, "out.bin");
    /* a truncated key (private, or a warning line comes first) */
    write_file("key.bin", "MDPF\x01\x08\x00\x00", 8);
    CU_ASSERT_FATAL(chmod(p("key.bin"), 0600) == 0);
    assert_refused(CLI("dpf", "eval", "--key", p("key.bin"), "--points", "1", "--out",
                       p("out.bin")),
                   1, "mpcengine dpf eval: ", NULL, "out.bin");

    /* An existing output survives a failed run untouched. */
    write_file("out.bin", "keep", 4);
    assert_refused(CLI("prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4", "--out",
                       p("out.bin"), "--impl", "no-such-impl"),
                   1, "mpcengine prg ctr: ", NULL, NULL);
    size_t len = 0;
    uint8_t *kept = read_file(p("out.bin"), &len);
    CU_ASSERT(kept != NULL && len == 4 && memcmp(kept, "keep", 4) == 0);
    free(kept);
    remove_file("out.bin");

    /* A configuration file that does not exist is the engine's to refuse. */
    const char *args[] = {"prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4",
                          "--out", p("out.bin"), "--config", p("no-such.conf"), NULL};
    CU_ASSERT_NOT_EQUAL(run_argv(args, 0), 0);
    CU_ASSERT(!exists("out.bin"));
    CU_ASSERT_EQUAL(leftovers(), 0);
    /* Named as the user gave it, not as the library's option field. */
    CU_ASSERT(strstr(err_text, "(named by --config)") != NULL);
    CU_ASSERT(strstr(err_text, "mpce_options") == NULL);
}


/* ---- standard input and output ------------------------------------------------ */

static uint8_t *out_bin; /* stdout of the last run_pipes, as bytes */
static size_t out_bin_len;

/* write() that a reader gone early fails with EPIPE instead of killing the
 * test (a disposition set only around the call: the command must meet
 * SIGPIPE's default). */
static ssize_t write_nosig(int fd, const void *buf, size_t len)
{
    struct sigaction ignore, old;
    memset(&ignore, 0, sizeof(ignore));
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old);
    ssize_t w = write(fd, buf, len);
    int err = errno;
    sigaction(SIGPIPE, &old, NULL);
    errno = err;
    return w;
}

/*
 * Run the command with standard input fed `in` (in_len bytes) through a pipe
 * (in NULL: /dev/null) and standard output read back through another pipe
 * into out_bin; stderr into err_text. reader_gone: the reading end of
 * stdout is closed before the command writes, as `| head -c0` would.
 * Returns the exit status (-1 if it died of a signal).
 */
static int run_pipes(const char *const *args, int with_config, const void *in, size_t in_len,
                     int reader_gone)
{
    const char *argv[MAX_ARGS + 4];
    posix_spawn_file_actions_t fa;
    int inp[2], outp[2], status;
    pid_t pid;

    build_argv(args, with_config, argv);
    CU_ASSERT_FATAL(pipe2(inp, O_CLOEXEC) == 0 && pipe2(outp, O_CLOEXEC) == 0);
    CU_ASSERT_FATAL(posix_spawn_file_actions_init(&fa) == 0);
    if (in != NULL)
        posix_spawn_file_actions_adddup2(&fa, inp[0], 0);
    else
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, p("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(posix_spawn(&pid, MPCENGINE_BIN, &fa, NULL, (char *const *)argv,
                                child_env()) == 0);
    posix_spawn_file_actions_destroy(&fa);
    close(inp[0]);
    close(outp[1]);
    int to_child = inp[1], from_child = outp[0];
    if (in == NULL) {
        close(to_child);
        to_child = -1;
    } else {
        fcntl(to_child, F_SETFL, O_NONBLOCK);
    }
    if (reader_gone) {
        close(from_child);
        from_child = -1;
    }

    size_t sent = 0, cap = 0;
    free(out_bin);
    out_bin = NULL;
    out_bin_len = 0;
    /* Both at once: a command that writes before it has read everything
     * must not deadlock the test. */
    while (to_child >= 0 || from_child >= 0) {
        struct pollfd pf[2];
        nfds_t n = 0;
        if (to_child >= 0)
            pf[n++] = (struct pollfd){to_child, POLLOUT, 0};
        if (from_child >= 0)
            pf[n++] = (struct pollfd){from_child, POLLIN, 0};
        if (poll(pf, n, -1) < 0) {
            CU_ASSERT_FATAL(errno == EINTR);
            continue;
        }
        for (nfds_t i = 0; i < n; i++) {
            if (pf[i].revents == 0)
                continue;
            if (pf[i].fd == to_child) {
                ssize_t w = write_nosig(to_child, (const uint8_t *)in + sent, in_len - sent);
                if (w > 0)
                    sent += (size_t)w;
                if (sent == in_len || (w < 0 && errno != EAGAIN && errno != EINTR)) {
                    close(to_child);
                    to_child = -1;
                }
            } else {
                if (out_bin_len + 65536 + 1 > cap) {
                    cap = 2 * cap + 65536 + 1;
                    out_bin = realloc(out_bin, cap);
                    CU_ASSERT_FATAL(out_bin != NULL);
                }
                ssize_t r = read(from_child, out_bin + out_bin_len, 65536);
                if (r > 0) {
                    out_bin_len += (size_t)r;
                } else if (r == 0 || errno != EINTR) {
                    close(from_child);
                    from_child = -1;
                }
            }
        }
    }
    if (out_bin == NULL)
        out_bin = calloc(1, 1);
    CU_ASSERT_FATAL(out_bin != NULL);
    out_bin[out_bin_len] = 0;
    CU_ASSERT_FATAL(waitpid(pid, &status, 0) == pid);
    free(err_text);
    err_text = (char *)read_file(p("stderr.txt"), NULL);
    CU_ASSERT_FATAL(err_text != NULL);
    remove_file("stderr.txt");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* out_bin holds exactly the bytes of hex field `fname`. */
static void assert_stdout_is(const struct mpce_kat_record *r, const char *fname)
{
    size_t want_len = 0;
    uint8_t *want = hex_field(r, fname, &want_len);

    CU_ASSERT_EQUAL(out_bin_len, want_len);
    if (out_bin_len != want_len || memcmp(out_bin, want, want_len) != 0) {
        CU_FAIL("standard output differs from the vector");
        fprintf(stderr, "  %s:%u: %s\n", r->file, r->line, fname);
    }
    free(want);
}

/* The first record of op in a vector file. */
static const struct mpce_kat_record *first_record(const struct mpce_kat_set *set, const char *op,
                                                  const char *with_field)
{
    for (size_t i = 0; i < set->count; i++)
        if (strcmp(set->records[i].op, op) == 0 &&
            (with_field == NULL || mpce_kat_get(&set->records[i], with_field) != NULL))
            return &set->records[i];
    CU_FAIL_FATAL("no such record");
    return NULL;
}

/* "-" is standard input and output, for files that are read whole first
 * and for outputs that are complete; it never becomes a file named "-". */
static void test_stdio_prg_ntt(void)
{
    struct stat st;
    const int dash_before = stat("-", &st) == 0;
    struct mpce_kat_set set;

    load("prg.txt", &set);
    const struct mpce_kat_record *r = first_record(&set, "ecb", NULL);
    size_t in_len = 0;
    uint8_t *in = hex_field(r, "in", &in_len);
    const char *ecb[] = {"prg", "ecb", "--key", field(r, "key"), "--in", "-", "--out", "-", NULL};
    CU_ASSERT_EQUAL(run_pipes(ecb, 1, in, in_len, 0), 0);
    assert_stdout_is(r, "out");
    CU_ASSERT_EQUAL(err_text[0], '\0');
    free(in);
    r = first_record(&set, "ctr", NULL);
    const char *ctr[] = {"prg", "ctr", "--key", field(r, "key"), "--counter", field(r, "c0"),
                         "--blocks", field(r, "n"), "--out", "-", NULL};
    CU_ASSERT_EQUAL(run_pipes(ctr, 1, NULL, 0, 0), 0);
    assert_stdout_is(r, "out");
    mpce_kat_free(&set);

    /* The NTT there and back: stdin to a file, then a file to stdout. */
    load("ntt.txt", &set);
    r = first_record(&set, "forward", NULL);
    char *moduli = commas(field(r, "q"));
    write_words("in.bin", r, "in");
    size_t words_len = 0;
    uint8_t *words = read_file(p("in.bin"), &words_len);
    CU_ASSERT_FATAL(words != NULL);
    remove_file("out.bin");
    const char *fwd[] = {"ntt", "forward", "--n", field(r, "N"), "--moduli", moduli, "--batch",
                         "1", "--in", "-", "--out", p("out.bin"), NULL};
    CU_ASSERT_EQUAL(run_pipes(fwd, 1, words, words_len, 0), 0);
    assert_words("out.bin", r, "out");
    CU_ASSERT_EQUAL(out_bin_len, 0);
    const char *inv[] = {"ntt", "inverse", "--n", field(r, "N"), "--moduli", moduli, "--batch",
                         "1", "--in", p("out.bin"), "--out", "-", NULL};
    CU_ASSERT_EQUAL(run_pipes(inv, 1, NULL, 0, 0), 0);
    CU_ASSERT(out_bin_len == words_len && memcmp(out_bin, words, words_len) == 0);
    free(words);
    free(moduli);
    /* mul's second operand from stdin */
    r = first_record(&set, "mul", NULL);
    moduli = commas(field(r, "q"));
    write_words("a.bin", r, "a");
    write_words("b.bin", r, "b");
    uint8_t *b = read_file(p("b.bin"), &words_len);
    CU_ASSERT_FATAL(b != NULL);
    const char *mul[] = {"ntt", "mul", "--n", field(r, "N"), "--moduli", moduli, "--batch", "1",
                         "--in", p("a.bin"), "--in2", "-", "--out", "-", NULL};
    CU_ASSERT_EQUAL(run_pipes(mul, 1, b, words_len, 0), 0);
    write_file("got.bin", out_bin, out_bin_len);
    assert_words("got.bin", r, "out");
    remove_file("got.bin");
    free(b);
    free(moduli);
    mpce_kat_free(&set);
    CU_ASSERT(dash_before || stat("-", &st) != 0);
}

static void test_stdio_lpn_dpf(void)
{
    struct mpce_kat_set set;

    /* LPN: the table from stdin, the blocks to stdout, the count to stderr
     * (on stdout it would be taken for a block). */
    load("lpn.txt", &set);
    const struct mpce_kat_record *r = first_record(&set, "fold", "pre");
    size_t table_len = 0;
    uint8_t *table = hex_field(r, "pre", &table_len);
    write_hex_field("in.bin", r, "out_in");
    const char *lpn[] = {"lpn", "--seed", field(r, "seed"), "--logk", field(r, "logk"),
                         "--counter", field(r, "c0"), "--table", "-", "--in", p("in.bin"),
                         "--out", "-", NULL};
    CU_ASSERT_EQUAL(run_pipes(lpn, 1, table, table_len, 0), 0);
    assert_stdout_is(r, "out");
    CU_ASSERT_EQUAL(strtoull(err_text, NULL, 10),
                    strtoull(field(r, "blocks_consumed"), NULL, 10));
    CU_ASSERT(strchr(err_text, '\n') != NULL && strchr(err_text, '\n')[1] == '\0');
    free(table);
    mpce_kat_free(&set);

    /* DPF: party 0's key to stdout beside party 1's file, then evaluated
     * from stdin to stdout. */
    load("dpf.txt", &set);
    r = first_record(&set, "dpf", NULL);
    int bytes = strcmp(field(r, "group"), "bytes") == 0;
    char prg_keys[80], seeds[80];
    snprintf(prg_keys, sizeof(prg_keys), "%s,%s", field(r, "kL"), field(r, "kR"));
    snprintf(seeds, sizeof(seeds), "%s,%s", field(r, "seed0"), field(r, "seed1"));
    remove_file("k1.bin");
    const char *gen[] = {"dpf", "gen", "--bits", field(r, "n"), "--alpha", field(r, "alpha"),
                         "--beta", field(r, bytes ? "beta" : "beta_u64"), "--group",
                         field(r, "group"), "--prg-keys", prg_keys, "--seeds", seeds, "--out0",
                         "-", "--out1", p("k1.bin"), NULL};
    CU_ASSERT_EQUAL(run_pipes(gen, 1, NULL, 0, 0), 0);
    assert_stdout_is(r, "key0");
    assert_file_is("k1.bin", r, "key1");
    size_t key_len = out_bin_len;
    uint8_t *key = malloc(key_len);
    CU_ASSERT_FATAL(key != NULL);
    memcpy(key, out_bin, key_len);
    char *points = commas(field(r, "eval_x"));
    const char *eval[] = {"dpf", "eval", "--key", "-", "--points", points, "--out", "-", NULL};
    CU_ASSERT_EQUAL(run_pipes(eval, 1, key, key_len, 0), 0);
    assert_stdout_is(r, "eval0");
    free(points);
    free(key);
    mpce_kat_free(&set);
}

static void test_stdio_refusals(void)
{
    uint8_t buf[64] = {0};

    no_outputs();
    write_file("in.bin", buf, 64);
    /* One standard input, one standard output. */
    const char *two_in[] = {"ntt", "mul", "--n", "8", "--moduli", "97", "--batch", "1", "--in",
                            "-", "--in2", "-", "--out", p("out.bin"), NULL};
    assert_refused(run_pipes(two_in, 1, buf, 64, 0), 2, "mpcengine ntt mul: ",
                   "--in and --in2 both name '-' (standard input)", "out.bin");
    const char *two_out[] = {"dpf", "gen", "--bits", "8", "--alpha", "1", "--beta", "1",
                             "--group", "u64", "--out0", "-", "--out1", "-", NULL};
    assert_refused(run_pipes(two_out, 1, NULL, 0, 0), 2, "mpcengine dpf gen: ",
                   "--out0 and --out1 both name '-' (standard output)", NULL);
    CU_ASSERT_EQUAL(out_bin_len, 0);
    const char *key_and_in[] = {"prg", "ecb", "--key-file", "-", "--in", "-", "--out",
                                p("out.bin"), NULL};
    assert_refused(run_pipes(key_and_in, 1, buf, 64, 0), 2, "mpcengine prg ecb: ",
                   "--key-file and --in both name '-'", "out.bin");
    /* A pipe's size is known only at its end: checked then, and named. */
    const char *short_in[] = {"prg", "ecb", "--key", key32, "--in", "-", "--out", "-", NULL};
    assert_refused(run_pipes(short_in, 1, buf, 17, 0), 2, "mpcengine prg ecb: ",
                   "--in: standard input is 17 bytes, expected a non-zero multiple of 16", NULL);
    CU_ASSERT_EQUAL(out_bin_len, 0);
    /* A failed command writes nothing to stdout either. */
    const char *fails[] = {"prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4",
                           "--out", "-", "--impl", "no-such-impl", NULL};
    assert_refused(run_pipes(fails, 1, NULL, 0, 0), 1, "mpcengine prg ctr: ", "no-such-impl",
                   NULL);
    CU_ASSERT_EQUAL(out_bin_len, 0);
    /* A reader gone before the key arrives: an error, not SIGPIPE, and the
     * other key is taken back (both keys or neither). */
    const char *gone[] = {"dpf", "gen", "--bits", "8", "--alpha", "1", "--beta", "1",
                          "--group", "u64", "--out0", p("k0.bin"), "--out1", "-", NULL};
    assert_refused(run_pipes(gone, 1, NULL, 0, 1), 1, "mpcengine dpf gen: ",
                   "--out1 -: cannot write to standard output: ", "k0.bin");
}

/* ---- keys and seeds from files ----------------------------------------------- */

static void write_secret(const char *name, const char *text, unsigned mode)
{
    tu_write_text(p(name), text, 0600);
    CU_ASSERT_FATAL(chmod(p(name), mode) == 0);
}

static void test_key_files(void)
{
    struct mpce_kat_set set;
    char text[400];

    load("prg.txt", &set);
    const struct mpce_kat_record *r = first_record(&set, "ecb", NULL);
    write_hex_field("in.bin", r, "in");
    /* Surrounding whitespace and the newline go; a private file is quiet. */
    snprintf(text, sizeof(text), " \t%s \r\n\n", field(r, "key"));
    write_secret("key.txt", text, 0600);
    remove_file("out.bin");
    CU_ASSERT_EQUAL(CLI("prg", "ecb", "--key-file", p("key.txt"), "--in", p("in.bin"), "--out",
                        p("out.bin")),
                    0);
    assert_file_is("out.bin", r, "out");
    CU_ASSERT_EQUAL(err_text[0], '\0');
    /* Readable by others: it works, and says how to fix the mode. */
    CU_ASSERT_FATAL(chmod(p("key.txt"), 0644) == 0);
    CU_ASSERT_EQUAL(CLI("prg", "ecb", "--key-file", p("key.txt"), "--in", p("in.bin"), "--out",
                        p("out.bin")),
                    0);
    assert_file_is("out.bin", r, "out");
    CU_ASSERT(strstr(err_text, "mpcengine prg ecb: warning: --key-file '") != NULL);
    CU_ASSERT(strstr(err_text, "readable by every user (mode 0644): run chmod go-rwx") != NULL);
    CU_ASSERT_FATAL(chmod(p("key.txt"), 0640) == 0);
    CU_ASSERT_EQUAL(CLI("prg", "ecb", "--key-file", p("key.txt"), "--in", p("in.bin"), "--out",
                        p("out.bin")),
                    0);
    CU_ASSERT(strstr(err_text, "readable by its group (mode 0640)") != NULL);
    CU_ASSERT_FATAL(chmod(p("key.txt"), 0600) == 0);
    /* Both, or neither. */
    remove_file("out.bin");
    assert_refused(CLI("prg", "ecb", "--key", key32, "--key-file", p("key.txt"), "--in",
                       p("in.bin"), "--out", p("out.bin")),
                   2, "mpcengine prg ecb: ", "--key and --key-file both give the value: use one",
                   "out.bin");
    assert_refused(CLI("prg", "ecb", "--in", p("in.bin"), "--out", p("out.bin")), 2,
                   "mpcengine prg ecb: ", "missing required option --key-file (or --key", "out.bin");
    /* What is wrong with the file is said of the file. */
    write_secret("bad.txt", "0011\n", 0600);
    char want[4400];
    snprintf(want, sizeof(want), "--key-file '%s': expected 32 hex digits, got 4", p("bad.txt"));
    assert_refused(CLI("prg", "ecb", "--key-file", p("bad.txt"), "--in", p("in.bin"), "--out",
                       p("out.bin")),
                   2, "mpcengine prg ecb: ", want, "out.bin");
    write_secret("bad.txt", "\n\n", 0600);
    assert_refused(CLI("prg", "ecb", "--key-file", p("bad.txt"), "--in", p("in.bin"), "--out",
                       p("out.bin")),
                   2, "mpcengine prg ecb: ", "is empty", "out.bin");
    assert_refused(CLI("prg", "ecb", "--key-file", p("no-such.txt"), "--in", p("in.bin"), "--out",
                       p("out.bin")),
                   2, "mpcengine prg ecb: ", "no-such.txt': cannot open", "out.bin");
    remove_file("bad.txt");
    /* From standard input, through a pipe. */
    r = first_record(&set, "ctr", NULL);
    snprintf(text, sizeof(text), "%s\n", field(r, "key"));
    const char *ctr[] = {"prg", "ctr", "--key-file", "-", "--counter", field(r, "c0"),
                         "--blocks", field(r, "n"), "--out", "-", NULL};
    CU_ASSERT_EQUAL(run_pipes(ctr, 1, text, strlen(text), 0), 0);
    assert_stdout_is(r, "out");
    /* MMO's keys as --keys takes them. */
    r = first_record(&set, "mmo", NULL);
    char *keys = split_blocks(field(r, "keys"));
    snprintf(text, sizeof(text), "%s\n", keys);
    free(keys);
    write_secret("keys.txt", text, 0600);
    write_hex_field("in.bin", r, "in");
    remove_file("out.bin");
    CU_ASSERT_EQUAL(CLI("prg", "mmo", "--key-file", p("keys.txt"), "--in", p("in.bin"), "--out",
                        p("out.bin")),
                    0);
    assert_file_is("out.bin", r, "out");
    remove_file("keys.txt");
    mpce_kat_free(&set);

    /* The LPN seed. */
    load("lpn.txt", &set);
    r = first_record(&set, "fold", "pre");
    write_hex_field("table.bin", r, "pre");
    write_hex_field("in.bin", r, "out_in");
    snprintf(text, sizeof(text), "%s\n", field(r, "seed"));
    write_secret("seed.txt", text, 0600);
    remove_file("out.bin");
    CU_ASSERT_EQUAL(CLI("lpn", "--seed-file", p("seed.txt"), "--logk", field(r, "logk"),
                        "--counter", field(r, "c0"), "--table", p("table.bin"), "--in",
                        p("in.bin"), "--out", p("out.bin")),
                    0);
    assert_file_is("out.bin", r, "out");
    assert_refused(CLI("lpn", "--seed", key32, "--seed-file", p("seed.txt"), "--logk", "1",
                       "--counter", "0", "--table", p("table.bin"), "--in", p("in.bin"), "--out",
                       p("out2.bin")),
                   2, "mpcengine lpn: ", "--seed and --seed-file", "out2.bin");
    mpce_kat_free(&set);

    /* The DPF's seeds and PRG keys: the vector's keys, bit for bit. */
    load("dpf.txt", &set);
    r = first_record(&set, "dpf", NULL);
    int bytes = strcmp(field(r, "group"), "bytes") == 0;
    snprintf(text, sizeof(text), "%s,%s\n", field(r, "seed0"), field(r, "seed1"));
    write_secret("seeds.txt", text, 0600);
    snprintf(text, sizeof(text), "%s,%s\n", field(r, "kL"), field(r, "kR"));
    write_secret("prgkeys.txt", text, 0600);
    no_outputs();
    CU_ASSERT_EQUAL(CLI("dpf", "gen", "--bits", field(r, "n"), "--alpha", field(r, "alpha"),
                        "--beta", field(r, bytes ? "beta" : "beta_u64"), "--group",
                        field(r, "group"), "--prg-key-file", p("prgkeys.txt"), "--seed-file",
                        p("seeds.txt"), "--out0", p("k0.bin"), "--out1", p("k1.bin")),
                    0);
    assert_file_is("k0.bin", r, "key0");
    assert_file_is("k1.bin", r, "key1");
    no_outputs();
    assert_refused(CLI("dpf", "gen", "--bits", field(r, "n"), "--alpha", field(r, "alpha"),
                       "--beta", field(r, bytes ? "beta" : "beta_u64"), "--group",
                       field(r, "group"), "--seeds", "x", "--seed-file", p("seeds.txt"),
                       "--out0", p("k0.bin"), "--out1", p("k1.bin")),
                   2, "mpcengine dpf gen: ", "--seeds and --seed-file", "k0.bin");
    remove_file("seeds.txt");
    remove_file("prgkeys.txt");
    remove_file("seed.txt");
    remove_file("key.txt");
    mpce_kat_free(&set);

    /* --help says why the files exist. */
    const char *help[][3] = {{"prg", "ecb", "--key-file"}, {"prg", "mmo", "--key-file"},
                             {"prg", "ctr", "--key-file"}, {"lpn", "--help", "--seed-file"},
                             {"dpf", "gen", "--seed-file"}};
    for (size_t i = 0; i < sizeof(help) / sizeof(help[0]); i++) {
        const char *args[] = {help[i][0], help[i][1], "--help", NULL};
        if (strcmp(help[i][1], "--help") == 0)
            args[2] = NULL;
        CU_ASSERT_EQUAL(run_argv(args, 0), 0);
        CU_ASSERT(strstr(out_text, help[i][2]) != NULL);
        CU_ASSERT(strstr(out_text, "visible in ps") != NULL);
    }
}

/* ---- selftest --json ------------------------------------------------------------ */

static size_t count_of(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *s = strstr(text, needle); s != NULL; s = strstr(s + 1, needle))
        n++;
    return n;
}

/* The number after `"key": ` in text, or (size_t)-1. */
static size_t json_count(const char *text, const char *key)
{
    char k[64];
    snprintf(k, sizeof(k), "\"%s\": ", key);
    const char *at = strstr(text, k);
    return at != NULL ? (size_t)strtoull(at + strlen(k), NULL, 10) : (size_t)-1;
}

static void test_selftest_json(void)
{
    CU_ASSERT_EQUAL(CLI("selftest", "--json"), 0);
    CU_ASSERT(strncmp(out_text, "{\"results\": [\n  {", 17) == 0);
    size_t len = strlen(out_text);
    CU_ASSERT(len > 2 && strcmp(out_text + len - 2, "}\n") == 0);
    CU_ASSERT(strstr(out_text, "{\"plugin\": \"soft\", \"impl\": \"prg-soft-bitslice\", "
                               "\"path\": ") != NULL);
    CU_ASSERT(strstr(out_text, "\"result\": \"pass\", \"reason\": \"\"}") != NULL);
    /* The counts agree with the rows. */
    const size_t passed = json_count(out_text, "passed");
    CU_ASSERT(passed >= 5);
    CU_ASSERT_EQUAL(passed, count_of(out_text, "\"result\": \"pass\""));
    CU_ASSERT_EQUAL(json_count(out_text, "failed"), 0);
    CU_ASSERT_EQUAL(json_count(out_text, "skipped"), count_of(out_text, "\"result\": \"skipped\""));
    CU_ASSERT_EQUAL(count_of(out_text, "{\"plugin\": "), count_of(out_text, "\"result\": "));

    CU_ASSERT_EQUAL(CLI("selftest", "--json", "--impl", "lpn-soft"), 0);
    CU_ASSERT_EQUAL(count_of(out_text, "\"impl\": "), 1);
    CU_ASSERT(strstr(out_text, "\"impl\": \"lpn-soft\"") != NULL);
    CU_ASSERT_EQUAL(json_count(out_text, "passed"), 1);

    /* A failing implementation: the same exit status as the text, the
     * failure in the object, the message on stderr. */
    char plug[4200], wrong[4400];
    snprintf(plug, sizeof(plug), "%s/wrongplug", dir);
    snprintf(wrong, sizeof(wrong), "%s", GOOD_MODULE_SO);
    char *slash = strrchr(wrong, '/');
    CU_ASSERT_FATAL(slash != NULL);
    snprintf(slash + 1, sizeof(wrong) - (size_t)(slash + 1 - wrong), "mod_wrong.so");
    CU_ASSERT_FATAL(mkdir(plug, 0755) == 0);
    char *so = tu_copy_into(wrong, plug, 0644);
    CU_ASSERT_EQUAL(CLI("selftest", "--json", "--plugin-path", plug), 1);
    CU_ASSERT(strstr(out_text, "\"impl\": \"prg-test-wrong\"") != NULL);
    CU_ASSERT(strstr(out_text, "\"result\": \"fail\"") != NULL);
    CU_ASSERT_EQUAL(json_count(out_text, "failed"), 1);
    /* the engine's own error line, then the command's */
    CU_ASSERT(strstr(err_text, "\nmpcengine selftest: 1 implementation(s) failed") != NULL);
    CU_ASSERT(strstr(err_text, "mpce_") == NULL);
    CU_ASSERT_EQUAL(CLI("selftest", "--plugin-path", plug), 1);
    /* In text the fail row carries the reason; the last line only counts. */
    CU_ASSERT(strstr(out_text, "fail     prg-test-wrong: ") != NULL);
    CU_ASSERT(strstr(err_text, "mpcengine selftest: 1 failed: the fail rows above say why") !=
              NULL);
    unlink(so);
    free(so);
    rmdir(plug);
}

/* ---- bench: rows as they come, progress on a terminal ------------------------- */

static void test_bench_pipe(void)
{
    /* Through a pipe: complete lines, header first; no progress text, since
     * stderr is no terminal. */
    const char *table[] = {"bench", "--op", "prg.ecb", "--shape", "n=64", "--rounds", "1",
                           "--window-ms", "1", NULL};
    CU_ASSERT_EQUAL(run_pipes(table, 1, NULL, 0, 0), 0);
    const char *s = (const char *)out_bin;
    CU_ASSERT(strncmp(s, "bench: 1 row, CPU ", 18) == 0);
    CU_ASSERT(out_bin_len > 0 && s[out_bin_len - 1] == '\n');
    size_t rows = 0;
    for (const char *line = strchr(s, '\n'); line != NULL && line[1] != '\0';
         line = strchr(line + 1, '\n'))
        rows += strncmp(line + 1, "prg.ecb        n=64 ", 20) == 0;
    CU_ASSERT(rows >= 2); /* prg-soft-bitslice and the OpenSSL baseline at least */
    CU_ASSERT(strstr(err_text, "bench: [") == NULL);
    CU_ASSERT(strchr(err_text, '\r') == NULL);

    const char *json[] = {"bench", "--op", "prg.ecb", "--shape", "n=64", "--rounds", "1",
                          "--window-ms", "1", "--json", NULL};
    CU_ASSERT_EQUAL(run_pipes(json, 1, NULL, 0, 0), 0);
    s = (const char *)out_bin;
    CU_ASSERT(strncmp(s, "[\n  {\"op\": \"prg.ecb\", ", 22) == 0);
    CU_ASSERT(out_bin_len > 3 && strcmp(s + out_bin_len - 3, "}\n]\n" + 1) == 0);
    CU_ASSERT(strstr(err_text, "bench: 1 row, CPU ") != NULL);

    /* --plot -: the SVG is stdout's, the rows go to stderr. */
    const char *plot[] = {"bench", "--op", "prg.ecb", "--plot", "-", "--rounds", "1",
                          "--window-ms", "1", NULL};
    CU_ASSERT_EQUAL(run_pipes(plot, 1, NULL, 0, 0), 0);
    s = (const char *)out_bin;
    CU_ASSERT(strncmp(s, "<svg ", 5) == 0);
    CU_ASSERT(out_bin_len > 7 && strcmp(s + out_bin_len - 7, "</svg>\n") == 0);
    CU_ASSERT(strstr(s, "MEDIAN") == NULL && strstr(s, "sweep for --plot") == NULL);
    CU_ASSERT(strstr(err_text, "sweep for --plot -\nOP ") != NULL);
    CU_ASSERT(strstr(err_text, "\nprg.ecb        n=16 ") != NULL);
}

/* Each row is flushed as it is measured: with stdout a pipe, the first
 * rows of a sweep arrive while the later ones are still being measured
 * (the run is then stopped; it would take seconds more). */
static void test_bench_rows_flushed(void)
{
    const char *args[] = {"bench", "--op", "prg.ecb", "--plot", p("flush.svg"), "--rounds", "4",
                          "--window-ms", "100", NULL};
    const char *argv[MAX_ARGS + 4];
    posix_spawn_file_actions_t fa;
    int outp[2], status;
    pid_t pid;

    build_argv(args, 1, argv);
    CU_ASSERT_FATAL(pipe2(outp, O_CLOEXEC) == 0);
    CU_ASSERT_FATAL(posix_spawn_file_actions_init(&fa) == 0);
    posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, p("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(posix_spawn(&pid, MPCENGINE_BIN, &fa, NULL, (char *const *)argv,
                                child_env()) == 0);
    posix_spawn_file_actions_destroy(&fa);
    close(outp[1]);
    /* Header, column names, and one measured row. */
    char buf[8192];
    size_t got = 0, lines = 0;
    while (lines < 3 && got + 1 < sizeof(buf)) {
        ssize_t r = read(outp[0], buf + got, sizeof(buf) - 1 - got);
        if (r <= 0)
            break;
        for (ssize_t i = 0; i < r; i++)
            lines += buf[got + (size_t)i] == '\n';
        got += (size_t)r;
    }
    buf[got] = '\0';
    CU_ASSERT(lines >= 3);
    CU_ASSERT(strstr(buf, "\nprg.ecb ") != NULL);
    /* Still measuring the other shapes: the row did not wait for the end. */
    CU_ASSERT_EQUAL(waitpid(pid, &status, WNOHANG), 0);
    kill(pid, SIGTERM);
    CU_ASSERT_FATAL(waitpid(pid, &status, 0) == pid);
    close(outp[0]);
    remove_file("flush.svg");
    remove_file("stderr.txt");
}

#define NO_TTY (-2)

/* Run the command with file descriptor `fd` (1 or 2) on a terminal (a
 * pseudo-terminal's slave) and the other of the two in a file, read back
 * into out_text or err_text; what reached the terminal goes to tty (len
 * bytes, NUL-terminated). Returns the exit status (-1: a signal), or
 * NO_TTY where no pseudo-terminal can be had (a build chroot without
 * /dev/pts): the caller then skips, saying so. */
static int run_on_tty(const char *const *args, int fd, char *tty, size_t len)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    const char *slave = NULL;
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0 ||
        (slave = ptsname(master)) == NULL) {
        printf("skipped: no pseudo-terminal (%s) ", strerror(errno));
        if (master >= 0)
            close(master);
        return NO_TTY;
    }
    const char *other = fd == 1 ? p("stderr.txt") : p("stdout.txt");
    const char *argv[MAX_ARGS + 4];
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int status = 0;

    build_argv(args, 1, argv);
    CU_ASSERT_FATAL(posix_spawn_file_actions_init(&fa) == 0);
    posix_spawn_file_actions_addopen(&fa, 3 - fd, other, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, fd, slave, O_RDWR | O_NOCTTY, 0);
    CU_ASSERT_FATAL(posix_spawn(&pid, MPCENGINE_BIN, &fa, NULL, (char *const *)argv,
                                child_env()) == 0);
    posix_spawn_file_actions_destroy(&fa);
    /* Read as it comes (a terminal's buffer is small), and what is left
     * once the command is gone. */
    size_t got = 0;
    int done = 0;
    for (;;) {
        struct pollfd pf = {master, POLLIN, 0};
        if (poll(&pf, 1, 100) > 0 && (pf.revents & POLLIN)) {
            ssize_t r = read(master, tty + got, len - 1 - got);
            if (r > 0) {
                got += (size_t)r;
                if (got + 1 < len)
                    continue;
            }
        }
        if (done || got + 1 >= len)
            break;
        /* after the exit, one more round of reads takes the tail */
        done = waitpid(pid, &status, WNOHANG) == pid;
    }
    tty[got] = '\0';
    close(master);
    if (!done)
        CU_ASSERT_FATAL(waitpid(pid, &status, 0) == pid);
    char **text = fd == 1 ? &err_text : &out_text;
    free(*text);
    *text = (char *)read_file(other, NULL);
    CU_ASSERT_FATAL(*text != NULL);
    unlink(other);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* On a terminal, stderr shows the row being measured, on one line that is
 * rewritten and cleared at the end; the rows still go to stdout. */
static void test_bench_progress_on_terminal(void)
{
    const char *args[] = {"bench", "--op", "prg.ecb", "--shape", "n=64", "--rounds", "1",
                          "--window-ms", "1", NULL};
    char tty[16384];
    int rc = run_on_tty(args, 2, tty, sizeof(tty));

    if (rc == NO_TTY)
        return;
    CU_ASSERT_EQUAL(rc, 0);
    size_t got = strlen(tty);
    CU_ASSERT(strstr(tty, "bench: [1/1] prg.ecb n=64...") != NULL);
    /* Cleared at the end: carriage return, blanks, carriage return. */
    CU_ASSERT(got >= 2 && tty[got - 1] == '\r');
    CU_ASSERT(strstr(tty, "\r                    ") != NULL);
    CU_ASSERT(strstr(tty, "prg-soft-bitslice") == NULL); /* rows are stdout's */
    CU_ASSERT(strstr(out_text, "prg-soft-bitslice") != NULL);
    CU_ASSERT(strchr(out_text, '\r') == NULL);
}

/* Binary output is not sent to a terminal; text output (a plot, a pins
 * file) may be. */
static void test_binary_not_to_terminal(void)
{
    const char *args[] = {"prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4",
                          "--out", "-", NULL};
    char tty[4096];
    int rc = run_on_tty(args, 1, tty, sizeof(tty));

    if (rc == NO_TTY)
        return;
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_EQUAL(tty[0], '\0');
    CU_ASSERT(strstr(err_text, "mpcengine prg ctr: --out -: standard output is a terminal") !=
              NULL);
}

/* ---- --verbose ----------------------------------------------------------------- */

static void test_verbose(void)
{
    /* No module directory: only the built-in implementations, so the names
     * are known whatever is installed. */
    char none[4200];
    snprintf(none, sizeof(none), "%s/noplugins", dir);
    CU_ASSERT_FATAL(mkdir(none, 0755) == 0);
    no_outputs();

    CU_ASSERT_EQUAL(CLI("prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4", "--out",
                        p("out.bin"), "--plugin-path", none),
                    0);
    CU_ASSERT_EQUAL(err_text[0], '\0');
    CU_ASSERT_EQUAL(CLI("prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4", "--out",
                        p("out.bin"), "--plugin-path", none, "--verbose"),
                    0);
    CU_ASSERT(strstr(err_text, "mpcengine prg ctr: prg.ctr, size class tiny (4 work elements): "
                               "ran prg-soft-bitslice: priority order (prg-soft-bitslice)\n") !=
              NULL);
    /* Before the command too. */
    const char *before[] = {"--verbose", "prg", "ctr", "--key", key32, "--counter", "0",
                            "--blocks", "100", "--out", p("out.bin"), "--plugin-path", none,
                            NULL};
    CU_ASSERT_EQUAL(run_argv(before, 1), 0);
    CU_ASSERT(strstr(err_text, "prg.ctr, size class small (100 work elements): ran "
                               "prg-soft-bitslice: priority order") != NULL);
    /* --impl */
    CU_ASSERT_EQUAL(CLI("prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4", "--out",
                        p("out.bin"), "--plugin-path", none, "--verbose", "--impl",
                        "prg-soft-bitslice"),
                    0);
    CU_ASSERT(strstr(err_text, ": ran prg-soft-bitslice: named by --impl prg-soft-bitslice\n") !=
              NULL);
    /* A pin, with the file and line that set it. */
    char pinned[4300], want[4600];
    snprintf(pinned, sizeof(pinned), "%s/pinned.conf", dir);
    tu_write_text(pinned, "[engine]\nuser_config = no\n[tune]\nmode = off\n[pins]\n"
                          "prg.mmo = prg-soft-bitslice\n", 0644);
    write_file("in.bin", "0123456789abcdef", 16);
    const char *pin[] = {"prg", "mmo", "--keys", key32, "--in", p("in.bin"), "--out",
                         p("out.bin"), "--plugin-path", none, "--verbose", "--config", pinned,
                         NULL};
    CU_ASSERT_EQUAL(run_argv(pin, 0), 0);
    snprintf(want, sizeof(want), "prg.mmo, size class tiny (1 work element): ran "
             "prg-soft-bitslice: pinned by [pins] prg.mmo = prg-soft-bitslice (%s:6)\n", pinned);
    if (strstr(err_text, want) == NULL) {
        CU_FAIL("--verbose does not name the pin");
        fprintf(stderr, "  wanted '%s' in: %s", want, err_text);
    }
    unlink(pinned);
    /* Every operation command, with its variant where it has one. */
    uint8_t zero[64] = {0};
    write_file("in.bin", zero, 64);
    CU_ASSERT_EQUAL(CLI("ntt", "forward", "--n", "8", "--moduli", "97", "--batch", "1", "--in",
                        p("in.bin"), "--out", p("out.bin"), "--plugin-path", none, "--verbose"),
                    0);
    CU_ASSERT(strstr(err_text, "mpcengine ntt forward: ntt.forward q50, size class tiny (8 work "
                               "elements): ran ntt-soft: priority order (ntt-soft)\n") != NULL);
    write_file("table.bin", zero, 32);
    write_file("in.bin", zero, 64);
    CU_ASSERT_EQUAL(CLI("lpn", "--seed", key32, "--logk", "1", "--counter", "0", "--table",
                        p("table.bin"), "--in", p("in.bin"), "--out", p("out.bin"),
                        "--plugin-path", none, "--verbose"),
                    0);
    CU_ASSERT(strstr(err_text, "mpcengine lpn: lpn.fold k16, size class tiny (4 work elements): "
                               "ran lpn-soft") != NULL);
    CU_ASSERT_EQUAL(CLI("dpf", "gen", "--bits", "10", "--alpha", "1", "--beta", "1", "--group",
                        "u64", "--out0", p("k0.bin"), "--out1", p("k1.bin"), "--plugin-path",
                        none, "--verbose"),
                    0);
    CU_ASSERT(strstr(err_text, "mpcengine dpf gen: dpf.gen, size class tiny (1 work element): "
                               "ran dpf-soft: priority order (dpf-soft)\n") != NULL);
    CU_ASSERT_EQUAL(CLI("dpf", "evalall", "--key", p("k0.bin"), "--out", p("out.bin"),
                        "--plugin-path", none, "--verbose"),
                    0);
    CU_ASSERT(strstr(err_text, "dpf.evalall, size class small (1024 work elements): ran "
                               "dpf-soft") != NULL);
    CU_ASSERT_EQUAL(CLI("dpf", "eval", "--key", p("k0.bin"), "--points", "1,2,3", "--out",
                        p("out.bin"), "--plugin-path", none, "--verbose"),
                    0);
    CU_ASSERT(strstr(err_text, "dpf.eval, size class tiny (3 work elements): ran dpf-soft") !=
              NULL);
    /* Only the operation commands have it. */
    assert_refused(CLI("list", "--verbose"), 2, "mpcengine list: ",
                   "'--verbose': it applies to prg, ntt, lpn and dpf only", NULL);
    const char *list[] = {"--verbose", "list", NULL};
    assert_refused(run_argv(list, 1), 2, "mpcengine list: ",
                   "'--verbose': it applies to prg, ntt, lpn and dpf only", NULL);
    /* Alone, it is no command at all. */
    const char *alone[] = {"--verbose", NULL};
    assert_refused(run_argv(alone, 0), 2, "mpcengine: ",
                   "--verbose applies to prg, ntt, lpn and dpf: name one after it", NULL);
    no_outputs();
    remove_file("table.bin");
    rmdir(none);
}

/* The command with argv and env, its stdout and stderr on out and err;
 * its exit status, 1 if it could not run or died. For tu_unprivileged's
 * children, so no CUnit here. */
static int spawn_to(const char *const *argv, char *const *env, int out, int err_fd)
{
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int status;
    if (posix_spawn_file_actions_init(&fa) != 0 ||
        posix_spawn_file_actions_adddup2(&fa, out, 1) != 0 ||
        posix_spawn_file_actions_adddup2(&fa, err_fd, 2) != 0)
        return 1;
    int err = posix_spawn(&pid, MPCENGINE_BIN, &fa, NULL, (char *const *)argv, env);
    posix_spawn_file_actions_destroy(&fa);
    if (err != 0) {
        printf("\n  cannot run %s: %s", MPCENGINE_BIN, strerror(err));
        return 1;
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

struct forced_run {
    const char *conf, *plugins; /* readable by the unprivileged user */
    int out, err;               /* its stdout and stderr, opened by the parent */
};

/* `mpcengine --verbose prg ctr ... --out -` with MPCENGINE_FORCE set; runs
 * in tu_unprivileged's child (root ignores the variable), so no CUnit. */
static int forced_unprivileged(void *arg)
{
    const struct forced_run *r = arg;
    const char *argv[] = {MPCENGINE_BIN, "--verbose", "prg", "ctr", "--key", key32,
                          "--counter", "0", "--blocks", "4", "--out", "-", "--config", r->conf,
                          "--plugin-path", r->plugins, NULL};
    char *env[520], force[] = "MPCENGINE_FORCE=prg.ctr:prg-soft-bitslice";
    size_t n = 0;
    for (char **e = child_env(); *e != NULL && n < 518; e++)
        env[n++] = *e;
    env[n++] = force;
    env[n] = NULL;
    return spawn_to(argv, env, r->out, r->err);
}

/* An MPCENGINE_FORCE entry is named as the pin that decided. */
static void test_verbose_force(void)
{
    char *shared = tu_temp_dir();
    char conf_file[4300], plugins[4300];
    snprintf(conf_file, sizeof(conf_file), "%s/force.conf", shared);
    snprintf(plugins, sizeof(plugins), "%s/none", shared);
    tu_write_text(conf_file, "[engine]\nuser_config = no\n[tune]\nmode = off\n", 0644);
    CU_ASSERT_FATAL(mkdir(plugins, 0755) == 0 && chmod(shared, 0755) == 0);
    struct forced_run r = {conf_file, plugins,
                           open(p("force.out"), O_RDWR | O_CREAT | O_TRUNC, 0644),
                           open(p("force.err"), O_RDWR | O_CREAT | O_TRUNC, 0644)};
    CU_ASSERT_FATAL(r.out >= 0 && r.err >= 0);
    int rc = tu_unprivileged(forced_unprivileged, &r);
    close(r.out);
    close(r.err);
    size_t len = 0;
    uint8_t *out = read_file(p("force.out"), &len);
    char *err = (char *)read_file(p("force.err"), NULL);
    CU_ASSERT_FATAL(out != NULL && err != NULL);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(len, 64);
    if (strstr(err, "prg.ctr, size class tiny (4 work elements): ran prg-soft-bitslice: pinned "
                    "by MPCENGINE_FORCE entry prg.ctr:prg-soft-bitslice\n") == NULL) {
        CU_FAIL("--verbose does not name the MPCENGINE_FORCE entry");
        fprintf(stderr, "  got: %s", err);
    }
    free(out);
    free(err);
    remove_file("force.out");
    remove_file("force.err");
    rmdir(plugins);
    tu_remove_dir(shared);
}

/* ---- messages name options, not the API ----------------------------------------- */

/* The last run's stderr names no API function, field or flag. */
static void assert_no_api_names(void)
{
    if (strstr(err_text, "mpce_") != NULL || strstr(err_text, "MPCE_") != NULL ||
        strstr(err_text, "moduli[") != NULL || strstr(err_text, "in[") != NULL) {
        CU_FAIL("a message names the API");
        fprintf(stderr, "  in: %s", err_text);
    }
}

static void test_messages_name_options(void)
{
    uint8_t buf[128] = {0};

    no_outputs();
    write_file("in.bin", buf, 128);
    /* Array arguments: the option's value, counted as the user counts them. */
    assert_refused(CLI("ntt", "forward", "--n", "8", "--moduli", "97,33", "--batch", "1", "--in",
                       p("in.bin"), "--out", p("out.bin")),
                   1, "mpcengine ntt forward: ", "--moduli value 2 = 33 is composite", "out.bin");
    assert_no_api_names();
    memset(buf, 0xff, 8);
    write_file("in.bin", buf, 64);
    assert_refused(CLI("ntt", "forward", "--n", "8", "--moduli", "97", "--batch", "1", "--in",
                       p("in.bin"), "--out", p("out.bin")),
                   1, "mpcengine ntt forward: ",
                   "word 0 of --in = 18446744073709551615 is not below --moduli value 1 = 97",
                   "out.bin");
    assert_no_api_names();
    memset(buf, 0, 8);
    write_file("b.bin", buf, 64);
    assert_refused(CLI("ntt", "mul", "--n", "8", "--moduli", "97", "--batch", "1", "--in",
                       p("b.bin"), "--in2", p("in.bin"), "--out", p("out.bin")),
                   1, "mpcengine ntt mul: ", "word 0 of --in2 = ", "out.bin");
    assert_no_api_names();
    remove_file("b.bin");
    /* The key parser speaks of the --key file (kept private: a key others
     * can read gets a warning line besides). */
    write_file("key.bin", "MDPF\x01\x08\x00\x00", 8);
    CU_ASSERT_FATAL(chmod(p("key.bin"), 0600) == 0);
    assert_refused(CLI("dpf", "eval", "--key", p("key.bin"), "--points", "1", "--out",
                       p("out.bin")),
                   1, "mpcengine dpf eval: --key: field 'length'", NULL, "out.bin");
    assert_no_api_names();
    remove_file("key.bin");
    /* Options the command hands the library as API fields. */
    const char *missing[] = {"list", "--config", p("no-such.conf"), NULL};
    assert_refused(run_argv(missing, 0), 1, "mpcengine list: ", "(named by --config)", NULL);
    assert_no_api_names();
    assert_refused(CLI("list", "--plugin-path", "/a::/b"), 1, "mpcengine list: ",
                   "--plugin-path (relative entries made absolute) = /a::/b: entry 2 is empty",
                   NULL);
    assert_no_api_names();
    /* The loader's advice for a directory that is not there names the
     * option the directory came from. */
    char gone[4300];
    snprintf(gone, sizeof(gone), "%s/no-such-dir", dir);
    CU_ASSERT_EQUAL(CLI("list", "--plugin-path", gone), 0);
    CU_ASSERT(strstr(err_text, "No such file or directory: check --plugin-path\n") != NULL);
    assert_no_api_names();
}

/* ---- pins and tune ------------------------------------------------------------ */

/* A configuration file in the scratch directory: the test's own settings
 * plus `tune` lines in [tune]. */
static void write_tune_conf(const char *name, const char *tune)
{
    char text[4600];
    snprintf(text, sizeof(text), "[engine]\nuser_config = no\n[tune]\n%s", tune);
    tu_write_text(p(name), text, 0644);
}

/* `mpcengine pins` runs its engine without tuning, whose mode is always off:
 * it must show the mode the files configure, and say it is not its own. */
static void test_pins_configured_mode(void)
{
    char tune[4500];
    snprintf(tune, sizeof(tune), "mode = warn\ndir = %s\n", p("pins-mode"));
    write_tune_conf("mode.conf", tune);
    const char *args[] = {"pins", "--config", p("mode.conf"), NULL};
    CU_ASSERT_EQUAL(run_argv(args, 0), 0);
    CU_ASSERT(strstr(out_text, "[tune] mode = warn (as configured; this command does not "
                               "tune)\n") != NULL);
    CU_ASSERT(strstr(out_text, "mode = off") == NULL);
    /* The test configuration's own mode, off, is shown as configured too. */
    CU_ASSERT_EQUAL(CLI("pins"), 0);
    CU_ASSERT(strstr(out_text, "[tune] mode = off (as configured; this command does not "
                               "tune)\n") != NULL);
    remove_file("mode.conf");
}

struct clear_run {
    const char *conf; /* --config */
    int out, err;     /* where its stdout and stderr go, opened by the parent */
};

/* `mpcengine pins --clear` as the unprivileged user; returns its exit
 * status. No CUnit here: this runs in tu_unprivileged's child. */
static int clear_unprivileged(void *arg)
{
    const struct clear_run *r = arg;
    const char *argv[] = {MPCENGINE_BIN, "pins", "--clear", "--config", r->conf, NULL};
    return spawn_to(argv, child_env(), r->out, r->err);
}

/* --clear deletes "the pins files this user can write": a file in a
 * directory the user cannot write is kept and named, and is no failure. */
static void test_pins_clear_keeps_unwritable(void)
{
    /* The scratch directory is the test's alone (0700): the unprivileged
     * run (as nobody when the test is root) gets one it can read. */
    char *shared = tu_temp_dir();
    char pins_dir[4200], pins_file[4300], conf_file[4300], text[4600];
    snprintf(pins_dir, sizeof(pins_dir), "%s/pins", shared);
    snprintf(pins_file, sizeof(pins_file), "%s/pins.ini", pins_dir);
    snprintf(conf_file, sizeof(conf_file), "%s/clear.conf", shared);
    snprintf(text, sizeof(text), "[engine]\nuser_config = no\n[tune]\nmode = off\ndir = %s\n",
             pins_dir);
    tu_write_text(conf_file, text, 0644);
    CU_ASSERT_FATAL(mkdir(pins_dir, 0755) == 0);
    tu_write_text(pins_file, "not even a pins file: --clear does not read it\n", 0644);
    CU_ASSERT_FATAL(chmod(pins_dir, 0555) == 0 && chmod(shared, 0755) == 0);

    struct clear_run r = {conf_file, open(p("clear.out"), O_RDWR | O_CREAT | O_TRUNC, 0644),
                          open(p("clear.err"), O_RDWR | O_CREAT | O_TRUNC, 0644)};
    CU_ASSERT_FATAL(r.out >= 0 && r.err >= 0);
    int rc = tu_unprivileged(clear_unprivileged, &r);
    close(r.out);
    close(r.err);
    char *out = (char *)read_file(p("clear.out"), NULL);
    char *err = (char *)read_file(p("clear.err"), NULL);
    CU_ASSERT_FATAL(out != NULL && err != NULL);
    if (rc != 0)
        fprintf(stderr, "  [mpcengine pins --clear ... exit %d] %s", rc, err);
    CU_ASSERT_EQUAL(rc, 0);
    char kept[4500];
    snprintf(kept, sizeof(kept), "kept %s: not writable by this user (run as root to clear "
             "it)\n", pins_file);
    CU_ASSERT(strstr(out, kept) != NULL);
    CU_ASSERT(strstr(out, "removed") == NULL);
    CU_ASSERT_EQUAL(err[0], '\0');
    CU_ASSERT(access(pins_file, F_OK) == 0);
    free(out);
    free(err);
    remove_file("clear.out");
    remove_file("clear.err");

    chmod(pins_dir, 0755);
    unlink(pins_file);
    rmdir(pins_dir);
    tu_remove_dir(shared);
}

/* A helper that cannot be run is named, with the setting that names it. */
static void test_tune_missing_helper(void)
{
    write_tune_conf("helper.conf", "mode = off\nhelper = /nonexistent\n");
    /* No modules: with the prefix's installed ones (./quickstart.sh before
     * ./quickstart.sh check) the engine would first warn that it cannot
     * vet them with that helper, a second line this test is not about. */
    char empty[4200];
    snprintf(empty, sizeof(empty), "%s", p("no-modules"));
    CU_ASSERT_FATAL(mkdir(empty, 0700) == 0 || errno == EEXIST);
    const char *args[] = {"tune", "--effort", "quick", "--config", p("helper.conf"),
                          "--plugin-path", empty, NULL};
    assert_refused(run_argv(args, 0), 1, "mpcengine tune: ",
                   "cannot run the probe helper /nonexistent: ", NULL);
    CU_ASSERT(strstr(err_text, "[tune] helper") != NULL);
    CU_ASSERT_EQUAL(out_text[0], '\0');
    remove_file("helper.conf");
    rmdir(empty);
}

/* ---- outputs that are not plain files ------------------------------------------ */

/* The 64 bytes `prg ctr --key key32 --counter 0 --blocks 4` writes, from a
 * plain file: what the other destinations must receive. */
static uint8_t *ctr_reference(size_t *len)
{
    remove_file("ref.bin");
    CU_ASSERT_FATAL(CLI("prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4", "--out",
                        p("ref.bin")) == 0);
    uint8_t *ref = read_file(p("ref.bin"), len);
    CU_ASSERT_FATAL(ref != NULL && *len == 64);
    remove_file("ref.bin");
    return ref;
}

/* Whether path is the character device major:minor. */
static int is_chr(const char *path, unsigned major_no, unsigned minor_no)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == major_no &&
           minor(st.st_rdev) == minor_no;
}

struct null_run {
    const char *conf; /* readable by the unprivileged user */
    int err;          /* its stderr, opened by the parent */
};

/* `prg ctr ... --out /dev/null` as an unprivileged user, who cannot create
 * files in /dev: a rename could never have worked there. */
static int null_unprivileged(void *arg)
{
    const struct null_run *r = arg;
    const char *argv[] = {MPCENGINE_BIN, "prg", "ctr", "--key", key32, "--counter", "0",
                          "--blocks", "4", "--out", "/dev/null", "--config", r->conf, NULL};
    return spawn_to(argv, child_env(), r->err, r->err);
}

/* A device is written in place, never replaced by a plain file. The real
 * /dev/null is only handed to a command already seen to leave a device
 * node alone (a scratch copy of it, where root can make one), and is put
 * back should it be broken all the same. */
static void test_out_device(void)
{
    int scratch_ok = 0;

    no_outputs();
    if (mknod(p("null"), S_IFCHR | 0666, makedev(1, 3)) == 0) {
        int fd = open(p("null"), O_WRONLY);
        if (fd >= 0) {
            close(fd);
            CU_ASSERT_EQUAL(CLI("prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4",
                                "--out", p("null")),
                            0);
            scratch_ok = is_chr(p("null"), 1, 3);
            if (!scratch_ok)
                CU_FAIL("--out on a device node replaced the node with a file");
            CU_ASSERT_EQUAL(leftovers(), 0);
        } else {
            printf("\n  note: device nodes cannot be opened in %s (nodev?): /dev/null only", dir);
        }
        remove_file("null");
    }
    if (!is_chr("/dev/null", 1, 3)) {
        CU_FAIL("/dev/null is not the null device before the test: not touching it");
        return;
    }
    if (geteuid() != 0 || scratch_ok) {
        CU_ASSERT_EQUAL(CLI("prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4",
                            "--out", "/dev/null"),
                        0);
        CU_ASSERT_EQUAL(err_text[0], '\0');
        if (!is_chr("/dev/null", 1, 3)) {
            CU_FAIL("--out /dev/null replaced /dev/null");
            /* Put the device back: the rest of the system needs it. */
            if (unlink("/dev/null") != 0 || mknod("/dev/null", S_IFCHR | 0666, makedev(1, 3)) != 0 ||
                chmod("/dev/null", 0666) != 0)
                fprintf(stderr, "\n  /dev/null IS BROKEN and could not be restored: %s\n"
                        "  as root: rm -f /dev/null; mknod -m 666 /dev/null c 1 3\n",
                        strerror(errno));
        }
    } else {
        printf("\n  note: root and no scratch device node to try first: --out /dev/null "
               "checked as an unprivileged user only");
    }

    /* As a user who may not create files in /dev. */
    char *shared = tu_temp_dir();
    char conf_file[4300];
    snprintf(conf_file, sizeof(conf_file), "%s/null.conf", shared);
    tu_write_text(conf_file, "[engine]\nuser_config = no\n[tune]\nmode = off\n", 0644);
    CU_ASSERT_FATAL(chmod(shared, 0755) == 0);
    struct null_run r = {conf_file, open(p("null.err"), O_RDWR | O_CREAT | O_TRUNC, 0644)};
    CU_ASSERT_FATAL(r.err >= 0);
    int rc = tu_unprivileged(null_unprivileged, &r);
    close(r.err);
    char *err = (char *)read_file(p("null.err"), NULL);
    CU_ASSERT_FATAL(err != NULL);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc != 0 || err[0] != '\0')
        fprintf(stderr, "  [unprivileged --out /dev/null: exit %d] %s", rc, err);
    CU_ASSERT_EQUAL(err[0], '\0');
    CU_ASSERT(is_chr("/dev/null", 1, 3));
    free(err);
    remove_file("null.err");
    tu_remove_dir(shared);
}

/* A FIFO gets the bytes through itself, and stays a FIFO. */
static void test_out_fifo(void)
{
    size_t ref_len = 0;
    uint8_t *ref = ctr_reference(&ref_len);
    struct stat st;
    uint8_t got[256];
    size_t got_len = 0;

    CU_ASSERT_FATAL(mkfifo(p("fifo"), 0600) == 0);
    /* The reader is there first (a FIFO's writer waits for one); 64 bytes
     * fit in its buffer, so the command finishes before they are read. */
    int fd = open(p("fifo"), O_RDONLY | O_NONBLOCK);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(CLI("prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4", "--out",
                        p("fifo")),
                    0);
    for (;;) {
        ssize_t r = read(fd, got + got_len, sizeof(got) - got_len);
        if (r <= 0)
            break;
        got_len += (size_t)r;
    }
    close(fd);
    CU_ASSERT(lstat(p("fifo"), &st) == 0 && S_ISFIFO(st.st_mode));
    CU_ASSERT(got_len == ref_len && memcmp(got, ref, ref_len) == 0);
    CU_ASSERT_EQUAL(leftovers(), 0);
    remove_file("fifo");
    free(ref);
}

/* A symbolic link is kept, and the file it leads to is replaced, also
 * when there is none yet. */
static void test_out_symlink(void)
{
    size_t ref_len = 0, len = 0;
    uint8_t *ref = ctr_reference(&ref_len);
    struct stat st;
    char to[64];

    write_file("target.bin", "old", 3);
    CU_ASSERT_FATAL(symlink("target.bin", p("link.bin")) == 0);
    CU_ASSERT_EQUAL(CLI("prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4", "--out",
                        p("link.bin")),
                    0);
    CU_ASSERT(lstat(p("link.bin"), &st) == 0 && S_ISLNK(st.st_mode));
    ssize_t n = readlink(p("link.bin"), to, sizeof(to) - 1);
    CU_ASSERT(n == 10 && memcmp(to, "target.bin", 10) == 0);
    uint8_t *got = read_file(p("target.bin"), &len);
    CU_ASSERT(got != NULL && len == ref_len && memcmp(got, ref, ref_len) == 0);
    free(got);
    CU_ASSERT_EQUAL(leftovers(), 0);
    /* A link to nothing yet, through another link. */
    CU_ASSERT_FATAL(symlink("made.bin", p("dangling.bin")) == 0);
    CU_ASSERT_FATAL(symlink("dangling.bin", p("chain.bin")) == 0);
    CU_ASSERT_EQUAL(CLI("prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4", "--out",
                        p("chain.bin")),
                    0);
    CU_ASSERT(lstat(p("chain.bin"), &st) == 0 && S_ISLNK(st.st_mode));
    CU_ASSERT(lstat(p("dangling.bin"), &st) == 0 && S_ISLNK(st.st_mode));
    got = read_file(p("made.bin"), &len);
    CU_ASSERT(got != NULL && len == ref_len && memcmp(got, ref, ref_len) == 0);
    free(got);
    CU_ASSERT_EQUAL(leftovers(), 0);
    /* A directory is named as such, before anything is written. */
    char sub[4300];
    snprintf(sub, sizeof(sub), "%s/sub", dir);
    CU_ASSERT_FATAL(mkdir(sub, 0700) == 0);
    assert_refused(CLI("prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4", "--out",
                       sub),
                   2, "mpcengine prg ctr: ", "is a directory: name a file", NULL);
    rmdir(sub);
    remove_file("chain.bin");
    remove_file("dangling.bin");
    remove_file("made.bin");
    remove_file("link.bin");
    remove_file("target.bin");
    free(ref);
}

/* Standard output failing leaves the files the user had as they were: it
 * is written before any file is renamed into place. */
static void test_stdout_failure_keeps_files(void)
{
    size_t len = 0;

    no_outputs();
    write_file("k0.bin", "the user's own key", 18);
    const char *gone[] = {"dpf", "gen", "--bits", "8", "--alpha", "1", "--beta", "1",
                          "--group", "u64", "--out0", p("k0.bin"), "--out1", "-", NULL};
    assert_refused(run_pipes(gone, 1, NULL, 0, 1), 1, "mpcengine dpf gen: ",
                   "--out1 -: cannot write to standard output: ", NULL);
    uint8_t *kept = read_file(p("k0.bin"), &len);
    CU_ASSERT(kept != NULL && len == 18 && memcmp(kept, "the user's own key", 18) == 0);
    free(kept);

    /* Likewise a device that refuses the bytes: the full device, a scratch
     * node of it where one can be made (root must not try the real one
     * with a command that might replace it), else /dev/full itself. */
    const char *full = NULL;
    char node[4400];
    int fd = -1;
    snprintf(node, sizeof(node), "%s", p("full"));
    if (mknod(node, S_IFCHR | 0666, makedev(1, 7)) == 0 && (fd = open(node, O_WRONLY)) >= 0)
        full = node;
    else if (geteuid() != 0 && is_chr("/dev/full", 1, 7))
        full = "/dev/full";
    if (fd >= 0)
        close(fd);
    if (full == NULL) {
        printf("\n  note: no full device to write to: a failing device output not checked");
    } else {
        assert_refused(CLI("dpf", "gen", "--bits", "8", "--alpha", "1", "--beta", "1", "--group",
                           "u64", "--out0", p("k0.bin"), "--out1", full),
                       1, "mpcengine dpf gen: ", "--out1: cannot write to '", NULL);
        kept = read_file(p("k0.bin"), &len);
        CU_ASSERT(kept != NULL && len == 18 && memcmp(kept, "the user's own key", 18) == 0);
        free(kept);
        CU_ASSERT(is_chr(full, 1, 7));
    }
    remove_file("full");
    remove_file("k0.bin");
}

/* ---- secret outputs ------------------------------------------------------------ */

static unsigned mode_of(const char *name)
{
    struct stat st;
    return stat(p(name), &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0u;
}

/* Keys, shares and pads are their owner's alone whatever the umask, also
 * when they replace a file others could read; other outputs keep the
 * usual mode. A --key file others can read gets --key-file's warning. */
static void test_secret_outputs(void)
{
    mode_t old_mask = umask(022);
    uint8_t zero[64] = {0};

    no_outputs();
    write_file("k1.bin", "readable", 8);
    CU_ASSERT_FATAL(chmod(p("k1.bin"), 0644) == 0);
    CU_ASSERT_EQUAL(CLI("dpf", "gen", "--bits", "8", "--alpha", "1", "--beta", "1", "--group",
                        "u64", "--out0", p("k0.bin"), "--out1", p("k1.bin")),
                    0);
    CU_ASSERT_EQUAL(mode_of("k0.bin"), 0600);
    CU_ASSERT_EQUAL(mode_of("k1.bin"), 0600);
    CU_ASSERT_EQUAL(CLI("dpf", "eval", "--key", p("k0.bin"), "--points", "1", "--out",
                        p("out.bin")),
                    0);
    CU_ASSERT_EQUAL(err_text[0], '\0'); /* 0600: nothing to warn about */
    CU_ASSERT_EQUAL(mode_of("out.bin"), 0600);
    remove_file("out.bin");
    CU_ASSERT_EQUAL(CLI("prg", "ctr", "--key", key32, "--counter", "0", "--blocks", "4", "--out",
                        p("out.bin")),
                    0);
    CU_ASSERT_EQUAL(mode_of("out.bin"), 0600);
    remove_file("out.bin");
    write_file("in.bin", zero, 64);
    CU_ASSERT_EQUAL(CLI("ntt", "forward", "--n", "8", "--moduli", "97", "--batch", "1", "--in",
                        p("in.bin"), "--out", p("out.bin")),
                    0);
    CU_ASSERT_EQUAL(mode_of("out.bin"), 0644);

    CU_ASSERT_FATAL(chmod(p("k0.bin"), 0644) == 0);
    CU_ASSERT_EQUAL(CLI("dpf", "evalall", "--key", p("k0.bin"), "--out", p("out.bin")), 0);
    CU_ASSERT(strstr(err_text, "mpcengine dpf evalall: warning: --key '") != NULL);
    CU_ASSERT(strstr(err_text, "readable by every user (mode 0644): run chmod go-rwx") != NULL);
    CU_ASSERT_FATAL(chmod(p("k0.bin"), 0640) == 0);
    CU_ASSERT_EQUAL(CLI("dpf", "eval", "--key", p("k0.bin"), "--points", "1", "--out",
                        p("out.bin")),
                    0);
    CU_ASSERT(strstr(err_text, "mpcengine dpf eval: warning: --key '") != NULL);
    CU_ASSERT(strstr(err_text, "readable by its group (mode 0640)") != NULL);
    umask(old_mask);
    no_outputs();
    remove_file("in.bin");
}

/* ---- list --names ------------------------------------------------------------- */

/* The listing the shell completion runs on every Tab: names only, at once,
 * and no tune even where one is due (a configuration with [tune] mode =
 * auto and the probe helper at hand: plain `list` writes pins.ini there). */
static void test_list_names(void)
{
    CU_ASSERT_EQUAL(CLI("list", "--names"), 0);
    CU_ASSERT(strncmp(out_text, "prg-soft-bitslice\n", 18) == 0 ||
              strstr(out_text, "\nprg-soft-bitslice\n") != NULL);
    CU_ASSERT(strstr(out_text, "\nntt-soft\n") != NULL);
    CU_ASSERT(strstr(out_text, "PLUGIN") == NULL);
    CU_ASSERT(strstr(out_text, " ") == NULL);
    CU_ASSERT_EQUAL(err_text[0], '\0');
    CU_ASSERT_EQUAL(CLI("list", "--names", "--primitive", "ntt"), 0);
    CU_ASSERT_STRING_EQUAL(out_text, "ntt-soft\n");
    CU_ASSERT_EQUAL(CLI("list", "--primitive", "dpf"), 0);
    CU_ASSERT(strstr(out_text, "dpf-soft") != NULL);
    CU_ASSERT(strstr(out_text, "prg-soft-bitslice") == NULL);
    assert_refused(CLI("list", "--names", "--primitive", "aes"), 2, "mpcengine list: ",
                   "--primitive: expected prg, ntt, lpn or dpf, got 'aes'", NULL);
    assert_refused(CLI("list", "--names", "--json"), 2, "mpcengine list: ",
                   "--json and --names: give one of them", NULL);

    char probe[4200], pins_dir[4200], pins_file[4300], text[8800];
    snprintf(probe, sizeof(probe), "%s", MPCENGINE_BIN);
    snprintf(strrchr(probe, '/') + 1, sizeof(probe) - (size_t)(strrchr(probe, '/') + 1 - probe),
             "probe/mpcengine-probe");
    if (access(probe, X_OK) != 0) {
        printf("\n  skipped: no probe helper at %s: --names not checked against a tune", probe);
        return;
    }
    snprintf(pins_dir, sizeof(pins_dir), "%s/names-pins", dir);
    snprintf(pins_file, sizeof(pins_file), "%s/pins.ini", pins_dir);
    CU_ASSERT_FATAL(mkdir(pins_dir, 0700) == 0);
    snprintf(text, sizeof(text), "[engine]\nuser_config = no\n[tune]\nmode = auto\ndir = %s\n"
             "helper = %s\n", pins_dir, probe);
    tu_write_text(p("auto.conf"), text, 0644);
    const char *names[] = {"list", "--names", "--primitive", "prg", "--config", p("auto.conf"),
                           NULL};
    CU_ASSERT_EQUAL(run_argv(names, 0), 0);
    CU_ASSERT(strstr(out_text, "prg-soft-bitslice\n") != NULL);
    CU_ASSERT(strstr(out_text, "ntt-soft") == NULL);
    CU_ASSERT(access(pins_file, F_OK) != 0);
    remove_file("auto.conf");
    char *d = strdup(pins_dir);
    CU_ASSERT_FATAL(d != NULL);
    tu_remove_dir(d);
}

/* ---- help ------------------------------------------------------------------- */

/* Every option's description starts in one column, in every command's help,
 * and so do their continuation lines; an option too long for it stands
 * alone on its line, its text below. */
static void test_help_columns(void)
{
    static const char *const cmds[][2] = {
        {"list", NULL}, {"selftest", NULL}, {"config", NULL}, {"prg", NULL},
        {"ntt", NULL},  {"lpn", NULL},      {"dpf", NULL},    {"bench", NULL},
        {"tune", NULL}, {"pins", NULL},
    };
    enum { COL = 21 };
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        const char *args[] = {cmds[i][0], "--help", NULL};
        CU_ASSERT_EQUAL(run_argv(args, 0), 0);
        int in_options = 0;
        for (const char *line = out_text; *line != '\0';) {
            const char *end = strchr(line, '\n');
            size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
            size_t indent = strspn(line, " ");
            int bad = 0;
            if (strncmp(line, "  --", 4) == 0) {
                in_options = 1;
                /* "  --name META" then the text at COL, or nothing */
                size_t name_end = 2 + strcspn(line + 2, " \n");
                if (line[name_end] == ' ' && line[name_end + 1] >= 'A' && line[name_end + 1] <= 'Z')
                    name_end += 1 + strcspn(line + name_end + 1, " \n");
                bad = len > name_end && (len <= COL || line[COL - 1] != ' ' || line[COL] == ' ' ||
                                         strspn(line + name_end, " ") != COL - name_end);
            } else if (in_options && indent > 2) {
                bad = indent != COL;
            } else {
                in_options = 0;
            }
            if (bad) {
                CU_FAIL("a --help line is out of its column");
                fprintf(stderr, "  mpcengine %s --help: '%.*s'\n", cmds[i][0], (int)len, line);
            }
            line += len + (end != NULL);
        }
    }
}

static const struct tu_test tests[] = {
    {"list", test_list},
    {"--plugin-path for every command", test_plugin_path},
    {"selftest", test_selftest},
    {"help", test_help},
    {"prg", test_prg},
    {"ntt", test_ntt},
    {"lpn", test_lpn},
    {"dpf", test_dpf},
    {"dpf_random_seeds", test_dpf_random_seeds},
    {"bad_sizes", test_bad_sizes},
    {"bad_values", test_bad_values},
    {"bad_usage", test_bad_usage},
    {"engine_refusals", test_engine_refusals},
    {"config", test_config},
    {"warnings_printed", test_warnings_printed},
    {"dangling pin: list and selftest warn", test_dangling_pin_warns},
    {"pins shows the configured mode", test_pins_configured_mode},
    {"pins --clear keeps what it cannot write", test_pins_clear_keeps_unwritable},
    {"tune names a missing helper", test_tune_missing_helper},
    {"'-': prg and ntt through pipes", test_stdio_prg_ntt},
    {"'-': lpn and dpf through pipes", test_stdio_lpn_dpf},
    {"'-': refusals", test_stdio_refusals},
    {"keys and seeds from files", test_key_files},
    {"selftest --json", test_selftest_json},
    {"bench through a pipe", test_bench_pipe},
    {"bench flushes each row", test_bench_rows_flushed},
    {"bench progress on a terminal", test_bench_progress_on_terminal},
    {"no binary output to a terminal", test_binary_not_to_terminal},
    {"--verbose names the implementation and why", test_verbose},
    {"--verbose names an MPCENGINE_FORCE entry", test_verbose_force},
    {"messages name options, not the API", test_messages_name_options},
    {"--out on a device: written in place", test_out_device},
    {"--out on a FIFO: written through it", test_out_fifo},
    {"--out on a symbolic link: the link kept", test_out_symlink},
    {"stdout failing keeps the files there", test_stdout_failure_keeps_files},
    {"secret outputs are 0600; --key warns", test_secret_outputs},
    {"list --names: at once, no tune", test_list_names},
    {"--help: one column for descriptions", test_help_columns},
    {NULL, NULL},
};

int main(void)
{
    setup();
    int rc = tu_main("cli", tests);
    free(out_text);
    free(err_text);
    free(out_bin);
    return rc;
}
