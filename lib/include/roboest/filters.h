/*
 * roboest filters: linear Kalman filter (KF), extended (EKF) and unscented (UKF) Kalman filters on
 * a state of dimension n and a measurement of dimension m, with shared measurement handling
 * (missing elements, innovation gating, covariance scheduling) and per-step diagnostics.
 *
 * Model (discrete time, additive noise, k the step index):
 *   x_k = f(x_{k-1}, u_k, dt) + w_k,   w_k ~ N(0, Q)      (KF: f = F x + B u)
 *   z_k = h(x_k) + v_k,                v_k ~ N(0, R)      (KF: h = H x)
 * Dimensions: x n, u nu (may be 0), z m; F n x n, B n x nu, H m x n, Q n x n, R m x m, P n x n.
 * Every matrix crossing this interface is dense row-major (element (i, j) at [i * cols + j]); the
 * covariances P, Q, R are symmetric (so row- and column-major agree). Units are the caller's.
 *
 * Predict (rb_filter_predict):
 *   KF   x = F x + B u,               P = F P F^T + Q
 *   EKF  x = f(x, u, dt),             P = F P F^T + Q,  F = df/dx at the prior x (jac_f or central
 *                                     differences, see rb_filter_opts.fd_step)
 *   UKF  sigma points X_0 = x, X_i = x + c L_i, X_{n+i} = x - c L_i (i = 1..n, L_i column i of the
 *        lower Cholesky factor of P, c = sqrt(n + lambda), lambda = alpha^2 (n + kappa) - n),
 *        Y_j = f(X_j, u, dt), x = sum_j Wm_j Y_j, P = sum_j Wc_j (Y_j - x)(Y_j - x)^T + Q with
 *        Wm_0 = lambda / (n + lambda), Wc_0 = Wm_0 + 1 - alpha^2 + beta, Wm_j = Wc_j = 1 / (2 (n + lambda)).
 *        The public joint-torque estimator uses alpha 1, beta 2, kappa 0 (lambda 0: Wm_0 0, Wc_0 2).
 * Update (rb_filter_update), on the elements of z that are used (see "Measurement handling"):
 *   KF/EKF  nu = z - h(x), C = P H^T, S = H P H^T + R, K = C S^-1,
 *           x = x + K nu, P = (I - K H) P (I - K H)^T + K R K^T   (Joseph form)
 *   UKF     fresh sigma points X_j from the Cholesky factor of the predicted P, Z_j = h(X_j),
 *           zhat = sum Wm_j Z_j, nu = z - zhat, S = sum Wc_j (Z_j - zhat)(Z_j - zhat)^T + R,
 *           C = sum Wc_j (X_j - x)(Z_j - zhat)^T, K = C S^-1, x = x + K nu, P = P - K S K^T
 *           (computed as P - W W^T with W = C L_S^-T: symmetric by construction).
 * No explicit inverse is formed: S = L_S L_S^T (Cholesky) and K, NIS come from triangular solves.
 * P is kept exactly symmetric (the upper triangle is mirrored from the lower after every step).
 *
 * Measurement handling (one code path for every filter):
 *   - a NaN element of z is skipped: the update is the update with that row of h / H / R removed
 *     (element status RB_MEAS_MISSING); when no element is left the update does nothing;
 *   - innovation gating (rb_filter_gate): RB_GATE_ELEMENT drops element i when nu_i^2 / S_ii exceeds
 *     the threshold (1 degree of freedom); RB_GATE_VECTOR rejects the whole update when the normalized
 *     innovation squared NIS = nu^T S^-1 nu over the used elements exceeds the threshold (chi-square
 *     with as many degrees of freedom as elements used); rejections are counted in rb_filter_diag;
 *   - covariance scheduling: a callback may rewrite Q (and R, and for the KF F, B, H) at the start of
 *     every predict and every update (e.g. the thrust EKF raises a jet's process noise while its rotor
 *     speed error is large). Changes persist until changed again.
 *
 * Steps. The filter counts steps: rb_filter_predict advances the counter by one before it works
 * (the first predict goes from step 0 to step 1); an update belongs to the current step. Error
 * messages name the step ("ukf predict, step 17: ..."); rb_filter_set_step aligns the counter with
 * a sample index.
 *
 * Memory. rb_*_create allocates every workspace; predict, update and every function below except
 * create allocate nothing (no rb_malloc, no malloc: LAPACK through its _work entry points on
 * column-major symmetric data, products through CBLAS calls that OpenBLAS serves without malloc).
 *
 * Numerics. Each dense product, triangular solve and Cholesky factorization of a step chooses per call:
 * plain C loops when every dimension of the call is at most 8 (a UKF's 2n sigma points count as n),
 * CBLAS / LAPACK otherwise. Small filters (kf_derivative runs a 3-state KF per joint) thus never enter
 * OpenBLAS, whose pthreads build takes one process-wide lock per call (blas_memory_alloc) and would
 * serialize filters stepping on different threads; large ones (the joint-torque UKF) keep the BLAS
 * speed. The two paths agree to rounding (about 1e-15 relative for well-conditioned problems).
 * One exception outside roboest's control: a multi-threaded OpenBLAS (0.3.21) mallocs a job array
 * whenever it splits a level-3 call across threads, which it does from about n = 90 (dpotrf). A
 * single-threaded OpenBLAS (OPENBLAS_NUM_THREADS=1 or openblas_set_num_threads(1)) allocates nothing
 * and is also faster at these sizes (make bench-filters). A filter serves one thread at a time.
 *
 * Errors: RB_EINVAL (NULL or inconsistent arguments: n 0, a missing callback, alpha or n + lambda
 * not positive, a gate probability outside (0, 1)), RB_ENUMERIC (a covariance or innovation
 * covariance not positive definite, a non-finite state or predicted measurement; the message names
 * the step and, for a covariance, the LAPACK pivot), RB_ENOMEM, or the code a callback returned
 * (its message prefixed with the filter and step).
 */
#ifndef ROBOEST_FILTERS_H
#define ROBOEST_FILTERS_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/core.h"

RB_API_BEGIN

typedef struct rb_filter rb_filter; /* opaque; made by rb_kf_create / rb_ekf_create / rb_ukf_create */

typedef enum rb_filter_kind { RB_FILTER_KF, RB_FILTER_EKF, RB_FILTER_UKF } rb_filter_kind;

/* ---- callbacks ------------------------------------------------------------------------------
 * `user` is rb_filter_opts.user. Outputs never alias inputs. Return RB_OK or a negative rb_status
 * (with a message in err); the filter stops the step and returns that code, leaving x and P as they
 * were before the step. Time-varying data that h needs (e.g. inputs) travel through `user`. */

/* x_out (n) = f(x (n), u (nu, NULL when nu is 0 or no input was given), dt). */
typedef int (*rb_filter_process_fn)(void *user, const double *x, const double *u, double dt, double *x_out,
                                    rb_err *err);
/* z_out (m) = h(x (n)). */
typedef int (*rb_filter_measure_fn)(void *user, const double *x, double *z_out, rb_err *err);
/* UKF, optional: every sigma point at once, for models with work common to all of them (matrices computed once
 * per step, products as one matrix-matrix multiplication). X: n x N column-major, column j the sigma point X_j
 * (N = 2n + 1, in the order of the header comment: X_0 = x, then the + and the - spreads); the outputs are column-
 * major too: Y n x N with Y_j = f(X_j, u, dt), Z m x N with Z_j = h(X_j). A filter given these never calls f / h
 * for its sigma points. */
typedef int (*rb_filter_process_batch_fn)(void *user, const double *X, size_t N, const double *u, double dt, double *Y,
                                          rb_err *err);
typedef int (*rb_filter_measure_batch_fn)(void *user, const double *X, size_t N, double *Z, rb_err *err);
/* F (n x n, row-major) = df/dx at (x, u, dt). */
typedef int (*rb_filter_jac_f_fn)(void *user, const double *x, const double *u, double dt, double *F, rb_err *err);
/* H (m x n, row-major) = dh/dx at x. */
typedef int (*rb_filter_jac_h_fn)(void *user, const double *x, double *H, rb_err *err);
/* Optional: fix up a measurement difference dz (m, in place; dz = a - b elementwise), e.g. wrap
 * angle elements into (-pi, pi]. Applied to the innovation (missing elements are NaN there: leave
 * them NaN) and to the UKF's sigma-point deviations. */
typedef void (*rb_filter_residual_fn)(void *user, double *dz);
/* EKF only, optional: project the estimate after an update back onto what the linear update does not keep (a unit
 * quaternion: x / |x|). Called after every update that changed x and P (not after one with no element left, nor one
 * the vector gate rejected), with the updated x (n) and P (n x n row-major) to rewrite in place; what it writes is
 * the filter's state (P is then symmetrized; keep it positive semi-definite: for x / |x| the consistent covariance is
 * J P J^T, J = (I - u u^T) / |x|, u = x / |x|, the normalization's Jacobian). Its error, or a non-finite value it
 * writes, fails the update (prefixed "ekf update, step k: projection: ") with x and P left as before it. */
typedef int (*rb_filter_project_fn)(void *user, double *x, double *P, rb_err *err);

/* A sparse matrix by compressed rows (rows x cols): row i's entries are val[ptr[i] .. ptr[i + 1]), in columns
 * col[ptr[i] .. ptr[i + 1]). Borrowed from the callback that fills it (valid until its next call). */
typedef struct rb_filter_csr {
    size_t rows, cols;
    const size_t *ptr, *col;
    const double *val;
} rb_filter_csr;
/* UKF, with rb_filter_opts.n_nonlinear = l > 0: the Jacobians of f (Jf, n x (n - l), at u and dt) and of h (Jh,
 * m x (n - l)) with respect to x[l..n) at x, into *Jf / *Jh (each NULL when not wanted; the predict asks for Jf, the
 * update for Jh with u NULL and dt 0). For a conditionally affine model they depend on x[0..l) only. */
typedef int (*rb_filter_affine_fn)(void *user, const double *x, const double *u, double dt, rb_filter_csr *Jf,
                                   rb_filter_csr *Jh, rb_err *err);

/* Writable views of the filter's own model matrices (borrowed; valid for the filter's life).
 * F, B, H are the KF's model (EKF, UKF: empty views, data NULL); Q (n x n) and R (m x m) are every
 * filter's noise covariances; keep them symmetric (Q positive semi-definite, R positive definite). */
typedef struct rb_filter_mats {
    rb_mat F, B, H, Q, R;
} rb_filter_mats;

typedef enum rb_filter_phase { RB_FILTER_PREDICT, RB_FILTER_UPDATE } rb_filter_phase;

/* What a scheduling callback sees. x, P: the state before the phase (P n x n row-major). */
typedef struct rb_filter_sched {
    rb_filter_phase phase;
    long step;           /* the step being predicted to / updated (see "Steps") */
    const double *x;     /* n */
    const double *P;     /* n x n */
    const double *u;     /* predict: as given to rb_filter_predict (may be NULL); update: NULL */
    double dt;           /* predict: as given; update: 0 */
    const double *z;     /* update: the measurement (m, may hold NaN); predict: NULL */
    rb_filter_mats mats; /* writable; changes persist */
} rb_filter_sched;

typedef int (*rb_filter_schedule_fn)(void *user, rb_filter_sched *s, rb_err *err);

/* ---- gating --------------------------------------------------------------------------------- */
typedef enum rb_gate_mode {
    RB_GATE_OFF = 0, /* every finite element is used */
    RB_GATE_VECTOR,  /* reject the whole update when NIS > limit(dof = elements used) */
    RB_GATE_ELEMENT  /* drop element i when nu_i^2 / S_ii > limit(dof = 1); the rest is used jointly */
} rb_gate_mode;

typedef struct rb_filter_gate {
    rb_gate_mode mode;
    double threshold;   /* > 0: the limit, whatever the dof */
    double probability; /* used when threshold <= 0: limit = rb_chi2_quantile(probability, dof), in (0, 1)
                           (e.g. 0.997); the quantiles are computed once at create */
} rb_filter_gate;

/* ---- options -------------------------------------------------------------------------------
 * Start from rb_filter_opts_init. Pointers are read during create only (everything is copied). */
typedef struct rb_filter_opts {
    size_t n, m, nu;  /* state, measurement, input dimensions (n, m >= 1; nu >= 0) */
    const double *x0; /* n; NULL: zeros */
    const double *P0; /* n x n, symmetric positive definite; required */
    const double *Q;  /* n x n; NULL: zeros */
    const double *R;  /* m x m, symmetric positive definite; required */
    /* KF only: the linear model (F required; B NULL: zeros; H required). */
    const double *F, *B, *H;
    /* EKF, UKF: the models (f, h required; the UKF may have f_batch / h_batch instead) and the EKF's Jacobians (NULL:
     * central differences, column j from f(x + h_j e_j) - f(x - h_j e_j) over the exact difference of the two
     * abscissae, h_j = fd_step * max(1, |x_j|); fd_step 0 means cbrt(DBL_EPSILON) ~ 6.1e-6). */
    rb_filter_process_fn f;
    rb_filter_measure_fn h;
    rb_filter_jac_f_fn jac_f;
    rb_filter_jac_h_fn jac_h;
    /* UKF: batch forms replacing f / h for the sigma points (either form of each model is enough) */
    rb_filter_process_batch_fn f_batch;
    rb_filter_measure_batch_fn h_batch;
    rb_filter_residual_fn residual; /* optional */
    rb_filter_project_fn project;   /* EKF only, optional (RB_EINVAL for the KF and the UKF) */
    /* UKF, optional: a conditionally affine model. n_nonlinear = l in (0, n) declares that for fixed x[0..l), f and h
     * are affine in x[l..n) (exactly, for every value: the caller's promise). The filter is then the same UKF (the
     * same sigma-point rule and estimates, to rounding) computed without the 2 (n - l) sigma points that spread along
     * x[l..n) only (the lower Cholesky factor's columns past l move neither x[0..l) nor, hence, the models' nonlinear
     * part): their sums are closed forms in `affine`'s Jacobians and the Schur complement S = P_rr - L_rl L_rl^T
     * (2 w_i c^2 = 1), never formed: J S J^T = J P_rr J^T - (J L_rl)(J L_rl)^T over the Jacobian's entries. The models are evaluated at 2 l + 1 points (X_0 = x, then the + and the - spreads along the
     * first l columns of the Cholesky factor; the batch callbacks get N = 2 l + 1). Only P[0..l, 0..l) is factorized:
     * the repairs (jitter) above apply when it is not positive definite; a P indefinite only in S is not detected.
     * Needs `affine`; refuses `residual` (RB_EINVAL). */
    size_t n_nonlinear;
    rb_filter_affine_fn affine;
    /* With n_nonlinear, optional (n flags, NULL: none): the rows i with f_i(x, u, dt) = x_i for every x (random walks;
     * any i). Their prediction is then x_i, their block of the predicted covariance P + Q and their cross terms the
     * spreads' closed form, the same sums without the n x 2 l sigma-point products. */
    const bool *identity;
    /* UKF, optional: refresh the covariance and the gain every `hold` steps only (0 or 1: every step, the exact
     * filter). An APPROXIMATION, for speed: on the hold - 1 steps after each full step (predict and update as above,
     * the "refresh"), the predict evaluates f at the mean alone, x = f(x, u, dt), with P held (not propagated, no Q
     * added), and the update applies the refresh's gain to that point's innovation, x = x + K (z - h(x)), with the
     * refresh's S for the NIS and the vector gate; P is held. The refresh after them predicts P from the held P as if
     * one step had passed: near the filter's steady state that P is what the exact filter's would be, and the gain
     * changes only as slowly as the model's Jacobians; from P0 it converges hold times slower. An update whose finite
     * elements are not the refresh's becomes a full update (from the held P). Not with RB_GATE_ELEMENT (RB_EINVAL).
     * rb_filter_set_state and rb_filter_hold_refresh make the next step a refresh. */
    size_t hold;
    void *user;
    double fd_step;
    /* UKF: sigma-point scaling (defaults alpha 1, beta 2, kappa 0). */
    double alpha, beta, kappa;
    /* UKF: when the Cholesky factorization of P fails, P is symmetrized ((P + P^T) / 2) and retried,
     * then jitter * max(mean diag P, DBL_MIN) is added to its diagonal and retried once; if that fails
     * too the step fails with RB_ENUMERIC naming the step (and P is restored). Default 1e-9 (0: no
     * jitter). Successful repairs stay in P and are counted in rb_filter_diag.repairs. */
    double jitter;
    rb_filter_gate gate;
    rb_filter_schedule_fn schedule; /* optional; called with schedule_user */
    void *schedule_user;
} rb_filter_opts;

/* Zero every field, then alpha 1, beta 2, kappa 0, jitter 1e-9. */
void rb_filter_opts_init(rb_filter_opts *o);

/* Make a filter; *out is NULL on failure. Free with rb_filter_free. RB_EINVAL as listed above (the
 * message names the field), RB_ENUMERIC if P0 or R is not positive definite or a matrix holds a
 * non-finite value, RB_ENOMEM. */
int rb_kf_create(const rb_filter_opts *o, rb_filter **out, rb_err *err);
int rb_ekf_create(const rb_filter_opts *o, rb_filter **out, rb_err *err);
int rb_ukf_create(const rb_filter_opts *o, rb_filter **out, rb_err *err);
void rb_filter_free(rb_filter *f); /* NULL is a no-op */

rb_filter_kind rb_filter_get_kind(const rb_filter *f);
void rb_filter_dims(const rb_filter *f, size_t *n, size_t *m, size_t *nu); /* any pointer may be NULL */

/* ---- stepping -------------------------------------------------------------------------------
 * u: nu values or NULL (zeros); dt: passed to f, jac_f and the scheduling callback (the KF ignores it).
 * z: m values, NaN marks a missing element. On error x and P are left as before the call. */
int rb_filter_predict(rb_filter *f, const double *u, double dt, rb_err *err);
int rb_filter_update(rb_filter *f, const double *z, rb_err *err);

/* ---- state --------------------------------------------------------------------------------- */
const double *rb_filter_x(const rb_filter *f); /* n, borrowed until the next call that changes it */
const double *rb_filter_P(const rb_filter *f); /* n x n row-major symmetric, borrowed likewise */
/* Replace x (n) and/or P (n x n; copied as given, not checked: a non-symmetric or indefinite P is
 * repaired or reported at the next factorization); NULL keeps the current one. RB_ENUMERIC if a
 * value is not finite (nothing changed). */
int rb_filter_set_state(rb_filter *f, const double *x, const double *P, rb_err *err);
void rb_filter_set_step(rb_filter *f, long step);
/* Writable views of F, B, H (KF), Q, R; see rb_filter_mats. */
rb_filter_mats rb_filter_get_mats(rb_filter *f);

/* Normalized estimation error squared (x - x_true)^T P^-1 (x - x_true) through a Cholesky factor
 * of the current P; RB_ENUMERIC if P is not positive definite. For consistency tests. */
int rb_filter_nees(rb_filter *f, const double *x_true, double *nees, rb_err *err);

/* ---- diagnostics ----------------------------------------------------------------------------- */
typedef enum rb_meas_status {
    RB_MEAS_USED = 0,    /* used in the update */
    RB_MEAS_MISSING = 1, /* NaN in z: skipped */
    RB_MEAS_GATED = 2,   /* dropped by the element gate, or the whole update was rejected */
    RB_MEAS_NONE = 3     /* no update since create (or since the last predict) */
} rb_meas_status;

/* Borrowed pointers, valid until the next predict / update / set_state on the filter. */
typedef struct rb_filter_diag {
    long step;
    const double *innovation;    /* m: z - zhat of the last update (after `residual`); NaN where missing */
    const unsigned char *status; /* m: rb_meas_status per element of the last update */
    const double *P_diag;        /* n: diagonal of the current P */
    double nis;                  /* nu^T S^-1 nu over the elements that passed the element gate; NaN if none */
    size_t dof;                  /* how many elements that NIS is over */
    double gate_limit;           /* the limit the last update was gated against; 0 when gating is off */
    bool rejected;               /* the last update was rejected whole by the vector gate */
    long predicts, updates;      /* calls that succeeded */
    long missing_elements;       /* total elements skipped as NaN */
    long gated_elements;         /* total elements dropped by the element gate */
    long gated_updates;          /* total updates rejected by the vector gate */
    long repairs;                /* total symmetrizations + jitters applied to P (UKF) */
} rb_filter_diag;

void rb_filter_get_diag(const rb_filter *f, rb_filter_diag *d);

/* Innovation covariance S (m x m row-major) of the last update; rows and columns of elements that
 * were not used in it (missing or element-gated) are NaN. RB_EINVAL before any update. */
int rb_filter_innovation_cov(const rb_filter *f, double *S, rb_err *err);
/* Kalman gain K (n x m row-major) computed in the last update (applied unless diag.rejected);
 * columns of elements not used are zero. RB_EINVAL before any update. */
int rb_filter_gain(rb_filter *f, double *K, rb_err *err);
/* rb_filter_opts.hold: make the next predict and update a refresh (a full step) whatever the count. No-op without
 * hold. */
void rb_filter_hold_refresh(rb_filter *f);
/* rb_filter_opts.hold: whether the last predict was mean-only (P held), and whether the last update was a held one
 * (the refresh's gain on such a step; P unchanged). A full update after set_state is not held: a jump adaptation's
 * repeated update (rb_jump_update) on a held step is a full update from the held P. */
bool rb_filter_mean_step(const rb_filter *f);
bool rb_filter_held(const rb_filter *f);

/* What made the last predict or update fail with RB_ENUMERIC (reset by every predict and update), with the
 * element (*index; index may be NULL):
 *   RB_FILTER_FAIL_P  the state covariance: not positive definite when factorized for the UKF's sigma points
 *                     (after the repairs; the state element whose pivot failed, the leading minor - 1), or a
 *                     non-finite diagonal element after a predict or update (that element);
 *   RB_FILTER_FAIL_S  the innovation covariance not positive definite (the measurement element, an index into z);
 *   RB_FILTER_FAIL_X  a non-finite predicted or updated state element (its index);
 *   RB_FILTER_FAIL_Z  a non-finite predicted measurement element (its index into z);
 *   RB_FILTER_FAIL_NONE otherwise (*index 0).
 * Lets a caller name the block of its state or measurement that lost definiteness or blew up. */
typedef enum rb_filter_fail {
    RB_FILTER_FAIL_NONE = 0,
    RB_FILTER_FAIL_P,
    RB_FILTER_FAIL_S,
    RB_FILTER_FAIL_X,
    RB_FILTER_FAIL_Z
} rb_filter_fail;
rb_filter_fail rb_filter_last_failure(const rb_filter *f, size_t *index);

/* ---- chi-square distribution (for gates and consistency bounds) ------------------------------ */
/* Regularized lower incomplete gamma P(a, x) = gamma(a, x) / Gamma(a), a > 0, x >= 0 (series for
 * x < a + 1, Lentz continued fraction otherwise; relative accuracy ~1e-14). NaN for bad arguments. */
double rb_gamma_p(double a, double x);
/* Chi-square CDF with k > 0 degrees of freedom: P(k / 2, x / 2). */
double rb_chi2_cdf(double x, double k);
/* The p-quantile of the chi-square distribution with k > 0 degrees of freedom (Wilson-Hilferty
 * start, then safeguarded Newton on rb_chi2_cdf; relative accuracy ~1e-12). RB_EINVAL unless
 * 0 < p < 1 and k > 0. */
int rb_chi2_quantile(double p, double k, double *q, rb_err *err);

/* ---- jump adaptation (lib/filters/jump.c) ----------------------------------------------------------
 * For a state that can jump faster than its process noise explains (the joint-torque UKF's motor torques
 * at a step of the controller or a contact): after an update, the NIS of a subset G of the measurements
 * (those of G used in it: nu_G^T S_GG^-1 nu_G, by a Cholesky factor of S_GG) is gated against the
 * chi-square quantile at `probability` with as many degrees of freedom as elements of G used. Above it
 * (a jump), every target (measurement j, state s, factor c) whose measurement was used adds
 *     d = scale c^2 max(0, nu_j^2 - S_jj)            (one-sample covariance matching: E[nu_j^2] = S_jj)
 * to the PRIOR variance P_ss (x and P before the update, kept by rb_jump_keep_prior), and the update is
 * repeated from that inflated prior with the same z: the sample that shows the jump absorbs it. c maps the
 * measurement's units to the state's (a current's k_t R for a torque state). Reported: the NIS of G (NaN
 * when S_GG is not positive definite, 0 when no element of G was used) and the inflation, the sum over
 * the used elements j of G of scale c_j^2 max(0, nu_j^2 - S_jj) (written only above the gate).
 * Works on any filter (KF, EKF, UKF). rb_jump_create allocates; the others allocate nothing. */
typedef struct rb_jump rb_jump; /* opaque */

typedef struct rb_jump_target {
    size_t meas, state; /* measurement j (index into z), state s (index into x) */
    double factor;      /* c */
} rb_jump_target;

typedef struct rb_jump_opts {
    const size_t *gate;        /* n_gate measurement indices: G */
    const double *gate_factor; /* n_gate: c_j for the reported inflation; NULL: 1 */
    size_t n_gate;
    const rb_jump_target *targets;
    size_t n_targets;
    double probability; /* the gate, in (0, 1) (e.g. 0.9999) */
    double scale;       /* > 0 (1: the innovation made consistent) */
} rb_jump_opts;

/* For filter f (its dimensions; options copied). RB_EINVAL (NULL arguments, an index out of range, scale
 * not positive; rb_chi2_quantile's for the probability), RB_ENOMEM. Free with rb_jump_free. */
int rb_jump_create(const rb_filter *f, const rb_jump_opts *o, rb_jump **out, rb_err *err);
void rb_jump_free(rb_jump *j); /* NULL is a no-op */
/* Before rb_filter_update: keep f's x and P (the prior). */
void rb_jump_keep_prior(rb_jump *j, const rb_filter *f);
/* After a successful rb_filter_update(f, z): gate, and on a jump inflate the kept prior and repeat the
 * update (z: the same measurement). *nis, *inflation (either may be NULL) as above; *inflation is left
 * alone below the gate. Errors of rb_filter_innovation_cov, rb_filter_set_state, rb_filter_update. */
int rb_jump_update(rb_jump *j, rb_filter *f, const double *z, double *nis, double *inflation, rb_err *err);

/* =============================================================================================
 * Adaptive Kalman filter, recursive and batch least squares (lib/filters/akf.c, lib/filters/rls.c)
 * ============================================================================================= */

/* ---- adaptive Kalman filter (covariance matching) ---------------------------------------------
 * The AKF of the SURALP thesis (seed 003, eq. 2.28-2.42) on the linear model
 *   x_k = A x_{k-1} + B u_{k-1} + w,   z_k = C x_k + v      (A n x n, B n x nu, C m x n)
 * with diagonal Q and R adapted at every step from the innovations (windows N_R, N_Q > 1):
 *   predict  x^-_k = A x_{k-1} + B u_{k-1},  P^-_k = A P_{k-1} A^T + Q_{k-1}         (2.28, 2.29)
 *   e_k = z_k - C x^-_k,  ebar_k = a1 ebar_{k-1} + e_k / N_R,  a1 = (N_R - 1) / N_R (2.30-2.32)
 *   R_k = |diag(a1 R_{k-1} + dR_k)|,
 *     dR_k = (e_k - ebar_k)(e_k - ebar_k)^T / (N_R - 1) - (C P^-_k C^T) / N_R        (2.33, 2.34)
 *   update   K_k = P^-_k C^T (C P^-_k C^T + R_k)^-1, x_k = x^-_k + K_k e_k, P_k = (I - K_k C) P^-_k
 *            (2.35-2.37; computed by the shared KF update: Cholesky of S, Joseph form, P symmetric)
 *   Q_k = |diag(a2 Q_{k-1} + dQ_k)|,  a2 = (N_Q - 1) / N_Q,                            (2.38, 2.40)
 *     dQ_k = (P_k - A P_{k-1} A^T) / N_Q + (L_k - Lbar_k)(L_k - Lbar_k)^T / (N_Q - 1),  (2.39)
 *     L_k = x_k - x^-_k,  Lbar_k = a2 Lbar_{k-1} + L_k / N_Q                            (2.41, 2.42)
 * with ebar_0 = 0, Lbar_0 = 0. Only the diagonals of dR, dQ enter (|diag(.)| keeps R and Q diagonal
 * and non-negative); A P_{k-1} A^T is taken as P^-_k - Q_{k-1}. Floor (positive definiteness): after
 * each rule R_ii = max(R_ii, r_floor_i) and Q_ii = max(Q_ii, q_floor_i), r_floor_i > 0, so S stays
 * positive definite and P^- positive semi-definite whatever the residuals do.
 * Missing measurements: an element of z that is NaN is skipped by the update (as in rb_filter_update),
 * its e, ebar and R are left unchanged; when no element is used, Q and Lbar are left unchanged too.
 * No gating (a gate sized by a wrong R would starve the adaptation).
 * Identifiability (what the rules can and cannot do): both rules drift with the same mismatch, the
 * innovations' variance about their running mean against the one the filter predicts (C P^- C^T + R;
 * dQ sees it through K). With one sensor per measured quantity this fixes one combination of Q and R,
 * not both (a scalar random walk measured once: Q collapses to its floor and the filter lags); with
 * redundant sensors (the same quantity measured twice) the diagonal R and Q are recovered (within 25 %
 * and 5 % in tests/unit/test_filters_akf.c from guesses 10x off).
 * The per-sample path allocates nothing. A step either succeeds or leaves x, P, Q, R and the running
 * means as they were. */
typedef struct rb_akf rb_akf; /* opaque */

typedef struct rb_akf_opts {
    size_t n, m, nu;       /* state, measurement, input dimensions (n, m >= 1) */
    const double *A;       /* n x n, required */
    const double *B;       /* n x nu; NULL: zeros */
    const double *C;       /* m x n, required */
    const double *x0;      /* n; NULL: zeros */
    const double *P0;      /* n x n symmetric positive definite, required */
    const double *Q0;      /* n: the diagonal of Q_0, each >= 0, required */
    const double *R0;      /* m: the diagonal of R_0, each > 0, required */
    double N_R, N_Q;       /* windows, > 1 (need not be integers) */
    const double *q_floor; /* n, each >= 0; NULL: 1e-9 * Q0_ii */
    const double *r_floor; /* m, each > 0; NULL: 1e-9 * R0_ii */
} rb_akf_opts;

/* Make an AKF (caller frees with rb_akf_free). RB_EINVAL (a missing matrix, n or m 0, N_R or N_Q
 * <= 1, a negative Q0 or floor, a non-positive R0 or r_floor; the message names the field),
 * RB_ENUMERIC (P0 not positive definite, a non-finite value), RB_ENOMEM. */
int rb_akf_create(const rb_akf_opts *o, rb_akf **out, rb_err *err);
void rb_akf_free(rb_akf *a); /* NULL is a no-op */
/* One step: predict with u = u_{k-1} (nu values, NULL: zeros), adapt R, update with z = z_k (m
 * values, NaN: missing), adapt Q. Errors of rb_filter_predict / rb_filter_update (RB_ENUMERIC naming
 * the step); on error nothing changed. */
int rb_akf_step(rb_akf *a, const double *u, const double *z, rb_err *err);
const double *rb_akf_x(const rb_akf *a); /* n, borrowed until the next step */
const double *rb_akf_P(const rb_akf *a); /* n x n row-major symmetric, borrowed likewise */
const double *rb_akf_Q(const rb_akf *a); /* n: diagonal of the current Q (Q_k) */
const double *rb_akf_R(const rb_akf *a); /* m: diagonal of the current R (R_k) */
/* The underlying linear KF, for rb_filter_get_diag / rb_filter_innovation_cov (borrowed). */
const rb_filter *rb_akf_filter(const rb_akf *a);
/* The KF's model views (rb_filter_get_mats): a time-varying model may rewrite F and B (and H) between steps
 * (e.g. a sample period that changes); Q and R are the AKF's own, rewritten from its diagonals every step. */
rb_filter_mats rb_akf_get_mats(rb_akf *a);

/* ---- recursive least squares with forgetting ---------------------------------------------------
 * Model y_k = Phi_k^T theta + noise, theta p parameters, y_k m outputs, Phi_k p x m (column j is
 * the regressor of output j; m = 1 is the scalar y = phi^T theta). This is the thesis's RLS (seed
 * 003, eq. 2.18-2.21, with Psi(k) = Phi_k^T) with a forgetting factor lambda in (0, 1]:
 *   e_k = y_k - Phi_k^T theta_{k-1}
 *   K_k = P_{k-1} Phi_k (lambda I_m + Phi_k^T P_{k-1} Phi_k)^-1
 *   theta_k = theta_{k-1} + K_k e_k,    P_k = (I - K_k Phi_k^T) P_{k-1} / lambda
 * computed as a Kalman update (shared KF code: Cholesky of the m x m innovation matrix, Joseph form,
 * P symmetric) of the state theta with H = Phi_k^T and R = I_m on the covariance P_{k-1} / lambda.
 * theta_k minimizes sum_{j<=k} lambda^(k-j) |y_j - Phi_j^T theta|^2 + lambda^k (theta - theta_0)^T
 * P_0^-1 (theta - theta_0): with lambda = 1 and P_0 = delta I the prior term biases theta by about
 * (Phi^T Phi)^-1 (theta_0 - theta_LS) / delta; rb_rls_init_batch removes it (theta_0, P_0 from a
 * batch solve of the first samples), after which theta_k equals the batch least-squares solution of
 * all samples (to rounding: 1e-15 relative in the tests).
 * lambda < 1 forgets with time constant ~ 1 / (1 - lambda) samples (tracks changing parameters; P
 * grows as lambda^-k in directions without excitation: keep the regressor exciting).
 * NaN in y skips that output (as a missing measurement); a non-finite Phi is RB_ENUMERIC.
 * rb_rls_update allocates nothing. */
typedef struct rb_rls rb_rls; /* opaque */

typedef struct rb_rls_opts {
    size_t p, m;          /* parameters, outputs per sample (>= 1) */
    double lambda;        /* forgetting factor in (0, 1]; 0 means 1 */
    const double *theta0; /* p; NULL: zeros */
    const double *P0;     /* p x p symmetric positive definite; NULL: delta I */
    double delta;         /* > 0, used when P0 is NULL; 0 means 1e6 */
} rb_rls_opts;

/* RB_EINVAL (p or m 0, lambda outside (0, 1], delta < 0), RB_ENUMERIC (P0 not positive definite,
 * non-finite values), RB_ENOMEM. Free with rb_rls_free. */
int rb_rls_create(const rb_rls_opts *o, rb_rls **out, rb_err *err);
void rb_rls_free(rb_rls *r); /* NULL is a no-op */
/* One sample: Phi (p x m row-major), y (m). On error nothing changed. */
int rb_rls_update(rb_rls *r, const double *Phi, const double *y, rb_err *err);
/* Restart from theta (p) and P (p x p, symmetric positive definite); NULL keeps the current one. */
int rb_rls_reset(rb_rls *r, const double *theta, const double *P, rb_err *err);
/* Restart from the batch solution of N samples (Phi: N blocks of p x m, y: N x m, as for rb_lstsq,
 * N m >= p, full column rank): theta = that solution, P = (sum_k Phi_k Phi_k^T)^-1 (from the R of the
 * QR factorization, LAPACK dpotri). Allocates (not per sample). Errors as rb_lstsq. */
int rb_rls_init_batch(rb_rls *r, const double *Phi, const double *y, size_t N, rb_err *err);
const double *rb_rls_theta(const rb_rls *r); /* p, borrowed until the next update */
const double *rb_rls_P(const rb_rls *r);     /* p x p row-major symmetric, borrowed likewise */
/* e_k = y_k - Phi_k^T theta_{k-1} of the last update (m; NaN where y was NaN). */
const double *rb_rls_residual(const rb_rls *r);

/* ---- batch least squares -------------------------------------------------------------------------
 * theta = argmin sum_{k<N} |y_k - Phi_k^T theta|^2 for the model above (Phi: N blocks of p x m
 * row-major, sample k at Phi + k p m; y: N x m), through the QR factorization of the stacked
 * N m x p regressor (LAPACK dgels; no normal equations). theta: p values; rss (may be NULL): the
 * residual sum of squares. Allocates a copy of the regressor. RB_EINVAL (p, m or N 0, NULL data),
 * RB_EDIM (N m < p), RB_ENUMERIC (a non-finite value, or the regressor is rank deficient: a diagonal
 * element of R below 1e-12 times the largest), RB_ENOMEM. */
int rb_lstsq(const double *Phi, const double *y, size_t N, size_t p, size_t m, double *theta, double *rss, rb_err *err);

/* ---- the constant-acceleration derivative filter (joint-torque paper eq. 3; the kf_derivative stage) -------------
 * One independent 3-state, 1-measurement KF per signal element, state s = [x, x_dot, x_ddot], on the clock's
 * actual interval dT = t_k - t_{k-1} (so a jittery clock is handled):
 *     s_k = F s_{k-1} + w,  F = [[1, dT, dT^2/2], [0, 1, dT], [0, 0, 1]]
 *     z_k = x_k + v,        v ~ N(0, r)
 * process noise w ~ N(0, Q):
 *   RB_KFD_JERK: x_ddot driven by white jerk of spectral density q (unit^2/s^5), the exact discretization
 *     Q = q [[dT^5/20, dT^4/8, dT^3/6], [dT^4/8, dT^3/3, dT^2/2], [dT^3/6, dT^2/2, dT]]
 *     so the filter does not change with the sample rate for a given q;
 *   RB_KFD_DIAGONAL: Q = diag(q_diag) per step, whatever dT (as tuned per rate).
 * A NaN sample after the start is skipped (predict only). */
#define RB_KFD_DEFAULT_Q 1e4    /* unit^2/s^5 */
#define RB_KFD_DEFAULT_R 1e-6   /* unit^2 */
#define RB_KFD_DEFAULT_P0_X 1.0 /* unit^2 */
#define RB_KFD_DEFAULT_P0_V 1e2 /* unit^2/s^2 */
#define RB_KFD_DEFAULT_P0_A 1e4 /* unit^2/s^4 */

typedef enum rb_kfd_noise { RB_KFD_JERK, RB_KFD_DIAGONAL } rb_kfd_noise;

/* The filter of one element (the kf_derivative stage's parameters for that element). */
typedef struct rb_kfd_params {
    rb_kfd_noise noise;
    double q;         /* RB_KFD_JERK: jerk spectral density, unit^2/s^5, >= 0 */
    double q_diag[3]; /* RB_KFD_DIAGONAL: per-step variances of x, x_dot, x_ddot, >= 0 */
    double r;         /* measurement variance, unit^2, > 0 */
    double p0[3];     /* initial variances, > 0 */
} rb_kfd_params;

/* F (3 x 3 row-major) and Q (3 x 3) of the model above for an interval dt (s). */
void rb_kfd_model(const rb_kfd_params *par, double dt, double F[9], double Q[9]);

/* One element's filter: a 3-state, 1-measurement linear KF (the KF above: Cholesky gain, Joseph form) that
 * starts at the first finite sample: s = [z_0, 0, 0], P = diag(p0), then the update with z_0. */
typedef struct rb_kfd {
    rb_filter *f;
    rb_kfd_params par;
    bool started;
    double t_prev, dt; /* time of the last step; the interval F and Q were built for (0: none yet) */
} rb_kfd;

/* What one step gives: the state and the filter's diagnostics of that step. */
typedef struct rb_kfd_result {
    double x[3];       /* x, x_dot, x_ddot; NaN before the first finite sample */
    double innovation; /* z - predicted x (the update's innovation); NaN where nothing was predicted (up to
                          and including the first finite sample) and where z is NaN (skipped) */
    double nis;        /* innovation^2 / S of that update; NaN likewise */
    double var[3];     /* diagonal of P after the step; NaN before the first finite sample */
} rb_kfd_result;

/* RB_EINVAL unless r > 0, p0 > 0, q >= 0 (the jerk model) and q_diag >= 0 (the diagonal model), all finite. */
int rb_kfd_check(const rb_kfd_params *par, rb_err *err);
/* Make the filter (free with rb_kfd_free; freeing a failed init is fine). RB_ENOMEM. */
int rb_kfd_init(rb_kfd *e, const rb_kfd_params *par, rb_err *err);
void rb_kfd_free(rb_kfd *e);
/* Step to time t (after the previous step's) with measurement z (NaN: predict only): F and Q are rebuilt
 * when the interval changes. RB_EINPUT "time t s does not follow t_prev s", the filter's RB_ENUMERIC.
 * Allocates nothing. */
int rb_kfd_step(rb_kfd *e, double t, double z, rb_kfd_result *o, rb_err *err);

/* The time constant of the filter's start-up, s: the steady-state gain K at interval dt (the Riccati recursion from
 * P = diag(p0) until K stops changing), the error dynamics e_k = (I - K H) F e_{k-1} and their slowest mode lambda:
 * tau = -dt / ln|lambda|. INFINITY when the filter never reaches a steady state within 10^6 steps (q = 0: the gain
 * decays to 0) or dt is not finite and > 0. */
double rb_kfd_time_constant(const rb_kfd_params *par, double dt);

/* Run the filter for one element over T samples over T samples (times t, strictly increasing; z may hold
 * NaN): x, x_dot, x_ddot (T each, any may be NULL) exactly as the stage outputs them, and pred (T, may
 * be NULL) the one-step prediction error z_k - x^-_k (NaN at the first finite sample and where z is
 * NaN). Allocates one filter. RB_EINVAL (bad parameters), RB_EINPUT (time not increasing, naming the
 * sample), the filter's RB_ENUMERIC, RB_ENOMEM. */
int rb_kfd_run(const rb_kfd_params *par, const double *t, const double *z, size_t T, double *x, double *x_dot,
               double *x_ddot, double *pred, rb_err *err);

/* ---- a constant offset averaged over a still window (still_offset.c) ----------------------------------------------
 * o = mean of (measured - predicted) over the samples of a still window at the start of a run: the window is given
 * ([w0, w1] s from the first sample) or detected (every |dq_i| below `speed`, from the first sample until a joint
 * moves or `t_max` s pass; when a joint starts to move the last RB_STILL_OFFSET_GUARD to 2 RB_STILL_OFFSET_GUARD s
 * are dropped: it accelerated before its speed crossed the threshold). `first_only`: the window of one sample.
 * Causal: until the window ends `offset` is the running mean (the first sample's before a given window starts),
 * then it is frozen. Per element, non-finite differences left out. Used for an FT sensor's start-up offset against
 * a model's predicted readings (rnea_torque, ukf_torque). Nothing allocates after init. */
#define RB_STILL_OFFSET_GUARD 0.05 /* s */

typedef struct rb_still_offset_cfg {
    bool first_only; /* the first sample's difference, frozen at once */
    bool given;      /* the window [w0, w1] s from the first sample (w1 > w0), else detected */
    double w0, w1;
    double speed; /* detected: still while every |dq_i| < speed (> 0) */
    double t_max; /* detected: the window ends at this length, s (> 0) */
} rb_still_offset_cfg;

typedef struct rb_still_offset {
    rb_still_offset_cfg cfg;
    size_t m;
    bool started;      /* the first sample was seen */
    bool frozen;       /* the offset is final */
    double t_first;    /* its time */
    double t_end;      /* detected: the sample that ended the window (moved), or the last one seen */
    size_t n_avg;      /* samples averaged */
    double *sum, *cnt; /* m each: every sample of the window */
    /* detected: sums in blocks of RB_STILL_OFFSET_GUARD s, the last two dropped when a joint moves */
    double *done_sum, *done_cnt, *prev_sum, *prev_cnt, *cur_sum, *cur_cnt; /* m each */
    double t_block;                                                        /* the current block's start */
    double *offset;                                                        /* m: the offset in use */
} rb_still_offset;

/* RB_EINVAL for a window with w1 <= w0, speed or t_max not > 0 (detected); RB_ENOMEM. Free with
 * rb_still_offset_free (also after a failed init). */
int rb_still_offset_init(rb_still_offset *o, const rb_still_offset_cfg *cfg, size_t m, rb_err *err);
void rb_still_offset_free(rb_still_offset *o);
/* True while the offset still changes (the caller predicts this sample's readings for rb_still_offset_add). */
static inline bool rb_still_offset_collecting(const rb_still_offset *o) { return !o->frozen; }
/* One sample: t its time, dq (n) the joint velocities (a NaN: neither still nor moving, skipped), meas and pred the
 * measured and predicted values (m each). */
void rb_still_offset_add(rb_still_offset *o, double t, const double *dq, size_t n, const double *meas,
                         const double *pred);

RB_API_END

#endif
