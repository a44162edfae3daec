/*
 * Engine internals shared by the core's files. Not installed.
 */
#ifndef MPCE_ENGINE_INTERNAL_H
#define MPCE_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "mpcengine.h"
#include "mpcengine/plugin.h"

#define MPCE_INTERNAL __attribute__((visibility("hidden")))

/* SPEC.md section 5's deterministic input generator (self-test and benchmark
 * inputs), one step. */
static inline uint64_t mpce_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* ---- errors (engine/error.c) ------------------------------------------- */

/* Record `fmt` as this thread's error detail and return `status`. */
mpce_status mpce_error(mpce_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Clear the detail at the start of a public call. */
void mpce_error_clear(void);

/* ---- registry (engine/registry.c) -------------------------------------- */

/* Self-test state of a registered implementation. */
enum mpce_selftest_state {
    MPCE_ST_UNTESTED = 0,
    MPCE_ST_PASS,
    MPCE_ST_FAIL,
    MPCE_ST_SKIPPED /* probe refused, or disabled by configuration/policy */
};

/* One implementation known to an engine. */
struct mpce_slot {
    const struct mpce_impl *impl;
    const char *plugin;        /* plugin name */
    const char *path;          /* module file or "(built-in)" */
    const char *sha256;        /* module file's SHA-256 (hex), "" for built-in */
    const char *version;       /* the plugin's version string */
    enum mpce_selftest_state state;
    char reason[256];          /* why skipped/failed/not selectable */
    int selectable;            /* passed, allowed by policy */
};

/*
 * Resolve an implementation for one call: name NULL or "auto" picks the
 * highest-priority selectable implementation of prim (after any pin or
 * MPCENGINE_FORCE entry); otherwise the named one, which must belong to prim
 * and be selectable. Runs the self-test lazily. Returns NULL with the error
 * detail set (MPCE_ERR_NOIMPL) on failure.
 */
const struct mpce_slot *mpce_pick(mpce_engine *engine, mpce_primitive prim, const char *name);

/*
 * For an "auto" call (name NULL or "auto", no pin or override) whose first
 * choice `first` cannot serve the context's shape: the other selectable
 * implementations of prim, highest priority first (up to max). 0 otherwise.
 */
size_t mpce_pick_fallbacks(mpce_engine *engine, mpce_primitive prim, const char *name,
                           const struct mpce_slot *first, const struct mpce_slot **out,
                           size_t max);

/* NULL -> the global engine, initialised on demand. NULL on failure (error set). */
mpce_engine *mpce_engine_get(mpce_engine *engine);
/* Like mpce_engine_get, but returns the status (the global engine's first
 * initialisation status when engine is NULL and creation failed), so a
 * public call reports MPCE_ERR_CONFIG rather than a generic failure. */
mpce_status mpce_engine_acquire(mpce_engine *engine, mpce_engine **out);

/* ---- per-context implementation state (engine/impl_state.c) -------------- */

/*
 * A context keeps one plugin state per implementation it has been called
 * with, created on first use: contexts are made once and used for many calls,
 * so keys are expanded and twiddles computed once per implementation.
 */
struct mpce_impl_state {
    const struct mpce_impl *impl;
    void *state;
    int unsupported; /* ctx_new said MPCE_ERR_NOIMPL: this shape is not served */
};

struct mpce_state_cache {
    pthread_mutex_t lock;
    size_t count;
    struct mpce_impl_state items[16];
};

/* A make function returns 0, or an mpce_status; MPCE_ERR_NOIMPL means "this
 * implementation does not serve the context's parameters" (e.g. IFMA NTT
 * with a 61-bit modulus), which "auto" answers by falling back. */
typedef int (*mpce_state_make_fn)(const struct mpce_impl *impl, const void *args, void **state);
typedef void (*mpce_state_free_fn)(const struct mpce_impl *impl, void *state);

void mpce_state_cache_init(struct mpce_state_cache *cache);
/* Existing or new state for impl; NULL with the error set on failure. */
mpce_status mpce_state_cache_get(struct mpce_state_cache *cache, const struct mpce_impl *impl,
                                 mpce_state_make_fn make, const void *args, void **state);
void mpce_state_cache_destroy(struct mpce_state_cache *cache, mpce_state_free_fn destroy);

/* The common head of every op: resolve the implementation (mpce_pick) and the
 * context's state for it. */
mpce_status mpce_dispatch(mpce_engine *engine, struct mpce_state_cache *cache,
                          mpce_primitive prim, const char *impl_name, mpce_state_make_fn make,
                          const void *args, const struct mpce_slot **slot, void **state);
/* Map an op's return code to a status with the implementation named. */
mpce_status mpce_op_status(const struct mpce_slot *slot, const char *op, int rc);

/* ---- the built-in soft backend (plugins/soft/plugin.c) ------------------ */

const struct mpce_plugin *mpce_soft_plugin_entry(const struct mpce_host *host);

#endif
