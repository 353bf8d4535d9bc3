/* End-to-end: roboest closed-loop with the controller's model fed inertial parameters (seed 001, Table II) and a
 * scored task. The humanoid balancing on both feet carries an unknown torso load; an "oracle" pipeline passes the
 * simulator's true parameters of the torso (truth/payload/torso), which must bring the pelvis-height error down
 * against the nominal model; bad inertia signals and tasks are refused. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* configs/scenarios/inertial_torso_square.json (the humanoid with arms balancing under a pelvis-height task while
 * its torso carries 35 kg for the first 2.5 s, 30 kg in its model), `duration` s, the model read in place. */
static void write_scenario(const char *path, double duration)
{
    char *text = test_read_file(RB_SOURCE "/configs/scenarios/inertial_torso_square.json", NULL);
    cJSON *sc = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(sc);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(sc, "model"), "urdf",
                              cJSON_CreateString(RB_SOURCE "/datasets/humanoid_arms.urdf"));
    cJSON_ReplaceItemInObject(sc, "duration", cJSON_CreateNumber(duration));
    char *out = cJSON_Print(sc);
    test_write_file(path, out);
    free(out);
    cJSON_Delete(sc);
}

typedef struct fixture {
    char *dir, *config, *out;
} fixture;

static const char *const TASK =
    " \"task\": {\"name\": \"pelvis height (m)\", "
    "\"actual\": {\"channel\": \"truth/tasks/pelvis_height\", \"element\": \"actual\"}, "
    "\"reference\": {\"channel\": \"truth/tasks/pelvis_height\", \"element\": \"reference\"}},";

static fixture make_fixture(const char *configurations, const char *task, double duration)
{
    fixture fx = {test_tmpdir(), NULL, NULL};
    fx.config = test_path(fx.dir, "closed_loop.json");
    fx.out = test_path(fx.dir, "out");
    char *scenario = test_path(fx.dir, "scenario.json"), *oracle = test_path(fx.dir, "oracle.json");
    write_scenario(scenario, duration);
    test_write_file(oracle, "{\"clock\": {\"rate\": 1000}, \"signals\": {\n"
                            "  \"pi_true\": {\"channel\": \"truth/payload/torso\"},\n"
                            "  \"q\": {\"channel\": \"truth/joints/positions\"}}}\n");
    char text[4096];
    snprintf(text, sizeof text,
             "{\"name\": \"e2e closed loop inertia\", \"scenario\": \"scenario.json\", \"settle\": 0.2,\n%s\n"
             " \"configurations\": [%s]}\n",
             task, configurations);
    test_write_file(fx.config, text);
    free(scenario);
    free(oracle);
    return fx;
}

static void free_fixture(fixture *fx) { free(fx->dir), free(fx->config), free(fx->out); }

static double task_stat(const char *dir, const char *variant, const char *stat)
{
    char *path = test_path(dir, "task.json");
    char *text = test_read_file(path, NULL);
    cr_assert_not_null(text, "%s missing", path);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    free(path);
    double value = NAN;
    for (const cJSON *v = cJSON_GetObjectItem(doc, "variants")->child; v; v = v->next)
        if (strcmp(cJSON_GetObjectItem(v, "name")->valuestring, variant) == 0)
            value = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "all"), stat), "mean")->valuedouble;
    cJSON_Delete(doc);
    cr_assert(!isnan(value), "variant %s not in task.json", variant);
    return value;
}

static const char *const TWO = "{\"name\": \"nominal\", \"torque_sensor\": true},\n"
                               " {\"name\": \"oracle\", \"torque_sensor\": true, \"pipeline\": \"oracle.json\", "
                               "\"inertia\": {\"signal\": \"pi_true\", \"body\": \"torso\"}}";

Test(cli_closed_loop_inertia, the_true_parameters_fed_to_the_controller_cut_the_task_error)
{
    char task[2048];
    snprintf(task, sizeof task,
             "%s \"published\": [{\"configuration\": \"nominal\", \"statistic\": \"rmse\", \"value\": 0.0352, "
             "\"source\": \"Table II, no adaptation\"}],",
             TASK);
    fixture fx = make_fixture(TWO, task, 1.5);
    cli_result r = cli_run(NULL, (const char *const[]){"closed-loop", fx.config, "-o", fx.out, "-q", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    char *md = test_path(fx.out, "report.md");
    char *text = test_read_file(md, NULL);
    cr_assert(strstr(text, "## Task tracking: pelvis height (m)"), "%s", text);
    free(text);
    free(md);
    /* the published value sits beside ours in the task table */
    char *tmd = test_path(fx.out, "task.md");
    text = test_read_file(tmd, NULL);
    cr_assert(strstr(text, "## Published beside ours") && strstr(text, "Table II, no adaptation") &&
                  strstr(text, "0.0352"),
              "%s", text);
    free(text);
    free(tmd);
    double nominal = task_stat(fx.out, "nominal", "rmse"), oracle = task_stat(fx.out, "oracle", "rmse");
    /* the torso load sinks the pelvis under a controller that does not know it */
    cr_assert(oracle < 0.5 * nominal, "task RMSE with the true torso parameters %g, nominal %g", oracle, nominal);
    cli_result_free(&r);
    free_fixture(&fx);
}

/* Each a one-line error naming what is wrong, exit 3, nothing written. */
Test(cli_closed_loop_inertia, bad_inertia_and_task_are_refused)
{
    static const struct {
        const char *configs, *task, *expect;
    } cases[] = {
        {"{\"name\": \"a\", \"pipeline\": \"oracle.json\", \"inertia\": \"nope\"}", "", "signal 'nope'"},
        {"{\"name\": \"a\", \"inertia\": \"pi_true\"}", "", "needs a \"pipeline\""},
        {"{\"name\": \"a\", \"pipeline\": \"oracle.json\", \"inertia\": {\"signal\": \"pi_true\", \"body\": \"x\"}}",
         "", "'x' is not a body"},
        {"{\"name\": \"a\", \"pipeline\": \"oracle.json\", \"inertia\": \"pi_true\"}", "",
         "element 'm' is not \"<body>/<parameter>\""},
        {"{\"name\": \"a\", \"pipeline\": \"oracle.json\", \"inertia\": {\"signal\": \"q\", \"body\": \"torso\"}}", "",
         "expected one of m hx"},
        {"{\"name\": \"a\"}",
         " \"task\": {\"name\": \"t\", \"actual\": {\"channel\": \"truth/nope\", \"element\": \"x\"}, "
         "\"reference\": {\"channel\": \"truth/joints/references\", \"element\": \"l_elbow\"}},",
         "no channel 'truth/nope'"},
        {"{\"name\": \"a\"}",
         " \"task\": {\"name\": \"t\", \"actual\": {\"channel\": \"truth/joints/positions\", \"element\": \"elbow\"}, "
         "\"reference\": {\"channel\": \"truth/joints/references\", \"element\": \"l_elbow\"}},",
         "has no element 'elbow'"},
        {"{\"name\": \"a\"}", " \"task\": {\"name\": \"t\", \"actual\": {\"channel\": \"x\"}},", "element"},
        {"{\"name\": \"a\"}",
         " \"published\": [{\"configuration\": \"a\", \"statistic\": \"rmse\", \"value\": 1, \"source\": \"s\"}],",
         "it needs \"task\""},
        {"{\"name\": \"a\"}",
         " \"task\": {\"name\": \"t\", \"actual\": {\"channel\": \"truth/tasks/pelvis_height\", \"element\": "
         "\"actual\"}, \"reference\": {\"channel\": \"truth/tasks/pelvis_height\", \"element\": \"reference\"}}, "
         "\"published\": [{\"configuration\": \"b\", \"statistic\": \"rmse\", \"value\": 1, \"source\": \"s\"}],",
         "unknown configuration 'b'"},
        {"{\"name\": \"a\"}",
         " \"task\": {\"name\": \"t\", \"actual\": {\"channel\": \"truth/tasks/pelvis_height\", \"element\": "
         "\"actual\"}, \"reference\": {\"channel\": \"truth/tasks/pelvis_height\", \"element\": \"reference\"}}, "
         "\"published\": [{\"configuration\": \"a\", \"statistic\": \"rise_time\", \"value\": 1, \"source\": \"s\"}],",
         "the task table has mse, rmse, mae, max_abs) 'rise_time'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fixture fx = make_fixture(cases[i].configs, cases[i].task, 0.3);
        cli_result r = cli_run(NULL, (const char *const[]){"closed-loop", fx.config, "-o", fx.out, "-q", NULL});
        cr_assert_eq(r.status, 3, "case %zu: exit %d: %s", i, r.status, r.err);
        cr_assert(strstr(r.err, cases[i].expect), "case %zu: %s", i, r.err);
        cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "case %zu: not one line: %s", i, r.err);
        cr_assert(!test_exists(fx.out), "case %zu wrote %s", i, fx.out);
        cli_result_free(&r);
        free_fixture(&fx);
    }
}
