/* The stage types' reference (rb_registry_markdown) and the parameter texts `roboest stages` shares with it. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pipeline_internal.h"

/* A growing string; a failed allocation is remembered and reported once at the end. */
typedef struct text {
    char *s;
    size_t len, cap;
    bool failed;
} text;

static void put_n(text *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *grown = rb_realloc(b->s, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->s = grown, b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void put(text *b, const char *s) { put_n(b, s, strlen(s)); }

static void putf(text *b, const char *fmt, ...) RB_PRINTF(2, 3);

static void putf(text *b, const char *fmt, ...)
{
    char small[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        put_n(b, small, (size_t)n);
        return;
    }
    char *big = rb_malloc((size_t)n + 1);
    if (!big) {
        b->failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    put_n(b, big, (size_t)n);
    rb_free(big);
}

static int finish(text *b, char **out, rb_err *err)
{
    if (!b->failed && !b->s)
        put(b, "");
    if (b->failed) {
        rb_free(b->s);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    *out = b->s;
    return RB_OK;
}

/* ---- a parameter's default and bounds (`roboest stages` prints the same words) ---------------------------------- */

static void default_text(text *b, const rb_param_spec *ps)
{
    if (ps->required)
        return;
    switch (ps->kind) {
    case RB_PARAM_NUMBER:
    case RB_PARAM_INTEGER: putf(b, "%g", ps->def_number); break;
    case RB_PARAM_BOOLEAN: put(b, ps->def_number != 0 ? "true" : "false"); break;
    case RB_PARAM_NUMBER_ARRAY:
        for (size_t i = 0; i < ps->def_count; i++)
            putf(b, "%s%g", i ? ", " : "[", ps->def_numbers[i]);
        if (ps->def_count)
            put(b, "]");
        break;
    case RB_PARAM_STRING:
        if (ps->def_string)
            putf(b, "\"%s\"", ps->def_string);
        break;
    case RB_PARAM_STRING_ARRAY: break; /* the listing has never shown these: the doc says the default */
    }
}

static void bounds_text(text *b, const rb_param_spec *ps)
{
    const char *sep = "";
    if (ps->has_min)
        putf(b, "%s %g", ps->min_exclusive ? ">" : ">=", ps->min), sep = ", ";
    if (ps->has_max)
        putf(b, "%s%s %g", sep, ps->max_exclusive ? "<" : "<=", ps->max), sep = ", ";
    if (ps->choices) {
        putf(b, "%sone of", sep);
        for (const char *const *c = ps->choices; *c; c++)
            putf(b, " \"%s\"", *c);
    }
}

static int param_text(const rb_param_spec *ps, void (*fmt)(text *, const rb_param_spec *), char **out, rb_err *err)
{
    *out = NULL;
    rb_locale_scope loc;
    int rc = rb_c_locale_push(&loc, err);
    if (rc)
        return rc;
    text b = {0};
    fmt(&b, ps);
    rb_c_locale_pop(&loc);
    return finish(&b, out, err);
}

int rb_param_default_text(const rb_param_spec *ps, char **out, rb_err *err)
{
    return param_text(ps, default_text, out, err);
}

int rb_param_bounds_text(const rb_param_spec *ps, char **out, rb_err *err)
{
    return param_text(ps, bounds_text, out, err);
}

/* ---- the reference ------------------------------------------------------------------------------------------------
 */

/* A table cell: one line, '|' escaped (also inside code spans, as GitHub's tables need). */
static void put_cell(text *b, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            put(b, "\\|");
        else
            put_n(b, *s == '\n' || *s == '\r' ? " " : s, 1);
    }
}

static void put_param_row(text *b, const rb_param_spec *ps)
{
    text def = {0}, bounds = {0};
    default_text(&def, ps);
    bounds_text(&bounds, ps);
    putf(b, "| `%s` | %s | ", ps->name, rb_param_kind_name(ps->kind));
    if (ps->required) {
        put(b, "required");
    } else if (def.len) {
        put(b, "`");
        put_cell(b, def.s);
        put(b, "`");
    } else {
        put(b, "optional");
    }
    put(b, " | ");
    put_cell(b, bounds.s);
    put(b, " | ");
    put_cell(b, ps->doc);
    if (ps->details && ps->details[0]) {
        put(b, ps->doc && ps->doc[0] ? "; " : "");
        put_cell(b, ps->details);
    }
    put(b, " |\n");
    b->failed |= def.failed || bounds.failed;
    rb_free(def.s);
    rb_free(bounds.s);
}

static void put_type(text *b, const rb_stage_type *t)
{
    putf(b, "### `%s`\n\n", t->name);
    if (t->summary && t->summary[0])
        putf(b, "%s\n\n", t->summary);
    if (t->doc && t->doc[0]) {
        put(b, t->doc);
        put(b, t->doc[strlen(t->doc) - 1] == '\n' ? "\n" : "\n\n");
    }
    if (t->settle) /* what a pipeline's metrics skip by default (configs/README.md, `settle`) */
        putf(b, "Start-up settling time (the metrics' default `settle`): %s\n\n", t->settle_doc);
    if (t->n_inputs) {
        put(b, "| input | wiring | width, unit, meaning |\n| --- | --- | --- |\n");
        for (size_t k = 0; k < t->n_inputs; k++) {
            bool optional = k < 64 && (t->optional_inputs >> k & 1);
            putf(b, "| `%s` | %s | ", t->inputs[k], optional ? "optional" : "required");
            put_cell(b, t->input_docs ? t->input_docs[k] : NULL);
            put(b, " |\n");
        }
        put(b, "\n");
    }
    if (t->n_outputs) {
        put(b, "| output | width, unit, meaning |\n| --- | --- |\n");
        for (size_t k = 0; k < t->n_outputs; k++) {
            putf(b, "| `%s` | ", t->outputs[k]);
            put_cell(b, t->output_docs ? t->output_docs[k] : NULL);
            put(b, " |\n");
        }
        put(b, "\n");
    }
    if (!t->n_params) {
        put(b, "No parameters.\n");
        return;
    }
    put(b, "| param | kind | required / default | bounds, choices | meaning |\n| --- | --- | --- | --- | --- |\n");
    for (size_t k = 0; k < t->n_params; k++)
        put_param_row(b, &t->params[k]);
}

int rb_registry_markdown(const rb_registry *reg, char **out, rb_err *err)
{
    *out = NULL;
    rb_locale_scope loc;
    int rc = rb_c_locale_push(&loc, err);
    if (rc)
        return rc;
    text b = {0};
    for (size_t i = 0; i < rb_registry_count(reg); i++) {
        if (i)
            put(&b, "\n");
        put_type(&b, rb_registry_at(reg, i));
    }
    rb_c_locale_pop(&loc);
    return finish(&b, out, err);
}
