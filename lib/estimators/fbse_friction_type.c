/* fbse_friction: the stage type (ports, parameter schema, documentation); configs/stages.md is generated from it. */
#include "fbse_friction.h"

static const char *const fb_in[] = {"q",    "dq",          "tau",   "wrenches",      "acc",
                                    "gyro", "orientation", "phase", "truth_friction"};
static const char *const fb_out[] = {"friction",          "measured",          "model",
                                     "coulomb",           "viscous",           "link_torque",
                                     "contact",           "singular",          "theta_ddot",
                                     "reference_coulomb", "reference_viscous", "coulomb_rel_error",
                                     "viscous_rel_error", "swing_rmse",        "reference_swing_rmse"};

/* a long string constant on purpose: the reference's text */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
static const char fb_doc[] =
    "The joint friction of both legs of a walking biped without joint torque sensors (seed 003, the Hashlamon\n"
    "thesis, ch. 4, \"foot base sensor estimation\"; PAPERS.md 3.1; `roboest/observers.h`, `rb_fbse_*`, is the\n"
    "reference): the friction is the applied joint torque minus the link torque of the legs' joint rows of the\n"
    "floating-base dynamics, computed from the joint states, the base IMU and the measured foot wrenches,\n"
    "\n"
    "    tau = u_F + tau^l,   tau^l = H_m [v_b_dot; w_b_dot; theta_m_ddot] + b_m - J_F,m^T F_E,m     (4.4, 4.5)\n"
    "\n"
    "while the leg's foot is on the ground; a Coulomb and viscous model identified by RLS meanwhile predicts it\n"
    "while the leg swings. The legs are the joint chains from the base to the two `feet` frames (left then right,\n"
    "base to foot): every per-joint output is over them, named after the joints. The base's linear velocity does\n"
    "not enter (PAPERS.md 0.4; gravity comes with the accelerometer's proper acceleration), so no velocity\n"
    "estimate is needed. The IMU (`imu_frame`, on the base body) is carried to the base origin by the rigid\n"
    "transfer f_B = R_BS f_S - w x (w x p) + p x w_dot.\n"
    "\n"
    "Foot wrenches (`wrench_source`): \"ft\" (default), the readings of the two FT sensors `ft_sensors` between\n"
    "each leg and its foot as the sensors report them (the walker's ankle sensors): the bodies on the foot side\n"
    "of each sensor leave the model and the reading acts on the leg, exact whatever the foot does; \"feet_body\" /\n"
    "\"feet_mixed\": the wrench ON the robot at each foot frame in its axes / in world axes (sole sensors, the\n"
    "thesis's; the simulator's `truth/contacts/<frame>` is mixed), with the model's feet.\n"
    "\n"
    "Methods (`method`):\n"
    "\n"
    "- \"nonslip\" (4.9-4.23): a foot in contact does not move, J_m nu_dot + J_m_dot nu = 0, with the base's\n"
    "  classical acceleration from the accelerometer and the `orientation` (needed: the gravity direction).\n"
    "  `base_angular_acc` \"min_norm\" (the thesis's): [w_b_dot; theta_ddot] is the minimum-norm solution\n"
    "  J^T (J J^T)^-1 Upsilon of the stacked constraints (6 x 9 in single support, 12 x 15 in double support),\n"
    "  an approximation (PAPERS.md 0.3); \"gyro_diff\": w_b_dot is the backward difference of the gyro\n"
    "  (low-passed at `gyro_diff_cutoff` Hz when > 0) and each leg's square 6 x 6 solve is exact. Friction\n"
    "  u_F = tau - tau^l - armature theta_ddot (4.18). A leg whose J_m3 is near singular (a straight knee:\n"
    "  the smallest to largest diagonal of the Cholesky factor of J_m3 J_m3^T below `singular_threshold`)\n"
    "  gets NaN (`measured`), no update, `singular` 1, and is counted in the run's warnings.\n"
    "- \"filtered\" (4.24-4.36): no acceleration. Per joint Z(s) = K / (s + sigma) (`K`, `sigma`: Table 4.2),\n"
    "  with w = [w_b; theta_dot_m] and H~ the leg's rows of the mass matrix (base angular and own-leg columns,\n"
    "  the IMU's lever arm folded in, `armature` on the diagonal),\n"
    "\n"
    "      xi1 = -H~ w,  xi2 = tau + J_F^T F_E + H~_dot w - H_lin c_0 - C(q, w, theta_dot)\n"
    "      <u_F>_Z = K xi1 + <xi2 - sigma xi1>_Z\n"
    "\n"
    "  (H_dot by `rb_dyn_mass_matrix_dot`). The thesis prints the last term as <-xi1>_{Z2}, Z2 = -K sigma /\n"
    "  (s + sigma), i.e. - sigma <xi1>_Z: integrating (4.30) by parts gives + sigma <xi1>_Z (one joint,\n"
    "  u_F = tau - m w_dot: <m w_dot>_Z = K m w - sigma <m w>_Z); the sign here is the derived one. The\n"
    "  filters are discretized exactly for inputs linear over a period and start at <u_F>_Z = 0. `measured`\n"
    "  is (sigma / K) <u_F>_Z: the friction through a unit-gain low-pass at sigma rad/s (a lag of about\n"
    "  1 / sigma s: Table 4.2's 1 rad/s is slow against a step).\n"
    "\n"
    "Identification (4.38-4.44): per joint RLS (thesis eq. 2.18-2.21) of u_F = F_c sgn(theta_dot) + F_v\n"
    "theta_dot, Phi0 = 0, P0 = `p0` I, forgetting `forgetting_factor` (1: none, the thesis's), updated only on\n"
    "the samples its leg is in contact. Nonslip: on u_F and [sgn theta_dot, theta_dot]. Filtered: on <u_F>_Z\n"
    "and, by default (`regressors` \"filtered\"), [<sgn theta_dot>_Z, <theta_dot>_Z]; \"literal\" regresses on\n"
    "the unfiltered [sgn theta_dot, theta_dot] as (4.39) prints, which identifies about K / sigma times the\n"
    "friction (twice for Table 4.2's theta2, theta3: hip roll and yaw; PAPERS.md 0.2). `friction` is the\n"
    "measured value where the leg is in contact (and it is finite), the model's elsewhere; `link_torque` is\n"
    "tau - friction.\n"
    "\n"
    "Contact: from `phase` when wired (0 double support, 1 left support, 2 right support, e.g.\n"
    "`truth/gait/phase`; the thesis's time-based switching), else from the ground's normal force on each foot\n"
    "(along the foot frame's z) with hysteresis: down above `contact_on`, up below `contact_off`.\n"
    "\n"
    "Evaluation (optional `truth_friction`, e.g. `truth/joints/friction_torques`; not used by the estimate):\n"
    "`reference_coulomb`, `reference_viscous` are the batch least-squares fit of F_c sgn(theta_dot) + F_v\n"
    "theta_dot to the true friction over the samples the RLS used so far (the velocities visited in contact),\n"
    "`coulomb_rel_error`, `viscous_rel_error` the identified values' relative errors against them, and\n"
    "`swing_rmse` the RMSE of `friction` against the truth over the samples the joint's leg has swung so far\n"
    "(NaN before any), `reference_swing_rmse` the same for the truth's fit as it stood at each of those samples\n"
    "(what a Coulomb-viscous model fitted in contact can do there). Without it they are NaN.\n"
    "\n"
    "Errors: configuration (RB_ECONFIG; `roboest run` exits 3): no model or a fixed base, a foot, IMU frame or\n"
    "FT sensor not in the model (with a suggestion) or misplaced (the IMU off the base body, a sensor not\n"
    "between the base and its foot, the feet on one chain), an input of the wrong width, `K` or `sigma` of\n"
    "the wrong length or not > 0, `contact_on` not above `contact_off`, \"nonslip\" or \"feet_mixed\" without\n"
    "the orientation input. Input (exit 3): a `phase` other than 0, 1, 2 or NaN, a quaternion of zero norm, a\n"
    "clock that does not advance. A non-finite joint state, torque, wrench, IMU value or attitude: no\n"
    "measurement and no update at that sample (the model's friction; counted in the warnings).\n";
#pragma GCC diagnostic pop

static const char *const fb_in_docs[] = {
    "n values, rad: the joint positions (model joint order; only the legs' are read)",
    "n values, rad/s: the joint velocities",
    "n values, N m: the applied joint torque (e.g. `motor_torque` of the currents: k_t R I_m)",
    "12 values: left then right [f; tau] (N, N m): the FT readings (`wrench_source` \"ft\") or the foot wrenches",
    "3 values, m/s^2: the IMU's proper acceleration in its axes (+g up at rest)",
    "3 values, rad/s: the IMU's angular velocity in its axes",
    "3 values (roll pitch yaw, rad: the orientations channels) or 4 (quaternion w x y z): the IMU's attitude; "
    "needed by \"nonslip\" and \"feet_mixed\"",
    "1 value: 0 double support, 1 left support, 2 right support (e.g. `truth/gait/phase`); optional (default: "
    "the normal force with hysteresis)",
    "n values, N m: the true friction (a simulated log's `truth/joints/friction_torques`), for the evaluation "
    "outputs only; optional",
};
static const char *const fb_out_docs[] = {
    "n_leg values, N m: measured in contact, the model in swing",
    "n_leg values, N m: nonslip u_F (4.18); filtered (sigma / K) <u_F>_Z; NaN off contact or singular",
    "n_leg values, N m: F_c sgn(theta_dot) + F_v theta_dot with the current parameters",
    "n_leg values, N m: the identified Coulomb friction F_c",
    "n_leg values, N m s/rad: the identified viscous coefficient F_v",
    "n_leg values, N m: tau - friction (4.4)",
    "2 values (left right): 1 when the foot is in contact",
    "2 values (left right): 1 when the leg's constraint was singular at this sample (nonslip)",
    "n_leg values, rad/s^2: nonslip's solved joint accelerations (NaN off contact; filtered: NaN)",
    "n_leg values, N m: batch LS F_c of the truth over the samples used (needs truth_friction)",
    "n_leg values, N m s/rad: batch LS F_v of the truth over the samples used (needs truth_friction)",
    "n_leg values: (coulomb - reference_coulomb) / |reference_coulomb|",
    "n_leg values: (viscous - reference_viscous) / |reference_viscous|",
    "n_leg values, N m: RMSE of friction against the truth over the samples the leg swung so far",
    "n_leg values, N m: the same for the truth's fit at each of those samples (the reference_* model then)",
};

static const char *const method_choices[] = {"nonslip", "filtered", NULL};
static const char *const alpha_choices[] = {"min_norm", "gyro_diff", NULL};
static const char *const reg_choices[] = {"filtered", "literal", NULL};
static const char *const src_choices[] = {"ft", "feet_body", "feet_mixed", NULL};
static const double K_def[6] = {1, 2, 2, 2, 4, 2}, S_def[6] = {1, 1, 1, 2, 4, 2};

static const rb_param_spec fb_params[] = {
    {.name = "method",
     .kind = RB_PARAM_STRING,
     .def_string = "nonslip",
     .choices = method_choices,
     .doc = "\"nonslip\": accelerations from the feet's constraint (4.9-4.23); \"filtered\": the filtered dynamics "
            "(4.24-4.36)"},
    {.name = "base_angular_acc",
     .kind = RB_PARAM_STRING,
     .def_string = "min_norm",
     .choices = alpha_choices,
     .doc = "nonslip: \"min_norm\" (the thesis's pseudo-inverse, approximate) or \"gyro_diff\" (the differentiated "
            "gyro; exact)"},
    {.name = "regressors",
     .kind = RB_PARAM_STRING,
     .def_string = "filtered",
     .choices = reg_choices,
     .doc = "filtered: the RLS regressors <[sgn, theta_dot]>_Z (unbiased) or \"literal\" (4.39: unfiltered, K / "
            "sigma times the friction)"},
    {.name = "feet",
     .kind = RB_PARAM_STRING_ARRAY,
     .required = true,
     .min_count = 2,
     .max_count = 2,
     .doc = "[left, right]: the foot (sole) frames whose chains to the base are the legs"},
    {.name = "imu_frame",
     .kind = RB_PARAM_STRING,
     .required = true,
     .doc = "the IMU's model frame (on the base body) whose acc, gyro and orientation are wired"},
    {.name = "wrench_source",
     .kind = RB_PARAM_STRING,
     .def_string = "ft",
     .choices = src_choices,
     .doc = "\"ft\": readings of ft_sensors between leg and foot; \"feet_body\" / \"feet_mixed\": the wrench on "
            "the robot at each foot frame, its axes / world axes"},
    {.name = "ft_sensors",
     .kind = RB_PARAM_STRING_ARRAY,
     .max_count = 2,
     .doc = "[left, right]: the FT sensors (wrench_source \"ft\")"},
    {.name = "K",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = K_def,
     .def_count = 6,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "1/s: the filters' gains, 6 (per position in a 6-joint leg, base to foot, both legs) or one per leg "
            "joint",
     .details = "Table 4.2"},
    {.name = "sigma",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = S_def,
     .def_count = 6,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "1/s: the filters' poles, as K",
     .details = "Table 4.2"},
    {.name = "armature",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .has_min = true,
     .min = 0,
     .doc = "kg m^2: the rotor inertia at each joint, R^2 J_m (6 per position or one per leg joint; none: 0)",
     .details = "ours: the thesis has none; the simulator's actuators have it"},
    {.name = "p0",
     .kind = RB_PARAM_NUMBER,
     .def_number = 10,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "the RLS's P0 = p0 I",
     .details = "the thesis's 10"},
    {.name = "forgetting_factor",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .has_max = true,
     .max = 1,
     .doc = "the RLS's forgetting factor (1: none, the thesis's)"},
    {.name = "gyro_diff_cutoff",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0,
     .has_min = true,
     .min = 0,
     .doc = "Hz: gyro_diff's first-order low-pass of the differentiated gyro (0: none)",
     .details = "ours"},
    {.name = "singular_threshold",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1e-3,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .has_max = true,
     .max_exclusive = true,
     .max = 1,
     .doc = "nonslip: a leg's J_m3 is singular below this smallest / largest Cholesky diagonal of J_m3 J_m3^T",
     .details = "ours"},
    {.name = "contact_on",
     .kind = RB_PARAM_NUMBER,
     .def_number = 50,
     .has_min = true,
     .min = 0,
     .doc = "N: without phase, a foot goes down when its normal force exceeds this",
     .details = "ours"},
    {.name = "contact_off",
     .kind = RB_PARAM_NUMBER,
     .def_number = 30,
     .has_min = true,
     .min = 0,
     .doc = "N: and up when it falls below this (< contact_on)",
     .details = "ours"},
};

const rb_stage_type rb_stage_fbse_friction = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "fbse_friction",
    .summary = "legs' joint friction of a walking biped from its IMU, foot wrenches and joint states, measured in "
               "contact and an RLS-identified Coulomb-viscous model in swing (nonslip or filtered; seed 003 ch. 4)",
    .doc = fb_doc,
    .inputs = fb_in,
    .input_docs = fb_in_docs,
    .n_inputs = FB_N_IN,
    .optional_inputs = (1u << FB_ORIENT) | (1u << FB_PHASE) | (1u << FB_TRUTH),
    .outputs = fb_out,
    .output_docs = fb_out_docs,
    .n_outputs = FB_N_OUT,
    .params = fb_params,
    .n_params = sizeof fb_params / sizeof fb_params[0],
    .create = fb_create,
    .step = fb_step,
    .finish = fb_finish,
    .destroy = fb_destroy,
    .notes = fb_notes,
};
