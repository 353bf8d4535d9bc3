/* kf_derivative: the constant-acceleration Kalman filter of the joint-torque paper (eq. 3) per element,
 * on the filters module's linear KF; and its offline run and tuning (see roboest/estimators.h). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/filters.h"

/* ---- the model ------------------------------------------------------------------------------ */

void rb_kfd_model(const rb_kfd_params *par, double dt, double F[9], double Q[9])
{
    double dt2 = dt * dt, dt3 = dt2 * dt, dt4 = dt3 * dt, dt5 = dt4 * dt;
    const double f[9] = {1, dt, dt2 / 2, 0, 1, dt, 0, 0, 1};
    memcpy(F, f, sizeof f);
    if (par->noise == RB_KFD_DIAGONAL) {
        memset(Q, 0, 9 * sizeof *Q);
        Q[0] = par->q_diag[0], Q[4] = par->q_diag[1], Q[8] = par->q_diag[2];
        return;
    }
    double q = par->q;
    const double g[9] = {dt5 / 20, dt4 / 8, dt3 / 6, dt4 / 8, dt3 / 3, dt2 / 2, dt3 / 6, dt2 / 2, dt};
    for (int i = 0; i < 9; i++)
        Q[i] = q * g[i];
}

/* One element: a 3-state, 1-measurement KF that starts at the first finite sample. */
typedef struct kfd_elem {
    rb_filter *f;
    rb_kfd_params par;
    bool started;
    double t_prev, dt; /* time of the last step; the interval F and Q were built for (0: none yet) */
} kfd_elem;

static int elem_init(kfd_elem *e, const rb_kfd_params *par, rb_err *err)
{
    memset(e, 0, sizeof *e);
    e->par = *par;
    double F[9], Q[9], H[3] = {1, 0, 0}, R = par->r;
    double P0[9] = {par->p0[0], 0, 0, 0, par->p0[1], 0, 0, 0, par->p0[2]};
    rb_kfd_model(par, 0.0, F, Q);
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = 3, o.m = 1, o.nu = 0;
    o.P0 = P0, o.Q = Q, o.R = &R, o.F = F, o.H = H;
    return rb_kf_create(&o, &e->f, err);
}

static void elem_free(kfd_elem *e)
{
    rb_filter_free(e->f);
    e->f = NULL;
}

/* What one step of an element gives: the state and the filter's diagnostics of that step. */
typedef struct kfd_result {
    double x[3];       /* x, x_dot, x_ddot; NaN before the first finite sample */
    double innovation; /* z - predicted x (the update's innovation); NaN where nothing was predicted (up to
                          and including the first finite sample) and where z is NaN (skipped) */
    double nis;        /* innovation^2 / S of that update; NaN likewise */
    double var[3];     /* diagonal of P after the step; NaN before the first finite sample */
} kfd_result;

/* Step to time t with measurement z (NaN: predict only). Allocates nothing. */
static int elem_step(kfd_elem *e, double t, double z, kfd_result *o, rb_err *err)
{
    bool starting = !e->started;
    if (starting) {
        if (!isfinite(z)) {
            o->x[0] = o->x[1] = o->x[2] = o->innovation = o->nis = NAN;
            o->var[0] = o->var[1] = o->var[2] = NAN;
            return RB_OK;
        }
        double x0[3] = {z, 0, 0}, P0[9] = {e->par.p0[0], 0, 0, 0, e->par.p0[1], 0, 0, 0, e->par.p0[2]};
        int rc = rb_filter_set_state(e->f, x0, P0, err);
        if (rc == RB_OK)
            rc = rb_filter_update(e->f, &z, err);
        if (rc)
            return rc;
        e->started = true;
    } else {
        double dt = t - e->t_prev;
        if (!(dt > 0) || !isfinite(dt))
            return rb_err_set(err, RB_EINPUT, "time %.17g s does not follow %.17g s", t, e->t_prev);
        if (dt != e->dt) {
            rb_filter_mats m = rb_filter_get_mats(e->f);
            double F[9], Q[9];
            rb_kfd_model(&e->par, dt, F, Q);
            for (size_t i = 0; i < 3; i++)
                for (size_t j = 0; j < 3; j++) {
                    *rb_mat_at(&m.F, i, j) = F[i * 3 + j];
                    *rb_mat_at(&m.Q, i, j) = Q[i * 3 + j];
                }
            e->dt = dt;
        }
        int rc = rb_filter_predict(e->f, NULL, dt, err);
        if (rc == RB_OK)
            rc = rb_filter_update(e->f, &z, err);
        if (rc)
            return rc;
    }
    e->t_prev = t;
    rb_filter_diag d;
    rb_filter_get_diag(e->f, &d);
    memcpy(o->x, rb_filter_x(e->f), sizeof o->x);
    memcpy(o->var, d.P_diag, sizeof o->var);
    /* the start's update is against s = [z, 0, 0] itself: an innovation of 0 that predicts nothing */
    o->innovation = starting ? NAN : d.innovation[0];
    o->nis = starting ? NAN : d.nis;
    return RB_OK;
}

static int check_params(const rb_kfd_params *par, rb_err *err)
{
    bool ok = par && isfinite(par->r) && par->r > 0;
    for (int i = 0; ok && i < 3; i++)
        ok = isfinite(par->p0[i]) && par->p0[i] > 0 && isfinite(par->q_diag[i]) && par->q_diag[i] >= 0;
    ok = ok && (par->noise == RB_KFD_DIAGONAL || (isfinite(par->q) && par->q >= 0));
    return ok ? RB_OK
              : rb_err_set(err, RB_EINVAL, "kf_derivative: needs r > 0, p0 > 0, q >= 0 and q_diag >= 0, all finite");
}

int rb_kfd_run(const rb_kfd_params *par, const double *t, const double *z, size_t T, double *x, double *x_dot,
               double *x_ddot, double *pred, rb_err *err)
{
    if (!t || !z)
        return rb_err_set(err, RB_EINVAL, "kf_derivative: NULL time or signal");
    int rc = check_params(par, err);
    if (rc)
        return rc;
    kfd_elem e;
    rc = elem_init(&e, par, err);
    for (size_t k = 0; rc == RB_OK && k < T; k++) {
        kfd_result o;
        rc = elem_step(&e, t[k], z[k], &o, err);
        if (rc) {
            rb_err_prefix(err, rc, "kf_derivative: sample %zu: ", k);
            break;
        }
        if (x)
            x[k] = o.x[0];
        if (x_dot)
            x_dot[k] = o.x[1];
        if (x_ddot)
            x_ddot[k] = o.x[2];
        if (pred)
            pred[k] = o.innovation;
    }
    elem_free(&e);
    return rc;
}

/* ---- tuning ------------------------------------------------------------------------------------- */

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

/* The criterion at log10 q (see roboest/estimators.h). */
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

/* q rounded to 3 significant digits, as the nearest double to the 3-digit decimal (so it prints short):
 * the digits times or over an exact power of ten (10^k is exact for |k| <= 22). */
static double round3(double q)
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
    double r = o->r > 0 ? o->r : round3(rb_kfd_estimate_r(z, T));
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
    rc = check_params(&c.par, err);
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
    double q = round3(pow(10.0, best_log)), J;
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

/* ---- the stage ------------------------------------------------------------------------------------ */

typedef struct kfd_stage {
    size_t n;
    kfd_elem *e;
    char **units;           /* 2n owned: n velocity units, then n acceleration units */
    char **var_names;       /* 3n owned: "<name>/x", "<name>/x_dot", "<name>/x_ddot" per element */
    char **var_units;       /* 3n owned: "<unit>^2", "<unit>^2/s^2", "<unit>^2/s^4" per element */
    const char **nis_units; /* n, each the static "1" (dimensionless) */
    const char *const *names;
} kfd_stage;

static void kfd_destroy(void *state)
{
    kfd_stage *s = state;
    if (!s)
        return;
    for (size_t i = 0; s->e && i < s->n; i++)
        elem_free(&s->e[i]);
    for (size_t i = 0; s->units && i < 2 * s->n; i++)
        rb_free(s->units[i]);
    for (size_t i = 0; s->var_names && i < 3 * s->n; i++)
        rb_free(s->var_names[i]);
    for (size_t i = 0; s->var_units && i < 3 * s->n; i++)
        rb_free(s->var_units[i]);
    rb_free(s->units);
    rb_free(s->var_names);
    rb_free(s->var_units);
    rb_free(s->nis_units);
    rb_free(s->e);
    rb_free(s);
}

/* value i of a 1-or-n array parameter */
static double per_element(const rb_param_value *v, size_t i) { return v->numbers[v->count == 1 ? 0 : i]; }

/* The square of a unit with a suffix: "rad" -> "rad^2<suffix>", a compound unit "N.m" -> "(N.m)^2<suffix>",
 * unknown ("") stays unknown. NULL when out of memory. */
static char *unit_squared(const char *u, const char *suffix)
{
    if (!u[0])
        return rb_strdup("");
    bool simple = true;
    for (const char *c = u; *c && simple; c++)
        simple = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_';
    return rb_asprintf(simple ? "%s^2%s" : "(%s)^2%s", u, suffix);
}

/* The output ports' names and units (create owns them; s->n filters exist). RB_ENOMEM. */
static int make_port_strings(kfd_stage *s, const rb_port *in, rb_err *err)
{
    static const char *const comp[3] = {"x", "x_dot", "x_ddot"}, *const var_suffix[3] = {"", "/s^2", "/s^4"};
    size_t n = s->n;
    s->units = rb_calloc(n ? 2 * n : 1, sizeof *s->units);
    s->var_names = rb_calloc(n ? 3 * n : 1, sizeof *s->var_names);
    s->var_units = rb_calloc(n ? 3 * n : 1, sizeof *s->var_units);
    s->nis_units = rb_calloc(n ? n : 1, sizeof *s->nis_units);
    if (!s->units || !s->var_names || !s->var_units || !s->nis_units)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t i = 0; i < 2 * n; i++) {
        const char *u = in->units ? in->units[i % n] : "";
        s->units[i] = u[0] ? rb_asprintf("%s/%s", u, i < n ? "s" : "s^2") : rb_strdup("");
        if (!s->units[i])
            return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        s->nis_units[i] = "1";
        const char *u = in->units ? in->units[i] : "";
        for (size_t c = 0; c < 3; c++) {
            char **name = &s->var_names[3 * i + c], **unit = &s->var_units[3 * i + c];
            *name = in->names ? rb_asprintf("%s/%s", in->names[i], comp[c]) : rb_asprintf("%zu/%s", i, comp[c]);
            *unit = unit_squared(u, var_suffix[c]);
            if (!*name || !*unit)
                return rb_err_set(err, RB_ENOMEM, "out of memory");
        }
    }
    return RB_OK;
}

static int kfd_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    const rb_params *p = setup->params;
    size_t n = setup->in[0].width;
    const char *model = rb_params_string(p, "process_noise");
    const rb_param_value *q = rb_params_get(p, "q"), *r = rb_params_get(p, "r"), *qd = rb_params_get(p, "q_diag"),
                         *p0 = rb_params_get(p, "p0");
    bool diagonal = model && strcmp(model, "diagonal") == 0;
    if (diagonal && !qd->given)
        return rb_err_set(err, RB_ECONFIG, "stage %s: process_noise \"diagonal\" needs q_diag", setup->id);
    if (diagonal && q->given)
        return rb_err_set(err, RB_ECONFIG, "stage %s: q is the jerk model's; process_noise \"diagonal\" uses q_diag",
                          setup->id);
    if (!diagonal && qd->given)
        return rb_err_set(err, RB_ECONFIG, "stage %s: q_diag needs process_noise \"diagonal\"", setup->id);
    if (q->count != 1 && q->count != n)
        return rb_err_set(err, RB_ECONFIG, "stage %s: q has %zu values for %zu elements (give 1 or %zu)", setup->id,
                          q->count, n, n);
    if (r->count != 1 && r->count != n)
        return rb_err_set(err, RB_ECONFIG, "stage %s: r has %zu values for %zu elements (give 1 or %zu)", setup->id,
                          r->count, n, n);
    if (n > SIZE_MAX / 3)
        return rb_err_set(err, RB_ENOMEM, "stage %s: too many elements", setup->id);
    kfd_stage *s = rb_calloc(1, sizeof *s);
    if (!s)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    s->e = rb_calloc(n ? n : 1, sizeof *s->e);
    if (!s->e) {
        kfd_destroy(s);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    /* s->n counts the filters made so far: destroy frees those (and the strings, NULL until made) */
    for (size_t i = 0; i < n; i++) {
        rb_kfd_params par = {
            .noise = diagonal ? RB_KFD_DIAGONAL : RB_KFD_JERK, .q = per_element(q, i), .r = per_element(r, i)};
        memcpy(par.p0, p0->numbers, sizeof par.p0);
        memcpy(par.q_diag, qd->numbers, sizeof par.q_diag);
        int rc = elem_init(&s->e[i], &par, err);
        if (rc) {
            kfd_destroy(s);
            return rb_err_prefix(err, rc, "stage %s: element %zu: ", setup->id, i);
        }
        s->n++;
    }
    const rb_port *in = &setup->in[0];
    int rc = make_port_strings(s, in, err);
    if (rc) {
        kfd_destroy(s);
        return rc;
    }
    s->names = in->names;
    setup->out[0] = *in;
    setup->out[1] = (rb_port){n, in->names, (const char *const *)s->units};
    setup->out[2] = (rb_port){n, in->names, (const char *const *)s->units + n};
    setup->out[3] = *in;
    setup->out[4] = (rb_port){n, in->names, s->nis_units};
    setup->out[5] = (rb_port){3 * n, (const char *const *)s->var_names, (const char *const *)s->var_units};
    *state = s;
    return RB_OK;
}

static int kfd_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)k;
    kfd_stage *s = state;
    for (size_t i = 0; i < s->n; i++) {
        kfd_result o;
        int rc = elem_step(&s->e[i], t, in[0][i], &o, err);
        if (rc) {
            if (s->names)
                return rb_err_prefix(err, rc, "element %s: ", s->names[i]);
            return rb_err_prefix(err, rc, "element %zu: ", i);
        }
        out[0][i] = o.x[0];
        out[1][i] = o.x[1];
        out[2][i] = o.x[2];
        out[3][i] = o.innovation;
        out[4][i] = o.nis;
        memcpy(out[5] + 3 * i, o.var, sizeof o.var);
    }
    return RB_OK;
}

static const char *const kfd_in[] = {"x"};
static const char *const kfd_out[] = {"x", "x_dot", "x_ddot", "innovation", "nis", "var"};
static const char *const kfd_models[] = {"jerk", "diagonal", NULL};
static const double kfd_def_q[] = {RB_KFD_DEFAULT_Q};
static const double kfd_def_r[] = {RB_KFD_DEFAULT_R};
static const double kfd_def_qd[] = {0, 0, 0};
static const double kfd_def_p0[] = {RB_KFD_DEFAULT_P0_X, RB_KFD_DEFAULT_P0_V, RB_KFD_DEFAULT_P0_A};
static const rb_param_spec kfd_params[] = {
    {.name = "process_noise",
     .kind = RB_PARAM_STRING,
     .def_string = "jerk",
     .choices = kfd_models,
     .doc = "\"jerk\": white jerk of spectral density q (continuous-time Q); \"diagonal\": Q = diag(q_diag) per step"},
    {.name = "q",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = kfd_def_q,
     .def_count = 1,
     .min_count = 1,
     .has_min = true,
     .min = 0,
     .doc = "jerk spectral density, unit^2/s^5: one value for every element or one per element"},
    {.name = "q_diag",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = kfd_def_qd,
     .def_count = 3,
     .min_count = 3,
     .max_count = 3,
     .has_min = true,
     .min = 0,
     .doc = "per-step process variances of x, x_dot, x_ddot (unit^2, unit^2/s^2, unit^2/s^4); required with \"diagonal\", "
            "rejected with \"jerk\""},
    {.name = "r",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = kfd_def_r,
     .def_count = 1,
     .min_count = 1,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "measurement variance, unit^2: one value for every element or one per element"},
    {.name = "p0",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = kfd_def_p0,
     .def_count = 3,
     .min_count = 3,
     .max_count = 3,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "initial variances of x, x_dot, x_ddot (unit^2, unit^2/s^2, unit^2/s^4); x starts at the first sample"},
};

const rb_stage_type rb_stage_kf_derivative = {
    .name = "kf_derivative",
    .summary = "constant-acceleration Kalman filter per element: filtered x, x_dot, x_ddot (joint-torque paper eq. 3); "
               "diagnostics innovation, nis, var (P diagonal)",
    .inputs = kfd_in,
    .n_inputs = 1,
    .outputs = kfd_out,
    .n_outputs = 6,
    .params = kfd_params,
    .n_params = sizeof kfd_params / sizeof kfd_params[0],
    .create = kfd_create,
    .step = kfd_step,
    .finish = NULL,
    .destroy = kfd_destroy,
};

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
