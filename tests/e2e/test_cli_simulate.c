/* End-to-end: roboest simulate on the arm-on-a-pole example: channels, element names, units, the current
 * model against the truth, determinism, and the failure modes (one line, exit code, no output file). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

#define ARM_POLE RB_SOURCE "/configs/scenarios/arm_pole.json"

enum { EXIT_INPUT = 3, EXIT_OUTPUT = 5 };

/* arm_pole.json with a short duration and the model's absolute path, written into dir. */
static char *short_scenario(const char *dir, const char *duration)
{
    char *text = test_read_file(ARM_POLE, NULL);
    cr_assert_not_null(text);
    const char *keys[] = {"\"duration\": 2.0", "\"../../datasets/arm_2ft.urdf\""};
    char repl[2][512];
    snprintf(repl[0], sizeof repl[0], "\"duration\": %s", duration);
    snprintf(repl[1], sizeof repl[1], "\"%s/datasets/arm_2ft.urdf\"", RB_SOURCE);
    for (int k = 0; k < 2; k++) {
        char *at = strstr(text, keys[k]);
        cr_assert_not_null(at, "arm_pole.json lacks %s", keys[k]);
        size_t head = (size_t)(at - text), klen = strlen(keys[k]);
        char *next = malloc(strlen(text) + strlen(repl[k]) + 1);
        memcpy(next, text, head);
        strcpy(next + head, repl[k]);
        strcat(next, at + klen);
        free(text);
        text = next;
    }
    char *path = test_path(dir, "arm_pole.json");
    test_write_file(path, text);
    free(text);
    return path;
}

static void expect_channel(const rb_log *log, const char *name, size_t n, const char *first_element,
                           const char *unit)
{
    const rb_channel *ch = rb_log_find(log, name);
    cr_assert_not_null(ch, "missing channel %s", name);
    cr_assert_eq(ch->n_elements, n, "%s: %zu elements", name, ch->n_elements);
    cr_assert_gt(ch->n_samples, 0, "%s is empty", name);
    cr_assert_str_eq(ch->element_names[0], first_element, "%s", name);
    cr_assert_str_eq(ch->units[0], unit, "%s", name);
}

static void simulate_ok(const char *scenario, const char *out)
{
    const char *args[] = {"simulate", scenario, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cli_result_free(&r);
}

Test(cli_simulate, arm_pole_log)
{
    char *dir = test_tmpdir(), *scn = short_scenario(dir, "0.3"), *out = test_path(dir, "arm.mat");
    simulate_ok(scn, out);
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(out, &log, &err), RB_OK, "%s", err.msg);
    cr_assert_str_eq(log->root_name, "robot_logger_device");
    expect_channel(log, "joints_state/positions", 4, "shoulder_yaw", "rad");
    expect_channel(log, "joints_state/velocities", 4, "shoulder_yaw", "rad/s");
    expect_channel(log, "joints_state/accelerations", 4, "shoulder_yaw", "rad/s^2");
    expect_channel(log, "joints_state/desired_torques", 4, "shoulder_yaw", "N m");
    expect_channel(log, "motors_state/positions", 4, "shoulder_yaw", "rad");
    expect_channel(log, "motors_state/velocities", 4, "shoulder_yaw", "rad/s");
    expect_channel(log, "motors_state/currents", 4, "shoulder_yaw", "A");
    expect_channel(log, "FTs/upper_arm_ft_sensor", 6, "fx", "N");
    expect_channel(log, "FTs/wrist_ft_sensor", 6, "fx", "N");
    cr_assert_str_eq(rb_log_find(log, "FTs/wrist_ft_sensor")->units[3], "N m");
    expect_channel(log, "accelerometers/hand_imu", 3, "x", "m/s^2");
    expect_channel(log, "gyros/hand_imu", 3, "x", "rad/s");
    expect_channel(log, "truth/joints/torques", 4, "shoulder_yaw", "N m");
    expect_channel(log, "truth/joints/friction_torques", 4, "shoulder_yaw", "N m");
    expect_channel(log, "truth/motors/torques", 4, "shoulder_yaw", "N m");
    expect_channel(log, "truth/motors/currents", 4, "shoulder_yaw", "A");
    expect_channel(log, "truth/base/position", 3, "x", "m");
    cr_assert_eq(rb_log_find(log, "joints_state/positions")->n_samples, 301);
    cr_assert_eq(rb_log_find(log, "accelerometers/hand_imu")->n_samples, 31);
    cr_assert_str_eq(rb_log_get_attr(log, "yarp_robot_name"), "arm_2ft");

    /* k_t R I - tau_F - R J_m theta_ddot (theta_ddot = R s_ddot, the logged rotor acceleration) = tau_j */
    const double k_t[] = {0.05, 0.05, 0.05, 0.04}, R[] = {-100, 160, -100, 100}, J_m[] = {1e-5, 1e-5, 8e-6, 5e-6};
    const rb_channel *I = rb_log_find(log, "truth/motors/currents"), *F = rb_log_find(log, "truth/joints/friction_torques"),
                     *A = rb_log_find(log, "truth/motors/accelerations"), *T = rb_log_find(log, "truth/joints/torques"),
                     *M = rb_log_find(log, "truth/motors/torques");
    cr_assert(I && F && A && T && M);
    double worst = 0, scale = 0;
    for (size_t k = 0; k < T->n_samples; k++)
        for (size_t j = 0; j < 4; j++) {
            size_t at = k * 4 + j;
            double tau = k_t[j] * R[j] * I->data[at] - F->data[at] - R[j] * J_m[j] * A->data[at];
            worst = fmax(worst, fabs(tau - T->data[at]));
            scale = fmax(scale, fabs(T->data[at]));
            cr_assert_float_eq(M->data[at], k_t[j] * R[j] * I->data[at], 1e-9 * (1 + fabs(M->data[at])));
        }
    cr_assert_gt(scale, 0.1, "the arm should carry load");
    cr_assert_lt(worst, 1e-9 * scale, "current model off by %g N m", worst);
    rb_log_free(log);

    /* same scenario and seed: same bytes */
    char *again = test_path(dir, "again.mat");
    simulate_ok(scn, again);
    size_t n1, n2;
    char *a = test_read_file(out, &n1), *b = test_read_file(again, &n2);
    cr_assert(n1 == n2 && memcmp(a, b, n1) == 0, "two runs differ");
    free(a), free(b), free(again);
    free(dir), free(scn), free(out);
}

Test(cli_simulate, h5_output)
{
    char *dir = test_tmpdir(), *scn = short_scenario(dir, "0.05"), *out = test_path(dir, "arm.h5");
    simulate_ok(scn, out);
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(out, &log, &err), RB_OK, "%s", err.msg);
    expect_channel(log, "truth/joints/torques", 4, "shoulder_yaw", "N m");
    expect_channel(log, "FTs/upper_arm_ft_sensor", 6, "fx", "N");
    /* provenance (the .mat reader does not read the roboest_provenance struct back; .h5 keeps attributes) */
    const char *v = rb_log_get_attr(log, "seed");
    cr_assert(v && strcmp(v, "7") == 0);
    cr_assert_not_null(rb_log_get_attr(log, "roboest_version"));
    cr_assert_str_eq(rb_log_get_attr(log, "scenario"), "arm_pole");
    cr_assert_eq(strlen(rb_log_get_attr(log, "scenario_sha256")), 64);
    cr_assert_str_eq(rb_log_get_attr(log, "model"), "arm_2ft.urdf");
    rb_log_free(log);
    free(dir), free(scn), free(out);
}

Test(cli_simulate, scenario_error_one_line_no_output)
{
    char *dir = test_tmpdir(), *scn = test_path(dir, "bad.json"), *out = test_path(dir, "x.mat");
    char text[512];
    snprintf(text, sizeof text, "{\"model\": {\"urdf\": \"%s/datasets/arm_2ft.urdf\"},\n \"duration\": 1, \"sede\": 3}",
             RB_SOURCE);
    test_write_file(scn, text);
    const char *args[] = {"simulate", scn, "-o", out, NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, EXIT_INPUT, "exit %d: %s", r.status, r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "bad.json:2:17: unknown key 'sede' (did you mean 'seed'?)"), "%s", r.err);
    cr_assert(!test_exists(out));
    cr_assert_eq(test_count_entries(dir), 1);
    cli_result_free(&r);
    free(dir), free(scn), free(out);
}

Test(cli_simulate, missing_folder_and_existing_output)
{
    char *dir = test_tmpdir(), *scn = short_scenario(dir, "0.01"), *out = test_path(dir, "no/such/dir/x.mat");
    const char *args[] = {"simulate", scn, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, EXIT_OUTPUT, "exit %d: %s", r.status, r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "%s", r.err);
    cli_result_free(&r);
    char *exists = test_path(dir, "x.h5");
    test_write_file(exists, "keep");
    const char *args2[] = {"simulate", scn, "-o", exists, "-q", NULL};
    r = cli_run(NULL, args2);
    cr_assert_eq(r.status, EXIT_OUTPUT, "exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    const char *args3[] = {"simulate", scn, "-o", exists, "-q", "--force", NULL};
    r = cli_run(NULL, args3);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    free(dir), free(scn), free(out), free(exists);
}
