/* End-to-end: the joint-torque paper's leg-on-a-pole comparison (configs/paper/suite_leg_pole.json) on the shipped
 * simulated logs, gated by configs/paper/rules_leg_pole.txt (the paper's ordering of the estimators). The
 * datasets are generated files (scripts/make-datasets.sh); without them the test fails naming the file. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define PAPER RB_SOURCE "/configs/paper"
#define CLOSED_LOOP RB_SOURCE "/configs/closed_loop"

Test(paper, leg_pole_suite_keeps_the_papers_ordering)
{
    test_deadline(120);
    const char *logs[] = {RB_SOURCE "/datasets/leg_pole_free.mat", RB_SOURCE "/datasets/leg_pole_ground.mat"};
    for (size_t i = 0; i < 2; i++)
        cr_assert(test_exists(logs[i]), "%s is missing: run scripts/make-datasets.sh", logs[i]);
    char *dir = test_tmpdir(), *out = test_path(dir, "leg");
    cli_result r = cli_run(NULL, (const char *[]){"compare", PAPER "/suite_leg_pole.json", "-o", out, "-q", NULL});
    cr_assert_eq(r.status, 0, "compare: %s", r.err);
    /* every variant is in the table */
    const char *variants[] = {"current", "current_minus_pinn", "rnea", "ukf_nofric", "ukf_pinn", "ukf_scv"};
    for (size_t i = 0; i < 6; i++) {
        char row[64];
        snprintf(row, sizeof row, "| %s |", variants[i]);
        cr_assert(strstr(r.out, row), "no row for %s in:\n%s", variants[i], r.out);
    }
    cli_result_free(&r);
    char *report = test_path(out, "report.json");
    r = cli_run(NULL, (const char *[]){"check", report, PAPER "/rules_leg_pole.txt", NULL});
    cr_assert_eq(r.status, 0, "the paper's rules do not hold:\n%s%s", r.out, r.err);
    cr_assert(strstr(r.out, "rules: 6 hold, 0 fail"), "%s", r.out);
    cli_result_free(&r);
    /* the hip pitch is not the outlier (it was with the FT moments' process noise at 1e-4 for the leg FT: per-log
     * RMSE up to 1.8 N m without friction measurement, 0.9 with it, the other joints 0.05-0.2) */
    r = cli_run(NULL, (const char *[]){"check", report, "--rule", "ukf_nofric.rmse[r_hip_pitch].max < 0.5", "--rule",
                                       "ukf_pinn.rmse[r_hip_pitch].max < 0.5", "--rule",
                                       "ukf_scv.rmse[r_hip_pitch].max < 0.5", NULL});
    cr_assert_eq(r.status, 0, "hip pitch:\n%s%s", r.out, r.err);
    cli_result_free(&r);
    /* the gate is real: the reverse claim fails */
    r = cli_run(NULL, (const char *[]){"check", report, "--rule", "rnea.rmse < ukf_pinn.rmse", NULL});
    cr_assert_eq(r.status, 6, "%s%s", r.out, r.err);
    cli_result_free(&r);
    free(report), free(out), free(dir);
}

/* The humanoid experiment (configs/paper/suite_humanoid.json, DOCS): the right leg of the balancing floating-base
 * humanoid, with and without unmeasured pushes on the shank. Kept fast: the same pipelines on a suite written here
 * with a shortened window (0.5-2.5 s: the push log's first push is at 1.49-1.74 s) and two of the three logs. */
static char *write_quick_humanoid_suite(const char *dir)
{
    static const char *variants[] = {"current", "current_minus_pinn", "rnea", "ukf_nofric", "ukf_pinn", "ukf_scv"};
    char *path = test_path(dir, "suite_humanoid_quick.json");
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fprintf(f, "{\"variants\": [");
    for (size_t i = 0; i < 6; i++)
        fprintf(f, "%s{\"name\": \"%s\", \"pipeline\": \"%s/humanoid_%s.json\", \"estimate\": \"%s\"}", i ? ", " : "",
                variants[i], PAPER, variants[i], i == 0 ? "tau_m" : "tau_hat");
    fprintf(f, "], \"logs\": [\"%s/datasets/humanoid_balance.mat\", \"%s/datasets/humanoid_balance_push.mat\"],\n",
            RB_SOURCE, RB_SOURCE);
    fprintf(f, " \"reference\": \"truth/joints/torques\", \"window\": [0.5, 2.5], \"statistics\": [\"rmse\"],\n"
               " \"joints\": [\"r_hip_pitch\", \"r_hip_roll\", \"r_hip_yaw\", \"r_knee\", \"r_ankle_pitch\", "
               "\"r_ankle_roll\"]}\n");
    fclose(f);
    return path;
}

Test(paper, humanoid_right_leg_keeps_the_claims_that_hold)
{
    test_deadline(120);
    const char *logs[] = {RB_SOURCE "/datasets/humanoid_balance.mat", RB_SOURCE "/datasets/humanoid_balance_push.mat"};
    for (size_t i = 0; i < 2; i++)
        cr_assert(test_exists(logs[i]), "%s is missing: run scripts/make-datasets.sh", logs[i]);
    char *dir = test_tmpdir(), *suite = write_quick_humanoid_suite(dir), *out = test_path(dir, "humanoid");
    cli_result r = cli_run(NULL, (const char *[]){"compare", suite, "-o", out, "-q", NULL});
    cr_assert_eq(r.status, 0, "compare: %s", r.err);
    cr_assert(strstr(r.out, "| ukf_pinn |"), "%s", r.out);
    cli_result_free(&r);
    char *report = test_path(out, "report.json");
    r = cli_run(NULL, (const char *[]){"check", report, PAPER "/rules_humanoid.txt", NULL});
    cr_assert_eq(r.status, 0, "the rules that held do not hold:\n%s%s", r.out, r.err);
    cr_assert(strstr(r.out, "rules: 8 hold, 0 fail"), "%s", r.out);
    cli_result_free(&r);
    /* the paper's "UKF-PINN lowest" holds here (it failed with the first configs' process noise, 10-100 times below
     * the FT wrenches' rates: DOCS-claims.md); the gate is real, the reverse claim fails */
    r = cli_run(NULL, (const char *[]){"check", report, "--rule", "current_minus_pinn.rmse < ukf_pinn.rmse", NULL});
    cr_assert_eq(r.status, 6, "%s%s", r.out, r.err);
    cli_result_free(&r);
    free(report), free(out), free(suite), free(dir);
}

/* The paper's closed loop (configs/closed_loop/closed_loop.json and closed_loop_second_robot.json; its notes in
 * configs/closed_loop/README.md): the six configurations inside the simulated torque loop, one seed (the scenario's; the shipped
 * file has three), gated by configs/closed_loop/rules.txt (Table II's ordering that holds) and
 * rules_estimation.txt. */
/* configs/closed_loop/<name> with its files named absolutely and one seed (the scenario's). */
static char *write_one_seed_closed_loop(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, CLOSED_LOOP "/%s", name);
    char *text = test_read_file(path, NULL);
    cJSON *doc = cJSON_Parse(text);
    cr_assert_not_null(doc, "%s is not JSON", path);
    free(text);
    cJSON_DeleteItemFromObject(doc, "seeds");
    snprintf(path, sizeof path, CLOSED_LOOP "/%s", cJSON_GetObjectItem(doc, "scenario")->valuestring);
    cJSON_ReplaceItemInObject(doc, "scenario", cJSON_CreateString(path));
    for (cJSON *c = cJSON_GetObjectItem(doc, "configurations")->child; c; c = c->next) {
        cJSON *p = cJSON_GetObjectItem(c, "pipeline");
        if (!p)
            continue;
        snprintf(path, sizeof path, CLOSED_LOOP "/%s", p->valuestring);
        cJSON_ReplaceItemInObject(c, "pipeline", cJSON_CreateString(path));
    }
    char *cfg = test_path(dir, "closed_loop.json"), *out = cJSON_Print(doc);
    test_write_file(cfg, out);
    free(out);
    cJSON_Delete(doc);
    return cfg;
}

/* Runs configs/closed_loop/<name> with one seed and checks rules.txt and rules_estimation.txt on it. */
static void closed_loop_claims_hold(const char *name)
{
    char *dir = test_tmpdir(), *cfg = write_one_seed_closed_loop(dir, name);
    char *out = test_path(dir, "cl");
    cli_result r = cli_run(NULL, (const char *[]){"closed-loop", cfg, "-o", out, "-q", NULL});
    cr_assert_eq(r.status, 0, "closed-loop: %s", r.err);
    static const char *labels[] = {
        "Feedforward", "RNEA No Compensation", "UKF No Compensation", "Feedforward PINN", "RNEA-PINN", "UKF-PINN"};
    for (size_t i = 0; i < 6; i++) {
        char row[96];
        snprintf(row, sizeof row, "| %s | 601 | completed (10 s) |", labels[i]);
        cr_assert(strstr(r.out, row), "no completed run of %s in:\n%s", labels[i], r.out);
    }
    cli_result_free(&r);
    char *torque = test_path(out, "torque.json"), *est = test_path(out, "estimation.json");
    r = cli_run(NULL, (const char *[]){"check", torque, CLOSED_LOOP "/rules.txt", NULL});
    cr_assert_eq(r.status, 0, "Table II rules:\n%s%s", r.out, r.err);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"check", est, CLOSED_LOOP "/rules_estimation.txt", NULL});
    cr_assert_eq(r.status, 0, "estimation rules:\n%s%s", r.out, r.err);
    cli_result_free(&r);
    /* the gate is real */
    r = cli_run(NULL, (const char *[]){"check", torque, "--rule", "feedforward.rmse < ukf_pinn.rmse", NULL});
    cr_assert_eq(r.status, 6, "%s%s", r.out, r.err);
    cli_result_free(&r);
    free(torque), free(est), free(out), free(cfg), free(dir);
}

Test(paper, closed_loop_keeps_the_claims_that_hold) { closed_loop_claims_hold("closed_loop.json"); }

/* The paper's scalability claim: the same network and tuning on a robot whose friction differs (wear) */
Test(paper, closed_loop_second_robot_keeps_the_claims_that_hold)
{
    closed_loop_claims_hold("closed_loop_second_robot.json");
}
