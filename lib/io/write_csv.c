/*
 * CSV writer: `# key: value` lines for the attributes (insertion order; CR/LF in them become
 * spaces so each stays one line), a header row `time,channel:element [unit],...` (a one-element
 * channel whose element is named "0" is the bare `channel [unit]`; fields with
 * ',', '"', CR or LF quoted as in RFC 4180), then one row per sample with round-trip numbers
 * ("nan", "inf", "-inf" for non-finite values). Every channel must share the same timestamps.
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
            return rb_err_set(
                err, RB_EINPUT,
                "%s: channel %s has %zu samples, channel %s %zu: CSV output needs every channel on the "
                "same timestamps (resample onto a common clock first)",
                shown, ch->name, ch->n_samples, ref->name, ref->n_samples);
        for (size_t k = 0; k < ch->n_samples; k++)
            if (memcmp(&ch->time[k], &ref->time[k], sizeof(double)) != 0)
                return rb_err_set(
                    err, RB_EINPUT,
                    "%s: channel %s: sample %zu: timestamp %.17g differs from %.17g in channel %s: CSV "
                    "output needs every channel on the same timestamps (resample onto a common "
                    "clock first)",
                    shown, ch->name, k, ch->time[k], ref->time[k], ref->name);
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

static void put_header(FILE *f, const rb_log *log)
{
    for (size_t a = 0; a < log->n_attrs; a++) {
        fputs("# ", f);
        put_one_line(f, log->attrs[a].key);
        fputs(": ", f);
        put_one_line(f, log->attrs[a].value);
        fputc('\n', f);
    }
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
            if (ch->units[i][0]) {
                parts[n++] = " [";
                parts[n++] = ch->units[i];
                parts[n++] = "]";
            }
            put_field(f, parts, n);
        }
    }
    fputc('\n', f);
}

static void put_rows(FILE *f, const rb_log *log)
{
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

int rb_io_write_csv(const rb_log *log, const char *file, const char *shown, rb_err *err)
{
    int rc = check_common_clock(log, shown, err);
    if (rc)
        return rc;
    FILE *f = fopen(file, "w");
    if (!f)
        return rb_err_set(err, RB_EIO, "%s: cannot create: %s", shown, strerror(errno));
    put_header(f, log);
    put_rows(f, log);
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
