/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Configuration: one test per class of malformed input (each error names
 * the file, line, section and key), overrides, layering and policy.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/runtime/conf.h"
#include "tests/testutil.h"

static const unsigned quiet_flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV |
                                    MPCE_OPT_NO_SYSTEM_CONFIG | MPCE_OPT_NO_PLUGINS;

/* Create an engine from config text; *path receives the file (caller frees). */
static mpce_status engine_from(const char *text, unsigned flags, mpce_engine **e, char **path)
{
    char *conf = tu_write_temp(text);
    mpce_options opts = {.struct_size = sizeof(opts), .config_path = conf, .flags = flags};
    *e = NULL;
    mpce_status st = mpce_engine_new(&opts, e);
    if (path)
        *path = conf;
    else {
        unlink(conf);
        free(conf);
    }
    return st;
}

static void drop(char *path)
{
    unlink(path);
    free(path);
}

/* The error detail mentions the temp file's path. */
static void expect_mentions_path(const char *path)
{
    if (!strstr(mpce_last_error(), path)) {
        fprintf(stderr, "  detail '%s' does not name %s\n", mpce_last_error(), path);
        CU_FAIL("error does not name the file");
    }
}

/* ---- malformed input ---------------------------------------------------------- */

static void test_syntax_error(void)
{
    mpce_engine *e;
    char *path;
    TU_ASSERT_ERROR(engine_from("[engine]\nstrict = no\n[pins\n", quiet_flags, &e, &path),
                    MPCE_ERR_CONFIG, ":3:");
    expect_mentions_path(path);
    CU_ASSERT(tu_error_mentions("syntax error"));
    CU_ASSERT_PTR_NULL(e);
    drop(path);
}

static void test_bad_boolean(void)
{
    mpce_engine *e;
    char *path;
    TU_ASSERT_ERROR(engine_from("# comment\n[engine]\n\nallow_variable_time = maybe\n",
                                quiet_flags, &e, &path),
                    MPCE_ERR_CONFIG,
                    ":4: [engine] allow_variable_time = maybe: expected yes or no (also "
                    "accepted: true, on, 1 and false, off, 0)");
    expect_mentions_path(path);
    drop(path);
}

/* What the log callback received. */
struct log_capture {
    char text[4096];
    unsigned warnings;
    int plugin_named;
};

static void capture_log(void *arg, mpce_log_level level, const char *plugin,
                        const char *message)
{
    struct log_capture *c = arg;
    size_t used = strlen(c->text);
    snprintf(c->text + used, sizeof(c->text) - used, "%s\n", message);
    c->warnings += level == MPCE_LOG_WARNING;
    c->plugin_named |= plugin != NULL;
}

/* Bytes the process wrote to fd 2 while fn ran. */
static size_t stderr_bytes_during(void (*fn)(void *), void *arg)
{
    char path[] = "/tmp/mpce-stderr-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    struct stat sb;
    fstat(fd, &sb);
    close(fd);
    unlink(path);
    return (size_t)sb.st_size;
}

struct warn_run {
    char *conf;
    struct log_capture *log;
    mpce_status st;
};

static void make_and_free(void *arg)
{
    struct warn_run *w = arg;
    mpce_options opts = {.struct_size = sizeof(opts), .config_path = w->conf,
                         .flags = quiet_flags & ~MPCE_OPT_NO_PLUGINS,
                         .plugin_path = "/nonexistent/mpce-plugins",
                         .log = w->log ? capture_log : NULL, .log_arg = w->log};
    mpce_engine *e = NULL;
    w->st = mpce_engine_new(&opts, &e);
    if (w->st == MPCE_OK)
        w->st = tu_ecb_fips_c1(e, NULL);
    mpce_engine_free(e);
}

/* The engine.conf the tree installs sets nothing, so that the layers under
 * it (plugins.d snippets) are not overridden by a copy of the defaults. */
static mpce_engine *shipped_engine(const char *path, struct log_capture *log)
{
    mpce_options opts = {.struct_size = sizeof(opts), .config_path = path,
                         .flags = quiet_flags | MPCE_OPT_NO_TUNE, .log = capture_log,
                         .log_arg = log, .log_level = MPCE_LOG_DEBUG};
    mpce_engine *e = NULL;
    CU_ASSERT_EQUAL(mpce_engine_new(&opts, &e), MPCE_OK);
    if (log->text[0])
        fprintf(stderr, "  logged: %s", log->text);
    CU_ASSERT_EQUAL(log->warnings, 0);
    return e;
}

/* The shipped file with every "#key = value" line of a real section
 * uncommented (keys under a commented-out "#[section]" stay comments). */
static char *uncomment_shipped(size_t *uncommented)
{
    FILE *in = fopen(SHIPPED_CONF, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap), line[512];
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    int commented_section = 0;
    *uncommented = 0;
    while (fgets(line, sizeof(line), in)) {
        const char *keep = line;
        if (line[0] == '[')
            commented_section = 0;
        else if (line[0] == '#' && line[1] == '[')
            commented_section = 1;
        else if (line[0] == '#' && line[1] >= 'a' && line[1] <= 'z' && strstr(line, " = ") &&
                 !commented_section) {
            keep = line + 1;
            ++*uncommented;
        }
        size_t n = strlen(keep);
        CU_ASSERT_FATAL(len + n + 1 < cap);
        memcpy(text + len, keep, n + 1);
        len += n;
    }
    fclose(in);
    return text;
}

static const mpce_setting_info *find_setting(const mpce_setting_info *set, size_t n,
                                             const char *section, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(set[i].section, section) == 0 && strcmp(set[i].key, key) == 0)
            return &set[i];
    return NULL;
}

/* Shipped as comments, every key is documented with its real default:
 * uncommented, the file loads without a warning and changes no value. */
static void test_shipped_conf(void)
{
    struct log_capture log = {{0}, 0, 0};
    mpce_engine *e = shipped_engine(SHIPPED_CONF, &log);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    const char *const *files;
    const mpce_setting_info *set, *set2;
    size_t nfiles, nset, nset2;
    CU_ASSERT_FATAL(mpce_config_info(e, &files, &nfiles, &set, &nset) == MPCE_OK);
    for (size_t i = 0; i < nset; i++)
        if (strstr(set[i].source, "engine.conf:")) {
            fprintf(stderr, "  shipped engine.conf sets [%s] %s at %s\n", set[i].section,
                    set[i].key, set[i].source);
            CU_FAIL("the shipped engine.conf sets a key");
        }

    size_t uncommented = 0;
    char *text = uncomment_shipped(&uncommented);
    size_t ignored;
    char *text_of_shipped = uncomment_shipped(&ignored); /* for plain searches */
    char *path = tu_write_temp(text);
    free(text);
    struct log_capture log2 = {{0}, 0, 0};
    mpce_engine *e2 = shipped_engine(path, &log2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e2);
    CU_ASSERT_FATAL(mpce_config_info(e2, &files, &nfiles, &set2, &nset2) == MPCE_OK);
    size_t from_file = 0;
    for (size_t i = 0; i < nset2; i++)
        from_file += strstr(set2[i].source, path) != NULL;
    /* Each uncommented line is one setting (the pins included), but for
     * [tune] mode, which MPCE_OPT_NO_TUNE overrides. */
    CU_ASSERT_EQUAL(from_file + 1, uncommented);
    CU_ASSERT(uncommented >= 12); /* 4 [engine], 4 [tune], 4 [pins] */
    for (size_t i = 0; i < nset; i++) {
        if (strcmp(set[i].source, "default") != 0)
            continue;
        /* The compiled-in plugin directory depends on the architecture, and
         * one engine.conf serves all: it is described, not written out. */
        if (strcmp(set[i].key, "plugin_path") == 0) {
            CU_ASSERT_PTR_NULL(strstr(text_of_shipped, set[i].value));
            CU_ASSERT_PTR_NOT_NULL(strstr(text_of_shipped, "\n# plugin_path = "));
            continue;
        }
        const mpce_setting_info *s2 = find_setting(set2, nset2, set[i].section, set[i].key);
        CU_ASSERT_PTR_NOT_NULL(s2);
        if (!s2)
            continue;
        if (!strstr(s2->source, path)) {
            fprintf(stderr, "  [%s] %s is not documented in the shipped engine.conf\n",
                    set[i].section, set[i].key);
            CU_FAIL("a key is missing from the shipped engine.conf");
        }
        if (strcmp(s2->value, set[i].value) != 0) {
            fprintf(stderr, "  [%s] %s: shipped comment says %s, the default is %s\n",
                    set[i].section, set[i].key, s2->value, set[i].value);
            CU_FAIL("the shipped engine.conf documents a wrong default");
        }
    }
    mpce_engine_free(e2);
    mpce_engine_free(e);
    drop(path);
    free(text_of_shipped);

    /* A key before any section is named with its line, and the section it
     * belongs in. */
    struct log_capture w = {{0}, 0, 0};
    char *conf = tu_write_temp("# x\nntt.mul = auto\nstrict = no\n[engine]\n");
    mpce_options opts = {.struct_size = sizeof(opts), .config_path = conf,
                         .flags = quiet_flags, .log = capture_log, .log_arg = &w,
                         .log_level = MPCE_LOG_DEBUG};
    CU_ASSERT_EQUAL_FATAL(mpce_engine_new(&opts, &e), MPCE_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(w.text, ":2: key 'ntt.mul' outside any section ignored: "
                                          "put it under [pins]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(w.text, ":3: key 'strict' outside any section ignored: "
                                          "put it under [engine]"));
    mpce_engine_free(e);
    drop(conf);
}

/* Unknown keys and sections, and a missing plugin directory, are warnings
 * that name the file and line; they reach the log callback and nothing
 * reaches the process's stderr, with or without a callback. */
static void test_unknown_key_warns(void)
{
    struct log_capture log = {{0}, 0, 0};
    struct warn_run w = {tu_write_temp("[engine]\nfrobnicate = 1\n[nosuchsection]\nx = 1\n"
                                       "[plugin.aesni]\ncolour = red\n"),
                         &log, MPCE_ERR_STATE};
    CU_ASSERT_EQUAL(stderr_bytes_during(make_and_free, &w), 0);
    CU_ASSERT_EQUAL(w.st, MPCE_OK);
    CU_ASSERT_EQUAL(log.warnings, 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, ":2: unknown key 'frobnicate' in [engine]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, ":3: unknown section [nosuchsection]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, ":6: unknown key 'colour' in [plugin.aesni]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, "/nonexistent/mpce-plugins"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, w.conf));
    CU_ASSERT_FALSE(log.plugin_named);
    w.log = NULL;
    CU_ASSERT_EQUAL(stderr_bytes_during(make_and_free, &w), 0);
    CU_ASSERT_EQUAL(w.st, MPCE_OK);
    drop(w.conf);
}

/* A section whose name has a ':' (iniparser's own separator) is an unknown
 * section like any other: a warning with its line, not "out of memory". */
static void test_section_with_colon(void)
{
    struct log_capture log = {{0}, 0, 0};
    struct warn_run w = {tu_write_temp("[engine]\nstrict = no\n[a:b]\nx = 1\n[c:d]\n"),
                         &log, MPCE_ERR_STATE};
    CU_ASSERT_EQUAL(stderr_bytes_during(make_and_free, &w), 0);
    CU_ASSERT_EQUAL(w.st, MPCE_OK);
    CU_ASSERT_PTR_NULL(strstr(log.text, "memory"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, ":3: unknown section [a:b]"));
    drop(w.conf);
}

/* iniparser joins a comment that ends in '\\' with the next line: the
 * setting there vanishes into the comment, so it is a warning with the
 * line. A value continued on purpose, or a comment joined to another
 * comment or to a blank line, is none. */
static void test_comment_swallows_line(void)
{
    struct log_capture log = {{0}, 0, 0};
    struct warn_run w = {tu_write_temp("[engine]\n# many threads \\\nthreads = 2\n"
                                       "# a \\\n# b\n; c \\\n\nstrict = no\n"),
                         &log, MPCE_ERR_STATE};
    CU_ASSERT_EQUAL(stderr_bytes_during(make_and_free, &w), 0);
    CU_ASSERT_EQUAL(w.st, MPCE_OK);
    CU_ASSERT_EQUAL(log.warnings, 2); /* this one and the suite's missing plugin directory */
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, ":3: ignored: the comment above ends in '\\', "
                                            "which joins this line to it"));
    drop(w.conf);
}

/* A NUL byte would end the text iniparser sees: what follows it would be
 * dropped without a word (here, a malformed mode), so the file is refused. */
static void test_nul_byte(void)
{
    static const char text[] = "# a\0b\n[tune]\nmode = bogus\n";
    char *conf = tu_write_temp("");
    FILE *f = fopen(conf, "wb");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT_EQUAL(fwrite(text, 1, sizeof(text) - 1, f), sizeof(text) - 1);
    CU_ASSERT_EQUAL(fclose(f), 0);
    mpce_options opts = {.struct_size = sizeof(opts), .config_path = conf, .flags = quiet_flags};
    mpce_engine *e = NULL;
    TU_ASSERT_ERROR(mpce_engine_new(&opts, &e), MPCE_ERR_CONFIG, ":1: a NUL byte");
    expect_mentions_path(conf);
    CU_ASSERT_PTR_NULL(e);
    drop(conf);
}

/* A key set twice in one section warns with both lines, the later value
 * standing (iniparser's rule); the same key in another section, or a
 * section continued under a second header, is told apart. */
static void test_duplicate_key_warns(void)
{
    struct log_capture log = {{0}, 0, 0};
    struct warn_run w = {tu_write_temp("[engine]\nthreads = 1\n[tune]\nmode = off\n"
                                       "[ENGINE]\n  Threads = 2\n[pins]\nprg = auto\n"
                                       "prg = auto\r\n# prg = x\nprg = auto\n"),
                         &log, MPCE_ERR_STATE};
    CU_ASSERT_EQUAL(stderr_bytes_during(make_and_free, &w), 0);
    CU_ASSERT_EQUAL(w.st, MPCE_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, ":6: [ENGINE] Threads is set again (first set at "
                                            "line 2): the last setting is used"));
    /* Three settings: each later one names the first; a comment is none. */
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, ":9: [pins] prg is set again (first set at line 8)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, ":11: [pins] prg is set again (first set at line 8)"));
    CU_ASSERT_PTR_NULL(strstr(log.text, ":10:"));
    CU_ASSERT_PTR_NULL(strstr(log.text, "mode is set again"));
    drop(w.conf);

    /* Keys before any section are ignored (warned elsewhere), not repeats. */
    struct log_capture log2 = {{0}, 0, 0};
    struct warn_run w2 = {tu_write_temp("threads = 1\nthreads = 2\n[engine]\n"), &log2,
                          MPCE_ERR_STATE};
    CU_ASSERT_EQUAL(stderr_bytes_during(make_and_free, &w2), 0);
    CU_ASSERT_PTR_NULL(strstr(log2.text, "set again"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log2.text, "outside any section"));
    drop(w2.conf);
}

static void test_pin_unknown_impl(void)
{
    mpce_engine *e;
    char *path;
    /* Accepted at creation (a plugin may provide it); an error at first use. */
    CU_ASSERT_EQUAL_FATAL(engine_from("[pins]\nprg = prg-nosuch\n", quiet_flags, &e, &path),
                          MPCE_OK);
    TU_ASSERT_ERROR(tu_ecb_fips_c1(e, NULL), MPCE_ERR_NOIMPL, "[pins] prg = prg-nosuch");
    CU_ASSERT(tu_error_mentions("unknown implementation"));
    expect_mentions_path(path);
    CU_ASSERT_PTR_NULL(tu_auto(e, "prg.ecb", NULL));
    /* Other primitives are unaffected; a named call bypasses the pin. */
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "ntt.forward", NULL), "ntt-soft");
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(e, "prg-soft-bitslice"), MPCE_OK);
    mpce_engine_free(e);
    drop(path);
}

static void test_pin_wrong_primitive(void)
{
    mpce_engine *e;
    CU_ASSERT_EQUAL_FATAL(engine_from("[pins]\nprg = ntt-soft\n", quiet_flags, &e, NULL),
                          MPCE_OK);
    TU_ASSERT_ERROR(tu_ecb_fips_c1(e, NULL), MPCE_ERR_NOIMPL, "not prg");
    mpce_engine_free(e);
}

static void test_pin_unknown_primitive(void)
{
    mpce_engine *e;
    TU_ASSERT_ERROR(engine_from("[pins]\nfft = auto\n", quiet_flags, &e, NULL),
                    MPCE_ERR_CONFIG, "[pins] fft = auto");
}

static void test_pin_explicit(void)
{
    mpce_engine *e;
    CU_ASSERT_EQUAL_FATAL(engine_from("[pins]\nprg = prg-soft-bitslice\nntt = auto\n",
                                      quiet_flags, &e, NULL),
                          MPCE_OK);
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "prg.ecb", NULL), "prg-soft-bitslice");
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(e, NULL), MPCE_OK);
    mpce_engine_free(e);
}

/* Pins per operation and per size class: the most specific key decides,
 * and the routes say which pin did. */
static void test_pin_classes(void)
{
    mpce_engine *e;
    char *path;
    CU_ASSERT_EQUAL_FATAL(engine_from("[engine]\nallow_variable_time = yes\n"
                                      "[pins]\nprg = prg-soft-bitslice\n"
                                      "prg.ctr = prg-soft-ttable\n"
                                      "prg.ctr.large = prg-soft-bitslice\n"
                                      "DPF.Eval.Tiny = dpf-soft\n",
                                      quiet_flags, &e, &path),
                          MPCE_OK);
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "prg.ecb", "tiny"), "prg-soft-bitslice");
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "prg.ctr", "tiny"), "prg-soft-ttable");
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "prg.ctr", "medium"), "prg-soft-ttable");
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "prg.ctr", "large"), "prg-soft-bitslice");
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "dpf.eval", "tiny"), "dpf-soft");
    const mpce_route_info *rows;
    size_t n;
    CU_ASSERT_FATAL(mpce_routes(e, &rows, &n) == MPCE_OK);
    int checked = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].op, "prg.ctr") == 0 && strcmp(rows[i].size_class, "large") == 0) {
            CU_ASSERT_PTR_NOT_NULL(strstr(rows[i].source, "[pins] prg.ctr.large"));
            CU_ASSERT_PTR_NOT_NULL(strstr(rows[i].source, path));
            checked++;
        }
        if (strcmp(rows[i].op, "ntt.mul") == 0) {
            CU_ASSERT_STRING_EQUAL(rows[i].source, "priority");
            checked++;
        }
    }
    CU_ASSERT_EQUAL(checked, 9); /* prg.ctr.large, and ntt.mul in two variants by four classes */
    /* Through the API: the same choice per call, and the resolve call agrees. */
    static const uint8_t key[16];
    mpce_prg *prg;
    const char *name;
    CU_ASSERT_FATAL(mpce_prg_new(e, key, 1, &prg) == MPCE_OK);
    CU_ASSERT_EQUAL(mpce_prg_resolve(prg, NULL, "prg.ctr", 10, &name), MPCE_OK);
    CU_ASSERT_STRING_EQUAL(name, "prg-soft-ttable");
    CU_ASSERT_EQUAL(mpce_prg_resolve(prg, NULL, "prg.ctr", 1u << 20, &name), MPCE_OK);
    CU_ASSERT_STRING_EQUAL(name, "prg-soft-bitslice");
    CU_ASSERT_EQUAL(mpce_prg_resolve(prg, "prg-soft-ttable", "prg.ecb", 1, &name), MPCE_OK);
    CU_ASSERT_STRING_EQUAL(name, "prg-soft-ttable");
    TU_ASSERT_ERROR(mpce_prg_resolve(prg, NULL, "ntt.forward", 1, &name), MPCE_ERR_ARG,
                    "not a prg operation: use one of prg.ecb, prg.mmo, prg.ctr");
    mpce_prg_free(prg);
    mpce_engine_free(e);
    drop(path);
    /* Malformed keys name what is accepted. */
    TU_ASSERT_ERROR(engine_from("[pins]\nprg.fft = auto\n", quiet_flags, &e, NULL),
                    MPCE_ERR_CONFIG, "ecb mmo ctr");
    TU_ASSERT_ERROR(engine_from("[pins]\nprg.ecb.huge = auto\n", quiet_flags, &e, NULL),
                    MPCE_ERR_CONFIG, "tiny, small, medium or large");
    TU_ASSERT_ERROR(engine_from("[pins]\nntt.ctx_new = ntt-soft\n", quiet_flags, &e, NULL),
                    MPCE_ERR_CONFIG, "forward inverse mul");
}

/* Line numbers come from an index of the file (iniparser keeps none): the
 * last setting of a key across a repeated section, in any case, and each
 * unknown key at its own line. */
static void test_line_numbers(void)
{
    mpce_engine *e = NULL;
    char *path = NULL;
    TU_ASSERT_ERROR(engine_from("[engine]\nthreads = 2\n[tune]\n# threads = x\n[Engine]\n"
                                "THREADS = lots\n", quiet_flags, &e, &path),
                    MPCE_ERR_CONFIG, ":6: [engine] threads = lots: expected");
    drop(path);
    struct log_capture log = {{0}, 0, 0};
    struct warn_run w = {tu_write_temp("[engine]\nfoo = 1\n[tune]\nbar = 2\n[engine]\n"
                                       "baz = 3\n"),
                         &log, MPCE_ERR_STATE};
    CU_ASSERT_EQUAL(stderr_bytes_during(make_and_free, &w), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, ":2: unknown key 'foo' in [engine]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, ":4: unknown key 'bar' in [tune]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, ":6: unknown key 'baz' in [engine]"));
    drop(w.conf);
}

/* The layers in the order mpce_config_load reads them: a plugin package's
 * snippet sets defaults that the shipped engine.conf leaves alone, and a
 * drop-in of the administrator's overrides the snippet key by key. */
static void test_snippet_under_shipped_conf(void)
{
    char *dir = tu_temp_dir(), snippets[4096], dropins[4096], path[4200];
    snprintf(snippets, sizeof(snippets), "%s/plugins.d", dir);
    snprintf(dropins, sizeof(dropins), "%s/engine.conf.d", dir);
    CU_ASSERT_FATAL(mkdir(snippets, 0700) == 0 && mkdir(dropins, 0700) == 0);
    snprintf(path, sizeof(path), "%s/aesni.conf", snippets);
    tu_write_text(path, "[engine]\nthreads = 3\n[pins]\nprg = prg-soft-bitslice\n"
                        "lpn.fold = lpn-soft\n", 0644);
    snprintf(path, sizeof(path), "%s/local.conf", dropins);
    tu_write_text(path, "[pins]\nlpn.fold = auto\n", 0644);

    struct mpce_config cfg;
    CU_ASSERT_FATAL(mpce_config_init(&cfg) == MPCE_OK);
    CU_ASSERT_EQUAL(mpce_config_read_dir(&cfg, snippets), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_config_read_file(&cfg, SHIPPED_CONF, MPCE_CONF_OPTIONAL, NULL), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_config_read_dir(&cfg, dropins), MPCE_OK);
    CU_ASSERT_EQUAL(cfg.threads, 3u);
    const struct mpce_pin *pin = mpce_config_pin(&cfg, "prg.ecb", 0);
    CU_ASSERT_PTR_NOT_NULL(pin);
    if (pin) {
        CU_ASSERT_STRING_EQUAL(pin->name, "prg-soft-bitslice");
        CU_ASSERT_PTR_NOT_NULL(strstr(pin->source, "aesni.conf:4"));
    }
    pin = mpce_config_pin(&cfg, "lpn.fold", 0);
    CU_ASSERT(pin == NULL || strcmp(pin->name, "auto") == 0);
    mpce_config_free(&cfg);
    tu_remove_dir(dir);
}

/* [plugin.soft] enabled = no is refused with a warning where it is read;
 * soft runs, and the configuration listing does not claim otherwise. */
static void test_soft_cannot_be_disabled(void)
{
    char *conf = tu_write_temp("[plugin.soft]\nenabled = no\n");
    struct log_capture log = {{0}, 0, 0};
    mpce_options opts = {.struct_size = sizeof(opts), .config_path = conf,
                         .flags = quiet_flags | MPCE_OPT_NO_PLUGINS, .log = capture_log,
                         .log_arg = &log};
    mpce_engine *e = NULL;
    CU_ASSERT_EQUAL_FATAL(mpce_engine_new(&opts, &e), MPCE_OK);
    CU_ASSERT_EQUAL(log.warnings, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, ":2: [plugin.soft] enabled = no ignored"));
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(e, "prg-soft-bitslice"), MPCE_OK);
    const char *const *files;
    const mpce_setting_info *set;
    size_t nfiles, nset;
    CU_ASSERT_FATAL(mpce_config_info(e, &files, &nfiles, &set, &nset) == MPCE_OK);
    for (size_t i = 0; i < nset; i++)
        CU_ASSERT(strcmp(set[i].section, "plugin.soft") != 0);
    mpce_engine_free(e);
    drop(conf);
}

/* mpce_config_info: the files read and where each setting came from. */
static void test_config_info(void)
{
    mpce_engine *e;
    char *path;
    CU_ASSERT_EQUAL_FATAL(engine_from("# x\n[engine]\nthreads = 2\n[pins]\nlpn = lpn-soft\n",
                                      quiet_flags, &e, &path),
                          MPCE_OK);
    const char *const *files;
    const mpce_setting_info *set;
    size_t nfiles, nset;
    CU_ASSERT_FATAL(mpce_config_info(e, &files, &nfiles, &set, &nset) == MPCE_OK);
    CU_ASSERT_EQUAL(nfiles, 1);
    CU_ASSERT_STRING_EQUAL(files[0], path);
    const mpce_setting_info *set_again;
    size_t nset_again;
    CU_ASSERT_FATAL(mpce_config_info(e, &files, &nfiles, &set_again, &nset_again) == MPCE_OK);
    CU_ASSERT_PTR_EQUAL(set_again, set); /* made once, not once per call */
    CU_ASSERT_EQUAL(nset_again, nset);
    char want[4200];
    int seen = 0;
    for (size_t i = 0; i < nset; i++) {
        if (strcmp(set[i].key, "threads") == 0) {
            snprintf(want, sizeof(want), "%s:3", path);
            CU_ASSERT_STRING_EQUAL(set[i].value, "2");
            CU_ASSERT_STRING_EQUAL(set[i].source, want);
            seen |= 1;
        } else if (strcmp(set[i].section, "pins") == 0 && strcmp(set[i].key, "lpn") == 0) {
            snprintf(want, sizeof(want), "%s:5", path);
            CU_ASSERT_STRING_EQUAL(set[i].source, want);
            seen |= 2;
        } else if (strcmp(set[i].key, "strict") == 0) {
            CU_ASSERT_STRING_EQUAL(set[i].value, "no");
            CU_ASSERT_STRING_EQUAL(set[i].source, "default");
            seen |= 4;
        }
    }
    CU_ASSERT_EQUAL(seen, 7);
    mpce_engine_free(e);
    drop(path);
}

static void test_force_env(void)
{
    mpce_engine *e = NULL;
    mpce_options opts = {.struct_size = sizeof(opts),
                         .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_SYSTEM_CONFIG |
                                  MPCE_OPT_NO_PLUGINS};
    setenv("MPCENGINE_FORCE", "prg=prg-soft-bitslice", 1);
    mpce_status st = mpce_engine_new(&opts, &e);
    if (geteuid() == 0) {
        /* Root ignores environment overrides. */
        CU_ASSERT_EQUAL(st, MPCE_OK);
        if (e)
            CU_ASSERT_STRING_EQUAL(tu_auto(e, "prg.ecb", NULL), "prg-soft-bitslice");
    } else {
        CU_ASSERT_EQUAL(st, MPCE_ERR_CONFIG);
        CU_ASSERT(tu_error_mentions("MPCENGINE_FORCE"));
        CU_ASSERT(tu_error_mentions("KEY:IMPLEMENTATION"));
    }
    mpce_engine_free(e);
    e = NULL;
    setenv("MPCENGINE_FORCE", "prg:prg-soft-ttable", 1);
    st = mpce_engine_new(&opts, &e);
    CU_ASSERT_EQUAL(st, MPCE_OK);
    if (e && geteuid() != 0)
        TU_ASSERT_ERROR(tu_ecb_fips_c1(e, NULL), MPCE_ERR_NOIMPL, "MPCENGINE_FORCE");
    else if (e)
        CU_ASSERT_EQUAL(tu_ecb_fips_c1(e, NULL), MPCE_OK);
    mpce_engine_free(e);
    /* MPCE_OPT_NO_ENV ignores it for everyone. */
    setenv("MPCENGINE_FORCE", "garbage", 1);
    opts.flags |= MPCE_OPT_NO_ENV;
    e = NULL;
    CU_ASSERT_EQUAL(mpce_engine_new(&opts, &e), MPCE_OK);
    mpce_engine_free(e);
    unsetenv("MPCENGINE_FORCE");
}

/* MPCENGINE_FORCE names knob values as [pins] does (KEY:IMPL:KNOB=VALUE);
 * as an unprivileged user, since root ignores the environment. No CUnit in
 * the child: 0 or the number of the check that failed. */
static int force_knobs_unprivileged(void *arg)
{
    (void)arg;
    mpce_options opts = {.struct_size = sizeof(opts),
                         .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_SYSTEM_CONFIG |
                                  MPCE_OPT_NO_PLUGINS};
    mpce_engine *e = NULL;
    setenv("MPCENGINE_FORCE", "prg:prg-soft-bitslice,lpn.fold:lpn-soft:chunk=64:prefetch=0", 1);
    if (mpce_engine_new(&opts, &e) != MPCE_OK)
        return 1;
    const mpce_route_info *rows;
    size_t n, seen = 0;
    if (mpce_routes(e, &rows, &n) != MPCE_OK)
        return 2;
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].op, "lpn.fold") == 0) {
            if (strcmp(rows[i].impl, "lpn-soft") != 0 ||
                strcmp(rows[i].knobs, "chunk=64:prefetch=0") != 0)
                return 3;
            seen++;
        }
    mpce_engine_free(e);
    if (seen == 0)
        return 4;
    setenv("MPCENGINE_FORCE", "lpn.fold:lpn-soft:chunk", 1);
    e = NULL;
    if (mpce_engine_new(&opts, &e) != MPCE_ERR_CONFIG || !tu_error_mentions("lpn:lpn-soft:chunk=64"))
        return 5;
    unsetenv("MPCENGINE_FORCE");
    return 0;
}

static void test_force_env_knobs(void)
{
    CU_ASSERT_EQUAL(tu_unprivileged(force_knobs_unprivileged, NULL), 0);
}

static void test_relative_plugin_path(void)
{
    mpce_engine *e;
    char *path;
    TU_ASSERT_ERROR(engine_from("[engine]\nplugin_path = lib/plugins\n", quiet_flags, &e, &path),
                    MPCE_ERR_CONFIG, ":2: [engine] plugin_path = lib/plugins");
    CU_ASSERT(tu_error_mentions("relative"));
    expect_mentions_path(path);
    drop(path);
    TU_ASSERT_ERROR(engine_from("[engine]\nplugin_path = /a::/b\n", quiet_flags, &e, NULL),
                    MPCE_ERR_CONFIG, "empty");
}

static void test_relative_plugin_path_option(void)
{
    mpce_options opts = {.struct_size = sizeof(opts), .plugin_path = "plugins",
                         .flags = quiet_flags};
    mpce_engine *e = NULL;
    TU_ASSERT_ERROR(mpce_engine_new(&opts, &e), MPCE_ERR_CONFIG, "plugin_path");
}

static void test_missing_explicit_file(void)
{
    mpce_options opts = {.struct_size = sizeof(opts),
                         .config_path = "/nonexistent/mpcengine/engine.conf",
                         .flags = quiet_flags};
    mpce_engine *e = NULL;
    TU_ASSERT_ERROR(mpce_engine_new(&opts, &e), MPCE_ERR_CONFIG,
                    "/nonexistent/mpcengine/engine.conf");
    CU_ASSERT_PTR_NULL(e);
    /* A directory or a device is named as such, not as "invalid argument". */
    opts.config_path = "/tmp";
    TU_ASSERT_ERROR(mpce_engine_new(&opts, &e), MPCE_ERR_CONFIG, "is a directory");
    opts.config_path = "/dev/null";
    TU_ASSERT_ERROR(mpce_engine_new(&opts, &e), MPCE_ERR_CONFIG, "not a regular file");
    CU_ASSERT_PTR_NULL(e);
}

/* As an unprivileged user: the FIFO at arg is refused naming where it came
 * from, and the regular file beside it (conf.ini, threads = 3) is read. */
static int unprivileged_files(void *arg)
{
    const char *fifo = arg;
    mpce_options opts = {.struct_size = sizeof(opts), .config_path = fifo,
                         .flags = quiet_flags};
    mpce_engine *e = NULL;
    if (mpce_engine_new(&opts, &e) != MPCE_ERR_CONFIG ||
        !strstr(mpce_last_error(), "not a regular file") ||
        !strstr(mpce_last_error(), "mpce_options.config_path")) {
        printf("\n  unprivileged FIFO: %s", e ? "accepted" : mpce_last_error());
        return 1;
    }
    char conf[4096];
    snprintf(conf, sizeof(conf), "%.*s/conf.ini", (int)(strrchr(fifo, '/') - fifo), fifo);
    opts.config_path = conf;
    if (mpce_engine_new(&opts, &e) != MPCE_OK) {
        printf("\n  unprivileged read: %s", mpce_last_error());
        return 1;
    }
    const char *const *files;
    const mpce_setting_info *set;
    size_t nfiles, nset;
    int threads = 0;
    if (mpce_config_info(e, &files, &nfiles, &set, &nset) == MPCE_OK)
        for (size_t i = 0; i < nset; i++)
            threads |= strcmp(set[i].key, "threads") == 0 && strcmp(set[i].value, "3") == 0;
    mpce_engine_free(e);
    if (!threads)
        printf("\n  unprivileged read: threads = 3 not applied");
    return threads ? 0 : 1;
}

/* A FIFO named as the configuration is refused at once: nothing waits for
 * a writer that never comes, for root (the trust check) or anyone else. */
static void test_fifo_config(void)
{
    char *dir = tu_temp_dir();
    char fifo[4096], conf[4096];
    snprintf(fifo, sizeof(fifo), "%s/engine.conf", dir);
    snprintf(conf, sizeof(conf), "%s/conf.ini", dir);
    CU_ASSERT_FATAL(mkfifo(fifo, 0666) == 0);
    CU_ASSERT_FATAL(chmod(fifo, 0666) == 0); /* past the umask */
    tu_write_text(conf, "[engine]\nthreads = 3\n", 0644);
    CU_ASSERT_FATAL(chmod(dir, 0755) == 0);
    mpce_options opts = {.struct_size = sizeof(opts), .config_path = fifo,
                         .flags = quiet_flags};
    mpce_engine *e = NULL;
    TU_ASSERT_ERROR(mpce_engine_new(&opts, &e), MPCE_ERR_CONFIG, "not a regular file");
    CU_ASSERT(tu_error_mentions("mpce_options.config_path"));
    CU_ASSERT(!tu_error_mentions("refused")); /* a FIFO is no question of trust */
    CU_ASSERT_PTR_NULL(e);
    CU_ASSERT_EQUAL(tu_unprivileged(unprivileged_files, fifo), 0);
    tu_remove_dir(dir);
}

/* A setuid-root program (real uid nobody, effective uid root) reads a
 * configuration only root can read: the checked descriptor is reached as
 * the effective user, as fopen would. */
static void test_setuid_reads_root_only_file(void)
{
    if (geteuid() != 0) {
        printf("\n  skipped: needs root to act as a setuid-root program");
        return;
    }
    char *dir = tu_temp_dir();
    char conf[4096];
    snprintf(conf, sizeof(conf), "%s/engine.conf", dir);
    tu_write_text(conf, "[engine]\nthreads = 3\n", 0600);
    fflush(stdout);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        if (setresuid(65534, 0, 0) != 0)
            _exit(2);
        mpce_options opts = {.struct_size = sizeof(opts), .config_path = conf,
                             .flags = quiet_flags};
        mpce_engine *e = NULL;
        mpce_status st = mpce_engine_new(&opts, &e);
        if (st != MPCE_OK)
            printf("\n  setuid child: %s", mpce_last_error());
        fflush(stdout);
        _exit(st == MPCE_OK ? 0 : 1);
    }
    int status = 0;
    CU_ASSERT_FATAL(waitpid(pid, &status, 0) == pid);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    tu_remove_dir(dir);
}

/* A drop-in directory: its files in name order; a directory, FIFO or
 * dangling link whose name ends in .conf is skipped with a warning, the rest
 * still applies. */
static void test_dropin_dir(void)
{
    char *dir = tu_temp_dir();
    char path[4096];
    snprintf(path, sizeof(path), "%s/10-threads.conf", dir);
    tu_write_text(path, "[engine]\nthreads = 3\n", 0644);
    snprintf(path, sizeof(path), "%s/20-fifo.conf", dir);
    CU_ASSERT_FATAL(mkfifo(path, 0600) == 0);
    snprintf(path, sizeof(path), "%s/30-dir.conf", dir);
    CU_ASSERT_FATAL(mkdir(path, 0700) == 0);
    snprintf(path, sizeof(path), "%s/35-dangling.conf", dir);
    CU_ASSERT_FATAL(symlink("/nonexistent/mpcengine.conf", path) == 0);
    snprintf(path, sizeof(path), "%s/40-threads.conf", dir);
    tu_write_text(path, "[engine]\nthreads = 5\n", 0644);

    struct log_capture log = {{0}, 0, 0};
    struct mpce_logger logger = {capture_log, &log, MPCE_LOG_DEBUG};
    struct mpce_config cfg;
    CU_ASSERT_FATAL(mpce_config_init(&cfg) == MPCE_OK);
    cfg.log = &logger;
    CU_ASSERT_EQUAL(mpce_config_read_dir(&cfg, dir), MPCE_OK);
    CU_ASSERT_EQUAL(cfg.threads, 5); /* the later file wins */
    CU_ASSERT_EQUAL(cfg.n_files, 2);
    CU_ASSERT_EQUAL(log.warnings, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, "20-fifo.conf: skipped: not a regular file"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, "30-dir.conf: skipped: not a regular file"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log.text, "35-dangling.conf: skipped: a symbolic link"));
    mpce_config_free(&cfg);
    snprintf(path, sizeof(path), "%s/30-dir.conf", dir);
    rmdir(path);
    tu_remove_dir(dir);
}

static void test_bad_options(void)
{
    mpce_options opts = {.struct_size = 0};
    mpce_engine *e = NULL;
    TU_ASSERT_ERROR(mpce_engine_new(&opts, &e), MPCE_ERR_ARG, "struct_size");
}

/* strict = yes: a module that cannot be loaded stops engine creation. */
static void test_strict_broken_module(void)
{
    char dir[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/mpce-config-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    char so[4200];
    snprintf(so, sizeof(so), "%s/junk.so", dir);
    tu_write_text(so, "not an ELF file\n", 0644);
    char *strict = tu_write_temp("[engine]\nstrict = yes\n");
    mpce_options opts = {.struct_size = sizeof(opts), .config_path = strict, .plugin_path = dir,
                         .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV |
                                  MPCE_OPT_NO_SYSTEM_CONFIG};
    mpce_engine *e = NULL;
    TU_ASSERT_ERROR(mpce_engine_new(&opts, &e), MPCE_ERR_PLUGIN, "junk.so");
    CU_ASSERT(tu_error_mentions("strict"));
    /* Without strict the module is listed as skipped and the engine works. */
    opts.config_path = NULL;
    CU_ASSERT_EQUAL_FATAL(mpce_engine_new(&opts, &e), MPCE_OK);
    const mpce_impl_info *rows;
    size_t n, found = 0;
    CU_ASSERT_FATAL(mpce_list(e, 0, &rows, &n) == MPCE_OK);
    for (size_t i = 0; i < n; i++)
        if (strstr(rows[i].path, "junk.so") && strcmp(rows[i].selftest, "skipped") == 0 &&
            strstr(rows[i].reason, "dlopen"))
            found++;
    CU_ASSERT_EQUAL(found, 1);
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(e, NULL), MPCE_OK);
    mpce_engine_free(e);
    unlink(so);
    rmdir(dir);
    drop(strict);
}

/* ---- layering and policy ---------------------------------------------------- */

static void test_layering(void)
{
    char *first = tu_write_temp("[engine]\nallow_variable_time = yes\nstrict = yes\n"
                                "[pins]\nprg = prg-soft-ttable\nntt = ntt-soft\n");
    char *second = tu_write_temp("[engine]\nallow_variable_time = no\n[pins]\nprg = auto\n");
    struct mpce_config cfg;
    CU_ASSERT_FATAL(mpce_config_init(&cfg) == MPCE_OK);
    CU_ASSERT_EQUAL(mpce_config_read_file(&cfg, first, 1, "test"), MPCE_OK);
    CU_ASSERT_EQUAL(cfg.allow_variable_time, 1);
    CU_ASSERT_EQUAL(mpce_config_read_file(&cfg, second, 1, "test"), MPCE_OK);
    /* Key by key: the later file wins where it speaks, the earlier elsewhere. */
    CU_ASSERT_EQUAL(cfg.allow_variable_time, 0);
    CU_ASSERT_EQUAL(cfg.strict, 1);
    CU_ASSERT_PTR_NULL(mpce_config_pin(&cfg, "prg.ecb", 0));
    CU_ASSERT_PTR_NOT_NULL_FATAL(mpce_config_pin(&cfg, "ntt.forward", 3));
    CU_ASSERT_STRING_EQUAL(mpce_config_pin(&cfg, "ntt.forward", 3)->name, "ntt-soft");
    CU_ASSERT_EQUAL(cfg.n_files, 2);
    /* A missing default layer is fine, a missing named one is not. */
    CU_ASSERT_EQUAL(mpce_config_read_file(&cfg, "/nonexistent/a.conf", 0, NULL), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_config_read_file(&cfg, "/nonexistent/a.conf", 1, "test"),
                    MPCE_ERR_CONFIG);
    mpce_config_free(&cfg);
    drop(first);
    drop(second);
}

static void test_user_config(void)
{
    char dir[4096], sub[4200], file[4300];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/mpce-xdg-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    snprintf(sub, sizeof(sub), "%s/mpcengine", dir);
    CU_ASSERT_FATAL(mkdir(sub, 0700) == 0);
    snprintf(file, sizeof(file), "%s/engine.conf", sub);
    FILE *fp = fopen(file, "w");
    CU_ASSERT_FATAL(fp != NULL);
    fputs("[engine]\nallow_variable_time = yes\n", fp);
    fclose(fp);
    const char *old = getenv("XDG_CONFIG_HOME");
    char *saved = old ? strdup(old) : NULL;
    setenv("XDG_CONFIG_HOME", dir, 1);

    unsigned flags = MPCE_OPT_NO_ENV | MPCE_OPT_NO_SYSTEM_CONFIG | MPCE_OPT_NO_PLUGINS;
    mpce_engine *e;
    CU_ASSERT_EQUAL_FATAL(engine_from("[engine]\n", flags, &e, NULL), MPCE_OK);
    /* Root never reads the user's file. */
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(e, "prg-soft-ttable"), geteuid() == 0 ? MPCE_ERR_NOIMPL : MPCE_OK);
    mpce_engine_free(e);
    /* user_config = no in the administrator's layer shuts it out for everyone. */
    CU_ASSERT_EQUAL_FATAL(engine_from("[engine]\nuser_config = no\n", flags, &e, NULL), MPCE_OK);
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(e, "prg-soft-ttable"), MPCE_ERR_NOIMPL);
    mpce_engine_free(e);

    if (saved) {
        setenv("XDG_CONFIG_HOME", saved, 1);
        free(saved);
    } else {
        unsetenv("XDG_CONFIG_HOME");
    }
    unlink(file);
    rmdir(sub);
    rmdir(dir);
}

static void test_allow_variable_time(void)
{
    mpce_engine *strict_ct = tu_engine(0), *relaxed = tu_engine(1);
    TU_ASSERT_ERROR(tu_ecb_fips_c1(strict_ct, "prg-soft-ttable"), MPCE_ERR_NOIMPL,
                    "allow_variable_time = yes");
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(relaxed, "prg-soft-ttable"), MPCE_OK);
    /* Still never chosen by "auto" over the constant-time default. */
    const char *chosen = tu_auto(relaxed, "prg.ecb", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(chosen);
    CU_ASSERT_STRING_NOT_EQUAL(chosen, "prg-soft-ttable");
    CU_ASSERT(tu_impl_flags(relaxed, chosen) & MPCE_IMPL_CONSTANT_TIME);
    const mpce_impl_info *rows;
    size_t n;
    CU_ASSERT_FATAL(mpce_list(strict_ct, 1, &rows, &n) == MPCE_OK);
    int seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].impl, "prg-soft-ttable") == 0) {
            seen = 1;
            CU_ASSERT(rows[i].flags & MPCE_IMPL_VARIABLE_TIME);
            CU_ASSERT_PTR_NOT_NULL(strstr(rows[i].reason, "variable-time"));
        }
    }
    CU_ASSERT(seen);
}

static void test_global_init(void)
{
    /* The global engine: idempotent, and mpce_init_with with other options
     * is refused once it exists. */
    mpce_options opts = {.struct_size = sizeof(opts), .flags = quiet_flags};
    CU_ASSERT_EQUAL_FATAL(mpce_init_with(&opts), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_init_with(&opts), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_init(), MPCE_OK);
    mpce_options other = {.struct_size = sizeof(other), .flags = MPCE_OPT_NO_PLUGINS};
    TU_ASSERT_ERROR(mpce_init_with(&other), MPCE_ERR_STATE, "mpce_engine_new");
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(NULL, NULL), MPCE_OK);
    mpce_shutdown();
    mpce_options bad = {.struct_size = sizeof(bad), .config_path = "/nonexistent/x.conf",
                        .flags = quiet_flags};
    CU_ASSERT_EQUAL(mpce_init_with(&bad), MPCE_ERR_CONFIG);
    /* Later calls return the first status and its detail. */
    TU_ASSERT_ERROR(mpce_init(), MPCE_ERR_CONFIG, "/nonexistent/x.conf");
    const mpce_impl_info *rows;
    size_t n;
    CU_ASSERT_EQUAL(mpce_list(NULL, 0, &rows, &n), MPCE_ERR_CONFIG);
    /* Contexts on the failed global engine report that status too, not a
     * generic one, and leave their outputs alone. */
    static const uint8_t key[16];
    static const uint64_t q = 17; /* 1 mod 16: N = 8 */
    mpce_prg *prg = NULL;
    mpce_ntt *ntt = NULL;
    mpce_lpn *lpn = NULL;
    mpce_dpf *dpf = NULL;
    TU_ASSERT_ERROR(mpce_prg_new(NULL, key, 1, &prg), MPCE_ERR_CONFIG, "/nonexistent/x.conf");
    TU_ASSERT_ERROR(mpce_ntt_new(NULL, 8, &q, 1, &ntt), MPCE_ERR_CONFIG, "/nonexistent/x.conf");
    TU_ASSERT_ERROR(mpce_lpn_new(NULL, key, 4, &lpn), MPCE_ERR_CONFIG, "/nonexistent/x.conf");
    TU_ASSERT_ERROR(mpce_dpf_new(NULL, 8, MPCE_DPF_BYTES, NULL, NULL, &dpf), MPCE_ERR_CONFIG,
                    "/nonexistent/x.conf");
    CU_ASSERT(!prg && !ntt && !lpn && !dpf);
    mpce_shutdown();
}

static void test_selftest_unknown_counts(void)
{
    /* An unusable name is an error like any other: the counts stay as they
     * were (common.h), unlike a self-test failure, which reports them. */
    size_t passed = 7, failed = 7;
    TU_ASSERT_ERROR(mpce_selftest(tu_engine(1), "prg-no-such-impl", &passed, &failed),
                    MPCE_ERR_NOIMPL, "prg-no-such-impl");
    CU_ASSERT_EQUAL(passed, 7);
    CU_ASSERT_EQUAL(failed, 7);
    CU_ASSERT_EQUAL(mpce_selftest(tu_engine(1), "prg-soft-bitslice", &passed, &failed), MPCE_OK);
    CU_ASSERT_EQUAL(passed, 1);
    CU_ASSERT_EQUAL(failed, 0);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"syntax error names file and line", test_syntax_error},
        {"bad boolean", test_bad_boolean},
        {"unknown keys: warnings to the log callback, none to stderr", test_unknown_key_warns},
        {"a section named with ':' is an unknown section", test_section_with_colon},
        {"a comment ending in '\\' that swallows a line warns", test_comment_swallows_line},
        {"a NUL byte in a configuration file is refused", test_nul_byte},
        {"a key set twice in a section: a warning with both lines", test_duplicate_key_warns},
        {"pin of an unknown implementation", test_pin_unknown_impl},
        {"pin of another primitive's implementation", test_pin_wrong_primitive},
        {"pin of an unknown primitive", test_pin_unknown_primitive},
        {"explicit pin", test_pin_explicit},
        {"the shipped engine.conf documents every default and sets none", test_shipped_conf},
        {"a plugins.d snippet under the shipped engine.conf", test_snippet_under_shipped_conf},
        {"line numbers from the file index", test_line_numbers},
        {"pins per operation and size class", test_pin_classes},
        {"effective settings and their sources", test_config_info},
        {"the built-in soft plugin cannot be disabled", test_soft_cannot_be_disabled},
        {"MPCENGINE_FORCE", test_force_env},
        {"MPCENGINE_FORCE with knob values", test_force_env_knobs},
        {"relative plugin_path", test_relative_plugin_path},
        {"relative plugin_path option", test_relative_plugin_path_option},
        {"missing explicit config file", test_missing_explicit_file},
        {"a FIFO as the configuration file", test_fifo_config},
        {"a setuid-root program reads a root-only file", test_setuid_reads_root_only_file},
        {"drop-in directory: files only", test_dropin_dir},
        {"bad options", test_bad_options},
        {"strict with a broken module", test_strict_broken_module},
        {"layering", test_layering},
        {"user configuration", test_user_config},
        {"allow_variable_time", test_allow_variable_time},
        {"global engine", test_global_init},
        {"selftest of an unknown implementation", test_selftest_unknown_counts},
        {NULL, NULL},
    };
    return tu_main("config", tests);
}
