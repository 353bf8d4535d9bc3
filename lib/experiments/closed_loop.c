/* Closed-loop configurations: JSON text -> validated rb_closed_loop (the scenario, the scored joints, the
 * windows, the seeds and the configurations with their loaded pipelines). Keys are documented in
 * roboest/experiments.h; messages and suggestions come from the configuration toolkit (roboest/config.h). */
#include <math.h>
#include <string.h>

#include "experiments_internal.h"

typedef struct clload {
    rb_cfg c;
    rb_closed_loop *cl;
    const rb_registry *reg;
} clload;

static int parse_name(rb_cfg *c, const cJSON *v)
{
    clload *x = (clload *)c;
    rb_free(x->cl->name);
    x->cl->name = NULL;
    return rb_cfg_want_string(c, v, false, &x->cl->name);
}

static int parse_scenario(rb_cfg *c, const cJSON *v)
{
    clload *x = (clload *)c;
    char *rel = NULL, *path = NULL;
    int rc = rb_cfg_want_string(c, v, false, &rel);
    if (!rc && !(path = rb_path_relative_to(c->base_file, rel)))
        rc = rb_cfg_nomem(c);
    rb_err e;
    if (!rc && rb_scenario_load(path, &x->cl->scenario, &e) != RB_OK)
        rc = e.code == RB_ENOMEM ? rb_cfg_nomem(c) : rb_cfg_error(c, "%s", e.msg);
    const rb_scenario *s = x->cl->scenario;
    if (!rc && s->sim.ctrl != RB_CTRL_TORQUE)
        rc = rb_cfg_error(c, "scenario %s: the closed loop needs controller kind \"torque\"", path);
    else if (!rc && !s->sim.balance.enabled)
        rc = rb_cfg_error(c,
                          "scenario %s: the closed loop scores the CoM against the balance reference: it needs "
                          "\"balance\"",
                          path);
    rb_free(rel);
    rb_free(path);
    return rc;
}

static int joint_index(clload *x, const char *name, size_t *dof)
{
    const rb_model *m = x->cl->scenario->model;
    rb_suggest sg;
    rb_suggest_init(&sg, name);
    for (size_t j = 0; j < m->n_dofs; j++) {
        const char *jn = m->dof_names[j];
        if (strcmp(jn, name) == 0) {
            *dof = j;
            return RB_OK;
        }
        rb_suggest_consider(&sg, jn);
    }
    const char *best = rb_suggest_best(&sg);
    return best ? rb_cfg_error(&x->c, "joint '%s' is not in the scenario's model (did you mean '%s'?)", name, best)
                : rb_cfg_error(&x->c, "joint '%s' is not in the scenario's model", name);
}

static int parse_joints(rb_cfg *c, const cJSON *v)
{
    clload *x = (clload *)c;
    rb_closed_loop *cl = x->cl;
    int rc = rb_cfg_want_strings(c, v, false, &cl->joints, &cl->n_joints);
    size_t dup, first;
    if (!rc)
        rc = rb_cfg_find_duplicate(c, (const char *const *)cl->joints, cl->n_joints, &dup, &first);
    if (!rc && dup != SIZE_MAX) {
        rb_cfg_push_index(c, dup);
        rc = rb_cfg_error(c, "joint '%s' is already listed at joints[%zu]", cl->joints[dup], first);
        rb_cfg_pop(c);
    }
    if (!rc && !(cl->joint_dof = rb_calloc(cl->n_joints, sizeof *cl->joint_dof)))
        rc = rb_cfg_nomem(c);
    for (size_t j = 0; !rc && j < cl->n_joints; j++) {
        rb_cfg_push_index(c, j);
        rc = joint_index(x, cl->joints[j], &cl->joint_dof[j]);
        rb_cfg_pop(c);
    }
    return rc;
}

/* Default: every joint of the model. */
static int all_joints(clload *x)
{
    rb_closed_loop *cl = x->cl;
    const rb_model *m = cl->scenario->model;
    cl->n_joints = m->n_dofs;
    cl->joints = rb_calloc(m->n_dofs ? m->n_dofs : 1, sizeof *cl->joints);
    cl->joint_dof = rb_calloc(m->n_dofs ? m->n_dofs : 1, sizeof *cl->joint_dof);
    if (!cl->joints || !cl->joint_dof)
        return rb_cfg_nomem(&x->c);
    for (size_t j = 0; j < m->n_dofs; j++) {
        cl->joint_dof[j] = j;
        if (!(cl->joints[j] = rb_strdup(m->dof_names[j])))
            return rb_cfg_nomem(&x->c);
    }
    return RB_OK;
}

static int parse_settle(rb_cfg *c, const cJSON *v)
{
    clload *x = (clload *)c;
    int rc = rb_cfg_want_number(c, v, &x->cl->settle);
    return rc ? rc : rb_cfg_check_rule(c, x->cl->settle, RB_CFG_NON_NEGATIVE);
}

static int parse_disturbances(rb_cfg *c, const cJSON *v)
{
    clload *x = (clload *)c;
    int rc = rb_cfg_want_number(c, v, &x->cl->disturbances_from);
    if (!rc && !(x->cl->disturbances_from > x->cl->settle))
        rc = rb_cfg_error(c, "must be after \"settle\" (%g s)", x->cl->settle);
    return rc;
}

static int parse_max_com(rb_cfg *c, const cJSON *v)
{
    clload *x = (clload *)c;
    int rc = rb_cfg_want_number(c, v, &x->cl->max_com_error);
    return rc ? rc : rb_cfg_check_rule(c, x->cl->max_com_error, RB_CFG_POSITIVE);
}

static int parse_max_saturation(rb_cfg *c, const cJSON *v)
{
    clload *x = (clload *)c;
    int rc = rb_cfg_want_number(c, v, &x->cl->max_saturation);
    return rc ? rc : rb_cfg_check_rule(c, x->cl->max_saturation, RB_CFG_NON_NEGATIVE);
}

static int parse_saturation_window(rb_cfg *c, const cJSON *v)
{
    clload *x = (clload *)c;
    int rc = rb_cfg_want_number(c, v, &x->cl->saturation_window);
    return rc ? rc : rb_cfg_check_rule(c, x->cl->saturation_window, RB_CFG_POSITIVE);
}

static int parse_seeds(rb_cfg *c, const cJSON *v)
{
    clload *x = (clload *)c;
    rb_closed_loop *cl = x->cl;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return rb_cfg_error(c, "expected a non-empty array of integer seeds");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    rb_free(cl->seeds);
    if (!(cl->seeds = rb_calloc(n, sizeof *cl->seeds)))
        return rb_cfg_nomem(c);
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        double d;
        rc = rb_cfg_want_integer(c, e, 0, &d);
        cl->seeds[i] = rc ? 0 : (uint64_t)d;
        for (size_t k = 0; !rc && k < i; k++)
            if (cl->seeds[k] == cl->seeds[i])
                rc = rb_cfg_error(c, "seed %g is already listed at seeds[%zu]", d, k);
        rb_cfg_pop(c);
    }
    cl->n_seeds = rc ? 0 : n;
    return rc;
}

/* A non-empty list of distinct numbers, increasing, each >= 0 (positive: > 0). */
static int number_list(rb_cfg *c, const cJSON *v, bool positive, double **out, size_t *n_out)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return rb_cfg_error(c, "expected a non-empty array of numbers");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    rb_free(*out);
    *n_out = 0;
    if (!(*out = rb_calloc(n, sizeof **out)))
        return rb_cfg_nomem(c);
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        rc = rb_cfg_want_number(c, e, &(*out)[i]);
        if (!rc)
            rc = rb_cfg_check_rule(c, (*out)[i], positive ? RB_CFG_POSITIVE : RB_CFG_NON_NEGATIVE);
        if (!rc && i > 0 && !((*out)[i] > (*out)[i - 1]))
            rc = rb_cfg_error(c, "must be greater than the previous entry (%g)", (*out)[i - 1]);
        rb_cfg_pop(c);
    }
    *n_out = rc ? 0 : n;
    return rc;
}

static int parse_levels(rb_cfg *c, const cJSON *v)
{
    clload *x = (clload *)c;
    if (!x->cl->scenario->sim.mismatch.enabled)
        return rb_cfg_error(c, "the scenario has no \"mismatch\" to scale (add \"mismatch\": \"realistic\")");
    return number_list(c, v, false, &x->cl->levels, &x->cl->n_levels);
}

static int parse_scales(rb_cfg *c, const cJSON *v)
{
    clload *x = (clload *)c;
    return number_list(c, v, true, &x->cl->scales, &x->cl->n_scales);
}

static int parse_threads(rb_cfg *c, const cJSON *v)
{
    clload *x = (clload *)c;
    return rb_experiments_want_threads(c, v, &x->cl->threads);
}

static int parse_bootstrap(rb_cfg *c, const cJSON *v)
{
    clload *x = (clload *)c;
    return rb_experiments_want_bootstrap(c, v, &x->cl->bootstrap);
}

/* ---- configurations ------------------------------------------------------------------------------------------ */
/* `signal` (feedback or compensation) must be a signal of the pipeline (the stream reads its current row). */
static int check_signal(clload *x, const rb_closed_loop_config *cf, const char *key, const char *signal)
{
    rb_cfg *c = &x->c;
    if (!signal)
        return RB_OK;
    rb_cfg_push_key(c, key, 0);
    int rc = RB_OK;
    if (!cf->pipeline)
        rc = rb_cfg_error(c, "needs a \"pipeline\" that computes it");
    else if (rb_pipeline_signal_index(cf->pipeline, signal) < 0)
        rc = rb_experiments_signal_suggestion(c, cf->pipeline, signal);
    rb_cfg_pop(c);
    return rc;
}

/* The pipeline is stepped once per control period: its clock rate, if it has one, must be the loop's. */
static int check_rate(clload *x, const rb_closed_loop_config *cf)
{
    double dt = x->cl->scenario->sim.dt, rate = cf->pipeline->clock_rate;
    if (rate > 0 && fabs(rate * dt - 1.0) > 1e-9) {
        rb_cfg_push_key(&x->c, "pipeline", 0);
        int rc = rb_cfg_error(&x->c,
                              "pipeline %s runs at %g Hz but the scenario's control loop at %g Hz (dt = %g s): "
                              "the estimator is stepped every control period",
                              cf->pipeline_path, rate, 1.0 / dt, dt);
        rb_cfg_pop(&x->c);
        return rc;
    }
    return RB_OK;
}

static int load_pipeline(clload *x, rb_closed_loop_config *cf, const char *rel)
{
    rb_cfg *c = &x->c;
    if (!(cf->pipeline_path = rb_path_relative_to(c->base_file, rel)))
        return rb_cfg_nomem(c);
    rb_cfg_push_key(c, "pipeline", 0);
    rb_err e;
    int rc = RB_OK;
    if (rb_pipeline_load(cf->pipeline_path, x->reg, &cf->pipeline, &e) != RB_OK)
        rc = e.code == RB_ENOMEM ? rb_cfg_nomem(c) : rb_cfg_error(c, "%s", e.msg);
    rb_cfg_pop(c);
    return rc ? rc : check_rate(x, cf);
}

/* "torque_sensor": true: the loop reads the true joint torque (an ideal joint torque sensor), not an estimate. */
static int parse_torque_sensor(clload *x, const cJSON *v, rb_closed_loop_config *cf)
{
    rb_cfg *c = &x->c;
    const cJSON *e = rb_cfg_member(v, "torque_sensor");
    if (!e)
        return RB_OK;
    rb_cfg_push_key(c, "torque_sensor", 0);
    int rc = RB_OK;
    if (!cJSON_IsBool(e))
        rc = rb_cfg_error(c, "expected true or false");
    else if ((cf->torque_sensor = cJSON_IsTrue(e)) && cf->feedback)
        rc = rb_cfg_error(c, "a configuration takes its torque feedback from \"feedback\" or from the torque sensor, "
                             "not both");
    rb_cfg_pop(c);
    return rc;
}

/* "inertia": a signal whose elements are "<body>/<p>", or {"signal", "body"}: one body's m..Izz. */
static int parse_inertia(clload *x, const cJSON *v, rb_closed_loop_config *cf)
{
    static const char *const keys[] = {"signal", "body"};
    rb_cfg *c = &x->c;
    const cJSON *e = rb_cfg_member(v, "inertia");
    if (!e || cJSON_IsString(e))
        return rb_cfg_member_string(c, v, "inertia", false, &cf->inertia);
    rb_cfg_push_key(c, "inertia", 0);
    int rc = cJSON_IsObject(e) ? rb_cfg_check_object(c, e, keys, 2)
                               : rb_cfg_error(c, "expected a signal name or {\"signal\": name, \"body\": link}");
    if (!rc)
        rc = rb_cfg_member_string(c, e, "signal", true, &cf->inertia);
    if (!rc)
        rc = rb_cfg_member_string(c, e, "body", true, &cf->inertia_body);
    if (!rc && rb_model_body_index(x->cl->scenario->model, cf->inertia_body) < 0) {
        rb_cfg_push_key(c, "body", 0);
        rc = rb_cfg_error(c,
                          "'%s' is not a body of the scenario's model (a link merged into another body is named "
                          "by that body)",
                          cf->inertia_body);
        rb_cfg_pop(c);
    }
    rb_cfg_pop(c);
    return rc;
}

static int one_config(clload *x, const cJSON *v, rb_closed_loop_config *cf)
{
    static const char *const keys[] = {"name",          "label",        "pipeline", "feedback",
                                       "torque_sensor", "compensation", "inertia"};
    rb_cfg *c = &x->c;
    char *rel = NULL;
    int rc = rb_cfg_check_object(c, v, keys, 7);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "name", true, &cf->name);
    if (!rc && !rb_cfg_valid_name(cf->name)) {
        rb_cfg_push_key(c, "name", 0);
        rc = rb_cfg_error(c, "'%s': use letters, digits, '_' and '-', starting with a letter or '_'", cf->name);
        rb_cfg_pop(c);
    }
    if (!rc)
        rc = rb_cfg_member_string(c, v, "label", false, &cf->label);
    if (!rc && !cf->label && !(cf->label = rb_strdup(cf->name)))
        rc = rb_cfg_nomem(c);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "pipeline", false, &rel);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "feedback", false, &cf->feedback);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "compensation", false, &cf->compensation);
    if (!rc)
        rc = parse_inertia(x, v, cf);
    if (!rc)
        rc = parse_torque_sensor(x, v, cf);
    if (!rc && rel)
        rc = load_pipeline(x, cf, rel);
    if (!rc)
        rc = check_signal(x, cf, "feedback", cf->feedback);
    if (!rc)
        rc = check_signal(x, cf, "compensation", cf->compensation);
    if (!rc)
        rc = check_signal(x, cf, "inertia", cf->inertia);
    rb_free(rel);
    return rc;
}

static int parse_configs(rb_cfg *c, const cJSON *v)
{
    clload *x = (clload *)c;
    rb_closed_loop *cl = x->cl;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return rb_cfg_error(c, "expected a non-empty array of configurations");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (!(cl->configs = rb_calloc(n, sizeof *cl->configs)))
        return rb_cfg_nomem(c);
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        cl->n_configs = i + 1;
        rc = one_config(x, e, &cl->configs[i]);
        for (size_t k = 0; !rc && k < i; k++)
            if (strcmp(cl->configs[k].name, cl->configs[i].name) == 0) {
                rb_cfg_push_key(c, "name", 0);
                rc = rb_cfg_error(c, "configuration name '%s' is already used by configurations[%zu]",
                                  cl->configs[i].name, k);
                rb_cfg_pop(c);
            }
        rb_cfg_pop(c);
    }
    return rc;
}

/* ---- the task ------------------------------------------------------------------------------------------------ */
/* {"channel", "element"}, both required (whether the log has them is known when the scenario runs). */
static int channel_element(rb_cfg *c, const cJSON *v, const char *key, char **channel, char **element)
{
    static const char *const keys[] = {"channel", "element"};
    const cJSON *e = rb_cfg_member(v, key);
    rb_cfg_push_key(c, key, 0);
    int rc = RB_OK;
    if (!e)
        rc = rb_cfg_error(c, "required: {\"channel\": name, \"element\": name}");
    if (!rc)
        rc = rb_cfg_check_object(c, e, keys, 2);
    if (!rc)
        rc = rb_cfg_member_string(c, e, "channel", true, channel);
    if (!rc)
        rc = rb_cfg_member_string(c, e, "element", true, element);
    rb_cfg_pop(c);
    return rc;
}

static int parse_task(rb_cfg *c, const cJSON *v)
{
    static const char *const keys[] = {"name", "actual", "reference"};
    clload *x = (clload *)c;
    rb_closed_loop_task *t = &x->cl->task;
    int rc = rb_cfg_check_object(c, v, keys, 3);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "name", true, &t->name);
    if (!rc)
        rc = channel_element(c, v, "actual", &t->actual_channel, &t->actual_element);
    if (!rc)
        rc = channel_element(c, v, "reference", &t->reference_channel, &t->reference_element);
    return rc;
}

/* ---- published values of the task ---------------------------------------------------------------------------- */
static const char *const TASK_STATS[] = {"mse", "rmse", "mae", "max_abs"};

static int one_published(clload *x, const cJSON *v, struct rb_closed_loop_published *p)
{
    static const char *const keys[] = {"configuration", "statistic", "value", "source"};
    rb_cfg *c = &x->c;
    rb_closed_loop *cl = x->cl;
    char *config = NULL, *stat = NULL;
    int rc = rb_cfg_check_object(c, v, keys, 4);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "configuration", true, &config);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "statistic", true, &stat);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "source", true, &p->source);
    const cJSON *val = rb_cfg_member(v, "value");
    if (!rc) {
        rb_cfg_push_key(c, "value", 0);
        rc = val ? rb_cfg_want_number(c, val, &p->value) : rb_cfg_error(c, "required: the publication's number");
        rb_cfg_pop(c);
    }
    size_t i = 0;
    while (!rc && i < cl->n_configs && strcmp(cl->configs[i].name, config) != 0)
        i++;
    if (!rc && i == cl->n_configs) {
        const char **names = rb_calloc(cl->n_configs, sizeof *names);
        for (size_t k = 0; names && k < cl->n_configs; k++)
            names[k] = cl->configs[k].name;
        rb_cfg_push_key(c, "configuration", 0);
        rc = names ? rb_experiments_unknown_name(c, "configuration", config, names, cl->n_configs) : rb_cfg_nomem(c);
        rb_cfg_pop(c);
        rb_free(names);
    }
    p->config = i;
    size_t k = 0;
    while (!rc && k < 4 && strcmp(TASK_STATS[k], stat) != 0)
        k++;
    if (!rc && k == 4) {
        rb_cfg_push_key(c, "statistic", 0);
        rc = rb_experiments_unknown_name(c, "statistic (the task table has mse, rmse, mae, max_abs)", stat, TASK_STATS,
                                         4);
        rb_cfg_pop(c);
    }
    if (!rc)
        for (p->stat = 0; rb_stat_key(p->stat) && strcmp(rb_stat_key(p->stat), stat) != 0; p->stat++)
            ;
    rb_free(config);
    rb_free(stat);
    return rc;
}

static int parse_published(rb_cfg *c, const cJSON *v)
{
    clload *x = (clload *)c;
    rb_closed_loop *cl = x->cl;
    if (!cl->task.name)
        return rb_cfg_error(c, "published values are the task's: it needs \"task\"");
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return rb_cfg_error(c, "expected a non-empty array of {configuration, statistic, value, source}");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (!(cl->published = rb_calloc(n, sizeof *cl->published)))
        return rb_cfg_nomem(c);
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        cl->n_published = i + 1;
        rc = one_published(x, e, &cl->published[i]);
        rb_cfg_pop(c);
    }
    return rc;
}

/* ---- the file ------------------------------------------------------------------------------------------------ */
/* Defaults that depend on the scenario: Table I's window ends at the first push. */
static int finish_defaults(clload *x)
{
    rb_closed_loop *cl = x->cl;
    const rb_sim_scenario *sc = &cl->scenario->sim;
    int rc = cl->joints ? RB_OK : all_joints(x);
    if (!rc && !cl->seeds) {
        if (!(cl->seeds = rb_calloc(1, sizeof *cl->seeds)))
            return rb_cfg_nomem(&x->c);
        cl->seeds[0] = sc->seed;
        cl->n_seeds = 1;
    }
    if (!rc && isnan(cl->disturbances_from)) {
        double first = sc->duration;
        for (size_t i = 0; i < sc->n_pushes; i++)
            first = fmin(first, sc->pushes[i].start);
        if (sc->random_contacts.rate > 0)
            first = fmin(first, sc->random_contacts.from);
        cl->disturbances_from = first;
        if (sc->random_pushes.rate > 0)
            rc = rb_cfg_error(&x->c, "the scenario has random pushes (they may come at any time): set "
                                     "\"disturbances_from\"");
        else if (!(first > cl->settle))
            rc = rb_cfg_error(&x->c,
                              "the first disturbance (%g s) is not after \"settle\" (%g s): set "
                              "\"disturbances_from\"",
                              first, cl->settle);
    }
    if (!rc && cl->max_saturation > cl->saturation_window)
        rc = rb_cfg_error(&x->c, "\"max_saturation\" (%g s) is longer than \"saturation_window\" (%g s)",
                          cl->max_saturation, cl->saturation_window);
    return rc;
}

static const rb_cfg_section sections[] = {
    {"name", false, parse_name},
    {"scenario", true, parse_scenario},
    {"joints", false, parse_joints},
    {"settle", false, parse_settle},
    {"disturbances_from", false, parse_disturbances},
    {"max_com_error", false, parse_max_com},
    {"max_saturation", false, parse_max_saturation},
    {"saturation_window", false, parse_saturation_window},
    {"seeds", false, parse_seeds},
    {"mismatch_levels", false, parse_levels},
    {"disturbance_scales", false, parse_scales},
    {"threads", false, parse_threads},
    {"bootstrap", false, parse_bootstrap},
    {"configurations", true, parse_configs},
    {"task", false, parse_task},
    {"published", false, parse_published},
};

void rb_closed_loop_free(rb_closed_loop *cl)
{
    if (!cl)
        return;
    for (size_t i = 0; cl->configs && i < cl->n_configs; i++) {
        rb_closed_loop_config *cf = &cl->configs[i];
        rb_free(cf->name);
        rb_free(cf->label);
        rb_free(cf->pipeline_path);
        rb_pipeline_free(cf->pipeline);
        rb_free(cf->feedback);
        rb_free(cf->compensation);
        rb_free(cf->inertia);
        rb_free(cf->inertia_body);
    }
    rb_free(cl->task.name);
    rb_free(cl->task.actual_channel);
    rb_free(cl->task.actual_element);
    rb_free(cl->task.reference_channel);
    rb_free(cl->task.reference_element);
    for (size_t i = 0; cl->published && i < cl->n_published; i++)
        rb_free(cl->published[i].source);
    rb_free(cl->published);
    rb_free(cl->configs);
    rb_scenario_free(cl->scenario);
    rb_strings_free(cl->joints, cl->n_joints);
    rb_free(cl->joint_dof);
    rb_free(cl->seeds);
    rb_free(cl->levels);
    rb_free(cl->scales);
    rb_free(cl->name);
    rb_free(cl->path);
    rb_free(cl->sha256);
    rb_free(cl);
}

static int init_closed_loop(void *doc, const char *file, const char *name, const char *sha256)
{
    rb_closed_loop *cl = doc;
    cl->sha256 = rb_strdup(sha256);
    cl->path = rb_strdup(file);
    cl->name = rb_strdup(name);
    cl->settle = 0.5;
    cl->disturbances_from = NAN;
    cl->max_com_error = 0.1;
    cl->max_saturation = 0.5;
    cl->saturation_window = 1.0;
    cl->bootstrap = (rb_bootstrap){2000, 0, 0.95};
    return cl->sha256 && cl->path && cl->name ? RB_OK : RB_ENOMEM;
}

static int parse_closed_loop(const rb_cfg *c, const cJSON *root, void *doc, const void *reg)
{
    clload x = {*c, doc, reg};
    int rc = rb_cfg_sections(&x.c, root, sections, sizeof sections / sizeof sections[0]);
    return rc ? rc : finish_defaults(&x);
}

static void free_closed_loop(void *doc) { rb_closed_loop_free(doc); }

static const rb_cfg_format closed_loop_format = {"closed_loop.json",     "closed_loop",    true,
                                                 sizeof(rb_closed_loop), init_closed_loop, parse_closed_loop,
                                                 free_closed_loop};

int rb_closed_loop_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                             const rb_registry *reg, rb_closed_loop **out, rb_err *err)
{
    return rb_cfg_load_text(&closed_loop_format, text, len, name_for_messages, base_file, reg, (void **)out, err);
}

int rb_closed_loop_load(const char *path, const rb_registry *reg, rb_closed_loop **out, rb_err *err)
{
    return rb_cfg_load(&closed_loop_format, path, reg, (void **)out, err);
}
