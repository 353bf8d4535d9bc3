/* End-to-end: ft_offset "still_window" of rnea_torque and ukf_torque (issue 18) on an arm (datasets/arm_2ft.urdf)
 * simulated still for 0.5 s, then moving, with noise and offsets on both FT sensors: the still window's offset is
 * about sqrt(N) closer to the true one than the first sample's and the torque bias drops; a given window; a log
 * that moves from the start (a note, the run goes on); a window key without "still_window" is a config error. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

static const double TRUE_OFFSET[12] = {1.5, -0.8, 2.0, 0.05, -0.02, 0.01, -0.7, 0.4, 1.1, 0.03, 0.02, -0.04};
static const double NOISE[6] = {0.5, 0.5, 0.5, 0.02, 0.02, 0.02};

/* The arm held at q0 until t_move, then ramped over 0.7 s; 1.2 s at 1 kHz into dir/arm.h5. */
static char *simulate(const char *dir, double t_move)
{
    static const char scn[] =
        "{\"name\": \"arm_still\", \"model\": {\"urdf\": \"%s/datasets/arm_2ft.urdf\", \"base\": \"base_link\"},"
        " \"duration\": 1.2, \"dt\": 0.001, \"method\": \"euler\", \"log_rate\": 1000, \"seed\": 11,"
        " \"q0\": {\"shoulder_pitch\": 0.2, \"elbow\": 0.4}, \"references\": {"
        "  \"shoulder_yaw\": {\"kind\": \"ramp\", \"times\": [%g, %g], \"values\": [0, 0.3]},"
        "  \"shoulder_pitch\": {\"kind\": \"ramp\", \"times\": [%g, %g], \"values\": [0, 0.4]},"
        "  \"elbow\": {\"kind\": \"ramp\", \"times\": [%g, %g], \"values\": [0, 0.4]},"
        "  \"wrist_roll\": {\"kind\": \"ramp\", \"times\": [%g, %g], \"values\": [0, 0.5]}},"
        " \"controller\": {\"kind\": \"torque\", \"gravity_comp\": true, \"gains\": {"
        "  \"shoulder_yaw\": {\"kp\": 100, \"kd\": 20, \"kp_tau\": 1, \"ki_tau\": 10},"
        "  \"shoulder_pitch\": {\"kp\": 100, \"kd\": 20, \"kp_tau\": 1, \"ki_tau\": 10},"
        "  \"elbow\": {\"kp\": 100, \"kd\": 20, \"kp_tau\": 1, \"ki_tau\": 10},"
        "  \"wrist_roll\": {\"kp\": 30, \"kd\": 5, \"kp_tau\": 1, \"ki_tau\": 10}}},"
        " \"actuators\": {\"shoulder_yaw\": {\"k_t\": 0.05, \"R\": -100, \"J_m\": 1e-5, \"i_max\": 10},"
        "  \"shoulder_pitch\": {\"k_t\": 0.05, \"R\": 160, \"J_m\": 1e-5, \"i_max\": 10},"
        "  \"elbow\": {\"k_t\": 0.05, \"R\": -100, \"J_m\": 8e-6, \"i_max\": 10},"
        "  \"wrist_roll\": {\"k_t\": 0.04, \"R\": 100, \"J_m\": 5e-6, \"i_max\": 5}},"
        " \"sensors\": [{\"kind\": \"joint_encoder\"}, {\"kind\": \"motor_current\"},"
        "  {\"kind\": \"ft\", \"ft\": \"upper_arm_ft_sensor\", \"offset\": [1.5, -0.8, 2.0, 0.05, -0.02, 0.01],"
        "   \"noise\": [0.5, 0.5, 0.5, 0.02, 0.02, 0.02]},"
        "  {\"kind\": \"ft\", \"ft\": \"wrist_ft_sensor\", \"offset\": [-0.7, 0.4, 1.1, 0.03, 0.02, -0.04],"
        "   \"noise\": [0.5, 0.5, 0.5, 0.02, 0.02, 0.02]}]}";
    char text[4096];
    double t1 = t_move + 0.7;
    snprintf(text, sizeof text, scn, RB_SOURCE, t_move, t1, t_move, t1, t_move, t1, t_move, t1);
    char *path = test_path(dir, "arm.json"), *log = test_path(dir, "arm.h5");
    test_write_file(path, text);
    const char *args[] = {"simulate", path, "-o", log, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "simulate: exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    free(path);
    return log;
}

#define FTS "\"ft_sensors\": [\"upper_arm_ft_sensor\", \"wrist_ft_sensor\"]"
#define RNEA(id, extra)                                                                                                \
    "{\"id\": \"" id "\", \"type\": \"rnea_torque\", \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"ddq\": \"ddq\", "        \
    "\"ft\": \"ft\"}, \"out\": {\"tau\": \"tau_" id "\", \"ft_offset\": \"o_" id "\"}, \"params\": {" FTS extra "}}"
#define UKF(id, extra)                                                                                                 \
    "{\"id\": \"" id "\", \"type\": \"ukf_torque\", \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"current\": \"cur\", "     \
    "\"ft\": \"ft\"}, \"out\": {\"tau_j\": \"tau_" id "\"}, \"params\": {" FTS ", \"k_t\": [0.05, 0.05, 0.05, 0.04], " \
    "\"gear_ratio\": [-100, 160, -100, 100], \"motor_inertia\": [1e-5, 1e-5, 8e-6, 5e-6]" extra "}}"

static const char PIPELINE[] =
    "{\"model\": {\"urdf\": \"%s/datasets/arm_2ft.urdf\", \"base\": \"base_link\"}, \"clock\": {\"rate\": 1000},"
    " \"signals\": {\"q\": {\"channel\": \"joints_state/positions\"}, \"cur\": {\"channel\": "
    "\"motors_state/currents\"}, \"ft\": {\"channel\": [\"FTs/upper_arm_ft_sensor\", \"FTs/wrist_ft_sensor\"]},"
    "  \"tau_true\": {\"channel\": \"truth/joints/torques\"}},"
    " \"stages\": [{\"id\": \"kfd\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"}, \"out\": {\"x_dot\": "
    "\"dq\", \"x_ddot\": \"ddq\"}}, " RNEA("first", "") ", " RNEA("win", ", \"ft_offset\": \"still_window\"") ", " RNEA(
        "given", ", \"ft_offset\": \"still_window\", \"ft_offset_window\": [0.1, "
                 "0.4]") ", " UKF("ufirst", "") ", " UKF("uwin", ", \"ft_offset\": "
                                                                 "\"still_window\"") "],"
                                                                                     " \"outputs\":"
                                                                                     " [{\"path\": "
                                                                                     "\"o.h5\", "
                                                                                     "\"signals\": "
                                                                                     "[\"o_first\","
                                                                                     " \"o_win\", "
                                                                                     "\"o_given\", "
                                                                                     "\"tau_"
                                                                                     "first\", "
                                                                                     "\"tau_win\", "
                                                                                     "\"tau_"
                                                                                     "ufirst\", "
                                                                                     "\"tau_uwin\","
                                                                                     " \"tau_"
                                                                                     "true\"]}]}";

typedef struct run_out {
    cli_result r;
    rb_log *lg;
} run_out;

static run_out run(const char *dir, const char *log)
{
    char text[8192];
    snprintf(text, sizeof text, PIPELINE, RB_SOURCE);
    char *cfg = test_path(dir, "p.json"), *out = test_path(dir, "out");
    test_write_file(cfg, text);
    const char *args[] = {"run", cfg, log, "-o", out, "--force", "-q", NULL};
    run_out o = {cli_run(NULL, args), NULL};
    cr_assert_eq(o.r.status, 0, "run: exit %d: %s", o.r.status, o.r.err);
    char *h5 = test_path(out, "o.h5");
    rb_err err;
    cr_assert_eq(rb_log_read(h5, &o.lg, &err), RB_OK, "%s", err.msg);
    free(h5), free(cfg), free(out);
    return o;
}

static const rb_channel *channel(const rb_log *lg, const char *name)
{
    const rb_channel *c = rb_log_find(lg, name);
    cr_assert_not_null(c, "no channel %s", name);
    return c;
}

/* RMS over the 12 elements of (offset at the last sample - true offset) / noise std. */
static double offset_error(const rb_log *lg, const char *name)
{
    const rb_channel *c = channel(lg, name);
    cr_assert_eq(c->n_elements, 12);
    const double *last = c->data + (c->n_samples - 1) * 12;
    double s = 0;
    for (int i = 0; i < 12; i++)
        s += pow((last[i] - TRUE_OFFSET[i]) / NOISE[i % 6], 2);
    return sqrt(s / 12);
}

/* The largest |mean(tau - tau_true)| of a joint over samples [k0, k1) (the arm still: the offset's bias). */
static double torque_bias(const rb_log *lg, const char *name, size_t k0, size_t k1)
{
    const rb_channel *c = channel(lg, name), *t = channel(lg, "tau_true");
    double worst = 0;
    for (size_t j = 0; j < 4; j++) {
        double s = 0;
        for (size_t k = k0; k < k1; k++)
            s += c->data[k * 4 + j] - t->data[k * 4 + j];
        worst = fmax(worst, fabs(s / (double)(k1 - k0)));
    }
    return worst;
}

Test(cli_ft_offset, still_window_averages_the_noise_out)
{
    char *dir = test_tmpdir(), *log = simulate(dir, 0.5);
    run_out o = run(dir, log);
    double e1 = offset_error(o.lg, "o_first"), ew = offset_error(o.lg, "o_win");
    double b1 = torque_bias(o.lg, "tau_first", 200, 480), bw = torque_bias(o.lg, "tau_win", 200, 480);
    double u1 = torque_bias(o.lg, "tau_ufirst", 200, 480), uw = torque_bias(o.lg, "tau_uwin", 200, 480);
    cr_log_info("offset error / noise std: first_sample %.3f, still_window %.3f (ratio %.1f, sqrt(N) ~ 21); torque "
                "bias rnea %.3f -> %.3f, ukf %.3f -> %.3f N m",
                e1, ew, e1 / ew, b1, bw, u1, uw);
    /* about 450 still samples: sqrt(N) ~ 21; a clear margin */
    cr_assert(ew < e1 / 8, "still_window %g vs first_sample %g (noise stds)", ew, e1);
    cr_assert(bw < b1 / 4 && uw < u1 / 4, "torque bias rnea %g -> %g, ukf %g -> %g N m", b1, bw, u1, uw);
    cr_assert(strstr(o.r.err, "still window") == NULL, "unexpected note: %s", o.r.err);
    rb_log_free(o.lg);
    cli_result_free(&o.r);
    free(log);
    test_remove_tree(dir);
}

Test(cli_ft_offset, given_window_is_averaged_then_frozen)
{
    char *dir = test_tmpdir(), *log = simulate(dir, 0.5);
    run_out o = run(dir, log);
    const rb_channel *g = channel(o.lg, "o_given"), *f = channel(o.lg, "o_first");
    /* before t0 = 0.1 s the first sample's offset; from t1 = 0.4 s on, one value */
    for (size_t i = 0; i < 12; i++) {
        cr_assert_eq(g->data[50 * 12 + i], f->data[50 * 12 + i], "element %zu before the window", i);
        cr_assert_eq(g->data[401 * 12 + i], g->data[(g->n_samples - 1) * 12 + i], "element %zu after the window", i);
    }
    double eg = offset_error(o.lg, "o_given"), e1 = offset_error(o.lg, "o_first");
    cr_assert(eg < e1 / 6, "given window %g vs first_sample %g (noise stds)", eg, e1);
    rb_log_free(o.lg);
    cli_result_free(&o.r);
    free(log);
    test_remove_tree(dir);
}

Test(cli_ft_offset, no_still_window_is_a_note)
{
    char *dir = test_tmpdir(), *log = simulate(dir, 0.0);
    run_out o = run(dir, log);
    cr_assert(strstr(o.r.err, "stage win: ft_offset \"still_window\": no still window at the start"), "stderr: %s",
              o.r.err);
    cr_assert(strstr(o.r.err, "stage uwin: ft_offset \"still_window\": no still window"), "stderr: %s", o.r.err);
    cr_assert(strstr(o.r.err, "stage given:") == NULL, "the given window needs no note: %s", o.r.err);
    const rb_channel *w = channel(o.lg, "o_win");
    for (size_t i = 0; i < 12 * w->n_samples; i++)
        cr_assert(isfinite(w->data[i]), "element %zu", i);
    rb_log_free(o.lg);
    cli_result_free(&o.r);
    free(log);
    test_remove_tree(dir);
}

Test(cli_ft_offset, window_keys_need_still_window)
{
    char *dir = test_tmpdir(), *log = simulate(dir, 0.5);
    char text[8192];
    snprintf(text, sizeof text,
             "{\"model\": {\"urdf\": \"%s/datasets/arm_2ft.urdf\", \"base\": \"base_link\"}, \"clock\": {\"rate\": "
             "1000}, \"signals\": {\"q\": {\"channel\": \"joints_state/positions\"}, \"ft\": {\"channel\": "
             "[\"FTs/upper_arm_ft_sensor\", \"FTs/wrist_ft_sensor\"]}}, \"stages\": [{\"id\": \"kfd\", \"type\": "
             "\"kf_derivative\", \"in\": {\"x\": \"q\"}, \"out\": {\"x_dot\": \"dq\", \"x_ddot\": \"ddq\"}}, " RNEA(
                 "r", ", \"ft_offset_window\": [0.1, 0.4]") "], \"outputs\": [{\"path\": \"o.h5\", \"signals\": "
                                                            "[\"tau_r\"]}]}",
             RB_SOURCE);
    char *cfg = test_path(dir, "p.json"), *out = test_path(dir, "out");
    test_write_file(cfg, text);
    const char *args[] = {"run", cfg, log, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "ft_offset_window needs ft_offset \"still_window\""), "stderr: %s", r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "stderr: %s", r.err);
    cr_assert(!test_exists(out), "no output folder");
    cli_result_free(&r);
    free(cfg), free(out), free(log);
    test_remove_tree(dir);
}
