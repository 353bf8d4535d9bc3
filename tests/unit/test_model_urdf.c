/* lib/model: loading real URDFs (read from the shared models folder, never copied) and the project's own
 * datasets/arm_2ft.urdf; merging, reduced models, re-rooting and sensors, checked against an independent
 * reading of the same files (model_support.h) and hand-written forward kinematics. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_support.h"
#include "roboest/model.h"
#include "support.h"

#define ERGOCUB RB_SHARED "/models/ergoCubSN000.urdf"
#define FOUR_JOINTS RB_SHARED "/models/four_joints_two_sensors.urdf"
#define FOUR_JOINTS_IMU RB_SHARED "/models/four_joints_two_ft_three_imu.urdf"
#define ARM RB_SOURCE "/datasets/arm_2ft.urdf"
#define R_LEG_INI RB_SHARED "/models/rde_configs/ergoCubSN000_r_leg/model.ini"

static rb_model *load(const char *path, const rb_model_opts *opts)
{
    rb_model *m = NULL;
    rb_err err;
    int rc = rb_model_load_urdf(path, opts, &m, &err);
    cr_assert_eq(rc, RB_OK, "%s: %s", path, err.msg);
    cr_assert_not_null(m);
    return m;
}

static void expect_close(const double *a, const double *b, size_t n, double tol, const char *what)
{
    for (size_t i = 0; i < n; i++)
        cr_assert(fabs(a[i] - b[i]) <= tol * (1.0 + fabs(b[i])), "%s[%zu]: %.17g vs %.17g", what, i, a[i], b[i]);
}

static void expect_tree(const rb_model *m)
{
    for (size_t i = 1; i < m->n_bodies; i++)
        cr_assert(m->bodies[i].parent >= 0 && (size_t)m->bodies[i].parent < i, "topological order at %zu", i);
    for (size_t k = 0; k < m->n_dofs; k++) {
        const rb_body *b = &m->bodies[m->dof_body[k]];
        cr_assert_eq(b->dof, (int)k);
        cr_assert_str_eq(b->joint_name, m->dof_names[k]);
        cr_assert_neq(b->type, RB_JOINT_FIXED);
        cr_assert_float_eq(rb_v3_dot(b->axis, b->axis), 1.0, 1e-12);
    }
    size_t fixed = 0;
    for (size_t i = 1; i < m->n_bodies; i++)
        fixed += m->bodies[i].type == RB_JOINT_FIXED;
    cr_assert_eq(m->n_bodies, 1 + m->n_dofs + fixed);
    /* every FT joint is a FIXED body, between the bodies the sensor names */
    for (size_t s = 0; s < m->n_ft; s++) {
        const rb_ft_sensor *ft = &m->ft[s];
        const rb_body *c = &m->bodies[ft->child_body];
        cr_assert_eq(c->type, RB_JOINT_FIXED, "%s", ft->name);
        cr_assert_str_eq(c->joint_name, ft->joint_name);
        cr_assert_eq(c->parent, ft->parent_body);
        cr_assert(ft->sign == 1 || ft->sign == -1);
    }
}

/* Mass, centre of mass and rotational inertia of the whole robot at q = 0, in the URDF root link's frame:
 * merging links, keeping FT joints and re-rooting must all conserve them. */
static void expect_same_inertia(const rb_model *m, const char *path)
{
    test_urdf u;
    cr_assert(test_urdf_read(path, &u), "%s", path);
    double *q = calloc(m->n_dofs + 1, sizeof *q), a[10], b[10];
    model_composite(m, q, rb_model_frame_index(m, u.root), a);
    urdf_composite(&u, b);
    cr_assert_float_eq(m->total_mass, u.total_mass, 1e-12 * u.total_mass, "total mass");
    cr_assert_float_eq(a[0], u.total_mass, 1e-12 * u.total_mass);
    double ca[3] = {a[1] / a[0], a[2] / a[0], a[3] / a[0]}, cb[3] = {b[1] / b[0], b[2] / b[0], b[3] / b[0]};
    expect_close(ca, cb, 3, 1e-12, "centre of mass");
    expect_close(a + 4, b + 4, 6, 1e-11, "rotational inertia");
    free(q);
    test_urdf_free(&u);
}

/* Every frame's pose relative to `ref`, at q, for comparison across models of one robot. */
static rb_xform *poses_relative(const rb_model *m, const double *q, const char *ref)
{
    rb_xform *pose = calloc(m->n_bodies, sizeof *pose), *rel = calloc(m->n_frames, sizeof *rel);
    fk_bodies(m, q, pose);
    long r = rb_model_frame_index(m, ref);
    cr_assert_geq(r, 0, "%s", ref);
    for (size_t f = 0; f < m->n_frames; f++)
        relative_pose(m, pose, r, (long)f, &rel[f]);
    free(pose);
    return rel;
}

/* Frames of a (by name) have the same relative poses in b. */
static void expect_same_frames(const rb_model *a, const rb_xform *ra, const rb_model *b, const rb_xform *rb_,
                               double tol)
{
    for (size_t f = 0; f < a->n_frames; f++) {
        long g = rb_model_frame_index(b, a->frames[f].name);
        cr_assert_geq(g, 0, "frame %s", a->frames[f].name);
        char what[300];
        snprintf(what, sizeof what, "frame %s", a->frames[f].name);
        expect_close(ra[f].R, rb_[g].R, 9, tol, what);
        expect_close(ra[f].p, rb_[g].p, 3, tol, what);
    }
}

Test(model_urdf, ergocub_full)
{
    test_need_shared("models/ergoCubSN000.urdf");
    rb_model *m = load(ERGOCUB, NULL);
    test_urdf u;
    cr_assert(test_urdf_read(ERGOCUB, &u));
    cr_assert_str_eq(m->name, "ergoCub");
    cr_assert_str_eq(m->source, ERGOCUB);
    cr_assert_eq(u.n_links, 194);
    cr_assert_eq(u.n_joints, 193);
    cr_assert_eq(u.n_movable, 56);
    cr_assert_eq(m->n_dofs, 56);
    cr_assert_eq(m->nq, 56);
    cr_assert_eq(m->nv, 56);
    cr_assert_eq(m->n_ft, 8);
    cr_assert_eq(m->n_bodies, 1 + 56 + 8, "movable joints and FT joints make bodies, the rest is merged");
    cr_assert_str_eq(m->bodies[0].name, "root_link");
    /* a frame per link plus one per FT sensor; the IMU sensors share their links' frames */
    cr_assert_eq(m->n_frames, 194 + 8);
    cr_assert_eq(m->n_imu, 6, "3 IMUs, an accelerometer and a gyroscope each");
    size_t acc = 0;
    for (size_t i = 0; i < m->n_imu; i++) {
        acc += m->imu[i].kind == RB_SENSOR_ACCELEROMETER;
        cr_assert_str_eq(m->frames[m->imu[i].frame].name, m->imu[i].name);
    }
    cr_assert_eq(acc, 3);
    cr_assert_geq(rb_model_frame_index(m, "waist_imu_0"), 0);
    /* dofs in URDF document order */
    cr_assert_str_eq(m->dof_names[0], "r_hip_pitch");
    for (size_t k = 0; k < m->n_dofs; k++) {
        cr_assert(m->dof_lower[k] < m->dof_upper[k] && isfinite(m->dof_lower[k]), "%s", m->dof_names[k]);
        cr_assert_eq(m->dof_effort[k], 50000.0);
    }
    long k = rb_model_dof_index(m, "r_knee");
    cr_assert_geq(k, 0);
    cr_assert_float_eq(m->dof_upper[k], 0.08726646259971647, 1e-15);
    /* FT sensors from the top-level tags */
    long s = rb_model_ft_index(m, "r_foot_rear_ft_sensor");
    cr_assert_geq(s, 0);
    cr_assert_eq(m->ft[s].sign, 1, "parent_to_child");
    cr_assert_str_eq(m->frames[m->ft[s].frame].name, "r_foot_rear_ft_sensor", "<frame>sensor</frame>");
    cr_assert_eq(m->ft[s].frame, m->ft[s].sensor_frame);
    cr_assert_str_eq(m->bodies[m->ft[s].child_body].name, "r_foot_rear");
    cr_assert_str_eq(m->bodies[m->ft[s].parent_body].name, "r_ankle_2");
    s = rb_model_ft_index(m, "l_arm_ft_sensor");
    cr_assert_eq(m->ft[s].sign, -1, "child_to_parent");
    expect_tree(m);
    expect_same_inertia(m, ERGOCUB);
    test_urdf_free(&u);
    rb_model_free(m);
}

Test(model_urdf, four_joint_models)
{
    test_need_shared("models/four_joints_two_sensors.urdf");
    test_need_shared("models/four_joints_two_ft_three_imu.urdf");
    rb_model *m = load(FOUR_JOINTS, NULL);
    cr_assert_eq(m->n_dofs, 4);
    cr_assert_eq(m->n_bodies, 7);
    cr_assert_eq(m->n_ft, 2);
    cr_assert_eq(m->n_imu, 0);
    cr_assert_eq(m->n_frames, 7 + 2);
    for (size_t k = 0; k < 4; k++) {
        char name[16];
        snprintf(name, sizeof name, "joint_%zu", k + 1);
        cr_assert_str_eq(m->dof_names[k], name);
    }
    /* axis -1 0 0 of joint_2, kept as written */
    const rb_body *b = &m->bodies[m->dof_body[1]];
    cr_assert_eq(b->axis[0], -1.0);
    expect_tree(m);
    expect_same_inertia(m, FOUR_JOINTS);
    rb_model_free(m);

    m = load(FOUR_JOINTS_IMU, NULL);
    cr_assert_eq(m->n_dofs, 4);
    cr_assert_eq(m->n_bodies, 7);
    cr_assert_eq(m->n_ft, 2);
    cr_assert_eq(m->n_imu, 2, "one IMU (gazebo imu + top-level accelerometer of the same name)");
    cr_assert_eq(m->n_frames, 8 + 2);
    long f = rb_model_frame_index(m, "base_imu_0");
    cr_assert_eq(m->imu[0].frame, f);
    cr_assert_eq(m->imu[1].frame, f);
    cr_assert_neq(m->imu[0].kind, m->imu[1].kind);
    /* the IMU pose: rpy 1.5708 0 -1.5708 at (0.0354497 0.00639688 0.0606) in base_link */
    double R[9];
    rb_m3_from_rpy(1.5708, 0, -1.5708, R);
    expect_close(m->frames[f].X_body.R, R, 9, 1e-15, "IMU rotation");
    expect_close(m->frames[f].X_body.p, (double[]){0.0354497, 0.00639688, 0.0606}, 3, 1e-15, "IMU position");
    expect_tree(m);
    expect_same_inertia(m, FOUR_JOINTS_IMU);
    rb_model_free(m);
}

Test(model_urdf, arm_dataset)
{
    rb_model *m = load(ARM, NULL);
    cr_assert_str_eq(m->name, "arm_2ft");
    cr_assert_eq(m->n_dofs, 4);
    cr_assert_eq(m->n_bodies, 7);
    cr_assert_eq(m->n_ft, 2);
    cr_assert_eq(m->n_imu, 2);
    cr_assert_eq(m->n_frames, 8 + 2 + 2);
    cr_assert_float_eq(m->total_mass, 9.4, 1e-12);
    const char *dofs[] = {"shoulder_yaw", "shoulder_pitch", "elbow", "wrist_roll"};
    for (size_t k = 0; k < 4; k++)
        cr_assert_str_eq(m->dof_names[k], dofs[k]);
    /* axis 0 2 0 normalized; continuous joint without position limits */
    const rb_body *b = &m->bodies[m->dof_body[1]];
    expect_close(b->axis, (double[]){0, 1, 0}, 3, 0, "normalized axis");
    cr_assert(isinf(m->dof_lower[3]) && isinf(m->dof_upper[3]));
    cr_assert_eq(m->dof_effort[3], 10.0);
    cr_assert_eq(m->dof_lower[2], 0.0);
    cr_assert_eq(m->dof_upper[2], 2.4);
    /* upper arm sensor: frame child, parent_to_child */
    long s = rb_model_ft_index(m, "upper_arm_ft_sensor");
    cr_assert_eq(m->ft[s].sign, 1);
    cr_assert_str_eq(m->frames[m->ft[s].frame].name, "upper_arm_2");
    cr_assert_str_eq(m->frames[m->ft[s].sensor_frame].name, "upper_arm_ft_sensor");
    cr_assert_eq(m->frames[m->ft[s].sensor_frame].kind, RB_FRAME_SENSOR);
    /* wrist sensor: frame sensor, child_to_parent, at (0 0 0.01) rpy (pi 0 0) in the hand link */
    s = rb_model_ft_index(m, "wrist_ft_sensor");
    cr_assert_eq(m->ft[s].sign, -1);
    cr_assert_eq(m->ft[s].frame, m->ft[s].sensor_frame);
    cr_assert_str_eq(m->bodies[m->ft[s].child_body].name, "hand");
    cr_assert_str_eq(m->bodies[m->ft[s].parent_body].name, "wrist");
    rb_xform *pose = calloc(m->n_bodies, sizeof *pose), rel;
    double q[4] = {0.3, -0.7, 1.1, 2.0};
    fk_bodies(m, q, pose);
    relative_pose(m, pose, rb_model_frame_index(m, "hand"), m->ft[s].sensor_frame, &rel);
    double R[9];
    rb_m3_from_rpy(M_PI, 0, 0, R);
    expect_close(rel.R, R, 9, 1e-15, "sensor rotation");
    expect_close(rel.p, (double[]){0, 0, 0.01}, 3, 1e-15, "sensor position");
    /* the massless tool frame is merged into the hand, 0.1 above it */
    long tool = rb_model_frame_index(m, "tool_frame");
    cr_assert_eq(m->frames[tool].body, m->ft[s].child_body);
    relative_pose(m, pose, rb_model_frame_index(m, "hand"), tool, &rel);
    expect_close(rel.p, (double[]){0, 0, 0.1}, 3, 1e-15, "tool frame");
    /* accelerometer and gyroscope, each its own frame, at the same pose on the hand */
    cr_assert_eq(m->imu[0].kind, RB_SENSOR_ACCELEROMETER);
    cr_assert_str_eq(m->imu[0].name, "hand_acc");
    cr_assert_eq(m->imu[1].kind, RB_SENSOR_GYROSCOPE);
    cr_assert_str_eq(m->frames[m->imu[1].frame].name, "hand_gyro");
    expect_close(m->frames[m->imu[0].frame].X_body.p, m->frames[m->imu[1].frame].X_body.p, 3, 0, "IMU frames");
    /* the elbow: at q = 0 the forearm sits 0.1 above upper_arm_2; rotating the elbow by q about y */
    double q0[4] = {0, 0, 0.5, 0};
    fk_bodies(m, q0, pose);
    relative_pose(m, pose, rb_model_frame_index(m, "upper_arm_2"), rb_model_frame_index(m, "wrist"), &rel);
    expect_close(rel.p, (double[]){0.25 * sin(0.5), 0, 0.1 + 0.25 * cos(0.5)}, 3, 1e-15, "elbow kinematics");
    free(pose);
    expect_tree(m);
    expect_same_inertia(m, ARM);
    rb_model_free(m);
}

Test(model_urdf, text_loader_names_the_source)
{
    const char *xml = "<robot name='tiny'><link name='a'><inertial><mass value='1'/>"
                      "<inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/></inertial></link></robot>";
    rb_model *m = NULL;
    rb_err err;
    cr_assert_eq(rb_model_load_urdf_text(xml, strlen(xml), "tiny.urdf", NULL, &m, &err), RB_OK, "%s", err.msg);
    cr_assert_str_eq(m->source, "tiny.urdf");
    cr_assert_str_eq(m->name, "tiny");
    cr_assert_eq(m->n_bodies, 1);
    cr_assert_eq(m->n_dofs, 0);
    cr_assert_eq(m->n_frames, 1);
    cr_assert_float_eq(m->total_mass, 1.0, 0);
    rb_model_free(m);
}

/* The r_leg configuration of the public estimator: base link and joint list read from its model.ini. */
static size_t read_leg_config(char names[][64], size_t max, char base[64])
{
    FILE *f = fopen(R_LEG_INI, "r");
    cr_assert_not_null(f, R_LEG_INI);
    char line[1024];
    size_t n = 0;
    base[0] = '\0';
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "base_link", 9) == 0)
            sscanf(line, "base_link \"%63[^\"]\"", base);
        if (strncmp(line, "joint_list", 10) != 0)
            continue;
        for (char *p = strchr(line, '"'); p && n < max; p = strchr(p + 1, '"')) {
            char *e = strchr(p + 1, '"');
            snprintf(names[n++], 64, "%.*s", (int)(e - p - 1), p + 1);
            p = e;
        }
    }
    fclose(f);
    return n;
}

Test(model_urdf, ergocub_reduced_right_leg)
{
    test_need_shared("models/rde_configs/ergoCubSN000_r_leg/model.ini");
    test_need_shared("models/ergoCubSN000.urdf");
    char names[16][64], base[64];
    size_t n = read_leg_config(names, 16, base);
    cr_assert_eq(n, 6);
    cr_assert_str_eq(base, "root_link");
    const char *list[16];
    for (size_t i = 0; i < n; i++)
        list[i] = names[i];
    rb_model_opts o = {.joints = list, .n_joints = n, .base = base};
    rb_model *m = load(ERGOCUB, &o);
    cr_assert_eq(m->n_dofs, 6);
    for (size_t i = 0; i < n; i++)
        cr_assert_str_eq(m->dof_names[i], list[i], "joint list order");
    /* FT joints survive reduction: the leg's three (and those of the other limbs) */
    const char *leg_ft[] = {"r_leg_ft_sensor", "r_foot_front_ft_sensor", "r_foot_rear_ft_sensor"};
    for (size_t i = 0; i < 3; i++) {
        long b = -1;
        for (size_t j = 0; j < m->n_bodies; j++)
            if (m->bodies[j].joint_name && strcmp(m->bodies[j].joint_name, leg_ft[i]) == 0)
                b = (long)j;
        cr_assert_geq(b, 0, "%s", leg_ft[i]);
        cr_assert_eq(m->bodies[b].type, RB_JOINT_FIXED);
        cr_assert_geq(rb_model_ft_index(m, leg_ft[i]), 0);
    }
    cr_assert_eq(m->n_ft, 8);
    cr_assert_eq(m->n_bodies, 1 + 6 + 8);
    cr_assert_eq(m->n_frames, 194 + 8, "every link is still a frame");
    expect_tree(m);
    expect_same_inertia(m, ERGOCUB);

    /* the same kinematics as the full model with the other joints at zero */
    rb_model *full = load(ERGOCUB, NULL);
    double q[6], *qf = calloc(full->n_dofs, sizeof *qf);
    for (int t = 0; t < 5; t++) {
        for (size_t i = 0; i < 6; i++) {
            q[i] = test_uniform(-1.5, 1.5);
            qf[rb_model_dof_index(full, list[i])] = q[i];
        }
        rb_xform *ra = poses_relative(m, q, "r_sole"), *rb_ = poses_relative(full, qf, "r_sole");
        expect_same_frames(m, ra, full, rb_, 1e-12);
        free(ra), free(rb_);
    }
    free(qf);
    rb_model_free(full);
    rb_model_free(m);
}

Test(model_urdf, locked_joints_sit_at_their_position)
{
    test_need_shared("models/ergoCubSN000.urdf");
    const char *list[] = {"r_hip_pitch", "r_knee"};
    const char *locked[] = {"r_ankle_pitch", "torso_yaw"};
    double at[] = {0.4, -0.3};
    rb_model_opts o = {.joints = list, .n_joints = 2, .locked = locked, .locked_at = at, .n_locked = 2};
    rb_model *m = load(ERGOCUB, &o), *full = load(ERGOCUB, NULL);
    cr_assert_eq(m->n_dofs, 2);
    double q[2] = {0.7, -1.1}, *qf = calloc(full->n_dofs, sizeof *qf);
    qf[rb_model_dof_index(full, "r_hip_pitch")] = q[0];
    qf[rb_model_dof_index(full, "r_knee")] = q[1];
    qf[rb_model_dof_index(full, "r_ankle_pitch")] = at[0];
    qf[rb_model_dof_index(full, "torso_yaw")] = at[1];
    rb_xform *ra = poses_relative(m, q, "root_link"), *rb_ = poses_relative(full, qf, "root_link");
    expect_same_frames(m, ra, full, rb_, 1e-12);
    free(ra), free(rb_), free(qf);
    rb_model_free(m);
    /* without a joint list, the locked joints are the only ones removed */
    o = (rb_model_opts){.locked = locked, .locked_at = at, .n_locked = 2};
    m = load(ERGOCUB, &o);
    cr_assert_eq(m->n_dofs, 54);
    cr_assert_eq(rb_model_dof_index(m, "r_ankle_pitch"), -1);
    rb_model_free(m);
    rb_model_free(full);
}

/* Re-rooting: whatever the base link, the relative pose of any two frames at any q is the same. */
static void check_rerooting(const char *path, const char *const *bases, size_t n_bases, const char *ref)
{
    rb_model *ref_model = load(path, NULL);
    double *q = calloc(ref_model->n_dofs + 1, sizeof *q);
    for (size_t b = 0; b < n_bases; b++) {
        rb_model_opts o = {.base = bases[b]};
        rb_model *m = load(path, &o);
        cr_assert_str_eq(m->bodies[0].name, bases[b]);
        cr_assert_eq(m->n_dofs, ref_model->n_dofs);
        cr_assert_eq(m->n_frames, ref_model->n_frames);
        cr_assert_eq(m->n_ft, ref_model->n_ft);
        for (size_t k = 0; k < m->n_dofs; k++) {
            cr_assert_str_eq(m->dof_names[k], ref_model->dof_names[k], "q keeps its layout");
            cr_assert_eq(m->dof_lower[k], ref_model->dof_lower[k]);
        }
        expect_tree(m);
        expect_same_inertia(m, path);
        for (int t = 0; t < 4; t++) {
            for (size_t k = 0; k < m->n_dofs; k++)
                q[k] = test_uniform(-2.0, 2.0);
            rb_xform *ra = poses_relative(ref_model, q, ref), *rb_ = poses_relative(m, q, ref);
            expect_same_frames(ref_model, ra, m, rb_, 1e-11);
            free(ra), free(rb_);
        }
        rb_model_free(m);
    }
    free(q);
    rb_model_free(ref_model);
}

Test(model_urdf, rerooting_keeps_relative_poses_ergocub)
{
    test_need_shared("models/ergoCubSN000.urdf");
    const char *bases[] = {"r_sole", "l_hand_index_skin_3", "head", "r_foot_rear"};
    check_rerooting(ERGOCUB, bases, 4, "root_link");
}

Test(model_urdf, rerooting_keeps_relative_poses_small_models)
{
    test_need_shared("models/four_joints_two_ft_three_imu.urdf");
    const char *arm_bases[] = {"tool_frame", "upper_arm", "wrist"};
    check_rerooting(ARM, arm_bases, 3, "base_link");
    const char *four_bases[] = {"link_6", "link_3"};
    check_rerooting(FOUR_JOINTS_IMU, four_bases, 2, "link_2");
}

Test(model_urdf, rerooting_reverses_ft_sensors)
{
    rb_model_opts o = {.base = "tool_frame"};
    rb_model *m = load(ARM, &o), *ref = load(ARM, NULL);
    cr_assert_str_eq(m->bodies[0].name, "tool_frame");
    for (size_t s = 0; s < 2; s++) {
        /* the model's parent side is now the URDF child link's side: the sign flips */
        cr_assert_eq(m->ft[s].sign, -ref->ft[s].sign, "%s", m->ft[s].name);
        cr_assert_str_eq(m->ft[s].name, ref->ft[s].name);
        cr_assert_str_eq(m->frames[m->ft[s].frame].name, ref->frames[ref->ft[s].frame].name);
    }
    long s = rb_model_ft_index(m, "wrist_ft_sensor");
    cr_assert_str_eq(m->bodies[m->ft[s].child_body].name, "wrist", "the body beyond the reversed FT joint");
    cr_assert_str_eq(m->bodies[m->ft[s].parent_body].name, "tool_frame", "the hand merged into the tool base");
    /* a reversed revolute joint: the body frame is the joint frame (at the URDF child link at q = 0) and the
     * link frame sits at the joint's origin^-1 */
    long k = rb_model_dof_index(m, "wrist_roll");
    const rb_body *b = &m->bodies[m->dof_body[k]];
    cr_assert_str_eq(b->name, "forearm");
    expect_close(b->axis, (double[]){0, 0, -1}, 3, 0, "negated axis");
    long f = rb_model_frame_index(m, "forearm");
    cr_assert_eq(m->frames[f].body, m->dof_body[k]);
    expect_close(m->frames[f].X_body.p, (double[]){0, 0, -0.25}, 3, 1e-15, "forearm link in the joint frame");
    rb_model_free(m);
    rb_model_free(ref);
}

Test(model_urdf, floating_base)
{
    test_need_shared("models/ergoCubSN000.urdf");
    rb_model_opts o = {.floating = true, .base = "r_sole"};
    rb_model *m = load(ERGOCUB, &o);
    cr_assert(m->floating);
    cr_assert_eq(m->nq, 7 + 56);
    cr_assert_eq(m->nv, 6 + 56);
    rb_model_free(m);
}
