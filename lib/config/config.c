/* The configuration toolkit (roboest/config.h): messages at key paths, typed getters, objects and sections,
 * sessions, and the one loader every JSON format goes through. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/config.h"

#define CONFIG_MAX_BYTES (64u << 20)

int rb_cfg_error(rb_cfg *c, const char *fmt, ...)
{
    char what[768], where[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t line, col;
    rb_json_locate(c->text, c->len, c->path, rb_cfg_depth(c), &line, &col);
    rb_json_path_format(c->path, rb_cfg_depth(c), where, sizeof where);
    if (where[0])
        return rb_err_set(c->err, RB_ECONFIG, "%s:%zu:%zu: %s: %s", c->file, line, col, where, what);
    return rb_err_set(c->err, RB_ECONFIG, "%s:%zu:%zu: %s", c->file, line, col, what);
}

int rb_cfg_nomem(rb_cfg *c) { return rb_err_set(c->err, RB_ENOMEM, "%s: out of memory", c->file); }

static size_t count_children(const cJSON *node)
{
    size_t n = 0;
    for (const cJSON *ch = node->child; ch; ch = ch->next)
        n++;
    return n;
}

/* Sorting keeps large objects from costing n^2. */
int rb_cfg_find_duplicate(rb_cfg *c, const char *const *names, size_t n, size_t *dup, size_t *first)
{
    size_t unused;
    first = first ? first : &unused;
    *dup = *first = SIZE_MAX;
    if (n < 2)
        return RB_OK;
    rb_name_ref *refs = rb_malloc(n * sizeof *refs);
    if (!refs)
        return rb_cfg_nomem(c);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (names[i])
            refs[m++] = (rb_name_ref){names[i], i};
    qsort(refs, m, sizeof *refs, rb_name_ref_cmp);
    rb_name_refs_first_repeat(refs, m, dup, first);
    rb_free(refs);
    return RB_OK;
}

/* Called with the parent object's path current: the message names the object, the position is the key's. */
static int unknown_key(rb_cfg *c, const char *key, const char *const *allowed, size_t n_allowed)
{
    rb_suggest s;
    rb_suggest_init(&s, key);
    for (size_t i = 0; i < n_allowed; i++)
        rb_suggest_consider(&s, allowed[i]);
    const char *best = rb_suggest_best(&s);
    size_t line, col;
    char where[256], hint[160] = "";
    rb_json_path_format(c->path, rb_cfg_depth(c), where, sizeof where);
    rb_cfg_push_key(c, key, 0);
    rb_json_locate(c->text, c->len, c->path, rb_cfg_depth(c), &line, &col);
    rb_cfg_pop(c);
    if (best)
        snprintf(hint, sizeof hint, " (did you mean '%s'?)", best);
    return rb_err_set(c->err, RB_ECONFIG, "%s:%zu:%zu: %s%sunknown key '%s'%s", c->file, line, col, where,
                      where[0] ? ": " : "", key, hint);
}

static int duplicated_key(rb_cfg *c, const cJSON *obj, const cJSON *second)
{
    size_t occurrence = 0;
    for (const cJSON *ch = obj->child; ch && ch != second; ch = ch->next)
        if (strcmp(ch->string, second->string) == 0)
            occurrence++;
    size_t line, col, first_line, first_col;
    rb_cfg_push_key(c, second->string, 0);
    rb_json_locate(c->text, c->len, c->path, rb_cfg_depth(c), &first_line, &first_col);
    c->path[rb_cfg_depth(c) - 1].index = occurrence;
    rb_json_locate(c->text, c->len, c->path, rb_cfg_depth(c), &line, &col);
    rb_cfg_pop(c);
    char where[256];
    rb_json_path_format(c->path, rb_cfg_depth(c), where, sizeof where);
    return rb_err_set(c->err, RB_ECONFIG, "%s:%zu:%zu: %s%sduplicated key '%s' (first at %zu:%zu)", c->file, line, col,
                      where, where[0] ? ": " : "", second->string, first_line, first_col);
}

/* obj must be an object whose keys are unique and (allowed != NULL) among `allowed`. */
int rb_cfg_check_object(rb_cfg *c, const cJSON *obj, const char *const *allowed, size_t n_allowed)
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

int rb_cfg_want_string(rb_cfg *c, const cJSON *v, bool allow_empty, char **out)
{
    if (!cJSON_IsString(v) || !v->valuestring)
        return rb_cfg_error(c, "expected a string");
    if (!allow_empty && !v->valuestring[0])
        return rb_cfg_error(c, "must not be empty");
    *out = rb_strdup(v->valuestring);
    return *out ? RB_OK : rb_cfg_nomem(c);
}

int rb_cfg_want_number(rb_cfg *c, const cJSON *v, double *out)
{
    if (!cJSON_IsNumber(v))
        return rb_cfg_error(c, "expected a number");
    if (!isfinite(v->valuedouble))
        return rb_cfg_error(c, "expected a finite number");
    *out = v->valuedouble;
    return RB_OK;
}

/* One of `choices` (NULL-terminated) with a suggestion for a near miss. */
int rb_cfg_want_choice(rb_cfg *c, const cJSON *v, const char *const *choices, size_t *index)
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

static int want_bounds(rb_cfg *c, const cJSON *v, double *t0, double *t1)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2)
        return rb_cfg_error(c, "expected [t0, t1] in seconds or {\"from_start\": [t0, t1]}");
    double w[2];
    size_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        int rc = rb_cfg_want_number(c, e, &w[i]);
        if (!rc && i == 1 && !(w[1] > w[0]))
            rc = rb_cfg_error(c, "must be greater than window[0] (%.17g)", w[0]);
        rb_cfg_pop(c);
        if (rc)
            return rc;
    }
    *t0 = w[0];
    *t1 = w[1];
    return RB_OK;
}

int rb_cfg_want_window(rb_cfg *c, const cJSON *v, bool absolute_only, rb_window *w)
{
    if (!cJSON_IsObject(v)) {
        w->from_start = false;
        return want_bounds(c, v, &w->t0, &w->t1);
    }
    if (absolute_only)
        return rb_cfg_error(c, "expected [t0, t1] in seconds: {\"from_start\": ...} does not apply to this key");
    static const char *const keys[] = {"from_start"};
    int rc = rb_cfg_check_object(c, v, keys, 1);
    const cJSON *b = rc ? NULL : cJSON_GetObjectItemCaseSensitive(v, "from_start");
    if (!rc && !b)
        rc = rb_cfg_error(c, "missing key 'from_start' ([t0, t1] s after the log's first sample)");
    if (rc)
        return rc;
    rb_cfg_push_key(c, "from_start", 0);
    rc = want_bounds(c, b, &w->t0, &w->t1);
    rb_cfg_pop(c);
    w->from_start = !rc;
    return rc;
}

void rb_window_resolve(const rb_window *w, double t_start, double *t0, double *t1)
{
    double shift = w->from_start ? t_start : 0.0;
    *t0 = w->t0 + shift;
    *t1 = w->t1 + shift;
}

cJSON *rb_window_json(const rb_window *w)
{
    double v[2] = {w->t0, w->t1};
    cJSON *a = cJSON_CreateDoubleArray(v, 2);
    if (!a || !w->from_start)
        return a;
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToObject(o, "from_start", a)) {
        cJSON_Delete(o);
        cJSON_Delete(a);
        return NULL;
    }
    return o;
}

void rb_window_text(const rb_window *w, char *buf, size_t n)
{
    snprintf(buf, n, "[%.17g, %.17g] s%s", w->t0, w->t1, w->from_start ? " after the log's first sample" : "");
}

/* Array of strings (each non-empty); *n may be 0 only when allow_empty. */
int rb_cfg_want_strings(rb_cfg *c, const cJSON *v, bool allow_empty, char ***out, size_t *n)
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
        rb_cfg_push_index(c, i);
        int rc = rb_cfg_want_string(c, e, false, &(*out)[i]);
        rb_cfg_pop(c);
        if (rc)
            return rc;
    }
    return RB_OK;
}

int rb_cfg_member_string(rb_cfg *c, const cJSON *obj, const char *key, bool required, char **out)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return required ? rb_cfg_error(c, "missing key '%s'", key) : RB_OK;
    rb_cfg_push_key(c, key, 0);
    int rc = rb_cfg_want_string(c, v, false, out);
    rb_cfg_pop(c);
    return rc;
}

int rb_cfg_member_strings(rb_cfg *c, const cJSON *obj, const char *key, bool required, bool allow_empty, char ***out,
                          size_t *n)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return required ? rb_cfg_error(c, "missing key '%s'", key) : RB_OK;
    rb_cfg_push_key(c, key, 0);
    int rc = rb_cfg_want_strings(c, v, allow_empty, out, n);
    rb_cfg_pop(c);
    return rc;
}

/* Optional: *index stays as it is (the default) when the key is absent. */
int rb_cfg_member_choice(rb_cfg *c, const cJSON *obj, const char *key, const char *const *choices, size_t *index)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return RB_OK;
    rb_cfg_push_key(c, key, 0);
    int rc = rb_cfg_want_choice(c, v, choices, index);
    rb_cfg_pop(c);
    return rc;
}

int rb_cfg_resolve_path(rb_cfg *c, char **path)
{
    char *resolved = rb_path_relative_to(c->base_file, *path);
    if (!resolved)
        return rb_cfg_nomem(c);
    rb_free(*path);
    *path = resolved;
    return RB_OK;
}

/* A library check's error (e.g. an unknown file extension) at the current path. */
int rb_cfg_relay(rb_cfg *c, const rb_err *e)
{
    return e->code == RB_ENOMEM ? rb_cfg_nomem(c) : rb_cfg_error(c, "%s", e->msg);
}

/* One log: a path or an array of paths (one session). */
int rb_cfg_want_session(rb_cfg *c, const cJSON *e, rb_cfg_session *s)
{
    int rc;
    if (cJSON_IsString(e)) {
        s->paths = rb_calloc(1, sizeof *s->paths);
        if (!s->paths)
            return rb_cfg_nomem(c);
        s->n_paths = 1;
        rc = rb_cfg_want_string(c, e, false, &s->paths[0]);
    } else if (cJSON_IsArray(e)) {
        rc = rb_cfg_want_strings(c, e, false, &s->paths, &s->n_paths);
    } else {
        return rb_cfg_error(c, "expected a path or an array of paths (one session)");
    }
    for (size_t i = 0; !rc && i < s->n_paths; i++)
        rc = rb_cfg_resolve_path(c, &s->paths[i]);
    return rc;
}

/* "<file>:<line>:<col>: malformed JSON (...)". cJSON's stop offset can lie one byte past the culprit,
 * so the position and reason come from our own syntax check; cJSON's offset is the fallback. */
/* 1-based line and column (in bytes) of byte `offset`. */
static void text_position(const char *text, size_t len, size_t offset, size_t *line, size_t *col)
{
    *line = *col = 1;
    for (size_t i = 0; i < offset && i < len; i++, (*col)++)
        if (text[i] == '\n') {
            (*line)++;
            *col = 0;
        }
}

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
    size_t line, col;
    text_position(text, len, offset, &line, &col);
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

int rb_cfg_parse_json(const char *file, const char *text, size_t len, cJSON **root, rb_err *err)
{
    const char *nul = memchr(text, '\0', len);
    if (nul)
        return rb_cfg_malformed(file, text, len, (size_t)(nul - text), "NUL byte", err);
    const char *end = NULL;
    *root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
    if (!*root)
        return rb_cfg_malformed(file, text, len, end ? (size_t)(end - text) : 0, NULL, err);
    /* cJSON decodes \u0000 to a NUL byte, which ends the C string there: the key or value would be read
     * cut short, so it is refused, named by its place and its text as written. */
    bool is_key;
    size_t str_end, at = rb_json_nul_escape(text, len, &str_end, &is_key);
    if (at == SIZE_MAX)
        return RB_OK;
    cJSON_Delete(*root);
    *root = NULL;
    size_t line, col, shown = str_end - at > 80 ? 80 : str_end - at;
    text_position(text, len, at, &line, &col);
    return rb_err_set(err, RB_ECONFIG,
                      "%s:%zu:%zu: the %s %.*s%s holds \\u0000, a NUL character, which no key or value may hold", file,
                      line, col, is_key ? "key" : "string", (int)shown, text + at, shown < str_end - at ? "..." : "");
}

int rb_cfg_read_file(const char *path, char **text, size_t *len, rb_err *err)
{
    return rb_file_read_all(path, CONFIG_MAX_BYTES, text, len, err);
}

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

int rb_cfg_want_integer(rb_cfg *c, const cJSON *v, double lo, double *out)
{
    int rc = rb_cfg_want_number(c, v, out);
    if (!rc && !(*out >= lo && *out <= 9007199254740992.0 && *out == floor(*out)))
        rc = rb_cfg_error(c, "expected an integer >= %g", lo);
    return rc;
}

const cJSON *rb_cfg_member(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

int rb_cfg_check_rule(rb_cfg *c, double x, rb_cfg_rule rule)
{
    switch (rule) {
    case RB_CFG_POSITIVE: return x > 0 ? RB_OK : rb_cfg_error(c, "must be > 0");
    case RB_CFG_NON_NEGATIVE: return x >= 0 ? RB_OK : rb_cfg_error(c, "must be >= 0");
    case RB_CFG_NON_ZERO: return x != 0 ? RB_OK : rb_cfg_error(c, "must not be 0");
    case RB_CFG_UNIT_OPEN: return x >= 0 && x < 1 ? RB_OK : rb_cfg_error(c, "must be in [0, 1)");
    case RB_CFG_UNIT_CLOSED: return x >= 0 && x <= 1 ? RB_OK : rb_cfg_error(c, "must be in [0, 1]");
    default: return RB_OK;
    }
}

int rb_cfg_member_number(rb_cfg *c, const cJSON *obj, const char *key, rb_cfg_rule rule, double *out)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return RB_OK;
    rb_cfg_push_key(c, key, 0);
    double x;
    int rc = rb_cfg_want_number(c, v, &x);
    if (!rc)
        rc = rb_cfg_check_rule(c, x, rule);
    if (!rc)
        *out = x;
    rb_cfg_pop(c);
    return rc;
}

/* ---- sections ------------------------------------------------------------------------------------------------ */
int rb_cfg_with_member(rb_cfg *c, const cJSON *obj, const char *key, bool required,
                       int (*parse)(rb_cfg *c, const cJSON *v))
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return required ? rb_cfg_error(c, "missing key '%s'", key) : RB_OK;
    rb_cfg_push_key(c, key, 0);
    int rc = parse(c, v);
    rb_cfg_pop(c);
    return rc;
}

int rb_cfg_sections(rb_cfg *c, const cJSON *obj, const rb_cfg_section *sections, size_t n)
{
    const char *keys[64] = {NULL};
    if (n > sizeof keys / sizeof keys[0])
        return rb_err_set(c->err, RB_EINVAL, "rb_cfg_sections: more than 64 sections");
    for (size_t i = 0; i < n; i++)
        keys[i] = sections[i].key;
    int rc = rb_cfg_check_object(c, obj, keys, n);
    for (size_t i = 0; !rc && i < n; i++)
        rc = rb_cfg_with_member(c, obj, sections[i].key, sections[i].required, sections[i].parse);
    return rc;
}

/* ---- the loader ------------------------------------------------------------------------------------------------ */
int rb_cfg_load_text(const rb_cfg_format *f, const char *text, size_t len, const char *name_for_messages,
                     const char *base_file, const void *arg, void **out, rb_err *err)
{
    const char *file = name_for_messages ? name_for_messages : f->default_file;
    *out = NULL;
    char *copy = rb_strndup(text, len), *name = NULL, sha256[65];
    void *doc = rb_calloc(1, f->size);
    cJSON *root = NULL;
    size_t stem_len;
    const char *stem = rb_path_stem(file, &stem_len);
    rb_sha256 h;
    rb_sha256_init(&h);
    rb_sha256_update(&h, text, len);
    rb_sha256_final(&h, sha256);
    name = stem_len ? rb_strndup(stem, stem_len) : rb_strdup(f->default_name);
    int rc = copy && doc && name ? f->init(doc, file, name, sha256) : RB_ENOMEM;
    if (rc) {
        rc = rb_err_set(err, RB_ENOMEM, "%s: out of memory", file);
        goto done;
    }
    if ((rc = rb_cfg_parse_json(file, copy, len, &root, err)))
        goto done;
    rb_cfg c = {.file = file, .text = copy, .len = len, .err = err};
    c.base_file = base_file ? base_file : f->base_is_file ? file : NULL;
    rc = f->parse(&c, root, doc, arg);
done:
    cJSON_Delete(root);
    rb_free(copy);
    rb_free(name);
    if (rc && doc)
        f->free(doc);
    else if (!rc)
        *out = doc;
    return rc;
}

int rb_cfg_load(const rb_cfg_format *f, const char *path, const void *arg, void **out, rb_err *err)
{
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = rb_cfg_read_file(path, &text, &len, err);
    if (rc)
        return rc;
    rc = rb_cfg_load_text(f, text, len, path, path, arg, out, err);
    rb_free(text);
    return rc;
}
