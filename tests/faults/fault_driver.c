/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The allocation-failure driver (run by tests/faults/check_faults.sh with
 * faultshim.so preloaded). For a scenario it first counts the allocations a
 * clean run makes (T), then for N = 1 .. T (every N, or a spread sample of
 * them in the quick mode) runs the scenario in a forked child with the Nth
 * allocation failing, and checks that:
 *   - the child neither crashed nor aborted;
 *   - the call that met the failure returned an error with a message, or
 *     the scenario absorbed it (a retry, a fallback) and its results are the
 *     clean run's, byte for byte;
 *   - every block allocated in the scenario was freed;
 *   - files it writes are the old ones or the new ones, whole, and no
 *     temporary file is left beside them.
 * Forking after the set-up keeps each try independent and cheap: OpenSSL's
 * and the C library's lazily made globals are warmed up once, before any
 * counting, in the parent.
 *
 * usage: fault_driver SCENARIO WORKDIR [quick|full|once|at=N[,N...]]
 * (at=: only those tries, to rerun what a "FAIL SCENARIO N=..." line named)
 * Scenarios: init, ops, dpfparse, pinswrite, census, config, vet, vetcached.
 * Prints one line per failed check and a summary line
 * "SCENARIO: T allocations, K failures injected: E errors, A absorbed, F bad".
 */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <mpcengine.h>

#include "engine/runtime/conf.h"
#include "engine/runtime/vet.h"
#include "engine/selector/pins.h"
#include "engine/selector/selector.h"

/* Quick mode: at most this many tries per scenario, spread over 1 .. T. */
#define QUICK_TRIES 150

static void (*shim_arm)(long);
static long (*shim_disarm)(void);
static int (*shim_fired)(void);
static size_t (*shim_live)(int);

static const char *workdir;
static char pins_dir[4096], pins_path[4200], conf_path[4200], census_path[4200];
static char dropin_dir[4200];
/* The vet scenarios' configuration and state directory (verdicts/ in it). */
static char vet_conf_path[4200], vet_dir[4200], vet_verdicts[4300];

/* What a child reports to the parent. */
struct report {
    int status;       /* the scenario's first non-OK mpce_status, or its own -1 */
    int fired;
    long count;
    size_t live;
    int fds_left;     /* descriptors open after the scenario that were not before */
    int objects_left; /* shared objects still loaded that were not before */
    uint64_t digest;  /* of what the scenario produced, when status is OK */
    char msg[2048];   /* the failed call and its error; what was made, when status is OK */
    char err[1024];   /* the error's own text (mpce_last_error()), when status is not OK */
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static void fail_msg(struct report *r, const char *what)
{
    const char *e = mpce_last_error();
    snprintf(r->msg, sizeof(r->msg), "%s: %s", what, e ? e : "");
    snprintf(r->err, sizeof(r->err), "%s", e ? e : "");
}

#define CHECK(call) \
    do { \
        mpce_status st_ = (call); \
        if (st_ != MPCE_OK) { \
            r->status = (int)st_; \
            fail_msg(r, #call); \
            goto out; \
        } \
    } while (0)

static const mpce_options engine_opts = {
    .struct_size = sizeof(mpce_options),
    .config_path = conf_path,
    .plugin_path = TEST_PLUGIN_PATH,
    .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV,
};

/* ---- scenarios ------------------------------------------------------------ */

/* Each runs with the shim armed around `body`; set-up before it is not
 * counted. */
struct scenario {
    const char *name;
    void (*setup)(void);           /* in the parent, once */
    void *(*prepare)(void);        /* in the child, before arming */
    void (*body)(void *state, struct report *r);
    int (*files_ok)(char *why, size_t len); /* in the parent, after each try */
    void (*restore)(void);         /* in the parent, before each try */
};

/* An engine made with o, every implementation listed (and so self-tested),
 * then freed: the rows' names and verdicts are the results. */
static void engine_rows(const mpce_options *o, struct report *r)
{
    mpce_engine *e = NULL;
    const mpce_impl_info *rows;
    size_t n;
    CHECK(mpce_engine_new(o, &e));
    CHECK(mpce_list(e, 1, &rows, &n));
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        r->digest = fnv(r->digest, rows[i].impl, strlen(rows[i].impl));
        r->digest = fnv(r->digest, rows[i].selftest, strlen(rows[i].selftest));
        /* An implementation this CPU cannot run is no fault's doing. */
        int cpu_lacks = rows[i].impl[0] && strcmp(rows[i].selftest, "skipped") == 0 &&
                        strncmp(rows[i].reason, "not usable here", 15) == 0;
        if (strcmp(rows[i].selftest, "pass") != 0 && !cpu_lacks && at < sizeof(r->msg))
            at += (size_t)snprintf(r->msg + at, sizeof(r->msg) - at, "%s%s %s: %s",
                                   at ? "; " : "", *rows[i].impl ? rows[i].impl : rows[i].path,
                                   rows[i].selftest, rows[i].reason);
    }
out:
    mpce_engine_free(e);
}

/* init: an engine from a configuration file with the aesni module and a
 * pins file, every implementation self-tested, then freed. */
static void init_body(void *state, struct report *r)
{
    (void)state;
    engine_rows(&engine_opts, r);
}

/* ops: contexts and one operation per primitive on an engine made before. */
static void *ops_prepare(void)
{
    mpce_engine *e = NULL;
    if (mpce_engine_new(&engine_opts, &e) != MPCE_OK) {
        fprintf(stderr, "fault_driver: engine: %s\n", mpce_last_error());
        _exit(3);
    }
    return e;
}

static const uint64_t ntt_q[1] = {0x3ffffffd20001ull};

static void ops_body(void *state, struct report *r)
{
    mpce_engine *e = state;
    mpce_prg *prg = NULL;
    mpce_ntt *ntt = NULL;
    mpce_lpn *lpn = NULL;
    mpce_dpf *dpf = NULL;
    mpce_dpf_key *k0 = NULL, *k1 = NULL;
    uint8_t key[16] = {1, 2, 3}, blocks[64 * 16], table[256 * 16], out16[16 * 16];
    uint64_t poly[64], fwd[64];
    for (size_t i = 0; i < sizeof(table); i++)
        table[i] = (uint8_t)(i * 7);
    for (size_t i = 0; i < 64; i++)
        poly[i] = i * 1234567u;
    memset(out16, 0, sizeof(out16));

    CHECK(mpce_prg_new(e, key, 1, &prg));
    CHECK(mpce_prg_ctr(prg, NULL, 0, 5, blocks, 64));
    r->digest = fnv(r->digest, blocks, sizeof(blocks));
    CHECK(mpce_ntt_new(e, 64, ntt_q, 1, &ntt));
    CHECK(mpce_ntt_forward(ntt, NULL, poly, fwd, 1));
    r->digest = fnv(r->digest, fwd, sizeof(fwd));
    CHECK(mpce_lpn_new(e, key, 8, &lpn));
    CHECK(mpce_lpn_fold(lpn, NULL, 0, table, 256, out16, 16, NULL));
    r->digest = fnv(r->digest, out16, sizeof(out16));
    static const uint8_t beta[16] = {9, 9, 9};
    static const uint8_t s0[16] = {1}, s1[16] = {2};
    uint64_t pts[2] = {77, 78};
    uint8_t ev[2 * 16];
    CHECK(mpce_dpf_new(e, 16, MPCE_DPF_BYTES, NULL, NULL, &dpf));
    CHECK(mpce_dpf_gen(dpf, NULL, 77, beta, s0, s1, &k0, &k1));
    CHECK(mpce_dpf_eval(dpf, NULL, k0, pts, 2, ev));
    r->digest = fnv(r->digest, ev, sizeof(ev));
out:
    mpce_dpf_key_free(k0);
    mpce_dpf_key_free(k1);
    mpce_dpf_free(dpf);
    mpce_lpn_free(lpn);
    mpce_ntt_free(ntt);
    mpce_prg_free(prg);
    /* The engine goes too: what the calls cached in it (routes, plugin
     * states) must be given back with it. */
    mpce_engine_free(e);
}

/* dpfparse: a batch of serialized keys parsed and evaluated. */
#define DPF_KEYS 8
struct dpf_state {
    mpce_engine *e;
    mpce_dpf *dpf;
    uint8_t *ser;
    size_t len;
};

static void *dpf_prepare(void)
{
    static struct dpf_state s;
    static const uint8_t beta[16] = {5};
    s.e = ops_prepare();
    if (mpce_dpf_new(s.e, 20, MPCE_DPF_BYTES, NULL, NULL, &s.dpf) != MPCE_OK)
        _exit(3);
    size_t ks = mpce_dpf_key_size(20);
    s.ser = malloc(ks * DPF_KEYS);
    s.len = ks * DPF_KEYS;
    for (unsigned i = 0; i < DPF_KEYS; i += 2) {
        uint8_t s0[16] = {(uint8_t)i}, s1[16] = {(uint8_t)(i + 100)};
        mpce_dpf_key *a, *b;
        if (!s.ser || mpce_dpf_gen(s.dpf, NULL, i * 1000, beta, s0, s1, &a, &b) != MPCE_OK ||
            mpce_dpf_key_serialize(a, s.ser + ks * i, ks, NULL) != MPCE_OK ||
            mpce_dpf_key_serialize(b, s.ser + ks * (i + 1), ks, NULL) != MPCE_OK)
            _exit(3);
        mpce_dpf_key_free(a);
        mpce_dpf_key_free(b);
    }
    return &s;
}

static void dpf_body(void *state, struct report *r)
{
    struct dpf_state *s = state;
    mpce_dpf_keys *batch = NULL;
    mpce_dpf_key *one = NULL;
    uint64_t pts[DPF_KEYS];
    uint8_t out[DPF_KEYS * 16];
    for (unsigned i = 0; i < DPF_KEYS; i++)
        pts[i] = (i / 2) * 1000;
    CHECK(mpce_dpf_key_parse(s->ser, mpce_dpf_key_size(20), &one));
    CHECK(mpce_dpf_keys_parse(s->dpf, s->ser, s->len, DPF_KEYS, &batch));
    CHECK(mpce_dpf_eval_batch(s->dpf, NULL, batch, 0, pts, DPF_KEYS, out));
    r->digest = fnv(r->digest, out, sizeof(out));
out:
    mpce_dpf_keys_free(batch);
    mpce_dpf_key_free(one);
    mpce_dpf_free(s->dpf);
    mpce_engine_free(s->e);
}

/* ---- files ---------------------------------------------------------------- */

static char *slurp_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            char *b = realloc(buf, cap);
            if (!b)
                break;
            buf = b;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0)
            break;
        n += got;
    }
    fclose(f);
    *len = n;
    return buf;
}

static void put_file(const char *path, const char *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "fault_driver: cannot write %s: %s\n", path, strerror(errno));
        exit(2);
    }
}

/* Names in dir other than the allowed ones ("" ends the list). */
static int stray_files(const char *dir, const char *const *allowed, char *why, size_t len)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *de;
    int bad = 0;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        int ok = 0;
        for (const char *const *a = allowed; **a; a++)
            ok |= strcmp(de->d_name, *a) == 0;
        if (!ok && !bad) {
            snprintf(why, len, "%s/%s left behind", dir, de->d_name);
            bad = 1;
        }
    }
    closedir(d);
    return bad;
}

/* The file is old_text or new_text, whole. */
static char *old_text, *new_text;
static size_t old_len, new_len;

static int whole(const char *path, char *why, size_t len)
{
    size_t n = 0;
    char *now = slurp_file(path, &n);
    int ok = (now == NULL && old_text == NULL) ||
             (now && old_text && n == old_len && memcmp(now, old_text, n) == 0) ||
             (now && new_text && n == new_len && memcmp(now, new_text, n) == 0);
    if (!ok)
        snprintf(why, len, "%s is neither the old file nor the new one (%zu bytes)", path, n);
    free(now);
    return ok;
}

static void sample_pins(struct mpce_pins *p, const char *verdict)
{
    memset(p, 0, sizeof(*p));
    struct mpce_pins_cand c = {.impl = "prg-soft", .status = "ok", .median = 1e-6,
                               .spread = 0, .why = ""};
    struct mpce_pins_row row = {.key = "prg.ecb.small", .shape = "n=64", .winner = "prg-soft",
                                .runner_up = "", .verdict = (char *)verdict, .cands = &c,
                                .n_cands = 1};
    struct mpce_pins_module m = {.plugin = "soft", .path = "(built-in)", .sha256 = "",
                                 .devices = ""};
    if (mpce_pins_set_header(p, mpce_version(), "2026-12-01T00:00:00Z", "quick", "fault-test") ||
        mpce_pins_set_policy(p, "constant-time") || mpce_pins_add_module(p, &m) ||
        mpce_pins_add_row(p, &row)) {
        fprintf(stderr, "fault_driver: cannot make a pins sample\n");
        exit(2);
    }
}

static void pins_setup(void)
{
    struct mpce_pins p;
    char why[1024];
    old_text = slurp_file(pins_path, &old_len);
    if (old_text) /* a tree made by an earlier run */
        return;
    sample_pins(&p, "first");
    if (mpce_pins_write(pins_path, &p, why, sizeof(why)) != 0) {
        fprintf(stderr, "fault_driver: %s\n", why);
        exit(2);
    }
    mpce_pins_free(&p);
    old_text = slurp_file(pins_path, &old_len);
}

static void pins_restore(void)
{
    put_file(pins_path, old_text, old_len);
}

static int pins_files_ok(char *why, size_t len)
{
    static const char *const allowed[] = {"pins.ini", "pins.lock", "census.txt",
                                          "census.lock", ""};
    return whole(pins_path, why, len) && !stray_files(pins_dir, allowed, why, len);
}

/* pinswrite: what a tune does with the file: lock, read, replace a row,
 * write, unlock. */
static void pinswrite_body(void *state, struct report *r)
{
    (void)state;
    char why[1024] = "";
    struct mpce_pins p;
    memset(&p, 0, sizeof(p));
    int fd = mpce_pins_lock(pins_dir, 1000, why, sizeof(why));
    if (fd < 0)
        goto fail;
    if (mpce_pins_read(pins_path, &p, why, sizeof(why)) != MPCE_PINS_READ_OK)
        goto fail;
    struct mpce_pins_cand c = {.impl = "prg-soft", .status = "ok", .median = 2e-6,
                               .spread = 0, .why = ""};
    struct mpce_pins_row row = {.key = "prg.ecb.small", .shape = "n=64", .winner = "prg-soft",
                                .runner_up = "", .verdict = "second", .cands = &c,
                                .n_cands = 1};
    if (mpce_pins_put_row(&p, &row) != 0) {
        snprintf(why, sizeof(why), "mpce_pins_put_row: out of memory");
        goto fail;
    }
    if (mpce_pins_write(pins_path, &p, why, sizeof(why)) != 0)
        goto fail;
    mpce_pins_unlock(fd);
    mpce_pins_free(&p);
    r->digest = 1;
    return;
fail:
    r->status = -1;
    snprintf(r->msg, sizeof(r->msg), "%s", why);
    snprintf(r->err, sizeof(r->err), "%s", why);
    mpce_pins_unlock(fd);
    mpce_pins_free(&p);
}

/* census: an engine counting calls, merged into census.txt when freed.
 * A failure there is only logged (the application is exiting): the check
 * is that the file is the old one or the new one, whole. */
static void *census_prepare(void)
{
    mpce_engine *e = ops_prepare();
    uint8_t key[16] = {0}, out[16 * 4];
    mpce_prg *prg = NULL;
    if (mpce_prg_new(e, key, 1, &prg) != MPCE_OK || mpce_prg_ctr(prg, NULL, 0, 0, out, 4))
        _exit(3);
    mpce_prg_free(prg);
    return e;
}

static void census_body(void *state, struct report *r)
{
    mpce_engine_free(state);
    r->digest = 1;
}

static void census_setup(void)
{
    static const char text[] = "# libmpcengine census\nprg.ctr.tiny 5\n";
    old_text = slurp_file(census_path, &old_len);
    if (old_text)
        return;
    put_file(census_path, text, sizeof(text) - 1);
    old_text = slurp_file(census_path, &old_len);
}

static void census_restore(void)
{
    put_file(census_path, old_text, old_len);
}

static int census_files_ok(char *why, size_t len)
{
    static const char *const allowed[] = {"pins.ini", "pins.lock", "census.txt",
                                          "census.lock", ""};
    return whole(census_path, why, len) && !stray_files(pins_dir, allowed, why, len);
}

/* config: the configuration layers alone, with a drop-in directory. */
static void config_body(void *state, struct report *r)
{
    (void)state;
    struct mpce_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    CHECK(mpce_config_init(&cfg));
    CHECK(mpce_config_read_file(&cfg, conf_path, MPCE_CONF_REQUIRED, "the test"));
    CHECK(mpce_config_read_dir(&cfg, dropin_dir));
    r->digest = fnv(r->digest, &cfg.n_files, sizeof(cfg.n_files));
    r->digest = fnv(r->digest, &cfg.n_pins, sizeof(cfg.n_pins));
    r->digest = fnv(r->digest, &cfg.n_settings, sizeof(cfg.n_settings));
    snprintf(r->msg, sizeof(r->msg), "%zu files, %zu pins, %zu settings", cfg.n_files,
             cfg.n_pins, cfg.n_settings);
out:
    mpce_config_free(&cfg);
}

/* vet and vetcached: an engine whose modules are vetted out of process
 * by the build's probe helper (vet.c, verdicts.c), with no verdict cached
 * (the helper runs, the verdict is written) or with the clean run's verdict
 * in place (it is read, nothing is spawned). The helper inherits the shim
 * but is never armed: the faults are the host's. A shortage there must be
 * an error, not a module failed or unvetted for a reason that is not its
 * own; the verdict file is absent or whole, with no temporary file beside
 * it. */
static const mpce_options vet_opts = {
    .struct_size = sizeof(mpce_options),
    .config_path = vet_conf_path,
    .plugin_path = TEST_PLUGIN_PATH,
    .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV,
};

static void vet_body(void *state, struct report *r)
{
    (void)state;
    engine_rows(&vet_opts, r);
}

/* The one verdict file a clean run writes, by name, and its text. */
static char vet_file[4400];

static void vet_find_file(void)
{
    DIR *d = opendir(vet_verdicts);
    struct dirent *de;
    vet_file[0] = '\0';
    while (d && (de = readdir(d)) != NULL)
        if (strlen(de->d_name) > 4 && strcmp(de->d_name + strlen(de->d_name) - 4, ".txt") == 0)
            snprintf(vet_file, sizeof(vet_file), "%s/%s", vet_verdicts, de->d_name);
    if (d)
        closedir(d);
}

static void vet_clear(void)
{
    DIR *d = opendir(vet_verdicts);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        char path[4700];
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", vet_verdicts, de->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
}

/* A clean vet's verdict file, once: its path and text are kept beside the
 * tree (vet-clean.*), outside the state directory, so that a later run
 * (the once mode, with file faults under vet/) finds them without vetting. */
static void vet_setup(void)
{
    if (!TEST_PLUGIN_PATH[0]) {
        printf("skipped: no module is built here to vet (TEST_PLUGIN_PATH is empty)\n");
        exit(77);
    }
    char name_path[4400], text_path[4400];
    snprintf(name_path, sizeof(name_path), "%s/vet-clean.name", workdir);
    snprintf(text_path, sizeof(text_path), "%s/vet-clean.txt", workdir);
    size_t n = 0;
    char *name = slurp_file(name_path, &n);
    if (name && n > 0 && n < sizeof(vet_file)) {
        memcpy(vet_file, name, n);
        vet_file[n] = '\0';
        free(name);
        new_text = slurp_file(text_path, &new_len);
        if (new_text)
            return;
    }
    free(name);
    char text[9000];
    int len = snprintf(text, sizeof(text), "[engine]\nthreads = 1\n[tune]\nmode = off\n"
                       "dir = %s\nvet = yes\nhelper = %s\n", vet_dir, PROBE_BIN);
    put_file(vet_conf_path, text, (size_t)len);
    mkdir(vet_dir, 0755);
    vet_clear();
    mpce_engine *e = NULL;
    if (mpce_engine_new(&vet_opts, &e) != MPCE_OK) {
        fprintf(stderr, "fault_driver: vet: %s\n", mpce_last_error());
        exit(2);
    }
    mpce_engine_free(e);
    vet_find_file();
    if (!vet_file[0]) {
        fprintf(stderr, "fault_driver: vet: a clean engine cached no verdict in %s\n",
                vet_verdicts);
        exit(2);
    }
    new_text = slurp_file(vet_file, &new_len);
    put_file(name_path, vet_file, strlen(vet_file));
    put_file(text_path, new_text, new_len);
}

static void vet_restore(void)
{
    vet_clear();
}

static void vetcached_setup(void)
{
    vet_setup();
    old_text = new_text;
    old_len = new_len;
}

static void vetcached_restore(void)
{
    vet_clear();
    put_file(vet_file, new_text, new_len);
}

static int vet_files_ok(char *why, size_t len)
{
    const char *base = strrchr(vet_file, '/') + 1;
    const char *const allowed[] = {base, ""};
    return whole(vet_file, why, len) && !stray_files(vet_verdicts, allowed, why, len);
}

static const struct scenario scenarios[] = {
    {"init", pins_setup, NULL, init_body, pins_files_ok, pins_restore},
    {"ops", pins_setup, ops_prepare, ops_body, pins_files_ok, pins_restore},
    {"dpfparse", pins_setup, dpf_prepare, dpf_body, pins_files_ok, pins_restore},
    {"pinswrite", pins_setup, NULL, pinswrite_body, pins_files_ok, pins_restore},
    {"census", census_setup, census_prepare, census_body, census_files_ok, census_restore},
    {"config", pins_setup, NULL, config_body, pins_files_ok, pins_restore},
    {"vet", vet_setup, NULL, vet_body, vet_files_ok, vet_restore},
    {"vetcached", vetcached_setup, NULL, vet_body, vet_files_ok, vetcached_restore},
};

/* In a single try (FAULT_ONLY), where a crash happened. */
static void on_crash(int sig)
{
    void *frames[32];
    int n = backtrace(frames, 32);
    dprintf(STDERR_FILENO, "fault_driver: signal %d at:\n", sig);
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
    _exit(128 + sig);
}

/* ---- the loop ------------------------------------------------------------- */

/* What the process keeps on purpose for its life, given back before the
 * blocks still allocated are counted. OpenSSL keeps a failure's details
 * (file and function names it copies) in the thread's error queue until
 * they are read or cleared; the engine keeps vet verdicts in memory where
 * no state directory could be written. Neither is a leak. */
static void clear_process_caches(void)
{
    ERR_clear_error();
    mpce_verdict_memory_clear();
}

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    for (const struct dirent *de; (de = readdir(d)) != NULL;)
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

static int count_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info;
    (void)size;
    ++*(int *)arg;
    return 0;
}

/* Shared objects loaded now: a module whose dlclose a failure path forgot
 * stays, though its memory was never the engine's to count. */
static int count_objects(void)
{
    int n = 0;
    dl_iterate_phdr(count_one, &n);
    return n;
}

static int run_child(const struct scenario *sc, long n, struct report *rep, char *how,
                     size_t how_len)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        struct report r;
        memset(&r, 0, sizeof(r));
        r.digest = 0xcbf29ce484222325ull;
        const int fds_before = count_fds(), objects_before = count_objects();
        void *state = sc->prepare ? sc->prepare() : NULL;
        shim_arm(n);
        sc->body(state, &r);
        clear_process_caches();
        r.count = shim_disarm();
        r.fired = shim_fired();
        r.live = shim_live(STDERR_FILENO);
        r.fds_left = count_fds() - fds_before;
        r.objects_left = count_objects() - objects_before;
        ssize_t w = write(fds[1], &r, sizeof(r));
        _exit(w == (ssize_t)sizeof(r) ? 0 : 4);
    }
    close(fds[1]);
    ssize_t got = read(fds[0], rep, sizeof(*rep));
    close(fds[0]);
    int ws = 0;
    waitpid(pid, &ws, 0);
    if (WIFSIGNALED(ws)) {
        snprintf(how, how_len, "killed by signal %d (%s)", WTERMSIG(ws), strsignal(WTERMSIG(ws)));
        return -1;
    }
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0 || got != (ssize_t)sizeof(*rep)) {
        snprintf(how, how_len, "exited with status %d", WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
        return -1;
    }
    return 0;
}

static void setup_tree(void)
{
    snprintf(pins_dir, sizeof(pins_dir), "%s/pins", workdir);
    snprintf(pins_path, sizeof(pins_path), "%s/pins.ini", pins_dir);
    snprintf(census_path, sizeof(census_path), "%s/census.txt", pins_dir);
    snprintf(conf_path, sizeof(conf_path), "%s/engine.conf", workdir);
    snprintf(dropin_dir, sizeof(dropin_dir), "%s/engine.conf.d", workdir);
    snprintf(vet_conf_path, sizeof(vet_conf_path), "%s/vet.conf", workdir);
    snprintf(vet_dir, sizeof(vet_dir), "%s/vet", workdir);
    snprintf(vet_verdicts, sizeof(vet_verdicts), "%s/verdicts", vet_dir);
    /* A tree an earlier run made is used as it is (the once mode's faults
     * must meet the files, not their making). */
    if (access(conf_path, F_OK) == 0)
        return;
    mkdir(pins_dir, 0755);
    mkdir(dropin_dir, 0755);
    char text[4400];
    int n = snprintf(text, sizeof(text),
                     "# fault test\n[engine]\nthreads = 2\n[tune]\nmode = warn\ndir = %s\n"
                     "census = yes\n[pins]\nprg.ecb = auto\n",
                     pins_dir);
    put_file(conf_path, text, (size_t)n);
    char path[4400];
    static const char a[] = "[engine]\nallow_variable_time = no\n";
    static const char b[] = "[pins]\nntt.forward = auto\n[tune]\nunknown_key_here = 1\n";
    snprintf(path, sizeof(path), "%s/10-a.conf", dropin_dir);
    put_file(path, a, sizeof(a) - 1);
    snprintf(path, sizeof(path), "%s/20-b.conf", dropin_dir);
    put_file(path, b, sizeof(b) - 1);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: fault_driver SCENARIO WORKDIR [quick|full]\n");
        return 2;
    }
    /* Hermetic: a helper installed at the build's prefix vets nothing here
     * (its verdict files would count as left behind). */
    mpce_selector_default_helper_override = "/nonexistent/mpcengine-probe (the fault tests use "
                                            "no installed helper)";
    shim_arm = (void (*)(long))dlsym(RTLD_DEFAULT, "faultshim_arm");
    shim_disarm = (long (*)(void))dlsym(RTLD_DEFAULT, "faultshim_disarm");
    shim_fired = (int (*)(void))dlsym(RTLD_DEFAULT, "faultshim_fired");
    shim_live = (size_t(*)(int))dlsym(RTLD_DEFAULT, "faultshim_live");
    if (!shim_arm || !shim_disarm || !shim_fired || !shim_live) {
        fprintf(stderr, "fault_driver: faultshim.so is not preloaded (LD_PRELOAD)\n");
        return 2;
    }
    const struct scenario *sc = NULL;
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
        if (strcmp(argv[1], scenarios[i].name) == 0)
            sc = &scenarios[i];
    if (!sc) {
        fprintf(stderr, "fault_driver: unknown scenario '%s'\n", argv[1]);
        return 2;
    }
    workdir = argv[2];
    int full = argc > 3 && strcmp(argv[3], "full") == 0;
    /* at=N,M,...: only those tries, to rerun what a FAIL line named. */
    long tries_at[64];
    size_t n_at = 0;
    if (argc > 3 && strncmp(argv[3], "at=", 3) == 0)
        for (char *p = argv[3] + 3, *end; *p && n_at < 64; p = *end ? end + 1 : end) {
            tries_at[n_at] = strtol(p, &end, 10);
            if (end == p || tries_at[n_at] < 1) {
                fprintf(stderr, "fault_driver: %s: expected at=N[,N...], tries from 1\n", argv[3]);
                return 2;
            }
            n_at++;
        }
    setup_tree();

    /* OpenSSL's and the C library's lazily made globals, made once here so
     * that no try counts (or leaks) them; backtrace() loads libgcc_s the
     * first time (the shim records where each block came from). */
    void *frames[2];
    backtrace(frames, 2);
    unsigned char md[32], rnd[16];
    unsigned mdlen;
    EVP_Digest("x", 1, md, &mdlen, EVP_sha256(), NULL);
    RAND_bytes(rnd, sizeof(rnd));
    {
        mpce_engine *e = NULL;
        if (mpce_engine_new(&engine_opts, &e) == MPCE_OK) {
            const mpce_impl_info *rows;
            size_t n;
            mpce_list(e, 1, &rows, &n);
        }
        mpce_engine_free(e);
    }
    sc->setup();

    struct report clean;
    char how[256];
    char why[8500];
    /* once: the scenario once, without allocation failures, in the tree an
     * earlier run made (file faults come from the shim's environment). */
    if (argc > 3 && strcmp(argv[3], "once") == 0) {
        /* Counted as the allocation loop counts (armed with no failure): an
         * error path that a file fault takes must not leak either. */
        struct report r;
        memset(&r, 0, sizeof(r));
        const int fds_before = count_fds(), objects_before = count_objects();
        void *state = sc->prepare ? sc->prepare() : NULL;
        shim_arm(0);
        sc->body(state, &r);
        clear_process_caches();
        shim_disarm();
        const size_t live = shim_live(STDERR_FILENO);
        const int fds_left = count_fds() - fds_before, objects_left = count_objects() - objects_before;
        printf("%s: status %d: %s\n", sc->name, r.status, r.msg);
        int ok = !sc->files_ok || sc->files_ok(why, sizeof(why));
        printf("%s: files %s%s\n", sc->name, ok ? "ok" : "bad: ", ok ? "" : why);
        const int none_left = live == 0 && fds_left <= 0 && objects_left <= 0;
        if (none_left)
            printf("%s: leaks none\n", sc->name);
        else
            printf("%s: leaks %zu blocks, %d descriptors, %d shared objects\n", sc->name, live,
                   fds_left, objects_left);
        return ok && none_left ? 0 : 1;
    }
    /* FAULT_ONLY=N: that one try, in this process (for a debugger). */
    const char *only = getenv("FAULT_ONLY");
    if (only && *only) {
        struct report r;
        memset(&r, 0, sizeof(r));
        signal(SIGSEGV, on_crash);
        signal(SIGABRT, on_crash);
        sc->restore();
        void *state = sc->prepare ? sc->prepare() : NULL;
        shim_arm(strtol(only, NULL, 10));
        sc->body(state, &r);
        clear_process_caches();
        r.count = shim_disarm();
        printf("%s N=%s: status %d fired %d live %zu: %s\n", sc->name, only, r.status,
               shim_fired(), shim_live(STDOUT_FILENO), r.msg);
        return 0;
    }
    sc->restore();
    if (run_child(sc, 0, &clean, how, sizeof(how)) != 0 || clean.status != 0) {
        fprintf(stderr, "%s: the clean run failed: %s%s\n", sc->name,
                clean.status ? clean.msg : how, "");
        return 1;
    }
    if (clean.fds_left > 0 || clean.objects_left > 0) {
        fprintf(stderr, "%s: the clean run leaves %d descriptors and %d shared objects open\n",
                sc->name, clean.fds_left, clean.objects_left);
        return 1;
    }
    if (clean.live) {
        fprintf(stderr, "%s: the clean run leaks %zu blocks\n", sc->name, clean.live);
        return 1;
    }
    /* What the clean run wrote is the new file a try may leave. */
    if (sc->restore == census_restore || sc->restore == pins_restore)
        new_text = slurp_file(sc->restore == census_restore ? census_path : pins_path, &new_len);
    if (sc->files_ok && !sc->files_ok(why, sizeof(why))) {
        fprintf(stderr, "%s: the clean run: %s\n", sc->name, why);
        return 1;
    }
    long total = clean.count;
    /* The scenarios that start an engine make thousands of allocations
     * and each try is a process: the quick mode samples them more thinly. */
    long quick = sc->body == init_body || sc->body == ops_body || sc->body == vet_body
                     ? QUICK_TRIES / 4
                     : QUICK_TRIES;
    long step = full || total <= quick ? 1 : (total + quick - 1) / quick;
    long tries = 0, errors = 0, absorbed = 0, bad = 0, fired = 0;
    if (n_at)
        step = 1;
    for (long n = 1; n <= (n_at ? (long)n_at : total); n += step) {
        /* In the quick mode the sample's phase moves, so that a site a
         * fixed stride would always miss is hit from one step to the next. */
        long at = n_at ? tries_at[n - 1] : step > 1 ? n + (n / step * 7) % step : n;
        if (at > total)
            break;
        struct report r;
        memset(&r, 0, sizeof(r));
        sc->restore();
        tries++;
        const char *problem = NULL;
        char detail[9000] = "";
        const int ran = run_child(sc, at, &r, how, sizeof(how)) == 0;
        fired += ran && r.fired;
        if (!ran) {
            problem = how;
        } else if (r.fds_left > 0 || r.objects_left > 0) {
            snprintf(detail, sizeof(detail), "%d descriptors and %d shared objects left open "
                     "(status %d: %s)", r.fds_left, r.objects_left, r.status, r.msg);
            problem = detail;
        } else if (r.live) {
            snprintf(detail, sizeof(detail), "%zu blocks leaked (status %d: %s)", r.live,
                     r.status, r.msg);
            problem = detail;
        } else if (r.status != 0 && strlen(r.err) < 12) {
            /* err is the error's own text: the failed call's name, which
             * msg starts with, is no message to its user. */
            snprintf(detail, sizeof(detail), "error %d without a message (%s)", r.status,
                     r.msg);
            problem = detail;
        } else if (r.status > 0 && r.fired && r.status != MPCE_ERR_NOMEM) {
            /* A failed allocation is the only fault injected here: an
             * error for any other reason blames something else. */
            snprintf(detail, sizeof(detail), "error %d (%s), not MPCE_ERR_NOMEM, for a failed "
                     "allocation: %s", r.status, mpce_status_name((mpce_status)r.status),
                     r.msg);
            problem = detail;
        } else if (r.status == 0 && r.fired && r.digest != clean.digest) {
            snprintf(detail, sizeof(detail), "no error, but results differ from the clean "
                     "run's (%s; clean: %s)", r.msg, clean.msg);
            problem = detail;
        } else if (sc->files_ok && !sc->files_ok(why, sizeof(why))) {
            snprintf(detail, sizeof(detail), "%s", why);
            problem = detail;
        }
        if (problem) {
            bad++;
            printf("FAIL %s N=%ld: %s\n", sc->name, at, problem);
        } else if (r.status != 0) {
            errors++;
            if (getenv("FAULT_VERBOSE"))
                printf("ok %s N=%ld: %s\n", sc->name, at, r.msg);
        } else {
            absorbed++;
        }
    }
    sc->restore();
    printf("%s: %ld allocations, %ld tried (%s): %ld ended in an error with a message, "
           "%ld absorbed with the clean run's results, %ld bad\n",
           sc->name, total, tries, step == 1 ? "every one" : "a spread sample", errors,
           absorbed, bad);
    /* A run that failed no allocation tested nothing (a shim not loaded, a
     * count of zero): that is a failure, not a pass. */
    if (tries == 0 || fired == 0) {
        printf("FAIL %s: no allocation failure was injected (%ld allocations counted, %ld "
               "tries): is the shim loaded?\n", sc->name, total, tries);
        return 1;
    }
    return bad ? 1 : 0;
}
