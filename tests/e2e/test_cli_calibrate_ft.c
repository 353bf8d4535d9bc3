/* End-to-end: roboest calibrate-ft (seed 002) on the shipped data sets (datasets/ft_calibration_{a,b,c}.mat): the
 * issue's acceptance numbers read back from calibration.json, both files written, --force; and every error (one
 * line, its exit code, nothing written): the rank problems named (one data set, two, gravity about one axis), a
 * missing channel, an unknown key, an existing output. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define SRC RB_SOURCE
#define CONFIG SRC "/configs/ftcal/calibration.json"

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsNumber(v), "no number '%s'", key);
    return v->valuedouble;
}

Test(cli_calibrate_ft, shipped_data_sets_meet_the_acceptance)
{
    test_deadline(120);
    char *dir = test_tmpdir(), *out = test_path(dir, "out");
    const char *args[] = {"calibrate-ft", CONFIG, "-o", out, NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, CLI_EXIT_OK, "%s", r.err);
    cr_expect(strstr(r.out, "## Held-out check") != NULL, "report.md on stdout");
    char *json = test_path(out, "calibration.json"), *md = test_path(out, "report.md");
    cr_assert(test_exists(md));
    char *text = test_read_file(json, NULL);
    cJSON *doc = cJSON_Parse(text);
    cr_assert_not_null(doc);
    cr_expect_str_eq(cJSON_GetObjectItem(doc, "convention")->valuestring, "plus");
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "C")), 6);
    const cJSON *truth = cJSON_GetObjectItem(doc, "truth");
    cr_assert_not_null(truth);
    cr_expect(num(truth, "C_rel_frobenius_error") <= 0.01, "C error %g", num(truth, "C_rel_frobenius_error"));
    cr_expect(num(truth, "o_error_of_raw_range") <= 0.005, "o error %g", num(truth, "o_error_of_raw_range"));
    cr_expect(num(truth, "o_error_of_data_span") <= 0.005, "o error %g", num(truth, "o_error_of_data_span"));
    cr_expect(num(truth, "mass_rel_error") <= 0.01, "mass error %g", num(truth, "mass_rel_error"));
    cr_expect(num(truth, "com_error_m") <= 0.002, "CoM error %g", num(truth, "com_error_m"));
    const cJSON *sets = cJSON_GetObjectItem(doc, "datasets"), *s;
    cr_assert_eq(cJSON_GetArraySize(sets), 3);
    cJSON_ArrayForEach(s, sets)
    {
        const cJSON *h = cJSON_GetObjectItem(s, "held_out");
        cr_expect(num(s, "held_out_poses") >= 5, "held-out poses");
        cr_expect(num(h, "spread_percent") <= 1.0, "spread %g %%", num(h, "spread_percent"));
        cr_expect(fabs(num(h, "force_norm_mean") - num(h, "m_g_true")) <= 0.01 * num(h, "m_g_true"));
        const cJSON *eig = cJSON_GetObjectItem(s, "covariance_eigenvalues");
        double e3 = cJSON_GetArrayItem(eig, 2)->valuedouble, e4 = cJSON_GetArrayItem(eig, 3)->valuedouble;
        cr_expect(e3 > 1e3 * e4, "three large eigenvalues, three at the noise level: %g %g", e3, e4);
        cr_expect(num(s, "ellipsoid_residual") < 0.01);
    }
    const cJSON *used = cJSON_GetObjectItem(doc, "samples_used");
    cr_expect(num(used, "raw_samples") > 10000);
    const cJSON *pv = cJSON_GetObjectItem(doc, "provenance");
    cr_expect(cJSON_GetObjectItem(pv, "config_sha256") && cJSON_GetObjectItem(pv, "dataset a: input_sha256"));
    cJSON_Delete(doc);
    /* again without --force: the outputs exist */
    cli_result r2 = cli_run(NULL, args);
    cr_expect_eq(r2.status, CLI_EXIT_OUTPUT, "%s", r2.err);
    const char *force[] = {"calibrate-ft", CONFIG, "-o", out, "--force", NULL};
    cli_result r3 = cli_run(NULL, force);
    cr_expect_eq(r3.status, CLI_EXIT_OK, "%s", r3.err);
    cli_result_free(&r);
    cli_result_free(&r2);
    cli_result_free(&r3);
    free(text);
    free(json);
    free(md);
    free(out);
    free(dir);
}

/* A config in dir with the given data sets and extra top-level members. */
static char *write_config(const char *dir, const char *sets, const char *extra)
{
    char *path = test_path(dir, "cal.json"), text[4096];
    snprintf(
        text, sizeof text,
        "{\"model\": \"" SRC "/datasets/arm_2ft.urdf\", \"ft\": \"wrist_ft_sensor\",\n"
        " \"accelerometer\": {\"channel\": \"accelerometers/hand_acc\"}, \"gyroscope\": {\"channel\": "
        "\"gyros/hand_gyro\"},\n \"static\": {\"gyro_max\": 0.03, \"acc_std_max\": 0.1},\n \"datasets\": [%s]%s}\n",
        sets, extra);
    test_write_file(path, text);
    return path;
}

#define SET_A                                                                                                          \
    "{\"name\": \"a\", \"log\": \"" SRC                                                                                \
    "/datasets/ft_calibration_a.mat\", \"added_mass\": 0.5, \"added_com\": [0.04, 0, 0.08], \"frame\": \"hand\"}"
#define SET_B                                                                                                          \
    "{\"name\": \"b\", \"log\": \"" SRC                                                                                \
    "/datasets/ft_calibration_b.mat\", \"added_mass\": 1.0, \"added_com\": [0, 0.05, 0.06], \"frame\": \"hand\"}"

static void expect_error(const char *sets, const char *extra, int status, const char *what)
{
    char *dir = test_tmpdir(), *cfg = write_config(dir, sets, extra), *out = test_path(dir, "out");
    const char *args[] = {"calibrate-ft", cfg, "-o", out, NULL};
    cli_result r = cli_run(NULL, args);
    cr_expect_eq(r.status, status, "%s: exit %d: %s", what, r.status, r.err);
    cr_expect(strstr(r.err, what) != NULL, "expected '%s' in: %s", what, r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "one line: %s", r.err);
    cr_expect(!test_exists(out), "%s: the output folder was made", what);
    cr_expect_eq(test_count_entries(dir), 1, "only the config is left");
    cli_result_free(&r);
    free(cfg);
    free(out);
    free(dir);
}

Test(cli_calibrate_ft, errors_are_one_line_and_write_nothing)
{
    test_deadline(60);
    expect_error(SET_A, "", CLI_EXIT_INPUT, "fewer than two different masses");
    expect_error(SET_A ", " SET_B, "", CLI_EXIT_INPUT, "lie on one line");
    expect_error(SET_A ", " SET_B, ", \"raw\": \"FTs_raw/nope\"", CLI_EXIT_INPUT, "no channel 'FTs_raw/nope'");
    expect_error(SET_A ", " SET_B, ", \"holdot\": 3", CLI_EXIT_INPUT, "did you mean 'holdout'");
    expect_error(SET_A ", " SET_B, ", \"convention\": \"pluss\"", CLI_EXIT_INPUT, "plus");
    expect_error("{\"log\": \"" SRC "/datasets/ft_calibration_a.mat\", \"added_mass\": -1}", "", CLI_EXIT_INPUT,
                 "added_mass");
    expect_error("{\"log\": \"/nonexistent.mat\", \"added_mass\": 1}", "", CLI_EXIT_INPUT, "nonexistent.mat");
    const char *usage[] = {"calibrate-ft", NULL};
    cli_result r = cli_run(NULL, usage);
    cr_expect_eq(r.status, CLI_EXIT_USAGE);
    cli_result_free(&r);
}

/* A data set whose poses tilt the hand about one axis only (the shoulder pitch; the wrist and elbow held): its
 * gravity directions span two dimensions, named before anything is solved. */
Test(cli_calibrate_ft, gravity_about_one_axis_is_named)
{
    test_deadline(60);
    char *dir = test_tmpdir(), *scn = test_path(dir, "tilt.json"), *log = test_path(dir, "tilt.h5");
    char text[4096], times[512] = "[0, 1", values[512] = "[0, 0";
    double t = 1;
    for (int p = 0; p < 8; p++) {
        double v = -1.2 + 0.33 * p;
        t += 1.0;
        snprintf(times + strlen(times), sizeof times - strlen(times), ", %g, %g", t, t + 1.5);
        snprintf(values + strlen(values), sizeof values - strlen(values), ", %g, %g", v, v);
        t += 1.5;
    }
    strcat(times, "]");
    strcat(values, "]");
    snprintf(
        text, sizeof text,
        "{\"model\": {\"urdf\": \"" SRC "/datasets/arm_2ft.urdf\"}, \"duration\": %g,"
        " \"references\": {\"shoulder_pitch\": {\"kind\": \"ramp\", \"times\": %s, \"values\": %s},"
        " \"elbow\": {\"kind\": \"const\", \"offset\": 0.5}},"
        " \"controller\": {\"kind\": \"pd\", \"gravity_comp\": true, \"gains\": {\"shoulder_yaw\": {\"kp\": 30,"
        " \"kd\": 2}, \"shoulder_pitch\": {\"kp\": 400, \"kd\": 50}, \"elbow\": {\"kp\": 200, \"kd\": 25},"
        " \"wrist_roll\": {\"kp\": 5, \"kd\": 0.3}}},"
        " \"sensors\": [{\"kind\": \"ft_raw\", \"ft\": \"wrist_ft_sensor\", \"rate\": 500},"
        " {\"kind\": \"accelerometer\", \"frame\": \"hand_acc\"}, {\"kind\": \"gyroscope\", \"frame\": \"hand_gyro\"}],"
        " \"log_channels\": [\"FTs_raw/\", \"accelerometers/\", \"gyros/\"]}",
        t, times, values);
    test_write_file(scn, text);
    const char *sim[] = {"simulate", scn, "-o", log, "-q", NULL};
    cli_result r = cli_run(NULL, sim);
    cr_assert_eq(r.status, CLI_EXIT_OK, "%s", r.err);
    cli_result_free(&r);
    char sets[1024];
    snprintf(sets, sizeof sets, "{\"name\": \"tilt\", \"log\": \"%s\", \"added_mass\": 0}, " SET_A ", " SET_B, log);
    char *cfg = write_config(dir, sets, ""), *out = test_path(dir, "out");
    const char *args[] = {"calibrate-ft", cfg, "-o", out, NULL};
    r = cli_run(NULL, args);
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_expect(strstr(r.err, "data set 'tilt'") && strstr(r.err, "span 2 dimensions"), "%s", r.err);
    cr_expect(!test_exists(out));
    cli_result_free(&r);
    free(cfg);
    free(out);
    free(scn);
    free(log);
    free(dir);
}
