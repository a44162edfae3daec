/* SPDX-License-Identifier: Apache-2.0 */
/* The pins file: round trip, the strict reader, the atomic writer, the lock. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <openssl/evp.h>

#include "engine/selector/pins.h"
#include "engine/selector/selector.h"
#include "tests/testutil.h"

#define PATH_LEN 4096
#define WHY_LEN 1024

/* ---- helpers ------------------------------------------------------------ */

static void join(char out[PATH_LEN], const char *a, const char *b)
{
    CU_ASSERT_FATAL((size_t)snprintf(out, PATH_LEN, "%s/%s", a, b) < PATH_LEN);
}

static uint64_t ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static char *read_all(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    CU_ASSERT_FATAL(fd >= 0);
    struct stat st;
    CU_ASSERT_FATAL(fstat(fd, &st) == 0);
    char *buf = malloc((size_t)st.st_size + 1);
    CU_ASSERT_FATAL(buf != NULL);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        CU_ASSERT_FATAL(n > 0);
        got += (size_t)n;
    }
    buf[got] = '\0';
    close(fd);
    *len = got;
    return buf;
}

static void write_raw(const char *path, const char *buf, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_FATAL(write(fd, buf, len) == (ssize_t)len);
    close(fd);
}

/* body + the seal line over it (malloc'd). */
static char *reseal(const char *body)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    size_t len = strlen(body);
    CU_ASSERT_FATAL(EVP_Digest(body, len, md, &mdlen, EVP_sha256(), NULL) == 1);
    CU_ASSERT_FATAL(mdlen == 32);
    char *out = malloc(len + 100);
    CU_ASSERT_FATAL(out != NULL);
    memcpy(out, body, len);
    int n = sprintf(out + len, "seal = \"sha256:");
    for (unsigned i = 0; i < 32; i++)
        n += sprintf(out + len + n, "%02x", md[i]);
    sprintf(out + len + n, "\"\n");
    return out;
}

/* The text before the seal line (malloc'd). */
static char *body_of(const char *text)
{
    const char *s = strstr(text, "\nseal = \"sha256:");
    CU_ASSERT_FATAL(s != NULL);
    return strndup(text, (size_t)(s - text) + 1);
}

/* text with the first `from` replaced by `to` (malloc'd). */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    CU_ASSERT_FATAL(at != NULL);
    size_t fl = strlen(from), tl = strlen(to), len = strlen(text);
    char *out = malloc(len - fl + tl + 1);
    CU_ASSERT_FATAL(out != NULL);
    memcpy(out, text, (size_t)(at - text));
    memcpy(out + (at - text), to, tl);
    strcpy(out + (at - text) + tl, at + fl);
    return out;
}

static unsigned line_at(const char *text, const char *at)
{
    unsigned line = 1;
    for (const char *p = text; p < at; p++)
        line += *p == '\n';
    return line;
}

/* What the writer stores for s: '"', '\\' and control characters as '?'. */
static char *sanitized(const char *s)
{
    char *out = strdup(s);
    CU_ASSERT_FATAL(out != NULL);
    for (char *c = out; *c; c++)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    return out;
}

static int str_eq_sanitized(const char *got, const char *orig)
{
    char *want = sanitized(orig);
    int eq = got && strcmp(got, want) == 0;
    if (!eq)
        fprintf(stderr, "  got '%s', want '%s'\n", got ? got : "(null)", want);
    free(want);
    return eq;
}

static const char *const k_plugins_a[] = {"aesni", "soft"};
static const char *const k_plugins_b[] = {"soft"};

/* The round-trip struct: 2 modules, 3 rows, 1 blacklist entry, awkward text. */
static void build_sample(struct mpce_pins *p)
{
    memset(p, 0, sizeof(*p));
    CU_ASSERT_FATAL(mpce_pins_set_header(p, "0.1.0", "2026-11-30T17:04:05Z", "quick",
                                         "x86-64 AuthenticAMD family 25 model 17 aes avx2 "
                                         "\"quoted\" ; semi # hash") == 0);
    CU_ASSERT_FATAL(mpce_pins_set_policy(p, "constant-time") == 0);
    struct mpce_pins_module m1 = {
        .plugin = "soft", .path = "(built-in)", .size = 0, .mtime = 0, .sha256 = "",
        .devices = ""};
    struct mpce_pins_module m2 = {
        .plugin = "aesni",
        .path = "/usr/lib/x86_64-linux-gnu/mpcengine/plugins/ae\"sni;#.so",
        .size = 123456,
        .mtime = 1764522245,
        .sha256 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        .devices = "cpu0 (x86) ; gpu#1 \"fake\""};
    CU_ASSERT_FATAL(mpce_pins_add_module(p, &m1) == 0);
    CU_ASSERT_FATAL(mpce_pins_add_module(p, &m2) == 0);

    struct mpce_pins_cand c1[] = {
        {.impl = "ntt-aesni-ifma", .status = "ok", .median = 5.812e-06, .spread = 0.021,
         .why = ""},
        {.impl = "ntt-aesni-avx512", .status = "ok", .median = 6.5e-06, .spread = 0.5,
         .why = ""},
        {.impl = "ntt-soft", .status = "wrong", .median = 0, .spread = 0,
         .why = "output \"differs\" at word 3; # see log\nsecond line"},
        {.impl = "ntt-crash", .status = "crashed", .median = 0, .spread = 0,
         .why = "SIGSEGV\tin\\kernel"},
    };
    struct mpce_pins_row r1 = {
        .key = "ntt.forward.q50.medium",
        .shape = "N=4096 B=16 q=0x3ffffffd20001",
        .winner = "ntt-aesni-ifma",
        .runner_up = "ntt-aesni-avx512",
        .verdict = "ifma 11% faster than avx512 \"by median\"; spread ok # fine\nnext",
        .plugins = (char **)k_plugins_a,
        .n_plugins = 2,
        .cands = c1,
        .n_cands = 4};
    struct mpce_pins_cand c2[] = {
        {.impl = "prg-soft", .status = "hung", .median = 0, .spread = 0,
         .why = "no answer in 10 s"},
    };
    /* A slice verdict alone: the threshold could not be measured. */
    struct mpce_pins_row r2 = {.key = "prg.ecb.small", .shape = "n=64", .winner = "",
                               .runner_up = "", .verdict = "no candidate was ok",
                               .plugins = NULL, .n_plugins = 0, .cands = c2, .n_cands = 1,
                               .slice_verdict = "not measured: no winner"};
    struct mpce_pins_cand c3[] = {
        {.impl = "lpn-a", .status = "failed", .median = 0, .spread = 0, .why = "ENOMEM"},
        {.impl = "lpn-b", .status = "declined", .median = 0, .spread = 0,
         .why = "serves: q too large"},
        {.impl = "lpn-soft", .status = "ok", .median = 1.25e-03, .spread = 0, .why = ""},
        {.impl = "lpn-slow", .status = "screened", .median = 9.5e-03, .spread = 0,
         .why = "screened out: one call took 7.6x the fastest's"},
    };
    /* A screened runner-up: timed by one call only. */
    struct mpce_pins_row r3 = {.key = "lpn.expand.large", .shape = "k=512 n=1048576",
                               .winner = "lpn-soft", .runner_up = "lpn-slow",
                               .verdict = "single ok", .plugins = (char **)k_plugins_b,
                               .n_plugins = 1, .cands = c3, .n_cands = 4, .slice_min = 24576,
                               .slice_verdict = "2 threads beat one from 49152 elements",
                               .knobs = "chunk=128:prefetch=0",
                               .knob_verdict = "20 values of chunk x prefetch jointly",
                               .crossover = 524288,
                               .crossover_impl = "lpn-slow",
                               .crossover_verdict = "lpn-slow beats lpn-soft from 524288"};
    r1.slice_min = MPCE_PINS_NEVER;
    r1.slice_verdict = "2 threads never beat one; \"quoted\"";
    CU_ASSERT_FATAL(mpce_pins_add_row(p, &r1) == 0);
    CU_ASSERT_FATAL(mpce_pins_add_row(p, &r2) == 0);
    CU_ASSERT_FATAL(mpce_pins_add_row(p, &r3) == 0);
    struct mpce_pins_blacklist b = {.path = "/opt/bad \"module\"\\x.so", .size = 42,
                                    .mtime = -5, .reason = "crashed in\nself-test; #1"};
    CU_ASSERT_FATAL(mpce_pins_add_blacklist(p, &b) == 0);
}

/* A directory with a valid pins file from build_sample; *text its bytes. */
static char *sample_dir(char path[PATH_LEN], char **text, size_t *len)
{
    char *dir = tu_temp_dir();
    join(path, dir, MPCE_PINS_FILE);
    struct mpce_pins p;
    build_sample(&p);
    char why[WHY_LEN];
    CU_ASSERT_FATAL(mpce_pins_write(path, &p, why, sizeof(why)) == 0);
    mpce_pins_free(&p);
    if (text)
        *text = read_all(path, len);
    return dir;
}

/* Write text (sealed over body) and read it: CORRUPT naming needle. */
static void expect_corrupt_body(const char *path, const char *body, const char *needle)
{
    char *text = reseal(body);
    write_raw(path, text, strlen(text));
    free(text);
    struct mpce_pins p;
    char why[WHY_LEN];
    enum mpce_pins_read_result res = mpce_pins_read(path, &p, why, sizeof(why));
    CU_ASSERT_EQUAL(res, MPCE_PINS_READ_CORRUPT);
    CU_ASSERT_PTR_NULL(p.rows);
    CU_ASSERT_EQUAL(p.n_rows, 0);
    if (!strstr(why, needle)) {
        CU_FAIL("why does not name what is wrong");
        fprintf(stderr, "  want '%s' in: %s\n", needle, why);
    }
    CU_ASSERT_PTR_NULL(strchr(why, '\n'));
}

/* ---- 1. round trip ------------------------------------------------------ */

static void test_round_trip(void)
{
    char path[PATH_LEN];
    char *text;
    size_t len;
    char *dir = sample_dir(path, &text, &len);

    struct mpce_pins in;
    build_sample(&in);
    struct mpce_pins out;
    char why[WHY_LEN] = "untouched";
    CU_ASSERT_EQUAL_FATAL(mpce_pins_read(path, &out, why, sizeof(why)), MPCE_PINS_READ_OK);
    CU_ASSERT_STRING_EQUAL(why, "");

    CU_ASSERT_EQUAL(out.format, MPCE_PINS_FORMAT);
    CU_ASSERT_STRING_EQUAL(out.engine_version, "0.1.0");
    CU_ASSERT_STRING_EQUAL(out.date, "2026-11-30T17:04:05Z");
    CU_ASSERT_STRING_EQUAL(out.effort, "quick");
    CU_ASSERT(str_eq_sanitized(out.cpu, in.cpu));
    CU_ASSERT_STRING_EQUAL(out.policy, "constant-time");

    CU_ASSERT_EQUAL_FATAL(out.n_modules, 2);
    for (size_t i = 0; i < 2; i++) {
        const struct mpce_pins_module *a = &in.modules[i], *b = &out.modules[i];
        CU_ASSERT_STRING_EQUAL(b->plugin, a->plugin);
        CU_ASSERT(str_eq_sanitized(b->path, a->path));
        CU_ASSERT_EQUAL(b->size, a->size);
        CU_ASSERT_EQUAL(b->mtime, a->mtime);
        CU_ASSERT_STRING_EQUAL(b->sha256, a->sha256);
        CU_ASSERT(str_eq_sanitized(b->devices, a->devices));
    }
    CU_ASSERT_STRING_EQUAL(out.modules[1].path,
                           "/usr/lib/x86_64-linux-gnu/mpcengine/plugins/ae?sni;#.so");

    CU_ASSERT_EQUAL_FATAL(out.n_rows, 3);
    for (size_t i = 0; i < 3; i++) {
        const struct mpce_pins_row *a = &in.rows[i], *b = &out.rows[i];
        CU_ASSERT_STRING_EQUAL(b->key, a->key);
        CU_ASSERT_STRING_EQUAL(b->shape, a->shape);
        CU_ASSERT_STRING_EQUAL(b->winner, a->winner);
        CU_ASSERT_STRING_EQUAL(b->runner_up, a->runner_up);
        CU_ASSERT(str_eq_sanitized(b->verdict, a->verdict));
        CU_ASSERT_EQUAL_FATAL(b->n_plugins, a->n_plugins);
        for (size_t k = 0; k < a->n_plugins; k++)
            CU_ASSERT_STRING_EQUAL(b->plugins[k], a->plugins[k]);
        CU_ASSERT_EQUAL_FATAL(b->n_cands, a->n_cands);
        for (size_t k = 0; k < a->n_cands; k++) {
            CU_ASSERT_STRING_EQUAL(b->cands[k].impl, a->cands[k].impl);
            CU_ASSERT_STRING_EQUAL(b->cands[k].status, a->cands[k].status);
            CU_ASSERT_EQUAL(b->cands[k].median, a->cands[k].median);
            CU_ASSERT_EQUAL(b->cands[k].spread, a->cands[k].spread);
            CU_ASSERT(str_eq_sanitized(b->cands[k].why, a->cands[k].why));
        }
        CU_ASSERT_EQUAL(b->slice_min, a->slice_min);
        CU_ASSERT(str_eq_sanitized(b->slice_verdict, a->slice_verdict ? a->slice_verdict : ""));
        CU_ASSERT_STRING_EQUAL(b->knobs, a->knobs ? a->knobs : "");
        CU_ASSERT(str_eq_sanitized(b->knob_verdict, a->knob_verdict ? a->knob_verdict : ""));
    }
    CU_ASSERT_STRING_EQUAL(out.rows[2].knobs, "chunk=128:prefetch=0");
    CU_ASSERT_STRING_EQUAL(out.rows[0].knobs, "");
    CU_ASSERT_EQUAL(out.rows[0].slice_min, MPCE_PINS_NEVER);
    CU_ASSERT_EQUAL(out.rows[1].slice_min, 0); /* not measured: its verdict alone */
    CU_ASSERT_STRING_EQUAL(out.rows[1].slice_verdict, "not measured: no winner");
    CU_ASSERT_EQUAL(out.rows[2].slice_min, 24576);
    CU_ASSERT_STRING_EQUAL(out.rows[2].runner_up, "lpn-slow");
    CU_ASSERT_STRING_EQUAL(out.rows[2].cands[3].status, "screened");
    CU_ASSERT_EQUAL(out.rows[2].cands[3].median, 9.5e-03);
    {
        /* Row 2's text: a slice_verdict line and no slice_min. */
        const char *r2 = strstr(text, "[row.2]\n"), *r3 = strstr(text, "[row.3]\n");
        CU_ASSERT_FATAL(r2 != NULL && r3 != NULL);
        const char *sv = strstr(r2, "slice_verdict = \"not measured: no winner\"\n");
        const char *sm = strstr(r2, "slice_min");
        CU_ASSERT(sv != NULL && sv < r3);
        CU_ASSERT(sm == NULL || sm > r3);
    }
    CU_ASSERT_STRING_EQUAL(out.rows[0].verdict,
                           "ifma 11% faster than avx512 ?by median?; spread ok # fine?next");
    CU_ASSERT_STRING_EQUAL(out.rows[0].cands[3].why, "SIGSEGV?in?kernel");
    CU_ASSERT_STRING_EQUAL(out.rows[0].runner_up, "ntt-aesni-avx512");
    CU_ASSERT_STRING_EQUAL(out.rows[1].runner_up, "");
    CU_ASSERT_STRING_EQUAL(out.rows[1].winner, "");
    CU_ASSERT_PTR_NULL(out.rows[1].plugins);

    CU_ASSERT_EQUAL_FATAL(out.n_blacklist, 1);
    CU_ASSERT(str_eq_sanitized(out.blacklist[0].path, in.blacklist[0].path));
    CU_ASSERT_EQUAL(out.blacklist[0].size, 42);
    CU_ASSERT_EQUAL(out.blacklist[0].mtime, -5);
    CU_ASSERT_STRING_EQUAL(out.blacklist[0].reason, "crashed in?self-test; #1");

    /* find_row and put_row. */
    CU_ASSERT_PTR_EQUAL(mpce_pins_find_row(&out, "prg.ecb.small"), &out.rows[1]);
    CU_ASSERT_PTR_NULL(mpce_pins_find_row(&out, "prg.ecb.large"));
    struct mpce_pins_cand nc = {.impl = "prg-soft", .status = "ok", .median = 1e-6,
                                .spread = 0, .why = ""};
    struct mpce_pins_row nr = {.key = "prg.ecb.small", .shape = "n=65", .winner = "prg-soft",
                               .runner_up = "", .verdict = "replaced", .cands = &nc,
                               .n_cands = 1};
    CU_ASSERT_EQUAL(mpce_pins_put_row(&out, &nr), 0);
    CU_ASSERT_EQUAL(out.n_rows, 3);
    CU_ASSERT_STRING_EQUAL(mpce_pins_find_row(&out, "prg.ecb.small")->verdict, "replaced");
    nr.key = "prg.ecb.large";
    CU_ASSERT_EQUAL(mpce_pins_put_row(&out, &nr), 0);
    CU_ASSERT_EQUAL(out.n_rows, 4);
    CU_ASSERT_PTR_NOT_NULL(mpce_pins_find_row(&out, "prg.ecb.large"));
    CU_ASSERT_EQUAL(mpce_pins_write(path, &out, why, sizeof(why)), 0);

    /* The file: banner first, seal last, 0644, no temporary left behind. */
    CU_ASSERT(strncmp(text, "# libmpcengine pins: written by the selector", 44) == 0);
    CU_ASSERT(len > 82 && strncmp(text + len - 82, "\nseal = \"sha256:", 16) == 0);
    CU_ASSERT(strstr(text, "cand.1 = \"ntt-aesni-ifma ok 5.812000e-06 2.100000e-02\"\n") !=
              NULL);
    struct stat st;
    CU_ASSERT_EQUAL(stat(path, &st), 0);
    CU_ASSERT_EQUAL(st.st_mode & 07777, 0644);
    size_t nfiles = 0;
    FILE *ls;
    char cmd[PATH_LEN + 32];
    snprintf(cmd, sizeof(cmd), "ls -A '%s'", dir);
    CU_ASSERT_FATAL((ls = popen(cmd, "r")) != NULL);
    char name[512];
    while (fgets(name, sizeof(name), ls)) {
        nfiles++;
        CU_ASSERT(strncmp(name, ".pins.ini.", 10) != 0);
    }
    pclose(ls);
    CU_ASSERT_EQUAL(nfiles, 1);

    /* free leaves the struct zeroed. */
    mpce_pins_free(&out);
    CU_ASSERT_PTR_NULL(out.rows);
    CU_ASSERT_EQUAL(out.n_rows, 0);
    mpce_pins_free(&in);
    free(text);
    tu_remove_dir(dir);
}

/* Text for people is cut to fit a line; anything else too long, and values
 * the reader would reject, make the write fail and leave no file. */
static void test_writer_limits(void)
{
    char *dir = tu_temp_dir();
    char path[PATH_LEN];
    join(path, dir, MPCE_PINS_FILE);
    struct mpce_pins p;
    build_sample(&p);
    char why[WHY_LEN];
    char *long_text = malloc(3001);
    CU_ASSERT_FATAL(long_text != NULL);
    memset(long_text, 'v', 3000);
    long_text[3000] = '\0';

    /* A long verdict and reason: cut, "..." at the end, still reads. */
    free(p.rows[0].verdict);
    p.rows[0].verdict = strdup(long_text);
    free(p.blacklist[0].reason);
    p.blacklist[0].reason = strdup(long_text);
    CU_ASSERT_EQUAL_FATAL(mpce_pins_write(path, &p, why, sizeof(why)), 0);
    struct mpce_pins out;
    CU_ASSERT_EQUAL_FATAL(mpce_pins_read(path, &out, why, sizeof(why)), MPCE_PINS_READ_OK);
    size_t vl = strlen(out.rows[0].verdict);
    CU_ASSERT(vl > 900 && vl < 1000);
    CU_ASSERT(strcmp(out.rows[0].verdict + vl - 3, "...") == 0);
    CU_ASSERT(strlen(out.blacklist[0].reason) > 900);
    mpce_pins_free(&out);
    CU_ASSERT_EQUAL(unlink(path), 0);

    /* A long path: refused, naming it; no file, no temporary. */
    free(p.modules[1].path);
    p.modules[1].path = strdup(long_text);
    CU_ASSERT_EQUAL(mpce_pins_write(path, &p, why, sizeof(why)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "[module.2] path"));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, path));
    CU_ASSERT_EQUAL(access(path, F_OK), -1);
    free(p.modules[1].path);
    p.modules[1].path = strdup("/x.so");

    /* Values the reader would reject. */
    p.rows[2].cands[0].median = NAN;
    CU_ASSERT_EQUAL(mpce_pins_write(path, &p, why, sizeof(why)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "[row.3] cand.1"));
    p.rows[2].cands[0].median = -1.0;
    CU_ASSERT_EQUAL(mpce_pins_write(path, &p, why, sizeof(why)), -1);
    p.rows[2].cands[0].median = INFINITY;
    CU_ASSERT_EQUAL(mpce_pins_write(path, &p, why, sizeof(why)), -1);
    p.rows[2].cands[0].median = 0;
    free(p.rows[2].cands[1].status);
    p.rows[2].cands[1].status = strdup("great");
    CU_ASSERT_EQUAL(mpce_pins_write(path, &p, why, sizeof(why)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "great"));
    free(p.rows[2].cands[1].status);
    p.rows[2].cands[1].status = strdup("ok");
    free(p.rows[2].cands[2].impl);
    p.rows[2].cands[2].impl = strdup("bad name");
    CU_ASSERT_EQUAL(mpce_pins_write(path, &p, why, sizeof(why)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "[row.3] cand.3"));
    free(p.rows[2].cands[2].impl);
    p.rows[2].cands[2].impl = strdup("lpn-soft");
    CU_ASSERT_EQUAL(mpce_pins_set_header(&p, "0.1.0", "yesterday", "quick", "cpu"), 0);
    CU_ASSERT_EQUAL(mpce_pins_write(path, &p, why, sizeof(why)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "date"));
    CU_ASSERT_EQUAL(mpce_pins_set_header(&p, "0.1.0", "2026-01-01T00:00:00Z", "lazy", "cpu"),
                    0);
    CU_ASSERT_EQUAL(mpce_pins_write(path, &p, why, sizeof(why)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "effort"));
    CU_ASSERT_EQUAL(access(path, F_OK), -1);

    /* Fixed, it writes; into a missing directory, which is created. */
    CU_ASSERT_EQUAL(mpce_pins_set_header(&p, "0.1.0", "2026-01-01T00:00:00Z", "patient",
                                         "cpu"), 0);
    char sub[PATH_LEN], subpath[PATH_LEN];
    join(sub, dir, "new");
    join(subpath, sub, MPCE_PINS_FILE);
    CU_ASSERT_EQUAL(mpce_pins_write(subpath, &p, why, sizeof(why)), 0);
    CU_ASSERT_EQUAL(mpce_pins_read(subpath, &out, why, sizeof(why)), MPCE_PINS_READ_OK);
    CU_ASSERT_STRING_EQUAL(out.effort, "patient");
    mpce_pins_free(&out);
    /* Missing parents are made (the state directory is nested); a parent
     * that is a file is refused, naming the directory. */
    char deep[PATH_LEN], deep_dir[PATH_LEN], deep_top[PATH_LEN], under_file[PATH_LEN];
    join(deep_top, dir, "a");
    join(deep_dir, deep_top, "b");
    join(deep, deep_dir, MPCE_PINS_FILE);
    CU_ASSERT_EQUAL(mpce_pins_write(deep, &p, why, sizeof(why)), 0);
    CU_ASSERT_EQUAL(mpce_pins_read(deep, &out, why, sizeof(why)), MPCE_PINS_READ_OK);
    mpce_pins_free(&out);
    join(under_file, deep, "c/pins.ini");
    CU_ASSERT_EQUAL(mpce_pins_write(under_file, &p, why, sizeof(why)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "cannot create directory"));
    unlink(deep);
    rmdir(deep_dir);
    rmdir(deep_top);

    unlink(subpath);
    rmdir(sub);
    free(long_text);
    mpce_pins_free(&p);
    tu_remove_dir(dir);
}

/* ---- 2. what is at the path --------------------------------------------- */

static void test_not_a_file(void)
{
    char *dir = tu_temp_dir();
    char path[PATH_LEN], why[WHY_LEN];
    join(path, dir, MPCE_PINS_FILE);
    struct mpce_pins p;

    CU_ASSERT_EQUAL(mpce_pins_read(path, &p, why, sizeof(why)), MPCE_PINS_READ_MISSING);
    CU_ASSERT_EQUAL(p.n_rows, 0);
    CU_ASSERT_EQUAL(mpce_pins_read(path, &p, NULL, 0), MPCE_PINS_READ_MISSING);

    CU_ASSERT_FATAL(mkdir(path, 0755) == 0);
    enum mpce_pins_read_result res = mpce_pins_read(path, &p, why, sizeof(why));
    CU_ASSERT_NOT_EQUAL(res, MPCE_PINS_READ_OK);
    CU_ASSERT_NOT_EQUAL(res, MPCE_PINS_READ_MISSING);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "directory"));
    CU_ASSERT_EQUAL(rmdir(path), 0);

    /* A FIFO: refused at once, not waited on. */
    CU_ASSERT_FATAL(mkfifo(path, 0644) == 0);
    uint64_t t0 = ms_now();
    res = mpce_pins_read(path, &p, why, sizeof(why));
    CU_ASSERT_NOT_EQUAL(res, MPCE_PINS_READ_OK);
    CU_ASSERT_NOT_EQUAL(res, MPCE_PINS_READ_MISSING);
    CU_ASSERT(ms_now() - t0 < 1000);
    CU_ASSERT_EQUAL(unlink(path), 0);

    /* A symbolic link to a valid pins file. */
    char real[PATH_LEN];
    join(real, dir, "real.ini");
    struct mpce_pins s;
    build_sample(&s);
    CU_ASSERT_FATAL(mpce_pins_write(real, &s, why, sizeof(why)) == 0);
    mpce_pins_free(&s);
    CU_ASSERT_EQUAL(mpce_pins_read(real, &p, why, sizeof(why)), MPCE_PINS_READ_OK);
    mpce_pins_free(&p);
    CU_ASSERT_FATAL(symlink(real, path) == 0);
    res = mpce_pins_read(path, &p, why, sizeof(why));
    CU_ASSERT_NOT_EQUAL(res, MPCE_PINS_READ_OK);
    CU_ASSERT_NOT_EQUAL(res, MPCE_PINS_READ_MISSING);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "link"));
    CU_ASSERT_EQUAL(p.n_rows, 0);

    /* No read permission (not as root, who reads anyway). */
    if (geteuid() != 0) {
        CU_ASSERT_EQUAL(chmod(real, 0), 0);
        CU_ASSERT_EQUAL(mpce_pins_read(real, &p, why, sizeof(why)), MPCE_PINS_READ_ERROR);
        CU_ASSERT_PTR_NOT_NULL(strstr(why, strerror(EACCES)));
    }
    tu_remove_dir(dir);
}

/* ---- 3. damaged and hand-edited files ----------------------------------- */

static void test_seal(void)
{
    char path[PATH_LEN], why[WHY_LEN];
    char *text;
    size_t len;
    char *dir = sample_dir(path, &text, &len);
    struct mpce_pins p;

    /* One byte flipped in the middle. */
    char *bad = strdup(text);
    CU_ASSERT_FATAL(bad != NULL);
    bad[len / 2] ^= 0x01;
    write_raw(path, bad, len);
    CU_ASSERT_EQUAL(mpce_pins_read(path, &p, why, sizeof(why)), MPCE_PINS_READ_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "seal"));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, path));
    free(bad);

    /* Cut short anywhere: never OK. */
    for (size_t cut = 0; cut < len; cut += 97) {
        write_raw(path, text, cut);
        enum mpce_pins_read_result res = mpce_pins_read(path, &p, why, sizeof(why));
        CU_ASSERT_EQUAL(res, MPCE_PINS_READ_CORRUPT);
        CU_ASSERT_PTR_NULL(p.rows);
        if (res == MPCE_PINS_READ_OK)
            mpce_pins_free(&p);
    }
    write_raw(path, text, len - 1);
    CU_ASSERT_EQUAL(mpce_pins_read(path, &p, why, sizeof(why)), MPCE_PINS_READ_CORRUPT);

    /* Anything after the seal line. */
    char *more = malloc(len + 32);
    CU_ASSERT_FATAL(more != NULL);
    memcpy(more, text, len);
    memcpy(more + len, "[row.9]\n", 8);
    write_raw(path, more, len + 8);
    CU_ASSERT_EQUAL(mpce_pins_read(path, &p, why, sizeof(why)), MPCE_PINS_READ_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "after the seal"));
    memcpy(more + len, "\n", 1);
    write_raw(path, more, len + 1);
    CU_ASSERT_EQUAL(mpce_pins_read(path, &p, why, sizeof(why)), MPCE_PINS_READ_CORRUPT);
    free(more);

    /* The seal line alone, and an empty file. */
    write_raw(path, text + len - 81, 81);
    CU_ASSERT_EQUAL(mpce_pins_read(path, &p, why, sizeof(why)), MPCE_PINS_READ_CORRUPT);
    write_raw(path, "", 0);
    CU_ASSERT_EQUAL(mpce_pins_read(path, &p, why, sizeof(why)), MPCE_PINS_READ_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "seal"));

    /* The original again: OK. */
    write_raw(path, text, len);
    CU_ASSERT_EQUAL(mpce_pins_read(path, &p, why, sizeof(why)), MPCE_PINS_READ_OK);
    mpce_pins_free(&p);
    free(text);
    tu_remove_dir(dir);
}

/* Sealed correctly over edited text: the content checks must catch it. */
static void test_strict_content(void)
{
    char path[PATH_LEN], why[WHY_LEN];
    char *text;
    size_t len;
    char *dir = sample_dir(path, &text, &len);
    char *body = body_of(text);
    struct mpce_pins p;

    /* The helper itself: resealed unchanged text reads OK. */
    char *same = reseal(body);
    CU_ASSERT_STRING_EQUAL(same, text);
    free(same);

    /* An unknown key, named with its line. */
    char *e = replace(body, "[row.2]\n", "[row.2]\nbogus = 1\n");
    char where[PATH_LEN + 64];
    snprintf(where, sizeof(where), "%s:%u: [row.2] bogus", path,
             line_at(e, strstr(e, "bogus")));
    expect_corrupt_body(path, e, where);
    free(e);
    e = replace(body, "[pins]\n", "[pins]\nSEAL = \"x\"\n");
    expect_corrupt_body(path, e, "seal");
    free(e);

    /* Another format (2 is read too: test_crossover_read). */
    e = replace(body, "format = 3\n", "format = 1\n");
    expect_corrupt_body(path, e, "format");
    free(e);
    e = replace(body, "format = 3\n", "format = 4\n");
    expect_corrupt_body(path, e, "this engine reads formats 2 to 3");
    free(e);
    e = replace(body, "format = 3\n", "");
    expect_corrupt_body(path, e, "format");
    free(e);

    /* Numbering: a gap, a duplicate, a leading zero, an unknown section. */
    e = replace(body, "[row.2]\n", "[row.4]\n");
    expect_corrupt_body(path, e, "without gaps");
    free(e);
    e = replace(body, "[row.3]\n", "[row.2]\n");
    expect_corrupt_body(path, e, "twice");
    free(e);
    e = replace(body, "[row.3]\n", "[ROW.2]\n");
    expect_corrupt_body(path, e, "twice");
    free(e);
    e = replace(body, "[row.3]\n", "[row.03]\n");
    expect_corrupt_body(path, e, "unknown section");
    free(e);
    e = replace(body, "[blacklist.1]\n", "[extra]\n");
    expect_corrupt_body(path, e, "unknown section [extra]");
    free(e);
    e = replace(body, "cand.2 = ", "cand.5 = ");
    expect_corrupt_body(path, e, "[row.1]");
    free(e);
    e = replace(body, "why.2 = \"\"\n", "");
    expect_corrupt_body(path, e, "why");
    free(e);
    e = replace(body, "key = \"prg.ecb.small\"\n", "key = \"prg.ecb.small\"\nkey = \"x\"\n");
    expect_corrupt_body(path, e, "twice");
    free(e);

    /* Missing and malformed values. */
    e = replace(body, "verdict = \"single ok\"\n", "");
    expect_corrupt_body(path, e, "[row.3] missing key 'verdict'");
    free(e);
    e = replace(body, "size = 123456\n", "size = 12x\n");
    expect_corrupt_body(path, e, "[module.2] size");
    free(e);
    e = replace(body, "size = 123456\n", "size = -1\n");
    expect_corrupt_body(path, e, "[module.2] size");
    free(e);
    e = replace(body, "size = 123456\n", "size = 99999999999999999999999\n");
    expect_corrupt_body(path, e, "[module.2] size");
    free(e);
    e = replace(body, "mtime = 1764522245\n", "mtime = 1.5\n");
    expect_corrupt_body(path, e, "[module.2] mtime");
    free(e);
    e = replace(body, "ok 5.812000e-06", "ok nan");
    snprintf(where, sizeof(where), "%s:%u: [row.1] cand.1: expected 'IMPL STATUS MEDIAN SPREAD'",
             path, line_at(e, strstr(e, "ok nan")));
    expect_corrupt_body(path, e, where);
    free(e);
    e = replace(body, "ok 5.812000e-06", "ok inf");
    expect_corrupt_body(path, e, "cand.1");
    free(e);
    e = replace(body, "ok 5.812000e-06", "ok -5.812000e-06");
    expect_corrupt_body(path, e, "cand.1");
    free(e);
    e = replace(body, "ok 5.812000e-06", "ok  5.812000e-06");
    expect_corrupt_body(path, e, "cand.1");
    free(e);
    e = replace(body, "ntt-aesni-ifma ok", "ntt-aesni-ifma great");
    expect_corrupt_body(path, e, "cand.1");
    free(e);
    e = replace(body, "2.100000e-02\"", "2.100000e-02 extra\"");
    expect_corrupt_body(path, e, "cand.1");
    free(e);
    e = replace(body, "effort = \"quick\"", "effort = \"lazy\"");
    expect_corrupt_body(path, e, "effort");
    free(e);
    e = replace(body, "plugins = \"aesni soft\"", "plugins = \"aesni  soft\"");
    expect_corrupt_body(path, e, "plugins");
    free(e);
    e = replace(body, "sha256 = \"0123", "sha256 = \"X123");
    expect_corrupt_body(path, e, "sha256");
    free(e);

    /* Syntax iniparser would read otherwise than it looks. */
    e = replace(body, "[row.2]\n", "[row.2]\nwinner2 = a;b\n");
    expect_corrupt_body(path, e, "expected a number");
    free(e);
    e = replace(body, "[row.2]\n", "[row.2]\nnot a key\n");
    expect_corrupt_body(path, e, "expected [section]");
    free(e);
    e = replace(body, "[pins]\n", "[pins]\r\n");
    expect_corrupt_body(path, e, "control character");
    free(e);
    e = replace(body, "shape = \"n=64\"", "shape = n64\\");
    expect_corrupt_body(path, e, "backslash");
    free(e);
    e = replace(body, "[pins]\n", "stray = 1\n[pins]\n");
    expect_corrupt_body(path, e, "outside any section");
    free(e);

    /* Comments and blank lines are fine. */
    e = replace(body, "[row.2]\n", "; a note\n\n[row.2]\n  # another\n");
    char *ok = reseal(e);
    write_raw(path, ok, strlen(ok));
    CU_ASSERT_EQUAL(mpce_pins_read(path, &p, why, sizeof(why)), MPCE_PINS_READ_OK);
    CU_ASSERT_EQUAL(p.n_rows, 3);
    mpce_pins_free(&p);
    free(ok);
    free(e);

    /* Too large. */
    char *huge = malloc((5u << 20) + 1);
    CU_ASSERT_FATAL(huge != NULL);
    memset(huge, '#', 5u << 20);
    huge[5u << 20] = '\0';
    write_raw(path, huge, 5u << 20);
    CU_ASSERT_EQUAL(mpce_pins_read(path, &p, why, sizeof(why)), MPCE_PINS_READ_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "too large"));
    free(huge);

    free(body);
    free(text);
    tu_remove_dir(dir);
}

/* ---- 3b. what the values mean together ---------------------------------- */

/* body with from replaced by to, sealed: CORRUPT with why starting
 * "PATH:LINE: what", LINE that of marker (to when NULL), looked for after
 * the first `after` when that is not NULL. */
static void edit_corrupt(const char *path, const char *body, const char *from, const char *to,
                         const char *after, const char *marker, const char *what)
{
    char *e = replace(body, from, to);
    const char *from_here = after ? strstr(e, after) : e;
    CU_ASSERT_FATAL(from_here != NULL);
    const char *at = strstr(from_here, marker ? marker : to);
    CU_ASSERT_FATAL(at != NULL);
    char want[PATH_LEN + 512];
    snprintf(want, sizeof(want), "%s:%u: %s", path, line_at(e, at), what);
    expect_corrupt_body(path, e, want);
    free(e);
}

/* body with from replaced by to, sealed: reads OK into *p (free it). */
static void edit_ok(const char *path, const char *body, const char *from, const char *to,
                    struct mpce_pins *p)
{
    char *e = replace(body, from, to);
    char *t = reseal(e);
    write_raw(path, t, strlen(t));
    char why[WHY_LEN];
    enum mpce_pins_read_result res = mpce_pins_read(path, p, why, sizeof(why));
    CU_ASSERT_EQUAL(res, MPCE_PINS_READ_OK);
    if (res != MPCE_PINS_READ_OK)
        fprintf(stderr, "  '%s' -> '%s': %s\n", from, to, why);
    free(t);
    free(e);
}

static void test_policy_read(void)
{
    char path[PATH_LEN];
    char *text;
    size_t len;
    char *dir = sample_dir(path, &text, &len);
    char *body = body_of(text);
    struct mpce_pins p;

    /* Written after cpu. */
    const char *cpu = strstr(body, "\ncpu = \""), *pol = strstr(body, "\npolicy = \"");
    CU_ASSERT(cpu && pol && cpu < pol && strstr(pol, "\npolicy = \"constant-time\"\n") == pol);
    edit_corrupt(path, body, "policy = \"constant-time\"", "policy = \"fast\"", NULL, NULL,
                 "[pins] policy: 'fast' is not constant-time or variable-time");
    edit_corrupt(path, body, "policy = \"constant-time\"", "policy = \"Constant-Time\"", NULL,
                 NULL, "[pins] policy: 'Constant-Time' is not constant-time or variable-time");
    edit_corrupt(path, body, "policy = \"constant-time\"", "policy = \"\"", NULL, NULL,
                 "[pins] policy: '' is not constant-time or variable-time");
    edit_corrupt(path, body, "policy = \"constant-time\"\n", "", NULL, "[pins]\n",
                 "[pins] missing key 'policy'");
    edit_ok(path, body, "policy = \"constant-time\"", "policy = \"variable-time\"", &p);
    CU_ASSERT_STRING_EQUAL(p.policy, "variable-time");
    mpce_pins_free(&p);
    CU_ASSERT_PTR_NULL(p.policy);

    free(body);
    free(text);
    tu_remove_dir(dir);
}

static void test_winner_read(void)
{
    char path[PATH_LEN];
    char *text;
    size_t len;
    char *dir = sample_dir(path, &text, &len);
    char *body = body_of(text);
    struct mpce_pins p;

    /* The winner: one of the row's candidates, and an ok one. */
    edit_corrupt(path, body, "winner = \"ntt-aesni-ifma\"", "winner = \"ntt-other\"", NULL,
                 NULL, "[row.1] winner: 'ntt-other' is none of the row's candidates");
    edit_corrupt(path, body, "winner = \"ntt-aesni-ifma\"", "winner = \"ntt-soft\"", NULL,
                 NULL, "[row.1] winner: 'ntt-soft' is cand.3, whose status is 'wrong': a "
                       "winner must be ok");
    edit_corrupt(path, body, "winner = \"lpn-soft\"", "winner = \"lpn-slow\"", NULL, NULL,
                 "[row.3] winner: 'lpn-slow' is cand.4, whose status is 'screened': a winner "
                 "must be ok");
    edit_corrupt(path, body, "winner = \"lpn-soft\"", "winner = \"lpn-b\"", NULL, NULL,
                 "[row.3] winner: 'lpn-b' is cand.2, whose status is 'declined'");

    /* The runner-up: an ok or screened candidate, not the winner. */
    edit_corrupt(path, body, "runner_up = \"ntt-aesni-avx512\"", "runner_up = \"ntt-crash\"",
                 NULL, NULL, "[row.1] runner_up: 'ntt-crash' is cand.4, whose status is "
                             "'crashed': a runner-up must be ok or screened");
    edit_corrupt(path, body, "runner_up = \"ntt-aesni-avx512\"", "runner_up = \"ntt-gone\"",
                 NULL, NULL, "[row.1] runner_up: 'ntt-gone' is none of the row's candidates");
    edit_corrupt(path, body, "runner_up = \"ntt-aesni-avx512\"",
                 "runner_up = \"ntt-aesni-ifma\"", NULL, NULL,
                 "[row.1] runner_up: 'ntt-aesni-ifma' is the winner too");
    edit_corrupt(path, body, "runner_up = \"lpn-slow\"", "runner_up = \"lpn-soft\"", NULL,
                 NULL, "[row.3] runner_up: 'lpn-soft' is the winner too");
    /* Row 2 has no winner: its runner-up is held to the same rule. */
    CU_ASSERT(strstr(body, "runner_up = \"\"") > strstr(body, "[row.2]\n"));
    edit_corrupt(path, body, "runner_up = \"\"", "runner_up = \"prg-soft\"", NULL, NULL,
                 "[row.2] runner_up: 'prg-soft' is cand.1, whose status is 'hung'");

    /* Allowed: an ok runner-up, a screened one (the sample's row 3), none. */
    edit_ok(path, body, "runner_up = \"ntt-aesni-avx512\"", "runner_up = \"\"", &p);
    CU_ASSERT_STRING_EQUAL(p.rows[0].runner_up, "");
    mpce_pins_free(&p);

    free(body);
    free(text);
    tu_remove_dir(dir);
}

static void test_unique_read(void)
{
    char path[PATH_LEN];
    char *text;
    size_t len;
    char *dir = sample_dir(path, &text, &len);
    char *body = body_of(text);

    /* A row key twice: the later row is named, with its key's line. */
    edit_corrupt(path, body, "key = \"lpn.expand.large\"", "key = \"prg.ecb.small\"", "[row.3]",
                 "key = ", "[row.3] key: 'prg.ecb.small' is also the key of [row.2]");
    edit_corrupt(path, body, "key = \"prg.ecb.small\"", "key = \"ntt.forward.q50.medium\"",
                 "[row.2]", "key = ",
                 "[row.2] key: 'ntt.forward.q50.medium' is also the key of [row.1]");
    /* One implementation twice in a row. */
    edit_corrupt(path, body, "cand.2 = \"ntt-aesni-avx512 ok", "cand.2 = \"ntt-aesni-ifma ok",
                 NULL, "cand.2 = ", "[row.1] cand.2: 'ntt-aesni-ifma' is also cand.1");
    edit_corrupt(path, body, "cand.4 = \"ntt-crash crashed", "cand.4 = \"ntt-soft crashed",
                 NULL, "cand.4 = ", "[row.1] cand.4: 'ntt-soft' is also cand.3");
    /* One plugin's module twice. */
    edit_corrupt(path, body, "plugin = \"aesni\"", "plugin = \"soft\"", "[module.2]",
                 "plugin = ", "[module.2] plugin: 'soft' is also the plugin of [module.1]");

    free(body);
    free(text);
    tu_remove_dir(dir);
}

static void test_row_key_read(void)
{
    char path[PATH_LEN];
    char *text;
    size_t len;
    char *dir = sample_dir(path, &text, &len);
    char *body = body_of(text);
    struct mpce_pins p;

    static const char *const bad[] = {
        "",                  "prg",           "prg.ecb",        "prg.ecb.huge",
        "prg..small",        ".prg.ecb.small", "prg.ecb.small.", "prg.e-cb.small",
        "prg.e+cb.small",    "prg.ecb.Small", "a.b.c.d.small",  "prg.ecb .small",
        "prg.ecb.small.x",   "...",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char to[128], what[256];
        snprintf(to, sizeof(to), "key = \"%s\"", bad[i]);
        snprintf(what, sizeof(what), "[row.2] key: '%s' is not a row key (3 or 4 "
                 "dot-separated names", bad[i]);
        edit_corrupt(path, body, "key = \"prg.ecb.small\"", to, NULL, NULL, what);
    }
    /* Keys the engine does not know are read: the selector ignores them. */
    static const char *const good[] = {"foo.bar.tiny", "Op_1.x.y2.large", "a.b.small",
                                       "9.9.9.medium"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        char to[128];
        snprintf(to, sizeof(to), "key = \"%s\"", good[i]);
        edit_ok(path, body, "key = \"prg.ecb.small\"", to, &p);
        CU_ASSERT_PTR_NOT_NULL(mpce_pins_find_row(&p, good[i]));
        mpce_pins_free(&p);
    }

    free(body);
    free(text);
    tu_remove_dir(dir);
}

/* Every row the selector knows parses back to itself; a near miss names
 * none (mpce_row_parse reads a key piece by piece, not by formatting every
 * row's key to compare). */
static void test_row_key_parse(void)
{
    size_t rows = 0;
    for (unsigned o = 0; o < MPCE_OP_COUNT; o++) {
        if (!mpce_op_routed((enum mpce_op_id)o))
            continue;
        mpce_primitive prim = mpce_op_info[o].prim;
        for (unsigned v = 0; v < mpce_variant_count(prim); v++)
            for (unsigned sc = 0; sc < MPCE_SIZE_CLASSES; sc++, rows++) {
                char key[96];
                enum mpce_op_id op = MPCE_OP_COUNT;
                unsigned variant = 99, size_class = 99;
                mpce_row_key((enum mpce_op_id)o, v, sc, key, sizeof(key));
                CU_ASSERT_FATAL(mpce_row_parse(key, &op, &variant, &size_class) == 0);
                CU_ASSERT(op == (enum mpce_op_id)o && variant == v && size_class == sc);
                /* Cut short, lengthened, or with a piece dropped. */
                char near[112];
                size_t len = strlen(key);
                for (size_t cut = 0; cut < len; cut++) {
                    snprintf(near, sizeof(near), "%.*s", (int)cut, key);
                    CU_ASSERT(mpce_row_parse(near, &op, &variant, &size_class) != 0);
                }
                snprintf(near, sizeof(near), "%s.", key);
                CU_ASSERT(mpce_row_parse(near, &op, &variant, &size_class) != 0);
                snprintf(near, sizeof(near), "%sx", key);
                CU_ASSERT(mpce_row_parse(near, &op, &variant, &size_class) != 0);
                const char *v_name = mpce_variant_name(prim, v);
                if (v_name && v_name[0]) {
                    snprintf(near, sizeof(near), "%s.%s", mpce_op_info[o].name,
                             mpce_size_class_name(sc));
                    CU_ASSERT(mpce_row_parse(near, &op, &variant, &size_class) != 0);
                }
            }
    }
    CU_ASSERT(rows > 0);
}

static void test_slice_read(void)
{
    char path[PATH_LEN];
    char *text;
    size_t len;
    char *dir = sample_dir(path, &text, &len);
    char *body = body_of(text);
    struct mpce_pins p;

    static const char *const bad[] = {"0",     "281474976710657", "18446744073709551615",
                                      "99999999999999999999999", "-1", "1e3", "024576",
                                      "NEVER", "never2", "0x100"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char to[128], what[256];
        snprintf(to, sizeof(to), "slice_min = %s\n", bad[i]);
        snprintf(what, sizeof(what), "[row.3] slice_min: '%s' is not never or a number of "
                 "work elements from 1 to 2^48", bad[i]);
        edit_corrupt(path, body, "slice_min = 24576\n", to, NULL, NULL, what);
    }
    edit_ok(path, body, "slice_min = 24576\n", "slice_min = 281474976710656\n", &p);
    CU_ASSERT_EQUAL(p.rows[2].slice_min, UINT64_C(1) << 48);
    mpce_pins_free(&p);
    edit_ok(path, body, "slice_min = 24576\n", "slice_min = 1\n", &p);
    CU_ASSERT_EQUAL(p.rows[2].slice_min, 1);
    mpce_pins_free(&p);

    /* slice_min needs its verdict; the verdict may stand alone, not empty. */
    edit_corrupt(path, body, "slice_verdict = \"2 threads beat one from 49152 elements\"\n", "",
                 NULL, "[row.3]\n", "[row.3] slice_verdict: missing: a slice_min needs the "
                                    "slice_verdict");
    edit_corrupt(path, body, "slice_verdict = \"2 threads beat one from 49152 elements\"",
                 "slice_verdict = \"\"", NULL, NULL, "[row.3] slice_verdict: empty");
    edit_ok(path, body, "slice_min = 24576\n", "", &p);
    CU_ASSERT_EQUAL(p.rows[2].slice_min, 0);
    CU_ASSERT_STRING_EQUAL(p.rows[2].slice_verdict, "2 threads beat one from 49152 elements");
    mpce_pins_free(&p);

    free(body);
    free(text);
    tu_remove_dir(dir);
}

/* Format 3's crossover: a number in range, the implementation that wins
 * from there (a candidate that ran), its verdict; a format 2 file has none
 * and still reads. */
static void test_crossover_read(void)
{
    char path[PATH_LEN];
    char *text;
    size_t len;
    char *dir = sample_dir(path, &text, &len);
    char *body = body_of(text);
    struct mpce_pins p;
    static const char xo[] = "crossover = 524288\n";
    static const char ximpl[] = "crossover_impl = \"lpn-slow\"\n";
    static const char xverdict[] = "crossover_verdict = \"lpn-slow beats lpn-soft from 524288\"\n";

    edit_ok(path, body, "format = 3\n", "format = 3\n", &p);
    CU_ASSERT_EQUAL(p.format, 3);
    CU_ASSERT_EQUAL(p.rows[2].crossover, 524288);
    CU_ASSERT_STRING_EQUAL(p.rows[2].crossover_impl, "lpn-slow");
    CU_ASSERT_STRING_EQUAL(p.rows[2].crossover_verdict, "lpn-slow beats lpn-soft from 524288");
    CU_ASSERT_EQUAL(p.rows[0].crossover, 0);
    CU_ASSERT_STRING_EQUAL(p.rows[0].crossover_impl, "");
    mpce_pins_free(&p);

    static const char *const bad[] = {"0", "281474976710657", "-1", "never", "1e3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char to[128], what[256];
        snprintf(to, sizeof(to), "crossover = %s\n", bad[i]);
        snprintf(what, sizeof(what), "[row.3] crossover: '%s' is not a number of work "
                 "elements from 1 to 2^48", bad[i]);
        edit_corrupt(path, body, xo, to, NULL, NULL, what);
    }
    edit_corrupt(path, body, ximpl, "", NULL, "[row.3]\n",
                 "[row.3] crossover_impl: missing: a crossover needs the implementation");
    edit_corrupt(path, body, ximpl, "crossover_impl = \"lpn-a\"\n", NULL, NULL,
                 "[row.3] crossover_impl: 'lpn-a' is cand.1, whose status is 'failed'");
    edit_corrupt(path, body, xo, "", NULL, ximpl,
                 "[row.3] crossover_impl: 'lpn-slow' without a crossover");
    edit_corrupt(path, body, xverdict, "", NULL, "[row.3]\n",
                 "[row.3] crossover_verdict: missing");
    /* A verdict alone: the search ran and found none. */
    char *e = replace(body, xo, "");
    char *e2 = replace(e, ximpl, "");
    edit_ok(path, e2, "format = 3\n", "format = 3\n", &p);
    CU_ASSERT_EQUAL(p.rows[2].crossover, 0);
    CU_ASSERT_STRING_EQUAL(p.rows[2].crossover_verdict, "lpn-slow beats lpn-soft from 524288");
    mpce_pins_free(&p);
    free(e);
    /* Format 2: read, without crossovers; its files never had the keys. */
    char *e3 = replace(e2, xverdict, "");
    edit_ok(path, e3, "format = 3\n", "format = 2\n", &p);
    CU_ASSERT_EQUAL(p.format, 2);
    CU_ASSERT_EQUAL(p.n_rows, 3);
    CU_ASSERT_EQUAL(p.rows[2].crossover, 0);
    CU_ASSERT_STRING_EQUAL(p.rows[2].knobs, "chunk=128:prefetch=0");
    mpce_pins_free(&p);
    free(e2);
    free(e3);
    e = replace(body, "format = 3\n", "format = 2\n");
    expect_corrupt_body(path, e, "crossover: unknown key");
    free(e);

    free(body);
    free(text);
    tu_remove_dir(dir);
}

/* Knob values: a well-formed list for a winner, with the verdict that says
 * how they were found; never empty (a row with the defaults has no key). */
static void test_knobs_read(void)
{
    char path[PATH_LEN];
    char *text;
    size_t len;
    char *dir = sample_dir(path, &text, &len);
    char *body = body_of(text);
    struct mpce_pins p;

    static const char *const bad[] = {"chunk", "chunk=", "=4", "chunk=4:", "chunk=4,x=1",
                                      "Chunk=4", "chunk=-1", "chunk=4294967296", ":chunk=4",
                                      "chunk=4::x=1", "a_very_long_knob_name=1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char to[128], what[256];
        snprintf(to, sizeof(to), "knobs = \"%s\"\n", bad[i]);
        snprintf(what, sizeof(what), "[row.3] knobs: '%s' is not KNOB=VALUE[:KNOB=VALUE...]",
                 bad[i]);
        edit_corrupt(path, body, "knobs = \"chunk=128:prefetch=0\"\n", to, NULL, NULL, what);
    }
    edit_corrupt(path, body, "knobs = \"chunk=128:prefetch=0\"\n", "knobs = \"\"\n", NULL,
                 NULL, "[row.3] knobs: empty");
    edit_corrupt(path, body, "knob_verdict = \"20 values of chunk x prefetch jointly\"\n", "",
                 NULL, "[row.3]\n", "[row.3] knob_verdict: missing: knobs need the "
                                    "knob_verdict");
    edit_corrupt(path, body, "knob_verdict = \"20 values of chunk x prefetch jointly\"",
                 "knob_verdict = \"\"", NULL, NULL, "[row.3] knob_verdict: empty");
    /* Knobs belong to a winner. */
    char *e = replace(body, "[row.2]\n", "[row.2]\nknobs = \"chunk=64\"\nknob_verdict = \"x\"\n");
    CU_ASSERT_FATAL(e != NULL);
    edit_corrupt(path, e, "knobs = \"chunk=64\"\n", "knobs = \"chunk=64\"\n", NULL, NULL,
                 "[row.2] knobs: 'chunk=64' without a winner to apply them to");
    free(e);
    /* The verdict may stand alone (the defaults were kept); a value the
     * largest a knob takes reads back. */
    edit_ok(path, body, "knobs = \"chunk=128:prefetch=0\"\n", "", &p);
    CU_ASSERT_STRING_EQUAL(p.rows[2].knobs, "");
    CU_ASSERT_STRING_EQUAL(p.rows[2].knob_verdict, "20 values of chunk x prefetch jointly");
    mpce_pins_free(&p);
    edit_ok(path, body, "chunk=128:prefetch=0", "chunk=4294967295:a_b_9=0", &p);
    CU_ASSERT_STRING_EQUAL(p.rows[2].knobs, "chunk=4294967295:a_b_9=0");
    mpce_pins_free(&p);

    free(body);
    free(text);
    tu_remove_dir(dir);
}

/* ---- 3c. the writer refuses what the reader rejects ----------------------- */

static void set_str(char **field, const char *v)
{
    free(*field);
    *field = v ? strdup(v) : NULL;
    CU_ASSERT_FATAL(!v || *field);
}

/* p refused: -1, errno EINVAL, why "PATH: cannot write WHAT", no file. */
static void expect_refused(const char *path, const struct mpce_pins *p, const char *what)
{
    char why[WHY_LEN] = "";
    errno = 0;
    CU_ASSERT_EQUAL(mpce_pins_write(path, p, why, sizeof(why)), -1);
    CU_ASSERT_EQUAL(errno, EINVAL);
    CU_ASSERT_EQUAL(access(path, F_OK), -1);
    char want[PATH_LEN + 512];
    snprintf(want, sizeof(want), "%s: cannot write %s", path, what);
    if (!strstr(why, want)) {
        CU_FAIL("the writer's why does not name what is wrong");
        fprintf(stderr, "  want '%s' in: %s\n", want, why);
    }
}

static void test_writer_meaning(void)
{
    char *dir = tu_temp_dir();
    char path[PATH_LEN], why[WHY_LEN];
    join(path, dir, MPCE_PINS_FILE);
    struct mpce_pins p, out;
    build_sample(&p);
    struct mpce_pins_row *r1 = &p.rows[0], *r2 = &p.rows[1], *r3 = &p.rows[2];

    /* The policy: required, one of two words. */
    set_str(&p.policy, NULL);
    expect_refused(path, &p, "[pins] policy: missing: constant-time or variable-time");
    set_str(&p.policy, "");
    expect_refused(path, &p, "[pins] policy: missing");
    set_str(&p.policy, "fast");
    expect_refused(path, &p, "[pins] policy: 'fast' is not constant-time or variable-time");
    CU_ASSERT_EQUAL(mpce_pins_set_policy(&p, "variable-time"), 0);

    /* Row keys. */
    set_str(&r1->key, "ntt.forward");
    expect_refused(path, &p, "[row.1] key: 'ntt.forward' is not a row key");
    set_str(&r1->key, NULL);
    expect_refused(path, &p, "[row.1] key: '' is not a row key");
    set_str(&r1->key, "ntt.forward.q50.medium");

    /* Winner and runner-up. */
    set_str(&r1->winner, "ntt-other");
    expect_refused(path, &p, "[row.1] winner: 'ntt-other' is none of the row's candidates");
    set_str(&r1->winner, "ntt-soft");
    expect_refused(path, &p, "[row.1] winner: 'ntt-soft' is cand.3, whose status is 'wrong': "
                             "a winner must be ok");
    set_str(&r1->winner, "ntt-aesni-ifma");
    set_str(&r3->winner, "lpn-slow");
    expect_refused(path, &p, "[row.3] winner: 'lpn-slow' is cand.4, whose status is "
                             "'screened': a winner must be ok");
    set_str(&r3->winner, "lpn-soft");
    set_str(&r1->runner_up, "ntt-crash");
    expect_refused(path, &p, "[row.1] runner_up: 'ntt-crash' is cand.4, whose status is "
                             "'crashed': a runner-up must be ok or screened");
    set_str(&r1->runner_up, "ntt-aesni-ifma");
    expect_refused(path, &p, "[row.1] runner_up: 'ntt-aesni-ifma' is the winner too");
    set_str(&r2->runner_up, "prg-gone");
    set_str(&r1->runner_up, "ntt-aesni-avx512");
    expect_refused(path, &p, "[row.2] runner_up: 'prg-gone' is none of the row's candidates");
    set_str(&r2->runner_up, NULL);

    /* Duplicates: a candidate, a row key, a module's plugin. */
    set_str(&r1->cands[1].impl, "ntt-aesni-ifma");
    expect_refused(path, &p, "[row.1] cand.2: 'ntt-aesni-ifma' is also cand.1");
    set_str(&r1->cands[1].impl, "ntt-aesni-avx512");
    set_str(&r3->key, "prg.ecb.small");
    expect_refused(path, &p, "[row.3] key: 'prg.ecb.small' is also the key of [row.2]");
    set_str(&r3->key, "lpn.expand.large");
    set_str(&p.modules[1].plugin, "soft");
    expect_refused(path, &p, "[module.2] plugin: 'soft' is also the plugin of [module.1]");
    set_str(&p.modules[1].plugin, "aesni");

    /* The slice threshold: in range, with its verdict. */
    r3->slice_min = (UINT64_C(1) << 48) + 1;
    expect_refused(path, &p, "[row.3] slice_min: 281474976710657 is not never or a number of "
                             "work elements from 1 to 2^48");
    r3->slice_min = MPCE_PINS_NEVER - 1;
    expect_refused(path, &p, "[row.3] slice_min: 18446744073709551614 is not never");
    r3->slice_min = 7;
    set_str(&r3->slice_verdict, "");
    expect_refused(path, &p, "[row.3] slice_verdict: missing: a slice_min needs the "
                             "slice_verdict");
    set_str(&r3->slice_verdict, NULL);
    expect_refused(path, &p, "[row.3] slice_verdict: missing");

    /* Fixed: written, and read back as written, the largest threshold too. */
    set_str(&r3->slice_verdict, "found");
    r3->slice_min = UINT64_C(1) << 48;
    CU_ASSERT_EQUAL_FATAL(mpce_pins_write(path, &p, why, sizeof(why)), 0);
    CU_ASSERT_EQUAL_FATAL(mpce_pins_read(path, &out, why, sizeof(why)), MPCE_PINS_READ_OK);
    CU_ASSERT_STRING_EQUAL(out.policy, "variable-time");
    CU_ASSERT_EQUAL(out.rows[2].slice_min, UINT64_C(1) << 48);
    CU_ASSERT_STRING_EQUAL(out.rows[2].slice_verdict, "found");
    CU_ASSERT_STRING_EQUAL(out.rows[1].slice_verdict, "not measured: no winner");
    CU_ASSERT_EQUAL(out.rows[1].slice_min, 0);
    mpce_pins_free(&out);

    mpce_pins_free(&p);
    CU_ASSERT_PTR_NULL(p.policy);
    tu_remove_dir(dir);
}

/* ---- 4. concurrent read-modify-write under the lock ---------------------- */

#define N_CHILDREN 6

static int child_add_row(const char *dir, const char *path, int n, int go_fd)
{
    char c;
    /* Wait until every child is forked, then race. */
    if (read(go_fd, &c, 1) < 0)
        return 10;
    char why[WHY_LEN];
    int fd = mpce_pins_lock(dir, 10000, why, sizeof(why));
    if (fd < 0) {
        fprintf(stderr, "  child %d: %s\n", n, why);
        return 1;
    }
    struct mpce_pins p;
    enum mpce_pins_read_result res = mpce_pins_read(path, &p, why, sizeof(why));
    if (res == MPCE_PINS_READ_MISSING) {
        if (mpce_pins_set_header(&p, "0.1.0", "2026-11-30T17:04:05Z", "quick", "cpu") != 0 ||
            mpce_pins_set_policy(&p, "variable-time") != 0)
            return 2;
    } else if (res != MPCE_PINS_READ_OK) {
        fprintf(stderr, "  child %d: %s\n", n, why);
        return 3;
    }
    char key[64];
    snprintf(key, sizeof(key), "child.c%d.small", n);
    struct mpce_pins_cand cand = {.impl = "soft", .status = "ok", .median = 1e-6 * (n + 1),
                                  .spread = 0.01, .why = ""};
    struct mpce_pins_row row = {.key = key, .shape = "n=1", .winner = "soft",
                                .runner_up = "", .verdict = "only one",
                                .cands = &cand, .n_cands = 1};
    /* Some time between read and write, for a lost update to show. */
    sleep_ms(5);
    int rc = 0;
    if (mpce_pins_put_row(&p, &row) != 0)
        rc = 4;
    else if (mpce_pins_write(path, &p, why, sizeof(why)) != 0) {
        fprintf(stderr, "  child %d: %s\n", n, why);
        rc = 5;
    }
    mpce_pins_free(&p);
    mpce_pins_unlock(fd);
    return rc;
}

static void test_concurrent_updates(void)
{
    char *dir = tu_temp_dir();
    char path[PATH_LEN];
    join(path, dir, MPCE_PINS_FILE);
    int go[2];
    CU_ASSERT_FATAL(pipe(go) == 0);
    pid_t pids[N_CHILDREN];
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < N_CHILDREN; i++) {
        pids[i] = fork();
        CU_ASSERT_FATAL(pids[i] >= 0);
        if (pids[i] == 0) {
            close(go[1]);
            int rc = child_add_row(dir, path, i, go[0]);
            fflush(stderr);
            free(dir);
            _exit(rc);
        }
    }
    close(go[0]);
    close(go[1]); /* every child's read returns: go */
    for (int i = 0; i < N_CHILDREN; i++) {
        int status;
        CU_ASSERT_EQUAL(waitpid(pids[i], &status, 0), pids[i]);
        CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    struct mpce_pins p;
    char why[WHY_LEN];
    CU_ASSERT_EQUAL_FATAL(mpce_pins_read(path, &p, why, sizeof(why)), MPCE_PINS_READ_OK);
    CU_ASSERT_EQUAL(p.n_rows, N_CHILDREN);
    for (int i = 0; i < N_CHILDREN; i++) {
        char key[64];
        snprintf(key, sizeof(key), "child.c%d.small", i);
        const struct mpce_pins_row *r = mpce_pins_find_row(&p, key);
        CU_ASSERT_PTR_NOT_NULL(r);
        if (r) {
            CU_ASSERT_EQUAL(r->n_cands, 1);
            CU_ASSERT_DOUBLE_EQUAL(r->cands[0].median, 1e-6 * (i + 1), 1e-12);
        }
    }
    mpce_pins_free(&p);
    tu_remove_dir(dir);
}

/* ---- 5. a writer killed at any moment ------------------------------------ */

#define BIG_ROWS 300

static void build_big(struct mpce_pins *p)
{
    memset(p, 0, sizeof(*p));
    CU_ASSERT_FATAL(mpce_pins_set_header(p, "0.1.0", "2026-11-30T17:04:05Z", "measure",
                                         "x86-64 test") == 0);
    CU_ASSERT_FATAL(mpce_pins_set_policy(p, "constant-time") == 0);
    char verdict[901];
    memset(verdict, 'v', 900);
    verdict[900] = '\0';
    struct mpce_pins_cand cands[3] = {
        {.impl = "a-impl", .status = "ok", .median = 1.5e-6, .spread = 0.01, .why = ""},
        {.impl = "b-impl", .status = "ok", .median = 2.5e-6, .spread = 0.02, .why = ""},
        {.impl = "c-impl", .status = "wrong", .median = 0, .spread = 0, .why = verdict},
    };
    for (int i = 0; i < BIG_ROWS; i++) {
        char key[64];
        snprintf(key, sizeof(key), "op.%d.medium", i);
        struct mpce_pins_row r = {.key = key, .shape = "N=4096", .winner = "a-impl",
                                  .runner_up = "b-impl", .verdict = verdict,
                                  .cands = cands, .n_cands = 3};
        CU_ASSERT_FATAL(mpce_pins_add_row(p, &r) == 0);
    }
}

static void test_killed_writer(void)
{
    char *dir = tu_temp_dir();
    char path[PATH_LEN];
    join(path, dir, MPCE_PINS_FILE);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        struct mpce_pins p;
        build_big(&p);
        char why[WHY_LEN];
        for (unsigned long n = 0;; n++) {
            snprintf(p.rows[0].verdict, 32, "write %lu", n);
            if (mpce_pins_write(path, &p, why, sizeof(why)) != 0) {
                fprintf(stderr, "  writer: %s\n", why);
                _exit(1);
            }
        }
    }
    /* Wait for the first file (up to 20 s: valgrind is slow). */
    for (int i = 0; i < 2000 && access(path, F_OK) != 0; i++)
        sleep_ms(10);
    uint64_t seed = 0x5eed;
    size_t ok = 0;
    for (int i = 0; i < 20; i++) {
        sleep_ms((unsigned)(tu_splitmix64(&seed) % 21));
        struct mpce_pins p;
        char why[WHY_LEN];
        enum mpce_pins_read_result res = mpce_pins_read(path, &p, why, sizeof(why));
        if (res != MPCE_PINS_READ_OK && res != MPCE_PINS_READ_MISSING) {
            CU_FAIL("a reader saw a torn or corrupt file");
            fprintf(stderr, "  read %d: %s\n", i, why);
        }
        if (res == MPCE_PINS_READ_OK) {
            ok++;
            CU_ASSERT_EQUAL(p.n_rows, BIG_ROWS);
            mpce_pins_free(&p);
        }
    }
    CU_ASSERT(ok > 0);
    /* Kill it mid-write (or wherever it is). */
    sleep_ms((unsigned)(tu_splitmix64(&seed) % 7));
    CU_ASSERT_EQUAL(kill(pid, SIGKILL), 0);
    int status;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    struct mpce_pins p;
    char why[WHY_LEN];
    CU_ASSERT_EQUAL(mpce_pins_read(path, &p, why, sizeof(why)), MPCE_PINS_READ_OK);
    CU_ASSERT_EQUAL(p.n_rows, BIG_ROWS);
    CU_ASSERT(strncmp(p.rows[0].verdict, "write ", 6) == 0);
    /* A stray temporary does not disturb the next write either; one over
     * an hour old is removed by it, a recent one (maybe a live writer's)
     * is left. */
    char old_tmp[PATH_LEN], new_tmp[PATH_LEN];
    join(old_tmp, dir, ".pins.ini.OLDaaa");
    join(new_tmp, dir, ".pins.ini.NEWbbb");
    tu_write_text(old_tmp, "torn", 0600);
    tu_write_text(new_tmp, "torn", 0600);
    struct timespec two_hours_ago[2] = {{time(NULL) - 7200, 0}, {time(NULL) - 7200, 0}};
    CU_ASSERT_EQUAL(utimensat(AT_FDCWD, old_tmp, two_hours_ago, 0), 0);
    CU_ASSERT_EQUAL(mpce_pins_write(path, &p, why, sizeof(why)), 0);
    CU_ASSERT(access(old_tmp, F_OK) != 0);
    CU_ASSERT(access(new_tmp, F_OK) == 0);
    mpce_pins_free(&p);
    CU_ASSERT_EQUAL(mpce_pins_read(path, &p, why, sizeof(why)), MPCE_PINS_READ_OK);
    mpce_pins_free(&p);
    tu_remove_dir(dir);
}

/* ---- 6. the lock --------------------------------------------------------- */

static void test_lock_timeout(void)
{
    char *dir = tu_temp_dir();
    char why[WHY_LEN];
    int fd = mpce_pins_lock(dir, 0, why, sizeof(why));
    CU_ASSERT_FATAL(fd >= 0);
    char lock[PATH_LEN];
    join(lock, dir, MPCE_PINS_LOCK);
    struct stat st;
    CU_ASSERT_EQUAL(stat(lock, &st), 0);
    CU_ASSERT(S_ISREG(st.st_mode));

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        uint64_t t0 = ms_now();
        char cwhy[WHY_LEN] = "";
        int cfd = mpce_pins_lock(dir, 50, cwhy, sizeof(cwhy));
        uint64_t took = ms_now() - t0;
        int rc = 0;
        if (cfd >= 0)
            rc = 1;
        else if (!strstr(cwhy, "held") || !strstr(cwhy, MPCE_PINS_LOCK))
            rc = 2;
        else if (took < 40 || took > 1000)
            rc = 3;
        if (rc)
            fprintf(stderr, "  child: rc %d after %llu ms: %s\n", rc, (unsigned long long)took,
                    cwhy);
        /* wait 0: one try only. */
        t0 = ms_now();
        if (rc == 0 && (mpce_pins_lock(dir, 0, cwhy, sizeof(cwhy)) >= 0 || ms_now() - t0 > 500))
            rc = 4;
        fflush(stderr);
        free(dir); /* the child's copy: valgrind checks the child's leaks too */
        _exit(rc);
    }
    int status;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* Released while another waits: the waiter gets it. */
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        char cwhy[WHY_LEN];
        int cfd = mpce_pins_lock(dir, 10000, cwhy, sizeof(cwhy));
        if (cfd < 0)
            fprintf(stderr, "  waiter: %s\n", cwhy);
        mpce_pins_unlock(cfd);
        free(dir);
        _exit(cfd >= 0 ? 0 : 1);
    }
    sleep_ms(100);
    mpce_pins_unlock(fd);
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* Free again: taken at once. */
    fd = mpce_pins_lock(dir, 0, why, sizeof(why));
    CU_ASSERT(fd >= 0);
    mpce_pins_unlock(fd);
    mpce_pins_unlock(-1);

    /* A directory that cannot be created: its parent is a file. */
    char bad[PATH_LEN], plain[PATH_LEN];
    join(plain, dir, "plain");
    tu_write_text(plain, "not a directory\n", 0644);
    join(bad, plain, "deeper");
    CU_ASSERT_EQUAL(mpce_pins_lock(bad, 0, why, sizeof(why)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "plain/deeper"));
    unlink(plain);
    tu_remove_dir(dir);
}

static const struct tu_test tests[] = {
    {"round trip", test_round_trip},
    {"writer limits and refusals", test_writer_limits},
    {"missing, directory, fifo, symlink", test_not_a_file},
    {"seal: flipped, truncated, appended", test_seal},
    {"strict content under a valid seal", test_strict_content},
    {"policy: required, one of two", test_policy_read},
    {"winner and runner-up among the candidates", test_winner_read},
    {"no row, candidate or module twice", test_unique_read},
    {"row keys well-formed", test_row_key_read},
    {"row keys the selector knows parse back", test_row_key_parse},
    {"slice threshold in range, verdict alone", test_slice_read},
    {"knob values well-formed, for a winner, with a verdict", test_knobs_read},
    {"crossover: in range, for a candidate, with a verdict; format 2 still read",
     test_crossover_read},
    {"writer refuses what the reader rejects", test_writer_meaning},
    {"concurrent updates under the lock", test_concurrent_updates},
    {"killed writer leaves no torn file", test_killed_writer},
    {"lock timeout", test_lock_timeout},
    {NULL, NULL},
};

int main(void)
{
    return tu_main("pins", tests);
}
