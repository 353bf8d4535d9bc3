/* The in-memory log: channels and string attributes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io_internal.h"

const char *rb_log_format_name(rb_log_format fmt)
{
    switch (fmt) {
    case RB_FMT_MEMORY: return "in memory";
    case RB_FMT_LOGGER_MAT73: return "robot-logger MATLAB v7.3";
    case RB_FMT_LOGGER_MAT5: return "robot-logger MATLAB v5/v7";
    case RB_FMT_PLAIN_MAT73: return "named matrices, MATLAB v7.3";
    case RB_FMT_PLAIN_MAT5: return "named matrices, MATLAB v5/v7";
    case RB_FMT_ROBOEST_H5: return "roboest HDF5";
    case RB_FMT_PLAIN_H5: return "named datasets, HDF5";
    case RB_FMT_CSV: return "CSV";
    case RB_FMT_GROUPS_H5: return "channel groups, HDF5";
    }
    return "unknown";
}

int rb_log_new(rb_log **out, rb_err *err)
{
    *out = rb_calloc(1, sizeof **out);
    if (!*out)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    return RB_OK;
}

static void channel_free(rb_channel *ch)
{
    for (size_t i = 0; i < ch->n_elements; i++) {
        if (ch->element_names)
            rb_free(ch->element_names[i]);
        if (ch->units)
            rb_free(ch->units[i]);
    }
    rb_free(ch->element_names);
    rb_free(ch->units);
    rb_free(ch->time);
    rb_free(ch->data);
    rb_free(ch->name);
}

void rb_log_free(rb_log *log)
{
    if (!log)
        return;
    for (size_t c = 0; c < log->n_channels; c++)
        channel_free(&log->channels[c]);
    rb_free(log->channels);
    rb_io_attrs_free(log->attrs, log->n_attrs);
    for (size_t i = 0; i < log->n_skipped; i++) {
        rb_free(log->skipped[i].name);
        rb_free(log->skipped[i].reason);
    }
    rb_free(log->skipped);
    rb_free(log->root_name);
    rb_free(log);
}

int rb_log_note_skipped(rb_log *log, const char *name, const char *reason, rb_err *err)
{
    if (log->n_skipped == log->cap_skipped) {
        size_t cap = log->cap_skipped ? 2 * log->cap_skipped : 8;
        rb_skipped *grown = rb_realloc(log->skipped, cap * sizeof *grown);
        if (!grown)
            return rb_err_set(err, RB_ENOMEM, "out of memory");
        log->skipped = grown;
        log->cap_skipped = cap;
    }
    rb_skipped *s = &log->skipped[log->n_skipped];
    s->name = rb_strdup(name);
    s->reason = rb_strdup(reason);
    if (!s->name || !s->reason) {
        rb_free(s->name);
        rb_free(s->reason);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    log->n_skipped++;
    return RB_OK;
}

double rb_log_start(const rb_log *log)
{
    double t = NAN;
    for (size_t c = 0; c < log->n_channels; c++) {
        const rb_channel *ch = &log->channels[c];
        for (size_t k = 0; k < ch->n_samples; k++)
            if (isfinite(ch->time[k])) { /* times increase: the first finite one is the channel's earliest */
                if (!(ch->time[k] >= t))
                    t = ch->time[k];
                break;
            }
    }
    return t;
}

const rb_channel *rb_log_find(const rb_log *log, const char *name)
{
    for (size_t c = 0; c < log->n_channels; c++)
        if (strcmp(log->channels[c].name, name) == 0)
            return &log->channels[c];
    return NULL;
}

long rb_channel_element_index(const rb_channel *ch, const char *element_name)
{
    for (size_t i = 0; i < ch->n_elements; i++)
        if (strcmp(ch->element_names[i], element_name) == 0)
            return (long)i;
    return -1;
}

int rb_io_grow(void **items, size_t *cap, size_t need, size_t size, rb_err *err)
{
    if (need <= *cap)
        return RB_OK;
    size_t cap2 = *cap ? *cap * 2 : 8, bytes;
    while (cap2 < need)
        cap2 *= 2;
    if (!rb_size_mul(cap2, size, &bytes))
        return rb_err_set(err, RB_ENOMEM, "too many items");
    void *p = rb_realloc(*items, bytes);
    if (!p)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    *items = p;
    *cap = cap2;
    return RB_OK;
}

static int add_channel(rb_log *log, const char *name, size_t n_samples, size_t n_elements, bool samples,
                       rb_channel **out, rb_err *err)
{
    if (rb_log_find(log, name))
        return rb_err_set(err, RB_EINPUT, "channel %s appears twice", name);
    size_t n_values, data_bytes, time_bytes;
    if (!rb_size_mul(n_samples, n_elements, &n_values) || !rb_size_mul(n_values, sizeof(double), &data_bytes) ||
        !rb_size_mul(n_samples, sizeof(double), &time_bytes))
        return rb_err_set(err, RB_ENOMEM, "channel %s: %zu x %zu samples is too large", name, n_samples, n_elements);
    int rc = rb_io_grow((void **)&log->channels, &log->cap_channels, log->n_channels + 1, sizeof(rb_channel), err);
    if (rc)
        return rc;
    rb_channel ch = {0};
    ch.n_samples = n_samples;
    ch.n_elements = n_elements;
    ch.name = rb_strdup(name);
    if (samples) {
        ch.time = rb_calloc(n_samples ? n_samples : 1, sizeof(double));
        ch.data = rb_calloc(n_values ? n_values : 1, sizeof(double));
    }
    ch.element_names = rb_calloc(n_elements ? n_elements : 1, sizeof(char *));
    ch.units = rb_calloc(n_elements ? n_elements : 1, sizeof(char *));
    bool ok = ch.name && (!samples || (ch.time && ch.data)) && ch.element_names && ch.units;
    for (size_t i = 0; ok && i < n_elements; i++) {
        ch.element_names[i] = rb_asprintf("%zu", i);
        ch.units[i] = rb_strdup("");
        ok = ch.element_names[i] && ch.units[i];
    }
    if (!ok) {
        channel_free(&ch);
        return rb_err_set(err, RB_ENOMEM, "out of memory for channel %s", name);
    }
    log->channels[log->n_channels] = ch;
    if (out)
        *out = &log->channels[log->n_channels];
    log->n_channels++;
    return RB_OK;
}

int rb_log_add_channel(rb_log *log, const char *name, size_t n_samples, size_t n_elements, rb_channel **out,
                       rb_err *err)
{
    return add_channel(log, name, n_samples, n_elements, true, out, err);
}

int rb_io_add_channel_meta(rb_log *log, const char *name, size_t n_samples, size_t n_elements, rb_channel **out,
                           rb_err *err)
{
    return add_channel(log, name, n_samples, n_elements, false, out, err);
}

static int replace_string(char **slot, const char *s, rb_err *err)
{
    char *copy = rb_strdup(s ? s : "");
    if (!copy)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    rb_free(*slot);
    *slot = copy;
    return RB_OK;
}

int rb_channel_set_name(rb_channel *ch, size_t i, const char *s, rb_err *err)
{
    if (i >= ch->n_elements)
        return rb_err_set(err, RB_EINVAL, "channel %s: element %zu out of range", ch->name, i);
    return replace_string(&ch->element_names[i], s, err);
}

int rb_channel_set_unit(rb_channel *ch, size_t i, const char *s, rb_err *err)
{
    if (i >= ch->n_elements)
        return rb_err_set(err, RB_EINVAL, "channel %s: element %zu out of range", ch->name, i);
    return replace_string(&ch->units[i], s, err);
}

int rb_log_add_channel_copy(rb_log *log, const char *name, size_t n_samples, size_t n_elements, const double *time,
                            const double *data, const char *const *names, const char *const *units, rb_err *err)
{
    rb_channel *ch;
    int rc = rb_log_add_channel(log, name, n_samples, n_elements, &ch, err);
    if (rc)
        return rc;
    if (n_samples)
        memcpy(ch->time, time, n_samples * sizeof(double));
    if (n_samples && n_elements)
        memcpy(ch->data, data, n_samples * n_elements * sizeof(double));
    for (size_t i = 0; i < n_elements && rc == RB_OK; i++) {
        if (names)
            rc = rb_channel_set_name(ch, i, names[i], err);
        if (units && rc == RB_OK)
            rc = rb_channel_set_unit(ch, i, units[i], err);
    }
    return rc;
}

/* ---- attribute lists, shared with rb_arrays (io_internal.h) ---- */

int rb_io_attrs_set(rb_io_attrs attrs, const char *key, const char *value, rb_err *err)
{
    for (size_t a = 0; a < *attrs.n; a++)
        if (strcmp((*attrs.items)[a].key, key) == 0)
            return replace_string(&(*attrs.items)[a].value, value, err);
    int rc = rb_io_grow((void **)attrs.items, attrs.cap, *attrs.n + 1, sizeof(rb_attr), err);
    if (rc)
        return rc;
    rb_attr attr = {rb_strdup(key), rb_strdup(value ? value : "")};
    if (!attr.key || !attr.value) {
        rb_free(attr.key);
        rb_free(attr.value);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    (*attrs.items)[(*attrs.n)++] = attr;
    return RB_OK;
}

const char *rb_io_attrs_get(const rb_attr *attrs, size_t n, const char *key)
{
    for (size_t a = 0; a < n; a++)
        if (strcmp(attrs[a].key, key) == 0)
            return attrs[a].value;
    return NULL;
}

void rb_io_attrs_free(rb_attr *attrs, size_t n)
{
    for (size_t a = 0; a < n; a++) {
        rb_free(attrs[a].key);
        rb_free(attrs[a].value);
    }
    rb_free(attrs);
}

int rb_log_set_attr(rb_log *log, const char *key, const char *value, rb_err *err)
{
    return rb_io_attrs_set(RB_IO_ATTRS(log), key, value, err);
}

static int set_log_attr(void *log, const char *key, const char *value, rb_err *err)
{
    return rb_log_set_attr(log, key, value, err);
}

int rb_log_set_provenance(rb_log *log, const rb_provenance *pv, rb_err *err)
{
    return rb_provenance_each(pv, set_log_attr, log, err);
}

const char *rb_log_get_attr(const rb_log *log, const char *key)
{
    return rb_io_attrs_get(log->attrs, log->n_attrs, key);
}

static int check_appendable(const rb_channel *a, const rb_channel *b, rb_err *err)
{
    if (!b)
        return rb_err_set(err, RB_EINPUT, "channel %s: missing from the next file", a->name);
    if (a->n_elements != b->n_elements)
        return rb_err_set(err, RB_EINPUT, "channel %s: %zu elements, the next file has %zu", a->name, a->n_elements,
                          b->n_elements);
    for (size_t i = 0; i < a->n_elements; i++)
        if (strcmp(a->element_names[i], b->element_names[i]) != 0)
            return rb_err_set(err, RB_EINPUT, "channel %s: element %zu is %s, in the next file %s", a->name, i,
                              a->element_names[i], b->element_names[i]);
    if (a->n_samples && b->n_samples && !(b->time[0] > a->time[a->n_samples - 1]))
        return rb_err_set(err, RB_EINPUT, "channel %s: the next file starts at %.17g s, not after %.17g s", a->name,
                          b->time[0], a->time[a->n_samples - 1]);
    return RB_OK;
}

int rb_log_append(rb_log *log, const rb_log *next, rb_err *err)
{
    if (log->n_channels != next->n_channels) {
        for (size_t c = 0; c < next->n_channels; c++)
            if (!rb_log_find(log, next->channels[c].name))
                return rb_err_set(err, RB_EINPUT, "channel %s: not in the first file", next->channels[c].name);
    }
    /* Check everything first so a failure leaves `log` untouched. */
    for (size_t c = 0; c < log->n_channels; c++) {
        int rc = check_appendable(&log->channels[c], rb_log_find(next, log->channels[c].name), err);
        if (rc)
            return rc;
    }
    for (size_t c = 0; c < log->n_channels; c++) {
        rb_channel *a = &log->channels[c];
        const rb_channel *b = rb_log_find(next, a->name);
        size_t T = a->n_samples + b->n_samples, n = a->n_elements, bytes;
        if (!rb_size_mul(T, n, &bytes) || !rb_size_mul(bytes, sizeof(double), &bytes))
            return rb_err_set(err, RB_ENOMEM, "channel %s: too many samples", a->name);
        double *time = rb_realloc(a->time, (T ? T : 1) * sizeof(double));
        if (!time)
            return rb_err_set(err, RB_ENOMEM, "out of memory appending channel %s", a->name);
        a->time = time;
        double *data = rb_realloc(a->data, bytes ? bytes : 1);
        if (!data)
            return rb_err_set(err, RB_ENOMEM, "out of memory appending channel %s", a->name);
        a->data = data;
        memcpy(a->time + a->n_samples, b->time, b->n_samples * sizeof(double));
        memcpy(a->data + a->n_samples * n, b->data, b->n_samples * n * sizeof(double));
        a->n_samples = T;
    }
    /* What the session's files skipped, each entry once (the same entry is usually skipped in every file). */
    for (size_t i = 0; i < next->n_skipped; i++) {
        bool listed = false;
        for (size_t k = 0; k < log->n_skipped && !listed; k++)
            listed = strcmp(log->skipped[k].name, next->skipped[i].name) == 0;
        int rc = listed ? RB_OK : rb_log_note_skipped(log, next->skipped[i].name, next->skipped[i].reason, err);
        if (rc)
            return rc;
    }
    return RB_OK;
}
