/* attitude: ports, parameters and documentation over the observers module's attitude estimator (roboest/observers.h,
 * rb_att_*; seed 003 sec. 2.6). configs/stages.md is generated from the doc below. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/observers.h"
#include "torque_common.h"

enum { AT_ACC, AT_GYRO, AT_N_IN };
enum { AT_QUAT, AT_RPY, AT_GRAVITY, AT_LIN_ACC, AT_BIAS, AT_VAR, AT_N_OUT };

typedef struct at_stage {
    rb_att *est;
    char *notes[2];
    size_t n_notes;
} at_stage;

static void at_destroy(void *state)
{
    at_stage *s = state;
    if (!s)
        return;
    rb_att_free(s->est);
    for (size_t i = 0; i < s->n_notes; i++)
        rb_free(s->notes[i]);
    rb_free(s);
}

static const char *const quat_names[4] = {"w", "x", "y", "z"}, *const quat_units[4] = {"", "", "", ""};
static const char *const rpy_names[3] = {"roll", "pitch", "yaw"}, *const rpy_units[3] = {"rad", "rad", "rad"};
static const char *const xyz[3] = {"x", "y", "z"}, *const acc_units[3] = {"m/s^2", "m/s^2", "m/s^2"};
static const char *const var_names[13] = {"gravity/x",    "gravity/y",    "gravity/z",   "lin_acc/x",  "lin_acc/y",
                                          "lin_acc/z",    "acc_bias/x",   "acc_bias/y",  "acc_bias/z", "quaternion/w",
                                          "quaternion/x", "quaternion/y", "quaternion/z"};
static const char *const var_units[13] = {"(m/s^2)^2", "(m/s^2)^2", "(m/s^2)^2", "(m/s^2)^2", "(m/s^2)^2",
                                          "(m/s^2)^2", "(m/s^2)^2", "(m/s^2)^2", "(m/s^2)^2", "",
                                          "",          "",          ""};

static int at_create(const rb_stage_setup *st, void **state, rb_err *err)
{
    const rb_params *p = st->params;
    int rc;
    if ((rc = tq_check_port(st, AT_ACC, 3, "the accelerometer's x y z", false, err)) ||
        (rc = tq_check_port(st, AT_GYRO, 3, "the gyroscope's x y z", false, err)))
        return rc;
    const char *imu = rb_params_string(p, "imu");
    int frame;
    if (imu && st->model && (rc = tq_find_frame(st, "imu", SIZE_MAX, imu, &frame, err)))
        return rc;
    rb_att_config c;
    rb_att_config_init(&c);
    c.acc_noise = rb_params_number(p, "acc_noise");
    c.gyro_noise = rb_params_number(p, "gyro_noise");
    c.lin_acc_rw = rb_params_number(p, "lin_acc_rw");
    c.lin_acc_decay = rb_params_number(p, "lin_acc_decay");
    c.bias_rw = rb_params_number(p, "acc_bias_rw");
    c.gravity_std0 = rb_params_number(p, "gravity_std0");
    c.lin_acc_std0 = rb_params_number(p, "lin_acc_std0");
    c.bias_std0 = rb_params_number(p, "acc_bias_std0");
    c.quat_noise = rb_params_number(p, "quat_noise");
    c.quat_std0 = rb_params_number(p, "quat_std0");
    c.first_order = strcmp(rb_params_string(p, "gravity_step"), "first_order") == 0;
    const rb_param_value *q0 = rb_params_get(p, "initial_orientation");
    if (q0->given) {
        if (q0->count != 4)
            return rb_err_set(err, RB_ECONFIG, "initial_orientation has %zu values: give 4 (w, x, y, z)", q0->count);
        c.have_q0 = true;
        memcpy(c.q0, q0->numbers, 4 * sizeof *c.q0);
    }
    at_stage *s = rb_calloc(1, sizeof *s);
    if (!s)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    if ((rc = rb_att_alloc(&c, &s->est, err))) {
        at_destroy(s);
        return rc;
    }
    rb_port *o = st->out;
    o[AT_QUAT] = (rb_port){4, quat_names, quat_units};
    o[AT_RPY] = (rb_port){3, rpy_names, rpy_units};
    o[AT_GRAVITY] = (rb_port){3, xyz, acc_units};
    o[AT_LIN_ACC] = (rb_port){3, xyz, acc_units};
    o[AT_BIAS] = (rb_port){3, xyz, acc_units};
    o[AT_VAR] = (rb_port){13, var_names, var_units};
    *state = s;
    return RB_OK;
}

static int at_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    at_stage *s = state;
    int rc = rb_att_step(s->est, k, t, in[AT_ACC], in[AT_GYRO], err);
    if (rc)
        return tq_unname_sample(rc, k, err);
    rb_att_out o;
    rb_att_get_out(s->est, &o);
    memcpy(out[AT_QUAT], o.q, sizeof o.q);
    memcpy(out[AT_RPY], o.rpy, sizeof o.rpy);
    memcpy(out[AT_GRAVITY], o.gravity, sizeof o.gravity);
    memcpy(out[AT_LIN_ACC], o.lin_acc, sizeof o.lin_acc);
    memcpy(out[AT_BIAS], o.bias, sizeof o.bias);
    memcpy(out[AT_VAR], o.var, sizeof o.var);
    return RB_OK;
}

static int at_finish(void *state, rb_err *err)
{
    at_stage *s = state;
    rb_att_diag d;
    rb_att_get_diag(s->est, &d);
    for (size_t i = 0; i < s->n_notes; i++)
        rb_free(s->notes[i]);
    s->n_notes = 0;
    s->notes[s->n_notes] = rb_strdup("yaw is not observable from one IMU without a magnetometer: it integrates the "
                                     "gyroscope from its start and drifts (roll and pitch are observed)");
    if (!s->notes[s->n_notes])
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    s->n_notes++;
    if (d.waiting || d.acc_missing || d.gyro_held) {
        s->notes[s->n_notes] = rb_asprintf("%ld sample(s) before the first finite accelerometer sample (outputs NaN), "
                                           "%ld with a non-finite accelerometer element (skipped; %ld of them predict "
                                           "only), %ld with a non-finite gyroscope element (held)",
                                           d.waiting, d.acc_missing, d.no_update, d.gyro_held);
        if (!s->notes[s->n_notes])
            return rb_err_set(err, RB_ENOMEM, "out of memory");
        s->n_notes++;
    }
    return RB_OK;
}

static size_t at_notes(void *state, const char *const **lines)
{
    at_stage *s = state;
    *lines = (const char *const *)s->notes;
    return s->n_notes;
}

static const char *const at_in[] = {"acc", "gyro"};
static const char *const at_out[] = {"quaternion", "rpy", "gravity", "lin_acc", "acc_bias", "var"};

/* a long string constant on purpose: the reference's text */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
static const char at_doc[] =
    "Attitude (roll, pitch and a gyro-integrated yaw) of one IMU from its accelerometer and gyroscope: a Kalman\n"
    "filter on the gravity vector feeding a quaternion EKF, the two feeding each other (seed 003, Hashlamon's thesis\n"
    "sec. 2.6 and its reference [100]; the thesis prints no equation, so the filters are the standard form of\n"
    "PAPERS.md sec. 3.1 \"Attitude (2.6)\"; `roboest/observers.h`, `rb_att_*`, is the reference). No model is\n"
    "needed.\n"
    "\n"
    "Gravity KF, state `[g_b; a_b; b_a]` (gravity in the IMU frame, the IMU's linear acceleration, the\n"
    "accelerometer bias; m/s^2), with the gyroscope `w` and `dt` the clock's step:\n"
    "\n"
    "    g_b,k = exp(-[w]x dt) g_b,k-1,  a_b,k = exp(-lin_acc_decay dt) a_b,k-1,  b_a,k = b_a,k-1\n"
    "    acc   = -g_b + a_b + b_a        (proper acceleration: an IMU at rest reads +9.81 up)\n"
    "\n"
    "The accelerometer sign is the simulator's and the robot logger's (`accelerometers/<imu>`: gravity included,\n"
    "sensor frame). `gravity_step` `\"first_order\"` gives PAPERS.md's `I - [w]x dt`, whose steps lengthen `g_b`\n"
    "(4 % in a minute at 0.6 rad/s; ours: the exact rotation). Process noise: the gyroscope noise turning `g_b`,\n"
    "random walks of `a_b` (`lin_acc_rw`, decaying at `lin_acc_decay`) and `b_a` (`acc_bias_rw`); measurement noise\n"
    "`acc_noise`. Start-up (the thesis): the first finite accelerometer sample is split by a pseudo-inverse weighted "
    "by\n"
    "the initial variances (`gravity_std0`, `lin_acc_std0`, `acc_bias_std0`: equal, each term a third of it; the\n"
    "defaults give gravity nearly all). Roll and pitch come from the gravity estimate, `roll = atan2(-g_y, -g_z)`,\n"
    "`pitch = atan2(g_x, hypot(g_y, g_z))` (R = Rz(yaw) Ry(pitch) Rx(roll), the robot logger's `orientations`).\n"
    "\n"
    "Quaternion EKF, state `q` (w x y z, the IMU's world orientation): `q_k = (I + dt/2 Omega(w)) q_k-1`, corrected\n"
    "by the measured quaternion of the KF's roll and pitch with the yaw of the EKF's prediction (the thesis: yaw\n"
    "\"borrowed from the quaternion estimate of the EKF\", 0 initially), taken in the prediction's hemisphere (q and\n"
    "-q are one rotation), `quat_noise` per element; after every update `q` is normalized and its covariance\n"
    "projected with it (the filters module's EKF projection hook). Output `quaternion` with w >= 0, `rpy` from it.\n"
    "`initial_orientation` sets the starting `q` (its yaw is kept; zero norm refused); otherwise the first gravity\n"
    "estimate's roll and pitch with yaw 0.\n"
    "\n"
    "Observability. Yaw is not observable without a magnetometer: it integrates the gyroscope and drifts (a line\n"
    "in the run's warnings says so every run). Bias and gravity come apart only through rotation: while the IMU\n"
    "does not rotate, a constant reading is split by the prior variances, `acc_bias` stays near its start and the\n"
    "part of a real bias across gravity shows as a tilt of about |b| / g rad (0.01 m/s^2: 0.06 deg). A gyroscope\n"
    "bias is not estimated (the thesis' form has none). Every noise default is ours (the thesis gives none): the\n"
    "simulator's IMU preset for the sensors, the others tuned on walking-like motion.\n"
    "\n"
    "NaN: outputs are NaN until the first sample with a finite accelerometer; later a non-finite accelerometer\n"
    "element is skipped (none finite: both filters only predict) and a non-finite gyroscope element holds its last\n"
    "value; the counts are added to the run's warnings. Errors: configuration (exit 3): an input not 3 wide, `imu`\n"
    "not a frame of the pipeline's model (with a suggestion; without a model `imu` only documents), a zero-norm or\n"
    "non-finite `initial_orientation`; input (exit 3): a clock that does not advance; numeric (exit 4): a\n"
    "filter's covariance losing positive definiteness.\n";
#pragma GCC diagnostic pop

static const char *const at_in_docs[] = {
    "3 values, m/s^2: the accelerometer (proper acceleration, IMU frame; e.g. `accelerometers/<imu>`)",
    "3 values, rad/s: the gyroscope (IMU frame; e.g. `gyros/<imu>`)",
};
static const char *const at_out_docs[] = {
    "4 values (`w` `x` `y` `z`): the IMU's world orientation, unit quaternion with w >= 0",
    "3 values (`roll` `pitch` `yaw`), rad: its angles, R = Rz(yaw) Ry(pitch) Rx(roll) (as `orientations/<imu>`); yaw "
    "from the gyroscope only",
    "3 values, m/s^2: the gravity estimate in the IMU frame (about [0 0 -9.81] when level)",
    "3 values, m/s^2: the IMU's linear acceleration estimate, IMU axes",
    "3 values, m/s^2: the accelerometer bias estimate (meaningful only after rotation)",
    "13 values (`gravity/x` ... `acc_bias/z`, `quaternion/w` ... `quaternion/z`): the filters' variances",
};

static const char *const step_choices[] = {"exact", "first_order", NULL};

#define NONNEG .has_min = true, .min = 0
#define POSITIVE .has_min = true, .min_exclusive = true, .min = 0

static const rb_param_spec at_params[] = {
    {.name = "imu",
     .kind = RB_PARAM_STRING,
     .doc = "the IMU's frame (or IMU sensor) name: checked against the pipeline's model when there is one, else "
            "documentation"},
    {.name = "initial_orientation",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .doc = "[w, x, y, z] (4 values): the EKF's starting orientation (normalized; zero norm refused); absent: the "
            "first gravity "
            "estimate's roll and pitch, yaw 0"},
    {.name = "acc_noise",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.02,
     POSITIVE,
     .doc = "m/s^2: the accelerometer's white-noise std per sample",
     .details = "default ours: the simulator's IMU preset"},
    {.name = "gyro_noise",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.005,
     NONNEG,
     .doc = "rad/s: the gyroscope's white-noise std per sample (the process noise of both filters)",
     .details = "default ours: the simulator's IMU preset"},
    {.name = "lin_acc_rw",
     .kind = RB_PARAM_NUMBER,
     .def_number = 3,
     NONNEG,
     .doc = "m/s^2 per sqrt(s): the random walk of the linear acceleration a_b",
     .details = "default ours (tuned on walking-like motion)"},
    {.name = "lin_acc_decay",
     .kind = RB_PARAM_NUMBER,
     .def_number = 5,
     NONNEG,
     .doc = "1/s: a_b decays as exp(-lin_acc_decay dt) per step; 0: a pure random walk",
     .details = "default ours: without a decay the linear acceleration absorbs gravity's slow errors and |g_b| drifts"},
    {.name = "acc_bias_rw",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1e-3,
     NONNEG,
     .doc = "m/s^2 per sqrt(s): the random walk of the accelerometer bias",
     .details = "default ours: the simulator's IMU preset"},
    {.name = "gravity_std0",
     .kind = RB_PARAM_NUMBER,
     .def_number = 10,
     POSITIVE,
     .doc = "m/s^2: initial std of g_b (and its weight in the start-up split)",
     .details = "default ours"},
    {.name = "lin_acc_std0",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1,
     POSITIVE,
     .doc = "m/s^2: initial std of a_b (and its weight in the start-up split)",
     .details = "default ours"},
    {.name = "acc_bias_std0",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.1,
     POSITIVE,
     .doc = "m/s^2: initial std of b_a (and its weight in the start-up split)",
     .details = "default ours"},
    {.name = "quat_noise",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.003,
     POSITIVE,
     .doc = "std of each element of the measured quaternion (about half the tilt error in rad)",
     .details = "default ours (tuned on walking-like motion)"},
    {.name = "quat_std0",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.1,
     POSITIVE,
     .doc = "initial std of each element of q",
     .details = "default ours"},
    {.name = "gravity_step",
     .kind = RB_PARAM_STRING,
     .def_string = "exact",
     .choices = step_choices,
     .doc = "the gravity KF's transition: \"exact\" (exp(-[w]x dt), ours) or \"first_order\" (I - [w]x dt, as "
            "PAPERS.md prints it)"},
};

const rb_stage_type rb_stage_attitude = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "attitude",
    .summary = "roll, pitch (and a gyro-integrated yaw) of one IMU: a gravity-vector KF feeding a quaternion EKF "
               "(seed 003 sec. 2.6)",
    .doc = at_doc,
    .inputs = at_in,
    .input_docs = at_in_docs,
    .n_inputs = AT_N_IN,
    .outputs = at_out,
    .output_docs = at_out_docs,
    .n_outputs = AT_N_OUT,
    .params = at_params,
    .n_params = sizeof at_params / sizeof at_params[0],
    .create = at_create,
    .step = at_step,
    .finish = at_finish,
    .destroy = at_destroy,
    .notes = at_notes,
};
