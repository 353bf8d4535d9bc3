/* Scenario loader: a good scenario fills rb_sim_scenario and the sensors; errors name file:line:col and the
 * key path, with suggestions for near misses. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/dynamics.h"
#include "roboest/sim.h"
#include "support.h"

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

Test(sim_scenario, arm_pole_loads)
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

Test(sim_scenario, defaults_and_text)
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

Test(sim_scenario, unknown_top_key_suggested)
{
    expect_error("{" MODEL ",\n \"duraton\": 1}", "t.json:2:2: unknown key 'duraton' (did you mean 'duration'?)");
}

Test(sim_scenario, missing_duration) { expect_error("{" MODEL "}", "t.json:1:1: missing key 'duration'"); }

Test(sim_scenario, unknown_joint_suggested)
{
    expect_error("{" MODEL ", \"duration\": 1,\n \"actuators\": {\"elbw\": {\"R\": 2}}}",
                 "t.json:2:16: actuators.elbw: unknown joint 'elbw' (did you mean 'elbow'?)");
}

Test(sim_scenario, bad_value_has_path)
{
    expect_error("{" MODEL ", \"duration\": 1,\n \"actuators\": {\"elbow\": {\"R\": 0}}}",
                 "t.json:2:26: actuators.elbow.R: must be non-zero");
    expect_error("{" MODEL ", \"duration\": 1, \"dt\": -1}", "dt: must be > 0");
    expect_error("{" MODEL ", \"duration\": 1, \"method\": \"rk5\"}",
                 "method: unknown value 'rk5' (did you mean 'rk4'?)");
}

Test(sim_scenario, unknown_actuator_key)
{
    expect_error("{" MODEL ", \"duration\": 1, \"actuators\": {\"elbow\": {\"Jm\": 1}}}",
                 "actuators.elbow: unknown key 'Jm' (did you mean 'J_m'?)");
}

Test(sim_scenario, sensor_errors)
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

Test(sim_scenario, friction_errors)
{
    expect_error("{" MODEL ", \"duration\": 1, \"friction\": {\"elbow\": {\"preset\": \"nope\"}}}",
                 "friction.elbow.preset: ");
    expect_error("{" MODEL ", \"duration\": 1, \"friction\": {\"elbow\": {\"model\": \"scv\", \"params\": [1]}}}",
                 "friction.elbow.model: friction scv: 1 parameters given");
}

Test(sim_scenario, unsupported_key_is_an_error)
{
    /* per-element subsets of joint-level sensors are not supported */
    expect_error("{" MODEL ", \"duration\": 1, \"sensors\": [{\"kind\": \"joint_encoder\", \"joints\": [\"elbow\"]}]}",
                 "sensors[0]: unknown key 'joints'");
}

Test(sim_scenario, references_need_a_controller)
{
    expect_error("{" MODEL ", \"duration\": 1, \"references\": {\"elbow\": {\"kind\": \"sine\"}}}",
                 "references: references need a controller");
}

Test(sim_scenario, malformed_json) { expect_error("{\n \"duration\": 1,,\n}", "t.json:2:16: malformed JSON"); }

Test(sim_scenario, missing_model_file)
{
    expect_error("{\"model\": {\"urdf\": \"nowhere.urdf\"}, \"duration\": 1}", "t.json:1:2: model: ");
}

/* ---- contact events ---------------------------------------------------------------------------------------- */
#define CONTACTS "\"contacts\": [{\"frame\": \"hand\", \"dim\": 3, \"active\": false}, {\"frame\": \"forearm\"}]"

Test(sim_scenario, events_by_index_and_frame)
{
    rb_scenario *s = NULL;
    rb_err err;
    int rc = load("{" MODEL ", \"duration\": 1, " CONTACTS ",\n \"events\": [{\"t\": 0.5, \"contact\": \"hand\","
                  " \"active\": true}, {\"t\": 0.25, \"contact\": 1, \"active\": false}]}",
                  &s, &err);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    cr_assert_eq(s->sim.n_contacts, 2);
    cr_assert_not(s->sim.contacts[0].initially_active);
    cr_assert_eq(s->sim.n_events, 2);
    cr_assert_eq(s->sim.events, s->events);
    cr_assert_eq(s->sim.events[0].t, 0.5);
    cr_assert_eq(s->sim.events[0].contact, 0);
    cr_assert(s->sim.events[0].active);
    cr_assert_eq(s->sim.events[1].t, 0.25);
    cr_assert_eq(s->sim.events[1].contact, 1);
    cr_assert_not(s->sim.events[1].active);
    rb_scenario_free(s);
}

Test(sim_scenario, event_errors)
{
    expect_error("{" MODEL ", \"duration\": 1, " CONTACTS
                 ",\n \"events\": [{\"t\": 0.5, \"contact\": \"hnd\", \"active\": true}]}",
                 "t.json:2:24: events[0].contact: unknown contact frame 'hnd' (did you mean 'hand'?)");
    expect_error("{" MODEL ", \"duration\": 1, " CONTACTS
                 ", \"events\": [{\"t\": 0.5, \"contact\": 2, \"active\": true}]}",
                 "events[0].contact: expected a contact index in [0, 1] or a contact's frame name");
    expect_error("{" MODEL ", \"duration\": 1, " CONTACTS
                 ", \"events\": [{\"t\": 0.5, \"contact\": 0.5, \"active\": true}]}",
                 "events[0].contact: expected a contact index in [0, 1]");
    expect_error("{" MODEL ", \"duration\": 1, " CONTACTS
                 ", \"events\": [{\"t\": 1, \"contact\": true, \"active\": true}]}",
                 "events[0].contact: expected a contact index or a contact's frame name");
    expect_error("{" MODEL ", \"duration\": 1, " CONTACTS
                 ", \"events\": [{\"t\": -1, \"contact\": 0, \"active\": true}]}",
                 "events[0].t: must be >= 0");
    expect_error("{" MODEL ", \"duration\": 1, " CONTACTS ", \"events\": [{\"t\": 1, \"contact\": 0}]}",
                 "events[0]: missing key 'active'");
    expect_error("{" MODEL ", \"duration\": 1, " CONTACTS ", \"events\": [{\"t\": 1, \"contact\": 0, \"active\": 1}]}",
                 "events[0].active: expected true or false");
    expect_error("{" MODEL ", \"duration\": 1, " CONTACTS ", \"events\": [{\"t\": 1, \"contact\": 0, \"on\": true}]}",
                 "events[0]: unknown key 'on'");
    expect_error("{" MODEL ", \"duration\": 1, \"events\": [{\"t\": 1, \"contact\": 0, \"active\": true}]}",
                 "events[0].contact: the scenario has no contacts to switch (add them under 'contacts')");
    expect_error("{" MODEL ", \"duration\": 1, " CONTACTS ", \"events\": {}}",
                 "events: expected an array of contact events");
    expect_error("{" MODEL ", \"duration\": 1, \"contacts\": [{\"frame\": \"hand\"}, {\"frame\": \"hand\"}]}",
                 "contacts[1].frame: frame 'hand' already has contacts[0]");
}

/* ---- payload ------------------------------------------------------------------------------------------------- */
static rb_scenario *load_ok(const char *text)
{
    rb_scenario *s = NULL;
    rb_err err;
    int rc = load(text, &s, &err);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    return s;
}

Test(sim_scenario, payload_pi_b)
{
    rb_scenario *s = load_ok("{" MODEL ", \"duration\": 1, \"payload\": {\"link\": \"hand\", \"kind\": \"square\","
                             " \"t0\": 0.2, \"period\": 0.4, \"pi_b\": [1, 0.1, 0, 0, 0.01, 0, 0, 0.02, 0, 0.02]}}");
    const rb_sim_payload *p = &s->sim.payloads[0];
    cr_assert_eq(p->kind, RB_PAYLOAD_SQUARE);
    cr_assert_eq(p->body, rb_model_body_index(s->model, "hand"));
    cr_assert_eq(p->t0, 0.2);
    cr_assert_eq(p->period, 0.4);
    for (int i = 0; i < 10; i++) /* pi_a: the model's parameters */
        cr_assert_eq(p->pi_a[i], s->model->bodies[p->body].inertia[i], "pi_a[%d]", i);
    cr_assert_eq(p->pi_b[0], 1.0);
    cr_assert_eq(p->pi_b[1], 0.1);
    cr_assert_eq(p->pi_b[9], 0.02);
    rb_scenario_free(s);

    s = load_ok("{" MODEL ", \"duration\": 1, \"payload\": {\"link\": \"forearm\", \"kind\": \"steps\", \"t0\": 1,"
                " \"pi_a\": [2, 0, 0, 0, 0.1, 0, 0, 0.1, 0, 0.1], \"pi_b\": [3, 0, 0, 0, 0.1, 0, 0, 0.1, 0, 0.1]}}");
    cr_assert_eq(s->sim.payloads[0].kind, RB_PAYLOAD_STEPS);
    cr_assert_eq(s->sim.payloads[0].pi_a[0], 2.0);
    cr_assert_eq(s->sim.payloads[0].pi_b[0], 3.0);
    rb_scenario_free(s);
}

Test(sim_scenario, payload_added_mass_parallel_axes)
{
    /* 2 kg at c = (0.1, -0.2, 0.05) with I_c = [0.01 0.001 0; 0.001 0.02 0; 0 0 0.015] about its centre.
     * By hand: h = m c = (0.2, -0.4, 0.1); |c|^2 = 0.0525;
     *   Ixx = 0.01 + 2 (0.0525 - 0.01) = 0.095     Ixy = 0.001 - 2 (0.1)(-0.2) = 0.041
     *   Ixz = 0 - 2 (0.1)(0.05) = -0.01            Iyy = 0.02 + 2 (0.0525 - 0.04) = 0.045
     *   Iyz = 0 - 2 (-0.2)(0.05) = 0.02            Izz = 0.015 + 2 (0.0525 - 0.0025) = 0.115 */
    rb_scenario *s = load_ok("{" MODEL ", \"duration\": 1, \"payload\": {\"link\": \"hand\", \"kind\": \"sine\","
                             " \"period\": 2, \"added\": {\"mass\": 2, \"com\": [0.1, -0.2, 0.05],"
                             " \"inertia\": [0.01, 0.001, 0, 0.02, 0, 0.015]}}}");
    const rb_sim_payload *p = &s->sim.payloads[0];
    const double *nominal = s->model->bodies[p->body].inertia;
    const double added[10] = {2, 0.2, -0.4, 0.1, 0.095, 0.041, -0.01, 0.045, 0.02, 0.115};
    cr_assert_eq(p->kind, RB_PAYLOAD_SINE);
    cr_assert_eq(p->t0, 0.0);
    for (int i = 0; i < 10; i++) {
        cr_assert_eq(p->pi_a[i], nominal[i]);
        cr_assert_float_eq(p->pi_b[i] - p->pi_a[i], added[i], 1e-15, "pi_b[%d]", i);
    }
    /* a second way: the added mass's parameters about its centre carried to the body frame by spatial.h */
    rb_xform X = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0.1, -0.2, 0.05}};
    double about_c[10] = {2, 0, 0, 0, 0.01, 0.001, 0, 0.02, 0, 0.015}, moved[10];
    rb_inertia_to_parent(&X, about_c, moved);
    for (int i = 0; i < 10; i++)
        cr_assert_float_eq(p->pi_b[i] - p->pi_a[i], moved[i], 1e-15, "pi_b[%d] vs rb_inertia_to_parent", i);
    rb_scenario_free(s);

    /* a point mass by default */
    s = load_ok("{" MODEL ", \"duration\": 1, \"payload\": {\"link\": \"hand\", \"kind\": \"steps\","
                " \"added\": {\"mass\": 0.5, \"com\": [0, 0, 0.1]}}}");
    p = &s->sim.payloads[0];
    cr_assert_float_eq(p->pi_b[3] - p->pi_a[3], 0.05, 1e-15);
    cr_assert_float_eq(p->pi_b[4] - p->pi_a[4], 0.005, 1e-15);
    cr_assert_float_eq(p->pi_b[7] - p->pi_a[7], 0.005, 1e-15);
    cr_assert_float_eq(p->pi_b[9] - p->pi_a[9], 0.0, 1e-15);
    rb_scenario_free(s);
}

#define PAYLOAD(body) "{" MODEL ", \"duration\": 1,\n \"payload\": {\"link\": \"" body "\", "

Test(sim_scenario, payload_errors)
{
    expect_error(PAYLOAD("hnd") "\"kind\": \"steps\", \"added\": {\"mass\": 1}}}",
                 "t.json:2:14: payload.link: unknown body 'hnd' (did you mean 'hand'?)");
    expect_error(PAYLOAD("tool_frame") "\"kind\": \"steps\", \"added\": {\"mass\": 1}}}",
                 "payload.link: link 'tool_frame' is merged into body 'hand' (fixed joint): name the body");
    expect_error("{" MODEL ", \"duration\": 1, \"payload\": {\"kind\": \"steps\"}}", "payload: missing key 'link'");
    expect_error("{" MODEL ", \"duration\": 1, \"payload\": {\"link\": 3, \"kind\": \"steps\"}}",
                 "payload.link: expected a body (link) name");
    expect_error(PAYLOAD("hand") "\"added\": {\"mass\": 1}}}", "payload: missing key 'kind'");
    expect_error(PAYLOAD("hand") "\"kind\": \"step\", \"added\": {\"mass\": 1}}}",
                 "payload.kind: unknown value 'step' (did you mean 'steps'?)");
    expect_error(PAYLOAD("hand") "\"kind\": \"square\", \"added\": {\"mass\": 1}}}",
                 "payload: missing key 'period' (kind \"square\" repeats)");
    expect_error(PAYLOAD("hand") "\"kind\": \"steps\", \"period\": 1, \"added\": {\"mass\": 1}}}",
                 "payload.period: only for kind \"square\" or \"sine\"");
    expect_error(PAYLOAD("hand") "\"kind\": \"sine\", \"period\": 0, \"added\": {\"mass\": 1}}}",
                 "payload.period: must be > 0");
    expect_error(PAYLOAD("hand") "\"kind\": \"steps\", \"t0\": -1, \"added\": {\"mass\": 1}}}",
                 "payload.t0: must be >= 0");
    expect_error(PAYLOAD("hand") "\"kind\": \"steps\"}}",
                 "payload: expected either 'pi_b' (10 parameters) or 'added' (a rigid mass on the body)");
    expect_error(
        PAYLOAD("hand") "\"kind\": \"steps\", \"added\": {\"mass\": 1}, \"pi_b\": [1, 0, 0, 0, 1, 0, 0, 1, 0, 1]}}",
        "payload: expected either 'pi_b' (10 parameters) or 'added'");
    expect_error(PAYLOAD("hand") "\"kind\": \"steps\", \"pi_b\": [1, 0, 0]}}",
                 "payload.pi_b: expected an array of 10 numbers");
    expect_error(PAYLOAD("hand") "\"kind\": \"steps\", \"pi_b\": [-1, 0, 0, 0, 1, 0, 0, 1, 0, 1]}}",
                 "payload.pi_b: not physically valid (mass -1;");
    expect_error(
        PAYLOAD("hand") "\"kind\": \"steps\", \"pi_a\": [1, 0, 0, 0, 1, 0, 0, 1, 0, 3], \"added\": {\"mass\": 1}}}",
        "payload.pi_a: not physically valid");
    expect_error(PAYLOAD("hand") "\"kind\": \"steps\", \"added\": {\"mass\": 0}}}", "payload.added.mass: must be > 0");
    expect_error(PAYLOAD("hand") "\"kind\": \"steps\", \"added\": {\"com\": [0, 0, 0]}}}",
                 "payload.added: missing key 'mass'");
    expect_error(PAYLOAD("hand") "\"kind\": \"steps\", \"added\": {\"mass\": 1, \"inertia\": [1, 0, 0, 1, 0, 3]}}}",
                 "payload.added.inertia: not physically valid (mass 1;");
    expect_error(PAYLOAD("hand") "\"kind\": \"steps\", \"added\": {\"mass\": 1, \"com\": [0, 0]}}}",
                 "payload.added.com: expected an array of 3 numbers");
    expect_error(PAYLOAD("hand") "\"kind\": \"steps\", \"added\": {\"mass\": 1, \"Ic\": [0, 0, 0, 0, 0, 0]}}}",
                 "payload.added: unknown key 'Ic'");
}

/* ---- balancing and the floating base ---------------------------------------------------------------------------- */
#define HUMANOID "\"model\": {\"urdf\": \"../../datasets/humanoid_lower_body.urdf\", \"floating\": true}"
#define SOLES "\"contacts\": [{\"frame\": \"l_sole\"}, {\"frame\": \"r_sole\"}]"
#define PD "\"controller\": {\"kind\": \"pd\", \"gravity_comp\": true}"

Test(sim_scenario, balance_and_base_pose)
{
    rb_scenario *s =
        load_ok("{" HUMANOID ", \"duration\": 1, " SOLES ", " PD ",\n \"balance\": {\"amplitude\": 0.02,"
                " \"freq\": 0.25}, \"base_pose\": {\"position\": [0.1, -0.2, 0.85], \"rpy\": [0, 0, 0.5]}}");
    cr_assert(s->sim.balance.enabled);
    cr_assert_eq(s->sim.balance.amplitude, 0.02);
    cr_assert_eq(s->sim.balance.freq, 0.25);
    cr_assert_eq(s->sim.balance.ik_T, 0.02);
    cr_assert_eq(s->sim.q0[0], 0.1);
    cr_assert_eq(s->sim.q0[1], -0.2);
    cr_assert_eq(s->sim.q0[2], 0.85);
    /* yaw 0.5 about z: the quaternion (cos 0.25, 0, 0, sin 0.25) */
    cr_assert_float_eq(s->sim.q0[3], cos(0.25), 1e-15);
    cr_assert_float_eq(s->sim.q0[4], 0.0, 1e-15);
    cr_assert_float_eq(s->sim.q0[5], 0.0, 1e-15);
    cr_assert_float_eq(s->sim.q0[6], sin(0.25), 1e-15);
    rb_scenario_free(s);

    s = load_ok("{" HUMANOID ", \"duration\": 1, " SOLES ", " PD ", \"balance\": {\"amplitude\": 0.03, \"freq\": 0.3,"
                " \"ik_T\": 0.05}}");
    cr_assert_eq(s->sim.balance.ik_T, 0.05);
    cr_assert_eq(s->sim.q0[3], 1.0); /* no base_pose: the neutral base */
    cr_assert_eq(s->sim.q0[2], 0.0);
    rb_scenario_free(s);
}

Test(sim_scenario, balance_errors)
{
    expect_error("{" MODEL
                 ", \"duration\": 1, \"contacts\": [{\"frame\": \"hand\"}], \"controller\": {\"kind\": \"pd\"},"
                 " \"balance\": {\"amplitude\": 0.02, \"freq\": 0.25}}",
                 "balance: needs a floating base (model.floating: true)");
    expect_error("{" HUMANOID ", \"duration\": 1, " PD ", \"balance\": {\"amplitude\": 0.02, \"freq\": 0.25}}",
                 "balance: needs contacts (the feet that stay planted, under 'contacts')");
    expect_error("{" HUMANOID ", \"duration\": 1, " SOLES ", \"balance\": {\"amplitude\": 0.02, \"freq\": 0.25}}",
                 "balance: needs a controller (controller.kind \"pd\" or \"torque\")");
    expect_error("{" HUMANOID ", \"duration\": 1, " SOLES ", " PD ", \"balance\": {\"freq\": 0.25}}",
                 "balance: missing key 'amplitude'");
    expect_error("{" HUMANOID ", \"duration\": 1, " SOLES ", " PD ", \"balance\": {\"amplitude\": 0.02}}",
                 "balance: missing key 'freq'");
    expect_error("{" HUMANOID ", \"duration\": 1, " SOLES ", " PD ", \"balance\": {\"amplitude\": -0.02, \"freq\": 1}}",
                 "balance.amplitude: must be >= 0");
    expect_error("{" HUMANOID ", \"duration\": 1, " SOLES ", " PD ", \"balance\": {\"amplitude\": 0.02, \"freq\": 1,"
                 " \"ik_T\": 0}}",
                 "balance.ik_T: must be > 0");
    expect_error("{" HUMANOID ", \"duration\": 1, " SOLES ", " PD ", \"balance\": {\"amplitude\": 0.02, \"frq\": 1}}",
                 "balance: unknown key 'frq' (did you mean 'freq'?)");
    expect_error("{" MODEL ", \"duration\": 1, \"base_pose\": {\"position\": [0, 0, 1]}}",
                 "base_pose: only for a floating base (model.floating: true)");
    expect_error("{" HUMANOID ", \"duration\": 1, \"base_pose\": {\"rpy\": [0, 0]}}",
                 "base_pose.rpy: expected an array of 3 numbers");
}

/* ---- orientation sensors ------------------------------------------------------------------------------------------ */
Test(sim_scenario, orientation_sensor)
{
    rb_scenario *s =
        load_ok("{" MODEL ", \"duration\": 1, \"sensors\": [{\"kind\": \"gyroscope\", \"frame\": \"hand_gyro\"},"
                " {\"kind\": \"orientation\", \"frame\": \"hand_gyro\", \"name\": \"hand_imu\","
                " \"noise\": 0.01}, {\"kind\": \"orientation\", \"frame\": \"tool_frame\"}]}");
    cr_assert_eq(s->n_sensors, 3);
    const rb_scenario_sensor *o = &s->sensors[1];
    cr_assert_str_eq(o->channel, "orientations/hand_imu");
    cr_assert_eq(o->source, RB_SCN_ORIENTATION);
    cr_assert_eq(o->params.kind, RB_SENS_ORIENTATION);
    cr_assert_eq(o->params.n, 3);
    cr_assert(o->params.wrap_angles);
    cr_assert_eq(o->params.noise_std.all, 0.01);
    cr_assert_eq(o->index, s->sensors[0].index, "the gyroscope's frame slot is shared");
    cr_assert_str_eq(s->sensors[2].channel, "orientations/tool_frame");
    cr_assert_eq(s->sim.n_frames, 2);
    cr_assert_eq(s->sim.frames[s->sensors[2].index], rb_model_frame_index(s->model, "tool_frame"));
    rb_scenario_free(s);

    expect_error("{" MODEL
                 ", \"duration\": 1, \"sensors\": [{\"kind\": \"orientation\", \"ft\": \"wrist_ft_sensor\"}]}",
                 "sensors[0].ft: not for an orientation sensor (use 'frame')");
    expect_error("{" MODEL ", \"duration\": 1, \"sensors\": [{\"kind\": \"orientation\", \"frame\": \"hnd\"}]}",
                 "sensors[0].frame: unknown frame 'hnd' (did you mean 'hand'?)");
    expect_error("{" MODEL ", \"duration\": 1, \"sensors\": [{\"kind\": \"orientaton\", \"frame\": \"hand\"}]}",
                 "sensors[0].kind: unknown value 'orientaton' (did you mean 'orientation'?)");
    expect_error("{" MODEL
                 ", \"duration\": 1, \"sensors\": [{\"kind\": \"accelerometer\", \"ft\": \"wrist_ft_sensor\"}]}",
                 "sensors[0].ft: not for an accelerometer sensor (use 'frame')");
}

/* ---- the example scenarios load ----------------------------------------------------------------------------------- */
Test(sim_scenario, example_scenarios_load)
{
    test_need_shared("models/ergoCubSN000.urdf");
    const char *files[] = {"humanoid_balance", "leg_pole", "leg_pole_ground", "ergocub_leg_pole"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/configs/scenarios/%s.json", RB_SOURCE, files[i]);
        rb_scenario *s = NULL;
        rb_err err;
        int rc = rb_scenario_load(path, &s, &err);
        cr_assert_eq(rc, RB_OK, "%s: %s", files[i], err.msg);
        cr_assert_str_eq(s->name, files[i]);
        cr_assert_eq(s->sim.duration, 10.0);
        rb_scenario_free(s);
    }
}

/* ---- gear compliance and joint limits --------------------------------------------------------------------------- */
Test(sim_scenario, gear_compliance_and_joint_limits)
{
    rb_scenario *s = load_ok("{" MODEL ", \"duration\": 1, \"joint_limits\": true,"
                             " \"actuators\": {\"elbow\": {\"R\": -100, \"k_gear\": 8000}}}");
    cr_assert(s->sim.joint_limits);
    cr_assert_eq(s->sim.actuators[2].k_gear, 8000.0);
    cr_assert_eq(s->sim.actuators[2].R, -100.0);
    cr_assert_eq(s->sim.actuators[1].k_gear, 0.0, "default: rigid");
    rb_scenario_free(s);
    s = load_ok("{" MODEL ", \"duration\": 1}");
    cr_assert_not(s->sim.joint_limits);
    rb_scenario_free(s);

    expect_error("{" MODEL ", \"duration\": 1, \"actuators\": {\"elbow\": {\"k_gear\": -1}}}",
                 "actuators.elbow.k_gear: must be >= 0");
    expect_error("{" MODEL ", \"duration\": 1, \"joint_limits\": 1}", "joint_limits: expected true or false");
    expect_error("{" MODEL ", \"duration\": 1, \"joint_limit\": true}",
                 "unknown key 'joint_limit' (did you mean 'joint_limits'?)");
}

/* controller.torque_feedback: "truth" (default) or "none"; external feedback and the friction compensation
 * need a program driving the loop; both keys only with the torque controller. */
Test(sim_scenario, torque_feedback_keys)
{
#define TORQUE(extra) "{" MODEL ", \"duration\": 1, \"controller\": {\"kind\": \"torque\"" extra "}}"
    rb_scenario *s = load_ok(TORQUE(""));
    cr_assert_eq(s->sim.torque_feedback, RB_TFB_TRUTH);
    cr_assert_not(s->sim.friction_compensation);
    rb_scenario_free(s);
    s = load_ok(TORQUE(", \"torque_feedback\": \"none\", \"friction_compensation\": false"));
    cr_assert_eq(s->sim.torque_feedback, RB_TFB_NONE);
    cr_assert_not(s->sim.friction_compensation);
    rb_scenario_free(s);
    s = load_ok(TORQUE(", \"torque_feedback\": \"truth\""));
    cr_assert_eq(s->sim.torque_feedback, RB_TFB_TRUTH);
    rb_scenario_free(s);
    expect_error(TORQUE(", \"torque_feedback\": \"external\""),
                 "controller.torque_feedback: unknown value 'external' (expected \"truth\" or \"none\"; external "
                 "feedback needs a program driving the loop, such as roboest closed-loop)");
    expect_error(TORQUE(", \"torque_feedback\": \"truht\""), "controller.torque_feedback: unknown value 'truht'");
    expect_error(TORQUE(", \"torque_feedback\": 1"),
                 "controller.torque_feedback: expected \"truth\" or \"none\" (external feedback needs a program");
    expect_error(TORQUE(", \"friction_compensation\": true"),
                 "controller.friction_compensation: only false in a scenario file: the compensation uses "
                 "estimated friction torques (external feedback needs a program driving the loop");
    expect_error(TORQUE(", \"friction_compensation\": 0"), "controller.friction_compensation: expected true or false");
    expect_error("{" MODEL ", \"duration\": 1, \"controller\": {\"kind\": \"pd\", \"torque_feedback\": \"none\"}}",
                 "controller.torque_feedback: only with controller.kind \"torque\"");
    expect_error("{" MODEL ", \"duration\": 1, \"controller\": {\"friction_compensation\": false}}",
                 "controller.friction_compensation: only with controller.kind \"torque\"");
    expect_error(TORQUE(", \"torque_feedbak\": \"none\""), "did you mean 'torque_feedback'");
#undef TORQUE
}

/* A joint with a q0 but no reference holds its q0 (sim.h), not 0. */
Test(sim_scenario, joint_without_reference_holds_its_q0)
{
    static const char text[] = "{\"name\": \"t\", " MODEL ", \"duration\": 0.1, "
                               "\"q0\": {\"shoulder_pitch\": 0.3, \"elbow\": -0.2}, "
                               "\"references\": {\"elbow\": {\"kind\": \"sine\", \"amplitude\": 0.1, \"freq\": 1}}, "
                               "\"controller\": {\"kind\": \"pd\"}}";
    rb_scenario *s = NULL;
    rb_err err;
    int rc = load(text, &s, &err);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    cr_assert_eq(s->sim.refs[1].kind, RB_REF_CONST);
    cr_assert_eq(s->sim.refs[1].offset, 0.3);  /* left out: holds its q0 */
    cr_assert_eq(s->sim.refs[2].offset, -0.2); /* given without an offset: its q0 too */
    cr_assert_eq(s->sim.refs[0].offset, 0.0);
    rb_scenario_free(s);
}
