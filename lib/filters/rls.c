/* Recursive least squares with forgetting (a Kalman update of the parameters, shared KF code) and batch
 * least squares through LAPACK's QR (dgels). See roboest/filters.h. */
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "roboest/filters.h"

struct rb_rls {
    size_t p, m;
    double lambda;
    rb_filter *kf;    /* state theta (p), measurement y (m), R = I_m; predict is never called */
    double *P_save;   /* p x p: P before the update (restored on failure) */
    double *P_scaled; /* p x p: P / lambda */
    double *residual; /* m */
    double block[];
};

void rb_rls_free(rb_rls *r)
{
    if (!r)
        return;
    rb_filter_free(r->kf);
    rb_free(r);
}

int rb_rls_create(const rb_rls_opts *o, rb_rls **out, rb_err *err)
{
    if (!out)
        return rb_err_set(err, RB_EINVAL, "rls: out is NULL");
    *out = NULL;
    if (!o || !o->p || !o->m)
        return rb_err_set(err, RB_EINVAL, "rls: p and m must be at least 1");
    double lambda = o->lambda == 0 ? 1.0 : o->lambda, delta = o->delta == 0 ? 1e6 : o->delta;
    if (!(lambda > 0 && lambda <= 1))
        return rb_err_set(err, RB_EINVAL, "rls: the forgetting factor must be in (0, 1], got %g", o->lambda);
    if (!o->P0 && !(delta > 0 && isfinite(delta)))
        return rb_err_set(err, RB_EINVAL, "rls: delta must be finite and > 0, got %g", o->delta);
    size_t p = o->p, m = o->m, pp, mp, mm, count;
    if (!rb_size_mul(p, p, &pp) || !rb_size_mul(m, p, &mp) || !rb_size_mul(m, m, &mm) || pp > SIZE_MAX / 8 ||
        mp > SIZE_MAX / 8 || mm > SIZE_MAX / 8 || m > SIZE_MAX / 8)
        return rb_err_set(err, RB_ENOMEM, "rls: dimensions %zu x %zu are too large", p, m);
    count = 2 * pp + m;
    if (count > (SIZE_MAX - sizeof(rb_rls)) / sizeof(double))
        return rb_err_set(err, RB_ENOMEM, "rls: dimensions %zu x %zu are too large", p, m);
    rb_rls *r = rb_calloc(1, sizeof *r + count * sizeof(double));
    /* create-time scratch: F = I (p x p), P0 (p x p), H = 0 (m x p), R = I_m */
    double *scratch = rb_calloc(2 * pp + mp + mm, sizeof(double));
    if (!r || !scratch) {
        rb_free(r);
        rb_free(scratch);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    r->p = p, r->m = m, r->lambda = lambda;
    r->P_save = r->block;
    r->P_scaled = r->P_save + pp;
    r->residual = r->P_scaled + pp;
    double *F = scratch, *P0 = F + pp, *H = P0 + pp, *R = H + mp;
    for (size_t i = 0; i < p; i++)
        for (size_t j = 0; j < p; j++) {
            F[i * p + j] = i == j;
            P0[i * p + j] = o->P0 ? o->P0[i * p + j] : (i == j ? delta : 0.0);
        }
    for (size_t i = 0; i < m; i++)
        R[i * m + i] = 1.0;
    rb_filter_opts fo;
    rb_filter_opts_init(&fo);
    fo.n = p, fo.m = m, fo.nu = 0;
    fo.x0 = o->theta0, fo.P0 = P0, fo.R = R, fo.F = F, fo.H = H;
    int rc = rb_kf_create(&fo, &r->kf, err);
    rb_free(scratch);
    if (rc) {
        rb_err_prefix(err, rc, "rls: ");
        rb_rls_free(r);
        return rc;
    }
    for (size_t i = 0; i < m; i++)
        r->residual[i] = NAN;
    *out = r;
    return RB_OK;
}

int rb_rls_update(rb_rls *r, const double *Phi, const double *y, rb_err *err)
{
    if (!r || !Phi || !y)
        return rb_err_set(err, RB_EINVAL, "rls: NULL argument");
    size_t p = r->p, m = r->m;
    rb_filter_diag d;
    rb_filter_get_diag(r->kf, &d);
    for (size_t i = 0; i < p * m; i++)
        if (!isfinite(Phi[i]))
            return rb_err_set(err, RB_ENUMERIC, "rls: update %ld: regressor element (%zu, %zu) is not finite",
                              d.updates + 1, i / m, i % m);
    rb_filter_mats mats = rb_filter_get_mats(r->kf);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < p; j++)
            *rb_mat_at(&mats.H, i, j) = Phi[j * m + i];
    const double *P = rb_filter_P(r->kf);
    if (r->lambda != 1.0) {
        memcpy(r->P_save, P, p * p * sizeof *P);
        double s = 1.0 / r->lambda;
        for (size_t i = 0; i < p * p; i++)
            r->P_scaled[i] = s * r->P_save[i];
        int rc = rb_filter_set_state(r->kf, NULL, r->P_scaled, err);
        if (rc)
            return rc;
    }
    int rc = rb_filter_update(r->kf, y, err);
    if (rc) {
        if (r->lambda != 1.0)
            rb_filter_set_state(r->kf, NULL, r->P_save, NULL);
        return rb_err_prefix(err, rc, "rls: ");
    }
    rb_filter_get_diag(r->kf, &d);
    memcpy(r->residual, d.innovation, m * sizeof *r->residual);
    return RB_OK;
}

int rb_rls_reset(rb_rls *r, const double *theta, const double *P, rb_err *err)
{
    if (!r)
        return rb_err_set(err, RB_EINVAL, "rls: NULL argument");
    int rc = rb_filter_set_state(r->kf, theta, P, err);
    return rc ? rb_err_prefix(err, rc, "rls: ") : RB_OK;
}

const double *rb_rls_theta(const rb_rls *r) { return rb_filter_x(r->kf); }
const double *rb_rls_P(const rb_rls *r) { return rb_filter_P(r->kf); }
const double *rb_rls_residual(const rb_rls *r) { return r->residual; }

/* ---- batch ---------------------------------------------------------------------------------- */

/* QR least squares of the stacked regressor: on success *A holds the column-major (N m) x p factor
 * (R in its upper triangle, leading dimension N m) and b (N m) the solution in its first p values and
 * the residuals' Q^T image after them. Caller frees *A and *b. */
static int qr_solve(const double *Phi, const double *y, size_t N, size_t p, size_t m, double **A_out, double **b_out,
                    rb_err *err)
{
    *A_out = *b_out = NULL;
    if (!Phi || !y || !N || !p || !m)
        return rb_err_set(err, RB_EINVAL, "least squares: empty problem or NULL data");
    size_t rows, size;
    if (!rb_size_mul(N, m, &rows) || !rb_size_mul(rows, p, &size) || size > SIZE_MAX / sizeof(double) ||
        rows > (size_t)INT32_MAX || p > (size_t)INT32_MAX)
        return rb_err_set(err, RB_ENOMEM, "least squares: %zu x %zu regressor is too large", N * m, p);
    if (rows < p)
        return rb_err_set(err, RB_EDIM, "least squares: %zu equations for %zu parameters", rows, p);
    for (size_t i = 0; i < size; i++)
        if (!isfinite(Phi[i]))
            return rb_err_set(err, RB_ENUMERIC, "least squares: sample %zu: regressor element (%zu, %zu) is not finite",
                              i / (p * m), i % (p * m) / m, i % m);
    for (size_t i = 0; i < rows; i++)
        if (!isfinite(y[i]))
            return rb_err_set(err, RB_ENUMERIC, "least squares: sample %zu: output %zu is not finite", i / m, i % m);
    double *A = rb_malloc(size * sizeof *A), *b = rb_malloc(rows * sizeof *b), query;
    if (!A || !b) {
        rb_free(A);
        rb_free(b);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < N; k++)
        for (size_t j = 0; j < p; j++)
            for (size_t i = 0; i < m; i++)
                A[j * rows + k * m + i] = Phi[(k * p + j) * m + i];
    memcpy(b, y, rows * sizeof *b);
    lapack_int M = (lapack_int)rows, P = (lapack_int)p;
    lapack_int info = LAPACKE_dgels_work(LAPACK_COL_MAJOR, 'N', M, P, 1, A, M, b, M, &query, -1);
    double *work = info == 0 ? rb_malloc(((size_t)query + 1) * sizeof *work) : NULL;
    if (!work) {
        rb_free(A);
        rb_free(b);
        return info ? rb_err_set(err, RB_EINVAL, "least squares: LAPACK dgels workspace query failed (info %d)",
                                 (int)info)
                    : rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    info = LAPACKE_dgels_work(LAPACK_COL_MAJOR, 'N', M, P, 1, A, M, b, M, work, (lapack_int)query);
    rb_free(work);
    double rmax = 0;
    for (size_t j = 0; j < p; j++)
        rmax = fmax(rmax, fabs(A[j * rows + j]));
    for (size_t j = 0; info >= 0 && j < p; j++)
        if (!(fabs(A[j * rows + j]) > 1e-12 * rmax)) {
            info = (lapack_int)j + 1;
            break;
        }
    if (info != 0) {
        rb_free(A);
        rb_free(b);
        if (info < 0)
            return rb_err_set(err, RB_EINVAL, "least squares: LAPACK dgels argument %d", (int)-info);
        return rb_err_set(err, RB_ENUMERIC,
                          "least squares: the regressor is rank deficient (parameter %d is not determined by the data)",
                          (int)info - 1);
    }
    *A_out = A;
    *b_out = b;
    return RB_OK;
}

int rb_lstsq(const double *Phi, const double *y, size_t N, size_t p, size_t m, double *theta, double *rss, rb_err *err)
{
    if (!theta)
        return rb_err_set(err, RB_EINVAL, "least squares: theta is NULL");
    double *A, *b;
    int rc = qr_solve(Phi, y, N, p, m, &A, &b, err);
    if (rc)
        return rc;
    memcpy(theta, b, p * sizeof *theta);
    if (rss) {
        double s = 0;
        for (size_t i = p; i < N * m; i++)
            s += b[i] * b[i];
        *rss = s;
    }
    rb_free(A);
    rb_free(b);
    return RB_OK;
}

int rb_rls_init_batch(rb_rls *r, const double *Phi, const double *y, size_t N, rb_err *err)
{
    if (!r)
        return rb_err_set(err, RB_EINVAL, "rls: NULL argument");
    size_t p = r->p, rows = N * r->m;
    double *A, *b;
    int rc = qr_solve(Phi, y, N, p, r->m, &A, &b, err);
    if (rc)
        return rb_err_prefix(err, rc, "rls: ");
    /* R^T R = sum Phi_k Phi_k^T; dpotri on the triangular factor gives its inverse. */
    lapack_int info = LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'U', (lapack_int)p, A, (lapack_int)rows);
    if (info != 0) {
        rb_free(A);
        rb_free(b);
        return rb_err_set(err, RB_ENUMERIC, "rls: batch start: inverting R^T R failed (LAPACK dpotri info %d)",
                          (int)info);
    }
    double *P = r->P_scaled;
    for (size_t i = 0; i < p; i++)
        for (size_t j = i; j < p; j++)
            P[i * p + j] = P[j * p + i] = A[j * rows + i];
    rc = rb_filter_set_state(r->kf, b, P, err);
    rb_free(A);
    rb_free(b);
    return rc ? rb_err_prefix(err, rc, "rls: ") : RB_OK;
}
