/* Reading logs: layout detection from the file's content and dispatch to the readers (their shared helpers:
 * common.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "h5isolate.h"
#include "io_internal.h"

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
        while (end < n && b[end] != '\n' && b[end] != '\r') /* CR alone ends a line too (old Mac files) */
            end++;
        size_t k = i;
        while (k < end && (b[k] == ' ' || b[k] == '\t'))
            k++;
        if (k < end && b[k] != '#')
            return header_ok(b + k, end - k, full && end == n);
        i = end + 1;
    }
    return false;
}

/* A Git LFS pointer (git-lfs spec v1; "hawser" was its first name): a clone made without git-lfs holds these
 * small text files in place of the data. */
static bool is_lfs_pointer(const unsigned char *b, size_t n)
{
    static const char *const starts[] = {"version https://git-lfs.github.com/spec/",
                                         "version https://hawser.github.com/spec/"};
    for (size_t k = 0; k < 2; k++)
        if (n >= strlen(starts[k]) && memcmp(b, starts[k], strlen(starts[k])) == 0)
            return true;
    return false;
}

int rb_io_sniff(const char *path, bool arrays, rb_io_kind *kind, rb_err *err)
{
    const char *what = arrays ? "an array file" : "a log file";
    unsigned char *buf = NULL;
    long long size = 0;
    FILE *f;
    int rc = rb_file_open_regular(path, what, &f, &size, err);
    if (rc)
        return rc;
    if (size == 0) {
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
    if (is_lfs_pointer(buf, n))
        rc = rb_err_set(err, RB_EINPUT, "%s: this is a Git LFS pointer, not the %s: fetch it with git lfs pull", path,
                        arrays ? "array file" : "log");
    else if (has_hdf5_signature(f, size))
        *kind = (n >= 128 && memcmp(buf, "MATLAB 7.3 MAT-file", 19) == 0) ? RB_IO_MAT73 : RB_IO_HDF5;
    else if (is_mat5_header(buf, n))
        *kind = RB_IO_MAT5;
    else if (n >= 19 && (memcmp(buf, "MATLAB 5.0 MAT-file", 19) == 0 || memcmp(buf, "MATLAB 7.3 MAT-file", 19) == 0))
        rc = rb_err_set(err, RB_EINPUT, "%s: not %s (truncated or corrupt MATLAB header)", path, what);
    else if (looks_like_csv(buf, n, n == SNIFF_BYTES && (long long)n < size, arrays ? is_array_header : is_log_header))
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
    if ((kind == RB_IO_MAT73 || kind == RB_IO_HDF5) && rb_io_hdf5_isolation())
        return rb_io_h5_isolated_detect(path, kind, fmt, err);
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
    case RB_FMT_PLAIN_H5:
    case RB_FMT_GROUPS_H5: return rb_io_read_h5(path, fmt, log, err);
    case RB_FMT_CSV: return rb_io_read_csv(path, log, err);
    case RB_FMT_MEMORY: break;
    }
    return rb_err_set(err, RB_EINPUT, "%s: not a log file", path);
}

/* A log without channels is an error saying why (the first entry skipped), and text is UTF-8 whichever reader
 * produced it (the writers need it, and a message naming the output would blame the wrong file). */
int rb_io_check_read(const char *path, const rb_log *log, rb_err *err)
{
    if (log->n_channels == 0 && log->n_skipped > 0) {
        const rb_skipped *s = &log->skipped[0];
        size_t more = log->n_skipped - 1;
        if (more == 0)
            return rb_err_set(err, RB_EINPUT, "%s: no channel to read: %s skipped: %s", path, s->name, s->reason);
        return rb_err_set(err, RB_EINPUT, "%s: no channel to read: %s skipped: %s (and %zu more %s skipped)", path,
                          s->name, s->reason, more, more == 1 ? "entry" : "entries");
    }
    if (log->n_channels == 0)
        return rb_err_set(err, RB_EINPUT, "%s: no channels", path);
    int rc = rb_io_check_utf8(log, path, err);
    return rc ? rc : rb_io_check_element_names(log, path, err);
}

int rb_log_read(const char *path, rb_log **out, rb_err *err)
{
    if (!path || !out)
        return rb_err_set(err, RB_EINVAL, "rb_log_read: NULL argument");
    *out = NULL;
    rb_log_format fmt;
    rb_log *log = NULL;
    rb_io_kind kind = RB_IO_CSV;
    int rc = rb_io_sniff(path, false, &kind, err);
    if (rc == RB_OK && (kind == RB_IO_MAT73 || kind == RB_IO_HDF5) && rb_io_hdf5_isolation()) {
        /* one child process detects the layout and reads it */
        if ((rc = rb_log_new(&log, err)) == RB_OK)
            rc = rb_io_h5_isolated_log(path, kind, log, err);
    } else {
        if (rc == RB_OK)
            rc = rb_log_detect(path, &fmt, err);
        if (rc == RB_OK)
            rc = rb_log_new(&log, err);
        if (rc == RB_OK) {
            log->format = fmt;
            rc = read_as(path, fmt, log, err);
        }
    }
    if (rc == RB_OK)
        rc = rb_io_check_read(path, log, err);
    if (rc) {
        rb_log_free(log);
        return rc;
    }
    *out = log;
    return RB_OK;
}

/* ---- helpers shared by the readers ---------------------------------------------------------- */
