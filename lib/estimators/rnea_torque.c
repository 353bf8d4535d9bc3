/* rnea_torque: the joint-torque paper's RNEA baseline (seed 000): joint torques from the FT sensors and the joint
 * kinematics, unknown contact wrenches estimated per sub-model, with the start-up FT offset calibration. The
 * dynamics core's FT-based estimator does the work (roboest/dynamics.h, rb_ft_est_*); see rnea_doc below. */
#include <math.h>
#include <string.h>

#include "roboest/estimators.h"
#include "torque_calib.h"
#include "torque_common.h"

enum { IN_Q, IN_DQ, IN_DDQ, IN_FT, IN_ACC, IN_GYRO };
enum { OUT_TAU, OUT_CONTACTS, OUT_FT_OFFSET };

typedef struct rnea_stage {
    const rb_model *model;
    rb_submodels *sm;
    rb_ft_est *est;     /* the stage's contacts */
    rb_ft_est *est_off; /* the offset's prediction: fixed base, one wrench at the base link; else the contacts */
    size_t n, n_ft, nc;
    bool have_imu;
    tq_ftoff off;        /* the start-up offset (torque_calib.h) */
    double *ft, *pred;   /* 6 n_ft each */
    const char *note[1]; /* the offset's note, or none */
    tq_strings tau_units, c_names, c_units, ft_names, ft_units;
} rnea_stage;

static void rnea_destroy(void *state)
{
    rnea_stage *s = state;
    if (!s)
        return;
    rb_ft_est_free(s->est);
    rb_ft_est_free(s->est_off);
    rb_submodels_free(s->sm);
    tq_ftoff_free(&s->off);
    rb_free(s->ft);
    tq_strings_free(&s->tau_units);
    tq_strings_free(&s->c_names);
    tq_strings_free(&s->c_units);
    tq_strings_free(&s->ft_names);
    tq_strings_free(&s->ft_units);
    rb_free(s);
}

/* Checks that need no allocation: names, the IMU ports, the input widths. */
static int check_setup(const rb_stage_setup *setup, rb_err *err)
{
    int rc = tq_need_model(setup, err);
    if (rc)
        return rc;
    const rb_model *m = setup->model;
    const rb_params *p = setup->params;
    const rb_param_value *fts = rb_params_get(p, "ft_sensors");
    const char *imu = rb_params_string(p, "imu_frame");
    size_t n = m->n_dofs;
    int f;
    if ((rc = tq_check_names(setup, "ft_sensors", true, err)) || (rc = tq_check_names(setup, "contacts", false, err)))
        return rc;
    if (imu && (rc = tq_find_frame(setup, "imu_frame", SIZE_MAX, imu, &f, err)))
        return rc;
    bool acc = setup->in[IN_ACC].width > 0, gyro = setup->in[IN_GYRO].width > 0;
    if (acc != gyro)
        return rb_err_set(err, RB_ECONFIG, "wire both acc and gyro (the IMU at %s) or neither",
                          imu ? imu : "the base link");
    if (!acc && m->floating)
        return rb_err_set(err, RB_ECONFIG, "a floating base needs the IMU inputs acc and gyro");
    if (!acc && imu)
        return rb_err_set(err, RB_ECONFIG, "imu_frame %s is given but acc and gyro are not wired", imu);
    if ((rc = tq_check_port(setup, IN_Q, n, "one per model joint", true, err)) ||
        (rc = tq_check_port(setup, IN_DQ, n, "one per model joint", true, err)) ||
        (rc = tq_check_port(setup, IN_DDQ, n, "one per model joint", true, err)) ||
        (rc = tq_check_port(setup, IN_FT, 6 * fts->count, "6 per sensor of ft_sensors", false, err)) ||
        (acc && (rc = tq_check_port(setup, IN_ACC, 3, "the IMU's accelerometer", false, err))) ||
        (acc && (rc = tq_check_port(setup, IN_GYRO, 3, "the IMU's gyroscope", false, err))))
        return rc;
    return RB_OK;
}

static int make_strings(rnea_stage *s, const rb_stage_setup *setup, const char *const *contacts, rb_err *err)
{
    const rb_param_value *fts = rb_params_get(setup->params, "ft_sensors");
    int rc = tq_strings_alloc(&s->tau_units, s->n, err);
    rc = rc ? rc : tq_strings_alloc(&s->c_names, 6 * s->nc, err);
    rc = rc ? rc : tq_strings_alloc(&s->c_units, 6 * s->nc, err);
    rc = rc ? rc : tq_strings_alloc(&s->ft_names, 6 * s->n_ft, err);
    rc = rc ? rc : tq_strings_alloc(&s->ft_units, 6 * s->n_ft, err);
    for (size_t i = 0; !rc && i < s->n; i++)
        rc = tq_strings_set(&s->tau_units, i, err, "%s",
                            s->model->bodies[s->model->dof_body[i]].type == RB_JOINT_PRISMATIC ? "N" : "N m");
    for (size_t i = 0; !rc && i < 6 * s->nc; i++) {
        rc = tq_strings_set(&s->c_names, i, err, "%s/%s", contacts[i / 6], tq_wrench_axes[i % 6]);
        rc = rc ? rc : tq_strings_set(&s->c_units, i, err, "%s", tq_wrench_units[i % 6]);
    }
    for (size_t i = 0; !rc && i < 6 * s->n_ft; i++) {
        rc = tq_strings_set(&s->ft_names, i, err, "%s/%s", fts->strings[i / 6], tq_wrench_axes[i % 6]);
        rc = rc ? rc : tq_strings_set(&s->ft_units, i, err, "%s", tq_wrench_units[i % 6]);
    }
    return rc;
}

static int rnea_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    int rc = check_setup(setup, err);
    if (rc)
        return rc;
    const rb_model *m = setup->model;
    const rb_params *p = setup->params;
    const rb_param_value *fts = rb_params_get(p, "ft_sensors"), *cv = rb_params_get(p, "contacts");
    const char *imu = rb_params_string(p, "imu_frame");
    /* a fixed base bears an unknown mounting wrench at the base link: the default contact */
    const char *base_only[1] = {m->bodies[0].name};
    const char *const *contacts = (const char *const *)cv->strings;
    size_t nc = cv->count;
    if (nc == 0 && !m->floating)
        contacts = base_only, nc = 1;

    rnea_stage *s = rb_calloc(1, sizeof *s);
    if (!s)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    s->model = m, s->n = m->n_dofs, s->n_ft = fts->count, s->nc = nc;
    s->have_imu = setup->in[IN_ACC].width > 0;
    if ((rc = tq_ftoff_init(&s->off, p, 6 * s->n_ft, err))) {
        rnea_destroy(s);
        return rc;
    }
    s->ft = rb_calloc(12 * s->n_ft + 1, sizeof *s->ft);
    if (!s->ft) {
        rnea_destroy(s);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    s->pred = s->ft + 6 * s->n_ft;
    rc = rb_submodels_build(m, (const char *const *)fts->strings, fts->count, &s->sm, err);
    if (!rc)
        rc = rb_ft_est_alloc(m, s->sm, imu, contacts, nc, &s->est, err);
    if (!rc && s->off.mode != TQ_OFF_NONE)
        rc = rb_ft_est_alloc(m, s->sm, imu, m->floating ? contacts : base_only, m->floating ? nc : 1, &s->est_off, err);
    if (!rc)
        rc = make_strings(s, setup, contacts, err);
    if (rc) {
        rnea_destroy(s);
        return rc;
    }
    setup->out[OUT_TAU] = (rb_port){s->n, (const char *const *)m->dof_names, (const char *const *)s->tau_units.s};
    setup->out[OUT_CONTACTS] = (rb_port){6 * nc, (const char *const *)s->c_names.s, (const char *const *)s->c_units.s};
    setup->out[OUT_FT_OFFSET] =
        (rb_port){6 * s->n_ft, (const char *const *)s->ft_names.s, (const char *const *)s->ft_units.s};
    *state = s;
    return RB_OK;
}

static void fill_nan(double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = NAN;
}

static int rnea_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)k;
    rnea_stage *s = state;
    const rb_model *m = s->model;
    size_t n = s->n, nft6 = 6 * s->n_ft;
    rb_ft_est_input ei;
    memset(&ei, 0, sizeof ei);
    ei.s = in[IN_Q], ei.s_dot = in[IN_DQ], ei.s_ddot = in[IN_DDQ], ei.n = n;
    ei.ft = s->ft, ei.n_ft_values = nft6;
    if (s->have_imu) {
        memcpy(ei.acc, in[IN_ACC], sizeof ei.acc);
        memcpy(ei.gyro, in[IN_GYRO], sizeof ei.gyro);
    } else {
        tq_fixed_base_acc(m, ei.acc);
    }
    memcpy(out[OUT_FT_OFFSET], s->off.est.offset, nft6 * sizeof(double));
    /* a sample with a non-finite input has no estimate (the offset waits for the first complete sample) */
    if (!tq_finite(in[IN_Q], n) || !tq_finite(in[IN_DQ], n) || !tq_finite(in[IN_DDQ], n) ||
        !tq_finite(in[IN_FT], nft6) || !tq_finite(ei.acc, 3) || !tq_finite(ei.gyro, 3)) {
        fill_nan(out[OUT_TAU], n);
        fill_nan(out[OUT_CONTACTS], 6 * s->nc);
        if (s->off.mode != TQ_OFF_NONE && !s->off.est.started)
            fill_nan(out[OUT_FT_OFFSET], nft6);
        return RB_OK;
    }
    int rc;
    if (tq_ftoff_collecting(&s->off)) { /* o = f_measured - f_predicted, over the still window */
        if ((rc = rb_ft_est_predict_ft(m, s->est_off, &ei, NULL, s->pred, nft6, NULL, 0, err)) < 0)
            return rb_err_prefix(err, rc, "FT offset: ");
        tq_ftoff_add(&s->off, t, in[IN_DQ], n, in[IN_FT], s->pred);
        memcpy(out[OUT_FT_OFFSET], s->off.est.offset, nft6 * sizeof(double));
    }
    for (size_t i = 0; i < nft6; i++)
        s->ft[i] = in[IN_FT][i] - s->off.est.offset[i];
    return rb_ft_est_torques(m, s->est, &ei, out[OUT_TAU], n, out[OUT_CONTACTS], 6 * s->nc, err);
}

static int rnea_finish(void *state, rb_err *err)
{
    (void)err;
    tq_ftoff_finish(&((rnea_stage *)state)->off);
    return RB_OK;
}

static size_t rnea_notes(void *state, const char *const **lines)
{
    rnea_stage *s = state;
    s->note[0] = s->off.note;
    *lines = s->note;
    return s->off.note[0] ? 1 : 0;
}

static const char *const rnea_in[] = {"q", "dq", "ddq", "ft", "acc", "gyro"};
static const char *const rnea_out[] = {"tau", "contacts", "ft_offset"};
static const char rnea_doc[] =
    "The joint-torque paper's RNEA baseline (seed 000): joint torques from the FT sensors and the joint\n"
    "motion, by the dynamics core's FT-based estimator (`roboest/dynamics.h`, `rb_ft_est_*`). The tree is\n"
    "cut at the FT sensors; for each sub-model the unknown contact wrenches close its Newton-Euler\n"
    "equations (one contact: exact; several: the minimum-norm split; none: left over as a residual), then\n"
    "the RNEA inside each sub-model with the measured FT wrenches and the estimated contacts gives the\n"
    "torques.\n"
    "\n"
    "The IMU inputs `acc` and `gyro` are optional together: wire both or neither. A floating base needs\n"
    "them; a fixed base without them is taken as still: `acc = -g` in the base (= world) frame, `gyro` 0.\n"
    "\n"
    "Start-up FT offset (`ft_offset` `\"first_sample\"`): at the first sample whose inputs are all finite,\n"
    "the readings the model predicts for the measured motion with the robot balanced on its contacts (a\n"
    "fixed base: one wrench at the base link) are `f_pred`, and `o = f_measured - f_pred` is subtracted\n"
    "from every reading (the robot should be still then). A sample with a non-finite input gives NaN\n"
    "outputs.\n"
    "\n" TQ_FTOFF_MD "\n"
    "This stage and `ukf_torque` need the pipeline's `model` key (`rb_stage_setup.model`): every joint\n"
    "vector (n = the model's joints) follows `model.joints`, and joint-vector inputs whose element names\n"
    "are model joints must be bound in that order. Configuration errors (RB_ECONFIG) name the parameter\n"
    "and item, with the closest model name for a misspelt FT sensor or frame\n"
    "(`ft_sensors[1]: no FT sensor 'wrist_tf_sensor' in model arm_2ft (did you mean 'wrist_ft_sensor'?)`),\n"
    "an input whose width does not fit the parameters\n"
    "(`input ft has 6 elements, expected 12 (6 per sensor of ft_sensors)`) or a per-element array of the\n"
    "wrong length.\n";
static const char *const rnea_in_docs[] = {
    "n values, rad: the joint positions",                                                              /* q */
    "n values, rad/s: the joint velocities",                                                           /* dq */
    "n values, rad/s^2: the joint accelerations (e.g. `kf_derivative`'s `x_ddot`)",                    /* ddq */
    "6 per sensor of `ft_sensors`, in that order, each as the sensor reports it (N, N m)",             /* ft */
    "3 values, m/s^2: the proper acceleration of the IMU at `imu_frame` (what it reads); with `gyro`", /* acc */
    "3 values, rad/s: the angular velocity of the IMU at `imu_frame`; with `acc`",                     /* gyro */
};
static const char *const rnea_out_docs[] = {
    "n values, N m (N for a prismatic joint): the joint torques", /* tau */
    "6 per contact of `contacts`: the wrench the environment exerts on the robot at the contact "
    "frame, BODY (the frame's axes, the moment about its origin)", /* contacts */
    "6 per FT sensor, as its readings: the offset `o` subtracted from them, constant after the "
    "calibration", /* ft_offset */
};
static const rb_param_spec rnea_params[] = {
    {.name = "ft_sensors",
     .kind = RB_PARAM_STRING_ARRAY,
     .required = true,
     .min_count = 1,
     .doc = "the model's six-axis FT sensors cut at, in the order of the ft input (6 values each)"},
    {.name = "contacts",
     .kind = RB_PARAM_STRING_ARRAY,
     .doc = "frames where unknown contact wrenches act (BODY: frame axes, about its origin); default: the base link "
            "for a fixed base, none for a floating base",
     .details = "a fixed base with contacts of its own should list the base link too: it bears the mounting wrench"},
    {.name = "imu_frame",
     .kind = RB_PARAM_STRING,
     .doc = "frame of the IMU whose acc (m/s^2, proper) and gyro (rad/s) are wired; default the base link"},
    {.name = "ft_offset",
     .kind = RB_PARAM_STRING,
     .def_string = "first_sample",
     .choices = tq_offset_choices,
     .doc = TQ_FTOFF_DOC,
     .details = "`\"first_sample\"` assumes the robot still at that sample, `\"still_window\"` over the window"},
    TQ_FTOFF_SPECS,
};

const rb_stage_type rb_stage_rnea_torque = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "rnea_torque",
    .summary = "joint torques from FT sensors and kinematics by the RNEA in each sub-model cut at the FT sensors, "
               "unknown contact wrenches estimated (joint-torque paper's RNEA baseline)",
    .doc = rnea_doc,
    .inputs = rnea_in,
    .input_docs = rnea_in_docs,
    .n_inputs = 6,
    .optional_inputs = (1u << IN_ACC) | (1u << IN_GYRO),
    .outputs = rnea_out,
    .output_docs = rnea_out_docs,
    .n_outputs = 3,
    .params = rnea_params,
    .n_params = sizeof rnea_params / sizeof rnea_params[0],
    .create = rnea_create,
    .step = rnea_step,
    .finish = rnea_finish,
    .destroy = rnea_destroy,
    .notes = rnea_notes,
};
