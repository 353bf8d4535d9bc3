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
 * Samples whose v or tau_F is not finite are skipped. The fit is returned as a validated model with
 * out->*.v_eps = o->v_eps and no drift. rmse (may be NULL): sqrt(mean (tau_F - model(v))^2) over the
 * samples used. Allocates (offline use). Errors: RB_EINVAL (NULL data, a kind other than coulomb_viscous
 * or scv, negative v_eps, a bad bracket), RB_EDIM (fewer finite samples than parameters), RB_ENUMERIC
 * (the velocities do not excite every parameter: a rank-deficient regressor, e.g. every v the same or
 * 0, or for scv no v near the Stribeck region for every v_s tried), RB_ENOMEM. */
typedef struct rb_friction_fit_opts {
    double v_eps;            /* sign in the regressors and the result: tanh(v / v_eps) if > 0, sgn if 0 */
    double v_s;              /* scv: > 0 fixes the Stribeck velocity; 0 searches it */
    double v_s_min, v_s_max; /* search bracket, rad/s; 0: 1e-3 max|v| and max|v| of the samples */
    size_t grid;             /* search grid points (>= 3); 0: 41 */
} rb_friction_fit_opts;

/* o NULL: all defaults (exact sign, v_s searched). */
int rb_friction_fit(rb_friction_kind kind, const double *v, const double *tau_F, size_t N,
                    const rb_friction_fit_opts *o, rb_friction_model *out, double *rmse, rb_err *err);

/* The regressor of the table above at v: writes p values into phi (p = 2 for coulomb_viscous, 3 for scv,
 * whose v_s and v_eps are taken from m) and returns p; 0 for other kinds. For recursive identification
 * (rb_rls) of the same parameters. */
size_t rb_friction_regressor(const rb_friction_model *m, double v, double *phi);

#endif
