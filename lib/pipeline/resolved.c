/* The resolved configuration as JSON (for `roboest run --print-config` and provenance). */
#include <cjson/cJSON.h>
#include <string.h>

#include "pipeline_internal.h"

static void add_model_logs_clock(rb_cfg_builder *b, cJSON *root, const rb_pipeline *p)
{
    if (p->model_urdf) {
        cJSON *model = rb_cfg_add(b, root, "model", cJSON_CreateObject());
        if (model) {
            rb_cfg_add(b, model, "urdf", cJSON_CreateString(p->model_urdf));
            if (p->n_model_joints)
                rb_cfg_add(b, model, "joints", rb_cfg_strings((const char *const *)p->model_joints, p->n_model_joints));
            if (p->model_base)
                rb_cfg_add(b, model, "base", cJSON_CreateString(p->model_base));
            if (p->model_floating)
                rb_cfg_add(b, model, "floating", cJSON_CreateTrue());
        }
    }
    cJSON *logs = rb_cfg_add(b, root, "logs", cJSON_CreateArray());
    for (size_t i = 0; logs && i < p->n_logs; i++) {
        const rb_cfg_session *s = &p->logs[i];
        rb_cfg_add(b, logs, NULL,
                   s->n_paths == 1 ? cJSON_CreateString(s->paths[0])
                                   : rb_cfg_strings((const char *const *)s->paths, s->n_paths));
    }
    cJSON *clock = rb_cfg_add(b, root, "clock", cJSON_CreateObject());
    if (clock && p->clock_channel)
        rb_cfg_add(b, clock, "channel", cJSON_CreateString(p->clock_channel));
    else if (clock)
        rb_cfg_add(b, clock, "rate", cJSON_CreateNumber(p->clock_rate));
    if (p->has_window)
        rb_cfg_add(b, root, "window", rb_window_json(&p->window));
    if (p->has_settle)
        rb_cfg_add(b, root, "settle", cJSON_CreateNumber(p->settle));
    rb_cfg_add(b, root, "gap_factor", cJSON_CreateNumber(p->gap_factor));
}

static void add_signals(rb_cfg_builder *b, cJSON *root, const rb_pipeline *p)
{
    cJSON *signals = rb_cfg_add(b, root, "signals", cJSON_CreateObject());
    for (size_t i = 0; signals && i < p->n_signals; i++) {
        const rb_config_signal *s = &p->signals[i];
        cJSON *o = rb_cfg_add(b, signals, s->name, cJSON_CreateObject());
        if (!o)
            continue;
        if (s->n_channels > 1)
            rb_cfg_add(b, o, "channel", rb_cfg_strings((const char *const *)s->channels, s->n_channels));
        else
            rb_cfg_add(b, o, "channel", cJSON_CreateString(s->channel));
        if (s->select_names) {
            rb_cfg_add(b, o, "elements", rb_cfg_strings((const char *const *)s->select_names, s->n_select));
        } else if (s->select_indices) {
            cJSON *a = rb_cfg_add(b, o, "elements", cJSON_CreateArray());
            for (size_t k = 0; a && k < s->n_select; k++)
                rb_cfg_add(b, a, NULL, cJSON_CreateNumber((double)s->select_indices[k]));
        }
        rb_cfg_add(b, o, "interp", cJSON_CreateString(s->interp == RB_INTERP_HOLD ? "hold" : "linear"));
        rb_cfg_add(b, o, "nonfinite", cJSON_CreateString(s->nonfinite == RB_NONFINITE_HOLD ? "hold" : "error"));
        if (s->names)
            rb_cfg_add(b, o, "names", rb_cfg_strings((const char *const *)s->names, s->n_names));
        char num[32]; /* raw: cJSON's printer drops digits of a double it deems close enough */
        rb_cfg_add(b, o, "scale", cJSON_CreateRaw(rb_format_double(s->scale, num)));
        if (s->unit)
            rb_cfg_add(b, o, "unit", cJSON_CreateString(s->unit));
        if (s->optional)
            rb_cfg_add(b, o, "optional", cJSON_CreateBool(true));
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
    case RB_PARAM_STRING_ARRAY: return rb_cfg_strings((const char *const *)v->strings, v->count);
    }
    return NULL;
}

/* Unwired output ports (NULL) are left out, as in the file: loading the text again gives the same pipeline. */
static void add_ports(rb_cfg_builder *b, cJSON *stage, const char *key, const char *const *ports, char **signals,
                      size_t n)
{
    cJSON *o = rb_cfg_add(b, stage, key, cJSON_CreateObject());
    for (size_t j = 0; o && j < n; j++)
        if (signals[j])
            rb_cfg_add(b, o, ports[j], cJSON_CreateString(signals[j]));
}

static void add_stages(rb_cfg_builder *b, cJSON *root, const rb_pipeline *p)
{
    cJSON *stages = rb_cfg_add(b, root, "stages", cJSON_CreateArray());
    for (size_t i = 0; stages && i < p->n_stages; i++) {
        const rb_config_stage *st = &p->stages[i];
        const rb_stage_type *t = st->type;
        cJSON *o = rb_cfg_add(b, stages, NULL, cJSON_CreateObject());
        if (!o)
            continue;
        rb_cfg_add(b, o, "id", cJSON_CreateString(st->id));
        rb_cfg_add(b, o, "type", cJSON_CreateString(t->name));
        add_ports(b, o, "in", t->inputs, st->in, t->n_inputs);
        add_ports(b, o, "out", t->outputs, st->out, t->n_outputs);
        cJSON *params = rb_cfg_add(b, o, "params", cJSON_CreateObject());
        for (size_t k = 0; params && k < t->n_params; k++)
            if (t->params[k].kind != RB_PARAM_STRING || st->params[k].string)
                rb_cfg_add(b, params, t->params[k].name, param_json(&t->params[k], &st->params[k]));
    }
}

static void add_outputs_metrics_reports(rb_cfg_builder *b, cJSON *root, const rb_pipeline *p)
{
    cJSON *outputs = rb_cfg_add(b, root, "outputs", cJSON_CreateArray());
    for (size_t i = 0; outputs && i < p->n_outputs; i++) {
        cJSON *o = rb_cfg_add(b, outputs, NULL, cJSON_CreateObject());
        if (o) {
            rb_cfg_add(b, o, "path", cJSON_CreateString(p->outputs[i].path));
            rb_cfg_add(b, o, "signals",
                       rb_cfg_strings((const char *const *)p->outputs[i].signals, p->outputs[i].n_signals));
        }
    }
    cJSON *metrics = rb_cfg_add(b, root, "metrics", cJSON_CreateArray());
    for (size_t i = 0; metrics && i < p->n_metrics; i++) {
        const rb_config_metric *m = &p->metrics[i];
        cJSON *o = rb_cfg_add(b, metrics, NULL, cJSON_CreateObject());
        if (!o)
            continue;
        rb_cfg_add(b, o, "estimate", cJSON_CreateString(m->estimate));
        rb_cfg_add(b, o, "reference", cJSON_CreateString(m->reference));
        if (m->has_window)
            rb_cfg_add(b, o, "window", rb_window_json(&m->window));
        rb_cfg_add(b, o, "name", cJSON_CreateString(m->name));
        if (m->confusion) {
            rb_cfg_add(b, o, "labels", rb_cfg_strings((const char *const *)m->labels, m->n_labels));
            rb_cfg_add(b, o, "reference_labels",
                       rb_cfg_strings((const char *const *)m->reference_labels, m->n_reference_labels));
        }
        if (m->where)
            rb_cfg_add(b, o, "where", cJSON_CreateString(m->where));
        cJSON *rl = m->reference_log.path ? rb_cfg_add(b, o, "reference_log", cJSON_CreateObject()) : NULL;
        if (rl) {
            rb_cfg_add(b, rl, "path", cJSON_CreateString(m->reference_log.path));
            if (m->reference_log.has_offset)
                rb_cfg_add(b, rl, "time_offset", cJSON_CreateNumber(m->reference_log.time_offset));
            rb_cfg_add(b, rl, "interp",
                       cJSON_CreateString(m->reference_log.interp == RB_INTERP_HOLD ? "hold" : "linear"));
        }
    }
    cJSON *reports = rb_cfg_add(b, root, "reports", cJSON_CreateArray());
    for (size_t i = 0; reports && i < p->n_reports; i++)
        rb_cfg_add(b, reports, NULL, cJSON_CreateString(p->reports[i].path));
}

char *rb_pipeline_resolved_json(const rb_pipeline *p)
{
    rb_cfg_builder b = {true};
    cJSON *root = cJSON_CreateObject();
    char *text = NULL, *out = NULL;
    if (!root)
        return NULL;
    rb_cfg_add(&b, root, "name", cJSON_CreateString(p->name));
    add_model_logs_clock(&b, root, p);
    add_signals(&b, root, p);
    add_stages(&b, root, p);
    add_outputs_metrics_reports(&b, root, p);
    rb_pipeline_faults_resolved(&b, root, p);
    if (b.ok)
        text = cJSON_Print(root);
    if (text)
        out = rb_asprintf("%s\n", text); /* library allocations go through rb_malloc: copy */
    cJSON_free(text);
    cJSON_Delete(root);
    return out;
}
