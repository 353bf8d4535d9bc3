/* YARP-style .ini files (ResourceFinder / Property syntax), read strictly: see roboest/rde.h (rb_ini). */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rde_internal.h"

#define INI_MAX_DEPTH 8

typedef struct parser {
    rb_ini *ini;
    const char *file; /* borrowed from ini->files */
    const char *s;
    size_t len, pos, line;
    rb_err *err;
    size_t depth;                         /* includes above this file */
    const char *chain[INI_MAX_DEPTH + 1]; /* canonical paths of the files being read, outermost first */
} parser;

static int nomem(parser *p) { return rb_err_set(p->err, RB_ENOMEM, "%s: out of memory", p->file); }

static int fail_at(parser *p, size_t line, const char *fmt, ...) RB_PRINTF(3, 4);

static int fail_at(parser *p, size_t line, const char *fmt, ...)
{
    char what[RB_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return rb_err_set(p->err, RB_ECONFIG, "%s:%zu: %s", p->file, line, what);
}

/* ---- characters ---------------------------------------------------------------------------------- */
static bool at_end(const parser *p) { return p->pos >= p->len; }
static char peek(const parser *p) { return at_end(p) ? '\0' : p->s[p->pos]; }
static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
static bool is_comment(char c) { return c == ';' || c == '#'; }
static bool is_special(char c) { return strchr("(),\";#[]", c) != NULL; }
static bool is_word_char(char c) { return c && !isspace((unsigned char)c) && !is_special(c); }

static bool valid_name(const char *s)
{
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (const char *c = s; *c; c++)
        if (!(isalnum((unsigned char)*c) || strchr("_.-", *c)))
            return false;
    return true;
}

static void skip_blanks(parser *p)
{
    while (!at_end(p) && is_blank(peek(p)))
        p->pos++;
}

/* Blanks, then a comment to the end of the line; true when the line ends there. */
static bool rest_is_empty(parser *p)
{
    skip_blanks(p);
    if (is_comment(peek(p)))
        while (!at_end(p) && peek(p) != '\n')
            p->pos++;
    return at_end(p) || peek(p) == '\n';
}

/* What the character at pos looks like, for messages. */
static const char *shown(const parser *p, char buf[8])
{
    char c = peek(p);
    if (!c)
        return "the end of the file";
    if (c == '\n')
        return "the end of the line";
    snprintf(buf, 8, "'%c'", c);
    return buf;
}

/* ---- tokens ---------------------------------------------------------------------------------------- */
/* A run of word characters into a new string (NULL: out of memory); *empty when there is none. */
static char *read_word(parser *p, bool *empty)
{
    size_t start = p->pos;
    while (!at_end(p) && is_word_char(peek(p)))
        p->pos++;
    *empty = p->pos == start;
    return rb_strndup(p->s + start, p->pos - start);
}

/* A quoted string at pos ('"'), escapes \" and \\ resolved, into *out. */
static int read_quoted(parser *p, char **out)
{
    size_t line = p->line;
    char *buf = rb_malloc(p->len - p->pos + 1);
    if (!buf)
        return nomem(p);
    size_t n = 0;
    p->pos++;
    for (;;) {
        char c = peek(p);
        if (at_end(p) || c == '\n') {
            rb_free(buf);
            return fail_at(p, line, "unterminated string (no closing '\"' on the line)");
        }
        p->pos++;
        if (c == '"')
            break;
        if (c == '\\' && (peek(p) == '"' || peek(p) == '\\'))
            c = p->s[p->pos++];
        buf[n++] = c;
    }
    buf[n] = '\0';
    *out = buf;
    return RB_OK;
}

/* ---- entries ----------------------------------------------------------------------------------------- */
static int add_value(parser *p, rb_ini_entry *e, char *text, bool quoted)
{
    char **v = rb_realloc(e->values, (e->n_values + 1) * sizeof *v);
    if (v)
        e->values = v;
    bool *q = v ? rb_realloc(e->quoted, (e->n_values + 1) * sizeof *q) : NULL;
    if (q)
        e->quoted = q;
    if (!v || !q) {
        rb_free(text);
        return nomem(p);
    }
    e->values[e->n_values] = text;
    e->quoted[e->n_values++] = quoted;
    return RB_OK;
}

/* One value (bare word or quoted string) at pos into e. */
static int read_atom(parser *p, rb_ini_entry *e)
{
    char *text = NULL;
    bool quoted = peek(p) == '"', empty = false;
    if (quoted) {
        int rc = read_quoted(p, &text);
        if (rc)
            return rc;
    } else if (!(text = read_word(p, &empty))) {
        return nomem(p);
    }
    return add_value(p, e, text, quoted);
}

/* A list at pos ('('), possibly over several lines, into e. */
static int read_list(parser *p, rb_ini_entry *e)
{
    size_t open_line = p->line;
    bool need_separator = false, after_comma = false;
    char buf[8];
    e->is_list = true;
    p->pos++;
    for (;;) {
        char c = peek(p);
        if (at_end(p))
            return fail_at(p, open_line, "unterminated list for key '%s' (no ')' before the end of the file)", e->key);
        if (c == '\n') {
            p->line++, p->pos++;
            need_separator = false;
        } else if (is_blank(c)) {
            p->pos++;
            need_separator = false;
        } else if (is_comment(c)) {
            rest_is_empty(p);
        } else if (c == ')') {
            if (after_comma)
                return fail_at(p, p->line, "key '%s': empty list element before ')'", e->key);
            p->pos++;
            return RB_OK;
        } else if (c == ',') {
            if (after_comma || e->n_values == 0)
                return fail_at(p, p->line, "key '%s': empty list element before ','", e->key);
            p->pos++;
            after_comma = true, need_separator = false;
        } else if (c == '(' && p->line == open_line) {
            return fail_at(p, p->line, "key '%s': nested lists are not supported", e->key);
        } else if (c == '(' || c == '[' || c == ']') { /* most likely the next statement: a ')' is missing */
            return fail_at(p, open_line, "unterminated list for key '%s' (found %s on line %zu)", e->key, shown(p, buf),
                           p->line);
        } else if (need_separator) {
            return fail_at(p, p->line, "key '%s': expected ',' or ')' between list elements, found %s", e->key,
                           shown(p, buf));
        } else {
            int rc = read_atom(p, e);
            if (rc)
                return rc;
            need_separator = true, after_comma = false;
        }
    }
}

static void entry_free(rb_ini_entry *e)
{
    rb_free(e->key);
    for (size_t i = 0; i < e->n_values; i++)
        rb_free(e->values[i]);
    rb_free(e->values);
    rb_free(e->quoted);
}

/* `key value` at pos into group g. */
static int read_statement(parser *p, rb_ini_group *g)
{
    char buf[8];
    size_t line = p->line;
    bool empty;
    char *key = read_word(p, &empty);
    if (!key)
        return nomem(p);
    if (empty || !valid_name(key)) {
        int rc = empty ? fail_at(p, line, "expected a key, found %s", shown(p, buf))
                       : fail_at(p, line, "'%s' is not a key (letters, digits, '_', '.', '-')", key);
        rb_free(key);
        return rc;
    }
    if (rb_ini_entry_find(g, key)) {
        int rc = fail_at(p, line, "duplicate key '%s' (first on line %zu)", key, rb_ini_entry_find(g, key)->line);
        rb_free(key);
        return rc;
    }
    rb_ini_entry e = {.key = key, .file = p->file, .line = line};
    int rc = RB_OK;
    skip_blanks(p);
    char c = peek(p);
    if (at_end(p) || c == '\n' || is_comment(c))
        rc = fail_at(p, line, "key '%s' has no value", key);
    else if (c == '(')
        rc = read_list(p, &e);
    else if (c == '"' || is_word_char(c))
        rc = read_atom(p, &e);
    else
        rc = fail_at(p, line, "key '%s': unexpected %s", key, shown(p, buf));
    if (!rc && !rest_is_empty(p))
        rc = fail_at(p, p->line, "key '%s': more than one value (write a list in parentheses)", key);
    rb_ini_entry *grown = rc ? NULL : rb_realloc(g->entries, (g->n_entries + 1) * sizeof *grown);
    if (!rc && !grown)
        rc = nomem(p);
    if (rc) {
        entry_free(&e);
        return rc;
    }
    g->entries = grown;
    g->entries[g->n_entries++] = e;
    return RB_OK;
}

/* ---- groups and files ---------------------------------------------------------------------------------- */
static void group_free(rb_ini_group *g)
{
    rb_free(g->name);
    for (size_t i = 0; i < g->n_entries; i++)
        entry_free(&g->entries[i]);
    rb_free(g->entries);
    for (size_t i = 0; i < g->n_groups; i++)
        group_free(&g->groups[i]);
    rb_free(g->groups);
}

/* A new empty group of root named `name` (taken over), at `line` of `file`. */
static int add_group(parser *p, rb_ini_group *root, char *name, const char *file, size_t line, rb_ini_group **out)
{
    rb_ini_group *grown = rb_realloc(root->groups, (root->n_groups + 1) * sizeof *grown);
    if (!grown) {
        rb_free(name);
        return nomem(p);
    }
    root->groups = grown;
    rb_ini_group *g = &root->groups[root->n_groups++];
    memset(g, 0, sizeof *g);
    g->name = name;
    g->file = file;
    g->line = line;
    *out = g;
    return RB_OK;
}

static int parse_file(rb_ini *ini, const char *path, const char *text, size_t len, rb_ini_group *root, parser *outer,
                      rb_err *err);

/* Read `rel` (relative to the current file) into group g. */
static int include_file(parser *p, const char *rel, rb_ini_group *g, size_t line)
{
    if (p->depth + 1 > INI_MAX_DEPTH)
        return fail_at(p, line, "include '%s': includes nested deeper than %d files", rel, INI_MAX_DEPTH);
    char *path = rb_path_relative_to(p->file, rel);
    if (!path)
        return nomem(p);
    char *text = NULL;
    size_t len = 0;
    rb_err sub;
    int rc = rb_cfg_read_file(path, &text, &len, &sub);
    if (rc == RB_ENOTFOUND)
        rc = fail_at(p, line, "include file '%s' not found (%s)", rel, path);
    else if (rc == RB_ENOMEM)
        rc = nomem(p);
    else if (rc)
        rc = fail_at(p, line, "include file '%s': %s", rel, sub.msg);
    if (!rc)
        rc = parse_file(p->ini, path, text, len, g, p, p->err);
    rb_free(text);
    rb_free(path);
    return rc;
}

/* `[NAME]` or `[include NAME "file"]` at pos ('['): *cur becomes the new group; *included tells which. */
static int read_header(parser *p, rb_ini_group *root, rb_ini_group **cur, bool *included)
{
    char buf[8];
    size_t line = p->line;
    bool empty;
    p->pos++;
    skip_blanks(p);
    char *word = read_word(p, &empty);
    if (!word)
        return nomem(p);
    *included = strcmp(word, "include") == 0;
    char *file = NULL;
    int rc = RB_OK;
    if (*included) {
        rb_free(word);
        skip_blanks(p);
        word = read_word(p, &empty);
        if (!word)
            return nomem(p);
        skip_blanks(p);
        bool bare = false;
        if (!empty && peek(p) == '"')
            rc = read_quoted(p, &file);
        else if (!empty && is_word_char(peek(p)))
            rc = (file = read_word(p, &bare)) ? RB_OK : nomem(p);
        else
            rc = fail_at(p, line, "expected [include GROUP \"file.ini\"]");
    }
    skip_blanks(p);
    if (!rc && peek(p) != ']')
        rc = fail_at(p, line, "expected ']' after the group name, found %s", shown(p, buf));
    if (!rc && !valid_name(word))
        rc = fail_at(p, line, "'%s' is not a group name (letters, digits, '_', '.', '-')", word);
    const rb_ini_group *twin = rc ? NULL : rb_ini_group_find(root, word);
    if (twin && twin->line)
        rc = fail_at(p, line, "duplicate group [%s] (first on line %zu)", word, twin->line);
    else if (twin)
        rc = fail_at(p, line, "duplicate group [%s] (first by an include)", word);
    if (!rc) {
        p->pos++;
        if (!rest_is_empty(p))
            rc = fail_at(p, line, "unexpected %s after ']'", shown(p, buf));
    }
    if (rc) {
        rb_free(word);
        rb_free(file);
        return rc;
    }
    rc = add_group(p, root, word, p->file, *included ? 0 : line, cur);
    if (!rc && *included)
        rc = include_file(p, file, *cur, line);
    rb_free(file);
    return rc;
}

static int parse_lines(parser *p, rb_ini_group *root)
{
    rb_ini_group *cur = root;
    bool after_include = false;
    while (!at_end(p)) {
        skip_blanks(p);
        char c = peek(p);
        int rc = RB_OK;
        if (c == '\n') {
            p->pos++, p->line++;
        } else if (is_comment(c) || at_end(p)) {
            rest_is_empty(p);
        } else if (c == '[') {
            rc = read_header(p, root, &cur, &after_include);
        } else if (after_include) {
            rc = fail_at(p, p->line, "a key after an [include ...] line: start a [GROUP] first");
        } else {
            rc = read_statement(p, cur);
        }
        if (rc)
            return rc;
    }
    return RB_OK;
}

/* Remember `path` in ini->files (the copy is what messages point to). */
static int add_file(rb_ini *ini, const char *path, const char **out, rb_err *err)
{
    char **grown = rb_realloc(ini->files, (ini->n_files + 1) * sizeof *grown);
    if (grown)
        ini->files = grown;
    char *copy = grown ? rb_strdup(path) : NULL;
    if (!copy)
        return rb_err_set(err, RB_ENOMEM, "%s: out of memory", path);
    ini->files[ini->n_files++] = copy;
    *out = copy;
    return RB_OK;
}

static int parse_file(rb_ini *ini, const char *path, const char *text, size_t len, rb_ini_group *root, parser *outer,
                      rb_err *err)
{
    parser p = {.ini = ini, .s = text, .len = len, .line = 1, .err = err};
    int rc = add_file(ini, path, &p.file, err);
    if (rc)
        return rc;
    root->file = p.file;
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        size_t line = 1;
        for (const char *c = text; c < nul; c++)
            line += *c == '\n';
        return fail_at(&p, line, "NUL byte");
    }
    /* Includes are told apart by their real path, so "a.ini" and "./a.ini" are one file. */
    char *canonical = realpath(path, NULL);
    if (outer) {
        p.depth = outer->depth + 1;
        memcpy(p.chain, outer->chain, sizeof p.chain);
        for (size_t i = 0; canonical && i < p.depth; i++)
            if (outer->chain[i] && strcmp(outer->chain[i], canonical) == 0) {
                free(canonical);
                return fail_at(outer, outer->line, "include cycle: %s includes itself", path);
            }
    }
    p.chain[p.depth] = canonical;
    rc = parse_lines(&p, root);
    free(canonical);
    return rc;
}

int rb_ini_load_text(const char *text, size_t len, const char *name, rb_ini **out, rb_err *err)
{
    *out = NULL;
    rb_ini *ini = rb_calloc(1, sizeof *ini);
    if (!ini || !(ini->root.name = rb_strdup(""))) {
        rb_free(ini);
        return rb_err_set(err, RB_ENOMEM, "%s: out of memory", name);
    }
    int rc = parse_file(ini, name, text, len, &ini->root, NULL, err);
    if (rc) {
        rb_ini_free(ini);
        return rc;
    }
    *out = ini;
    return RB_OK;
}

int rb_ini_load(const char *path, rb_ini **out, rb_err *err)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = rb_cfg_read_file(path, &text, &len, err);
    if (!rc)
        rc = rb_ini_load_text(text, len, path, out, err);
    rb_free(text);
    return rc;
}

void rb_ini_free(rb_ini *ini)
{
    if (!ini)
        return;
    group_free(&ini->root);
    for (size_t i = 0; i < ini->n_files; i++)
        rb_free(ini->files[i]);
    rb_free(ini->files);
    rb_free(ini);
}

/* ---- lookups and typed reads ------------------------------------------------------------------------------ */
const rb_ini_group *rb_ini_group_find(const rb_ini_group *g, const char *name)
{
    for (size_t i = 0; g && i < g->n_groups; i++)
        if (strcmp(g->groups[i].name, name) == 0)
            return &g->groups[i];
    return NULL;
}

const rb_ini_entry *rb_ini_entry_find(const rb_ini_group *g, const char *key)
{
    for (size_t i = 0; g && i < g->n_entries; i++)
        if (strcmp(g->entries[i].key, key) == 0)
            return &g->entries[i];
    return NULL;
}

void rb_ini_group_where(const rb_ini_group *g, char *buf, size_t size)
{
    if (g->line)
        snprintf(buf, size, "%s:%zu: [%s]", g->file, g->line, g->name);
    else if (g->name[0])
        snprintf(buf, size, "%s:1: group %s", g->file, g->name);
    else
        snprintf(buf, size, "%s:1", g->file);
}

bool rb_ini_parse_number(const char *s, double *out)
{
    const char *c = s;
    c += *c == '+' || *c == '-';
    size_t int_digits = strspn(c, "0123456789"), frac_digits = 0;
    c += int_digits;
    if (*c == '.') {
        frac_digits = strspn(c + 1, "0123456789");
        c += 1 + frac_digits;
    }
    if (int_digits + frac_digits == 0)
        return false;
    if (*c == 'e' || *c == 'E') {
        c++;
        c += *c == '+' || *c == '-';
        size_t exp_digits = strspn(c, "0123456789");
        if (!exp_digits)
            return false;
        c += exp_digits;
    }
    if (*c)
        return false;
    rb_locale_scope scope;
    rb_c_locale_push(&scope, NULL);
    double x = strtod(s, NULL);
    rb_c_locale_pop(&scope);
    if (!isfinite(x))
        return false;
    *out = x;
    return true;
}

/* The entry, or the missing-key error / RB_OK with *e NULL when optional. */
static int lookup(const rb_ini_group *g, const char *key, bool required, const rb_ini_entry **e, rb_err *err)
{
    *e = rb_ini_entry_find(g, key);
    if (*e || !required)
        return RB_OK;
    char where[512];
    rb_ini_group_where(g, where, sizeof where);
    return rb_err_set(err, RB_ECONFIG, "%s: missing key '%s'", where, key);
}

/* How a value was written, for messages. */
static void describe(const rb_ini_entry *e, char *buf, size_t size)
{
    if (e->is_list)
        snprintf(buf, size, "a list of %zu", e->n_values);
    else
        snprintf(buf, size, e->quoted[0] ? "\"%.100s\"" : "'%.100s'", e->values[0]);
}

static int wrong(const rb_ini_entry *e, const char *expected, rb_err *err)
{
    char got[128];
    describe(e, got, sizeof got);
    return rb_err_set(err, RB_ECONFIG, "%s:%zu: key '%s': expected %s, got %s", e->file, e->line, e->key, expected,
                      got);
}

int rb_ini_get_string(const rb_ini_group *g, const char *key, bool required, const char **out, rb_err *err)
{
    const rb_ini_entry *e;
    int rc = lookup(g, key, required, &e, err);
    if (rc || !e)
        return rc;
    if (e->is_list)
        return wrong(e, "a string", err);
    *out = e->values[0];
    return RB_OK;
}

int rb_ini_get_number(const rb_ini_group *g, const char *key, bool required, double *out, rb_err *err)
{
    const rb_ini_entry *e;
    int rc = lookup(g, key, required, &e, err);
    if (rc || !e)
        return rc;
    if (e->is_list || e->quoted[0] || !rb_ini_parse_number(e->values[0], out))
        return wrong(e, "a number", err);
    return RB_OK;
}

int rb_ini_get_bool(const rb_ini_group *g, const char *key, bool required, bool *out, rb_err *err)
{
    const rb_ini_entry *e;
    int rc = lookup(g, key, required, &e, err);
    if (rc || !e)
        return rc;
    const char *v = e->is_list || e->quoted[0] ? "" : e->values[0];
    if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0)
        *out = true;
    else if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0)
        *out = false;
    else
        return wrong(e, "0, 1, true or false", err);
    return RB_OK;
}

int rb_ini_get_strings(const rb_ini_group *g, const char *key, bool required, const char *const **out, size_t *n,
                       rb_err *err)
{
    const rb_ini_entry *e;
    int rc = lookup(g, key, required, &e, err);
    if (rc || !e)
        return rc;
    if (!e->is_list)
        return wrong(e, "a list in parentheses", err);
    *out = (const char *const *)e->values;
    *n = e->n_values;
    return RB_OK;
}

int rb_ini_get_numbers(const rb_ini_group *g, const char *key, bool required, double *dst, size_t count, rb_err *err)
{
    const rb_ini_entry *e;
    int rc = lookup(g, key, required, &e, err);
    if (rc || !e)
        return rc;
    char expected[64];
    snprintf(expected, sizeof expected, "a list of %zu number%s", count, count == 1 ? "" : "s");
    if (!e->is_list || e->n_values != count)
        return wrong(e, expected, err);
    for (size_t i = 0; i < count; i++)
        if (e->quoted[i] || !rb_ini_parse_number(e->values[i], &dst[i]))
            return rb_err_set(err, RB_ECONFIG, "%s:%zu: key '%s': element %zu: expected a number, got %s%.100s%s",
                              e->file, e->line, e->key, i + 1, e->quoted[i] ? "\"" : "'", e->values[i],
                              e->quoted[i] ? "\"" : "'");
    return RB_OK;
}
