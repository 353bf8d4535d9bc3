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

/* ---- rb_lipm: CoM estimation on the linear inverted pendulum (seed 003, Hashlamon thesis ch. 3; PAPERS.md 3.1) ------
 *
 * Per horizontal world axis (x and y, two independent filters), from the measured ZMP p (3.1) and the measured CoM
 * acceleration a (3.4), an adaptive Kalman filter (rb_akf, thesis eq. 2.28-2.42) on the LIPM
 *     c_ddot = (g / z_c) (c - p)                                                              (3.3)
 * in one of two state-space forms (T = t_k - t_{k-1}, the sample's own period: A and B are rebuilt when it changes):
 *   RB_LIPM_FORM1 (3.7-3.11): x = [c, c_dot, c_ddot], A = [[1, T, T^2/2], [0, 1, T], [0, 0, 1]], B = [0, 0, T]^T,
 *       input the jerk u_k = (a_k - a_{k-1}) / T (3.11: the extraction prints c_ddot on the left; it is the
 *       jerk), measurement z = p = [1, 0, -z_c / g] x (3.8). A constant error in a cancels in the input.
 *   RB_LIPM_FORM2 (3.14-3.18): x = [c, c_dot, c_ddot, p], A = [[1, T, T^2/2, 0], [0, 1, T, 0], [0, (g/z_c) T, 1,
 *       0], [0, 0, 0, 1]], B = [0, 0, -(g/z_c) T, T]^T, input the ZMP rate u_k = (p_k - p_{k-1}) / T (3.16),
 *       measurement z = a = [0, 0, 1, 0] x (3.18). A constant error in p cancels in the input.
 * The first sample steps with a zero input and the configured dt. Filter start (Table 3.1, per axis): x0 = [c0, 0,
 * 0(, 0)] (c0 the configured initial CoM, 0 in the thesis), P0 = p0 I, Q0 = q0 I, R0 = r0, windows N_Q, N_R;
 * defaults 100, 1, 1, 2000, 1000.
 * ZMP error (3.21-3.24): e_p = p - (c^ - (z_c / g) a'), a' the acceleration chosen by cfg.perr_acc:
 *   RB_LIPM_PERR_MEASURED (default): the measured a ("the p_ZMP based on acceleration sensor measurements", the
 *       thesis's reading of 3.24; the only one under which form 1 sees an acceleration error: its estimate c_ddot^
 *       follows the ZMP, not a);
 *   RB_LIPM_PERR_ESTIMATED: the estimate c_ddot^ (3.24 as printed, with the dots the extraction dropped).
 * Low-pass [choice: the thesis gives none]: first order, y += b (x - y), b = 1 - exp(-2 pi fc T), starting at 0
 * (the thesis's offset estimate "converges exponentially" from 0), fc = cfg.lpf_cutoff:
 *     offset = LPF(e_p)  (3.21-3.26; form 2's CoM offset),    acc_error = (g / z_c) LPF(e_p)  (form 1's)
 *     corrected = c^ + offset (form 2, 3.26); c^ (form 1).
 * Velocity (3.19): form 2's velocity output is the post-filtered v_f = g3 c_dot^ + (1 - g3) v_f (from 0; g3 0.002 in
 * the thesis's simulation, 0.0025 in its experiment); form 1's is the state c_dot^.
 * Missing data: p NaN (both feet unloaded): form 1 only predicts (the AKF skips the update), form 2 steps with a
 * zero ZMP rate (the ZMP state holds) and the rate restarts from the next defined p; e_p and the low-pass hold.
 * a NaN: form 2 only predicts, form 1 steps with a zero jerk and the next finite a is differenced against the last
 * finite one. e_p is NaN when p or the acceleration it uses is, and the low-pass then holds. Counted (rb_lipm_diag).
 * Errors (rb_err, one line): RB_ECONFIG (z_c, g, dt, p0, q0 not finite or <= 0 (q0 >= 0), r0 <= 0, N_Q or N_R <= 1,
 * g3 outside (0, 1], lpf_cutoff <= 0), RB_EINPUT "sample k: t = ... is not after the previous sample's ...",
 * RB_ENUMERIC "sample k: axis x: ..." (the AKF's failure), RB_ENOMEM. No allocation per step. */
typedef enum rb_lipm_form { RB_LIPM_FORM1 = 1, RB_LIPM_FORM2 = 2 } rb_lipm_form;
typedef enum rb_lipm_perr { RB_LIPM_PERR_MEASURED = 0, RB_LIPM_PERR_ESTIMATED } rb_lipm_perr;

typedef struct rb_lipm_config {
    rb_lipm_form form;
    double z_c;        /* m, CoM height, > 0 (the thesis does not give it) */
    double gravity;    /* m/s^2, > 0 */
    double dt;         /* s, the first sample's period, > 0 */
    double N_Q, N_R;   /* AKF windows, > 1 */
    double p0, q0, r0; /* P0 = p0 I (> 0), Q0 = q0 I (>= 0), R0 = r0 (> 0) */
    double c0[2];      /* m, the initial CoM position per axis */
    double g3;         /* form 2 velocity post-filter, (0, 1] */
    double lpf_cutoff; /* Hz, > 0 */
    rb_lipm_perr perr_acc;
} rb_lipm_config;

/* Defaults: form 1, z_c 0 (must be set), g 9.81, dt 0.001, Table 3.1 (N_Q 2000, N_R 1000, p0 100, q0 1, r0 1, c0 0,
 * g3 0.002), lpf_cutoff 0.1 Hz (ours), perr_acc measured. */
void rb_lipm_config_init(rb_lipm_config *cfg);

typedef struct rb_lipm rb_lipm; /* opaque: both axes */

int rb_lipm_alloc(const rb_lipm_config *cfg, rb_lipm **out, rb_err *err);
void rb_lipm_free(rb_lipm *e); /* NULL is a no-op */
/* One sample: p (2, m, the measured ZMP x y; NaN: undefined), a (2, m/s^2, the measured CoM acceleration x y;
 * NaN: missing). After an error the estimator must not be stepped again. Allocates nothing. */
int rb_lipm_step(rb_lipm *e, size_t k, double t, const double p[2], const double a[2], rb_err *err);

typedef struct rb_lipm_axis_out {
    double pos, vel, acc;     /* the state's c, the velocity output (above), c_ddot */
    double vel_state;         /* the state's c_dot */
    double zmp, zmp_err;      /* p as given; e_p (NaN when p or the acceleration it uses is not) */
    double offset, acc_error; /* LPF(e_p), (g / z_c) LPF(e_p) */
    double corrected;         /* form 2: pos + offset; form 1: pos */
    double var[4];            /* diagonal of P (3 or 4 used) */
} rb_lipm_axis_out;
typedef struct rb_lipm_out {
    rb_lipm_axis_out axis[2];
} rb_lipm_out;
void rb_lipm_get_out(const rb_lipm *e, rb_lipm_out *out);

typedef struct rb_lipm_diag {
    long steps, zmp_undefined, acc_missing;
} rb_lipm_diag;
void rb_lipm_get_diag(const rb_lipm *e, rb_lipm_diag *d);
/* The state dimension: 3 (form 1) or 4 (form 2). */
size_t rb_lipm_dim(const rb_lipm *e);

/* The centre of pressure of one foot from its 6-D wrench w = [f; tau] (N, N m) ON the robot, moment about the
 * wrench frame's origin, in some axes with z the sole normal (the foot frame's, or the world's for a MIXED wrench):
 * the point of the plane z = -h (h >= 0: the sole's depth below the frame origin) where the moment's x and y parts
 * vanish,
 *     cop = [-(tau_y + h f_x) / f_z, (tau_x - h f_y) / f_z, -h]   in the same axes, relative to the origin;
 * *fn = f_z, the normal force. NaN cop when f_z is not > 0. */
void rb_lipm_foot_cop(const double w[6], double h, double cop[3], double *fn);

/* (3.1): the ZMP p (2) of n feet with normal forces fn (n) at points rho (2 per foot, x y): p = sum fn_i rho_i / sum
 * fn_i over the feet with use[i] != 0 (NULL: all) and fn_i > fn_min. Returns the number of feet counted; with none p
 * is NaN. */
size_t rb_lipm_zmp(size_t n, const double *fn, const double *rho, const unsigned char *use, double fn_min, double p[2]);

/* (3.4) with the physically signed lever arm: the CoM's acceleration in world axes from an IMU's proper
 * acceleration f (3, IMU axes, +g up at rest: f = R^T (a - g_vec), g_vec = (0, 0, -g)), angular velocity w and its
 * derivative w_dot (3 each, IMU axes), its attitude R = W_R_I (9, row-major) and r, the IMU's position relative to
 * the CoM (3, IMU axes):
 *     c_ddot^w = R f + g_vec - R (w_dot x r + w x (w x r)).
 * The thesis prints + for the two lever-arm terms with r_I + c_offset "the IMU's position w.r.t. the CoM"; the +
 * holds for the CoM's position w.r.t. the IMU (a_P = a_O + w_dot x (P - O) + w x (w x (P - O))). */
void rb_lipm_com_acc(const double R[9], const double f[3], const double w[3], const double w_dot[3], const double r[3],
                     double g, double c_ddot[3]);

/* Stance-foot anchoring of the feet in the world (the frame of the CoM estimate): a foot loaded at this sample and the
 * previous one stays where it was; the base's position is the one that puts such feet where they are (averaged over
 * them) and otherwise holds; every other foot is placed by the kinematics relative to the base. Caller-owned state,
 * zeroed by rb_lipm_anchor_init. */
typedef struct rb_lipm_anchor {
    double foot[2][3]; /* world positions of the two foot frames */
    double base[3];    /* world position of the base */
    unsigned char loaded[2];
    bool started;
    long held_none; /* samples with no foot held (the base position held) */
} rb_lipm_anchor;
void rb_lipm_anchor_init(rb_lipm_anchor *a);
/* rel: the foot frames' positions relative to the base in world axes (2 x 3: W_R_B B_p_F), loaded (2), base0: the
 * base's world position at the first sample (ignored afterwards). Updates a->foot and a->base. */
void rb_lipm_anchor_step(rb_lipm_anchor *a, const double rel[6], const unsigned char loaded[2], const double base0[3]);
/* ---- rb_att: attitude from one IMU, a gravity-vector KF feeding a quaternion EKF (seed 003, Hashlamon's thesis
 * sec. 2.6 and its reference [100]; the thesis prints no equation: the standard form of ../shared/design/PAPERS.md
 * sec. 3.1 "Attitude (2.6)")
 *
 * Estimates the world orientation of an IMU frame from its accelerometer (proper acceleration, m/s^2: an IMU at rest
 * reads +9.81 along its up axis, as roboest's simulator and the robot logger) and gyroscope (BODY angular velocity,
 * rad/s), both in the IMU frame. No model is needed.
 *
 * Gravity KF: state x = [g_b (3); a_b (3); b_a (3)]: g_b gravity in the IMU frame (its world value [0 0 -g]),
 * a_b the linear acceleration of the IMU in its own axes, b_a the accelerometer bias. Per sample, with the gyroscope
 * w and dt = t_k - t_{k-1}:
 *     g_b,k = exp(-[w]x dt) g_b,k-1         (the world's gravity seen from a frame turning at w: g_b' = -w x g_b)
 *     a_b,k = d a_b,k-1,  d = exp(-lin_acc_decay dt)   (a random walk for decay 0)
 *     b_a,k = b_a,k-1
 *     acc  = -g_b + a_b + b_a + v            (proper acceleration: R^T (a_W - g_W) + bias)
 * The exponential is the exact step of g_b' = -w x g_b at a constant w [ours]; PAPERS.md's I - [w]x dt (cfg.first_order)
 * is its first-order truncation, which lengthens g_b by a factor 1 + (|w| dt)^2 / 2 per step (4 % in a minute at
 * 0.6 rad/s and 100 Hz) that the update, seeing no variance along g_b, hardly corrects.
 * Q = blockdiag((gyro_noise dt)^2 (|g_b|^2 I - g_b g_b^T) (the gyro noise turning g_b, at the prior g_b),
 * lin_acc_rw^2 dt I, bias_rw^2 dt I); R = acc_noise^2 I. The KF is written out for its structure (F block
 * diagonal, H = [-I I I]): x += K nu, P -= W W^T with W = P H^T L^-T, S = L L^T (Cholesky), the same update as the
 * filters module's (test_observers_attitude checks one against the other), without rb_kf's dense 9 x 9 BLAS path
 * (above its 8-element loop limit: 1.6 us a step alone; the whole rb_att_step takes 1.1 us, make bench-attitude).
 * Start-up (the thesis: "decomposing the first accelerometer sample with a pseudo inverse"): at the first sample
 * with a finite accelerometer, x_0 = P_0 H^T (H P_0 H^T)^-1 acc (the minimum-norm solution of acc = H x weighted by
 * P_0 = diag(gravity_std0^2, lin_acc_std0^2, bias_std0^2): with equal weights the plain pseudo-inverse, each term a
 * third of the reading; the defaults give gravity almost all of it), P = P_0. Samples before it: outputs NaN.
 *
 * Observability. acc = -g_b + a_b + b_a is one equation in three unknowns: g_b and b_a come apart only through
 * rotation (g_b turns with the IMU as the gyroscope says, b_a does not) and a_b only through its own model (its
 * decay pulls it to zero: a robot that does not drift away). While the IMU does not rotate, the filter splits a
 * constant reading by its prior variances, and the bias estimate is not a measurement: the part of a real bias
 * across gravity appears as a tilt error of about |b_perp| / g rad (0.01 m/s^2: 0.06 deg).
 *
 * Tilt: with f = -g_b / |g_b| (the world's up in the IMU frame) and R = Rz(yaw) Ry(pitch) Rx(roll)
 * (rb_m3_from_rpy, the robot logger's orientations channels), roll = atan2(f_y, f_z), pitch = atan2(-f_x,
 * hypot(f_y, f_z)).
 *
 * Quaternion EKF: state q (4, w x y z, W_R_I), q_k = (I + dt/2 Omega(w)) q_{k-1} (q' = q (x) [0; w] / 2),
 * Q = (gyro_noise dt / 2)^2 (I - q q^T) (the gyro noise through the process, at the prior q); measurement the
 * "measured quaternion" q_meas = quat(Rz(yaw) Ry(pitch) Rx(roll)) with the KF's roll and pitch and the yaw of the
 * EKF's prediction q_k^- (the thesis borrows the yaw "from the quaternion estimate of the EKF", 0 initially; the
 * prediction's rather than the previous sample's, which would pull the gyro's yaw motion back at every update),
 * flipped to -q_meas when q_meas . q_k^- < 0 (q and -q are one rotation: the innovation is taken in the prediction's
 * hemisphere), h(q) = q, R = quat_noise^2 I. After every update q is normalized by the EKF's projection hook
 * (rb_filter_opts.project): q / |q| with P = J P J^T, J = (I - u u^T) / |q| (u = q / |q|), so P keeps no variance
 * along q (the norm is not uncertain). A sample without an update (no finite accelerometer element) normalizes the
 * prediction the same way. Start-up: q_0 = cfg.q0 when have_q0 (normalized; its roll and pitch are corrected from
 * the next sample, its yaw kept), else quat(roll, pitch of the first gravity estimate, yaw 0); P = quat_std0^2
 * (I - q_0 q_0^T). The two filters feed each other cyclically as the thesis says: the KF gives the EKF roll and
 * pitch, the EKF the KF its yaw (through q_meas; the KF itself needs none).
 *
 * Yaw is NOT observable: gravity fixes roll and pitch only, and without a magnetometer the yaw integrates the
 * gyroscope from its start (0, or cfg.q0's) and drifts with its noise and bias. A gyroscope bias is not estimated
 * (the thesis' form has none): a constant bias b_w tilts roll and pitch by about |b_w| times the filters' time
 * constant and turns the yaw at b_w.
 *
 * Each sample: the gyroscope's non-finite elements hold their last finite value (0 before any; counted); the KF
 * predicts, then updates with the finite accelerometer elements (a NaN or infinite element is skipped; counted); if
 * any was used the EKF predicts and updates with q_meas, else it only predicts. Output q with w >= 0 (the EKF's own
 * state keeps a continuous sign), rpy from it (rb_m3_to_rpy).
 *
 * Errors (one line): RB_ECONFIG "<key> = <value> must be ..." for a noise or std not finite or out of range (> 0:
 * acc_noise, quat_noise, the std0; >= 0 the others), "initial orientation [w, x, y, z] has zero norm" (or a
 * non-finite element); RB_EINPUT "sample k: t = ... is not after the previous sample's ... (dt <= 0)"; RB_ENUMERIC
 * "sample k: ..." (the gravity KF's S not positive definite, a non-finite estimate, the EKF's failures); RB_ENOMEM.
 * No allocation per step. */
typedef struct rb_att_config {
    double acc_noise;                             /* m/s^2: accelerometer white-noise std per sample, > 0 */
    double gyro_noise;                            /* rad/s: gyroscope white-noise std per sample, >= 0 */
    double lin_acc_rw;                            /* m/s^2 per sqrt(s): random walk of a_b, >= 0 */
    double lin_acc_decay;                         /* 1/s: decay rate of a_b, >= 0 (0: a random walk) */
    double bias_rw;                               /* m/s^2 per sqrt(s): random walk of b_a, >= 0 */
    double gravity_std0, lin_acc_std0, bias_std0; /* m/s^2, > 0: initial std (and the start-up split's weights) */
    double quat_noise;                            /* std of each element of the measured quaternion, > 0 */
    double quat_std0;                             /* initial std of each element of q, > 0 */
    bool have_q0;
    double q0[4];     /* w x y z, any non-zero norm (normalized) */
    bool first_order; /* the gravity step I - [w]x dt as PAPERS.md prints it (default: exp(-[w]x dt)) */
} rb_att_config;

/* Defaults (the thesis gives no value; every one ours): acc_noise 0.02 and gyro_noise 0.005 (the simulator's IMU
 * preset, rb_sensor_preset), lin_acc_rw 3, lin_acc_decay 5, bias_rw 1e-3 (the preset's random walk), gravity_std0
 * 10, lin_acc_std0 1, bias_std0 0.1, quat_noise 0.003, quat_std0 0.1, no q0. */
void rb_att_config_init(rb_att_config *cfg);

typedef struct rb_att rb_att; /* opaque */

/* Allocate everything (the two filters). Errors above. */
int rb_att_alloc(const rb_att_config *cfg, rb_att **out, rb_err *err);
void rb_att_free(rb_att *a); /* NULL is a no-op */

/* One sample at time t (s): acc (3, m/s^2) and gyro (3, rad/s) in the IMU frame; non-finite elements as above. k
 * names the sample in messages. Allocates nothing. After an error the estimator must not be stepped again. */
int rb_att_step(rb_att *a, size_t k, double t, const double acc[3], const double gyro[3], rb_err *err);

/* The estimate after the last step (every value NaN before the first finite accelerometer sample). */
typedef struct rb_att_out {
    double q[4];       /* W_R_I as a unit quaternion w x y z, w >= 0 */
    double rpy[3];     /* rad: roll pitch yaw of q (rb_m3_to_rpy) */
    double gravity[3]; /* m/s^2: g_b, gravity in the IMU frame */
    double lin_acc[3]; /* m/s^2: a_b */
    double bias[3];    /* m/s^2: b_a */
    double q_meas[4];  /* the last measured quaternion (as used: in the prediction's hemisphere); NaN without one */
    double var[13];    /* diag P: g_b, a_b, b_a ((m/s^2)^2), then q (w x y z) */
    bool initialized;  /* the start-up sample has been seen */
    bool updated;      /* this sample updated both filters */
} rb_att_out;
void rb_att_get_out(const rb_att *a, rb_att_out *out);

typedef struct rb_att_diag {
    long steps;       /* samples stepped */
    long waiting;     /* samples before the start-up (no finite accelerometer sample yet) */
    long acc_missing; /* samples from the start-up on with a non-finite accelerometer element */
    long no_update;   /* of those, samples with none finite (predict only) */
    long gyro_held;   /* samples with a non-finite gyroscope element (held) */
    long flips;       /* measured quaternions flipped to the prediction's hemisphere */
} rb_att_diag;
void rb_att_get_diag(const rb_att *a, rb_att_diag *d);
/* The gravity KF's 3 x 3 transition (row-major) for the rate w (rad/s) over dt: exp(-[w]x dt), or I - [w]x dt when
 * first_order. */
void rb_att_gravity_step(const double w[3], double dt, bool first_order, double A[9]);

/* ---- rb_fbse: joint friction of a walking biped from its own sensors (seed 003, Hashlamon thesis ch. 4, "foot base
 * sensor estimation"; ../shared/design/PAPERS.md 3.1) -------------------------------------------------------------------
 *
 * The legs' joint rows of the floating-base dynamics (4.3), per leg m in contact:
 *     tau_m = u_F,m + tau^l_m,    tau^l_m = H_m [v_b_dot; w_b_dot; theta_m_ddot] + b_m - J_F,m^T F_E,m      (4.4, 4.5)
 * tau the applied joint torque (the motor torque at the joint), u_F the friction, F_E the foot's measured wrench.
 * The legs are the joint chains from the base to the two foot frames (left then right; base to foot within each):
 * the "leg joints" every per-joint vector below is over.
 *
 * Conventions (roboest/dynamics.h): the base twist is body-fixed; its linear velocity does not enter the joint rows
 * (Galilean invariance, PAPERS.md 0.4) and is taken as zero, so the base orientation is not needed by the dynamics
 * either: gravity enters with the accelerometer's proper acceleration. The base origin's proper acceleration comes
 * from the IMU on the base body at p (base axes) by the rigid transfer
 *     f_B = R_BS f_S - w x (w x p) + p x alpha,    w = R_BS gyro,    alpha = w_b_dot
 * Wrenches: cfg.wrench RB_FBSE_FT: the readings of two six-axis FT sensors between each leg and its foot (the
 * walker's ankle sensors): every body on the foot side of the sensor leaves the model (its inertia zeroed in the
 * estimator's workspace) and the reading acts on the leg there, exact whatever the foot's mass and motion;
 * RB_FBSE_FEET_BODY / RB_FBSE_FEET_MIXED: the wrench ON the robot at each foot frame, in the frame's axes or in
 * world axes (then rotated into the base by the attitude), with the model's feet (sole sensors, the thesis's).
 *
 * Methods (cfg.method):
 *   RB_FBSE_NONSLIP (4.9-4.23): the feet in contact do not move, J_m nu_dot + J_m_dot nu = 0 (J_m the foot frame's
 *     6 x nv MIXED Jacobian), with the base's classical acceleration f_B + R_WB^T g from the IMU and the attitude:
 *       RB_FBSE_ALPHA_MIN_NORM (the thesis's, faithful): [alpha; theta_ddot of the legs in contact] is the
 *         minimum-norm solution A^T (A A^T)^-1 Upsilon of the stacked constraints (6 x 9 in single support, 12 x 15
 *         in double support; the IMU's lever arm moves J_m1 p x alpha into alpha's columns). Approximate: alpha is
 *         not the minimum-norm part in general (PAPERS.md 0.3).
 *       RB_FBSE_ALPHA_GYRO_DIFF (exact away from singularities): alpha = the backward difference of w (low-passed at
 *         cfg.gyro_diff_cutoff when > 0), then each leg's square 6 x 6 solve J_m3 theta_ddot_m = rhs.
 *     The measured friction is u_F = tau - tau^l - armature theta_ddot (4.18).
 *     A leg whose J_m3 is near singular (straight knee: the smallest to largest pivot of the Cholesky factor of
 *     J_m3 J_m3^T below cfg.singular_threshold) gets NaN, no update, and is counted; the other leg is solved alone.
 *   RB_FBSE_FILTERED (4.24-4.36): no acceleration. Per joint a filter Z(s) = K / (s + sigma) (Table 4.2) and, with
 *     w_m = [w; theta_dot_m] and H~_m = [H_m,ang + H_m,lin [p]x, H_m,m + diag(armature)],
 *       xi1 = -H~ w,   xi2 = tau + J_F^T F_E + H~_dot w - H_m,lin c_0 - C_m(q, [0; w; theta_dot]),
 *       <u_F>_Z = K xi1 + <xi2 - sigma xi1>_Z
 *     (c_0 = f_B without its alpha term; H_dot from rb_dyn_mass_matrix_dot). NOTE the sign: (4.31)/(4.34) print
 *     <-xi1>_{Z2} with Z2 = -K sigma / (s + sigma), i.e. - sigma <xi1>_Z; integrating (4.30) by parts gives + sigma
 *     <xi1>_Z (for u_F = tau - m w_dot: <m w_dot>_Z = K m w - sigma <m w>_Z). The filters are discretized exactly for
 *     inputs linear over each sample period (first-order hold); they start so that <u_F>_Z = 0 at the first sample
 *     (the thesis's zero initial conditions, exact for a robot that starts moving, too). The measured friction
 *     output is the filtered one normalized to unit gain, (sigma / K) <u_F>_Z: u_F seen through a first-order
 *     low-pass at sigma rad/s.
 * Identification (4.38-4.44): per joint RLS (rb_rls, thesis eq. 2.18-2.21) of u_F = F_c sgn(theta_dot) + F_v
 * theta_dot, Phi0 = 0, P0 = cfg.p0 I (10), forgetting cfg.lambda (1: none), updated on the samples its leg is in
 * contact (and its measurement finite). Nonslip: y = u_F, regressors [sgn theta_dot, theta_dot] (4.38). Filtered:
 * y = <u_F>_Z with, by default (RB_FBSE_REG_FILTERED), the filtered regressors [<sgn theta_dot>_Z, <theta_dot>_Z]
 * (the same filter: exact for the model); RB_FBSE_REG_LITERAL regresses on the unfiltered ones as (4.39) prints,
 * which identifies about K / sigma times the friction (twice on Table 4.2's theta2 and theta3, PAPERS.md 0.2).
 * The model u_F = F_c sgn(theta_dot) + F_v theta_dot predicts the friction of a swinging leg.
 *
 * Contact: the phase given with each sample (0 double support, 1 left support, 2 right support), or, with phase -1,
 * from the feet's normal force with hysteresis: a foot goes down above cfg.contact_on N and up below cfg.contact_off
 * N (the ground reaction along the foot frame's z; RB_FBSE_FT: minus the force the leg exerts on the foot side).
 *
 * Errors (rb_err, one line): RB_ECONFIG (a foot, IMU or FT sensor not in the model or in the wrong place: the IMU
 * frame off the base body, an FT sensor not between the base and its foot; the feet on one chain or a leg without
 * joints; K or sigma not > 0 or of the wrong length; p0, lambda, thresholds out of range; a fixed base),
 * RB_EINPUT "sample k: ..." (a phase other than -1, 0, 1, 2; a time that does not advance; nonslip without an
 * attitude, or a MIXED wrench without one), RB_ENOMEM. Non-finite joint states, torques, wrenches or IMU values at
 * a sample: no measurement, no update (counted), the model's friction output. No allocation per step. */
typedef enum rb_fbse_method { RB_FBSE_NONSLIP = 0, RB_FBSE_FILTERED } rb_fbse_method;
typedef enum rb_fbse_alpha { RB_FBSE_ALPHA_MIN_NORM = 0, RB_FBSE_ALPHA_GYRO_DIFF } rb_fbse_alpha;
typedef enum rb_fbse_regressors { RB_FBSE_REG_FILTERED = 0, RB_FBSE_REG_LITERAL } rb_fbse_regressors;
typedef enum rb_fbse_wrench { RB_FBSE_FT = 0, RB_FBSE_FEET_BODY, RB_FBSE_FEET_MIXED } rb_fbse_wrench;

typedef struct rb_fbse_config {
    rb_fbse_method method;
    rb_fbse_alpha alpha;           /* nonslip only */
    rb_fbse_regressors regressors; /* filtered only */
    const char *feet[2];           /* left, right foot frames (soles) */
    const char *imu_frame;         /* the IMU's frame, on the base body */
    rb_fbse_wrench wrench;
    const char *ft[2];         /* RB_FBSE_FT: the left and right FT sensors */
    const double *K, *sigma;   /* n_leg each (leg-joint order), 1/s; NULL: Table 4.2 by position in a 6-joint leg */
    const double *armature;    /* n_leg, kg m^2: rotor inertia at the joint (R^2 J_m); NULL: zeros */
    double p0;                 /* > 0: P0 = p0 I (10) */
    double lambda;             /* forgetting factor in (0, 1] (1) */
    double gyro_diff_cutoff;   /* Hz, >= 0 (0: the plain backward difference) */
    double singular_threshold; /* in (0, 1) (1e-3) */
    double contact_on, contact_off; /* N, contact_on > contact_off >= 0 (50, 30) */
} rb_fbse_config;

/* Defaults: nonslip, min_norm, filtered regressors, wrench FT, Table 4.2, p0 10, lambda 1, gyro_diff_cutoff 0,
 * singular_threshold 1e-3, contact 50 / 30 N; feet, imu_frame and ft NULL (set them). */
void rb_fbse_config_init(rb_fbse_config *cfg);

typedef struct rb_fbse rb_fbse; /* opaque */

/* Borrows the model (which must outlive the estimator); copies the configuration. */
int rb_fbse_alloc(const rb_model *model, const rb_fbse_config *cfg, rb_fbse **out, rb_err *err);
void rb_fbse_free(rb_fbse *e); /* NULL is a no-op */
/* Number of leg joints n_leg and leg joint i's model dof (0 <= i < n_leg; left leg first) and leg (0, 1). */
size_t rb_fbse_n_joints(const rb_fbse *e);
size_t rb_fbse_joint_dof(const rb_fbse *e, size_t i);
int rb_fbse_joint_leg(const rb_fbse *e, size_t i);

/* One sample. q, dq, tau: model->n_dofs each (rad, rad/s, N m; joint-list order; only the legs' are read);
 * wrenches 12 (left then right, [f; tau], N and N m: the FT readings as the sensors report them, or the foot
 * wrenches); acc, gyro 3 each (the IMU's proper acceleration, m/s^2, and rate, rad/s, in its axes); R_WI the IMU's
 * attitude (9, row-major W_R_I) or NULL; phase -1 (detect) or 0, 1, 2. */
typedef struct rb_fbse_sample {
    const double *q, *dq, *tau, *wrenches, *acc, *gyro, *R_WI;
    int phase;
} rb_fbse_sample;
int rb_fbse_step(rb_fbse *e, size_t k, double t, const rb_fbse_sample *s, rb_err *err);

/* The last step's results (borrowed until the next step; n_leg each unless said). */
typedef struct rb_fbse_out {
    const double *friction;    /* measured where the leg is in contact (and the measurement finite), else model */
    const double *measured;    /* nonslip u_F; filtered (sigma / K) <u_F>_Z; NaN where the leg is not in contact */
    const double *model;       /* F_c sgn(theta_dot) + F_v theta_dot with the current parameters */
    const double *coulomb;     /* F_c, N m */
    const double *viscous;     /* F_v, N m s/rad */
    const double *link_torque; /* tau - friction (4.4) */
    const double *theta_ddot;  /* nonslip: the solved joint accelerations (NaN off contact); filtered: NaN */
    double alpha[3];           /* nonslip: the base's angular acceleration used or solved (base axes); else NaN */
    unsigned char contact[2];  /* left, right */
    unsigned char singular[2]; /* the leg's constraint was singular at this sample */
} rb_fbse_out;
void rb_fbse_get_out(const rb_fbse *e, rb_fbse_out *out);

typedef struct rb_fbse_diag {
    long steps, updates[2], singular[2], nonfinite; /* samples; per leg: samples that updated its RLS, singular ones */
} rb_fbse_diag;
void rb_fbse_get_diag(const rb_fbse *e, rb_fbse_diag *d);
/* ---- rb_slip: foot slip detection and prediction from an ankle force sensor and a foot accelerometer (seed 003,
 * Hashlamon's thesis ch. 5, eq. 5.1 and 5.18-5.31; ../shared/design/PAPERS.md sec. 3.1 "Slip prediction (ch. 5)")
 *
 * One foot, per axis a of cfg.axes: x and y of the foot frame (the thesis's per-axis form) or t, the tangential
 * magnitude |(x, y)| [ours]. Per sample, in the foot frame (sensor readings turned by cfg.R_ft, cfg.R_acc):
 *     F      the ankle force: the force the foot passes to the ankle (= the ground's force on the robot minus
 *            m_f times the foot's proper acceleration); F_N = F_z the normal force, F_t,a its tangential part
 *     p''    the foot accelerometer minus its bias (the mean of the first cfg.bias_samples readings, gravity at the
 *            initial orientation included: the foot is taken as flat whenever it is in contact)
 *     F_f,a  = F_t,a + m_f p''_a       the ground's friction force (eq. 5.19 with the ankle force's sign: F_slip =
 *            m_f p'' is the difference of the two, eq. 5.18)
 * With cfg.ratio the forces are divided by F_N (the thesis's mu form, F_suf = mu_suf F_N; a sample with F_N <= 0
 * in contact has an infinite ratio and is never learned from) and every threshold and the margin are ratios.
 * Contact (step 2): the caller's flag when it has one (a gait phase), else F_N > contact_on, kept until F_N <
 * contact_off (hysteresis). Out of contact the thresholds hold (5.21), nothing is detected, the class is RB_SLIP_NO.
 * Slip detection (step 3): |p''_a| >= tr (m/s^2; the thesis's Tr = 0.09, "depending on the initial accelerometer
 * reading": hence the bias); during the bias window p'' is the reading minus the running mean.
 * Thresholds, learned (cfg.learn) per axis from F_s, F_st, F_c = cfg.fs0, fst0, fc0 (step 1; the thesis gives no
 * start value: 0 makes F_c follow F_s until the first slip):
 *   not slipping (step 4): F_f = F_t (5.22); F_s = max(|F_f|, F_s) (5.23: the running maximum while not slipping);
 *                          F_c = min(F_s, F_c) (5.24); if |F_f| > F_c + F_st: F_c = ||F_f| - F_st| (5.25)
 *   slipping (step 5):     F_c = min(|F_f|, F_c) (5.27); F_s held (5.28); F_st = max(F_s - F_c, 0) (5.29)
 *   both:                  F_suf = max(F_c - F_ms, 0) (5.26, 5.30)
 * or fixed (cfg.learn false: fs0, fst0, fc0 as given; F_suf from fc0). Prediction (5.20 and the thesis's Fig. 5.5):
 *     RB_SLIP_SLIPPING if |F_t| >= F_c,  RB_SLIP_TENDS if F_suf < |F_t| < F_c,  RB_SLIP_NO if |F_t| <= F_suf.
 * cfg.hold_after_touchdown (s, ours; 0 the thesis): after each contact begins, detection and learning wait that long
 * (a touch-down's impact reads as an acceleration spike); the prediction runs.
 *
 * Errors (one line, RB_ECONFIG) from rb_slip_init: "foot_mass = <v> must be > 0", "slip_threshold ... >= 0",
 * "safety_margin ... >= 0", a non-finite or negative start threshold, no axis, contact_off > contact_on, a rotation
 * that is not orthonormal. rb_slip_step never fails; a non-finite force or acceleration element makes that sample's
 * outputs NaN and holds the state (counted in rb_slip.n_nonfinite). No allocation anywhere. */
typedef enum rb_slip_class { RB_SLIP_NO = 0, RB_SLIP_TENDS = 1, RB_SLIP_SLIPPING = 2 } rb_slip_class;
typedef enum rb_slip_axis { RB_SLIP_X = 0, RB_SLIP_Y = 1, RB_SLIP_T = 2 } rb_slip_axis;
enum { RB_SLIP_MAX_AXES = 3 };

typedef struct rb_slip_config {
    double foot_mass;         /* m_f, kg, > 0: the mass below the force sensor */
    double tr;                /* slip threshold on |p''|, m/s^2, >= 0 */
    double margin;            /* F_ms, >= 0: N, or a ratio with `ratio` */
    bool ratio;               /* thresholds on |F_t| / F_N */
    bool learn;               /* learn the thresholds (true) or keep fs0, fst0, fc0 */
    size_t bias_samples;      /* accelerometer bias from the first samples; 0: none */
    size_t hold_samples;      /* hold_after_touchdown in samples (0: none) */
    double contact_on;        /* N: contact begins when F_N exceeds it (no caller flag) */
    double contact_off;       /* N, <= contact_on: and ends when F_N falls below it */
    double R_ft[9], R_acc[9]; /* foot <- force sensor, foot <- accelerometer rotations, row-major */
    size_t n_axes;            /* 1 .. RB_SLIP_MAX_AXES */
    rb_slip_axis axes[RB_SLIP_MAX_AXES];
    double fs0[RB_SLIP_MAX_AXES], fst0[RB_SLIP_MAX_AXES], fc0[RB_SLIP_MAX_AXES]; /* per axis, >= 0, finite */
} rb_slip_config;

/* Defaults: foot_mass 1, tr 0.09 * 9.80665 (the thesis's 0.09 read as g), margin 5 (the thesis's F_ms, N), force
 * thresholds, learn, bias_samples 200, hold 0, contact_on 30, contact_off 15, identity rotations, one axis x, start
 * thresholds 0. */
void rb_slip_config_init(rb_slip_config *cfg);

typedef struct rb_slip_out {
    double ft[RB_SLIP_MAX_AXES], ff[RB_SLIP_MAX_AXES];   /* F_t, F_f (ratios with cfg.ratio) */
    double fs[RB_SLIP_MAX_AXES], fst[RB_SLIP_MAX_AXES];  /* F_s, F_st */
    double fc[RB_SLIP_MAX_AXES], fsuf[RB_SLIP_MAX_AXES]; /* F_c, F_suf: the margin band [F_suf, F_c] */
    double acc[RB_SLIP_MAX_AXES];                        /* p''_a, m/s^2 */
    unsigned char detected[RB_SLIP_MAX_AXES];            /* |p''_a| >= tr, in contact */
    rb_slip_class prediction[RB_SLIP_MAX_AXES];          /* 5.20 */
    rb_slip_class worst;                                 /* the largest over the axes */
    double normal;                                       /* F_N, N */
    bool contact;
} rb_slip_out;

/* The estimator of one foot (plain data: the caller owns it, nothing to free). */
typedef struct rb_slip {
    rb_slip_config cfg;
    double fs[RB_SLIP_MAX_AXES], fst[RB_SLIP_MAX_AXES], fc[RB_SLIP_MAX_AXES];
    double bias[3], bias_sum[3];
    size_t n_bias, since_contact;
    bool contact;
    long n_steps, n_contact, n_detected, n_nonfinite;
} rb_slip;

/* Check cfg (errors above) and reset the state to it. */
int rb_slip_init(rb_slip *s, const rb_slip_config *cfg, rb_err *err);
/* One sample: force (3, N: fx fy fz in the force sensor's frame, the force the foot passes to the ankle), acc (3,
 * m/s^2, the accelerometer's proper acceleration in its frame), contact: 1 or 0 from the caller, -1 to detect it
 * from F_N. Fills *out. */
void rb_slip_step(rb_slip *s, const double force[3], const double acc[3], int contact, rb_slip_out *out);
/* The class a force takes against thresholds (5.20): |ft| >= fc slipping, > fsuf tends to slip, else no slip. */
rb_slip_class rb_slip_classify(double ft, double fsuf, double fc);
/* The rotation foot <- sensor of two frames of a model (at q = 0; frames as rb_model_frame_index): R (row-major)
 * and *rigid, false when a movable joint lies between their bodies (a sensor "not on the foot": the rotation then
 * holds at q = 0 only; the caller warns). RB_EINVAL for a frame index out of range. */
int rb_slip_mount(const rb_model *model, size_t foot_frame, size_t sensor_frame, double R[9], bool *rigid, rb_err *err);
/* ---- rb_map: maximum-a-posteriori whole-body dynamics (seed 002, the CoDyCo slides' "MAP dynamics"; the standard
 * form with a prior is ../shared/design/PAPERS.md sec. 2.2, BERDY)
 *
 * Unknowns, per body i of the model (roboest/model.h bodies; model.h conventions: 6D vectors linear first, body
 * axes, moments about the body origin):
 *     d_i = [a_i (6), f_i (6), tau_i, f_x_i (6), qdd_i]
 * a_i the body's proper spatial acceleration (gravity enters once, through the base: a_0 = -g on a fixed base),
 * f_i the wrench its parent exerts on it across its joint, tau_i = S_i^T f_i and qdd_i its joint's torque and
 * acceleration (movable joints only), f_x_i the external wrench acting ON it. The base: a floating base has
 * d_0 = [a_0, f_x_0] (no joint to the world); a fixed base has no unknowns (a_0 = -g, its mount bears whatever acts
 * on it). d stacks the d_i in body order (the dense path's order).
 *
 * Constraints D(q) d + b_D(q, qd) = 0 (the slides' three lines), per body i >= 1 with parent p:
 *     a_i = iX_p a_p + S_i qdd_i + v_i x S_i qd_i                         (6 rows)
 *     f_i = I_i a_i - f_x_i + sum_{c child of i} iX*_c f_c + v_i x* I_i v_i    (6 rows; the floating base: f_0 = 0)
 *     tau_i = S_i^T f_i                                                   (1 row, movable joints)
 * each with variance var_dyn (the model's uncertainty; tight). Velocities v_i from q, qd and the base's angular
 * velocity (below); the base's linear velocity does not change any force and is taken as zero (a_0 is then the
 * classical acceleration of the base origin, as rb_ft_est does).
 *
 * Sensor rows Y d + b_Y = y (the slides' y_acc, y_gyr, y_fts; each element one row with its variance):
 *   FT sensor s on the fixed joint of body j (j the joint's tree child): y = sign X*_{F<-j} f_j, as the sensor
 *     reports it (model.h: the wrench of the parent half on the child half, or its opposite, in its reading frame F).
 *     The sensor splits the link in two bodies, so the slides' I_im term is zero here.
 *   accelerometer at frame F on body b: y = (FX_b a_b)_l + (FX_b v_b)_a x (FX_b v_b)_l (proper, m/s^2, F axes);
 *   gyroscope at F on b: y = FR_b (v_b)_a (no unknown of d: see the base's angular velocity);
 *   joint accelerations: y = qdd_i; joint torque sensors: y = tau_i;
 *   known external wrench at frame F on body b (BODY: F's axes, about its origin, acting on the robot):
 *     y = X*_{F<-b} f_x_b.
 * A non-finite reading drops its row (counted: rb_map_out.dropped).
 *
 * Prior d ~ N(0, Sigma_d), diagonal: f_x_i of the links in cfg.unknown (and of links with a known wrench) variance
 * var_unknown (wide), of every other link var_zero (a tight zero prior: no external wrench there); a_i, f_i, tau_i,
 * qdd_i var_free (uninformative). INFINITY: no prior on them (their precision 0).
 *
 * Estimate: d = argmax p(d | y), the minimizer of
 *     J(d) = |D d + b_D|^2_{Sigma_D^-1} + |Y d + b_Y - y|^2_{Sigma_y^-1} + |d|^2_{Sigma_d^-1},
 *     N d = Y^T Sigma_y^-1 (y - b_Y) - D^T Sigma_D^-1 b_D,  N = D^T Sigma_D^-1 D + Y^T Sigma_y^-1 Y + Sigma_d^-1,
 * with covariance N^-1. Outputs: the joint torques, the external wrenches at the frames of cfg.unknown (BODY, as
 * rb_ft_est's contacts), their standard deviations (from the diagonal of N^-1; the wrenches' from its 6 x 6 block
 * of f_x through X*), and the whitened residual norm sqrt(J(d)) (its square has expected value the number of
 * constraint and sensor rows when every variance is right).
 *
 * Base angular velocity (floating base): before the MAP, w_0 by weighted least squares from the gyroscopes
 * (each gives w_0 through the joint velocities between the base and its frame); without a gyroscope (or none
 * finite at a sample) w_0 = 0: rb_map_diag.base_rate_unobserved (a floating base with accelerometers and no
 * gyroscope: the angular velocity is unobserved, and the velocity-product terms are wrong while the base turns).
 * The base's acceleration a_0 is an unknown of d, fixed by the accelerometer rows (and by the base's dynamics
 * where its external wrench has a tight prior).
 *
 * Solvers (cfg.dense):
 *   sparse (default): N is block-tree-sparse. Each f_c is kept in its PARENT's block, so block i = [a_i, f_x_i,
 *     tau_i, qdd_i, f_c for the children c of i]: every row then touches one body's block and its parent's, N has
 *     fill only between parent and child, and the block Cholesky factorization eliminates the leaves first
 *     (the reverse body order) without fill, O(bodies) (as lib/sim's tree factorization of the mass matrix, on
 *     blocks); the covariance's diagonal blocks by the selected-inverse recursion from the root.
 *   dense: the explicit D, Y and N (BLAS dsyrk) in d's order, LAPACK Cholesky; for tests (the two agree).
 * Both follow with one step of iterative refinement on the seminormal equations (the residual from the rows): the
 * constraint rows can outweigh the sensor rows by 1e10, which costs the normal equations digits. Neither allocates
 * per step (OpenBLAS single-threaded, as the roboest command runs it).
 *
 * Observability. rb_map_alloc builds N at the neutral configuration: when it is singular (a quantity no row and no
 * prior fixes: an unknown wrench without a prior on a link whose sub-model's balance is already used, a joint
 * acceleration without its sensor and no prior, ...) it fails with RB_ECONFIG naming the unobservable quantities
 * and their links ("unobservable (no prior and no sensor fixes them): external wrench of r_upper_leg,
 * r_lower_leg"). A step whose N is not positive definite fails with RB_ENUMERIC naming the link.
 *
 * Errors of rb_map_alloc: RB_EINVAL (NULL arguments, an index out of range), RB_ECONFIG: a frame listed twice or
 * two unknown-wrench frames on one link, a variance not positive (or NaN; var_free and var_unknown may be
 * INFINITY), an FT sensor whose joint is not a fixed joint joining its two bodies (not a sensor joint of the
 * model), an unknown or known wrench on a fixed base ("the mount bears it"), a known and an unknown wrench on one
 * link, the observability failure above; RB_ENOMEM. */
typedef struct rb_map_config {
    const int *ft; /* n_ft model->ft indices: the FT readings' order */
    size_t n_ft;
    const double *var_ft; /* 6 n_ft: variance of each reading element, N^2 and (N m)^2 */
    const int *acc;       /* n_acc accelerometer frames */
    size_t n_acc;
    const double *var_acc; /* 3 n_acc, (m/s^2)^2 */
    const int *gyro;       /* n_gyro gyroscope frames */
    size_t n_gyro;
    const double *var_gyro; /* 3 n_gyro, (rad/s)^2 */
    bool ddq;               /* the joint accelerations are measured (n rows) */
    const double *var_ddq;  /* n (model->n_dofs), (rad/s^2)^2; read when ddq */
    const int *tau;         /* n_tau dofs with a joint torque sensor */
    size_t n_tau;
    const double *var_tau; /* n_tau, (N m)^2 */
    const int *known;      /* n_known frames where a measured external wrench acts (one per link) */
    size_t n_known;
    const double *var_known; /* 6 n_known */
    const int *unknown;      /* n_unknown frames whose links may bear unknown external wrenches (one per link) */
    size_t n_unknown;
    double var_dyn;     /* variance of each constraint row (the rows' units), > 0 */
    double var_free;    /* prior variance of a, f, tau, qdd, > 0 or INFINITY (no prior) */
    double var_unknown; /* prior variance of f_x on the links of unknown and known, > 0 or INFINITY */
    double var_zero;    /* prior variance of f_x on every other link, > 0 */
    bool dense;         /* the dense solver */
    bool covariance;    /* compute the standard deviations (else NaN) */
} rb_map_config;

/* Defaults: no sensors, var_dyn 1e-6, var_free 1e4, var_unknown 1e4, var_zero 1e-6, sparse, covariance. */
void rb_map_config_init(rb_map_config *cfg);

typedef struct rb_map rb_map; /* workspace (opaque) */

/* Copies the configuration; borrows the model (it must outlive the workspace). Errors above. */
int rb_map_alloc(const rb_model *model, const rb_map_config *cfg, rb_map **out, rb_err *err);
void rb_map_free(rb_map *map); /* NULL is a no-op */

/* One sample's readings, in the configuration's orders (NULL for a sensor group the configuration has none of). */
typedef struct rb_map_input {
    const double *s, *s_dot; /* joint positions and velocities (n each), finite */
    const double *s_ddot;    /* n joint accelerations (read when cfg.ddq) */
    const double *ft;        /* 6 n_ft */
    const double *acc;       /* 3 n_acc */
    const double *gyro;      /* 3 n_gyro */
    const double *tau;       /* n_tau */
    const double *known;     /* 6 n_known */
} rb_map_input;

/* The estimate for one sample. RB_ENUMERIC: a non-finite joint position or velocity (named), N not positive
 * definite (the link named); RB_EINVAL: NULL arguments. Allocates nothing. */
int rb_map_step(rb_map *map, const rb_map_input *in, rb_err *err);

/* After a step (borrowed until the next one). */
typedef struct rb_map_out {
    const double *tau;        /* n: joint torques (N m, N) */
    const double *tau_std;    /* n */
    const double *wrench;     /* 6 n_unknown: external wrench at each frame of cfg.unknown, BODY, ON the robot */
    const double *wrench_std; /* 6 n_unknown */
    const double *d;          /* the whole estimate, d's order (rb_map_layout) */
    double base_rate[3];      /* floating base: w_0 used (rad/s, base axes); fixed: 0 */
    double residual;          /* sqrt(J(d)) */
    size_t rows;              /* constraint and sensor rows used */
    size_t dropped;           /* sensor rows dropped at this sample (non-finite readings) */
} rb_map_out;
void rb_map_get_out(const rb_map *map, rb_map_out *out);

typedef struct rb_map_diag {
    size_t n_unknowns;         /* dim d */
    bool base_rate_unobserved; /* a floating base without gyroscopes */
    long steps, dropped;       /* steps, sensor rows dropped over them */
    long rate_unobserved;      /* steps with a floating base and no finite gyroscope reading */
} rb_map_diag;
void rb_map_get_diag(const rb_map *map, rb_map_diag *diag);

/* Where body b's unknowns are in d: offsets of a, f, tau, f_x, qdd (-1 when absent). RB_EINVAL out of range. */
typedef struct rb_map_layout {
    long a, f, tau, fx, qdd;
} rb_map_layout;
int rb_map_layout_of(const rb_map *map, size_t body, rb_map_layout *out, rb_err *err);

RB_API_END

#endif
