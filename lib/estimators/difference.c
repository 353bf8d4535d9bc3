/* difference: y = a - b - offset per element (see difference_doc below), e.g. motor torque minus a friction
 * estimate, or FT readings minus their calibrated offsets. */
#include "roboest/estimators.h"

typedef struct difference {
    size_t n;
    bool has_b;
    double offset[]; /* n */
} difference;

static int difference_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    size_t n = setup->in[0].width, bytes;
    bool has_b = setup->in[1].width > 0;
    if (has_b && setup->in[1].width != n)
        return rb_err_set(err, RB_ECONFIG, "inputs a and b must have the same width, got %zu and %zu", n,
                          setup->in[1].width);
    const rb_param_value *off = rb_params_get(setup->params, "offset");
    if (off->count != 1 && off->count != n)
        return rb_err_set(err, RB_ECONFIG, "offset has %zu values for %zu elements (give 1 or %zu)", off->count, n, n);
    if (!rb_size_mul(n, sizeof(double), &bytes) || bytes > SIZE_MAX - sizeof(difference))
        return rb_err_set(err, RB_ENOMEM, "too many elements");
    difference *d = rb_calloc(1, sizeof *d + bytes);
    if (!d)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    d->n = n;
    d->has_b = has_b;
    for (size_t i = 0; i < n; i++)
        d->offset[i] = off->numbers[off->count == 1 ? 0 : i];
    setup->out[0] = setup->in[0]; /* a's element names and units */
    *state = d;
    return RB_OK;
}

static int difference_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)k;
    (void)t;
    (void)err;
    const difference *d = state;
    const double *a = in[0], *b = in[1];
    double *y = out[0];
    for (size_t i = 0; i < d->n; i++)
        y[i] = a[i] - (d->has_b ? b[i] : 0.0) - d->offset[i];
    return RB_OK;
}

static void difference_destroy(void *state) { rb_free(state); }

static const char *const difference_in[] = {"a", "b"};
static const char *const difference_out[] = {"y"};
static const char difference_doc[] =
    "Element-wise difference:\n"
    "\n"
    "    y_i = a_i - b_i - offset_i        (b unwired: y_i = a_i - offset_i)\n"
    "\n"
    "For the joint-torque paper's \"current-based minus friction\" estimate (`a` = `motor_torque`'s\n"
    "`tau_m`, `b` = a friction stage's `tau_F`) and for FT readings minus calibrated offsets (`b`\n"
    "unwired). NaN propagates. A wired `b` of another width, or an `offset` of neither 1 nor n values,\n"
    "is a configuration error (RB_ECONFIG) when the stage is set up.\n";
static const char *const difference_in_docs[] = {
    "n values, any unit: the signal subtracted from (its element names and units are the output's)", /* a */
    "n values, a's units: the signal subtracted; unwired: none",                                     /* b */
};
static const char *const difference_out_docs[] = {
    "n values, a's element names and units: `a - b - offset`", /* y */
};
static const rb_param_spec difference_params[] = {
    {.name = "offset",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .min_count = 1,
     .def_numbers = (const double[]){0.0},
     .def_count = 1,
     .doc = "constant subtracted as well, in a's units: one value for every element or one per element"},
};

const rb_stage_type rb_stage_difference = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "difference",
    .summary = "element-wise y = a - b - offset (b optional; names and units of a)",
    .doc = difference_doc,
    .inputs = difference_in,
    .input_docs = difference_in_docs,
    .n_inputs = 2,
    .optional_inputs = 1u << 1,
    .outputs = difference_out,
    .output_docs = difference_out_docs,
    .n_outputs = 1,
    .params = difference_params,
    .n_params = 1,
    .create = difference_create,
    .step = difference_step,
    .finish = NULL,
    .destroy = difference_destroy,
};
