/* kf_derivative: the constant-acceleration Kalman filter stage. Its model against the continuous-time
 * integral, exactness on a parabola, bounds on a sinusoid, the comparison with finite differences on noisy
 * data, the stage against the offline run, the pipeline schema, and the tuning of q (the diagnostic outputs
 * and runs in pipelines: test_estimators_kf_diagnostics.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/pipeline.h"
#include "roboest/training.h"
#include "roboest/filters.h"

#include "estimators_kf_support.h"

/* ---- the model ---------------------------------------------------------------------------------- */

/* Q = q int_0^dT e^{A s} G G^T e^{A^T s} ds with A the chain x' = v, v' = a, a' = jerk, G = [0 0 1]^T:
 * e^{A s} G = [s^2/2, s, 1]^T. Simpson's rule on 2000 panels (exact for these polynomials up to rounding). */
Test(estimators_kf, jerk_process_noise_is_the_continuous_time_integral)
{
    const double q = 3.7, dt = 0.013;
    rb_kfd_params par = {.noise = RB_KFD_JERK, .q = q, .r = 1, .p0 = {1, 1, 1}};
    double F[9], Q[9], I[9] = {0};
    rb_kfd_model(&par, dt, F, Q);
    const int N = 2000;
    for (int k = 0; k <= N; k++) {
        double s = dt * k / N, w = (k == 0 || k == N) ? 1 : (k % 2 ? 4 : 2), g[3] = {s * s / 2, s, 1};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                I[i * 3 + j] += w * g[i] * g[j] * dt / (3.0 * N);
    }
    for (int i = 0; i < 9; i++)
        cr_assert(fabs(Q[i] - q * I[i]) <= 1e-12 * fabs(q * I[i]), "Q[%d] %.17g vs %.17g", i, Q[i], q * I[i]);
    const double Fx[9] = {1, dt, dt * dt / 2, 0, 1, dt, 0, 0, 1};
    for (int i = 0; i < 9; i++)
        cr_assert_eq(F[i], Fx[i]);
    par.noise = RB_KFD_DIAGONAL;
    par.q_diag[0] = 1, par.q_diag[1] = 2, par.q_diag[2] = 3;
    rb_kfd_model(&par, dt, F, Q);
    cr_assert(Q[0] == 1 && Q[4] == 2 && Q[8] == 3 && Q[1] == 0 && Q[5] == 0);
}

/* ---- offline runs --------------------------------------------------------------------------------- */

enum { T = 4000 };
static double tt[T], z[T], x[T], v[T], a[T];

/* A parabola is the model's own motion (zero jerk): with no noise the filter locks onto it. After 1 s
 * (1000 samples at 1 kHz; q 1e2, r 1e-10), x, x_dot, x_ddot are exact to 1e-9, 1e-6, 1e-3. */
Test(estimators_kf, recovers_a_parabola)
{
    for (int k = 0; k < T; k++) {
        tt[k] = 2.0 + 0.001 * k;
        z[k] = 0.5 + 2.0 * tt[k] - 3.0 * tt[k] * tt[k];
    }
    rb_kfd_params par = {.noise = RB_KFD_JERK, .q = 1e2, .r = 1e-10, .p0 = {1, 1e2, 1e4}};
    rb_err err;
    cr_assert_eq(rb_kfd_run(&par, tt, z, T, x, v, a, NULL, &err), RB_OK, "%s", err.msg);
    double ex = 0, ev = 0, ea = 0;
    for (int k = 1000; k < T; k++) {
        ex = fmax(ex, fabs(x[k] - z[k]));
        ev = fmax(ev, fabs(v[k] - (2.0 - 6.0 * tt[k])));
        ea = fmax(ea, fabs(a[k] + 6.0));
    }
    cr_log_info("parabola: max errors x %.3g, x_dot %.3g, x_ddot %.3g", ex, ev, ea);
    cr_assert(ex < 1e-9 && ev < 1e-6 && ea < 1e-3, "x %.3g v %.3g a %.3g", ex, ev, ea);
}

/* A cubic has constant jerk j: the filter's steady-state lag is then a constant bias. With q large enough
 * to follow it (1e6, r 1e-10) the velocity and acceleration errors after 1 s stay below 1e-4 and 0.2 for
 * x = t^3 (j = 6). */
Test(estimators_kf, follows_a_cubic_with_a_bounded_lag)
{
    for (int k = 0; k < T; k++) {
        tt[k] = 0.001 * k;
        z[k] = tt[k] * tt[k] * tt[k];
    }
    rb_kfd_params par = {.noise = RB_KFD_JERK, .q = 1e6, .r = 1e-10, .p0 = {1, 1e2, 1e4}};
    rb_err err;
    cr_assert_eq(rb_kfd_run(&par, tt, z, T, x, v, a, NULL, &err), RB_OK, "%s", err.msg);
    double ev = 0, ea = 0;
    for (int k = 1000; k < T; k++) {
        ev = fmax(ev, fabs(v[k] - 3 * tt[k] * tt[k]));
        ea = fmax(ea, fabs(a[k] - 6 * tt[k]));
    }
    cr_log_info("cubic: max errors x_dot %.3g, x_ddot %.3g", ev, ea);
    cr_assert(ev < 1e-4 && ea < 0.2, "v %.3g a %.3g", ev, ea);
}

static double rmse(const double *e, const double *ref, int from, int to)
{
    double s = 0;
    for (int k = from; k < to; k++)
        s += (e[k] - ref[k]) * (e[k] - ref[k]);
    return sqrt(s / (to - from));
}

/* A noisy sinusoid, sin(2 pi 1 Hz t), sigma 1e-3, 1 kHz: the filter (q 1e3, r 1e-6: the velocity-RMSE
 * optimum within a quarter decade) against the backward differences of the same samples, RMSE after 0.5 s:
 *   filter  x_dot 0.051 rad/s, x_ddot 3.9 rad/s^2;
 *   finite_difference order 1: 1.4 rad/s (noise sqrt(2) sigma / h); order 2: ~2400 rad/s^2 (sqrt(6) sigma / h^2).
 * Asserted: filter below 0.06 and 4.5, at least 20x and 300x better than the differences. */
Test(estimators_kf, beats_finite_differences_on_noisy_data)
{
    const double w = 2 * M_PI;
    static double vt[T], at[T], fd1[T], fd2[T];
    rb_rng rng;
    rb_rng_seed(&rng, 42);
    for (int k = 0; k < T; k++) {
        tt[k] = 0.001 * k;
        z[k] = sin(w * tt[k]) + 1e-3 * rb_rng_normal(&rng);
        vt[k] = w * cos(w * tt[k]);
        at[k] = -w * w * sin(w * tt[k]);
    }
    /* the finite-difference stage itself, through its interface */
    rb_param_value ord = {.number = 1};
    rb_params params = {&rb_stage_finite_difference, &ord};
    rb_port in = {1, NULL, NULL}, out = {0};
    rb_stage_setup setup = {"fd", &params, &in, &out, 0.001, T, tt, NULL, "."};
    void *s1, *s2;
    rb_err err;
    cr_assert_eq(rb_stage_finite_difference.create(&setup, &s1, &err), RB_OK);
    ord.number = 2;
    cr_assert_eq(rb_stage_finite_difference.create(&setup, &s2, &err), RB_OK);
    for (int k = 0; k < T; k++) {
        const double *pin[1] = {&z[k]};
        double *p1[1] = {&fd1[k]}, *p2[1] = {&fd2[k]};
        cr_assert_eq(rb_stage_finite_difference.step(s1, (size_t)k, tt[k], pin, p1, &err), RB_OK);
        cr_assert_eq(rb_stage_finite_difference.step(s2, (size_t)k, tt[k], pin, p2, &err), RB_OK);
    }
    rb_stage_finite_difference.destroy(s1);
    rb_stage_finite_difference.destroy(s2);

    rb_kfd_params par = {.noise = RB_KFD_JERK, .q = 1e3, .r = 1e-6, .p0 = {1, 1e2, 1e4}};
    cr_assert_eq(rb_kfd_run(&par, tt, z, T, x, v, a, NULL, &err), RB_OK, "%s", err.msg);
    double kv = rmse(v, vt, 500, T), ka = rmse(a, at, 500, T), dv = rmse(fd1, vt, 500, T), da = rmse(fd2, at, 500, T);
    cr_log_info("noisy sinusoid RMSE: kf x_dot %.4g x_ddot %.4g; finite differences %.4g, %.4g", kv, ka, dv, da);
    cr_assert(kv < 0.06, "kf velocity RMSE %.4g", kv);
    cr_assert(ka < 4.5, "kf acceleration RMSE %.4g", ka);
    cr_assert(kv < dv / 20, "kf %.4g vs first difference %.4g", kv, dv);
    cr_assert(ka < da / 300, "kf %.4g vs second difference %.4g", ka, da);
    /* and the filtered position is closer to the truth than the measurement */
    double xe = 0, ze = 0;
    for (int k = 500; k < T; k++) {
        xe += pow(x[k] - sin(w * tt[k]), 2);
        ze += pow(z[k] - sin(w * tt[k]), 2);
    }
    cr_assert(xe < ze / 4, "filtered position %.3g vs raw %.3g", sqrt(xe / (T - 500)), sqrt(ze / (T - 500)));
}

/* The noise-free sinusoid of the same frequency: the only error is the model's, a jerk the filter treats as
 * noise. With q 1e8, r 1e-10 (the filter nearly interpolates the last samples) the error is below 1e-4 rad/s
 * and 0.2 rad/s^2; the acceleration's floor is the three-point fit's truncation, about h max|x'''| = 0.25. */
Test(estimators_kf, recovers_a_clean_sinusoid)
{
    const double w = 2 * M_PI;
    for (int k = 0; k < T; k++) {
        tt[k] = 0.001 * k;
        z[k] = sin(w * tt[k]);
    }
    rb_kfd_params par = {.noise = RB_KFD_JERK, .q = 1e8, .r = 1e-10, .p0 = {1, 1e2, 1e4}};
    rb_err err;
    cr_assert_eq(rb_kfd_run(&par, tt, z, T, x, v, a, NULL, &err), RB_OK, "%s", err.msg);
    double ev = 0, ea = 0;
    for (int k = 500; k < T; k++) {
        ev = fmax(ev, fabs(v[k] - w * cos(w * tt[k])));
        ea = fmax(ea, fabs(a[k] + w * w * sin(w * tt[k])));
    }
    cr_log_info("clean sinusoid: max errors x_dot %.3g, x_ddot %.3g", ev, ea);
    cr_assert(ev < 1e-4 && ea < 0.2, "v %.3g a %.3g", ev, ea);
}

Test(estimators_kf, missing_samples_are_predicted_and_jitter_is_followed)
{
    /* a parabola on a jittered clock with a NaN sample: the prediction over the gap is exact for it */
    for (int k = 0; k < 2000; k++) {
        tt[k] = 0.001 * k + 0.0003 * sin(1.7 * k);
        z[k] = 1.0 - 0.5 * tt[k] + 2.0 * tt[k] * tt[k];
    }
    z[1500] = NAN;
    double pred[2000];
    rb_kfd_params par = {.noise = RB_KFD_JERK, .q = 1e2, .r = 1e-10, .p0 = {1, 1e2, 1e4}};
    rb_err err;
    cr_assert_eq(rb_kfd_run(&par, tt, z, 2000, x, v, a, pred, &err), RB_OK, "%s", err.msg);
    cr_assert(isnan(pred[0]) && isnan(pred[1500]));
    cr_assert(fabs(x[1500] - (1.0 - 0.5 * tt[1500] + 2.0 * tt[1500] * tt[1500])) < 1e-8);
    cr_assert(fabs(v[1999] - (-0.5 + 4.0 * tt[1999])) < 1e-6, "x_dot %.17g", v[1999]);
    cr_assert(fabs(a[1999] - 4.0) < 1e-3);
    tt[10] = tt[9];
    cr_assert_eq(rb_kfd_run(&par, tt, z, 2000, x, v, a, pred, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "sample 10"), "%s", err.msg);
}

/* ---- the stage --------------------------------------------------------------------------------------- */

int stage_create(stage_h *h, const char *model, const double *q, size_t nq, const double *qd, bool qd_given,
                 const double *r, size_t nr, size_t width, const char *const *names, const char *const *units,
                 rb_err *err)
{
    static const double p0[3] = {1, 1e2, 1e4};
    memset(h, 0, sizeof *h);
    cr_assert_str_eq(rb_stage_kf_derivative.params[0].name, "process_noise");
    cr_assert_str_eq(rb_stage_kf_derivative.params[4].name, "p0");
    cr_assert_eq(rb_stage_kf_derivative.n_outputs, N_OUT);
    cr_assert_str_eq(rb_stage_kf_derivative.outputs[OUT_VAR], "var");
    h->values[0] = (rb_param_value){.string = (char *)model};
    h->values[1] = (rb_param_value){.given = nq > 0, .count = nq ? nq : 1, .numbers = (double *)(nq ? q : p0)};
    h->values[2] = (rb_param_value){.given = qd_given, .count = 3, .numbers = (double *)qd};
    h->values[3] = (rb_param_value){.count = nr, .numbers = (double *)r};
    h->values[4] = (rb_param_value){.count = 3, .numbers = (double *)p0};
    h->params = (rb_params){&rb_stage_kf_derivative, h->values};
    h->in = (rb_port){width, names, units};
    rb_stage_setup setup = {"kfd", &h->params, &h->in, h->out, 0.001, 0, NULL, NULL, "."};
    return rb_stage_kf_derivative.create(&setup, &h->state, err);
}

Test(estimators_kf, stage_equals_the_offline_run_per_element)
{
    const char *names[] = {"r_knee", "r_ankle"}, *units[] = {"rad", "rad"};
    const double q[2] = {50, 2e3}, r[1] = {1e-6}, qd[3] = {0, 0, 0};
    stage_h h;
    rb_err err;
    cr_assert_eq(stage_create(&h, "jerk", q, 2, qd, false, r, 1, 2, names, units, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(h.out[0].width, 2);
    cr_assert_str_eq(h.out[1].names[1], "r_ankle");
    cr_assert_str_eq(h.out[0].units[0], "rad");
    cr_assert_str_eq(h.out[1].units[0], "rad/s");
    cr_assert_str_eq(h.out[2].units[1], "rad/s^2");
    enum { N = 1500 };
    static double zz[2][N], ref[2][3][N];
    rb_rng rng;
    rb_rng_seed(&rng, 3);
    for (int k = 0; k < N; k++) {
        tt[k] = 0.001 * k;
        zz[0][k] = sin(3 * tt[k]) + 1e-3 * rb_rng_normal(&rng);
        zz[1][k] = tt[k] * tt[k] + 1e-3 * rb_rng_normal(&rng);
    }
    for (int e = 0; e < 2; e++) {
        rb_kfd_params par = {.noise = RB_KFD_JERK, .q = q[e], .r = 1e-6, .p0 = {1, 1e2, 1e4}};
        cr_assert_eq(rb_kfd_run(&par, tt, zz[e], N, ref[e][0], ref[e][1], ref[e][2], NULL, &err), RB_OK);
    }
    for (int k = 0; k < N; k++) {
        double in[2] = {zz[0][k], zz[1][k]}, o[5][2], var[6];
        const double *pin[1] = {in};
        double *pout[N_OUT] = {o[0], o[1], o[2], o[3], o[4], var};
        rb_alloc_fail_after(0); /* step allocates nothing (through rb_malloc; LAPACK/CBLAS calls are _work / BLAS) */
        int rc = rb_stage_kf_derivative.step(h.state, (size_t)k, tt[k], pin, pout, &err);
        long allocs = rb_alloc_fail_after(-1);
        cr_assert_eq(rc, RB_OK, "%s", err.msg);
        cr_assert_eq(allocs, 0);
        for (int e = 0; e < 2; e++)
            for (int j = 0; j < 3; j++)
                cr_assert_eq(o[j][e], ref[e][j][k], "k %d element %d output %d", k, e, j);
    }
    rb_stage_kf_derivative.destroy(h.state);
}

Test(estimators_kf, stage_diagonal_process_noise)
{
    const double r[1] = {1e-6}, qd[3] = {0, 0, 1e-6}, none[1] = {0};
    stage_h h;
    rb_err err;
    cr_assert_eq(stage_create(&h, "diagonal", none, 0, qd, true, r, 1, 1, NULL, NULL, &err), RB_OK, "%s", err.msg);
    cr_assert_str_eq(h.out[1].units[0], "", "unknown unit stays unknown");
    double o[5], var[3];
    for (int k = 0; k < 3000; k++) {
        double t = 0.001 * k, in = 2.0 * t * t;
        const double *pin[1] = {&in};
        double *pout[N_OUT] = {&o[0], &o[1], &o[2], &o[3], &o[4], var};
        cr_assert_eq(rb_stage_kf_derivative.step(h.state, (size_t)k, t, pin, pout, &err), RB_OK);
    }
    cr_assert(fabs(o[1] - 4.0 * 2.999) < 1e-4 && fabs(o[2] - 4.0) < 1e-2, "x_dot %.9g x_ddot %.9g", o[1], o[2]);
    rb_stage_kf_derivative.destroy(h.state);
}

Test(estimators_kf, stage_rejects_parameters_that_do_not_fit)
{
    const double q3[3] = {1, 2, 3}, r[1] = {1e-6}, qd[3] = {0, 0, 1};
    stage_h h;
    rb_err err;
    cr_assert_eq(stage_create(&h, "jerk", q3, 3, qd, false, r, 1, 2, NULL, NULL, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "stage kfd: q has 3 values for 2 elements"), "%s", err.msg);
    cr_assert_eq(stage_create(&h, "diagonal", q3, 0, qd, false, r, 1, 2, NULL, NULL, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "needs q_diag"), "%s", err.msg);
    cr_assert_eq(stage_create(&h, "diagonal", q3, 1, qd, true, r, 1, 2, NULL, NULL, &err), RB_ECONFIG);
    cr_assert_eq(stage_create(&h, "jerk", q3, 1, qd, true, r, 1, 2, NULL, NULL, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "q_diag needs"), "%s", err.msg);
    cr_assert_null(h.state);
}

/* ---- tuning ------------------------------------------------------------------------------------------ */

/* A noisy sinusoid (0.5 Hz, amplitude 1, sigma 1e-3, 1 kHz, 10 s) with its true velocity. */
static void tune_data(double *t, double *zz, double *vt, size_t n, uint64_t seed)
{
    rb_rng rng;
    rb_rng_seed(&rng, seed);
    const double w = 2 * M_PI * 0.5;
    for (size_t k = 0; k < n; k++) {
        t[k] = 0.001 * (double)k;
        zz[k] = sin(w * t[k]) + 1e-3 * rb_rng_normal(&rng);
        vt[k] = w * cos(w * t[k]);
    }
}

static double velocity_rmse(double q, const double *t, const double *zz, const double *vt, size_t n, double r)
{
    rb_kfd_params par = {.noise = RB_KFD_JERK, .q = q, .r = r, .p0 = {1, 1e2, 1e4}};
    double *vv = malloc(n * sizeof *vv);
    rb_err err;
    cr_assert_eq(rb_kfd_run(&par, t, zz, n, NULL, vv, NULL, NULL, &err), RB_OK);
    double s = 0;
    size_t from = n / 10;
    for (size_t k = from; k < n; k++)
        s += (vv[k] - vt[k]) * (vv[k] - vt[k]);
    free(vv);
    return sqrt(s / (double)(n - from));
}

Test(estimators_kf, tuning_finds_the_velocity_rmse_minimum)
{
    enum { N = 10001 };
    static double t[N], zz[N], vt[N];
    tune_data(t, zz, vt, N, 77);
    rb_kfd_tune_opts o;
    rb_kfd_tune_opts_init(&o);
    rb_kfd_tune_result ref, pem, again;
    rb_err err;
    cr_assert_eq(rb_kfd_tune(t, zz, vt, N, &o, &ref, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_kfd_tune(t, zz, NULL, N, &o, &pem, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_kfd_tune(t, zz, vt, N, &o, &again, &err), RB_OK, "%s", err.msg);
    cr_assert(ref.q == again.q && ref.criterion == again.criterion, "deterministic");
    cr_assert(ref.with_reference && !pem.with_reference);
    cr_assert(fabs(ref.r / 1e-6 - 1) < 0.05, "r estimated from third differences: %g", ref.r);
    cr_assert_eq(ref.n_scored, N - 1000, "10 %% warm-up");
    cr_assert(!ref.at_bound && !pem.at_bound);
    double J = velocity_rmse(ref.q, t, zz, vt, N, ref.r);
    cr_assert(fabs(J - ref.criterion) <= 1e-12 * J, "criterion is the velocity RMSE at q: %.17g vs %.17g", J,
              ref.criterion);
    /* a local minimum in log10 q, to the search's resolution */
    for (int i = -2; i <= 2; i++) {
        if (i == 0)
            continue;
        double Ji = velocity_rmse(ref.q * pow(10.0, 0.1 * i), t, zz, vt, N, ref.r);
        cr_assert(Ji >= J * (1 - 1e-3), "q x 10^%.1f: %.6g < %.6g", 0.1 * i, Ji, J);
    }
    double J_pem = velocity_rmse(pem.q, t, zz, vt, N, pem.r);
    cr_log_info("tuned q: reference %.4g (velocity RMSE %.4g), prediction error %.4g (velocity RMSE %.4g), "
                "%zu evaluations",
                ref.q, J, pem.q, J_pem, ref.evaluations);
    cr_assert(fabs(log10(pem.q / ref.q)) < 0.5, "prediction-error q %.4g vs reference q %.4g", pem.q, ref.q);
    cr_assert(J_pem < 1.1 * J, "velocity RMSE at the prediction-error q %.4g vs %.4g", J_pem, J);
    cr_assert(velocity_rmse(100 * ref.q, t, zz, vt, N, ref.r) > 1.5 * J);
    cr_assert(velocity_rmse(ref.q / 100, t, zz, vt, N, ref.r) > 1.5 * J);
}

Test(estimators_kf, tuning_failure_paths)
{
    enum { N = 100 };
    double t[N], zz[N];
    for (int k = 0; k < N; k++)
        t[k] = 0.01 * k, zz[k] = 2.0;
    rb_kfd_tune_opts o;
    rb_kfd_tune_opts_init(&o);
    rb_kfd_tune_result res;
    rb_err err;
    cr_assert_eq(rb_kfd_tune(t, zz, NULL, N, &o, &res, &err), RB_ENUMERIC, "a constant has no noise to measure");
    cr_assert(strstr(err.msg, "give r"), "%s", err.msg);
    o.r = 1e-6;
    cr_assert_eq(rb_kfd_tune(t, zz, NULL, N, &o, &res, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_kfd_tune(t, zz, NULL, 5, &o, &res, &err), RB_EINPUT);
    o.q_min = 10, o.q_max = 1;
    cr_assert_eq(rb_kfd_tune(t, zz, NULL, N, &o, &res, &err), RB_EINVAL);
    o.q_min = o.q_max = 0;
    o.warmup = 100;
    cr_assert_eq(rb_kfd_tune(t, zz, NULL, N, &o, &res, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "no sample to score"), "%s", err.msg);
    o.warmup = -1;
    t[50] = t[49];
    cr_assert_eq(rb_kfd_tune(t, zz, NULL, N, &o, &res, &err), RB_EINPUT);
}

Test(estimators_kf, allocation_failures_leave_nothing_behind)
{
    const char *names[] = {"a", "b"}, *units[] = {"rad", ""};
    const double q[1] = {1e3}, r[1] = {1e-6}, qd[3] = {0, 0, 0};
    rb_err err;
    int rc = RB_ENOMEM;
    long n;
    for (n = 0; n < 100 && rc != RB_OK; n++) {
        stage_h h;
        rb_alloc_fail_after(n);
        rc = stage_create(&h, "jerk", q, 1, qd, false, r, 1, 2, names, units, &err);
        rb_alloc_fail_after(-1);
        if (rc == RB_OK)
            rb_stage_kf_derivative.destroy(h.state);
        else
            cr_assert(rc == RB_ENOMEM && h.state == NULL, "allocation %ld: %d %s", n, rc, err.msg);
    }
    cr_assert_eq(rc, RB_OK, "create succeeds once allocations do");
    cr_assert(n > 3, "several allocations were exercised (%ld)", n);
}
