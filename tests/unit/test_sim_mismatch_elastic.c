/* Series-elastic joints (roboest/sim_mismatch.h, "elastic") at a harmonic drive's catalogue torsional stiffness,
 * 6.7e4 N m/rad (Harmonic Drive size 32, K1), on the arm on a pole (configs/scenarios/arm_pole.json): the rotor-link
 * modes of its light links are above what the 1 ms step resolves explicitly (the elbow's alone at omega dt = 1.9,
 * the chain's faster, the shoulder yaw's past 2 once the arm moves), which diverged within 0.05 s. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "roboest/sim.h"
#include "sim_arm_support.h"

#define K_CAT 6.7e4
#define D_CAT 7.5

/* Runs `steps` steps of sc; *law: the largest |tau_j + tau_f - (K (r_k + r_k+1) / 2 + D r_dot_k+1)| / (1 + |.|)
 * over the joints with a rotor (r = theta - s the windup: the step's spring torque), *windup[j]: the largest |r|,
 * *moved: the largest |s - rigid| (rigid NULL: not compared). Returns the steps done (< steps: failed). */
static size_t run(const rb_sim_scenario *sc, size_t steps, double *law, double *windup, const double *rigid,
                  double *moved, double *pos)
{
    rb_sim *sim = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(sc, &sim, &err), RB_OK, "%s", err.msg);
    size_t n = sc->model->n_dofs, k;
    double *prev = calloc(3 * n, sizeof *prev), K = sc->mismatch.elastic_stiffness, D = sc->mismatch.elastic_damping;
    *law = 0, *moved = 0;
    for (size_t j = 0; j < n; j++)
        windup[j] = 0;
    for (k = 0; k <= steps; k++) {
        const rb_sim_truth *t = rb_sim_truth_get(sim);
        for (size_t j = 0; j < n; j++) {
            double R = sc->actuators[j].R, r = t->motor_pos[j] / R - t->s[j], rd = t->motor_vel[j] / R - t->s_dot[j];
            if (k > 0 && sc->actuators[j].J_m > 0) {
                double ts = K * 0.5 * (prev[j] + r) + D * rd;
                *law = fmax(*law, fabs(prev[n + j] + prev[2 * n + j] - ts) / (1 + fabs(ts)));
            }
            prev[j] = r, prev[n + j] = t->tau_j[j], prev[2 * n + j] = t->tau_f[j];
            windup[j] = fmax(windup[j], fabs(r));
            if (rigid)
                *moved = fmax(*moved, fabs(t->s[j] - rigid[k * n + j]));
            if (pos)
                pos[k * n + j] = t->s[j];
        }
        if (k < steps && rb_sim_step(sim, &err) != 1)
            break;
    }
    free(prev);
    rb_sim_finish(sim);
    return k > steps ? steps : k;
}

Test(sim_mismatch_elastic, catalogue_stiffness_runs_with_every_joint_elastic)
{
    char extra[160];
    snprintf(extra, sizeof extra,
             "\"mismatch\": {\"preset\": \"none\", \"elastic\": {\"stiffness\": %g, \"damping\": %g}}", K_CAT, D_CAT);
    rb_scenario *s = arm(extra), *s0 = arm(NULL);
    size_t n = s->model->n_dofs, steps = 2000;
    double *rigid = calloc((steps + 1) * n, sizeof *rigid), *windup = calloc(n, sizeof *windup), law, moved;
    cr_assert_eq(run(&s0->sim, steps, &law, windup, NULL, &moved, rigid), steps);
    size_t done = run(&s->sim, steps, &law, windup, rigid, &moved, NULL);
    cr_assert_eq(done, steps, "diverged at t = %g s", (double)done * s->sim.dt);
    /* every joint behind its spring (the light wrist too), the windup of the torques over K (about 1e-4 rad) */
    for (size_t j = 0; j < n; j++)
        cr_expect(windup[j] > 1e-6 && windup[j] < 1e-2, "joint %zu: windup %g rad", j, windup[j]);
    /* the link's torque over the step is the spring's (the mean windup of the step, the damper at its end) */
    cr_expect_lt(law, 1e-9, "the link's torque is not the spring's: %g", law);
    /* a stiff gear: the motion close to the rigid one */
    cr_expect_lt(moved, 5e-3, "the link moves %g rad from the rigid one", moved);
    free(rigid), free(windup);
    rb_scenario_free(s), rb_scenario_free(s0);
}

/* The same with RK4, and the stiffness a hundred times the catalogue's (a mode far above 1 / dt): stable, and
 * the motion tends to the rigid one. */
Test(sim_mismatch_elastic, stiffer_than_the_step_resolves_stays_stable_and_tends_to_rigid)
{
    size_t steps = 1000;
    double moved[2];
    for (int rk = 0; rk < 2; rk++) {
        rb_scenario *s =
            arm("\"mismatch\": {\"preset\": \"none\", \"elastic\": {\"stiffness\": 6.7e6, \"damping\": 7.5}}");
        rb_scenario *s0 = arm(NULL);
        if (rk)
            s->sim.method = s0->sim.method = RB_SIM_RK4;
        size_t n = s->model->n_dofs;
        double *rigid = calloc((steps + 1) * n, sizeof *rigid), *windup = calloc(n, sizeof *windup), law;
        cr_assert_eq(run(&s0->sim, steps, &law, windup, NULL, &moved[rk], rigid), steps);
        size_t done = run(&s->sim, steps, &law, windup, rigid, &moved[rk], NULL);
        cr_assert_eq(done, steps, "%s: diverged at t = %g s", rk ? "rk4" : "euler", (double)done * s->sim.dt);
        cr_expect_lt(moved[rk], 5e-3, "%s: the link moves %g rad from the rigid one", rk ? "rk4" : "euler", moved[rk]);
        free(rigid), free(windup);
        rb_scenario_free(s), rb_scenario_free(s0);
    }
}
