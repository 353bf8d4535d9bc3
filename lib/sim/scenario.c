/* Simulation scenarios: JSON text -> validated rb_scenario (a filled rb_sim_scenario, its model, the sensors
 * and the output options). Keys are documented in roboest/sim.h ("scenarios"); messages and suggestions come
 * from the configuration toolkit (roboest/config.h). The sections about contacts, events, pushes, payload,
 * balancing and sensors are in scenario_world.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/config.h"
#include "roboest/dynamics.h"
#include "roboest/sim.h"

#include "scenario_internal.h"

static int want_joint(scn *x, const char *name, size_t *j)
{
    const rb_model *m = x->s->model;
    return sim_scn_want_name(&x->c, "joint", name, m->dof_names, m->n_dofs, j);
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
        rc = sim_scn_opt_bool(c, v, "floating", &floating);
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
        rb_model_opts mo = {
            .joints = (const char *const *)joints, .n_joints = n_joints, .base = base, .floating = floating};
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
    int rc = rb_cfg_want_choice(c, v, methods, &i);
    x->s->sim.method = i == 1 ? RB_SIM_RK4 : RB_SIM_EULER;
    return rc;
}

static int parse_seed(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    double d;
    int rc = rb_cfg_want_number(c, v, &d);
    if (!rc && !(d >= 0 && d <= 9007199254740992.0 && d == floor(d)))
        rc = rb_cfg_error(c, "expected an integer in [0, 2^53]");
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
        rc = sim_scn_opt_numbers(c, v, "position", 3, q);
    if (!rc)
        rc = sim_scn_opt_numbers(c, v, "rpy", 3, rpy);
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
    int rc = per_joint(x, v, one_q0);
    /* every joint's reference holds its q0 unless the references say otherwise */
    const rb_model *m = x->s->model;
    for (size_t j = 0; !rc && j < m->n_dofs; j++)
        x->s->refs[j].offset = x->s->q0[m->nq - m->n_dofs + j];
    return rc;
}

/* ---- references ------------------------------------------------------------------------------------------------ */
static int one_ref(scn *x, const cJSON *v, size_t j)
{
    const rb_model *m = x->s->model;
    rb_sim_ref *r = &x->s->refs[j];
    r->offset = x->s->q0[m->nq - m->n_dofs + j]; /* the default: hold the initial position */
    return sim_scn_parse_ref(&x->c, v, r);
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
        rc =
            rb_cfg_error(c, "unknown value '%s' (expected \"truth\" or \"none\"; " NEEDS_A_PROGRAM ")", v->valuestring);
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
    int rc = sim_scn_opt_bool(c, ctrl, "friction_compensation", &on);
    if (rc || !rb_cfg_member(ctrl, "friction_compensation"))
        return rc;
    rb_cfg_push_key(c, "friction_compensation", 0);
    if (x->s->sim.ctrl != RB_CTRL_TORQUE)
        rc = rb_cfg_error(c, "only with controller.kind \"torque\"");
    else if (on)
        rc = rb_cfg_error(
            c, "only false in a scenario file: the compensation uses estimated friction torques (" NEEDS_A_PROGRAM ")");
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
        rc = sim_scn_opt_bool(c, v, "gravity_comp", &x->s->sim.gravity_comp);
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
                rc = sim_scn_want_numbers(c, params, n, p);
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

/* ---- the top level ------------------------------------------------------------------------------------------------
 */
static int parse_name(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    rb_free(x->s->name);
    x->s->name = NULL;
    return rb_cfg_want_string(c, v, false, &x->s->name);
}

static int parse_duration(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    int rc = rb_cfg_want_number(c, v, &x->s->sim.duration);
    return !rc && x->s->sim.duration < 0 ? rb_cfg_error(c, "must be >= 0") : rc;
}

static int parse_dt(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    int rc = rb_cfg_want_number(c, v, &x->s->sim.dt);
    return !rc && !(x->s->sim.dt > 0) ? rb_cfg_error(c, "must be > 0") : rc;
}

static int parse_joint_limits(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    if (!cJSON_IsBool(v))
        return rb_cfg_error(c, "expected true or false");
    x->s->sim.joint_limits = cJSON_IsTrue(v);
    return RB_OK;
}

static int parse_log_rate(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    int rc = rb_cfg_want_number(c, v, &x->s->log_rate);
    return !rc && !(x->s->log_rate > 0) ? rb_cfg_error(c, "must be > 0") : rc;
}

static int parse_log_channels(rb_cfg *c, const cJSON *v)
{
    rb_scenario *s = ((scn *)c)->s;
    return rb_cfg_want_strings(c, v, false, &s->log_channels, &s->n_log_channels);
}

/* Every entry of log_channels matches a channel the scenario logs (read last: the channels follow from the model,
 * sensors, contacts, pushes, payloads and balance). A miss suggests the closest channel or prefix. */
static int check_log_channels(rb_cfg *c, rb_scenario *s)
{
    char **names = NULL;
    size_t n = 0;
    int rc = sim_scn_channel_names(s, &names, &n, c->err);
    for (size_t i = 0; !rc && i < s->n_log_channels; i++) {
        const char *entry = s->log_channels[i];
        bool found = false;
        for (size_t k = 0; k < n && !found; k++)
            found = sim_scn_entry_matches(entry, names[k]);
        if (found)
            continue;
        rb_suggest sg;
        rb_suggest_init(&sg, entry);
        char prefix[512], best_prefix[512];
        for (size_t k = 0; k < n; k++) {
            rb_suggest_consider(&sg, names[k]);
            for (const char *slash = strchr(names[k], '/'); slash; slash = strchr(slash + 1, '/')) {
                size_t len = (size_t)(slash - names[k]) + 1;
                if (len >= sizeof prefix)
                    break;
                memcpy(prefix, names[k], len);
                prefix[len] = '\0';
                rb_suggest_consider(&sg, prefix);
                if (sg.best == prefix) /* prefix is reused: keep the best one apart */
                    sg.best = memcpy(best_prefix, prefix, len + 1);
            }
        }
        const char *best = rb_suggest_best(&sg);
        rb_cfg_push_key(c, "log_channels", 0);
        rb_cfg_push_index(c, i);
        if (best)
            rc = rb_cfg_error(c, "'%s' matches no channel the scenario logs (did you mean '%s'?)", entry, best);
        else
            rc = rb_cfg_error(c, "'%s' matches no channel the scenario logs", entry);
        rb_cfg_pop(c);
        rb_cfg_pop(c);
    }
    rb_strings_free(names, n);
    return rc;
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
    {"contacts", false, sim_scn_parse_contacts},
    {"events", false, sim_scn_parse_events},
    {"floor", false, sim_scn_parse_floor},
    {"pushes", false, sim_scn_parse_pushes},
    {"random_pushes", false, sim_scn_parse_random_pushes},
    {"random_contacts", false, sim_scn_parse_random_contacts},
    {"mismatch", false, sim_scn_parse_mismatch},
    {"payload", false, sim_scn_parse_payload},
    {"balance", false, sim_scn_parse_balance},
    {"gait", false, sim_scn_parse_gait},
    {"jets", false, sim_scn_parse_jets},
    {"flight", false, sim_scn_parse_flight},
    {"temperature", false, sim_scn_parse_temperature},
    {"scales", false, sim_scn_parse_scales},
    {"sensors", false, sim_scn_parse_sensors},
    {"log_channels", false, parse_log_channels},
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
    const cJSON *refs = rb_cfg_member(root, "references");
    if (!rc && (x->s->sim.balance.enabled || x->s->sim.gait.enabled) && refs) {
        /* joints given a reference keep it: the balance or gait IK leaves them alone (free joints) */
        const rb_model *m = x->s->model;
        if (!(x->s->free_joints = rb_calloc(m->n_dofs ? m->n_dofs : 1, sizeof *x->s->free_joints)))
            return rb_cfg_nomem(c);
        for (const cJSON *e = refs->child; e; e = e->next)
            for (size_t j = 0; j < m->n_dofs; j++)
                if (e->string && strcmp(e->string, m->dof_names[j]) == 0)
                    x->s->free_joints[j] = 1;
        x->s->sim.balance.free_joints = x->s->sim.gait.free_joints = x->s->free_joints;
    }
    if (!rc && x->s->sim.balance.enabled && x->s->sim.ctrl == RB_CTRL_NONE) {
        rb_cfg_push_key(c, "balance", 0);
        rc = rb_cfg_error(c, "needs a controller (controller.kind \"pd\" or \"torque\")");
        rb_cfg_pop(c);
    }
    if (!rc && x->s->log_channels)
        rc = check_log_channels(c, x->s);
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
    rb_free(s->contact_frames);
    rb_free(s->payloads);
    rb_free(s->segments);
    rb_free(s->free_joints);
    sim_scn_free_jets(s);
    sim_scn_free_floor(s);
    rb_strings_free(s->log_channels, s->n_log_channels);
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
    scn x = {*c, doc, root};
    return parse_root(&x, root);
}

static void free_scenario(void *doc) { rb_scenario_free(doc); }

static const rb_cfg_format scenario_format = {"scenario.json", "scenario",     true,         sizeof(rb_scenario),
                                              init_scenario,   parse_scenario, free_scenario};

int rb_scenario_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                          rb_scenario **out, rb_err *err)
{
    return rb_cfg_load_text(&scenario_format, text, len, name_for_messages, base_file, NULL, (void **)out, err);
}

int rb_scenario_load(const char *path, rb_scenario **out, rb_err *err)
{
    return rb_cfg_load(&scenario_format, path, NULL, (void **)out, err);
}
