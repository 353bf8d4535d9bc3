/* A comparison suite's runs over MPI ranks (roboest/suite_mpi.h). Rank 0's calling thread does every MPI call of
 * rank 0 and its run threads take runs from the same queue as the other ranks; on the other ranks the calling thread
 * does the MPI calls (MPI_THREAD_FUNNELED) and a pool of T threads (rb_pool_run, as the plain compare) runs what it
 * receives. Protocol: a rank says READY with its T, rank 0 answers with T runs (or STOP); each result (or failure)
 * is answered with the next run or STOP, so a rank gets exactly T STOPs. Only rank 0 keeps results, and the caller
 * writes only once every run is back, so a failure leaves no report. Compiled into build/libroboest_mpi.a with Open
 * MPI's flags; RB_NO_MPI: without Open MPI. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "experiments_internal.h"
#include "roboest/suite_mpi.h"

#ifndef RB_NO_MPI
#include <mpi.h>
#endif

static bool launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i]))
            return true;
    return false;
}

/* ---- the runs in progress on this rank, for a signal handler ------------------------------------------------- */
static char notes[RB_SUITE_MPI_SLOTS][240];
static volatile size_t note_len[RB_SUITE_MPI_SLOTS];
static _Thread_local long my_slot = -1;

const char *rb_suite_mpi_running(size_t slot, size_t *len, bool *mine)
{
    *len = slot < RB_SUITE_MPI_SLOTS ? note_len[slot] : 0;
    *mine = my_slot >= 0 && (size_t)my_slot == slot;
    return *len ? notes[slot] : NULL;
}

static void note_run(const rb_suite *s, size_t slot, size_t i)
{
    if (slot >= RB_SUITE_MPI_SLOTS)
        return;
    note_len[slot] = 0;
    int n = s ? snprintf(notes[slot], sizeof notes[slot], "variant %s, log %s", s->variants[i / s->n_logs].name,
                         s->log_names[i % s->n_logs])
              : 0;
    note_len[slot] = n > 0 && (size_t)n < sizeof notes[slot] ? (size_t)n : 0;
}

static void note_idle(size_t slot)
{
    if (slot < RB_SUITE_MPI_SLOTS)
        note_len[slot] = 0;
}

/* The runs at once on a rank: opts' threads, else the suite's, else 1. */
static size_t rank_threads(const rb_suite *s, const rb_suite_opts *opts)
{
    size_t t = opts && opts->threads ? opts->threads : s && s->threads ? s->threads : 1;
    return t < RB_SUITE_MPI_SLOTS ? t : RB_SUITE_MPI_SLOTS;
}

#ifdef RB_NO_MPI
int rb_suite_mpi_start(bool *active, int *rank, rb_err *err)
{
    *active = false, *rank = 0;
    return launched()
               ? rb_err_set(err, RB_EINVAL,
                            "started by an MPI launcher, but this roboest was built without MPI (make deps; make)")
               : RB_OK;
}
int rb_suite_mpi_compute(const rb_suite *s, const rb_suite_opts *opts, rb_suite_finished_fn finished, void *user,
                         const size_t *items, size_t n, rb_suite_pair **runs, rb_err *err)
{
    (void)s, (void)opts, (void)finished, (void)user, (void)items, (void)n, (void)runs, (void)rank_threads;
    (void)note_run, (void)note_idle;
    return rb_err_set(err, RB_EINVAL, "built without MPI");
}
int rb_suite_mpi_serve(const rb_suite *s, const rb_suite_opts *opts, const rb_err *load_err, rb_err *err)
{
    (void)s, (void)opts, (void)load_err;
    return rb_err_set(err, RB_EINVAL, "built without MPI");
}
void rb_suite_mpi_end(void) {}
#else

enum { TAG_READY = 1, TAG_RESULT, TAG_FAIL, TAG_ASSIGN };
#define STOP UINT64_MAX

static bool active, served;
static int my_rank, n_ranks;

static const char *level_name(int level)
{
    return level == MPI_THREAD_SINGLE       ? "MPI_THREAD_SINGLE"
           : level == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
           : level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                                            : "MPI_THREAD_MULTIPLE";
}

int rb_suite_mpi_start(bool *on, int *rank, rb_err *err)
{
    *on = false, *rank = 0;
    if (!launched())
        return RB_OK;
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return rb_err_set(err, RB_EINVAL, "cannot start MPI (MPI_Init_thread failed)");
    if (provided < MPI_THREAD_FUNNELED) {
        MPI_Finalize();
        return rb_err_set(err, RB_EINVAL,
                          "this MPI library provides %s, and compare needs MPI_THREAD_FUNNELED (its runs go on "
                          "threads beside the one that calls MPI)",
                          level_name(provided));
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
    active = *on = true;
    *rank = my_rank;
    return RB_OK;
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void send_assign(int to, uint64_t item)
{
    unsigned char b[8];
    put_u64(b, item);
    MPI_Send(b, 8, MPI_UNSIGNED_CHAR, to, TAG_ASSIGN, MPI_COMM_WORLD);
}

/* The options of one run thread's runner: one thread, a T-th of the rank's memory limit. */
static rb_suite_opts thread_opts(const rb_suite_opts *opts, size_t T)
{
    rb_suite_opts one = {1, NULL, NULL, opts ? opts->memory_limit : 0, T};
    return one;
}

/* A pool thread: runs the pool (rb_pool_run) while the calling thread stays on MPI. */
typedef struct pool_thread {
    rb_pool pl;
    pthread_t tid;
    bool started;
} pool_thread;

static void *pool_main(void *arg)
{
    pool_thread *pt = arg;
    bool cancelled;
    rb_err e;
    rb_pool_run(&pt->pl, &cancelled, &e); /* the tasks never fail: a run's failure is a message */
    return NULL;
}

static void pool_start(pool_thread *pt, void *ctx, int (*task)(void *, size_t, rb_err *), size_t T)
{
    pt->pl = (rb_pool){ctx, task, T, T, NULL, NULL};
    rb_threads_add(1); /* the pool's thread runs beside the rank's communication */
    pt->started = T && pthread_create(&pt->tid, NULL, pool_main, pt) == 0;
    if (!pt->started)
        rb_threads_add(-1);
}

static void pool_join(pool_thread *pt)
{
    if (pt->started) {
        pthread_join(pt->tid, NULL);
        rb_threads_add(-1);
    }
}

/* ---- ranks > 0 ------------------------------------------------------------------------------------------------ */
typedef struct outmsg {
    struct outmsg *next;
    int tag;
    bool spare, sending; /* spare: a slot's own, for "out of memory": not freed; sending: posted, not sent yet */
    size_t n;
    unsigned char *b; /* the item (u64), then the result's bytes, or the code (u64) and the message */
} outmsg;

/* Each slot's answer when a message cannot be allocated: its run failed, RB_ENOMEM (the slot waits until it is sent
 * before it runs again). */
static outmsg spares[RB_SUITE_MPI_SLOTS + 1];
static unsigned char spare_bytes[RB_SUITE_MPI_SLOTS + 1][32];

static outmsg *out_of_memory(size_t slot, uint64_t item)
{
    static const char msg[] = "out of memory";
    outmsg *m = &spares[slot < RB_SUITE_MPI_SLOTS ? slot : RB_SUITE_MPI_SLOTS];
    m->b = spare_bytes[m - spares];
    m->next = NULL, m->tag = TAG_FAIL, m->spare = m->sending = true, m->n = 16 + sizeof msg - 1;
    put_u64(m->b, item);
    put_u64(m->b + 8, (uint64_t)(int64_t)RB_ENOMEM);
    memcpy(m->b + 16, msg, sizeof msg - 1);
    return m;
}

typedef struct rank_work {
    const rb_suite *s;
    rb_suite_opts one; /* each run thread's runner's */
    const rb_err *load_err;
    pthread_mutex_t lock;
    pthread_cond_t work, out;
    uint64_t *queue; /* a ring of T: a rank never holds more runs than it asked for */
    size_t T, head, count;
    outmsg *first, *last;
    bool quit;
} rank_work;

/* One run into its message (a result or a failure). */
static outmsg *run_message(rank_work *w, rb_suite_runner *rn, int rn_rc, const rb_err *rn_err, uint64_t item)
{
    rb_suite_pair *pair = NULL;
    unsigned char *bytes = NULL;
    size_t len = 0;
    rb_err e;
    rb_err_clear(&e);
    int r;
    if (!w->s)
        r = w->load_err->code ? w->load_err->code : RB_EINVAL, e = *w->load_err;
    else if (!rn)
        r = rn_rc, e = *rn_err;
    else {
        size_t i = (size_t)item;
        r = rb_suite_runner_run(rn, &i, 1, &pair, &e);
    }
    if (!r)
        r = rb_suite_pair_encode(pair, &bytes, &len, &e);
    size_t ml = r ? strlen(e.msg) : 0, n = r ? 16 + ml : 8 + len;
    outmsg *m = rb_malloc(sizeof *m + n);
    if (m) {
        m->b = (unsigned char *)(m + 1);
        m->next = NULL, m->n = n, m->tag = r ? TAG_FAIL : TAG_RESULT, m->spare = m->sending = false;
        put_u64(m->b, item);
        if (r) {
            put_u64(m->b + 8, (uint64_t)(int64_t)r);
            memcpy(m->b + 16, e.msg, ml);
        } else {
            memcpy(m->b + 8, bytes, len);
        }
    }
    rb_free(bytes);
    rb_suite_pair_free(pair);
    return m;
}

static void post(rank_work *w, outmsg *m)
{
    pthread_mutex_lock(&w->lock);
    if (w->last)
        w->last->next = m;
    else
        w->first = m;
    w->last = m;
    pthread_cond_signal(&w->out);
    pthread_mutex_unlock(&w->lock);
}

/* A pool task: one slot's runs, one at a time, until the rank quits. */
static int serve_slot(void *ctx, size_t slot, rb_err *err)
{
    (void)err;
    rank_work *w = ctx;
    rb_suite_runner *rn = NULL;
    rb_err rn_err;
    rb_err_clear(&rn_err);
    int rn_rc = w->s ? rb_suite_runner_new(w->s, &w->one, &rn, &rn_err) : RB_OK;
    my_slot = (long)slot;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        while (!w->count && !w->quit)
            pthread_cond_wait(&w->work, &w->lock);
        if (!w->count) {
            pthread_mutex_unlock(&w->lock);
            break;
        }
        uint64_t item = w->queue[w->head];
        w->head = (w->head + 1) % w->T, w->count--;
        pthread_mutex_unlock(&w->lock);
        note_run(w->s, slot, (size_t)item);
        outmsg *m = run_message(w, rn, rn_rc, &rn_err, item);
        note_idle(slot);
        if (!m) {
            post(w, m = out_of_memory(slot, item));
            for (bool sending = true; sending;) {
                pthread_mutex_lock(&w->lock);
                sending = m->sending;
                pthread_mutex_unlock(&w->lock);
                if (sending)
                    nanosleep(&(struct timespec){0, 1000000}, NULL);
            }
        } else {
            post(w, m);
        }
    }
    my_slot = -1;
    rb_suite_runner_free(rn);
    return RB_OK;
}

int rb_suite_mpi_serve(const rb_suite *s, const rb_suite_opts *opts, const rb_err *load_err, rb_err *err)
{
    (void)err;
    served = true;
    rank_work w = {0};
    w.s = s, w.load_err = load_err, w.T = rank_threads(s, opts);
    w.one = thread_opts(opts, w.T);
    w.queue = rb_calloc(w.T, sizeof *w.queue);
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.work, NULL);
    pthread_cond_init(&w.out, NULL);
    pool_thread pt = {0};
    if (w.queue)
        pool_start(&pt, &w, serve_slot, w.T);
    rb_suite_runner *rn = NULL; /* no thread: the runs are made on this one, one at a time */
    rb_err rn_err;
    rb_err_clear(&rn_err);
    int rn_rc = RB_OK;
    if (!pt.started) {
        w.T = 1, w.one = thread_opts(opts, 1);
        rn_rc = s ? rb_suite_runner_new(s, &w.one, &rn, &rn_err) : RB_OK;
    }
    unsigned char ready[8];
    put_u64(ready, w.T);
    MPI_Send(ready, 8, MPI_UNSIGNED_CHAR, 0, TAG_READY, MPI_COMM_WORLD);
    size_t stops = 0, outstanding = 0;
    while (stops < w.T || outstanding) {
        bool busy = false;
        pthread_mutex_lock(&w.lock);
        outmsg *m = w.first;
        w.first = w.last = NULL;
        pthread_mutex_unlock(&w.lock);
        while (m) {
            outmsg *next = m->next;
            MPI_Send(m->b, (int)m->n, MPI_UNSIGNED_CHAR, 0, m->tag, MPI_COMM_WORLD);
            if (m->spare) {
                pthread_mutex_lock(&w.lock);
                m->sending = false;
                pthread_mutex_unlock(&w.lock);
            } else {
                rb_free(m);
            }
            m = next, outstanding--, busy = true;
        }
        int flag = 0;
        MPI_Iprobe(0, TAG_ASSIGN, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (flag) {
            unsigned char b[8];
            MPI_Recv(b, 8, MPI_UNSIGNED_CHAR, 0, TAG_ASSIGN, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            uint64_t item = get_u64(b);
            busy = true;
            if (item == STOP) {
                stops++;
            } else if (!pt.started) {
                note_run(s, 0, (size_t)item);
                outmsg *one = run_message(&w, rn, rn_rc, &rn_err, item);
                note_idle(0);
                post(&w, one ? one : out_of_memory(0, item));
                outstanding++;
            } else {
                pthread_mutex_lock(&w.lock);
                w.queue[(w.head + w.count++) % w.T] = item;
                pthread_cond_signal(&w.work);
                pthread_mutex_unlock(&w.lock);
                outstanding++;
            }
        }
        if (!busy) { /* a result wakes this at once; a new run from rank 0 waits at most 1 ms */
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 1000000;
            if (until.tv_nsec >= 1000000000)
                until.tv_sec++, until.tv_nsec -= 1000000000;
            pthread_mutex_lock(&w.lock);
            if (!w.first)
                pthread_cond_timedwait(&w.out, &w.lock, &until);
            pthread_mutex_unlock(&w.lock);
        }
    }
    pthread_mutex_lock(&w.lock);
    w.quit = true;
    pthread_cond_broadcast(&w.work);
    pthread_mutex_unlock(&w.lock);
    pool_join(&pt);
    rb_suite_runner_free(rn);
    pthread_cond_destroy(&w.work);
    pthread_cond_destroy(&w.out);
    pthread_mutex_destroy(&w.lock);
    rb_free(w.queue);
    return RB_OK;
}

/* ---- rank 0 --------------------------------------------------------------------------------------------------- */
typedef struct coord {
    const rb_suite *s;
    rb_suite_finished_fn finished;
    void *user;
    const size_t *items;
    size_t n;
    size_t *order; /* positions into items, largest expected cost first */
    rb_suite_pair **runs;
    pthread_mutex_t lock;
    size_t next, done;
    bool failed;
    size_t fail_item; /* the lowest failing run index */
    int fail_rc;
    rb_err fail_err;
    rb_suite_opts one; /* each of rank 0's run threads' runner's */
} coord;

/* Expected cost: the log's bytes times the pipeline's stages (+1: reading and scoring). */
static double cost(const rb_suite *s, size_t i)
{
    const rb_cfg_session *ses = &s->logs[i % s->n_logs];
    double bytes = 0;
    for (size_t k = 0; k < ses->n_paths; k++) {
        struct stat st;
        if (stat(ses->paths[k], &st) == 0)
            bytes += (double)st.st_size;
    }
    return bytes * (1.0 + (double)s->variants[i / s->n_logs].pipeline->n_stages);
}

static const double *sort_costs;
static int by_cost(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (sort_costs[x] != sort_costs[y])
        return sort_costs[x] > sort_costs[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The next position to run (SIZE_MAX: none left). After a failure only runs of a lower index still start, so the
 * lowest failing run decides the error, as in a single process (rb_pool_run). */
static size_t take(coord *c)
{
    pthread_mutex_lock(&c->lock);
    size_t k = SIZE_MAX;
    while (k == SIZE_MAX && c->next < c->n) {
        size_t p = c->order[c->next++];
        if (!c->failed || c->items[p] < c->fail_item)
            k = p;
    }
    pthread_mutex_unlock(&c->lock);
    return k;
}

static void fail(coord *c, size_t k, int rc, const rb_err *e)
{
    pthread_mutex_lock(&c->lock);
    if (!c->failed || c->items[k] < c->fail_item) {
        c->fail_item = c->items[k];
        c->fail_rc = rc;
        c->fail_err = *e;
        c->fail_err.code = rc;
    }
    c->failed = true;
    c->done++;
    pthread_mutex_unlock(&c->lock);
}

static void finish(coord *c, size_t k, rb_suite_pair *pair)
{
    rb_err e;
    rb_err_clear(&e);
    int rc = c->finished ? c->finished(c->user, c->items[k], pair, &e) : RB_OK;
    if (rc) {
        rb_suite_pair_free(pair);
        fail(c, k, rc, &e);
        return;
    }
    pthread_mutex_lock(&c->lock);
    c->runs[k] = pair;
    c->done++;
    pthread_mutex_unlock(&c->lock);
}

/* A pool task on rank 0: one slot's runs, taken from the queue the other ranks draw from too. */
static int local_slot(void *arg, size_t slot, rb_err *err)
{
    (void)slot, (void)err;
    coord *c = arg;
    rb_suite_runner *rn = NULL;
    rb_err e;
    rb_err_clear(&e);
    int rc = rb_suite_runner_new(c->s, &c->one, &rn, &e);
    for (size_t k; (k = take(c)) != SIZE_MAX;) {
        rb_suite_pair *pair = NULL;
        size_t i = c->items[k];
        int r = rc ? rc : rb_suite_runner_run(rn, &i, 1, &pair, &e);
        if (r)
            fail(c, k, r, &e);
        else
            finish(c, k, pair);
    }
    rb_suite_runner_free(rn);
    return RB_OK;
}

static size_t position_of(const coord *c, uint64_t item)
{
    for (size_t k = 0; k < c->n; k++)
        if (c->items[k] == item)
            return k;
    return SIZE_MAX;
}

/* The next run to rank `to`, or STOP (counted in *stops). */
static void hand_out(coord *c, int to, size_t *stops)
{
    size_t next = take(c);
    send_assign(to, next == SIZE_MAX ? STOP : c->items[next]);
    *stops += next == SIZE_MAX;
}

/* A message from a worker rank: its READY (with its T: that many runs go out), or a result or a failure (then it
 * gets its next run). False: no memory to receive it yet (it stays, probed again). */
static bool serve_message(coord *c, const MPI_Status *st, size_t *slots, size_t *ready, size_t *stops)
{
    int len = 0;
    MPI_Get_count(st, MPI_UNSIGNED_CHAR, &len);
    unsigned char *b = rb_malloc(len ? (size_t)len : 1);
    if (!b)
        return false;
    MPI_Recv(b, len, MPI_UNSIGNED_CHAR, st->MPI_SOURCE, st->MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (st->MPI_TAG == TAG_READY) {
        size_t T = len >= 8 ? (size_t)get_u64(b) : 1;
        rb_free(b);
        (*ready)++, *slots += T;
        for (size_t t = 0; t < T; t++)
            hand_out(c, st->MPI_SOURCE, stops);
        return true;
    }
    size_t k = len >= 8 ? position_of(c, get_u64(b)) : SIZE_MAX;
    rb_err e;
    rb_err_clear(&e);
    if (st->MPI_TAG == TAG_RESULT && k != SIZE_MAX) {
        rb_suite_pair *pair = NULL;
        char what[64];
        snprintf(what, sizeof what, "the result from rank %d", st->MPI_SOURCE);
        int rc = rb_suite_pair_decode(b + 8, (size_t)len - 8, what, &pair, &e);
        if (rc)
            fail(c, k, rc, &e);
        else
            finish(c, k, pair);
    } else if (st->MPI_TAG == TAG_FAIL && k != SIZE_MAX && len >= 16) {
        int rc = (int)(int64_t)get_u64(b + 8);
        snprintf(e.msg, sizeof e.msg, "%.*s", len - 16, (const char *)b + 16);
        fail(c, k, rc, &e);
    }
    rb_free(b);
    hand_out(c, st->MPI_SOURCE, stops);
    return true;
}

int rb_suite_mpi_compute(const rb_suite *s, const rb_suite_opts *opts, rb_suite_finished_fn finished, void *user,
                         const size_t *items, size_t n, rb_suite_pair **runs, rb_err *err)
{
    served = true;
    coord c = {0};
    c.s = s, c.finished = finished, c.user = user, c.items = items, c.n = n, c.runs = runs;
    size_t T = rank_threads(s, opts);
    c.one = thread_opts(opts, T);
    c.order = rb_calloc(n ? n : 1, sizeof *c.order);
    c.fail_item = SIZE_MAX;
    pthread_mutex_init(&c.lock, NULL);
    double *costs = rb_calloc(n ? n : 1, sizeof *costs);
    for (size_t k = 0; c.order && costs && k < n; k++) {
        c.order[k] = k;
        costs[k] = cost(s, items[k]);
    }
    if (c.order && costs) {
        sort_costs = costs;
        qsort(c.order, n, sizeof *c.order, by_cost);
    } else {
        c.n = 0; /* nothing handed out: every rank is stopped, and the error below says why */
    }
    pool_thread pt = {0};
    pool_start(&pt, &c, local_slot, T);
    size_t slots = 0, ready = 0, stops = 0, workers = (size_t)n_ranks - 1;
    while (ready < workers || stops < slots) { /* every rank gets its STOPs once nothing is left, whatever happened */
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag || !serve_message(&c, &st, &slots, &ready, &stops))
            nanosleep(&(struct timespec){0, 1000000}, NULL); /* 1 ms: a hand-out waits at most that */
    }
    pool_join(&pt);
    rb_free(costs);
    pthread_mutex_destroy(&c.lock);
    int rc = RB_OK;
    if (!c.order || !costs)
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    else if (c.failed) {
        *err = c.fail_err;
        rc = c.fail_rc;
    } else if (c.done < n) {
        rc = rb_err_set(err, RB_EINVAL, "%s: %zu runs of %zu came back", s->path, c.done, n);
    }
    rb_free(c.order);
    for (size_t k = 0; rc && k < n; k++) {
        rb_suite_pair_free(runs[k]);
        runs[k] = NULL;
    }
    return rc;
}

void rb_suite_mpi_end(void)
{
    if (!active)
        return;
    if (my_rank == 0 && !served) /* rank 0 stopped before handing anything out: release the others */
        for (int w = 1; w < n_ranks; w++) {
            unsigned char b[8];
            MPI_Status st;
            MPI_Recv(b, 8, MPI_UNSIGNED_CHAR, w, TAG_READY, MPI_COMM_WORLD, &st);
            int len = 0;
            MPI_Get_count(&st, MPI_UNSIGNED_CHAR, &len);
            for (uint64_t t = 0, T = len >= 8 ? get_u64(b) : 1; t < T; t++)
                send_assign(w, STOP);
        }
    MPI_Finalize();
    active = false;
}
#endif
