/* Small dense helpers for the filters: the dense kernels of the per-step path (plain loops for small
 * dimensions, CBLAS / LAPACK's non-allocating entry points otherwise), symmetry upkeep, the UKF's
 * covariance repair. */
#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "filters_internal.h"

/* ---- dense kernels: the loops ------------------------------------------------------------------ */

void rb_filt_gemm_nt_loops(size_t m, size_t n, size_t k, double alpha, const double *A, size_t lda, const double *B,
                           size_t ldb, double beta, double *C, size_t ldc)
{
    for (size_t j = 0; j < n; j++) {
        for (size_t i = 0; i < m; i++) {
            double s = 0.0;
            for (size_t l = 0; l < k; l++)
                s += A[i + l * lda] * B[j + l * ldb];
            /* beta 0: C is not read (BLAS semantics), so stale NaNs in a workspace do not leak in. */
            C[i + j * ldc] = beta == 0.0 ? alpha * s : alpha * s + beta * C[i + j * ldc];
        }
    }
}

void rb_filt_gemv_loops(size_t m, size_t n, double alpha, const double *A, size_t lda, const double *x, double beta,
                        double *y)
{
    for (size_t i = 0; i < m; i++)
        y[i] = beta == 0.0 ? 0.0 : beta * y[i];
    for (size_t j = 0; j < n; j++) {
        double ax = alpha * x[j];
        for (size_t i = 0; i < m; i++)
            y[i] += A[i + j * lda] * ax;
    }
}

void rb_filt_gemv_rows_loops(size_t m, size_t n, double alpha, const double *A, size_t lda, const double *x,
                             double beta, double *y)
{
    for (size_t i = 0; i < m; i++) {
        double s = 0.0;
        for (size_t j = 0; j < n; j++)
            s += A[i * lda + j] * x[j];
        y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
    }
}

double rb_filt_dot_loops(size_t n, const double *x, const double *y)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}

void rb_filt_trsv_ln_loops(size_t n, const double *L, size_t ldl, double *x)
{
    for (size_t i = 0; i < n; i++) {
        double s = x[i];
        for (size_t l = 0; l < i; l++)
            s -= L[i + l * ldl] * x[l];
        x[i] = s / L[i + i * ldl];
    }
}

void rb_filt_trsm_rlt_loops(size_t m, size_t n, const double *L, size_t ldl, double *B, size_t ldb)
{
    /* X L^T = B column by column: B(:, j) = sum_{l <= j} X(:, l) L(j, l). */
    for (size_t j = 0; j < n; j++) {
        double *bj = B + j * ldb;
        for (size_t l = 0; l < j; l++) {
            double ljl = L[j + l * ldl];
            const double *xl = B + l * ldb;
            for (size_t i = 0; i < m; i++)
                bj[i] -= xl[i] * ljl;
        }
        double d = L[j + j * ldl];
        for (size_t i = 0; i < m; i++)
            bj[i] /= d;
    }
}

void rb_filt_trsm_rln_loops(size_t m, size_t n, const double *L, size_t ldl, double *B, size_t ldb)
{
    /* X L = B from the last column: B(:, j) = sum_{l >= j} X(:, l) L(l, j). */
    for (size_t j = n; j-- > 0;) {
        double *bj = B + j * ldb;
        for (size_t l = j + 1; l < n; l++) {
            double llj = L[l + j * ldl];
            const double *xl = B + l * ldb;
            for (size_t i = 0; i < m; i++)
                bj[i] -= xl[i] * llj;
        }
        double d = L[j + j * ldl];
        for (size_t i = 0; i < m; i++)
            bj[i] /= d;
    }
}

void rb_filt_syrk_ln_loops(size_t n, size_t k, double alpha, const double *A, size_t lda, double beta, double *C,
                           size_t ldc)
{
    for (size_t j = 0; j < n; j++) {
        for (size_t i = j; i < n; i++) {
            double s = 0.0;
            for (size_t l = 0; l < k; l++)
                s += A[i + l * lda] * A[j + l * lda];
            C[i + j * ldc] = beta == 0.0 ? alpha * s : alpha * s + beta * C[i + j * ldc];
        }
    }
}

void rb_filt_syr_l_loops(size_t n, double alpha, const double *x, double *A, size_t lda)
{
    for (size_t j = 0; j < n; j++) {
        double ax = alpha * x[j];
        for (size_t i = j; i < n; i++)
            A[i + j * lda] += x[i] * ax;
    }
}

void rb_filt_trmm_lln_loops(size_t m, size_t n, double alpha, const double *L, size_t ldl, double *B, size_t ldb)
{
    /* Row i of L B uses rows 0..i of B: going up keeps them unread-after-write. */
    for (size_t j = 0; j < n; j++) {
        double *bj = B + j * ldb;
        for (size_t i = m; i-- > 0;) {
            double s = 0.0;
            for (size_t l = 0; l <= i; l++)
                s += L[i + l * ldl] * bj[l];
            bj[i] = alpha * s;
        }
    }
}

int rb_filt_chol_loops(double *A, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        double d = A[j + j * n];
        for (size_t l = 0; l < j; l++)
            d -= A[j + l * n] * A[j + l * n];
        if (!(d > 0.0)) /* also NaN */
            return (int)j + 1;
        d = sqrt(d);
        A[j + j * n] = d;
        for (size_t i = j + 1; i < n; i++) {
            double s = A[i + j * n];
            for (size_t l = 0; l < j; l++)
                s -= A[i + l * n] * A[j + l * n];
            A[i + j * n] = s / d;
        }
    }
    return 0;
}

/* ---- dense kernels: the choice per call ---------------------------------------------------------- */

static bool small2(size_t a, size_t b) { return a <= RB_FILT_SMALL_MAX && b <= RB_FILT_SMALL_MAX; }
static bool small3(size_t a, size_t b, size_t c) { return small2(a, b) && c <= RB_FILT_SMALL_MAX; }

void rb_filt_gemm_nt(size_t m, size_t n, size_t k, double alpha, const double *A, size_t lda, const double *B,
                     size_t ldb, double beta, double *C, size_t ldc)
{
    if (small3(m, n, k))
        rb_filt_gemm_nt_loops(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, alpha, A, (int)lda, B, (int)ldb,
                    beta, C, (int)ldc);
}

void rb_filt_gemv(size_t m, size_t n, double alpha, const double *A, size_t lda, const double *x, double beta,
                  double *y)
{
    if (small2(m, n))
        rb_filt_gemv_loops(m, n, alpha, A, lda, x, beta, y);
    else
        cblas_dgemv(CblasColMajor, CblasNoTrans, (int)m, (int)n, alpha, A, (int)lda, x, 1, beta, y, 1);
}

void rb_filt_gemv_rows(size_t m, size_t n, double alpha, const double *A, size_t lda, const double *x, double beta,
                       double *y)
{
    if (small2(m, n))
        rb_filt_gemv_rows_loops(m, n, alpha, A, lda, x, beta, y);
    else
        cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)m, (int)n, alpha, A, (int)lda, x, 1, beta, y, 1);
}

double rb_filt_dot(size_t n, const double *x, const double *y)
{
    return n <= RB_FILT_SMALL_MAX ? rb_filt_dot_loops(n, x, y) : cblas_ddot((int)n, x, 1, y, 1);
}

void rb_filt_trsv_ln(size_t n, const double *L, size_t ldl, double *x)
{
    if (n <= RB_FILT_SMALL_MAX)
        rb_filt_trsv_ln_loops(n, L, ldl, x);
    else
        cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, (int)n, L, (int)ldl, x, 1);
}

void rb_filt_trsm_rlt(size_t m, size_t n, const double *L, size_t ldl, double *B, size_t ldb)
{
    if (small2(m, n))
        rb_filt_trsm_rlt_loops(m, n, L, ldl, B, ldb);
    else
        cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, (int)m, (int)n, 1.0, L, (int)ldl,
                    B, (int)ldb);
}

void rb_filt_trsm_rln(size_t m, size_t n, const double *L, size_t ldl, double *B, size_t ldb)
{
    if (small2(m, n))
        rb_filt_trsm_rln_loops(m, n, L, ldl, B, ldb);
    else
        cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, (int)m, (int)n, 1.0, L, (int)ldl,
                    B, (int)ldb);
}

void rb_filt_syrk_ln(size_t n, size_t k, double alpha, const double *A, size_t lda, double beta, double *C, size_t ldc)
{
    /* k is the UKF's sigma-point count 2n: allowed up to twice the limit. */
    if (small2(n, (k + 1) / 2))
        rb_filt_syrk_ln_loops(n, k, alpha, A, lda, beta, C, ldc);
    else
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int)n, (int)k, alpha, A, (int)lda, beta, C, (int)ldc);
}

void rb_filt_syr_l(size_t n, double alpha, const double *x, double *A, size_t lda)
{
    if (n <= RB_FILT_SMALL_MAX)
        rb_filt_syr_l_loops(n, alpha, x, A, lda);
    else
        cblas_dsyr(CblasColMajor, CblasLower, (int)n, alpha, x, 1, A, (int)lda);
}

void rb_filt_trmm_lln(size_t m, size_t n, double alpha, const double *L, size_t ldl, double *B, size_t ldb)
{
    if (small2(m, n))
        rb_filt_trmm_lln_loops(m, n, alpha, L, ldl, B, ldb);
    else
        cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, (int)m, (int)n, alpha, L,
                    (int)ldl, B, (int)ldb);
}

int rb_filt_chol_lapack(double *A, size_t n)
{
    /* Symmetric data: column-major needs no transposition, so the _work variant allocates nothing. */
    lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int)n, A, (lapack_int)n);
    return (int)info;
}

int rb_filt_chol(double *A, size_t n)
{
    return n <= RB_FILT_SMALL_MAX ? rb_filt_chol_loops(A, n) : rb_filt_chol_lapack(A, n);
}

/* By 16 x 16 tiles: a column's stride-n writes would each touch a new cache line. */
void rb_filt_copy_lower(double *dst, const double *src, size_t n)
{
    for (size_t j = 0; j < n; j++)
        memcpy(dst + j * n + j, src + j * n + j, (n - j) * sizeof(double));
}

void rb_filt_mirror_lower(double *A, size_t n)
{
    enum { TILE = 16 };
    for (size_t jb = 0; jb < n; jb += TILE)
        for (size_t ib = jb; ib < n; ib += TILE) {
            size_t je = jb + TILE < n ? jb + TILE : n, ie = ib + TILE < n ? ib + TILE : n;
            for (size_t i = ib; i < ie; i++) {
                double *row = A + i * n; /* upper (j, i) */
                for (size_t j = jb; j < je && j < i; j++)
                    row[j] = A[i + j * n];
            }
        }
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
