/* A constant offset averaged over a still window at the start of a run (roboest/filters.h). */
#include <math.h>
#include <string.h>

#include "roboest/filters.h"

int rb_still_offset_init(rb_still_offset *o, const rb_still_offset_cfg *cfg, size_t m, rb_err *err)
{
    memset(o, 0, sizeof *o);
    if (!cfg->first_only && cfg->given && !(cfg->w1 > cfg->w0))
        return rb_err_set(err, RB_EINVAL, "still offset: window [%g, %g] s: t1 must be after t0", cfg->w0, cfg->w1);
    if (!cfg->first_only && !cfg->given && !(cfg->speed > 0 && cfg->t_max > 0))
        return rb_err_set(err, RB_EINVAL, "still offset: speed (%g) and t_max (%g s) must be > 0", cfg->speed,
                          cfg->t_max);
    o->cfg = *cfg, o->m = m;
    if (!(o->sum = rb_calloc(9 * m + 1, sizeof *o->sum)))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    o->cnt = o->sum + m, o->offset = o->cnt + m;
    o->done_sum = o->offset + m, o->done_cnt = o->done_sum + m, o->prev_sum = o->done_cnt + m;
    o->prev_cnt = o->prev_sum + m, o->cur_sum = o->prev_cnt + m, o->cur_cnt = o->cur_sum + m;
    return RB_OK;
}

void rb_still_offset_free(rb_still_offset *o)
{
    rb_free(o->sum);
    o->sum = o->cnt = o->offset = NULL;
}

static void accumulate(rb_still_offset *o, const double *meas, const double *pred)
{
    for (size_t i = 0; i < o->m; i++) {
        double d = meas[i] - pred[i];
        if (isfinite(d))
            o->sum[i] += d, o->cnt[i] += 1.0, o->offset[i] = o->sum[i] / o->cnt[i], o->cur_sum[i] += d,
                                              o->cur_cnt[i] += 1.0;
    }
    o->n_avg++;
}

/* Detected window: blocks of RB_STILL_OFFSET_GUARD s; the block before the current one is committed when a new one
 * starts. */
static void next_block(rb_still_offset *o, double t)
{
    if (t - o->t_block < RB_STILL_OFFSET_GUARD)
        return;
    for (size_t i = 0; i < o->m; i++) {
        o->done_sum[i] += o->prev_sum[i], o->done_cnt[i] += o->prev_cnt[i];
        o->prev_sum[i] = o->cur_sum[i], o->prev_cnt[i] = o->cur_cnt[i];
        o->cur_sum[i] = o->cur_cnt[i] = 0.0;
    }
    o->t_block = t;
}

/* A joint moved: the offset is the committed blocks' mean (the last 0.05-0.1 s dropped), where they hold samples. */
static void drop_guard(rb_still_offset *o)
{
    for (size_t i = 0; i < o->m; i++)
        if (o->done_cnt[i] > 0)
            o->offset[i] = o->done_sum[i] / o->done_cnt[i];
}

static double max_abs(const double *x, size_t n)
{
    double v = 0.0;
    for (size_t i = 0; i < n; i++)
        v = fabs(x[i]) > v || isnan(x[i]) ? fabs(x[i]) : v;
    return v;
}

void rb_still_offset_add(rb_still_offset *o, double t, const double *dq, size_t n, const double *meas,
                         const double *pred)
{
    if (o->frozen)
        return;
    if (!o->started) { /* the first sample's offset: in use until a window sample replaces it */
        o->started = true, o->t_first = o->t_end = o->t_block = t;
        for (size_t i = 0; i < o->m; i++)
            o->offset[i] = isfinite(meas[i] - pred[i]) ? meas[i] - pred[i] : 0.0;
        if (o->cfg.first_only) {
            o->frozen = true, o->n_avg = 1;
            return;
        }
    }
    double rel = t - o->t_first;
    if (o->cfg.given) {
        if (rel > o->cfg.w1)
            o->frozen = true;
        else if (rel >= o->cfg.w0)
            accumulate(o, meas, pred);
        return;
    }
    double v = max_abs(dq, n);
    if (isnan(v)) /* no velocity: neither still nor moving */
        return;
    o->t_end = t;
    if (v >= o->cfg.speed) {
        o->frozen = true;
        drop_guard(o);
        return;
    }
    next_block(o, t);
    accumulate(o, meas, pred);
    if (rel >= o->cfg.t_max)
        o->frozen = true;
}
