/* The statistics a comparison suite needs beyond the error ones: the estimate alone (min, max, mean, zeros),
 * the step response (10-90 % rise time, 50 % delay, unsettled steps) and the error around events; and the
 * "Published beside ours" table. Expected values are computed here from the signals' definitions. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/metrics.h"

static rb_metric_input input(const double *e, const double *r, const double *time, size_t T, size_t n)
{
    rb_metric_input in = {"m_hat", "m_true", e, r, time, T, n, -INFINITY, INFINITY};
    return in;
}

Test(metrics_events, estimate_only_statistics_on_known_arrays)
{
    /* element 0: a 0/1 flag; element 1: any values. Sample 0 lies outside the window. */
    const double time[] = {0, 1, 2, 3, 4, 5, 6};
    const double e[] = {0, -9, 1, 2.5, 0, -0.0, 1, 4, 1, 0, 0, -1, 1, 3};
    const double r[14] = {0};
    rb_metric_input in = input(e, r, time, 7, 2);
    in.t0 = 0.5;
    rb_stats el[2], all;
    rb_err err;
    cr_assert_eq(rb_metrics_compute(&in, el, &all, &err), RB_OK, "%s", err.msg);
    double want_min[2] = {INFINITY, INFINITY}, want_max[2] = {-INFINITY, -INFINITY}, sum[2] = {0}, zeros[2] = {0};
    for (size_t t = 1; t < 7; t++)
        for (size_t i = 0; i < 2; i++) {
            double x = e[t * 2 + i];
            want_min[i] = fmin(want_min[i], x);
            want_max[i] = fmax(want_max[i], x);
            sum[i] += x;
            zeros[i] += x == 0;
        }
    for (size_t i = 0; i < 2; i++) {
        cr_expect_eq(el[i].min_est, want_min[i], "element %zu", i);
        cr_expect_eq(el[i].max_est, want_max[i], "element %zu", i);
        cr_expect(fabs(el[i].mean_est - sum[i] / 6) < 1e-15, "element %zu: %g", i, el[i].mean_est);
        cr_expect_eq(el[i].count_zero_est, zeros[i], "element %zu: %g", i, el[i].count_zero_est);
    }
    /* the flag: set on 4 of 6 samples, never below 0 */
    cr_expect_eq(el[0].min_est, 0);
    cr_expect_eq(el[0].count_zero_est, 2);
    cr_expect(fabs(el[0].mean_est - 4.0 / 6) < 1e-15);
    cr_expect_eq(all.min_est, fmin(want_min[0], want_min[1]));
    cr_expect_eq(all.max_est, fmax(want_max[0], want_max[1]));
    cr_expect(fabs(all.mean_est - (sum[0] + sum[1]) / 12) < 1e-15);
    cr_expect_eq(all.count_zero_est, zeros[0] + zeros[1]);
    cr_expect_eq(rb_stat_index("count_zero_est"), 9);
    cr_expect_eq(rb_stat_value(&el[1], (size_t)rb_stat_index("max_est")), want_max[1]);
}

/* A first-order lag y' = (r - y) / tau, discretized exactly (r held over each sample), following a square
 * wave between lo and hi that switches every `half` seconds from t = half on; sampled every dt. */
typedef struct lag {
    double *t, *r, *y;
    size_t n;
} lag;

static lag make_lag(double dt, double t_end, double tau, double half, double lo, double hi)
{
    lag g;
    g.n = (size_t)llround(t_end / dt) + 1;
    g.t = malloc(g.n * sizeof(double));
    g.r = malloc(g.n * sizeof(double));
    g.y = malloc(g.n * sizeof(double));
    double a = exp(-dt / tau);
    for (size_t k = 0; k < g.n; k++) {
        g.t[k] = (double)k * dt;
        long phase = (long)floor((g.t[k] + 1e-9) / half);
        g.r[k] = phase % 2 == 1 ? hi : lo;
        g.y[k] = k == 0 ? lo : g.r[k] + (g.y[k - 1] - g.r[k]) * a;
    }
    return g;
}

static void free_lag(lag *g) { free(g->t), free(g->r), free(g->y); }

Test(metrics_events, first_order_lag_rise_time_is_tau_ln9)
{
    const double dt = 0.001, tau = 0.05;
    lag g = make_lag(dt, 2.4, tau, 0.5, 25, 35); /* 25 <-> 35 kg every 0.5 s: 4 steps */
    rb_metric_input in = input(g.y, g.r, g.t, g.n, 1);
    rb_stats el, all;
    rb_err err;
    cr_assert_eq(rb_metrics_steps(&in, 5, &el, &all, &err), RB_OK, "%s", err.msg);
    cr_expect_eq(el.n_steps, 4);
    cr_expect_eq(el.steps_unsettled, 0);
    /* the exact discretization moves on the step's own sample: the response starts one sample before it */
    cr_expect(fabs(el.rise_time - tau * log(9)) <= dt, "rise %.6g, want %.6g", el.rise_time, tau * log(9));
    cr_expect(fabs(el.step_delay - (tau * log(2) - dt)) <= dt / 2, "delay %.6g, want %.6g", el.step_delay,
              tau * log(2) - dt);
    cr_expect_eq(all.rise_time, el.rise_time);
    /* a jump threshold above the steps finds none */
    cr_assert_eq(rb_metrics_steps(&in, 10, &el, NULL, &err), RB_OK);
    cr_expect_eq(el.n_steps, 0);
    cr_expect(isnan(el.rise_time));
    cr_expect_eq(rb_metrics_steps(&in, 0, &el, NULL, &err), RB_EINVAL);
    free_lag(&g);
}

Test(metrics_events, unsettled_step_counts_the_time_left)
{
    /* tau = 1 s, a step at t = 0.5 s and the window ending at 0.999 s: 10 % is reached after tau ln(10/9) =
     * 0.105 s, 50 % (0.69 s) and 90 % never: the rise is the time left after t10, the delay the time left. */
    const double dt = 0.001, tau = 1;
    lag g = make_lag(dt, 1.2, tau, 0.5, 0, 1);
    rb_metric_input in = input(g.y, g.r, g.t, g.n, 1);
    in.t1 = 0.9995; /* only the first step */
    rb_stats el;
    rb_err err;
    cr_assert_eq(rb_metrics_steps(&in, 0.5, &el, NULL, &err), RB_OK, "%s", err.msg);
    cr_expect_eq(el.n_steps, 1);
    cr_expect_eq(el.steps_unsettled, 1);
    double t10 = 0.5 - dt + tau * log(1 / 0.9), t_end = 0.999;
    cr_expect(fabs(el.rise_time - (t_end - t10)) <= dt, "rise %.6g, want %.6g", el.rise_time, t_end - t10);
    cr_expect(fabs(el.step_delay - (t_end - 0.5)) <= dt, "delay %.6g", el.step_delay);
    free_lag(&g);
}

Test(metrics_events, event_peak_on_known_spikes)
{
    /* e - r = 0.01 everywhere but spikes: element 0 +0.5 at t = 1.0 and -2 at t = 3.0, element 1 +1 at 1.05 */
    const size_t T = 501;
    double *t = malloc(T * sizeof *t), *r = malloc(2 * T * sizeof *r), *e = malloc(2 * T * sizeof *e);
    for (size_t k = 0; k < T; k++) {
        t[k] = 0.01 * (double)k;
        for (size_t i = 0; i < 2; i++) {
            r[2 * k + i] = sin(t[k] + (double)i);
            e[2 * k + i] = r[2 * k + i] + 0.01;
        }
    }
    e[2 * 100] = r[2 * 100] + 0.5;
    e[2 * 300] = r[2 * 300] - 2;
    e[2 * 105 + 1] = r[2 * 105 + 1] + 1;
    /* windows [te, te + 0.2]: 0.9 holds t = 1.0 and 1.05, 2.9 and 2.95 both hold 3.0 (overlap), 100 no sample */
    const double events[] = {2.9, 0.9, 100, 2.95};
    rb_metric_input in = input(e, r, t, T, 2);
    rb_stats el[2], all;
    rb_err err;
    cr_assert_eq(rb_metrics_events(&in, events, 4, 0, 0.2, el, &all, &err), RB_OK, "%s", err.msg);
    cr_expect_eq(el[0].n_events, 3);
    cr_expect(fabs(el[0].event_peak - (2 + 0.5 + 2) / 3) < 1e-12, "%.17g", el[0].event_peak);
    cr_expect(fabs(el[0].event_max - 2) < 1e-12);
    cr_expect(fabs(el[1].event_peak - (0.01 + 1 + 0.01) / 3) < 1e-12, "%.17g", el[1].event_peak);
    cr_expect(fabs(all.event_peak - (2 + 1 + 2) / 3.0) < 1e-12, "%.17g", all.event_peak);
    cr_expect(fabs(all.event_max - 2) < 1e-12);
    /* clipped to the scored window: ending at 2.97 s drops the -2 spike */
    in.t1 = 2.97;
    cr_assert_eq(rb_metrics_events(&in, events, 4, 0, 0.2, el, NULL, &err), RB_OK);
    cr_expect(fabs(el[0].event_max - 0.5) < 1e-12, "%.17g", el[0].event_max);
    /* an interval before the event: [te - 0.2, te - 0.1] of 1.12 holds the 1.0 spike, not the 1.05 one */
    const double late[] = {1.12};
    in.t1 = INFINITY;
    cr_assert_eq(rb_metrics_events(&in, late, 1, -0.2, -0.1, el, NULL, &err), RB_OK);
    cr_expect(fabs(el[0].event_peak - 0.5) < 1e-12, "%.17g", el[0].event_peak);
    cr_expect(fabs(el[1].event_peak - 0.01) < 1e-12, "%.17g", el[1].event_peak);
    cr_expect_eq(rb_metrics_events(&in, late, 1, 0.1, -0.1, el, NULL, &err), RB_EINVAL);
    free(t), free(r), free(e);
}

Test(metrics_events, published_beside_ours)
{
    const char *variants[] = {"kf", "ekf"}, *logs[] = {"a", "b"}, *joints[] = {"torso"};
    rb_comparison *c;
    rb_err err;
    cr_assert_eq(rb_comparison_new(&c, "t", "truth/mass", variants, 2, logs, 2, joints, 1, &err), RB_OK);
    for (size_t l = 0; l < 2; l++) {
        rb_comparison_at(c, 1, 0, l)->rmse = 0.2 + 0.1 * (double)l; /* mean 0.25 */
        rb_comparison_at(c, 1, 0, l)->rise_time = 0.4;
    }
    cr_assert_eq(rb_comparison_add_published(c, 1, 0, 1, 0.125, "Table II, no adaptation", &err), RB_OK);
    cr_assert_eq(rb_comparison_add_published(c, 1, 1, RB_STAT_RISE_TIME, 0, "Fig. 3", &err), RB_OK);
    cr_expect_eq(rb_comparison_add_published(c, 2, 0, 1, 1, "x", &err), RB_EINVAL);
    cr_assert_eq(rb_comparison_summarize(c, &err), RB_OK, "%s", err.msg);
    char *md, *json;
    cr_assert_eq(rb_comparison_render(c, RB_REPORT_MARKDOWN, &md, &err), RB_OK);
    cr_assert_eq(rb_comparison_render(c, RB_REPORT_JSON, &json, &err), RB_OK);
    cr_expect(strstr(md, "## Published beside ours"), "%s", md);
    cr_expect(strstr(md, "| Table II, no adaptation | ekf | torso | rmse | 0.125 | 0.25 | 2 |"), "%s", md);
    cr_expect(strstr(md, "| Fig. 3 | ekf | all | rise_time | 0 | 0 | n/a |"), "%s", md);
    cJSON *root = cJSON_Parse(json);
    cr_assert_not_null(root, "%s", json);
    const cJSON *pub = cJSON_GetObjectItem(root, "published");
    cr_assert_eq(cJSON_GetArraySize(pub), 2, "%s", json);
    const cJSON *p0 = cJSON_GetArrayItem(pub, 0);
    cr_expect_str_eq(cJSON_GetObjectItem(p0, "statistic")->valuestring, "rmse");
    cr_expect_eq(cJSON_GetObjectItem(p0, "paper")->valuedouble, 0.125);
    cr_expect_eq(cJSON_GetObjectItem(p0, "ours")->valuedouble, rb_comparison_summary(c, 1, 0, 1)->mean);
    cr_expect_eq(cJSON_GetObjectItem(p0, "ratio")->valuedouble, rb_comparison_summary(c, 1, 0, 1)->mean / 0.125);
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(pub, 1), "ratio")));
    cJSON_Delete(root);
    rb_free(md);
    rb_free(json);
    rb_comparison_free(c);
}
