/* thrust_ekf's type: ports with their documentation, the estimator's documentation (configs/stages.md is generated
 * from it) and the parameter schema; the adapter is thrust_ekf.c, the algorithm roboest/observers.h (rb_tekf). */
#include <stddef.h>

#include "roboest/estimators.h"
#include "thrust_ekf.h"

static const char *const te_in[] = {"q",          "dq",       "base_position", "base_orientation",
                                    "base_twist", "throttle", "feet",          "rpm_error"};
static const char *const te_out[] = {"T",      "T_dot",   "L",          "L_meas",    "W_lf", "W_rf",
                                     "W_jets", "support", "support_kg", "scheduled", "var",  "nis"};

/* a long string constant on purpose: the reference's text */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
static const char te_doc[] =
    "Thrust intensities of the jets of a flying humanoid from their throttles, the robot's motion and its foot\n"
    "wrenches (seed 004, Mohamed et al., RA-L 2022, iRonCub: the momentum-based EKF; `roboest/observers.h`,\n"
    "`rb_tekf_*`, is the reference). State (eq. 5) `x = [T (t), T_dot (t), L (6), W_lf (6), W_rf (6)]` (26 for four\n"
    "jets; in flight without the feet), input the throttles `u`, measurement (eq. 6-7) `z = [L_meas, W_lf, W_rf]`\n"
    "with `L_meas = A_G(q) nu` the centroidal momentum of the given motion (`[l; k_G]`, world axes, about the CoM)\n"
    "and the given foot wrenches. Process (eq. 3, 8):\n"
    "\n"
    "    T' = T_dot,  T_dot' = f_jet(T, T_dot, u),  L' = A(q) T - m g e3 + W_feet(q),  W' = 0\n"
    "\n"
    "`A = [S(r_i) l_i]`, `S(r) = [I3; skew(r)]`: per jet its thrust direction `l_i` in world axes (the jet frame's\n"
    "rotation times `jet_axes`, default -z) and `r_i` the frame origin minus the CoM; `W_feet` the foot wrenches\n"
    "carried to the CoM (world axes). Foot wrenches are those the ground exerts ON the robot, in `foot_convention`:\n"
    "`\"body\"` (the paper's: foot frame axes, moment about its origin, e.g. from FT sensors) or `\"mixed\"` (world\n"
    "axes, moment about the frame origin: the simulator's `truth/contacts/<frame>`). The floating base (`q`, `nu`)\n"
    "is taken as exact (legged odometry, a log's truth). `f_jet` is the jet model of `jet_presets`\n"
    "(`rb_jet_preset`: \"ironcub_p100\", \"ironcub_p160\", \"ironcub_p220_simulink\", \"ironcub_p220_gazebo\").\n"
    "\n"
    "Discretization [ours; the paper's filter is continuous]: explicit Euler over each clock interval with the\n"
    "previous sample's throttles and `A`, `F = I + dt df/dx`, `Q_d = Q dt` (`process_var` per second), `meas_var`\n"
    "per sample. Variants: `\"combined\"` (the paper's proposal), `\"centroidal_only\"` (the jet model unused: `T` a\n"
    "random walk of variance `centroidal_thrust_var` per second, `T_dot` held at 0), `\"jets_only\"` (the jet model\n"
    "open loop: `T` integrated from rest from the throttles alone, the update never changes it; `L`, `W` filtered\n"
    "with `T` taken as exact). `T` stays in the jet's range [0, `T_max`] as in the plant: the prediction's Euler\n"
    "step stops at a bound (`T_dot` no further past it; `F`'s rows of a stopped component 0), and after every\n"
    "update a `T` outside the range is set to the bound (its `T_dot` likewise) [ours: the fitted model is not a\n"
    "jet outside it; at zero throttle its positive `K_D` lets `T_dot` grow without bound].\n"
    "\n"
    "Covariance scheduling (sec. V-E; `schedule`): jet i is scheduled while `|rpm_error_i| > schedule_threshold`\n"
    "and for `schedule_hold` s after; its `T` and `T_dot` process variance is then `schedule_var` (the estimate\n"
    "follows the centroidal dynamics: a jet failing to deliver). The paper gives no values: the defaults are ours.\n"
    "`perturb` (sec. IV's robustness test): each of the ten coefficients of each jet's model used by the estimator\n"
    "times `1 + U(-perturb, perturb)`, seeded by `seed`. Defaults of P0, Q, R (10 each) and `x0 = 0` are the public\n"
    "implementation's (thrust_estimation_v1.slx). `mass` (0: the model's total) must be within 2 % of the model's\n"
    "total mass; `W_jets = m g e3 - A T` (eq. 9) is what the feet or the scales must carry, `support` its vertical\n"
    "part in N and `support_kg` in kg (the paper's comparison with the scales).\n"
    "\n"
    "NaN: a NaN foot wrench element is a missing measurement; a non-finite motion: predict only; a non-finite\n"
    "throttle (NaN, an overflow upstream): the last one (0 before any). A throttle outside the preset's range: clamped "
    "(`throttle_range` `\"clamp\"`) or\n"
    "an input error naming the sample and jet (`\"error\"`, exit 3). The counts are added to the run's warnings.\n"
    "Configuration errors (exit 3): a jet or foot frame not in the model (with a suggestion), an axis of zero\n"
    "length, an unknown preset, the mass check, foot wrench inputs not wired while `in_flight` is false, `rpm_error`\n"
    "not wired while `schedule` is on. Numeric errors (a covariance losing positive definiteness): exit 4.\n";
#pragma GCC diagnostic pop

static const char *const te_in_docs[] = {
    "n values, rad (m): the joint positions",
    "n values, rad/s: the joint velocities",
    "3 values, m: the floating base's position in the world (legged odometry, `truth/base/position`)",
    "4 values: its orientation, quaternion w x y z",
    "6 values, m/s and rad/s: its body-fixed twist [v; w]",
    "one per jet: the throttles u (the presets' unit, 0 .. 120); not finite: the last one",
    "6 per foot of `feet` ([f; tau], N and N m, left then right): the foot wrenches ON the robot in "
    "`foot_convention` (e.g. `rnea_torque`'s `contacts` from the leg FT sensors, as the paper); unless `in_flight`",
    "one per jet: the rotor speed error (desired minus measured, e.g. rpm); with `schedule` only",
};
static const char *const te_out_docs[] = {
    "one per jet (named by its frame), N: the thrust estimate",
    "one per jet, N/s: its rate",
    "6 values (`lx` ... `kz`; kg m/s, kg m^2/s): the centroidal momentum estimate (world axes, about the CoM)",
    "6 values: the measured centroidal momentum `A_G(q) nu` (NaN where the motion was not finite)",
    "6 values (`fx` ... `mz`): the filtered left foot wrench (its input's convention)",
    "6 values: the filtered right foot wrench (zeros in flight)",
    "6 values (`fx` ... `mz`; N, N m): `m g e3 - A T` (eq. 9), world axes about the CoM",
    "1 value, N: the vertical part of `W_jets` (what the feet or scales carry)",
    "1 value, kg: `support / g` (what scales read)",
    "one per jet: 1 while its covariance is scheduled up, else 0",
    "one per state element (`T/<jet>`, `T_dot/<jet>`, `L/lx` ..., `W_lf/fx` ...): the diagonal of P",
    "1 value: the normalized innovation squared of the update (NaN without one)",
};

static const char *const variant_choices[] = {"combined", "centroidal_only", "jets_only", NULL};
static const char *const conv_choices[] = {"body", "mixed", NULL};
static const char *const range_choices[] = {"clamp", "error", NULL};
static const double axis_default[] = {0, 0, -1};
static const double qvar_default[] = {10, 10, 10, 10};
static const double rvar_default[] = {10, 10};

static const rb_param_spec te_params[] = {
    {.name = "jet_frames",
     .kind = RB_PARAM_STRING_ARRAY,
     .required = true,
     .min_count = 1,
     .doc = "the model frames of the jets (the thrust acts at their origins), in the order of throttle and T"},
    {.name = "jet_axes",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = axis_default,
     .def_count = 3,
     .min_count = 3,
     .doc = "the thrust direction (force ON the robot) in each jet frame's axes: 3 values (every jet) or 3 per jet; "
            "normalized, zero length refused",
     .details = "default [0, 0, -1]: along -z, as the public iRonCub models"},
    {.name = "jet_presets",
     .kind = RB_PARAM_STRING_ARRAY,
     .required = true,
     .min_count = 1,
     .doc = "the jet model (rb_jet_preset): 1 name (every jet) or one per jet: \"ironcub_p100\", \"ironcub_p160\", "
            "\"ironcub_p220_simulink\", \"ironcub_p220_gazebo\""},
    {.name = "feet",
     .kind = RB_PARAM_STRING_ARRAY,
     .max_count = 2,
     .doc = "the left and right foot frames of the input feet (6 values each, in this order); [] (or absent) only with "
            "in_flight"},
    {.name = "in_flight",
     .kind = RB_PARAM_BOOLEAN,
     .doc = "true: no foot touches anything (no feet input; the state has no foot wrenches)"},
    {.name = "foot_convention",
     .kind = RB_PARAM_STRING,
     .def_string = "body",
     .choices = conv_choices,
     .doc = "the foot wrenches' convention: \"body\" (foot axes, about its origin) or \"mixed\" (world axes, about its "
            "origin)"},
    {.name = "variant",
     .kind = RB_PARAM_STRING,
     .def_string = "combined",
     .choices = variant_choices,
     .doc = "\"combined\" (jet model + centroidal dynamics, the paper's), \"centroidal_only\" or \"jets_only\""},
    {.name = "process_var",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = qvar_default,
     .def_count = 4,
     .has_min = true,
     .min = 0,
     .min_count = 4,
     .max_count = 4,
     .doc = "process variance per second of [T (N^2), T_dot (N^2/s^2), L, W] per element",
     .details = "default 10 each (the public implementation's)"},
    {.name = "initial_var",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = qvar_default,
     .def_count = 4,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .min_count = 4,
     .max_count = 4,
     .doc = "initial variance of [T, T_dot, L, W] per element (the state starts at 0)",
     .details = "default 10 each (the public implementation's)"},
    {.name = "meas_var",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = rvar_default,
     .def_count = 2,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .min_count = 2,
     .max_count = 2,
     .doc = "measurement variance per sample of [L_meas, foot wrenches] per element",
     .details = "default 10 each (the public implementation's)"},
    {.name = "centroidal_thrust_var",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1e4,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "N^2/s: with variant \"centroidal_only\", the thrusts' random-walk variance per second (ours)"},
    {.name = "schedule", .kind = RB_PARAM_BOOLEAN, .doc = "covariance scheduling on the rotor speed error (sec. V-E)"},
    {.name = "schedule_threshold",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1000,
     .has_min = true,
     .min = 0,
     .doc = "rotor speed error above which a jet is scheduled, the input's unit (ours: the paper gives none)"},
    {.name = "schedule_var",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1e4,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "process variance per second of a scheduled jet's T and T_dot (ours)"},
    {.name = "schedule_hold",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.5,
     .has_min = true,
     .min = 0,
     .doc = "s: a jet stays scheduled this long after its error was last above the threshold (ours)"},
    {.name = "perturb",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0,
     .has_min = true,
     .min = 0,
     .has_max = true,
     .max_exclusive = true,
     .max = 1,
     .doc = "fraction: each jet model coefficient the estimator uses times 1 + U(-perturb, perturb); 0: none",
     .details = "the paper's robustness test uses 5 % (0.05)"},
    {.name = "seed",
     .kind = RB_PARAM_INTEGER,
     .def_number = 1,
     .has_min = true,
     .min = 0,
     .doc = "the perturbation's random seed"},
    {.name = "mass",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0,
     .has_min = true,
     .min = 0,
     .doc = "kg: the robot's mass for m g e3; 0: the model's total; otherwise within 2 % of it",
     .details = "the public flight configuration's is 41.402 kg"},
    {.name = "throttle_range",
     .kind = RB_PARAM_STRING,
     .def_string = "clamp",
     .choices = range_choices,
     .doc = "a throttle outside the preset's range: \"clamp\" (counted) or \"error\""},
    {.name = "gravity",
     .kind = RB_PARAM_NUMBER,
     .def_number = 9.81,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "m/s^2: g in m g e3 and support_kg"},
};

const rb_stage_type rb_stage_thrust_ekf = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "thrust_ekf",
    .summary = "jet thrusts from throttles, motion and foot wrenches: the momentum-based EKF combining the jet model "
               "and the centroidal dynamics (seed 004)",
    .doc = te_doc,
    .inputs = te_in,
    .input_docs = te_in_docs,
    .n_inputs = TE_N_IN,
    .optional_inputs =
        (1u << TE_BASE_POS) | (1u << TE_BASE_QUAT) | (1u << TE_BASE_TWIST) | (1u << TE_FEET) | (1u << TE_RPM_ERR),
    .outputs = te_out,
    .output_docs = te_out_docs,
    .n_outputs = TE_N_OUT,
    .params = te_params,
    .n_params = sizeof te_params / sizeof te_params[0],
    .create = te_create,
    .step = te_step,
    .finish = te_finish,
    .destroy = te_destroy,
    .notes = te_notes,
};
