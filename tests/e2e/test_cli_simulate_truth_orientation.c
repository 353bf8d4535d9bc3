/* End-to-end: roboest simulate logs, beside each orientation sensor's channel orientations/<frame> (roll pitch yaw
 * with the sensor's noise), its noise-free truth truth/orientations/<frame>: the same element names and unit, the
 * sensor's reading within its noise of it, and the truth the frame's true attitude (smooth where the sensor is not). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

#define HUMANOID_BALANCE RB_SOURCE "/configs/scenarios/humanoid_balance.json"

Test(cli_simulate_truth_orientation, beside_each_orientation_sensor)
{
    char *dir = test_tmpdir(), *scn = test_path(dir, "short.json"), *out = test_path(dir, "short.mat");
    char *text = test_read_file(HUMANOID_BALANCE, NULL), urdf[512];
    cr_assert_not_null(text);
    /* 1 s, the model by its absolute path */
    char *d = strstr(text, "\"duration\": 10.0"), *u = strstr(text, "\"../../datasets/humanoid_lower_body.urdf\"");
    cr_assert(d && u && d > u);
    snprintf(urdf, sizeof urdf, "\"%s/datasets/humanoid_lower_body.urdf\"", RB_SOURCE);
    FILE *f = fopen(scn, "w");
    cr_assert_not_null(f);
    fprintf(f, "%.*s%s%.*s\"duration\": 1.0%s", (int)(u - text), text, urdf,
            (int)(d - u - strlen("\"../../datasets/humanoid_lower_body.urdf\"")),
            u + strlen("\"../../datasets/humanoid_lower_body.urdf\""), d + strlen("\"duration\": 10.0"));
    fclose(f);
    free(text);
    const char *args[] = {"simulate", scn, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(out, &log, &err), RB_OK, "%s", err.msg);
    const rb_channel *meas = rb_log_find(log, "orientations/waist_imu");
    const rb_channel *truth = rb_log_find(log, "truth/orientations/waist_imu");
    cr_assert(meas && truth, "orientations/waist_imu and its truth");
    cr_assert_eq(truth->n_elements, 3);
    for (size_t i = 0; i < 3; i++) {
        cr_assert_str_eq(truth->element_names[i], meas->element_names[i]);
        cr_assert_str_eq(truth->units[i], "rad");
    }
    /* the sensor (its own rate and stamps) within its noise (the preset's 0.005 rad std) of the truth at the nearest
     * logged instant; the truth smooth: a swaying robot's attitude changes by far less than the noise between two
     * 1 ms samples */
    double ss = 0.0, step = 0.0;
    size_t j = 0, n = meas->n_samples;
    cr_assert_gt(n, 50);
    for (size_t k = 0; k < n; k++) {
        while (j + 1 < truth->n_samples &&
               fabs(truth->time[j + 1] - meas->time[k]) <= fabs(truth->time[j] - meas->time[k]))
            j++;
        cr_assert_lt(fabs(truth->time[j] - meas->time[k]), 1e-3, "sample %zu", k);
        for (size_t i = 0; i < 3; i++) {
            double e = meas->data[3 * k + i] - truth->data[3 * j + i];
            ss += e * e;
        }
    }
    for (size_t k = 1; k < truth->n_samples; k++)
        for (size_t i = 0; i < 3; i++)
            step = fmax(step, fabs(truth->data[3 * k + i] - truth->data[3 * (k - 1) + i]));
    double rms = sqrt(ss / (3.0 * (double)n));
    cr_assert(rms > 0.002 && rms < 0.01, "sensor minus truth RMS %g rad", rms);
    cr_assert_lt(step, 1e-3, "largest step of the truth %g rad", step);
    rb_log_free(log);
    free(dir), free(scn), free(out);
}
