/* The EKF's post-update projection (rb_filter_opts.project): called with the updated state and covariance after
 * every update that changed them, never after an empty or rejected one; what it writes persists; its error fails the
 * update and leaves x and P as before; refused for the KF and the UKF. The model is the attitude EKF's: a
 * quaternion q (4) propagated by a constant rate, measured directly (h = q), which the linear update takes off the
 * unit sphere. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "roboest/core.h"
#include "roboest/filters.h"

typedef struct hook_log {
    int calls;
    double x_seen[4], P_seen[16]; /* what the last call got */
    bool project;                 /* normalize (and project P); false: only record */
    int fail_at;                  /* the call (1-based) that returns RB_ENUMERIC; 0: none */
    bool write_nan;               /* write a NaN into x */
} hook_log;

static const double w_rate[3] = {0.3, -0.2, 0.5}; /* rad/s */

/* q+ = (I + dt/2 Omega(w)) q, Omega(w) the quaternion-rate matrix of a body rate w (w x y z order) */
static void omega_step(double dt, double *F)
{
    double a = 0.5 * dt, wx = w_rate[0] * a, wy = w_rate[1] * a, wz = w_rate[2] * a;
    const double M[16] = {1, -wx, -wy, -wz, wx, 1, wz, -wy, wy, -wz, 1, wx, wz, wy, -wx, 1};
    memcpy(F, M, sizeof M);
}

static int q_f(void *user, const double *x, const double *u, double dt, double *out, rb_err *err)
{
    (void)user, (void)u, (void)err;
    double F[16];
    omega_step(dt, F);
    for (int i = 0; i < 4; i++)
        out[i] = F[4 * i] * x[0] + F[4 * i + 1] * x[1] + F[4 * i + 2] * x[2] + F[4 * i + 3] * x[3];
    return RB_OK;
}

static int q_jf(void *user, const double *x, const double *u, double dt, double *F, rb_err *err)
{
    (void)user, (void)x, (void)u, (void)err;
    omega_step(dt, F);
    return RB_OK;
}

static int q_h(void *user, const double *x, double *z, rb_err *err)
{
    (void)user, (void)err;
    memcpy(z, x, 4 * sizeof *x);
    return RB_OK;
}

/* x /= |x|, P = J P J^T with J = (I - u u^T) / |x|, u = x / |x| */
static int normalize_hook(void *user, double *x, double *P, rb_err *err)
{
    hook_log *h = user;
    h->calls++;
    memcpy(h->x_seen, x, sizeof h->x_seen);
    memcpy(h->P_seen, P, sizeof h->P_seen);
    if (h->fail_at == h->calls)
        return rb_err_set(err, RB_ENUMERIC, "quaternion norm %g", sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]));
    if (h->write_nan)
        x[2] = NAN;
    if (!h->project)
        return RB_OK;
    double nrm = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]), J[16], T[16];
    for (int i = 0; i < 4; i++)
        x[i] /= nrm;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            J[4 * i + j] = ((i == j) - x[i] * x[j]) / nrm;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            T[4 * i + j] = 0;
            for (int k = 0; k < 4; k++)
                T[4 * i + j] += J[4 * i + k] * P[4 * k + j];
        }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            P[4 * i + j] = 0;
            for (int k = 0; k < 4; k++)
                P[4 * i + j] += T[4 * i + k] * J[4 * j + k];
        }
    return RB_OK;
}

static rb_filter *make(rb_filter_kind kind, hook_log *h, rb_filter_gate gate)
{
    static const double x0[4] = {1, 0, 0, 0};
    static const double P0[16] = {0.01, 0, 0, 0, 0, 0.01, 0, 0, 0, 0, 0.01, 0, 0, 0, 0, 0.01};
    static const double Q[16] = {1e-6, 0, 0, 0, 0, 1e-6, 0, 0, 0, 0, 1e-6, 0, 0, 0, 0, 1e-6};
    static const double R[16] = {1e-3, 0, 0, 0, 0, 1e-3, 0, 0, 0, 0, 1e-3, 0, 0, 0, 0, 1e-3};
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = 4, o.m = 4, o.x0 = x0, o.P0 = P0, o.Q = Q, o.R = R;
    o.f = q_f, o.h = q_h, o.jac_f = q_jf, o.F = P0, o.H = P0;
    o.user = h;
    o.project = h ? normalize_hook : NULL;
    o.gate = gate;
    rb_filter *f = NULL;
    rb_err err;
    int rc = kind == RB_FILTER_EKF ? rb_ekf_create(&o, &f, &err) : RB_OK;
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    return f;
}

static double norm4(const double *x) { return sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]); }

/* A measurement off the unit sphere (scaled by 1.3) of the true rotation after k steps. */
static void measurement(int k, double dt, double z[4])
{
    double a = 0.5 * k * dt, w = sqrt(w_rate[0] * w_rate[0] + w_rate[1] * w_rate[1] + w_rate[2] * w_rate[2]);
    z[0] = 1.3 * cos(a * w);
    for (int i = 0; i < 3; i++)
        z[i + 1] = 1.3 * sin(a * w) * w_rate[i] / w;
}

Test(filters_ekf_hook, projection_sees_the_update_and_what_it_writes_persists)
{
    hook_log h = {.project = true};
    rb_filter *with = make(RB_FILTER_EKF, &h, (rb_filter_gate){0});
    rb_filter *plain = make(RB_FILTER_EKF, NULL, (rb_filter_gate){0});
    rb_err err;
    double dt = 0.01, z[4];
    for (int k = 1; k <= 50; k++) {
        measurement(k, dt, z);
        /* the plain filter restarts from the projected state: its update is what the hook must see */
        cr_assert_eq(rb_filter_set_state(plain, rb_filter_x(with), rb_filter_P(with), &err), RB_OK);
        cr_assert_eq(rb_filter_predict(with, NULL, dt, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_filter_predict(plain, NULL, dt, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_filter_update(with, z, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_filter_update(plain, z, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(h.calls, k);
        const double *xp = rb_filter_x(plain), *Pp = rb_filter_P(plain), *x = rb_filter_x(with), *P = rb_filter_P(with);
        for (int i = 0; i < 4; i++)
            cr_assert_float_eq(h.x_seen[i], xp[i], 1e-14, "step %d: the hook saw x[%d] %g, the update gave %g", k, i,
                               h.x_seen[i], xp[i]);
        for (int i = 0; i < 16; i++)
            cr_assert_float_eq(h.P_seen[i], Pp[i], 1e-14);
        /* the measurement pulls the plain update off the sphere; the projected one stays on it */
        cr_assert(fabs(norm4(xp) - 1) > 1e-4, "step %d: |x| %g", k, norm4(xp));
        cr_assert_float_eq(norm4(x), 1.0, 1e-14, "step %d: |x| %.17g", k, norm4(x));
        /* P q = 0: the covariance projected onto the sphere's tangent space */
        for (int i = 0; i < 4; i++) {
            double s = 0;
            for (int j = 0; j < 4; j++)
                s += P[4 * i + j] * x[j];
            cr_assert(fabs(s) < 1e-12 * P[4 * i + i] + 1e-18, "step %d: (P q)[%d] = %g", k, i, s);
        }
        rb_filter_diag d;
        rb_filter_get_diag(with, &d);
        for (int i = 0; i < 4; i++)
            cr_assert_eq(d.P_diag[i], P[4 * i + i], "the diagnostics' P diagonal is the projected one");
    }
    rb_filter_free(with), rb_filter_free(plain);
}

Test(filters_ekf_hook, not_called_without_a_state_change)
{
    hook_log h = {.project = true};
    rb_filter_gate gate = {.mode = RB_GATE_VECTOR, .threshold = 10.0};
    rb_filter *f = make(RB_FILTER_EKF, &h, gate);
    rb_err err;
    const double nan4[4] = {NAN, NAN, NAN, NAN}, far[4] = {-1, 0.5, 0.5, 0.5};
    cr_assert_eq(rb_filter_predict(f, NULL, 0.01, &err), RB_OK);
    cr_assert_eq(rb_filter_update(f, nan4, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(h.calls, 0, "every element missing: no update, no projection");
    cr_assert_eq(rb_filter_update(f, far, &err), RB_OK, "%s", err.msg);
    rb_filter_diag d;
    rb_filter_get_diag(f, &d);
    cr_assert(d.rejected);
    cr_assert_eq(h.calls, 0, "a rejected update: no projection");
    double z[4];
    measurement(1, 0.01, z);
    cr_assert_eq(rb_filter_update(f, z, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(h.calls, 1);
    rb_filter_free(f);
}

Test(filters_ekf_hook, an_error_fails_the_update_and_keeps_the_state)
{
    hook_log h = {.project = true, .fail_at = 2};
    rb_filter *f = make(RB_FILTER_EKF, &h, (rb_filter_gate){0});
    rb_err err;
    double z[4], x[4], P[16];
    for (int k = 1; k <= 2; k++) {
        measurement(k, 0.01, z);
        cr_assert_eq(rb_filter_predict(f, NULL, 0.01, &err), RB_OK);
        memcpy(x, rb_filter_x(f), sizeof x);
        memcpy(P, rb_filter_P(f), sizeof P);
        int rc = rb_filter_update(f, z, &err);
        if (k == 1) {
            cr_assert_eq(rc, RB_OK, "%s", err.msg);
            continue;
        }
        cr_assert_eq(rc, RB_ENUMERIC);
        cr_assert(strstr(err.msg, "ekf update, step 2: projection: quaternion norm"), "%s", err.msg);
        cr_assert_eq(memcmp(x, rb_filter_x(f), sizeof x), 0, "x left as before the update");
        cr_assert_eq(memcmp(P, rb_filter_P(f), sizeof P), 0, "P left as before the update");
    }
    rb_filter_free(f);

    hook_log bad = {.write_nan = true};
    f = make(RB_FILTER_EKF, &bad, (rb_filter_gate){0});
    cr_assert_eq(rb_filter_predict(f, NULL, 0.01, &err), RB_OK);
    memcpy(x, rb_filter_x(f), sizeof x);
    measurement(1, 0.01, z);
    cr_assert_eq(rb_filter_update(f, z, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "ekf update, step 1: projected state element 2 is not finite"), "%s", err.msg);
    cr_assert_eq(memcmp(x, rb_filter_x(f), sizeof x), 0);
    rb_filter_free(f);
}

Test(filters_ekf_hook, refused_by_the_kf_and_the_ukf)
{
    static const double I4[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    hook_log h = {0};
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = 4, o.m = 4, o.P0 = I4, o.R = I4, o.F = I4, o.H = I4, o.f = q_f, o.h = q_h;
    o.user = &h, o.project = normalize_hook;
    rb_filter *f = NULL;
    rb_err err;
    cr_assert_eq(rb_kf_create(&o, &f, &err), RB_EINVAL);
    cr_assert_null(f);
    cr_assert(strstr(err.msg, "kf create: project is for the EKF only"), "%s", err.msg);
    cr_assert_eq(rb_ukf_create(&o, &f, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "ukf create: project is for the EKF only"), "%s", err.msg);
    cr_assert_eq(rb_ekf_create(&o, &f, &err), RB_OK, "%s", err.msg);
    rb_filter_free(f);
}
