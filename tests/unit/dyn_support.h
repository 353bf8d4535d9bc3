/* Helpers for the lib/dynamics tests: a seeded generator, random tree models built with the builder,
 * random states, finite-difference helpers and error measures. */
#ifndef ROBOEST_TEST_DYN_SUPPORT_H
#define ROBOEST_TEST_DYN_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roboest/dynamics.h"
#include "roboest/model.h"

/* splitmix64: deterministic, high-entropy, seeded. */
typedef struct trng {
    uint64_t s;
} trng;

uint64_t trng_next(trng *r);
double trng_uniform(trng *r, double lo, double hi);
size_t trng_index(trng *r, size_t n); /* uniform in [0, n) */
void trng_unit(trng *r, double v[3]);
void trng_rotation(trng *r, double R[9]);
/* Physically valid inertial parameters about the body origin (mass 0.2..4 kg, CoM within 0.3 m). */
void trng_inertia(trng *r, double pi[10]);

/* Random tree: n_bodies bodies (base included) with branching, revolute (~65%), prismatic (~20%) and fixed
 * (~15%) joints, random axes (some along coordinate axes), random joint poses, random inertias (some fixed
 * bodies massless), and about n_bodies / 2 user frames at random poses. Caller frees with rb_model_free. */
rb_model *random_tree(trng *r, size_t n_bodies, bool floating);

/* Random state: q (base at a random pose with a random unit quaternion; joints in [-pi, pi], prismatic in
 * [-0.5, 0.5]), nu and nu_dot with entries up to vmax and amax in magnitude. Any pointer may be NULL. */
void random_state(trng *r, const rb_model *m, double *q, double *nu, double vmax, double *nu_dot, double amax);
void random_vector(trng *r, double *x, size_t n, double lo, double hi);

/* max |a - b| / max(1, max |b|) */
double rel_err(const double *a, const double *b, size_t n);
double max_abs(const double *a, size_t n);

/* World pose of frame f at q (runs rb_dyn_kinematics). */
void fk_frame_pose(const rb_model *m, rb_dyn *ws, const double *q, size_t f, rb_xform *X);
/* Velocity of pose X1 relative to X0 over dt (finite difference, first order of the SE(3) log) in
 * representation rep, X0 taken as the frame's pose at t: used with central differences as
 * (d(Xm, Xp, 2 eps)). */
void pose_rate(const rb_xform *Xm, const rb_xform *Xp, double dt, rb_dyn_rep rep, const rb_xform *X, double out[6]);

/* q (+) t e_k for velocity coordinate k (rb_dyn_integrate along a unit velocity). */
void perturb(const rb_model *m, const double *q, size_t k, double t, double *q_out);

/* Wrench (world coordinates, about the world origin) the rest of the tree exerts on the subtree rooted at
 * body i, by Newton-Euler on the subtree's bodies: momentum rates minus gravity minus the external wrenches
 * on the subtree. Reads the kinematic state (rb_dyn_kinematics with nu and nu_dot). */
void subtree_wrench(const rb_model *m, const rb_dyn *ws, size_t i, const rb_ext_wrench *ext, size_t n_ext, double W[6]);

/* Rotation matrix to unit quaternion (w x y z). */
void quat_from_m3(const double R[9], double q[4]);

#endif
