/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Modules that cannot take the host down: each misbehaving module
 * (tests/modules/mod_bad.c) sits in a plugin directory beside a good one
 * ("okay"). The engine vets both in the probe helper before loading either;
 * the bad one fails with the step and the fault named, is never loaded, and
 * this process, the good module and the engine carry on. Verdicts are cached
 * in a per-suite state directory ([tune] dir), reused, and dropped when the
 * file changes.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/selector/selector.h"
#include "tests/testutil.h"

static char *state_dir; /* the suite's [tune] dir: its verdict cache */

struct logbuf {
    char text[1 << 16];
    size_t used;
    unsigned warnings;
};

static void log_to(void *arg, mpce_log_level level, const char *plugin, const char *message)
{
    struct logbuf *l = arg;
    l->warnings += level == MPCE_LOG_WARNING;
    int n = snprintf(l->text + l->used, sizeof(l->text) - l->used, "%s%s%s\n",
                     plugin ? plugin : "", plugin ? ": " : "", message);
    if (n > 0)
        l->used += (size_t)n < sizeof(l->text) - l->used ? (size_t)n
                                                         : sizeof(l->text) - l->used - 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The vet timeout of engines that vet a module that hangs: short, so the
 * suite is quick; every other engine has a long one, so that a good
 * module is never timed out on a loaded machine or under a sanitizer. */
#define HANG_TIMEOUT "0.5"

/* An engine over plugin directory dir, vetting with helper (NULL: the
 * built one) into the suite's state directory with vet_timeout seconds;
 * extra goes at the end of [tune]. */
static mpce_status engine_with(const char *dir, const char *helper, const char *timeout,
                               const char *extra, struct logbuf *log, mpce_engine **out)
{
    char text[4096];
    char helper_line[4200] = "";
    if (!helper || helper[0]) /* "": none named, the installed one */
        snprintf(helper_line, sizeof(helper_line), "helper = %s\n", helper ? helper : PROBE_BIN);
    snprintf(text, sizeof(text),
             "[engine]\nuser_config = no\n[tune]\nmode = off\ndir = %s\n%s"
             "vet_timeout = %s\n%s",
             state_dir, helper_line, timeout, extra ? extra : "");
    char *conf = tu_write_temp(text);
    if (log)
        log->used = 0, log->text[0] = '\0', log->warnings = 0;
    mpce_options opts = {
        .struct_size = sizeof(opts),
        .config_path = conf,
        .plugin_path = dir,
        .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV | MPCE_OPT_NO_SYSTEM_CONFIG,
        .log = log ? log_to : NULL,
        .log_arg = log,
        .log_level = MPCE_LOG_DEBUG,
    };
    mpce_status st = mpce_engine_new(&opts, out);
    unlink(conf);
    free(conf);
    return st;
}

static mpce_status engine_in(const char *dir, const char *extra, struct logbuf *log,
                             mpce_engine **out)
{
    return engine_with(dir, NULL, "30", extra, log, out);
}

/* dir/name as a copy of BAD_DIR/bad_<which>.so, put in place by rename. */
static void place(const char *dir, const char *name, const char *which)
{
    char src[4096], tmp[4096], dst[4096];
    snprintf(src, sizeof(src), "%s/bad_%s.so", BAD_DIR, which);
    char *copy = tu_copy_into(src, dir, 0755);
    snprintf(tmp, sizeof(tmp), "%s", copy);
    snprintf(dst, sizeof(dst), "%s/%s", dir, name);
    if (strcmp(tmp, dst) != 0 && rename(tmp, dst) != 0) {
        fprintf(stderr, "rename %s %s: %s\n", tmp, dst, strerror(errno));
        abort();
    }
    free(copy);
}

/* The listing row of the module file dir/name, or NULL. */
static const mpce_impl_info *row_of(mpce_engine *e, const char *dir, const char *name,
                                    const char *impl)
{
    const mpce_impl_info *rows;
    size_t n;
    if (mpce_list(e, 0, &rows, &n) != MPCE_OK)
        return NULL;
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].path, path) == 0 && strcmp(rows[i].impl, impl) == 0)
            return &rows[i];
    return NULL;
}

/* A real call through prg-okay gives what the built-in soft backend gives. */
static int prg_agrees(mpce_engine *e)
{
    uint8_t key[16], in[64], a[64], b[64];
    for (size_t i = 0; i < sizeof(key); i++)
        key[i] = (uint8_t)(i * 7 + 1);
    for (size_t i = 0; i < sizeof(in); i++)
        in[i] = (uint8_t)(i * 13 + 5);
    mpce_prg *ctx;
    if (mpce_prg_new(e, key, 1, &ctx) != MPCE_OK)
        return 0;
    int ok = mpce_prg_ecb(ctx, "prg-okay", 0, in, a, 4) == MPCE_OK &&
             mpce_prg_ecb(ctx, "prg-soft-bitslice", 0, in, b, 4) == MPCE_OK && memcmp(a, b, 64) == 0;
    mpce_prg_free(ctx);
    return ok;
}

/* The good module beside the bad one works: passed (from the vet), usable. */
static void check_okay(mpce_engine *e)
{
    struct mpce_slot *s = mpce_registry_find(e, "prg-okay");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(mpce_slot_state(s), MPCE_ST_PASS); /* the vet's verdict, no test here */
    CU_ASSERT_EQUAL(mpce_registry_usable(e, s, ""), MPCE_OK);
    size_t passed = 0, failed = 0;
    CU_ASSERT_EQUAL(mpce_selftest(e, "prg-okay", &passed, &failed), MPCE_OK);
    CU_ASSERT_EQUAL(passed, 1);
    CU_ASSERT(prg_agrees(e));
}

/* No helper is left behind: every child was reaped, none is still running. */
static void check_no_children(void)
{
    errno = 0;
    CU_ASSERT_EQUAL(waitpid(-1, NULL, WNOHANG), -1);
    CU_ASSERT_EQUAL(errno, ECHILD);
}

static size_t verdict_files(struct timespec *newest);

/* This process's open descriptors: a vet that crashed or hung must leave
 * the host none of its pipes. -1 where /proc/self/fd cannot be read. */
static long open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    long n = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;)
        n += de->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

struct bad_case {
    const char *which;  /* bad_<which>.so */
    const char *fault;  /* in the reason */
    const char *where;  /* ... and the step */
};

static const struct bad_case cases[] = {
    {"ctor_segv", "killed by SIGSEGV", "while being loaded"},
    {"ctor_abort", "aborted (SIGABRT)", "while being loaded"},
    {"ctor_exit", "called exit(3)", "while being loaded"},
    {"ctor_hang", "timed out after 0.5 s", "while being loaded"},
    {"ctor_leakfd", "left 2 file descriptors open", "after it was loaded"},
    {"dtor_segv", "killed by SIGSEGV", "while being unloaded"},
    {"dtor_abort", "aborted (SIGABRT)", "while being unloaded"},
    {"dtor_exit", "called exit(3)", "while being unloaded"},
    {"entry_segv", "killed by SIGSEGV", "in its entry point"},
    {"entry_abort", "aborted (SIGABRT)", "in its entry point"},
    {"entry_exit", "called exit(3)", "in its entry point"},
    {"entry_hang", "timed out after 0.5 s", "in its entry point"},
    {"entry_leakfd", "left 2 file descriptors open", "after its entry point"},
    {"probe_segv", "killed by SIGSEGV", "in its probe"},
    {"probe_abort", "aborted (SIGABRT)", "in its probe"},
    {"probe_exit", "called exit(3)", "in its probe"},
    {"probe_hang", "timed out after 0.5 s", "in its probe"},
    {"probe_leakfd", "left 2 file descriptors open", "after its probe"},
    {"init_segv", "killed by SIGSEGV", "in its init"},
    {"init_abort", "aborted (SIGABRT)", "in its init"},
    {"init_exit", "called exit(3)", "in its init"},
    {"init_hang", "timed out after 0.5 s", "in its init"},
    {"implprobe_segv", "killed by SIGSEGV", "in the probe of implementation prg-bad"},
    {"implprobe_exit", "called exit(3)", "in the probe of implementation prg-bad"},
    {"implprobe_abort", "aborted (SIGABRT)", "in the probe of implementation prg-bad"},
    {"implprobe_hang", "timed out after 0.5 s", "in the probe of implementation prg-bad"},
    {"dtor_hang", "timed out after 0.5 s", "while being unloaded"},
    {"selftest_segv", "killed by SIGSEGV", "in the self-test of implementation prg-bad"},
    {"selftest_abort", "aborted (SIGABRT)", "in the self-test of implementation prg-bad"},
    {"selftest_exit", "called exit(3)", "in the self-test of implementation prg-bad"},
    {"selftest_hang", "timed out after 0.5 s", "in the self-test of implementation prg-bad"},
    /* 2 per call, again on a second run: a leak, not a runtime opened once */
    {"selftest_leakfd", "file descriptors open on each of two runs",
     "self-test of implementation prg-bad (a leak on every call)"},
    {"noinit_leakfd", "file descriptors open on each of two runs",
     "self-test of implementation prg-bad (a leak on every call)"},
};

/* Descriptors kept from init on may be a device runtime's (CUDA keeps its
 * driver's open across fini): the module passes, with a warning. */
static const struct bad_case kept[] = {
    {"init_leakfd", "left 2 file descriptors open", "after its fini"},
    /* an implementation's probe runs after init, and destructors after fini */
    {"implprobe_leakfd", "left 2 file descriptors open",
     "after the probe of implementation prg-bad"},
    {"dtor_leakfd", "left 2 file descriptors open", "after its fini"},
    /* opened on the first call only: passed, the first run's count warned */
    {"selftest_openonce", "left 1 file descriptor open",
     "after the self-test of implementation prg-bad (on its first run only)"},
    /* the same without init: judged by the two runs alone */
    {"noinit_openonce", "left 1 file descriptor open",
     "after the self-test of implementation prg-bad (on its first run only)"},
};

/* Every case: the engine comes up, the bad module is listed as failed with
 * the fault and the step, none of it is selectable, the good one works,
 * and a hang costs no more than vet_timeout. */
static void test_each_fault(void)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct bad_case *c = &cases[i];
        const int hangs = strstr(c->which, "hang") != NULL;
        char *dir = tu_temp_dir();
        place(dir, "bad.so", c->which);
        /* A hang gets a short timeout, which a good module beside it must
         * not share (a loaded machine, a sanitizer): alone in its dir. */
        if (!hangs)
            place(dir, "okay.so", "none_none");
        static struct logbuf log;
        mpce_engine *e = NULL;
        struct timespec t;
        const size_t files = verdict_files(&t);
        const long fds_before = open_fds();
        double t0 = now_s();
        mpce_status st = engine_with(dir, NULL, hangs ? HANG_TIMEOUT : "30", NULL, &log, &e);
        double took = now_s() - t0;
        CU_ASSERT_EQUAL(st, MPCE_OK);
        if (st != MPCE_OK) {
            fprintf(stderr, "%s: %s\n", c->which, mpce_last_error());
            tu_remove_dir(dir);
            continue;
        }
        /* A hang costs vet_timeout, bounded with room for a slow machine
         * (or this process under valgrind). */
        if (hangs) {
            CU_ASSERT(took < 6.0);
            /* Not a property of the file: not cached, vetted again. */
            CU_ASSERT_EQUAL(verdict_files(&t), files);
        }
        const mpce_impl_info *row = row_of(e, dir, "bad.so", "");
        CU_ASSERT_PTR_NOT_NULL(row);
        if (row) {
            CU_ASSERT_STRING_EQUAL(row->selftest, "fail");
            CU_ASSERT(strstr(row->reason, "failed its vet in the probe helper") != NULL);
            CU_ASSERT(strstr(row->reason, c->fault) != NULL);
            CU_ASSERT(strstr(row->reason, c->where) != NULL);
            if (!strstr(row->reason, c->fault) || !strstr(row->reason, c->where))
                fprintf(stderr, "%s: reason: %s\n", c->which, row->reason);
        }
        /* Never loaded, so nothing of it can be chosen or pinned. */
        CU_ASSERT_PTR_NULL(mpce_registry_find(e, "prg-bad"));
        for (size_t k = 0; k < e->n_modules; k++)
            if (strstr(e->modules[k]->path, "bad.so"))
                CU_ASSERT_PTR_NULL(e->modules[k]->handle);
        if (!hangs)
            check_okay(e);
        mpce_engine_free(e);
        check_no_children();
        const long fds_after = open_fds();
        CU_ASSERT(fds_before < 0 || fds_after == fds_before);
        if (fds_before >= 0 && fds_after != fds_before)
            fprintf(stderr, "%s: the host had %ld descriptors open before, %ld after\n",
                    c->which, fds_before, fds_after);
        tu_remove_dir(dir);
    }
}

/* Descriptors kept after init: passed, loaded, the count logged as a warning. */
static void test_kept_fds(void)
{
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
        const struct bad_case *c = &kept[i];
        char *dir = tu_temp_dir();
        place(dir, "bad.so", c->which);
        static struct logbuf log;
        mpce_engine *e = NULL;
        CU_ASSERT_EQUAL_FATAL(engine_in(dir, NULL, &log, &e), MPCE_OK);
        CU_ASSERT(strstr(log.text, "passed its vet, but") != NULL);
        CU_ASSERT(strstr(log.text, c->fault) != NULL);
        CU_ASSERT(strstr(log.text, c->where) != NULL);
        if (!strstr(log.text, c->where))
            fprintf(stderr, "%s: log: %s\n", c->which, log.text);
        CU_ASSERT_PTR_NOT_NULL(mpce_registry_find(e, "prg-bad"));
        mpce_engine_free(e);
        check_no_children();
        tu_remove_dir(dir);
    }
}

/* The number of verdict files and the newest modification time among them. */
static size_t verdict_files(struct timespec *newest)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/verdicts", state_dir);
    DIR *d = opendir(path);
    size_t n = 0;
    newest->tv_sec = newest->tv_nsec = 0;
    if (!d)
        return 0;
    const struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || !strstr(de->d_name, ".txt"))
            continue;
        char file[4400];
        struct stat sb;
        snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
        if (stat(file, &sb) != 0)
            continue;
        n++;
        if (sb.st_mtim.tv_sec > newest->tv_sec ||
            (sb.st_mtim.tv_sec == newest->tv_sec && sb.st_mtim.tv_nsec > newest->tv_nsec))
            *newest = sb.st_mtim;
    }
    closedir(d);
    return n;
}

/* The second engine over the same files spawns nothing: the cached
 * verdicts are read, not rewritten, and the bad module still fails. */
static void test_cache_reused(void)
{
    char *dir = tu_temp_dir();
    place(dir, "bad.so", "probe_segv");
    place(dir, "okay.so", "none_none");
    static struct logbuf log;
    mpce_engine *e;
    struct timespec t1, t2;
    size_t before = verdict_files(&t1);
    CU_ASSERT_EQUAL_FATAL(engine_in(dir, NULL, &log, &e), MPCE_OK);
    CU_ASSERT(strstr(log.text, "vetted out of process: passed") != NULL);
    CU_ASSERT(strstr(log.text, "vetted out of process: killed by SIGSEGV") != NULL);
    mpce_engine_free(e);
    CU_ASSERT_EQUAL(verdict_files(&t1), before + 2);

    double t0 = now_s();
    CU_ASSERT_EQUAL_FATAL(engine_in(dir, NULL, &log, &e), MPCE_OK);
    double took = now_s() - t0;
    CU_ASSERT(strstr(log.text, "vetted out of process") == NULL); /* no helper ran */
    CU_ASSERT(strstr(log.text, "vet verdict from") != NULL);
    CU_ASSERT_EQUAL(verdict_files(&t2), before + 2);
    CU_ASSERT(t2.tv_sec == t1.tv_sec && t2.tv_nsec == t1.tv_nsec); /* nothing rewritten */
    const mpce_impl_info *row = row_of(e, dir, "bad.so", "");
    CU_ASSERT(row && strstr(row->reason, "killed by SIGSEGV (signal 11) in its probe") != NULL);
    check_okay(e);
    mpce_engine_free(e);
    /* Reading two small files, not vetting: far below a vet's cost. */
    CU_ASSERT(took < 5.0);

    /* Another CPU, or another engine version, may change a self-test's
     * outcome: the verdict does not carry over. */
    mpce_signature_cpu_override = "x86 GenuineIntel family 6 model 143 (a test's CPU)";
    CU_ASSERT_EQUAL_FATAL(engine_in(dir, NULL, &log, &e), MPCE_OK);
    CU_ASSERT(strstr(log.text, "vetted out of process: passed") != NULL);
    mpce_engine_free(e);
    mpce_signature_cpu_override = NULL;
    check_no_children();
    tu_remove_dir(dir);
}

/* Read by bad_hostsym's constructor: a module that only this program can
 * load, which the probe helper therefore cannot vet. */
__attribute__((visibility("default"))) int mpce_test_host_only_symbol = 1;

/* A module the helper cannot load is not known to be safe: it is never
 * loaded here, whatever dlopen would do in this process (here its
 * constructor would crash the suite), and nothing is cached. */
static void test_unloadable_in_helper(void)
{
    char *dir = tu_temp_dir();
    place(dir, "needs_host.so", "hostsym_segv");
    place(dir, "okay.so", "none_none");
    static struct logbuf log;
    mpce_engine *e;
    struct timespec t;
    size_t before = verdict_files(&t);
    CU_ASSERT_EQUAL_FATAL(engine_in(dir, NULL, &log, &e), MPCE_OK);
    const mpce_impl_info *row = row_of(e, dir, "needs_host.so", "");
    CU_ASSERT(row && strstr(row->reason, "could not be vetted: the probe helper could not load "
                                         "it (") != NULL);
    CU_ASSERT(row && strstr(row->reason, "mpce_test_host_only_symbol") != NULL);
    CU_ASSERT_EQUAL(verdict_files(&t), before + 1); /* okay.so's only */
    check_okay(e);
    mpce_engine_free(e);
    check_no_children();
    tu_remove_dir(dir);
}

/* A file in a plugin directory that is no module: an ELF without the entry
 * symbol is refused by the loader with its reason, and that refusal, a
 * property of the file, is cached (no helper at every start); bytes that
 * are no ELF at all are named, with what to do, and not loaded. */
static void test_not_a_module(void)
{
    char *dir = tu_temp_dir();
    char *copy = tu_copy_into(NOENTRY_SO, dir, 0755);
    char dst[4096];
    snprintf(dst, sizeof(dst), "%s/noentry.so", dir);
    CU_ASSERT_EQUAL_FATAL(rename(copy, dst), 0);
    free(copy);
    snprintf(dst, sizeof(dst), "%s/notes.so", dir);
    FILE *f = fopen(dst, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("these are notes, not a shared object\n", f);
    fclose(f);
    CU_ASSERT_EQUAL(chmod(dst, 0755), 0);
    place(dir, "okay.so", "none_none");
    static struct logbuf log;
    struct timespec t;
    const size_t before = verdict_files(&t);
    for (int round = 0; round < 2; round++) {
        mpce_engine *e;
        CU_ASSERT_EQUAL_FATAL(engine_in(dir, NULL, &log, &e), MPCE_OK);
        const mpce_impl_info *row = row_of(e, dir, "noentry.so", "");
        CU_ASSERT(row && strstr(row->reason, "no entry symbol") != NULL);
        row = row_of(e, dir, "notes.so", "");
        CU_ASSERT(row && strstr(row->reason, "could not be vetted") != NULL &&
                  strstr(row->reason, "not a module: remove it") != NULL);
        if (row && !strstr(row->reason, "not a module: remove it"))
            fprintf(stderr, "notes.so: %s\n", row->reason);
        /* okay.so's verdict and noentry.so's, made once, then read. */
        CU_ASSERT_EQUAL(verdict_files(&t), before + 2);
        check_okay(e);
        mpce_engine_free(e);
    }
    check_no_children();
    tu_remove_dir(dir);
}

/* Where no state directory can be written, the verdicts are kept in the
 * process's memory: its next engine spawns no helper, a failure still
 * names its fault, and the message says why it is not in a file. */
static void test_cache_in_memory(void)
{
    char *dir = tu_temp_dir();
    place(dir, "bad.so", "probe_segv");
    place(dir, "okay.so", "none_none");
    char *saved = state_dir;
    char unwritable[4200];
    snprintf(unwritable, sizeof(unwritable), "%s/okay.so/state", dir); /* under a file */
    state_dir = unwritable;
    static struct logbuf log;
    mpce_engine *e;
    CU_ASSERT_EQUAL_FATAL(engine_in(dir, NULL, &log, &e), MPCE_OK);
    CU_ASSERT(strstr(log.text, "vetted out of process: passed") != NULL);
    CU_ASSERT(strstr(log.text, "vetted out of process: killed by SIGSEGV") != NULL);
    CU_ASSERT(strstr(log.text, "they are kept in memory for this process's engines") != NULL);
    mpce_engine_free(e);

    CU_ASSERT_EQUAL_FATAL(engine_in(dir, NULL, &log, &e), MPCE_OK);
    CU_ASSERT(strstr(log.text, "vetted out of process") == NULL); /* no helper ran */
    CU_ASSERT(strstr(log.text, "vet verdict from this process's memory") != NULL);
    const mpce_impl_info *row = row_of(e, dir, "bad.so", "");
    CU_ASSERT(row && strstr(row->reason, "killed by SIGSEGV (signal 11) in its probe") != NULL);
    CU_ASSERT(row && strstr(row->reason, "remembered by this process") != NULL);
    check_okay(e);
    mpce_engine_free(e);
    state_dir = saved;
    check_no_children();
    tu_remove_dir(dir);
}

/* A module replaced by rename is another file: its cached verdict no longer
 * applies and it is vetted again. An engine that has the old file loaded
 * keeps using the old mapping meanwhile. */
static void test_replaced_module(void)
{
    char *dir = tu_temp_dir();
    place(dir, "m.so", "none_none");
    static struct logbuf log;
    mpce_engine *old;
    CU_ASSERT_EQUAL_FATAL(engine_in(dir, NULL, &log, &old), MPCE_OK);
    check_okay(old);

    /* A crashing build renamed over it, as a package manager replaces files. */
    place(dir, "m.so", "probe_segv");
    mpce_engine *e;
    CU_ASSERT_EQUAL_FATAL(engine_in(dir, NULL, &log, &e), MPCE_OK);
    CU_ASSERT(strstr(log.text, "vetted out of process: killed by SIGSEGV") != NULL);
    const mpce_impl_info *row = row_of(e, dir, "m.so", "");
    CU_ASSERT(row && strcmp(row->selftest, "fail") == 0);
    CU_ASSERT_PTR_NULL(mpce_registry_find(e, "prg-okay"));
    mpce_engine_free(e);
    /* The first engine still has the old file mapped, and it still works:
     * a real call through it. */
    check_okay(old);
    CU_ASSERT(prg_agrees(old));
    mpce_engine_free(old);

    /* And back to a good build: vetted again, loaded. */
    place(dir, "m.so", "none_none");
    CU_ASSERT_EQUAL_FATAL(engine_in(dir, NULL, &log, &e), MPCE_OK);
    CU_ASSERT(strstr(log.text, "vetted out of process: passed") != NULL);
    check_okay(e);
    mpce_engine_free(e);
    check_no_children();
    tu_remove_dir(dir);
}

/* strict = yes: a module that failed its vet fails the engine, with why. */
static void test_strict(void)
{
    char *dir = tu_temp_dir();
    place(dir, "bad.so", "init_abort");
    static struct logbuf log;
    mpce_engine *e = NULL;
    char text[4096];
    snprintf(text, sizeof(text), "[engine]\nuser_config = no\nstrict = yes\n[tune]\nmode = off\n"
             "dir = %s\nhelper = %s\n", state_dir, PROBE_BIN);
    char *conf = tu_write_temp(text);
    mpce_options opts = {
        .struct_size = sizeof(opts),
        .config_path = conf,
        .plugin_path = dir,
        .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV | MPCE_OPT_NO_SYSTEM_CONFIG,
        .log = log_to,
        .log_arg = &log,
    };
    CU_ASSERT_EQUAL(mpce_engine_new(&opts, &e), MPCE_ERR_PLUGIN);
    CU_ASSERT(strstr(mpce_last_error(), "aborted (SIGABRT) in its init") != NULL);
    unlink(conf);
    free(conf);
    check_no_children();
    tu_remove_dir(dir);
}

/* `mpcengine list` over dir with [tune] helper = helper exits 0: a module
 * that faults there is never run in the command's process. */
static void check_command_lives(const char *dir, const char *helper)
{
    char text[8400], cmd[8192];
    snprintf(text, sizeof(text), "[engine]\nuser_config = no\nplugin_path = %s\n[tune]\n"
             "mode = off\ndir = %s\nhelper = %s\n", dir, state_dir, helper);
    char *conf = tu_write_temp(text);
    snprintf(cmd, sizeof(cmd), "%s list --config %s >/dev/null 2>&1", MPCENGINE_BIN, conf);
    int status = system(cmd);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    unlink(conf);
    free(conf);
}

/* Without a helper installed (tu_main makes the installed one a path that
 * does not exist), isolation is off: said once, modules load in process as
 * before. */
static void test_no_helper(void)
{
    char *dir = tu_temp_dir();
    place(dir, "okay.so", "none_none");
    static struct logbuf log;
    mpce_engine *e;
    CU_ASSERT_EQUAL_FATAL(engine_with(dir, "", "30", NULL, &log, &e), MPCE_OK);
    /* Said for each module, whichever engine of the process said it first. */
    CU_ASSERT(strstr(log.text, "okay.so: not vetted out of process: module isolation is off") !=
              NULL);
    struct mpce_slot *s = mpce_registry_find(e, "prg-okay");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(mpce_slot_state(s), MPCE_ST_UNTESTED); /* tested here, when used */
    CU_ASSERT_EQUAL(mpce_registry_usable(e, s, ""), MPCE_OK);
    mpce_engine_free(e);
    tu_remove_dir(dir);
}

/* A helper named in [tune] helper that is not there: whoever named it asked
 * for isolation, so every module fails closed, as with a helper that gives
 * no verdict, with a warning that names the setting; a module that crashes
 * in its probe never runs in the host (it used to: isolation was off, and
 * `mpcengine list` died of the module's SIGSEGV). */
static void test_named_helper_missing(void)
{
    char *dir = tu_temp_dir();
    place(dir, "okay.so", "none_none");
    place(dir, "bad.so", "probe_segv");
    char missing[4200];
    snprintf(missing, sizeof(missing), "%s/no-such-probe", dir);
    static struct logbuf log;
    mpce_engine *e;
    CU_ASSERT_EQUAL_FATAL(engine_with(dir, missing, "30", NULL, &log, &e), MPCE_OK);
    CU_ASSERT(strstr(log.text, "no-such-probe: No such file or directory, named in [tune] "
                     "helper: every module is skipped as not vetted; fix that path") != NULL);
    CU_ASSERT(log.warnings >= 1);
    CU_ASSERT(strstr(log.text, "module isolation is off") == NULL);
    CU_ASSERT_PTR_NULL(mpce_registry_find(e, "prg-okay"));
    CU_ASSERT_PTR_NULL(mpce_registry_find(e, "prg-bad"));
    const mpce_impl_info *row = row_of(e, dir, "okay.so", "");
    CU_ASSERT(row && strcmp(row->selftest, "fail") == 0);
    CU_ASSERT(row && strstr(row->reason, "could not be vetted: ") != NULL);
    CU_ASSERT(row && strstr(row->reason, "fix [tune] helper or set [tune] vet = no") != NULL);
    mpce_engine_free(e);
    check_command_lives(dir, missing);
    check_no_children();
    tu_remove_dir(dir);
}

/* A helper that gives no verdict (here one that says nothing at all) fails
 * every module closed: none is loaded unvetted, nothing is cached, and
 * strict = yes makes it an error. */
static void test_unvetted_fails_closed(void)
{
    char *dir = tu_temp_dir();
    place(dir, "bad.so", "probe_segv");
    static struct logbuf log;
    mpce_engine *e = NULL;
    struct timespec t;
    const size_t files = verdict_files(&t);
    CU_ASSERT_EQUAL_FATAL(engine_with(dir, "/bin/true", "30", NULL, &log, &e), MPCE_OK);
    const mpce_impl_info *row = row_of(e, dir, "bad.so", "");
    CU_ASSERT(row && strcmp(row->selftest, "fail") == 0);
    CU_ASSERT(row && strstr(row->reason, "could not be vetted: /bin/true vet: it exited with "
                                         "status 0 having said nothing") != NULL);
    CU_ASSERT(row && strstr(row->reason, "set [tune] vet = no") != NULL);
    CU_ASSERT_PTR_NULL(mpce_registry_find(e, "prg-bad"));
    mpce_engine_free(e);
    CU_ASSERT_EQUAL(verdict_files(&t), files);

    CU_ASSERT_EQUAL(engine_with(dir, "/bin/true", "30", "[engine]\nstrict = yes\n", &log, &e),
                    MPCE_ERR_PLUGIN);
    CU_ASSERT(strstr(mpce_last_error(), "could not be vetted") != NULL);


    /* And the command line lives on (it used to die of the module's SIGSEGV). */
    check_command_lives(dir, "/bin/true");
    check_no_children();
    tu_remove_dir(dir);
}

/* A helper of another library version: its loader refused this module
 * (built for an ABI minor it does not know), which this engine would have
 * started, probe and all. Its word is no verdict here: could not be
 * vetted, not cached, never loaded; and one that does not say its version
 * (an older helper) is treated the same. */
static void test_helper_of_another_version(void)
{
    char *dir = tu_temp_dir();
    place(dir, "bad.so", "probe_segv");
    static const char *const says[] = {
        "engine 0.0.1 abi 2.3\nstep load\nstep entry\nplugin bad\nskipped built for ABI "
        "2.4, newer than 2.3\ndone\n",
        "step load\nstep entry\nplugin bad\nskipped built for ABI 2.4\ndone\n"};
    static const char *const want[] = {"could not be vetted: ", "it did not say its engine "
                                       "version"};
    for (size_t k = 0; k < 2; k++) {
        char script[4200], text[1024];
        snprintf(script, sizeof(script), "%s/old-helper", dir);
        snprintf(text, sizeof(text), "#!/bin/sh\nprintf '%s' >&3\n", says[k]);
        tu_write_text(script, text, 0755);
        static struct logbuf log;
        mpce_engine *e = NULL;
        struct timespec t;
        const size_t files = verdict_files(&t);
        CU_ASSERT_EQUAL_FATAL(engine_with(dir, script, "30", NULL, &log, &e), MPCE_OK);
        const mpce_impl_info *row = row_of(e, dir, "bad.so", "");
        CU_ASSERT(row && strcmp(row->selftest, "fail") == 0);
        CU_ASSERT(row && strstr(row->reason, want[k]) != NULL);
        if (k == 0)
            CU_ASSERT(row && strstr(row->reason, "it is 0.0.1 abi 2.3, this process's "
                                                 "library is ") != NULL);
        if (row && !strstr(row->reason, want[k]))
            fprintf(stderr, "case %zu: %s\n", k, row->reason);
        CU_ASSERT_PTR_NULL(mpce_registry_find(e, "prg-bad"));
        mpce_engine_free(e);
        CU_ASSERT_EQUAL(verdict_files(&t), files);
        unlink(script);
    }
    check_no_children();
    tu_remove_dir(dir);
}

/* A plugin disabled here never ran its probe or init before vetting: one
 * that crashes there is disabled, not failed, and strict = yes accepts it.
 * One that crashes in its entry point still fails. */
static void test_disabled_plugin(void)
{
    char *dir = tu_temp_dir();
    place(dir, "bad.so", "probe_segv");
    static struct logbuf log;
    mpce_engine *e = NULL;
    static const char disable[] = "[engine]\nstrict = yes\n[plugin.bad]\nenabled = no\n";
    /* probedtor: its destructor faults too, and never ran in the helper
     * (which died in the probe): the host must not run it either. */
    static const char *const late[] = {"probe_segv", "probedtor_segv"};
    for (int round = 0; round < 4; round++) { /* each fresh, then from the cache */
        if (round % 2 == 0)
            place(dir, "bad.so", late[round / 2]);
        CU_ASSERT_EQUAL_FATAL(engine_with(dir, NULL, "30", disable, &log, &e), MPCE_OK);
        const mpce_impl_info *row = row_of(e, dir, "bad.so", "");
        CU_ASSERT_PTR_NOT_NULL(row);
        CU_ASSERT(row && strcmp(row->selftest, "fail") != 0);
        CU_ASSERT(row && strstr(row->reason, "plugin bad, disabled by ") != NULL &&
                  strstr(row->reason, "is not loaded: its vet failed") != NULL);
        if (row && !strstr(row->reason, "is not loaded"))
            fprintf(stderr, "%s: %s\n", late[round / 2], row->reason);
        CU_ASSERT_PTR_NULL(mpce_registry_find(e, "prg-bad"));
        for (size_t k = 0; k < e->n_modules; k++)
            if (strstr(e->modules[k]->path, "bad.so"))
                CU_ASSERT_PTR_NULL(e->modules[k]->handle);
        if (round % 2 == 1) /* the cached verdict served: no helper ran */
            CU_ASSERT(strstr(log.text, "vetted out of process") == NULL);
        mpce_engine_free(e);
    }
    /* Enabled, the same file fails. */
    CU_ASSERT_EQUAL_FATAL(engine_in(dir, NULL, &log, &e), MPCE_OK);
    const mpce_impl_info *row = row_of(e, dir, "bad.so", "");
    CU_ASSERT(row && strcmp(row->selftest, "fail") == 0);
    mpce_engine_free(e);

    /* Its entry point, constructors and destructors run for a disabled
     * plugin too (the loader opens it to learn its name): a fault there
     * fails it, fresh and from the cache. A destructor's used to reach the
     * host, which died of it at dlclose. */
    static const char *const always[] = {"entry_segv", "dtor_segv", "dtor_exit"};
    for (size_t k = 0; k < sizeof(always) / sizeof(always[0]); k++) {
        place(dir, "bad.so", always[k]);
        for (int round = 0; round < 2; round++) {
            CU_ASSERT_EQUAL_FATAL(engine_with(dir, NULL, "30", "[plugin.bad]\nenabled = no\n",
                                              &log, &e), MPCE_OK);
            row = row_of(e, dir, "bad.so", "");
            CU_ASSERT(row && strcmp(row->selftest, "fail") == 0);
            if (row && strcmp(row->selftest, "fail") != 0)
                fprintf(stderr, "%s, round %d: %s %s\n", always[k], round, row->selftest,
                        row->reason);
            if (round == 1)
                CU_ASSERT(row && strstr(row->reason, "(cached in ") != NULL);
            mpce_engine_free(e);
        }
    }
    check_no_children();
    tu_remove_dir(dir);
}

/* An implementation its module's probe refused while being vetted, and
 * offers here: never vetted, so never self-tested in this process (this one
 * crashes when called). With a variable the fingerprint does not cover,
 * the cached verdict is used, the implementation fails closed as not vetted
 * and the verdict is forgotten, so the next engine vets the module again
 * and finds the crash. With an MPCENGINE_* variable the verdict is stale at
 * once. (A cached pass used to let it run its first self-test here.) */
static void test_impl_refused_in_vet(void)
{
    static const char *const vars[] = {"MPCE_TEST_REFUSE", "MPCENGINE_TEST_REFUSE"};
    for (size_t k = 0; k < 2; k++) {
        char *dir = tu_temp_dir();
        place(dir, "bad.so", "envrefuse_segv");
        static struct logbuf log;
        mpce_engine *e = NULL;
        setenv(vars[k], "1", 1);
        CU_ASSERT_EQUAL_FATAL(engine_in(dir, NULL, &log, &e), MPCE_OK);
        struct mpce_slot *s = mpce_registry_find(e, "prg-bad");
        CU_ASSERT(s == NULL || mpce_registry_usable(e, s, "") != MPCE_OK);
        mpce_engine_free(e);
        unsetenv(vars[k]);

        CU_ASSERT_EQUAL_FATAL(engine_in(dir, NULL, &log, &e), MPCE_OK);
        const mpce_impl_info *row = row_of(e, dir, "bad.so", "prg-bad");
        const mpce_impl_info *mod = row_of(e, dir, "bad.so", "");
        if (k == 0) {
            CU_ASSERT(row && strcmp(row->selftest, "fail") == 0 &&
                      strstr(row->reason, "not vetted: the module's vet in the probe helper "
                                          "did not offer it") != NULL);
        } else {
            /* Stale at once: vetted again here, and the crash found. */
            CU_ASSERT(mod && strstr(mod->reason, "killed by SIGSEGV") != NULL &&
                      strstr(mod->reason, "in the self-test of implementation prg-bad") != NULL);
        }
        mpce_engine_free(e);

        CU_ASSERT_EQUAL_FATAL(engine_in(dir, NULL, &log, &e), MPCE_OK);
        mod = row_of(e, dir, "bad.so", "");
        CU_ASSERT(mod && strcmp(mod->selftest, "fail") == 0 &&
                  strstr(mod->reason, "killed by SIGSEGV") != NULL &&
                  strstr(mod->reason, "in the self-test of implementation prg-bad") != NULL);
        CU_ASSERT_PTR_NULL(mpce_registry_find(e, "prg-bad"));
        mpce_engine_free(e);
        check_no_children();
        tu_remove_dir(dir);
    }
}

/* A helper that is there but may not be run (not executable here) fails
 * every module closed; only a missing one turns isolation off. (It used to
 * turn isolation off, and a crashing module then took the host down.) */
static void test_helper_not_runnable(void)
{
    char *dir = tu_temp_dir();
    place(dir, "bad.so", "probe_segv");
    char helper[4200];
    snprintf(helper, sizeof(helper), "%s/not-executable-probe", dir);
    tu_write_text(helper, "#!/bin/sh\nexit 0\n", 0644);
    static struct logbuf log;
    mpce_engine *e = NULL;
    CU_ASSERT_EQUAL_FATAL(engine_with(dir, helper, "30", NULL, &log, &e), MPCE_OK);
    const mpce_impl_info *row = row_of(e, dir, "bad.so", "");
    CU_ASSERT(row && strcmp(row->selftest, "fail") == 0);
    CU_ASSERT(row && strstr(row->reason, "could not be vetted") != NULL &&
              strstr(row->reason, "is not an executable file") != NULL);
    CU_ASSERT_PTR_NULL(mpce_registry_find(e, "prg-bad"));
    mpce_engine_free(e);
    check_no_children();
    tu_remove_dir(dir);
}

/* [tune] vet = no: loaded and self-tested here, nothing spawned or cached. */
static void test_vet_off(void)
{
    char *dir = tu_temp_dir();
    place(dir, "okay.so", "none_none");
    static struct logbuf log;
    mpce_engine *e = NULL;
    struct timespec t;
    const size_t files = verdict_files(&t);
    CU_ASSERT_EQUAL_FATAL(engine_in(dir, "vet = no\n", &log, &e), MPCE_OK);
    CU_ASSERT(strstr(log.text, "not vetted out of process: module isolation is off ([tune] "
                               "vet = no)") != NULL);
    CU_ASSERT(strstr(log.text, "vetted out of process: passed") == NULL);
    struct mpce_slot *s = mpce_registry_find(e, "prg-okay");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(mpce_slot_state(s), MPCE_ST_UNTESTED);
    CU_ASSERT_EQUAL(mpce_registry_usable(e, s, ""), MPCE_OK);
    mpce_engine_free(e);
    CU_ASSERT_EQUAL(verdict_files(&t), files);
    check_no_children();
    tu_remove_dir(dir);
}

/* Real modules pass: the build's aesni plugin (where built) and the
 * emulated device of tests/modules, whose init opens what a device runtime
 * would. */
static void test_real_modules(void)
{
    char *dir = tu_temp_dir();
    free(tu_copy_into(EMUDEV_SO, dir, 0755));
    /* Every module this build made (mpce-aesni.so, mpce-neon.so), from
     * each directory of the tree's plugin path. */
    char names[8][256];
    size_t n_real = 0;
    char path[4096];
    snprintf(path, sizeof(path), "%s", TEST_PLUGIN_PATH);
    for (char *save = NULL, *d = strtok_r(path, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        DIR *dd = opendir(d);
        const struct dirent *de;
        while (dd && (de = readdir(dd)) != NULL && n_real < 8) {
            size_t l = strlen(de->d_name);
            if (strncmp(de->d_name, "mpce-", 5) != 0 || l < 4 ||
                strcmp(de->d_name + l - 3, ".so") != 0)
                continue;
            char file[4400];
            snprintf(file, sizeof(file), "%s/%s", d, de->d_name);
            free(tu_copy_into(file, dir, 0755));
            snprintf(names[n_real++], sizeof(names[0]), "%s", de->d_name);
        }
        if (dd)
            closedir(dd);
    }
    static struct logbuf log;
    mpce_engine *e = NULL;
    CU_ASSERT_EQUAL_FATAL(engine_in(dir, NULL, &log, &e), MPCE_OK);
    CU_ASSERT(strstr(log.text, "mod_emudev.so: vetted out of process: passed") != NULL);
    for (size_t i = 0; i < n_real; i++) {
        char want[300];
        snprintf(want, sizeof(want), "%.200s: vetted out of process: passed", names[i]);
        CU_ASSERT(strstr(log.text, want) != NULL);
        if (!strstr(log.text, want))
            fprintf(stderr, "  %s was not vetted as passed\n", names[i]);
    }
#if defined(__x86_64__)
    CU_ASSERT(TEST_PLUGIN_PATH[0] == '\0' || n_real > 0); /* the tree's aesni, found */
#endif
    CU_ASSERT(strstr(log.text, "failed its vet") == NULL);
    if (strstr(log.text, "failed its vet") || !strstr(log.text, "mod_emudev.so: vetted"))
        fprintf(stderr, "%s", log.text);
    const mpce_impl_info *rows;
    size_t n;
    CU_ASSERT_EQUAL_FATAL(mpce_list(e, 0, &rows, &n), MPCE_OK);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT(strcmp(rows[i].selftest, "fail") != 0);
    mpce_engine_free(e);
    check_no_children();
    tu_remove_dir(dir);
}

/* The pid of a process whose command line mentions text, or 0. */
static pid_t process_naming(const char *text)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    pid_t found = 0;
    const struct dirent *de;
    while (!found && (de = readdir(d)) != NULL) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        char path[300], cmd[8192];
        snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(cmd, 1, sizeof(cmd) - 1, f);
        fclose(f);
        for (size_t i = 0; i < n; i++)
            cmd[i] = cmd[i] ? cmd[i] : ' ';
        cmd[n] = '\0';
        if (strstr(cmd, text) && strstr(cmd, " vet "))
            found = (pid_t)atoi(de->d_name);
    }
    closedir(d);
    return found;
}

/* A host killed while a module hangs its vet takes the helper with it
 * (the helper is in its own process group, out of reach of a Ctrl-C). */
static void test_no_orphan(void)
{
    if (TU_TSAN)
        return; /* a forked child of a TSan process is no test of this */
    char *dir = tu_temp_dir();
    place(dir, "bad.so", "entry_hang");
    fflush(NULL);
    pid_t host = fork();
    CU_ASSERT_FATAL(host >= 0);
    if (host == 0) {
        mpce_engine *e = NULL;
        engine_with(dir, NULL, "30", NULL, NULL, &e);
        _exit(0);
    }
    pid_t helper = 0;
    for (int i = 0; i < 500 && !helper; i++) {
        struct timespec ms = {0, 10000000};
        nanosleep(&ms, NULL);
        helper = process_naming(dir);
    }
    CU_ASSERT(helper > 0);
    kill(host, SIGKILL);
    CU_ASSERT_EQUAL(waitpid(host, NULL, 0), host);
    int gone = 0;
    for (int i = 0; i < 500 && !gone; i++) {
        struct timespec ms = {0, 10000000};
        nanosleep(&ms, NULL);
        gone = process_naming(dir) == 0;
    }
    CU_ASSERT(gone);
    if (!gone && helper > 0)
        kill(helper, SIGKILL);
    tu_remove_dir(dir);
}

/* `mpcengine list` shows the failed module and why. */
static void test_cli_list(void)
{
    char *dir = tu_temp_dir();
    place(dir, "bad.so", "selftest_segv");
    place(dir, "okay.so", "none_none");
    char text[4096], cmd[8192];
    snprintf(text, sizeof(text), "[engine]\nuser_config = no\nplugin_path = %s\n[tune]\n"
             "mode = off\ndir = %s\nhelper = %s\n", dir, state_dir, PROBE_BIN);
    char *conf = tu_write_temp(text);
    snprintf(cmd, sizeof(cmd), "%s list --config %s 2>&1", MPCENGINE_BIN, conf);
    FILE *p = popen(cmd, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    static char out[1 << 16];
    size_t got = fread(out, 1, sizeof(out) - 1, p);
    out[got] = '\0';
    CU_ASSERT_EQUAL(pclose(p), 0);
    CU_ASSERT(strstr(out, "prg-okay") != NULL);
    CU_ASSERT(strstr(out, "failed its vet in the probe helper: killed by SIGSEGV (signal 11) "
                          "in the self-test of implementation prg-bad") != NULL);
    if (!strstr(out, "killed by SIGSEGV"))
        fprintf(stderr, "%s", out);
    /* selftest counts it as a failure, and says so in its exit status. */
    snprintf(cmd, sizeof(cmd), "%s selftest --config %s 2>&1", MPCENGINE_BIN, conf);
    p = popen(cmd, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    got = fread(out, 1, sizeof(out) - 1, p);
    out[got] = '\0';
    int status = pclose(p);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    CU_ASSERT(strstr(out, "pass     prg-okay") != NULL);
    CU_ASSERT(strstr(out, "fail     ") != NULL && strstr(out, "/bad.so: failed its vet") != NULL);
    CU_ASSERT(strstr(out, " 1 failed, ") != NULL);
    if (!strstr(out, " 1 failed, "))
        fprintf(stderr, "%s", out);
    unlink(conf);
    free(conf);
    tu_remove_dir(dir);
}

/* The command run from its build tree, with no [tune] helper named and none
 * installed at the prefix, vets with the tree's helper: a module that
 * crashes in its probe is listed as failed, and the command lives (it used
 * to die of the SIGSEGV: cold review #5). */
static void test_cli_build_tree_helper(void)
{
    char *dir = tu_temp_dir();
    place(dir, "bad.so", "probe_segv");
    place(dir, "okay.so", "none_none");
    char text[4096], cmd[8192];
    snprintf(text, sizeof(text), "[engine]\nuser_config = no\nplugin_path = %s\n[tune]\n"
             "mode = off\ndir = %s\n", dir, state_dir);
    char *conf = tu_write_temp(text);
    snprintf(cmd, sizeof(cmd), "%s list --config %s 2>&1", MPCENGINE_BIN, conf);
    FILE *p = popen(cmd, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    static char out[1 << 16];
    size_t got = fread(out, 1, sizeof(out) - 1, p);
    out[got] = '\0';
    const int status = pclose(p);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CU_ASSERT(strstr(out, "prg-okay") != NULL);
    CU_ASSERT(strstr(out, "failed its vet in the probe helper: killed by SIGSEGV") != NULL);
    CU_ASSERT(strstr(out, "isolation is off") == NULL);
    if (!strstr(out, "killed by SIGSEGV"))
        fprintf(stderr, "%s", out);
    unlink(conf);
    free(conf);
    tu_remove_dir(dir);
}

/* The command run from its build tree keeps its verdicts in the tree
 * (tools/state), never at the prefix, whose state is the installed
 * engine's (and `make distcheck` as root found files left there). */
static void test_cli_build_tree_state(void)
{
    char *dir = tu_temp_dir();
    place(dir, "bad.so", "probe_segv");
    char text[4096], cmd[8192], tree_state[4200];
    snprintf(tree_state, sizeof(tree_state), "%s", MPCENGINE_BIN);
    *strrchr(tree_state, '/') = '\0';
    strcat(tree_state, "/state/verdicts");
    struct stat before;
    const int prefix_had = stat(MPCE_PINSDIR "/verdicts", &before) == 0;
    snprintf(text, sizeof(text), "[engine]\nuser_config = no\nplugin_path = %s\n[tune]\n"
             "mode = off\n", dir);
    char *conf = tu_write_temp(text);
    snprintf(cmd, sizeof(cmd), "%s list --config %s >/dev/null 2>&1", MPCENGINE_BIN, conf);
    const int status = system(cmd);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* The verdict on bad.so is in the tree's state directory. */
    int found = 0;
    DIR *d = opendir(tree_state);
    CU_ASSERT_PTR_NOT_NULL(d);
    for (struct dirent *de; d && (de = readdir(d)) != NULL;) {
        char path[4500];
        snprintf(path, sizeof(path), "%s/%s", tree_state, de->d_name);
        char body[8192] = "";
        FILE *f = de->d_name[0] == '.' ? NULL : fopen(path, "r");
        if (f) {
            body[fread(body, 1, sizeof(body) - 1, f)] = '\0';
            fclose(f);
        }
        if (strstr(body, dir) != NULL) {
            found = 1;
            unlink(path);
        }
    }
    if (d)
        closedir(d);
    CU_ASSERT(found);
    struct stat after;
    CU_ASSERT(prefix_had || stat(MPCE_PINSDIR "/verdicts", &after) != 0);
    unlink(conf);
    free(conf);
    tu_remove_dir(dir);
}

/* [tune] vet_timeout is checked like the other timeouts. */
static void test_vet_timeout_values(void)
{
    static const char *const bad[] = {"0", "-1", "3601", "ten", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[256];
        snprintf(text, sizeof(text), "[tune]\nvet_timeout = %s\n", bad[i]);
        mpce_engine *e = NULL;
        CU_ASSERT_EQUAL(tu_engine_conf(text, &e), MPCE_ERR_CONFIG);
        CU_ASSERT(strstr(mpce_last_error(), "vet_timeout") != NULL);
    }
    mpce_engine *e = NULL;
    CU_ASSERT_EQUAL_FATAL(tu_engine_conf("[tune]\nvet_timeout = 2.5\n", &e), MPCE_OK);
    CU_ASSERT_EQUAL(e->cfg.tune.vet_ms, 2500);
    mpce_engine_free(e);
}

int main(void)
{
    /* A sanitizer build's helper must die of the signal, as a plain one
     * does, and not report leaks at a module's exit(): its runtime reads
     * these options when the helper starts. */
    {
        /* After the caller's options, so these win where they overlap. */
        const char *old = getenv("ASAN_OPTIONS");
        char opts[2048];
        snprintf(opts, sizeof(opts), "%s%shandle_segv=0:handle_abort=0:detect_leaks=0",
                 old ? old : "", old && old[0] ? ":" : "");
        setenv("ASAN_OPTIONS", opts, 1);
    }
    if (TU_TSAN) { /* the same for TSan, after the caller's (.ci/tsan's reports) */
        const char *old = getenv("TSAN_OPTIONS");
        char opts[2048];
        snprintf(opts, sizeof(opts), "%s:handle_segv=0:handle_abort=0", old ? old : "");
        setenv("TSAN_OPTIONS", opts, 1);
    }
    state_dir = tu_temp_dir();
    static const struct tu_test tests[] = {
        {"each fault is named, the host lives on", test_each_fault},
        {"descriptors kept after init: a warning", test_kept_fds},
        {"the verdict is cached and reused", test_cache_reused},
        {"no state directory: verdicts kept in memory", test_cache_in_memory},
        {"a module the helper cannot load is not loaded", test_unloadable_in_helper},
        {"a file that is no module: named, its refusal cached", test_not_a_module},
        {"a module replaced by rename is vetted again", test_replaced_module},
        {"strict = yes makes a failed vet fatal", test_strict},
        {"no helper: isolation off, in process", test_no_helper},
        {"a named helper that is missing fails closed, with a warning", test_named_helper_missing},
        {"a helper with no verdict fails closed", test_unvetted_fails_closed},
        {"a helper of another library version gives no verdict", test_helper_of_another_version},
        {"a disabled plugin's probe is not a fault", test_disabled_plugin},
        {"[tune] vet = no: in process, nothing cached", test_vet_off},
        {"the real modules pass their vet", test_real_modules},
        {"a killed host leaves no helper behind", test_no_orphan},
        {"an implementation never vetted is not run here", test_impl_refused_in_vet},
        {"a helper that cannot be run fails closed", test_helper_not_runnable},
        {"mpcengine list shows the failure", test_cli_list},
        {"mpcengine from its build tree vets with the tree's helper", test_cli_build_tree_helper},
        {"mpcengine from its build tree keeps its state there", test_cli_build_tree_state},
        {"[tune] vet_timeout values are checked", test_vet_timeout_values},
        {NULL, NULL},
    };
    int rc = tu_main("isolation", tests);
    tu_remove_dir(state_dir);
    return rc;
}
