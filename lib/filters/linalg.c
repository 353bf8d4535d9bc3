/* Small dense helpers for the filters: Cholesky through LAPACK's non-allocating entry point,
 * symmetry upkeep, the UKF's covariance repair. */
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "filters_internal.h"

int rb_filt_chol(double *A, size_t n)
{
    /* Symmetric data: column-major needs no transposition, so the _work variant allocates nothing. */
    lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int)n, A, (lapack_int)n);
    return (int)info;
}

void rb_filt_mirror_lower(double *A, size_t n)
{
    for (size_t j = 0; j < n; j++)
        for (size_t i = j + 1; i < n; i++)
            A[j + i * n] = A[i + j * n];
}

void rb_filt_symmetrize(double *A, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        for (size_t i = j + 1; i < n; i++) {
            double v = 0.5 * (A[i + j * n] + A[j + i * n]);
            A[i + j * n] = v;
            A[j + i * n] = v;
        }
    }
}

size_t rb_filt_first_nonfinite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return i;
    return n;
}

int rb_filt_chol_P(rb_filter *f, const char *what, long step, rb_err *err)
{
    size_t n = f->n, n2 = n * n;
    memcpy(f->L, f->P, n2 * sizeof(double));
    int info = rb_filt_chol(f->L, n);
    if (info == 0)
        return RB_OK;
    /* Keep the caller's P to restore it if the repairs do not help. */
    memcpy(f->Pn, f->P, n2 * sizeof(double));
    rb_filt_symmetrize(f->P, n);
    memcpy(f->L, f->P, n2 * sizeof(double));
    info = rb_filt_chol(f->L, n);
    if (info == 0) {
        f->repairs++;
        for (size_t i = 0; i < n; i++)
            f->P_diag[i] = f->P[i * n + i];
        return RB_OK;
    }
    double eps = 0.0;
    if (f->jitter > 0.0) {
        double tr = 0.0;
        for (size_t i = 0; i < n; i++)
            tr += f->P[i * n + i];
        eps = f->jitter * fmax(tr / (double)n, DBL_MIN);
        for (size_t i = 0; i < n; i++)
            f->P[i * n + i] += eps;
        memcpy(f->L, f->P, n2 * sizeof(double));
        info = rb_filt_chol(f->L, n);
        if (info == 0) {
            f->repairs += 2;
            for (size_t i = 0; i < n; i++)
                f->P_diag[i] = f->P[i * n + i];
            return RB_OK;
        }
    }
    memcpy(f->P, f->Pn, n2 * sizeof(double));
    f->fail = RB_FILTER_FAIL_P;
    f->fail_index = info > 0 ? (size_t)info - 1 : 0;
    return rb_err_set(err, RB_ENUMERIC,
                      "%s %s, step %ld: covariance P not positive definite after symmetrization and jitter %g "
                      "(LAPACK dpotrf: leading minor %d of %zu)",
                      f->name, what, step, eps, info, n);
}
