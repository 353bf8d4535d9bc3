/*
 * roboest sim: whole-body motion of a floating-base robot on its contacts, the part of the simulator
 * (roboest/sim.h, which includes this header) that makes joint references from tasks instead of curves:
 *   - balancing: the centre of mass sways sideways while the feet stay planted (rb_sim_balance);
 *   - walking: a time-based gait (seed 003, Hashlamon's thesis 4.4.1) with a CoM planned on the linear inverted
 *     pendulum by preview control, swing-foot splines and the feet's contacts switched by the phase
 *     (rb_sim_gait, rb_gait_plan).
 * Both drive one differential inverse kinematics (below), whose joint references the scenario's joint controller
 * tracks. Units SI, world frame z up (against gravity), angles rad.
 */
#ifndef ROBOEST_SIM_GAIT_H
#define ROBOEST_SIM_GAIT_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/core.h"

RB_API_BEGIN

/* ---- balancing -----------------------------------------------------------------------------------------
 * Floating base with contacts: the centre of mass moves sideways (world y) along
 *   c_y(t) = c_y(0) + amplitude sin(2 pi freq t)
 * while the contacts stay planted. Joint references come from an on-line differential inverse kinematics
 * of the controller's model run alongside the simulation: a reference configuration q_r (starting at the
 * initial q) is advanced by q_r (+) dt nu_r, nu_r the solution of the system A nu_r = b
 *     J_c(q_r) nu_r = -k e_c(q_r)               (every active contact frame stays at its reference pose)
 *     J_com,xyz(q_r) nu_r = c_dot_ref + k (c_ref - c(q_r))
 *     [0 1] base angular rows: w_B = -k log(R_B R_B0^T)  (the pelvis keeps its orientation)
 *     J_F(q_r) nu_r = [v_F,ref + k (p_F,ref - p_F); -k log(R_F R_F,ref^T)]   (gait: the swing foot F, MIXED)
 * in the damped least-squares sense, nu_r = (A^T A + 1e-10 1)^-1 A^T b (the exact minimum-norm solution when
 * A has full row rank, e.g. the humanoid's torso joints, not asked for, stay still; solved as
 * A^T (A A^T + 1e-10 1)^-1 b when A has fewer rows than columns), k = 1 / ik_T; its joint part gives r and
 * r_dot for every joint (r_ddot by finite difference of r_dot), overriding scenario->refs. The controller
 * (PD or torque) tracks them with the contact-consistent gravity compensation as feedforward.
 * Model changes (rb_sim_set_model_inertia): c(q_r) is the controller model's CoM, and c_ref moves with it: at
 * the sample the new parameters take effect, c(0) in c_ref shifts by the change they make to c(q_r) (c(0) is the
 * model's initial CoM plus every such shift), so a model change does not move q_r. Kept at the nominal model's
 * c(0), the IK would correct the model's CoM step within ik_T: a step of nu_r whose finite difference is an
 * acceleration spike k dc / dt (the forearm 0.4 % heavier: dc 0.08 mm, 13 rad/s^2 at a knee, 1 N m at the elbow,
 * 50 N m at the torso, against the sway's own 0.05 m/s^2), a jolt a real controller's CoM reference does not
 * give. The new model still acts through the inverse dynamics, the gravity compensation and the CoM Jacobian
 * (the free joints' motion compensated with the new masses: a change of nu_r in proportion to the parameters'
 * change; a large step, e.g. a payload square's 6 kg, still jolts the references for one sample). (The gait's
 * CoM plan is absolute: it does not move with model changes.)
 * Pelvis height (pelvis_height): the base's world height follows z_ref(t) = z_B(0) + offset + amplitude
 * sin(2 pi freq t); its row (world z of the base velocity: third row of R_B times v_B) replaces the CoM's z row:
 *     e_z^T R_B v_B = z_dot_ref + k (z_ref - z_B(q_r))
 * truth->pelvis_height_ref is z_ref(t).
 * Free joints (free_joints[j] non-zero): joint j keeps its own reference scenario->refs[j] and the IK treats it
 * as given: q_r's joint j is set to r(t) before each solve, its column is left out of A (its velocity r_dot(t)
 * moved to the right-hand side: b - A_j r_dot) and nu_r's joint j is r_dot(t). The other joints compensate its
 * motion (the arms' swing in the CoM, say). */
typedef struct rb_sim_balance {
    bool enabled;
    double amplitude; /* m */
    double freq;      /* Hz */
    double ik_T;      /* s, IK correction time constant (0: 0.02) */
    struct {
        bool enabled;
        double offset, amplitude; /* m */
        double freq;              /* Hz */
    } pelvis_height;
    const unsigned char *free_joints; /* n (copied by rb_sim_init); NULL: none */
} rb_sim_balance;

/* ---- walking gait -----------------------------------------------------------------------------------------
 * Schedule (time based, as the thesis's: "the switching between the DS and the SS phases is time based"):
 * double support (both feet on the ground) on [0, start), standing still on [0, stand) (stand 0: not at all), then
 * single support k (k = 0 .. n - 1) on
 *     [start + k (ss + ds), start + k (ss + ds) + ss),
 * each followed by double support; n = floor((stop - start - ss) / (ss + ds)) + 1 single supports (the last
 * ends at start + (n - 1)(ss + ds) + ss <= stop), then double support to the end. The stance foot of single
 * support k is `first` for even k, the other foot for odd k; the other foot swings. The defaults are the
 * thesis's: ss 0.6 s, ds 0.9 s, start 0.5 s, stop 10.1 s, first left, i.e.
 *     DS [0, 0.5), LS [0.5, 1.1), DS [1.1, 2.0), RS [2.0, 2.6), DS [2.6, 3.5), LS [3.5, 4.1), ..., LS [9.5, 10.1)
 * (7 single supports, L R L R L R L). LS is the left single support: the LEFT foot is the stance foot and the
 * right foot swings (thesis 4.4.1: at t = 0.5 s "the friction models ... are used to compute the friction for the
 * right leg joints" (the swinging leg, no contact) while the left leg's estimation "is still model-free" (in
 * contact); ch. 5: "DS phase to LS phase: when the right foot starts leaving the ground").
 * Phase encoding (rb_gait_phase, truth/gait/phase): 0 double support, 1 left support, 2 right support. The
 * boundaries are taken with a tolerance of 1e-9 s (t = 0.5 is LS, t = 1.1 is DS).
 *
 * Footholds (world x forward; the feet keep their initial orientation, flat): the swing foot of single support k
 * lands at x = x0 + min(k + 1, n - 1) step_length (x0: the mean of the feet's initial x), so every step but the
 * first and the last moves the foot by 2 step_length and the last one closes the feet side by side: the robot
 * advances by (n - 1) step_length (6 step lengths with the defaults). Lateral: y_mid +- step_width / 2 (y_mid:
 * the mean of the feet's initial y; left at +), z: the foot's initial height (the ground).
 *
 * ZMP reference p_ref(t) (x, y): the stance foot's frame origin during single support; during double support
 * linear from the last stance foot to the next one; on [0, stand) the initial CoM (x, y), held; on [stand, start)
 * linear from there to the first stance foot; after the last single support linear to the midpoint of the feet over
 * ds, then held.
 *
 * CoM plan (Kajita et al. 2003, "Biped walking pattern generation by using preview control of zero-moment point"):
 * per horizontal axis the linear inverted pendulum at height z_c with the jerk as input, discretized at
 * T = RB_GAIT_PLAN_DT (exact for a jerk held over T):
 *     x_{k+1} = A x_k + B u_k,  x = [c; c_dot; c_ddot],  A = [1 T T^2/2; 0 1 T; 0 0 1],  B = [T^3/6; T^2/2; T]
 *     p_k = C x_k,  C = [1 0 -z_c / g]                  (the ZMP of the pendulum: c - z_c / g c_ddot)
 * The jerk minimizes sum_k Q (p_ref,k - p_k)^2 + R u_k^2 (Q = 1, R = 1e-6, Kajita's weights):
 *     u_k = -K x_k + sum_{j = 1..N} f_j p_ref,k+j,   N = round(preview / T)
 *     K = (R + B^T P B)^-1 B^T P A,   f_j = (R + B^T P B)^-1 B^T (A - B K)^T^(j-1) C^T Q   (j < N)
 *     f_N = K_1 - sum_{j < N} f_j   (the reference taken as held past the horizon: sum_j f_j = K_1 over all j, and
 *                                    the truncated sum would leave an offset of 0.6 % of the distance walked)
 * with P the solution of the discrete algebraic Riccati equation P = A^T P A - A^T P B (R + B^T P B)^-1 B^T P A
 * + C^T Q C (solved once, by iteration). The plan is computed once, at set-up, from x_0 = [c(0); 0; 0] over the
 * whole run (the reference held past its end), except that on [0, stand) the state is held at x_0 (u = 0: the
 * robot stands still; the preview controller starts at stand, previewing the reference from there); between plan
 * steps the CoM follows the cubic of the held jerk (c, c_dot, c_ddot continuous). z_c = com_height - the ground
 * height (the mean of the feet's initial z). The CoM's height reference is com_height; when it differs from the
 * initial CoM height it moves there on [stand, start) (a quintic: zero velocity and acceleration at both ends; needs
 * start > stand). On walk.json the plan's ZMP follows
 * p_ref within 0.4 mm RMS (3 mm at worst) from the end of the first single support on; before it the CoM, at rest at
 * t = 0, lags the reference's first shift to the stance foot (by up to 7 cm in the thesis's 0.5 s: still inside
 * the double support's polygon).
 *
 * Swing foot (single support k, duration ss, s = (t - t_k) / ss in [0, 1]): from its pose at lift-off (its contact
 * reference) to the foothold,
 *     x, y: from + (to - from) (10 s^3 - 15 s^4 + 6 s^5)       (zero velocity and acceleration at both ends)
 *     z:    from + (to - from) (10 s^3 - 15 s^4 + 6 s^5) + 64 swing_height s^3 (1 - s)^3
 * (the bump: zero velocity and acceleration at lift-off and touch-down, swing_height at s = 1/2), its orientation
 * held at the foot's initial one (rb_gait_swing).
 *
 * Tracking: the differential IK above (balancing) with the planned CoM (c_ref, c_dot_ref, z from com_height), the
 * pelvis's initial orientation, the contacts in effect and, in single support, the swing foot's pose and velocity.
 * Feedforward (feedforward, PD controller with gravity_comp): RB_GAIT_FF_DYNAMICS (the default) generalizes the
 * contact-consistent gravity compensation (sim.h, controllers) to the planned motion: g(q) there becomes
 *     ID(q, nu, a_r) + R^2 J_m a_r,   a_r = (nu_r - nu_r,prev) / dt   (the IK's acceleration; 0 at the first sample)
 * (the rotors' torque on the joints), the base rows again balanced by the minimum-norm contact wrenches; the PD then
 * only corrects (about 0.4 mm RMS of CoM error on walk.json, against about 13 mm with RB_GAIT_FF_GRAVITY, the plain
 * gravity compensation, at the same gains: the inertial torques of a walk are the PD's to make there). The torque
 * controller keeps its own feedforward (gravity compensation plus M_ss times the joint acceleration).
 * Contacts: each foot frame must carry one of the scenario's 6D contacts (initially active); the gait switches
 * them: the swing foot's contact is switched off at lift-off (the sample single support starts) and on at
 * touch-down (the sample the next double support starts) at the foot's pose then (sim.h, contacts). Contact
 * events on the feet's contacts are refused. Joints given references are free joints (rb_sim_balance).
 *
 * Truth (rb_sim_truth.gait; scenario channels truth/gait/...): the phase, the ZMP reference, the feet's reference
 * positions (a foot in contact: its contact reference; the swing foot: its spline), the ZMP (centre of pressure)
 * of the contact wrenches on the ground plane; truth->com_ref is the planned CoM. */

#define RB_GAIT_PLAN_DT 0.005 /* s, the CoM plan's period (Kajita's) */

typedef enum rb_gait_phase { RB_GAIT_DS = 0, RB_GAIT_LS = 1, RB_GAIT_RS = 2 } rb_gait_phase;
typedef enum rb_gait_foot { RB_GAIT_LEFT = 0, RB_GAIT_RIGHT = 1 } rb_gait_foot;
typedef enum rb_gait_feedforward { RB_GAIT_FF_DYNAMICS = 0, RB_GAIT_FF_GRAVITY } rb_gait_feedforward;

typedef struct rb_sim_gait {
    bool enabled;
    double ds, ss;       /* s, > 0: double and single support (0.9, 0.6) */
    double start, stop;  /* s: the first single support starts at start (>= 0; 0.5), the last ends by stop (10.1) */
    double stand;        /* s, >= 0 and < start unless 0: the robot stands still until then (0; 0: the CoM moves
                          * from t = 0, the preview controller anticipating the first shift of the ZMP) */
    rb_gait_foot first;  /* the first stance foot (left) */
    double step_length;  /* m, in [-0.2, 0.2] (0.06; negative: backwards) */
    double step_width;   /* m, in (0, 0.6]; NaN: the initial distance of the feet (world y) */
    double swing_height; /* m, in (0, 0.2] (0.03) */
    double com_height;   /* m, world z, above the ground; NaN: the initial CoM height */
    int feet[2];         /* model frames of the left and right foot (soles: on the ground, z up) */
    double preview;      /* s, preview horizon, in [0.1, 5] (1.6) */
    double ik_T;         /* s, > 0, IK correction time constant (0.02) */
    rb_gait_feedforward feedforward;  /* PD's compensation: of the planned motion's dynamics, or gravity only */
    const unsigned char *free_joints; /* n (copied by rb_sim_init); NULL: none */
} rb_sim_gait;

/* The thesis's defaults above (enabled false, feet -1: set them). */
rb_sim_gait rb_sim_gait_defaults(void);
/* RB_ECONFIG "gait.<key> ..." for a value out of the ranges above, or a stop leaving no single support. */
int rb_sim_gait_validate(const rb_sim_gait *g, rb_err *err);
/* Number of single supports n of the schedule (0 when none fits). */
size_t rb_gait_n_steps(const rb_sim_gait *g);
/* The phase at time t (s); *step (may be NULL): the index k of the current single support, or of the last one
 * before t (SIZE_MAX before the first); *s (may be NULL): the progress in [0, 1) of the current single support
 * (0 in double support). */
rb_gait_phase rb_gait_phase_at(const rb_sim_gait *g, double t, size_t *step, double *s);
/* The swing foot's position and velocity (3 each, v may be NULL) at progress s in [0, 1] of a swing of
 * `duration` s from `from` to `to` with the bump `height` (above). */
void rb_gait_swing(const double from[3], const double to[3], double height, double s, double duration, double p[3],
                   double v[3]);

/* The plan of a walk: footholds, ZMP reference and CoM (above). */
typedef struct rb_gait_plan rb_gait_plan;

typedef struct rb_gait_start {
    double feet[2][3]; /* initial positions of the left and right foot frames, world, m */
    double com[3];     /* initial centre of mass, world, m */
    double g;          /* gravity's magnitude, m/s^2, > 0 */
} rb_gait_start;

/* Plan a walk over [0, duration] s (validates g; RB_ECONFIG also for a CoM not above the ground or a com_height
 * change with start <= stand; RB_ENUMERIC when the Riccati iteration does not converge; RB_ENOMEM). Allocates the whole
 * plan (about 8 doubles per RB_GAIT_PLAN_DT); caller frees with rb_gait_plan_free. */
int rb_gait_plan_new(const rb_sim_gait *g, const rb_gait_start *st, double duration, rb_gait_plan **out, rb_err *err);
void rb_gait_plan_free(rb_gait_plan *p);
/* The planned CoM at time t (s): position, velocity, acceleration (3 each, world; any may be NULL). */
void rb_gait_plan_com(const rb_gait_plan *p, double t, double c[3], double c_dot[3], double c_ddot[3]);
/* The ZMP reference p_ref(t) (x, y). */
void rb_gait_plan_zmp_ref(const rb_gait_plan *p, double t, double zmp[2]);
/* Where the swing foot of single support k lands (world, m); k >= n: its last foothold. */
void rb_gait_plan_foothold(const rb_gait_plan *p, size_t k, double pos[3]);
/* The planned feet at time t: left xyz, right xyz (6; vel may be NULL), the swing foot from its planned
 * foothold (the engine swings from the foot's contact reference instead). */
void rb_gait_plan_feet(const rb_gait_plan *p, double t, double pos[6], double vel[6]);
/* z_c (m) of the plan's pendulum. */
double rb_gait_plan_zc(const rb_gait_plan *p);

/* The gait's part of a sample's truth (NaN / 0 without a gait). */
typedef struct rb_sim_gait_truth {
    rb_gait_phase phase;
    double zmp_ref[2];  /* p_ref(t), world x y, m */
    double feet_ref[6]; /* left xyz, right xyz: the feet's reference positions (contact reference or swing) */
    double zmp[2];      /* centre of pressure of the contact wrenches on the ground plane (z of the plan's
                         * ground), world x y, m; NaN without contact force */
} rb_sim_gait_truth;

RB_API_END

#endif
