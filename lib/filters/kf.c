/* Linear Kalman filter: x = F x + B u, P = F P F^T + Q; the update is the shared path of filter.c
 * with zhat = H x. */
#include <string.h>

#include "filters_internal.h"

void rb_filt_linear_cov_predict(rb_filter *f)
{
    size_t n = f->n;
    /* Fc = F column-major (a transposed copy of the row-major F); T = Fc P^T = F P; Pn = T Fc^T + Q.
     * X Y^T products only: see linear_measure in filter.c. */
    double *Fc = f->A;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            Fc[i + j * n] = f->F[i * n + j];
    rb_filt_gemm_nt(n, n, n, 1.0, Fc, n, f->P, n, 0.0, f->T, n);
    memcpy(f->Pn, f->Q, n * n * sizeof(double));
    rb_filt_gemm_nt(n, n, n, 1.0, f->T, n, Fc, n, 1.0, f->Pn, n);
    rb_filt_symmetrize(f->Pn, n);
}

static int kf_predict(rb_filter *f, const double *u, double dt, long step, rb_err *err)
{
    (void)dt;
    (void)step;
    (void)err;
    size_t n = f->n;
    rb_filt_gemv_rows(n, n, 1.0, f->F, n, f->x, 0.0, f->xn);
    if (u && f->nu > 0)
        rb_filt_gemv_rows(n, f->nu, 1.0, f->B, f->nu, u, 1.0, f->xn);
    rb_filt_linear_cov_predict(f);
    return RB_OK;
}

/* zhat = H x, H as given */
static int kf_measure(rb_filter *f, const double *z, long step, rb_err *err)
{
    (void)z;
    (void)step;
    (void)err;
    rb_filt_gemv_rows(f->m, f->n, 1.0, f->H, f->n, f->x, 0.0, f->zhat);
    return RB_OK;
}

static const rb_filt_ops kf_ops = {kf_predict, kf_measure, NULL, NULL, NULL};

int rb_kf_create(const rb_filter_opts *o, rb_filter **out, rb_err *err)
{
    return rb_filt_alloc(o, RB_FILTER_KF, &kf_ops, out, err);
}
