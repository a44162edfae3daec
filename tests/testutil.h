/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the CUnit suites. */
#ifndef MPCE_TESTUTIL_H
#define MPCE_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "engine/verify/kat.h"
#include "mpcengine.h"

struct tu_test {
    const char *name;
    void (*fn)(void);
};

/* Register one suite of tests (NULL-name terminated), run it in CUnit's
 * basic verbose mode and return the process exit status (0 only if every
 * test ran and passed). */
int tu_main(const char *suite_name, const struct tu_test *tests);

/*
 * A private engine that loads no modules and reads no system, user or
 * environment configuration; allow_variable_time as given. Cached for the
 * life of the process; do not free.
 */
mpce_engine *tu_engine(int allow_variable_time);
/* A new engine (the caller frees it) like tu_engine's but for its
 * configuration, conf_text, written to a temporary file for the call. */
mpce_status tu_engine_conf(const char *conf_text, mpce_engine **out);

/* A fresh 0700 directory under $TMPDIR or /tmp, to hold plugins (free with
 * tu_remove_dir, which deletes everything under it first). */
char *tu_temp_dir(void);
/* Copy file src into dir under its own name with mode; returns the new
 * path (malloc'd). */
char *tu_copy_into(const char *src, const char *dir, unsigned mode);
void tu_remove_dir(char *dir);

/* Write text to path (created or truncated) with mode; aborts on failure. */
void tu_write_text(const char *path, const char *text, unsigned mode);

/* Run fn(arg) in a child process without root (as uid/gid 65534 when the
 * test runs as root, as is, in a child, otherwise), so unprivileged paths are
 * covered on root CI machines too. fn returns 0 for success and prints what
 * failed; the result is fn's, or 1 if the child could not drop root or died.
 * Files the child must read need modes that let "nobody" read them. */
int tu_unprivileged(int (*fn)(void *), void *arg);

/* Whether this program was built with ThreadSanitizer (configure
 * --enable-sanitizers=thread). TSan cannot follow a multi-threaded process
 * into a forked child that starts threads of its own: gcc 12's and clang 14's
 * runtimes keep the parent's threads registered there and abort on the
 * child's first pthread_create ("dup thread with used id"), and they check
 * nothing in such a child anyway. Tests whose child starts the pool skip that
 * part under TSan with a "skipped:" line. */
#if defined(__SANITIZE_THREAD__)
#define TU_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TU_TSAN 1
#endif
#endif
#ifndef TU_TSAN
#define TU_TSAN 0
#endif

/* Non-NULL (what it is) when this test program runs under a user-mode
 * emulator: the environment's MPCE_TEST_EMULATOR (.ci/arm64 sets it), or,
 * in an AArch64 build, a /proc/cpuinfo without "CPU implementer" (qemu-user
 * 7 shows the host's). .ci/valgrind sets it to "valgrind" for test_tune,
 * whose timed tests valgrind's slowdown breaks as emulation does. qemu-user cannot fork a multi-threaded guest (the
 * child trips an assertion in qemu), so tests whose child forks from a
 * process with a running pool skip that part there with a "skipped:" line. */
const char *tu_emulated(void);

/* Write `text` to a fresh temporary file and return its path (static
 * storage per call slot is not kept: free() the result). */
char *tu_write_temp(const char *text);

/* Names of the implementations of prim in the engine whose self-test passed
 * (up to max); returns the count. Prints a "skipped: NAME: reason" line for
 * each implementation of prim that this machine cannot run. */
size_t tu_impls(mpce_engine *engine, mpce_primitive prim, const char **names, size_t max);

/* Whether impl serves ctx's parameters (an implementation may refuse some,
 * e.g. IFMA above 2^50); prints a "skipped:" line when it does not. */
int tu_ntt_serves(mpce_ntt *ctx, const char *impl);

/* What "auto" runs for op ("prg.ecb", ...) and size class ("small" if NULL)
 * by the engine's routes, before any context's parameters; NULL when no
 * implementation is usable (the detail is in mpce_last_error). */
const char *tu_auto(mpce_engine *engine, const char *op, const char *size_class);

/* The MPCE_IMPL_* flags of a listed implementation (0 if not listed). */
unsigned tu_impl_flags(mpce_engine *engine, const char *impl);

/* check(impl, record) for every implementation and every record of a vector
 * file, which must hold at least min_records records; at least one
 * implementation must be given. */
void tu_kat_run(const char *file, size_t min_records, const char *const *impls, size_t nimpl,
                int (*check)(const char *impl, const struct mpce_kat_record *rec));

/* Whether field `name` of rec (hex) equals got; prints the record's line if not. */
int tu_kat_expect_hex(const struct mpce_kat_record *rec, const char *name, const uint8_t *got,
                      size_t got_len);

/* FIPS-197 C.1 through impl ("auto" or a name) of engine e: its status, and
 * a CUnit failure if it computes a wrong block. */
mpce_status tu_ecb_fips_c1(mpce_engine *e, const char *impl);

/* SPEC.md section 5. */
uint64_t tu_splitmix64(uint64_t *state);
void tu_splitmix_bytes(uint64_t seed, void *buf, size_t len);

/* malloc'd buffer whose returned pointer is `misalign` bytes past a 64-byte
 * boundary (unaligned-buffer tests); free with tu_free_misaligned. */
void *tu_alloc_misaligned(size_t len, size_t misalign);
void tu_free_misaligned(void *p);

/* True if the thread's last error detail contains every given substring. */
int tu_error_mentions(const char *needle);

#define TU_ASSERT_ERROR(call, status, needle)                                  \
    do {                                                                       \
        CU_ASSERT_EQUAL((call), (status));                                     \
        if (!tu_error_mentions(needle)) {                                      \
            CU_FAIL("error detail does not mention " needle);                  \
            fprintf(stderr, "  detail was: %s\n", mpce_last_error());          \
        }                                                                      \
    } while (0)

#endif
