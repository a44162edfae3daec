/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The selector's tests: a module that crashes, one that hangs and one that
 * is wrong, each only on tuning-sized calls, and one that wins only on large
 * calls. Built from this one source, one -DTUNE_<NAME> each; every one is a
 * plugin with a single PRG implementation (ecb, mmo and ctr) on OpenSSL EVP
 * AES (evp_prg.c), so it passes the engine's self-test on its own merits:
 * the PRG records' largest call is 17 blocks (34 for mmo with m = 2), far
 * below every threshold here.
 *
 *   CRASH  tunecrash, prg-tune-crash: from 4096 work elements up, a write
 *          through a volatile NULL pointer (SIGSEGV, not raise())
 *   HANG   tunehang, prg-tune-hang: from 4096 work elements up, sleeps
 *          forever (nanosleep in a loop: SIGTERM and SIGKILL still end it)
 *   WRONG  tunewrong, prg-tune-wrong: from 1024 work elements up, returns 0
 *          at once having only flipped bit 0 of output block 0: far faster
 *          than any AES, and wrong
 *   LARGE  tunelarge, prg-tune-large: always correct; each call busy-waits
 *          TUNE_LARGE_WAIT_NS on CLOCK_MONOTONIC, then runs OpenSSL's AES
 *          (AES-NI where the CPU has it). It loses to prg-soft-bitslice on
 *          small calls and wins on large ones: 2 ms puts the crossover near
 *          26000 blocks on an AMD EPYC Zen 4, where soft takes ~78 ns a
 *          block, so soft still wins 1024 blocks by far under a sanitizer
 *          (which slows soft, not OpenSSL) and the module 262144 blocks
 *   KNOB   tuneknob, prg-tune-knob: OpenSSL's AES, LARGE's fixed 2 ms a
 *          call (so small calls stay soft's, under a sanitizer too: at
 *          0.5 ms an AddressSanitizer build let it win 1024 blocks by 32 %
 *          on a loaded CI machine) and its knobs (ABI 2.2): "wait"
 *          (0 1 [2]) busy-waits 15 ns per work element per unit, "spin"
 *          (0 [1] 2), informational, 3 ns. At its defaults a large call
 *          (262144 blocks) costs about 10.5 ms plus the AES against soft's
 *          ~20 ms on an AMD EPYC Zen 4 (several times that under a
 *          sanitizer), and wait=0 about 2.8 ms plus the AES: the tune must
 *          pin wait=0 there, a gain no loaded machine's noise hides (at
 *          medium, 32768 blocks, soft and the module are close: nothing
 *          asserts that row),
 *          report spin and keep 1, and leave "idle" (0 [1]), which changes
 *          nothing, at its default however the first run ranks it. With
 *          TUNE_KNOB_RECORD set to a file, each call appends the values it
 *          received ("wait=W spin=S\n"): what "auto" passes, seen from the
 *          plugin
 *   KNOBCRASH tuneknobcrash, prg-tune-knobcrash: KNOB, but a call of 4096
 *          work elements or more with wait=0 crashes: found only when the
 *          tune tries that knob value
 *   KNOBWRONG tuneknobwrong, prg-tune-knobwrong: LARGE with a knob "flip"
 *          ([0] 1) whose value 1 flips bit 0 of output block 0 on calls of
 *          1024 work elements and more: a knob that changes outputs
 *
 * A work element is the size classes' unit: a 16-byte block for ecb and
 * ctr, blocks x keys (n * m) for mmo. The engine splits a PORTABLE
 * implementation's public-API call into slices of at least 4096 / m seeds
 * (rounded down), so a call over a threshold reaches the op over it too,
 * except for mmo with an m that does not divide 4096 (slices may then be a
 * few elements short of 4096) and under a lowered slice minimum; mpcengine
 * bench and the self-test call the op unsplit.
 *
 * Class PORTABLE at priority 1, the bottom of the class: a SIMD-class
 * implementation is clamped to 200..399 and so would outrank the built-in
 * soft backend (PORTABLE, 100) by priority alone. At 1 it is never "auto"'s
 * default; only a pin (the selector's, or an explicit one) or --impl picks
 * it.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/modules/evp_prg.h"

#if defined(TUNE_CRASH)
#define TUNE_NAME "crash"
#elif defined(TUNE_HANG)
#define TUNE_NAME "hang"
#elif defined(TUNE_WRONG)
#define TUNE_NAME "wrong"
#elif defined(TUNE_LARGE)
#define TUNE_NAME "large"
#elif defined(TUNE_KNOB)
#define TUNE_NAME "knob"
#elif defined(TUNE_KNOBWRONG)
#define TUNE_NAME "knobwrong"
#elif defined(TUNE_KNOBCRASH)
#define TUNE_NAME "knobcrash"
#define TUNE_KNOB 1
#else
#error "build with one -DTUNE_<NAME>"
#endif

/* Work elements from which CRASH and HANG misbehave (the medium class's
 * lower bound) and WRONG does. */
#define TUNE_BAD_ELEMENTS 4096u
#define TUNE_WRONG_ELEMENTS 1024u
/* LARGE's fixed cost per call: at 40 us it already beat soft at 1024 blocks
 * (~42 us against ~80 us); at 500 us an AddressSanitizer build, whose soft
 * kernels run several times slower, let it win 1024 blocks too; 2 ms keeps
 * the small class soft's and the large class (262144 blocks: ~20 ms of
 * soft) the module's in every build. */
#ifndef TUNE_LARGE_WAIT_NS
#define TUNE_LARGE_WAIT_NS 2000000L
#endif

/* The EVP state, and m for counting mmo's work elements (evp_prg's state is
 * opaque). Read-only after ctx_new: concurrent ops on it are safe. */
struct tune_state {
    void *evp;
    size_t m;
};

static int tune_ctx_new(void *module, const uint8_t *keys, size_t m, void **state)
{
    struct tune_state *s = calloc(1, sizeof(*s));
    if (!s)
        return MPCE_ERR_NOMEM;
    int rc = evp_prg_ctx_new(module, keys, m, &s->evp);
    if (rc != 0) {
        free(s);
        return rc;
    }
    s->m = m;
    *state = s;
    return 0;
}

static void tune_ctx_free(void *state)
{
    struct tune_state *s = state;
    if (s)
        evp_prg_ctx_free(s->evp);
    free(s);
}

#if !defined(TUNE_CRASH) && !defined(TUNE_HANG) && !defined(TUNE_WRONG)
static void busy_wait_ns(long ns)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
}
#endif

#if defined(TUNE_KNOB)
#define TUNE_KNOB_WAIT_NS 15L /* per work element and unit of wait */
#define TUNE_KNOB_SPIN_NS 3L  /* and of spin */
enum { KNOB_WAIT, KNOB_SPIN, KNOB_IDLE };
static const uint32_t wait_values[] = {0, 1, 2}, spin_values[] = {0, 1, 2};
static const struct mpce_knob knob_wait = {
    .struct_size = sizeof(struct mpce_knob), .name = "wait", .ops = "prg.ecb prg.mmo prg.ctr",
    .about = "units of 15 ns per work element each call waits", .default_value = 2, .n_values = 3,
    .values = wait_values};
static const struct mpce_knob knob_spin = {
    .struct_size = sizeof(struct mpce_knob), .name = "spin", .ops = "prg.ecb prg.mmo prg.ctr",
    .about = "units of 3 ns per work element each call spins", .flags = MPCE_KNOB_INFORMATIONAL,
    .default_value = 1, .n_values = 3, .values = spin_values};
/* A knob that does nothing: a tune must not pin it along with wait. */
static const uint32_t idle_values[] = {0, 1};
static const struct mpce_knob knob_idle = {
    .struct_size = sizeof(struct mpce_knob), .name = "idle", .ops = "prg.ecb prg.mmo prg.ctr",
    .about = "changes nothing", .default_value = 1, .n_values = 2, .values = idle_values};
static const struct mpce_knob *const knobs[] = {&knob_wait, &knob_spin, &knob_idle};

/* The knobs' cost, and a record of what the call carried. */
static void knob_call(const struct mpce_call *call, uint64_t elements)
{
    uint32_t w = mpce_call_knob(call, KNOB_WAIT, 2), s = mpce_call_knob(call, KNOB_SPIN, 1);
#if defined(TUNE_KNOBCRASH)
    if (w == 0 && elements >= TUNE_BAD_ELEMENTS) {
        volatile int *volatile nowhere = NULL;
        *nowhere = 1;
    }
#endif
    const char *record = getenv("TUNE_KNOB_RECORD");
    if (record != NULL && record[0] != '\0') {
        FILE *f = fopen(record, "a");
        if (f != NULL) {
            fprintf(f, "wait=%u spin=%u\n", (unsigned)w, (unsigned)s);
            fclose(f);
        }
    }
    busy_wait_ns((long)elements * (TUNE_KNOB_WAIT_NS * (long)w + TUNE_KNOB_SPIN_NS * (long)s));
}
#elif defined(TUNE_KNOBWRONG)
static const uint32_t flip_values[] = {0, 1};
static const struct mpce_knob knob_flip = {
    .struct_size = sizeof(struct mpce_knob), .name = "flip", .ops = "prg.ecb prg.mmo prg.ctr",
    .about = "1: a wrong answer", .default_value = 0, .n_values = 2, .values = flip_values};
static const struct mpce_knob *const knobs[] = {&knob_flip};
#endif

/* What the variant does before a call of `elements` work elements: 0 to go
 * on and compute, 1 when it has already "answered" (WRONG). */
static int misbehave(uint8_t *out, uint64_t elements)
{
#if defined(TUNE_CRASH)
    (void)out;
    if (elements >= TUNE_BAD_ELEMENTS) {
        /* A real invalid write: the pointer is volatile, so the compiler
         * cannot see that it is NULL, and so is what it points to, so the
         * store cannot be dropped. */
        volatile int *volatile nowhere = NULL;
        *nowhere = 1;
    }
#elif defined(TUNE_HANG)
    (void)out;
    if (elements >= TUNE_BAD_ELEMENTS) {
        for (;;) {
            struct timespec ts = {.tv_sec = 0, .tv_nsec = 100000000L};
            nanosleep(&ts, NULL);
        }
    }
#elif defined(TUNE_WRONG)
    if (elements >= TUNE_WRONG_ELEMENTS) {
        out[0] ^= 1;
        return 1;
    }
#elif defined(TUNE_KNOB)
    /* A fixed cost that keeps small calls soft's; the rest is its knobs'. */
    (void)out;
    (void)elements;
    busy_wait_ns(TUNE_LARGE_WAIT_NS);
#else
    (void)out;
    (void)elements;
    busy_wait_ns(TUNE_LARGE_WAIT_NS);
#endif
    return 0;
}

/* After the AES: what a knob does to the output (KNOBWRONG's flip). */
static void after(const struct mpce_call *call, uint8_t *out, uint64_t elements)
{
#if defined(TUNE_KNOBWRONG)
    if (mpce_call_knob(call, 0, 0) == 1 && elements >= TUNE_WRONG_ELEMENTS)
        out[0] ^= 1;
#else
    (void)call;
    (void)out;
    (void)elements;
#endif
}

/* Before it: what a knob costs (KNOB's wait and spin). */
static void before(const struct mpce_call *call, uint64_t elements)
{
#if defined(TUNE_KNOB)
    knob_call(call, elements);
#else
    (void)call;
    (void)elements;
#endif
}

static int tune_ecb(void *state, const struct mpce_call *call, size_t key_index,
                    const uint8_t *in, uint8_t *out, size_t n)
{
    struct tune_state *s = state;
    if (misbehave(out, n))
        return 0;
    before(call, n);
    int rc = evp_prg_ecb(s->evp, call, key_index, in, out, n);
    after(call, out, n);
    return rc;
}

/* MMO as one EVP ECB pass per key over a chunk of seeds (evp_prg_mmo makes
 * an EVP context per block, which would hide LARGE's AES-NI speed). */
#define TUNE_MMO_CHUNK 16384u

static int tune_mmo(void *state, const struct mpce_call *call, const uint8_t *seeds,
                    uint8_t *out, size_t n)
{
    struct tune_state *s = state;
    if (misbehave(out, (uint64_t)n * s->m))
        return 0;
    before(call, (uint64_t)n * s->m);
    size_t cap = n < TUNE_MMO_CHUNK ? n : TUNE_MMO_CHUNK;
    uint8_t *tmp = malloc(16 * cap);
    if (!tmp)
        return MPCE_ERR_NOMEM;
    int rc = 0;
    for (size_t done = 0; rc == 0 && done < n; done += cap) {
        size_t k = n - done < cap ? n - done : cap;
        const uint8_t *in = seeds + 16 * done;
        for (size_t j = 0; rc == 0 && j < s->m; j++) {
            rc = evp_prg_ecb(s->evp, call, j, in, tmp, k);
            for (size_t i = 0; rc == 0 && i < k; i++) {
                uint8_t *o = out + 16 * ((done + i) * s->m + j);
                for (int b = 0; b < 16; b++)
                    o[b] = tmp[16 * i + b] ^ in[16 * i + b];
            }
        }
    }
    free(tmp);
    after(call, out, (uint64_t)n * s->m);
    return rc;
}

static int tune_ctr(void *state, const struct mpce_call *call, size_t key_index, uint64_t c0,
                    uint8_t *out, size_t n)
{
    struct tune_state *s = state;
    if (misbehave(out, n))
        return 0;
    before(call, n);
    int rc = evp_prg_ctr(s->evp, call, key_index, c0, out, n);
    after(call, out, n);
    return rc;
}

static const struct mpce_prg_ops tune_ops = {
    .struct_size = sizeof(struct mpce_prg_ops),
    .ctx_new = tune_ctx_new,
    .ctx_free = tune_ctx_free,
    .ecb = tune_ecb,
    .mmo = tune_mmo,
    .ctr = tune_ctr,
};

static const struct mpce_impl impl = {
    .struct_size = sizeof(struct mpce_impl),
    .primitive = MPCE_PRIM_PRG,
    .name = "prg-tune-" TUNE_NAME,
    .impl_class = MPCE_CLASS_PORTABLE,
    .priority = 1,
    .flags = MPCE_IMPL_CONSTANT_TIME,
    .memory = MPCE_MEM_HOST,
    .ops = &tune_ops,
#if defined(TUNE_KNOB) || defined(TUNE_KNOBWRONG)
    .n_knobs = sizeof(knobs) / sizeof(knobs[0]),
    .knobs = knobs,
#endif
};
static const struct mpce_impl *const impls[] = {&impl};

static const struct mpce_plugin plugin = {
    .struct_size = sizeof(struct mpce_plugin),
    .abi_major = MPCE_PLUGIN_ABI_MAJOR,
    .abi_minor = MPCE_PLUGIN_ABI_MINOR,
    .name = "tune" TUNE_NAME,
    .version = "1",
    .n_impls = 1,
    .impls = impls,
};

MPCE_API const struct mpce_plugin *mpce_plugin_entry_v2(void);
const struct mpce_plugin *mpce_plugin_entry_v2(void)
{
    return &plugin;
}
