/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Buffers and queues: data that stays where the work runs.
 *
 * A buffer lives in one memory kind: "host" (ordinary memory, its bytes
 * reachable with mpce_buffer_host) or a device listed by `mpcengine list`
 * (e.g. "cuda0"), whose memory only the device's own copies can reach. The
 * *_buf operations (mpce_ntt_forward_buf, ...) take buffers and a queue of
 * the same memory kind and run on an implementation that serves it, so a
 * chain such as NTT -> mul -> inverse on device buffers never returns to the
 * host between steps.
 *
 * A queue runs its work in submission order. On a device the work is
 * asynchronous: a submitting call returns once the work is queued, and
 * mpce_queue_wait returns when everything submitted so far has finished, with
 * the first failure among it (its message in mpce_last_error). On host
 * memory every call finishes before it returns and reports its own status.
 * Argument errors are always returned by the submitting call itself, and
 * such a call queues nothing.
 *
 * What is not checked on a device: the engine cannot read device memory, so
 * NTT inputs in device buffers are not checked for being reduced mod q and
 * DPF points not for lying in the domain. Out-of-range values give
 * unspecified results, never accesses outside the buffers.
 */
#ifndef MPCENGINE_BUFFER_H
#define MPCENGINE_BUFFER_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads: a buffer may be named by calls on several threads at once. Its
 * bytes are the caller's to guard: work that writes them must not overlap
 * other work that reads or writes them, in time or, on a device, on queues
 * not yet waited for. mpce_buffer_free must not race with a call that names
 * the buffer. */
typedef struct mpce_buffer mpce_buffer;
/* Threads: a host queue may be used by any number of threads at once (each
 * call finishes before it returns). A device queue takes submissions from
 * one thread at a time: its order is the order of submission, which
 * concurrent submitters do not have. Any number of threads may wait on a
 * queue. mpce_queue_free must not race with another call on the queue.
 *
 * Device memory: the engine passes calls on device buffers and queues to the
 * device's plugin without a lock of its own, and the plugin ABI does not
 * require a device's functions (alloc, free, queue_new, the copies) to be
 * safe across threads. Unless the plugin promises more, make, copy into and
 * free one device's buffers and queues from one thread at a time. */
typedef struct mpce_queue mpce_queue;

/* The memory kind of host buffers. */
#define MPCE_MEMORY_HOST "host"

/* A queue for work on memory kind `memory` ("host" or a device name). */
MPCE_API mpce_status mpce_queue_new(mpce_engine *engine, const char *memory, mpce_queue **out);
/* Wait for everything submitted so far. MPCE_OK, or the status of the first
 * submission that failed (the queue is usable again afterwards). Threads may
 * wait on one queue at once: each returns when all work submitted before its
 * call has finished, and a failure is reported to one waiter only. */
MPCE_API mpce_status mpce_queue_wait(mpce_queue *queue);
/* Waits for outstanding work, then frees (its status is then lost: call
 * mpce_queue_wait first to see it). */
MPCE_API void mpce_queue_free(mpce_queue *queue);
MPCE_API const char *mpce_queue_memory(const mpce_queue *queue);

/* `bytes` (> 0) of memory kind `memory`; host buffers are 64-byte aligned
 * and zeroed, device buffers hold unspecified bytes until written. */
MPCE_API mpce_status mpce_buffer_new(mpce_engine *engine, const char *memory, size_t bytes,
                                     mpce_buffer **out);
/* Waits for queued work that uses the buffer, then frees it. */
MPCE_API void mpce_buffer_free(mpce_buffer *buffer);
MPCE_API size_t mpce_buffer_size(const mpce_buffer *buffer);
MPCE_API const char *mpce_buffer_memory(const mpce_buffer *buffer);
/* The bytes of a host buffer; NULL for a device buffer. */
MPCE_API void *mpce_buffer_host(mpce_buffer *buffer);

/* Copies, queued like operations. The host memory given stays in use (do not
 * change or free it) until the queue has been waited for. mpce_buffer_copy's
 * ranges may overlap (within one buffer): on every memory kind the result is
 * memmove's, as if the source were read whole before any byte is written. */
MPCE_API mpce_status mpce_buffer_upload(mpce_queue *queue, mpce_buffer *dst, size_t dst_offset,
                                        const void *src, size_t len);
MPCE_API mpce_status mpce_buffer_download(mpce_queue *queue, void *dst,
                                          const mpce_buffer *src, size_t src_offset,
                                          size_t len);
MPCE_API mpce_status mpce_buffer_copy(mpce_queue *queue, mpce_buffer *dst, size_t dst_offset,
                                      const mpce_buffer *src, size_t src_offset, size_t len);

#ifdef __cplusplus
}
#endif
#endif
