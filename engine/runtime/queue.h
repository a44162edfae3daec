/* SPDX-License-Identifier: Apache-2.0 */
/* Buffers and queues (mpcengine/buffer.h): what the front ends need of them. */
#ifndef MPCE_RUNTIME_QUEUE_H
#define MPCE_RUNTIME_QUEUE_H

#include "engine/runtime/exec.h"

struct mpce_buffer {
    mpce_engine *engine;             /* a reference */
    const struct mpce_devrec *dev;   /* NULL: host memory */
    void *addr;                      /* host pointer or device address */
    size_t size;
    pthread_mutex_t lock;
    pthread_cond_t idle;
    unsigned inflight;               /* queued work using it */
};

struct mpce_queue {
    mpce_engine *engine;             /* a reference */
    const struct mpce_devrec *dev;   /* NULL: host memory */
    void *qstate;                    /* the device's queue */
    pthread_mutex_t lock;
    struct mpce_completion *head, *tail; /* submitted, not yet waited for */
    /* Held through a whole mpce_queue_wait: a second waiter must not return
     * while the first still waits for work submitted before both. */
    pthread_mutex_t wait_lock;
};

/* The route of a call submitted to q: on a device queue, among that device's
 * implementations. */
static inline mpce_status mpce_ctx_route_queue(struct mpce_ctx *ctx, const mpce_queue *q,
                                               const char *fn, enum mpce_op_id op,
                                               uint64_t units, uint64_t elements,
                                               const char *impl, struct mpce_route *out)
{
    return q->dev ? mpce_ctx_route_slow(ctx, fn, op, units, elements, impl, q->dev, out)
                  : mpce_ctx_route(ctx, fn, op, units, elements, impl, out);
}

/* Checks shared by every *_buf call: the queue and buffers exist, belong to
 * ctx's engine and to the queue's memory kind, and each buffer holds its
 * bytes. names[i] is the argument's name for messages. */
mpce_status mpce_buf_check(const char *fn, const struct mpce_ctx *ctx, const mpce_queue *q,
                           const mpce_buffer *const *bufs, const char *const *names,
                           const uint64_t *need, unsigned n);

/* Run job on q with its buffers: host queues run it now (mpce_job_run); a
 * device queue submits it, and its failure surfaces on mpce_queue_wait. */
mpce_status mpce_job_submit(mpce_queue *q, struct mpce_ctx *ctx, const struct mpce_job *job,
                            mpce_buffer *const *bufs, unsigned nbufs);

/* The buffer's address as the op's pointer type. */
static inline void *mpce_buf_addr(const mpce_buffer *b)
{
    return b->addr;
}

#endif
