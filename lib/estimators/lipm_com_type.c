/* lipm_com: the stage type (ports, parameter schema, documentation); configs/stages.md is generated from it. */
#include "lipm_com.h"

static const char *const lc_in[] = {"q", "orientation", "acc", "gyro", "wrenches", "feet_position", "phase", "dq"};
static const char *const lc_out[] = {"position",      "zmp",           "zmp_error",    "offset",
                                     "corrected",     "velocity",      "acceleration", "acc_error",
                                     "base_position", "base_velocity", "variance",     "support"};

/* a long string constant on purpose: the reference's text */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
static const char lc_doc[] =
    "The centre of mass on the linear inverted pendulum (seed 003, the Hashlamon thesis, ch. 3; PAPERS.md\n"
    "3.1; `roboest/observers.h`, `rb_lipm_*`, is the reference), from the feet's force/torque sensors and\n"
    "the base IMU: per horizontal world axis (x, y: two independent adaptive Kalman filters, the thesis's\n"
    "AKF, eq. 2.28-2.42) on\n"
    "\n"
    "    c_ddot = (g / z_c) (c - p)                                   (3.3)\n"
    "\n"
    "Frame: the world of the `orientation` input (horizontal axes), origin placed so that the CoM is at\n"
    "`com0` at the first sample (the thesis's x0 = 0: the CoM starts at the origin). The thesis rotates the\n"
    "acceleration into the body frame (3.5); here everything stays in world axes (its simulation does the\n"
    "same, sec. 4.4: \"all measurements and calculations are performed in the world frame\"; for an upright\n"
    "robot facing x the two agree).\n"
    "\n"
    "ZMP (3.1): each foot's centre of pressure from its wrench (ON the robot, at the foot frame of `feet`,\n"
    "moment about the frame origin; `wrench_rep` \"body\": the frame's axes, an FT sensor's reading; \"mixed\":\n"
    "world axes, the simulator's `truth/contacts/<frame>`) on the sole plane `sole_depth` below the frame,\n"
    "\n"
    "    cop = [-(tau_y + h f_x) / f_z, (tau_x - h f_y) / f_z, -h]\n"
    "    p = (F_L rho_L + F_R rho_R) / (F_L + F_R)                  (3.1)\n"
    "\n"
    "over the feet whose normal force f_z exceeds `force_threshold` (and, with `phase` wired, that the phase\n"
    "names: 0 both, 1 left, 2 right). The feet's world positions rho come from the kinematics of `q` turned\n"
    "by the base's attitude, anchored: a foot loaded at this sample and the last stays where it was, the\n"
    "base is placed to keep it there, an unloaded foot follows the kinematics (like `legged_odometry`, for\n"
    "positions only); or from `feet_position` when it is wired (e.g. a footstep plan or the truth).\n"
    "No loaded foot: the ZMP is undefined (NaN): form 1 only predicts, form 2 holds its ZMP state; counted\n"
    "in the run's warnings.\n"
    "\n"
    "CoM acceleration (3.4)-(3.6): the IMU's attitude A_I^w (`orientation`, e.g. the attitude stage or a\n"
    "log), proper acceleration f (`acc`, IMU axes, +g up at rest) and rate w (`gyro`) give\n"
    "\n"
    "    c_ddot^w = A_I^w f + g_vec - A_I^w (w_dot x r + w x (w x r)),   g_vec = (0, 0, -g)\n"
    "\n"
    "r the IMU's position relative to the CoM (`imu_position` in base axes, turned into IMU axes through the\n"
    "model's `imu_frame`; without it, from the kinematics of q at each sample). The thesis prints + before\n"
    "the lever-arm terms, which is the sign for the CoM's position relative to the IMU; its text defines r\n"
    "as the IMU's relative to the CoM, for which - is right (a rigid body spinning about its CoM: 0).\n"
    "w_dot: the gyro's backward difference (`angular_acc` \"difference\") or 0 (\"zero\"). The base's\n"
    "attitude A_b = A_I^w A_b^I (3.6), A_b^I from the model's `imu_frame`. The thesis takes r constant in\n"
    "the body (its simulated IMU sits at a fixed offset from the CoM). On a robot whose IMU is on the pelvis\n"
    "the swinging legs move the CoM within the base; without `imu_position`, `com_motion` \"kinematic\" (ours,\n"
    "the default) adds that motion, c = p_B + A_b B_c(q):\n"
    "\n"
    "    c_ddot^w += A_b (B_c_ddot + 2 w_B x B_c_dot)\n"
    "\n"
    "B_c the CoM in base axes from the kinematics. With `dq` wired its rate is exact (the centroidal momentum\n"
    "of [0, w_B, dq]: B_c_dot = l / m - w_B x B_c) and a critically damped second-order filter at\n"
    "`com_motion_cutoff` (explicit Euler over the sample period) differentiates it once; without `dq` the\n"
    "filter differentiates B_c(q) twice (noisier: keep the cutoff lower). With `dq` the rest of (3.4) and the\n"
    "measured ZMP pass through the same filter, every measurement then lagged alike (about 2 / (2 pi cutoff)\n"
    "s): a swing leg's lift-off jolts a pelvis IMU, and the jolt cancels only when both parts are in step.\n"
    "\"rigid\" leaves the term out.\n"
    "\n"
    "The pendulum has no angular momentum; a walking robot's legs have. With `zmp_model` \"centroidal\" (ours)\n"
    "the measured ZMP is moved to the one the pendulum would have,\n"
    "\n"
    "    p_x += k_dot_y / (m g),   p_y -= k_dot_x / (m g)\n"
    "\n"
    "k the centroidal angular momentum (world axes) from the kinematics of q, `dq` and the gyro (the base's\n"
    "linear velocity does not change it), its rate from the same filter at `com_motion_cutoff`.\n"
    "\n"
    "Forms (`form`; T the sample's period, A and B rebuilt when it changes):\n"
    "\n"
    "    form 1 (3.7-3.13): x = [c, c_dot, c_ddot], input the jerk (a_k - a_{k-1}) / T,\n"
    "        A = [[1, T, T^2/2], [0, 1, T], [0, 0, 1]], B = [0, 0, T], measurement p = [1, 0, -z_c/g] x\n"
    "    form 2 (3.14-3.20): x = [c, c_dot, c_ddot, p], input the ZMP rate (p_k - p_{k-1}) / T,\n"
    "        A = [[1, T, T^2/2, 0], [0, 1, T, 0], [0, (g/z_c) T, 1, 0], [0, 0, 0, 1]],\n"
    "        B = [0, 0, -(g/z_c) T, T], measurement a = [0, 0, 1, 0] x\n"
    "\n"
    "(3.11) prints c_ddot as the input; it is the jerk. A constant acceleration error cancels in form 1's\n"
    "input, a constant ZMP error in form 2's. Filter start (Table 3.1): x0 = [com0, 0, 0(, com0)], P0 =\n"
    "`p0` I, Q0 = `q0` I, R0 = `r0`, windows `N_Q`, `N_R`.\n"
    "\n"
    "ZMP error and the disturbance estimates (3.21-3.26; the low-pass is not given in the thesis: ours,\n"
    "first order, cutoff `lpf_cutoff`, starting at 0):\n"
    "\n"
    "    e_p = p - (c^ - (z_c / g) a')                                (3.24)\n"
    "    offset = LPF(e_p),  acc_error = (g / z_c) LPF(e_p),  corrected = c^ + offset (form 2, 3.26)\n"
    "\n"
    "a' the measured acceleration (`zmp_error_acc` \"measured\", default: the thesis's \"p_ZMP based on\n"
    "acceleration sensor measurements\"; form 1's estimate follows the ZMP, so only the measured a shows\n"
    "an acceleration error) or the estimate c_ddot^ (\"estimated\": 3.24 as printed, with the dots the\n"
    "extraction dropped). Form 1's `corrected` is its position. A constant ZMP bias cannot be told from a\n"
    "constant CoM shift (the LIPM is translation invariant): form 2's `offset` holds the bias plus any\n"
    "error of `com0`, and `corrected` is the CoM the biased ZMP implies; its `position` is right when\n"
    "`com0` is.\n"
    "\n"
    "Velocity: form 2's is post-filtered, v_f = g3 c_dot^ + (1 - g3) v_f (3.19; `g3` 0.002 in the thesis's\n"
    "simulation, 0.0025 in its experiment); form 1's is the state. Base (3.12, 3.13, 3.20), world axes,\n"
    "c_off the base origin relative to the CoM in base axes (r minus the IMU frame's position in the base):\n"
    "\n"
    "    base_position = [corrected, z_c] + A_b c_off,  base_velocity = [velocity, 0] + (A_I^w w) x (A_b c_off)\n"
    "\n"
    "Test-only keys (to run the thesis's 3.4.2 and 3.4.3 on one clean log; leave them at 0 otherwise):\n"
    "`test_acc_error` is added to the CoM acceleration from `test_acc_error_time`, `test_zmp_offset` to the\n"
    "measured ZMP.\n"
    "\n"
    "Errors: configuration (RB_ECONFIG; `roboest run` exits 3): no model or a fixed base, an `imu_frame` or\n"
    "foot frame not in the model (with a suggestion), a foot listed twice, an input of the wrong width,\n"
    "`z_c` <= 0 (the schema), `imu_position` not 3 values. Input (exit 3): a `phase` other than 0, 1, 2 or\n"
    "NaN, an `orientation` of zero norm, a clock that does not advance. A NaN in q, orientation or the IMU:\n"
    "no acceleration and no ZMP at that sample (counted).\n";
#pragma GCC diagnostic pop

static const char *const lc_in_docs[] = {
    "n values, rad (m): the joint positions",
    "4 values: the IMU's attitude A_I^w, quaternion w x y z (any norm > 0; e.g. the attitude stage)",
    "3 values, m/s^2: the IMU's proper acceleration in its axes (+g up at rest)",
    "3 values, rad/s: the IMU's angular velocity in its axes",
    "12 values: left then right foot wrench [f; tau] (N, N m) ON the robot at the `feet` frames (`wrench_rep`)",
    "6 values, m: left then right foot frame's world position; optional (default: the kinematics, anchored)",
    "1 value: 0 double support, 1 left support, 2 right support (e.g. `truth/gait/phase`); optional",
    "n values, rad/s: the joint velocities; with `zmp_model` \"centroidal\" only",
};
static const char *const lc_out_docs[] = {
    "2 values (x y), m: the filter's CoM position c^",
    "2 values, m: the measured ZMP (3.1) (NaN: no loaded foot)",
    "2 values, m: e_p (3.24)",
    "2 values, m: LPF(e_p), form 2's CoM offset estimate",
    "2 values, m: form 2: position + offset (3.26); form 1: position",
    "2 values, m/s: form 2 the post-filtered velocity (3.19), form 1 the state's",
    "2 values, m/s^2: the filter's CoM acceleration",
    "2 values, m/s^2: (g / z_c) LPF(e_p), form 1's acceleration-error estimate",
    "3 values, m: the base origin in the world (3.12)",
    "3 values, m/s: the base origin's velocity in the world (3.13, 3.20)",
    "3 (form 1) or 4 (form 2) per axis: the diagonal of P, named x/c, x/c_dot, x/c_ddot(, x/p), then y/...",
    "2 values (left right): 1 when the foot counts in the ZMP",
};

static const char *const rep_choices[] = {"body", "mixed", NULL};
static const char *const angacc_choices[] = {"difference", "zero", NULL};
static const char *const commotion_choices[] = {"kinematic", "rigid", NULL};
static const char *const zmpmodel_choices[] = {"lipm", "centroidal", NULL};
static const char *const perr_choices[] = {"measured", "estimated", NULL};
static const double zero2[] = {0, 0};

static const rb_param_spec lc_params[] = {
    {.name = "form",
     .kind = RB_PARAM_INTEGER,
     .def_number = 1,
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 2,
     .doc = "1: state [c, c_dot, c_ddot], jerk input, ZMP measured (3.7-3.13); 2: state [c, c_dot, c_ddot, p], ZMP "
            "rate input, acceleration measured (3.14-3.20)"},
    {.name = "z_c",
     .kind = RB_PARAM_NUMBER,
     .required = true,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "m: the CoM height of the pendulum (the thesis does not give it)"},
    {.name = "imu_frame",
     .kind = RB_PARAM_STRING,
     .required = true,
     .doc = "the model frame of the IMU whose orientation, acc and gyro are wired (A_b^I from the model)"},
    {.name = "feet",
     .kind = RB_PARAM_STRING_ARRAY,
     .required = true,
     .min_count = 2,
     .max_count = 2,
     .doc = "[left, right]: the model frames the foot wrenches are given at (FT sensor or sole frames)"},
    {.name = "wrench_rep",
     .kind = RB_PARAM_STRING,
     .def_string = "body",
     .choices = rep_choices,
     .doc = "\"body\": the foot frame's axes (an FT sensor); \"mixed\": world axes (the simulator's truth/contacts)"},
    {.name = "sole_depth",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = zero2,
     .def_count = 2,
     .min_count = 2,
     .max_count = 2,
     .has_min = true,
     .min = 0,
     .doc = "m, [left, right]: the sole plane's depth below each foot frame's origin (along -z), 0 for a sole frame"},
    {.name = "force_threshold",
     .kind = RB_PARAM_NUMBER,
     .def_number = 20,
     .has_min = true,
     .min = 0,
     .doc = "N: a foot counts in the ZMP (and anchors) when its normal force exceeds this",
     .details = "default ours"},
    {.name = "imu_position",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .doc = "m, [x, y, z]: the IMU's position relative to the CoM in base axes; none: from the kinematics of q",
     .details = "the thesis's simulation: [0.01, -0.01, 0.02]"},
    {.name = "com0",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = zero2,
     .def_count = 2,
     .min_count = 2,
     .max_count = 2,
     .doc = "m, [x, y]: the CoM's world position at the first sample (x0 of Table 3.1: 0)"},
    {.name = "angular_acc",
     .kind = RB_PARAM_STRING,
     .def_string = "difference",
     .choices = angacc_choices,
     .doc = "w_dot in (3.4): \"difference\" of the gyro, or \"zero\""},
    {.name = "com_motion",
     .kind = RB_PARAM_STRING,
     .def_string = "kinematic",
     .choices = commotion_choices,
     .doc = "without imu_position: \"kinematic\" adds the CoM's motion within the base (the legs') to (3.4); "
            "\"rigid\": the thesis's (the IMU at a fixed offset from the CoM, r only for the lever arm)",
     .details =
         "ours: the thesis's simulated IMU sits at a fixed offset from the CoM; on a pelvis IMU the swinging legs "
         "move the CoM by tenths of m/s^2"},
    {.name = "com_motion_cutoff",
     .kind = RB_PARAM_NUMBER,
     .def_number = 15,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "Hz: the natural frequency of the critically damped filter that differentiates B_c(q) twice (com_motion "
            "\"kinematic\"); ours"},
    {.name = "zmp_model",
     .kind = RB_PARAM_STRING,
     .def_string = "lipm",
     .choices = zmpmodel_choices,
     .doc = "\"lipm\": the measured ZMP as it is (the thesis); \"centroidal\": shifted by the rate of the centroidal "
            "angular momentum (from q, dq and the gyro) to the ZMP the pendulum would have; needs dq",
     .details = "ours: a swinging leg's angular momentum moves the ZMP by centimetres from the pendulum's"},
    {.name = "zmp_error_acc",
     .kind = RB_PARAM_STRING,
     .def_string = "measured",
     .choices = perr_choices,
     .doc = "the acceleration in e_p (3.24): \"measured\" (form 1 then sees an acceleration error) or "
            "\"estimated\" (3.24 as printed)"},
    {.name = "lpf_cutoff",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.1,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "Hz: the first-order low-pass of e_p (offset and acc_error)",
     .details = "ours (the thesis gives none): a 1.6 s time constant, below the gait's 0.33-1 Hz"},
    {.name = "g3",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.002,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .has_max = true,
     .max = 1,
     .doc = "form 2's velocity post-filter constant (3.19)",
     .details = "Table 3.1: 0.002 simulation, 0.0025 experiment"},
    {.name = "N_Q",
     .kind = RB_PARAM_NUMBER,
     .def_number = 2000,
     .has_min = true,
     .min_exclusive = true,
     .min = 1,
     .doc = "AKF window of the Q rule (samples; Table 3.1)"},
    {.name = "N_R",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1000,
     .has_min = true,
     .min_exclusive = true,
     .min = 1,
     .doc = "AKF window of the R rule (samples; Table 3.1)"},
    {.name = "p0",
     .kind = RB_PARAM_NUMBER,
     .def_number = 100,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "P0 = p0 I (Table 3.1)"},
    {.name = "q0", .kind = RB_PARAM_NUMBER, .def_number = 1, .has_min = true, .min = 0, .doc = "Q0 = q0 I (Table 3.1)"},
    {.name = "r0",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "R0 (Table 3.1)"},
    {.name = "gravity",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0,
     .has_min = true,
     .min = 0,
     .doc = "m/s^2; 0: the model's |gravity|"},
    {.name = "test_acc_error",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = zero2,
     .def_count = 2,
     .min_count = 2,
     .max_count = 2,
     .doc = "TEST ONLY, m/s^2 [x, y]: added to the CoM acceleration from test_acc_error_time (thesis 3.4.2)"},
    {.name = "test_acc_error_time",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0,
     .doc = "TEST ONLY, s: when test_acc_error starts"},
    {.name = "test_zmp_offset",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = zero2,
     .def_count = 2,
     .min_count = 2,
     .max_count = 2,
     .doc = "TEST ONLY, m [x, y]: added to the measured ZMP (thesis 3.4.3)"},
};

const rb_stage_type rb_stage_lipm_com = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "lipm_com",
    .summary = "CoM position, velocity and disturbances on the linear inverted pendulum from the feet's wrenches and "
               "the base IMU (forms 1 and 2, adaptive KF; seed 003 ch. 3)",
    .doc = lc_doc,
    .inputs = lc_in,
    .input_docs = lc_in_docs,
    .n_inputs = LC_N_IN,
    .optional_inputs = (1u << LC_FEET) | (1u << LC_PHASE) | (1u << LC_DQ),
    .outputs = lc_out,
    .output_docs = lc_out_docs,
    .n_outputs = LC_N_OUT,
    .params = lc_params,
    .n_params = sizeof lc_params / sizeof lc_params[0],
    .create = lc_create,
    .step = lc_step,
    .finish = lc_finish,
    .destroy = lc_destroy,
    .notes = lc_notes,
};
