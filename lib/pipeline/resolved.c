/* The resolved configuration as JSON (for `roboest run --print-config` and provenance). */
#include <cjson/cJSON.h>
#include <string.h>

#include "roboest/pipeline.h"

/* cJSON builders return NULL when out of memory; `ok` collects that so each call site stays one line. */
typedef struct builder {
    bool ok;
} builder;

static cJSON *add(builder *b, cJSON *parent, const char *key, cJSON *item)
{
    if (!item) {
        b->ok = false;
        return NULL;
    }
    cJSON_bool added = key ? cJSON_AddItemToObject(parent, key, item) : cJSON_AddItemToArray(parent, item);
    if (!added) {
        cJSON_Delete(item);
        b->ok = false;
        return NULL;
    }
    return item;
}

static cJSON *strings(const char *const *s, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++) {
        cJSON *e = cJSON_CreateString(s[i]);
        if (!e || !cJSON_AddItemToArray(a, e)) {
            cJSON_Delete(e);
            cJSON_Delete(a);
            return NULL;
        }
    }
    return a;
}

static cJSON *window(double t0, double t1)
{
    const double w[2] = {t0, t1};
    return cJSON_CreateDoubleArray(w, 2);
}

static void add_model_logs_clock(builder *b, cJSON *root, const rb_pipeline *p)
{
    if (p->model_urdf) {
        cJSON *model = add(b, root, "model", cJSON_CreateObject());
        if (model) {
            add(b, model, "urdf", cJSON_CreateString(p->model_urdf));
            if (p->n_model_joints)
                add(b, model, "joints", strings((const char *const *)p->model_joints, p->n_model_joints));
            if (p->model_base)
                add(b, model, "base", cJSON_CreateString(p->model_base));
            if (p->model_floating)
                add(b, model, "floating", cJSON_CreateTrue());
        }
    }
    cJSON *logs = add(b, root, "logs", cJSON_CreateArray());
    for (size_t i = 0; logs && i < p->n_logs; i++) {
        const rb_config_session *s = &p->logs[i];
        add(b, logs, NULL,
            s->n_paths == 1 ? cJSON_CreateString(s->paths[0]) : strings((const char *const *)s->paths, s->n_paths));
    }
    cJSON *clock = add(b, root, "clock", cJSON_CreateObject());
    if (clock && p->clock_channel)
        add(b, clock, "channel", cJSON_CreateString(p->clock_channel));
    else if (clock)
        add(b, clock, "rate", cJSON_CreateNumber(p->clock_rate));
    if (p->has_window)
        add(b, root, "window", window(p->t0, p->t1));
    add(b, root, "gap_factor", cJSON_CreateNumber(p->gap_factor));
}

static void add_signals(builder *b, cJSON *root, const rb_pipeline *p)
{
    cJSON *signals = add(b, root, "signals", cJSON_CreateObject());
    for (size_t i = 0; signals && i < p->n_signals; i++) {
        const rb_config_signal *s = &p->signals[i];
        cJSON *o = add(b, signals, s->name, cJSON_CreateObject());
        if (!o)
            continue;
        if (s->n_channels > 1)
            add(b, o, "channel", strings((const char *const *)s->channels, s->n_channels));
        else
            add(b, o, "channel", cJSON_CreateString(s->channel));
        if (s->select_names) {
            add(b, o, "elements", strings((const char *const *)s->select_names, s->n_select));
        } else if (s->select_indices) {
            cJSON *a = add(b, o, "elements", cJSON_CreateArray());
            for (size_t k = 0; a && k < s->n_select; k++)
                add(b, a, NULL, cJSON_CreateNumber((double)s->select_indices[k]));
        }
        add(b, o, "interp", cJSON_CreateString(s->interp == RB_INTERP_HOLD ? "hold" : "linear"));
        add(b, o, "nonfinite", cJSON_CreateString(s->nonfinite == RB_NONFINITE_HOLD ? "hold" : "error"));
    }
}

static cJSON *param_json(const rb_param_spec *ps, const rb_param_value *v)
{
    switch (ps->kind) {
    case RB_PARAM_NUMBER:
    case RB_PARAM_INTEGER: return cJSON_CreateNumber(v->number);
    case RB_PARAM_BOOLEAN: return cJSON_CreateBool(v->number != 0);
    case RB_PARAM_STRING: return cJSON_CreateString(v->string);
    case RB_PARAM_NUMBER_ARRAY:
        return v->count ? cJSON_CreateDoubleArray(v->numbers, (int)v->count) : cJSON_CreateArray();
    case RB_PARAM_STRING_ARRAY: return strings((const char *const *)v->strings, v->count);
    }
    return NULL;
}

/* Unwired output ports (NULL) are left out, as in the file: loading the text again gives the same pipeline. */
static void add_ports(builder *b, cJSON *stage, const char *key, const char *const *ports, char **signals, size_t n)
{
    cJSON *o = add(b, stage, key, cJSON_CreateObject());
    for (size_t j = 0; o && j < n; j++)
        if (signals[j])
            add(b, o, ports[j], cJSON_CreateString(signals[j]));
}

static void add_stages(builder *b, cJSON *root, const rb_pipeline *p)
{
    cJSON *stages = add(b, root, "stages", cJSON_CreateArray());
    for (size_t i = 0; stages && i < p->n_stages; i++) {
        const rb_config_stage *st = &p->stages[i];
        const rb_stage_type *t = st->type;
        cJSON *o = add(b, stages, NULL, cJSON_CreateObject());
        if (!o)
            continue;
        add(b, o, "id", cJSON_CreateString(st->id));
        add(b, o, "type", cJSON_CreateString(t->name));
        add_ports(b, o, "in", t->inputs, st->in, t->n_inputs);
        add_ports(b, o, "out", t->outputs, st->out, t->n_outputs);
        cJSON *params = add(b, o, "params", cJSON_CreateObject());
        for (size_t k = 0; params && k < t->n_params; k++)
            if (t->params[k].kind != RB_PARAM_STRING || st->params[k].string)
                add(b, params, t->params[k].name, param_json(&t->params[k], &st->params[k]));
    }
}

static void add_outputs_metrics_reports(builder *b, cJSON *root, const rb_pipeline *p)
{
    cJSON *outputs = add(b, root, "outputs", cJSON_CreateArray());
    for (size_t i = 0; outputs && i < p->n_outputs; i++) {
        cJSON *o = add(b, outputs, NULL, cJSON_CreateObject());
        if (o) {
            add(b, o, "path", cJSON_CreateString(p->outputs[i].path));
            add(b, o, "signals", strings((const char *const *)p->outputs[i].signals, p->outputs[i].n_signals));
        }
    }
    cJSON *metrics = add(b, root, "metrics", cJSON_CreateArray());
    for (size_t i = 0; metrics && i < p->n_metrics; i++) {
        const rb_config_metric *m = &p->metrics[i];
        cJSON *o = add(b, metrics, NULL, cJSON_CreateObject());
        if (!o)
            continue;
        add(b, o, "estimate", cJSON_CreateString(m->estimate));
        add(b, o, "reference", cJSON_CreateString(m->reference));
        if (m->has_window)
            add(b, o, "window", window(m->t0, m->t1));
        add(b, o, "name", cJSON_CreateString(m->name));
    }
    cJSON *reports = add(b, root, "reports", cJSON_CreateArray());
    for (size_t i = 0; reports && i < p->n_reports; i++)
        add(b, reports, NULL, cJSON_CreateString(p->reports[i].path));
}

char *rb_pipeline_resolved_json(const rb_pipeline *p)
{
    builder b = {true};
    cJSON *root = cJSON_CreateObject();
    char *text = NULL, *out = NULL;
    if (!root)
        return NULL;
    add(&b, root, "name", cJSON_CreateString(p->name));
    add_model_logs_clock(&b, root, p);
    add_signals(&b, root, p);
    add_stages(&b, root, p);
    add_outputs_metrics_reports(&b, root, p);
    if (b.ok)
        text = cJSON_Print(root);
    if (text)
        out = rb_asprintf("%s\n", text); /* library allocations go through rb_malloc: copy */
    cJSON_free(text);
    cJSON_Delete(root);
    return out;
}
