/* The plant-model mismatch's second round (roboest/sim_mismatch.h) on the arm on a pole (configs/scenarios/
 * arm_pole.json): the series-elastic joints (the spring's law between the rotor and the link, the windup the motor
 * encoders read, a link motion other than the rigid one, level 0 rigid), the bus delay of the measurements (a 1 kHz
 * channel shifted by its samples, a 100 Hz one kept), the motor driver's current resolution and noise, and the keys'
 * errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/sim.h"
#include "sim_arm_support.h"

static const rb_channel *channel(const rb_log *log, const char *name)
{
    const rb_channel *c = rb_log_find(log, name);
    cr_assert_not_null(c, "%s", name);
    return c;
}

static rb_log *run_log(const rb_scenario *s)
{
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_scenario_run(s, NULL, NULL, &log, &err), RB_OK, "%s", err.msg);
    return log;
}

/* Largest |tau_j + tau_f - (K (r_k + r_k+1) / 2 + D r_dot_k+1)| (r = theta - s: the step's spring torque, the mean
 * windup and the damper at the step's end) and mean |theta - s| over `steps` steps; *moved: the largest
 * |s - s_rigid| against the rigid run's positions (NULL: not compared). */
static void spring_check(const rb_sim_scenario *sc, size_t steps, double K, double D, double *law, double *windup,
                         const double *rigid, double *moved, double *positions)
{
    rb_sim *sim = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(sc, &sim, &err), RB_OK, "%s", err.msg);
    size_t n = sc->model->n_dofs;
    double *prev = calloc(2 * n, sizeof *prev);
    *law = 0, *windup = 0;
    if (moved)
        *moved = 0;
    for (size_t k = 0; k <= steps; k++) {
        const rb_sim_truth *t = rb_sim_truth_get(sim);
        for (size_t j = 0; j < n; j++) {
            double R = sc->actuators[j].R, th = t->motor_pos[j] / R, thd = t->motor_vel[j] / R;
            double ts = K * 0.5 * (prev[j] + th - t->s[j]) + D * (thd - t->s_dot[j]);
            if (k > 0)
                *law = fmax(*law, fabs(prev[n + j] - ts) / (1 + fabs(ts)));
            prev[j] = th - t->s[j], prev[n + j] = t->tau_j[j] + t->tau_f[j];
            *windup += fabs(th - t->s[j]) / (double)((steps + 1) * n);
            if (positions)
                positions[k * n + j] = t->s[j];
            if (moved)
                *moved = fmax(*moved, fabs(t->s[j] - rigid[k * n + j]));
        }
        if (k < steps)
            cr_assert_eq(rb_sim_step(sim, &err), 1, "%s", err.msg);
    }
    free(prev);
    rb_sim_finish(sim);
}

Test(sim_mismatch2, elastic_joint_spring_law_windup_and_motion)
{
    /* a soft spring the arm's light wrist stays stable with at 1 ms (K dt^2 / 4 below its inertia) */
    rb_scenario *s = arm("\"mismatch\": {\"preset\": \"none\", \"elastic\": {\"stiffness\": 800, \"damping\": 2}}");
    rb_scenario *s0 = arm(NULL);
    size_t n = s->model->n_dofs, steps = 1000;
    double *rigid = calloc((steps + 1) * n, sizeof *rigid), law, windup, moved, law0, windup0;
    /* rigid: the motor encoders read R s (no windup) and the spring law does not hold */
    spring_check(&s0->sim, steps, 800, 2, &law0, &windup0, NULL, NULL, rigid);
    cr_expect_lt(windup0, 1e-12, "rigid windup %g", windup0);
    spring_check(&s->sim, steps, 800, 2, &law, &windup, rigid, &moved, NULL);
    cr_expect_lt(law, 1e-9, "the link's torque is not the spring's: %g", law);
    cr_expect_gt(law0, 1e-3, "the rigid plant obeys the spring law: %g", law0);
    cr_expect_gt(windup, 1e-4, "no windup: %g rad", windup);
    cr_expect_gt(moved, 1e-4, "the link moves as the rigid one: %g rad", moved);
    /* level 0: rigid again, bit for bit */
    rb_sim_scenario sc = s->sim;
    sc.mismatch.level = 0;
    spring_check(&sc, steps, 800, 2, &law, &windup, rigid, &moved, NULL);
    cr_expect_eq(moved, 0.0, "level 0 is not rigid: %g", moved);
    free(rigid);
    rb_scenario_free(s);
    rb_scenario_free(s0);
}

Test(sim_mismatch2, measurement_delay_shifts_the_channels_by_their_samples)
{
    rb_scenario *s = arm("\"mismatch\": {\"preset\": \"none\", \"delay\": {\"measurement\": 0.002}}");
    rb_scenario *s0 = arm(NULL);
    rb_log *log = run_log(s), *log0 = run_log(s0);
    static const char *const delayed[] = {"joints_state/positions", "motors_state/currents", "FTs/upper_arm_ft_sensor"};
    for (size_t c = 0; c < 3; c++) {
        const rb_channel *a = channel(log, delayed[c]), *b = channel(log0, delayed[c]);
        size_t w = a->n_elements;
        cr_assert_eq(a->n_samples, b->n_samples);
        cr_expect_eq(memcmp(a->time, b->time, a->n_samples * sizeof *a->time), 0, "%s: stamps moved", delayed[c]);
        for (size_t k = 0; k < a->n_samples; k++) {
            size_t from = k >= 2 ? k - 2 : 0; /* 2 ms at 1 kHz; the first sample fills the line */
            cr_assert_eq(memcmp(a->data + k * w, b->data + from * w, w * sizeof *a->data), 0, "%s: sample %zu",
                         delayed[c], k);
        }
    }
    /* a 100 Hz IMU under 2 ms: a fifth of its period, kept */
    const rb_channel *a = channel(log, "accelerometers/hand_imu"), *b = channel(log0, "accelerometers/hand_imu");
    cr_expect_eq(memcmp(a->data, b->data, a->n_samples * a->n_elements * sizeof *a->data), 0);
    rb_log_free(log);
    rb_log_free(log0);
    rb_scenario_free(s);
    rb_scenario_free(s0);
}

Test(sim_mismatch2, current_resolution_and_noise)
{
    rb_scenario *q = arm("\"mismatch\": {\"preset\": \"none\", \"current\": {\"resolution\": 0.05}}");
    rb_scenario *z = arm("\"mismatch\": {\"preset\": \"none\", \"current\": {\"noise\": 0.5}}");
    rb_scenario *s0 = arm(NULL);
    rb_log *lq = run_log(q), *lz = run_log(z), *l0 = run_log(s0);
    const rb_channel *cq = channel(lq, "motors_state/currents"), *cz = channel(lz, "motors_state/currents");
    const rb_channel *c0 = channel(l0, "motors_state/currents");
    size_t N = c0->n_samples * c0->n_elements, off_grid = 0;
    double sum = 0, sum2 = 0;
    for (size_t i = 0; i < N; i++) {
        double steps = cq->data[i] / 0.05;
        cr_assert_leq(fabs(steps - round(steps)), 1e-9, "sample %zu: %.17g not on the 0.05 A grid", i, cq->data[i]);
        double s0steps = c0->data[i] / 0.05;
        off_grid += fabs(s0steps - round(s0steps)) > 1e-6;
        double d = cz->data[i] - c0->data[i];
        sum += d, sum2 += d * d;
    }
    cr_expect_gt(off_grid, N / 2, "the preset's currents already on the grid");
    /* the same normal draws: the difference is (sqrt(0.02^2 + 0.5^2) - 0.02) z, quantized at 1 mA */
    double sd = sqrt(sum2 / (double)N - (sum / (double)N) * (sum / (double)N)), want = hypot(0.02, 0.5) - 0.02;
    cr_expect(fabs(sd - want) < 0.05 * want, "noise sd %g, want %g", sd, want);
    rb_log_free(lq), rb_log_free(lz), rb_log_free(l0);
    rb_scenario_free(q), rb_scenario_free(z), rb_scenario_free(s0);
}

Test(sim_mismatch2, key_errors_and_realistic_defaults)
{
    rb_scenario *s;
    rb_err err;
    static const char *const bad[] = {
        "\"mismatch\": {\"elastic\": {\"stiffness\": -1}}", "\"mismatch\": {\"elastic\": {\"stifness\": 1}}",
        "\"mismatch\": {\"delay\": {\"measurement\": -0.001}}", "\"mismatch\": {\"current\": {\"noise\": -1}}",
        "\"mismatch\": {\"current\": {\"resolution\": \"a\"}}"};
    static const char *const key[] = {"stiffness", "stifness", "measurement", "noise", "resolution"};
    for (size_t i = 0; i < 5; i++) {
        cr_expect_eq(load_arm(bad[i], &s, &err), RB_ECONFIG, "%s", bad[i]);
        cr_expect(strstr(err.msg, key[i]) != NULL, "%s: %s", bad[i], err.msg);
        rb_scenario_free(s);
    }
    rb_sim_mismatch mm;
    rb_sim_mismatch_realistic(&mm);
    cr_expect(mm.measurement_delay > 0 && mm.current_resolution > 0 && mm.current_noise > 0);
}
