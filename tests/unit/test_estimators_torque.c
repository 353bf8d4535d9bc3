/* The model-based joint-torque stages: rnea_torque (the RNEA baseline) and ukf_torque (the joint-torque paper's
 * UKF) on whole runs, their errors and their allocations, on logs recorded from the simulation engine's truth
 * (sim.h; torque_support.h), with noise added where a test says so. The truth is the second computation: the
 * simulator integrates the whole robot (its own forward dynamics with rotor inertias, friction, contacts and
 * pushes), and its joint torques satisfy the RNEA with the true contact and push wrenches; the FT readings, frame
 * accelerations and velocities come from its dynamics core calls. The UKF's models at the true state are in
 * test_estimators_torque_models.c.
 *
 * Scenario: the arm_2ft model on a pole (two FT sensors, hand IMU), PD control with gravity compensation so the
 * arm starts at rest (the start-up FT offset calibration assumes it), chirp references from 0.3 s, rotor
 * inertias and friction as configs/scenarios/arm_pole.json; with a push on the forearm for the contact tests. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "torque_support.h"

/* ---- rnea_torque ------------------------------------------------------------------------------------------------ */

static const char RNEA_PIPE[] = "{%s \"stages\": [{\"id\": \"rnea\", \"type\": \"rnea_torque\","
                                " \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"ddq\": \"ddq\", \"ft\": \"ft\"},"
                                " \"out\": {\"tau\": \"tau\", \"contacts\": \"w\", \"ft_offset\": \"off\"},"
                                " \"params\": {\"ft_sensors\": [\"upper_arm_ft_sensor\", \"wrist_ft_sensor\"]%s}}],"
                                " \"outputs\": [{\"path\": \"x.h5\", \"signals\": [\"tau\", \"w\", \"off\"]}]}";

/* Noise-free: the RNEA inside each sub-model with the measured FT wrenches reproduces the simulator's joint
 * torques (tau_m - tau_F - R^2 J_m ddq, the link side) and the offset calibration recovers the injected offset. */
Test(estimators_torque, rnea_reproduces_the_simulated_torques)
{
    noise_spec ns = {.ft_offset = {1.5, -0.8, 2.0, 0.05, -0.02, 0.01}};
    sim_rec r;
    record_arm(2.0, false, &ns, &r);
    static char text[8192];
    snprintf(text, sizeof text, RNEA_PIPE, ARM_SIGNALS, "");
    rb_run_result *res = run_text(text, r.log);
    const double *tau = run_signal(res, "tau", 4), *off = run_signal(res, "off", 12), *w = run_signal(res, "w", 6);
    double scale = 0;
    for (size_t i = 0; i < r.T * 4; i++)
        scale = fmax(scale, fabs(r.tau_j[i]));
    double e = max_err(tau, r.tau_j, 4, 0, r.T) / scale;
    cr_log_info("rnea_torque, noise-free arm: max |tau error| / max |tau| = %.3g (max |tau| %.3g N m)", e, scale);
    cr_assert(e < 1e-9, "relative error %g", e);
    for (int i = 0; i < 6; i++) {
        cr_assert(fabs(off[(r.T - 1) * 12 + (size_t)i] - ns.ft_offset[i]) < 1e-9, "offset %d: %g", i, off[i]);
        cr_assert(fabs(off[6 + (size_t)i]) < 1e-9);
    }
    /* the default contact: the mounting wrench at the base link, in its frame: holds the arm's weight */
    double fz_mean = 0;
    for (size_t k = 0; k < r.T; k++)
        fz_mean += w[k * 6 + 2] / (double)r.T;
    cr_assert(fabs(fz_mean - r.model->total_mass * 9.81) < 0.5, "mount fz %g vs weight %g", fz_mean,
              r.model->total_mass * 9.81);
    rb_run_result_free(res);
    rec_free(&r);
}

/* A push at the wrist (between the two FTs): listed as a contact, it is recovered exactly (BODY at the frame) and
 * the torques stay exact; not listed, the elbow's torque is off by J^T f during the push. */
Test(estimators_torque, rnea_recovers_one_unknown_contact)
{
    sim_rec r;
    record_arm(2.0, true, NULL, &r);
    static char text[8192];
    snprintf(text, sizeof text, RNEA_PIPE, ARM_SIGNALS, ", \"contacts\": [\"base_link\", \"wrist\"]");
    rb_run_result *res = run_text(text, r.log);
    const double *tau = run_signal(res, "tau", 4), *w = run_signal(res, "w", 12);
    cr_assert(max_err(tau, r.tau_j, 4, 0, r.T) < 1e-9, "torques %g", max_err(tau, r.tau_j, 4, 0, r.T));
    /* the push in the forearm's axes: R^T of its MIXED wrench */
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(r.model, &ws, &err), RB_OK);
    size_t f = (size_t)rb_model_frame_index(r.model, "wrist");
    double emax = 0, pmax = 0;
    for (size_t k = 0; k < r.T; k += 10) {
        rb_xform X;
        double pb[6];
        cr_assert_eq(rb_dyn_kinematics(r.model, ws, r.q + k * r.nq, NULL, NULL, &err), RB_OK);
        cr_assert_eq(rb_dyn_frame_pose(r.model, ws, f, &X, &err), RB_OK);
        rb_m3t_mul_v(X.R, r.push + 6 * k, pb);
        rb_m3t_mul_v(X.R, r.push + 6 * k + 3, pb + 3);
        for (int i = 0; i < 6; i++)
            emax = fmax(emax, fabs(w[k * 12 + 6 + (size_t)i] - pb[i])), pmax = fmax(pmax, fabs(pb[i]));
    }
    cr_log_info("rnea_torque, push at the wrist listed: contact wrench max error %.3g (push up to %.3g)", emax, pmax);
    cr_assert(pmax > 10 && emax < 1e-8 * pmax, "contact %g of %g", emax, pmax);
    rb_run_result_free(res);
    /* not listed: the elbow torque misses the push */
    snprintf(text, sizeof text, RNEA_PIPE, ARM_SIGNALS, "");
    res = run_text(text, r.log);
    tau = run_signal(res, "tau", 4);
    double e_elbow = max_err(tau + 2, r.tau_j + 2, 4, 1000, 1600);
    cr_log_info("rnea_torque, push not listed: elbow max error %.3g N m during the push", e_elbow);
    cr_assert(e_elbow > 0.5, "the unlisted push should show: %g", e_elbow);
    rb_run_result_free(res);
    rb_dyn_free(ws);
    rec_free(&r);
}

/* ---- ukf_torque: pipelines, a stage outside a run --------------------------------------------------------------- */

/* The arm's actuators as ukf_torque parameters (as the scenario's). */
static const char ARM_UKF_ACTUATORS[] = "\"k_t\": [0.05, 0.05, 0.05, 0.04], \"gear_ratio\": [-100, 160, -100, 100], "
                                        "\"motor_inertia\": [1e-5, 1e-5, 8e-6, 5e-6]";

/* Pipeline text of a ukf_torque stage on the arm. */
static const char UKF_PIPE[] =
    "{%s \"stages\": [{\"id\": \"ukf\", \"type\": \"ukf_torque\","
    " \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"current\": \"cur\", \"ft\": \"ft\", \"acc\": \"acc\", \"gyro\": "
    "\"gyro\"%s},"
    " \"out\": {\"tau_j\": \"tau\", \"tau_f\": \"tf\", \"tau_m\": \"tm\", \"nis\": \"nis\", \"var\": \"var\", "
    "\"ddq\": \"ddq_ukf\", \"contacts\": \"w\", \"innovation\": \"inno\"},"
    " \"params\": {\"ft_sensors\": [\"upper_arm_ft_sensor\", \"wrist_ft_sensor\"], \"accelerometers\": [\"hand_acc\", "
    "\"forearm\"], \"gyroscopes\": [\"hand_gyro\"], %s%s}}],"
    " \"outputs\": [{\"path\": \"x.h5\", \"signals\": [\"tau\", \"tf\", \"tm\", \"nis\", \"var\", \"ddq_ukf\", \"w\", "
    "\"inno\"]}]}";

/* A ukf_torque stage made outside a run from a pipeline's stage 0 (ports of the given widths). */
typedef struct stage_h {
    rb_registry *reg;
    rb_pipeline *p;
    rb_params params;
    rb_port in[7], out[16];
    void *state;
    const rb_stage_type *ty;
} stage_h;

static int stage_make(stage_h *h, const char *text, const size_t widths[7], rb_err *err)
{
    memset(h, 0, sizeof *h);
    h->reg = registry();
    int rc = rb_pipeline_load_text(text, strlen(text), "t", NULL, h->reg, &h->p, err);
    if (rc)
        return rc;
    h->ty = h->p->stages[0].type;
    h->params = (rb_params){h->ty, h->p->stages[0].params};
    for (int i = 0; i < 7; i++)
        h->in[i] = (rb_port){widths[i], NULL, NULL};
    double t0 = 0;
    rb_stage_setup st = {"ukf", &h->params, h->in, h->out, 1e-3, 1, &t0, h->p->model, "."};
    return h->ty->create(&st, &h->state, err);
}

static void stage_free(stage_h *h)
{
    if (h->state)
        h->ty->destroy(h->state);
    rb_pipeline_free(h->p);
    rb_registry_free(h->reg);
}

/* ---- ukf_torque on whole runs -------------------------------------------------------------------------------- */

/* Noise-free data: after the start-up (0.5 s) the estimate follows the true joint torques (the filter's only error
 * is its lag at the velocity step where the chirps start, 0.3 s, and the Euler step of the process). */
Test(estimators_torque, ukf_converges_on_noise_free_data)
{
    sim_rec r;
    record_arm(3.0, false, NULL, &r);
    static char text[8192];
    snprintf(text, sizeof text, UKF_PIPE, ARM_SIGNALS, "", ARM_UKF_ACTUATORS,
             ", \"q_dq\": [1e-6], \"q_tau_m\": [1e-4], \"q_tau_f\": [1e-3], \"q_ft\": [1e-2], \"r_dq\": [1e-8], "
             "\"r_current\": [1e-6], \"r_ft\": [1e-4], \"r_acc\": [1e-4], \"r_gyro\": [1e-6]");
    rb_run_result *res = run_text(text, r.log);
    const double *tau = run_signal(res, "tau", 4), *tf = run_signal(res, "tf", 4), *nis = run_signal(res, "nis", 1);
    double e = rmse(tau, r.tau_j, 4, SIZE_MAX, 500, r.T), emax = max_err(tau, r.tau_j, 4, 500, r.T);
    double ef = rmse(tf, r.tau_f, 4, SIZE_MAX, 500, r.T), scale = 0, nis_mean = 0;
    for (size_t k = 500; k < r.T; k++)
        for (size_t i = 0; i < 4; i++)
            scale = fmax(scale, fabs(r.tau_j[k * 4 + i]));
    for (size_t k = 500; k < r.T; k++)
        nis_mean += nis[k] / (double)(r.T - 500);
    cr_log_info("ukf_torque, noise-free arm after 0.5 s: tau_j RMSE %.4g N m, max %.4g (of %.3g), tau_F RMSE %.4g; "
                "mean NIS %.3g",
                e, emax, scale, ef, nis_mean);
    cr_assert(e < 0.01 && emax < 0.2, "tau_j RMSE %g max %g", e, emax);
    cr_assert(ef < 0.05, "tau_F RMSE %g", ef);
    rb_run_result_free(res);
    rec_free(&r);
}

static const char UKF_TUNING[] =
    ", \"q_dq\": [1e-6], \"q_tau_m\": [1e-3], \"q_tau_f\": [1e-3], \"q_ft\": [1e-3, 1e-3, 1e-3, 1e-5, 1e-5, 1e-5], "
    "\"q_contact\": [1e-2], \"p0_contact\": [1e-2], \"r_dq\": [1e-4], \"r_current\": [4e-4], \"r_ft\": [0.25, 0.25, "
    "0.25, 4e-4, 4e-4, 4e-4], \"r_acc\": [2.5e-3], \"r_gyro\": [2.5e-5]";
/* r_friction only with the friction input wired (without it, a configuration error) */
static const char FRIC_IN[] = ", \"friction\": \"fric\"";
static const char UKF_TUNING_FRIC[] =
    ", \"q_dq\": [1e-6], \"q_tau_m\": [1e-3], \"q_tau_f\": [1e-3], \"q_ft\": [1e-3, 1e-3, 1e-3, 1e-5, 1e-5, 1e-5], "
    "\"q_contact\": [1e-2], \"p0_contact\": [1e-2], \"r_dq\": [1e-4], \"r_current\": [4e-4], \"r_ft\": [0.25, 0.25, "
    "0.25, 4e-4, 4e-4, 4e-4], \"r_acc\": [2.5e-3], \"r_gyro\": [2.5e-5], \"r_friction\": [2.5e-3]";

/* Sensor noise of the realistic runs: velocity 0.01 rad/s, current 0.02 A (0.16 N m of motor torque at the
 * shoulder), FT 0.5 N / 0.02 N m, accelerometer 0.05 m/s^2, gyroscope 0.005 rad/s, the friction measurement (a
 * friction model's output) 0.05 N m off the truth. */
static const noise_spec ARM_NOISE = {.dq = 0.01,
                                     .current = 0.02,
                                     .ft_force = 0.5,
                                     .ft_moment = 0.02,
                                     .acc = 0.05,
                                     .gyro = 0.005,
                                     .friction = 0.05,
                                     .seed = 99};

/* The paper's key result: measuring tau_F (with a friction model's accuracy) anchors the friction block, so the
 * friction estimate follows the truth and the joint torque error drops. Measured (4 s, RMSE after 0.5 s): without
 * the friction input tau_j 0.176 N m (elbow 0.326), tau_F 0.172; with it tau_j 0.087 (elbow 0.124), tau_F 0.033.
 * Asserted: tau_F better by 3x, tau_j by 1.5x. */
Test(estimators_torque, friction_measurement_improves_the_estimate)
{
    sim_rec r;
    record_arm(4.0, false, &ARM_NOISE, &r);
    static char text[8192];
    double e[2], ef[2], e_elbow[2];
    for (int fric = 0; fric < 2; fric++) {
        snprintf(text, sizeof text, UKF_PIPE, ARM_SIGNALS, fric ? FRIC_IN : "", ARM_UKF_ACTUATORS,
                 fric ? UKF_TUNING_FRIC : UKF_TUNING);
        rb_run_result *res = run_text(text, r.log);
        const double *tau = run_signal(res, "tau", 4), *tf = run_signal(res, "tf", 4);
        e[fric] = rmse(tau, r.tau_j, 4, SIZE_MAX, 500, r.T);
        ef[fric] = rmse(tf, r.tau_f, 4, SIZE_MAX, 500, r.T);
        e_elbow[fric] = rmse(tau, r.tau_j, 4, 2, 500, r.T);
        rb_run_result_free(res);
    }
    cr_log_info("noisy arm, RMSE after 0.5 s: without friction input tau_j %.4f (elbow %.4f), tau_F %.4f; with it "
                "tau_j %.4f (elbow %.4f), tau_F %.4f N m",
                e[0], e_elbow[0], ef[0], e[1], e_elbow[1], ef[1]);
    cr_assert(ef[1] < ef[0] / 3, "tau_F %g vs %g", ef[1], ef[0]);
    cr_assert(e[1] < e[0] / 1.5, "tau_j %g vs %g", e[1], e[0]);
    rec_free(&r);
}

static const char PUSH_PIPE[] =
    "{%s \"stages\": ["
    " {\"id\": \"kfd\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"}, \"out\": {\"x_dot\": \"dq_kf\", "
    "\"x_ddot\": "
    "\"ddq_kf\"}, \"params\": {\"q\": [1e4], \"r\": [1e-8]}},"
    " {\"id\": \"rnea\", \"type\": \"rnea_torque\", \"in\": {\"q\": \"q\", \"dq\": \"dq_kf\", \"ddq\": \"ddq_kf\", "
    "\"ft\": "
    "\"ft\"}, \"out\": {\"tau\": \"tau_rnea\"}, \"params\": {\"ft_sensors\": [\"upper_arm_ft_sensor\", "
    "\"wrist_ft_sensor\"]}},"
    " {\"id\": \"ukf\", \"type\": \"ukf_torque\", \"in\": {\"q\": \"q\", \"dq\": \"dq_kf\", \"current\": \"cur\", "
    "\"ft\": "
    "\"ft\", \"acc\": \"acc\", \"gyro\": \"gyro\"%s}, \"out\": {\"tau_j\": \"tau_ukf\"},"
    " \"params\": {\"ft_sensors\": [\"upper_arm_ft_sensor\", \"wrist_ft_sensor\"], \"accelerometers\": [\"hand_acc\", "
    "\"forearm\"], \"gyroscopes\": [\"hand_gyro\"], %s%s}}],"
    " \"outputs\": [{\"path\": \"x.h5\", \"signals\": [\"tau_rnea\", \"tau_ukf\"]}]}";

/* An unmeasured push at the wrist (not in either estimator's contacts), velocities and accelerations from
 * kf_derivative on encoder-like positions (noise 1e-4 rad) for both. The RNEA misses the push's torque and
 * differentiates twice; the UKF's joint torque is the measured motor torque minus the friction estimate, which the
 * friction input anchors. Measured (3 s, RMSE after 0.5 s / during the push 1.0-1.6 s / elbow during the push):
 * RNEA 0.270 / 0.276 / 0.504 N m; UKF with the friction input 0.096 / 0.132 / 0.103; without it 0.168 / 0.171 /
 * 0.230. Asserted: the UKF with the friction input below the RNEA on all three. */
Test(estimators_torque, ukf_beats_rnea_on_an_unmeasured_push)
{
    noise_spec ns = ARM_NOISE;
    ns.q = 1e-4;
    sim_rec r;
    record_arm(3.0, true, &ns, &r);
    static char text[8192];
    double ru[2][3], rr[3];
    for (int fric = 0; fric < 2; fric++) {
        snprintf(text, sizeof text, PUSH_PIPE, ARM_SIGNALS, fric ? FRIC_IN : "", ARM_UKF_ACTUATORS,
                 fric ? UKF_TUNING_FRIC : UKF_TUNING);
        rb_run_result *res = run_text(text, r.log);
        const double *tr_ = run_signal(res, "tau_rnea", 4), *tu = run_signal(res, "tau_ukf", 4);
        rr[0] = rmse(tr_, r.tau_j, 4, SIZE_MAX, 500, r.T), rr[1] = rmse(tr_, r.tau_j, 4, SIZE_MAX, 1000, 1600);
        rr[2] = rmse(tr_, r.tau_j, 4, 2, 1000, 1600);
        ru[fric][0] = rmse(tu, r.tau_j, 4, SIZE_MAX, 500, r.T),
        ru[fric][1] = rmse(tu, r.tau_j, 4, SIZE_MAX, 1000, 1600);
        ru[fric][2] = rmse(tu, r.tau_j, 4, 2, 1000, 1600);
        rb_run_result_free(res);
    }
    cr_log_info("unmeasured push, RMSE all / push / elbow in push: RNEA %.4f / %.4f / %.4f; UKF + friction %.4f / %.4f "
                "/ %.4f; UKF alone %.4f / %.4f / %.4f",
                rr[0], rr[1], rr[2], ru[1][0], ru[1][1], ru[1][2], ru[0][0], ru[0][1], ru[0][2]);
    for (int i = 0; i < 3; i++)
        cr_assert(ru[1][i] < rr[i], "measure %d: UKF %g vs RNEA %g", i, ru[1][i], rr[i]);
    rec_free(&r);
}

/* ---- bad inputs -------------------------------------------------------------------------------------------------- */

static void expect_error(const char *text, const rb_log *log, int code, const char *const *parts)
{
    rb_err err;
    int rc = run_error(text, log, &err);
    cr_assert_eq(rc, code, "rc %d (expected %d): %s", rc, code, rc ? err.msg : "");
    for (size_t i = 0; parts[i]; i++)
        cr_assert(strstr(err.msg, parts[i]), "'%s' lacks '%s'", err.msg, parts[i]);
    cr_assert_null(strchr(err.msg, '\n'));
}

/* dst = src with the first `from` replaced by `to` (which must be there). */
static void subst(char *dst, size_t size, const char *src, const char *from, const char *to)
{
    const char *at = strstr(src, from);
    cr_assert_not_null(at, "'%s' not in the text", from);
    int len = snprintf(dst, size, "%.*s%s%s", (int)(at - src), src, to, at + strlen(from));
    cr_assert(len > 0 && (size_t)len < size);
}

/* Configuration errors are RB_ECONFIG naming the item (with the closest name for a misspelt one); numeric blow-ups
 * are RB_ENUMERIC naming the stage, the sample and the block of the state or measurement. */
Test(estimators_torque, bad_inputs)
{
    sim_rec r;
    record_arm(0.05, false, NULL, &r);
    static char base[8192], text[8192];
    snprintf(base, sizeof base, UKF_PIPE, ARM_SIGNALS, "", ARM_UKF_ACTUATORS, "");
    const char *params_end = ", \"motor_inertia\": [1e-5, 1e-5, 8e-6, 5e-6]";
#define UKF_CASE(extra_params, code, ...)                                                                              \
    do {                                                                                                               \
        char with[512];                                                                                                \
        snprintf(with, sizeof with, "%s%s", params_end, extra_params);                                                 \
        subst(text, sizeof text, base, params_end, with);                                                              \
        expect_error(text, r.log, code, (const char *[]){__VA_ARGS__, NULL});                                          \
    } while (0)
    /* a misspelt FT sensor, contact, accelerometer frame: the item and a suggestion */
    subst(text, sizeof text, base, "[\"upper_arm_ft_sensor\", \"wrist_ft_sensor\"]",
          "[\"upper_arm_ft_sensor\", \"wrist_tf_sensor\"]");
    expect_error(
        text, r.log, RB_ECONFIG,
        (const char *[]){"stage ukf", "ft_sensors[1]", "wrist_tf_sensor", "did you mean 'wrist_ft_sensor'", NULL});
    UKF_CASE(", \"contacts\": [\"wirst\"]", RB_ECONFIG, "contacts[0]", "no frame 'wirst'", "did you mean 'wrist'");
    subst(text, sizeof text, base, "[\"hand_acc\", \"forearm\"]", "[\"hand_acx\", \"forearm\"]");
    expect_error(text, r.log, RB_ECONFIG, (const char *[]){"accelerometers[0]", "hand_acx", "did you mean", NULL});
    /* counts and values */
    UKF_CASE(", \"r_ft\": [1, 2]", RB_ECONFIG, "r_ft has 2 values", "1, 6");
    UKF_CASE(", \"q_dq\": [1, 2, 3]", RB_ECONFIG, "q_dq has 3 values", "give 1 or 4");
    UKF_CASE(", \"friction_dynamics\": \"rate_model\"", RB_ECONFIG, "rate_model", "friction_k0");
    UKF_CASE(", \"friction_k1\": [3]", RB_ECONFIG, "friction_k0, k1, k2 need");
    UKF_CASE(", \"base_imu\": \"hand_acc\"", RB_ECONFIG, "base_imu is for a floating base");
    subst(text, sizeof text, base, "\"gear_ratio\": [-100, 160, -100, 100]", "\"gear_ratio\": [-100, 0, -100, 100]");
    expect_error(text, r.log, RB_ECONFIG, (const char *[]){"gear_ratio[1] is 0", NULL});
    /* port widths: one sensor's channel for two sensors; the joints bound in another order */
    subst(text, sizeof text, base, "[\"ft/upper_arm_ft_sensor\", \"ft/wrist_ft_sensor\"]",
          "[\"ft/upper_arm_ft_sensor\"]");
    expect_error(text, r.log, RB_ECONFIG, (const char *[]){"input ft has 6 elements, expected 12", NULL});
    subst(
        text, sizeof text, base, "\"q\": {\"channel\": \"q\"}",
        "\"q\": {\"channel\": \"q\", \"elements\": [\"elbow\", \"shoulder_pitch\", \"shoulder_yaw\", \"wrist_roll\"]}");
    expect_error(text, r.log, RB_ECONFIG, (const char *[]){"input q: element 0 is 'elbow'", "shoulder_yaw", NULL});
    /* numeric blow-ups, named: an overflowing start covariance of dq; a huge one of tau_F that the accelerometers'
     * innovation covariance cannot resolve in double precision */
    UKF_CASE(", \"p0_dq\": [1e300]", RB_ENUMERIC, "stage ukf", "sample 0",
             "the state is not finite at block dq (joint shoulder_yaw)");
    UKF_CASE(", \"p0_tau_f\": [1e40]", RB_ENUMERIC, "sample 0",
             "innovation covariance lost positive definiteness at measurement acc/");
#undef UKF_CASE
    /* rnea_torque: a misspelt contact, an IMU frame without the IMU inputs; no model at all */
    snprintf(text, sizeof text, RNEA_PIPE, ARM_SIGNALS, ", \"contacts\": [\"base_lnk\"]");
    expect_error(text, r.log, RB_ECONFIG, (const char *[]){"contacts[0]", "did you mean 'base_link'", NULL});
    snprintf(text, sizeof text, RNEA_PIPE, ARM_SIGNALS, ", \"imu_frame\": \"hand_acc\"");
    expect_error(text, r.log, RB_ECONFIG,
                 (const char *[]){"imu_frame hand_acc is given but acc and gyro are not wired", NULL});
    snprintf(base, sizeof base, RNEA_PIPE, ARM_SIGNALS, "");
    subst(text, sizeof text, base, "\"model\": {\"urdf\": \"" ARM_URDF "\", \"base\": \"base_link\"}, ", "");
    expect_error(text, r.log, RB_ECONFIG, (const char *[]){"stage rnea", "needs the pipeline's \"model\" key", NULL});
    rec_free(&r);
}

/* step() of both stages allocates nothing (rb_malloc and the C library, OpenBLAS included, single-threaded as the
 * CLI runs it); the UKF with every optional block (friction input, contacts, biases, rate model, decay) and the
 * jump adaptation on every block with a gate low enough to repeat many updates. */
Test(estimators_torque, steps_allocate_nothing)
{
    sim_rec r;
    record_arm(0.3, true, &ARM_NOISE, &r);
    static char text[8192];
    snprintf(
        text, sizeof text, UKF_PIPE, ARM_SIGNALS, ", \"friction\": \"fric\"", ARM_UKF_ACTUATORS,
        ", \"contacts\": [\"wrist\"], \"ft_bias\": true, \"acc_bias\": true, \"gyro_bias\": true, "
        "\"friction_dynamics\": \"rate_model\", \"friction_k0\": [0.3], \"friction_k1\": [10], \"friction_k2\": "
        "[0.5], \"contact_decay\": 2, \"adapt_probability\": 0.5, \"adapt_blocks\": [\"tau_m\", \"tau_f\", \"ft\"]");
    size_t widths[7] = {4, 4, 4, 12, 6, 3, 4};
    stage_h h;
    rb_err err;
    cr_assert_eq(stage_make(&h, text, widths, &err), RB_OK, "%s", err.msg);
    const char *ch[7] = {"q", "dq", "current", NULL, NULL, "gyro/hand_gyro", "friction"};
    double *in[7], *out[16];
    const double *cin[7];
    for (int i = 0; i < 7; i++)
        cin[i] = in[i] = calloc(widths[i] + 1, sizeof(double));
    for (size_t j = 0; j < h.ty->n_outputs; j++)
        out[j] = calloc(h.out[j].width + 1, sizeof(double));
    size_t o_adapt = 0, triggers = 0;
    while (strcmp(h.ty->outputs[o_adapt], "adapt") != 0)
        o_adapt++;
    cr_assert_eq(h.out[o_adapt].width, 2);
    test_alloc_count_init();
    long counted = 0, rb_calls = 0;
    for (size_t k = 0; k < r.T; k++) {
        for (int i = 0; i < 7; i++)
            if (ch[i])
                memcpy(in[i], rb_log_find(r.log, ch[i])->data + k * widths[i], widths[i] * sizeof(double));
        memcpy(in[3], rb_log_find(r.log, "ft/upper_arm_ft_sensor")->data + 6 * k, 6 * sizeof(double));
        memcpy(in[3] + 6, rb_log_find(r.log, "ft/wrist_ft_sensor")->data + 6 * k, 6 * sizeof(double));
        memcpy(in[4], rb_log_find(r.log, "acc/hand_acc")->data + 3 * k, 3 * sizeof(double));
        memcpy(in[4] + 3, rb_log_find(r.log, "acc/forearm")->data + 3 * k, 3 * sizeof(double));
        rb_alloc_fail_after(-1);
        long before = test_alloc_count;
        test_alloc_counting = 1;
        int rc = h.ty->step(h.state, k, 1e-3 * (double)k, cin, out, &err);
        test_alloc_counting = 0;
        counted += test_alloc_count - before;
        rb_calls += rb_alloc_fail_after(-1);
        cr_assert_eq(rc, RB_OK, "sample %zu: %s", k, err.msg);
        triggers += out[o_adapt][1] > 0;
    }
    cr_assert(triggers > 10, "the adaptation repeated %zu updates", triggers);
    if (test_alloc_count_works())
        cr_assert_eq(counted, 0, "C library allocations in step(): %ld", counted);
    cr_assert_eq(rb_calls, 0, "rb_malloc calls in step(): %ld", rb_calls);
    for (size_t j = 0; j < h.ty->n_outputs; j++)
        free(out[j]);
    stage_free(&h);

    /* rnea_torque: in q, dq, ddq, ft; the offset calibrated at sample 0 */
    snprintf(text, sizeof text, RNEA_PIPE, ARM_SIGNALS, ", \"contacts\": [\"base_link\", \"wrist\"]");
    size_t rw[7] = {4, 4, 4, 12, 0, 0, 0};
    cr_assert_eq(stage_make(&h, text, rw, &err), RB_OK, "%s", err.msg);
    for (size_t j = 0; j < h.ty->n_outputs; j++)
        out[j] = calloc(h.out[j].width + 1, sizeof(double));
    counted = rb_calls = 0;
    for (size_t k = 0; k < r.T; k++) {
        memcpy(in[0], rb_log_find(r.log, "q")->data + 4 * k, 4 * sizeof(double));
        memcpy(in[1], rb_log_find(r.log, "dq")->data + 4 * k, 4 * sizeof(double));
        memcpy(in[2], rb_log_find(r.log, "ddq")->data + 4 * k, 4 * sizeof(double));
        memcpy(in[3], rb_log_find(r.log, "ft/upper_arm_ft_sensor")->data + 6 * k, 6 * sizeof(double));
        memcpy(in[3] + 6, rb_log_find(r.log, "ft/wrist_ft_sensor")->data + 6 * k, 6 * sizeof(double));
        rb_alloc_fail_after(-1);
        long before = test_alloc_count;
        test_alloc_counting = 1;
        int rc = h.ty->step(h.state, k, 1e-3 * (double)k, cin, out, &err);
        test_alloc_counting = 0;
        counted += test_alloc_count - before;
        rb_calls += rb_alloc_fail_after(-1);
        cr_assert_eq(rc, RB_OK, "rnea sample %zu: %s", k, err.msg);
    }
    if (test_alloc_count_works())
        cr_assert_eq(counted, 0, "C library allocations in rnea step(): %ld", counted);
    cr_assert_eq(rb_calls, 0, "rb_malloc calls in rnea step(): %ld", rb_calls);
    for (int i = 0; i < 7; i++)
        free(in[i]);
    for (size_t j = 0; j < h.ty->n_outputs; j++)
        free(out[j]);
    stage_free(&h);
    rec_free(&r);
}

/* ---- jump adaptation (adapt_probability) ---------------------------------------------------------------------- */

/* UKF_PIPE with the adapt output wired ("ad"). */
static const char UKF_ADAPT_PIPE[] =
    "{%s \"stages\": [{\"id\": \"ukf\", \"type\": \"ukf_torque\","
    " \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"current\": \"cur\", \"ft\": \"ft\", \"acc\": \"acc\", \"gyro\": "
    "\"gyro\"},"
    " \"out\": {\"tau_j\": \"tau\", \"tau_m\": \"tm\", \"nis\": \"nis\"%s},"
    " \"params\": {\"ft_sensors\": [\"upper_arm_ft_sensor\", \"wrist_ft_sensor\"], \"accelerometers\": [\"hand_acc\", "
    "\"forearm\"], \"gyroscopes\": [\"hand_gyro\"], %s%s%s}}],"
    " \"outputs\": [{\"path\": \"x.h5\", \"signals\": [\"tau\"%s]}]}";

/* A UKF tuned for slowly varying torques (q_tau_m 1e-5 (N m)^2 per 1 ms step, std 3 mN m): it smooths the currents
 * but follows a jump slowly. */
static const char SLOW_TUNING[] =
    ", \"q_dq\": [1e-6], \"q_tau_m\": [1e-5], \"q_tau_f\": [1e-5], \"q_ft\": [1e-3, 1e-3, 1e-3, 1e-5, 1e-5, 1e-5], "
    "\"r_dq\": [1e-4], \"r_current\": [4e-4], \"r_ft\": [0.25, 0.25, 0.25, 4e-4, 4e-4, 4e-4], \"r_acc\": [2.5e-3], "
    "\"r_gyro\": [2.5e-5]";

typedef struct adapt_run {
    double *tau;     /* T x 4 */
    double *ad;      /* T x 2 (adapt on) */
    size_t triggers; /* samples with an inflation */
} adapt_run;

static void run_adapt(const sim_rec *r, const char *tuning, const char *adapt, adapt_run *out)
{
    static char text[8192];
    snprintf(text, sizeof text, UKF_ADAPT_PIPE, ARM_SIGNALS, adapt[0] ? ", \"adapt\": \"ad\"" : "", ARM_UKF_ACTUATORS,
             tuning, adapt, adapt[0] ? ", \"ad\"" : "");
    rb_run_result *res = run_text(text, r->log);
    out->tau = malloc(r->T * 4 * sizeof(double));
    memcpy(out->tau, run_signal(res, "tau", 4), r->T * 4 * sizeof(double));
    out->ad = NULL, out->triggers = 0;
    if (adapt[0]) {
        out->ad = malloc(r->T * 2 * sizeof(double));
        memcpy(out->ad, run_signal(res, "ad", 2), r->T * 2 * sizeof(double));
        for (size_t k = 0; k < r->T; k++)
            out->triggers += out->ad[2 * k + 1] > 0;
    }
    rb_run_result_free(res);
}

static void adapt_run_free(adapt_run *a) { free(a->tau), free(a->ad); }

/* Samples after k0 until the elbow's error stays below tol for good. */
static size_t settle_samples(const double *tau, const sim_rec *r, size_t k0, double tol)
{
    size_t last = k0;
    for (size_t k = k0; k < r->T; k++)
        if (fabs(tau[k * 4 + 2] - r->tau_j[k * 4 + 2]) > tol)
            last = k + 1;
    return last - k0;
}

/* A jump in the applied torque: the elbow's reference steps by 0.1 rad at 1.5 s (the PD's torque jumps by 3.9 N m
 * within one 1 ms sample, then follows the motion). The error after the step, without and with the adaptation
 * (0.9999, the default blocks tau_m and ft), for the slow tuning and for the arm's usual one (q_tau_m 1e-3).
 * Measured: slow tuning, elbow RMSE over the 50 ms after the step 1.59 -> 0.25 N m, below 0.5 N m for good after
 * 56 -> 0 samples; usual tuning 0.51 -> 0.18 N m, 5 -> 0 samples. Asserted: 4x and 5x (slow), 2x (usual). */
Test(estimators_torque, adapt_follows_a_torque_step)
{
    sim_rec r;
    record_arm_step(2.5, false, 0.1, 1.5, &ARM_NOISE, &r);
    size_t ks = 1500; /* the step's sample */
    cr_assert(fabs(r.tau_j[ks * 4 + 2] - r.tau_j[(ks - 1) * 4 + 2]) > 3.0, "the elbow torque steps by %g N m",
              r.tau_j[ks * 4 + 2] - r.tau_j[(ks - 1) * 4 + 2]);
    const char *tuning[2] = {SLOW_TUNING, UKF_TUNING};
    for (int t = 0; t < 2; t++) {
        adapt_run off, on;
        run_adapt(&r, tuning[t], "", &off);
        run_adapt(&r, tuning[t], ", \"adapt_probability\": 0.9999", &on);
        double e_off = rmse(off.tau, r.tau_j, 4, 2, ks, ks + 50), e_on = rmse(on.tau, r.tau_j, 4, 2, ks, ks + 50);
        size_t s_off = settle_samples(off.tau, &r, ks, 0.5), s_on = settle_samples(on.tau, &r, ks, 0.5);
        cr_log_info("elbow step, %s tuning: RMSE over the 50 ms after %.4f N m (off) %.4f (on); below 0.5 N m for good "
                    "after %zu / %zu samples; current NIS at the step %.4g",
                    t ? "usual" : "slow", e_off, e_on, s_off, s_on, on.ad[2 * ks]);
        cr_assert(on.ad[2 * ks + 1] > 0 && on.ad[2 * ks] > 23.512742444991076, "the step triggers the gate");
        if (t == 0) {
            cr_assert(e_on < e_off / 4, "slow tuning: %g vs %g", e_on, e_off);
            cr_assert(5 * s_on < s_off, "slow tuning: settles after %zu vs %zu samples", s_on, s_off);
        } else {
            cr_assert(e_on < e_off / 2, "usual tuning: %g vs %g", e_on, e_off);
        }
        adapt_run_free(&off), adapt_run_free(&on);
    }
    rec_free(&r);
}

/* Without a step (the chirps only, 4 s, the usual tuning): the gate is hit only where the torque does jump (at
 * 0.3 s the chirps start with a velocity step, kd r_dot), not on the noise after 0.5 s (measured: 0 of 3501
 * samples; a calibrated NIS would give 0.35), and the estimate after 0.5 s is the same to 1 %. Until the first
 * trigger the outputs are those without adaptation, bit for bit. The gate is chi-square's 0.9999 quantile with
 * 4 degrees of freedom (23.5127..., from scipy.stats.chi2.ppf): a sample is inflated exactly when its current NIS
 * is above it. */
Test(estimators_torque, adapt_is_silent_without_a_step)
{
    sim_rec r;
    record_arm(4.0, false, &ARM_NOISE, &r);
    adapt_run off, on;
    run_adapt(&r, UKF_TUNING, "", &off);
    run_adapt(&r, UKF_TUNING, ", \"adapt_probability\": 0.9999", &on);
    const double gate = 23.512742444991076;
    size_t first = r.T, late = 0;
    for (size_t k = 0; k < r.T; k++) {
        bool inflated = on.ad[2 * k + 1] > 0;
        cr_assert_eq(inflated, on.ad[2 * k] > gate, "sample %zu: NIS %.17g, inflation %g", k, on.ad[2 * k],
                     on.ad[2 * k + 1]);
        if (inflated && first == r.T)
            first = k;
        late += inflated && k >= 500;
    }
    double e_off = rmse(off.tau, r.tau_j, 4, SIZE_MAX, 500, r.T), e_on = rmse(on.tau, r.tau_j, 4, SIZE_MAX, 500, r.T);
    cr_log_info("no step: first trigger at sample %zu, %zu triggers after 0.5 s (of %zu samples); RMSE after 0.5 s "
                "%.5f N m (off) %.5f (on)",
                first, late, r.T - 500, e_off, e_on);
    cr_assert(first >= 300, "first trigger at %zu, before the chirps start", first);
    cr_assert_eq(memcmp(on.tau, off.tau, first * 4 * sizeof(double)), 0, "outputs differ before the first trigger");
    cr_assert(late <= 2, "%zu triggers on noise", late);
    cr_assert(fabs(e_on - e_off) < 0.01 * e_off, "RMSE %g vs %g", e_on, e_off);
    adapt_run_free(&off), adapt_run_free(&on);
    rec_free(&r);
}

/* The adaptation's parameters: the others need adapt_probability; bounds and choices name the key. */
Test(estimators_torque, adapt_bad_params)
{
    sim_rec r;
    record_arm(0.05, false, NULL, &r);
    static char text[8192];
    struct {
        const char *params;
        const char *parts[3];
    } cases[] = {
        {", \"adapt_blocks\": [\"tau_m\"]", {"adapt_blocks and adapt_scale need adapt_probability", NULL}},
        {", \"adapt_scale\": 2", {"need adapt_probability", NULL}},
        {", \"adapt_probability\": 1", {"adapt_probability", NULL}},
        {", \"adapt_probability\": -0.5", {"adapt_probability", NULL}},
        {", \"adapt_probability\": 0.99, \"adapt_blocks\": [\"tau_x\"]", {"adapt_blocks", "tau_x", NULL}},
        {", \"adapt_probability\": 0.99, \"adapt_blocks\": []", {"adapt_blocks", NULL}},
        {", \"adapt_probability\": 0.99, \"adapt_scale\": 0", {"adapt_scale", NULL}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        snprintf(text, sizeof text, UKF_ADAPT_PIPE, ARM_SIGNALS, "", ARM_UKF_ACTUATORS, UKF_TUNING, cases[c].params,
                 "");
        expect_error(text, r.log, RB_ECONFIG, cases[c].parts);
    }
    /* "ft" given explicitly without FT sensors (a pipeline without the ft input) */
    snprintf(text, sizeof text, UKF_ADAPT_PIPE, ARM_SIGNALS, "", ARM_UKF_ACTUATORS, UKF_TUNING,
             ", \"adapt_probability\": 0.99, \"adapt_blocks\": [\"tau_m\", \"ft\"]", "");
    static char noft[8192], noft2[8192];
    subst(noft, sizeof noft, text, "\"ft\": \"ft\", ", "");
    subst(noft2, sizeof noft2, noft, "\"ft_sensors\": [\"upper_arm_ft_sensor\", \"wrist_ft_sensor\"], ", "");
    expect_error(noft2, r.log, RB_ECONFIG, (const char *[]){"adapt_blocks[1] \"ft\" needs FT sensors", NULL});
    /* the default blocks without FT sensors: accepted */
    snprintf(text, sizeof text, UKF_ADAPT_PIPE, ARM_SIGNALS, "", ARM_UKF_ACTUATORS, UKF_TUNING,
             ", \"adapt_probability\": 0.99", "");
    subst(noft, sizeof noft, text, "\"ft\": \"ft\", ", "");
    subst(noft2, sizeof noft2, noft, "\"ft_sensors\": [\"upper_arm_ft_sensor\", \"wrist_ft_sensor\"], ", "");
    rb_err err;
    cr_assert_eq(run_error(noft2, r.log, &err), RB_OK, "%s", err.msg);
    rec_free(&r);
}
