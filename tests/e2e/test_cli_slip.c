/* Slip prediction end to end (seed 003 ch. 5): the thesis's protocol on the project's walks (thresholds learned on
 * walk_slip_a by `roboest slip-thresholds`, the confusion table on walk_slip_b by `roboest compare`, the acceptance
 * rules of configs/slip/rules.txt), the learned thresholds equal to the stage's own output at the walk's end, the
 * confusion metric of a pipeline and its check rules, and the refusals: Tr or F_ms negative, a foot mass not
 * positive, a phase out of range, classes outside a confusion metric's labels, a thresholds file of another set-up,
 * and the warning for an accelerometer that is not on its foot. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define SLIP RB_SOURCE "/configs/slip"
#define WALK_A RB_SOURCE "/datasets/walk_slip_a.mat"
#define WALK_B RB_SOURCE "/datasets/walk_slip_b.mat"
#define URDF RB_SOURCE "/datasets/walker_biped.urdf"

static const cJSON *item(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(v, "no key %s", key);
    return v;
}

static double cell(const cJSON *table, const char *key, int i, int j)
{
    return cJSON_GetArrayItem(cJSON_GetArrayItem(item(table, key), i), j)->valuedouble;
}

Test(cli_slip, thresholds_learned_on_one_walk_predict_the_other)
{
    char *dir = test_tmpdir(), *thr = test_path(dir, "thresholds.json"), *out = test_path(dir, "suite");
    /* the committed thresholds are what slip-thresholds learns on walk A now */
    cli_result r = cli_run(
        NULL, (const char *[]){"slip-thresholds", WALK_A, "-p", SLIP "/learn_ratio.json", "-o", thr, "-q", NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "exit %d: %s", r.status, r.err);
    char *learned = test_read_file(thr, NULL), *committed = test_read_file(SLIP "/thresholds_ratio.json", NULL);
    cr_assert_str_eq(learned, committed);
    cJSON *t = test_read_json(NULL, thr);
    cr_assert_str_eq(item(t, "learned_from")->valuestring, "walk_slip_a.mat");
    double fc = cJSON_GetArrayItem(item(t, "coulomb_friction"), 0)->valuedouble;
    double fs = cJSON_GetArrayItem(item(t, "static_friction"), 0)->valuedouble;
    double fst = cJSON_GetArrayItem(item(t, "stribeck_friction"), 0)->valuedouble;
    /* the patch's kinetic friction is 0.036, its static 0.039: F_c below both, F_s above (the normal floor) */
    cr_expect(fc > 0.02 && fc < 0.036, "F_c = %g", fc);
    cr_expect(fs > fc && fabs(fst - (fs - fc)) < 1e-9, "F_s %g F_st %g F_c %g", fs, fst, fc);
    cli_result_free(&r);
    /* prediction on walk B with those thresholds, fixed */
    r = cli_run(NULL, (const char *[]){"compare", SLIP "/suite.json", "-o", out, "-q", NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.out, "## Confusion") && strstr(r.out, "### ratio_t"), "%s", r.out);
    char *report = test_path(out, "report.json");
    cJSON *rep = test_read_json(NULL, report);
    const cJSON *v = cJSON_GetArrayItem(item(item(rep, "confusion"), "variants"), 0);
    cr_assert_str_eq(item(v, "name")->valuestring, "ratio_t");
    double slip_row = cell(v, "counts", 1, 0) + cell(v, "counts", 1, 1) + cell(v, "counts", 1, 2);
    double ok_row = cell(v, "counts", 0, 0) + cell(v, "counts", 0, 1) + cell(v, "counts", 0, 2);
    cr_log_info("walk_slip_b, right foot in contact: %.0f truly slipping samples, %.1f %% predicted slipping; %.0f "
                "not slipping, %.1f %% predicted no slip (thesis: 74 %%, 59 %%)",
                slip_row, cell(v, "row_percent", 1, 2), ok_row, cell(v, "row_percent", 0, 0));
    cr_expect(slip_row > 500 && ok_row > 5000, "the walk has both classes");
    cr_expect(cell(v, "row_percent", 1, 2) >= 70);
    cr_expect(cell(v, "row_percent", 0, 0) >= 55);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"check", report, SLIP "/rules.txt", NULL});
    cr_expect_eq(r.status, CLI_EXIT_OK, "%s%s", r.out, r.err);
    cli_result_free(&r);
    /* the thesis-faithful variant (force thresholds, x) alarms on every sample of this walk */
    r = cli_run(NULL,
                (const char *[]){"check", report, "--rule", "thesis_force_x.confusion[no_slip][no_slip] >= 55", NULL});
    cr_expect_eq(r.status, CLI_EXIT_CHECK, "%s", r.out);
    cli_result_free(&r);
    cJSON_Delete(t), cJSON_Delete(rep);
    free(learned), free(committed), free(report), free(thr), free(out), free(dir);
}

/* A pipeline on a walk: the slip stage with `params` (JSON members) and `extra` top-level members. */
static char *pipeline(const char *dir, const char *name, const char *params, const char *extra)
{
    char *path = test_path(dir, name), text[6000];
    snprintf(text, sizeof text,
             "{\"model\": {\"urdf\": \"%s\", \"floating\": true}, \"clock\": {\"rate\": 1000},\n"
             " \"signals\": {\"ft\": {\"channel\": \"FTs/r_ankle_ft_sensor\"}, \"acc\": {\"channel\": "
             "\"accelerometers/r_foot_imu\"},\n"
             "   \"phase\": {\"channel\": \"truth/gait/phase\", \"interp\": \"hold\"},\n"
             "   \"slipping\": {\"channel\": \"truth/contacts/slipping\", \"elements\": [\"r_sole\"], \"interp\": "
             "\"hold\"}},\n"
             " \"stages\": [{\"id\": \"slip\", \"type\": \"slip_predictor\", \"in\": {\"force\": \"ft\", \"acc\": "
             "\"acc\", \"phase\": \"phase\"},\n"
             "   \"out\": {\"prediction_foot\": \"pred\", \"thresholds\": \"thr\", \"contact\": \"contact\"},\n"
             "   \"params\": {\"feet\": [\"r_sole\"], \"support_phase\": [2]%s%s%s}}],\n"
             " \"faults\": {\"enabled\": false}%s%s}\n",
             URDF, strstr(params, "foot_mass") ? "" : ", \"foot_mass\": 1", params[0] ? ", " : "", params,
             extra[0] ? ", " : "", extra);
    test_write_file(path, text);
    return path;
}

Test(cli_slip, printed_thresholds_are_the_stage_output_at_the_end)
{
    char *dir = test_tmpdir(), *out = test_path(dir, "out");
    char *p = pipeline(dir, "learn.json", "\"unit\": \"ratio\", \"axes\": [\"x\", \"t\"], \"safety_margin\": 0.005",
                       "\"outputs\": [{\"path\": \"thr.csv\", \"signals\": [\"thr\"]}]");
    cli_result r = cli_run(NULL, (const char *[]){"slip-thresholds", WALK_A, "-p", p, NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "r_sole/x") && strstr(r.err, "r_sole/t"), "the table on stderr: %s", r.err);
    cJSON *t = cJSON_Parse(r.out);
    cr_assert(t, "stdout is JSON: %s", r.out);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"run", p, WALK_A, "-o", out, "-q", NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "exit %d: %s", r.status, r.err);
    char *csv_path = test_path(out, "thr.csv"), *csv = test_read_file(csv_path, NULL);
    char *last = strrchr(csv, '\n');
    while (last > csv && last[-1] != '\n') /* the last line, after the final newline */
        last--;
    double v[9];
    cr_assert_eq(sscanf(last, "%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                        &v[7], &v[8]),
                 9, "%s", last);
    const char *keys[3] = {"static_friction", "stribeck_friction", "coulomb_friction"};
    for (int a = 0; a < 2; a++) /* axes x, t: F_s F_st F_c F_suf each, after the time column */
        for (int k = 0; k < 3; k++)
            cr_expect_eq(cJSON_GetArrayItem(item(t, keys[k]), a)->valuedouble, v[1 + 4 * a + k], "%s axis %d", keys[k],
                         a);
    cJSON_Delete(t);
    cli_result_free(&r);
    free(csv), free(csv_path), free(p), free(out), free(dir);
}

Test(cli_slip, a_pipeline_confusion_metric_and_its_rules)
{
    char *dir = test_tmpdir(), *out = test_path(dir, "out");
    char *p = pipeline(dir, "fixed.json",
                       "\"unit\": \"ratio\", \"axes\": [\"t\"], \"safety_margin\": 0.005, \"thresholds\": \"fixed\", "
                       "\"thresholds_file\": \"" SLIP "/thresholds_ratio.json\"",
                       "\"metrics\": [{\"name\": \"slip\", \"estimate\": \"pred\", \"reference\": \"slipping\", "
                       "\"where\": \"contact\", \"labels\": [\"no_slip\", \"tends_to_slip\", \"slipping\"], "
                       "\"reference_labels\": [\"no_slip\", \"slipping\"]}], \"reports\": [\"report.json\"]");
    cli_result r = cli_run(NULL, (const char *[]){"run", p, WALK_B, "-o", out, "-q", NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.out, "## Confusion slip") && strstr(r.out, "| slipping |"), "%s", r.out);
    cli_result_free(&r);
    char *report = test_path(out, "report.json");
    r = cli_run(NULL, (const char *[]){"check", report, "--rule", "slip.confusion[slipping][slipping] >= 70", "--rule",
                                       "slip.confusion[no_slip][no_slip] >= 55", "--rule",
                                       "slip.confusion[slipping][no_slip].count < 100", "--rule",
                                       "slip.utilization < 80", NULL});
    cr_expect_eq(r.status, CLI_EXIT_OK, "%s%s", r.out, r.err);
    cli_result_free(&r);
    /* a rule naming a class the table does not have: exit 3 with a suggestion */
    r = cli_run(NULL, (const char *[]){"check", report, "--rule", "slip.confusion[slipping][slippin] > 1", NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT);
    cr_expect(strstr(r.err, "did you mean 'slipping'"), "%s", r.err);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"check", report, "--rule", "slip.confusion[slipping] > 1", NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cli_result_free(&r);
    free(report), free(p), free(out), free(dir);
}

/* One refusal: exit 3, one line naming `what`, no output folder content. */
static void refused(const char *dir, const char *config, const char *log, const char *what)
{
    char *out = test_path(dir, "refused");
    cli_result r = cli_run(NULL, (const char *[]){"run", config, log, "-o", out, "-q", NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "%s: exit %d: %s", config, r.status, r.err);
    cr_expect(strstr(r.err, what), "'%s' in: %s", what, r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "%s", r.err);
    cr_expect(!test_exists(out) || test_count_entries(out) == 0, "nothing written");
    cli_result_free(&r);
    free(out);
}

Test(cli_slip, bad_parameters_are_refused)
{
    char *dir = test_tmpdir();
    const char *extra = "\"outputs\": [{\"path\": \"p.csv\", \"signals\": [\"pred\"]}]";
    char *a = pipeline(dir, "a.json", "\"safety_margin\": -5", extra);
    char *b = pipeline(dir, "b.json", "\"slip_threshold\": -0.09", extra);
    char *c = pipeline(dir, "c.json", "\"foot_mass\": 0", extra);
    refused(dir, a, WALK_B, "safety_margin");
    refused(dir, b, WALK_B, "slip_threshold");
    refused(dir, c, WALK_B, "foot_mass");
    /* thresholds learned for another axis */
    char *d = pipeline(dir, "d.json",
                       "\"unit\": \"ratio\", \"axes\": [\"x\"], \"thresholds\": \"fixed\", \"thresholds_file\": "
                       "\"" SLIP "/thresholds_ratio.json\"",
                       extra);
    refused(dir, d, WALK_B, "\"axes\" does not match");
    /* classes outside a confusion metric's labels: the prediction has three classes, the metric names two */
    char *e = pipeline(dir, "e.json", "\"unit\": \"ratio\", \"axes\": [\"t\"], \"safety_margin\": 0.005",
                       "\"metrics\": [{\"estimate\": \"pred\", \"reference\": \"slipping\", \"where\": \"contact\", "
                       "\"labels\": [\"no_slip\", \"slipping\"]}], \"reports\": [\"r.json\"]");
    refused(dir, e, WALK_B, "not a class");
    free(a), free(b), free(c), free(d), free(e), free(dir);
}

Test(cli_slip, a_phase_out_of_range_is_refused)
{
    char *dir = test_tmpdir(), *log = test_path(dir, "tiny.csv"), *config = test_path(dir, "p.json");
    char text[4000] = "time,ft:fx [N],ft:fy [N],ft:fz [N],acc:x [m/s^2],acc:y [m/s^2],acc:z [m/s^2],phase:phase\n";
    for (int k = 0; k < 20; k++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%g,1,2,300,0,0,9.81,%d\n", 0.01 * k,
                 k == 12 ? 3 : 0);
    test_write_file(log, text);
    test_write_file(config, "{\"clock\": {\"channel\": \"ft\"}, \"signals\": {\"ft\": {\"channel\": \"ft\"}, \"acc\": "
                            "{\"channel\": \"acc\"}, \"phase\": {\"channel\": \"phase\"}},\n"
                            " \"stages\": [{\"id\": \"slip\", \"type\": \"slip_predictor\", \"in\": {\"force\": "
                            "\"ft\", \"acc\": \"acc\", \"phase\": \"phase\"}, \"out\": {\"prediction\": \"pred\"},\n"
                            "   \"params\": {\"feet\": [\"r_sole\"], \"support_phase\": [2], \"foot_mass\": 1}}],\n"
                            " \"faults\": {\"enabled\": false}, \"outputs\": [{\"path\": \"p.csv\", \"signals\": "
                            "[\"pred\"]}]}\n");
    refused(dir, config, log, "phase = 3");
    refused(dir, config, log, "sample 12");
    free(log), free(config), free(dir);
}

Test(cli_slip, an_accelerometer_off_the_foot_is_a_warning)
{
    char *dir = test_tmpdir(), *out = test_path(dir, "out");
    char *p = pipeline(dir, "w.json", "\"accelerometers\": [\"waist_imu\"], \"ft_sensors\": [\"r_ankle_ft_sensor\"]",
                       "\"outputs\": [{\"path\": \"p.csv\", \"signals\": [\"pred\"]}]");
    cli_result r = cli_run(NULL, (const char *[]){"run", p, WALK_B, "-o", out, "-q", NULL});
    cr_expect_eq(r.status, CLI_EXIT_OK, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "accelerometer waist_imu is not on foot r_sole"), "%s", r.err);
    cli_result_free(&r);
    /* the foot's own IMU: no warning */
    char *q = pipeline(dir, "q.json", "\"accelerometers\": [\"r_foot_imu\"]",
                       "\"outputs\": [{\"path\": \"p.csv\", \"signals\": [\"pred\"]}]");
    r = cli_run(NULL, (const char *[]){"run", q, WALK_B, "-o", out, "--force", "-q", NULL});
    cr_expect_eq(r.status, CLI_EXIT_OK, "exit %d: %s", r.status, r.err);
    cr_expect(!strstr(r.err, "is not on foot"), "%s", r.err);
    cli_result_free(&r);
    free(p), free(q), free(out), free(dir);
}

Test(cli_slip, slip_thresholds_usage_and_refusals)
{
    char *dir = test_tmpdir(), *out = test_path(dir, "t.json");
    cli_result r = cli_run(NULL, (const char *[]){"slip-thresholds", WALK_A, NULL});
    cr_expect_eq(r.status, CLI_EXIT_USAGE, "%s", r.err);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"slip-thresholds", "--help", NULL});
    cr_expect_eq(r.status, CLI_EXIT_OK);
    cr_expect(strstr(r.out, "thresholds_file"), "%s", r.out);
    cli_result_free(&r);
    /* a stage with fixed thresholds has nothing to learn: exit 3, nothing written */
    r = cli_run(NULL, (const char *[]){"slip-thresholds", WALK_A, "-p", SLIP "/predict_ratio.json", "-o", out, NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_expect(strstr(r.err, "nothing to learn"), "%s", r.err);
    cr_expect(!test_exists(out));
    cli_result_free(&r);
    free(out), free(dir);
}
