/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libmpcengine: engine life cycle, status codes, error detail, logging and
 * listings.
 *
 * Every public function returns an mpce_status. On failure the calling
 * thread's mpce_last_error() holds one line naming what went wrong (the
 * argument, file and line, key field or plugin) and what to do about it.
 *
 * What a failing call leaves behind: a call refused for its arguments, its
 * context or its implementation (MPCE_ERR_ARG, MPCE_ERR_NOIMPL,
 * MPCE_ERR_STATE, ...) writes nothing to its outputs. After an implementation
 * failed while running (MPCE_ERR_BACKEND, or MPCE_ERR_NOMEM from a plugin) the
 * outputs are unspecified: part of them may have been written. Inputs are
 * never changed, except by an in-place call (in == out), whose data is then
 * unspecified too.
 */
#ifndef MPCENGINE_COMMON_H
#define MPCENGINE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#define MPCE_API __attribute__((visibility("default")))
#else
#define MPCE_API
#endif

typedef enum mpce_status {
    MPCE_OK = 0,
    MPCE_ERR_ARG = 1,       /* an argument is NULL, zero, too large or out of range */
    MPCE_ERR_NOMEM = 2,     /* an allocation failed */
    MPCE_ERR_NOIMPL = 3,    /* the named implementation is unknown, skipped, failed
                               its self-test, not allowed by policy, or does not
                               serve this context or shape */
    MPCE_ERR_CONFIG = 4,    /* a configuration file or override is malformed */
    MPCE_ERR_PLUGIN = 5,    /* a plugin module could not be used */
    MPCE_ERR_SELFTEST = 6,  /* a known-answer test failed (fatal in strict mode) */
    MPCE_ERR_FORMAT = 7,    /* a serialized DPF key is malformed */
    MPCE_ERR_RANDOM = 8,    /* the system random generator failed */
    MPCE_ERR_IO = 9,        /* a file could not be read or written */
    MPCE_ERR_BACKEND = 10,  /* an implementation failed at run time (device error) */
    MPCE_ERR_STATE = 11     /* the engine, context or queue is not in a usable state
                               (e.g. its engine was shut down) */
} mpce_status;

/* The library's version, e.g. "0.1.0". */
MPCE_API const char *mpce_version(void);

/* Short stable name of a status, e.g. "MPCE_ERR_ARG". Never NULL. */
MPCE_API const char *mpce_status_name(mpce_status status);

/*
 * Detail of the last failing call on this thread ("" if none has failed).
 * Successful calls leave it alone. The string stays valid until the next
 * failing libmpcengine call on the same thread.
 */
MPCE_API const char *mpce_last_error(void);

/* Implementation flags, as declared by plugins and shown by listings. */
#define MPCE_IMPL_CONSTANT_TIME 0x1u  /* no secret-dependent branches or addresses */
#define MPCE_IMPL_VARIABLE_TIME 0x2u  /* leaks through timing or cache: needs allow_variable_time */
#define MPCE_IMPL_ASYNC 0x100u        /* runs asynchronously (a device queue) */

/* Primitives; also the index of the per-primitive tables. */
typedef enum mpce_primitive {
    MPCE_PRIM_PRG = 0,
    MPCE_PRIM_NTT = 1,
    MPCE_PRIM_LPN = 2,
    MPCE_PRIM_DPF = 3,
    MPCE_PRIM_COUNT = 4
} mpce_primitive;

/* "prg", "ntt", "lpn", "dpf"; NULL for an out-of-range value. */
MPCE_API const char *mpce_primitive_name(mpce_primitive prim);

/* ---- logging ---------------------------------------------------------------
 * The library never writes to stderr or stdout. What it has to say (a module
 * skipped, an unknown configuration key, a plugin's own messages) goes to the
 * log callback of the engine's options, or nowhere. */
typedef enum mpce_log_level {
    MPCE_LOG_DEBUG = 0,
    MPCE_LOG_INFO = 1,
    MPCE_LOG_WARNING = 2,
    MPCE_LOG_ERROR = 3
} mpce_log_level;

/* plugin is the plugin's name for a plugin's message, NULL for the engine's.
 * Called from whichever thread noticed, possibly several at once, sometimes
 * with the engine's locks held: the callback must not call a libmpcengine
 * function that takes an engine, context, buffer or queue (the name
 * functions, such as mpce_log_level_name, are fine). */
typedef void (*mpce_log_fn)(void *arg, mpce_log_level level, const char *plugin,
                            const char *message);

/* "debug", "info", "warning", "error". */
MPCE_API const char *mpce_log_level_name(mpce_log_level level);

/*
 * Threads: an engine may be shared by any number of threads. Every call that
 * takes one (listings, self-tests, making contexts and host buffers and
 * queues; device ones: see buffer.h) may run on several threads at once.
 * mpce_engine_free must not race with a call given that engine; the objects
 * made from it hold it, so calls on them may go on (they fail with
 * MPCE_ERR_STATE once it is freed). mpce_init, mpce_init_with, mpce_shutdown
 * and calls that pass NULL for the global engine may come from any thread at
 * any time, as long as no thread still reads a listing of a global engine
 * being shut down.
 */
typedef struct mpce_engine mpce_engine;

/* Options for an engine; zero-initialise, then set struct_size. */
typedef struct mpce_options {
    size_t struct_size;          /* sizeof(mpce_options) */
    const char *config_path;     /* read this file instead of the administrator's
                                    engine.conf and engine.conf.d (plugins.d
                                    snippets are still read); NULL: default layers */
    const char *plugin_path;     /* colon-separated module directories that replace
                                    the configured ones; NULL: from configuration */
    unsigned flags;              /* MPCE_OPT_* */
    mpce_log_fn log;             /* NULL: messages are dropped */
    void *log_arg;               /* passed to log */
    mpce_log_level log_level;    /* the least severe level passed to log */
} mpce_options;

#define MPCE_OPT_NO_USER_CONFIG 0x1u  /* ignore $XDG_CONFIG_HOME/mpcengine/engine.conf */
#define MPCE_OPT_NO_ENV         0x2u  /* ignore MPCENGINE_* environment overrides */
#define MPCE_OPT_NO_PLUGINS     0x4u  /* load no modules: only the built-in soft backend */
#define MPCE_OPT_NO_SYSTEM_CONFIG 0x8u /* skip plugins.d and the administrator's files;
                                         [tune] mode then defaults to off */
#define MPCE_OPT_NO_TUNE        0x10u /* read no pins file and never tune: "auto" is
                                         [pins] and priority order, as with
                                         [tune] mode = off */

/*
 * Initialise the global engine with default options. Idempotent and
 * thread-safe: concurrent first calls initialise once; later calls return
 * the first call's status and detail. Functions taking an mpce_engine *
 * accept NULL for the global engine and initialise it on demand.
 */
MPCE_API mpce_status mpce_init(void);

/* Like mpce_init() with explicit options; fails with MPCE_ERR_STATE if the
 * global engine already exists with different options. */
MPCE_API mpce_status mpce_init_with(const mpce_options *opts);

/*
 * Release the global engine. Contexts, buffers and queues made from it keep
 * it alive until they are freed, but every operation on them then fails with
 * MPCE_ERR_STATE; freeing them is all that is left to do. A later mpce_init()
 * makes a new global engine.
 */
MPCE_API void mpce_shutdown(void);

/* A private engine, independent of the global one (tests, embedders that
 * need their own configuration). mpce_engine_free releases it as
 * mpce_shutdown releases the global one. */
MPCE_API mpce_status mpce_engine_new(const mpce_options *opts, mpce_engine **out);
MPCE_API void mpce_engine_free(mpce_engine *engine);

/* ---- listings --------------------------------------------------------------- */

/* One row per implementation, or per module that was skipped as a whole
 * (then primitive and impl are ""). */
typedef struct mpce_impl_info {
    const char *plugin;     /* plugin name, or the module file for a skipped module */
    const char *primitive;  /* "prg", "ntt", "lpn", "dpf" or "" */
    const char *impl;       /* unique implementation name or "" */
    int priority;           /* after clamping into the class's range */
    unsigned flags;         /* MPCE_IMPL_* */
    const char *selftest;   /* "pass", "fail", "skipped" or "untested" */
    const char *reason;     /* why skipped, failed, not selectable or clamped;
                               "" otherwise */
    const char *path;       /* module file, "(built-in)" for soft */
    const char *sha256;     /* SHA-256 of the bytes loaded, in hex; "" for built-in */
    const char *version;    /* the plugin's version string and what it found on
                               this machine; "" for a skipped module */
    const char *impl_class; /* "portable", "simd", "accel" or "" */
    const char *memory;     /* memory kinds served: "host" or "host,DEVICE" */
    /* Its knobs (batch and tile sizes that change only speed): "chunk (64 128
     * [256] 512), prefetch (...)", the default in brackets, "informational"
     * after one a tune reports but never pins; "" if none. Name values with
     * "IMPL:KNOB=VALUE:..." wherever an implementation is named. */
    const char *knobs;
} mpce_impl_info;

/*
 * The engine's listing. With run_selftests != 0 every implementation not yet
 * tested is self-tested first. The array stays valid until the engine is
 * freed and is never changed: any thread may read it. So are the arrays of
 * mpce_routes and mpce_config_info.
 */
MPCE_API mpce_status mpce_list(mpce_engine *engine, int run_selftests,
                               const mpce_impl_info **rows, size_t *count);

/*
 * Run the known-answer vectors through one implementation (impl != NULL) or
 * through all of them. Counts (either may be NULL) are of implementations and
 * are written on MPCE_OK and also on MPCE_ERR_SELFTEST, which is returned
 * unless every implementation that ran passed; MPCE_ERR_NOIMPL if impl is
 * unknown or skipped (counts untouched).
 */
MPCE_API mpce_status mpce_selftest(mpce_engine *engine, const char *impl,
                                   size_t *passed, size_t *failed);

/*
 * Size classes of a call (its units: blocks, polynomial words, outputs,
 * points, keys or leaves): "auto" is resolved per (op, size class), so an
 * accelerator can win large calls without also taking one-block ones.
 * tiny: < 64 units, small: < 4096, medium: < 262144, large: the rest.
 */
#define MPCE_SIZE_CLASSES 4u

/* "tiny", "small", "medium", "large"; NULL out of range. */
MPCE_API const char *mpce_size_class_name(unsigned size_class);

/* What "auto" means for one op and size class, before any context's
 * parameters are known (an implementation that does not serve a context
 * falls through to the next in `order`). */
typedef struct mpce_route_info {
    const char *op;         /* "prg.ecb", ..., "dpf.evalall" */
    const char *size_class; /* "tiny" ... "large" */
    const char *impl;       /* the first choice; "" when none is usable */
    const char *order;      /* every usable candidate in order, space-separated
                               (where the selector measured a device's crossover
                               in the class, the order of the calls below it;
                               source ends with the larger calls': "; calls of
                               at least N work elements: ORDER") */
    const char *source;     /* "priority", the pin that decided, e.g.
                               "[pins] dpf.eval = dpf-aesni (FILE:LINE)" (with
                               ": unusable: WHY" when it cannot be used: the
                               call then fails), or the selector's measurement
                               ("measured: KEY in FILE (DATE): VERDICT") */
    const char *variant;    /* the contexts the row applies to: "" for all, or
                               "q50" / "qwide" (NTT moduli all below 2^50 or
                               not), "k16" / "kbig" (LPN tables of at most 2^16
                               blocks or more) */
    /* The knob values impl gets here ("chunk=128:prefetch=8": measured by the
     * selector or named by the pin), "" for its defaults. */
    const char *knobs;
} mpce_route_info;

/* One row per (op, variant, size class); runs the self-test of every candidate not
 * yet tested. The array stays valid until the engine is freed; asked again
 * while nothing changed, it is the same array. */
MPCE_API mpce_status mpce_routes(mpce_engine *engine, const mpce_route_info **rows,
                                 size_t *count);

/* One effective setting: its value and the layer that set it. */
typedef struct mpce_setting_info {
    const char *section;    /* "engine", "pins", "plugin.aesni" */
    const char *key;
    const char *value;
    const char *source;     /* "FILE:LINE", "MPCENGINE_FORCE", "mpce_options",
                               or "default" */
} mpce_setting_info;

/* The configuration the engine runs with: the files read in order and every
 * setting with its source. Arrays stay valid until the engine is freed. */
MPCE_API mpce_status mpce_config_info(mpce_engine *engine, const char *const **files,
                                      size_t *nfiles, const mpce_setting_info **settings,
                                      size_t *nsettings);

#ifdef __cplusplus
}
#endif
#endif
