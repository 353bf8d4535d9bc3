/*
 * roboest observers for a walking biped (seed 003, the Hashlamon thesis): the LIPM CoM (rb_lipm), the attitude of one
 * IMU (rb_att), joint friction by FBSE (rb_fbse) and foot slip (rb_slip). Included by roboest/observers.h; the
 * conventions of that header hold here.
 */
#ifndef ROBOEST_OBSERVERS_BIPED_H
#define ROBOEST_OBSERVERS_BIPED_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/core.h"
#include "roboest/dynamics.h"
#include "roboest/filters.h"
#include "roboest/model.h"

RB_API_BEGIN

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

RB_API_END

#endif /* ROBOEST_OBSERVERS_BIPED_H */
