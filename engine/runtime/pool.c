/* SPDX-License-Identifier: Apache-2.0 */
/* A fixed set of worker threads serving a queue of sliced jobs. */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/runtime/pool.h"

/* One call's work. Lives on the caller's stack: the caller cannot return
 * before `done` reaches `count`, and the last worker touches the job only
 * while holding the pool's lock, which the caller needs to see `done`. */
struct job {
    mpce_slice_fn fn;
    void *arg;
    size_t count;
    size_t next;            /* next slice to hand out */
    size_t done;            /* slices finished */
    size_t err_index;       /* lowest failing slice, SIZE_MAX if none */
    int rc;
    char detail[1024];
    pthread_cond_t finished;
    struct job *queue_next;
};

struct mpce_pool {
    pthread_mutex_t lock;
    pthread_cond_t work;    /* a job was queued, or stop */
    struct job *head, *tail; /* jobs with slices not yet handed out */
    int stop;
    pid_t owner;            /* the process whose threads these are */
    unsigned n_threads;
    pthread_t threads[];
};

/* Under the lock: the next slice of the queue's first job; a job leaves the
 * queue once its last slice is handed out. */
static struct job *claim(struct mpce_pool *p, size_t *index)
{
    struct job *j = p->head;
    if (!j)
        return NULL;
    *index = j->next++;
    if (j->next == j->count) {
        p->head = j->queue_next;
        if (!p->head)
            p->tail = NULL;
    }
    return j;
}

/* Run a slice outside the lock, then account for it under the lock. */
static void run_slice(struct mpce_pool *p, struct job *j, size_t index)
{
    pthread_mutex_unlock(&p->lock);
    /* A failing slice sets this thread's detail (mpce_slice_fn's contract). */
    int rc = j->fn(j->arg, index);
    char detail[sizeof(j->detail)];
    if (rc != 0)
        snprintf(detail, sizeof(detail), "%s", mpce_last_error());
    pthread_mutex_lock(&p->lock);
    if (rc != 0 && index < j->err_index) {
        j->err_index = index;
        j->rc = rc;
        memcpy(j->detail, detail, sizeof(detail));
    }
    if (++j->done == j->count)
        pthread_cond_signal(&j->finished);
}

static void *worker(void *arg)
{
    struct mpce_pool *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        size_t index;
        struct job *j = claim(p, &index);
        if (j) {
            run_slice(p, j, index);
            continue;
        }
        if (p->stop)
            break;
        pthread_cond_wait(&p->work, &p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

struct mpce_pool *mpce_pool_new(unsigned workers)
{
    if (workers < 1)
        return NULL;
    struct mpce_pool *p = calloc(1, sizeof(*p) + workers * sizeof(pthread_t));
    if (!p)
        return NULL;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    p->owner = getpid();
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (unsigned i = 0; i < workers; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0)
            break;
        p->n_threads++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    /* Fewer workers than asked is still a pool; none is not. */
    if (p->n_threads == 0) {
        pthread_cond_destroy(&p->work);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return NULL;
    }
    return p;
}

void mpce_pool_free(struct mpce_pool *p)
{
    if (!p)
        return;
    /* A forked child has copies of the thread handles but no threads:
     * joining them would wait forever. */
    if (getpid() != p->owner) {
        free(p);
        return;
    }
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->n_threads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

int mpce_pool_run(struct mpce_pool *p, size_t count, mpce_slice_fn fn, void *arg)
{
    if (count == 0)
        return 0;
    struct job j = {.fn = fn, .arg = arg, .count = count, .err_index = SIZE_MAX};
    pthread_cond_init(&j.finished, NULL);
    pthread_mutex_lock(&p->lock);
    if (p->tail)
        p->tail->queue_next = &j;
    else
        p->head = &j;
    p->tail = &j;
    /* Wake only as many workers as there are slices beyond the caller's. */
    if (count - 1 >= p->n_threads)
        pthread_cond_broadcast(&p->work);
    else
        for (size_t i = 0; i < count - 1; i++)
            pthread_cond_signal(&p->work);
    /* The caller works on its own job only: another caller's job has its
     * own thread to finish it. */
    while (j.next < j.count) {
        size_t index = j.next++;
        if (j.next == j.count) {
            /* Unlink: j may sit anywhere in the queue. */
            struct job **link = &p->head, *prev = NULL;
            while (*link != &j) {
                prev = *link;
                link = &(*link)->queue_next;
            }
            *link = j.queue_next;
            if (p->tail == &j)
                p->tail = prev;
        }
        run_slice(p, &j, index);
    }
    while (j.done < j.count)
        pthread_cond_wait(&j.finished, &p->lock);
    pthread_mutex_unlock(&p->lock);
    pthread_cond_destroy(&j.finished);
    if (j.rc != 0)
        mpce_error(MPCE_ERR_BACKEND, "%s", j.detail);
    return j.rc;
}
