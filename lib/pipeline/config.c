/* Pipeline configuration: JSON text -> validated, typed rb_pipeline. Structure first (keys, types,
 * ranges, stage schemas), then the signal graph (who produces what, wiring, order). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/pipeline.h"

#define CONFIG_MAX_BYTES (64u << 20)

typedef struct cfg {
    const char *file; /* for messages */
    const char *text; /* NUL-terminated copy of the source */
    size_t len;
    const char *base_file;
    const rb_registry *reg;
    rb_pipeline *p;
    rb_err *err;
    size_t depth;
    rb_json_step path[RB_JSON_PATH_MAX];
} cfg;

static void push_key(cfg *c, const char *key, size_t occurrence)
{
    if (c->depth < RB_JSON_PATH_MAX)
        c->path[c->depth] = (rb_json_step){key, occurrence};
    c->depth++;
}

static void push_index(cfg *c, size_t i)
{
    if (c->depth < RB_JSON_PATH_MAX)
        c->path[c->depth] = (rb_json_step){NULL, i};
    c->depth++;
}

static void pop(cfg *c) { c->depth--; }

static size_t path_depth(const cfg *c) { return c->depth < RB_JSON_PATH_MAX ? c->depth : RB_JSON_PATH_MAX; }

/* "<file>:<line>:<col>: <key path>: <what>" at the current path. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int bad(cfg *c, const char *fmt, ...)
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

static int nomem(cfg *c) { return rb_err_set(c->err, RB_ENOMEM, "%s: out of memory", c->file); }

static const cJSON *member(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

static size_t count_children(const cJSON *node)
{
    size_t n = 0;
    for (const cJSON *ch = node->child; ch; ch = ch->next)
        n++;
    return n;
}

/* ---- duplicates ---------------------------------------------------------------------------------- */
typedef struct name_ref {
    const char *name;
    size_t index;
} name_ref;

static int cmp_name_ref(const void *a, const void *b)
{
    const name_ref *x = a, *y = b;
    int d = strcmp(x->name, y->name);
    return d ? d : (x->index > y->index) - (x->index < y->index);
}

/* The lowest index whose name equals an earlier one (*dup, with that earlier one in *first unless first is
 * NULL), or *dup = SIZE_MAX. NULL names are skipped. Sorting keeps large objects from costing n^2. */
static int find_duplicate(cfg *c, const char *const *names, size_t n, size_t *dup, size_t *first)
{
    size_t unused;
    first = first ? first : &unused;
    *dup = *first = SIZE_MAX;
    if (n < 2)
        return RB_OK;
    name_ref *refs = rb_malloc(n * sizeof *refs);
    if (!refs)
        return nomem(c);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (names[i])
            refs[m++] = (name_ref){names[i], i};
    qsort(refs, m, sizeof *refs, cmp_name_ref);
    for (size_t i = 1; i < m; i++) {
        bool second_of_group = strcmp(refs[i].name, refs[i - 1].name) == 0 &&
                               (i < 2 || strcmp(refs[i - 1].name, refs[i - 2].name) != 0);
        if (second_of_group && refs[i].index < *dup) {
            *dup = refs[i].index;
            *first = refs[i - 1].index;
        }
    }
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
static int check_object(cfg *c, const cJSON *obj, const char *const *allowed, size_t n_allowed)
{
    if (!cJSON_IsObject(obj))
        return bad(c, "expected an object");
    size_t n = count_children(obj), dup, i = 0;
    const char **keys = rb_malloc((n ? n : 1) * sizeof *keys);
    if (!keys)
        return nomem(c);
    for (const cJSON *ch = obj->child; ch; ch = ch->next)
        keys[i++] = ch->string ? ch->string : "";
    int rc = find_duplicate(c, keys, n, &dup, NULL);
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
static int want_string(cfg *c, const cJSON *v, bool allow_empty, char **out)
{
    if (!cJSON_IsString(v) || !v->valuestring)
        return bad(c, "expected a string");
    if (!allow_empty && !v->valuestring[0])
        return bad(c, "must not be empty");
    *out = rb_strdup(v->valuestring);
    return *out ? RB_OK : nomem(c);
}

static int want_number(cfg *c, const cJSON *v, double *out)
{
    if (!cJSON_IsNumber(v))
        return bad(c, "expected a number");
    if (!isfinite(v->valuedouble))
        return bad(c, "expected a finite number");
    *out = v->valuedouble;
    return RB_OK;
}

static bool is_integral(double x) { return x == floor(x) && fabs(x) <= 9007199254740992.0; }

/* One of `choices` (NULL-terminated) with a suggestion for a near miss. */
static int want_choice(cfg *c, const cJSON *v, const char *const *choices, size_t *index)
{
    if (!cJSON_IsString(v) || !v->valuestring)
        return bad(c, "expected a string");
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
        return bad(c, "unknown value '%s' (did you mean '%s'?)", v->valuestring, best);
    return bad(c, "unknown value '%s' (expected one of %s)", v->valuestring, list);
}

static int want_window(cfg *c, const cJSON *v, double *t0, double *t1)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2)
        return bad(c, "expected [t0, t1] in seconds");
    double w[2];
    size_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        push_index(c, i);
        int rc = want_number(c, e, &w[i]);
        if (!rc && i == 1 && !(w[1] > w[0]))
            rc = bad(c, "must be greater than window[0] (%.17g)", w[0]);
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
        return bad(c, "expected an array of strings");
    size_t count = count_children(v), i = 0;
    if (!count && !allow_empty)
        return bad(c, "must not be empty");
    *out = rb_calloc(count ? count : 1, sizeof **out);
    if (!*out)
        return nomem(c);
    *n = count;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        push_index(c, i);
        int rc = want_string(c, e, false, &(*out)[i]);
        pop(c);
        if (rc)
            return rc;
    }
    return RB_OK;
}

static int member_string(cfg *c, const cJSON *obj, const char *key, bool required, char **out)
{
    const cJSON *v = member(obj, key);
    if (!v)
        return required ? bad(c, "missing key '%s'", key) : RB_OK;
    push_key(c, key, 0);
    int rc = want_string(c, v, false, out);
    pop(c);
    return rc;
}

static int resolve_path(cfg *c, char **path)
{
    char *resolved = rb_path_relative_to(c->base_file, *path);
    if (!resolved)
        return nomem(c);
    rb_free(*path);
    *path = resolved;
    return RB_OK;
}

/* Output and report paths stay inside the run's output folder. */
static int check_relative(cfg *c, const char *path)
{
    if (path[0] == '/')
        return bad(c, "'%s' must be relative to the output folder", path);
    for (const char *s = path; *s;) {
        size_t n = strcspn(s, "/");
        if (n == 2 && s[0] == '.' && s[1] == '.')
            return bad(c, "'%s' must stay inside the output folder", path);
        s += n + (s[n] == '/');
    }
    return RB_OK;
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
    return bad(c, "signal name '%s' may use only letters, digits and _ . - / (not first)", name);
}

/* ---- top-level sections ------------------------------------------------------------------------------ */
static int parse_model(cfg *c, const cJSON *v)
{
    static const char *const keys[] = {"urdf", "joints"};
    int rc = check_object(c, v, keys, 2);
    if (!rc)
        rc = member_string(c, v, "urdf", true, &c->p->model_urdf);
    if (!rc)
        rc = resolve_path(c, &c->p->model_urdf);
    const cJSON *j = member(v, "joints");
    if (!rc && j) {
        push_key(c, "joints", 0);
        rc = want_string_array(c, j, true, &c->p->model_joints, &c->p->n_model_joints);
        pop(c);
    }
    return rc;
}

static int parse_session(cfg *c, const cJSON *e, rb_config_session *s)
{
    int rc;
    if (cJSON_IsString(e)) {
        s->paths = rb_calloc(1, sizeof *s->paths);
        if (!s->paths)
            return nomem(c);
        s->n_paths = 1;
        rc = want_string(c, e, false, &s->paths[0]);
    } else if (cJSON_IsArray(e)) {
        rc = want_string_array(c, e, false, &s->paths, &s->n_paths);
    } else {
        return bad(c, "expected a path or an array of paths (one session)");
    }
    for (size_t i = 0; !rc && i < s->n_paths; i++)
        rc = resolve_path(c, &s->paths[i]);
    return rc;
}

static int parse_logs(cfg *c, const cJSON *v)
{
    if (!cJSON_IsArray(v))
        return bad(c, "expected an array of paths");
    size_t n = count_children(v), i = 0;
    c->p->logs = rb_calloc(n ? n : 1, sizeof *c->p->logs);
    if (!c->p->logs)
        return nomem(c);
    c->p->n_logs = n;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        push_index(c, i);
        int rc = parse_session(c, e, &c->p->logs[i]);
        pop(c);
        if (rc)
            return rc;
    }
    return RB_OK;
}

static int parse_clock(cfg *c, const cJSON *v)
{
    static const char *const keys[] = {"rate", "channel"};
    int rc = check_object(c, v, keys, 2);
    if (rc)
        return rc;
    const cJSON *rate = member(v, "rate"), *channel = member(v, "channel");
    if ((rate != NULL) == (channel != NULL))
        return bad(c, "give exactly one of 'rate' (Hz) or 'channel'");
    if (channel)
        return member_string(c, v, "channel", true, &c->p->clock_channel);
    push_key(c, "rate", 0);
    rc = want_number(c, rate, &c->p->clock_rate);
    if (!rc && !(c->p->clock_rate > 0))
        rc = bad(c, "must be > 0 (Hz)");
    pop(c);
    return rc;
}

static int parse_elements(cfg *c, const cJSON *v, rb_config_signal *sig)
{
    if (!cJSON_IsArray(v) || !v->child)
        return bad(c, "expected a non-empty array of element names or indices");
    size_t n = count_children(v), i = 0;
    bool by_name = cJSON_IsString(v->child);
    if (by_name)
        sig->select_names = rb_calloc(n, sizeof *sig->select_names);
    else
        sig->select_indices = rb_calloc(n, sizeof *sig->select_indices);
    if (!sig->select_names && !sig->select_indices)
        return nomem(c);
    sig->n_select = n;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        push_index(c, i);
        int rc = RB_OK;
        if (by_name) {
            rc = cJSON_IsString(e) ? want_string(c, e, false, &sig->select_names[i])
                                   : bad(c, "expected an element name (all names or all indices)");
        } else if (!cJSON_IsNumber(e) || !is_integral(e->valuedouble) || e->valuedouble < 0) {
            rc = bad(c, "expected an element index >= 0 (all names or all indices)");
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
    static const char *const interps[] = {"linear", "hold", NULL};
    static const char *const policies[] = {"error", "hold", NULL};
    int rc = check_object(c, v, keys, 4);
    if (!rc)
        rc = member_string(c, v, "channel", true, &sig->channel);
    const cJSON *e = member(v, "elements"), *interp = member(v, "interp"), *nonfinite = member(v, "nonfinite");
    size_t choice = 0;
    if (!rc && e) {
        push_key(c, "elements", 0);
        rc = parse_elements(c, e, sig);
        pop(c);
    }
    sig->interp = RB_INTERP_LINEAR;
    if (!rc && interp) {
        push_key(c, "interp", 0);
        rc = want_choice(c, interp, interps, &choice);
        sig->interp = choice ? RB_INTERP_HOLD : RB_INTERP_LINEAR;
        pop(c);
    }
    sig->nonfinite = RB_NONFINITE_ERROR;
    if (!rc && nonfinite) {
        push_key(c, "nonfinite", 0);
        rc = want_choice(c, nonfinite, policies, &choice);
        sig->nonfinite = choice ? RB_NONFINITE_HOLD : RB_NONFINITE_ERROR;
        pop(c);
    }
    return rc;
}

static int parse_signals(cfg *c, const cJSON *v)
{
    int rc = check_object(c, v, NULL, 0);
    if (rc)
        return rc;
    size_t n = count_children(v), i = 0;
    if (n == 0)
        return bad(c, "expected at least one signal bound to a log channel");
    c->p->signals = rb_calloc(n, sizeof *c->p->signals);
    if (!c->p->signals)
        return nomem(c);
    c->p->n_signals = n;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        rb_config_signal *sig = &c->p->signals[i];
        push_key(c, e->string, 0);
        rc = check_signal_name(c, e->string);
        if (!rc) {
            sig->name = rb_strdup(e->string);
            rc = sig->name ? parse_binding(c, e, sig) : nomem(c);
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

static bool within(const rb_param_spec *ps, double x)
{
    if (ps->has_min && (ps->min_exclusive ? !(x > ps->min) : !(x >= ps->min)))
        return false;
    return !(ps->has_max && (ps->max_exclusive ? !(x < ps->max) : !(x <= ps->max)));
}

/* One number of a NUMBER / INTEGER parameter (or array element) at the current path. */
static int param_number(cfg *c, const cJSON *v, const rb_param_spec *ps, bool integer, double *out)
{
    int rc = want_number(c, v, out);
    if (rc)
        return integer && !cJSON_IsNumber(v) ? bad(c, "expected an integer") : rc;
    if (integer && !is_integral(*out))
        return bad(c, "expected an integer");
    if (!within(ps, *out)) {
        char b[96];
        bounds_text(ps, b, sizeof b);
        return bad(c, "%s", b);
    }
    return RB_OK;
}

static int param_string(cfg *c, const cJSON *v, const rb_param_spec *ps, char **out)
{
    if (ps->choices) {
        size_t index;
        int rc = want_choice(c, v, ps->choices, &index);
        if (rc)
            return rc;
    }
    return want_string(c, v, true, out);
}

static int param_array(cfg *c, const cJSON *v, const rb_param_spec *ps, rb_param_value *val)
{
    bool numbers = ps->kind == RB_PARAM_NUMBER_ARRAY;
    if (!cJSON_IsArray(v))
        return bad(c, numbers ? "expected an array of numbers" : "expected an array of strings");
    size_t n = count_children(v), i = 0;
    if (n < ps->min_count || (ps->max_count && n > ps->max_count)) {
        if (ps->max_count == ps->min_count)
            return bad(c, "expected %zu values, got %zu", ps->min_count, n);
        if (ps->max_count)
            return bad(c, "expected %zu to %zu values, got %zu", ps->min_count, ps->max_count, n);
        return bad(c, "expected at least %zu values, got %zu", ps->min_count, n);
    }
    if (numbers)
        val->numbers = rb_calloc(n ? n : 1, sizeof *val->numbers);
    else
        val->strings = rb_calloc(n ? n : 1, sizeof *val->strings);
    if (!val->numbers && !val->strings)
        return nomem(c);
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
            return bad(c, "expected true or false");
        val->number = cJSON_IsTrue(v) ? 1 : 0;
        return RB_OK;
    case RB_PARAM_STRING: return param_string(c, v, ps, &val->string);
    case RB_PARAM_NUMBER_ARRAY:
    case RB_PARAM_STRING_ARRAY: return param_array(c, v, ps, val);
    }
    return bad(c, "unsupported parameter kind");
}

static int param_default(cfg *c, const rb_param_spec *ps, rb_param_value *val)
{
    val->given = false;
    val->number = ps->def_number;
    if (ps->kind == RB_PARAM_STRING && ps->def_string && !(val->string = rb_strdup(ps->def_string)))
        return nomem(c);
    if (ps->kind == RB_PARAM_NUMBER_ARRAY || ps->kind == RB_PARAM_STRING_ARRAY) {
        size_t n = ps->def_count;
        if (ps->kind == RB_PARAM_NUMBER_ARRAY && !(val->numbers = rb_calloc(n ? n : 1, sizeof(double))))
            return nomem(c);
        if (ps->kind == RB_PARAM_STRING_ARRAY && !(val->strings = rb_calloc(n ? n : 1, sizeof(char *))))
            return nomem(c);
        val->count = n;
        for (size_t i = 0; i < n; i++) {
            if (ps->kind == RB_PARAM_NUMBER_ARRAY)
                val->numbers[i] = ps->def_numbers[i];
            else if (!(val->strings[i] = rb_strdup(ps->def_strings[i])))
                return nomem(c);
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
        return nomem(c);
    int rc = RB_OK;
    if (v) {
        push_key(c, "params", 0);
        const char **names = rb_malloc((t->n_params ? t->n_params : 1) * sizeof *names);
        if (!names)
            return nomem(c);
        for (size_t i = 0; i < t->n_params; i++)
            names[i] = t->params[i].name;
        rc = check_object(c, v, names, t->n_params);
        rb_free(names);
    }
    for (size_t i = 0; !rc && i < t->n_params; i++) {
        const rb_param_spec *ps = &t->params[i];
        const cJSON *pv = v ? member(v, ps->name) : NULL;
        if (pv) {
            push_key(c, ps->name, 0);
            rc = param_value(c, pv, ps, &st->params[i]);
            pop(c);
        } else if (ps->required) {
            rc = bad(c, "missing required parameter '%s' (%s: %s)", ps->name, rb_param_kind_name(ps->kind),
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
/* "in" / "out" of a stage: every port wired to one signal name. */
static int parse_ports(cfg *c, const cJSON *stage, const char *key, const char *const *ports, size_t n_ports,
                       char ***out)
{
    *out = rb_calloc(n_ports ? n_ports : 1, sizeof **out);
    if (!*out)
        return nomem(c);
    const cJSON *v = member(stage, key);
    if (!v)
        return n_ports ? bad(c, "missing key '%s'", key) : RB_OK;
    push_key(c, key, 0);
    int rc = check_object(c, v, ports, n_ports);
    for (size_t j = 0; !rc && j < n_ports; j++) {
        const cJSON *w = member(v, ports[j]);
        if (!w) {
            rc = bad(c, "missing %s port '%s'", key[0] == 'i' ? "input" : "output", ports[j]);
            break;
        }
        push_key(c, ports[j], 0);
        rc = want_string(c, w, false, &(*out)[j]);
        if (!rc && key[0] == 'o')
            rc = check_signal_name(c, (*out)[j]);
        pop(c);
    }
    pop(c);
    return rc;
}

static int parse_stage_type(cfg *c, const cJSON *stage, rb_config_stage *st)
{
    char *name = NULL;
    int rc = member_string(c, stage, "type", true, &name);
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
            rc = bad(c, "unknown stage type '%s' (did you mean '%s'?)", name, best);
        else
            rc = bad(c, "unknown stage type '%s' (roboest --help lists the stage types)", name);
        pop(c);
    }
    rb_free(name);
    return rc;
}

static int parse_stage(cfg *c, const cJSON *v, rb_config_stage *st)
{
    static const char *const keys[] = {"id", "type", "in", "out", "params"};
    int rc = check_object(c, v, keys, 5);
    if (!rc)
        rc = member_string(c, v, "id", true, &st->id);
    if (!rc)
        rc = parse_stage_type(c, v, st);
    if (rc)
        return rc;
    const rb_stage_type *t = st->type;
    rc = parse_ports(c, v, "in", t->inputs, t->n_inputs, &st->in);
    if (!rc)
        rc = parse_ports(c, v, "out", t->outputs, t->n_outputs, &st->out);
    if (!rc)
        rc = parse_params(c, member(v, "params"), st);
    if (!rc) {
        st->in_signal = rb_calloc(t->n_inputs ? t->n_inputs : 1, sizeof *st->in_signal);
        st->out_signal = rb_calloc(t->n_outputs ? t->n_outputs : 1, sizeof *st->out_signal);
        if (!st->in_signal || !st->out_signal)
            rc = nomem(c);
    }
    return rc;
}

static int parse_stages(cfg *c, const cJSON *v)
{
    if (!cJSON_IsArray(v))
        return bad(c, "expected an array of stages");
    size_t n = count_children(v), i = 0;
    c->p->stages = rb_calloc(n ? n : 1, sizeof *c->p->stages);
    if (!c->p->stages)
        return nomem(c);
    c->p->n_stages = n;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        c->p->stages[i].file_index = i;
        push_index(c, i);
        int rc = parse_stage(c, e, &c->p->stages[i]);
        pop(c);
        if (rc)
            return rc;
    }
    const char **ids = rb_malloc((n ? n : 1) * sizeof *ids);
    if (!ids)
        return nomem(c);
    for (i = 0; i < n; i++)
        ids[i] = c->p->stages[i].id;
    size_t dup, first;
    int rc = find_duplicate(c, ids, n, &dup, &first);
    rb_free(ids);
    if (!rc && dup != SIZE_MAX) {
        push_index(c, dup);
        push_key(c, "id", 0);
        rc = bad(c, "stage id '%s' is also used by stages[%zu]", c->p->stages[dup].id, first);
        pop(c);
        pop(c);
    }
    return rc;
}

/* ---- outputs, metrics, reports ---------------------------------------------------------------------------- */
static int parse_output(cfg *c, const cJSON *v, rb_config_output *o)
{
    static const char *const keys[] = {"path", "signals"};
    int rc = check_object(c, v, keys, 2);
    if (!rc)
        rc = member_string(c, v, "path", true, &o->path);
    if (rc)
        return rc;
    push_key(c, "path", 0);
    rc = check_relative(c, o->path);
    rb_err e;
    if (!rc && rb_out_format_from_path(o->path, &o->format, &e) != RB_OK)
        rc = e.code == RB_ENOMEM ? nomem(c) : bad(c, "%s", e.msg);
    pop(c);
    const cJSON *s = member(v, "signals");
    if (!rc && !s)
        rc = bad(c, "missing key 'signals'");
    if (!rc) {
        push_key(c, "signals", 0);
        rc = want_string_array(c, s, false, &o->signals, &o->n_signals);
        pop(c);
    }
    if (!rc && !(o->signal_index = rb_calloc(o->n_signals, sizeof *o->signal_index)))
        rc = nomem(c);
    return rc;
}

static int parse_metric(cfg *c, const cJSON *v, rb_config_metric *m)
{
    static const char *const keys[] = {"estimate", "reference", "window", "name"};
    int rc = check_object(c, v, keys, 4);
    if (!rc)
        rc = member_string(c, v, "estimate", true, &m->estimate);
    if (!rc)
        rc = member_string(c, v, "reference", true, &m->reference);
    if (!rc)
        rc = member_string(c, v, "name", false, &m->name);
    if (!rc && !m->name && !(m->name = rb_strdup(m->estimate)))
        rc = nomem(c);
    m->t0 = -INFINITY;
    m->t1 = INFINITY;
    const cJSON *w = member(v, "window");
    if (!rc && w) {
        push_key(c, "window", 0);
        rc = want_window(c, w, &m->t0, &m->t1);
        m->has_window = true;
        pop(c);
    }
    return rc;
}

static int parse_reports(cfg *c, const cJSON *v)
{
    char **paths = NULL;
    size_t n = 0;
    int rc = want_string_array(c, v, true, &paths, &n);
    if (!rc && !(c->p->reports = rb_calloc(n ? n : 1, sizeof *c->p->reports)))
        rc = nomem(c);
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
            rc = e.code == RB_ENOMEM ? nomem(c) : bad(c, "%s", e.msg);
        pop(c);
    }
    return rc;
}

/* Array of objects parsed by `one` into items of `size` bytes. */
static int parse_list(cfg *c, const cJSON *v, size_t size, void **items, size_t *n_items,
                      int (*one)(cfg *, const cJSON *, void *))
{
    if (!cJSON_IsArray(v))
        return bad(c, "expected an array");
    size_t n = count_children(v), i = 0;
    *items = rb_calloc(n ? n : 1, size);
    if (!*items)
        return nomem(c);
    *n_items = n;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        push_index(c, i);
        int rc = one(c, e, (char *)*items + i * size);
        pop(c);
        if (rc)
            return rc;
    }
    return RB_OK;
}

static int parse_output_item(cfg *c, const cJSON *v, void *item) { return parse_output(c, v, item); }
static int parse_metric_item(cfg *c, const cJSON *v, void *item) { return parse_metric(c, v, item); }

/* Runs `fn` on a top-level member with its key on the path, when present. */
static int section(cfg *c, const cJSON *root, const char *key, bool required, int (*fn)(cfg *, const cJSON *))
{
    const cJSON *v = member(root, key);
    if (!v)
        return required ? bad(c, "missing key '%s'", key) : RB_OK;
    push_key(c, key, 0);
    int rc = fn(c, v);
    pop(c);
    return rc;
}

static int sec_model(cfg *c, const cJSON *v) { return parse_model(c, v); }
static int sec_logs(cfg *c, const cJSON *v) { return parse_logs(c, v); }
static int sec_clock(cfg *c, const cJSON *v) { return parse_clock(c, v); }
static int sec_signals(cfg *c, const cJSON *v) { return parse_signals(c, v); }
static int sec_stages(cfg *c, const cJSON *v) { return parse_stages(c, v); }
static int sec_reports(cfg *c, const cJSON *v) { return parse_reports(c, v); }

static int sec_window(cfg *c, const cJSON *v)
{
    c->p->has_window = true;
    return want_window(c, v, &c->p->t0, &c->p->t1);
}

static int sec_gap_factor(cfg *c, const cJSON *v)
{
    int rc = want_number(c, v, &c->p->gap_factor);
    return !rc && !(c->p->gap_factor > 1) ? bad(c, "must be > 1") : rc;
}

static int sec_name(cfg *c, const cJSON *v)
{
    rb_free(c->p->name);
    c->p->name = NULL;
    return want_string(c, v, false, &c->p->name);
}

static int sec_outputs(cfg *c, const cJSON *v)
{
    return parse_list(c, v, sizeof(rb_config_output), (void **)&c->p->outputs, &c->p->n_outputs, parse_output_item);
}

static int sec_metrics(cfg *c, const cJSON *v)
{
    return parse_list(c, v, sizeof(rb_config_metric), (void **)&c->p->metrics, &c->p->n_metrics, parse_metric_item);
}

static int parse_root(cfg *c, const cJSON *root)
{
    static const char *const keys[] = {"name",    "model",  "logs",    "clock",   "window", "gap_factor",
                                       "signals", "stages", "outputs", "metrics", "reports"};
    int rc = check_object(c, root, keys, sizeof keys / sizeof keys[0]);
    c->p->t0 = -INFINITY;
    c->p->t1 = INFINITY;
    c->p->gap_factor = 3.0;
    if (!rc)
        rc = section(c, root, "name", false, sec_name);
    if (!rc)
        rc = section(c, root, "model", false, sec_model);
    if (!rc)
        rc = section(c, root, "logs", false, sec_logs);
    if (!rc)
        rc = section(c, root, "clock", true, sec_clock);
    if (!rc)
        rc = section(c, root, "window", false, sec_window);
    if (!rc)
        rc = section(c, root, "gap_factor", false, sec_gap_factor);
    if (!rc)
        rc = section(c, root, "signals", true, sec_signals);
    if (!rc)
        rc = section(c, root, "stages", false, sec_stages);
    if (!rc)
        rc = section(c, root, "outputs", false, sec_outputs);
    if (!rc)
        rc = section(c, root, "metrics", false, sec_metrics);
    if (!rc)
        rc = section(c, root, "reports", false, sec_reports);
    return rc;
}

/* ---- the signal graph ---------------------------------------------------------------------------------------- */
typedef struct graph {
    name_ref *by_name; /* every signal-table entry, sorted by name */
    size_t *order;     /* execution order: file indices of stages */
} graph;

static long lookup(const rb_pipeline *p, const graph *g, const char *name)
{
    size_t lo = 0, hi = p->n_signal_table;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(g->by_name[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->n_signal_table && strcmp(g->by_name[lo].name, name) == 0 ? (long)g->by_name[lo].index : -1;
}

/* Where a signal comes from, as a key path, for messages. */
static void producer_text(const rb_pipeline *p, size_t t, char *buf, size_t size)
{
    const rb_signal_info *s = &p->signal_table[t];
    if (!s->from_stage) {
        rb_json_step path[2] = {{"signals", 0}, {s->name, 0}};
        rb_json_path_format(path, 2, buf, size);
        return;
    }
    const rb_config_stage *st = &p->stages[s->index];
    snprintf(buf, size, "stages[%zu].out.%s", st->file_index, st->type->outputs[s->port]);
}

static void at_stage_port(cfg *c, size_t stage, const char *dir, const char *port)
{
    c->depth = 0;
    push_key(c, "stages", 0);
    push_index(c, stage);
    push_key(c, dir, 0);
    push_key(c, port, 0);
}

/* Bindings first, then stage outputs in file order (stages are still in file order here). */
static int build_table(cfg *c, graph *g)
{
    rb_pipeline *p = c->p;
    size_t n = p->n_signals;
    for (size_t s = 0; s < p->n_stages; s++)
        n += p->stages[s].type->n_outputs;
    p->signal_table = rb_calloc(n ? n : 1, sizeof *p->signal_table);
    g->by_name = rb_malloc((n ? n : 1) * sizeof *g->by_name);
    if (!p->signal_table || !g->by_name)
        return nomem(c);
    p->n_signal_table = n;
    size_t t = 0;
    for (size_t i = 0; i < p->n_signals; i++, t++)
        p->signal_table[t] = (rb_signal_info){p->signals[i].name, false, i, 0, false};
    for (size_t s = 0; s < p->n_stages; s++)
        for (size_t j = 0; j < p->stages[s].type->n_outputs; j++, t++) {
            p->signal_table[t] = (rb_signal_info){p->stages[s].out[j], true, s, j, false};
            p->stages[s].out_signal[j] = t;
        }
    for (size_t i = 0; i < n; i++)
        g->by_name[i] = (name_ref){p->signal_table[i].name, i};
    qsort(g->by_name, n, sizeof *g->by_name, cmp_name_ref);
    return RB_OK;
}

/* A signal produced twice: report the later producer in table order, the earliest such. */
static int check_produced_once(cfg *c, const graph *g)
{
    const rb_pipeline *p = c->p;
    size_t dup = SIZE_MAX, first = SIZE_MAX;
    for (size_t i = 1; i < p->n_signal_table; i++) {
        const name_ref *a = &g->by_name[i - 1], *b = &g->by_name[i];
        bool second = strcmp(a->name, b->name) == 0 && (i < 2 || strcmp(g->by_name[i - 2].name, a->name) != 0);
        if (second && b->index < dup) {
            dup = b->index;
            first = a->index;
        }
    }
    if (dup == SIZE_MAX)
        return RB_OK;
    /* Bindings are unique object keys and come first, so the later producer is normally a stage output. */
    const rb_signal_info *s = &p->signal_table[dup];
    char other[256];
    producer_text(p, first, other, sizeof other);
    if (s->from_stage) {
        at_stage_port(c, s->index, "out", p->stages[s->index].type->outputs[s->port]);
    } else {
        c->depth = 0;
        push_key(c, "signals", 0);
        push_key(c, s->name, 1);
    }
    return bad(c, "signal '%s' is already produced by %s", s->name, other);
}

static int unknown_signal(cfg *c, const char *name)
{
    rb_suggest s;
    rb_suggest_init(&s, name);
    for (size_t t = 0; t < c->p->n_signal_table; t++)
        rb_suggest_consider(&s, c->p->signal_table[t].name);
    const char *best = rb_suggest_best(&s);
    if (best)
        return bad(c, "signal '%s' is not produced by any signal binding or stage (did you mean '%s'?)", name, best);
    return bad(c, "signal '%s' is not produced by any signal binding or stage", name);
}

static int wire_inputs(cfg *c, const graph *g)
{
    for (size_t s = 0; s < c->p->n_stages; s++) {
        rb_config_stage *st = &c->p->stages[s];
        for (size_t j = 0; j < st->type->n_inputs; j++) {
            long t = lookup(c->p, g, st->in[j]);
            if (t < 0) {
                at_stage_port(c, s, "in", st->type->inputs[j]);
                return unknown_signal(c, st->in[j]);
            }
            st->in_signal[j] = (size_t)t;
        }
    }
    return RB_OK;
}

/* Min-heap of stage file indices, so ready stages run in file order. */
static void heap_push(size_t *h, size_t *n, size_t v)
{
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static size_t heap_pop(size_t *h, size_t *n)
{
    size_t top = h[0], v = h[--*n], i = 0;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < *n && h[l] < v)
            m = l;
        if (l + 1 < *n && h[l + 1] < (m == i ? v : h[m]))
            m = l + 1;
        if (m == i)
            break;
        h[i] = h[m];
        i = m;
    }
    if (*n)
        h[i] = v;
    return top;
}

/* Producer stage (file index) of input j of stage s, SIZE_MAX for a binding. */
static size_t producer(const rb_pipeline *p, size_t s, size_t j)
{
    const rb_signal_info *si = &p->signal_table[p->stages[s].in_signal[j]];
    return si->from_stage ? si->index : SIZE_MAX;
}

/* Walk back from an unfinished stage through unfinished producers until a stage repeats: a cycle. */
static int report_cycle(cfg *c, const size_t *indeg, size_t start)
{
    rb_pipeline *p = c->p;
    size_t n = p->n_stages, len = 0, cur = start;
    size_t *seen_at = rb_malloc(n * sizeof *seen_at), *walk = rb_malloc(n * sizeof *walk),
           *via = rb_malloc(n * sizeof *via);
    int rc;
    if (!seen_at || !walk || !via) {
        rc = nomem(c);
        goto done;
    }
    for (size_t s = 0; s < n; s++)
        seen_at[s] = SIZE_MAX;
    while (seen_at[cur] == SIZE_MAX) {
        seen_at[cur] = len;
        walk[len] = cur;
        size_t j = 0, from = SIZE_MAX;
        for (; j < p->stages[cur].type->n_inputs; j++) {
            from = producer(p, cur, j);
            if (from != SIZE_MAX && indeg[from] > 0)
                break;
        }
        via[len++] = j;
        cur = from;
    }
    char flow[512];
    size_t used = (size_t)snprintf(flow, sizeof flow, "%s", p->stages[cur].id);
    for (size_t k = len; k-- > seen_at[cur] && used < sizeof flow;)
        used += (size_t)snprintf(flow + used, sizeof flow - used, " -> %s",
                                 p->stages[k == seen_at[cur] ? cur : walk[k]].id);
    at_stage_port(c, cur, "in", p->stages[cur].type->inputs[via[seen_at[cur]]]);
    rc = bad(c, "dependency cycle: %s", flow);
done:
    rb_free(seen_at);
    rb_free(walk);
    rb_free(via);
    return rc;
}

/* Consumers of each stage as adjacency lists: consumers of s are edges[first[s] .. first[s+1]). */
static int build_edges(cfg *c, size_t **first_out, size_t **edges_out, size_t *indeg)
{
    const rb_pipeline *p = c->p;
    size_t n = p->n_stages;
    size_t *first = rb_calloc(n + 1, sizeof *first), *cursor = rb_malloc((n + 1) * sizeof *cursor), *edges = NULL;
    if (!first || !cursor)
        goto fail;
    for (size_t s = 0; s < n; s++)
        for (size_t j = 0; j < p->stages[s].type->n_inputs; j++) {
            size_t from = producer(p, s, j);
            if (from != SIZE_MAX) {
                indeg[s]++;
                first[from + 1]++;
            }
        }
    for (size_t s = 0; s < n; s++)
        first[s + 1] += first[s];
    memcpy(cursor, first, (n + 1) * sizeof *cursor);
    edges = rb_malloc((first[n] ? first[n] : 1) * sizeof *edges);
    if (!edges)
        goto fail;
    for (size_t s = 0; s < n; s++)
        for (size_t j = 0; j < p->stages[s].type->n_inputs; j++) {
            size_t from = producer(p, s, j);
            if (from != SIZE_MAX)
                edges[cursor[from]++] = s;
        }
    rb_free(cursor);
    *first_out = first;
    *edges_out = edges;
    return RB_OK;
fail:
    rb_free(first);
    rb_free(cursor);
    rb_free(edges);
    return nomem(c);
}

/* Kahn's algorithm over stages, ready stages taken in file order; indeg counts unfinished producer
 * edges (with multiplicity). */
static int order_stages(cfg *c, graph *g)
{
    size_t n = c->p->n_stages, n_heap = 0, n_done = 0;
    size_t *indeg = rb_calloc(n ? n : 1, sizeof *indeg), *heap = rb_malloc((n ? n : 1) * sizeof *heap);
    size_t *first = NULL, *edges = NULL;
    g->order = rb_malloc((n ? n : 1) * sizeof *g->order);
    int rc = !indeg || !heap || !g->order ? nomem(c) : build_edges(c, &first, &edges, indeg);
    if (rc)
        goto done;
    for (size_t s = 0; s < n; s++)
        if (indeg[s] == 0)
            heap_push(heap, &n_heap, s);
    while (n_heap) {
        size_t s = heap_pop(heap, &n_heap);
        g->order[n_done++] = s;
        for (size_t e = first[s]; e < first[s + 1]; e++)
            if (--indeg[edges[e]] == 0)
                heap_push(heap, &n_heap, edges[e]);
    }
    if (n_done < n) {
        size_t start = 0;
        while (indeg[start] == 0)
            start++;
        rc = report_cycle(c, indeg, start);
    }
done:
    rb_free(indeg);
    rb_free(heap);
    rb_free(first);
    rb_free(edges);
    return rc;
}

/* Put the stages in execution order and point the signal table at the new positions. */
static int apply_order(cfg *c, const graph *g)
{
    rb_pipeline *p = c->p;
    size_t n = p->n_stages;
    rb_config_stage *sorted = rb_malloc((n ? n : 1) * sizeof *sorted);
    size_t *pos = rb_malloc((n ? n : 1) * sizeof *pos);
    if (!sorted || !pos) {
        rb_free(sorted);
        rb_free(pos);
        return nomem(c);
    }
    for (size_t k = 0; k < n; k++) {
        sorted[k] = p->stages[g->order[k]];
        pos[g->order[k]] = k;
    }
    for (size_t t = 0; t < p->n_signal_table; t++)
        if (p->signal_table[t].from_stage)
            p->signal_table[t].index = pos[p->signal_table[t].index];
    rb_free(p->stages);
    p->stages = sorted;
    rb_free(pos);
    return RB_OK;
}

static int resolve_ref(cfg *c, const graph *g, const char *name, size_t *index)
{
    long t = lookup(c->p, g, name);
    if (t < 0)
        return unknown_signal(c, name);
    *index = (size_t)t;
    c->p->signal_table[t].recorded = true;
    return RB_OK;
}

static int wire_outputs(cfg *c, const graph *g)
{
    for (size_t o = 0; o < c->p->n_outputs; o++) {
        rb_config_output *out = &c->p->outputs[o];
        for (size_t i = 0; i < out->n_signals; i++) {
            c->depth = 0;
            push_key(c, "outputs", 0);
            push_index(c, o);
            push_key(c, "signals", 0);
            push_index(c, i);
            int rc = resolve_ref(c, g, out->signals[i], &out->signal_index[i]);
            for (size_t k = 0; !rc && k < i; k++)
                if (out->signal_index[k] == out->signal_index[i])
                    rc = bad(c, "signal '%s' is listed twice", out->signals[i]);
            if (rc)
                return rc;
        }
    }
    return RB_OK;
}

static int wire_metrics(cfg *c, const graph *g)
{
    for (size_t m = 0; m < c->p->n_metrics; m++) {
        rb_config_metric *mt = &c->p->metrics[m];
        c->depth = 0;
        push_key(c, "metrics", 0);
        push_index(c, m);
        push_key(c, "estimate", 0);
        int rc = resolve_ref(c, g, mt->estimate, &mt->estimate_index);
        pop(c);
        push_key(c, "reference", 0);
        if (!rc)
            rc = resolve_ref(c, g, mt->reference, &mt->reference_index);
        if (rc)
            return rc;
    }
    return RB_OK;
}

/* Output and report files share the output folder: no two may have the same path. */
static int check_files(cfg *c)
{
    rb_pipeline *p = c->p;
    size_t n = p->n_outputs + p->n_reports, dup, first;
    const char **paths = rb_malloc((n ? n : 1) * sizeof *paths);
    if (!paths)
        return nomem(c);
    for (size_t i = 0; i < p->n_outputs; i++)
        paths[i] = p->outputs[i].path;
    for (size_t i = 0; i < p->n_reports; i++)
        paths[p->n_outputs + i] = p->reports[i].path;
    int rc = find_duplicate(c, paths, n, &dup, &first);
    const char *path = dup != SIZE_MAX ? paths[dup] : NULL;
    rb_free(paths);
    if (rc || !path)
        return rc;
    char other[64];
    if (first < p->n_outputs)
        snprintf(other, sizeof other, "outputs[%zu].path", first);
    else
        snprintf(other, sizeof other, "reports[%zu]", first - p->n_outputs);
    c->depth = 0;
    if (dup < p->n_outputs) {
        push_key(c, "outputs", 0);
        push_index(c, dup);
        push_key(c, "path", 0);
    } else {
        push_key(c, "reports", 0);
        push_index(c, dup - p->n_outputs);
    }
    return bad(c, "'%s' is also written by %s", path, other);
}

static int check_graph(cfg *c)
{
    graph g = {NULL, NULL};
    int rc = build_table(c, &g);
    if (!rc)
        rc = check_produced_once(c, &g);
    if (!rc)
        rc = wire_inputs(c, &g);
    if (!rc)
        rc = order_stages(c, &g);
    if (!rc)
        rc = apply_order(c, &g);
    if (!rc)
        rc = wire_outputs(c, &g);
    if (!rc)
        rc = wire_metrics(c, &g);
    if (!rc)
        rc = check_files(c);
    if (!rc && c->p->n_reports && !c->p->n_metrics) {
        c->depth = 0;
        push_key(c, "reports", 0);
        rc = bad(c, "there is nothing to report: add a \"metrics\" entry");
    }
    rb_free(g.by_name);
    rb_free(g.order);
    return rc;
}

/* ---- entry points ------------------------------------------------------------------------------------------- */
static void free_strings(char **s, size_t n)
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
        free_strings(st->in, t->n_inputs);
        free_strings(st->out, t->n_outputs);
        for (size_t i = 0; st->params && i < t->n_params; i++) {
            rb_free(st->params[i].string);
            rb_free(st->params[i].numbers);
            free_strings(st->params[i].strings, st->params[i].count);
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
    rb_free(p->model_urdf);
    free_strings(p->model_joints, p->n_model_joints);
    for (size_t i = 0; p->logs && i < p->n_logs; i++)
        free_strings(p->logs[i].paths, p->logs[i].n_paths);
    rb_free(p->logs);
    rb_free(p->clock_channel);
    for (size_t i = 0; p->signals && i < p->n_signals; i++) {
        rb_config_signal *s = &p->signals[i];
        rb_free(s->name);
        rb_free(s->channel);
        free_strings(s->select_names, s->select_names ? s->n_select : 0);
        rb_free(s->select_indices);
    }
    rb_free(p->signals);
    for (size_t i = 0; p->stages && i < p->n_stages; i++)
        free_stage(&p->stages[i]);
    rb_free(p->stages);
    for (size_t i = 0; p->outputs && i < p->n_outputs; i++) {
        rb_free(p->outputs[i].path);
        free_strings(p->outputs[i].signals, p->outputs[i].n_signals);
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
static int malformed(const char *file, const char *text, size_t len, size_t cjson_offset, const char *why, rb_err *err)
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

static char *default_name(const char *file)
{
    const char *base = rb_path_basename(file);
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    return n ? rb_strndup(base, n) : rb_strdup("pipeline");
}

static int init_pipeline(rb_pipeline *p, const char *text, size_t len, const char *file)
{
    rb_sha256 ctx;
    char hex[65];
    rb_sha256_init(&ctx);
    rb_sha256_update(&ctx, text, len);
    rb_sha256_final(&ctx, hex);
    p->config_sha256 = rb_strdup(hex);
    p->config_path = rb_strdup(file);
    p->name = default_name(file);
    return p->config_sha256 && p->config_path && p->name ? RB_OK : RB_ENOMEM;
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
    const char *nul = memchr(copy, '\0', len);
    if (nul) {
        rc = malformed(file, copy, len, (size_t)(nul - copy), "NUL byte", err);
        goto done;
    }
    const char *end = NULL;
    root = cJSON_ParseWithLengthOpts(copy, len + 1, &end, 1);
    if (!root) {
        rc = malformed(file, copy, len, end ? (size_t)(end - copy) : 0, NULL, err);
        goto done;
    }
    cfg c = {file, copy, len, base_file, reg, p, err, 0, {{NULL, 0}}};
    rc = parse_root(&c, root);
    if (!rc)
        rc = check_graph(&c);
done:
    cJSON_Delete(root);
    rb_free(copy);
    if (rc)
        rb_pipeline_free(p);
    else
        *out = p;
    return rc;
}

static int read_file(const char *path, char **text, size_t *len, rb_err *err)
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
            rc = rb_err_set(err, RB_EINPUT, "%s: larger than %u MiB, not a pipeline", path, CONFIG_MAX_BYTES >> 20);
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
    int rc = read_file(path, &text, &len, err);
    if (rc)
        return rc;
    rc = rb_pipeline_load_text(text, len, path, path, reg, out, err);
    rb_free(text);
    return rc;
}
