/* The stream: a pipeline's stages stepped one sample at a time by a caller who produces the bound
 * channels itself. Set-up resolves every binding into a flat list of element copies (channel row ->
 * binding row); a step runs that list and then the engine (engine.c) for one sample. */
#include <math.h>
#include <string.h>

#include "pipeline_internal.h"

typedef struct stream_channel {
    char *name;
    size_t width;
    char **elements; /* width names, owned */
    double *row;     /* width values, written by the caller */
} stream_channel;

/* One bound element: channel row -> binding row, with the binding's nonfinite policy. */
typedef struct element_copy {
    const double *src;
    double *dst;
    double last;  /* the last finite value seen (hold), 0 before any */
    double scale; /* the binding's "scale" */
    bool hold;    /* RB_NONFINITE_HOLD, else an error */
    size_t binding, channel, element;
} element_copy;

struct rb_stream {
    const rb_pipeline *p; /* borrowed */
    rb_engine eng;
    rb_err spare; /* stages' messages when the caller gives no rb_err */
    size_t n_channels;
    stream_channel *ch;
    size_t n_copies;
    element_copy *copies;
    double *time; /* n_samples times k dt */
    size_t n_samples, next;
    bool failed, finished;
};

static int nomem(const rb_stream *s, rb_err *err)
{
    return rb_err_set(err, RB_ENOMEM, "%s: out of memory", s->p->name);
}

/* ---- the caller's channels --------------------------------------------------------------------------- */
static int copy_channels(rb_stream *s, const rb_channel_info *in, size_t n, rb_err *err)
{
    if (!(s->ch = rb_calloc(n ? n : 1, sizeof *s->ch)))
        return nomem(s, err);
    s->n_channels = n;
    for (size_t c = 0; c < n; c++) {
        stream_channel *ch = &s->ch[c];
        ch->width = in[c].width;
        ch->name = rb_strdup(in[c].name);
        ch->elements = rb_pipeline_copy_strings(in[c].elements, NULL, ch->width, true);
        ch->row = rb_calloc(ch->width ? ch->width : 1, sizeof *ch->row);
        if (!ch->name || !ch->elements || !ch->row)
            return nomem(s, err);
    }
    return RB_OK;
}

static long find_channel(const rb_stream *s, const char *name)
{
    for (size_t c = 0; c < s->n_channels; c++)
        if (strcmp(s->ch[c].name, name) == 0)
            return (long)c;
    return -1;
}

/* ---- bindings -------------------------------------------------------------------------------------------- */
static void key_path(char *buf, size_t size, const char *name, const char *key, long index)
{
    rb_json_step path[4] = {{"signals", 0}, {name, 0}, {key, 0}, {NULL, index < 0 ? 0 : (size_t)index}};
    rb_json_path_format(path, index < 0 ? 3 : 4, buf, size);
}

static int missing_channel(const rb_stream *s, const rb_config_signal *b, size_t c, rb_err *err)
{
    char where[256];
    key_path(where, sizeof where, b->name, "channel", b->n_channels > 1 ? (long)c : -1);
    rb_suggest sg;
    rb_suggest_init(&sg, b->channels[c]);
    for (size_t k = 0; k < s->n_channels; k++)
        rb_suggest_consider(&sg, s->ch[k].name);
    const char *best = rb_suggest_best(&sg);
    return rb_err_set(err, RB_ENOTFOUND, "%s: binding '%s': channel '%s' is not among the stream's channels (%s)%s%s%s",
                      s->p->name, b->name, b->channels[c], where, best ? "; did you mean '" : "", best ? best : "",
                      best ? "'?" : "");
}

/* The channel element that selection e of binding b (single channel ch) picks. */
static int select_element(const rb_stream *s, const rb_config_signal *b, size_t ci, size_t e, size_t *idx, rb_err *err)
{
    const stream_channel *ch = &s->ch[ci];
    char where[256];
    key_path(where, sizeof where, b->name, "elements", (long)e);
    if (b->select_names) {
        for (size_t k = 0; k < ch->width; k++)
            if (strcmp(ch->elements[k], b->select_names[e]) == 0) {
                *idx = k;
                return RB_OK;
            }
        return rb_err_set(err, RB_ENOTFOUND, "%s: binding '%s': channel '%s' has no element '%s' (%s)", s->p->name,
                          b->name, ch->name, b->select_names[e], where);
    }
    if (b->select_indices[e] >= ch->width)
        return rb_err_set(err, RB_EINPUT,
                          "%s: binding '%s': channel '%s' has %zu elements: index %zu is out of range (%s)", s->p->name,
                          b->name, ch->name, ch->width, b->select_indices[e], where);
    *idx = b->select_indices[e];
    return RB_OK;
}

/* Binding i's channels in the caller's list (ci, b->n_channels entries) and its width. */
static int resolve_binding(const rb_stream *s, size_t i, long *ci, size_t *width, rb_err *err)
{
    const rb_config_signal *b = &s->p->signals[i];
    size_t n_found = 0, missing = SIZE_MAX;
    *width = 0;
    for (size_t c = 0; c < b->n_channels; c++) {
        if ((ci[c] = find_channel(s, b->channels[c])) < 0) {
            missing = missing == SIZE_MAX ? c : missing;
            continue;
        }
        n_found++;
        *width += s->ch[ci[c]].width;
    }
    if (missing != SIZE_MAX && (!b->optional || n_found)) /* an optional binding is all its channels or none */
        return missing_channel(s, b, missing, err);
    if (missing != SIZE_MAX)
        return RB_OK; /* optional and absent: 0 wide */
    if (b->n_select)
        *width = b->n_select; /* selection: single channel only (the loader checks) */
    return RB_OK;
}

/* The config's names and unit for binding i, from its channels ci (binding.c). */
static int relabel(rb_stream *s, size_t i, const long *ci, rb_err *err)
{
    const rb_config_signal *b = &s->p->signals[i];
    rb_bound_channel *ch = rb_calloc(b->n_channels, sizeof *ch);
    if (!ch)
        return nomem(s, err);
    for (size_t c = 0; c < b->n_channels; c++) {
        const stream_channel *sc = &s->ch[ci[c]];
        ch[c] = (rb_bound_channel){sc->name, sc->width, (const char *const *)sc->elements};
    }
    int rc = rb_binding_relabel(b, &s->eng.sig[i], ch, b->n_channels, s->p->name, err);
    rb_free(ch);
    return rc;
}

/* Binding i's row, names and units, and its element copies appended to s->copies (room made by the caller). */
static int bind(rb_stream *s, size_t i, const long *ci, const rb_channel_info *in, rb_err *err)
{
    const rb_config_signal *b = &s->p->signals[i];
    rb_live_signal *ls = &s->eng.sig[i];
    ls->stride = 0;
    if (!(ls->data = rb_calloc(ls->width ? ls->width : 1, sizeof *ls->data)) ||
        !(ls->names = rb_calloc(ls->width ? ls->width : 1, sizeof *ls->names)) ||
        !(ls->units = rb_calloc(ls->width ? ls->width : 1, sizeof *ls->units)))
        return nomem(s, err);
    if (b->optional && ci[0] < 0) /* absent: 0 wide */
        return RB_OK;
    size_t col = 0;
    for (size_t c = 0; c < b->n_channels; c++) {
        size_t n = b->n_select ? b->n_select : s->ch[ci[c]].width;
        for (size_t e = 0; e < n; e++, col++) {
            size_t idx = e;
            int rc = b->n_select ? select_element(s, b, (size_t)ci[c], e, &idx, err) : RB_OK;
            if (rc)
                return rc;
            const char *unit = in[ci[c]].units ? in[ci[c]].units[idx] : NULL;
            ls->names[col] = rb_strdup(s->ch[ci[c]].elements[idx]);
            ls->units[col] = rb_strdup(unit ? unit : "");
            if (!ls->names[col] || !ls->units[col])
                return nomem(s, err);
            s->copies[s->n_copies++] = (element_copy){s->ch[ci[c]].row + idx,
                                                      ls->data + col,
                                                      0,
                                                      b->scale,
                                                      b->nonfinite == RB_NONFINITE_HOLD,
                                                      i,
                                                      (size_t)ci[c],
                                                      idx};
        }
    }
    return relabel(s, i, ci, err);
}

static int bind_all(rb_stream *s, const rb_channel_info *in, rb_err *err)
{
    const rb_pipeline *p = s->p;
    size_t max_channels = 1, total = 0;
    for (size_t i = 0; i < p->n_signals; i++)
        max_channels = p->signals[i].n_channels > max_channels ? p->signals[i].n_channels : max_channels;
    long *ci = rb_calloc(max_channels, sizeof *ci);
    int rc = ci ? RB_OK : nomem(s, err);
    for (size_t i = 0; !rc && i < p->n_signals; i++) {
        rc = resolve_binding(s, i, ci, &s->eng.sig[i].width, err);
        total += rc ? 0 : s->eng.sig[i].width;
    }
    if (!rc && !(s->copies = rb_calloc(total ? total : 1, sizeof *s->copies)))
        rc = nomem(s, err);
    for (size_t i = 0; !rc && i < p->n_signals; i++) {
        size_t width;
        rc = resolve_binding(s, i, ci, &width, err);
        if (!rc)
            rc = bind(s, i, ci, in, err);
    }
    rb_free(ci);
    return rc;
}

/* ---- opening ------------------------------------------------------------------------------------------------ */
static int check_args(const rb_pipeline *p, const rb_channel_info *channels, size_t n_channels, double dt,
                      rb_stream **out, rb_err *err)
{
    if (!p || !out || (n_channels && !channels))
        return rb_err_set(err, RB_EINVAL, "rb_stream_open: NULL argument");
    if (!(dt > 0) || !isfinite(dt))
        return rb_err_set(err, RB_EINVAL, "%s: stream: the sample period must be finite and > 0 (got %g s)", p->name,
                          dt);
    for (size_t c = 0; c < n_channels; c++)
        if (!channels[c].name)
            return rb_err_set(err, RB_EINVAL, "%s: stream: channel %zu has no name", p->name, c);
    return RB_OK;
}

static int make_time(rb_stream *s, double dt, size_t n_samples, rb_err *err)
{
    if (n_samples > SIZE_MAX / sizeof(double) - 1)
        return rb_err_set(err, RB_ENOMEM, "%s: stream: %zu samples is too many", s->p->name, n_samples);
    if (!(s->time = rb_malloc((n_samples ? n_samples : 1) * sizeof *s->time)))
        return nomem(s, err);
    for (size_t k = 0; k < n_samples; k++)
        s->time[k] = (double)k * dt;
    s->n_samples = n_samples;
    return RB_OK;
}

static int create_stages(rb_stream *s, double dt, rb_err *err)
{
    size_t failed;
    int rc = rb_engine_create(&s->eng, dt, s->n_samples, s->time, 1, &failed);
    if (rc && failed != SIZE_MAX)
        rb_err_prefix(err, rc, "%s: stage %s: ", s->p->name, s->p->stages[failed].id);
    return rc;
}

int rb_stream_open(const rb_pipeline *p, const rb_channel_info *channels, size_t n_channels, double dt,
                   size_t n_samples, rb_stream **out, rb_err *err)
{
    if (out)
        *out = NULL;
    int rc = check_args(p, channels, n_channels, dt, out, err);
    if (rc)
        return rc;
    rb_stream *s = rb_calloc(1, sizeof *s);
    if (!s)
        return rb_err_set(err, RB_ENOMEM, "%s: out of memory", p->name);
    s->p = p;
    rc = rb_engine_init(&s->eng, p, p->name, err);
    if (!rc)
        rc = copy_channels(s, channels, n_channels, err);
    if (!rc)
        rc = make_time(s, dt, n_samples, err);
    if (!rc)
        rc = bind_all(s, channels, err);
    if (!rc)
        rc = create_stages(s, dt, err);
    if (rc) {
        rb_stream_free(s);
        return rc;
    }
    *out = s;
    return RB_OK;
}

double *rb_stream_channel_row(rb_stream *s, size_t c) { return s && c < s->n_channels ? s->ch[c].row : NULL; }

/* ---- stepping --------------------------------------------------------------------------------------------- */
static int nonfinite(const rb_stream *s, const element_copy *cp, size_t k, rb_err *err)
{
    return rb_err_set(err, RB_EINPUT, "%s: binding '%s': channel '%s' element '%s': non-finite value at sample %zu",
                      s->p->name, s->p->signals[cp->binding].name, s->ch[cp->channel].name,
                      s->ch[cp->channel].elements[cp->element], k);
}

static int copy_inputs(rb_stream *s, size_t k, rb_err *err)
{
    element_copy *cp = s->copies;
    for (size_t i = 0; i < s->n_copies; i++, cp++) {
        double v = *cp->src;
        if (isfinite(v))
            cp->last = v;
        else if (cp->hold)
            v = cp->last;
        else
            return nonfinite(s, cp, k, err);
        *cp->dst = v * cp->scale;
    }
    return RB_OK;
}

int rb_stream_step(rb_stream *s, rb_err *err)
{
    if (!s)
        return rb_err_set(err, RB_EINVAL, "rb_stream_step: NULL stream");
    rb_err *e = err ? err : &s->spare;
    if (s->failed || s->finished)
        return rb_err_set(e, RB_EINVAL, "%s: stream: %s", s->p->name,
                          s->failed ? "an earlier step failed" : "stepped after rb_stream_finish");
    if (s->next >= s->n_samples)
        return rb_err_set(e, RB_EINVAL, "%s: stream: all %zu samples were stepped", s->p->name, s->n_samples);
    size_t k = s->next, failed_k, stage;
    rb_err_clear(e);
    int rc = copy_inputs(s, k, e);
    if (!rc) {
        s->eng.err = e;
        rc = rb_engine_steps(&s->eng, k, k + 1, s->time, &failed_k, &stage);
        if (rc) {
            if (e->code == RB_OK)
                rb_err_set(e, RB_ENUMERIC, "step failed without a message");
            rb_err_prefix(e, rc, "%s: stage %s: sample %zu: ", s->p->name, s->p->stages[stage].id, k);
        }
    }
    if (rc) {
        s->failed = true;
        return rc;
    }
    s->next++;
    return RB_OK;
}

/* ---- signals ----------------------------------------------------------------------------------------------- */
static const rb_live_signal *signal_at(const rb_stream *s, long signal)
{
    return s && signal >= 0 && (size_t)signal < s->p->n_signal_table ? &s->eng.sig[signal] : NULL;
}

long rb_stream_find(const rb_stream *s, const char *name)
{
    return s && name ? rb_pipeline_signal_index(s->p, name) : -1;
}

size_t rb_stream_width(const rb_stream *s, long signal)
{
    const rb_live_signal *ls = signal_at(s, signal);
    return ls ? ls->width : 0;
}

const char *const *rb_stream_elements(const rb_stream *s, long signal)
{
    const rb_live_signal *ls = signal_at(s, signal);
    return ls ? (const char *const *)ls->names : NULL;
}

const double *rb_stream_row(const rb_stream *s, long signal)
{
    const rb_live_signal *ls = signal_at(s, signal);
    return ls ? ls->data : NULL;
}

/* ---- the end ------------------------------------------------------------------------------------------------- */
int rb_stream_finish(rb_stream *s, rb_err *err)
{
    if (!s)
        return rb_err_set(err, RB_EINVAL, "rb_stream_finish: NULL stream");
    rb_err *e = err ? err : &s->spare;
    if (s->failed || s->finished)
        return rb_err_set(e, RB_EINVAL, "%s: stream: %s", s->p->name,
                          s->failed ? "an earlier step failed" : "finished twice");
    s->finished = true;
    s->eng.err = e;
    size_t stage;
    int rc = rb_engine_finish(&s->eng, &stage);
    if (rc) {
        if (e->code == RB_OK)
            rb_err_set(e, RB_ENUMERIC, "finish failed without a message");
        rb_err_prefix(e, rc, "%s: stage %s: finish: ", s->p->name, s->p->stages[stage].id);
    }
    return rc;
}

void rb_stream_free(rb_stream *s)
{
    if (!s)
        return;
    rb_engine_free(&s->eng);
    for (size_t c = 0; s->ch && c < s->n_channels; c++) {
        rb_free(s->ch[c].name);
        rb_strings_free(s->ch[c].elements, s->ch[c].elements ? s->ch[c].width : 0);
        rb_free(s->ch[c].row);
    }
    rb_free(s->ch);
    rb_free(s->copies);
    rb_free(s->time);
    rb_free(s);
}
