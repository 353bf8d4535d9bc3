/* End-to-end: roboest closed-loop over mismatch levels and disturbance scales. The humanoid balancing under the
 * torque loop (configs/scenarios/humanoid_balance.json made a closed-loop scenario, 1.2 s, a push at 0.8 s, the
 * realistic mismatch): the stability table and its JSON, level 0 equal to the scenario without a mismatch, a
 * disturbance scale large enough to throw the robot over counted as divergences, the sensitivity figure, roboest
 * check on stability.json, and the bad keys. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "closed_loop_support.h"
#include "harness.h"

typedef struct fixture {
    char *dir, *config, *out;
} fixture;

static const char *const CONFIGS = "{\"name\": \"feedforward\"}, {\"name\": \"sensor\", \"torque_sensor\": true}";

static fixture make_fixture(const char *scenario_file, const char *extra)
{
    fixture fx = {test_tmpdir(), NULL, NULL};
    fx.config = test_path(fx.dir, "closed_loop.json");
    fx.out = test_path(fx.dir, "out");
    char *with = test_path(fx.dir, "mismatch.json"), *without = test_path(fx.dir, "plain.json");
    write_balance_scenario(with, 1.2, true);
    write_balance_scenario(without, 1.2, false);
    char text[2048];
    snprintf(text, sizeof text,
             "{\"scenario\": \"%s\", \"settle\": 0.2, \"max_com_error\": 0.05, \"joints\": [\"l_knee\", "
             "\"r_knee\", \"l_hip_pitch\", \"r_hip_pitch\"],%s \"configurations\": [%s]}\n",
             scenario_file, extra, CONFIGS);
    test_write_file(fx.config, text);
    free(with);
    free(without);
    return fx;
}

static void free_fixture(fixture *fx) { free(fx->dir), free(fx->config), free(fx->out); }

/* variant `name`'s statistic `stat` at point `point` (NULL: "all"). */
static double value(const cJSON *rep, const char *name, const char *point, const char *stat)
{
    for (const cJSON *v = cJSON_GetObjectItem(rep, "variants")->child; v; v = v->next)
        if (strcmp(cJSON_GetObjectItem(v, "name")->valuestring, name) == 0) {
            const cJSON *g =
                point ? cJSON_GetObjectItem(cJSON_GetObjectItem(v, "joints"), point) : cJSON_GetObjectItem(v, "all");
            cr_assert_not_null(g, "%s: no point %s", name, point ? point : "all");
            return cJSON_GetObjectItem(cJSON_GetObjectItem(g, stat), "mean")->valuedouble;
        }
    cr_assert_fail("variant %s not in stability.json", name);
    return NAN;
}

Test(cli_closed_loop_mismatch, stability_table_levels_and_divergence)
{
    /* The CoM test alone: at level 1 the ideal sensor's loop oscillates at the drives' limits (the elastic joints
     * behind the bus delays, configs/closed_loop/README.md, fourth round), which the saturation test would count;
     * that test has its own case (cli_closed_loop::a_drive_held_at_its_limit_is_reported_as_diverged_by_saturation). */
    fixture fx = make_fixture("mismatch.json",
                              " \"mismatch_levels\": [0, 1], \"disturbance_scales\": [1, 40], \"max_saturation\": 0,");
    cli_result r = cli_run(NULL, (const char *const[]){"closed-loop", fx.config, "-o", fx.out, "-q", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "## Stability: diverged runs of 1 seeds"), "%s", r.out);
    cr_assert(strstr(r.out, "level 1, disturbance x40"), "%s", r.out);
    cr_assert(strstr(r.out, "## Sensitivity"), "%s", r.out);
    static const char *const files[] = {"stability.md", "stability.json", "sensitivity.svg", "report.md",
                                        "torque.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *p = test_path(fx.out, files[i]);
        cr_assert(test_exists(p), "%s missing", files[i]);
        free(p);
    }
    cJSON *st = test_read_json(fx.out, "stability.json");
    /* a 1600 N kick on the shank throws the balancing robot over; 40 N does not */
    for (int lv = 0; lv < 2; lv++) {
        char p1[64], p40[64];
        snprintf(p1, sizeof p1, "level_%d_scale_1", lv);
        snprintf(p40, sizeof p40, "level_%d_scale_40", lv);
        cr_expect_eq(value(st, "sensor", p1, "diverged"), 0.0, "%s", p1);
        cr_expect_eq(value(st, "sensor", p40, "diverged"), 1.0, "%s", p40);
        cr_expect_eq(value(st, "feedforward", p40, "diverged"), 1.0, "%s", p40);
        cr_expect_eq(value(st, "sensor", p40, "diverged_com"), 1.0, "%s: the CoM test's", p40);
        cr_expect_eq(value(st, "sensor", p40, "diverged_saturation"), 0.0, "%s", p40);
    }
    cr_expect_eq(value(st, "sensor", NULL, "diverged"), 2.0);
    cr_expect_eq(value(st, "sensor", NULL, "diverged_fraction"), 0.5);
    /* the mismatch changes the tracking */
    cr_expect_neq(value(st, "sensor", "level_0_scale_1", "rmse"), value(st, "sensor", "level_1_scale_1", "rmse"));
    /* roboest check reads it */
    char *rules = test_path(fx.dir, "rules.txt"), *json = test_path(fx.out, "stability.json");
    test_write_file(rules, "sensor.diverged[level_1_scale_1] == 0\nsensor.diverged[level_1_scale_40] >= 1\n");
    cli_result c = cli_run(NULL, (const char *const[]){"check", json, rules, NULL});
    cr_expect_eq(c.status, 0, "%s %s", c.out, c.err);
    cli_result_free(&c);
    free(rules);
    free(json);
    cJSON_Delete(st);
    cli_result_free(&r);

    /* level 0 is the scenario without a mismatch: the same torque tracking, bit for bit */
    fixture plain = make_fixture("plain.json", "");
    cli_result p = cli_run(NULL, (const char *const[]){"closed-loop", plain.config, "-o", plain.out, "-q", NULL});
    cr_assert_eq(p.status, 0, "stderr: %s", p.err);
    cJSON *tq = test_read_json(plain.out, "torque.json");
    double plain_rmse = NAN;
    for (const cJSON *v = cJSON_GetObjectItem(tq, "variants")->child; v; v = v->next)
        if (strcmp(cJSON_GetObjectItem(v, "name")->valuestring, "sensor") == 0)
            plain_rmse =
                cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "all"), "rmse"), "mean")->valuedouble;
    st = test_read_json(fx.out, "stability.json");
    cr_expect_eq(value(st, "sensor", "level_0_scale_1", "rmse"), plain_rmse);
    cJSON_Delete(st);
    cJSON_Delete(tq);
    cli_result_free(&p);
    free_fixture(&plain);
    free_fixture(&fx);
}

static void expect_error(const char *scenario_file, const char *extra, const char *needle)
{
    fixture fx = make_fixture(scenario_file, extra);
    cli_result r = cli_run(NULL, (const char *const[]){"closed-loop", fx.config, "-o", fx.out, NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "exit %d, stderr: %s", r.status, r.err);
    cr_expect(strstr(r.err, needle), "expected '%s' in: %s", needle, r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "%s", r.err);
    cr_expect_not(test_exists(fx.out));
    cli_result_free(&r);
    free_fixture(&fx);
}

Test(cli_closed_loop_mismatch, bad_keys)
{
    expect_error("plain.json", " \"mismatch_levels\": [0, 1],", "has no \"mismatch\"");
    expect_error("mismatch.json", " \"mismatch_levels\": [1, 0.5],", "mismatch_levels[1]: must be greater");
    expect_error("mismatch.json", " \"disturbance_scales\": [0],", "disturbance_scales[0]");
    expect_error("mismatch.json", " \"mismatch_levels\": [],", "non-empty array");
}
