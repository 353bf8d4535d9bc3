/* finite_difference: backward differences on the clock times (see fdiff_doc below). */
#include <string.h>

#include "roboest/estimators.h"

typedef struct fdiff {
    size_t n;
    int order;       /* 1 or 2 */
    size_t seen;     /* samples stepped so far, saturating at `order` */
    double t1, t2;   /* times of the previous two samples */
    char **units;    /* n output units, owned */
    double *x1, *x2; /* previous two inputs, n each (inside `buf`) */
    double buf[];
} fdiff;

static void fdiff_destroy(void *state)
{
    fdiff *fd = state;
    if (!fd)
        return;
    for (size_t i = 0; fd->units && i < fd->n; i++)
        rb_free(fd->units[i]);
    rb_free(fd->units);
    rb_free(fd);
}

static int make_units(fdiff *fd, const rb_port *in)
{
    fd->units = rb_calloc(fd->n ? fd->n : 1, sizeof *fd->units);
    if (!fd->units)
        return RB_ENOMEM;
    const char *per = fd->order == 1 ? "/s" : "/s^2";
    for (size_t i = 0; i < fd->n; i++) {
        const char *u = in->units ? in->units[i] : "";
        fd->units[i] = u[0] ? rb_asprintf("%s%s", u, per) : rb_strdup("");
        if (!fd->units[i])
            return RB_ENOMEM;
    }
    return RB_OK;
}

static int fdiff_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    size_t n = setup->in[0].width, bytes;
    if (!rb_size_mul(n, 2 * sizeof(double), &bytes) || bytes > SIZE_MAX - sizeof(fdiff))
        return rb_err_set(err, RB_ENOMEM, "stage %s: too many elements", setup->id);
    fdiff *fd = rb_calloc(1, sizeof *fd + bytes);
    if (!fd)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    fd->n = n;
    fd->order = (int)rb_params_integer(setup->params, "order");
    fd->x1 = fd->buf;
    fd->x2 = fd->buf + n;
    if (make_units(fd, &setup->in[0]) != RB_OK) {
        fdiff_destroy(fd);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    setup->out[0].width = n;
    setup->out[0].names = setup->in[0].names;
    setup->out[0].units = (const char *const *)fd->units;
    *state = fd;
    return RB_OK;
}

static int fdiff_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)k;
    (void)err;
    fdiff *fd = state;
    const double *x = in[0];
    double *dx = out[0], *x1 = fd->x1, *x2 = fd->x2;
    size_t n = fd->n;
    if (fd->seen < (size_t)fd->order) {
        memset(dx, 0, n * sizeof *dx);
    } else if (fd->order == 1) {
        double inv_h = 1.0 / (t - fd->t1);
        for (size_t i = 0; i < n; i++)
            dx[i] = (x[i] - x1[i]) * inv_h;
    } else {
        double h1 = t - fd->t1, h2 = fd->t1 - fd->t2, c = 2.0 / (h1 + h2);
        for (size_t i = 0; i < n; i++)
            dx[i] = c * ((x[i] - x1[i]) / h1 - (x1[i] - x2[i]) / h2);
    }
    if (fd->order == 2)
        memcpy(x2, x1, n * sizeof *x2);
    memcpy(x1, x, n * sizeof *x1);
    fd->t2 = fd->t1;
    fd->t1 = t;
    if (fd->seen < (size_t)fd->order)
        fd->seen++;
    return RB_OK;
}

static const char *const fdiff_in[] = {"x"};
static const char *const fdiff_out[] = {"dx"};
static const char fdiff_doc[] =
    "Backward difference per element on the clock's actual times (a channel clock may be irregular):\n"
    "\n"
    "    order 1:  dx_k = (x_k - x_{k-1}) / (t_k - t_{k-1})\n"
    "    order 2:  dx_k = 2 [(x_k - x_{k-1}) / h1 - (x_{k-1} - x_{k-2}) / h2] / (h1 + h2),\n"
    "              h1 = t_k - t_{k-1},  h2 = t_{k-1} - t_{k-2}\n"
    "\n"
    "Order 1 is exact for a linear ramp, its error at most `h/2 max|x''|` (h: the interval). Order 2, the\n"
    "three-point backward formula for the second derivative, is exact for a parabola, its error at most\n"
    "`h max|x'''| (1 + O(h))` on a uniform clock. `dx` is 0 until enough samples exist (k = 0, and k = 1\n"
    "for order 2); after that a NaN sample makes `dx` NaN wherever the formula uses it (k to k + order).\n";
static const char *const fdiff_in_docs[] = {
    "n values, any unit: the signal", /* x */
};
static const char *const fdiff_out_docs[] = {
    "n values, the input's element names; unit `<unit>/s` (order 1) or `<unit>/s^2` (order 2) when "
    "the input's unit is known, empty otherwise: the derivative", /* dx */
};
static const rb_param_spec fdiff_params[] = {
    {.name = "order",
     .kind = RB_PARAM_INTEGER,
     .def_number = 1,
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 2,
     .doc = "derivative order: 1 (two-point) or 2 (three-point backward second derivative)"},
};

const rb_stage_type rb_stage_finite_difference = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "finite_difference",
    .summary = "backward-difference first or second derivative per element on the clock times",
    .doc = fdiff_doc,
    .inputs = fdiff_in,
    .input_docs = fdiff_in_docs,
    .n_inputs = 1,
    .outputs = fdiff_out,
    .output_docs = fdiff_out_docs,
    .n_outputs = 1,
    .params = fdiff_params,
    .n_params = 1,
    .create = fdiff_create,
    .step = fdiff_step,
    .finish = NULL,
    .destroy = fdiff_destroy,
};
