/* End-to-end: roboest model info / eval. The dynamics are checked in the unit tests against identities
 * and Orocos KDL; here the command line must hand states in and results out faithfully, which is shown
 * by identities across separate invocations: M ddq + h = rnea, and forward dynamics inverts rnea. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

#define ARM RB_SOURCE "/datasets/arm_2ft.urdf"
#define FOUR RB_SHARED "/models/four_joints_two_sensors.urdf"

/* Deterministic pseudo-random numbers in [-1, 1). */
static double rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xffff) / 32768.0 - 1.0;
}

/* A states CSV with N rows of q, dq, ddq (n joints) and, if floating, base_pose/base_twist/base_acc. */
static void write_states(const char *path, size_t N, size_t n, bool floating, unsigned seed)
{
    FILE *f = fopen(path, "w");
    const char *names[] = {"q", "dq", "ddq"};
    fprintf(f, "# states for the e2e test\n");
    bool first = true;
    for (int a = 0; a < 3; a++)
        for (size_t j = 0; j < n; j++, first = false)
            fprintf(f, "%s%s:%zu", first ? "" : ",", names[a], j);
    if (floating) {
        for (int j = 0; j < 7; j++)
            fprintf(f, ",base_pose:%d", j);
        for (int j = 0; j < 6; j++)
            fprintf(f, ",base_twist:%d", j);
        for (int j = 0; j < 6; j++)
            fprintf(f, ",base_acc:%d", j);
    }
    fprintf(f, "\n");
    for (size_t i = 0; i < N; i++) {
        for (size_t k = 0; k < 3 * n; k++)
            fprintf(f, "%s%.17g", k ? "," : "", rnd(&seed));
        if (floating) {
            double quat[4] = {rnd(&seed), rnd(&seed), rnd(&seed), rnd(&seed)};
            double norm = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
            fprintf(f, ",%.17g,%.17g,%.17g", rnd(&seed), rnd(&seed), rnd(&seed));
            for (int j = 0; j < 4; j++)
                fprintf(f, ",%.17g", quat[j] / norm);
            for (int j = 0; j < 12; j++)
                fprintf(f, ",%.17g", rnd(&seed));
        }
        fprintf(f, "\n");
    }
    fclose(f);
}

static rb_arrays *eval(const char *urdf, const char *op, const char *states, const char *out, const char *extra)
{
    cli_result r = cli_run(NULL, (const char *[]){"model", "eval", urdf, "--op", op, "--states", states, "-o", out,
                                                  "--force", extra, NULL});
    cr_assert_eq(r.status, 0, "model eval --op %s: %s", op, r.err);
    cli_result_free(&r);
    rb_arrays *res = NULL;
    rb_err err;
    cr_assert_eq(rb_arrays_read(out, &res, &err), RB_OK, "%s", err.msg);
    return res;
}

static void check_identities(const char *urdf, bool floating, size_t n, const char *ext)
{
    char *dir = test_tmpdir();
    char *states = test_path(dir, "states.csv");
    char out_name[32];
    snprintf(out_name, sizeof out_name, "out.%s", ext);
    char *out = test_path(dir, out_name);
    const size_t N = 7, nv = n + (floating ? 6 : 0);
    write_states(states, N, n, floating, 7u);
    const char *fl = floating ? "--floating" : NULL;
    rb_arrays *M = eval(urdf, "mass-matrix", states, out, fl);
    rb_arrays *h = eval(urdf, "generalised-forces", states, out, fl);
    rb_arrays *tau = eval(urdf, "rnea", states, out, fl);
    rb_arrays *in = NULL;
    rb_err err;
    cr_assert_eq(rb_arrays_read(states, &in, &err), RB_OK, "%s", err.msg);
    const rb_array *Ma = rb_arrays_find(M, "M"), *ha = rb_arrays_find(h, "h"), *ta = rb_arrays_find(tau, "tau");
    const rb_array *ddq = rb_arrays_find(in, "ddq"), *acc = rb_arrays_find(in, "base_acc");
    cr_assert(Ma && ha && ta && ddq);
    cr_assert(Ma->ndim == 3 && Ma->dims[0] == N && Ma->dims[1] == nv && Ma->dims[2] == nv, "M is N x nv x nv");
    cr_assert(ta->dims[0] == N && ta->dims[1] == nv, "tau is N x nv (%zu x %zu)", ta->dims[0], ta->dims[1]);
    for (size_t i = 0; i < N; i++)
        for (size_t r = 0; r < nv; r++) {
            double sum = ha->data[i * nv + r];
            for (size_t c = 0; c < nv; c++) {
                double a = floating ? (c < 6 ? acc->data[i * 6 + c] : ddq->data[i * n + c - 6]) : ddq->data[i * n + c];
                sum += Ma->data[(i * nv + r) * nv + c] * a;
            }
            cr_expect(fabs(sum - ta->data[i * nv + r]) <= 1e-9 * (1 + fabs(sum)),
                      "state %zu row %zu: M ddq + h %.17g, rnea %.17g", i, r, sum, ta->data[i * nv + r]);
        }

    /* forward dynamics of the rnea torques gives ddq back */
    char *states2 = test_path(dir, "states2.csv");
    FILE *f = fopen(states2, "w");
    char *orig = test_read_file(states, NULL);
    char *header_end = strchr(strchr(orig, '\n') + 1, '\n');
    fprintf(f, "%.*s", (int)(header_end - orig), orig);
    for (size_t c = 0; c < nv; c++)
        fprintf(f, ",tau:%zu", c);
    char *line = header_end + 1;
    for (size_t i = 0; i < N; i++) {
        char *end = strchr(line, '\n');
        fprintf(f, "\n%.*s", (int)(end - line), line);
        for (size_t c = 0; c < nv; c++)
            fprintf(f, ",%.17g", ta->data[i * nv + c]);
        line = end + 1;
    }
    fprintf(f, "\n");
    fclose(f);
    rb_arrays *fd = eval(urdf, "forward-dynamics", states2, out, fl);
    const rb_array *back = rb_arrays_find(fd, "ddq");
    cr_assert_not_null(back);
    for (size_t i = 0; i < N; i++)
        for (size_t c = 0; c < nv; c++) {
            double want = floating ? (c < 6 ? acc->data[i * 6 + c] : ddq->data[i * n + c - 6]) : ddq->data[i * n + c];
            cr_expect(fabs(back->data[i * nv + c] - want) <= 1e-8 * (1 + fabs(want)), "state %zu, %zu: %.17g vs %.17g",
                      i, c, back->data[i * nv + c], want);
        }
    free(orig);
    rb_arrays_free(M), rb_arrays_free(h), rb_arrays_free(tau), rb_arrays_free(in), rb_arrays_free(fd);
    free(states), free(states2), free(out), free(dir);
}

Test(cli_model, eval_identities_fixed_base_h5) { check_identities(ARM, false, 4, "h5"); }
Test(cli_model, eval_identities_floating_base_mat) { check_identities(ARM, true, 4, "mat"); }
Test(cli_model, eval_identities_csv_output)
{
    test_need_shared("models/four_joints_two_sensors.urdf");
    check_identities(FOUR, false, 4, "csv");
}

Test(cli_model, eval_every_op_writes_its_quantity)
{
    char *dir = test_tmpdir();
    char *states = test_path(dir, "states.csv"), *out = test_path(dir, "out.h5");
    write_states(states, 3, 4, false, 11u);
    const struct {
        const char *op, *frame, *name;
        size_t ndim, d1, d2;
    } cases[] = {{"forward-kinematics", NULL, "pose", 3, 0, 7},
                 {"forward-kinematics", "tool_frame", "pose", 2, 7, 1},
                 {"jacobian", "tool_frame", "J", 3, 6, 4},
                 {"djdq", "tool_frame", "djdq", 2, 6, 1},
                 {"gravity", NULL, "g", 2, 4, 1},
                 {"com", NULL, "com", 2, 3, 1},
                 {"centroidal-momentum", NULL, "centroidal_momentum", 2, 6, 1},
                 {"regressor", NULL, "Y", 3, 4, 0}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cli_result r =
            cli_run(NULL, (const char *[]){"model", "eval", ARM, "--op", cases[k].op, "--states", states, "-o", out,
                                           "--force", cases[k].frame ? "--frame" : NULL, cases[k].frame, NULL});
        cr_assert_eq(r.status, 0, "%s: %s", cases[k].op, r.err);
        cli_result_free(&r);
        rb_arrays *res = NULL;
        rb_err err;
        cr_assert_eq(rb_arrays_read(out, &res, &err), RB_OK, "%s", err.msg);
        const rb_array *a = rb_arrays_find(res, cases[k].name);
        cr_assert_not_null(a, "%s writes %s", cases[k].op, cases[k].name);
        cr_expect_eq(a->dims[0], 3, "%s: one row per state", cases[k].op);
        if (cases[k].ndim)
            cr_expect_eq(a->ndim, cases[k].ndim, "%s", cases[k].op);
        if (cases[k].d1)
            cr_expect_eq(a->dims[1], cases[k].d1, "%s", cases[k].op);
        if (cases[k].d2)
            cr_expect_eq(a->dims[2], cases[k].d2, "%s", cases[k].op);
        rb_arrays_free(res);
    }
    free(states), free(out), free(dir);
}

Test(cli_model, info_and_errors)
{
    test_need_shared("models/four_joints_two_sensors.urdf");
    cli_result r = cli_run(NULL, (const char *[]){"model", "info", FOUR, "--json", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cJSON *o = cJSON_Parse(r.out);
    cr_assert_not_null(o, "%s", r.out);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "joints")), 4);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "ft_sensors")), 2);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "submodels")), 3, "two FT sensors cut three sub-models");
    cJSON_Delete(o);
    cli_result_free(&r);

    r = cli_run(NULL, (const char *[]){"model", "info", FOUR, "--joints", "joint_3,joint_1", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *j3 = strstr(r.out, "joint_3"), *j1 = strstr(r.out, "joint_1");
    cr_expect(j3 && j1 && j3 < j1, "the joint list sets the order:\n%s", r.out);
    cli_result_free(&r);

    r = cli_run(NULL, (const char *[]){"model", "info", FOUR, "--joints", "joint_9", NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_expect(strstr(r.err, "joint_9") && test_count_lines(r.err) == 1, "%s", r.err);
    cli_result_free(&r);

    char *dir = test_tmpdir();
    char *bad = test_path(dir, "bad.urdf"), *states = test_path(dir, "s.csv"), *out = test_path(dir, "o.h5");
    test_write_file(bad, "<robot name=\"r\"><link name=\"a\"/><joint name=\"j\" type=\"revolute\">"
                         "<parent link=\"a\"/><child link=\"b\"/></joint></robot>\n");
    r = cli_run(NULL, (const char *[]){"model", "info", bad, NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_expect(strstr(r.err, "bad.urdf") && strstr(r.err, "j") && test_count_lines(r.err) == 1, "%s", r.err);
    cli_result_free(&r);

    write_states(states, 2, 3, false, 3u); /* 3 joints for a 4-joint model */
    r = cli_run(NULL, (const char *[]){"model", "eval", ARM, "--op", "rnea", "--states", states, "-o", out, NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_expect(strstr(r.err, "q") && strstr(r.err, "expected"), "%s", r.err);
    cr_expect(!test_exists(out), "no output on error");
    cli_result_free(&r);

    r = cli_run(NULL, (const char *[]){"model", "eval", ARM, "--op", "jacobian", "--states", states, "-o", out, NULL});
    cr_expect_eq(r.status, CLI_EXIT_USAGE, "--frame is required: %s", r.err);
    cli_result_free(&r);
    free(bad), free(states), free(out), free(dir);
}
