/* Stage registry and parameter access. */
#include <math.h>
#include <string.h>

#include "pipeline_internal.h"

struct rb_registry {
    size_t n, cap;
    const rb_stage_type **types; /* sorted by name */
};

const char *rb_param_kind_name(rb_param_kind kind)
{
    switch (kind) {
    case RB_PARAM_NUMBER: return "number";
    case RB_PARAM_INTEGER: return "integer";
    case RB_PARAM_BOOLEAN: return "boolean";
    case RB_PARAM_STRING: return "string";
    case RB_PARAM_NUMBER_ARRAY: return "number array";
    case RB_PARAM_STRING_ARRAY: return "string array";
    }
    return "unknown";
}

int rb_registry_new(rb_registry **out, rb_err *err)
{
    *out = rb_calloc(1, sizeof **out);
    return *out ? RB_OK : rb_err_set(err, RB_ENOMEM, "out of memory");
}

void rb_registry_free(rb_registry *reg)
{
    if (!reg)
        return;
    rb_free(reg->types);
    rb_free(reg);
}

/* Also the loader's check (config.c): a configured value and a default obey the same bounds. */
bool rb_pipeline_param_within(const rb_param_spec *ps, double x)
{
    if (ps->has_min && (ps->min_exclusive ? !(x > ps->min) : !(x >= ps->min)))
        return false;
    if (ps->has_max && (ps->max_exclusive ? !(x < ps->max) : !(x <= ps->max)))
        return false;
    return true;
}

static bool is_choice(const rb_param_spec *ps, const char *s)
{
    if (!ps->choices)
        return true;
    for (const char *const *c = ps->choices; *c; c++)
        if (strcmp(*c, s) == 0)
            return true;
    return false;
}

static bool names_unique(const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!names || !names[i] || !names[i][0])
            return false;
        for (size_t j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return false;
    }
    return true;
}

/* A default is checked like a configured value, so a schema cannot fill in what it would reject. */
static const char *check_default(const rb_param_spec *ps)
{
    if (ps->required)
        return NULL;
    switch (ps->kind) {
    case RB_PARAM_NUMBER:
    case RB_PARAM_INTEGER:
        if (!isfinite(ps->def_number) || !rb_pipeline_param_within(ps, ps->def_number))
            return "default outside its bounds";
        if (ps->kind == RB_PARAM_INTEGER && ps->def_number != floor(ps->def_number))
            return "integer default is not integral";
        return NULL;
    case RB_PARAM_BOOLEAN: return ps->def_number == 0 || ps->def_number == 1 ? NULL : "boolean default not 0/1";
    case RB_PARAM_STRING: return !ps->def_string || is_choice(ps, ps->def_string) ? NULL : "default not a choice";
    case RB_PARAM_NUMBER_ARRAY:
    case RB_PARAM_STRING_ARRAY:
        if (ps->def_count < ps->min_count || (ps->max_count && ps->def_count > ps->max_count))
            return "default length outside its bounds";
        for (size_t i = 0; i < ps->def_count; i++) {
            double x = ps->kind == RB_PARAM_NUMBER_ARRAY ? ps->def_numbers[i] : 0;
            if (ps->kind == RB_PARAM_NUMBER_ARRAY && (!isfinite(x) || !rb_pipeline_param_within(ps, x)))
                return "default element outside its bounds";
            if (ps->kind == RB_PARAM_STRING_ARRAY && !is_choice(ps, ps->def_strings[i]))
                return "default element not a choice";
        }
        return NULL;
    }
    return "unknown kind";
}

static int check_type(const rb_stage_type *t, rb_err *err)
{
    if (t->version != RB_STAGE_TYPE_VERSION)
        return rb_err_set(err, RB_EINVAL, "stage type %s: version %d, this library takes version %d",
                          t->name ? t->name : "?", t->version, RB_STAGE_TYPE_VERSION);
    if (!t->name || !t->name[0] || !t->step || !t->create)
        return rb_err_set(err, RB_EINVAL, "stage type %s: needs a name, create and step", t->name ? t->name : "?");
    if (!names_unique(t->inputs, t->n_inputs) || !names_unique(t->outputs, t->n_outputs))
        return rb_err_set(err, RB_EINVAL, "stage type %s: port names must be non-empty and unique", t->name);
    if (t->settle && !(t->settle_doc && t->settle_doc[0]))
        return rb_err_set(err, RB_EINVAL, "stage type %s: a settle function needs its settle_doc", t->name);
    if (t->n_inputs < 64 && t->optional_inputs >> t->n_inputs)
        return rb_err_set(err, RB_EINVAL, "stage type %s: optional_inputs marks a port it does not have", t->name);
    for (size_t i = 0; i < t->n_params; i++) {
        const rb_param_spec *ps = &t->params[i];
        if (!ps->name || !ps->name[0])
            return rb_err_set(err, RB_EINVAL, "stage type %s: parameter %zu has no name", t->name, i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(ps->name, t->params[j].name) == 0)
                return rb_err_set(err, RB_EINVAL, "stage type %s: parameter %s appears twice", t->name, ps->name);
        const char *why = check_default(ps);
        if (why)
            return rb_err_set(err, RB_EINVAL, "stage type %s: parameter %s: %s", t->name, ps->name, why);
    }
    return RB_OK;
}

/* Index of the first type whose name is >= name. */
static size_t lower_bound(const rb_registry *reg, const char *name)
{
    size_t lo = 0, hi = reg->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(reg->types[mid]->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int rb_registry_add(rb_registry *reg, const rb_stage_type *type, rb_err *err)
{
    int rc = check_type(type, err);
    if (rc)
        return rc;
    size_t at = lower_bound(reg, type->name);
    if (at < reg->n && strcmp(reg->types[at]->name, type->name) == 0)
        return rb_err_set(err, RB_EINVAL, "stage type %s: registered twice", type->name);
    if (reg->n == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 16;
        const rb_stage_type **types = rb_realloc(reg->types, cap * sizeof *types);
        if (!types)
            return rb_err_set(err, RB_ENOMEM, "out of memory");
        reg->types = types;
        reg->cap = cap;
    }
    memmove(reg->types + at + 1, reg->types + at, (reg->n - at) * sizeof *reg->types);
    reg->types[at] = type;
    reg->n++;
    return RB_OK;
}

const rb_stage_type *rb_registry_find(const rb_registry *reg, const char *name)
{
    size_t at = lower_bound(reg, name);
    return at < reg->n && strcmp(reg->types[at]->name, name) == 0 ? reg->types[at] : NULL;
}

size_t rb_registry_count(const rb_registry *reg) { return reg->n; }

const rb_stage_type *rb_registry_at(const rb_registry *reg, size_t i) { return i < reg->n ? reg->types[i] : NULL; }

const rb_param_value *rb_params_get(const rb_params *p, const char *name)
{
    for (size_t i = 0; i < p->type->n_params; i++)
        if (strcmp(p->type->params[i].name, name) == 0)
            return &p->values[i];
    return NULL;
}

double rb_params_number(const rb_params *p, const char *name)
{
    const rb_param_value *v = rb_params_get(p, name);
    return v ? v->number : NAN;
}

long long rb_params_integer(const rb_params *p, const char *name)
{
    const rb_param_value *v = rb_params_get(p, name);
    return v ? (long long)v->number : 0;
}

bool rb_params_boolean(const rb_params *p, const char *name)
{
    const rb_param_value *v = rb_params_get(p, name);
    return v && v->number != 0;
}

const char *rb_params_string(const rb_params *p, const char *name)
{
    const rb_param_value *v = rb_params_get(p, name);
    return v ? v->string : NULL;
}

char *rb_stage_file_path(const char *config_dir, const char *value)
{
    if (value[0] == '/' || !config_dir || !config_dir[0])
        return rb_strdup(value);
    return rb_asprintf("%s/%s", config_dir, value);
}
