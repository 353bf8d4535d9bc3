/* lowpass: first-order low-pass per element (see lowpass_doc below for the discretization). */
#include <math.h>

#include "roboest/estimators.h"

typedef struct lowpass {
    size_t n;
    double a; /* 1 - exp(-2 pi f_c dt) */
    bool started;
    double y[]; /* n: the previous output */
} lowpass;

static int lowpass_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    double fc = rb_params_number(setup->params, "cutoff_hz");
    if (!(setup->dt > 0) || !isfinite(setup->dt))
        return rb_err_set(err, RB_ECONFIG, "stage %s: lowpass needs a positive sample period, got %g s", setup->id,
                          setup->dt);
    size_t n = setup->in[0].width, bytes;
    if (!rb_size_mul(n, sizeof(double), &bytes) || bytes > SIZE_MAX - sizeof(lowpass))
        return rb_err_set(err, RB_ENOMEM, "stage %s: too many elements", setup->id);
    lowpass *lp = rb_calloc(1, sizeof *lp + bytes);
    if (!lp)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    lp->n = n;
    lp->a = -expm1(-2.0 * M_PI * fc * setup->dt); /* expm1 keeps a accurate when f_c dt is tiny */
    setup->out[0] = setup->in[0];
    *state = lp;
    return RB_OK;
}

static int lowpass_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)k;
    (void)t;
    (void)err;
    lowpass *lp = state;
    const double *x = in[0];
    double *y = lp->y, *o = out[0], a = lp->a;
    if (!lp->started) {
        for (size_t i = 0; i < lp->n; i++)
            o[i] = y[i] = x[i];
        lp->started = true;
        return RB_OK;
    }
    for (size_t i = 0; i < lp->n; i++)
        o[i] = y[i] += a * (x[i] - y[i]);
    return RB_OK;
}

static void lowpass_destroy(void *state) { rb_free(state); }

static const char *const lowpass_in[] = {"x"};
static const char *const lowpass_out[] = {"y"};
static const char lowpass_doc[] =
    "First-order low-pass per element: the exact discretization (zero-order hold on the input) of\n"
    "`tau y' = x - y` with `tau = 1 / (2 pi cutoff_hz)`:\n"
    "\n"
    "    a   = 1 - exp(-2 pi cutoff_hz dt)        dt: the clock period (mean interval for a channel clock)\n"
    "    y_0 = x_0,   y_k = y_{k-1} + a (x_k - y_{k-1})\n"
    "\n"
    "So a unit step from 0 at k = 0 (`y_0 = 0`) gives `y_k = 1 - (1 - a)^k = 1 - exp(-t_k / tau)` on a\n"
    "uniform clock: at the sample times, a step's response is the continuous one. A NaN sample makes the\n"
    "element NaN from then on (the state keeps it). A clock without a positive period is a configuration\n"
    "error (RB_ECONFIG).\n";
static const char *const lowpass_in_docs[] = {
    "n values, any unit: the signal", /* x */
};
static const char *const lowpass_out_docs[] = {
    "n values, the input's element names and units: the low-passed signal", /* y */
};
static const rb_param_spec lowpass_params[] = {
    {.name = "cutoff_hz",
     .kind = RB_PARAM_NUMBER,
     .required = true,
     .has_min = true,
     .min_exclusive = true,
     .min = 0.0,
     .doc = "cutoff frequency f_c, Hz (time constant 1 / (2 pi f_c))"},
};

/* 5 time constants tau = 1 / (2 pi f_c): the lag the filter starts without (y_0 = x_0) builds up over them. */
static double lowpass_settle(const rb_params *p, double dt)
{
    (void)dt;
    return RB_SETTLE_TIME_CONSTANTS / (2.0 * M_PI * rb_params_number(p, "cutoff_hz"));
}

const rb_stage_type rb_stage_lowpass = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "lowpass",
    .summary = "first-order low-pass per element, y_k = y_{k-1} + (1 - exp(-2 pi f_c dt)) (x_k - y_{k-1})",
    .doc = lowpass_doc,
    .inputs = lowpass_in,
    .input_docs = lowpass_in_docs,
    .n_inputs = 1,
    .outputs = lowpass_out,
    .output_docs = lowpass_out_docs,
    .n_outputs = 1,
    .params = lowpass_params,
    .n_params = 1,
    .create = lowpass_create,
    .step = lowpass_step,
    .finish = NULL,
    .destroy = lowpass_destroy,
    .settle = lowpass_settle,
    .settle_doc =
        "5 time constants, `5 / (2 pi cutoff_hz)` (the output starts at the first sample and its lag behind a "
        "moving input builds up over them): 0.08 s at 10 Hz",
};
