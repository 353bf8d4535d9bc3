/* Reading and writing named arrays (rb_arrays_read / rb_arrays_write): the format from the content or the path,
 * then the format's reader or writer. */
#include <stdio.h>
#include <string.h>

#include "h5isolate.h"
#include "io_internal.h"

int rb_arrays_read(const char *path, rb_arrays **out, rb_err *err)
{
    if (!path || !out)
        return rb_err_set(err, RB_EINVAL, "rb_arrays_read: NULL argument");
    *out = NULL;
    rb_io_kind kind = RB_IO_CSV;
    rb_arrays *a = NULL;
    int rc = rb_io_sniff(path, true, &kind, err);
    if (rc == RB_OK && (rc = rb_arrays_new(&a, err)) != RB_OK)
        rb_err_prefix(err, rc, "%s: ", path);
    if (rc == RB_OK && (kind == RB_IO_HDF5 || kind == RB_IO_MAT73) && rb_io_hdf5_isolation()) {
        rc = rb_io_h5_isolated_arrays(path, kind, a, err);
    } else if (rc == RB_OK) {
        switch (kind) {
        case RB_IO_HDF5: rc = rb_io_read_arrays_h5(path, a, err); break;
        case RB_IO_MAT73: rc = rb_io_read_arrays_mat73(path, a, err); break;
        case RB_IO_MAT5: rc = rb_io_read_arrays_mat5(path, a, err); break;
        case RB_IO_CSV: rc = rb_io_read_arrays_csv(path, a, err); break;
        }
    }
    if (rc) {
        rb_arrays_free(a);
        return rc;
    }
    *out = a;
    return RB_OK;
}

/* ---- writing ------------------------------------------------------------------------------------ */

static bool is_utf8(const char *s)
{
    size_t n;
    return rb_io_utf8_to_utf16(s, NULL, &n);
}

/* Names each format can hold, and text that is UTF-8 (HDF5 and MATLAB store Unicode). */
static int check_names(const rb_arrays *a, rb_out_format fmt, const char *shown, rb_err *err)
{
    for (size_t k = 0; k < a->n; k++) {
        const char *name = a->items[k].name;
        size_t len = strlen(name), name_len, n_idx, idx[2];
        if (!is_utf8(name))
            return rb_err_set(err, RB_EINPUT, "%s: the name of array %zu is not valid UTF-8", shown, k);
        switch (fmt) {
        case RB_OUT_H5:
            if (len == 0 || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                return rb_err_set(err, RB_EINPUT,
                                  "%s: array '%s': not an HDF5 dataset name (empty, '.', '..' or "
                                  "holding '/')",
                                  shown, name);
            break;
        case RB_OUT_MAT73:
        case RB_OUT_MAT5:
            if (!rb_io_is_matlab_identifier(name))
                return rb_err_set(err, RB_EINPUT,
                                  "%s: array '%s': not a MATLAB variable name (a letter, then "
                                  "letters, digits or '_', at most 63 characters)",
                                  shown, name);
            if (a->n_attrs > 0 && strcmp(name, RB_MAT_PROVENANCE_FIELD) == 0)
                return rb_err_set(err, RB_EINPUT, "%s: array '%s': the name of the attributes' struct", shown, name);
            break;
        case RB_OUT_CSV:
            if (!rb_io_array_column(name, &name_len, &n_idx, idx) || n_idx != 0)
                return rb_err_set(err, RB_EINPUT,
                                  "%s: array '%s': not a CSV column name (empty, or holding "
                                  "whitespace, control characters, ',', '\"' or ':', or starting with '#')",
                                  shown, name);
            break;
        }
    }
    for (size_t k = 0; k < a->n_attrs; k++)
        if (!is_utf8(a->attrs[k].key) || !is_utf8(a->attrs[k].value))
            return rb_err_set(err, RB_EINPUT, "%s: attribute %zu is not valid UTF-8", shown, k);
    return RB_OK;
}

static int write_as(const void *what, const char *file, const char *shown, const rb_write_opts *opts, rb_err *err)
{
    const rb_arrays *a = what;
    int rc = check_names(a, opts->format, shown, err);
    if (rc)
        return rc;
    switch (opts->format) {
    case RB_OUT_H5:
    case RB_OUT_MAT73: /* in-process HDF5 use: no fork for an isolated read meanwhile (h5isolate.h) */
        rb_io_h5_enter();
        rc = opts->format == RB_OUT_H5 ? rb_io_write_arrays_h5(a, file, shown, err)
                                       : rb_io_write_arrays_mat(a, file, shown, true, err);
        rb_io_h5_leave();
        return rc;
    case RB_OUT_MAT5: return rb_io_write_arrays_mat(a, file, shown, false, err);
    case RB_OUT_CSV: return rb_io_write_arrays_csv(a, file, shown, err);
    }
    return rb_err_set(err, RB_EINVAL, "%s: unknown output format %d", shown, (int)opts->format);
}

int rb_arrays_write(const rb_arrays *a, const char *path, const rb_write_opts *opts, rb_err *err)
{
    return rb_io_write_atomic("rb_arrays_write", a, path, opts, write_as, err);
}
