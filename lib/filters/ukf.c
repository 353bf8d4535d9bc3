/* Unscented Kalman filter with additive noise and scaled sigma points (Julier; Wan and van der
 * Merwe). Sigma points come from the lower Cholesky factor L of P (column-major, so column i of L,
 * the i-th spread direction, is contiguous); fresh ones are drawn from the predicted P for the
 * update. The update itself is the shared path of filter.c. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "filters_internal.h"

static int callback_failed(rb_filter *f, int rc, const char *phase, long step, const char *what, size_t j, rb_err *err)
{
    if (rc > 0)
        rc = rb_err_set(err, RB_EINVAL, "callback returned %d", rc);
    if (j == SIZE_MAX)
        rb_err_prefix(err, rc, "%s %s, step %ld: %s (sigma points in batch): ", f->name, phase, step, what);
    else
        rb_err_prefix(err, rc, "%s %s, step %ld: %s at sigma point %zu: ", f->name, phase, step, what, j);
    return rc;
}

/* Sigma point j (0 .. 2n) into xs: x, x + c L_i, x - c L_i. Only L's lower triangle is read. */
static void sigma_point(const rb_filter *f, size_t j, double *xs)
{
    size_t n = f->n;
    memcpy(xs, f->x, n * sizeof(double));
    if (j == 0)
        return;
    size_t col = (j - 1) % n;
    double s = j <= n ? f->c : -f->c;
    const double *l = f->L + col * n;
    for (size_t i = col; i < n; i++)
        xs[i] += s * l[i];
}

/* Every sigma point into X (n x N column-major). */
static void sigma_points(const rb_filter *f, double *X)
{
    for (size_t j = 0; j < f->N; j++)
        sigma_point(f, j, X + j * f->n);
}

/* mean (rows) = wm0 V_0 + wi sum_{j >= 1} V_j over the N columns of V (rows x N, column-major). */
static void weighted_mean(const rb_filter *f, const double *V, size_t rows, double *mean)
{
    memset(mean, 0, rows * sizeof(double));
    for (size_t j = 1; j < f->N; j++) {
        const double *v = V + j * rows;
        for (size_t i = 0; i < rows; i++)
            mean[i] += v[i];
    }
    for (size_t i = 0; i < rows; i++)
        mean[i] = f->wi * mean[i] + f->wm0 * V[i];
}

static int ukf_predict(rb_filter *f, const double *u, double dt, long step, rb_err *err)
{
    size_t n = f->n;
    int rc = rb_filt_chol_P(f, "predict", step, err);
    if (rc != RB_OK)
        return rc;
    if (f->f_batch) {
        sigma_points(f, f->X);
        if ((rc = f->f_batch(f->user, f->X, f->N, u, dt, f->Y, err)) != RB_OK)
            return callback_failed(f, rc, "predict", step, "process model", SIZE_MAX, err);
    } else {
        for (size_t j = 0; j < f->N; j++) {
            sigma_point(f, j, f->xs);
            if ((rc = f->f(f->user, f->xs, u, dt, f->Y + j * n, err)) != RB_OK)
                return callback_failed(f, rc, "predict", step, "process model", j, err);
        }
    }
    weighted_mean(f, f->Y, n, f->xn);
    for (size_t j = 0; j < f->N; j++) {
        double *v = f->Y + j * n;
        for (size_t i = 0; i < n; i++)
            v[i] -= f->xn[i];
    }
    /* Pn = Q + wi sum_{j >= 1} D_j D_j^T + wc0 D_0 D_0^T (lower triangle, then mirrored). */
    memcpy(f->Pn, f->Q, n * n * sizeof(double));
    rb_filt_syrk_ln(n, 2 * n, f->wi, f->Y + n, n, 1.0, f->Pn, n);
    if (f->wc0 != 0.0)
        rb_filt_syr_l(n, f->wc0, f->Y, f->Pn, n);
    rb_filt_mirror_lower(f->Pn, n);
    return RB_OK;
}

static int ukf_measure(rb_filter *f, const double *z, long step, rb_err *err)
{
    size_t n = f->n, m = f->m, k = f->k, N = f->N;
    int rc = rb_filt_chol_P(f, "update", step, err);
    if (rc != RB_OK)
        return rc;
    if (f->h_batch) {
        sigma_points(f, f->X);
        if ((rc = f->h_batch(f->user, f->X, N, f->Z, err)) != RB_OK)
            return callback_failed(f, rc, "update", step, "measurement model", SIZE_MAX, err);
    } else {
        for (size_t j = 0; j < N; j++) {
            sigma_point(f, j, f->xs);
            if ((rc = f->h(f->user, f->xs, f->Z + j * m, err)) != RB_OK)
                return callback_failed(f, rc, "update", step, "measurement model", j, err);
        }
    }
    weighted_mean(f, f->Z, m, f->zhat);
    for (size_t j = 0; j < k; j++) {
        if (!isfinite(f->zhat[f->idx[j]])) {
            f->fail = RB_FILTER_FAIL_Z, f->fail_index = f->idx[j];
            return rb_err_set(err, RB_ENUMERIC, "%s update, step %ld: predicted measurement element %zu is not finite",
                              f->name, step, f->idx[j]);
        }
    }
    rb_filt_innovation(f, z);

    /* Deviations Z_j - zhat, restricted to the used rows (compacted in place, ld k). */
    for (size_t j = 0; j < N; j++) {
        double *v = f->Z + j * m;
        for (size_t i = 0; i < m; i++)
            v[i] -= f->zhat[i];
        if (f->residual)
            f->residual(f->user, v);
    }
    if (k < m) {
        for (size_t j = 0; j < N; j++)
            for (size_t r = 0; r < k; r++)
                f->Z[r + j * k] = f->Z[f->idx[r] + j * m];
    }
    for (size_t b = 0; b < k; b++)
        for (size_t a = 0; a < k; a++)
            f->Rc[a + b * k] = f->R[f->idx[a] * m + f->idx[b]];

    /* S = R + wi sum_{j >= 1} Dz_j Dz_j^T + wc0 Dz_0 Dz_0^T (lower triangle). */
    memcpy(f->S, f->Rc, k * k * sizeof(double));
    rb_filt_syrk_ln(k, 2 * n, f->wi, f->Z + k, k, 1.0, f->S, k);
    if (f->wc0 != 0.0)
        rb_filt_syr_l(k, f->wc0, f->Z, f->S, k);

    /* C = sum_j Wc_j (X_j - x) Dz_j^T. X_0 - x = 0 and X_{i}, X_{n+i} - x = +-c L_i, so
     * C = c wi L E with E (n x k) row i = (Dz_{1+i} - Dz_{1+n+i})^T: one triangular product. */
    for (size_t r = 0; r < k; r++) {
        double *col = f->C + r * n;
        const double *zp = f->Z + k + r, *zm = f->Z + (n + 1) * k + r;
        for (size_t i = 0; i < n; i++)
            col[i] = zp[i * k] - zm[i * k];
    }
    rb_filt_trmm_lln(n, k, f->c * f->wi, f->L, n, f->C, n);
    return RB_OK;
}

static const rb_filt_ops ukf_ops = {ukf_predict, ukf_measure, NULL};

int rb_ukf_create(const rb_filter_opts *o, rb_filter **out, rb_err *err)
{
    return rb_filt_alloc(o, RB_FILTER_UKF, &ukf_ops, out, err);
}
