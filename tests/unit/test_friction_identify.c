/* Friction identification: recovery of known parameters from noisy samples (stated tolerances below),
 * non-negativity against data that would push parameters negative (checked against closed forms and the
 * KKT conditions of the constrained problem), the v_s search, skipped samples, failure paths. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/filters.h"
#include "roboest/friction.h"

enum { NS = 20000 }; /* 20 s at 1 kHz */

/* Joint velocity of a slow swing with a faster ripple: about ten zero crossings, each passing the Stribeck
 * region (|v| < 0.02 rad/s) in ~80 samples. */
static double velocity(int k)
{
    double t = 1e-3 * k;
    return 0.3 * sin(2 * M_PI * 0.25 * t) + 0.05 * sin(2 * M_PI * 1.3 * t + 0.4);
}

static void make_data(const rb_friction_model *truth, double noise, uint64_t seed, double *v, double *tau)
{
    rb_rng rng;
    rb_rng_seed(&rng, seed);
    for (int k = 0; k < NS; k++) {
        v[k] = velocity(k);
        tau[k] = rb_friction_eval(truth, v[k]) + noise * rb_rng_normal(&rng);
    }
}

static double rel(double a, double b) { return fabs(a - b) / fabs(b); }

static double rmse_of(const rb_friction_model *m, const double *v, const double *tau, int n)
{
    double s = 0;
    for (int k = 0; k < n; k++) {
        double r = tau[k] - rb_friction_eval(m, v[k]);
        s += r * r;
    }
    return sqrt(s / n);
}

static double v[NS], tau[NS];

/* Coulomb + viscous, noise 0.02 N m: F_c and F_v within 1 % (their standard errors are ~0.05 %), RMSE
 * within 5 % of the noise level; with the exact sign and with a smooth sign. */
Test(friction_identify, coulomb_viscous_recovers_parameters)
{
    for (int smooth = 0; smooth < 2; smooth++) {
        rb_friction_model truth = {.kind = RB_FRICTION_CV, .cv = {0.3, 0.6, smooth ? 0.005 : 0}};
        make_data(&truth, 0.02, 11 + smooth, v, tau);
        rb_friction_fit_opts o = {.v_eps = truth.cv.v_eps};
        rb_friction_model fit;
        double rmse;
        rb_err err;
        cr_assert_eq(rb_friction_fit(RB_FRICTION_CV, v, tau, NS, &o, &fit, &rmse, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(fit.kind, RB_FRICTION_CV);
        cr_assert(rel(fit.cv.F_c, 0.3) < 0.01, "F_c %g", fit.cv.F_c);
        cr_assert(rel(fit.cv.F_v, 0.6) < 0.01, "F_v %g", fit.cv.F_v);
        cr_assert_eq(fit.cv.v_eps, truth.cv.v_eps);
        cr_assert(rel(rmse, 0.02) < 0.05, "rmse %g", rmse);
        cr_assert(fabs(rmse - rmse_of(&fit, v, tau, NS)) < 1e-15);
    }
}

/* SCV with the ergoCub r_knee values, noise 0.01 N m. v_s given: F_c, F_s, F_v within 2 %. v_s searched
 * (default bracket [1e-3, 1] max|v|): v_s within 5 %, the others within 3 %. */
Test(friction_identify, scv_recovers_ergocub_r_knee)
{
    rb_friction_model truth;
    cr_assert_eq(rb_friction_preset("ergocub_r_knee", &truth, NULL), RB_OK);
    make_data(&truth, 0.01, 21, v, tau);
    rb_friction_model fit;
    double rmse;
    rb_err err;
    rb_friction_fit_opts fixed = {.v_s = 0.0094};
    cr_assert_eq(rb_friction_fit(RB_FRICTION_SCV, v, tau, NS, &fixed, &fit, &rmse, &err), RB_OK, "%s", err.msg);
    cr_assert(rel(fit.scv.F_c, 0.306) < 0.02, "F_c %g", fit.scv.F_c);
    cr_assert(rel(fit.scv.F_s, 0.601) < 0.02, "F_s %g", fit.scv.F_s);
    cr_assert(rel(fit.scv.F_v, 0.673) < 0.02, "F_v %g", fit.scv.F_v);
    cr_assert_eq(fit.scv.v_s, 0.0094);
    cr_assert(rel(rmse, 0.01) < 0.05, "rmse %g", rmse);

    cr_assert_eq(rb_friction_fit(RB_FRICTION_SCV, v, tau, NS, NULL, &fit, &rmse, &err), RB_OK, "%s", err.msg);
    cr_assert(rel(fit.scv.v_s, 0.0094) < 0.05, "v_s %g", fit.scv.v_s);
    cr_assert(rel(fit.scv.F_c, 0.306) < 0.03, "F_c %g", fit.scv.F_c);
    cr_assert(rel(fit.scv.F_s, 0.601) < 0.03, "F_s %g", fit.scv.F_s);
    cr_assert(rel(fit.scv.F_v, 0.673) < 0.03, "F_v %g", fit.scv.F_v);
    cr_assert(rel(rmse, 0.01) < 0.05, "rmse %g", rmse);
    cr_assert_eq(rb_friction_validate(&fit, NULL), RB_OK);
    /* the search really minimizes: nearby v_s do no better */
    for (double f = 0.9; f <= 1.1; f += 0.01) {
        rb_friction_fit_opts o = {.v_s = fit.scv.v_s * f};
        rb_friction_model other;
        double r2;
        cr_assert_eq(rb_friction_fit(RB_FRICTION_SCV, v, tau, NS, &o, &other, &r2, &err), RB_OK, "%s", err.msg);
        cr_assert(r2 >= rmse * (1 - 1e-9), "v_s %g gives %.12g < %.12g", o.v_s, r2, rmse);
    }
    /* a smooth sign in data and fit */
    truth.scv.v_eps = 0.001;
    make_data(&truth, 0.01, 22, v, tau);
    rb_friction_fit_opts smooth = {.v_eps = 0.001, .v_s_min = 1e-3, .v_s_max = 0.1, .grid = 25};
    cr_assert_eq(rb_friction_fit(RB_FRICTION_SCV, v, tau, NS, &smooth, &fit, &rmse, &err), RB_OK, "%s", err.msg);
    cr_assert(rel(fit.scv.v_s, 0.0094) < 0.05, "v_s %g", fit.scv.v_s);
    cr_assert(rel(fit.scv.F_s, 0.601) < 0.03, "F_s %g", fit.scv.F_s);
    cr_assert_eq(fit.scv.v_eps, 0.001);
}

/* g_j = (Phi^T (Phi theta - y))_j: zero where theta_j > 0, >= 0 where theta_j = 0 (KKT of min |y - Phi
 * theta|^2, theta >= 0), up to a tolerance relative to |Phi^T y|. */
static void assert_kkt(const rb_friction_model *fit, const double *th, size_t p)
{
    double g[3] = {0}, scale = 0;
    for (int k = 0; k < NS; k++) {
        double phi[3];
        cr_assert_eq(rb_friction_regressor(fit, v[k], phi), p);
        double r = -tau[k];
        for (size_t j = 0; j < p; j++)
            r += phi[j] * th[j];
        for (size_t j = 0; j < p; j++) {
            g[j] += phi[j] * r;
            scale += fabs(phi[j] * tau[k]);
        }
    }
    for (size_t j = 0; j < p; j++) {
        cr_assert(th[j] >= 0, "theta %zu = %g", j, th[j]);
        if (th[j] > 0)
            cr_assert(fabs(g[j]) < 1e-10 * scale, "theta %zu > 0 but gradient %g", j, g[j]);
        else
            cr_assert(g[j] > -1e-10 * scale, "theta %zu = 0 but gradient %g < 0 (could improve)", j, g[j]);
    }
}

/* Data whose unconstrained fit has a negative viscous coefficient (tau = 0.5 sgn(v) - 0.2 v): F_v comes out
 * exactly 0 and F_c is then the one-parameter least-squares value sum(tau sgn) / sum(sgn^2). Likewise a
 * negative Coulomb level. */
Test(friction_identify, coulomb_viscous_stays_non_negative)
{
    rb_rng rng;
    rb_rng_seed(&rng, 31);
    for (int k = 0; k < NS; k++) {
        v[k] = velocity(k);
        tau[k] = 0.5 * (v[k] > 0 ? 1 : -1) - 0.2 * v[k] + 0.01 * rb_rng_normal(&rng);
    }
    /* unconstrained, for reference */
    double *Phi = malloc(2 * NS * sizeof *Phi), th[2];
    for (int k = 0; k < NS; k++) {
        Phi[2 * k] = v[k] > 0 ? 1 : -1;
        Phi[2 * k + 1] = v[k];
    }
    rb_err err;
    cr_assert_eq(rb_lstsq(Phi, tau, NS, 2, 1, th, NULL, &err), RB_OK, "%s", err.msg);
    cr_assert(th[1] < -0.15, "the unconstrained viscous term %g should be negative", th[1]);

    rb_friction_model fit;
    double rmse;
    cr_assert_eq(rb_friction_fit(RB_FRICTION_CV, v, tau, NS, NULL, &fit, &rmse, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(fit.cv.F_v, 0.0);
    double num = 0, den = 0;
    for (int k = 0; k < NS; k++) {
        num += Phi[2 * k] * tau[k];
        den += Phi[2 * k] * Phi[2 * k];
    }
    cr_assert(rel(fit.cv.F_c, num / den) < 1e-12, "F_c %.17g vs %.17g", fit.cv.F_c, num / den);
    double th_fit[2] = {fit.cv.F_c, fit.cv.F_v};
    assert_kkt(&fit, th_fit, 2);
    cr_assert(fabs(rmse - rmse_of(&fit, v, tau, NS)) < 1e-15);

    /* negative Coulomb: tau = -0.05 sgn(v) + 0.6 v -> F_c = 0, F_v = sum(tau v) / sum(v^2) */
    for (int k = 0; k < NS; k++)
        tau[k] = -0.05 * Phi[2 * k] + 0.6 * v[k] + 0.01 * rb_rng_normal(&rng);
    cr_assert_eq(rb_lstsq(Phi, tau, NS, 2, 1, th, NULL, &err), RB_OK, "%s", err.msg);
    cr_assert(th[0] < -0.04, "the unconstrained Coulomb level %g should be negative", th[0]);
    cr_assert_eq(rb_friction_fit(RB_FRICTION_CV, v, tau, NS, NULL, &fit, &rmse, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(fit.cv.F_c, 0.0);
    num = den = 0;
    for (int k = 0; k < NS; k++) {
        num += v[k] * tau[k];
        den += v[k] * v[k];
    }
    cr_assert(rel(fit.cv.F_v, num / den) < 1e-12, "F_v %.17g vs %.17g", fit.cv.F_v, num / den);
    th_fit[0] = fit.cv.F_c, th_fit[1] = fit.cv.F_v;
    assert_kkt(&fit, th_fit, 2);
    free(Phi);
}

/* An anti-Stribeck dip (friction lower at rest than in motion) and a negative viscous slope would need
 * F_s < F_c and F_v < 0: the fit keeps F_s = F_c and F_v = 0, and is the constrained optimum (KKT; random
 * feasible points nearby never do better). */
Test(friction_identify, scv_stays_non_negative)
{
    rb_rng rng;
    rb_rng_seed(&rng, 41);
    for (int k = 0; k < NS; k++) {
        v[k] = velocity(k);
        double s = v[k] > 0 ? 1 : -1, e = exp(-(v[k] / 0.01) * (v[k] / 0.01));
        tau[k] = (0.5 - 0.2 * e) * s - 0.1 * v[k] + 0.01 * rb_rng_normal(&rng);
    }
    rb_friction_model fit;
    double rmse;
    rb_err err;
    rb_friction_fit_opts o = {.v_s = 0.01};
    cr_assert_eq(rb_friction_fit(RB_FRICTION_SCV, v, tau, NS, &o, &fit, &rmse, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(fit.scv.F_s, fit.scv.F_c);
    cr_assert_eq(fit.scv.F_v, 0.0);
    cr_assert(fit.scv.F_c > 0.4, "F_c %g", fit.scv.F_c);
    double th[3] = {fit.scv.F_c, fit.scv.F_s - fit.scv.F_c, fit.scv.F_v};
    assert_kkt(&fit, th, 3);
    for (int trial = 0; trial < 300; trial++) {
        rb_friction_model other = fit;
        other.scv.F_c = fmax(0, fit.scv.F_c + 0.01 * rb_rng_normal(&rng));
        other.scv.F_s = other.scv.F_c + fabs(0.01 * rb_rng_normal(&rng));
        other.scv.F_v = fabs(0.01 * rb_rng_normal(&rng));
        cr_assert(rmse_of(&other, v, tau, NS) >= rmse, "a feasible point does better");
    }
    /* with the search too: feasible, and the optimum of its own v_s */
    cr_assert_eq(rb_friction_fit(RB_FRICTION_SCV, v, tau, NS, NULL, &fit, &rmse, &err), RB_OK, "%s", err.msg);
    cr_assert(fit.scv.F_s >= fit.scv.F_c && fit.scv.F_c >= 0 && fit.scv.F_v >= 0);
    double th2[3] = {fit.scv.F_c, fit.scv.F_s - fit.scv.F_c, fit.scv.F_v};
    assert_kkt(&fit, th2, 3);
}

Test(friction_identify, non_finite_samples_are_skipped)
{
    rb_friction_model truth = {.kind = RB_FRICTION_CV, .cv = {0.3, 0.6, 0}};
    make_data(&truth, 0.02, 51, v, tau);
    rb_friction_model a, b;
    double ra, rb;
    rb_err err;
    cr_assert_eq(rb_friction_fit(RB_FRICTION_CV, v, tau, NS, NULL, &a, &ra, &err), RB_OK, "%s", err.msg);
    /* the same samples with NaN / inf rows interleaved */
    static double v2[NS + 3], t2[NS + 3];
    memcpy(v2 + 3, v, sizeof v);
    memcpy(t2 + 3, tau, sizeof tau);
    v2[0] = NAN, t2[0] = 0.1;
    v2[1] = 0.2, t2[1] = NAN;
    v2[2] = INFINITY, t2[2] = 1;
    cr_assert_eq(rb_friction_fit(RB_FRICTION_CV, v2, t2, NS + 3, NULL, &b, &rb, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(a.cv.F_c, b.cv.F_c);
    cr_assert_eq(a.cv.F_v, b.cv.F_v);
    cr_assert_eq(ra, rb);
}

Test(friction_identify, regressor_reproduces_the_model)
{
    rb_friction_model c = {.kind = RB_FRICTION_CV, .cv = {0.3, 0.6, 0.01}};
    rb_friction_model s = {.kind = RB_FRICTION_SCV, .scv = {0.306, 0.601, 0.673, 0.0094, 0.001}};
    for (double x = -0.3; x <= 0.3; x += 0.0037) {
        double phi[3];
        cr_assert_eq(rb_friction_regressor(&c, x, phi), 2);
        cr_assert(fabs(phi[0] * 0.3 + phi[1] * 0.6 - rb_friction_eval(&c, x)) < 1e-15);
        cr_assert_eq(rb_friction_regressor(&s, x, phi), 3);
        cr_assert(fabs(phi[0] * 0.306 + phi[1] * 0.295 + phi[2] * 0.673 - rb_friction_eval(&s, x)) < 1e-15);
    }
    rb_friction_model l = {.kind = RB_FRICTION_LUGRE};
    double phi[3];
    cr_assert_eq(rb_friction_regressor(&l, 0.1, phi), 0);
}

Test(friction_identify, failures)
{
    rb_friction_model fit, keep;
    memset(&keep, 0x5a, sizeof keep);
    fit = keep;
    rb_err err;
    double zeros[50] = {0}, halves[50], t[50];
    for (int k = 0; k < 50; k++) {
        halves[k] = 0.5;
        t[k] = 0.3 + 0.01 * k;
    }
    cr_assert_eq(rb_friction_fit(RB_FRICTION_LUGRE, halves, t, 50, NULL, &fit, NULL, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "lugre"), "%s", err.msg);
    cr_assert_eq(rb_friction_fit(RB_FRICTION_CV, NULL, t, 50, NULL, &fit, NULL, &err), RB_EINVAL);
    cr_assert_eq(rb_friction_fit(RB_FRICTION_CV, halves, t, 1, NULL, &fit, NULL, &err), RB_EDIM);
    cr_assert(strstr(err.msg, "1 finite samples for 2 parameters"), "%s", err.msg);
    /* no excitation: every v 0, or every v the same */
    cr_assert_eq(rb_friction_fit(RB_FRICTION_CV, zeros, t, 50, NULL, &fit, NULL, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "do not excite every parameter"), "%s", err.msg);
    cr_assert_eq(rb_friction_fit(RB_FRICTION_CV, halves, t, 50, NULL, &fit, NULL, &err), RB_ENUMERIC);
    rb_friction_fit_opts o = {.v_s = 0.01};
    cr_assert_eq(rb_friction_fit(RB_FRICTION_SCV, halves, t, 50, &o, &fit, NULL, &err), RB_ENUMERIC);
    cr_assert_eq(rb_friction_fit(RB_FRICTION_SCV, zeros, t, 50, NULL, &fit, NULL, &err), RB_EINVAL,
                 "max|v| = 0 leaves no bracket for v_s");
    /* bad options */
    rb_friction_fit_opts bad[] = {{.v_eps = -1}, {.v_s = NAN}, {.v_s_min = 0.1, .v_s_max = 0.01}, {.grid = 2}};
    for (int i = 0; i < 4; i++) {
        int rc = rb_friction_fit(RB_FRICTION_SCV, halves, t, 50, &bad[i], &fit, NULL, &err);
        cr_assert_eq(rc, RB_EINVAL, "option case %d: %s", i, err.msg);
    }
    cr_assert_eq(memcmp(&fit, &keep, sizeof fit), 0, "*out untouched on failure");
}

/* tanh6: noise-free samples of a model with three distinct scales are reproduced (curve RMSE below 1e-4 of
 * the torque's RMS) and its parameters recovered within 0.5 %; Table 4.1's leg joint 1 (g2 = g5, so g1 and g4
 * are not separable) is reproduced as a curve (RMSE below 1e-3 of the RMS), and the static friction near
 * rest (the curve at v = 0.05 rad/s) within 1 %; with noise of 0.02 N m the fit's RMSE is within 3 % of
 * the noise. Every fit is a valid tanh6 model (g2 >= g3, all >= 0). */
Test(friction_identify, tanh6_reproduces_the_curve)
{
    rb_friction_model distinct = {.kind = RB_FRICTION_TANH6, .tanh6 = {0.4, 200, 8, 0.3, 60, 0.9}}, leg, fit;
    rb_err err;
    cr_assert_eq(rb_friction_preset("suralp_leg_1", &leg, &err), RB_OK);
    const rb_friction_model *cases[2] = {&distinct, &leg};
    for (int c = 0; c < 2; c++) {
        make_data(cases[c], 0.0, 3, v, tau);
        double rms = 0, rmse;
        for (int k = 0; k < NS; k++)
            rms += tau[k] * tau[k] / NS;
        rms = sqrt(rms);
        cr_assert_eq(rb_friction_fit(RB_FRICTION_TANH6, v, tau, NS, NULL, &fit, &rmse, &err), RB_OK, "%s", err.msg);
        const rb_friction_tanh6 *g = &fit.tanh6;
        cr_log_info("tanh6 case %d: g = %.4g %.4g %.4g %.4g %.4g %.4g, rmse %.3g (rms %.3g)", c, g->g1, g->g2, g->g3,
                    g->g4, g->g5, g->g6, rmse, rms);
        cr_assert_eq(fit.kind, RB_FRICTION_TANH6);
        cr_assert_eq(rb_friction_validate(&fit, &err), RB_OK, "%s", err.msg);
        cr_assert(fabs(rmse - rmse_of(&fit, v, tau, NS)) < 1e-12);
        cr_assert(rmse < (c == 0 ? 1e-4 : 1e-3) * rms, "case %d: rmse %g", c, rmse);
        if (c == 0) {
            const double want[6] = {0.4, 200, 8, 0.3, 60, 0.9}, got[6] = {g->g1, g->g2, g->g3, g->g4, g->g5, g->g6};
            for (int i = 0; i < 6; i++)
                cr_assert(rel(got[i], want[i]) < 0.005, "g%d: %g vs %g", i + 1, got[i], want[i]);
        } else {
            cr_assert(rel(rb_friction_eval(&fit, 0.05), rb_friction_eval(&leg, 0.05)) < 0.01);
        }
    }
    make_data(&distinct, 0.02, 4, v, tau);
    double rmse;
    cr_assert_eq(rb_friction_fit(RB_FRICTION_TANH6, v, tau, NS, NULL, &fit, &rmse, &err), RB_OK, "%s", err.msg);
    cr_assert(rmse < 0.02 * 1.03 && rmse > 0.02 * 0.97, "noisy: rmse %g", rmse);
    double zeros[50] = {0}, t[50];
    for (int k = 0; k < 50; k++)
        t[k] = 0.1 * k;
    cr_assert_eq(rb_friction_fit(RB_FRICTION_TANH6, zeros, t, 50, NULL, &fit, NULL, &err), RB_EINVAL,
                 "max|v| = 0 leaves no bracket for the scales");
}
