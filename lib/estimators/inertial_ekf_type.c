/* inertial_ekf's type: ports with their documentation, the estimator's documentation (configs/stages.md is
 * generated from it) and the parameter schema; the adapter is inertial_ekf.c, the algorithm roboest/observers.h. */
#include <stddef.h>

#include "inertial_ekf.h"
#include "roboest/estimators.h"

static const char *const ie_in[] = {
    "q", "dq", "tau", "ddq", "contacts", "base_position", "base_orientation", "base_twist", "base_acc"};
static const char *const ie_out[] = {"pi",       "pi_raw", "theta", "mass", "com", "consistent",
                                     "residual", "nis",    "gated", "var",  "bias"};

/* a long string constant on purpose: the reference's text */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
static const char ie_doc[] =
    "Online estimation of the inertial parameters of chosen bodies (seed 001, Foster et al.: a physically\n"
    "consistent EKF; `roboest/observers.h`, `rb_iekf_*`, is the reference). The other bodies keep the\n"
    "model's parameters. Per estimated body `pi = [m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]` about\n"
    "the body origin in body axes (`h = m c`). Per sample (eq. 7, 13-15):\n"
    "\n"
    "    Delta tau = tau_obs - tau_nom + sum_i J_i^T lambda_i - b = Y_est pi_est + noise\n"
    "\n"
    "`Y_est` the regressor columns of the estimated bodies, `tau_nom` the RNEA with their parameters\n"
    "zeroed, `tau_obs` the input `tau` (a floating base's six base rows are 0: nothing actuates the\n"
    "base), `lambda_i` the contact wrenches ON the robot at the frames of `contacts`, `b` the start-up\n"
    "bias. Rows: a floating base's 6 base rows (`base/fx` ... `base/mz`), then the joints.\n"
    "\n"
    "Filters. `\"ekf_log_cholesky\"` (default, eq. 16-21): state `theta` (10 per body, the log-Cholesky\n"
    "parameters), random walk, `h(theta) = Y_est g(theta)`, `H = Y_est G`; `pi = g(theta)` is fully\n"
    "physically consistent (pseudo-inertia positive definite) on every sample. `parameterization`\n"
    "`\"uut\"` (default: `J = U U^T`, Rucker-Wensing; `m = e^(2 alpha)`, `t` the centre of mass) or\n"
    "`\"paper_eq17\"` (the map the paper prints, `J = U^T U`; PAPERS.md 0.1): the `theta` of the two are\n"
    "not interchangeable, nor are variances given in `theta` units. `\"kf_linear\"` (eq. 12, 15): the\n"
    "paper's baseline on `pi` itself, which can go physically inconsistent when the motion does not\n"
    "excite every parameter (`consistent` 0). Variances: `process_var` per second (Q = q dt per step),\n"
    "in the state's units (`theta` for the EKF, `pi` for the KF), 1 value, one per group (EKF: alpha, d,\n"
    "s, t; KF: m, h, I) or 10. Defaults are ours (the paper gives none): EKF q = [1e-2, 1e-3, 1e-3,\n"
    "1e-4], P0 = [0.25, 0.1, 0.01, 0.01]; KF q = [1, 1e-2, 1e-3], P0 = [25, 1, 0.1].\n"
    "\n"
    "Start: the model's parameters of each body; the EKF needs them fully consistent (`body <name>:\n"
    "nominal parameters not fully physically consistent`), both need a positive mass.\n"
    "\n"
    "Acceleration. `ddq` `\"input\"`: wire `ddq` (and `base_acc` for a floating base).\n"
    "`\"central_difference\"` (the paper, sec. III-D): `ddq_{k-1} = (dq_k - dq_{k-2}) / (t_k - t_{k-2})`\n"
    "(the base twist too) with every other signal delayed one sample: the outputs of sample k are the\n"
    "estimate at sample k - 1, and samples 0 and 1 only predict.\n"
    "\n"
    "Gate (eq. 22): `gate` `\"off\"` (default, ours: a load changing in a step would be shut out),\n"
    "`\"probability\"` (NIS against the chi-square quantile of `gate_probability`, degrees of freedom = rows\n"
    "used; 1 is refused) or `\"nis\"` (against `gate_nis`). Start-up bias (sec. IV-B): with `bias_window`\n"
    "> 0 s, the samples in the first `bias_window` seconds do not update (the estimate stays at the\n"
    "model's) and their mean residual `Delta tau - Y_est pi0` per row is then frozen as `b`.\n"
    "Low-passes (first order, 0 = off): `residual_cutoff` on `Delta tau`, `estimate_cutoff` on the\n"
    "estimate before the rate limit. `rate_limit`: per body, the streamed `pi` moves along the straight\n"
    "line towards the estimate by the largest step that keeps every parameter within rate dt per sample\n"
    "(so it stays fully consistent and the CoM h / m does not jump while the mass moves); default 3 kg/s\n"
    "for the mass (the paper's), none for h and I (ours). The paper runs at 333 Hz on\n"
    "1 kHz signals; here the rate is the pipeline clock's.\n"
    "\n"
    "NaN: a NaN `tau` element skips that row (counted); every row NaN, or a non-finite motion or contact:\n"
    "predict only (counted). At the end of the run the stage adds lines to the run's warnings\n"
    "(`roboest: warning: <log>: stage <id>: ...`): the counts (updates, gated, rows skipped, predict-only\n"
    "steps), a variance past `var_warn_factor` times its initial value, more than 20 % of the updates\n"
    "gated, and with several bodies \"parameters not separately identifiable\" with the ranks, when the\n"
    "information matrix `sum Y_est^T R^-1 Y_est` has a lower rank than the sum of each body's own block\n"
    "(eigenvalues above 1e-9 of the largest; e.g. two bodies locked rigidly together).\n"
    "\n"
    "Errors: configuration (RB_ECONFIG; `roboest run` exits 3): an unknown body\n"
    "(with a suggestion), a link merged into another body by a fixed joint (`name the body`), a nominal\n"
    "`pi` not consistent or massless, an input of the wrong width naming the input, gate probability 1.\n"
    "Numeric (RB_ENUMERIC, exit 4): `theta` overflowing (`body <name>: theta overflows`), a covariance\n"
    "losing positive definiteness; both name the sample (the runner prefixes the stage).\n";
#pragma GCC diagnostic pop

static const char *const ie_in_docs[] = {
    "n values, rad (m): the joint positions",
    "n values, rad/s: the joint velocities",
    "n values, N m (N): the observed joint torques (a log channel or another stage's estimate); NaN: row skipped",
    "n values, rad/s^2: the joint accelerations; with `ddq` `\"input\"` only",
    "6 per frame of `contacts` ([f; tau], N and N m, ON the robot, in `contact_convention`); optional",
    "3 values, m: a floating base's position in the world (e.g. `truth/base/position`)",
    "4 values: a floating base's orientation, quaternion w x y z (`truth/base/orientation`)",
    "6 values, m/s and rad/s: a floating base's body-fixed twist [v; w] (`truth/base/twist`)",
    "6 values: its time derivative (`truth/base/acceleration`); with `ddq` `\"input\"` only",
};
static const char *const ie_out_docs[] = {
    "10 per body (`<body>/m` ... `<body>/Izz`; kg, kg m, kg m^2): the rate-limited estimate a controller gets",
    "10 per body: the filter's estimate (before the low-pass and the rate limit)",
    "10 per body (`<body>/alpha` ... `<body>/t3`): log-Cholesky parameters (the EKF's state; KF: g^-1(pi_raw), NaN "
    "when inconsistent)",
    "1 per body (named by the body), kg: the mass of `pi`",
    "3 per body (`<body>/x` ...), m, body axes: the centre of mass h / m of `pi`",
    "1 per body: 1 when `pi_raw` is fully physically consistent, else 0",
    "one per row (base rows, joints), N m: `Delta tau - Y_est pi_raw` before the update; NaN for rows not used",
    "1 value: the normalized innovation squared of the update (NaN without one)",
    "1 value: 1 when the gate rejected the update",
    "10 per body: the diagonal of P (the state's units squared)",
    "one per row: the start-up bias `b` (0 until frozen)",
};

static const char *const filter_choices[] = {"ekf_log_cholesky", "kf_linear", NULL};
static const char *const form_choices[] = {"uut", "paper_eq17", NULL};
static const char *const gate_choices[] = {"off", "probability", "nis", NULL};
static const char *const ddq_choices[] = {"input", "central_difference", NULL};
static const char *const conv_choices[] = {"mixed", "body", NULL};
static const char *const conv_default[] = {"mixed"};
static const double meas_default[] = {1};
static const double rate_default[] = {3, 0, 0};

static const rb_param_spec ie_params[] = {
    {.name = "bodies",
     .kind = RB_PARAM_STRING_ARRAY,
     .required = true,
     .min_count = 1,
     .doc = "the model bodies (link names) whose parameters are estimated; a link merged into another body by a "
            "fixed joint is refused (name that body)"},
    {.name = "filter",
     .kind = RB_PARAM_STRING,
     .def_string = "ekf_log_cholesky",
     .choices = filter_choices,
     .doc = "\"ekf_log_cholesky\" (eq. 16-21, consistent by construction) or \"kf_linear\" (eq. 12, 15, the baseline)"},
    {.name = "parameterization",
     .kind = RB_PARAM_STRING,
     .def_string = "uut",
     .choices = form_choices,
     .doc = "log-Cholesky map: \"uut\" (J = U U^T, ours) or \"paper_eq17\" (J = U^T U as printed); theta differs"},
    {.name = "process_var",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .has_min = true,
     .min = 0,
     .max_count = 10,
     .doc = "random-walk variance per second, state units: 1, one per group (EKF alpha d s t; KF m h I) or 10",
     .details = "default (ours): EKF [1e-2, 1e-3, 1e-3, 1e-4], KF [1, 1e-2, 1e-3]"},
    {.name = "initial_var",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .max_count = 10,
     .doc = "initial variance, state units: 1, one per group or 10",
     .details = "default (ours): EKF [0.25, 0.1, 0.01, 0.01], KF [25, 1, 0.1]"},
    {.name = "meas_var",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = meas_default,
     .def_count = 1,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .min_count = 1,
     .doc = "measurement variance, N^2 m^2: 1 value or one per row (a floating base's 6 base rows, then the joints)",
     .details = "default 1 (ours)"},
    {.name = "gate",
     .kind = RB_PARAM_STRING,
     .def_string = "off",
     .choices = gate_choices,
     .doc = "innovation gate (eq. 22): \"off\", \"probability\" (chi-square quantile) or \"nis\" (fixed threshold)",
     .details = "default off (ours; the paper tuned its threshold by hand)"},
    {.name = "gate_probability",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.999,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .has_max = true,
     .max = 1,
     .doc = "with gate \"probability\": the chi-square probability of the limit, in (0, 1); 1 is refused"},
    {.name = "gate_nis",
     .kind = RB_PARAM_NUMBER,
     .def_number = 100,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "with gate \"nis\": the NIS threshold gamma"},
    {.name = "bias_window",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0,
     .has_min = true,
     .min = 0,
     .doc = "s: start-up bias calibration window (no updates in it; its mean residual is then subtracted); 0: off"},
    {.name = "residual_cutoff",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0,
     .has_min = true,
     .min = 0,
     .doc = "Hz: first-order low-pass of Delta tau; 0: off"},
    {.name = "estimate_cutoff",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0,
     .has_min = true,
     .min = 0,
     .doc = "Hz: first-order low-pass of the estimate before the rate limit; 0: off"},
    {.name = "rate_limit",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = rate_default,
     .def_count = 3,
     .has_min = true,
     .min = 0,
     .min_count = 1,
     .max_count = 10,
     .doc = "per second, the streamed pi's largest change: 1 value, [m, h, I] or 10; 0: no limit",
     .details = "default: 3 kg/s for m (the paper's), none for h and I (ours)"},
    {.name = "ddq",
     .kind = RB_PARAM_STRING,
     .def_string = "input",
     .choices = ddq_choices,
     .doc = "\"input\" (wire ddq) or \"central_difference\" of dq with the other signals delayed a sample (the "
            "paper's)"},
    {.name = "contacts",
     .kind = RB_PARAM_STRING_ARRAY,
     .doc = "frames of the contact wrenches of the contacts input (6 each, in this order); default none"},
    {.name = "contact_convention",
     .kind = RB_PARAM_STRING_ARRAY,
     .def_strings = conv_default,
     .def_count = 1,
     .min_count = 1,
     .choices = conv_choices,
     .doc = "1 or one per contact: \"mixed\" (world axes, moment about the frame origin: the simulator's "
            "truth/contacts) or \"body\" (frame axes)"},
    {.name = "var_warn_factor",
     .kind = RB_PARAM_NUMBER,
     .def_number = 100,
     .has_min = true,
     .min = 0,
     .doc = "warn when a parameter's variance grows past this times its initial value; 0: never"},
};

const rb_stage_type rb_stage_inertial_ekf = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "inertial_ekf",
    .summary = "online inertial parameters of chosen bodies from joint torques: the physically consistent "
               "log-Cholesky EKF or the linear KF baseline (seed 001)",
    .doc = ie_doc,
    .inputs = ie_in,
    .input_docs = ie_in_docs,
    .n_inputs = IE_N_IN,
    .optional_inputs = (1u << IE_DDQ) | (1u << IE_CONTACTS) | (1u << IE_BASE_POS) | (1u << IE_BASE_QUAT) |
                       (1u << IE_BASE_TWIST) | (1u << IE_BASE_ACC),
    .outputs = ie_out,
    .output_docs = ie_out_docs,
    .n_outputs = IE_N_OUT,
    .params = ie_params,
    .n_params = sizeof ie_params / sizeof ie_params[0],
    .create = ie_create,
    .step = ie_step,
    .finish = ie_finish,
    .destroy = ie_destroy,
    .notes = ie_notes,
};
