/*
 * roboest estimators: the built-in stage types (one file per stage under lib/estimators/).
 *
 * Every stage follows the rb_stage_type contract of roboest/pipeline.h: causal, no allocation or
 * I/O in step(), element names of outputs copied from the inputs.
 *
 *   lowpass            in x (n), out y (n). First-order low-pass per element, the exact
 *                      discretization (zero-order hold on the input) of tau y' = x - y with
 *                      tau = 1 / (2 pi cutoff_hz):
 *                          a   = 1 - exp(-2 pi cutoff_hz dt)      (dt: the clock period)
 *                          y_0 = x_0,   y_k = y_{k-1} + a (x_k - y_{k-1})
 *                      so a unit step from 0 at k = 0 (y_0 = 0) gives y_k = 1 - (1 - a)^k =
 *                      1 - exp(-t_k / tau) on a uniform clock. Units as the input.
 *                      params: cutoff_hz (number > 0, required).
 *   finite_difference  in x (n), out dx (n). Backward difference per element on the actual clock
 *                      times (a channel clock may be non-uniform):
 *                        order 1: dx_k = (x_k - x_{k-1}) / (t_k - t_{k-1});
 *                                 exact for a linear ramp, error <= h/2 max|x''| (h = interval);
 *                        order 2: the three-point backward formula for the second derivative,
 *                                 dx_k = 2 [(x_k - x_{k-1})/h1 - (x_{k-1} - x_{k-2})/h2] / (h1 + h2),
 *                                 h1 = t_k - t_{k-1}, h2 = t_{k-1} - t_{k-2}: exact for a parabola,
 *                                 error <= h max|x'''| (1 + O(h)) on a uniform clock.
 *                      Before enough samples exist (k = 0, and k = 1 for order 2) dx is 0.
 *                      Units: "<unit>/s" (order 1) or "<unit>/s^2" (order 2) when the input's unit
 *                      is known, "" otherwise.
 *                      params: order (integer 1 or 2, default 1).
 *   kf_derivative      in x (n), out x (n, filtered), x_dot (n), x_ddot (n), and the diagnostics
 *                      innovation (n), nis (n), var (3n) described below. The constant-acceleration
 *                      Kalman filter of the joint-torque paper (seed 000, eq. 3), one independent
 *                      3-state, 1-measurement KF per element (the filters module's linear KF: Cholesky
 *                      gain, Joseph form, symmetric P). State s = [x, x_dot, x_ddot], dT = t_k - t_{k-1}
 *                      (the clock's actual interval, so a jittery channel clock is handled):
 *                          s_k = F s_{k-1} + w,  F = [[1, dT, dT^2/2], [0, 1, dT], [0, 0, 1]]
 *                          z_k = x_k + v,        v ~ N(0, r)
 *                      process noise w ~ N(0, Q):
 *                        "jerk" (default): x_ddot driven by white jerk of spectral density q
 *                          (unit^2/s^5), the exact discretization
 *                            Q = q [[dT^5/20, dT^4/8, dT^3/6], [dT^4/8, dT^3/3, dT^2/2], [dT^3/6, dT^2/2, dT]]
 *                          so the filter does not change with the sample rate for a given q;
 *                        "diagonal": Q = diag(q_diag) per step, whatever dT (as tuned per rate).
 *                      Start: at the first finite sample z_0, s = [z_0, 0, 0], P = diag(p0), then the
 *                      update with z_0; outputs are NaN before it. A NaN sample later is skipped
 *                      (predict only). Causal; nothing allocated per step. Units: x as the input,
 *                      x_dot "<unit>/s", x_ddot "<unit>/s^2" ("" when the input's unit is unknown).
 *                      Diagnostics (rb_filter_get_diag of each element's filter after its step; leave
 *                      the ports unwired when not needed):
 *                        innovation  z_k - x^-_k, the measurement minus the predicted position (F s_{k-1})_0;
 *                                    NaN up to and including the first finite sample (nothing predicted)
 *                                    and where the sample is NaN (skipped). Names and units as the input.
 *                        nis         nu_k^2 / S_k, S_k = P^-_k[0][0] + r: the normalized innovation squared
 *                                    of the element's update (chi-square with 1 degree of freedom when the
 *                                    model and q, r fit the data: mean 1); NaN where innovation is. Unit "1".
 *                        var         the diagonal of P after the step, 3 values per element in element
 *                                    order: [var_x, var_x_dot, var_x_ddot] of element 0, then element 1, ...
 *                                    Element names "<name>/x", "<name>/x_dot", "<name>/x_ddot"; units
 *                                    "<unit>^2", "<unit>^2/s^2", "<unit>^2/s^4" (a compound unit in
 *                                    parentheses, "(N.m)^2"; "" when unknown). NaN before the first finite
 *                                    sample; there P is diag(p0) updated with z_0, then it settles to the
 *                                    steady state of the Riccati recursion (for a fixed interval).
 *                      params: process_noise ("jerk" | "diagonal", default "jerk"); q (number array,
 *                      1 or n values >= 0, default [1e4]; "jerk" only, rejected with "diagonal");
 *                      q_diag (3 numbers >= 0, required with "diagonal", rejected otherwise); r (number
 *                      array, 1 or n values > 0, default [1e-6]); p0 (3 numbers > 0, default
 *                      [1, 1e2, 1e4]). A q or r array of another length is RB_ECONFIG at create.
 *                      `roboest tune kf-derivative` picks q on a log (rb_kfd_tune below).
 *   difference         in a (n), b (n, optional), out y (n) = a - b - offset per element, with a's element
 *                      names and units (e.g. the joint-torque paper's "current-based minus friction" estimate:
 *                      motor_torque's tau_m minus a friction stage's tau_F; or FT readings minus calibrated
 *                      offsets, b unwired). NaN propagates. A wired b of another width, or an offset array of
 *                      neither 1 nor n values, is RB_ECONFIG at create.
 *                      params: offset (number array, 1 or n values, default [0]).
 *   motor_torque       in current (n, A), out tau_m (n, "N m"). The motor torque reaching the joint side
 *                      of the gear (joint-torque paper eq. 2, the rotor's inertia neglected):
 *                          tau_m_i = k_t_i R_i I_m_i
 *                      with the motor torque constant k_t (N m/A) and the SIGNED gear ratio R (rotor angle =
 *                      R joint angle, e.g. -160 on ergoCub: the sign turns the rotor's torque into the
 *                      joint's direction). NaN passes through.
 *                      params: k_t (number array > 0, required), R (number array, non-zero, required); each
 *                      1 value for every joint or one per joint.
 *   friction_model     in velocity (n, joint velocity, rad/s), out tau_F (n, "N m"). An analytic friction
 *                      law per joint, friction.h's convention (tau_j = tau_m - tau_F, tau_F v >= 0):
 *                        "coulomb_viscous"  F_c S(v) + F_v v
 *                        "scv"              (F_c + (F_s - F_c) exp(-(v / v_s)^2)) S(v) + F_v v
 *                        "tanh6"            g1 (tanh(g2 v) - tanh(g3 v)) + g4 tanh(g5 v) + g6 v
 *                        "lugre"            the bristle model (friction.h): dz/dt = v - sigma0 |v| z / g(v),
 *                                           tau_F = sigma0 z + sigma1 dz/dt + F_v v; z starts at 0 and is
 *                                           advanced exactly over each clock interval t_k - t_{k-1} with v_k
 *                                           held (rb_friction_lugre_step; nothing at k = 0), so the output at
 *                                           k depends on samples up to k only. A NaN velocity gives NaN and
 *                                           leaves z.
 *                      with the smooth sign S(v) = tanh(v / v_eps) (S(v) = sgn(v) when v_eps = 0): v_eps
 *                      defaults to v_s / 10 for "scv" (|S - sgn| <= 2 exp(-20 |v| / v_s): below 1.3 % from
 *                      |v| = v_s / 4 on, so the Stribeck hump keeps its shape while the jump at rest is
 *                      smoothed) and to 0 for "coulomb_viscous"; tanh6 is smooth by construction. Each
 *                      element's parameters go through rb_friction_build and its validation (F_s >= F_c,
 *                      g2 >= g3, ...; an error names the element). NaN velocity gives NaN.
 *                      params: model ("coulomb_viscous" | "scv" | "tanh6" | "lugre", required); the model's
 *                      parameters as number arrays (1 value for every joint or one per joint, >= 0): F_c, F_s,
 *                      F_v (N m, N m, N m s/rad), v_s (rad/s), v_eps (rad/s, optional), g1..g6 (N m, s/rad,
 *                      s/rad, N m, s/rad, N m s/rad), sigma0 (N m/rad), sigma1 (N m s/rad). A parameter
 *                      the model does not use is an error (RB_ECONFIG), as is a missing one.
 *                      `roboest train-friction --fit-analytic MODEL` prints these parameters fitted on a log.
 *   friction_pinn      in motor_velocity (n), joint_velocity (n); out tau_F (n, "N m"). The
 *                      physics-informed friction network of the joint-torque paper (friction.h, "the friction
 *                      network") per joint, loaded from the file `roboest train-friction` writes. The stage
 *                      keeps, per joint, the last H samples of both inputs (oldest first) and evaluates the
 *                      joint's network on [w_{k-H+1..k}, v_{k-H+1..k}] (rb_fnet_infer_forward: second layer in
 *                      single precision, ~4 us per joint at 40 inputs and 233/229 hidden units). Feed it what
 *                      training used: the motor velocity as logged (motors_state/velocities is rotor side,
 *                      about R times the joint's) and the joint velocity from the same source (e.g. a
 *                      kf_derivative stage with the q and r the training spec gave), on a clock of the
 *                      training's sample period (checked: within 2 %, else RB_ECONFIG).
 *                      While the history fills (the first H - 1 samples, and again after a NaN in either
 *                      input, which restarts the count) the output follows history_fill: "zero" (0, the
 *                      paper's start-up value: the UKF starts at tau_F = 0), "model" (the file's SCV model at
 *                      the current joint velocity; NaN if it is NaN) or "nan".
 *                      params: network (string, required: the file, relative to the pipeline file's folder);
 *                      joints (string array, optional: the file's joint for each element, default the
 *                      joint_velocity element names); history_fill ("zero" | "model" | "nan", default
 *                      "zero"); H (integer >= 0, default 0: a check that the file's H equals it).
 *                      Errors at create (one line, naming the file and the item): the file's own (missing,
 *                      malformed, wrong input size: "stage pinn: net.json: joints[0] (r_knee):
 *                      layers[0].weights row 0 has 39 values, expected 2 H = 40"), a joint without a network,
 *                      motor_velocity and joint_velocity of different widths, an H or sample-period mismatch.
 *
 * The model-based joint-torque stages need the pipeline's "model" (rb_stage_setup.model): every joint vector
 * (n = model joints) follows its joint list; joint-vector inputs whose element names are model joints must be
 * bound in that order. Configuration errors are RB_ECONFIG naming the parameter and item, with the closest model
 * name for a misspelt FT sensor or frame ("ft_sensors[1]: no FT sensor 'wrist_tf_sensor' in model arm_2ft (did
 * you mean 'wrist_ft_sensor'?)"), an input whose width does not fit the parameters ("input ft has 6 elements,
 * expected 12 (6 per sensor of ft_sensors)") or a per-element array of the wrong length.
 *
 *   rnea_torque        the joint-torque paper's RNEA baseline (seed 000): joint torques from FT sensors and the
 *                      joint motion. in q (n, rad), dq (n, rad/s), ddq (n, rad/s^2; e.g. kf_derivative's), ft (6 per
 *                      sensor of ft_sensors, in that order, each as the sensor reports it: N, N m), acc (3, m/s^2,
 *                      proper acceleration) and gyro (3, rad/s) of the IMU at imu_frame (optional, together; required
 *                      for a floating base; a fixed base without them is still: acc = -g in the base (= world)
 *                      frame, gyro 0). out tau (n, N m), contacts (6 per contact: the wrench the environment exerts
 *                      on the robot at the contact frame, BODY: frame axes, moment about its origin), ft_offset (6 per
 *                      sensor, constant after the calibration).
 *                      The dynamics core's FT-based estimator (dynamics.h rb_ft_est_*): the tree is cut at the FT
 *                      sensors; per sub-model the unknown contact wrenches close its Newton-Euler equations (one
 *                      contact: exact; several: minimum norm; none: left as a residual), then the RNEA inside each
 *                      sub-model with the measured FT wrenches and the estimated contacts gives the torques.
 *                      Start-up FT offset ("first_sample"): at the first sample whose inputs are all finite, the
 *                      readings the model predicts for the measured motion with the robot balanced on its contacts
 *                      (a fixed base: one wrench at the base link) are f_pred, and o = f_measured - f_pred is
 *                      subtracted from every reading. A sample with a non-finite input gives NaN outputs.
 *                      params: ft_sensors (string array, required), contacts (frames; default: the base link for
 *                      a fixed base, none for a floating base; a fixed base with contacts of its own should list the
 *                      base link too, it bears the mounting wrench), imu_frame (frame, default the base link),
 *                      ft_offset ("first_sample" | "none").
 *
 *   ukf_torque         the joint-torque paper's UKF (seed 000 eq. 5-8, the public estimator's design): joint torques
 *                      without torque sensors. in q (n, rad; not a state: the model is evaluated at the measured q),
 *                      dq (n, rad/s), current (n, A), ft (6 per sensor of ft_sensors), acc (3 per frame of
 *                      accelerometers, m/s^2, proper), gyro (3 per frame of gyroscopes, rad/s), friction (n, N m;
 *                      e.g. a friction model's output: it measures the tau_F block, the paper's key idea). ft, acc,
 *                      gyro and friction are optional (width 0 when their lists are empty / unwired). NaN in a
 *                      measured input skips that element of the update; a sample with non-finite q is predicted only.
 *                      State (published order, as var): dq (n), tau_m (n, motor torque at the joint, N m), tau_F (n),
 *                      ft (6 per FT sensor: its reading, offset-corrected), contacts (6 per contact, BODY at the
 *                      frame), base (floating base only: a_B, the proper linear acceleration of the base origin in
 *                      base axes, and w_B, its angular velocity: 6), ft_bias (6 per FT, ft_bias), acc_bias (3 per
 *                      accelerometer, acc_bias), gyro_bias (3 per gyroscope, gyro_bias).
 *                      Process over dt (the clock's interval t_k - t_(k-1), or the dt parameter), at the previous
 *                      sample's q:
 *                        K(q) ddq + K_b(q) a + h(q, dq, w_B) = tau_m - tau_F - diag(R^2 J_m) ddq + G_ft y + G_c w
 *                      the forward dynamics of every sub-model cut at the FT sensors (dynamics.h rb_cut_dyn: each
 *                      sub-model's M_ss ddq = tau_m - tau_F - C - M_sb alpha_g + sum J_FT^T f_FT + J_ext^T f_ext,
 *                      eq. 6, its base acceleration alpha_g given by the joints above it, solved parents first by
 *                      Cholesky factors of the M_ss blocks, no inverse formed), with a = [-g; 0] for a fixed base
 *                      (gravity enters once, as the base's proper acceleration) and a = [a_B; 0] for a floating one
 *                      (eq. 7: base angular acceleration taken as zero); then
 *                        dq+ = dq + dt ddq                         (explicit Euler)
 *                        tau_F+ = tau_F                            ("random_walk", eq. 8)
 *                               = tau_F + dt ddq (k2 + k0 k1 / cosh^2(k1 dq))   ("rate_model")
 *                        w+ = w - dt k w                           (contacts; k = contact_decay, 0: random walk)
 *                      and every other block constant (random walk), process noise diag(q_*) per step.
 *                      Measurements (published order, as innovation): dq (n), current i = tau_m / (k_t R) (n, R the
 *                      SIGNED gear ratio), friction = tau_F (n, when wired), ft = state + ft_bias (6 per FT), acc = the
 *                      proper acceleration of each accelerometer frame (frame axes) from a, ddq of the process model
 *                      at the state and the velocity-product terms, + acc_bias (3 each), gyro = the angular velocity
 *                      of each gyroscope frame from w_B and dq, + gyro_bias (3 each); noise diag(r_*).
 *                      The UKF is the filters module's (alpha, beta, kappa; fresh sigma points for the update,
 *                      Cholesky square root, no explicit inverse, P kept symmetric), its sigma points evaluated in
 *                      batch: the model's matrices at q are computed once per sample. The model (process,
 *                      measurements, layout, start) is dynamics.h's rb_tukf_*, the jump adaptation below
 *                      filters.h's rb_jump_*; the stage adapts ports and parameters.
 *                      Start (first sample with finite q; then updated with that sample): dq measured, tau_m = R k_t
 *                      i_m, tau_F 0, contacts 0, biases 0, base (floating) from base_imu by eq. 7 (w_B = R_BS w_S,
 *                      a_B = R_BS a_S - w_B x (w_B x p_BS)), FT states the readings the model predicts for the
 *                      measured q, dq, zero joint accelerations with the robot balanced on its contacts (a fixed base:
 *                      one wrench at the base link) and, with ft_offset "first_sample", the offset o = f_measured(0) -
 *                      f_predicted(0) subtracted from every later reading (the robot should be still at the start);
 *                      "none": the FT states start at the readings.
 *                      out tau_j (n, N m): tau_m - tau_F - R^2 J_m ddq (= tau_m - tau_F with motor_inertia 0, the
 *                      paper); tau_m, tau_f, dq (n); ft (6 n_ft), contacts (6 n_c); base (6, floating base; 0
 *                      wide otherwise); bias (the bias blocks in order; 0 wide without); ddq (n, the process model's
 *                      joint accelerations at the estimate, rad/s^2); var (the diagonal of P after the update,
 *                      published state order, "<block>/<element>" names); innovation (z - zhat, NaN where skipped);
 *                      nis (1);
 *                      adapt (2, with adapt_probability > 0, else 0 wide): nis_current, the NIS of the motor currents'
 *                      block of the sample's first update (NaN without an update), and inflation, the variance added
 *                      per joint to the tau_m / tau_F of adapt_blocks, summed over the joints ((N m)^2; 0: the gate
 *                      was not crossed, or no current's innovation exceeded its S_ii).
 *                      Jump adaptation (opt-in, adapt_probability in (0, 1); 0, the default, is off and changes
 *                      nothing): an innovation-triggered covariance inflation for jumps of the random-walk blocks (a
 *                      controller's torque step, a load or contact change) that their small per-step variance
 *                      follows slowly. After the sample's update, the currents' NIS nu_c^T S_cc^-1 nu_c (the rows
 *                      and columns of the currents used, c of them) is compared with the chi-square quantile
 *                      rb_chi2_quantile(adapt_probability, c): the current measures tau_m alone and exactly (H
 *                      diagonal, no model error), so its NIS is the one that reveals a torque step and stays
 *                      calibrated when the dynamics or IMU models are off. Above the gate, the update is repeated
 *                      from the same prior x with the prior variance of the adapt_blocks raised by the innovation's
 *                      shortfall (one-sample covariance matching, E[nu_i^2] = S_ii), times adapt_scale:
 *                        tau_m,i and/or tau_F,i  + (k_t R)_i^2 max(0, nu_i^2 - S_ii)     (nu_i, S_ii: current i)
 *                        ft element e            + max(0, nu_e^2 - S_ee)                  (its FT reading's)
 *                      so the sample that shows the jump absorbs it (applying it to the next prediction instead
 *                      would leave this sample's estimate a step behind and let the state's correlations spread
 *                      the jump into the other blocks first). tau_F is not in the default: a current innovation
 *                      says nothing about friction, and a tau_F as free as tau_m lets the dynamics cancel the jump.
 *                      The FT states are: a torque step moves the contact and FT wrenches too, and FT states that
 *                      lag force the dynamics to hold tau_j back. Costs one more update on triggered samples; no
 *                      allocation.
 *                      Errors in step(): RB_ENUMERIC when the state covariance loses positive definiteness, the
 *                      innovation covariance does, or the state or predicted measurements stop being finite, naming
 *                      the block and element ("the innovation covariance lost positive definiteness at measurement
 *                      acc/forearm/x: ..."; the runner prefixes the stage and sample); a sub-model mass matrix not
 *                      positive definite, naming the sub-model and joint.
 *                      params (per joint: 1 or n values; per FT: 1, 6 or 6 n_ft; per contact: 1, 6 or 6 n_c; per IMU:
 *                      1, 3 or 3 n_imu): ft_sensors, contacts, accelerometers, gyroscopes (names, default []), base_imu
 *                      (frame on the base link listed in both IMU lists; floating base only, required there), k_t
 *                      (N m/A, required), gear_ratio (signed, non-zero, required), motor_inertia (J_m, kg m^2, rotor
 *                      side, default 0), alpha 1, beta 2, kappa 0, dt (s, 0: the clock), q_dq, q_tau_m, q_tau_f, q_ft,
 *                      q_contact, q_base_imu, q_ft_bias, q_acc_bias, q_gyro_bias (process variances per step), p0_dq,
 *                      p0_tau_m, p0_tau_f, p0_ft, p0_contact, p0_base_imu, p0_bias (initial variances), r_dq,
 *                      r_current, r_friction, r_ft, r_acc, r_gyro (measurement variances), friction_dynamics
 *                      ("random_walk" | "rate_model") with friction_k0, friction_k1, friction_k2, contact_decay
 *                      (1/s), ft_bias, acc_bias, gyro_bias (booleans), ft_offset ("first_sample" | "none"),
 *                      adapt_probability (0: off, default; in (0, 1), e.g. 0.9999), adapt_blocks (subset of "tau_m",
 *                      "tau_f", "ft"; default ["tau_m", "ft"], whose "ft" does nothing without FT sensors; given
 *                      explicitly, "ft" needs them), adapt_scale (> 0, default 1); adapt_blocks and adapt_scale are
 *                      rejected without adapt_probability.
 */
#ifndef ROBOEST_ESTIMATORS_H
#define ROBOEST_ESTIMATORS_H

#include "roboest/stage.h"

RB_API_BEGIN

extern const rb_stage_type rb_stage_lowpass;
extern const rb_stage_type rb_stage_finite_difference;
extern const rb_stage_type rb_stage_kf_derivative;
extern const rb_stage_type rb_stage_motor_torque;
extern const rb_stage_type rb_stage_friction_model;
extern const rb_stage_type rb_stage_friction_pinn;
extern const rb_stage_type rb_stage_rnea_torque;
extern const rb_stage_type rb_stage_ukf_torque;
extern const rb_stage_type rb_stage_difference;


/* Register every built-in stage type. RB_EINVAL if one is already registered, RB_ENOMEM. */
int rb_estimators_register(rb_registry *reg, rb_err *err);

RB_API_END

#endif
