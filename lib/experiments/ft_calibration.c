/* In-situ FT sensor calibration, the numbers (roboest/experiments.h): the two least squares, the rank checks, the
 * ellipsoid of the raw readings and the static poses. Every least squares is reduced chunk by chunk with QR (the
 * rows never all held), so the cost is linear in the rows and the workspace constant. */
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "experiments_internal.h"

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

/* ---- least squares by chunked QR: [A | Y] -> R, one chunk of rows at a time ---------------------------------- */
enum { LSQ_CHUNK = 256 };
typedef struct lsq {
    size_t p, q, m, ld, k; /* unknowns, right-hand sides, m = p + q, leading dimension, rows waiting */
    size_t rows;           /* rows added */
    double *a;             /* ld x m, column-major: R in the top m rows, the waiting rows below */
    double *tau, *work;
    lapack_int lwork;
} lsq;

static void lsq_free(lsq *s)
{
    rb_free(s->a);
    rb_free(s->tau);
    rb_free(s->work);
    memset(s, 0, sizeof *s);
}

static int lsq_init(lsq *s, size_t p, size_t q, rb_err *err)
{
    memset(s, 0, sizeof *s);
    s->p = p, s->q = q, s->m = p + q, s->ld = s->m + LSQ_CHUNK;
    s->a = rb_calloc(s->ld * s->m, sizeof *s->a);
    s->tau = rb_calloc(s->m, sizeof *s->tau);
    double wq = 0;
    if (!s->a || !s->tau ||
        LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, (lapack_int)s->ld, (lapack_int)s->m, s->a, (lapack_int)s->ld, s->tau, &wq,
                            -1) != 0) {
        lsq_free(s);
        return nomem(err);
    }
    s->lwork = (lapack_int)wq + 1;
    if (!(s->work = rb_malloc((size_t)s->lwork * sizeof *s->work))) {
        lsq_free(s);
        return nomem(err);
    }
    return RB_OK;
}

static void lsq_reduce(lsq *s)
{
    if (s->k == 0)
        return;
    size_t rows = s->m + s->k;
    LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, (lapack_int)rows, (lapack_int)s->m, s->a, (lapack_int)s->ld, s->tau, s->work,
                        s->lwork);
    for (size_t j = 0; j < s->m; j++) /* keep R: clear the reflectors below its diagonal */
        for (size_t i = j + 1; i < rows; i++)
            s->a[i + j * s->ld] = 0.0;
    s->k = 0;
}

static void lsq_row(lsq *s, const double *x, const double *y)
{
    size_t i = s->m + s->k;
    for (size_t j = 0; j < s->p; j++)
        s->a[i + j * s->ld] = x[j];
    for (size_t j = 0; j < s->q; j++)
        s->a[i + (s->p + j) * s->ld] = y[j];
    s->rows++;
    if (++s->k == LSQ_CHUNK)
        lsq_reduce(s);
}

/* X (p x q, column-major), the residual norm per right-hand side (q) and the condition number of A with its columns
 * scaled to unit norm. RB_ENUMERIC when A is rank deficient. */
static int lsq_solve(lsq *s, const char *what, double *X, double *resid, double *cond, rb_err *err)
{
    lsq_reduce(s);
    size_t p = s->p, ld = s->ld;
    if (s->rows < p)
        return rb_err_set(err, RB_EINPUT, "%s: %zu equations for %zu unknowns", what, s->rows, p);
    double *S = rb_malloc(p * p * sizeof *S), *sv = rb_malloc(p * sizeof *sv), *sw = rb_malloc(p * sizeof *sw);
    int rc = S && sv && sw ? RB_OK : nomem(err);
    for (size_t j = 0; !rc && j < p; j++) {
        double nrm = 0;
        for (size_t i = 0; i <= j; i++)
            nrm += s->a[i + j * ld] * s->a[i + j * ld];
        nrm = sqrt(nrm);
        for (size_t i = 0; i < p; i++)
            S[i + j * p] = i <= j && nrm > 0 ? s->a[i + j * ld] / nrm : 0.0;
    }
    if (!rc && LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'N', 'N', (lapack_int)p, (lapack_int)p, S, (lapack_int)p, sv, NULL,
                                   1, NULL, 1, sw, -1) == 0) {
        lapack_int lw = (lapack_int)sw[0] + 1;
        double *w2 = rb_malloc((size_t)lw * sizeof *w2);
        if (!w2)
            rc = nomem(err);
        else if (LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'N', 'N', (lapack_int)p, (lapack_int)p, S, (lapack_int)p, sv,
                                     NULL, 1, NULL, 1, w2, lw) != 0)
            rc = rb_err_set(err, RB_ENUMERIC, "%s: the singular values did not converge", what);
        rb_free(w2);
    }
    if (!rc) {
        *cond = sv[p - 1] > 0 ? sv[0] / sv[p - 1] : INFINITY;
        if (!(*cond < 1e12))
            rc = rb_err_set(err, RB_ENUMERIC, "%s: the system is singular (condition number %.3g)", what, *cond);
    }
    for (size_t c = 0; !rc && c < s->q; c++) {
        for (size_t i = 0; i < p; i++)
            X[i + c * p] = s->a[i + (p + c) * ld];
        double r2 = 0;
        for (size_t i = p; i <= p + c; i++)
            r2 += s->a[i + (p + c) * ld] * s->a[i + (p + c) * ld];
        resid[c] = sqrt(r2);
    }
    if (!rc && LAPACKE_dtrtrs(LAPACK_COL_MAJOR, 'U', 'N', 'N', (lapack_int)p, (lapack_int)s->q, s->a, (lapack_int)ld, X,
                              (lapack_int)p) != 0)
        rc = rb_err_set(err, RB_ENUMERIC, "%s: the system is singular", what);
    rb_free(S);
    rb_free(sv);
    rb_free(sw);
    return rc;
}

/* Eigenvalues (ascending) and, when vecs, eigenvectors (columns, column-major) of a symmetric n x n matrix. */
static int sym_eig(double *A, size_t n, double *w, bool vecs, rb_err *err)
{
    if (LAPACKE_dsyev(LAPACK_COL_MAJOR, vecs ? 'V' : 'N', 'U', (lapack_int)n, A, (lapack_int)n, w) != 0)
        return rb_err_set(err, RB_ENUMERIC, "the eigenvalues did not converge");
    return RB_OK;
}

/* ---- rank checks ------------------------------------------------------------------------------------------------ */
static const char *set_name(const char *const *names, size_t j, char buf[32])
{
    if (names && names[j])
        return names[j];
    snprintf(buf, 32, "set%zu", j);
    return buf;
}

int rb_ftcal_check_rank(const rb_ftcal_data *d, const char *const *set_names, rb_err *err)
{
    if (d->n_sets == 0 || d->n_sets > RB_FTCAL_MAX_SETS)
        return rb_err_set(err, RB_EINVAL, "ft calibration: %zu data sets (1 to %d)", d->n_sets, RB_FTCAL_MAX_SETS);
    char buf[32];
    for (size_t j = 0; j < d->n_sets; j++) {
        double M[16] = {0}, w[4];
        size_t n = 0;
        for (size_t i = 0; i < d->n; i++) {
            if (d->set[i] != j)
                continue;
            const double *g = d->g + 3 * i;
            double gn = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]), u[4] = {g[0] / gn, g[1] / gn, g[2] / gn, 1};
            for (size_t a = 0; a < 4; a++)
                for (size_t b = 0; b < 4; b++)
                    M[a + 4 * b] += u[a] * u[b];
            n++;
        }
        const char *nm = set_name(set_names, j, buf);
        if (n < 4)
            return rb_err_set(err, RB_EINPUT,
                              "data set '%s': %zu static poses; the offset needs at least 4 gravity directions (better "
                              "20 or more, spread over the sphere)",
                              nm, n);
        double G[9];
        for (size_t a = 0; a < 3; a++)
            for (size_t b = 0; b < 3; b++)
                G[a + 3 * b] = M[a + 4 * b];
        int rc = sym_eig(G, 3, w, false, err);
        if (rc)
            return rc;
        /* a ratio of 0.0025 in the second moments: directions within about 3 degrees of a plane */
        if (w[0] < 0.0025 * w[2]) {
            size_t dims = w[1] < 0.0025 * w[2] ? 1 : 2;
            return rb_err_set(err, RB_EINPUT,
                              "data set '%s': the gravity directions of its %zu static poses span %zu dimension%s "
                              "(fewer than three): the offset and C are undetermined; add poses that tilt the sensor "
                              "about another axis",
                              nm, n, dims, dims == 1 ? "" : "s");
        }
        if ((rc = sym_eig(M, 4, w, false, err)) != RB_OK)
            return rc;
        if (w[0] < 0.0025 * w[3])
            return rb_err_set(err, RB_EINPUT,
                              "data set '%s': the gravity directions of its %zu static poses lie on one circle (the "
                              "sensor turned about one axis only): the offset is undetermined; add poses that tilt "
                              "the sensor about another axis",
                              nm, n);
    }
    const double *ad = d->added;
    double mmax = 0, dm = 0;
    for (size_t j = 0; j < d->n_sets; j++) {
        mmax = fmax(mmax, ad[4 * j]);
        dm = fmax(dm, fabs(ad[4 * j] - ad[0]));
    }
    if (!(dm > 1e-9 * (1 + mmax)))
        return rb_err_set(err, RB_EINPUT,
                          "%s %g kg of added mass: fewer than two different masses, so the scale of C is "
                          "undetermined; add a data set with another known mass (%s)",
                          d->n_sets == 1 ? "the only data set carries" : "every data set carries the same", ad[0],
                          ad[0] > 0 ? "for instance without the added mass" : "for instance with 0.5 to 1 kg added");
    /* The loads' differences from the first, the moments divided by a length scale of the loads. */
    double ell = 1e-3;
    for (size_t j = 0; j < d->n_sets; j++)
        if (ad[4 * j] > 0)
            ell = fmax(ell, sqrt(ad[4 * j + 1] * ad[4 * j + 1] + ad[4 * j + 2] * ad[4 * j + 2] +
                                 ad[4 * j + 3] * ad[4 * j + 3]) /
                                ad[4 * j]);
    double D[16] = {0}, w[4];
    for (size_t j = 1; j < d->n_sets; j++) {
        double v[4] = {ad[4 * j] - ad[0], (ad[4 * j + 1] - ad[1]) / ell, (ad[4 * j + 2] - ad[2]) / ell,
                       (ad[4 * j + 3] - ad[3]) / ell};
        for (size_t a = 0; a < 4; a++)
            for (size_t b = 0; b < 4; b++)
                D[a + 4 * b] += v[a] * v[b];
    }
    int rc = sym_eig(D, 4, w, false, err);
    if (rc)
        return rc;
    if (w[2] < 4e-4 * w[3])
        return rb_err_set(err, RB_EINPUT,
                          "the added loads [m, m c] of the %zu data sets lie on one line (e.g. masses at one point, "
                          "or two data sets): one wrench direction is never excited and C is undetermined along it; "
                          "add a data set whose added mass sits off the line through the others",
                          d->n_sets);
    return RB_OK;
}

/* ---- the two steps --------------------------------------------------------------------------------------------- */
int rb_ftcal_solve(const rb_ftcal_data *d, rb_ftcal_convention conv, rb_ftcal_offset_method method, rb_ftcal_fit *fit,
                   rb_err *err)
{
    memset(fit, 0, sizeof *fit);
    fit->convention = conv;
    fit->rows = d->n;
    for (size_t i = 0; i < d->n; i++) {
        for (size_t k = 0; k < 6; k++)
            if (!isfinite(d->r[6 * i + k]))
                return rb_err_set(err, RB_ENUMERIC, "ft calibration: row %zu: raw element %zu is not finite", i, k);
        for (size_t k = 0; k < 3; k++)
            if (!isfinite(d->g[3 * i + k]))
                return rb_err_set(err, RB_ENUMERIC, "ft calibration: row %zu: gravity element %zu is not finite", i, k);
        if (d->set[i] >= d->n_sets)
            return rb_err_set(err, RB_EINVAL, "ft calibration: row %zu: data set %zu of %zu", i, d->set[i], d->n_sets);
    }
    int rc = rb_ftcal_check_rank(d, NULL, err);
    if (rc)
        return rc;
    size_t J = d->n_sets, p1 = 3 * J + 1;
    lsq a = {0}, f = {0}, m = {0};
    double X1[(3 * RB_FTCAL_MAX_SETS + 1) * 6], res1[6], Xf[19], Xm[21], resf, resm, x[49];
    rc = lsq_init(&a, p1, 6, err);
    if (!rc)
        rc = lsq_init(&f, 19, 1, err);
    if (!rc)
        rc = lsq_init(&m, 21, 1, err);
    /* step 1: r = K_j g + o_raw */
    for (size_t i = 0; !rc && i < d->n; i++) {
        memset(x, 0, p1 * sizeof *x);
        memcpy(x + 3 * d->set[i], d->g + 3 * i, 3 * sizeof *x);
        x[3 * J] = 1.0;
        lsq_row(&a, x, d->r + 6 * i);
    }
    if (!rc)
        rc = lsq_solve(&a, "ft calibration step 1 (offset)", X1, res1, &fit->cond_offset, err);
    if (!rc) {
        for (size_t l = 0; l < 6; l++) {
            fit->offset_raw[l] = X1[3 * J + l * p1];
            fit->rms_raw[l] = res1[l] / sqrt((double)d->n);
            for (size_t j = 0; j < J; j++)
                for (size_t c = 0; c < 3; c++)
                    fit->K[j][3 * l + c] = X1[3 * j + c + l * p1];
        }
    }
    if (!rc && method == RB_FTCAL_OFFSET_ELLIPSOID) {
        /* the ellipsoids' centres, averaged over the sets weighted by their rows */
        double *rows = rb_malloc(6 * d->n * sizeof *rows), centre[6] = {0};
        size_t total = 0;
        rc = rows ? RB_OK : nomem(err);
        for (size_t j = 0; !rc && j < J; j++) {
            size_t n = 0;
            for (size_t i = 0; i < d->n; i++)
                if (d->set[i] == j)
                    memcpy(rows + 6 * n++, d->r + 6 * i, 6 * sizeof *rows);
            rb_ftcal_ellipsoid e;
            rc = rb_ftcal_ellipsoid_fit(rows, n, &e, err);
            for (size_t l = 0; !rc && l < 6; l++)
                centre[l] += (double)n * e.centre[l];
            total += n;
        }
        for (size_t l = 0; !rc && l < 6; l++)
            fit->offset_raw[l] = centre[l] / (double)total;
        rb_free(rows);
    }
    /* step 2: C (r - o_raw) = G(g) (phi_body + phi_j), force rows and moment rows */
    for (size_t i = 0; !rc && i < d->n; i++) {
        const double *g = d->g + 3 * i, *ad = d->added + 4 * d->set[i];
        double rt[6];
        for (size_t l = 0; l < 6; l++)
            rt[l] = d->r[6 * i + l] - fit->offset_raw[l];
        const double Sg[9] = {0, -g[2], g[1], g[2], 0, -g[0], -g[1], g[0], 0};
        double hxg[3] = {ad[2] * g[2] - ad[3] * g[1], ad[3] * g[0] - ad[1] * g[2], ad[1] * g[1] - ad[2] * g[0]};
        for (size_t k = 0; k < 3; k++) {
            memset(x, 0, 21 * sizeof *x);
            memcpy(x + 6 * k, rt, 6 * sizeof *x);
            x[18] = -g[k];
            double y = ad[0] * g[k];
            lsq_row(&f, x, &y);
            memcpy(x + 18, Sg + 3 * k, 3 * sizeof *x);
            lsq_row(&m, x, &hxg[k]);
        }
    }
    if (!rc)
        rc = lsq_solve(&f, "ft calibration step 2 (force rows)", Xf, &resf, &fit->cond_force, err);
    if (!rc)
        rc = lsq_solve(&m, "ft calibration step 2 (moment rows)", Xm, &resm, &fit->cond_moment, err);
    if (!rc) {
        memcpy(fit->C, Xf, 18 * sizeof *Xf);
        memcpy(fit->C + 18, Xm, 18 * sizeof *Xm);
        fit->phi[0] = Xf[18];
        memcpy(fit->phi + 1, Xm + 18, 3 * sizeof *Xm);
        fit->mass = fit->phi[0];
        for (size_t c = 0; c < 3; c++)
            fit->com[c] = fit->mass != 0 ? fit->phi[1 + c] / fit->mass : NAN;
        fit->rms_force = resf / sqrt(3.0 * (double)d->n);
        fit->rms_moment = resm / sqrt(3.0 * (double)d->n);
        for (size_t l = 0; l < 6; l++)
            fit->o[l] = conv == RB_FTCAL_PLUS ? -fit->offset_raw[l] : fit->offset_raw[l];
    }
    lsq_free(&a);
    lsq_free(&f);
    lsq_free(&m);
    return rc;
}

void rb_ftcal_apply(const rb_ftcal_fit *fit, const double r[6], double w[6])
{
    double s = fit->convention == RB_FTCAL_PLUS ? 1.0 : -1.0, v[6];
    for (size_t l = 0; l < 6; l++)
        v[l] = r[l] + s * fit->o[l];
    for (size_t k = 0; k < 6; k++) {
        double acc = 0;
        for (size_t l = 0; l < 6; l++)
            acc += fit->C[6 * k + l] * v[l];
        w[k] = acc;
    }
}

/* ---- the ellipsoid (Result 1) ------------------------------------------------------------------------------------ */
int rb_ftcal_ellipsoid_fit(const double *r, size_t n, rb_ftcal_ellipsoid *e, rb_err *err)
{
    memset(e, 0, sizeof *e);
    e->rows = n;
    if (n < 9)
        return rb_err_set(err, RB_EINPUT, "ellipsoid: %zu rows, at least 9 needed", n);
    for (size_t i = 0; i < n; i++)
        for (size_t l = 0; l < 6; l++)
            e->mean[l] += r[6 * i + l] / (double)n;
    double S[36] = {0}, w[6];
    for (size_t i = 0; i < n; i++)
        for (size_t a = 0; a < 6; a++)
            for (size_t b = 0; b < 6; b++)
                S[a + 6 * b] += (r[6 * i + a] - e->mean[a]) * (r[6 * i + b] - e->mean[b]) / (double)n;
    int rc = sym_eig(S, 6, w, true, err);
    if (rc)
        return rc;
    for (size_t l = 0; l < 6; l++)
        e->eig[l] = w[5 - l];
    double sc = sqrt(fmax(w[5], 1e-300)); /* projections scaled to order 1 */
    for (size_t l = 0; l < 6; l++)
        for (size_t c = 0; c < 3; c++)
            e->U[3 * l + c] = S[l + 6 * (5 - c)];
    lsq s;
    if ((rc = lsq_init(&s, 9, 1, err)) != RB_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        double y[3] = {0}, one = 1.0;
        for (size_t c = 0; c < 3; c++)
            for (size_t l = 0; l < 6; l++)
                y[c] += e->U[3 * l + c] * (r[6 * i + l] - e->mean[l]) / sc;
        double x[9] = {y[0] * y[0], y[1] * y[1], y[2] * y[2], 2 * y[0] * y[1], 2 * y[0] * y[2], 2 * y[1] * y[2],
                       y[0],        y[1],        y[2]};
        lsq_row(&s, x, &one);
    }
    double th[9], res, cond;
    rc = lsq_solve(&s, "ellipsoid fit", th, &res, &cond, err);
    lsq_free(&s);
    if (rc)
        return rc;
    double A[9] = {th[0], th[3], th[4], th[3], th[1], th[5], th[4], th[5], th[2]}, L[9], y0[3], wA[3];
    memcpy(L, A, sizeof L);
    if ((rc = sym_eig(L, 3, wA, false, err)) != RB_OK)
        return rc;
    double det =
        A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) + A[2] * (A[3] * A[7] - A[4] * A[6]);
    if (!(wA[0] > 0) || !(fabs(det) > 0))
        return rb_err_set(err, RB_ENUMERIC, "ellipsoid fit: the raw readings' quadric is not an ellipsoid");
    /* y0 = -A^-1 b / 2 by the adjugate */
    double inv[9] = {A[4] * A[8] - A[5] * A[7], A[2] * A[7] - A[1] * A[8], A[1] * A[5] - A[2] * A[4],
                     A[5] * A[6] - A[3] * A[8], A[0] * A[8] - A[2] * A[6], A[2] * A[3] - A[0] * A[5],
                     A[3] * A[7] - A[4] * A[6], A[1] * A[6] - A[0] * A[7], A[0] * A[4] - A[1] * A[3]};
    for (size_t c = 0; c < 3; c++)
        y0[c] = -0.5 * (inv[3 * c] * th[6] + inv[3 * c + 1] * th[7] + inv[3 * c + 2] * th[8]) / det;
    double k = 1.0;
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 3; b++)
            k += y0[a] * A[3 * a + b] * y0[b];
    if (!(k > 0))
        return rb_err_set(err, RB_ENUMERIC, "ellipsoid fit: the raw readings' quadric is not an ellipsoid");
    double ss = 0;
    for (size_t i = 0; i < n; i++) {
        double y[3] = {0}, q = 0;
        for (size_t c = 0; c < 3; c++) {
            for (size_t l = 0; l < 6; l++)
                y[c] += e->U[3 * l + c] * (r[6 * i + l] - e->mean[l]) / sc;
            y[c] -= y0[c];
        }
        for (size_t a = 0; a < 3; a++)
            for (size_t b = 0; b < 3; b++)
                q += y[a] * A[3 * a + b] * y[b] / k;
        double dr = sqrt(fmax(q, 0)) - 1.0;
        ss += dr * dr;
    }
    e->residual = sqrt(ss / (double)n);
    for (size_t l = 0; l < 6; l++) {
        e->centre[l] = e->mean[l];
        for (size_t c = 0; c < 3; c++)
            e->centre[l] += e->U[3 * l + c] * sc * y0[c];
    }
    return RB_OK;
}

/* ---- static poses ------------------------------------------------------------------------------------------------ */
int rb_ftcal_static_intervals(const double *t_gyro, const double *gyro, size_t n_gyro, const double *t_acc,
                              const double *acc, size_t n_acc, const rb_ftcal_static_opts *o, double **out,
                              size_t *n_out, rb_err *err)
{
    *out = NULL;
    *n_out = 0;
    size_t cap = 16, n = 0, a0 = 0, g0 = 0, g1 = 0, exceed = 0;
    double *iv = rb_malloc(2 * cap * sizeof *iv), s[3] = {0}, s2[3] = {0}, ref[3] = {0};
    if (!iv)
        return nomem(err);
    if (n_acc)
        memcpy(ref, acc, sizeof ref);
    bool open = false, any_gyro = false;
    double t0 = 0, t1 = 0, g2max = o->gyro_max * o->gyro_max, v2max = o->acc_std_max * o->acc_std_max;
    for (size_t k = 0; k < n_acc; k++) {
        double tk = t_acc[k], lo = tk - o->window;
        for (size_t c = 0; c < 3; c++) {
            double v = acc[3 * k + c] - ref[c];
            s[c] += v, s2[c] += v * v;
        }
        for (; a0 < k && t_acc[a0] < lo; a0++)
            for (size_t c = 0; c < 3; c++) {
                double v = acc[3 * a0 + c] - ref[c];
                s[c] -= v, s2[c] -= v * v;
            }
        for (; g1 < n_gyro && t_gyro[g1] <= tk; g1++) {
            const double *w = gyro + 3 * g1;
            exceed += w[0] * w[0] + w[1] * w[1] + w[2] * w[2] > g2max || !isfinite(w[0] + w[1] + w[2]);
        }
        for (; g0 < g1 && t_gyro[g0] < lo; g0++) {
            const double *w = gyro + 3 * g0;
            exceed -= w[0] * w[0] + w[1] * w[1] + w[2] * w[2] > g2max || !isfinite(w[0] + w[1] + w[2]);
        }
        bool full = tk - t_acc[0] >= o->window - 1e-9;
        double cnt = (double)(k - a0 + 1), var = 0;
        for (size_t c = 0; c < 3; c++)
            var += fmax(s2[c] / cnt - (s[c] / cnt) * (s[c] / cnt), 0.0);
        bool has_gyro = g1 > g0;
        any_gyro |= full && has_gyro;
        bool still = full && has_gyro && exceed == 0 && var <= v2max && isfinite(var);
        if (still && !open) {
            open = true;
            t0 = lo, t1 = tk;
        } else if (still) {
            t1 = tk;
        }
        if (open && (!still || k + 1 == n_acc)) {
            open = false;
            if (t1 - t0 >= o->min_duration - 1e-9) {
                if (n == cap) {
                    double *grown = rb_realloc(iv, 4 * cap * sizeof *iv);
                    if (!grown) {
                        rb_free(iv);
                        return nomem(err);
                    }
                    iv = grown, cap *= 2;
                }
                iv[2 * n] = t0, iv[2 * n + 1] = t1;
                n++;
            }
        }
    }
    if (!any_gyro) {
        rb_free(iv);
        return rb_err_set(err, RB_EINPUT,
                          "no window of the accelerometer's holds a gyroscope sample (do the two channels overlap in "
                          "time, and is the log longer than the window %g s?)",
                          o->window);
    }
    *out = iv;
    *n_out = n;
    return RB_OK;
}
