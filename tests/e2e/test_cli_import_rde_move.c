/* End-to-end: a project folder (the public estimator's ergoCub configuration with a friction torque measurement,
 * the URDF, a friction network) imported with roboest import-rde, the folder moved, and the pipeline run as
 * written: the URDF and network paths are relative to the pipeline's folder, the friction measurement becomes a
 * friction_pinn stage, and the IMU bindings are optional. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

#define ERGOCUB RB_SHARED "/models/rde_configs/ergoCubSN000_r_leg"
#define ERGOCUB_URDF RB_SHARED "/models/ergoCubSN000.urdf"

static void copy_file(const char *from, const char *to)
{
    size_t len;
    char *text = test_read_file(from, &len);
    test_write_file(to, text);
    free(text);
}

static char *replaced(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    cr_assert_not_null(at, "'%s' is in the text", from);
    size_t head = (size_t)(at - text), n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)head, text, to, at + strlen(from));
    return out;
}

/* proj/rde (the ergoCub configuration, the friction torque measured), proj/ergoCubSN000.urdf, proj/net/friction.json
 * (the paper's leg network, which has the same joints, its sample period set to the configuration's 0.01 s),
 * proj/out. */
static void make_project(const char *proj)
{
    static const char *const ini[] = {"config.ini", "model.ini", "ukf.ini", "ukf/ukf_state.ini"};
    char path[1024], from[1024];
    const char *dirs[] = {"", "/rde", "/rde/ukf", "/net", "/out"};
    for (size_t i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s%s", proj, dirs[i]);
        cr_assert_eq(mkdir(path, 0755), 0, "%s", path);
    }
    for (size_t i = 0; i < 4; i++) {
        snprintf(from, sizeof from, "%s/%s", ERGOCUB, ini[i]);
        snprintf(path, sizeof path, "%s/rde/%s", proj, ini[i]);
        copy_file(from, path);
    }
    size_t len;
    char *meas = test_read_file(ERGOCUB "/ukf/ukf_measurement.ini", &len);
    char *listed = replaced(meas, "dynamics_list (\"JOINT_VELOCITY\", \"MOTOR_CURRENT\",",
                            "dynamics_list (\"JOINT_VELOCITY\", \"MOTOR_CURRENT\", \"FRICTION_TORQUE\",");
    char *with =
        replaced(listed, "[JOINT_VELOCITY]",
                 "[FRICTION_TORQUE]\nname \"tau_F\"\nelements (\"r_hip_pitch\", \"r_hip_roll\", \"r_hip_yaw\", "
                 "\"r_knee\", \"r_ankle_pitch\", \"r_ankle_roll\")\ncovariance (2e-2, 2e-2, 2e-2, 2e-2, 2e-2, "
                 "2e-2)\ndynamic_model \"ConstantMeasurementModel\"\n\n[JOINT_VELOCITY]");
    snprintf(path, sizeof path, "%s/rde/ukf/ukf_measurement.ini", proj);
    test_write_file(path, with);
    snprintf(path, sizeof path, "%s/ergoCubSN000.urdf", proj);
    copy_file(ERGOCUB_URDF, path);
    char *net = test_read_file(RB_SOURCE "/configs/paper/leg_friction_pinn.json", &len);
    char *net01 = replaced(net, "\"sample_period\": 0.001,", "\"sample_period\": 0.01,");
    snprintf(path, sizeof path, "%s/net/friction.json", proj);
    test_write_file(path, net01);
    free(meas), free(listed), free(with), free(net), free(net01);
}

/* The ergoCub leg on a pole (configs/scenarios/ergocub_leg_pole.json), 1 s, with or without its IMUs. */
static char *simulate(const char *dir, const char *name, bool imus)
{
    size_t len;
    char *text = test_read_file(RB_SOURCE "/configs/scenarios/ergocub_leg_pole.json", &len);
    cJSON *sc = cJSON_Parse(text);
    cr_assert_not_null(sc);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(sc, "model"), "urdf", cJSON_CreateString(ERGOCUB_URDF));
    cJSON_ReplaceItemInObject(sc, "duration", cJSON_CreateNumber(1.0));
    cJSON *sensors = cJSON_GetObjectItem(sc, "sensors");
    for (int i = cJSON_GetArraySize(sensors) - 1; !imus && i >= 0; i--) {
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(sensors, i), "kind"));
        if (strcmp(kind, "accelerometer") == 0 || strcmp(kind, "gyroscope") == 0 || strcmp(kind, "orientation") == 0)
            cJSON_DeleteItemFromArray(sensors, i);
    }
    char json_name[64], log_name[64];
    snprintf(json_name, sizeof json_name, "%s.json", name);
    snprintf(log_name, sizeof log_name, "%s.mat", name);
    char *out = cJSON_Print(sc), *scenario = test_path(dir, json_name), *log = test_path(dir, log_name);
    test_write_file(scenario, out);
    const char *args[] = {"simulate", scenario, "-o", log, NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "simulate: %s", r.err);
    cli_result_free(&r);
    cJSON_free(out);
    cJSON_Delete(sc);
    free(text), free(scenario);
    return log;
}

Test(cli_import_rde_move, imported_pipeline_runs_after_the_project_moves)
{
    test_deadline(120);
    test_need_shared("models/rde_configs/ergoCubSN000_r_leg");
    test_need_shared("models/ergoCubSN000.urdf");
    char *tmp = test_tmpdir(), *proj = test_path(tmp, "proj"), *moved = test_path(tmp, "moved");
    make_project(proj);
    char rde[1024], out[1024], net[1024];
    snprintf(rde, sizeof rde, "%s/rde", proj);
    snprintf(out, sizeof out, "%s/out/pipeline.json", proj);
    snprintf(net, sizeof net, "%s/net/friction.json", proj);
    /* without the network the friction measurement cannot be imported: one line, exit 3, no file */
    const char *bare[] = {"import-rde", rde, "-o", out, NULL};
    cli_result r = cli_run(NULL, bare);
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_assert(strstr(r.err, "--friction-network"), "%s", r.err);
    cr_assert_not(test_exists(out));
    cli_result_free(&r);
    const char *args[] = {"import-rde", rde, "-o", out, "--friction-network", net, NULL};
    r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    /* the paths as written: relative to the pipeline's folder */
    size_t len;
    char *text = test_read_file(out, &len);
    cJSON *p = cJSON_Parse(text);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "model"), "urdf")),
                     "../ergoCubSN000.urdf");
    cJSON *friction = cJSON_GetArrayItem(cJSON_GetObjectItem(p, "stages"), 0);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(friction, "type")), "friction_pinn");
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(friction, "params"), "network")),
                     "../net/friction.json");
    cJSON *ukf = cJSON_GetArrayItem(cJSON_GetObjectItem(p, "stages"), 1);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(ukf, "in"), "friction")),
                     "friction/tau_f");
    cJSON *r_friction = cJSON_GetObjectItem(cJSON_GetObjectItem(ukf, "params"), "r_friction");
    cr_assert_eq(cJSON_GetArraySize(r_friction), 6);
    cr_assert_float_eq(cJSON_GetArrayItem(r_friction, 0)->valuedouble, 2e-2, 1e-15);
    cJSON *signals = cJSON_GetObjectItem(p, "signals");
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(signals, "acc"), "optional")));
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(signals, "gyro"), "optional")));
    cJSON_Delete(p);
    free(text);
    /* the project moved: the pipeline runs as written */
    cr_assert_eq(rename(proj, moved), 0);
    char *log = simulate(tmp, "ergocub", true);
    char pipeline[1024], run_dir[1024], result[1100];
    snprintf(pipeline, sizeof pipeline, "%s/out/pipeline.json", moved);
    snprintf(run_dir, sizeof run_dir, "%s/run", moved);
    const char *run[] = {"run", pipeline, log, "-o", run_dir, "-q", NULL};
    r = cli_run(NULL, run);
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(result, sizeof result, "%s/ukf_torque.h5", run_dir);
    cr_assert(test_exists(result));
    cli_result_free(&r);
    /* a log without the IMU channels gets past the bindings; ukf_torque without its listed IMUs is the stage's
     * business (it runs, or fails in stage ukf) */
    char *no_imu = simulate(tmp, "ergocub_no_imu", false);
    snprintf(run_dir, sizeof run_dir, "%s/run_no_imu", moved);
    const char *run2[] = {"run", pipeline, no_imu, "-o", run_dir, "-q", NULL};
    r = cli_run(NULL, run2);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "optional signal acc"), "%s", r.err);
    cli_result_free(&r);
    free(log), free(no_imu), free(proj), free(moved), free(tmp);
}
