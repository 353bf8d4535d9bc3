/* Least-squares identification of the tanh6 model: non-negative g1, g4, g6 in closed form for given
 * velocity scales (g2, g3, g5), the scales searched on a grid and refined coordinate by coordinate.
 * See roboest/friction.h (identification). */
#include <math.h>
#include <string.h>

#include "friction_internal.h"

typedef struct t6 {
    const double *v, *y;
    size_t N;
    bool offset;        /* fit a constant term too (the columns and y centred) */
    double sy;          /* sum y */
    double yy;          /* sum y^2 (centred with the offset) */
    double lo, hi;      /* log bracket of the scales */
    size_t G;           /* grid points */
    double *table;      /* G x N: tanh(g_i v_k) at the grid scales */
    double *col;        /* 3 x N: tanh(g2 v), tanh(g3 v), tanh(g5 v) at an off-grid point */
    double *r, *rh, *J; /* N, N and N x 3: residuals and their Jacobian (the polish) */
} t6;

/* Solve the k x k SPD system A x = b (k <= 3) by Cholesky; false when a pivot is below 1e-12 of the
 * largest diagonal (a column that (almost) repeats the others: the subset is skipped). */
static bool solve_spd(size_t k, const double *A, const double *b, double *x)
{
    double L[9] = {0}, dmax = 0;
    for (size_t i = 0; i < k; i++)
        dmax = fmax(dmax, A[i * k + i]);
    for (size_t j = 0; j < k; j++) {
        double d = A[j * k + j];
        for (size_t l = 0; l < j; l++)
            d -= L[j * 3 + l] * L[j * 3 + l];
        if (!(d > 1e-12 * dmax))
            return false;
        L[j * 3 + j] = sqrt(d);
        for (size_t i = j + 1; i < k; i++) {
            double s = A[i * k + j];
            for (size_t l = 0; l < j; l++)
                s -= L[i * 3 + l] * L[j * 3 + l];
            L[i * 3 + j] = s / L[j * 3 + j];
        }
    }
    double z[3];
    for (size_t i = 0; i < k; i++) {
        double s = b[i];
        for (size_t l = 0; l < i; l++)
            s -= L[i * 3 + l] * z[l];
        z[i] = s / L[i * 3 + i];
    }
    for (size_t i = k; i-- > 0;) {
        double s = z[i];
        for (size_t l = i + 1; l < k; l++)
            s -= L[l * 3 + i] * x[l];
        x[i] = s / L[i * 3 + i];
    }
    return true;
}

/* min |y - Phi theta|^2 over theta >= 0 from the Gram matrix G = Phi^T Phi (3 x 3) and c = Phi^T y: every
 * subset of the columns, the feasible least-squares solution of least residual (the NNLS optimum is the
 * unconstrained solution on its own support). Returns the residual sum of squares (yy with theta = 0). */
static double nnls3(const double G[9], const double c[3], double yy, double theta[3])
{
    double best = yy;
    memset(theta, 0, 3 * sizeof *theta);
    for (unsigned set = 1; set < 8; set++) {
        size_t cols[3], k = 0;
        for (size_t j = 0; j < 3; j++)
            if (set & (1u << j))
                cols[k++] = j;
        double A[9], b[3], x[3];
        for (size_t i = 0; i < k; i++) {
            b[i] = c[cols[i]];
            for (size_t j = 0; j < k; j++)
                A[i * k + j] = G[cols[i] * 3 + cols[j]];
        }
        if (!solve_spd(k, A, b, x))
            continue;
        bool feasible = true;
        double rss = yy;
        for (size_t i = 0; i < k; i++) {
            feasible = feasible && x[i] >= 0;
            rss -= 2 * x[i] * b[i];
            for (size_t j = 0; j < k; j++)
                rss += x[i] * A[i * k + j] * x[j];
        }
        if (feasible && rss < best) {
            best = rss;
            memset(theta, 0, 3 * sizeof *theta);
            for (size_t i = 0; i < k; i++)
                theta[cols[i]] = x[i];
        }
    }
    return best;
}

/* The linear fit for the columns tanh(g2 v) (a), tanh(g3 v) (b), tanh(g5 v) (e): theta = [g1, g4, g6, c] (c the
 * offset, 0 without one; for the constant term the columns and y are centred, which leaves the same problem in
 * theta). */
static double fit_linear(const t6 *d, const double *a, const double *b, const double *e, double theta[4])
{
    double G[9] = {0}, c[3] = {0}, s[3] = {0};
    for (size_t k = 0; k < d->N; k++) {
        double phi[3] = {a[k] - b[k], e[k], d->v[k]};
        for (size_t i = 0; i < 3; i++) {
            c[i] += phi[i] * d->y[k];
            s[i] += phi[i];
            for (size_t j = i; j < 3; j++)
                G[i * 3 + j] += phi[i] * phi[j];
        }
    }
    double n = (double)d->N;
    if (d->offset)
        for (size_t i = 0; i < 3; i++) {
            c[i] -= s[i] * d->sy / n;
            for (size_t j = i; j < 3; j++)
                G[i * 3 + j] -= s[i] * s[j] / n;
        }
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < i; j++)
            G[i * 3 + j] = G[j * 3 + i];
    double rss = nnls3(G, c, d->yy, theta);
    theta[3] = d->offset ? (d->sy - s[0] * theta[0] - s[1] * theta[1] - s[2] * theta[2]) / n : 0;
    return rss;
}

/* Residual at log scales u = [log g2, log g3, log g5] (off the grid). */
static double objective(t6 *d, const double u[3], double theta[4])
{
    for (size_t c = 0; c < 3; c++) {
        double g = exp(u[c]);
        for (size_t k = 0; k < d->N; k++)
            d->col[c * d->N + k] = tanh(g * d->v[k]);
    }
    return fit_linear(d, d->col, d->col + d->N, d->col + 2 * d->N, theta);
}

static double grid_u(const t6 *d, size_t i)
{
    return i + 1 == d->G ? d->hi : d->lo + (d->hi - d->lo) * (double)i / (double)(d->G - 1);
}

/* Coarse search: every grid triple with g2 above g3 by at least one grid step. */
static double grid_search(t6 *d, double u[3])
{
    for (size_t i = 0; i < d->G; i++) {
        double g = exp(grid_u(d, i));
        for (size_t k = 0; k < d->N; k++)
            d->table[i * d->N + k] = tanh(g * d->v[k]);
    }
    double best = INFINITY, theta[4];
    for (size_t i3 = 0; i3 < d->G; i3++)
        for (size_t i2 = i3 + 1; i2 < d->G; i2++)
            for (size_t i5 = 0; i5 < d->G; i5++) {
                const double *T = d->table;
                double r = fit_linear(d, T + i2 * d->N, T + i3 * d->N, T + i5 * d->N, theta);
                if (r < best) {
                    best = r;
                    u[0] = grid_u(d, i2), u[1] = grid_u(d, i3), u[2] = grid_u(d, i5);
                }
            }
    return best;
}

/* Golden-section search on coordinate c of u over [a, b], keeping the best point found. */
static double refine_coordinate(t6 *d, double u[3], size_t c, double a, double b, double best)
{
    const double invphi = (sqrt(5.0) - 1) / 2;
    double theta[4], x[3];
    memcpy(x, u, sizeof x);
    double p = b - invphi * (b - a), q = a + invphi * (b - a), fp, fq;
    x[c] = p, fp = objective(d, x, theta);
    x[c] = q, fq = objective(d, x, theta);
    while (b - a > 1e-4) {
        if (fp <= fq) {
            b = q, q = p, fq = fp;
            p = b - invphi * (b - a);
            x[c] = p, fp = objective(d, x, theta);
        } else {
            a = p, p = q, fp = fq;
            q = a + invphi * (b - a);
            x[c] = q, fq = objective(d, x, theta);
        }
    }
    double f = fp <= fq ? fp : fq, at = fp <= fq ? p : q;
    if (f < best) {
        u[c] = at;
        best = f;
    }
    return best;
}

/* Sweeps over the three scales, each within one grid step of its value, keeping g2 >= g3 e^step; up to 12, until
 * a sweep gains less than 1e-12 of sum y^2. */
static double refine(t6 *d, double u[3], double best)
{
    double step = (d->hi - d->lo) / (double)(d->G - 1);
    for (int sweep = 0; sweep < 12; sweep++) {
        double before = best;
        for (size_t c = 0; c < 3; c++) {
            double a = fmax(d->lo, u[c] - step), b = fmin(d->hi, u[c] + step);
            if (c == 0)
                a = fmax(a, u[1] + step); /* g2 >= g3 e^step */
            if (c == 1)
                b = fmin(b, u[0] - step);
            if (b > a)
                best = refine_coordinate(d, u, c, a, b, best);
        }
        if (before - best <= 1e-12 * d->yy)
            break;
    }
    return best;
}

/* The residuals y - model at log scales u into r (the linear parameters fitted there, into theta); returns their
 * sum of squares, summed directly (not from the normal equations). */
static double residuals(t6 *d, const double u[3], double theta[4], double *r)
{
    objective(d, u, theta);
    const double *a = d->col, *b = a + d->N, *e = b + d->N;
    double s = 0;
    for (size_t k = 0; k < d->N; k++) {
        r[k] = d->y[k] - (theta[0] * (a[k] - b[k]) + theta[1] * e[k] + theta[2] * d->v[k] + theta[3]);
        s += r[k] * r[k];
    }
    return s;
}

/* Levenberg-Marquardt on the three log scales with the linear parameters projected out (fitted at every
 * point), Jacobian by forward differences, g2 >= g3 e^step kept by clipping g3 (refine's rule: two almost
 * equal scales would make g1 a huge multiple of a tiny column); up to 40 steps, until one gains less
 * than 1e-12 of sum y^2. Unbounded by the grid's bracket, so that the Coulomb-viscous start (g5 beyond it)
 * can move. Returns the sum of squares at u (updated). */
static double polish(t6 *d, double u[3])
{
    double sep = (d->hi - d->lo) / (double)(d->G - 1);
    double theta[4], f = residuals(d, u, theta, d->r), mu = 1e-3;
    for (int it = 0; it < 40 && f > 0; it++) {
        for (size_t c = 0; c < 3; c++) {
            double x[3] = {u[0], u[1], u[2]}, h = 1e-6 * fmax(1, fabs(u[c]));
            x[c] += h;
            residuals(d, x, theta, d->rh);
            for (size_t k = 0; k < d->N; k++)
                d->J[k * 3 + c] = (d->rh[k] - d->r[k]) / h;
        }
        double A[9] = {0}, g[3] = {0}, dmax = 0;
        for (size_t k = 0; k < d->N; k++)
            for (size_t i = 0; i < 3; i++) {
                g[i] += d->J[k * 3 + i] * d->r[k];
                for (size_t j = 0; j < 3; j++)
                    A[i * 3 + j] += d->J[k * 3 + i] * d->J[k * 3 + j];
            }
        for (size_t i = 0; i < 3; i++)
            dmax = fmax(dmax, A[i * 4]);
        if (!(dmax > 0))
            break;
        bool moved = false;
        while (!moved && mu < 1e8) {
            double M[9], step[3], x[3], rhs[3] = {-g[0], -g[1], -g[2]};
            memcpy(M, A, sizeof M);
            for (size_t i = 0; i < 3; i++)
                M[i * 4] += mu * fmax(A[i * 4], 1e-9 * dmax);
            if (solve_spd(3, M, rhs, step)) {
                for (size_t i = 0; i < 3; i++)
                    x[i] = u[i] + step[i];
                x[1] = fmin(x[1], x[0] - sep); /* the grid's separation (see refine) */
                double fx = residuals(d, x, theta, d->rh);
                if (fx < f) {
                    double gain = f - fx;
                    memcpy(u, x, sizeof x);
                    f = fx;
                    double *t = d->r;
                    d->r = d->rh, d->rh = t;
                    mu = fmax(mu / 10, 1e-12);
                    moved = true;
                    if (gain <= 1e-12 * d->yy)
                        return f;
                    break;
                }
            }
            mu *= 10;
        }
        if (!moved)
            break;
    }
    return f;
}

/* The sum of squares of model m (plus offset c) on the samples, summed directly. */
static double rss_of(const t6 *d, const rb_friction_model *m, double c)
{
    double s = 0;
    for (size_t k = 0; k < d->N; k++) {
        double r = d->y[k] - rb_friction_eval(m, d->v[k]) - c;
        s += r * r;
    }
    return s;
}

static rb_friction_model model_at(const double u[3], const double theta[4])
{
    rb_friction_model m;
    memset(&m, 0, sizeof m);
    m.kind = RB_FRICTION_TANH6;
    m.tanh6 = (rb_friction_tanh6){theta[0], exp(u[0]), exp(u[1]), theta[1], exp(u[2]), theta[2]};
    return m;
}

int rb_fric_fit_tanh6(const double *v, const double *y, size_t N, const rb_friction_fit_opts *o, double vmax,
                      const rb_fric_cv_start *cv, bool offset, rb_friction_model *out, double *c_out, rb_err *err)
{
    double vs_lo = o->v_s_min ? o->v_s_min : 1e-3 * vmax, vs_hi = o->v_s_max ? o->v_s_max : vmax;
    if (!(vs_lo > 0 && vs_hi > vs_lo))
        return rb_err_set(err, RB_EINVAL,
                          "friction fit tanh6: the scale search needs 0 < v_s_min < v_s_max, got [%g, %g]", vs_lo,
                          vs_hi);
    t6 d = {
        .v = v, .y = y, .N = N, .offset = offset, .lo = -log(vs_hi), .hi = -log(vs_lo), .G = o->grid ? o->grid : 13};
    for (size_t k = 0; k < N; k++) {
        d.sy += y[k];
        d.yy += y[k] * y[k];
    }
    if (offset)
        d.yy = fmax(0, d.yy - d.sy * d.sy / (double)N);
    size_t cells;
    if (!rb_size_mul(d.G + 8, N, &cells) || cells > SIZE_MAX / sizeof(double))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    d.table = rb_malloc(cells * sizeof *d.table);
    if (!d.table)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    d.col = d.table + d.G * N;
    d.r = d.col + 3 * N, d.rh = d.r + N, d.J = d.rh + N;
    double u[3], theta[4];
    double best = grid_search(&d, u);
    int rc = RB_OK;
    if (!(best < d.yy) && !(best == d.yy && d.yy == 0))
        rc = rb_err_set(err, RB_ENUMERIC,
                        "friction fit tanh6: the velocities do not excite the model for any scale in [%g, %g] s/rad",
                        exp(d.lo), exp(d.hi));
    if (rc == RB_OK) {
        /* candidates, each scored by its directly summed residual: the grid's refined optimum, the same
         * polished, the Coulomb-viscous fit embedded (g1 = 0, g4 = F_c, g5 = the sign's sharpness, g6 = F_v) and
         * that start polished; the first of least residual wins */
        refine(&d, u, best);
        objective(&d, u, theta);
        rb_friction_model m = model_at(u, theta);
        double c = theta[3], f = rss_of(&d, &m, c);
        double ua[3] = {u[0], u[1], u[2]};
        polish(&d, ua);
        objective(&d, ua, theta);
        rb_friction_model ma = model_at(ua, theta);
        double fa = rss_of(&d, &ma, theta[3]);
        if (fa < f)
            m = ma, c = theta[3], f = fa;
        if (cv) {
            double ue[3] = {u[0], u[1], log(cv->g5)}, te[4] = {0, cv->F_c, cv->F_v, cv->c};
            rb_friction_model me = model_at(ue, te);
            double fe = rss_of(&d, &me, te[3]);
            if (fe < f)
                m = me, c = te[3], f = fe;
            polish(&d, ue);
            objective(&d, ue, theta);
            me = model_at(ue, theta);
            fe = rss_of(&d, &me, theta[3]);
            if (fe < f)
                m = me, c = theta[3], f = fe;
        }
        *out = m;
        *c_out = c;
    }
    rb_free(d.table);
    return rc;
}
