/*
 * The engine object and what its core files (engine.c, loader.c, registry.c,
 * host.c) share. Not installed.
 */
#ifndef MPCE_ENGINE_ENGINE_H
#define MPCE_ENGINE_ENGINE_H

#include <pthread.h>
#include <stddef.h>

#include "engine/conf.h"
#include "engine/internal.h"

/* A module file the loader looked at: loaded, or skipped with a reason. */
struct mpce_module {
    char *path;                 /* file, or "(built-in)" */
    char *name;                 /* plugin name once known, else NULL */
    void *handle;               /* dlopen handle; NULL for built-in or skipped */
    const struct mpce_plugin *desc;
    int skipped;                /* the whole module is unusable */
    int broken;                 /* skipped for a fault, not a probe refusal (strict) */
    char reason[512];
    char sha256[65];            /* file fingerprint; "" for built-in */
};

/* A listing snapshot; kept until the engine is freed (mpce_list's promise). */
struct mpce_rows {
    struct mpce_rows *next;
    mpce_impl_info *rows;
    size_t count;
    unsigned generation;
};

struct mpce_engine {
    struct mpce_config cfg;
    pthread_mutex_t lock;       /* slots' test state, listings, auto cache */

    struct mpce_module **modules;
    size_t n_modules, cap_modules;

    struct mpce_slot **slots;   /* registration order; pointers stay put */
    size_t n_slots, cap_slots;

    const struct mpce_slot *auto_slot[MPCE_PRIM_COUNT]; /* resolved "auto" */
    unsigned generation;        /* bumped whenever a slot's state changes */
    struct mpce_rows *listings;

    /* Threads per large call (cfg.threads resolved); the pool of
     * threads - 1 workers is started by the first call worth splitting, so
     * creating an engine stays cheap and single-threaded. */
    unsigned threads;
    pthread_mutex_t pool_lock;
    struct mpce_pool *pool;     /* published with a release store */
    int pool_failed;            /* no worker could be started: run inline */
    /* Divides the per-op slice minimums by 2^shift (0 in production): lets
     * the tests cut modest calls into many slices on every backend. */
    unsigned slice_min_shift;
};

/* ---- host.c --------------------------------------------------------------- */

/* The host handed to a plugin's entry point. Interned per label for the life
 * of the process: a module may keep the pointer in static storage, and it is
 * shared by every engine that loads the module. */
const struct mpce_host *mpce_host_get(const char *label);

/* ---- registry.c ----------------------------------------------------------- */

/* Keep a module record (the engine takes ownership, also of a skipped one). */
mpce_status mpce_registry_keep_module(mpce_engine *e, struct mpce_module *m);
/* Add one implementation of module m; state SKIPPED with a reason for one
 * that was refused (probe, policy or a fault). */
mpce_status mpce_registry_add_slot(mpce_engine *e, const struct mpce_module *m,
                                   const struct mpce_impl *impl,
                                   enum mpce_selftest_state state, const char *reason);
/* The first registered implementation with this name, or NULL. */
struct mpce_slot *mpce_registry_find(mpce_engine *e, const char *name);
/* Self-test every implementation not yet tested (strict mode at creation);
 * MPCE_ERR_SELFTEST naming the first failure. */
mpce_status mpce_registry_test_all(mpce_engine *e);
void mpce_registry_free(mpce_engine *e);

#endif
