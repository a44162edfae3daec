/* SPDX-License-Identifier: Apache-2.0 */
/* Buffers and queues (mpcengine/buffer.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/runtime/queue.h"

/* "host" or a device of e; NULL with the error set otherwise. */
static mpce_status memory_kind(mpce_engine *e, const char *fn, const char *memory,
                               const struct mpce_devrec **dev)
{
    *dev = NULL;
    if (memory == NULL)
        return mpce_error(MPCE_ERR_ARG, "%s: memory is NULL: name \"host\" or a device from "
                          "`mpcengine list`", fn);
    if (strcmp(memory, MPCE_MEMORY_HOST) == 0)
        return MPCE_OK;
    *dev = mpce_registry_device(e, memory);
    if (*dev == NULL) {
        char known[256] = "";
        size_t used = 0;
        for (size_t i = 0; i < e->n_devices && used < sizeof(known); i++)
            used += (size_t)snprintf(known + used, sizeof(known) - used, ", %s",
                                     e->devices[i]->name);
        return mpce_error(MPCE_ERR_ARG, "%s: no memory kind '%.64s' in this engine: the kinds "
                          "are host%s (devices come from loaded plugins; see `mpcengine list`)",
                          fn, memory, known);
    }
    return MPCE_OK;
}

/* The start of both constructors: an engine reference, the memory kind and
 * `size` zeroed bytes for the object; on failure no reference is kept. */
static mpce_status new_object(mpce_engine *engine, const char *fn, const char *memory,
                              size_t size, mpce_engine **e, const struct mpce_devrec **dev,
                              void **obj)
{
    mpce_status st = mpce_engine_acquire(engine, e);
    if (st == MPCE_OK && (st = memory_kind(*e, fn, memory, dev)) == MPCE_OK &&
        (*obj = calloc(1, size)) == NULL)
        st = mpce_error(MPCE_ERR_NOMEM, "%s: out of memory", fn);
    if (st != MPCE_OK && *e != NULL)
        mpce_engine_unref(*e);
    return st;
}

/* A device function's failure, with what its plugin said. */
static mpce_status device_failure(const struct mpce_devrec *dev, const char *fn,
                                  const char *what, int rc)
{
    char detail[512];
    mpce_plugin_detail_take(&dev->module->host->host, detail, sizeof(detail));
    mpce_status code = mpce_status_of_rc(rc);
    return mpce_error(code, "%s: device %s could not %s (%s)%s%s", fn, dev->name, what,
                      mpce_status_name(code), detail[0] ? ": " : "", detail);
}

/* ---- queues -------------------------------------------------------------------- */

mpce_status mpce_queue_new(mpce_engine *engine, const char *memory, mpce_queue **out)
{
    static const char fn[] = "mpce_queue_new";
    if (out == NULL)
        return mpce_error(MPCE_ERR_ARG, "%s: out is NULL", fn);
    mpce_engine *e = NULL;
    const struct mpce_devrec *dev;
    void *obj = NULL;
    mpce_status st = new_object(engine, fn, memory, sizeof(mpce_queue), &e, &dev, &obj);
    if (st != MPCE_OK)
        return st;
    mpce_queue *q = obj;
    q->engine = e;
    q->dev = dev;
    pthread_mutex_init(&q->lock, NULL);
    pthread_mutex_init(&q->wait_lock, NULL);
    if (dev != NULL) {
        int rc = dev->ops.queue_new(dev->module->state, &q->qstate);
        if (rc != 0) {
            st = device_failure(dev, fn, "make a queue", rc);
            pthread_mutex_destroy(&q->wait_lock);
            pthread_mutex_destroy(&q->lock);
            free(q);
            mpce_engine_unref(e);
            return st;
        }
    }
    *out = q;
    return MPCE_OK;
}

mpce_status mpce_queue_wait(mpce_queue *q)
{
    if (q == NULL)
        return mpce_error(MPCE_ERR_ARG, "mpce_queue_wait: queue is NULL");
    pthread_mutex_lock(&q->wait_lock);
    pthread_mutex_lock(&q->lock);
    struct mpce_completion *c = q->head;
    q->head = q->tail = NULL;
    pthread_mutex_unlock(&q->lock);
    mpce_status first = MPCE_OK;
    char detail[1024] = "";
    while (c != NULL) {
        struct mpce_completion *next = c->next;
        mpce_status st = mpce_completion_wait(c);
        if (st != MPCE_OK && first == MPCE_OK) {
            first = st;
            snprintf(detail, sizeof(detail), "%s", mpce_last_error());
        }
        mpce_completion_destroy(c);
        free(c);
        c = next;
    }
    pthread_mutex_unlock(&q->wait_lock);
    if (first != MPCE_OK)
        return mpce_error(first, "%s", detail);
    return MPCE_OK;
}

void mpce_queue_free(mpce_queue *q)
{
    if (q == NULL)
        return;
    (void)mpce_queue_wait(q);
    if (q->dev != NULL)
        q->dev->ops.queue_free(q->dev->module->state, q->qstate);
    pthread_mutex_destroy(&q->wait_lock);
    pthread_mutex_destroy(&q->lock);
    mpce_engine *e = q->engine;
    free(q);
    mpce_engine_unref(e);
}

const char *mpce_queue_memory(const mpce_queue *q)
{
    return q ? mpce_memory_kind_name(q->dev) : NULL;
}

/* ---- buffers ------------------------------------------------------------------- */

mpce_status mpce_buffer_new(mpce_engine *engine, const char *memory, size_t bytes,
                            mpce_buffer **out)
{
    static const char fn[] = "mpce_buffer_new";
    if (out == NULL)
        return mpce_error(MPCE_ERR_ARG, "%s: out is NULL", fn);
    if (bytes == 0)
        return mpce_error(MPCE_ERR_ARG, "%s: bytes is 0: a buffer holds at least one byte", fn);
    mpce_engine *e = NULL;
    const struct mpce_devrec *dev;
    void *obj = NULL;
    mpce_status st = new_object(engine, fn, memory, sizeof(mpce_buffer), &e, &dev, &obj);
    if (st != MPCE_OK)
        return st;
    mpce_buffer *b = obj;
    if (dev == NULL) {
        size_t rounded = bytes + 63u < bytes ? 0 : (bytes + 63u) & ~(size_t)63u;
        b->addr = rounded ? aligned_alloc(64, rounded) : NULL;
        if (b->addr != NULL)
            memset(b->addr, 0, rounded);
        else
            st = mpce_error(MPCE_ERR_NOMEM, "%s: out of memory for %zu bytes of host memory",
                            fn, bytes);
    } else {
        int rc = dev->ops.alloc(dev->module->state, bytes, &b->addr);
        if (rc != 0) {
            char what[64];
            snprintf(what, sizeof(what), "allocate %zu bytes", bytes);
            st = device_failure(dev, fn, what, rc);
        }
    }
    if (st != MPCE_OK) {
        free(b);
        mpce_engine_unref(e);
        return st;
    }
    b->engine = e;
    b->dev = dev;
    b->size = bytes;
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->idle, NULL);
    *out = b;
    return MPCE_OK;
}

void mpce_buffer_free(mpce_buffer *b)
{
    if (b == NULL)
        return;
    pthread_mutex_lock(&b->lock);
    while (b->inflight > 0)
        pthread_cond_wait(&b->idle, &b->lock);
    pthread_mutex_unlock(&b->lock);
    if (b->dev != NULL)
        b->dev->ops.free(b->dev->module->state, b->addr);
    else
        free(b->addr);
    pthread_cond_destroy(&b->idle);
    pthread_mutex_destroy(&b->lock);
    mpce_engine *e = b->engine;
    free(b);
    mpce_engine_unref(e);
}

size_t mpce_buffer_size(const mpce_buffer *b)
{
    return b ? b->size : 0;
}

const char *mpce_buffer_memory(const mpce_buffer *b)
{
    return b ? mpce_memory_kind_name(b->dev) : NULL;
}

void *mpce_buffer_host(mpce_buffer *b)
{
    return b && b->dev == NULL ? b->addr : NULL;
}

/* ---- submitting ------------------------------------------------------------------ */

mpce_status mpce_buf_check(const char *fn, const struct mpce_ctx *ctx, const mpce_queue *q,
                           const mpce_buffer *const *bufs, const char *const *names,
                           const uint64_t *need, unsigned n)
{
    if (ctx == NULL)
        return mpce_error(MPCE_ERR_ARG, "%s: ctx is NULL", fn);
    if (q == NULL)
        return mpce_error(MPCE_ERR_ARG, "%s: queue is NULL", fn);
    if (q->engine != ctx->engine)
        return mpce_error(MPCE_ERR_ARG, "%s: the queue belongs to another engine than the "
                          "context", fn);
    for (unsigned i = 0; i < n; i++) {
        const mpce_buffer *b = bufs[i];
        if (b == NULL)
            return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, names[i]);
        if (b->engine != ctx->engine)
            return mpce_error(MPCE_ERR_ARG, "%s: %s belongs to another engine than the context",
                              fn, names[i]);
        if (b->dev != q->dev)
            return mpce_error(MPCE_ERR_ARG, "%s: %s is %s memory but the queue is for %s: copy "
                              "it with mpce_buffer_copy/upload/download first, or use a queue "
                              "of its kind", fn, names[i], mpce_memory_kind_name(b->dev), mpce_memory_kind_name(q->dev));
        if (need[i] > b->size)
            return mpce_error(MPCE_ERR_ARG, "%s: %s holds %zu bytes, the call needs %llu", fn,
                              names[i], b->size, (unsigned long long)need[i]);
    }
    return MPCE_OK;
}

/* A completion in q's list for work using bufs, which stay in flight (and
 * cannot be freed) until it completes. */
static struct mpce_completion *submission(mpce_queue *q, const struct mpce_slot *slot,
                                          const char *what, mpce_buffer *const *bufs,
                                          unsigned nbufs)
{
    struct mpce_completion *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    mpce_completion_init(c, slot, what);
    c->dev = q->dev;
    for (unsigned i = 0; i < nbufs && i < 3; i++) {
        pthread_mutex_lock(&bufs[i]->lock);
        bufs[i]->inflight++;
        pthread_mutex_unlock(&bufs[i]->lock);
        c->bufs[c->nbufs++] = bufs[i];
    }
    return c;
}

/* After a call returned rc: keep a pending completion in the queue, or
 * finish a synchronous one now and report its status. */
static mpce_status settle(mpce_queue *q, struct mpce_completion *c, int rc,
                          mpce_status (*status_of)(struct mpce_completion *, int))
{
    if (rc == MPCE_OP_PENDING) {
        pthread_mutex_lock(&q->lock);
        if (q->tail)
            q->tail->next = c;
        else
            q->head = c;
        q->tail = c;
        pthread_mutex_unlock(&q->lock);
        return MPCE_OK;
    }
    mpce_status st = mpce_completion_returned(c, rc, status_of);
    mpce_completion_destroy(c);
    free(c);
    return st;
}

mpce_status mpce_job_submit(mpce_queue *q, struct mpce_ctx *ctx, const struct mpce_job *job,
                            mpce_buffer *const *bufs, unsigned nbufs)
{
    if (q->dev == NULL)
        return mpce_job_run(q->engine, job);
    const struct mpce_slot *slot = job->route.slot;
    const char *op = mpce_op_info[job->op].name;
    struct mpce_completion *c = submission(q, slot, op, bufs, nbufs);
    if (c == NULL)
        return mpce_error(MPCE_ERR_NOMEM, "%s: out of memory queueing %s", slot->impl->name, op);
    mpce_ctx_hold(ctx);
    c->ctx = ctx;
    /* Only an ASYNC implementation may finish later; any other gets no
     * completion it could signal. */
    struct mpce_call call = {.struct_size = sizeof(call),
                             .memory = MPCE_MEM_DEVICE,
                             .queue = q->qstate,
                             .done = slot->flags & MPCE_IMPL_ASYNC ? c : NULL,
                             .knobs = job->route.n_knobs ? job->route.knobs : NULL,
                             .n_knobs = job->route.n_knobs};
    int rc = job->slice(job, &call, 0, 1);
    if (rc == MPCE_OP_PENDING && !(slot->flags & MPCE_IMPL_ASYNC))
        rc = MPCE_ERR_BACKEND; /* it will never complete through us */
    return settle(q, c, rc, mpce_completion_op_status);
}

/* ---- copies --------------------------------------------------------------------- */

static mpce_status copy_status_of(struct mpce_completion *c, int rc)
{
    const struct mpce_devrec *dev = c->dev;
    char detail[512];
    mpce_plugin_detail_take(&dev->module->host->host, detail, sizeof(detail));
    mpce_status st = mpce_status_of_rc(rc);
    return mpce_error(st, "device %s: %s failed (%s)%s%s", dev->name, c->what,
                      mpce_status_name(st), detail[0] ? ": " : "", detail);
}

static mpce_status range_check(const char *fn, const char *name, const mpce_buffer *b,
                               size_t off, size_t len)
{
    if (b == NULL)
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, name);
    if (off > b->size || len > b->size - off)
        return mpce_error(MPCE_ERR_ARG, "%s: %s holds %zu bytes; offset %zu + len %zu is past "
                          "its end", fn, name, b->size, off, len);
    return MPCE_OK;
}

enum copy_kind { UPLOAD, DOWNLOAD, COPY };

static mpce_status copy(const char *fn, enum copy_kind kind, mpce_queue *q, mpce_buffer *dst,
                        size_t dst_off, void *host_dst, const mpce_buffer *src, size_t src_off,
                        const void *host_src, size_t len)
{
    static const char *const what[] = {"upload", "download", "copy"};
    if (q == NULL)
        return mpce_error(MPCE_ERR_ARG, "%s: queue is NULL", fn);
    if (mpce_engine_is_closed(q->engine))
        return mpce_engine_closed_error(fn);
    mpce_status st = MPCE_OK;
    if (kind != DOWNLOAD)
        st = range_check(fn, "dst", dst, dst_off, len);
    if (st == MPCE_OK && kind != UPLOAD)
        st = range_check(fn, "src", src, src_off, len);
    if (st == MPCE_OK && ((kind == UPLOAD && host_src == NULL && len) ||
                          (kind == DOWNLOAD && host_dst == NULL && len)))
        st = mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, kind == UPLOAD ? "src" : "dst");
    mpce_buffer *bufs[2];
    unsigned nbufs = 0;
    if (kind != DOWNLOAD)
        bufs[nbufs++] = dst;
    if (kind != UPLOAD)
        bufs[nbufs++] = (mpce_buffer *)src;
    for (unsigned i = 0; st == MPCE_OK && i < nbufs; i++) {
        if (bufs[i]->engine != q->engine)
            st = mpce_error(MPCE_ERR_ARG, "%s: a buffer belongs to another engine than the "
                            "queue", fn);
        else if (bufs[i]->dev != q->dev)
            st = mpce_error(MPCE_ERR_ARG, "%s: a buffer is %s memory, the queue is for %s: use "
                            "a queue of the buffer's kind", fn, mpce_memory_kind_name(bufs[i]->dev),
                            mpce_memory_kind_name(q->dev));
    }
    if (st != MPCE_OK || len == 0)
        return st;
    uint8_t *d = kind == DOWNLOAD ? host_dst : (uint8_t *)dst->addr + dst_off;
    const uint8_t *s = kind == UPLOAD ? host_src : (const uint8_t *)src->addr + src_off;
    if (q->dev == NULL) {
        memmove(d, s, len);
        return MPCE_OK;
    }
    struct mpce_completion *c = submission(q, NULL, what[kind], bufs, nbufs);
    if (c == NULL)
        return mpce_error(MPCE_ERR_NOMEM, "%s: out of memory queueing a copy", fn);
    struct mpce_call call = {
        .struct_size = sizeof(call), .memory = MPCE_MEM_DEVICE, .queue = q->qstate, .done = c};
    const struct mpce_device *ops = &q->dev->ops;
    void *ms = q->dev->module->state;
    int rc = kind == UPLOAD     ? ops->upload(ms, &call, d, s, len)
             : kind == DOWNLOAD ? ops->download(ms, &call, d, s, len)
                                : ops->copy(ms, &call, d, s, len);
    return settle(q, c, rc, copy_status_of);
}

mpce_status mpce_buffer_upload(mpce_queue *q, mpce_buffer *dst, size_t dst_off, const void *src,
                               size_t len)
{
    return copy("mpce_buffer_upload", UPLOAD, q, dst, dst_off, NULL, NULL, 0, src, len);
}

mpce_status mpce_buffer_download(mpce_queue *q, void *dst, const mpce_buffer *src,
                                 size_t src_off, size_t len)
{
    return copy("mpce_buffer_download", DOWNLOAD, q, NULL, 0, dst, src, src_off, NULL, len);
}

mpce_status mpce_buffer_copy(mpce_queue *q, mpce_buffer *dst, size_t dst_off,
                             const mpce_buffer *src, size_t src_off, size_t len)
{
    return copy("mpce_buffer_copy", COPY, q, dst, dst_off, NULL, src, src_off, NULL, len);
}
