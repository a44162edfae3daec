/* SPDX-License-Identifier: Apache-2.0 */
/* Running ops: slices over the pool, completions of asynchronous ones. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "engine/runtime/exec.h"
#include "engine/selector/selector.h"
#include "engine/runtime/pool.h"
#include "engine/runtime/queue.h"

const struct mpce_call mpce_host_call = MPCE_CALL_HOST_INIT;

void mpce_completion_init(struct mpce_completion *c, const struct mpce_slot *slot,
                          const char *what)
{
    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    c->slot = slot;
    snprintf(c->what, sizeof(c->what), "%s", what);
}

void mpce_completion_destroy(struct mpce_completion *c)
{
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
}

static void buffer_release(struct mpce_buffer *b)
{
    pthread_mutex_lock(&b->lock);
    if (--b->inflight == 0)
        pthread_cond_broadcast(&b->idle);
    pthread_mutex_unlock(&b->lock);
}

int mpce_completion_signal(struct mpce_completion *c, int status, const char *message)
{
    /* One-shot: a plugin that completes a call and also returns its status
     * must not release the buffers twice. */
    pthread_mutex_lock(&c->lock);
    const int first = !c->claimed;
    c->claimed = 1;
    pthread_mutex_unlock(&c->lock);
    if (!first)
        return 0;
    /* Buffers first: once done is set the waiter may free c. */
    for (unsigned i = 0; i < c->nbufs; i++)
        buffer_release(c->bufs[i]);
    if (c->ctx != NULL)
        mpce_ctx_release(c->ctx);
    pthread_mutex_lock(&c->lock);
    c->status = status;
    snprintf(c->message, sizeof(c->message), "%s", message ? message : "");
    c->done = 1;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    return 1;
}

mpce_status mpce_completion_returned(struct mpce_completion *c, int rc,
                                     mpce_status (*status_of)(struct mpce_completion *, int))
{
    if (mpce_completion_signal(c, rc, NULL))
        return rc == 0 ? MPCE_OK : status_of(c, rc);
    mpce_status signalled = mpce_completion_wait(c);
    return rc != 0 ? status_of(c, rc) : signalled;
}

mpce_status mpce_completion_op_status(struct mpce_completion *c, int rc)
{
    return mpce_op_status(c->slot, c->what, rc);
}

mpce_status mpce_completion_wait(struct mpce_completion *c)
{
    pthread_mutex_lock(&c->lock);
    while (!c->done)
        pthread_cond_wait(&c->cond, &c->lock);
    int status = c->status;
    pthread_mutex_unlock(&c->lock);
    if (status == 0)
        return MPCE_OK;
    mpce_status st = mpce_status_of_rc(status);
    if (c->slot)
        return mpce_error(st, "%s: %s failed (%s)%s%s", c->slot->impl->name, c->what,
                          mpce_status_name(st), c->message[0] ? ": " : "", c->message);
    return mpce_error(st, "%s failed (%s)%s%s", c->what, mpce_status_name(st),
                      c->message[0] ? ": " : "", c->message);
}

mpce_status mpce_op_status(const struct mpce_slot *slot, const char *op, int rc)
{
    if (rc == 0)
        return MPCE_OK;
    char detail[512];
    mpce_plugin_detail_take(slot->module->host ? &slot->module->host->host : NULL, detail,
                            sizeof(detail));
    if (rc == MPCE_OP_PENDING)
        return mpce_error(MPCE_ERR_BACKEND,
                          "%s: %s returned MPCE_OP_PENDING for a call that must finish before "
                          "it returns (the plugin breaks the ABI: report it to its authors)",
                          slot->impl->name, op);
    mpce_status st = mpce_status_of_rc(rc);
    return mpce_error(st, "%s: %s failed (%s)%s%s", slot->impl->name, op, mpce_status_name(st),
                      detail[0] ? ": " : "", detail);
}

/* ---- host memory ------------------------------------------------------------ */

struct sliced {
    const struct mpce_job *job;
    size_t count;
};

static int run_slice(void *arg, size_t index)
{
    const struct sliced *s = arg;
    const struct mpce_job *job = s->job;
    struct mpce_call call;
    mpce_route_host_call(&job->route, &call);
    int rc = job->slice(job, &call, index, s->count);
    /* The pool hands the lowest failing slice's detail to the caller. */
    return rc == 0 ? 0 : (int)mpce_op_status(job->route.slot, mpce_op_info[job->op].name, rc);
}

/* An asynchronous implementation on host memory: one call, then wait for it. */
static mpce_status run_async(const struct mpce_job *job)
{
    const struct mpce_slot *slot = job->route.slot;
    const char *op = mpce_op_info[job->op].name;
    struct mpce_completion c;
    mpce_completion_init(&c, slot, op);
    struct mpce_call call;
    mpce_route_host_call(&job->route, &call);
    call.done = &c;
    int rc = job->slice(job, &call, 0, 1);
    mpce_status st = rc == MPCE_OP_PENDING
                         ? mpce_completion_wait(&c)
                         : mpce_completion_returned(&c, rc, mpce_completion_op_status);
    mpce_completion_destroy(&c);
    return st;
}

mpce_status mpce_job_run_slow(mpce_engine *e, const struct mpce_job *job)
{
    const struct mpce_slot *slot = job->route.slot;
    if (slot->flags & MPCE_IMPL_ASYNC)
        return run_async(job);
    struct sliced s = {.job = job};
    /* The selector's measured crossover for this op and implementation, in
     * work elements, wins over the front end's guess. */
    uint64_t measured = mpce_selector_slice_min(e, job->op, slot);
    if (measured == MPCE_PINS_NEVER) {
        s.count = 1;
    } else if (measured != 0 && job->elements_per_unit != 0) {
        /* Rounded up without overflow (the reader bounds measured anyway). */
        uint64_t min_units = measured / job->elements_per_unit +
                             (measured % job->elements_per_unit != 0);
        s.count = mpce_engine_slices(e, slot, job->units, min_units, min_units);
    } else {
        s.count = mpce_engine_slices(e, slot, job->units, job->min_portable, job->min_fast);
    }
    if (s.count <= 1) {
        struct mpce_call call;
        mpce_route_host_call(&job->route, &call);
        int rc = job->slice(job, &call, 0, 1);
        return mpce_op_status(slot, mpce_op_info[job->op].name, rc);
    }
    return (mpce_status)mpce_engine_run(e, s.count, run_slice, &s);
}
