/* lib/dynamics sub-models (rb_submodels_build): the split at FT-sensor joints of the shared URDF models with the
 * joint lists of the public estimator's configurations (../shared/models/rde_configs/ * /model.ini): which
 * bodies, dofs, frames, FT sensors (with their signs) and IMUs each sub-model holds, invariance of the signs
 * to re-rooting, and argument errors and allocation failures. */
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
#define FOUR_JOINTS_IMU MODELS "/four_joints_two_ft_three_imu.urdf"

/* rde_configs/ergoCubSN000_r_leg/model.ini and rde_configs/four_joints_two_sensors/model.ini */
static const char *const R_LEG[] = {"r_hip_pitch", "r_hip_roll",    "r_hip_yaw",
                                    "r_knee",      "r_ankle_pitch", "r_ankle_roll"};
static const char *const R_LEG_FTS[] = {"r_foot_front_ft_sensor", "r_foot_rear_ft_sensor"};
static const char *const FOUR[] = {"joint_1", "joint_2", "joint_3", "joint_4"};
static const char *const FOUR_FTS[] = {"ft_1", "ft_2"};

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
    cr_assert_not_null(sm);
    return sm;
}

/* An accelerometer and a gyroscope at frame `frame` (named as in the ergoCub configuration: <prefix>_acc/_gyro). */
static void add_imu(rb_model *m, const char *frame, const char *prefix)
{
    rb_err err;
    char name[64];
    long f = rb_model_frame_index(m, frame);
    cr_assert(f >= 0, "frame %s", frame);
    snprintf(name, sizeof name, "%s_acc", prefix);
    cr_assert_eq(rb_model_add_imu(m, name, RB_SENSOR_ACCELEROMETER, (int)f, &err), RB_OK, "%s", err.msg);
    snprintf(name, sizeof name, "%s_gyro", prefix);
    cr_assert_eq(rb_model_add_imu(m, name, RB_SENSOR_GYROSCOPE, (int)f, &err), RB_OK, "%s", err.msg);
}

static size_t sub_of(const rb_model *m, const rb_submodels *sm, const char *body)
{
    long b = rb_model_body_index(m, body);
    cr_assert(b >= 0, "body %s", body);
    return (size_t)sm->body_sub[b];
}

/* The sub-model holds exactly the named bodies (any order; bodies[0] is the base, named first), the named dofs in
 * joint-list order, and the named FT sensors with the given signs. */
static void expect_sub(const rb_model *m, const rb_submodels *sm, size_t k, const char *const *bodies, size_t nb,
                       const char *const *dofs, size_t nd, const char *const *fts, const int *signs, size_t nf)
{
    const rb_submodel *s = &sm->sub[k];
    cr_assert_eq(s->n_bodies, nb, "sub-model %zu (%s): %zu bodies", k, bodies[0], s->n_bodies);
    cr_assert_str_eq(m->bodies[s->base].name, bodies[0]);
    cr_assert_eq(s->bodies[0], s->base);
    for (size_t i = 0; i < nb; i++) {
        cr_assert_eq(sub_of(m, sm, bodies[i]), k, "body %s in sub-model %zu", bodies[i], k);
        if (i > 0)
            cr_assert(s->bodies[i] > s->bodies[i - 1], "topological order");
    }
    cr_assert_eq(s->n_dofs, nd, "sub-model %zu: %zu dofs", k, s->n_dofs);
    for (size_t i = 0; i < nd; i++)
        cr_assert_str_eq(m->dof_names[s->dofs[i]], dofs[i]);
    cr_assert_eq(s->n_ft, nf, "sub-model %zu: %zu FT sensors", k, s->n_ft);
    for (size_t i = 0; i < nf; i++) {
        bool found = false;
        for (size_t j = 0; j < s->n_ft; j++)
            if (!strcmp(m->ft[s->ft[j].ft].name, fts[i])) {
                found = true;
                cr_assert_eq(s->ft[j].sign, signs[i], "sub-model %zu: FT %s sign %d", k, fts[i], s->ft[j].sign);
                cr_assert_eq(sm->ft[s->ft[j].set_index], s->ft[j].ft);
                cr_assert_eq(sm->body_sub[s->ft[j].body], (int)k, "the FT's body on this side");
            }
        cr_assert(found, "sub-model %zu lacks FT %s", k, fts[i]);
    }
}

/* Every FT sensor of the set is +1 in exactly one sub-model and -1 in exactly one other, which are the
 * sub-models of its two bodies; every body in one sub-model; the frames, dofs and masses partition the model. */
static void expect_partition(const rb_model *m, const rb_submodels *sm)
{
    cr_assert_eq(sm->n_sub, sm->n_ft + 1);
    cr_assert_eq(sm->sub[0].base, 0);
    cr_assert_eq(sm->sub[0].parent, -1);
    size_t nb = 0, nd = 0, nf = 0;
    double mass = 0.0;
    for (size_t k = 0; k < sm->n_sub; k++) {
        const rb_submodel *s = &sm->sub[k];
        nb += s->n_bodies, nd += s->n_dofs, nf += s->n_frames, mass += s->mass;
        for (size_t i = 0; i < s->n_bodies; i++) {
            cr_assert_eq(sm->body_sub[s->bodies[i]], (int)k);
            if (i > 0) /* connected: every body but the base has its tree parent in the sub-model */
                cr_assert_eq(sm->body_sub[m->bodies[s->bodies[i]].parent], (int)k);
        }
        if (k > 0) {
            cr_assert(s->base > sm->sub[k - 1].base, "sub-models in the order of their bases");
            cr_assert_eq(sm->body_sub[m->bodies[s->base].parent], s->parent);
            cr_assert_str_eq(m->ft[sm->ft[s->base_ft]].joint_name, m->bodies[s->base].joint_name);
        }
        for (size_t i = 0; i < s->n_frames; i++)
            cr_assert_eq(sm->body_sub[m->frames[s->frames[i]].body], (int)k);
    }
    cr_assert_eq(nb, m->n_bodies);
    cr_assert_eq(nd, m->n_dofs);
    cr_assert_eq(nf, m->n_frames);
    cr_assert(fabs(mass - m->total_mass) < 1e-9 * m->total_mass);
    for (size_t t = 0; t < sm->n_ft; t++) {
        const rb_ft_sensor *ft = &m->ft[sm->ft[t]];
        int plus = -1, minus = -1;
        for (size_t k = 0; k < sm->n_sub; k++)
            for (size_t j = 0; j < sm->sub[k].n_ft; j++)
                if (sm->sub[k].ft[j].set_index == (int)t) {
                    cr_assert_eq(sm->sub[k].ft[j].ft, sm->ft[t]);
                    int *slot = sm->sub[k].ft[j].sign > 0 ? &plus : &minus;
                    cr_assert_eq(*slot, -1, "FT %s listed twice with one sign", ft->name);
                    *slot = (int)k;
                }
        cr_assert(plus >= 0 && minus >= 0 && plus != minus, "FT %s: +1 in %d, -1 in %d", ft->name, plus, minus);
        /* + on the side the reading is applied to: the child for parent_to_child (sign +1) */
        int applied = ft->sign > 0 ? ft->child_body : ft->parent_body;
        int other = ft->sign > 0 ? ft->parent_body : ft->child_body;
        cr_assert_eq(sm->body_sub[applied], plus, "FT %s", ft->name);
        cr_assert_eq(sm->body_sub[other], minus, "FT %s", ft->name);
    }
}

/* The IMU entries of the sub-model: each one's pose through its body matches the sensor frame's world pose at a
 * random configuration (1e-12); `shared` entries are exactly the ones listed by two sub-models. */
static void expect_imus(const rb_model *m, const rb_submodels *sm)
{
    rb_dyn *ws;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    double *q = calloc(m->nq, sizeof *q);
    trng r = {99};
    random_state(&r, m, q, NULL, 0, NULL, 0);
    cr_assert_eq(rb_dyn_kinematics(m, ws, q, NULL, NULL, &err), RB_OK);
    for (size_t i = 0; i < m->n_imu; i++) {
        int lists = 0, shared = 0;
        rb_xform XF;
        rb_dyn_frame_pose(m, ws, (size_t)m->imu[i].frame, &XF, NULL);
        for (size_t k = 0; k < sm->n_sub; k++)
            for (size_t j = 0; j < sm->sub[k].n_imu; j++) {
                const rb_submodel_imu *e = &sm->sub[k].imu[j];
                if (e->imu != (int)i)
                    continue;
                lists++, shared += e->shared;
                cr_assert_eq(sm->body_sub[e->body], (int)k);
                rb_xform X;
                rb_xform_compose(rb_dyn_body_pose(ws, (size_t)e->body), &e->X_body, &X);
                cr_assert(rel_err(X.R, XF.R, 9) < 1e-12 && rel_err(X.p, XF.p, 3) < 1e-12, "IMU %s in sub-model %zu",
                          m->imu[i].name, k);
            }
        cr_assert(lists == 1 || lists == 2, "IMU %s listed %d times", m->imu[i].name, lists);
        cr_assert_eq(shared, lists == 2 ? 2 : 0, "IMU %s", m->imu[i].name);
    }
    free(q);
    rb_dyn_free(ws);
}

/* The number of sub-models listing IMU `name`, and whether sub-model k does. */
static int imu_lists(const rb_model *m, const rb_submodels *sm, const char *name, long k)
{
    int n = 0;
    for (size_t s = 0; s < sm->n_sub; s++)
        for (size_t j = 0; j < sm->sub[s].n_imu; j++)
            if (!strcmp(m->imu[sm->sub[s].imu[j].imu].name, name) && (k < 0 || (size_t)k == s))
                n++;
    return n;
}

/* ergoCub's right leg as configured for the public estimator: joint list of model.ini, base root_link, FT sensors
 * r_foot_front_ft_sensor and r_foot_rear_ft_sensor (r_leg_ft_sensor is commented out there), the configuration's
 * accelerometers and gyroscopes on the three leg FT frames. Three sub-models: the robot without the foot plates
 * (all six dofs), and each foot plate alone with +1 (parent_to_child: the reading is the leg's wrench on the
 * plate), the big one holding both with -1. */
Test(dynamics_ft_submodels, ergocub_right_leg_as_configured)
{
    test_need_shared("models/ergoCubSN000.urdf");
    for (int fb = 0; fb < 2; fb++) {
        rb_model *m = load(ERGOCUB, R_LEG, 6, "root_link", fb);
        add_imu(m, "r_leg_ft_sensor", "r_leg_ft");
        add_imu(m, "r_foot_front_ft_sensor", "r_foot_front_ft");
        add_imu(m, "r_foot_rear_ft_sensor", "r_foot_rear_ft");
        rb_submodels *sm = build(m, R_LEG_FTS, 2);
        cr_assert_eq(sm->n_sub, 3);
        cr_assert_eq(sm->n_ft, 2);
        cr_assert_str_eq(m->ft[sm->ft[0]].name, "r_foot_front_ft_sensor", "readings follow the list given");
        size_t front = sub_of(m, sm, "r_foot_front"), rear = sub_of(m, sm, "r_foot_rear");
        static const char *const big[] = {"root_link",   "r_hip_1",      "r_hip_2",     "r_hip_3", "r_upper_leg",
                                          "r_lower_leg", "r_ankle_1",    "r_ankle_2",   "l_hip_3", "l_foot_front",
                                          "l_foot_rear", "r_shoulder_3", "l_shoulder_3"};
        expect_sub(m, sm, 0, big, 13, R_LEG, 6, R_LEG_FTS, (const int[]){-1, -1}, 2);
        expect_sub(m, sm, front, (const char *const[]){"r_foot_front"}, 1, NULL, 0, R_LEG_FTS, (const int[]){1}, 1);
        expect_sub(m, sm, rear, (const char *const[]){"r_foot_rear"}, 1, NULL, 0, R_LEG_FTS + 1, (const int[]){1}, 1);
        cr_assert_eq(sm->sub[front].parent, 0);
        cr_assert_eq(sm->sub[rear].parent, 0);
        cr_assert(fabs(sm->sub[front].mass - 0.221105) < 1e-6);
        expect_partition(m, sm);
        expect_imus(m, sm);
        /* IMUs on the cut FT frames: in both neighbours; on the uncut r_leg_ft frame and the waist: one */
        for (int k = 0; k < 2; k++) {
            const char *name = k ? "r_foot_front_ft_gyro" : "r_foot_front_ft_acc";
            cr_assert_eq(imu_lists(m, sm, name, -1), 2);
            cr_assert_eq(imu_lists(m, sm, name, 0), 1);
            cr_assert_eq(imu_lists(m, sm, name, (long)front), 1);
        }
        cr_assert_eq(imu_lists(m, sm, "r_foot_rear_ft_acc", (long)rear), 1);
        cr_assert_eq(imu_lists(m, sm, "r_foot_rear_ft_acc", 0), 1);
        cr_assert_eq(imu_lists(m, sm, "r_leg_ft_acc", -1), 1);
        cr_assert_eq(imu_lists(m, sm, "r_leg_ft_acc", 0), 1);
        cr_assert_eq(imu_lists(m, sm, "waist_imu_0", 0), 2, "accelerometer and gyroscope");
        cr_assert_eq(imu_lists(m, sm, "waist_imu_0", -1), 2);
        rb_submodels_free(sm);
        rb_model_free(m);
    }
}

/* The same leg cut at all eight FT sensors of ergoCub (NULL list): nine sub-models; r_leg_ft_sensor
 * (child_to_parent: the reading is the lower leg's wrench on the hip) splits the leg's dofs two / four, +1 on
 * the hip side; the arms and the (locked) left leg are sub-models without dofs. */
Test(dynamics_ft_submodels, ergocub_right_leg_all_sensors)
{
    test_need_shared("models/ergoCubSN000.urdf");
    rb_model *m = load(ERGOCUB, R_LEG, 6, "root_link", true);
    add_imu(m, "r_leg_ft_sensor", "r_leg_ft");
    rb_submodels *sm = build(m, NULL, 0);
    cr_assert_eq(m->n_ft, 8);
    cr_assert_eq(sm->n_sub, 9);
    for (size_t k = 0; k < sm->n_ft; k++)
        cr_assert_eq(sm->ft[k], (int)k, "model order");
    static const char *const hip_fts[] = {"l_arm_ft_sensor", "r_arm_ft_sensor", "l_leg_ft_sensor", "r_leg_ft_sensor"};
    expect_sub(m, sm, 0, (const char *const[]){"root_link", "r_hip_1", "r_hip_2"}, 3, R_LEG, 2, hip_fts,
               (const int[]){1, 1, 1, 1}, 4);
    size_t leg = sub_of(m, sm, "r_hip_3");
    static const char *const leg_bodies[] = {"r_hip_3", "r_upper_leg", "r_lower_leg", "r_ankle_1", "r_ankle_2"};
    static const char *const leg_fts[] = {"r_leg_ft_sensor", "r_foot_front_ft_sensor", "r_foot_rear_ft_sensor"};
    expect_sub(m, sm, leg, leg_bodies, 5, R_LEG + 2, 4, leg_fts, (const int[]){-1, -1, -1}, 3);
    cr_assert_eq(sm->sub[leg].parent, 0);
    size_t lleg = sub_of(m, sm, "l_hip_3");
    expect_sub(m, sm, lleg, (const char *const[]){"l_hip_3"}, 1, NULL, 0,
               (const char *const[]){"l_leg_ft_sensor", "l_foot_front_ft_sensor", "l_foot_rear_ft_sensor"},
               (const int[]){-1, -1, -1}, 3);
    expect_sub(m, sm, sub_of(m, sm, "r_shoulder_3"), (const char *const[]){"r_shoulder_3"}, 1, NULL, 0,
               (const char *const[]){"r_arm_ft_sensor"}, (const int[]){-1}, 1);
    expect_sub(m, sm, sub_of(m, sm, "l_foot_rear"), (const char *const[]){"l_foot_rear"}, 1, NULL, 0,
               (const char *const[]){"l_foot_rear_ft_sensor"}, (const int[]){1}, 1);
    cr_assert_eq(sm->sub[sub_of(m, sm, "r_foot_front")].parent, (int)leg);
    expect_partition(m, sm);
    expect_imus(m, sm);
    cr_assert_eq(imu_lists(m, sm, "r_leg_ft_acc", 0), 1);
    cr_assert_eq(imu_lists(m, sm, "r_leg_ft_acc", (long)leg), 1);
    rb_submodels_free(sm);
    rb_model_free(m);
}

/* four_joints_two_sensors with its configuration (joint_1..4, base_link, ft_1 and ft_2): {base_link, link_1,
 * link_2} with joint_1, joint_2; {link_3, link_4, link_5} with joint_3, joint_4; {link_6}; both sensors
 * parent_to_child (+1 on the child side). IMUs on ft_1 and ft_2 (the configuration's commented-out lists) are in
 * both neighbours. The same sides carry the + signs when the model is re-rooted at link_6 (both FT joints
 * reversed) or at link_4. */
Test(dynamics_ft_submodels, four_joints_two_sensors)
{
    test_need_shared("models/four_joints_two_sensors.urdf");
    test_need_shared("models/four_joints_two_ft_three_imu.urdf");
    static const char *const bases[] = {"base_link", "link_6", "link_4"};
    for (size_t b = 0; b < 3; b++) {
        rb_model *m = load(FOUR_JOINTS, FOUR, 4, bases[b], b == 2);
        add_imu(m, "ft_1", "ft_1");
        add_imu(m, "ft_2", "ft_2");
        rb_submodels *sm = build(m, FOUR_FTS, 2);
        cr_assert_eq(sm->n_sub, 3);
        size_t s0 = sub_of(m, sm, "base_link"), s1 = sub_of(m, sm, "link_4"), s2 = sub_of(m, sm, "link_6");
        cr_assert_str_eq(m->bodies[sm->sub[0].base].name, bases[b]);
        cr_assert(s0 != s1 && s1 != s2 && s0 != s2);
        cr_assert_eq(sub_of(m, sm, "link_1"), s0);
        cr_assert_eq(sub_of(m, sm, "link_2"), s0);
        cr_assert_eq(sub_of(m, sm, "link_3"), s1);
        cr_assert_eq(sub_of(m, sm, "link_5"), s1);
        cr_assert_eq(sm->sub[s0].n_bodies, 3);
        cr_assert_eq(sm->sub[s1].n_bodies, 3);
        cr_assert_eq(sm->sub[s2].n_bodies, 1);
        cr_assert_eq(sm->sub[s0].n_dofs, 2);
        cr_assert_str_eq(m->dof_names[sm->sub[s0].dofs[0]], "joint_1");
        cr_assert_str_eq(m->dof_names[sm->sub[s0].dofs[1]], "joint_2");
        cr_assert_eq(sm->sub[s1].n_dofs, 2);
        cr_assert_str_eq(m->dof_names[sm->sub[s1].dofs[0]], "joint_3");
        cr_assert_str_eq(m->dof_names[sm->sub[s1].dofs[1]], "joint_4");
        cr_assert_eq(sm->sub[s2].n_dofs, 0);
        /* physical sides: ft_1's reading acts on link_3's side, ft_2's on link_6's, whatever the base */
        for (size_t k = 0; k < 3; k++)
            for (size_t j = 0; j < sm->sub[k].n_ft; j++) {
                const rb_submodel_ft *e = &sm->sub[k].ft[j];
                bool is1 = !strcmp(m->ft[e->ft].name, "ft_1");
                int expect = is1 ? (k == s1 ? 1 : k == s0 ? -1 : 0) : (k == s2 ? 1 : k == s1 ? -1 : 0);
                cr_assert_eq(e->sign, expect, "base %s: sub-model %zu FT %s", bases[b], k, m->ft[e->ft].name);
            }
        cr_assert_eq(sm->sub[s0].n_ft, 1);
        cr_assert_eq(sm->sub[s1].n_ft, 2);
        cr_assert_eq(sm->sub[s2].n_ft, 1);
        cr_assert_eq(imu_lists(m, sm, "ft_1_acc", (long)s0) + imu_lists(m, sm, "ft_1_acc", (long)s1), 2);
        cr_assert_eq(imu_lists(m, sm, "ft_2_gyro", (long)s1) + imu_lists(m, sm, "ft_2_gyro", (long)s2), 2);
        expect_partition(m, sm);
        expect_imus(m, sm);
        rb_submodels_free(sm);
        rb_model_free(m);
    }
    /* the three-IMU variant: its base IMU is in the base's sub-model only; an IMU on a frame at ft_2's pose
     * (not the sensor frame itself) is shared */
    rb_model *m = load(FOUR_JOINTS_IMU, FOUR, 4, "base_link", false);
    rb_err err;
    long f2 = rb_model_frame_index(m, "ft_2");
    rb_xform Xf = m->frames[f2].X_body; /* on link_6; put the twin on link_5, through the fixed joint */
    rb_xform Xt;
    rb_xform_compose(&m->bodies[m->frames[f2].body].X_parent, &Xf, &Xt);
    cr_assert_eq(rb_model_add_frame(m, "ft_2_twin", m->bodies[m->frames[f2].body].parent, &Xt, RB_FRAME_USER, &err),
                 RB_OK);
    add_imu(m, "ft_2_twin", "twin");
    Xt.p[0] += 1e-6;
    cr_assert_eq(rb_model_add_frame(m, "near_ft_2", m->bodies[m->frames[f2].body].parent, &Xt, RB_FRAME_USER, &err),
                 RB_OK);
    add_imu(m, "near_ft_2", "near");
    rb_submodels *sm = build(m, FOUR_FTS, 2);
    cr_assert_eq(imu_lists(m, sm, "base_imu_0", 0), 2);
    cr_assert_eq(imu_lists(m, sm, "base_imu_0", -1), 2);
    cr_assert_eq(imu_lists(m, sm, "twin_acc", -1), 2);
    cr_assert_eq(imu_lists(m, sm, "twin_acc", (long)sub_of(m, sm, "link_6")), 1);
    cr_assert_eq(imu_lists(m, sm, "near_acc", -1), 1, "1 um away: not on the FT frame");
    expect_imus(m, sm);
    /* cutting nothing: one sub-model, the whole tree */
    rb_submodels *one = build(m, FOUR_FTS, 0);
    cr_assert_eq(one->n_sub, 1);
    cr_assert_eq(one->sub[0].n_bodies, m->n_bodies);
    cr_assert_eq(one->sub[0].n_dofs, 4);
    cr_assert_eq(one->sub[0].n_ft, 0);
    expect_partition(m, one);
    rb_submodels_free(one);
    rb_submodels_free(sm);
    rb_model_free(m);
}

/* One-line errors for bad arguments; every allocation failure reported as RB_ENOMEM without a leak (ASan). */
Test(dynamics_ft_submodels, errors_and_allocation_failures)
{
    test_need_shared("models/four_joints_two_sensors.urdf");
    rb_err err;
    rb_submodels *sm = (rb_submodels *)&err; /* reset to NULL on failure */
    rb_model *m = load(FOUR_JOINTS, FOUR, 4, "base_link", false);
    cr_assert_eq(rb_submodels_build(m, (const char *const[]){"ft_1", "ft_3"}, 2, &sm, &err), RB_ENOTFOUND);
    cr_assert_null(sm);
    cr_assert(strstr(err.msg, "ft_3") && !strchr(err.msg, '\n'), "%s", err.msg);
    cr_assert_eq(rb_submodels_build(m, (const char *const[]){"ft_1", "ft_1"}, 2, &sm, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "listed twice"), "%s", err.msg);
    cr_assert_eq(rb_submodels_build(m, NULL, 2, &sm, &err), RB_EINVAL, "NULL list with a length");
    cr_assert_eq(rb_submodels_build(NULL, NULL, 0, &sm, &err), RB_EINVAL);
    cr_assert_eq(rb_submodels_build(m, NULL, 0, NULL, &err), RB_EINVAL);
    cr_assert_eq(rb_submodels_build(m, (const char *const[]){NULL}, 1, &sm, &err), RB_EINVAL);
    rb_submodels_free(NULL);
    rb_model_free(m);

    /* two sensors on one joint */
    m = load(FOUR_JOINTS, FOUR, 4, "base_link", false);
    long l3 = rb_model_body_index(m, "link_3"), f1 = rb_model_frame_index(m, "ft_1");
    cr_assert_eq(rb_model_add_ft_sensor(m, "ft_1b", (int)l3, (int)f1, (int)f1, -1, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_submodels_build(m, (const char *const[]){"ft_1", "ft_1b"}, 2, &sm, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "ft_1b") && strstr(err.msg, "same joint"), "%s", err.msg);
    cr_assert_eq(rb_submodels_build(m, (const char *const[]){"ft_1b", "ft_2"}, 2, &sm, &err), RB_OK, "%s", err.msg);
    rb_submodels_free(sm);

    /* allocation failures, with IMUs to share */
    add_imu(m, "ft_1", "ft_1");
    long made = -1;
    for (long n = 0; n < 100; n++) {
        rb_alloc_fail_after(n);
        int rc = rb_submodels_build(m, FOUR_FTS, 2, &sm, &err);
        made = rb_alloc_fail_after(-1);
        if (rc == RB_OK) {
            expect_partition(m, sm);
            expect_imus(m, sm);
            rb_submodels_free(sm);
            break;
        }
        cr_assert_eq(rc, RB_ENOMEM, "failure %ld: %s", n, err.msg);
        cr_assert_null(sm);
        made = -1;
    }
    cr_assert(made > 0, "the build succeeds once allocations do");
    rb_model_free(m);
}
