/* thrust_ekf: ports and parameters over the observers module's thrust estimator (seed 004, roboest/observers.h,
 * rb_tekf_*); the documentation and schema are in thrust_ekf_type.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/observers.h"
#include "thrust_ekf.h"
#include "torque_common.h"

typedef struct te_stage {
    const rb_model *model;
    rb_tekf *est;
    size_t nt, nf, n, nx;
    bool schedule;
    double *q, *nu, *w; /* assembled model vectors, the feet's wrenches */
    tq_strings jet_names, jet_units, jet_rate_units, var_names, var_units;
    char **notes;
    size_t n_notes;
} te_stage;

static const char *const L_names[6] = {"lx", "ly", "lz", "kx", "ky", "kz"};
static const char *const L_units[6] = {"kg m/s", "kg m/s", "kg m/s", "kg m^2/s", "kg m^2/s", "kg m^2/s"};
static const char *const N_unit[1] = {"N"};
static const char *const kg_unit[1] = {"kg"};

void te_destroy(void *state)
{
    te_stage *s = state;
    if (!s)
        return;
    rb_tekf_free(s->est);
    rb_free(s->q);
    tq_strings_free(&s->jet_names);
    tq_strings_free(&s->jet_units);
    tq_strings_free(&s->jet_rate_units);
    tq_strings_free(&s->var_names);
    tq_strings_free(&s->var_units);
    rb_strings_free(s->notes, s->n_notes);
    rb_free(s);
}

static int make_jets(const rb_stage_setup *st, rb_tekf_jet *jets, size_t nt, rb_err *err)
{
    const rb_params *p = st->params;
    const rb_param_value *fv = rb_params_get(p, "jet_frames"), *av = rb_params_get(p, "jet_axes"),
                         *pv = rb_params_get(p, "jet_presets");
    int rc = tq_check_names(st, "jet_frames", false, err);
    if (rc)
        return rc;
    if (av->count != 3 && av->count != 3 * nt)
        return rb_err_set(err, RB_ECONFIG, "jet_axes has %zu values: give 3 (every jet) or %zu (3 per jet)", av->count,
                          3 * nt);
    if (pv->count != 1 && pv->count != nt)
        return rb_err_set(err, RB_ECONFIG, "jet_presets has %zu names: give 1 (every jet) or %zu (one per jet)",
                          pv->count, nt);
    for (size_t i = 0; i < nt; i++) {
        if ((rc = tq_find_frame(st, "jet_frames", i, fv->strings[i], &jets[i].frame, err)))
            return rc;
        const double *a = av->numbers + (av->count == 3 ? 0 : 3 * i);
        memcpy(jets[i].axis, a, 3 * sizeof *a);
        if (!(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] > 1e-24))
            return rb_err_set(err, RB_ECONFIG, "jet_axes: the axis of jet %s is [%g, %g, %g]: zero length",
                              fv->strings[i], a[0], a[1], a[2]);
        size_t j = pv->count == 1 ? 0 : i;
        if ((rc = rb_jet_preset(pv->strings[j], &jets[i].params, NULL, err)))
            return rb_err_prefix(err, RB_ECONFIG, "jet_presets[%zu]: ", j);
    }
    return RB_OK;
}

static int make_config(const rb_stage_setup *st, rb_tekf_config *c, rb_tekf_jet *jets, rb_tekf_foot *feet, rb_err *err)
{
    const rb_params *p = st->params;
    size_t nt = rb_params_get(p, "jet_frames")->count;
    rb_tekf_config_init(c);
    int rc = make_jets(st, jets, nt, err);
    if (rc)
        return rc;
    c->jets = jets, c->n_jets = nt;
    const rb_param_value *fv = rb_params_get(p, "feet");
    bool flight = rb_params_boolean(p, "in_flight");
    if (flight && fv->count)
        return rb_err_set(err, RB_ECONFIG, "in_flight is true but feet names %zu frame(s): give feet [] or none",
                          fv->count);
    if (!flight && fv->count != 2)
        return rb_err_set(err, RB_ECONFIG,
                          "feet names %zu frame(s): give the left and right foot frames, or in_flight true", fv->count);
    if ((rc = tq_check_names(st, "feet", false, err)))
        return rc;
    rb_dyn_rep rep = strcmp(rb_params_string(p, "foot_convention"), "mixed") == 0 ? RB_DYN_MIXED : RB_DYN_BODY;
    for (size_t i = 0; i < fv->count; i++) {
        if ((rc = tq_find_frame(st, "feet", i, fv->strings[i], &feet[i].frame, err)))
            return rc;
        feet[i].rep = rep;
    }
    c->feet = feet, c->n_feet = fv->count;
    const char *v = rb_params_string(p, "variant");
    c->variant = strcmp(v, "centroidal_only") == 0 ? RB_TEKF_CENTROIDAL_ONLY
                 : strcmp(v, "jets_only") == 0     ? RB_TEKF_JETS_ONLY
                                                   : RB_TEKF_COMBINED;
    const double *qv = rb_params_get(p, "process_var")->numbers, *pv = rb_params_get(p, "initial_var")->numbers;
    const double *rv = rb_params_get(p, "meas_var")->numbers;
    c->q_T = qv[0], c->q_T_dot = qv[1], c->q_L = qv[2], c->q_W = qv[3];
    c->p0_T = pv[0], c->p0_T_dot = pv[1], c->p0_L = pv[2], c->p0_W = pv[3];
    c->r_L = rv[0], c->r_W = rv[1];
    c->q_T_centroidal = rb_params_number(p, "centroidal_thrust_var");
    c->schedule = rb_params_boolean(p, "schedule");
    c->sched_threshold = rb_params_number(p, "schedule_threshold");
    c->sched_var = rb_params_number(p, "schedule_var");
    c->sched_hold = rb_params_number(p, "schedule_hold");
    c->perturb = rb_params_number(p, "perturb");
    c->seed = (uint64_t)rb_params_integer(p, "seed");
    c->mass = rb_params_number(p, "mass");
    c->gravity = rb_params_number(p, "gravity");
    c->throttle_error = strcmp(rb_params_string(p, "throttle_range"), "error") == 0;
    return RB_OK;
}

static int check_ports(const rb_stage_setup *st, size_t nt, size_t nf, bool schedule, rb_err *err)
{
    const rb_model *m = st->model;
    size_t n = m->n_dofs;
    int rc;
    if ((rc = tq_check_port(st, TE_Q, n, "one per model joint", true, err)) ||
        (rc = tq_check_port(st, TE_DQ, n, "one per model joint", true, err)) ||
        (rc = tq_check_port(st, TE_THROTTLE, nt, "one per jet of jet_frames", false, err)))
        return rc;
    if (nf && !st->in[TE_FEET].width)
        return rb_err_set(err, RB_ECONFIG,
                          "input feet is not wired: the foot wrenches are needed unless in_flight is true");
    if (!nf && st->in[TE_FEET].width)
        return rb_err_set(err, RB_ECONFIG, "input feet is wired but in_flight is true");
    if (nf && (rc = tq_check_port(st, TE_FEET, 6 * nf, "[f; tau] per foot of feet", false, err)))
        return rc;
    if (schedule && !st->in[TE_RPM_ERR].width)
        return rb_err_set(err, RB_ECONFIG,
                          "input rpm_error is not wired but schedule is on (the rotor speed error "
                          "drives the scheduling)");
    if (st->in[TE_RPM_ERR].width && (rc = tq_check_port(st, TE_RPM_ERR, nt, "one per jet of jet_frames", false, err)))
        return rc;
    return tq_check_base_ports(st, TE_BASE_POS, TE_BASE_TWIST, err);
}

static int make_names(te_stage *s, const rb_tekf_config *c, rb_err *err)
{
    const rb_model *m = s->model;
    size_t nt = s->nt;
    int rc = tq_strings_alloc(&s->jet_names, nt, err);
    rc = rc ? rc : tq_strings_alloc(&s->jet_units, nt, err);
    rc = rc ? rc : tq_strings_alloc(&s->jet_rate_units, nt, err);
    rc = rc ? rc : tq_strings_alloc(&s->var_names, s->nx, err);
    rc = rc ? rc : tq_strings_alloc(&s->var_units, s->nx, err);
    for (size_t i = 0; !rc && i < nt; i++) {
        const char *jn = m->frames[c->jets[i].frame].name;
        rc = tq_strings_set(&s->jet_names, i, err, "%s", jn);
        rc = rc ? rc : tq_strings_set(&s->jet_units, i, err, "N");
        rc = rc ? rc : tq_strings_set(&s->jet_rate_units, i, err, "N/s");
        rc = rc ? rc : tq_strings_set(&s->var_names, i, err, "T/%s", jn);
        rc = rc ? rc : tq_strings_set(&s->var_units, i, err, "N^2");
        rc = rc ? rc : tq_strings_set(&s->var_names, nt + i, err, "T_dot/%s", jn);
        rc = rc ? rc : tq_strings_set(&s->var_units, nt + i, err, "N^2/s^2");
    }
    for (size_t a = 0; !rc && a < 6; a++) {
        rc = tq_strings_set(&s->var_names, 2 * nt + a, err, "L/%s", L_names[a]);
        rc = rc ? rc : tq_strings_set(&s->var_units, 2 * nt + a, err, "(%s)^2", L_units[a]);
    }
    for (size_t f = 0; !rc && f < s->nf; f++)
        for (size_t a = 0; !rc && a < 6; a++) {
            size_t i = 2 * nt + 6 + 6 * f + a;
            rc = tq_strings_set(&s->var_names, i, err, "%s/%s", f ? "W_rf" : "W_lf", tq_wrench_axes[a]);
            rc = rc ? rc : tq_strings_set(&s->var_units, i, err, "%s^2", a < 3 ? "N" : "(N m)");
        }
    return rc;
}

int te_create(const rb_stage_setup *st, void **state, rb_err *err)
{
    int rc = tq_need_model(st, err);
    if (rc)
        return rc;
    const rb_model *m = st->model;
    const rb_params *p = st->params;
    size_t nt = rb_params_get(p, "jet_frames")->count;
    te_stage *s = rb_calloc(1, sizeof *s);
    rb_tekf_jet *jets = rb_calloc(nt ? nt : 1, sizeof *jets);
    rb_tekf_foot feet[2];
    if (!s || !jets) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
        goto done;
    }
    s->model = m, s->nt = nt, s->n = m->n_dofs;
    rb_tekf_config c;
    if ((rc = make_config(st, &c, jets, feet, err)) || (rc = check_ports(st, nt, c.n_feet, c.schedule, err)))
        goto done;
    s->nf = c.n_feet, s->schedule = c.schedule;
    if ((rc = rb_tekf_alloc(m, &c, &s->est, err)))
        goto done;
    rb_tekf_dims(s->est, &s->nx, NULL);
    if (!(s->q = rb_calloc(m->nq + m->nv + 12, sizeof *s->q))) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
        goto done;
    }
    s->nu = s->q + m->nq, s->w = s->nu + m->nv;
    if ((rc = make_names(s, &c, err)))
        goto done;
    rb_port *o = st->out;
    const char *const *jn = (const char *const *)s->jet_names.s;
    o[TE_T] = (rb_port){nt, jn, (const char *const *)s->jet_units.s};
    o[TE_T_DOT] = (rb_port){nt, jn, (const char *const *)s->jet_rate_units.s};
    o[TE_L] = (rb_port){6, L_names, L_units};
    o[TE_L_MEAS] = o[TE_L];
    o[TE_W_LF] = (rb_port){6, tq_wrench_axes, tq_wrench_units};
    o[TE_W_RF] = o[TE_W_JETS] = o[TE_W_LF];
    o[TE_SUPPORT] = (rb_port){1, NULL, N_unit};
    o[TE_SUPPORT_KG] = (rb_port){1, NULL, kg_unit};
    o[TE_SCHEDULED] = (rb_port){nt, jn, NULL};
    o[TE_VAR] = (rb_port){s->nx, (const char *const *)s->var_names.s, (const char *const *)s->var_units.s};
    o[TE_NIS] = (rb_port){1, NULL, NULL};
done:
    rb_free(jets);
    if (rc) {
        te_destroy(s);
        return rc;
    }
    *state = s;
    return RB_OK;
}

int te_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    te_stage *s = state;
    const rb_model *m = s->model;
    size_t nt = s->nt;
    tq_gather_state(m, in, TE_Q, TE_DQ, TE_BASE_POS, s->q, s->nu);
    if (s->nf)
        memcpy(s->w, in[TE_FEET], 6 * s->nf * sizeof(double));
    int rc = rb_tekf_step(s->est, k, t, s->q, s->nu, in[TE_THROTTLE], s->nf ? s->w : NULL,
                          s->schedule ? in[TE_RPM_ERR] : NULL, err);
    if (rc)
        return tq_unname_sample(rc, k, err);
    rb_tekf_out o;
    rb_tekf_get_out(s->est, &o);
    memcpy(out[TE_T], o.T, nt * sizeof(double));
    memcpy(out[TE_T_DOT], o.T_dot, nt * sizeof(double));
    memcpy(out[TE_L], o.L, 6 * sizeof(double));
    memcpy(out[TE_L_MEAS], o.L_meas, 6 * sizeof(double));
    for (size_t f = 0; f < 2; f++)
        for (size_t a = 0; a < 6; a++)
            out[TE_W_LF + f][a] = f < s->nf ? o.W[6 * f + a] : 0;
    memcpy(out[TE_W_JETS], o.W_jets, 6 * sizeof(double));
    out[TE_SUPPORT][0] = o.support_N;
    out[TE_SUPPORT_KG][0] = o.support_kg;
    for (size_t i = 0; i < nt; i++)
        out[TE_SCHEDULED][i] = o.scheduled[i];
    memcpy(out[TE_VAR], o.var, s->nx * sizeof(double));
    out[TE_NIS][0] = o.nis;
    return RB_OK;
}

int te_finish(void *state, rb_err *err)
{
    te_stage *s = state;
    rb_tekf_diag d;
    rb_tekf_get_diag(s->est, &d);
    rb_strings_free(s->notes, s->n_notes);
    s->n_notes = 0;
    s->notes = rb_calloc(4, sizeof *s->notes);
    if (!s->notes)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    const struct {
        long count;
        const char *what;
    } items[] = {{d.nan_throttle, "non-finite throttle value(s): the jet's previous throttle used"},
                 {d.clamped_throttle, "throttle value(s) outside the preset's range clamped"},
                 {d.predict_only, "sample(s) with a non-finite motion: predict only"},
                 {d.clamped_thrust, "thrust estimate(s) outside [0, T_max] set to the bound"}};
    for (size_t i = 0; i < 4; i++) {
        if (!items[i].count)
            continue;
        if (!(s->notes[s->n_notes] = rb_asprintf("%ld %s", items[i].count, items[i].what)))
            return rb_err_set(err, RB_ENOMEM, "out of memory");
        s->n_notes++;
    }
    return RB_OK;
}

size_t te_notes(void *state, const char *const **lines)
{
    te_stage *s = state;
    *lines = (const char *const *)s->notes;
    return s->n_notes;
}
