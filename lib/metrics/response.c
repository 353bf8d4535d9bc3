/* How an estimate follows the reference's steps (rise time, delay) and how far it strays around events
 * (foot impacts, contacts made or broken): statistics that need the time axis, next to the per-sample
 * accumulators of stats.c. */
#include <math.h>

#include "roboest/metrics.h"

static const char *est_name(const rb_metric_input *in) { return in->estimate_name ? in->estimate_name : "estimate"; }

static const char *ref_name(const rb_metric_input *in) { return in->reference_name ? in->reference_name : "reference"; }

static bool in_window(const rb_metric_input *in, size_t t) { return in->time[t] >= in->t0 && in->time[t] <= in->t1; }

/* The window as the sample range [*w0, *w1) (times increasing: the samples inside are consecutive). */
static int window_range(const rb_metric_input *in, const char *fn, size_t *w0, size_t *w1, rb_err *err)
{
    if (!in)
        return rb_err_set(err, RB_EINVAL, "%s: no input", fn);
    if (!in->time || (in->n_samples * in->n_elements > 0 && (!in->estimate || !in->reference)))
        return rb_err_set(err, RB_EINVAL, "%s / %s: %s needs the time vector and both signals", est_name(in),
                          ref_name(in), fn);
    if (isnan(in->t0) || isnan(in->t1))
        return rb_err_set(err, RB_EINVAL, "%s / %s: window bound is NaN", est_name(in), ref_name(in));
    *w0 = 0;
    while (*w0 < in->n_samples && !in_window(in, *w0))
        (*w0)++;
    *w1 = *w0;
    while (*w1 < in->n_samples && in_window(in, *w1))
        (*w1)++;
    if (*w1 > *w0)
        return RB_OK;
    return rb_err_set(err, RB_EINPUT, "window [%g, %g] s holds no sample of %s / %s", in->t0, in->t1, est_name(in),
                      ref_name(in));
}

/* ---- steps --------------------------------------------------------------------------------------------------- */
typedef struct step_sums {
    double rise, delay, unsettled;
    size_t n;
} step_sums;

/* The first time in samples [ks, ke) at which the fraction of the way from r0 to r1 reaches p; NaN if never. */
static double crossing(const rb_metric_input *in, size_t i, size_t ks, size_t ke, double r0, double r1, double p)
{
    size_t n = in->n_elements;
    double prev = NAN;
    for (size_t k = ks; k < ke; k++) {
        double f = (in->estimate[k * n + i] - r0) / (r1 - r0);
        if (f >= p) {
            if (k == ks || !(f > prev)) /* never before the step's own time */
                return in->time[k];
            return in->time[k - 1] + (p - prev) / (f - prev) * (in->time[k] - in->time[k - 1]);
        }
        prev = f;
    }
    return NAN;
}

/* One step of element i: samples [ks, ke), ending at time t_end. */
static void one_step(const rb_metric_input *in, size_t i, size_t ks, size_t ke, double t_end, step_sums *sum)
{
    size_t n = in->n_elements;
    double r0 = in->reference[(ks - 1) * n + i], r1 = in->reference[ks * n + i], t_step = in->time[ks];
    double t10 = crossing(in, i, ks, ke, r0, r1, 0.1), t50 = crossing(in, i, ks, ke, r0, r1, 0.5),
           t90 = crossing(in, i, ks, ke, r0, r1, 0.9);
    if (isnan(t90)) /* unsettled: the time left bounds what was not reached */
        sum->unsettled += 1;
    sum->rise += (isnan(t90) ? t_end : t90) - (isnan(t10) ? t_step : t10);
    sum->delay += (isnan(t50) ? t_end : t50) - t_step;
    sum->n++;
}

static step_sums element_steps(const rb_metric_input *in, size_t i, size_t w0, size_t w1, double min_jump)
{
    size_t n = in->n_elements, ks = 0;
    step_sums sum = {0, 0, 0, 0};
    for (size_t k = w0 + 1; k < w1; k++) {
        if (!(fabs(in->reference[k * n + i] - in->reference[(k - 1) * n + i]) > min_jump))
            continue;
        if (ks)
            one_step(in, i, ks, k, in->time[k], &sum);
        ks = k;
    }
    if (ks)
        one_step(in, i, ks, w1, in->time[w1 - 1], &sum);
    return sum;
}

static void set_steps(rb_stats *s, const step_sums *sum)
{
    s->n_steps = sum->n;
    s->rise_time = sum->n ? sum->rise / (double)sum->n : NAN;
    s->step_delay = sum->n ? sum->delay / (double)sum->n : NAN;
    s->steps_unsettled = sum->unsettled;
}

int rb_metrics_steps(const rb_metric_input *in, double min_jump, rb_stats *per_element, rb_stats *overall, rb_err *err)
{
    size_t w0, w1;
    int rc = window_range(in, "rb_metrics_steps", &w0, &w1, err);
    if (rc)
        return rc;
    if (!(min_jump > 0) || !isfinite(min_jump))
        return rb_err_set(err, RB_EINVAL, "%s / %s: the minimum jump of a step must be finite and > 0, not %g",
                          est_name(in), ref_name(in), min_jump);
    step_sums all = {0, 0, 0, 0};
    for (size_t i = 0; i < in->n_elements; i++) {
        step_sums sum = element_steps(in, i, w0, w1, min_jump);
        if (per_element)
            set_steps(&per_element[i], &sum);
        all.rise += sum.rise;
        all.delay += sum.delay;
        all.unsettled += sum.unsettled;
        all.n += sum.n;
    }
    if (overall)
        set_steps(overall, &all);
    return RB_OK;
}

/* ---- events ---------------------------------------------------------------------------------------------------- */
static void set_events(rb_stats *s, double peak_sum, double max, size_t n)
{
    s->n_events = n;
    s->event_peak = n ? peak_sum / (double)n : NAN;
    s->event_max = n ? max : NAN;
}

int rb_metrics_events(const rb_metric_input *in, const double *event_times, size_t n_events, double a, double b,
                      rb_stats *per_element, rb_stats *overall, rb_err *err)
{
    size_t w0, w1, n = in ? in->n_elements : 0, used = 0;
    int rc = window_range(in, "rb_metrics_events", &w0, &w1, err);
    if (rc)
        return rc;
    if ((!event_times && n_events) || !isfinite(a) || !isfinite(b) || a > b)
        return rb_err_set(err, RB_EINVAL, "%s / %s: events need times and an interval [a, b] with a <= b, not [%g, %g]",
                          est_name(in), ref_name(in), a, b);
    /* per_element's fields are the running sums (peak sum, max); pooled ones live here */
    for (size_t i = 0; per_element && i < n; i++)
        per_element[i].event_peak = per_element[i].event_max = 0;
    double pooled_sum = 0, pooled_max = 0;
    for (size_t e = 0; e < n_events; e++) {
        double lo = event_times[e] + a, hi = event_times[e] + b;
        size_t k0 = w0, k1 = w1; /* binary search of the first sample at or after lo */
        while (k0 < k1) {
            size_t mid = k0 + (k1 - k0) / 2;
            if (in->time[mid] < lo)
                k0 = mid + 1;
            else
                k1 = mid;
        }
        if (k0 >= w1 || in->time[k0] > hi)
            continue;
        double event_pooled = 0;
        for (size_t i = 0; i < n; i++) {
            double peak = 0;
            for (size_t k = k0; k < w1 && in->time[k] <= hi; k++)
                peak = fmax(peak, fabs(in->estimate[k * n + i] - in->reference[k * n + i]));
            if (per_element) {
                per_element[i].event_peak += peak;
                per_element[i].event_max = fmax(per_element[i].event_max, peak);
            }
            event_pooled = fmax(event_pooled, peak);
        }
        pooled_sum += event_pooled;
        pooled_max = fmax(pooled_max, event_pooled);
        used++;
    }
    for (size_t i = 0; per_element && i < n; i++)
        set_events(&per_element[i], per_element[i].event_peak, per_element[i].event_max, used);
    if (overall)
        set_events(overall, pooled_sum, pooled_max, used);
    return RB_OK;
}
