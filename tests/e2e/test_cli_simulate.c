/* End-to-end: roboest simulate on the arm-on-a-pole example: channels, element names, units, the current
 * model against the truth, determinism, and the failure modes (one line, exit code, no output file). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/dynamics.h"
#include "roboest/io.h"
#include "roboest/model.h"

#define ARM_POLE RB_SOURCE "/configs/scenarios/arm_pole.json"
#define HUMANOID_BALANCE RB_SOURCE "/configs/scenarios/humanoid_balance.json"
#define ERGOCUB_LEG_POLE RB_SOURCE "/configs/scenarios/ergocub_leg_pole.json"

/* A copy of `src` in dir (as `name`) with each from[k] replaced by to[k] (each must occur). */
static char *copy_with(const char *src, const char *dir, const char *name, const char *const *from,
                       const char *const *to, size_t n)
{
    char *text = test_read_file(src, NULL);
    cr_assert_not_null(text);
    for (size_t k = 0; k < n; k++) {
        char *at = strstr(text, from[k]);
        cr_assert_not_null(at, "%s lacks %s", src, from[k]);
        size_t head = (size_t)(at - text), klen = strlen(from[k]);
        char *next = malloc(strlen(text) + strlen(to[k]) + 1);
        memcpy(next, text, head);
        strcpy(next + head, to[k]);
        strcat(next, at + klen);
        free(text);
        text = next;
    }
    char *path = test_path(dir, name);
    test_write_file(path, text);
    free(text);
    return path;
}

/* arm_pole.json with a short duration and the model's absolute path, written into dir. */
static char *short_scenario(const char *dir, const char *duration)
{
    char repl[2][512];
    snprintf(repl[0], sizeof repl[0], "\"duration\": %s", duration);
    snprintf(repl[1], sizeof repl[1], "\"%s/datasets/arm_2ft.urdf\"", RB_SOURCE);
    const char *from[] = {"\"duration\": 2.0", "\"../../datasets/arm_2ft.urdf\""}, *to[] = {repl[0], repl[1]};
    return copy_with(ARM_POLE, dir, "arm_pole.json", from, to, 2);
}

static void expect_channel(const rb_log *log, const char *name, size_t n, const char *first_element, const char *unit)
{
    const rb_channel *ch = rb_log_find(log, name);
    cr_assert_not_null(ch, "missing channel %s", name);
    cr_assert_eq(ch->n_elements, n, "%s: %zu elements", name, ch->n_elements);
    cr_assert_gt(ch->n_samples, 0, "%s is empty", name);
    cr_assert_str_eq(ch->element_names[0], first_element, "%s", name);
    cr_assert_str_eq(ch->units[0], unit, "%s", name);
}

static void simulate_ok(const char *scenario, const char *out)
{
    const char *args[] = {"simulate", scenario, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cli_result_free(&r);
}

/* k_t R I - tau_F - R J_m theta_ddot (theta_ddot = R s_ddot, the logged rotor acceleration) = tau_j, and the
 * motor torque is k_t R I, on every sample of the truth. */
static void expect_current_model(const rb_log *log, size_t n, const double *k_t, const double *R, const double *J_m)
{
    const rb_channel *I = rb_log_find(log, "truth/motors/currents"),
                     *F = rb_log_find(log, "truth/joints/friction_torques"),
                     *A = rb_log_find(log, "truth/motors/accelerations"), *T = rb_log_find(log, "truth/joints/torques"),
                     *M = rb_log_find(log, "truth/motors/torques");
    cr_assert(I && F && A && T && M);
    double worst = 0, scale = 0;
    for (size_t k = 0; k < T->n_samples; k++)
        for (size_t j = 0; j < n; j++) {
            size_t at = k * n + j;
            double tau = k_t[j] * R[j] * I->data[at] - F->data[at] - R[j] * J_m[j] * A->data[at];
            worst = fmax(worst, fabs(tau - T->data[at]));
            scale = fmax(scale, fabs(T->data[at]));
            cr_assert_float_eq(M->data[at], k_t[j] * R[j] * I->data[at], 1e-9 * (1 + fabs(M->data[at])));
        }
    cr_assert_gt(scale, 0.1, "the joints should carry load");
    cr_assert_lt(worst, 1e-9 * scale, "current model off by %g N m", worst);
}

Test(cli_simulate, arm_pole_log)
{
    char *dir = test_tmpdir(), *scn = short_scenario(dir, "0.3"), *out = test_path(dir, "arm.mat");
    simulate_ok(scn, out);
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(out, &log, &err), RB_OK, "%s", err.msg);
    cr_assert_str_eq(log->root_name, "robot_logger_device");
    expect_channel(log, "joints_state/positions", 4, "shoulder_yaw", "rad");
    expect_channel(log, "joints_state/velocities", 4, "shoulder_yaw", "rad/s");
    expect_channel(log, "joints_state/accelerations", 4, "shoulder_yaw", "rad/s^2");
    expect_channel(log, "joints_state/desired_torques", 4, "shoulder_yaw", "N m");
    expect_channel(log, "motors_state/positions", 4, "shoulder_yaw", "rad");
    expect_channel(log, "motors_state/velocities", 4, "shoulder_yaw", "rad/s");
    expect_channel(log, "motors_state/currents", 4, "shoulder_yaw", "A");
    expect_channel(log, "FTs/upper_arm_ft_sensor", 6, "fx", "N");
    expect_channel(log, "FTs/wrist_ft_sensor", 6, "fx", "N");
    cr_assert_str_eq(rb_log_find(log, "FTs/wrist_ft_sensor")->units[3], "N m");
    expect_channel(log, "accelerometers/hand_imu", 3, "x", "m/s^2");
    expect_channel(log, "gyros/hand_imu", 3, "x", "rad/s");
    expect_channel(log, "truth/joints/torques", 4, "shoulder_yaw", "N m");
    expect_channel(log, "truth/joints/friction_torques", 4, "shoulder_yaw", "N m");
    expect_channel(log, "truth/motors/torques", 4, "shoulder_yaw", "N m");
    expect_channel(log, "truth/motors/currents", 4, "shoulder_yaw", "A");
    expect_channel(log, "truth/base/position", 3, "x", "m");
    cr_assert_eq(rb_log_find(log, "joints_state/positions")->n_samples, 301);
    cr_assert_eq(rb_log_find(log, "accelerometers/hand_imu")->n_samples, 31);
    cr_assert_str_eq(rb_log_get_attr(log, "yarp_robot_name"), "arm_2ft");

    expect_current_model(log, 4, (const double[]){0.05, 0.05, 0.05, 0.04}, (const double[]){-100, 160, -100, 100},
                         (const double[]){1e-5, 1e-5, 8e-6, 5e-6});
    rb_log_free(log);

    /* same scenario and seed: same bytes */
    char *again = test_path(dir, "again.mat");
    simulate_ok(scn, again);
    size_t n1, n2;
    char *a = test_read_file(out, &n1), *b = test_read_file(again, &n2);
    cr_assert(n1 == n2 && memcmp(a, b, n1) == 0, "two runs differ");
    free(a), free(b), free(again);
    free(dir), free(scn), free(out);
}

Test(cli_simulate, h5_output)
{
    char *dir = test_tmpdir(), *scn = short_scenario(dir, "0.05"), *out = test_path(dir, "arm.h5");
    simulate_ok(scn, out);
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(out, &log, &err), RB_OK, "%s", err.msg);
    expect_channel(log, "truth/joints/torques", 4, "shoulder_yaw", "N m");
    expect_channel(log, "FTs/upper_arm_ft_sensor", 6, "fx", "N");
    /* provenance (the .mat reader does not read the roboest_provenance struct back; .h5 keeps attributes) */
    const char *v = rb_log_get_attr(log, "seed");
    cr_assert(v && strcmp(v, "7") == 0);
    cr_assert_not_null(rb_log_get_attr(log, "roboest_version"));
    cr_assert_str_eq(rb_log_get_attr(log, "scenario"), "arm_pole");
    cr_assert_eq(strlen(rb_log_get_attr(log, "scenario_sha256")), 64);
    cr_assert_str_eq(rb_log_get_attr(log, "model"), "arm_2ft.urdf");
    rb_log_free(log);
    free(dir), free(scn), free(out);
}

/* A scenario on the arm model: `body` is the text after the model key (without the closing brace). */
static char *arm_scenario(const char *dir, const char *name, const char *body)
{
    size_t len = strlen(body) + 512;
    char *text = malloc(len);
    snprintf(text, len, "{\"model\": {\"urdf\": \"%s/datasets/arm_2ft.urdf\", \"base\": \"base_link\"},\n %s}",
             RB_SOURCE, body);
    char *path = test_path(dir, name);
    test_write_file(path, text);
    free(text);
    return path;
}

Test(cli_simulate, scenario_errors_one_line_no_output)
{
    static const struct {
        const char *body;
        int status;
        const char *message;
    } cases[] = {
        {"\"duration\": 1, \"sede\": 3", CLI_EXIT_INPUT, "bad.json:2:17: unknown key 'sede' (did you mean 'seed'?)"},
        {"\"duration\": 1, \"q0\": {\"elbw\": 0.3}", CLI_EXIT_INPUT,
         "bad.json:2:24: q0.elbw: unknown joint 'elbw' (did you mean 'elbow'?)"},
        {"\"duration\": 1, \"sensors\": [{\"kind\": \"ft\", \"ft\": \"wrist_ft_sensr\"}]", CLI_EXIT_INPUT,
         "sensors[0].ft: unknown FT sensor 'wrist_ft_sensr' (did you mean 'wrist_ft_sensor'?)"},
        {"\"duration\": 1, \"sensors\": [{\"kind\": \"accelerometer\", \"frame\": \"foot_imu\"}]", CLI_EXIT_INPUT,
         "sensors[0].frame: unknown frame 'foot_imu'"},
        {"\"duration\": 1, \"sensors\": [{\"kind\": \"gyroscope\", \"frame\": \"hand_gyro\", \"noise\": -0.1}]",
         CLI_EXIT_INPUT, "sensors[0]: sensor gyros/hand_gyro: noise_std"},
        /* explicit integration of stiff gains with a huge step diverges: a numeric error naming the time */
        {"\"duration\": 100, \"dt\": 0.5, \"controller\": {\"kind\": \"pd\", \"gains\": {\"elbow\": {\"kp\": 1e5, "
         "\"kd\": 1e3},"
         " \"shoulder_pitch\": {\"kp\": 1e5, \"kd\": 1e3}}}, \"references\": {\"elbow\": {\"kind\": \"step\","
         " \"amplitude\": 0.1, \"t0\": 1}}",
         4, "sim: t = "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *dir = test_tmpdir(), *scn = arm_scenario(dir, "bad.json", cases[i].body), *out = test_path(dir, "x.mat");
        const char *args[] = {"simulate", scn, "-o", out, NULL};
        cli_result r = cli_run(NULL, args);
        cr_assert_eq(r.status, cases[i].status, "case %zu: exit %d: %s", i, r.status, r.err);
        cr_assert_eq(test_count_lines(r.err), 1, "case %zu: %s", i, r.err);
        cr_assert(strstr(r.err, cases[i].message), "case %zu: %s", i, r.err);
        cr_assert(!test_exists(out), "case %zu left %s", i, out);
        cr_assert_eq(test_count_entries(dir), 1, "case %zu left a temporary file", i);
        cli_result_free(&r);
        free(dir), free(scn), free(out);
    }
}

Test(cli_simulate, missing_folder_and_existing_output)
{
    char *dir = test_tmpdir(), *scn = short_scenario(dir, "0.01"), *out = test_path(dir, "no/such/dir/x.mat");
    const char *args[] = {"simulate", scn, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, CLI_EXIT_OUTPUT, "exit %d: %s", r.status, r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "%s", r.err);
    cli_result_free(&r);
    char *exists = test_path(dir, "x.h5");
    test_write_file(exists, "keep");
    const char *args2[] = {"simulate", scn, "-o", exists, "-q", NULL};
    r = cli_run(NULL, args2);
    cr_assert_eq(r.status, CLI_EXIT_OUTPUT, "exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    const char *args3[] = {"simulate", scn, "-o", exists, "-q", "--force", NULL};
    r = cli_run(NULL, args3);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    free(dir), free(scn), free(out), free(exists);
}

/* ---- helpers for the checks against the model ------------------------------------------------------------- */
static rb_log *read_log(const char *path)
{
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(path, &log, &err), RB_OK, "%s", err.msg);
    return log;
}

static const rb_channel *channel(const rb_log *log, const char *name)
{
    const rb_channel *ch = rb_log_find(log, name);
    cr_assert_not_null(ch, "missing channel %s", name);
    return ch;
}

/* Sample index of time t in a channel logged at every step of dt from 0. */
static size_t at_time(const rb_channel *ch, double t, double dt)
{
    size_t k = (size_t)llround(t / dt);
    cr_assert_lt(k, ch->n_samples);
    cr_assert_float_eq(ch->time[k], t, 1e-9);
    return k;
}

/* q of truth sample k: [base position, quaternion,] joints. */
static void truth_q(const rb_log *log, const rb_model *m, size_t k, double *q)
{
    const rb_channel *s = channel(log, "truth/joints/positions");
    size_t off = m->nq - m->n_dofs;
    if (m->floating) {
        memcpy(q, channel(log, "truth/base/position")->data + 3 * k, 3 * sizeof *q);
        memcpy(q + 3, channel(log, "truth/base/orientation")->data + 4 * k, 4 * sizeof *q);
    }
    memcpy(q + off, s->data + k * m->n_dofs, m->n_dofs * sizeof *q);
}

/* Logged roll pitch yaw of an orientation channel against the frame's rotation by forward kinematics of the true
 * configuration: the rotation rebuilt from them equals it to 1e-12, each angle in range. Returns the largest |yaw|. */
static double expect_orientation_truth(const rb_log *log, const rb_model *m, rb_dyn *ws, const char *channel_name,
                                       const char *frame, double dt)
{
    const rb_channel *o = channel(log, channel_name), *s = channel(log, "truth/joints/positions");
    long f = rb_model_frame_index(m, frame);
    cr_assert_geq(f, 0);
    cr_assert_str_eq(o->element_names[0], "roll");
    cr_assert_str_eq(o->element_names[2], "yaw");
    cr_assert_str_eq(o->units[1], "rad");
    double q[64], worst = 0, max_yaw = 0;
    rb_err err;
    for (size_t i = 0; i < o->n_samples; i++) {
        const double *rpy = o->data + 3 * i;
        truth_q(log, m, at_time(s, o->time[i], dt), q);
        rb_xform X;
        cr_assert_eq(rb_dyn_kinematics(m, ws, q, NULL, NULL, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_dyn_frame_pose(m, ws, (size_t)f, &X, &err), RB_OK, "%s", err.msg);
        double R[9];
        rb_m3_from_rpy(rpy[0], rpy[1], rpy[2], R);
        for (int e = 0; e < 9; e++)
            worst = fmax(worst, fabs(R[e] - X.R[e]));
        cr_assert(rpy[0] >= -M_PI && rpy[0] < M_PI && rpy[2] >= -M_PI && rpy[2] < M_PI, "%s[%zu] not wrapped",
                  channel_name, i);
        cr_assert(rpy[1] >= -M_PI / 2 && rpy[1] <= M_PI / 2);
        max_yaw = fmax(max_yaw, fabs(rpy[2]));
    }
    cr_assert_lt(worst, 1e-12, "%s: rotation from rpy off by %g", channel_name, worst);
    return max_yaw;
}

static rb_model *load_model(const char *urdf, const rb_model_opts *mo)
{
    rb_model *m = NULL;
    rb_err err;
    cr_assert_eq(rb_model_load_urdf(urdf, mo, &m, &err), RB_OK, "%s", err.msg);
    return m;
}

/* ---- orientation sensors ---------------------------------------------------------------------------------- */
Test(cli_simulate, orientation_is_the_frame_rotation)
{
    /* the shoulder yaw sweeps +-3 rad, so the hand's yaw passes through +-pi and must wrap */
    char *dir = test_tmpdir(), *out = test_path(dir, "o.h5");
    char *scn = arm_scenario(
        dir, "o.json",
        "\"duration\": 1, \"q0\": {\"shoulder_pitch\": 0.4, \"elbow\": 0.6},"
        " \"controller\": {\"kind\": \"pd\", \"gravity_comp\": true, \"gains\": {"
        "\"shoulder_yaw\": {\"kp\": 400, \"kd\": 40}, \"shoulder_pitch\": {\"kp\": 400, \"kd\": 40},"
        " \"elbow\": {\"kp\": 200, \"kd\": 20}, \"wrist_roll\": {\"kp\": 50, \"kd\": 2}}},"
        " \"actuators\": {\"shoulder_yaw\": {\"R\": 100, \"J_m\": 1e-5}, \"shoulder_pitch\": {\"R\": 100,"
        " \"J_m\": 1e-5}, \"elbow\": {\"R\": 100, \"J_m\": 1e-5}, \"wrist_roll\": {\"R\": 100, \"J_m\": 1e-5}},"
        " \"references\": {\"shoulder_yaw\": {\"kind\": \"sine\", \"amplitude\": 3.0, \"freq\": 0.6},"
        " \"wrist_roll\": {\"kind\": \"sine\", \"amplitude\": 2.0, \"freq\": 1.3}},"
        " \"sensors\": [{\"kind\": \"orientation\", \"frame\": \"hand_gyro\", \"name\": \"hand_imu\","
        " \"noise\": 0}, {\"kind\": \"orientation\", \"frame\": \"tool_frame\", \"noise\": 0,"
        " \"rate\": 1000}]");
    simulate_ok(scn, out);
    rb_log *log = read_log(out);
    rb_model_opts mo = {.base = "base_link"};
    rb_model *m = load_model(RB_SOURCE "/datasets/arm_2ft.urdf", &mo);
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    expect_channel(log, "orientations/hand_imu", 3, "roll", "rad");
    cr_assert_eq(channel(log, "orientations/hand_imu")->n_samples, 101);
    cr_assert_eq(channel(log, "orientations/tool_frame")->n_samples, 1001);
    expect_orientation_truth(log, m, ws, "orientations/hand_imu", "hand_gyro", 0.001);
    double max_yaw = expect_orientation_truth(log, m, ws, "orientations/tool_frame", "tool_frame", 0.001);
    cr_assert_gt(max_yaw, 3.0, "the test should cross +-pi (max |yaw| %g)", max_yaw);
    rb_dyn_free(ws);
    rb_model_free(m);
    rb_log_free(log);
    free(dir), free(scn), free(out);
}

/* ---- contact events and the payload -------------------------------------------------------------------------- */
Test(cli_simulate, events_and_payload_reach_the_log)
{
    char *dir = test_tmpdir(), *out = test_path(dir, "e.h5");
    char *scn =
        arm_scenario(dir, "e.json",
                     "\"duration\": 0.3, \"q0\": {\"shoulder_pitch\": 0.5, \"elbow\": 0.8},"
                     " \"controller\": {\"kind\": \"pd\", \"gains\": {\"shoulder_yaw\": {\"kp\": 50, \"kd\": 5},"
                     " \"shoulder_pitch\": {\"kp\": 50, \"kd\": 5}, \"elbow\": {\"kp\": 50, \"kd\": 5},"
                     " \"wrist_roll\": {\"kp\": 5, \"kd\": 0.5}}},"
                     " \"contacts\": [{\"frame\": \"hand\", \"dim\": 3, \"active\": false}],"
                     " \"events\": [{\"t\": 0.1, \"contact\": \"hand\", \"active\": true},"
                     " {\"t\": 0.2, \"contact\": 0, \"active\": false}],"
                     " \"payload\": {\"link\": \"forearm\", \"kind\": \"steps\", \"t0\": 0.15,"
                     " \"added\": {\"mass\": 1.5, \"com\": [0.05, 0, 0.1]}}");
    simulate_ok(scn, out);
    rb_log *log = read_log(out);
    rb_model_opts mo = {.base = "base_link"};
    rb_model *m = load_model(RB_SOURCE "/datasets/arm_2ft.urdf", &mo);
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);

    /* the contact is on only between the events, and carries a force only then */
    const rb_channel *on = channel(log, "truth/contacts_active"), *w = channel(log, "truth/contacts/hand");
    cr_assert_eq(on->n_elements, 1);
    cr_assert_str_eq(on->element_names[0], "hand");
    double peak = 0;
    for (size_t k = 0; k < on->n_samples; k++) {
        double t = on->time[k];
        if (fabs(t - 0.1) < 1.5e-3 || fabs(t - 0.2) < 1.5e-3)
            continue;
        bool active = t > 0.1 && t < 0.2;
        cr_assert_eq(on->data[k], active ? 1.0 : 0.0, "t = %g", t);
        double f = sqrt(w->data[6 * k] * w->data[6 * k] + w->data[6 * k + 1] * w->data[6 * k + 1] +
                        w->data[6 * k + 2] * w->data[6 * k + 2]);
        if (!active)
            cr_assert_eq(f, 0.0, "t = %g: force without contact", t);
        peak = fmax(peak, f);
    }
    cr_assert_gt(peak, 1.0, "the pinned hand should carry load");

    /* the payload's parameters: the model's before t0, plus the added mass after (parallel axes by hand:
     * h = 1.5 (0.05, 0, 0.1); Ixx += 1.5 (0.01), Iyy += 1.5 (0.0125), Izz += 1.5 (0.0025), Ixz -= 1.5 (0.005)) */
    const rb_channel *pl = channel(log, "truth/payload/forearm");
    cr_assert_str_eq(pl->element_names[4], "Ixx");
    cr_assert_str_eq(pl->units[0], "kg");
    cr_assert_str_eq(pl->units[1], "kg m");
    cr_assert_str_eq(pl->units[9], "kg m^2");
    size_t fore = (size_t)rb_model_body_index(m, "forearm");
    const double *nominal = m->bodies[fore].inertia;
    const double added[10] = {1.5, 0.075, 0, 0.15, 0.015, 0, -0.0075, 0.01875, 0, 0.00375};
    for (size_t k = 0; k < pl->n_samples; k++)
        for (int i = 0; i < 10; i++) {
            double want = nominal[i] + (pl->time[k] >= 0.15 - 1e-9 ? added[i] : 0.0);
            cr_assert_float_eq(pl->data[10 * k + i], want, 1e-15, "t = %g, element %d", pl->time[k], i);
        }

    /* the plant's centre of mass: rb_dyn_com of the model before t0; after it, the model's moved towards the
     * added mass at the forearm's pose */
    const rb_channel *com = channel(log, "truth/com");
    double M = m->total_mass, q[8];
    for (size_t k = 0; k < com->n_samples; k += 7) {
        truth_q(log, m, k, q);
        double c[3];
        cr_assert_eq(rb_dyn_kinematics(m, ws, q, NULL, NULL, &err), RB_OK);
        cr_assert_eq(rb_dyn_com(m, ws, c, &err), RB_OK);
        if (com->time[k] >= 0.15 - 1e-9) {
            const rb_xform *X = rb_dyn_body_pose(ws, fore);
            double local[3] = {0.05, 0, 0.1}, p[3];
            rb_m3_mul_v(X->R, local, p);
            for (int i = 0; i < 3; i++)
                c[i] = (M * c[i] + 1.5 * (X->p[i] + p[i])) / (M + 1.5);
        }
        for (int i = 0; i < 3; i++)
            cr_assert_float_eq(com->data[3 * k + i], c[i], 1e-12, "t = %g, com[%d]", com->time[k], i);
    }
    rb_dyn_free(ws);
    rb_model_free(m);
    rb_log_free(log);
    free(dir), free(scn), free(out);
}

/* ---- the humanoid balancing on both feet ------------------------------------------------------------------- */
Test(cli_simulate, humanoid_balance_feet_stay_com_follows)
{
    char *dir = test_tmpdir(), *out = test_path(dir, "h.h5"), urdf[512];
    snprintf(urdf, sizeof urdf, "\"%s/datasets/humanoid_lower_body.urdf\"", RB_SOURCE);
    const char *from[] = {"\"duration\": 10.0", "\"../../datasets/humanoid_lower_body.urdf\"",
                          "{\"kind\": \"orientation\", \"frame\": \"waist_imu\"}"};
    const char *to[] = {"\"duration\": 3.0", urdf,
                        "{\"kind\": \"orientation\", \"frame\": \"waist_imu\", \"noise\": 0}"};
    char *scn = copy_with(HUMANOID_BALANCE, dir, "humanoid_balance.json", from, to, 3);
    simulate_ok(scn, out);
    rb_log *log = read_log(out);
    rb_model_opts mo = {.floating = true};
    rb_model *m = load_model(RB_SOURCE "/datasets/humanoid_lower_body.urdf", &mo);
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);

    /* every FT sensor, the IMUs, the truth */
    for (size_t i = 0; i < m->n_ft; i++) {
        char name[256];
        snprintf(name, sizeof name, "FTs/%s", m->ft[i].name);
        expect_channel(log, name, 6, "fx", "N");
    }
    const char *imus[] = {"waist_imu", "l_foot_imu", "r_foot_imu"};
    for (int i = 0; i < 3; i++) {
        char name[256];
        snprintf(name, sizeof name, "accelerometers/%s", imus[i]);
        expect_channel(log, name, 3, "x", "m/s^2");
        snprintf(name, sizeof name, "gyros/%s", imus[i]);
        expect_channel(log, name, 3, "x", "rad/s");
    }
    expect_channel(log, "orientations/waist_imu", 3, "roll", "rad");
    expect_channel(log, "truth/contacts/l_sole", 6, "fx", "N");
    expect_channel(log, "truth/contacts/r_sole", 6, "fx", "N");
    expect_channel(log, "truth/com", 3, "x", "m");
    expect_channel(log, "joints_state/positions", 15, "torso_pitch", "rad");
    expect_orientation_truth(log, m, ws, "orientations/waist_imu", "waist_imu", 0.001);

    /* the feet stay put; the contacts hold the robot's weight; the CoM follows 0.025 sin(2 pi 0.25 t) sideways */
    const rb_channel *com = channel(log, "truth/com"), *l = channel(log, "truth/contacts/l_sole"),
                     *r = channel(log, "truth/contacts/r_sole"), *on = channel(log, "truth/contacts_active");
    size_t soles[2] = {(size_t)rb_model_frame_index(m, "l_sole"), (size_t)rb_model_frame_index(m, "r_sole")};
    rb_xform start[2];
    double q[32], worst_foot = 0, worst_com = 0, weight = m->total_mass * 9.81;
    for (size_t k = 0; k < com->n_samples; k++) {
        cr_assert(on->data[2 * k] == 1 && on->data[2 * k + 1] == 1);
        double fz = l->data[6 * k + 2] + r->data[6 * k + 2];
        cr_assert(fabs(fz - weight) < 0.05 * weight, "t = %g: contacts carry %g N of %g", com->time[k], fz, weight);
        if (k % 10)
            continue;
        truth_q(log, m, k, q);
        cr_assert_eq(rb_dyn_kinematics(m, ws, q, NULL, NULL, &err), RB_OK);
        for (int f = 0; f < 2; f++) {
            rb_xform X;
            cr_assert_eq(rb_dyn_frame_pose(m, ws, soles[f], &X, &err), RB_OK);
            if (k == 0)
                start[f] = X;
            for (int i = 0; i < 3; i++)
                worst_foot = fmax(worst_foot, fabs(X.p[i] - start[f].p[i]));
            for (int i = 0; i < 9; i++)
                worst_foot = fmax(worst_foot, fabs(X.R[i] - start[f].R[i]));
        }
        double c[3]; /* the logged CoM against rb_dyn_com (no payload here) */
        cr_assert_eq(rb_dyn_com(m, ws, c, &err), RB_OK);
        for (int i = 0; i < 3; i++)
            cr_assert_float_eq(com->data[3 * k + i], c[i], 1e-12);
        double t = com->time[k], want = com->data[1] + 0.025 * sin(2 * M_PI * 0.25 * t);
        if (t >= 1.0)
            worst_com = fmax(worst_com, fabs(com->data[3 * k + 1] - want));
        cr_assert_lt(fabs(com->data[3 * k] - com->data[0]), 2e-3, "CoM x moved at t = %g", t);
        cr_assert_lt(fabs(com->data[3 * k + 2] - com->data[2]), 2e-3, "CoM z moved at t = %g", t);
    }
    cr_assert_lt(worst_foot, 1e-6, "a foot moved by %g", worst_foot);
    cr_assert_lt(worst_com, 3e-3, "CoM off the sine by %g m", worst_com);
    /* the soles start on the ground plane z = 0 (base_pose of the example) */
    cr_assert_lt(fabs(start[0].p[2]), 1e-4);
    cr_assert_lt(fabs(start[1].p[2]), 1e-4);
    rb_dyn_free(ws);
    rb_model_free(m);
    rb_log_free(log);
    free(dir), free(scn), free(out);
}

/* ---- ergoCub's right leg on a pole ------------------------------------------------------------------------------- */
Test(cli_simulate, ergocub_leg_on_a_pole)
{
    test_need_shared("models/ergoCubSN000.urdf");
    char *dir = test_tmpdir(), *out = test_path(dir, "ergocub.mat"), urdf[512];
    snprintf(urdf, sizeof urdf, "\"%s/models/ergoCubSN000.urdf\"", RB_SHARED);
    const char *from[] = {"\"duration\": 10.0", "\"../../../shared/models/ergoCubSN000.urdf\""};
    const char *to[] = {"\"duration\": 0.5", urdf};
    char *scn = copy_with(ERGOCUB_LEG_POLE, dir, "ergocub_leg_pole.json", from, to, 2);
    simulate_ok(scn, out);
    rb_log *log = read_log(out);
    cr_assert_str_eq(rb_log_get_attr(log, "yarp_robot_name"), "ergoCub");
    const char *joint_channels[] = {
        "joints_state/positions", "joints_state/velocities",       "motors_state/positions", "motors_state/currents",
        "truth/joints/torques",   "truth/joints/friction_torques", "truth/motors/torques"};
    for (int i = 0; i < 7; i++) {
        expect_channel(log, joint_channels[i], 6, "r_hip_pitch", rb_log_find(log, joint_channels[i])->units[0]);
        cr_assert_eq(channel(log, joint_channels[i])->n_samples, 501, "%s", joint_channels[i]);
    }
    const char *fts[] = {"FTs/r_leg_ft_sensor", "FTs/r_foot_front_ft_sensor", "FTs/r_foot_rear_ft_sensor"};
    for (int i = 0; i < 3; i++)
        expect_channel(log, fts[i], 6, "fx", "N");
    const char *parts[] = {"r_leg_ft", "r_foot_front_ft", "r_foot_rear_ft"};
    for (int i = 0; i < 3; i++) {
        char name[128];
        snprintf(name, sizeof name, "accelerometers/%s_acc", parts[i]);
        expect_channel(log, name, 3, "x", "m/s^2");
        cr_assert_eq(channel(log, name)->n_samples, 51);
        snprintf(name, sizeof name, "gyros/%s_gyro", parts[i]);
        expect_channel(log, name, 3, "x", "rad/s");
    }
    expect_channel(log, "orientations/r_foot_front_ft_imu", 3, "roll", "rad");
    expect_channel(log, "orientations/waist_imu_0", 3, "roll", "rad");
    expect_channel(log, "accelerometers/waist_imu_0", 3, "x", "m/s^2");
    /* the leg tracks its references under torque control, and the current model holds */
    const rb_channel *q = channel(log, "truth/joints/positions"), *r = channel(log, "truth/joints/references");
    for (size_t k = 0; k < q->n_samples * 6; k++)
        cr_assert_lt(fabs(q->data[k] - r->data[k]), 0.02);
    double span = 0;
    for (size_t k = 0; k < q->n_samples; k++)
        span = fmax(span, fabs(q->data[6 * k + 3] - q->data[3]));
    cr_assert_gt(span, 0.1, "the knee should move (%g rad)", span);
    expect_current_model(log, 6, (const double[]){0.111, 0.047, 0.047, 0.111, 0.111, 0.025},
                         (const double[]){100, -160, 100, 100, 100, 160},
                         (const double[]){8.3e-6, 3.5e-6, 3.5e-6, 8.3e-6, 8.3e-6, 1.8e-6});
    rb_log_free(log);
    free(dir), free(scn), free(out);
}

/* ---- the humanoid's leg on a pole, free and pressing on the ground ----------------------------------------- */
static rb_log *run_leg_example(const char *dir, const char *file)
{
    char src[512], name[128], urdf[512], out_name[128];
    snprintf(src, sizeof src, "%s/configs/scenarios/%s.json", RB_SOURCE, file);
    snprintf(name, sizeof name, "%s.json", file);
    snprintf(out_name, sizeof out_name, "%s.h5", file);
    snprintf(urdf, sizeof urdf, "\"%s/datasets/humanoid_lower_body.urdf\"", RB_SOURCE);
    const char *from[] = {"\"duration\": 10.0", "\"../../datasets/humanoid_lower_body.urdf\""};
    const char *to[] = {"\"duration\": 0.5", urdf};
    char *scn = copy_with(src, dir, name, from, to, 2), *out = test_path(dir, out_name);
    simulate_ok(scn, out);
    rb_log *log = read_log(out);
    free(scn), free(out);
    return log;
}

Test(cli_simulate, leg_pole_examples)
{
    char *dir = test_tmpdir();
    rb_log *log = run_leg_example(dir, "leg_pole");
    const rb_channel *q = channel(log, "truth/joints/positions"), *r = channel(log, "truth/joints/references");
    cr_assert_eq(q->n_elements, 6);
    for (size_t k = 0; k < q->n_samples * 6; k++)
        cr_assert_lt(fabs(q->data[k] - r->data[k]), 0.02, "tracking error at %zu", k);
    expect_channel(log, "orientations/r_foot_imu", 3, "roll", "rad");
    rb_log_free(log);

    /* on the ground: the sole holds (six constraints on six joints: nothing moves) and the ground pushes up */
    log = run_leg_example(dir, "leg_pole_ground");
    q = channel(log, "truth/joints/positions");
    const rb_channel *w = channel(log, "truth/contacts/r_sole");
    for (size_t k = 0; k < q->n_samples; k++) {
        for (int j = 0; j < 6; j++)
            cr_assert_lt(fabs(q->data[6 * k + j] - q->data[j]), 1e-9);
        cr_assert_gt(w->data[6 * k + 2], 5.0, "t = %g: fz %g", w->time[k], w->data[6 * k + 2]);
    }
    rb_log_free(log);
    free(dir);
}

/* ---- gear compliance and joint limits in the log ------------------------------------------------------------- */
Test(cli_simulate, gear_windup_and_joint_limits)
{
    /* the elbow is asked to go below its lower limit 0; the shoulder pitch's gear is compliant */
    char *dir = test_tmpdir(), *out = test_path(dir, "g.h5");
    char *scn = arm_scenario(
        dir, "g.json",
        "\"duration\": 1, \"joint_limits\": true, \"q0\": {\"shoulder_pitch\": 0.3, \"elbow\": 0.3},"
        " \"controller\": {\"kind\": \"pd\", \"gravity_comp\": true, \"gains\": {"
        "\"shoulder_pitch\": {\"kp\": 200, \"kd\": 20}, \"elbow\": {\"kp\": 100, \"kd\": 10}}},"
        " \"references\": {\"elbow\": {\"kind\": \"sine\", \"offset\": 0.3, \"amplitude\": 0.8,"
        " \"freq\": 1, \"phase\": 3.141592653589793}, \"shoulder_pitch\": {\"kind\": \"sine\","
        " \"offset\": 0.3, \"amplitude\": 0.3, \"freq\": 0.8}},"
        " \"actuators\": {\"shoulder_pitch\": {\"k_t\": 0.05, \"R\": 160, \"J_m\": 1e-5, \"k_gear\": 3000},"
        " \"elbow\": {\"k_t\": 0.05, \"R\": -100, \"J_m\": 8e-6}}");
    simulate_ok(scn, out);
    rb_log *log = read_log(out);
    const rb_channel *s = channel(log, "truth/joints/positions"), *lim = channel(log, "truth/joints/at_limit"),
                     *th = channel(log, "truth/motors/positions"), *tj = channel(log, "truth/joints/torques"),
                     *tf = channel(log, "truth/joints/friction_torques");
    cr_assert_str_eq(lim->element_names[2], "elbow");
    size_t on_limit = 0;
    double windup = 0;
    for (size_t k = 0; k < s->n_samples; k++) {
        double elbow = s->data[4 * k + 2];
        cr_assert_geq(elbow, 0.0, "t = %g: elbow %g below its limit", s->time[k], elbow);
        if (lim->data[4 * k + 2] == 1.0) {
            cr_assert_eq(elbow, 0.0);
            on_limit++;
        }
        /* rotor angle R (s + tau_g / k_gear), tau_g = tau_j + tau_F */
        double tau_g = tj->data[4 * k + 1] + tf->data[4 * k + 1];
        cr_assert_float_eq(th->data[4 * k + 1], 160 * (s->data[4 * k + 1] + tau_g / 3000), 1e-9);
        windup = fmax(windup, fabs(th->data[4 * k + 1] - 160 * s->data[4 * k + 1]));
        cr_assert_float_eq(th->data[4 * k + 2], -100 * elbow, 1e-12, "rigid gear");
    }
    cr_assert_gt(on_limit, 50, "the elbow should rest on its limit (%zu samples)", on_limit);
    cr_assert_gt(windup, 0.05, "the compliant gear should wind up (%g rad at the rotor)", windup);
    rb_log_free(log);
    free(dir), free(scn), free(out);
}
