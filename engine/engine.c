/* Engine life cycle: creation from configuration, the global engine. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/loader.h"
#include "engine/pool.h"

/* Options are read only as far as the caller's struct_size reaches. */
#define OPT_HAS(o, field) \
    ((o)->struct_size >= offsetof(mpce_options, field) + sizeof((o)->field))

static mpce_status copy_options(const mpce_options *in, mpce_options *out)
{
    memset(out, 0, sizeof(*out));
    out->struct_size = sizeof(*out);
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
    if (out->flags & ~(MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV | MPCE_OPT_NO_PLUGINS |
                       MPCE_OPT_NO_SYSTEM_CONFIG))
        return mpce_error(MPCE_ERR_ARG, "mpce_options.flags 0x%x has unknown bits: use "
                          "MPCE_OPT_* values", out->flags);
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

static mpce_status create(const mpce_options *opts, mpce_engine **out)
{
    mpce_engine *e = calloc(1, sizeof(*e));
    if (!e)
        return mpce_error(MPCE_ERR_NOMEM, "out of memory creating an engine");
    pthread_mutex_init(&e->lock, NULL);
    pthread_mutex_init(&e->pool_lock, NULL);
    mpce_status st = mpce_config_load(&e->cfg, opts);
    if (st != MPCE_OK) {
        pthread_mutex_destroy(&e->pool_lock);
        pthread_mutex_destroy(&e->lock);
        free(e);
        return st;
    }
    e->threads = resolve_threads(e->cfg.threads);
    /* The soft backend is what keeps every slot non-empty; disabling it
     * would leave primitives without any implementation. */
    const struct mpce_plugin_setting *soft = mpce_config_plugin(&e->cfg, "soft");
    if (soft && !soft->enabled) {
        fprintf(stderr, "mpcengine: warning: %s: [plugin.soft] enabled = no ignored: the "
                "built-in soft backend cannot be disabled\n", soft->where ? soft->where : "");
        ((struct mpce_plugin_setting *)soft)->enabled = 1;
    }
    st = mpce_loader_add_builtin(e, "soft", mpce_soft_plugin_entry);
    if (st == MPCE_OK && !e->cfg.no_plugins)
        st = mpce_loader_load_dirs(e);
    if (st == MPCE_OK && e->cfg.strict) {
        for (size_t i = 0; i < e->n_modules; i++) {
            const struct mpce_module *m = e->modules[i];
            if (m->broken) {
                st = mpce_error(MPCE_ERR_PLUGIN, "strict = yes: module %s could not be used%s%s: "
                                "remove or fix it, or set strict = no", m->path,
                                m->skipped ? ": " : " (an implementation was refused)",
                                m->skipped ? m->reason : "");
                break;
            }
        }
        if (st == MPCE_OK)
            st = mpce_registry_test_all(e);
    }
    if (st != MPCE_OK) {
        mpce_engine_free(e);
        return st;
    }
    *out = e;
    return MPCE_OK;
}

mpce_status mpce_engine_new(const mpce_options *opts, mpce_engine **out)
{
    mpce_error_clear();
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
    mpce_pool_free(e->pool);
    mpce_registry_free(e);
    mpce_config_free(&e->cfg);
    pthread_mutex_destroy(&e->pool_lock);
    pthread_mutex_destroy(&e->lock);
    free(e);
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
        if (slot->impl->flags & MPCE_IMPL_DEVICE)
            return 1;
        if (slot->impl->priority >= MPCE_POOL_FAST_PRIORITY)
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

/* The pool, started on first need; NULL: run inline. */
static struct mpce_pool *engine_pool(mpce_engine *e)
{
    struct mpce_pool *p = __atomic_load_n(&e->pool, __ATOMIC_ACQUIRE);
    if (p || e->threads < 2)
        return p;
    pthread_mutex_lock(&e->pool_lock);
    p = e->pool;
    if (!p && !e->pool_failed) {
        /* The calling thread is the last of `threads`. */
        p = mpce_pool_new(e->threads - 1);
        if (p)
            __atomic_store_n(&e->pool, p, __ATOMIC_RELEASE);
        else
            e->pool_failed = 1;
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
static mpce_engine *g_engine;      /* published with a release store */
static int g_done;
static mpce_status g_status;
static char g_error[1024];        /* detail of a failed first initialisation */
static char *g_config_path, *g_plugin_path;
static unsigned g_flags;

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static mpce_status global_init(const mpce_options *opts, int check_same)
{
    mpce_options o;
    mpce_status st = copy_options(opts, &o);
    if (st != MPCE_OK)
        return st;
    pthread_mutex_lock(&g_lock);
    if (g_done) {
        st = g_status;
        if (st != MPCE_OK)
            mpce_error(st, "%s", g_error);
        else if (check_same && (!same_str(o.config_path, g_config_path) ||
                                !same_str(o.plugin_path, g_plugin_path) || o.flags != g_flags))
            st = mpce_error(MPCE_ERR_STATE, "the global engine already exists with other "
                            "options: call mpce_init_with() once, before any other call, or "
                            "use mpce_engine_new() for a private engine");
        pthread_mutex_unlock(&g_lock);
        return st;
    }
    mpce_engine *e = NULL;
    st = create(&o, &e);
    g_status = st;
    g_done = 1;
    if (st == MPCE_OK) {
        g_config_path = o.config_path ? strdup(o.config_path) : NULL;
        g_plugin_path = o.plugin_path ? strdup(o.plugin_path) : NULL;
        g_flags = o.flags;
        __atomic_store_n(&g_engine, e, __ATOMIC_RELEASE);
    } else {
        snprintf(g_error, sizeof(g_error), "%s", mpce_last_error());
    }
    pthread_mutex_unlock(&g_lock);
    return st;
}

mpce_status mpce_init(void)
{
    mpce_error_clear();
    return global_init(NULL, 0);
}

mpce_status mpce_init_with(const mpce_options *opts)
{
    mpce_error_clear();
    return global_init(opts, 1);
}

void mpce_shutdown(void)
{
    pthread_mutex_lock(&g_lock);
    mpce_engine *e = g_engine;
    __atomic_store_n(&g_engine, NULL, __ATOMIC_RELEASE);
    g_done = 0;
    g_status = MPCE_OK;
    g_error[0] = '\0';
    free(g_config_path);
    free(g_plugin_path);
    g_config_path = g_plugin_path = NULL;
    g_flags = 0;
    pthread_mutex_unlock(&g_lock);
    mpce_engine_free(e);
}

mpce_status mpce_engine_acquire(mpce_engine *engine, mpce_engine **out)
{
    if (engine) {
        *out = engine;
        return MPCE_OK;
    }
    mpce_engine *e = __atomic_load_n(&g_engine, __ATOMIC_ACQUIRE);
    if (!e) {
        mpce_status st = global_init(NULL, 0);
        if (st != MPCE_OK) {
            *out = NULL;
            return st;
        }
        e = __atomic_load_n(&g_engine, __ATOMIC_ACQUIRE);
    }
    *out = e;
    return e ? MPCE_OK : mpce_error(MPCE_ERR_STATE, "the global engine is being shut down");
}

mpce_engine *mpce_engine_get(mpce_engine *engine)
{
    mpce_engine *e;
    return mpce_engine_acquire(engine, &e) == MPCE_OK ? e : NULL;
}
