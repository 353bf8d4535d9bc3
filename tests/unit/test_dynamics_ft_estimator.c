/* lib/dynamics FT-sensor-based joint torque estimation (rb_ft_est_*): on simulated samples, the estimator given
 * only the joint state, one IMU and the FT readings reproduces the joint torques and contact wrenches of the
 * simulation. Samples: rb_dyn_fd_contact with random joint torques from a random state (rigid contacts), the FT
 * readings from rb_dyn_ft_wrenches with the contact wrenches as external wrenches, the IMU readings from
 * rb_dyn_frame_proper_acceleration / rb_dyn_frame_velocity. Models: ergoCub (the right leg of the public
 * configuration, both legs, re-rooted), four_joints_two_sensors, random trees. Also the minimum-norm split of
 * an underdetermined sub-model, the predicted FT readings against the RNEA's, no allocation per call, and the
 * errors. Tolerances: 1e-8 relative (max |error| / max(1, max |reference|)) unless stated. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dyn_support.h"
#include "roboest/dynamics.h"
#include "support.h"

#define MODELS RB_SHARED "/models"
#define ERGOCUB MODELS "/ergoCubSN000.urdf"
#define FOUR_JOINTS MODELS "/four_joints_two_sensors.urdf"

/* rde_configs/ergoCubSN000_r_leg/model.ini and rde_configs/four_joints_two_sensors/model.ini */
static const char *const R_LEG[] = {"r_hip_pitch", "r_hip_roll",    "r_hip_yaw",
                                    "r_knee",      "r_ankle_pitch", "r_ankle_roll"};
static const char *const R_LEG_FTS[] = {"r_foot_front_ft_sensor", "r_foot_rear_ft_sensor"};
static const char *const R_LEG_CONTACTS[] = {"r_foot_front", "r_foot_rear"};
static const char *const FOUR[] = {"joint_1", "joint_2", "joint_3", "joint_4"};
static const char *const FOUR_FTS[] = {"ft_1", "ft_2"};
static const char *const FOUR_CONTACTS[] = {"base_link", "link_5", "link_6"};
static const char *const LEGS[] = {"r_hip_pitch", "r_hip_roll", "r_hip_yaw", "r_knee", "r_ankle_pitch", "r_ankle_roll",
                                   "l_hip_pitch", "l_hip_roll", "l_hip_yaw", "l_knee", "l_ankle_pitch", "l_ankle_roll"};
static const char *const FEET[] = {"r_foot_front", "r_foot_rear", "l_foot_front", "l_foot_rear"};

static const double TOL = 1e-8;

static rb_model *load(const char *path, const char *const *joints, size_t n, const char *base, bool floating)
{
    rb_model_opts o = {0};
    rb_model *m = NULL;
    rb_err err;
    o.joints = joints, o.n_joints = n, o.base = base, o.floating = floating;
    cr_assert_eq(rb_model_load_urdf(path, &o, &m, &err), RB_OK, "%s", err.msg);
    return m;
}

static rb_submodels *build(const rb_model *m, const char *const *names, size_t n)
{
    rb_submodels *sm = NULL;
    rb_err err;
    cr_assert_eq(rb_submodels_build(m, names, n, &sm, &err), RB_OK, "%s", err.msg);
    return sm;
}

static size_t frame_of(const rb_model *m, const char *name)
{
    long f = rb_model_frame_index(m, name);
    cr_assert(f >= 0, "frame %s", name);
    return (size_t)f;
}

/* ---- simulated samples --------------------------------------------------------------------------------------- */

typedef struct sim_contact {
    const char *frame;
    int dim; /* 6: the frame is held; 3: its origin is */
} sim_contact;

/* One sample: state, true joint torques, the set's FT readings, the IMU readings at S, and the true wrenches of
 * the estimator's contact list (BODY: frame axes, about its origin): a simulated contact's wrench, a fixed base's
 * mounting wrench for a contact on the base body, zero otherwise. ws keeps the kinematic state of the sample. */
typedef struct sim_data {
    const rb_model *m;
    rb_dyn *ws;
    size_t n, vo, n_ft, nec;
    double *q, *nu, *nud, *tau, *ft, *w_true;
    double acc[3], gyro[3], alpha[3];
    double mount[6]; /* what the world exerts on the base (fixed base: the mounting; floating: ~0) */
} sim_data;

static void simulate(rb_model *m, const rb_submodels *sm, const char *imu, const char *const *est, size_t nec,
                     const sim_contact *sim, size_t nsc, bool base_still, trng *r, sim_data *d)
{
    rb_err err;
    memset(d, 0, sizeof *d);
    d->m = m;
    cr_assert_eq(rb_dyn_alloc(m, &d->ws, &err), RB_OK);
    size_t nv = m->nv;
    d->n = m->n_dofs, d->vo = m->floating ? 6 : 0, d->n_ft = sm->n_ft, d->nec = nec;
    d->q = calloc(m->nq, sizeof(double)), d->nu = calloc(nv, sizeof(double)), d->nud = calloc(nv, sizeof(double));
    d->tau = calloc(nv, sizeof(double)), d->ft = calloc(6 * d->n_ft + 1, sizeof(double));
    d->w_true = calloc(6 * nec + 1, sizeof(double));
    double *tchk = calloc(nv, sizeof(double)), *ft_all = calloc(6 * m->n_ft + 1, sizeof(double)), lam[48];
    random_state(r, m, d->q, d->nu, 1.0, NULL, 0);
    if (base_still && m->floating)
        memset(d->nu, 0, 6 * sizeof(double));
    random_vector(r, d->tau + d->vo, d->n, -20.0, 20.0);

    rb_contact ct[8];
    rb_ext_wrench ext[8];
    double wb[8][6];
    cr_assert(nsc <= 8);
    for (size_t k = 0; k < nsc; k++) {
        memset(&ct[k], 0, sizeof ct[k]);
        ct[k].frame = (int)frame_of(m, sim[k].frame), ct[k].dim = sim[k].dim;
        rb_xform_identity(&ct[k].ref);
    }
    cr_assert_eq(rb_dyn_fd_contact(m, d->ws, d->q, d->nu, d->tau, NULL, 0, ct, nsc, d->nud, lam, &err), RB_OK, "%s",
                 err.msg);
    /* the IMU readings (fd_contact left the state at q, nu, nu_dot) */
    size_t fS = frame_of(m, imu);
    double pa[6], vel[6];
    cr_assert_eq(rb_dyn_frame_proper_acceleration(m, d->ws, fS, RB_DYN_BODY, pa, &err), RB_OK);
    cr_assert_eq(rb_dyn_frame_velocity(m, d->ws, fS, RB_DYN_BODY, vel, &err), RB_OK);
    memcpy(d->acc, pa, sizeof d->acc), memcpy(d->alpha, pa + 3, sizeof d->alpha);
    memcpy(d->gyro, vel + 3, sizeof d->gyro);
    /* the contact wrenches: MIXED from fd_contact, BODY for the estimator */
    for (size_t k = 0, off = 0; k < nsc; k++) {
        rb_xform X;
        double w[6] = {0, 0, 0, 0, 0, 0};
        memcpy(w, lam + off, (size_t)ct[k].dim * sizeof(double));
        off += (size_t)ct[k].dim;
        ext[k].frame = ct[k].frame, ext[k].rep = RB_DYN_MIXED;
        memcpy(ext[k].w, w, sizeof w);
        rb_dyn_frame_pose(m, d->ws, (size_t)ct[k].frame, &X, NULL);
        rb_m3t_mul_v(X.R, w, wb[k]);
        rb_m3t_mul_v(X.R, w + 3, wb[k] + 3);
    }
    /* the FT readings: RNEA with the contacts as external wrenches gives back the joint torques */
    cr_assert_eq(rb_dyn_rnea(m, d->ws, d->q, d->nu, d->nud, ext, nsc, tchk, &err), RB_OK);
    cr_assert(rel_err(tchk + d->vo, d->tau + d->vo, d->n) < 1e-9, "simulation: %g",
              rel_err(tchk + d->vo, d->tau + d->vo, d->n));
    if (m->floating)
        cr_assert(max_abs(tchk, 6) < 1e-8 * m->total_mass * 9.81, "free floating: %g", max_abs(tchk, 6));
    cr_assert_eq(rb_dyn_joint_wrench(m, d->ws, 0, d->mount, &err), RB_OK);
    cr_assert_eq(rb_dyn_ft_wrenches(m, d->ws, ft_all, &err), RB_OK, "%s", err.msg);
    for (size_t k = 0; k < d->n_ft; k++)
        memcpy(d->ft + 6 * k, ft_all + 6 * sm->ft[k], 6 * sizeof(double));
    for (size_t j = 0; j < nec; j++) {
        size_t f = frame_of(m, est[j]);
        for (size_t k = 0; k < nsc; k++)
            if ((size_t)ct[k].frame == f)
                memcpy(d->w_true + 6 * j, wb[k], sizeof wb[k]);
        if (!m->floating && m->frames[f].body == 0)
            rb_xform_force_inv(&m->frames[f].X_body, d->mount, d->w_true + 6 * j);
    }
    free(tchk);
    free(ft_all);
}

static void sim_free(sim_data *d)
{
    free(d->q), free(d->nu), free(d->nud), free(d->tau), free(d->ft), free(d->w_true);
    rb_dyn_free(d->ws);
}

static rb_ft_est_input sim_input(const sim_data *d, bool with_alpha)
{
    rb_ft_est_input in;
    memset(&in, 0, sizeof in);
    in.s = d->q + (d->vo ? 7 : 0), in.s_dot = d->nu + d->vo, in.s_ddot = d->nud + d->vo, in.n = d->n;
    memcpy(in.acc, d->acc, sizeof in.acc);
    memcpy(in.gyro, d->gyro, sizeof in.gyro);
    in.alpha = with_alpha ? d->alpha : NULL;
    in.ft = d->ft, in.n_ft_values = 6 * d->n_ft;
    return in;
}

typedef struct outcome {
    double tau, w;         /* relative errors, S's angular acceleration given */
    double tau_eq7, w_eq7; /* the same with it taken as zero (alpha NULL) */
    double pred;           /* predicted FT readings for the true contact wrenches */
    double res;            /* largest sub-model residual / robot weight */
    double alpha;          /* |alpha_S| of the sample */
} outcome;

static outcome run_case(rb_model *m, const rb_submodels *sm, const char *imu, const char *const *est, size_t nec,
                        const sim_contact *sim, size_t nsc, bool base_still, trng *r)
{
    sim_data d;
    rb_err err;
    outcome o;
    simulate(m, sm, imu, est, nec, sim, nsc, base_still, r, &d);
    rb_ft_est *e = NULL;
    cr_assert_eq(rb_ft_est_alloc(m, sm, imu, est, nec, &e, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_ft_est_n_contacts(e), nec);
    double *tau = calloc(d.n + 1, sizeof(double)), *w = calloc(6 * nec + 1, sizeof(double)),
           *ftp = calloc(6 * d.n_ft + 1, sizeof(double)), res[6];
    rb_ft_est_input in = sim_input(&d, true);
    cr_assert_eq(rb_ft_est_torques(m, e, &in, tau, d.n, w, 6 * nec, &err), RB_OK, "%s", err.msg);
    o.tau = rel_err(tau, d.tau + d.vo, d.n), o.w = rel_err(w, d.w_true, 6 * nec);
    o.res = 0.0;
    for (size_t k = 0; k < sm->n_sub; k++) {
        cr_assert_eq(rb_ft_est_residual(e, k, res, &err), RB_OK);
        o.res = fmax(o.res, max_abs(res, 6) / (m->total_mass * 9.81));
    }
    cr_assert_eq(rb_ft_est_predict_ft(m, e, &in, d.w_true, ftp, 6 * d.n_ft, NULL, 0, &err), RB_OK, "%s", err.msg);
    o.pred = rel_err(ftp, d.ft, 6 * d.n_ft);
    in = sim_input(&d, false);
    cr_assert_eq(rb_ft_est_torques(m, e, &in, tau, d.n, w, 6 * nec, &err), RB_OK, "%s", err.msg);
    o.tau_eq7 = rel_err(tau, d.tau + d.vo, d.n), o.w_eq7 = rel_err(w, d.w_true, 6 * nec);
    o.alpha = sqrt(rb_v3_dot(d.alpha, d.alpha));
    free(tau), free(w), free(ftp);
    rb_ft_est_free(e);
    sim_free(&d);
    return o;
}

#define EXPECT_EXACT(o, label)                                                                                         \
    do {                                                                                                               \
        cr_assert((o).tau < TOL, "%s: torques %g", label, (o).tau);                                                    \
        cr_assert((o).w < TOL, "%s: contact wrenches %g", label, (o).w);                                               \
        cr_assert((o).pred < TOL, "%s: predicted FT readings %g", label, (o).pred);                                    \
        cr_assert((o).res < TOL, "%s: residual %g", label, (o).res);                                                   \
    } while (0)

/* ---- standing robots ------------------------------------------------------------------------------------------- */

/* ergoCub's right leg as the public estimator is configured (joint list, FT sensors r_foot_front_ft_sensor and
 * r_foot_rear_ft_sensor, contacts r_foot_front and r_foot_rear), floating base, standing on the front plate of
 * the right foot (6D rigid contact); the IMU on the base, on the waist IMU frame (off the base origin), on the
 * upper leg and on the front foot FT frame (joints between it and the base). The rear plate's wrench is
 * estimated as zero. With S's angular acceleration given the estimate is exact; taken as zero (eq. 7) while it
 * is not, the torques and wrenches are off (> 1e-4): the assumption is what the error measures. On the held
 * front plate it is zero, and eq. 7 exact. */
Test(dynamics_ft_est, floating_leg_standing_on_one_foot)
{
    test_need_shared("models/ergoCubSN000.urdf");
    rb_model *m = load(ERGOCUB, R_LEG, 6, "root_link", true);
    rb_submodels *sm = build(m, R_LEG_FTS, 2);
    static const char *const imus[] = {"root_link", "waist_imu_0", "r_upper_leg", "r_foot_front_ft_sensor"};
    const sim_contact sim[] = {{"r_foot_front", 6}};
    trng r = {0xf7e57001};
    char label[128];
    for (size_t i = 0; i < 4; i++)
        for (int rep = 0; rep < 3; rep++) {
            outcome o = run_case(m, sm, imus[i], R_LEG_CONTACTS, 2, sim, 1, false, &r);
            snprintf(label, sizeof label, "IMU %s, sample %d", imus[i], rep);
            EXPECT_EXACT(o, label);
            if (i == 3) { /* the plate held by the contact does not rotate: eq. 7 holds there */
                cr_assert(o.alpha < 1e-10, "%s: %g", label, o.alpha);
                cr_assert(o.tau_eq7 < TOL && o.w_eq7 < TOL, "%s: eq. 7: %g %g", label, o.tau_eq7, o.w_eq7);
                continue;
            }
            cr_assert(o.alpha > 0.1, "%s: the sample has an angular acceleration (%g)", label, o.alpha);
            cr_assert(o.tau_eq7 > 1e-4 && o.w_eq7 > 1e-4, "%s: alpha taken as zero: errors %g %g", label, o.tau_eq7,
                      o.w_eq7);
        }
    rb_submodels_free(sm);
    rb_model_free(m);
}

/* ergoCub with both legs' joints, floating base, standing on both feet (front plates, 6D each), cut at all eight
 * FT sensors (nine sub-models: the arms and the hips have no contact and a zero residual), contacts on all four
 * foot plates; base root_link, and re-rooted at l_foot_front (the left leg's FT joints reversed). IMU: the waist. */
Test(dynamics_ft_est, floating_robot_standing_on_both_feet)
{
    test_need_shared("models/ergoCubSN000.urdf");
    static const char *const bases[] = {"root_link", "l_foot_front"};
    const sim_contact sim[] = {{"r_foot_front", 6}, {"l_foot_front", 6}};
    trng r = {0xf7e57002};
    char label[128];
    for (size_t b = 0; b < 2; b++) {
        rb_model *m = load(ERGOCUB, LEGS, 12, bases[b], true);
        rb_submodels *sm = build(m, NULL, 0);
        cr_assert_eq(sm->n_sub, 9);
        for (int rep = 0; rep < 3; rep++) {
            outcome o = run_case(m, sm, "waist_imu_0", FEET, 4, sim, 2, false, &r);
            snprintf(label, sizeof label, "base %s, sample %d", bases[b], rep);
            EXPECT_EXACT(o, label);
            cr_assert(o.tau_eq7 > 1e-4, "%s: alpha taken as zero: %g", label, o.tau_eq7);
        }
        rb_submodels_free(sm);
        rb_model_free(m);
    }
}

/* The right leg standing with both feet while the base is still (the left foot, rigid with the base through the
 * locked left leg, holds it: zero base velocity and acceleration): the base's angular acceleration is zero, so
 * the paper's eq. 7 (alpha taken as zero, alpha NULL) is exact with the base IMU. */
Test(dynamics_ft_est, base_at_rest_eq7_is_exact)
{
    test_need_shared("models/ergoCubSN000.urdf");
    rb_model *m = load(ERGOCUB, R_LEG, 6, "root_link", true);
    rb_submodels *sm = build(m, R_LEG_FTS, 2);
    static const char *const est[] = {"r_foot_front", "r_foot_rear", "l_foot_front"};
    const sim_contact sim[] = {{"r_foot_front", 6}, {"l_foot_front", 6}};
    trng r = {0xf7e57003};
    for (int rep = 0; rep < 4; rep++) {
        outcome o = run_case(m, sm, "root_link", est, 3, sim, 2, true, &r);
        EXPECT_EXACT(o, "alpha given");
        cr_assert(o.alpha < 1e-12, "the base does not rotate: %g", o.alpha);
        cr_assert(o.tau_eq7 < TOL && o.w_eq7 < TOL, "eq. 7: %g %g", o.tau_eq7, o.w_eq7);
    }
    rb_submodels_free(sm);
    rb_model_free(m);
}

/* Fixed base on a pole: the right leg (fixed at root_link) with its sole pressing on the ground (6D contact at
 * r_sole, on the rear foot plate); contacts root_link (the pole's unknown wrench, as in the public set-up) and
 * r_sole; IMU on the base and on the upper leg. And four_joints_two_sensors with its configuration (contacts
 * base_link, link_5, link_6), pushed at link_6's origin (3D point contact). */
Test(dynamics_ft_est, fixed_base_on_a_pole)
{
    test_need_shared("models/ergoCubSN000.urdf");
    test_need_shared("models/four_joints_two_sensors.urdf");
    rb_model *m = load(ERGOCUB, R_LEG, 6, "root_link", false);
    rb_submodels *sm = build(m, R_LEG_FTS, 2);
    static const char *const est[] = {"root_link", "r_sole"};
    static const char *const imus[] = {"root_link", "r_upper_leg"};
    const sim_contact sim[] = {{"r_sole", 6}};
    trng r = {0xf7e57004};
    char label[128];
    for (size_t i = 0; i < 2; i++)
        for (int rep = 0; rep < 3; rep++) {
            outcome o = run_case(m, sm, imus[i], est, 2, sim, 1, false, &r);
            snprintf(label, sizeof label, "leg, IMU %s, sample %d", imus[i], rep);
            EXPECT_EXACT(o, label);
            if (i == 0) /* the base does not move */
                cr_assert(o.tau_eq7 < TOL && o.w_eq7 < TOL, "%s: eq. 7", label);
        }
    rb_submodels_free(sm);
    rb_model_free(m);

    m = load(FOUR_JOINTS, FOUR, 4, "base_link", false);
    sm = build(m, FOUR_FTS, 2);
    const sim_contact push[] = {{"link_6", 3}};
    for (int rep = 0; rep < 4; rep++) {
        outcome o = run_case(m, sm, rep % 2 ? "link_4" : "base_link", FOUR_CONTACTS, 3, push, 1, false, &r);
        snprintf(label, sizeof label, "four joints, sample %d", rep);
        EXPECT_EXACT(o, label);
    }
    rb_submodels_free(sm);
    rb_model_free(m);
}

/* Random trees (revolute and prismatic joints, random axes and poses, floating and fixed base) with FT sensors on
 * most fixed joints (random sensor frame on either side, reading frame the sensor's or a link frame, random
 * measure direction), a contact at the base (the base wrench RNEA needs: a fixed base's mounting, or an external
 * agent on a floating one) and one at a random frame of about two thirds of the other sub-models, random wrenches
 * there, random state and IMU frame: the RNEA's joint torques and the wrenches come back. */
Test(dynamics_ft_est, random_trees)
{
    int cases = 0;
    for (int fb = 0; fb < 2; fb++)
        for (uint64_t seed = 1; seed <= 12; seed++) {
            trng r = {seed * 7919 + (uint64_t)fb};
            rb_model *m = random_tree(&r, 16, fb);
            rb_err err;
            char name[32], link[32];
            cr_assert_not_null(m);
            for (size_t i = 1; i < m->n_bodies; i++) {
                if (m->bodies[i].type != RB_JOINT_FIXED || trng_uniform(&r, 0, 1) < 0.2)
                    continue;
                rb_xform X;
                trng_rotation(&r, X.R);
                random_vector(&r, X.p, 3, -0.2, 0.2);
                int on = trng_uniform(&r, 0, 1) < 0.5 ? (int)i : m->bodies[i].parent;
                snprintf(name, sizeof name, "s%zu", i);
                cr_assert_eq(rb_model_add_frame(m, name, on, &X, RB_FRAME_SENSOR, &err), RB_OK);
                int sf = (int)m->n_frames - 1, rf = sf;
                double u = trng_uniform(&r, 0, 1);
                if (u < 0.6) { /* read in the child or the parent link frame */
                    snprintf(link, sizeof link, "b%d", u < 0.3 ? (int)i : m->bodies[i].parent);
                    rf = (int)frame_of(m, link);
                }
                int sign = trng_uniform(&r, 0, 1) < 0.5 ? 1 : -1;
                cr_assert_eq(rb_model_add_ft_sensor(m, name, (int)i, rf, sf, sign, &err), RB_OK, "%s", err.msg);
            }
            if (m->n_ft == 0) {
                rb_model_free(m);
                continue;
            }
            rb_submodels *sm = build(m, NULL, 0);
            const char *est[32];
            size_t nec = 0;
            est[nec++] = "b0";
            for (size_t k = 1; k < sm->n_sub; k++)
                if (trng_uniform(&r, 0, 1) < 0.67)
                    est[nec++] = m->frames[sm->sub[k].frames[trng_index(&r, sm->sub[k].n_frames)]].name;
            rb_dyn *ws;
            cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
            size_t nv = m->nv, n = m->n_dofs, vo = fb ? 6 : 0;
            double *q = calloc(m->nq, sizeof(double)), *nu = calloc(nv, sizeof(double)),
                   *nud = calloc(nv, sizeof(double)), *tau = calloc(nv, sizeof(double)),
                   *ft = calloc(6 * m->n_ft, sizeof(double)), *w_true = calloc(6 * nec, sizeof(double)),
                   *w = calloc(6 * nec, sizeof(double)), *tau_est = calloc(n + 1, sizeof(double)), pa[6], vel[6], W0[6];
            random_state(&r, m, q, nu, 2.0, nud, 5.0);
            rb_ext_wrench ext[32];
            for (size_t j = 1; j < nec; j++) {
                ext[j - 1].frame = (int)frame_of(m, est[j]), ext[j - 1].rep = RB_DYN_BODY;
                random_vector(&r, ext[j - 1].w, 3, -50, 50);
                random_vector(&r, ext[j - 1].w + 3, 3, -10, 10);
                memcpy(w_true + 6 * j, ext[j - 1].w, 6 * sizeof(double));
            }
            size_t fS = trng_index(&r, m->n_frames);
            cr_assert_eq(rb_dyn_kinematics(m, ws, q, nu, nud, &err), RB_OK);
            cr_assert_eq(rb_dyn_frame_proper_acceleration(m, ws, fS, RB_DYN_BODY, pa, &err), RB_OK);
            cr_assert_eq(rb_dyn_frame_velocity(m, ws, fS, RB_DYN_BODY, vel, &err), RB_OK);
            cr_assert_eq(rb_dyn_rnea(m, ws, q, nu, nud, ext, nec - 1, tau, &err), RB_OK);
            cr_assert_eq(rb_dyn_joint_wrench(m, ws, 0, W0, &err), RB_OK);
            cr_assert_eq(rb_dyn_ft_wrenches(m, ws, ft, &err), RB_OK, "%s", err.msg);
            rb_xform_force_inv(&m->frames[frame_of(m, "b0")].X_body, W0, w_true); /* the base's */

            rb_ft_est *e;
            cr_assert_eq(rb_ft_est_alloc(m, sm, m->frames[fS].name, est, nec, &e, &err), RB_OK, "%s", err.msg);
            rb_ft_est_input in = {q + (fb ? 7 : 0),         nu + vo, nud + vo, n,          {pa[0], pa[1], pa[2]},
                                  {vel[3], vel[4], vel[5]}, pa + 3,  ft,       6 * m->n_ft};
            cr_assert_eq(rb_ft_est_torques(m, e, &in, tau_est, n, w, 6 * nec, &err), RB_OK, "%s", err.msg);
            cr_assert(rel_err(tau_est, tau + vo, n) < TOL, "seed %d/%d: torques %g", (int)seed, fb,
                      rel_err(tau_est, tau + vo, n));
            cr_assert(rel_err(w, w_true, 6 * nec) < TOL, "seed %d/%d: wrenches %g", (int)seed, fb,
                      rel_err(w, w_true, 6 * nec));
            cases++;
            free(q), free(nu), free(nud), free(tau), free(ft), free(w_true), free(w), free(tau_est);
            rb_ft_est_free(e);
            rb_dyn_free(ws);
            rb_submodels_free(sm);
            rb_model_free(m);
        }
    cr_assert(cases >= 12, "only %d random trees had FT sensors", cases);
}

/* Two contacts on one sub-model (four joints: base_link and link_1 on the first): the estimate satisfies the
 * sub-model's Newton-Euler equations (together the two wrenches are the true mounting wrench), is orthogonal to
 * every internal-force direction (the minimum-norm solution: for any null-space wrench pair d, the estimate's
 * dot product with it is zero, 1e-9), leaves a zero residual, and the torques of the joints beyond link_1
 * (joint_2, and joint_3, joint_4 of the next sub-model) stay exact. */
Test(dynamics_ft_est, minimum_norm_when_underdetermined)
{
    test_need_shared("models/four_joints_two_sensors.urdf");
    rb_model *m = load(FOUR_JOINTS, FOUR, 4, "base_link", false);
    rb_submodels *sm = build(m, FOUR_FTS, 2);
    static const char *const est[] = {"base_link", "link_1", "link_5", "link_6"};
    const sim_contact push[] = {{"link_6", 3}};
    trng r = {0xf7e57006};
    rb_err err;
    for (int rep = 0; rep < 4; rep++) {
        sim_data d;
        simulate(m, sm, "base_link", est, 4, push, 1, false, &r, &d);
        rb_ft_est *e;
        cr_assert_eq(rb_ft_est_alloc(m, sm, NULL, est, 4, &e, &err), RB_OK, "%s", err.msg);
        double tau[4], w[24], res[6], T[2][6], sum[6] = {0};
        rb_ft_est_input in = sim_input(&d, true);
        cr_assert_eq(rb_ft_est_torques(m, e, &in, tau, 4, w, 24, &err), RB_OK, "%s", err.msg);
        cr_assert(rel_err(tau + 1, d.tau + 1, 3) < TOL, "joints beyond the contacts");
        cr_assert(rel_err(w + 12, d.w_true + 12, 12) < TOL, "the other sub-models' contacts");
        cr_assert_eq(rb_ft_est_residual(e, 0, res, &err), RB_OK);
        cr_assert(max_abs(res, 6) < 1e-9 * m->total_mass * 9.81);
        /* Newton-Euler: both wrenches in base coordinates add up to the mounting wrench */
        rb_xform X[2];
        for (int k = 0; k < 2; k++) {
            cr_assert_eq(rb_dyn_frame_pose(m, d.ws, frame_of(m, est[k]), &X[k], &err), RB_OK);
            rb_xform_force(&X[k], w + 6 * k, T[k]);
            for (int i = 0; i < 6; i++)
                sum[i] += T[k][i];
        }
        cr_assert(rel_err(sum, d.mount, 6) < TOL, "sum %g", rel_err(sum, d.mount, 6));
        cr_assert(max_abs(w + 6, 6) > 1.0, "the minimum-norm split loads link_1 too");
        /* orthogonal to the null space {(d1, d2): X1^* d1 + X2^* d2 = 0} */
        for (int t = 0; t < 5; t++) {
            double d1[6], d2[6], W[6], dot = 0.0, nd = 0.0;
            random_vector(&r, d1, 6, -1, 1);
            rb_xform_force(&X[0], d1, W);
            rb_xform_force_inv(&X[1], W, d2);
            for (int i = 0; i < 6; i++) {
                d2[i] = -d2[i];
                dot += w[i] * d1[i] + w[6 + i] * d2[i];
                nd += d1[i] * d1[i] + d2[i] * d2[i];
            }
            double nw =
                sqrt(rb_v3_dot(w, w) + rb_v3_dot(w + 3, w + 3) + rb_v3_dot(w + 6, w + 6) + rb_v3_dot(w + 9, w + 9));
            cr_assert(fabs(dot) < 1e-9 * nw * sqrt(nd), "not minimum-norm: %g", dot / (nw * sqrt(nd)));
        }
        rb_ft_est_free(e);
        sim_free(&d);
    }
    rb_submodels_free(sm);
    rb_model_free(m);
}

/* ---- predicted FT readings ----------------------------------------------------------------------------------- */

/* At rest, the predicted readings equal the RNEA-based ones for the same contact (1e-10): a fixed-base leg held at
 * root_link (the whole weight on the mount: rb_dyn_gravity_forces, then rb_dyn_ft_wrenches, all eight sensors),
 * and the floating robot with both legs standing on its left sole (the contact wrench that makes the RNEA's base
 * wrench zero), IMU on the waist. The contact wrench is returned too; the start-up offset o = f_measured(0) -
 * f_predicted(0) then recovers an offset added to the readings. */
Test(dynamics_ft_est, predicted_readings_at_rest_equal_rnea)
{
    test_need_shared("models/ergoCubSN000.urdf");
    rb_err err;
    trng r = {0xf7e57007};
    for (int fb = 0; fb < 2; fb++) {
        rb_model *m = fb ? load(ERGOCUB, LEGS, 12, "root_link", true) : load(ERGOCUB, R_LEG, 6, "root_link", false);
        rb_submodels *sm = build(m, NULL, 0);
        const char *contact = fb ? "l_sole" : "root_link", *imu = fb ? "waist_imu_0" : "root_link";
        rb_dyn *ws;
        rb_ft_est *e;
        cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
        cr_assert_eq(rb_ft_est_alloc(m, sm, imu, &contact, 1, &e, &err), RB_OK, "%s", err.msg);
        size_t nv = m->nv, n = m->n_dofs, nft = m->n_ft, qo = fb ? 7 : 0;
        double *q = calloc(m->nq, sizeof(double)), *zero = calloc(nv, sizeof(double)),
               *tau = calloc(nv, sizeof(double)), *ft_ref = calloc(6 * nft, sizeof(double)),
               *ft = calloc(6 * nft, sizeof(double)), pa[6], vel[6], w_ref[6], w[6];
        for (int rep = 0; rep < 3; rep++) {
            random_state(&r, m, q, NULL, 0, NULL, 0);
            size_t fS = frame_of(m, imu), fc = frame_of(m, contact);
            cr_assert_eq(rb_dyn_kinematics(m, ws, q, zero, zero, &err), RB_OK);
            cr_assert_eq(rb_dyn_frame_proper_acceleration(m, ws, fS, RB_DYN_BODY, pa, &err), RB_OK);
            cr_assert_eq(rb_dyn_frame_velocity(m, ws, fS, RB_DYN_BODY, vel, &err), RB_OK);
            cr_assert(fabs(sqrt(rb_v3_dot(pa, pa)) - 9.81) < 1e-12, "at rest the IMU reads gravity");
            if (!fb) {
                cr_assert_eq(rb_dyn_gravity_forces(m, ws, q, tau, &err), RB_OK);
                double W0[6];
                cr_assert_eq(rb_dyn_joint_wrench(m, ws, 0, W0, &err), RB_OK);
                rb_xform_force_inv(&m->frames[fc].X_body, W0, w_ref);
            } else { /* the contact wrench that carries the robot: cancels the base wrench RNEA needs */
                cr_assert_eq(rb_dyn_gravity_forces(m, ws, q, tau, &err), RB_OK);
                rb_xform XB = *rb_dyn_body_pose(ws, 0), XF, inv, T;
                rb_dyn_frame_pose(m, ws, fc, &XF, NULL);
                rb_xform_inverse(&XB, &inv);
                rb_xform_compose(&inv, &XF, &T);
                rb_xform_force_inv(&T, tau, w_ref);
                rb_ext_wrench ext = {(int)fc, RB_DYN_BODY, {0}};
                memcpy(ext.w, w_ref, sizeof w_ref);
                cr_assert_eq(rb_dyn_rnea(m, ws, q, NULL, NULL, &ext, 1, tau, &err), RB_OK);
                cr_assert(max_abs(tau, 6) < 1e-9 * m->total_mass, "balanced: %g", max_abs(tau, 6));
            }
            cr_assert_eq(rb_dyn_ft_wrenches(m, ws, ft_ref, &err), RB_OK);
            rb_ft_est_input in = {q + qo, zero, zero, n, {pa[0], pa[1], pa[2]}, {vel[3], vel[4], vel[5]},
                                  NULL,   NULL, 0};
            cr_assert_eq(rb_ft_est_predict_ft(m, e, &in, NULL, ft, 6 * nft, w, 6, &err), RB_OK, "%s", err.msg);
            cr_assert(rel_err(ft, ft_ref, 6 * nft) < 1e-10, "%s: predicted FT %g", m->name,
                      rel_err(ft, ft_ref, 6 * nft));
            cr_assert(rel_err(w, w_ref, 6) < 1e-10, "contact wrench %g", rel_err(w, w_ref, 6));
            /* start-up calibration */
            double o[6] = {1.5, -2, 0.25, 0.1, -0.05, 0.02}, meas[6], est_o[6];
            for (int k = 0; k < 6; k++)
                meas[k] = ft_ref[k] + o[k], est_o[k] = meas[k] - ft[k];
            cr_assert(rel_err(est_o, o, 6) < 1e-9);
        }
        free(q), free(zero), free(tau), free(ft_ref), free(ft);
        rb_ft_est_free(e);
        rb_dyn_free(ws);
        rb_submodels_free(sm);
        rb_model_free(m);
    }
}

/* Moving: predicted readings for the true contact wrenches are the simulation's (run_case checks that in every
 * scenario); here with the wrench solved by the predictor itself (one contact: the whole robot's Newton-Euler
 * determines it exactly). */
Test(dynamics_ft_est, predicted_readings_moving_single_contact)
{
    test_need_shared("models/ergoCubSN000.urdf");
    rb_model *m = load(ERGOCUB, R_LEG, 6, "root_link", true);
    rb_submodels *sm = build(m, NULL, 0);
    static const char *const est[] = {"r_foot_front"};
    const sim_contact sim[] = {{"r_foot_front", 6}};
    trng r = {0xf7e57008};
    rb_err err;
    for (int rep = 0; rep < 3; rep++) {
        sim_data d;
        simulate(m, sm, "r_upper_leg", est, 1, sim, 1, false, &r, &d);
        rb_ft_est *e;
        cr_assert_eq(rb_ft_est_alloc(m, sm, "r_upper_leg", est, 1, &e, &err), RB_OK);
        double ft[48], w[6];
        rb_ft_est_input in = sim_input(&d, true);
        in.ft = NULL, in.n_ft_values = 0; /* not read */
        cr_assert_eq(rb_ft_est_predict_ft(m, e, &in, NULL, ft, 6 * sm->n_ft, w, 6, &err), RB_OK, "%s", err.msg);
        cr_assert(rel_err(ft, d.ft, 6 * sm->n_ft) < TOL, "%g", rel_err(ft, d.ft, 6 * sm->n_ft));
        cr_assert(rel_err(w, d.w_true, 6) < TOL);
        rb_ft_est_free(e);
        sim_free(&d);
    }
    rb_submodels_free(sm);
    rb_model_free(m);
}

/* ---- resources and errors -------------------------------------------------------------------------------------- */

/* 10,000 estimates (and predictions and residual queries) make no rb_malloc call. */
Test(dynamics_ft_est, no_allocation_per_call)
{
    test_need_shared("models/ergoCubSN000.urdf");
    rb_model *m = load(ERGOCUB, LEGS, 12, "root_link", true);
    rb_submodels *sm = build(m, NULL, 0);
    const sim_contact sim[] = {{"r_foot_front", 6}, {"l_foot_front", 6}};
    trng r = {0xf7e57009};
    rb_err err;
    sim_data d;
    simulate(m, sm, "waist_imu_0", FEET, 4, sim, 2, false, &r, &d);
    rb_ft_est *e;
    cr_assert_eq(rb_ft_est_alloc(m, sm, "r_foot_front_ft_sensor", FEET, 4, &e, &err), RB_OK);
    double tau[12], w[24], ft[48], res[6];
    rb_ft_est_input in = sim_input(&d, true);
    rb_alloc_fail_after(-1);
    void *p = rb_malloc(8); /* the counter counts */
    rb_free(p);
    cr_assert_eq(rb_alloc_fail_after(-1), 1);
    for (int k = 0; k < 10000; k++) {
        d.q[7] += 1e-6;
        in.alpha = k % 2 ? d.alpha : NULL;
        cr_assert_eq(rb_ft_est_torques(m, e, &in, tau, 12, w, 24, &err), RB_OK);
        if (k % 10 == 0) {
            cr_assert_eq(rb_ft_est_predict_ft(m, e, &in, k % 20 ? w : NULL, ft, 48, w, 24, &err), RB_OK);
            cr_assert_eq(rb_ft_est_residual(e, (size_t)k % sm->n_sub, res, &err), RB_OK);
        }
    }
    cr_assert_eq(rb_alloc_fail_after(-1), 0, "allocations in the per-sample calls");
    rb_ft_est_free(e);
    sim_free(&d);
    rb_submodels_free(sm);
    rb_model_free(m);
}

static void expect_error(int rc, int code, const rb_err *err, const char *needle)
{
    cr_assert_eq(rc, code, "%s: got %s (%s)", rb_status_name(code), rb_status_name(rc), err->msg);
    cr_assert_eq(err->code, code);
    cr_assert(!strchr(err->msg, '\n') && strlen(err->msg) > 10, "one line: %s", err->msg);
    cr_assert(strstr(err->msg, needle), "'%s' not in: %s", needle, err->msg);
}

/* Unknown frames, repeated contacts, sizes that do not match, non-finite inputs, NULLs, a workspace or set made
 * for another model, queries before an estimate: one-line errors naming the problem. Allocation failures in
 * rb_ft_est_alloc: RB_ENOMEM, nothing leaked (ASan). */
Test(dynamics_ft_est, bad_arguments)
{
    test_need_shared("models/four_joints_two_sensors.urdf");
    test_need_shared("models/ergoCubSN000.urdf");
    rb_err err;
    rb_model *m = load(FOUR_JOINTS, FOUR, 4, "base_link", false);
    rb_model *leg = load(ERGOCUB, R_LEG, 6, "root_link", true);
    rb_submodels *sm = build(m, FOUR_FTS, 2), *sm_leg = build(leg, R_LEG_FTS, 2);
    rb_ft_est *e = (rb_ft_est *)&err; /* reset to NULL on failure */
    static const char *const typo[] = {"base_link", "link_55"};
    expect_error(rb_ft_est_alloc(m, sm, NULL, typo, 2, &e, &err), RB_ENOTFOUND, &err, "contact frame link_55");
    cr_assert_null(e);
    expect_error(rb_ft_est_alloc(m, sm, "imu_9", FOUR_CONTACTS, 3, &e, &err), RB_ENOTFOUND, &err, "IMU frame imu_9");
    static const char *const twice[] = {"link_5", "link_5"};
    expect_error(rb_ft_est_alloc(m, sm, NULL, twice, 2, &e, &err), RB_EINVAL, &err, "listed twice");
    expect_error(rb_ft_est_alloc(m, sm_leg, NULL, FOUR_CONTACTS, 3, &e, &err), RB_EINVAL, &err, "another model");
    expect_error(rb_ft_est_alloc(m, sm, NULL, NULL, 3, &e, &err), RB_EINVAL, &err, "NULL");
    expect_error(rb_ft_est_alloc(m, NULL, NULL, NULL, 0, &e, &err), RB_EINVAL, &err, "NULL");

    cr_assert_eq(rb_ft_est_alloc(m, sm, "link_2", FOUR_CONTACTS, 3, &e, &err), RB_OK, "%s", err.msg);
    double s[4] = {0.1, 0.2, 0.3, 0.4}, z[4] = {0}, ft[12] = {0}, tau[4], w[18], res[6];
    rb_ft_est_input in = {s, z, z, 4, {0, 0, 9.81}, {0, 0, 0}, NULL, ft, 12};
    expect_error(rb_ft_est_residual(e, 0, res, &err), RB_EINVAL, &err, "no estimate");
    rb_ft_est_input bad = in;
    bad.n = 6;
    expect_error(rb_ft_est_torques(m, e, &bad, tau, 4, w, 18, &err), RB_EDIM, &err, "6 joint values");
    bad = in, bad.n_ft_values = 6;
    expect_error(rb_ft_est_torques(m, e, &bad, tau, 4, w, 18, &err), RB_EDIM, &err, "6 FT values, expected 12");
    expect_error(rb_ft_est_torques(m, e, &in, tau, 3, w, 18, &err), RB_EDIM, &err, "tau has 3 values");
    expect_error(rb_ft_est_torques(m, e, &in, tau, 4, w, 12, &err), RB_EDIM, &err, "12 values, expected 18");
    expect_error(rb_ft_est_torques(m, e, &in, NULL, 4, w, 18, &err), RB_EINVAL, &err, "NULL tau");
    bad = in, bad.ft = NULL;
    expect_error(rb_ft_est_torques(m, e, &bad, tau, 4, w, 18, &err), RB_EINVAL, &err, "NULL FT");
    bad = in, bad.s_dot = NULL;
    expect_error(rb_ft_est_torques(m, e, &bad, tau, 4, w, 18, &err), RB_EINVAL, &err, "NULL joint");
    double nan_v[4] = {0, 0, NAN, 0};
    bad = in, bad.s_dot = nan_v;
    expect_error(rb_ft_est_torques(m, e, &bad, tau, 4, w, 18, &err), RB_ENUMERIC, &err, "s_dot[2] is not finite");
    bad = in, bad.gyro[1] = INFINITY;
    expect_error(rb_ft_est_torques(m, e, &bad, tau, 4, w, 18, &err), RB_ENUMERIC, &err, "gyro[1]");
    expect_error(rb_ft_est_torques(leg, e, &in, tau, 4, w, 18, &err), RB_EINVAL, &err, "another model");
    expect_error(rb_ft_est_torques(m, e, NULL, tau, 4, w, 18, &err), RB_EINVAL, &err, "NULL");
    expect_error(rb_ft_est_predict_ft(m, e, &in, NULL, ft, 6, NULL, 0, &err), RB_EDIM, &err, "expected 12");
    double wbad[18] = {0};
    wbad[4] = NAN;
    expect_error(rb_ft_est_predict_ft(m, e, &in, wbad, ft, 12, NULL, 0, &err), RB_ENUMERIC, &err, "wrenches_in[4]");
    /* the contact wrenches are optional; then the residual is there */
    cr_assert_eq(rb_ft_est_torques(m, e, &in, tau, 4, NULL, 0, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_ft_est_residual(e, 0, res, &err), RB_OK);
    expect_error(rb_ft_est_residual(e, 3, res, &err), RB_EINVAL, &err, "out of range");
    rb_ft_est_free(e);
    rb_ft_est_free(NULL);

    /* allocation failures */
    long made = -1;
    for (long k = 0; k < 100; k++) {
        rb_alloc_fail_after(k);
        int rc = rb_ft_est_alloc(leg, sm_leg, "waist_imu_0", R_LEG_CONTACTS, 2, &e, &err);
        made = rb_alloc_fail_after(-1);
        if (rc == RB_OK) {
            rb_ft_est_free(e);
            break;
        }
        expect_error(rc, RB_ENOMEM, &err, "out of memory");
        cr_assert_null(e);
        made = -1;
    }
    cr_assert(made > 0);
    rb_submodels_free(sm), rb_submodels_free(sm_leg);
    rb_model_free(m), rb_model_free(leg);
}
