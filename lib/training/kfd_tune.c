/* Choosing the kf_derivative filter's process noise q on a log (roboest/training.h; `roboest tune kf-derivative`):
 * a grid over log10 q, then a golden-section search, on the filter's own output. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/filters.h"
#include "roboest/training.h"
#include "tune_internal.h"

void rb_kfd_tune_opts_init(rb_kfd_tune_opts *o)
{
    memset(o, 0, sizeof *o);
    o->p0[0] = RB_KFD_DEFAULT_P0_X;
    o->p0[1] = RB_KFD_DEFAULT_P0_V;
    o->p0[2] = RB_KFD_DEFAULT_P0_A;
    o->warmup = -1;
}

/* Workspace of one tuning: the data and the buffers one evaluation fills. */
typedef struct tune_ctx {
    const double *t, *z, *v_ref;
    size_t T, first_scored;
    rb_kfd_params par;
    double *v, *pred;
    size_t evaluations;
} tune_ctx;

/* The criterion at log10 q (see roboest/training.h). */
static int evaluate(tune_ctx *c, double log10_q, double *J, rb_err *err)
{
    c->par.q = pow(10.0, log10_q);
    c->evaluations++;
    int rc = rb_kfd_run(&c->par, c->t, c->z, c->T, NULL, c->v, NULL, c->pred, err);
    if (rc)
        return rc;
    double s = 0, comp = 0;
    size_t cnt = 0;
    for (size_t k = c->first_scored; k < c->T; k++) {
        double d = c->v_ref ? c->v[k] - c->v_ref[k] : c->pred[k];
        if (!isfinite(d))
            continue;
        /* Neumaier-compensated sum: long logs keep their precision */
        double term = d * d, sum = s + term;
        comp += fabs(s) >= term ? (s - sum) + term : (term - sum) + s;
        s = sum;
        cnt++;
    }
    if (cnt == 0)
        return rb_err_set(err, RB_EINPUT, "kf_derivative tuning: no sample to score after the warm-up");
    *J = sqrt((s + comp) / (double)cnt);
    if (!isfinite(*J))
        return rb_err_set(err, RB_ENUMERIC, "kf_derivative tuning: the criterion is not finite at q = %g", c->par.q);
    return RB_OK;
}

/* The digits times or over an exact power of ten (10^k is exact for |k| <= 22). */
double rb_tune_round3(double q)
{
    if (!(q > 0) || !isfinite(q))
        return q;
    int k = 2 - (int)floor(log10(q));
    if (k >= 0) {
        double p = pow(10.0, k);
        return round(q * p) / p;
    }
    double p = pow(10.0, -k);
    return round(q / p) * p;
}

double rb_kfd_estimate_r(const double *z, size_t T)
{
    /* third differences of white noise of variance r have variance (1 + 9 + 9 + 1) r = 20 r */
    double s = 0;
    size_t cnt = 0;
    for (size_t k = 3; k < T; k++) {
        double d = z[k] - 3 * z[k - 1] + 3 * z[k - 2] - z[k - 3];
        if (isfinite(d)) {
            s += d * d;
            cnt++;
        }
    }
    return cnt ? s / (20.0 * (double)cnt) : NAN;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median sample interval (the mean of the middle two for an even count); buf: T - 1 values. */
static double median_interval(const double *t, size_t T, double *buf)
{
    size_t n = T - 1;
    for (size_t k = 0; k < n; k++)
        buf[k] = t[k + 1] - t[k];
    qsort(buf, n, sizeof *buf, cmp_double);
    return n % 2 ? buf[n / 2] : 0.5 * (buf[n / 2 - 1] + buf[n / 2]);
}

int rb_kfd_tune(const double *t, const double *z, const double *v_ref, size_t T, const rb_kfd_tune_opts *o,
                rb_kfd_tune_result *res, rb_err *err)
{
    if (!t || !z || !o || !res)
        return rb_err_set(err, RB_EINVAL, "kf_derivative tuning: NULL argument");
    memset(res, 0, sizeof *res);
    if (T < 8)
        return rb_err_set(err, RB_EINPUT, "kf_derivative tuning: %zu samples, need at least 8", T);
    for (size_t k = 1; k < T; k++)
        if (!(t[k] > t[k - 1]) || !isfinite(t[k]) || !isfinite(t[k - 1]))
            return rb_err_set(err, RB_EINPUT,
                              "kf_derivative tuning: time stamp %zu (%.17g s) does not follow the one before", k, t[k]);
    tune_ctx c = {.t = t, .z = z, .v_ref = v_ref, .T = T};
    c.v = rb_malloc(2 * T * sizeof *c.v);
    if (!c.v)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    c.pred = c.v + T;
    int rc = RB_OK;
    double dt = median_interval(t, T, c.v);
    double r = o->r > 0 ? o->r : rb_tune_round3(rb_kfd_estimate_r(z, T));
    if (!(r > 0) || !isfinite(r)) {
        rc = rb_err_set(err, RB_ENUMERIC,
                        "kf_derivative tuning: cannot estimate the measurement variance from the signal (third "
                        "differences are %s); give r",
                        isfinite(r) ? "zero" : "not finite");
        goto done;
    }
    double warmup = o->warmup >= 0 ? o->warmup : 0.1 * (t[T - 1] - t[0]);
    while (c.first_scored < T && t[c.first_scored] < t[0] + warmup)
        c.first_scored++;
    /* default interval: rho = q dt^5 / r from 1e-18 (hardly any process noise) to 1e2 (no smoothing) */
    double scale = r / pow(dt, 5);
    double lo = o->q_min > 0 ? log10(o->q_min) : log10(scale) - 18;
    double hi = o->q_max > 0 ? log10(o->q_max) : log10(scale) + 2;
    if (!(lo < hi) || !isfinite(lo) || !isfinite(hi)) {
        rc = rb_err_set(err, RB_EINVAL, "kf_derivative tuning: the search interval [%g, %g] is empty or not finite",
                        pow(10.0, lo), pow(10.0, hi));
        goto done;
    }
    c.par.noise = RB_KFD_JERK;
    c.par.r = r;
    memcpy(c.par.p0, o->p0, sizeof c.par.p0);
    rc = rb_kfd_check(&c.par, err);
    if (rc)
        goto done;

    /* 1. grid over log10 q, steps of at most half a decade, both ends included */
    size_t steps = (size_t)ceil((hi - lo) / 0.5);
    if (steps < 2)
        steps = 2;
    double h = (hi - lo) / (double)steps, best_J = INFINITY;
    size_t best = 0;
    for (size_t i = 0; i <= steps; i++) {
        double J;
        rc = evaluate(&c, lo + h * (double)i, &J, err);
        if (rc)
            goto done;
        if (J < best_J) {
            best_J = J;
            best = i;
        }
    }
    /* 2. golden-section search between the best grid point's neighbours, to 0.01 decade */
    double a = lo + h * (double)(best ? best - 1 : 0), b = lo + h * (double)(best < steps ? best + 1 : steps);
    const double g = (sqrt(5.0) - 1) / 2;
    double x1 = b - g * (b - a), x2 = a + g * (b - a), f1, f2;
    if ((rc = evaluate(&c, x1, &f1, err)) || (rc = evaluate(&c, x2, &f2, err)))
        goto done;
    while (b - a > 0.01) {
        if (f1 <= f2) {
            b = x2, x2 = x1, f2 = f1;
            x1 = b - g * (b - a);
            rc = evaluate(&c, x1, &f1, err);
        } else {
            a = x1, x1 = x2, f1 = f2;
            x2 = a + g * (b - a);
            rc = evaluate(&c, x2, &f2, err);
        }
        if (rc)
            goto done;
    }
    double best_log = f1 <= f2 ? x1 : x2, best_f = f1 <= f2 ? f1 : f2;
    if (best_J < best_f) { /* the grid point itself was better (flat or noisy criterion) */
        best_log = lo + h * (double)best;
        best_f = best_J;
    }
    /* 3. the reported q: 3 significant digits, with its criterion */
    double q = rb_tune_round3(pow(10.0, best_log)), J;
    rc = evaluate(&c, log10(q), &J, err);
    if (rc)
        goto done;
    (void)best_f;
    res->q = q;
    res->r = r;
    res->criterion = J;
    res->with_reference = v_ref != NULL;
    res->q_min = pow(10.0, lo);
    res->q_max = pow(10.0, hi);
    res->at_bound = best_log - lo < 0.5 || hi - best_log < 0.5;
    res->evaluations = c.evaluations;
    res->n_scored = T - c.first_scored;
    res->dt = dt;
    res->t_scored = t[c.first_scored < T ? c.first_scored : T - 1];
done:
    rb_free(c.v);
    return rc;
}

int rb_kfd_tune_channel(const rb_channel *x, size_t element, const rb_channel *ref, size_t ref_element,
                        const rb_kfd_tune_opts *o, rb_kfd_tune_result *res, rb_err *err)
{
    if (!x || !o || !res)
        return rb_err_set(err, RB_EINVAL, "kf_derivative tuning: NULL argument");
    if (element >= x->n_elements)
        return rb_err_set(err, RB_EINVAL, "channel %s: element index %zu out of range (%zu elements)", x->name, element,
                          x->n_elements);
    if (ref && ref_element >= ref->n_elements)
        return rb_err_set(err, RB_EINVAL, "channel %s: element index %zu out of range (%zu elements)", ref->name,
                          ref_element, ref->n_elements);
    rb_time_report rep;
    int rc = rb_channel_check_time(x, 3.0, &rep, err);
    if (rc)
        return rc;
    size_t T = x->n_samples, bytes;
    if (!rb_size_mul(T, 2 * sizeof(double), &bytes))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    double *z = rb_malloc(bytes ? bytes : 1), *v = z + T;
    if (!z)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t k = 0; k < T; k++)
        z[k] = x->data[k * x->n_elements + element];
    if (ref) {
        rb_clock clk = {T, x->time}; /* borrowed: rb_resample only reads it */
        rc = rb_resample(ref, &ref_element, 1, &clk, RB_INTERP_LINEAR, RB_NONFINITE_ERROR, v, NULL, err);
        if (rc)
            rb_err_prefix(err, rc, "reference: ");
    }
    if (rc == RB_OK) {
        rc = rb_kfd_tune(x->time, z, ref ? v : NULL, T, o, res, err);
        if (rc)
            rb_err_prefix(err, rc, "channel %s: element %s: ", x->name, x->element_names[element]);
    }
    rb_free(z);
    return rc;
}
