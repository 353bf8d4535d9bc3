/* friction_model: an analytic friction model per joint from its velocity (see fm_doc below). */
#include <math.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/friction.h"

typedef struct fmodel {
    size_t n;
    bool lugre;
    bool started;
    double t_prev;
    const char **units;   /* n, each the static "N m" */
    rb_friction_model *m; /* n validated models */
    double *z;            /* n LuGre deflections, rad */
    double *c;            /* n constant offsets, N m (0 without the parameter) */
} fmodel;

static void fm_destroy(void *state)
{
    fmodel *s = state;
    if (!s)
        return;
    rb_free(s->units);
    rb_free(s->m);
    rb_free(s->z);
    rb_free(s->c);
    rb_free(s);
}

/* The models the stage offers (the dynamic stiction model needs the applied torque: simulator only). */
static const char *const fm_models[] = {"coulomb_viscous", "scv", "tanh6", "lugre", NULL};
/* Every parameter name any of them uses, in the schema's order. */
static const char *const fm_names[] = {"F_c", "F_s", "F_v", "v_s", "v_eps",  "g1",    "g2",
                                       "g3",  "g4",  "g5",  "g6",  "sigma0", "sigma1"};
enum { N_NAMES = sizeof fm_names / sizeof fm_names[0] };

/* Position of parameter `name` in kind's array order, or -1. */
static int position_in(rb_friction_kind kind, const char *name)
{
    size_t count = rb_friction_param_count(kind, NULL);
    for (size_t j = 0; j < count; j++)
        if (strcmp(rb_friction_param_name(kind, j), name) == 0)
            return (int)j;
    return -1;
}

/* A parameter counts as given when it has values: an empty array (as --print-config writes the unused ones)
 * is absent. */
static bool has_values(const rb_param_value *v) { return v->given && v->count > 0; }

/* Every given parameter belongs to the model, every required one is given, arrays have 1 or n values. */
static int check_params(const rb_stage_setup *setup, rb_friction_kind kind, const char *model, size_t n, rb_err *err)
{
    size_t required, count = rb_friction_param_count(kind, &required);
    char list[128] = "";
    for (size_t j = 0; j < count; j++) {
        strcat(list, j ? ", " : "");
        strcat(list, rb_friction_param_name(kind, j));
    }
    for (size_t i = 0; i < N_NAMES; i++) {
        const rb_param_value *v = rb_params_get(setup->params, fm_names[i]);
        int pos = position_in(kind, fm_names[i]);
        if (has_values(v) && pos < 0)
            return rb_err_set(err, RB_ECONFIG, "stage %s: %s is not a parameter of model %s (%s)", setup->id,
                              fm_names[i], model, list);
        if (!has_values(v) && pos >= 0 && (size_t)pos < required)
            return rb_err_set(err, RB_ECONFIG, "stage %s: model %s needs %s (parameters: %s)", setup->id, model,
                              fm_names[i], list);
        if (has_values(v) && v->count != 1 && v->count != n)
            return rb_err_set(err, RB_ECONFIG, "stage %s: %s has %zu values for %zu elements (give 1 or %zu)",
                              setup->id, fm_names[i], v->count, n, n);
    }
    return RB_OK;
}

/* Build element i's model; scv's v_eps defaults to v_s / 10, coulomb_viscous's to 0 (the exact sign). */
static int build_element(const rb_stage_setup *setup, rb_friction_kind kind, const char *model, size_t i,
                         rb_friction_model *out, rb_err *err)
{
    size_t count = rb_friction_param_count(kind, NULL);
    double p[RB_FRICTION_MAX_PARAMS];
    for (size_t j = 0; j < count; j++) {
        const rb_param_value *v = rb_params_get(setup->params, rb_friction_param_name(kind, j));
        p[j] = has_values(v) ? v->numbers[v->count == 1 ? 0 : i] : 0;
    }
    if (kind == RB_FRICTION_SCV && !has_values(rb_params_get(setup->params, "v_eps")))
        p[4] = p[3] / 10;
    int rc = rb_friction_build(model, p, count, out, err);
    if (rc && setup->in[0].names)
        return rb_err_prefix(err, rc, "stage %s: element %s: ", setup->id, setup->in[0].names[i]);
    if (rc)
        return rb_err_prefix(err, rc, "stage %s: element %zu: ", setup->id, i);
    return RB_OK;
}

static int fm_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    const char *model = rb_params_string(setup->params, "model");
    size_t n = setup->in[0].width;
    rb_friction_kind kind = RB_FRICTION_CV;
    for (rb_friction_kind k = RB_FRICTION_CV; k <= RB_FRICTION_LUGRE; k++)
        if (strcmp(rb_friction_kind_name(k), model) == 0)
            kind = k;
    int rc = check_params(setup, kind, model, n, err);
    const rb_param_value *off = rb_params_get(setup->params, "offset");
    if (!rc && has_values(off) && off->count != 1 && off->count != n)
        rc = rb_err_set(err, RB_ECONFIG, "stage %s: offset has %zu values for %zu elements (give 1 or %zu)", setup->id,
                        off->count, n, n);
    if (rc)
        return rc;
    fmodel *s = rb_calloc(1, sizeof *s);
    if (!s || !(s->units = rb_calloc(n ? n : 1, sizeof *s->units)) || !(s->m = rb_calloc(n ? n : 1, sizeof *s->m)) ||
        !(s->z = rb_calloc(n ? n : 1, sizeof *s->z)) || !(s->c = rb_calloc(n ? n : 1, sizeof *s->c))) {
        fm_destroy(s);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    s->n = n;
    s->lugre = kind == RB_FRICTION_LUGRE;
    for (size_t i = 0; i < n; i++) {
        s->units[i] = "N m";
        if (has_values(off))
            s->c[i] = off->numbers[off->count == 1 ? 0 : i];
        if ((rc = build_element(setup, kind, model, i, &s->m[i], err))) {
            fm_destroy(s);
            return rc;
        }
    }
    setup->out[0] = (rb_port){n, setup->in[0].names, s->units};
    *state = s;
    return RB_OK;
}

static int fm_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)k, (void)err;
    fmodel *s = state;
    const double *v = in[0];
    if (!s->lugre) {
        for (size_t i = 0; i < s->n; i++)
            out[0][i] = s->c[i] ? rb_friction_eval(&s->m[i], v[i]) + s->c[i] : rb_friction_eval(&s->m[i], v[i]);
        return RB_OK;
    }
    /* LuGre: z advanced over the clock's interval with the current velocity (0 at the first sample) */
    double dt = s->started ? t - s->t_prev : 0;
    for (size_t i = 0; i < s->n; i++) {
        out[0][i] = isfinite(v[i]) ? rb_friction_lugre_step(&s->m[i], &s->z[i], v[i], dt) : NAN;
        if (s->c[i]) /* only when set: x + 0 would turn a -0 output into +0 */
            out[0][i] += s->c[i];
    }
    s->started = true;
    s->t_prev = t;
    return RB_OK;
}

static const char *const fm_in[] = {"velocity"};
static const char *const fm_out[] = {"tau_F"};
static const char fm_doc[] =
    "An analytic friction law per joint from its velocity, in the sign convention of `roboest/friction.h`\n"
    "and of the whole project: `tau_j = tau_m - tau_F`, so `tau_F` has the sign of the motion\n"
    "(`tau_F v >= 0`):\n"
    "\n"
    "    \"coulomb_viscous\"  F_c S(v) + F_v v\n"
    "    \"scv\"              (F_c + (F_s - F_c) exp(-(v / v_s)^2)) S(v) + F_v v\n"
    "    \"tanh6\"            g1 (tanh(g2 v) - tanh(g3 v)) + g4 tanh(g5 v) + g6 v\n"
    "    \"lugre\"            dz/dt = v - sigma0 |v| z / g(v),  g(v) = F_c + (F_s - F_c) exp(-(v / v_s)^2),\n"
    "                       tau_F = sigma0 z + sigma1 dz/dt + F_v v\n"
    "\n"
    "`S(v) = tanh(v / v_eps)` is the smooth sign (`v_eps = 0`: the exact sign, `sgn(v)`). For `\"scv\"`,\n"
    "`v_eps` defaults to `v_s / 10`: `|S - sgn| <= 2 exp(-20 |v| / v_s)`, below 1.3 % from\n"
    "`|v| = v_s / 4` on, so the Stribeck hump keeps its shape while the jump at rest is smoothed; for\n"
    "`\"coulomb_viscous\"` it defaults to 0. `\"tanh6\"` is smooth by construction.\n"
    "\n"
    "`\"lugre\"` is the bristle model of `roboest/friction.h` and stateful: the bristle deflection z\n"
    "starts at 0 and is advanced exactly over each clock interval `t_k - t_{k-1}` with `v_k` held\n"
    "(`rb_friction_lugre_step`; nothing at k = 0), so the output at k depends on samples up to k only\n"
    "(causal). With every model a NaN velocity gives a NaN torque; with `\"lugre\"` it leaves z as it was.\n"
    "\n"
    "Every parameter is a number array of 1 value (all joints) or one per joint. Each model requires the\n"
    "parameters listed for it (all but `v_eps`); a parameter the model does not use is an error\n"
    "(RB_ECONFIG), as is a missing one (an empty array counts as absent: `roboest run --print-config`\n"
    "writes the unused ones so). Each joint's parameters go through `rb_friction_build` and its\n"
    "validation (`F_s >= F_c`, `g2 >= g3`, ...; the error names the joint).\n"
    "`offset` (any model, default 0) adds a constant `c` to the output, `tau_F = model(v) + c`: the\n"
    "constant term `roboest train-friction` fits with the spec key `analytic_offset` (a bias of the\n"
    "current sensor or of the torque the target was formed with). It makes the law not odd in `v`.\n"
    "`roboest train-friction --fit-analytic MODEL` prints these parameters fitted on a log. For example,\n"
    "ergoCub's identified r_knee friction on one joint:\n"
    "\n"
    "    {\"id\": \"friction\", \"type\": \"friction_model\", \"in\": {\"velocity\": \"qd\"},\n"
    "     \"out\": {\"tau_F\": \"tau_F\"},\n"
    "     \"params\": {\"model\": \"scv\", \"F_c\": [0.306], \"F_s\": [0.601],\n"
    "                \"F_v\": [0.673], \"v_s\": [0.0094]}}\n";
static const char *const fm_in_docs[] = {
    "n values, rad/s: the joint velocities `v`", /* velocity */
};
static const char *const fm_out_docs[] = {
    "n values, N m, the input's element names: the friction torque `tau_F`", /* tau_F */
};
#define ARRAY_PARAM(NAME, LO, DOC, DETAILS)                                                                            \
    {                                                                                                                  \
        .name = NAME, .kind = RB_PARAM_NUMBER_ARRAY, .has_min = true, .min = LO, .doc = DOC, .details = DETAILS        \
    }
#define POSITIVE_PARAM(NAME, DOC, DETAILS)                                                                             \
    {                                                                                                                  \
        .name = NAME, .kind = RB_PARAM_NUMBER_ARRAY, .has_min = true, .min = 0, .min_exclusive = true, .doc = DOC,     \
        .details = DETAILS                                                                                             \
    }
static const rb_param_spec fm_params[] = {
    {.name = "model",
     .kind = RB_PARAM_STRING,
     .required = true,
     .choices = fm_models,
     .doc = "friction law (roboest/friction.h): coulomb_viscous, scv, tanh6 or lugre"},
    ARRAY_PARAM("F_c", 0, "Coulomb level, N m (coulomb_viscous, scv, lugre)",
                "required by those models, rejected by `tanh6`"),
    ARRAY_PARAM("F_s", 0, "static (breakaway) level >= F_c, N m (scv, lugre)",
                "required by those models, rejected by the others"),
    ARRAY_PARAM("F_v", 0, "viscous coefficient, N m s/rad (coulomb_viscous, scv, lugre)",
                "required by those models, rejected by `tanh6`"),
    POSITIVE_PARAM("v_s", "Stribeck velocity, rad/s (scv, lugre)", "required by those models, rejected by the others"),
    ARRAY_PARAM("v_eps", 0,
                "smooth-sign width, rad/s: sign(v) becomes tanh(v / v_eps); 0 the exact sign (coulomb_viscous, "
                "default 0; scv, default v_s / 10)",
                "rejected by `tanh6` and `lugre`"),
    ARRAY_PARAM("g1", 0, "tanh6 Stribeck amplitude, N m", "required by `tanh6`, rejected by the others"),
    ARRAY_PARAM("g2", 0, "tanh6 Stribeck rise scale >= g3, s/rad", "required by `tanh6`, rejected by the others"),
    ARRAY_PARAM("g3", 0, "tanh6 Stribeck decay scale, s/rad", "required by `tanh6`, rejected by the others"),
    ARRAY_PARAM("g4", 0, "tanh6 Coulomb level, N m", "required by `tanh6`, rejected by the others"),
    ARRAY_PARAM("g5", 0, "tanh6 Coulomb sharpness, s/rad", "required by `tanh6`, rejected by the others"),
    ARRAY_PARAM("g6", 0, "tanh6 viscous coefficient, N m s/rad", "required by `tanh6`, rejected by the others"),
    POSITIVE_PARAM("sigma0", "LuGre bristle stiffness, N m/rad", "required by `lugre`, rejected by the others"),
    ARRAY_PARAM("sigma1", 0, "LuGre bristle damping, N m s/rad", "required by `lugre`, rejected by the others"),
    {.name = "offset",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .doc = "constant added to the friction torque, N m, either sign (every model; default 0)",
     .details = "printed by `roboest train-friction` when its spec sets `analytic_offset`"},
};

const rb_stage_type rb_stage_friction_model = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "friction_model",
    .summary = "analytic joint friction tau_F(v) per joint: coulomb_viscous, scv (smooth sign), tanh6 or lugre "
               "(stateful, causal)",
    .doc = fm_doc,
    .inputs = fm_in,
    .input_docs = fm_in_docs,
    .n_inputs = 1,
    .outputs = fm_out,
    .output_docs = fm_out_docs,
    .n_outputs = 1,
    .params = fm_params,
    .n_params = sizeof fm_params / sizeof fm_params[0],
    .create = fm_create,
    .step = fm_step,
    .finish = NULL,
    .destroy = fm_destroy,
};
