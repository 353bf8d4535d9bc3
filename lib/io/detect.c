/* Reading logs: layout detection from the file's content, dispatch to the readers, shared helpers. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "io_internal.h"

const char *const rb_io_time_names[3] = {"time", "t", "timestamps"};

enum { SNIFF_BYTES = 64 * 1024 };

static const unsigned char hdf5_signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

/* HDF5 looks for its superblock at 0, 512, 1024, 2048, ...: so do we. */
static bool has_hdf5_signature(FILE *f, long long size)
{
    unsigned char buf[8];
    for (long long off = 0; off + 8 <= size; off = off ? off * 2 : 512) {
        if (fseeko(f, (off_t)off, SEEK_SET) != 0 || fread(buf, 1, 8, f) != 8)
            return false;
        if (memcmp(buf, hdf5_signature, 8) == 0)
            return true;
    }
    return false;
}

static bool is_mat5_header(const unsigned char *b, size_t n)
{
    if (n < 128 || memcmp(b, "MATLAB 5.0 MAT-file", 19) != 0)
        return false;
    return (b[126] == 'I' && b[127] == 'M' && b[124] == 0x00 && b[125] == 0x01) ||
           (b[126] == 'M' && b[127] == 'I' && b[124] == 0x01 && b[125] == 0x00);
}

/* The header's first field names the time: time, t, timestamp or timestamps, optionally quoted and
 * followed by a unit in brackets ("time [s]"). ASCII case-insensitive. */
static bool is_time_header(const unsigned char *b, size_t n)
{
    static const char *const names[] = {"time", "t", "timestamp", "timestamps"};
    size_t end = 0, i = 0;
    while (end < n && b[end] != ',')
        end++;
    if (i < end && b[i] == '"')
        i++;
    size_t start = i;
    while (i < end && ((b[i] | 0x20) >= 'a' && (b[i] | 0x20) <= 'z'))
        i++;
    size_t len = i - start;
    while (i < end && b[i] == ' ')
        i++;
    if (i < end && b[i] != '[' && b[i] != '"' && b[i] != '\r') /* only a unit or a closing quote may follow */
        return false;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        bool same = strlen(names[k]) == len;
        for (size_t j = 0; j < len && same; j++)
            same = (b[start + j] | 0x20) == names[k][j];
        if (same)
            return true;
    }
    return false;
}

/* A log header: a comma and a time column first. */
static bool is_log_header(const unsigned char *b, size_t n, bool cut)
{
    (void)cut;
    return memchr(b, ',', n) != NULL && is_time_header(b, n);
}

/* An array header: every comma-separated field (spaces, tabs, a final CR and quotes around it dropped)
 * is an array column (column names hold no ',' or '"'). `cut`: the line goes on past the bytes
 * sniffed, so its last field is not checked. */
static bool is_array_header(const unsigned char *b, size_t n, bool cut)
{
    char field[512];
    for (size_t i = 0; i <= n;) {
        size_t end = i;
        while (end < n && b[end] != ',')
            end++;
        if (end == n && cut)
            return i > 0;
        size_t s = i, e = end;
        while (s < e && (b[s] == ' ' || b[s] == '\t'))
            s++;
        while (e > s && (b[e - 1] == ' ' || b[e - 1] == '\t' || b[e - 1] == '\r'))
            e--;
        if (e - s >= 2 && b[s] == '"' && b[e - 1] == '"') {
            s++;
            e--;
        }
        size_t name_len, n_idx, idx[2];
        if (e - s >= sizeof field)
            return false;
        memcpy(field, b + s, e - s);
        field[e - s] = '\0';
        if (!rb_io_array_column(field, &name_len, &n_idx, idx))
            return false;
        i = end + 1;
    }
    return true;
}

/* Text whose first line that is neither blank nor a `#` comment is a header (header_ok); `full`: the
 * file goes on past these n bytes. */
static bool looks_like_csv(const unsigned char *b, size_t n, bool full,
                           bool (*header_ok)(const unsigned char *, size_t, bool))
{
    if (memchr(b, '\0', n))
        return false;
    size_t i = (n >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF) ? 3 : 0;
    while (i < n) {
        size_t end = i;
        while (end < n && b[end] != '\n')
            end++;
        size_t k = i;
        while (k < end && (b[k] == ' ' || b[k] == '\t' || b[k] == '\r'))
            k++;
        if (k < end && b[k] != '#')
            return header_ok(b + k, end - k, full && end == n);
        i = end + 1;
    }
    return false;
}

int rb_io_sniff(const char *path, bool arrays, rb_io_kind *kind, rb_err *err)
{
    const char *what = arrays ? "an array file" : "a log file";
    unsigned char *buf = NULL;
    int rc = RB_OK;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT || errno == ENOTDIR)
            return rb_err_set(err, RB_ENOTFOUND, "%s: no such file", path);
        return rb_err_set(err, RB_EINPUT, "%s: cannot open: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = rb_err_set(err, RB_EINPUT, "%s: not %s (not a regular file)", path, what);
        goto done;
    }
    if (st.st_size == 0) {
        rc = rb_err_set(err, RB_EINPUT, "%s: not %s (empty file)", path, what);
        goto done;
    }
    buf = rb_malloc(SNIFF_BYTES);
    if (!buf) {
        rc = rb_err_set(err, RB_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    size_t n = fread(buf, 1, SNIFF_BYTES, f);
    if (n < 128 && ferror(f)) {
        rc = rb_err_set(err, RB_EINPUT, "%s: cannot read: %s", path, strerror(errno));
        goto done;
    }
    if (has_hdf5_signature(f, (long long)st.st_size))
        *kind = (n >= 128 && memcmp(buf, "MATLAB 7.3 MAT-file", 19) == 0) ? RB_IO_MAT73 : RB_IO_HDF5;
    else if (is_mat5_header(buf, n))
        *kind = RB_IO_MAT5;
    else if (n >= 19 && (memcmp(buf, "MATLAB 5.0 MAT-file", 19) == 0 || memcmp(buf, "MATLAB 7.3 MAT-file", 19) == 0))
        rc = rb_err_set(err, RB_EINPUT, "%s: not %s (truncated or corrupt MATLAB header)", path, what);
    else if (looks_like_csv(buf, n, n == SNIFF_BYTES && (long long)n < (long long)st.st_size,
                            arrays ? is_array_header : is_log_header))
        *kind = RB_IO_CSV;
    else if (n >= 6 && memcmp(buf, "MATLAB", 6) == 0)
        rc = rb_err_set(err, RB_EINPUT, "%s: not %s (unsupported or corrupt MATLAB header)", path, what);
    else
        rc = rb_err_set(err, RB_EINPUT, "%s: not %s (neither HDF5, MATLAB nor CSV)", path, what);
done:
    rb_free(buf);
    fclose(f);
    return rc;
}

int rb_log_detect(const char *path, rb_log_format *fmt, rb_err *err)
{
    if (!path || !fmt)
        return rb_err_set(err, RB_EINVAL, "rb_log_detect: NULL argument");
    rb_io_kind kind = RB_IO_CSV;
    int rc = rb_io_sniff(path, false, &kind, err);
    if (rc)
        return rc;
    switch (kind) {
    case RB_IO_MAT73: return rb_io_classify_mat73(path, fmt, err);
    case RB_IO_HDF5: return rb_io_classify_h5(path, fmt, err);
    case RB_IO_MAT5: return rb_io_classify_mat5(path, fmt, err);
    case RB_IO_CSV: *fmt = RB_FMT_CSV; return RB_OK;
    }
    return rb_err_set(err, RB_EINPUT, "%s: not a log file", path);
}

static int read_as(const char *path, rb_log_format fmt, rb_log *log, rb_err *err)
{
    switch (fmt) {
    case RB_FMT_LOGGER_MAT73:
    case RB_FMT_PLAIN_MAT73: return rb_io_read_mat73(path, fmt, log, err);
    case RB_FMT_LOGGER_MAT5:
    case RB_FMT_PLAIN_MAT5: return rb_io_read_mat5(path, fmt, log, err);
    case RB_FMT_ROBOEST_H5:
    case RB_FMT_PLAIN_H5: return rb_io_read_h5(path, fmt, log, err);
    case RB_FMT_CSV: return rb_io_read_csv(path, log, err);
    case RB_FMT_MEMORY: break;
    }
    return rb_err_set(err, RB_EINPUT, "%s: not a log file", path);
}

int rb_log_read(const char *path, rb_log **out, rb_err *err)
{
    if (!path || !out)
        return rb_err_set(err, RB_EINVAL, "rb_log_read: NULL argument");
    *out = NULL;
    rb_log_format fmt;
    rb_log *log = NULL;
    int rc = rb_log_detect(path, &fmt, err);
    if (rc == RB_OK)
        rc = rb_log_new(&log, err);
    if (rc == RB_OK) {
        log->format = fmt;
        rc = read_as(path, fmt, log, err);
    }
    if (rc) {
        rb_log_free(log);
        return rc;
    }
    *out = log;
    return RB_OK;
}

/* ---- helpers shared by the readers ---------------------------------------------------------- */

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

void rb_io_free_strings(char **items, size_t n)
{
    for (size_t k = 0; items && k < n; k++)
        rb_free(items[k]);
    rb_free(items);
}

size_t rb_io_utf8_decode(const uint8_t *b, size_t n, uint32_t *cp)
{
    size_t len = b[0] < 0x80 ? 1 : (b[0] & 0xE0) == 0xC0 ? 2 : (b[0] & 0xF0) == 0xE0 ? 3 : (b[0] & 0xF8) == 0xF0 ? 4 : 0;
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
