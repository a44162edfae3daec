/* SPDX-License-Identifier: Apache-2.0 */
/* Engine life cycle: creation from configuration, references, the global
 * engine, and the worker pool's start. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/runtime/loader.h"
#include "engine/runtime/pool.h"
#include "engine/selector/selector.h"

/* Options are read only as far as the caller's struct_size reaches. */
#define OPT_HAS(o, field) \
    ((o)->struct_size >= offsetof(mpce_options, field) + sizeof((o)->field))

static mpce_status copy_options(const mpce_options *in, mpce_options *out)
{
    memset(out, 0, sizeof(*out));
    out->struct_size = sizeof(*out);
    out->log_level = MPCE_LOG_INFO;
    if (!in)
        return MPCE_OK;
    if (in->struct_size < offsetof(mpce_options, config_path) + sizeof(in->config_path))
        return mpce_error(MPCE_ERR_ARG, "mpce_options.struct_size is %zu: set it to "
                          "sizeof(mpce_options) after zero-initialising the struct",
                          in->struct_size);
    out->config_path = in->config_path;
    if (OPT_HAS(in, plugin_path))
        out->plugin_path = in->plugin_path;
    if (OPT_HAS(in, flags))
        out->flags = in->flags;
    if (OPT_HAS(in, log))
        out->log = in->log;
    if (OPT_HAS(in, log_arg))
        out->log_arg = in->log_arg;
    if (OPT_HAS(in, log_level))
        out->log_level = in->log_level;
    if (out->flags & ~(MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV | MPCE_OPT_NO_PLUGINS |
                       MPCE_OPT_NO_SYSTEM_CONFIG | MPCE_OPT_NO_TUNE))
        return mpce_error(MPCE_ERR_ARG, "mpce_options.flags 0x%x has unknown bits: use "
                          "MPCE_OPT_* values", out->flags);
    if ((unsigned)out->log_level > MPCE_LOG_ERROR)
        return mpce_error(MPCE_ERR_ARG, "mpce_options.log_level %d is not an mpce_log_level",
                          (int)out->log_level);
    return MPCE_OK;
}

/* [engine] threads: 0 means one per online CPU, within the engine's bound. */
static unsigned resolve_threads(unsigned configured)
{
    if (configured)
        return configured;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        return 1;
    return cpus > (long)MPCE_CONFIG_MAX_THREADS ? MPCE_CONFIG_MAX_THREADS : (unsigned)cpus;
}

static void engine_destroy(mpce_engine *e)
{
    mpce_pool_free(e->pool);
    /* Another process's pools: mpce_pool_free only frees their memory. */
    for (size_t i = 0; i < e->n_pools_abandoned; i++)
        mpce_pool_free(e->pools_abandoned[i]);
    free(e->pools_abandoned);
    mpce_dispatch_free(e);
    mpce_census_free(e);
    mpce_selector_free(e);
    while (e->kept) {
        struct mpce_keep *k = e->kept;
        e->kept = k->next;
        free(k);
    }
    mpce_registry_free(e);
    mpce_config_free(&e->cfg);
    pthread_mutex_destroy(&e->pool_lock);
    pthread_mutex_destroy(&e->lock);
    free(e);
}

static mpce_status create(const mpce_options *opts, mpce_engine **out)
{
    mpce_engine *e = calloc(1, sizeof(*e));
    if (!e)
        return mpce_error(MPCE_ERR_NOMEM, "out of memory creating an engine");
    e->refs = 1;
    e->log.fn = opts->log;
    e->log.arg = opts->log_arg;
    e->log.level = opts->log_level;
    pthread_mutex_init(&e->lock, NULL);
    pthread_mutex_init(&e->pool_lock, NULL);
    mpce_status st = mpce_config_load(&e->cfg, opts, &e->log);
    if (st != MPCE_OK) {
        pthread_mutex_destroy(&e->pool_lock);
        pthread_mutex_destroy(&e->lock);
        free(e);
        return st;
    }
    e->threads = resolve_threads(e->cfg.threads);
    st = mpce_loader_add_builtin(e, MPCE_BUILTIN_PLUGIN, mpce_soft_plugin_entry);
    e->create_opts = opts;
    if (st == MPCE_OK && !e->cfg.no_plugins)
        st = mpce_loader_load_dirs(e);
    e->create_opts = NULL;
    if (st == MPCE_OK && e->cfg.strict)
        st = mpce_registry_strict_check(e);
    if (st == MPCE_OK)
        st = mpce_selector_start(e, opts);
    if (st == MPCE_OK)
        mpce_census_start(e);
    if (st == MPCE_OK)
        st = mpce_dispatch_build(e);
    if (st != MPCE_OK) {
        /* Freeing runs plugin code (fini) that may fail and explain itself:
         * keep this failure's detail. */
        char detail[1024];
        snprintf(detail, sizeof(detail), "%s", mpce_last_error());
        engine_destroy(e);
        return mpce_error(st, "%s", detail);
    }
    *out = e;
    return MPCE_OK;
}

void *mpce_engine_keep(mpce_engine *e, size_t bytes)
{
    /* The header is padded to max_align_t so the caller's data is aligned. */
    const size_t head = (sizeof(struct mpce_keep) + _Alignof(max_align_t) - 1) &
                        ~(_Alignof(max_align_t) - 1);
    if (bytes > SIZE_MAX - head)
        return NULL;
    struct mpce_keep *k = calloc(1, head + bytes);
    if (k == NULL)
        return NULL;
    k->next = e->kept;
    e->kept = k;
    return (char *)k + head;
}

void mpce_engine_ref(mpce_engine *e)
{
    __atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
}

void mpce_engine_unref(mpce_engine *e)
{
    if (e != NULL && __atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0)
        engine_destroy(e);
}

mpce_status mpce_engine_closed_error(const char *fn)
{
    return mpce_error(MPCE_ERR_STATE, "%s: the engine this object was made from has been shut "
                      "down (mpce_shutdown or mpce_engine_free); free the object, and make a "
                      "new one from a live engine", fn);
}

mpce_status mpce_engine_new(const mpce_options *opts, mpce_engine **out)
{
    if (!out)
        return mpce_error(MPCE_ERR_ARG, "mpce_engine_new: out must not be NULL");
    mpce_options o;
    mpce_status st = copy_options(opts, &o);
    if (st != MPCE_OK)
        return st;
    return create(&o, out);
}

void mpce_engine_free(mpce_engine *e)
{
    if (!e)
        return;
    __atomic_store_n(&e->closed, 1, __ATOMIC_RELEASE);
    mpce_engine_unref(e);
}

/* ---- splitting large calls ----------------------------------------------- */

unsigned mpce_engine_threads(const mpce_engine *e)
{
    return e->threads ? e->threads : 1;
}

size_t mpce_engine_slices(const mpce_engine *e, const struct mpce_slot *slot, uint64_t units,
                          uint64_t min_portable, uint64_t min_fast)
{
    unsigned t = mpce_engine_threads(e);
    uint64_t min_units = min_portable;
    if (slot) {
        /* A device queues the work itself; CPU threads would only contend
         * for its submission. */
        if ((slot->flags & MPCE_IMPL_ASYNC) || (slot->memory & MPCE_MEM_DEVICE))
            return 1;
        if (slot->impl_class != MPCE_CLASS_PORTABLE)
            min_units = min_fast;
    }
    min_units = e->slice_min_shift >= 64 ? 0 : min_units >> e->slice_min_shift;
    if (min_units == 0)
        min_units = 1;
    if (t < 2 || units / min_units < 2)
        return 1;
    uint64_t most = (uint64_t)t * MPCE_POOL_SLICES_PER_THREAD;
    uint64_t n = units / min_units;
    return (size_t)(n < most ? n : most);
}

/* Forks seen by this process: a child's pool has no threads, so an engine
 * that finds the count changed starts a new one. */
static unsigned fork_generation;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void after_fork_in_child(void)
{
    __atomic_add_fetch(&fork_generation, 1, __ATOMIC_RELAXED);
}

static void register_atfork(void)
{
    pthread_atfork(NULL, NULL, after_fork_in_child);
}

/* The pool, started on first need; NULL: run inline. */
static struct mpce_pool *engine_pool(mpce_engine *e)
{
    if (e->threads < 2)
        return NULL;
    pthread_once(&atfork_once, register_atfork);
    unsigned gen = __atomic_load_n(&fork_generation, __ATOMIC_RELAXED);
    struct mpce_pool *p = __atomic_load_n(&e->pool, __ATOMIC_ACQUIRE);
    if (p && e->pool_fork_generation == gen)
        return p;
    pthread_mutex_lock(&e->pool_lock);
    p = e->pool;
    if (p && e->pool_fork_generation != gen) {
        /* The parent's pool: its threads did not survive fork, and its lock
         * may have been held by one of them. Abandoned, never touched; kept
         * only so the engine can free its memory. */
        struct mpce_pool **tmp =
            realloc(e->pools_abandoned, (e->n_pools_abandoned + 1) * sizeof(*tmp));
        if (tmp) {
            e->pools_abandoned = tmp;
            tmp[e->n_pools_abandoned++] = p;
        }
        p = NULL;
        e->pool = NULL;
        e->pool_failed = 0;
    }
    if (!p && !e->pool_failed) {
        /* The calling thread is the last of `threads`. */
        p = mpce_pool_new(e->threads - 1);
        if (p) {
            e->pool_fork_generation = gen;
            __atomic_store_n(&e->pool, p, __ATOMIC_RELEASE);
        } else {
            e->pool_failed = 1;
        }
    }
    pthread_mutex_unlock(&e->pool_lock);
    return p;
}

int mpce_engine_run(mpce_engine *e, size_t count, mpce_slice_fn fn, void *arg)
{
    struct mpce_pool *p = count > 1 ? engine_pool(e) : NULL;
    if (p)
        return mpce_pool_run(p, count, fn, arg);
    /* Inline, in order: the first failure is the lowest slice's, as on the
     * pool. */
    for (size_t i = 0; i < count; i++) {
        int rc = fn(arg, i);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ---- the global engine ------------------------------------------------- */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static mpce_engine *g_engine;      /* holds one reference */
static int g_done;
static mpce_status g_status;
static char g_error[1024];        /* detail of a failed first initialisation */
static char *g_config_path, *g_plugin_path;
static mpce_options g_opts;

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Applications rarely call mpce_shutdown(): the global engine's census is
 * written when the process exits. Only if g_lock is free: another thread may
 * hold it in mpce_init() waiting seconds on the probe helper, or be stopped
 * for good holding it, and exit() must never hang on it; the counts are
 * lost instead. */
static void census_at_exit(void)
{
    if (pthread_mutex_trylock(&g_lock) != 0)
        return;
    if (g_engine != NULL)
        mpce_census_flush(g_engine);
    pthread_mutex_unlock(&g_lock);
}

/* g_lock held. */
static mpce_status global_init_locked(const mpce_options *o, int check_same)
{
    if (g_done) {
        mpce_status st = g_status;
        if (st != MPCE_OK)
            mpce_error(st, "%s", g_error);
        else if (check_same && (!same_str(o->config_path, g_config_path) ||
                                !same_str(o->plugin_path, g_plugin_path) ||
                                o->flags != g_opts.flags || o->log != g_opts.log ||
                                o->log_arg != g_opts.log_arg || o->log_level != g_opts.log_level))
            st = mpce_error(MPCE_ERR_STATE, "the global engine already exists with other "
                            "options: call mpce_init_with() once, before any other call, or "
                            "use mpce_engine_new() for a private engine");
        return st;
    }
    mpce_engine *e = NULL;
    mpce_status st = create(o, &e);
    g_status = st;
    g_done = 1;
    if (st == MPCE_OK) {
        g_config_path = o->config_path ? strdup(o->config_path) : NULL;
        g_plugin_path = o->plugin_path ? strdup(o->plugin_path) : NULL;
        g_opts = *o;
        g_engine = e;
        static int exit_hook;
        if (e->census != NULL && !exit_hook)
            exit_hook = atexit(census_at_exit) == 0;
    } else {
        snprintf(g_error, sizeof(g_error), "%s", mpce_last_error());
    }
    return st;
}

static mpce_status global_init(const mpce_options *opts, int check_same)
{
    mpce_options o;
    mpce_status st = copy_options(opts, &o);
    if (st != MPCE_OK)
        return st;
    pthread_mutex_lock(&g_lock);
    st = global_init_locked(&o, check_same);
    pthread_mutex_unlock(&g_lock);
    return st;
}

mpce_status mpce_init(void)
{
    return global_init(NULL, 0);
}

mpce_status mpce_init_with(const mpce_options *opts)
{
    return global_init(opts, 1);
}

void mpce_shutdown(void)
{
    pthread_mutex_lock(&g_lock);
    mpce_engine *e = g_engine;
    g_engine = NULL;
    g_done = 0;
    g_status = MPCE_OK;
    g_error[0] = '\0';
    free(g_config_path);
    free(g_plugin_path);
    g_config_path = g_plugin_path = NULL;
    memset(&g_opts, 0, sizeof(g_opts));
    pthread_mutex_unlock(&g_lock);
    mpce_engine_free(e);
}

mpce_status mpce_engine_acquire(mpce_engine *engine, mpce_engine **out)
{
    if (engine) {
        if (mpce_engine_is_closed(engine)) {
            *out = NULL;
            return mpce_error(MPCE_ERR_STATE, "the engine given has been shut down "
                              "(mpce_engine_free): make new objects from a live engine");
        }
        mpce_engine_ref(engine);
        *out = engine;
        return MPCE_OK;
    }
    /* The reference is taken under the lock: mpce_shutdown may otherwise
     * drop the last one in between. */
    mpce_options o;
    copy_options(NULL, &o);
    pthread_mutex_lock(&g_lock);
    mpce_status st = g_engine ? MPCE_OK : global_init_locked(&o, 0);
    if (st == MPCE_OK)
        mpce_engine_ref(g_engine);
    *out = st == MPCE_OK ? g_engine : NULL;
    pthread_mutex_unlock(&g_lock);
    return st;
}
