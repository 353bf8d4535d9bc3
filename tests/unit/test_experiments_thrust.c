/* The scale validation of thrust estimates (seed 004, V-B): the drift alpha recovered from a synthetic log with a
 * known linear drift and temperature ramp, E_T zero when the support is the true load, the bound's binding side (N
 * against percent of m g), the checks of the jets-off windows, and the loader's conditional keys. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/experiments.h"
#include "support.h"

#define RATE 100.0
#define N_SAMPLES 6001 /* 0 .. 60 s */
#define G 9.81
#define MASS 41.402
#define ALPHA 0.037   /* kg per degree, the drift the log is made with */
#define T_START 20.25 /* the temperature ramp's mean over the start window [0, 10] s */

static double temperature(double t) { return 20.0 + 0.05 * t; }

/* The thrust's vertical share (N): off in [0, 10] and [50, 60], a ramp over [20, 40]. */
static double thrust(double t)
{
    if (t <= 12 || t >= 48)
        return 0;
    return t < 20 ? 40 * (t - 12) / 8 : t < 40 ? 40 + 60 * (t - 20) / 20 : 100 * (48 - t) / 8;
}

static double true_load(double t) { return MASS * G - thrust(t); } /* N on the scales */

typedef struct opts {
    double support_offset; /* added to the support inside the ramp [20, 40] s */
    double temp_slope;     /* the temperature's slope (0.05 by default; 0: constant) */
    double throttle_at;    /* a throttle set to 5 at this sample time (< 0: none) */
    double t_shift;        /* added to every time stamp (the log's clock starts there) */
} opts;

/* scales/left (one element) + scales/right (two elements) read the load in kg with the drift ALPHA (T - T_START) split
 * over them; ft/temp has two elements whose mean is the temperature; jets/throttle has two jets; est/support is the
 * true load (+ the offset inside the ramp). */
static rb_log *make_log(const opts *o)
{
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    const char *names[] = {"scales/left", "scales/right", "ft/temp", "jets/throttle", "est/support"};
    const size_t widths[] = {1, 2, 2, 2, 1};
    for (size_t c = 0; c < 5; c++) {
        rb_channel *ch;
        cr_assert_eq(rb_log_add_channel(log, names[c], N_SAMPLES, widths[c], &ch, &err), RB_OK);
        for (size_t k = 0; k < N_SAMPLES; k++) {
            double t = (double)k / RATE, temp = 20.0 + o->temp_slope * t;
            double kg = true_load(t) / G + ALPHA * (temp - (o->temp_slope ? T_START : 20.0));
            double *row = ch->data + k * widths[c];
            ch->time[k] = t + o->t_shift;
            switch (c) {
            case 0: row[0] = 0.25 * kg; break;
            case 1: row[0] = 0.5 * kg, row[1] = 0.25 * kg; break;
            case 2: row[0] = temp - 1.5, row[1] = temp + 1.5; break;
            case 3:
                row[0] = thrust(t) > 0 ? 50 : 0,
                row[1] = o->throttle_at >= 0 && fabs(t - o->throttle_at) < 1e-9 ? 5 : 0;
                break;
            default: row[0] = true_load(t) + (t >= 20 && t <= 40 ? o->support_offset : 0);
            }
        }
    }
    return log;
}

static const char *const CONFIG = "{\"log\": \"synthetic.csv\",\n"
                                  " \"variants\": [{\"name\": \"combined\", \"pipeline\": \"p.json\", \"support\": "
                                  "\"support\"}],\n"
                                  " \"scales\": [\"scales/left\", \"scales/right\"],\n"
                                  " \"temperature\": {\"channel\": \"ft/temp\"},\n"
                                  " \"throttles\": {\"channel\": \"jets/throttle\"},\n"
                                  " \"jets_off\": [[0, 10], [50, 60]],\n"
                                  " \"ramp\": [20, 40],\n"
                                  " \"mass\": %s%s}\n";

typedef struct fixture {
    char *dir, *base;
    rb_registry *reg;
} fixture;

static fixture setup(void)
{
    fixture fx = {test_temp_dir(), NULL, NULL};
    char path[512];
    snprintf(path, sizeof path, "%s/p.json", fx.dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("{\"clock\": {\"rate\": 100}, \"signals\": {\"support\": {\"channel\": \"est/support\"}}}\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/v.json", fx.dir);
    fx.base = strdup(path);
    rb_err err;
    cr_assert_eq(rb_registry_new(&fx.reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(fx.reg, &err), RB_OK);
    return fx;
}

static void teardown(fixture *fx)
{
    rb_registry_free(fx->reg);
    free(fx->base);
    test_remove_tree(fx->dir);
}

static int load(const fixture *fx, const char *mass, const char *extra, rb_thrust_validation **tv, rb_err *err)
{
    char text[2048];
    snprintf(text, sizeof text, CONFIG, mass, extra);
    return rb_thrust_validation_load_text(text, strlen(text), "v.json", fx->base, fx->reg, tv, err);
}

static const opts DEFAULT = {0, 0.05, -1, 0};

Test(experiments_thrust, alpha_is_recovered_from_a_linear_drift_and_temperature_ramp)
{
    fixture fx = setup();
    rb_thrust_validation *tv = NULL;
    rb_err err;
    cr_assert_eq(load(&fx, "41.402", "", &tv, &err), RB_OK, "%s", err.msg);
    rb_log *log = make_log(&DEFAULT);
    rb_thrust_drift d;
    cr_assert_eq(rb_thrust_drift_estimate(tv, log, &d, &err), RB_OK, "%s", err.msg);
    cr_expect(d.corrected && d.has_windows);
    cr_expect(fabs(d.alpha - ALPHA) < 1e-9 * ALPHA, "alpha %.17g, made with %.17g", d.alpha, ALPHA);
    cr_expect(fabs(d.temp0 - T_START) < 1e-9 && fabs(d.temp1 - temperature(55)) < 1e-9, "%.17g %.17g", d.temp0,
              d.temp1);
    cr_expect(fabs(d.w0 - MASS) < 1e-9, "the start window reads the mass: %.17g", d.w0);
    cr_expect(fabs(d.w1 - d.w0 - ALPHA * (temperature(55) - T_START)) < 1e-9);
    rb_log_free(log);
    rb_thrust_validation_free(tv);
    teardown(&fx);
}

Test(experiments_thrust, e_t_is_zero_when_the_support_is_the_true_load)
{
    fixture fx = setup();
    rb_thrust_validation *tv = NULL;
    rb_thrust_result *r = NULL;
    rb_err err;
    cr_assert_eq(load(&fx, "41.402", "", &tv, &err), RB_OK, "%s", err.msg);
    rb_log *log = make_log(&DEFAULT);
    cr_assert_eq(rb_thrust_validation_run(tv, log, NULL, &r, &err), RB_OK, "%s", err.msg);
    const rb_thrust_variant_result *vr = &r->variants[0];
    cr_expect_eq(vr->n, N_SAMPLES);
    cr_expect(vr->rows[RB_THRUST_E_T].max_abs < 1e-9, "max |E_T| = %g: the drift is corrected",
              vr->rows[RB_THRUST_E_T].max_abs);
    cr_expect(vr->passed);
    for (size_t k = 0; k < vr->n; k += 500)
        cr_expect(fabs(vr->load[k] - true_load(vr->t[k])) < 1e-9, "the corrected scales at t = %g", vr->t[k]);
    rb_thrust_result_free(r);
    rb_log_free(log);
    rb_thrust_validation_free(tv);

    /* without the correction the drift stays in E_T: ALPHA (T - T_START) g at most at the end */
    cr_assert_eq(load(&fx, "41.402", ", \"temperature_correction\": false", &tv, &err), RB_OK, "%s", err.msg);
    log = make_log(&DEFAULT);
    cr_assert_eq(rb_thrust_validation_run(tv, log, NULL, &r, &err), RB_OK, "%s", err.msg);
    double drift = ALPHA * (temperature(60) - T_START) * G;
    cr_expect(fabs(r->variants[0].rows[RB_THRUST_E_T].max_abs - drift) < 1e-9, "%.17g against %.17g",
              r->variants[0].rows[RB_THRUST_E_T].max_abs, drift);
    cr_expect_eq(r->drift.alpha, 0);
    rb_thrust_result_free(r);
    rb_log_free(log);
    rb_thrust_validation_free(tv);
    teardown(&fx);
}

Test(experiments_thrust, an_offset_in_the_ramp_shows_in_the_ramp_and_the_whole_run)
{
    fixture fx = setup();
    rb_thrust_validation *tv = NULL;
    rb_thrust_result *r = NULL;
    rb_err err;
    cr_assert_eq(load(&fx, "41.402", "", &tv, &err), RB_OK, "%s", err.msg);
    rb_log *log = make_log(&(opts){12, 0.05, -1, 0});
    cr_assert_eq(rb_thrust_validation_run(tv, log, NULL, &r, &err), RB_OK, "%s", err.msg);
    const rb_thrust_variant_result *vr = &r->variants[0];
    size_t in_ramp = 2001; /* 20.00 .. 40.00 s */
    cr_expect(fabs(vr->rows[RB_THRUST_E_T].max_abs - 12) < 1e-9);
    cr_expect(fabs(vr->rows[RB_THRUST_E_T_RAMP].rmse - 12) < 1e-9, "the whole ramp is off by 12 N");
    cr_expect_eq(vr->rows[RB_THRUST_E_T_RAMP].n, in_ramp);
    double rms = 12 * sqrt((double)in_ramp / N_SAMPLES);
    cr_expect(fabs(vr->rows[RB_THRUST_E_T].rmse - rms) < 1e-9, "%.17g against %.17g", vr->rows[RB_THRUST_E_T].rmse,
              rms);
    cr_expect(fabs(vr->rows[RB_THRUST_E_T_PERCENT].max_abs - 1200 / (MASS * G)) < 1e-9);
    cr_expect(vr->rows[RB_THRUST_E_T].mean_est < 0, "the support is above the scales: E_T < 0");
    rb_thrust_result_free(r);
    rb_log_free(log);
    rb_thrust_validation_free(tv);
    teardown(&fx);
}

Test(experiments_thrust, the_smaller_bound_binds)
{
    const char *binds = NULL;
    double b = rb_thrust_bound(35, 7, MASS, G, &binds);
    cr_expect(fabs(b - 0.07 * MASS * G) < 1e-12 && strcmp(binds, "percent") == 0, "%g %s", b, binds);
    b = rb_thrust_bound(35, 7, 60, G, &binds);
    cr_expect(b == 35 && strcmp(binds, "N") == 0, "%g %s", b, binds);
    b = rb_thrust_bound(35, 50, 70, 1, &binds);
    cr_expect(b == 35 && strcmp(binds, "both") == 0, "%g %s", b, binds);

    /* the same 30 N error: above 7 % of m g = 28.4 N for the flight mass, below 35 N for a 60 kg robot */
    fixture fx = setup();
    const char *masses[] = {"41.402", "60"};
    for (size_t i = 0; i < 2; i++) {
        rb_thrust_validation *tv = NULL;
        rb_thrust_result *r = NULL;
        rb_err err;
        cr_assert_eq(load(&fx, masses[i], "", &tv, &err), RB_OK, "%s", err.msg);
        rb_log *log = make_log(&(opts){30, 0.05, -1, 0});
        cr_assert_eq(rb_thrust_validation_run(tv, log, NULL, &r, &err), RB_OK, "%s", err.msg);
        cr_expect_str_eq(r->binds, i ? "N" : "percent");
        cr_expect_eq(r->variants[0].passed, i == 1, "mass %s: bound %g N", masses[i], r->bound);
        rb_thrust_result_free(r);
        rb_log_free(log);
        rb_thrust_validation_free(tv);
    }
    teardown(&fx);
}

static void expect_drift_error(const opts *o, const char *extra, int code, const char *const *must)
{
    fixture fx = setup();
    rb_thrust_validation *tv = NULL;
    rb_err err;
    cr_assert_eq(load(&fx, "41.402", extra, &tv, &err), RB_OK, "%s", err.msg);
    rb_log *log = make_log(o);
    rb_thrust_drift d;
    cr_expect_eq(rb_thrust_drift_estimate(tv, log, &d, &err), code, "%s", err.msg);
    for (; *must; must++)
        cr_expect(strstr(err.msg, *must), "'%s' in: %s", *must, err.msg);
    rb_thrust_result *r = NULL;
    cr_expect_eq(rb_thrust_validation_run(tv, log, NULL, &r, &err), code, "the run checks it too: %s", err.msg);
    cr_expect_null(r);
    rb_log_free(log);
    rb_thrust_validation_free(tv);
    teardown(&fx);
}

Test(experiments_thrust, a_throttle_on_in_a_jets_off_window_is_named)
{
    expect_drift_error(&(opts){0, 0.05, 53.5, 0}, "", RB_EINPUT,
                       (const char *[]){"jets_off[1]", "end window", "jet '1'", "t = 53.5 s", NULL});
}

Test(experiments_thrust, the_tolerance_lets_a_small_throttle_pass)
{
    fixture fx = setup();
    rb_thrust_validation *tv = NULL;
    rb_err err;
    cr_assert_eq(load(&fx, "41.402", ", \"throttle_off_tolerance\": 5", &tv, &err), RB_OK, "%s", err.msg);
    rb_log *log = make_log(&(opts){0, 0.05, 53.5, 0});
    rb_thrust_drift d;
    cr_expect_eq(rb_thrust_drift_estimate(tv, log, &d, &err), RB_OK, "%s", err.msg);
    rb_log_free(log);
    rb_thrust_validation_free(tv);
    teardown(&fx);
}

Test(experiments_thrust, no_temperature_change_leaves_alpha_undefined)
{
    expect_drift_error(&(opts){0, 0, -1, 0}, "", RB_EINPUT,
                       (const char *[]){"no temperature change", "\"temperature_correction\": false", NULL});
}

Test(experiments_thrust, a_window_outside_the_log_and_a_missing_channel)
{
    /* the ramp is checked like the windows; the temperature element must exist */
    fixture fx = setup();
    rb_thrust_validation *tv = NULL;
    rb_thrust_result *r = NULL;
    rb_err err;
    rb_log *log = make_log(&DEFAULT);
    cr_assert_eq(load(&fx, "41.402", ", \"g\": 9.81, \"bound\": {\"N\": 30}", &tv, &err), RB_OK, "%s", err.msg);
    rb_free(tv->temperature_element);
    tv->temperature_element = strdup("middle");
    cr_expect_eq(rb_thrust_validation_run(tv, log, NULL, &r, &err), RB_ENOTFOUND);
    cr_expect(strstr(err.msg, "no element 'middle'") && strstr(err.msg, "temperature.element"), "%s", err.msg);
    free(tv->temperature_element);
    tv->temperature_element = NULL;
    tv->jets_off[1] = (rb_interval){55, 61};
    cr_expect_eq(rb_thrust_validation_run(tv, log, NULL, &r, &err), RB_EINPUT);
    cr_expect(strstr(err.msg, "jets_off[1]") && strstr(err.msg, "[55, 61] s is outside the log"), "%s", err.msg);
    tv->jets_off[1] = (rb_interval){50, 60};
    tv->ramp = (rb_interval){-5, 30};
    cr_expect_eq(rb_thrust_validation_run(tv, log, NULL, &r, &err), RB_EINPUT);
    cr_expect(strstr(err.msg, "ramp [-5, 30] s is outside the log"), "%s", err.msg);
    rb_thrust_validation_free(tv);
    rb_log_free(log);
    teardown(&fx);
}

Test(experiments_thrust, the_loader_asks_for_the_windows_only_with_the_correction)
{
    fixture fx = setup();
    rb_thrust_validation *tv = NULL;
    rb_err err;
    const char *text = "{\"log\": \"x.csv\",\n \"variants\": [{\"name\": \"a\", \"pipeline\": \"p.json\", \"support\": "
                       "\"support\"}],\n \"scales\": [\"s\"], \"temperature\": {\"channel\": \"t\"}, \"mass\": 40}\n";
    cr_expect_eq(rb_thrust_validation_load_text(text, strlen(text), "v.json", fx.base, fx.reg, &tv, &err), RB_ECONFIG);
    cr_expect(strstr(err.msg, "v.json:1:1: ") && strstr(err.msg, "missing key 'jets_off'") &&
                  strstr(err.msg, "\"temperature_correction\": false"),
              "%s", err.msg);
    const char *off = "{\"log\": \"x.csv\", \"temperature_correction\": false,\n \"variants\": [{\"name\": \"a\", "
                      "\"pipeline\": \"p.json\", \"support\": \"support\"}],\n \"scales\": [\"s\"], \"mass\": 40}\n";
    cr_assert_eq(rb_thrust_validation_load_text(off, strlen(off), "v.json", fx.base, fx.reg, &tv, &err), RB_OK, "%s",
                 err.msg);
    cr_expect(!tv->temperature_correction && !tv->has_jets_off && tv->bound_n == 35 && tv->bound_percent == 7 &&
              tv->g == 9.81);
    rb_thrust_validation_free(tv);
    const char *bad = "{\"log\": \"x.csv\", \"temperature_correction\": false,\n \"variants\": [{\"name\": \"a\", "
                      "\"pipeline\": \"p.json\", \"support\": \"suport\"}],\n \"scales\": [\"s\"], \"mass\": 40}\n";
    cr_expect_eq(rb_thrust_validation_load_text(bad, strlen(bad), "v.json", fx.base, fx.reg, &tv, &err), RB_ECONFIG);
    cr_expect(strstr(err.msg, "v.json:2:") && strstr(err.msg, "variants[0].support") &&
                  strstr(err.msg, "did you mean 'support'"),
              "%s", err.msg);
    teardown(&fx);
}

/* Windows counted from the log's first sample: on a log whose clock starts at 1000 s, {"from_start": ...} windows
 * select what the absolute ones select on the log starting at 0; the absolute ones find no sample there. */
Test(experiments_thrust, from_start_windows_follow_the_logs_clock)
{
    fixture fx = setup();
    static const char text[] =
        "{\"log\": \"synthetic.csv\",\n"
        " \"variants\": [{\"name\": \"combined\", \"pipeline\": \"p.json\", \"support\": \"support\"}],\n"
        " \"scales\": [\"scales/left\", \"scales/right\"], \"temperature\": {\"channel\": \"ft/temp\"},\n"
        " \"throttles\": {\"channel\": \"jets/throttle\"},\n"
        " \"jets_off\": [{\"from_start\": [0, 10]}, {\"from_start\": [50, 60]}],\n"
        " \"ramp\": {\"from_start\": [20, 40]}, \"mass\": 41.402}\n";
    rb_thrust_validation *tv = NULL;
    rb_thrust_result *r = NULL;
    rb_err err;
    cr_assert_eq(rb_thrust_validation_load_text(text, strlen(text), "v.json", fx.base, fx.reg, &tv, &err), RB_OK, "%s",
                 err.msg);
    opts shifted = DEFAULT;
    shifted.t_shift = 1000.0;
    rb_log *log = make_log(&shifted);
    cr_assert_eq(rb_thrust_validation_run(tv, log, NULL, &r, &err), RB_OK, "%s", err.msg);
    cr_expect(fabs(r->drift.alpha - ALPHA) < 1e-9 * ALPHA, "alpha %.17g", r->drift.alpha);
    cr_expect(r->drift.windows[0].t0 == 1000.0 && r->drift.windows[1].t1 == 1060.0, "[%g, ..., %g]",
              r->drift.windows[0].t0, r->drift.windows[1].t1);
    cr_expect(r->ramp.t0 == 1020.0 && r->ramp.t1 == 1040.0, "ramp [%g, %g]", r->ramp.t0, r->ramp.t1);
    cr_expect(r->variants[0].rows[RB_THRUST_E_T].max_abs < 1e-6, "max |E_T| %g",
              r->variants[0].rows[RB_THRUST_E_T].max_abs);
    rb_thrust_result_free(r);
    rb_thrust_validation_free(tv);
    /* the same windows given absolute miss the log */
    cr_assert_eq(load(&fx, "41.402", "", &tv, &err), RB_OK, "%s", err.msg);
    cr_expect_neq(rb_thrust_validation_run(tv, log, NULL, &r, &err), RB_OK, "absolute [0, 10] s on a log from 1000 s");
    rb_thrust_validation_free(tv);
    rb_log_free(log);
    teardown(&fx);
}
