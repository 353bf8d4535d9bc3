#include "roboest/metrics.h"

#include <math.h>
#include <stdio.h>

/* Elements are accumulated in blocks held on the stack: one pass over the samples per block
 * reads whole cache lines of each sample row and needs no allocation. */
#define ACC_BLOCK 64

/* Neumaier's variant of Kahan summation: unlike plain Kahan it stays exact when an addend is
 * larger than the running sum (a log whose error starts near zero then grows). */
typedef struct csum {
    double sum, comp;
} csum;

static void csum_add(csum *s, double x)
{
    double t = s->sum + x;
    if (fabs(s->sum) >= fabs(x))
        s->comp += (s->sum - t) + x;
    else
        s->comp += (x - t) + s->sum;
    s->sum = t;
}

static void csum_merge(csum *into, const csum *from)
{
    csum_add(into, from->sum);
    csum_add(into, from->comp);
}

static double csum_value(const csum *s) { return s->sum + s->comp; }

typedef struct acc {
    csum sq, abs_err, abs_est, abs_ref, est, sq_est;
    double max_abs, min_est, max_est;
    size_t zero_est;
} acc;

static const acc ACC_EMPTY = {.min_est = INFINITY, .max_est = -INFINITY};

typedef struct bad_sample {
    bool found;
    size_t t, i;
    bool in_estimate;
    double value;
} bad_sample;

static bool bounded(const rb_metric_input *in) { return in->t0 != -INFINITY || in->t1 != INFINITY; }

static bool in_window(const rb_metric_input *in, size_t t)
{
    return !in->time || !bounded(in) || (in->time[t] >= in->t0 && in->time[t] <= in->t1);
}

static const char *est_name(const rb_metric_input *in) { return in->estimate_name ? in->estimate_name : "estimate"; }

static const char *ref_name(const rb_metric_input *in) { return in->reference_name ? in->reference_name : "reference"; }

static int check_args(const rb_metric_input *in, rb_err *err)
{
    size_t total;
    if (!in)
        return rb_err_set(err, RB_EINVAL, "rb_metrics_compute: no input");
    if (!rb_size_mul(in->n_samples, in->n_elements, &total))
        return rb_err_set(err, RB_EINVAL, "%s / %s: %zu x %zu samples overflow", est_name(in), ref_name(in),
                          in->n_samples, in->n_elements);
    if (total > 0 && (!in->estimate || !in->reference))
        return rb_err_set(err, RB_EINVAL, "%s / %s: no data", est_name(in), ref_name(in));
    if (isnan(in->t0) || isnan(in->t1))
        return rb_err_set(err, RB_EINVAL, "%s / %s: window bound is NaN", est_name(in), ref_name(in));
    if (bounded(in) && in->n_samples > 0 && !in->time)
        return rb_err_set(err, RB_EINVAL, "%s / %s: a time window needs the time vector", est_name(in), ref_name(in));
    if (in->n_elements == 0)
        return rb_err_set(err, RB_EINPUT, "%s / %s: no elements to compare", est_name(in), ref_name(in));
    return RB_OK;
}

/* Samples in the window; with a bounded window a non-finite time cannot be placed, so it is an
 * error rather than a silently dropped sample. */
static int count_window(const rb_metric_input *in, size_t *count, rb_err *err)
{
    *count = 0;
    for (size_t t = 0; t < in->n_samples; t++) {
        if (in->time && bounded(in) && !isfinite(in->time[t]))
            return rb_err_set(err, RB_EINPUT, "%s / %s: time of sample %zu is not finite (%g)", est_name(in),
                              ref_name(in), t, in->time[t]);
        if (in_window(in, t))
            (*count)++;
    }
    if (*count > 0)
        return RB_OK;
    if (in->n_samples == 0)
        return rb_err_set(err, RB_EINPUT, "window [%g, %g] s holds no sample of %s / %s (no samples)", in->t0, in->t1,
                          est_name(in), ref_name(in));
    /* time is non-NULL here: without it the window is unbounded and holds every sample. */
    return rb_err_set(err, RB_EINPUT, "window [%g, %g] s holds no sample of %s / %s (%zu samples, t from %g to %g s)",
                      in->t0, in->t1, est_name(in), ref_name(in), in->n_samples, in->time[0],
                      in->time[in->n_samples - 1]);
}

static void note_bad(size_t t, size_t i, bool in_estimate, double value, bad_sample *bad)
{
    if (bad->found && (t > bad->t || (t == bad->t && i > bad->i)))
        return;
    bad->found = true;
    bad->t = t;
    bad->i = i;
    bad->in_estimate = in_estimate;
    bad->value = value;
}

/* One pass over the window for elements [i0, i0 + n_block). Stops at the first non-finite
 * sample of the block, or as soon as an earlier block's bad sample cannot be beaten. */
static void accumulate_block(const rb_metric_input *in, size_t i0, size_t n_block, acc *a, bad_sample *bad)
{
    size_t n = in->n_elements;
    for (size_t t = 0; t < in->n_samples; t++) {
        if (!in_window(in, t))
            continue;
        if (bad->found && t >= bad->t)
            return;
        const double *e = in->estimate + t * n + i0, *r = in->reference + t * n + i0;
        for (size_t k = 0; k < n_block; k++) {
            if (!isfinite(e[k]) || !isfinite(r[k])) {
                bool est_bad = !isfinite(e[k]);
                note_bad(t, i0 + k, est_bad, est_bad ? e[k] : r[k], bad);
                return;
            }
            double d = e[k] - r[k], ad = fabs(d);
            csum_add(&a[k].sq, d * d);
            csum_add(&a[k].abs_err, ad);
            csum_add(&a[k].abs_est, fabs(e[k]));
            csum_add(&a[k].abs_ref, fabs(r[k]));
            if (ad > a[k].max_abs)
                a[k].max_abs = ad;
            csum_add(&a[k].est, e[k]);
            csum_add(&a[k].sq_est, e[k] * e[k]);
            a[k].min_est = fmin(a[k].min_est, e[k]);
            a[k].max_est = fmax(a[k].max_est, e[k]);
            a[k].zero_est += e[k] == 0;
        }
    }
}

static void merge_acc(acc *into, const acc *from)
{
    csum_merge(&into->sq, &from->sq);
    csum_merge(&into->abs_err, &from->abs_err);
    csum_merge(&into->abs_est, &from->abs_est);
    csum_merge(&into->abs_ref, &from->abs_ref);
    if (from->max_abs > into->max_abs)
        into->max_abs = from->max_abs;
    csum_merge(&into->est, &from->est);
    csum_merge(&into->sq_est, &from->sq_est);
    into->min_est = fmin(into->min_est, from->min_est);
    into->max_est = fmax(into->max_est, from->max_est);
    into->zero_est += from->zero_est;
}

static void finish(const acc *a, size_t count, rb_stats *s)
{
    double n = (double)count;
    *s = (rb_stats){0};
    s->n = count;
    s->mse = csum_value(&a->sq) / n;
    s->rmse = sqrt(s->mse);
    s->mae = csum_value(&a->abs_err) / n;
    s->max_abs = a->max_abs;
    s->mean_abs_est = csum_value(&a->abs_est) / n;
    s->mean_abs_ref = csum_value(&a->abs_ref) / n;
    s->min_est = a->min_est;
    s->max_est = a->max_est;
    s->mean_est = csum_value(&a->est) / n; /* |sum e| <= sum |e|: finite when mean_abs_est is */
    s->count_zero_est = (double)a->zero_est;
    s->rms_est = sqrt(csum_value(&a->sq_est) / n);
}

/* Finite inputs can still overflow: |e - r|, its square or a sum beyond DBL_MAX. */
static const char *first_nonfinite(const rb_stats *s)
{
    return !isfinite(s->mse)            ? "MSE"
           : !isfinite(s->mae)          ? "MAE"
           : !isfinite(s->max_abs)      ? "max abs"
           : !isfinite(s->mean_abs_est) ? "mean abs est"
           : !isfinite(s->mean_abs_ref) ? "mean abs ref"
                                        : NULL;
}

static int report_overflow(const rb_metric_input *in, const char *element, const char *stat, rb_err *err)
{
    return rb_err_set(err, RB_ENUMERIC, "%s vs %s: %s: %s overflows (values near DBL_MAX)", est_name(in), ref_name(in),
                      element, stat);
}

static const char *value_name(double x) { return isnan(x) ? "NaN" : x > 0 ? "+Inf" : "-Inf"; }

static int report_bad(const rb_metric_input *in, const bad_sample *bad, rb_err *err)
{
    const char *signal = bad->in_estimate ? est_name(in) : ref_name(in);
    if (in->time)
        return rb_err_set(err, RB_ENUMERIC, "%s: element %zu: sample %zu is %s (t = %g s)", signal, bad->i, bad->t,
                          value_name(bad->value), in->time[bad->t]);
    return rb_err_set(err, RB_ENUMERIC, "%s: element %zu: sample %zu is %s", signal, bad->i, bad->t,
                      value_name(bad->value));
}

/* Statistics of one block's elements, folded into the pooled sums. Only the first overflow is
 * kept, and it is reported only if no sample is bad: a NaN is the more useful message. */
static void finish_block(const rb_metric_input *in, const acc *block, size_t i0, size_t n_block, size_t count,
                         rb_stats *per_element, acc *pooled, int *overflow, rb_err *err)
{
    for (size_t k = 0; k < n_block; k++) {
        rb_stats s;
        finish(&block[k], count, &s);
        const char *stat = first_nonfinite(&s);
        if (stat && !*overflow) {
            char element[32];
            snprintf(element, sizeof element, "element %zu", i0 + k);
            *overflow = report_overflow(in, element, stat, err);
        }
        if (per_element)
            per_element[i0 + k] = s;
        merge_acc(pooled, &block[k]);
    }
}

int rb_metrics_compute(const rb_metric_input *in, rb_stats *per_element, rb_stats *overall, rb_err *err)
{
    size_t count;
    int rc = check_args(in, err);
    if (!rc)
        rc = count_window(in, &count, err);
    if (rc)
        return rc;
    acc pooled = ACC_EMPTY;
    bad_sample bad = {0};
    int overflow = RB_OK;
    /* Every block is scanned even after a bad sample: a later block may hold an earlier one. */
    for (size_t i0 = 0; i0 < in->n_elements; i0 += ACC_BLOCK) {
        acc block[ACC_BLOCK];
        size_t n_block = in->n_elements - i0 < ACC_BLOCK ? in->n_elements - i0 : ACC_BLOCK;
        for (size_t k = 0; k < n_block; k++)
            block[k] = ACC_EMPTY;
        accumulate_block(in, i0, n_block, block, &bad);
        if (!bad.found)
            finish_block(in, block, i0, n_block, count, per_element, &pooled, &overflow, err);
    }
    if (bad.found)
        return report_bad(in, &bad, err);
    if (overflow)
        return overflow;
    rb_stats all;
    finish(&pooled, count * in->n_elements, &all);
    const char *stat = first_nonfinite(&all);
    if (stat)
        return report_overflow(in, "all elements", stat, err);
    if (overall)
        *overall = all;
    return RB_OK;
}

/* ---- the same over samples that come window by window ------------------------------------------------------------ */
struct rb_metrics_stream {
    rb_metric_input in; /* without its data */
    acc *a;             /* per element */
    bad_sample bad;
};

int rb_metrics_stream_new(const rb_metric_input *desc, rb_metrics_stream **out, rb_err *err)
{
    rb_metrics_stream *s = rb_calloc(1, sizeof *s);
    if (s)
        s->a = rb_malloc((desc->n_elements ? desc->n_elements : 1) * sizeof *s->a);
    if (!s || !s->a) {
        rb_free(s);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    s->in = *desc;
    for (size_t i = 0; i < desc->n_elements; i++)
        s->a[i] = ACC_EMPTY;
    *out = s;
    return RB_OK;
}

void rb_metrics_stream_free(rb_metrics_stream *s)
{
    if (s)
        rb_free(s->a);
    rb_free(s);
}

/* accumulate_block's sums, every element at once: each element's samples in time order as there; the first bad
 * sample in (time, element) order is the one the blocks find, and nothing after it matters. */
void rb_metrics_stream_add(rb_metrics_stream *s, const double *est, const double *ref, size_t k0, size_t k1)
{
    size_t n = s->in.n_elements;
    for (size_t t = k0; t < k1 && !s->bad.found; t++) {
        if (!in_window(&s->in, t))
            continue;
        const double *e = est + (t - k0) * n, *r = ref + (t - k0) * n;
        for (size_t k = 0; k < n; k++) {
            if (!isfinite(e[k]) || !isfinite(r[k])) {
                bool est_bad = !isfinite(e[k]);
                note_bad(t, k, est_bad, est_bad ? e[k] : r[k], &s->bad);
                return;
            }
            acc *a = &s->a[k];
            double d = e[k] - r[k], ad = fabs(d);
            csum_add(&a->sq, d * d);
            csum_add(&a->abs_err, ad);
            csum_add(&a->abs_est, fabs(e[k]));
            csum_add(&a->abs_ref, fabs(r[k]));
            if (ad > a->max_abs)
                a->max_abs = ad;
            csum_add(&a->est, e[k]);
            csum_add(&a->sq_est, e[k] * e[k]);
            a->min_est = fmin(a->min_est, e[k]);
            a->max_est = fmax(a->max_est, e[k]);
            a->zero_est += e[k] == 0;
        }
    }
}

int rb_metrics_stream_finish(const rb_metrics_stream *s, rb_stats *per_element, rb_stats *overall, rb_err *err)
{
    rb_metric_input in = s->in; /* check_args without the data check */
    static const double one = 0;
    in.estimate = in.reference = &one;
    size_t count;
    int rc = check_args(&in, err);
    if (!rc)
        rc = count_window(&in, &count, err);
    if (rc)
        return rc;
    if (s->bad.found)
        return report_bad(&in, &s->bad, err);
    acc pooled = ACC_EMPTY;
    int overflow = RB_OK;
    for (size_t i0 = 0; i0 < in.n_elements; i0 += ACC_BLOCK) { /* rb_metrics_compute's order of the pooled sums */
        size_t n_block = in.n_elements - i0 < ACC_BLOCK ? in.n_elements - i0 : ACC_BLOCK;
        finish_block(&in, s->a + i0, i0, n_block, count, per_element, &pooled, &overflow, err);
    }
    if (overflow)
        return overflow;
    rb_stats all;
    finish(&pooled, count * in.n_elements, &all);
    const char *stat = first_nonfinite(&all);
    if (stat)
        return report_overflow(&in, "all elements", stat, err);
    if (overall)
        *overall = all;
    return RB_OK;
}
