/* End-to-end: roboest closed-loop's Table II as a robot without joint torque sensors measures it (the loop's own
 * estimate tau_hat against tau_ref, torque_loop.*), beside the tracking against the true torque (torque.*), and both
 * readings' RMSE and ratios in the sweep's stability.json. The humanoid balancing under the torque loop (1.2 s, a
 * push at 0.8 s, the realistic mismatch); "ukf_pinn" fed back the true torque through a pipeline (its estimate is the
 * truth: the two readings agree), "rnea" the true torque low-passed at 5 Hz (a lagging estimate: they differ). */
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

static fixture make_fixture(const char *extra)
{
    fixture fx = {test_tmpdir(), NULL, NULL};
    fx.config = test_path(fx.dir, "closed_loop.json");
    fx.out = test_path(fx.dir, "out");
    char *scn = test_path(fx.dir, "scenario.json"), *lag = test_path(fx.dir, "lag.json");
    write_balance_scenario(scn, 1.2, true);
    test_write_file(lag,
                    "{\"clock\": {\"rate\": 1000}, \"signals\": {\"tau\": {\"channel\": \"truth/joints/torques\"}},\n"
                    " \"stages\": [{\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"tau\"},\n"
                    "              \"out\": {\"y\": \"tau_lp\"}, \"params\": {\"cutoff_hz\": 5}}]}\n");
    char text[2048];
    snprintf(text, sizeof text,
             "{\"scenario\": \"scenario.json\", \"settle\": 0.2, \"max_com_error\": 0.05, \"joints\": [\"l_knee\", "
             "\"r_knee\", \"l_hip_pitch\", \"r_hip_pitch\"],%s \"configurations\": [{\"name\": \"feedforward\"}, "
             "{\"name\": \"ukf_pinn\", \"pipeline\": \"lag.json\", \"feedback\": \"tau\"}, {\"name\": \"rnea\", "
             "\"pipeline\": \"lag.json\", "
             "\"feedback\": \"tau_lp\"}]}\n",
             extra);
    test_write_file(fx.config, text);
    free(scn);
    free(lag);
    return fx;
}

static void free_fixture(fixture *fx) { free(fx->dir), free(fx->config), free(fx->out); }

static const cJSON *find_variant(const cJSON *rep, const char *name)
{
    for (const cJSON *v = cJSON_GetObjectItem(rep, "variants")->child; v; v = v->next)
        if (strcmp(cJSON_GetObjectItem(v, "name")->valuestring, name) == 0)
            return v;
    return NULL;
}

/* variant `name`'s statistic `stat` at `point` (NULL: "all"); NAN for a JSON null. */
static double value(const cJSON *rep, const char *name, const char *point, const char *stat)
{
    const cJSON *v = find_variant(rep, name);
    cr_assert_not_null(v, "variant %s missing", name);
    const cJSON *g =
        point ? cJSON_GetObjectItem(cJSON_GetObjectItem(v, "joints"), point) : cJSON_GetObjectItem(v, "all");
    cr_assert_not_null(g, "%s: no point %s", name, point ? point : "all");
    const cJSON *m = cJSON_GetObjectItem(cJSON_GetObjectItem(g, stat), "mean");
    cr_assert_not_null(m, "%s: no statistic %s", name, stat);
    return cJSON_IsNumber(m) ? m->valuedouble : NAN;
}

Test(cli_closed_loop_mismatch2, table_ii_both_readings)
{
    fixture fx = make_fixture("");
    cli_result r = cli_run(NULL, (const char *const[]){"closed-loop", fx.config, "-o", fx.out, "-q", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "## Table II as the paper measures it") && strstr(r.out, "| 4.37 |") &&
                  strstr(r.out, "| 1.08 |"),
              "%s", r.out);
    cJSON *loop = test_read_json(fx.out, "torque_loop.json"), *truth = test_read_json(fx.out, "torque.json");
    cr_expect_null(find_variant(loop, "feedforward"), "feedforward has no estimate to track");
    /* an ideal sensor's estimate is the truth: both readings the same numbers */
    double s_loop = value(loop, "ukf_pinn", NULL, "rmse"), s_true = value(truth, "ukf_pinn", NULL, "rmse");
    cr_expect(s_loop > 0 && fabs(s_loop - s_true) <= 1e-12 * s_true, "sensor: %.17g vs %.17g", s_loop, s_true);
    /* a lagging estimate: the loop tracks its estimate, not the truth */
    double l_loop = value(loop, "rnea", NULL, "rmse"), l_true = value(truth, "rnea", NULL, "rmse");
    cr_expect(fabs(l_loop - l_true) > 1e-3 * l_true, "lagging estimate: %g vs %g", l_loop, l_true);
    cJSON_Delete(loop);
    cJSON_Delete(truth);
    cli_result_free(&r);
    free_fixture(&fx);
}

Test(cli_closed_loop_mismatch2, sweep_ratios_both_readings)
{
    fixture fx = make_fixture(" \"mismatch_levels\": [0, 1],");
    cli_result r = cli_run(NULL, (const char *const[]){"closed-loop", fx.config, "-o", fx.out, "-q", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "the loop's own estimate tau_hat against tau_ref (the paper's reading)"), "%s", r.out);
    cJSON *st = test_read_json(fx.out, "stability.json");
    const char *p = "level_1_scale_1";
    double a = value(st, "rnea", p, "rmse_loop"), b = value(st, "ukf_pinn", p, "rmse_loop");
    double at = value(st, "rnea", p, "rmse"), bt = value(st, "ukf_pinn", p, "rmse");
    cr_expect(isnan(value(st, "feedforward", p, "rmse_loop")), "feedforward: no estimate");
    cr_expect(fabs(b - bt) <= 1e-12 * bt, "ideal sensor: %g vs %g", b, bt);
    double q = value(st, "ratio_rnea_ukf_pinn_loop", p, "ratio"), qt = value(st, "ratio_rnea_ukf_pinn", p, "ratio");
    cr_expect(fabs(q - a / b) <= 1e-12 * q, "own-estimate ratio %g, rmse_loop %g / %g", q, a, b);
    cr_expect(fabs(qt - at / bt) <= 1e-12 * qt, "truth ratio %g, rmse %g / %g", qt, at, bt);
    cr_expect(fabs(q - qt) > 1e-3 * qt, "the two readings' ratios: %g, %g", q, qt);
    char *svg_path = test_path(fx.out, "sensitivity.svg");
    char *svg = test_read_file(svg_path, NULL);
    cr_expect(svg && strstr(svg, "(own estimate)") && strstr(svg, "(truth)"), "sensitivity.svg: both readings");
    free(svg);
    free(svg_path);
    cJSON_Delete(st);
    cli_result_free(&r);
    free_fixture(&fx);
}
