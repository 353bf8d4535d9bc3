/* Time windows relative to the log's first sample (config.h rb_window) in the pipeline loader, and the start-up a
 * run's metrics skip by default (rb_pipeline_settle, the stage types' settle functions, their reference). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/filters.h"
#include "roboest/pipeline.h"

static rb_registry *registry(void)
{
    rb_registry *reg = NULL;
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK, "%s", err.msg);
    return reg;
}

static rb_pipeline *load(rb_registry *reg, const char *text)
{
    rb_pipeline *p = NULL;
    rb_err err;
    cr_assert_eq(rb_pipeline_load_text(text, strlen(text), "p.json", NULL, reg, &p, &err), RB_OK, "%s", err.msg);
    return p;
}

Test(pipeline_window, from_start_loads_resolves_and_prints_back)
{
    rb_registry *reg = registry();
    rb_pipeline *p = load(reg, "{\"clock\": {\"rate\": 100}, \"window\": {\"from_start\": [0.5, 3]},\n"
                               " \"signals\": {\"a\": {\"channel\": \"a\"}, \"b\": {\"channel\": \"b\"}},\n"
                               " \"metrics\": [{\"estimate\": \"a\", \"reference\": \"b\", \"window\": [2, 4]}]}");
    cr_assert(p->has_window && p->window.from_start && p->window.t0 == 0.5 && p->window.t1 == 3);
    cr_assert(p->metrics[0].has_window && !p->metrics[0].window.from_start);
    double t0, t1;
    rb_window_resolve(&p->window, 1.7e9, &t0, &t1);
    cr_assert(t0 == 1.7e9 + 0.5 && t1 == 1.7e9 + 3);
    rb_window_resolve(&p->metrics[0].window, 1.7e9, &t0, &t1);
    cr_assert(t0 == 2 && t1 == 4, "an absolute window is not shifted");
    char *text = rb_pipeline_resolved_json(p);
    cr_assert(text && strstr(text, "\"from_start\""), "%s", text);
    rb_pipeline *again = load(reg, text);
    char *text2 = rb_pipeline_resolved_json(again);
    cr_assert_str_eq(text2, text);
    rb_free(text), rb_free(text2);
    rb_pipeline_free(again);
    rb_pipeline_free(p);
    rb_registry_free(reg);
}

/* The log's first sample is the earliest time stamp of any channel. */
Test(pipeline_window, log_start_is_the_earliest_channel_sample)
{
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    cr_assert(isnan(rb_log_start(log)));
    const double ta[] = {1.7e9 + 2, 1.7e9 + 3}, tb[] = {NAN, 1.7e9 + 1, 1.7e9 + 4}, d[] = {0, 0, 0};
    cr_assert_eq(rb_log_add_channel_copy(log, "a", 2, 1, ta, d, NULL, NULL, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_add_channel_copy(log, "b", 3, 1, tb, d, NULL, NULL, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_start(log), 1.7e9 + 1);
    rb_log_free(log);
}

/* The default skip is the largest settling time of the stages; "settle" overrides it. */
Test(pipeline_window, settle_is_the_largest_stage_start_up)
{
    rb_registry *reg = registry();
    const char *fmt = "{\"clock\": {\"rate\": 1000}%s, \"signals\": {\"q\": {\"channel\": \"q\"}},\n"
                      " \"stages\": [{\"id\": \"kf\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"},\n"
                      "              \"out\": {\"x_dot\": \"qd\"}},\n"
                      "             {\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"qd\"},\n"
                      "              \"out\": {\"y\": \"qd_lp\"}, \"params\": {\"cutoff_hz\": %g}},\n"
                      "             {\"id\": \"fd\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"},\n"
                      "              \"out\": {\"dx\": \"qd_fd\"}}]}";
    char text[1024];
    snprintf(text, sizeof text, fmt, "", 1.0);
    rb_pipeline *p = load(reg, text);
    long st;
    double s = rb_pipeline_settle(p, 1e-3, &st);
    cr_assert_float_eq(s, 5.0 / (2 * M_PI), 1e-12, "the 1 Hz low-pass: %g", s);
    cr_assert(st >= 0 && strcmp(p->stages[st].id, "lp") == 0);
    rb_pipeline_free(p);
    snprintf(text, sizeof text, fmt, "", 1000.0); /* a fast low-pass: the Kalman filter sets it */
    p = load(reg, text);
    s = rb_pipeline_settle(p, 1e-3, &st);
    rb_kfd_params par = {RB_KFD_JERK, RB_KFD_DEFAULT_Q, {0, 0, 0}, RB_KFD_DEFAULT_R, {1, 1e2, 1e4}};
    cr_assert_float_eq(s, 5 * rb_kfd_time_constant(&par, 1e-3), 1e-15);
    cr_assert(s > 0.05 && s < 0.1, "kf_derivative's defaults at 1 kHz: %g s", s);
    cr_assert(strcmp(p->stages[st].id, "kf") == 0);
    rb_pipeline_free(p);
    snprintf(text, sizeof text, fmt, ", \"settle\": 0", 1.0);
    p = load(reg, text);
    cr_assert_eq(rb_pipeline_settle(p, 1e-3, &st), 0.0);
    cr_assert_eq(st, -1);
    char *printed = rb_pipeline_resolved_json(p);
    cr_assert(printed && strstr(printed, "\"settle\":\t0"), "%s", printed);
    rb_free(printed);
    rb_pipeline_free(p);
    rb_pipeline *bad = NULL;
    rb_err err;
    const char *neg = "{\"clock\": {\"rate\": 1}, \"settle\": -1, \"signals\": {\"q\": {\"channel\": \"q\"}}}";
    cr_assert_eq(rb_pipeline_load_text(neg, strlen(neg), "p.json", NULL, reg, &bad, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "settle: must be >= 0"), "%s", err.msg);
    rb_registry_free(reg);
}

/* 5 time constants bring the filter's start-up error below 1 %: a ramp of 0.5 unit/s whose velocity starts at 0. */
Test(pipeline_window, kf_derivative_settles_within_its_declared_time)
{
    const double rates[] = {100, 1000};
    for (size_t i = 0; i < 2; i++) {
        double dt = 1 / rates[i];
        rb_kfd_params par = {RB_KFD_JERK, RB_KFD_DEFAULT_Q, {0, 0, 0}, RB_KFD_DEFAULT_R, {1, 1e2, 1e4}};
        double settle = RB_SETTLE_TIME_CONSTANTS * rb_kfd_time_constant(&par, dt);
        size_t T = (size_t)(3 * settle / dt) + 2;
        double *t = malloc(T * sizeof *t), *z = malloc(T * sizeof *z), *v = malloc(T * sizeof *v);
        for (size_t k = 0; k < T; k++)
            t[k] = k * dt, z[k] = 0.5 * t[k];
        rb_err err;
        cr_assert_eq(rb_kfd_run(&par, t, z, T, NULL, v, NULL, NULL, &err), RB_OK, "%s", err.msg);
        double before = 0, after = 0;
        for (size_t k = 0; k < T; k++) {
            double e = fabs(v[k] - 0.5);
            if (t[k] >= settle)
                after = fmax(after, e);
            else if (t[k] >= settle / 5)
                before = fmax(before, e);
        }
        cr_assert(after < 0.01 * 0.5, "%g Hz: error %g after %g s", rates[i], after, settle);
        cr_assert(before > after, "%g Hz: the transient is still there at 1 time constant (%g)", rates[i], before);
        free(t), free(z), free(v);
    }
    rb_kfd_params never = {RB_KFD_JERK, 0, {0, 0, 0}, RB_KFD_DEFAULT_R, {1, 1e2, 1e4}};
    cr_assert(isinf(rb_kfd_time_constant(&never, 1e-3)), "q = 0: the gain decays to 0, no steady state");
}

static int nop_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    (void)err;
    setup->out[0] = setup->in[0];
    *state = NULL;
    return RB_OK;
}

static int nop_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)state, (void)k, (void)t, (void)in, (void)out, (void)err;
    return RB_OK;
}

static double one_second(const rb_params *p, double dt)
{
    (void)p, (void)dt;
    return 1.0;
}

/* A type declaring a settling time says how in the reference; one without the words is refused. */
Test(pipeline_window, settle_is_documented_in_the_reference)
{
    static const char *const in[] = {"x"}, *const out[] = {"y"};
    rb_stage_type t = {.version = RB_STAGE_TYPE_VERSION,
                       .name = "slow",
                       .inputs = in,
                       .n_inputs = 1,
                       .outputs = out,
                       .n_outputs = 1,
                       .create = nop_create,
                       .step = nop_step,
                       .settle = one_second};
    rb_registry *reg = NULL;
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_registry_add(reg, &t, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "settle_doc"), "%s", err.msg);
    t.settle_doc = "one second, always";
    cr_assert_eq(rb_registry_add(reg, &t, &err), RB_OK, "%s", err.msg);
    char *md = NULL;
    cr_assert_eq(rb_registry_markdown(reg, &md, &err), RB_OK);
    cr_assert(strstr(md, "Start-up settling time (the metrics' default `settle`): one second, always"), "%s", md);
    rb_free(md);
    rb_registry_free(reg);
}
