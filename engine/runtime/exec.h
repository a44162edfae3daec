/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Running a routed op: on host memory split over the worker pool (a slice is
 * always a valid call), or as one call that an asynchronous implementation
 * finishes later; on a device, queued with a completion that a queue waits
 * for. The front ends describe an op once, as a slice function, and every
 * way of running it goes through here.
 */
#ifndef MPCE_RUNTIME_EXEC_H
#define MPCE_RUNTIME_EXEC_H

#include "engine/runtime/context.h"

struct mpce_job;

/* Slice index of count of a job, called with `call`: the op's return code. */
typedef int (*mpce_job_slice_fn)(const struct mpce_job *job, const struct mpce_call *call,
                                 size_t index, size_t count);

struct mpce_job {
    struct mpce_route route;
    mpce_job_slice_fn slice;
    const void *args;          /* the op's own arguments */
    enum mpce_op_id op;
    uint64_t units;            /* what slices divide (count 1: the whole call) */
    uint64_t min_portable;     /* units per slice worth a thread (pool.h), */
    uint64_t min_fast;         /* unless the selector measured one */
    uint64_t elements_per_unit; /* work elements (size classes) in one unit */
};

/* The call of host-memory work that finishes before the op returns. */
extern const struct mpce_call mpce_host_call;

/* What host->complete fills in; engine-owned (plugin.h keeps it opaque). */
struct mpce_completion {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int claimed; /* the first signal; later ones are ignored */
    int done;
    int status;
    char message[512];
    const struct mpce_slot *slot; /* for the error message; NULL for copies */
    const struct mpce_devrec *dev; /* the queue's device, for copies' messages (the
                                      buffers may be gone once it is signalled) */
    char what[48];             /* "ntt.mul", "upload" */
    struct mpce_completion *next; /* in its queue */
    struct mpce_buffer *bufs[3];  /* in flight until completion */
    unsigned nbufs;
    struct mpce_ctx *ctx;         /* likewise: its states stay alive */
};

void mpce_completion_init(struct mpce_completion *c, const struct mpce_slot *slot,
                          const char *what);
/* Wait, then the status with the detail set when it failed. */
mpce_status mpce_completion_wait(struct mpce_completion *c);
void mpce_completion_destroy(struct mpce_completion *c);
/* host->complete (runtime/host.c calls it). 1 if this was the first signal
 * (later ones are ignored), else 0. */
int mpce_completion_signal(struct mpce_completion *c, int status, const char *message);

/* An op returned rc, not MPCE_OP_PENDING: it has finished. Signals c for it
 * (releasing its buffers). If the plugin signalled c anyway (breaking the
 * ABI) and claimed it first, waits until that signal is done, since c must
 * outlive it. The status: status_of(c, rc) when rc is not 0 (what the
 * plugin's signal said is then dropped), else the plugin's signal's. */
mpce_status mpce_completion_returned(struct mpce_completion *c, int rc,
                                     mpce_status (*status_of)(struct mpce_completion *, int));

/* mpce_op_status for the op c was made for: a status_of for ops. */
mpce_status mpce_completion_op_status(struct mpce_completion *c, int rc);

/* A plugin's return code for op on slot as a status, the detail naming the
 * implementation and carrying what the plugin said; MPCE_OK for 0. */
mpce_status mpce_op_status(const struct mpce_slot *slot, const char *op, int rc);

/* Run a job on host memory. A call that cannot be split (one unit) on a
 * synchronous implementation runs inline: the one-block call costs the
 * slice function's call and the plugin op's, nothing more. */
mpce_status mpce_job_run_slow(mpce_engine *e, const struct mpce_job *job);

static inline mpce_status mpce_job_run(mpce_engine *e, const struct mpce_job *job)
{
    const struct mpce_slot *slot = job->route.slot;
    if (job->units <= 1u && !(slot->flags & MPCE_IMPL_ASYNC)) {
        struct mpce_call call;
        mpce_route_host_call(&job->route, &call);
        int rc = job->slice(job, &call, 0, 1);
        if (rc == 0)
            return MPCE_OK;
        return mpce_op_status(slot, mpce_op_info[job->op].name, rc);
    }
    return mpce_job_run_slow(e, job);
}

#endif
