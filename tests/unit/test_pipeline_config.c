/* Pipeline configuration: messages with file:line:col and key paths, validation, resolved JSON, order. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roboest/estimators.h"
#include "roboest/pipeline.h"

/* A test stage with every parameter kind: out = a + b. */
static int probe_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    (void)err;
    setup->out[0] = setup->in[0];
    *state = NULL;
    return RB_OK;
}

static int probe_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)state, (void)k, (void)t, (void)err;
    out[0][0] = in[0][0] + in[1][0];
    return RB_OK;
}

static const char *const probe_in[] = {"a", "b"};
static const char *const probe_out[] = {"out"};
static const char *const probe_modes[] = {"fast", "exact", NULL};
static const double probe_weights[] = {1, 2};
static const rb_param_spec probe_params[] = {
    {.name = "gain", .kind = RB_PARAM_NUMBER, .required = true, .has_min = true, .min = 0, .has_max = true, .max = 10},
    {.name = "count",
     .kind = RB_PARAM_INTEGER,
     .def_number = 3,
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 100},
    {.name = "verbose", .kind = RB_PARAM_BOOLEAN},
    {.name = "mode", .kind = RB_PARAM_STRING, .def_string = "fast", .choices = probe_modes},
    {.name = "weights",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = probe_weights,
     .def_count = 2,
     .min_count = 1,
     .max_count = 4,
     .has_min = true,
     .min = 0},
    {.name = "labels", .kind = RB_PARAM_STRING_ARRAY},
};
static const rb_stage_type probe_type = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "probe",
    .summary = "test stage",
    .inputs = probe_in,
    .n_inputs = 2,
    .outputs = probe_out,
    .n_outputs = 1,
    .params = probe_params,
    .n_params = 6,
    .create = probe_create,
    .step = probe_step,
};

static rb_registry *reg;

static void setup_registry(void)
{
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_registry_add(reg, &probe_type, &err), RB_OK, "%s", err.msg);
}

static void free_registry(void) { rb_registry_free(reg); }

TestSuite(pipeline_config, .init = setup_registry, .fini = free_registry);

static int load(const char *text, rb_pipeline **p, rb_err *err)
{
    rb_err_clear(err);
    return rb_pipeline_load_text(text, strlen(text), "pipeline.json", NULL, reg, p, err);
}

static void expect_error(const char *text, int code, const char *message)
{
    rb_pipeline *p = (rb_pipeline *)1;
    rb_err err;
    int rc = load(text, &p, &err);
    cr_assert_eq(rc, code, "rc %d (%s) for: %s", rc, err.msg, text);
    cr_assert_null(p);
    cr_assert_str_eq(err.msg, message);
}

#define HEAD "{\n  \"clock\": {\"rate\": 100},\n  \"signals\": {\"q\": {\"channel\": \"j/q\"}},\n"

Test(pipeline_config, malformed_json_points_at_the_culprit)
{
    expect_error("{\n"
                 "  \"clock\": {\"rate\": 100},\n"
                 "  \"signals\": {\"q\": {\"channel\": \"a\"},\n"
                 "  }\n"
                 "}\n",
                 RB_ECONFIG, "pipeline.json:4:3: malformed JSON (expected a string key, found '}')");
    expect_error("{\"clock\": 1 \"x\": 2}", RB_ECONFIG,
                 "pipeline.json:1:13: malformed JSON (expected ',' or '}', found '\"')");
    expect_error("{\n  \"clock\": [1, 2\n", RB_ECONFIG,
                 "pipeline.json:3:1: malformed JSON (expected ',' or ']', found the end of the text)");
    expect_error("{\"a\": \"b\\q\"}", RB_ECONFIG, "pipeline.json:1:9: malformed JSON (invalid escape in a string)");
    expect_error("{} x", RB_ECONFIG, "pipeline.json:1:4: malformed JSON (expected the end of the text, found 'x')");
    expect_error("", RB_ECONFIG, "pipeline.json:1:1: malformed JSON (expected a value, found the end of the text)");
    rb_pipeline *p;
    rb_err err;
    cr_assert_eq(rb_pipeline_load_text("{}\0{}", 5, "x.json", NULL, reg, &p, &err), RB_ECONFIG);
    cr_assert_str_eq(err.msg, "x.json:1:3: malformed JSON (NUL byte)");
}

Test(pipeline_config, type_error_deep_in_stage_params)
{
    /* line 9: 8 spaces, then "gain" at column 9 */
    expect_error(HEAD "  \"stages\": [\n"
                      "    {\"id\": \"s0\", \"type\": \"lowpass\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"q0\"}, "
                      "\"params\": {\"cutoff_hz\": 5}},\n"
                      "    {\"id\": \"s1\", \"type\": \"lowpass\", \"in\": {\"x\": \"q0\"}, \"out\": {\"y\": \"q1\"}, "
                      "\"params\": {\"cutoff_hz\": 5}},\n"
                      "    {\"id\": \"s2\", \"type\": \"probe\", \"in\": {\"a\": \"q0\", \"b\": \"q1\"}, \"out\": "
                      "{\"out\": \"q2\"},\n"
                      "     \"params\": {\n"
                      "        \"gain\": \"high\"\n"
                      "     }}\n"
                      "  ]\n"
                      "}\n",
                 RB_ECONFIG, "pipeline.json:9:9: stages[2].params.gain: expected a number");
}

Test(pipeline_config, unknown_key_suggests_the_closest)
{
    expect_error(HEAD
                 "  \"stages\": [\n"
                 "    {\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"q_lp\"},\n"
                 "     \"params\": {\n"
                 "       \"cutof_hz\": 5}}\n"
                 "  ]\n"
                 "}\n",
                 RB_ECONFIG, "pipeline.json:7:8: stages[0].params: unknown key 'cutof_hz' (did you mean 'cutoff_hz'?)");
    expect_error(HEAD "  \"stagse\": []\n}\n", RB_ECONFIG,
                 "pipeline.json:4:3: unknown key 'stagse' (did you mean 'stages'?)");
    expect_error(HEAD "  \"colour\": 1\n}\n", RB_ECONFIG, "pipeline.json:4:3: unknown key 'colour'");
    expect_error("{\"clock\": {\"rate\": 100, \"chanel\": \"x\"}}", RB_ECONFIG,
                 "pipeline.json:1:25: clock: unknown key 'chanel' (did you mean 'channel'?)");
}

Test(pipeline_config, duplicated_key)
{
    expect_error("{\n"
                 "  \"clock\": {\"rate\": 100},\n"
                 "  \"signals\": {\n"
                 "    \"q\": {\"channel\": \"a\"},\n"
                 "    \"q\": {\"channel\": \"b\"}\n"
                 "  }\n"
                 "}\n",
                 RB_ECONFIG, "pipeline.json:5:5: signals: duplicated key 'q' (first at 4:5)");
    expect_error("{\"clock\": {\"rate\": 1}, \"clock\": {\"rate\": 2}}", RB_ECONFIG,
                 "pipeline.json:1:24: duplicated key 'clock' (first at 1:2)");
}

Test(pipeline_config, unknown_stage_type)
{
    expect_error(HEAD "  \"stages\": [\n"
                      "    {\"id\": \"lp\", \"type\": \"lowpas\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"q_lp\"}}\n"
                      "  ]\n}\n",
                 RB_ECONFIG,
                 "pipeline.json:5:18: stages[0].type: unknown stage type 'lowpas' (did you mean 'lowpass'?)");
    expect_error(HEAD "  \"stages\": [{\"id\": \"k\", \"type\": \"kalman\"}]\n}\n", RB_ECONFIG,
                 "pipeline.json:4:26: stages[0].type: unknown stage type 'kalman' (roboest --help lists the stage "
                 "types)");
}

Test(pipeline_config, input_wired_to_nothing)
{
    expect_error(HEAD "  \"stages\": [\n"
                      "    {\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"q_lp\"}, "
                      "\"params\": {\"cutoff_hz\": 2}},\n"
                      "    {\"id\": \"fd\", \"type\": \"finite_difference\",\n"
                      "     \"in\": {\"x\": \"qd\"}, \"out\": {\"dx\": \"qdd\"}}\n"
                      "  ]\n}\n",
                 RB_ECONFIG,
                 "pipeline.json:7:13: stages[1].in.x: signal 'qd' is not produced by any signal binding "
                 "or stage");
    expect_error(HEAD "  \"stages\": [{\"id\": \"fd\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q_lpf\"}, "
                      "\"out\": {\"dx\": \"q_lp\"}}]\n}\n",
                 RB_ECONFIG,
                 "pipeline.json:4:63: stages[0].in.x: signal 'q_lpf' is not produced by any signal "
                 "binding or stage (did you mean 'q_lp'?)");
}

Test(pipeline_config, dependency_cycle)
{
    expect_error(
        HEAD
        "  \"stages\": [\n"
        "    {\"id\": \"a\", \"type\": \"finite_difference\", \"in\": {\"x\": \"yc\"}, \"out\": {\"dx\": \"ya\"}},\n"
        "    {\"id\": \"b\", \"type\": \"finite_difference\", \"in\": {\"x\": \"ya\"}, \"out\": {\"dx\": \"yb\"}},\n"
        "    {\"id\": \"c\", \"type\": \"finite_difference\", \"in\": {\"x\": \"yb\"}, \"out\": {\"dx\": \"yc\"}},\n"
        "    {\"id\": \"free\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, \"out\": {\"dx\": \"qd\"}}\n"
        "  ]\n}\n",
        RB_ECONFIG, "pipeline.json:5:53: stages[0].in.x: dependency cycle: a -> b -> c -> a");
    expect_error(HEAD "  \"stages\": [{\"id\": \"self\", \"type\": \"finite_difference\", \"in\": {\"x\": \"y\"}, "
                      "\"out\": {\"dx\": \"y\"}}]\n}\n",
                 RB_ECONFIG, "pipeline.json:4:65: stages[0].in.x: dependency cycle: self -> self");
}

Test(pipeline_config, unknown_output_signal)
{
    expect_error(
        HEAD
        "  \"stages\": [{\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"q_lp\"}, "
        "\"params\": {\"cutoff_hz\": 2}}],\n"
        "  \"outputs\": [\n"
        "    {\"path\": \"est.h5\", \"signals\": [\"q_lp\",\n"
        "                                    \"q_lpf\"]}\n"
        "  ]\n}\n",
        RB_ECONFIG,
        "pipeline.json:7:37: outputs[0].signals[1]: signal 'q_lpf' is not produced by any signal "
        "binding or stage (did you mean 'q_lp'?)");
}

/* Further checks, one line each: {config tail after HEAD, expected message}. */
static const char *const semantic_cases[][2] = {
    {"  \"stages\": [{\"id\": \"a\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, \"out\": {\"dx\": "
     "\"q\"}}]\n}",
     "pipeline.json:4:81: stages[0].out.dx: signal 'q' is already produced by signals.q"},
    {"  \"stages\": [{\"id\": \"a\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, \"out\": {\"dx\": "
     "\"d\"}},\n"
     "             {\"id\": \"a\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, \"out\": {\"dx\": "
     "\"e\"}}]\n}",
     "pipeline.json:5:15: stages[1].id: stage id 'a' is also used by stages[0]"},
    {"  \"stages\": [{\"id\": \"a\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, \"out\": {\"dx\": "
     "\"d\"}},\n"
     "             {\"id\": \"b\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, \"out\": {\"dx\": "
     "\"d\"}}]\n}",
     "pipeline.json:5:81: stages[1].out.dx: signal 'd' is already produced by stages[0].out.dx"},
    {"  \"stages\": [{\"id\": \"a\", \"type\": \"finite_difference\", \"in\": {}, \"out\": {\"dx\": \"d\"}}]\n}",
     "pipeline.json:4:55: stages[0].in: missing input port 'x'"},
    {"  \"stages\": [{\"id\": \"a\", \"type\": \"finite_difference\", \"in\": {\"y\": \"q\"}, \"out\": {\"dx\": "
     "\"d\"}}]\n}",
     "pipeline.json:4:62: stages[0].in: unknown key 'y'"},
    {"  \"stages\": [{\"id\": \"a\", \"type\": \"finite_difference\", \"out\": {\"dx\": \"d\"}}]\n}",
     "pipeline.json:4:14: stages[0]: missing key 'in'"},
    /* output ports may be left unwired, but not all of them, and only ports the type has */
    {"  \"stages\": [{\"id\": \"a\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}}]\n}",
     "pipeline.json:4:14: stages[0]: missing key 'out'"},
    {"  \"stages\": [{\"id\": \"a\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"}, \"out\": {}}]\n}",
     "pipeline.json:4:69: stages[0].out: no output port is wired: wire at least one of x, x_dot, x_ddot, innovation, "
     "nis, var"},
    {"  \"stages\": [{\"id\": \"a\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"},\n"
     "                \"out\": {\"x_dot\": \"v\", \"inovation\": \"nu\"}}]\n}",
     "pipeline.json:5:39: stages[0].out: unknown key 'inovation' (did you mean 'innovation'?)"},
    {"  \"stages\": [{\"id\": \"a\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"}, "
     "\"out\": {\"x_dot\": \"v\"}},\n"
     "             {\"id\": \"b\", \"type\": \"lowpass\", \"in\": {\"x\": \"nis\"}, \"out\": {\"y\": \"w\"}, "
     "\"params\": {\"cutoff_hz\": 1}}]\n}",
     "pipeline.json:5:52: stages[1].in.x: signal 'nis' is not produced by any signal binding or stage"},
    {"  \"stages\": [{\"id\": \"a\", \"type\": \"lowpass\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"d\"}}]\n}",
     "pipeline.json:4:14: stages[0]: missing required parameter 'cutoff_hz' (number: cutoff frequency f_c, Hz (time "
     "constant 1 / (2 pi f_c)))"},
    {"  \"stages\": [{\"id\": \"a\", \"type\": \"lowpass\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"d\"}, "
     "\"params\": {\"cutoff_hz\": 0}}]\n}",
     "pipeline.json:4:93: stages[0].params.cutoff_hz: must be > 0"},
    {"  \"stages\": [{\"id\": \"a\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, \"out\": {\"dx\": "
     "\"d\"}, "
     "\"params\": {\"order\": 1.5}}]\n}",
     "pipeline.json:4:104: stages[0].params.order: expected an integer"},
    {"  \"stages\": [{\"id\": \"a\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, \"out\": {\"dx\": "
     "\"d\"}, "
     "\"params\": {\"order\": 3}}]\n}",
     "pipeline.json:4:104: stages[0].params.order: must be >= 1 and <= 2"},
    {"  \"stages\": [{\"id\": \"p\", \"type\": \"probe\", \"in\": {\"a\": \"q\", \"b\": \"q\"}, \"out\": {\"out\": "
     "\"d\"}, "
     "\"params\": {\"gain\": 1, \"mode\": \"exakt\"}}]\n}",
     "pipeline.json:4:114: stages[0].params.mode: unknown value 'exakt' (did you mean 'exact'?)"},
    {"  \"stages\": [{\"id\": \"p\", \"type\": \"probe\", \"in\": {\"a\": \"q\", \"b\": \"q\"}, \"out\": {\"out\": "
     "\"d\"}, "
     "\"params\": {\"gain\": 1, \"verbose\": 1}}]\n}",
     "pipeline.json:4:114: stages[0].params.verbose: expected true or false"},
    {"  \"stages\": [{\"id\": \"p\", \"type\": \"probe\", \"in\": {\"a\": \"q\", \"b\": \"q\"}, \"out\": {\"out\": "
     "\"d\"}, "
     "\"params\": {\"gain\": 1, \"weights\": [1, -2]}}]\n}",
     "pipeline.json:4:129: stages[0].params.weights[1]: must be >= 0"},
    {"  \"stages\": [{\"id\": \"p\", \"type\": \"probe\", \"in\": {\"a\": \"q\", \"b\": \"q\"}, \"out\": {\"out\": "
     "\"d\"}, "
     "\"params\": {\"gain\": 1, \"weights\": []}}]\n}",
     "pipeline.json:4:114: stages[0].params.weights: expected 1 to 4 values, got 0"},
    {"  \"stages\": [{\"id\": \"p\", \"type\": \"probe\", \"in\": {\"a\": \"q\", \"b\": \"q\"}, \"out\": {\"out\": "
     "\"d\"}, "
     "\"params\": {\"gain\": 1, \"labels\": [\"x\", 2]}}]\n}",
     "pipeline.json:4:130: stages[0].params.labels[1]: expected a string"},
    {"  \"outputs\": [{\"path\": \"/tmp/x.h5\", \"signals\": [\"q\"]}]\n}",
     "pipeline.json:4:16: outputs[0].path: '/tmp/x.h5' must be relative to the output folder"},
    {"  \"outputs\": [{\"path\": \"../x.h5\", \"signals\": [\"q\"]}]\n}",
     "pipeline.json:4:16: outputs[0].path: '../x.h5' must stay inside the output folder"},
    {"  \"outputs\": [{\"path\": \"x.txt\", \"signals\": [\"q\"]}]\n}",
     "pipeline.json:4:16: outputs[0].path: x.txt: unknown output format: use a .h5, .hdf5, .mat or .csv file name"},
    {"  \"outputs\": [{\"path\": \"x.h5\", \"signals\": [\"q\", \"q\"]}]\n}",
     "pipeline.json:4:49: outputs[0].signals[1]: signal 'q' is listed twice"},
    {"  \"outputs\": [{\"path\": \"x.csv\", \"signals\": [\"q\"]}],\n  \"metrics\": [{\"estimate\": \"q\", "
     "\"reference\": "
     "\"q\"}],\n  \"reports\": [\"x.csv\"]\n}",
     "pipeline.json:6:15: reports[0]: 'x.csv' is also written by outputs[0].path"},
    {"  \"reports\": [\"r.md\"]\n}", "pipeline.json:4:3: reports: there is nothing to report: add a \"metrics\" entry"},
    {"  \"metrics\": [{\"estimate\": \"q\", \"reference\": \"qq\"}]\n}",
     "pipeline.json:4:33: metrics[0].reference: signal 'qq' is not produced by any signal binding or stage"},
    {"  \"metrics\": [{\"estimate\": \"q\", \"reference\": \"q\", \"window\": [2, 1]}]\n}",
     "pipeline.json:4:65: metrics[0].window[1]: must be greater than window[0] (2)"},
    {"  \"gap_factor\": 1\n}", "pipeline.json:4:3: gap_factor: must be > 1"},
    {"  \"logs\": [\"a.mat\", 3]\n}",
     "pipeline.json:4:21: logs[1]: expected a path or an array of paths (one session)"},
    {"  \"logs\": [[]]\n}", "pipeline.json:4:12: logs[0]: must not be empty"},
    {"  \"model\": {\"joints\": [\"a\"]}\n}", "pipeline.json:4:3: model: missing key 'urdf'"},
    {"  \"model\": {\"urdf\": \"" RB_SOURCE "/datasets/arm_2ft.urdf\", \"joints\": [\"elbw\"]}\n}",
     "pipeline.json:4:13: model.urdf: " RB_SOURCE "/datasets/arm_2ft.urdf: joint list: no joint named elbw"},
    {"  \"model\": {\"urdf\": \"a.urdf\", \"floating\": 1}\n}",
     "pipeline.json:4:31: model.floating: expected true or false"},
};

Test(pipeline_config, semantic_errors_name_key_and_position)
{
    for (size_t i = 0; i < sizeof semantic_cases / sizeof semantic_cases[0]; i++) {
        char *text = rb_asprintf("%s%s", HEAD, semantic_cases[i][0]);
        expect_error(text, RB_ECONFIG, semantic_cases[i][1]);
        rb_free(text);
    }
}

static const char *const structure_cases[][2] = {
    {"[]", "pipeline.json:1:1: expected an object"},
    {"{\"signals\": {\"q\": {\"channel\": \"a\"}}}", "pipeline.json:1:1: missing key 'clock'"},
    {"{\"clock\": {}}", "pipeline.json:1:2: clock: give exactly one of 'rate' (Hz) or 'channel'"},
    {"{\"clock\": {\"rate\": 1, \"channel\": \"a\"}}",
     "pipeline.json:1:2: clock: give exactly one of 'rate' (Hz) or 'channel'"},
    {"{\"clock\": {\"rate\": -1}}", "pipeline.json:1:12: clock.rate: must be > 0 (Hz)"},
    {"{\"clock\": {\"rate\": 1e999}}", "pipeline.json:1:12: clock.rate: expected a finite number"},
    {"{\"clock\": {\"rate\": 1}}", "pipeline.json:1:1: missing key 'signals'"},
    {"{\"clock\": {\"rate\": 1}, \"signals\": {}}",
     "pipeline.json:1:24: signals: expected at least one signal bound to a log channel"},
    {"{\"clock\": {\"rate\": 1}, \"signals\": {\"a b\": {\"channel\": \"a\"}}}",
     "pipeline.json:1:36: signals[\"a b\"]: signal name 'a b' may use only letters, digits and _ . - / (not first)"},
    {"{\"clock\": {\"rate\": 1}, \"signals\": {\"q\": {}}}", "pipeline.json:1:36: signals.q: missing key 'channel'"},
    {"{\"clock\": {\"rate\": 1}, \"signals\": {\"q\": {\"channel\": \"a\", \"elements\": [0, \"b\"]}}}",
     "pipeline.json:1:74: signals.q.elements[1]: expected an element index >= 0 (all names or all indices)"},
    {"{\"clock\": {\"rate\": 1}, \"signals\": {\"q\": {\"channel\": \"a\", \"elements\": []}}}",
     "pipeline.json:1:58: signals.q.elements: expected a non-empty array of element names or indices"},
    {"{\"clock\": {\"rate\": 1}, \"signals\": {\"q\": {\"channel\": \"a\", \"nonfinite\": \"skip\"}}}",
     "pipeline.json:1:58: signals.q.nonfinite: unknown value 'skip' (expected one of \"error\", \"hold\")"},
    {"{\"clock\": {\"rate\": 1}, \"window\": [0], \"signals\": {\"q\": {\"channel\": \"a\"}}}",
     "pipeline.json:1:24: window: expected [t0, t1] in seconds or {\"from_start\": [t0, t1]}"},
    {"{\"name\": \"\", \"clock\": {\"rate\": 1}, \"signals\": {\"q\": {\"channel\": \"a\"}}}",
     "pipeline.json:1:2: name: must not be empty"},
};

Test(pipeline_config, structure_errors)
{
    for (size_t i = 0; i < sizeof structure_cases / sizeof structure_cases[0]; i++)
        expect_error(structure_cases[i][0], RB_ECONFIG, structure_cases[i][1]);
}

static const char *full_config =
    "{\n"
    "  \"model\": {\"urdf\": \"../datasets/arm_2ft.urdf\", \"joints\": [\"elbow\", \"shoulder_pitch\"]},\n"
    "  \"logs\": [\"../datasets/a.mat\", [\"../datasets/b1.mat\", \"../datasets/b2.mat\"]],\n"
    "  \"clock\": {\"rate\": 200.0},\n"
    "  \"window\": [0.5, 10.25],\n"
    "  \"signals\": {\n"
    "    \"q\": {\"channel\": \"joints_state/positions\", \"elements\": [\"hip\", \"knee\"]},\n"
    "    \"qd_true\": {\"channel\": \"joints_state/velocities\", \"elements\": [0, 1], \"interp\": \"hold\", "
    "\"nonfinite\": \"hold\"}\n"
    "  },\n"
    "  \"stages\": [\n"
    "    {\"id\": \"fd\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q_lp\"}, \"out\": {\"dx\": \"qd_fd\"}},\n"
    "    {\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"q_lp\"}, \"params\": "
    "{\"cutoff_hz\": 7.5}},\n"
    "    {\"id\": \"p\", \"type\": \"probe\", \"in\": {\"a\": \"q\", \"b\": \"qd_fd\"}, \"out\": {\"out\": \"sum\"}, "
    "\"params\": {\"gain\": 0.1, \"labels\": [\"x\"], \"verbose\": true}}\n"
    "  ],\n"
    "  \"outputs\": [{\"path\": \"estimates.h5\", \"signals\": [\"qd_fd\", \"q_lp\"]}],\n"
    "  \"metrics\": [{\"estimate\": \"qd_fd\", \"reference\": \"qd_true\", \"window\": [1, 9]},\n"
    "              {\"estimate\": \"q_lp\", \"reference\": \"q\", \"name\": \"lowpass lag\"}],\n"
    "  \"reports\": [\"report.md\", \"report.json\"]\n"
    "}\n";

Test(pipeline_config, typed_structs_and_defaults)
{
    rb_pipeline *p;
    rb_err err;
    cr_assert_eq(rb_pipeline_load_text(full_config, strlen(full_config), "configs/demo.json", "configs/demo.json", reg,
                                       &p, &err),
                 RB_OK, "%s", err.msg);
    cr_assert_str_eq(p->name, "demo", "default name: file name without .json");
    cr_assert_str_eq(p->model_urdf, "configs/../datasets/arm_2ft.urdf");
    cr_assert_not_null(p->model);
    cr_assert_eq(p->model->n_dofs, 2);
    cr_assert_str_eq(p->model->dof_names[0], "elbow"); /* the joint list's order */
    cr_assert_str_eq(p->config_dir, "configs/.");
    cr_assert_eq(p->n_logs, 2);
    cr_assert_eq(p->logs[1].n_paths, 2);
    cr_assert_str_eq(p->logs[1].paths[1], "configs/../datasets/b2.mat");
    cr_assert_eq(p->clock_rate, 200.0);
    cr_assert(p->has_window && p->window.t0 == 0.5 && p->window.t1 == 10.25 && !p->window.from_start);
    cr_assert_eq(p->gap_factor, 3.0);
    cr_assert_eq(p->signals[0].interp, RB_INTERP_LINEAR);
    cr_assert_eq(p->signals[0].nonfinite, RB_NONFINITE_ERROR);
    cr_assert_str_eq(p->signals[0].select_names[1], "knee");
    cr_assert_eq(p->signals[1].select_indices[1], 1);
    cr_assert_eq(p->signals[1].nonfinite, RB_NONFINITE_HOLD);
    cr_assert_str_eq(p->stages[0].id, "lp", "lp feeds fd: it runs first");
    const rb_config_stage *probe = &p->stages[2];
    rb_params params = {probe->type, probe->params};
    cr_assert_eq(rb_params_number(&params, "gain"), 0.1);
    cr_assert_eq(rb_params_integer(&params, "count"), 3);
    cr_assert(rb_params_boolean(&params, "verbose"));
    cr_assert_str_eq(rb_params_string(&params, "mode"), "fast");
    cr_assert(rb_params_get(&params, "gain")->given);
    cr_assert(!rb_params_get(&params, "mode")->given);
    cr_assert_eq(rb_params_get(&params, "weights")->count, 2);
    cr_assert_eq(rb_params_get(&params, "weights")->numbers[1], 2.0);
    cr_assert_str_eq(rb_params_get(&params, "labels")->strings[0], "x");
    cr_assert_null(rb_params_get(&params, "nope"));
    cr_assert(isnan(rb_params_number(&params, "nope")));
    cr_assert_str_eq(p->metrics[0].name, "qd_fd", "name defaults to the estimate");
    cr_assert_str_eq(p->metrics[1].name, "lowpass lag");
    cr_assert(!p->metrics[1].has_window && isinf(p->metrics[1].window.t0));
    cr_assert_eq(p->outputs[0].format, RB_OUT_H5);
    cr_assert_eq(p->reports[1].format, RB_REPORT_JSON);
    /* recorded: outputs and metric operands only */
    const char *recorded[] = {"q", "qd_true", "qd_fd", "q_lp"}, *not_recorded[] = {"sum"};
    for (size_t i = 0; i < 4; i++)
        cr_assert(p->signal_table[rb_pipeline_signal_index(p, recorded[i])].recorded, "%s", recorded[i]);
    cr_assert(!p->signal_table[rb_pipeline_signal_index(p, not_recorded[0])].recorded);
    cr_assert_eq(rb_pipeline_signal_index(p, "nope"), -1);
    cr_assert_eq(strlen(p->config_sha256), 64);
    rb_pipeline_free(p);
}

Test(pipeline_config, resolved_json_round_trips)
{
    rb_pipeline *p, *q;
    rb_err err;
    cr_assert_eq(rb_pipeline_load_text(full_config, strlen(full_config), "configs/demo.json", "configs/demo.json", reg,
                                       &p, &err),
                 RB_OK, "%s", err.msg);
    char *j1 = rb_pipeline_resolved_json(p);
    cr_assert_not_null(j1);
    cr_assert_eq(rb_pipeline_load_text(j1, strlen(j1), "resolved.json", NULL, reg, &q, &err), RB_OK, "%s\n%s", err.msg,
                 j1);
    char *j2 = rb_pipeline_resolved_json(q);
    cr_assert_str_eq(j1, j2);

    cJSON *root = cJSON_Parse(j1);
    cr_assert_not_null(root);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(root, "name")->valuestring, "demo");
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(root, "gap_factor")->valuedouble, 3.0);
    cJSON *logs = cJSON_GetObjectItemCaseSensitive(root, "logs");
    cr_assert_str_eq(cJSON_GetArrayItem(logs, 0)->valuestring, "configs/../datasets/a.mat", "paths resolved");
    cr_assert_str_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(logs, 1), 1)->valuestring, "configs/../datasets/b2.mat");
    cJSON *stages = cJSON_GetObjectItemCaseSensitive(root, "stages");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(stages, 0), "id")->valuestring, "lp");
    cJSON *fd_params = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(stages, 1), "params");
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(fd_params, "order")->valuedouble, 1.0, "default filled in");
    cJSON *probe_p = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(stages, 2), "params");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(probe_p, "mode")->valuestring, "fast");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(probe_p, "weights")), 2);
    cJSON *q_sig = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "signals"), "q");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(q_sig, "interp")->valuestring, "linear");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(q_sig, "nonfinite")->valuestring, "error");
    cJSON_Delete(root);
    rb_free(j1);
    rb_free(j2);
    rb_pipeline_free(p);
    rb_pipeline_free(q);
}

/* An output port left out of "out" is no signal: it is absent from the signal table (out NULL, out_signal
 * SIZE_MAX) and from the resolved JSON, which loads back to the same text. */
Test(pipeline_config, unwired_output_ports_are_no_signals)
{
    const char *text = HEAD "  \"stages\": [\n"
                            "    {\"id\": \"kf\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"},\n"
                            "     \"out\": {\"var\": \"q_var\", \"x_dot\": \"qd\"}},\n"
                            "    {\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"qd\"},\n"
                            "     \"out\": {\"y\": \"qd_lp\"}, \"params\": {\"cutoff_hz\": 2}}\n"
                            "  ],\n"
                            "  \"outputs\": [{\"path\": \"v.csv\", \"signals\": [\"qd_lp\", \"q_var\"]}]\n}\n";
    rb_pipeline *p, *q;
    rb_err err;
    cr_assert_eq(load(text, &p, &err), RB_OK, "%s", err.msg);
    const rb_config_stage *kf = &p->stages[0];
    cr_assert_str_eq(kf->id, "kf");
    cr_assert_eq(p->n_signal_table, 4, "q, qd, q_var, qd_lp");
    const char *wired[6] = {NULL, "qd", NULL, NULL, NULL, "q_var"};
    for (size_t j = 0; j < 6; j++) {
        if (!wired[j]) {
            cr_assert(kf->out[j] == NULL && kf->out_signal[j] == SIZE_MAX, "port %zu", j);
            continue;
        }
        cr_assert_str_eq(kf->out[j], wired[j]);
        const rb_signal_info *si = &p->signal_table[kf->out_signal[j]];
        cr_assert(si->from_stage && si->index == 0 && si->port == j && strcmp(si->name, wired[j]) == 0);
    }
    cr_assert(p->signal_table[rb_pipeline_signal_index(p, "q_var")].recorded);
    cr_assert_eq(rb_pipeline_signal_index(p, "innovation"), -1);

    char *j1 = rb_pipeline_resolved_json(p);
    cr_assert_not_null(j1);
    cJSON *root = cJSON_Parse(j1);
    cJSON *stage0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "stages"), 0);
    cJSON *out = cJSON_GetObjectItemCaseSensitive(stage0, "out");
    cr_assert_eq(cJSON_GetArraySize(out), 2, "only the wired ports:\n%s", j1);
    cr_assert_str_eq(out->child->string, "x_dot", "in the type's port order");
    cr_assert_str_eq(out->child->next->string, "var");
    cJSON_Delete(root);
    cr_assert_eq(load(j1, &q, &err), RB_OK, "%s\n%s", err.msg, j1);
    char *j2 = rb_pipeline_resolved_json(q);
    cr_assert_str_eq(j1, j2);
    rb_free(j1);
    rb_free(j2);
    rb_pipeline_free(p);
    rb_pipeline_free(q);
}

/* Every stage runs after the producers of its inputs. */
static void assert_topological(const rb_pipeline *p)
{
    for (size_t s = 0; s < p->n_stages; s++)
        for (size_t j = 0; j < p->stages[s].type->n_inputs; j++) {
            const rb_signal_info *in = &p->signal_table[p->stages[s].in_signal[j]];
            cr_assert(!in->from_stage || in->index < s, "stage %s runs before its producer", p->stages[s].id);
        }
}

Test(pipeline_config, stages_run_in_dependency_order_stable_in_file_order)
{
    const char *text = HEAD
        "  \"stages\": [\n"
        "    {\"id\": \"c\", \"type\": \"finite_difference\", \"in\": {\"x\": \"yb\"}, \"out\": {\"dx\": \"yc\"}},\n"
        "    {\"id\": \"a\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, \"out\": {\"dx\": \"ya\"}},\n"
        "    {\"id\": \"b\", \"type\": \"finite_difference\", \"in\": {\"x\": \"ya\"}, \"out\": {\"dx\": \"yb\"}},\n"
        "    {\"id\": \"d\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, \"out\": {\"dx\": \"yd\"}},\n"
        "    {\"id\": \"e\", \"type\": \"probe\", \"in\": {\"a\": \"yd\", \"b\": \"ya\"}, \"out\": {\"out\": \"ye\"}, "
        "\"params\": {\"gain\": 1}}\n"
        "  ]\n}\n";
    rb_pipeline *p;
    rb_err err;
    cr_assert_eq(load(text, &p, &err), RB_OK, "%s", err.msg);
    const char *expected[] = {"a", "b", "c", "d", "e"};
    const size_t file_index[] = {1, 2, 0, 3, 4};
    for (size_t s = 0; s < 5; s++) {
        cr_assert_str_eq(p->stages[s].id, expected[s]);
        cr_assert_eq(p->stages[s].file_index, file_index[s]);
    }
    assert_topological(p);
    /* signal-table entries of stage outputs point at execution positions */
    const rb_signal_info *yc = &p->signal_table[rb_pipeline_signal_index(p, "yc")];
    cr_assert(yc->from_stage && yc->index == 2 && yc->port == 0);
    rb_pipeline_free(p);

    /* a chain written backwards runs forwards */
    char *chain = rb_asprintf("%s  \"stages\": [", HEAD);
    for (int i = 29; i >= 0; i--) {
        char input[16] = "q";
        if (i > 0)
            snprintf(input, sizeof input, "y%d", i - 1);
        char *more = rb_asprintf("%s%s{\"id\": \"s%d\", \"type\": \"finite_difference\", \"in\": {\"x\": \"%s\"}, "
                                 "\"out\": {\"dx\": \"y%d\"}}",
                                 chain, i == 29 ? "" : ",", i, input, i);
        rb_free(chain);
        chain = more;
    }
    char *text2 = rb_asprintf("%s]\n}\n", chain);
    cr_assert_eq(load(text2, &p, &err), RB_OK, "%s", err.msg);
    for (int s = 0; s < 30; s++) {
        char id[16];
        snprintf(id, sizeof id, "s%d", s);
        cr_assert_str_eq(p->stages[s].id, id);
    }
    assert_topological(p);
    rb_pipeline_free(p);
    rb_free(chain);
    rb_free(text2);
}

Test(pipeline_config, load_from_file)
{
    char dir[] = "/tmp/rb_pipe_cfg_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char *path = rb_asprintf("%s/my_pipe.json", dir);
    FILE *f = fopen(path, "w");
    fputs(HEAD "  \"logs\": [\"log.mat\"]\n}\n", f);
    fclose(f);
    rb_pipeline *p;
    rb_err err;
    cr_assert_eq(rb_pipeline_load(path, reg, &p, &err), RB_OK, "%s", err.msg);
    cr_assert_str_eq(p->name, "my_pipe");
    char *log = rb_asprintf("%s/log.mat", dir);
    cr_assert_str_eq(p->logs[0].paths[0], log, "relative to the config's folder");
    cr_assert_str_eq(p->config_path, path);
    rb_pipeline_free(p);
    unlink(path);
    cr_assert_eq(rb_pipeline_load(path, reg, &p, &err), RB_ENOTFOUND);
    cr_assert(strstr(err.msg, path), "%s", err.msg);
    cr_assert_null(p);
    rmdir(dir);
    rb_free(path);
    rb_free(log);
}

Test(pipeline_config, shipped_configs_load)
{
    const char *names[] = {"demo.json", "minimal.json"};
    for (size_t i = 0; i < 2; i++) {
        char *path = rb_asprintf("%s/configs/%s", RB_SOURCE, names[i]);
        rb_pipeline *p;
        rb_err err;
        cr_assert_eq(rb_pipeline_load(path, reg, &p, &err), RB_OK, "%s", err.msg);
        cr_assert(p->n_stages > 0 && p->n_outputs > 0);
        rb_pipeline_free(p);
        rb_free(path);
    }
}

Test(pipeline_config, truncated_text_always_fails_cleanly)
{
    size_t len = strlen(full_config);
    for (size_t n = 0; n < len - 2; n++) { /* the last bytes are "}\n": only those make it whole */
        rb_pipeline *p;
        rb_err err;
        int rc = rb_pipeline_load_text(full_config, n, "t.json", NULL, reg, &p, &err);
        cr_assert_eq(rc, RB_ECONFIG, "prefix %zu: %s", n, err.msg);
        cr_assert(strncmp(err.msg, "t.json:", 7) == 0, "%s", err.msg);
        const char *why;
        cr_assert_neq(rb_json_syntax_error(full_config, n, &why), SIZE_MAX, "prefix %zu", n);
    }
    const char *why;
    cr_assert_eq(rb_json_syntax_error(full_config, len, &why), SIZE_MAX);
}

Test(pipeline_config, locator_and_key_paths)
{
    const char *text = "{\"a\\u0062\": {\"x\": [10, {\"k\": 1}, [2, 3]]},\n \"ab\": {\"x\": [0,\n  {\"k\": 2}]}}";
    rb_json_step path[] = {{"ab", 0}, {"x", 0}, {NULL, 1}, {"k", 0}};
    size_t line, col;
    cr_assert_eq(rb_json_locate(text, strlen(text), path, 4, &line, &col), 4);
    cr_assert_eq(line, 1, "the escaped key a\\u0062 is 'ab' too: occurrence 0 is the first");
    cr_assert_eq(col, 25);
    rb_json_step second[] = {{"ab", 1}, {"x", 0}, {NULL, 1}, {"k", 0}};
    cr_assert_eq(rb_json_locate(text, strlen(text), second, 4, &line, &col), 4);
    cr_assert_eq(line, 3);
    cr_assert_eq(col, 4);
    rb_json_step missing[] = {{"ab", 1}, {"y", 0}};
    cr_assert_eq(rb_json_locate(text, strlen(text), missing, 2, &line, &col), 1, "deepest found: the key ab");
    cr_assert_eq(line, 2);
    cr_assert_eq(col, 2);
    char buf[64];
    rb_json_step p2[] = {{"signals", 0}, {"a/b", 0}, {"elements", 0}, {NULL, 3}};
    rb_json_path_format(p2, 4, buf, sizeof buf);
    cr_assert_str_eq(buf, "signals[\"a/b\"].elements[3]");
    rb_json_path_format(p2, 4, buf, 12);
    cr_assert_eq(strlen(buf), 11, "truncated to the buffer");
}

Test(pipeline_config, edit_distance_and_suggestions)
{
    cr_assert_eq(rb_edit_distance("cutof_hz", "cutoff_hz"), 1);
    cr_assert_eq(rb_edit_distance("nmae", "name"), 1, "a swap of neighbours costs one");
    cr_assert_eq(rb_edit_distance("", "abc"), 3);
    cr_assert_eq(rb_edit_distance("kitten", "sitting"), 3);
    rb_suggest s;
    rb_suggest_init(&s, "stagse");
    const char *keys[] = {"name", "stages", "signals"};
    for (size_t i = 0; i < 3; i++)
        rb_suggest_consider(&s, keys[i]);
    cr_assert_str_eq(rb_suggest_best(&s), "stages");
    rb_suggest_init(&s, "colour");
    for (size_t i = 0; i < 3; i++)
        rb_suggest_consider(&s, keys[i]);
    cr_assert_null(rb_suggest_best(&s));
}

Test(pipeline_config, registry_lists_in_name_order_and_rejects_bad_types)
{
    /* every built-in stage plus the probe, in name order (robust to new built-ins) */
    size_t count = rb_registry_count(reg);
    cr_assert_geq(count, 4);
    for (size_t i = 1; i < count; i++)
        cr_assert(strcmp(rb_registry_at(reg, i - 1)->name, rb_registry_at(reg, i)->name) < 0, "name order at %zu", i);
    cr_assert_str_eq(rb_registry_at(reg, 0)->name, "attitude"); /* the first name in alphabetical order */
    cr_assert_not_null(rb_registry_find(reg, "probe"));
    cr_assert_not_null(rb_registry_find(reg, "kf_derivative"));
    cr_assert_null(rb_registry_at(reg, count));
    cr_assert_eq(rb_registry_find(reg, "lowpass"), &rb_stage_lowpass);
    cr_assert_null(rb_registry_find(reg, "nope"));
    rb_err err;
    cr_assert_eq(rb_estimators_register(reg, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "registered twice"), "%s", err.msg);

    static const rb_param_spec bad_default[] = {
        {.name = "k", .kind = RB_PARAM_NUMBER, .def_number = -1, .has_min = true}};
    rb_stage_type bad = probe_type;
    bad.name = "bad";
    bad.params = bad_default;
    bad.n_params = 1;
    cr_assert_eq(rb_registry_add(reg, &bad, &err), RB_EINVAL);
    cr_assert_str_eq(err.msg, "stage type bad: parameter k: default outside its bounds");
    static const char *const dup_ports[] = {"x", "x"};
    bad = probe_type;
    bad.name = "bad";
    bad.inputs = dup_ports;
    cr_assert_eq(rb_registry_add(reg, &bad, &err), RB_EINVAL);
    bad = probe_type;
    bad.name = "bad";
    bad.step = NULL;
    cr_assert_eq(rb_registry_add(reg, &bad, &err), RB_EINVAL);
    cr_assert_eq(rb_registry_count(reg), count);
    cr_assert_str_eq(rb_param_kind_name(RB_PARAM_STRING_ARRAY), "string array");
}
