/* ukf_torque's type: its ports with their documentation, the estimator's documentation (configs/stages.md is
 * generated from it) and the parameter schema; the adapter itself is ukf_torque.c. */
#include <stddef.h>

#include "roboest/estimators.h"
#include "torque_calib.h"
#include "ukf_torque.h"

/* ---- the type ---------------------------------------------------------------------------------------------------- */

static const char *const ukft_in[] = {"q", "dq", "current", "ft", "acc", "gyro", "friction"};
static const char *const ukft_out[] = {"tau_j", "tau_m", "tau_f", "dq",         "ft",  "contacts", "base",
                                       "bias",  "ddq",   "var",   "innovation", "nis", "adapt",    "correction"};
/* Longer than the 4095 characters ISO C guarantees in one string literal; GCC and clang take any length. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
static const char ukft_doc[] =
    "The joint-torque paper's unscented Kalman filter (seed 000 eq. 5-8; the public\n"
    "RobotDynamicsEstimator's design): joint torques without torque sensors. The model (process,\n"
    "measurements, layout, start) is `roboest/dynamics.h`'s `rb_tukf_*`, the jump adaptation\n"
    "`roboest/filters.h`'s `rb_jump_*`; the stage adapts ports and parameters.\n"
    "\n"
    "`q` is not a state: the model is evaluated at the measured positions. The inputs `ft`, `acc`,\n"
    "`gyro` and `friction` are optional (width 0 when their lists are empty, or unwired). NaN in a\n"
    "measured input skips that element of the update; a sample with a non-finite `q` is predicted only.\n"
    "\n"
    "State (in the published order, as `var`): `dq` (n); `tau_m` (n, the motor torque at the joint,\n"
    "N m); `tau_F` (n); `ft` (6 per FT sensor: its reading in the sensor's convention, offset-corrected);\n"
    "`contacts` (6 per contact, BODY at the frame: its axes); for a floating base `base` (6: `a_B`, the\n"
    "proper linear acceleration of the base origin in base axes, and `w_B`, its angular velocity); the\n"
    "optional biases `ft_bias` (6 per FT sensor), `acc_bias` (3 per accelerometer), `gyro_bias` (3 per\n"
    "gyroscope); with `friction_correction` the correction `fric_corr` (k per joint, below).\n"
    "\n"
    "Process over `dt` (the clock's interval `t_k - t_(k-1)`, or the `dt` parameter), at the previous\n"
    "sample's q:\n"
    "\n"
    "    K(q) ddq + K_b(q) a + h(q, dq, w_B) = tau_m - tau_F - diag(R^2 J_m) ddq + G_ft y + G_c w\n"
    "\n"
    "the forward dynamics of every sub-model of the tree cut at the FT sensors (`roboest/dynamics.h`'s\n"
    "`rb_cut_dyn`; eq. 6), each sub-model's\n"
    "\n"
    "    M_ss ddq = tau_m - tau_F - R^2 J_m ddq - C - M_sb alpha_g + sum J_FT^T f_FT + J_c^T f_c\n"
    "\n"
    "(`J_c^T f_c`: the paper's `J_ext^T f_ext`) with its base acceleration `alpha_g` given by the joints\n"
    "above it, solved parents first by Cholesky factors of the `M_ss` blocks (no inverse formed). The\n"
    "robot's base acceleration is `a = [-g; 0]` for a fixed base (gravity enters once, as the base's\n"
    "proper acceleration) and `a = [a_B; 0]` for a floating one (eq. 7: the base's angular acceleration\n"
    "taken as zero). Then\n"
    "\n"
    "    dq+    = dq + dt ddq                                    (explicit Euler)\n"
    "    tau_F+ = tau_F                                          (\"random_walk\", eq. 8)\n"
    "           = tau_F + dt ddq (k2 + k0 k1 / cosh^2(k1 dq))    (\"rate_model\")\n"
    "    w+     = w - dt k w                                     (contacts; k = contact_decay, 0: random walk)\n"
    "\n"
    "and every other block constant (a random walk); the process noise is `diag(q_*)` per step.\n"
    "\n"
    "Measurements (in the published order, as `innovation`): `dq` (n); the motor currents\n"
    "`i = tau_m / (k_t R)` (n, R the SIGNED gear ratio); `friction = tau_F` (n, when wired: a friction\n"
    "model's output measures the `tau_F` block; with `friction_correction`, `tau_F - theta . phi`;\n"
    "model's output measures the `tau_F` block, the paper's key idea); `ft` = the FT state + `ft_bias`\n"
    "(6 per FT sensor); each accelerometer the proper acceleration of its frame (frame axes) from `a`,\n"
    "the process model's `ddq` at the state and the velocity-product terms, + `acc_bias` (3 each); each\n"
    "gyroscope the angular velocity of its frame from `w_B` and `dq`, + `gyro_bias` (3 each); the\n"
    "measurement noise is `diag(r_*)`.\n"
    "\n"
    "The UKF is the filters module's (`alpha`, `beta`, `kappa`; fresh sigma points for the update,\n"
    "Cholesky square root, no explicit inverse, P kept symmetric), its sigma points evaluated in batch:\n"
    "the model's matrices at q are computed once per sample. With `sigma_points` `\"structured\"` (the\n"
    "default) it is the same filter, estimates equal to the dense one's to rounding (1e-9 relative, tested\n"
    "on the shipped logs), computed from the structure: at fixed joint (and base angular) velocities the\n"
    "process and the measurements are affine in every other block, so the 2 (N - n_v) sigma points that\n"
    "spread along those blocks only (the lower Cholesky factor's columns past the velocities) have their\n"
    "sums in closed form (the Jacobians, the Schur complement of the velocity block), the random-walk\n"
    "blocks' prediction is P + Q, and the model runs at the 2 n_v + 1 others. `velocity_terms` `\"mean\"`\n"
    "is an approximation, not the paper's filter: every sigma point's velocity-product terms at the mean's\n"
    "velocities (one dynamics pass per phase); on the shipped logs tau_j's RMSE stays within 1 % of the\n"
    "exact filter's (0.0-0.6 % more; per joint up to 2.5 % on the humanoid logs at 200 Hz).\n"
    "\n"
    "Start (the first sample with a finite `q`, then updated with that sample): `dq` measured,\n"
    "`tau_m = R k_t i_m`, `tau_F = 0`, contacts 0, biases 0, a floating base's block from `base_imu` by\n"
    "eq. 7 (`w_B = R_BS w_S`, `a_B = R_BS a_S - w_B x (w_B x p_BS)`), and the FT states the readings the\n"
    "model predicts for the measured q, dq and zero joint accelerations with the robot balanced on its\n"
    "contacts (a fixed base: one wrench at the base link). With `ft_offset` `\"first_sample\"` the offset\n"
    "`o = f_measured(0) - f_predicted(0)` is subtracted from every later reading (the robot should be\n"
    "still at the start); with `\"none\"` the FT states start at the readings (use it when the log does not\n"
    "start at rest); `\"still_window\"` (below) makes the stage subtract its offset from the readings before\n"
    "the model, whose own calibration is then off.\n"
    "\n" TQ_FTOFF_MD "\n" TQ_CHECK_MD "\n"
    "Jump adaptation (opt-in: `adapt_probability` in (0, 1); 0, the default, is off and changes nothing;\n"
    "the model and why:\n"
    "[paper/README.md](paper/README.md#the-humanoid-the-right-leg-of-the-balancing-floating-base-humanoid),\n"
    "\"The humanoid\"): an innovation-triggered covariance inflation for jumps of the random-walk blocks (a\n"
    "controller's torque step, a load or contact change) that their small per-step variance follows\n"
    "slowly. After the sample's update, the currents' NIS `nu_c^T S_cc^-1 nu_c` (the rows and columns of\n"
    "the currents used, c of them) is compared with the chi-square quantile\n"
    "`rb_chi2_quantile(adapt_probability, c)`: the current measures `tau_m` alone and exactly (H diagonal,\n"
    "no model error), so its NIS is the one that reveals a torque step and stays calibrated when the\n"
    "dynamics or IMU models are off. Above the gate, the update is repeated from the same prior x with\n"
    "the prior variance of the `adapt_blocks` raised by the innovation's shortfall (one-sample covariance\n"
    "matching, `E[nu_i^2] = S_ii`), times `adapt_scale`:\n"
    "\n"
    "    tau_m,i and/or tau_F,i  + (k_t R)_i^2 max(0, nu_i^2 - S_ii)     (nu_i, S_ii: current i)\n"
    "    ft element e            + max(0, nu_e^2 - S_ee)                  (its FT reading's)\n"
    "\n"
    "so the sample that shows the jump absorbs it (applying it to the next prediction instead would\n"
    "leave this sample's estimate a step behind and let the state's correlations spread the jump into the\n"
    "other blocks first). `tau_F` is not in the default: a current innovation says nothing about\n"
    "friction, and a `tau_F` as free as `tau_m` lets the dynamics cancel the jump. The FT states are: a\n"
    "torque step moves the contact and FT wrenches too, and FT states that lag force the dynamics to hold\n"
    "`tau_j` back. It costs one more update on triggered samples, and no allocation.\n"
    "\n"
    "Online friction correction (opt-in: `friction_correction`, default `[]`: off, the estimator and its\n"
    "state unchanged bit for bit; the measurements that chose it:\n"
    "[paper/README.md](paper/README.md#online-friction-adaptation)): a friction model carried to another\n"
    "robot (another leg, a robot after\n"
    "maintenance) measures the wrong `tau_F`. The state gains per joint i the parameters `theta_i` of the\n"
    "listed terms, slow random walks (`q_correction` per step, `p0_correction` at the start, starting at\n"
    "0), and the friction measurement becomes\n"
    "\n"
    "    z_friction,i = tau_F,i - theta_i . phi_i,   phi: coulomb tanh(dq_i / correction_v_c), viscous dq_i,\n"
    "                                                    offset 1, scale tau_F,i,\n"
    "                                                    stribeck tanh(dq_i / v_c) exp(-(dq_i / v_s)^2)\n"
    "\n"
    "(`dq`, `tau_F`: the state's). The current, FT and IMU measurements pin `tau_F` through the dynamics; the\n"
    "UKF's correlations then move `theta` until the corrected model agrees with them, from the running log\n"
    "alone. The `correction` output holds `theta`; `var` its variances (`fric_corr/<term>/<joint>`). It\n"
    "costs k n states for k terms (`[\"coulomb\", \"viscous\", \"stribeck\"]`: about +20 % time per sample on\n"
    "the leg, +26-29 % on the humanoid's 12 joints with the structured filter, `make bench-ukf`).\n"
    "`r_friction` and the correction's keys need the `friction` input (RB_ECONFIG otherwise).\n"
    "\n"
    "IMU lists without their inputs: `accelerometers` / `gyroscopes` listed while `acc` / `gyro` is unwired\n"
    "or 0 wide (a log without IMUs) run without those measurements, and the run's warnings say so; a\n"
    "nonzero width that does not fit the list is an error, and a floating base's `base_imu` needs both.\n"
    "\n"
    "Sensor faults: the stage shows the pipeline's fault monitor (the config's `faults` section) its normalized\n"
    "innovations `nu_j / sqrt(S_jj)`, each attributed to the input element it measures; a sample beyond\n"
    "`faults.k_sigma` counts as an outlier of that element (a stuck or spiking current, an encoder spike seen\n"
    "through `dq`). This costs one copy of `S` per sample, only when the monitor is on.\n"
    "\n"
    "Errors in a step: RB_ENUMERIC when the state covariance loses positive definiteness, the innovation\n"
    "covariance does, or the state or predicted measurements stop being finite, naming the block and\n"
    "element; the runner prefixes the stage and the sample (`stage ukf (ukf_torque): sample 0 (t = 0 s):\n"
    "the innovation covariance lost positive definiteness at measurement acc/forearm/x: ...`). A\n"
    "sub-model's mass matrix that is not positive definite stops the run too, naming the sub-model and\n"
    "the joint.\n"
    "\n"
    "Like `rnea_torque`, this stage needs the pipeline's `model` key (`rb_stage_setup.model`): every\n"
    "joint vector (n = the model's joints) follows `model.joints`, and joint-vector inputs whose element\n"
    "names are model joints must be bound in that order. Configuration errors (RB_ECONFIG) name the\n"
    "parameter and item: a misspelt FT sensor or frame (with the closest model name), an input whose\n"
    "width does not fit the parameters, a per-element array of the wrong length.\n"
    "\n"
    "Per-element parameters take one value for all, or one per element: per joint 1 or n values; per FT\n"
    "sensor 1, 6 (the same for each) or 6 n_ft; per contact 1, 6 or 6 n_c; per IMU 1, 3 or 3 n_imu.\n"
    "Variances are the diagonal entries of the covariance matrices; the process ones are per step. The\n"
    "defaults are the public ergoCub configuration's (tuned for 100 Hz). A pipeline with the friction\n"
    "measurement wires a friction stage's output into `friction`:\n"
    "\n"
    "    {\"id\": \"ukf\", \"type\": \"ukf_torque\",\n"
    "     \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"current\": \"current\", \"ft\": \"ft\",\n"
    "            \"acc\": \"acc\", \"gyro\": \"gyro\", \"friction\": \"tau_f_model\"},\n"
    "     \"out\": {\"tau_j\": \"tau_ukf\", \"nis\": \"nis\"},\n"
    "     \"params\": {\"ft_sensors\": [\"upper_arm_ft_sensor\", \"wrist_ft_sensor\"],\n"
    "                \"accelerometers\": [\"hand_acc\"], \"gyroscopes\": [\"hand_gyro\"],\n"
    "                \"k_t\": [0.05, 0.05, 0.05, 0.04], \"gear_ratio\": [-100, 160, -100, 100],\n"
    "                \"r_friction\": [2.5e-3]}}\n";
#pragma GCC diagnostic pop
static const char *const ukft_in_docs[] = {
    "n values, rad: the joint positions (not a state: the model is evaluated at the measured q)", /* q */
    "n values, rad/s: the joint velocities",                                                      /* dq */
    "n values, A: the motor currents",                                                            /* current */
    "6 per sensor of `ft_sensors`, in that order, each as the sensor reports it (N, N m)",        /* ft */
    "3 per frame of `accelerometers`, m/s^2: their proper accelerations",                         /* acc */
    "3 per frame of `gyroscopes`, rad/s: their angular velocities",                               /* gyro */
    "n values, N m: a friction stage's `tau_F`, measuring the state's `tau_F` block",             /* friction */
};
static const char *const ukft_out_docs[] = {
    "n values, N m: the joint torques `tau_m - tau_F - R^2 J_m ddq` (`tau_m - tau_F` with "
    "`motor_inertia` 0, as in the paper)",                                     /* tau_j */
    "n values, N m: the motor torque at the joint",                            /* tau_m */
    "n values, N m: the friction torque `tau_F`",                              /* tau_f */
    "n values, rad/s: the joint velocities",                                   /* dq */
    "6 per FT sensor (N, N m): the FT states, the readings offset-corrected",  /* ft */
    "6 per contact (N, N m): the contact wrenches, BODY at the contact frame", /* contacts */
    "6 for a floating base (`a_x`, `a_y`, `a_z` in m/s^2: `a_B`; `w_x`, `w_y`, `w_z` in rad/s: "
    "`w_B`), 0 wide otherwise", /* base */
    "the bias blocks in order, `ft_bias/<sensor>/<axis>`, `acc_bias/<frame>/<axis>`, "
    "`gyro_bias/<frame>/<axis>`; 0 wide without",                                 /* bias */
    "n values, rad/s^2: the process model's joint accelerations at the estimate", /* ddq */
    "one per state element: the diagonal of P after the update, in the published state order; names "
    "`<block>/<element>`, units the state's squared", /* var */
    "one per measurement: `z - zhat`, NaN where skipped; names `dq/<joint>`, `current/<joint>`, "
    "`friction/<joint>`, `ft/<sensor>/<axis>`, `acc/<frame>/<axis>`, `gyro/<frame>/<axis>`", /* innovation */
    "1 value, unit `1`: the update's normalized innovation squared `nu^T S^-1 nu` over the "
    "measurements used (NaN if none)", /* nis */
    "2 values with `adapt_probability` > 0, else 0 wide: `nis_current`, the NIS of the motor "
    "currents' block of the sample's first update (NaN without an update), and `inflation`, the "
    "variance added per joint to the `tau_m` / `tau_F` of `adapt_blocks`, summed over the joints ((N "
    "m)^2; 0: the gate was not crossed, or no current's innovation exceeded its `S_ii`)", /* adapt */
    "k per joint with `friction_correction` (k terms), else 0 wide: the friction correction's parameters "
    "`theta`, joint-major, names `<term>/<joint>`, units `N m` (coulomb, offset), `N m s/rad` (viscous), `1` "
    "(scale)", /* correction */
};
static const char *const friction_choices[] = {"random_walk", "rate_model", NULL};
static const char *const sigma_choices[] = {"structured", "dense", NULL};
static const char *const vterm_choices[] = {"sigma_points", "mean", NULL};
static const char *const adapt_choices[] = {"tau_m", "tau_f", "ft", NULL};
static const char *const adapt_default[] = {"tau_m", "ft"};
static const char *const correction_choices[] = {"coulomb", "viscous", "offset", "scale", "stribeck", NULL};
static const double d_q_corr[] = {1e-7}, d_p0_corr[] = {1e-2};
static const double d_zero[] = {0.0};
static const double d_q_dq[] = {1e-3}, d_q_tau_m[] = {1e-3}, d_q_tau_f[] = {1e-2};
static const double d_q_ft[] = {1e-4, 1e-4, 1e-4, 1e-5, 1e-5, 1e-5}, d_q_contact[] = {1e-1};
static const double d_q_base[] = {1e-2}, d_q_bias[] = {1e-8};
static const double d_p0[] = {1e-2}, d_p0_bias[] = {1e-4};
static const double d_r_dq[] = {1e-3}, d_r_current[] = {1e-3}, d_r_friction[] = {1e-2};
static const double d_r_ft[] = {1.0, 1.0, 1.0, 0.1, 0.1, 0.1}, d_r_acc[] = {1.0}, d_r_gyro[] = {1e-2};

#define NUMS_MORE(nm, def, lo_excl, doc_, details_)                                                                    \
    {                                                                                                                  \
        .name = nm, .kind = RB_PARAM_NUMBER_ARRAY, .def_numbers = def, .def_count = sizeof def / sizeof def[0],        \
        .min_count = 1, .has_min = true, .min = 0, .min_exclusive = lo_excl, .doc = doc_, .details = details_          \
    }
#define NUMS(nm, def, lo_excl, doc_) NUMS_MORE(nm, def, lo_excl, doc_, NULL)
#define NAMES(nm, doc_)                                                                                                \
    {                                                                                                                  \
        .name = nm, .kind = RB_PARAM_STRING_ARRAY, .doc = doc_, .details = "default `[]`"                              \
    }
#define FLAG(nm, doc_)                                                                                                 \
    {                                                                                                                  \
        .name = nm, .kind = RB_PARAM_BOOLEAN, .doc = doc_                                                              \
    }

static const rb_param_spec ukft_params[] = {
    NAMES("ft_sensors", "the model's FT sensors the tree is cut at (the ft input: 6 values each, in this order)"),
    NAMES("contacts", "frames with an unknown contact wrench in the state (BODY: frame axes, about its origin)"),
    NAMES("accelerometers", "frames of the accelerometers of the acc input (3 values each, m/s^2, proper)"),
    NAMES("gyroscopes", "frames of the gyroscopes of the gyro input (3 values each, rad/s)"),
    {.name = "base_imu",
     .kind = RB_PARAM_STRING,
     .doc = "floating base: the IMU frame on the base link (listed in accelerometers and gyroscopes) that starts the "
            "base state (eq. 7)",
     .details = "required for a floating base, rejected for a fixed base"},
    {.name = "k_t",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .required = true,
     .min_count = 1,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "motor torque constants, N m/A (1 or n values)"},
    {.name = "gear_ratio",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .required = true,
     .min_count = 1,
     .doc = "signed gear ratios R (theta_motor = R q; 1 or n values, non-zero); i_m = tau_m / (k_t R)",
     .details = "e.g. -160"},
    NUMS_MORE("motor_inertia", d_zero, false,
              "rotor inertias J_m, kg m^2 (rotor side; 1 or n values): tau_j = tau_m - tau_F - R^2 J_m ddq; 0: "
              "neglected as in the paper",
              "`R^2 J_m` joins each joint's inertia; neglecting it is wrong for light joints behind high reductions"),
    {.name = "alpha",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1.0,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "sigma-point spread"},
    {.name = "beta", .kind = RB_PARAM_NUMBER, .def_number = 2.0, .doc = "prior-distribution weight (2: Gaussian)"},
    {.name = "velocity_terms",
     .kind = RB_PARAM_STRING,
     .def_string = "sigma_points",
     .choices = vterm_choices,
     .doc = "the process's and the accelerometers' velocity-product terms (Coriolis, centrifugal) at each sigma "
            "point's velocities (\"sigma_points\": the paper's UKF) or, an approximation, every sigma point's at "
            "the mean's (\"mean\": one dynamics pass per phase instead of 2 n_v + 1; on the shipped logs the "
            "tau_j RMSE within 1 % of the exact filter's, tests/unit/test_torque_ukf_structured.c)"},
    {.name = "sigma_points",
     .kind = RB_PARAM_STRING,
     .def_string = "structured",
     .choices = sigma_choices,
     .doc = "\"structured\": the same UKF (estimates equal to the dense one's to rounding) evaluating the model at "
            "the 2 n_v + 1 sigma points that move the velocities only, the others' sums in closed form (the model "
            "is affine in the rest at fixed velocities); \"dense\": every sigma point (a \"scale\" correction "
            "term always runs dense)"},
    {.name = "kappa", .kind = RB_PARAM_NUMBER, .def_number = 0.0, .doc = "secondary scaling"},
    {.name = "refresh_every",
     .kind = RB_PARAM_INTEGER,
     .def_number = 1,
     .has_min = true,
     .min = 1,
     .doc = "1: the UKF (the paper's). N > 1, an approximation for speed: the covariance and the gain are "
            "refreshed (a full UKF step) every N samples, and the N - 1 samples between step the mean alone (the "
            "process at the mean, then the refresh's gain times that point's innovation; P held; a jump "
            "adaptation that fires on such a sample makes its update a full one from the held P). Not with "
            "friction_correction",
     .details = "measured at 8 on the shipped logs: tau_j's RMSE within 0.5 % of the UKF's (leg 0.01-0.04 %, "
                "humanoid 0.12-0.44 %; tests/unit/test_torque_ukf_structured.c), 4.8-5.5x faster on the humanoid "
                "(make bench-ukf)"},
    {.name = "dt",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.0,
     .has_min = true,
     .min = 0,
     .doc = "process step, s; 0: the clock's interval t_k - t_(k-1)"},
    NUMS("q_dq", d_q_dq, false, "process variance per step of dq, (rad/s)^2 (1 or n values)"),
    NUMS("q_tau_m", d_q_tau_m, false, "process variance per step of tau_m, (N m)^2 (1 or n)"),
    NUMS("q_tau_f", d_q_tau_f, false, "process variance per step of tau_F, (N m)^2 (1 or n)"),
    NUMS("q_ft", d_q_ft, false, "process variance per step of the FT wrenches, N^2 and (N m)^2 (1, 6 or 6 n_ft)"),
    NUMS("q_contact", d_q_contact, false, "process variance per step of the contact wrenches (1, 6 or 6 n_c)"),
    NUMS_MORE("q_base_imu", d_q_base, false, "process variance per step of [a_B, w_B] (floating; 1 or 6)",
              "(m/s^2)^2 for `a_B`, (rad/s)^2 for `w_B`"),
    NUMS("q_ft_bias", d_q_bias, false, "process variance per step of the FT biases (1, 6 or 6 n_ft)"),
    NUMS("q_acc_bias", d_q_bias, false, "process variance per step of the accelerometer biases (1, 3 or 3 n_acc)"),
    NUMS("q_gyro_bias", d_q_bias, false, "process variance per step of the gyroscope biases (1, 3 or 3 n_gyro)"),
    NUMS("p0_dq", d_p0, true, "initial variance of dq, (rad/s)^2 (1 or n)"),
    NUMS("p0_tau_m", d_p0, true, "initial variance of tau_m, (N m)^2 (1 or n)"),
    NUMS("p0_tau_f", d_p0, true, "initial variance of tau_F, (N m)^2 (1 or n)"),
    NUMS("p0_ft", d_p0, true, "initial variance of the FT wrenches (1, 6 or 6 n_ft)"),
    NUMS("p0_contact", d_p0, true, "initial variance of the contact wrenches (1, 6 or 6 n_c)"),
    NUMS("p0_base_imu", d_p0, true, "initial variance of [a_B, w_B] (floating; 1 or 6)"),
    {.name = "p0_bias",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = d_p0_bias,
     .def_count = 1,
     .min_count = 1,
     .max_count = 1,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "initial variance of every bias element (one value)"},
    NUMS("r_dq", d_r_dq, true, "measurement variance of dq, (rad/s)^2 (1 or n)"),
    NUMS("r_current", d_r_current, true, "measurement variance of the motor currents, A^2 (1 or n)"),
    NUMS("r_friction", d_r_friction, true, "measurement variance of the friction input, (N m)^2 (1 or n)"),
    NUMS("r_ft", d_r_ft, true, "measurement variance of the FT readings, N^2 and (N m)^2 (1, 6 or 6 n_ft)"),
    NUMS("r_acc", d_r_acc, true, "measurement variance of the accelerometers, (m/s^2)^2 (1, 3 or 3 n_acc)"),
    NUMS("r_gyro", d_r_gyro, true, "measurement variance of the gyroscopes, (rad/s)^2 (1, 3 or 3 n_gyro)"),
    {.name = "friction_dynamics",
     .kind = RB_PARAM_STRING,
     .def_string = "random_walk",
     .choices = friction_choices,
     .doc = "tau_F process: \"random_walk\" (the paper) or \"rate_model\" (the public estimator's older "
            "tau_F+ = tau_F + dt ddq (k2 + k0 k1 / cosh^2(k1 dq)))"},
    {.name = "friction_k0",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = d_zero,
     .def_count = 1,
     .min_count = 1,
     .doc = "rate model k0, N m (1 or n); required with \"rate_model\", rejected otherwise",
     .details = "the rate model's friction is `k0 tanh(k1 dq) + k2 dq`"},
    {.name = "friction_k1",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = d_zero,
     .def_count = 1,
     .min_count = 1,
     .doc = "rate model k1, s/rad (1 or n); required with \"rate_model\", rejected otherwise",
     .details = "the rate model's friction is `k0 tanh(k1 dq) + k2 dq`"},
    {.name = "friction_k2",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = d_zero,
     .def_count = 1,
     .min_count = 1,
     .doc = "rate model k2, N m s/rad (1 or n); required with \"rate_model\", rejected otherwise",
     .details = "the rate model's friction is `k0 tanh(k1 dq) + k2 dq`"},
    {.name = "contact_decay",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.0,
     .has_min = true,
     .min = 0,
     .doc = "contact wrench decay rate k, 1/s: f+ = f - dt k f (0: random walk)"},
    FLAG("ft_bias", "FT bias states (measured FT = state + bias)"),
    FLAG("acc_bias", "accelerometer bias states"),
    FLAG("gyro_bias", "gyroscope bias states"),
    {.name = "ft_offset",
     .kind = RB_PARAM_STRING,
     .def_string = "first_sample",
     .choices = tq_offset_choices,
     .doc = TQ_FTOFF_DOC,
     .details = "`\"first_sample\"` and `\"still_window\"` need the robot still at the start; with `\"none\"` the FT "
                "states start at the readings (for a log that does not start at rest)"},
    TQ_FTOFF_SPECS,
    TQ_CHECK_SPECS,
    {.name = "adapt_probability",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.0,
     .has_min = true,
     .min = 0,
     .has_max = true,
     .max_exclusive = true,
     .max = 1,
     .doc = "jump adaptation: the chi-square probability of the motor currents' NIS gate (e.g. 0.9999; dof = currents "
            "used); above it the prior variance of adapt_blocks is inflated and the update repeated; 0: off",
     .details = "off (0, or absent) changes nothing"},
    {.name = "adapt_blocks",
     .kind = RB_PARAM_STRING_ARRAY,
     .def_strings = adapt_default,
     .def_count = 2,
     .min_count = 1,
     .choices = adapt_choices,
     .doc = "blocks the jump adaptation inflates: \"tau_m\", \"tau_f\" (by the current's variance shortfall), \"ft\" "
            "(by the FT readings' own; the default's \"ft\" does nothing without FT sensors)",
     .details = "default `[\"tau_m\", \"ft\"]`; given explicitly, `\"ft\"` needs FT sensors; rejected without "
                "`adapt_probability`"},
    {.name = "adapt_scale",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1.0,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "factor on the jump adaptation's inflation (1: the innovation made consistent)",
     .details = "rejected without `adapt_probability`"},
    {.name = "friction_correction",
     .kind = RB_PARAM_STRING_ARRAY,
     .choices = correction_choices,
     .doc = "online friction adaptation: the terms of the per-joint correction added to the friction input, "
            "\"coulomb\" (tanh(dq / correction_v_c)), \"viscous\" (dq), \"offset\" (1), \"scale\" (the input), "
            "\"stribeck\" (tanh(dq / correction_v_c) exp(-(dq / correction_v_s)^2))",
     .details = "default `[]` (off: the estimator unchanged); needs the friction input"},
    {.name = "q_correction",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = d_q_corr,
     .def_count = 1,
     .min_count = 1,
     .has_min = true,
     .min = 0,
     .doc = "process variance per step of each correction parameter (1 value, or one per term of "
            "friction_correction, in its order): the adaptation's speed",
     .details = "units the term's squared; needs `friction_correction`"},
    {.name = "p0_correction",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = d_p0_corr,
     .def_count = 1,
     .min_count = 1,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "initial variance of each correction parameter (1 value, or one per term); the parameters start at 0",
     .details = "needs `friction_correction`"},
    {.name = "correction_v_c",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.01,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc =
         "velocity scale of the \"coulomb\" and \"stribeck\" terms' tanh(dq / v_c), rad/s (m/s for a prismatic joint)",
     .details = "needs `friction_correction`"},
    {.name = "correction_v_s",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.05,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "Stribeck velocity of the \"stribeck\" term's exp(-(dq / v_s)^2), rad/s (m/s)",
     .details = "needs `friction_correction`; 0.05: the middle of the 0.01-0.1 rad/s over which a harmonic drive's "
                "static peak decays (our choice)"},
};
#undef NUMS
#undef NUMS_MORE
#undef NAMES
#undef FLAG

const rb_stage_type rb_stage_ukf_torque = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "ukf_torque",
    .summary = "joint torques tau_m - tau_F by the joint-torque paper's UKF: motor currents, joint velocities, FT "
               "sensors, IMUs and an optional friction measurement, sub-model forward dynamics as process",
    .doc = ukft_doc,
    .inputs = ukft_in,
    .input_docs = ukft_in_docs,
    .n_inputs = N_IN,
    .optional_inputs = (1u << IN_FT) | (1u << IN_ACC) | (1u << IN_GYRO) | (1u << IN_FRICTION),
    .outputs = ukft_out,
    .output_docs = ukft_out_docs,
    .n_outputs = N_OUT,
    .params = ukft_params,
    .n_params = sizeof ukft_params / sizeof ukft_params[0],
    .create = tq_ukf_create,
    .step = tq_ukf_step,
    .finish = tq_ukf_finish,
    .destroy = tq_ukf_destroy,
    .innovations = tq_ukf_innovations,
    .notes = tq_ukf_notes,
};
