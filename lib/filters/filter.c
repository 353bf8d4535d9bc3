/* Common parts of every filter: options, allocation, the shared measurement path (missing
 * elements, gating, Cholesky gain, covariance update), state access and diagnostics. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "filters_internal.h"

_Static_assert(sizeof(size_t) <= sizeof(double), "size_t arrays are carved from the double block");

void rb_filter_opts_init(rb_filter_opts *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->alpha = 1.0;
    o->beta = 2.0;
    o->kappa = 0.0;
    o->jitter = 1e-9;
}

static const char *kind_name(rb_filter_kind kind)
{
    switch (kind) {
    case RB_FILTER_KF: return "kf";
    case RB_FILTER_EKF: return "ekf";
    case RB_FILTER_UKF: return "ukf";
    }
    return "filter";
}

/* Copy a rows x cols row-major matrix, checking finiteness (and symmetry when square_sym). */
static int copy_checked(double *dst, const double *src, size_t rows, size_t cols, bool sym, const char *what,
                        const char *fname, rb_err *err)
{
    for (size_t i = 0; i < rows * cols; i++) {
        if (!isfinite(src[i]))
            return rb_err_set(err, RB_ENUMERIC, "%s create: %s element (%zu, %zu) is not finite", fname, what, i / cols,
                              i % cols);
    }
    memcpy(dst, src, rows * cols * sizeof *dst);
    if (!sym)
        return RB_OK;
    for (size_t i = 0; i < rows; i++) {
        for (size_t j = i + 1; j < rows; j++) {
            double a = dst[i * rows + j], b = dst[j * rows + i];
            double scale = fabs(dst[i * rows + i]) + fabs(dst[j * rows + j]) + fabs(a) + fabs(b);
            if (fabs(a - b) > 1e-9 * scale)
                return rb_err_set(err, RB_EINVAL, "%s create: %s is not symmetric (elements (%zu, %zu) and (%zu, %zu))",
                                  fname, what, i, j, j, i);
        }
    }
    rb_filt_symmetrize(dst, rows);
    return RB_OK;
}

/* Carve n doubles from the block. */
static double *take(double **cursor, size_t count)
{
    double *p = *cursor;
    *cursor += count;
    return p;
}

int rb_filt_alloc(const rb_filter_opts *o, rb_filter_kind kind, const rb_filt_ops *ops, rb_filter **out, rb_err *err)
{
    const char *name = kind_name(kind);
    if (out)
        *out = NULL;
    if (!o || !out)
        return rb_err_set(err, RB_EINVAL, "%s create: NULL options or output", name);
    size_t n = o->n, m = o->m, nu = o->nu;
    if (n == 0 || m == 0)
        return rb_err_set(err, RB_EINVAL, "%s create: n and m must be at least 1 (n %zu, m %zu)", name, n, m);
    if (n > 100000 || m > 100000 || nu > 100000)
        return rb_err_set(err, RB_EINVAL, "%s create: dimensions too large (n %zu, m %zu, nu %zu)", name, n, m, nu);
    if (!o->P0)
        return rb_err_set(err, RB_EINVAL, "%s create: P0 is required", name);
    if (!o->R)
        return rb_err_set(err, RB_EINVAL, "%s create: R is required", name);
    if (kind == RB_FILTER_KF && (!o->F || !o->H))
        return rb_err_set(err, RB_EINVAL, "%s create: F and H are required", name);
    if (kind == RB_FILTER_EKF && (!o->f || !o->h))
        return rb_err_set(err, RB_EINVAL, "%s create: the process model f and measurement model h are required", name);
    if (kind == RB_FILTER_UKF && ((!o->f && !o->f_batch) || (!o->h && !o->h_batch)))
        return rb_err_set(
            err, RB_EINVAL,
            "%s create: the process model (f or f_batch) and measurement model (h or h_batch) are required", name);
    if (o->n_nonlinear && (kind != RB_FILTER_UKF || o->n_nonlinear >= n || !o->affine || o->residual))
        return rb_err_set(
            err, RB_EINVAL,
            "%s create: n_nonlinear (%zu) is for the UKF, below n (%zu), with affine and without residual", name,
            o->n_nonlinear, n);
    if (o->project && !ops->project)
        return rb_err_set(err, RB_EINVAL, "%s create: project is for the EKF only", name);
    if (!(o->fd_step >= 0.0) || !isfinite(o->fd_step))
        return rb_err_set(err, RB_EINVAL, "%s create: fd_step must be >= 0 (got %g)", name, o->fd_step);
    if (o->hold > 1 && (!ops->predict_mean || o->gate.mode == RB_GATE_ELEMENT))
        return rb_err_set(err, RB_EINVAL, "%s create: hold (%zu) is for the UKF, and not with the element gate", name,
                          o->hold);
    if (!(o->jitter >= 0.0) || !isfinite(o->jitter))
        return rb_err_set(err, RB_EINVAL, "%s create: jitter must be >= 0 (got %g)", name, o->jitter);
    double lambda = 0.0;
    if (kind == RB_FILTER_UKF) {
        if (!(o->alpha > 0.0) || !isfinite(o->alpha) || !isfinite(o->beta) || !isfinite(o->kappa))
            return rb_err_set(err, RB_EINVAL, "%s create: alpha must be > 0 and beta, kappa finite (alpha %g)", name,
                              o->alpha);
        lambda = o->alpha * o->alpha * ((double)n + o->kappa) - (double)n;
        if (!((double)n + lambda > 0.0))
            return rb_err_set(err, RB_EINVAL, "%s create: n + lambda must be > 0 (alpha %g, kappa %g, n %zu)", name,
                              o->alpha, o->kappa, n);
    }
    switch (o->gate.mode) {
    case RB_GATE_OFF: break;
    case RB_GATE_VECTOR:
    case RB_GATE_ELEMENT:
        if (!(o->gate.threshold > 0.0) && !(o->gate.probability > 0.0 && o->gate.probability < 1.0))
            return rb_err_set(err, RB_EINVAL,
                              "%s create: gate needs a threshold > 0 or a probability in (0, 1) (threshold %g, "
                              "probability %g)",
                              name, o->gate.threshold, o->gate.probability);
        break;
    default: return rb_err_set(err, RB_EINVAL, "%s create: unknown gate mode %d", name, (int)o->gate.mode);
    }

    size_t N = kind == RB_FILTER_UKF ? 2 * n + 1 : 0;
    size_t nm = n * m, n2 = n * n, m2 = m * m, mx = n > m ? n : m;
    size_t count = 2 * n + 4 * n2 + 4 * m2 + 4 * m + 4 * nm + n + (m + 1) + n + 2 * mx;
    if (kind != RB_FILTER_UKF)
        count += 2 * n2 + 2 * nm + (kind == RB_FILTER_KF ? n * nu : 0);
    else
        count += 2 * n * N + m * N + n;
    count += n2; /* L */
    if (o->hold > 1)
        count += m2 + m; /* Sh idxh */
    if (o->n_nonlinear)
        count += 4 * n2 + 3 * mx * n + mx * mx + 3 * mx + 2 * n; /* Lt B1 B2 B3 Gd U Gl Mg drow scol sval nrow urow */
    size_t bytes = count * sizeof(double) + 2 * m * sizeof(size_t) + m;

    rb_filter *f = rb_calloc(1, sizeof *f);
    if (!f)
        return rb_err_set(err, RB_ENOMEM, "%s create: out of memory", name);
    f->block = rb_calloc(1, bytes);
    if (!f->block) {
        rb_free(f);
        return rb_err_set(err, RB_ENOMEM, "%s create: out of memory (%zu bytes)", name, bytes);
    }
    f->kind = kind;
    f->ops = ops;
    f->name = name;
    f->n = n;
    f->m = m;
    f->nu = nu;
    double *cur = f->block;
    f->x = take(&cur, n);
    f->xn = take(&cur, n);
    f->P = take(&cur, n2);
    f->Pn = take(&cur, n2);
    f->T = take(&cur, n2);
    f->Q = take(&cur, n2);
    f->L = take(&cur, n2);
    f->R = take(&cur, m2);
    f->Rc = take(&cur, m2);
    f->S = take(&cur, m2);
    f->Ssave = take(&cur, m2);
    f->zhat = take(&cur, m);
    f->inno = take(&cur, m);
    f->innoc = take(&cur, m);
    f->y = take(&cur, m);
    f->HcT = take(&cur, nm);
    f->C = take(&cur, nm);
    f->W = take(&cur, nm);
    f->K = take(&cur, nm);
    f->P_diag = take(&cur, n);
    f->gate_limit = take(&cur, m + 1);
    f->fd_x = take(&cur, n);
    f->fd_a = take(&cur, mx);
    f->fd_b = take(&cur, mx);
    if (kind != RB_FILTER_UKF) {
        f->A = take(&cur, n2);
        f->F = take(&cur, n2);
        f->H = take(&cur, nm);
        f->Hc = take(&cur, nm);
        if (kind == RB_FILTER_KF)
            f->B = take(&cur, n * nu);
    } else {
        f->Y = take(&cur, n * N);
        f->X = take(&cur, n * N);
        f->Z = take(&cur, m * N);
        f->xs = take(&cur, n);
        if (o->n_nonlinear) {
            f->Lt = take(&cur, n2);
            f->Gl = take(&cur, mx * n);
            f->Gd = take(&cur, mx * n);
            f->U = take(&cur, mx * n);
            f->Mg = take(&cur, mx * mx);
            f->drow = (size_t *)take(&cur, mx); /* size_t and double have the same size on the supported ABIs */
            f->scol = (size_t *)take(&cur, mx);
            f->sval = take(&cur, mx);
            f->nrow = (size_t *)take(&cur, n);
            f->urow = (size_t *)take(&cur, n);
            f->B1 = take(&cur, n2);
            f->B2 = take(&cur, n2);
            f->B3 = take(&cur, n2);
        }
    }
    if (o->hold > 1) {
        f->hold = o->hold;
        f->Sh = take(&cur, m2);
        f->idxh = (size_t *)take(&cur, m);
    }
    f->idx = (size_t *)cur;
    f->pos = f->idx + m;
    f->status = (unsigned char *)(f->pos + m);

    f->f = o->f;
    f->h = o->h;
    f->f_batch = o->f_batch;
    f->h_batch = o->h_batch;
    f->jac_f = o->jac_f;
    f->jac_h = o->jac_h;
    f->residual = o->residual;
    f->project = o->project;
    f->user = o->user;
    f->fd_step = o->fd_step > 0.0 ? o->fd_step : cbrt(DBL_EPSILON);
    f->schedule = o->schedule;
    f->schedule_user = o->schedule_user;
    f->gate = o->gate;
    f->jitter = o->jitter;
    f->N = N;
    f->nl = o->n_nonlinear;
    f->affine = o->affine;
    for (size_t i = 0; f->nl && o->identity && i < n; i++) /* the row lists, ascending */
        if (o->identity[i])
            f->urow[f->n_id++] = i;
        else
            f->nrow[i - f->n_id] = i;
    if (kind == RB_FILTER_UKF) {
        double nl = (double)n + lambda;
        f->lambda = lambda;
        f->c = sqrt(nl);
        f->wm0 = lambda / nl;
        f->wc0 = f->wm0 + 1.0 - o->alpha * o->alpha + o->beta;
        f->wi = 1.0 / (2.0 * nl);
    }

    int rc = RB_OK;
    if (o->x0 && (rc = copy_checked(f->x, o->x0, 1, n, false, "x0", name, err)) != RB_OK)
        goto fail;
    if ((rc = copy_checked(f->P, o->P0, n, n, true, "P0", name, err)) != RB_OK)
        goto fail;
    if (o->Q && (rc = copy_checked(f->Q, o->Q, n, n, true, "Q", name, err)) != RB_OK)
        goto fail;
    if ((rc = copy_checked(f->R, o->R, m, m, true, "R", name, err)) != RB_OK)
        goto fail;
    if (kind == RB_FILTER_KF) {
        if ((rc = copy_checked(f->F, o->F, n, n, false, "F", name, err)) != RB_OK)
            goto fail;
        if ((rc = copy_checked(f->H, o->H, m, n, false, "H", name, err)) != RB_OK)
            goto fail;
        if (o->B && nu > 0 && (rc = copy_checked(f->B, o->B, n, nu, false, "B", name, err)) != RB_OK)
            goto fail;
    }
    memcpy(f->L, f->P, n2 * sizeof(double));
    int info = rb_filt_chol(f->L, n);
    if (info != 0) {
        rc = rb_err_set(err, RB_ENUMERIC, "%s create: P0 is not positive definite (LAPACK dpotrf: leading minor %d)",
                        name, info);
        goto fail;
    }
    memcpy(f->S, f->R, m2 * sizeof(double));
    info = rb_filt_chol(f->S, m);
    if (info != 0) {
        rc = rb_err_set(err, RB_ENUMERIC, "%s create: R is not positive definite (LAPACK dpotrf: leading minor %d)",
                        name, info);
        goto fail;
    }
    f->gate_limit[0] = 0.0;
    for (size_t d = 1; d <= m; d++) {
        if (f->gate.mode == RB_GATE_OFF)
            f->gate_limit[d] = INFINITY;
        else if (f->gate.threshold > 0.0)
            f->gate_limit[d] = f->gate.threshold;
        else if ((rc = rb_chi2_quantile(f->gate.probability, (double)d, &f->gate_limit[d], err)) != RB_OK) {
            rb_err_prefix(err, rc, "%s create: gate: ", name);
            goto fail;
        }
    }
    for (size_t i = 0; i < n; i++)
        f->P_diag[i] = f->P[i * n + i];
    for (size_t i = 0; i < m; i++) {
        f->inno[i] = NAN;
        f->status[i] = RB_MEAS_NONE;
    }
    f->nis = NAN;
    *out = f;
    return RB_OK;
fail:
    rb_filter_free(f);
    return rc;
}

void rb_filter_free(rb_filter *f)
{
    if (!f)
        return;
    rb_free(f->block);
    rb_free(f);
}

rb_filter_kind rb_filter_get_kind(const rb_filter *f) { return f->kind; }

void rb_filter_dims(const rb_filter *f, size_t *n, size_t *m, size_t *nu)
{
    if (n)
        *n = f->n;
    if (m)
        *m = f->m;
    if (nu)
        *nu = f->nu;
}

rb_filter_mats rb_filter_get_mats(rb_filter *f)
{
    rb_filter_mats v;
    memset(&v, 0, sizeof v);
    if (f->kind == RB_FILTER_KF) {
        v.F = rb_mat_view(f->F, f->n, f->n, f->n);
        v.B = rb_mat_view(f->B, f->n, f->nu, f->nu);
        v.H = rb_mat_view(f->H, f->m, f->n, f->n);
    }
    v.Q = rb_mat_view(f->Q, f->n, f->n, f->n);
    v.R = rb_mat_view(f->R, f->m, f->m, f->m);
    return v;
}

int rb_filt_schedule(rb_filter *f, rb_filter_phase phase, long step, const double *u, double dt, const double *z,
                     rb_err *err)
{
    if (!f->schedule)
        return RB_OK;
    rb_filter_sched s;
    s.phase = phase;
    s.step = step;
    s.x = f->x;
    s.P = f->P;
    s.u = u;
    s.dt = dt;
    s.z = z;
    s.mats = rb_filter_get_mats(f);
    int rc = f->schedule(f->schedule_user, &s, err);
    if (rc != RB_OK) {
        if (rc > 0)
            rc = rb_err_set(err, RB_EINVAL, "scheduling callback returned %d", rc);
        rb_err_prefix(err, rc, "%s %s, step %ld: scheduling: ", f->name,
                      phase == RB_FILTER_PREDICT ? "predict" : "update", step);
    }
    return rc;
}

void rb_filt_predict_done(rb_filter *f, long step, bool mean_only)
{
    double *t = f->x;
    f->x = f->xn;
    f->xn = t;
    if (!mean_only) {
        t = f->P;
        f->P = f->Pn;
        f->Pn = t;
        for (size_t i = 0; i < f->n; i++)
            f->P_diag[i] = f->P[i * f->n + i];
    }
    f->held = mean_only;
    f->held_steps = mean_only ? f->held_steps + 1 : 0;
    f->step = step;
    f->predicts++;
    for (size_t i = 0; i < f->m; i++) {
        f->inno[i] = NAN;
        f->status[i] = RB_MEAS_NONE;
    }
    f->nis = NAN;
    f->limit = 0.0;
    f->rejected = false;
}

int rb_filter_predict(rb_filter *f, const double *u, double dt, rb_err *err)
{
    if (!f)
        return rb_err_set(err, RB_EINVAL, "filter predict: NULL filter");
    long step = f->step + 1;
    f->fail = RB_FILTER_FAIL_NONE;
    f->fail_index = 0;
    int rc = rb_filt_schedule(f, RB_FILTER_PREDICT, step, u, dt, NULL, err);
    if (rc != RB_OK)
        return rc;
    /* rb_filter_opts.hold: a mean-only step while the last refresh's gain is held */
    bool mean_only = f->hold > 1 && f->gain_ok && f->held_steps + 1 < f->hold;
    rc = mean_only ? f->ops->predict_mean(f, u, dt, step, err) : f->ops->predict(f, u, dt, step, err);
    if (rc != RB_OK)
        return rc;
    size_t bad = rb_filt_first_nonfinite(f->xn, f->n);
    if (bad < f->n) {
        f->fail = RB_FILTER_FAIL_X, f->fail_index = bad;
        return rb_err_set(err, RB_ENUMERIC, "%s predict, step %ld: predicted state element %zu is not finite", f->name,
                          step, bad);
    }
    for (size_t i = 0; !mean_only && i < f->n; i++) {
        if (!isfinite(f->Pn[i * f->n + i])) {
            f->fail = RB_FILTER_FAIL_P, f->fail_index = i;
            return rb_err_set(err, RB_ENUMERIC, "%s predict, step %ld: predicted covariance P(%zu, %zu) is not finite",
                              f->name, step, i, i);
        }
    }
    rb_filt_predict_done(f, step, mean_only);
    return RB_OK;
}

int rb_filter_update(rb_filter *f, const double *z, rb_err *err)
{
    if (!f || !z)
        return rb_err_set(err, RB_EINVAL, "filter update: NULL filter or measurement");
    return rb_filt_update(f, z, err);
}

/* Drop the compact entries whose keep flag (status USED) is false: nuc, idx, Rc, S (k x k), C and
 * HcT (n x k). In place: every entry moves to a position no later than its own. */
static size_t compact_used(rb_filter *f, size_t k)
{
    size_t n = f->n, kk = 0;
    size_t *keep = f->idx, *pos = f->pos;
    for (size_t j = 0; j < k; j++) {
        if (f->status[keep[j]] == RB_MEAS_USED)
            pos[kk++] = j;
    }
    if (kk == k)
        return k;
    for (size_t b = 0; b < kk; b++) {
        for (size_t a = 0; a < kk; a++) {
            f->S[a + b * kk] = f->S[pos[a] + pos[b] * k];
            f->Rc[a + b * kk] = f->Rc[pos[a] + pos[b] * k];
        }
    }
    for (size_t j = 0; j < kk; j++) {
        f->innoc[j] = f->innoc[pos[j]];
        keep[j] = keep[pos[j]];
        if (pos[j] != j) {
            memmove(f->C + j * n, f->C + pos[j] * n, n * sizeof(double));
            if (f->kind != RB_FILTER_UKF)
                memmove(f->HcT + j * n, f->HcT + pos[j] * n, n * sizeof(double));
        }
    }
    return kk;
}

void rb_filt_innovation(rb_filter *f, const double *z)
{
    for (size_t i = 0; i < f->m; i++)
        f->inno[i] = z[i] - f->zhat[i];
    if (f->residual)
        f->residual(f->user, f->inno);
    for (size_t j = 0; j < f->k; j++)
        f->innoc[j] = f->inno[f->idx[j]];
}

/* KF / EKF: the used rows of H in both layouts, D = Hc P, S = D Hc^T + Rc, C = D^T = P Hc^T.
 * Only (NoTrans, Trans) dgemm: OpenBLAS 0.3.21's small-matrix NN kernel for SkylakeX mallocs a
 * packing buffer, and its threaded dsymm mallocs a job array even for tiny matrices. */
static void linear_measure(rb_filter *f)
{
    size_t n = f->n, m = f->m, k = f->k;
    for (size_t j = 0; j < k; j++) {
        const double *row = f->H + f->idx[j] * n;
        memcpy(f->HcT + j * n, row, n * sizeof(double));
        for (size_t i = 0; i < n; i++)
            f->Hc[j + i * k] = row[i];
    }
    for (size_t b = 0; b < k; b++)
        for (size_t a = 0; a < k; a++)
            f->Rc[a + b * k] = f->R[f->idx[a] * m + f->idx[b]];
    double *D = f->W; /* k x n, free until the gain */
    rb_filt_gemm_nt(k, n, n, 1.0, f->Hc, k, f->P, n, 0.0, D, k);
    memcpy(f->S, f->Rc, k * k * sizeof(double));
    rb_filt_gemm_nt(k, k, n, 1.0, D, k, f->Hc, k, 1.0, f->S, k);
    rb_filt_symmetrize(f->S, k);
    for (size_t j = 0; j < k; j++)
        for (size_t i = 0; i < n; i++)
            f->C[i + j * n] = D[j + i * k];
}

/* Joseph form into Pn: A = I - K H, Pn = A P A^T + K R K^T (K in f->K, n x k). Products as
 * X Y^T only (P and Rc are symmetric), for the reason given at linear_measure. */
static void joseph(rb_filter *f)
{
    size_t n = f->n, k = f->k;
    double *A = f->A;
    memset(A, 0, n * n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        A[i * n + i] = 1.0;
    rb_filt_gemm_nt(n, n, k, -1.0, f->K, n, f->HcT, n, 1.0, A, n);
    rb_filt_gemm_nt(n, n, n, 1.0, A, n, f->P, n, 0.0, f->T, n);
    rb_filt_gemm_nt(n, k, k, 1.0, f->K, n, f->Rc, k, 0.0, f->W, n);
    rb_filt_gemm_nt(n, n, k, 1.0, f->W, n, f->K, n, 0.0, f->Pn, n);
    rb_filt_gemm_nt(n, n, n, 1.0, f->T, n, A, n, 1.0, f->Pn, n);
    rb_filt_symmetrize(f->Pn, f->n);
}

int rb_filt_check_zhat(rb_filter *f, long step, rb_err *err)
{
    for (size_t j = 0; j < f->k; j++) {
        if (!isfinite(f->zhat[f->idx[j]])) {
            f->fail = RB_FILTER_FAIL_Z, f->fail_index = f->idx[j];
            return rb_err_set(err, RB_ENUMERIC, "%s update, step %ld: predicted measurement element %zu is not finite",
                              f->name, step, f->idx[j]);
        }
    }
    return RB_OK;
}

/* y = L^-1 nu over the k used elements (L: S's lower factor), the NIS y^T y, and the vector gate on it. */
static void nis_and_gate(rb_filter *f, const double *L, size_t k)
{
    memcpy(f->y, f->innoc, k * sizeof(double));
    rb_filt_trsv_ln(k, L, k, f->y);
    f->nis = rb_filt_dot(k, f->y, f->y);
    if (f->gate.mode == RB_GATE_VECTOR && !(f->nis <= f->gate_limit[k])) {
        f->rejected = true;
        for (size_t j = 0; j < k; j++)
            f->status[f->idx[j]] = RB_MEAS_GATED;
    }
}

/* xn = x + W y (W = C L^-T, n x k); RB_ENUMERIC when it is not finite. */
static int gain_step(rb_filter *f, const double *W, size_t k, long step, rb_err *err)
{
    size_t n = f->n;
    memcpy(f->xn, f->x, n * sizeof(double));
    rb_filt_gemv(n, k, 1.0, W, n, f->y, 1.0, f->xn);
    size_t bad = rb_filt_first_nonfinite(f->xn, n);
    if (bad < n) {
        f->fail = RB_FILTER_FAIL_X, f->fail_index = bad;
        return rb_err_set(err, RB_ENUMERIC, "%s update, step %ld: updated state element %zu is not finite", f->name,
                          step, bad);
    }
    return RB_OK;
}

/* rb_filter_opts.hold: the update of a mean-only step, on the refresh's elements (idx[0..k) = idxh): the innovation at
 * h(x), then x += W L_S^-1 nu with the refresh's W and S factor (vector gate and NIS on that S). P is held. */
static int held_update(rb_filter *f, const double *z, long step, size_t finite, rb_err *err)
{
    size_t m = f->m, k = f->k;
    int rc = f->ops->measure_mean(f, step, err);
    if (rc != RB_OK || (rc = rb_filt_check_zhat(f, step, err)) != RB_OK)
        return rc;
    rb_filt_innovation(f, z);
    nis_and_gate(f, f->Sh, k);
    if (!f->rejected) {
        if ((rc = gain_step(f, f->K, k, step, err)) != RB_OK)
            return rc;
        double *t = f->x;
        f->x = f->xn;
        f->xn = t;
    }
    f->updates++;
    f->missing += (long)(m - finite);
    if (f->rejected)
        f->gated_updates++;
    f->have_update = f->held_update = true;
    return RB_OK;
}

int rb_filt_update(rb_filter *f, const double *z, rb_err *err)
{
    size_t n = f->n, m = f->m;
    long step = f->step;
    f->fail = RB_FILTER_FAIL_NONE;
    f->fail_index = 0;
    int rc = rb_filt_schedule(f, RB_FILTER_UPDATE, step, NULL, 0.0, z, err);
    if (rc != RB_OK)
        return rc;
    f->have_update = false;
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (isnan(z[i])) {
            f->status[i] = RB_MEAS_MISSING;
        } else if (!isfinite(z[i])) {
            return rb_err_set(err, RB_ENUMERIC, "%s update, step %ld: measurement element %zu is infinite", f->name,
                              step, i);
        } else {
            f->status[i] = RB_MEAS_USED;
            f->idx[k++] = i;
        }
    }
    size_t finite = k;
    f->k = k;
    f->nis = NAN;
    f->rejected = false;
    f->limit = f->gate.mode == RB_GATE_OFF ? 0.0 : f->gate_limit[f->gate.mode == RB_GATE_ELEMENT ? 1 : (k ? k : 1)];
    f->held_update = false;
    if (f->held && f->gain_ok && k > 0 && k == f->kh && memcmp(f->idx, f->idxh, k * sizeof(size_t)) == 0)
        return held_update(f, z, step, finite, err);
    if (k > 0) {
        rc = f->ops->measure(f, z, step, err);
        if (rc != RB_OK)
            return rc;
        if (f->kind != RB_FILTER_UKF) { /* the UKF's measure did all of this from its sigma points */
            if ((rc = rb_filt_check_zhat(f, step, err)) != RB_OK)
                return rc;
            rb_filt_innovation(f, z);
            linear_measure(f);
        }
    } else {
        for (size_t i = 0; i < m; i++)
            f->inno[i] = NAN;
    }

    long gated = 0;
    if (k > 0 && f->gate.mode == RB_GATE_ELEMENT) {
        double lim = f->gate_limit[1];
        for (size_t j = 0; j < k; j++) {
            double r = f->innoc[j] * f->innoc[j] / f->S[j + j * k];
            if (!(r <= lim)) {
                f->status[f->idx[j]] = RB_MEAS_GATED;
                gated++;
            }
        }
        if (gated)
            k = f->k = compact_used(f, k);
    }

    if (k > 0) {
        rb_filt_mirror_lower(f->S, k);
        memcpy(f->Ssave, f->S, k * k * sizeof(double));
        int info = rb_filt_chol(f->S, k);
        if (info != 0) {
            f->fail = RB_FILTER_FAIL_S;
            f->fail_index = f->idx[info > 0 ? (size_t)info - 1 : 0];
            return rb_err_set(err, RB_ENUMERIC,
                              "%s update, step %ld: innovation covariance S not positive definite (LAPACK dpotrf: "
                              "leading minor %d of %zu elements used)",
                              f->name, step, info, k);
        }
        nis_and_gate(f, f->S, k);
    }
    if (k > 0 && !f->rejected) {
        memcpy(f->W, f->C, n * k * sizeof(double));
        rb_filt_trsm_rlt(n, k, f->S, k, f->W, n);
        if ((rc = gain_step(f, f->W, k, step, err)) != RB_OK)
            return rc;
        if (f->kind == RB_FILTER_UKF) {
            rb_filt_copy_lower(f->Pn, f->P, n); /* the upper triangle is mirrored below */
            rb_filt_syrk_ln(n, k, -1.0, f->W, n, 1.0, f->Pn, n);
            rb_filt_mirror_lower(f->Pn, n);
        } else {
            memcpy(f->K, f->W, n * k * sizeof(double));
            rb_filt_trsm_rln(n, k, f->S, k, f->K, n);
            joseph(f);
        }
        if (f->project && (rc = f->ops->project(f, step, err)) != RB_OK)
            return rc;
        for (size_t i = 0; i < n; i++) {
            if (!isfinite(f->Pn[i * n + i])) {
                f->fail = RB_FILTER_FAIL_P, f->fail_index = i;
                return rb_err_set(err, RB_ENUMERIC, "%s update, step %ld: updated covariance P(%zu, %zu) is not finite",
                                  f->name, step, i, i);
            }
        }
        double *t = f->x;
        f->x = f->xn;
        f->xn = t;
        t = f->P;
        f->P = f->Pn;
        f->Pn = t;
        for (size_t i = 0; i < n; i++)
            f->P_diag[i] = f->P[i * n + i];
    }
    if (f->hold) { /* a refresh: keep its gain, S factor and elements for the held steps */
        f->gain_ok = k > 0 && !f->rejected;
        if (f->gain_ok) {
            memcpy(f->K, f->W, n * k * sizeof(double));
            memcpy(f->Sh, f->S, k * k * sizeof(double));
            memcpy(f->idxh, f->idx, k * sizeof(size_t));
            f->kh = k;
        }
        f->held_steps = 0;
    }
    f->updates++;
    f->missing += (long)(m - finite);
    f->gated_elements += gated;
    if (f->rejected)
        f->gated_updates++;
    f->have_update = true;
    return RB_OK;
}

const double *rb_filter_x(const rb_filter *f) { return f->x; }
const double *rb_filter_P(const rb_filter *f) { return f->P; }

int rb_filter_set_state(rb_filter *f, const double *x, const double *P, rb_err *err)
{
    if (!f)
        return rb_err_set(err, RB_EINVAL, "filter set_state: NULL filter");
    size_t n = f->n;
    if (x && rb_filt_first_nonfinite(x, n) < n)
        return rb_err_set(err, RB_ENUMERIC, "%s set_state: x element %zu is not finite", f->name,
                          rb_filt_first_nonfinite(x, n));
    if (P && rb_filt_first_nonfinite(P, n * n) < n * n) {
        size_t b = rb_filt_first_nonfinite(P, n * n);
        return rb_err_set(err, RB_ENUMERIC, "%s set_state: P element (%zu, %zu) is not finite", f->name, b / n, b % n);
    }
    f->gain_ok = false; /* rb_filter_opts.hold: the next step refreshes */
    if (x)
        memcpy(f->x, x, n * sizeof(double));
    if (P) {
        memcpy(f->P, P, n * n * sizeof(double));
        for (size_t i = 0; i < n; i++)
            f->P_diag[i] = f->P[i * n + i];
    }
    return RB_OK;
}

void rb_filter_set_step(rb_filter *f, long step) { f->step = step; }

void rb_filter_hold_refresh(rb_filter *f)
{
    if (f)
        f->gain_ok = false;
}

bool rb_filter_mean_step(const rb_filter *f) { return f && f->held; }

bool rb_filter_held(const rb_filter *f) { return f && f->held_update; }

int rb_filter_nees(rb_filter *f, const double *x_true, double *nees, rb_err *err)
{
    if (!f || !x_true || !nees)
        return rb_err_set(err, RB_EINVAL, "filter nees: NULL argument");
    size_t n = f->n;
    memcpy(f->L, f->P, n * n * sizeof(double));
    int info = rb_filt_chol(f->L, n);
    if (info != 0)
        return rb_err_set(err, RB_ENUMERIC,
                          "%s nees, step %ld: P not positive definite (LAPACK dpotrf: leading minor %d)", f->name,
                          f->step, info);
    for (size_t i = 0; i < n; i++)
        f->fd_x[i] = x_true[i] - f->x[i];
    rb_filt_trsv_ln(n, f->L, n, f->fd_x);
    *nees = rb_filt_dot(n, f->fd_x, f->fd_x);
    return RB_OK;
}

rb_filter_fail rb_filter_last_failure(const rb_filter *f, size_t *index)
{
    if (index)
        *index = f ? f->fail_index : 0;
    return f ? f->fail : RB_FILTER_FAIL_NONE;
}

void rb_filter_get_diag(const rb_filter *f, rb_filter_diag *d)
{
    d->step = f->step;
    d->innovation = f->inno;
    d->status = f->status;
    d->P_diag = f->P_diag;
    d->nis = f->nis;
    d->dof = f->k;
    d->gate_limit = f->limit;
    d->rejected = f->rejected;
    d->predicts = f->predicts;
    d->updates = f->updates;
    d->missing_elements = f->missing;
    d->gated_elements = f->gated_elements;
    d->gated_updates = f->gated_updates;
    d->repairs = f->repairs;
}

int rb_filter_innovation_cov(const rb_filter *f, double *S, rb_err *err)
{
    if (!f || !S)
        return rb_err_set(err, RB_EINVAL, "filter innovation_cov: NULL argument");
    if (!f->have_update)
        return rb_err_set(err, RB_EINVAL, "%s innovation_cov: no update yet", f->name);
    size_t m = f->m, k = f->k;
    for (size_t i = 0; i < m * m; i++)
        S[i] = NAN;
    for (size_t b = 0; b < k; b++)
        for (size_t a = 0; a < k; a++)
            S[f->idx[a] * m + f->idx[b]] = f->Ssave[a + b * k];
    return RB_OK;
}

int rb_filter_gain(rb_filter *f, double *K, rb_err *err)
{
    if (!f || !K)
        return rb_err_set(err, RB_EINVAL, "filter gain: NULL argument");
    if (!f->have_update)
        return rb_err_set(err, RB_EINVAL, "%s gain: no update yet", f->name);
    size_t n = f->n, m = f->m, k = f->k;
    memset(K, 0, n * m * sizeof(double));
    if (k == 0)
        return RB_OK;
    /* K = C S^-1 = (C L^-T) L^-1, into W (free between updates). */
    memcpy(f->W, f->C, n * k * sizeof(double));
    rb_filt_trsm_rlt(n, k, f->S, k, f->W, n);
    rb_filt_trsm_rln(n, k, f->S, k, f->W, n);
    for (size_t j = 0; j < k; j++)
        for (size_t i = 0; i < n; i++)
            K[i * m + f->idx[j]] = f->W[i + j * n];
    return RB_OK;
}
