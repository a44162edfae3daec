/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cuda LPN fold: the call's index stream made on the GPU by the
 * bitsliced ctr kernel into scratch device memory, then one thread per
 * output over the table in device memory (k_lpn.h). A host-memory call
 * uploads the table once per call (the engine cannot promise that the
 * caller's table is unchanged between calls, so it is not cached), then
 * pipelines the outputs in chunks of a multiple of 4, each chunk a valid
 * fold of its own at c0 + 5 * first / 2.
 */
#include "config.h"

#include <stdlib.h>

#include "plugins/cuda/cuda.h"

struct cuda_lpn {
    struct cuda_module *m;
    void *prg;        /* struct cuda_prg of the seed */
    unsigned logk;
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
    *state = s;
    return 0;
}

static void lpn_free(void *state)
{
    struct cuda_lpn *s = state;
    if (s == NULL)
        return;
    cuda_prg_bs_ops.ctx_free(s->prg);
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

static int lpn_fold(void *state, const struct mpce_call *call, uint64_t c0, const uint8_t *table,
                    uint8_t *out, size_t n)
{
    const struct cuda_lpn *s = state;
    struct cuda_module *m = s->m;
    if (call->memory == MPCE_MEM_DEVICE) {
        cudaStream_t st = cuda_call_stream(m, call);
        cuda_launch_begin();
        lpn_queue(s, st, c0, table, out, n);
        return cuda_finish(m, call, st, "lpn.fold");
    }
    const size_t tbytes = (size_t)16 << s->logk;
    cudaStream_t ts;
    cudaError_t e = cudaStreamCreateWithFlags(&ts, cudaStreamNonBlocking);
    if (e != cudaSuccess)
        return cuda_fail(m, e, "lpn.fold: a stream for the call (cudaStreamCreateWithFlags)");
    void *dt = cuda_pipe_scratch(m, ts, tbytes, "lpn.fold: the table");
    int rc = dt == NULL ? MPCE_ERR_NOMEM : 0;
    if (rc == 0) {
        e = cudaMemcpyAsync(dt, table, tbytes, cudaMemcpyHostToDevice, ts);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(ts);
        if (e != cudaSuccess)
            rc = cuda_fail(m, e, "lpn.fold: uploading the table");
    }
    if (rc == 0) {
        const struct lpn_call c = {.s = s, .c0 = c0, .table = dt};
        const struct cuda_pipe_op op = {
            .what = "lpn.fold",
            .units = {.in = {16, 0}, .out = 16, .align = 4, .in0_is_out = 1},
            .launch = pipe_launch};
        rc = cuda_pipe_run(m, &op, &c, out, NULL, out, n);
    }
    if (dt != NULL)
        cudaFreeAsync(dt, ts);
    cudaStreamSynchronize(ts);
    cudaStreamDestroy(ts);
    return rc;
}

const struct mpce_lpn_ops cuda_lpn_ops = {
    .struct_size = sizeof(struct mpce_lpn_ops),
    .ctx_new = lpn_new,
    .ctx_free = lpn_free,
    .fold = lpn_fold,
};
