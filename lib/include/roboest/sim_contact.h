/*
 * roboest sim: frictional contacts that stick or slip (seed 003, Hashlamon's thesis: Coulomb and Stribeck friction,
 * eqs. 2.1-2.6; foot slip, chapter 5). Included by roboest/sim.h: the scenario's floor (rb_sim_scenario.floor) and
 * the friction truth (rb_sim_contact_truth_get).
 *
 * Without a floor (floor.enabled false, the default) every contact is the rigid bilateral constraint of
 * roboest/sim.h and never slips. With one, each active contact is, at every sample, in one of two modes:
 *   STICK  its constraint rows as without a floor (dim 6: three forces and three moments; dim 3: the forces).
 *   SLIP   its two tangential rows (world x, y force) are released and, for a 6-D contact, its yaw row (world z
 *          moment) too: a slipping foot turns freely about the vertical (no torsional friction). The normal row
 *          (world z force) and a 6-D contact's roll and pitch rows stay. The ground applies Coulomb's kinetic
 *          friction at the frame origin instead (thesis eq. 2.2; MIXED, ON the robot as every wrench of sim.h):
 *              f_t = -mu(|v_t|) f_n d,   d = v_t / |v_t|,
 *          v_t the frame origin's world x-y velocity at the sample, f_n the normal row's force of the same solve,
 *          mu the kinetic coefficient with the Stribeck drop from the static one (eq. 2.6 without its viscous
 *          term):
 *              mu(v) = mu_d + (mu_s - mu_d) exp(-(v / v_s)^2)    (v_s > 0; v_s = 0: mu(v) = mu_d)
 * The decision is taken at each sample and held over the step (the RK4 stages keep the sample's modes, d and mu),
 * as the joints' stiction is:
 *   1. A slipping contact is tried in STICK when |v_t| < v_stick, when its velocity reversed over the step
 *      (v_t . d <= 0 with the previous step's d: it crossed zero between two samples, which at 1 ms and a large
 *      mu g can jump over the band |v_t| < v_stick), or when its coefficients there have no limit (mu_s infinite).
 *   2. Solve. A contact in STICK with f_n > 0 and |f_t| > mu_s f_n (f_t the world x-y force of that solve) slips:
 *      d = v_t / |v_t| when |v_t| >= v_stick, else d = -f_t / |f_t| (from rest it slips the way the stick force
 *      that broke it could not hold), mu = mu(|v_t|). A slipping contact whose normal force comes out < 0 (lifting)
 *      gets no friction for the step. Solve again while a contact changed (contacts only go from STICK to SLIP
 *      and lose their friction once in this loop: at most 2 n_contacts + 1 solves).
 *   A contact in STICK pulling (f_n <= 0: the constraint is bilateral) stays stuck without a friction check; the
 *   truth marks it (pulling) and counts it (pulling_samples).
 * Implicit coupling: f_t = -mu f_n d enters the dynamics as J_t^T f_t = (-mu d^T J_t)^T f_n, linear in the normal
 * force, so a slipping contact's normal row pushes along J_n - mu d^T J_t while its constraint stays
 * J_n nu_dot = c_n. The engine solves that coupled system as it is, J M^-1 J_f^T lambda = c - J a0, exactly: it is
 * no longer symmetric (an LU with partial pivoting replaces the Cholesky of sim.h, for the samples with a slipping
 * contact only). Iterating f_n through repeated solves would converge only while mu times the coupling between a
 * foot's tangential force and the normal forces (about the CoM height over the feet's separation, 4 for the
 * humanoid) stays below 1.
 * Reference pose: a slipping contact's Baumgarte reference follows its frame in world x, y and yaw at every
 * evaluation (its z, roll and pitch keep the floor's), so a contact that sticks again is held where it stopped:
 * Baumgarte does not pull it back. Its remaining slip velocity (< v_stick) decays with the contact's Baumgarte
 * damping (with baumgarte_T 0 it stays). The balance IK (rb_sim_balance) keeps its own target, the pose where the
 * contact became active: the controller does not know of the slip (an event that switches the contact off and on
 * again gives both the new pose).
 * Coefficients of a contact (at the sample): those of the first floor patch holding its frame origin's world x-y,
 * else the contact's own (contact_coef), else the floor's.
 * What is logged is what is applied: truth->contact_wrench of a slipping contact holds its friction force and zero
 * yaw moment, so rb_dyn_rnea(q, nu, nu_dot, pushes + contacts) = [0; tau_j] holds as in sim.h.
 *
 * Scenario key (roboest/sim.h "scenarios", configs/README.md):
 *   floor   {mu_s (>= 0, default: mu_d if given, else no limit), mu_d (>= 0, <= mu_s; default mu_s), v_s (m/s, >= 0,
 *           default 0: no Stribeck drop), v_stick (m/s, > 0, default 1e-3), patches: [{min [x y], max [x y] (m,
 *           world; min < max in both), mu_s, mu_d, v_s (as the floor's, the patch's own defaults)}], contacts:
 *           {<contact frame>: {mu_s, mu_d, v_s}}} -> rb_sim_floor. Channels (with a floor):
 *           truth/contacts/slip_velocity (<frame>_x <frame>_y per contact, m/s, 0 in stick),
 *           truth/contacts/slipping (0/1 per contact), truth/contacts/friction_ratio (|f_t| / f_n per contact, 0
 *           when f_n <= 0 or inactive), truth/contacts/pulling (0/1 per contact: active with f_n < 0).
 */
#ifndef ROBOEST_SIM_CONTACT_H
#define ROBOEST_SIM_CONTACT_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/core.h"

RB_API_BEGIN

/* Friction coefficients: static mu_s >= kinetic mu_d >= 0 (INFINITY: no limit), Stribeck velocity v_s (m/s, >= 0,
 * 0: none). */
typedef struct rb_sim_friction_coef {
    double mu_s, mu_d;
    double v_s;
} rb_sim_friction_coef;

/* A rectangle of the floor, world x-y (m), min < max in both, with its own coefficients. */
typedef struct rb_sim_floor_patch {
    double min[2], max[2];
    rb_sim_friction_coef coef;
} rb_sim_floor_patch;

typedef struct rb_sim_floor {
    bool enabled;                      /* false: rigid contacts that never slip (sim.h) */
    rb_sim_friction_coef coef;         /* the floor's */
    double v_stick;                    /* m/s, >= 0 (0: 1e-3) */
    const rb_sim_floor_patch *patches; /* n_patches (copied by rb_sim_init); the first holding a point wins */
    size_t n_patches;
    const rb_sim_friction_coef *contact_coef; /* n_contacts (copied) or NULL; an entry with mu_s NaN: the floor's */
} rb_sim_floor;

/* The friction truth of the current sample (arrays borrowed from the engine, overwritten by every rb_sim_step). */
typedef struct rb_sim_contact_truth {
    size_t n_contacts;
    const double *slip_velocity;   /* 2 per contact: world x, y of the frame origin's velocity while slipping, m/s */
    const unsigned char *slipping; /* 1: SLIP at this sample */
    const double *friction_ratio;  /* |f_t| / f_n of the applied wrench (0 when f_n <= 0 or inactive) */
    const unsigned char *pulling;  /* 1: active with f_n < 0 */
    const size_t *pulling_samples; /* samples so far with the contact active and f_n < 0 */
    const double *mu_s, *mu_d;     /* the coefficients in effect at the sample (INFINITY: no limit) */
} rb_sim_contact_truth;

typedef struct rb_sim rb_sim;

/* mu(v) of the Stribeck form above (v: slip speed, m/s). */
double rb_sim_friction_mu(const rb_sim_friction_coef *c, double v);
/* The current sample's friction truth; NULL without a floor or for a NULL engine. */
const rb_sim_contact_truth *rb_sim_contact_truth_get(const rb_sim *sim);

RB_API_END

#endif
