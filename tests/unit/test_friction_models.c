/* Static friction models: values at hand-computed points, the thesis's Table 4.1 preset against an
 * independent transcription, odd symmetry and dissipation, the smooth-sign limit, slopes against finite
 * differences, building from a name + array, validation messages, drift schedules. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/friction.h"

static rb_friction_model cv(double F_c, double F_v, double v_eps)
{
    rb_friction_model m = {.kind = RB_FRICTION_CV, .cv = {F_c, F_v, v_eps}};
    return m;
}

static rb_friction_model scv(double F_c, double F_s, double F_v, double v_s, double v_eps)
{
    rb_friction_model m = {.kind = RB_FRICTION_SCV, .scv = {F_c, F_s, F_v, v_s, v_eps}};
    return m;
}

#define CLOSE(a, b, tol) cr_assert(fabs((a) - (b)) <= (tol), "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

/* ---- values -------------------------------------------------------------------------------------- */

Test(friction_models, coulomb_viscous_hand_values)
{
    rb_friction_model m = cv(0.3, 0.5, 0);
    CLOSE(rb_friction_eval(&m, 0.2), 0.4, 1e-15);
    CLOSE(rb_friction_eval(&m, -0.2), -0.4, 1e-15);
    cr_assert_eq(rb_friction_eval(&m, 0.0), 0.0); /* sgn(0) = 0 */
    CLOSE(rb_friction_eval(&m, 1e-300), 0.3, 1e-15);
    m.cv.v_eps = 0.1; /* 0.3 tanh(1) + 0.5 * 0.1, from Python */
    CLOSE(rb_friction_eval(&m, 0.1), 0.27847824678672944, 1e-15);
    cr_assert_eq(rb_friction_eval(&m, 0.0), 0.0);
}

Test(friction_models, scv_hand_values_ergocub_r_knee)
{
    rb_friction_model m;
    rb_err err;
    cr_assert_eq(rb_friction_preset("ergocub_r_knee", &m, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(m.kind, RB_FRICTION_SCV);
    /* (F_c + (F_s - F_c) exp(-(v/v_s)^2)) sgn(v) + F_v v with 0.306, 0.601, 0.673, 0.0094, from Python */
    const double v[] = {0.0094, 0.02, -0.005, 1.0};
    const double want[] = {0.42085063514557547, 0.3226500611679348, -0.5316681302990444, 0.9790000000000001};
    for (int i = 0; i < 4; i++)
        CLOSE(rb_friction_eval(&m, v[i]), want[i], 1e-14);
    /* at v = v_s exactly: F_c + (F_s - F_c) / e + F_v v_s */
    CLOSE(rb_friction_eval(&m, 0.0094), 0.306 + 0.295 / M_E + 0.673 * 0.0094, 1e-15);
    /* just off zero the static level F_s shows */
    CLOSE(rb_friction_eval(&m, 1e-9), 0.601, 1e-9);
}

/* Table 4.1 of the thesis (seed 003), typed here again, evaluated with eq. 4.37 written out in the test. */
static const double T41[6][6] = {
    /* g1    g2   g3  g4    g5   g6 */
    {0.7, 100, 10, 0.6, 100, 0.9}, {0.6, 100, 10, 0.5, 100, 0.9},  {0.5, 100, 10, 0.4, 100, 0.9},
    {0.4, 100, 10, 0.3, 100, 0.9}, {0.2, 100, 10, 0.02, 100, 0.9}, {0.05, 100, 10, 0.01, 100, 0.9},
};

Test(friction_models, tanh6_table_4_1_preset)
{
    const double vs[] = {-1.0, -0.05, -0.01, 0.0, 0.003, 0.02, 0.1, 0.5};
    for (int j = 0; j < 6; j++) {
        char name[32];
        snprintf(name, sizeof name, "suralp_leg_%d", j + 1);
        rb_friction_model m;
        rb_err err;
        cr_assert_eq(rb_friction_preset(name, &m, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(m.kind, RB_FRICTION_TANH6);
        const double *g = T41[j];
        for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
            double v = vs[i];
            double want = g[0] * (tanh(g[1] * v) - tanh(g[2] * v)) + g[3] * tanh(g[4] * v) + g[5] * v;
            CLOSE(rb_friction_eval(&m, v), want, 1e-15);
        }
    }
    /* three points from Python, guarding the transcription itself */
    rb_friction_model m;
    cr_assert_eq(rb_friction_preset("suralp_leg_1", &m, NULL), RB_OK);
    CLOSE(rb_friction_eval(&m, 0.01), 0.9293048065050252, 1e-15);
    cr_assert_eq(rb_friction_preset("suralp_leg_6", &m, NULL), RB_OK);
    CLOSE(rb_friction_eval(&m, -0.05), -0.08188869439275523, 1e-15);
    cr_assert_eq(rb_friction_preset("suralp_leg_4", &m, NULL), RB_OK);
    CLOSE(rb_friction_eval(&m, 0.2), 0.49438896796967324, 1e-15);
    /* static friction about g1 + g4 (thesis): the peak of joint 1 lies between g4 and g1 + g4 */
    cr_assert_eq(rb_friction_preset("suralp_leg_1", &m, NULL), RB_OK);
    double peak = 0;
    for (double v = 1e-4; v < 0.2; v += 1e-4)
        peak = fmax(peak, rb_friction_eval(&m, v) - 0.9 * v);
    cr_assert(peak > 0.6 && peak < 1.3, "peak %g", peak);
}

Test(friction_models, unknown_preset)
{
    rb_friction_model m;
    rb_err err;
    cr_assert_eq(rb_friction_preset("suralp_leg_7", &m, &err), RB_ENOTFOUND);
    cr_assert(strstr(err.msg, "suralp_leg_7") && strstr(err.msg, "ergocub_r_knee"), "%s", err.msg);
}

Test(friction_models, lugre_and_stiction_static_curves)
{
    rb_friction_model l = {.kind = RB_FRICTION_LUGRE, .lugre = {0.3, 0.5, 0.4, 0.02, 1e4, 5}};
    CLOSE(rb_friction_eval(&l, 0.02), 0.3 + 0.2 / M_E + 0.008, 1e-15);
    CLOSE(rb_friction_eval(&l, -0.04), -(0.3 + 0.2 * exp(-4.0) + 0.016), 1e-15);
    rb_friction_model s = {.kind = RB_FRICTION_STICTION, .stiction = {0.3, 0.5, 0.4, 1e-3, 0}};
    CLOSE(rb_friction_eval(&s, 0.1), 0.34, 1e-15);
    s.stiction.v_s = 0.02;
    CLOSE(rb_friction_eval(&s, 0.02), 0.3 + 0.2 / M_E + 0.008, 1e-15);
    rb_friction_model none = {.kind = RB_FRICTION_NONE};
    cr_assert_eq(rb_friction_eval(&none, 3.0), 0.0);
    rb_friction_model bad = {.kind = (rb_friction_kind)42};
    cr_assert(isnan(rb_friction_eval(&bad, 1.0)));
}

/* ---- symmetry, dissipation, smooth sign ----------------------------------------------------------------- */

static rb_friction_model random_model(rb_rng *r, int kind)
{
    double a = 0.05 + rb_rng_uniform(r), b = a * (1 + rb_rng_uniform(r)), c = rb_rng_uniform(r);
    double vs = 1e-3 + 0.05 * rb_rng_uniform(r), eps = rb_rng_uniform(r) < 0.5 ? 0 : vs * rb_rng_uniform(r);
    switch (kind) {
    case 0: return cv(a, c, eps);
    case 1: return scv(a, b, c, vs, eps);
    case 2: {
        double g2 = 10 + 200 * rb_rng_uniform(r);
        rb_friction_model m = {.kind = RB_FRICTION_TANH6,
                               .tanh6 = {b, g2, g2 * rb_rng_uniform(r), a, 200 * rb_rng_uniform(r), c}};
        return m;
    }
    case 3: {
        rb_friction_model m = {.kind = RB_FRICTION_LUGRE, .lugre = {a, b, c, vs, 1e5, 10}};
        return m;
    }
    default: {
        rb_friction_model m = {.kind = RB_FRICTION_STICTION, .stiction = {a, b, c, 1e-3, eps}};
        return m;
    }
    }
}

Test(friction_models, odd_and_dissipative)
{
    rb_rng r;
    rb_rng_seed(&r, 20240611);
    for (int kind = 0; kind < 5; kind++)
        for (int trial = 0; trial < 200; trial++) {
            rb_friction_model m = random_model(&r, kind);
            cr_assert_eq(rb_friction_validate(&m, NULL), RB_OK, "kind %d", kind);
            double v = (rb_rng_uniform(&r) - 0.5) * pow(10, -4 + 4 * rb_rng_uniform(&r));
            double f = rb_friction_eval(&m, v), g = rb_friction_eval(&m, -v);
            cr_assert_eq(f, -g, "kind %d v %g: %.17g vs %.17g", kind, v, f, g);
            cr_assert(f * v >= 0, "kind %d v %g: tau_F %g does not oppose the motion", kind, v, f);
            cr_assert_eq(rb_friction_slope(&m, v), rb_friction_slope(&m, -v), "slope is even");
        }
}

Test(friction_models, smooth_sign_limit)
{
    /* tanh(v / eps) -> sgn(v) with |tanh(v/eps) - sgn(v)| <= 2 exp(-2 |v| / eps) */
    const double vs[] = {-0.3, -1e-3, 2e-5, 0.01, 1.0};
    for (size_t i = 0; i < 5; i++)
        for (double eps = 1e-1; eps > 1e-9; eps /= 10) {
            double v = vs[i], s = rb_friction_sign(v, eps), exact = v > 0 ? 1 : -1;
            cr_assert(fabs(s - exact) <= 2 * exp(-2 * fabs(v) / eps) + 1e-16, "v %g eps %g: %.17g", v, eps, s);
        }
    cr_assert_eq(rb_friction_sign(0.0, 1e-3), 0.0);
    cr_assert_eq(rb_friction_sign(0.0, 0.0), 0.0);
    cr_assert_eq(rb_friction_sign(-2.0, 0.0), -1.0);
    /* the smooth Coulomb + viscous model tends to the exact one away from zero, and is continuous at 0 */
    rb_friction_model exact = cv(0.3, 0.5, 0), smooth = cv(0.3, 0.5, 1e-6);
    CLOSE(rb_friction_eval(&smooth, 1e-4), rb_friction_eval(&exact, 1e-4), 1e-15);
    CLOSE(rb_friction_eval(&smooth, 1e-9), 0.3 * tanh(1e-3) + 0.5e-9, 1e-15);
    /* the slope at 0 of the smooth model is F_c / v_eps + F_v */
    CLOSE(rb_friction_slope(&smooth, 0.0), 0.3 / 1e-6 + 0.5, 1e-6);
}

Test(friction_models, slopes_match_finite_differences)
{
    rb_rng r;
    rb_rng_seed(&r, 7);
    for (int kind = 0; kind < 5; kind++)
        for (int trial = 0; trial < 100; trial++) {
            rb_friction_model m = random_model(&r, kind);
            double v = (rb_rng_uniform(&r) < 0.5 ? -1 : 1) * pow(10, -3 + 3 * rb_rng_uniform(&r));
            double h = 1e-6 * fabs(v);
            double fd = (rb_friction_eval(&m, v + h) - rb_friction_eval(&m, v - h)) / (2 * h);
            double s = rb_friction_slope(&m, v);
            cr_assert(fabs(fd - s) <= 1e-5 * (fabs(s) + 1), "kind %d v %g: slope %.12g, differences %.12g", kind, v, s,
                      fd);
        }
}

/* ---- building and validation -------------------------------------------------------------------- */

Test(friction_models, build_from_name_and_array)
{
    rb_friction_model m;
    rb_err err;
    const double p4[] = {0.306, 0.601, 0.673, 0.0094};
    cr_assert_eq(rb_friction_build("scv", p4, 4, &m, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(m.kind, RB_FRICTION_SCV);
    cr_assert_eq(m.scv.F_s, 0.601);
    cr_assert_eq(m.scv.v_s, 0.0094);
    cr_assert_eq(m.scv.v_eps, 0.0, "optional v_eps defaults to the exact sign");
    cr_assert_eq(m.drift.s0, 0.0);
    const double p6[] = {0.3, 0.5, 0.4, 0.01, 1e5, 20};
    cr_assert_eq(rb_friction_build("lugre", p6, 6, &m, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(m.lugre.sigma0, 1e5);
    cr_assert_eq(m.lugre.sigma1, 20);
    cr_assert_eq(rb_friction_build("none", NULL, 0, &m, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(m.kind, RB_FRICTION_NONE);
    const double p3[] = {0.3, 0.2, 0.001};
    cr_assert_eq(rb_friction_build("coulomb_viscous", p3, 3, &m, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(m.cv.v_eps, 0.001);

    /* introspection agrees with the table */
    size_t req;
    cr_assert_eq(rb_friction_param_count(RB_FRICTION_STICTION, &req), 5);
    cr_assert_eq(req, 4);
    cr_assert_str_eq(rb_friction_param_name(RB_FRICTION_LUGRE, 4), "sigma0");
    cr_assert_null(rb_friction_param_name(RB_FRICTION_LUGRE, 6));
    cr_assert_str_eq(rb_friction_kind_name(RB_FRICTION_TANH6), "tanh6");

    /* failures leave *out untouched */
    rb_friction_model keep = m;
    cr_assert_eq(rb_friction_build("stribeck", p4, 4, &m, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "unknown model 'stribeck'") && strstr(err.msg, "scv"), "%s", err.msg);
    cr_assert_eq(rb_friction_build("scv", p4, 3, &m, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "3 parameters given, expected 4 to 5 (F_c, F_s, F_v, v_s[, v_eps])"), "%s", err.msg);
    cr_assert_eq(rb_friction_build("lugre", p6, 5, &m, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "expected 6 (F_c, F_s, F_v, v_s, sigma0, sigma1)"), "%s", err.msg);
    cr_assert_eq(memcmp(&keep, &m, sizeof m), 0);
    cr_assert_eq(rb_friction_build(NULL, p4, 4, &m, &err), RB_EINVAL);
    cr_assert_eq(rb_friction_build("scv", NULL, 4, &m, &err), RB_EINVAL);
}

typedef struct bad_case {
    const char *name;
    double p[6];
    size_t n;
    const char *needle; /* must appear in the message */
} bad_case;

Test(friction_models, validation_names_the_parameter)
{
    const bad_case cases[] = {
        {"coulomb_viscous", {-0.1, 0.2}, 2, "friction coulomb_viscous: F_c (-0.1) must be >= 0"},
        {"coulomb_viscous", {0.1, -0.2}, 2, "F_v (-0.2) must be >= 0"},
        {"coulomb_viscous", {0.1, 0.2, -1e-3}, 3, "v_eps (-0.001) must be >= 0"},
        {"coulomb_viscous", {NAN, 0.2}, 2, "F_c (nan) must be finite"},
        {"scv", {0.3, 0.2, 0.1, 0.01}, 4, "friction scv: F_s (0.2) must be >= F_c (0.3)"},
        {"scv", {0.3, 0.6, 0.1, 0}, 4, "v_s (0) must be > 0"},
        {"scv", {0.3, 0.6, -0.1, 0.01}, 4, "F_v (-0.1) must be >= 0"},
        {"scv", {0.3, 0.6, 0.1, 0.01, INFINITY}, 5, "v_eps (inf) must be finite"},
        {"tanh6", {0.7, 10, 100, 0.6, 100, 0.9}, 6, "g2 (10) must be >= g3 (100)"},
        {"tanh6", {0.7, 100, 10, 0.6, -100, 0.9}, 6, "g5 (-100) must be >= 0"},
        {"lugre", {0, 0.5, 0.1, 0.01, 1e4, 1}, 6, "friction lugre: F_c (0) must be > 0"},
        {"lugre", {0.3, 0.5, 0.1, 0.01, 0, 1}, 6, "sigma0 (0) must be > 0"},
        {"lugre", {0.3, 0.5, 0.1, 0.01, 1e4, -1}, 6, "sigma1 (-1) must be >= 0"},
        {"lugre", {0.3, 0.5, 0.1, -0.01, 1e4, 1}, 6, "v_s (-0.01) must be > 0"},
        {"stiction", {0.3, 0.5, 0.1, 0}, 4, "friction stiction: v_stick (0) must be > 0"},
        {"stiction", {0.3, 0.25, 0.1, 1e-3}, 4, "F_s (0.25) must be >= F_c (0.3)"},
        {"stiction", {0.3, 0.5, 0.1, 1e-3, -1}, 5, "v_s (-1) must be >= 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rb_friction_model m;
        rb_err err;
        cr_assert_eq(rb_friction_build(cases[i].name, cases[i].p, cases[i].n, &m, &err), RB_ECONFIG, "case %zu", i);
        cr_assert(strstr(err.msg, cases[i].needle), "case %zu: '%s' lacks '%s'", i, err.msg, cases[i].needle);
        cr_assert_null(strchr(err.msg, '\n'));
    }
    /* the boundary cases are allowed: F_s = F_c, g2 = g3, zero viscous */
    const double ok1[] = {0.3, 0.3, 0, 0.01}, ok2[] = {0.7, 10, 10, 0, 0, 0};
    rb_friction_model m;
    cr_assert_eq(rb_friction_build("scv", ok1, 4, &m, NULL), RB_OK);
    cr_assert_eq(rb_friction_build("tanh6", ok2, 6, &m, NULL), RB_OK);
    cr_assert_eq(rb_friction_validate(NULL, NULL), RB_EINVAL);
    rb_friction_model bad = {.kind = (rb_friction_kind)9};
    cr_assert_eq(rb_friction_validate(&bad, NULL), RB_ECONFIG);
}

/* ---- drift ------------------------------------------------------------------------------------------ */

Test(friction_models, drift_schedule_values)
{
    rb_friction_drift none = {0};
    cr_assert_eq(rb_friction_drift_scale(&none, 123.0), 1.0);
    rb_friction_drift ramp = {.s0 = 1.0, .s1 = 1.5, .t0 = 10, .t1 = 20};
    cr_assert_eq(rb_friction_drift_scale(&ramp, 0.0), 1.0);
    cr_assert_eq(rb_friction_drift_scale(&ramp, 10.0), 1.0);
    CLOSE(rb_friction_drift_scale(&ramp, 15.0), 1.25, 1e-15);
    CLOSE(rb_friction_drift_scale(&ramp, 12.0), 1.1, 1e-15);
    cr_assert_eq(rb_friction_drift_scale(&ramp, 20.0), 1.5);
    cr_assert_eq(rb_friction_drift_scale(&ramp, 1e6), 1.5);
    rb_friction_drift step = {.s0 = 1.0, .s1 = 0.8, .t0 = 5, .t1 = 5};
    cr_assert_eq(rb_friction_drift_scale(&step, 4.999), 1.0);
    cr_assert_eq(rb_friction_drift_scale(&step, 5.0), 0.8);
    rb_friction_drift sine = {.amplitude = 0.2, .period = 100, .phase = 0};
    CLOSE(rb_friction_drift_scale(&sine, 25.0), 1.2, 1e-15);
    CLOSE(rb_friction_drift_scale(&sine, 75.0), 0.8, 1e-15);
    CLOSE(rb_friction_drift_scale(&sine, 50.0), 1.0, 1e-14);
    rb_friction_drift both = {.s0 = 2, .s1 = 2, .amplitude = 0.1, .period = 8, .phase = M_PI / 2};
    CLOSE(rb_friction_drift_scale(&both, 0.0), 2.2, 1e-15);
    CLOSE(rb_friction_drift_scale(&both, 4.0), 1.8, 1e-15);
}

Test(friction_models, drift_scales_the_force_parameters)
{
    /* a worn robot: the whole static curve 1.3 times the new one's */
    rb_friction_model m, now;
    cr_assert_eq(rb_friction_preset("ergocub_r_knee", &m, NULL), RB_OK);
    m.drift = (rb_friction_drift){.s0 = 1.3, .s1 = 1.3};
    cr_assert_eq(rb_friction_validate(&m, NULL), RB_OK);
    rb_friction_at_time(&m, 42.0, &now);
    CLOSE(now.scv.F_c, 0.306 * 1.3, 1e-15);
    CLOSE(now.scv.F_s, 0.601 * 1.3, 1e-15);
    CLOSE(now.scv.F_v, 0.673 * 1.3, 1e-15);
    cr_assert_eq(now.scv.v_s, 0.0094, "velocity scales do not drift by default");
    cr_assert_eq(now.drift.s0, 0.0, "the result carries no drift");
    for (double v = -0.5; v <= 0.5; v += 0.01)
        CLOSE(rb_friction_eval(&now, v), 1.3 * rb_friction_eval(&m, v), 1e-14);

    /* tanh6: g1, g4, g6 by default; a mask picks others (bit 1 = g2) */
    rb_friction_model t;
    cr_assert_eq(rb_friction_preset("suralp_leg_2", &t, NULL), RB_OK);
    t.drift = (rb_friction_drift){.s0 = 1, .s1 = 2, .t0 = 0, .t1 = 10};
    rb_friction_at_time(&t, 5.0, &now);
    CLOSE(now.tanh6.g1, 0.9, 1e-15);
    CLOSE(now.tanh6.g4, 0.75, 1e-15);
    CLOSE(now.tanh6.g6, 1.35, 1e-15);
    cr_assert_eq(now.tanh6.g2, 100.0);
    t.drift.mask = 1u << 1;
    cr_assert_eq(rb_friction_validate(&t, NULL), RB_OK);
    rb_friction_at_time(&t, 10.0, &now);
    cr_assert_eq(now.tanh6.g2, 200.0);
    cr_assert_eq(now.tanh6.g1, 0.6);

    /* in place */
    rb_friction_at_time(&t, 0.0, &t);
    cr_assert_eq(t.tanh6.g2, 100.0);
    cr_assert_eq(t.drift.mask, 0u);
}

Test(friction_models, drift_validation)
{
    rb_friction_model m;
    rb_err err;
    cr_assert_eq(rb_friction_preset("ergocub_r_knee", &m, NULL), RB_OK);
    struct {
        rb_friction_drift d;
        const char *needle;
    } cases[] = {
        {{.s0 = -1, .s1 = 1}, "drift: s0 (-1) must be finite and > 0"},
        {{.s0 = 1, .s1 = 0}, "drift: s1 (0) must be finite and > 0"},
        {{.s0 = 1, .s1 = 2, .t0 = 5, .t1 = 1}, "drift: t1 (1) must be >= t0 (5)"},
        {{.amplitude = 1, .period = 10}, "drift: amplitude (1) must be in [0, 1)"},
        {{.amplitude = 0.5}, "drift: period (0) must be finite and > 0"},
        {{.amplitude = 0.5, .period = 1, .phase = NAN}, "drift: phase (nan) must be finite"},
        {{.s0 = 1, .s1 = 1, .mask = 1u << 5}, "mask 0x20 names parameters beyond the 5 of scv"},
        /* only F_c drifting up to 2.1 times would pass F_s (0.601 < 2.1 * 0.306): named at the extreme scale */
        {{.s0 = 1, .s1 = 2.1, .t1 = 100, .mask = 1u}, "at drift scale 2.1, F_s (0.601) must be >= F_c (0.6426)"},
        /* only F_s drifting down */
        {{.amplitude = 0.6, .period = 10, .mask = 2u}, "at drift scale 0.4, F_s (0.2404) must be >= F_c (0.306)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        m.drift = cases[i].d;
        cr_assert_eq(rb_friction_validate(&m, &err), RB_ECONFIG, "case %zu", i);
        cr_assert(strstr(err.msg, cases[i].needle), "case %zu: '%s' lacks '%s'", i, err.msg, cases[i].needle);
    }
    m.drift = (rb_friction_drift){.s0 = 1, .s1 = 1.9, .t1 = 100, .mask = 1u}; /* 1.9 * 0.306 = 0.5814 <= F_s */
    cr_assert_eq(rb_friction_validate(&m, &err), RB_OK, "%s", err.msg);
}
