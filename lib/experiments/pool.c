/* A pool of threads over independent items: a shared work queue, the lowest failing item decides the error. */
#include <pthread.h>
#include <unistd.h>

#include "experiments_internal.h"

typedef struct pool {
    const rb_pool *pl;
    pthread_mutex_t lock;
    size_t next, done, first_fail;
    int cancel, fail_rc; /* fail_rc: the first failing item's return value (its err may lack a code) */
    rb_err fail_err;
} pool;

static void *worker(void *arg)
{
    pool *q = arg;
    const rb_pool *pl = q->pl;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        bool stop = q->next >= pl->n || q->next > q->first_fail || q->cancel;
        size_t i = q->next++;
        pthread_mutex_unlock(&q->lock);
        if (stop)
            break;
        rb_err err;
        rb_err_clear(&err);
        int rc = pl->task(pl->ctx, i, &err);
        pthread_mutex_lock(&q->lock);
        if (rc && i < q->first_fail) {
            q->first_fail = i;
            q->fail_rc = rc;
            q->fail_err = err;
        } else if (!rc) {
            q->done++;
            if (pl->progress && !q->cancel) {
                int c = pl->progress(pl->user, q->done, pl->n);
                q->cancel = c ? (c < 0 && c >= RB_EINVAL ? c : RB_EINVAL) : 0;
            }
        }
        pthread_mutex_unlock(&q->lock);
    }
    return NULL;
}

static size_t thread_count(const rb_pool *pl)
{
    size_t n = pl->threads;
    if (n == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        n = cores > 0 ? (size_t)cores : 1;
    }
    return n < pl->n ? n : pl->n;
}

int rb_pool_run(const rb_pool *pl, bool *cancelled, rb_err *err)
{
    size_t n_threads = thread_count(pl);
    pool q = {pl, PTHREAD_MUTEX_INITIALIZER, 0, 0, SIZE_MAX, 0, 0, {0, ""}};
    pthread_t *tid = rb_calloc(n_threads ? n_threads : 1, sizeof *tid);
    if (!tid)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    size_t started = 0;
    rb_threads_add((long)n_threads - 1); /* before they run: counted for as long as they may */
    for (size_t t = 1; t < n_threads; t++)
        if (pthread_create(&tid[started], NULL, worker, &q) == 0)
            started++;
    rb_threads_add(-((long)n_threads - 1 - (long)started));
    worker(&q);
    for (size_t t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    rb_threads_add(-(long)started);
    pthread_mutex_destroy(&q.lock);
    rb_free(tid);
    *cancelled = false;
    if (q.first_fail != SIZE_MAX) {
        if (err)
            *err = q.fail_err;
        return q.fail_rc;
    }
    if (q.cancel) {
        *cancelled = true;
        return q.cancel;
    }
    return RB_OK;
}
