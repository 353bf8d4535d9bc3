/* End-to-end: the joint-torque stages through `roboest run` on a log made by `roboest simulate` (arm_pole with its
 * sensor noise and FT offset): the shipped configs/torque_arm_pole.json (kf_derivative -> rnea_torque and
 * ukf_torque, outputs and reports) runs and two runs give the same bytes, with the UKF closer to the truth than the
 * RNEA; a numeric failure is one line naming stage, sample and block, exit code 4, no output. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

#define ARM_POLE RB_SOURCE "/configs/scenarios/arm_pole.json"

/* arm_pole.json, 1 s, with the model's absolute path, simulated into dir/arm.h5; returns that path. */
static char *simulate_arm(const char *dir)
{
    char *text = test_read_file(ARM_POLE, NULL);
    cr_assert_not_null(text);
    const char *keys[] = {"\"duration\": 2.0", "\"../../datasets/arm_2ft.urdf\""};
    char repl[2][512];
    snprintf(repl[0], sizeof repl[0], "\"duration\": 1.0");
    snprintf(repl[1], sizeof repl[1], "\"%s/datasets/arm_2ft.urdf\"", RB_SOURCE);
    for (int k = 0; k < 2; k++) {
        char *at = strstr(text, keys[k]);
        cr_assert_not_null(at, "arm_pole.json lacks %s", keys[k]);
        size_t head = (size_t)(at - text);
        char *next = malloc(strlen(text) + strlen(repl[k]) + 1);
        memcpy(next, text, head);
        strcpy(next + head, repl[k]);
        strcat(next, at + strlen(keys[k]));
        free(text);
        text = next;
    }
    char *scn = test_path(dir, "arm.json"), *log = test_path(dir, "arm.h5");
    test_write_file(scn, text);
    free(text);
    const char *args[] = {"simulate", scn, "-o", log, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "simulate: exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    free(scn);
    return log;
}

static const char PIPELINE[] =
    "{\"model\": {\"urdf\": \"%s/datasets/arm_2ft.urdf\", \"base\": \"base_link\"}, \"logs\": [\"%s\"],"
    " \"clock\": {\"rate\": 1000},"
    " \"signals\": {\"q\": {\"channel\": \"joints_state/positions\"}, \"cur\": {\"channel\": "
    "\"motors_state/currents\"},"
    "  \"ft\": {\"channel\": [\"FTs/upper_arm_ft_sensor\", \"FTs/wrist_ft_sensor\"]},"
    "  \"acc\": {\"channel\": \"accelerometers/hand_imu\"}, \"gyro\": {\"channel\": \"gyros/hand_imu\"},"
    "  \"tau_true\": {\"channel\": \"truth/joints/torques\"}},"
    " \"stages\": ["
    "  {\"id\": \"kfd\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"}, \"out\": {\"x_dot\": \"dq\", \"x_ddot\": "
    "\"ddq\"}},"
    "  {\"id\": \"rnea\", \"type\": \"rnea_torque\", \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"ddq\": \"ddq\", \"ft\": "
    "\"ft\"},"
    "   \"out\": {\"tau\": \"tau_rnea\"}, \"params\": {\"ft_sensors\": [\"upper_arm_ft_sensor\", "
    "\"wrist_ft_sensor\"]}},"
    "  {\"id\": \"ukf\", \"type\": \"ukf_torque\", \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"current\": \"cur\", "
    "\"ft\": \"ft\","
    "   \"acc\": \"acc\", \"gyro\": \"gyro\"}, \"out\": {\"tau_j\": \"tau_ukf\", \"nis\": \"nis\", \"var\": \"var\"},"
    "   \"params\": {\"ft_sensors\": [\"upper_arm_ft_sensor\", \"wrist_ft_sensor\"], \"accelerometers\": "
    "[\"hand_acc\"],"
    "    \"gyroscopes\": [\"hand_gyro\"], \"k_t\": [0.05, 0.05, 0.05, 0.04], \"gear_ratio\": [-100, 160, -100, 100],"
    "    \"motor_inertia\": [1e-5, 1e-5, 8e-6, 5e-6]%s}}],"
    " \"outputs\": [{\"path\": \"torques.h5\", \"signals\": [\"tau_rnea\", \"tau_ukf\", \"nis\", \"var\"]}],"
    " \"metrics\": [{\"estimate\": \"tau_rnea\", \"reference\": \"tau_true\"}, {\"estimate\": \"tau_ukf\", "
    "\"reference\": \"tau_true\"}],"
    " \"reports\": [\"report.json\"]}";

static char *write_pipeline(const char *dir, const char *log, const char *extra)
{
    char text[8192];
    snprintf(text, sizeof text, PIPELINE, RB_SOURCE, log, extra);
    char *path = test_path(dir, "torques.json");
    test_write_file(path, text);
    return path;
}

Test(cli_torque, runs_are_deterministic)
{
    char *dir = test_tmpdir(), *log = simulate_arm(dir);
    char *out[2] = {test_path(dir, "a"), test_path(dir, "b")};
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"run", RB_SOURCE "/configs/torque_arm_pole.json", log, "-o", out[i], "-q", NULL};
        cli_result r = cli_run(NULL, args);
        cr_assert_eq(r.status, 0, "run %d: exit %d: %s", i, r.status, r.err);
        cli_result_free(&r);
    }
    const char *files[] = {"torques.h5", "report.json", "report.md"};
    for (int f = 0; f < 3; f++) {
        char *pa = test_path(out[0], files[f]), *pb = test_path(out[1], files[f]);
        size_t la, lb;
        char *a = test_read_file(pa, &la), *b = test_read_file(pb, &lb);
        cr_assert(a && b, "%s missing", files[f]);
        cr_assert(la == lb && memcmp(a, b, la) == 0, "%s differs between two runs", files[f]);
        free(a), free(b), free(pa), free(pb);
    }
    /* the estimates: finite after the first samples, the UKF's closer to the truth than the RNEA's */
    char *ph5 = test_path(out[0], "torques.h5");
    rb_log *lg = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(ph5, &lg, &err), RB_OK, "%s", err.msg);
    const rb_channel *u = rb_log_find(lg, "tau_ukf"), *rn = rb_log_find(lg, "tau_rnea"),
                     *tr = rb_log_find(lg, "tau_true");
    cr_assert(u && rn && tr);
    cr_assert_eq(u->n_elements, 4);
    double su = 0, sr = 0;
    for (size_t i = 10 * 4; i < u->n_samples * 4; i++) {
        cr_assert(isfinite(u->data[i]) && isfinite(rn->data[i]), "value %zu", i);
        if (i >= 500 * 4)
            su += pow(u->data[i] - tr->data[i], 2), sr += pow(rn->data[i] - tr->data[i], 2);
    }
    double nu = (double)(u->n_samples * 4 - 2000);
    cr_log_info("arm_pole 1 s: RMSE after 0.5 s: UKF %.3f, RNEA %.3f N m", sqrt(su / nu), sqrt(sr / nu));
    cr_assert(su < sr, "UKF %g vs RNEA %g", sqrt(su / nu), sqrt(sr / nu));
    rb_log_free(lg);
    free(ph5), free(out[0]), free(out[1]), free(log);
    test_remove_tree(dir);
}

Test(cli_torque, numeric_failure_is_one_line_and_leaves_nothing)
{
    char *dir = test_tmpdir(), *log = simulate_arm(dir), *cfg = write_pipeline(dir, log, ", \"p0_dq\": [1e300]");
    char *out = test_path(dir, "o");
    const char *args[] = {"run", cfg, "-o", out, NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, CLI_EXIT_NUMERIC, "exit %d: %s", r.status, r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "stage ukf (ukf_torque): sample 0") && strstr(r.err, "block dq (joint shoulder_yaw)"), "%s",
              r.err);
    char *h5 = test_path(out, "torques.h5");
    cr_assert(!test_exists(h5), "no partial output");
    cli_result_free(&r);
    free(h5), free(out), free(cfg), free(log);
    test_remove_tree(dir);
}
