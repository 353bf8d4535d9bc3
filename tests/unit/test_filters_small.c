/* The filters' dense kernels (lib/filters/linalg.c) have two paths: plain loops for small dimensions and
 * CBLAS / LAPACK for large ones. Each loop kernel is checked against the BLAS / LAPACK call it replaces on
 * random well-conditioned problems (SPD matrices, their Cholesky factors) for n = 1..12, to 1e-12
 * relative; the per-call choice is checked to take the loop path exactly up to RB_FILT_SMALL_MAX (the
 * two paths differ in rounding, so the result tells them apart). */
#include <cblas.h>
#include <criterion/criterion.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "../../lib/filters/filters_internal.h"
#include "roboest/core.h"

enum { NMAX = 12, KMAX = 2 * NMAX };

static void fill(rb_rng *r, double *v, size_t len)
{
    for (size_t i = 0; i < len; i++)
        v[i] = rb_rng_normal(r);
}

/* P = G G^T / n + I (n x n, both triangles): SPD, condition number modest. */
static void spd(rb_rng *r, size_t n, double *P)
{
    double G[NMAX * NMAX];
    fill(r, G, n * n);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int)n, (int)n, (int)n, 1.0 / (double)n, G, (int)n, G, (int)n,
                0.0, P, (int)n);
    for (size_t i = 0; i < n; i++)
        P[i + i * n] += 1.0;
}

/* Lower Cholesky factor of a random SPD matrix, upper triangle zeroed. */
static void lower_factor(rb_rng *r, size_t n, double *L)
{
    spd(r, n, L);
    cr_assert_eq(LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int)n, L, (lapack_int)n), 0);
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < j; i++)
            L[i + j * n] = 0.0;
}

static void assert_close(const double *a, const double *b, size_t len, const char *what, size_t n)
{
    double scale = 0.0, diff = 0.0;
    for (size_t i = 0; i < len; i++) {
        scale = fmax(scale, fabs(b[i]));
        diff = fmax(diff, fabs(a[i] - b[i]));
    }
    cr_assert(diff <= 1e-12 * fmax(scale, 1e-300), "%s n=%zu: max difference %g, scale %g", what, n, diff, scale);
}

Test(filters_small, gemm_gemv_dot_agree_with_blas)
{
    rb_rng r;
    rb_rng_seed(&r, 11);
    for (size_t n = 1; n <= NMAX; n++) {
        size_t m = n > 2 ? n - 2 : 1, k = n + 1; /* rectangular too */
        double A[NMAX * KMAX], B[NMAX * KMAX], C0[NMAX * NMAX], C1[NMAX * NMAX], C2[NMAX * NMAX];
        fill(&r, A, m * k);
        fill(&r, B, n * k);
        fill(&r, C0, m * n);
        memcpy(C1, C0, sizeof C0);
        memcpy(C2, C0, sizeof C0);
        rb_filt_gemm_nt_loops(m, n, k, 0.7, A, m, B, n, -1.3, C1, m);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, 0.7, A, (int)m, B, (int)n, -1.3,
                    C2, (int)m);
        assert_close(C1, C2, m * n, "gemm_nt beta -1.3", n);
        for (size_t i = 0; i < m * n; i++)
            C1[i] = NAN; /* beta 0 must not read C */
        rb_filt_gemm_nt_loops(m, n, k, 0.7, A, m, B, n, 0.0, C1, m);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, 0.7, A, (int)m, B, (int)n, 0.0, C2,
                    (int)m);
        assert_close(C1, C2, m * n, "gemm_nt beta 0", n);

        double x[KMAX], y0[NMAX], y1[NMAX], y2[NMAX];
        fill(&r, x, k);
        fill(&r, y0, m);
        memcpy(y1, y0, sizeof y0);
        memcpy(y2, y0, sizeof y0);
        rb_filt_gemv_loops(m, k, 1.1, A, m, x, 0.5, y1);
        cblas_dgemv(CblasColMajor, CblasNoTrans, (int)m, (int)k, 1.1, A, (int)m, x, 1, 0.5, y2, 1);
        assert_close(y1, y2, m, "gemv", n);
        rb_filt_gemv_rows_loops(m, k, 1.1, A, k, x, 0.5, y1);
        cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)m, (int)k, 1.1, A, (int)k, x, 1, 0.5, y2, 1);
        assert_close(y1, y2, m, "gemv_rows", n);
        double d1 = rb_filt_dot_loops(k, A, x), d2 = cblas_ddot((int)k, A, 1, x, 1);
        assert_close(&d1, &d2, 1, "dot", n);
    }
}

Test(filters_small, triangular_kernels_agree_with_blas)
{
    rb_rng r;
    rb_rng_seed(&r, 12);
    for (size_t n = 1; n <= NMAX; n++) {
        size_t m = n + 3;
        double L[NMAX * NMAX], B0[KMAX * NMAX], B1[KMAX * NMAX], B2[KMAX * NMAX];
        lower_factor(&r, n, L);
        fill(&r, B0, m * n);

        memcpy(B1, B0, sizeof B0), memcpy(B2, B0, sizeof B0);
        rb_filt_trsm_rlt_loops(m, n, L, n, B1, m);
        cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, (int)m, (int)n, 1.0, L, (int)n, B2,
                    (int)m);
        assert_close(B1, B2, m * n, "trsm B L^-T", n);

        memcpy(B1, B0, sizeof B0), memcpy(B2, B0, sizeof B0);
        rb_filt_trsm_rln_loops(m, n, L, n, B1, m);
        cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, (int)m, (int)n, 1.0, L, (int)n,
                    B2, (int)m);
        assert_close(B1, B2, m * n, "trsm B L^-1", n);

        memcpy(B1, B0, sizeof B0), memcpy(B2, B0, sizeof B0);
        rb_filt_trsv_ln_loops(n, L, n, B1);
        cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, (int)n, L, (int)n, B2, 1);
        assert_close(B1, B2, n, "trsv", n);

        size_t cols = n + 2; /* B n x cols for L B */
        memcpy(B1, B0, sizeof B0), memcpy(B2, B0, sizeof B0);
        rb_filt_trmm_lln_loops(n, cols, -0.4, L, n, B1, n);
        cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, (int)n, (int)cols, -0.4, L,
                    (int)n, B2, (int)n);
        assert_close(B1, B2, n * cols, "trmm L B", n);
    }
}

Test(filters_small, symmetric_kernels_and_cholesky_agree_with_lapack)
{
    rb_rng r;
    rb_rng_seed(&r, 13);
    for (size_t n = 1; n <= NMAX; n++) {
        size_t k = 2 * n;
        double P[NMAX * NMAX], C1[NMAX * NMAX], C2[NMAX * NMAX], A[NMAX * KMAX], x[NMAX];
        spd(&r, n, P);
        fill(&r, A, n * k);
        fill(&r, x, n);
        memcpy(C1, P, sizeof P), memcpy(C2, P, sizeof P);
        rb_filt_syrk_ln_loops(n, k, 0.3, A, n, 1.0, C1, n);
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int)n, (int)k, 0.3, A, (int)n, 1.0, C2, (int)n);
        rb_filt_syr_l_loops(n, -0.2, x, C1, n);
        cblas_dsyr(CblasColMajor, CblasLower, (int)n, -0.2, x, 1, C2, (int)n);
        assert_close(C1, C2, n * n, "syrk + syr (lower; upper untouched)", n);

        memcpy(C1, P, sizeof P), memcpy(C2, P, sizeof P);
        cr_assert_eq(rb_filt_chol_loops(C1, n), 0);
        cr_assert_eq(rb_filt_chol_lapack(C2, n), 0);
        assert_close(C1, C2, n * n, "Cholesky (upper triangle kept)", n);

        /* Not positive definite at a known leading minor: both report the same order. */
        size_t bad = n / 2;
        memcpy(C1, P, sizeof P);
        for (size_t i = 0; i < n; i++)
            C1[bad + i * n] = C1[i + bad * n] = 0.0;
        C1[bad + bad * n] = -1.0;
        memcpy(C2, C1, sizeof C1);
        cr_assert_eq(rb_filt_chol_loops(C1, n), (int)bad + 1, "n=%zu", n);
        cr_assert_eq(rb_filt_chol_lapack(C2, n), (int)bad + 1, "n=%zu", n);
    }
}

/* The dispatching kernel equals the loop path bit for bit up to the limit and the BLAS path above it. */
Test(filters_small, dispatch_switches_at_the_limit)
{
    rb_rng r;
    rb_rng_seed(&r, 14);
    int differ_above = 0;
    for (size_t n = 1; n <= NMAX; n++) {
        double A[NMAX * NMAX * 4], B[NMAX * NMAX * 4], Cd[NMAX * NMAX], Cl[NMAX * NMAX], Cb[NMAX * NMAX];
        size_t k = 4 * n; /* long sums so that the two paths round differently */
        fill(&r, A, n * k);
        fill(&r, B, n * k);
        if (n > RB_FILT_SMALL_MAX)
            k = n; /* every dimension above the limit is n */
        rb_filt_gemm_nt(n, n, k, 1.0, A, n, B, n, 0.0, Cd, n);
        rb_filt_gemm_nt_loops(n, n, k, 1.0, A, n, B, n, 0.0, Cl, n);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int)n, (int)n, (int)k, 1.0, A, (int)n, B, (int)n, 0.0, Cb,
                    (int)n);
        if (n <= RB_FILT_SMALL_MAX && k <= RB_FILT_SMALL_MAX)
            cr_assert(memcmp(Cd, Cl, n * n * sizeof(double)) == 0, "n=%zu: not the loop path", n);
        else
            cr_assert(memcmp(Cd, Cb, n * n * sizeof(double)) == 0, "n=%zu k=%zu: not the BLAS path", n, k);
        differ_above += memcmp(Cl, Cb, n * n * sizeof(double)) != 0;
    }
    cr_assert(differ_above > 0, "the two paths never rounded differently: the dispatch check proves nothing");
}
