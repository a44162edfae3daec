/*
 * libmpcengine: engine life cycle, status codes, error detail and listings.
 *
 * Every public function returns an mpce_status. On failure the calling
 * thread's mpce_last_error() holds one line naming what went wrong (the
 * argument, file and line, key field or plugin) and what to do about it.
 * A failing call writes nothing to its outputs.
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
    MPCE_ERR_NOIMPL = 3,    /* the named implementation is unknown, skipped,
                               failed its self-test, or not allowed by policy */
    MPCE_ERR_CONFIG = 4,    /* a configuration file or override is malformed */
    MPCE_ERR_PLUGIN = 5,    /* a plugin module could not be used */
    MPCE_ERR_SELFTEST = 6,  /* a known-answer test failed (fatal in strict mode) */
    MPCE_ERR_FORMAT = 7,    /* a serialized DPF key is malformed */
    MPCE_ERR_RANDOM = 8,    /* the system random generator failed */
    MPCE_ERR_IO = 9,        /* a file could not be read or written */
    MPCE_ERR_BACKEND = 10,  /* an implementation failed at run time (device error) */
    MPCE_ERR_STATE = 11     /* the engine or context is not in a usable state */
} mpce_status;

/* The library's version, e.g. "0.1.0". */
MPCE_API const char *mpce_version(void);

/* Short stable name of a status, e.g. "MPCE_ERR_ARG". Never NULL. */
MPCE_API const char *mpce_status_name(mpce_status status);

/*
 * Detail of the last failing call on this thread ("" if none). The string
 * stays valid until the next libmpcengine call on the same thread.
 */
MPCE_API const char *mpce_last_error(void);

/* Implementation flags, as shown by listings and declared by plugins. */
#define MPCE_IMPL_CONSTANT_TIME 0x1u  /* no secret-dependent branches or addresses */
#define MPCE_IMPL_VARIABLE_TIME 0x2u  /* leaks through timing or cache: needs allow_variable_time */
#define MPCE_IMPL_DEVICE        0x4u  /* runs on an accelerator */

/* Primitives; also the index of the per-primitive slot tables. */
typedef enum mpce_primitive {
    MPCE_PRIM_PRG = 0,
    MPCE_PRIM_NTT = 1,
    MPCE_PRIM_LPN = 2,
    MPCE_PRIM_DPF = 3,
    MPCE_PRIM_COUNT = 4
} mpce_primitive;

/* "prg", "ntt", "lpn", "dpf"; NULL for an out-of-range value. */
MPCE_API const char *mpce_primitive_name(mpce_primitive prim);

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
} mpce_options;

#define MPCE_OPT_NO_USER_CONFIG 0x1u  /* ignore $XDG_CONFIG_HOME/mpcengine/engine.conf */
#define MPCE_OPT_NO_ENV         0x2u  /* ignore MPCENGINE_* environment overrides */
#define MPCE_OPT_NO_PLUGINS     0x4u  /* load no modules: only the built-in soft backend */
#define MPCE_OPT_NO_SYSTEM_CONFIG 0x8u /* skip plugins.d and the administrator's files */

/*
 * Initialise the global engine with default options. Idempotent and
 * thread-safe: concurrent first calls initialise once; later calls return
 * the first call's status. Functions taking an mpce_engine * accept NULL
 * for the global engine and initialise it on demand.
 */
MPCE_API mpce_status mpce_init(void);

/* Like mpce_init() with explicit options; fails with MPCE_ERR_STATE if the
 * global engine already exists with different options. */
MPCE_API mpce_status mpce_init_with(const mpce_options *opts);

/* Free the global engine. Contexts made from it must be freed first. */
MPCE_API void mpce_shutdown(void);

/* A private engine, independent of the global one (tests, embedders that
 * need their own configuration). */
MPCE_API mpce_status mpce_engine_new(const mpce_options *opts, mpce_engine **out);
MPCE_API void mpce_engine_free(mpce_engine *engine);

/* One row per implementation, or per module that was skipped as a whole
 * (then primitive and impl are ""). */
typedef struct mpce_impl_info {
    const char *plugin;     /* plugin name, or the module file for a skipped module */
    const char *primitive;  /* "prg", "ntt", "lpn", "dpf" or "" */
    const char *impl;       /* unique implementation name or "" */
    int priority;
    unsigned flags;         /* MPCE_IMPL_* */
    const char *selftest;   /* "pass", "fail", "skipped" or "untested" */
    const char *reason;     /* why skipped, failed or not selectable; "" otherwise */
    const char *path;       /* module file, "(built-in)" for soft */
    const char *sha256;     /* SHA-256 of the module file in hex; "" for built-in
                               or a file that could not be read */
    const char *version;    /* the plugin's version string, which may say what
                               it found on this machine; "" for a skipped module */
} mpce_impl_info;

/*
 * The engine's listing. With run_selftests != 0 every implementation not yet
 * tested is self-tested first. The array stays valid until the engine is freed.
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

/* The implementation "auto" resolves to for a primitive (NULL on error). */
MPCE_API const char *mpce_resolve(mpce_engine *engine, mpce_primitive prim);

#ifdef __cplusplus
}
#endif
#endif
