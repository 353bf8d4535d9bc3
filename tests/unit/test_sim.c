/* lib/sim: physics of the engine (energy, contacts, inverse-dynamics consistency, the motor-current model,
 * stiction, pushes, payload), determinism and no allocation per step. All runs are seeded. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "roboest/sim.h"

static rb_model *load(const char *file, bool floating)
{
    rb_model *m = NULL;
    rb_err err;
    rb_model_opts o = {0};
    o.floating = floating;
    char path[1024];
    snprintf(path, sizeof path, "%s/datasets/%s", RB_SOURCE, file);
    int rc = rb_model_load_urdf(path, &o, &m, &err);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    return m;
}

static rb_sim *start(const rb_sim_scenario *sc)
{
    rb_sim *s = NULL;
    rb_err err;
    int rc = rb_sim_init(sc, &s, &err);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    return s;
}

static void run_to(rb_sim *s, double t_end)
{
    rb_err err;
    while (rb_sim_truth_get(s)->t < t_end - 1e-9) {
        int rc = rb_sim_step(s, &err);
        cr_assert_geq(rc, 0, "%s", err.msg);
        if (rc == 0)
            break;
    }
}

/* Floating humanoid standing on both soles (pelvis at 0.85 m), PD + contact-consistent gravity compensation. */
typedef struct standing {
    rb_model *m;
    double q0[64];
    rb_sim_contact c[2];
    rb_sim_joint_ctrl g[32];
    rb_sim_scenario sc;
} standing;

static void standing_setup(standing *st)
{
    memset(st, 0, sizeof *st);
    st->m = load("humanoid_lower_body.urdf", true);
    rb_dyn_neutral(st->m, st->q0);
    st->q0[2] = 0.85;
    /* knees bent (straight legs make the two-foot contact system singular as soon as the CoM moves) */
    const char *names[6] = {"l_hip_pitch", "l_knee", "l_ankle_pitch", "r_hip_pitch", "r_knee", "r_ankle_pitch"};
    const double bend[6] = {0.3, -0.6, 0.3, 0.3, -0.6, 0.3};
    for (int k = 0; k < 6; k++) {
        long d = rb_model_dof_index(st->m, names[k]);
        cr_assert_geq(d, 0);
        st->q0[7 + d] = bend[k];
    }
    {
        rb_dyn *ws = NULL;
        rb_err err;
        rb_xform X;
        cr_assert_eq(rb_dyn_alloc(st->m, &ws, &err), RB_OK);
        rb_dyn_kinematics(st->m, ws, st->q0, NULL, NULL, &err);
        rb_dyn_frame_pose(st->m, ws, (size_t)rb_model_frame_index(st->m, "l_sole"), &X, &err);
        st->q0[2] -= X.p[2]; /* soles back on z = 0 */
        rb_dyn_free(ws);
    }
    for (int k = 0; k < 2; k++) {
        st->c[k].frame = (int)rb_model_frame_index(st->m, k ? "r_sole" : "l_sole");
        cr_assert_geq(st->c[k].frame, 0);
        st->c[k].dim = 6, st->c[k].baumgarte_T = 0.02, st->c[k].initially_active = true;
    }
    for (size_t j = 0; j < st->m->n_dofs; j++)
        st->g[j].kp = 200, st->g[j].kd = 10;
    rb_sim_scenario *sc = &st->sc;
    sc->model = st->m, sc->dt = 1e-3, sc->duration = 2.0, sc->seed = 3, sc->q0 = st->q0;
    sc->contacts = st->c, sc->n_contacts = 2;
    sc->ctrl = RB_CTRL_PD, sc->gains = st->g, sc->gravity_comp = true;
}

Test(sim, energy_conserved_fixed_base_rk4)
{
    rb_model *m = load("arm_2ft.urdf", false);
    double q0[8] = {0.4, 1.0, -0.7, 0.3}, nu0[8] = {0.5, -0.3, 0.8, 1.0};
    rb_sim_actuator act[8] = {{.k_t = 0.1, .R = 100, .J_m = 1e-5},
                              {.k_t = 0.1, .R = -100, .J_m = 1e-5},
                              {.k_t = 0.1, .R = 80, .J_m = 1e-5},
                              {.k_t = 0.1, .R = 50, .J_m = 1e-5}};
    cr_assert_leq(m->n_dofs, 8);
    rb_sim_scenario sc = {0};
    sc.model = m, sc.dt = 1e-3, sc.duration = 10.0, sc.method = RB_SIM_RK4, sc.q0 = q0, sc.nu0 = nu0;
    sc.actuators = act;
    rb_sim *s = start(&sc);
    const rb_sim_truth *tr = rb_sim_truth_get(s);
    double E0 = tr->kinetic + tr->potential, dmax = 0.0;
    rb_err err;
    while (rb_sim_step(s, &err) == 1)
        dmax = fmax(dmax, fabs(tr->kinetic + tr->potential - E0));
    cr_assert_float_eq(tr->t, 10.0, 1e-9);
    /* stated tolerance: 1e-6 J over 10 s at 1 kHz with RK4 (E0 of order 1 J) */
    cr_assert_lt(dmax, 1e-6, "energy drift %g J (E0 %g J)", dmax, E0);
    rb_sim_finish(s);
    rb_model_free(m);
}

Test(sim, humanoid_feet_stay_and_contact_forces_match_rnea)
{
    standing st;
    standing_setup(&st);
    rb_sim *s = start(&st.sc);
    const rb_sim_truth *tr = rb_sim_truth_get(s);
    rb_xform X0[2] = {{{0}, {0}}, {{0}, {0}}};
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(st.m, &ws, &err), RB_OK);
    cr_assert_eq(rb_dyn_kinematics(st.m, ws, tr->q, NULL, NULL, &err), RB_OK);
    for (int k = 0; k < 2; k++)
        rb_dyn_frame_pose(st.m, ws, (size_t)st.c[k].frame, &X0[k], &err);
    double drift = 0.0, id_err = 0.0, tau[64];
    int rc;
    while ((rc = rb_sim_step(s, &err)) == 1) {
        cr_assert_eq(rb_dyn_kinematics(st.m, ws, tr->q, NULL, NULL, &err), RB_OK);
        for (int k = 0; k < 2; k++) {
            rb_xform X;
            rb_dyn_frame_pose(st.m, ws, (size_t)st.c[k].frame, &X, &err);
            for (int i = 0; i < 3; i++)
                drift = fmax(drift, fabs(X.p[i] - X0[k].p[i]));
        }
        rb_ext_wrench ext[2];
        for (int k = 0; k < 2; k++) {
            ext[k].frame = st.c[k].frame, ext[k].rep = RB_DYN_MIXED;
            memcpy(ext[k].w, tr->contact_wrench + 6 * k, sizeof ext[k].w);
        }
        cr_assert_eq(rb_dyn_rnea(st.m, ws, tr->q, tr->nu, tr->nu_dot, ext, 2, tau, &err), RB_OK, "%s", err.msg);
        for (size_t i = 0; i < 6; i++)
            id_err = fmax(id_err, fabs(tau[i]));
        for (size_t j = 0; j < tr->n; j++)
            id_err = fmax(id_err, fabs(tau[6 + j] - tr->tau_j[j]));
    }
    cr_assert_eq(rc, 0, "%s", err.msg);
    double fz = tr->contact_wrench[2] + tr->contact_wrench[8];
    cr_assert_float_eq(fz, rb_dyn_total_mass(st.m) * 9.81, 1e-3 * fz, "weight %g", fz);
    cr_assert_lt(drift, 1e-6, "sole drift %g m", drift); /* stated bound: 1 um over 2 s */
    cr_assert_lt(id_err, 1e-7, "RNEA with contact wrenches vs joint torques: %g", id_err);
    rb_dyn_free(ws);
    rb_sim_finish(s);
    rb_model_free(st.m);
}

Test(sim, balancing_com_follows_sinusoid_feet_planted)
{
    standing st;
    standing_setup(&st);
    st.sc.duration = 3.0;
    st.sc.balance.enabled = true, st.sc.balance.amplitude = 0.03, st.sc.balance.freq = 0.5;
    for (size_t j = 0; j < st.m->n_dofs; j++)
        st.g[j].kp = 600, st.g[j].kd = 30;
    rb_sim *s = start(&st.sc);
    const rb_sim_truth *tr = rb_sim_truth_get(s);
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(st.m, &ws, &err), RB_OK);
    double c0[3], c[3], emax = 0.0;
    rb_dyn_kinematics(st.m, ws, tr->q, NULL, NULL, &err);
    rb_dyn_com(st.m, ws, c0, &err);
    int rc;
    while ((rc = rb_sim_step(s, &err)) == 1) {
        rb_dyn_kinematics(st.m, ws, tr->q, NULL, NULL, &err);
        rb_dyn_com(st.m, ws, c, &err);
        double want = c0[1] + 0.03 * sin(2 * M_PI * 0.5 * tr->t);
        emax = fmax(emax, fabs(c[1] - want));
    }
    cr_assert_eq(rc, 0, "%s", err.msg);
    cr_assert_lt(emax, 1e-2, "CoM y tracking error %g m", emax); /* PD lag: stated bound 1 cm on a 3 cm sine */
    rb_dyn_free(ws);
    rb_sim_finish(s);
    rb_model_free(st.m);
}

/* Arm tracking sinusoids with actuators, SCV friction, torque control. */
static rb_sim_scenario arm_tracking(rb_model *m, rb_sim_ref *ref, rb_sim_joint_ctrl *g, rb_sim_actuator *act,
                                    rb_friction_model *fr)
{
    rb_sim_scenario sc = {0};
    sc.model = m, sc.dt = 1e-3, sc.duration = 2.0, sc.seed = 7;
    for (size_t j = 0; j < m->n_dofs; j++) {
        ref[j] = (rb_sim_ref){.kind = RB_REF_SINE, .amplitude = 0.3, .freq = 0.5 + 0.2 * (double)j};
        g[j] = (rb_sim_joint_ctrl){.kp = 400, .kd = 40, .kp_tau = 0.5, .ki_tau = 5};
        act[j] = (rb_sim_actuator){.k_t = 0.05, .R = j % 2 ? -100.0 : 160.0, .J_m = 2e-5, .i_max = 10};
        rb_err err;
        double p[4] = {0.3, 0.6, 0.7, 0.01};
        cr_assert_eq(rb_friction_build("scv", p, 4, &fr[j], &err), RB_OK);
    }
    sc.refs = ref, sc.gains = g, sc.actuators = act, sc.friction = fr, sc.ctrl = RB_CTRL_TORQUE;
    return sc;
}

Test(sim, motor_current_model_round_trip)
{
    rb_model *m = load("arm_2ft.urdf", false);
    rb_sim_ref ref[8];
    rb_sim_joint_ctrl g[8];
    rb_sim_actuator act[8];
    rb_friction_model fr[8];
    rb_sim_scenario sc = arm_tracking(m, ref, g, act, fr);
    rb_sim *s = start(&sc);
    const rb_sim_truth *tr = rb_sim_truth_get(s);
    rb_err err;
    double worst = 0.0, track = 0.0;
    while (rb_sim_step(s, &err) == 1) {
        for (size_t j = 0; j < tr->n; j++) {
            double R = act[j].R,
                   tau = act[j].k_t * R * tr->current[j] - tr->tau_f[j] - R * act[j].J_m * tr->motor_acc[j];
            worst = fmax(worst, fabs(tau - tr->tau_j[j]));
            cr_assert_float_eq(tr->motor_vel[j], R * tr->s_dot[j], 1e-12);
            if (tr->t > 1.0)
                track = fmax(track, fabs(tr->s[j] - tr->ref[j]));
        }
    }
    cr_assert_lt(worst, 1e-9, "round trip error %g N m", worst);
    cr_assert_lt(track, 0.05, "tracking error %g rad", track);
    rb_sim_finish(s);
    rb_model_free(m);
}

Test(sim, current_saturates)
{
    rb_model *m = load("arm_2ft.urdf", false);
    rb_sim_ref ref[8];
    rb_sim_joint_ctrl g[8];
    rb_sim_actuator act[8];
    rb_friction_model fr[8];
    rb_sim_scenario sc = arm_tracking(m, ref, g, act, fr);
    for (size_t j = 0; j < m->n_dofs; j++)
        act[j].i_max = 0.05, ref[j].kind = RB_REF_STEP, ref[j].amplitude = 1.0;
    rb_sim *s = start(&sc);
    run_to(s, 0.2);
    const rb_sim_truth *tr = rb_sim_truth_get(s);
    for (size_t j = 0; j < tr->n; j++)
        cr_assert_leq(fabs(tr->current[j]), 0.05);
    cr_assert_gt(fabs(tr->current_cmd[0]), 0.05);
    rb_sim_finish(s);
    rb_model_free(m);
}

/* Every joint has stiction; PD toward a reference: a small offset stays below breakaway. */
static double stiction_motion(double step)
{
    rb_model *m = load("arm_2ft.urdf", false);
    rb_sim_ref ref[8] = {{0}};
    rb_sim_joint_ctrl g[8] = {{0}};
    rb_friction_model fr[8];
    rb_err err;
    for (size_t j = 0; j < m->n_dofs; j++) {
        double p[4] = {1.0, 40.0, 0.1, 1e-3}; /* F_s far above the gravity torques */
        cr_assert_eq(rb_friction_build("stiction", p, 4, &fr[j], &err), RB_OK, "%s", err.msg);
        g[j].kp = 50, g[j].kd = 2;
    }
    ref[0].kind = RB_REF_STEP, ref[0].amplitude = step, ref[0].t0 = 0.1;
    rb_sim_scenario sc = {0};
    sc.model = m, sc.dt = 1e-3, sc.duration = 1.0, sc.refs = ref, sc.gains = g, sc.friction = fr, sc.ctrl = RB_CTRL_PD;
    rb_sim *s = start(&sc);
    const rb_sim_truth *tr = rb_sim_truth_get(s);
    double moved = 0.0;
    while (rb_sim_step(s, &err) == 1)
        for (size_t j = 0; j < tr->n; j++)
            moved = fmax(moved, fabs(tr->s[j]));
    rb_sim_finish(s);
    rb_model_free(m);
    return moved;
}

Test(sim, stiction_holds_below_breakaway)
{
    cr_assert_eq(stiction_motion(0.5), 0.0);  /* 25 N m < 40 N m: held exactly */
    cr_assert_gt(stiction_motion(1.2), 0.05); /* 60 N m > 40 N m: breaks away */
}

static void run_record(rb_sim_scenario *sc, double *q_out, size_t stride)
{
    rb_sim *s = start(sc);
    const rb_sim_truth *tr = rb_sim_truth_get(s);
    rb_err err;
    size_t k = 0;
    do {
        memcpy(q_out + k * stride, tr->q, tr->nq * sizeof *q_out);
        k++;
    } while (rb_sim_step(s, &err) == 1);
    rb_sim_finish(s);
}

Test(sim, push_changes_motion_only_from_its_window)
{
    rb_model *m = load("arm_2ft.urdf", false);
    rb_sim_joint_ctrl g[8];
    for (size_t j = 0; j < m->n_dofs; j++)
        g[j] = (rb_sim_joint_ctrl){.kp = 100, .kd = 10};
    rb_sim_scenario sc = {0};
    sc.model = m, sc.dt = 1e-3, sc.duration = 1.0, sc.ctrl = RB_CTRL_PD, sc.gains = g, sc.gravity_comp = true;
    size_t N = 1001, nq = m->nq;
    double *a = calloc(N * nq, sizeof *a), *b = calloc(N * nq, sizeof *b);
    run_record(&sc, a, nq);
    rb_sim_push p = {.frame = (int)rb_model_frame_index(m, "tool_frame"),
                     .shape = RB_PUSH_HALF_SINE,
                     .start = 0.4,
                     .duration = 0.1,
                     .peak = {20, 0, 5, 0, 0, 0}};
    if (p.frame < 0)
        p.frame = (int)rb_model_frame_index(m, m->bodies[m->n_bodies - 1].name);
    sc.pushes = &p, sc.n_pushes = 1;
    run_record(&sc, b, nq);
    for (size_t k = 0; k <= 400; k++)
        cr_assert_eq(memcmp(a + k * nq, b + k * nq, nq * sizeof *a), 0, "differs before the push at step %zu", k);
    double d = 0.0;
    for (size_t k = 401; k < N; k++)
        for (size_t i = 0; i < nq; i++)
            d = fmax(d, fabs(a[k * nq + i] - b[k * nq + i]));
    cr_assert_gt(d, 1e-3, "push effect %g", d);
    free(a), free(b);
    rb_model_free(m);
}

Test(sim, payload_changes_static_torque_by_m_g_l)
{
    rb_model *m = load("arm_2ft.urdf", false);
    rb_friction_model fr[8];
    rb_err err;
    for (size_t j = 0; j < m->n_dofs; j++) {
        double p[4] = {1.0, 1000.0, 0.1, 1e-3}; /* every joint held: the static torques appear in tau_j */
        cr_assert_eq(rb_friction_build("stiction", p, 4, &fr[j], &err), RB_OK);
    }
    double q0[8] = {0.2, 0.9, -0.6, 0.3};
    int body = (int)m->n_bodies - 1, dm_body = body;
    double dm = 0.8, c[3] = {0.05, 0.02, 0.1};
    rb_sim_scenario sc = {0};
    rb_sim_payload pl = {0};
    sc.model = m, sc.dt = 1e-3, sc.duration = 0.6, sc.q0 = q0, sc.friction = fr;
    sc.payloads = &pl, sc.n_payloads = 1;
    pl.kind = RB_PAYLOAD_STEPS, pl.body = body, pl.t0 = 0.3;
    memcpy(pl.pi_a, m->bodies[body].inertia, sizeof pl.pi_a);
    memcpy(pl.pi_b, m->bodies[body].inertia, sizeof pl.pi_b);
    double *pb = pl.pi_b, cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    pb[0] += dm;
    for (int i = 0; i < 3; i++)
        pb[1 + i] += dm * c[i];
    pb[4] += dm * (cc - c[0] * c[0]), pb[5] -= dm * c[0] * c[1], pb[6] -= dm * c[0] * c[2];
    pb[7] += dm * (cc - c[1] * c[1]), pb[8] -= dm * c[1] * c[2], pb[9] += dm * (cc - c[2] * c[2]);
    rb_sim *s = start(&sc);
    const rb_sim_truth *tr = rb_sim_truth_get(s);
    double before[8];
    memcpy(before, tr->tau_j, m->n_dofs * sizeof *before);
    run_to(s, 0.5);
    /* expected change at joint j: axis . (r x dm g), r from the joint origin to the added mass */
    rb_dyn *ws = NULL;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    rb_dyn_kinematics(m, ws, tr->q, NULL, NULL, &err);
    const rb_xform *Xp = rb_dyn_body_pose(ws, (size_t)dm_body);
    double pw[3];
    rb_m3_mul_v(Xp->R, c, pw);
    for (int i = 0; i < 3; i++)
        pw[i] += Xp->p[i];
    for (size_t j = 0; j < m->n_dofs; j++) {
        cr_assert_eq(tr->stuck[j], 1);
        const rb_xform *Xj = rb_dyn_body_pose(ws, (size_t)m->dof_body[j]);
        double ax[3], r[3], F[3], mo[3];
        rb_m3_mul_v(Xj->R, m->bodies[m->dof_body[j]].axis, ax);
        for (int i = 0; i < 3; i++)
            r[i] = pw[i] - Xj->p[i], F[i] = dm * m->gravity[i];
        rb_v3_cross(r, F, mo);
        double want = -rb_v3_dot(ax, mo); /* the joint must supply the opposite of the load's moment */
        cr_assert_float_eq(tr->tau_j[j] - before[j], want, 1e-9, "joint %zu: %g vs %g", j, tr->tau_j[j] - before[j],
                           want);
    }
    cr_assert_float_eq(tr->payload_pi[0], pl.pi_b[0], 1e-15);
    rb_dyn_free(ws);
    rb_sim_finish(s);
    rb_model_free(m);
}

/* Humanoid with random pushes and LuGre friction: two runs give identical bytes, and steps allocate nothing. */
static void det_run(double *buf, size_t per, size_t steps, long *allocs, long *c_allocs)
{
    standing st;
    standing_setup(&st);
    rb_friction_model fr[32];
    rb_err err;
    for (size_t j = 0; j < st.m->n_dofs; j++) {
        double p[6] = {0.3, 0.5, 0.2, 0.02, 200, 1};
        cr_assert_eq(rb_friction_build("lugre", p, 6, &fr[j], &err), RB_OK);
        fr[j].drift.s0 = 1.0, fr[j].drift.s1 = 1.5, fr[j].drift.t1 = 0.3;
    }
    st.sc.friction = fr;
    st.sc.duration = (double)steps * st.sc.dt;
    st.sc.random_pushes = (rb_sim_random_pushes){.frame = (int)rb_model_frame_index(st.m, "root_link"),
                                                 .shape = RB_PUSH_TRIANGLE,
                                                 .rate = 20,
                                                 .duration = 0.02,
                                                 .force_min = 5,
                                                 .force_max = 20};
    if (st.sc.random_pushes.frame < 0)
        st.sc.random_pushes.frame = 0;
    rb_sim *s = start(&st.sc);
    const rb_sim_truth *tr = rb_sim_truth_get(s);
    test_alloc_count_init();
    rb_alloc_fail_after(-1);
    test_alloc_count = 0;
    test_alloc_counting = 1;
    for (size_t k = 0; k < steps; k++) {
        double *o = buf + k * per;
        memcpy(o, tr->q, tr->nq * sizeof *o), o += tr->nq;
        memcpy(o, tr->nu_dot, tr->nv * sizeof *o), o += tr->nv;
        memcpy(o, tr->tau_j, tr->n * sizeof *o), o += tr->n;
        memcpy(o, tr->tau_f, tr->n * sizeof *o), o += tr->n;
        memcpy(o, tr->contact_wrench, 12 * sizeof *o), o += 12;
        memcpy(o, tr->ft, 6 * tr->n_ft * sizeof *o);
        if (rb_sim_step(s, &err) != 1)
            cr_assert_fail("%s", err.msg);
    }
    test_alloc_counting = 0;
    *allocs = rb_alloc_fail_after(-1);
    *c_allocs = test_alloc_count;
    cr_assert_gt(tr->n_pushes, 0);
    rb_sim_finish(s);
    rb_model_free(st.m);
}

Test(sim, deterministic_and_allocation_free)
{
    size_t steps = 500, per = 7 + 6 + 4 * 32 + 12 + 6 * 16;
    double *a = calloc(steps * per, sizeof *a), *b = calloc(steps * per, sizeof *b);
    long ra, ca, rb, cb;
    det_run(a, per, steps, &ra, &ca);
    det_run(b, per, steps, &rb, &cb);
    cr_assert_eq(memcmp(a, b, steps * per * sizeof *a), 0);
    cr_assert_eq(ra, 0, "rb_malloc calls during steps: %ld", ra);
    if (test_alloc_count_works())
        cr_assert_eq(ca, 0, "C-library allocations during steps: %ld", ca);
    free(a), free(b);
}

Test(sim, references)
{
    double times[4] = {0, 1, 2, 4}, values[4] = {0, 1, 0, 2}, r[3], r2[3], h = 1e-6;
    rb_sim_ref sp = {.kind = RB_REF_SPLINE, .times = times, .values = values, .n_points = 4};
    for (int k = 0; k < 4; k++) {
        rb_sim_ref_eval(&sp, times[k], r);
        cr_assert_float_eq(r[0], values[k], 1e-12);
    }
    rb_sim_ref ch = {.kind = RB_REF_CHIRP, .amplitude = 0.5, .freq = 0.2, .freq_end = 3, .t0 = 0.5, .t1 = 5};
    rb_sim_ref *all[2] = {&sp, &ch};
    for (int i = 0; i < 2; i++)
        for (double t = 0.31; t < 6; t += 0.37) {
            rb_sim_ref_eval(all[i], t + h, r2);
            rb_sim_ref_eval(all[i], t - h, r);
            double d = (r2[0] - r[0]) / (2 * h), dd = (r2[1] - r[1]) / (2 * h);
            rb_sim_ref_eval(all[i], t, r);
            cr_assert_float_eq(r[1], d, 1e-5);
            cr_assert_float_eq(r[2], dd, 1e-4);
        }
}

Test(sim, rejects_bad_scenarios)
{
    rb_model *m = load("arm_2ft.urdf", false);
    rb_sim *s = NULL;
    rb_err err;
    rb_sim_scenario sc = {0};
    sc.model = m, sc.dt = 0.0, sc.duration = 1.0;
    cr_assert_eq(rb_sim_init(&sc, &s, &err), RB_ECONFIG);
    sc.dt = 1e-3;
    rb_sim_actuator act[8] = {{.k_t = 0.1, .R = 0.0, .i_max = 1.0}};
    sc.actuators = act;
    cr_assert_eq(rb_sim_init(&sc, &s, &err), RB_ECONFIG);
    cr_assert_null(s);
    sc.actuators = NULL;
    sc.balance.enabled = true;
    cr_assert_eq(rb_sim_init(&sc, &s, &err), RB_ECONFIG);
    rb_model_free(m);
}
