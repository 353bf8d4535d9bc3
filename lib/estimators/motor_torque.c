/* motor_torque: tau_m = k_t R I_m per joint (see mt_doc below). */
#include <math.h>

#include "roboest/estimators.h"

typedef struct motor_torque {
    size_t n;
    const char **units; /* n, each the static "N m" */
    double gain[];      /* n: k_t R */
} motor_torque;

static void mt_destroy(void *state)
{
    motor_torque *s = state;
    if (s)
        rb_free(s->units);
    rb_free(s);
}

/* A 1-or-n array parameter has 1 or n values. */
static int check_count(const rb_stage_setup *setup, const char *name, size_t n, rb_err *err)
{
    const rb_param_value *v = rb_params_get(setup->params, name);
    if (v->count == 1 || v->count == n)
        return RB_OK;
    return rb_err_set(err, RB_ECONFIG, "stage %s: %s has %zu values for %zu elements (give 1 or %zu)", setup->id, name,
                      v->count, n, n);
}

static double per_element(const rb_param_value *v, size_t i) { return v->numbers[v->count == 1 ? 0 : i]; }

static int mt_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    size_t n = setup->in[0].width, bytes;
    int rc = check_count(setup, "k_t", n, err);
    if (rc || (rc = check_count(setup, "R", n, err)))
        return rc;
    const rb_param_value *kt = rb_params_get(setup->params, "k_t"), *R = rb_params_get(setup->params, "R");
    for (size_t i = 0; i < R->count; i++)
        if (R->numbers[i] == 0)
            return rb_err_set(err, RB_ECONFIG, "stage %s: R[%zu] is 0 (the gear ratio is signed and non-zero)",
                              setup->id, i);
    if (!rb_size_mul(n, sizeof(double), &bytes) || bytes > SIZE_MAX - sizeof(motor_torque))
        return rb_err_set(err, RB_ENOMEM, "stage %s: too many elements", setup->id);
    motor_torque *s = rb_calloc(1, sizeof *s + bytes);
    if (!s || !(s->units = rb_calloc(n ? n : 1, sizeof *s->units))) {
        mt_destroy(s);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    s->n = n;
    for (size_t i = 0; i < n; i++) {
        s->gain[i] = per_element(kt, i) * per_element(R, i);
        s->units[i] = "N m";
    }
    setup->out[0] = (rb_port){n, setup->in[0].names, s->units};
    *state = s;
    return RB_OK;
}

static int mt_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)k, (void)t, (void)err;
    const motor_torque *s = state;
    for (size_t i = 0; i < s->n; i++)
        out[0][i] = s->gain[i] * in[0][i];
    return RB_OK;
}

static const char *const mt_in[] = {"current"};
static const char *const mt_out[] = {"tau_m"};
static const char mt_doc[] =
    "The motor torque reaching the joint side of the gear (joint-torque paper eq. 2, the rotor's inertia\n"
    "neglected):\n"
    "\n"
    "    tau_m_i = k_t_i R_i I_m_i\n"
    "\n"
    "with the motor torque constant `k_t` (N m/A) and the SIGNED gear ratio `R` (rotor angle = R joint\n"
    "angle, e.g. -160 on ergoCub joints whose motor turns the other way: the sign turns the rotor's\n"
    "torque into the joint's direction). NaN passes through. A `k_t` or `R` of neither 1 nor n values,\n"
    "or an `R` of 0, is a configuration error (RB_ECONFIG).\n";
static const char *const mt_in_docs[] = {
    "n values, A: the motor currents `I_m`, one per joint", /* current */
};
static const char *const mt_out_docs[] = {
    "n values, N m, the input's element names: the motor torque at the joint side of the gear", /* tau_m */
};
static const rb_param_spec mt_params[] = {
    {.name = "k_t",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .required = true,
     .min_count = 1,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "motor torque constant, N m/A: one value for every joint or one per joint"},
    {.name = "R",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .required = true,
     .min_count = 1,
     .doc = "gear ratio, signed and non-zero (rotor angle = R joint angle): one value or one per joint",
     .details = "dimensionless, e.g. -160"},
};

const rb_stage_type rb_stage_motor_torque = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "motor_torque",
    .summary = "motor torque at the joint from the motor current, tau_m = k_t R I_m per joint",
    .doc = mt_doc,
    .inputs = mt_in,
    .input_docs = mt_in_docs,
    .n_inputs = 1,
    .outputs = mt_out,
    .output_docs = mt_out_docs,
    .n_outputs = 1,
    .params = mt_params,
    .n_params = sizeof mt_params / sizeof mt_params[0],
    .create = mt_create,
    .step = mt_step,
    .finish = NULL,
    .destroy = mt_destroy,
};
