/* map_dynamics: the stage type (ports, parameter schema, documentation); configs/stages.md is generated from it. */
#include "map_dynamics.h"

static const char *const md_in[] = {"q", "dq", "ddq", "ft", "acc", "gyro", "tau", "known"};
static const char *const md_out[] = {"tau", "tau_std", "wrenches", "wrenches_std", "residual"};

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
static const char md_doc[] =
    "The maximum-a-posteriori whole-body dynamics of seed 002 (the CoDyCo slides' \"MAP dynamics\", the\n"
    "standard form with a prior of PAPERS.md 2.2; `roboest/observers.h`, `rb_map_*`, is the reference): every\n"
    "sensor at once, weighted by its variance, against the Newton-Euler equations of the whole tree. Per body i\n"
    "the unknowns are\n"
    "\n"
    "    d_i = [a_i, f_i, tau_i, f_x_i, qdd_i]\n"
    "\n"
    "(proper spatial acceleration, the wrench from the parent, joint torque, external wrench, joint\n"
    "acceleration; body axes, linear first), tied by the constraints D(q) d + b_D = 0 (variance `var_dyn`\n"
    "per row)\n"
    "\n"
    "    a_i = iX_p a_p + S_i qdd_i + v_i x S_i qd_i\n"
    "    f_i = I_i a_i - f_x_i + sum_children iX*_c f_c + v_i x* I_i v_i\n"
    "    tau_i = S_i^T f_i\n"
    "\n"
    "and measured by Y(q, qd) d + b_Y = y: the FT sensors (the wrench across their fixed joint, in their\n"
    "convention), the accelerometers (y = (sX_i a_i)_l + w_s x v_s), the joint accelerations `ddq`, joint\n"
    "torque sensors `tau`, and known external wrenches `known`. The prior: the external wrench of the\n"
    "links of `unknown_wrenches` (and of `known_wrenches`) is wide (`var_unknown`), of every other link a\n"
    "tight zero (`var_zero`), everything else uninformative (`var_free`); `prior` false drops the wide and\n"
    "the uninformative ones (the slides' form, which needs [D; Y] of full column rank). The estimate solves\n"
    "\n"
    "    (D^T S_D^-1 D + Y^T S_y^-1 Y + S_d^-1) d = Y^T S_y^-1 (y - b_Y) - D^T S_D^-1 b_D\n"
    "\n"
    "by a block-tree Cholesky factorization (`solver` \"sparse\": one block per link, the leaves eliminated\n"
    "first, no fill; linear in the number of links) or densely (\"dense\", for tests: the same numbers);\n"
    "two steps of iterative refinement on the rows follow (the constraints outweigh the sensors by many\n"
    "decades). Outputs: the joint torques, the external wrenches at the frames of `unknown_wrenches` (BODY:\n"
    "the frame's axes, the moment about its origin, acting ON the robot, as `rnea_torque`'s `contacts`),\n"
    "their standard deviations (the diagonal of the posterior covariance; `std` false: NaN), and the\n"
    "whitened residual norm sqrt(J), J the MAP cost (constraints, sensors and prior, each squared error\n"
    "over its variance; about the number of constraint and sensor rows when every variance is right).\n"
    "\n"
    "Base. A fixed base is still (a_0 = -g); its mount bears any wrench on it, so its frames cannot be\n"
    "in `unknown_wrenches`. A floating base's acceleration is an unknown fixed by the accelerometers (and\n"
    "by its balance where its external wrench has a tight prior); its angular velocity comes first, by\n"
    "weighted least squares from the gyroscopes (the joint velocities carry each to the base); the\n"
    "gyroscopes then enter the residual only. A floating base without a gyroscope is warned about\n"
    "(\"angular velocity unobserved\": taken as zero). The base's linear velocity changes no force and is\n"
    "taken as zero.\n"
    "\n"
    "`ddq`, `ft`, `acc`, `gyro`, `tau` and `known` are optional; a group is used when its list is not\n"
    "empty and must then be wired (and must not be wired without its list). Equality with `rnea_torque`:\n"
    "with FT sensors and joint accelerations only, a tight `var_dyn` and `var_zero`, `prior` false, and\n"
    "`unknown_wrenches` the bodies of its contacts plus the base body of every sub-model (cut at the FT\n"
    "sensors) that has none (the RNEA leaves those sub-models' balance unused, which is an unknown wrench\n"
    "there), the MAP's torques are the RNEA's (configs/map/README.md).\n"
    "\n"
    "Observability is checked at set-up: quantities that no sensor and no prior fixes are a configuration\n"
    "error naming them and their links (\"unobservable (no prior and no sensor fixes them): external\n"
    "wrench of r_upper_leg, r_lower_leg\"). NaN: a non-finite reading drops its row (counted in the run's\n"
    "warnings); a non-finite q or dq gives NaN outputs for that sample (counted). Configuration errors\n"
    "(RB_ECONFIG, exit 3): a sensor frame or FT sensor not in the model (with a suggestion), an FT name\n"
    "that is a joint of the model but not a sensor joint, a variance not positive (the schema), a\n"
    "per-element variance array of the wrong length, an input of the wrong width.\n";
#pragma GCC diagnostic pop

static const char *const md_in_docs[] = {
    "n values, rad (m): the joint positions",
    "n values, rad/s: the joint velocities",
    "n values, rad/s^2: the joint accelerations (e.g. `kf_derivative`'s `x_ddot`); optional",
    "6 per sensor of `ft_sensors`, each as the sensor reports it (N, N m); optional",
    "3 per frame of `accelerometers`: proper acceleration, m/s^2, the frame's axes; optional",
    "3 per frame of `gyroscopes`: angular velocity, rad/s, the frame's axes; optional",
    "one per joint of `torque_sensors`, N m: joint torque sensors; optional",
    "6 per frame of `known_wrenches`: a measured external wrench ON the robot, BODY at the frame; optional",
};
static const char *const md_out_docs[] = {
    "n values, N m (N for a prismatic joint): the joint torques",
    "n values: their standard deviations",
    "6 per frame of `unknown_wrenches`: the external wrench at the frame, BODY, ON the robot (N, N m)",
    "6 per frame of `unknown_wrenches`: their standard deviations",
    "1 value: the whitened residual norm sqrt(J) at the estimate",
};

static const char *const solver_choices[] = {"sparse", "dense", NULL};
static const double one[] = {1.0};
static const double v_ft[] = {0.25}, v_acc[] = {8e-4}, v_gyro[] = {5e-5}, v_tau[] = {0.01}, v_known[] = {1.0};

#define POSITIVE .has_min = true, .min_exclusive = true, .min = 0

static const rb_param_spec md_params[] = {
    {.name = "ft_sensors",
     .kind = RB_PARAM_STRING_ARRAY,
     .doc = "the model's six-axis FT sensors read (by sensor name or its joint's), in the order of the ft input"},
    {.name = "accelerometers", .kind = RB_PARAM_STRING_ARRAY, .doc = "accelerometer frames, in the order of acc"},
    {.name = "gyroscopes", .kind = RB_PARAM_STRING_ARRAY, .doc = "gyroscope frames, in the order of gyro"},
    {.name = "torque_sensors", .kind = RB_PARAM_STRING_ARRAY, .doc = "joints with a torque sensor, order of tau"},
    {.name = "known_wrenches",
     .kind = RB_PARAM_STRING_ARRAY,
     .doc = "frames where a measured external wrench acts (one per link), order of known"},
    {.name = "unknown_wrenches",
     .kind = RB_PARAM_STRING_ARRAY,
     .doc = "frames on the links where unknown external wrenches may act (one per link): a wide prior there",
     .details = "every other link gets the tight zero prior `var_zero`"},
    {.name = "var_ft",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = v_ft,
     .def_count = 1,
     POSITIVE,
     .doc = "N^2, (N m)^2: FT reading variance: 1 value, 6 (per axis) or 6 per sensor",
     .details = "default: the simulator's FT preset (0.5 N, 0.5 N m)"},
    {.name = "var_acc",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = v_acc,
     .def_count = 1,
     POSITIVE,
     .doc = "(m/s^2)^2: accelerometer variance: 1, 3 or 3 per frame",
     .details =
         "default: the simulator's preset (0.02 m/s^2) squared, x2 for a 100 Hz IMU held over two 200 Hz samples"},
    {.name = "var_gyro",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = v_gyro,
     .def_count = 1,
     POSITIVE,
     .doc = "(rad/s)^2: gyroscope variance: 1, 3 or 3 per frame"},
    {.name = "var_ddq",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = one,
     .def_count = 1,
     POSITIVE,
     .doc = "(rad/s^2)^2: joint acceleration variance: 1 or one per joint"},
    {.name = "var_tau",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = v_tau,
     .def_count = 1,
     POSITIVE,
     .doc = "(N m)^2: joint torque sensor variance: 1 or one per sensor"},
    {.name = "var_known",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = v_known,
     .def_count = 1,
     POSITIVE,
     .doc = "N^2, (N m)^2: known wrench variance: 1, 6 or 6 per frame"},
    {.name = "var_dyn",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1e-6,
     POSITIVE,
     .doc = "variance of each Newton-Euler constraint row (its units: m/s^2, N, N m): the model's uncertainty"},
    {.name = "var_zero",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1e-6,
     POSITIVE,
     .doc = "N^2, (N m)^2: the tight zero prior of the external wrench on the links not in unknown_wrenches"},
    {.name = "var_unknown",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1e4,
     POSITIVE,
     .doc = "N^2, (N m)^2: the wide prior of the external wrench on the links of unknown_wrenches (and known)"},
    {.name = "var_free",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1e4,
     POSITIVE,
     .doc = "the uninformative prior of the accelerations, joint wrenches, torques and joint accelerations"},
    {.name = "prior",
     .kind = RB_PARAM_BOOLEAN,
     .def_number = 1,
     .doc = "false: no prior on the unknown wrenches and the free unknowns (the slides' form; must be observable)"},
    {.name = "solver",
     .kind = RB_PARAM_STRING,
     .def_string = "sparse",
     .choices = solver_choices,
     .doc = "\"sparse\": the block-tree factorization; \"dense\": BLAS/LAPACK on the full matrices (tests)"},
    {.name = "std", .kind = RB_PARAM_BOOLEAN, .def_number = 1, .doc = "compute the standard deviations"},
};

const rb_stage_type rb_stage_map_dynamics = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "map_dynamics",
    .summary = "joint torques and external wrenches by the maximum-a-posteriori whole-body dynamics: every FT, IMU, "
               "joint-acceleration and torque sensor against the Newton-Euler equations (seed 002)",
    .doc = md_doc,
    .inputs = md_in,
    .input_docs = md_in_docs,
    .n_inputs = MD_N_IN,
    .optional_inputs =
        (1u << MD_DDQ) | (1u << MD_FT) | (1u << MD_ACC) | (1u << MD_GYRO) | (1u << MD_TAU) | (1u << MD_KNOWN),
    .outputs = md_out,
    .output_docs = md_out_docs,
    .n_outputs = MD_N_OUT,
    .params = md_params,
    .n_params = sizeof md_params / sizeof md_params[0],
    .create = md_create,
    .step = md_step,
    .finish = NULL,
    .destroy = md_destroy,
    .notes = md_notes,
};
