/*
 * CSV reader (format in io.h). Two passes over the file: the first counts the samples so every
 * channel is allocated once at its final size, the second parses the numbers straight into it.
 * Numbers are parsed under the C locale whatever the program's locale is (rb_c_locale_push, per
 * thread).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_internal.h"

typedef struct column {
    char *channel; /* owned */
    char *element; /* owned; NULL: "0" */
    char *unit;    /* owned; NULL: "" */
    char *header;  /* owned: the column's header text, for messages */
} column;

typedef struct csv {
    const char *path;
    rb_log *log;
    rb_err *err;
    FILE *f;
    char *line; /* getline's buffer (libc-allocated) */
    size_t line_cap;
    size_t line_no;
    char **fields; /* pointers into line */
    size_t n_fields, cap_fields;
    column *cols; /* cols[0] is the time column */
    size_t n_cols;
    size_t header_line;
} csv;

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

/* Next line into c->line without its end-of-line; false at end of file. */
static bool next_line(csv *c)
{
    ssize_t len = getline(&c->line, &c->line_cap, c->f);
    if (len < 0)
        return false;
    c->line_no++;
    while (len > 0 && (c->line[len - 1] == '\n' || c->line[len - 1] == '\r'))
        c->line[--len] = '\0';
    if (c->line_no == 1 && len >= 3 && memcmp(c->line, "\xEF\xBB\xBF", 3) == 0)
        memmove(c->line, c->line + 3, (size_t)len - 2);
    return true;
}

static bool is_blank(const char *s)
{
    return *s == '\0';
}

/* `# key: value` comment -> attribute; other comments are ignored. */
static int comment_attr(csv *c, char *text)
{
    char *colon = strchr(text, ':');
    if (!colon)
        return RB_OK;
    *colon = '\0';
    char *key = trim(text), *value = trim(colon + 1);
    if (!*key)
        return RB_OK;
    for (const char *k = key; *k; k++)
        if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') || strchr("_.-", *k)))
            return RB_OK; /* prose, not a key */
    int rc = rb_log_set_attr(c->log, key, value, c->err);
    return rc ? rb_err_prefix(c->err, "%s:%zu: ", c->path, c->line_no) : RB_OK;
}

/* Split c->line at commas, in place; "quoted, fields" with "" for a quote are unquoted. */
static int split(csv *c)
{
    c->n_fields = 0;
    char *r = c->line, *w = c->line;
    for (;;) {
        if (c->n_fields == c->cap_fields) {
            size_t cap = c->cap_fields ? c->cap_fields * 2 : 16;
            char **grown = rb_realloc(c->fields, cap * sizeof *grown);
            if (!grown)
                return rb_err_set(c->err, RB_ENOMEM, "%s: out of memory", c->path);
            c->fields = grown;
            c->cap_fields = cap;
        }
        c->fields[c->n_fields++] = w;
        while (*r == ' ' || *r == '\t')
            r++;
        if (*r == '"') {
            for (r++;; r++) {
                if (*r == '\0')
                    return rb_err_set(c->err, RB_EINPUT, "%s:%zu: unterminated quoted field", c->path, c->line_no);
                if (*r == '"' && r[1] == '"')
                    *w++ = *r++;
                else if (*r == '"')
                    break;
                else
                    *w++ = *r;
            }
            r++;
            while (*r == ' ' || *r == '\t')
                r++;
            if (*r != ',' && *r != '\0')
                return rb_err_set(c->err, RB_EINPUT, "%s:%zu: text after a quoted field", c->path, c->line_no);
        } else {
            while (*r != ',' && *r != '\0')
                *w++ = *r++;
        }
        bool more = *r == ',';
        *w++ = '\0';
        r++;
        if (!more)
            return RB_OK;
    }
}

/* "channel:element [unit]" (unit optional; no ':' -> a one-element channel named by the column). */
static int parse_column(csv *c, column *col, const char *text)
{
    char *copy = rb_strdup(text);
    if (!copy)
        return rb_err_set(c->err, RB_ENOMEM, "%s: out of memory", c->path);
    char *s = trim(copy), *unit = NULL;
    size_t n = strlen(s);
    char *open = strrchr(s, '[');
    if (n > 0 && s[n - 1] == ']' && open && open > s) {
        s[n - 1] = '\0';
        *open = '\0';
        unit = trim(open + 1);
        s = trim(s);
    }
    char *colon = strchr(s, ':');
    if (colon)
        *colon = '\0';
    col->header = rb_strdup(text);
    col->channel = rb_strdup(trim(s));
    col->element = colon ? rb_strdup(trim(colon + 1)) : NULL;
    col->unit = unit ? rb_strdup(unit) : NULL;
    bool ok = col->header && col->channel && (!colon || col->element) && (!unit || col->unit);
    rb_free(copy);
    if (!ok)
        return rb_err_set(c->err, RB_ENOMEM, "%s: out of memory", c->path);
    if (!col->channel[0])
        return rb_err_set(c->err, RB_EINPUT, "%s:%zu: column '%s' has no channel name", c->path, c->line_no, text);
    return RB_OK;
}

/* Skips comments (collecting their attributes when `attrs`) and blank lines; false at end of file. */
static int next_record(csv *c, bool attrs, bool *got)
{
    while ((*got = next_line(c))) {
        char *s = trim(c->line);
        if (is_blank(s))
            continue;
        if (*s != '#')
            return RB_OK;
        int rc = attrs ? comment_attr(c, s + 1) : RB_OK;
        if (rc)
            return rc;
    }
    return RB_OK;
}

static int read_header(csv *c)
{
    bool got;
    int rc = next_record(c, true, &got);
    if (rc)
        return rc;
    if (!got)
        return rb_err_set(c->err, RB_EINPUT, "%s: no header row", c->path);
    c->header_line = c->line_no;
    if ((rc = split(c)))
        return rc;
    if (c->n_fields < 2)
        return rb_err_set(c->err, RB_EINPUT, "%s:%zu: the header needs a time column and at least one more",
                          c->path, c->line_no);
    c->cols = rb_calloc(c->n_fields, sizeof *c->cols);
    if (!c->cols)
        return rb_err_set(c->err, RB_ENOMEM, "%s: out of memory", c->path);
    c->n_cols = c->n_fields;
    for (size_t k = 0; rc == RB_OK && k < c->n_cols; k++)
        rc = parse_column(c, &c->cols[k], c->fields[k]);
    return rc;
}

static int count_rows(csv *c, size_t *T)
{
    bool got;
    int rc;
    *T = 0;
    while ((rc = next_record(c, true, &got)) == RB_OK && got)
        (*T)++;
    if (rc == RB_OK && ferror(c->f))
        rc = rb_err_set(c->err, RB_EINPUT, "%s: read error", c->path);
    return rc;
}

/* One channel per run of consecutive columns with the same channel name. */
static int make_channels(csv *c, size_t T)
{
    int rc = RB_OK;
    for (size_t k = 1; rc == RB_OK && k < c->n_cols;) {
        size_t end = k + 1;
        while (end < c->n_cols && strcmp(c->cols[end].channel, c->cols[k].channel) == 0)
            end++;
        rb_channel *ch;
        rc = rb_log_add_channel(c->log, c->cols[k].channel, T, end - k, &ch, c->err);
        if (rc)
            return rb_err_prefix(c->err, "%s:%zu: ", c->path, c->header_line);
        for (size_t j = k; rc == RB_OK && j < end; j++) {
            if (c->cols[j].element)
                rc = rb_channel_set_name(ch, j - k, c->cols[j].element, c->err);
            if (rc == RB_OK && c->cols[j].unit)
                rc = rb_channel_set_unit(ch, j - k, c->cols[j].unit, c->err);
        }
        k = end;
    }
    return rc;
}

static int parse_number(csv *c, size_t col, const char *field, double *out)
{
    char *copy = (char *)field, *s = trim(copy), *end;
    if (!*s) {
        *out = NAN;
        return RB_OK;
    }
    *out = strtod(s, &end); /* under the C locale: rb_io_read_csv switched this thread to it */
    if (end == s || *end != '\0')
        return rb_err_set(c->err, RB_EINPUT, "%s:%zu: column '%s': not a number: '%s'", c->path, c->line_no,
                          c->cols[col].header, s);
    return RB_OK;
}

static int parse_rows(csv *c, size_t T)
{
    bool got;
    int rc = RB_OK;
    for (size_t t = 0; t < T; t++) {
        if ((rc = next_record(c, false, &got)))
            return rc;
        if (!got)
            return rb_err_set(c->err, RB_EINPUT, "%s: the file changed while being read", c->path);
        if ((rc = split(c)))
            return rc;
        if (c->n_fields != c->n_cols) {
            size_t k = c->n_fields < c->n_cols ? c->n_fields : c->n_cols - 1;
            return rb_err_set(c->err, RB_EINPUT, "%s:%zu: %zu fields, the header has %zu (column '%s' %s)", c->path,
                              c->line_no, c->n_fields, c->n_cols, c->cols[k].header,
                              c->n_fields < c->n_cols ? "missing" : "followed by extra fields");
        }
        double time;
        if ((rc = parse_number(c, 0, c->fields[0], &time)))
            return rc;
        size_t col = 1;
        for (size_t ch_i = 0; ch_i < c->log->n_channels; ch_i++) {
            rb_channel *ch = &c->log->channels[ch_i];
            ch->time[t] = time;
            for (size_t i = 0; i < ch->n_elements; i++, col++)
                if ((rc = parse_number(c, col, c->fields[col], &ch->data[t * ch->n_elements + i])))
                    return rc;
        }
    }
    return RB_OK;
}

int rb_io_read_csv(const char *path, rb_log *log, rb_err *err)
{
    csv c = {0};
    c.path = path;
    c.log = log;
    c.err = err;
    c.f = fopen(path, "r");
    if (!c.f)
        return rb_err_set(err, RB_ENOTFOUND, "%s: no such file", path);
    size_t T = 0;
    int rc = read_header(&c);
    if (rc == RB_OK)
        rc = count_rows(&c, &T);
    if (rc == RB_OK)
        rc = make_channels(&c, T);
    if (rc == RB_OK) {
        rewind(c.f);
        c.line_no = 0;
        bool got;
        rc = next_record(&c, false, &got); /* the header again */
    }
    if (rc == RB_OK) {
        /* strtod follows LC_NUMERIC: parse under "C" in this thread only, whatever the program set. */
        rb_locale_scope c_locale;
        if ((rc = rb_c_locale_push(&c_locale, err))) {
            rb_err_prefix(err, "%s: ", path);
        } else {
            rc = parse_rows(&c, T);
            rb_c_locale_pop(&c_locale);
        }
    }
    for (size_t k = 0; c.cols && k < c.n_cols; k++) {
        rb_free(c.cols[k].channel);
        rb_free(c.cols[k].element);
        rb_free(c.cols[k].unit);
        rb_free(c.cols[k].header);
    }
    rb_free(c.cols);
    rb_free(c.fields);
    free(c.line);
    fclose(c.f);
    return rc;
}
