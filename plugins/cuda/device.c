/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cuda module's device "cuda0": allocations, queues (CUDA streams),
 * copies, the completion of queued work, and the staged pipeline that
 * host-memory calls go through (cuda.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cuda/cuda.h"

int cuda_fail(const struct cuda_module *m, cudaError_t e, const char *what)
{
    m->host->set_error(m->host, "cuda0: %s failed: %s (%s)", what, cudaGetErrorString(e),
                       cudaGetErrorName(e));
    (void)cudaGetLastError();
    return e == cudaErrorMemoryAllocation ? MPCE_ERR_NOMEM : MPCE_ERR_BACKEND;
}

cudaError_t cuda_upload(void *dev, const void *host, size_t len)
{
    cudaError_t e = cudaMemcpyAsync(dev, host, len, cudaMemcpyHostToDevice, 0);
    return e == cudaSuccess ? cudaStreamSynchronize(0) : e;
}

/* ---- completions ---- */

struct cuda_done {
    const struct mpce_host *host;
    struct mpce_completion *done;
};

/* Runs on a CUDA runtime thread once the stream reaches it: everything
 * queued before has finished, or the context has failed. A stream callback,
 * not cudaLaunchHostFunc: that one is never called after a device error,
 * and the engine would wait for its completion forever; this one runs
 * exactly once, with the error. It must not call CUDA, and does not (no
 * cudaGetErrorString: the number says which). */
static void CUDART_CB cuda_done_cb(cudaStream_t s, cudaError_t status, void *arg)
{
    (void)s;
    struct cuda_done *d = arg;
    const struct mpce_host *host = d->host;
    struct mpce_completion *done = d->done;
    free(d);
    if (status == cudaSuccess) {
        host->complete(host, done, 0, NULL);
        return;
    }
    char msg[160];
    snprintf(msg, sizeof(msg), "cuda0: the queued kernel or copy failed on the GPU (cudaError %d; "
             "see cuda_runtime_api.h): the device context is lost, restart the process",
             (int)status);
    host->complete(host, done, MPCE_ERR_BACKEND, msg);
}

int cuda_finish(struct cuda_module *m, const struct mpce_call *call, cudaStream_t s,
                const char *what)
{
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        char step[96];
        snprintf(step, sizeof(step), "%s: queueing the kernel", what);
        /* What was queued before the failure may still run: wait for it,
         * since the engine may free the buffers once we return. */
        cudaStreamSynchronize(s);
        return cuda_fail(m, e, step);
    }
    if (call->done != NULL) {
        struct cuda_done *d = malloc(sizeof(*d));
        if (d != NULL) {
            *d = (struct cuda_done){.host = m->host, .done = call->done};
            e = cudaStreamAddCallback(s, cuda_done_cb, d, 0);
            if (e == cudaSuccess)
                return MPCE_OP_PENDING;
            free(d);
        }
        /* No completion could be queued: finish here instead, which the
         * ABI allows for any call. */
    }
    e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) {
        char step[96];
        snprintf(step, sizeof(step), "%s: running on the GPU", what);
        return cuda_fail(m, e, step);
    }
    return 0;
}

/* ---- the device ---- */

static int dev_alloc(void *module_state, size_t bytes, void **addr)
{
    struct cuda_module *m = module_state;
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
        char step[96];
        snprintf(step, sizeof(step), "alloc of %zu bytes (cudaMalloc)", bytes);
        return cuda_fail(m, e, step);
    }
    *addr = p;
    return 0;
}

static void dev_free(void *module_state, void *addr)
{
    struct cuda_module *m = module_state;
    cudaError_t e = cudaFree(addr);
    if (e != cudaSuccess) {
        m->host->log(m->host, MPCE_LOG_ERROR, "cuda0: cudaFree(%p): %s", addr,
                     cudaGetErrorString(e));
        (void)cudaGetLastError();
    }
}

static int dev_queue_new(void *module_state, void **queue)
{
    struct cuda_module *m = module_state;
    cudaStream_t s;
    /* Non-blocking: a queue must not wait for the legacy default stream,
     * which other code in the process may use. */
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess)
        return cuda_fail(m, e, "queue_new (cudaStreamCreateWithFlags)");
    *queue = s;
    return 0;
}

static void dev_queue_free(void *module_state, void *queue)
{
    struct cuda_module *m = module_state;
    cudaError_t e = cudaStreamDestroy((cudaStream_t)queue);
    if (e != cudaSuccess) {
        m->host->log(m->host, MPCE_LOG_ERROR, "cuda0: cudaStreamDestroy: %s",
                     cudaGetErrorString(e));
        (void)cudaGetLastError();
    }
}

static int dev_memcpy(void *module_state, const struct mpce_call *call, void *dst,
                      const void *src, size_t len, enum cudaMemcpyKind kind, const char *what)
{
    struct cuda_module *m = module_state;
    cudaStream_t s = cuda_call_stream(m, call);
    cuda_launch_begin();
    cudaError_t e = cudaMemcpyAsync(dst, src, len, kind, s);
    if (e != cudaSuccess) {
        char step[96];
        snprintf(step, sizeof(step), "%s of %zu bytes (cudaMemcpyAsync)", what, len);
        return cuda_fail(m, e, step);
    }
    return cuda_finish(m, call, s, what);
}

static int dev_upload(void *module_state, const struct mpce_call *call, void *dst,
                      const void *src, size_t len)
{
    return dev_memcpy(module_state, call, dst, src, len, cudaMemcpyHostToDevice, "upload");
}

static int dev_download(void *module_state, const struct mpce_call *call, void *dst,
                        const void *src, size_t len)
{
    return dev_memcpy(module_state, call, dst, src, len, cudaMemcpyDeviceToHost, "download");
}

/* As memmove, which the ABI asks of every device (plugin.h): CUDA leaves a
 * copy between overlapping ranges undefined, so those go through a
 * stream-ordered temporary (a copy onto itself moves nothing). */
static int dev_copy(void *module_state, const struct mpce_call *call, void *dst,
                    const void *src, size_t len)
{
    struct cuda_module *m = module_state;
    const uintptr_t d = (uintptr_t)dst, s0 = (uintptr_t)src;
    if (len == 0 || d == s0 || d >= s0 + len || s0 >= d + len)
        return d == s0 ? cuda_finish(m, call, cuda_call_stream(m, call), "copy")
                       : dev_memcpy(module_state, call, dst, src, len, cudaMemcpyDeviceToDevice,
                                    "copy");
    cudaStream_t s = cuda_call_stream(m, call);
    cuda_launch_begin();
    void *tmp = cuda_pipe_scratch(m, s, len, "copy between overlapping ranges");
    if (tmp == NULL)
        return MPCE_ERR_NOMEM;
    cudaError_t e = cudaMemcpyAsync(tmp, src, len, cudaMemcpyDeviceToDevice, s);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(dst, tmp, len, cudaMemcpyDeviceToDevice, s);
    cudaFreeAsync(tmp, s);
    if (e != cudaSuccess) {
        char step[96];
        snprintf(step, sizeof(step), "copy of %zu bytes between overlapping ranges "
                 "(cudaMemcpyAsync)", len);
        cudaStreamSynchronize(s);
        return cuda_fail(m, e, step);
    }
    return cuda_finish(m, call, s, "copy");
}

const struct mpce_device cuda_device0 = {
    .struct_size = sizeof(struct mpce_device),
    .name = "cuda0",
    .alloc = dev_alloc,
    .free = dev_free,
    .queue_new = dev_queue_new,
    .queue_free = dev_queue_free,
    .upload = dev_upload,
    .download = dev_download,
    .copy = dev_copy,
};

/* ---- host-memory calls ---- */

void *cuda_pipe_scratch(struct cuda_module *m, cudaStream_t s, size_t bytes, const char *what)
{
    void *p = NULL;
    cudaError_t e = cudaMallocAsync(&p, bytes, s);
    if (e != cudaSuccess) {
        char step[128];
        snprintf(step, sizeof(step), "%s: %zu bytes of device memory (cudaMallocAsync)", what,
                 bytes);
        cuda_fail(m, e, step);
        return NULL;
    }
    return p;
}

/* A staging buffer of the pool, or -1 (the call goes direct). A new one
 * is zeroed: pinned memory comes with whatever the allocator left in it,
 * and no call may meet bytes it did not write. */
static int stage_get(struct cuda_module *m)
{
    int got = -1;
    pthread_mutex_lock(&m->pool_lock);
    if (m->pool_free_mask != 0) {
        got = __builtin_ctz(m->pool_free_mask);
        m->pool_free_mask &= ~(1u << got);
    } else if (m->pool_made < CUDA_STAGE_POOL) {
        void *p = NULL;
        if (cudaHostAlloc(&p, CUDA_STAGE_BYTES, cudaHostAllocDefault) == cudaSuccess) {
            memset(p, 0, CUDA_STAGE_BYTES);
            got = (int)m->pool_made++;
            m->pool[got] = p;
        } else {
            (void)cudaGetLastError();
        }
    }
    pthread_mutex_unlock(&m->pool_lock);
    return got;
}

/* Back to the pool, its first `used` bytes wiped: they held this call's
 * inputs and outputs (PRG inputs may be secret), which the next call to
 * take the buffer must not find there. Only once nothing queued can still
 * touch it. */
static void stage_put(struct cuda_module *m, int i, size_t used)
{
    if (i < 0)
        return;
    /* A plain memset is not a dead store here: the buffer stays reachable
     * through the pool and is read again. */
    memset(m->pool[i], 0, used);
    pthread_mutex_lock(&m->pool_lock);
    m->pool_free_mask |= 1u << i;
    pthread_mutex_unlock(&m->pool_lock);
}

struct pipe_slot {
    cudaStream_t s;
    int stage;                 /* pool index, -1 direct */
    size_t stage_used;         /* bytes of the staging buffer written so far */
    void *d_in0, *d_in1, *d_out;
    size_t first, n;           /* the chunk in flight, n = 0: none */
};

/* Queue one chunk on a slot: inputs staged (or direct), kernel, output back
 * into the staging buffer (or directly). */
static int pipe_queue(struct cuda_module *m, const struct cuda_pipe_op *op, const void *ctx,
                      struct pipe_slot *sl, const void *in0, const void *in1, void *out,
                      size_t first, size_t n)
{
    const struct cuda_pipe_units *u = &op->units;
    const unsigned char *src[2] = {in0, in1};
    void *dev[2] = {sl->d_in0, sl->d_in1};
    unsigned char *stage = sl->stage >= 0 ? m->pool[sl->stage] : NULL;
    size_t in_off[2], out_off;
    const size_t used = cuda_pipe_stage_layout(u, n, in_off, &out_off);
    cudaError_t e = cudaSuccess;
    if (stage != NULL && used > sl->stage_used)
        sl->stage_used = used;
    for (int i = 0; i < 2 && e == cudaSuccess; i++) {
        if (u->in[i] == 0)
            continue;
        const size_t len = n * u->in[i];
        const unsigned char *from = src[i] + first * u->in[i];
        if (stage != NULL) {
            memcpy(stage + in_off[i], from, len);
            from = stage + in_off[i];
        }
        e = cudaMemcpyAsync(dev[i], from, len, cudaMemcpyHostToDevice, sl->s);
    }
    if (e != cudaSuccess)
        return cuda_fail(m, e, "staging the inputs (cudaMemcpyAsync)");
    void *dout = u->in0_is_out ? sl->d_in0 : sl->d_out;
    cuda_launch_begin();
    op->launch(ctx, sl->s, sl->d_in0, sl->d_in1, dout, first, n);
    e = cudaGetLastError();
    if (e != cudaSuccess)
        return cuda_fail(m, e, "queueing the kernel");
    unsigned char *to = stage != NULL ? stage + out_off : (unsigned char *)out + first * u->out;
    e = cudaMemcpyAsync(to, dout, n * u->out, cudaMemcpyDeviceToHost, sl->s);
    if (e != cudaSuccess)
        return cuda_fail(m, e, "copying the results back (cudaMemcpyAsync)");
    sl->first = first;
    sl->n = n;
    return 0;
}

/* Wait for a slot's chunk and, staged, move its output to the caller. */
static int pipe_drain(struct cuda_module *m, const struct cuda_pipe_op *op, struct pipe_slot *sl,
                      void *out)
{
    if (sl->n == 0)
        return 0;
    cudaError_t e = cudaStreamSynchronize(sl->s);
    if (e != cudaSuccess)
        return cuda_fail(m, e, "running on the GPU");
    if (sl->stage >= 0) {
        size_t in_off[2], out_off;
        (void)cuda_pipe_stage_layout(&op->units, sl->n, in_off, &out_off);
        memcpy((unsigned char *)out + sl->first * op->units.out,
               (unsigned char *)m->pool[sl->stage] + out_off, sl->n * op->units.out);
    }
    sl->n = 0;
    return 0;
}

int cuda_pipe_run(struct cuda_module *m, const struct cuda_pipe_op *op, const void *ctx,
                  const void *in0, const void *in1, void *out, size_t n)
{
    const struct cuda_pipe_units *u = &op->units;
    struct pipe_slot sl[2] = {{.stage = -1}, {.stage = -1}};
    struct cuda_pipe_plan plan;
    int rc = 0;

    if (cuda_pipe_plan_make(&plan, u, n, CUDA_STAGE_BYTES, CUDA_PIPE_MIN_BYTES) != 0) {
        m->host->set_error(m->host, "cuda0: %s: %zu units of this size do not fit in the "
                           "address space; make smaller calls", op->what, n);
        return MPCE_ERR_ARG;
    }
    if (plan.chunks == 0)
        return 0;
    /* Staged only with a staging buffer per slot; else direct. */
    for (unsigned k = 0; plan.staged && k < plan.slots; k++) {
        sl[k].stage = stage_get(m);
        if (sl[k].stage < 0) {
            for (unsigned j = 0; j < k; j++) {
                stage_put(m, sl[j].stage, 0);
                sl[j].stage = -1;
            }
            cuda_pipe_plan_direct(&plan);
        }
    }
    const size_t chunk = plan.chunk;
    for (unsigned k = 0; k < plan.slots && rc == 0; k++) {
        cudaError_t e = cudaStreamCreateWithFlags(&sl[k].s, cudaStreamNonBlocking);
        if (e != cudaSuccess) {
            sl[k].s = NULL;
            rc = cuda_fail(m, e, "a stream for the call (cudaStreamCreateWithFlags)");
            break;
        }
        if (u->in[0] && !(sl[k].d_in0 = cuda_pipe_scratch(m, sl[k].s, chunk * u->in[0], op->what)))
            rc = MPCE_ERR_NOMEM;
        else if (u->in[1] &&
                 !(sl[k].d_in1 = cuda_pipe_scratch(m, sl[k].s, chunk * u->in[1], op->what)))
            rc = MPCE_ERR_NOMEM;
        else if (!u->in0_is_out &&
                 !(sl[k].d_out = cuda_pipe_scratch(m, sl[k].s, chunk * u->out, op->what)))
            rc = MPCE_ERR_NOMEM;
    }
    for (size_t c = 0; rc == 0 && c < plan.chunks; c++) {
        size_t first, len;
        unsigned k;
        cuda_pipe_plan_chunk(&plan, c, &first, &len, &k);
        rc = pipe_drain(m, op, &sl[k], out);
        if (rc == 0)
            rc = pipe_queue(m, op, ctx, &sl[k], in0, in1, out, first, len);
    }
    for (unsigned k = 0; k < plan.slots; k++) {
        if (sl[k].s == NULL)
            continue;
        if (rc == 0)
            rc = pipe_drain(m, op, &sl[k], out);
        void *bufs[3] = {sl[k].d_in0, sl[k].d_in1, sl[k].d_out};
        for (int i = 0; i < 3; i++)
            if (bufs[i] != NULL)
                cudaFreeAsync(bufs[i], sl[k].s);
        /* After a failure too: the staging buffers go back to the pool
         * only once nothing queued can still write them. */
        cudaStreamSynchronize(sl[k].s);
        cudaStreamDestroy(sl[k].s);
    }
    /* The teardown's own failures follow one already reported, or are the
     * context's (sticky): none may be left for this thread's next check. */
    (void)cudaGetLastError();
    for (unsigned k = 0; k < 2; k++)
        stage_put(m, sl[k].stage, sl[k].stage_used);
    return rc;
}
