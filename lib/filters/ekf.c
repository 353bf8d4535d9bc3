/* Extended Kalman filter: x = f(x, u, dt), P = F P F^T + Q with F = df/dx at the prior state;
 * the update is the shared path of filter.c with zhat = h(x), H = dh/dx, then the caller's optional
 * projection. Jacobians come from the caller or from central differences. */
#include <math.h>
#include <string.h>

#include "filters_internal.h"

static int callback_failed(rb_filter *f, int rc, const char *phase, long step, const char *what, rb_err *err)
{
    if (rc > 0)
        rc = rb_err_set(err, RB_EINVAL, "callback returned %d", rc);
    rb_err_prefix(err, rc, "%s %s, step %ld: %s: ", f->name, phase, step, what);
    return rc;
}

/* Central differences: column j of J (rows x n, row-major) from g(x + h e_j) - g(x - h e_j) over the
 * exact difference of the two abscissae. g is f (with u, dt) when is_process, else h. */
static int central_differences(rb_filter *f, bool is_process, const double *u, double dt, size_t rows, double *J,
                               long step, rb_err *err)
{
    size_t n = f->n;
    double *xs = f->fd_x, *ga = f->fd_a, *gb = f->fd_b;
    memcpy(xs, f->x, n * sizeof(double));
    for (size_t j = 0; j < n; j++) {
        double xj = f->x[j];
        double h = f->fd_step * fmax(1.0, fabs(xj));
        double xp = xj + h, xm = xj - h;
        int rc;
        xs[j] = xp;
        rc = is_process ? f->f(f->user, xs, u, dt, ga, err) : f->h(f->user, xs, ga, err);
        if (rc == RB_OK) {
            xs[j] = xm;
            rc = is_process ? f->f(f->user, xs, u, dt, gb, err) : f->h(f->user, xs, gb, err);
        }
        xs[j] = xj;
        if (rc != RB_OK)
            return callback_failed(
                f, rc, is_process ? "predict" : "update", step,
                is_process ? "process model (finite differences)" : "measurement model (finite differences)", err);
        double inv = 1.0 / (xp - xm);
        for (size_t i = 0; i < rows; i++)
            J[i * n + j] = (ga[i] - gb[i]) * inv;
    }
    return RB_OK;
}

static int ekf_predict(rb_filter *f, const double *u, double dt, long step, rb_err *err)
{
    int rc;
    if (f->jac_f) {
        if ((rc = f->jac_f(f->user, f->x, u, dt, f->F, err)) != RB_OK)
            return callback_failed(f, rc, "predict", step, "process Jacobian", err);
    } else if ((rc = central_differences(f, true, u, dt, f->n, f->F, step, err)) != RB_OK) {
        return rc;
    }
    size_t bad = rb_filt_first_nonfinite(f->F, f->n * f->n);
    if (bad < f->n * f->n)
        return rb_err_set(err, RB_ENUMERIC, "%s predict, step %ld: process Jacobian element (%zu, %zu) is not finite",
                          f->name, step, bad / f->n, bad % f->n);
    if ((rc = f->f(f->user, f->x, u, dt, f->xn, err)) != RB_OK)
        return callback_failed(f, rc, "predict", step, "process model", err);
    rb_filt_linear_cov_predict(f);
    return RB_OK;
}

/* zhat = h(x), H = dh/dx */
static int ekf_measure(rb_filter *f, const double *z, long step, rb_err *err)
{
    (void)z;
    int rc;
    if ((rc = f->h(f->user, f->x, f->zhat, err)) != RB_OK)
        return callback_failed(f, rc, "update", step, "measurement model", err);
    if (f->jac_h) {
        if ((rc = f->jac_h(f->user, f->x, f->H, err)) != RB_OK)
            return callback_failed(f, rc, "update", step, "measurement Jacobian", err);
    } else if ((rc = central_differences(f, false, NULL, 0.0, f->m, f->H, step, err)) != RB_OK) {
        return rc;
    }
    /* Only the rows used matter, but a non-finite entry anywhere in them would poison S. */
    for (size_t j = 0; j < f->k; j++) {
        size_t bad = rb_filt_first_nonfinite(f->H + f->idx[j] * f->n, f->n);
        if (bad < f->n)
            return rb_err_set(err, RB_ENUMERIC,
                              "%s update, step %ld: measurement Jacobian element (%zu, %zu) is not finite", f->name,
                              step, f->idx[j], bad);
    }
    return RB_OK;
}

/* The caller's projection of the updated xn, Pn (before they replace x, P: a failure leaves the filter as it was). */
static int ekf_project(rb_filter *f, long step, rb_err *err)
{
    int rc = f->project(f->user, f->xn, f->Pn, err);
    if (rc != RB_OK)
        return callback_failed(f, rc, "update", step, "projection", err);
    size_t bad = rb_filt_first_nonfinite(f->xn, f->n);
    if (bad < f->n) {
        f->fail = RB_FILTER_FAIL_X, f->fail_index = bad;
        return rb_err_set(err, RB_ENUMERIC, "%s update, step %ld: projected state element %zu is not finite", f->name,
                          step, bad);
    }
    rb_filt_symmetrize(f->Pn, f->n);
    return RB_OK;
}

static const rb_filt_ops ekf_ops = {ekf_predict, ekf_measure, ekf_project, NULL, NULL};

int rb_ekf_create(const rb_filter_opts *o, rb_filter **out, rb_err *err)
{
    return rb_filt_alloc(o, RB_FILTER_EKF, &ekf_ops, out, err);
}
