/* What a binding does to its channel's elements: "names" for a file that leaves them unnamed ("0".."n-1"),
 * "scale" and "unit" for a log in other units, and names kept apart when several channels collide; on a log
 * (rb_pipeline_run_log), on a stream (rb_stream) and in friction training specs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/pipeline.h"
#include "roboest/training.h"
#include "support.h"

static rb_registry *reg;

static void setup_registry(void)
{
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK, "%s", err.msg);
}

static void free_registry(void) { rb_registry_free(reg); }

TestSuite(pipeline_bindings, .init = setup_registry, .fini = free_registry);

enum { T = 201, N = 3 };
static const double DEG = 0.017453292519943295; /* pi / 180 */

/* Element i of a smooth motion at time t, rad (or rad/s). */
static double motion(size_t i, double t) { return sin((1.0 + 0.5 * (double)i) * t + (double)i); }

/* channel `name`: N elements (names NULL: the reader's "0".."2"), motion(i, t) x factor, every unit `unit`. */
static void add(rb_log *log, const char *name, const char *const *names, double factor, const char *unit)
{
    double t[T], x[T * N];
    const char *units[N] = {unit, unit, unit};
    for (size_t k = 0; k < T; k++) {
        t[k] = 0.01 * (double)k;
        for (size_t i = 0; i < N; i++)
            x[k * N + i] = motion(i, t[k]) * factor;
    }
    rb_err err;
    cr_assert_eq(rb_log_add_channel_copy(log, name, T, N, t, x, names, units, &err), RB_OK, "%s", err.msg);
}

/* joints/q and joints/dq unnamed in rad and rad/s, joints/dq_deg the same velocities in deg/s, joints/named
 * with joint names, left/q and right/q two unnamed channels. */
static rb_log *make_log(void)
{
    static const char *const named[N] = {"hip", "knee", "ankle"};
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    add(log, "joints/q", NULL, 1.0, "rad");
    add(log, "joints/dq", NULL, 1.0, "rad/s");
    add(log, "joints/dq_deg", NULL, 1.0 / DEG, "deg/s");
    add(log, "joints/named", named, 1.0, "rad");
    add(log, "left/q", NULL, 1.0, "");
    add(log, "right/q", NULL, 2.0, "");
    return log;
}

static int load(const char *text, rb_pipeline **p, rb_err *err)
{
    *p = NULL;
    return rb_pipeline_load_text(text, strlen(text), "bind.json", NULL, reg, p, err);
}

static rb_pipeline *load_ok(const char *text)
{
    rb_pipeline *p;
    rb_err err;
    cr_assert_eq(load(text, &p, &err), RB_OK, "%s", err.msg);
    return p;
}

static rb_run_result *run_ok(const rb_pipeline *p, const rb_log *log)
{
    rb_run_result *res = NULL;
    rb_err err;
    cr_assert_eq(rb_pipeline_run_log(p, log, NULL, 0, NULL, &res, &err), RB_OK, "%s", err.msg);
    return res;
}

/* The config's names reach the binding, a stage's output (finite_difference keeps them) and the report rows. */
Test(pipeline_bindings, names_label_an_unnamed_channel_in_signals_stages_and_report)
{
    rb_pipeline *p = load_ok(
        "{\"clock\": {\"rate\": 100},"
        " \"signals\": {\"q\": {\"channel\": \"joints/q\", \"names\": [\"r_hip\", \"r_knee\", \"r_ankle\"]},"
        "             \"dq\": {\"channel\": \"joints/dq\", \"names\": [\"r_hip\", \"r_knee\", \"r_ankle\"]}},"
        " \"stages\": [{\"id\": \"d\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, \"out\": {\"dx\": "
        "\"qd\"}}],"
        " \"outputs\": [{\"path\": \"e.h5\", \"signals\": [\"q\", \"qd\"]}],"
        " \"metrics\": [{\"estimate\": \"qd\", \"reference\": \"dq\"}], \"reports\": [\"r.md\"]}");
    rb_log *log = make_log();
    rb_run_result *res = run_ok(p, log);
    const char *want[N] = {"r_hip", "r_knee", "r_ankle"};
    const rb_run_signal *q = rb_run_result_signal(res, "q"), *qd = rb_run_result_signal(res, "qd");
    for (size_t i = 0; i < N; i++) {
        cr_assert_str_eq(q->names[i], want[i]);
        cr_assert_str_eq(qd->names[i], want[i], "a stage's element-wise output keeps the names");
        cr_assert_str_eq(q->units[i], "rad", "without 'unit' the channel's units stay");
    }
    const rb_report *rep = res->report;
    cr_assert_eq(rep->n_rows, N + 1);
    for (size_t i = 0; i < N; i++)
        cr_assert_str_eq(rep->rows[i].element, want[i]);
    cr_assert_str_eq(rep->rows[N].element, "all");
    rb_run_result_free(res);
    rb_log_free(log);
    rb_pipeline_free(p);
}

Test(pipeline_bindings, names_follow_the_selection)
{
    rb_pipeline *p = load_ok("{\"clock\": {\"rate\": 100}, \"signals\": {\"q\": {\"channel\": \"joints/q\", "
                             "\"elements\": [2, 0], \"names\": [\"ankle\", \"hip\"]}},"
                             " \"outputs\": [{\"path\": \"e.h5\", \"signals\": [\"q\"]}]}");
    rb_log *log = make_log();
    rb_run_result *res = run_ok(p, log);
    const rb_run_signal *q = rb_run_result_signal(res, "q");
    cr_assert_eq(q->width, 2);
    cr_assert_str_eq(q->names[0], "ankle");
    cr_assert_str_eq(q->names[1], "hip");
    cr_assert_eq(q->data[0], motion(2, res->clock.t[0]));
    rb_run_result_free(res);
    rb_log_free(log);
    rb_pipeline_free(p);
}

/* A count that differs is an error naming the key, the binding, the channel and both counts: at load when
 * "elements" fixes the width, when the log is run otherwise. */
Test(pipeline_bindings, names_of_the_wrong_count)
{
    rb_pipeline *p;
    rb_err err;
    cr_assert_eq(load("{\"clock\": {\"rate\": 100}, \"signals\": {\"q\": {\"channel\": \"joints/q\", "
                      "\"elements\": [2, 0], \"names\": [\"a\", \"b\", \"c\"]}}}",
                      &p, &err),
                 RB_ECONFIG);
    cr_assert_str_eq(err.msg, "bind.json:1:87: signals.q.names: 3 names for the 2 elements binding 'q' selects from "
                              "channel joints/q");
    p = load_ok("{\"clock\": {\"rate\": 100}, \"signals\": {\"q\": {\"channel\": \"joints/q\", \"names\": [\"a\", "
                "\"b\"]}}, \"outputs\": [{\"path\": \"e.h5\", \"signals\": [\"q\"]}]}");
    rb_log *log = make_log();
    rb_run_result *res = NULL;
    cr_assert_eq(rb_pipeline_run_log(p, log, NULL, 0, NULL, &res, &err), RB_EINPUT);
    cr_assert_null(res);
    cr_assert_str_eq(err.msg, "memory: signals.q.names: 2 names for the 3 elements of binding 'q' (channel joints/q)");
    rb_pipeline_free(p);
    rb_log_free(log);
}

/* Renaming elements a file names would relabel data silently if the order were wrong: refused. */
Test(pipeline_bindings, names_refused_for_a_channel_with_element_names)
{
    rb_pipeline *p = load_ok("{\"clock\": {\"rate\": 100}, \"signals\": {\"q\": {\"channel\": \"joints/named\", "
                             "\"names\": [\"a\", \"b\", \"c\"]}}, \"outputs\": [{\"path\": \"e.h5\", \"signals\": "
                             "[\"q\"]}]}");
    rb_log *log = make_log();
    rb_run_result *res = NULL;
    rb_err err;
    cr_assert_eq(rb_pipeline_run_log(p, log, NULL, 0, NULL, &res, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "signals.q.names: channel joints/named names its elements ('hip', ...)"), "%s", err.msg);
    rb_pipeline_free(p);
    rb_log_free(log);
}

static void expect_config_error(const char *binding, const char *want)
{
    char text[512];
    snprintf(text, sizeof text, "{\"clock\": {\"rate\": 100}, \"signals\": {\"q\": %s}}", binding);
    rb_pipeline *p;
    rb_err err;
    cr_assert_eq(load(text, &p, &err), RB_ECONFIG, "%s", binding);
    cr_assert_null(p);
    cr_assert(strstr(err.msg, want), "%s: got '%s'", binding, err.msg);
    cr_assert_null(strchr(err.msg, '\n'));
}

Test(pipeline_bindings, bad_names_scales_and_units)
{
    expect_config_error("{\"channel\": \"joints/q\", \"names\": [\"a\", \"b\", \"a\"]}",
                        "signals.q.names[2]: 'a' is also names[0] (names must be unique)");
    expect_config_error("{\"channel\": \"joints/q\", \"names\": [\"a\", \"all\", \"c\"]}",
                        "signals.q.names[1]: 'all' is the pooled row of reports");
    expect_config_error("{\"channel\": \"joints/q\", \"names\": []}", "signals.q.names:");
    expect_config_error("{\"channel\": \"joints/q\", \"names\": [\"a\", 3]}", "signals.q.names[1]:");
    expect_config_error("{\"channel\": \"joints/q\", \"scale\": 0, \"unit\": \"rad\"}",
                        "signals.q.scale: must be non-zero");
    expect_config_error("{\"channel\": \"joints/q\", \"scale\": 1e999, \"unit\": \"rad\"}",
                        "signals.q.scale: expected a finite number");
    expect_config_error("{\"channel\": \"joints/q\", \"scale\": \"deg\", \"unit\": \"rad\"}",
                        "signals.q.scale: expected a number");
    expect_config_error("{\"channel\": \"joints/q\", \"scale\": 0.5}", "signals.q.scale: needs 'unit'");
    expect_config_error("{\"channel\": \"joints/q\", \"unit\": \"\"}", "signals.q.unit:");
    expect_config_error("{\"channel\": \"joints/q\", \"units\": \"rad\"}", "(did you mean 'unit'?)");
}

/* The same velocities logged in deg/s and scaled give the rad/s log's numbers, through a stage too, and the unit
 * after scaling; provenance records the scale. */
Test(pipeline_bindings, scale_reads_deg_per_s_as_rad_per_s)
{
    static const char fmt[] =
        "{\"clock\": {\"rate\": 100}, \"signals\": {\"v\": %s},"
        " \"stages\": [{\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"v\"}, \"out\": {\"y\": \"v_lp\"},"
        " \"params\": {\"cutoff_hz\": 5}}], \"outputs\": [{\"path\": \"e.h5\", \"signals\": [\"v\", \"v_lp\"]}]}";
    char a[1024], b[1024];
    snprintf(a, sizeof a, fmt, "{\"channel\": \"joints/dq\"}");
    snprintf(b, sizeof b, fmt,
             "{\"channel\": \"joints/dq_deg\", \"scale\": 0.017453292519943295, \"unit\": \"rad/s\", \"interp\": "
             "\"linear\"}");
    rb_pipeline *pa = load_ok(a), *pb = load_ok(b);
    rb_log *log = make_log();
    rb_run_result *ra = run_ok(pa, log), *rb = run_ok(pb, log);
    const char *const sigs[] = {"v", "v_lp"};
    for (size_t s = 0; s < 2; s++) {
        const rb_run_signal *x = rb_run_result_signal(ra, sigs[s]), *y = rb_run_result_signal(rb, sigs[s]);
        cr_assert_eq(x->width, y->width);
        for (size_t k = 0; k < ra->clock.n * x->width; k++)
            cr_assert(fabs(x->data[k] - y->data[k]) <= 1e-12, "%s[%zu]: %.17g vs %.17g", sigs[s], k, x->data[k],
                      y->data[k]);
    }
    const rb_run_signal *v = rb_run_result_signal(rb, "v");
    for (size_t i = 0; i < N; i++)
        cr_assert_str_eq(v->units[i], "rad/s", "the unit after scaling, not the log's deg/s");
    rb_provenance pv = {0, NULL, NULL};
    rb_err err;
    cr_assert_eq(rb_pipeline_provenance(pb, "memory", "", &pv, &err), RB_OK);
    bool scale = false, unit = false;
    for (size_t k = 0; k < pv.n; k++) {
        scale |= strcmp(pv.keys[k], "signals.v.scale") == 0 && strcmp(pv.values[k], "0.017453292519943295") == 0;
        unit |= strcmp(pv.keys[k], "signals.v.unit") == 0 && strcmp(pv.values[k], "rad/s") == 0;
    }
    cr_assert(scale && unit, "provenance records the scale and the unit");
    rb_provenance_free(&pv);
    rb_run_result_free(ra);
    rb_run_result_free(rb);
    rb_log_free(log);
    rb_pipeline_free(pa);
    rb_pipeline_free(pb);
}

/* --print-config shows the new keys, with scale's default, and loads back to the same text. */
Test(pipeline_bindings, resolved_config_round_trips_the_new_keys)
{
    rb_pipeline *p = load_ok("{\"clock\": {\"rate\": 100}, \"signals\": {"
                             "\"q\": {\"channel\": \"joints/q\", \"names\": [\"a\", \"b\", \"c\"]},"
                             "\"v\": {\"channel\": \"joints/dq_deg\", \"scale\": 0.017453292519943295, \"unit\": "
                             "\"rad/s\"}}}");
    char *text = rb_pipeline_resolved_json(p);
    cr_assert(strstr(text, "\"names\":\t[\"a\", \"b\", \"c\"]"), "%s", text);
    cr_assert(strstr(text, "\"scale\":\t1\n"), "%s", text);
    cr_assert(strstr(text, "\"scale\":\t0.017453292519943295"), "%s", text);
    cr_assert(strstr(text, "\"unit\":\t\"rad/s\""), "%s", text);
    rb_pipeline *again;
    rb_err err;
    cr_assert_eq(rb_pipeline_load_text(text, strlen(text), "again.json", NULL, reg, &again, &err), RB_OK, "%s",
                 err.msg);
    char *text2 = rb_pipeline_resolved_json(again);
    cr_assert_str_eq(text2, text);
    rb_free(text);
    rb_free(text2);
    rb_pipeline_free(again);
    rb_pipeline_free(p);
}

/* Two unnamed channels bound as one signal used to give "0", "1", "2", "0", "1", "2": report rows that cannot be
 * told apart. Each element now carries its channel; with "names" the config's names win. */
Test(pipeline_bindings, colliding_names_of_several_channels_are_qualified)
{
    rb_pipeline *p = load_ok(
        "{\"clock\": {\"rate\": 100}, \"signals\": {\"q\": {\"channel\": [\"left/q\", \"right/q\"]},"
        " \"ref\": {\"channel\": [\"left/q\", \"right/q\"], \"names\": [\"l0\", \"l1\", \"l2\", \"r0\", \"r1\", "
        "\"r2\"]}},"
        " \"stages\": [{\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"q_lp\"},"
        " \"params\": {\"cutoff_hz\": 5}}], \"metrics\": [{\"estimate\": \"q_lp\", \"reference\": \"ref\"}]}");
    rb_log *log = make_log();
    rb_run_result *res = run_ok(p, log);
    const rb_report *rep = res->report;
    cr_assert_eq(rep->n_rows, 2 * N + 1);
    for (size_t a = 0; a < rep->n_rows; a++)
        for (size_t b = 0; b < a; b++)
            cr_assert_str_neq(rep->rows[a].element, rep->rows[b].element, "rows %zu and %zu", b, a);
    cr_assert_str_eq(rep->rows[0].element, "left/q/0");
    cr_assert_str_eq(rep->rows[N].element, "right/q/0");
    rb_run_result_free(res);
    rb_log_free(log);
    rb_pipeline_free(p);
}

/* A stream applies the same names, unit and scale as a log run. */
Test(pipeline_bindings, stream_applies_names_unit_and_scale)
{
    rb_pipeline *p = load_ok("{\"clock\": {\"rate\": 100}, \"signals\": {\"v\": {\"channel\": \"dq_deg\", \"names\": "
                             "[\"a\", \"b\", \"c\"], \"scale\": 0.017453292519943295, \"unit\": \"rad/s\"},"
                             " \"w\": {\"channel\": [\"x\", \"y\"]}}}");
    const rb_channel_info ch[] = {{"dq_deg", N, NULL, NULL}, {"x", 1, NULL, NULL}, {"y", 1, NULL, NULL}};
    rb_stream *s = NULL;
    rb_err err;
    cr_assert_eq(rb_stream_open(p, ch, 3, 0.01, 2, &s, &err), RB_OK, "%s", err.msg);
    long v = rb_stream_find(s, "v"), w = rb_stream_find(s, "w");
    cr_assert_str_eq(rb_stream_elements(s, v)[1], "b");
    cr_assert_str_eq(rb_stream_elements(s, w)[0], "x/0", "colliding names qualified as in a log run");
    cr_assert_str_eq(rb_stream_elements(s, w)[1], "y/0");
    double *row = rb_stream_channel_row(s, 0);
    row[0] = 180, row[1] = -90, row[2] = 0;
    cr_assert_eq(rb_stream_step(s, &err), RB_OK, "%s", err.msg);
    const double *out = rb_stream_row(s, v);
    cr_assert(fabs(out[0] - M_PI) <= 1e-15 && fabs(out[1] + M_PI / 2) <= 1e-15 && out[2] == 0);
    rb_stream_free(s);
    /* and the same count check */
    const rb_channel_info two[] = {{"dq_deg", 2, NULL, NULL}, {"x", 1, NULL, NULL}, {"y", 1, NULL, NULL}};
    cr_assert_eq(rb_stream_open(p, two, 3, 0.01, 2, &s, &err), RB_EINPUT);
    cr_assert_str_eq(err.msg, "bind: signals.v.names: 3 names for the 2 elements of binding 'v' (channel dq_deg)");
    rb_pipeline_free(p);
}

/* ---- friction training specs read the same keys with the same rules ------------------------------------ */
static void write_friction_log(const char *path, double vel_factor, const char *vel_unit)
{
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    add(log, "joints_state/velocities", NULL, vel_factor, vel_unit);
    add(log, "motors_state/velocities", NULL, 100.0, "rad/s");
    add(log, "motors_state/currents", NULL, 0.5, "A");
    add(log, "tau", NULL, 2.0, "N m");
    cr_assert_eq(rb_log_write(log, path, NULL, &err), RB_OK, "%s", err.msg);
    rb_log_free(log);
}

static rb_friction_data *friction_data(const char *spec_text)
{
    rb_friction_spec *spec = NULL;
    rb_friction_data *d = NULL;
    rb_err err;
    cr_assert_eq(rb_friction_spec_load_text(spec_text, strlen(spec_text), "spec.json", NULL, &spec, &err), RB_OK, "%s",
                 err.msg);
    cr_assert_eq(rb_friction_data_build(spec, &d, &err), RB_OK, "%s", err.msg);
    rb_friction_spec_free(spec);
    return d;
}

Test(pipeline_bindings, friction_spec_scales_as_a_pipeline_binding)
{
    char *dir = test_temp_dir(), rad[512], deg[512], a[1024], b[1024];
    snprintf(rad, sizeof rad, "%s/rad.h5", dir);
    snprintf(deg, sizeof deg, "%s/deg.h5", dir);
    write_friction_log(rad, 1.0, "rad/s");
    write_friction_log(deg, 1.0 / DEG, "deg/s");
    static const char fmt[] = "{\"logs\": [\"%s\"], \"joints\": [\"0\", \"1\", \"2\"], %s"
                              "\"torque\": {\"channel\": \"tau\"}, \"k_t\": [0.05], \"R\": [100]}";
    snprintf(a, sizeof a, fmt, rad, "");
    snprintf(b, sizeof b, fmt, deg,
             "\"joint_velocity\": {\"channel\": \"joints_state/velocities\", \"scale\": 0.017453292519943295, "
             "\"unit\": \"rad/s\"}, ");
    rb_friction_data *da = friction_data(a), *db = friction_data(b);
    cr_assert_eq(da->T, db->T);
    for (size_t k = 0; k < N * da->T; k++)
        cr_assert(fabs(da->v[k] - db->v[k]) <= 1e-12, "v[%zu]: %.17g vs %.17g", k, da->v[k], db->v[k]);
    rb_friction_data_free(da);
    rb_friction_data_free(db);
    rb_friction_spec *spec = NULL;
    rb_err err;
    const char *bad = "{\"joints\": [\"a\"], \"torque\": {\"channel\": \"tau\", \"scale\": 2}, \"k_t\": [1], \"R\": "
                      "[1]}";
    cr_assert_eq(rb_friction_spec_load_text(bad, strlen(bad), "spec.json", NULL, &spec, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "torque.scale: needs 'unit'"), "%s", err.msg);
    test_remove_tree(dir);
}
