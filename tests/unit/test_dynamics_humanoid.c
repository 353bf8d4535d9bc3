/* datasets/humanoid_lower_body.urdf, the project's humanoid (pelvis, torso on a 3-joint waist, two 6-joint
 * legs, six FT sensors, three IMUs): it loads with the structure its header comment describes, its inertias
 * are physical, it stands at q = 0 with the pelvis at 0.85 m and the soles flat on z = 0, it can stand on
 * both soles or on its four foot plates with joint torques within its effort limits, its FT sensors read the
 * signs their conventions give, and each leg's joint list loads as a reduced model of the same robot.
 * Uses lib/dynamics for the kinematics and the statics. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_support.h"
#include "roboest/dynamics.h"
#include "roboest/model.h"

#define HUMANOID RB_SOURCE "/datasets/humanoid_lower_body.urdf"
#define PELVIS_HEIGHT 0.85 /* documented at the top of the URDF */
#define N_JOINTS 15

static const char *const joint_names[N_JOINTS] = {"torso_pitch",  "torso_roll",    "torso_yaw",   "l_hip_pitch",
                                                  "l_hip_roll",   "l_hip_yaw",     "l_knee",      "l_ankle_pitch",
                                                  "l_ankle_roll", "r_hip_pitch",   "r_hip_roll",  "r_hip_yaw",
                                                  "r_knee",       "r_ankle_pitch", "r_ankle_roll"};

static rb_model *load(const rb_model_opts *opts)
{
    rb_model *m = NULL;
    rb_err err;
    cr_assert_eq(rb_model_load_urdf(HUMANOID, opts, &m, &err), RB_OK, "%s", err.msg);
    cr_assert_not_null(m);
    return m;
}

static rb_model *load_floating(void)
{
    rb_model_opts o = {.floating = true};
    return load(&o);
}

static rb_dyn *workspace(const rb_model *m)
{
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK, "%s", err.msg);
    return ws;
}

static long frame(const rb_model *m, const char *name)
{
    long f = rb_model_frame_index(m, name);
    cr_assert_geq(f, 0, "frame %s", name);
    return f;
}

/* The standing configuration: base at (0, 0, PELVIS_HEIGHT), identity orientation, joints at `s` (NULL: 0). */
static void standing(const rb_model *m, const double *s, double *q)
{
    rb_dyn_neutral(m, q);
    q[2] = PELVIS_HEIGHT;
    for (size_t k = 0; s && k < m->n_dofs; k++)
        q[7 + k] = s[k];
}

static rb_xform pose_of(const rb_model *m, const rb_dyn *ws, const char *name)
{
    rb_xform X;
    rb_err err;
    cr_assert_eq(rb_dyn_frame_pose(m, ws, (size_t)frame(m, name), &X, &err), RB_OK, "%s", err.msg);
    return X;
}

static void expect_close(const double *a, const double *b, size_t n, double tol, const char *what)
{
    for (size_t i = 0; i < n; i++)
        cr_assert(fabs(a[i] - b[i]) <= tol, "%s[%zu]: %.17g vs %.17g", what, i, a[i], b[i]);
}

static const double identity3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

/* ---- structure ------------------------------------------------------------------------------------------- */

Test(dynamics_humanoid, loads_with_the_documented_structure)
{
    rb_model *m = load_floating();
    cr_assert_str_eq(m->name, "humanoid_lower_body");
    cr_assert(m->floating);
    cr_assert_eq(m->n_dofs, N_JOINTS);
    cr_assert_eq(m->nq, 7 + N_JOINTS);
    cr_assert_eq(m->nv, 6 + N_JOINTS);
    cr_assert_eq(m->n_ft, 6);
    cr_assert_eq(m->n_bodies, 1 + N_JOINTS + 6, "movable and FT joints make bodies, the frame links merge");
    cr_assert_eq(m->n_imu, 6, "three IMUs, each an accelerometer and a gyroscope");
    cr_assert_eq(m->n_frames, 28 + 6 + 3, "28 links, 6 FT sensor frames, 3 IMU frames");
    cr_assert_str_eq(m->bodies[0].name, "root_link");

    for (size_t k = 0; k < N_JOINTS; k++) {
        cr_assert_str_eq(m->dof_names[k], joint_names[k]);
        const rb_body *b = &m->bodies[m->dof_body[k]];
        cr_assert_eq(b->type, RB_JOINT_REVOLUTE, "%s", joint_names[k]);
        /* pitch about y, roll about x, yaw about z; the knee is a pitch joint */
        const char *n = joint_names[k];
        double axis[3] = {0, 0, 0};
        axis[strstr(n, "roll") ? 0 : strstr(n, "yaw") ? 2 : 1] = 1;
        expect_close(b->axis, axis, 3, 0, n);
        /* realistic limits: a finite range around 0, finite positive effort and velocity */
        cr_assert(m->dof_lower[k] <= 0 && m->dof_upper[k] > 0 && m->dof_upper[k] - m->dof_lower[k] < 2 * M_PI, "%s", n);
        cr_assert(m->dof_effort[k] >= 30 && m->dof_effort[k] <= 150, "%s effort %g", n, m->dof_effort[k]);
        cr_assert(m->dof_velocity[k] >= 3 && m->dof_velocity[k] <= 10, "%s velocity %g", n, m->dof_velocity[k]);
    }
    /* the knees bend one way only, from straight (the stop) to 2.3 rad */
    for (int side = 0; side < 2; side++) {
        long k = rb_model_dof_index(m, side ? "r_knee" : "l_knee");
        cr_assert_eq(m->dof_lower[k], 0.0);
        cr_assert_eq(m->dof_upper[k], 2.3);
    }
    /* mirrored hip roll limits */
    cr_assert_eq(m->dof_lower[rb_model_dof_index(m, "l_hip_roll")], -m->dof_upper[rb_model_dof_index(m, "r_hip_roll")]);

    /* FT sensors: joint, the two bodies it separates, reading frame and sign */
    static const struct {
        const char *name, *parent, *child, *frame;
        int sign;
    } fts[6] = {
        {"l_leg_ft_sensor", "l_hip_3", "l_upper_leg", "l_leg_ft_sensor", -1},
        {"l_foot_front_ft_sensor", "l_ankle_2", "l_foot_front", "l_foot_front_ft_sensor", 1},
        {"l_foot_rear_ft_sensor", "l_ankle_2", "l_foot_rear", "l_foot_rear", 1},
        {"r_leg_ft_sensor", "r_hip_3", "r_upper_leg", "r_leg_ft_sensor", -1},
        {"r_foot_front_ft_sensor", "r_ankle_2", "r_foot_front", "r_foot_front_ft_sensor", 1},
        {"r_foot_rear_ft_sensor", "r_ankle_2", "r_foot_rear", "r_ankle_2", -1},
    };
    for (size_t s = 0; s < 6; s++) {
        const rb_ft_sensor *ft = &m->ft[s];
        cr_assert_str_eq(ft->name, fts[s].name);
        cr_assert_str_eq(ft->joint_name, fts[s].name, "the sensor is named after its joint");
        cr_assert_str_eq(m->bodies[ft->parent_body].name, fts[s].parent);
        cr_assert_str_eq(m->bodies[ft->child_body].name, fts[s].child);
        cr_assert_eq(m->bodies[ft->child_body].type, RB_JOINT_FIXED);
        cr_assert_eq(m->bodies[ft->child_body].parent, ft->parent_body);
        cr_assert_str_eq(m->frames[ft->frame].name, fts[s].frame, "%s", fts[s].name);
        cr_assert_str_eq(m->frames[ft->sensor_frame].name, fts[s].name);
        cr_assert_eq(m->frames[ft->sensor_frame].kind, RB_FRAME_SENSOR);
        cr_assert_eq(ft->sign, fts[s].sign, "%s", fts[s].name);
    }

    /* IMUs: an accelerometer and a gyroscope each, on the pelvis and the two ankle links */
    static const char *const imus[3][2] = {
        {"waist_imu", "root_link"}, {"l_foot_imu", "l_ankle_2"}, {"r_foot_imu", "r_ankle_2"}};
    for (size_t i = 0; i < 3; i++)
        for (int kind = 0; kind < 2; kind++) {
            const rb_imu_sensor *imu = &m->imu[2 * i + (size_t)kind];
            cr_assert_str_eq(imu->name, imus[i][0]);
            cr_assert_eq(imu->kind, kind ? RB_SENSOR_GYROSCOPE : RB_SENSOR_ACCELEROMETER);
            cr_assert_str_eq(m->frames[imu->frame].name, imus[i][0]);
            cr_assert_str_eq(m->bodies[m->frames[imu->frame].body].name, imus[i][1]);
        }

    /* the massless frames: soles on the ankle links, contact frames on the foot plates */
    static const char *const frames[6][2] = {{"l_sole", "l_ankle_2"},
                                             {"r_sole", "r_ankle_2"},
                                             {"l_foot_front_contact", "l_foot_front"},
                                             {"l_foot_rear_contact", "l_foot_rear"},
                                             {"r_foot_front_contact", "r_foot_front"},
                                             {"r_foot_rear_contact", "r_foot_rear"}};
    for (size_t f = 0; f < 6; f++) {
        const rb_frame *fr = &m->frames[frame(m, frames[f][0])];
        cr_assert_eq(fr->kind, RB_FRAME_LINK);
        cr_assert_str_eq(m->bodies[fr->body].name, frames[f][1]);
    }
    rb_model_free(m);
}

Test(dynamics_humanoid, sub_models_cut_at_the_six_ft_sensors)
{
    rb_model *m = load_floating();
    rb_submodels *sm = NULL;
    rb_err err;
    cr_assert_eq(rb_submodels_build(m, NULL, 0, &sm, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(sm->n_sub, 7);
    /* the upper body and hips; per leg the thigh-to-ankle piece and the two foot plates */
    static const struct {
        const char *base;
        size_t n_bodies, n_dofs, n_ft;
        double mass;
    } want[7] = {{"root_link", 10, 9, 2, 32.9}, {"l_upper_leg", 4, 3, 3, 9.4}, {"l_foot_front", 1, 0, 1, 0.5},
                 {"l_foot_rear", 1, 0, 1, 0.5}, {"r_upper_leg", 4, 3, 3, 9.4}, {"r_foot_front", 1, 0, 1, 0.5},
                 {"r_foot_rear", 1, 0, 1, 0.5}};
    double total = 0;
    for (size_t k = 0; k < 7; k++) {
        const rb_submodel *s = &sm->sub[k];
        cr_assert_str_eq(m->bodies[s->base].name, want[k].base);
        cr_assert_eq(s->n_bodies, want[k].n_bodies, "sub-model %zu", k);
        cr_assert_eq(s->n_dofs, want[k].n_dofs, "sub-model %zu", k);
        cr_assert_eq(s->n_ft, want[k].n_ft, "sub-model %zu", k);
        cr_assert_float_eq(s->mass, want[k].mass, 1e-12, "sub-model %zu", k);
        total += s->mass;
    }
    cr_assert_float_eq(total, m->total_mass, 1e-12);
    /* the IMUs: the waist one with the upper body, each foot one with its leg piece */
    cr_assert_eq(sm->sub[0].n_imu, 2);
    cr_assert_eq(sm->sub[1].n_imu, 2);
    cr_assert_eq(sm->sub[4].n_imu, 2);
    rb_submodels_free(sm);
    rb_model_free(m);
}

/* ---- mass and inertia ---------------------------------------------------------------------------------------- */

/* Rotational inertia about the centre of mass (row-major 3 x 3) from parameters about another origin. */
static void inertia_about_com(const double pi[10], double Ic[9])
{
    double m = pi[0], c[3] = {pi[1] / m, pi[2] / m, pi[3] / m}, cc = rb_v3_dot(c, c);
    double I[9] = {pi[4], pi[5], pi[6], pi[5], pi[7], pi[8], pi[6], pi[8], pi[9]};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            Ic[3 * i + j] = I[3 * i + j] - m * ((i == j ? cc : 0.0) - c[i] * c[j]);
}

/* Positive definite (leading minors) and strictly inside the triangle inequalities of its principal moments,
 * checked on the diagonal of the symmetric matrix (exact for diagonal inertias, which these are). */
static void expect_physical_com_inertia(const double Ic[9], const char *what)
{
    double a = Ic[0], b = Ic[4], c = Ic[8];
    double m2 = Ic[0] * Ic[4] - Ic[1] * Ic[3];
    double m3 = Ic[0] * (Ic[4] * Ic[8] - Ic[5] * Ic[7]) - Ic[1] * (Ic[3] * Ic[8] - Ic[5] * Ic[6]) +
                Ic[2] * (Ic[3] * Ic[7] - Ic[4] * Ic[6]);
    cr_assert(a > 0 && m2 > 0 && m3 > 0, "%s: inertia about the CoM not positive definite", what);
    cr_assert(a + b > c && b + c > a && a + c > b, "%s: triangle inequalities", what);
}

Test(dynamics_humanoid, masses_and_inertias_are_physical)
{
    rb_model *m = load_floating();
    cr_assert(m->total_mass >= 50 && m->total_mass <= 60, "total mass %g kg", m->total_mass);
    cr_assert_float_eq(m->total_mass, 53.7, 1e-12, "the header comment's figure");
    cr_assert_float_eq(rb_dyn_total_mass(m), m->total_mass, 1e-12);
    double sum = 0;
    for (size_t i = 0; i < m->n_bodies; i++) {
        const rb_body *b = &m->bodies[i];
        cr_assert(rb_inertia_is_physical(b->inertia), "body %s", b->name);
        cr_assert(b->inertia[0] >= 0.5, "body %s: %g kg, every body has real mass", b->name, b->inertia[0]);
        double Ic[9];
        inertia_about_com(b->inertia, Ic);
        expect_physical_com_inertia(Ic, b->name);
        sum += b->inertia[0];
    }
    cr_assert_float_eq(sum, m->total_mass, 1e-12);
    /* the figures of a 50-60 kg humanoid */
    static const struct {
        const char *body;
        double lo, hi;
    } mass[] = {{"root_link", 6, 10},    {"chest", 12, 18},       {"l_upper_leg", 4, 6},    {"r_upper_leg", 4, 6},
                {"l_lower_leg", 2.5, 4}, {"r_lower_leg", 2.5, 4}, {"l_foot_front", 0.3, 1}, {"r_foot_rear", 0.3, 1}};
    for (size_t k = 0; k < sizeof mass / sizeof mass[0]; k++) {
        long i = rb_model_body_index(m, mass[k].body);
        cr_assert_geq(i, 0, "%s", mass[k].body);
        double mk = m->bodies[i].inertia[0];
        cr_assert(mk >= mass[k].lo && mk <= mass[k].hi, "%s: %g kg", mass[k].body, mk);
    }

    /* an independent reading of the file (libxml2, no merging): every link with mass is physical, and the
     * whole robot's mass, centre of mass and inertia match roboest's */
    test_urdf u;
    cr_assert(test_urdf_read(HUMANOID, &u));
    cr_assert_eq(u.n_links, 28);
    cr_assert_eq(u.n_joints, 27);
    cr_assert_eq(u.n_movable, N_JOINTS);
    cr_assert_str_eq(u.root, "root_link");
    cr_assert_float_eq(u.total_mass, m->total_mass, 1e-12);
    size_t massive = 0;
    for (size_t l = 0; l < u.n_links; l++) {
        if (u.pi[l][0] == 0)
            continue;
        massive++;
        cr_assert(rb_inertia_is_physical(u.pi[l]), "link %s", u.link_names[l]);
        double Ic[9];
        inertia_about_com(u.pi[l], Ic);
        expect_physical_com_inertia(Ic, u.link_names[l]);
    }
    cr_assert_eq(massive, m->n_bodies, "the massless links are exactly the frame links");
    double q[N_JOINTS] = {0}, a[10], b[10];
    model_composite(m, q, frame(m, "root_link"), a);
    urdf_composite(&u, b);
    for (int k = 0; k < 10; k++)
        cr_assert(fabs(a[k] - b[k]) <= 1e-12 * (1 + fabs(b[k])), "composite[%d]: %.17g vs %.17g", k, a[k], b[k]);
    test_urdf_free(&u);
    rb_model_free(m);
}

/* ---- the standing pose ----------------------------------------------------------------------------------------- */

Test(dynamics_humanoid, stands_flat_at_the_documented_height)
{
    rb_model *m = load_floating();
    rb_dyn *ws = workspace(m);
    rb_err err;
    double q[7 + N_JOINTS], nu[6 + N_JOINTS] = {0};
    standing(m, NULL, q);
    cr_assert_eq(rb_dyn_kinematics(m, ws, q, nu, NULL, &err), RB_OK, "%s", err.msg);

    rb_xform X = pose_of(m, ws, "root_link");
    expect_close(X.p, (double[]){0, 0, PELVIS_HEIGHT}, 3, 0, "pelvis");
    static const char *const on_ground[] = {"l_sole",
                                            "r_sole",
                                            "l_foot_front_contact",
                                            "l_foot_rear_contact",
                                            "r_foot_front_contact",
                                            "r_foot_rear_contact"};
    for (size_t f = 0; f < 6; f++) {
        X = pose_of(m, ws, on_ground[f]);
        cr_assert(fabs(X.p[2]) <= 1e-12, "%s at z = %.17g", on_ground[f], X.p[2]);
        expect_close(X.R, identity3, 9, 1e-15, on_ground[f]);
    }
    rb_xform L = pose_of(m, ws, "l_sole"), R = pose_of(m, ws, "r_sole");
    expect_close(L.p, (double[]){0.01, 0.09, 0}, 3, 1e-12, "l_sole");
    expect_close(R.p, (double[]){0.01, -0.09, 0}, 3, 1e-12, "r_sole");
    /* nothing below the ground: every link frame and every body's centre of mass above z = 0 */
    for (size_t f = 0; f < m->n_frames; f++) {
        cr_assert_eq(rb_dyn_frame_pose(m, ws, f, &X, &err), RB_OK);
        cr_assert_geq(X.p[2], -1e-12, "frame %s", m->frames[f].name);
    }

    /* the centre of mass: between the feet, over the support, at a humanoid's height */
    double com[3];
    cr_assert_eq(rb_dyn_com(m, ws, com, &err), RB_OK, "%s", err.msg);
    cr_assert(com[1] > R.p[1] + 0.05 && com[1] < L.p[1] - 0.05, "CoM y %g between the feet", com[1]);
    cr_assert(com[0] > L.p[0] - 0.1 && com[0] < L.p[0] + 0.1, "CoM x %g over the feet (x -0.11..0.13)", com[0]);
    cr_assert(com[2] > 0.7 && com[2] < 1.1, "CoM height %g", com[2]);

    /* at rest the accelerometers read +g along the world's up: the waist one turned about z (up is its z),
     * the foot ones mounted upside down (up is their -z) */
    static const struct {
        const char *name;
        double up;
    } acc[3] = {{"waist_imu", 1}, {"l_foot_imu", -1}, {"r_foot_imu", -1}};
    for (size_t i = 0; i < 3; i++) {
        double a[6];
        cr_assert_eq(rb_dyn_frame_proper_acceleration(m, ws, (size_t)frame(m, acc[i].name), RB_DYN_BODY, a, &err),
                     RB_OK, "%s", err.msg);
        expect_close(a, (double[]){0, 0, acc[i].up * 9.81, 0, 0, 0}, 6, 1e-12, acc[i].name);
    }
    rb_dyn_free(ws);
    rb_model_free(m);
}

/* ---- statics ------------------------------------------------------------------------------------------------- */

/* World-frame centre of mass of the whole robot at the workspace's state. */
static void com_of(const rb_model *m, const rb_dyn *ws, double com[3])
{
    rb_err err;
    cr_assert_eq(rb_dyn_com(m, ws, com, &err), RB_OK, "%s", err.msg);
}

/* Checks that the contact wrenches `lam` (MIXED, one per contact) hold the robot at rest at q: the RNEA with
 * them leaves no wrench on the free-floating base, the joint torques are within the effort limits, the
 * vertical forces are positive and sum to m g, and, if `rigid`, the forward dynamics with rigid contacts
 * under those torques gives zero acceleration and the same wrenches back (rigid contacts need one 6D contact
 * per rigid foot: the two plates of a foot are rigidly joined, so four 6D plate contacts are redundant).
 * Returns the joint torques in tau (nv; base part zero). */
static void expect_static(const rb_model *m, rb_dyn *ws, const double *q, const rb_contact *ct, size_t nc,
                          const double *lam, bool rigid, double *tau)
{
    rb_err err;
    double mg = m->total_mass * 9.81;
    rb_ext_wrench ext[4];
    for (size_t c = 0; c < nc; c++) {
        ext[c].frame = ct[c].frame;
        ext[c].rep = RB_DYN_MIXED;
        memcpy(ext[c].w, lam + 6 * c, sizeof ext[c].w);
    }
    cr_assert_eq(rb_dyn_rnea(m, ws, q, NULL, NULL, ext, nc, tau, &err), RB_OK, "%s", err.msg);
    for (int k = 0; k < 6; k++)
        cr_assert(fabs(tau[k]) <= 1e-9 * mg, "base wrench[%d] = %g: the contacts do not balance gravity", k, tau[k]);
    for (size_t k = 0; k < m->n_dofs; k++)
        cr_assert(fabs(tau[6 + k]) <= m->dof_effort[k], "%s: %g N m beyond its effort limit", m->dof_names[k],
                  tau[6 + k]);
    double out[24];
    memcpy(out, lam, 6 * nc * sizeof *lam);
    if (rigid) {
        double tau_in[6 + N_JOINTS] = {0}, nu_dot[6 + N_JOINTS];
        memcpy(tau_in + 6, tau + 6, m->n_dofs * sizeof *tau);
        cr_assert_eq(rb_dyn_fd_contact(m, ws, q, NULL, tau_in, NULL, 0, ct, nc, nu_dot, out, &err), RB_OK, "%s",
                     err.msg);
        for (size_t k = 0; k < m->nv; k++)
            cr_assert(fabs(nu_dot[k]) <= 1e-9, "nu_dot[%zu] = %g: the robot does not stay put", k, nu_dot[k]);
        for (size_t k = 0; k < 6 * nc; k++)
            cr_assert(fabs(out[k] - lam[k]) <= 1e-9 * mg, "lambda[%zu]: %.17g vs %.17g", k, out[k], lam[k]);
    }
    double fz = 0;
    for (size_t c = 0; c < nc; c++) {
        cr_assert_gt(out[6 * c + 2], 0, "contact %zu pushes", c);
        fz += out[6 * c + 2];
    }
    cr_assert(fabs(fz - mg) <= 1e-9 * mg, "vertical forces %.17g, m g %.17g", fz, mg);
}

Test(dynamics_humanoid, stands_on_both_soles)
{
    rb_model *m = load_floating();
    rb_dyn *ws = workspace(m);
    rb_err err;
    double q[7 + N_JOINTS], tau[6 + N_JOINTS], com[3], mg = m->total_mass * 9.81;
    /* the standing pose, and a crouch with the feet kept flat under the hips (hip -0.3, knee 0.6, ankle -0.3) */
    double crouch[N_JOINTS] = {0};
    for (int side = 0; side < 2; side++) {
        crouch[side ? 9 : 3] = -0.3;
        crouch[side ? 12 : 6] = 0.6;
        crouch[side ? 13 : 7] = -0.3;
    }
    for (int pose = 0; pose < 2; pose++) {
        standing(m, pose ? crouch : NULL, q);
        if (pose) {
            /* lower the pelvis until the soles touch the ground again */
            cr_assert_eq(rb_dyn_kinematics(m, ws, q, NULL, NULL, &err), RB_OK);
            q[2] -= pose_of(m, ws, "l_sole").p[2];
        }
        cr_assert_eq(rb_dyn_kinematics(m, ws, q, NULL, NULL, &err), RB_OK, "%s", err.msg);
        rb_xform L = pose_of(m, ws, "l_sole"), R = pose_of(m, ws, "r_sole");
        cr_assert(fabs(L.p[2]) < 1e-12 && fabs(R.p[2]) < 1e-12, "pose %d: soles on the ground", pose);
        expect_close(L.R, identity3, 9, 1e-12, "l_sole flat");
        com_of(m, ws, com);

        /* a static distribution of the weight: vertical forces by the lever rule across the feet (y), the
         * moment about y that puts each centre of pressure under the CoM's x */
        double yl = L.p[1], yr = R.p[1], Fl = mg * (com[1] - yr) / (yl - yr), Fr = mg - Fl;
        double lam[12] = {0, 0, Fl, 0, -Fl * (com[0] - L.p[0]), 0, 0, 0, Fr, 0, -Fr * (com[0] - R.p[0]), 0};
        rb_contact ct[2] = {{.frame = (int)frame(m, "l_sole"), .dim = 6}, {.frame = (int)frame(m, "r_sole"), .dim = 6}};
        expect_static(m, ws, q, ct, 2, lam, true, tau);
        /* each centre of pressure inside its sole (x -0.12..0.12, y -0.045..0.045 about the sole frame) */
        for (int c = 0; c < 2; c++) {
            double cop_x = -lam[6 * c + 4] / lam[6 * c + 2], cop_y = lam[6 * c + 3] / lam[6 * c + 2];
            cr_assert(fabs(cop_x) < 0.1 && fabs(cop_y) < 0.04, "pose %d foot %d: CoP (%g, %g)", pose, c, cop_x, cop_y);
        }
        /* the legs carry the weight: a bent knee needs a real torque, a straight one almost none */
        double knee = tau[6 + rb_model_dof_index(m, "l_knee")];
        if (pose)
            cr_assert(fabs(knee) > 5, "crouched knee torque %g N m", knee);
        else
            cr_assert(fabs(knee) < 5, "straight knee torque %g N m", knee);
    }
    rb_dyn_free(ws);
    rb_model_free(m);
}

/* Bodies in the subtree of body `root` (the side of an FT joint away from the base). */
static bool in_subtree(const rb_model *m, int body, int root)
{
    for (int b = body; b >= 0; b = m->bodies[b].parent)
        if (b == root)
            return true;
    return false;
}

Test(dynamics_humanoid, stands_on_the_foot_plates_and_the_ft_sensors_agree)
{
    rb_model *m = load_floating();
    rb_dyn *ws = workspace(m);
    rb_err err;
    double q[7 + N_JOINTS], tau[6 + N_JOINTS], com[3], g = 9.81, mg = m->total_mass * g;
    standing(m, NULL, q);
    cr_assert_eq(rb_dyn_kinematics(m, ws, q, NULL, NULL, &err), RB_OK, "%s", err.msg);
    com_of(m, ws, com);

    /* four plate contacts (as a compliant ground would give them: with rigid contacts the split between the
     * two plates of one foot is undetermined): each foot's load by the lever rule across the feet (y), split
     * between its plates by the lever rule along x; pure vertical forces at the plate centres balance gravity
     * exactly */
    static const char *const plates[4] = {"l_foot_front_contact", "l_foot_rear_contact", "r_foot_front_contact",
                                          "r_foot_rear_contact"};
    rb_contact ct[4];
    rb_xform P[4];
    for (size_t c = 0; c < 4; c++) {
        ct[c] = (rb_contact){.frame = (int)frame(m, plates[c]), .dim = 6};
        P[c] = pose_of(m, ws, plates[c]);
    }
    double yl = P[0].p[1], yr = P[2].p[1], xf = P[0].p[0], xr = P[1].p[0];
    double foot[2] = {mg * (com[1] - yr) / (yl - yr), mg * (yl - com[1]) / (yl - yr)};
    double part[2] = {(com[0] - xr) / (xf - xr), (xf - com[0]) / (xf - xr)};
    double lam[24] = {0}, Fz[4];
    for (size_t c = 0; c < 4; c++)
        lam[6 * c + 2] = Fz[c] = foot[c / 2] * part[c % 2];
    expect_static(m, ws, q, ct, 4, lam, false, tau);

    /* the FT readings at that equilibrium (the RNEA's, with the contact wrenches) */
    rb_ext_wrench ext[4];
    for (size_t c = 0; c < 4; c++)
        ext[c] = (rb_ext_wrench){.frame = ct[c].frame, .rep = RB_DYN_MIXED, .w = {0, 0, Fz[c], 0, 0, 0}};
    cr_assert_eq(rb_dyn_rnea(m, ws, q, NULL, NULL, ext, 4, tau, &err), RB_OK, "%s", err.msg);
    double y[36];
    cr_assert_eq(rb_dyn_ft_wrenches(m, ws, y, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_kinematics(m, ws, q, NULL, NULL, &err), RB_OK, "%s", err.msg);

    for (size_t s = 0; s < m->n_ft; s++) {
        const rb_ft_sensor *ft = &m->ft[s];
        /* by statics, the wrench the parent side exerts on the child side balances everything else acting on
         * the child side: gravity and the contacts there (world axes, about the world origin) */
        double W[6] = {0};
        for (size_t i = 0; i < m->n_bodies; i++) {
            if (!in_subtree(m, (int)i, ft->child_body))
                continue;
            const double *pi = m->bodies[i].inertia;
            const rb_xform *B = rb_dyn_body_pose(ws, i);
            double c_loc[3] = {pi[1] / pi[0], pi[2] / pi[0], pi[3] / pi[0]}, c[3], f[3] = {0, 0, pi[0] * g}, t[3];
            rb_m3_mul_v(B->R, c_loc, c);
            for (int k = 0; k < 3; k++)
                c[k] += B->p[k];
            rb_v3_cross(c, f, t); /* the parent side holds the body's weight up */
            for (int k = 0; k < 3; k++)
                W[k] += f[k], W[3 + k] += t[k];
        }
        double load = 0;
        for (size_t c = 0; c < 4; c++) {
            if (!in_subtree(m, m->frames[ct[c].frame].body, ft->child_body))
                continue;
            double f[3] = {0, 0, -Fz[c]}, t[3];
            rb_v3_cross(P[c].p, f, t);
            for (int k = 0; k < 3; k++)
                W[k] += f[k], W[3 + k] += t[k];
            load += Fz[c];
        }
        /* into the reading frame, with the sensor's sign */
        rb_xform F = {0};
        cr_assert_eq(rb_dyn_frame_pose(m, ws, (size_t)ft->frame, &F, &err), RB_OK);
        double expect[6];
        rb_xform_force_inv(&F, W, expect);
        for (int k = 0; k < 6; k++)
            expect[k] *= ft->sign;
        for (int k = 0; k < 6; k++)
            cr_assert(fabs(y[6 * s + k] - expect[k]) <= 1e-9 * mg, "%s[%d]: %.17g vs %.17g", ft->name, k, y[6 * s + k],
                      expect[k]);
        /* in plain words: every sensor carries its load, pressed together along the vertical. The readings'
         * vertical components by convention: the leg sensors (z down, child_to_parent: the thigh pushes the hip
         * up) and the front / left rear ones (z up, parent_to_child: the ankle pushes the plate down) read
         * negative; the right rear one (the ankle's frame, child_to_parent: the plate pushes the ankle up)
         * positive */
        cr_assert_gt(load, 0, "%s carries a contact", ft->name);
        double fz = y[6 * s + 2], want = strcmp(ft->name, "r_foot_rear_ft_sensor") == 0 ? 1 : -1;
        cr_assert(want * fz > 0, "%s: f_z = %g", ft->name, fz);
        double Rz[3] = {F.R[6], F.R[7], F.R[8]}; /* world z in the reading frame's axes */
        double fvert = ft->sign * (y[6 * s] * Rz[0] + y[6 * s + 1] * Rz[1] + y[6 * s + 2] * Rz[2]);
        double below = 0;
        for (size_t i = 0; i < m->n_bodies; i++)
            below += in_subtree(m, (int)i, ft->child_body) ? m->bodies[i].inertia[0] : 0;
        cr_assert(fabs(fvert - (below * g - load)) <= 1e-9 * mg, "%s: vertical %g vs %g", ft->name, fvert,
                  below * g - load);
    }
    rb_dyn_free(ws);
    rb_model_free(m);
}

/* ---- reduced models ------------------------------------------------------------------------------------------ */

Test(dynamics_humanoid, each_leg_loads_as_a_reduced_model)
{
    rb_model *full = load_floating();
    rb_dyn *wf = workspace(full);
    rb_err err;
    for (int side = 0; side < 2; side++) {
        const char *const *leg = joint_names + (side ? 9 : 3);
        const char *p = side ? "r" : "l", *o = side ? "l" : "r";
        for (int floating = 0; floating < 2; floating++) {
            rb_model_opts opts = {.joints = leg, .n_joints = 6, .base = "root_link", .floating = floating};
            rb_model *m = load(&opts);
            cr_assert_eq(m->n_dofs, 6);
            cr_assert_eq(m->nv, floating ? 12u : 6u);
            for (size_t k = 0; k < 6; k++)
                cr_assert_str_eq(m->dof_names[k], leg[k]);
            cr_assert_float_eq(m->total_mass, full->total_mass, 1e-12);
            /* every FT joint survives the reduction: the six sensors, their bodies kept apart */
            cr_assert_eq(m->n_ft, 6);
            cr_assert_eq(m->n_bodies, 1 + 6 + 6);
            cr_assert_eq(m->n_imu, 6);
            char name[64];
            snprintf(name, sizeof name, "%s_upper_leg", o);
            long other = rb_model_body_index(m, name);
            cr_assert_geq(other, 0, "the other leg's thigh stays a body (below its FT sensor)");
            snprintf(name, sizeof name, "%s_lower_leg", o);
            cr_assert_eq(m->frames[frame(m, name)].body, other, "and carries the locked shank");
            snprintf(name, sizeof name, "%s_hip_3", o);
            cr_assert_eq(m->frames[frame(m, name)].body, 0, "the other hip merges into the pelvis");
            cr_assert_eq(m->frames[frame(m, "chest")].body, 0, "the torso merges into the pelvis");

            /* the same robot: at leg angles s (the rest locked at zero) the sole and the CoM are where the
             * full model puts them */
            const double s[6] = {-0.4, side ? -0.1 : 0.1, 0.2, 0.8, -0.3, side ? 0.05 : -0.05};
            double qf[7 + N_JOINTS], sf[N_JOINTS] = {0}, qr[7 + 6];
            for (size_t k = 0; k < 6; k++)
                sf[(side ? 9 : 3) + k] = s[k];
            standing(full, sf, qf);
            rb_dyn *wr = workspace(m);
            if (floating)
                standing(m, s, qr);
            else
                memcpy(qr, s, sizeof s);
            cr_assert_eq(rb_dyn_kinematics(full, wf, qf, NULL, NULL, &err), RB_OK, "%s", err.msg);
            cr_assert_eq(rb_dyn_kinematics(m, wr, qr, NULL, NULL, &err), RB_OK, "%s", err.msg);
            snprintf(name, sizeof name, "%s_sole", p);
            rb_xform A = pose_of(full, wf, name), B = pose_of(m, wr, name);
            if (!floating)
                B.p[2] += PELVIS_HEIGHT; /* fixed base: the pelvis is the world origin */
            expect_close(A.R, B.R, 9, 1e-12, name);
            expect_close(A.p, B.p, 3, 1e-12, name);
            double ca[3], cb[3];
            com_of(full, wf, ca);
            com_of(m, wr, cb);
            if (!floating)
                cb[2] += PELVIS_HEIGHT;
            expect_close(ca, cb, 3, 1e-12, "centre of mass");

            /* the leg's sub-models, cut at its three sensors: the rest of the robot, the leg from the thigh to
             * the ankle, and the two foot plates */
            char fts[3][64];
            const char *ftn[3] = {fts[0], fts[1], fts[2]};
            snprintf(fts[0], sizeof fts[0], "%s_leg_ft_sensor", p);
            snprintf(fts[1], sizeof fts[1], "%s_foot_front_ft_sensor", p);
            snprintf(fts[2], sizeof fts[2], "%s_foot_rear_ft_sensor", p);
            rb_submodels *sm = NULL;
            cr_assert_eq(rb_submodels_build(m, ftn, 3, &sm, &err), RB_OK, "%s", err.msg);
            cr_assert_eq(sm->n_sub, 4);
            cr_assert_eq(sm->sub[0].n_dofs, 3, "hip pitch, roll, yaw");
            cr_assert_eq(sm->sub[1].n_dofs, 3, "knee, ankle pitch, roll");
            cr_assert_float_eq(sm->sub[1].mass, 9.4, 1e-12);
            cr_assert_float_eq(sm->sub[0].mass, full->total_mass - 9.4 - 1.0, 1e-12);
            rb_submodels_free(sm);
            rb_dyn_free(wr);
            rb_model_free(m);
        }
    }
    rb_dyn_free(wf);
    rb_model_free(full);
}
