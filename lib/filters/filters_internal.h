/* Internals shared by kf.c, ekf.c, ukf.c and filter.c. Not a public header.
 *
 * Storage. x, P, Q, R, F, B, H as in the public header (row-major; P, Q, R symmetric, so they are
 * also column-major). The compact measurement buffers are column-major for LAPACK / CBLAS:
 *   k          elements used in this update, idx[0..k) their indices in z
 *   innoc (k)  innovation of the used elements
 *   HcT (n x k, ld n)  column j = row idx[j] of H (KF / EKF)
 *   Hc (k x n, ld k)   the same rows, row j = row idx[j] of H (KF / EKF)
 *   C (n x k, ld n)    cross covariance P H^T (KF / EKF) or sum Wc (X - x)(Z - zhat)^T (UKF)
 *   S (k x k, ld k)    innovation covariance; lower triangle overwritten by its Cholesky factor
 *   Ssave (k x k)      S before factorization (both triangles), for rb_filter_innovation_cov
 *   Rc (k x k, ld k)   R restricted to the used elements
 */
#ifndef ROBOEST_FILTERS_INTERNAL_H
#define ROBOEST_FILTERS_INTERNAL_H

#include "roboest/filters.h"

typedef struct rb_filt_ops rb_filt_ops;

struct rb_filter {
    rb_filter_kind kind;
    const rb_filt_ops *ops;
    const char *name; /* "kf", "ekf", "ukf" for messages */
    size_t n, m, nu;

    /* state and model */
    double *x, *P; /* P is swapped with Pn after each step */
    double *Q, *R;
    double *F, *B, *H; /* KF: model; EKF: Jacobian buffers (F, H); UKF: NULL */
    /* BLAS discipline for the per-step path (through the rb_filt_* kernels of linalg.c, which use
     * loops for small dimensions): dgemm only as (NoTrans, Trans), never dsymm; plus dsyrk, dsyr,
     * dtrmm, dtrsm, dtrsv, dgemv and LAPACK dpotrf through its _work entry point. With a
     * single-threaded OpenBLAS none of these allocates (checked by test_filters_noalloc.c). */
    rb_filter_process_fn f;
    rb_filter_measure_fn h;
    rb_filter_process_batch_fn f_batch;
    rb_filter_measure_batch_fn h_batch;
    rb_filter_jac_f_fn jac_f;
    rb_filter_jac_h_fn jac_h;
    rb_filter_residual_fn residual;
    rb_filter_project_fn project;
    void *user;
    double fd_step;
    rb_filter_schedule_fn schedule;
    void *schedule_user;
    rb_filter_gate gate;
    double *gate_limit; /* m + 1: limit by dof (index 0 unused) */
    double jitter;

    /* UKF structure (rb_filter_opts.n_nonlinear; 0: dense): Lt, nl x nr (nr = n - nl, ld nl), L_rl^T (the sigma
     * points' spreads past nl, transposed); Gl, max(n, m) x nl: the Jacobian's rows times L_rl */
    size_t nl;
    rb_filter_affine_fn affine;
    double *Lt, *Gl;
    double *Gd, *U, *Mg; /* the Jacobian's dense rows (g x nr, ld g), Gd Sr (g x nr), U Gd^T (g x g); g <= max(n, m) */
    size_t *drow;        /* max(n, m): the dense rows' positions in the rows used */
    size_t *scol;        /* max(n, m): a row with one entry: its column (SIZE_MAX: more or a dense row) */
    double *sval;        /* max(n, m): that entry's value */
    size_t n_id, *nrow, *urow; /* rb_filter_opts.identity: the other rows (n - n_id), the identity rows (n_id) */
    double *B1, *B2, *B3;      /* n x n each: the structured predict's blocks */

    /* UKF scaling */
    size_t N; /* 2n + 1 sigma points */
    double lambda, c, wm0, wc0, wi;

    /* workspaces (carved from one block) */
    double *xn, *Pn, *T, *A, *L;
    double *zhat, *inno, *innoc, *y;
    size_t *idx, *pos; /* m each */
    size_t k;
    double *HcT, *Hc, *C, *W, *K, *S, *Ssave, *Rc;
    double *fd_x, *fd_a, *fd_b; /* n, max(n, m), max(n, m) */
    double *Y, *Z, *xs;         /* UKF: n x N, m x N (column-major), n */
    double *X;                  /* UKF: the sigma points, n x N column-major (batch callbacks) */
    double *P_diag;
    unsigned char *status;
    void *block;

    /* counters and last-update diagnostics */
    long step;
    long predicts, updates, missing, gated_elements, gated_updates, repairs;
    double nis, limit;
    bool rejected, have_update;
    rb_filter_fail fail; /* the last step's factorization failure (rb_filter_last_failure) */
    /* rb_filter_opts.hold (UKF; 0 when off): the last refresh's gain W = C L_S^-T (in K, n x kh, ld n), S's factor
     * (Sh, kh x kh) and elements (idxh, kh); held_steps since it; `held`: the last predict was a mean-only one */
    size_t hold, kh, held_steps, *idxh;
    double *Sh;
    bool gain_ok, held, held_update;
    size_t fail_index;
};

/* What differs between the kinds (kf.c, ekf.c, ukf.c), chosen by the constructor: filter.c calls through it and
 * never names a kind's functions (the kinds depend on filter.c, not the other way round). */
struct rb_filt_ops {
    /* xn, Pn from x, P (the prior) */
    int (*predict)(rb_filter *f, const double *u, double dt, long step, rb_err *err);
    /* KF / EKF: zhat (and H) at x for the shared update; UKF: fresh sigma points, Z = h(X), zhat, then for the
     * used elements idx[0..k) nuc, S (lower, with R), C */
    int (*measure)(rb_filter *f, const double *z, long step, rb_err *err);
    /* EKF: the caller's projection of the updated xn, Pn (NULL: the kind has none, and refuses the option) */
    int (*project)(rb_filter *f, long step, rb_err *err);
    /* UKF (rb_filter_opts.hold): xn = f(x, u, dt) at x alone; zhat = h(x) at x alone (NULL: the kind has no hold) */
    int (*predict_mean)(rb_filter *f, const double *u, double dt, long step, rb_err *err);
    int (*measure_mean)(rb_filter *f, long step, rb_err *err);
};

/* filter.c: allocation shared by the three constructors (validates the common options, copies x0,
 * P0, Q, R, sets up gating and the UKF weights). */
int rb_filt_alloc(const rb_filter_opts *o, rb_filter_kind kind, const rb_filt_ops *ops, rb_filter **out, rb_err *err);
/* The measurement path every filter shares (NaN skip, gating, Cholesky gain, covariance update). */
int rb_filt_update(rb_filter *f, const double *z, rb_err *err);
/* inno = z - zhat (then `residual`), innoc = inno[idx[0..k)]. */
void rb_filt_innovation(rb_filter *f, const double *z);
/* RB_ENUMERIC (naming the step and element) when zhat is not finite at a used element idx[0..k). */
int rb_filt_check_zhat(rb_filter *f, long step, rb_err *err);
/* Scheduling callback, if any, for a phase. */
int rb_filt_schedule(rb_filter *f, rb_filter_phase phase, long step, const double *u, double dt, const double *z,
                     rb_err *err);
/* After a successful predict: counters, P diagonal, last-update diagnostics reset. */
void rb_filt_predict_done(rb_filter *f, long step, bool mean_only);

/* kf.c: shared by KF / EKF predict once F (row-major) is known: Pn = F P F^T + Q (symmetrized). */
void rb_filt_linear_cov_predict(rb_filter *f);

/* linalg.c: the dense kernels of the per-step path. Column-major unless "rows" says row-major; ld* are
 * leading dimensions; outputs never alias inputs except where the kernel works in place. Each kernel
 * chooses per call: plain C loops when every dimension is at most RB_FILT_SMALL_MAX, CBLAS / LAPACK
 * otherwise. Why: OpenBLAS 0.3.21 (pthreads build) takes one process-wide mutex in blas_memory_alloc
 * on dtrsm, dtrsv, dsyrk, dpotrf, ..., and its call overhead dwarfs a 3 x 3 product, so filters run
 * per element on several threads (kf_derivative under roboest compare) serialized on it. The loops
 * agree with the BLAS results to rounding (test_filters_small.c); the *_loops variants are exported
 * for that test only. */
#define RB_FILT_SMALL_MAX 8
/* C (m x n) = alpha A B^T + beta C; A m x k, B n x k. beta 0: C is not read. */
void rb_filt_gemm_nt(size_t m, size_t n, size_t k, double alpha, const double *A, size_t lda, const double *B,
                     size_t ldb, double beta, double *C, size_t ldc);
/* y (m) = alpha A x + beta y; A m x n column-major (gemv) or row-major (gemv_rows). beta 0: y not read. */
void rb_filt_gemv(size_t m, size_t n, double alpha, const double *A, size_t lda, const double *x, double beta,
                  double *y);
void rb_filt_gemv_rows(size_t m, size_t n, double alpha, const double *A, size_t lda, const double *x, double beta,
                       double *y);
double rb_filt_dot(size_t n, const double *x, const double *y);
/* x = L^-1 x, L n x n lower, non-unit diagonal. */
void rb_filt_trsv_ln(size_t n, const double *L, size_t ldl, double *x);
/* B (m x n) = B L^-T (rlt) or B L^-1 (rln), L n x n lower, non-unit diagonal. */
void rb_filt_trsm_rlt(size_t m, size_t n, const double *L, size_t ldl, double *B, size_t ldb);
void rb_filt_trsm_rln(size_t m, size_t n, const double *L, size_t ldl, double *B, size_t ldb);
/* Lower triangle of C (n x n) = alpha A A^T + beta C; A n x k (k may be up to 2 RB_FILT_SMALL_MAX on
 * the loop path: the UKF's 2n sigma points). */
void rb_filt_syrk_ln(size_t n, size_t k, double alpha, const double *A, size_t lda, double beta, double *C, size_t ldc);
/* Lower triangle of A (n x n) += alpha x x^T. */
void rb_filt_syr_l(size_t n, double alpha, const double *x, double *A, size_t lda);
/* B (m x n) = alpha L B, L m x m lower, non-unit diagonal. */
void rb_filt_trmm_lln(size_t m, size_t n, double alpha, const double *L, size_t ldl, double *B, size_t ldb);
/* Cholesky of a symmetric n x n matrix (lower, column-major, ld n, in place; the upper triangle is
 * left as it was). Returns the LAPACK-style info (0 ok, > 0 the order of the leading minor that
 * failed: not positive, or NaN on the loop path). */
int rb_filt_chol(double *A, size_t n);
/* The two paths, for test_filters_small.c. */
int rb_filt_chol_lapack(double *A, size_t n);
int rb_filt_chol_loops(double *A, size_t n);
void rb_filt_gemm_nt_loops(size_t m, size_t n, size_t k, double alpha, const double *A, size_t lda, const double *B,
                           size_t ldb, double beta, double *C, size_t ldc);
void rb_filt_gemv_loops(size_t m, size_t n, double alpha, const double *A, size_t lda, const double *x, double beta,
                        double *y);
void rb_filt_gemv_rows_loops(size_t m, size_t n, double alpha, const double *A, size_t lda, const double *x,
                             double beta, double *y);
double rb_filt_dot_loops(size_t n, const double *x, const double *y);
void rb_filt_trsv_ln_loops(size_t n, const double *L, size_t ldl, double *x);
void rb_filt_trsm_rlt_loops(size_t m, size_t n, const double *L, size_t ldl, double *B, size_t ldb);
void rb_filt_trsm_rln_loops(size_t m, size_t n, const double *L, size_t ldl, double *B, size_t ldb);
void rb_filt_syrk_ln_loops(size_t n, size_t k, double alpha, const double *A, size_t lda, double beta, double *C,
                           size_t ldc);
void rb_filt_syr_l_loops(size_t n, double alpha, const double *x, double *A, size_t lda);
void rb_filt_trmm_lln_loops(size_t m, size_t n, double alpha, const double *L, size_t ldl, double *B, size_t ldb);
/* Lower Cholesky factor of P into f->L with the UKF's repairs (symmetrize, jitter) applied to P. */
int rb_filt_chol_P(rb_filter *f, const char *what, long step, rb_err *err);
/* The lower triangle (diagonal included) of src into dst, both column-major n x n (the upper one of dst untouched). */
void rb_filt_copy_lower(double *dst, const double *src, size_t n);
/* Copy the lower triangle of a column-major n x n matrix onto its upper triangle. */
void rb_filt_mirror_lower(double *A, size_t n);
/* A = (A + A^T) / 2. */
void rb_filt_symmetrize(double *A, size_t n);
/* Index of the first non-finite element of v (n), or n if all are finite. */
size_t rb_filt_first_nonfinite(const double *v, size_t n);

#endif
