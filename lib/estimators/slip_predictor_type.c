/* slip_predictor: the stage type (ports, parameter schema, documentation); configs/stages.md is generated from it. */
#include "slip_predictor.h"

const char *const sp_inputs[SP_N_IN] = {"force", "acc", "phase"};
const char *const sp_outputs[SP_N_OUT] = {"prediction", "prediction_foot", "slip_detected", "thresholds",  "tangential",
                                          "friction",   "acceleration",    "contact",       "normal_force"};

/* a long string constant on purpose: the reference's text */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
static const char sp_doc[] =
    "Foot slip detection and prediction from the ankle force sensor and a foot accelerometer (seed 003, the\n"
    "Hashlamon thesis, ch. 5, eq. 5.1, 5.18-5.31; PAPERS.md 3.1 \"Slip prediction\"; `roboest/observers.h`,\n"
    "`rb_slip_*`, is the reference). Per foot of `feet` and axis of `axes` (`x`, `y` of the foot frame, the thesis's\n"
    "per-axis form, or `t`, the tangential magnitude |(x, y)|, ours), in the foot frame:\n"
    "\n"
    "    F_t   the tangential ankle force (the force the foot passes to the ankle), F_N its normal part (z)\n"
    "    p''   the foot accelerometer minus its bias (the mean over the first `bias_window` s)\n"
    "    F_f = F_t + m_f p''                                          (5.18, 5.19: the ground's friction)\n"
    "\n"
    "The thesis writes F_f = F_t - m_f p'' with F_t the force ON the foot; the sensor here reads the force the\n"
    "foot passes on (the opposite sign), the magnitudes are the same. With `unit` \"ratio\" (the thesis's mu form,\n"
    "F_suf = mu_suf F_N) every force is divided by F_N and the thresholds and `safety_margin` are ratios.\n"
    "\n"
    "Contact: from `phase` when wired (0 double support: every foot; 1, 2: the foot whose `support_phase` it is),\n"
    "else F_N above `contact_force` until it falls below half of it. Slip detection (step 3): |p''| >= Tr\n"
    "(`slip_threshold`, in `slip_threshold_unit`; the thesis's 0.09 has no unit and \"depends on the initial\n"
    "accelerometer reading\": read as g it is 0.88 m/s^2, above the tilt a foot that lands 0.5 deg off flat shows\n"
    "(0.09 m/s^2) and the noise, below a real slip's onset). Thresholds (steps 4-5, per axis, in contact):\n"
    "\n"
    "    not slipping: F_s = max(|F_t|, F_s)  (the running maximum), F_c = min(F_s, F_c),\n"
    "                  if |F_t| > F_c + F_st: F_c = ||F_t| - F_st|\n"
    "    slipping:     F_c = min(|F_f|, F_c), F_st = max(F_s - F_c, 0)   (F_s held)\n"
    "    F_suf = max(F_c - F_ms, 0)                                      (the margin band [F_suf, F_c])\n"
    "\n"
    "`thresholds` \"learn\" starts from `static_friction`, `stribeck_friction`, `coulomb_friction` (default 0:\n"
    "F_c follows F_s until the first slip; the thesis gives no start value); \"fixed\" keeps them (or those of\n"
    "`thresholds_file`, the JSON `roboest slip-thresholds` prints: the thesis's protocol, thresholds learned on\n"
    "one walk used on another). Prediction (5.20; the thesis's Fig. 5.5): class 2 slipping if |F_t| >= F_c,\n"
    "1 tends to slip if F_suf < |F_t| < F_c, 0 no slip if |F_t| <= F_suf; 0 out of contact (wire `contact` as a\n"
    "metric's `where` to score contact samples only). `prediction_foot`: the largest class over the foot's axes\n"
    "(the thesis: a foot slips when it slips along x or y). `hold_after_touchdown` (ours, 0 the thesis): for\n"
    "that long after each touch-down detection and learning wait (an impact reads as an acceleration spike).\n"
    "\n"
    "Model (optional): with one, `feet` are checked as frames and `accelerometers` / `ft_sensors` give the\n"
    "sensors' rotations into the foot frame (a sensor separated from its foot by a moving joint: a warning, and\n"
    "the rotation at q = 0); without, `accelerometer_rpy` gives the accelerometer's (the walker's foot IMUs are\n"
    "mounted upside down: [3.141592653589793, 0, 0]) and the force sensor's axes are the foot's.\n"
    "\n"
    "NaN: a non-finite force or acceleration element makes that sample's outputs NaN (state held; counted in the\n"
    "run's warnings). Errors: configuration (exit 3): port widths, a negative `slip_threshold` or\n"
    "`safety_margin`, a `foot_mass` not > 0, \"fixed\" without thresholds, a `thresholds_file` for other feet,\n"
    "axes or unit; input (exit 3): a phase other than 0, 1, 2 (naming the sample).\n";
#pragma GCC diagnostic pop

static const char *const sp_in_docs[SP_N_IN] = {
    "3 or 6 per foot, N (N m): the ankle FT sensor (fx fy fz [mx my mz]) in order of `feet`: the force the foot "
    "passes to the ankle (`FTs/<ankle sensor>`)",
    "3 per foot, m/s^2: the foot accelerometer (proper acceleration, sensor frame; `accelerometers/<foot imu>`)",
    "(optional) 1 value: the gait phase, 0 double support, 1 left support, 2 right support (`truth/gait/phase`)",
};
static const char *const sp_out_docs[SP_N_OUT] = {
    "per foot and axis (`<foot>/<axis>`): the class, 0 no slip, 1 tends to slip, 2 slipping (0 out of contact)",
    "per foot (`<foot>`): the largest class over its axes",
    "per foot and axis: 1 where |p''| >= Tr in contact (the thesis's slip detection), else 0",
    "4 per foot and axis (`<foot>/<axis>/F_s`, `F_st`, `F_c`, `F_suf`), N or ratio: static, Stribeck and Coulomb "
    "friction estimates and the sufficient friction; the margin band is [F_suf, F_c]",
    "per foot and axis, N or ratio: |F_t| is what is classified (signed for x, y)",
    "per foot and axis, N or ratio: F_f = F_t + m_f p''",
    "per foot and axis, m/s^2: p'', the foot's acceleration without the bias",
    "per foot: 1 in contact, else 0",
    "per foot, N: F_N",
};

static const char *const axis_choices[] = {"x", "y", "t", NULL};
static const char *const unit_choices[] = {"force", "ratio", NULL};
static const char *const mode_choices[] = {"learn", "fixed", NULL};
static const char *const g_choices[] = {"g", "m/s^2", NULL};
static const char *const def_axes[] = {"x", "y"};
static const double def_zero[] = {0};
static const double def_support[] = {1, 2};

#define NONNEG .has_min = true, .min = 0

static const rb_param_spec sp_params[] = {
    {.name = "feet",
     .kind = RB_PARAM_STRING_ARRAY,
     .required = true,
     .min_count = 1,
     .max_count = 8,
     .doc = "the feet (sole frames), in the order of the force and acc inputs: element names (and model frames)"},
    {.name = "axes",
     .kind = RB_PARAM_STRING_ARRAY,
     .def_strings = def_axes,
     .def_count = 2,
     .min_count = 1,
     .max_count = 3,
     .choices = axis_choices,
     .doc = "axes of the foot frame: \"x\", \"y\" (the thesis's, one predictor each) or \"t\" (|(x, y)|, ours)"},
    {.name = "foot_mass",
     .kind = RB_PARAM_NUMBER,
     .required = true,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "kg: m_f, the mass below the force sensor (eq. 5.18)"},
    {.name = "slip_threshold",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.09,
     NONNEG,
     .doc = "Tr: a slip is detected where |p''| >= Tr (in slip_threshold_unit)",
     .details = "default the thesis's 0.09"},
    {.name = "slip_threshold_unit",
     .kind = RB_PARAM_STRING,
     .def_string = "g",
     .choices = g_choices,
     .doc = "unit of slip_threshold: \"g\" (9.80665 m/s^2; ours: the thesis states none) or \"m/s^2\""},
    {.name = "safety_margin",
     .kind = RB_PARAM_NUMBER,
     .def_number = 5,
     NONNEG,
     .doc = "F_ms, N (a ratio with unit \"ratio\"): F_suf = max(F_c - F_ms, 0)",
     .details = "default the thesis's 5 N"},
    {.name = "unit",
     .kind = RB_PARAM_STRING,
     .def_string = "force",
     .choices = unit_choices,
     .doc = "\"force\": thresholds in N (the thesis's experiment); \"ratio\": on |F_t| / F_N (its mu form)"},
    {.name = "thresholds",
     .kind = RB_PARAM_STRING,
     .def_string = "learn",
     .choices = mode_choices,
     .doc = "\"learn\" (steps 1-7, online) or \"fixed\" (the given or file thresholds)"},
    {.name = "static_friction",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = def_zero,
     .def_count = 1,
     NONNEG,
     .doc = "F_s at the start (learn) or kept (fixed): 1, one per axis or one per foot and axis"},
    {.name = "stribeck_friction",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = def_zero,
     .def_count = 1,
     NONNEG,
     .doc = "F_st likewise"},
    {.name = "coulomb_friction",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = def_zero,
     .def_count = 1,
     NONNEG,
     .doc = "F_c likewise (the slip threshold); required with \"fixed\" unless thresholds_file is given"},
    {.name = "thresholds_file",
     .kind = RB_PARAM_STRING,
     .file = true,
     .doc = "JSON of `roboest slip-thresholds` (relative to the pipeline file): sets the three thresholds per foot and "
            "axis; its feet, axes and unit must be the stage's"},
    {.name = "bias_window",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.2,
     NONNEG,
     .doc = "s: the accelerometer bias is the mean of the readings over the first bias_window (0: no bias)",
     .details = "default ours: the robot stands still for the first 0.5 s of the walks"},
    {.name = "hold_after_touchdown",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0,
     NONNEG,
     .doc = "s: after each contact begins, detection and learning wait this long (ours; 0: the thesis)"},
    {.name = "contact_force",
     .kind = RB_PARAM_NUMBER,
     .def_number = 30,
     NONNEG,
     .doc = "N: without phase, contact begins when F_N exceeds it and ends below half of it"},
    {.name = "support_phase",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = def_support,
     .def_count = 2,
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 2,
     .doc = "per foot, the phase value of its single support (with phase wired; default [1, 2]: left, right)"},
    {.name = "accelerometers",
     .kind = RB_PARAM_STRING_ARRAY,
     .doc = "per foot, the accelerometer's frame in the model: its rotation into the foot frame (warning when a "
            "joint moves between them)"},
    {.name = "ft_sensors",
     .kind = RB_PARAM_STRING_ARRAY,
     .doc = "per foot, the ankle FT sensor in the model: its frame's rotation into the foot frame"},
    {.name = "accelerometer_rpy",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .doc = "rad, 3 or 3 per foot: the accelerometer's roll, pitch, yaw in the foot frame (without accelerometers)"},
};

const rb_stage_type rb_stage_slip_predictor = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "slip_predictor",
    .summary = "foot slip detection (foot accelerometer) and prediction {no slip, tends to slip, slipping} with "
               "learned or fixed friction thresholds (seed 003 ch. 5)",
    .doc = sp_doc,
    .inputs = sp_inputs,
    .input_docs = sp_in_docs,
    .n_inputs = SP_N_IN,
    .optional_inputs = 1u << SP_PHASE,
    .outputs = sp_outputs,
    .output_docs = sp_out_docs,
    .n_outputs = SP_N_OUT,
    .params = sp_params,
    .n_params = sizeof sp_params / sizeof sp_params[0],
    .create = sp_create,
    .step = sp_step,
    .finish = sp_finish,
    .destroy = sp_destroy,
    .notes = sp_notes,
};
