/* Comparison suites: JSON text -> validated rb_suite (variants with their loaded pipelines, logs, the
 * reference, joints, statistics, bootstrap and figure options). Keys are documented in roboest/pipeline.h;
 * messages and suggestions come from the pipeline loader's helpers (config.c). */
#include <math.h>
#include <string.h>

#include "pipeline_internal.h"

typedef struct sload {
    cfg c;
    rb_suite *s;
} sload;

bool rb_cfg_valid_name(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
              *s == '-'))
            return false;
    return true;
}

int rb_cfg_want_integer(cfg *c, const cJSON *v, double lo, double *out)
{
    int rc = rb_cfg_want_number(c, v, out);
    if (!rc && !(*out >= lo && *out <= 9007199254740992.0 && *out == floor(*out)))
        rc = rb_cfg_error(c, "expected an integer >= %g", lo);
    return rc;
}

/* Member `key` read by `read` with its key on the path; absent: an error when required. */
static int with_member(cfg *c, const cJSON *obj, const char *key, bool required,
                       int (*read)(sload *, const cJSON *, void *), sload *x, void *arg)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return required ? rb_cfg_error(c, "missing key '%s'", key) : RB_OK;
    push_key(c, key, 0);
    int rc = read(x, v, arg);
    pop(c);
    return rc;
}

/* ---- variants ------------------------------------------------------------------------------------------- */
int rb_cfg_signal_suggestion(cfg *c, const rb_pipeline *p, const char *name)
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

static int load_variant_pipeline(sload *x, rb_suite_variant *var)
{
    cfg *c = &x->c;
    push_key(c, "pipeline", 0);
    rb_err e;
    int rc = RB_OK;
    if (rb_pipeline_load(var->pipeline_path, c->reg, &var->pipeline, &e) != RB_OK)
        rc = e.code == RB_ENOMEM ? rb_cfg_nomem(c) : rb_cfg_error(c, "%s", e.msg);
    pop(c);
    if (rc)
        return rc;
    long t = rb_pipeline_signal_index(var->pipeline, var->estimate);
    if (t < 0) {
        push_key(c, "estimate", 0);
        rc = rb_cfg_signal_suggestion(c, var->pipeline, var->estimate);
        pop(c);
        return rc;
    }
    var->pipeline->signal_table[t].recorded = true; /* the runner keeps every sample of it */
    return RB_OK;
}

static int one_variant(sload *x, const cJSON *v, rb_suite_variant *var)
{
    static const char *const keys[] = {"name", "pipeline", "estimate"};
    cfg *c = &x->c;
    char *rel = NULL;
    int rc = rb_cfg_check_object(c, v, keys, 3);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "name", true, &var->name);
    if (!rc && !rb_cfg_valid_name(var->name)) {
        push_key(c, "name", 0);
        rc = rb_cfg_error(c, "'%s': use letters, digits, '_' and '-', starting with a letter or '_'", var->name);
        pop(c);
    }
    if (!rc)
        rc = rb_cfg_member_string(c, v, "pipeline", true, &rel);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "estimate", true, &var->estimate);
    if (!rc && !(var->pipeline_path = rb_path_relative_to(c->base_file, rel)))
        rc = rb_cfg_nomem(c);
    rb_free(rel);
    return rc ? rc : load_variant_pipeline(x, var);
}

static int parse_variants(sload *x, const cJSON *v, void *unused)
{
    (void)unused;
    cfg *c = &x->c;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return rb_cfg_error(c, "expected a non-empty array of variants");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (!(x->s->variants = rb_calloc(n, sizeof *x->s->variants)))
        return rb_cfg_nomem(c);
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        push_index(c, i);
        x->s->n_variants = i + 1;
        rc = one_variant(x, e, &x->s->variants[i]);
        for (size_t k = 0; !rc && k < i; k++)
            if (strcmp(x->s->variants[k].name, x->s->variants[i].name) == 0) {
                push_key(c, "name", 0);
                rc = rb_cfg_error(c, "variant name '%s' is already used by variants[%zu]", x->s->variants[i].name, k);
                pop(c);
            }
        pop(c);
    }
    return rc;
}

/* ---- logs ------------------------------------------------------------------------------------------------- */
static int parse_logs(sload *x, const cJSON *v, void *unused)
{
    (void)unused;
    cfg *c = &x->c;
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
        push_index(c, i);
        s->n_logs = i + 1;
        rc = rb_cfg_want_session(c, e, &s->logs[i]);
        size_t len;
        const char *stem = rc ? NULL : rb_pipe_stem(s->logs[i].paths[0], &len);
        if (stem && !(s->log_names[i] = rb_strndup(stem, len)))
            rc = rb_cfg_nomem(c);
        for (size_t k = 0; !rc && k < i; k++)
            if (strcmp(s->log_names[k], s->log_names[i]) == 0)
                rc = rb_cfg_error(c, "logs[%zu] has the same name '%s': logs are named by their file stem", k,
                                  s->log_names[i]);
        pop(c);
    }
    return rc;
}

/* ---- reference, joints, window, statistics ------------------------------------------------------------------ */
static int parse_reference(sload *x, const cJSON *v, void *unused)
{
    (void)unused;
    static const char *const keys[] = {"channel", "interp"};
    static const char *const interps[] = {"linear", "hold", NULL};
    cfg *c = &x->c;
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

static int parse_joints(sload *x, const cJSON *v, void *unused)
{
    (void)unused;
    cfg *c = &x->c;
    int rc = rb_cfg_want_strings(c, v, false, &x->s->joints, &x->s->n_joints);
    size_t dup, first;
    if (!rc)
        rc = rb_cfg_find_duplicate(c, (const char *const *)x->s->joints, x->s->n_joints, &dup, &first);
    if (!rc && dup != SIZE_MAX) {
        push_index(c, dup);
        rc = rb_cfg_error(c, "joint '%s' is already listed at joints[%zu]", x->s->joints[dup], first);
        pop(c);
    }
    return rc;
}

static int parse_window(sload *x, const cJSON *v, void *unused)
{
    (void)unused;
    x->s->has_window = true;
    return rb_cfg_want_window(&x->c, v, &x->s->t0, &x->s->t1);
}

static int parse_statistics(sload *x, const cJSON *v, void *unused)
{
    (void)unused;
    static const char *const keys[] = {"mse", "rmse", "mae", "max_abs", "mean_abs_est", "mean_abs_ref", NULL};
    cfg *c = &x->c;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return rb_cfg_error(c, "expected a non-empty array of statistics (mse, rmse, mae, max_abs, mean_abs_est, "
                               "mean_abs_ref)");
    size_t i = 0;
    int rc = RB_OK;
    x->s->n_stats = 0;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        push_index(c, i);
        size_t k = 0;
        rc = rb_cfg_want_choice(c, e, keys, &k);
        for (size_t m = 0; !rc && m < x->s->n_stats; m++)
            if (x->s->stats[m] == k)
                rc = rb_cfg_error(c, "'%s' is already listed", keys[k]);
        if (!rc)
            x->s->stats[x->s->n_stats++] = k;
        pop(c);
    }
    return rc;
}

/* ---- bootstrap, figures, outputs, threads ---------------------------------------------------------------- */
int rb_cfg_want_bootstrap(cfg *c, const cJSON *v, rb_bootstrap *bs)
{
    static const char *const keys[] = {"samples", "seed", "level"};
    int rc = rb_cfg_check_object(c, v, keys, 3);
    double d;
    const cJSON *e;
    if (!rc && (e = rb_cfg_member(v, "samples"))) {
        push_key(c, "samples", 0);
        rc = rb_cfg_want_integer(c, e, 1, &d);
        if (!rc && d > 1e7)
            rc = rb_cfg_error(c, "at most 10000000");
        bs->samples = (size_t)d;
        pop(c);
    }
    if (!rc && (e = rb_cfg_member(v, "seed"))) {
        push_key(c, "seed", 0);
        rc = rb_cfg_want_integer(c, e, 0, &d);
        bs->seed = (uint64_t)d;
        pop(c);
    }
    if (!rc && (e = rb_cfg_member(v, "level"))) {
        push_key(c, "level", 0);
        rc = rb_cfg_want_number(c, e, &bs->level);
        if (!rc && !(bs->level > 0 && bs->level < 1))
            rc = rb_cfg_error(c, "must be in (0, 1), e.g. 0.95");
        pop(c);
    }
    return rc;
}

static int parse_bootstrap(sload *x, const cJSON *v, void *unused)
{
    (void)unused;
    return rb_cfg_want_bootstrap(&x->c, v, &x->s->bootstrap);
}

static int trace_log(sload *x, const cJSON *v, size_t *log)
{
    cfg *c = &x->c;
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
    push_key(&x->c, "joint", 0);
    const char *best = rb_suggest_best(&sg);
    int rc = best ? rb_cfg_error(&x->c, "joint '%s' is not in \"joints\" (did you mean '%s'?)", tr->joint, best)
                  : rb_cfg_error(&x->c, "joint '%s' is not in \"joints\"", tr->joint);
    pop(&x->c);
    return rc;
}

static int one_trace(sload *x, const cJSON *v, rb_suite_trace *tr)
{
    static const char *const keys[] = {"joint", "log", "window"};
    cfg *c = &x->c;
    tr->t0 = -INFINITY;
    tr->t1 = INFINITY;
    int rc = rb_cfg_check_object(c, v, keys, 3);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "joint", true, &tr->joint);
    if (!rc)
        rc = trace_joint(x, tr);
    const cJSON *e = rb_cfg_member(v, "log");
    if (!rc && !e)
        rc = rb_cfg_error(c, "missing key 'log'");
    if (!rc) {
        push_key(c, "log", 0);
        rc = trace_log(x, e, &tr->log);
        pop(c);
    }
    if (!rc && (e = rb_cfg_member(v, "window"))) {
        push_key(c, "window", 0);
        tr->has_window = true;
        rc = rb_cfg_want_window(c, e, &tr->t0, &tr->t1);
        pop(c);
    }
    return rc;
}

static int parse_traces(sload *x, const cJSON *v, void *unused)
{
    (void)unused;
    cfg *c = &x->c;
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, "expected an array of {\"joint\", \"log\", \"window\"}");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (!(x->s->traces = rb_calloc(n ? n : 1, sizeof *x->s->traces)))
        return rb_cfg_nomem(c);
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        push_index(c, i);
        x->s->n_traces = i + 1;
        rc = one_trace(x, e, &x->s->traces[i]);
        pop(c);
    }
    return rc;
}

static int parse_contact(sload *x, const cJSON *v, void *unused)
{
    (void)unused;
    static const char *const keys[] = {"channel", "threshold"};
    cfg *c = &x->c;
    int rc = rb_cfg_check_object(c, v, keys, 2);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "channel", true, &x->s->contact_channel);
    const cJSON *e = rb_cfg_member(v, "threshold");
    if (!rc && e) {
        push_key(c, "threshold", 0);
        rc = rb_cfg_want_number(c, e, &x->s->contact_threshold);
        if (!rc && x->s->contact_threshold < 0)
            rc = rb_cfg_error(c, "must be >= 0");
        pop(c);
    }
    return rc;
}

static int parse_figures(sload *x, const cJSON *v, void *unused)
{
    static const char *const keys[] = {"traces", "contact"};
    cfg *c = &x->c;
    int rc = rb_cfg_check_object(c, v, keys, 2);
    if (!rc)
        rc = with_member(c, v, "traces", false, parse_traces, x, unused);
    if (!rc)
        rc = with_member(c, v, "contact", false, parse_contact, x, unused);
    return rc;
}

static int parse_outputs(sload *x, const cJSON *v, void *unused)
{
    (void)unused;
    char *rel = NULL;
    int rc = rb_cfg_want_string(&x->c, v, false, &rel);
    if (!rc && !(x->s->outputs = rb_path_relative_to(x->c.base_file, rel)))
        rc = rb_cfg_nomem(&x->c);
    rb_free(rel);
    return rc;
}

int rb_cfg_want_threads(cfg *c, const cJSON *v, size_t *out)
{
    double d;
    int rc = rb_cfg_want_integer(c, v, 1, &d);
    if (!rc && d > 1024)
        rc = rb_cfg_error(c, "at most 1024");
    *out = rc ? 0 : (size_t)d;
    return rc;
}

static int parse_threads(sload *x, const cJSON *v, void *unused)
{
    (void)unused;
    return rb_cfg_want_threads(&x->c, v, &x->s->threads);
}

static int parse_name(sload *x, const cJSON *v, void *unused)
{
    (void)unused;
    rb_free(x->s->name);
    x->s->name = NULL;
    return rb_cfg_want_string(&x->c, v, false, &x->s->name);
}

/* In reading order: the logs before the figures (traces name logs), the joints before the traces. */
static const struct section {
    const char *key;
    bool required;
    int (*parse)(sload *, const cJSON *, void *);
} sections[] = {
    {"name", false, parse_name},
    {"variants", true, parse_variants},
    {"logs", true, parse_logs},
    {"reference", true, parse_reference},
    {"joints", false, parse_joints},
    {"window", false, parse_window},
    {"statistics", false, parse_statistics},
    {"bootstrap", false, parse_bootstrap},
    {"figures", false, parse_figures},
    {"outputs", false, parse_outputs},
    {"threads", false, parse_threads},
};

enum { N_SECTIONS = sizeof sections / sizeof sections[0] };

static int parse_root(sload *x, const cJSON *root)
{
    cfg *c = &x->c;
    const char *keys[N_SECTIONS];
    for (size_t i = 0; i < N_SECTIONS; i++)
        keys[i] = sections[i].key;
    int rc = rb_cfg_check_object(c, root, keys, N_SECTIONS);
    for (size_t i = 0; !rc && i < N_SECTIONS; i++)
        rc = with_member(c, root, sections[i].key, sections[i].required, sections[i].parse, x, NULL);
    return rc;
}

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
        rb_pipe_free_strings(s->logs[i].paths, s->logs[i].n_paths);
    rb_free(s->logs);
    rb_pipe_free_strings(s->log_names, s->n_logs);
    rb_pipe_free_strings(s->joints, s->n_joints);
    for (size_t i = 0; s->traces && i < s->n_traces; i++)
        rb_free(s->traces[i].joint);
    rb_free(s->traces);
    rb_free(s->reference);
    rb_free(s->contact_channel);
    rb_free(s->outputs);
    rb_free(s->name);
    rb_free(s->path);
    rb_free(s->sha256);
    rb_free(s);
}

static int init_suite(rb_suite *s, const char *text, size_t len, const char *file)
{
    size_t stem_len;
    const char *stem = rb_pipe_stem(file, &stem_len);
    s->sha256 = rb_sha256_hexdup(text, len);
    s->path = rb_strdup(file);
    s->name = stem_len ? rb_strndup(stem, stem_len) : rb_strdup("suite");
    s->n_stats = 3;
    s->stats[0] = 0, s->stats[1] = 1, s->stats[2] = 2;
    s->bootstrap = (rb_bootstrap){2000, 0, 0.95};
    s->t0 = -INFINITY;
    s->t1 = INFINITY;
    return s->sha256 && s->path && s->name ? RB_OK : RB_ENOMEM;
}

int rb_suite_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                       const rb_registry *reg, rb_suite **out, rb_err *err)
{
    const char *file = name_for_messages ? name_for_messages : "suite.json";
    *out = NULL;
    char *copy = rb_strndup(text, len);
    rb_suite *s = rb_calloc(1, sizeof *s);
    cJSON *root = NULL;
    int rc = RB_OK;
    if (!copy || !s || init_suite(s, text, len, file) != RB_OK) {
        rc = rb_err_set(err, RB_ENOMEM, "%s: out of memory", file);
        goto done;
    }
    if ((rc = rb_cfg_parse_json(file, copy, len, &root, err)))
        goto done;
    sload x = {{file, copy, len, base_file ? base_file : file, reg, NULL, err, 0, {{NULL, 0}}, 0}, s};
    rc = parse_root(&x, root);
done:
    cJSON_Delete(root);
    rb_free(copy);
    if (rc)
        rb_suite_free(s);
    else
        *out = s;
    return rc;
}

int rb_suite_load(const char *path, const rb_registry *reg, rb_suite **out, rb_err *err)
{
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = rb_cfg_read_file(path, &text, &len, err);
    if (rc)
        return rc;
    rc = rb_suite_load_text(text, len, path, path, reg, out, err);
    rb_free(text);
    return rc;
}
