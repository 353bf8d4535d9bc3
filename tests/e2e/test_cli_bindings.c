/* End-to-end: roboest run with bindings that name a logger file's unnamed elements ("0".."5") and scale a
 * deg/s channel. The names reach the estimates file and the reports, of a CSV log and of the same log as
 * MATLAB; the scaled run matches the rad/s log's; a bad key is one line naming it, exit 3, no output. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

enum { J = 6 };
static const char *const JOINTS = "\"r_hip_pitch\", \"r_hip_roll\", \"r_hip_yaw\", \"r_knee\", \"r_ankle_pitch\", "
                                  "\"r_ankle_roll\"";

/* A log as the older YARP logger files have it: elements "0".."5". Positions in rad; velocities in rad/s, or in
 * deg/s when `deg`. */
static void write_log(const char *path, bool deg)
{
    FILE *f = fopen(path, "w");
    fprintf(f, "time");
    for (int i = 0; i < J; i++)
        fprintf(f, ",joints_state/positions:%d [rad]", i);
    for (int i = 0; i < J; i++)
        fprintf(f, ",joints_state/velocities:%d [%s]", i, deg ? "deg/s" : "rad/s");
    fprintf(f, "\n");
    for (int k = 0; k <= 200; k++) {
        double t = 0.01 * k;
        fprintf(f, "%.17g", t);
        for (int i = 0; i < J; i++)
            fprintf(f, ",%.17g", sin((1 + 0.3 * i) * t + i));
        for (int i = 0; i < J; i++) {
            double v = (1 + 0.3 * i) * cos((1 + 0.3 * i) * t + i);
            fprintf(f, ",%.17g", deg ? v * (180 / M_PI) : v);
        }
        fprintf(f, "\n");
    }
    fclose(f);
}

/* A pipeline on log `log` whose velocity binding has the extra keys `dq_keys` and whose position binding has
 * `q_keys`. */
static char *config(const char *log, const char *q_keys, const char *dq_keys)
{
    char *text = malloc(4096);
    snprintf(text, 4096,
             "{\"name\": \"bind\", \"logs\": [\"%s\"], \"clock\": {\"rate\": 100},\n"
             " \"signals\": {\"q\": {\"channel\": \"joints_state/positions\"%s},\n"
             "   \"dq\": {\"channel\": \"joints_state/velocities\"%s}},\n"
             " \"stages\": [{\"id\": \"d\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, \"out\": "
             "{\"dx\": \"qd\"}}],\n"
             " \"outputs\": [{\"path\": \"est.h5\", \"signals\": [\"qd\", \"dq\"]}],\n"
             " \"metrics\": [{\"estimate\": \"qd\", \"reference\": \"dq\"}],\n"
             " \"reports\": [\"report.md\", \"report.csv\"]}\n",
             log, q_keys, dq_keys);
    return text;
}

static char *names_keys(void)
{
    static char keys[512];
    snprintf(keys, sizeof keys, ", \"names\": [%s]", JOINTS);
    return keys;
}

static const char SCALE[] = ", \"scale\": 0.017453292519943295, \"unit\": \"rad/s\"";

/* roboest run of `text` written to dir/name.json into dir/out_<name>; asserts success. Returns the out dir. */
static char *run_ok(const char *dir, const char *name, const char *text)
{
    char file[64], out[64];
    snprintf(file, sizeof file, "%s.json", name);
    snprintf(out, sizeof out, "out_%s", name);
    char *cfg = test_path(dir, file), *od = test_path(dir, out);
    test_write_file(cfg, text);
    cli_result r = cli_run(dir, (const char *[]){"run", file, "-o", out, "-q", NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "%s", r.err);
    cli_result_free(&r);
    free(cfg);
    return od;
}

static rb_log *read_log(const char *dir, const char *name)
{
    char *path = test_path(dir, name);
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(path, &log, &err), RB_OK, "%s", err.msg);
    free(path);
    return log;
}

static void expect_joint_names(const char *out, const char *what)
{
    static const char *const want[J] = {"r_hip_pitch", "r_hip_roll",    "r_hip_yaw",
                                        "r_knee",      "r_ankle_pitch", "r_ankle_roll"};
    rb_log *est = read_log(out, "est.h5");
    const rb_channel *qd = rb_log_find(est, "qd"), *dq = rb_log_find(est, "dq");
    cr_assert(qd && dq, "%s", what);
    for (int i = 0; i < J; i++) {
        cr_expect_str_eq(qd->element_names[i], want[i], "%s: estimates file, qd", what);
        cr_expect_str_eq(dq->element_names[i], want[i], "%s: estimates file, dq", what);
    }
    rb_log_free(est);
    char *md = test_path(out, "report.md"), *csv = test_path(out, "report.csv");
    char *mt = test_read_file(md, NULL), *ct = test_read_file(csv, NULL);
    for (int i = 0; i < J; i++) {
        char cell[64], num[32];
        snprintf(cell, sizeof cell, "| %s |", want[i]);
        cr_expect(strstr(mt, cell), "%s: report.md has no row %s:\n%s", what, cell, mt);
        snprintf(cell, sizeof cell, ",qd,dq,%s,", want[i]);
        cr_expect(strstr(ct, cell), "%s: report.csv has no row %s:\n%s", what, cell, ct);
        snprintf(num, sizeof num, "| dq | %d |", i);
        cr_expect_null(strstr(mt, num), "%s: report.md still labels an element %s", what, num);
    }
    free(mt), free(ct), free(md), free(csv);
}

Test(cli_bindings, names_reach_the_estimates_file_and_the_reports)
{
    char *dir = test_tmpdir(), *log = test_path(dir, "log.csv"), *mat = test_path(dir, "log.mat");
    write_log(log, false);
    char *text = config("log.csv", names_keys(), names_keys());
    char *out = run_ok(dir, "csv", text);
    expect_joint_names(out, "CSV log");
    free(text), free(out);

    /* The same log as a robot-logger MATLAB file (element names "0".."5" written as such). */
    cli_result r = cli_run(NULL, (const char *[]){"convert", log, "-o", mat, NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "%s", r.err);
    cli_result_free(&r);
    text = config("log.mat", names_keys(), names_keys());
    out = run_ok(dir, "mat", text);
    expect_joint_names(out, "MAT log");
    free(text), free(out), free(log), free(mat), free(dir);
}

Test(cli_bindings, deg_per_s_log_with_scale_matches_the_rad_per_s_log)
{
    char *dir = test_tmpdir(), *rad = test_path(dir, "rad.csv"), *deg = test_path(dir, "deg.csv");
    write_log(rad, false);
    write_log(deg, true);
    char *ta = config("rad.csv", "", ""), *tb = config("deg.csv", "", SCALE);
    char *oa = run_ok(dir, "rad", ta), *ob = run_ok(dir, "deg", tb);
    rb_log *a = read_log(oa, "est.h5"), *b = read_log(ob, "est.h5");
    const rb_channel *va = rb_log_find(a, "dq"), *vb = rb_log_find(b, "dq");
    cr_assert_eq(va->n_samples, vb->n_samples);
    for (size_t k = 0; k < va->n_samples * J; k++)
        cr_assert(fabs(va->data[k] - vb->data[k]) <= 1e-12, "dq[%zu]: %.17g vs %.17g", k, va->data[k], vb->data[k]);
    for (int i = 0; i < J; i++)
        cr_expect_str_eq(vb->units[i], "rad/s", "the unit after scaling");
    const char *scale = test_log_attr(b, "signals.dq.scale");
    cr_expect(scale && strcmp(scale, "0.017453292519943295") == 0, "provenance records the scale: %s",
              scale ? scale : "(none)");
    char *md = test_path(ob, "report.md"), *mt = test_read_file(md, NULL);
    cr_expect(strstr(mt, "- signals.dq.scale: 0.017453292519943295"), "%s", mt);
    free(mt), free(md);
    rb_log_free(a), rb_log_free(b);
    free(ta), free(tb), free(oa), free(ob), free(rad), free(deg), free(dir);
}

/* Exit 3 with one line naming the key; nothing written. */
static void expect_bad(const char *q_keys, const char *dq_keys, const char *const *want)
{
    char *dir = test_tmpdir(), *log = test_path(dir, "log.csv"), *cfg = test_path(dir, "p.json");
    write_log(log, true);
    char *text = config("log.csv", q_keys, dq_keys);
    test_write_file(cfg, text);
    cli_result r = cli_run(dir, (const char *[]){"run", "p.json", "-o", "out", NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "%s%s: %s", q_keys, dq_keys, r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "one line: %s", r.err);
    for (size_t i = 0; want[i]; i++)
        cr_expect(strstr(r.err, want[i]), "'%s' not in: %s", want[i], r.err);
    char *out = test_path(dir, "out");
    cr_expect(!test_exists(out) || test_count_entries(out) == 0, "no output left");
    cli_result_free(&r);
    free(out), free(text), free(cfg), free(log), free(dir);
}

Test(cli_bindings, bad_names_and_scales_exit_3)
{
    expect_bad(", \"names\": [\"a\", \"b\", \"c\", \"d\", \"e\"]", "",
               (const char *[]){"signals.q.names", "5 names for the 6 elements", "binding 'q'",
                                "joints_state/positions", NULL});
    expect_bad("", ", \"scale\": 0, \"unit\": \"rad/s\"",
               (const char *[]){"p.json:3:", "signals.dq.scale", "must be non-zero", NULL});
    expect_bad("", ", \"scale\": 1e999, \"unit\": \"rad/s\"", (const char *[]){"signals.dq.scale", "finite", NULL});
    expect_bad("", ", \"scale\": 0.017453292519943295", (const char *[]){"signals.dq.scale", "needs 'unit'", NULL});
    expect_bad(", \"names\": [\"a\", \"b\", \"c\", \"d\", \"e\", \"a\"]", "",
               (const char *[]){"signals.q.names[5]", "unique", NULL});
}
