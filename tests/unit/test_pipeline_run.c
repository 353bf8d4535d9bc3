/* The runner: whole runs on in-memory logs, alignment errors, non-finite policies, stage errors, progress,
 * allocations (writing and runs over log files: test_pipeline_write.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/pipeline.h"
#include "pipeline_support.h"
#include "support.h"

/* A stage that fails at sample 5 (to check how a stage's error travels). */
static int failing_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    (void)err;
    setup->out[0] = setup->in[0];
    *state = NULL;
    return RB_OK;
}

static int failing_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)state, (void)t, (void)in;
    out[0][0] = 0;
    return k == 5 ? rb_err_set(err, RB_ENUMERIC, "boom") : RB_OK;
}

static const char *const one_in[] = {"x"};
static const char *const one_out[] = {"y"};
static const rb_stage_type failing_type = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "failing",
    .summary = "fails at sample 5",
    .inputs = one_in,
    .n_inputs = 1,
    .outputs = one_out,
    .n_outputs = 1,
    .create = failing_create,
    .step = failing_step,
};

/* A stage that steps fine and fails in finish() (RB_EINPUT, a code no other path of the run gives here). */
static int late_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)state, (void)k, (void)t, (void)in, (void)err;
    out[0][0] = 0;
    return RB_OK;
}

static int late_finish(void *state, rb_err *err)
{
    (void)state;
    return rb_err_set(err, RB_EINPUT, "too late");
}

static const rb_stage_type late_type = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "late",
    .summary = "fails in finish",
    .inputs = one_in,
    .n_inputs = 1,
    .outputs = one_out,
    .n_outputs = 1,
    .create = failing_create,
    .step = late_step,
    .finish = late_finish,
};

/* A stage with three outputs of different widths, all from its state: sum (n) the running sum of x, pair
 * (2n) x and twice the sum interleaved, count (1) the samples seen. It checks that its rows do not overlap
 * (what it wrote to sum is still there after writing pair and count). */
typedef struct multi_state {
    size_t n;
    double count;
    double *sum;
} multi_state;

static void multi_destroy(void *state)
{
    multi_state *m = state;
    if (m)
        rb_free(m->sum);
    rb_free(m);
}

static int multi_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    size_t n = setup->in[0].width;
    multi_state *m = rb_calloc(1, sizeof *m);
    if (!m || !(m->sum = rb_calloc(n ? n : 1, sizeof *m->sum))) {
        multi_destroy(m);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    m->n = n;
    setup->out[0] = setup->in[0];
    setup->out[1] = (rb_port){2 * n, NULL, NULL};
    setup->out[2] = (rb_port){1, NULL, NULL};
    *state = m;
    return RB_OK;
}

static int multi_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)k, (void)t;
    multi_state *m = state;
    for (size_t i = 0; i < m->n; i++) {
        m->sum[i] += in[0][i];
        out[0][i] = m->sum[i];
        out[1][2 * i] = in[0][i];
        out[1][2 * i + 1] = 2 * m->sum[i];
    }
    out[2][0] = ++m->count;
    for (size_t i = 0; i < m->n; i++)
        if (out[0][i] != m->sum[i])
            return rb_err_set(err, RB_EINVAL, "output rows overlap");
    return RB_OK;
}

static const char *const multi_out[] = {"sum", "pair", "count"};
static const rb_stage_type multi_type = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "multi",
    .summary = "three outputs of different widths",
    .inputs = one_in,
    .n_inputs = 1,
    .outputs = multi_out,
    .n_outputs = 3,
    .create = multi_create,
    .step = multi_step,
    .destroy = multi_destroy,
};

/* A stage with an optional second input: out = x + y where y is wired, else x; it checks it sees width 0. */
static int opt_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    if (setup->in[1].width != 0 && setup->in[1].width != setup->in[0].width)
        return rb_err_set(err, RB_ECONFIG, "y must match x");
    setup->out[0] = setup->in[0];
    *state = (void *)(uintptr_t)(setup->in[1].width + 1); /* width of y + 1: never NULL */
    return RB_OK;
}

static int opt_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)k, (void)t, (void)err;
    size_t wy = (size_t)(uintptr_t)state - 1;
    out[0][0] = in[0][0] + (wy ? in[1][0] : 0);
    return in[1] ? RB_OK : rb_err_set(err, RB_EINVAL, "unwired input is NULL");
}

static const char *const opt_in[] = {"x", "y"};
static const rb_stage_type opt_type = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "opt",
    .summary = "x + optional y",
    .inputs = opt_in,
    .n_inputs = 2,
    .optional_inputs = 2,
    .outputs = one_out,
    .n_outputs = 1,
    .create = opt_create,
    .step = opt_step,
};

rb_registry *reg;

static void setup_registry(void)
{
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK);
    cr_assert_eq(rb_registry_add(reg, &failing_type, &err), RB_OK);
    cr_assert_eq(rb_registry_add(reg, &late_type, &err), RB_OK);
    cr_assert_eq(rb_registry_add(reg, &multi_type, &err), RB_OK);
    cr_assert_eq(rb_registry_add(reg, &opt_type, &err), RB_OK);
}

static void free_registry(void) { rb_registry_free(reg); }

TestSuite(pipeline_run, .init = setup_registry, .fini = free_registry);

rb_log *make_log(size_t T, double dt, double t0)
{
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    double *t = malloc(T * sizeof *t), *q = malloc(2 * T * sizeof *q), *qd = malloc(2 * T * sizeof *qd);
    double *acc = malloc(3 * T * sizeof *acc);
    for (size_t k = 0; k < T; k++) {
        t[k] = t0 + (double)k * dt;
        q[2 * k] = 2 * t[k];
        q[2 * k + 1] = 1 - t[k];
        qd[2 * k] = 2.5;
        qd[2 * k + 1] = -1;
    }
    const char *names[] = {"hip", "knee"}, *units[] = {"rad", "rad"}, *vunits[] = {"rad/s", "rad/s"};
    cr_assert_eq(rb_log_add_channel_copy(log, "joints/q", T, 2, t, q, names, units, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_add_channel_copy(log, "joints/qd", T, 2, t, qd, names, vunits, &err), RB_OK);
    size_t Ta = T / 2;
    for (size_t k = 0; k < Ta; k++) {
        t[k] = t0 + 0.05 + (double)k * 2 * dt;
        acc[3 * k] = acc[3 * k + 1] = acc[3 * k + 2] = 9.81;
    }
    cr_assert_eq(rb_log_add_channel_copy(log, "imu/acc", Ta, 3, t, acc, NULL, NULL, &err), RB_OK);
    free(t);
    free(q);
    free(qd);
    free(acc);
    return log;
}

const char *run_config =
    "{\n"
    "  \"clock\": {\"rate\": 100},\n"
    "  \"signals\": {\"q\": {\"channel\": \"joints/q\"}, \"qd_true\": {\"channel\": \"joints/qd\"}},\n"
    "  \"stages\": [\n"
    "    {\"id\": \"fd\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, \"out\": {\"dx\": \"qd_fd\"}},\n"
    "    {\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"q_lp\"}, "
    "\"params\": {\"cutoff_hz\": 5}}\n"
    "  ],\n"
    "  \"outputs\": [{\"path\": \"est.h5\", \"signals\": [\"qd_fd\", \"q_lp\"]}],\n"
    "  \"metrics\": [{\"estimate\": \"qd_fd\", \"reference\": \"qd_true\", \"window\": [0.005, 10]}],\n"
    "  \"reports\": [\"report.md\", \"report.json\"]\n"
    "}\n";

rb_pipeline *load(const char *text)
{
    rb_pipeline *p;
    rb_err err;
    cr_assert_eq(rb_pipeline_load_text(text, strlen(text), "run.json", NULL, reg, &p, &err), RB_OK, "%s", err.msg);
    return p;
}

rb_pipeline *load_edited(const char *from, const char *to)
{
    const char *at = strstr(run_config, from);
    cr_assert_not_null(at, "%s", from);
    char *text = rb_asprintf("%.*s%s%s", (int)(at - run_config), run_config, to, at + strlen(from));
    rb_pipeline *p = load(text);
    rb_free(text);
    return p;
}

static bool starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

int run(const rb_pipeline *p, const rb_log *log, rb_run_result **res, rb_err *err)
{
    rb_err_clear(err);
    return rb_pipeline_run_log(p, log, NULL, 0, NULL, res, err);
}

Test(pipeline_run, records_expected_signals_and_metrics)
{
    rb_pipeline *p = load(run_config);
    rb_log *log = make_log(101, 0.01, 0.0);
    rb_run_result *res;
    rb_err err;
    cr_assert_eq(run(p, log, &res, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(res->clock.n, 101);
    cr_assert_eq(res->clock.t[0], 0.0);
    cr_assert_eq(res->dt, 0.01);
    cr_assert_str_eq(res->run_name, "run/memory");
    cr_assert_eq(res->n_recorded, 3, "outputs and metric operands only");
    cr_assert_null(rb_run_result_signal(res, "q"), "q is neither written nor scored");
    cr_assert_not_null(rb_run_result_signal(res, "qd_true"));
    cr_assert_eq(res->n_warnings, 0);

    const rb_run_signal *qd = rb_run_result_signal(res, "qd_fd");
    cr_assert_eq(qd->width, 2);
    cr_assert_str_eq(qd->names[1], "knee");
    cr_assert_str_eq(qd->units[0], "rad/s");
    cr_assert_eq(qd->data[0], 0.0);
    for (size_t k = 1; k < 101; k++) {
        cr_assert(fabs(qd->data[2 * k] - 2.0) < 1e-9, "k %zu: %g", k, qd->data[2 * k]);
        cr_assert(fabs(qd->data[2 * k + 1] + 1.0) < 1e-9);
    }
    const rb_run_signal *lp = rb_run_result_signal(res, "q_lp");
    double a = 1 - exp(-2 * M_PI * 5 * 0.01), y = 0;
    for (size_t k = 0; k < 101; k++) {
        double x = 2 * res->clock.t[k];
        y = k == 0 ? x : y + a * (x - y);
        cr_assert(fabs(lp->data[2 * k] - y) < 1e-12, "k %zu", k);
    }

    /* metric rows: hip off by 0.5, knee exact, pooled over both; k = 0 lies outside the window */
    const rb_report *rep = res->report;
    cr_assert_eq(rep->n_rows, 3);
    cr_assert_str_eq(rep->rows[0].run, "run/memory");
    cr_assert_str_eq(rep->rows[0].estimate, "qd_fd");
    cr_assert_str_eq(rep->rows[0].reference, "qd_true");
    cr_assert_str_eq(rep->rows[0].element, "hip");
    cr_assert_str_eq(rep->rows[2].element, "all");
    cr_assert_eq(rep->rows[0].stats.n, 100);
    cr_assert(fabs(rep->rows[0].stats.rmse - 0.5) < 1e-9);
    cr_assert(fabs(rep->rows[0].stats.mae - 0.5) < 1e-9);
    cr_assert(rep->rows[1].stats.rmse < 1e-9);
    cr_assert(fabs(rep->rows[2].stats.mse - 0.125) < 1e-9);
    cr_assert(fabs(rep->rows[2].stats.rmse - sqrt(0.125)) < 1e-9);
    rb_run_result_free(res);
    rb_log_free(log);
    rb_pipeline_free(p);
}

Test(pipeline_run, clock_spans_the_common_time_and_the_window)
{
    /* imu/acc covers [0.05, 2.03], joints [0, 1.99]: the uniform clock covers the overlap */
    rb_pipeline *p = load_edited("\"qd_true\": {\"channel\": \"joints/qd\"}",
                                 "\"qd_true\": {\"channel\": \"joints/qd\"}, \"acc\": {\"channel\": \"imu/acc\"}");
    rb_log *log = make_log(200, 0.01, 0.0);
    rb_run_result *res;
    rb_err err;
    cr_assert_eq(run(p, log, &res, &err), RB_OK, "%s", err.msg);
    cr_assert(fabs(res->clock.t[0] - 0.05) < 1e-12, "%.17g", res->clock.t[0]);
    cr_assert_eq(res->clock.n, 195);
    cr_assert(res->clock.t[194] <= log->channels[0].time[199], "%.17g", res->clock.t[194]);
    rb_run_result_free(res);
    rb_pipeline_free(p);

    p = load_edited("\"clock\": {\"rate\": 100},", "\"clock\": {\"rate\": 100}, \"window\": [0.2, 0.5],");
    cr_assert_eq(run(p, log, &res, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(res->clock.n, 31);
    cr_assert_eq(res->clock.t[0], 0.2);
    rb_run_result_free(res);
    rb_pipeline_free(p);

    p = load_edited("\"clock\": {\"rate\": 100},", "\"clock\": {\"rate\": 100}, \"window\": [5, 6],");
    cr_assert_eq(run(p, log, &res, &err), RB_EINPUT);
    cr_assert(starts_with(err.msg, "memory: the bound channels share no time inside the window [5, 6] s"), "%s",
              err.msg);
    cr_assert_null(res);
    rb_pipeline_free(p);
    rb_log_free(log);
}

Test(pipeline_run, channel_clock_uses_the_channel_times)
{
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    double t[300], q[300];
    for (size_t k = 0; k < 300; k++) {
        t[k] = 0.01 * (double)k + 0.003 * sin(1.7 * (double)k);
        q[k] = 3 * t[k];
    }
    cr_assert_eq(rb_log_add_channel_copy(log, "enc", 300, 1, t, q, NULL, NULL, &err), RB_OK);
    rb_pipeline *p = load("{\"clock\": {\"channel\": \"enc\"}, \"signals\": {\"q\": {\"channel\": \"enc\"}},\n"
                          " \"stages\": [{\"id\": \"fd\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, "
                          "\"out\": {\"dx\": \"v\"}}],\n"
                          " \"outputs\": [{\"path\": \"v.csv\", \"signals\": [\"v\"]}]}");
    rb_run_result *res;
    cr_assert_eq(run(p, log, &res, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(res->clock.n, 300);
    cr_assert_eq(memcmp(res->clock.t, t, sizeof t), 0, "the channel's own timestamps");
    cr_assert(res->dt > 0.005 && res->dt < 0.015, "median interval %g", res->dt);
    const rb_run_signal *v = rb_run_result_signal(res, "v");
    cr_assert_str_eq(v->names[0], "0");
    for (size_t k = 1; k < 300; k++)
        cr_assert(fabs(v->data[k] - 3.0) < 1e-9, "k %zu: %g", k, v->data[k]);
    rb_run_result_free(res);
    rb_pipeline_free(p);
    rb_log_free(log);
}

Test(pipeline_run, intermediate_signals_use_one_row_and_give_the_same_numbers)
{
    const char *chain = "{\"clock\": {\"rate\": 100}, \"signals\": {\"q\": {\"channel\": \"joints/q\"}},\n"
                        " \"stages\": [{\"id\": \"fd\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q_lp\"}, "
                        "\"out\": {\"dx\": \"d\"}},\n"
                        "  {\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"q_lp\"}, "
                        "\"params\": {\"cutoff_hz\": 3}}],\n"
                        " \"outputs\": [{\"path\": \"d.csv\", \"signals\": [\"d\"%s]}]}";
    char *only_d = rb_asprintf(chain, ""), *both = rb_asprintf(chain, ", \"q_lp\"");
    rb_pipeline *p1 = load(only_d), *p2 = load(both);
    cr_assert(!p1->signal_table[rb_pipeline_signal_index(p1, "q_lp")].recorded);
    rb_log *log = make_log(150, 0.01, 1.0);
    rb_run_result *r1, *r2;
    rb_err err;
    cr_assert_eq(run(p1, log, &r1, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(run(p2, log, &r2, &err), RB_OK, "%s", err.msg);
    const rb_run_signal *d1 = rb_run_result_signal(r1, "d"), *d2 = rb_run_result_signal(r2, "d");
    cr_assert_eq(memcmp(d1->data, d2->data, r1->clock.n * 2 * sizeof(double)), 0);
    cr_assert(fabs(d1->data[2 * 100] - 2.0) < 0.05, "the filtered ramp's slope settles at 2: %g", d1->data[200]);
    rb_run_result_free(r1);
    rb_run_result_free(r2);
    rb_pipeline_free(p1);
    rb_pipeline_free(p2);
    rb_log_free(log);
    rb_free(only_d);
    rb_free(both);
}

/* Unwired outputs are computed into the runner's scratch: whichever ports are wired, the wired ones carry
 * the same numbers as when every port is wired (the stage's state sees every sample either way), and the
 * runner allocates as often for a long run as for a short one. */
Test(pipeline_run, unwired_outputs_leave_the_wired_ones_unchanged)
{
    const char *tmpl = "{\"clock\": {\"rate\": 100}, \"signals\": {\"q\": {\"channel\": \"joints/q\"}},\n"
                       " \"stages\": [{\"id\": \"m\", \"type\": \"multi\", \"in\": {\"x\": \"q\"}, \"out\": {%s}},\n"
                       "  {\"id\": \"fd\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"},\n"
                       "   \"out\": {\"dx\": \"d\"}}],\n"
                       " \"outputs\": [{\"path\": \"m.csv\", \"signals\": [%s]}]}";
    const char *variants[][2] = {
        {"\"sum\": \"s\", \"pair\": \"p\", \"count\": \"c\"", "\"s\", \"p\", \"c\", \"d\""},
        {"\"pair\": \"p\"", "\"p\", \"d\""},
        {"\"count\": \"c\", \"sum\": \"s\"", "\"d\", \"c\", \"s\""},
        {"\"count\": \"c\"", "\"c\""},
    };
    rb_log *log = make_log(150, 0.01, 0.0);
    rb_run_result *all = NULL;
    rb_err err;
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        char *text = rb_asprintf(tmpl, variants[v][0], variants[v][1]);
        rb_pipeline *p = load(text);
        rb_run_result *res;
        cr_assert_eq(run(p, log, &res, &err), RB_OK, "variant %zu: %s", v, err.msg);
        if (v == 0) {
            all = res;
            cr_assert_eq(rb_run_result_signal(all, "p")->width, 4);
            cr_assert(rb_run_result_signal(all, "c")->data[149] == 150.0);
        } else {
            cr_assert_eq(res->n_recorded, all->n_recorded - (v == 1 ? 2 : v == 2 ? 1 : 3));
            for (size_t i = 0; i < res->n_recorded; i++) {
                const rb_run_signal *got = &res->recorded[i], *want = rb_run_result_signal(all, got->name);
                cr_assert(want && want->width == got->width, "variant %zu: %s", v, got->name);
                cr_assert_eq(memcmp(got->data, want->data, res->clock.n * got->width * sizeof(double)), 0,
                             "variant %zu: %s", v, got->name);
                cr_assert_str_eq(got->names[0], want->names[0]);
            }
            rb_run_result_free(res);
        }
        rb_pipeline_free(p);
        rb_free(text);
    }
    rb_run_result_free(all);
    rb_log_free(log);

    /* the scratch is set up once: no allocation per sample */
    char *text = rb_asprintf(tmpl, variants[1][0], variants[1][1]);
    rb_pipeline *p = load(text);
    long allocations[2];
    for (int i = 0; i < 2; i++) {
        log = make_log(i ? 20001 : 101, 0.01, 0.0);
        rb_run_result *res;
        rb_alloc_fail_after(-1); /* restarts the count */
        cr_assert_eq(run(p, log, &res, &err), RB_OK, "%s", err.msg);
        allocations[i] = rb_alloc_fail_after(-1);
        rb_run_result_free(res);
        rb_log_free(log);
    }
    cr_assert_eq(allocations[0], allocations[1], "%ld vs %ld allocations", allocations[0], allocations[1]);
    rb_pipeline_free(p);
    rb_free(text);
}

static void expect_run_error(const char *from, const char *to, int code, const char *message)
{
    rb_pipeline *p = load_edited(from, to);
    rb_log *log = make_log(101, 0.01, 0.0);
    rb_run_result *res = (rb_run_result *)1;
    rb_err err;
    cr_assert_eq(run(p, log, &res, &err), code, "%s", err.msg);
    cr_assert_null(res);
    cr_assert_str_eq(err.msg, message);
    rb_log_free(log);
    rb_pipeline_free(p);
}

Test(pipeline_run, missing_channels_and_elements_are_named)
{
    expect_run_error("\"q\": {\"channel\": \"joints/q\"}", "\"q\": {\"channel\": \"joints_state/positions\"}",
                     RB_ENOTFOUND, "memory: channel joints_state/positions not found (signals.q.channel)");
    expect_run_error("\"q\": {\"channel\": \"joints/q\"}",
                     "\"q\": {\"channel\": \"joints/q\", \"elements\": [\"hip\", \"ankle\"]}", RB_ENOTFOUND,
                     "memory: channel joints/q has no element 'ankle' (signals.q.elements[1])");
    expect_run_error("\"q\": {\"channel\": \"joints/q\"}", "\"q\": {\"channel\": \"joints/q\", \"elements\": [1, 2]}",
                     RB_EINPUT,
                     "memory: channel joints/q has 2 elements: index 2 is out of range (signals.q.elements[1])");
    expect_run_error("\"clock\": {\"rate\": 100}", "\"clock\": {\"channel\": \"enc\"}", RB_ENOTFOUND,
                     "memory: channel enc not found (clock.channel)");
}

Test(pipeline_run, selected_elements_and_metric_width_mismatch)
{
    const char *text =
        "{\"clock\": {\"rate\": 100},\n"
        " \"signals\": {\"knee\": {\"channel\": \"joints/q\", \"elements\": [\"knee\"]},\n"
        "             \"acc\": {\"channel\": \"imu/acc\", \"elements\": [2, 0], \"interp\": \"hold\"}},\n"
        " \"metrics\": [{\"estimate\": \"knee\", \"reference\": \"acc\"}]}";
    rb_pipeline *p = load(text);
    rb_log *log = make_log(101, 0.01, 0.0);
    rb_run_result *res;
    rb_err err;
    cr_assert_eq(run(p, log, &res, &err), RB_EDIM);
    cr_assert_str_eq(err.msg, "memory: metrics[0]: estimate knee has 1 elements, reference acc has 2");
    rb_pipeline_free(p);

    p = load("{\"clock\": {\"rate\": 100}, \"signals\": {\"acc\": {\"channel\": \"imu/acc\", \"elements\": [2, 0]}},"
             " \"outputs\": [{\"path\": \"a.csv\", \"signals\": [\"acc\"]}]}");
    cr_assert_eq(run(p, log, &res, &err), RB_OK, "%s", err.msg);
    const rb_run_signal *acc = rb_run_result_signal(res, "acc");
    cr_assert_eq(acc->width, 2);
    cr_assert_str_eq(acc->names[0], "2", "element names follow the selection");
    cr_assert_str_eq(acc->names[1], "0");
    cr_assert_eq(acc->data[1], 9.81);
    rb_run_result_free(res);
    rb_pipeline_free(p);
    rb_log_free(log);
}

/* Several channels bound as one signal: each resampled on its own clock (imu/acc has half the rate and a
 * later start), then concatenated in list order with their element names. */
Test(pipeline_run, several_channels_concatenate_in_list_order)
{
    rb_pipeline *p = load("{\"clock\": {\"rate\": 100},\n"
                          " \"signals\": {\"all\": {\"channel\": [\"joints/q\", \"imu/acc\", \"joints/qd\"]},\n"
                          "             \"q\": {\"channel\": \"joints/q\"}},\n"
                          " \"outputs\": [{\"path\": \"a.csv\", \"signals\": [\"all\", \"q\"]}]}");
    rb_log *log = make_log(101, 0.01, 0.0);
    rb_run_result *res;
    rb_err err;
    cr_assert_eq(run(p, log, &res, &err), RB_OK, "%s", err.msg);
    const rb_run_signal *all = rb_run_result_signal(res, "all"), *q = rb_run_result_signal(res, "q");
    cr_assert_eq(all->width, 7);
    /* hip and knee are in two channels: every element is named after its channel too */
    const char *names[] = {"joints/q/hip", "joints/q/knee", "imu/acc/0",     "imu/acc/1",
                           "imu/acc/2",    "joints/qd/hip", "joints/qd/knee"};
    const char *units[] = {"rad", "rad", "", "", "", "rad/s", "rad/s"};
    for (size_t e = 0; e < 7; e++) {
        cr_assert_str_eq(all->names[e], names[e]);
        cr_assert_str_eq(all->units[e], units[e]);
    }
    cr_assert_gt(res->clock.t[0], 0.04, "the clock starts where imu/acc starts");
    for (size_t k = 0; k < res->clock.n; k++) {
        const double *row = all->data + 7 * k;
        cr_assert_eq(row[0], q->data[2 * k]);
        cr_assert_eq(row[1], q->data[2 * k + 1]);
        cr_assert_float_eq(row[2], 9.81, 1e-12);
        cr_assert_eq(row[5], 2.5);
        cr_assert_eq(row[6], -1.0);
    }
    rb_run_result_free(res);
    rb_pipeline_free(p);

    p = load("{\"clock\": {\"rate\": 100}, \"signals\": {\"all\": {\"channel\": [\"joints/q\", \"imu/gyro\"]}}}");
    cr_assert_eq(run(p, log, &res, &err), RB_ENOTFOUND);
    cr_assert_str_eq(err.msg, "memory: channel imu/gyro not found (signals.all.channel[1])");
    rb_pipeline_free(p);
    rb_log_free(log);

    rb_pipeline *bad;
    const char *text = "{\"clock\": {\"rate\": 100}, \"signals\": {\"all\": {\"channel\": [\"a\", \"b\"], "
                       "\"elements\": [0]}}}";
    cr_assert_eq(rb_pipeline_load_text(text, strlen(text), "run.json", NULL, reg, &bad, &err), RB_ECONFIG);
    cr_assert_str_eq(err.msg, "run.json:1:69: signals.all.elements: not with several channels (bind the channels one "
                              "by one to select elements)");
}

Test(pipeline_run, optional_inputs_may_be_left_unwired)
{
    rb_pipeline *p =
        load("{\"clock\": {\"rate\": 100}, \"signals\": {\"q\": {\"channel\": \"joints/q\"}},\n"
             " \"stages\": [{\"id\": \"a\", \"type\": \"opt\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"qa\"}},\n"
             "            {\"id\": \"b\", \"type\": \"opt\", \"in\": {\"x\": \"q\", \"y\": \"qa\"}, \"out\": {\"y\": "
             "\"qb\"}}],\n"
             " \"outputs\": [{\"path\": \"a.csv\", \"signals\": [\"qa\", \"qb\", \"q\"]}]}");
    cr_assert_eq(p->stages[0].in_signal[1], SIZE_MAX);
    char *resolved = rb_pipeline_resolved_json(p);
    cr_assert_not_null(strstr(resolved, "\"in\":\t{\n\t\t\t\t\"x\":\t\"q\"\n\t\t\t}"), "%s", resolved);
    rb_free(resolved);
    rb_log *log = make_log(101, 0.01, 0.0);
    rb_run_result *res;
    rb_err err;
    cr_assert_eq(run(p, log, &res, &err), RB_OK, "%s", err.msg);
    const rb_run_signal *q = rb_run_result_signal(res, "q"), *qa = rb_run_result_signal(res, "qa"),
                        *qb = rb_run_result_signal(res, "qb");
    for (size_t k = 0; k < res->clock.n; k++) {
        cr_assert_eq(qa->data[2 * k], q->data[2 * k]);
        cr_assert_eq(qb->data[2 * k], 2 * q->data[2 * k]);
    }
    rb_run_result_free(res);
    rb_pipeline_free(p);
    rb_log_free(log);
    rb_pipeline *bad;
    const char *text = "{\"clock\": {\"rate\": 100}, \"signals\": {\"q\": {\"channel\": \"a\"}}, \"stages\": [{\"id\": "
                       "\"a\", \"type\": \"opt\", \"in\": {\"y\": \"q\"}, \"out\": {\"y\": \"qa\"}}]}";
    cr_assert_eq(rb_pipeline_load_text(text, strlen(text), "run.json", NULL, reg, &bad, &err), RB_ECONFIG);
    cr_assert_not_null(strstr(err.msg, "missing input port 'x'"), "%s", err.msg);
}

Test(pipeline_run, bad_timestamps_are_input_errors)
{
    rb_pipeline *p = load(run_config);
    rb_log *log = make_log(101, 0.01, 0.0);
    rb_channel *q = &log->channels[0];
    q->time[7] = q->time[6];
    rb_run_result *res;
    rb_err err;
    cr_assert_eq(run(p, log, &res, &err), RB_EINPUT);
    cr_assert(starts_with(err.msg, "memory: channel joints/q: sample 7:"), "%s", err.msg);
    rb_log_free(log);
    rb_pipeline_free(p);
}

Test(pipeline_run, gaps_are_warnings)
{
    rb_pipeline *p = load(run_config);
    rb_log *log = make_log(101, 0.01, 0.0);
    for (int c = 0; c < 2; c++)
        for (size_t k = 60; k < 101; k++)
            log->channels[c].time[k] += 0.2; /* one 0.21 s interval after sample 59 */
    rb_run_result *res;
    rb_err err;
    cr_assert_eq(run(p, log, &res, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(res->n_warnings, 2, "one per channel");
    cr_assert(starts_with(res->warnings[0], "memory: channel joints/q: 1 gap longer than 3 x the median interval"),
              "%s", res->warnings[0]);
    cr_assert(strstr(res->warnings[0], "first before sample 60"), "%s", res->warnings[0]);
    rb_run_result_free(res);
    rb_log_free(log);
    rb_pipeline_free(p);
}

Test(pipeline_run, nonfinite_error_names_channel_and_sample)
{
    rb_pipeline *p = load(run_config);
    rb_log *log = make_log(101, 0.01, 0.0);
    log->channels[0].data[2 * 10 + 1] = NAN;
    rb_run_result *res;
    rb_err err;
    cr_assert_eq(run(p, log, &res, &err), RB_EINPUT);
    cr_assert(starts_with(err.msg, "memory: signals.q: "), "%s", err.msg);
    cr_assert(strstr(err.msg, "channel joints/q"), "%s", err.msg);
    cr_assert(strstr(err.msg, "knee"), "%s", err.msg);
    cr_assert(strstr(err.msg, "sample 10 "), "%s", err.msg);
    rb_log_free(log);
    rb_pipeline_free(p);
}

Test(pipeline_run, nonfinite_hold_reports_the_count)
{
    rb_pipeline *p = load_edited("\"q\": {\"channel\": \"joints/q\"}",
                                 "\"q\": {\"channel\": \"joints/q\", \"nonfinite\": \"hold\"}");
    rb_log *log = make_log(101, 0.01, 0.0);
    log->channels[0].data[2 * 10 + 1] = NAN;
    log->channels[0].data[2 * 11 + 1] = INFINITY;
    rb_run_result *res;
    rb_err err;
    cr_assert_eq(run(p, log, &res, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(res->n_held[0], 2);
    cr_assert_eq(res->n_held[1], 0);
    cr_assert_eq(res->n_warnings, 1);
    cr_assert_str_eq(res->warnings[0], "memory: signal q: 2 non-finite values of channel joints/q held at the last "
                                       "finite value");
    const rb_run_signal *qd = rb_run_result_signal(res, "qd_fd");
    cr_assert(isfinite(qd->data[2 * 10 + 1]) && isfinite(qd->data[2 * 12 + 1]));
    rb_run_result_free(res);
    rb_log_free(log);
    rb_pipeline_free(p);
}

Test(pipeline_run, stage_errors_carry_stage_and_sample)
{
    rb_pipeline *p = load_edited("\"type\": \"lowpass\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"q_lp\"}, "
                                 "\"params\": {\"cutoff_hz\": 5}}",
                                 "\"type\": \"failing\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"q_lp\"}}");
    rb_log *log = make_log(101, 0.01, 0.0);
    rb_run_result *res;
    rb_err err;
    cr_assert_eq(run(p, log, &res, &err), RB_ENUMERIC);
    cr_assert_str_eq(err.msg, "memory: stage lp (failing): sample 5 (t = 0.050000000000000003 s): boom");
    rb_log_free(log);
    rb_pipeline_free(p);
}

/* The run fails with `want` and the message `msg_start...`; with err == NULL it fails with the same code
 * (a code taken from *err would be RB_OK there) and gives no result. */
static void expect_code_with_and_without_err(const rb_pipeline *p, const rb_log *log, int want, const char *msg_start)
{
    rb_run_result *res = NULL;
    rb_err err;
    cr_assert_eq(run(p, log, &res, &err), want, "%s", err.msg);
    cr_assert(starts_with(err.msg, msg_start), "%s", err.msg);
    cr_assert_null(res);
    int rc = rb_pipeline_run_log(p, log, NULL, 0, NULL, &res, NULL);
    cr_assert_eq(rc, want, "err == NULL: %s instead of %s", rb_status_name(rc), rb_status_name(want));
    cr_assert_null(res);
    rb_run_result_free(res);
}

Test(pipeline_run, failures_keep_their_code_when_err_is_null)
{
    static const char *lowpass = "\"type\": \"lowpass\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"q_lp\"}, "
                                 "\"params\": {\"cutoff_hz\": 5}}";
    rb_log *log = make_log(101, 0.01, 0.0);
    /* a stage's step() */
    rb_pipeline *p = load_edited(lowpass, "\"type\": \"failing\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"q_lp\"}}");
    expect_code_with_and_without_err(p, log, RB_ENUMERIC, "memory: stage lp (failing): sample 5 ");
    rb_pipeline_free(p);
    /* a stage's finish() */
    p = load_edited(lowpass, "\"type\": \"late\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"q_lp\"}}");
    expect_code_with_and_without_err(p, log, RB_EINPUT, "memory: stage lp (late): finish: too late");
    rb_pipeline_free(p);
    /* a stage's create(): friction_model cannot build element hip's model (F_s < F_c) */
    p = load_edited(lowpass, "\"type\": \"friction_model\", \"in\": {\"velocity\": \"q\"}, "
                             "\"out\": {\"tau_F\": \"q_lp\"}, \"params\": {\"model\": \"scv\", \"F_c\": [0.3], "
                             "\"F_s\": [0.2], \"F_v\": [0.7], \"v_s\": [0.01]}}");
    expect_code_with_and_without_err(p, log, RB_ECONFIG, "memory: stage lp (friction_model): stage lp: element hip: ");
    rb_pipeline_free(p);
    /* the runner's own check of a bound channel's timestamps */
    p = load(run_config);
    log->channels[0].time[7] = log->channels[0].time[6];
    expect_code_with_and_without_err(p, log, RB_EINPUT, "memory: channel joints/q: sample 7:");
    rb_pipeline_free(p);
    rb_log_free(log);
}

int count_calls(void *user, size_t done, size_t total)
{
    size_t *calls = user;
    calls[0]++;
    calls[1] = done;
    calls[2] = total;
    return 0;
}

static int cancel(void *user, size_t done, size_t total)
{
    (void)user, (void)done, (void)total;
    return 1;
}

Test(pipeline_run, progress_is_sparse_and_can_cancel)
{
    rb_pipeline *p = load_edited("\"rate\": 100", "\"rate\": 1000");
    rb_log *log = make_log(10001, 0.001, 0.0);
    size_t calls[3] = {0};
    rb_run_opts opts = {.progress = count_calls, .user = calls};
    rb_run_result *res;
    rb_err err;
    cr_assert_eq(rb_pipeline_run_log(p, log, NULL, 0, &opts, &res, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(res->clock.n, 10001);
    cr_assert_eq(calls[0], 3, "every 4096 samples (more than 1%%) and at the end: %zu calls", calls[0]);
    cr_assert_eq(calls[1], 10001);
    cr_assert_eq(calls[2], 10001);
    rb_run_result_free(res);
    opts.progress = cancel;
    cr_assert_eq(rb_pipeline_run_log(p, log, NULL, 0, &opts, &res, &err), RB_EINVAL);
    cr_assert_str_eq(err.msg, "memory: run cancelled by the caller");
    rb_log_free(log);
    rb_pipeline_free(p);
}

/* The per-sample loop allocates nothing: a run of 20 001 samples (five progress chunks; q_lp is an
 * intermediate signal, one row reused every sample) allocates exactly as often as a run of 101. */
Test(pipeline_run, allocations_do_not_grow_with_the_samples)
{
    rb_pipeline *p = load_edited("\"signals\": [\"qd_fd\", \"q_lp\"]", "\"signals\": [\"qd_fd\"]");
    cr_assert(!p->signal_table[rb_pipeline_signal_index(p, "q_lp")].recorded);
    const size_t samples[2] = {101, 20001};
    long allocations[2];
    for (int i = 0; i < 2; i++) {
        rb_log *log = make_log(samples[i], 0.01, 0.0);
        size_t calls[3] = {0};
        rb_run_opts opts = {.progress = count_calls, .user = calls};
        rb_run_result *res;
        rb_err err;
        rb_alloc_fail_after(-1); /* restarts the count */
        cr_assert_eq(rb_pipeline_run_log(p, log, NULL, 0, &opts, &res, &err), RB_OK, "%s", err.msg);
        allocations[i] = rb_alloc_fail_after(-1);
        cr_assert_eq(res->clock.n, samples[i]);
        cr_assert_eq(calls[0], i ? 5 : 1);
        rb_run_result_free(res);
        rb_log_free(log);
    }
    cr_assert_eq(allocations[0], allocations[1], "%ld allocations for %zu samples, %ld for %zu", allocations[0],
                 samples[0], allocations[1], samples[1]);
    rb_pipeline_free(p);
}
