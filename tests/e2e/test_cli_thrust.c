/* `roboest run` with the thrust_ekf stage on a small log written here (.mat): the floating humanoid lower body standing
 * still with four jets (frames picked on it), throttles, foot wrenches and rotor speed errors; the refusals (one line,
 * exit code, no output) and the NaN / out-of-range throttle paths that succeed with a count. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/dynamics.h"
#include "roboest/io.h"

#define URDF RB_SOURCE "/datasets/humanoid_lower_body.urdf"
#define T_N 400
#define T_DT 1e-2

typedef struct log_opts {
    double u_big;    /* throttle of jet 3 on samples 100..109 (0: the profile) */
    size_t big_from; /* jet 1's throttle 1e308 from this sample (0: never): with the offset -1e308 an overflow */
} log_opts;

static void add(rb_log *log, const char *name, size_t n, const double *t, const double *data)
{
    rb_err err;
    cr_assert_eq(rb_log_add_channel_copy(log, name, T_N, n, t, data, NULL, NULL, &err), RB_OK, "%s", err.msg);
}

static char *write_log(const char *dir, const log_opts *o)
{
    rb_model_opts mo = {.floating = true};
    rb_model *m = NULL;
    rb_err err;
    cr_assert_eq(rb_model_load_urdf(URDF, &mo, &m, &err), RB_OK, "%s", err.msg);
    size_t n = m->n_dofs;
    double mg = rb_dyn_total_mass(m) * 9.81;
    double *t = calloc(T_N, sizeof *t), *q = calloc(T_N * n, sizeof *q), *dq = calloc(T_N * n, sizeof *q);
    double *pos = calloc(T_N * 3, sizeof *pos), *quat = calloc(T_N * 4, sizeof *quat),
           *tw = calloc(T_N * 6, sizeof *tw), *u = calloc(T_N * 4, sizeof *u), *lf = calloc(T_N * 6, sizeof *lf),
           *rf = calloc(T_N * 6, sizeof *rf), *rpm = calloc(T_N * 4, sizeof *rpm);
    for (size_t k = 0; k < T_N; k++) {
        t[k] = (double)k * T_DT;
        pos[3 * k + 2] = 0.9;
        quat[4 * k] = 1;
        for (int i = 0; i < 4; i++)
            u[4 * k + i] = k < 50 ? 0 : 60;
        if (o->u_big > 0 && k >= 100 && k < 110)
            u[4 * k + 3] = o->u_big;
        if (o->big_from && k >= o->big_from)
            u[4 * k + 1] = 1e308;
        lf[6 * k + 2] = rf[6 * k + 2] = mg / 2; /* the sole frames are level with the world */
    }
    rb_log *log = NULL;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    add(log, "q", n, t, q);
    add(log, "dq", n, t, dq);
    add(log, "pos", 3, t, pos);
    add(log, "quat", 4, t, quat);
    add(log, "twist", 6, t, tw);
    add(log, "u", 4, t, u);
    add(log, "lf", 6, t, lf);
    add(log, "rf", 6, t, rf);
    add(log, "rpm", 4, t, rpm);
    char *path = test_path(dir, "log.mat");
    rb_write_opts wo = {RB_OUT_MAT5, true, NULL};
    cr_assert_eq(rb_log_write(log, path, &wo, &err), RB_OK, "%s", err.msg);
    rb_log_free(log);
    free(t), free(q), free(dq), free(pos), free(quat), free(tw), free(u), free(lf), free(rf), free(rpm);
    rb_model_free(m);
    return path;
}

#define JETS "\"jet_frames\": [\"l_hip_1\", \"r_hip_1\", \"chest\", \"torso_1\"], \"jet_presets\": [\"ironcub_p100\"]"
#define FEET "\"feet\": [\"l_sole\", \"r_sole\"]"

/* The pipeline: the throttles through a difference stage (offset: a JSON array, to make overflows), every channel
 * wired (but the feet and rpm as told), params a JSON fragment; T and support_kg to est.csv. */
static char *write_config(const char *dir, const char *params, bool feet, bool rpm, const char *offset)
{
    char *path = test_path(dir, "p.json"), text[4096];
    snprintf(
        text, sizeof text,
        "{\"model\": {\"urdf\": \"%s\", \"floating\": true}, \"clock\": {\"channel\": \"q\"},\n"
        " \"signals\": {\"q\": {\"channel\": \"q\"}, \"dq\": {\"channel\": \"dq\"}, \"pos\": {\"channel\": "
        "\"pos\"}, \"quat\": {\"channel\": \"quat\"}, \"twist\": {\"channel\": \"twist\"}, \"u_raw\": {\"channel\": "
        "\"u\"}, \"feet\": {\"channel\": [\"lf\", \"rf\"]}, \"rpm\": {\"channel\": "
        "\"rpm\"}},\n"
        " \"stages\": [{\"id\": \"neg\", \"type\": \"difference\", \"in\": {\"a\": \"u_raw\"}, \"out\": "
        "{\"y\": \"u\"}, \"params\": {\"offset\": %s}},\n  {\"id\": \"tekf\", \"type\": \"thrust_ekf\", \"in\": "
        "{\"q\": \"q\", \"dq\": \"dq\", "
        "\"base_position\": \"pos\", \"base_orientation\": \"quat\", \"base_twist\": \"twist\", \"throttle\": "
        "\"u\"%s%s},\n   \"out\": {\"T\": \"T\", \"support_kg\": \"kg\"}, \"params\": {%s}}],\n"
        " \"outputs\": [{\"path\": \"est.csv\", \"signals\": [\"T\", \"kg\"]}]}\n",
        URDF, offset ? offset : "[0]", feet ? ", \"feet\": \"feet\"" : "", rpm ? ", \"rpm_error\": \"rpm\"" : "",
        params);
    test_write_file(path, text);
    return path;
}

typedef struct outcome {
    cli_result r;
    char *out_dir, *dir;
} outcome;

static outcome run_case_offset(const log_opts *lo, const char *params, bool feet, bool rpm, const char *offset)
{
    outcome oc;
    oc.dir = test_tmpdir();
    char *log = write_log(oc.dir, lo), *cfg = write_config(oc.dir, params, feet, rpm, offset);
    oc.out_dir = test_path(oc.dir, "out");
    const char *args[] = {"run", cfg, log, "-o", oc.out_dir, NULL};
    oc.r = cli_run(NULL, args);
    free(log), free(cfg);
    return oc;
}

static outcome run_case(const log_opts *lo, const char *params, bool feet, bool rpm)
{
    return run_case_offset(lo, params, feet, rpm, NULL);
}

static void expect_refusal(const outcome *oc, int code, const char *const *words)
{
    cr_log_info("exit %d: %s", oc->r.status, oc->r.err);
    cr_expect_eq(oc->r.status, code, "exit %d (want %d): %s", oc->r.status, code, oc->r.err);
    cr_expect_eq(test_count_lines(oc->r.err), 1, "not one line: %s", oc->r.err);
    for (size_t i = 0; words[i]; i++)
        cr_expect(strstr(oc->r.err, words[i]) != NULL, "no '%s' in: %s", words[i], oc->r.err);
    cr_expect(!test_exists(oc->out_dir) || test_count_entries(oc->out_dir) == 0, "outputs left in %s", oc->out_dir);
}

static void done(outcome *oc)
{
    cli_result_free(&oc->r);
    free(oc->out_dir);
    free(oc->dir);
}

static const log_opts PLAIN = {0};

/* The reference run: exit 0, the estimates written, the scales' reading at the end near the robot's mass (the feet
 * carry the whole weight: no thrust is seen by the momentum, the jet model says otherwise; combined sits between). */
Test(cli_thrust, a_standing_run_writes_the_estimates)
{
    outcome oc = run_case(&PLAIN, JETS ", " FEET, true, false);
    cr_expect_eq(oc.r.status, 0, "exit %d: %s", oc.r.status, oc.r.err);
    char *csv = test_path(oc.out_dir, "est.csv");
    size_t len = 0;
    char *text = test_exists(csv) ? test_read_file(csv, &len) : NULL;
    cr_expect(text && strstr(text, "\n3.99,"), "est.csv without the last sample: %s", text ? text : "(missing)");
    cr_expect(text && strstr(text, "l_hip_1"), "no jet name in the header");
    free(text), free(csv);
    done(&oc);
}

Test(cli_thrust, a_jet_frame_not_in_the_model_is_refused)
{
    outcome oc = run_case(&PLAIN,
                          "\"jet_frames\": [\"l_hip_1\", \"r_hip_1\", \"chest\", \"l_arm_jet_turbine\"], "
                          "\"jet_presets\": [\"ironcub_p100\"], " FEET,
                          true, false);
    expect_refusal(&oc, CLI_EXIT_INPUT, (const char *const[]){"tekf", "jet_frames[3]", "l_arm_jet_turbine", NULL});
    done(&oc);
}

Test(cli_thrust, an_axis_of_zero_length_is_refused)
{
    outcome oc = run_case(&PLAIN, JETS ", " FEET ", \"jet_axes\": [0, 0, 0]", true, false);
    expect_refusal(&oc, CLI_EXIT_INPUT, (const char *const[]){"jet_axes", "zero length", NULL});
    done(&oc);
}

Test(cli_thrust, a_throttle_out_of_range_is_refused_with_error)
{
    log_opts lo = {.u_big = 130};
    outcome oc = run_case(&lo, JETS ", " FEET ", \"throttle_range\": \"error\"", true, false);
    expect_refusal(&oc, CLI_EXIT_INPUT, (const char *const[]){"sample 100", "torso_1", "130", "[0, 120]", NULL});
    done(&oc);
}

Test(cli_thrust, a_throttle_out_of_range_is_clamped_and_counted)
{
    log_opts lo = {.u_big = 130};
    outcome oc = run_case(&lo, JETS ", " FEET, true, false);
    cr_expect_eq(oc.r.status, 0, "exit %d: %s", oc.r.status, oc.r.err);
    cr_expect(strstr(oc.r.err, "stage tekf") && strstr(oc.r.err, "10 throttle value(s) outside"), "stderr: %s",
              oc.r.err);
    done(&oc);
}

/* 1e308 + 1e308 overflows in the difference stage: the stage sees inf (a NaN likewise) */
Test(cli_thrust, a_non_finite_throttle_keeps_the_last_and_is_counted)
{
    log_opts lo = {.big_from = 300};
    outcome oc = run_case_offset(&lo, JETS ", " FEET, true, false, "[0, -1e308, 0, 0]");
    cr_expect_eq(oc.r.status, 0, "exit %d: %s", oc.r.status, oc.r.err);
    cr_expect(strstr(oc.r.err, "stage tekf") && strstr(oc.r.err, "100 non-finite throttle value(s)"), "stderr: %s",
              oc.r.err);
    char *csv = test_path(oc.out_dir, "est.csv");
    cr_expect(test_exists(csv));
    size_t len = 0;
    char *text = test_read_file(csv, &len);
    cr_expect(text && !strstr(text, "nan") && !strstr(text, "inf"), "a non-finite estimate in est.csv");
    free(text), free(csv);
    done(&oc);
}

Test(cli_thrust, a_mass_far_from_the_model_is_refused_naming_both)
{
    outcome oc = run_case(&PLAIN, JETS ", " FEET ", \"mass\": 41.402", true, false);
    expect_refusal(&oc, CLI_EXIT_INPUT, (const char *const[]){"mass 41.402 kg", "model's total mass", "2 %", NULL});
    done(&oc);
}

Test(cli_thrust, foot_wrenches_missing_on_the_ground_are_refused)
{
    outcome oc = run_case(&PLAIN, JETS ", " FEET, false, false);
    expect_refusal(&oc, CLI_EXIT_INPUT, (const char *const[]){"input feet is not wired", "in_flight", NULL});
    done(&oc);
}

Test(cli_thrust, in_flight_needs_no_foot_wrenches)
{
    outcome oc = run_case(&PLAIN, JETS ", \"in_flight\": true", false, false);
    cr_expect_eq(oc.r.status, 0, "exit %d: %s", oc.r.status, oc.r.err);
    done(&oc);
}

Test(cli_thrust, rotor_speed_error_missing_with_scheduling_is_refused)
{
    outcome oc = run_case(&PLAIN, JETS ", " FEET ", \"schedule\": true", true, false);
    expect_refusal(&oc, CLI_EXIT_INPUT, (const char *const[]){"rpm_error", "schedule", NULL});
    done(&oc);
    outcome ok = run_case(&PLAIN, JETS ", " FEET ", \"schedule\": true", true, true);
    cr_expect_eq(ok.r.status, 0, "exit %d: %s", ok.r.status, ok.r.err);
    done(&ok);
}
