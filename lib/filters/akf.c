/* Adaptive Kalman filter with covariance-matching rules for diagonal R and Q (thesis eq. 2.28-2.42,
 * see roboest/filters.h), on top of the linear KF: predict and update are the shared KF code. */
#include <math.h>
#include <string.h>

#include "filters_internal.h"

struct rb_akf {
    size_t n, m, nu;
    rb_filter *kf;
    double N_R, N_Q, a1, a2;
    double *Q, *R;                        /* n, m: current diagonals */
    double *q_floor, *r_floor;            /* n, m */
    double *ebar, *lbar;                  /* m, n: running means of e and Lambda */
    double *e, *xprior, *pprior_diag, *W; /* m, n, n, m x n (C P^-) */
    /* saved before a step, restored if it fails */
    double *x_save, *P_save, *Q_save, *R_save, *ebar_save, *lbar_save;
    double block[];
};

void rb_akf_free(rb_akf *a)
{
    if (!a)
        return;
    rb_filter_free(a->kf);
    rb_free(a);
}

static bool all_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

static int check_opts(const rb_akf_opts *o, rb_err *err)
{
    if (!o || !o->n || !o->m)
        return rb_err_set(err, RB_EINVAL, "akf: n and m must be at least 1");
    if (!o->A || !o->C || !o->P0 || !o->Q0 || !o->R0)
        return rb_err_set(err, RB_EINVAL, "akf: %s is required",
                          !o->A    ? "A"
                          : !o->C  ? "C"
                          : !o->P0 ? "P0"
                          : !o->Q0 ? "Q0"
                                   : "R0");
    if (!(o->N_R > 1) || !(o->N_Q > 1) || !isfinite(o->N_R) || !isfinite(o->N_Q))
        return rb_err_set(err, RB_EINVAL, "akf: the windows N_R and N_Q must be finite and > 1 (got %g, %g)", o->N_R,
                          o->N_Q);
    for (size_t i = 0; i < o->n; i++) {
        if (!(o->Q0[i] >= 0) || !isfinite(o->Q0[i]))
            return rb_err_set(err, RB_EINVAL, "akf: Q0[%zu] must be finite and >= 0 (got %g)", i, o->Q0[i]);
        if (o->q_floor && (!(o->q_floor[i] >= 0) || !isfinite(o->q_floor[i])))
            return rb_err_set(err, RB_EINVAL, "akf: q_floor[%zu] must be finite and >= 0 (got %g)", i, o->q_floor[i]);
    }
    for (size_t i = 0; i < o->m; i++) {
        if (!(o->R0[i] > 0) || !isfinite(o->R0[i]))
            return rb_err_set(err, RB_EINVAL, "akf: R0[%zu] must be finite and > 0 (got %g)", i, o->R0[i]);
        if (o->r_floor && (!(o->r_floor[i] > 0) || !isfinite(o->r_floor[i])))
            return rb_err_set(err, RB_EINVAL, "akf: r_floor[%zu] must be finite and > 0 (got %g)", i, o->r_floor[i]);
    }
    return RB_OK;
}

int rb_akf_create(const rb_akf_opts *o, rb_akf **out, rb_err *err)
{
    if (!out)
        return rb_err_set(err, RB_EINVAL, "akf: out is NULL");
    *out = NULL;
    int rc = check_opts(o, err);
    if (rc)
        return rc;
    size_t n = o->n, m = o->m, nn, mn, count;
    /* Q, R, floors, means, e, xprior, pprior_diag, W, saves: 8n + 6m + mn + nn doubles */
    if (!rb_size_mul(n, n, &nn) || !rb_size_mul(m, n, &mn) || nn > SIZE_MAX / 16 || mn > SIZE_MAX / 16 ||
        n > SIZE_MAX / 64 || m > SIZE_MAX / 64)
        return rb_err_set(err, RB_ENOMEM, "akf: dimensions %zu x %zu are too large", n, m);
    count = 8 * n + 6 * m + mn + nn;
    if (count > (SIZE_MAX - sizeof(rb_akf)) / sizeof(double))
        return rb_err_set(err, RB_ENOMEM, "akf: dimensions %zu x %zu are too large", n, m);
    rb_akf *a = rb_calloc(1, sizeof *a + count * sizeof(double));
    if (!a)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    double *p = a->block;
    a->Q = p, p += n;
    a->R = p, p += m;
    a->q_floor = p, p += n;
    a->r_floor = p, p += m;
    a->ebar = p, p += m;
    a->lbar = p, p += n;
    a->e = p, p += m;
    a->xprior = p, p += n;
    a->pprior_diag = p, p += n;
    a->W = p, p += mn;
    a->x_save = p, p += n;
    a->P_save = p, p += nn;
    a->Q_save = p, p += n;
    a->R_save = p, p += m;
    a->ebar_save = p, p += m;
    a->lbar_save = p;
    a->n = n, a->m = m, a->nu = o->nu;
    a->N_R = o->N_R, a->N_Q = o->N_Q;
    a->a1 = (o->N_R - 1.0) / o->N_R;
    a->a2 = (o->N_Q - 1.0) / o->N_Q;
    for (size_t i = 0; i < n; i++) {
        a->Q[i] = o->Q0[i];
        a->q_floor[i] = o->q_floor ? o->q_floor[i] : 1e-9 * o->Q0[i];
    }
    for (size_t i = 0; i < m; i++) {
        a->R[i] = o->R0[i];
        a->r_floor[i] = o->r_floor ? o->r_floor[i] : 1e-9 * o->R0[i];
    }

    /* The KF holds A, B, C, x, P and the current diagonal Q, R (built in the W / P_save scratch). */
    double *Qm = a->P_save, *Rm = rb_calloc(m * m, sizeof(double));
    if (!Rm) {
        rb_akf_free(a);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    memset(Qm, 0, nn * sizeof *Qm);
    for (size_t i = 0; i < n; i++)
        Qm[i * n + i] = a->Q[i];
    for (size_t i = 0; i < m; i++)
        Rm[i * m + i] = a->R[i];
    rb_filter_opts fo;
    rb_filter_opts_init(&fo);
    fo.n = n, fo.m = m, fo.nu = o->nu;
    fo.x0 = o->x0, fo.P0 = o->P0, fo.Q = Qm, fo.R = Rm;
    fo.F = o->A, fo.B = o->B, fo.H = o->C;
    rc = rb_kf_create(&fo, &a->kf, err);
    rb_free(Rm);
    if (rc) {
        rb_err_prefix(err, rc, "akf: ");
        rb_akf_free(a);
        return rc;
    }
    *out = a;
    return RB_OK;
}

static void set_diag(rb_mat *M, const double *d)
{
    for (size_t i = 0; i < M->rows; i++)
        *rb_mat_at(M, i, i) = d[i];
}

/* Undo a failed step: the filter's x, P and step, the noise diagonals and the running means. */
static void restore(rb_akf *a, long step)
{
    size_t n = a->n, m = a->m;
    memcpy(a->Q, a->Q_save, n * sizeof *a->Q);
    memcpy(a->R, a->R_save, m * sizeof *a->R);
    memcpy(a->ebar, a->ebar_save, m * sizeof *a->ebar);
    memcpy(a->lbar, a->lbar_save, n * sizeof *a->lbar);
    rb_filter_mats mats = rb_filter_get_mats(a->kf);
    set_diag(&mats.Q, a->Q);
    set_diag(&mats.R, a->R);
    rb_filter_set_state(a->kf, a->x_save, a->P_save, NULL);
    rb_filter_set_step(a->kf, step);
}

int rb_akf_step(rb_akf *a, const double *u, const double *z, rb_err *err)
{
    if (!a || !z)
        return rb_err_set(err, RB_EINVAL, "akf: NULL filter or measurement");
    size_t n = a->n, m = a->m;
    memcpy(a->x_save, rb_filter_x(a->kf), n * sizeof *a->x_save);
    memcpy(a->P_save, rb_filter_P(a->kf), n * n * sizeof *a->P_save);
    memcpy(a->Q_save, a->Q, n * sizeof *a->Q);
    memcpy(a->R_save, a->R, m * sizeof *a->R);
    memcpy(a->ebar_save, a->ebar, m * sizeof *a->ebar);
    memcpy(a->lbar_save, a->lbar, n * sizeof *a->lbar);
    rb_filter_diag diag;
    rb_filter_get_diag(a->kf, &diag);
    long step = diag.step;

    /* (2.28), (2.29) with Q_{k-1} */
    int rc = rb_filter_predict(a->kf, u, 0.0, err);
    if (rc) {
        rb_err_prefix(err, rc, "akf: ");
        return rc;
    }
    rb_filter_mats mats = rb_filter_get_mats(a->kf);
    const double *C = mats.H.data, *Pm = rb_filter_P(a->kf);
    memcpy(a->xprior, rb_filter_x(a->kf), n * sizeof *a->xprior);
    for (size_t i = 0; i < n; i++)
        a->pprior_diag[i] = Pm[i * n + i];

    /* (2.30) e = z - C x^-, W = C P^- (for diag(C P^- C^T)) */
    memcpy(a->e, z, m * sizeof *a->e);
    rb_filt_gemv_rows(m, n, -1.0, C, mats.H.stride, a->xprior, 1.0, a->e);
    /* Row i of W = C_i P^- = P^- C_i^T: P^- is exactly symmetric after the predict (symmetrized). */
    for (size_t i = 0; i < m; i++)
        rb_filt_gemv_rows(n, n, 1.0, Pm, n, C + i * mats.H.stride, 0.0, a->W + i * n);

    /* (2.31)-(2.34): R_k from the elements that are measured */
    size_t used = 0;
    for (size_t i = 0; i < m; i++) {
        double e = a->e[i];
        if (!isfinite(e))
            continue;
        used++;
        double cpc = rb_filt_dot(n, a->W + i * n, C + i * mats.H.stride);
        a->ebar[i] = a->a1 * a->ebar[i] + e / a->N_R;
        double d = e - a->ebar[i];
        double r = fabs(a->a1 * a->R[i] + d * d / (a->N_R - 1.0) - cpc / a->N_R);
        a->R[i] = r > a->r_floor[i] ? r : a->r_floor[i];
    }
    set_diag(&mats.R, a->R);

    /* (2.35)-(2.37) */
    rc = rb_filter_update(a->kf, z, err);
    if (rc) {
        rb_err_prefix(err, rc, "akf: ");
        restore(a, step);
        return rc;
    }
    if (used == 0)
        return RB_OK;

    /* (2.38)-(2.42): diag(P_k - A P_{k-1} A^T) = diag(P_k - P^-_k) + Q_{k-1} */
    const double *x = rb_filter_x(a->kf), *P = rb_filter_P(a->kf);
    for (size_t i = 0; i < n; i++) {
        double lam = x[i] - a->xprior[i];
        a->lbar[i] = a->a2 * a->lbar[i] + lam / a->N_Q;
        double d = lam - a->lbar[i];
        double dq = (P[i * n + i] - a->pprior_diag[i] + a->Q[i]) / a->N_Q + d * d / (a->N_Q - 1.0);
        double q = fabs(a->a2 * a->Q[i] + dq);
        a->Q[i] = q > a->q_floor[i] ? q : a->q_floor[i];
    }
    set_diag(&mats.Q, a->Q);
    if (!all_finite(a->Q, n) || !all_finite(a->R, m)) {
        restore(a, step);
        return rb_err_set(err, RB_ENUMERIC, "akf: step %ld: the adapted Q or R is not finite", step + 1);
    }
    return RB_OK;
}

const double *rb_akf_x(const rb_akf *a) { return rb_filter_x(a->kf); }
const double *rb_akf_P(const rb_akf *a) { return rb_filter_P(a->kf); }
const double *rb_akf_Q(const rb_akf *a) { return a->Q; }
const double *rb_akf_R(const rb_akf *a) { return a->R; }
const rb_filter *rb_akf_filter(const rb_akf *a) { return a->kf; }
rb_filter_mats rb_akf_get_mats(rb_akf *a) { return rb_filter_get_mats(a->kf); }
