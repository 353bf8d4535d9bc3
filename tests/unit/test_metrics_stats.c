#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/metrics.h"

static void assert_close(double got, double want, const char *what)
{
    cr_assert(fabs(got - want) <= 1e-15 * fabs(want), "%s: got %.17g, want %.17g", what, got, want);
}

static rb_metric_input make_input(const double *e, const double *r, const double *time, size_t T, size_t n)
{
    rb_metric_input in = {"tau_hat", "tau_ref", e, r, time, T, n, -INFINITY, INFINITY};
    return in;
}

Test(metrics_stats, hand_computed_window_cuts_samples)
{
    /* Samples 0 and 4 lie outside [0.1, 0.3] (both ends hit exactly: inclusive); they hold big
     * values and a NaN that must not be read. Inside, element 0: d = {0.5, -1, 0}, element 1:
     * d = {-1, 4, 2}. */
    const double time[] = {0.0, 0.1, 0.2, 0.3, 0.4};
    const double e[] = {100, -100, 1, -2, 2, 0, 4, 3, NAN, 7};
    const double r[] = {-100, 100, 0.5, -1, 3, -4, 4, 1, 9, 8};
    rb_metric_input in = make_input(e, r, time, 5, 2);
    in.t0 = 0.1;
    in.t1 = 0.3;
    rb_stats el[2], all;
    rb_err err;
    cr_assert_eq(rb_metrics_compute(&in, el, &all, &err), RB_OK, "%s", err.msg);

    cr_assert_eq(el[0].n, 3);
    assert_close(el[0].mse, 1.25 / 3, "mse0");
    assert_close(el[0].rmse, sqrt(1.25 / 3), "rmse0");
    assert_close(el[0].mae, 0.5, "mae0");
    assert_close(el[0].max_abs, 1.0, "max0");
    assert_close(el[0].mean_abs_est, 7.0 / 3, "est0");
    assert_close(el[0].mean_abs_ref, 2.5, "ref0");

    cr_assert_eq(el[1].n, 3);
    assert_close(el[1].mse, 7.0, "mse1");
    assert_close(el[1].rmse, sqrt(7.0), "rmse1");
    assert_close(el[1].mae, 7.0 / 3, "mae1");
    assert_close(el[1].max_abs, 4.0, "max1");
    assert_close(el[1].mean_abs_est, 5.0 / 3, "est1");
    assert_close(el[1].mean_abs_ref, 2.0, "ref1");

    cr_assert_eq(all.n, 6);
    assert_close(all.mse, 22.25 / 6, "mse");
    assert_close(all.rmse, sqrt(22.25 / 6), "rmse");
    assert_close(all.mae, 8.5 / 6, "mae");
    assert_close(all.max_abs, 4.0, "max");
    assert_close(all.mean_abs_est, 2.0, "est");
    assert_close(all.mean_abs_ref, 2.25, "ref");
}

Test(metrics_stats, whole_run_uses_every_sample_whatever_the_time)
{
    const double e[] = {1, 2, 3}, r[] = {0, 0, 5}, time[] = {0, NAN, 1};
    for (int with_time = 0; with_time < 2; with_time++) {
        rb_metric_input in = make_input(e, r, with_time ? time : NULL, 3, 1);
        rb_stats all;
        rb_err err;
        cr_assert_eq(rb_metrics_compute(&in, NULL, &all, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(all.n, 3);
        assert_close(all.mse, 9.0 / 3, "mse");
        assert_close(all.mae, 5.0 / 3, "mae");
        assert_close(all.max_abs, 2.0, "max");
    }
}

/* Naive two-loop reference in long double, element i, or pooled when i == n. Valgrind runs long
 * double as double, so the tolerance allows plain summation error over a few thousand terms;
 * the precision of the compensated sums is checked in long_logs_keep_precision. */
static void naive(const double *e, const double *r, const double *time, size_t T, size_t n, double t0, double t1,
                  size_t i, long double out[6], size_t *count)
{
    long double sq = 0, ab = 0, ae = 0, ar = 0, mx = 0;
    *count = 0;
    for (size_t j = (i == n ? 0 : i); j < (i == n ? n : i + 1); j++)
        for (size_t t = 0; t < T; t++) {
            if (time[t] < t0 || time[t] > t1)
                continue;
            long double d = (long double)e[t * n + j] - (long double)r[t * n + j];
            sq += d * d;
            ab += fabsl(d);
            ae += fabsl((long double)e[t * n + j]);
            ar += fabsl((long double)r[t * n + j]);
            mx = fabsl(d) > mx ? fabsl(d) : mx;
            (*count)++;
        }
    out[0] = sq / *count;
    out[1] = sqrtl(out[0]);
    out[2] = ab / *count;
    out[3] = mx;
    out[4] = ae / *count;
    out[5] = ar / *count;
}

static void assert_matches(const rb_stats *s, const long double want[6], size_t count, size_t i)
{
    const double got[6] = {s->mse, s->rmse, s->mae, s->max_abs, s->mean_abs_est, s->mean_abs_ref};
    cr_assert_eq(s->n, count, "element %zu", i);
    for (int k = 0; k < 6; k++)
        cr_assert(fabsl((long double)got[k] - want[k]) <= 1e-12L * fabsl(want[k]),
                  "element %zu stat %d: %.17g vs %.17Lg", i, k, got[k], want[k]);
}

Test(metrics_stats, random_signals_match_long_double_reference)
{
    /* 70 elements: more than one accumulation block. */
    const size_t T = 3000, n = 70;
    double *e = malloc(T * n * sizeof *e), *r = malloc(T * n * sizeof *r), *time = malloc(T * sizeof *time);
    srand(12345);
    for (size_t t = 0; t < T; t++) {
        time[t] = (double)t / 1000.0; /* correctly rounded, so 2100 / 1000.0 == 2.1 */
        for (size_t i = 0; i < n; i++) {
            double scale = pow(10.0, (double)(i % 7) - 3);
            r[t * n + i] = scale * (2.0 * rand() / RAND_MAX - 1.0);
            e[t * n + i] = r[t * n + i] + 0.1 * scale * (rand() / (double)RAND_MAX - 0.3);
        }
    }
    rb_metric_input in = make_input(e, r, time, T, n);
    in.t0 = 0.4567;
    in.t1 = 2.1;
    rb_stats *el = malloc(n * sizeof *el), all;
    rb_err err;
    cr_assert_eq(rb_metrics_compute(&in, el, &all, &err), RB_OK, "%s", err.msg);
    long double want[6];
    size_t count;
    for (size_t i = 0; i <= n; i++) {
        naive(e, r, time, T, n, in.t0, in.t1, i, want, &count);
        cr_assert_eq(count, (i == n ? n : 1) * (2100 - 457 + 1));
        assert_matches(i == n ? &all : &el[i], want, count, i);
    }
    free(e);
    free(r);
    free(time);
    free(el);
}

Test(metrics_stats, long_logs_keep_precision)
{
    /* One error of 1 then 1e-16 per sample: plain double summation stays at exactly 1 (each
     * 1e-16 is below half an ulp of 1) and misses 1e-11 of the total. */
    const size_t T = 100001;
    double *e = calloc(T, sizeof *e), *r = calloc(T, sizeof *r);
    e[0] = 1.0;
    for (size_t t = 1; t < T; t++)
        e[t] = 1e-16;
    rb_metric_input in = make_input(e, r, NULL, T, 1);
    rb_stats all;
    rb_err err;
    cr_assert_eq(rb_metrics_compute(&in, NULL, &all, &err), RB_OK, "%s", err.msg);
    /* Closed form: a long double loop would itself drift by 1e5 half-ulps. */
    long double sum = 1.0L + (long double)(T - 1) * (long double)e[1];
    double want = (double)(sum / (long double)T);
    assert_close(all.mae, want, "mae");
    assert_close(all.mean_abs_est, want, "mean_abs_est");
    free(e);
    free(r);
}

Test(metrics_stats, nan_names_signal_element_and_first_sample)
{
    const size_t T = 2000, n = 3;
    double *e = calloc(T * n, sizeof *e), *r = calloc(T * n, sizeof *r), *time = malloc(T * sizeof *time);
    for (size_t t = 0; t < T; t++)
        time[t] = (double)t / 100.0;
    e[1600 * n + 0] = NAN;
    e[1534 * n + 2] = NAN;
    r[1700 * n + 1] = INFINITY;
    rb_metric_input in = make_input(e, r, time, T, n);
    rb_stats el[3], all;
    rb_err err;
    cr_assert_eq(rb_metrics_compute(&in, el, &all, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "tau_hat: element 2: sample 1534 is NaN"), "%s", err.msg);

    /* Windowed past the NaNs, the reference's Inf is the first bad sample. */
    in.t0 = 16.5;
    cr_assert_eq(rb_metrics_compute(&in, el, &all, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "tau_ref: element 1: sample 1700 is +Inf"), "%s", err.msg);

    /* Windowed before them, every sample is fine. */
    in.t0 = -INFINITY;
    in.t1 = 15.33;
    cr_assert_eq(rb_metrics_compute(&in, el, &all, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(all.n, 1534 * n);
    free(e);
    free(r);
    free(time);
}

Test(metrics_stats, earliest_bad_sample_across_element_blocks)
{
    /* Element 68 (second block) goes bad before element 3 (first block). */
    const size_t T = 50, n = 70;
    double *e = calloc(T * n, sizeof *e), *r = calloc(T * n, sizeof *r);
    e[20 * n + 3] = NAN;
    r[10 * n + 68] = -INFINITY;
    rb_metric_input in = make_input(e, r, NULL, T, n);
    rb_err err;
    cr_assert_eq(rb_metrics_compute(&in, NULL, NULL, &err), RB_ENUMERIC);
    cr_assert_str_eq(err.msg, "tau_ref: element 68: sample 10 is -Inf");
    /* Same sample: lower element wins, estimate before reference. */
    e[10 * n + 68] = NAN;
    cr_assert_eq(rb_metrics_compute(&in, NULL, NULL, &err), RB_ENUMERIC);
    cr_assert_str_eq(err.msg, "tau_hat: element 68: sample 10 is NaN");
    e[10 * n + 5] = INFINITY;
    cr_assert_eq(rb_metrics_compute(&in, NULL, NULL, &err), RB_ENUMERIC);
    cr_assert_str_eq(err.msg, "tau_hat: element 5: sample 10 is +Inf");
    free(e);
    free(r);
}

Test(metrics_stats, empty_window_and_empty_signals)
{
    const double time[] = {0.0, 0.5, 1.0}, e[] = {1, 2, 3}, r[] = {1, 2, 3};
    rb_metric_input in = make_input(e, r, time, 3, 1);
    in.t0 = 5;
    in.t1 = 6;
    rb_stats all;
    rb_err err;
    cr_assert_eq(rb_metrics_compute(&in, NULL, &all, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "window [5, 6]"), "%s", err.msg);
    cr_assert(strstr(err.msg, "tau_hat") && strstr(err.msg, "tau_ref"), "%s", err.msg);
    in.t0 = 0.6; /* between two samples */
    in.t1 = 0.9;
    cr_assert_eq(rb_metrics_compute(&in, NULL, &all, &err), RB_EINPUT);
    in.t0 = 1.0; /* a window of one instant holds the sample at that instant */
    in.t1 = 1.0;
    cr_assert_eq(rb_metrics_compute(&in, NULL, &all, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(all.n, 1);

    rb_metric_input none = make_input(NULL, NULL, NULL, 0, 2);
    cr_assert_eq(rb_metrics_compute(&none, NULL, &all, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "tau_hat") && strstr(err.msg, "window"), "%s", err.msg);
    rb_metric_input no_elements = make_input(NULL, NULL, NULL, 10, 0);
    cr_assert_eq(rb_metrics_compute(&no_elements, NULL, &all, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "no elements"), "%s", err.msg);
}

Test(metrics_stats, invalid_arguments_and_overflow)
{
    const double time[] = {0.0, NAN}, e[] = {1e300, 1}, r[] = {-1e300, 1};
    rb_metric_input in = make_input(e, r, time, 2, 1);
    rb_stats all;
    rb_err err;
    cr_assert_eq(rb_metrics_compute(&in, NULL, &all, &err), RB_ENUMERIC, "2e300 squared overflows");
    cr_assert(strstr(err.msg, "MSE overflows"), "%s", err.msg);
    cr_assert_eq(rb_metrics_compute(NULL, NULL, &all, &err), RB_EINVAL);
    in.t1 = NAN;
    cr_assert_eq(rb_metrics_compute(&in, NULL, &all, &err), RB_EINVAL);
    in.t1 = 1.0;
    cr_assert_eq(rb_metrics_compute(&in, NULL, &all, &err), RB_EINPUT, "bounded window, NaN time");
    cr_assert(strstr(err.msg, "sample 1"), "%s", err.msg);
    in.time = NULL;
    cr_assert_eq(rb_metrics_compute(&in, NULL, &all, &err), RB_EINVAL);
    in.estimate = NULL;
    in.t1 = INFINITY;
    cr_assert_eq(rb_metrics_compute(&in, NULL, &all, &err), RB_EINVAL);
}
