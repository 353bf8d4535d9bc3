/* KF / EKF / UKF: covariance repair, non-finite failures, diagnostics, options and callback errors, allocations. */
#include <criterion/criterion.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "filters_support.h"
#include "roboest/core.h"
#include "roboest/filters.h"

/* ---- covariance repair ------------------------------------------------------------------------- */
static int ident_f(void *user, const double *x, const double *u, double dt, double *out, rb_err *err)
{
    (void)user;
    (void)u;
    (void)dt;
    (void)err;
    out[0] = x[0];
    out[1] = x[1];
    return RB_OK;
}

static int first_h(void *user, const double *x, double *z, rb_err *err)
{
    (void)user;
    (void)err;
    z[0] = x[0];
    return RB_OK;
}

Test(filters, ukf_repairs_then_reports_indefinite_covariance)
{
    double P0[4] = {1, 0, 0, 1}, R = 0.1;
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = 2;
    o.m = 1;
    o.P0 = P0;
    o.R = &R;
    o.f = ident_f;
    o.h = first_h;
    rb_filter *ukf;
    rb_err err;
    cr_assert_eq(rb_ukf_create(&o, &ukf, &err), RB_OK, "%s", err.msg);
    rb_filter_diag d;

    /* The triangle LAPACK reads (column-major lower = row-major upper) is indefinite, the symmetric part
     * positive definite: symmetrization is enough. */
    double Pa[4] = {4, 3, 0, 1};
    cr_assert_eq(rb_filter_set_state(ukf, NULL, Pa, &err), RB_OK);
    cr_assert_eq(rb_filter_predict(ukf, NULL, 0.1, &err), RB_OK, "%s", err.msg);
    rb_filter_get_diag(ukf, &d);
    cr_assert_eq(d.repairs, 1);
    const double *P = rb_filter_P(ukf);
    cr_assert(fabs(P[1] - 1.5) < 1e-12 && P[1] == P[2], "P01 %g P10 %g", P[1], P[2]);

    /* Singular (positive semi-definite): jitter 1e-9 * mean diag rescues it. */
    double Pb[4] = {1, 1, 1, 1};
    cr_assert_eq(rb_filter_set_state(ukf, NULL, Pb, &err), RB_OK);
    cr_assert_eq(rb_filter_update(ukf, &(double){0.5}, &err), RB_OK, "%s", err.msg);
    rb_filter_get_diag(ukf, &d);
    cr_assert_eq(d.repairs, 3);

    /* Indefinite: RB_ENUMERIC naming the step, P restored. */
    double Pc[4] = {1, 0, 0, -1};
    cr_assert_eq(rb_filter_set_state(ukf, NULL, Pc, &err), RB_OK);
    rb_filter_set_step(ukf, 41);
    cr_assert_eq(rb_filter_predict(ukf, NULL, 0.1, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "ukf predict, step 42: covariance P not positive definite"), "%s", err.msg);
    cr_assert(strstr(err.msg, "leading minor 2"), "%s", err.msg);
    size_t where = 99;
    cr_assert_eq(rb_filter_last_failure(ukf, &where), RB_FILTER_FAIL_P);
    cr_assert_eq(where, 1, "the second state element's pivot failed: %zu", where);
    cr_assert_arr_eq(rb_filter_P(ukf), Pc, sizeof Pc);
    cr_assert_eq(rb_filter_update(ukf, &(double){0.5}, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "ukf update, step 41:"), "%s", err.msg);
    rb_filter_free(ukf);

    /* KF / EKF: an indefinite P makes S indefinite: reported, not repaired. */
    double F[4] = {1, 0, 0, 1}, H[2] = {1, 0}, Pd[4] = {-1, 0, 0, 1};
    o.F = F;
    o.H = H;
    rb_filter *kf;
    cr_assert_eq(rb_kf_create(&o, &kf, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_filter_set_state(kf, NULL, Pd, &err), RB_OK);
    cr_assert_eq(rb_filter_update(kf, &(double){0.5}, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "kf update, step 0: innovation covariance S not positive definite"), "%s", err.msg);
    cr_assert_eq(rb_filter_last_failure(kf, &where), RB_FILTER_FAIL_S);
    cr_assert_eq(where, 0);
    cr_assert_eq(rb_filter_set_state(kf, NULL, (double[4]){1, 0, 0, 1}, &err), RB_OK);
    cr_assert_eq(rb_filter_update(kf, &(double){0.5}, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_filter_last_failure(kf, &where), RB_FILTER_FAIL_NONE); /* reset by the next step */
    double Pnan[4] = {NAN, 0, 0, 1};
    cr_assert_eq(rb_filter_set_state(kf, NULL, Pnan, &err), RB_ENUMERIC);
    rb_filter_free(kf);
}

/* A process whose second element overflows, a measurement that does: the failure names the element. */
static int overflow_f(void *user, const double *x, const double *u, double dt, double *out, rb_err *err)
{
    (void)user, (void)u, (void)dt, (void)err;
    out[0] = x[0];
    out[1] = x[1] * 1e300 * 1e300;
    return RB_OK;
}

static int overflow_h(void *user, const double *x, double *z, rb_err *err)
{
    (void)user, (void)err;
    z[0] = x[0];
    z[1] = x[1] * 1e300 * 1e300;
    return RB_OK;
}

Test(filters, last_failure_names_the_non_finite_element)
{
    double P0[4] = {1, 0, 0, 1}, R[4] = {1, 0, 0, 1}, x0[2] = {0.5, 0.5};
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = 2, o.m = 2, o.P0 = P0, o.R = R, o.x0 = x0, o.f = overflow_f, o.h = first_h;
    rb_filter *ukf;
    rb_err err;
    size_t where = 99;
    cr_assert_eq(rb_ukf_create(&o, &ukf, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_filter_predict(ukf, NULL, 0.1, &err), RB_ENUMERIC);
    cr_assert_eq(rb_filter_last_failure(ukf, &where), RB_FILTER_FAIL_X, "%s", err.msg);
    cr_assert_eq(where, 1);
    rb_filter_free(ukf);
    o.f = ident_f, o.h = overflow_h;
    cr_assert_eq(rb_ukf_create(&o, &ukf, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_filter_update(ukf, (double[2]){0.5, 0.5}, &err), RB_ENUMERIC);
    cr_assert_eq(rb_filter_last_failure(ukf, &where), RB_FILTER_FAIL_Z, "%s", err.msg);
    cr_assert_eq(where, 1);
    rb_filter_free(ukf);
}

/* ---- diagnostics --------------------------------------------------------------------------------- */
Test(filters, gain_and_innovation_covariance_match_the_formulas)
{
    fs_linear s;
    fs_linear_make(&s, 4, 3, 61);
    rb_filter_opts o;
    fs_linear_opts(&s, &o);
    for (int kind = 0; kind < 3; kind++) {
        rb_filter *f;
        int (*create)(const rb_filter_opts *, rb_filter **, rb_err *) = kind == 0   ? rb_kf_create
                                                                        : kind == 1 ? rb_ekf_create
                                                                                    : rb_ukf_create;
        rb_err err;
        cr_assert_eq(create(&o, &f, &err), RB_OK, "%s", err.msg);
        double K[12], S[9];
        cr_assert_eq(rb_filter_gain(f, K, &err), RB_EINVAL);
        double u = 1;
        cr_assert_eq(rb_filter_predict(f, &u, 0.1, &err), RB_OK);
        double xp[4], Pp[16];
        memcpy(xp, rb_filter_x(f), sizeof xp);
        memcpy(Pp, rb_filter_P(f), sizeof Pp);
        double z[3] = {1, NAN, -2};
        cr_assert_eq(rb_filter_update(f, z, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_filter_gain(f, K, &err), RB_OK);
        cr_assert_eq(rb_filter_innovation_cov(f, S, &err), RB_OK);
        /* Reference on rows {0, 2}: S = H P H^T + R, K = P H^T S^-1 (dposv), nu = z - H x. */
        int rows[2] = {0, 2};
        double Sr[4], PHt[8], Kt[8];
        for (int a = 0; a < 2; a++) {
            for (int i = 0; i < 4; i++) {
                PHt[i * 2 + a] = 0;
                for (int j = 0; j < 4; j++)
                    PHt[i * 2 + a] += Pp[i * 4 + j] * s.H[rows[a] * 4 + j];
            }
        }
        for (int a = 0; a < 2; a++) {
            for (int b = 0; b < 2; b++) {
                Sr[a * 2 + b] = s.R[rows[a] * 3 + rows[b]];
                for (int j = 0; j < 4; j++)
                    Sr[a * 2 + b] += s.H[rows[a] * 4 + j] * PHt[j * 2 + b];
            }
        }
        for (int a = 0; a < 2; a++)
            for (int i = 0; i < 4; i++)
                Kt[a * 4 + i] = PHt[i * 2 + a];
        double Sf[4];
        memcpy(Sf, Sr, sizeof Sf);
        cr_assert_eq(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', 2, 4, Sf, 2, Kt, 4), 0);
        double tol = kind == 1 ? 1e-7 : 1e-10; /* the EKF here differentiates numerically */
        for (int a = 0; a < 2; a++) {
            for (int b = 0; b < 2; b++)
                cr_assert(fabs(S[rows[a] * 3 + rows[b]] - Sr[a * 2 + b]) < tol * (1 + fabs(Sr[a * 2 + b])));
            for (int i = 0; i < 4; i++)
                cr_assert(fabs(K[i * 3 + rows[a]] - Kt[a * 4 + i]) < tol * (1 + fabs(Kt[a * 4 + i])), "kind %d", kind);
            double zh = 0;
            for (int j = 0; j < 4; j++)
                zh += s.H[rows[a] * 4 + j] * xp[j];
            rb_filter_diag d;
            rb_filter_get_diag(f, &d);
            cr_assert(fabs(d.innovation[rows[a]] - (z[rows[a]] - zh)) < tol * (1 + fabs(zh)));
        }
        for (int i = 0; i < 4; i++)
            cr_assert_eq(K[i * 3 + 1], 0.0);
        cr_assert(isnan(S[1 * 3 + 1]) && isnan(S[0 * 3 + 1]));
        rb_filter_diag d;
        rb_filter_get_diag(f, &d);
        cr_assert_eq(d.predicts, 1);
        cr_assert_eq(d.updates, 1);
        cr_assert_eq(d.step, 1);
        for (int i = 0; i < 4; i++)
            cr_assert_eq(d.P_diag[i], rb_filter_P(f)[i * 5]);
        double nees;
        cr_assert_eq(rb_filter_nees(f, rb_filter_x(f), &nees, &err), RB_OK);
        cr_assert_eq(nees, 0.0);
        /* After a predict the last update's per-element diagnostics are cleared. */
        cr_assert_eq(rb_filter_predict(f, &u, 0.1, &err), RB_OK);
        rb_filter_get_diag(f, &d);
        cr_assert(isnan(d.nis) && isnan(d.innovation[0]) && d.status[0] == RB_MEAS_NONE);
        rb_filter_free(f);
    }
}

/* ---- options and errors -------------------------------------------------------------------------- */
Test(filters, create_rejects_bad_options)
{
    fs_linear s;
    fs_linear_make(&s, 2, 1, 71);
    rb_filter_opts o;
    rb_filter *f = (rb_filter *)1;
    rb_err err;
    fs_linear_opts(&s, &o);
    o.n = 0;
    cr_assert_eq(rb_kf_create(&o, &f, &err), RB_EINVAL);
    cr_assert_null(f);
    fs_linear_opts(&s, &o);
    o.f = NULL;
    cr_assert_eq(rb_ukf_create(&o, &f, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "process model"), "%s", err.msg);
    fs_linear_opts(&s, &o);
    o.H = NULL;
    cr_assert_eq(rb_kf_create(&o, &f, &err), RB_EINVAL);
    fs_linear_opts(&s, &o);
    o.alpha = 0;
    cr_assert_eq(rb_ukf_create(&o, &f, &err), RB_EINVAL);
    fs_linear_opts(&s, &o);
    o.gate.mode = RB_GATE_ELEMENT;
    o.gate.probability = 1.5;
    cr_assert_eq(rb_ekf_create(&o, &f, &err), RB_EINVAL);
    fs_linear_opts(&s, &o);
    double Pbad[4] = {1, 2, 2, 1};
    o.P0 = Pbad;
    cr_assert_eq(rb_kf_create(&o, &f, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "P0 is not positive definite"), "%s", err.msg);
    double Pasym[4] = {1, 0.5, 0, 1};
    o.P0 = Pasym;
    cr_assert_eq(rb_kf_create(&o, &f, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "P0 is not symmetric"), "%s", err.msg);
    fs_linear_opts(&s, &o);
    double Rneg = -1;
    o.R = &Rneg;
    cr_assert_eq(rb_kf_create(&o, &f, &err), RB_ENUMERIC);
    fs_linear_opts(&s, &o);
    double xnan[2] = {0, NAN};
    o.x0 = xnan;
    cr_assert_eq(rb_kf_create(&o, &f, &err), RB_ENUMERIC);
    cr_assert_null(f);
    rb_filter_free(NULL);
}

static int failing_h(void *user, const double *x, double *z, rb_err *err)
{
    (void)user;
    (void)z;
    if (x[0] > 100)
        return rb_err_set(err, RB_EINPUT, "out of range");
    z[0] = x[0];
    return RB_OK;
}

Test(filters, callback_errors_travel_up_with_context)
{
    double P0[4] = {1, 0, 0, 1}, R = 1, x0[2] = {200, 0};
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = 2;
    o.m = 1;
    o.P0 = P0;
    o.R = &R;
    o.x0 = x0;
    o.f = ident_f;
    o.h = failing_h;
    rb_filter *f;
    rb_err err;
    cr_assert_eq(rb_ukf_create(&o, &f, &err), RB_OK);
    cr_assert_eq(rb_filter_update(f, &(double){1}, &err), RB_EINPUT);
    cr_assert_str_eq(err.msg, "ukf update, step 0: measurement model at sigma point 0: out of range");
    cr_assert_eq(rb_filter_x(f)[0], 200);
    rb_filter_free(f);
    cr_assert_eq(rb_ekf_create(&o, &f, &err), RB_OK);
    cr_assert_eq(rb_filter_update(f, &(double){1}, &err), RB_EINPUT);
    cr_assert_str_eq(err.msg, "ekf update, step 0: measurement model: out of range");
    double inf = INFINITY;
    cr_assert_eq(rb_filter_update(f, &inf, &err), RB_ENUMERIC);
    rb_filter_free(f);
}

/* ---- allocation -------------------------------------------------------------------------------- */
static void step_many(rb_filter *f, size_t m, int steps)
{
    rb_rng rng;
    rb_rng_seed(&rng, 3);
    double z[FS_MAXM], u = 0.1;
    rb_err err;
    for (int t = 0; t < steps; t++) {
        for (size_t i = 0; i < m; i++)
            z[i] = rb_rng_normal(&rng);
        if (t % 5 == 0)
            z[t % m] = NAN;
        if (t % 13 == 0)
            z[0] = 1e3;
        cr_assert_eq(rb_filter_predict(f, &u, 0.01, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_filter_update(f, z, &err), RB_OK, "%s", err.msg);
    }
}

static int q_schedule(void *user, rb_filter_sched *s, rb_err *err)
{
    (void)user;
    (void)err;
    if (s->phase == RB_FILTER_PREDICT)
        s->mats.Q.data[0] = 0.05 + 0.001 * (double)(s->step % 3); /* above the 0.036 made: Q stays PSD */
    return RB_OK;
}

Test(filters, no_allocation_in_predict_and_update)
{
    fs_linear s;
    fs_linear_make(&s, 6, 4, 81);
    for (size_t i = 0; i < 36; i++)
        s.F[i] = (i % 7 == 0) ? 1.0 : 0.0; /* keep the state bounded over 10,000 steps */
    for (int kind = 0; kind < 3; kind++) {
        rb_filter_opts o;
        fs_linear_opts(&s, &o);
        o.gate.mode = kind == 1 ? RB_GATE_VECTOR : RB_GATE_ELEMENT;
        o.gate.probability = 0.999;
        o.schedule = q_schedule;
        rb_filter *f;
        int (*create)(const rb_filter_opts *, rb_filter **, rb_err *) = kind == 0   ? rb_kf_create
                                                                        : kind == 1 ? rb_ekf_create
                                                                                    : rb_ukf_create;
        cr_assert_eq(create(&o, &f, NULL), RB_OK);
        rb_alloc_fail_after(-1);
        step_many(f, s.m, 10000);
        double K[6 * 4], S[16], nees;
        cr_assert_eq(rb_filter_gain(f, K, NULL), RB_OK);
        cr_assert_eq(rb_filter_innovation_cov(f, S, NULL), RB_OK);
        rb_err nerr;
        cr_assert_eq(rb_filter_nees(f, s.x0, &nees, &nerr), RB_OK, "kind %d: %s", kind, nerr.msg);
        long made = rb_alloc_fail_after(-1);
        cr_assert_eq(made, 0, "kind %d: %ld allocations in 10,000 steps", kind, made);
        rb_filter_diag d;
        rb_filter_get_diag(f, &d);
        cr_assert_eq(d.predicts, 10000);
        cr_assert(d.gated_elements + d.gated_updates > 0);
        rb_filter_free(f);
    }
}

Test(filters, create_survives_every_allocation_failure)
{
    fs_linear s;
    fs_linear_make(&s, 3, 2, 91);
    rb_filter_opts o;
    fs_linear_opts(&s, &o);
    o.gate.mode = RB_GATE_VECTOR;
    o.gate.probability = 0.99;
    for (int kind = 0; kind < 3; kind++) {
        int (*create)(const rb_filter_opts *, rb_filter **, rb_err *) = kind == 0   ? rb_kf_create
                                                                        : kind == 1 ? rb_ekf_create
                                                                                    : rb_ukf_create;
        int rc = RB_ENOMEM;
        long i;
        for (i = 0; i < 20 && rc == RB_ENOMEM; i++) {
            rb_filter *f;
            rb_alloc_fail_after(i);
            rc = create(&o, &f, NULL);
            rb_alloc_fail_after(-1);
            if (rc == RB_OK)
                rb_filter_free(f);
            else
                cr_assert_null(f);
        }
        cr_assert_eq(rc, RB_OK);
        cr_assert(i >= 2);
    }
}
