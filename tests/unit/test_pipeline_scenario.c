/* Scenario loader: a good scenario fills rb_sim_scenario and the sensors; errors name file:line:col and the
 * key path, with suggestions for near misses. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/pipeline.h"

#define ARM_POLE RB_SOURCE "/configs/scenarios/arm_pole.json"
#define BASE RB_SOURCE "/configs/scenarios/test.json"

/* Load text (model path relative to configs/scenarios/); returns the status, message in err. */
static int load(const char *text, rb_scenario **s, rb_err *err)
{
    return rb_scenario_load_text(text, strlen(text), "t.json", BASE, s, err);
}

static void expect_error(const char *text, const char *message)
{
    rb_scenario *s = (rb_scenario *)1;
    rb_err err;
    int rc = load(text, &s, &err);
    cr_assert_eq(rc, RB_ECONFIG, "rc %d: %s", rc, rc ? err.msg : "");
    cr_assert_null(s);
    cr_assert(strstr(err.msg, message), "got '%s', expected '%s'", err.msg, message);
    cr_assert_null(strchr(err.msg, '\n'));
}

#define MODEL "\"model\": {\"urdf\": \"../../datasets/arm_2ft.urdf\"}"

Test(pipeline_scenario, arm_pole_loads)
{
    rb_scenario *s = NULL;
    rb_err err;
    int rc = rb_scenario_load(ARM_POLE, &s, &err);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    cr_assert_str_eq(s->name, "arm_pole");
    cr_assert_eq(strlen(s->sha256), 64);
    cr_assert_eq(s->model->n_dofs, 4);
    cr_assert_eq(s->sim.model, s->model);
    cr_assert_eq(s->sim.dt, 0.001);
    cr_assert_eq(s->sim.duration, 2.0);
    cr_assert_eq(s->sim.method, RB_SIM_EULER);
    cr_assert_eq(s->sim.seed, 7);
    cr_assert_eq(s->log_rate, 1000);
    cr_assert_eq(s->sim.ctrl, RB_CTRL_TORQUE);
    cr_assert_eq(s->sim.q0[1], 0.2);
    cr_assert_eq(s->sim.q0[2], 0.4);
    cr_assert_eq(s->sim.refs[2].kind, RB_REF_SINE);
    cr_assert_eq(s->sim.refs[2].phase, 1.0);
    cr_assert_eq(s->sim.refs[2].freq, 0.7);
    cr_assert_eq(s->sim.refs[3].offset, 0.0); /* default offset: q0 */
    cr_assert_eq(s->sim.gains[3].kp, 30);
    cr_assert_eq(s->sim.gains[0].ki_tau, 10);
    cr_assert_eq(s->sim.actuators[0].R, -100);
    cr_assert_eq(s->sim.actuators[3].i_max, 5);
    cr_assert_eq(s->sim.friction[0].kind, RB_FRICTION_SCV);
    cr_assert_eq(s->sim.friction[1].kind, RB_FRICTION_SCV);
    cr_assert_eq(s->sim.friction[1].scv.F_c, 0.306);
    cr_assert_eq(s->sim.friction[1].drift.s1, 1.2);
    cr_assert_eq(s->sim.friction[2].kind, RB_FRICTION_CV);
    cr_assert_eq(s->n_sensors, 7);
    cr_assert_str_eq(s->sensors[0].channel, "joints_state/positions");
    cr_assert_str_eq(s->sensors[3].channel, "FTs/upper_arm_ft_sensor");
    cr_assert_eq(s->sensors[3].source, RB_SCN_FT);
    cr_assert_eq(s->sensors[3].params.offset.each[2], 2.0);
    cr_assert_eq(s->sensors[4].params.noise_std.each[5], 0.02);
    cr_assert_str_eq(s->sensors[5].channel, "accelerometers/hand_imu");
    cr_assert_str_eq(s->sensors[6].channel, "gyros/hand_imu");
    cr_assert_eq(s->sim.n_frames, 2);
    rb_scenario_free(s);
}

Test(pipeline_scenario, defaults_and_text)
{
    rb_scenario *s = NULL;
    rb_err err;
    int rc = load("{" MODEL ", \"duration\": 0.5, \"method\": \"rk4\",\n"
                  " \"references\": {\"elbow\": {\"kind\": \"spline\", \"times\": [0, 1, 2], \"values\": [0, 1, 0]}},\n"
                  " \"controller\": {\"kind\": \"pd\", \"gravity_comp\": true},\n"
                  " \"pushes\": [{\"frame\": \"hand\", \"shape\": \"half_sine\", \"start\": 0.1, \"duration\": 0.05,"
                  " \"wrench\": [1, 2, 3, 0, 0, 0]}]}",
                  &s, &err);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    cr_assert_str_eq(s->name, "t");
    cr_assert_eq(s->sim.dt, 0.001);
    cr_assert_eq(s->log_rate, 1000);
    cr_assert_eq(s->sim.method, RB_SIM_RK4);
    cr_assert_eq(s->sim.refs[2].n_points, 3);
    cr_assert_eq(s->sim.refs[2].values[1], 1.0);
    cr_assert(s->sim.gravity_comp);
    cr_assert_eq(s->sim.actuators[0].k_t, 1.0);
    cr_assert_eq(s->sim.n_pushes, 1);
    cr_assert_eq(s->sim.pushes[0].shape, RB_PUSH_HALF_SINE);
    cr_assert_eq(s->sim.pushes[0].peak[2], 3.0);
    cr_assert_eq(s->n_sensors, 0);
    rb_scenario_free(s);
}

Test(pipeline_scenario, unknown_top_key_suggested)
{
    expect_error("{" MODEL ",\n \"duraton\": 1}", "t.json:2:2: unknown key 'duraton' (did you mean 'duration'?)");
}

Test(pipeline_scenario, missing_duration)
{
    expect_error("{" MODEL "}", "t.json:1:1: missing key 'duration'");
}

Test(pipeline_scenario, unknown_joint_suggested)
{
    expect_error("{" MODEL ", \"duration\": 1,\n \"actuators\": {\"elbw\": {\"R\": 2}}}",
                 "t.json:2:16: actuators.elbw: unknown joint 'elbw' (did you mean 'elbow'?)");
}

Test(pipeline_scenario, bad_value_has_path)
{
    expect_error("{" MODEL ", \"duration\": 1,\n \"actuators\": {\"elbow\": {\"R\": 0}}}",
                 "t.json:2:26: actuators.elbow.R: must be non-zero");
    expect_error("{" MODEL ", \"duration\": 1, \"dt\": -1}", "dt: must be > 0");
    expect_error("{" MODEL ", \"duration\": 1, \"method\": \"rk5\"}", "method: unknown value 'rk5' (did you mean 'rk4'?)");
}

Test(pipeline_scenario, unknown_actuator_key)
{
    expect_error("{" MODEL ", \"duration\": 1, \"actuators\": {\"elbow\": {\"Jm\": 1}}}",
                 "actuators.elbow: unknown key 'Jm' (did you mean 'J_m'?)");
}

Test(pipeline_scenario, sensor_errors)
{
    expect_error("{" MODEL ", \"duration\": 1,\n \"sensors\": [{\"kind\": \"ft\", \"ft\": \"wrist_ft_sensr\"}]}",
                 "t.json:2:29: sensors[0].ft: unknown FT sensor 'wrist_ft_sensr' (did you mean 'wrist_ft_sensor'?)");
    expect_error("{" MODEL ", \"duration\": 1, \"sensors\": [{\"kind\": \"gyroscop\", \"frame\": \"hand\"}]}",
                 "sensors[0].kind: unknown value 'gyroscop' (did you mean 'gyroscope'?)");
    expect_error("{" MODEL ", \"duration\": 1, \"sensors\": [{\"kind\": \"joint_encoder\", \"noise\": -1}]}",
                 "sensors[0]: sensor joints_state/positions: noise_std");
    expect_error("{" MODEL ", \"duration\": 1, \"sensors\": [{\"kind\": \"accelerometer\", \"frame\": \"hand\"},"
                 " {\"kind\": \"accelerometer\", \"frame\": \"hand\"}]}",
                 "sensors[1]: channel 'accelerometers/hand' is already given by sensors[0]");
}

Test(pipeline_scenario, friction_errors)
{
    expect_error("{" MODEL ", \"duration\": 1, \"friction\": {\"elbow\": {\"preset\": \"nope\"}}}",
                 "friction.elbow.preset: ");
    expect_error("{" MODEL ", \"duration\": 1, \"friction\": {\"elbow\": {\"model\": \"scv\", \"params\": [1]}}}",
                 "friction.elbow.model: friction scv: 1 parameters given");
}

Test(pipeline_scenario, unsupported_key_is_an_error)
{
    expect_error("{" MODEL ", \"duration\": 1, \"payload\": {}}", "unknown key 'payload'");
}

Test(pipeline_scenario, references_need_a_controller)
{
    expect_error("{" MODEL ", \"duration\": 1, \"references\": {\"elbow\": {\"kind\": \"sine\"}}}",
                 "references: references need a controller");
}

Test(pipeline_scenario, malformed_json)
{
    expect_error("{\n \"duration\": 1,,\n}", "t.json:2:16: malformed JSON");
}

Test(pipeline_scenario, missing_model_file)
{
    expect_error("{\"model\": {\"urdf\": \"nowhere.urdf\"}, \"duration\": 1}", "t.json:1:2: model: ");
}
