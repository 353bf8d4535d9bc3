/*
 * roboest sim: the simulation engine behind `roboest simulate`. A scenario (plain C structs, filled by the
 * JSON layer or by code) runs a model with a fixed base (a leg or an arm on a pole) or a floating base with
 * rigid contacts (a humanoid standing on both feet), joint references tracked by a joint-level controller,
 * actuators with the joint-torque paper's motor-current model, joint friction (roboest/friction.h) with
 * drift, unmeasured pushes, contact events and payload changes. The engine is init / step / finish: the
 * caller owns the loop (GSL style); after rb_sim_init and after every rb_sim_step the TRUE state of the
 * current sample is in rb_sim_truth_get(sim) (a struct of arrays owned by the engine). The sensor-side parts of
 * the truth (frame motion, FT wrenches, energy, centre of mass) cost passes of their own: with
 * scenario->truth_on_demand the engine computes them only when the caller asks (rb_sim_truth_compute), e.g. at
 * the samples it logs.
 *
 * Conventions: roboest/spatial.h and roboest/dynamics.h (q, nu, nu_dot; 6D vectors linear first; units SI).
 * Joint vectors (n = model->n_dofs) follow the model's joint-list order.
 *
 * Physics per step (dt):
 *   1. At the start of the step (time t_k, state x_k) the engine evaluates, once, and holds over the step
 *      (zero-order hold, as a real 1 kHz loop does): the references, the controller, the actuators (current
 *      saturation), the friction torques (rb_friction_step at t_k with the drifted parameters; the LuGre
 *      state and the stiction state advance once per step), the pushes and the payload.
 *   2. The rigid-body acceleration solves
 *          (M(q) + diag(R^2 J_m)) nu_dot + h(q, nu) = S^T (tau_m - tau_F) + sum J_e^T w_e + J_c^T lambda,
 *          J_c nu_dot + J_c_dot nu = -kd v_c - kp e                                 (active contacts)
 *          s_ddot_j = 0                                              (joints held by stiction)
 *      by a Cholesky factorization of M + diag(R^2 J_m) and of the Schur complement J_c M^-1 J_c^T
 *      (rotor inertia reflected through the gear). M + diag(R^2 J_m) is factored as L^T L keeping the tree's
 *      sparsity (Featherstone's LTL, coordinates numbered parents first), and J_c M^-1 J_c^T = Y^T Y with
 *      Y = L^-T J_c^T, so a contact row only touches the coordinates of its branch.
 *      lambda are the contact wrenches ON the robot (MIXED: world axes, about the contact frame's origin).
 *      The joint torque is tau_j = tau_m - tau_F - R^2 J_m s_ddot (joint side), i.e. the paper's eq. 2
 *          k_t I_m = J_m theta_ddot + tau_F / R + tau_j / R,   theta = R s (rotor side),
 *      so rb_dyn_rnea(q, nu, nu_dot, ext + contacts) = tau_j exactly (for the logged sample). The gear torque
 *      tau_g = tau_m - R^2 J_m s_ddot = tau_j + tau_F is what the gear transmits (see the actuators' k_gear).
 *   3. Integration (RB_SIM_EULER): semi-implicit Euler, nu+ = nu + dt nu_dot, q+ = q (+) dt nu+
 *      (rb_dyn_integrate: exact SE(3) for the floating base). RB_SIM_RK4: classical 4-stage Runge-Kutta on
 *      (q, nu) with the step's held torques; every stage solves the full constrained system above at its
 *      own state (the contact constraint and its Baumgarte terms are enforced at every stage, the contact
 *      wrenches are stage values), and the configuration update is q+ = q (+) dt (k1 + 2 k2 + 2 k3 + k4)/6
 *      with stage configurations q (+) c dt k (a Lie-group RK without the dexp correction: 4th order for
 *      the joints, 2nd order for the floating base's rotation). The logged sample is stage 1 (state x_k).
 *   Stiction (RB_FRICTION_STICTION joints, on the joint side of the gear): at the start of the step, the stuck
 *   joints and the slow ones (|s_dot| < v_stick) are held (s_ddot = 0 as extra constraint rows) to get the
 *   torque holding needs; rb_friction_stiction_step then decides per joint; held joints get tau_F = the exact
 *   holding torque of the final solve and s_dot = 0 (re-sticking is an inelastic stop). A slipping joint's
 *   applied torque is approximated by tau_m. With a rigid gear (k_gear = 0) a stuck joint holds the motor
 *   too; with a gear compliance k_gear > 0 the motor winds up against the held joint: the rotor angle
 *   R (s + tau_g / k_gear) follows the motor torque while s stays put, until the breakaway torque
 *   (the quasi-static windup of the actuators section; it does not feed back into the dynamics).
 *   4. Joint limits (scenario->joint_limits): after the integration, a joint beyond a limit of the model
 *   (model->dof_lower / dof_upper) is put back on it and its velocity component into the limit is zeroed (an
 *   inelastic one-sided stop acting between steps: the sample's accelerations and torques are those of the
 *   free dynamics, the stop's impulse is not in tau_j); truth->at_limit marks the joints on a limit. The
 *   initial configuration is clamped the same way. Off (the default): limits are ignored.
 *
 * Determinism: no wall clock, no threads; all randomness (random pushes) from rb_rng seeded with
 * scenario->seed. The same scenario and seed give bit-identical truth arrays on the same machine and build.
 *
 * Memory: rb_sim_init allocates everything (the engine, its dynamics workspaces, the truth arrays, the
 * random push schedule); rb_sim_step allocates nothing (neither rb_malloc nor the C library).
 *
 * Errors: RB_EINVAL (NULL arguments, an index out of range), RB_ECONFIG (an invalid scenario: one line naming
 * the field, e.g. "sim: joint 2: actuator: R must be non-zero"), RB_ENUMERIC (a singular system or a
 * non-finite state, with the time), RB_ENOMEM.
 */
#ifndef ROBOEST_SIM_H
#define ROBOEST_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roboest/core.h"
#include "roboest/dynamics.h"
#include "roboest/friction.h"
#include "roboest/io.h"
#include "roboest/model.h"
#include "roboest/sim_flight.h"   /* rb_sim_flight: the jets' flight controller */
#include "roboest/sim_contact.h"  /* rb_sim_floor: frictional contacts */
#include "roboest/sim_sensors.h"  /* rb_sensor: the sensor models */
#include "roboest/sim_gait.h"     /* balancing and walking: rb_sim_balance, rb_sim_gait */
#include "roboest/sim_mismatch.h" /* rb_sim_mismatch, rb_sim_random_contacts */
#include "roboest/spatial.h"

RB_API_BEGIN

/* ---- references ----------------------------------------------------------------------------------------
 * A joint reference r(t) (rad) with its first two derivatives (the controllers use all three):
 *   RB_REF_CONST     offset
 *   RB_REF_SINE      offset + amplitude sin(2 pi freq t + phase)
 *   RB_REF_CHIRP     offset + amplitude sin(phi(t)), linear chirp from freq to freq_end over [t0, t1]
 *                    (phi' = 2 pi f(t); before t0 r = offset, after t1 the final frequency continues)
 *   RB_REF_STEP      offset for t < t0, offset + amplitude from t0 on (derivatives 0)
 *   RB_REF_SPLINE    cubic spline through (times[i], values[i]), i < n_points (times strictly increasing,
 *                    n_points >= 2): a C1 cubic Hermite curve with Catmull-Rom slopes (one-sided at the
 *                    ends); held at the end values outside [times[0], times[n-1]]. The arrays are borrowed:
 *                    they must outlive the engine.
 *   RB_REF_RAMP      offset + the piecewise-linear curve through the same points (r_dot the segment's
 *                    slope, 0 outside; r_ddot 0): ramps and holds without a spline's overshoot (the jets'
 *                    throttles; not a joint-reference kind of the scenario files).
 * The reference of a joint is offset + the curve, offset being the initial joint position for
 * RB_REF_CONST unless set. */
typedef enum rb_ref_kind {
    RB_REF_CONST = 0,
    RB_REF_SINE,
    RB_REF_CHIRP,
    RB_REF_STEP,
    RB_REF_SPLINE,
    RB_REF_RAMP
} rb_ref_kind;

typedef struct rb_sim_ref {
    rb_ref_kind kind;
    double offset;                /* rad */
    double amplitude;             /* rad */
    double freq, freq_end;        /* Hz */
    double phase;                 /* rad */
    double t0, t1;                /* s (chirp window; step time t0) */
    const double *times, *values; /* spline points (borrowed) */
    size_t n_points;
} rb_sim_ref;

/* r, r_dot, r_ddot of a reference at time t (s). */
void rb_sim_ref_eval(const rb_sim_ref *r, double t, double out[3]);

/* ---- controllers ----------------------------------------------------------------------------------------
 *   RB_CTRL_NONE    tau_m_des = 0 (free motion; energy tests)
 *   RB_CTRL_PD      tau_m_des = kp (r - s) + kd (r_dot - s_dot) [+ gravity compensation g_s(q) of the
 *                   controller's model when gravity_comp; floating base: contact-consistent, below]
 *   RB_CTRL_TORQUE  the joint-torque paper's low-level loop: the desired joint torque is the feedforward
 *                   from inverse dynamics of the controller's (nominal) model plus a PD on position,
 *                       tau_des = ID(q, nu, [0; r_ddot + kp (r - s) + kd (r_dot - s_dot)])
 *                   (fixed base: rb_dyn_rnea; floating base: the contact-consistent gravity compensation
 *                   plus M_ss times the joint acceleration), then a PI on the torque error against the true
 *                   joint torque of the previous sample, plus the rotor's inertial torque:
 *                       tau_m_des = tau_des + R^2 J_m s_ddot_cmd + kp_tau e + ki_tau int e,
 *                       e = tau_des - tau_j(previous) (0 at the first sample: the loop starts settled),
 *                       s_ddot_cmd the joint acceleration asked for above
 *                   (friction is not fed forward: the torque loop rejects it, tau_j = tau_m - tau_F - ...)
 *                   The torque loop's feedback is scenario->torque_feedback (rb_sim_torque_feedback below):
 *                   the true torque above (RB_TFB_TRUTH), none (RB_TFB_NONE: tau_m_des = tau_des +
 *                   R^2 J_m s_ddot_cmd, feedforward only) or an estimate tau_hat a program gives
 *                   (RB_TFB_EXTERNAL: e = tau_des - tau_hat, rb_sim_set_torque_feedback); with
 *                   scenario->friction_compensation, tau_m_des += tau_F_hat (an estimated friction torque:
 *                   tau_j = tau_m - tau_F - R^2 J_m s_ddot, so compensating friction adds it).
 *                   truth->tau_ref is tau_des, the desired joint torque, before the rotor term, the PI and
 *                   the compensation (what torque tracking is scored against).
 * Contact-consistent gravity compensation (floating base with contacts): the joint torques that hold the
 * robot still at q with the active contacts, tau = g_s(q) - J_cs^T lambda with lambda the minimum-norm
 * solution of the base rows J_cb^T lambda = g_b(q) (g = rb_dyn_gravity_forces, J_c the MIXED contact
 * Jacobians, b/s their base/joint columns).
 * The controller uses its own model: the NOMINAL one (payload changes and friction are unknown to it) unless a
 * program sets bodies' parameters (rb_sim_set_model_inertia). While it is the plant's (no payload, no such
 * call), the controller takes M(q), the bias forces (when no push is in effect) and the contact Jacobians from
 * the plant's evaluation of the sample instead of passes of its own. */
typedef enum rb_ctrl_kind { RB_CTRL_NONE = 0, RB_CTRL_PD, RB_CTRL_TORQUE } rb_ctrl_kind;

/* Feedback of the torque loop (RB_CTRL_TORQUE; the other controllers ignore it). */
typedef enum rb_sim_torque_feedback {
    RB_TFB_TRUTH = 0, /* e = tau_ref - tau_j(previous sample), the true joint torque (0 at the first sample) */
    RB_TFB_NONE,      /* feedforward: no PI term (kp_tau, ki_tau unused) */
    RB_TFB_EXTERNAL   /* e = tau_ref - tau_hat, tau_hat given by rb_sim_set_torque_feedback; a joint whose
                       * tau_hat is NaN gets no PI term and its integrator holds */
} rb_sim_torque_feedback;

typedef struct rb_sim_joint_ctrl {
    double kp, kd;         /* N m/rad, N m s/rad */
    double kp_tau, ki_tau; /* torque loop (RB_CTRL_TORQUE): 1, 1/s */
} rb_sim_joint_ctrl;

/* ---- actuators -----------------------------------------------------------------------------------------
 * Per joint: motor torque constant k_t (N m/A, > 0), gear ratio R (signed, non-zero: theta = R s), rotor
 * inertia J_m (kg m^2, >= 0, rotor side), current limit i_max (A, > 0; INFINITY or 0 for none). The
 * current loop is ideal: I_m = clamp(tau_m_des / (k_t R), -i_max, i_max), tau_m = k_t R I_m (joint side).
 * All zero (the default): k_t = 1, R = 1, J_m = 0, no limit.
 * Gear compliance k_gear (N m/rad, joint side, >= 0 and finite; 0: rigid gear, the default): the harmonic
 * drive winds up under the gear torque tau_g = tau_m - R^2 J_m s_ddot (= tau_j + tau_F), quasi-statically
 * (no windup dynamics: the rigid-body motion is the rigid gear's). The rotor side then reads
 *     theta       = R (s + tau_g / k_gear)
 *     theta_dot   = R (s_dot + w_dot),      w_dot  = (tau_g - tau_g_prev) / (dt k_gear)  (0 at the first sample)
 *     theta_ddot  = R (s_ddot + w_ddot),    w_ddot = (w_dot - w_dot_prev) / dt           (0 at the first sample)
 * (backward differences over the step of the windup w = tau_g / k_gear; the joint part stays exact), so a
 * joint held by stiction keeps its encoder still while the motor encoder moves by R tau_g / k_gear. With
 * k_gear = 0: theta = R s, theta_dot = R s_dot, theta_ddot = R s_ddot. */
typedef struct rb_sim_actuator {
    double k_t, R, J_m, i_max;
    double k_gear; /* N m/rad; 0: rigid */
} rb_sim_actuator;

/* ---- pushes (external wrenches nobody measures) --------------------------------------------------------
 * A wrench at `frame` (model frame index), MIXED (world axes, about the frame's origin): w(t) = shape(t)
 * peak for t in [start, start + duration), 0 elsewhere; shape rectangle (1), half sine (sin(pi u)) or
 * triangle (1 - |2u - 1|), u = (t - start) / duration. */
typedef enum rb_push_shape { RB_PUSH_RECT = 0, RB_PUSH_HALF_SINE, RB_PUSH_TRIANGLE } rb_push_shape;

typedef struct rb_sim_push {
    int frame;
    rb_push_shape shape;
    double start, duration; /* s */
    double peak[6];         /* N, N m */
} rb_sim_push;

/* Random pushes: a Poisson process of `rate` pushes per second (rate > 0) over the run, drawn at init from
 * the scenario's seed; each at `frame` with `shape` and `duration`, its peak force a random horizontal
 * direction times a magnitude uniform in [force_min, force_max] (no moment). */
typedef struct rb_sim_random_pushes {
    int frame;
    rb_push_shape shape;
    double rate;                 /* 1/s; 0: none */
    double duration;             /* s */
    double force_min, force_max; /* N */
} rb_sim_random_pushes;

/* ---- contacts ------------------------------------------------------------------------------------------
 * A rigid contact at `frame` (dim 6 or 3) with Baumgarte time constant T (kp = 1/T^2, kd = 2/T; 0: none),
 * active from the start when `initially_active`; its reference pose is the frame's pose when it becomes
 * active. An event switches one contact on (an object placed under a foot) or off (removed) at time t. */
typedef struct rb_sim_contact {
    int frame;
    int dim;            /* 3 or 6 */
    double baumgarte_T; /* s, 0: no drift correction */
    bool initially_active;
} rb_sim_contact;

typedef struct rb_sim_contact_event {
    double t;       /* s */
    size_t contact; /* index in scenario->contacts */
    bool active;
} rb_sim_contact_event;

/* ---- payloads ------------------------------------------------------------------------------------------
 * Bodies whose inertial parameters (roboest/spatial.h order, about the body origin) change over time; several
 * at once, one entry per body (a body at most once). pi_nom = the body's parameters in the model. Modes:
 *   RB_PAYLOAD_MIX      pi(t) = pi_a + w(t) (pi_b - pi_a), the weight w of `kind` from t0 (w = 0 before t0):
 *                         RB_PAYLOAD_SQUARE  w = 0 for the first half of each period, 1 for the second
 *                         RB_PAYLOAD_SINE    w = (1 - cos(2 pi (t - t0) / period)) / 2 (smooth, 0 at t0)
 *                         RB_PAYLOAD_STEPS   w = 1 for t >= t0 (one step)
 *                         RB_PAYLOAD_CONST   w = 1
 *   RB_PAYLOAD_DENSITY  the body's mass m(t) follows the segments (below); pi(t) = pi_nom m(t) / m_nom: the
 *                       mass scales uniformly (the centre of mass stays put, the inertia scales with it)
 *   RB_PAYLOAD_POINT    pi(t) = pi_nom + point(m(t) - m_nom, at): a point mass of m(t) - m_nom (negative: a
 *                       point mass removed) at `at` (m, body frame), parallel axes:
 *                       point(d, c) = [d, d c, d (|c|^2 1 - c c^T)]. The centre of mass moves towards `at`
 *                       as m(t) grows: c(t) = (m_nom c_nom + (m(t) - m_nom) at) / m(t)
 * Segments (DENSITY, POINT): n_segments > 0, segment i covers [from, until) (until: INFINITY or the next
 * segment's from at most; from strictly increasing); outside every segment m(t) = m_nom. Within a segment
 * (u = t - t0, t0 >= from its waveform's origin; t < t0: m = offset):
 *   RB_PAYLOAD_SQUARE  m = offset + amplitude for the first half of each period, offset - amplitude for the
 *                      second (duty 0.5)
 *   RB_PAYLOAD_SINE    m = offset + amplitude sin(2 pi u / period)
 *   RB_PAYLOAD_STEPS   m = offset + amplitude (t >= t0)
 *   RB_PAYLOAD_CONST   m = offset
 * (offset, amplitude in kg: Table I's "30 kg +- 5 kg" is offset 30, amplitude 5). Every value must be
 * physically valid: checked at the extremes of each segment (pi is affine in m, and the physically valid
 * parameters form a convex set), and m(t) > 0. The consistency test is rb_inertia_is_physical (TODO: the full
 * rb_inertia_is_consistent once lib/dynamics has it). The plant's workspace is updated through
 * rb_dyn_set_body_inertia; the controller keeps its own model (rb_sim_set_model_inertia). */
typedef enum rb_payload_kind {
    RB_PAYLOAD_NONE = 0,
    RB_PAYLOAD_SQUARE,
    RB_PAYLOAD_SINE,
    RB_PAYLOAD_STEPS,
    RB_PAYLOAD_CONST
} rb_payload_kind;

typedef enum rb_payload_mode { RB_PAYLOAD_MIX = 0, RB_PAYLOAD_DENSITY, RB_PAYLOAD_POINT } rb_payload_mode;

typedef struct rb_sim_payload_segment {
    rb_payload_kind kind;
    double from, until;       /* s: the segment's window (until INFINITY: open) */
    double t0;                /* s: the waveform's origin, >= from */
    double period;            /* s (square, sine) */
    double offset, amplitude; /* kg */
} rb_sim_payload_segment;

typedef struct rb_sim_payload {
    rb_payload_mode mode;
    int body;
    /* RB_PAYLOAD_MIX */
    rb_payload_kind kind;
    double pi_a[10], pi_b[10];
    double t0, period; /* s */
    /* RB_PAYLOAD_DENSITY, RB_PAYLOAD_POINT */
    double at[3];                           /* POINT: where the mass changes, m, body frame */
    const rb_sim_payload_segment *segments; /* n_segments (copied by rb_sim_init) */
    size_t n_segments;
} rb_sim_payload;

/* The body mass m(t) of a DENSITY / POINT payload at time t (m_nom outside its segments). */
double rb_sim_payload_mass(const rb_sim_payload *p, double m_nom, double t);
/* pi(t) of a payload at time t (any mode); pi_nom: the body's nominal parameters. */
void rb_sim_payload_eval(const rb_sim_payload *p, const double pi_nom[10], double t, double pi[10]);

/* ---- jets (seed 004: thrusters on a jet humanoid) ------------------------------------------------------------
 * A jet at model frame `frame` pushes along `axis` (frame axes; normalized by rb_sim_init; [0, 0, -1], the
 * frame's -z, is the public plugin's convention) with the delivered thrust T_d >= 0: an external wrench
 * [T_d axis; 0] in the frame's own axes about its origin (RB_DYN_BODY: it turns with the frame), unknown to the
 * controller like the pushes, included in the FT sensors' wrenches. Its thrust model (roboest/dynamics.h, "jet
 * engines") runs inside the engine at dt:
 *     u_k = clamp(throttle(t_k), u_min, u_max)            (rb_sim_ref_eval's value; held over the step)
 *     (T, T_dot)_{k+1} = rb_jet_step(params, u_k, dt, (T, T_dot)_k),   T_0 = T_dot_0 = 0
 *                        (steady_start: T_0 = rb_sim_jet_steady_thrust(params, u_0))
 *     T_d = f(t) T, T_d_dot = f(t) T_dot,   f(t) = a failure's fraction in [from, until), 1 elsewhere
 * (a failure is a fuel-line defect: the jet delivers a fraction of what its model, i.e. its throttle, asks for;
 * the thrust steps at the window's edges).
 * Rotor speed (what the jet's ECU logs; the paper's failure indicator, seed 004 V-E): a static map thrust -> speed,
 *     rpm(T) = rpm_max sqrt(clamp(T / T_max, 0, 1))    (thrust grows with the square of the rotor speed)
 * gives the desired speed rpm(T_ss(u_k)) (T_ss: the model's steady thrust at the throttle) and the measured speed
 * follows rpm(T_d) through a first-order lag of time constant rotor_tau (exact over each step:
 * w_{k+1} = rpm(T_d,k) + (w_k - rpm(T_d,k)) exp(-dt / rotor_tau); rotor_tau 0: w = rpm(T_d)); w_0 = rpm(T_d,0).
 * Without a failure the error rpm_des - w is the jet's own lag (zero in a steady state); a failure of fraction f
 * shows as about (1 - sqrt(f)) rpm_des.
 * Failures: in time order, from < until, not overlapping, fraction in [0, 1]. */
typedef struct rb_sim_jet_failure {
    double from, until; /* s */
    double fraction;    /* of the model's thrust delivered, [0, 1] */
} rb_sim_jet_failure;

typedef struct rb_sim_jet {
    int frame;
    rb_jet_params params;               /* rb_jet_preset or custom: T_max > 0, u_min <= u_max */
    double axis[3];                     /* thrust direction in the frame's axes (non-zero) */
    rb_sim_ref throttle;                /* u(t) (spline / ramp points borrowed, like the references) */
    bool steady_start;                  /* start at the steady thrust of u(0) instead of rest */
    const rb_sim_jet_failure *failures; /* n_failures (copied by rb_sim_init) */
    size_t n_failures;
    double rotor_tau; /* s, >= 0 */
    double rpm_max;   /* rpm at T_max, > 0 */
} rb_sim_jet;

/* The model's steady thrust at a constant throttle u: rb_jet_steady_thrust (roboest/dynamics.h), the older name. */
double rb_sim_jet_steady_thrust(const rb_jet_params *p, double u);
/* rpm(T) of the rotor map above. */
double rb_sim_jet_rpm(const rb_sim_jet *jet, double T);

/* ---- scenario ------------------------------------------------------------------------------------------- */
typedef enum rb_sim_method { RB_SIM_EULER = 0, RB_SIM_RK4 } rb_sim_method;

typedef struct rb_sim_scenario {
    const rb_model *model; /* borrowed; must outlive the engine; fixed or floating base (model->floating) */
    double dt;             /* integration step, s (> 0) */
    double duration;       /* s (>= 0); rb_sim_step returns 0 once t >= duration */
    rb_sim_method method;
    uint64_t seed;
    const double *q0;  /* initial q (nq), NULL: rb_dyn_neutral */
    const double *nu0; /* initial nu (nv), NULL: zero */

    const rb_sim_ref *refs; /* n (NULL: hold the initial joint positions) */
    rb_ctrl_kind ctrl;
    const rb_sim_joint_ctrl *gains;         /* n (NULL: all zero) */
    bool gravity_comp;                      /* RB_CTRL_PD: add the (contact-consistent) gravity compensation */
    rb_sim_torque_feedback torque_feedback; /* RB_CTRL_TORQUE only (default RB_TFB_TRUTH) */
    bool friction_compensation;             /* RB_CTRL_TORQUE: tau_m_des += tau_F_hat (rb_sim_set_torque_feedback; a NaN
                                 * element: no compensation at that joint) */
    const rb_sim_actuator *actuators;       /* n (NULL: the default actuator) */
    const rb_friction_model *friction;      /* n validated models (NULL: none) */

    const rb_sim_contact *contacts; /* n_contacts (floating or fixed base) */
    size_t n_contacts;
    const rb_sim_contact_event *events; /* n_events, any order */
    size_t n_events;
    rb_sim_floor floor; /* friction: contacts that stick or slip (scenario key "floor", roboest/sim_contact.h) */

    const rb_sim_push *pushes; /* n_pushes */
    size_t n_pushes;
    rb_sim_random_pushes random_pushes; /* rate 0: none */

    const rb_sim_payload *payloads; /* n_payloads (copied by rb_sim_init), a body at most once */
    size_t n_payloads;
    rb_sim_balance balance;
    rb_sim_gait gait; /* walking (roboest/sim_gait.h); not with balance */

    const int *frames; /* frames whose motion the truth exposes (sensors); NULL: the model's IMU frames */
    size_t n_frames;

    const rb_sim_jet *jets; /* n_jets (copied by rb_sim_init; the throttles' points borrowed) */
    size_t n_jets;
    rb_sim_flight flight; /* the jets' flight controller (roboest/sim_flight.h); all zero: off */

    bool joint_limits;        /* stop the joints at the model's position limits (physics step 4) */
    bool truth_on_demand;     /* false: every sample computes the whole truth; true: the frame motion, the FT
                                 * wrenches and the energy only on rb_sim_truth_compute (truth->valid) */
    rb_sim_mismatch mismatch; /* the plant against its model (roboest/sim_mismatch.h); enabled false: none */
    rb_sim_random_contacts random_contacts; /* repeated random contacts (sim_mismatch.h); rate 0: none */
} rb_sim_scenario;

/* ---- the true state of one sample ----------------------------------------------------------------------
 * Arrays borrowed from the engine, overwritten by every rb_sim_step. Joint vectors have n = model->n_dofs.
 * All values belong to the sample's time t (the start of the step that rb_sim_step will take next). */
typedef struct rb_sim_truth {
    double t; /* s */
    size_t n, nq, nv;
    const double *q, *nu, *nu_dot;    /* full generalized state (nq, nv, nv) */
    const double *s, *s_dot, *s_ddot; /* joint parts (n each; views into q, nu, nu_dot) */
    const double *tau_j;              /* joint torque (joint side, what a joint-torque sensor reads), N m */
    const double *tau_m;              /* motor torque reaching the gear output, k_t R I_m, N m */
    const double *tau_f;   /* friction torque tau_F (friction.h convention: tau_j = tau_m - tau_F - R^2 J_m s_ddot) */
    const double *tau_des; /* what the controller asked for (motor torque before saturation), N m */
    const double *tau_ref; /* the controller's desired JOINT torque, N m: RB_CTRL_TORQUE the inverse dynamics /
                                 * gravity-compensation feedforward before the rotor term, the PI and the friction
                                 * compensation; RB_CTRL_PD the PD output (= tau_des); RB_CTRL_NONE zero */
    double com_ref[3];     /* balance, gait: the CoM reference c_ref(t) the IK tracks (of the controller's model:
                            * rb_sim_balance; gait: the plan), flight: the flight's (sim_flight.h), world, m; NaN
                            * otherwise */
    const double *current; /* motor current I_m (saturated), A */
    const double *current_cmd;                       /* commanded current before saturation, A */
    const double *motor_pos, *motor_vel, *motor_acc; /* rotor side: R s, R s_dot, R s_ddot (k_gear: with the windup) */
    const double *ref;                               /* joint references r (n) */
    const unsigned char *stuck;                      /* 1: joint held by stiction */
    const unsigned char *at_limit;                   /* 1: joint on a position limit (joint_limits; all 0 otherwise) */
    /* base (floating: the base body; fixed: identity / zero) */
    rb_xform base_pose;   /* W_X_B */
    double base_twist[6]; /* body-fixed [v_B; w_B] */
    double base_acc[6];   /* its derivative (nu_dot's base part) */
    /* contacts: 6 per scenario contact (MIXED wrench ON the robot, world axes about the frame origin;
     * zero when inactive; dim-3 contacts fill the force only) */
    size_t n_contacts;
    const double *contact_wrench;
    const unsigned char *contact_active;
    /* external wrenches: 6 per push (scenario pushes first, then the random ones), MIXED at the push frame */
    size_t n_pushes;
    const double *push_wrench;
    const rb_sim_push *push_list; /* the pushes in effect (scenario ones, then the random ones drawn at init) */
    /* the payload bodies' current inertial parameters (10 per scenario payload, in scenario order) */
    size_t n_payloads;
    const double *payload_pi;
    double pelvis_height_ref; /* balance.pelvis_height: the base height reference z_ref(t), m; NaN otherwise */
    /* jets (scenario order): throttle u_k (clamped), delivered thrust T_d (N) and its rate (N/s), the rotor's
     * desired and measured speeds (rpm), the flight controller's T_des (N; NULL without flight: sim_flight.h) */
    size_t n_jets;
    const double *jet_throttle, *jet_thrust, *jet_thrust_rate, *jet_rpm_des, *jet_rpm, *jet_thrust_des;
    /* The parts below (RB_SIM_TRUTH_FRAMES, _FT, _ENERGY, _COM) hold the current sample's values when their bit
     * is set in `valid`: always all of them, unless scenario->truth_on_demand (then only those
     * rb_sim_truth_compute computed for this sample; the others keep older values). */
    unsigned valid;
    /* sensors: for each scenario frame, its world pose, BODY velocity and BODY proper acceleration */
    size_t n_frames;
    const int *frames;
    const rb_xform *frame_pose;
    const double *frame_vel; /* 6 per frame */
    const double *frame_acc; /* 6 per frame (accelerometer: linear part; gravity included) */
    /* FT sensors: every model FT sensor (6 * model->n_ft, model order, each in its own convention), from
     * rb_dyn_ft_wrenches with the contact and push wrenches included */
    size_t n_ft;
    const double *ft;
    /* energy: kinetic (bodies + rotors) and potential (gravity) of the plant, J */
    double kinetic, potential;
    /* centre of mass of the plant, world, m: sum_i (m_i p_i + R_i h_i) / sum_i m_i over the bodies (world pose
     * p_i, R_i; parameters m_i, h_i = m_i c_i), the payload body with its current parameters */
    double com[3];
    double com_vel[3], com_acc[3]; /* its velocity (m/s) and acceleration (m/s^2), world: the bodies' centres'
                                    * velocities and accelerations weighted the same way */
    rb_sim_gait_truth gait;        /* gait: phase, ZMP reference and ZMP, feet references (roboest/sim_gait.h) */
} rb_sim_truth;

/* The parts of the truth that cost passes of their own (flags for rb_sim_truth_compute and truth->valid). */
enum {
    RB_SIM_TRUTH_FRAMES = 1u,      /* frame_pose, frame_vel, frame_acc: a kinematics pass with accelerations */
    RB_SIM_TRUTH_FT = 2u,          /* ft: an RNEA pass with the contact and push wrenches */
    RB_SIM_TRUTH_ENERGY = 4u,      /* kinetic (nu^T (M + diag(R^2 J_m)) nu / 2), potential: the body poses */
    RB_SIM_TRUTH_COM = 8u,         /* com: the body poses */
    RB_SIM_TRUTH_COM_MOTION = 16u, /* com_vel, com_acc (and com): a kinematics pass with accelerations */
    RB_SIM_TRUTH_ALL = 31u
};

typedef struct rb_sim rb_sim; /* engine (opaque) */

/* Validate the scenario, allocate the engine and compute the first sample (t = 0). The scenario's arrays
 * are copied except the model and the spline points (borrowed). Caller frees with rb_sim_finish. */
int rb_sim_init(const rb_sim_scenario *sc, rb_sim **out, rb_err *err);
/* Advance one step of dt and compute the new sample. Returns 1 after a step, 0 (nothing done) once
 * t >= duration, or a negative rb_status (RB_ENUMERIC "sim: t = 1.234 s: ..."). Allocates nothing. */
int rb_sim_step(rb_sim *sim, rb_err *err);
/* The current sample (borrowed until the next rb_sim_step or rb_sim_finish). */
const rb_sim_truth *rb_sim_truth_get(const rb_sim *sim);
/* The run's mismatch draws (roboest/sim_mismatch.h: the plant's bodies, friction factors, sensor offsets and the
 * command delay), NULL when the scenario has no mismatch. Borrowed from the engine. */
const rb_sim_mismatch_draws *rb_sim_mismatch_get(const rb_sim *sim);
/* Compute the parts (RB_SIM_TRUTH_* flags) of the current sample not computed yet and set them in
 * truth->valid; the same values as a sample computed whole. Call between rb_sim_step calls (the engine's
 * workspaces must still hold the sample). Allocates nothing. RB_EINVAL: NULL engine. */
int rb_sim_truth_compute(rb_sim *sim, unsigned parts, rb_err *err);
/* The estimates the controller uses at the next rb_sim_step's new sample (they stay until the next call):
 * tau_hat, tau_f_hat: n joint values each (copied), NULL: leave as they are. A NaN element means "no estimate
 * for this joint": no PI term (the integrator holds) / no compensation at that joint. Before any call every
 * element is NaN. Used only by RB_CTRL_TORQUE with torque_feedback RB_TFB_EXTERNAL (tau_hat) and
 * friction_compensation (tau_f_hat). Timing: an estimate of the sample k's joint torque given before the step
 * to k + 1 enters the controller at k + 1 exactly as RB_TFB_TRUTH's tau_j(k) does. RB_EINVAL on a NULL engine.
 * Allocates nothing. */
int rb_sim_set_torque_feedback(rb_sim *sim, const double *tau_hat, const double *tau_f_hat, rb_err *err);
/* The inertial parameters pi (10, roboest/spatial.h order, about the body frame) of `body` in the CONTROLLER's
 * model (the nominal one until then): the inverse dynamics, the (contact-consistent) gravity compensation and
 * the balance IK's centre of mass (its reference moves with it: rb_sim_balance) use it from the next
 * rb_sim_step's new sample on (one control period later,
 * as rb_sim_set_torque_feedback): a value given at sample k (e.g. an estimate from the data up to k) acts at
 * k + 1. The last call before a step wins; the value stays until the next call. The plant is unchanged. After
 * the first call the controller evaluates its own model (no longer the plant's evaluation: sim.h controllers).
 * RB_EINVAL: NULL engine or pi, body out of range, pi not physically valid (rb_inertia_is_physical; the
 * message names the body). Allocates nothing. */
int rb_sim_set_model_inertia(rb_sim *sim, size_t body, const double pi[10], rb_err *err);
/* Number of steps the scenario takes: ceil(duration / dt - 1e-9). */
size_t rb_sim_n_steps(const rb_sim *sim);
void rb_sim_finish(rb_sim *sim);

/* ==== scenarios (lib/sim/scenario*.c) ===========================================================================
 * A scenario JSON file -> a filled rb_sim_scenario (roboest/sim.h), its model, the sensors to sample and the
 * output options, for `roboest simulate`. Errors are RB_ECONFIG "<file>:<line>:<col>: <key path>: <what>"
 * with a suggestion for an unknown key or value (roboest/config.h), RB_ENOTFOUND / RB_EINPUT
 * for the scenario or model file. Every key not listed here is an error. Units SI, angles rad.
 *
 *   name        string; default: the file's stem
 *   model       {urdf (required; relative to the scenario file), joints ([names]; default: all movable
 *               joints), base (link; default the URDF root), floating (bool, default false)}
 *   duration    s, >= 0 (required)           dt          s, > 0 (default 0.001)
 *   method      "euler" (default) | "rk4"    log_rate    Hz, > 0 (default 1 / dt): the rate of the
 *   seed        integer >= 0 (default 0)                 noise-free channels and of the truth
 *   base_pose   floating base only: {position [x y z] (m), rpy [roll pitch yaw] (rad, R = Rz Ry Rx)}, the
 *               base's initial pose in the world (default: the origin, identity)
 *   q0          {joint: rad}: initial joint positions (others 0)
 *   references  {joint: {kind: "const"|"sine"|"chirp"|"step"|"spline"|"ramp", offset, amplitude, freq, freq_end,
 *               phase, t0, t1, times [s], values [rad]}} (rb_sim_ref; joints left out hold their q0)
 *   controller  {kind: "none"|"pd"|"torque" (default "none"), gravity_comp (bool), gains: {joint:
 *               {kp, kd, kp_tau, ki_tau}}, torque_feedback, friction_compensation}
 *               torque_feedback (kind "torque" only): "truth" (default: the torque loop's PI acts on the
 *               true joint torque of the previous sample) | "none" (feedforward, no PI) -> RB_TFB_TRUTH /
 *               RB_TFB_NONE. RB_TFB_EXTERNAL (estimated torques) is not a file option: only a program
 *               driving the loop (roboest closed-loop) can give estimates; "external" is an error.
 *               friction_compensation (kind "torque" only): only false (the default) in a file, for the
 *               same reason.
 *   actuators   {joint: {k_t, R, J_m, i_max, k_gear}} (defaults k_t 1, R 1, J_m 0, i_max 0: no limit,
 *               k_gear 0: rigid gear; k_gear N m/rad >= 0 winds the rotor up against the joint, sim.h)
 *   friction    {joint: {model: rb_friction_build name, params: [...]} or {preset: rb_friction_preset
 *               name}, plus optional drift: {s0, s1, t0, t1, amplitude, period, phase, mask}}
 *   joint_limits  bool (default false): stop the joints at the model's position limits (sim.h, step 4)
 *   contacts    [{frame, dim (3|6, default 6), baumgarte_T (s, default 0.02), active (default true)}]
 *               (one contact per frame)
 *   events      [{t (s, >= 0), contact (index in contacts, or its frame name), active (bool)}], all keys
 *               required: switch a contact on (an object placed under a foot; its reference pose is the
 *               frame's pose at t) or off (removed) -> rb_sim_contact_event
 *   pushes      [{frame, shape: "rect"|"half_sine"|"triangle", start, duration, wrench [fx fy fz mx my mz]
 *               (MIXED: world axes, about the frame origin)}]
 *   random_pushes {frame, shape, rate (1/s), duration, force_min, force_max}
 *   random_contacts {frames, rate (1/s), from, until, duration [min, max], force [min, max]} -> rb_sim_random_contacts
 *               (roboest/sim_mismatch.h; configs/README.md)
 *   mismatch    "realistic" | "none" | {preset, level, inertia: {mass_sd, com_sd, inertia_sd}, friction: {scale_sd,
 *               asymmetry, load, load_v, temp_coeff, temp_offset, warmup}, delay: {command}, ft: {drift_force,
 *               drift_torque}, current: {offset}} -> rb_sim_mismatch (roboest/sim_mismatch.h; absent: none)
 *   payload     one payload object or an array of them (a body at most once; the single object is a one-element
 *               list) -> rb_sim_payload. Two forms:
 *               {link (a model body, named after its URDF link; a link merged into another body by a fixed
 *               joint is refused with that body's name), kind: "square"|"sine"|"steps" (required), t0 (s,
 *               >= 0, default 0), period (s, > 0; required for square and sine, refused for steps),
 *               pi_a (10 numbers, default: the body's parameters in the model), and exactly one of
 *               pi_b (10 numbers) or added: {mass (kg, > 0, required), com [x y z] (m, body frame,
 *               default 0), inertia [Ixx Ixy Ixz Iyy Iyz Izz] (kg m^2, about the added mass's centre of
 *               mass in body axes, default 0: a point mass)}} (RB_PAYLOAD_MIX). Parameters follow
 *               roboest/spatial.h: [m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz] about the body frame.
 *               `added` gives pi_b = pi_a + [m_a, m_a c, I_c + m_a (|c|^2 1 - c c^T)] (parallel axes).
 *               pi_a, the added mass's own inertia and pi_b must be physically valid
 *               (rb_inertia_is_physical).
 *               Or {link, mode: "density"|"point", at [x y z] (m, body frame; mode "point" only, required),
 *               segments: [{kind: "square"|"sine"|"steps"|"constant", from (s, >= 0; default 0 for the
 *               first, required after), until (s, > from; default: open), t0 (s, in [from, until); default
 *               from), period (s) or freq (Hz) (exactly one, square and sine only), offset (kg, > 0;
 *               default the body's mass), amplitude (kg, default 0)}, ...]}: the body mass m(t) follows the
 *               segments (rb_sim_payload: square offset +- amplitude, sine offset + amplitude sin, steps
 *               offset then offset + amplitude from t0, constant offset; the nominal mass outside every
 *               segment); segments in time order, not overlapping. "density" scales the whole body
 *               (pi_nom m / m_nom: the centre of mass stays), "point" adds m - m_nom at `at`. The body mass
 *               must stay > 0 and the parameters physically valid over every segment.
 *               Truth: truth/payload/<body> (10 parameters) per payload and truth/payload_mass (one element
 *               per payload, named after its body, kg).
 *   balance     {amplitude (m, >= 0), freq (Hz, >= 0), ik_T (s, > 0, default 0.02), pelvis_height: {offset
 *               (m, default 0), amplitude (m, >= 0, default 0), freq (Hz, >= 0, default 0)}} -> rb_sim_balance:
 *               the CoM moves sideways (world y) by amplitude sin(2 pi freq t) while the contacts stay
 *               planted; with pelvis_height the base's height follows z(0) + offset + amplitude sin(2 pi freq
 *               t) instead of the CoM's (truth/tasks/pelvis_height: reference, actual). Needs a floating base,
 *               contacts and a controller. Joints given in `references` keep those references (free joints:
 *               the IK leaves them alone, rb_sim_balance); the others follow the IK
 *   gait        {ds (s, > 0, default 0.9), ss (s, > 0, default 0.6), start (s, >= 0, default 0.5), stop (s, default
 *               10.1: the last single support ends by then), first ("left" | "right", default "left": the first
 *               stance foot), step_length (m, in [-0.2, 0.2], default 0.06), step_width (m, in (0, 0.6], default:
 *               the initial feet's distance), swing_height (m, in (0, 0.2], default 0.03), com_height (m, world z,
 *               default: the initial CoM's), feet ([left, right] model frames, default ["l_sole", "r_sole"]; each
 *               needs a 6D contact), preview (s, in [0.1, 5], default 1.6), ik_T (s, > 0, default 0.02),
 *               feedforward ("dynamics" | "gravity", default "dynamics": what the PD's gravity_comp compensates)} ->
 *               rb_sim_gait (roboest/sim_gait.h): a walk on the thesis's schedule, the CoM by preview control.
 *               Needs a floating base and a controller; not with balance (refused). Free joints as with balance.
 *               Truth: truth/gait/{phase, com_ref, zmp_ref, feet_ref, zmp}, truth/com_{velocity,acceleration}
 *   jets        [{frame (model frame, one jet per frame), preset (rb_jet_preset name, required), axis [x y z] (frame
 *               axes, non-zero, default [0 0 -1]), throttle (required; refused with flight: {kind: "const"|"sine"|
 *               "chirp"|"step"|"ramp"|"spline", offset (default 0), amplitude, freq, freq_end, phase, t0, t1, times,
 *               values}: rb_sim_ref, "ramp" = RB_REF_RAMP), steady_start (bool; with flight: its hover thrust),
 *               failure: [{from, until (> from), fraction [0, 1]}] (in time order, apart), rotor: {tau (s, default
 *               0.1), rpm_max (default 100000), noise (rpm std, default 0)}}] -> rb_sim_jet ("jets" above).
 *               Channels jets/throttles, jets/rotor_speed_error (rpm_des - rpm, rpm, with the rotor noise),
 *               truth/jets/thrusts, truth/jets/thrust_rates (elements: the jet frames)
 *   flight      the jets' flight controller (keys: roboest/sim_flight.h); with it every jet's throttle is refused
 *   temperature {t0 (degC, default 25), rate (K/s), from (s), until (s, > from, default open), noise (K), resolution
 *               (K)} -> rb_scn_temperature
 *   scales      [{contact (index in contacts or its frame name; one scale per contact), drift_per_kelvin (kg/K;
 *               non-zero needs temperature), noise (kg), resolution (kg), rate (Hz, default log_rate)}] ->
 *               rb_scn_scale, channel scales/<contact frame> (kg)
 *   sensors     [{kind: "joint_encoder"|"motor_encoder"|"motor_current"|"ft"|"accelerometer"|"gyroscope"|
 *               "orientation"|"ft_raw", name (channel leaf; default: the FT sensor or frame name), ft (FT kind:
 *               model FT sensor), frame (IMU kinds: model frame or IMU sensor name), and overrides of the
 *               preset: rate, jitter, noise, bias, drift_rw, drift_rate, resolution, offset, lo, hi (a
 *               number for every element or an array of one per element)}]. An orientation sensor
 *               logs roll pitch yaw (rad) of the frame's world orientation, R = Rz(yaw) Ry(pitch) Rx(roll)
 *               (rb_m3_to_rpy: iDynTree's RPY, the robot logger's orientations channels), each wrapped
 *               into [-pi, pi) after noise. An FT sensor may add temperature_drift (a number for every axis or
 *               6, per kelvin; needs temperature): truth += drift (T(t) - t0), and a channel
 *               temperatures/<name> (degC). "ft_raw": configs/README.md (counts_per_unit, cross_talk).
 *   log_channels  [names] (non-empty): the channels the log keeps (scenario runs below), each a channel name or a
 *               prefix ending in '/' ("truth/base/": every channel under it); in the usual order; default: every
 *               channel. An entry matching no channel the scenario logs is an error with the closest channel or
 *               prefix suggested (truth/pushes counts as logged with random_pushes, though a run may draw none).
 *               Only the log is filtered: a hook sees every channel.
 *   Not supported (rejected as unknown keys): per-element subsets of joint-level sensors.
 */
typedef enum rb_scn_source {
    RB_SCN_JOINT_POS = 0, /* joints_state/positions */
    RB_SCN_MOTOR_POS,     /* motors_state/positions */
    RB_SCN_MOTOR_CURRENT, /* motors_state/currents */
    RB_SCN_FT,            /* FTs/<name>: model FT sensor `index` */
    RB_SCN_ACC,           /* accelerometers/<name>: frame slot `index` of sim.frames */
    RB_SCN_GYRO,          /* gyros/<name>: frame slot `index` of sim.frames */
    RB_SCN_ORIENTATION,   /* orientations/<name>: frame slot `index` of sim.frames (roll pitch yaw of its world
                           * orientation, rb_m3_to_rpy) */
    RB_SCN_FT_RAW         /* FTs_raw/<name>: model FT sensor `index`, raw counts (params.gain, roboest/sim_sensors.h) */
} rb_scn_source;

typedef struct rb_scenario_sensor {
    char *channel; /* full channel path, e.g. "FTs/wrist_ft_sensor" */
    rb_scn_source source;
    size_t index;            /* FT sensor or frame slot (see rb_scn_source) */
    rb_sensor_params params; /* name = channel; per-element arrays point into `values` */
    double *values;          /* owned storage of the per-element arrays */
    bool temperature_log;    /* FT: temperature_drift given: drifts with the temperature, logs temperatures/<leaf> */
    double temperature_drift[6]; /* FT: offset per kelvin of temperature change (N/K, N m/K), added to the truth */
} rb_scenario_sensor;            /* ft_raw: params.gain (6 x 6, counts per unit with cross-talk) points into values */

/* The scenario's temperature (degC): T(t) = t0 + rate (clamp(t, from, until) - from); logged by the FT sensors that
 * drift with it (temperatures/<leaf>, with noise and resolution) and read by the scales' drift. */
typedef struct rb_scn_temperature {
    bool enabled;
    double t0, rate, from, until; /* degC, K/s, s, s (until INFINITY: open) */
    double noise, resolution;     /* K */
} rb_scn_temperature;

/* A weighing scale under a contact: reading (kg) = f_z / |g| + drift_per_kelvin (T(t) - t0) (+ noise, quantization),
 * f_z the contact's vertical force on the robot; channel scales/<contact frame> at `rate`. */
typedef struct rb_scn_scale {
    size_t contact;                 /* index in contacts */
    double drift_per_kelvin;        /* kg/K */
    double noise, resolution, rate; /* kg, kg, Hz */
} rb_scn_scale;

/* T(t) of a temperature (degC; t0 when not enabled). */
double rb_scn_temperature_at(const rb_scn_temperature *temp, double t);

typedef struct rb_scenario {
    char *name, *path, *sha256; /* scenario name, file and the SHA-256 of its text */
    char *urdf;                 /* resolved model path */
    rb_model *model;            /* loaded model (owned) */
    rb_sim_scenario sim;        /* every pointer in it points into this struct's arrays */
    double log_rate;            /* Hz */
    rb_scenario_sensor *sensors;
    size_t n_sensors;
    /* owned arrays behind sim (internal) */
    double *q0; /* nq */
    rb_sim_ref *refs;
    rb_sim_joint_ctrl *gains;
    rb_sim_actuator *actuators;
    rb_friction_model *friction;
    rb_sim_contact *contacts;
    rb_sim_contact_event *events;
    rb_sim_push *pushes;
    int *contact_frames; /* random_contacts' frames */
    int *frames;
    rb_sim_payload *payloads;
    rb_sim_payload_segment *segments;
    unsigned char *free_joints; /* n: joints with references under balance */
    char **log_channels;        /* n_log_channels entries of log_channels (NULL: every channel is logged) */
    size_t n_log_channels;
    rb_sim_jet *jets; /* sim.n_jets */
    rb_sim_jet_failure *jet_failures;
    double *jet_noise; /* per jet: rotor speed error noise std, rpm */
    rb_scn_temperature temperature;
    rb_scn_scale *scales;
    size_t n_scales;
} rb_scenario;

/* ---- scenario runs (lib/sim/scenario_run.c) ----
 * What `roboest simulate` does, as a library call: simulate, measure every sensor, record every channel and
 * build the log. The channels, in log order (element names and units as the log gets them):
 *   joints_state/{positions,velocities,accelerations,desired_torques}, motors_state/{positions,velocities,
 *   currents} (joints), the scenario's sensors (FTs/..., accelerometers/..., gyros/..., orientations/...) in
 *   file order, temperatures/<FT leaf> (FT sensors with temperature_drift), scales/<contact frame>,
 *   jets/{throttles,rotor_speed_error} (jets), truth/joints/{positions,velocities,accelerations,references,torques,friction_torques},
 *   truth/motors/{torques,currents,current_commands,positions,velocities,accelerations}, truth/joints/at_limit
 *   (joint_limits), truth/contacts/<frame> (per contact), truth/contacts_active (contacts),
 *   truth/contacts/{slip_velocity,slipping,friction_ratio,pulling} (floor), truth/pushes (pushes: <i>_fx ... <i>_mz),
 *   truth/jets/{thrusts,thrust_rates} (jets), truth/flight/{com_ref,desired_thrusts} (flight),
 *   truth/base/{position,orientation,twist,acceleration}, truth/com, truth/com_velocity, truth/com_acceleration
 *   (gait), truth/orientations/<leaf> (per orientation sensor: its noise-free roll pitch yaw), truth/payload/<body>
 *   (per payload), truth/payload_mass (payloads), truth/tasks/pelvis_height (balance.pelvis_height),
 *   truth/gait/{phase (0 double support, 1 left support, 2 right support), com_ref (x y z, m), zmp_ref (x y),
 *   feet_ref (l_x l_y l_z r_x r_y r_z), zmp (x y)} (gait), truth/energy.
 * Joint-level channels without a configured sensor and the truth are noise-free at log_rate. log_channels
 * (s->log_channels) keeps only the channels it matches in the log; the others are kept only as their latest row
 * while a hook's `sample` reads them, and are not measured at all without one (the kept ones are the same bits
 * either way: every sensor has its own noise stream). The log's attributes: roboest_version, scenario, scenario_sha256, model, seed, yarp_robot_name, description_list. */

/* What a scenario run offers a program that acts inside the loop. */
typedef struct rb_scenario_hook {
    /* Once, after the engine is initialized and before the first sample: the run's channels (every channel the
     * scenario measures: sensors and truth, in log order, log_channels or not; borrowed for the call). NULL: not
     * called. */
    int (*start)(void *user, const rb_channel_info *channels, size_t n_channels, rb_err *err);
    /* Every simulation sample (k = 0 .. n_steps, t = k dt), after the channels due at it have been
     * measured, before the step that follows: latest[c] = channel c's newest measured row (NULL before
     * its first sample), fresh[c] = measured at this sample. The hook may call rb_sim_set_torque_feedback
     * (and rb_sim_truth_compute). Non-zero (an rb_status with a message) stops the run. NULL: not called. */
    int (*sample)(void *user, rb_sim *sim, size_t k, double t, const double *const *latest, const bool *fresh,
                  rb_err *err);
    void *user;
} rb_scenario_hook;

/* Run a loaded scenario: simulate, measure every sensor, record every channel (those log_channels keeps), build
 * the log exactly as `roboest simulate` writes it (sensor channels, truth/..., attributes). `sim` overrides s->sim (a copy the
 * caller modified, e.g. torque_feedback), NULL: s->sim. hook NULL: none. *out: the log (rb_log_free), NULL
 * when out == NULL (then nothing is recorded beyond what the hook needs). Errors: rb_sim_*'s,
 * the hook's, RB_ENOMEM. Deterministic: the same scenario gives the same log. */
int rb_scenario_run(const rb_scenario *s, const rb_sim_scenario *sim, const rb_scenario_hook *hook, rb_log **out,
                    rb_err *err);

/* Load and validate a scenario file (caller frees with rb_scenario_free; *out NULL on failure). */
int rb_scenario_load(const char *path, rb_scenario **out, rb_err *err);
/* The same from text: name_for_messages starts messages, base_file anchors the model path. */
int rb_scenario_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                          rb_scenario **out, rb_err *err);
void rb_scenario_free(rb_scenario *s);

RB_API_END

#endif
