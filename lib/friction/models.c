/* Friction model descriptions: parameter tables, building from a config array, validation, presets,
 * static curves, slopes and drift. See roboest/friction.h. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "friction_internal.h"

#define P(field) offsetof(rb_friction_model, field)

/* def: the default of an optional parameter (only trailing ones are optional). */
typedef struct param_def {
    const char *name;
    size_t offset;
    double def;
} param_def;

typedef struct kind_def {
    const char *name;
    size_t n, required;
    unsigned force_mask;
    param_def p[RB_FRICTION_MAX_PARAMS];
} kind_def;

static const kind_def KINDS[] = {
    [RB_FRICTION_NONE] = {"none", 0, 0, 0, {{NULL, 0, 0}}},
    [RB_FRICTION_CV] =
        {"coulomb_viscous", 3, 2, 0x3u, {{"F_c", P(cv.F_c), 0}, {"F_v", P(cv.F_v), 0}, {"v_eps", P(cv.v_eps), 0}}},
    [RB_FRICTION_SCV] = {"scv",
                         5,
                         4,
                         0x7u,
                         {{"F_c", P(scv.F_c), 0},
                          {"F_s", P(scv.F_s), 0},
                          {"F_v", P(scv.F_v), 0},
                          {"v_s", P(scv.v_s), 0},
                          {"v_eps", P(scv.v_eps), 0}}},
    [RB_FRICTION_TANH6] = {"tanh6",
                           6,
                           6,
                           0x29u, /* g1, g4, g6 */
                           {{"g1", P(tanh6.g1), 0},
                            {"g2", P(tanh6.g2), 0},
                            {"g3", P(tanh6.g3), 0},
                            {"g4", P(tanh6.g4), 0},
                            {"g5", P(tanh6.g5), 0},
                            {"g6", P(tanh6.g6), 0}}},
    [RB_FRICTION_LUGRE] = {"lugre",
                           6,
                           6,
                           0x7u,
                           {{"F_c", P(lugre.F_c), 0},
                            {"F_s", P(lugre.F_s), 0},
                            {"F_v", P(lugre.F_v), 0},
                            {"v_s", P(lugre.v_s), 0},
                            {"sigma0", P(lugre.sigma0), 0},
                            {"sigma1", P(lugre.sigma1), 0}}},
    [RB_FRICTION_STICTION] = {"stiction",
                              5,
                              4,
                              0x7u,
                              {{"F_c", P(stiction.F_c), 0},
                               {"F_s", P(stiction.F_s), 0},
                               {"F_v", P(stiction.F_v), 0},
                               {"v_stick", P(stiction.v_stick), 0},
                               {"v_s", P(stiction.v_s), 0}}},
};
#define NKINDS (sizeof KINDS / sizeof KINDS[0])
#define KNOWN_MODELS "none, coulomb_viscous, scv, tanh6, lugre, stiction"

static const kind_def *kind_of(rb_friction_kind kind) { return (unsigned)kind < NKINDS ? &KINDS[kind] : NULL; }

static double *param(rb_friction_model *m, size_t i) { return (double *)((char *)m + KINDS[m->kind].p[i].offset); }

static double param_c(const rb_friction_model *m, size_t i)
{
    return *(const double *)((const char *)m + KINDS[m->kind].p[i].offset);
}

const char *rb_friction_kind_name(rb_friction_kind kind)
{
    const kind_def *k = kind_of(kind);
    return k ? k->name : "?";
}

size_t rb_friction_param_count(rb_friction_kind kind, size_t *required)
{
    const kind_def *k = kind_of(kind);
    if (required)
        *required = k ? k->required : 0;
    return k ? k->n : 0;
}

const char *rb_friction_param_name(rb_friction_kind kind, size_t i)
{
    const kind_def *k = kind_of(kind);
    return k && i < k->n ? k->p[i].name : NULL;
}

/* ---- validation -------------------------------------------------------------------------------- */

/* The parameter rules of the header, on the parameters as they are (scale only names the drift case). */
static int check_params(const rb_friction_model *m, const char *ctx, rb_err *err)
{
    const kind_def *k = &KINDS[m->kind];
    const char *kn = k->name;
    for (size_t i = 0; i < k->n; i++)
        if (!isfinite(param_c(m, i)))
            return rb_err_set(err, RB_ECONFIG, "friction %s: %s%s (%g) must be finite", kn, ctx, k->p[i].name,
                              param_c(m, i));
#define NONNEG(x, name)                                                                                                \
    if (!((x) >= 0))                                                                                                   \
    return rb_err_set(err, RB_ECONFIG, "friction %s: %s" name " (%g) must be >= 0", kn, ctx, (x))
#define POS(x, name)                                                                                                   \
    if (!((x) > 0))                                                                                                    \
    return rb_err_set(err, RB_ECONFIG, "friction %s: %s" name " (%g) must be > 0", kn, ctx, (x))
#define FS_FC(s)                                                                                                       \
    if (!((s).F_s >= (s).F_c))                                                                                         \
    return rb_err_set(err, RB_ECONFIG, "friction %s: %sF_s (%g) must be >= F_c (%g)", kn, ctx, (s).F_s, (s).F_c)
    switch (m->kind) {
    case RB_FRICTION_NONE: break;
    case RB_FRICTION_CV:
        NONNEG(m->cv.F_c, "F_c");
        NONNEG(m->cv.F_v, "F_v");
        NONNEG(m->cv.v_eps, "v_eps");
        break;
    case RB_FRICTION_SCV:
        NONNEG(m->scv.F_c, "F_c");
        FS_FC(m->scv);
        NONNEG(m->scv.F_v, "F_v");
        POS(m->scv.v_s, "v_s");
        NONNEG(m->scv.v_eps, "v_eps");
        break;
    case RB_FRICTION_TANH6: {
        for (size_t i = 0; i < 6; i++)
            if (!(param_c(m, i) >= 0))
                return rb_err_set(err, RB_ECONFIG, "friction %s: %s%s (%g) must be >= 0", kn, ctx, k->p[i].name,
                                  param_c(m, i));
        if (!(m->tanh6.g2 >= m->tanh6.g3))
            return rb_err_set(err, RB_ECONFIG,
                              "friction %s: %sg2 (%g) must be >= g3 (%g) (else the Stribeck term aids the motion)", kn,
                              ctx, m->tanh6.g2, m->tanh6.g3);
        break;
    }
    case RB_FRICTION_LUGRE:
        POS(m->lugre.F_c, "F_c");
        FS_FC(m->lugre);
        NONNEG(m->lugre.F_v, "F_v");
        POS(m->lugre.v_s, "v_s");
        POS(m->lugre.sigma0, "sigma0");
        NONNEG(m->lugre.sigma1, "sigma1");
        break;
    case RB_FRICTION_STICTION:
        NONNEG(m->stiction.F_c, "F_c");
        FS_FC(m->stiction);
        NONNEG(m->stiction.F_v, "F_v");
        POS(m->stiction.v_stick, "v_stick");
        NONNEG(m->stiction.v_s, "v_s");
        break;
    }
#undef NONNEG
#undef POS
#undef FS_FC
    return RB_OK;
}

static unsigned drift_mask(const rb_friction_model *m)
{
    return m->drift.mask ? m->drift.mask : KINDS[m->kind].force_mask;
}

static bool drift_is_zero(const rb_friction_drift *d) { return d->s0 == 0 && d->s1 == 0 && d->amplitude == 0; }

static void scale_params(rb_friction_model *m, unsigned mask, double s)
{
    for (size_t i = 0; i < KINDS[m->kind].n; i++)
        if (mask & (1u << i))
            *param(m, i) *= s;
}

int rb_friction_validate(const rb_friction_model *m, rb_err *err)
{
    if (!m)
        return rb_err_set(err, RB_EINVAL, "friction: model is NULL");
    const kind_def *k = kind_of(m->kind);
    if (!k)
        return rb_err_set(err, RB_ECONFIG, "friction: unknown model kind %d", (int)m->kind);
    int rc = check_params(m, "", err);
    if (rc)
        return rc;
    const rb_friction_drift *d = &m->drift;
    const char *kn = k->name;
    if (d->mask >> k->n)
        return rb_err_set(err, RB_ECONFIG, "friction %s: drift: mask 0x%x names parameters beyond the %zu of %s", kn,
                          d->mask, k->n, kn);
    if (drift_is_zero(d))
        return RB_OK;
    bool ramp = !(d->s0 == 0 && d->s1 == 0);
    if (ramp && !(d->s0 > 0 && isfinite(d->s0)))
        return rb_err_set(err, RB_ECONFIG, "friction %s: drift: s0 (%g) must be finite and > 0", kn, d->s0);
    if (ramp && !(d->s1 > 0 && isfinite(d->s1)))
        return rb_err_set(err, RB_ECONFIG, "friction %s: drift: s1 (%g) must be finite and > 0", kn, d->s1);
    if (!isfinite(d->t0) || !isfinite(d->t1) || !(d->t1 >= d->t0))
        return rb_err_set(err, RB_ECONFIG, "friction %s: drift: t1 (%g) must be >= t0 (%g), both finite", kn, d->t1,
                          d->t0);
    if (!(d->amplitude >= 0 && d->amplitude < 1))
        return rb_err_set(err, RB_ECONFIG, "friction %s: drift: amplitude (%g) must be in [0, 1)", kn, d->amplitude);
    if (d->amplitude > 0 && !(d->period > 0 && isfinite(d->period)))
        return rb_err_set(err, RB_ECONFIG, "friction %s: drift: period (%g) must be finite and > 0", kn, d->period);
    if (!isfinite(d->phase))
        return rb_err_set(err, RB_ECONFIG, "friction %s: drift: phase (%g) must be finite", kn, d->phase);
    double r_lo = ramp ? fmin(d->s0, d->s1) : 1, r_hi = ramp ? fmax(d->s0, d->s1) : 1;
    double ext[2] = {r_lo * (1 - d->amplitude), r_hi * (1 + d->amplitude)};
    for (int e = 0; e < 2; e++) {
        rb_friction_model x = *m;
        scale_params(&x, drift_mask(m), ext[e]);
        char ctx[64];
        snprintf(ctx, sizeof ctx, "at drift scale %g, ", ext[e]);
        if ((rc = check_params(&x, ctx, err)))
            return rc;
    }
    return RB_OK;
}

int rb_friction_build(const char *name, const double *params, size_t n, rb_friction_model *out, rb_err *err)
{
    if (!name || !out || (n && !params))
        return rb_err_set(err, RB_EINVAL, "friction: NULL argument");
    const kind_def *k = NULL;
    for (size_t i = 0; i < NKINDS; i++)
        if (!strcmp(name, KINDS[i].name))
            k = &KINDS[i];
    if (!k)
        return rb_err_set(err, RB_ECONFIG, "friction: unknown model '%s' (known: " KNOWN_MODELS ")", name);
    if (n < k->required || n > k->n) {
        char list[160] = "";
        size_t used = 0;
        for (size_t i = 0; i < k->n && used < sizeof list; i++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s%s", i == k->required ? "[" : "",
                                     i ? ", " : "", k->p[i].name);
        if (k->n > k->required && used < sizeof list)
            snprintf(list + used, sizeof list - used, "]");
        if (k->n == k->required)
            return rb_err_set(err, RB_ECONFIG, "friction %s: %zu parameters given, expected %zu (%s)", k->name, n, k->n,
                              list);
        return rb_err_set(err, RB_ECONFIG, "friction %s: %zu parameters given, expected %zu to %zu (%s)", k->name, n,
                          k->required, k->n, list);
    }
    rb_friction_model m;
    memset(&m, 0, sizeof m);
    m.kind = (rb_friction_kind)(k - KINDS);
    for (size_t i = 0; i < k->n; i++)
        *param(&m, i) = i < n ? params[i] : k->p[i].def;
    int rc = rb_friction_validate(&m, err);
    if (rc)
        return rc;
    *out = m;
    return RB_OK;
}

/* ---- presets ------------------------------------------------------------------------------------- */

/* Thesis (seed 003) Table 4.1: g1 and g4 per joint; g2 100, g3 10, g5 100, g6 0.9 for every joint. */
static const double SURALP_G1[6] = {0.7, 0.6, 0.5, 0.4, 0.2, 0.05};
static const double SURALP_G4[6] = {0.6, 0.5, 0.4, 0.3, 0.02, 0.01};

int rb_friction_preset(const char *name, rb_friction_model *out, rb_err *err)
{
    if (!name || !out)
        return rb_err_set(err, RB_EINVAL, "friction: NULL argument");
    rb_friction_model m;
    memset(&m, 0, sizeof m);
    if (!strncmp(name, "suralp_leg_", 11) && name[11] >= '1' && name[11] <= '6' && !name[12]) {
        int j = name[11] - '1';
        m.kind = RB_FRICTION_TANH6;
        m.tanh6 = (rb_friction_tanh6){SURALP_G1[j], 100, 10, SURALP_G4[j], 100, 0.9};
    } else if (!strcmp(name, "ergocub_r_knee")) {
        m.kind = RB_FRICTION_SCV;
        m.scv = (rb_friction_scv){0.306, 0.601, 0.673, 0.0094, 0};
    } else {
        return rb_err_set(err, RB_ENOTFOUND,
                          "friction: unknown preset '%s' (known: suralp_leg_1 .. suralp_leg_6, ergocub_r_knee)", name);
    }
    *out = m;
    return RB_OK;
}

/* ---- evaluation ---------------------------------------------------------------------------------- */

double rb_friction_sign(double v, double v_eps)
{
    if (v_eps > 0)
        return tanh(v / v_eps);
    return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0;
}

/* d S / dv; 0 for the exact sign. */
static double sign_slope(double v, double v_eps)
{
    if (!(v_eps > 0))
        return 0;
    double t = tanh(v / v_eps);
    return (1 - t * t) / v_eps;
}

static double sech2(double x)
{
    double t = tanh(x);
    return 1 - t * t;
}

double rb_fric_stribeck(double F_c, double F_s, double v_s, double v)
{
    if (!(v_s > 0))
        return F_c;
    double r = v / v_s;
    return F_c + (F_s - F_c) * exp(-r * r);
}

/* d g / dv of rb_fric_stribeck. */
static double stribeck_slope(double F_c, double F_s, double v_s, double v)
{
    if (!(v_s > 0))
        return 0;
    double r = v / v_s;
    return (F_s - F_c) * exp(-r * r) * (-2 * r / v_s);
}

double rb_friction_eval(const rb_friction_model *m, double v)
{
    switch (m->kind) {
    case RB_FRICTION_NONE: return 0;
    case RB_FRICTION_CV: return m->cv.F_c * rb_friction_sign(v, m->cv.v_eps) + m->cv.F_v * v;
    case RB_FRICTION_SCV: {
        const rb_friction_scv *p = &m->scv;
        return rb_fric_stribeck(p->F_c, p->F_s, p->v_s, v) * rb_friction_sign(v, p->v_eps) + p->F_v * v;
    }
    case RB_FRICTION_TANH6: {
        const rb_friction_tanh6 *g = &m->tanh6;
        return g->g1 * (tanh(g->g2 * v) - tanh(g->g3 * v)) + g->g4 * tanh(g->g5 * v) + g->g6 * v;
    }
    case RB_FRICTION_LUGRE: {
        const rb_friction_lugre *p = &m->lugre;
        return rb_fric_stribeck(p->F_c, p->F_s, p->v_s, v) * rb_friction_sign(v, 0) + p->F_v * v;
    }
    case RB_FRICTION_STICTION: {
        const rb_friction_stiction *p = &m->stiction;
        return rb_fric_stribeck(p->F_c, p->F_s, p->v_s, v) * rb_friction_sign(v, 0) + p->F_v * v;
    }
    }
    return NAN;
}

double rb_friction_slope(const rb_friction_model *m, double v)
{
    switch (m->kind) {
    case RB_FRICTION_NONE: return 0;
    case RB_FRICTION_CV: return m->cv.F_c * sign_slope(v, m->cv.v_eps) + m->cv.F_v;
    case RB_FRICTION_SCV: {
        const rb_friction_scv *p = &m->scv;
        return stribeck_slope(p->F_c, p->F_s, p->v_s, v) * rb_friction_sign(v, p->v_eps) +
               rb_fric_stribeck(p->F_c, p->F_s, p->v_s, v) * sign_slope(v, p->v_eps) + p->F_v;
    }
    case RB_FRICTION_TANH6: {
        const rb_friction_tanh6 *g = &m->tanh6;
        return g->g1 * (g->g2 * sech2(g->g2 * v) - g->g3 * sech2(g->g3 * v)) + g->g4 * g->g5 * sech2(g->g5 * v) + g->g6;
    }
    case RB_FRICTION_LUGRE: {
        const rb_friction_lugre *p = &m->lugre;
        return stribeck_slope(p->F_c, p->F_s, p->v_s, v) * rb_friction_sign(v, 0) + p->F_v;
    }
    case RB_FRICTION_STICTION: {
        const rb_friction_stiction *p = &m->stiction;
        return stribeck_slope(p->F_c, p->F_s, p->v_s, v) * rb_friction_sign(v, 0) + p->F_v;
    }
    }
    return NAN;
}

/* ---- drift --------------------------------------------------------------------------------------- */

double rb_friction_drift_scale(const rb_friction_drift *d, double t)
{
    double r = 1;
    if (!(d->s0 == 0 && d->s1 == 0)) {
        if (t <= d->t0)
            r = t < d->t1 ? d->s0 : d->s1; /* t0 = t1: a step at t0 */
        else if (t >= d->t1)
            r = d->s1;
        else
            r = d->s0 + (d->s1 - d->s0) * (t - d->t0) / (d->t1 - d->t0);
    }
    if (d->amplitude != 0)
        r *= 1 + d->amplitude * sin(2 * M_PI * t / d->period + d->phase);
    return r;
}

void rb_friction_at_time(const rb_friction_model *m, double t, rb_friction_model *out)
{
    if (out != m)
        *out = *m;
    if ((unsigned)out->kind >= NKINDS || drift_is_zero(&out->drift)) {
        memset(&out->drift, 0, sizeof out->drift);
        return;
    }
    double s = rb_friction_drift_scale(&out->drift, t);
    scale_params(out, drift_mask(out), s);
    memset(&out->drift, 0, sizeof out->drift);
}
