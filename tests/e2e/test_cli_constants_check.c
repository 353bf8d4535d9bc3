/* End-to-end: ukf_torque's motor-constant check (issue 18: the project's humanoid constants copied onto another robot
 * silently flipped four joints). The shipped configs/paper/leg_ukf_nofric.json on datasets/leg_pole_free.mat with
 * two gear ratio signs flipped: the report's warnings name exactly those joints; as shipped: no warning; k_t off by
 * 3x: scale warnings and no sign warning. The shipped leg and humanoid pipelines raise none on their logs. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define LEG RB_SOURCE "/configs/paper/leg_ukf_nofric.json"

/* The config at `path` with its URDF made absolute, a metric and a report added, the ukf stage's gear_ratio signs
 * flipped at flip[0..n_flip) and its k_t scaled; written into dir/p.json. */
static char *edit_config(const char *dir, const char *path, const int *flip, size_t n_flip, double kt_scale)
{
    char *text = test_read_file(path, NULL);
    cr_assert_not_null(text);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(doc);
    cJSON *model = cJSON_GetObjectItem(doc, "model");
    char urdf[1024];
    snprintf(urdf, sizeof urdf, "%s/datasets/humanoid_lower_body.urdf", RB_SOURCE);
    cJSON_ReplaceItemInObject(model, "urdf", cJSON_CreateString(urdf));
    cJSON *sig = cJSON_GetObjectItem(doc, "signals"), *tt = cJSON_CreateObject();
    cJSON_AddStringToObject(tt, "channel", "truth/joints/torques");
    cJSON_AddItemToObject(tt, "elements", cJSON_Duplicate(cJSON_GetObjectItem(model, "joints"), 1));
    cJSON_AddItemToObject(sig, "tau_true", tt);
    cJSON *metrics = cJSON_CreateArray(), *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "estimate", "tau_hat");
    cJSON_AddStringToObject(m, "reference", "tau_true");
    cJSON_AddItemToArray(metrics, m);
    cJSON_AddItemToObject(doc, "metrics", metrics);
    cJSON *reports = cJSON_CreateArray();
    cJSON_AddItemToArray(reports, cJSON_CreateString("report.json"));
    cJSON_AddItemToObject(doc, "reports", reports);
    cJSON *st, *ukf = NULL;
    cJSON_ArrayForEach(st, cJSON_GetObjectItem(doc, "stages")) if (strcmp(cJSON_GetObjectItem(st, "type")->valuestring,
                                                                          "ukf_torque") == 0) ukf = st;
    cr_assert_not_null(ukf);
    cJSON *params = cJSON_GetObjectItem(ukf, "params");
    cJSON *R = cJSON_GetObjectItem(params, "gear_ratio"), *kt = cJSON_GetObjectItem(params, "k_t");
    for (size_t i = 0; i < n_flip; i++) {
        cJSON *e = cJSON_GetArrayItem(R, flip[i]);
        cJSON_SetNumberValue(e, -e->valuedouble);
    }
    cJSON_ArrayForEach(st, kt) cJSON_SetNumberValue(st, st->valuedouble * kt_scale);
    char *out = cJSON_Print(doc), *cfg = test_path(dir, "p.json");
    test_write_file(cfg, out);
    free(out);
    cJSON_Delete(doc);
    return cfg;
}

/* Runs cfg on log; returns the report's warnings as one string (newline-separated). */
static char *warnings(const char *dir, const char *cfg, const char *log)
{
    char *out = test_path(dir, "out");
    const char *args[] = {"run", cfg, log, "-o", out, "--force", "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "run: exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    char *rp = test_path(out, "report.json"), *text = test_read_file(rp, NULL);
    cr_assert_not_null(text);
    cJSON *doc = cJSON_Parse(text), *w;
    cr_assert_not_null(doc);
    size_t len = 1;
    cJSON_ArrayForEach(w, cJSON_GetObjectItem(doc, "warnings")) len += strlen(w->valuestring) + 1;
    char *all = calloc(len, 1);
    cJSON_ArrayForEach(w, cJSON_GetObjectItem(doc, "warnings"))
    {
        strcat(all, w->valuestring);
        strcat(all, "\n");
    }
    cJSON_Delete(doc);
    free(text), free(rp), free(out);
    return all;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

static const char *const JOINTS[6] = {"r_hip_pitch", "r_hip_roll",    "r_hip_yaw",
                                      "r_knee",      "r_ankle_pitch", "r_ankle_roll"};

Test(cli_constants_check, flipped_gear_ratios_are_named)
{
    char *dir = test_tmpdir();
    int flip[2] = {1, 3}; /* r_hip_roll, r_knee */
    char *cfg = edit_config(dir, LEG, flip, 2, 1.0);
    char *w = warnings(dir, cfg, RB_SOURCE "/datasets/leg_pole_free.mat");
    cr_log_info("%s", w);
    for (int j = 0; j < 6; j++) {
        char key[64];
        snprintf(key, sizeof key, "joint %s: ", JOINTS[j]);
        int want = j == 1 || j == 3;
        cr_assert_eq(count(w, key), want, "%s: %d warnings: %s", JOINTS[j], count(w, key), w);
    }
    cr_assert_eq(count(w, "check the sign of its gear_ratio"), 2, "%s", w);
    cr_assert_eq(count(w, "slow samples"), 2, "the slope and the sample count: %s", w);
    free(w), free(cfg);
    test_remove_tree(dir);
}

Test(cli_constants_check, torque_constant_off_by_3x_is_a_scale_warning)
{
    char *dir = test_tmpdir();
    char *cfg = edit_config(dir, LEG, NULL, 0, 3.0);
    char *w = warnings(dir, cfg, RB_SOURCE "/datasets/leg_pole_free.mat");
    cr_log_info("%s", w);
    cr_assert(count(w, "check its k_t and the magnitude of its gear_ratio") >= 1, "%s", w);
    cr_assert_eq(count(w, "sign of its gear_ratio"), 0, "%s", w);
    free(w), free(cfg);
    test_remove_tree(dir);
}

/* The true robots: every shipped UKF pipeline on its logs, no warning from the check. */
Test(cli_constants_check, shipped_pipelines_raise_none)
{
    static const struct {
        const char *cfg, *log;
    } runs[] = {
        {"leg_ukf_nofric", "leg_pole_free"},
        {"leg_ukf_nofric", "leg_pole_ground"},
        {"leg_ukf_nofric", "leg_pole_second_robot"},
        {"humanoid_ukf_nofric", "humanoid_balance"},
        {"humanoid_ukf_nofric", "humanoid_balance_object"},
        {"humanoid_ukf_nofric", "humanoid_balance_push"},
    };
    char *dir = test_tmpdir();
    int judged = 0;
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char path[1024], log[1024];
        snprintf(path, sizeof path, "%s/configs/paper/%s.json", RB_SOURCE, runs[i].cfg);
        snprintf(log, sizeof log, "%s/datasets/%s.mat", RB_SOURCE, runs[i].log);
        char *cfg = edit_config(dir, path, NULL, 0, 1.0), *w = warnings(dir, cfg, log);
        cr_assert_eq(count(w, "k_t R i"), 0, "%s on %s: %s", runs[i].cfg, runs[i].log, w);
        free(w), free(cfg);
        /* and the check does judge that log: every sign flipped, the joints it can judge are named */
        static const int all[6] = {0, 1, 2, 3, 4, 5};
        cfg = edit_config(dir, path, all, 6, 1.0), w = warnings(dir, cfg, log);
        int n = count(w, "check the sign of its gear_ratio");
        cr_log_info("%s on %s, every gear ratio flipped: %d joints named", runs[i].cfg, runs[i].log, n);
        judged += n;
        free(w), free(cfg);
    }
    cr_assert(judged >= 10, "the check judged %d joints over the shipped logs", judged);
    test_remove_tree(dir);
}
