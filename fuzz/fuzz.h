/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every fuzz target shares. A target is one source file that defines
 * LLVMFuzzerTestOneInput; it is linked either with libFuzzer (configure
 * --enable-fuzzing, `make fuzz`) or with fuzz/replay.c, a plain main that
 * runs the committed corpus and regression inputs through it (`make check`,
 * any compiler). Targets set themselves up on their first input, so both
 * ways run the same code.
 */
#ifndef MPCE_FUZZ_H
#define MPCE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "mpcengine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property the target checks failed: print what and where, then abort, so
 * that libFuzzer keeps the input and the replay fails. */
#define FUZZ_CHECK(cond, ...)                                                 \
    do {                                                                      \
        if (!(cond))                                                          \
            fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                \
    } while (0)

_Noreturn void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Empty this thread's error detail, so that a refusal's reason is checked
 * for the call that refused, not found left over from an earlier input. */
void fuzz_clear_error(void);

/* This process's own scratch directory (created on first use, removed with
 * everything in it at exit): iniparser reads only from a path. Under
 * $MPCE_FUZZ_TMPDIR if set, else /dev/shm where it is writable, else
 * $TMPDIR or /tmp. */
const char *fuzz_temp_dir(void);

/* Write len bytes to DIR/name (created or truncated, 0600); returns the
 * malloc'd path, or aborts. */
char *fuzz_write(const char *dir, const char *name, const void *data, size_t len);

/* A NUL-terminated malloc'd copy of data (aborts when out of memory). */
char *fuzz_strndup(const uint8_t *data, size_t size);

/* A private engine that reads no configuration, environment or pins:
 * with_plugins also loads this build's modules (TEST_PLUGIN_PATH), and
 * variable-time implementations are allowed, so every implementation this
 * CPU can run is selectable. Made once per process; never freed. */
mpce_engine *fuzz_engine(int with_plugins);

/* The implementations of prim whose self-test passed, the built-in soft
 * plugin's first (the reference); up to max names, valid while the engine
 * lives. Aborts when there is none, when any implementation of prim (or any
 * module's vet) failed, and, in a build with the aesni module on a CPU that
 * runs it, when no aesni implementation of prim is among them. */
size_t fuzz_impls(mpce_engine *engine, mpce_primitive prim, const char **names, size_t max);

/* Reading an input as a stream of fields: each take returns 0 past the end. */
struct fuzz_in {
    const uint8_t *p;
    size_t left;
};
uint8_t fuzz_u8(struct fuzz_in *in);
uint64_t fuzz_u64(struct fuzz_in *in);
/* Copy up to len bytes (zero-filling past the end). */
void fuzz_bytes(struct fuzz_in *in, void *out, size_t len);

/* A buffer of len bytes that starts misalign (mod 64) bytes past a 64-byte
 * boundary and ends exactly where its allocation does (unaligned-buffer
 * checks; ASan sees an access past the end); free with
 * fuzz_free_misaligned. Aborts when out of memory. */
void *fuzz_alloc_misaligned(size_t len, size_t misalign);
void fuzz_free_misaligned(void *p);

/* The harnesses' own modular arithmetic (no engine code): a * b mod q,
 * a^e mod q, and a primality test exact for every 64-bit n. */

/* SPEC.md section 5's splitmix64, for bulk data derived from an input. */
uint64_t fuzz_splitmix64(uint64_t *state);

#endif
