/* Private to lib/sim: the engine layout shared by sim.c (physics), sim_truth.c (the truth's own passes) and
 * sim_init.c (set-up). */
#ifndef ROBOEST_SIM_INTERNAL_H
#define ROBOEST_SIM_INTERNAL_H

#include "roboest/sim.h"

struct rb_sim {
    rb_sim_scenario sc;
    const rb_model *m;
    rb_dyn *plant, *ctrl;
    size_t n, nq, nv, voff, nc, npush, nf, max_rows;
    double t;
    size_t step, n_steps;

    /* owned copies of the scenario */
    rb_sim_ref *refs;
    rb_sim_joint_ctrl *gains;
    rb_sim_actuator *act;
    rb_friction_model *fric;
    rb_friction_state *fst;
    rb_sim_contact *contacts;
    rb_sim_contact_event *events;
    size_t next_event;
    rb_sim_push *pushes;
    int *frames;

    /* contact state */
    unsigned char *active;
    rb_xform *cref;
    struct sim_fric *fr; /* friction: stick or slip (contact_friction.c); NULL without a floor */

    /* the plant's velocity coordinates parents first (tree_order) and its evaluation at one state (plant_eval) */
    size_t *vperm, *vpos;
    int *vpar;
    double *arm_v;     /* nv: R^2 J_m of each joint's coordinate, 0 for the base's */
    double *Mraw;      /* nv x nv: M(q) without the rotors (the energy; the controller's when shared) */
    double *L;         /* nv x nv: M + diag(R^2 J_m) in the tree order, factored L^T L (tree_ltl) */
    double *h;         /* nv: bias forces with the pushes in effect */
    size_t ncr;        /* contact rows of that evaluation (first rows of Jc, c) */
    size_t n_ext_push; /* pushes in effect at the sample: the first entries of ext */
    int kin;           /* what the plant's kinematic state holds of the current sample (KIN_*) */
    bool share_ctrl; /* the controller's model is the plant's (no payload, no rb_sim_set_model_inertia): M, h shared */

    /* state and per-sample values */
    double *q, *nu, *nu_dot;
    double *tau_net;     /* n: tau_m - tau_F of the non-held joints (held over the step) */
    unsigned char *held; /* n: held by stiction over the step */
    double *tau_j, *tau_m, *tau_f, *tau_des, *cur, *cur_cmd, *mpos, *mvel, *macc, *ref, *ref_d, *ref_dd;
    unsigned char *stuck;
    double *cw, *pw, *ft;
    rb_xform *fpose;
    double *fvel, *facc;
    double *tau_prev, *int_e;       /* torque loop */
    double *tau_ref;                /* n: the desired joint torque (truth->tau_ref) */
    double *tau_hat, *tau_f_hat;    /* n each: the estimates of rb_sim_set_torque_feedback (NaN: none) */
    double *tau_g_prev, *wdot_prev; /* gear windup: previous sample's gear torque and windup rate */
    unsigned char *at_limit;
    /* payloads (copies; segments of all of them in one array), their current parameters (10 each) */
    rb_sim_payload *payloads;
    rb_sim_payload_segment *segs;
    size_t npl;
    double *pl_pi;
    const double **body_pi; /* n_bodies: each body's current parameters in the plant (model or payload) */
    /* the controller's model: values of rb_sim_set_model_inertia waiting for the next sample (10 per body) */
    double *ctrl_pi;
    unsigned char *ctrl_dirty;
    unsigned char *free_j; /* n: balance free joints */
    rb_ext_wrench *ext;    /* the pushes in effect and the jets, then the contacts (for the FT wrenches) */
    /* jets (jets.c): copies (failures of all of them in one array), the model's state, the sample's values */
    size_t njet;
    rb_sim_jet *jets;
    rb_sim_jet_failure *jfail;
    double *jet_T, *jet_Td, *jet_u, *jet_thr, *jet_thr_rate, *jet_rpm_des, *jet_rpm;
    struct sim_flight *flight; /* the flight controller (flight.c), NULL when off */

    /* linear algebra scratch */
    double *a0, *Jc, *Y, *S, *c, *lam, *J6, *tmp, *gv, *hold;
    int *yleaf; /* per constraint row: the chain its Y row lies on (-1: anywhere) */
    int *cleaf; /* per contact: the chain of its frame's body (tree_leaf) */
    /* RK4 */
    double *qs, *nus, *kv, *ka;
    /* balance IK (controller model) */
    double *q_r, *nu_r, *nu_r_prev, *A, *AtA, *rhs, com0[3], R_B0[9], z_B0;
    struct sim_gait *gait; /* walking (gait.c); NULL without */

    /* plant-model mismatch (mismatch.c): the run's draws, the command delay line (ring of tau_des, n per slot) */
    bool mm_on;
    rb_sim_mismatch_draws mmd;
    double *cmd_ring;
    size_t ring_len, ring_pos;
    /* series-elastic joints (mismatch_elastic.c; NULL: rigid): the rotor's angle and velocity at the joint's scale,
     * the spring's torque on the link at the sample (n each) */
    double *el_th, *el_thd, *tau_s;
    double *el_k; /* the implicit spring's workspace: n x nv (L^-T e_j), n x n, n */

    rb_sim_truth truth;
};

enum { KIN_NONE = 0, KIN_POS, KIN_VEL, KIN_ACC };

/* Series-elastic joints (mismatch_elastic.c, roboest/sim_mismatch.h): set-up (after the armature, from the draws),
 * the spring torques of the sample (after the actuators; the first sample preloads the springs), the step's
 * implicit spring torques (after the sample's solve; true: solve again), the rotors over the step (after the
 * link's stages), a joint's drive torque on the link. */
int sim_elastic_init(rb_sim *s, rb_err *err);
void sim_elastic_sample(rb_sim *s);
bool sim_elastic_implicit(rb_sim *s);
void sim_elastic_advance(rb_sim *s);
static inline double sim_drive(const rb_sim *s, size_t j) { return s->tau_s ? s->tau_s[j] : s->tau_m[j]; }

/* The actuator's effective k_t, R (the all-zero default: 1, 1) and rotor inertia seen at the joint, R^2 J_m. */
static inline double act_kt(const rb_sim_actuator *a) { return a->k_t > 0 ? a->k_t : 1.0; }
static inline double act_R(const rb_sim_actuator *a) { return a->R != 0 ? a->R : 1.0; }
static inline double act_armature(const rb_sim_actuator *a) { return act_R(a) * act_R(a) * a->J_m; }

/* Payloads (payload.c): validation of the scenario's list; at each sample the plant's payload bodies. */
int sim_payload_validate(const rb_model *m, const rb_sim_payload *pl, size_t n, rb_err *err);
int sim_payload_sample(rb_sim *s, rb_err *err);
/* The controller's model takes the values given since the last sample; under balance the CoM reference's origin
 * com0 moves by the model's CoM change at q_r (call it with q_r final for the sample). */
int sim_ctrl_model_sample(rb_sim *s, rb_err *err);
/* Switch contact k on with the frame's current pose as its reference. */
int sim_activate_contact(rb_sim *s, size_t k, rb_err *err);
/* Everything of the sample at s->t (controller, actuators, friction, accelerations, truth). */
int sim_compute_sample(rb_sim *s, rb_err *err);
/* Joint limits on: clamp the joints at their limits, zero the velocity into them, mark at_limit. */
void sim_apply_limits(rb_sim *s);
/* Jets (jets.c). validate: the scenario's list (RB_ECONFIG naming the jet); init: copies, state, truth views
 * (before the first sample); sample: the throttles, thrusts and rotor speeds at s->t, each jet's wrench appended to
 * the wrenches in effect (s->ext, s->n_ext_push); advance: the thrust model and the rotor over one step of dt
 * (before the next sample); free. */
int sim_jets_validate(const rb_sim_scenario *sc, rb_err *err);
int sim_jets_init(rb_sim *s, const rb_sim_scenario *sc, rb_err *err);
int sim_jets_sample(rb_sim *s, rb_err *err);
void sim_jets_advance(rb_sim *s);
void sim_jets_free(rb_sim *s);
/* The flight controller (flight.c; roboest/sim_flight.h), run by the jets' functions: validate (with the jets'),
 * init (after the jets' copies, before their steady start), sample (updates at its rate, sets truth->com_ref),
 * throttle (jet k's, held between updates), free. */
int sim_flight_validate(const rb_sim_scenario *sc, rb_err *err);
int sim_flight_init(rb_sim *s, const rb_sim_scenario *sc, rb_err *err);
int sim_flight_sample(rb_sim *s, rb_err *err);
double sim_flight_throttle(const rb_sim *s, size_t k);
void sim_flight_free(rb_sim *s);
/* Frictional contacts (contact_friction.c, roboest/sim_contact.h), s->fr non-NULL with a floor only.
 * validate: the floor (RB_ECONFIG naming the key); init: s->fr when the floor is on (after the contacts' copy and
 * s->max_rows); free.
 * follow: from contact_rows, contact k's frame pose and MIXED velocity at the evaluated state (kept for the
 * decision); returns the contact's Baumgarte reference: s->cref[k] (what the balance IK holds the contact at) moved
 * in x, y and yaw by the contact's slip since its activation (a slipping contact's follows its frame).
 * released: row r of contact k is left out of the solve (SLIP: x, y, and a 6-D contact's yaw).
 * force_rows: after the constraint rows 0..crows-1 of a solve (contact rows without the released ones) are in s->Y,
 * the force row of each (tree order, as Y's): a slipping contact's normal row's is L^-T (J_n - mu d^T J_t)^T, the
 * others NULL (= their Y row); NULL when no contact slips (the symmetric system). lu_solve: s->lam <- S^-1 s->lam,
 * S = s->S (rows x rows, not symmetric; overwritten); false if singular. wrenches: the slipping contacts' friction
 * forces into cw (6 per contact) from their normal forces there.
 * begin / update / end: the decision around the step's final solve (sim.c contact_solve): begin takes the sample's
 * coefficients, velocities and re-stick candidates; update, after a solve with s->cw, switches contacts and returns
 * true when the solve must be repeated; end writes the truth. */
int sim_fric_validate(const rb_sim_scenario *sc, rb_err *err);
int sim_fric_init(rb_sim *s, const rb_sim_scenario *sc, rb_err *err);
void sim_fric_free(rb_sim *s);
const rb_xform *sim_fric_follow(rb_sim *s, size_t k, const rb_xform *X, const double v[6]);
bool sim_fric_released(const struct sim_fric *fr, size_t k, int r);
const double *const *sim_fric_force_rows(rb_sim *s, size_t crows);
bool sim_fric_lu_solve(rb_sim *s, size_t rows);
void sim_fric_wrenches(const rb_sim *s, double *cw);
void sim_fric_begin(rb_sim *s);
bool sim_fric_update(rb_sim *s);
void sim_fric_end(rb_sim *s);
/* The differential IK (ik.c) of balancing and walking: joint references at the sample. */
static inline bool sim_ik_on(const rb_sim *s) { return s->sc.balance.enabled || s->sc.gait.enabled; }
int sim_ik_refs(rb_sim *s, rb_err *err);
/* The gait (gait.c). check: the scenario's gait (RB_ECONFIG naming the key; the scenario loader reuses it); init:
 * the plan (after the contacts' activation and the IK's set-up); phase: the phase at s->t, the swing foot's contact
 * switched off at lift-off; the contact to switch on at a touch-down (SIZE_MAX: none; the caller activates it);
 * refs: the sample's references and the gait's truth (after the switching, before the plant's evaluation);
 * swing_task: the swing foot's frame and reference (p, v, R; false in double support); com_dot: the planned CoM
 * velocity of the sample; zmp: truth->gait.zmp from the contact wrenches (after the solve). */
int sim_gait_check(const rb_sim_scenario *sc, rb_err *err);
int sim_gait_init(rb_sim *s, rb_err *err);
void sim_gait_free(rb_sim *s);
size_t sim_gait_phase(rb_sim *s);
void sim_gait_refs(rb_sim *s);
bool sim_gait_swing_task(const rb_sim *s, int *frame, const double **p, const double **v, const double **R);
const double *sim_gait_com_dot(const rb_sim *s);
int sim_gait_zmp(rb_sim *s, rb_err *err);
/* The generalized forces of the IK's motion at the sample (nv, into out): ID(q, nu, a_r) + R^2 J_m a_r, a_r = (nu_r -
 * nu_r_prev) / dt (0 at the first sample), on workspace ws: the gait's feedforward in place of g(q). */
int sim_gait_dynamics(rb_sim *s, rb_dyn *ws, double *out, rb_err *err);
/* The small dense linear algebra (dense.c, row-major, n <= a few dozen): Cholesky A = L L^T in place (the lower
 * triangle receives L, its diagonal as 1 / L_jj; false: not positive definite) and its solve; log of a rotation as a
 * rotation vector (angle < pi); pose error [p - p_ref; log(R R_ref^T)]. */
bool sim_chol(double *A, size_t n);
void sim_chol_solve(const double *L, size_t n, double *x);
void sim_rot_log(const double R[9], double w[3]);
void sim_pose_error(const rb_xform *X, const rb_xform *ref, double e[6]);
/* The dot product sum_i a_i b_i, summed in index order. */
static inline double sim_dot(const double *a, const double *b, size_t n)
{
    double x = 0.0;
    for (size_t i = 0; i < n; i++)
        x += a[i] * b[i];
    return x;
}

/* ---- tree-sparse Cholesky (tree_chol.c) ----
 * tree_order: the model's velocity coordinates parents first: perm[k] the coordinate at position k, pos its
 * inverse, par[k] the position of its tree parent (-1 at the root; a floating base is the chain 0..5).
 * tree_leaf: position of the deepest coordinate that moves `body` (its chain holds every coordinate that does);
 * -1: none.
 * tree_ltl: H (n x n, row-major, tree order; only entries (k, i) with i = k or an ancestor of k are read)
 * factored in place as H = L^T L, L lower triangular with the same pattern, its diagonal stored as 1 / L_kk;
 * false if not positive definite.
 * tree_solve_lt / tree_solve_l: x <- L^-T x, x <- L^-1 x (so M^-1 b = L^-1 L^-T b); tree_solve_lt_chain: the
 * same as tree_solve_lt for an x that is zero off the chain of position leaf (the result stays on it). */
void tree_order(const rb_model *m, size_t *perm, size_t *pos, int *par);
int tree_leaf(const rb_model *m, const size_t *pos, int body);
bool tree_ltl(double *H, const int *par, size_t n);
void tree_solve_lt(const double *L, const int *par, size_t n, double *x);
void tree_solve_lt_chain(const double *L, const int *par, size_t n, int leaf, double *x);
void tree_solve_l(const double *L, const int *par, size_t n, double *x);

#endif
