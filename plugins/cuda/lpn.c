/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cuda LPN fold: the call's index stream made on the GPU by the
 * bitsliced ctr kernel into scratch device memory, then one thread per
 * output over the table in device memory (k_lpn.h). A host-memory call
 * pipelines the outputs in chunks of a multiple of 4, each chunk a valid
 * fold of its own at c0 + 5 * first / 2, over a device copy of the table
 * that the context keeps from call to call.
 *
 * The engine cannot promise that the caller's table is unchanged between
 * calls (it is the caller's memory, often updated in place), so the cache
 * is keyed to the table's bytes, not its address: the context keeps a host
 * copy beside the device one and compares the call's table with it,
 * uploading again only where they differ. Comparing 16 << logk bytes in
 * host memory costs less than copying them from pageable memory over the
 * bus, which is what every call did before; the table is public (lpn.h),
 * so a comparison that stops at the first difference leaks nothing. A
 * context holds up to twice the table (host and device copy) until freed.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cuda/cuda.h"

/* The last table a host-memory call folded over. */
struct lpn_table_cache {
    pthread_mutex_t lock;
    void *dev;          /* 16 << logk bytes of device memory, or NULL */
    uint8_t *host;      /* the same bytes on the host */
    int valid;          /* dev and host hold one table */
    unsigned users;     /* calls folding over dev now: it is not replaced meanwhile */
};

struct cuda_lpn {
    struct cuda_module *m;
    void *prg;        /* struct cuda_prg of the seed */
    unsigned logk;
    struct lpn_table_cache tc;
};

static int lpn_new(void *module, const uint8_t *seed, unsigned logk, void **state)
{
    struct cuda_module *mod = module;
    struct cuda_lpn *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        mod->host->set_error(mod->host, "cuda0: lpn ctx_new: out of host memory");
        return MPCE_ERR_NOMEM;
    }
    int rc = cuda_prg_bs_ops.ctx_new(module, seed, 1, &s->prg);
    if (rc != 0) {
        free(s);
        return rc;
    }
    s->m = mod;
    s->logk = logk;
    pthread_mutex_init(&s->tc.lock, NULL);
    *state = s;
    return 0;
}

static void lpn_free(void *state)
{
    struct cuda_lpn *s = state;
    if (s == NULL)
        return;
    cuda_prg_bs_ops.ctx_free(s->prg);
    if (s->tc.dev != NULL)
        cudaFree(s->tc.dev);
    (void)cudaGetLastError(); /* no failure of a free may reach the next call's check */
    free(s->tc.host);
    pthread_mutex_destroy(&s->tc.lock);
    free(s);
}

static size_t lpn_blocks(size_t n)
{
    const size_t l4 = n - n % 4;
    return 5 * l4 / 2 + 3 * (n % 4);
}

/* The stream and the fold of outputs [0, n) at counter c0, queued on st. */
static void lpn_queue(const struct cuda_lpn *s, cudaStream_t st, uint64_t c0,
                      const uint8_t *table, uint8_t *out, size_t n)
{
    const struct cuda_prg *p = s->prg;
    const size_t blocks = lpn_blocks(n);
    void *words = NULL;
    /* A failure here is left for cudaGetLastError, which every caller
     * reads right after queueing. */
    if (cudaMallocAsync(&words, 16 * blocks, st) != cudaSuccess)
        return;
    cudak_prg_ctr(st, &p->keys, 0, c0, words, blocks);
    cudak_lpn_fold(st, words, s->logk, table, out, n);
    cudaFreeAsync(words, st);
}

struct lpn_call {
    const struct cuda_lpn *s;
    uint64_t c0;
    const uint8_t *table;   /* device */
};

static void pipe_launch(const void *ctx, cudaStream_t st, const void *din0, const void *din1,
                        void *dout, size_t first, size_t n)
{
    const struct lpn_call *c = ctx;
    lpn_queue(c->s, st, c->c0 + 5 * (uint64_t)first / 2, c->table, dout, n);
}

/* The cached device copy of `table`, uploaded first (on ts, waited for:
 * the pipeline's streams do not wait for ts) if the cache holds other
 * bytes and no call is using it; the call then holds it until
 * table_release. NULL, with *rc 0, when another call holds the cache over
 * other bytes (the caller uploads a copy of its own), or with *rc set
 * after explaining a failure. */
static const void *table_acquire(struct cuda_lpn *s, cudaStream_t ts, const uint8_t *table,
                                 int *rc)
{
    struct lpn_table_cache *tc = &s->tc;
    const size_t tbytes = (size_t)16 << s->logk;
    const void *got = NULL;
    *rc = 0;
    pthread_mutex_lock(&tc->lock);
    if (tc->valid && memcmp(tc->host, table, tbytes) == 0) {
        got = tc->dev;
    } else if (tc->users == 0) {
        tc->valid = 0;
        if (tc->host == NULL && (tc->host = malloc(tbytes)) == NULL) {
            s->m->host->set_error(s->m->host, "cuda0: lpn.fold: out of host memory for the "
                                  "context's copy of the table (%zu bytes)", tbytes);
            *rc = MPCE_ERR_NOMEM;
        }
        cudaError_t e = cudaSuccess;
        if (*rc == 0 && tc->dev == NULL)
            e = cudaMalloc(&tc->dev, tbytes);
        if (*rc == 0 && e == cudaSuccess)
            e = cudaMemcpyAsync(tc->dev, table, tbytes, cudaMemcpyHostToDevice, ts);
        if (*rc == 0 && e == cudaSuccess)
            e = cudaStreamSynchronize(ts);
        if (*rc == 0 && e != cudaSuccess)
            *rc = cuda_fail(s->m, e, "lpn.fold: uploading the table to the context's copy");
        if (*rc == 0) {
            memcpy(tc->host, table, tbytes);
            tc->valid = 1;
            got = tc->dev;
        }
    }
    if (got != NULL)
        tc->users++;
    pthread_mutex_unlock(&tc->lock);
    return got;
}

static void table_release(struct cuda_lpn *s)
{
    pthread_mutex_lock(&s->tc.lock);
    s->tc.users--;
    pthread_mutex_unlock(&s->tc.lock);
}

static int lpn_fold(void *state, const struct mpce_call *call, uint64_t c0, const uint8_t *table,
                    uint8_t *out, size_t n)
{
    struct cuda_lpn *s = state;
    struct cuda_module *m = s->m;
    if (call->memory == MPCE_MEM_DEVICE) {
        cudaStream_t st = cuda_call_stream(m, call);
        cuda_launch_begin();
        lpn_queue(s, st, c0, table, out, n);
        return cuda_finish(m, call, st, "lpn.fold");
    }
    if (n == 0)
        return 0;
    cudaStream_t ts;
    cudaError_t e = cudaStreamCreateWithFlags(&ts, cudaStreamNonBlocking);
    if (e != cudaSuccess)
        return cuda_fail(m, e, "lpn.fold: a stream for the call (cudaStreamCreateWithFlags)");
    int rc;
    const void *dt = table_acquire(s, ts, table, &rc);
    const int cached = dt != NULL;
    /* The cache is busy with another table: this call's own copy. */
    void *own = NULL;
    if (rc == 0 && !cached) {
        const size_t tbytes = (size_t)16 << s->logk;
        own = cuda_pipe_scratch(m, ts, tbytes, "lpn.fold: the table");
        rc = own == NULL ? MPCE_ERR_NOMEM : 0;
        if (rc == 0) {
            e = cudaMemcpyAsync(own, table, tbytes, cudaMemcpyHostToDevice, ts);
            if (e == cudaSuccess)
                e = cudaStreamSynchronize(ts);
            if (e != cudaSuccess)
                rc = cuda_fail(m, e, "lpn.fold: uploading the table");
        }
        dt = own;
    }
    if (rc == 0) {
        const struct lpn_call c = {.s = s, .c0 = c0, .table = dt};
        const struct cuda_pipe_op op = {
            .what = "lpn.fold",
            .units = {.in = {16, 0}, .out = 16, .align = 4, .in0_is_out = 1},
            .launch = pipe_launch};
        rc = cuda_pipe_run(m, &op, &c, out, NULL, out, n);
    }
    /* cuda_pipe_run returned with every chunk done or drained: no kernel
     * reads the table any more. */
    if (cached)
        table_release(s);
    if (own != NULL)
        cudaFreeAsync(own, ts);
    cudaStreamSynchronize(ts);
    cudaStreamDestroy(ts);
    (void)cudaGetLastError();
    return rc;
}

const struct mpce_lpn_ops cuda_lpn_ops = {
    .struct_size = sizeof(struct mpce_lpn_ops),
    .ctx_new = lpn_new,
    .ctx_free = lpn_free,
    .fold = lpn_fold,
};
