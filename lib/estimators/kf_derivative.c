/* kf_derivative: the constant-acceleration Kalman filter of the joint-torque paper (eq. 3) per element, on the
 * filters module's linear KF (see kfd_doc below; tuning q on a log: roboest/training.h, rb_kfd_tune). */
#include <math.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/filters.h"

/* ---- the model ------------------------------------------------------------------------------ */

/* ---- the stage ------------------------------------------------------------------------------------ */

typedef struct kfd_stage {
    size_t n;
    rb_kfd *e;
    char **units;           /* 2n owned: n velocity units, then n acceleration units */
    char **var_names;       /* 3n owned: "<name>/x", "<name>/x_dot", "<name>/x_ddot" per element */
    char **var_units;       /* 3n owned: "<unit>^2", "<unit>^2/s^2", "<unit>^2/s^4" per element */
    const char **nis_units; /* n, each the static "1" (dimensionless) */
    const char *const *names;
} kfd_stage;

static void kfd_destroy(void *state)
{
    kfd_stage *s = state;
    if (!s)
        return;
    for (size_t i = 0; s->e && i < s->n; i++)
        rb_kfd_free(&s->e[i]);
    for (size_t i = 0; s->units && i < 2 * s->n; i++)
        rb_free(s->units[i]);
    for (size_t i = 0; s->var_names && i < 3 * s->n; i++)
        rb_free(s->var_names[i]);
    for (size_t i = 0; s->var_units && i < 3 * s->n; i++)
        rb_free(s->var_units[i]);
    rb_free(s->units);
    rb_free(s->var_names);
    rb_free(s->var_units);
    rb_free(s->nis_units);
    rb_free(s->e);
    rb_free(s);
}

/* value i of a 1-or-n array parameter */
static double per_element(const rb_param_value *v, size_t i) { return v->numbers[v->count == 1 ? 0 : i]; }

/* The square of a unit with a suffix: "rad" -> "rad^2<suffix>", a compound unit "N.m" -> "(N.m)^2<suffix>",
 * unknown ("") stays unknown. NULL when out of memory. */
static char *unit_squared(const char *u, const char *suffix)
{
    if (!u[0])
        return rb_strdup("");
    bool simple = true;
    for (const char *c = u; *c && simple; c++)
        simple = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_';
    return rb_asprintf(simple ? "%s^2%s" : "(%s)^2%s", u, suffix);
}

/* The output ports' names and units (create owns them; s->n filters exist). RB_ENOMEM. */
static int make_port_strings(kfd_stage *s, const rb_port *in, rb_err *err)
{
    static const char *const comp[3] = {"x", "x_dot", "x_ddot"}, *const var_suffix[3] = {"", "/s^2", "/s^4"};
    size_t n = s->n;
    s->units = rb_calloc(n ? 2 * n : 1, sizeof *s->units);
    s->var_names = rb_calloc(n ? 3 * n : 1, sizeof *s->var_names);
    s->var_units = rb_calloc(n ? 3 * n : 1, sizeof *s->var_units);
    s->nis_units = rb_calloc(n ? n : 1, sizeof *s->nis_units);
    if (!s->units || !s->var_names || !s->var_units || !s->nis_units)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t i = 0; i < 2 * n; i++) {
        const char *u = in->units ? in->units[i % n] : "";
        s->units[i] = u[0] ? rb_asprintf("%s/%s", u, i < n ? "s" : "s^2") : rb_strdup("");
        if (!s->units[i])
            return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        s->nis_units[i] = "1";
        const char *u = in->units ? in->units[i] : "";
        for (size_t c = 0; c < 3; c++) {
            char **name = &s->var_names[3 * i + c], **unit = &s->var_units[3 * i + c];
            *name = in->names ? rb_asprintf("%s/%s", in->names[i], comp[c]) : rb_asprintf("%zu/%s", i, comp[c]);
            *unit = unit_squared(u, var_suffix[c]);
            if (!*name || !*unit)
                return rb_err_set(err, RB_ENOMEM, "out of memory");
        }
    }
    return RB_OK;
}

static int kfd_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    const rb_params *p = setup->params;
    size_t n = setup->in[0].width;
    const char *model = rb_params_string(p, "process_noise");
    const rb_param_value *q = rb_params_get(p, "q"), *r = rb_params_get(p, "r"), *qd = rb_params_get(p, "q_diag"),
                         *p0 = rb_params_get(p, "p0");
    bool diagonal = model && strcmp(model, "diagonal") == 0;
    if (diagonal && !qd->given)
        return rb_err_set(err, RB_ECONFIG, "stage %s: process_noise \"diagonal\" needs q_diag", setup->id);
    if (diagonal && q->given)
        return rb_err_set(err, RB_ECONFIG, "stage %s: q is the jerk model's; process_noise \"diagonal\" uses q_diag",
                          setup->id);
    if (!diagonal && qd->given)
        return rb_err_set(err, RB_ECONFIG, "stage %s: q_diag needs process_noise \"diagonal\"", setup->id);
    if (q->count != 1 && q->count != n)
        return rb_err_set(err, RB_ECONFIG, "stage %s: q has %zu values for %zu elements (give 1 or %zu)", setup->id,
                          q->count, n, n);
    if (r->count != 1 && r->count != n)
        return rb_err_set(err, RB_ECONFIG, "stage %s: r has %zu values for %zu elements (give 1 or %zu)", setup->id,
                          r->count, n, n);
    if (n > SIZE_MAX / 3)
        return rb_err_set(err, RB_ENOMEM, "stage %s: too many elements", setup->id);
    kfd_stage *s = rb_calloc(1, sizeof *s);
    if (!s)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    s->e = rb_calloc(n ? n : 1, sizeof *s->e);
    if (!s->e) {
        kfd_destroy(s);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    /* s->n counts the filters made so far: destroy frees those (and the strings, NULL until made) */
    for (size_t i = 0; i < n; i++) {
        rb_kfd_params par = {
            .noise = diagonal ? RB_KFD_DIAGONAL : RB_KFD_JERK, .q = per_element(q, i), .r = per_element(r, i)};
        memcpy(par.p0, p0->numbers, sizeof par.p0);
        memcpy(par.q_diag, qd->numbers, sizeof par.q_diag);
        int rc = rb_kfd_init(&s->e[i], &par, err);
        if (rc) {
            kfd_destroy(s);
            return rb_err_prefix(err, rc, "stage %s: element %zu: ", setup->id, i);
        }
        s->n++;
    }
    const rb_port *in = &setup->in[0];
    int rc = make_port_strings(s, in, err);
    if (rc) {
        kfd_destroy(s);
        return rc;
    }
    s->names = in->names;
    setup->out[0] = *in;
    setup->out[1] = (rb_port){n, in->names, (const char *const *)s->units};
    setup->out[2] = (rb_port){n, in->names, (const char *const *)s->units + n};
    setup->out[3] = *in;
    setup->out[4] = (rb_port){n, in->names, s->nis_units};
    setup->out[5] = (rb_port){3 * n, (const char *const *)s->var_names, (const char *const *)s->var_units};
    *state = s;
    return RB_OK;
}

static int kfd_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)k;
    kfd_stage *s = state;
    for (size_t i = 0; i < s->n; i++) {
        rb_kfd_result o;
        int rc = rb_kfd_step(&s->e[i], t, in[0][i], &o, err);
        if (rc) {
            if (s->names)
                return rb_err_prefix(err, rc, "element %s: ", s->names[i]);
            return rb_err_prefix(err, rc, "element %zu: ", i);
        }
        out[0][i] = o.x[0];
        out[1][i] = o.x[1];
        out[2][i] = o.x[2];
        out[3][i] = o.innovation;
        out[4][i] = o.nis;
        memcpy(out[5] + 3 * i, o.var, sizeof o.var);
    }
    return RB_OK;
}

static const char *const kfd_in[] = {"x"};
static const char *const kfd_out[] = {"x", "x_dot", "x_ddot", "innovation", "nis", "var"};
static const char kfd_doc[] =
    "The constant-acceleration Kalman filter of the joint-torque paper (seed 000, eq. 3), run\n"
    "independently on each element (joint or motor positions, or any signal): per element a 3-state,\n"
    "1-measurement linear Kalman filter of the filters module (Cholesky gain, Joseph-form covariance, P\n"
    "kept symmetric). State `s = [x, x_dot, x_ddot]`, with `dT = t_k - t_{k-1}` the clock's actual interval\n"
    "(so a jittery channel clock is handled):\n"
    "\n"
    "    s_k = F s_{k-1} + w,   F = [[1, dT, dT^2/2], [0, 1, dT], [0, 0, 1]],   w ~ N(0, Q)\n"
    "    z_k = x_k + v,         v ~ N(0, r)\n"
    "\n"
    "    process_noise \"jerk\" (default): x_ddot driven by white jerk of spectral density q (unit^2/s^5),\n"
    "        discretized exactly, so the same q means the same filter at any sample rate:\n"
    "        Q = q [[dT^5/20, dT^4/8, dT^3/6], [dT^4/8, dT^3/3, dT^2/2], [dT^3/6, dT^2/2, dT]]\n"
    "    process_noise \"diagonal\": Q = diag(q_diag) per step, whatever dT (as tuned per rate)\n"
    "\n"
    "The filter starts at the first finite sample `z_0` with `s = [z_0, 0, 0]` and `P = diag(p0)`, then\n"
    "the update with `z_0`; the outputs are NaN before it. A NaN sample later is skipped (prediction\n"
    "only). Causal; nothing is allocated per sample. A `q` or `r` of neither 1 nor n values is a\n"
    "configuration error (RB_ECONFIG) when the stage is set up.\n"
    "\n"
    "The diagnostics `innovation`, `nis` and `var` are read from each element's filter after its step\n"
    "(the filters module's `rb_filter_get_diag`): wire the ones you want written and leave the others\n"
    "out. For example, to write the filter's consistency check next to its estimate:\n"
    "\n"
    "    {\"id\": \"qd_kf\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"},\n"
    "     \"out\": {\"x_dot\": \"qd_kf\", \"nis\": \"qd_kf_nis\", \"var\": \"qd_kf_var\"}}\n"
    "\n"
    "`roboest tune kf-derivative LOG --channel NAME` chooses `q` on a log (see\n"
    "`roboest tune kf-derivative --help`; the library's `rb_kfd_tune` in `roboest/training.h`): by the\n"
    "RMSE of `x_dot` against a reference velocity channel when the log has one (`--reference`, e.g. a\n"
    "simulated log's truth), else by the RMS one-step prediction error of the position; it prints a\n"
    "snippet for this stage.\n";
static const char *const kfd_in_docs[] = {
    "n values, any unit (e.g. rad): the measured positions `z_k`", /* x */
};
static const char *const kfd_out_docs[] = {
    "n values, the input's element names and units: the filtered position",              /* x */
    "n values, `<unit>/s` (empty when the input's unit is unknown): the velocity",       /* x_dot */
    "n values, `<unit>/s^2` (empty when the input's unit is unknown): the acceleration", /* x_ddot */
    "n values, the input's element names and units: `z_k - x^-_k`, the sample minus the predicted "
    "position `(F s_{k-1})_0`; NaN up to and including the first finite sample (nothing was "
    "predicted) and where the sample is NaN (skipped)", /* innovation */
    "n values, unit `1`: the normalized innovation squared `nu_k^2 / S_k`, `S_k = P^-_k[0][0] + r`, "
    "of the element's update. When the model and `q`, `r` fit the data it is chi-square with one "
    "degree of freedom: its mean over a long run is near 1 (well above 1: `r` or `q` too small; well "
    "below: too large). NaN where `innovation` is", /* nis */
    "3n values: the diagonal of P after the step, `[var_x, var_x_dot, var_x_ddot]` of element 0, "
    "then of element 1, ...; element names `<name>/x`, `<name>/x_dot`, `<name>/x_ddot`, units "
    "`<unit>^2`, `<unit>^2/s^2`, `<unit>^2/s^4` (a compound unit in parentheses, `(N.m)^2`; empty "
    "when unknown). NaN before the first finite sample; there P is diag(p0) updated with `z_0`, then "
    "it settles to the steady state of the Riccati recursion on a regular clock (a fixed interval)", /* var */
};
static const char *const kfd_models[] = {"jerk", "diagonal", NULL};
static const double kfd_def_q[] = {RB_KFD_DEFAULT_Q};
static const double kfd_def_r[] = {RB_KFD_DEFAULT_R};
static const double kfd_def_qd[] = {0, 0, 0};
static const double kfd_def_p0[] = {RB_KFD_DEFAULT_P0_X, RB_KFD_DEFAULT_P0_V, RB_KFD_DEFAULT_P0_A};
static const rb_param_spec kfd_params[] = {
    {.name = "process_noise",
     .kind = RB_PARAM_STRING,
     .def_string = "jerk",
     .choices = kfd_models,
     .doc = "\"jerk\": white jerk of spectral density q (continuous-time Q); \"diagonal\": Q = diag(q_diag) per step"},
    {.name = "q",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = kfd_def_q,
     .def_count = 1,
     .min_count = 1,
     .has_min = true,
     .min = 0,
     .doc = "jerk spectral density, unit^2/s^5: one value for every element or one per element",
     .details = "only with `\"jerk\"`: rejected with `\"diagonal\"`"},
    {.name = "q_diag",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = kfd_def_qd,
     .def_count = 3,
     .min_count = 3,
     .max_count = 3,
     .has_min = true,
     .min = 0,
     .doc =
         "per-step process variances of x, x_dot, x_ddot (unit^2, unit^2/s^2, unit^2/s^4); required with \"diagonal\", "
         "rejected with \"jerk\""},
    {.name = "r",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = kfd_def_r,
     .def_count = 1,
     .min_count = 1,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "measurement variance, unit^2: one value for every element or one per element"},
    {.name = "p0",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = kfd_def_p0,
     .def_count = 3,
     .min_count = 3,
     .max_count = 3,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "initial variances of x, x_dot, x_ddot (unit^2, unit^2/s^2, unit^2/s^4); x starts at the first sample"},
};

/* The slowest element's steady-state filter: RB_SETTLE_TIME_CONSTANTS of its error dynamics' time constant. */
static double kfd_settle(const rb_params *p, double dt)
{
    const char *model = rb_params_string(p, "process_noise");
    const rb_param_value *q = rb_params_get(p, "q"), *r = rb_params_get(p, "r"), *qd = rb_params_get(p, "q_diag"),
                         *p0 = rb_params_get(p, "p0");
    size_t n = q->count > r->count ? q->count : r->count;
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        rb_kfd_params par = {.noise = model && strcmp(model, "diagonal") == 0 ? RB_KFD_DIAGONAL : RB_KFD_JERK,
                             .q = per_element(q, i < q->count ? i : 0),
                             .r = per_element(r, i < r->count ? i : 0)};
        memcpy(par.p0, p0->numbers, sizeof par.p0);
        memcpy(par.q_diag, qd->numbers, sizeof par.q_diag);
        double tau = rb_kfd_time_constant(&par, dt);
        if (isfinite(tau) && tau > worst)
            worst = tau;
    }
    return RB_SETTLE_TIME_CONSTANTS * worst;
}

const rb_stage_type rb_stage_kf_derivative = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "kf_derivative",
    .summary = "constant-acceleration Kalman filter per element: filtered x, x_dot, x_ddot (joint-torque paper eq. 3); "
               "diagnostics innovation, nis, var (P diagonal)",
    .doc = kfd_doc,
    .inputs = kfd_in,
    .input_docs = kfd_in_docs,
    .n_inputs = 1,
    .outputs = kfd_out,
    .output_docs = kfd_out_docs,
    .n_outputs = 6,
    .params = kfd_params,
    .n_params = sizeof kfd_params / sizeof kfd_params[0],
    .create = kfd_create,
    .step = kfd_step,
    .finish = NULL,
    .destroy = kfd_destroy,
    .settle = kfd_settle,
    .settle_doc =
        "5 time constants of the slowest element's steady-state filter at the clock's period dt: the "
        "steady-state gain `K` (the Riccati recursion from `P = diag(p0)`), the error dynamics "
        "`(I - K H) F` and their slowest mode `lambda`, `tau = -dt / ln|lambda|` (`rb_kfd_time_constant`); "
        "an element whose filter never settles (`q = 0`: the gain decays to 0) adds none. The defaults: 0.068 s "
        "at 1 kHz, 0.1 s at 100 Hz",
};
