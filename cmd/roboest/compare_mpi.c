/* roboest compare over MPI: rank 0 hands the (variant, log) runs out one at a time, largest expected cost first, and
 * runs them too on its own threads; every other rank reads its logs itself, runs what it is given and sends the
 * run's result (its byte form, rb_suite_pair_encode) back. Only rank 0 writes, and only once every run is back, so
 * a failure leaves no report. The library knows nothing of MPI. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "compare_mpi.h"

#ifndef RB_NO_MPI
#include <mpi.h>
#endif

enum { TAG_READY = 1, TAG_RESULT, TAG_FAIL, TAG_ASSIGN };
#define STOP UINT64_MAX

static bool active, served;
static int my_rank, n_ranks;

bool cli_mpi_active(void) { return active; }

static bool launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i]))
            return true;
    return false;
}

#ifdef RB_NO_MPI
int cli_mpi_start(int *rank)
{
    *rank = 0;
    if (!launched())
        return CLI_EXIT_OK;
    fputs("roboest: started by an MPI launcher, but this roboest was built without MPI (make deps; make)\n", stderr);
    return CLI_EXIT_INTERNAL;
}
int cli_mpi_compute(const rb_suite *s, const rb_suite_opts *opts, rb_suite_finished_fn finished, void *user,
                    const size_t *items, size_t n, rb_suite_pair **runs, rb_err *err)
{
    (void)s, (void)opts, (void)finished, (void)user, (void)items, (void)n, (void)runs;
    return rb_err_set(err, RB_EINVAL, "built without MPI");
}
int cli_mpi_serve(const rb_suite *s, const rb_suite_opts *opts, rb_err *err)
{
    (void)s, (void)opts;
    return rb_err_set(err, RB_EINVAL, "built without MPI");
}
int cli_mpi_end(int code) { return code; }
#else

int cli_mpi_start(int *rank)
{
    *rank = 0;
    if (!launched())
        return CLI_EXIT_OK;
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fputs("roboest: cannot start MPI (MPI_Init_thread failed)\n", stderr);
        return CLI_EXIT_INTERNAL;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
    active = true;
    *rank = my_rank;
    return CLI_EXIT_OK;
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

/* ---- a rank that dies names its run ---------------------------------------------------------------------------- */
static char crash_note[512];
static size_t crash_len;

static void on_crash(int sig)
{
    if (crash_len && write(STDERR_FILENO, crash_note, crash_len) < 0)
        crash_len = 0;
    signal(sig, SIG_DFL);
    raise(sig);
}

static void note_run(const rb_suite *s, size_t i)
{
    int n = snprintf(crash_note, sizeof crash_note, "roboest: rank %d died while running variant %s, log %s\n", my_rank,
                     s->variants[i / s->n_logs].name, s->log_names[i % s->n_logs]);
    crash_len = n > 0 && (size_t)n < sizeof crash_note ? (size_t)n : 0;
}

static void catch_crashes(void)
{
    /* SIGTERM: a scheduler's kill (scancel, a time limit), the run named as for a crash; SIGKILL cannot be caught */
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], on_crash);
}

/* One run on this rank's runner (one thread). */
static int run_one(rb_suite_runner *rn, size_t item, rb_suite_pair **out, rb_err *err)
{
    return rb_suite_runner_run(rn, &item, 1, out, err);
}

int cli_mpi_serve(const rb_suite *s, const rb_suite_opts *opts, rb_err *err)
{
    rb_suite_opts one = {1, NULL, NULL, opts ? opts->memory_limit : 0, 1}; /* one run at a time: the rank's limit */
    rb_suite_runner *rn = NULL;
    int rc = s ? rb_suite_runner_new(s, &one, &rn, err) : err->code; /* without a suite: every run fails with err */
    served = true;
    catch_crashes();
    MPI_Send(NULL, 0, MPI_UNSIGNED_CHAR, 0, TAG_READY, MPI_COMM_WORLD);
    for (;;) {
        unsigned char b[8];
        MPI_Recv(b, 8, MPI_UNSIGNED_CHAR, 0, TAG_ASSIGN, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        uint64_t item = get_u64(b);
        if (item == STOP)
            break;
        if (s)
            note_run(s, (size_t)item);
        rb_suite_pair *pair = NULL;
        unsigned char *bytes = NULL;
        size_t len = 0;
        rb_err e;
        rb_err_clear(&e);
        int r = rn ? run_one(rn, (size_t)item, &pair, &e) : rc;
        if (!rn)
            e = *err;
        if (!r)
            r = rb_suite_pair_encode(pair, &bytes, &len, &e);
        crash_len = 0;
        unsigned char *msg;
        size_t n;
        if (!r) {
            n = 8 + len;
            msg = malloc(n);
            put_u64(msg, item);
            memcpy(msg + 8, bytes, len);
        } else {
            size_t ml = strlen(e.msg);
            n = 16 + ml;
            msg = malloc(n);
            put_u64(msg, item);
            put_u64(msg + 8, (uint64_t)(int64_t)r);
            memcpy(msg + 16, e.msg, ml);
        }
        MPI_Send(msg, (int)n, MPI_UNSIGNED_CHAR, 0, r ? TAG_FAIL : TAG_RESULT, MPI_COMM_WORLD);
        free(msg);
        rb_free(bytes);
        rb_suite_pair_free(pair);
    }
    rb_suite_runner_free(rn);
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
    size_t memory_limit; /* rb_suite_opts' */
    size_t memory_parts; /* rank 0's threads: each runs with a part of the limit */
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

static void *local_worker(void *arg)
{
    coord *c = arg;
    rb_suite_opts one = {1, NULL, NULL, c->memory_limit, c->memory_parts}; /* a thread's part of the limit */
    rb_suite_runner *rn = NULL;
    rb_err e;
    int rc = rb_suite_runner_new(c->s, &one, &rn, &e);
    for (size_t k; (k = take(c)) != SIZE_MAX;) {
        rb_suite_pair *pair = NULL;
        int r = rc ? rc : run_one(rn, c->items[k], &pair, &e);
        if (r)
            fail(c, k, r, &e);
        else
            finish(c, k, pair);
    }
    rb_suite_runner_free(rn);
    return NULL;
}

static size_t position_of(const coord *c, uint64_t item)
{
    for (size_t k = 0; k < c->n; k++)
        if (c->items[k] == item)
            return k;
    return SIZE_MAX;
}

/* A message from a worker rank: a result or a failure (then it wants the next run), or its first request. */
static void serve_message(coord *c, const MPI_Status *st, size_t *stopped)
{
    int len = 0;
    MPI_Get_count(st, MPI_UNSIGNED_CHAR, &len);
    unsigned char *b = malloc(len ? (size_t)len : 1);
    MPI_Recv(b, len, MPI_UNSIGNED_CHAR, st->MPI_SOURCE, st->MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    size_t k = len >= 8 && st->MPI_TAG != TAG_READY ? position_of(c, get_u64(b)) : SIZE_MAX;
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
    free(b);
    size_t next = take(c);
    send_assign(st->MPI_SOURCE, next == SIZE_MAX ? STOP : c->items[next]);
    *stopped += next == SIZE_MAX;
}

int cli_mpi_compute(const rb_suite *s, const rb_suite_opts *opts, rb_suite_finished_fn finished, void *user,
                    const size_t *items, size_t n, rb_suite_pair **runs, rb_err *err)
{
    served = true;
    coord c = {0};
    c.s = s, c.finished = finished, c.user = user, c.items = items, c.n = n, c.runs = runs;
    c.memory_limit = opts ? opts->memory_limit : 0;
    c.order = calloc(n ? n : 1, sizeof *c.order);
    c.fail_item = SIZE_MAX;
    pthread_mutex_init(&c.lock, NULL);
    double *costs = calloc(n ? n : 1, sizeof *costs);
    for (size_t k = 0; k < n; k++) {
        c.order[k] = k;
        costs[k] = cost(s, items[k]);
    }
    sort_costs = costs;
    qsort(c.order, n, sizeof *c.order, by_cost);
    size_t n_threads = opts && opts->threads ? opts->threads : 1;
    c.memory_parts = n_threads;
    pthread_t *tid = calloc(n_threads, sizeof *tid);
    size_t started = 0;
    for (size_t t = 0; t < n_threads; t++)
        started += pthread_create(&tid[started], NULL, local_worker, &c) == 0;
    size_t stopped = 0, workers = (size_t)n_ranks - 1;
    while (stopped < workers) { /* every rank gets STOP once nothing is left, whatever happened */
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (flag)
            serve_message(&c, &st, &stopped);
        else
            nanosleep(&(struct timespec){0, 1000000}, NULL); /* 1 ms: a hand-out waits at most that */
    }
    for (size_t t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    free(tid);
    free(costs);
    free(c.order);
    pthread_mutex_destroy(&c.lock);
    int rc = RB_OK;
    if (c.failed) {
        *err = c.fail_err;
        rc = c.fail_rc;
    } else if (c.done < n) {
        rc = rb_err_set(err, RB_EINVAL, "%s: %zu runs of %zu came back", s->path, c.done, n);
    }
    for (size_t k = 0; rc && k < n; k++) {
        rb_suite_pair_free(runs[k]);
        runs[k] = NULL;
    }
    return rc;
}

int cli_mpi_end(int code)
{
    if (!active)
        return code;
    if (my_rank == 0 && !served) /* rank 0 stopped before handing anything out: release the others */
        for (int w = 1; w < n_ranks; w++) {
            MPI_Recv(NULL, 0, MPI_UNSIGNED_CHAR, w, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            send_assign(w, STOP);
        }
    MPI_Finalize();
    return code;
}
#endif
