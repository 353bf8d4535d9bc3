/*
 * roboest dynamics: kinematics, Jacobians, inverse and forward dynamics (RNEA, CRBA, ABA), constrained
 * forward dynamics with rigid contacts, centroidal quantities and the inertial-parameter regressor, for
 * the tree models of roboest/model.h. Algorithms follow R. Featherstone, "Rigid Body Dynamics
 * Algorithms" (Springer 2008); the implementation files cite the tables they implement.
 *
 * Model and workspace. Every function takes the immutable model and a caller-owned workspace (rb_dyn)
 * made once for that model by rb_dyn_alloc. No function below allocates (except the set-up functions that say
 * so and the batch rb_dyn_eval): the per-sample path is free of malloc (rb_malloc and the C library's), LAPACK
 * is called through its _work entry points.
 * A workspace serves one thread at a time; a model may be shared by any number of workspaces. The workspace
 * keeps the joint transforms of the last joint positions it saw (one set for the kinematic state, one for the
 * dynamics passes) and reuses them when the next call has the same joint positions (bit for bit): the results
 * are those of a fresh workspace, only the sines and cosines are not recomputed. The
 * Cholesky solves call LAPACK: run OpenBLAS single-threaded (openblas_set_num_threads(1), as the roboest
 * command does), since its threaded level-3 drivers allocate per call and are slower at these sizes.
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
#include "roboest/io.h"
#include "roboest/model.h"
#include "roboest/spatial.h"

RB_API_BEGIN

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
    int dim;       /* 3 or 6 */
    double kp, kd; /* 1/s^2, 1/s; 0: none */
    rb_xform ref;  /* reference world pose of the frame */
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

/* Override body `body`'s inertial parameters (pi: [m, h, I] about the body origin, body axes) in this
 * workspace only, for a plant whose inertia changes over time (a payload; the simulator's payload schedule).
 * The model is not changed: every algorithm that takes this workspace (kinematics, RNEA, CRBA, ABA, forward
 * dynamics, kinetic energy, FT wrenches, the CoM, its Jacobian and the centroidal momentum, their total mass
 * included) then uses the new parameters, while functions reading the model's inertias keep the model's values
 * (rb_dyn_total_mass, rb_dyn_inertial_params); the kinematic state is invalidated. No allocation. RB_EINVAL: NULL arguments, a
 * workspace made for another model, body out of range, or pi not physically valid (rb_inertia_is_physical);
 * a massless pi on a body whose subtree then has no mass makes later forward dynamics fail (RB_ENUMERIC). */
int rb_dyn_set_body_inertia(const rb_model *model, rb_dyn *ws, size_t body, const double pi[10], rb_err *err);

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
/* Its time derivative along the motion nu (nv): M_dot = sum_j dM/ds_j s_dot_j (nv x nv, symmetric, both triangles
 * written), analytic (the CRBA's composite-inertia form differentiated, lib/dynamics/mass_dot.c). M depends only on the
 * joint positions, so only nu's joint part matters (a floating base's twist cancels out); seed 003's filtered dynamics
 * (eq. 4.31) needs it. No allocation. Errors as rb_dyn_mass_matrix (RB_EINVAL also for a NULL nu). */
int rb_dyn_mass_matrix_dot(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, rb_mat *Mdot,
                           rb_err *err);
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

/* ---- sub-models at the FT sensors ---------------------------------------------------------------------
 * Cutting the tree at the fixed joints of k six-axis FT sensors leaves k + 1 pieces, the sub-models of the
 * public UKF joint-torque estimator. Each is a tree of its own whose base is its body nearest the model base
 * (the tree child of the cut FT joint); sub-model 0 holds the model base, the others follow in the order of
 * their base bodies. Every cut FT joint lies on the boundary of exactly two sub-models, and its measured
 * wrench y (the reading, in the sensor's convention) acts on both with opposite signs: sign +1 in the
 * sub-model holding the side the reading is applied to (model->ft[s].child_body's side when
 * model->ft[s].sign = +1, i.e. parent_to_child; the parent_body's side for child_to_parent), -1 in the other.
 * So y enters sub-model k's Newton-Euler as the external wrench sign * y at the sensor's reading frame.
 *
 * IMUs: an accelerometer or gyroscope belongs to the sub-model of its frame's body. One whose frame sits on
 * the sensor frame of a cut FT (the same frame, or a frame at the same pose within 1e-9 m / 1e-9) belongs
 * to both neighbouring sub-models: each lists it, attached to a body on its own side (the owning side: the
 * frame's body and pose; the other side: the FT joint's body there, at the pose through the fixed joint),
 * with `shared` set in both entries.
 *
 * A set is built from a const model, owns its arrays (one block) and is immutable; it may be shared
 * between threads and estimators. The model must outlive it and stay unchanged. All indices are model
 * indices (bodies, dofs = joint-list positions, frames, model->ft, model->imu). */

typedef struct rb_submodel_ft {
    int ft;        /* index in model->ft */
    int set_index; /* its position in the set's FT list (the order of the readings) */
    int sign;      /* +1: the measured wrench acts on this sub-model; -1: its opposite does */
    int body;      /* the sensor joint's body on this sub-model's side */
} rb_submodel_ft;

typedef struct rb_submodel_imu {
    int imu;         /* index in model->imu */
    int body;        /* a body of this sub-model the sensor frame is rigidly attached to */
    rb_xform X_body; /* the sensor frame's pose in that body */
    bool shared;     /* on a cut FT's sensor frame: listed by both neighbouring sub-models */
} rb_submodel_imu;

typedef struct rb_submodel {
    int base;    /* its base body */
    int parent;  /* the sub-model across its base's FT joint; -1 for sub-model 0 */
    int base_ft; /* position in the set's FT list of the FT on its base's joint; -1 for sub-model 0 */
    size_t n_bodies;
    int *bodies; /* topological order, bodies[0] == base */
    size_t n_dofs;
    int *dofs; /* increasing (joint-list order) */
    size_t n_frames;
    int *frames; /* the frames attached to its bodies */
    size_t n_ft;
    rb_submodel_ft *ft; /* the cut FTs on its boundary, in the set's FT order */
    size_t n_imu;
    rb_submodel_imu *imu; /* in model->imu order */
    double mass;          /* kg */
} rb_submodel;

typedef struct rb_submodels {
    size_t n_sub; /* n_ft + 1 */
    rb_submodel *sub;
    size_t n_ft;
    int *ft;       /* the model FT sensors cut at, in the order given: FT readings follow it */
    int *body_sub; /* sub-model of every model body (model->n_bodies) */
    size_t n_bodies, n_dofs, n_frames, n_model_ft, n_imu; /* the model's sizes (consistency checks) */
    void *block;                                          /* the storage of every array above (internal) */
} rb_submodels;

/* Split `model` at the FT sensors named in ft_names[0..n_names) (NULL: every FT sensor, model order; a
 * non-NULL list of length 0 cuts nothing: one sub-model). FT joints of sensors not listed stay inside their
 * sub-model. Caller frees *out with rb_submodels_free (*out is NULL on failure). RB_ENOTFOUND: no FT sensor
 * of that name; RB_EINVAL: NULL arguments, a sensor listed twice, two listed sensors on one joint, a sensor
 * whose bodies are not joined by a fixed joint; RB_ENOMEM. */
int rb_submodels_build(const rb_model *model, const char *const *ft_names, size_t n_names, rb_submodels **out,
                       rb_err *err);
void rb_submodels_free(rb_submodels *sm);

/* ---- FT-sensor-based joint torque estimation --------------------------------------------------------------
 * The "RNEA-based estimation using FT sensors" baseline of the joint-torque paper (seed 000): per sample,
 * from the joint state, one IMU and the FT readings, the unknown contact wrenches of each sub-model by its
 * Newton-Euler equations, then the joint torques by the RNEA inside each sub-model.
 *
 * Inputs (rb_ft_est_input): s, s_dot, s_ddot (n = model->n_dofs each, joint-list order; rad, rad/s, rad/s^2,
 * or m, m/s, m/s^2 for prismatic joints); the proper linear acceleration `acc` (m/s^2: classical acceleration
 * of the origin minus gravity, what an accelerometer reads) and the angular velocity `gyro` (rad/s) of one
 * frame S chosen at rb_ft_est_alloc (default the base body frame), both in S's axes; S's angular
 * acceleration `alpha` (rad/s^2, S's axes: R^T w_dot) if the caller has it, else NULL for zero (paper eq. 7);
 * the readings of the set's FT sensors (6 each, set order, each as the sensor reports it: model.h).
 *
 * 1. Kinematics from the IMU, an exact rigid-body transfer. The base's linear velocity does not enter
 *    (adding a constant velocity to every point changes no force) and is taken as zero; its angular
 *    velocity w_B, angular acceleration alpha_B and proper linear acceleration a_B are the ones that give S
 *    the measured motion, given the joint motion between the base and S:
 *        w_B     = R_BS (w_S - w_rel),   alpha_B = R_BS (alpha_S - alpha_rel),
 *        a_B     = R_BS (a_S - w_S x v_S - a_rel) + p_BS x alpha_B,
 *    (R_BS, p_BS) = S's pose in the base; w_S, v_S S's angular and linear velocity; w_rel S's angular
 *    velocity were the base still; alpha_rel, a_rel the angular and linear parts of S's spatial (body-fixed)
 *    acceleration were the base's accelerations zero (base twist [0; w_B]); all in S's axes. For S on the
 *    base body (w_rel = alpha_rel = 0, a_rel = 0, w_S x v_S = R_SB (w_B x (w_B x p_BS))) this is
 *        a_B = R_BS a_S - alpha_B x p_BS - w_B x (w_B x p_BS),
 *    the public estimator's transfer (eq. 7) when alpha = 0. Gravity enters only through `acc` (as a proper
 *    acceleration, once); model->gravity and the world pose are not used.
 * 2. Forward pass (Featherstone table 5.1) from the base state: body twists v_i, proper accelerations a_i
 *    and f_i = I_i a_i + v_i x* I_i v_i.
 * 3. Contacts, per sub-model k (paper eq. 1 for the sub-model as a free system):
 *        sum_{i in k} iX_b^* f_i = sum_{FT on k} sign X^* y + sum_{contacts c on k} X_c^* w_c   (6 equations)
 *    in the sub-model base's coordinates. No contact on k: nothing to estimate (the left-over is the
 *    residual, rb_ft_est_residual); one contact: exact (6 equations, 6 unknowns); several: the
 *    minimum-norm solution, minimizing sum_c |f_c|^2 + |tau_c|^2 with each moment about its frame's origin
 *    (so the split depends on where the contact frames are, not on their orientation). A sub-model with at
 *    least one contact has a zero residual.
 * 4. Torques: the RNEA backward pass inside each sub-model with the measured FT wrenches and the estimated
 *    contact wrenches as external wrenches: tau_j = S_j^T (wrench across joint j), so a joint's torque uses
 *    the measured FT wrenches of the sub-model boundary beyond it, not the model beyond them.
 *
 * Contact wrenches (outputs, and rb_ft_est_predict_ft's optional inputs): 6 per contact, in the order
 * given at alloc, each the wrench the environment exerts ON the robot at the contact frame in RB_DYN_BODY
 * representation: [f; tau] in the frame's axes, moment about its origin (N, N m). (The world orientation is
 * unknown to the estimator, so no world-axes representation is offered; rb_dyn_fd_contact's MIXED lambda
 * maps to it by R^T on both parts.)
 *
 * The model's floating flag is not used: every sub-model is a free system under its FT and contact
 * wrenches. A fixed base mounted on a pole bears an unknown wrench there: list a contact at the base link
 * (as the public configurations do) and pass the base IMU (or acc = -R^T g, gyro = 0 for a base known to be
 * still).
 *
 * rb_ft_est_alloc makes a workspace (caller frees with rb_ft_est_free); it borrows the model and the
 * sub-model set, which must outlive it. No per-sample function allocates. One thread at a time. */

typedef struct rb_ft_est rb_ft_est; /* workspace (opaque) */

typedef struct rb_ft_est_input {
    const double *s, *s_dot, *s_ddot; /* joint positions, velocities, accelerations (n each) */
    size_t n;                         /* their length: model->n_dofs */
    double acc[3];                    /* proper linear acceleration of S's origin, S's axes, m/s^2 */
    double gyro[3];                   /* angular velocity of S, S's axes, rad/s */
    const double *alpha;              /* angular acceleration of S (3, S's axes, rad/s^2), or NULL: zero */
    const double *ft;                 /* FT readings, 6 per sensor of the set, set order (N, N m) */
    size_t n_ft_values;               /* their length: 6 * sm->n_ft */
} rb_ft_est_input;

/* Estimator for `model` and the sub-model set `sm` (built from the same model). imu_frame: the frame S the
 * IMU readings belong to (NULL: the base body frame); contacts[0..n_contacts): frames where unknown contact
 * wrenches act (any number per sub-model, none allowed). RB_ENOTFOUND: no frame of that name ("contact frame
 * r_foot_frnt: no such frame in model ergoCub"); RB_EINVAL: NULL arguments, a contact listed twice, a set
 * built for another model; RB_ENOMEM. */
int rb_ft_est_alloc(const rb_model *model, const rb_submodels *sm, const char *imu_frame, const char *const *contacts,
                    size_t n_contacts, rb_ft_est **out, rb_err *err);
void rb_ft_est_free(rb_ft_est *est);
size_t rb_ft_est_n_contacts(const rb_ft_est *est);

/* Joint torques tau (n_tau = model->n_dofs, joint-list order, N m or N) and contact wrenches (6 per contact,
 * n_wrench_values = 6 * n_contacts, see above; may be NULL with 0) from one sample. RB_EDIM: a length that
 * does not match; RB_EINVAL: NULL arguments or a workspace made for another model; RB_ENUMERIC: a non-finite
 * input (named) or a singular contact system. */
int rb_ft_est_torques(const rb_model *model, rb_ft_est *est, const rb_ft_est_input *in, double *tau, size_t n_tau,
                      double *wrenches, size_t n_wrench_values, rb_err *err);

/* The FT readings the model predicts (ft_out: 6 per sensor of the set, set order, each in its sensor's
 * convention) for the motion in `in` (its FT readings are not read; zero velocities and accelerations with
 * acc = the gravity reading for a robot at rest) and the contact wrenches `wrenches_in` (6 per contact,
 * BODY as above) or, if wrenches_in is NULL, the contact wrenches that balance the whole robot's
 * Newton-Euler equations (no FT cut: exact for one contact, minimum-norm for several), returned in
 * wrenches_out (may be NULL with 0). For the start-up offset calibration of the public estimator:
 * o = f_measured(0) - f_predicted(0). Errors as rb_ft_est_torques. */
int rb_ft_est_predict_ft(const rb_model *model, rb_ft_est *est, const rb_ft_est_input *in, const double *wrenches_in,
                         double *ft_out, size_t n_ft_values, double *wrenches_out, size_t n_wrench_values, rb_err *err);

/* After rb_ft_est_torques: sub-model `sub`'s Newton-Euler residual, the wrench (base coordinates, about its
 * base origin) its bodies' motion needs beyond the FT and estimated contact wrenches: zero for a sub-model
 * with a contact, a consistency check of model, IMU and FT readings for one without. RB_EINVAL before any
 * estimate or for sub out of range. */
int rb_ft_est_residual(const rb_ft_est *est, size_t sub, double out[6], rb_err *err);

/* ---- forward dynamics of the sub-models: the joint-torque UKF's process model -------------------------------
 * The "cut system" of a sub-model set: the tree split at the set's FT joints, where the wrench across each cut
 * joint is not a constraint force but an input (the FT reading y, in the sensor's convention, model.h), and
 * unknown contact wrenches w (6 per contact, BODY at the contact frame: frame axes, moment about its origin,
 * acting ON the robot) are inputs too. The base (body 0) moves with the proper acceleration a_B (6: the
 * classical acceleration of its origin minus gravity, then its angular acceleration, base axes) and the angular
 * velocity w_B (base axes); its linear velocity is taken as zero (adding one velocity to every point changes no
 * force). Fixed base: the base frame is the world frame, a_B = [-g; 0], w_B = 0. Every joint moves with s,
 * s_dot, s_ddot (n, joint-list order).
 *
 * The joint rows of the Newton-Euler equations of all sub-models together read (seed 000 eq. 6 for every
 * sub-model, each sub-model's base acceleration given by the joints above it):
 *     K(s) s_ddot + K_b(s) a_B + h(s, s_dot, w_B) = tau + G_ft(s) y + G_c(s) w                     (n rows)
 * with tau the joint torques (tau_m - tau_F in the paper) and, IC_i the composite inertia of body i's subtree
 * WITHIN its sub-model, S_i its joint's motion subspace, iX_j the motion transform from body j to body i:
 *   K    (n x n)  K_ij = S_i^T IC_i iX_j S_j for every joint j on the path from the base to i (whatever its
 *                 sub-model), and K_ji = K_ij when j and i are in the same sub-model; 0 otherwise. With the dofs
 *                 grouped by sub-model (set order: a sub-model comes after the one above it) K is block lower
 *                 triangular; its diagonal blocks are the sub-models' joint-space inertia matrices M_ss
 *                 (symmetric positive definite), the blocks below them M_sb times the transform carrying the
 *                 joints' accelerations to the sub-model's base. Solving by sub-models, parents first (forward
 *                 substitution) is exactly the per-sub-model forward dynamics of the public estimator with each
 *                 sub-model's base acceleration computed from the accelerations above it.
 *   K_b  (n x 6)  row i: S_i^T IC_i iX_0, the coupling to the base's proper acceleration: gravity enters here,
 *                 once, as the base's upward acceleration.
 *   h    (n)      velocity-product forces (Coriolis and centrifugal): the left side at s_ddot = 0, a_B = 0.
 *   G_ft (n x 6 n_ft)  column 6k + m: the generalized forces of a unit reading m of the set's FT k. The reading
 *                 stands for a wrench on one side of the cut joint and its opposite on the other; the side holding
 *                 the tree's parent body takes it through the Jacobian of the joints between it and its
 *                 sub-model's base; on the tree child's side it acts on that sub-model's base, which moves no
 *                 joint of that sub-model (it only fixes that base's own equation, not part of these rows).
 *   G_c  (n x 6 n_c)   column 6c + m: J^T of contact c's frame (BODY) restricted to the joints of its sub-model
 *                 between the frame's body and the sub-model's base; a contact on a sub-model without joints
 *                 moves nothing.
 * Frames (accelerometers, gyroscopes): with J_F (6 x (6 + n)) the frame's BODY Jacobian with respect to
 * [base twist (6); s_dot] (rb_cut_dyn_frame_jacobian), its BODY velocity is J_F [0; w_B; s_dot] and its
 * proper acceleration (what rb_dyn_frame_proper_acceleration gives in RB_DYN_BODY: the linear part is what an
 * accelerometer reads, gravity included once through a_B) is J_F [a_B; s_ddot] + b_F(s, s_dot, w_B), b_F the
 * velocity-product term (rb_cut_dyn_frame_bias): the spatial velocity-product acceleration plus w_F x v_F for
 * the classical linear part.
 *
 * Use: rb_cut_dyn_configure once per configuration s (O(n depth)); then any number of rb_cut_dyn_bias calls for
 * velocities (O(bodies) each), solves after rb_cut_dyn_factor, frame Jacobians. Nothing below allocates except
 * rb_cut_dyn_alloc. One thread at a time. Errors: RB_EINVAL (NULL arguments, a workspace made for another
 * model, a call before the configuration / factorization / velocities it needs, an index out of range), RB_EDIM
 * (a length that does not match), RB_ENUMERIC (non-finite inputs, a diagonal block not positive definite). */

typedef struct rb_cut_dyn rb_cut_dyn; /* workspace (opaque) */

/* Workspace for `model` and the sub-model set `sm` (built from it; both borrowed, must outlive it), with the
 * unknown contact wrenches at the frames contacts[0..n_contacts). RB_ENOTFOUND: no such frame ("contact frame
 * X: no such frame in model M"); RB_EINVAL: a contact listed twice, NULL arguments, a set made for another
 * model; RB_ENOMEM. Free with rb_cut_dyn_free. */
int rb_cut_dyn_alloc(const rb_model *model, const rb_submodels *sm, const char *const *contacts, size_t n_contacts,
                     rb_cut_dyn **out, rb_err *err);
void rb_cut_dyn_free(rb_cut_dyn *cd);

/* The configuration s (n = model->n_dofs values): body poses, K, K_b, G_ft, G_c (invalidates the factorization
 * and the velocities). */
int rb_cut_dyn_configure(const rb_model *model, rb_cut_dyn *cd, const double *s, size_t n, rb_err *err);

/* Borrowed row-major views of the matrices at the configuration (valid until the next configure): K n x n,
 * Kb n x 6, Gft n x 6 n_ft, Gc n x 6 n_c. NULL before any configuration. */
typedef struct rb_cut_dyn_mats {
    size_t n, n_ft, n_c;
    const double *K, *Kb, *Gft, *Gc;
} rb_cut_dyn_mats;
rb_cut_dyn_mats rb_cut_dyn_get_mats(const rb_cut_dyn *cd);

/* Factor K + diag(d) by sub-model blocks (d: n values, e.g. the rotors' inertias reflected through the gears
 * R^2 J_m, which the joint equations gain when tau is the motor side's torque; NULL: none). RB_ENUMERIC when
 * a diagonal block is not positive definite, naming the sub-model and its joint. */
int rb_cut_dyn_factor(rb_cut_dyn *cd, const double *d, rb_err *err);
/* X := (K + diag(d))^-1 X in place, X n x cols row-major with row stride ld >= cols (block forward
 * substitution with the Cholesky factors of the diagonal blocks; no inverse is formed). Needs rb_cut_dyn_factor
 * since the last configure (RB_EINVAL otherwise). */
int rb_cut_dyn_solve(const rb_cut_dyn *cd, double *X, size_t cols, size_t ld, rb_err *err);

/* The velocity-product forces h (n) at the configuration for joint velocities s_dot (n) and base angular
 * velocity w_B (3, NULL: zero); keeps the bodies' velocities and velocity-product accelerations for
 * rb_cut_dyn_frame_bias until the next call. */
int rb_cut_dyn_bias(const rb_model *model, rb_cut_dyn *cd, const double *s_dot, size_t n, const double *w_B, double *h,
                    rb_err *err);
/* Frame `frame`'s BODY Jacobian J (6 x (6 + n) row-major, see above) at the configuration. */
int rb_cut_dyn_frame_jacobian(const rb_model *model, const rb_cut_dyn *cd, size_t frame, double *J, rb_err *err);
/* After rb_cut_dyn_bias: the frame's velocity-product acceleration b_F (6, BODY, see above). */
int rb_cut_dyn_frame_bias(const rb_model *model, const rb_cut_dyn *cd, size_t frame, double out[6], rb_err *err);
/* Batches of velocities (the sigma points of a filter, at one configuration): rb_cut_dyn_reserve_batch once (it
 * allocates; RB_ENOMEM) for up to `cols` columns; then rb_cut_dyn_bias_batch gives rb_cut_dyn_bias's h for cols
 * velocities at once (column j: s_dot at S_dot + j lds, w_B at W_B + j ldw or none when W_B is NULL; h into
 * H + j ldh), bit for bit the values of one rb_cut_dyn_bias call per column, vectorized across the columns, a fixed
 * base's bodies that no joint moves skipped. rb_cut_dyn_frame_bias_batch after it: the linear part (3) of
 * rb_cut_dyn_frame_bias's b_F for each column (out + j ldo). Neither touches rb_cut_dyn_bias's kept velocities. */
int rb_cut_dyn_reserve_batch(rb_cut_dyn *cd, size_t cols, rb_err *err);
int rb_cut_dyn_bias_batch(const rb_model *model, rb_cut_dyn *cd, const double *S_dot, size_t lds, const double *W_B,
                          size_t ldw, size_t cols, double *H, size_t ldh, rb_err *err);
int rb_cut_dyn_frame_bias_batch(const rb_model *model, const rb_cut_dyn *cd, size_t frame, double *out, size_t ldo,
                                rb_err *err);

/* ---- batch evaluation over a set of states (roboest model eval) --------------------------------------------
 * rb_dyn_eval evaluates one quantity (an op) for every row (state) of a set of named arrays, as rb_arrays_read
 * gives a states file (roboest/io.h), and returns the results as named arrays, one row per state, with
 * provenance attributes, ready for rb_arrays_write. It is the engine of `roboest model eval`.
 *
 * States (N rows, row i is state i; n = model->n_dofs in joint-list order; SI units: rad, m, rad/s, ...):
 *   q           N x n joint positions; floating base also base_pose N x 7 (p_WB, then quat_WB w x y z: q's
 *               base part)
 *   dq          N x n joint velocities, read by ops with RB_DYN_EVAL_NEEDS_DQ; floating base also
 *               base_twist N x 6 (body-fixed, base axes, linear first: nu's base part)
 *   ddq         N x n joint accelerations (RB_DYN_EVAL_NEEDS_DDQ); floating base also base_acc N x 6 (nu_dot's
 *               base part, the derivative of the body-fixed twist)
 *   tau         N x nv generalized forces (RB_DYN_EVAL_NEEDS_TAU; floating base: the base wrench first, as
 *               above)
 *   gravity     optional, N x 3, world gravity (m/s^2), the same in every row: replaces model->gravity for
 *               this call (the model itself is not changed)
 * They are read in this order; N is q's row count. An array stored as a vector of exactly the expected number
 * of columns (a single state saved as a row vector reads back so, io.h) is one state while N <= 1. Arrays the
 * op does not read are ignored, whatever their shape.
 *
 * Results (row i is state i; 2-D arrays have ndim 2 and dims[2] = 1):
 *   op                    array                dims
 *   forward-kinematics    pose                 N x 7: world pose of opts->frame (p, quat w x y z), or, with
 *                                              opts->frame = -1, N x n_frames x 7 for every frame (model order)
 *   jacobian              J                    N x 6 x nv: opts->frame's Jacobian in opts->rep
 *   djdq                  djdq                 N x 6: J_dot nu of opts->frame in opts->rep
 *   mass-matrix           M                    N x nv x nv (CRBA)
 *   generalised-forces    h                    N x nv: bias forces C(q, nu) nu + g(q)
 *   gravity               g                    N x nv
 *   rnea                  tau                  N x nv: inverse dynamics without external wrenches
 *   forward-dynamics      ddq                  N x nv: nu_dot by the articulated-body algorithm
 *   com                   com                  N x 3: centre of mass, world coordinates
 *   centroidal-momentum   centroidal_momentum  N x 6: [l; k_G], world axes about the CoM; then com N x 3
 *   regressor             Y                    N x nv x 10 n_bodies: Y pi = rnea (pi: rb_dyn_inertial_params)
 * String attributes, in this order: roboest_version (RB_VERSION), model (model->source), op (the op's name),
 * input (the last path component of opts->states_name, when given), input_sha256 (opts->states_sha256, when
 * given), joints (model->dof_names joined by ',': the order of every joint-space axis), and for
 * forward-kinematics of every frame frames (the frame names joined by ','). The same inputs give the same
 * results bit for bit.
 *
 * Errors (the states' messages start with opts->states_name, or "states" without one):
 *   RB_ENOTFOUND  an array the op needs is missing: "states.csv: no array dq (needed here)";
 *   RB_EDIM       an array of the wrong shape: "states.csv: q is 5 x 3, expected 5 x 4";
 *   RB_ENUMERIC   a non-finite value in an array the op reads: "states.csv: dq: state 3, element 1 (joint elbow)
 *                 is nan: states must be finite";
 *   RB_EINPUT     base_pose, base_twist or base_acc for a fixed-base model (they would be ignored);
 *   RB_EINPUT     gravity rows that differ: "states.csv: gravity: row 2 differs from row 0 (one gravity per
 *                 file)";
 *   a dynamics function's code for a state it fails on (RB_ENUMERIC: a singular articulated inertia), its
 *                 message prefixed "states.csv: state 3: forward-dynamics: ";
 *   RB_EINVAL     NULL model, states or out, an op out of range, a frame missing for an op that needs one or
 *                 given to one that takes none, a frame or representation out of range;
 *   RB_ENOMEM. */

typedef enum rb_dyn_eval_op {
    RB_DYN_EVAL_FORWARD_KINEMATICS,  /* "forward-kinematics" */
    RB_DYN_EVAL_JACOBIAN,            /* "jacobian" */
    RB_DYN_EVAL_DJDQ,                /* "djdq" */
    RB_DYN_EVAL_MASS_MATRIX,         /* "mass-matrix" */
    RB_DYN_EVAL_GENERALISED_FORCES,  /* "generalised-forces" */
    RB_DYN_EVAL_GRAVITY,             /* "gravity" */
    RB_DYN_EVAL_RNEA,                /* "rnea" */
    RB_DYN_EVAL_FORWARD_DYNAMICS,    /* "forward-dynamics" */
    RB_DYN_EVAL_COM,                 /* "com" */
    RB_DYN_EVAL_CENTROIDAL_MOMENTUM, /* "centroidal-momentum" */
    RB_DYN_EVAL_REGRESSOR            /* "regressor" */
} rb_dyn_eval_op;
enum { RB_DYN_EVAL_N_OPS = RB_DYN_EVAL_REGRESSOR + 1 };

/* What an op reads (rb_dyn_eval_op_needs): flags. */
enum {
    RB_DYN_EVAL_NEEDS_DQ = 1,    /* dq (floating base: and base_twist) */
    RB_DYN_EVAL_NEEDS_DDQ = 2,   /* ddq (floating base: and base_acc) */
    RB_DYN_EVAL_NEEDS_TAU = 4,   /* tau */
    RB_DYN_EVAL_NEEDS_FRAME = 8, /* opts->frame must name a frame (jacobian, djdq) */
    RB_DYN_EVAL_TAKES_FRAME = 16 /* opts->frame is read (forward-kinematics: optional; jacobian, djdq) */
};

/* The op's name as above ("forward-kinematics"; a static string), NULL for an op out of range. */
const char *rb_dyn_eval_op_name(rb_dyn_eval_op op);
/* The op of that exact name (case-sensitive), or -1 if there is none (or name is NULL). */
int rb_dyn_eval_op_from_name(const char *name);
/* The op's RB_DYN_EVAL_* flags; 0 for an op out of range. */
unsigned rb_dyn_eval_op_needs(rb_dyn_eval_op op);

typedef struct rb_dyn_eval_opts {
    long frame;                /* model frame index for the ops that take one, -1 for none (0 is a frame: set
                                * it); forward-kinematics with -1 gives every frame */
    rb_dyn_rep rep;            /* jacobian and djdq: representation (see the top of this header; there is no
                                * default: RB_DYN_BODY is 0, `roboest model eval` passes RB_DYN_MIXED) */
    const char *states_name;   /* the states' name (their file's path) for messages, and, its last path
                                * component, the `input` attribute; NULL: "states" and no attribute */
    const char *states_sha256; /* the states file's SHA-256 (hex) for the `input_sha256` attribute; NULL: none */
} rb_dyn_eval_opts;

/* Evaluate `op` for every state of `states` (see above) on `model` (only read: it may be shared with other
 * threads). opts NULL: frame -1, RB_DYN_MIXED, no names. Returns the results in *out (caller frees with
 * rb_arrays_free; NULL on failure). Allocates its own workspace and the results: a batch call, not for a
 * per-sample path. Errors above. */
int rb_dyn_eval(const rb_model *model, rb_dyn_eval_op op, const rb_arrays *states, const rb_dyn_eval_opts *opts,
                rb_arrays **out, rb_err *err);

/* ---- inertial parameters: full physical consistency and the log-Cholesky parameterization -----------------------
 * Seed 001 (online inertial-parameter estimation) and ../shared/design/PAPERS.md section 1. pi = [m, hx, hy, hz,
 * Ixx, Ixy, Ixz, Iyy, Iyz, Izz] about the body origin in body axes (roboest/spatial.h), h = m c.
 * Pseudo-inertia J(pi) = [[tr(I)/2 1 - I, h], [h^T, m]] (4 x 4); pi is FULLY physically consistent when J is
 * positive definite (m > 0, I positive definite about the CoM, and the triangle inequalities of its principal
 * moments; Wensing, Kim, Slotine 2017).
 * log-Cholesky theta = [alpha, d1, d2, d3, s12, s13, s23, t1, t2, t3], U = e^alpha [[e^d1, s12, s13, t1],
 * [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]]:
 *   RB_LCHOL_UUT         J = U U^T (Rucker and Wensing 2022): m = e^(2 alpha), h = m t (t is the centre of mass)
 *   RB_LCHOL_PAPER_EQ17  J = U^T U, the map seed 001 prints as eq. 17 (m = e^(2 alpha) (|t|^2 + 1), ...)
 * Both are smooth bijections from R^10 onto the fully consistent parameters; the theta vectors of the two forms
 * are NOT interchangeable (the same pi has different theta). */
typedef enum rb_lchol_form { RB_LCHOL_UUT = 0, RB_LCHOL_PAPER_EQ17 } rb_lchol_form;

/* J(pi) (16, row-major). */
void rb_inertia_pseudo(const double pi[10], double J[16]);
/* True when J(pi) is positive definite (a Cholesky factorization with every pivot > 1e-12 times the largest
 * diagonal element; NaN: false). */
bool rb_inertia_is_consistent(const double pi[10]);
/* pi = g(theta). A non-finite result (alpha or d too large) gives RB_ENUMERIC "log-Cholesky: theta overflows"
 * (pi left NaN; a non-finite theta: "log-Cholesky: theta is not finite"). A very negative alpha (below about -370)
 * underflows to m = 0 without an error: check rb_inertia_is_consistent where that can happen. */
int rb_lchol_to_pi(rb_lchol_form form, const double theta[10], double pi[10], rb_err *err);
/* theta = g^-1(pi) (closed form through the Cholesky factor of J: the reversed, upper-times-its-transpose one for
 * RB_LCHOL_UUT, the ordinary one for RB_LCHOL_PAPER_EQ17). RB_EINPUT "... not fully physically consistent
 * (pseudo-inertia not positive definite)" when J(pi) is not positive definite (rb_inertia_is_consistent), m <= 0
 * and NaN included; theta is then NaN. g^-1 loses digits as the body gets thin (small d) and sheared (large s). */
int rb_lchol_from_pi(rb_lchol_form form, const double pi[10], double theta[10], rb_err *err);
/* pi = g(theta) and its Jacobian G = d pi / d theta (10 x 10 row-major, G[i * 10 + j] = d pi_i / d theta_j),
 * analytic. RB_ENUMERIC as rb_lchol_to_pi. */
int rb_lchol_jacobian(rb_lchol_form form, const double theta[10], double pi[10], double G[100], rb_err *err);

/* The regressor restricted to chosen bodies, and the torques of the rest (seed 001 eq. 6-7):
 *     RNEA_pi(q, nu, nu_dot) = Y_est(q, nu, nu_dot) pi_est + tau_nom(q, nu, nu_dot)
 * Y_est: the nv x 10 n_est columns of rb_dyn_regressor for the chosen bodies (in the order given); tau_nom: one
 * RNEA with the chosen bodies' inertial parameters zeroed and every other body's the model's (a workspace of its
 * own). No external wrenches (contact terms J^T lambda are the caller's).
 * rb_dyn_condensed_alloc copies the body list (distinct indices in 1..n_bodies-1 or 0 for a floating base's base
 * body; RB_EINVAL otherwise, naming the body) and allocates every array; rb_dyn_condensed_eval allocates nothing.
 * Y_est is written row-major (nv x 10 n_est). The workspace ws is the model's (rb_dyn_alloc) and is used for the
 * passes (its kinematic state is left at (q, nu, nu_dot)). RB_ENUMERIC: a non-finite input. */
typedef struct rb_dyn_condensed rb_dyn_condensed;
int rb_dyn_condensed_alloc(const rb_model *model, const size_t *bodies, size_t n_est, rb_dyn_condensed **out,
                           rb_err *err);
void rb_dyn_condensed_free(rb_dyn_condensed *c); /* NULL is a no-op */
int rb_dyn_condensed_eval(const rb_model *model, rb_dyn *ws, rb_dyn_condensed *c, const double *q, const double *nu,
                          const double *nu_dot, double *Y_est, double *tau_nom, rb_err *err);

/* ---- jet engines (seed 004, section III-B; ../shared/design/PAPERS.md section 4) ----------------------------------
 * A jet's thrust T (N, >= 0) follows the identified second-order (SINDy) model
 *     T_ddot = d(T, T_dot) + g(T, T_dot) v(u)
 *     d = K_T T + K_TT T^2 + K_D T_dot + K_DD T_dot^2 + K_TD T T_dot + c,  g = B_U + B_T T + B_D T_dot,
 *     v(u) = u + B_UU u^2
 * with u the throttle (the presets' unit: 0 .. 120). The paper prints the parameter list with a typo (B_TT for B_T)
 * and without B_UU; the public implementation's order, followed here, is [K_T, K_TT, K_D, K_DD, K_TD, B_U, B_T, B_D,
 * B_UU, c]. Presets are the public values (numbers only) named by their source. */
typedef struct rb_jet_params {
    double K_T, K_TT, K_D, K_DD, K_TD, B_U, B_T, B_D, B_UU, c;
    double T_max;        /* N: the thrust is clamped to [0, T_max] by rb_jet_step */
    double u_min, u_max; /* the throttle's range */
} rb_jet_params;

/* A preset by name (RB_ENOTFOUND with the closest name as a suggestion otherwise, *out untouched): "ironcub_p100",
 * "ironcub_p160", "ironcub_p220_simulink", "ironcub_p220_gazebo" (PAPERS.md 4.5); *source (may be NULL; static)
 * gets where the numbers come from, e.g. "ami-iit/ironcub-mk1-software@36e4586, configJetControlParams.m (P100)".
 * Every preset has u in [0, 120]; T_max is 100 N (P100), 160 N (P160: its rating; the anchor's controllers use
 * 100 N, aliasing it to the P100) and 220 N (both P220 sets). Behaviour worth knowing before using one (the suite
 * dynamics_jet logs it): from rest, throttle 0 gives no thrust with every set; the P100 gives thrust only above a
 * throttle of about 27.3; after running, the P220 Simulink set never shuts off at throttle 0 (it settles at about
 * 15 N) and the P160 set takes about 36 s to, while the P100 and P220 Gazebo sets shut off within 2 s (cut from 80). */
int rb_jet_preset(const char *name, rb_jet_params *out, const char **source, rb_err *err);
size_t rb_jet_preset_count(void);
const char *rb_jet_preset_name(size_t i); /* NULL past the end */
/* T_ddot of the model at (T, T_dot, u); and its partial derivatives d[0] = d/dT, d[1] = d/dT_dot, d[2] = d/du. */
double rb_jet_accel(const rb_jet_params *p, double T, double T_dot, double u);
void rb_jet_accel_partials(const rb_jet_params *p, double T, double T_dot, double u, double d[3]);
/* One step of dt as the public simulator plugin integrates it: a = T_ddot(T, T_dot, u), T += T_dot dt + a dt^2 / 2,
 * T_dot += a dt; then T clamped to [0, T_max] and T_dot >= 0 where T = 0 (and T_dot <= 0 where T = T_max). The
 * throttle is used as given (the caller keeps it in [u_min, u_max]). First order in dt (T_dot by explicit Euler). */
void rb_jet_step(const rb_jet_params *p, double u, double dt, double *T, double *T_dot);
/* The steady thrust at a constant throttle u (N, in [0, T_max]): the larger root of d(T, 0) + g(T, 0) v(u) = 0 (the
 * stable one while K_TT < 0), 0 when there is none or it is negative. Non-decreasing in u over every preset's range. */
double rb_jet_steady_thrust(const rb_jet_params *p, double u);
/* Its inverse: the throttle in [u_min, u_max] whose steady thrust is T: u_min when T <= T_ss(u_min) (below it the
 * jet cannot rest: off, or the P220 Simulink set's 15 N floor), u_max when T >= T_ss(u_max), else the closed form
 * v = -(K_TT T^2 + K_T T + c) / (B_U + B_T T), u = the root of u + B_UU u^2 = v through 0 (bisection on T_ss if
 * that is not T's stable rest point). rb_jet_steady_thrust(p, rb_jet_steady_throttle(p, T)) = T to 1e-9 (1 + T)
 * for every T the jet can rest at (the suite dynamics_jet_steady checks 1e-6 N); where T_ss jumps (the P160: from 0
 * to about 6 N near u = 0.016) a T in the gap gets the smallest throttle whose steady thrust exceeds it. */
double rb_jet_steady_throttle(const rb_jet_params *p, double T);
/* The throttle that gives T_ddot at (T, T_dot) now: v = (T_ddot - d) / g, u from v as above, clamped to
 * [u_min, u_max] (a lag compensation: rb_sim_flight drives the thrust with it); NaN when g(T, T_dot) <= 0. */
double rb_jet_throttle_for_accel(const rb_jet_params *p, double T, double T_dot, double T_ddot);

/* ---- the joint-torque UKF's model: process f, measurement h, start ---------------------------------------------
 * The physics of the ukf_torque stage (configs/stages.md describes the estimator: state, process, measurements,
 * start; seed 000 eq. 5-8) over the cut system above: the filter is the caller's (the stage runs the filters
 * module's UKF with the batch forms below as its models); nothing here knows of it.
 *
 * Orders. Every function below takes the state in the FILTER order, velocities first:
 *     dq (n), w_B (3), a_B (3), tau_m (n), tau_F (n), ft (6 n_ft), contacts (6 n_c), ft_bias, acc_bias, gyro_bias,
 *     fric_corr (n_corr n)
 * (w_B, a_B: floating base only; biases and the friction correction when configured). The velocity-product terms depend on (dq, w_B) alone;
 * with them first, the sigma points past the velocity columns of P's lower Cholesky factor share the mean's
 * velocities, and the terms are computed for 2 n_v + 1 distinct velocities per batch (n_v = n, or n + 3) and
 * reused for the others (a cache keyed on the exact values: results do not depend on it). The model's matrices
 * at q (K^-1 times the blocks that drive s_ddot, the frame Jacobians) are computed once per rb_tukf_configure; a
 * batch of sigma points then costs one matrix product. The PUBLISHED order (the stage's var output; the
 * estimator's documentation) is dq, tau_m, tau_F, ft, contacts, base (a_B, w_B), ft_bias, acc_bias, gyro_bias,
 * fric_corr:
 * rb_tukf_to_published / rb_tukf_to_filter convert. Measurements have one order: dq (n), current (n), friction
 * (n, when measured), ft (6 n_ft), acc (3 n_acc), gyro (3 n_gyro).
 *
 * rb_tukf_alloc makes the workspace (caller frees with rb_tukf_free): the sub-models, the cut system, the start's
 * FT prediction and every array a sample needs; it borrows the model (which must outlive it). No other function
 * allocates. One thread at a time. Errors: RB_EINVAL (NULL arguments, a configuration that does not fit the model,
 * a call before rb_tukf_configure), RB_EDIM (more columns than 2 N + 1), RB_ENUMERIC (from the cut system: a
 * non-finite q, a diagonal block not positive definite), RB_ENOMEM. */

typedef struct rb_tukf rb_tukf; /* workspace (opaque) */

typedef enum rb_tukf_friction {
    RB_TUKF_RANDOM_WALK, /* tau_F+ = tau_F (the paper, eq. 8) */
    RB_TUKF_RATE_MODEL   /* tau_F+ = tau_F + dt s_ddot (k2 + k0 k1 / cosh^2(k1 s_dot)) */
} rb_tukf_friction;

/* The estimator's configuration (read during rb_tukf_alloc only; everything is copied). Joints: the model's
 * joint list (n = model->n_dofs); indices are model indices. */
typedef struct rb_tukf_config {
    const int *ft; /* n_ft model->ft indices the tree is cut at: the readings' order */
    size_t n_ft;
    const int *contacts; /* n_contacts frames with an unknown contact wrench in the state */
    size_t n_contacts;
    const int *acc, *gyro; /* frames of the accelerometers (n_acc), gyroscopes (n_gyro) */
    size_t n_acc, n_gyro;
    int base_imu;                      /* floating base: the frame on the base body, listed in acc and gyro,
                                          that starts the base block (eq. 7); -1 for a fixed base */
    const double *k_t, *gear_ratio;    /* n each: N m/A, signed R (non-zero): i_m = tau_m / (k_t R) */
    const double *motor_inertia;       /* n: J_m, kg m^2 (rotor side; K gains R^2 J_m); NULL: zeros */
    rb_tukf_friction friction;         /* tau_F's process */
    const double *k0, *k1, *k2;        /* n each: the rate model's N m, s/rad, N m s/rad; NULL: zeros */
    double contact_decay;              /* k >= 0, 1/s: w+ = w - dt k w (0: random walk) */
    bool ft_bias, acc_bias, gyro_bias; /* bias states (6 per FT, 3 per accelerometer / gyroscope) */
    bool friction_meas;                /* tau_F is measured (the friction block of z) */
    bool ft_offset;                    /* start: o = f_measured - f_predicted subtracted from every reading */
    /* An approximation (not the paper's filter): the batch forms take every state's velocity-product terms at the
     * batch's first state (a UKF's mean), one dynamics pass per batch instead of one per distinct velocity. */
    bool mean_velocity_terms;
    /* Online friction correction (friction_meas only): per joint i the block theta_i (n_corr terms, random walks)
     * and the friction measurement h_i = tau_F,i - theta_i . phi_i(x), phi of each term: RB_TUKF_CORR_COULOMB
     * tanh(dq_i / corr_v_c), _VISCOUS dq_i, _OFFSET 1, _SCALE tau_F,i. n_corr 0: none (the paper's model). */
    const int *corr;
    size_t n_corr;
    double corr_v_c; /* > 0, rad/s (m/s) */
    double corr_v_s; /* > 0, rad/s (m/s): RB_TUKF_CORR_STRIBECK's tanh(dq / v_c) exp(-(dq / v_s)^2) */
} rb_tukf_config;

enum {
    RB_TUKF_CORR_COULOMB,
    RB_TUKF_CORR_VISCOUS,
    RB_TUKF_CORR_OFFSET,
    RB_TUKF_CORR_SCALE,
    RB_TUKF_CORR_STRIBECK,
    RB_TUKF_CORR_TERMS
};

/* State blocks (published order) and measurement blocks. */
typedef enum rb_tukf_block {
    RB_TUKF_DQ,
    RB_TUKF_TAU_M,
    RB_TUKF_TAU_F,
    RB_TUKF_FT,
    RB_TUKF_CONTACT,
    RB_TUKF_BASE_A, /* a_B: the base origin's proper linear acceleration, base axes (floating base) */
    RB_TUKF_BASE_W, /* w_B: the base's angular velocity, base axes (floating base) */
    RB_TUKF_FT_BIAS,
    RB_TUKF_ACC_BIAS,
    RB_TUKF_GYRO_BIAS,
    RB_TUKF_FRIC_CORR, /* the friction correction theta: n_corr per joint, joint-major */
    RB_TUKF_N_BLOCKS
} rb_tukf_block;

typedef enum rb_tukf_meas {
    RB_TUKF_Z_DQ,
    RB_TUKF_Z_CURRENT,
    RB_TUKF_Z_FRICTION,
    RB_TUKF_Z_FT,
    RB_TUKF_Z_ACC,
    RB_TUKF_Z_GYRO,
    RB_TUKF_N_MEAS
} rb_tukf_meas;

typedef struct rb_tukf_span {
    size_t off, len;
} rb_tukf_span;

typedef struct rb_tukf_layout {
    size_t n_state, n_meas;             /* N, M */
    rb_tukf_span x[RB_TUKF_N_BLOCKS];   /* each block in the filter order */
    rb_tukf_span pub[RB_TUKF_N_BLOCKS]; /* each block in the published order */
    rb_tukf_span z[RB_TUKF_N_MEAS];     /* each measurement block (len 0: absent) */
} rb_tukf_layout;

/* One sample's readings (NaN: missing). q, dq, current n each; friction n (read when friction_meas); ft 6 n_ft
 * (as the sensors report them); acc 3 n_acc (m/s^2, proper); gyro 3 n_gyro (rad/s). */
typedef struct rb_tukf_sample {
    const double *q, *dq, *current, *friction, *ft, *acc, *gyro;
} rb_tukf_sample;

/* RB_EINVAL: NULL arguments or arrays, an index out of range, a zero gear ratio, base_imu missing for a floating
 * base, given for a fixed one, off the base body or not listed in acc and gyro; errors of rb_submodels_build,
 * rb_cut_dyn_alloc, rb_ft_est_alloc; RB_ENOMEM. */
int rb_tukf_alloc(const rb_model *model, const rb_tukf_config *cfg, rb_tukf **out, rb_err *err);
void rb_tukf_free(rb_tukf *tm); /* NULL is a no-op */
/* The layout (borrowed for the workspace's life). */
const rb_tukf_layout *rb_tukf_get_layout(const rb_tukf *tm);

/* The model's matrices at the joint positions q (n); every function below evaluates at the last q given. */
int rb_tukf_configure(rb_tukf *tm, const double *q, rb_err *err);

/* x_out = f(x) (N each, filter order) for one process step of dt seconds: dq + dt s_ddot(x) (explicit Euler),
 * tau_F by its process, contacts decaying, every other block unchanged (seed 000 eq. 8). */
int rb_tukf_process(rb_tukf *tm, const double *x, double dt, double *x_out, rb_err *err);
/* z = h(x) (M): dq, tau_m / (k_t R), tau_F, ft + ft_bias, the accelerometers' proper accelerations from a_B
 * (fixed base: -g), s_ddot(x) and the velocity-product terms, + acc_bias, the gyroscopes' angular velocities from
 * w_B and dq, + gyro_bias. */
int rb_tukf_measure(rb_tukf *tm, const double *x, double *z, rb_err *err);
/* The same for Ns <= 2 N + 1 states at once (a UKF's sigma points): X N x Ns column-major (column j a state), Y
 * N x Ns, Z M x Ns likewise. */
int rb_tukf_process_batch(rb_tukf *tm, const double *X, size_t Ns, double dt, double *Y, rb_err *err);
int rb_tukf_measure_batch(rb_tukf *tm, const double *X, size_t Ns, double *Z, rb_err *err);
/* The structure a UKF can use (rb_filter_opts.n_nonlinear): for fixed velocities (the first l = n_v filter-order
 * elements: dq, and w_B with a floating base) the process and the measurements are affine in the rest (s_ddot is
 * affine in the driving blocks; tau_F's rate model scales it by a function of dq; the accelerometers are affine in
 * a_B and s_ddot; the friction correction's features depend on dq). Returns l, or 0 when a "scale" correction term
 * (theta tau_F, bilinear) makes the measurement not affine. */
size_t rb_tukf_nonlinear(const rb_tukf *tm);
/* The process's identity rows (rb_filter_opts.identity): flags[i] (N) true when f_i(x) = x_i for every x: w_B and every
 * random walk (not dq, nor tau_F under the rate model, nor decaying contacts). */
void rb_tukf_identity(const rb_tukf *tm, bool *flags);
/* Their Jacobians with respect to x[l..N) at x (after rb_tukf_configure), by compressed rows (row i's entries
 * val[ptr[i] .. ptr[i + 1]) in columns col[...]): the process's (N rows, dt) when process, else the measurements'
 * (M rows). Borrowed: valid until the next call. RB_EINVAL when rb_tukf_nonlinear is 0. */
int rb_tukf_affine(rb_tukf *tm, const double *x, double dt, bool process, const size_t **ptr, const size_t **col,
                   const double **val, rb_err *err);
/* The estimate's joint accelerations ddq = s_ddot(x) (n) and torques tau_j = tau_m - tau_F - R^2 J_m ddq (n);
 * when s_ddot fails both are NaN and its code is returned. */
int rb_tukf_joint_torques(rb_tukf *tm, const double *x, double *tau_j, double *ddq, rb_err *err);

/* The start (rb_tukf_configure at s->q first): x (N, filter order) as the ukf_torque stage's doc describes it
 * (dq measured, tau_m = k_t R i_m, the base from base_imu by eq. 7, the FT states the model's prediction for the
 * robot balanced on its contacts, or a fixed base on its mounting), and the FT offset for rb_tukf_measurement.
 * Errors of rb_ft_est_predict_ft, prefixed "start-up FT prediction: ". */
int rb_tukf_initial_state(rb_tukf *tm, const rb_tukf_sample *s, double *x, rb_err *err);
/* The measurement vector z (M) of a sample: its readings, the FT offset subtracted. */
void rb_tukf_measurement(const rb_tukf *tm, const rb_tukf_sample *s, double *z);

/* Filter order <-> published order (N each; not in place). */
void rb_tukf_to_published(const rb_tukf *tm, const double *x, double *x_pub);
void rb_tukf_to_filter(const rb_tukf *tm, const double *x_pub, double *x);

/* Element names and units: state element i (published order) "<block>/<element>" (dq/<joint>, tau_m/<joint>,
 * tau_f/<joint>, ft/<sensor>/<fx..mz>, contact/<frame>/<fx..mz>, base/<a_x..w_z>, ft_bias/<sensor>/<fx..mz>,
 * acc_bias/<frame>/<x..z>, gyro_bias/<frame>/<x..z>, fric_corr/<term>/<joint>) and its unit (of the value: "N m", "rad/s", "m/s^2" ...);
 * measurement element j likewise (dq/, current/, friction/<joint>, ft/<sensor>/<axis>, acc/, gyro/<frame>/<axis>).
 * "element <i>" and "" out of range. */
void rb_tukf_state_name(const rb_tukf *tm, size_t i, char *buf, size_t size);
const char *rb_tukf_state_unit(const rb_tukf *tm, size_t i);
void rb_tukf_meas_name(const rb_tukf *tm, size_t j, char *buf, size_t size);
const char *rb_tukf_meas_unit(const rb_tukf *tm, size_t j);
/* State element i (FILTER order) for messages: "<block> (<element>)", e.g. "tau_m (joint elbow)". */
void rb_tukf_describe_state(const rb_tukf *tm, size_t i, char *buf, size_t size);

RB_API_END

#endif
