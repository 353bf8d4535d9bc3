/*
 * CSV readers of logs and of named arrays (formats in io.h). Two passes over the file: the first
 * counts the samples so every channel (array) is allocated once at its final size, the second parses
 * the numbers straight into it.
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
    const char *what;  /* "a log file" or "an array file", for messages */
    rb_log *log;       /* the log being read (NULL for arrays) */
    rb_io_attrs attrs; /* where `# key: value` comments go */
    rb_err *err;
    FILE *f;
    char *buf; /* READ_BYTES read ahead; buf_pos..buf_len not yet used */
    size_t buf_pos, buf_len;
    char *line; /* the current record, NUL-terminated, without its line end */
    size_t line_len, line_cap;
    size_t line_no; /* the physical line the record starts on */
    size_t phys_no; /* physical lines read so far */
    char **fields;  /* pointers into line */
    size_t n_fields, cap_fields;
    column *cols;    /* cols[0] is the time column */
    size_t n_cols;   /* named columns: the header without its empty trailing fields */
    size_t n_header; /* fields of the header row, empty trailing ones included */
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

enum { READ_BYTES = 64 * 1024 };

static int append(csv *c, const char *bytes, size_t n)
{
    if (c->line_len + n >= c->line_cap) {
        size_t cap = c->line_cap ? c->line_cap : 256;
        while (c->line_len + n >= cap)
            cap *= 2;
        char *grown = rb_realloc(c->line, cap);
        if (!grown)
            return rb_err_set(c->err, RB_ENOMEM, "%s: out of memory", c->path);
        c->line = grown;
        c->line_cap = cap;
    }
    memcpy(c->line + c->line_len, bytes, n);
    c->line_len += n;
    return RB_OK;
}

/* More bytes into c->buf; false at the end of the file (or on a read error: ferror tells). */
static bool refill(csv *c)
{
    c->buf_pos = 0;
    c->buf_len = fread(c->buf, 1, READ_BYTES, c->f);
    return c->buf_len > 0;
}

/* The quoting state of a record while it is read: a line end inside a quoted field is part of the field
 * (RFC 4180), so the record goes on. Mirrors split(). */
typedef enum quoting { FIELD_START, UNQUOTED, QUOTED, QUOTE_SEEN } quoting;

static quoting quote_step(quoting q, char ch)
{
    switch (q) {
    case FIELD_START: return ch == '"' ? QUOTED : ch == ' ' || ch == '\t' || ch == ',' ? FIELD_START : UNQUOTED;
    case UNQUOTED: return ch == ',' ? FIELD_START : UNQUOTED;
    case QUOTED: return ch == '"' ? QUOTE_SEEN : QUOTED;
    case QUOTE_SEEN: return ch == '"' ? QUOTED : ch == ',' ? FIELD_START : UNQUOTED;
    }
    return UNQUOTED;
}

/* One physical line appended to c->line, its line end (LF, CRLF or a lone CR, as old Mac files have) included;
 * *got false at the end of the file. A NUL byte is an error: the text after it would be lost. */
static int read_physical(csv *c, quoting *q, bool *got)
{
    int rc = RB_OK;
    size_t start = c->line_len;
    *got = false;
    while (rc == RB_OK && (c->buf_pos < c->buf_len || refill(c))) {
        *got = true;
        const char *b = c->buf + c->buf_pos, *e = c->buf + c->buf_len, *p = b;
        quoting s = *q;
        for (; p < e && *p != '\n' && *p != '\r' && *p != '\0'; p++)
            s = quote_step(s, *p);
        *q = s;
        c->buf_pos += (size_t)(p - b);
        if ((rc = append(c, b, (size_t)(p - b))) || p == e)
            continue;
        char end = *p;
        c->buf_pos++;
        if (end == '\0')
            return rb_err_set(c->err, RB_EINPUT, "%s:%zu: a NUL byte: not text", c->path, c->phys_no + 1);
        rc = append(c, &end, 1);
        if (rc == RB_OK && end == '\r' && (c->buf_pos < c->buf_len || refill(c)) && c->buf[c->buf_pos] == '\n') {
            c->buf_pos++;
            rc = append(c, "\n", 1);
        }
        break;
    }
    if (rc)
        return rc;
    if (ferror(c->f))
        return rb_err_set(c->err, RB_EINPUT, "%s: read error", c->path);
    if (*got && ++c->phys_no == 1 && c->line_len - start >= 3 && memcmp(c->line + start, "\xEF\xBB\xBF", 3) == 0) {
        memmove(c->line + start, c->line + start + 3, c->line_len - start - 3);
        c->line_len -= 3;
    }
    return RB_OK;
}

/* Next record into c->line without its line end; *got false at the end of the file. A quoted field may span
 * lines; comment lines never do. */
static int next_line(csv *c, bool *got)
{
    c->line_len = 0;
    quoting q = FIELD_START;
    int rc = read_physical(c, &q, got);
    if (rc || !*got)
        return rc;
    c->line_no = c->phys_no;
    size_t k = 0;
    while (k < c->line_len && (c->line[k] == ' ' || c->line[k] == '\t'))
        k++;
    bool comment = k < c->line_len && c->line[k] == '#', more = true;
    while (!comment && q == QUOTED && more && rc == RB_OK)
        rc = read_physical(c, &q, &more);
    if (rc)
        return rc;
    while (c->line_len > 0 && (c->line[c->line_len - 1] == '\n' || c->line[c->line_len - 1] == '\r'))
        c->line_len--;
    c->line[c->line_len] = '\0'; /* append always leaves room for it */
    return RB_OK;
}

static bool is_blank(const char *s) { return *s == '\0'; }

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
    size_t units;
    if (!rb_io_utf8_to_utf16(value, NULL, &units))
        return rb_err_set(c->err, RB_EINPUT, "%s:%zu: attribute %s: the value is not valid UTF-8", c->path, c->line_no,
                          key);
    int rc = rb_io_attrs_set(c->attrs, key, value, c->err);
    return rc ? rb_err_prefix(c->err, rc, "%s:%zu: ", c->path, c->line_no) : RB_OK;
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

/* Column k (1-based, for messages) "channel:element [unit]" (unit optional; no ':' -> a one-element channel named
 * by the column). */
static int parse_column(csv *c, column *col, size_t k, const char *text)
{
    size_t units;
    if (!rb_io_utf8_to_utf16(text, NULL, &units))
        return rb_err_set(c->err, RB_EINPUT, "%s:%zu: column %zu: the name is not valid UTF-8", c->path, c->line_no, k);
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
        return rb_err_set(c->err, RB_EINPUT, "%s:%zu: column %zu ('%s') has no channel name", c->path, c->line_no, k,
                          text);
    if (col->element && !col->element[0])
        return rb_err_set(c->err, RB_EINPUT, "%s:%zu: column %zu ('%s') has no element name after ':'", c->path,
                          c->line_no, k, text);
    return RB_OK;
}

static bool is_empty_field(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return *s == '\0';
}

/* Columns i < j (0-based) of one channel clash when they name the same element, or when either is bare (a bare
 * column is a whole one-element channel): binding an element by name would be ambiguous. */
static int check_pair(csv *c, size_t i, size_t j)
{
    const column *a = &c->cols[i], *b = &c->cols[j];
    if (!a->element && !b->element)
        return rb_err_set(c->err, RB_EINPUT, "%s:%zu: columns %zu and %zu are both channel %s", c->path, c->header_line,
                          i + 1, j + 1, a->channel);
    if (!a->element || !b->element)
        return rb_err_set(c->err, RB_EINPUT,
                          "%s:%zu: columns %zu and %zu: channel %s has a column without ':' (a one-element channel) "
                          "and another column",
                          c->path, c->header_line, i + 1, j + 1, a->channel);
    if (strcmp(a->element, b->element) == 0)
        return rb_err_set(c->err, RB_EINPUT, "%s:%zu: columns %zu and %zu: channel %s has element %s twice", c->path,
                          c->header_line, i + 1, j + 1, a->channel, a->element);
    return RB_OK;
}

static int cmp_col(const void *pa, const void *pb)
{
    const column *a = *(const column *const *)pa, *b = *(const column *const *)pb;
    int d = strcmp(a->channel, b->channel);
    if (d == 0 && (!a->element || !b->element))
        d = (b->element == NULL) - (a->element == NULL); /* bare first */
    else if (d == 0)
        d = strcmp(a->element, b->element);
    return d ? d : (a > b) - (a < b);
}

/* Every channel's columns are consecutive and hold distinct elements; of several clashes, the one completed first
 * in column order is named. Sorting keeps wide headers fast. */
static int check_columns(csv *c)
{
    size_t n = c->n_cols - 1, best_i = 0, best_j = SIZE_MAX;
    bool apart = false;
    const column **by = rb_malloc((n ? n : 1) * sizeof *by);
    size_t *group = rb_malloc((n ? n : 1) * sizeof *group), *first = rb_malloc((n ? n : 1) * sizeof *first);
    size_t *last = rb_malloc((n ? n : 1) * sizeof *last);
    int rc = by && group && first && last ? RB_OK : rb_err_set(c->err, RB_ENOMEM, "%s: out of memory", c->path);
    for (size_t k = 0; rc == RB_OK && k < n; k++)
        by[k] = &c->cols[k + 1];
    if (rc == RB_OK)
        qsort(by, n, sizeof *by, cmp_col);
    for (size_t g = 0, k = 0; rc == RB_OK && k < n; k++) { /* group ids by channel; clashes inside a group */
        size_t idx = (size_t)(by[k] - c->cols);
        bool same = k > 0 && strcmp(by[k - 1]->channel, by[k]->channel) == 0;
        g = same ? g : k;
        group[idx - 1] = g;
        first[k] = last[k] = SIZE_MAX;
        /* a bare column clashes with every other column of its channel (it sorts first), equal elements meet */
        size_t other = k == 0 ? 0 : (size_t)((by[g]->element ? by[k - 1] : by[g]) - c->cols);
        size_t i = other < idx ? other : idx, j = other < idx ? idx : other;
        bool clash = same && (!by[g]->element || strcmp(by[k - 1]->element, by[k]->element) == 0);
        if (clash && j < best_j) {
            best_i = i;
            best_j = j;
        }
    }
    for (size_t k = 1; rc == RB_OK && k <= n; k++) { /* in column order: a channel met again after another one */
        size_t g = group[k - 1];
        if (first[g] != SIZE_MAX && last[g] != k - 1 && k < best_j) {
            best_i = first[g];
            best_j = k;
            apart = true;
        }
        if (first[g] == SIZE_MAX)
            first[g] = k;
        last[g] = k;
    }
    rb_free(by);
    rb_free(group);
    rb_free(first);
    rb_free(last);
    if (rc || best_j == SIZE_MAX)
        return rc;
    if (apart)
        return rb_err_set(c->err, RB_EINPUT,
                          "%s:%zu: channel %s appears twice: columns %zu and %zu (the columns of a channel must be "
                          "together)",
                          c->path, c->header_line, c->cols[best_j].channel, best_i + 1, best_j + 1);
    return check_pair(c, best_i, best_j);
}

/* Skips comments (collecting their attributes when `attrs`) and blank lines; false at end of file. */
static int next_record(csv *c, bool attrs, bool *got)
{
    int rc;
    while ((rc = next_line(c, got)) == RB_OK && *got) {
        char *s = trim(c->line);
        if (is_blank(s))
            continue;
        if (*s != '#')
            return RB_OK;
        if (attrs && (rc = comment_attr(c, s + 1)))
            return rc;
    }
    return rc;
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
    /* Spreadsheets end rows with commas: empty trailing fields are no columns. */
    c->n_header = c->n_fields;
    c->n_cols = c->n_fields;
    while (c->n_cols > 1 && is_empty_field(c->fields[c->n_cols - 1]))
        c->n_cols--;
    if (c->n_cols < 2)
        return rb_err_set(c->err, RB_EINPUT, "%s:%zu: the header needs a time column and at least one more", c->path,
                          c->line_no);
    for (size_t k = 1; k < c->n_cols; k++)
        if (is_empty_field(c->fields[k]))
            return rb_err_set(c->err, RB_EINPUT, "%s:%zu: column %zu has no name", c->path, c->line_no, k + 1);
    c->cols = rb_calloc(c->n_cols, sizeof *c->cols);
    if (!c->cols)
        return rb_err_set(c->err, RB_ENOMEM, "%s: out of memory", c->path);
    for (size_t k = 0; rc == RB_OK && k < c->n_cols; k++)
        rc = parse_column(c, &c->cols[k], k + 1, c->fields[k]);
    return rc ? rc : check_columns(c);
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
            return rb_err_prefix(c->err, rc, "%s:%zu: ", c->path, c->header_line);
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

/* The next data row, split into as many fields as the header has columns. */
static int next_row(csv *c)
{
    bool got;
    int rc = next_record(c, false, &got);
    if (rc)
        return rc;
    if (!got)
        return rb_err_set(c->err, RB_EINPUT, "%s: the file changed while being read", c->path);
    if ((rc = split(c)))
        return rc;
    /* Fields past the named columns (trailing commas) must be empty: a value there would be dropped. */
    for (; c->n_fields > c->n_cols && is_empty_field(c->fields[c->n_fields - 1]); c->n_fields--)
        ;
    if (c->n_fields > c->n_cols && c->n_cols < c->n_header)
        return rb_err_set(c->err, RB_EINPUT, "%s:%zu: column %zu has no name but holds '%s'", c->path, c->line_no,
                          c->n_cols + 1, c->fields[c->n_cols]);
    if (c->n_fields != c->n_cols) {
        size_t k = c->n_fields < c->n_cols ? c->n_fields : c->n_cols - 1;
        return rb_err_set(c->err, RB_EINPUT, "%s:%zu: %zu fields, the header has %zu (column '%s' %s)", c->path,
                          c->line_no, c->n_fields, c->n_cols, c->cols[k].header,
                          c->n_fields < c->n_cols ? "missing" : "followed by extra fields");
    }
    return RB_OK;
}

static int parse_rows(csv *c, const void *ctx, size_t T)
{
    (void)ctx;
    int rc = RB_OK;
    for (size_t t = 0; t < T; t++) {
        if ((rc = next_row(c)))
            return rc;
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

/* ---- the file ---------------------------------------------------------------------------------- */

static int csv_open(csv *c)
{
    int rc = rb_file_open_regular(c->path, c->what, &c->f, NULL, c->err);
    if (rc == RB_OK && !(c->buf = rb_malloc(READ_BYTES)))
        rc = rb_err_set(c->err, RB_ENOMEM, "%s: out of memory", c->path);
    return rc;
}

static void csv_close(csv *c)
{
    for (size_t k = 0; c->cols && k < c->n_cols; k++) {
        rb_free(c->cols[k].channel);
        rb_free(c->cols[k].element);
        rb_free(c->cols[k].unit);
        rb_free(c->cols[k].header);
    }
    rb_free(c->cols);
    rb_free(c->fields);
    rb_free(c->line);
    rb_free(c->buf);
    if (c->f)
        fclose(c->f);
}

/* Back to the first record (the header, known by now), then parse(c, ctx, rows) under the C locale:
 * strtod follows LC_NUMERIC, so the numbers are parsed under "C" in this thread only, whatever the
 * program set. */
static int parse_again(csv *c, int (*parse)(csv *, const void *, size_t), const void *ctx, size_t rows)
{
    rewind(c->f);
    c->line_no = c->phys_no = c->buf_pos = c->buf_len = 0;
    bool got;
    int rc = next_record(c, false, &got); /* the header again */
    if (rc)
        return rc;
    rb_locale_scope c_locale;
    if ((rc = rb_c_locale_push(&c_locale, c->err)))
        return rb_err_prefix(c->err, rc, "%s: ", c->path);
    rc = parse(c, ctx, rows);
    rb_c_locale_pop(&c_locale);
    return rc;
}

int rb_io_read_csv(const char *path, rb_log *log, rb_err *err)
{
    csv c = {.path = path, .what = "a log file", .log = log, .attrs = RB_IO_ATTRS(log), .err = err};
    int rc = csv_open(&c);
    size_t T = 0;
    if (rc == RB_OK)
        rc = read_header(&c);
    if (rc == RB_OK)
        rc = count_rows(&c, &T);
    if (rc == RB_OK)
        rc = make_channels(&c, T);
    if (rc == RB_OK)
        rc = parse_again(&c, parse_rows, NULL, T);
    csv_close(&c);
    return rc;
}

/* ---- named arrays ------------------------------------------------------------------------------
 * The header's columns are `name`, `name:j` or `name:j:k` (io.h); an array's columns are consecutive,
 * in any order, and cover its indices exactly once: `name:j` for j < a, `name:j:k` for j < a, k < b. */

typedef struct array_cols {
    rb_arrays *a;
    size_t *array;  /* per column: index of its array in a */
    size_t *offset; /* per column: offset of its value in a row of its array */
} array_cols;

/* Header row into c->cols[k].header (trimmed), each parsed as a column: name_len, n_idx, idx. */
static int read_array_header(csv *c, size_t **name_len, size_t **n_idx, size_t (**idx)[2])
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
    c->n_cols = c->n_fields;
    c->cols = rb_calloc(c->n_cols, sizeof *c->cols);
    *name_len = rb_calloc(c->n_cols, sizeof **name_len);
    *n_idx = rb_calloc(c->n_cols, sizeof **n_idx);
    *idx = rb_calloc(c->n_cols, sizeof **idx);
    if (!c->cols || !*name_len || !*n_idx || !*idx)
        return rb_err_set(c->err, RB_ENOMEM, "%s: out of memory", c->path);
    for (size_t k = 0; k < c->n_cols; k++) {
        if (!(c->cols[k].header = rb_strdup(trim(c->fields[k]))))
            return rb_err_set(c->err, RB_ENOMEM, "%s: out of memory", c->path);
        if (!rb_io_array_column(c->cols[k].header, &(*name_len)[k], &(*n_idx)[k], (*idx)[k]))
            return rb_err_set(c->err, RB_EINPUT, "%s:%zu: column '%s' is not `name`, `name:j` or `name:j:k`", c->path,
                              c->line_no, c->cols[k].header);
    }
    return RB_OK;
}

/* Columns first..end-1 are array `name`: its size (N rows), and each column's offset in a row. */
static int array_run(csv *c, const char *name, size_t first, size_t end, size_t N, const size_t *n_idx,
                     size_t (*idx)[2], size_t dims[3], array_cols *ac)
{
    size_t count = 0, n = end - first, n_dims = n_idx[first];
    dims[0] = N;
    dims[1] = dims[2] = 1;
    for (size_t j = first; j < end; j++) {
        if (n_idx[j] != n_idx[first])
            return rb_err_set(c->err, RB_EINPUT, "%s:%zu: column '%s': array %s has columns with %zu and %zu indices",
                              c->path, c->header_line, c->cols[j].header, name, n_idx[first], n_idx[j]);
        for (size_t d = 0; d < n_idx[j]; d++)
            if (idx[j][d] >= dims[d + 1])
                dims[d + 1] = idx[j][d] + 1;
    }
    /* Fewer index pairs than columns: one repeats, as the check below finds. More: some are missing. */
    if (!rb_size_mul(dims[1], dims[2], &count) || count > n) {
        char last[64];
        if (n_dims == 1)
            snprintf(last, sizeof last, "%zu", dims[1] - 1);
        else
            snprintf(last, sizeof last, "%zu:%zu", dims[1] - 1, dims[2] - 1);
        return rb_err_set(c->err, RB_EINPUT,
                          "%s:%zu: array %s: %zu columns, but its indices up to %s:%s need "
                          "%zu x %zu",
                          c->path, c->header_line, name, n, name, last, dims[1], dims[2]);
    }
    unsigned char *seen = rb_calloc(count, 1);
    if (!seen)
        return rb_err_set(c->err, RB_ENOMEM, "%s: out of memory", c->path);
    int rc = RB_OK;
    for (size_t j = first; rc == RB_OK && j < end; j++) {
        size_t off = n_idx[j] == 0 ? 0 : n_idx[j] == 1 ? idx[j][0] : idx[j][0] * dims[2] + idx[j][1];
        if (seen[off]++)
            rc = rb_err_set(c->err, RB_EINPUT, "%s:%zu: column '%s' appears twice", c->path, c->header_line,
                            c->cols[j].header);
        ac->offset[j] = off;
        ac->array[j] = ac->a->n;
    }
    rb_free(seen);
    return rc;
}

/* One array, N rows, per run of consecutive columns with the same name. */
static int make_arrays(csv *c, size_t N, const size_t *name_len, const size_t *n_idx, size_t (*idx)[2], array_cols *ac)
{
    for (size_t k = 0; k < c->n_cols;) {
        const char *head = c->cols[k].header;
        size_t end = k + 1, dims[3];
        while (end < c->n_cols && name_len[end] == name_len[k] && memcmp(c->cols[end].header, head, name_len[k]) == 0)
            end++;
        char *name = rb_strndup(head, name_len[k]);
        if (!name)
            return rb_err_set(c->err, RB_ENOMEM, "%s: out of memory", c->path);
        int rc = RB_OK;
        if (rb_arrays_find(ac->a, name))
            rc = rb_err_set(c->err, RB_EINPUT, "%s:%zu: column '%s': the columns of array %s are not together", c->path,
                            c->header_line, head, name);
        if (rc == RB_OK)
            rc = array_run(c, name, k, end, N, n_idx, idx, dims, ac);
        if (rc == RB_OK && (rc = rb_arrays_add(ac->a, name, n_idx[k] + 1, dims, NULL, c->err)))
            rb_err_prefix(c->err, rc, "%s:%zu: ", c->path, c->header_line);
        rb_free(name);
        if (rc)
            return rc;
        k = end;
    }
    return RB_OK;
}

static int parse_array_rows(csv *c, const void *ctx, size_t N)
{
    const array_cols *ac = ctx;
    for (size_t i = 0; i < N; i++) {
        int rc = next_row(c);
        for (size_t k = 0; rc == RB_OK && k < c->n_cols; k++) {
            const rb_array *arr = &ac->a->items[ac->array[k]];
            rc = parse_number(c, k, c->fields[k], &arr->data[i * arr->dims[1] * arr->dims[2] + ac->offset[k]]);
        }
        if (rc)
            return rc;
    }
    return RB_OK;
}

int rb_io_read_arrays_csv(const char *path, rb_arrays *a, rb_err *err)
{
    csv c = {.path = path, .what = "an array file", .attrs = RB_IO_ATTRS(a), .err = err};
    size_t *name_len = NULL, *n_idx = NULL, (*idx)[2] = NULL, N = 0;
    array_cols ac = {a, NULL, NULL};
    int rc = csv_open(&c);
    if (rc == RB_OK)
        rc = read_array_header(&c, &name_len, &n_idx, &idx);
    if (rc == RB_OK) {
        ac.array = rb_calloc(c.n_cols, sizeof *ac.array);
        ac.offset = rb_calloc(c.n_cols, sizeof *ac.offset);
        if (!ac.array || !ac.offset)
            rc = rb_err_set(err, RB_ENOMEM, "%s: out of memory", path);
    }
    if (rc == RB_OK)
        rc = count_rows(&c, &N);
    if (rc == RB_OK)
        rc = make_arrays(&c, N, name_len, n_idx, idx, &ac);
    if (rc == RB_OK)
        rc = parse_again(&c, parse_array_rows, &ac, N);
    rb_free(name_len);
    rb_free(n_idx);
    rb_free(idx);
    rb_free(ac.array);
    rb_free(ac.offset);
    csv_close(&c);
    return rc;
}
