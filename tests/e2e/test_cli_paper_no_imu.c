/* End-to-end: the shipped leg pipelines (configs/paper/leg_*.json) on a leg-on-a-pole log without IMU channels
 * (configs/scenarios/leg_pole.json simulated without its accelerometers, gyroscopes and orientation sensor): their
 * IMU bindings are optional, so the run binds them 0 wide and says so instead of failing on a missing channel. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

#define PAPER RB_SOURCE "/configs/paper"

/* The leg scenario, `duration` s, without IMU sensors, simulated into dir/no_imu.mat (returned, free()). */
static char *simulate_without_imu(const char *dir, double duration)
{
    size_t len;
    char *text = test_read_file(RB_SOURCE "/configs/scenarios/leg_pole.json", &len);
    cJSON *sc = cJSON_Parse(text);
    cr_assert_not_null(sc);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(sc, "model"), "urdf",
                              cJSON_CreateString(RB_SOURCE "/datasets/humanoid_lower_body.urdf"));
    cJSON_ReplaceItemInObject(sc, "duration", cJSON_CreateNumber(duration));
    cJSON *sensors = cJSON_GetObjectItem(sc, "sensors");
    int removed = 0;
    for (int i = cJSON_GetArraySize(sensors) - 1; i >= 0; i--) {
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(sensors, i), "kind"));
        if (strcmp(kind, "accelerometer") == 0 || strcmp(kind, "gyroscope") == 0 || strcmp(kind, "orientation") == 0) {
            cJSON_DeleteItemFromArray(sensors, i);
            removed++;
        }
    }
    cr_assert_geq(removed, 2, "the scenario had IMU sensors to remove");
    char *out = cJSON_Print(sc), *scenario = test_path(dir, "no_imu.json"), *log = test_path(dir, "no_imu.mat");
    test_write_file(scenario, out);
    const char *args[] = {"simulate", scenario, "-o", log, NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "simulate: %s", r.err);
    cli_result_free(&r);
    rb_log *lg;
    rb_err err;
    cr_assert_eq(rb_log_read(log, &lg, &err), RB_OK, "%s", err.msg);
    for (size_t c = 0; c < lg->n_channels; c++)
        cr_assert(strncmp(lg->channels[c].name, "accelerometers/", 15) != 0 &&
                      strncmp(lg->channels[c].name, "gyros/", 6) != 0,
                  "no IMU channel in the log: %s", lg->channels[c].name);
    rb_log_free(lg);
    cJSON_free(out);
    cJSON_Delete(sc);
    free(text), free(scenario);
    return log;
}

/* Both IMU bindings (acc, gyro) named as optional and absent in the warnings. */
static void assert_imu_warnings(const char *err)
{
    cr_assert(strstr(err, "optional signal acc: the log has no channel accelerometers/r_foot_imu"), "%s", err);
    cr_assert(strstr(err, "optional signal gyro: the log has no channel gyros/r_foot_imu"), "%s", err);
    cr_assert_null(strstr(err, "not found"), "%s", err);
}

/* RMS of tau_hat (dir/torques.h5) against truth/joints/torques of the log, over its second half (after the
 * derivative filter settled), and the RMS of the truth there. */
static void torque_error(const char *dir, const char *log_path, double *rmse, double *rms)
{
    char *path = test_path(dir, "torques.h5");
    rb_log *est, *log;
    rb_err err;
    cr_assert_eq(rb_log_read(path, &est, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_read(log_path, &log, &err), RB_OK, "%s", err.msg);
    const rb_channel *tau = rb_log_find(est, "tau_hat"), *truth = rb_log_find(log, "truth/joints/torques");
    cr_assert(tau && truth);
    cr_assert_eq(tau->n_elements, truth->n_elements);
    double se = 0, ss = 0;
    size_t n = 0, j = 0, w = tau->n_elements;
    for (size_t k = tau->n_samples / 2; k < tau->n_samples; k++) {
        while (j + 1 < truth->n_samples && truth->time[j] < tau->time[k] - 1e-9)
            j++;
        cr_assert_float_eq(truth->time[j], tau->time[k], 1e-6, "the run's clock is the log's 1 kHz");
        for (size_t i = 0; i < w; i++) {
            double d = tau->data[k * w + i] - truth->data[j * w + i];
            se += d * d;
            ss += truth->data[j * w + i] * truth->data[j * w + i];
            n++;
        }
    }
    *rmse = sqrt(se / (double)n);
    *rms = sqrt(ss / (double)n);
    rb_log_free(est), rb_log_free(log);
    free(path);
}

/* Runs configs/paper/<config> on log into tmp/out<index>: exit 0 with the two optional-signal warnings. Returns the
 * output folder (free()). */
static char *run_without_imu(const char *tmp, const char *log, const char *config, size_t index, const char *note)
{
    char cfg[512], sub[64];
    snprintf(cfg, sizeof cfg, "%s/%s", PAPER, config);
    snprintf(sub, sizeof sub, "out%zu", index);
    char *out = test_path(tmp, sub);
    const char *args[] = {"run", cfg, log, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "%s: exit %d: %s", config, r.status, r.err);
    assert_imu_warnings(r.err);
    if (note)
        cr_assert(strstr(r.err, note), "%s: no \"%s\" in: %s", config, note, r.err);
    cli_result_free(&r);
    return out;
}

/* The RNEA and the current-only pipelines need no IMU: they run, with the two warnings, and the RNEA's torques
 * follow the truth (its error well under the torques' own size). */
Test(cli_paper_no_imu, leg_pipelines_run_without_imu_channels)
{
    test_deadline(120);
    char *tmp = test_tmpdir();
    char *log = simulate_without_imu(tmp, 2.0);
    const char *configs[] = {"leg_rnea.json", "leg_current.json", "leg_current_minus_pinn.json"};
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        char *out = run_without_imu(tmp, log, configs[c], c, NULL);
        if (c == 0) {
            double rmse, rms;
            torque_error(out, log, &rmse, &rms);
            cr_log_info("leg_rnea without IMU: RMSE %.3f N m, truth RMS %.3f N m", rmse, rms);
            cr_assert_lt(rmse, 0.25 * rms, "RMSE %g N m against truth RMS %g N m", rmse, rms);
        }
        free(out);
    }
    free(log), free(tmp);
}

/* The UKF pipelines bind their IMUs optionally too, and ukf_torque runs without its listed accelerometers and
 * gyroscopes when their inputs are 0 wide, saying so in a note. */
Test(cli_paper_no_imu, leg_ukf_pipelines_run_without_imu_channels)
{
    test_deadline(120);
    char *tmp = test_tmpdir();
    char *log = simulate_without_imu(tmp, 1.0);
    const char *configs[] = {"leg_ukf_pinn.json", "leg_ukf_nofric.json", "leg_ukf_scv.json"};
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++)
        free(run_without_imu(tmp, log, configs[c], c, "run without them"));
    free(log), free(tmp);
}
