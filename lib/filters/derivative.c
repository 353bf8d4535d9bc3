/* The constant-acceleration derivative filter of the joint-torque paper (eq. 3; roboest/filters.h): one element's
 * 3-state KF on the module's linear KF, stepped on the clock's actual intervals. */
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "roboest/filters.h"

void rb_kfd_model(const rb_kfd_params *par, double dt, double F[9], double Q[9])
{
    double dt2 = dt * dt, dt3 = dt2 * dt, dt4 = dt3 * dt, dt5 = dt4 * dt;
    const double f[9] = {1, dt, dt2 / 2, 0, 1, dt, 0, 0, 1};
    memcpy(F, f, sizeof f);
    if (par->noise == RB_KFD_DIAGONAL) {
        memset(Q, 0, 9 * sizeof *Q);
        Q[0] = par->q_diag[0], Q[4] = par->q_diag[1], Q[8] = par->q_diag[2];
        return;
    }
    double q = par->q;
    const double g[9] = {dt5 / 20, dt4 / 8, dt3 / 6, dt4 / 8, dt3 / 3, dt2 / 2, dt3 / 6, dt2 / 2, dt};
    for (int i = 0; i < 9; i++)
        Q[i] = q * g[i];
}

double rb_kfd_time_constant(const rb_kfd_params *par, double dt)
{
    if (!(dt > 0) || !isfinite(dt))
        return INFINITY;
    double F[9], Q[9], P[9] = {par->p0[0], 0, 0, 0, par->p0[1], 0, 0, 0, par->p0[2]}, K[3] = {0, 0, 0};
    rb_kfd_model(par, dt, F, Q);
    bool steady = false;
    for (int it = 0; it < 1000000 && !steady; it++) {
        double FP[9], M[9], Kn[3];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                FP[3 * i + j] = F[3 * i] * P[j] + F[3 * i + 1] * P[3 + j] + F[3 * i + 2] * P[6 + j];
        for (int i = 0; i < 3; i++) /* M = F P F' + Q */
            for (int j = 0; j < 3; j++)
                M[3 * i + j] =
                    FP[3 * i] * F[3 * j] + FP[3 * i + 1] * F[3 * j + 1] + FP[3 * i + 2] * F[3 * j + 2] + Q[3 * i + j];
        double S = M[0] + par->r, change = 0;
        for (int i = 0; i < 3; i++) {
            Kn[i] = M[3 * i] / S;
            change = fmax(change, fabs(Kn[i] - K[i]) / fmax(fabs(Kn[i]), DBL_MIN));
            K[i] = Kn[i];
        }
        for (int i = 0; i < 3; i++) /* P = M - K M[0, :] */
            for (int j = 0; j < 3; j++)
                P[3 * i + j] = M[3 * i + j] - K[i] * M[j];
        steady = it > 0 && change < 1e-12;
    }
    if (!steady)
        return INFINITY;
    double A[9], wr[3], wi[3];
    for (int i = 0; i < 3; i++) /* (I - K H) F with H = [1 0 0] */
        for (int j = 0; j < 3; j++)
            A[3 * i + j] = F[3 * i + j] - K[i] * F[j];
    if (LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', 'N', 3, A, 3, wr, wi, NULL, 1, NULL, 1) != 0)
        return INFINITY;
    double rho = 0;
    for (int i = 0; i < 3; i++)
        rho = fmax(rho, hypot(wr[i], wi[i]));
    return rho < 1 ? (rho > 0 ? -dt / log(rho) : 0.0) : INFINITY;
}

int rb_kfd_init(rb_kfd *e, const rb_kfd_params *par, rb_err *err)
{
    memset(e, 0, sizeof *e);
    e->par = *par;
    double F[9], Q[9], H[3] = {1, 0, 0}, R = par->r;
    double P0[9] = {par->p0[0], 0, 0, 0, par->p0[1], 0, 0, 0, par->p0[2]};
    rb_kfd_model(par, 0.0, F, Q);
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = 3, o.m = 1, o.nu = 0;
    o.P0 = P0, o.Q = Q, o.R = &R, o.F = F, o.H = H;
    return rb_kf_create(&o, &e->f, err);
}

void rb_kfd_free(rb_kfd *e)
{
    rb_filter_free(e->f);
    e->f = NULL;
}

/* Step to time t with measurement z (NaN: predict only). Allocates nothing. */
int rb_kfd_step(rb_kfd *e, double t, double z, rb_kfd_result *o, rb_err *err)
{
    bool starting = !e->started;
    if (starting) {
        if (!isfinite(z)) {
            o->x[0] = o->x[1] = o->x[2] = o->innovation = o->nis = NAN;
            o->var[0] = o->var[1] = o->var[2] = NAN;
            return RB_OK;
        }
        double x0[3] = {z, 0, 0}, P0[9] = {e->par.p0[0], 0, 0, 0, e->par.p0[1], 0, 0, 0, e->par.p0[2]};
        int rc = rb_filter_set_state(e->f, x0, P0, err);
        if (rc == RB_OK)
            rc = rb_filter_update(e->f, &z, err);
        if (rc)
            return rc;
        e->started = true;
    } else {
        double dt = t - e->t_prev;
        if (!(dt > 0) || !isfinite(dt))
            return rb_err_set(err, RB_EINPUT, "time %.17g s does not follow %.17g s", t, e->t_prev);
        if (dt != e->dt) {
            rb_filter_mats m = rb_filter_get_mats(e->f);
            double F[9], Q[9];
            rb_kfd_model(&e->par, dt, F, Q);
            for (size_t i = 0; i < 3; i++)
                for (size_t j = 0; j < 3; j++) {
                    *rb_mat_at(&m.F, i, j) = F[i * 3 + j];
                    *rb_mat_at(&m.Q, i, j) = Q[i * 3 + j];
                }
            e->dt = dt;
        }
        int rc = rb_filter_predict(e->f, NULL, dt, err);
        if (rc == RB_OK)
            rc = rb_filter_update(e->f, &z, err);
        if (rc)
            return rc;
    }
    e->t_prev = t;
    rb_filter_diag d;
    rb_filter_get_diag(e->f, &d);
    memcpy(o->x, rb_filter_x(e->f), sizeof o->x);
    memcpy(o->var, d.P_diag, sizeof o->var);
    /* the start's update is against s = [z, 0, 0] itself: an innovation of 0 that predicts nothing */
    o->innovation = starting ? NAN : d.innovation[0];
    o->nis = starting ? NAN : d.nis;
    return RB_OK;
}

int rb_kfd_check(const rb_kfd_params *par, rb_err *err)
{
    bool ok = par && isfinite(par->r) && par->r > 0;
    for (int i = 0; ok && i < 3; i++)
        ok = isfinite(par->p0[i]) && par->p0[i] > 0 && isfinite(par->q_diag[i]) && par->q_diag[i] >= 0;
    ok = ok && (par->noise == RB_KFD_DIAGONAL || (isfinite(par->q) && par->q >= 0));
    return ok ? RB_OK
              : rb_err_set(err, RB_EINVAL, "kf_derivative: needs r > 0, p0 > 0, q >= 0 and q_diag >= 0, all finite");
}

int rb_kfd_run(const rb_kfd_params *par, const double *t, const double *z, size_t T, double *x, double *x_dot,
               double *x_ddot, double *pred, rb_err *err)
{
    if (!t || !z)
        return rb_err_set(err, RB_EINVAL, "kf_derivative: NULL time or signal");
    int rc = rb_kfd_check(par, err);
    if (rc)
        return rc;
    rb_kfd e;
    rc = rb_kfd_init(&e, par, err);
    for (size_t k = 0; rc == RB_OK && k < T; k++) {
        rb_kfd_result o;
        rc = rb_kfd_step(&e, t[k], z[k], &o, err);
        if (rc) {
            rb_err_prefix(err, rc, "kf_derivative: sample %zu: ", k);
            break;
        }
        if (x)
            x[k] = o.x[0];
        if (x_dot)
            x_dot[k] = o.x[1];
        if (x_ddot)
            x_ddot[k] = o.x[2];
        if (pred)
            pred[k] = o.innovation;
    }
    rb_kfd_free(&e);
    return rc;
}
