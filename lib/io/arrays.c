/*
 * Named arrays (io.h, "named arrays"): the in-memory set and the MATLAB shape helpers the formats use. Reading
 * and writing dispatch from arrays_io.c; the formats live with the log readers and writers whose helpers they
 * share: read_h5.c / read_mat73.c / read_mat5.c / read_csv.c and write_h5.c / write_mat.c / write_csv.c.
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
