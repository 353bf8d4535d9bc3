/* lib/sim: the torque loop's feedback (truth, none, external estimates), the friction compensation, the
 * desired joint torque tau_ref and the plant's centre of mass in the truth. All runs are seeded. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "roboest/sim.h"

enum { MAXJ = 16 };

/* The fixed-base arm tracking sines with the torque controller, Coulomb + viscous friction on every joint
 * (smooth sign, so the friction torque changes little from one sample to the next), geared actuators. */
typedef struct arm {
    rb_model *m;
    rb_sim_ref ref[MAXJ];
    rb_sim_joint_ctrl g[MAXJ];
    rb_sim_actuator act[MAXJ];
    rb_friction_model fr[MAXJ];
    rb_sim_scenario sc;
} arm;

static void arm_setup(arm *a, rb_sim_torque_feedback fb)
{
    memset(a, 0, sizeof *a);
    rb_err err;
    char path[1024];
    snprintf(path, sizeof path, "%s/datasets/arm_2ft.urdf", RB_SOURCE);
    cr_assert_eq(rb_model_load_urdf(path, NULL, &a->m, &err), RB_OK, "%s", err.msg);
    cr_assert_leq(a->m->n_dofs, (size_t)MAXJ);
    for (size_t j = 0; j < a->m->n_dofs; j++) {
        a->ref[j] =
            (rb_sim_ref){.kind = RB_REF_SINE, .amplitude = 0.4, .freq = 0.3 + 0.2 * (double)j, .phase = (double)j};
        a->g[j] = (rb_sim_joint_ctrl){.kp = 100, .kd = 20, .kp_tau = 1, .ki_tau = 100};
        a->act[j] = (rb_sim_actuator){.k_t = 0.05, .R = j % 2 ? -100.0 : 100.0, .J_m = 1e-5};
        double p[3] = {0.5, 0.8, 0.01};
        cr_assert_eq(rb_friction_build("coulomb_viscous", p, 3, &a->fr[j], &err), RB_OK, "%s", err.msg);
    }
    rb_sim_scenario *sc = &a->sc;
    sc->model = a->m, sc->dt = 1e-3, sc->duration = 2.0, sc->seed = 3;
    sc->refs = a->ref, sc->gains = a->g, sc->actuators = a->act, sc->friction = a->fr;
    sc->ctrl = RB_CTRL_TORQUE, sc->torque_feedback = fb;
}

static rb_sim *start(const rb_sim_scenario *sc)
{
    rb_sim *s = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(sc, &s, &err), RB_OK, "%s", err.msg);
    return s;
}

/* What an estimator hands the controller at each sample (before the step to the next one). */
typedef enum feed { FEED_NOTHING, FEED_TAU_J, FEED_TAU_J_LATE, FEED_TAU_F, FEED_NAN } feed;

/* RMS of tau_ref - tau_j over every joint and the samples past the start (t >= 0.2 s: the references start
 * moving at t = 0 from rest); the samples' q and tau_j into traj (when non-NULL, (n_steps + 1) * (nq + n)
 * values). */
static double run(const rb_sim_scenario *sc, feed what, double *traj)
{
    rb_sim *s = start(sc);
    const rb_sim_truth *t = rb_sim_truth_get(s);
    size_t n = t->n, nq = t->nq, count = 0;
    double sum = 0.0, prev[MAXJ], nan[MAXJ];
    for (size_t j = 0; j < n; j++)
        prev[j] = NAN, nan[j] = NAN;
    rb_err err;
    for (size_t k = 0;; k++) {
        for (size_t j = 0; t->t >= 0.2 && j < n; j++, count++)
            sum += (t->tau_ref[j] - t->tau_j[j]) * (t->tau_ref[j] - t->tau_j[j]);
        if (traj) {
            memcpy(traj + k * (nq + n), t->q, nq * sizeof *traj);
            memcpy(traj + k * (nq + n) + nq, t->tau_j, n * sizeof *traj);
        }
        int rc = RB_OK;
        switch (what) {
        case FEED_TAU_J: rc = rb_sim_set_torque_feedback(s, t->tau_j, NULL, &err); break;
        case FEED_TAU_J_LATE: /* one sample older than it should be */
            rc = rb_sim_set_torque_feedback(s, prev, NULL, &err);
            memcpy(prev, t->tau_j, n * sizeof *prev);
            break;
        case FEED_TAU_F: rc = rb_sim_set_torque_feedback(s, NULL, t->tau_f, &err); break;
        case FEED_NAN: rc = rb_sim_set_torque_feedback(s, nan, nan, &err); break;
        default: break;
        }
        cr_assert_eq(rc, RB_OK, "%s", err.msg);
        int st = rb_sim_step(s, &err);
        cr_assert_geq(st, 0, "%s", err.msg);
        if (st == 0)
            break;
    }
    rb_sim_finish(s);
    return sqrt(sum / (double)count);
}

static size_t traj_len(const arm *a) { return (size_t)(a->sc.duration / a->sc.dt + 1.5) * (a->m->nq + a->m->n_dofs); }

/* The torque loop on the true torque tracks tau_ref much better than the feedforward alone, which leaves the
 * friction torque (a fraction M (M + R^2 J_m)^-1 of it) in the joint torque. */
Test(sim_feedback, torque_loop_beats_feedforward)
{
    arm a;
    arm_setup(&a, RB_TFB_TRUTH);
    double rms_loop = run(&a.sc, FEED_NOTHING, NULL);
    a.sc.torque_feedback = RB_TFB_NONE;
    double rms_ff = run(&a.sc, FEED_NOTHING, NULL);
    cr_log_info("torque tracking RMS: loop %.4g N m, feedforward %.4g N m", rms_loop, rms_ff);
    cr_assert_gt(rms_ff, 0.1, "friction of 0.5 N m and more leaves a visible error: %g", rms_ff);
    cr_assert_lt(rms_loop, rms_ff / 5, "loop %g vs feedforward %g", rms_loop, rms_ff);
    rb_model_free(a.m);
}

/* An external estimate equal to the true joint torque of the sample, handed over before the step, reproduces
 * the loop on the truth bit for bit (the one-sample timing); the same estimate one sample late does not. */
Test(sim_feedback, external_truth_estimate_reproduces_the_truth_loop)
{
    arm a;
    arm_setup(&a, RB_TFB_TRUTH);
    size_t len = traj_len(&a);
    double *want = calloc(len, sizeof *want), *got = calloc(len, sizeof *got);
    double rms_truth = run(&a.sc, FEED_NOTHING, want);
    a.sc.torque_feedback = RB_TFB_EXTERNAL;
    double rms_ext = run(&a.sc, FEED_TAU_J, got);
    cr_assert_eq(rms_ext, rms_truth);
    cr_assert_eq(memcmp(got, want, len * sizeof *got), 0, "same trajectory, bit for bit");
    run(&a.sc, FEED_TAU_J_LATE, got);
    cr_assert_neq(memcmp(got, want, len * sizeof *got), 0, "a late estimate changes the trajectory");
    free(want), free(got);
    rb_model_free(a.m);
}

/* No estimate (NaN at every joint, or no call at all) is the feedforward, bit for bit; with the compensation
 * switched on, NaN friction estimates change nothing either. */
Test(sim_feedback, external_without_estimates_is_feedforward)
{
    arm a;
    arm_setup(&a, RB_TFB_NONE);
    size_t len = traj_len(&a);
    double *want = calloc(len, sizeof *want), *got = calloc(len, sizeof *got);
    run(&a.sc, FEED_NOTHING, want);
    a.sc.torque_feedback = RB_TFB_EXTERNAL;
    run(&a.sc, FEED_NAN, got);
    cr_assert_eq(memcmp(got, want, len * sizeof *got), 0, "NaN estimates: feedforward");
    memset(got, 0, len * sizeof *got);
    run(&a.sc, FEED_NOTHING, got);
    cr_assert_eq(memcmp(got, want, len * sizeof *got), 0, "no call: every estimate NaN");
    a.sc.friction_compensation = true;
    memset(got, 0, len * sizeof *got);
    run(&a.sc, FEED_NAN, got);
    cr_assert_eq(memcmp(got, want, len * sizeof *got), 0, "NaN friction estimates: no compensation");
    free(want), free(got);
    rb_model_free(a.m);
}

/* Feedforward plus the true friction torque of the previous sample: tau_j - tau_ref is left with the change of
 * tau_F over one step, far below the feedforward's error. */
Test(sim_feedback, friction_compensation_removes_the_friction_error)
{
    arm a;
    arm_setup(&a, RB_TFB_NONE);
    double rms_ff = run(&a.sc, FEED_NOTHING, NULL);
    a.sc.friction_compensation = true;
    double rms_comp = run(&a.sc, FEED_TAU_F, NULL);
    cr_log_info("torque tracking RMS: feedforward %.4g N m, compensated %.4g N m", rms_ff, rms_comp);
    cr_assert_lt(rms_comp, rms_ff / 20, "compensated %g vs feedforward %g", rms_comp, rms_ff);
    rb_model_free(a.m);
}

/* tau_ref is the desired joint torque before the torque loop: with the feedforward it is the motor torque
 * asked for less the rotor term (no friction, no PI); PD control: the PD output; no controller: zero. */
Test(sim_feedback, tau_ref_is_the_desired_joint_torque)
{
    arm a;
    arm_setup(&a, RB_TFB_NONE);
    rb_sim *s = start(&a.sc);
    const rb_sim_truth *t = rb_sim_truth_get(s);
    rb_err err;
    for (int k = 0; k < 50; k++)
        cr_assert_eq(rb_sim_step(s, &err), 1);
    for (size_t j = 0; j < t->n; j++) {
        double acc = -a.ref[j].amplitude * pow(2 * M_PI * a.ref[j].freq, 2) *
                     sin(2 * M_PI * a.ref[j].freq * t->t + a.ref[j].phase);
        double rotor = a.act[j].R * a.act[j].R * a.act[j].J_m *
                       (acc + 100 * (t->ref[j] - t->s[j]) +
                        20 * (2 * M_PI * a.ref[j].freq * a.ref[j].amplitude *
                                  cos(2 * M_PI * a.ref[j].freq * t->t + a.ref[j].phase) -
                              t->s_dot[j]));
        cr_assert_float_eq(t->tau_des[j] - t->tau_ref[j], rotor, 1e-9 * (1 + fabs(rotor)), "joint %zu", j);
        cr_assert(isnan(t->com_ref[0]) && isnan(t->com_ref[1]) && isnan(t->com_ref[2]), "no balance: NaN");
    }
    rb_sim_finish(s);
    a.sc.ctrl = RB_CTRL_PD;
    s = start(&a.sc);
    t = rb_sim_truth_get(s);
    cr_assert_eq(rb_sim_step(s, &err), 1);
    cr_assert_eq(memcmp(t->tau_ref, t->tau_des, t->n * sizeof *t->tau_ref), 0);
    rb_sim_finish(s);
    a.sc.ctrl = RB_CTRL_NONE;
    s = start(&a.sc);
    t = rb_sim_truth_get(s);
    cr_assert_eq(rb_sim_step(s, &err), 1);
    for (size_t j = 0; j < t->n; j++)
        cr_assert_eq(t->tau_ref[j], 0.0);
    rb_sim_finish(s);
    rb_model_free(a.m);
}

/* Neither handing estimates over nor stepping with external feedback and compensation allocates. */
Test(sim_feedback, set_feedback_and_step_allocate_nothing)
{
    arm a;
    arm_setup(&a, RB_TFB_EXTERNAL);
    a.sc.friction_compensation = true;
    rb_sim *s = start(&a.sc);
    const rb_sim_truth *t = rb_sim_truth_get(s);
    rb_err err;
    test_alloc_count_init();
    rb_alloc_fail_after(-1);
    test_alloc_count = 0;
    test_alloc_counting = 1;
    int st = 1;
    for (int k = 0; k < 200 && st == 1; k++) {
        if (rb_sim_set_torque_feedback(s, t->tau_j, t->tau_f, &err) != RB_OK)
            break;
        st = rb_sim_step(s, &err);
    }
    test_alloc_counting = 0;
    long allocs = rb_alloc_fail_after(-1);
    cr_assert_eq(st, 1, "%s", err.msg);
    cr_assert_eq(allocs, 0, "rb_malloc calls: %ld", allocs);
    if (test_alloc_count_works())
        cr_assert_eq(test_alloc_count, 0, "C-library allocations: %ld", test_alloc_count);
    cr_assert_eq(rb_sim_set_torque_feedback(NULL, t->tau_j, NULL, &err), RB_EINVAL);
    rb_sim_finish(s);
    a.sc.torque_feedback = (rb_sim_torque_feedback)7;
    cr_assert_eq(rb_sim_init(&a.sc, &s, &err), RB_ECONFIG);
    rb_model_free(a.m);
}

/* truth->com against the dynamics module's CoM (a workspace of its own with the payload's parameters), its z
 * against the potential energy (V = m_total |g| c_z), and its rate against the CoM Jacobian (central
 * differences). A constant payload on the last body makes the payload's parameters count. */
Test(sim_feedback, truth_com_matches_independent_formulations)
{
    arm a;
    arm_setup(&a, RB_TFB_TRUTH);
    const rb_model *m = a.m;
    size_t last = m->n_bodies - 1, nv = m->nv;
    rb_sim_payload pl = {0}, *p = &pl;
    a.sc.payloads = p, a.sc.n_payloads = 1;
    p->kind = RB_PAYLOAD_STEPS, p->body = (int)last, p->t0 = 0.0;
    memcpy(p->pi_a, m->bodies[last].inertia, sizeof p->pi_a);
    memcpy(p->pi_b, p->pi_a, sizeof p->pi_b);
    p->pi_b[0] += 2.0, p->pi_b[1] += 2.0 * 0.1; /* 2 kg at 0.1 m along x (a point mass: I += m (|c|^2 1 - c c^T)) */
    p->pi_b[7] += 2.0 * 0.01, p->pi_b[9] += 2.0 * 0.01;
    double g = -m->gravity[2];
    cr_assert_gt(g, 9.0);
    cr_assert_eq(m->gravity[0], 0.0);
    a.sc.truth_on_demand = true;
    a.sc.method = RB_SIM_RK4; /* a smooth path for the central differences */
    rb_sim *s = start(&a.sc);
    const rb_sim_truth *t = rb_sim_truth_get(s);
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    cr_assert_eq(rb_dyn_set_body_inertia(m, ws, last, p->pi_b, &err), RB_OK, "%s", err.msg);
    double mass = rb_dyn_total_mass(m) + 2.0, prev[3] = {0}, prev2[3] = {0}, rate[3] = {0},
           *J = calloc(3 * nv, sizeof *J);
    size_t checked = 0;
    double worst = 0.0;
    for (size_t k = 0;; k++) {
        cr_assert_eq(t->valid & RB_SIM_TRUTH_COM, 0u, "on demand: not computed yet");
        cr_assert_eq(rb_sim_truth_compute(s, RB_SIM_TRUTH_COM | RB_SIM_TRUTH_ENERGY, &err), RB_OK, "%s", err.msg);
        double c[3];
        cr_assert_eq(rb_dyn_kinematics(m, ws, t->q, t->nu, NULL, &err), RB_OK);
        cr_assert_eq(rb_dyn_com(m, ws, c, &err), RB_OK);
        for (int i = 0; i < 3; i++)
            cr_assert_float_eq(t->com[i], c[i], 1e-12, "sample %zu axis %d", k, i);
        cr_assert_float_eq(t->potential, mass * g * t->com[2], 1e-9 * (1 + fabs(t->potential)), "sample %zu", k);
        if (k >= 100) { /* the rate at the previous sample (past the start, where the ZOH torques jump) */
            for (int i = 0; i < 3; i++) {
                double fd = (t->com[i] - prev2[i]) / (2 * a.sc.dt);
                worst = fmax(worst, fabs(fd - rate[i]));
                cr_assert_float_eq(fd, rate[i], 2e-4, "sample %zu axis %d: %g vs %g", k, i, fd, rate[i]);
            }
            checked++;
        }
        rb_mat Jv = rb_mat_view(J, 3, nv, nv);
        cr_assert_eq(rb_dyn_com_jacobian(m, ws, &Jv, NULL, &err), RB_OK);
        for (int i = 0; i < 3; i++) {
            rate[i] = 0.0;
            for (size_t v = 0; v < nv; v++)
                rate[i] += J[(size_t)i * nv + v] * t->nu[v];
        }
        memcpy(prev2, prev, sizeof prev), memcpy(prev, t->com, sizeof prev);
        int st = rb_sim_step(s, &err);
        cr_assert_geq(st, 0, "%s", err.msg);
        if (st == 0)
            break;
    }
    cr_assert_gt(checked, 1500);
    cr_log_info("CoM rate: central differences within %.3g m/s of the CoM Jacobian", worst);
    free(J);
    rb_dyn_free(ws);
    rb_sim_finish(s);
    rb_model_free(a.m);
}
