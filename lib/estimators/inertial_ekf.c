/* inertial_ekf: ports and parameters over the observers module's inertial-parameter estimator (seed 001,
 * roboest/observers.h, rb_iekf_*); the documentation and schema are in inertial_ekf_type.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "inertial_ekf.h"
#include "roboest/observers.h"
#include "torque_common.h"

typedef struct ie_stage {
    const rb_model *model;
    rb_iekf *est;
    size_t nb, n, nv, nq, nc, np;
    bool given_ddq;
    double *q, *nu, *nu_dot; /* assembled model vectors */
    tq_strings pi_names, pi_units, th_names, th_units, com_names, com_units, row_names, row_units, var_units,
        mass_units;
    const char **body_names;
    char **notes;
    size_t n_notes;
} ie_stage;

void ie_destroy(void *state)
{
    ie_stage *s = state;
    if (!s)
        return;
    rb_iekf_free(s->est);
    rb_free(s->q);
    tq_strings_free(&s->pi_names);
    tq_strings_free(&s->pi_units);
    tq_strings_free(&s->th_names);
    tq_strings_free(&s->th_units);
    tq_strings_free(&s->com_names);
    tq_strings_free(&s->com_units);
    tq_strings_free(&s->row_names);
    tq_strings_free(&s->row_units);
    tq_strings_free(&s->var_units);
    tq_strings_free(&s->mass_units);
    rb_free((void *)s->body_names);
    rb_strings_free(s->notes, s->n_notes);
    rb_free(s);
}

/* A body by link name: a link merged into another body by a fixed joint is refused naming that body (its
 * parameters are part of the body's), an unknown name gets the closest body as a suggestion. */
static int find_body(const rb_model *m, size_t i, const char *name, size_t *out, rb_err *err)
{
    long b = rb_model_body_index(m, name);
    if (b > 0 || (b == 0 && m->floating)) {
        *out = (size_t)b;
        return RB_OK;
    }
    if (b == 0)
        return rb_err_set(err, RB_ECONFIG, "bodies[%zu]: '%s' is the fixed base: it does not move", i, name);
    long f = rb_model_frame_index(m, name);
    if (f >= 0 && m->frames[f].kind == RB_FRAME_LINK)
        return rb_err_set(err, RB_ECONFIG,
                          "bodies[%zu]: link '%s' is merged into body '%s' (fixed joint): name the body", i, name,
                          m->bodies[m->frames[f].body].name);
    rb_suggest sg;
    rb_suggest_init(&sg, name);
    for (size_t j = 0; j < m->n_bodies; j++)
        rb_suggest_consider(&sg, m->bodies[j].name);
    const char *best = rb_suggest_best(&sg);
    if (best)
        return rb_err_set(err, RB_ECONFIG, "bodies[%zu]: unknown body '%s' (did you mean '%s'?)", i, name, best);
    return rb_err_set(err, RB_ECONFIG, "bodies[%zu]: unknown body '%s'", i, name);
}

/* A per-parameter number array: 1 value (every parameter), one per group (groups of the 10 parameters, sizes
 * given) or 10. */
static int expand10(const rb_params *p, const char *key, const size_t *group_of, size_t n_groups, double out[10],
                    rb_err *err)
{
    const rb_param_value *v = rb_params_get(p, key);
    if (!v->given && v->count == 0)
        return RB_OK;
    if (v->count != 1 && v->count != n_groups && v->count != 10)
        return rb_err_set(err, RB_ECONFIG, "%s has %zu values: give 1, %zu (one per group) or 10 (one per parameter)",
                          key, v->count, n_groups);
    for (size_t j = 0; j < 10; j++)
        out[j] = v->count == 1 ? v->numbers[0] : v->count == 10 ? v->numbers[j] : v->numbers[group_of[j]];
    return RB_OK;
}

static const size_t theta_group[10] = {0, 1, 1, 1, 2, 2, 2, 3, 3, 3}; /* alpha, d, s, t */
static const size_t pi_group[10] = {0, 1, 1, 1, 2, 2, 2, 2, 2, 2};    /* m, h, I */

static int make_config(const rb_stage_setup *st, rb_iekf_config *c, size_t *bodies, rb_iekf_contact *contacts,
                       double *r, rb_err *err)
{
    const rb_model *m = st->model;
    const rb_params *p = st->params;
    const rb_param_value *bv = rb_params_get(p, "bodies"), *cv = rb_params_get(p, "contacts");
    const rb_param_value *conv = rb_params_get(p, "contact_convention"), *rv = rb_params_get(p, "meas_var");
    rb_iekf_config_init(c);
    bool kf = strcmp(rb_params_string(p, "filter"), "kf_linear") == 0;
    if (kf)
        rb_iekf_config_defaults_kf(c);
    c->form = strcmp(rb_params_string(p, "parameterization"), "paper_eq17") == 0 ? RB_LCHOL_PAPER_EQ17 : RB_LCHOL_UUT;
    int rc;
    for (size_t i = 0; i < bv->count; i++) {
        if ((rc = find_body(m, i, bv->strings[i], &bodies[i], err)))
            return rc;
        for (size_t j = 0; j < i; j++)
            if (bodies[j] == bodies[i])
                return rb_err_set(err, RB_ECONFIG, "bodies[%zu]: '%s' is listed twice", i, bv->strings[i]);
    }
    c->bodies = bodies, c->n_bodies = bv->count;
    const size_t *groups = kf ? pi_group : theta_group;
    size_t ng = kf ? 3 : 4;
    if ((rc = expand10(p, "process_var", groups, ng, c->q, err)) ||
        (rc = expand10(p, "initial_var", groups, ng, c->p0, err)) ||
        (rc = expand10(p, "rate_limit", pi_group, 3, c->rate, err)))
        return rc;
    if (rv->count != 1 && rv->count != m->nv)
        return rb_err_set(err, RB_ECONFIG, "meas_var has %zu values: give 1 or %zu (one per row: %s the joints)",
                          rv->count, m->nv, m->floating ? "the 6 base rows, then" : "");
    for (size_t i = 0; i < m->nv; i++)
        r[i] = rv->numbers[rv->count == 1 ? 0 : i];
    c->r = r;
    const char *gate = rb_params_string(p, "gate");
    c->gate = strcmp(gate, "probability") == 0 ? RB_IEKF_GATE_PROBABILITY
              : strcmp(gate, "nis") == 0       ? RB_IEKF_GATE_NIS
                                               : RB_IEKF_GATE_OFF;
    c->gate_value =
        c->gate == RB_IEKF_GATE_NIS ? rb_params_number(p, "gate_nis") : rb_params_number(p, "gate_probability");
    c->bias_window = rb_params_number(p, "bias_window");
    c->residual_cutoff = rb_params_number(p, "residual_cutoff");
    c->estimate_cutoff = rb_params_number(p, "estimate_cutoff");
    c->var_warn_factor = rb_params_number(p, "var_warn_factor");
    c->filter = kf ? RB_IEKF_KF_LINEAR : RB_IEKF_EKF_LOG_CHOLESKY;
    c->ddq = strcmp(rb_params_string(p, "ddq"), "central_difference") == 0 ? RB_IEKF_DDQ_CENTRAL : RB_IEKF_DDQ_GIVEN;
    if (conv->count != 1 && conv->count != cv->count)
        return rb_err_set(err, RB_ECONFIG, "contact_convention has %zu values: give 1 or %zu (one per contact)",
                          conv->count, cv->count);
    for (size_t i = 0; i < cv->count; i++) {
        int f;
        if ((rc = tq_find_frame(st, "contacts", i, cv->strings[i], &f, err)))
            return rc;
        const char *cc = conv->strings[conv->count == 1 ? 0 : i];
        contacts[i] = (rb_iekf_contact){f, strcmp(cc, "body") == 0 ? RB_DYN_BODY : RB_DYN_MIXED};
    }
    c->contacts = contacts, c->n_contacts = cv->count;
    return RB_OK;
}

static int check_ports(const rb_stage_setup *st, bool central, rb_err *err)
{
    const rb_model *m = st->model;
    size_t n = m->n_dofs, nc = rb_params_get(st->params, "contacts")->count;
    int rc;
    if ((rc = tq_check_port(st, IE_Q, n, "one per model joint", true, err)) ||
        (rc = tq_check_port(st, IE_DQ, n, "one per model joint", true, err)) ||
        (rc = tq_check_port(st, IE_TAU, n, "one per model joint", true, err)))
        return rc;
    if (central && st->in[IE_DDQ].width)
        return rb_err_set(err, RB_ECONFIG,
                          "ddq is \"central_difference\" but input ddq is wired: unwire it or set "
                          "ddq \"input\"");
    if (!central &&
        (rc = tq_check_port(st, IE_DDQ, n, "one per model joint; or ddq \"central_difference\"", true, err)))
        return rc;
    if ((nc || st->in[IE_CONTACTS].width) &&
        (rc = tq_check_port(st, IE_CONTACTS, 6 * nc, "6 per frame of contacts: [f; tau]", false, err)))
        return rc;
    if ((rc = tq_check_base_ports(st, IE_BASE_POS, IE_BASE_ACC, err)) || !m->floating)
        return rc;
    if (central && st->in[IE_BASE_ACC].width)
        return rb_err_set(err, RB_ECONFIG, "ddq is \"central_difference\" but input base_acc is wired: unwire it");
    if (!central && (rc = tq_check_port(st, IE_BASE_ACC, 6, "a floating base: d/dt of the base twist", false, err)))
        return rc;
    return RB_OK;
}

static const char *const pi_el[10] = {"m", "hx", "hy", "hz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz"};
static const char *const pi_unit[10] = {"kg",     "kg m",   "kg m",   "kg m",   "kg m^2",
                                        "kg m^2", "kg m^2", "kg m^2", "kg m^2", "kg m^2"};
static const char *const th_el[10] = {"alpha", "d1", "d2", "d3", "s12", "s13", "s23", "t1", "t2", "t3"};

static int make_names(ie_stage *s, const rb_iekf_config *c, bool kf, rb_err *err)
{
    const rb_model *m = s->model;
    size_t np = s->np, nv = s->nv, base = m->floating ? 6 : 0;
    static const char *const base_rows[6] = {"base/fx", "base/fy", "base/fz", "base/mx", "base/my", "base/mz"};
    s->body_names = rb_calloc(s->nb, sizeof *s->body_names);
    if (!s->body_names)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    int rc = tq_strings_alloc(&s->pi_names, np, err);
    rc = rc ? rc : tq_strings_alloc(&s->pi_units, np, err);
    rc = rc ? rc : tq_strings_alloc(&s->th_names, np, err);
    rc = rc ? rc : tq_strings_alloc(&s->th_units, np, err);
    rc = rc ? rc : tq_strings_alloc(&s->var_units, np, err);
    rc = rc ? rc : tq_strings_alloc(&s->mass_units, s->nb, err);
    rc = rc ? rc : tq_strings_alloc(&s->com_names, 3 * s->nb, err);
    rc = rc ? rc : tq_strings_alloc(&s->com_units, 3 * s->nb, err);
    rc = rc ? rc : tq_strings_alloc(&s->row_names, nv, err);
    rc = rc ? rc : tq_strings_alloc(&s->row_units, nv, err);
    for (size_t b = 0; !rc && b < s->nb; b++) {
        const char *bn = m->bodies[c->bodies[b]].name;
        s->body_names[b] = bn;
        rc = tq_strings_set(&s->mass_units, b, err, "kg");
        for (size_t j = 0; !rc && j < 10; j++) {
            const char *tu = c->form == RB_LCHOL_UUT && j >= 7 ? "m" : "";
            rc = tq_strings_set(&s->pi_names, 10 * b + j, err, "%s/%s", bn, pi_el[j]);
            rc = rc ? rc : tq_strings_set(&s->pi_units, 10 * b + j, err, "%s", pi_unit[j]);
            rc = rc ? rc : tq_strings_set(&s->th_names, 10 * b + j, err, "%s/%s", bn, th_el[j]);
            rc = rc ? rc : tq_strings_set(&s->th_units, 10 * b + j, err, "%s", tu);
            if (!rc && kf)
                rc = tq_strings_set(&s->var_units, 10 * b + j, err, "(%s)^2", pi_unit[j]);
            else if (!rc)
                rc = tq_strings_set(&s->var_units, 10 * b + j, err, "%s", tu[0] ? "m^2" : "");
        }
        for (size_t a = 0; !rc && a < 3; a++) {
            rc = tq_strings_set(&s->com_names, 3 * b + a, err, "%s/%c", bn, "xyz"[a]);
            rc = rc ? rc : tq_strings_set(&s->com_units, 3 * b + a, err, "m");
        }
    }
    for (size_t i = 0; !rc && i < nv; i++) {
        bool prism = i >= base && m->bodies[m->dof_body[i - base]].type == RB_JOINT_PRISMATIC;
        rc = tq_strings_set(&s->row_names, i, err, "%s", i < base ? base_rows[i] : m->dof_names[i - base]);
        rc = rc ? rc : tq_strings_set(&s->row_units, i, err, "%s", (i < base ? i < 3 : prism) ? "N" : "N m");
    }
    return rc;
}

int ie_create(const rb_stage_setup *st, void **state, rb_err *err)
{
    int rc = tq_need_model(st, err);
    if (rc)
        return rc;
    const rb_model *m = st->model;
    const rb_params *p = st->params;
    size_t nb = rb_params_get(p, "bodies")->count, nc = rb_params_get(p, "contacts")->count;
    bool central = strcmp(rb_params_string(p, "ddq"), "central_difference") == 0;
    bool kf = strcmp(rb_params_string(p, "filter"), "kf_linear") == 0;
    if ((rc = check_ports(st, central, err)))
        return rc;
    ie_stage *s = rb_calloc(1, sizeof *s);
    size_t *bodies = rb_calloc(nb ? nb : 1, sizeof *bodies);
    rb_iekf_contact *contacts = rb_calloc(nc ? nc : 1, sizeof *contacts);
    double *r = rb_calloc(m->nv, sizeof *r);
    if (!s || !bodies || !contacts || !r) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
        goto done;
    }
    s->model = m, s->nb = nb, s->np = 10 * nb, s->n = m->n_dofs, s->nv = m->nv, s->nq = m->nq, s->nc = nc;
    s->given_ddq = !central;
    rb_iekf_config c;
    if ((rc = make_config(st, &c, bodies, contacts, r, err)))
        goto done;
    if ((rc = rb_iekf_alloc(m, &c, &s->est, err)))
        goto done;
    if (!(s->q = rb_calloc(s->nq + 2 * s->nv, sizeof *s->q))) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
        goto done;
    }
    s->nu = s->q + s->nq, s->nu_dot = s->nu + s->nv;
    if ((rc = make_names(s, &c, kf, err)))
        goto done;
    size_t np = s->np;
    rb_port *o = st->out;
    o[IE_PI] = (rb_port){np, (const char *const *)s->pi_names.s, (const char *const *)s->pi_units.s};
    o[IE_PI_RAW] = o[IE_PI];
    o[IE_THETA] = (rb_port){np, (const char *const *)s->th_names.s, (const char *const *)s->th_units.s};
    o[IE_MASS] = (rb_port){nb, s->body_names, (const char *const *)s->mass_units.s};
    o[IE_COM] = (rb_port){3 * nb, (const char *const *)s->com_names.s, (const char *const *)s->com_units.s};
    o[IE_CONSISTENT] = (rb_port){nb, s->body_names, NULL};
    o[IE_RESIDUAL] = (rb_port){s->nv, (const char *const *)s->row_names.s, (const char *const *)s->row_units.s};
    o[IE_NIS] = (rb_port){1, NULL, NULL};
    o[IE_GATED] = (rb_port){1, NULL, NULL};
    o[IE_VAR] =
        (rb_port){np, (const char *const *)(kf ? s->pi_names.s : s->th_names.s), (const char *const *)s->var_units.s};
    o[IE_BIAS] = o[IE_RESIDUAL];
done:
    rb_free(bodies);
    rb_free(contacts);
    rb_free(r);
    if (rc) {
        ie_destroy(s);
        return rc;
    }
    *state = s;
    return RB_OK;
}

int ie_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    ie_stage *s = state;
    const rb_model *m = s->model;
    size_t n = s->n, b6 = m->floating ? 6 : 0;
    tq_gather_state(m, in, IE_Q, IE_DQ, IE_BASE_POS, s->q, s->nu);
    if (s->given_ddq && m->floating)
        memcpy(s->nu_dot, in[IE_BASE_ACC], 6 * sizeof(double));
    if (s->given_ddq)
        memcpy(s->nu_dot + b6, in[IE_DDQ], n * sizeof(double));
    int rc = rb_iekf_step(s->est, k, t, s->q, s->nu, s->given_ddq ? s->nu_dot : NULL, in[IE_TAU],
                          s->nc ? in[IE_CONTACTS] : NULL, err);
    if (rc)
        return tq_unname_sample(rc, k, err);
    rb_iekf_out o;
    rb_iekf_get_out(s->est, &o);
    size_t np = s->np, nb = s->nb;
    memcpy(out[IE_PI], o.pi, np * sizeof(double));
    memcpy(out[IE_PI_RAW], o.pi_raw, np * sizeof(double));
    memcpy(out[IE_THETA], o.theta, np * sizeof(double));
    memcpy(out[IE_MASS], o.mass, nb * sizeof(double));
    memcpy(out[IE_COM], o.com, 3 * nb * sizeof(double));
    for (size_t b = 0; b < nb; b++)
        out[IE_CONSISTENT][b] = o.consistent[b];
    memcpy(out[IE_RESIDUAL], o.residual, s->nv * sizeof(double));
    out[IE_NIS][0] = o.nis;
    out[IE_GATED][0] = o.gated;
    memcpy(out[IE_VAR], o.var, np * sizeof(double));
    memcpy(out[IE_BIAS], o.bias, s->nv * sizeof(double));
    return RB_OK;
}

int ie_finish(void *state, rb_err *err)
{
    ie_stage *s = state;
    char *summary = NULL, **w = NULL;
    size_t nw = 0;
    int rc = rb_iekf_summary(s->est, &summary, err);
    if (!rc)
        rc = rb_iekf_warnings(s->est, &w, &nw, err);
    if (rc) {
        rb_free(summary);
        return rc;
    }
    rb_strings_free(s->notes, s->n_notes);
    s->notes = rb_calloc(nw + 1, sizeof *s->notes);
    if (!s->notes) {
        rb_free(summary);
        rb_strings_free(w, nw);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    /* the counts are a warning only when samples went unused (a NaN torque, a non-finite motion); the two
     * predict-only steps that start the central difference are no news */
    rb_iekf_diag d;
    rb_iekf_get_diag(s->est, &d);
    bool news = d.rows_skipped > 0 || d.predict_only > (s->given_ddq ? 0 : 2);
    size_t n = 0;
    if (news)
        s->notes[n++] = summary;
    else
        rb_free(summary);
    for (size_t i = 0; i < nw; i++)
        s->notes[n++] = w[i];
    rb_free(w);
    s->n_notes = n;
    return RB_OK;
}

size_t ie_notes(void *state, const char *const **lines)
{
    ie_stage *s = state;
    *lines = (const char *const *)s->notes;
    return s->n_notes;
}
