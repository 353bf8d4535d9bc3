/* End-to-end: the map_dynamics stage (seed 002's maximum-a-posteriori whole-body dynamics) through `roboest run` and
 * `roboest compare` on the shipped logs: on the leg on a pole with FT sensors and joint accelerations only its torques
 * are rnea_torque's (configs/map/leg_map_vs_rnea.json); on the humanoid with unmeasured shank pushes its RMSE is at
 * most the RNEA's (configs/map/suite_humanoid_push.json and its rules); the bad inputs of issue 17: an unobservable
 * wrench without a prior, a sensor frame not in the model, an FT name that is not a sensor joint, a variance not
 * positive, accelerometers without a gyroscope on a floating base (a NaN in one FT element cannot come from a log,
 * whose non-finite samples the pipeline refuses or holds: tests/unit/test_observers_map.c drives the stage with one). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

#define LEG_LOG RB_SOURCE "/datasets/leg_pole_free.mat"
#define PUSH_LOG RB_SOURCE "/datasets/humanoid_balance_push.mat"

/* The leg on a pole (fixed base, the right leg's six joints): the three FT sensors minus their offsets, kf_derivative
 * for dq and ddq, then map_dynamics with the parameters `params` (and inputs `inputs`); extra signals `signals`. */
static const char LEG[] =
    "{\"model\": {\"urdf\": \"" RB_SOURCE "/datasets/humanoid_lower_body.urdf\", \"base\": \"root_link\","
    "  \"joints\": [\"r_hip_pitch\", \"r_hip_roll\", \"r_hip_yaw\", \"r_knee\", \"r_ankle_pitch\", \"r_ankle_roll\"]},"
    " \"clock\": {\"rate\": 1000},"
    " \"signals\": {\"q\": {\"channel\": \"joints_state/positions\", \"elements\": [\"r_hip_pitch\", \"r_hip_roll\","
    "   \"r_hip_yaw\", \"r_knee\", \"r_ankle_pitch\", \"r_ankle_roll\"]},"
    "  \"ft\": {\"channel\": [\"FTs/r_leg_ft_sensor\", \"FTs/r_foot_front_ft_sensor\", \"FTs/r_foot_rear_ft_sensor\"]}"
    "  %s},"
    " \"stages\": [{\"id\": \"kfd\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"},"
    "   \"out\": {\"x_dot\": \"dq\", \"x_ddot\": \"ddq\"}},"
    "  {\"id\": \"map\", \"type\": \"map_dynamics\", \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"ddq\": \"ddq\", \"ft\": "
    "\"ft\"%s},"
    "   \"out\": {\"tau\": \"tau_map\"}, \"params\": {%s}}],"
    " \"outputs\": [{\"path\": \"torques.h5\", \"signals\": [\"tau_map\"]}]}";

static const char FTS[] =
    "\"ft_sensors\": [\"r_leg_ft_sensor\", \"r_foot_front_ft_sensor\", \"r_foot_rear_ft_sensor\"]";

static char *leg_pipeline(const char *dir, const char *signals, const char *inputs, const char *params)
{
    char text[8192];
    snprintf(text, sizeof text, LEG, signals, inputs, params);
    char *path = test_path(dir, "map.json");
    test_write_file(path, text);
    return path;
}

static cli_result run(const char *pipeline, const char *log, const char *out)
{
    const char *args[] = {"run", pipeline, log, "-o", out, NULL};
    return cli_run(NULL, args);
}

static void expect_input_error(const char *params, const char *inputs, const char *signals, const char *const *words)
{
    char *dir = test_tmpdir(), *pl = leg_pipeline(dir, signals, inputs, params), *out = test_path(dir, "out");
    cli_result r = run(pl, LEG_LOG, out);
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "exit %d: %s", r.status, r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "one line: %s", r.err);
    for (size_t i = 0; words[i]; i++)
        cr_assert(strstr(r.err, words[i]), "'%s' not in: %s", words[i], r.err);
    cr_assert(!test_exists(out), "no output folder after an error");
    cli_result_free(&r);
    free(pl), free(out), free(dir);
}

static const rb_channel *channel(const rb_log *lg, const char *name)
{
    const rb_channel *c = rb_log_find(lg, name);
    cr_assert_not_null(c, "no channel %s", name);
    return c;
}

Test(cli_map, leg_pole_map_torques_equal_rnea_torques)
{
    char *dir = test_tmpdir(), *out = test_path(dir, "out");
    const char *args[] = {"run", RB_SOURCE "/configs/map/leg_map_vs_rnea.json", LEG_LOG, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    char *h5 = test_path(out, "torques.h5");
    rb_log *lg = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(h5, &lg, &err), RB_OK, "%s", err.msg);
    const rb_channel *a = channel(lg, "tau_hat"), *b = channel(lg, "tau_map");
    cr_assert_eq(a->n_elements, 6);
    cr_assert_eq(b->n_samples, a->n_samples);
    double worst = 0, top = 0;
    size_t finite = 0;
    for (size_t i = 0; i < a->n_samples * 6; i++) {
        if (!isfinite(a->data[i]) || !isfinite(b->data[i]))
            continue;
        finite++;
        worst = fmax(worst, fabs(a->data[i] - b->data[i]));
        top = fmax(top, fabs(a->data[i]));
    }
    cr_log_info("leg_pole_free: max |tau_map - tau_rnea| = %.3g N m over %zu values (|tau| up to %.1f)", worst, finite,
                top);
    cr_assert_geq(finite, a->n_samples * 6 - 6, "every sample estimated");
    cr_assert_gt(top, 5.0);
    cr_assert_leq(worst, 1e-6, "MAP and RNEA differ by %g N m", worst);
    rb_log_free(lg);
    free(h5), free(out), free(dir);
}

Test(cli_map, humanoid_push_map_rmse_at_most_rnea)
{
    char *dir = test_tmpdir(), *out = test_path(dir, "suite");
    const char *args[] = {"compare", RB_SOURCE "/configs/map/suite_humanoid_push.json", "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    char *rep = test_path(out, "report.json");
    const char *chk[] = {"check", rep, RB_SOURCE "/configs/map/rules_humanoid_push.txt", NULL};
    r = cli_run(NULL, chk);
    cr_assert_eq(r.status, 0, "the rules hold: exit %d: %s %s", r.status, r.out, r.err);
    cli_result_free(&r);
    free(rep), free(out), free(dir);
}

Test(cli_map, no_prior_and_an_unobservable_wrench_names_the_links)
{
    char params[1024];
    snprintf(params, sizeof params,
             "%s, \"prior\": false, \"unknown_wrenches\": [\"r_foot_front_contact\", \"r_foot_rear_contact\", "
             "\"r_upper_leg\", \"r_lower_leg\"]",
             FTS);
    const char *words[] = {"stage map", "unobservable", "external wrench", "r_upper_leg", "r_lower_leg", NULL};
    expect_input_error(params, "", "", words);
}

Test(cli_map, sensor_frame_not_in_the_model)
{
    char params[1024];
    snprintf(params, sizeof params,
             "%s, \"accelerometers\": [\"r_foot_imu_x\"], \"unknown_wrenches\": [\"r_foot_front_contact\"]", FTS);
    const char *words[] = {"accelerometers[0]", "r_foot_imu_x", "did you mean 'r_foot_imu'", NULL};
    expect_input_error(params, ", \"acc\": \"acc\"", ", \"acc\": {\"channel\": \"accelerometers/r_foot_imu\"}", words);
}

Test(cli_map, ft_sensor_joint_not_a_sensor_joint)
{
    const char *params = "\"ft_sensors\": [\"r_leg_ft_sensor\", \"r_knee\", \"r_foot_rear_ft_sensor\"]";
    const char *words[] = {"ft_sensors[1]", "r_knee", "not a sensor joint", "r_foot_front_ft_sensor", NULL};
    expect_input_error(params, "", "", words);
}

Test(cli_map, variance_not_positive)
{
    char params[1024];
    snprintf(params, sizeof params, "%s, \"var_ft\": [0.25, 0.25, 0, 0.25, 0.25, 0.25]", FTS);
    const char *words[] = {"var_ft", NULL};
    expect_input_error(params, "", "", words);
}

/* The humanoid, floating, every joint, accelerometers and no gyroscope: runs, with the warning. */
Test(cli_map, floating_base_accelerometers_without_gyroscope_warn)
{
    char *dir = test_tmpdir(), *out = test_path(dir, "out"), *pl = test_path(dir, "h.json");
    char text[4096];
    snprintf(text, sizeof text,
             "{\"model\": {\"urdf\": \"%s/datasets/humanoid_lower_body.urdf\", \"floating\": true},"
             " \"clock\": {\"rate\": 200},"
             " \"signals\": {\"q\": {\"channel\": \"joints_state/positions\"},"
             "  \"ft\": {\"channel\": [\"FTs/l_leg_ft_sensor\", \"FTs/r_leg_ft_sensor\"]},"
             "  \"acc\": {\"channel\": [\"accelerometers/waist_imu\", \"accelerometers/r_foot_imu\"]}},"
             " \"stages\": [{\"id\": \"kfd\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"},"
             "   \"out\": {\"x_dot\": \"dq\", \"x_ddot\": \"ddq\"}},"
             "  {\"id\": \"map\", \"type\": \"map_dynamics\", \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"ddq\": \"ddq\","
             "   \"ft\": \"ft\", \"acc\": \"acc\"}, \"out\": {\"tau\": \"tau_map\"},"
             "   \"params\": {\"ft_sensors\": [\"l_leg_ft_sensor\", \"r_leg_ft_sensor\"],"
             "    \"accelerometers\": [\"waist_imu\", \"r_foot_imu\"],"
             "    \"unknown_wrenches\": [\"l_foot_front_contact\", \"r_foot_front_contact\"]}}],"
             " \"outputs\": [{\"path\": \"torques.h5\", \"signals\": [\"tau_map\"]}]}",
             RB_SOURCE);
    test_write_file(pl, text);
    cli_result r = run(pl, PUSH_LOG, out);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "stage map") && strstr(r.err, "angular velocity unobserved"), "%s", r.err);
    cli_result_free(&r);
    free(pl), free(out), free(dir);
}
