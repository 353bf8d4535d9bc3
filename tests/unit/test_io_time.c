/* Timestamps checks, clocks and resampling, each against an independent computation. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/io.h"

static rb_log *one_channel(const char *name, size_t T, size_t n, const double *time, const double *data,
                           rb_channel **ch)
{
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    const char *names[] = {"q0", "q1", "q2", "q3"};
    cr_assert_eq(rb_log_add_channel_copy(log, name, T, n, time, data, names, NULL, &err), RB_OK);
    *ch = &log->channels[0];
    return log;
}

/* Deterministic pseudo-random numbers in [0, 1) (xorshift), so failures reproduce. */
static double uniform(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) / 9007199254740992.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- rb_channel_check_time -------------------------------------------------------------------- */
Test(io_time, bad_timestamps_name_channel_and_sample)
{
    double t[5] = {0, 0.1, 0.2, 0.15, 0.4}, x[5] = {0};
    rb_channel *ch;
    rb_log *log = one_channel("joints_state/positions", 5, 1, t, x, &ch);
    rb_time_report rep;
    rb_err err;
    cr_assert_eq(rb_channel_check_time(ch, 3, &rep, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "channel joints_state/positions: sample 3: timestamp 0.14999999999999999 is not after "
                              "0.20000000000000001"),
              "%s", err.msg);
    ch->time[3] = 0.2; /* equal is not after */
    cr_assert_eq(rb_channel_check_time(ch, 3, &rep, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "sample 3:"), "%s", err.msg);
    ch->time[3] = 0.3;
    ch->time[2] = NAN;
    cr_assert_eq(rb_channel_check_time(ch, 3, &rep, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "joints_state/positions: sample 2: timestamp nan is not finite"), "%s", err.msg);
    ch->time[2] = 0.2;
    ch->time[4] = INFINITY;
    cr_assert_eq(rb_channel_check_time(ch, 3, &rep, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "sample 4"), "%s", err.msg);
    ch->time[4] = 0.4;
    cr_assert_eq(rb_channel_check_time(ch, 3, &rep, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_channel_check_time(ch, 0, &rep, &err), RB_EINVAL);
    cr_assert_eq(rb_channel_check_time(ch, NAN, &rep, &err), RB_EINVAL);
    rb_log_free(log);
}

Test(io_time, gaps_are_counted)
{
    /* 1 kHz with three dropouts: 5 ms after sample 100, 2.5 ms after 300, 40 ms after 700 */
    enum { T = 1000 };
    double t[T], x[T];
    double now = 10.0;
    for (int k = 0; k < T; k++) {
        if (k == 101)
            now += 0.004;
        if (k == 301)
            now += 0.0015;
        if (k == 701)
            now += 0.039;
        t[k] = now;
        x[k] = 0;
        now += 0.001;
    }
    rb_channel *ch;
    rb_log *log = one_channel("gyros/imu", T, 1, t, x, &ch);
    rb_time_report rep;
    rb_err err;
    cr_assert_eq(rb_channel_check_time(ch, 2.0, &rep, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rep.t_first, 10.0);
    cr_assert_eq(rep.t_last, t[T - 1]);
    cr_assert_float_eq(rep.median_dt, 0.001, 1e-12);
    cr_assert_eq(rep.n_gaps, 3);
    cr_assert_eq(rep.first_gap, 101);
    cr_assert_float_eq(rep.max_gap, 0.040, 1e-12);
    cr_assert_eq(rb_channel_check_time(ch, 3.0, &rep, &err), RB_OK);
    cr_assert_eq(rep.n_gaps, 2, "2.5 ms is not above 3 x 1 ms");
    cr_assert_eq(rep.first_gap, 101);
    cr_assert_eq(rb_channel_check_time(ch, 10.0, &rep, &err), RB_OK);
    cr_assert_eq(rep.n_gaps, 1);
    cr_assert_eq(rep.first_gap, 701);
    cr_assert_eq(rb_channel_check_time(ch, 50.0, &rep, &err), RB_OK);
    cr_assert_eq(rep.n_gaps, 0);
    cr_assert_eq(rep.first_gap, SIZE_MAX);
    rb_log_free(log);
}

Test(io_time, median_matches_sorting)
{
    double t5[5] = {0, 1, 3, 6, 10}, t4[4] = {0, 1, 3, 6}, x[5] = {0};
    rb_channel *ch;
    rb_time_report rep;
    rb_err err;
    rb_log *log = one_channel("c", 5, 1, t5, x, &ch);
    cr_assert_eq(rb_channel_check_time(ch, 2, &rep, &err), RB_OK);
    cr_assert_eq(rep.median_dt, 2.5, "even count: mean of the middle two");
    rb_log_free(log);
    log = one_channel("c", 4, 1, t4, x, &ch);
    cr_assert_eq(rb_channel_check_time(ch, 2, &rep, &err), RB_OK);
    cr_assert_eq(rep.median_dt, 2.0);
    rb_log_free(log);

    /* random intervals of many sizes, with ties, against qsort */
    uint64_t seed = 0x9E3779B97F4A7C15u;
    for (size_t T = 2; T < 400; T += 37) {
        double *t = malloc(T * sizeof *t), *dt = malloc(T * sizeof *dt), *z = calloc(T, sizeof *z);
        t[0] = -3;
        for (size_t k = 1; k < T; k++)
            t[k] = t[k - 1] + (uniform(&seed) < 0.3 ? 0.25 : 0.01 + uniform(&seed));
        for (size_t k = 1; k < T; k++)
            dt[k - 1] = t[k] - t[k - 1];
        qsort(dt, T - 1, sizeof *dt, cmp_double);
        size_t m = T - 1;
        double want = m % 2 ? dt[m / 2] : dt[m / 2 - 1] + (dt[m / 2] - dt[m / 2 - 1]) / 2;
        log = one_channel("r", T, 1, t, z, &ch);
        cr_assert_eq(rb_channel_check_time(ch, 2, &rep, &err), RB_OK);
        cr_assert_eq(rep.median_dt, want, "T = %zu", T);
        cr_assert_eq(rep.max_gap, dt[m - 1]);
        rb_log_free(log);
        free(t);
        free(dt);
        free(z);
    }
}

Test(io_time, short_channels)
{
    double t[1] = {4.5}, x[1] = {0};
    rb_channel *ch;
    rb_time_report rep;
    rb_err err;
    rb_log *log = one_channel("one", 1, 1, t, x, &ch);
    cr_assert_eq(rb_channel_check_time(ch, 2, &rep, &err), RB_OK);
    cr_assert(rep.t_first == 4.5 && rep.t_last == 4.5 && isnan(rep.median_dt) && rep.n_gaps == 0);
    cr_assert_eq(rep.first_gap, SIZE_MAX);
    rb_log_free(log);
    log = one_channel("none", 0, 1, t, x, &ch);
    cr_assert_eq(rb_channel_check_time(ch, 2, &rep, &err), RB_OK);
    cr_assert(isnan(rep.t_first) && isnan(rep.t_last) && isnan(rep.median_dt));
    rb_log_free(log);
}

Test(io_time, check_time_out_of_memory)
{
    double t[3] = {0, 1, 2}, x[3] = {0};
    rb_channel *ch;
    rb_log *log = one_channel("c", 3, 1, t, x, &ch);
    rb_time_report rep;
    rb_err err;
    rb_alloc_fail_after(0);
    int rc = rb_channel_check_time(ch, 2, &rep, &err);
    rb_alloc_fail_after(-1);
    cr_assert_eq(rc, RB_ENOMEM);
    rb_log_free(log);
}

/* ---- clocks ------------------------------------------------------------------------------------ */
Test(io_time, uniform_clock_counts_exactly)
{
    rb_clock clk;
    rb_err err;
    cr_assert_eq(rb_clock_uniform(&clk, 0, 10, 100, &err), RB_OK);
    cr_assert_eq(clk.n, 1001);
    for (size_t k = 0; k < clk.n; k++)
        cr_assert_eq(clk.t[k], (double)k / 100, "k = %zu", k);
    cr_assert_eq(clk.t[1000], 10.0);
    rb_clock_free(&clk);
    cr_assert_null(clk.t);

    /* 3 / 10 is 0.3 exactly, 3 * 0.1 is not */
    cr_assert_eq(rb_clock_uniform(&clk, 0, 0.3, 10, &err), RB_OK);
    cr_assert_eq(clk.n, 4);
    cr_assert_eq(clk.t[3], 0.3, "k / rate, not k * (1 / rate)");
    rb_clock_free(&clk);
    /* (t1 - t0) rate just below an integer through rounding: (0.7 - 0.2) * 10 = 4.999999999999999 */
    cr_assert_eq(rb_clock_uniform(&clk, 0.2, 0.7, 10, &err), RB_OK);
    cr_assert_eq(clk.n, 6);
    rb_clock_free(&clk);
    cr_assert_eq(rb_clock_uniform(&clk, 2, 2.0999, 10, &err), RB_OK);
    cr_assert_eq(clk.n, 1, "t1 is not reached");
    rb_clock_free(&clk);
    cr_assert_eq(rb_clock_uniform(&clk, 5, 5, 10, &err), RB_OK);
    cr_assert(clk.n == 1 && clk.t[0] == 5);
    rb_clock_free(&clk);

    /* no drift: one million steps from a large start */
    cr_assert_eq(rb_clock_uniform(&clk, 1.7e9, 1.7e9 + 1000, 1000, &err), RB_OK);
    cr_assert_eq(clk.n, 1000001);
    cr_assert_eq(clk.t[777777], 1.7e9 + 777777 / 1000.0);
    cr_assert_float_eq(clk.t[clk.n - 1], 1.7e9 + 1000, 1e-6);
    rb_clock_free(&clk);
}

Test(io_time, uniform_clock_rejects_bad_arguments)
{
    rb_clock clk;
    rb_err err;
    const double bad[][3] = {{0, 1, 0},         {0, 1, -10}, {0, 1, NAN},     {NAN, 1, 10},
                             {0, INFINITY, 10}, {1, 0, 10},  {0, 1, INFINITY}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        cr_assert_eq(rb_clock_uniform(&clk, bad[k][0], bad[k][1], bad[k][2], &err), RB_EINVAL, "case %zu", k);
        cr_assert(clk.n == 0 && clk.t == NULL);
    }
    /* an impossible clock is the input's fault (its units), not the memory's */
    cr_assert_eq(rb_clock_uniform(&clk, 1e300, 2e300, 1e300, &err), RB_EINPUT, "too many samples");
    cr_assert_eq(rb_clock_uniform(&clk, 1e16, 1e16 + 10, 2, &err), RB_EINVAL, "steps below the resolution");
}

Test(io_time, clock_from_channel_window)
{
    double t[6] = {0.0, 0.1, 0.25, 0.3, 0.5, 0.9}, x[6] = {0};
    rb_channel *ch;
    rb_log *log = one_channel("c", 6, 1, t, x, &ch);
    rb_clock clk;
    rb_err err;
    cr_assert_eq(rb_clock_from_channel(&clk, ch, 0.1, 0.5, &err), RB_OK);
    double want[4] = {0.1, 0.25, 0.3, 0.5};
    cr_assert_eq(clk.n, 4, "bounds are inclusive");
    cr_assert_arr_eq(clk.t, want, sizeof want);
    rb_clock_free(&clk);
    cr_assert_eq(rb_clock_from_channel(&clk, ch, -INFINITY, INFINITY, &err), RB_OK);
    cr_assert_eq(clk.n, 6);
    cr_assert_arr_eq(clk.t, t, sizeof t);
    rb_clock_free(&clk);
    cr_assert_eq(rb_clock_from_channel(&clk, ch, 0.6, 0.8, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "channel c: no sample"), "%s", err.msg);
    cr_assert_eq(rb_clock_from_channel(&clk, ch, 0.8, 0.6, &err), RB_EINVAL);
    ch->time[3] = 0.2;
    cr_assert_eq(rb_clock_from_channel(&clk, ch, -INFINITY, INFINITY, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "sample 3"), "%s", err.msg);
    rb_log_free(log);
}

/* ---- resampling ------------------------------------------------------------------------------- */
/* Two linear signals on random, irregular timestamps. */
static rb_log *linear_log(size_t T, rb_channel **ch)
{
    double *t = malloc(T * sizeof *t), *x = malloc(2 * T * sizeof *x);
    uint64_t seed = 12345;
    t[0] = 100.0;
    for (size_t k = 1; k < T; k++)
        t[k] = t[k - 1] + 0.0005 + 0.01 * uniform(&seed);
    for (size_t k = 0; k < T; k++) {
        x[2 * k] = 3 - 2 * (t[k] - 100);
        x[2 * k + 1] = 0.5 + 4 * (t[k] - 100);
    }
    rb_log *log = one_channel("motors_state/positions", T, 2, t, x, ch);
    free(t);
    free(x);
    return log;
}

Test(io_time, linear_interpolation_is_exact_for_lines)
{
    rb_channel *ch;
    rb_log *log = linear_log(2000, &ch);
    rb_clock clk;
    rb_err err;
    /* end points exactly on the first and last samples are allowed */
    double t0 = ch->time[0], t1 = ch->time[ch->n_samples - 1];
    cr_assert_eq(rb_clock_uniform(&clk, t0, t1, 3001 / (t1 - t0), &err), RB_OK);
    clk.t[clk.n - 1] = t1; /* make the last tick land exactly on the last sample */
    double *out = malloc(clk.n * 2 * sizeof *out);
    size_t held = 99;
    cr_assert_eq(rb_resample(ch, NULL, 0, &clk, RB_INTERP_LINEAR, RB_NONFINITE_ERROR, out, &held, &err), RB_OK, "%s",
                 err.msg);
    cr_assert_eq(held, 0);
    for (size_t k = 0; k < clk.n; k++) {
        double s = clk.t[k] - 100;
        cr_assert_float_eq(out[2 * k], 3 - 2 * s, 1e-11, "k = %zu", k);
        cr_assert_float_eq(out[2 * k + 1], 0.5 + 4 * s, 1e-11, "k = %zu", k);
    }
    cr_assert_eq(out[0], ch->data[0], "exact at a sample time");
    cr_assert_eq(out[2 * clk.n - 1], ch->data[2 * ch->n_samples - 1]);
    free(out);
    rb_clock_free(&clk);
    rb_log_free(log);
}

/* Reference: binary search per clock time, then the two formulas written out. */
static void reference(const rb_channel *ch, const double *tc, size_t n, rb_interp interp, size_t e, double *out)
{
    for (size_t k = 0; k < n; k++) {
        size_t lo = 0, hi = ch->n_samples - 1;
        while (lo < hi) { /* last sample with time <= tc */
            size_t mid = (lo + hi + 1) / 2;
            if (ch->time[mid] <= tc[k])
                lo = mid;
            else
                hi = mid - 1;
        }
        double a = ch->data[lo * ch->n_elements + e];
        if (interp == RB_INTERP_HOLD || ch->time[lo] == tc[k]) {
            out[k] = a;
        } else {
            double b = ch->data[(lo + 1) * ch->n_elements + e];
            out[k] = a + (b - a) * ((tc[k] - ch->time[lo]) / (ch->time[lo + 1] - ch->time[lo]));
        }
    }
}

Test(io_time, merge_pass_matches_binary_search)
{
    enum { T = 5000 };
    double *t = malloc(T * sizeof *t), *x = malloc(3 * T * sizeof *x);
    uint64_t seed = 777;
    t[0] = 0;
    for (size_t k = 1; k < T; k++)
        t[k] = t[k - 1] + 0.001 + 0.02 * uniform(&seed);
    for (size_t k = 0; k < 3 * T; k++)
        x[k] = uniform(&seed) * 10 - 5;
    rb_channel *ch;
    rb_log *log = one_channel("c", T, 3, t, x, &ch);
    rb_clock clk;
    rb_err err;
    /* a clock denser than the samples in places and sparser in others, hitting some samples */
    cr_assert_eq(rb_clock_uniform(&clk, t[0], t[T - 1], 1 / 0.007, &err), RB_OK);
    for (size_t k = 10, j = 0; k < clk.n; k += 10) { /* move some ticks onto sample times */
        while (j + 1 < T && t[j + 1] <= clk.t[k])
            j++;
        if (t[j] > clk.t[k - 1])
            clk.t[k] = t[j];
    }
    size_t sel[2] = {2, 0};
    double *out = malloc(clk.n * 2 * sizeof *out), *want = malloc(clk.n * sizeof *want);
    for (int interp = RB_INTERP_LINEAR; interp <= RB_INTERP_HOLD; interp++) {
        cr_assert_eq(rb_resample(ch, sel, 2, &clk, (rb_interp)interp, RB_NONFINITE_ERROR, out, NULL, &err), RB_OK);
        for (size_t s = 0; s < 2; s++) {
            reference(ch, clk.t, clk.n, (rb_interp)interp, sel[s], want);
            for (size_t k = 0; k < clk.n; k++)
                cr_assert_float_eq(out[k * 2 + s], want[k], 1e-12, "interp %d, k %zu, element %zu", interp, k, sel[s]);
        }
    }
    free(out);
    free(want);
    free(t);
    free(x);
    rb_clock_free(&clk);
    rb_log_free(log);
}

Test(io_time, hold_returns_the_previous_sample)
{
    double t[4] = {0, 1, 2, 3}, x[4] = {10, 20, 30, 40};
    rb_channel *ch;
    rb_log *log = one_channel("c", 4, 1, t, x, &ch);
    rb_clock clk = {5, (double[]){0, 0.999, 1, 2.5, 3}};
    double out[5], want[5] = {10, 10, 20, 30, 40};
    rb_err err;
    cr_assert_eq(rb_resample(ch, NULL, 1, &clk, RB_INTERP_HOLD, RB_NONFINITE_ERROR, out, NULL, &err), RB_OK);
    cr_assert_arr_eq(out, want, sizeof want);
    double lin[5] = {10, 19.99, 20, 35, 40};
    cr_assert_eq(rb_resample(ch, NULL, 0, &clk, RB_INTERP_LINEAR, RB_NONFINITE_ERROR, out, NULL, &err), RB_OK);
    for (int k = 0; k < 5; k++)
        cr_assert_float_eq(out[k], lin[k], 1e-12);
    rb_log_free(log);
}

Test(io_time, clock_outside_the_span_is_an_error)
{
    double t[3] = {1, 2, 3}, x[3] = {0};
    rb_channel *ch;
    rb_log *log = one_channel("FTs/l_foot", 3, 1, t, x, &ch);
    double out[3];
    rb_err err;
    rb_clock before = {2, (double[]){0.5, 1.5}}, after = {2, (double[]){2.5, 3.0000000000000004}};
    cr_assert_eq(rb_resample(ch, NULL, 0, &before, RB_INTERP_LINEAR, RB_NONFINITE_ERROR, out, NULL, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "channel FTs/l_foot: clock time 0.5 s is outside"), "%s", err.msg);
    cr_assert_eq(rb_resample(ch, NULL, 0, &after, RB_INTERP_HOLD, RB_NONFINITE_ERROR, out, NULL, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "clock time 3.0000000000000004 s is outside"), "%s", err.msg);
    rb_log_free(log);
    log = one_channel("empty", 0, 1, t, x, &ch);
    cr_assert_eq(rb_resample(ch, NULL, 0, &before, RB_INTERP_HOLD, RB_NONFINITE_ERROR, out, NULL, &err), RB_EINPUT);
    rb_log_free(log);
}

Test(io_time, nonfinite_samples_follow_the_policy)
{
    /* element q1 is NaN at sample 2 and Inf at sample 3; q0 is clean */
    double t[5] = {0, 1, 2, 3, 4};
    double x[10] = {0, 1, 10, 2, 20, NAN, 30, INFINITY, 40, 5};
    rb_channel *ch;
    rb_log *log = one_channel("joints_state/torques", 5, 2, t, x, &ch);
    rb_clock clk = {3, (double[]){1.5, 2.5, 3.5}};
    double out[6];
    size_t held = 0;
    rb_err err;
    cr_assert_eq(rb_resample(ch, NULL, 0, &clk, RB_INTERP_LINEAR, RB_NONFINITE_ERROR, out, &held, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "channel joints_state/torques: element q1: sample 2 is nan"), "%s", err.msg);

    cr_assert_eq(rb_resample(ch, NULL, 0, &clk, RB_INTERP_LINEAR, RB_NONFINITE_HOLD, out, &held, &err), RB_OK, "%s",
                 err.msg);
    /* q0 interpolates; q1's non-finite neighbours become its last finite value, 2 (sample 1) */
    double want[6] = {15, 2, 25, 2, 35, 2 + 0.5 * (5 - 2)};
    for (int k = 0; k < 6; k++)
        cr_assert_float_eq(out[k], want[k], 1e-12, "k = %d", k);
    cr_assert_eq(held, 3);

    cr_assert_eq(rb_resample(ch, (size_t[]){0}, 1, &clk, RB_INTERP_LINEAR, RB_NONFINITE_ERROR, out, &held, &err), RB_OK,
                 "q0 alone is clean");
    cr_assert_eq(held, 0);

    /* under hold interpolation, a NaN between clock ticks is never used */
    rb_clock sparse = {2, (double[]){1, 4}};
    cr_assert_eq(rb_resample(ch, NULL, 0, &sparse, RB_INTERP_HOLD, RB_NONFINITE_ERROR, out, &held, &err), RB_OK);
    cr_assert(out[1] == 2 && out[3] == 5);

    /* nothing to hold at the start */
    ch->data[1] = NAN;
    rb_clock start = {1, (double[]){0}};
    cr_assert_eq(rb_resample(ch, NULL, 0, &start, RB_INTERP_HOLD, RB_NONFINITE_HOLD, out, &held, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "element q1: sample 0 is nan") && strstr(err.msg, "no finite sample"), "%s", err.msg);
    rb_log_free(log);
}

Test(io_time, selection_is_checked)
{
    double t[2] = {0, 1}, x[4] = {1, 2, 3, 4};
    rb_channel *ch;
    rb_log *log = one_channel("c", 2, 2, t, x, &ch);
    rb_clock clk = {1, (double[]){0.5}};
    double out[2];
    rb_err err;
    cr_assert_eq(rb_resample(ch, (size_t[]){1, 2}, 2, &clk, RB_INTERP_HOLD, RB_NONFINITE_ERROR, out, NULL, &err),
                 RB_EINVAL);
    cr_assert(strstr(err.msg, "element index 2 out of range"), "%s", err.msg);
    cr_assert_eq(rb_resample(ch, NULL, 3, &clk, RB_INTERP_HOLD, RB_NONFINITE_ERROR, out, NULL, &err), RB_EINVAL);
    cr_assert_eq(rb_resample(ch, (size_t[]){1, 0}, 2, &clk, RB_INTERP_LINEAR, RB_NONFINITE_ERROR, out, NULL, &err),
                 RB_OK);
    cr_assert(out[0] == 3 && out[1] == 2);
    rb_clock back = {2, (double[]){0.5, 0.25}};
    cr_assert_eq(rb_resample(ch, NULL, 0, &back, RB_INTERP_HOLD, RB_NONFINITE_ERROR, out, NULL, &err), RB_EINVAL);
    rb_alloc_fail_after(0);
    int rc = rb_resample(ch, NULL, 0, &clk, RB_INTERP_HOLD, RB_NONFINITE_HOLD, out, NULL, &err);
    rb_alloc_fail_after(-1);
    cr_assert_eq(rc, RB_ENOMEM);
    rb_log_free(log);
}
