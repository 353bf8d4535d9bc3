/* Pipeline configuration: JSON text -> validated, typed rb_pipeline. This file reads the sections (keys,
 * types, ranges, stage schemas) and holds the entry points; graph.c then checks the signal graph. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_internal.h"

#define CONFIG_MAX_BYTES (64u << 20)

int rb_cfg_error(cfg *c, const char *fmt, ...)
{
    char what[768], where[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t line, col;
    rb_json_locate(c->text, c->len, c->path, path_depth(c), &line, &col);
    rb_json_path_format(c->path, path_depth(c), where, sizeof where);
    if (where[0])
        return rb_err_set(c->err, RB_ECONFIG, "%s:%zu:%zu: %s: %s", c->file, line, col, where, what);
    return rb_err_set(c->err, RB_ECONFIG, "%s:%zu:%zu: %s", c->file, line, col, what);
}

int rb_cfg_nomem(cfg *c) { return rb_err_set(c->err, RB_ENOMEM, "%s: out of memory", c->file); }

static size_t count_children(const cJSON *node)
{
    size_t n = 0;
    for (const cJSON *ch = node->child; ch; ch = ch->next)
        n++;
    return n;
}

/* ---- duplicates ---------------------------------------------------------------------------------- */
int rb_cfg_cmp_name_ref(const void *a, const void *b)
{
    const name_ref *x = a, *y = b;
    int d = strcmp(x->name, y->name);
    return d ? d : (x->index > y->index) - (x->index < y->index);
}

void rb_cfg_first_repeat(const name_ref *refs, size_t n, size_t *dup, size_t *first)
{
    *dup = *first = SIZE_MAX;
    for (size_t i = 1; i < n; i++) {
        /* within a group of equal names positions ascend: the second one is the group's first repeat */
        bool second_of_group = strcmp(refs[i].name, refs[i - 1].name) == 0 &&
                               (i < 2 || strcmp(refs[i - 1].name, refs[i - 2].name) != 0);
        if (second_of_group && refs[i].index < *dup) {
            *dup = refs[i].index;
            *first = refs[i - 1].index;
        }
    }
}

/* Sorting keeps large objects from costing n^2. */
int rb_cfg_find_duplicate(cfg *c, const char *const *names, size_t n, size_t *dup, size_t *first)
{
    size_t unused;
    first = first ? first : &unused;
    *dup = *first = SIZE_MAX;
    if (n < 2)
        return RB_OK;
    name_ref *refs = rb_malloc(n * sizeof *refs);
    if (!refs)
        return rb_cfg_nomem(c);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (names[i])
            refs[m++] = (name_ref){names[i], i};
    qsort(refs, m, sizeof *refs, rb_cfg_cmp_name_ref);
    rb_cfg_first_repeat(refs, m, dup, first);
    rb_free(refs);
    return RB_OK;
}

/* ---- objects: unknown and duplicated keys ------------------------------------------------------------ */
/* Called with the parent object's path current: the message names the object, the position is the key's. */
static int unknown_key(cfg *c, const char *key, const char *const *allowed, size_t n_allowed)
{
    rb_suggest s;
    rb_suggest_init(&s, key);
    for (size_t i = 0; i < n_allowed; i++)
        rb_suggest_consider(&s, allowed[i]);
    const char *best = rb_suggest_best(&s);
    size_t line, col;
    char where[256], hint[160] = "";
    rb_json_path_format(c->path, path_depth(c), where, sizeof where);
    push_key(c, key, 0);
    rb_json_locate(c->text, c->len, c->path, path_depth(c), &line, &col);
    pop(c);
    if (best)
        snprintf(hint, sizeof hint, " (did you mean '%s'?)", best);
    return rb_err_set(c->err, RB_ECONFIG, "%s:%zu:%zu: %s%sunknown key '%s'%s", c->file, line, col, where,
                      where[0] ? ": " : "", key, hint);
}

static int duplicated_key(cfg *c, const cJSON *obj, const cJSON *second)
{
    size_t occurrence = 0;
    for (const cJSON *ch = obj->child; ch && ch != second; ch = ch->next)
        if (strcmp(ch->string, second->string) == 0)
            occurrence++;
    size_t line, col, first_line, first_col;
    push_key(c, second->string, 0);
    rb_json_locate(c->text, c->len, c->path, path_depth(c), &first_line, &first_col);
    c->path[path_depth(c) - 1].index = occurrence;
    rb_json_locate(c->text, c->len, c->path, path_depth(c), &line, &col);
    pop(c);
    char where[256];
    rb_json_path_format(c->path, path_depth(c), where, sizeof where);
    return rb_err_set(c->err, RB_ECONFIG, "%s:%zu:%zu: %s%sduplicated key '%s' (first at %zu:%zu)", c->file, line,
                      col, where, where[0] ? ": " : "", second->string, first_line, first_col);
}

/* obj must be an object whose keys are unique and (allowed != NULL) among `allowed`. */
int rb_cfg_check_object(cfg *c, const cJSON *obj, const char *const *allowed, size_t n_allowed)
{
    if (!cJSON_IsObject(obj))
        return rb_cfg_error(c, "expected an object");
    size_t n = count_children(obj), dup, i = 0;
    const char **keys = rb_malloc((n ? n : 1) * sizeof *keys);
    if (!keys)
        return rb_cfg_nomem(c);
    for (const cJSON *ch = obj->child; ch; ch = ch->next)
        keys[i++] = ch->string ? ch->string : "";
    int rc = rb_cfg_find_duplicate(c, keys, n, &dup, NULL);
    rb_free(keys);
    if (rc)
        return rc;
    i = 0;
    for (const cJSON *ch = obj->child; ch; ch = ch->next, i++) {
        bool known = !allowed;
        for (size_t a = 0; !known && a < n_allowed; a++)
            known = strcmp(ch->string, allowed[a]) == 0;
        if (!known)
            return unknown_key(c, ch->string, allowed, n_allowed);
        if (i == dup)
            return duplicated_key(c, obj, ch);
    }
    return RB_OK;
}

/* ---- typed values at the current path -------------------------------------------------------------- */
int rb_cfg_want_string(cfg *c, const cJSON *v, bool allow_empty, char **out)
{
    if (!cJSON_IsString(v) || !v->valuestring)
        return rb_cfg_error(c, "expected a string");
    if (!allow_empty && !v->valuestring[0])
        return rb_cfg_error(c, "must not be empty");
    *out = rb_strdup(v->valuestring);
    return *out ? RB_OK : rb_cfg_nomem(c);
}

int rb_cfg_want_number(cfg *c, const cJSON *v, double *out)
{
    if (!cJSON_IsNumber(v))
        return rb_cfg_error(c, "expected a number");
    if (!isfinite(v->valuedouble))
        return rb_cfg_error(c, "expected a finite number");
    *out = v->valuedouble;
    return RB_OK;
}

static bool is_integral(double x) { return x == floor(x) && fabs(x) <= 9007199254740992.0; }

/* One of `choices` (NULL-terminated) with a suggestion for a near miss. */
int rb_cfg_want_choice(cfg *c, const cJSON *v, const char *const *choices, size_t *index)
{
    if (!cJSON_IsString(v) || !v->valuestring)
        return rb_cfg_error(c, "expected a string");
    rb_suggest s;
    rb_suggest_init(&s, v->valuestring);
    char list[256] = "";
    size_t used = 0;
    for (size_t i = 0; choices[i]; i++) {
        if (strcmp(v->valuestring, choices[i]) == 0) {
            *index = i;
            return RB_OK;
        }
        rb_suggest_consider(&s, choices[i]);
        int w = snprintf(list + used, sizeof list - used, "%s\"%s\"", i ? ", " : "", choices[i]);
        if (w > 0 && (size_t)w < sizeof list - used)
            used += (size_t)w;
    }
    const char *best = rb_suggest_best(&s);
    if (best)
        return rb_cfg_error(c, "unknown value '%s' (did you mean '%s'?)", v->valuestring, best);
    return rb_cfg_error(c, "unknown value '%s' (expected one of %s)", v->valuestring, list);
}

static int want_window(cfg *c, const cJSON *v, double *t0, double *t1)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2)
        return rb_cfg_error(c, "expected [t0, t1] in seconds");
    double w[2];
    size_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        push_index(c, i);
        int rc = rb_cfg_want_number(c, e, &w[i]);
        if (!rc && i == 1 && !(w[1] > w[0]))
            rc = rb_cfg_error(c, "must be greater than window[0] (%.17g)", w[0]);
        pop(c);
        if (rc)
            return rc;
    }
    *t0 = w[0];
    *t1 = w[1];
    return RB_OK;
}

/* Array of strings (each non-empty); *n may be 0 only when allow_empty. */
static int want_string_array(cfg *c, const cJSON *v, bool allow_empty, char ***out, size_t *n)
{
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, "expected an array of strings");
    size_t count = count_children(v), i = 0;
    if (!count && !allow_empty)
        return rb_cfg_error(c, "must not be empty");
    *out = rb_calloc(count ? count : 1, sizeof **out);
    if (!*out)
        return rb_cfg_nomem(c);
    *n = count;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        push_index(c, i);
        int rc = rb_cfg_want_string(c, e, false, &(*out)[i]);
        pop(c);
        if (rc)
            return rc;
    }
    return RB_OK;
}

/* ---- members: absent (an error when required), or read with their key on the path ---------------------- */
int rb_cfg_member_string(cfg *c, const cJSON *obj, const char *key, bool required, char **out)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return required ? rb_cfg_error(c, "missing key '%s'", key) : RB_OK;
    push_key(c, key, 0);
    int rc = rb_cfg_want_string(c, v, false, out);
    pop(c);
    return rc;
}

static int member_string_array(cfg *c, const cJSON *obj, const char *key, bool required, bool allow_empty,
                               char ***out, size_t *n)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return required ? rb_cfg_error(c, "missing key '%s'", key) : RB_OK;
    push_key(c, key, 0);
    int rc = want_string_array(c, v, allow_empty, out, n);
    pop(c);
    return rc;
}

/* Optional: *index stays as it is (the default) when the key is absent. */
int rb_cfg_member_choice(cfg *c, const cJSON *obj, const char *key, const char *const *choices, size_t *index)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return RB_OK;
    push_key(c, key, 0);
    int rc = rb_cfg_want_choice(c, v, choices, index);
    pop(c);
    return rc;
}

/* An array of objects parsed by `one` into a new array of *n items of `size` bytes. Returns the array
 * (also after a failure, with *rc set, so that rb_pipeline_free releases what was parsed), or NULL. */
static void *parse_list(cfg *c, const cJSON *v, const char *not_an_array, size_t size,
                        int (*one)(cfg *, const cJSON *, void *item), size_t *n, int *rc)
{
    if (!cJSON_IsArray(v)) {
        *rc = rb_cfg_error(c, "%s", not_an_array);
        return NULL;
    }
    size_t count = count_children(v), i = 0;
    char *items = rb_calloc(count ? count : 1, size);
    if (!items) {
        *rc = rb_cfg_nomem(c);
        return NULL;
    }
    *n = count;
    *rc = RB_OK;
    for (const cJSON *e = v->child; e && !*rc; e = e->next, i++) {
        push_index(c, i);
        *rc = one(c, e, items + i * size);
        pop(c);
    }
    return items;
}

static int resolve_path(cfg *c, char **path)
{
    char *resolved = rb_path_relative_to(c->base_file, *path);
    if (!resolved)
        return rb_cfg_nomem(c);
    rb_free(*path);
    *path = resolved;
    return RB_OK;
}

/* Output and report paths stay inside the run's output folder. */
static int check_relative(cfg *c, const char *path)
{
    if (path[0] == '/')
        return rb_cfg_error(c, "'%s' must be relative to the output folder", path);
    for (const char *s = path; *s;) {
        size_t n = strcspn(s, "/");
        if (n == 2 && s[0] == '.' && s[1] == '.')
            return rb_cfg_error(c, "'%s' must stay inside the output folder", path);
        s += n + (s[n] == '/');
    }
    return RB_OK;
}

/* A library check's error (e.g. an unknown file extension) at the current path. */
static int relay(cfg *c, const rb_err *e)
{
    return e->code == RB_ENOMEM ? rb_cfg_nomem(c) : rb_cfg_error(c, "%s", e->msg);
}

static bool valid_signal_name(const char *s)
{
    if (!*s || *s == '/')
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr("_.-/", *s)))
            return false;
    return true;
}

static int check_signal_name(cfg *c, const char *name)
{
    if (valid_signal_name(name))
        return RB_OK;
    return rb_cfg_error(c, "signal name '%s' may use only letters, digits and _ . - / (not first)", name);
}

/* ---- name, model, logs, clock, window, gap_factor ---------------------------------------------------------- */
static int parse_name(cfg *c, const cJSON *v)
{
    rb_free(c->p->name); /* the default from the file name */
    c->p->name = NULL;
    return rb_cfg_want_string(c, v, false, &c->p->name);
}

/* The model is loaded here, once: stages share it read-only, and a wrong joint or link is a config error. */
static int parse_model(cfg *c, const cJSON *v)
{
    static const char *const keys[] = {"urdf", "joints", "base", "floating"};
    rb_pipeline *p = c->p;
    int rc = rb_cfg_check_object(c, v, keys, 4);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "urdf", true, &p->model_urdf);
    if (!rc)
        rc = resolve_path(c, &p->model_urdf);
    if (!rc)
        rc = member_string_array(c, v, "joints", false, true, &p->model_joints, &p->n_model_joints);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "base", false, &p->model_base);
    const cJSON *fl = rb_cfg_member(v, "floating");
    if (!rc && fl) {
        push_key(c, "floating", 0);
        if (!cJSON_IsBool(fl))
            rc = rb_cfg_error(c, "expected true or false");
        p->model_floating = cJSON_IsTrue(fl);
        pop(c);
    }
    if (!rc) {
        rb_model_opts mo = {.joints = (const char *const *)p->model_joints, .n_joints = p->n_model_joints,
                            .base = p->model_base, .floating = p->model_floating};
        rb_err e;
        if (rb_model_load_urdf(p->model_urdf, &mo, &p->model, &e) != RB_OK) {
            push_key(c, "urdf", 0);
            rc = e.code == RB_ENOMEM ? rb_cfg_nomem(c) : rb_cfg_error(c, "%s", e.msg);
            pop(c);
        }
    }
    return rc;
}

/* One log: a path or an array of paths (one session). */
static int parse_session(cfg *c, const cJSON *e, void *item)
{
    rb_config_session *s = item;
    int rc;
    if (cJSON_IsString(e)) {
        s->paths = rb_calloc(1, sizeof *s->paths);
        if (!s->paths)
            return rb_cfg_nomem(c);
        s->n_paths = 1;
        rc = rb_cfg_want_string(c, e, false, &s->paths[0]);
    } else if (cJSON_IsArray(e)) {
        rc = want_string_array(c, e, false, &s->paths, &s->n_paths);
    } else {
        return rb_cfg_error(c, "expected a path or an array of paths (one session)");
    }
    for (size_t i = 0; !rc && i < s->n_paths; i++)
        rc = resolve_path(c, &s->paths[i]);
    return rc;
}

static int parse_logs(cfg *c, const cJSON *v)
{
    int rc;
    c->p->logs = parse_list(c, v, "expected an array of paths", sizeof *c->p->logs, parse_session, &c->p->n_logs, &rc);
    return rc;
}

static int parse_clock(cfg *c, const cJSON *v)
{
    static const char *const keys[] = {"rate", "channel"};
    int rc = rb_cfg_check_object(c, v, keys, 2);
    if (rc)
        return rc;
    const cJSON *rate = rb_cfg_member(v, "rate"), *channel = rb_cfg_member(v, "channel");
    if ((rate != NULL) == (channel != NULL))
        return rb_cfg_error(c, "give exactly one of 'rate' (Hz) or 'channel'");
    if (channel)
        return rb_cfg_member_string(c, v, "channel", true, &c->p->clock_channel);
    push_key(c, "rate", 0);
    rc = rb_cfg_want_number(c, rate, &c->p->clock_rate);
    if (!rc && !(c->p->clock_rate > 0))
        rc = rb_cfg_error(c, "must be > 0 (Hz)");
    pop(c);
    return rc;
}

static int parse_window(cfg *c, const cJSON *v)
{
    c->p->has_window = true;
    return want_window(c, v, &c->p->t0, &c->p->t1);
}

static int parse_gap_factor(cfg *c, const cJSON *v)
{
    int rc = rb_cfg_want_number(c, v, &c->p->gap_factor);
    return !rc && !(c->p->gap_factor > 1) ? rb_cfg_error(c, "must be > 1") : rc;
}

/* ---- signals ------------------------------------------------------------------------------------------------ */
static int parse_elements(cfg *c, const cJSON *v, rb_config_signal *sig)
{
    if (!cJSON_IsArray(v) || !v->child)
        return rb_cfg_error(c, "expected a non-empty array of element names or indices");
    size_t n = count_children(v), i = 0;
    bool by_name = cJSON_IsString(v->child);
    if (by_name)
        sig->select_names = rb_calloc(n, sizeof *sig->select_names);
    else
        sig->select_indices = rb_calloc(n, sizeof *sig->select_indices);
    if (!sig->select_names && !sig->select_indices)
        return rb_cfg_nomem(c);
    sig->n_select = n;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        push_index(c, i);
        int rc = RB_OK;
        if (by_name) {
            rc = cJSON_IsString(e) ? rb_cfg_want_string(c, e, false, &sig->select_names[i])
                                   : rb_cfg_error(c, "expected an element name (all names or all indices)");
        } else if (!cJSON_IsNumber(e) || !is_integral(e->valuedouble) || e->valuedouble < 0) {
            rc = rb_cfg_error(c, "expected an element index >= 0 (all names or all indices)");
        } else {
            sig->select_indices[i] = (size_t)e->valuedouble;
        }
        pop(c);
        if (rc)
            return rc;
    }
    return RB_OK;
}

static int parse_binding(cfg *c, const cJSON *v, rb_config_signal *sig)
{
    static const char *const keys[] = {"channel", "elements", "interp", "nonfinite"};
    static const char *const interps[] = {"linear", "hold", NULL};  /* RB_INTERP_LINEAR, RB_INTERP_HOLD */
    static const char *const policies[] = {"error", "hold", NULL}; /* RB_NONFINITE_ERROR, RB_NONFINITE_HOLD */
    int rc = rb_cfg_check_object(c, v, keys, 4);
    const cJSON *ch = rb_cfg_member(v, "channel");
    if (!rc && cJSON_IsArray(ch)) {
        rc = member_string_array(c, v, "channel", true, false, &sig->channels, &sig->n_channels);
    } else if (!rc) {
        sig->channels = rb_calloc(1, sizeof *sig->channels);
        if (!sig->channels)
            return rb_cfg_nomem(c);
        sig->n_channels = 1;
        rc = rb_cfg_member_string(c, v, "channel", true, &sig->channels[0]);
    }
    if (!rc)
        sig->channel = sig->channels[0];
    const cJSON *e = rb_cfg_member(v, "elements");
    if (!rc && e && sig->n_channels > 1) {
        push_key(c, "elements", 0);
        rc = rb_cfg_error(c, "not with several channels (bind the channels one by one to select elements)");
        pop(c);
    } else if (!rc && e) {
        push_key(c, "elements", 0);
        rc = parse_elements(c, e, sig);
        pop(c);
    }
    size_t interp = 0, nonfinite = 0;
    if (!rc)
        rc = rb_cfg_member_choice(c, v, "interp", interps, &interp);
    if (!rc)
        rc = rb_cfg_member_choice(c, v, "nonfinite", policies, &nonfinite);
    sig->interp = interp ? RB_INTERP_HOLD : RB_INTERP_LINEAR;
    sig->nonfinite = nonfinite ? RB_NONFINITE_HOLD : RB_NONFINITE_ERROR;
    return rc;
}

static int parse_signals(cfg *c, const cJSON *v)
{
    int rc = rb_cfg_check_object(c, v, NULL, 0);
    if (rc)
        return rc;
    size_t n = count_children(v), i = 0;
    if (n == 0)
        return rb_cfg_error(c, "expected at least one signal bound to a log channel");
    c->p->signals = rb_calloc(n, sizeof *c->p->signals);
    if (!c->p->signals)
        return rb_cfg_nomem(c);
    c->p->n_signals = n;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        rb_config_signal *sig = &c->p->signals[i];
        push_key(c, e->string, 0);
        rc = check_signal_name(c, e->string);
        if (!rc) {
            sig->name = rb_strdup(e->string);
            rc = sig->name ? parse_binding(c, e, sig) : rb_cfg_nomem(c);
        }
        pop(c);
        if (rc)
            return rc;
    }
    return RB_OK;
}

/* ---- stage parameters ----------------------------------------------------------------------------------- */
static void bounds_text(const rb_param_spec *ps, char *buf, size_t size)
{
    char lo[40] = "", hi[40] = "";
    if (ps->has_min)
        snprintf(lo, sizeof lo, "%s %.17g", ps->min_exclusive ? ">" : ">=", ps->min);
    if (ps->has_max)
        snprintf(hi, sizeof hi, "%s %.17g", ps->max_exclusive ? "<" : "<=", ps->max);
    snprintf(buf, size, "must be %s%s%s", lo, lo[0] && hi[0] ? " and " : "", hi);
}

/* One number of a NUMBER / INTEGER parameter (or array element) at the current path. */
static int param_number(cfg *c, const cJSON *v, const rb_param_spec *ps, bool integer, double *out)
{
    int rc = rb_cfg_want_number(c, v, out);
    if (rc)
        return integer && !cJSON_IsNumber(v) ? rb_cfg_error(c, "expected an integer") : rc;
    if (integer && !is_integral(*out))
        return rb_cfg_error(c, "expected an integer");
    if (!rb_pipe_param_within(ps, *out)) {
        char b[96];
        bounds_text(ps, b, sizeof b);
        return rb_cfg_error(c, "%s", b);
    }
    return RB_OK;
}

static int param_string(cfg *c, const cJSON *v, const rb_param_spec *ps, char **out)
{
    if (ps->choices) {
        size_t index;
        int rc = rb_cfg_want_choice(c, v, ps->choices, &index);
        if (rc)
            return rc;
    }
    return rb_cfg_want_string(c, v, true, out);
}

static int param_array(cfg *c, const cJSON *v, const rb_param_spec *ps, rb_param_value *val)
{
    bool numbers = ps->kind == RB_PARAM_NUMBER_ARRAY;
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, numbers ? "expected an array of numbers" : "expected an array of strings");
    size_t n = count_children(v), i = 0;
    if (n < ps->min_count || (ps->max_count && n > ps->max_count)) {
        if (ps->max_count == ps->min_count)
            return rb_cfg_error(c, "expected %zu values, got %zu", ps->min_count, n);
        if (ps->max_count)
            return rb_cfg_error(c, "expected %zu to %zu values, got %zu", ps->min_count, ps->max_count, n);
        return rb_cfg_error(c, "expected at least %zu values, got %zu", ps->min_count, n);
    }
    if (numbers)
        val->numbers = rb_calloc(n ? n : 1, sizeof *val->numbers);
    else
        val->strings = rb_calloc(n ? n : 1, sizeof *val->strings);
    if (!val->numbers && !val->strings)
        return rb_cfg_nomem(c);
    val->count = n;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        push_index(c, i);
        int rc = numbers ? param_number(c, e, ps, false, &val->numbers[i]) : param_string(c, e, ps, &val->strings[i]);
        pop(c);
        if (rc)
            return rc;
    }
    return RB_OK;
}

static int param_value(cfg *c, const cJSON *v, const rb_param_spec *ps, rb_param_value *val)
{
    val->given = true;
    switch (ps->kind) {
    case RB_PARAM_NUMBER: return param_number(c, v, ps, false, &val->number);
    case RB_PARAM_INTEGER: return param_number(c, v, ps, true, &val->number);
    case RB_PARAM_BOOLEAN:
        if (!cJSON_IsBool(v))
            return rb_cfg_error(c, "expected true or false");
        val->number = cJSON_IsTrue(v) ? 1 : 0;
        return RB_OK;
    case RB_PARAM_STRING: return param_string(c, v, ps, &val->string);
    case RB_PARAM_NUMBER_ARRAY:
    case RB_PARAM_STRING_ARRAY: return param_array(c, v, ps, val);
    }
    return rb_cfg_error(c, "unsupported parameter kind");
}

static int param_default(cfg *c, const rb_param_spec *ps, rb_param_value *val)
{
    val->given = false;
    val->number = ps->def_number;
    if (ps->kind == RB_PARAM_STRING && ps->def_string && !(val->string = rb_strdup(ps->def_string)))
        return rb_cfg_nomem(c);
    if (ps->kind == RB_PARAM_NUMBER_ARRAY || ps->kind == RB_PARAM_STRING_ARRAY) {
        size_t n = ps->def_count;
        if (ps->kind == RB_PARAM_NUMBER_ARRAY && !(val->numbers = rb_calloc(n ? n : 1, sizeof(double))))
            return rb_cfg_nomem(c);
        if (ps->kind == RB_PARAM_STRING_ARRAY && !(val->strings = rb_calloc(n ? n : 1, sizeof(char *))))
            return rb_cfg_nomem(c);
        val->count = n;
        for (size_t i = 0; i < n; i++) {
            if (ps->kind == RB_PARAM_NUMBER_ARRAY)
                val->numbers[i] = ps->def_numbers[i];
            else if (!(val->strings[i] = rb_strdup(ps->def_strings[i])))
                return rb_cfg_nomem(c);
        }
    }
    return RB_OK;
}

/* `params` of a stage (v may be NULL); the current path is the stage. */
static int parse_params(cfg *c, const cJSON *v, rb_config_stage *st)
{
    const rb_stage_type *t = st->type;
    st->params = rb_calloc(t->n_params ? t->n_params : 1, sizeof *st->params);
    if (!st->params)
        return rb_cfg_nomem(c);
    int rc = RB_OK;
    if (v) {
        push_key(c, "params", 0);
        const char **names = rb_malloc((t->n_params ? t->n_params : 1) * sizeof *names);
        if (!names)
            return rb_cfg_nomem(c);
        for (size_t i = 0; i < t->n_params; i++)
            names[i] = t->params[i].name;
        rc = rb_cfg_check_object(c, v, names, t->n_params);
        rb_free(names);
    }
    for (size_t i = 0; !rc && i < t->n_params; i++) {
        const rb_param_spec *ps = &t->params[i];
        const cJSON *pv = v ? rb_cfg_member(v, ps->name) : NULL;
        if (pv) {
            push_key(c, ps->name, 0);
            rc = param_value(c, pv, ps, &st->params[i]);
            pop(c);
        } else if (ps->required) {
            rc = rb_cfg_error(c, "missing required parameter '%s' (%s: %s)", ps->name, rb_param_kind_name(ps->kind),
                              ps->doc ? ps->doc : "");
        } else {
            rc = param_default(c, ps, &st->params[i]);
        }
    }
    if (v)
        pop(c);
    return rc;
}

/* ---- stages ---------------------------------------------------------------------------------------------- */
/* "in" / "out" of a stage: port -> signal name. Every input port is wired; an output port may be left
 * out ((*out)[j] NULL: the runner computes it into scratch), but at least one must be wired. */
static int parse_ports(cfg *c, const cJSON *stage, const char *key, const char *const *ports, size_t n_ports,
                       char ***out)
{
    const bool inputs = strcmp(key, "in") == 0;
    *out = rb_calloc(n_ports ? n_ports : 1, sizeof **out);
    if (!*out)
        return rb_cfg_nomem(c);
    const cJSON *v = rb_cfg_member(stage, key);
    if (!v)
        return n_ports ? rb_cfg_error(c, "missing key '%s'", key) : RB_OK;
    push_key(c, key, 0);
    int rc = rb_cfg_check_object(c, v, ports, n_ports);
    size_t wired = 0;
    for (size_t j = 0; !rc && j < n_ports; j++) {
        const cJSON *w = rb_cfg_member(v, ports[j]);
        if (!w) {
            if (inputs && !(j < 64 && (c->stage_optional >> j & 1)))
                rc = rb_cfg_error(c, "missing input port '%s'", ports[j]);
            continue;
        }
        push_key(c, ports[j], 0);
        rc = rb_cfg_want_string(c, w, false, &(*out)[j]);
        if (!rc && !inputs)
            rc = check_signal_name(c, (*out)[j]);
        pop(c);
        wired++;
    }
    if (!rc && !inputs && n_ports && !wired) {
        char list[256];
        size_t used = 0;
        list[0] = '\0';
        for (size_t j = 0; j < n_ports && used < sizeof list; j++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", j ? ", " : "", ports[j]);
        rc = rb_cfg_error(c, "no output port is wired: wire at least one of %s", list);
    }
    pop(c);
    return rc;
}

static int parse_stage_type(cfg *c, const cJSON *stage, rb_config_stage *st)
{
    char *name = NULL;
    int rc = rb_cfg_member_string(c, stage, "type", true, &name);
    if (rc)
        return rc;
    st->type = rb_registry_find(c->reg, name);
    if (!st->type) {
        rb_suggest s;
        rb_suggest_init(&s, name);
        for (size_t i = 0; i < rb_registry_count(c->reg); i++)
            rb_suggest_consider(&s, rb_registry_at(c->reg, i)->name);
        const char *best = rb_suggest_best(&s);
        push_key(c, "type", 0);
        if (best)
            rc = rb_cfg_error(c, "unknown stage type '%s' (did you mean '%s'?)", name, best);
        else
            rc = rb_cfg_error(c, "unknown stage type '%s' (roboest --help lists the stage types)", name);
        pop(c);
    }
    rb_free(name);
    return rc;
}

static int parse_stage(cfg *c, const cJSON *v, void *item)
{
    static const char *const keys[] = {"id", "type", "in", "out", "params"};
    rb_config_stage *st = item;
    int rc = rb_cfg_check_object(c, v, keys, 5);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "id", true, &st->id);
    if (!rc)
        rc = parse_stage_type(c, v, st);
    if (rc)
        return rc;
    const rb_stage_type *t = st->type;
    c->stage_optional = t->optional_inputs;
    rc = parse_ports(c, v, "in", t->inputs, t->n_inputs, &st->in);
    if (!rc)
        rc = parse_ports(c, v, "out", t->outputs, t->n_outputs, &st->out);
    if (!rc)
        rc = parse_params(c, rb_cfg_member(v, "params"), st);
    if (!rc) {
        st->in_signal = rb_calloc(t->n_inputs ? t->n_inputs : 1, sizeof *st->in_signal);
        st->out_signal = rb_calloc(t->n_outputs ? t->n_outputs : 1, sizeof *st->out_signal);
        if (!st->in_signal || !st->out_signal)
            rc = rb_cfg_nomem(c);
    }
    return rc;
}

static int parse_stages(cfg *c, const cJSON *v)
{
    rb_pipeline *p = c->p;
    int rc;
    p->stages = parse_list(c, v, "expected an array of stages", sizeof *p->stages, parse_stage, &p->n_stages, &rc);
    if (rc)
        return rc;
    const char **ids = rb_malloc((p->n_stages ? p->n_stages : 1) * sizeof *ids);
    if (!ids)
        return rb_cfg_nomem(c);
    for (size_t i = 0; i < p->n_stages; i++) {
        p->stages[i].file_index = i; /* kept for messages once graph.c reorders the stages */
        ids[i] = p->stages[i].id;
    }
    size_t dup, first;
    rc = rb_cfg_find_duplicate(c, ids, p->n_stages, &dup, &first);
    rb_free(ids);
    if (!rc && dup != SIZE_MAX) {
        push_index(c, dup);
        push_key(c, "id", 0);
        rc = rb_cfg_error(c, "stage id '%s' is also used by stages[%zu]", p->stages[dup].id, first);
        pop(c);
        pop(c);
    }
    return rc;
}

/* ---- outputs, metrics, reports ---------------------------------------------------------------------------- */
static int parse_output(cfg *c, const cJSON *v, void *item)
{
    static const char *const keys[] = {"path", "signals"};
    rb_config_output *o = item;
    int rc = rb_cfg_check_object(c, v, keys, 2);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "path", true, &o->path);
    if (rc)
        return rc;
    push_key(c, "path", 0);
    rc = check_relative(c, o->path);
    rb_err e;
    if (!rc && rb_out_format_from_path(o->path, &o->format, &e) != RB_OK)
        rc = relay(c, &e);
    pop(c);
    if (!rc)
        rc = member_string_array(c, v, "signals", true, false, &o->signals, &o->n_signals);
    if (!rc && !(o->signal_index = rb_calloc(o->n_signals, sizeof *o->signal_index)))
        rc = rb_cfg_nomem(c);
    return rc;
}

static int parse_outputs(cfg *c, const cJSON *v)
{
    int rc;
    c->p->outputs = parse_list(c, v, "expected an array", sizeof *c->p->outputs, parse_output, &c->p->n_outputs, &rc);
    return rc;
}

static int parse_metric(cfg *c, const cJSON *v, void *item)
{
    static const char *const keys[] = {"estimate", "reference", "window", "name"};
    rb_config_metric *m = item;
    int rc = rb_cfg_check_object(c, v, keys, 4);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "estimate", true, &m->estimate);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "reference", true, &m->reference);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "name", false, &m->name);
    if (!rc && !m->name && !(m->name = rb_strdup(m->estimate)))
        rc = rb_cfg_nomem(c);
    m->t0 = -INFINITY;
    m->t1 = INFINITY;
    const cJSON *w = rb_cfg_member(v, "window");
    if (!rc && w) {
        push_key(c, "window", 0);
        rc = want_window(c, w, &m->t0, &m->t1);
        m->has_window = true;
        pop(c);
    }
    return rc;
}

static int parse_metrics(cfg *c, const cJSON *v)
{
    int rc;
    c->p->metrics = parse_list(c, v, "expected an array", sizeof *c->p->metrics, parse_metric, &c->p->n_metrics, &rc);
    return rc;
}

static int parse_reports(cfg *c, const cJSON *v)
{
    char **paths = NULL;
    size_t n = 0;
    int rc = want_string_array(c, v, true, &paths, &n);
    if (!rc && !(c->p->reports = rb_calloc(n ? n : 1, sizeof *c->p->reports)))
        rc = rb_cfg_nomem(c);
    if (!rc)
        c->p->n_reports = n;
    for (size_t i = 0; i < n; i++) {
        if (c->p->reports)
            c->p->reports[i].path = paths[i];
        else
            rb_free(paths[i]);
    }
    rb_free(paths);
    for (size_t i = 0; !rc && i < n; i++) {
        push_index(c, i);
        rc = check_relative(c, c->p->reports[i].path);
        rb_err e;
        if (!rc && rb_report_format_from_path(c->p->reports[i].path, &c->p->reports[i].format, &e) != RB_OK)
            rc = relay(c, &e);
        pop(c);
    }
    return rc;
}

/* ---- the top level ------------------------------------------------------------------------------------------ */
/* Every top-level key, in the order the sections are read. */
static const struct section {
    const char *key;
    bool required;
    int (*parse)(cfg *, const cJSON *);
} sections[] = {
    {"name", false, parse_name},
    {"model", false, parse_model},
    {"logs", false, parse_logs},
    {"clock", true, parse_clock},
    {"window", false, parse_window},
    {"gap_factor", false, parse_gap_factor},
    {"signals", true, parse_signals},
    {"stages", false, parse_stages},
    {"outputs", false, parse_outputs},
    {"metrics", false, parse_metrics},
    {"reports", false, parse_reports},
};

enum { N_SECTIONS = sizeof sections / sizeof sections[0] };

static int parse_root(cfg *c, const cJSON *root)
{
    const char *keys[N_SECTIONS];
    for (size_t i = 0; i < N_SECTIONS; i++)
        keys[i] = sections[i].key;
    int rc = rb_cfg_check_object(c, root, keys, N_SECTIONS);
    c->p->t0 = -INFINITY;
    c->p->t1 = INFINITY;
    c->p->gap_factor = 3.0;
    for (size_t i = 0; !rc && i < N_SECTIONS; i++) {
        const cJSON *v = rb_cfg_member(root, sections[i].key);
        if (!v) {
            if (sections[i].required)
                rc = rb_cfg_error(c, "missing key '%s'", sections[i].key);
            continue;
        }
        push_key(c, sections[i].key, 0);
        rc = sections[i].parse(c, v);
        pop(c);
    }
    return rc;
}

/* ---- entry points ------------------------------------------------------------------------------------------- */
void rb_pipe_free_strings(char **s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        rb_free(s[i]);
    rb_free(s);
}

static void free_stage(rb_config_stage *st)
{
    const rb_stage_type *t = st->type;
    rb_free(st->id);
    if (t) {
        rb_pipe_free_strings(st->in, t->n_inputs);
        rb_pipe_free_strings(st->out, t->n_outputs);
        for (size_t i = 0; st->params && i < t->n_params; i++) {
            rb_free(st->params[i].string);
            rb_free(st->params[i].numbers);
            rb_pipe_free_strings(st->params[i].strings, st->params[i].count);
        }
    }
    rb_free(st->params);
    rb_free(st->in_signal);
    rb_free(st->out_signal);
}

void rb_pipeline_free(rb_pipeline *p)
{
    if (!p)
        return;
    rb_free(p->name);
    rb_free(p->config_path);
    rb_free(p->config_sha256);
    rb_model_free(p->model);
    rb_free(p->model_urdf);
    rb_free(p->model_base);
    rb_free(p->config_dir);
    rb_pipe_free_strings(p->model_joints, p->n_model_joints);
    for (size_t i = 0; p->logs && i < p->n_logs; i++)
        rb_pipe_free_strings(p->logs[i].paths, p->logs[i].n_paths);
    rb_free(p->logs);
    rb_free(p->clock_channel);
    for (size_t i = 0; p->signals && i < p->n_signals; i++) {
        rb_config_signal *s = &p->signals[i];
        rb_free(s->name);
        rb_pipe_free_strings(s->channels, s->n_channels);
        rb_pipe_free_strings(s->select_names, s->select_names ? s->n_select : 0);
        rb_free(s->select_indices);
    }
    rb_free(p->signals);
    for (size_t i = 0; p->stages && i < p->n_stages; i++)
        free_stage(&p->stages[i]);
    rb_free(p->stages);
    for (size_t i = 0; p->outputs && i < p->n_outputs; i++) {
        rb_free(p->outputs[i].path);
        rb_pipe_free_strings(p->outputs[i].signals, p->outputs[i].n_signals);
        rb_free(p->outputs[i].signal_index);
    }
    rb_free(p->outputs);
    for (size_t i = 0; p->metrics && i < p->n_metrics; i++) {
        rb_free(p->metrics[i].name);
        rb_free(p->metrics[i].estimate);
        rb_free(p->metrics[i].reference);
    }
    rb_free(p->metrics);
    for (size_t i = 0; p->reports && i < p->n_reports; i++)
        rb_free(p->reports[i].path);
    rb_free(p->reports);
    rb_free(p->signal_table);
    rb_free(p);
}

long rb_pipeline_signal_index(const rb_pipeline *p, const char *name)
{
    for (size_t t = 0; t < p->n_signal_table; t++)
        if (strcmp(p->signal_table[t].name, name) == 0)
            return (long)t;
    return -1;
}

/* "<file>:<line>:<col>: malformed JSON (...)". cJSON's stop offset can lie one byte past the culprit,
 * so the position and reason come from our own syntax check; cJSON's offset is the fallback. */
int rb_cfg_malformed(const char *file, const char *text, size_t len, size_t cjson_offset, const char *why, rb_err *err)
{
    size_t offset = cjson_offset;
    if (!why) {
        size_t at = rb_json_syntax_error(text, len, &why);
        if (at != SIZE_MAX)
            offset = at;
        else
            why = "rejected by the parser";
    }
    size_t line = 1, col = 1;
    for (size_t i = 0; i < offset && i < len; i++, col++)
        if (text[i] == '\n') {
            line++;
            col = 0;
        }
    char found[48] = "";
    unsigned char ch = offset < len ? (unsigned char)text[offset] : 0;
    if (strncmp(why, "expected", 8) != 0 && strncmp(why, "unexpected", 10) != 0)
        found[0] = '\0';
    else if (offset >= len)
        snprintf(found, sizeof found, ", found the end of the text");
    else if (ch > 0x20 && ch < 0x7f)
        snprintf(found, sizeof found, ", found '%c'", ch);
    else
        snprintf(found, sizeof found, ", found byte 0x%02x", ch);
    return rb_err_set(err, RB_ECONFIG, "%s:%zu:%zu: malformed JSON (%s%s)", file, line, col, why, found);
}

const char *rb_pipe_stem(const char *path, size_t *len)
{
    const char *base = rb_path_basename(path), *dot = strrchr(base, '.');
    *len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    return base;
}

static char *default_name(const char *file)
{
    size_t n;
    const char *base = rb_pipe_stem(file, &n);
    return n ? rb_strndup(base, n) : rb_strdup("pipeline");
}

static int init_pipeline(rb_pipeline *p, const char *text, size_t len, const char *file)
{
    p->config_sha256 = rb_sha256_hexdup(text, len);
    p->config_path = rb_strdup(file);
    p->name = default_name(file);
    return p->config_sha256 && p->config_path && p->name ? RB_OK : RB_ENOMEM;
}

int rb_cfg_parse_json(const char *file, const char *text, size_t len, cJSON **root, rb_err *err)
{
    const char *nul = memchr(text, '\0', len);
    if (nul)
        return rb_cfg_malformed(file, text, len, (size_t)(nul - text), "NUL byte", err);
    const char *end = NULL;
    *root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
    if (!*root)
        return rb_cfg_malformed(file, text, len, end ? (size_t)(end - text) : 0, NULL, err);
    return RB_OK;
}

int rb_pipeline_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                          const rb_registry *reg, rb_pipeline **out, rb_err *err)
{
    const char *file = name_for_messages ? name_for_messages : "pipeline.json";
    *out = NULL;
    char *copy = rb_strndup(text, len);
    rb_pipeline *p = rb_calloc(1, sizeof *p);
    cJSON *root = NULL;
    int rc = RB_OK;
    if (!copy || !p || init_pipeline(p, text, len, file) != RB_OK) {
        rc = rb_err_set(err, RB_ENOMEM, "%s: out of memory", file);
        goto done;
    }
    if ((rc = rb_cfg_parse_json(file, copy, len, &root, err)))
        goto done;
    cfg c = {file, copy, len, base_file, reg, p, err, 0, {{NULL, 0}}, 0};
    if (!(p->config_dir = rb_path_relative_to(base_file, "."))) {
        rc = rb_err_set(err, RB_ENOMEM, "%s: out of memory", file);
        goto done;
    }
    rc = parse_root(&c, root);
    if (!rc)
        rc = rb_cfg_check_graph(&c);
done:
    cJSON_Delete(root);
    rb_free(copy);
    if (rc)
        rb_pipeline_free(p);
    else
        *out = p;
    return rc;
}

int rb_cfg_read_file(const char *path, char **text, size_t *len, rb_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return rb_err_set(err, errno == ENOENT ? RB_ENOTFOUND : RB_EINPUT, "%s: cannot open: %s", path,
                          strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = rb_malloc(cap);
    int rc = RB_OK;
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        if (cap >= CONFIG_MAX_BYTES) {
            rc = rb_err_set(err, RB_EINPUT, "%s: larger than %u MiB", path, CONFIG_MAX_BYTES >> 20);
            break;
        }
        char *grown = rb_realloc(buf, cap * 2);
        if (!grown) {
            rb_free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    if (!rc && !buf)
        rc = rb_err_set(err, RB_ENOMEM, "%s: out of memory", path);
    if (!rc && ferror(f))
        rc = rb_err_set(err, RB_EINPUT, "%s: read error", path);
    fclose(f);
    if (rc) {
        rb_free(buf);
        return rc;
    }
    *text = buf;
    *len = n;
    return RB_OK;
}

int rb_pipeline_load(const char *path, const rb_registry *reg, rb_pipeline **out, rb_err *err)
{
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = rb_cfg_read_file(path, &text, &len, err);
    if (rc)
        return rc;
    rc = rb_pipeline_load_text(text, len, path, path, reg, out, err);
    rb_free(text);
    return rc;
}

/* ---- for other loaders in this module (suite.c) ---------------------------------------------------------- */
int rb_cfg_want_window(cfg *c, const cJSON *v, double *t0, double *t1) { return want_window(c, v, t0, t1); }

int rb_cfg_want_strings(cfg *c, const cJSON *v, bool allow_empty, char ***out, size_t *n)
{
    return want_string_array(c, v, allow_empty, out, n);
}

int rb_cfg_want_session(cfg *c, const cJSON *v, rb_config_session *s) { return parse_session(c, v, s); }
