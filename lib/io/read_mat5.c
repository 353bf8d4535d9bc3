/*
 * MATLAB v5/v7 reader through libmatio: the robot logger's layout, plain named matrices and named
 * arrays (io.h).
 *
 * MATLAB arrays are column-major: the logger's n x 1 x T `data` holds element (i, 0, t) at i + n t,
 * which is already our sample-major t n + i. libmatio is not robust against corrupt files, so the
 * file's element structure is checked first (rb_io_validate_mat5, read_mat5_check.c) and every
 * matvar_t is checked (class, dims, byte count) before its data is touched.
 */
#include <matio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_internal.h"

enum { MAX_DEPTH = 32, MAX_CHARS = 1 << 20 };

/* libmatio logs through a global function: keep its last message (per thread) instead of printing. */
static _Thread_local char matio_msg[256];

static void quiet_log(int level, char *message)
{
    (void)level;
    snprintf(matio_msg, sizeof matio_msg, "%s", message ? message : "");
}

typedef struct m5 {
    const char *path;
    mat_t *mat;
    rb_log *log;
    rb_err *err;
} m5;

static int fail(m5 *m, const char *obj, const char *what)
{
    if (matio_msg[0])
        return rb_err_set(m->err, RB_EINPUT, "%s: %s: %s (libmatio: %s)", m->path, obj, what, matio_msg);
    return rb_err_set(m->err, RB_EINPUT, "%s: %s: %s", m->path, obj, what);
}

static int no_memory(m5 *m) { return rb_err_set(m->err, RB_ENOMEM, "%s: out of memory", m->path); }

static int open_mat(m5 *m, const char *path, rb_log *log, rb_err *err)
{
    memset(m, 0, sizeof *m);
    m->path = path;
    m->log = log;
    m->err = err;
    matio_msg[0] = '\0';
    Mat_LogInitFunc("roboest", quiet_log);
    int rc = rb_io_validate_mat5(path, err);
    if (rc)
        return rc;
    m->mat = Mat_Open(path, MAT_ACC_RDONLY);
    if (!m->mat)
        return fail(m, "header", "libmatio cannot open the file");
    if (Mat_GetVersion(m->mat) != MAT_FT_MAT5)
        return fail(m, "header", "not a MATLAB v5/v7 file");
    return RB_OK;
}

static void close_mat(m5 *m)
{
    if (m->mat)
        Mat_Close(m->mat);
    m->mat = NULL;
}

/* ---- checked access to matio's variables ------------------------------------------------------ */

static bool numeric_class(enum matio_classes c)
{
    switch (c) {
    case MAT_C_DOUBLE:
    case MAT_C_SINGLE:
    case MAT_C_INT8:
    case MAT_C_UINT8:
    case MAT_C_INT16:
    case MAT_C_UINT16:
    case MAT_C_INT32:
    case MAT_C_UINT32:
    case MAT_C_INT64:
    case MAT_C_UINT64: return true;
    default: return false;
    }
}

/* Number of elements from dims (false on overflow or a missing dims array). */
static bool element_count(const matvar_t *v, size_t *count)
{
    if (!v || v->rank < 1 || !v->dims)
        return false;
    size_t c = 1;
    for (int d = 0; d < v->rank; d++)
        if (!rb_size_mul(c, v->dims[d], &c))
            return false;
    *count = c;
    return true;
}

/* A real numeric array whose data buffer really holds dims' product of values. */
static bool numeric_ok(const matvar_t *v, size_t *count)
{
    if (!v || !numeric_class(v->class_type) || v->isComplex || !element_count(v, count))
        return false;
    size_t size = Mat_SizeOf(v->data_type), bytes;
    if (size == 0 || v->data_size <= 0 || (size_t)v->data_size != size || !rb_size_mul(*count, size, &bytes))
        return false;
    return *count == 0 || (v->data && v->nbytes >= bytes);
}

static double value_at(const matvar_t *v, size_t k)
{
    const void *d = v->data;
    switch (v->data_type) {
    case MAT_T_DOUBLE: return ((const double *)d)[k];
    case MAT_T_SINGLE: return ((const float *)d)[k];
    case MAT_T_INT8: return ((const mat_int8_t *)d)[k];
    case MAT_T_UINT8: return ((const mat_uint8_t *)d)[k];
    case MAT_T_INT16: return ((const mat_int16_t *)d)[k];
    case MAT_T_UINT16: return ((const mat_uint16_t *)d)[k];
    case MAT_T_INT32: return ((const mat_int32_t *)d)[k];
    case MAT_T_UINT32: return ((const mat_uint32_t *)d)[k];
    case MAT_T_INT64: return (double)((const mat_int64_t *)d)[k];
    case MAT_T_UINT64: return (double)((const mat_uint64_t *)d)[k];
    default: return 0.0; /* unreachable: numeric_ok accepted only these types */
    }
}

/* T x n sample-major values from v: `sample_major` when v holds (i, t) at i + n t (n x T or
 * n x 1 x T), else v is T x n and holds (t, i) at t + T i. */
static void copy_values(const matvar_t *v, size_t T, size_t n, bool sample_major, double *out)
{
    if (sample_major && v->data_type == MAT_T_DOUBLE) {
        memcpy(out, v->data, T * n * sizeof(double));
        return;
    }
    for (size_t t = 0; t < T; t++)
        for (size_t i = 0; i < n; i++)
            out[t * n + i] = value_at(v, sample_major ? t * n + i : i * T + t);
}

/* matio allocated v's data with malloc and frees it in Mat_VarFree unless it is NULL: releasing it
 * as soon as it is copied keeps the peak memory near one copy of the data. */
static void release_data(matvar_t *v)
{
    if (!v->mem_conserve) {
        free(v->data);
        v->data = NULL;
        v->nbytes = 0;
    }
}

static int char_text(m5 *m, const matvar_t *v, const char *obj, char **out)
{
    size_t count;
    if (!v || v->class_type != MAT_C_CHAR || !element_count(v, &count))
        return fail(m, obj, "not a char array");
    if (count == 0 || !v->data) {
        *out = rb_strdup("");
        return *out ? RB_OK : no_memory(m);
    }
    if (count > MAX_CHARS)
        return fail(m, obj, "char array too long");
    size_t width = v->data_type == MAT_T_UINT16 || v->data_type == MAT_T_UTF16 ? 2 : 1, bytes = count * width;
    if (v->data_type == MAT_T_UTF8)
        bytes = v->nbytes; /* UTF-8 text: dims count characters, nbytes the encoded bytes */
    else if (v->data_type != MAT_T_UINT8 && v->data_type != MAT_T_INT8 && width != 2)
        return fail(m, obj, "unsupported character encoding");
    if (v->nbytes < bytes || bytes > (size_t)MAX_CHARS * 4)
        return fail(m, obj, "char array shorter than its dimensions");
    /* MATLAB's char matrices are column-major: a 1 x L row (the usual case) reads in order. */
    *out = width == 2 ? rb_io_utf16_to_utf8(v->data, count) : rb_io_bytes_to_utf8(v->data, bytes);
    return *out ? RB_OK : no_memory(m);
}

/* Cell of char arrays as strings (caller frees each and the array with rb_free). */
static int cell_texts(m5 *m, matvar_t *v, const char *obj, size_t expect, char ***out, size_t *n)
{
    size_t count;
    *out = NULL;
    *n = 0;
    if (!v || v->class_type != MAT_C_CELL || !element_count(v, &count))
        return fail(m, obj, "not a cell array");
    if (expect != SIZE_MAX && count != expect) {
        return rb_err_set(m->err, RB_EINPUT, "%s: %s: holds %zu strings for %zu elements", m->path, obj, count, expect);
    }
    if (count == 0)
        return RB_OK;
    if (count > (size_t)MAX_CHARS || !v->data)
        return fail(m, obj, "corrupt cell array");
    char **items = rb_calloc(count, sizeof *items);
    if (!items)
        return no_memory(m);
    int rc = RB_OK;
    for (size_t k = 0; rc == RB_OK && k < count; k++) {
        char item[512];
        snprintf(item, sizeof item, "%s{%zu}", obj, k + 1);
        rc = char_text(m, Mat_VarGetCell(v, (int)k), item, &items[k]);
    }
    if (rc) {
        rb_strings_free(items, count);
        return rc;
    }
    *out = items;
    *n = count;
    return RB_OK;
}

/* At most one dimension differs from 1: a vector or a scalar, in any orientation. */
static bool is_vector(const matvar_t *v)
{
    size_t non_singleton = 0;
    for (int d = 0; d < v->rank; d++)
        non_singleton += v->dims[d] != 1;
    return non_singleton <= 1;
}

static bool is_struct(const matvar_t *v)
{
    size_t count;
    return v && v->class_type == MAT_C_STRUCT && element_count(v, &count) && count == 1 && v->data &&
           Mat_VarGetNumberOfFields((matvar_t *)v) > 0;
}

static matvar_t *field(matvar_t *v, const char *name)
{
    return is_struct(v) ? Mat_VarGetStructFieldByName(v, name, 0) : NULL;
}

/* ---- robot-logger layout ---------------------------------------------------------------------- */

static int set_strings(m5 *m, matvar_t *st, const char *obj, const char *name, rb_channel *ch, bool units)
{
    matvar_t *cell = field(st, name);
    size_t count;
    if (!cell || (element_count(cell, &count) && count == 0))
        return RB_OK; /* missing or empty: names "0", "1", ..., units "" */
    char path[512], **items = NULL;
    size_t n = 0;
    snprintf(path, sizeof path, "%s.%s", obj, name);
    int rc = cell_texts(m, cell, path, ch->n_elements, &items, &n);
    for (size_t i = 0; rc == RB_OK && i < n; i++)
        rc = units ? rb_channel_set_unit(ch, i, items[i], m->err) : rb_channel_set_name(ch, i, items[i], m->err);
    rb_strings_free(items, n);
    return rc;
}

static int read_channel(m5 *m, matvar_t *st, const char *obj, const char *channel)
{
    matvar_t *data = field(st, "data"), *ts = field(st, "timestamps");
    size_t T, count, n;
    char path[512];
    snprintf(path, sizeof path, "%s.timestamps", obj);
    if (!ts)
        return rb_err_set(m->err, RB_EINPUT, "%s: %s: missing (channel %s)", m->path, path, channel);
    if (!numeric_ok(ts, &T))
        return fail(m, path, "not a real numeric vector");
    if (!is_vector(ts))
        return fail(m, path, "not a vector");
    snprintf(path, sizeof path, "%s.data", obj);
    if (!numeric_ok(data, &count))
        return fail(m, path, "not a real numeric array");
    if (T == 0 || count == 0) /* an empty channel */
        return rb_io_skip(m->log, m->path, channel, T == 0 ? RB_IO_SKIP_NO_SAMPLES : RB_IO_SKIP_NO_ELEMENTS, m->err);
    /* MATLAB d1 x ... x T: each sample's values are contiguous; T x n is taken transposed. */
    bool sample_major = data->dims[data->rank - 1] == T;
    if (sample_major)
        n = count / T;
    else if (data->rank == 2 && data->dims[0] == T)
        n = data->dims[1];
    else
        return rb_err_set(m->err, RB_EINPUT,
                          "%s: %s: channel %s: data holds %zu values that are not %zu samples "
                          "(timestamps)",
                          m->path, path, channel, count, T);
    rb_channel *ch;
    int rc = rb_log_add_channel(m->log, channel, T, n, &ch, m->err);
    if (rc)
        return rb_err_prefix(m->err, rc, "%s: ", m->path);
    copy_values(ts, T, 1, true, ch->time);
    copy_values(data, T, n, sample_major, ch->data);
    release_data(data);
    if ((rc = set_strings(m, st, obj, "elements_names", ch, false)) == RB_OK)
        rc = set_strings(m, st, obj, "units_of_measure", ch, true);
    return rc;
}

static bool is_channel(matvar_t *st)
{
    matvar_t *data = field(st, "data");
    return data && data->class_type != MAT_C_STRUCT;
}

/* A channel's fields around a struct where its data should be: not a channel, nor a group of them. */
static bool has_struct_data(matvar_t *st)
{
    matvar_t *data = field(st, "data");
    return data && data->class_type == MAT_C_STRUCT && field(st, "timestamps");
}

static int root_field(m5 *m, matvar_t *v, const char *obj, const char *name)
{
    char *value = NULL, **items = NULL;
    size_t n = 0;
    int rc = RB_OK;
    if (strcmp(name, "yarp_robot_name") == 0) {
        rc = char_text(m, v, obj, &value);
    } else if (strcmp(name, "description_list") == 0) {
        if ((rc = cell_texts(m, v, obj, SIZE_MAX, &items, &n)))
            return rc;
        value = rb_io_join_strings(items, n, ',');
        rb_strings_free(items, n);
        if (!value)
            rc = no_memory(m);
    } else {
        return rb_io_skip(m->log, m->path, name, RB_IO_SKIP_NOT_STRUCT, m->err);
    }
    if (rc == RB_OK)
        rc = rb_log_set_attr(m->log, name, value, m->err);
    rb_free(value);
    return rc;
}

static int logger_struct(m5 *m, matvar_t *st, const char *obj, const char *prefix, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(m, obj, "structs nested too deeply");
    unsigned n_fields = Mat_VarGetNumberOfFields(st);
    char *const *names = Mat_VarGetStructFieldnames(st);
    int rc = RB_OK;
    for (unsigned k = 0; rc == RB_OK && names && k < n_fields; k++) {
        if (!names[k])
            continue;
        matvar_t *v = Mat_VarGetStructFieldByName(st, names[k], 0);
        char *child_obj = rb_asprintf("%s.%s", obj, names[k]);
        char *channel = rb_io_join_path(prefix, names[k]);
        if (!child_obj || !channel)
            rc = no_memory(m);
        else if (depth == 0 && strcmp(names[k], RB_MAT_PROVENANCE_FIELD) == 0)
            ; /* roboest's own metadata, not data */
        else if (v && depth == 0 && (v->class_type == MAT_C_CHAR || v->class_type == MAT_C_CELL))
            rc = root_field(m, v, child_obj, names[k]);
        else if (is_struct(v) && is_channel(v))
            rc = read_channel(m, v, child_obj, channel);
        else if (is_struct(v) && has_struct_data(v))
            rc = rb_io_skip(m->log, m->path, channel, RB_IO_SKIP_DATA_STRUCT, m->err);
        else if (is_struct(v))
            rc = logger_struct(m, v, child_obj, channel, depth + 1);
        else if (v)
            rc = rb_io_skip(m->log, m->path, channel,
                            v->class_type == MAT_C_STRUCT ? RB_IO_SKIP_EMPTY_STRUCT : RB_IO_SKIP_NOT_STRUCT, m->err);
        rb_free(child_obj);
        rb_free(channel);
    }
    return rc;
}

/* ---- plain layout ----------------------------------------------------------------------------- */

typedef struct plain {
    size_t T;
    double *time;
    char *time_name;
} plain;

static int plain_var(m5 *m, plain *p, matvar_t *v, const char *channel, int depth)
{
    size_t count, n;
    bool transposed;
    if (depth > MAX_DEPTH)
        return fail(m, channel, "structs nested too deeply");
    if (is_struct(v)) {
        unsigned n_fields = Mat_VarGetNumberOfFields(v);
        char *const *names = Mat_VarGetStructFieldnames(v);
        int rc = RB_OK;
        for (unsigned k = 0; rc == RB_OK && names && k < n_fields; k++) {
            char *child = names[k] ? rb_asprintf("%s/%s", channel, names[k]) : NULL;
            if (names[k] && !child)
                return no_memory(m);
            if (child)
                rc = plain_var(m, p, Mat_VarGetStructFieldByName(v, names[k], 0), child, depth + 1);
            rb_free(child);
        }
        return rc;
    }
    if (!numeric_ok(v, &count))
        return rb_io_skip_plain(m->log, m->path, channel, -1, 0, 0, p->T, m->err);
    if (v->rank != 2 || !rb_io_plain_shape(v->dims[0], v->dims[1], p->T, &n, &transposed))
        return rb_io_skip_plain(m->log, m->path, channel, v->rank, v->dims[0], v->rank > 1 ? v->dims[1] : 1, p->T,
                                m->err);
    rb_channel *ch;
    int rc = rb_log_add_channel(m->log, channel, p->T, n, &ch, m->err);
    if (rc)
        return rb_err_prefix(m->err, rc, "%s: ", m->path);
    memcpy(ch->time, p->time, p->T * sizeof(double));
    /* T x n (rows are samples) is column-major (t, i) at t + T i; n x T is already sample-major. */
    copy_values(v, p->T, n, transposed, ch->data);
    release_data(v);
    return RB_OK;
}

/* Finds the time vector's name among the top-level variables (first of time, t, timestamps). */
static int find_time(m5 *m, char **name, size_t *n_vars)
{
    *name = NULL;
    *n_vars = 0;
    int best = 3;
    Mat_Rewind(m->mat);
    matvar_t *v;
    while ((v = Mat_VarReadNextInfo(m->mat)) != NULL) {
        (*n_vars)++;
        for (int k = 0; k < best && v->name; k++) {
            if (strcmp(v->name, rb_io_time_names[k]) == 0 && numeric_class(v->class_type) && !v->isComplex &&
                v->rank >= 1 && v->dims && is_vector(v)) {
                rb_free(*name);
                if (!(*name = rb_strdup(v->name))) {
                    Mat_VarFree(v);
                    return no_memory(m);
                }
                best = k;
            }
        }
        Mat_VarFree(v);
    }
    return RB_OK;
}

static int read_plain(m5 *m)
{
    plain p = {0, NULL, NULL};
    matvar_t *v = NULL;
    size_t n_vars, n_read = 0;
    int rc = find_time(m, &p.time_name, &n_vars);
    if (rc)
        return rc;
    if (!p.time_name)
        return rb_err_set(m->err, RB_EINPUT, "%s: no time vector (time, t or timestamps)", m->path);
    v = Mat_VarRead(m->mat, p.time_name);
    if (!numeric_ok(v, &p.T)) {
        rc = fail(m, p.time_name, "cannot read the time vector");
        goto done;
    }
    p.time = rb_calloc(p.T ? p.T : 1, sizeof(double));
    if (!p.time) {
        rc = no_memory(m);
        goto done;
    }
    copy_values(v, p.T, 1, true, p.time);
    Mat_VarFree(v);
    v = NULL;
    Mat_Rewind(m->mat);
    while (rc == RB_OK && (v = Mat_VarReadNext(m->mat)) != NULL) {
        n_read++;
        if (v->name && strcmp(v->name, p.time_name) != 0)
            rc = plain_var(m, &p, v, v->name, 0);
        Mat_VarFree(v);
        v = NULL;
    }
    /* libmatio ends the loop on a variable it cannot read: do not return part of the file. */
    if (rc == RB_OK && n_read != n_vars)
        rc = fail(m, "variables", "cannot read every variable");
done:
    Mat_VarFree(v);
    rb_free(p.time);
    rb_free(p.time_name);
    return rc;
}

/* ---- layout ----------------------------------------------------------------------------------- */

static bool holds_channel(matvar_t *st, int depth)
{
    if (depth > MAX_DEPTH || !is_struct(st))
        return false;
    unsigned n_fields = Mat_VarGetNumberOfFields(st);
    char *const *names = Mat_VarGetStructFieldnames(st);
    for (unsigned k = 0; names && k < n_fields; k++) {
        matvar_t *v = names[k] ? Mat_VarGetStructFieldByName(st, names[k], 0) : NULL;
        if (is_struct(v) && (is_channel(v) || holds_channel(v, depth + 1)))
            return true;
    }
    return false;
}

/* Same rule as for v7.3: no top-level time vector and a top-level struct -> logger; the root is the
 * first struct (file order) holding a channel, else the first struct. */
static int find_root(m5 *m, char **root)
{
    char *time_name = NULL, *first = NULL;
    size_t n_vars;
    *root = NULL;
    int rc = find_time(m, &time_name, &n_vars);
    if (rc || time_name) {
        rb_free(time_name);
        return rc;
    }
    Mat_Rewind(m->mat);
    matvar_t *v;
    while (rc == RB_OK && !*root && (v = Mat_VarReadNextInfo(m->mat)) != NULL) {
        if (v->name && v->class_type == MAT_C_STRUCT) {
            if (!first && !(first = rb_strdup(v->name)))
                rc = no_memory(m);
            if (rc == RB_OK && holds_channel(v, 0) && !(*root = rb_strdup(v->name)))
                rc = no_memory(m);
        }
        Mat_VarFree(v);
    }
    if (rc == RB_OK && !*root) {
        *root = first;
        first = NULL;
    }
    rb_free(first);
    return rc;
}

int rb_io_classify_mat5(const char *path, rb_log_format *fmt, rb_err *err)
{
    m5 m;
    char *root = NULL;
    int rc = open_mat(&m, path, NULL, err);
    if (rc == RB_OK)
        rc = find_root(&m, &root);
    if (rc == RB_OK)
        *fmt = root ? RB_FMT_LOGGER_MAT5 : RB_FMT_PLAIN_MAT5;
    rb_free(root);
    close_mat(&m);
    return rc;
}

int rb_io_read_mat5(const char *path, rb_log_format fmt, rb_log *log, rb_err *err)
{
    m5 m;
    char *root = NULL;
    matvar_t *v = NULL;
    int rc = open_mat(&m, path, log, err);
    if (rc == RB_OK)
        rc = find_root(&m, &root);
    if (rc)
        goto done;
    if (fmt == RB_FMT_PLAIN_MAT5 || !root) {
        log->format = RB_FMT_PLAIN_MAT5;
        rc = read_plain(&m);
        goto done;
    }
    log->format = RB_FMT_LOGGER_MAT5;
    v = Mat_VarRead(m.mat, root);
    if (v && v->class_type == MAT_C_STRUCT && !is_struct(v)) {
        log->root_name = root; /* an empty root struct: a log without channels */
        root = NULL;
        goto done;
    }
    if (!is_struct(v)) {
        rc = fail(&m, root, "cannot read the root struct");
        goto done;
    }
    log->root_name = root;
    root = NULL;
    rc = logger_struct(&m, v, log->root_name, "", 0);
done:
    Mat_VarFree(v);
    rb_free(root);
    close_mat(&m);
    return rc;
}

/* ---- named arrays ------------------------------------------------------------------------------ */

/* The char fields of a top-level struct RB_MAT_PROVENANCE_FIELD (as rb_arrays_write makes it) are the
 * attributes; its other fields are ignored. */
static int provenance_attrs(m5 *m, matvar_t *st, rb_arrays *a)
{
    unsigned n_fields = Mat_VarGetNumberOfFields(st);
    char *const *names = Mat_VarGetStructFieldnames(st);
    int rc = RB_OK;
    for (unsigned k = 0; rc == RB_OK && names && k < n_fields; k++) {
        matvar_t *v = names[k] ? Mat_VarGetStructFieldByName(st, names[k], 0) : NULL;
        if (!v || v->class_type != MAT_C_CHAR)
            continue;
        char obj[512], *value = NULL;
        snprintf(obj, sizeof obj, "%s.%s", RB_MAT_PROVENANCE_FIELD, names[k]);
        if ((rc = char_text(m, v, obj, &value)) == RB_OK && (rc = rb_arrays_set_attr(a, names[k], value, m->err)))
            rb_err_prefix(m->err, rc, "%s: ", m->path);
        rb_free(value);
    }
    return rc;
}

/* A real numeric variable as an array; others (char, cell, struct, sparse, complex) are skipped.
 * MATLAB's element (i, j, k) of N x a x b sits at i + N (j + a k). */
static int array_var(m5 *m, matvar_t *v, rb_arrays *a)
{
    size_t count;
    if (!numeric_class(v->class_type) || v->isComplex)
        return RB_OK;
    if (!numeric_ok(v, &count))
        return fail(m, v->name, "corrupt numeric array (its data does not match its dimensions)");
    rb_array *arr;
    int rc = rb_io_add_matlab_array(a, m->path, v->name, v->name, v->rank, v->dims, &arr, m->err);
    if (rc)
        return rc;
    size_t N = arr->dims[0], na = arr->dims[1], nb = arr->dims[2];
    if (v->data_type == MAT_T_DOUBLE && count > 0) { /* MATLAB's N x a x b is the C-order [b][a][N] */
        size_t reversed[3] = {nb, na, N};
        rb_io_reverse_axes(arr->data, v->data, 3, reversed);
    } else {
        for (size_t i = 0; i < N; i++)
            for (size_t j = 0; j < na; j++)
                for (size_t k = 0; k < nb; k++)
                    arr->data[(i * na + j) * nb + k] = value_at(v, i + N * (j + na * k));
    }
    release_data(v);
    return RB_OK;
}

int rb_io_read_arrays_mat5(const char *path, rb_arrays *a, rb_err *err)
{
    m5 m;
    size_t n_vars = 0, n_read = 0;
    int rc = open_mat(&m, path, NULL, err);
    if (rc == RB_OK) {
        matvar_t *v;
        while ((v = Mat_VarReadNextInfo(m.mat)) != NULL) {
            n_vars++;
            Mat_VarFree(v);
        }
        Mat_Rewind(m.mat);
    }
    matvar_t *v = NULL;
    while (rc == RB_OK && (v = Mat_VarReadNext(m.mat)) != NULL) {
        n_read++;
        if (v->name && strcmp(v->name, RB_MAT_PROVENANCE_FIELD) == 0 && is_struct(v))
            rc = provenance_attrs(&m, v, a);
        else if (v->name)
            rc = array_var(&m, v, a);
        Mat_VarFree(v);
    }
    /* libmatio ends the loop on a variable it cannot read: do not return part of the file. */
    if (rc == RB_OK && n_read != n_vars)
        rc = fail(&m, "variables", "cannot read every variable");
    close_mat(&m);
    return rc;
}
