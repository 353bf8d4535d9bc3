/*
 * roboest friction: analytic joint-friction models (static curves, LuGre, stick-slip), slow parameter
 * drift, and least-squares identification of the models that are linear in their parameters. Used by the
 * simulator's friction generators and by the friction_model estimator stage.
 *
 * Units and signs. v is the joint velocity (rad/s); every torque is in N m. The value returned by every
 * function below is the friction torque tau_F with the convention of the joint-torque paper (seed 000,
 * eq. 2: k_t I_m = J_m theta_ddot + tau_F / R + tau / R): the torque reaching the joint is
 *     tau_j = tau_m - tau_F.
 * So tau_F has the sign of the motion it opposes: tau_F > 0 for v > 0. The static curves are odd in v
 * (tau_F(-v) = -tau_F(v)) and, under the validation rules below, dissipative (tau_F v >= 0).
 *
 * Sign function. The exact sgn(v) (with sgn(0) = 0) is discontinuous at v = 0, which makes integrators
 * chatter and identification regressors jump with velocity noise. Models with a `v_eps` parameter use
 *     S(v) = tanh(v / v_eps)   when v_eps > 0  (smooth; |S(v) - sgn(v)| <= 2 exp(-2 |v| / v_eps)),
 *     S(v) = sgn(v)            when v_eps = 0  (the papers' exact sign; the default).
 * Pick v_eps well below the velocities that matter (e.g. v_s / 10 for the SCV model).
 *
 * Models (rb_friction_kind; config name; parameters in their array order, [optional] with its default):
 *   RB_FRICTION_NONE  "none"              no friction: tau_F = 0.
 *   RB_FRICTION_CV    "coulomb_viscous"   F_c, F_v, [v_eps 0]
 *       tau_F = F_c S(v) + F_v v                                    (thesis seed 003, eq. 2.3 / 4.38)
 *       With v_eps > 0 this is also the older joint-torque UKF's rate model k0 tanh(k1 v) + k2 v
 *       (k0 = F_c, k1 = 1 / v_eps, k2 = F_v).
 *   RB_FRICTION_SCV   "scv"               F_c, F_s, F_v, v_s, [v_eps 0]
 *       tau_F = (F_c + (F_s - F_c) exp(-(v / v_s)^2)) S(v) + F_v v  (Stribeck-Coulomb-viscous, seed 000;
 *       the physics term of the friction network; ergoCub r_knee: F_c 0.306, F_s 0.601, F_v 0.673,
 *       v_s 0.0094)
 *   RB_FRICTION_TANH6 "tanh6"             g1, g2, g3, g4, g5, g6
 *       tau_F = g1 (tanh(g2 v) - tanh(g3 v)) + g4 tanh(g5 v) + g6 v (Makkar et al. 2005; thesis eq. 2.6 /
 *       4.37). g4 tanh(g5 v) is the Coulomb term, g6 v the viscous one, the difference of tanh the
 *       Stribeck hump; the static friction is about g1 + g4. Presets: Table 4.1 (below).
 *   RB_FRICTION_LUGRE "lugre"             F_c, F_s, F_v, v_s, sigma0, sigma1
 *       dynamic, bristle deflection z (rad):
 *         g(v)  = F_c + (F_s - F_c) exp(-(v / v_s)^2)
 *         dz/dt = v - sigma0 |v| z / g(v)
 *         tau_F = sigma0 z + sigma1 dz/dt + F_v v
 *       sigma0 (N m/rad) the bristle stiffness, sigma1 (N m s/rad) its damping. At constant v, z tends to
 *       z_ss = g(v) sgn(v) / sigma0 and tau_F to the static curve g(v) sgn(v) + F_v v (returned by
 *       rb_friction_eval); at small displacements x from rest, z ~ x and tau_F ~ sigma0 x (presliding
 *       spring). Stepped by rb_friction_lugre_step (exact in z for v held over the step, stable for any
 *       sigma0 dt). Large sigma1 with large sigma0 can make the model non-dissipative at the presliding
 *       scale (a known LuGre property): keep sigma1 moderate.
 *   RB_FRICTION_STICTION "stiction"       F_c, F_s, F_v, v_stick, [v_s 0]
 *       stick-slip state machine for the simulator (rb_friction_stiction_step): a stuck joint holds any
 *       applied torque up to the breakaway torque F_s; above it, it slips with the sliding friction
 *         (F_c + (F_s - F_c) exp(-(v / v_s)^2)) sgn(v) + F_v v     (v_s > 0; v_s = 0: F_c sgn(v) + F_v v)
 *       and re-sticks when it comes to rest (rules at rb_friction_stiction_step). rb_friction_eval gives
 *       the sliding friction.
 *
 * Validation (rb_friction_validate, run by rb_friction_build and rb_friction_preset). Every parameter is
 * finite, and:
 *   coulomb_viscous  F_c >= 0, F_v >= 0, v_eps >= 0
 *   scv              F_c >= 0, F_s >= F_c, F_v >= 0, v_s > 0, v_eps >= 0
 *   tanh6            g1..g6 >= 0 and g2 >= g3 (so the Stribeck term is >= 0 for v > 0 and tau_F v >= 0)
 *   lugre            F_c > 0 (g(v) > 0 divides), F_s >= F_c, F_v >= 0, v_s > 0, sigma0 > 0, sigma1 >= 0
 *   stiction         F_c >= 0, F_s >= F_c, F_v >= 0, v_stick > 0, v_s >= 0
 * F_s >= F_c: the static (breakaway) friction is at least the Coulomb level, so the Stribeck term decays
 * from F_s at rest to F_c in motion; F_s = F_c is allowed (no Stribeck effect). Failures are RB_ECONFIG
 * with one line naming the model and the parameter: "friction scv: F_s (0.2) must be >= F_c (0.3)".
 *
 * Drift (rb_friction_drift; "two robots with different wear", grease depletion, warm-up). Selected
 * parameters are multiplied by a scale s(t) > 0 (t in s, the caller's clock):
 *   s(t) = r(t) (1 + amplitude sin(2 pi t / period + phase))
 *   r(t) = s0 for t <= t0, s1 for t >= t1, linear in between (t1 = t0: a step at t0)
 * Zero-initialized: s0 = s1 = 0 stands for r = 1 and amplitude 0 for no sine, i.e. no drift. A constant
 * s0 = s1 = 1.3 is a worn copy of a robot. mask: bit i set means parameter i (array order above) drifts;
 * 0 means the model's force parameters (coulomb_viscous F_c F_v; scv, lugre, stiction F_c F_s F_v;
 * tanh6 g1 g4 g6), so the whole static curve scales by s(t) and velocity scales stay put. Rules: s0, s1
 * > 0 (or both 0), t1 >= t0, 0 <= amplitude < 1, period > 0 when amplitude > 0, finite phase, mask bits
 * only on existing parameters; and the model must stay valid at the smallest and largest scale the
 * schedule reaches (min(s0, s1) (1 - amplitude), max(s0, s1) (1 + amplitude)): each rule is linear in s,
 * so it then holds at every t. rb_friction_at_time gives the drifted parameters; rb_friction_step applies
 * them itself.
 *
 * Memory. No function below allocates except the identification (rb_friction_fit), which is offline.
 * Evaluation and stepping take a validated model (unchecked; an invalid kind gives NaN).
 */
#ifndef ROBOEST_FRICTION_H
#define ROBOEST_FRICTION_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/core.h"

RB_API_BEGIN

#define RB_FRICTION_MAX_PARAMS 6

typedef enum rb_friction_kind {
    RB_FRICTION_NONE = 0,
    RB_FRICTION_CV,
    RB_FRICTION_SCV,
    RB_FRICTION_TANH6,
    RB_FRICTION_LUGRE,
    RB_FRICTION_STICTION
} rb_friction_kind;

/* Parameters per kind, fields in the array order of the table above. */
typedef struct rb_friction_cv {
    double F_c;   /* Coulomb level, N m */
    double F_v;   /* viscous coefficient, N m s/rad */
    double v_eps; /* smooth-sign width, rad/s (0: exact sign) */
} rb_friction_cv;

typedef struct rb_friction_scv {
    double F_c, F_s; /* Coulomb and static level, N m */
    double F_v;      /* N m s/rad */
    double v_s;      /* Stribeck velocity, rad/s */
    double v_eps;    /* rad/s (0: exact sign) */
} rb_friction_scv;

typedef struct rb_friction_tanh6 {
    double g1, g2, g3, g4, g5, g6; /* g1, g4 N m; g2, g3, g5 s/rad; g6 N m s/rad */
} rb_friction_tanh6;

typedef struct rb_friction_lugre {
    double F_c, F_s, F_v, v_s; /* as scv */
    double sigma0;             /* bristle stiffness, N m/rad */
    double sigma1;             /* bristle damping, N m s/rad */
} rb_friction_lugre;

typedef struct rb_friction_stiction {
    double F_c;     /* sliding (Coulomb) level, N m */
    double F_s;     /* breakaway torque, N m */
    double F_v;     /* N m s/rad */
    double v_stick; /* re-sticking velocity band, rad/s */
    double v_s;     /* Stribeck velocity of the sliding law, rad/s (0: pure Coulomb) */
} rb_friction_stiction;

typedef struct rb_friction_drift {
    double s0, s1;    /* ramp scales (both 0: no ramp) */
    double t0, t1;    /* ramp start and end, s */
    double amplitude; /* relative sine amplitude in [0, 1) */
    double period;    /* s */
    double phase;     /* rad */
    unsigned mask;    /* drifting parameters (bit i: parameter i); 0: the force parameters */
} rb_friction_drift;

typedef struct rb_friction_model {
    rb_friction_kind kind;
    union {
        rb_friction_cv cv;
        rb_friction_scv scv;
        rb_friction_tanh6 tanh6;
        rb_friction_lugre lugre;
        rb_friction_stiction stiction;
    };
    rb_friction_drift drift; /* zero: none */
} rb_friction_model;

/* Dynamic state (LuGre, stiction); one per joint. */
typedef struct rb_friction_state {
    double z;      /* LuGre bristle deflection, rad */
    double v_prev; /* stiction: v of the previous call */
    bool stuck;    /* stiction: the joint is held */
} rb_friction_state;

/* ---- description ------------------------------------------------------------------------------ */
/* "none", "coulomb_viscous", "scv", "tanh6", "lugre", "stiction"; "?" for an unknown kind. */
const char *rb_friction_kind_name(rb_friction_kind kind);
/* Number of parameters of a kind (0 for an unknown kind); *required (may be NULL): how many must be given. */
size_t rb_friction_param_count(rb_friction_kind kind, size_t *required);
/* Name of parameter i ("F_c", "sigma0", ...); NULL out of range. */
const char *rb_friction_param_name(rb_friction_kind kind, size_t i);

/* Build a model from a config name and n parameters in array order (optional trailing ones take their
 * defaults), no drift, and validate it. RB_ECONFIG: unknown name ("friction: unknown model 'x' (known:
 * ...)"), wrong count ("friction scv: 3 parameters given, expected 4 or 5 (F_c, F_s, F_v, v_s[, v_eps])"),
 * or a validation failure. RB_EINVAL for NULL name/out (or NULL params with n > 0). *out untouched on error. */
int rb_friction_build(const char *name, const double *params, size_t n, rb_friction_model *out, rb_err *err);
/* Check the parameters and the drift (rules above). RB_ECONFIG naming the parameter, RB_EINVAL for NULL. */
int rb_friction_validate(const rb_friction_model *m, rb_err *err);

/* Presets (validated, no drift):
 *   "suralp_leg_1" .. "suralp_leg_6"  tanh6, thesis (seed 003) Table 4.1, joints theta_1..theta_6:
 *        g1 0.7 0.6 0.5 0.4 0.2 0.05, g2 100, g3 10, g4 0.6 0.5 0.4 0.3 0.02 0.01, g5 100, g6 0.9
 *   "ergocub_r_knee"  scv F_c 0.306, F_s 0.601, F_v 0.673, v_s 0.0094, exact sign (the friction network's
 *        identified values)
 * RB_ENOTFOUND for an unknown name (the message lists the known ones). */
int rb_friction_preset(const char *name, rb_friction_model *out, rb_err *err);

/* ---- evaluation (no allocation) ----------------------------------------------------------------- */
/* S(v) of the header: tanh(v / v_eps) for v_eps > 0, else sgn(v) with sgn(0) = 0. */
double rb_friction_sign(double v, double v_eps);
/* The static curve tau_F(v) with the base parameters (drift not applied): the kind's formula; lugre: its
 * steady state g(v) sgn(v) + F_v v; stiction: the sliding law; none: 0. NaN for an unknown kind. */
double rb_friction_eval(const rb_friction_model *m, double v);
/* d tau_F / dv of rb_friction_eval at v (N m s/rad). An exact sign contributes nothing (its jump at 0 is
 * left out), so at v = 0 that is the slope of the continuous part. For EKF / UKF rate models. */
double rb_friction_slope(const rb_friction_model *m, double v);

/* Drift scale s(t) (1 for a zero drift). */
double rb_friction_drift_scale(const rb_friction_drift *d, double t);
/* *out = m with the drifting parameters multiplied by s(t) and a zero drift (so *out is the robot "at
 * time t"); out may equal m. */
void rb_friction_at_time(const rb_friction_model *m, double t, rb_friction_model *out);

/* Start state: z = 0, v_prev = 0, stuck = true (a joint at rest). */
void rb_friction_state_init(rb_friction_state *s);

/* LuGre over one step of dt (s) with v held constant: with a = sigma0 |v| / g(v) the z equation is
 * linear, dz/dt = v - a z, and is advanced exactly:
 *     z+ = z e^(-a dt) + v (1 - e^(-a dt)) / a     (z+ = z + v dt when a = 0, i.e. v = 0)
 * (expm1 keeps small a dt accurate). z+ lies between z and z_ss = v / a, so the update is stable and
 * monotone for any sigma0 dt (explicit Euler needs a dt < 2: sigma0 dt |v| < 2 g(v)). Returns tau_F at
 * the end of the step: sigma0 z+ + sigma1 (v - a z+) + F_v v. *z is updated. dt <= 0 leaves z and
 * returns tau_F at the current z. The base parameters are used (rb_friction_step applies drift). */
double rb_friction_lugre_step(const rb_friction_model *m, double *z, double v, double dt);

/* Stick-slip (kind stiction). Call once per simulation step with the joint velocity v (rad/s, start of
 * the step) and tau_applied, the torque the joint would receive without friction (e.g. the spring torque
 * of the harmonic drive when the motor side winds up while the joint is held, minus gravity/bias terms).
 * Returns tau_F, to be subtracted from tau_applied; *stuck (may be NULL) and s->stuck tell whether the
 * joint is held.
 *   stuck:     |tau_applied| <= F_s: stays stuck, tau_F = tau_applied (net torque 0). The caller holds
 *              the joint (sets its velocity and acceleration to 0: this function does not own them).
 *              |tau_applied| > F_s: breaks away, tau_F = the sliding law in the direction of
 *              tau_applied (at v = 0: F_s sgn(tau) with a Stribeck v_s, else F_c sgn(tau)).
 *   slipping:  tau_F = the sliding law in the direction of v (of tau_applied when v = 0). The joint has
 *              come to rest when
 *                v changed sign or reached 0 since the previous call (v v_prev <= 0, v_prev != 0), or
 *                |v| < v_stick and it is slowing down (|v| < |v_prev|), or
 *                |v| < v_stick and |tau_applied| <= F_c (the torque cannot keep it moving);
 *              it then re-sticks if |tau_applied| <= F_s (and continues as stuck above).
 * Choose v_stick above the velocity one step of Coulomb friction removes, F_c dt / J (J the joint side's
 * inertia); the sign-change rule still catches a joint that jumps over the band. Base parameters. */
double rb_friction_stiction_step(const rb_friction_model *m, rb_friction_state *s, double v, double tau_applied,
                                 bool *stuck);

/* One step of any model at time t (s) with the drift applied: static kinds rb_friction_eval (dt and
 * tau_applied ignored, *stuck false), lugre rb_friction_lugre_step, stiction rb_friction_stiction_step.
 * stuck may be NULL. */
double rb_friction_step(const rb_friction_model *m, rb_friction_state *s, double t, double dt, double v,
                        double tau_applied, bool *stuck);

/* ---- identification ---------------------------------------------------------------------------------
 * Least squares on samples (v_k, tau_F_k) for the models linear in their parameters:
 *   coulomb_viscous  phi = [S(v), v],                          theta = [F_c, F_v]
 *   scv (v_s given)  phi = [S(v), e S(v), v], e = exp(-(v/v_s)^2), theta = [F_c, F_s - F_c, F_v]
 * Every theta element is constrained >= 0 (this is exactly F_c >= 0, F_v >= 0, F_s >= F_c). With p <= 3
 * the non-negative least-squares problem is solved exactly by enumerating the 2^p active sets: the
 * unconstrained solution (rb_lstsq) on every subset of the columns, keep those with theta >= 0, take the
 * one of least residual (the NNLS optimum is the least-squares solution on its own support, so it is
 * among them). A parameter the data would push negative therefore comes out exactly 0.
 * scv with v_s unknown: a 1-D search, the residual of the constrained fit minimized over v_s on a
 * log-spaced grid of `grid` points over [v_s_min, v_s_max] (the residual can have several local minima;
 * the grid picks the global one at its resolution), then a golden-section refinement in log v_s between
 * the best point's neighbours to a relative width of 1e-4.
 * tanh6 (Makkar's model: linear in g1, g4, g6 for given scales g2, g3, g5): the columns
 *   phi = [tanh(g2 v) - tanh(g3 v), tanh(g5 v), v],  theta = [g1, g4, g6] >= 0
 * are fitted by the same exact NNLS (through the 3 x 3 normal equations; a subset whose Gram matrix has a
 * pivot below 1e-12 of its largest diagonal, e.g. g2 = g3, is skipped) for scales searched in log space:
 * every triple of a `grid`-point grid (default 13) over [1 / v_s_max, 1 / v_s_min] (default [1 / max|v|,
 * 1e3 / max|v|] s/rad) with g2 above g3 by at least one grid step (a factor e^step, 1.78 for the default
 * grid: two almost equal scales would make g1 (tanh(g2 v) - tanh(g3 v)) a huge multiple of a tiny column that
 * fits noise), then sweeps of golden-section refinement of one scale at a time within one grid step of its
 * value (the separation kept) to a width of 1e-4 in log g, up to 12 sweeps, until one gains less than
 * 1e-12 of sum tau_F^2; then a Levenberg-Marquardt polish of the three log scales (g1, g4, g6 refitted at
 * every point, Jacobian by forward differences, g2 >= g3 by the grid step kept, not bounded by the bracket;
 * up to 40 steps).
 * The Coulomb-viscous fit with the same v_eps is a second start: tanh6 contains it exactly at g1 = 0,
 * g4 = F_c, g6 = F_v, g5 = 1 / v_eps (v_eps > 0) or, with the exact sign, g5 = 20 / min |v| over the
 * non-zero v, where tanh(g5 v) rounds to sgn(v) on every sample (tanh(20) is 1 in double; v = 0 gives 0 in
 * both); that point and its polish are candidates too. The result is the candidate of least residual summed
 * directly, so its RMSE is never above the Coulomb-viscous fit's on the same samples (exact sign: the
 * embedded point reproduces that fit's values bit for bit; smooth sign: to rounding). The curve is what the
 * fit pins down: when two scales coincide (g2 = g5, as in Table 4.1) g1 and g4 trade against each other
 * and the parameters found may differ from the generating ones while the curve matches. v_eps and v_s
 * are not used. Cost: G^2 (G - 1) / 2 + up to ~500 evaluations of O(N) each (1-3 s for 60 000 samples).
 * Samples whose v or tau_F is not finite are skipped. The fit is returned as a validated model with
 * out->*.v_eps = o->v_eps and no drift. rmse (may be NULL): sqrt(mean (tau_F - model(v))^2) over the
 * samples used. Allocates (offline use). Errors: RB_EINVAL (NULL data, a kind other than coulomb_viscous,
 * scv or tanh6, negative v_eps, a bad bracket), RB_EDIM (fewer finite samples than parameters), RB_ENUMERIC
 * (the velocities do not excite every parameter: a rank-deficient regressor, e.g. every v the same or
 * 0, or for scv no v near the Stribeck region for every v_s tried), RB_ENOMEM. */
typedef struct rb_friction_fit_opts {
    double v_eps;            /* sign in the regressors and the result: tanh(v / v_eps) if > 0, sgn if 0 */
    double v_s;              /* scv: > 0 fixes the Stribeck velocity; 0 searches it */
    double v_s_min, v_s_max; /* search bracket, rad/s; 0: 1e-3 max|v| and max|v| of the samples (tanh6: the
                                velocity scales 1 / g of g2, g3, g5) */
    size_t grid;             /* search grid points (>= 3); 0: 41 (scv), 13 per scale (tanh6) */
} rb_friction_fit_opts;

/* o NULL: all defaults (exact sign, v_s searched). */
int rb_friction_fit(rb_friction_kind kind, const double *v, const double *tau_F, size_t N,
                    const rb_friction_fit_opts *o, rb_friction_model *out, double *rmse, rb_err *err);
/* The same with a constant term: tau_F = model(v) + c, c of either sign (a current sensor's or a torque
 * estimate's bias; the model itself keeps its rules), fitted jointly with the rest (projected out: the
 * regressor columns and tau_F centred, c = mean tau_F - mean(phi) theta; tanh6 likewise at every scale
 * triple). *offset gets c; rmse is then of model(v) + c. offset NULL: rb_friction_fit exactly. */
int rb_friction_fit_offset(rb_friction_kind kind, const double *v, const double *tau_F, size_t N,
                           const rb_friction_fit_opts *o, rb_friction_model *out, double *offset, double *rmse,
                           rb_err *err);

/* The regressor of the table above at v: writes p values into phi (p = 2 for coulomb_viscous, 3 for scv,
 * whose v_s and v_eps are taken from m) and returns p; 0 for other kinds. For recursive identification
 * (rb_rls) of the same parameters. */
size_t rb_friction_regressor(const rb_friction_model *m, double v, double *phi);

/* ==== the friction network (lib/friction/network.c) ===============================================
 * The joint-torque paper's physics-informed friction model (seed 000, section III-A, eq. 4; the
 * design notes' "The friction network"): per joint, a multilayer perceptron maps short histories of
 * the motor and joint velocities to the friction torque now.
 *
 * Inputs. n_in = 2 H values (H >= 1; 20 typical): the H most recent motor velocities, oldest first,
 * then the H most recent joint velocities, oldest first:
 *     x_k = [w_{k-H+1}, ..., w_k, v_{k-H+1}, ..., v_k]
 * w is the motor velocity as the training data gave it (a robot-logger motors_state::velocities channel
 * is rotor side, about R times the joint's, with R's sign), v the joint velocity (rad/s). The network
 * sees exactly what training saw: feed the friction_pinn stage the same quantities (same channels, same
 * kf_derivative filtering, same sample rate).
 *
 * Normalization, per input feature i: xn_i = (x_i - mean_i) / iqr_i with the mean and the inter-quartile
 * range (75th minus 25th percentile, linear interpolation between order statistics: the sorted values
 * s_0..s_{n-1} give the q-quantile s at position q (n - 1)) of the training samples; an iqr below 1e-4 is
 * set to 1 (a feature that hardly varies is only centred).
 *
 * Network (Linear - ReLU - Dropout - Linear - ReLU - Dropout - Linear(1)):
 *     a1 = relu(W1 xn + b1)   (h1),   a2 = relu(W2 a1 + b2)   (h2),   tau_F = w3 . a2 + b3
 * with relu(z) = max(z, 0) (derivative 0 at z = 0). Dropout acts only in training ("inverted" dropout:
 * each hidden unit is zeroed with probability p and the kept ones are scaled by 1 / (1 - p)), so the
 * trained weights are used as they are. tau_F in N m, friction.h's sign convention (tau_j = tau_m - tau_F).
 *
 * Parameters: one flat vector theta, row-major blocks in this order
 *     W1 (h1 x n_in), b1 (h1), W2 (h2 x h1), b2 (h2), w3 (h2), b3 (1)
 * so n_params = h1 (n_in + 1) + h2 (h1 + 1) + h2 + 1.
 *
 * Loss (eq. 4), over N samples with the measured friction torque t_i and the physics model's value p_i
 * (the fitted SCV curve at the sample's current joint velocity v_k):
 *     L = (1 - lambda) (1/N) sum_i (y_i - t_i)^2 + lambda (1/N) sum_i (y_i - p_i)^2,   lambda in [0, 1].
 *
 * Training (rb_friction_net_train), deterministic for a seed (one rb_rng drives the initialization, the
 * shuffles and the dropout masks, in a fixed order; OpenBLAS's products are reproducible on one machine
 * and build, so the same data and options give the same weight bytes there):
 *   1. split: the samples (in the caller's order, e.g. time) are cut into consecutive blocks of `block`
 *      samples and every fifth block (blocks 4, 9, 14, ...) is validation, 20 % of the data spread over
 *      the whole log; blocks rather than single samples because neighbouring samples share most of their
 *      history (a random per-sample split would leak the validation set into training). With fewer than
 *      5 blocks the block length becomes ceil(N / 5). rb_friction_net_split marks them.
 *   2. normalization from the training samples (above); the targets are standardized too (mean mu_t and
 *      standard deviation s_t of the training targets; s_t < 1e-12 is taken as 1) and the network is
 *      trained on (t - mu_t) / s_t and (p - mu_t) / s_t; at the end the scale is folded into the output
 *      layer exactly (w3 <- s_t w3, b3 <- s_t b3 + mu_t), so the stored network outputs N m.
 *   3. initialization: He normal, W ~ N(0, 2 / fan_in) for the ReLU layers and N(0, 1 / fan_in) for the
 *      output layer, biases 0.
 *   4. epochs: the training samples are shuffled (Fisher-Yates), cut into mini-batches of batch_size
 *      (the last one shorter), and each batch takes one Adam step (beta1 0.9, beta2 0.999, eps 1e-8,
 *      bias-corrected, constant learning rate) on the gradient of L over the batch with fresh dropout
 *      masks. After each epoch L is evaluated on the validation samples without dropout.
 *   5. early stopping: the weights of the epoch with the lowest validation loss are kept; training stops
 *      after `patience` epochs without a new lowest value (patience 0: run every epoch).
 * Cost: about 6 B (n_in h1 + h1 h2) flops per batch of B, through OpenBLAS dgemm.
 *
 * Inference (rb_friction_net_forward) allocates nothing: the caller owns a workspace of rb_friction_net_work_size
 * doubles; it runs two cblas_dgemv and a dot product.
 */
typedef struct rb_fnet {
    size_t n_in, h1, h2;
    size_t n_params;
    double *theta; /* n_params, layout above */
    double *mean;  /* n_in: feature means */
    double *iqr;   /* n_in: feature spreads (> 0) */
} rb_fnet;

/* Pointers to the blocks of theta. */
typedef struct rb_friction_net_parts {
    double *W1, *b1, *W2, *b2, *w3, *b3;
} rb_friction_net_parts;

/* A zeroed network (theta 0, mean 0, iqr 1) of the given sizes (all > 0). RB_EINVAL, RB_ENOMEM. Free with
 * rb_friction_net_free (which accepts a zeroed struct). */
int rb_friction_net_alloc(rb_fnet *net, size_t n_in, size_t h1, size_t h2, rb_err *err);
void rb_friction_net_free(rb_fnet *net);
/* *dst = a copy of src (dst is allocated; free it with rb_friction_net_free). */
int rb_friction_net_copy(rb_fnet *dst, const rb_fnet *src, rb_err *err);
rb_friction_net_parts rb_friction_net_parts_of(const rb_fnet *net);
/* He-normal weights, zero biases (step 3 above), drawn from rng. */
void rb_friction_net_init_weights(rb_fnet *net, rb_rng *rng);

/* Doubles of workspace rb_friction_net_forward needs: n_in + h1 + h2. */
size_t rb_friction_net_work_size(const rb_fnet *net);
/* tau_F for raw (unnormalized) inputs x (n_in values, layout above). No allocation, no checks: a NaN
 * input does not give NaN but a finite value (the ReLUs, a > 0 ? a : 0, turn the NaN sums into 0); a caller
 * with inputs that may be NaN discards those outputs, as friction_pinn does while a history fills. */
double rb_friction_net_forward(const rb_fnet *net, const double *x, double *work);

/* The inference form the friction_pinn stage runs per sample: the networks of all joints in one pass
 * (rb_friction_net_infer_forward evaluates every joint's network on its own input), each network with W2
 * stored transposed in single precision, so that the second layer reads half the memory and skips the
 * rows of the units the first ReLU switched off (typically half): per network
 *     xn = (x - mean) / iqr,   a1 = b1 + W1 xn                     (double)
 *     a2 = b2 + sum_{j: a1_j > 0} a1_j W2[:, j]                    (float, j increasing)
 *     y  = b3 + sum_i (a2_i > 0 ? w3_i a2_i : 0)                   (double, i increasing)
 * All the weights sit in one block (every array and every row of W2t on a cache line) and every loop is a
 * hand-vectorised kernel (AVX2 and FMA when the CPU has them, checked once at set-up; else the same
 * arithmetic in plain C), with no call per unit and no branch on a ReLU.
 * Each sum's rounding is fixed and is that of the OpenBLAS 0.3.21 Haswell/Zen kernels (cblas_dgemv, one
 * cblas_saxpy per active unit) the unbatched form of a661b3c ran, so the outputs are the same bits:
 *   - a1_j: four lanes, lane l accumulating the products of the inputs k = l mod 4 in increasing k by
 *     fused multiply-add, reduced as (l0 + l2) + (l1 + l3) and added to b1_j; the last h1 mod 4 units by
 *     separate multiply and add (two lanes, even and odd k, for a pair; four for a single unit); inputs
 *     in blocks of 2048, each block's sum added in turn; then the last n_in mod 4 inputs r = n - n mod 4,
 *     ... as OpenBLAS's compiler contracted its C: one input fma(W_jr, x_r, a1_j), two or three
 *     a1_j + fma(W_j,r+2, x_r+2, fma(W_jr, x_r, W_j,r+1 x_r+1)) (the outer fma with three only).
 *   - a2_i: a fused multiply-add per active unit for i < 32 floor(h2 / 32), a rounded product then an
 *     add for the last h2 mod 32 entries; a unit whose a1_j rounds to 0 as a float adds nothing.
 * The output agrees with rb_friction_net_forward (double throughout) to single precision on the second
 * layer's sums, a relative error of about 1e-6 of the output's scale (tested below 1e-5). Cost at 40
 * inputs and 233/229 hidden units, one core: about 2 us per joint with the weights in cache, 14 us per
 * sample for six joints and 32 for twelve (1.8-1.9x faster than the unbatched form; make bench-friction
 * prints both, and the time merely reading the weights takes: 4.5 us for six joints); on this stop's AMD
 * EPYC, shared, 17-22 us for six joints and 39-49 for twelve, 1.5-1.7x (reading the weights alone 10-18
 * us for six). Deterministic;
 * rb_friction_net_infer_forward allocates nothing (the scratch is the struct's: one call at a time per
 * struct).
 *
 * The block form (rb_friction_net_infer_forward_many) evaluates the networks on many samples at once, for a
 * caller that has them (a pipeline running a block of samples stage by stage). One pass is bound by reading
 * its weights (1.7 MB for six joints, each used once); here a network goes over the samples in sub-blocks of
 * RB_FRICTION_NET_BLOCK, stage by stage, and every slice of its weights goes over all the samples of a
 * sub-block while it sits in L1:
 *   - the first layer in groups of 64 units (20 KB of W1 at 40 inputs), three samples at a time (then two)
 *     sharing every weight load: four units by three samples, twelve independent chains;
 *   - each sample's list of active units (a1 as a float, its W2t row), packed four units at a time;
 *   - the second layer in tiles of 32 entries (233 rows of 128 B: 30 KB of W2t), two samples at a time with
 *     their 2 x 4 vectors of sums in registers over all their active rows (the last h2 mod 32 entries in
 *     the last tile's pass when they fit one vector);
 *   - the terms, and the output sums of eight samples at a time, four to a vector.
 * The networks go one after the other over all the samples of a call, so that each one's weights (0.3 MB)
 * stay in L2 over its sub-blocks. Every sum keeps the per-sample pass's order and operations (fused or not),
 * so the outputs are the same bits (and so a661b3c's), on both kernels (AVX2/FMA and plain C); a NaN input
 * makes no unit active (the comparisons are false) and costs less, not more. Its scratch (about 110 KB at the
 * shipped sizes, the rows f->blk_*) is allocated by init; forward_many allocates nothing.
 * Cost, the same networks on one core of this AMD EPYC (thread CPU time): 1.15-1.3 us per network and sample,
 * 7.3-8 us per sample for six joints and 15.3-15.6 for twelve in calls of 1000 samples (the least of 20-30
 * repetitions, load average 1.3-2). make bench-friction, which alternates it batch by batch with the
 * unbatched form of a661b3c and the per-sample pass (medians of 15 batches, load average 0.5-1.5): 7.5-8.6
 * us for six joints and 15.3-18 for twelve, 3.6-3.95x faster than the unbatched form (29-34 and 60-68 us
 * there) and 2.1-2.6x faster than the per-sample pass; calls of 16 or 64 samples within about 10 % of calls
 * of 1000. The floor set by the multiply-adds alone (40 x 233 + 229 x the ~112 active units, two vector
 * multiply-adds per cycle at 3.6 GHz) is about 0.76 us per network and sample: the first layer runs at
 * about 85 % of it, the second at about 70-80 % (its loop is bound by issuing a row's entry, broadcast and
 * four multiply-adds per sample; wider tiles spill out of L1, narrower ones issue more per multiply-add:
 * both measured slower). */
/* Samples per sub-block of rb_friction_net_infer_forward_many: 4, 8, 16 and 32 measured 8.5-8.8, 8.0-8.1,
 * 7.9 and 7.8-8.0 us per sample for six joints (the least of five runs of 30 calls of 1000 samples), and
 * with the final kernels 16, 18 and 24 within 2 % of each other (7.4-7.6): 16, the smallest scratch of the
 * best (a sub-block's rows, about 110 KB, stay in L2 beside a network's weights). */
#define RB_FRICTION_NET_BLOCK 16

typedef struct rb_friction_net_infer_net {
    size_t n_in, h1, h2;
    const double *mean, *iqr; /* n_in */
    const double *W1, *b1;    /* h1 x n_in, h1 */
    const float *W2t;         /* h1 rows of h2 (stride ld2, h2 rounded up to 16): W2 transposed */
    size_t ld2;
    const double *b2, *w3; /* h2 each */
    const float *b2f;      /* b2 as floats, zero past h2 up to ld2 */
    double b3;
    double *xn, *a1; /* scratch: n_in, h1 */
    float *a2;       /* scratch: h2 */
    double *terms;   /* scratch: h2, the output layer's terms */
} rb_friction_net_infer_net;

typedef struct rb_friction_net_infer {
    size_t n; /* networks */
    rb_friction_net_infer_net *net;
    int simd;           /* 1: the AVX2/FMA kernels, 0: plain C (the same bits); set by init, a test may lower it */
    void *block;        /* the weights and scratch of all networks */
    const float **rows; /* scratch: the W2t rows of one network's active units (largest h1) */
    float *alpha;       /* scratch: their a1 as floats */
    /* scratch of rb_friction_net_infer_forward_many, one sub-block of RB_FRICTION_NET_BLOCK samples, rows
     * sample-major; after a call with count > 0 they hold the last network's rows of the last sub-block
     * (samples RB_FRICTION_NET_BLOCK floor((count - 1) / RB_FRICTION_NET_BLOCK) on, in order) */
    size_t in_max, h1_max, ld2_max;       /* the largest n_in, h1, ld2: the rows' strides */
    void *blk;                            /* the allocation holding the rows below */
    double *blk_xn;                       /* normalized inputs (stride in_max) */
    double *blk_a1;                       /* first-layer sums (stride h1_max) */
    float *blk_a2;                        /* second-layer sums (stride ld2_max) */
    double *blk_terms;                    /* the output layer's terms (stride ld2_max) */
    void *blk_act;                        /* each sample's active units (internal; stride h1_max) */
    size_t blk_na[RB_FRICTION_NET_BLOCK]; /* their counts */
} rb_friction_net_infer;

/* Build the inference form of nets[0..n) (copies; n >= 1; free with rb_friction_net_infer_free, which
 * accepts a zeroed struct). RB_EINVAL (n 0), RB_ENOMEM. */
int rb_friction_net_infer_init(rb_friction_net_infer *f, const rb_fnet *const *nets, size_t n, rb_err *err);
void rb_friction_net_infer_free(rb_friction_net_infer *f);
/* y[i] = tau_F of network i for raw inputs x[i] (its n_in values), every i < n. No allocation, no checks: a
 * NaN input does not give NaN but a finite value (every first-layer sum NaN, so no unit active: the output
 * of b2 alone); a caller with inputs that may be NaN (a history still filling) discards those outputs. */
void rb_friction_net_infer_forward(rb_friction_net_infer *f, const double *const *x, double *y);
/* The same for `count` samples at once (the block form), the same bits as count calls of
 * rb_friction_net_infer_forward: X[i] holds network i's raw inputs sample-major (sample b's n_in values at
 * X[i] + b n_in), Y[b n + i] = network i's output for sample b (count x n, sample-major). count 0 does nothing.
 * Allocates nothing; leaves the per-sample scratch (net[i].xn, a1, a2, terms) alone. */
void rb_friction_net_infer_forward_many(rb_friction_net_infer *f, const double *const *X, size_t count, double *Y);

/* One mini-batch for the loss and its gradient: B samples of normalized inputs. */
typedef struct rb_friction_net_batch {
    size_t B;
    const double *Xn;      /* B x n_in normalized inputs */
    const double *target;  /* B measured friction torques */
    const double *physics; /* B physics-model values (may be NULL when lambda is 0) */
    const double *mask1;   /* B x h1 dropout multipliers (0 or 1 / (1 - p)); NULL: no dropout */
    const double *mask2;   /* B x h2 likewise */
} rb_friction_net_batch;

/* Doubles of workspace rb_friction_net_batch_loss needs for batches of up to B samples. */
size_t rb_friction_net_batch_work_size(const rb_fnet *net, size_t B);
/* L of eq. 4 over the batch (the network applied to Xn directly: the normalization is the caller's) and,
 * when grad is not NULL, dL/dtheta (n_params values, theta's layout) by backpropagation. */
double rb_friction_net_batch_loss(const rb_fnet *net, const rb_friction_net_batch *b, double lambda, double *grad,
                                  double *work);

/* Mark the validation samples of step 1 above: validation[i] for i < n (block 0: the default 500). */
void rb_friction_net_split(size_t n, size_t block, bool *validation);

typedef struct rb_friction_net_train_opts {
    size_t hidden[2];     /* h1, h2 (> 0) */
    double dropout;       /* p in [0, 1) */
    double lambda;        /* physics weight in [0, 1] */
    double learning_rate; /* Adam step size (> 0) */
    size_t epochs;        /* maximum number of epochs (>= 1) */
    size_t batch_size;    /* >= 1 */
    size_t patience;      /* epochs without improvement before stopping; 0: never stop early */
    uint64_t seed;
    /* Called after every epoch (epoch counts from 1) with the mean batch loss of the epoch (with dropout)
     * and the validation loss, both as RMS-like values in N m (sqrt of L); non-zero cancels (RB_EINVAL, or
     * the value when it is a negative rb_status). May be NULL. */
    int (*progress)(void *user, size_t epoch, size_t epochs, double train_loss, double val_loss);
    void *user;
} rb_friction_net_train_opts;

/* Defaults: hidden 233 and 229, dropout 0.1, lambda 0.12 (the ergoCub r_knee values), learning rate 1e-3,
 * 200 epochs, batch 256, patience 20, seed 0, no progress. */
void rb_friction_net_train_opts_init(rb_friction_net_train_opts *o);

typedef struct rb_friction_net_data {
    size_t n, n_in;
    const double *X;        /* n x n_in raw inputs (layout above) */
    const double *target;   /* n measured friction torques, N m */
    const double *physics;  /* n physics-model values, N m */
    const bool *validation; /* n: true for the validation samples (e.g. from rb_friction_net_split) */
} rb_friction_net_data;

typedef struct rb_friction_net_train_result {
    size_t n_train, n_val;
    size_t epochs_run;       /* epochs done (fewer than asked when stopped early) */
    size_t best_epoch;       /* the epoch whose weights were kept (from 1) */
    double rmse_train;       /* sqrt(mean (y - t)^2) of the kept network on the training samples, N m */
    double rmse_val;         /* the same on the validation samples */
    double rmse_physics_val; /* sqrt(mean (p - t)^2) on the validation samples: the physics model alone */
    double loss_val;         /* L (eq. 4) of the kept network on the validation samples, N m^2 */
} rb_friction_net_train_result;

/* Train a network on d (steps above) into *net (allocated here; free with rb_friction_net_free). res may be NULL.
 * Errors: RB_EINVAL (NULL data, options out of range, naming the option), RB_EINPUT (no training or no
 * validation sample), RB_ENUMERIC (a non-finite input, target or physics value: "sample 12: friction
 * target is nan"; or a loss that stops being finite: "epoch 3: the training loss is not finite (lower the
 * learning rate)"), RB_ENOMEM, a progress callback's cancel. *net is left zeroed on failure. */
int rb_friction_net_train(const rb_friction_net_data *d, const rb_friction_net_train_opts *o, rb_fnet *net,
                          rb_friction_net_train_result *res, rb_err *err);
/* The early stopping in words, into buf (size n, truncated): "kept epoch 12 of 32 (stopped 20 epochs after
 * it)", "kept epoch 40 of 40", and when the first epoch was kept out of several "kept epoch 1 of 16: the
 * validation loss never improved after the first epoch (check the learning rate or the data)". Returns true
 * in that last case (a warning: the network is its first epoch's). */
bool rb_friction_net_early_stopping(const rb_friction_net_train_result *r, char *buf, size_t n);

/* ---- the network file --------------------------------------------------------------------------
 * One JSON file holds the networks of several joints (`roboest train-friction` writes it, the
 * friction_pinn stage reads it). Numbers are written as shortest round-trip text, so reading the file
 * gives back the same doubles. Format "roboest-friction-network", version 1:
 *   {
 *     "format": "roboest-friction-network",
 *     "version": 1,
 *     "sample_period": 0.001,            s: the training clock's interval (the stage checks its own)
 *     "inputs": {"layout": "...", "motor_velocity": "...", "joint_velocity": "..."},   descriptions
 *     "provenance": {"roboest_version": "...", ...},                                   strings
 *     "joints": [
 *       {"joint": "r_knee", "H": 20, "hidden": [233, 229],
 *        "normalization": {"mean": [2H numbers], "iqr": [2H numbers > 0]},
 *        "layers": [{"weights": [h1 rows of 2H], "biases": [h1]},
 *                   {"weights": [h2 rows of h1], "biases": [h2]},
 *                   {"weights": [[h2 numbers]], "biases": [1 number]}],
 *        "scv": {"F_c": ., "F_s": ., "F_v": ., "v_s": ., "v_eps": .},   the physics model (friction.h scv)
 *        "training": {"samples_train", "samples_validation", "epochs", "epochs_run", "best_epoch",
 *                     "rmse_train", "rmse_validation", "rmse_scv_validation", "loss_validation",
 *                     "lambda", "dropout", "learning_rate", "batch_size", "patience", "seed",
 *                     "split_block", "warning"}}   informative: read back when present, never required;
 *                                      "warning" only when the first epoch was kept (the text of
 *                                      rb_friction_net_early_stopping)
 *     ]
 *   }
 * The reader checks the format name and version ("unsupported version 2 (this roboest reads 1)"), that
 * joint names are unique and non-empty, H >= 1, every array has its stated size (weights rows and
 * columns against H and hidden), every number is finite, iqr > 0 and the scv model is valid; unknown keys
 * are ignored (informative additions within a version). Errors are one line naming the file and the item:
 * "net.json: joints[1] (elbow): layers[0].weights: row 3 has 39 values, expected 2 H = 40".
 */
#define RB_FNET_FORMAT "roboest-friction-network"
#define RB_FNET_VERSION 1

typedef struct rb_friction_net_joint {
    char *joint;
    size_t H;
    rb_fnet net;                      /* n_in = 2 H */
    rb_friction_model scv;            /* the physics model, kind RB_FRICTION_SCV */
    rb_friction_net_train_opts train; /* options it was trained with (progress unused) */
    size_t split_block;
    rb_friction_net_train_result result; /* its training record */
} rb_friction_net_joint;

typedef struct rb_friction_net_kv {
    char *key, *value;
} rb_friction_net_kv;

typedef struct rb_friction_net_file {
    double sample_period; /* s */
    char *motor_velocity; /* what the motor velocity input was, e.g. "motors_state/velocities" (may be NULL) */
    char *joint_velocity; /* likewise */
    size_t n_provenance;
    rb_friction_net_kv *provenance; /* strings, in file order */
    size_t n_joints;
    rb_friction_net_joint *joints;
} rb_friction_net_file;

/* An empty file description (free with rb_friction_net_file_free). RB_ENOMEM. */
int rb_friction_net_file_new(rb_friction_net_file **out, rb_err *err);
void rb_friction_net_file_free(rb_friction_net_file *f);
/* Append a joint (its fields zeroed; the caller fills them) and return it; RB_ENOMEM. */
int rb_friction_net_file_add(rb_friction_net_file *f, const char *joint, rb_friction_net_joint **out, rb_err *err);
/* Add a provenance string (copied). RB_ENOMEM. */
int rb_friction_net_file_set(rb_friction_net_file *f, const char *key, const char *value, rb_err *err);
int rb_friction_net_file_set_provenance(rb_friction_net_file *f, const rb_provenance *pv, rb_err *err);
/* The joint entry by name, NULL if absent (borrowed). */
const rb_friction_net_joint *rb_friction_net_file_find(const rb_friction_net_file *f, const char *joint);
/* Write through a temporary file renamed into place (nothing at path on failure). RB_EEXISTS, RB_EIO,
 * RB_EINVAL (an entry whose sizes disagree, a non-finite number), RB_ENOMEM. */
int rb_friction_net_file_write(const rb_friction_net_file *f, const char *path, bool overwrite, rb_err *err);
/* Read and check a file (rules above). RB_ENOTFOUND (missing file), RB_EINPUT (anything malformed, naming
 * the item), RB_ENOMEM. *out is NULL on failure. */
int rb_friction_net_file_read(const char *path, rb_friction_net_file **out, rb_err *err);

RB_API_END

#endif
