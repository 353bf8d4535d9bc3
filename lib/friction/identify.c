/* Least-squares identification of the coulomb_viscous and scv models with non-negative parameters
 * (exact small NNLS by active-set enumeration over rb_lstsq), and the 1-D search over v_s.
 * See roboest/friction.h. */
#include <math.h>
#include <string.h>

#include "roboest/filters.h"
#include "friction_internal.h"

size_t rb_friction_regressor(const rb_friction_model *m, double v, double *phi)
{
    switch (m->kind) {
    case RB_FRICTION_CV:
        phi[0] = rb_friction_sign(v, m->cv.v_eps);
        phi[1] = v;
        return 2;
    case RB_FRICTION_SCV: {
        double S = rb_friction_sign(v, m->scv.v_eps), r = v / m->scv.v_s;
        phi[0] = S;
        phi[1] = exp(-r * r) * S;
        phi[2] = v;
        return 3;
    }
    default: return 0;
    }
}

typedef struct fit_data {
    const double *v, *y; /* finite samples only */
    size_t N;
    double *Phi; /* N x 3 */
    double *sub; /* N x 3: the columns of one active set */
    double yy;   /* sum y^2: the residual of theta = 0 */
    bool offset; /* a constant term too: y (given centred) and the columns of Phi centred */
    double ybar; /* the mean of y before centring */
    double c;    /* the fitted constant term (offset only) */
} fit_data;

/* min |y - Phi theta|^2 subject to theta >= 0, Phi N x p (p <= 3) in d->Phi. The unconstrained solution
 * when it is feasible; otherwise the least-squares solution on every proper subset of the columns, the
 * feasible one of least residual (zero outside the subset). RB_ENUMERIC (from rb_lstsq) when the full
 * regressor is rank deficient. */
static int nnls_small(fit_data *d, size_t p, double theta[3], double *rss, rb_err *err)
{
    double th[3], r;
    int rc = rb_lstsq(d->Phi, d->y, d->N, p, 1, th, &r, err);
    if (rc)
        return rc;
    bool feasible = true;
    for (size_t j = 0; j < p; j++)
        feasible = feasible && th[j] >= 0;
    if (feasible) {
        memcpy(theta, th, p * sizeof *th);
        *rss = r;
        return RB_OK;
    }
    double best = d->yy;
    memset(theta, 0, p * sizeof *theta);
    for (unsigned set = 1; set + 1 < (1u << p); set++) {
        size_t cols[3], k = 0;
        for (size_t j = 0; j < p; j++)
            if (set & (1u << j))
                cols[k++] = j;
        for (size_t i = 0; i < d->N; i++)
            for (size_t c = 0; c < k; c++)
                d->sub[i * k + c] = d->Phi[i * p + cols[c]];
        rb_err local;
        rc = rb_lstsq(d->sub, d->y, d->N, k, 1, th, &r, &local);
        if (rc == RB_ENOMEM)
            return rb_err_set(err, RB_ENOMEM, "out of memory");
        if (rc)
            continue;
        feasible = true;
        for (size_t c = 0; c < k; c++)
            feasible = feasible && th[c] >= 0;
        if (feasible && r < best) {
            best = r;
            memset(theta, 0, p * sizeof *theta);
            for (size_t c = 0; c < k; c++)
                theta[cols[c]] = th[c];
        }
    }
    *rss = best;
    return RB_OK;
}

/* The constrained fit of m's kind with m's v_s and v_eps; fills m's F_c, (F_s,) F_v. */
static int fit_fixed(fit_data *d, rb_friction_model *m, double *rss, rb_err *err)
{
    size_t p = m->kind == RB_FRICTION_CV ? 2 : 3;
    for (size_t i = 0; i < d->N; i++)
        rb_friction_regressor(m, d->v[i], d->Phi + i * p);
    /* the constant term projected out: min over c of |y - Phi theta - c|^2 is the same problem on centred
     * columns, with c = mean y - mean(Phi) theta */
    double mean[3] = {0, 0, 0};
    for (size_t j = 0; d->offset && j < p; j++) {
        for (size_t i = 0; i < d->N; i++)
            mean[j] += d->Phi[i * p + j];
        mean[j] /= (double)d->N;
        for (size_t i = 0; i < d->N; i++)
            d->Phi[i * p + j] -= mean[j];
    }
    double th[3];
    int rc = nnls_small(d, p, th, rss, err);
    if (rc)
        return rc;
    d->c = d->offset ? d->ybar - mean[0] * th[0] - mean[1] * th[1] - (p > 2 ? mean[2] * th[2] : 0) : 0;
    if (m->kind == RB_FRICTION_CV) {
        m->cv.F_c = th[0];
        m->cv.F_v = th[1];
    } else {
        m->scv.F_c = th[0];
        m->scv.F_s = th[0] + th[1];
        m->scv.F_v = th[2];
    }
    return RB_OK;
}

/* Residual of the fit at v_s = exp(x); +inf where the regressor is rank deficient. */
static int objective(fit_data *d, rb_friction_model *m, double x, double *f, rb_err *err)
{
    m->scv.v_s = exp(x);
    rb_err local;
    int rc = fit_fixed(d, m, f, &local);
    if (rc == RB_ENUMERIC) {
        *f = INFINITY;
        return RB_OK;
    }
    if (rc)
        return rb_err_set(err, rc, "%s", local.msg);
    return RB_OK;
}

static int search_v_s(fit_data *d, rb_friction_model *m, double lo, double hi, size_t grid, rb_err *err)
{
    double xlo = log(lo), xhi = log(hi), step = (xhi - xlo) / (double)(grid - 1);
    double best_f = INFINITY, best_x = xlo;
    size_t best_i = 0;
    int rc;
    for (size_t i = 0; i < grid; i++) {
        double x = i + 1 == grid ? xhi : xlo + step * (double)i, f;
        if ((rc = objective(d, m, x, &f, err)))
            return rc;
        if (f < best_f) {
            best_f = f;
            best_x = x;
            best_i = i;
        }
    }
    if (!isfinite(best_f))
        return rb_err_set(err, RB_ENUMERIC,
                          "friction fit scv: the velocities do not excite every parameter for any v_s in [%g, %g] "
                          "(rank-deficient regressor)",
                          lo, hi);
    /* golden section between the best grid point's neighbours */
    double a = best_i ? best_x - step : xlo, b = best_i + 1 < grid ? best_x + step : xhi;
    const double invphi = (sqrt(5.0) - 1) / 2;
    double c = b - invphi * (b - a), e = a + invphi * (b - a), fc, fe;
    if ((rc = objective(d, m, c, &fc, err)) || (rc = objective(d, m, e, &fe, err)))
        return rc;
    while (b - a > 1e-4) {
        if (fc <= fe) {
            b = e, e = c, fe = fc;
            c = b - invphi * (b - a);
            if ((rc = objective(d, m, c, &fc, err)))
                return rc;
        } else {
            a = c, c = e, fc = fe;
            e = a + invphi * (b - a);
            if ((rc = objective(d, m, e, &fe, err)))
                return rc;
        }
    }
    if (fc < best_f)
        best_f = fc, best_x = c;
    if (fe < best_f)
        best_f = fe, best_x = e;
    m->scv.v_s = exp(best_x);
    double rss;
    return fit_fixed(d, m, &rss, err);
}

/* tanh(g5 v) equal to the sign the Coulomb-viscous fit used, on every sample: 1 / v_eps, or (exact sign) a
 * sharpness at which tanh rounds to +-1 at the smallest non-zero |v| (tanh(20) is 1 in double). 0: none. */
static double cv_sharpness(const double *v, size_t n, double v_eps)
{
    if (v_eps > 0)
        return 1 / v_eps;
    double vmin = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (v[i] != 0)
            vmin = fmin(vmin, fabs(v[i]));
    double g5 = 20 / vmin;
    return isfinite(g5) && g5 > 0 ? g5 : 0;
}

int rb_friction_fit(rb_friction_kind kind, const double *v, const double *tau_F, size_t N,
                    const rb_friction_fit_opts *o, rb_friction_model *out, double *rmse, rb_err *err)
{
    return rb_friction_fit_offset(kind, v, tau_F, N, o, out, NULL, rmse, err);
}

int rb_friction_fit_offset(rb_friction_kind kind, const double *v, const double *tau_F, size_t N,
                           const rb_friction_fit_opts *o, rb_friction_model *out, double *offset, double *rmse,
                           rb_err *err)
{
    rb_friction_fit_opts def = {0};
    if (!o)
        o = &def;
    if (!v || !tau_F || !out)
        return rb_err_set(err, RB_EINVAL, "friction fit: NULL argument");
    if (kind != RB_FRICTION_CV && kind != RB_FRICTION_SCV && kind != RB_FRICTION_TANH6)
        return rb_err_set(err, RB_EINVAL, "friction fit: model %s cannot be fitted (use coulomb_viscous, scv or tanh6)",
                          rb_friction_kind_name(kind));
    const char *kn = rb_friction_kind_name(kind);
    if (!(o->v_eps >= 0 && isfinite(o->v_eps)))
        return rb_err_set(err, RB_EINVAL, "friction fit %s: v_eps (%g) must be finite and >= 0", kn, o->v_eps);
    if (!(o->v_s >= 0 && isfinite(o->v_s)))
        return rb_err_set(err, RB_EINVAL, "friction fit %s: v_s (%g) must be finite and >= 0", kn, o->v_s);
    if (!(o->v_s_min >= 0 && o->v_s_max >= 0 && isfinite(o->v_s_min) && isfinite(o->v_s_max)))
        return rb_err_set(err, RB_EINVAL, "friction fit %s: v_s_min (%g) and v_s_max (%g) must be finite and >= 0", kn,
                          o->v_s_min, o->v_s_max);
    if (o->grid && o->grid < 3)
        return rb_err_set(err, RB_EINVAL, "friction fit %s: grid (%zu) must be >= 3", kn, o->grid);
    size_t p = kind == RB_FRICTION_CV ? 2 : 3, n = 0;
    double vmax = 0;
    for (size_t i = 0; i < N; i++)
        if (isfinite(v[i]) && isfinite(tau_F[i])) {
            n++;
            vmax = fmax(vmax, fabs(v[i]));
        }
    if (n < p)
        return rb_err_set(err, RB_EDIM, "friction fit %s: %zu finite samples for %zu parameters", kn, n, p);
    bool search = kind == RB_FRICTION_SCV && o->v_s == 0;
    double lo = o->v_s_min ? o->v_s_min : 1e-3 * vmax, hi = o->v_s_max ? o->v_s_max : vmax;
    if (search && !(lo > 0 && hi > lo))
        return rb_err_set(err, RB_EINVAL, "friction fit scv: the v_s search needs 0 < v_s_min < v_s_max, got [%g, %g]",
                          lo, hi);

    fit_data d = {0};
    rb_friction_model m;
    memset(&m, 0, sizeof m);
    m.kind = kind;
    double rss;
    double *vv = rb_malloc(n * sizeof *vv), *yv = rb_malloc(n * sizeof *yv), *yc = NULL, c = 0;
    d.Phi = rb_malloc(3 * n * sizeof *d.Phi);
    d.sub = rb_malloc(3 * n * sizeof *d.sub);
    d.offset = offset != NULL;
    if (d.offset)
        yc = rb_malloc(n * sizeof *yc);
    int rc = RB_OK;
    if (!vv || !yv || !d.Phi || !d.sub || (d.offset && !yc)) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0, k = 0; i < N; i++)
        if (isfinite(v[i]) && isfinite(tau_F[i])) {
            vv[k] = v[i];
            yv[k] = tau_F[i];
            d.yy += yv[k] * yv[k];
            k++;
        }
    d.v = vv, d.y = yv, d.N = n;
    if (d.offset) {
        for (size_t k = 0; k < n; k++)
            d.ybar += yv[k] / (double)n;
        d.yy = 0;
        for (size_t k = 0; k < n; k++) {
            yc[k] = yv[k] - d.ybar;
            d.yy += yc[k] * yc[k];
        }
        d.y = yc;
    }
    if (kind == RB_FRICTION_TANH6) {
        /* the Coulomb-viscous fit it contains is one of its starts, so it never ends worse */
        rb_friction_model cv = {.kind = RB_FRICTION_CV, .cv = {.v_eps = o->v_eps}};
        rb_fric_cv_start start = {0, 0, cv_sharpness(vv, n, o->v_eps), 0};
        rb_err local;
        bool have = start.g5 > 0 && fit_fixed(&d, &cv, &rss, &local) == RB_OK;
        if (have)
            start.F_c = cv.cv.F_c, start.F_v = cv.cv.F_v, start.c = d.c;
        rc = rb_fric_fit_tanh6(vv, yv, n, o, vmax, have ? &start : NULL, d.offset, &m, &c, err);
    } else if (kind == RB_FRICTION_CV) {
        m.cv.v_eps = o->v_eps;
        rc = fit_fixed(&d, &m, &rss, err);
        c = d.c;
    } else {
        m.scv.v_eps = o->v_eps;
        if (search) {
            rc = search_v_s(&d, &m, lo, hi, o->grid ? o->grid : 41, err);
        } else {
            m.scv.v_s = o->v_s;
            rc = fit_fixed(&d, &m, &rss, err);
        }
        c = d.c;
    }
    if (rc == RB_ENUMERIC && !search && kind != RB_FRICTION_TANH6)
        rb_err_prefix(err, rc, "friction fit %s: the velocities do not excite every parameter (theta = %s): ", kn,
                      kind == RB_FRICTION_CV ? "[F_c, F_v]" : "[F_c, F_s - F_c, F_v]");
    if (rc)
        goto done;
    if ((rc = rb_friction_validate(&m, err)))
        goto done;
    if (rmse) {
        double s = 0;
        for (size_t i = 0; i < n; i++) {
            double r = yv[i] - rb_friction_eval(&m, vv[i]) - c;
            s += r * r;
        }
        *rmse = sqrt(s / (double)n);
    }
    *out = m;
    if (offset)
        *offset = c;
done:
    rb_free(vv);
    rb_free(yv);
    rb_free(yc);
    rb_free(d.Phi);
    rb_free(d.sub);
    return rc;
}
