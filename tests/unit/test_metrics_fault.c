/* The sensor-fault monitor's detectors (rb_fault_scan, rb_fault_outliers) on constructed samples, and the report's
 * faults section in every format. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/metrics.h"

static const rb_fault_opts OPTS = {.stuck_window = 5, .stuck_tolerance = 0, .saturation_window = 4, .k_sigma = 3};

/* A ramp of n distinct values (no two equal: nothing stuck, the extremes once each). */
static void ramp(double *x, size_t n, size_t stride)
{
    for (size_t k = 0; k < n; k++)
        x[k * stride] = 0.1 * (double)k - 1.0 + 0.001 * sin((double)k);
}

Test(metrics_fault, clean_ramp_has_no_fault)
{
    double x[50];
    ramp(x, 50, 1);
    rb_fault_tally st, sa;
    rb_fault_tally_init(&st, 1), rb_fault_tally_init(&sa, 1);
    rb_fault_scan(x, 50, 1, &OPTS, &st, &sa);
    cr_assert_eq(st.count, 0);
    cr_assert_eq(sa.count, 0);
    cr_assert_eq(st.first, SIZE_MAX);
}

Test(metrics_fault, stuck_run_counts_every_sample_from_its_first)
{
    double x[60];
    ramp(x, 60, 1);
    for (size_t k = 20; k < 27; k++) /* 7 samples at x[20], mid-range */
        x[k] = x[20];
    for (size_t k = 40; k < 44; k++) /* 4 < window: not stuck */
        x[k] = x[40];
    rb_fault_tally st, sa;
    rb_fault_tally_init(&st, 1), rb_fault_tally_init(&sa, 1);
    rb_fault_scan(x, 60, 1, &OPTS, &st, &sa);
    cr_assert_eq(st.count, 7);
    cr_assert_eq(st.first, 20);
    cr_assert_eq(sa.count, 0);
}

Test(metrics_fault, tolerance_and_nan_bound_the_run)
{
    double x[30];
    ramp(x, 30, 1);
    for (size_t k = 10; k < 20; k++)
        x[k] = 0.5 + 1e-4 * (double)(k % 2); /* within 1e-3 of the first, not exactly equal */
    rb_fault_opts o = OPTS;
    rb_fault_tally st, sa;
    rb_fault_tally_init(&st, 1), rb_fault_tally_init(&sa, 1);
    rb_fault_scan(x, 30, 1, &o, &st, &sa);
    cr_assert_eq(st.count, 0, "exactly equal by default");
    o.stuck_tolerance = 1e-3;
    rb_fault_scan(x, 30, 1, &o, &st, &sa);
    cr_assert_eq(st.count, 10);
    cr_assert_eq(st.first, 10);
    x[14] = NAN; /* splits it into 4 + 5 */
    rb_fault_tally_init(&st, 1);
    rb_fault_scan(x, 30, 1, &o, &st, &sa);
    cr_assert_eq(st.count, 5);
    cr_assert_eq(st.first, 15);
    o.stuck_window = 0;
    rb_fault_tally_init(&st, 1);
    rb_fault_scan(x, 30, 1, &o, &st, &sa);
    cr_assert_eq(st.count, 0, "window 0: off");
}

Test(metrics_fault, run_at_an_extreme_is_saturated_not_stuck)
{
    /* element 1 of 3 (stride 3): clipped at its top for 6 samples and at its bottom for 3 (too short) */
    double x[3 * 40];
    ramp(x + 1, 40, 3);
    double top = x[1 + 3 * 39] + 1, bottom = x[1] - 1;
    for (size_t k = 10; k < 16; k++)
        x[1 + 3 * k] = top;
    for (size_t k = 30; k < 33; k++)
        x[1 + 3 * k] = bottom;
    rb_fault_tally st, sa;
    rb_fault_tally_init(&st, 1), rb_fault_tally_init(&sa, 1);
    rb_fault_scan(x + 1, 40, 3, &OPTS, &st, &sa);
    cr_assert_eq(sa.count, 6);
    cr_assert_eq(sa.first, 10);
    cr_assert_eq(st.count, 0, "the saturated run is not counted twice; 3 at the bottom are too few for either");
    rb_fault_opts o = OPTS;
    o.saturation_window = 0; /* off: the same run is stuck */
    rb_fault_tally_init(&sa, 1);
    rb_fault_scan(x + 1, 40, 3, &o, &st, &sa);
    cr_assert_eq(sa.count, 0);
    cr_assert_eq(st.count, 6);
    double c[8] = {2, 2, 2, 2, 2, 2, 2, 2}; /* its own max and min, but never anything else */
    rb_fault_tally_init(&st, 1), rb_fault_tally_init(&sa, 1);
    rb_fault_scan(c, 8, 1, &OPTS, &st, &sa);
    cr_assert_eq(sa.count, 0, "a constant element is not saturated");
    cr_assert_eq(st.count, 8);
}

Test(metrics_fault, outliers_beyond_k_sigma)
{
    rb_fault_tally t[3];
    rb_fault_tally_init(t, 3);
    const double z0[3] = {0.5, -3.5, NAN}, z1[3] = {3.0, 4.0, 10.0}, z2[3] = {-7.0, 0.0, NAN};
    rb_fault_outliers(z0, 3, 3.0, 7, t);
    rb_fault_outliers(z1, 3, 3.0, 8, t);
    rb_fault_outliers(z2, 3, 3.0, 9, t);
    cr_assert_eq(t[0].count, 1); /* 3.0 is not beyond 3 */
    cr_assert_eq(t[0].first, 9);
    cr_assert_eq(t[1].count, 2);
    cr_assert_eq(t[1].first, 7);
    cr_assert_eq(t[2].count, 1, "NaN (not used) is no outlier");
    rb_fault_outliers(z1, 3, 0.0, 10, t);
    cr_assert_eq(t[2].count, 1, "k_sigma 0: off");
}

static rb_report *report_with_fault(void)
{
    rb_report *rep = NULL;
    rb_err err;
    cr_assert_eq(rb_report_new(&rep, "t", &err), RB_OK);
    rb_stats s = {.n = 10, .mse = 1, .rmse = 1, .mae = 1, .max_abs = 1, .mean_abs_est = 1, .mean_abs_ref = 1};
    cr_assert_eq(rb_report_add(rep, "p/log", "est", "ref", "a", &s, &err), RB_OK);
    cr_assert_eq(rb_report_set_fault_settings(rep, &OPTS, &err), RB_OK);
    rb_report_fault f = {"p/log", "cur", "motors/currents", "elbow", {{0, SIZE_MAX}, {0, SIZE_MAX}, {0, SIZE_MAX}},
                         {0}};
    cr_assert_eq(rb_report_add_fault(rep, &f, &err), RB_OK);
    f.element = "knee";
    f.tally[RB_FAULT_STUCK] = (rb_fault_tally){700, 600};
    f.first_time[RB_FAULT_STUCK] = 0.6;
    cr_assert_eq(rb_report_add_fault(rep, &f, &err), RB_OK);
    return rep;
}

Test(metrics_fault, report_sections)
{
    rb_report *rep = report_with_fault();
    rb_err err;
    char *json = NULL, *md = NULL, *csv = NULL;
    cr_assert_eq(rb_report_render(rep, RB_REPORT_JSON, &json, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_report_render(rep, RB_REPORT_MARKDOWN, &md, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_report_render(rep, RB_REPORT_CSV, &csv, &err), RB_OK, "%s", err.msg);
    cr_assert(strstr(json, "\"total\":\t700") && strstr(json, "\"stuck\":\t700"), "%s", json);
    cr_assert(strstr(json, "\"first_sample\":\t600") && strstr(json, "\"first_time\":\t0.6"), "%s", json);
    cr_assert(strstr(json, "\"element\":\t\"elbow\""), "every monitored element is listed: %s", json);
    cr_assert(strstr(md, "## Sensor faults") &&
                  strstr(md, "| p/log | cur | motors/currents | knee | stuck | 700 | 600 | 0.59999999999999998 |"),
              "%s", md);
    cr_assert_null(strstr(md, "| elbow | stuck"), "no row without a fault: %s", md);
    cr_assert(strstr(csv, "# fault: stuck, 700 samples from sample 600 (t = 0.6 s)"), "%s", csv);
    rb_free(json), rb_free(md), rb_free(csv);
    rb_report_free(rep);
}

Test(metrics_fault, report_without_monitor_is_unchanged)
{
    rb_report *rep = NULL;
    rb_err err;
    cr_assert_eq(rb_report_new(&rep, "t", &err), RB_OK);
    char *json = NULL;
    cr_assert_eq(rb_report_render(rep, RB_REPORT_JSON, &json, &err), RB_OK);
    cr_assert_null(strstr(json, "faults"), "%s", json);
    rb_free(json);
    rb_report_free(rep);
}
