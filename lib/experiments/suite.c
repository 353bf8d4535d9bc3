/* Comparison suites: JSON text -> validated rb_suite (variants with their loaded pipelines, logs, the
 * reference, joints, statistics, bootstrap and figure options). Keys are documented in roboest/experiments.h;
 * messages and suggestions come from the configuration toolkit (roboest/config.h). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "experiments_internal.h"

typedef struct sload {
    rb_cfg c;
    rb_suite *s;
    const rb_registry *reg;
} sload;

/* ---- variants ------------------------------------------------------------------------------------------- */
int rb_experiments_signal_suggestion(rb_cfg *c, const rb_pipeline *p, const char *name)
{
    rb_suggest sg;
    rb_suggest_init(&sg, name);
    for (size_t t = 0; t < p->n_signal_table; t++)
        rb_suggest_consider(&sg, p->signal_table[t].name);
    const char *best = rb_suggest_best(&sg);
    if (best)
        return rb_cfg_error(c, "signal '%s' is not in pipeline %s (did you mean '%s'?)", name, p->config_path, best);
    return rb_cfg_error(c, "signal '%s' is not in pipeline %s", name, p->config_path);
}

/* The pipeline at `path`, with `signal` (named by `key` in messages) marked recorded. */
static int load_variant_pipeline(rb_cfg *c, const rb_registry *reg, const char *path, const char *key,
                                 const char *signal, rb_pipeline **out)
{
    rb_cfg_push_key(c, "pipeline", 0);
    rb_err e;
    int rc = RB_OK;
    if (rb_pipeline_load(path, reg, out, &e) != RB_OK)
        rc = e.code == RB_ENOMEM ? rb_cfg_nomem(c) : rb_cfg_error(c, "%s", e.msg);
    rb_cfg_pop(c);
    if (rc)
        return rc;
    long t = rb_pipeline_signal_index(*out, signal);
    if (t < 0) {
        rb_cfg_push_key(c, key, 0);
        rc = rb_experiments_signal_suggestion(c, *out, signal);
        rb_cfg_pop(c);
        return rc;
    }
    (*out)->signal_table[t].recorded = true; /* the runner keeps every sample of it */
    return RB_OK;
}

int rb_experiments_parse_variant(rb_cfg *c, const rb_registry *reg, const cJSON *v, const char *key,
                                 rb_experiments_variant *var)
{
    const char *const keys[] = {"name", "pipeline", key, "window"};
    char *rel = NULL;
    int rc = rb_cfg_check_object(c, v, keys, var->window ? 4 : 3);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "name", true, var->name);
    if (!rc && !rb_cfg_valid_name(*var->name)) {
        rb_cfg_push_key(c, "name", 0);
        rc = rb_cfg_error(c, "'%s': use letters, digits, '_' and '-', starting with a letter or '_'", *var->name);
        rb_cfg_pop(c);
    }
    if (!rc)
        rc = rb_cfg_member_string(c, v, "pipeline", true, &rel);
    if (!rc)
        rc = rb_cfg_member_string(c, v, key, true, var->signal);
    if (!rc && !(*var->pipeline_path = rb_path_relative_to(c->base_file, rel)))
        rc = rb_cfg_nomem(c);
    const cJSON *w = rc || !var->window ? NULL : rb_cfg_member(v, "window");
    if (w) {
        rb_cfg_push_key(c, "window", 0);
        rc = rb_cfg_want_window(c, w, false, var->window);
        *var->has_window = !rc;
        rb_cfg_pop(c);
    }
    rb_free(rel);
    return rc ? rc : load_variant_pipeline(c, reg, *var->pipeline_path, key, *var->signal, var->pipeline);
}

int rb_experiments_variant_provenance(rb_provenance *pv, const char *name, const rb_pipeline *p, const char *key,
                                      const char *signal, rb_err *err)
{
    int rc = rb_provenance_addf(pv, rb_path_basename(p->config_path), err, "variant %s: pipeline", name);
    if (!rc)
        rc = rb_provenance_addf(pv, p->config_sha256, err, "variant %s: config_sha256", name);
    if (!rc)
        rc = rb_provenance_addf(pv, signal, err, "variant %s: %s", name, key);
    char prefix[160];
    snprintf(prefix, sizeof prefix, "variant %s: ", name);
    return rc ? rc : rb_pipeline_files_provenance(p, prefix, pv, err);
}

int rb_experiments_provenance_open(rb_provenance *pv, const char *kind, const char *path, const char *sha256,
                                   rb_err *err)
{
    *pv = (rb_provenance){0, NULL, NULL};
    int rc = rb_provenance_init(pv, err);
    if (!rc)
        rc = rb_provenance_add(pv, kind, rb_path_basename(path), err);
    if (!rc)
        rc = rb_provenance_addf(pv, sha256, err, "%s_sha256", kind);
    return rc;
}

int rb_experiments_provenance_close(rb_provenance *pv, int rc, rb_comparison *c, rb_err *err)
{
    if (!rc)
        rc = rb_comparison_set_provenance(c, pv, err);
    rb_provenance_free(pv);
    return rc;
}

static int one_variant(sload *x, const cJSON *v, rb_suite_variant *var)
{
    rb_experiments_variant f = {&var->name,     &var->pipeline_path, &var->estimate,
                                &var->pipeline, &var->has_window,    &var->window};
    return rb_experiments_parse_variant(&x->c, x->reg, v, "estimate", &f);
}

static int parse_variants(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return rb_cfg_error(c, "expected a non-empty array of variants");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (!(x->s->variants = rb_calloc(n, sizeof *x->s->variants)))
        return rb_cfg_nomem(c);
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        x->s->n_variants = i + 1;
        rc = one_variant(x, e, &x->s->variants[i]);
        for (size_t k = 0; !rc && k < i; k++)
            if (strcmp(x->s->variants[k].name, x->s->variants[i].name) == 0) {
                rb_cfg_push_key(c, "name", 0);
                rc = rb_cfg_error(c, "variant name '%s' is already used by variants[%zu]", x->s->variants[i].name, k);
                rb_cfg_pop(c);
            }
        rb_cfg_pop(c);
    }
    return rc;
}

/* ---- logs ------------------------------------------------------------------------------------------------- */
static int parse_logs(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    rb_suite *s = x->s;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return rb_cfg_error(c, "expected a non-empty array of paths (or arrays of paths: sessions)");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    s->logs = rb_calloc(n, sizeof *s->logs);
    s->log_names = rb_calloc(n, sizeof *s->log_names);
    if (!s->logs || !s->log_names)
        return rb_cfg_nomem(c);
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        s->n_logs = i + 1;
        rc = rb_cfg_want_session(c, e, &s->logs[i]);
        size_t len;
        const char *stem = rc ? NULL : rb_path_stem(s->logs[i].paths[0], &len);
        if (stem && !(s->log_names[i] = rb_strndup(stem, len)))
            rc = rb_cfg_nomem(c);
        for (size_t k = 0; !rc && k < i; k++)
            if (strcmp(s->log_names[k], s->log_names[i]) == 0)
                rc = rb_cfg_error(c, "logs[%zu] has the same name '%s': logs are named by their file stem", k,
                                  s->log_names[i]);
        rb_cfg_pop(c);
    }
    return rc;
}

/* ---- reference, joints, window, statistics ------------------------------------------------------------------ */
static int parse_reference(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    static const char *const keys[] = {"channel", "interp"};
    static const char *const interps[] = {"linear", "hold", NULL};
    if (cJSON_IsString(v))
        return rb_cfg_want_string(c, v, false, &x->s->reference);
    if (!cJSON_IsObject(v))
        return rb_cfg_error(c, "expected a channel name or {\"channel\": name, \"interp\": \"linear\" | \"hold\"}");
    size_t interp = 0;
    int rc = rb_cfg_check_object(c, v, keys, 2);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "channel", true, &x->s->reference);
    if (!rc)
        rc = rb_cfg_member_choice(c, v, "interp", interps, &interp);
    x->s->reference_interp = interp == 1 ? RB_INTERP_HOLD : RB_INTERP_LINEAR;
    return rc;
}

/* "reference_log": the reference channel is read from another file per log (a path template, roboest/pipeline.h). */
static int parse_reference_log(rb_cfg *c, const cJSON *v)
{
    return rb_reference_log_parse(c, v, false, &((sload *)c)->s->reference_log);
}

static int parse_joints(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    int rc = rb_cfg_want_strings(c, v, false, &x->s->joints, &x->s->n_joints);
    size_t dup, first;
    if (!rc)
        rc = rb_cfg_find_duplicate(c, (const char *const *)x->s->joints, x->s->n_joints, &dup, &first);
    if (!rc && dup != SIZE_MAX) {
        rb_cfg_push_index(c, dup);
        rc = rb_cfg_error(c, "joint '%s' is already listed at joints[%zu]", x->s->joints[dup], first);
        rb_cfg_pop(c);
    }
    return rc;
}

static int parse_window(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    x->s->has_window = true;
    return rb_cfg_want_window(c, v, false, &x->s->window);
}

static int parse_settle(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    x->s->has_settle = true;
    int rc = rb_cfg_want_number(c, v, &x->s->settle);
    return rc ? rc : rb_cfg_check_rule(c, x->s->settle, RB_CFG_NON_NEGATIVE);
}

/* A statistic that needs a section of the suite names it; NULL when it needs none. */
static const char *stat_needs(const rb_suite *s, size_t k)
{
    if ((k == RB_STAT_RISE_TIME || k == RB_STAT_STEP_DELAY || k == RB_STAT_STEPS_UNSETTLED) && !(s->step_min_jump > 0))
        return "\"steps\": {\"min_jump\": ...}";
    if ((k == RB_STAT_EVENT_PEAK || k == RB_STAT_EVENT_MAX) && !s->events_channel)
        return "\"events\": {\"channel\": ..., \"window\": [a, b]}";
    return NULL;
}

static int want_stat(rb_cfg *c, const cJSON *e, size_t *k)
{
    sload *x = (sload *)c;
    const char *keys[RB_N_STATS + 1];
    for (size_t i = 0; i < RB_N_STATS; i++)
        keys[i] = rb_stat_key(i);
    keys[RB_N_STATS] = NULL;
    int rc = rb_cfg_want_choice(c, e, keys, k);
    const char *needs = rc ? NULL : stat_needs(x->s, *k);
    return needs ? rb_cfg_error(c, "'%s' needs %s in the suite", keys[*k], needs) : rc;
}

static bool shown(const rb_suite *s, size_t k)
{
    for (size_t m = 0; m < s->n_stats; m++)
        if (s->stats[m] == k)
            return true;
    return false;
}

static int parse_statistics(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return rb_cfg_error(c, "expected a non-empty array of statistics (mse, rmse, mae, max_abs, mean_abs_est, "
                               "mean_abs_ref, min_est, max_est, mean_est, count_zero_est, rise_time, step_delay, "
                               "steps_unsettled, event_peak, event_max, rms_est)");
    size_t i = 0;
    int rc = RB_OK;
    x->s->n_stats = 0;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        size_t k = 0;
        rc = want_stat(c, e, &k);
        if (!rc && shown(x->s, k))
            rc = rb_cfg_error(c, "'%s' is already listed", rb_stat_key(k));
        if (!rc)
            x->s->stats[x->s->n_stats++] = k;
        rb_cfg_pop(c);
    }
    /* a rise time that may hold pessimistic bounds is never shown without the count of those */
    if (!rc && (shown(x->s, RB_STAT_RISE_TIME) || shown(x->s, RB_STAT_STEP_DELAY)) &&
        !shown(x->s, RB_STAT_STEPS_UNSETTLED))
        x->s->stats[x->s->n_stats++] = RB_STAT_STEPS_UNSETTLED;
    return rc;
}

/* ---- steps, events, published --------------------------------------------------------------------------------- */
static int parse_steps(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    static const char *const keys[] = {"min_jump"};
    int rc = rb_cfg_check_object(c, v, keys, 1);
    if (!rc && !rb_cfg_member(v, "min_jump"))
        rc = rb_cfg_error(c, "missing key 'min_jump'");
    if (!rc)
        rc = rb_cfg_member_number(c, v, "min_jump", RB_CFG_POSITIVE, &x->s->step_min_jump);
    return rc;
}

static int parse_events(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    static const char *const keys[] = {"channel", "window"};
    int rc = rb_cfg_check_object(c, v, keys, 2);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "channel", true, &x->s->events_channel);
    const cJSON *e = rc ? NULL : rb_cfg_member(v, "window");
    if (!rc && !e)
        rc = rb_cfg_error(c, "missing key 'window' ([a, b] in s, relative to each event)");
    if (!rc) {
        rb_cfg_push_key(c, "window", 0);
        rb_window w;
        if (!(rc = rb_cfg_want_window(c, e, true, &w)))
            x->s->events_a = w.t0, x->s->events_b = w.t1;
        rb_cfg_pop(c);
    }
    return rc;
}

int rb_experiments_unknown_name(rb_cfg *c, const char *what, const char *name, const char *const *names, size_t n)
{
    rb_suggest sg;
    rb_suggest_init(&sg, name);
    for (size_t i = 0; i < n; i++)
        rb_suggest_consider(&sg, names[i]);
    const char *best = rb_suggest_best(&sg);
    if (best)
        return rb_cfg_error(c, "unknown %s '%s' (did you mean '%s'?)", what, name, best);
    return rb_cfg_error(c, "unknown %s '%s'", what, name);
}

static int published_variant(sload *x, const cJSON *v, rb_suite_published *p)
{
    rb_cfg *c = &x->c;
    char *name = NULL;
    int rc = rb_cfg_member_string(c, v, "variant", true, &name);
    if (rc)
        return rc;
    const char *names[64];
    size_t n = 0;
    for (size_t i = 0; i < x->s->n_variants; i++) {
        if (strcmp(x->s->variants[i].name, name) == 0) {
            p->variant = i;
            rb_free(name);
            return RB_OK;
        }
        if (n < 64)
            names[n++] = x->s->variants[i].name;
    }
    rb_cfg_push_key(c, "variant", 0);
    rc = rb_experiments_unknown_name(c, "variant", name, names, n);
    rb_cfg_pop(c);
    rb_free(name);
    return rc;
}

static int published_joint(sload *x, const cJSON *v, rb_suite_published *p)
{
    rb_cfg *c = &x->c;
    int rc = rb_cfg_member_string(c, v, "joint", false, &p->joint);
    if (rc || !p->joint || !x->s->n_joints) /* without "joints": checked against the reference at run time */
        return rc;
    for (size_t j = 0; j < x->s->n_joints; j++)
        if (strcmp(x->s->joints[j], p->joint) == 0)
            return RB_OK;
    rb_cfg_push_key(c, "joint", 0);
    rc = rb_experiments_unknown_name(c, "joint", p->joint, (const char *const *)x->s->joints, x->s->n_joints);
    rb_cfg_pop(c);
    return rc;
}

static int one_published(sload *x, const cJSON *v, rb_suite_published *p)
{
    static const char *const keys[] = {"variant", "joint", "statistic", "value", "source"};
    rb_cfg *c = &x->c;
    int rc = rb_cfg_check_object(c, v, keys, 5);
    if (!rc)
        rc = published_variant(x, v, p);
    if (!rc)
        rc = published_joint(x, v, p);
    const cJSON *e = rc ? NULL : rb_cfg_member(v, "statistic");
    if (!rc && !e)
        rc = rb_cfg_error(c, "missing key 'statistic'");
    if (!rc) {
        rb_cfg_push_key(c, "statistic", 0);
        rc = want_stat(c, e, &p->stat);
        rb_cfg_pop(c);
    }
    if (!rc && !rb_cfg_member(v, "value"))
        rc = rb_cfg_error(c, "missing key 'value'");
    if (!rc)
        rc = rb_cfg_member_number(c, v, "value", RB_CFG_ANY, &p->value);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "source", true, &p->source);
    return rc;
}

static int parse_published(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, "expected an array of {\"variant\", \"joint\", \"statistic\", \"value\", \"source\"}");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (!(x->s->published = rb_calloc(n ? n : 1, sizeof *x->s->published)))
        return rb_cfg_nomem(c);
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        x->s->n_published = i + 1;
        rc = one_published(x, e, &x->s->published[i]);
        rb_cfg_pop(c);
    }
    return rc;
}

/* ---- bootstrap, figures, outputs, threads ---------------------------------------------------------------- */
int rb_experiments_want_bootstrap(rb_cfg *c, const cJSON *v, rb_bootstrap *bs)
{
    static const char *const keys[] = {"samples", "seed", "level"};
    int rc = rb_cfg_check_object(c, v, keys, 3);
    double d;
    const cJSON *e;
    if (!rc && (e = rb_cfg_member(v, "samples"))) {
        rb_cfg_push_key(c, "samples", 0);
        rc = rb_cfg_want_integer(c, e, 1, &d);
        if (!rc && d > 1e7)
            rc = rb_cfg_error(c, "at most 10000000");
        bs->samples = (size_t)d;
        rb_cfg_pop(c);
    }
    if (!rc && (e = rb_cfg_member(v, "seed"))) {
        rb_cfg_push_key(c, "seed", 0);
        rc = rb_cfg_want_integer(c, e, 0, &d);
        bs->seed = (uint64_t)d;
        rb_cfg_pop(c);
    }
    if (!rc && (e = rb_cfg_member(v, "level"))) {
        rb_cfg_push_key(c, "level", 0);
        rc = rb_cfg_want_number(c, e, &bs->level);
        if (!rc && !(bs->level > 0 && bs->level < 1))
            rc = rb_cfg_error(c, "must be in (0, 1), e.g. 0.95");
        rb_cfg_pop(c);
    }
    return rc;
}

static int parse_bootstrap(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    return rb_experiments_want_bootstrap(c, v, &x->s->bootstrap);
}

static int trace_log(sload *x, const cJSON *v, size_t *log)
{
    rb_cfg *c = &x->c;
    const rb_suite *s = x->s;
    if (cJSON_IsNumber(v)) {
        double d;
        int rc = rb_cfg_want_integer(c, v, 0, &d);
        if (!rc && d >= (double)s->n_logs)
            rc = rb_cfg_error(c, "log index %g is out of range (%zu logs)", d, s->n_logs);
        *log = rc ? 0 : (size_t)d;
        return rc;
    }
    if (!cJSON_IsString(v))
        return rb_cfg_error(c, "expected a log name (file stem) or index");
    rb_suggest sg;
    rb_suggest_init(&sg, v->valuestring);
    for (size_t l = 0; l < s->n_logs; l++) {
        if (strcmp(s->log_names[l], v->valuestring) == 0) {
            *log = l;
            return RB_OK;
        }
        rb_suggest_consider(&sg, s->log_names[l]);
    }
    const char *best = rb_suggest_best(&sg);
    if (best)
        return rb_cfg_error(c, "unknown log '%s' (did you mean '%s'?)", v->valuestring, best);
    return rb_cfg_error(c, "unknown log '%s' (logs are named by their file stem)", v->valuestring);
}

static int trace_joint(sload *x, rb_suite_trace *tr)
{
    const rb_suite *s = x->s;
    if (!s->n_joints)
        return RB_OK; /* checked against the reference channel at run time */
    rb_suggest sg;
    rb_suggest_init(&sg, tr->joint);
    for (size_t j = 0; j < s->n_joints; j++) {
        if (strcmp(s->joints[j], tr->joint) == 0)
            return RB_OK;
        rb_suggest_consider(&sg, s->joints[j]);
    }
    rb_cfg_push_key(&x->c, "joint", 0);
    const char *best = rb_suggest_best(&sg);
    int rc = best ? rb_cfg_error(&x->c, "joint '%s' is not in \"joints\" (did you mean '%s'?)", tr->joint, best)
                  : rb_cfg_error(&x->c, "joint '%s' is not in \"joints\"", tr->joint);
    rb_cfg_pop(&x->c);
    return rc;
}

static int one_trace(sload *x, const cJSON *v, rb_suite_trace *tr)
{
    static const char *const keys[] = {"joint", "log", "window"};
    rb_cfg *c = &x->c;
    tr->window = (rb_window){-INFINITY, INFINITY, false};
    int rc = rb_cfg_check_object(c, v, keys, 3);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "joint", true, &tr->joint);
    if (!rc)
        rc = trace_joint(x, tr);
    const cJSON *e = rb_cfg_member(v, "log");
    if (!rc && !e)
        rc = rb_cfg_error(c, "missing key 'log'");
    if (!rc) {
        rb_cfg_push_key(c, "log", 0);
        rc = trace_log(x, e, &tr->log);
        rb_cfg_pop(c);
    }
    if (!rc && (e = rb_cfg_member(v, "window"))) {
        rb_cfg_push_key(c, "window", 0);
        tr->has_window = true;
        rc = rb_cfg_want_window(c, e, false, &tr->window);
        rb_cfg_pop(c);
    }
    return rc;
}

static int parse_traces(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, "expected an array of {\"joint\", \"log\", \"window\"}");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (!(x->s->traces = rb_calloc(n ? n : 1, sizeof *x->s->traces)))
        return rb_cfg_nomem(c);
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        x->s->n_traces = i + 1;
        rc = one_trace(x, e, &x->s->traces[i]);
        rb_cfg_pop(c);
    }
    return rc;
}

static int parse_contact(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    static const char *const keys[] = {"channel", "threshold"};
    int rc = rb_cfg_check_object(c, v, keys, 2);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "channel", true, &x->s->contact_channel);
    const cJSON *e = rb_cfg_member(v, "threshold");
    if (!rc && e) {
        rb_cfg_push_key(c, "threshold", 0);
        rc = rb_cfg_want_number(c, e, &x->s->contact_threshold);
        if (!rc && x->s->contact_threshold < 0)
            rc = rb_cfg_error(c, "must be >= 0");
        rb_cfg_pop(c);
    }
    return rc;
}

static int parse_figures(rb_cfg *c, const cJSON *v)
{
    static const char *const keys[] = {"traces", "contact"};
    int rc = rb_cfg_check_object(c, v, keys, 2);
    if (!rc)
        rc = rb_cfg_with_member(c, v, "traces", false, parse_traces);
    if (!rc)
        rc = rb_cfg_with_member(c, v, "contact", false, parse_contact);
    return rc;
}

static int parse_outputs(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    char *rel = NULL;
    int rc = rb_cfg_want_string(c, v, false, &rel);
    if (!rc && !(x->s->outputs = rb_path_relative_to(c->base_file, rel)))
        rc = rb_cfg_nomem(c);
    rb_free(rel);
    return rc;
}

int rb_experiments_want_threads(rb_cfg *c, const cJSON *v, size_t *out)
{
    double d;
    int rc = rb_cfg_want_integer(c, v, 1, &d);
    if (!rc && d > 1024)
        rc = rb_cfg_error(c, "at most 1024");
    *out = rc ? 0 : (size_t)d;
    return rc;
}

static int parse_threads(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    return rb_experiments_want_threads(c, v, &x->s->threads);
}

static int parse_name(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    rb_free(x->s->name);
    x->s->name = NULL;
    return rb_cfg_want_string(c, v, false, &x->s->name);
}

/* "confusion": {"labels", "reference_labels", "where"}: a confusion table of class codes per variant (metrics.h);
 * `where` must be a signal of every variant's pipeline (then recorded). */
static int parse_confusion(rb_cfg *c, const cJSON *v)
{
    sload *x = (sload *)c;
    rb_suite *s = x->s;
    static const char *const keys[] = {"labels", "reference_labels", "where"};
    int rc = rb_cfg_check_object(c, v, keys, 3);
    if (!rc)
        rc = rb_confusion_labels_parse(c, v, "labels", true, &s->labels, &s->n_labels);
    if (!rc)
        rc = rb_confusion_labels_parse(c, v, "reference_labels", false, &s->reference_labels, &s->n_reference_labels);
    if (!rc && !s->reference_labels) {
        if (!(s->reference_labels = rb_calloc(s->n_labels, sizeof *s->reference_labels)))
            return rb_cfg_nomem(c);
        for (size_t i = 0; i < s->n_labels; i++, s->n_reference_labels++)
            if (!(s->reference_labels[i] = rb_strdup(s->labels[i])))
                return rb_cfg_nomem(c);
    }
    if (!rc)
        rc = rb_cfg_member_string(c, v, "where", false, &s->confusion_where);
    for (size_t i = 0; !rc && s->confusion_where && i < s->n_variants; i++) {
        rb_pipeline *p = s->variants[i].pipeline;
        long t = rb_pipeline_signal_index(p, s->confusion_where);
        if (t >= 0) {
            p->signal_table[t].recorded = true;
            continue;
        }
        rb_cfg_push_key(c, "where", 0);
        rc = rb_experiments_signal_suggestion(c, p, s->confusion_where);
        rb_cfg_pop(c);
    }
    return rc;
}

/* In reading order: the logs before the figures (traces name logs), the joints before the traces; steps and events
 * before the statistics that need them, the variants, joints and statistics before the published values. */
static const rb_cfg_section sections[] = {
    {"name", false, parse_name},
    {"variants", true, parse_variants},
    {"logs", true, parse_logs},
    {"reference", true, parse_reference},
    {"reference_log", false, parse_reference_log},
    {"joints", false, parse_joints},
    {"window", false, parse_window},
    {"settle", false, parse_settle},
    {"steps", false, parse_steps},
    {"events", false, parse_events},
    {"statistics", false, parse_statistics},
    {"published", false, parse_published},
    {"bootstrap", false, parse_bootstrap},
    {"figures", false, parse_figures},
    {"outputs", false, parse_outputs},
    {"threads", false, parse_threads},
    {"confusion", false, parse_confusion},
};

void rb_suite_free(rb_suite *s)
{
    if (!s)
        return;
    for (size_t i = 0; s->variants && i < s->n_variants; i++) {
        rb_free(s->variants[i].name);
        rb_free(s->variants[i].pipeline_path);
        rb_free(s->variants[i].estimate);
        rb_pipeline_free(s->variants[i].pipeline);
    }
    rb_free(s->variants);
    for (size_t i = 0; s->logs && i < s->n_logs; i++)
        rb_strings_free(s->logs[i].paths, s->logs[i].n_paths);
    rb_free(s->logs);
    rb_strings_free(s->log_names, s->n_logs);
    rb_strings_free(s->joints, s->n_joints);
    for (size_t i = 0; s->traces && i < s->n_traces; i++)
        rb_free(s->traces[i].joint);
    rb_free(s->traces);
    rb_free(s->reference);
    rb_reference_log_free(&s->reference_log);
    rb_free(s->contact_channel);
    rb_free(s->events_channel);
    for (size_t i = 0; s->published && i < s->n_published; i++) {
        rb_free(s->published[i].joint);
        rb_free(s->published[i].source);
    }
    rb_free(s->published);
    rb_strings_free(s->labels, s->n_labels);
    rb_strings_free(s->reference_labels, s->n_reference_labels);
    rb_free(s->confusion_where);
    rb_free(s->outputs);
    rb_free(s->name);
    rb_free(s->path);
    rb_free(s->sha256);
    rb_free(s);
}

static int init_suite(void *doc, const char *file, const char *name, const char *sha256)
{
    rb_suite *s = doc;
    s->sha256 = rb_strdup(sha256);
    s->path = rb_strdup(file);
    s->name = rb_strdup(name);
    s->n_stats = 3;
    s->stats[0] = 0, s->stats[1] = 1, s->stats[2] = 2;
    s->bootstrap = (rb_bootstrap){2000, 0, 0.95};
    s->window = (rb_window){-INFINITY, INFINITY, false};
    return s->sha256 && s->path && s->name ? RB_OK : RB_ENOMEM;
}

static int parse_suite(const rb_cfg *c, const cJSON *root, void *doc, const void *reg)
{
    sload x = {*c, doc, reg};
    return rb_cfg_sections(&x.c, root, sections, sizeof sections / sizeof sections[0]);
}

static void free_suite(void *doc) { rb_suite_free(doc); }

static const rb_cfg_format suite_format = {"suite.json", "suite",     true,      sizeof(rb_suite),
                                           init_suite,   parse_suite, free_suite};

int rb_suite_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                       const rb_registry *reg, rb_suite **out, rb_err *err)
{
    return rb_cfg_load_text(&suite_format, text, len, name_for_messages, base_file, reg, (void **)out, err);
}

int rb_suite_load(const char *path, const rb_registry *reg, rb_suite **out, rb_err *err)
{
    return rb_cfg_load(&suite_format, path, reg, (void **)out, err);
}
