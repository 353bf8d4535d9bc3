/*
 * roboest dynamics: kinematics, Jacobians, inverse and forward dynamics (RNEA, CRBA, ABA), constrained
 * forward dynamics with rigid contacts, centroidal quantities and the inertial-parameter regressor, for
 * the tree models of roboest/model.h. Algorithms follow R. Featherstone, "Rigid Body Dynamics
 * Algorithms" (Springer 2008); the implementation files cite the tables they implement.
 *
 * Model and workspace. Every function takes the immutable model and a caller-owned workspace (rb_dyn)
 * made once for that model by rb_dyn_alloc. No function below allocates: the per-sample path is free of
 * malloc (rb_malloc and the C library's), LAPACK is called through its _work entry points.
 * A workspace serves one thread at a time; a model may be shared by any number of workspaces.
 *
 * Conventions (roboest/spatial.h): 6D vectors put the linear part first, twist [v; w], wrench [f; tau];
 * inertial parameters pi = [m, h, I] about the body origin in body axes. Units SI.
 *
 * Joint-space vectors (model.h):
 *   q      configuration, dim model->nq: fixed base s (n); floating base [p_WB (3), quat_WB (4, w x y z),
 *          s (n)]. The quaternion need not be normalized (it is normalized when used).
 *   nu     velocity, dim model->nv: fixed base s_dot; floating base [v_B (3), w_B (3), s_dot]: the base
 *          twist is body-fixed (left-trivialized): the velocity of the base origin and the angular
 *          velocity, both in base axes.
 *   nu_dot its time derivative (the base part is d/dt of the body-fixed twist, which is the base's
 *          spatial acceleration in base coordinates: v_B_dot = R_WB^T p_ddot - w_B x v_B).
 *   tau    generalized forces, dim nv: fixed base joint torques/forces; floating base [f_B (3),
 *          tau_B (3), joint torques]: a wrench acting on the base body, in base axes about the base
 *          origin, then the joint torques. For a free-floating robot the base wrench is zero (inverse
 *          dynamics returns a non-zero one when the motion asked for needs an external agent).
 *   Fixed base: the base body frame is the world frame. World gravity is model->gravity; it enters once,
 *   through the base's proper acceleration (a_0 = -g).
 *   In the algorithms, a NULL nu, nu_dot or tau stands for zeros (q and outputs are required); outputs must
 *   not alias inputs.
 *
 * Representations of a frame F's velocity, acceleration, Jacobian and of external wrenches
 * (R = W_R_F, p = W_p_F the frame's world pose, w the angular velocity):
 *   RB_DYN_BODY      body-fixed / left-trivialized: F's axes, about F's origin:
 *                    velocity [R^T p_dot; R^T w].
 *   RB_DYN_MIXED     world axes, about F's origin: velocity [p_dot; w] (classical linear velocity of the
 *                    origin); a wrench: force and moment about F's origin, both in world axes.
 *   RB_DYN_INERTIAL  world axes, about the world origin (spatial / right-trivialized): velocity
 *                    [p_dot - w x p; w]; a wrench: force and moment about the world origin.
 *   The Jacobian J (6 x nv) of a representation maps nu to that velocity; J^T maps a wrench in the same
 *   representation to generalized forces.
 *
 * Errors: RB_EINVAL (NULL arguments, an index out of range, a workspace made for another model, a query
 * before the state it reads was computed), RB_EDIM (a matrix argument of the wrong size, more contact
 * rows than reserved), RB_ENUMERIC (a mass matrix or contact system not positive definite), RB_ENOMEM.
 */
#ifndef ROBOEST_DYNAMICS_H
#define ROBOEST_DYNAMICS_H

#include <stddef.h>

#include "roboest/core.h"
#include "roboest/model.h"
#include "roboest/spatial.h"

typedef struct rb_dyn rb_dyn; /* workspace (opaque) */

typedef enum rb_dyn_rep { RB_DYN_BODY, RB_DYN_MIXED, RB_DYN_INERTIAL } rb_dyn_rep;

/* An external wrench acting ON the robot, applied at frame `frame` (a model frame index), expressed in
 * representation `rep` (see above: BODY = frame axes about its origin, MIXED = world axes about the frame
 * origin, INERTIAL = world axes about the world origin). */
typedef struct rb_ext_wrench {
    int frame;
    rb_dyn_rep rep;
    double w[6]; /* [f; tau], N and N m */
} rb_ext_wrench;

/* A rigid contact at a frame: dim 6 (the frame cannot move: a flat foot on the ground) or 3 (its origin
 * cannot move: a point contact; the frame may rotate). The constraint holds at the acceleration level,
 *     a_c = -kd v_c - kp e,
 * a_c = J_c nu_dot + J_c_dot nu the frame's classical acceleration in the MIXED representation ([p_ddot;
 * w_dot], or p_ddot for dim 3), v_c its MIXED velocity, e the pose error against `ref` in world axes:
 * [p - p_ref; log(R R_ref^T)] (or p - p_ref). kp = kd = 0 (plain rigid contact) leaves drift
 * uncorrected; Baumgarte stabilization uses kd = 2 / T, kp = 1 / T^2 for a time constant T. `ref` is read
 * only when kp != 0. */
typedef struct rb_contact {
    int frame;
    int dim;        /* 3 or 6 */
    double kp, kd;  /* 1/s^2, 1/s; 0: none */
    rb_xform ref;   /* reference world pose of the frame */
} rb_contact;

/* ---- workspace ------------------------------------------------------------------------------------- */

/* A workspace for `model` (caller frees with rb_dyn_free); it holds per-body constants precomputed
 * from the model, and room for contact systems of up to 24 rows (rb_dyn_reserve_contacts for more).
 * The model must outlive the workspace and stay unchanged. */
int rb_dyn_alloc(const rb_model *model, rb_dyn **out, rb_err *err);
void rb_dyn_free(rb_dyn *ws);
/* Room for contact systems of up to `rows` constraint rows (sum of the contacts' dims). Allocates when
 * growing: call it at set-up, not per sample. RB_ENOMEM. */
int rb_dyn_reserve_contacts(rb_dyn *ws, size_t rows, rb_err *err);

/* ---- configurations ---------------------------------------------------------------------------------- */

/* The neutral configuration (dim nq): zero joints, base at the origin with the identity quaternion. */
void rb_dyn_neutral(const rb_model *model, double *q);
/* q_out = q (+) dt nu (dims nq, nv, nq; q_out may alias q): joints s + dt s_dot; the floating base moves
 * with the constant body-fixed twist dt [v_B; w_B] (exact exponential of SE(3): W_X_B exp(dt nu_B)); the
 * quaternion is renormalized. */
void rb_dyn_integrate(const rb_model *model, const double *q, const double *nu, double dt, double *q_out);

/* ---- kinematic state --------------------------------------------------------------------------------
 * rb_dyn_kinematics computes the world pose of every body from q and, if nu is given, the body twists
 * and accelerations (nu_dot NULL: zero). It sets the workspace's kinematic state, which every function
 * in this section reads (no function outside this section changes it, except rb_dyn_fd_contact, which
 * leaves the state at (q, nu, the nu_dot it computes)). Functions needing velocities or accelerations
 * return RB_EINVAL when the state has only poses. */
int rb_dyn_kinematics(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, const double *nu_dot,
                      rb_err *err);

/* World pose W_X_body of a body (borrowed until the next rb_dyn_kinematics); NULL before any state or
 * for an index out of range. */
const rb_xform *rb_dyn_body_pose(const rb_dyn *ws, size_t body);
/* Body-fixed twist of a body (6, body axes; borrowed); NULL without velocities. */
const double *rb_dyn_body_velocity(const rb_dyn *ws, size_t body);
/* Spatial acceleration of a body in body coordinates (the derivative of its body-fixed twist; 6, borrowed;
 * gravity not included); NULL without velocities. */
const double *rb_dyn_body_acceleration(const rb_dyn *ws, size_t body);

/* World pose W_X_F of a frame. */
int rb_dyn_frame_pose(const rb_model *model, const rb_dyn *ws, size_t frame, rb_xform *out, rb_err *err);
/* The frame's velocity J nu in representation rep (see the header comment). A gyroscope reads the angular
 * part of the BODY velocity. */
int rb_dyn_frame_velocity(const rb_model *model, const rb_dyn *ws, size_t frame, rb_dyn_rep rep, double out[6],
                          rb_err *err);
/* d/dt (J nu) = J nu_dot + J_dot nu in representation rep, gravity NOT included:
 *   BODY      [R^T p_ddot - w_F x v_F; R^T w_dot] (v_F, w_F the BODY velocity parts: the derivative of the
 *             body-fixed twist, i.e. the spatial acceleration in F's coordinates);
 *   MIXED     [p_ddot; w_dot] (classical acceleration of the origin, world axes);
 *   INERTIAL  d/dt [p_dot - w x p; w] (spatial acceleration, world coordinates). */
int rb_dyn_frame_acceleration(const rb_model *model, const rb_dyn *ws, size_t frame, rb_dyn_rep rep, double out[6],
                              rb_err *err);
/* J_dot nu in representation rep: the acceleration above with nu_dot = 0, whatever nu_dot the state has. */
int rb_dyn_frame_jdot_nu(const rb_model *model, const rb_dyn *ws, size_t frame, rb_dyn_rep rep, double out[6],
                         rb_err *err);
/* Proper acceleration of the frame (what an accelerometer and a rate gyro's derivative give):
 *   BODY      [R^T (p_ddot - g); R^T w_dot]  (an accelerometer's reading: the classical acceleration of
 *             the frame origin minus gravity, in the frame's axes; at rest under g = (0, 0, -9.81) a
 *             frame aligned with the world reads (0, 0, +9.81));
 *   MIXED     [p_ddot - g; w_dot] in world axes;
 *   INERTIAL  the INERTIAL acceleration plus [-g; 0] (the spatial acceleration the RNEA propagates).
 * Uses the state's nu_dot (zero if none was given). */
int rb_dyn_frame_proper_acceleration(const rb_model *model, const rb_dyn *ws, size_t frame, rb_dyn_rep rep,
                                     double out[6], rb_err *err);
/* Frame Jacobian (J: 6 x nv caller-owned view, any stride) in representation rep. Columns of joints that
 * do not move the frame are zero; floating base: the first 6 columns are the base twist's. */
int rb_dyn_frame_jacobian(const rb_model *model, const rb_dyn *ws, size_t frame, rb_dyn_rep rep, rb_mat *J,
                          rb_err *err);

/* Sum of the bodies' masses (kg). */
double rb_dyn_total_mass(const rb_model *model);
/* Centre of mass in world coordinates. */
int rb_dyn_com(const rb_model *model, const rb_dyn *ws, double com[3], rb_err *err);
/* CoM Jacobian (J: 3 x nv): c_dot = J nu, world axes. com may be NULL. */
int rb_dyn_com_jacobian(const rb_model *model, rb_dyn *ws, rb_mat *J, double com[3], rb_err *err);
/* Centroidal momentum h_G = [l; k_G] (6): linear momentum and angular momentum about the CoM, world axes
 * (needs velocities). com may be NULL. */
int rb_dyn_centroidal_momentum(const rb_model *model, const rb_dyn *ws, double hG[6], double com[3], rb_err *err);
/* Centroidal momentum matrix A_G (6 x nv): h_G = A_G nu. com may be NULL. */
int rb_dyn_centroidal_matrix(const rb_model *model, rb_dyn *ws, rb_mat *A, double com[3], rb_err *err);
/* Kinetic energy 1/2 sum v_i^T I_i v_i (J; needs velocities). */
int rb_dyn_kinetic_energy(const rb_model *model, const rb_dyn *ws, double *T, rb_err *err);

/* ---- inverse dynamics --------------------------------------------------------------------------------
 * These take the state as arguments and leave the kinematic state alone. */

/* RNEA (Featherstone table 5.1): tau (nv) = M(q) nu_dot + h(q, nu) - sum J_k^T w_k, with the external
 * wrenches ext[0..n_ext) (may be NULL when n_ext = 0). Floating base: tau starts with the base wrench
 * (force first, base axes, about the base origin) that the motion needs, then the joint torques. The
 * wrench each joint transmits is kept for rb_dyn_joint_wrench / rb_dyn_ft_wrenches. */
int rb_dyn_rnea(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, const double *nu_dot,
                const rb_ext_wrench *ext, size_t n_ext, double *tau, rb_err *err);
/* Generalized bias forces h(q, nu) = C(q, nu) nu + g(q) (nv): RNEA with nu_dot = 0, no external wrench. */
int rb_dyn_bias_forces(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, double *h, rb_err *err);
/* Generalized gravity forces g(q) (nv): RNEA with nu = nu_dot = 0. */
int rb_dyn_gravity_forces(const rb_model *model, rb_dyn *ws, const double *q, double *g, rb_err *err);
/* After the last rb_dyn_rnea / bias / gravity call (any other dynamics call invalidates it: RB_EINVAL): the
 * wrench body `body` receives from its parent across its joint, i.e. from the whole rest of the tree, in the
 * body's axes about its origin (Featherstone's f_i). For the base (body 0) it is the wrench the world
 * exerts on it: a floating base's part of tau, or what a fixed base's mounting bears. */
int rb_dyn_joint_wrench(const rb_model *model, const rb_dyn *ws, size_t body, double out[6], rb_err *err);
/* After the last rb_dyn_rnea / bias / gravity call: the model-predicted reading of every six-axis FT
 * sensor (out: 6 * model->n_ft, sensor order): the wrench across its fixed joint, with the sensor's sign
 * (parent_to_child: of the parent half on the child half) in its reading frame (moment about that frame's
 * origin). External wrenches passed to rb_dyn_rnea are part of the prediction. */
int rb_dyn_ft_wrenches(const rb_model *model, const rb_dyn *ws, double *out, rb_err *err);

/* Inertial-parameter regressor Y (nv x 10 n_bodies): Y(q, nu, nu_dot) pi = RNEA(q, nu, nu_dot) without
 * external wrenches, pi the per-body parameters [m, h, I] stacked in the model's body order
 * (rb_dyn_inertial_params). */
int rb_dyn_regressor(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, const double *nu_dot,
                     rb_mat *Y, rb_err *err);
/* The model's stacked inertial parameters (10 n_bodies). */
void rb_dyn_inertial_params(const rb_model *model, double *pi);

/* ---- mass matrix and forward dynamics ----------------------------------------------------------------- */

/* CRBA (Featherstone table 6.2): the joint-space inertia matrix M(q) (nv x nv, symmetric, both triangles
 * written; entries of joints on different branches are zero). Floating base: the top-left 6 x 6 block is
 * the whole robot's spatial inertia in base coordinates. */
int rb_dyn_mass_matrix(const rb_model *model, rb_dyn *ws, const double *q, rb_mat *M, rb_err *err);
/* Forward dynamics by the articulated-body algorithm (Featherstone table 7.1; floating base: chapter 9):
 * nu_dot (nv) from tau (nv, see above) and the external wrenches. RB_ENUMERIC if an articulated inertia
 * is singular (massless subtrees on a joint). */
int rb_dyn_aba(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, const double *tau,
               const rb_ext_wrench *ext, size_t n_ext, double *nu_dot, rb_err *err);
/* Forward dynamics by CRBA and a Cholesky solve (LAPACK dpotrf/dpotrs): M nu_dot = tau - h + sum J^T w.
 * RB_ENUMERIC if M is not positive definite. */
int rb_dyn_fd_cholesky(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, const double *tau,
                       const rb_ext_wrench *ext, size_t n_ext, double *nu_dot, rb_err *err);
/* Forward dynamics with rigid contacts (Featherstone chapter 8; the Schur complement of the KKT system
 * [M -J_c^T; J_c 0]): solves
 *     M nu_dot = tau - h + sum J^T w + J_c^T lambda,      J_c nu_dot + J_c_dot nu = -kd v_c - kp e,
 * J_c the stacked MIXED Jacobians of the contacts (rows 0..2 only for dim-3 contacts). lambda (sum of the
 * dims) receives the contact wrenches acting on the robot, stacked in contact order, each in the MIXED
 * representation: [f; tau] (6) in world axes about the contact frame's origin, or f (3). So
 * rb_dyn_rnea(q, nu, nu_dot, ext + {frame, RB_DYN_MIXED, lambda}) returns tau.
 * RB_EDIM if the rows exceed the reserved room; RB_ENUMERIC if M or J_c M^-1 J_c^T is not positive
 * definite (redundant contacts: e.g. two 6D contacts on one body). Leaves the kinematic state at
 * (q, nu, nu_dot). */
int rb_dyn_fd_contact(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, const double *tau,
                      const rb_ext_wrench *ext, size_t n_ext, const rb_contact *contacts, size_t n_contacts,
                      double *nu_dot, double *lambda, rb_err *err);

#endif
