/* Optional bindings ("optional": true): a log without any of the binding's channels binds it 0 wide and says so
 * in the warnings; a stage input wired to it sees a 0-wide input; some of several channels present is an error
 * naming the missing one. On a log (rb_pipeline_run_log) and on a stream (rb_stream). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/pipeline.h"
#include "support.h"

static rb_registry *reg;

static void setup_registry(void)
{
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK, "%s", err.msg);
}

static void free_registry(void) { rb_registry_free(reg); }

TestSuite(pipeline_optional, .init = setup_registry, .fini = free_registry);

enum { T = 101, N = 3 };

static double value(size_t i, double t) { return sin((1.0 + (double)i) * t) + (double)i; }

/* joints/q (N elements) and imu/acc (N elements); no imu/gyro. */
static rb_log *make_log(void)
{
    double t[T], x[T * N];
    for (size_t k = 0; k < T; k++) {
        t[k] = 0.01 * (double)k;
        for (size_t i = 0; i < N; i++)
            x[k * N + i] = value(i, t[k]);
    }
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    cr_assert_eq(rb_log_add_channel_copy(log, "joints/q", T, N, t, x, NULL, NULL, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_add_channel_copy(log, "imu/acc", T, N, t, x, NULL, NULL, &err), RB_OK, "%s", err.msg);
    return log;
}

/* q minus the binding `b` (JSON of its channel key and options), both recorded. */
static rb_pipeline *load_with(const char *b)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"clock\": {\"rate\": 100},"
             " \"signals\": {\"q\": {\"channel\": \"joints/q\"}, \"imu\": {%s}},"
             " \"stages\": [{\"id\": \"d\", \"type\": \"difference\", \"in\": {\"a\": \"q\", \"b\": \"imu\"},"
             "               \"out\": {\"y\": \"y\"}}],"
             " \"outputs\": [{\"path\": \"o.h5\", \"signals\": [\"y\", \"imu\"]}]}",
             b);
    rb_pipeline *p = NULL;
    rb_err err;
    cr_assert_eq(rb_pipeline_load_text(text, strlen(text), "opt.json", NULL, reg, &p, &err), RB_OK, "%s", err.msg);
    return p;
}

Test(pipeline_optional, absent_optional_binding_is_0_wide_with_a_warning)
{
    rb_pipeline *p = load_with("\"channel\": \"imu/gyro\", \"optional\": true");
    rb_log *log = make_log();
    rb_run_result *res = NULL;
    rb_err err;
    cr_assert_eq(rb_pipeline_run_log(p, log, NULL, 0, NULL, &res, &err), RB_OK, "%s", err.msg);
    const rb_run_signal *imu = rb_run_result_signal(res, "imu"), *y = rb_run_result_signal(res, "y");
    cr_assert_eq(imu->width, 0);
    cr_assert_eq(y->width, N, "the stage saw b 0 wide: y = a");
    for (size_t k = 0; k < res->clock.n; k++)
        for (size_t i = 0; i < N; i++)
            cr_assert_float_eq(y->data[k * N + i], value(i, res->clock.t[k]), 1e-12);
    bool said = false;
    for (size_t w = 0; w < res->n_warnings; w++)
        said |= strstr(res->warnings[w], "optional signal imu") && strstr(res->warnings[w], "imu/gyro");
    cr_assert(said, "a warning names the absent optional signal and its channel");
    rb_run_result_free(res);
    rb_pipeline_free(p);
    p = load_with("\"channel\": \"imu/gyro\""); /* without "optional": still an error */
    cr_assert_eq(rb_pipeline_run_log(p, log, NULL, 0, NULL, &res, &err), RB_ENOTFOUND);
    cr_assert(strstr(err.msg, "imu/gyro"), "%s", err.msg);
    rb_log_free(log);
    rb_pipeline_free(p);
}

/* Present, "optional" changes nothing: b is subtracted. */
Test(pipeline_optional, present_optional_binding_is_bound_as_usual)
{
    rb_pipeline *p = load_with("\"channel\": \"imu/acc\", \"optional\": true");
    rb_log *log = make_log();
    rb_run_result *res = NULL;
    rb_err err;
    cr_assert_eq(rb_pipeline_run_log(p, log, NULL, 0, NULL, &res, &err), RB_OK, "%s", err.msg);
    const rb_run_signal *y = rb_run_result_signal(res, "y");
    cr_assert_eq(rb_run_result_signal(res, "imu")->width, N);
    for (size_t k = 0; k < res->clock.n * N; k++)
        cr_assert_float_eq(y->data[k], 0, 1e-12);
    for (size_t w = 0; w < res->n_warnings; w++)
        cr_assert_null(strstr(res->warnings[w], "optional"), "%s", res->warnings[w]);
    rb_run_result_free(res);
    rb_log_free(log);
    rb_pipeline_free(p);
}

/* Of a concatenated binding, some channels there and some not: an error naming the first missing one. */
Test(pipeline_optional, partly_present_optional_binding_is_an_error_naming_the_missing_channel)
{
    rb_pipeline *p = load_with("\"channel\": [\"imu/acc\", \"imu/gyro\"], \"optional\": true");
    rb_log *log = make_log();
    rb_run_result *res = NULL;
    rb_err err;
    cr_assert_eq(rb_pipeline_run_log(p, log, NULL, 0, NULL, &res, &err), RB_ENOTFOUND);
    cr_assert(strstr(err.msg, "imu/gyro") && strstr(err.msg, "signals.imu.channel[1]"), "%s", err.msg);
    cr_assert_null(strstr(err.msg, "imu/acc"), "%s", err.msg);
    rb_log_free(log);
    rb_pipeline_free(p);
}

Test(pipeline_optional, optional_must_be_a_boolean)
{
    const char *text =
        "{\"clock\": {\"rate\": 100}, \"signals\": {\"q\": {\"channel\": \"joints/q\", \"optional\": 1}}}";
    rb_pipeline *p = NULL;
    rb_err err;
    cr_assert_eq(rb_pipeline_load_text(text, strlen(text), "opt.json", NULL, reg, &p, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "signals.q.optional"), "%s", err.msg);
}

/* The resolved config keeps the key (a run's provenance says the binding was optional). */
Test(pipeline_optional, resolved_config_keeps_optional)
{
    rb_pipeline *p = load_with("\"channel\": \"imu/gyro\", \"optional\": true");
    cr_assert(p->signals[1].optional);
    cr_assert_not(p->signals[0].optional);
    char *json = rb_pipeline_resolved_json(p);
    cr_assert_not_null(json);
    const char *at = strstr(json, "\"optional\"");
    cr_assert(at && strstr(at, "true") && !strstr(at + 1, "\"optional\""), "once, for imu: %s", json);
    rb_free(json);
    rb_pipeline_free(p);
}

/* A stream without the optional binding's channel: 0 wide, the stage steps. */
Test(pipeline_optional, stream_without_the_optional_channel)
{
    rb_pipeline *p = load_with("\"channel\": \"imu/gyro\", \"optional\": true");
    const char *const names[N] = {"0", "1", "2"};
    rb_channel_info ch[1] = {{"joints/q", N, names, NULL}};
    rb_stream *s = NULL;
    rb_err err;
    cr_assert_eq(rb_stream_open(p, ch, 1, 0.01, 4, &s, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_stream_width(s, rb_stream_find(s, "imu")), 0);
    double *row = rb_stream_channel_row(s, 0);
    for (size_t i = 0; i < N; i++)
        row[i] = value(i, 0);
    cr_assert_eq(rb_stream_step(s, &err), RB_OK, "%s", err.msg);
    const double *y = rb_stream_row(s, rb_stream_find(s, "y"));
    for (size_t i = 0; i < N; i++)
        cr_assert_float_eq(y[i], value(i, 0), 1e-12);
    rb_stream_free(s);
    rb_pipeline_free(p);
}
