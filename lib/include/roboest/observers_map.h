/*
 * roboest observers: maximum-a-posteriori whole-body dynamics (rb_map; seed 002). Included by roboest/observers.h;
 * the conventions of that header hold here.
 */
#ifndef ROBOEST_OBSERVERS_MAP_H
#define ROBOEST_OBSERVERS_MAP_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/core.h"
#include "roboest/dynamics.h"
#include "roboest/filters.h"
#include "roboest/model.h"

RB_API_BEGIN

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

#endif /* ROBOEST_OBSERVERS_MAP_H */
