/*
 * lib/experiments internals shared between its files: not installed, not part of the API.
 *   suite.c, closed_loop.c  the suite and closed-loop files (the loader helpers below)
 *   suite_run.c, closed_loop_run.c  the runs, on the pool of threads (pool.c)
 *   check.c  rules over a comparison report
 */
#ifndef ROBOEST_EXPERIMENTS_INTERNAL_H
#define ROBOEST_EXPERIMENTS_INTERNAL_H

#include <cjson/cJSON.h>

#include "roboest/config.h"
#include "roboest/experiments.h"

/* ---- shared by the suite and closed-loop loaders (suite.c) -------------------------------------------- */
/* {samples, seed, level} into *bs (members absent: untouched). */
int rb_experiments_want_bootstrap(rb_cfg *c, const cJSON *v, rb_bootstrap *bs);
/* An integer in [1, 1024]. */
int rb_experiments_want_threads(rb_cfg *c, const cJSON *v, size_t *out);
/* RB_ECONFIG "signal 'x' is not in pipeline <file>" with the closest signal as a suggestion. */
int rb_experiments_signal_suggestion(rb_cfg *c, const rb_pipeline *p, const char *name);

/* ---- a pool of threads over independent items (pool.c) ------------ */
typedef struct rb_pool {
    void *ctx;
    int (*task)(void *ctx, size_t i, rb_err *err); /* item i; writes only its own slot of ctx */
    size_t n;                                      /* items */
    size_t threads;                                /* 0: one per online core; never more than n */
    /* After each finished item with the items done and n, from the workers but never two at a time; non-zero
     * cancels. May be NULL. */
    int (*progress)(void *user, size_t done, size_t total);
    void *user;
} rb_pool;

/* Run task(ctx, i) for i = 0..n-1 on a shared work queue. The calling thread works too; a thread that cannot
 * start only lowers the parallelism. After a failure no item beyond the failing one is started, so the lowest
 * failing item (every lower one was started before it) decides the error whatever the timing: its code and
 * message. When progress cancels: *cancelled = true and the return is the callback's value if it is a negative
 * rb_status, RB_EINVAL otherwise (err untouched). */
int rb_pool_run(const rb_pool *pl, bool *cancelled, rb_err *err);

#endif
