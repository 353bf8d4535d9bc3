/* End-to-end: roboest closed-loop. The humanoid balancing on its two feet under the paper's torque loop, with
 * the feedback and compensation signals coming through pipelines that read the simulator's own truth channels:
 * the known answers (a pipeline passing the true torque equals the ideal torque sensor bit for bit; feedback and
 * friction compensation each beat feedforward), divergence, thread-count independence, bad input. */
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

/* truth.json passes the simulator's true joint torques and friction torques as "estimates". "settle" is 0 and
 * "joints" the pitch joints of both legs unless extra_keys sets them. */
static fixture make_fixture(const char *configurations, const char *extra_keys, double duration)
{
    fixture fx = {test_tmpdir(), NULL, NULL};
    fx.config = test_path(fx.dir, "closed_loop.json");
    fx.out = test_path(fx.dir, "out");
    char *scenario = test_path(fx.dir, "scenario.json"), *truth = test_path(fx.dir, "truth.json");
    write_balance_scenario(scenario, duration, false);
    test_write_file(truth, "{\"clock\": {\"rate\": 1000}, \"signals\": {\n"
                           "  \"tau_true\": {\"channel\": \"truth/joints/torques\"},\n"
                           "  \"tau_f_true\": {\"channel\": \"truth/joints/friction_torques\"}}}\n");
    char text[4096];
    snprintf(text, sizeof text,
             "{\"name\": \"e2e closed loop\", \"scenario\": \"scenario.json\",%s\n"
             "%s%s\n"
             " \"configurations\": [%s]}\n",
             strstr(extra_keys, "settle") ? "" : " \"settle\": 0,",
             strstr(extra_keys, "joints") ? ""
                                          : " \"joints\": [\"l_hip_pitch\", \"l_knee\", \"l_ankle_pitch\", "
                                            "\"r_hip_pitch\", \"r_knee\", \"r_ankle_pitch\"],",
             extra_keys, configurations);
    test_write_file(fx.config, text);
    free(scenario);
    free(truth);
    return fx;
}

static void free_fixture(fixture *fx) { free(fx->dir), free(fx->config), free(fx->out); }

/* Statistic `stat` of variant `name` over all joints (the mean over the seeds). */
static double overall(const cJSON *report, const char *name, const char *stat)
{
    for (const cJSON *v = cJSON_GetObjectItem(report, "variants")->child; v; v = v->next)
        if (strcmp(cJSON_GetObjectItem(v, "name")->valuestring, name) == 0)
            return cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "all"), stat), "mean")->valuedouble;
    cr_assert_fail("variant %s not in the report", name);
    return NAN;
}

static const char *const FOUR =
    "{\"name\": \"feedforward\", \"label\": \"Feedforward\"},\n"
    " {\"name\": \"sensor\", \"label\": \"Torque sensor\", \"torque_sensor\": true},\n"
    " {\"name\": \"through_pipeline\", \"pipeline\": \"truth.json\", \"feedback\": \"tau_true\"},\n"
    " {\"name\": \"ff_comp\", \"pipeline\": \"truth.json\", \"compensation\": \"tau_f_true\"}";

Test(cli_closed_loop, known_answers_tables_and_figures)
{
    fixture fx = make_fixture(FOUR, " \"settle\": 0.2,", 1.2);
    cli_result r = cli_run(NULL, (const char *const[]){"closed-loop", fx.config, "-o", fx.out, NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "## Table I: CoM error before the disturbances"), "%s", r.out);
    cr_assert(strstr(r.out, "## Table II: torque tracking"), "%s", r.out);
    static const char *const files[] = {"report.md",       "torque.json",       "torque.csv",
                                        "com_before.json", "com_all.md",        "estimation.json",
                                        "rmse_box.svg",    "magnitude_box.svg", "com_y.svg"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *p = test_path(fx.out, files[i]);
        cr_assert(test_exists(p), "%s missing", files[i]);
        free(p);
    }
    cJSON *torque = test_read_json(fx.out, "torque.json"), *com = test_read_json(fx.out, "com_before.json");
    cJSON *est = test_read_json(fx.out, "estimation.json");
    /* the true torque through the stream, the hook and the element mapping is the ideal sensor, bit for bit */
    cr_assert_eq(overall(torque, "through_pipeline", "rmse"), overall(torque, "sensor", "rmse"));
    cr_assert_eq(overall(torque, "through_pipeline", "max_abs"), overall(torque, "sensor", "max_abs"));
    cr_assert_eq(overall(com, "through_pipeline", "max_abs"), overall(com, "sensor", "max_abs"));
    /* the estimation table scores each sample's estimate against that sample's true torque: zero here */
    cr_assert_eq(overall(est, "through_pipeline", "rmse"), 0.0);
    /* feedback and friction compensation each beat feedforward (the rest: rotor inertia against the asked
     * acceleration, contact chatter; the sim_feedback tests check the ratios on a fixed-base arm) */
    double ff = overall(torque, "feedforward", "rmse"), fb = overall(torque, "sensor", "rmse");
    double comp = overall(torque, "ff_comp", "rmse");
    cr_assert(fb < 0.8 * ff, "feedback %g vs feedforward %g", fb, ff);
    cr_assert(comp < 0.8 * ff, "compensation %g vs feedforward %g", comp, ff);
    cJSON_Delete(torque);
    cJSON_Delete(com);
    cJSON_Delete(est);
    cli_result_free(&r);
    free_fixture(&fx);
}

Test(cli_closed_loop, bytes_do_not_depend_on_the_thread_count)
{
    fixture fx = make_fixture(FOUR, " \"settle\": 0.2, \"disturbances_from\": 0.5,", 0.6);
    char *out2 = test_path(fx.dir, "out2");
    cli_result a = cli_run(NULL, (const char *const[]){"closed-loop", fx.config, "-o", fx.out, "--threads", "1", NULL});
    cli_result b = cli_run(NULL, (const char *const[]){"closed-loop", fx.config, "-o", out2, "--threads", "2", NULL});
    cr_assert_eq(a.status, 0, "%s", a.err);
    cr_assert_eq(b.status, 0, "%s", b.err);
    static const char *const files[] = {"report.md", "torque.json", "com_all.csv", "estimation.md", "com_y.svg"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *pa = test_path(fx.out, files[i]), *pb = test_path(out2, files[i]);
        size_t la, lb;
        char *ta = test_read_file(pa, &la), *tb = test_read_file(pb, &lb);
        cr_assert(la == lb && memcmp(ta, tb, la) == 0, "%s differs between 1 and 2 threads", files[i]);
        free(pa), free(pb), free(ta), free(tb);
    }
    cli_result_free(&a);
    cli_result_free(&b);
    free(out2);
    free_fixture(&fx);
}

Test(cli_closed_loop, a_run_leaving_the_reference_is_reported_as_diverged)
{
    fixture fx = make_fixture("{\"name\": \"feedforward\"}, {\"name\": \"sensor\", \"torque_sensor\": true}",
                              " \"settle\": 0, \"max_com_error\": 1e-5, \"disturbances_from\": 0.3,", 0.6);
    cli_result r = cli_run(NULL, (const char *const[]){"closed-loop", fx.config, "-o", fx.out, NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "diverged (CoM, t = "), "%s", r.out);
    cr_assert(strstr(r.out, "s): CoM error"), "%s", r.out);
    cr_assert(strstr(r.out, "> max_com_error (1e-05 m) at t = "), "%s", r.out);
    cli_result_free(&r);
    free_fixture(&fx);
}

/* The fixture's scenario with the left knee's drive limited to i_max A (0.111 x 100 x i_max N m at the joint). */
static void limit_knee_drive(const fixture *fx, double i_max)
{
    char *scenario = test_path(fx->dir, "scenario.json");
    char *text = test_read_file(scenario, NULL);
    cJSON *sc = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(sc);
    cJSON *knee = cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "actuators"), "l_knee");
    cr_assert_not_null(knee);
    cJSON_ReplaceItemInObject(knee, "i_max", cJSON_CreateNumber(i_max));
    char *out = cJSON_Print(sc);
    test_write_file(scenario, out);
    free(out);
    cJSON_Delete(sc);
    free(scenario);
}

/* A drive held at its current limit ends the run as diverged by saturation once it has been there longer than
 * max_saturation within saturation_window (from settle on); the report, stability.md and stability.json say why and
 * when. With max_saturation 0 the test is off. */
Test(cli_closed_loop, a_drive_held_at_its_limit_is_reported_as_diverged_by_saturation)
{
    const char *extra = " \"max_saturation\": 0.1, \"saturation_window\": 0.2, \"disturbances_from\": 0.3,"
                        " \"disturbance_scales\": [1],";
    fixture fx = make_fixture("{\"name\": \"sensor\", \"torque_sensor\": true}", extra, 0.6);
    limit_knee_drive(&fx, 0.05); /* 0.56 N m: far below what the knee holds */
    cli_result r = cli_run(NULL, (const char *const[]){"closed-loop", fx.config, "-o", fx.out, NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    const char *at = strstr(r.out, "diverged (saturation, t = ");
    cr_assert(at, "%s", r.out);
    double t = strtod(at + strlen("diverged (saturation, t = "), NULL);
    cr_assert(t > 0.1 - 1e-9 && t < 0.2 + 1e-9, "diverged at %g s, expected within [0.1, 0.2] s", t);
    cr_assert(strstr(r.out, "the l_knee drive at its current limit"), "%s", r.out);
    char *md_path = test_path(fx.out, "stability.md"), *js_path = test_path(fx.out, "stability.json");
    char *md = test_read_file(md_path, NULL);
    cr_assert(strstr(md, "## Diverged runs: why and when (1 of 1)"), "%s", md);
    cr_assert(strstr(md, "| sensor | ") && strstr(md, " | saturation | "), "%s", md);
    char *js = test_read_file(js_path, NULL);
    cJSON *j = cJSON_Parse(js);
    cr_assert_not_null(j);
    const cJSON *run = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "runs"), 0);
    cr_assert_not_null(run, "%s", js);
    cr_assert_str_eq(cJSON_GetObjectItem(run, "status")->valuestring, "diverged");
    cr_assert_str_eq(cJSON_GetObjectItem(run, "reason")->valuestring, "saturation");
    cr_assert_float_eq(cJSON_GetObjectItem(run, "t_end")->valuedouble, t, 1e-3);
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "variants"), 0);
    const cJSON *all = cJSON_GetObjectItem(v, "all");
    cr_assert_float_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(all, "diverged_saturation"), "mean")->valuedouble, 1.0,
                       0.0);
    cr_assert_float_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(all, "diverged_com"), "mean")->valuedouble, 0.0, 0.0);
    cJSON_Delete(j);
    free(js), free(md), free(js_path), free(md_path);
    cli_result_free(&r);
    free_fixture(&fx);

    fixture off = make_fixture("{\"name\": \"sensor\", \"torque_sensor\": true}",
                               " \"max_saturation\": 0, \"disturbances_from\": 0.3,", 0.6);
    limit_knee_drive(&off, 0.05);
    r = cli_run(NULL, (const char *const[]){"closed-loop", off.config, "-o", off.out, NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_not(strstr(r.out, "saturation"), "%s", r.out);
    cli_result_free(&r);
    free_fixture(&off);
}

/* One line naming the item, exit 3, no output folder. */
static void expect_config_error(const char *configurations, const char *extra, const char *needle)
{
    fixture fx = make_fixture(configurations, extra, 0.3);
    cli_result r = cli_run(NULL, (const char *const[]){"closed-loop", fx.config, "-o", fx.out, NULL});
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "exit %d, stderr: %s", r.status, r.err);
    cr_assert(strstr(r.err, needle), "expected '%s' in: %s", needle, r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "%s", r.err);
    cr_assert_not(test_exists(fx.out));
    cli_result_free(&r);
    free_fixture(&fx);
}

Test(cli_closed_loop, bad_configurations)
{
    expect_config_error("{\"name\": \"a\", \"feedbak\": \"tau_true\"}", "", "unknown key 'feedbak'");
    expect_config_error("{\"name\": \"a\", \"torque_sensor\": true}",
                        " \"max_saturation\": 2, \"saturation_window\": 1,", "is longer than \"saturation_window\"");
    expect_config_error("{\"name\": \"a\", \"feedback\": \"tau_true\"}", "",
                        "configurations[0].feedback: needs a \"pipeline\"");
    expect_config_error("{\"name\": \"a\", \"pipeline\": \"truth.json\", \"feedback\": \"tau_tru\"}", "",
                        "did you mean 'tau_true'?");
    expect_config_error("{\"name\": \"a\", \"pipeline\": \"truth.json\", \"feedback\": \"tau_true\", "
                        "\"torque_sensor\": true}",
                        "", "not both");
    expect_config_error("{\"name\": \"a\"}, {\"name\": \"a\"}", "", "is already used by configurations[0]");
    expect_config_error("{\"name\": \"a\"}", " \"joints\": [\"r_kne\"],", "did you mean 'r_knee'?");
    expect_config_error("{\"name\": \"a\"}", " \"settle\": 0.2, \"disturbances_from\": 0.1,",
                        "must be after \"settle\"");
}

Test(cli_closed_loop, pipeline_rate_and_elements_must_fit_the_loop)
{
    fixture fx = make_fixture("{\"name\": \"a\", \"pipeline\": \"slow.json\", \"feedback\": \"tau\"}", "", 0.3);
    char *slow = test_path(fx.dir, "slow.json");
    test_write_file(slow,
                    "{\"clock\": {\"rate\": 200}, \"signals\": {\"tau\": {\"channel\": \"truth/joints/torques\"}}}\n");
    cli_result r = cli_run(NULL, (const char *const[]){"closed-loop", fx.config, "-o", fx.out, NULL});
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_assert(strstr(r.err, "runs at 200 Hz but the scenario's control loop at 1000 Hz"), "%s", r.err);
    cli_result_free(&r);
    /* an estimate whose elements are not joints */
    test_write_file(slow, "{\"clock\": {\"rate\": 1000}, \"signals\": {\"tau\": {\"channel\": \"truth/com\"}}}\n");
    r = cli_run(NULL, (const char *const[]){"closed-loop", fx.config, "-o", fx.out, NULL});
    cr_assert_eq(r.status, 2 + 1, "%s", r.err);
    cr_assert(strstr(r.err, "signal 'tau' element 'x' is not a joint of the scenario's model"), "%s", r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "%s", r.err);
    cr_assert_not(test_exists(fx.out));
    cli_result_free(&r);
    free(slow);
    free_fixture(&fx);
}
