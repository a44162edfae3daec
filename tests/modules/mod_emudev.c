/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test module: an emulated device, "emu0", with one asynchronous NTT
 * implementation, ntt-emudev. It exists so the engine's buffer and queue
 * tests can prove, without real hardware, that
 *   - device buffers really stay on the device: device addresses lie in a
 *     PROT_NONE reservation, so any host dereference by the engine faults,
 *     and only this module's copies and ops reach the bytes (through a
 *     separate backing mapping);
 *   - asynchronous failures surface on wait with the module's message
 *     (emudev_fail_after, and bounds checks on every device access);
 *   - nothing leaks: allocations and queues are counted (emudev_stats);
 *   - a plugin that completes a call and also returns its status is
 *     counted once (emudev_complete_and_return_once).
 * Every job waits EMUDEV_DELAY_US (default 200) microseconds on a worker
 * thread before it runs, so an engine that forgets to wait sees stale data.
 * The arithmetic is the shared scalar Harvey skeleton, so results are
 * bit-exact with the soft backend. Never installed.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "mpcengine/plugin.h"
#include "plugins/common/ntt_harvey.h"
#include "tests/modules/emudev.h"

#define EMU_MEMORY_BYTES ((size_t)256 << 20)
#define EMU_ALIGN 64u
#define EMU_DEFAULT_DELAY_US 200u
/* Keeps a typo in EMUDEV_DELAY_US from hanging a test for hours. */
#define EMU_MAX_DELAY_US 10000000ul
#define EMU_MSG_LEN 256

/* ---- process-wide counters and failure injection --------------------------- */

static _Atomic uint64_t st_uploads, st_downloads, st_copies;
static _Atomic uint64_t st_upload_bytes, st_download_bytes;
static _Atomic uint64_t st_ops, st_device_ops;
static _Atomic uint64_t st_allocs_live, st_bytes_live, st_queues_live, st_bad_frees;
/* Job numbers are process-wide so a failure message identifies one job even
 * when several engines share the module. */
static _Atomic uint64_t next_job_id;

static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static bool fail_armed;
static unsigned fail_skip;
static bool fail_any_op;
static char fail_op[32];

static void bump(_Atomic uint64_t *c, uint64_t v)
{
    atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

static uint64_t get(_Atomic uint64_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

void emudev_stats(struct emudev_stats *out)
{
    out->uploads = get(&st_uploads);
    out->downloads = get(&st_downloads);
    out->copies = get(&st_copies);
    out->upload_bytes = get(&st_upload_bytes);
    out->download_bytes = get(&st_download_bytes);
    out->ops = get(&st_ops);
    out->device_ops = get(&st_device_ops);
    out->allocs_live = get(&st_allocs_live);
    out->bytes_live = get(&st_bytes_live);
    out->queues_live = get(&st_queues_live);
    out->bad_frees = get(&st_bad_frees);
}

static atomic_bool complete_and_return;

void emudev_complete_and_return_once(void)
{
    atomic_store(&complete_and_return, true);
}

void emudev_fail_after(unsigned n, const char *op)
{
    pthread_mutex_lock(&fail_lock);
    fail_armed = true;
    fail_skip = n;
    fail_any_op = op == NULL;
    snprintf(fail_op, sizeof(fail_op), "%s", op != NULL ? op : "");
    pthread_mutex_unlock(&fail_lock);
}

/* Consumes one matching job from the injection countdown; true if this job
 * is the one that must fail. */
static bool fail_now(const char *op)
{
    bool fail = false;
    pthread_mutex_lock(&fail_lock);
    if (fail_armed && (fail_any_op || strcmp(fail_op, op) == 0)) {
        if (fail_skip == 0) {
            fail = true;
            fail_armed = false;
        } else {
            fail_skip--;
        }
    }
    pthread_mutex_unlock(&fail_lock);
    return fail;
}

/* ---- module state ------------------------------------------------------------ */

/* A live device allocation: [off, off + len) from the base, len rounded up. */
struct emu_block {
    struct emu_block *next;
    size_t off, len;
    size_t requested;
};

struct emu_queue;

struct emudev {
    const struct mpce_host *host;
    unsigned char *base;     /* device address space: PROT_NONE */
    unsigned char *backing;  /* what the device "stores", read-write */
    size_t size;
    unsigned delay_us;
    pthread_mutex_t alloc_lock;
    struct emu_block *blocks; /* sorted by offset */
    struct emu_queue *defq;   /* for calls with call->queue == NULL */
};

struct emu_ntt {
    struct emudev *dev;
    struct mpce_harvey_state *h;
};

enum emu_kind { JOB_UPLOAD, JOB_DOWNLOAD, JOB_COPY, JOB_FORWARD, JOB_INVERSE, JOB_MUL };

static const char *const kind_name[] = {
    [JOB_UPLOAD] = "upload",        [JOB_DOWNLOAD] = "download",
    [JOB_COPY] = "copy",            [JOB_FORWARD] = "ntt.forward",
    [JOB_INVERSE] = "ntt.inverse",  [JOB_MUL] = "ntt.mul",
};

/* A caller blocked on a queued job (a call without a completion that named a
 * queue: it must still run after the work queued before it). */
struct emu_waiter {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    bool finished;
    int status;
    char msg[EMU_MSG_LEN];
};

struct emu_job {
    struct emu_job *next;
    enum emu_kind kind;
    struct emudev *dev;
    const struct mpce_harvey_state *h; /* op jobs */
    uint32_t memory;                   /* op jobs: MPCE_MEM_HOST or MPCE_MEM_DEVICE */
    uint64_t id;
    const void *src, *src2;
    void *dst;
    size_t count;                      /* bytes for copies, batch for ops */
    struct mpce_completion *done;
    struct emu_waiter *waiter;
};

struct emu_queue {
    struct emudev *dev;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    struct emu_job *head, *tail;
    bool stop;
    pthread_t thread;
};

/* ---- device memory --------------------------------------------------------- */

/* The backing bytes of device range [addr, addr + len), if it lies inside one
 * live allocation; else NULL with the reason in msg. */
static void *resolve(struct emudev *d, const struct emu_job *j, const char *what,
                     const void *addr, size_t len, char *msg, size_t msg_len)
{
    const uintptr_t a = (uintptr_t)addr, b = (uintptr_t)d->base;
    void *p = NULL;
    if (a >= b && a - b < d->size) {
        const size_t off = a - b;
        pthread_mutex_lock(&d->alloc_lock);
        for (const struct emu_block *k = d->blocks; k != NULL && k->off <= off; k = k->next) {
            if (off - k->off <= k->len && len <= k->len - (off - k->off)) {
                p = d->backing + off;
                break;
            }
        }
        pthread_mutex_unlock(&d->alloc_lock);
    }
    if (p == NULL)
        snprintf(msg, msg_len,
                 "emudev: %s (job %" PRIu64 "): %s address %p + %zu bytes is not inside "
                 "one live emu0 allocation",
                 kind_name[j->kind], j->id, what, addr, len);
    return p;
}

static int emu_alloc(void *module_state, size_t bytes, void **addr)
{
    struct emudev *d = module_state;
    if (bytes == 0 || bytes > d->size) {
        d->host->set_error(d->host, "emudev: alloc of %zu bytes: %s", bytes,
                           bytes == 0 ? "a size of 0"
                                      : "larger than all of emu0's device memory");
        return bytes == 0 ? MPCE_ERR_ARG : MPCE_ERR_NOMEM;
    }
    const size_t len = (bytes + EMU_ALIGN - 1) & ~(size_t)(EMU_ALIGN - 1);
    struct emu_block *nb = malloc(sizeof(*nb));
    if (nb == NULL) {
        d->host->set_error(d->host, "emudev: alloc of %zu bytes: out of host memory for "
                                    "the block list", bytes);
        return MPCE_ERR_NOMEM;
    }
    pthread_mutex_lock(&d->alloc_lock);
    /* First fit over the gaps between the sorted live blocks. */
    struct emu_block **link = &d->blocks;
    size_t start = 0;
    while (*link != NULL && (*link)->off - start < len) {
        start = (*link)->off + (*link)->len;
        link = &(*link)->next;
    }
    if (*link == NULL && d->size - start < len) {
        pthread_mutex_unlock(&d->alloc_lock);
        free(nb);
        d->host->set_error(d->host,
                           "emudev: alloc of %zu bytes: no free range that large left in "
                           "emu0's %zu MiB", bytes, d->size >> 20);
        return MPCE_ERR_NOMEM;
    }
    nb->off = start;
    nb->len = len;
    nb->requested = bytes;
    nb->next = *link;
    *link = nb;
    pthread_mutex_unlock(&d->alloc_lock);
    /* Device memory is not zeroed: an engine that reads a buffer it never
     * wrote must see garbage, not the zeros of a fresh mapping. */
    memset(d->backing + start, 0xa5, len);
    bump(&st_allocs_live, 1);
    bump(&st_bytes_live, bytes);
    *addr = d->base + start;
    return 0;
}

static void emu_free(void *module_state, void *addr)
{
    struct emudev *d = module_state;
    const uintptr_t a = (uintptr_t)addr, b = (uintptr_t)d->base;
    struct emu_block *found = NULL;
    if (a >= b && a - b < d->size) {
        pthread_mutex_lock(&d->alloc_lock);
        for (struct emu_block **link = &d->blocks; *link != NULL; link = &(*link)->next) {
            if ((*link)->off == a - b) {
                found = *link;
                *link = found->next;
                break;
            }
        }
        pthread_mutex_unlock(&d->alloc_lock);
    }
    if (found == NULL) {
        bump(&st_bad_frees, 1);
        d->host->log(d->host, MPCE_LOG_ERROR, "free of %p, which emu0's alloc did not return "
                                              "(or was freed already)", addr);
        return;
    }
    /* Poison, so a stale read of a reused range cannot pass for the old data. */
    memset(d->backing + found->off, 0x5a, found->len);
    atomic_fetch_sub_explicit(&st_allocs_live, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&st_bytes_live, found->requested, memory_order_relaxed);
    free(found);
}

/* ---- jobs ------------------------------------------------------------------ */

typedef void (*row_fn)(const struct mpce_harvey_tables *t, size_t n, uint64_t *a);

/* The soft backend's loop, so results are bit-exact with it: copy in -> out
 * unless in place, then transform out in place. */
static void run_rows(const struct mpce_harvey_state *s, row_fn fn, const uint64_t *in,
                     uint64_t *out, size_t batch)
{
    for (size_t b = 0; b < batch; b++) {
        for (size_t i = 0; i < s->l; i++) {
            const size_t off = mpce_harvey_row_offset(s, b, i);
            if (out + off != in + off)
                memmove(out + off, in + off, s->n * sizeof(uint64_t));
            fn(s->row[i], s->n, out + off);
        }
    }
}

static void run_mul(const struct mpce_harvey_state *s, const uint64_t *a, const uint64_t *b,
                    uint64_t *out, size_t batch)
{
    for (size_t bi = 0; bi < batch; bi++) {
        for (size_t i = 0; i < s->l; i++) {
            const size_t off = mpce_harvey_row_offset(s, bi, i);
            mpce_harvey_mul_row(s->row[i], s->n, a + off, b + off, out + off);
        }
    }
}

/* Maps one NTT operand: host pointers as they are, device addresses checked
 * and translated. Misaligned device words fail, as they would on a GPU,
 * rather than reaching UBSan as unaligned uint64_t accesses. */
static void *op_operand(const struct emu_job *j, const char *what, const void *p, size_t bytes,
                        char *msg, size_t msg_len)
{
    if (j->memory != MPCE_MEM_DEVICE)
        return (void *)p;
    if ((uintptr_t)p % sizeof(uint64_t) != 0) {
        snprintf(msg, msg_len,
                 "emudev: %s (job %" PRIu64 "): %s address %p is not 8-byte aligned",
                 kind_name[j->kind], j->id, what, p);
        return NULL;
    }
    return resolve(j->dev, j, what, p, bytes, msg, msg_len);
}

static int run_op(const struct emu_job *j, char *msg, size_t msg_len)
{
    const struct mpce_harvey_state *s = j->h;
    if (fail_now(kind_name[j->kind])) {
        snprintf(msg, msg_len, "emudev: injected failure in %s (job %" PRIu64 ")",
                 kind_name[j->kind], j->id);
        return MPCE_ERR_BACKEND;
    }
    size_t bytes;
    if (__builtin_mul_overflow(j->count, s->l * s->n * sizeof(uint64_t), &bytes)) {
        snprintf(msg, msg_len, "emudev: %s (job %" PRIu64 "): batch %zu overflows size_t",
                 kind_name[j->kind], j->id, j->count);
        return MPCE_ERR_BACKEND;
    }
    const uint64_t *in = op_operand(j, j->kind == JOB_MUL ? "a" : "in", j->src, bytes, msg,
                                    msg_len);
    if (in == NULL)
        return MPCE_ERR_BACKEND;
    const uint64_t *in2 = NULL;
    if (j->kind == JOB_MUL && (in2 = op_operand(j, "b", j->src2, bytes, msg, msg_len)) == NULL)
        return MPCE_ERR_BACKEND;
    uint64_t *out = op_operand(j, "out", j->dst, bytes, msg, msg_len);
    if (out == NULL)
        return MPCE_ERR_BACKEND;
    if (j->kind == JOB_FORWARD)
        run_rows(s, mpce_harvey_forward_row, in, out, j->count);
    else if (j->kind == JOB_INVERSE)
        run_rows(s, mpce_harvey_inverse_row, in, out, j->count);
    else
        run_mul(s, in, in2, out, j->count);
    bump(&st_ops, 1);
    if (j->memory == MPCE_MEM_DEVICE)
        bump(&st_device_ops, 1);
    return 0;
}

static int run_copy(const struct emu_job *j, char *msg, size_t msg_len)
{
    void *dst = j->dst;
    const void *src = j->src;
    if (j->kind != JOB_DOWNLOAD &&
        (dst = resolve(j->dev, j, "dst", j->dst, j->count, msg, msg_len)) == NULL)
        return MPCE_ERR_BACKEND;
    if (j->kind != JOB_UPLOAD &&
        (src = resolve(j->dev, j, "src", j->src, j->count, msg, msg_len)) == NULL)
        return MPCE_ERR_BACKEND;
    memmove(dst, src, j->count);
    if (j->kind == JOB_UPLOAD) {
        bump(&st_uploads, 1);
        bump(&st_upload_bytes, j->count);
    } else if (j->kind == JOB_DOWNLOAD) {
        bump(&st_downloads, 1);
        bump(&st_download_bytes, j->count);
    } else {
        bump(&st_copies, 1);
    }
    return 0;
}

static int run_job(const struct emu_job *j, char *msg, size_t msg_len)
{
    msg[0] = '\0';
    return j->kind <= JOB_COPY ? run_copy(j, msg, msg_len) : run_op(j, msg, msg_len);
}

static void sleep_us(unsigned us)
{
    struct timespec ts = {.tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void *queue_worker(void *arg)
{
    struct emu_queue *q = arg;
    const struct mpce_host *host = q->dev->host;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        while (q->head == NULL && !q->stop)
            pthread_cond_wait(&q->cv, &q->lock);
        struct emu_job *j = q->head;
        if (j != NULL) {
            q->head = j->next;
            if (q->head == NULL)
                q->tail = NULL;
        }
        pthread_mutex_unlock(&q->lock);
        if (j == NULL)
            break; /* stopped and drained */

        if (q->dev->delay_us != 0)
            sleep_us(q->dev->delay_us);
        char msg[EMU_MSG_LEN];
        const int rc = run_job(j, msg, sizeof(msg));
        if (j->waiter != NULL) {
            struct emu_waiter *w = j->waiter;
            pthread_mutex_lock(&w->lock);
            w->status = rc;
            snprintf(w->msg, sizeof(w->msg), "%s", msg);
            w->finished = true;
            pthread_cond_signal(&w->cv);
            pthread_mutex_unlock(&w->lock);
        } else {
            host->complete(host, j->done, rc, rc != 0 ? msg : NULL);
        }
        free(j);
    }
    return NULL;
}

static void enqueue(struct emu_queue *q, struct emu_job *j)
{
    j->next = NULL;
    pthread_mutex_lock(&q->lock);
    if (q->tail != NULL)
        q->tail->next = j;
    else
        q->head = j;
    q->tail = j;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->lock);
}

/*
 * Every op and copy goes through here. With a completion the job is queued
 * and completed from the worker thread. Without one it must finish before we
 * return: inline when no queue was named (nothing to order against), else
 * queued behind the queue's earlier work and waited for, since a queue runs
 * in submission order.
 */
static int submit(struct emudev *d, const struct mpce_call *call, const struct emu_job *tmpl)
{
    struct emu_job local = *tmpl;
    local.dev = d;
    local.id = atomic_fetch_add_explicit(&next_job_id, 1, memory_order_relaxed) + 1;
    if (call->done != NULL && atomic_exchange(&complete_and_return, false)) {
        char msg[EMU_MSG_LEN];
        const int rc = run_job(&local, msg, sizeof(msg));
        d->host->complete(d->host, call->done, rc, rc != 0 ? msg : NULL);
        return 0; /* whatever happened: the completion said it */
    }
    if (call->done == NULL && call->queue == NULL) {
        char msg[EMU_MSG_LEN];
        const int rc = run_job(&local, msg, sizeof(msg));
        if (rc != 0)
            d->host->set_error(d->host, "%s", msg);
        return rc;
    }
    struct emu_job *j = malloc(sizeof(*j));
    if (j == NULL) {
        d->host->set_error(d->host, "emudev: %s: out of host memory for the job",
                           kind_name[local.kind]);
        return MPCE_ERR_NOMEM;
    }
    *j = local;
    struct emu_queue *q = call->queue != NULL ? call->queue : d->defq;
    if (call->done != NULL) {
        j->done = call->done;
        enqueue(q, j);
        return MPCE_OP_PENDING;
    }
    struct emu_waiter w = {.finished = false};
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.cv, NULL);
    j->waiter = &w;
    enqueue(q, j);
    pthread_mutex_lock(&w.lock);
    while (!w.finished)
        pthread_cond_wait(&w.cv, &w.lock);
    pthread_mutex_unlock(&w.lock);
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.lock);
    if (w.status != 0)
        d->host->set_error(d->host, "%s", w.msg);
    return w.status;
}

/* ---- queues ------------------------------------------------------------------ */

/* 0, or an errno value: callers word the message (init reports through why,
 * queue_new through set_error). */
static int queue_start(struct emudev *d, struct emu_queue **out)
{
    struct emu_queue *q = calloc(1, sizeof(*q));
    if (q == NULL)
        return ENOMEM;
    q->dev = d;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->cv, NULL);
    const int e = pthread_create(&q->thread, NULL, queue_worker, q);
    if (e != 0) {
        pthread_cond_destroy(&q->cv);
        pthread_mutex_destroy(&q->lock);
        free(q);
        return e;
    }
    *out = q;
    return 0;
}

/* The engine frees a queue only after its work completed; draining anyway
 * keeps a buggy engine's completions from being lost silently. */
static void queue_destroy(struct emu_queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->stop = true;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->lock);
    pthread_join(q->thread, NULL);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->lock);
    free(q);
}

static int emu_queue_new(void *module_state, void **queue)
{
    struct emudev *d = module_state;
    struct emu_queue *q;
    const int e = queue_start(d, &q);
    if (e != 0) {
        d->host->set_error(d->host, "emudev: queue_new: cannot start a worker thread: %s",
                           strerror(e));
        return e == ENOMEM ? MPCE_ERR_NOMEM : MPCE_ERR_BACKEND;
    }
    bump(&st_queues_live, 1);
    *queue = q;
    return 0;
}

static void emu_queue_free(void *module_state, void *queue)
{
    struct emudev *d = module_state;
    if (queue == NULL || queue == d->defq) {
        d->host->log(d->host, MPCE_LOG_ERROR, "queue_free of %s queue ignored",
                     queue == NULL ? "a NULL" : "the default");
        return;
    }
    queue_destroy(queue);
    atomic_fetch_sub_explicit(&st_queues_live, 1, memory_order_relaxed);
}

/* ---- copies ------------------------------------------------------------------ */

static int emu_upload(void *module_state, const struct mpce_call *call, void *dst,
                      const void *src, size_t len)
{
    const struct emu_job t = {.kind = JOB_UPLOAD, .dst = dst, .src = src, .count = len};
    return submit(module_state, call, &t);
}

static int emu_download(void *module_state, const struct mpce_call *call, void *dst,
                        const void *src, size_t len)
{
    const struct emu_job t = {.kind = JOB_DOWNLOAD, .dst = dst, .src = src, .count = len};
    return submit(module_state, call, &t);
}

static int emu_copy(void *module_state, const struct mpce_call *call, void *dst,
                    const void *src, size_t len)
{
    const struct emu_job t = {.kind = JOB_COPY, .dst = dst, .src = src, .count = len};
    return submit(module_state, call, &t);
}

/* ---- NTT ops ----------------------------------------------------------------- */

static int emu_ntt_new(void *module_state, size_t n, size_t l, const uint64_t *q,
                       const uint64_t *psi, void **state)
{
    struct emudev *d = module_state;
    struct emu_ntt *s = malloc(sizeof(*s));
    if (s == NULL) {
        d->host->set_error(d->host, "emudev: ntt ctx_new(n=%zu, l=%zu): out of host memory",
                           n, l);
        return MPCE_ERR_NOMEM;
    }
    s->dev = d;
    s->h = NULL;
    /* Twiddles stay in host memory: they play the device's constant memory. */
    const int rc = mpce_harvey_state_new(n, l, q, psi, &s->h);
    if (rc != 0) {
        free(s);
        d->host->set_error(d->host, "emudev: ntt ctx_new(n=%zu, l=%zu): %s", n, l,
                           rc == MPCE_ERR_NOMEM ? "out of host memory for the twiddles"
                                                : "n is not a power of two >= 2, or l is 0");
        return rc;
    }
    *state = s;
    return 0;
}

static void emu_ntt_free(void *state)
{
    struct emu_ntt *s = state;
    if (s == NULL)
        return;
    mpce_harvey_state_free(s->h);
    free(s);
}

static int ntt_submit(void *state, const struct mpce_call *call, enum emu_kind kind,
                      const uint64_t *a, const uint64_t *b, uint64_t *out, size_t batch)
{
    const struct emu_ntt *s = state;
    const struct emu_job t = {.kind = kind, .h = s->h, .memory = call->memory,
                              .src = a, .src2 = b, .dst = out, .count = batch};
    return submit(s->dev, call, &t);
}

static int emu_ntt_forward(void *state, const struct mpce_call *call, const uint64_t *in,
                           uint64_t *out, size_t batch)
{
    return ntt_submit(state, call, JOB_FORWARD, in, NULL, out, batch);
}

static int emu_ntt_inverse(void *state, const struct mpce_call *call, const uint64_t *in,
                           uint64_t *out, size_t batch)
{
    return ntt_submit(state, call, JOB_INVERSE, in, NULL, out, batch);
}

static int emu_ntt_mul(void *state, const struct mpce_call *call, const uint64_t *a,
                       const uint64_t *b, uint64_t *out, size_t batch)
{
    return ntt_submit(state, call, JOB_MUL, a, b, out, batch);
}

/* ---- module life cycle -------------------------------------------------------- */

static unsigned read_delay(const struct mpce_host *host)
{
    const char *v = host->getenv(host, "EMUDEV_DELAY_US");
    if (v == NULL || *v == '\0')
        return EMU_DEFAULT_DELAY_US;
    char *end;
    errno = 0;
    const unsigned long us = strtoul(v, &end, 10);
    if (errno != 0 || *end != '\0' || *v == '-' || us > EMU_MAX_DELAY_US) {
        host->log(host, MPCE_LOG_WARNING,
                  "EMUDEV_DELAY_US=\"%s\" is not a number of microseconds in 0..%lu; "
                  "using %u", v, EMU_MAX_DELAY_US, EMU_DEFAULT_DELAY_US);
        return EMU_DEFAULT_DELAY_US;
    }
    return (unsigned)us;
}

static int emu_init(const struct mpce_host *host, void **module_state, char *why,
                    size_t why_len)
{
    struct emudev *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        snprintf(why, why_len, "emudev: init: out of host memory");
        return MPCE_ERR_NOMEM;
    }
    d->host = host;
    d->size = EMU_MEMORY_BYTES;
    d->delay_us = read_delay(host);
    /* Only reserved, never accessible: a host dereference of a device
     * address must fault instead of quietly reading the data. */
    d->base = mmap(NULL, d->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
                   0);
    if (d->base == MAP_FAILED) {
        snprintf(why, why_len, "emudev: init: cannot reserve %zu MiB of address space: %s",
                 d->size >> 20, strerror(errno));
        free(d);
        return MPCE_ERR_NOMEM;
    }
    d->backing = mmap(NULL, d->size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (d->backing == MAP_FAILED) {
        snprintf(why, why_len, "emudev: init: cannot map %zu MiB of backing memory: %s",
                 d->size >> 20, strerror(errno));
        munmap(d->base, d->size);
        free(d);
        return MPCE_ERR_NOMEM;
    }
    pthread_mutex_init(&d->alloc_lock, NULL);
    const int e = queue_start(d, &d->defq);
    if (e != 0) {
        snprintf(why, why_len, "emudev: init: cannot start the default queue's thread: %s",
                 strerror(e));
        pthread_mutex_destroy(&d->alloc_lock);
        munmap(d->backing, d->size);
        munmap(d->base, d->size);
        free(d);
        return e == ENOMEM ? MPCE_ERR_NOMEM : MPCE_ERR_BACKEND;
    }
    host->log(host, MPCE_LOG_DEBUG, "emu0: %zu MiB at %p, job delay %u us", d->size >> 20,
              (void *)d->base, d->delay_us);
    *module_state = d;
    return 0;
}

static void emu_fini(void *module_state)
{
    struct emudev *d = module_state;
    queue_destroy(d->defq);
    size_t left = 0;
    while (d->blocks != NULL) {
        struct emu_block *k = d->blocks;
        d->blocks = k->next;
        free(k);
        left++;
    }
    /* allocs_live keeps counting them: that is how a test sees the leak. */
    if (left != 0)
        d->host->log(d->host, MPCE_LOG_ERROR, "fini with %zu emu0 allocations never freed",
                     left);
    pthread_mutex_destroy(&d->alloc_lock);
    munmap(d->backing, d->size);
    munmap(d->base, d->size);
    free(d);
}

static void emu_describe(void *module_state, char *buf, size_t len)
{
    const struct emudev *d = module_state;
    snprintf(buf, len, "emulated device emu0: %zu MiB", d->size >> 20);
}

/* ---- descriptor ------------------------------------------------------------------ */

static const struct mpce_device emu0 = {
    .struct_size = sizeof(struct mpce_device),
    .name = "emu0",
    .alloc = emu_alloc,
    .free = emu_free,
    .queue_new = emu_queue_new,
    .queue_free = emu_queue_free,
    .upload = emu_upload,
    .download = emu_download,
    .copy = emu_copy,
};
static const struct mpce_device *const devices[] = {&emu0};

static const struct mpce_ntt_ops ntt_ops = {
    .struct_size = sizeof(struct mpce_ntt_ops),
    .ctx_new = emu_ntt_new,
    .ctx_free = emu_ntt_free,
    .forward = emu_ntt_forward,
    .inverse = emu_ntt_inverse,
    .mul = emu_ntt_mul,
};

static const struct mpce_impl ntt_impl = {
    .struct_size = sizeof(struct mpce_impl),
    .primitive = MPCE_PRIM_NTT,
    .name = "ntt-emudev",
    .impl_class = MPCE_CLASS_ACCEL,
    .priority = 450,
    .flags = MPCE_IMPL_CONSTANT_TIME | MPCE_IMPL_ASYNC,
    .memory = MPCE_MEM_HOST | MPCE_MEM_DEVICE,
    .device = &emu0,
    .ops = &ntt_ops,
};
static const struct mpce_impl *const impls[] = {&ntt_impl};

static const struct mpce_plugin plugin = {
    .struct_size = sizeof(struct mpce_plugin),
    .abi_major = MPCE_PLUGIN_ABI_MAJOR,
    .abi_minor = MPCE_PLUGIN_ABI_MINOR,
    .name = "emudev",
    .version = "1",
    .init = emu_init,
    .fini = emu_fini,
    .describe = emu_describe,
    .n_devices = 1,
    .devices = devices,
    .n_impls = 1,
    .impls = impls,
};

MPCE_API const struct mpce_plugin *mpce_plugin_entry_v2(void);
const struct mpce_plugin *mpce_plugin_entry_v2(void)
{
    return &plugin;
}
