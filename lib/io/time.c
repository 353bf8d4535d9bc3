/* Timestamps: checks and statistics, sample clocks, resampling in one merge pass. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/io.h"

/* k-th smallest of x[0..n) (x is reordered): Hoare's selection with the middle element as pivot,
 * which stays linear on the many equal intervals of a regularly sampled log. */
static double select_kth(double *x, size_t n, size_t k)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
    while (lo < hi) {
        double pivot = x[kk];
        ptrdiff_t i = lo, j = hi;
        do {
            while (x[i] < pivot)
                i++;
            while (pivot < x[j])
                j--;
            if (i <= j) {
                double t = x[i];
                x[i++] = x[j];
                x[j--] = t;
            }
        } while (i <= j);
        if (j < kk)
            lo = i;
        if (kk < i)
            hi = j;
    }
    return x[kk];
}

/* Median of x[0..n), n >= 1 (x is reordered): the mean of the two middle values when n is even. */
static double median_of(double *x, size_t n)
{
    double upper = select_kth(x, n, n / 2);
    if (n % 2)
        return upper;
    /* after selection x[0 .. n/2) holds the lower half: its maximum is the other middle value */
    double lower = x[0];
    for (size_t k = 1; k < n / 2; k++)
        if (x[k] > lower)
            lower = x[k];
    return lower + (upper - lower) / 2;
}

static int check_order(const rb_channel *ch, rb_err *err)
{
    for (size_t k = 0; k < ch->n_samples; k++) {
        double t = ch->time[k];
        if (!isfinite(t))
            return rb_err_set(err, RB_EINPUT, "channel %s: sample %zu: timestamp %g is not finite", ch->name, k, t);
        if (k > 0 && !(t > ch->time[k - 1]))
            return rb_err_set(err, RB_EINPUT, "channel %s: sample %zu: timestamp %.17g is not after %.17g", ch->name, k,
                              t, ch->time[k - 1]);
    }
    return RB_OK;
}

int rb_channel_check_time(const rb_channel *ch, double gap_factor, rb_time_report *rep, rb_err *err)
{
    if (!ch || !rep || !(gap_factor > 0) || !isfinite(gap_factor))
        return rb_err_set(err, RB_EINVAL, "rb_channel_check_time: NULL argument or gap factor %g not > 0", gap_factor);
    size_t T = ch->n_samples;
    *rep = (rb_time_report){NAN, NAN, NAN, 0, NAN, SIZE_MAX, NAN};
    int rc = check_order(ch, err);
    if (rc || T == 0)
        return rc;
    rep->t_first = ch->time[0];
    rep->t_last = ch->time[T - 1];
    if (T < 2)
        return RB_OK;
    double *dt = rb_malloc((T - 1) * sizeof *dt);
    if (!dt)
        return rb_err_set(err, RB_ENOMEM, "channel %s: out of memory for %zu intervals", ch->name, T - 1);
    rep->max_gap = 0;
    for (size_t k = 1; k < T; k++) {
        dt[k - 1] = ch->time[k] - ch->time[k - 1];
        if (dt[k - 1] > rep->max_gap)
            rep->max_gap = dt[k - 1];
    }
    rep->median_dt = median_of(dt, T - 1);
    rb_free(dt);
    double limit = gap_factor * rep->median_dt, gap_total = 0;
    for (size_t k = 1; k < T; k++) {
        double d = ch->time[k] - ch->time[k - 1];
        if (d > limit) {
            gap_total += d;
            if (rep->n_gaps++ == 0)
                rep->first_gap = k;
        }
    }
    /* Not 1 / median: at 1.7e9 s (epoch) doubles are 2.4e-7 s apart, so every 1 ms interval is off by up to
     * that, and the median is one such interval (999.8 Hz); the span between samples has no such error. */
    rep->rate = (double)(T - 1 - rep->n_gaps) / ((rep->t_last - rep->t_first) - gap_total);
    return RB_OK;
}

/* ---- clocks ----------------------------------------------------------------------------------- */

/* More samples than any log's clock: 8 GB of times alone. Reached, it is the input's units, not the memory. */
#define CLOCK_MAX_SAMPLES 1e9
/* Resampling refuses clocks this many times longer than the longest channel (and above RESAMPLE_FLOOR samples). */
#define RESAMPLE_MAX_FACTOR 1000.0
#define RESAMPLE_FLOOR 1e7

/* The likely cause of an impossible clock at `rate` over [t0, t1], from the timestamps' size and, when known (not
 * NaN), a channel's median interval dt. */
static bool units_hint(double t0, double t1, double dt, char *buf, size_t n)
{
    double top = fmax(fabs(t0), fabs(t1));
    if ((top >= 1e17 && top < 1e20) || (dt >= 1e5 && dt < 1e11))
        snprintf(buf, n, "timestamps look like nanoseconds: scale them by 1e-9");
    else if ((top >= 1e14 && top < 1e17) || (dt >= 100 && dt < 1e5))
        snprintf(buf, n, "timestamps look like microseconds: scale them by 1e-6");
    else
        return false;
    return true;
}

bool rb_time_units_hint(const rb_time_report *rep, char *buf, size_t n)
{
    return units_hint(rep->t_first, rep->t_last, rep->median_dt, buf, n);
}

static void clock_cause(double t0, double t1, double rate, double dt, const char *channel, char *buf, size_t n)
{
    double span = t1 - t0;
    if (units_hint(t0, t1, dt, buf, n))
        ;
    else if (!(span < 1e9))
        snprintf(buf, n, "timestamps spanning %g s are not seconds", span);
    else if (dt > 0 && channel)
        snprintf(buf, n, "%g Hz is %.3g times the rate of channel %s (%g Hz, 1 / median interval)", rate, rate * dt,
                 channel, 1.0 / dt);
    else
        snprintf(buf, n, "%g Hz is too high a rate for %g s", rate, span);
}

void rb_clock_free(rb_clock *clk)
{
    if (!clk)
        return;
    rb_free(clk->t);
    clk->t = NULL;
    clk->n = 0;
}

int rb_clock_uniform(rb_clock *clk, double t0, double t1, double rate, rb_err *err)
{
    if (!clk)
        return rb_err_set(err, RB_EINVAL, "rb_clock_uniform: NULL clock");
    clk->n = 0;
    clk->t = NULL;
    if (!isfinite(t0) || !isfinite(t1) || !isfinite(rate) || !(rate > 0) || t1 < t0)
        return rb_err_set(err, RB_EINVAL, "uniform clock from %g s to %g s at %g Hz: need finite t0 <= t1, rate > 0",
                          t0, t1, rate);
    /* The 1e-9 keeps t1 when (t1 - t0) rate lands just below an integer through rounding. */
    double steps = floor((t1 - t0) * rate + 1e-9);
    if (!(steps < CLOCK_MAX_SAMPLES)) {
        char cause[160];
        clock_cause(t0, t1, rate, NAN, NULL, cause, sizeof cause);
        return rb_err_set(err, RB_EINPUT, "uniform clock from %g s to %g s at %g Hz: %.3g samples: %s", t0, t1, rate,
                          steps + 1, cause);
    }
    size_t n = (size_t)steps + 1;
    double *t = rb_malloc(n * sizeof *t);
    if (!t)
        return rb_err_set(err, RB_ENOMEM, "out of memory for a clock of %zu samples", n);
    for (size_t k = 0; k < n; k++) {
        /* k / rate, not k * (1 / rate) nor a running sum: 3 / 10 is 0.3 where 3 * 0.1 is not, and
         * nothing drifts over long clocks. */
        t[k] = t0 + (double)k / rate;
        if (k > 0 && !(t[k] > t[k - 1])) {
            rb_free(t);
            return rb_err_set(err, RB_EINVAL,
                              "uniform clock from %.17g s at %g Hz: step below the resolution of the time values", t0,
                              rate);
        }
    }
    clk->n = n;
    clk->t = t;
    return RB_OK;
}

int rb_clock_from_channel(rb_clock *clk, const rb_channel *ch, double t0, double t1, rb_err *err)
{
    if (!clk || !ch)
        return rb_err_set(err, RB_EINVAL, "rb_clock_from_channel: NULL argument");
    clk->n = 0;
    clk->t = NULL;
    if (isnan(t0) || isnan(t1) || t1 < t0)
        return rb_err_set(err, RB_EINVAL, "channel %s: clock window [%g, %g] s is empty", ch->name, t0, t1);
    size_t first = 0, n = 0;
    for (size_t k = 0; k < ch->n_samples; k++) {
        double t = ch->time[k];
        if (!isfinite(t) || (k > 0 && !(t > ch->time[k - 1])))
            return check_order(ch, err); /* names the sample */
        if (t >= t0 && t <= t1) {
            if (n++ == 0)
                first = k;
        }
    }
    if (n == 0)
        return rb_err_set(err, RB_EINPUT, "channel %s: no sample between %.17g s and %.17g s", ch->name, t0, t1);
    clk->t = rb_malloc(n * sizeof *clk->t);
    if (!clk->t)
        return rb_err_set(err, RB_ENOMEM, "channel %s: out of memory for a clock of %zu samples", ch->name, n);
    memcpy(clk->t, ch->time + first, n * sizeof *clk->t);
    clk->n = n;
    return RB_OK;
}

/* ---- resampling ------------------------------------------------------------------------------ */

/* The resampler of rb_resample and rb_resampler (one or many windows): the channel's samples [base, base + n)
 * are at hand (time, data); indices are the channel's. */
struct rb_resampler {
    const char *name, *const *elements; /* the channel's, for messages */
    size_t n_elements;
    const double *time, *data; /* samples [base, base + n) */
    size_t base, n, T;         /* T: the channel's sample count */
    const size_t *sel;         /* NULL: all elements */
    size_t n_sel;
    rb_interp interp;
    rb_nonfinite policy;
    double *last;   /* HOLD policy: last finite value of each selected element ... */
    bool *has_last; /* ... once one was seen */
    size_t folded;  /* samples [0, folded) are accounted for in last[] */
    size_t n_held;
    size_t j;        /* the latest sample at or before the last clock time so far */
    size_t *sel_own; /* rb_resampler: its copy of sel */
};
typedef struct rb_resampler resampler;

static size_t element_of(const resampler *r, size_t e) { return r->sel ? r->sel[e] : e; }

static const double *row_at(const resampler *r, size_t j) { return r->data + (j - r->base) * r->n_elements; }

static double time_at(const resampler *r, size_t j) { return r->time[j - r->base]; }

/* Account for samples up to and including j in the last finite values. A window starts at the previous lower
 * neighbour, whose every element was looked at: either one was non-finite and the fold reached it then, or all
 * are finite and override anything before; the samples before the window are not needed. */
static void fold_to(resampler *r, size_t j)
{
    if (r->folded < r->base)
        r->folded = r->base;
    for (; r->folded <= j; r->folded++) {
        const double *row = row_at(r, r->folded);
        for (size_t e = 0; e < r->n_sel; e++) {
            double x = row[element_of(r, e)];
            if (isfinite(x)) {
                r->last[e] = x;
                r->has_last[e] = true;
            }
        }
    }
}

/* Value of selected element e at sample j under the policy; *held is set when it was replaced by
 * the element's last finite value at or before sample `upto` (the lower interpolation neighbour:
 * samples after it must not leak into the past). */
static int sample_value(resampler *r, size_t j, size_t upto, size_t e, double *x, bool *held, rb_err *err)
{
    size_t i = element_of(r, e);
    *x = row_at(r, j)[i];
    if (isfinite(*x))
        return RB_OK;
    if (r->policy == RB_NONFINITE_ERROR)
        return rb_err_set(err, RB_EINPUT,
                          "channel %s: element %s: sample %zu is %g (non-finite samples are an error "
                          "under this policy)",
                          r->name, r->elements[i], j, *x);
    fold_to(r, upto);
    if (!r->has_last[e])
        return rb_err_set(err, RB_EINPUT,
                          "channel %s: element %s: sample %zu is %g and no finite sample comes "
                          "before it to hold",
                          r->name, r->elements[i], j, *x);
    *x = r->last[e];
    *held = true;
    return RB_OK;
}

/* Output row for clock time tc, with channel sample j the latest at or before tc. */
static int resample_row(resampler *r, size_t j, double tc, double *out, rb_err *err)
{
    bool exact = time_at(r, j) == tc;
    double w = exact ? 0 : (tc - time_at(r, j)) / (time_at(r, j + 1) - time_at(r, j));
    for (size_t e = 0; e < r->n_sel; e++) {
        double a, b;
        bool held = false;
        int rc = sample_value(r, j, j, e, &a, &held, err);
        if (rc == RB_OK && r->interp == RB_INTERP_LINEAR && !exact) {
            rc = sample_value(r, j + 1, j, e, &b, &held, err);
            a = a + w * (b - a);
        }
        if (rc)
            return rc;
        out[e] = a;
        r->n_held += held;
    }
    return RB_OK;
}

/* Clock times t[0..n) from the samples at hand: one merge pass. */
static int resample_times(resampler *r, const double *t, size_t n, double *out, rb_err *err)
{
    size_t j = r->j, end = r->base + r->n;
    int rc = RB_OK;
    for (size_t k = 0; k < n && rc == RB_OK; k++) {
        double tc = t[k];
        /* Advance to the latest sample at or before tc; the clock never goes back, so the whole
         * loop visits each sample once. */
        while (j + 1 < end && time_at(r, j + 1) <= tc)
            j++;
        rc = resample_row(r, j, tc, out + k * r->n_sel, err);
    }
    r->j = j;
    return rc;
}

static int check_resample_args(const rb_channel *ch, const size_t *sel, size_t n_sel, const rb_clock *clk,
                               const double *out, rb_err *err)
{
    if (!ch || !clk || (!out && clk->n > 0) || (clk->n > 0 && !clk->t))
        return rb_err_set(err, RB_EINVAL, "rb_resample: NULL argument");
    if (!sel && n_sel != 0 && n_sel != ch->n_elements)
        return rb_err_set(err, RB_EINVAL, "channel %s: n_sel %zu with sel NULL (all %zu elements)", ch->name, n_sel,
                          ch->n_elements);
    for (size_t e = 0; sel && e < n_sel; e++)
        if (sel[e] >= ch->n_elements)
            return rb_err_set(err, RB_EINVAL, "channel %s: element index %zu out of range (%zu elements)", ch->name,
                              sel[e], ch->n_elements);
    for (size_t k = 0; k < clk->n; k++)
        if (!isfinite(clk->t[k]) || (k > 0 && !(clk->t[k] > clk->t[k - 1])))
            return rb_err_set(err, RB_EINVAL, "clock time %zu (%g s) is not finite or not after the one before", k,
                              clk->t[k]);
    if (clk->n == 0)
        return RB_OK;
    int rc = check_order(ch, err); /* the merge below relies on increasing, finite timestamps */
    if (rc)
        return rc;
    size_t T = ch->n_samples;
    double t_lo = clk->t[0], t_hi = clk->t[clk->n - 1];
    if (T == 0)
        return rb_err_set(err, RB_EINPUT, "channel %s: no samples to resample at %.17g s", ch->name, t_lo);
    if (!(t_lo >= ch->time[0]) || !(t_lo <= ch->time[T - 1]))
        return rb_err_set(err, RB_EINPUT,
                          "channel %s: clock time %.17g s is outside the channel's span [%.17g, %.17g] s", ch->name,
                          t_lo, ch->time[0], ch->time[T - 1]);
    if (!(t_hi <= ch->time[T - 1]))
        return rb_err_set(err, RB_EINPUT,
                          "channel %s: clock time %.17g s is outside the channel's span [%.17g, %.17g] s", ch->name,
                          t_hi, ch->time[0], ch->time[T - 1]);
    return RB_OK;
}

int rb_resample(const rb_channel *ch, const size_t *sel, size_t n_sel, const rb_clock *clk, rb_interp interp,
                rb_nonfinite policy, double *out, size_t *n_held, rb_err *err)
{
    if (n_held)
        *n_held = 0;
    int rc = check_resample_args(ch, sel, n_sel, clk, out, err);
    if (rc || clk->n == 0)
        return rc;
    resampler r = {.name = ch->name,
                   .elements = (const char *const *)ch->element_names,
                   .n_elements = ch->n_elements,
                   .time = ch->time,
                   .data = ch->data,
                   .n = ch->n_samples,
                   .T = ch->n_samples,
                   .sel = sel,
                   .n_sel = sel ? n_sel : ch->n_elements,
                   .interp = interp,
                   .policy = policy};
    if (policy == RB_NONFINITE_HOLD && r.n_sel > 0) {
        r.last = rb_calloc(r.n_sel, sizeof *r.last);
        r.has_last = rb_calloc(r.n_sel, sizeof *r.has_last);
        if (!r.last || !r.has_last) {
            rc = rb_err_set(err, RB_ENOMEM, "channel %s: out of memory", ch->name);
            goto done;
        }
    }
    rc = resample_times(&r, clk->t, clk->n, out, err);
    if (n_held)
        *n_held = r.n_held;
done:
    rb_free(r.last);
    rb_free(r.has_last);
    return rc;
}

/* ---- the resampler of a channel read window by window ------------------------------------------ */
int rb_resampler_new(const rb_channel *ch, const size_t *sel, size_t n_sel, rb_interp interp, rb_nonfinite policy,
                     rb_resampler **out, rb_err *err)
{
    if (!ch || !out || (n_sel && sel == NULL && n_sel != ch->n_elements))
        return rb_err_set(err, RB_EINVAL, "rb_resampler_new: NULL argument");
    *out = NULL;
    for (size_t e = 0; sel && e < n_sel; e++)
        if (sel[e] >= ch->n_elements)
            return rb_err_set(err, RB_EINVAL, "channel %s: element index %zu out of range (%zu elements)", ch->name,
                              sel[e], ch->n_elements);
    resampler *r = rb_calloc(1, sizeof *r);
    size_t w = sel ? n_sel : ch->n_elements;
    if (r && sel && (r->sel_own = rb_malloc((n_sel ? n_sel : 1) * sizeof *r->sel_own)))
        memcpy(r->sel_own, sel, n_sel * sizeof *sel);
    if (r && policy == RB_NONFINITE_HOLD) {
        r->last = rb_calloc(w ? w : 1, sizeof *r->last);
        r->has_last = rb_calloc(w ? w : 1, sizeof *r->has_last);
    }
    if (!r || (sel && !r->sel_own) || (policy == RB_NONFINITE_HOLD && (!r->last || !r->has_last))) {
        rb_resampler_free(r);
        return rb_err_set(err, RB_ENOMEM, "channel %s: out of memory", ch->name);
    }
    r->name = ch->name;
    r->elements = (const char *const *)ch->element_names;
    r->n_elements = ch->n_elements;
    r->T = ch->n_samples;
    r->sel = r->sel_own;
    r->n_sel = w;
    r->interp = interp;
    r->policy = policy;
    *out = r;
    return RB_OK;
}

size_t rb_resampler_need(const rb_resampler *r) { return r->j; }

size_t rb_resampler_held(const rb_resampler *r) { return r->n_held; }

/* The samples at hand: finite, increasing, starting at or before the one the resampler needs, and holding the
 * neighbours of the clock times (the first sample after the last of them, or the channel's end). */
static int check_window(const resampler *r, size_t first, size_t count, const double *t, size_t n, rb_err *err)
{
    const double *time = r->time;
    if (first > r->j || count == 0 || count > r->T - first)
        return rb_err_set(err, RB_EINVAL, "channel %s: samples %zu to %zu do not hold sample %zu", r->name, first,
                          first + count, r->j);
    for (size_t k = 0; k < count; k++) {
        if (!isfinite(time[k]))
            return rb_err_set(err, RB_EINPUT, "channel %s: sample %zu: timestamp %g is not finite", r->name, first + k,
                              time[k]);
        if (k > 0 && !(time[k] > time[k - 1]))
            return rb_err_set(err, RB_EINPUT, "channel %s: sample %zu: timestamp %.17g is not after %.17g", r->name,
                              first + k, time[k], time[k - 1]);
    }
    for (size_t k = 0; k < n; k++)
        if (!isfinite(t[k]) || (k > 0 && !(t[k] > t[k - 1])))
            return rb_err_set(err, RB_EINVAL, "clock time %zu (%g s) is not finite or not after the one before", k,
                              t[k]);
    bool at_end = first + count == r->T;
    if (first == 0 && !(t[0] >= time[0]))
        return rb_err_set(err, RB_EINPUT, "channel %s: clock time %.17g s is outside the channel's span from %.17g s",
                          r->name, t[0], time[0]);
    if (at_end && !(t[n - 1] <= time[count - 1]))
        return rb_err_set(err, RB_EINPUT, "channel %s: clock time %.17g s is outside the channel's span to %.17g s",
                          r->name, t[n - 1], time[count - 1]);
    if (!at_end && !(time[count - 1] > t[n - 1]))
        return rb_err_set(err, RB_EINVAL, "channel %s: samples %zu to %zu end before clock time %.17g s", r->name,
                          first, first + count, t[n - 1]);
    return RB_OK;
}

int rb_resampler_run(rb_resampler *r, const double *time, const double *data, size_t first, size_t count,
                     const double *t, size_t n, double *out, rb_err *err)
{
    if (!r || (n && (!t || !out || !time || !data)))
        return rb_err_set(err, RB_EINVAL, "rb_resampler_run: NULL argument");
    if (n == 0)
        return RB_OK;
    r->time = time;
    r->data = data;
    int rc = check_window(r, first, count, t, n, err);
    if (rc)
        return rc;
    r->base = first;
    r->n = count;
    rc = resample_times(r, t, n, out, err);
    r->time = r->data = NULL;
    return rc;
}

void rb_resampler_free(rb_resampler *r)
{
    if (!r)
        return;
    rb_free(r->last);
    rb_free(r->has_last);
    rb_free(r->sel_own);
    rb_free(r);
}

/* A clock far longer than the log itself comes from timestamps in other units or a rate no log holds: refused
 * with the likely cause before it is allocated. */
static int check_resample_size(const rb_log *in, double t0, double t1, double rate, rb_err *err)
{
    const rb_channel *ref = NULL;
    for (size_t c = 0; c < in->n_channels; c++)
        if (!ref || in->channels[c].n_samples > ref->n_samples)
            ref = &in->channels[c];
    double samples = floor((t1 - t0) * rate + 1e-9) + 1;
    if (!ref || samples <= fmax(RESAMPLE_FLOOR, RESAMPLE_MAX_FACTOR * (double)ref->n_samples))
        return RB_OK;
    rb_time_report rep;
    rb_err ignored;
    double dt = rb_channel_check_time(ref, 3.0, &rep, &ignored) == RB_OK ? rep.median_dt : NAN;
    char cause[200];
    clock_cause(t0, t1, rate, dt, ref->name, cause, sizeof cause);
    return rb_err_set(err, RB_EINPUT,
                      "resampling [%.17g, %.17g] s at %g Hz would make %.3g samples (channel %s has "
                      "%zu): %s",
                      t0, t1, rate, samples, ref->name, ref->n_samples, cause);
}

int rb_log_resample(const rb_log *in, double rate, rb_log **out, rb_err *err)
{
    double t0 = -INFINITY, t1 = INFINITY;
    for (size_t c = 0; c < in->n_channels; c++) {
        const rb_channel *ch = &in->channels[c];
        if (ch->n_samples == 0)
            continue;
        t0 = fmax(t0, ch->time[0]);
        t1 = fmin(t1, ch->time[ch->n_samples - 1]);
    }
    if (!(t1 >= t0))
        return rb_err_set(err, RB_EINPUT, "the channels share no common time span to resample");
    int rc = check_resample_size(in, t0, t1, rate, err);
    if (rc)
        return rc;
    rb_clock clk = {0, NULL};
    if ((rc = rb_clock_uniform(&clk, t0, t1, rate, err)))
        return rc;
    rc = rb_log_new(out, err);
    for (size_t c = 0; rc == RB_OK && c < in->n_channels; c++) {
        const rb_channel *src = &in->channels[c];
        rb_channel *dst;
        rc = rb_log_add_channel(*out, src->name, clk.n, src->n_elements, &dst, err);
        for (size_t i = 0; rc == RB_OK && i < src->n_elements; i++) {
            rc = rb_channel_set_name(dst, i, src->element_names[i], err);
            if (rc == RB_OK)
                rc = rb_channel_set_unit(dst, i, src->units[i], err);
        }
        if (rc)
            break;
        memcpy(dst->time, clk.t, clk.n * sizeof(double));
        rc = rb_resample(src, NULL, src->n_elements, &clk, RB_INTERP_LINEAR, RB_NONFINITE_ERROR, dst->data, NULL, err);
    }
    for (size_t a = 0; rc == RB_OK && a < in->n_attrs; a++)
        rc = rb_log_set_attr(*out, in->attrs[a].key, in->attrs[a].value, err);
    rb_clock_free(&clk);
    if (rc) {
        rb_log_free(*out);
        *out = NULL;
    }
    return rc;
}
