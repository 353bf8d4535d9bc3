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

static size_t count_children(const cJSON *node)
{
    size_t n = 0;
    for (const cJSON *ch = node->child; ch; ch = ch->next)
        n++;
    return n;
}

static bool is_integral(double x) { return x == floor(x) && fabs(x) <= 9007199254740992.0; }

/* An array of objects parsed by `one` into a new array of *n items of `size` bytes. Returns the array
 * (also after a failure, with *rc set, so that rb_pipeline_free releases what was parsed), or NULL. */
static void *parse_list(pload *x, const cJSON *v, const char *not_an_array, size_t size,
                        int (*one)(pload *, const cJSON *, void *item), size_t *n, int *rc)
{
    if (!cJSON_IsArray(v)) {
        *rc = rb_cfg_error(&x->c, "%s", not_an_array);
        return NULL;
    }
    size_t count = count_children(v), i = 0;
    char *items = rb_calloc(count ? count : 1, size);
    if (!items) {
        *rc = rb_cfg_nomem(&x->c);
        return NULL;
    }
    *n = count;
    *rc = RB_OK;
    for (const cJSON *e = v->child; e && !*rc; e = e->next, i++) {
        rb_cfg_push_index(&x->c, i);
        *rc = one(x, e, items + i * size);
        rb_cfg_pop(&x->c);
    }
    return items;
}

/* Output and report paths stay inside the run's output folder. */
static int check_relative(pload *x, const char *path)
{
    if (path[0] == '/')
        return rb_cfg_error(&x->c, "'%s' must be relative to the output folder", path);
    for (const char *s = path; *s;) {
        size_t n = strcspn(s, "/");
        if (n == 2 && s[0] == '.' && s[1] == '.')
            return rb_cfg_error(&x->c, "'%s' must stay inside the output folder", path);
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

static int check_signal_name(pload *x, const char *name)
{
    if (valid_signal_name(name))
        return RB_OK;
    return rb_cfg_error(&x->c, "signal name '%s' may use only letters, digits and _ . - / (not first)", name);
}

/* ---- name, model, logs, clock, window, gap_factor ---------------------------------------------------------- */
static int parse_name(rb_cfg *c, const cJSON *v)
{
    pload *x = (pload *)c;
    rb_free(x->p->name); /* the default from the file name */
    x->p->name = NULL;
    return rb_cfg_want_string(c, v, false, &x->p->name);
}

/* The model is loaded here, once: stages share it read-only, and a wrong joint or link is a config error. */
static int parse_model(rb_cfg *c, const cJSON *v)
{
    pload *x = (pload *)c;
    static const char *const keys[] = {"urdf", "joints", "base", "floating"};
    rb_pipeline *p = x->p;
    int rc = rb_cfg_check_object(c, v, keys, 4);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "urdf", true, &p->model_urdf);
    if (!rc)
        rc = rb_cfg_resolve_path(c, &p->model_urdf);
    if (!rc)
        rc = rb_cfg_member_strings(c, v, "joints", false, true, &p->model_joints, &p->n_model_joints);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "base", false, &p->model_base);
    const cJSON *fl = rb_cfg_member(v, "floating");
    if (!rc && fl) {
        rb_cfg_push_key(c, "floating", 0);
        if (!cJSON_IsBool(fl))
            rc = rb_cfg_error(c, "expected true or false");
        p->model_floating = cJSON_IsTrue(fl);
        rb_cfg_pop(c);
    }
    if (!rc) {
        rb_model_opts mo = {.joints = (const char *const *)p->model_joints,
                            .n_joints = p->n_model_joints,
                            .base = p->model_base,
                            .floating = p->model_floating};
        rb_err e;
        if (rb_model_load_urdf(p->model_urdf, &mo, &p->model, &e) != RB_OK) {
            rb_cfg_push_key(c, "urdf", 0);
            rc = e.code == RB_ENOMEM ? rb_cfg_nomem(c) : rb_cfg_error(c, "%s", e.msg);
            rb_cfg_pop(c);
        }
    }
    return rc;
}

static int parse_session(pload *x, const cJSON *v, void *session) { return rb_cfg_want_session(&x->c, v, session); }

static int parse_logs(rb_cfg *c, const cJSON *v)
{
    pload *x = (pload *)c;
    int rc;
    x->p->logs = parse_list(x, v, "expected an array of paths", sizeof *x->p->logs, parse_session, &x->p->n_logs, &rc);
    return rc;
}

static int parse_clock(rb_cfg *c, const cJSON *v)
{
    pload *x = (pload *)c;
    static const char *const keys[] = {"rate", "channel"};
    int rc = rb_cfg_check_object(c, v, keys, 2);
    if (rc)
        return rc;
    const cJSON *rate = rb_cfg_member(v, "rate"), *channel = rb_cfg_member(v, "channel");
    if ((rate != NULL) == (channel != NULL))
        return rb_cfg_error(c, "give exactly one of 'rate' (Hz) or 'channel'");
    if (channel)
        return rb_cfg_member_string(c, v, "channel", true, &x->p->clock_channel);
    rb_cfg_push_key(c, "rate", 0);
    rc = rb_cfg_want_number(c, rate, &x->p->clock_rate);
    if (!rc && !(x->p->clock_rate > 0))
        rc = rb_cfg_error(c, "must be > 0 (Hz)");
    rb_cfg_pop(c);
    return rc;
}

static int parse_window(rb_cfg *c, const cJSON *v)
{
    pload *x = (pload *)c;
    x->p->has_window = true;
    return rb_cfg_want_window(c, v, false, &x->p->window);
}

static int parse_settle(rb_cfg *c, const cJSON *v)
{
    pload *x = (pload *)c;
    x->p->has_settle = true;
    int rc = rb_cfg_want_number(c, v, &x->p->settle);
    return rc ? rc : rb_cfg_check_rule(c, x->p->settle, RB_CFG_NON_NEGATIVE);
}

static int parse_gap_factor(rb_cfg *c, const cJSON *v)
{
    pload *x = (pload *)c;
    int rc = rb_cfg_want_number(c, v, &x->p->gap_factor);
    return !rc && !(x->p->gap_factor > 1) ? rb_cfg_error(c, "must be > 1") : rc;
}

/* ---- signals ------------------------------------------------------------------------------------------------ */
static int parse_elements(pload *x, const cJSON *v, rb_config_signal *sig)
{
    if (!cJSON_IsArray(v) || !v->child)
        return rb_cfg_error(&x->c, "expected a non-empty array of element names or indices");
    size_t n = count_children(v), i = 0;
    bool by_name = cJSON_IsString(v->child);
    if (by_name)
        sig->select_names = rb_calloc(n, sizeof *sig->select_names);
    else
        sig->select_indices = rb_calloc(n, sizeof *sig->select_indices);
    if (!sig->select_names && !sig->select_indices)
        return rb_cfg_nomem(&x->c);
    sig->n_select = n;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        rb_cfg_push_index(&x->c, i);
        int rc = RB_OK;
        if (by_name) {
            rc = cJSON_IsString(e) ? rb_cfg_want_string(&x->c, e, false, &sig->select_names[i])
                                   : rb_cfg_error(&x->c, "expected an element name (all names or all indices)");
        } else if (!cJSON_IsNumber(e) || !is_integral(e->valuedouble) || e->valuedouble < 0) {
            rc = rb_cfg_error(&x->c, "expected an element index >= 0 (all names or all indices)");
        } else {
            sig->select_indices[i] = (size_t)e->valuedouble;
        }
        rb_cfg_pop(&x->c);
        if (rc)
            return rc;
    }
    return RB_OK;
}

/* "names": unique, not the report's pooled row "all", one per selected element when "elements" selects. */
static int parse_names(pload *x, const cJSON *v, rb_config_signal *sig)
{
    if (!rb_cfg_member(v, "names"))
        return RB_OK;
    int rc = rb_cfg_member_strings(&x->c, v, "names", false, false, &sig->names, &sig->n_names);
    if (rc) /* rb_pipeline_free frees what was read */
        return rc;
    rb_cfg_push_key(&x->c, "names", 0);
    size_t dup, first;
    rc = rb_cfg_find_duplicate(&x->c, (const char *const *)sig->names, sig->n_names, &dup, &first);
    for (size_t i = 0; !rc && i < sig->n_names; i++) {
        rb_cfg_push_index(&x->c, i);
        if (i == dup)
            rc = rb_cfg_error(&x->c, "'%s' is also names[%zu] (names must be unique)", sig->names[i], first);
        else if (strcmp(sig->names[i], "all") == 0)
            rc = rb_cfg_error(&x->c, "'all' is the pooled row of reports: choose another name");
        rb_cfg_pop(&x->c);
    }
    if (!rc && sig->n_select && sig->n_select != sig->n_names)
        rc = rb_cfg_error(&x->c, "%zu names for the %zu elements binding '%s' selects from channel %s", sig->n_names,
                          sig->n_select, sig->name, sig->channel);
    rb_cfg_pop(&x->c);
    return rc;
}

static int parse_binding(pload *x, const cJSON *v, rb_config_signal *sig)
{
    static const char *const keys[] = {"channel", "elements", "interp", "nonfinite",
                                       "names",   "scale",    "unit",   "optional"};
    static const char *const interps[] = {"linear", "hold", NULL}; /* RB_INTERP_LINEAR, RB_INTERP_HOLD */
    static const char *const policies[] = {"error", "hold", NULL}; /* RB_NONFINITE_ERROR, RB_NONFINITE_HOLD */
    int rc = rb_cfg_check_object(&x->c, v, keys, sizeof keys / sizeof keys[0]);
    const cJSON *ch = rb_cfg_member(v, "channel");
    if (!rc && cJSON_IsArray(ch)) {
        rc = rb_cfg_member_strings(&x->c, v, "channel", true, false, &sig->channels, &sig->n_channels);
    } else if (!rc) {
        sig->channels = rb_calloc(1, sizeof *sig->channels);
        if (!sig->channels)
            return rb_cfg_nomem(&x->c);
        sig->n_channels = 1;
        rc = rb_cfg_member_string(&x->c, v, "channel", true, &sig->channels[0]);
    }
    if (!rc)
        sig->channel = sig->channels[0];
    const cJSON *e = rb_cfg_member(v, "elements");
    if (!rc && e && sig->n_channels > 1) {
        rb_cfg_push_key(&x->c, "elements", 0);
        rc = rb_cfg_error(&x->c, "not with several channels (bind the channels one by one to select elements)");
        rb_cfg_pop(&x->c);
    } else if (!rc && e) {
        rb_cfg_push_key(&x->c, "elements", 0);
        rc = parse_elements(x, e, sig);
        rb_cfg_pop(&x->c);
    }
    size_t interp = 0, nonfinite = 0;
    if (!rc)
        rc = rb_cfg_member_choice(&x->c, v, "interp", interps, &interp);
    if (!rc)
        rc = rb_cfg_member_choice(&x->c, v, "nonfinite", policies, &nonfinite);
    sig->interp = interp ? RB_INTERP_HOLD : RB_INTERP_LINEAR;
    sig->nonfinite = nonfinite ? RB_NONFINITE_HOLD : RB_NONFINITE_ERROR;
    if (!rc)
        rc = parse_names(x, v, sig);
    sig->scale = 1;
    if (!rc)
        rc = rb_binding_scale_unit(&x->c, v, &sig->scale, &sig->unit);
    const cJSON *opt = rb_cfg_member(v, "optional");
    if (!rc && opt) {
        rb_cfg_push_key(&x->c, "optional", 0);
        rc = cJSON_IsBool(opt) ? RB_OK : rb_cfg_error(&x->c, "expected true or false");
        sig->optional = cJSON_IsTrue(opt);
        rb_cfg_pop(&x->c);
    }
    return rc;
}

static int parse_signals(rb_cfg *c, const cJSON *v)
{
    pload *x = (pload *)c;
    int rc = rb_cfg_check_object(c, v, NULL, 0);
    if (rc)
        return rc;
    size_t n = count_children(v), i = 0;
    if (n == 0)
        return rb_cfg_error(c, "expected at least one signal bound to a log channel");
    x->p->signals = rb_calloc(n, sizeof *x->p->signals);
    if (!x->p->signals)
        return rb_cfg_nomem(c);
    x->p->n_signals = n;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        rb_config_signal *sig = &x->p->signals[i];
        rb_cfg_push_key(c, e->string, 0);
        rc = check_signal_name(x, e->string);
        if (!rc) {
            sig->name = rb_strdup(e->string);
            rc = sig->name ? parse_binding(x, e, sig) : rb_cfg_nomem(c);
        }
        rb_cfg_pop(c);
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
static int param_number(pload *x, const cJSON *v, const rb_param_spec *ps, bool integer, double *out)
{
    int rc = rb_cfg_want_number(&x->c, v, out);
    if (rc)
        return integer && !cJSON_IsNumber(v) ? rb_cfg_error(&x->c, "expected an integer") : rc;
    if (integer && !is_integral(*out))
        return rb_cfg_error(&x->c, "expected an integer");
    if (!rb_pipeline_param_within(ps, *out)) {
        char b[96];
        bounds_text(ps, b, sizeof b);
        return rb_cfg_error(&x->c, "%s", b);
    }
    return RB_OK;
}

static int param_string(pload *x, const cJSON *v, const rb_param_spec *ps, char **out)
{
    if (ps->choices) {
        size_t index;
        int rc = rb_cfg_want_choice(&x->c, v, ps->choices, &index);
        if (rc)
            return rc;
    }
    return rb_cfg_want_string(&x->c, v, true, out);
}

static int param_array(pload *x, const cJSON *v, const rb_param_spec *ps, rb_param_value *val)
{
    bool numbers = ps->kind == RB_PARAM_NUMBER_ARRAY;
    if (!cJSON_IsArray(v))
        return rb_cfg_error(&x->c, numbers ? "expected an array of numbers" : "expected an array of strings");
    size_t n = count_children(v), i = 0;
    if (n < ps->min_count || (ps->max_count && n > ps->max_count)) {
        if (ps->max_count == ps->min_count)
            return rb_cfg_error(&x->c, "expected %zu values, got %zu", ps->min_count, n);
        if (ps->max_count)
            return rb_cfg_error(&x->c, "expected %zu to %zu values, got %zu", ps->min_count, ps->max_count, n);
        return rb_cfg_error(&x->c, "expected at least %zu values, got %zu", ps->min_count, n);
    }
    if (numbers)
        val->numbers = rb_calloc(n ? n : 1, sizeof *val->numbers);
    else
        val->strings = rb_calloc(n ? n : 1, sizeof *val->strings);
    if (!val->numbers && !val->strings)
        return rb_cfg_nomem(&x->c);
    val->count = n;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        rb_cfg_push_index(&x->c, i);
        int rc = numbers ? param_number(x, e, ps, false, &val->numbers[i]) : param_string(x, e, ps, &val->strings[i]);
        rb_cfg_pop(&x->c);
        if (rc)
            return rc;
    }
    return RB_OK;
}

static int param_value(pload *x, const cJSON *v, const rb_param_spec *ps, rb_param_value *val)
{
    val->given = true;
    switch (ps->kind) {
    case RB_PARAM_NUMBER: return param_number(x, v, ps, false, &val->number);
    case RB_PARAM_INTEGER: return param_number(x, v, ps, true, &val->number);
    case RB_PARAM_BOOLEAN:
        if (!cJSON_IsBool(v))
            return rb_cfg_error(&x->c, "expected true or false");
        val->number = cJSON_IsTrue(v) ? 1 : 0;
        return RB_OK;
    case RB_PARAM_STRING: return param_string(x, v, ps, &val->string);
    case RB_PARAM_NUMBER_ARRAY:
    case RB_PARAM_STRING_ARRAY: return param_array(x, v, ps, val);
    }
    return rb_cfg_error(&x->c, "unsupported parameter kind");
}

static int param_default(pload *x, const rb_param_spec *ps, rb_param_value *val)
{
    val->given = false;
    val->number = ps->def_number;
    if (ps->kind == RB_PARAM_STRING && ps->def_string && !(val->string = rb_strdup(ps->def_string)))
        return rb_cfg_nomem(&x->c);
    if (ps->kind == RB_PARAM_NUMBER_ARRAY || ps->kind == RB_PARAM_STRING_ARRAY) {
        size_t n = ps->def_count;
        if (ps->kind == RB_PARAM_NUMBER_ARRAY && !(val->numbers = rb_calloc(n ? n : 1, sizeof(double))))
            return rb_cfg_nomem(&x->c);
        if (ps->kind == RB_PARAM_STRING_ARRAY && !(val->strings = rb_calloc(n ? n : 1, sizeof(char *))))
            return rb_cfg_nomem(&x->c);
        val->count = n;
        for (size_t i = 0; i < n; i++) {
            if (ps->kind == RB_PARAM_NUMBER_ARRAY)
                val->numbers[i] = ps->def_numbers[i];
            else if (!(val->strings[i] = rb_strdup(ps->def_strings[i])))
                return rb_cfg_nomem(&x->c);
        }
    }
    return RB_OK;
}

/* `params` of a stage (v may be NULL); the current path is the stage. */
static int parse_params(pload *x, const cJSON *v, rb_config_stage *st)
{
    const rb_stage_type *t = st->type;
    st->params = rb_calloc(t->n_params ? t->n_params : 1, sizeof *st->params);
    if (!st->params)
        return rb_cfg_nomem(&x->c);
    int rc = RB_OK;
    if (v) {
        rb_cfg_push_key(&x->c, "params", 0);
        const char **names = rb_malloc((t->n_params ? t->n_params : 1) * sizeof *names);
        if (!names)
            return rb_cfg_nomem(&x->c);
        for (size_t i = 0; i < t->n_params; i++)
            names[i] = t->params[i].name;
        rc = rb_cfg_check_object(&x->c, v, names, t->n_params);
        rb_free(names);
    }
    for (size_t i = 0; !rc && i < t->n_params; i++) {
        const rb_param_spec *ps = &t->params[i];
        const cJSON *pv = v ? rb_cfg_member(v, ps->name) : NULL;
        if (pv) {
            rb_cfg_push_key(&x->c, ps->name, 0);
            rc = param_value(x, pv, ps, &st->params[i]);
            rb_cfg_pop(&x->c);
        } else if (ps->required) {
            rc = rb_cfg_error(&x->c, "missing required parameter '%s' (%s: %s)", ps->name, rb_param_kind_name(ps->kind),
                              ps->doc ? ps->doc : "");
        } else {
            rc = param_default(x, ps, &st->params[i]);
        }
    }
    if (v)
        rb_cfg_pop(&x->c);
    return rc;
}

/* ---- stages ---------------------------------------------------------------------------------------------- */
/* "in" / "out" of a stage: port -> signal name. Every input port is wired; an output port may be left
 * out ((*out)[j] NULL: the runner computes it into scratch), but at least one must be wired. */
static int parse_ports(pload *x, const cJSON *stage, const char *key, const char *const *ports, size_t n_ports,
                       char ***out)
{
    const bool inputs = strcmp(key, "in") == 0;
    *out = rb_calloc(n_ports ? n_ports : 1, sizeof **out);
    if (!*out)
        return rb_cfg_nomem(&x->c);
    const cJSON *v = rb_cfg_member(stage, key);
    if (!v)
        return n_ports ? rb_cfg_error(&x->c, "missing key '%s'", key) : RB_OK;
    rb_cfg_push_key(&x->c, key, 0);
    int rc = rb_cfg_check_object(&x->c, v, ports, n_ports);
    size_t wired = 0;
    for (size_t j = 0; !rc && j < n_ports; j++) {
        const cJSON *w = rb_cfg_member(v, ports[j]);
        if (!w) {
            if (inputs && !(j < 64 && (x->stage_optional >> j & 1)))
                rc = rb_cfg_error(&x->c, "missing input port '%s'", ports[j]);
            continue;
        }
        rb_cfg_push_key(&x->c, ports[j], 0);
        rc = rb_cfg_want_string(&x->c, w, false, &(*out)[j]);
        if (!rc && !inputs)
            rc = check_signal_name(x, (*out)[j]);
        rb_cfg_pop(&x->c);
        wired++;
    }
    if (!rc && !inputs && n_ports && !wired) {
        char list[256];
        size_t used = 0;
        list[0] = '\0';
        for (size_t j = 0; j < n_ports && used < sizeof list; j++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", j ? ", " : "", ports[j]);
        rc = rb_cfg_error(&x->c, "no output port is wired: wire at least one of %s", list);
    }
    rb_cfg_pop(&x->c);
    return rc;
}

static int parse_stage_type(pload *x, const cJSON *stage, rb_config_stage *st)
{
    char *name = NULL;
    int rc = rb_cfg_member_string(&x->c, stage, "type", true, &name);
    if (rc)
        return rc;
    st->type = rb_registry_find(x->reg, name);
    if (!st->type) {
        rb_suggest s;
        rb_suggest_init(&s, name);
        for (size_t i = 0; i < rb_registry_count(x->reg); i++)
            rb_suggest_consider(&s, rb_registry_at(x->reg, i)->name);
        const char *best = rb_suggest_best(&s);
        rb_cfg_push_key(&x->c, "type", 0);
        if (best)
            rc = rb_cfg_error(&x->c, "unknown stage type '%s' (did you mean '%s'?)", name, best);
        else
            rc = rb_cfg_error(&x->c, "unknown stage type '%s' (roboest --help lists the stage types)", name);
        rb_cfg_pop(&x->c);
    }
    rb_free(name);
    return rc;
}

static int parse_stage(pload *x, const cJSON *v, void *item)
{
    static const char *const keys[] = {"id", "type", "in", "out", "params"};
    rb_config_stage *st = item;
    int rc = rb_cfg_check_object(&x->c, v, keys, 5);
    if (!rc)
        rc = rb_cfg_member_string(&x->c, v, "id", true, &st->id);
    if (!rc)
        rc = parse_stage_type(x, v, st);
    if (rc)
        return rc;
    const rb_stage_type *t = st->type;
    x->stage_optional = t->optional_inputs;
    rc = parse_ports(x, v, "in", t->inputs, t->n_inputs, &st->in);
    if (!rc)
        rc = parse_ports(x, v, "out", t->outputs, t->n_outputs, &st->out);
    if (!rc)
        rc = parse_params(x, rb_cfg_member(v, "params"), st);
    if (!rc) {
        st->in_signal = rb_calloc(t->n_inputs ? t->n_inputs : 1, sizeof *st->in_signal);
        st->out_signal = rb_calloc(t->n_outputs ? t->n_outputs : 1, sizeof *st->out_signal);
        if (!st->in_signal || !st->out_signal)
            rc = rb_cfg_nomem(&x->c);
    }
    return rc;
}

static int parse_stages(rb_cfg *c, const cJSON *v)
{
    pload *x = (pload *)c;
    rb_pipeline *p = x->p;
    int rc;
    p->stages = parse_list(x, v, "expected an array of stages", sizeof *p->stages, parse_stage, &p->n_stages, &rc);
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
        rb_cfg_push_index(c, dup);
        rb_cfg_push_key(c, "id", 0);
        rc = rb_cfg_error(c, "stage id '%s' is also used by stages[%zu]", p->stages[dup].id, first);
        rb_cfg_pop(c);
        rb_cfg_pop(c);
    }
    return rc;
}

/* ---- outputs, metrics, reports ---------------------------------------------------------------------------- */
static int parse_output(pload *x, const cJSON *v, void *item)
{
    static const char *const keys[] = {"path", "signals"};
    rb_config_output *o = item;
    int rc = rb_cfg_check_object(&x->c, v, keys, 2);
    if (!rc)
        rc = rb_cfg_member_string(&x->c, v, "path", true, &o->path);
    if (rc)
        return rc;
    rb_cfg_push_key(&x->c, "path", 0);
    rc = check_relative(x, o->path);
    rb_err e;
    if (!rc && rb_out_format_from_path(o->path, &o->format, &e) != RB_OK)
        rc = rb_cfg_relay(&x->c, &e);
    rb_cfg_pop(&x->c);
    if (!rc)
        rc = rb_cfg_member_strings(&x->c, v, "signals", true, false, &o->signals, &o->n_signals);
    if (!rc && !(o->signal_index = rb_calloc(o->n_signals, sizeof *o->signal_index)))
        rc = rb_cfg_nomem(&x->c);
    return rc;
}

static int parse_outputs(rb_cfg *c, const cJSON *v)
{
    pload *x = (pload *)c;
    int rc;
    x->p->outputs = parse_list(x, v, "expected an array", sizeof *x->p->outputs, parse_output, &x->p->n_outputs, &rc);
    return rc;
}

static int parse_metric(pload *x, const cJSON *v, void *item)
{
    static const char *const keys[] = {"estimate", "reference",        "window", "name",
                                       "labels",   "reference_labels", "where",  "reference_log"};
    rb_config_metric *m = item;
    int rc = rb_cfg_check_object(&x->c, v, keys, 8);
    if (!rc)
        rc = rb_cfg_member_string(&x->c, v, "estimate", true, &m->estimate);
    if (!rc)
        rc = rb_cfg_member_string(&x->c, v, "reference", true, &m->reference);
    if (!rc)
        rc = rb_cfg_member_string(&x->c, v, "name", false, &m->name);
    if (!rc && !m->name && !(m->name = rb_strdup(m->estimate)))
        rc = rb_cfg_nomem(&x->c);
    m->window = (rb_window){-INFINITY, INFINITY, false};
    const cJSON *w = rb_cfg_member(v, "window");
    if (!rc && w) {
        rb_cfg_push_key(&x->c, "window", 0);
        rc = rb_cfg_want_window(&x->c, w, false, &m->window);
        m->has_window = true;
        rb_cfg_pop(&x->c);
    }
    const cJSON *rl = rc ? NULL : rb_cfg_member(v, "reference_log");
    if (rl) {
        rb_cfg_push_key(&x->c, "reference_log", 0);
        rc = rb_reference_log_parse(&x->c, rl, true, &m->reference_log);
        rb_cfg_pop(&x->c);
    }
    return rc ? rc : rb_pipeline_parse_confusion(&x->c, v, m);
}

static int parse_metrics(rb_cfg *c, const cJSON *v)
{
    pload *x = (pload *)c;
    int rc;
    x->p->metrics = parse_list(x, v, "expected an array", sizeof *x->p->metrics, parse_metric, &x->p->n_metrics, &rc);
    return rc;
}

static int parse_reports(rb_cfg *c, const cJSON *v)
{
    pload *x = (pload *)c;
    char **paths = NULL;
    size_t n = 0;
    int rc = rb_cfg_want_strings(c, v, true, &paths, &n);
    if (!rc && !(x->p->reports = rb_calloc(n ? n : 1, sizeof *x->p->reports)))
        rc = rb_cfg_nomem(c);
    if (!rc)
        x->p->n_reports = n;
    for (size_t i = 0; i < n; i++) {
        if (x->p->reports)
            x->p->reports[i].path = paths[i];
        else
            rb_free(paths[i]);
    }
    rb_free(paths);
    for (size_t i = 0; !rc && i < n; i++) {
        rb_cfg_push_index(c, i);
        rc = check_relative(x, x->p->reports[i].path);
        rb_err e;
        if (!rc && rb_report_format_from_path(x->p->reports[i].path, &x->p->reports[i].format, &e) != RB_OK)
            rc = rb_cfg_relay(c, &e);
        rb_cfg_pop(c);
    }
    return rc;
}

/* ---- the top level ------------------------------------------------------------------------------------------ */
/* Every top-level key, in the order the sections are read. */
static const rb_cfg_section sections[] = {
    {"name", false, parse_name},       {"model", false, parse_model},     {"logs", false, parse_logs},
    {"clock", true, parse_clock},      {"window", false, parse_window},   {"gap_factor", false, parse_gap_factor},
    {"signals", true, parse_signals},  {"stages", false, parse_stages},   {"outputs", false, parse_outputs},
    {"metrics", false, parse_metrics}, {"reports", false, parse_reports}, {"faults", false, rb_pipeline_parse_faults},
    {"settle", false, parse_settle},
};

/* ---- entry points ------------------------------------------------------------------------------------------- */

static void free_stage(rb_config_stage *st)
{
    const rb_stage_type *t = st->type;
    rb_free(st->id);
    if (t) {
        rb_strings_free(st->in, t->n_inputs);
        rb_strings_free(st->out, t->n_outputs);
        for (size_t i = 0; st->params && i < t->n_params; i++) {
            rb_free(st->params[i].string);
            rb_free(st->params[i].numbers);
            rb_strings_free(st->params[i].strings, st->params[i].count);
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
    rb_strings_free(p->model_joints, p->n_model_joints);
    for (size_t i = 0; p->logs && i < p->n_logs; i++)
        rb_strings_free(p->logs[i].paths, p->logs[i].n_paths);
    rb_free(p->logs);
    rb_free(p->clock_channel);
    for (size_t i = 0; p->signals && i < p->n_signals; i++) {
        rb_config_signal *s = &p->signals[i];
        rb_free(s->name);
        rb_strings_free(s->channels, s->n_channels);
        rb_strings_free(s->select_names, s->select_names ? s->n_select : 0);
        rb_free(s->select_indices);
        rb_strings_free(s->names, s->names ? s->n_names : 0);
        rb_free(s->unit);
    }
    rb_free(p->signals);
    for (size_t i = 0; p->stages && i < p->n_stages; i++)
        free_stage(&p->stages[i]);
    rb_free(p->stages);
    for (size_t i = 0; p->outputs && i < p->n_outputs; i++) {
        rb_free(p->outputs[i].path);
        rb_strings_free(p->outputs[i].signals, p->outputs[i].n_signals);
        rb_free(p->outputs[i].signal_index);
    }
    rb_free(p->outputs);
    for (size_t i = 0; p->metrics && i < p->n_metrics; i++) {
        rb_free(p->metrics[i].name);
        rb_free(p->metrics[i].estimate);
        rb_free(p->metrics[i].reference);
        rb_strings_free(p->metrics[i].labels, p->metrics[i].n_labels);
        rb_strings_free(p->metrics[i].reference_labels, p->metrics[i].n_reference_labels);
        rb_free(p->metrics[i].where);
        rb_reference_log_free(&p->metrics[i].reference_log);
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

static int init_pipeline(void *doc, const char *file, const char *name, const char *sha256)
{
    rb_pipeline *p = doc;
    p->config_sha256 = rb_strdup(sha256);
    p->config_path = rb_strdup(file);
    p->name = rb_strdup(name);
    p->window = (rb_window){-INFINITY, INFINITY, false};
    p->gap_factor = 3.0;
    rb_pipeline_faults_default(p);
    return p->config_sha256 && p->config_path && p->name ? RB_OK : RB_ENOMEM;
}

static int parse_pipeline(const rb_cfg *c, const cJSON *root, void *doc, const void *reg)
{
    pload x = {*c, reg, doc, 0};
    if (!(x.p->config_dir = rb_path_relative_to(c->base_file, ".")))
        return rb_cfg_nomem(&x.c);
    int rc = rb_cfg_sections(&x.c, root, sections, sizeof sections / sizeof sections[0]);
    return rc ? rc : rb_cfg_check_graph(&x);
}

static void free_pipeline(void *doc) { rb_pipeline_free(doc); }

static const rb_cfg_format pipeline_format = {"pipeline.json", "pipeline",     false,        sizeof(rb_pipeline),
                                              init_pipeline,   parse_pipeline, free_pipeline};

int rb_pipeline_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                          const rb_registry *reg, rb_pipeline **out, rb_err *err)
{
    return rb_cfg_load_text(&pipeline_format, text, len, name_for_messages, base_file, reg, (void **)out, err);
}

int rb_pipeline_load(const char *path, const rb_registry *reg, rb_pipeline **out, rb_err *err)
{
    return rb_cfg_load(&pipeline_format, path, reg, (void **)out, err);
}
