/* Set-up checks and helpers shared by the model-based torque stages (see torque_common.h). */
#include "torque_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const tq_wrench_axes[6] = {"fx", "fy", "fz", "mx", "my", "mz"};
const char *const tq_wrench_units[6] = {"N", "N", "N", "N m", "N m", "N m"};

int tq_need_model(const rb_stage_setup *setup, rb_err *err)
{
    if (!setup->model)
        return rb_err_set(err, RB_ECONFIG, "needs the pipeline's \"model\" key (urdf, joints, base)");
    return RB_OK;
}

int tq_need_floating_model(const rb_stage_setup *setup, rb_err *err)
{
    int rc = tq_need_model(setup, err);
    if (!rc && !setup->model->floating)
        rc = rb_err_set(err, RB_ECONFIG,
                        "needs a floating-base model (the pipeline's \"model\" with \"floating\": true)");
    return rc;
}

static const char *model_name(const rb_model *m) { return m->name ? m->name : "(unnamed)"; }

/* " (did you mean 'x'?)" or "" into buf. */
static const char *hint(const rb_suggest *s, char *buf, size_t size)
{
    const char *best = rb_suggest_best(s);
    if (!best)
        return "";
    snprintf(buf, size, " (did you mean '%s'?)", best);
    return buf;
}

int tq_find_ft(const rb_stage_setup *setup, const char *key, size_t i, const char *name, int *out, rb_err *err)
{
    const rb_model *m = setup->model;
    long k = rb_model_ft_index(m, name);
    if (k >= 0) {
        *out = (int)k;
        return RB_OK;
    }
    rb_suggest s;
    char buf[160];
    rb_suggest_init(&s, name);
    for (size_t j = 0; j < m->n_ft; j++)
        rb_suggest_consider(&s, m->ft[j].name);
    return rb_err_set(err, RB_ECONFIG, "%s[%zu]: no FT sensor '%s' in model %s%s", key, i, name, model_name(m),
                      hint(&s, buf, sizeof buf));
}

int tq_find_frame(const rb_stage_setup *setup, const char *key, size_t i, const char *name, int *out, rb_err *err)
{
    const rb_model *m = setup->model;
    long k = rb_model_frame_index(m, name);
    if (k >= 0) {
        *out = (int)k;
        return RB_OK;
    }
    rb_suggest s;
    char buf[160], where[64] = "";
    rb_suggest_init(&s, name);
    for (size_t j = 0; j < m->n_frames; j++)
        rb_suggest_consider(&s, m->frames[j].name);
    if (i != SIZE_MAX)
        snprintf(where, sizeof where, "[%zu]", i);
    return rb_err_set(err, RB_ECONFIG, "%s%s: no frame '%s' in model %s%s", key, where, name, model_name(m),
                      hint(&s, buf, sizeof buf));
}

int tq_check_names(const rb_stage_setup *setup, const char *key, bool ft, rb_err *err)
{
    const rb_param_value *v = rb_params_get(setup->params, key);
    for (size_t i = 0; i < v->count; i++) {
        int idx, rc = ft ? tq_find_ft(setup, key, i, v->strings[i], &idx, err)
                         : tq_find_frame(setup, key, i, v->strings[i], &idx, err);
        if (rc)
            return rc;
        for (size_t j = 0; j < i; j++)
            if (strcmp(v->strings[j], v->strings[i]) == 0)
                return rb_err_set(err, RB_ECONFIG, "%s[%zu]: '%s' is listed twice", key, i, v->strings[i]);
    }
    return RB_OK;
}

int tq_check_port(const rb_stage_setup *setup, size_t port, size_t expected, const char *what, bool joints, rb_err *err)
{
    const rb_port *p = &setup->in[port];
    const char *name = setup->params->type->inputs[port];
    if (p->width != expected)
        return rb_err_set(err, RB_ECONFIG, "input %s has %zu elements, expected %zu (%s)", name, p->width, expected,
                          what);
    if (!joints || !p->names)
        return RB_OK;
    const rb_model *m = setup->model;
    bool any = false;
    for (size_t i = 0; i < p->width && !any; i++)
        any = rb_model_dof_index(m, p->names[i]) >= 0;
    for (size_t i = 0; any && i < p->width; i++)
        if (strcmp(p->names[i], m->dof_names[i]) != 0)
            return rb_err_set(err, RB_ECONFIG,
                              "input %s: element %zu is '%s' but the model's joint %zu is '%s' (bind the joints in "
                              "the order of model.joints)",
                              name, i, p->names[i], i, m->dof_names[i]);
    return RB_OK;
}

int tq_check_count(const rb_stage_setup *setup, const char *key, size_t group, size_t n_groups, rb_err *err)
{
    const rb_param_value *v = rb_params_get(setup->params, key);
    size_t c = v->count;
    if (c == 1 || c == group || c == group * n_groups)
        return RB_OK;
    if (group == 1)
        return rb_err_set(err, RB_ECONFIG, "%s has %zu values: give 1 or %zu (one per element)", key, c, n_groups);
    return rb_err_set(err, RB_ECONFIG, "%s has %zu values: give 1, %zu (the same for each of the %zu) or %zu", key, c,
                      group, n_groups, group * n_groups);
}

double tq_value(const rb_param_value *v, size_t group, size_t g, size_t j)
{
    if (v->count == 1)
        return v->numbers[0];
    if (v->count == group)
        return v->numbers[j];
    return v->numbers[g * group + j];
}

int tq_strings_alloc(tq_strings *t, size_t n, rb_err *err)
{
    t->n = 0;
    t->s = rb_calloc(n ? n : 1, sizeof *t->s);
    if (!t->s)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    t->n = n;
    return RB_OK;
}

int tq_strings_set(tq_strings *t, size_t i, rb_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    rb_free(t->s[i]);
    t->s[i] = rb_strdup(buf);
    return t->s[i] ? RB_OK : rb_err_set(err, RB_ENOMEM, "out of memory");
}

void tq_strings_free(tq_strings *t)
{
    for (size_t i = 0; t->s && i < t->n; i++)
        rb_free(t->s[i]);
    rb_free(t->s);
    t->s = NULL;
    t->n = 0;
}

void tq_fixed_base_acc(const rb_model *model, double acc[3])
{
    for (int k = 0; k < 3; k++)
        acc[k] = -model->gravity[k];
}

bool tq_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

int tq_check_base_ports(const rb_stage_setup *setup, size_t pos, size_t last, rb_err *err)
{
    if (!setup->model->floating) {
        for (size_t i = pos; i <= last; i++)
            if (setup->in[i].width)
                return rb_err_set(err, RB_ECONFIG, "input %s is wired but the model has a fixed base",
                                  setup->params->type->inputs[i]);
        return RB_OK;
    }
    int rc;
    if ((rc = tq_check_port(setup, pos, 3, "a floating base: the base position, world, m", false, err)) ||
        (rc = tq_check_port(setup, pos + 1, 4, "a floating base: the base orientation, quaternion w x y z", false,
                            err)) ||
        (rc = tq_check_port(setup, pos + 2, 6, "a floating base: the body-fixed base twist [v; w]", false, err)))
        return rc;
    return RB_OK;
}

void tq_gather_state(const rb_model *model, const double *const *in, size_t q_port, size_t dq_port, size_t pos,
                     double *q, double *nu)
{
    size_t n = model->n_dofs, b7 = 0, b6 = 0;
    if (model->floating) {
        memcpy(q, in[pos], 3 * sizeof(double));
        memcpy(q + 3, in[pos + 1], 4 * sizeof(double));
        memcpy(nu, in[pos + 2], 6 * sizeof(double));
        b7 = 7, b6 = 6;
    }
    memcpy(q + b7, in[q_port], n * sizeof(double));
    memcpy(nu + b6, in[dq_port], n * sizeof(double));
}

int tq_unname_sample(int rc, size_t k, rb_err *err)
{
    char head[40];
    int len = snprintf(head, sizeof head, "sample %zu: ", k);
    if (rc && err && len > 0 && strncmp(err->msg, head, (size_t)len) == 0)
        memmove(err->msg, err->msg + len, strlen(err->msg + len) + 1);
    return rc;
}
