/* What the readers and writers of lib/io share: shapes (plain layouts, transposes, MATLAB's reversed axes), names
 * and paths, UTF-8 / UTF-16 text and the checks a written name must pass. No reader, writer or dispatch here. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_internal.h"

#define MATLAB_NAME_MAX 63

const char *const rb_io_time_names[3] = {"time", "t", "timestamps"};

bool rb_io_plain_shape(size_t rows, size_t cols, size_t T, size_t *n, bool *transposed)
{
    if (rows == T) {
        *n = cols;
        *transposed = false;
        return cols > 0;
    }
    if (cols == T) {
        *n = rows;
        *transposed = true;
        return rows > 0;
    }
    return false;
}

int rb_io_skip(rb_log *log, const char *path, const char *name, const char *reason, rb_err *err)
{
    int rc = rb_log_note_skipped(log, name, reason, err);
    return rc ? rb_err_prefix(err, rc, "%s: ", path) : RB_OK;
}

int rb_io_skip_plain(rb_log *log, const char *path, const char *name, int rank, size_t rows, size_t cols, size_t T,
                     rb_err *err)
{
    char reason[160];
    if (rank < 0)
        snprintf(reason, sizeof reason, "not a real numeric matrix");
    else if (rank > 2)
        snprintf(reason, sizeof reason, "%d dimensions, not a matrix", rank);
    else if ((rows == T && cols == 0) || (cols == T && rows == 0))
        snprintf(reason, sizeof reason, "zero elements (%zu x %zu)", rows, cols);
    else
        snprintf(reason, sizeof reason, "%zu x %zu, but the time vector has %zu samples", rows, cols, T);
    return rb_io_skip(log, path, name, reason, err);
}

void rb_io_transpose(double *dst, const double *src, size_t rows, size_t cols)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            dst[c * rows + r] = src[r * cols + c];
}

void rb_io_reverse_axes(double *dst, const double *src, size_t ndim, const size_t *dims)
{
    if (ndim == 2) {
        rb_io_transpose(dst, src, dims[0], dims[1]);
        return;
    }
    size_t d0 = dims[0], d1 = ndim > 1 ? dims[1] : 1, d2 = ndim > 2 ? dims[2] : 1;
    for (size_t i = 0; i < d0; i++)
        for (size_t j = 0; j < d1; j++)
            for (size_t k = 0; k < d2; k++)
                dst[(k * d1 + j) * d0 + i] = src[(i * d1 + j) * d2 + k];
}

char *rb_io_join_path(const char *prefix, const char *name)
{
    if (!prefix || !*prefix)
        return rb_strdup(name);
    return rb_asprintf("%s/%s", prefix, name);
}

char *rb_io_join_strings(char *const *items, size_t n, char sep)
{
    size_t len = 1;
    for (size_t k = 0; k < n; k++)
        len += strlen(items[k]) + 1;
    char *joined = rb_malloc(len), *p = joined;
    if (!joined)
        return NULL;
    for (size_t k = 0; k < n; k++) {
        if (k)
            *p++ = sep;
        size_t item_len = strlen(items[k]);
        memcpy(p, items[k], item_len);
        p += item_len;
    }
    *p = '\0';
    return joined;
}

size_t rb_io_utf8_decode(const uint8_t *b, size_t n, uint32_t *cp)
{
    size_t len = b[0] < 0x80             ? 1
                 : (b[0] & 0xE0) == 0xC0 ? 2
                 : (b[0] & 0xF0) == 0xE0 ? 3
                 : (b[0] & 0xF8) == 0xF0 ? 4
                                         : 0;
    if (len == 0 || len > n)
        return 0;
    uint32_t c = len == 1 ? b[0] : (uint32_t)(b[0] & (0x7F >> len));
    for (size_t k = 1; k < len; k++) {
        if ((b[k] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (b[k] & 0x3Fu);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000}; /* shorter forms are overlong */
    if (c < min[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return len;
}

static size_t put_utf8(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Room for the UTF-8 text of n code units of at most max_bytes bytes each, plus the NUL. */
static char *utf8_buffer(size_t n, size_t max_bytes)
{
    size_t cap;
    if (!rb_size_mul(n, max_bytes, &cap) || cap == SIZE_MAX)
        return NULL;
    return rb_malloc(cap + 1);
}

char *rb_io_utf16_to_utf8(const uint16_t *codes, size_t n)
{
    char *s = utf8_buffer(n, 3), *p = s; /* a UTF-16 unit never takes more than 3 UTF-8 bytes */
    if (!s)
        return NULL;
    for (size_t k = 0; k < n; k++) {
        uint32_t cp = codes[k];
        if (cp == 0)
            continue;
        if (cp >= 0xD800 && cp <= 0xDBFF && k + 1 < n && codes[k + 1] >= 0xDC00 && codes[k + 1] <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (codes[k + 1] - 0xDC00u);
            k++;
        } else if (cp >= 0xD800 && cp <= 0xDFFF) {
            cp = 0xFFFD;
        }
        p += put_utf8(p, cp);
    }
    *p = '\0';
    return s;
}

char *rb_io_bytes_to_utf8(const uint8_t *bytes, size_t n)
{
    bool utf8 = true;
    for (size_t k = 0; k < n && utf8;) {
        uint32_t cp;
        size_t len = rb_io_utf8_decode(bytes + k, n - k, &cp);
        utf8 = len > 0;
        k += len;
    }
    char *s = utf8_buffer(n, 2), *p = s; /* Latin-1 takes at most 2 UTF-8 bytes a character */
    if (!s)
        return NULL;
    for (size_t k = 0; k < n; k++) {
        if (bytes[k] == 0)
            continue;
        if (utf8)
            *p++ = (char)bytes[k];
        else
            p += put_utf8(p, bytes[k]);
    }
    *p = '\0';
    return s;
}

bool rb_io_array_column(const char *field, size_t *name_len, size_t *n_idx, size_t idx[2])
{
    const unsigned char *p = (const unsigned char *)field;
    size_t len = 0;
    while (p[len] > 0x20 && p[len] != 0x7F && p[len] != ',' && p[len] != '"' && p[len] != ':')
        len++;
    if (len == 0 || p[0] == '#')
        return false;
    *name_len = len;
    *n_idx = 0;
    p += len;
    while (*p == ':' && *n_idx < 2) {
        p++;
        size_t v = 0, digits = 0;
        for (; *p >= '0' && *p <= '9'; p++, digits++) {
            if (v > (SIZE_MAX - 9) / 10)
                return false;
            v = v * 10 + (size_t)(*p - '0');
        }
        if (digits == 0)
            return false;
        idx[(*n_idx)++] = v;
    }
    return *p == '\0';
}

bool rb_io_utf8_to_utf16(const char *s, uint16_t *out, size_t *n_units)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t left = strlen(s), n = 0;
    while (left > 0) {
        uint32_t cp;
        size_t len = rb_io_utf8_decode(p, left, &cp);
        if (len == 0)
            return false;
        p += len;
        left -= len;
        if (cp >= 0x10000) {
            if (out) {
                out[n] = (uint16_t)(0xD800 + ((cp - 0x10000) >> 10));
                out[n + 1] = (uint16_t)(0xDC00 + ((cp - 0x10000) & 0x3FF));
            }
            n += 2;
        } else {
            if (out)
                out[n] = (uint16_t)cp;
            n++;
        }
    }
    *n_units = n;
    return true;
}

static int check_one(const char *s, const char *shown, const char *channel, const char *what, size_t i, rb_err *err)
{
    size_t n;
    if (rb_io_utf8_to_utf16(s, NULL, &n))
        return RB_OK;
    if (channel)
        return rb_err_set(err, RB_EINPUT, "%s: channel %s: element %zu: %s is not valid UTF-8", shown, channel, i,
                          what);
    return rb_err_set(err, RB_EINPUT, "%s: %s %zu is not valid UTF-8", shown, what, i);
}

int rb_io_check_utf8(const rb_log *log, const char *shown, rb_err *err)
{
    int rc = RB_OK;
    for (size_t c = 0; rc == RB_OK && c < log->n_channels; c++) {
        const rb_channel *ch = &log->channels[c];
        rc = check_one(ch->name, shown, NULL, "the name of channel", c, err);
        for (size_t i = 0; rc == RB_OK && i < ch->n_elements; i++) {
            rc = check_one(ch->element_names[i], shown, ch->name, "name", i, err);
            if (rc == RB_OK)
                rc = check_one(ch->units[i], shown, ch->name, "unit", i, err);
        }
    }
    for (size_t a = 0; rc == RB_OK && a < log->n_attrs; a++) {
        rc = check_one(log->attrs[a].key, shown, NULL, "the key of attribute", a, err);
        if (rc == RB_OK)
            rc = check_one(log->attrs[a].value, shown, NULL, "the value of attribute", a, err);
    }
    return rc;
}

static int cmp_slot(const void *a, const void *b)
{
    return strcmp(**(char *const *const *)a, **(char *const *const *)b);
}

/* Elements i < j of ch with the same name, if any (sorting pointers to the names: channels can be wide). */
static bool same_names(const rb_channel *ch, char *const **slots, size_t *i, size_t *j)
{
    size_t n = ch->n_elements;
    for (size_t k = 0; k < n; k++)
        slots[k] = &ch->element_names[k];
    qsort(slots, n, sizeof *slots, cmp_slot);
    bool found = false;
    for (size_t k = 1; k < n; k++) {
        if (strcmp(*slots[k - 1], *slots[k]) != 0)
            continue;
        size_t a = (size_t)(slots[k - 1] - ch->element_names), b = (size_t)(slots[k] - ch->element_names);
        if (a > b) {
            size_t t = a;
            a = b;
            b = t;
        }
        if (!found || b < *j || (b == *j && a < *i)) {
            *i = a;
            *j = b;
        }
        found = true;
    }
    return found;
}

int rb_io_check_element_names(const rb_log *log, const char *shown, rb_err *err)
{
    size_t widest = 0;
    for (size_t c = 0; c < log->n_channels; c++)
        widest = log->channels[c].n_elements > widest ? log->channels[c].n_elements : widest;
    if (widest < 2)
        return RB_OK;
    char *const **slots = rb_malloc(widest * sizeof *slots);
    if (!slots)
        return rb_err_set(err, RB_ENOMEM, "%s: out of memory", shown);
    int rc = RB_OK;
    for (size_t c = 0; rc == RB_OK && c < log->n_channels; c++) {
        const rb_channel *ch = &log->channels[c];
        size_t i = 0, j = 0;
        if (same_names(ch, slots, &i, &j))
            rc = rb_err_set(err, RB_EINPUT,
                            "%s: channel %s: elements %zu and %zu are both named %s (a binding by name "
                            "would be ambiguous)",
                            shown, ch->name, i, j, ch->element_names[i]);
    }
    rb_free(slots);
    return rc;
}

bool rb_io_is_matlab_identifier(const char *s)
{
    if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
        return false;
    size_t n = 0;
    for (; s[n]; n++) {
        char c = s[n];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return n <= MATLAB_NAME_MAX;
}
