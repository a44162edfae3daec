/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Lifetimes: objects keep their engine alive, so using one after
 * mpce_shutdown() or mpce_engine_free() is an error (MPCE_ERR_STATE), never
 * a read of freed memory (the sanitizer and valgrind runs of this suite
 * check the "never"); a forked child gets a working pool; and a strict
 * engine that fails says why.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/runtime/context.h"
#include "tests/testutil.h"

static const unsigned quiet_flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV |
                                    MPCE_OPT_NO_SYSTEM_CONFIG | MPCE_OPT_NO_PLUGINS;

static void test_use_after_shutdown(void)
{
    mpce_options opts = {.struct_size = sizeof(opts), .flags = quiet_flags};
    CU_ASSERT_FATAL(mpce_init_with(&opts) == MPCE_OK);
    static const uint8_t key[16];
    static const uint64_t q = 17;
    uint8_t in[16] = {0}, out[16];
    uint64_t poly[8] = {1, 2, 3, 4, 5, 6, 7, 8}, res[8];
    mpce_prg *prg;
    mpce_ntt *ntt;
    mpce_queue *queue;
    mpce_buffer *buf;
    CU_ASSERT_FATAL(mpce_prg_new(NULL, key, 1, &prg) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_ntt_new(NULL, 8, &q, 1, &ntt) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_queue_new(NULL, MPCE_MEMORY_HOST, &queue) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_buffer_new(NULL, MPCE_MEMORY_HOST, 64, &buf) == MPCE_OK);
    CU_ASSERT_EQUAL(mpce_prg_ecb(prg, NULL, 0, in, out, 1), MPCE_OK);
    mpce_shutdown();

    memset(out, 0xa5, sizeof(out));
    TU_ASSERT_ERROR(mpce_prg_ecb(prg, NULL, 0, in, out, 1), MPCE_ERR_STATE, "shut down");
    CU_ASSERT(tu_error_mentions("mpce_prg_ecb"));
    CU_ASSERT_EQUAL(out[0], 0xa5);
    TU_ASSERT_ERROR(mpce_prg_ecb(prg, "prg-soft-bitslice", 0, in, out, 1), MPCE_ERR_STATE,
                    "shut down");
    TU_ASSERT_ERROR(mpce_ntt_forward(ntt, NULL, poly, res, 1), MPCE_ERR_STATE, "shut down");
    TU_ASSERT_ERROR(mpce_buffer_upload(queue, buf, 0, in, 16), MPCE_ERR_STATE, "shut down");
    /* A new global engine does not revive the old objects. */
    CU_ASSERT_FATAL(mpce_init_with(&opts) == MPCE_OK);
    TU_ASSERT_ERROR(mpce_prg_ctr(prg, NULL, 0, 0, out, 1), MPCE_ERR_STATE, "shut down");
    CU_ASSERT_EQUAL(tu_ecb_fips_c1(NULL, NULL), MPCE_OK);
    /* Freeing them is what is left, and releases the old engine. */
    mpce_prg_free(prg);
    mpce_ntt_free(ntt);
    mpce_buffer_free(buf);
    mpce_queue_free(queue);
    mpce_shutdown();
}

static void test_private_engine_freed_first(void)
{
    mpce_options opts = {.struct_size = sizeof(opts), .flags = quiet_flags};
    mpce_engine *e;
    CU_ASSERT_FATAL(mpce_engine_new(&opts, &e) == MPCE_OK);
    mpce_dpf *dpf;
    mpce_dpf_key *k0, *k1;
    CU_ASSERT_FATAL(mpce_dpf_new(e, 10, MPCE_DPF_U64, NULL, NULL, &dpf) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_dpf_gen_u64(dpf, NULL, 3, 4, NULL, NULL, &k0, &k1) == MPCE_OK);
    mpce_engine_free(e);
    uint64_t x = 3;
    uint8_t y[8];
    TU_ASSERT_ERROR(mpce_dpf_eval(dpf, NULL, k0, &x, 1, y), MPCE_ERR_STATE, "shut down");
    mpce_dpf *other = NULL;
    TU_ASSERT_ERROR(mpce_dpf_new(e, 10, MPCE_DPF_U64, NULL, NULL, &other), MPCE_ERR_STATE,
                    "shut down");
    CU_ASSERT_PTR_NULL(other);
    /* Keys outlive everything: they are plain data. */
    uint8_t ser[256];
    size_t len;
    CU_ASSERT_EQUAL(mpce_dpf_key_serialize(k0, ser, sizeof(ser), &len), MPCE_OK);
    mpce_dpf_free(dpf);
    mpce_dpf_key_free(k0);
    mpce_dpf_key_free(k1);
}

struct fork_case {
    mpce_engine *e;
    mpce_prg *prg;
    uint8_t *a, *b;
    char *conf;
};

/* Freed the same way in parent and child (valgrind checks both). */
static void fork_case_free(struct fork_case *c)
{
    mpce_prg_free(c->prg);
    mpce_engine_free(c->e);
    free(c->a);
    free(c->b);
    unlink(c->conf);
    free(c->conf);
}

/* A large call in the parent starts the pool; the child's own large call
 * must finish on a pool of its own (the parent's threads are not there)
 * with the same bytes. */
static void test_fork_gets_a_pool(void)
{
    if (TU_TSAN) { /* see testutil.h */
        printf("\n  skipped: fork with a running pool: ThreadSanitizer cannot run the child's "
               "threads\n");
        return;
    }
    if (tu_emulated() != NULL) {
        printf("\n  skipped: fork with a running pool: under %s, which cannot fork a "
               "multi-threaded program\n", tu_emulated());
        return;
    }
    char *conf = tu_write_temp("[engine]\nthreads = 3\n");
    mpce_options opts = {.struct_size = sizeof(opts), .config_path = conf,
                         .flags = quiet_flags};
    mpce_engine *e;
    CU_ASSERT_FATAL(mpce_engine_new(&opts, &e) == MPCE_OK);
    e->slice_min_shift = 64; /* split even modest calls */
    static const uint8_t key[16];
    const size_t n = 4096;
    uint8_t *a = malloc(n * 16), *b = malloc(n * 16);
    CU_ASSERT_FATAL(a && b);
    mpce_prg *prg;
    CU_ASSERT_FATAL(mpce_prg_new(e, key, 1, &prg) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_prg_ctr(prg, NULL, 0, 7, a, n) == MPCE_OK);
    struct mpce_pool *parent_pool = e->pool;
    CU_ASSERT_PTR_NOT_NULL_FATAL(parent_pool);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    struct fork_case c = {e, prg, a, b, conf};
    if (pid == 0) {
        int ok = mpce_prg_ctr(prg, NULL, 0, 7, b, n) == MPCE_OK && memcmp(a, b, n * 16) == 0 &&
                 e->pool != NULL && e->pool != parent_pool;
        fork_case_free(&c);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CU_ASSERT_FATAL(pid > 0 && waitpid(pid, &status, 0) == pid);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* The parent's pool is untouched. */
    CU_ASSERT_PTR_EQUAL(e->pool, parent_pool);
    CU_ASSERT_EQUAL(mpce_prg_ctr(prg, NULL, 0, 7, b, n), MPCE_OK);
    CU_ASSERT(memcmp(a, b, n * 16) == 0);
    fork_case_free(&c);
}

/* A strict global engine whose module fails its self-test: mpce_init and
 * every later call say why, naming module, implementation and vector. */
static void test_strict_global_reason(void)
{
    char *dir = tu_temp_dir();
    char src[4096];
    snprintf(src, sizeof(src), "%s/mod_wrong.so", TEST_MODULE_DIR);
    free(tu_copy_into(src, dir, 0755));
    char *conf = tu_write_temp("[engine]\nstrict = yes\n");
    mpce_options opts = {.struct_size = sizeof(opts), .config_path = conf, .plugin_path = dir,
                         .flags = quiet_flags & ~MPCE_OPT_NO_PLUGINS};
    TU_ASSERT_ERROR(mpce_init_with(&opts), MPCE_ERR_SELFTEST, "prg-test-wrong");
    CU_ASSERT(tu_error_mentions("mod_wrong.so"));
    CU_ASSERT(tu_error_mentions("prg.txt:"));
    TU_ASSERT_ERROR(mpce_init(), MPCE_ERR_SELFTEST, "prg-test-wrong");
    mpce_prg *prg = NULL;
    static const uint8_t key[16];
    TU_ASSERT_ERROR(mpce_prg_new(NULL, key, 1, &prg), MPCE_ERR_SELFTEST, "prg.txt:");
    mpce_shutdown();
    tu_remove_dir(dir);
    unlink(conf);
    free(conf);
}

/* Threads that start together: each calls mpce_init_with(), then makes,
 * uses and frees a context on the global engine (NULL). */
enum { INIT_THREADS = 4 };
struct init_race {
    pthread_barrier_t *go;
    mpce_engine *engine; /* the global engine this thread's context used */
    uint8_t out[16];
    int ok;
};

static void *init_race_main(void *arg)
{
    struct init_race *r = arg;
    mpce_options opts = {.struct_size = sizeof(opts), .flags = quiet_flags};
    static const uint8_t key[16];
    mpce_prg *prg = NULL;
    pthread_barrier_wait(r->go);
    r->ok = mpce_init_with(&opts) == MPCE_OK && mpce_prg_new(NULL, key, 1, &prg) == MPCE_OK &&
            mpce_prg_ctr(prg, NULL, 0, 5, r->out, 1) == MPCE_OK;
    if (prg != NULL)
        r->engine = ((struct mpce_ctx *)prg)->engine;
    mpce_prg_free(prg);
    return NULL;
}

/* The global engine made by several threads at once is made once: they
 * all use the same one and get the same bytes (.ci/tsan runs this under
 * ThreadSanitizer, which checks the locking). */
static void test_init_from_threads(void)
{
    pthread_barrier_t go;
    CU_ASSERT_FATAL(pthread_barrier_init(&go, NULL, INIT_THREADS) == 0);
    struct init_race r[INIT_THREADS];
    pthread_t th[INIT_THREADS];
    for (int i = 0; i < INIT_THREADS; i++) {
        r[i] = (struct init_race){.go = &go};
        CU_ASSERT_FATAL(pthread_create(&th[i], NULL, init_race_main, &r[i]) == 0);
    }
    for (int i = 0; i < INIT_THREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < INIT_THREADS; i++) {
        CU_ASSERT(r[i].ok);
        CU_ASSERT_PTR_NOT_NULL(r[i].engine);
        CU_ASSERT_PTR_EQUAL(r[i].engine, r[0].engine);
        CU_ASSERT(memcmp(r[i].out, r[0].out, 16) == 0);
    }
    pthread_barrier_destroy(&go);
    mpce_shutdown();
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"the global engine made by several threads at once", test_init_from_threads},
        {"objects used after mpce_shutdown: an error", test_use_after_shutdown},
        {"objects used after mpce_engine_free: an error", test_private_engine_freed_first},
        {"a forked child gets a working pool", test_fork_gets_a_pool},
        {"strict global engine: the full reason, every time", test_strict_global_reason},
        {NULL, NULL},
    };
    return tu_main("lifetime", tests);
}
