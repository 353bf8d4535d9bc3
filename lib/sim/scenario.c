/* Simulation scenarios: JSON text -> validated rb_scenario (a filled rb_sim_scenario, its model, the sensors
 * and the output options). Keys are documented in roboest/sim.h ("scenarios"); messages and suggestions come
 * from the configuration toolkit (roboest/config.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/config.h"
#include "roboest/dynamics.h"
#include "roboest/sim.h"

typedef struct scn {
    rb_cfg c;
    rb_scenario *s;
} scn;

static int opt_bool(rb_cfg *c, const cJSON *obj, const char *key, bool *out)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return RB_OK;
    rb_cfg_push_key(c, key, 0);
    int rc = cJSON_IsBool(v) ? RB_OK : rb_cfg_error(c, "expected true or false");
    if (!rc)
        *out = cJSON_IsTrue(v);
    rb_cfg_pop(c);
    return rc;
}

/* A fixed-length array of numbers. */
static int want_numbers(rb_cfg *c, const cJSON *v, size_t n, double *out)
{
    if (!cJSON_IsArray(v) || (size_t)cJSON_GetArraySize(v) != n)
        return rb_cfg_error(c, "expected an array of %zu numbers", n);
    size_t i = 0;
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        rc = rb_cfg_want_number(c, e, &out[i]);
        rb_cfg_pop(c);
    }
    return rc;
}

/* Optional member `key`: n numbers (*out untouched when absent). */
static int opt_numbers(rb_cfg *c, const cJSON *obj, const char *key, size_t n, double *out)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return RB_OK;
    rb_cfg_push_key(c, key, 0);
    int rc = want_numbers(c, v, n, out);
    rb_cfg_pop(c);
    return rc;
}

/* A name among `names` (n), with a suggestion; error at the current path. */
static int want_name(rb_cfg *c, const char *what, const char *name, char *const *names, size_t n, size_t *index)
{
    rb_suggest sg;
    rb_suggest_init(&sg, name);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(names[i], name) == 0) {
            *index = i;
            return RB_OK;
        }
        rb_suggest_consider(&sg, names[i]);
    }
    const char *best = rb_suggest_best(&sg);
    if (best)
        return rb_cfg_error(c, "unknown %s '%s' (did you mean '%s'?)", what, name, best);
    return rb_cfg_error(c, "unknown %s '%s'", what, name);
}

static int want_joint(scn *x, const char *name, size_t *j)
{
    const rb_model *m = x->s->model;
    return want_name(&x->c, "joint", name, m->dof_names, m->n_dofs, j);
}

/* A model frame by name (string value at the current path). */
static int want_frame(scn *x, const cJSON *v, int *frame)
{
    rb_cfg *c = &x->c;
    const rb_model *m = x->s->model;
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return rb_cfg_error(c, "expected a frame name");
    long f = rb_model_frame_index(m, v->valuestring);
    if (f >= 0) {
        *frame = (int)f;
        return RB_OK;
    }
    rb_suggest sg;
    rb_suggest_init(&sg, v->valuestring);
    for (size_t i = 0; i < m->n_frames; i++)
        rb_suggest_consider(&sg, m->frames[i].name);
    const char *best = rb_suggest_best(&sg);
    if (best)
        return rb_cfg_error(c, "unknown frame '%s' (did you mean '%s'?)", v->valuestring, best);
    return rb_cfg_error(c, "unknown frame '%s'", v->valuestring);
}

static int member_frame(scn *x, const cJSON *obj, const char *key, bool required, int *frame)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return required ? rb_cfg_error(&x->c, "missing key '%s'", key) : RB_OK;
    rb_cfg_push_key(&x->c, key, 0);
    int rc = want_frame(x, v, frame);
    rb_cfg_pop(&x->c);
    return rc;
}

/* For each member of a {joint: value} object: `one` with the joint index, the member's key on the path. */
static int per_joint(scn *x, const cJSON *v, int (*one)(scn *, const cJSON *, size_t))
{
    rb_cfg *c = &x->c;
    int rc = rb_cfg_check_object(c, v, NULL, 0);
    for (const cJSON *e = v->child; e && !rc; e = e->next) {
        rb_cfg_push_key(c, e->string, 0);
        size_t j;
        rc = want_joint(x, e->string, &j);
        if (!rc)
            rc = one(x, e, j);
        rb_cfg_pop(c);
    }
    return rc;
}

/* ---- model ------------------------------------------------------------------------------------------------ */
static int alloc_joint_arrays(scn *x);

/* The model first: the other sections name its joints and frames, and the per-joint arrays follow its size. */
static int parse_model(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const keys[] = {"urdf", "joints", "base", "floating"};
    char *urdf = NULL, *base = NULL;
    char **joints = NULL;
    size_t n_joints = 0;
    bool floating = false;
    int rc = rb_cfg_check_object(c, v, keys, 4);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "urdf", true, &urdf);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "base", false, &base);
    if (!rc)
        rc = opt_bool(c, v, "floating", &floating);
    const cJSON *jv = rb_cfg_member(v, "joints");
    if (!rc && jv) {
        rb_cfg_push_key(c, "joints", 0);
        if (!cJSON_IsArray(jv) || cJSON_GetArraySize(jv) == 0)
            rc = rb_cfg_error(c, "expected a non-empty array of joint names");
        n_joints = rc ? 0 : (size_t)cJSON_GetArraySize(jv);
        if (!rc && !(joints = rb_calloc(n_joints, sizeof *joints)))
            rc = rb_cfg_nomem(c);
        size_t i = 0;
        for (const cJSON *e = jv->child; e && !rc; e = e->next, i++) {
            rb_cfg_push_index(c, i);
            rc = rb_cfg_want_string(c, e, false, &joints[i]);
            rb_cfg_pop(c);
        }
        rb_cfg_pop(c);
    }
    if (!rc) {
        x->s->urdf = rb_path_relative_to(c->base_file, urdf);
        if (!x->s->urdf)
            rc = rb_cfg_nomem(c);
    }
    if (!rc) {
        rb_model_opts mo = {.joints = (const char *const *)joints, .n_joints = n_joints, .base = base,
                            .floating = floating};
        rb_err e;
        if (rb_model_load_urdf(x->s->urdf, &mo, &x->s->model, &e) != RB_OK)
            rc = e.code == RB_ENOMEM ? rb_cfg_nomem(c) : rb_cfg_error(c, "%s", e.msg);
    }
    rb_free(urdf);
    rb_free(base);
    rb_strings_free(joints, n_joints);
    return rc ? rc : alloc_joint_arrays(x);
}

/* ---- scalar options ------------------------------------------------------------------------------------------- */
static int parse_method(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const methods[] = {"euler", "rk4", NULL};
    size_t i = 0;
    int rc = rb_cfg_want_choice(&x->c, v, methods, &i);
    x->s->sim.method = i == 1 ? RB_SIM_RK4 : RB_SIM_EULER;
    return rc;
}

static int parse_seed(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    double d;
    int rc = rb_cfg_want_number(&x->c, v, &d);
    if (!rc && !(d >= 0 && d <= 9007199254740992.0 && d == floor(d)))
        rc = rb_cfg_error(&x->c, "expected an integer in [0, 2^53]");
    if (!rc)
        x->s->sim.seed = (uint64_t)d;
    return rc;
}

/* Floating base: the initial pose of the base in the world (q0's first 7 coordinates). */
static int parse_base_pose(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const keys[] = {"position", "rpy"};
    double *q = x->s->q0, rpy[3] = {0, 0, 0}, R[9];
    int rc = rb_cfg_check_object(c, v, keys, 2);
    if (!rc && !x->s->model->floating)
        rc = rb_cfg_error(c, "only for a floating base (model.floating: true)");
    if (!rc)
        rc = opt_numbers(c, v, "position", 3, q);
    if (!rc)
        rc = opt_numbers(c, v, "rpy", 3, rpy);
    if (rc)
        return rc;
    rb_m3_from_rpy(rpy[0], rpy[1], rpy[2], R);
    rb_quat_from_m3(R, q + 3);
    return RB_OK;
}

static int one_q0(scn *x, const cJSON *v, size_t j)
{
    const rb_model *m = x->s->model;
    return rb_cfg_want_number(&x->c, v, &x->s->q0[m->nq - m->n_dofs + j]);
}

static int parse_q0(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    return per_joint(x, v, one_q0);
}

/* ---- references ------------------------------------------------------------------------------------------------ */
static int want_series(rb_cfg *c, const cJSON *obj, const char *key, size_t *n, double **out)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return rb_cfg_error(c, "missing key '%s'", key);
    rb_cfg_push_key(c, key, 0);
    int rc = RB_OK;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 2)
        rc = rb_cfg_error(c, "expected an array of at least 2 numbers");
    else if (*n && (size_t)cJSON_GetArraySize(v) != *n)
        rc = rb_cfg_error(c, "expected %zu numbers (as many as times)", *n);
    if (!rc) {
        *n = (size_t)cJSON_GetArraySize(v);
        *out = rb_malloc(*n * sizeof **out);
        rc = *out ? want_numbers(c, v, *n, *out) : rb_cfg_nomem(c);
    }
    rb_cfg_pop(c);
    return rc;
}

static int one_ref(scn *x, const cJSON *v, size_t j)
{
    static const char *const keys[] = {"kind", "offset", "amplitude", "freq", "freq_end",
                                       "phase", "t0", "t1", "times", "values"};
    static const char *const kinds[] = {"const", "sine", "chirp", "step", "spline", NULL};
    rb_cfg *c = &x->c;
    rb_sim_ref *r = &x->s->refs[j];
    const rb_model *m = x->s->model;
    size_t kind = 0;
    r->offset = x->s->q0[m->nq - m->n_dofs + j];
    int rc = rb_cfg_check_object(c, v, keys, 10);
    if (!rc && !rb_cfg_member(v, "kind"))
        rc = rb_cfg_error(c, "missing key 'kind'");
    if (!rc)
        rc = rb_cfg_member_choice(c, v, "kind", kinds, &kind);
    r->kind = (rb_ref_kind)kind;
    if (!rc)
        rc = rb_cfg_member_number(c, v, "offset", RB_CFG_ANY, &r->offset);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "amplitude", RB_CFG_ANY, &r->amplitude);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "freq", RB_CFG_NON_NEGATIVE, &r->freq);
    r->freq_end = r->freq;
    if (!rc)
        rc = rb_cfg_member_number(c, v, "freq_end", RB_CFG_NON_NEGATIVE, &r->freq_end);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "phase", RB_CFG_ANY, &r->phase);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "t0", RB_CFG_ANY, &r->t0);
    r->t1 = r->t0;
    if (!rc)
        rc = rb_cfg_member_number(c, v, "t1", RB_CFG_ANY, &r->t1);
    if (!rc && r->kind == RB_REF_CHIRP && !(r->t1 > r->t0)) {
        rb_cfg_push_key(c, rb_cfg_member(v, "t1") ? "t1" : "kind", 0);
        rc = rb_cfg_error(c, "a chirp needs t1 > t0");
        rb_cfg_pop(c);
    }
    if (!rc && r->kind == RB_REF_SPLINE) {
        size_t n = 0;
        double *times = NULL, *values = NULL;
        rc = want_series(c, v, "times", &n, &times);
        r->times = times;
        for (size_t i = 1; !rc && i < n; i++)
            if (!(times[i] > times[i - 1])) {
                rb_cfg_push_key(c, "times", 0);
                rb_cfg_push_index(c, i);
                rc = rb_cfg_error(c, "times must increase strictly");
                rb_cfg_pop(c);
                rb_cfg_pop(c);
            }
        if (!rc)
            rc = want_series(c, v, "values", &n, &values);
        r->values = values;
        r->n_points = n;
    } else if (!rc && (rb_cfg_member(v, "times") || rb_cfg_member(v, "values"))) {
        rb_cfg_push_key(c, rb_cfg_member(v, "times") ? "times" : "values", 0);
        rc = rb_cfg_error(c, "only for kind \"spline\"");
        rb_cfg_pop(c);
    }
    return rc;
}

static int parse_refs(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    return per_joint(x, v, one_ref);
}

/* ---- controller ------------------------------------------------------------------------------------------------- */
static int one_gain(scn *x, const cJSON *v, size_t j)
{
    static const char *const keys[] = {"kp", "kd", "kp_tau", "ki_tau"};
    rb_cfg *c = &x->c;
    rb_sim_joint_ctrl *g = &x->s->gains[j];
    int rc = rb_cfg_check_object(c, v, keys, 4);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "kp", RB_CFG_NON_NEGATIVE, &g->kp);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "kd", RB_CFG_NON_NEGATIVE, &g->kd);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "kp_tau", RB_CFG_NON_NEGATIVE, &g->kp_tau);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "ki_tau", RB_CFG_NON_NEGATIVE, &g->ki_tau);
    return rc;
}

/* Why a file cannot ask for estimated feedback (the closed loop's options). */
#define NEEDS_A_PROGRAM "external feedback needs a program driving the loop, such as roboest closed-loop"

/* controller.torque_feedback: "truth" | "none"; only with kind "torque". */
static int parse_torque_feedback(scn *x, const cJSON *ctrl)
{
    rb_cfg *c = &x->c;
    const cJSON *v = rb_cfg_member(ctrl, "torque_feedback");
    if (!v)
        return RB_OK;
    rb_cfg_push_key(c, "torque_feedback", 0);
    int rc = RB_OK;
    if (x->s->sim.ctrl != RB_CTRL_TORQUE)
        rc = rb_cfg_error(c, "only with controller.kind \"torque\"");
    else if (cJSON_IsString(v) && v->valuestring && strcmp(v->valuestring, "truth") == 0)
        x->s->sim.torque_feedback = RB_TFB_TRUTH;
    else if (cJSON_IsString(v) && v->valuestring && strcmp(v->valuestring, "none") == 0)
        x->s->sim.torque_feedback = RB_TFB_NONE;
    else if (cJSON_IsString(v) && v->valuestring)
        rc = rb_cfg_error(c, "unknown value '%s' (expected \"truth\" or \"none\"; " NEEDS_A_PROGRAM ")",
                          v->valuestring);
    else
        rc = rb_cfg_error(c, "expected \"truth\" or \"none\" (" NEEDS_A_PROGRAM ")");
    rb_cfg_pop(c);
    return rc;
}

/* controller.friction_compensation: only false in a file; only with kind "torque". */
static int parse_friction_compensation(scn *x, const cJSON *ctrl)
{
    rb_cfg *c = &x->c;
    bool on = false;
    int rc = opt_bool(c, ctrl, "friction_compensation", &on);
    if (rc || !rb_cfg_member(ctrl, "friction_compensation"))
        return rc;
    rb_cfg_push_key(c, "friction_compensation", 0);
    if (x->s->sim.ctrl != RB_CTRL_TORQUE)
        rc = rb_cfg_error(c, "only with controller.kind \"torque\"");
    else if (on)
        rc = rb_cfg_error(c, "only false in a scenario file: the compensation uses estimated friction torques ("
                             NEEDS_A_PROGRAM ")");
    rb_cfg_pop(c);
    return rc;
}

static int parse_controller(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const keys[] = {"kind", "gravity_comp", "gains", "torque_feedback", "friction_compensation"};
    static const char *const kinds[] = {"none", "pd", "torque", NULL};
    size_t kind = 0;
    int rc = rb_cfg_check_object(c, v, keys, 5);
    if (!rc)
        rc = rb_cfg_member_choice(c, v, "kind", kinds, &kind);
    x->s->sim.ctrl = (rb_ctrl_kind)kind;
    if (!rc)
        rc = opt_bool(c, v, "gravity_comp", &x->s->sim.gravity_comp);
    if (!rc)
        rc = parse_torque_feedback(x, v);
    if (!rc)
        rc = parse_friction_compensation(x, v);
    const cJSON *g = rb_cfg_member(v, "gains");
    if (!rc && g) {
        rb_cfg_push_key(c, "gains", 0);
        rc = per_joint(x, g, one_gain);
        rb_cfg_pop(c);
    }
    return rc;
}

/* ---- actuators and friction ------------------------------------------------------------------------------------ */
static int one_actuator(scn *x, const cJSON *v, size_t j)
{
    static const char *const keys[] = {"k_t", "R", "J_m", "i_max", "k_gear"};
    rb_cfg *c = &x->c;
    rb_sim_actuator *a = &x->s->actuators[j];
    int rc = rb_cfg_check_object(c, v, keys, 5);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "k_t", RB_CFG_POSITIVE, &a->k_t);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "R", RB_CFG_ANY, &a->R);
    if (!rc && a->R == 0) {
        rb_cfg_push_key(c, "R", 0);
        rc = rb_cfg_error(c, "must be non-zero");
        rb_cfg_pop(c);
    }
    if (!rc)
        rc = rb_cfg_member_number(c, v, "J_m", RB_CFG_NON_NEGATIVE, &a->J_m);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "i_max", RB_CFG_NON_NEGATIVE, &a->i_max);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "k_gear", RB_CFG_NON_NEGATIVE, &a->k_gear);
    return rc;
}

static int parse_actuators(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    return per_joint(x, v, one_actuator);
}

static int parse_drift(rb_cfg *c, const cJSON *v, rb_friction_drift *d)
{
    static const char *const keys[] = {"s0", "s1", "t0", "t1", "amplitude", "period", "phase", "mask"};
    int rc = rb_cfg_check_object(c, v, keys, 8);
    double mask = 0;
    if (!rc)
        rc = rb_cfg_member_number(c, v, "s0", RB_CFG_ANY, &d->s0);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "s1", RB_CFG_ANY, &d->s1);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "t0", RB_CFG_ANY, &d->t0);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "t1", RB_CFG_ANY, &d->t1);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "amplitude", RB_CFG_NON_NEGATIVE, &d->amplitude);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "period", RB_CFG_NON_NEGATIVE, &d->period);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "phase", RB_CFG_ANY, &d->phase);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "mask", RB_CFG_NON_NEGATIVE, &mask);
    if (!rc && !(mask == floor(mask) && mask < 64)) {
        rb_cfg_push_key(c, "mask", 0);
        rc = rb_cfg_error(c, "expected an integer bit mask below 64");
        rb_cfg_pop(c);
    }
    d->mask = (unsigned)mask;
    return rc;
}

static int one_friction(scn *x, const cJSON *v, size_t j)
{
    static const char *const keys[] = {"model", "params", "preset", "drift"};
    rb_cfg *c = &x->c;
    rb_friction_model *f = &x->s->friction[j];
    int rc = rb_cfg_check_object(c, v, keys, 4);
    const cJSON *model = rb_cfg_member(v, "model"), *preset = rb_cfg_member(v, "preset"),
                *params = rb_cfg_member(v, "params");
    if (!rc && !!model == !!preset)
        rc = rb_cfg_error(c, "expected either 'model' (with 'params') or 'preset'");
    if (!rc && preset && params) {
        rb_cfg_push_key(c, "params", 0);
        rc = rb_cfg_error(c, "not with 'preset'");
        rb_cfg_pop(c);
    }
    rb_err e;
    if (!rc && preset) {
        rb_cfg_push_key(c, "preset", 0);
        if (!cJSON_IsString(preset))
            rc = rb_cfg_error(c, "expected a string");
        else if (rb_friction_preset(preset->valuestring, f, &e) != RB_OK)
            rc = rb_cfg_error(c, "%s", e.msg);
        rb_cfg_pop(c);
    }
    if (!rc && model) {
        double p[RB_FRICTION_MAX_PARAMS];
        size_t n = 0;
        if (params) {
            rb_cfg_push_key(c, "params", 0);
            if (!cJSON_IsArray(params) || cJSON_GetArraySize(params) > RB_FRICTION_MAX_PARAMS)
                rc = rb_cfg_error(c, "expected an array of at most %d numbers", RB_FRICTION_MAX_PARAMS);
            n = rc ? 0 : (size_t)cJSON_GetArraySize(params);
            if (!rc)
                rc = want_numbers(c, params, n, p);
            rb_cfg_pop(c);
        }
        rb_cfg_push_key(c, "model", 0);
        if (!rc && !cJSON_IsString(model))
            rc = rb_cfg_error(c, "expected a string");
        else if (!rc && rb_friction_build(model->valuestring, p, n, f, &e) != RB_OK)
            rc = rb_cfg_error(c, "%s", e.msg);
        rb_cfg_pop(c);
    }
    const cJSON *drift = rb_cfg_member(v, "drift");
    if (!rc && drift) {
        rb_cfg_push_key(c, "drift", 0);
        rc = parse_drift(c, drift, &f->drift);
        if (!rc && rb_friction_validate(f, &e) != RB_OK)
            rc = rb_cfg_error(c, "%s", e.msg);
        rb_cfg_pop(c);
    }
    return rc;
}

static int parse_friction(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    return per_joint(x, v, one_friction);
}

/* ---- contacts and pushes -------------------------------------------------------------------------------------- */
static int parse_contacts(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const keys[] = {"frame", "dim", "baumgarte_T", "active"};
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, "expected an array of contacts");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (!(x->s->contacts = rb_calloc(n ? n : 1, sizeof *x->s->contacts)))
        return rb_cfg_nomem(c);
    x->s->sim.contacts = x->s->contacts;
    x->s->sim.n_contacts = n;
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_sim_contact *k = &x->s->contacts[i];
        double dim = 6;
        k->baumgarte_T = 0.02;
        k->initially_active = true;
        rb_cfg_push_index(c, i);
        rc = rb_cfg_check_object(c, e, keys, 4);
        if (!rc)
            rc = member_frame(x, e, "frame", true, &k->frame);
        for (size_t j = 0; !rc && j < i; j++)
            if (x->s->contacts[j].frame == k->frame) {
                rb_cfg_push_key(c, "frame", 0);
                rc = rb_cfg_error(c, "frame '%s' already has contacts[%zu]", x->s->model->frames[k->frame].name, j);
                rb_cfg_pop(c);
            }
        if (!rc)
            rc = rb_cfg_member_number(c, e, "dim", RB_CFG_ANY, &dim);
        if (!rc && dim != 3 && dim != 6) {
            rb_cfg_push_key(c, "dim", 0);
            rc = rb_cfg_error(c, "must be 3 or 6");
            rb_cfg_pop(c);
        }
        k->dim = (int)dim;
        if (!rc)
            rc = rb_cfg_member_number(c, e, "baumgarte_T", RB_CFG_NON_NEGATIVE, &k->baumgarte_T);
        if (!rc)
            rc = opt_bool(c, e, "active", &k->initially_active);
        rb_cfg_pop(c);
    }
    return rc;
}

/* The contact an event switches: its index in "contacts" or the name of its frame. */
static int event_contact(scn *x, const cJSON *v, size_t *k)
{
    rb_cfg *c = &x->c;
    const rb_scenario *s = x->s;
    size_t n = s->sim.n_contacts;
    if (n == 0)
        return rb_cfg_error(c, "the scenario has no contacts to switch (add them under 'contacts')");
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (!(d >= 0 && d < (double)n && d == floor(d)))
            return rb_cfg_error(c, "expected a contact index in [0, %zu] or a contact's frame name", n - 1);
        *k = (size_t)d;
        return RB_OK;
    }
    if (!cJSON_IsString(v))
        return rb_cfg_error(c, "expected a contact index or a contact's frame name");
    char **names = rb_malloc(n * sizeof *names);
    if (!names)
        return rb_cfg_nomem(c);
    for (size_t i = 0; i < n; i++)
        names[i] = s->model->frames[s->contacts[i].frame].name;
    int rc = want_name(c, "contact frame", v->valuestring, names, n, k);
    rb_free(names);
    return rc;
}

static int parse_events(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const keys[] = {"t", "contact", "active"};
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, "expected an array of contact events");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (!(x->s->events = rb_calloc(n ? n : 1, sizeof *x->s->events)))
        return rb_cfg_nomem(c);
    x->s->sim.events = x->s->events;
    x->s->sim.n_events = n;
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_sim_contact_event *ev = &x->s->events[i];
        rb_cfg_push_index(c, i);
        rc = rb_cfg_check_object(c, e, keys, 3);
        for (size_t k = 0; !rc && k < 3; k++)
            if (!rb_cfg_member(e, keys[k]))
                rc = rb_cfg_error(c, "missing key '%s'", keys[k]);
        if (!rc)
            rc = rb_cfg_member_number(c, e, "t", RB_CFG_NON_NEGATIVE, &ev->t);
        if (!rc) {
            rb_cfg_push_key(c, "contact", 0);
            rc = event_contact(x, rb_cfg_member(e, "contact"), &ev->contact);
            rb_cfg_pop(c);
        }
        if (!rc)
            rc = opt_bool(c, e, "active", &ev->active);
        rb_cfg_pop(c);
    }
    return rc;
}

static const char *const SHAPES[] = {"rect", "half_sine", "triangle", NULL};

static int parse_pushes(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const keys[] = {"frame", "shape", "start", "duration", "wrench"};
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, "expected an array of pushes");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (!(x->s->pushes = rb_calloc(n ? n : 1, sizeof *x->s->pushes)))
        return rb_cfg_nomem(c);
    x->s->sim.pushes = x->s->pushes;
    x->s->sim.n_pushes = n;
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_sim_push *p = &x->s->pushes[i];
        size_t shape = 0;
        rb_cfg_push_index(c, i);
        rc = rb_cfg_check_object(c, e, keys, 5);
        if (!rc)
            rc = member_frame(x, e, "frame", true, &p->frame);
        if (!rc)
            rc = rb_cfg_member_choice(c, e, "shape", SHAPES, &shape);
        p->shape = (rb_push_shape)shape;
        if (!rc)
            rc = rb_cfg_member_number(c, e, "start", RB_CFG_NON_NEGATIVE, &p->start);
        p->duration = -1;
        if (!rc)
            rc = rb_cfg_member_number(c, e, "duration", RB_CFG_POSITIVE, &p->duration);
        if (!rc && p->duration < 0)
            rc = rb_cfg_error(c, "missing key 'duration'");
        const cJSON *w = rb_cfg_member(e, "wrench");
        if (!rc && !w)
            rc = rb_cfg_error(c, "missing key 'wrench'");
        if (!rc) {
            rb_cfg_push_key(c, "wrench", 0);
            rc = want_numbers(c, w, 6, p->peak);
            rb_cfg_pop(c);
        }
        rb_cfg_pop(c);
    }
    return rc;
}

static int parse_random_pushes(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const keys[] = {"frame", "shape", "rate", "duration", "force_min", "force_max"};
    rb_sim_random_pushes *r = &x->s->sim.random_pushes;
    size_t shape = 0;
    int rc = rb_cfg_check_object(c, v, keys, 6);
    if (!rc)
        rc = member_frame(x, v, "frame", true, &r->frame);
    if (!rc)
        rc = rb_cfg_member_choice(c, v, "shape", SHAPES, &shape);
    r->shape = (rb_push_shape)shape;
    r->duration = 0.1;
    if (!rc)
        rc = rb_cfg_member_number(c, v, "rate", RB_CFG_POSITIVE, &r->rate);
    if (!rc && !rb_cfg_member(v, "rate"))
        rc = rb_cfg_error(c, "missing key 'rate'");
    if (!rc)
        rc = rb_cfg_member_number(c, v, "duration", RB_CFG_POSITIVE, &r->duration);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "force_min", RB_CFG_NON_NEGATIVE, &r->force_min);
    r->force_max = r->force_min;
    if (!rc)
        rc = rb_cfg_member_number(c, v, "force_max", RB_CFG_NON_NEGATIVE, &r->force_max);
    if (!rc && r->force_max < r->force_min) {
        rb_cfg_push_key(c, "force_max", 0);
        rc = rb_cfg_error(c, "must be >= force_min");
        rb_cfg_pop(c);
    }
    return rc;
}

/* ---- payload and balancing --------------------------------------------------------------------------------------- */
/* A model body by name (string value at the current path). A link merged into a body by a fixed joint is
 * named with its body, since the payload changes a whole body. */
static int want_body(scn *x, const cJSON *v, int *body)
{
    rb_cfg *c = &x->c;
    const rb_model *m = x->s->model;
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return rb_cfg_error(c, "expected a body (link) name");
    long b = rb_model_body_index(m, v->valuestring);
    if (b >= 0) {
        *body = (int)b;
        return RB_OK;
    }
    long f = rb_model_frame_index(m, v->valuestring);
    if (f >= 0 && m->frames[f].kind == RB_FRAME_LINK)
        return rb_cfg_error(c, "link '%s' is merged into body '%s' (fixed joint): name the body", v->valuestring,
                            m->bodies[m->frames[f].body].name);
    rb_suggest sg;
    rb_suggest_init(&sg, v->valuestring);
    for (size_t i = 0; i < m->n_bodies; i++)
        rb_suggest_consider(&sg, m->bodies[i].name);
    const char *best = rb_suggest_best(&sg);
    if (best)
        return rb_cfg_error(c, "unknown body '%s' (did you mean '%s'?)", v->valuestring, best);
    return rb_cfg_error(c, "unknown body '%s'", v->valuestring);
}

static int physical_or_error(rb_cfg *c, const char *key, const double pi[10])
{
    if (rb_inertia_is_physical(pi))
        return RB_OK;
    rb_cfg_push_key(c, key, 0);
    int rc = rb_cfg_error(c, "not physically valid (mass %g; the inertia about the centre of mass must be positive "
                             "semi-definite and satisfy the triangle inequalities)", pi[0]);
    rb_cfg_pop(c);
    return rc;
}

/* Parameters (about the body frame) of a rigid mass `mass` with its centre of mass at com (body frame) and
 * rotational inertia Ic about that centre, in body axes (parallel axes: I = Ic + m (|c|^2 1 - c c^T)). */
static void added_mass_params(double mass, const double com[3], const double Ic[6], double pi[10])
{
    double cc = com[0] * com[0] + com[1] * com[1] + com[2] * com[2];
    pi[0] = mass;
    for (int i = 0; i < 3; i++)
        pi[1 + i] = mass * com[i];
    pi[4] = Ic[0] + mass * (cc - com[0] * com[0]);
    pi[5] = Ic[1] - mass * com[0] * com[1];
    pi[6] = Ic[2] - mass * com[0] * com[2];
    pi[7] = Ic[3] + mass * (cc - com[1] * com[1]);
    pi[8] = Ic[4] - mass * com[1] * com[2];
    pi[9] = Ic[5] + mass * (cc - com[2] * com[2]);
}

static int parse_added(rb_cfg *c, const cJSON *v, const double pi_a[10], double pi_b[10])
{
    static const char *const keys[] = {"mass", "com", "inertia"};
    double mass = -1, com[3] = {0, 0, 0}, Ic[6] = {0, 0, 0, 0, 0, 0}, own[10];
    int rc = rb_cfg_check_object(c, v, keys, 3);
    if (!rc && !rb_cfg_member(v, "mass"))
        rc = rb_cfg_error(c, "missing key 'mass'");
    if (!rc)
        rc = rb_cfg_member_number(c, v, "mass", RB_CFG_POSITIVE, &mass);
    if (!rc)
        rc = opt_numbers(c, v, "com", 3, com);
    if (!rc)
        rc = opt_numbers(c, v, "inertia", 6, Ic);
    double about_com[10] = {mass, 0, 0, 0, Ic[0], Ic[1], Ic[2], Ic[3], Ic[4], Ic[5]};
    if (!rc)
        rc = physical_or_error(c, "inertia", about_com);
    if (!rc) {
        added_mass_params(mass, com, Ic, own);
        for (int i = 0; i < 10; i++)
            pi_b[i] = pi_a[i] + own[i];
    }
    return rc;
}

static int parse_payload(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const keys[] = {"link", "kind", "t0", "period", "pi_a", "pi_b", "added"};
    static const char *const kinds[] = {"square", "sine", "steps", NULL};
    rb_sim_payload *p = &x->s->sim.payload;
    size_t kind = 0;
    int rc = rb_cfg_check_object(c, v, keys, 7);
    if (!rc && !rb_cfg_member(v, "link"))
        rc = rb_cfg_error(c, "missing key 'link'");
    if (!rc) {
        rb_cfg_push_key(c, "link", 0);
        rc = want_body(x, rb_cfg_member(v, "link"), &p->body);
        rb_cfg_pop(c);
    }
    if (!rc && !rb_cfg_member(v, "kind"))
        rc = rb_cfg_error(c, "missing key 'kind'");
    if (!rc)
        rc = rb_cfg_member_choice(c, v, "kind", kinds, &kind);
    p->kind = (rb_payload_kind)(kind + 1);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "t0", RB_CFG_NON_NEGATIVE, &p->t0);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "period", RB_CFG_POSITIVE, &p->period);
    if (!rc && p->kind == RB_PAYLOAD_STEPS && rb_cfg_member(v, "period")) {
        rb_cfg_push_key(c, "period", 0);
        rc = rb_cfg_error(c, "only for kind \"square\" or \"sine\" (\"steps\" changes once, at t0)");
        rb_cfg_pop(c);
    } else if (!rc && p->kind != RB_PAYLOAD_STEPS && !rb_cfg_member(v, "period")) {
        rc = rb_cfg_error(c, "missing key 'period' (kind \"%s\" repeats)", kinds[kind]);
    }
    if (!rc)
        memcpy(p->pi_a, x->s->model->bodies[p->body].inertia, sizeof p->pi_a);
    if (!rc)
        rc = opt_numbers(c, v, "pi_a", 10, p->pi_a);
    if (!rc)
        rc = physical_or_error(c, "pi_a", p->pi_a);
    const cJSON *added = rb_cfg_member(v, "added"), *pi_b = rb_cfg_member(v, "pi_b");
    if (!rc && !!added == !!pi_b)
        rc = rb_cfg_error(c, "expected either 'pi_b' (10 parameters) or 'added' (a rigid mass on the body)");
    if (!rc && pi_b)
        rc = opt_numbers(c, v, "pi_b", 10, p->pi_b);
    if (!rc && added) {
        rb_cfg_push_key(c, "added", 0);
        rc = parse_added(c, added, p->pi_a, p->pi_b);
        rb_cfg_pop(c);
    }
    if (!rc)
        rc = physical_or_error(c, added ? "added" : "pi_b", p->pi_b);
    return rc;
}

static int parse_balance(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const keys[] = {"amplitude", "freq", "ik_T"};
    rb_sim_balance *b = &x->s->sim.balance;
    int rc = rb_cfg_check_object(c, v, keys, 3);
    for (size_t k = 0; !rc && k < 2; k++)
        if (!rb_cfg_member(v, keys[k]))
            rc = rb_cfg_error(c, "missing key '%s'", keys[k]);
    b->ik_T = 0.02;
    if (!rc)
        rc = rb_cfg_member_number(c, v, "amplitude", RB_CFG_NON_NEGATIVE, &b->amplitude);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "freq", RB_CFG_NON_NEGATIVE, &b->freq);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "ik_T", RB_CFG_POSITIVE, &b->ik_T);
    if (!rc && !x->s->model->floating)
        rc = rb_cfg_error(c, "needs a floating base (model.floating: true)");
    if (!rc && x->s->sim.n_contacts == 0)
        rc = rb_cfg_error(c, "needs contacts (the feet that stay planted, under 'contacts')");
    b->enabled = rc == RB_OK;
    return rc;
}

/* ---- sensors ----------------------------------------------------------------------------------------------------- */
static const char *const SENSOR_KINDS[] = {"joint_encoder", "motor_encoder", "motor_current", "ft",
                                           "accelerometer", "gyroscope", "orientation", NULL};
static const rb_sensor_kind SENSOR_KIND_OF[] = {RB_SENS_JOINT_ENCODER, RB_SENS_MOTOR_ENCODER, RB_SENS_MOTOR_CURRENT,
                                                RB_SENS_FT, RB_SENS_ACCELEROMETER, RB_SENS_GYROSCOPE,
                                                RB_SENS_ORIENTATION};
static const rb_scn_source SOURCE_OF[] = {RB_SCN_JOINT_POS, RB_SCN_MOTOR_POS, RB_SCN_MOTOR_CURRENT, RB_SCN_FT,
                                          RB_SCN_ACC, RB_SCN_GYRO, RB_SCN_ORIENTATION};
static const char *const CHANNEL_OF[] = {"joints_state/positions", "motors_state/positions", "motors_state/currents",
                                         "FTs/", "accelerometers/", "gyros/", "orientations/"};

enum { N_VECS = 8 };
static const char *const VEC_KEYS[N_VECS] = {"noise", "bias", "drift_rw", "drift_rate", "resolution",
                                             "offset", "lo", "hi"};

static rb_sensor_vec *vec_field(rb_sensor_params *p, size_t k)
{
    rb_sensor_vec *f[] = {&p->noise_std, &p->bias, &p->drift_rw_std, &p->drift_rate, &p->resolution,
                          &p->offset, &p->lo, &p->hi};
    return f[k];
}

/* Override k: a number (every element) or an array of n numbers. */
static int sensor_vec(rb_cfg *c, const cJSON *obj, size_t k, rb_scenario_sensor *ss)
{
    const cJSON *v = rb_cfg_member(obj, VEC_KEYS[k]);
    if (!v)
        return RB_OK;
    rb_sensor_vec *f = vec_field(&ss->params, k);
    rb_cfg_push_key(c, VEC_KEYS[k], 0);
    int rc;
    if (cJSON_IsArray(v)) {
        double *each = ss->values + k * ss->params.n;
        rc = want_numbers(c, v, ss->params.n, each);
        f->each = each;
    } else {
        rc = rb_cfg_want_number(c, v, &f->all);
        f->each = NULL;
    }
    rb_cfg_pop(c);
    return rc;
}

/* The IMU frame: a model frame, or a model IMU sensor's name. */
static int sensor_frame(scn *x, const cJSON *v, int *frame)
{
    const rb_model *m = x->s->model;
    for (size_t i = 0; cJSON_IsString(v) && i < m->n_imu; i++)
        if (strcmp(m->imu[i].name, v->valuestring) == 0 && rb_model_frame_index(m, v->valuestring) < 0) {
            *frame = m->imu[i].frame;
            return RB_OK;
        }
    return want_frame(x, v, frame);
}

static int frame_slot(scn *x, int frame, size_t *slot)
{
    int *frames = x->s->frames;
    size_t n = x->s->sim.n_frames;
    for (size_t i = 0; i < n; i++)
        if (frames[i] == frame) {
            *slot = i;
            return RB_OK;
        }
    frames[n] = frame;
    x->s->sim.n_frames = n + 1;
    *slot = n;
    return RB_OK;
}

static int one_sensor(scn *x, const cJSON *e, rb_scenario_sensor *ss)
{
    static const char *const keys[] = {"kind", "name", "ft", "frame", "rate", "jitter", "noise", "bias",
                                       "drift_rw", "drift_rate", "resolution", "offset", "lo", "hi"};
    rb_cfg *c = &x->c;
    const rb_model *m = x->s->model;
    size_t kind = 0;
    char *name = NULL;
    int rc = rb_cfg_check_object(c, e, keys, 14);
    if (!rc && !rb_cfg_member(e, "kind"))
        rc = rb_cfg_error(c, "missing key 'kind'");
    if (!rc)
        rc = rb_cfg_member_choice(c, e, "kind", SENSOR_KINDS, &kind);
    if (!rc)
        rc = rb_cfg_member_string(c, e, "name", false, &name);
    ss->source = SOURCE_OF[kind];
    bool joint_level = kind <= 2, is_ft = kind == 3;
    const char *ft_key = is_ft ? "ft" : "frame", *other = is_ft ? "frame" : "ft";
    if (!rc && joint_level && (rb_cfg_member(e, "ft") || rb_cfg_member(e, "frame"))) {
        rb_cfg_push_key(c, rb_cfg_member(e, "ft") ? "ft" : "frame", 0);
        rc = rb_cfg_error(c, "not for a %s sensor (it covers every joint)", SENSOR_KINDS[kind]);
        rb_cfg_pop(c);
    } else if (!rc && !joint_level && rb_cfg_member(e, other)) {
        rb_cfg_push_key(c, other, 0);
        rc = rb_cfg_error(c, "not for a%s %s sensor (use '%s')", strchr("aeiou", SENSOR_KINDS[kind][0]) ? "n" : "",
                          SENSOR_KINDS[kind], ft_key);
        rb_cfg_pop(c);
    }
    const char *leaf = NULL;
    if (!rc && !joint_level) {
        const cJSON *v = rb_cfg_member(e, ft_key);
        if (!v)
            rc = rb_cfg_error(c, "missing key '%s'", ft_key);
        if (!rc) {
            rb_cfg_push_key(c, ft_key, 0);
            if (is_ft) {
                char **names = rb_malloc((m->n_ft ? m->n_ft : 1) * sizeof *names);
                if (!names)
                    rc = rb_cfg_nomem(c);
                for (size_t i = 0; !rc && i < m->n_ft; i++)
                    names[i] = m->ft[i].name;
                if (!rc && !cJSON_IsString(v))
                    rc = rb_cfg_error(c, "expected an FT sensor name");
                if (!rc)
                    rc = want_name(c, "FT sensor", v->valuestring, names, m->n_ft, &ss->index);
                rb_free(names);
            } else {
                int frame = -1;
                rc = sensor_frame(x, v, &frame);
                if (!rc)
                    rc = frame_slot(x, frame, &ss->index);
            }
            leaf = rc ? NULL : v->valuestring;
            rb_cfg_pop(c);
        }
    }
    if (!rc) {
        const char *prefix = CHANNEL_OF[kind];
        const char *tail = joint_level ? "" : name ? name : leaf;
        size_t len = strlen(prefix) + strlen(tail) + 1;
        if (!(ss->channel = rb_malloc(len)))
            rc = rb_cfg_nomem(c);
        else
            snprintf(ss->channel, len, "%s%s", prefix, tail);
    }
    if (!rc && joint_level && name) {
        rb_cfg_push_key(c, "name", 0);
        rc = rb_cfg_error(c, "not for a %s sensor (its channel is %s)", SENSOR_KINDS[kind], ss->channel);
        rb_cfg_pop(c);
    }
    rb_free(name);
    if (rc)
        return rc;
    ss->params = rb_sensor_preset(SENSOR_KIND_OF[kind], ss->channel, m->n_dofs);
    if (!(ss->values = rb_calloc(N_VECS * ss->params.n, sizeof *ss->values)))
        return rb_cfg_nomem(c);
    rc = rb_cfg_member_number(c, e, "rate", RB_CFG_POSITIVE, &ss->params.rate_hz);
    if (!rc)
        rc = rb_cfg_member_number(c, e, "jitter", RB_CFG_NON_NEGATIVE, &ss->params.jitter_s);
    for (size_t k = 0; !rc && k < N_VECS; k++)
        rc = sensor_vec(c, e, k, ss);
    rb_err err;
    if (!rc && rb_sensor_params_validate(&ss->params, &err) != RB_OK)
        rc = rb_cfg_error(c, "%s", err.msg);
    return rc;
}

static int parse_sensors(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, "expected an array of sensors");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    x->s->sensors = rb_calloc(n ? n : 1, sizeof *x->s->sensors);
    x->s->frames = rb_calloc(n ? n : 1, sizeof *x->s->frames);
    if (!x->s->sensors || !x->s->frames)
        return rb_cfg_nomem(c);
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        x->s->n_sensors = i + 1;
        rc = one_sensor(x, e, &x->s->sensors[i]);
        for (size_t k = 0; !rc && k < i; k++)
            if (strcmp(x->s->sensors[k].channel, x->s->sensors[i].channel) == 0)
                rc = rb_cfg_error(c, "channel '%s' is already given by sensors[%zu]", x->s->sensors[i].channel, k);
        rb_cfg_pop(c);
    }
    if (x->s->sim.n_frames)
        x->s->sim.frames = x->s->frames;
    return rc;
}

/* ---- the top level ------------------------------------------------------------------------------------------------ */
static int parse_name(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    rb_free(x->s->name);
    x->s->name = NULL;
    return rb_cfg_want_string(&x->c, v, false, &x->s->name);
}

static int parse_duration(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    int rc = rb_cfg_want_number(&x->c, v, &x->s->sim.duration);
    return !rc && x->s->sim.duration < 0 ? rb_cfg_error(&x->c, "must be >= 0") : rc;
}

static int parse_dt(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    int rc = rb_cfg_want_number(&x->c, v, &x->s->sim.dt);
    return !rc && !(x->s->sim.dt > 0) ? rb_cfg_error(&x->c, "must be > 0") : rc;
}

static int parse_joint_limits(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    if (!cJSON_IsBool(v))
        return rb_cfg_error(&x->c, "expected true or false");
    x->s->sim.joint_limits = cJSON_IsTrue(v);
    return RB_OK;
}

static int parse_log_rate(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    int rc = rb_cfg_want_number(&x->c, v, &x->s->log_rate);
    return !rc && !(x->s->log_rate > 0) ? rb_cfg_error(&x->c, "must be > 0") : rc;
}

/* In reading order: the model first (the other sections name its joints and frames), q0 before the references
 * (their default offset). */
static const rb_cfg_section sections[] = {
    {"name", false, parse_name},
    {"model", true, parse_model},
    {"duration", true, parse_duration},
    {"dt", false, parse_dt},
    {"method", false, parse_method},
    {"log_rate", false, parse_log_rate},
    {"seed", false, parse_seed},
    {"base_pose", false, parse_base_pose},
    {"q0", false, parse_q0},
    {"references", false, parse_refs},
    {"controller", false, parse_controller},
    {"actuators", false, parse_actuators},
    {"friction", false, parse_friction},
    {"joint_limits", false, parse_joint_limits},
    {"contacts", false, parse_contacts},
    {"events", false, parse_events},
    {"pushes", false, parse_pushes},
    {"random_pushes", false, parse_random_pushes},
    {"payload", false, parse_payload},
    {"balance", false, parse_balance},
    {"sensors", false, parse_sensors},
};


/* The per-joint arrays, once the model is known. */
static int alloc_joint_arrays(scn *x)
{
    rb_scenario *s = x->s;
    const rb_model *m = s->model;
    size_t n = m->n_dofs ? m->n_dofs : 1;
    s->q0 = rb_calloc(m->nq, sizeof *s->q0);
    s->refs = rb_calloc(n, sizeof *s->refs);
    s->gains = rb_calloc(n, sizeof *s->gains);
    s->actuators = rb_calloc(n, sizeof *s->actuators);
    s->friction = rb_calloc(n, sizeof *s->friction);
    if (!s->q0 || !s->refs || !s->gains || !s->actuators || !s->friction)
        return rb_cfg_nomem(&x->c);
    rb_dyn_neutral(m, s->q0);
    for (size_t j = 0; j < m->n_dofs; j++)
        s->actuators[j] = (rb_sim_actuator){.k_t = 1, .R = 1};
    s->sim.model = m;
    s->sim.q0 = s->q0;
    s->sim.refs = s->refs;
    s->sim.gains = s->gains;
    s->sim.actuators = s->actuators;
    s->sim.friction = s->friction;
    return RB_OK;
}

static int parse_root(scn *x, const cJSON *root)
{
    rb_cfg *c = &x->c;
    int rc = rb_cfg_sections(c, root, sections, sizeof sections / sizeof sections[0]);
    if (!rc && x->s->log_rate == 0)
        x->s->log_rate = 1.0 / x->s->sim.dt;
    if (!rc && x->s->sim.ctrl == RB_CTRL_NONE && rb_cfg_member(root, "references")) {
        rb_cfg_push_key(c, "references", 0);
        rc = rb_cfg_error(c, "references need a controller (controller.kind \"pd\" or \"torque\")");
        rb_cfg_pop(c);
    }
    if (!rc && x->s->sim.balance.enabled && rb_cfg_member(root, "references")) {
        rb_cfg_push_key(c, "references", 0);
        rc = rb_cfg_error(c, "not with 'balance' (balancing makes every joint's reference)");
        rb_cfg_pop(c);
    }
    if (!rc && x->s->sim.balance.enabled && x->s->sim.ctrl == RB_CTRL_NONE) {
        rb_cfg_push_key(c, "balance", 0);
        rc = rb_cfg_error(c, "needs a controller (controller.kind \"pd\" or \"torque\")");
        rb_cfg_pop(c);
    }
    return rc;
}

void rb_scenario_free(rb_scenario *s)
{
    if (!s)
        return;
    for (size_t j = 0; s->refs && s->model && j < s->model->n_dofs; j++) {
        rb_free((void *)s->refs[j].times);
        rb_free((void *)s->refs[j].values);
    }
    for (size_t i = 0; s->sensors && i < s->n_sensors; i++) {
        rb_free(s->sensors[i].channel);
        rb_free(s->sensors[i].values);
    }
    rb_free(s->sensors);
    rb_free(s->frames);
    rb_free(s->q0);
    rb_free(s->refs);
    rb_free(s->gains);
    rb_free(s->actuators);
    rb_free(s->friction);
    rb_free(s->contacts);
    rb_free(s->events);
    rb_free(s->pushes);
    rb_model_free(s->model);
    rb_free(s->urdf);
    rb_free(s->name);
    rb_free(s->path);
    rb_free(s->sha256);
    rb_free(s);
}

static int init_scenario(void *doc, const char *file, const char *name, const char *sha256)
{
    rb_scenario *s = doc;
    s->sha256 = rb_strdup(sha256);
    s->path = rb_strdup(file);
    s->name = rb_strdup(name);
    s->sim.dt = 0.001;
    return s->sha256 && s->path && s->name ? RB_OK : RB_ENOMEM;
}

static int parse_scenario(const rb_cfg *c, const cJSON *root, void *doc, const void *unused)
{
    (void)unused;
    scn x = {*c, doc};
    return parse_root(&x, root);
}

static void free_scenario(void *doc) { rb_scenario_free(doc); }

static const rb_cfg_format scenario_format = {"scenario.json", "scenario", true, sizeof(rb_scenario), init_scenario,
                                              parse_scenario, free_scenario};

int rb_scenario_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                          rb_scenario **out, rb_err *err)
{
    return rb_cfg_load_text(&scenario_format, text, len, name_for_messages, base_file, NULL, (void **)out, err);
}

int rb_scenario_load(const char *path, rb_scenario **out, rb_err *err)
{
    return rb_cfg_load(&scenario_format, path, NULL, (void **)out, err);
}
