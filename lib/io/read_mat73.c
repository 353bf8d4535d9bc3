/*
 * MATLAB v7.3 reader (HDF5 with a MATLAB user block), through the HDF5 C API directly: the robot
 * logger's layout (io.h) and plain files of named matrices (read_h5.c's plain walker).
 *
 * MATLAB stores an array column-major and HDF5 shows its dimensions reversed, so the logger's
 * n x 1 x T `data` appears as [T][1][n]: already sample-major, read with one H5Dread straight into
 * the channel (no copy, peak memory ~ the data itself).
 */
#include <string.h>

#include "h5read.h"

enum {
    MAX_CHARS = 1 << 20,     /* characters in one MATLAB char array we decode */
    MAX_CELL = 1000000       /* strings in one cell */
};

static void matlab_class(hid_t obj, char cls[32])
{
    if (!rb_h5r_attr_str(obj, "MATLAB_class", cls, 32))
        cls[0] = '\0';
}

static bool is_struct_group(hid_t obj, H5I_type_t type)
{
    char cls[32];
    matlab_class(obj, cls);
    return type == H5I_GROUP && strcmp(cls, "struct") == 0 && !rb_h5r_attr_true(obj, "MATLAB_empty");
}

static bool is_numeric_class(const char *cls)
{
    static const char *const names[] = {"double", "single", "int8",  "uint8",  "int16", "uint16",
                                        "int32",  "uint32", "int64", "uint64", "logical"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(cls, names[k]) == 0)
            return true;
    return false;
}

/* ---- char arrays and cells of them ---------------------------------------------------------- */

/* A MATLAB char array (uint16 UTF-16 code units, or 8-bit codes) as UTF-8; MATLAB_empty -> "". */
static int read_char(rb_h5r *r, hid_t dset, const char *obj, char **out)
{
    char cls[32];
    int rank;
    hsize_t dims[RB_H5_MAX_RANK];
    size_t n;
    matlab_class(dset, cls);
    if (strcmp(cls, "char") != 0)
        return rb_h5r_fail(r, obj, "not a char array (MATLAB_class '%s')", cls);
    if (rb_h5r_attr_true(dset, "MATLAB_empty")) {
        *out = rb_strdup("");
        return *out ? RB_OK : rb_err_set(r->err, RB_ENOMEM, "%s: out of memory", r->path);
    }
    hid_t type = H5Dget_type(dset);
    size_t width = type >= 0 && H5Tget_class(type) == H5T_INTEGER ? H5Tget_size(type) : 0;
    if (type >= 0)
        H5Tclose(type);
    if (width != 1 && width != 2)
        return rb_h5r_fail(r, obj, "char array is not made of 8- or 16-bit codes");
    int rc = rb_h5r_shape(r, dset, obj, &rank, dims, &n);
    if (rc == RB_OK && n > MAX_CHARS)
        rc = rb_h5r_fail(r, obj, "char array of %zu characters is too long", n);
    if (rc == RB_OK)
        rc = rb_h5r_check_storage(r, dset, obj, n);
    if (rc)
        return rc;
    void *codes = rb_calloc(n ? n : 1, width);
    if (!codes)
        return rb_err_set(r->err, RB_ENOMEM, "%s: out of memory", r->path);
    if (n && H5Dread(dset, width == 2 ? H5T_NATIVE_UINT16 : H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, codes) < 0)
        rc = rb_h5r_fail(r, obj, "cannot read the characters");
    if (rc == RB_OK) {
        *out = width == 2 ? rb_io_utf16_to_utf8(codes, n) : rb_io_bytes_to_utf8(codes, n);
        if (!*out)
            rc = rb_err_set(r->err, RB_ENOMEM, "%s: out of memory", r->path);
    }
    rb_free(codes);
    return rc;
}

typedef struct strings {
    size_t n;
    char **items;
} strings;

static void strings_free(strings *s)
{
    rb_h5r_free_names(s->items, s->n);
    s->items = NULL;
    s->n = 0;
}

static int read_ref_string(rb_h5r *r, hid_t cell, const char *obj, size_t k, hobj_ref_t *ref, char **out)
{
    char *item = rb_asprintf("%s{%zu}", obj, k + 1); /* MATLAB's 1-based cell index */
    if (!item)
        return rb_err_set(r->err, RB_ENOMEM, "%s: out of memory", r->path);
    int rc = RB_OK;
    hid_t target = H5Rdereference2(cell, H5P_DEFAULT, H5R_OBJECT, ref);
    if (target < 0)
        rc = rb_h5r_fail(r, item, "dangling reference");
    else if (H5Iget_type(target) != H5I_DATASET)
        rc = rb_h5r_fail(r, item, "not a char array");
    else
        rc = read_char(r, target, item, out);
    if (target >= 0)
        H5Oclose(target);
    rb_free(item);
    return rc;
}

/* A MATLAB cell of char arrays (object references into /#refs#); `expect` strings unless SIZE_MAX. */
static int read_cell(rb_h5r *r, hid_t dset, const char *obj, size_t expect, strings *out)
{
    char cls[32];
    int rank, rc;
    hsize_t dims[RB_H5_MAX_RANK];
    size_t n;
    out->n = 0;
    out->items = NULL;
    matlab_class(dset, cls);
    if (strcmp(cls, "cell") != 0)
        return rb_h5r_fail(r, obj, "not a cell array (MATLAB_class '%s')", cls);
    if (rb_h5r_attr_true(dset, "MATLAB_empty"))
        n = 0;
    else if ((rc = rb_h5r_shape(r, dset, obj, &rank, dims, &n)))
        return rc;
    if (expect != SIZE_MAX && n != expect)
        return rb_h5r_fail(r, obj, "holds %zu strings for %zu elements", n, expect);
    if (n == 0)
        return RB_OK;
    hid_t type = H5Dget_type(dset);
    bool refs = type >= 0 && H5Tget_class(type) == H5T_REFERENCE;
    if (type >= 0)
        H5Tclose(type);
    if (!refs || n > MAX_CELL)
        return rb_h5r_fail(r, obj, "cell is not an array of object references");
    if ((rc = rb_h5r_check_storage(r, dset, obj, n)))
        return rc;
    hobj_ref_t *ref = rb_calloc(n, sizeof *ref);
    out->items = rb_calloc(n, sizeof *out->items);
    if (!ref || !out->items) {
        rc = rb_err_set(r->err, RB_ENOMEM, "%s: out of memory", r->path);
        goto done;
    }
    out->n = n;
    if (H5Dread(dset, H5T_STD_REF_OBJ, H5S_ALL, H5S_ALL, H5P_DEFAULT, ref) < 0) {
        rc = rb_h5r_fail(r, obj, "cannot read the cell's references");
        goto done;
    }
    for (size_t k = 0; rc == RB_OK && k < n; k++)
        rc = read_ref_string(r, dset, obj, k, &ref[k], &out->items[k]);
done:
    rb_free(ref);
    if (rc)
        strings_free(out);
    return rc;
}

/* ---- robot-logger channels -------------------------------------------------------------------- */

static int set_strings(rb_h5r *r, hid_t grp, const char *obj, const char *field, rb_channel *ch, bool units)
{
    H5I_type_t type;
    hid_t cell = rb_h5r_open_child(grp, field, &type);
    if (cell < 0)
        return RB_OK; /* older loggers wrote neither: names "0", "1", ..., units "" */
    int rc = RB_OK;
    strings s = {0, NULL};
    char *cobj = rb_asprintf("%s/%s", obj, field);
    if (!cobj)
        rc = rb_err_set(r->err, RB_ENOMEM, "%s: out of memory", r->path);
    else if (type != H5I_DATASET)
        rc = rb_h5r_fail(r, cobj, "not a cell array");
    else if (!rb_h5r_attr_true(cell, "MATLAB_empty"))
        rc = read_cell(r, cell, cobj, ch->n_elements, &s);
    for (size_t i = 0; rc == RB_OK && i < s.n; i++)
        rc = units ? rb_channel_set_unit(ch, i, s.items[i], r->err) : rb_channel_set_name(ch, i, s.items[i], r->err);
    strings_free(&s);
    rb_free(cobj);
    H5Oclose(cell);
    return rc;
}

/* T from `timestamps` (any vector shape: the logger writes T x 1, others 1 x T). */
static int timestamps_length(rb_h5r *r, hid_t ts, const char *tobj, size_t *T)
{
    int rank;
    hsize_t dims[RB_H5_MAX_RANK];
    char cls[32];
    matlab_class(ts, cls);
    if (!is_numeric_class(cls))
        return rb_h5r_fail(r, tobj, "not a numeric array (MATLAB_class '%s')", cls);
    int rc = rb_h5r_shape(r, ts, tobj, &rank, dims, T);
    size_t non_singleton = 0;
    for (int d = 0; rc == RB_OK && d < rank; d++)
        non_singleton += dims[d] != 1;
    if (rc == RB_OK && non_singleton > 1)
        rc = rb_h5r_fail(r, tobj, "not a vector");
    return rc;
}

/* Elements per sample and whether `data` is stored [n][T] (MATLAB T x n) rather than [T][...]. */
static int data_layout(rb_h5r *r, hid_t data, const char *dobj, const char *channel, size_t T, size_t *n,
                       bool *transposed)
{
    int rank;
    hsize_t dims[RB_H5_MAX_RANK];
    size_t npoints;
    char cls[32];
    matlab_class(data, cls);
    if (!is_numeric_class(cls))
        return rb_h5r_fail(r, dobj, "not a numeric array (MATLAB_class '%s')", cls);
    int rc = rb_h5r_shape(r, data, dobj, &rank, dims, &npoints);
    if (rc)
        return rc;
    *transposed = false;
    /* MATLAB d1 x d2 x ... x T is HDF5 [T]...[d2][d1]: each sample's d1*d2*... values are contiguous.
     * With a square 2-D array, [T][n] (the logger's n x T) wins. */
    if (rank >= 1 && dims[0] == T) {
        *n = T ? npoints / T : 0;
    } else if (rank == 2 && dims[1] == T) {
        *n = (size_t)dims[0];
        *transposed = true;
    } else {
        return rb_h5r_fail(r, dobj, "channel %s: data holds %zu values that are not %zu samples (timestamps)",
                           channel, npoints, T);
    }
    return RB_OK;
}

static int read_channel(rb_h5r *r, hid_t grp, const char *obj, const char *channel)
{
    int rc = RB_OK;
    H5I_type_t ttype, dtype;
    size_t T = 0, n = 0;
    bool transposed = false;
    char *tobj = rb_asprintf("%s/timestamps", obj), *dobj = rb_asprintf("%s/data", obj);
    hid_t ts = rb_h5r_open_child(grp, "timestamps", &ttype), data = rb_h5r_open_child(grp, "data", &dtype);
    if (!tobj || !dobj) {
        rc = rb_err_set(r->err, RB_ENOMEM, "%s: out of memory", r->path);
        goto done;
    }
    if (ts < 0 || ttype != H5I_DATASET) {
        rc = rb_h5r_fail(r, tobj, "missing (channel %s)", channel);
        goto done;
    }
    /* Empty channels: written as MATLAB_empty arrays, or with no samples. */
    if (rb_h5r_attr_true(data, "MATLAB_empty") || rb_h5r_attr_true(ts, "MATLAB_empty"))
        goto done;
    if ((rc = timestamps_length(r, ts, tobj, &T)) || T == 0)
        goto done;
    if ((rc = data_layout(r, data, dobj, channel, T, &n, &transposed)) || n == 0)
        goto done;
    if ((rc = rb_h5r_check_storage(r, ts, tobj, T)) || (rc = rb_h5r_check_storage(r, data, dobj, T * n)))
        goto done;
    rb_channel *ch;
    if ((rc = rb_log_add_channel(r->log, channel, T, n, &ch, r->err))) {
        rb_err_prefix(r->err, "%s: ", r->path);
        goto done;
    }
    if ((rc = rb_h5r_read_doubles(r, ts, tobj, T, ch->time)))
        goto done;
    rc = transposed ? rb_h5r_read_transposed(r, data, dobj, T, n, ch->data)
                    : rb_h5r_read_doubles(r, data, dobj, T * n, ch->data);
    if (rc == RB_OK && (rc = set_strings(r, grp, obj, "elements_names", ch, false)) == RB_OK)
        rc = set_strings(r, grp, obj, "units_of_measure", ch, true);
done:
    if (ts >= 0)
        H5Oclose(ts);
    if (data >= 0)
        H5Oclose(data);
    rb_free(tobj);
    rb_free(dobj);
    return rc;
}

/* A leaf struct is a channel when its `data` field is an array (not a nested struct). */
static bool is_channel(hid_t grp)
{
    H5I_type_t type;
    hid_t data = rb_h5r_open_child(grp, "data", &type);
    if (data < 0)
        return false;
    H5Oclose(data);
    return type == H5I_DATASET;
}

/* Root-level `yarp_robot_name` (char) and `description_list` (cell of char, joined by ','). */
static int root_field(rb_h5r *r, hid_t dset, const char *obj, const char *name)
{
    int rc = RB_OK;
    char *value = NULL;
    if (strcmp(name, "yarp_robot_name") == 0) {
        rc = read_char(r, dset, obj, &value);
    } else if (strcmp(name, "description_list") == 0) {
        strings s;
        if ((rc = read_cell(r, dset, obj, SIZE_MAX, &s)))
            return rc;
        size_t len = 1;
        for (size_t k = 0; k < s.n; k++)
            len += strlen(s.items[k]) + 1;
        value = rb_calloc(len, 1);
        for (size_t k = 0; value && k < s.n; k++) {
            if (k)
                strcat(value, ",");
            strcat(value, s.items[k]);
        }
        strings_free(&s);
        if (!value)
            rc = rb_err_set(r->err, RB_ENOMEM, "%s: out of memory", r->path);
    } else {
        return RB_OK;
    }
    if (rc == RB_OK)
        rc = rb_log_set_attr(r->log, name, value, r->err);
    rb_free(value);
    return rc;
}

static int logger_struct(rb_h5r *r, hid_t grp, const char *obj, const char *prefix, int depth)
{
    if (depth > RB_H5_MAX_DEPTH)
        return rb_h5r_fail(r, obj, "structs nested too deeply");
    char **names = NULL;
    size_t n_names = 0;
    int rc = rb_h5r_children(r, grp, obj, &names, &n_names);
    for (size_t k = 0; rc == RB_OK && k < n_names; k++) {
        H5I_type_t type;
        hid_t child = names[k][0] == '#' ? -1 : rb_h5r_open_child(grp, names[k], &type);
        if (child < 0)
            continue;
        char *child_obj = rb_asprintf("%s/%s", obj, names[k]);
        char *channel = prefix[0] ? rb_asprintf("%s/%s", prefix, names[k]) : rb_strdup(names[k]);
        if (!child_obj || !channel)
            rc = rb_err_set(r->err, RB_ENOMEM, "%s: out of memory", r->path);
        else if (type == H5I_DATASET && depth == 0)
            rc = root_field(r, child, child_obj, names[k]);
        else if (is_struct_group(child, type))
            rc = is_channel(child) ? read_channel(r, child, child_obj, channel)
                                   : logger_struct(r, child, child_obj, channel, depth + 1);
        rb_free(child_obj);
        rb_free(channel);
        H5Oclose(child);
    }
    rb_h5r_free_names(names, n_names);
    return rc;
}

/* ---- layout: logger or plain ------------------------------------------------------------------ */

static int holds_channel(rb_h5r *r, hid_t grp, int depth, bool *found)
{
    char **names = NULL;
    size_t n_names = 0;
    *found = false;
    if (depth > RB_H5_MAX_DEPTH)
        return RB_OK;
    int rc = rb_h5r_children(r, grp, "", &names, &n_names);
    for (size_t k = 0; rc == RB_OK && !*found && k < n_names; k++) {
        H5I_type_t type;
        hid_t child = rb_h5r_open_child(grp, names[k], &type);
        if (child < 0)
            continue;
        if (is_struct_group(child, type))
            *found = is_channel(child);
        if (is_struct_group(child, type) && !*found)
            rc = holds_channel(r, child, depth + 1, found);
        H5Oclose(child);
    }
    rb_h5r_free_names(names, n_names);
    return rc;
}

/* The logger's root: with no top-level time vector, the first top-level struct (link name order)
 * holding a channel, else the first top-level struct. *root = NULL: a plain file. */
static int find_root(rb_h5r *r, hid_t top, char **root)
{
    *root = NULL;
    for (size_t k = 0; k < 3; k++) {
        H5I_type_t type;
        hid_t t = rb_h5r_open_child(top, rb_io_time_names[k], &type);
        if (t >= 0) {
            H5Oclose(t);
            if (type == H5I_DATASET)
                return RB_OK;
        }
    }
    char **names = NULL, *first = NULL;
    size_t n_names = 0;
    int rc = rb_h5r_children(r, top, "/", &names, &n_names);
    for (size_t k = 0; rc == RB_OK && !*root && k < n_names; k++) {
        H5I_type_t type;
        hid_t child = names[k][0] == '#' ? -1 : rb_h5r_open_child(top, names[k], &type);
        if (child < 0)
            continue;
        bool found = false;
        if (is_struct_group(child, type)) {
            if (!first)
                first = names[k];
            rc = holds_channel(r, child, 0, &found);
            if (found)
                *root = names[k];
        }
        H5Oclose(child);
    }
    if (!*root)
        *root = first;
    if (*root && !(*root = rb_strdup(*root)))
        rc = rb_err_set(r->err, RB_ENOMEM, "%s: out of memory", r->path);
    rb_h5r_free_names(names, n_names);
    return rc;
}

static int open_classified(rb_h5r *r, const char *path, rb_log *log, rb_err *err, hid_t *top, char **root)
{
    int rc = rb_h5r_open(r, path, log, err);
    if (rc)
        return rc;
    *top = H5Gopen2(r->file, "/", H5P_DEFAULT);
    if (*top < 0)
        return rb_h5r_fail(r, "/", "cannot open the root group");
    return find_root(r, *top, root);
}

int rb_io_classify_mat73(const char *path, rb_log_format *fmt, rb_err *err)
{
    rb_h5r r;
    hid_t top = -1;
    char *root = NULL;
    int rc = open_classified(&r, path, NULL, err, &top, &root);
    if (rc == RB_OK)
        *fmt = root ? RB_FMT_LOGGER_MAT73 : RB_FMT_PLAIN_MAT73;
    rb_free(root);
    if (top >= 0)
        H5Gclose(top);
    rb_h5r_close(&r);
    return rc;
}

int rb_io_read_mat73(const char *path, rb_log_format fmt, rb_log *log, rb_err *err)
{
    rb_h5r r;
    hid_t top = -1, root_grp = -1;
    char *root = NULL, *obj = NULL;
    int rc = open_classified(&r, path, log, err, &top, &root);
    if (rc)
        goto done;
    if (fmt == RB_FMT_PLAIN_MAT73 || !root) {
        log->format = RB_FMT_PLAIN_MAT73;
        rc = rb_h5r_read_plain(&r, true);
        goto done;
    }
    log->format = RB_FMT_LOGGER_MAT73;
    log->root_name = root;
    root = NULL;
    obj = rb_asprintf("/%s", log->root_name);
    root_grp = H5Gopen2(r.file, log->root_name, H5P_DEFAULT);
    if (!obj)
        rc = rb_err_set(err, RB_ENOMEM, "%s: out of memory", path);
    else if (root_grp < 0)
        rc = rb_h5r_fail(&r, obj, "cannot open the root struct");
    else
        rc = logger_struct(&r, root_grp, obj, "", 0);
done:
    if (root_grp >= 0)
        H5Gclose(root_grp);
    if (top >= 0)
        H5Gclose(top);
    rb_free(root);
    rb_free(obj);
    rb_h5r_close(&r);
    return rc;
}
