/* lowpass: first-order low-pass per element (see roboest/estimators.h for the discretization). */
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
static const rb_param_spec lowpass_params[] = {
    {.name = "cutoff_hz",
     .kind = RB_PARAM_NUMBER,
     .required = true,
     .has_min = true,
     .min_exclusive = true,
     .min = 0.0,
     .doc = "cutoff frequency f_c, Hz (time constant 1 / (2 pi f_c))"},
};

const rb_stage_type rb_stage_lowpass = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "lowpass",
    .summary = "first-order low-pass per element, y_k = y_{k-1} + (1 - exp(-2 pi f_c dt)) (x_k - y_{k-1})",
    .inputs = lowpass_in,
    .n_inputs = 1,
    .outputs = lowpass_out,
    .n_outputs = 1,
    .params = lowpass_params,
    .n_params = 1,
    .create = lowpass_create,
    .step = lowpass_step,
    .finish = NULL,
    .destroy = lowpass_destroy,
};
