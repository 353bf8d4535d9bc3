/* Jump adaptation (rb_jump_*): the NIS gate over a subset of the measurements, the prior inflation and the repeated
 * update, against an independent computation on a linear KF: S = H P H^T + R and the innovation by hand, and the
 * update repeated by a second filter started from the inflated prior. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "roboest/core.h"
#include "roboest/filters.h"

/* x = [tau_m, tau_F, f], z = [i = tau_m / g, a reading of f, tau_m - tau_F + f / 2]. */
enum { N = 3, M = 3 };
static const double G = 2.5;
static const double H[M * N] = {1 / 2.5, 0, 0, 0, 0, 1, 1, -1, 0.5};
static const double X0[N] = {1.0, 0.2, -3.0};
static const double P0[N * N] = {0.04, 0.01, 0.0, 0.01, 0.09, 0.0, 0.0, 0.0, 0.25};
static const double R[M * M] = {1e-3, 0, 0, 0, 0.01, 0, 0, 0, 0.02};

static rb_filter *make_kf(void)
{
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = N, o.m = M, o.F = (double[N * N]){1, 0, 0, 0, 1, 0, 0, 0, 1}, o.H = H, o.P0 = P0, o.R = R, o.x0 = X0;
    rb_filter *f = NULL;
    rb_err err;
    cr_assert_eq(rb_kf_create(&o, &f, &err), RB_OK, "%s", err.msg);
    return f;
}

/* S = H P0 H^T + R and nu = z - H x0 by hand. */
static void innovation(const double *z, double *S, double *nu)
{
    for (size_t i = 0; i < M; i++) {
        nu[i] = z[i];
        for (size_t k = 0; k < N; k++)
            nu[i] -= H[i * N + k] * X0[k];
        for (size_t j = 0; j < M; j++) {
            double s = R[i * M + j];
            for (size_t k = 0; k < N; k++)
                for (size_t l = 0; l < N; l++)
                    s += H[i * N + k] * P0[k * N + l] * H[j * N + l];
            S[i * M + j] = s;
        }
    }
}

static const size_t GATE[1] = {0};
static const rb_jump_target TARGETS[3] = {{0, 0, 2.5}, {0, 1, 2.5}, {1, 2, 1.0}};

static rb_jump *make_jump(const rb_filter *f, double scale)
{
    rb_jump_opts o = {.gate = GATE,
                      .gate_factor = (double[1]){G},
                      .n_gate = 1,
                      .targets = TARGETS,
                      .n_targets = 3,
                      .probability = 0.999,
                      .scale = scale};
    rb_jump *j = NULL;
    rb_err err;
    cr_assert_eq(rb_jump_create(f, &o, &j, &err), RB_OK, "%s", err.msg);
    return j;
}

/* A current 10 sigma off: the gate fires; tau_m and tau_F gain scale g^2 (nu_0^2 - S_00), f gains
 * scale (nu_1^2 - S_11)^+ (here 0 or more), and the update from that prior is the repeated one. */
Test(filters_jump, inflates_the_prior_and_repeats_the_update)
{
    const double scale = 0.7;
    rb_filter *a = make_kf(), *b = make_kf();
    rb_jump *j = make_jump(a, scale);
    double S[M * M], nu[M], z[M] = {X0[0] / G + 0.5, X0[2] + 0.8, X0[0] - X0[1] + 0.5 * X0[2]};
    innovation(z, S, nu);
    double nis = -1, infl = -1;
    rb_err err;
    rb_jump_keep_prior(j, a);
    cr_assert_eq(rb_filter_update(a, z, &err), RB_OK, "%s", err.msg);
    rb_alloc_fail_after(-1);
    cr_assert_eq(rb_jump_update(j, a, z, &nis, &infl, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_alloc_fail_after(-1), 0, "rb_jump_update allocated");
    double want_nis = nu[0] * nu[0] / S[0];
    cr_assert(fabs(nis - want_nis) <= 1e-12 * want_nis, "NIS %.17g vs %.17g", nis, want_nis);
    double d0 = scale * G * G * fmax(0.0, nu[0] * nu[0] - S[0]), d1 = scale * fmax(0.0, nu[1] * nu[1] - S[4]);
    cr_assert(d0 > 0 && d1 > 0, "both shortfalls positive: %g %g", d0, d1);
    cr_assert(fabs(infl - d0) <= 1e-12 * d0, "inflation %.17g vs %.17g", infl, d0);
    double Pi[N * N];
    memcpy(Pi, P0, sizeof Pi);
    Pi[0] += d0, Pi[4] += d0, Pi[8] += d1;
    cr_assert_eq(rb_filter_set_state(b, X0, Pi, &err), RB_OK);
    cr_assert_eq(rb_filter_update(b, z, &err), RB_OK);
    const double *xa = rb_filter_x(a), *xb = rb_filter_x(b), *Pa = rb_filter_P(a), *Pb = rb_filter_P(b);
    for (size_t i = 0; i < N; i++)
        cr_assert(fabs(xa[i] - xb[i]) <= 1e-12 * (1 + fabs(xb[i])), "x[%zu] %.17g vs %.17g", i, xa[i], xb[i]);
    for (size_t i = 0; i < N * N; i++)
        cr_assert(fabs(Pa[i] - Pb[i]) <= 1e-12 * (1 + fabs(Pb[i])), "P[%zu]", i);
    rb_jump_free(j);
    rb_filter_free(a);
    rb_filter_free(b);
}

/* Consistent readings: below the gate nothing changes (the plain update, bit for bit; the inflation untouched).
 * A gate over the current and a missing third reading: the NIS has one degree of freedom. */
Test(filters_jump, silent_below_the_gate_and_counts_used_elements)
{
    rb_filter *a = make_kf(), *b = make_kf();
    rb_jump *j = make_jump(a, 1.0);
    double S[M * M], nu[M], z[M] = {X0[0] / G + 0.01, X0[2] - 0.1, X0[0] - X0[1] + 0.5 * X0[2] + 0.05};
    innovation(z, S, nu);
    double nis = -1, infl = -1;
    rb_err err;
    rb_jump_keep_prior(j, a);
    cr_assert_eq(rb_filter_update(a, z, &err), RB_OK);
    cr_assert_eq(rb_jump_update(j, a, z, &nis, &infl, &err), RB_OK);
    cr_assert(fabs(nis - nu[0] * nu[0] / S[0]) <= 1e-12 * nis);
    cr_assert_eq(infl, -1.0);
    cr_assert_eq(rb_filter_update(b, z, &err), RB_OK);
    cr_assert_arr_eq(rb_filter_x(a), rb_filter_x(b), N * sizeof(double));
    cr_assert_arr_eq(rb_filter_P(a), rb_filter_P(b), N * N * sizeof(double));
    rb_jump_free(j);
    rb_filter_free(a);

    /* gate {0, 2}, the third reading missing: dof 1, the NIS of the current alone */
    a = make_kf();
    rb_jump_opts o = {
        .gate = (size_t[2]){0, 2}, .n_gate = 2, .targets = TARGETS, .n_targets = 1, .probability = 0.999, .scale = 1.0};
    cr_assert_eq(rb_jump_create(a, &o, &j, &err), RB_OK, "%s", err.msg);
    z[0] = X0[0] / G + 0.5, z[2] = NAN;
    innovation(z, S, nu);
    rb_jump_keep_prior(j, a);
    cr_assert_eq(rb_filter_update(a, z, &err), RB_OK);
    cr_assert_eq(rb_jump_update(j, a, z, &nis, &infl, &err), RB_OK);
    cr_assert(fabs(nis - nu[0] * nu[0] / S[0]) <= 1e-12 * nis, "NIS %g vs %g", nis, nu[0] * nu[0] / S[0]);
    cr_assert(fabs(infl - fmax(0.0, nu[0] * nu[0] - S[0])) <= 1e-12 * infl, "inflation %g (factor 1)", infl);
    rb_jump_free(j);
    rb_filter_free(a);
    rb_filter_free(b);
}

Test(filters_jump, bad_options)
{
    rb_filter *f = make_kf();
    rb_jump *j = NULL;
    rb_err err;
    rb_jump_opts o = {.gate = (size_t[1]){3}, .n_gate = 1, .probability = 0.99, .scale = 1};
    cr_assert_eq(rb_jump_create(f, &o, &j, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "gate[0]"), "%s", err.msg);
    o.gate = GATE, o.targets = (rb_jump_target[1]){{0, 3, 1.0}}, o.n_targets = 1;
    cr_assert_eq(rb_jump_create(f, &o, &j, &err), RB_EINVAL);
    o.n_targets = 0, o.scale = 0;
    cr_assert_eq(rb_jump_create(f, &o, &j, &err), RB_EINVAL);
    o.scale = 1, o.probability = 1.5;
    cr_assert_eq(rb_jump_create(f, &o, &j, &err), RB_EINVAL);
    cr_assert_null(j);
    rb_filter_free(f);
}
