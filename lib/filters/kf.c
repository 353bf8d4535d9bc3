/* Linear Kalman filter: x = F x + B u, P = F P F^T + Q; the update is the shared path of filter.c
 * with zhat = H x. */
#include <cblas.h>
#include <string.h>

#include "filters_internal.h"

int rb_kf_create(const rb_filter_opts *o, rb_filter **out, rb_err *err)
{
    return rb_filt_alloc(o, RB_FILTER_KF, out, err);
}

void rb_filt_linear_cov_predict(rb_filter *f)
{
    size_t n = f->n;
    /* Fc = F column-major (a transposed copy of the row-major F); T = Fc P^T = F P; Pn = T Fc^T + Q.
     * X Y^T products only: see linear_measure in filter.c. */
    double *Fc = f->A;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            Fc[i + j * n] = f->F[i * n + j];
    int ni = (int)n;
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, ni, ni, ni, 1.0, Fc, ni, f->P, ni, 0.0, f->T, ni);
    memcpy(f->Pn, f->Q, n * n * sizeof(double));
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, ni, ni, ni, 1.0, f->T, ni, Fc, ni, 1.0, f->Pn, ni);
    rb_filt_symmetrize(f->Pn, n);
}

int rb_kf_predict_impl(rb_filter *f, const double *u, double dt, long step, rb_err *err)
{
    (void)dt;
    (void)step;
    (void)err;
    int n = (int)f->n;
    cblas_dgemv(CblasRowMajor, CblasNoTrans, n, n, 1.0, f->F, n, f->x, 1, 0.0, f->xn, 1);
    if (u && f->nu > 0)
        cblas_dgemv(CblasRowMajor, CblasNoTrans, n, (int)f->nu, 1.0, f->B, (int)f->nu, u, 1, 1.0, f->xn, 1);
    rb_filt_linear_cov_predict(f);
    return RB_OK;
}

int rb_kf_linearize(rb_filter *f, rb_err *err)
{
    (void)err;
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)f->m, (int)f->n, 1.0, f->H, (int)f->n, f->x, 1, 0.0, f->zhat, 1);
    return RB_OK;
}
