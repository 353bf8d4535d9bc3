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

/* Sigma point j (0 .. 2 cols) into xs: x, x + c L_i, x - c L_i for the first cols columns of L (n, or nl for the
 * structured filter). Only L's lower triangle is read. */
static void sigma_point(const rb_filter *f, size_t j, size_t cols, double *xs)
{
    size_t n = f->n;
    memcpy(xs, f->x, n * sizeof(double));
    if (j == 0)
        return;
    size_t col = (j - 1) % cols;
    double s = j <= cols ? f->c : -f->c;
    const double *l = f->L + col * n;
    for (size_t i = col; i < n; i++)
        xs[i] += s * l[i];
}

/* The first Ns sigma points (2 cols + 1) into X (n x Ns column-major). */
static void sigma_points(const rb_filter *f, size_t cols, double *X)
{
    for (size_t j = 0; j < 2 * cols + 1; j++)
        sigma_point(f, j, cols, X + j * f->n);
}

/* mean (rows) = w0 V_0 + wi sum_{j >= 1} V_j over the Ns columns of V (rows x Ns, column-major). */
static void weighted_mean(const rb_filter *f, const double *V, size_t rows, size_t Ns, double w0, double *mean)
{
    memset(mean, 0, rows * sizeof(double));
    for (size_t j = 1; j < Ns; j++) {
        const double *v = V + j * rows;
        for (size_t i = 0; i < rows; i++)
            mean[i] += v[i];
    }
    for (size_t i = 0; i < rows; i++)
        mean[i] = f->wi * mean[i] + w0 * V[i];
}

/* The models at the first 2 cols + 1 sigma points: f (Y, n x Ns) when z is NULL, else h (Z, m x Ns). */
static int evaluate(rb_filter *f, size_t cols, const double *u, double dt, bool measure, long step, rb_err *err)
{
    size_t n = f->n, m = f->m, Ns = 2 * cols + 1;
    const char *phase = measure ? "update" : "predict", *what = measure ? "measurement model" : "process model";
    int rc;
    if (measure ? f->h_batch != NULL : f->f_batch != NULL) {
        sigma_points(f, cols, f->X);
        rc = measure ? f->h_batch(f->user, f->X, Ns, f->Z, err) : f->f_batch(f->user, f->X, Ns, u, dt, f->Y, err);
        return rc == RB_OK ? RB_OK : callback_failed(f, rc, phase, step, what, SIZE_MAX, err);
    }
    for (size_t j = 0; j < Ns; j++) {
        sigma_point(f, j, cols, f->xs);
        rc = measure ? f->h(f->user, f->xs, f->Z + j * m, err) : f->f(f->user, f->xs, u, dt, f->Y + j * n, err);
        if (rc != RB_OK)
            return callback_failed(f, rc, phase, step, what, j, err);
    }
    return RB_OK;
}

/* The structured filter's factor (rb_filter_opts.n_nonlinear = l): L's first l columns [L_ll; L_rl] (those of P's
 * lower Cholesky factor: L_ll = chol(P_ll), L_rl = P_rl L_ll^-T; zero above the diagonal), and L_rl^T (l x r, ld l)
 * into Lt for the products with the Jacobian's rows. When P_ll is not positive definite, P's repairs and its full
 * factor (rb_filt_chol_P), whose first l columns are the same. The covariance the columns past l spread,
 * Sr = P_rr - L_rl L_rl^T, is never formed: only its products with the Jacobian's rows are (spread below). */
static int factor_leading(rb_filter *f, const char *what, long step, rb_err *err)
{
    size_t n = f->n, l = f->nl, r = n - l;
    double *A = f->T; /* l x l, free in the UKF */
    for (size_t j = 0; j < l; j++)
        memcpy(A + j * l, f->P + j * n, l * sizeof(double));
    if (rb_filt_chol(A, l) == 0) {
        for (size_t j = 0; j < l; j++) {
            double *col = f->L + j * n;
            for (size_t i = 0; i < l; i++)
                col[i] = i >= j ? A[i + j * l] : 0.0;
            memcpy(col + l, f->P + l + j * n, r * sizeof(double));
        }
        rb_filt_trsm_rlt(r, l, f->L, n, f->L + l, n);
    } else {
        int rc = rb_filt_chol_P(f, what, step, err);
        if (rc != RB_OK)
            return rc;
        for (size_t j = 0; j < l; j++)
            memset(f->L + j * n, 0, j * sizeof(double));
    }
    for (size_t j = 0; j < l; j++)
        for (size_t i = 0; i < r; i++)
            f->Lt[j + i * l] = f->L[l + i + j * n];
    return RB_OK;
}

/* The structured filter's Jacobian from `affine` (Jf when measure is false, else Jh), its shape checked. */
static int affine_jacobian(rb_filter *f, const double *u, double dt, bool measure, long step, rb_filter_csr *J,
                           rb_err *err)
{
    memset(J, 0, sizeof *J);
    const char *phase = measure ? "update" : "predict";
    int rc =
        measure ? f->affine(f->user, f->x, NULL, 0.0, NULL, J, err) : f->affine(f->user, f->x, u, dt, J, NULL, err);
    if (rc != RB_OK)
        return callback_failed(f, rc, phase, step, "affine model", SIZE_MAX, err);
    size_t rows = measure ? f->m : f->n;
    if (J->rows != rows || J->cols != f->n - f->nl || !J->ptr || (J->ptr[rows] && (!J->col || !J->val)))
        return rb_err_set(err, RB_EINVAL, "%s %s, step %ld: affine model: Jacobian %zu x %zu, expected %zu x %zu",
                          f->name, phase, step, J->rows, J->cols, rows, f->n - f->nl);
    return RB_OK;
}

/* J_row . t (t indexed by J's columns) for one compressed row of J. */
static double row_dot(const rb_filter_csr *J, size_t row, const double *t)
{
    double v = 0.0;
    for (size_t p = J->ptr[row]; p < J->ptr[row + 1]; p++)
        v += J->val[p] * t[J->col[p]];
    return v;
}

/* Rows with more entries than this go through BLAS as a dense block. */
#define DENSE_NNZ 8

/* What spread leaves in T: nothing (only out), Sr J^T, or P_rr J^T with G = J L_rl (the measurement folds -L_rl G^T
 * into its cross covariance's product). */
enum { SPREAD_OUT, SPREAD_FULL, SPREAD_PARTIAL };

/* For the rows rows[0..cnt) of J (rows NULL: 0 .. cnt), with Sr = P_rr - L_rl L_rl^T (not formed): the lower triangle
 * of out (cnt x cnt, ld ldo) += J Sr J^T = J P_rr J^T - G G^T, G = J L_rl (cnt x l, into f->Gl, ld cnt); and by mode
 * T's column a (r elements, ld ldt) = P_rr J_a^T (- L_rl G_a^T for SPREAD_FULL). Rows with many entries as one dense
 * block Gd over the columns they span (U = Gd P_rr, Mg = U Gd^T by BLAS), the others entry by entry from P's
 * columns. Cost: products with P_rr over J's entries, no r x r pass. */
__attribute__((target_clones("avx2", "default"))) static void spread(rb_filter *f, const rb_filter_csr *J,
                                                                     const size_t *rows, size_t cnt, int mode,
                                                                     double *T, size_t ldt, double *out, size_t ldo)
{
    size_t n = f->n, l = f->nl, r = n - l, g = 0, *dpos = f->drow, c0 = SIZE_MAX, c1 = 0;
    const double *Prr = f->P + l + l * n; /* P_rr, ld n */
    double *G = f->Gl;
    for (size_t a = 0; a < cnt; a++) {
        size_t row = rows ? rows[a] : a, p0 = J->ptr[row], p1 = J->ptr[row + 1];
        dpos[a] = p1 - p0 > DENSE_NNZ ? g++ : SIZE_MAX;
        for (size_t p = p0; dpos[a] != SIZE_MAX && p < p1; p++)
            c0 = J->col[p] < c0 ? J->col[p] : c0, c1 = J->col[p] > c1 ? J->col[p] : c1;
        /* G's row a (stride cnt): each element summed over the row's entries in order from 0.0, four elements at a
         * time in registers */
        const double *Lt = f->Lt;
        size_t i = 0;
        for (; i + 4 <= l; i += 4) {
            double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
            for (size_t p = p0; p < p1; p++) {
                const double *lt = Lt + J->col[p] * l + i;
                double v = J->val[p];
                s0 += v * lt[0], s1 += v * lt[1], s2 += v * lt[2], s3 += v * lt[3];
            }
            G[a + i * cnt] = s0, G[a + (i + 1) * cnt] = s1, G[a + (i + 2) * cnt] = s2, G[a + (i + 3) * cnt] = s3;
        }
        for (; i < l; i++) {
            double s0 = 0.0;
            for (size_t p = p0; p < p1; p++)
                s0 += J->val[p] * Lt[J->col[p] * l + i];
            G[a + i * cnt] = s0;
        }
    }
    if (g) {
        size_t w = c1 - c0 + 1;
        memset(f->Gd, 0, g * w * sizeof(double));
        for (size_t a = 0; a < cnt; a++) {
            size_t row = rows ? rows[a] : a;
            for (size_t p = J->ptr[row]; dpos[a] != SIZE_MAX && p < J->ptr[row + 1]; p++)
                f->Gd[dpos[a] + (J->col[p] - c0) * g] += J->val[p];
        }
        /* U (g x r) = Gd P_rr[c0.., :] (P_rr symmetric), Mg = U[:, c0..] Gd^T */
        rb_filt_gemm_nt(g, r, w, 1.0, f->Gd, g, Prr + c0 * n, n, 0.0, f->U, g);
        rb_filt_gemm_nt(g, g, w, 1.0, f->U + c0 * g, g, f->Gd, g, 0.0, f->Mg, g);
    }
    for (size_t a = 0; a < cnt; a++) {
        double *t = T + a * ldt;
        if (dpos[a] != SIZE_MAX) {
            for (size_t i = 0; i < r; i++)
                t[i] = f->U[dpos[a] + i * g];
            continue;
        }
        size_t row = rows ? rows[a] : a;
        memset(t, 0, r * sizeof(double));
        for (size_t p = J->ptr[row]; p < J->ptr[row + 1]; p++) {
            const double *pc = Prr + J->col[p] * n;
            double v = J->val[p];
            for (size_t i = 0; i < r; i++)
                t[i] += v * pc[i];
        }
    }
    /* out[a, b] += J_a P_rr J_b^T for a >= b: rows with one entry (most: selections) as val T_b[col], the sum row_dot
     * forms (0.0 + val t), the others by row_dot */
    size_t *sc = f->scol;
    double *sv = f->sval;
    for (size_t a = 0; a < cnt; a++) {
        size_t row = rows ? rows[a] : a;
        bool one = dpos[a] == SIZE_MAX && J->ptr[row + 1] - J->ptr[row] == 1;
        sc[a] = one ? J->col[J->ptr[row]] : SIZE_MAX;
        sv[a] = one ? J->val[J->ptr[row]] : 0.0;
    }
    for (size_t b = 0; b < cnt; b++) {
        const double *tb = T + b * ldt;
        double *ob = out + b * ldo;
        for (size_t a = b; a < cnt; a++) {
            double v;
            if (sc[a] != SIZE_MAX)
                v = 0.0 + sv[a] * tb[sc[a]];
            else if (dpos[a] == SIZE_MAX)
                v = row_dot(J, rows ? rows[a] : a, tb);
            else if (dpos[b] == SIZE_MAX)
                v = row_dot(J, rows ? rows[b] : b, T + a * ldt);
            else
                v = f->Mg[dpos[a] + dpos[b] * g];
            ob[a] += v;
        }
    }
    rb_filt_syrk_ln(cnt, l, -1.0, G, cnt, 1.0, out, ldo);
    if (mode == SPREAD_FULL)
        rb_filt_gemm_nt(r, cnt, l, -1.0, f->L + l, n, G, cnt, 1.0, T, ldt);
}

/* The structured predict with identity rows U (rb_filter_opts.identity; the others N), after the models' values at the
 * sigma points (Y). Exact forms: xn_U = x_U; Pn_UU = Q_UU + P_UU (their spreads +-c L_i and Sr sum to P); Pn_NN as
 * the plain structured predict over N's rows; Pn_NU = Q_NU + c wi sum_i (D_{+i} - D_{-i})_N L_i,U^T + Jf_N Sr Jf_U^T
 * (Jf_U selects x_U past l; D_0,U = 0). */
static int predict_blocks(rb_filter *f, const double *u, double dt, long step, double w0, double wc0, rb_err *err)
{
    size_t n = f->n, l = f->nl, r = n - l, Ns = 2 * l + 1, nu = f->n_id, nn = n - nu;
    const size_t *N = f->nrow, *U = f->urow;
    double *D = f->B1, *NN = f->B2, *NU = f->B3, *E = f->Gd, *LU = f->U;
    for (size_t a = 0; a < nn; a++) {
        double s = 0.0;
        for (size_t j = 1; j < Ns; j++)
            s += f->Y[N[a] + j * n];
        f->xn[N[a]] = f->wi * s + w0 * f->Y[N[a]];
    }
    for (size_t b = 0; b < nu; b++)
        f->xn[U[b]] = f->x[U[b]];
    for (size_t j = 0; j < Ns; j++)
        for (size_t a = 0; a < nn; a++)
            D[a + j * nn] = f->Y[N[a] + j * n] - f->xn[N[a]];
    rb_filter_csr J;
    int rc = affine_jacobian(f, u, dt, false, step, &J, err);
    if (rc != RB_OK)
        return rc;
    if (nn) {
        memset(NN, 0, nn * nn * sizeof(double));
        rb_filt_syrk_ln(nn, 2 * l, f->wi, D + nn, nn, 1.0, NN, nn);
        if (wc0 != 0.0)
            rb_filt_syr_l(nn, wc0, D, NN, nn);
        spread(f, &J, N, nn, SPREAD_FULL, f->T, r, NN, nn); /* T (r x nn) = Sr Jf_N^T */
    }
    for (size_t i = 0; i < l; i++) {
        for (size_t a = 0; a < nn; a++)
            E[a + i * nn] = D[a + (1 + i) * nn] - D[a + (1 + l + i) * nn];
        for (size_t b = 0; b < nu; b++)
            LU[b + i * nu] = f->L[U[b] + i * n];
    }
    if (nn)
        rb_filt_gemm_nt(nn, nu, l, f->c * f->wi, E, nn, LU, nu, 0.0, NU, nn);
    for (size_t b = 0; b < nu; b++)
        for (size_t a = 0; U[b] >= l && a < nn; a++)
            NU[a + b * nn] += f->T[U[b] - l + a * r];
    rb_filt_copy_lower(f->Pn, f->Q, n); /* the upper triangle is mirrored below */
    for (size_t b = 0; b < nu; b++)     /* by runs of consecutive identity rows: contiguous in the column */
        for (size_t a = b; a < nu;) {
            size_t e = a + 1;
            while (e < nu && U[e] == U[e - 1] + 1)
                e++;
            double *o = f->Pn + U[b] * n;
            const double *p = f->P + U[b] * n;
            for (size_t i = U[a]; i <= U[e - 1]; i++)
                o[i] += p[i];
            a = e;
        }
    for (size_t b = 0; b < nn; b++)
        for (size_t a = b; a < nn; a++)
            f->Pn[N[a] + N[b] * n] += NN[a + b * nn];
    for (size_t b = 0; b < nu; b++)
        for (size_t a = 0; a < nn; a++) {
            size_t i = N[a], j = U[b];
            f->Pn[i > j ? i + j * n : j + i * n] += NU[a + b * nn];
        }
    rb_filt_mirror_lower(f->Pn, n);
    return RB_OK;
}

static int ukf_predict(rb_filter *f, const double *u, double dt, long step, rb_err *err)
{
    size_t n = f->n, l = f->nl ? f->nl : n, r = n - l, Ns = 2 * l + 1;
    /* the sigma points past l (structured filter) would each give f(x) +- c Jf L_i: their weight joins X_0's */
    double w0 = f->wm0 + 2.0 * (double)r * f->wi, wc0 = f->wc0 + 2.0 * (double)r * f->wi;
    int rc = f->nl ? factor_leading(f, "predict", step, err) : rb_filt_chol_P(f, "predict", step, err);
    if (rc != RB_OK || (rc = evaluate(f, l, u, dt, false, step, err)) != RB_OK)
        return rc;
    if (f->n_id)
        return predict_blocks(f, u, dt, step, w0, wc0, err);
    weighted_mean(f, f->Y, n, Ns, w0, f->xn);
    for (size_t j = 0; j < Ns; j++) {
        double *v = f->Y + j * n;
        for (size_t i = 0; i < n; i++)
            v[i] -= f->xn[i];
    }
    /* Pn = Q + wi sum_{j >= 1} D_j D_j^T + wc0 D_0 D_0^T (+ Jf Sr Jf^T) (lower triangle, then mirrored). */
    rb_filt_copy_lower(f->Pn, f->Q, n); /* the upper triangle is mirrored below */
    rb_filt_syrk_ln(n, 2 * l, f->wi, f->Y + n, n, 1.0, f->Pn, n);
    if (wc0 != 0.0)
        rb_filt_syr_l(n, wc0, f->Y, f->Pn, n);
    if (f->nl) {
        /* sum over the spreads past l: wi 2 c^2 Jf L_i L_i^T Jf^T = Jf Sr Jf^T (2 wi c^2 = 1) */
        rb_filter_csr J;
        if ((rc = affine_jacobian(f, u, dt, false, step, &J, err)) != RB_OK)
            return rc;
        spread(f, &J, NULL, n, SPREAD_OUT, f->T, r, f->Pn, n);
    }
    rb_filt_mirror_lower(f->Pn, n);
    return RB_OK;
}

static int ukf_measure(rb_filter *f, const double *z, long step, rb_err *err)
{
    size_t n = f->n, m = f->m, k = f->k, l = f->nl ? f->nl : n, r = n - l, Ns = 2 * l + 1;
    double w0 = f->wm0 + 2.0 * (double)r * f->wi, wc0 = f->wc0 + 2.0 * (double)r * f->wi;
    int rc = f->nl ? factor_leading(f, "update", step, err) : rb_filt_chol_P(f, "update", step, err);
    if (rc != RB_OK || (rc = evaluate(f, l, NULL, 0.0, true, step, err)) != RB_OK)
        return rc;
    weighted_mean(f, f->Z, m, Ns, w0, f->zhat);
    if ((rc = rb_filt_check_zhat(f, step, err)) != RB_OK)
        return rc;
    rb_filt_innovation(f, z);

    /* Deviations Z_j - zhat, restricted to the used rows (compacted in place, ld k). */
    for (size_t j = 0; j < Ns; j++) {
        double *v = f->Z + j * m;
        for (size_t i = 0; i < m; i++)
            v[i] -= f->zhat[i];
        if (f->residual)
            f->residual(f->user, v);
    }
    if (k < m) {
        for (size_t j = 0; j < Ns; j++)
            for (size_t q = 0; q < k; q++)
                f->Z[q + j * k] = f->Z[f->idx[q] + j * m];
    }
    if (k == m) /* every element used: idx is the identity */
        memcpy(f->Rc, f->R, m * m * sizeof(double));
    else
        for (size_t b = 0; b < k; b++)
            for (size_t a = 0; a < k; a++)
                f->Rc[a + b * k] = f->R[f->idx[a] * m + f->idx[b]];

    /* S = R + wi sum_{j >= 1} Dz_j Dz_j^T + wc0 Dz_0 Dz_0^T (+ Jh Sr Jh^T) (lower triangle). */
    memcpy(f->S, f->Rc, k * k * sizeof(double));
    rb_filt_syrk_ln(k, 2 * l, f->wi, f->Z + k, k, 1.0, f->S, k);
    if (wc0 != 0.0)
        rb_filt_syr_l(k, wc0, f->Z, f->S, k);

    /* C = sum_j Wc_j (X_j - x) Dz_j^T. X_0 - x = 0 and X_{i}, X_{l+i} - x = +-c L_i, so
     * C = c wi L E with E (l x k) row i = (Dz_{1+i} - Dz_{1+l+i})^T. Structured: the spreads past l add
     * wi 2 c^2 [0; L_i] (Jh L_i)^T summed = [0; Sr Jh^T], and Jh Sr Jh^T to S. */
    if (!f->nl) {
        for (size_t q = 0; q < k; q++) {
            double *col = f->C + q * n;
            const double *zp = f->Z + k + q, *zm = f->Z + (n + 1) * k + q;
            for (size_t i = 0; i < n; i++)
                col[i] = zp[i * k] - zm[i * k];
        }
        rb_filt_trmm_lln(n, k, f->c * f->wi, f->L, n, f->C, n);
        return RB_OK;
    }
    rb_filter_csr J;
    if ((rc = affine_jacobian(f, NULL, 0.0, true, step, &J, err)) != RB_OK)
        return rc;
    for (size_t q = 0; q < k; q++)
        memset(f->C + q * n, 0, l * sizeof(double));
    spread(f, &J, f->idx, k, SPREAD_PARTIAL, f->C + l, n, f->S, k); /* C_r = P_rr Jh^T, G = Jh L_rl */
    /* C_v = c wi L_ll E^T, C_r += L_rl (c wi E - G)^T: with Sr's -L_rl G^T in the same product */
    double *E = f->W, *G = f->Gl; /* k x l (ld k) each: E^T, free until the gain */
    for (size_t i = 0; i < l; i++)
        for (size_t q = 0; q < k; q++) {
            E[q + i * k] = f->c * f->wi * (f->Z[(1 + i) * k + q] - f->Z[(1 + l + i) * k + q]);
            G[q + i * k] = E[q + i * k] - G[q + i * k];
        }
    rb_filt_gemm_nt(l, k, l, 1.0, f->L, n, E, k, 1.0, f->C, n);
    rb_filt_gemm_nt(n - l, k, l, 1.0, f->L + l, n, G, k, 1.0, f->C + l, n);
    return RB_OK;
}

/* rb_filter_opts.hold's mean-only steps: the models at x alone (the first column of the sigma points). */
static int ukf_predict_mean(rb_filter *f, const double *u, double dt, long step, rb_err *err)
{
    int rc = evaluate(f, 0, u, dt, false, step, err);
    if (rc == RB_OK)
        memcpy(f->xn, f->Y, f->n * sizeof(double));
    return rc;
}

static int ukf_measure_mean(rb_filter *f, long step, rb_err *err)
{
    int rc = evaluate(f, 0, NULL, 0.0, true, step, err);
    if (rc == RB_OK)
        memcpy(f->zhat, f->Z, f->m * sizeof(double));
    return rc;
}

static const rb_filt_ops ukf_ops = {ukf_predict, ukf_measure, NULL, ukf_predict_mean, ukf_measure_mean};

int rb_ukf_create(const rb_filter_opts *o, rb_filter **out, rb_err *err)
{
    return rb_filt_alloc(o, RB_FILTER_UKF, &ukf_ops, out, err);
}
