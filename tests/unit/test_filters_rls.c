/* Recursive and batch least squares: RLS against the batch solution (plain and ridge-augmented), forgetting
 * on a step change, friction identification, multi-output and missing outputs, failure paths. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/filters.h"

/* Regressors for a Coulomb + viscous + offset friction model, tau = Fc sign(v) + Fv v + b, plus a
 * fourth term v^3 (p = 4); v a joint velocity sampled at 100 Hz that changes sign about every 0.7 s. */
static void friction_regressor(int k, double phi[4])
{
    double t = 0.01 * k, v = 1.5 * sin(2 * M_PI * 0.7 * t) + 0.4 * cos(5.3 * t);
    phi[0] = v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0);
    phi[1] = v;
    phi[2] = 1.0;
    phi[3] = v * v * v;
}

enum { NS = 2000, P4 = 4 };

static void make_data(double *Phi, double *y, const double theta[4], double noise, uint64_t seed)
{
    rb_rng rng;
    rb_rng_seed(&rng, seed);
    for (int k = 0; k < NS; k++) {
        friction_regressor(k, Phi + k * P4);
        y[k] = noise * rb_rng_normal(&rng);
        for (int j = 0; j < P4; j++)
            y[k] += Phi[k * P4 + j] * theta[j];
    }
}

static double max_rel_diff(const double *a, const double *b, size_t n)
{
    double d = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs(a[i] - b[i]));
        s = fmax(s, fabs(b[i]));
    }
    return d / s;
}

Test(filters_rls, batch_least_squares_is_exact_on_consistent_data)
{
    static double Phi[NS * P4], y[NS];
    const double theta[4] = {0.31, 0.67, -0.05, 0.02};
    make_data(Phi, y, theta, 0.0, 1);
    double est[4], rss;
    rb_err err;
    cr_assert_eq(rb_lstsq(Phi, y, NS, P4, 1, est, &rss, &err), RB_OK, "%s", err.msg);
    cr_assert(max_rel_diff(est, theta, 4) < 1e-12, "%.17g %.17g %.17g %.17g", est[0], est[1], est[2], est[3]);
    cr_assert(rss < 1e-24, "rss %g", rss);
}

Test(filters_rls, batch_rss_is_the_residual_sum_of_squares)
{
    static double Phi[NS * P4], y[NS];
    const double theta[4] = {0.31, 0.67, -0.05, 0.02};
    make_data(Phi, y, theta, 0.01, 2);
    double est[4], rss, direct = 0;
    rb_err err;
    cr_assert_eq(rb_lstsq(Phi, y, NS, P4, 1, est, &rss, &err), RB_OK, "%s", err.msg);
    for (int k = 0; k < NS; k++) {
        double r = y[k];
        for (int j = 0; j < P4; j++)
            r -= Phi[k * P4 + j] * est[j];
        direct += r * r;
    }
    cr_assert(fabs(rss - direct) <= 1e-10 * direct, "%.17g vs %.17g", rss, direct);
    /* the noise is 0.01: the residual variance is close to 1e-4 and theta within a few standard errors */
    cr_assert(fabs(rss / (NS - P4) / 1e-4 - 1) < 0.1, "residual variance %g", rss / (NS - P4));
    cr_assert(max_rel_diff(est, theta, 4) < 0.02);
}

/* RLS without forgetting, started from a batch solve of the first 100 samples (theta_0 = their solution,
 * P_0 = (Phi^T Phi)^-1), equals the batch solution of all samples: the recursion is exact algebra, so only
 * rounding separates them (relative 1e-9 asked; seen ~1e-13). */
Test(filters_rls, without_forgetting_equals_batch_least_squares)
{
    static double Phi[NS * P4], y[NS];
    const double theta[4] = {0.31, 0.67, -0.05, 0.02};
    make_data(Phi, y, theta, 0.05, 3);
    rb_rls *rls;
    rb_err err;
    rb_rls_opts o = {.p = 4, .m = 1, .lambda = 1.0};
    cr_assert_eq(rb_rls_create(&o, &rls, &err), RB_OK, "%s", err.msg);
    const size_t n0 = 100;
    cr_assert_eq(rb_rls_init_batch(rls, Phi, y, n0, &err), RB_OK, "%s", err.msg);
    for (size_t k = n0; k < NS; k++) {
        cr_assert_eq(rb_rls_update(rls, Phi + k * P4, &y[k], &err), RB_OK, "%s", err.msg);
        if (k == 999 || k == NS - 1) {
            double batch[4];
            cr_assert_eq(rb_lstsq(Phi, y, k + 1, P4, 1, batch, NULL, &err), RB_OK);
            double d = max_rel_diff(rb_rls_theta(rls), batch, 4);
            cr_log_info("RLS vs batch after %zu samples: relative difference %.3g", k + 1, d);
            cr_assert(d <= 1e-9, "after %zu samples: %.3g", k + 1, d);
        }
    }
    /* P is (Phi^T Phi)^-1 of every sample: P (Phi^T Phi) = I */
    double G[16] = {0}, I_err = 0;
    for (int k = 0; k < NS; k++)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                G[i * 4 + j] += Phi[k * 4 + i] * Phi[k * 4 + j];
    const double *P = rb_rls_P(rls);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double s = 0;
            for (int l = 0; l < 4; l++)
                s += P[i * 4 + l] * G[l * 4 + j];
            I_err = fmax(I_err, fabs(s - (i == j)));
        }
    cr_assert(I_err < 1e-9, "P Phi^T Phi - I: %.3g", I_err);
    rb_rls_free(rls);
}

/* Started from P_0 = delta I, theta_0 (no batch), RLS minimizes |Y - Phi theta|^2 + |theta - theta_0|^2 /
 * delta exactly: the batch solution of the data augmented with rows I / sqrt(delta) -> theta_0 / sqrt(delta).
 * The prior's pull on theta is (Phi^T Phi + I / delta)^-1 (theta_0 - theta_LS) / delta: with delta = 1e6 and
 * Phi^T Phi ~ 1e3 here it moves theta by a few 1e-9 relative (seen 5e-9): invisible at 1e-6, not at 1e-10. */
Test(filters_rls, large_initial_covariance_is_a_ridge_prior)
{
    static double Phi[(NS + 4) * P4], y[NS + 4];
    const double theta[4] = {0.31, 0.67, -0.05, 0.02}, theta0[4] = {1, 1, 1, 1}, delta = 1e6;
    make_data(Phi, y, theta, 0.05, 4);
    rb_rls *rls;
    rb_err err;
    rb_rls_opts o = {.p = 4, .m = 1, .theta0 = theta0, .delta = delta};
    cr_assert_eq(rb_rls_create(&o, &rls, &err), RB_OK, "%s", err.msg);
    for (int k = 0; k < NS; k++)
        cr_assert_eq(rb_rls_update(rls, Phi + k * P4, &y[k], &err), RB_OK, "%s", err.msg);
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++)
            Phi[(NS + i) * P4 + j] = (i == j) / sqrt(delta);
        y[NS + i] = theta0[i] / sqrt(delta);
    }
    double ridge[4], plain[4];
    cr_assert_eq(rb_lstsq(Phi, y, NS + 4, P4, 1, ridge, NULL, &err), RB_OK);
    cr_assert_eq(rb_lstsq(Phi, y, NS, P4, 1, plain, NULL, &err), RB_OK);
    double d_ridge = max_rel_diff(rb_rls_theta(rls), ridge, 4), d_plain = max_rel_diff(rb_rls_theta(rls), plain, 4);
    cr_log_info("RLS (P0 = 1e6 I) vs ridge batch %.3g, vs plain batch %.3g", d_ridge, d_plain);
    cr_assert(d_ridge <= 1e-9, "%.3g", d_ridge);
    cr_assert(d_plain <= 1e-6, "the prior's effect is small: %.3g", d_plain);
    cr_assert(d_plain > 10 * d_ridge, "but it is there: %.3g vs %.3g", d_plain, d_ridge);
    rb_rls_free(rls);
}

/* A friction parameter step at sample 1000 (Fc 0.3 -> 0.5, Fv 0.7 -> 0.4). With lambda = 0.99 (memory
 * ~ 1 / (1 - lambda) = 100 samples) the estimate settles within 2 % of the new values by 600 samples after
 * the step (6 memories; the decay is lambda^k = 0.0024 of the jump plus the noise, sigma 0.01); without
 * forgetting it is still far off (it weighs the 1000 old samples against the new ones). */
Test(filters_rls, forgetting_tracks_a_step_change)
{
    rb_rls *fast, *slow;
    rb_err err;
    rb_rls_opts o = {.p = 4, .m = 1, .lambda = 0.99, .delta = 1e4};
    cr_assert_eq(rb_rls_create(&o, &fast, &err), RB_OK, "%s", err.msg);
    o.lambda = 1.0;
    cr_assert_eq(rb_rls_create(&o, &slow, &err), RB_OK, "%s", err.msg);
    const double before[4] = {0.3, 0.7, 0.0, 0.01}, after[4] = {0.5, 0.4, 0.0, 0.01};
    rb_rng rng;
    rb_rng_seed(&rng, 9);
    long settled = -1;
    for (int k = 0; k < 3000; k++) {
        double phi[4], y = 0.01 * rb_rng_normal(&rng);
        friction_regressor(k, phi);
        const double *th = k < 1000 ? before : after;
        for (int j = 0; j < 4; j++)
            y += phi[j] * th[j];
        rb_alloc_fail_after(0); /* an update allocates nothing */
        int rc = rb_rls_update(fast, phi, &y, &err);
        long allocs = rb_alloc_fail_after(-1);
        cr_assert_eq(rc, RB_OK, "%s", err.msg);
        cr_assert_eq(allocs, 0);
        cr_assert_eq(rb_rls_update(slow, phi, &y, &err), RB_OK, "%s", err.msg);
        if (k == 999)
            cr_assert(fabs(rb_rls_theta(fast)[0] - 0.3) < 0.006 && fabs(rb_rls_theta(fast)[1] - 0.7) < 0.014,
                      "converged before the step");
        if (k >= 1000) {
            const double *f = rb_rls_theta(fast);
            bool in = fabs(f[0] - 0.5) <= 0.02 * 0.5 && fabs(f[1] - 0.4) <= 0.02 * 0.4;
            if (in && settled < 0)
                settled = k - 1000;
            if (!in)
                settled = -1;
        }
        if (k == 1600) {
            const double *f = rb_rls_theta(fast), *s = rb_rls_theta(slow);
            cr_assert(fabs(f[0] - 0.5) <= 0.01 && fabs(f[1] - 0.4) <= 0.008, "lambda 0.99: Fc %.4f Fv %.4f", f[0],
                      f[1]);
            cr_assert(fabs(s[0] - 0.5) > 0.05, "lambda 1 lags: Fc %.4f", s[0]);
        }
    }
    cr_log_info("lambda 0.99: within 2 %% of the new parameters from %ld samples after the step", settled);
    cr_assert(settled >= 0 && settled <= 600, "settled after %ld samples", settled);
    rb_rls_free(fast);
    rb_rls_free(slow);
}

/* Two outputs sharing theta through different regressors (calibration-like: y = Phi^T theta, Phi 3 x 2):
 * the recursion equals the stacked batch solution. */
Test(filters_rls, multi_output_equals_stacked_batch)
{
    enum { N = 400, P = 3, M = 2 };
    static double Phi[N * P * M], y[N * M];
    const double theta[3] = {2.0, -1.0, 0.5};
    rb_rng rng;
    rb_rng_seed(&rng, 21);
    for (int k = 0; k < N; k++)
        for (int i = 0; i < M; i++) {
            y[k * M + i] = 0.1 * rb_rng_normal(&rng);
            for (int j = 0; j < P; j++) {
                double v = rb_rng_normal(&rng);
                Phi[(k * P + j) * M + i] = v; /* row j, column i of Phi_k */
                y[k * M + i] += v * theta[j];
            }
        }
    rb_rls *rls;
    rb_err err;
    rb_rls_opts o = {.p = P, .m = M};
    cr_assert_eq(rb_rls_create(&o, &rls, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_rls_init_batch(rls, Phi, y, 5, &err), RB_OK, "%s", err.msg);
    for (int k = 5; k < N; k++)
        cr_assert_eq(rb_rls_update(rls, Phi + k * P * M, y + k * M, &err), RB_OK, "%s", err.msg);
    double batch[3];
    cr_assert_eq(rb_lstsq(Phi, y, N, P, M, batch, NULL, &err), RB_OK, "%s", err.msg);
    cr_assert(max_rel_diff(rb_rls_theta(rls), batch, 3) <= 1e-9);
    cr_assert(max_rel_diff(batch, theta, 3) < 0.02);
    rb_rls_free(rls);
}

Test(filters_rls, a_missing_output_is_an_update_with_the_other_one)
{
    rb_rls *two, *one;
    rb_err err;
    rb_rls_opts o2 = {.p = 2, .m = 2, .lambda = 0.95}, o1 = {.p = 2, .m = 1, .lambda = 0.95};
    cr_assert_eq(rb_rls_create(&o2, &two, &err), RB_OK);
    cr_assert_eq(rb_rls_create(&o1, &one, &err), RB_OK);
    for (int k = 0; k < 50; k++) {
        double a = sin(0.3 * k), b = cos(0.2 * k);
        double Phi2[4] = {a, 9.0, b, -3.0}, Phi1[2] = {a, b}; /* column 0 is the output kept */
        double y2[2] = {1.5 * a - 0.5 * b, k % 3 ? NAN : 4.0}, y1 = y2[0];
        if (k % 3 == 0)
            continue; /* keep the two in step: only samples where output 1 is missing */
        cr_assert_eq(rb_rls_update(two, Phi2, y2, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_rls_update(one, Phi1, &y1, &err), RB_OK, "%s", err.msg);
        cr_assert(isnan(rb_rls_residual(two)[1]));
    }
    cr_assert(max_rel_diff(rb_rls_theta(two), rb_rls_theta(one), 2) < 1e-12);
    cr_assert(fabs(rb_rls_theta(one)[0] - 1.5) < 1e-6 && fabs(rb_rls_theta(one)[1] + 0.5) < 1e-6);
    rb_rls_free(two);
    rb_rls_free(one);
}

Test(filters_rls, failure_paths)
{
    rb_err err;
    rb_rls *rls = (rb_rls *)&rls;
    rb_rls_opts o = {.p = 2, .m = 1, .lambda = 1.5};
    cr_assert_eq(rb_rls_create(&o, &rls, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "forgetting factor"), "%s", err.msg);
    cr_assert_null(rls);
    const double notpd[4] = {1, 2, 2, 1};
    o.lambda = 0.9, o.P0 = notpd;
    cr_assert_eq(rb_rls_create(&o, &rls, &err), RB_ENUMERIC, "%s", err.msg);
    o.P0 = NULL;
    cr_assert_eq(rb_rls_create(&o, &rls, &err), RB_OK, "%s", err.msg);
    double phi[2] = {1, NAN}, y = 1;
    cr_assert_eq(rb_rls_update(rls, phi, &y, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "regressor element (1, 0)"), "%s", err.msg);
    /* rank deficient: two identical columns */
    double Phi[8] = {1, 1, 2, 2, 3, 3, 4, 4}, yy[4] = {1, 2, 3, 4}, th[2];
    cr_assert_eq(rb_lstsq(Phi, yy, 4, 2, 1, th, NULL, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "rank deficient"), "%s", err.msg);
    cr_assert_eq(rb_rls_init_batch(rls, Phi, yy, 4, &err), RB_ENUMERIC);
    cr_assert_eq(rb_lstsq(Phi, yy, 1, 2, 1, th, NULL, &err), RB_EDIM);
    yy[2] = INFINITY;
    Phi[1] = 0;
    cr_assert_eq(rb_lstsq(Phi, yy, 4, 2, 1, th, NULL, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "sample 2"), "%s", err.msg);
    /* a failed update leaves theta and P as they were (lambda < 1 scales P first) */
    double good[2] = {1, 0.5}, y1 = 2;
    cr_assert_eq(rb_rls_update(rls, good, &y1, &err), RB_OK);
    double th0[2] = {rb_rls_theta(rls)[0], rb_rls_theta(rls)[1]}, P0 = rb_rls_P(rls)[0];
    double inf = INFINITY;
    cr_assert_eq(rb_rls_update(rls, good, &inf, &err), RB_ENUMERIC);
    cr_assert_eq(rb_rls_theta(rls)[0], th0[0]);
    cr_assert_eq(rb_rls_theta(rls)[1], th0[1]);
    cr_assert_eq(rb_rls_P(rls)[0], P0);
    rb_rls_free(rls);
}

/* err may be NULL: failures that pass through the "rls: " prefix still return their code. */
Test(filters_rls, failures_keep_their_code_when_err_is_null)
{
    rb_rls_opts o = {.p = 2, .m = 1, .lambda = 0.9};
    rb_rls *rls;
    rb_err err;
    cr_assert_eq(rb_rls_create(&o, &rls, &err), RB_OK, "%s", err.msg);
    double good[2] = {1, 0.5}, inf = INFINITY;
    cr_assert_eq(rb_rls_update(rls, good, &inf, &err), RB_ENUMERIC);
    cr_assert(strncmp(err.msg, "rls: ", 5) == 0, "%s", err.msg);
    cr_assert_eq(rb_rls_update(rls, good, &inf, NULL), RB_ENUMERIC);
    double Phi[8] = {1, 1, 2, 2, 3, 3, 4, 4}, yy[4] = {1, 2, 3, 4}; /* rank deficient */
    cr_assert_eq(rb_rls_init_batch(rls, Phi, yy, 4, &err), RB_ENUMERIC);
    cr_assert(strncmp(err.msg, "rls: ", 5) == 0, "%s", err.msg);
    cr_assert_eq(rb_rls_init_batch(rls, Phi, yy, 4, NULL), RB_ENUMERIC);
    const double theta[2] = {NAN, 0};
    cr_assert_eq(rb_rls_reset(rls, theta, NULL, &err), RB_ENUMERIC);
    cr_assert(strncmp(err.msg, "rls: ", 5) == 0, "%s", err.msg);
    cr_assert_eq(rb_rls_reset(rls, theta, NULL, NULL), RB_ENUMERIC);
    rb_rls_free(rls);
}

Test(filters_rls, allocation_failures_leave_nothing_behind)
{
    rb_err err;
    int rc = RB_ENOMEM;
    long n;
    rb_rls_opts o = {.p = 3, .m = 2, .lambda = 0.99};
    for (n = 0; n < 100 && rc != RB_OK; n++) {
        rb_rls *rls = NULL;
        rb_alloc_fail_after(n);
        rc = rb_rls_create(&o, &rls, &err);
        rb_alloc_fail_after(-1);
        if (rc == RB_OK)
            rb_rls_free(rls);
        else
            cr_assert(rc == RB_ENOMEM && rls == NULL, "allocation %ld: %d %s", n, rc, err.msg);
    }
    cr_assert_eq(rc, RB_OK);
    double Phi[8] = {1, 0, 2, 1, 0, 3, 1, 1}, y[4] = {1, 2, 3, 4}, th[2];
    rc = RB_ENOMEM;
    for (n = 0; n < 100 && rc != RB_OK; n++) {
        rb_alloc_fail_after(n);
        rc = rb_lstsq(Phi, y, 2, 2, 2, th, NULL, &err);
        rb_alloc_fail_after(-1);
        cr_assert(rc == RB_OK || rc == RB_ENOMEM, "%s", err.msg);
    }
    cr_assert_eq(rc, RB_OK);
}
