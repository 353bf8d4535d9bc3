/*
 * Named arrays (io.h, "named arrays"): the in-memory set, reading by content and writing through a
 * temporary file. The formats live with the log readers and writers whose helpers they share:
 * read_h5.c / read_mat73.c / read_mat5.c / read_csv.c and write_h5.c / write_mat.c / write_csv.c.
 */
#include <string.h>

#include "io_internal.h"

/* ---- the set ------------------------------------------------------------------------------------ */

int rb_arrays_new(rb_arrays **out, rb_err *err)
{
    if (!out)
        return rb_err_set(err, RB_EINVAL, "rb_arrays_new: NULL argument");
    *out = rb_calloc(1, sizeof **out);
    if (!*out)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    return RB_OK;
}

void rb_arrays_free(rb_arrays *a)
{
    if (!a)
        return;
    for (size_t k = 0; k < a->n; k++) {
        rb_free(a->items[k].name);
        rb_free(a->items[k].data);
    }
    rb_free(a->items);
    rb_io_attrs_free(a->attrs, a->n_attrs);
    rb_free(a);
}

const rb_array *rb_arrays_find(const rb_arrays *a, const char *name)
{
    for (size_t k = 0; a && name && k < a->n; k++)
        if (strcmp(a->items[k].name, name) == 0)
            return &a->items[k];
    return NULL;
}

int rb_arrays_add(rb_arrays *a, const char *name, size_t ndim, const size_t dims[3], rb_array **out, rb_err *err)
{
    if (!a || !name || !dims)
        return rb_err_set(err, RB_EINVAL, "rb_arrays_add: NULL argument");
    if (ndim < 1 || ndim > 3)
        return rb_err_set(err, RB_EINVAL, "array %s: %zu dimensions (1 to 3)", name, ndim);
    if (rb_arrays_find(a, name))
        return rb_err_set(err, RB_EINPUT, "array %s appears twice", name);
    rb_array arr = {.ndim = ndim, .dims = {1, 1, 1}};
    size_t count = 1, bytes;
    for (size_t d = 0; d < ndim; d++) {
        arr.dims[d] = dims[d];
        if (!rb_size_mul(count, dims[d], &count))
            return rb_err_set(err, RB_ENOMEM, "array %s: %zu dimensions overflow", name, ndim);
    }
    if (!rb_size_mul(count, sizeof(double), &bytes))
        return rb_err_set(err, RB_ENOMEM, "array %s: %zu values is too large", name, count);
    int rc = rb_io_grow((void **)&a->items, &a->cap, a->n + 1, sizeof(rb_array), err);
    if (rc)
        return rc;
    arr.name = rb_strdup(name);
    arr.data = rb_calloc(count ? count : 1, sizeof(double));
    if (!arr.name || !arr.data) {
        rb_free(arr.name);
        rb_free(arr.data);
        return rb_err_set(err, RB_ENOMEM, "out of memory for array %s", name);
    }
    a->items[a->n] = arr;
    if (out)
        *out = &a->items[a->n];
    a->n++;
    return RB_OK;
}

int rb_arrays_set_attr(rb_arrays *a, const char *key, const char *value, rb_err *err)
{
    if (!a || !key)
        return rb_err_set(err, RB_EINVAL, "rb_arrays_set_attr: NULL argument");
    return rb_io_attrs_set(RB_IO_ATTRS(a), key, value, err);
}

static int set_arrays_attr(void *a, const char *key, const char *value, rb_err *err)
{
    return rb_arrays_set_attr(a, key, value, err);
}

int rb_arrays_set_provenance(rb_arrays *a, const rb_provenance *pv, rb_err *err)
{
    return rb_provenance_each(pv, set_arrays_attr, a, err);
}

/* ---- helpers shared by the formats (io_internal.h) ----------------------------------------------- */

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

int rb_io_array_matlab_dims(const rb_array *arr, size_t mdims[3])
{
    mdims[0] = arr->dims[0];
    mdims[1] = arr->ndim >= 2 ? arr->dims[1] : 1;
    mdims[2] = arr->ndim == 3 ? arr->dims[2] : 1;
    return arr->ndim == 3 ? 3 : 2;
}

int rb_io_add_matlab_array(rb_arrays *a, const char *path, const char *obj, const char *name, int rank,
                           const size_t *mdims, rb_array **out, rb_err *err)
{
    while (rank > 3 && mdims[rank - 1] == 1)
        rank--;
    if (rank > 3)
        return rb_err_set(err, RB_EINPUT, "%s: %s: %d dimensions (arrays have 1 to 3)", path, obj, rank);
    size_t dims[3] = {1, 1, 1}, ndim = (size_t)(rank < 1 ? 1 : rank);
    for (int d = 0; d < rank; d++)
        dims[d] = mdims[d];
    if (ndim == 2 && (dims[0] == 1 || dims[1] == 1)) { /* a MATLAB row or column vector: N states */
        dims[0] *= dims[1];
        ndim = 1;
    }
    int rc = rb_arrays_add(a, name, ndim, dims, out, err);
    return rc ? rb_err_prefix(err, rc, "%s: ", path) : RB_OK;
}

/* ---- reading ------------------------------------------------------------------------------------ */

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
    if (rc == RB_OK) {
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
                return rb_err_set(err, RB_EINPUT, "%s: array '%s': not an HDF5 dataset name (empty, '.', '..' or "
                                  "holding '/')", shown, name);
            break;
        case RB_OUT_MAT73:
        case RB_OUT_MAT5:
            if (!rb_io_is_matlab_identifier(name))
                return rb_err_set(err, RB_EINPUT, "%s: array '%s': not a MATLAB variable name (a letter, then "
                                  "letters, digits or '_', at most 63 characters)", shown, name);
            if (a->n_attrs > 0 && strcmp(name, RB_MAT_PROVENANCE_FIELD) == 0)
                return rb_err_set(err, RB_EINPUT, "%s: array '%s': the name of the attributes' struct", shown,
                                  name);
            break;
        case RB_OUT_CSV:
            if (!rb_io_array_column(name, &name_len, &n_idx, idx) || n_idx != 0)
                return rb_err_set(err, RB_EINPUT, "%s: array '%s': not a CSV column name (empty, or holding "
                                  "whitespace, control characters, ',', '\"' or ':', or starting with '#')", shown,
                                  name);
            break;
        }
    }
    for (size_t k = 0; k < a->n_attrs; k++)
        if (!is_utf8(a->attrs[k].key) || !is_utf8(a->attrs[k].value))
            return rb_err_set(err, RB_EINPUT, "%s: attribute %zu is not valid UTF-8", shown, k);
    return RB_OK;
}

static int write_as(const void *what, const char *file, const char *shown, const rb_write_opts *opts,
                    rb_err *err)
{
    const rb_arrays *a = what;
    int rc = check_names(a, opts->format, shown, err);
    if (rc)
        return rc;
    switch (opts->format) {
    case RB_OUT_H5: return rb_io_write_arrays_h5(a, file, shown, err);
    case RB_OUT_MAT73: return rb_io_write_arrays_mat(a, file, shown, true, err);
    case RB_OUT_MAT5: return rb_io_write_arrays_mat(a, file, shown, false, err);
    case RB_OUT_CSV: return rb_io_write_arrays_csv(a, file, shown, err);
    }
    return rb_err_set(err, RB_EINVAL, "%s: unknown output format %d", shown, (int)opts->format);
}

int rb_arrays_write(const rb_arrays *a, const char *path, const rb_write_opts *opts, rb_err *err)
{
    return rb_io_write_atomic("rb_arrays_write", a, path, opts, write_as, err);
}
