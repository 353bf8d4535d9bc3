/* ukf_torque's online friction correction (friction_correction), the friction keys without a friction input, and
 * IMU lists without their inputs: on the arm simulation (torque_support.h). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "torque_support.h"

static const char ACT[] = "\"k_t\": [0.05, 0.05, 0.05, 0.04], \"gear_ratio\": [-100, 160, -100, 100], "
                          "\"motor_inertia\": [1e-5, 1e-5, 8e-6, 5e-6]";
static const char TUNING[] =
    ", \"q_dq\": [1e-6], \"q_tau_m\": [1e-3], \"q_tau_f\": [1e-3], \"q_ft\": [1e-3, 1e-3, 1e-3, 1e-5, 1e-5, 1e-5], "
    "\"q_contact\": [1e-2], \"p0_contact\": [1e-2], \"r_dq\": [1e-4], \"r_current\": [4e-4], \"r_ft\": [0.25, 0.25, "
    "0.25, 4e-4, 4e-4, 4e-4], \"r_acc\": [2.5e-3], \"r_gyro\": [2.5e-5]";

/* The arm's signals with the friction measurement 0.6 x the truth (a friction model of another robot: 40 %
 * too little friction), as "fric". */
static const char SIGNALS_WRONG[] =
    "\"model\": {\"urdf\": \"" ARM_URDF "\", \"base\": \"base_link\"}, \"clock\": {\"rate\": 1000},"
    " \"signals\": {\"q\": {\"channel\": \"q\"}, \"dq\": {\"channel\": \"dq\"},"
    "  \"cur\": {\"channel\": \"current\"}, \"fric\": {\"channel\": \"friction\", \"scale\": 0.6, \"unit\": \"N m\"},"
    "  \"ft\": {\"channel\": [\"ft/upper_arm_ft_sensor\", \"ft/wrist_ft_sensor\"]},"
    "  \"acc\": {\"channel\": [\"acc/hand_acc\", \"acc/forearm\"]}, \"gyro\": {\"channel\": \"gyro/hand_gyro\"}},";

/* signals, the friction input ("" or the wiring), the extra inputs, actuators, tuning, extra parameters */
static const char PIPE[] =
    "{%s \"stages\": [{\"id\": \"ukf\", \"type\": \"ukf_torque\","
    " \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"current\": \"cur\", \"ft\": \"ft\"%s%s},"
    " \"out\": {\"tau_j\": \"tau\", \"tau_f\": \"tf\", \"var\": \"var\", \"correction\": \"corr\"},"
    " \"params\": {\"ft_sensors\": [\"upper_arm_ft_sensor\", \"wrist_ft_sensor\"], \"accelerometers\": [\"hand_acc\", "
    "\"forearm\"], \"gyroscopes\": [\"hand_gyro\"], %s%s%s}}],"
    " \"outputs\": [{\"path\": \"x.h5\", \"signals\": [\"tau\", \"tf\", \"var\"%s]}]}";
static const char IMUS[] = ", \"acc\": \"acc\", \"gyro\": \"gyro\"";
static const char FRIC[] = ", \"friction\": \"fric\"";

static const noise_spec NOISE = {.dq = 0.01,
                                 .current = 0.02,
                                 .ft_force = 0.5,
                                 .ft_moment = 0.02,
                                 .acc = 0.05,
                                 .gyro = 0.005,
                                 .friction = 0.02,
                                 .seed = 7};

static char text[8192];

static const char *pipe_text(const char *signals, const char *fric, const char *imus, const char *extra)
{
    snprintf(text, sizeof text, PIPE, signals, fric, imus, ACT, TUNING, extra,
             strstr(extra, "friction_correction\": [\"") ? ", \"corr\"" : "");
    return text;
}

/* A friction measurement 40 % short of the truth: with the correction the UKF learns the scale (theta -> 1 / 0.6 -
 * 1 = 0.67 where the joints move) and its tau_F and tau_j errors drop below the uncorrected filter's, and below the
 * filter without the friction measurement (the correction recovers what the wrong model withholds). */
Test(torque_ukf_adapt, correction_learns_a_friction_change)
{
    sim_rec r;
    record_arm(6.0, false, &NOISE, &r);
    size_t k0 = 3000, n = 4;
    double e[3], ef[3], scale_mean = 0.0;
    const char *extra[3] = {"",
                            ", \"friction_correction\": [\"scale\"], \"q_correction\": [1e-7], "
                            "\"p0_correction\": [0.1]",
                            ""};
    for (int c = 0; c < 3; c++) {
        rb_run_result *res = run_text(pipe_text(SIGNALS_WRONG, c < 2 ? FRIC : "", IMUS, extra[c]), r.log);
        const double *tau = run_signal(res, "tau", n), *tf = run_signal(res, "tf", n);
        e[c] = rmse(tau, r.tau_j, n, SIZE_MAX, k0, r.T);
        ef[c] = rmse(tf, r.tau_f, n, SIZE_MAX, k0, r.T);
        if (c == 1) {
            const double *corr = run_signal(res, "corr", n);
            for (size_t i = 0; i < n; i++)
                scale_mean += corr[(r.T - 1) * n + i] / (double)n;
        }
        rb_run_result_free(res);
    }
    cr_log_info("friction input 0.6 x truth, RMSE after 3 s: uncorrected tau_j %.4f tau_F %.4f; corrected tau_j %.4f "
                "tau_F %.4f (mean scale theta %.3f, ideal 0.667); no friction input tau_j %.4f tau_F %.4f",
                e[0], ef[0], e[1], ef[1], scale_mean, e[2], ef[2]);
    cr_assert(ef[1] < 0.7 * ef[0], "tau_F corrected %g vs uncorrected %g", ef[1], ef[0]);
    cr_assert(e[1] < e[0] && e[1] < e[2], "tau_j corrected %g vs uncorrected %g, no friction input %g", e[1], e[0],
              e[2]);
    cr_assert(scale_mean > 0.2, "the scale moved toward 0.67: %g", scale_mean);
    rec_free(&r);
}

/* Off (the key absent) and an empty term list are the same estimator, bit for bit, with the same state. */
Test(torque_ukf_adapt, off_is_the_paper_estimator)
{
    sim_rec r;
    record_arm(1.0, false, &NOISE, &r);
    size_t n = 4;
    rb_run_result *a = run_text(pipe_text(SIGNALS_WRONG, FRIC, IMUS, ""), r.log);
    rb_run_result *b = run_text(pipe_text(SIGNALS_WRONG, FRIC, IMUS, ", \"friction_correction\": []"), r.log);
    const double *ta = run_signal(a, "tau", n), *tb = run_signal(b, "tau", n);
    cr_assert(memcmp(ta, tb, r.T * n * sizeof *ta) == 0, "the outputs differ");
    const rb_run_signal *va = rb_run_result_signal(a, "var"), *vb = rb_run_result_signal(b, "var");
    cr_assert(va && vb && va->width == vb->width);
    rb_run_result_free(a);
    rb_run_result_free(b);
    rec_free(&r);
}

static void expect_config_error(const rb_log *log, const char *t, const char *part)
{
    rb_err err;
    int rc = run_error(t, log, &err);
    cr_assert_eq(rc, RB_ECONFIG, "status %d: %s", rc, err.msg);
    cr_assert(strstr(err.msg, part), "message: %s", err.msg);
}

/* r_friction and the correction's keys need the friction input; the correction's own keys need terms. */
Test(torque_ukf_adapt, friction_keys_need_the_friction_input)
{
    sim_rec r;
    record_arm(0.1, false, &NOISE, &r);
    expect_config_error(r.log, pipe_text(SIGNALS_WRONG, "", IMUS, ", \"r_friction\": [1e-2]"),
                        "r_friction needs the friction input");
    expect_config_error(r.log, pipe_text(SIGNALS_WRONG, "", IMUS, ", \"friction_correction\": [\"coulomb\"]"),
                        "friction_correction needs the friction input");
    expect_config_error(r.log, pipe_text(SIGNALS_WRONG, FRIC, IMUS, ", \"q_correction\": [1e-7]"),
                        "q_correction needs friction_correction");
    expect_config_error(r.log,
                        pipe_text(SIGNALS_WRONG, FRIC, IMUS, ", \"friction_correction\": [\"offset\", \"offset\"]"),
                        "listed twice");
    expect_config_error(
        r.log, pipe_text(SIGNALS_WRONG, FRIC, IMUS, ", \"friction_correction\": [\"offset\"], \"refresh_every\": 8"),
        "refresh_every > 1 is not with friction_correction");
    expect_config_error(
        r.log,
        pipe_text(SIGNALS_WRONG, FRIC, IMUS, ", \"friction_correction\": [\"offset\"], \"p0_correction\": [1, 2]"),
        "p0_correction");
    rec_free(&r);
}

/* IMU lists with their inputs unwired: the stage runs without them and says so; a wrong nonzero width is still an
 * error. */
Test(torque_ukf_adapt, imu_lists_without_imu_inputs)
{
    sim_rec r;
    record_arm(1.0, false, &NOISE, &r);
    rb_registry *reg = registry();
    rb_pipeline *p = NULL;
    rb_err err;
    const char *t = pipe_text(SIGNALS_WRONG, "", "", "");
    cr_assert(rb_pipeline_load_text(t, strlen(t), "imu-less", NULL, reg, &p, &err) == RB_OK, "%s", err.msg);
    rb_run_result *res = run_text(t, r.log);
    const double *tau = run_signal(res, "tau", 4);
    double e = rmse(tau, r.tau_j, 4, SIZE_MAX, 500, r.T);
    cr_assert(isfinite(e) && e < 1.0, "tau_j RMSE without IMUs %g", e);
    /* the note */
    const rb_stage_type *ty = p->stages[0].type;
    cr_assert(ty->notes != NULL);
    rb_params params = {ty, p->stages[0].params};
    rb_port in[7] = {{4, NULL, NULL}, {4, NULL, NULL}, {4, NULL, NULL}, {12, NULL, NULL}, {0}, {0}, {0}};
    rb_port out[16];
    double times[1] = {0};
    rb_stage_setup setup = {"ukf", &params, in, out, 1e-3, 1, times, p->model, "."};
    void *state = NULL;
    cr_assert(ty->create(&setup, &state, &err) == RB_OK, "%s", err.msg);
    cr_assert(ty->finish(state, &err) == RB_OK, "%s", err.msg); /* notes are read after finish */
    const char *const *lines = NULL;
    size_t nl = ty->notes(state, &lines);
    cr_assert_eq(nl, 2);
    cr_assert(strstr(lines[0], "2 accelerometers") && strstr(lines[0], "acc input"), "%s", lines[0]);
    cr_assert(strstr(lines[1], "1 gyroscopes") && strstr(lines[1], "gyro input"), "%s", lines[1]);
    ty->destroy(state);
    /* a listed IMU with a wrong nonzero width stays an error */
    in[4].width = 3;
    state = NULL;
    cr_assert_eq(ty->create(&setup, &state, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "input acc has 3 elements, expected 6"), "%s", err.msg);
    rb_run_result_free(res);
    rb_pipeline_free(p);
    rb_registry_free(reg);
    rec_free(&r);
}
