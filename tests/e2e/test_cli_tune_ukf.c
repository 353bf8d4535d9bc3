/* End-to-end: roboest tune ukf-torque. On a simulated leg pressing on the ground with known sensor noise (current
 * 0.05 A, FT 1 N / 1 N m: not the presets the shipped pipeline assumes), the tuned measurement variances are the
 * simulator's; the tuned pipeline, written into another folder, runs; the documented errors. */
#define _GNU_SOURCE
#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define PIPE RB_SOURCE "/configs/paper/leg_ukf_nofric.json"

/* leg_pole_ground's scenario, 2 s, the motor currents' and FT sensors' noise raised. */
static char *simulate(const char *dir)
{
    char *text = test_read_file(RB_SOURCE "/configs/scenarios/datasets/leg_pole_ground.json", NULL);
    cJSON *d = cJSON_Parse(text);
    cr_assert_not_null(d);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(d, "model"), "urdf",
                              cJSON_CreateString(RB_SOURCE "/datasets/humanoid_lower_body.urdf"));
    cJSON_ReplaceItemInObject(d, "duration", cJSON_CreateNumber(2.0));
    const double cur[6] = {0.05, 0.05, 0.05, 0.05, 0.05, 0.05}, ft[6] = {1, 1, 1, 1, 1, 1};
    cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(d, "sensors"))
    {
        const char *kind = cJSON_GetObjectItem(s, "kind")->valuestring;
        if (strcmp(kind, "motor_current") == 0)
            cJSON_AddItemToObject(s, "noise", cJSON_CreateDoubleArray(cur, 6));
        if (strcmp(kind, "ft") == 0)
            cJSON_AddItemToObject(s, "noise", cJSON_CreateDoubleArray(ft, 6));
    }
    char *scen = test_path(dir, "scenario.json"), *out = cJSON_Print(d);
    test_write_file(scen, out);
    cJSON_free(out);
    cJSON_Delete(d);
    free(text);
    cli_result r = cli_run(dir, (const char *const[]){"simulate", "scenario.json", "-o", "log.mat", NULL});
    cr_assert_eq(r.status, 0, "simulate: %s", r.err);
    cli_result_free(&r);
    free(scen);
    return test_path(dir, "log.mat");
}

static const cJSON *ukf_params(const cJSON *doc)
{
    const cJSON *s;
    cJSON_ArrayForEach(
        s, cJSON_GetObjectItem(doc, "stages")) if (strcmp(cJSON_GetObjectItem(s, "type")->valuestring, "ukf_torque") ==
                                                   0) return cJSON_GetObjectItem(s, "params");
    return NULL;
}

Test(tune_ukf, measurement_noise_is_the_simulators_and_the_pipeline_runs)
{
    test_deadline(120);
    char *dir = test_tmpdir(), *log = simulate(dir), *sub = test_path(dir, "sub");
    char *before = test_read_file(PIPE, NULL);
    cli_result r;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", sub);
    cr_assert_eq(system(cmd), 0);
    r = cli_run(
        dir, (const char *const[]){"tune", "ukf-torque", "log.mat", "--pipeline", PIPE, "-o", "sub/tuned.json", NULL});
    cr_assert_eq(r.status, 0, "tune: %s", r.err);
    cr_assert(strstr(r.out, "r_current = [") && strstr(r.out, "still windows"), "%s", r.out);
    cr_assert(strstr(r.out, "q_tau_m = [") && strstr(r.out, "q_ft = ["), "%s", r.out);
    cli_result_free(&r);
    char *tuned_path = test_path(sub, "tuned.json"), *text = test_read_file(tuned_path, NULL);
    cJSON *doc = cJSON_Parse(text);
    const cJSON *p = ukf_params(doc);
    cr_assert_not_null(p);
    const cJSON *rc = cJSON_GetObjectItem(p, "r_current"), *rf = cJSON_GetObjectItem(p, "r_ft");
    cr_assert_eq(cJSON_GetArraySize(rc), 6);
    for (int j = 0; j < 6; j++) /* 0.05^2; 2000 still samples: sd of the estimate ~5 % */
        cr_assert(fabs(cJSON_GetArrayItem(rc, j)->valuedouble / 0.0025 - 1) < 0.15, "r_current[%d] = %g", j,
                  cJSON_GetArrayItem(rc, j)->valuedouble);
    cr_assert_eq(cJSON_GetArraySize(rf), 18);
    int close = 0;
    for (int e = 0; e < 18; e++) /* 1^2; a loaded foot's fz also moves a little */
        close += fabs(cJSON_GetArrayItem(rf, e)->valuedouble - 1) < 0.15;
    cr_assert_geq(close, 15, "r_ft close to 1: %d of 18", close);
    /* the urdf and the kept params come along, the input pipeline is untouched */
    const char *urdf = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "model"), "urdf")->valuestring;
    cr_assert(urdf[0] != '/' && strstr(urdf, "humanoid_lower_body.urdf"), "urdf %s", urdf);
    cr_assert_not_null(cJSON_GetObjectItem(p, "r_dq"));
    char *after = test_read_file(PIPE, NULL);
    cr_assert_str_eq(before, after);
    /* the tuned pipeline runs from its own folder */
    r = cli_run(dir, (const char *const[]){"run", "sub/tuned.json", "log.mat", "-o", "out", "-q", NULL});
    cr_assert_eq(r.status, 0, "run: %s", r.err);
    cli_result_free(&r);
    cJSON_Delete(doc);
    free(text), free(after), free(before), free(tuned_path), free(sub), free(log), free(dir);
}

Test(tune_ukf, errors_name_the_cause_with_documented_exit_codes)
{
    test_deadline(120);
    char *dir = test_tmpdir(), *log = simulate(dir);
    /* no ukf_torque stage */
    cli_result r = cli_run(dir, (const char *const[]){"tune", "ukf-torque", "log.mat", "--pipeline",
                                                      RB_SOURCE "/configs/paper/leg_rnea.json", NULL});
    cr_assert_eq(r.status, 3, "%s", r.err);
    cr_assert(strstr(r.err, "no ukf_torque stage") && strstr(r.err, "leg_rnea.json"), "%s", r.err);
    cli_result_free(&r);
    /* no still window: the thresholds to relax */
    r = cli_run(dir, (const char *const[]){"tune", "ukf-torque", "log.mat", "--pipeline", PIPE, "--still-duration",
                                           "10", NULL});
    cr_assert_eq(r.status, 3, "%s", r.err);
    cr_assert(strstr(r.err, "no still window") && strstr(r.err, "--still-duration"), "%s", r.err);
    cli_result_free(&r);
    /* ... unless the whole log may be used */
    r = cli_run(dir, (const char *const[]){"tune", "ukf-torque", "log.mat", "--pipeline", PIPE, "--still-duration",
                                           "10", "--no-still-window", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "3rd difference"), "%s", r.out);
    cli_result_free(&r);
    /* an unknown stage id */
    r = cli_run(dir,
                (const char *const[]){"tune", "ukf-torque", "log.mat", "--pipeline", PIPE, "--stage", "nope", NULL});
    cr_assert_eq(r.status, 3, "%s", r.err);
    cr_assert(strstr(r.err, "'nope'") && strstr(r.err, "ukf"), "%s", r.err);
    cli_result_free(&r);
    /* usage */
    r = cli_run(dir, (const char *const[]){"tune", "ukf-torque", "log.mat", NULL});
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "--pipeline"), "%s", r.err);
    cli_result_free(&r);
    /* the input pipeline is never the output; an existing output needs --force */
    char *copy = test_path(dir, "p.json"), *orig = test_read_file(PIPE, NULL), *at = strstr(orig, "../../datasets/");
    cr_assert_not_null(at);
    char *text = NULL;
    cr_assert(asprintf(&text, "%.*s%s%s", (int)(at - orig), orig, RB_SOURCE "/", at + 6) > 0);
    free(orig);
    test_write_file(copy, text);
    r = cli_run(dir, (const char *const[]){"tune", "ukf-torque", "log.mat", "--pipeline", "p.json", "-o", "p.json",
                                           "--force", NULL});
    cr_assert_eq(r.status, 5, "%s", r.err);
    cli_result_free(&r);
    char *after = test_read_file(copy, NULL);
    cr_assert_str_eq(after, text);
    char *other = test_path(dir, "exists.json");
    test_write_file(other, "x");
    r = cli_run(
        dir, (const char *const[]){"tune", "ukf-torque", "log.mat", "--pipeline", "p.json", "-o", "exists.json", NULL});
    cr_assert_eq(r.status, 5, "%s", r.err);
    cli_result_free(&r);
    char *x = test_read_file(other, NULL);
    cr_assert_str_eq(x, "x");
    free(x), free(other), free(after), free(text), free(copy), free(log), free(dir);
}
