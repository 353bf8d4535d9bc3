/* lib/sim: the engine's speed-ups keep the physics: the truth computed on demand equals the truth computed every
 * sample, the joint-list order (the tree-sparse factorization's permutation) does not change the motion, the
 * forward dynamics equals the articulated-body algorithm, and semi-implicit Euler stays close to RK4 on the
 * balancing humanoid. All runs are seeded. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "roboest/sim.h"

static rb_model *load(const char *file, const rb_model_opts *o)
{
    rb_model *m = NULL;
    rb_err err;
    char path[1024];
    snprintf(path, sizeof path, "%s/datasets/%s", RB_SOURCE, file);
    cr_assert_eq(rb_model_load_urdf(path, o, &m, &err), RB_OK, "%s", err.msg);
    return m;
}

static rb_sim *start(const rb_sim_scenario *sc)
{
    rb_sim *s = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(sc, &s, &err), RB_OK, "%s", err.msg);
    return s;
}

/* The humanoid standing on both soles (knees bent, soles on z = 0), PD + contact-consistent gravity
 * compensation; joint-indexed inputs by name so that any joint-list order gives the same robot. */
typedef struct standing {
    rb_model *m;
    double q0[64];
    rb_sim_contact c[2];
    rb_sim_joint_ctrl g[32];
    rb_friction_model fr[32];
    rb_sim_scenario sc;
} standing;

static void standing_setup(standing *st, const char *const *joints, size_t n_joints)
{
    memset(st, 0, sizeof *st);
    rb_model_opts o = {0};
    o.floating = true, o.joints = joints, o.n_joints = n_joints;
    st->m = load("humanoid_lower_body.urdf", &o);
    rb_dyn_neutral(st->m, st->q0);
    st->q0[2] = 0.85;
    const char *names[6] = {"l_hip_pitch", "l_knee", "l_ankle_pitch", "r_hip_pitch", "r_knee", "r_ankle_pitch"};
    const double bend[6] = {0.3, -0.6, 0.3, 0.3, -0.6, 0.3};
    for (int k = 0; k < 6; k++)
        st->q0[7 + rb_model_dof_index(st->m, names[k])] = bend[k];
    rb_dyn *ws = NULL;
    rb_err err;
    rb_xform X;
    cr_assert_eq(rb_dyn_alloc(st->m, &ws, &err), RB_OK);
    rb_dyn_kinematics(st->m, ws, st->q0, NULL, NULL, &err);
    rb_dyn_frame_pose(st->m, ws, (size_t)rb_model_frame_index(st->m, "l_sole"), &X, &err);
    st->q0[2] -= X.p[2];
    rb_dyn_free(ws);
    for (int k = 0; k < 2; k++)
        st->c[k] = (rb_sim_contact){.frame = (int)rb_model_frame_index(st->m, k ? "r_sole" : "l_sole"),
                                    .dim = 6,
                                    .baumgarte_T = 0.02,
                                    .initially_active = true};
    for (size_t j = 0; j < st->m->n_dofs; j++) {
        st->g[j] = (rb_sim_joint_ctrl){.kp = 600, .kd = 30};
        double p[6] = {0.3, 0.5, 0.2, 0.02, 200, 1};
        cr_assert_eq(rb_friction_build("lugre", p, 6, &st->fr[j], &err), RB_OK);
    }
    rb_sim_scenario *sc = &st->sc;
    sc->model = st->m, sc->dt = 1e-3, sc->duration = 1.0, sc->seed = 11, sc->q0 = st->q0;
    sc->contacts = st->c, sc->n_contacts = 2;
    sc->ctrl = RB_CTRL_PD, sc->gains = st->g, sc->gravity_comp = true;
}

/* Same scenario twice, one engine computing the whole truth every sample and one on demand: the dynamics are
 * the same bits, every part asked for holds the same bits as the whole truth, the parts not asked for are not
 * marked valid, and neither the step nor the on-demand computation allocates. */
Test(sim_engine, truth_on_demand_equals_the_whole_truth)
{
    standing st;
    standing_setup(&st, NULL, 0);
    st.sc.friction = st.fr;
    st.sc.random_pushes = (rb_sim_random_pushes){.frame = (int)rb_model_frame_index(st.m, "chest"),
                                                 .shape = RB_PUSH_HALF_SINE,
                                                 .rate = 10,
                                                 .duration = 0.03,
                                                 .force_min = 10,
                                                 .force_max = 40};
    cr_assert_geq(st.sc.random_pushes.frame, 0);
    rb_sim *full = start(&st.sc);
    st.sc.truth_on_demand = true;
    rb_sim *lazy = start(&st.sc);
    const rb_sim_truth *a = rb_sim_truth_get(full), *b = rb_sim_truth_get(lazy);
    cr_assert_gt(a->n_pushes, 0);
    cr_assert_gt(a->n_ft, 0);
    cr_assert_gt(a->n_frames, 0);
    cr_assert_eq(a->valid, RB_SIM_TRUTH_ALL);
    rb_err err;
    size_t nf = a->n_frames, asked[3] = {0, 0, 0};
    test_alloc_count_init();
    rb_alloc_fail_after(-1);
    test_alloc_count = 0;
    test_alloc_counting = 1;
    for (size_t k = 0;; k++) {
        cr_assert_eq(b->t, a->t);
        cr_assert_eq(memcmp(b->q, a->q, a->nq * sizeof *a->q), 0, "q differs at sample %zu", k);
        cr_assert_eq(memcmp(b->nu_dot, a->nu_dot, a->nv * sizeof *a->nu_dot), 0, "nu_dot differs at sample %zu", k);
        cr_assert_eq(memcmp(b->tau_j, a->tau_j, a->n * sizeof *a->tau_j), 0);
        cr_assert_eq(memcmp(b->contact_wrench, a->contact_wrench, 12 * sizeof *a->tau_j), 0);
        cr_assert_eq(b->valid, 0u, "nothing computed yet at sample %zu", k);
        unsigned parts = (k % 3 == 0 ? RB_SIM_TRUTH_FT : 0u) | (k % 10 == 0 ? RB_SIM_TRUTH_FRAMES : 0u) |
                         (k % 7 == 0 ? RB_SIM_TRUTH_ENERGY : 0u);
        cr_assert_eq(rb_sim_truth_compute(lazy, parts, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_sim_truth_compute(lazy, parts, &err), RB_OK); /* twice: nothing more to do */
        cr_assert_eq(b->valid, parts);
        if (parts & RB_SIM_TRUTH_FT) {
            cr_assert_eq(memcmp(b->ft, a->ft, 6 * a->n_ft * sizeof *a->ft), 0, "FT at sample %zu", k);
            asked[0]++;
        }
        if (parts & RB_SIM_TRUTH_FRAMES) {
            cr_assert_eq(memcmp(b->frame_pose, a->frame_pose, nf * sizeof *a->frame_pose), 0);
            cr_assert_eq(memcmp(b->frame_vel, a->frame_vel, 6 * nf * sizeof *a->frame_vel), 0);
            cr_assert_eq(memcmp(b->frame_acc, a->frame_acc, 6 * nf * sizeof *a->frame_acc), 0, "sample %zu", k);
            asked[1]++;
        }
        if (parts & RB_SIM_TRUTH_ENERGY) {
            cr_assert_eq(b->kinetic, a->kinetic);
            cr_assert_eq(b->potential, a->potential);
            asked[2]++;
        }
        int ra = rb_sim_step(full, &err), rb = rb_sim_step(lazy, &err);
        cr_assert_eq(ra, rb);
        if (ra == 0)
            break;
        cr_assert_eq(ra, 1, "%s", err.msg);
    }
    test_alloc_counting = 0;
    long allocs = rb_alloc_fail_after(-1);
    cr_assert_eq(allocs, 0, "rb_malloc calls: %ld", allocs);
    if (test_alloc_count_works())
        cr_assert_eq(test_alloc_count, 0, "C-library allocations: %ld", test_alloc_count);
    cr_assert_gt(asked[0] * asked[1] * asked[2], 0);
    cr_assert_eq(rb_sim_truth_compute(NULL, RB_SIM_TRUTH_ALL, &err), RB_EINVAL);
    rb_sim_finish(full);
    rb_sim_finish(lazy);
    rb_model_free(st.m);
}

/* The humanoid with its joints listed in a shuffled order (so the factorization's tree order differs from the
 * joint-list order) moves as with the URDF order. */
Test(sim_engine, joint_list_order_does_not_change_the_motion)
{
    static const char *const urdf_order[15] = {"torso_pitch",  "torso_roll",    "torso_yaw",   "l_hip_pitch",
                                               "l_hip_roll",   "l_hip_yaw",     "l_knee",      "l_ankle_pitch",
                                               "l_ankle_roll", "r_hip_pitch",   "r_hip_roll",  "r_hip_yaw",
                                               "r_knee",       "r_ankle_pitch", "r_ankle_roll"};
    static const char *const shuffled[15] = {"r_ankle_roll",  "l_knee",      "torso_yaw",   "r_hip_pitch",
                                             "l_ankle_pitch", "r_knee",      "torso_pitch", "l_hip_roll",
                                             "r_ankle_pitch", "l_hip_yaw",   "r_hip_roll",  "l_ankle_roll",
                                             "torso_roll",    "l_hip_pitch", "r_hip_yaw"};
    standing a, b;
    standing_setup(&a, urdf_order, 15);
    standing_setup(&b, shuffled, 15);
    a.sc.balance = b.sc.balance = (rb_sim_balance){.enabled = true, .amplitude = 0.03, .freq = 0.5};
    a.sc.method = b.sc.method = RB_SIM_RK4;
    rb_sim *sa = start(&a.sc), *sb = start(&b.sc);
    const rb_sim_truth *ta = rb_sim_truth_get(sa), *tb = rb_sim_truth_get(sb);
    size_t map[15];
    for (size_t j = 0; j < 15; j++)
        map[j] = (size_t)rb_model_dof_index(b.m, urdf_order[j]);
    rb_err err;
    double dq = 0.0, dtau = 0.0, dw = 0.0;
    int rc;
    do {
        for (size_t i = 0; i < 7; i++)
            dq = fmax(dq, fabs(ta->q[i] - tb->q[i]));
        for (size_t j = 0; j < 15; j++) {
            dq = fmax(dq, fabs(ta->s[j] - tb->s[map[j]]));
            dtau = fmax(dtau, fabs(ta->tau_j[j] - tb->tau_j[map[j]]));
        }
        for (size_t i = 0; i < 12; i++)
            dw = fmax(dw, fabs(ta->contact_wrench[i] - tb->contact_wrench[i]));
        rc = rb_sim_step(sa, &err);
        cr_assert_eq(rb_sim_step(sb, &err), rc);
    } while (rc == 1);
    cr_assert_eq(rc, 0, "%s", err.msg);
    /* round-off only (the orders sum the same terms differently), amplified by the feedback loops and the IK's
     * finite-difference r_ddot (observed: 4e-9 rad, 2e-5 N m, 3e-5 N); a wrong permutation gives O(1) errors */
    cr_assert_lt(dq, 1e-7, "configuration differs by %g", dq);
    cr_assert_lt(dtau, 1e-3, "joint torques differ by %g N m", dtau);
    cr_assert_lt(dw, 1e-2, "contact wrenches differ by %g", dw);
    rb_sim_finish(sa);
    rb_sim_finish(sb);
    rb_model_free(a.m);
    rb_model_free(b.m);
}

/* Free motion of the arm with its joints listed backwards, rotors and a push: the engine solves
 * (M + diag(R^2 J_m)) nu_dot = -h + J^T w, i.e. M nu_dot + h - J^T w = -R^2 J_m s_ddot. Checked by the RNEA
 * (the residual) and by the articulated-body algorithm (rb_dyn_aba, an O(n) method without any matrix) fed
 * with the generalized forces -R^2 J_m s_ddot: it must give the engine's nu_dot back. */
Test(sim_engine, forward_dynamics_matches_aba_and_rnea)
{
    static const char *const backwards[4] = {"wrist_roll", "elbow", "shoulder_pitch", "shoulder_yaw"};
    rb_model_opts o = {0};
    o.joints = backwards, o.n_joints = 4;
    rb_model *m = load("arm_2ft.urdf", &o);
    double q0[4] = {0.3, 1.1, -0.4, 0.2}, nu0[4] = {1.0, -0.5, 0.7, 0.3};
    rb_sim_actuator act[4];
    for (int j = 0; j < 4; j++)
        act[j] = (rb_sim_actuator){.k_t = 0.1, .R = 50.0 + 30.0 * j, .J_m = j == 1 ? 0.0 : 1e-5};
    rb_sim_push p = {.frame = (int)rb_model_frame_index(m, "hand"),
                     .shape = RB_PUSH_RECT,
                     .start = 0.1,
                     .duration = 0.2,
                     .peak = {5, -3, 8, 0.2, 0.1, -0.3}};
    cr_assert_geq(p.frame, 0);
    rb_sim_scenario sc = {0};
    sc.model = m, sc.dt = 1e-3, sc.duration = 0.5, sc.q0 = q0, sc.nu0 = nu0, sc.actuators = act;
    sc.pushes = &p, sc.n_pushes = 1;
    rb_sim *s = start(&sc);
    const rb_sim_truth *tr = rb_sim_truth_get(s);
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    double tau[4], acc[4], worst_rnea = 0.0;
    size_t pushed = 0;
    do {
        rb_ext_wrench e = {p.frame, RB_DYN_MIXED, {0}};
        memcpy(e.w, tr->push_wrench, sizeof e.w);
        pushed += e.w[0] != 0.0;
        /* RNEA: M nu_dot + h - J^T w = -R^2 J_m s_ddot (no motor torque, no friction) */
        cr_assert_eq(rb_dyn_rnea(m, ws, tr->q, tr->nu, tr->nu_dot, &e, 1, tau, &err), RB_OK);
        for (int j = 0; j < 4; j++) {
            double R = act[j].R;
            worst_rnea = fmax(worst_rnea, fabs(tau[j] + R * R * act[j].J_m * tr->s_ddot[j]));
        }
        for (int j = 0; j < 4; j++)
            tau[j] = -act[j].R * act[j].R * act[j].J_m * tr->s_ddot[j];
        cr_assert_eq(rb_dyn_aba(m, ws, tr->q, tr->nu, tau, &e, 1, acc, &err), RB_OK);
        for (int j = 0; j < 4; j++)
            cr_assert_float_eq(acc[j], tr->s_ddot[j], 1e-9 * (1 + fabs(acc[j])), "joint %d at t = %g", j, tr->t);
    } while (rb_sim_step(s, &err) == 1);
    cr_assert_gt(pushed, 100);
    cr_assert_lt(worst_rnea, 1e-10, "RNEA residual %g N m", worst_rnea);
    rb_dyn_free(ws);
    rb_sim_finish(s);
    rb_model_free(m);
}

/* Semi-implicit Euler at 1 ms against RK4 on the balancing humanoid (3 s of the sideways CoM sine): the
 * trajectories, joint torques and contact wrenches agree to small fractions of their ranges (measured: 1.2e-4
 * rad / m, 0.08 N m of 28 N m, 0.6 of 350 N), so Euler is accurate enough for controlled contact scenarios. */
Test(sim_engine, euler_stays_close_to_rk4_when_balancing)
{
    standing st;
    standing_setup(&st, NULL, 0);
    st.sc.duration = 3.0;
    st.sc.balance = (rb_sim_balance){.enabled = true, .amplitude = 0.03, .freq = 0.5};
    st.sc.method = RB_SIM_EULER;
    rb_sim *e = start(&st.sc);
    st.sc.method = RB_SIM_RK4;
    rb_sim *r = start(&st.sc);
    const rb_sim_truth *te = rb_sim_truth_get(e), *tr = rb_sim_truth_get(r);
    rb_err err;
    double dq = 0.0, dtau = 0.0, tau_max = 0.0, dw = 0.0, w_max = 0.0;
    int rc;
    do {
        for (size_t i = 0; i < te->nq; i++)
            dq = fmax(dq, fabs(te->q[i] - tr->q[i]));
        for (size_t j = 0; j < te->n; j++)
            dtau = fmax(dtau, fabs(te->tau_j[j] - tr->tau_j[j])), tau_max = fmax(tau_max, fabs(tr->tau_j[j]));
        for (size_t i = 0; i < 12; i++) {
            dw = fmax(dw, fabs(te->contact_wrench[i] - tr->contact_wrench[i]));
            w_max = fmax(w_max, fabs(tr->contact_wrench[i]));
        }
        rc = rb_sim_step(e, &err);
        cr_assert_eq(rb_sim_step(r, &err), rc, "%s", err.msg);
    } while (rc == 1);
    cr_assert_lt(dq, 1e-3, "configuration: %g", dq);
    cr_assert_lt(dtau, 5e-3 * tau_max, "joint torques: %g of %g N m", dtau, tau_max);
    cr_assert_lt(dw, 5e-3 * w_max, "contact wrenches: %g of %g", dw, w_max);
    rb_sim_finish(e);
    rb_sim_finish(r);
    rb_model_free(st.m);
}

/* The truth's sensor parts against the dynamics library's own functions at the sample's state: frame pose,
 * BODY velocity and proper acceleration (rb_dyn_frame_*), FT readings (RNEA with the pushes and contact
 * wrenches, rb_dyn_ft_wrenches), kinetic (rb_dyn_kinetic_energy) and potential energy (-m g . com). */
Test(sim_engine, truth_sensor_parts_match_the_dynamics_library)
{
    standing st;
    standing_setup(&st, NULL, 0);
    st.sc.duration = 0.3;
    rb_sim_push p = {.frame = (int)rb_model_frame_index(st.m, "chest"),
                     .shape = RB_PUSH_TRIANGLE,
                     .start = 0.1,
                     .duration = 0.1,
                     .peak = {30, -20, 5, 1, 2, 0}};
    st.sc.pushes = &p, st.sc.n_pushes = 1;
    rb_sim *s = start(&st.sc);
    const rb_sim_truth *tr = rb_sim_truth_get(s);
    const rb_model *m = st.m;
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    double *tau = calloc(m->nv, sizeof *tau), *ft = calloc(6 * m->n_ft, sizeof *ft), worst = 0.0;
    cr_assert_gt(tr->n_frames, 0);
    do {
        cr_assert_eq(rb_dyn_kinematics(m, ws, tr->q, tr->nu, tr->nu_dot, &err), RB_OK);
        for (size_t f = 0; f < tr->n_frames; f++) {
            rb_xform X;
            double v[6], a[6];
            size_t fr = (size_t)tr->frames[f];
            rb_dyn_frame_pose(m, ws, fr, &X, &err);
            rb_dyn_frame_velocity(m, ws, fr, RB_DYN_BODY, v, &err);
            rb_dyn_frame_proper_acceleration(m, ws, fr, RB_DYN_BODY, a, &err);
            for (int k = 0; k < 9; k++)
                worst = fmax(worst, fabs(X.R[k] - tr->frame_pose[f].R[k]));
            for (int k = 0; k < 3; k++)
                worst = fmax(worst, fabs(X.p[k] - tr->frame_pose[f].p[k]));
            for (int k = 0; k < 6; k++)
                worst = fmax(worst, fabs(v[k] - tr->frame_vel[6 * f + k]) / (1 + fabs(v[k])));
            for (int k = 0; k < 6; k++)
                worst = fmax(worst, fabs(a[k] - tr->frame_acc[6 * f + k]) / (1 + fabs(a[k])));
        }
        rb_ext_wrench ext[3] = {{p.frame, RB_DYN_MIXED, {0}}};
        memcpy(ext[0].w, tr->push_wrench, sizeof ext[0].w);
        for (int k = 0; k < 2; k++) {
            ext[1 + k].frame = st.c[k].frame, ext[1 + k].rep = RB_DYN_MIXED;
            memcpy(ext[1 + k].w, tr->contact_wrench + 6 * k, sizeof ext[1 + k].w);
        }
        cr_assert_eq(rb_dyn_rnea(m, ws, tr->q, tr->nu, tr->nu_dot, ext, 3, tau, &err), RB_OK);
        cr_assert_eq(rb_dyn_ft_wrenches(m, ws, ft, &err), RB_OK);
        for (size_t i = 0; i < 6 * m->n_ft; i++)
            worst = fmax(worst, fabs(ft[i] - tr->ft[i]) / (1 + fabs(ft[i])));
        double T, c[3];
        cr_assert_eq(rb_dyn_kinetic_energy(m, ws, &T, &err), RB_OK);
        cr_assert_eq(rb_dyn_com(m, ws, c, &err), RB_OK);
        double V = -rb_dyn_total_mass(m) * (m->gravity[0] * c[0] + m->gravity[1] * c[1] + m->gravity[2] * c[2]);
        worst = fmax(worst, fabs(T - tr->kinetic) / (1 + T));
        worst = fmax(worst, fabs(V - tr->potential) / (1 + fabs(V)));
    } while (rb_sim_step(s, &err) == 1);
    cr_assert_lt(worst, 1e-10, "worst relative difference %g", worst);
    free(tau), free(ft);
    rb_dyn_free(ws);
    rb_sim_finish(s);
    rb_model_free(st.m);
}
