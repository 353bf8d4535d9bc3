/* Jets, weighing scales and temperature in the simulator (seed 004): the thrust in the truth is the jet model
 * integrated at dt, its wrench enters the dynamics, failures deliver their fraction and show in the rotor speed
 * error, the scales read the vertical contact force / g plus their drift, the foot FT sensors drift with the
 * temperature and the leg ones do not, bad keys are refused, and the shipped take-off pose keeps the feet's
 * centre of pressure inside the soles. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/dynamics.h"
#include "roboest/sim.h"

#define URDF RB_SOURCE "/datasets/jet_humanoid.urdf"
#define SCALES RB_SOURCE "/configs/scenarios/thrust_scales.json"

static const char *const JOINTS[] = {
    "torso_pitch", "torso_roll",       "torso_yaw",       "l_hip_pitch",      "l_hip_roll",      "l_hip_yaw",
    "l_knee",      "l_ankle_pitch",    "l_ankle_roll",    "r_hip_pitch",      "r_hip_roll",      "r_hip_yaw",
    "r_knee",      "r_ankle_pitch",    "r_ankle_roll",    "l_shoulder_pitch", "l_shoulder_roll", "l_shoulder_yaw",
    "l_elbow",     "r_shoulder_pitch", "r_shoulder_roll", "r_shoulder_yaw",   "r_elbow"};
static const char *const POSE[][2] = {{"l_hip_pitch", "-0.2"},
                                      {"l_knee", "0.4"},
                                      {"l_ankle_pitch", "-0.2"},
                                      {"r_hip_pitch", "-0.2"},
                                      {"r_knee", "0.4"},
                                      {"r_ankle_pitch", "-0.2"},
                                      {"l_shoulder_pitch", "-0.5"},
                                      {"l_elbow", "-1.0707963267948966"},
                                      {"r_shoulder_pitch", "-0.5"},
                                      {"r_elbow", "-1.0707963267948966"}};

static double pose_of(const char *joint)
{
    for (size_t i = 0; i < sizeof POSE / sizeof POSE[0]; i++)
        if (strcmp(POSE[i][0], joint) == 0)
            return atof(POSE[i][1]);
    return 0.0;
}

/* The jet humanoid in its take-off pose, joints held by a PD with gravity compensation; standing: floating base on
 * both soles (rigid 6D contacts), else floating without contacts. `extra`: JSON members merged in (jets, ...). */
static cJSON *base_scenario(double duration, bool standing, const char *extra)
{
    cJSON *j = cJSON_CreateObject(), *model = cJSON_AddObjectToObject(j, "model");
    cJSON_AddStringToObject(model, "urdf", URDF);
    cJSON_AddBoolToObject(model, "floating", true);
    cJSON_AddNumberToObject(j, "duration", duration);
    cJSON *bp = cJSON_AddObjectToObject(j, "base_pose");
    cJSON_AddItemToObject(bp, "position", cJSON_CreateDoubleArray((double[]){-0.0298, 0, 0.835847}, 3));
    cJSON *q0 = cJSON_AddObjectToObject(j, "q0"), *refs = cJSON_AddObjectToObject(j, "references");
    cJSON *ctrl = cJSON_AddObjectToObject(j, "controller"), *gains;
    cJSON_AddStringToObject(ctrl, "kind", "pd");
    cJSON_AddBoolToObject(ctrl, "gravity_comp", true);
    gains = cJSON_AddObjectToObject(ctrl, "gains");
    cJSON *act = cJSON_AddObjectToObject(j, "actuators");
    for (size_t i = 0; i < sizeof JOINTS / sizeof JOINTS[0]; i++) {
        cJSON_AddNumberToObject(q0, JOINTS[i], pose_of(JOINTS[i]));
        cJSON *r = cJSON_AddObjectToObject(refs, JOINTS[i]), *g = cJSON_AddObjectToObject(gains, JOINTS[i]),
              *a = cJSON_AddObjectToObject(act, JOINTS[i]);
        cJSON_AddStringToObject(r, "kind", "const");
        cJSON_AddNumberToObject(r, "offset", pose_of(JOINTS[i]));
        cJSON_AddNumberToObject(g, "kp", 5000);
        cJSON_AddNumberToObject(g, "kd", 40);
        cJSON_AddNumberToObject(a, "k_t", 0.111);
        cJSON_AddNumberToObject(a, "R", 100);
        cJSON_AddNumberToObject(a, "J_m", 8.3e-6);
    }
    if (standing)
        cJSON_AddItemToObject(j, "contacts", cJSON_Parse("[{\"frame\": \"l_sole\"}, {\"frame\": \"r_sole\"}]"));
    if (extra) {
        cJSON *x = cJSON_Parse(extra);
        cr_assert_not_null(x, "%s", extra);
        for (cJSON *e = x->child; e; e = e->next)
            cJSON_AddItemToObject(j, e->string, cJSON_Duplicate(e, true));
        cJSON_Delete(x);
    }
    return j;
}

static int load_json(cJSON *j, rb_scenario **s, rb_err *err)
{
    char *text = cJSON_Print(j);
    int rc = rb_scenario_load_text(text, strlen(text), "jets.json", URDF, s, err);
    free(text);
    return rc;
}

static rb_log *run_json(cJSON *j)
{
    rb_scenario *s = NULL;
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(load_json(j, &s, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_scenario_run(s, NULL, NULL, &log, &err), RB_OK, "%s", err.msg);
    rb_scenario_free(s);
    return log;
}

static rb_log *run(double duration, bool standing, const char *extra)
{
    cJSON *j = base_scenario(duration, standing, extra);
    rb_log *log = run_json(j);
    cJSON_Delete(j);
    return log;
}

static const rb_channel *channel(const rb_log *log, const char *name)
{
    const rb_channel *c = rb_log_find(log, name);
    cr_assert_not_null(c, "channel %s", name);
    return c;
}

static double at(const rb_channel *c, size_t k, size_t e) { return c->data[k * c->n_elements + e]; }

#define ARM_JET                                                                                                        \
    "{\"frame\": \"l_arm_jet_turbine\", \"preset\": \"ironcub_p100\", \"throttle\": {\"kind\": \"ramp\", "             \
    "\"times\": [0, 1, 2.2], \"values\": [0, 110, 60]}"

Test(sim_jets, thrust_in_the_truth_is_the_jet_model_integrated_at_dt)
{
    rb_log *log = run(3.0, false, "{\"jets\": [" ARM_JET "}]}");
    const rb_channel *T = channel(log, "truth/jets/thrusts"), *Td = channel(log, "truth/jets/thrust_rates"),
                     *u = channel(log, "jets/throttles");
    cr_assert_str_eq(T->element_names[0], "l_arm_jet_turbine");
    rb_jet_params p;
    rb_err err;
    cr_assert_eq(rb_jet_preset("ironcub_p100", &p, NULL, &err), RB_OK);
    double x = 0, xd = 0, peak = 0;
    for (size_t k = 0; k < T->n_samples; k++) {
        double t = 0.001 * (double)k;
        double thr = t <= 1 ? 110 * t : t < 2.2 ? 110 - 50 * (t - 1) / 1.2 : 60;
        cr_assert_float_eq(at(u, k, 0), thr, 1e-9, "throttle at %g s", t);
        cr_assert_float_eq(at(T, k, 0), x, 1e-9 * (1 + x), "thrust at %g s: %.17g, model %.17g", t, at(T, k, 0), x);
        cr_assert_float_eq(at(Td, k, 0), xd, 1e-9 * (1 + fabs(xd)), "thrust rate at %g s", t);
        peak = x > peak ? x : peak;
        rb_jet_step(&p, at(u, k, 0), 0.001, &x, &xd);
    }
    cr_assert_gt(peak, 20.0, "the jet did spin up (peak %g N)", peak);
    rb_log_free(log);
}

#define FOUR_JETS(steady)                                                                                              \
    "{\"jets\": ["                                                                                                     \
    "{\"frame\": \"l_arm_jet_turbine\", \"preset\": \"ironcub_p100\", \"steady_start\": " steady                       \
    ", \"throttle\": {\"kind\": \"const\", \"offset\": 90}},"                                                          \
    "{\"frame\": \"r_arm_jet_turbine\", \"preset\": \"ironcub_p100\", \"steady_start\": " steady                       \
    ", \"throttle\": {\"kind\": \"const\", \"offset\": 90}},"                                                          \
    "{\"frame\": \"chest_l_jet_turbine\", \"preset\": \"ironcub_p220_gazebo\", \"steady_start\": " steady              \
    ", \"throttle\": {\"kind\": \"const\", \"offset\": 63}},"                                                          \
    "{\"frame\": \"chest_r_jet_turbine\", \"preset\": \"ironcub_p220_gazebo\", \"steady_start\": " steady              \
    ", \"throttle\": {\"kind\": \"const\", \"offset\": 63}}]}"

/* Free floating, no contacts: the generalized forces of the truth's motion (RNEA) with the jets' wrenches added
 * (thrust T along the frames' -z, computed here) are [0 on the base; tau_j]; without them the base rows are not 0. */
Test(sim_jets, the_jet_wrench_enters_the_dynamics)
{
    cJSON *j = base_scenario(0.3, false, FOUR_JETS("true"));
    rb_scenario *s = NULL;
    rb_err err;
    cr_assert_eq(load_json(j, &s, &err), RB_OK, "%s", err.msg);
    cJSON_Delete(j);
    rb_sim *sim = NULL;
    cr_assert_eq(rb_sim_init(&s->sim, &sim, &err), RB_OK, "%s", err.msg);
    for (int k = 0; k < 200; k++)
        cr_assert_eq(rb_sim_step(sim, &err), 1, "%s", err.msg);
    const rb_sim_truth *t = rb_sim_truth_get(sim);
    const rb_model *m = s->model;
    rb_dyn *ws = NULL;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    rb_ext_wrench ext[4];
    double gen[64], gen0[64], total = 0;
    for (size_t i = 0; i < 4; i++) {
        ext[i] = (rb_ext_wrench){s->sim.jets[i].frame, RB_DYN_BODY, {0, 0, -t->jet_thrust[i], 0, 0, 0}};
        total += t->jet_thrust[i];
    }
    cr_assert_gt(total, 300.0, "steady start near hover (%g N)", total);
    cr_assert_eq(rb_dyn_rnea(m, ws, t->q, t->nu, t->nu_dot, ext, 4, gen, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_rnea(m, ws, t->q, t->nu, t->nu_dot, NULL, 0, gen0, &err), RB_OK, "%s", err.msg);
    for (int i = 0; i < 6; i++)
        cr_assert_float_eq(gen[i], 0.0, 1e-6, "base row %d: %g", i, gen[i]);
    cr_assert_gt(fabs(gen0[2]), 100.0, "without the jets the base's vertical row is the thrust (%g)", gen0[2]);
    for (size_t i = 0; i < m->n_dofs; i++)
        cr_assert_float_eq(gen[6 + i], t->tau_j[i], 1e-6 * (1 + fabs(t->tau_j[i])), "joint %zu", i);
    rb_dyn_free(ws);
    rb_sim_finish(sim);
    rb_scenario_free(s);
}

/* Standing: the feet's vertical load drops by the jets' (vertical) thrust. */
Test(sim_jets, the_contact_forces_drop_by_the_vertical_thrust)
{
    rb_log *with = run(1.0, true, FOUR_JETS("true")), *without = run(1.0, true, NULL);
    const rb_channel *lw = channel(with, "truth/contacts/l_sole"), *rw = channel(with, "truth/contacts/r_sole"),
                     *l0 = channel(without, "truth/contacts/l_sole"), *r0 = channel(without, "truth/contacts/r_sole"),
                     *T = channel(with, "truth/jets/thrusts");
    size_t k = lw->n_samples - 1;
    double thrust = at(T, k, 0) + at(T, k, 1) + at(T, k, 2) + at(T, k, 3);
    double drop = at(l0, k, 2) + at(r0, k, 2) - at(lw, k, 2) - at(rw, k, 2);
    cr_assert_gt(thrust, 300.0);
    cr_assert_float_eq(drop, thrust, 0.01 * thrust, "load drop %g N, thrust %g N", drop, thrust);
    rb_log_free(with);
    rb_log_free(without);
}

#define FAILING_JET                                                                                                    \
    "{\"jets\": [{\"frame\": \"chest_r_jet_turbine\", \"preset\": \"ironcub_p220_gazebo\", \"steady_start\": true, "   \
    "\"throttle\": {\"kind\": \"const\", \"offset\": 70}, \"failure\": [{\"from\": 0.5, \"until\": 1.0, "              \
    "\"fraction\": 0.6}], \"rotor\": {\"tau\": 0.05, \"rpm_max\": 115000}}]}"

Test(sim_jets, a_failure_delivers_its_fraction_of_the_model_thrust)
{
    rb_log *log = run(1.5, true, FAILING_JET);
    const rb_channel *T = channel(log, "truth/jets/thrusts"), *Td = channel(log, "truth/jets/thrust_rates");
    rb_jet_params p;
    rb_err err;
    cr_assert_eq(rb_jet_preset("ironcub_p220_gazebo", &p, NULL, &err), RB_OK);
    double x = rb_sim_jet_steady_thrust(&p, 70), xd = 0;
    cr_assert_gt(x, 100.0);
    for (size_t k = 0; k < T->n_samples; k++) {
        double t = 0.001 * (double)k, f = t >= 0.5 - 1e-9 && t < 1.0 - 1e-9 ? 0.6 : 1.0;
        cr_assert_float_eq(at(T, k, 0), f * x, 1e-9 * x, "thrust at %g s", t);
        cr_assert_float_eq(at(Td, k, 0), f * xd, 1e-9 * (1 + fabs(xd)), "rate at %g s", t);
        rb_jet_step(&p, 70, 0.001, &x, &xd);
    }
    rb_log_free(log);
}

Test(sim_jets, the_rotor_speed_error_rises_during_a_failure)
{
    rb_log *log = run(1.5, true, FAILING_JET);
    const rb_channel *e = channel(log, "jets/rotor_speed_error");
    cr_assert_str_eq(e->units[0], "rpm");
    rb_jet_params p;
    rb_err err;
    cr_assert_eq(rb_jet_preset("ironcub_p220_gazebo", &p, NULL, &err), RB_OK);
    double rpm_des = 115000 * sqrt(rb_sim_jet_steady_thrust(&p, 70) / p.T_max), expect = (1 - sqrt(0.6)) * rpm_des;
    cr_assert_float_eq(at(e, 400, 0), 0.0, 1.0, "steady before the failure: %g rpm", at(e, 400, 0));
    cr_assert_float_eq(at(e, 950, 0), expect, 0.01 * expect, "during: %g rpm, expected %g", at(e, 950, 0), expect);
    cr_assert_float_eq(at(e, 1490, 0), 0.0, 5.0, "after: %g rpm", at(e, 1490, 0));
    rb_log_free(log);
}

#define SCALES_AND_FT(drift)                                                                                           \
    "{\"temperature\": {\"t0\": 24, \"rate\": 2, \"from\": 0.2, \"until\": 0.8}, \"scales\": [{\"contact\": "          \
    "\"l_sole\", \"drift_per_kelvin\": 0.05}, {\"contact\": 1, \"drift_per_kelvin\": -0.03}], \"sensors\": ["          \
    "{\"kind\": \"ft\", \"ft\": \"l_leg_ft_sensor\", \"noise\": 0.5}, {\"kind\": \"ft\", \"ft\": "                     \
    "\"l_foot_ft_sensor\", "                                                                                           \
    "\"noise\": 0.5" drift "}]}"

static double temperature(double t) { return 24 + 2 * ((t < 0.2 ? 0.2 : t > 0.8 ? 0.8 : t) - 0.2); }

Test(sim_jets, the_scales_read_the_vertical_contact_force_over_g_plus_their_drift)
{
    rb_log *log = run(1.0, true, SCALES_AND_FT(""));
    const rb_channel *sl = channel(log, "scales/l_sole"), *sr = channel(log, "scales/r_sole"),
                     *cl = channel(log, "truth/contacts/l_sole"), *cr = channel(log, "truth/contacts/r_sole");
    cr_assert_str_eq(sl->units[0], "kg");
    cr_assert_eq(sl->n_samples, cl->n_samples);
    for (size_t k = 0; k < sl->n_samples; k += 50) {
        double dT = temperature(sl->time[k]) - 24;
        cr_assert_float_eq(at(sl, k, 0), at(cl, k, 2) / 9.81 + 0.05 * dT, 1e-9, "left at %g s", sl->time[k]);
        cr_assert_float_eq(at(sr, k, 0), at(cr, k, 2) / 9.81 - 0.03 * dT, 1e-9, "right at %g s", sr->time[k]);
    }
    cr_assert_gt(at(sl, 0, 0), 15.0, "half the robot's weight");
    rb_log_free(log);
}

Test(sim_jets, temperatures_of_the_drifting_ft_sensors_rise_linearly)
{
    rb_log *log = run(1.0, true, SCALES_AND_FT(", \"temperature_drift\": 1.5"));
    const rb_channel *T = channel(log, "temperatures/l_foot_ft_sensor");
    cr_assert_str_eq(T->units[0], "degC");
    cr_assert_null(rb_log_find(log, "temperatures/l_leg_ft_sensor"), "only the drifting sensors log temperatures");
    for (size_t k = 0; k < T->n_samples; k += 10)
        cr_assert_float_eq(at(T, k, 0), temperature(T->time[k]), 1e-12, "at %g s", T->time[k]);
    cr_assert_float_eq(at(T, T->n_samples - 1, 0), 25.2, 1e-12);
    rb_log_free(log);
}

/* The same run with and without the foot sensor's temperature_drift: the foot readings differ by drift x dT
 * (same noise: same seed and channel), the leg sensor's are the same bits. */
Test(sim_jets, the_foot_ft_drifts_with_the_temperature_the_leg_ft_does_not)
{
    static const double drift[6] = {0.3, -0.2, 1.5, 0.01, -0.02, 0.005};
    rb_log *a = run(1.0, true, SCALES_AND_FT(", \"temperature_drift\": [0.3, -0.2, 1.5, 0.01, -0.02, 0.005]")),
           *b = run(1.0, true, SCALES_AND_FT(""));
    const rb_channel *fa = channel(a, "FTs/l_foot_ft_sensor"), *fb = channel(b, "FTs/l_foot_ft_sensor"),
                     *la = channel(a, "FTs/l_leg_ft_sensor"), *lb = channel(b, "FTs/l_leg_ft_sensor");
    cr_assert_eq(memcmp(la->data, lb->data, la->n_samples * 6 * sizeof *la->data), 0, "leg FT unchanged");
    for (size_t k = 0; k < fa->n_samples; k += 25)
        for (size_t i = 0; i < 6; i++)
            cr_assert_float_eq(at(fa, k, i) - at(fb, k, i), drift[i] * (temperature(fa->time[k]) - 24), 1e-9,
                               "element %zu at %g s", i, fa->time[k]);
    cr_assert_float_eq(at(fa, fa->n_samples - 1, 2) - at(fb, fa->n_samples - 1, 2), 1.8, 1e-9);
    rb_log_free(a);
    rb_log_free(b);
}

/* A bad jets entry: one line naming the key (and a suggestion for a preset). */
static void assert_refused(const char *extra, const char *needle1, const char *needle2)
{
    cJSON *j = base_scenario(0.1, true, extra);
    rb_scenario *s = NULL;
    rb_err err;
    int rc = load_json(j, &s, &err);
    cJSON_Delete(j);
    cr_assert_eq(rc, RB_ECONFIG, "%s: %d", extra, rc);
    cr_assert_null(s);
    cr_assert_null(strchr(err.msg, '\n'), "one line: %s", err.msg);
    cr_assert_not_null(strstr(err.msg, needle1), "'%s' in: %s", needle1, err.msg);
    cr_assert_not_null(strstr(err.msg, needle2), "'%s' in: %s", needle2, err.msg);
}

#define JET(rest) "{\"jets\": [{\"frame\": \"l_arm_jet_turbine\", \"throttle\": {\"kind\": \"const\"}, " rest "}]}"

Test(sim_jets, bad_jet_keys_are_refused)
{
    assert_refused(JET("\"preset\": \"ironcub_p10\""), "jets[0].preset", "did you mean 'ironcub_p100'");
    assert_refused("{\"jets\": [{\"frame\": \"l_arm_jet_nozzle\", \"preset\": \"ironcub_p100\", \"throttle\": "
                   "{\"kind\": \"const\"}}]}",
                   "jets[0].frame", "l_arm_jet_nozzle");
    assert_refused("{\"jets\": [{\"frame\": \"l_arm_jet_turbin\", \"preset\": \"ironcub_p100\", \"throttle\": "
                   "{\"kind\": \"const\"}}]}",
                   "jets[0].frame", "l_arm_jet_turbine");
    assert_refused(JET("\"preset\": \"ironcub_p100\", \"axis\": [0, 0, 0]"), "jets[0].axis", "non-zero");
    assert_refused(JET("\"preset\": \"ironcub_p100\", \"failure\": [{\"from\": 1, \"until\": 2, \"fraction\": 1.2}]"),
                   "jets[0].failure[0].fraction", "1");
    assert_refused(JET("\"preset\": \"ironcub_p100\", \"failure\": [{\"from\": 1, \"until\": 2, \"fraction\": 0.5}, "
                       "{\"from\": 1.5, \"until\": 3, \"fraction\": 0.5}]"),
                   "jets[0].failure[1].from", "overlaps");
    assert_refused("{\"scales\": [{\"contact\": \"l_sole\", \"drift_per_kelvin\": 0.1}]}", "scales[0].drift_per_kelvin",
                   "temperature");
    assert_refused("{\"scales\": [{\"contact\": \"l_sol\"}]}", "scales[0].contact", "l_sole");
}

/* The shipped thrust_scales scenario at its hold throttles (80 % of hover) from the steady thrust: the feet's
 * centres of pressure (x = -m_y / f_z about the sole origin) stay well inside the soles (0.24 m long). */
Test(sim_jets, the_take_off_pose_keeps_the_centre_of_pressure_inside_the_soles)
{
    char *text = NULL;
    FILE *f = fopen(SCALES, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = calloc((size_t)n + 1, 1);
    cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    cJSON *j = cJSON_Parse(text);
    free(text);
    cJSON_ReplaceItemInObject(j, "duration", cJSON_CreateNumber(2.0));
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(j, "model"), "urdf", cJSON_CreateString(URDF));
    cJSON_DeleteItemFromObject(j, "log_channels");
    double total = 0;
    for (cJSON *jet = cJSON_GetObjectItem(j, "jets")->child; jet; jet = jet->next) {
        cJSON *thr = cJSON_GetObjectItem(jet, "throttle"), *times = cJSON_GetObjectItem(thr, "times"),
              *values = cJSON_GetObjectItem(thr, "values");
        double hold = 0;
        for (int i = 0; i < cJSON_GetArraySize(times); i++)
            if (cJSON_GetArrayItem(times, i)->valuedouble == 300) /* the ramp's end, held to 340 s */
                hold = cJSON_GetArrayItem(values, i)->valuedouble;
        cr_assert_gt(hold, 50.0);
        cJSON_ReplaceItemInObject(jet, "throttle", cJSON_Parse("{\"kind\": \"const\"}"));
        cJSON_AddNumberToObject(cJSON_GetObjectItem(jet, "throttle"), "offset", hold);
        cJSON_AddBoolToObject(jet, "steady_start", true);
    }
    rb_log *log = run_json(j);
    cJSON_Delete(j);
    const rb_channel *T = channel(log, "truth/jets/thrusts");
    for (size_t i = 0; i < 4; i++)
        total += at(T, 0, i);
    cr_assert_float_eq(total, 0.8 * 41.402 * 9.81, 0.01 * 41.402 * 9.81, "80 %% of hover: %g N", total);
    const char *feet[] = {"truth/contacts/l_sole", "truth/contacts/r_sole"};
    for (int s = 0; s < 2; s++) {
        const rb_channel *c = channel(log, feet[s]);
        for (size_t k = 500; k < c->n_samples; k += 10) { /* after the jets' sudden start has settled */
            double fz = at(c, k, 2), cop_x = -at(c, k, 4) / fz, cop_y = at(c, k, 3) / fz;
            cr_assert_gt(fz, 20.0, "%s at %g s: the foot stays loaded (%g N)", feet[s], c->time[k], fz);
            cr_assert_lt(fabs(cop_x), 0.06, "%s at %g s: CoP x %g m", feet[s], c->time[k], cop_x);
            cr_assert_lt(fabs(cop_y), 0.03, "%s at %g s: CoP y %g m", feet[s], c->time[k], cop_y);
        }
    }
    rb_log_free(log);
}

/* The dataset copies of the thrust scenarios are the scenarios themselves (only the model path differs). */
Test(sim_jets, the_thrust_dataset_scenarios_are_the_shipped_ones)
{
    static const char *const NAMES[] = {"thrust_scales", "thrust_failure", "thrust_flight"};
    for (size_t i = 0; i < 3; i++) {
        char path[512], copy[512];
        snprintf(path, sizeof path, RB_SOURCE "/configs/scenarios/%s.json", NAMES[i]);
        snprintf(copy, sizeof copy, RB_SOURCE "/configs/scenarios/datasets/%s.json", NAMES[i]);
        cJSON *j[2];
        const char *files[2] = {path, copy};
        for (int k = 0; k < 2; k++) {
            FILE *f = fopen(files[k], "rb");
            cr_assert_not_null(f, "%s", files[k]);
            char buf[1 << 16];
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[n] = '\0';
            j[k] = cJSON_Parse(buf);
            cr_assert_not_null(j[k], "%s", files[k]);
        }
        cJSON *ua = cJSON_GetObjectItem(cJSON_GetObjectItem(j[0], "model"), "urdf"),
              *ub = cJSON_GetObjectItem(cJSON_GetObjectItem(j[1], "model"), "urdf");
        cr_assert_str_eq(ua->valuestring, "../../datasets/jet_humanoid.urdf");
        cr_assert_str_eq(ub->valuestring, "../../../datasets/jet_humanoid.urdf", "%s", copy);
        cJSON_SetValuestring(ub, ua->valuestring);
        cr_assert(cJSON_Compare(j[0], j[1], true), "%s differs from %s", copy, path);
        cJSON_Delete(j[0]);
        cJSON_Delete(j[1]);
        rb_scenario *s = NULL;
        rb_err err;
        cr_assert_eq(rb_scenario_load(copy, &s, &err), RB_OK, "%s", err.msg);
        rb_scenario_free(s);
    }
}
