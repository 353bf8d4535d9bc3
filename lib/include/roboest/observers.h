/*
 * roboest observers: estimators that combine the dynamics and the filters modules (a model, its dynamics and a
 * Kalman filter over some of its quantities). Each is alloc over a model and a config / step per sample / free;
 * nothing is allocated per step; no pipeline types (the stages of lib/estimators wrap them).
 *
 * ---- rb_iekf: online inertial-parameter estimation (seed 001, Foster et al.; ../shared/design/PAPERS.md sec. 1)
 *
 * Estimates the inertial parameters of n_b chosen bodies of a model whose other bodies are known (the model's
 * parameters), from the observed joint torques and the joint motion.
 *
 * Parameters per estimated body: pi = [m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz] about the body origin in
 * body axes (roboest/spatial.h order; h = m c). Stacked in the order of rb_iekf_config.bodies.
 *
 * Measurement (eq. 6-7, 13-15). Per sample, with the motion (q, nu, nu_dot) (roboest/dynamics.h conventions):
 *     Y_est pi_est + tau_nom = tau_obs + sum_i J_i^T lambda_i
 *     Delta tau = tau_obs - tau_nom + sum_i J_i^T lambda_i - b          (nv rows)
 * Y_est the regressor columns of the estimated bodies and tau_nom one RNEA with their parameters zeroed
 * (rb_dyn_condensed_eval); tau_obs the observed generalized forces: a floating base's six base rows are 0 (a
 * free-floating robot: no actuator acts on the base), then the joint torques; lambda_i the contact wrenches
 * acting ON the robot, each at its model frame in the representation of its contact (RB_DYN_MIXED: world
 * axes, force and moment about the frame origin, as the simulator's truth/contacts/<frame>; RB_DYN_BODY: the
 * frame's axes about its origin), J_i that frame's Jacobian in the same representation; b the start-up bias
 * (below; 0 without it).
 *
 * Filters (rb_iekf_config.filter):
 *   RB_IEKF_EKF_LOG_CHOLESKY (default; eq. 16-21): state theta (10 per body, the log-Cholesky parameters of
 *       rb_lchol_to_pi in form cfg.form), random walk theta_k = theta_{k-1} + eta (eq. 18), measurement
 *       Delta tau = Y_est g(theta) + nu (eq. 19), H = Y_est G with G = blockdiag(d pi / d theta) at the prior
 *       (rb_lchol_jacobian, eq. 21). pi = g(theta) is fully physically consistent by construction.
 *       Forms: RB_LCHOL_UUT (default; J = U U^T, m = e^(2 alpha), t the centre of mass) or RB_LCHOL_PAPER_EQ17
 *       (the map the paper prints, J = U^T U). The theta of the two forms are NOT interchangeable (the same pi
 *       has a different theta), so variances given in theta units mean different things in each.
 *   RB_IEKF_KF_LINEAR (eq. 12, 15): state pi itself, F = I, H = Y_est: the paper's baseline, which can leave
 *       the consistent set (rb_inertia_is_consistent false) when the motion does not excite every parameter.
 *       With process variance 0 it is recursive least squares: after K samples its pi equals the batch
 *       weighted least-squares solution of the stacked samples regularized by the prior (P0, pi0).
 *   Both run the filters module's Joseph-form update (rb_filter_*; no explicit inverse).
 *
 * Noise. Process: diagonal, q_j dt per step for parameter j (q: variance per second, the units of the state:
 * theta for the EKF, pi for the KF; the same for every body), so the random walk's spread does not depend on
 * the sample rate. Initial covariance: diagonal p0_j. Measurement: diagonal R, one variance per row of
 * Delta tau (nv rows: a floating base's 6 base rows first), N^2 m^2 (N^2 for forces).
 *
 * Initial estimate: the model's parameters of each estimated body (rb_model.bodies[b].inertia, merged links
 * included). The EKF needs them FULLY consistent (rb_inertia_is_consistent: RB_ECONFIG "body <name>: nominal
 * parameters not fully physically consistent (...)" otherwise, a zero mass included); the KF needs m > 0.
 *
 * Acceleration (rb_iekf_config.ddq):
 *   RB_IEKF_DDQ_GIVEN    nu_dot is an input of every step.
 *   RB_IEKF_DDQ_CENTRAL  nu_dot by the central difference of nu, nu_dot_{k-1} = (nu_k - nu_{k-2}) /
 *                        (t_k - t_{k-2}) (a floating base's twist part too: the base acceleration of
 *                        dynamics.h), and every other signal delayed one sample to match, as the paper does
 *                        (sec. III-D): the estimate of step k is the one of sample k - 1, and steps 0 and 1
 *                        only predict (the outputs are one sample late).
 *
 * Innovation gate (eq. 22): accept an update only when NIS = r^T S^-1 r <= gamma (r the innovation over the
 * rows used, S = H P H^T + R). gate RB_IEKF_GATE_OFF (default: a load that changes in a step, the paper's
 * square waves, would otherwise be rejected for good), RB_IEKF_GATE_PROBABILITY (gamma the chi-square
 * quantile of gate_value in (0, 1) with as many degrees of freedom as rows used; 1 refused) or
 * RB_IEKF_GATE_NIS (gamma = gate_value > 0). The paper tuned gamma by hand and gives no value.
 *
 * Start-up bias (sec. IV-B): with bias_window > 0 s, the first samples within bias_window of the first step
 * only predict (no update: the estimate stays at the prior) and accumulate the residual Delta tau - Y_est pi0
 * per row (rows with a NaN torque leave that row's sum alone); at the first sample past the window its mean b
 * is frozen and subtracted from Delta tau from then on (rows never seen: b 0). The robot should hold its load
 * as the model has it during the window (the paper: on start-up, before the load is attached or while it is
 * known). Without a window b = 0.
 *
 * Low-passes (first order, y += a (x - y), a = 1 - exp(-2 pi fc dt), the first value taken as is; fc 0: off):
 *   residual_cutoff  Delta tau before the update (ours; the paper low-passes nothing it names);
 *   estimate_cutoff  the estimate pi_raw before the rate limit.
 * Rate limit (the paper's 3 kg/s for mass, sec. IV-B): per body, the streamed pi moves along the straight line
 * towards the (low-passed) estimate, pi += f (pi_lp - pi), by the largest fraction f <= 1 that keeps every
 * parameter j within rate_j dt per step (rate 0: no limit on j) [ours: the paper limits the mass and says no
 * more]. Defaults: 3 kg/s for m [paper], no limit for h and I [ours]. The limited pi starts at the nominal
 * parameters and stays a convex combination of fully consistent parameters, hence fully consistent itself (a
 * per-element clamp would move the mass without its first moment, throwing the CoM h / m off while it moves).
 *
 * Outputs of each step (rb_iekf_out, borrowed until the next step): pi (rate-limited), pi_raw (the filter's
 * estimate), theta (EKF: the state; KF: g^-1(pi_raw) in cfg.form when pi_raw is fully consistent, NaN
 * otherwise), mass and com (from pi), consistent (per body, rb_inertia_is_consistent(pi_raw)), residual
 * (Delta tau - Y_est pi_raw^- per row: the prior innovation; NaN for rows not used), nis, gated, var (diagonal
 * of P, state units), bias b.
 *
 * NaN handling. A non-finite (NaN, infinite) torque row is skipped (the filter's missing element; counted in rows_skipped); when every
 * row is NaN, or q, nu, nu_dot or a contact wrench hold a non-finite value, the step only predicts
 * (predict_only counted). Diagnostics (rb_iekf_get_diag): updates, gated updates, rows skipped, predict-only
 * steps, the largest variance seen per parameter, and the information matrix A = sum Y_est^T R^-1 Y_est over
 * the rows of every accepted update (10 n_b square). rb_iekf_identifiability compares rank(A) with the sum of
 * the ranks of each body's own 10 x 10 block (eigenvalues, LAPACK dsyev; an eigenvalue counts when above
 * 1e-9 times the largest eigenvalue of that matrix): a joint rank below the sum means some combination of
 * parameters of different bodies is not observed apart (two bodies locked rigidly together: only their sum
 * shows). Warnings (rb_iekf_warnings): a variance growing past var_warn_factor times its initial value, more
 * than 20 % of the updates gated, the identifiability finding.
 *
 * Errors (one line, rb_err): RB_ECONFIG (a body out of range, twice, or a floating base's base body is fine;
 * a nominal pi not consistent; bad variances: not finite or <= 0 where > 0 is needed; gate probability outside
 * (0, 1); a contact frame out of range or another representation), RB_EINPUT "sample k: t = ... is not after
 * the previous sample's ... (dt <= 0)", RB_ENUMERIC "sample k: body <name>: theta not finite / overflows" (an
 * update throwing theta where g(theta) overflows) and "sample k: covariance not positive definite (...)" (the
 * filter's failure, with the parameter or row it names), RB_ENOMEM.
 */
#ifndef ROBOEST_OBSERVERS_H
#define ROBOEST_OBSERVERS_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/core.h"
#include "roboest/dynamics.h"
#include "roboest/filters.h"
#include "roboest/model.h"

RB_API_BEGIN

typedef enum rb_iekf_filter { RB_IEKF_EKF_LOG_CHOLESKY = 0, RB_IEKF_KF_LINEAR } rb_iekf_filter;
typedef enum rb_iekf_ddq { RB_IEKF_DDQ_GIVEN = 0, RB_IEKF_DDQ_CENTRAL } rb_iekf_ddq;
typedef enum rb_iekf_gate { RB_IEKF_GATE_OFF = 0, RB_IEKF_GATE_PROBABILITY, RB_IEKF_GATE_NIS } rb_iekf_gate;

/* A contact wrench input: its model frame and representation (RB_DYN_MIXED or RB_DYN_BODY). */
typedef struct rb_iekf_contact {
    int frame;
    rb_dyn_rep rep;
} rb_iekf_contact;

typedef struct rb_iekf_config {
    const size_t *bodies; /* n_bodies model body indices (copied) */
    size_t n_bodies;
    rb_iekf_filter filter;
    rb_lchol_form form; /* EKF's theta; also the KF's theta output */
    double q[10];       /* process variance per second per parameter (state units), >= 0 */
    double p0[10];      /* initial variance per parameter (state units), > 0 */
    const double *r;    /* measurement variance per row (nv values, > 0); NULL: r_scalar for every row */
    double r_scalar;
    rb_iekf_gate gate;
    double gate_value;                       /* probability in (0, 1) or NIS threshold > 0 */
    double bias_window;                      /* s; 0: no bias */
    double residual_cutoff, estimate_cutoff; /* Hz; 0: off */
    double rate[10];                         /* per parameter per second; 0: no limit */
    rb_iekf_ddq ddq;
    const rb_iekf_contact *contacts; /* n_contacts (copied) */
    size_t n_contacts;
    double var_warn_factor; /* warn when a variance exceeds this times its initial value; 0: never */
} rb_iekf_config;

/* Defaults: EKF, UUT, q = [1e-2 alpha; 1e-3 d; 1e-3 s; 1e-4 t] (EKF) , p0 = [0.25; 0.1 x3; 0.01 x3; 0.01 x3],
 * r_scalar 1, gate off (gate_value 0.999 when turned to probability), no bias, no low-pass, rate [3, 0...],
 * ddq given, no contacts, var_warn_factor 100. rb_iekf_config_defaults_kf: the KF's state-unit defaults:
 * q = [1 kg^2; 1e-2 (kg m)^2 x3; 1e-3 (kg m^2)^2 x6], p0 = [25; 1 x3; 0.1 x6]. Every other field as above. */
void rb_iekf_config_init(rb_iekf_config *cfg);
void rb_iekf_config_defaults_kf(rb_iekf_config *cfg);

typedef struct rb_iekf rb_iekf; /* opaque */

/* Allocate everything (workspaces, filter, outputs). `model` must outlive the estimator. Errors above. */
int rb_iekf_alloc(const rb_model *model, const rb_iekf_config *cfg, rb_iekf **out, rb_err *err);
void rb_iekf_free(rb_iekf *e); /* NULL is a no-op */

/* One sample. q (nq), nu (nv), nu_dot (nv; ignored, may be NULL under RB_IEKF_DDQ_CENTRAL), tau (model->n_dofs
 * joint torques, NaN: missing), lambda (6 per contact, NULL when n_contacts is 0). k names the sample in
 * messages. Allocates nothing. After an error the estimator must not be stepped again. */
int rb_iekf_step(rb_iekf *e, size_t k, double t, const double *q, const double *nu, const double *nu_dot,
                 const double *tau, const double *lambda, rb_err *err);

/* Borrowed until the next step or free; n_b bodies, nv rows. */
typedef struct rb_iekf_out {
    const double *pi;                /* 10 n_b, rate-limited */
    const double *pi_raw;            /* 10 n_b */
    const double *theta;             /* 10 n_b */
    const double *mass;              /* n_b, kg (from pi) */
    const double *com;               /* 3 n_b, m, body axes (h / m from pi) */
    const unsigned char *consistent; /* n_b: rb_inertia_is_consistent(pi_raw) */
    const double *residual;          /* nv */
    double nis;                      /* NaN without an update */
    bool gated;                      /* this step's update was rejected by the gate */
    bool updated;                    /* this step updated (not gated, not predict-only, past the bias window) */
    const double *var;               /* 10 n_b: diagonal of P */
    const double *bias;              /* nv */
} rb_iekf_out;
void rb_iekf_get_out(const rb_iekf *e, rb_iekf_out *out);

typedef struct rb_iekf_diag {
    long steps, updates, gated, rows_skipped, predict_only;
    const double *max_var; /* 10 n_b: the largest value each diagonal element of P reached */
    const double *info;    /* 10 n_b x 10 n_b row-major: sum Y_est^T R^-1 Y_est over accepted updates */
} rb_iekf_diag;
void rb_iekf_get_diag(const rb_iekf *e, rb_iekf_diag *d);

/* Ranks of the information matrix: *joint, and per body (n_b values, may be NULL); *separable false when
 * joint < sum of the per-body ranks. Allocates (LAPACK workspaces): call at the end. RB_ENUMERIC, RB_ENOMEM. */
int rb_iekf_identifiability(const rb_iekf *e, size_t *joint, size_t *per_body, bool *separable, rb_err *err);

/* The warnings of the run so far, one line each (variance bound, gated share, identifiability), written into
 * *lines (caller frees with rb_strings_free(lines, n)). Allocates: call at the end. RB_ENOMEM. */
int rb_iekf_warnings(const rb_iekf *e, char ***lines, size_t *n, rb_err *err);
/* One line summing the counts: "N updates, G gated (P %), S rows skipped (NaN torque), O predict-only steps". */
int rb_iekf_summary(const rb_iekf *e, char **line, rb_err *err);

/* ---- rb_lodo: legged odometry, the floating base from stance feet held in place (seed 004's floating base,
 * "legged odometry (feet fixed)"; ../shared/design/PAPERS.md sec. 4.2)
 *
 * Estimates a floating base's world pose W_X_B and its body-fixed twist nu_B = [v_B; w_B] (roboest/dynamics.h)
 * from the joint positions s and velocities s_dot alone, given which feet (model frames, e.g. the soles) are in
 * stance: a stance foot does not move, so the legs carry the base.
 *
 * Stance. Per foot, from flags (RB_LODO_FLAGS: one value per foot, > 0.5 in stance) or from wrenches
 * (RB_LODO_WRENCHES: 6 per foot [f; tau] ON the robot, N and N m; the normal force is element 2, f_z: the world
 * vertical for the simulator's MIXED truth/contacts, the sole normal for a wrench in the foot's own axes) with
 * hysteresis: a foot enters stance when f_z > force_on and leaves it when f_z < force_off (force_off <=
 * force_on). A non-finite flag or f_z keeps the foot's previous state. Every foot starts out of stance.
 *
 * Pose. When a foot enters stance its world pose W_X_F = W_X_B B_X_F is recorded (B_X_F from the kinematics,
 * W_X_B the estimate of that sample). At the first sample the base is at cfg.base0 and the feet then in stance
 * are where the kinematics put them: they anchor the world. While at least one foot stays in stance from the
 * previous sample, the base pose is the one that puts those feet at their recorded poses:
 *     W_X_B(i) = W_X_F(i) (B_X_F(i))^-1     per held foot i,
 * one foot: exact; several: the positions averaged and the orientations averaged as quaternions (signs aligned
 * with the first, summed, normalized: for two feet this is the exact maximizer of sum_i (q_i . q)^2, Markley's
 * average with equal weights; for more an approximation of it). Feet entering stance at this sample do not move
 * the pose; they are recorded at it.
 *
 * Twist. The least-squares solution over the stance feet (this sample's) of
 *     J_F,base(i) nu_B = -J_F,joints(i) s_dot          (6 rows per foot, BODY representation)
 * (J_F,base = the motion transform F_X_B: no dependence on the world pose), solved through the 6 x 6 normal
 * matrix by a Cholesky factorization (one foot: exact). The feet's BODY rows weigh linear velocity (m/s) and
 * angular velocity (rad/s) alike, each foot's linear rows about its own origin.
 * slip (per stance foot): |linear part of J_F nu| with the solution nu = [nu_B; s_dot], the speed (m/s) of the
 * foot origin the solution implies: 0 (rounding) with one foot; with several a measure of how far the joint
 * readings are from keeping every stance foot still (kinematic inconsistency, a slipping or rolling foot). NaN
 * for a foot not in stance.
 *
 * Flight (no foot in stance): not observable from the legs. The base pose integrates the last twist, held
 * constant (W_X_B exp(dt nu_B), rb_dyn_integrate), the twist stays, `flight` is set and counted. The same
 * prediction is used at a sample whose s or s_dot holds a non-finite value (`predict_only` counted; the stance
 * states and recorded poses are left as they were). A foot touching down after a flight is recorded at the
 * predicted pose.
 *
 * Errors (one line, rb_err): RB_ECONFIG (a fixed-base model; no feet; a foot frame out of range or listed twice;
 * thresholds not finite, negative or force_off > force_on; base0 not finite), RB_EINPUT "sample k: t = ... is
 * not after the previous sample's ... (dt <= 0)", RB_ENUMERIC "sample k: ..." (the normal matrix not positive
 * definite), RB_ENOMEM.
 */
typedef enum rb_lodo_source { RB_LODO_FLAGS = 0, RB_LODO_WRENCHES } rb_lodo_source;

typedef struct rb_lodo_config {
    const int *feet; /* n_feet model frame indices (copied) */
    size_t n_feet;
    rb_lodo_source source;
    double force_on, force_off; /* N: stance thresholds on f_z (RB_LODO_WRENCHES) */
    rb_xform base0;             /* W_X_B at the first sample */
} rb_lodo_config;

/* Defaults: no feet, flags, force_on 50 N, force_off 25 N (ours), base0 the identity (world origin). */
void rb_lodo_config_init(rb_lodo_config *cfg);

typedef struct rb_lodo rb_lodo; /* opaque */

/* Allocate everything. `model` (floating base) must outlive the estimator. Errors above. */
int rb_lodo_alloc(const rb_model *model, const rb_lodo_config *cfg, rb_lodo **out, rb_err *err);
void rb_lodo_free(rb_lodo *e); /* NULL is a no-op */

/* One sample at time t (s): s, s_dot (model->n_dofs each, joint-list order), contact (n_feet flags or 6 n_feet
 * wrench values, cfg.source). k names the sample in messages. Allocates nothing. After an error the estimator must
 * not be stepped again. */
int rb_lodo_step(rb_lodo *e, size_t k, double t, const double *s, const double *s_dot, const double *contact,
                 rb_err *err);

/* Borrowed until the next step or free. */
typedef struct rb_lodo_out {
    const double *position;      /* 3, m, world: W_p_B */
    const double *orientation;   /* 4, unit quaternion w x y z of W_R_B (w >= 0) */
    const double *twist;         /* 6, body-fixed [v_B; w_B], m/s and rad/s */
    const unsigned char *stance; /* n_feet: 1 in stance */
    const double *slip;          /* n_feet, m/s; NaN out of stance */
    size_t n_stance;
    bool flight;       /* no foot in stance: pose and twist predicted */
    bool predict_only; /* a non-finite joint reading: pose and twist predicted */
} rb_lodo_out;
void rb_lodo_get_out(const rb_lodo *e, rb_lodo_out *out);

typedef struct rb_lodo_diag {
    long steps, flight, predict_only, touchdowns; /* touchdowns: feet entering stance, the first sample's too */
    double max_slip;                              /* m/s, over every stance foot and sample */
} rb_lodo_diag;
void rb_lodo_get_diag(const rb_lodo *e, rb_lodo_diag *d);
/* ---- rb_tekf: momentum-based thrust estimation (seed 004, Mohamed et al., RA-L 2022, iRonCub; PAPERS.md sec. 4) -----
 *
 * Estimates the thrust intensities T (N, >= 0) of t jets rigidly attached to a floating-base robot from their
 * throttles u, the robot's motion (q, nu: treated as exact, e.g. from legged odometry or the truth) and the
 * contact wrenches of its feet, by an EKF on the centroidal momentum dynamics combined with the jet-engine model
 * of roboest/dynamics.h (rb_jet_*).
 *
 * State (eq. 5): x = [T (t), T_dot (t), L (6), W_1 (6), ..., W_nf (6)], n = 2 t + 6 + 6 nf (26 for four jets and
 * two feet; nf = 0 in flight). L = [l; k_G] the centroidal momentum (rb_dyn_centroidal_momentum: linear momentum
 * and angular momentum about the CoM, world axes; kg m/s, kg m^2/s). W_f the wrench [f; tau] the environment
 * exerts ON the robot at foot frame f, in the foot's convention (rb_tekf_foot.rep): RB_DYN_BODY (default; the
 * paper's: an FT-derived wrench, foot frame axes, moment about the frame origin) or RB_DYN_MIXED (world axes,
 * moment about the frame origin: the simulator's truth/contacts/<frame>).
 * Input: the throttles u (t), in the unit of the jet parameters (the presets': 0 .. 120).
 * Measurement (eq. 6-7): z = [L_meas (6), W_1, ..., W_nf], m = 6 + 6 nf; L_meas = A_G(q) nu (the centroidal
 * momentum of the given motion), W_f the given foot wrenches. h(x) = [L; W]: linear, H constant.
 * Process (continuous, eq. 3, 8):
 *     T' = T_dot,   T_dot' = f_jet(T, T_dot, u) (rb_jet_accel per jet),
 *     L' = A(q) T - m g e3 + sum_f G_X_f W_f,   W_f' = 0
 * A = [S(r_1) l_1 ... S(r_t) l_t] (6 x t), S(r) = [I3; skew(r)] (force first, then the moment about the CoM:
 * roboest's 6D order), l_i the jet's thrust direction in world axes (R_i axis_i: the frame's world rotation times
 * the configured axis, default [0, 0, -1], normalized), r_i = p_i - c the jet frame's origin relative to the CoM
 * c; G_X_f the wrench transform from foot f's convention to G[I] (world axes, about the CoM): f_G = R f,
 * tau_G = R tau + (p_f - c) x (R f), with R the foot frame's world rotation (RB_DYN_BODY) or I (RB_DYN_MIXED).
 * m = cfg.mass, g = cfg.gravity, e3 = [0 0 1 0 0 0].
 *
 * Discretization [choice; the paper's filter is continuous, PAPERS.md 4.3]: explicit Euler over the interval
 * dt = t_k - t_{k-1} with the previous sample's inputs (u, q and its A, G_X_f): x_k^- = x_{k-1} + dt f(x_{k-1},
 * u_{k-1}), F = I + dt df/dx (analytic: rb_jet_accel_partials for the jet rows, A and G_X_f for the momentum
 * rows), Q_d = Q dt (Q diagonal, variance per second); R is per sample. The first sample only updates.
 *
 * Variants (cfg.variant):
 *   RB_TEKF_COMBINED         the paper's proposal (above).
 *   RB_TEKF_CENTROIDAL_ONLY  the jet model unused (sec. IV): T' = 0 (a random walk with the large process
 *                            variance q_T_centroidal per second on each T); the T_dot rows are uncoupled with zero
 *                            process noise, so T_dot stays at its start (0) with its initial variance.
 *   RB_TEKF_JETS_ONLY        the jet model open loop (sec. V-C): T, T_dot integrated from the start by the Euler
 *                            step above from the throttles alone; L and W are filtered with T taken as exact in
 *                            their Jacobian (dL'/dT = 0 in F), so no covariance links T to the measurements and the
 *                            update never changes T or T_dot (their variances grow open loop).
 * Covariance scheduling (sec. V-E; every variant): with cfg.schedule, jet i is scheduled while |e_i| >
 * sched_threshold (e the rotor speed error input, e.g. desired minus measured rpm) and for sched_hold seconds
 * after it last was; while scheduled, the process variance of its T and T_dot is sched_var (per second) instead
 * of q_T, q_T_dot, so the estimate follows the centroidal dynamics (a jet failing to deliver). A NaN e_i leaves
 * the jet's state as it was. The paper gives no threshold, value or hold [choice: defaults below].
 * After every step each T_i < 0 is set to 0 and its T_dot to max(T_dot, 0) (as the simulator plugin; counted). Perturbation (sec. IV, the robustness test): with
 * perturb > 0 each of the ten coefficients of each jet's model used by the estimator is multiplied by 1 + U,
 * U uniform in [-perturb, perturb) from rb_rng seeded with seed (jet by jet, coefficient by coefficient in the
 * order K_T .. c): rb_tekf_jet_params gives what is used.
 *
 * Defaults (rb_tekf_config_init), where the paper is silent from the public implementation [anchor, PAPERS.md
 * 4.5: thrust_estimation_v1.slx]: P0 = Q = 10 I per block (T, T_dot, L, W), R = 10 I, x0 = 0; ours:
 * q_T_centroidal 1e4, sched_threshold 1000 (rpm), sched_var 1e4, sched_hold 0.5 s, perturb 0, seed 1, gravity
 * 9.81, mass 0 (the model's total mass).
 *
 * Outputs of each step (rb_tekf_out, borrowed until the next step): T, T_dot (t), L (6, the estimate), L_meas (6),
 * W (6 nf, the filtered foot wrenches), W_jets = m g e3 - A T (eq. 9: the wrench the feet / scales must carry,
 * world axes about the CoM, at the step's q), support_N = W_jets[2] and support_kg = support_N / g, scheduled
 * (t flags), var (n: diag P), nis (of the update; NaN without one).
 *
 * NaN handling: a NaN element of z is a missing measurement (the filter skips it); a non-finite q or nu: the
 * step only predicts (with the previous sample's A, G_X_f; counted) and L_meas is NaN; a non-finite throttle (NaN,
 * an overflow): the last finite one is used (0 before any; counted in nan_throttle). A throttle outside [u_min, u_max] of the jet's parameters: clamped
 * and counted, or with cfg.throttle_error RB_EINPUT "sample k: jet <frame>: throttle u outside [min, max]".
 *
 * Errors (rb_err): RB_ECONFIG (no jet; a jet or foot frame out of range; a zero or non-finite axis; a frame listed
 * twice; a variance not finite or <= 0 (Q >= 0); bad schedule or perturbation keys; mass given and more than 2 %
 * from the model's total, "mass 50 kg differs from the model's total mass 41.4 kg by 21 % (more than 2 %)"),
 * RB_EINPUT (time not increasing; the throttle above), RB_ENUMERIC (the filter's failures, naming the sample and
 * the state block), RB_ENOMEM. No allocation per step. */
typedef enum rb_tekf_variant { RB_TEKF_COMBINED = 0, RB_TEKF_CENTROIDAL_ONLY, RB_TEKF_JETS_ONLY } rb_tekf_variant;

typedef struct rb_tekf_jet {
    int frame;            /* model frame index of the jet */
    double axis[3];       /* thrust direction (the force ON the robot) in the frame's axes; any length > 0 */
    rb_jet_params params; /* the jet's model (before any perturbation) */
} rb_tekf_jet;

typedef struct rb_tekf_foot {
    int frame;      /* model frame index */
    rb_dyn_rep rep; /* RB_DYN_BODY or RB_DYN_MIXED */
} rb_tekf_foot;

typedef struct rb_tekf_config {
    const rb_tekf_jet *jets; /* n_jets (copied) */
    size_t n_jets;
    const rb_tekf_foot *feet; /* n_feet (copied); 0: in flight */
    size_t n_feet;
    rb_tekf_variant variant;
    double q_T, q_T_dot, q_L, q_W;     /* process variance per second per element, >= 0 */
    double q_T_centroidal;             /* RB_TEKF_CENTROIDAL_ONLY: the T block's, > 0 */
    double p0_T, p0_T_dot, p0_L, p0_W; /* initial variances, > 0 */
    double r_L, r_W;                   /* measurement variance per element per sample, > 0 */
    bool schedule;
    double sched_threshold; /* the rotor speed error's unit, >= 0 */
    double sched_var;       /* per second, > 0 */
    double sched_hold;      /* s, >= 0 */
    double perturb;         /* fraction in [0, 1); 0: none */
    uint64_t seed;
    double mass;    /* kg; 0: the model's total mass */
    double gravity; /* m/s^2, > 0 */
    bool throttle_error;
} rb_tekf_config;

void rb_tekf_config_init(rb_tekf_config *cfg);

typedef struct rb_tekf rb_tekf; /* opaque */

/* Allocate everything; `model` must outlive the estimator (a floating base is expected: the robot's momentum). */
int rb_tekf_alloc(const rb_model *model, const rb_tekf_config *cfg, rb_tekf **out, rb_err *err);
void rb_tekf_free(rb_tekf *e); /* NULL is a no-op */

/* One sample at time t: q (nq), nu (nv), u (n_jets throttles; not finite: the last one), w_feet (6 per foot in the
 * feet's conventions, NaN elements missing; NULL when n_feet is 0), rpm_err (n_jets; NULL unless cfg.schedule).
 * Allocates nothing. After an error the estimator must not be stepped again. */
int rb_tekf_step(rb_tekf *e, size_t k, double t, const double *q, const double *nu, const double *u,
                 const double *w_feet, const double *rpm_err, rb_err *err);

typedef struct rb_tekf_out {
    const double *T, *T_dot;        /* n_jets, N and N/s */
    const double *L, *L_meas;       /* 6 */
    const double *W;                /* 6 n_feet */
    const double *W_jets;           /* 6 */
    double support_N, support_kg;   /* W_jets . e3 and / g */
    const unsigned char *scheduled; /* n_jets */
    const double *var;              /* n */
    double nis;
} rb_tekf_out;
void rb_tekf_get_out(const rb_tekf *e, rb_tekf_out *out);

typedef struct rb_tekf_diag {
    long steps, updates, predict_only, nan_throttle, clamped_throttle, clamped_thrust, scheduled_steps;
} rb_tekf_diag;
void rb_tekf_get_diag(const rb_tekf *e, rb_tekf_diag *d);
/* The model jet i uses (after the perturbation); NULL out of range. */
const rb_jet_params *rb_tekf_jet_params(const rb_tekf *e, size_t i);
/* The state dimension n and the measurement dimension m. */
void rb_tekf_dims(const rb_tekf *e, size_t *n, size_t *m);

RB_API_END

#include "roboest/observers_biped.h" /* rb_lipm, rb_att, rb_fbse, rb_slip (seed 003) */
#include "roboest/observers_map.h"   /* rb_map (seed 002) */

#endif
