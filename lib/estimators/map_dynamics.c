/* map_dynamics: the maximum-a-posteriori whole-body dynamics (seed 002) over the observers module's rb_map_*
 * (roboest/observers.h): names to model indices, per-element variances, the readings of a sample to the estimate.
 * The parameter schema and the documentation are in map_dynamics_type.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "map_dynamics.h"
#include "roboest/observers.h"
#include "torque_common.h"

typedef struct md_stage {
    const rb_model *m;
    rb_map *map;
    size_t n, n_ft, n_acc, n_gyro, n_tau, n_known, n_unknown;
    bool ddq;
    long skipped; /* samples with a non-finite joint position or velocity */
    tq_strings tau_units, std_names, w_names, w_units, wstd_names;
    char *notes_buf[3];
    size_t n_notes;
} md_stage;

void md_destroy(void *state)
{
    md_stage *s = state;
    if (!s)
        return;
    rb_map_free(s->map);
    tq_strings_free(&s->tau_units);
    tq_strings_free(&s->std_names);
    tq_strings_free(&s->w_names);
    tq_strings_free(&s->w_units);
    tq_strings_free(&s->wstd_names);
    for (size_t i = 0; i < 3; i++)
        rb_free(s->notes_buf[i]);
    rb_free(s);
}

static const char *mname(const rb_model *m) { return m->name ? m->name : ""; }

/* An FT sensor by its name or its joint's; a joint that carries no FT sensor is named as such. */
static int find_ft(const rb_stage_setup *st, size_t i, const char *name, int *out, rb_err *err)
{
    const rb_model *m = st->model;
    if (rb_model_ft_index(m, name) >= 0)
        return tq_find_ft(st, "ft_sensors", i, name, out, err);
    for (size_t k = 0; k < m->n_ft; k++)
        if (m->ft[k].joint_name && strcmp(m->ft[k].joint_name, name) == 0) {
            *out = (int)k;
            return RB_OK;
        }
    for (size_t b = 1; b < m->n_bodies; b++)
        if (m->bodies[b].joint_name && strcmp(m->bodies[b].joint_name, name) == 0) {
            char list[512] = "";
            size_t len = 0;
            for (size_t k = 0; k < m->n_ft && len < sizeof list; k++) {
                int w = snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", m->ft[k].joint_name);
                if (w > 0)
                    len += (size_t)w;
            }
            return rb_err_set(err, RB_ECONFIG,
                              "ft_sensors[%zu]: joint %s is not a sensor joint of model %s (its FT sensor joints: %s)",
                              i, name, mname(m), m->n_ft ? list : "none");
        }
    return tq_find_ft(st, "ft_sensors", i, name, out, err);
}

static int find_all(const rb_stage_setup *st, const char *key, int kind, int *out, size_t *n, rb_err *err)
{
    const rb_param_value *v = rb_params_get(st->params, key);
    *n = v ? v->count : 0;
    int rc = RB_OK;
    for (size_t i = 0; !rc && i < *n; i++) {
        if (kind == 0)
            rc = find_ft(st, i, v->strings[i], &out[i], err);
        else if (kind == 1)
            rc = tq_find_frame(st, key, i, v->strings[i], &out[i], err);
        else {
            long j = rb_model_dof_index(st->model, v->strings[i]);
            if (j < 0)
                rc = rb_err_set(err, RB_ECONFIG, "%s[%zu]: no joint '%s' in the model's joint list", key, i,
                                v->strings[i]);
            out[i] = (int)j;
        }
        for (size_t j = 0; !rc && j < i; j++)
            if (out[j] == out[i])
                rc = rb_err_set(err, RB_ECONFIG, "%s[%zu]: '%s' is listed twice", key, i, v->strings[i]);
    }
    return rc;
}

/* Per-element variances: 1 value, `group` (one per element of every group) or group * count. */
static int variances(const rb_stage_setup *st, const char *key, size_t group, size_t count, double *out, rb_err *err)
{
    if (count == 0)
        return RB_OK;
    int rc = tq_check_count(st, key, group, count, err);
    if (rc)
        return rc;
    const rb_param_value *v = rb_params_get(st->params, key);
    for (size_t g = 0; g < count; g++)
        for (size_t j = 0; j < group; j++)
            out[g * group + j] = tq_value(v, group, g, j);
    return RB_OK;
}

static int check_ports(const rb_stage_setup *st, const md_stage *s, rb_err *err)
{
    int rc;
    size_t n = s->n;
    if ((rc = tq_check_port(st, MD_Q, n, "one per model joint", true, err)) ||
        (rc = tq_check_port(st, MD_DQ, n, "one per model joint", true, err)) ||
        (st->in[MD_DDQ].width && (rc = tq_check_port(st, MD_DDQ, n, "one per model joint", true, err))))
        return rc;
    struct {
        size_t port, width;
        const char *what, *key, *port_name;
    } g[] = {{MD_FT, 6 * s->n_ft, "6 per sensor of ft_sensors", "ft_sensors", "ft"},
             {MD_ACC, 3 * s->n_acc, "3 per frame of accelerometers", "accelerometers", "acc"},
             {MD_GYRO, 3 * s->n_gyro, "3 per frame of gyroscopes", "gyroscopes", "gyro"},
             {MD_TAU, s->n_tau, "one per joint of torque_sensors", "torque_sensors", "tau"},
             {MD_KNOWN, 6 * s->n_known, "6 per frame of known_wrenches", "known_wrenches", "known"}};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        if (g[i].width == 0 && st->in[g[i].port].width > 0)
            return rb_err_set(err, RB_ECONFIG, "input %s is wired but %s is empty", g[i].port_name, g[i].key);
        if (g[i].width > 0 && (rc = tq_check_port(st, g[i].port, g[i].width, g[i].what, false, err)))
            return rc;
    }
    return RB_OK;
}

static int make_names(md_stage *s, const rb_stage_setup *st, rb_err *err)
{
    const rb_param_value *u = rb_params_get(st->params, "unknown_wrenches");
    int rc = tq_strings_alloc(&s->tau_units, s->n, err);
    rc = rc ? rc : tq_strings_alloc(&s->std_names, s->n, err);
    rc = rc ? rc : tq_strings_alloc(&s->w_names, 6 * s->n_unknown, err);
    rc = rc ? rc : tq_strings_alloc(&s->w_units, 6 * s->n_unknown, err);
    rc = rc ? rc : tq_strings_alloc(&s->wstd_names, 6 * s->n_unknown, err);
    for (size_t j = 0; !rc && j < s->n; j++) {
        bool pr = s->m->bodies[s->m->dof_body[j]].type == RB_JOINT_PRISMATIC;
        rc = tq_strings_set(&s->tau_units, j, err, "%s", pr ? "N" : "N m");
        rc = rc ? rc : tq_strings_set(&s->std_names, j, err, "%s", s->m->dof_names[j]);
    }
    for (size_t i = 0; !rc && i < 6 * s->n_unknown; i++) {
        rc = tq_strings_set(&s->w_names, i, err, "%s/%s", u->strings[i / 6], tq_wrench_axes[i % 6]);
        rc = rc ? rc : tq_strings_set(&s->w_units, i, err, "%s", tq_wrench_units[i % 6]);
        rc = rc ? rc : tq_strings_set(&s->wstd_names, i, err, "%s/%s", u->strings[i / 6], tq_wrench_axes[i % 6]);
    }
    return rc;
}

static const char *const residual_name[1] = {"residual"}, *const residual_unit[1] = {""};

int md_create(const rb_stage_setup *st, void **state, rb_err *err)
{
    int rc = tq_need_model(st, err);
    if (rc)
        return rc;
    const rb_model *m = st->model;
    const rb_params *p = st->params;
    md_stage *s = rb_calloc(1, sizeof *s);
    if (!s)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    s->m = m, s->n = m->n_dofs, s->ddq = st->in[MD_DDQ].width > 0;
    const char *keys[6] = {"ft_sensors",     "accelerometers", "gyroscopes",
                           "torque_sensors", "known_wrenches", "unknown_wrenches"};
    size_t cap = 0;
    for (size_t i = 0; i < 6; i++)
        cap += rb_params_get(p, keys[i])->count;
    /* one block: the indices, then the variances (6 per index at most, and n for ddq) */
    int *idx = rb_calloc(cap + 1, sizeof *idx);
    double *var = rb_calloc(6 * cap + s->n + 1, sizeof *var);
    rb_map_config c;
    rb_map_config_init(&c);
    if (!idx || !var) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
        goto done;
    }
    int *ft = idx, *acc, *gyro, *tq, *known, *unknown;
    if ((rc = find_all(st, "ft_sensors", 0, ft, &s->n_ft, err)))
        goto done;
    acc = ft + s->n_ft;
    if ((rc = find_all(st, "accelerometers", 1, acc, &s->n_acc, err)))
        goto done;
    gyro = acc + s->n_acc;
    if ((rc = find_all(st, "gyroscopes", 1, gyro, &s->n_gyro, err)))
        goto done;
    tq = gyro + s->n_gyro;
    if ((rc = find_all(st, "torque_sensors", 2, tq, &s->n_tau, err)))
        goto done;
    known = tq + s->n_tau;
    if ((rc = find_all(st, "known_wrenches", 1, known, &s->n_known, err)))
        goto done;
    unknown = known + s->n_known;
    if ((rc = find_all(st, "unknown_wrenches", 1, unknown, &s->n_unknown, err)) || (rc = check_ports(st, s, err)))
        goto done;
    double *vft = var, *vacc = vft + 6 * s->n_ft, *vgyro = vacc + 3 * s->n_acc, *vddq = vgyro + 3 * s->n_gyro;
    double *vtau = vddq + s->n, *vknown = vtau + s->n_tau;
    if ((rc = variances(st, "var_ft", 6, s->n_ft, vft, err)) ||
        (rc = variances(st, "var_acc", 3, s->n_acc, vacc, err)) ||
        (rc = variances(st, "var_gyro", 3, s->n_gyro, vgyro, err)) ||
        (s->ddq && (rc = variances(st, "var_ddq", 1, s->n, vddq, err))) ||
        (rc = variances(st, "var_tau", 1, s->n_tau, vtau, err)) ||
        (rc = variances(st, "var_known", 6, s->n_known, vknown, err)))
        goto done;
    c.ft = ft, c.n_ft = s->n_ft, c.var_ft = vft;
    c.acc = acc, c.n_acc = s->n_acc, c.var_acc = vacc;
    c.gyro = gyro, c.n_gyro = s->n_gyro, c.var_gyro = vgyro;
    c.ddq = s->ddq, c.var_ddq = vddq;
    c.tau = tq, c.n_tau = s->n_tau, c.var_tau = vtau;
    c.known = known, c.n_known = s->n_known, c.var_known = vknown;
    c.unknown = unknown, c.n_unknown = s->n_unknown;
    c.var_dyn = rb_params_number(p, "var_dyn");
    c.var_zero = rb_params_number(p, "var_zero");
    bool prior = rb_params_boolean(p, "prior");
    c.var_free = prior ? rb_params_number(p, "var_free") : INFINITY;
    c.var_unknown = prior ? rb_params_number(p, "var_unknown") : INFINITY;
    c.dense = strcmp(rb_params_string(p, "solver"), "dense") == 0;
    c.covariance = rb_params_boolean(p, "std");
    if ((rc = rb_map_alloc(m, &c, &s->map, err)) || (rc = make_names(s, st, err)))
        goto done;
    rb_map_diag d;
    rb_map_get_diag(s->map, &d);
    if (d.base_rate_unobserved && (s->notes_buf[s->n_notes] = rb_malloc(200))) {
        snprintf(s->notes_buf[s->n_notes], 200,
                 "warning: angular velocity unobserved: a floating base with%s no gyroscope; the base's angular "
                 "velocity is taken as zero",
                 s->n_acc ? " accelerometers and" : "");
        s->n_notes++;
    }
    st->out[MD_TAU_OUT] = (rb_port){s->n, (const char *const *)m->dof_names, (const char *const *)s->tau_units.s};
    st->out[MD_TAU_STD] = (rb_port){s->n, (const char *const *)s->std_names.s, (const char *const *)s->tau_units.s};
    st->out[MD_WRENCHES] =
        (rb_port){6 * s->n_unknown, (const char *const *)s->w_names.s, (const char *const *)s->w_units.s};
    st->out[MD_WRENCHES_STD] =
        (rb_port){6 * s->n_unknown, (const char *const *)s->wstd_names.s, (const char *const *)s->w_units.s};
    st->out[MD_RESIDUAL] = (rb_port){1, residual_name, residual_unit};
done:
    rb_free(idx);
    rb_free(var);
    if (rc) {
        md_destroy(s);
        return rc;
    }
    *state = s;
    return RB_OK;
}

static void fill_nan(double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = NAN;
}

int md_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)t;
    md_stage *s = state;
    if (!tq_finite(in[MD_Q], s->n) || !tq_finite(in[MD_DQ], s->n)) {
        for (int o = 0; o < MD_N_OUT; o++)
            fill_nan(out[o], o == MD_RESIDUAL ? 1 : (o < MD_WRENCHES ? s->n : 6 * s->n_unknown));
        s->skipped++;
        return RB_OK;
    }
    rb_map_input mi = {.s = in[MD_Q],
                       .s_dot = in[MD_DQ],
                       .s_ddot = s->ddq ? in[MD_DDQ] : NULL,
                       .ft = in[MD_FT],
                       .acc = in[MD_ACC],
                       .gyro = in[MD_GYRO],
                       .tau = in[MD_TAU],
                       .known = in[MD_KNOWN]};
    int rc = rb_map_step(s->map, &mi, err);
    if (rc)
        return tq_unname_sample(rc, k, err);
    rb_map_out o;
    rb_map_get_out(s->map, &o);
    memcpy(out[MD_TAU_OUT], o.tau, s->n * sizeof(double));
    memcpy(out[MD_TAU_STD], o.tau_std, s->n * sizeof(double));
    memcpy(out[MD_WRENCHES], o.wrench, 6 * s->n_unknown * sizeof(double));
    memcpy(out[MD_WRENCHES_STD], o.wrench_std, 6 * s->n_unknown * sizeof(double));
    out[MD_RESIDUAL][0] = o.residual;
    return RB_OK;
}

size_t md_notes(void *state, const char *const **lines)
{
    md_stage *s = state;
    rb_map_diag d;
    rb_map_get_diag(s->map, &d);
    size_t n = s->n_notes;
    for (size_t i = n; i < 3; i++) {
        rb_free(s->notes_buf[i]);
        s->notes_buf[i] = NULL;
    }
    if (d.dropped > 0 && (s->notes_buf[n] = rb_malloc(160)))
        snprintf(s->notes_buf[n++], 160, "%ld sensor rows dropped (non-finite readings) over %ld samples", d.dropped,
                 d.steps);
    if (s->skipped > 0 && (s->notes_buf[n] = rb_malloc(160)))
        snprintf(s->notes_buf[n++], 160, "%ld samples without an estimate (a non-finite joint position or velocity)",
                 s->skipped);
    *lines = (const char *const *)s->notes_buf;
    return n;
}
