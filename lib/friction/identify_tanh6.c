/* Least-squares identification of the tanh6 model: non-negative g1, g4, g6 in closed form for given
 * velocity scales (g2, g3, g5), the scales searched on a grid and refined coordinate by coordinate.
 * See roboest/friction.h (identification). */
#include <math.h>
#include <string.h>

#include "friction_internal.h"

typedef struct t6 {
    const double *v, *y;
    size_t N;
    double yy;     /* sum y^2 */
    double lo, hi; /* log bracket of the scales */
    size_t G;      /* grid points */
    double *table; /* G x N: tanh(g_i v_k) at the grid scales */
    double *col;   /* 3 x N: tanh(g2 v), tanh(g3 v), tanh(g5 v) at an off-grid point */
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

/* The linear fit for the columns tanh(g2 v) (a), tanh(g3 v) (b), tanh(g5 v) (e): theta = [g1, g4, g6]. */
static double fit_linear(const t6 *d, const double *a, const double *b, const double *e, double theta[3])
{
    double G[9] = {0}, c[3] = {0};
    for (size_t k = 0; k < d->N; k++) {
        double phi[3] = {a[k] - b[k], e[k], d->v[k]};
        for (size_t i = 0; i < 3; i++) {
            c[i] += phi[i] * d->y[k];
            for (size_t j = i; j < 3; j++)
                G[i * 3 + j] += phi[i] * phi[j];
        }
    }
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < i; j++)
            G[i * 3 + j] = G[j * 3 + i];
    return nnls3(G, c, d->yy, theta);
}

/* Residual at log scales u = [log g2, log g3, log g5] (off the grid). */
static double objective(t6 *d, const double u[3], double theta[3])
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
    double best = INFINITY, theta[3];
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
    double theta[3], x[3];
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

int rb_fric_fit_tanh6(const double *v, const double *y, size_t N, const rb_friction_fit_opts *o, double vmax,
                      rb_friction_model *out, rb_err *err)
{
    double vs_lo = o->v_s_min ? o->v_s_min : 1e-3 * vmax, vs_hi = o->v_s_max ? o->v_s_max : vmax;
    if (!(vs_lo > 0 && vs_hi > vs_lo))
        return rb_err_set(err, RB_EINVAL,
                          "friction fit tanh6: the scale search needs 0 < v_s_min < v_s_max, got [%g, %g]", vs_lo,
                          vs_hi);
    t6 d = {.v = v, .y = y, .N = N, .lo = -log(vs_hi), .hi = -log(vs_lo), .G = o->grid ? o->grid : 13};
    for (size_t k = 0; k < N; k++)
        d.yy += y[k] * y[k];
    size_t cells;
    if (!rb_size_mul(d.G + 3, N, &cells) || cells > SIZE_MAX / sizeof(double))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    d.table = rb_malloc(cells * sizeof *d.table);
    if (!d.table)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    d.col = d.table + d.G * N;
    double u[3], theta[3];
    double best = grid_search(&d, u);
    int rc = RB_OK;
    if (!(best < d.yy) && !(best == d.yy && d.yy == 0))
        rc = rb_err_set(err, RB_ENUMERIC,
                        "friction fit tanh6: the velocities do not excite the model for any scale in [%g, %g] s/rad",
                        exp(d.lo), exp(d.hi));
    if (rc == RB_OK) {
        refine(&d, u, best);
        objective(&d, u, theta);
        memset(out, 0, sizeof *out);
        out->kind = RB_FRICTION_TANH6;
        out->tanh6 = (rb_friction_tanh6){theta[0], exp(u[0]), exp(u[1]), theta[1], exp(u[2]), theta[2]};
    }
    rb_free(d.table);
    return rc;
}
