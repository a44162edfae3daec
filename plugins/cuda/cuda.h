/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cuda module's host side: its state (one GPU, device 0, as "cuda0"),
 * the device functions (device.c) and the op tables (prg.c, ntt.c, lpn.c).
 * Plain C over the CUDA runtime API; kernels only through kernels.h.
 */
#ifndef MPCE_CUDA_CUDA_H
#define MPCE_CUDA_CUDA_H

#include <stddef.h>
#include <pthread.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "mpcengine/plugin.h"
#include "plugins/cuda/kernels.h"
#include "plugins/cuda/pipe_plan.h"

/* Staging: see cuda_pipe_run below. */
#define CUDA_STAGE_BYTES ((size_t)16 << 20)
#define CUDA_STAGE_POOL 4
#define CUDA_PIPE_MIN_BYTES ((size_t)1 << 20)

struct cuda_module {
    const struct mpce_host *host;
    int device;
    struct cudaDeviceProp prop;
    int driver_version, runtime_version;
    /* Device work whose call names no queue goes here. */
    cudaStream_t stream;
    /* T0 of the T-table AES (256 words), shared by every T-table context. */
    uint32_t *t0;
    /* Pinned staging buffers of CUDA_STAGE_BYTES, made on first use. */
    pthread_mutex_t pool_lock;
    void *pool[CUDA_STAGE_POOL];
    unsigned pool_made;
    unsigned pool_free_mask;   /* bit i: pool[i] made and not in use */
};

/* A PRG context (prg.c; the LPN fold's index stream uses one too). */
struct cuda_prg {
    struct cuda_module *m;
    struct cudak_prg_keys keys;   /* keys.rk in device memory */
};

extern const struct mpce_device cuda_device0;
extern const struct mpce_prg_ops cuda_prg_bs_ops, cuda_prg_tt_ops;
extern const struct mpce_ntt_ops cuda_ntt_ops;
extern const struct mpce_lpn_ops cuda_lpn_ops;
extern const struct mpce_dpf_ops cuda_dpf_ops;

/* The stream a device-memory call runs on. */
static inline cudaStream_t cuda_call_stream(const struct cuda_module *m,
                                            const struct mpce_call *call)
{
    return call->queue != NULL ? (cudaStream_t)call->queue : m->stream;
}

/* Before a call queues kernels: drops a last error that this thread's
 * earlier CUDA calls (the application's own, or a failure of ours already
 * reported) left behind, since kernels report launch failures only through
 * cudaGetLastError() and the check after the launches must see only
 * theirs. An error of the context (a fault on the GPU) is sticky and comes
 * back there anyway. */
static inline void cuda_launch_begin(void)
{
    (void)cudaGetLastError();
}

/* After the work of a call is queued on s: MPCE_OP_PENDING with a
 * completion queued behind it when the call carries one, else wait for s.
 * Launch and run failures are explained with set_error naming `what`. */
int cuda_finish(struct cuda_module *m, const struct mpce_call *call, cudaStream_t s,
                const char *what);

/* The error of a CUDA call explained (what failed, the runtime's words),
 * MPCE_ERR_NOMEM for allocation failures, else MPCE_ERR_BACKEND. The
 * thread's last error is cleared with it: a failure reported once must not
 * come back from the cudaGetLastError() after this thread's next launch. */
int cuda_fail(const struct cuda_module *m, cudaError_t e, const char *what);

/* A context's tables to device memory, landed before it returns. A plain
 * cudaMemcpy from pageable memory may return with the DMA still in flight,
 * and it runs on the legacy stream, which the module's non-blocking streams
 * do not wait for: a kernel launched right after could read the old bytes. */
cudaError_t cuda_upload(void *dev, const void *host, size_t len);

/*
 * Host-memory calls: the data goes to the device on streams of the call's
 * own (ops may run on one state from several threads at once), the kernels
 * run, the results come back, and the call returns when all of it is done.
 * Calls of CUDA_PIPE_MIN_BYTES or more are cut into chunks that alternate
 * between two streams, each chunk's host data passing through a pinned
 * staging buffer of the module's pool, so that while the GPU copies and
 * computes one chunk the CPU stages the next (pageable memory cannot be
 * copied asynchronously). Smaller calls, units larger than a staging
 * buffer, or an exhausted pool take the direct path: one chunk, copied
 * from and to the caller's memory.
 */

struct cuda_pipe_op {
    const char *what;          /* "prg.ecb", for messages */
    /* Bytes per unit of in0, in1 (0: no such input) and out, the chunk
     * alignment, and whether in0 is the output's own old contents (the LPN
     * fold updates out). */
    struct cuda_pipe_units units;
    /* Queue units first .. first+n-1 on s: device copies of the chunk's
     * inputs in din0, din1 and room for its output in dout (dout is din0
     * when in0_is_out). */
    void (*launch)(const void *ctx, cudaStream_t s, const void *din0, const void *din1,
                   void *dout, size_t first, size_t n);
};
/* The whole call over n units; 0 or the first failure, explained. */
int cuda_pipe_run(struct cuda_module *m, const struct cuda_pipe_op *op, const void *ctx,
                  const void *in0, const void *in1, void *out, size_t n);

/* Device memory of a call's own, stream-ordered on s; NULL after
 * explaining the failure. */
void *cuda_pipe_scratch(struct cuda_module *m, cudaStream_t s, size_t bytes, const char *what);

#endif
