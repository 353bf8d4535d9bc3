/* `roboest run` with the attitude stage: configs/attitude/balance.json on datasets/humanoid_balance.mat, its roll and
 * pitch scored against the truth (the base's orientation composed with the waist IMU's mount, Rz(90 deg) in
 * datasets/humanoid_lower_body.urdf); NaN samples held, skipped and counted; the refusals (one line, exit 3, no
 * output file). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"
#include "roboest/spatial.h"

#define CONFIG RB_SOURCE "/configs/attitude/balance.json"
#define LOG RB_SOURCE "/datasets/humanoid_balance.mat"
#define DEG (3.14159265358979323846 / 180.0)

/* The truth's quaternion at time t (linear between samples, normalized). */
static void truth_quat(const rb_channel *c, double t, double q[4])
{
    size_t k = 0;
    while (k + 2 < c->n_samples && c->time[k + 1] <= t)
        k++;
    double a = (t - c->time[k]) / (c->time[k + 1] - c->time[k]), n = 0;
    a = fmin(fmax(a, 0.0), 1.0);
    for (int i = 0; i < 4; i++) {
        q[i] = (1 - a) * c->data[4 * k + i] + a * c->data[4 * (k + 1) + i];
        n += q[i] * q[i];
    }
    for (int i = 0; i < 4; i++)
        q[i] /= sqrt(n);
}

Test(cli_attitude, balance_roll_and_pitch_against_the_truth)
{
    char *dir = test_tmpdir(), *out = test_path(dir, "out");
    cli_result r = cli_run(NULL, (const char *[]){"run", CONFIG, "-o", out, NULL});
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "stage attitude: yaw is not observable from one IMU without a magnetometer"),
              "the run warns that yaw is not observed: %s", r.err);
    char *est = test_path(out, "attitude.h5");
    rb_log *e = NULL, *t = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(est, &e, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_read(LOG, &t, &err), RB_OK, "%s", err.msg);
    const rb_channel *rpy = rb_log_find(e, "rpy"), *tq = rb_log_find(t, "truth/base/orientation"),
                     *sensor = rb_log_find(t, "orientations/waist_imu");
    cr_assert(rpy && tq && sensor);
    double R_BI[9], se[2] = {0, 0}, ss[2] = {0, 0}, t0 = rpy->time[0];
    rb_m3_from_rpy(0, 0, 1.5707963267948966, R_BI); /* the waist IMU's mount on root_link (the URDF) */
    size_t n = 0;
    for (size_t k = 0; k < rpy->n_samples; k++) {
        if (rpy->time[k] < t0 + 1.0) /* the metric window of the suite: the first second settles */
            continue;
        double q[4], R_WB[9], R_WI[9], truth[3];
        truth_quat(tq, rpy->time[k], q);
        rb_m3_from_quat(q, R_WB);
        rb_m3_mul(R_WB, R_BI, R_WI);
        rb_m3_to_rpy(R_WI, truth);
        for (int i = 0; i < 2; i++) {
            double d = rpy->data[3 * k + i] - truth[i], ds = sensor->data[3 * k + i] - truth[i];
            se[i] += d * d;
            ss[i] += ds * ds;
        }
        cr_assert_float_eq(sensor->time[k], rpy->time[k], 1e-9, "the clock is the IMU's");
        n++;
    }
    double roll = sqrt(se[0] / (double)n), pitch = sqrt(se[1] / (double)n);
    double s_roll = sqrt(ss[0] / (double)n), s_pitch = sqrt(ss[1] / (double)n);
    cr_log_info("humanoid_balance, waist_imu, %zu samples from 1 s: roll RMSE %.3f deg, pitch %.3f deg against the "
                "truth (the log's orientation sensor: %.3f, %.3f)",
                n, roll / DEG, pitch / DEG, s_roll / DEG, s_pitch / DEG);
    cr_expect(n > 600);
    cr_expect(roll < 0.5 * DEG, "roll RMSE %g deg", roll / DEG);
    cr_expect(pitch < 0.5 * DEG, "pitch RMSE %g deg", pitch / DEG);
    /* better than the orientation sensor (0.005 rad noise) it could be mistaken for */
    cr_expect(roll < s_roll && pitch < s_pitch);
    rb_log_free(e), rb_log_free(t);
    cli_result_free(&r);
    free(est), free(out), free(dir);
}

/* A CSV log of a still, level IMU at 100 Hz (acc [0.01 -0.02 9.81], gyro 0). The log itself holds only
 * finite values (a NaN there is the pipeline's binding error); in `nan_rows` the accelerometer's z and the gyroscope's
 * x are 1e308 and the bump channels -1e308, so the difference stages feeding the attitude stage overflow to inf
 * there: the stage sees non-finite samples as an upstream stage would give them. */
static void write_imu_log(const char *path, const int *nan_rows, size_t n_nan)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "time,accelerometers/imu:x [m/s^2],accelerometers/imu:y [m/s^2],accelerometers/imu:z [m/s^2],"
               "gyros/imu:x [rad/s],gyros/imu:y [rad/s],gyros/imu:z [rad/s],bump/acc:x,bump/acc:y,bump/acc:z,"
               "bump/gyro:x,bump/gyro:y,bump/gyro:z\n");
    for (int k = 0; k < 200; k++) {
        bool bad = false;
        for (size_t i = 0; i < n_nan; i++)
            bad |= nan_rows[i] == k;
        fprintf(f, "%.17g,0.01,-0.02,%s,%s,0,0,0,0,%s,%s,0,0\n", 0.01 * k, bad ? "1e308" : "9.81", bad ? "1e308" : "0",
                bad ? "-1e308" : "0", bad ? "-1e308" : "0");
    }
    fclose(f);
}

/* The pipeline on log.csv with the stage's params (a JSON fragment) and the model (a JSON value or NULL). */
static char *write_config(const char *dir, const char *model, const char *params, const char *acc_elements)
{
    char *path = test_path(dir, "p.json"), text[4096], mk[512] = "";
    if (model)
        snprintf(mk, sizeof mk, "\"model\": %s,\n", model);
    snprintf(text, sizeof text,
             "{%s \"logs\": [\"log.csv\"], \"clock\": {\"channel\": \"accelerometers/imu\"},\n"
             " \"signals\": {\"acc_raw\": {\"channel\": \"accelerometers/imu\"%s}, \"gyro_raw\": {\"channel\": "
             "\"gyros/imu\"},\n  \"acc_bump\": {\"channel\": \"bump/acc\"%s}, \"gyro_bump\": {\"channel\": "
             "\"bump/gyro\"}},\n"
             " \"stages\": [{\"id\": \"da\", \"type\": \"difference\", \"in\": {\"a\": \"acc_raw\", \"b\": "
             "\"acc_bump\"}, \"out\": {\"y\": \"acc\"}},\n"
             "  {\"id\": \"dg\", \"type\": \"difference\", \"in\": {\"a\": \"gyro_raw\", \"b\": \"gyro_bump\"}, "
             "\"out\": {\"y\": \"gyro\"}},\n"
             "  {\"id\": \"att\", \"type\": \"attitude\", \"in\": {\"acc\": \"acc\", \"gyro\": \"gyro\"},\n"
             "   \"out\": {\"rpy\": \"rpy\", \"quaternion\": \"q\"}, \"params\": {%s}}],\n"
             " \"outputs\": [{\"path\": \"est.h5\", \"signals\": [\"rpy\", \"q\"]}]}\n",
             mk, acc_elements ? acc_elements : "", acc_elements ? acc_elements : "", params);
    test_write_file(path, text);
    return path;
}

typedef struct outcome {
    cli_result r;
    char *dir, *out;
} outcome;

static outcome run_case(const char *model, const char *params, const char *acc_elements, const int *nan_rows,
                        size_t n_nan)
{
    outcome oc;
    oc.dir = test_tmpdir();
    char *log = test_path(oc.dir, "log.csv");
    write_imu_log(log, nan_rows, n_nan);
    char *cfg = write_config(oc.dir, model, params, acc_elements);
    oc.out = test_path(oc.dir, "out");
    oc.r = cli_run(NULL, (const char *[]){"run", cfg, "-o", oc.out, NULL});
    free(cfg), free(log);
    return oc;
}

static void done(outcome *oc)
{
    cli_result_free(&oc->r);
    free(oc->dir), free(oc->out);
}

static void expect_refusal(const char *model, const char *params, const char *acc_elements, const char *message)
{
    outcome oc = run_case(model, params, acc_elements, NULL, 0);
    cr_expect_eq(oc.r.status, CLI_EXIT_INPUT, "exit %d: %s", oc.r.status, oc.r.err);
    cr_expect(strstr(oc.r.err, message), "wanted '%s' in: %s", message, oc.r.err);
    cr_expect_eq(test_count_lines(oc.r.err), 1, "one line: %s", oc.r.err);
    cr_expect(!test_exists(oc.out) || test_count_entries(oc.out) == 0, "no output for: %s", message);
    done(&oc);
}

#define MODEL "{\"urdf\": \"" RB_SOURCE "/datasets/humanoid_lower_body.urdf\", \"floating\": true}"

Test(cli_attitude, refusals_exit_3_with_the_cause_and_no_output)
{
    expect_refusal(MODEL, "\"imu\": \"waist_imu_typo\"", NULL,
                   "stage att (attitude): imu: no frame 'waist_imu_typo' in model humanoid_lower_body");
    expect_refusal(NULL, "\"initial_orientation\": [0, 0, 0, 0]", NULL,
                   "stage att (attitude): initial orientation [0, 0, 0, 0] has zero norm");
    expect_refusal(NULL, "\"initial_orientation\": [1, 0, 0]", NULL,
                   "stage att (attitude): initial_orientation has 3 values: give 4 (w, x, y, z)");
    expect_refusal(NULL, "", ", \"elements\": [\"x\", \"y\"]",
                   "stage att (attitude): input acc has 2 elements, expected 3 (the accelerometer's x y z)");
    /* the IMU frame of the model: accepted */
    outcome oc = run_case(MODEL, "\"imu\": \"waist_imu\"", NULL, NULL, 0);
    cr_expect_eq(oc.r.status, 0, "%s", oc.r.err);
    done(&oc);
}

Test(cli_attitude, nan_samples_are_held_skipped_and_counted)
{
    const int rows[] = {0, 1, 50, 51, 52};
    outcome oc = run_case(NULL, "", NULL, rows, 5);
    cr_assert_eq(oc.r.status, 0, "exit %d: %s", oc.r.status, oc.r.err);
    cr_expect(strstr(oc.r.err, "stage att: 2 sample(s) before the first finite accelerometer sample (outputs NaN), "
                               "3 with a non-finite accelerometer element (skipped; 0 of them predict only), 5 with "
                               "a non-finite gyroscope element (held)"),
              "%s", oc.r.err);
    char *est = test_path(oc.out, "est.h5");
    rb_log *e = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(est, &e, &err), RB_OK, "%s", err.msg);
    const rb_channel *rpy = rb_log_find(e, "rpy");
    cr_assert_not_null(rpy);
    cr_expect(isnan(rpy->data[0]) && isnan(rpy->data[3]), "NaN before the start-up");
    for (size_t k = 2; k < rpy->n_samples; k++) /* level: the tilt of [0.01 -0.02 9.81] */
        cr_assert(fabs(rpy->data[3 * k] - atan2(-0.02, 9.81)) < 1e-3 && fabs(rpy->data[3 * k + 1] + 0.01 / 9.81) < 1e-3,
                  "sample %zu: roll %g pitch %g", k, rpy->data[3 * k], rpy->data[3 * k + 1]);
    rb_log_free(e);
    free(est);
    done(&oc);
}
