/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the core's files share: errors and logging, the records of modules,
 * devices and implementations, and the engine object. Not installed; no
 * backend includes it.
 *
 *   runtime/  life cycle, configuration, loader, registry, dispatch, contexts,
 *             calls, queues and buffers, worker pool
 *   api/      the public front ends: argument checks, then one routed call
 *   spec/     SPEC.md code the core owns: NTT parameters, DPF key format
 *   verify/   known-answer vectors, the self-test and its libffi op runner
 */
#ifndef MPCE_ENGINE_INTERNAL_H
#define MPCE_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/ops.h"
#include "engine/runtime/conf.h"
#include "mpcengine.h"
#include "mpcengine/plugin.h"

/* ---- errors (runtime/error.c) ------------------------------------------------ */

/* Record `fmt` as this thread's error detail and return `status`. */
mpce_status mpce_error(mpce_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A plugin's explanation (host->set_error) waits here, tagged with its host,
 * until the engine reports the failure it explains: successful calls never
 * touch thread-local storage. */
void mpce_plugin_detail_set(const struct mpce_host *host, const char *msg);
/* The detail `host` left on this thread since the last take, or "". */
const char *mpce_plugin_detail_take(const struct mpce_host *host, char *buf, size_t len);

/* "portable", "simd", "accel" for MPCE_CLASS_*; "" out of range. */
const char *mpce_impl_class_name(unsigned impl_class);

/* A plugin's int return as a status: unknown codes become MPCE_ERR_BACKEND. */
static inline mpce_status mpce_status_of_rc(int rc)
{
    return (rc > 0 && rc <= MPCE_ERR_STATE) ? (mpce_status)rc : MPCE_ERR_BACKEND;
}

/* ---- logging (runtime/log.c) ---------------------------------------------------- */

struct mpce_logger {
    mpce_log_fn fn;          /* NULL: dropped */
    void *arg;
    mpce_log_level level;    /* the least severe level passed on */
};

/* plugin NULL for the engine's own messages. */
void mpce_log(const struct mpce_logger *log, mpce_log_level level, const char *plugin,
              const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void mpce_vlog(const struct mpce_logger *log, mpce_log_level level, const char *plugin,
               const char *fmt, va_list ap);

/* ---- modules, devices and implementations ------------------------------------------ */

/* The host handed to one module of one engine (runtime/host.c). */
struct mpce_host_rec {
    struct mpce_host host;
    mpce_engine *engine;
    char plugin[64];           /* the plugin's name, or the file's while unknown */
};

/* Devices one module may declare. */
#define MPCE_MODULE_MAX_DEVICES 16

/* A device the loader refused, and why, for the implementations that name
 * it and for strict mode. */
struct mpce_device_fault {
    const struct mpce_device *dev; /* as the module declared it */
    char why[256];
};

/* A module file the loader looked at: loaded, or skipped with a reason. */
struct mpce_module {
    char *path;                /* file, or "(built-in)" */
    char *name;                /* plugin name once known */
    void *handle;              /* dlopen handle; NULL for built-in or skipped */
    int fd;                    /* the descriptor it was loaded from, -1 if none */
    const struct mpce_plugin *desc;
    unsigned minor;            /* the ABI minor it was built for */
    struct mpce_host_rec *host;
    void *state;               /* from init */
    int inited;                /* fini is owed */
    int skipped;               /* the whole module is unusable */
    int broken;                /* skipped for a fault, not a refusal (strict) */
    int init_no_memory;        /* its init returned MPCE_ERR_NOMEM: the engine fails */
    int vet_failed;            /* crashed, hung or leaked in the probe helper's vet
                                  (runtime/vet.h): never loaded, listed as failed */
    char reason[512];
    struct mpce_device_fault device_faults[MPCE_MODULE_MAX_DEVICES];
    size_t n_device_faults;
    char sha256[65];           /* of the bytes loaded; "" for built-in */
    unsigned long long size;   /* of the file loaded; 0 for built-in */
    long long mtime;
    char version[320];         /* version, and what describe() found */
};

/* A device of a loaded module: a memory kind applications can ask for. */
struct mpce_devrec {
    const char *name;
    struct mpce_device ops;    /* copied once checked */
    struct mpce_module *module;
};

/* Whether [a, a+alen) and [b, b+blen) share a byte: the argument checks
 * refuse outputs that partly overlap inputs, which sliced calls would
 * corrupt. */
static inline int mpce_ranges_overlap(const void *a, size_t alen, const void *b, size_t blen)
{
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + blen && pb < pa + alen;
}

/* The memory kind a device record stands for: its name, or "host" (NULL). */
static inline const char *mpce_memory_kind_name(const struct mpce_devrec *dev)
{
    return dev ? dev->name : MPCE_MEMORY_HOST;
}

enum mpce_selftest_state {
    MPCE_ST_UNTESTED = 0,
    MPCE_ST_PASS,
    MPCE_ST_FAIL,
    MPCE_ST_SKIPPED /* refused at load, by probe, configuration or policy */
};

/* One implementation known to an engine. Everything but the test state is
 * fixed once the engine is created. */
struct mpce_slot {
    unsigned index;                 /* dense: contexts keep states by it */
    const struct mpce_impl *impl;
    union mpce_ops ops;             /* normalized (ops.h) */
    struct mpce_module *module;
    const struct mpce_devrec *device; /* the device it serves, or NULL */
    mpce_primitive prim;
    unsigned impl_class;
    int priority;                   /* clamped into the class's range */
    unsigned flags;
    unsigned memory;
    enum mpce_selftest_state state; /* published with release stores */
    char reason[320];               /* why skipped/failed/not selectable */
    int broken;                     /* skipped for a fault, not a refusal (strict) */
    char note[160];                 /* load-time remark (a clamped priority) */
    /* Its knobs (ABI 2.2, checked at load), and per knob the ops it
     * changes as a bit mask of enum mpce_op_id. */
    unsigned n_knobs;
    const struct mpce_knob *knobs[MPCE_KNOB_MAX];
    uint32_t knob_ops[MPCE_KNOB_MAX];
};

/* ---- dispatch (runtime/dispatch.c) --------------------------------------------------- */

/* "auto" for one op and size class: candidates in order, and why. */
struct mpce_route_entry {
    const uint16_t *cand;           /* slot indices */
    unsigned n;
    int pinned;                     /* an explicit pin: no fallback */
    const char *pin_name;           /* the pinned implementation's name */
    const char *source;             /* "priority", the pin's source, or the
                                       selector's row ("pins FILE: KEY ...") */
    /* The measured row's knob values, which apply to its winner only. */
    const struct mpce_slot *knob_slot;
    uint32_t knobs[MPCE_KNOB_MAX];
    /* The row's measured crossover (work elements, 0: none): calls of the
     * class of at least that many go through `above` (its device
     * implementation first), smaller ones through cand (the best host
     * implementation first). Both hold the same n slots. */
    uint64_t crossover;
    const uint16_t *above;
};

/* Variants of a context's parameters that are routed apart
 * (selector/shape.c: the NTT's modulus width, the LPN table's size). */
#define MPCE_VARIANTS 2u

/* Built from pins and priorities, published whole; superseded tables stay
 * until the engine is freed, since contexts may still be reading them. */
struct mpce_table {
    /* [op][variant][size class]: the variant is the context's (selector.h). */
    struct mpce_route_entry e[MPCE_OP_COUNT][MPCE_VARIANTS][MPCE_SIZE_CLASSES];
    uint16_t *pool;
    uint16_t *pool_above;           /* the entries' above orders */
    char *sources;                  /* the selector rows' source strings */
    struct mpce_table *older;
};

/* The size class of a call of `elements` work elements. */
static inline unsigned mpce_size_class(uint64_t elements)
{
    return elements < 64u ? 0u : elements < 4096u ? 1u : elements < 262144u ? 2u : 3u;
}

/* Build and publish the table from the configuration and the slots. */
mpce_status mpce_dispatch_build(mpce_engine *e);
void mpce_dispatch_free(mpce_engine *e);

/* ---- the engine ------------------------------------------------------------------ */

/* Memory handed to callers that stays valid until the engine is freed
 * (listings). */
struct mpce_keep {
    struct mpce_keep *next;
};

struct mpce_selector;

struct mpce_engine {
    int refs;                       /* the owner's (global or mpce_engine_new) + one
                                       per context, buffer and queue */
    int closed;                     /* shut down: operations refuse */
    struct mpce_config cfg;
    struct mpce_logger log;
    pthread_mutex_t lock;           /* self-test state, listings */

    struct mpce_module **modules;
    size_t n_modules, cap_modules;
    struct mpce_slot **slots;       /* registration order; slots[i]->index == i */
    size_t n_slots, cap_slots;
    struct mpce_devrec **devices;   /* pointers stay put */
    size_t n_devices, cap_devices;

    struct mpce_selector *selector; /* pins in use (engine/selector) */
    uint64_t *census;               /* calls per op, variant, class; NULL: no census */
    struct mpce_table *table;       /* published with a release store */
    unsigned generation;            /* bumped whenever a slot's state changes */
    struct mpce_keep *kept;         /* listings handed out */
    const void *listing;            /* the last mpce_list snapshot ... */
    size_t listing_count;
    unsigned listing_generation;    /* ... and the generation it shows */
    const void *routes;             /* the last mpce_routes snapshot ... */
    size_t routes_count;
    unsigned routes_generation;     /* ... the generation ... */
    const void *routes_table;       /* ... and the table it shows */
    const void *config_rows;        /* mpce_config_info's rows, made once */

    /* Threads per large call ([engine] threads resolved); the pool of
     * threads - 1 workers starts with the first call worth splitting. */
    unsigned threads;
    pthread_mutex_t pool_lock;
    struct mpce_pool *pool;         /* published with a release store */
    unsigned pool_fork_generation;  /* the process's fork count when it started */
    struct mpce_pool **pools_abandoned; /* a forked parent's: memory freed with the
                                           engine, never its locks or threads */
    size_t n_pools_abandoned;
    int pool_failed;
    /* Divides the per-op slice minimums by 2^shift (0 in production): lets
     * the tests cut modest calls into many slices on every backend. */
    unsigned slice_min_shift;
    /* The options the engine is being created with, while it is (the
     * vetting helper gets the same ones); NULL afterwards. */
    const mpce_options *create_opts;
};

/* NULL -> the global engine, initialised on demand; *out holds a reference
 * the caller releases with mpce_engine_unref. */
mpce_status mpce_engine_acquire(mpce_engine *engine, mpce_engine **out);
void mpce_engine_ref(mpce_engine *e);
void mpce_engine_unref(mpce_engine *e);

/* `bytes` of zeroed memory kept until the engine is freed; e->lock held.
 * NULL when out of memory. */
void *mpce_engine_keep(mpce_engine *e, size_t bytes);

/* The error of an operation on an object of a shut-down engine. */
mpce_status mpce_engine_closed_error(const char *fn);

static inline int mpce_engine_is_closed(const mpce_engine *e)
{
    return __atomic_load_n(&e->closed, __ATOMIC_RELAXED);
}

/* ---- registry (runtime/registry.c) ---------------------------------------------------- */

/* Keep a module record (the engine takes ownership, also of a skipped one). */
mpce_status mpce_registry_keep_module(mpce_engine *e, struct mpce_module *m);
/* Add one implementation; SKIPPED with a reason for one that was refused. */
mpce_status mpce_registry_add_slot(mpce_engine *e, struct mpce_module *m,
                                   const struct mpce_impl *impl, const union mpce_ops *ops,
                                   const struct mpce_devrec *dev, int priority,
                                   enum mpce_selftest_state state, const char *reason,
                                   int broken, const char *note);
mpce_status mpce_registry_add_device(mpce_engine *e, struct mpce_module *m,
                                     const struct mpce_device *dev);
struct mpce_slot *mpce_registry_find(mpce_engine *e, const char *name);
const struct mpce_devrec *mpce_registry_device(const mpce_engine *e, const char *name);
/* Self-test s if it is untested (lock taken inside). */
void mpce_registry_ensure_tested(mpce_engine *e, struct mpce_slot *s);
/* Whether the policy lets s be used at all. */
int mpce_registry_allowed(const mpce_engine *e, const struct mpce_slot *s);
/* Why a slot cannot be used, as a status with the detail set; MPCE_OK if it
 * can (it is tested first). `what` prefixes the message (a pin's source). */
mpce_status mpce_registry_usable(mpce_engine *e, struct mpce_slot *s, const char *what);

/* Whether s is a valid plugin, device or implementation name: 1 to
 * MPCE_NAME_MAX of A-Z a-z 0-9 - _ . + (names appear in files, listings and
 * messages). */
#define MPCE_NAME_MAX 63
int mpce_registry_valid_name(const char *s);
/* Strict mode at creation: every module usable, every self-test passed. */
mpce_status mpce_registry_strict_check(mpce_engine *e);
void mpce_registry_free(mpce_engine *e);

static inline enum mpce_selftest_state mpce_slot_state(const struct mpce_slot *s)
{
    return __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
}

/* ---- the built-in soft backend (plugins/soft/plugin.c) --------------------------- */

const struct mpce_plugin *mpce_soft_plugin_entry(void);

/* Milliseconds on CLOCK_MONOTONIC (engine/runtime/clock.c): deadlines for
 * helpers, locks and timeouts, which the wall clock's steps must not move. */
long long mpce_monotonic_ms(void);

#endif
