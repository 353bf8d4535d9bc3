/*
 * CSV writer: `# key: value` lines for the attributes (insertion order; CR/LF in them become
 * spaces so each stays one line), a header row `time,channel:element [unit],...` (a one-element
 * channel whose element is named "0" is the bare `channel [unit]`; fields with
 * ',', '"', CR or LF quoted as in RFC 4180), then one row per sample with round-trip numbers
 * ("nan", "inf", "-inf" for non-finite values). Every channel must share the same timestamps.
 * Named arrays: see rb_io_write_arrays_csv below.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "io_internal.h"

/* Timestamps are compared bit for bit: the rows have one time column. */
static int check_common_clock(const rb_log *log, const char *shown, rb_err *err)
{
    if (log->n_channels == 0)
        return RB_OK;
    const rb_channel *ref = &log->channels[0];
    for (size_t c = 1; c < log->n_channels; c++) {
        const rb_channel *ch = &log->channels[c];
        if (ch->n_samples != ref->n_samples)
            return rb_err_set(err, RB_EINPUT,
                              "%s: channel %s has %zu samples, channel %s %zu: CSV output needs every channel on the "
                              "same timestamps (resample onto a common clock first)",
                              shown, ch->name, ch->n_samples, ref->name, ref->n_samples);
        for (size_t k = 0; k < ch->n_samples; k++)
            if (memcmp(&ch->time[k], &ref->time[k], sizeof(double)) != 0)
                return rb_err_set(err, RB_EINPUT,
                                  "%s: channel %s: sample %zu: timestamp %.17g differs from %.17g in channel %s: CSV "
                                  "output needs every channel on the same timestamps (resample onto a common "
                                  "clock first)",
                                  shown, ch->name, k, ch->time[k], ref->time[k], ref->name);
    }
    return RB_OK;
}

static bool has_edge_space(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && (strchr(" \t\r\n", s[0]) || strchr(" \t\r\n", s[n - 1]));
}

/* Names and units the reader would give back changed are refused: it trims spaces around a name, splits the
 * channel from the element at the first ':' and takes a final "[...]" as the unit. */
static int check_text(const rb_log *log, const char *shown, rb_err *err)
{
    static const char cannot[] = "(CSV cannot hold it)";
    for (size_t c = 0; c < log->n_channels; c++) {
        const rb_channel *ch = &log->channels[c];
        if (ch->n_elements == 0)
            return rb_err_set(err, RB_EINPUT, "%s: channel %s has no elements (CSV holds a channel as its columns)",
                              shown, ch->name);
        if (!ch->name[0] || strchr(ch->name, ':') || has_edge_space(ch->name))
            return rb_err_set(err, RB_EINPUT,
                              "%s: channel '%s': a name that is empty, holds ':' or starts or ends with "
                              "a space %s",
                              shown, ch->name, cannot);
        bool bare = ch->n_elements == 1 && strcmp(ch->element_names[0], "0") == 0;
        for (size_t i = 0; i < ch->n_elements; i++) {
            const char *el = ch->element_names[i], *unit = ch->units[i];
            if (!bare && (!el[0] || has_edge_space(el)))
                return rb_err_set(err, RB_EINPUT,
                                  "%s: channel %s: element '%s': a name that is empty or starts or ends "
                                  "with a space %s",
                                  shown, ch->name, el, cannot);
            if (strpbrk(unit, "[]") || has_edge_space(unit))
                return rb_err_set(err, RB_EINPUT,
                                  "%s: channel %s: element %s: unit '%s' holds '[' or ']' or starts or "
                                  "ends with a space %s",
                                  shown, ch->name, el, unit, cannot);
        }
    }
    return RB_OK;
}

static bool needs_quotes(const char *s) { return s && strpbrk(s, ",\"\r\n") != NULL; }

static void put_escaped(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
}

/* One header field made of `n` parts, quoted as a whole when any part needs it. */
static void put_field(FILE *f, const char *const *parts, size_t n)
{
    bool q = false;
    for (size_t k = 0; k < n; k++)
        q = q || needs_quotes(parts[k]);
    if (q)
        fputc('"', f);
    for (size_t k = 0; k < n; k++)
        put_escaped(f, parts[k]);
    if (q)
        fputc('"', f);
}

static void put_one_line(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
}

/* `# key: value` lines, in order. */
static void put_attrs(FILE *f, const rb_attr *attrs, size_t n)
{
    for (size_t a = 0; a < n; a++) {
        fputs("# ", f);
        put_one_line(f, attrs[a].key);
        fputs(": ", f);
        put_one_line(f, attrs[a].value);
        fputc('\n', f);
    }
}

static void put_header(FILE *f, const rb_log *log)
{
    put_attrs(f, log->attrs, log->n_attrs);
    fputs("time", f);
    for (size_t c = 0; c < log->n_channels; c++) {
        const rb_channel *ch = &log->channels[c];
        for (size_t i = 0; i < ch->n_elements; i++) {
            fputc(',', f);
            /* channel:element [unit]; a one-element channel with the default element name "0" is
             * written as the bare channel name, which the reader maps back to the same channel. */
            bool bare = ch->n_elements == 1 && strcmp(ch->element_names[0], "0") == 0;
            const char *parts[6];
            size_t n = 0;
            parts[n++] = ch->name;
            if (!bare) {
                parts[n++] = ":";
                parts[n++] = ch->element_names[i];
            }
            /* a name ending in "]" gets an empty unit, else the reader would take its end for one */
            size_t len = strlen(parts[n - 1]);
            if (ch->units[i][0] || (len > 0 && parts[n - 1][len - 1] == ']')) {
                parts[n++] = " [";
                parts[n++] = ch->units[i];
                parts[n++] = "]";
            }
            put_field(f, parts, n);
        }
    }
    fputc('\n', f);
}

static void put_log(FILE *f, const void *what)
{
    const rb_log *log = what;
    put_header(f, log);
    if (log->n_channels == 0)
        return;
    char buf[32];
    const rb_channel *ref = &log->channels[0];
    for (size_t k = 0; k < ref->n_samples && !ferror(f); k++) {
        fputs(rb_format_double(ref->time[k], buf), f);
        for (size_t c = 0; c < log->n_channels; c++) {
            const rb_channel *ch = &log->channels[c];
            const double *row = ch->data + k * ch->n_elements;
            for (size_t i = 0; i < ch->n_elements; i++) {
                fputc(',', f);
                fputs(rb_format_double(row[i], buf), f);
            }
        }
        fputc('\n', f);
    }
}

/* Create `file` and fill it with put(f, what); RB_EIO naming `shown` when stdio fails. */
static int write_text(const char *file, const char *shown, void (*put)(FILE *, const void *), const void *what,
                      rb_err *err)
{
    FILE *f = fopen(file, "w");
    if (!f)
        return rb_err_set(err, RB_EIO, "%s: cannot create: %s", shown, strerror(errno));
    put(f, what);
    int failed = ferror(f);
    int e = errno;
    if (fclose(f) != 0 && !failed) {
        failed = 1;
        e = errno;
    }
    if (failed)
        return rb_err_set(err, RB_EIO, "%s: cannot write: %s", shown, strerror(e));
    return RB_OK;
}

int rb_io_write_csv(const rb_log *log, const char *file, const char *shown, rb_err *err)
{
    int rc = check_text(log, shown, err);
    if (rc == RB_OK)
        rc = check_common_clock(log, shown, err);
    return rc ? rc : write_text(file, shown, put_log, log, err);
}

/* ---- a log written a block of rows at a time (a run in windows) ---------------------------------------------- */
struct rb_csv_stream {
    FILE *f;
    char *shown;
    size_t n_channels, *width;
    int failed, e; /* a stdio failure and its errno */
};

static void stream_free(rb_csv_stream *s)
{
    if (!s)
        return;
    if (s->f)
        fclose(s->f);
    rb_free(s->shown);
    rb_free(s->width);
    rb_free(s);
}

int rb_csv_stream_open(const rb_log *log, const char *file, const char *shown, rb_csv_stream **out, rb_err *err)
{
    if (log->n_channels == 0) /* write_as's checks, then rb_io_write_csv's */
        return rb_err_set(err, RB_EINPUT, "%s: no channels to write (an empty log reads back as an error)", shown);
    int rc = rb_io_check_element_names(log, shown, err);
    if (!rc)
        rc = check_text(log, shown, err);
    if (rc)
        return rc;
    rb_csv_stream *s = rb_calloc(1, sizeof *s);
    if (!s || !(s->shown = rb_strdup(shown)) || !(s->width = rb_calloc(log->n_channels, sizeof *s->width))) {
        stream_free(s);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    s->n_channels = log->n_channels;
    for (size_t c = 0; c < log->n_channels; c++)
        s->width[c] = log->channels[c].n_elements;
    if (!(s->f = fopen(file, "w"))) {
        rc = rb_err_set(err, RB_EIO, "%s: cannot create: %s", shown, strerror(errno));
        stream_free(s);
        return rc;
    }
    put_header(s->f, log);
    *out = s;
    return RB_OK;
}

void rb_csv_stream_rows(rb_csv_stream *s, const double *t, const double *const *data, size_t n)
{
    char buf[32];
    for (size_t k = 0; k < n && !s->failed; k++) { /* put_log's rows */
        fputs(rb_format_double(t[k], buf), s->f);
        for (size_t c = 0; c < s->n_channels; c++) {
            const double *row = data[c] + k * s->width[c];
            for (size_t i = 0; i < s->width[c]; i++) {
                fputc(',', s->f);
                fputs(rb_format_double(row[i], buf), s->f);
            }
        }
        fputc('\n', s->f);
        if (ferror(s->f))
            s->failed = 1, s->e = errno;
    }
}

void rb_csv_stream_abort(rb_csv_stream *s) { stream_free(s); }

int rb_csv_stream_close(rb_csv_stream *s, rb_err *err)
{
    if (!s)
        return RB_OK;
    int failed = s->failed || ferror(s->f), e = s->failed ? s->e : errno;
    if (fclose(s->f) != 0 && !failed)
        failed = 1, e = errno;
    s->f = NULL;
    int rc = failed ? rb_err_set(err, RB_EIO, "%s: cannot write: %s", s->shown, strerror(e)) : RB_OK;
    stream_free(s);
    return rc;
}

/* ---- named arrays --------------------------------------------------------------------------------
 * `# key: value` lines, a header of columns `name` (1-D), `name:j` (N x a) or `name:j:k` (N x a x b,
 * k fastest), then one row per state with round-trip numbers. Every array must have the same number of
 * rows and there must be at least one column; names were checked by rb_arrays_write (no quoting is
 * ever needed). */

static void put_arrays(FILE *f, const void *what)
{
    const rb_arrays *a = what;
    char buf[32];
    put_attrs(f, a->attrs, a->n_attrs);
    bool first = true;
    for (size_t k = 0; k < a->n; k++) {
        const rb_array *arr = &a->items[k];
        for (size_t j = 0; j < arr->dims[1]; j++)
            for (size_t l = 0; l < arr->dims[2]; l++) {
                fputs(first ? "" : ",", f);
                first = false;
                if (arr->ndim == 1)
                    fputs(arr->name, f);
                else if (arr->ndim == 2)
                    fprintf(f, "%s:%zu", arr->name, j);
                else
                    fprintf(f, "%s:%zu:%zu", arr->name, j, l);
            }
    }
    fputc('\n', f);
    size_t N = a->items[0].dims[0];
    for (size_t i = 0; i < N && !ferror(f); i++) {
        first = true;
        for (size_t k = 0; k < a->n; k++) {
            const rb_array *arr = &a->items[k];
            size_t row = arr->dims[1] * arr->dims[2];
            for (size_t c = 0; c < row; c++) {
                fputs(first ? "" : ",", f);
                first = false;
                fputs(rb_format_double(arr->data[i * row + c], buf), f);
            }
        }
        fputc('\n', f);
    }
}

int rb_io_write_arrays_csv(const rb_arrays *a, const char *file, const char *shown, rb_err *err)
{
    size_t columns = 0;
    for (size_t k = 0; k < a->n; k++) {
        const rb_array *arr = &a->items[k];
        if (arr->dims[0] != a->items[0].dims[0])
            return rb_err_set(err, RB_EINPUT,
                              "%s: array %s has %zu rows, array %s %zu: CSV output needs every "
                              "array with the same number of rows",
                              shown, arr->name, arr->dims[0], a->items[0].name, a->items[0].dims[0]);
        columns += arr->dims[1] * arr->dims[2];
    }
    if (columns == 0)
        return rb_err_set(err, RB_EINPUT, "%s: no columns to write (CSV output needs an array with elements)", shown);
    return write_text(file, shown, put_arrays, a, err);
}
