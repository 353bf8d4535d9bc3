/* Consistency of the EKF and UKF on a nonlinear benchmark with known truth: the pendulum of
 * S. Sarkka, "Bayesian Filtering and Smoothing" (2013), ex. 3.7 / 5.1:
 *   x = [alpha, omega],  x_k = [alpha + omega dt; omega - g sin(alpha) dt] + q,
 *   Q = qc [[dt^3/3, dt^2/2], [dt^2/2, dt]],  z_k = sin(alpha_k) + r,  r ~ N(0, R).
 * with dt 0.01, qc 0.01, R 0.01, x0 ~ N([1.5, 0], 0.01 I) (a large swing, so the nonlinearity
 * matters). The truth is simulated from the same discrete model (seeded rb_rng), so a consistent
 * filter has NEES ~ chi2(n = 2) and NIS ~ chi2(m = 1). Over M = 100 Monte Carlo runs of 500 steps,
 * M times the run-averaged NEES (NIS) at step k is chi2(M n) (chi2(M m)). Checked, with two-sided
 * 95 % bounds from rb_chi2_quantile (itself checked against scipy):
 *   - NIS: innovations of a consistent filter are white, so the run-averaged NIS must lie inside its
 *     bounds at >= 90 % of the steps (95 % expected; binomial spread about 1 %), and the grand mean
 *     over all M x 500 values inside the chi2(M 500 m) / (M 500) bounds;
 *   - NEES: estimation errors are correlated over many steps, so the fraction of steps inside the
 *     bounds is itself noisy (68 % to 100 % over 40 seeds for both filters; 95 % expected); the test
 *     asks that the time average of the run-averaged NEES lies inside the per-step chi2(M n) / M bounds
 *     (conservative: averaging correlated steps can only narrow the spread), and reports the fraction.
 * A negative control (the filter told R / 4, an overconfident filter) must fail the NIS check. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "roboest/core.h"
#include "roboest/filters.h"

#define PEND_DT 0.01
#define PEND_G 9.81

typedef struct pendulum {
    double qc;
} pendulum;

static int pend_f(void *user, const double *x, const double *u, double dt, double *out, rb_err *err)
{
    (void)user;
    (void)u;
    (void)err;
    out[0] = x[0] + x[1] * dt;
    out[1] = x[1] - PEND_G * sin(x[0]) * dt;
    return RB_OK;
}

static int pend_jf(void *user, const double *x, const double *u, double dt, double *F, rb_err *err)
{
    (void)user;
    (void)u;
    (void)err;
    F[0] = 1;
    F[1] = dt;
    F[2] = -PEND_G * cos(x[0]) * dt;
    F[3] = 1;
    return RB_OK;
}

static int pend_h(void *user, const double *x, double *z, rb_err *err)
{
    (void)user;
    (void)err;
    z[0] = sin(x[0]);
    return RB_OK;
}

static int pend_jh(void *user, const double *x, double *H, rb_err *err)
{
    (void)user;
    (void)err;
    H[0] = cos(x[0]);
    H[1] = 0;
    return RB_OK;
}

typedef struct consistency {
    double in_nees, in_nis; /* fraction of steps inside the bounds */
    double mean_nees, mean_nis;
    double lo_nees, hi_nees, lo_nis, hi_nis; /* per-step bounds of the run averages */
    double lo_grand_nis, hi_grand_nis;       /* bounds of the mean over all runs and steps */
} consistency;

enum { RUNS = 100, STEPS = 500 };

static consistency run_pendulum(rb_filter_kind kind, uint64_t seed, double r_told_factor)
{
    const double qc = 0.01, R = 0.01, dt = PEND_DT, R_told = R * r_told_factor;
    double Q[4] = {qc * dt * dt * dt / 3, qc * dt * dt / 2, qc * dt * dt / 2, qc * dt};
    double Lq[3]; /* Cholesky of Q: [l00 0; l10 l11] */
    Lq[0] = sqrt(Q[0]);
    Lq[1] = Q[2] / Lq[0];
    Lq[2] = sqrt(Q[3] - Lq[1] * Lq[1]);
    double m0[2] = {1.5, 0.0}, P0[4] = {0.01, 0, 0, 0.01};
    static double nees_sum[STEPS], nis_sum[STEPS];
    memset(nees_sum, 0, sizeof nees_sum);
    memset(nis_sum, 0, sizeof nis_sum);
    rb_rng rng;
    rb_rng_seed(&rng, seed);
    for (int r = 0; r < RUNS; r++) {
        rb_filter_opts o;
        rb_filter_opts_init(&o);
        o.n = 2;
        o.m = 1;
        o.x0 = m0;
        o.P0 = P0;
        o.Q = Q;
        o.R = &R_told;
        o.f = pend_f;
        o.h = pend_h;
        o.jac_f = pend_jf;
        o.jac_h = pend_jh;
        rb_filter *f;
        rb_err err;
        int rc = kind == RB_FILTER_EKF ? rb_ekf_create(&o, &f, &err) : rb_ukf_create(&o, &f, &err);
        cr_assert_eq(rc, RB_OK, "%s", err.msg);
        /* Truth starts from N(m0, P0). */
        double x[2] = {m0[0] + 0.1 * rb_rng_normal(&rng), m0[1] + 0.1 * rb_rng_normal(&rng)};
        for (int k = 0; k < STEPS; k++) {
            double xn[2];
            pend_f(NULL, x, NULL, dt, xn, NULL);
            double e0 = rb_rng_normal(&rng), e1 = rb_rng_normal(&rng);
            x[0] = xn[0] + Lq[0] * e0;
            x[1] = xn[1] + Lq[1] * e0 + Lq[2] * e1;
            double z = sin(x[0]) + sqrt(R) * rb_rng_normal(&rng);
            cr_assert_eq(rb_filter_predict(f, NULL, dt, &err), RB_OK, "%s", err.msg);
            cr_assert_eq(rb_filter_update(f, &z, &err), RB_OK, "%s", err.msg);
            rb_filter_diag d;
            rb_filter_get_diag(f, &d);
            double nees;
            cr_assert_eq(rb_filter_nees(f, x, &nees, &err), RB_OK, "%s", err.msg);
            nees_sum[k] += nees;
            nis_sum[k] += d.nis;
        }
        rb_filter_free(f);
    }
    consistency c;
    memset(&c, 0, sizeof c);
    double glo, ghi;
    cr_assert_eq(rb_chi2_quantile(0.025, RUNS * STEPS, &glo, NULL), RB_OK);
    cr_assert_eq(rb_chi2_quantile(0.975, RUNS * STEPS, &ghi, NULL), RB_OK);
    c.lo_grand_nis = glo / (RUNS * STEPS);
    c.hi_grand_nis = ghi / (RUNS * STEPS);
    cr_assert_eq(rb_chi2_quantile(0.025, RUNS * 2, &c.lo_nees, NULL), RB_OK);
    cr_assert_eq(rb_chi2_quantile(0.975, RUNS * 2, &c.hi_nees, NULL), RB_OK);
    cr_assert_eq(rb_chi2_quantile(0.025, RUNS * 1, &c.lo_nis, NULL), RB_OK);
    cr_assert_eq(rb_chi2_quantile(0.975, RUNS * 1, &c.hi_nis, NULL), RB_OK);
    c.lo_nees /= RUNS;
    c.hi_nees /= RUNS;
    c.lo_nis /= RUNS;
    c.hi_nis /= RUNS;
    int in_nees = 0, in_nis = 0;
    for (int k = 0; k < STEPS; k++) {
        double a = nees_sum[k] / RUNS, b = nis_sum[k] / RUNS;
        in_nees += a >= c.lo_nees && a <= c.hi_nees;
        in_nis += b >= c.lo_nis && b <= c.hi_nis;
        c.mean_nees += a / STEPS;
        c.mean_nis += b / STEPS;
    }
    c.in_nees = (double)in_nees / STEPS;
    c.in_nis = (double)in_nis / STEPS;
    return c;
}

static bool nis_ok(consistency c)
{
    return c.in_nis >= 0.90 && c.mean_nis >= c.lo_grand_nis && c.mean_nis <= c.hi_grand_nis;
}

static void check(const char *name, consistency c)
{
    cr_log_info("%s: ANEES %.3f (per-step bounds %.3f..%.3f, inside at %.1f %% of steps), ANIS %.4f (bounds "
                "%.4f..%.4f; per-step %.3f..%.3f, inside at %.1f %%)",
                name, c.mean_nees, c.lo_nees, c.hi_nees, 100 * c.in_nees, c.mean_nis, c.lo_grand_nis, c.hi_grand_nis,
                c.lo_nis, c.hi_nis, 100 * c.in_nis);
    cr_assert(c.in_nis >= 0.90, "%s: NIS inside its 95 %% bounds at only %.1f %% of steps", name, 100 * c.in_nis);
    cr_assert(nis_ok(c), "%s: ANIS %g outside %g..%g", name, c.mean_nis, c.lo_grand_nis, c.hi_grand_nis);
    cr_assert(c.mean_nees >= c.lo_nees && c.mean_nees <= c.hi_nees, "%s: ANEES %g", name, c.mean_nees);
}

Test(filters_consistency, ekf_pendulum_nees_nis_inside_chi2_bounds)
{
    check("ekf", run_pendulum(RB_FILTER_EKF, 2024, 1.0));
}

Test(filters_consistency, ukf_pendulum_nees_nis_inside_chi2_bounds)
{
    check("ukf", run_pendulum(RB_FILTER_UKF, 2024, 1.0));
}

Test(filters_consistency, overconfident_filter_fails_the_check)
{
    consistency c = run_pendulum(RB_FILTER_UKF, 2024, 0.25);
    cr_log_info("ukf told R/4: ANIS %.3f, per-step inside at %.1f %%", c.mean_nis, 100 * c.in_nis);
    cr_assert(!nis_ok(c));
}

/* The batch callbacks: the same pendulum through f_batch / h_batch (every sigma point at once) gives exactly the
 * UKF of the pointwise callbacks, step by step; the batch sees the sigma points in the documented order. */
static long batch_calls;

static int pend_f_batch(void *user, const double *X, size_t N, const double *u, double dt, double *Y, rb_err *err)
{
    batch_calls++;
    for (size_t j = 0; j < N; j++) {
        int rc = pend_f(user, X + 2 * j, u, dt, Y + 2 * j, err);
        if (rc)
            return rc;
    }
    return RB_OK;
}

static int pend_h_batch(void *user, const double *X, size_t N, double *Z, rb_err *err)
{
    batch_calls++;
    cr_assert_eq(N, 5);
    for (size_t j = 0; j < N; j++)
        pend_h(user, X + 2 * j, Z + j, err);
    return RB_OK;
}

Test(filters_consistency, ukf_batch_callbacks_match_pointwise)
{
    double P0[4] = {0.1, 0.01, 0.01, 0.2}, Q[4] = {1e-5, 0, 0, 1e-4}, R = 1e-3, x0[2] = {0.6, -0.3};
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = 2, o.m = 1, o.P0 = P0, o.Q = Q, o.R = &R, o.x0 = x0;
    o.f = pend_f, o.h = pend_h;
    rb_filter *a, *b;
    rb_err err;
    cr_assert_eq(rb_ukf_create(&o, &a, &err), RB_OK, "%s", err.msg);
    o.f = NULL, o.h = NULL, o.f_batch = pend_f_batch, o.h_batch = pend_h_batch;
    cr_assert_eq(rb_ukf_create(&o, &b, &err), RB_OK, "%s", err.msg);
    batch_calls = 0;
    for (int k = 0; k < 200; k++) {
        double z = sin(0.6 * cos(0.05 * k)) + 1e-3 * sin(7.0 * k);
        cr_assert_eq(rb_filter_predict(a, NULL, PEND_DT, &err), RB_OK);
        cr_assert_eq(rb_filter_predict(b, NULL, PEND_DT, &err), RB_OK);
        cr_assert_eq(rb_filter_update(a, &z, &err), RB_OK);
        cr_assert_eq(rb_filter_update(b, &z, &err), RB_OK);
        cr_assert_arr_eq(rb_filter_x(a), rb_filter_x(b), 2 * sizeof(double), "step %d", k);
        cr_assert_arr_eq(rb_filter_P(a), rb_filter_P(b), 4 * sizeof(double), "step %d", k);
    }
    cr_assert_eq(batch_calls, 400);
    rb_filter_free(a);
    rb_filter_free(b);
    /* neither form of a model: rejected */
    o.f_batch = NULL;
    cr_assert_eq(rb_ukf_create(&o, &b, &err), RB_EINVAL);
}
