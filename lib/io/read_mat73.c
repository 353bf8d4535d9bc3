/*
 * MATLAB v7.3 reader (HDF5 with a MATLAB user block), through the HDF5 C API directly: the robot
 * logger's layout (io.h), plain files of named matrices (read_h5.c's plain walker) and named
 * arrays (read_h5.c's array walker, plus the attributes' struct).
 *
 * MATLAB stores an array column-major and HDF5 shows its dimensions reversed, so the logger's
 * n x 1 x T `data` appears as [T][1][n]: already sample-major, read with one H5Dread straight into
 * the channel (no copy, peak memory ~ the data itself).
 */
#include <string.h>

#include "h5read.h"

enum {
    MAX_CHARS = 1 << 20, /* characters in one MATLAB char array we decode */
    MAX_CELL = 1000000   /* strings in one cell */
};

static bool is_struct_group(hid_t obj, H5I_type_t type)
{
    char cls[32];
    rb_h5r_matlab_class(obj, cls);
    return type == H5I_GROUP && strcmp(cls, "struct") == 0 && !rb_h5r_attr_true(obj, "MATLAB_empty");
}

/* A leaf struct is a channel when its `data` field is an array (not a nested struct). */
static bool is_channel(hid_t grp) { return rb_h5r_has_dataset(grp, "data"); }

/* A channel's fields around a struct where its data should be: not a channel, nor a group of them. */
static bool has_struct_data(hid_t grp)
{
    H5I_type_t type;
    hid_t data = rb_h5r_open_child(grp, "data", &type);
    bool yes = data >= 0 && is_struct_group(data, type) && rb_h5r_has_dataset(grp, "timestamps");
    if (data >= 0)
        H5Oclose(data);
    return yes;
}

/* Why a field that is not a struct to read is skipped (MATLAB writes an empty struct as a marked dataset). */
static const char *not_channel_reason(hid_t obj)
{
    char cls[32];
    rb_h5r_matlab_class(obj, cls);
    return strcmp(cls, "struct") == 0 ? RB_IO_SKIP_EMPTY_STRUCT : RB_IO_SKIP_NOT_STRUCT;
}

/* RB_EINPUT naming the class unless dset's MATLAB_class is `want` ("numeric": any numeric class). */
static int require_class(rb_h5r *r, hid_t dset, const char *obj, const char *want)
{
    char cls[32];
    rb_h5r_matlab_class(dset, cls);
    bool ok = strcmp(want, "numeric") == 0 ? rb_h5r_is_numeric_class(cls) : strcmp(cls, want) == 0;
    return ok ? RB_OK : rb_h5r_fail(r, obj, "not a %s array (MATLAB_class '%s')", want, cls);
}

/* ---- char arrays and cells of them ---------------------------------------------------------- */

/* A MATLAB char array (uint16 UTF-16 code units, or 8-bit codes) as UTF-8; MATLAB_empty -> "". */
static int read_char(rb_h5r *r, hid_t dset, const char *obj, char **out)
{
    int rank;
    hsize_t dims[RB_H5_MAX_RANK];
    size_t n;
    int rc = require_class(r, dset, obj, "char");
    if (rc)
        return rc;
    if (rb_h5r_attr_true(dset, "MATLAB_empty")) {
        *out = rb_strdup("");
        return *out ? RB_OK : rb_h5r_nomem(r);
    }
    hid_t type = H5Dget_type(dset);
    size_t width = type >= 0 && H5Tget_class(type) == H5T_INTEGER ? H5Tget_size(type) : 0;
    if (type >= 0)
        H5Tclose(type);
    if (width != 1 && width != 2)
        return rb_h5r_fail(r, obj, "char array is not made of 8- or 16-bit codes");
    rc = rb_h5r_check_number_type(r, dset, obj);
    if (rc == RB_OK)
        rc = rb_h5r_shape(r, dset, obj, &rank, dims, &n);
    if (rc == RB_OK && n > MAX_CHARS)
        rc = rb_h5r_fail(r, obj, "char array of %zu characters is too long", n);
    if (rc == RB_OK)
        rc = rb_h5r_check_storage(r, dset, obj, n);
    if (rc)
        return rc;
    void *codes = rb_calloc(n ? n : 1, width);
    if (!codes)
        return rb_h5r_nomem(r);
    if (n && H5Dread(dset, width == 2 ? H5T_NATIVE_UINT16 : H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, codes) < 0)
        rc = rb_h5r_fail(r, obj, "cannot read the characters");
    if (rc == RB_OK) {
        *out = width == 2 ? rb_io_utf16_to_utf8(codes, n) : rb_io_bytes_to_utf8(codes, n);
        if (!*out)
            rc = rb_h5r_nomem(r);
    }
    rb_free(codes);
    return rc;
}

static int read_ref_string(rb_h5r *r, hid_t cell, const char *obj, size_t k, hobj_ref_t *ref, char **out)
{
    char *item = rb_asprintf("%s{%zu}", obj, k + 1); /* MATLAB's 1-based cell index */
    if (!item)
        return rb_h5r_nomem(r);
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

/* The count references of a cell. References are converted even from and to the same type, through a
 * conversion buffer that HDF5 clears before every read: 1 MB by default, under HDF5's global lock. A
 * buffer the size of the references does the same work. */
static bool read_refs(hid_t dset, size_t count, hobj_ref_t *ref)
{
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    bool ok = dxpl >= 0 && H5Pset_buffer(dxpl, count * sizeof *ref, NULL, NULL) >= 0 &&
              H5Dread(dset, H5T_STD_REF_OBJ, H5S_ALL, H5S_ALL, dxpl, ref) >= 0;
    if (dxpl >= 0)
        H5Pclose(dxpl);
    return ok;
}

/* A MATLAB cell of char arrays (object references into /#refs#) as *n strings (caller frees with
 * rb_strings_free); `expect` strings unless SIZE_MAX. */
static int read_cell(rb_h5r *r, hid_t dset, const char *obj, size_t expect, char ***items, size_t *n)
{
    int rank;
    hsize_t dims[RB_H5_MAX_RANK];
    size_t count;
    *items = NULL;
    *n = 0;
    int rc = require_class(r, dset, obj, "cell");
    if (rc)
        return rc;
    if (rb_h5r_attr_true(dset, "MATLAB_empty"))
        count = 0;
    else if ((rc = rb_h5r_shape(r, dset, obj, &rank, dims, &count)))
        return rc;
    if (expect != SIZE_MAX && count != expect)
        return rb_h5r_fail(r, obj, "holds %zu strings for %zu elements", count, expect);
    if (count == 0)
        return RB_OK;
    hid_t type = H5Dget_type(dset);
    bool refs = type >= 0 && H5Tget_class(type) == H5T_REFERENCE;
    if (type >= 0)
        H5Tclose(type);
    if (!refs || count > MAX_CELL)
        return rb_h5r_fail(r, obj, "cell is not an array of object references");
    if ((rc = rb_h5r_check_storage(r, dset, obj, count)))
        return rc;
    hobj_ref_t *ref = rb_calloc(count, sizeof *ref);
    *items = rb_calloc(count, sizeof **items);
    if (!ref || !*items) {
        rc = rb_h5r_nomem(r);
        goto done;
    }
    *n = count;
    if (!read_refs(dset, count, ref)) {
        rc = rb_h5r_fail(r, obj, "cannot read the cell's references");
        goto done;
    }
    for (size_t k = 0; rc == RB_OK && k < count; k++)
        rc = read_ref_string(r, dset, obj, k, &ref[k], &(*items)[k]);
done:
    rb_free(ref);
    if (rc) {
        rb_strings_free(*items, *n);
        *items = NULL;
        *n = 0;
    }
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
    char **items = NULL;
    size_t n = 0;
    char *cobj = rb_h5r_child_path(obj, field);
    if (!cobj)
        rc = rb_h5r_nomem(r);
    else if (type != H5I_DATASET)
        rc = rb_h5r_fail(r, cobj, "not a cell array");
    else if (!rb_h5r_attr_true(cell, "MATLAB_empty"))
        rc = read_cell(r, cell, cobj, ch->n_elements, &items, &n);
    for (size_t i = 0; rc == RB_OK && i < n; i++)
        rc = units ? rb_channel_set_unit(ch, i, items[i], r->err) : rb_channel_set_name(ch, i, items[i], r->err);
    rb_strings_free(items, n);
    rb_free(cobj);
    H5Oclose(cell);
    return rc;
}

/* T from `timestamps` (any vector shape: the logger writes T x 1, others 1 x T). */
static int timestamps_length(rb_h5r *r, hid_t ts, const char *tobj, size_t *T)
{
    int rank;
    hsize_t dims[RB_H5_MAX_RANK];
    int rc = require_class(r, ts, tobj, "numeric");
    if (rc == RB_OK)
        rc = rb_h5r_shape(r, ts, tobj, &rank, dims, T);
    if (rc == RB_OK && !rb_h5r_is_vector(rank, dims))
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
    int rc = require_class(r, data, dobj, "numeric");
    if (rc == RB_OK)
        rc = rb_h5r_shape(r, data, dobj, &rank, dims, &npoints);
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
        return rb_h5r_fail(r, dobj, "channel %s: data holds %zu values that are not %zu samples (timestamps)", channel,
                           npoints, T);
    }
    return RB_OK;
}

static int read_channel(rb_h5r *r, hid_t grp, const char *obj, const char *channel)
{
    size_t T = 0, n = 0;
    bool transposed = false;
    rb_h5r_channel_group c;
    int rc = rb_h5r_channel_group_open(r, grp, obj, &c);
    if (rc)
        goto done;
    if (c.ts < 0 || c.ts_type != H5I_DATASET) {
        rc = rb_h5r_fail(r, c.ts_obj, "missing (channel %s)", channel);
        goto done;
    }
    /* Empty channels: written as MATLAB_empty arrays, or with no samples. */
    if (rb_h5r_attr_true(c.ts, "MATLAB_empty") || rb_h5r_attr_true(c.data, "MATLAB_empty")) {
        rc =
            rb_io_skip(r->log, r->path, channel,
                       rb_h5r_attr_true(c.ts, "MATLAB_empty") ? RB_IO_SKIP_NO_SAMPLES : RB_IO_SKIP_NO_ELEMENTS, r->err);
        goto done;
    }
    if ((rc = timestamps_length(r, c.ts, c.ts_obj, &T)) || T == 0) {
        rc = rc ? rc : rb_io_skip(r->log, r->path, channel, RB_IO_SKIP_NO_SAMPLES, r->err);
        goto done;
    }
    if ((rc = data_layout(r, c.data, c.data_obj, channel, T, &n, &transposed)) || n == 0) {
        rc = rc ? rc : rb_io_skip(r->log, r->path, channel, RB_IO_SKIP_NO_ELEMENTS, r->err);
        goto done;
    }
    if ((rc = rb_h5r_check_storage(r, c.ts, c.ts_obj, T)) || (rc = rb_h5r_check_storage(r, c.data, c.data_obj, T * n)))
        goto done;
    rb_channel *ch;
    rc = rb_h5r_add_channel(r, channel, T, n, c.ts, c.ts_obj, c.data, c.data_obj, transposed, &ch);
    if (rc == RB_OK && (rc = set_strings(r, grp, obj, "elements_names", ch, false)) == RB_OK)
        rc = set_strings(r, grp, obj, "units_of_measure", ch, true);
done:
    rb_h5r_channel_group_close(&c);
    return rc;
}

/* Root-level `yarp_robot_name` (char) and `description_list` (cell of char, joined by ','). */
static int root_field(rb_h5r *r, hid_t dset, const char *obj, const char *name)
{
    int rc = RB_OK;
    char *value = NULL;
    if (strcmp(name, "yarp_robot_name") == 0) {
        rc = read_char(r, dset, obj, &value);
    } else if (strcmp(name, "description_list") == 0) {
        char **items;
        size_t n;
        if ((rc = read_cell(r, dset, obj, SIZE_MAX, &items, &n)))
            return rc;
        value = rb_io_join_strings(items, n, ',');
        rb_strings_free(items, n);
        if (!value)
            rc = rb_h5r_nomem(r);
    } else {
        return rb_io_skip(r->log, r->path, name, not_channel_reason(dset), r->err);
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
    rb_h5r_iter it;
    int rc = rb_h5r_iter_begin(r, grp, obj, true, &it);
    while (rc == RB_OK && rb_h5r_iter_next(&it)) {
        char *child_obj = rb_h5r_child_path(obj, it.name), *channel = rb_io_join_path(prefix, it.name);
        if (!child_obj || !channel)
            rc = rb_h5r_nomem(r);
        else if (depth == 0 && strcmp(it.name, RB_MAT_PROVENANCE_FIELD) == 0)
            ; /* roboest's own metadata, not data */
        else if (it.type == H5I_DATASET && depth == 0)
            rc = root_field(r, it.id, child_obj, it.name);
        else if (is_struct_group(it.id, it.type) && is_channel(it.id))
            rc = read_channel(r, it.id, child_obj, channel);
        else if (is_struct_group(it.id, it.type) && has_struct_data(it.id))
            rc = rb_io_skip(r->log, r->path, channel, RB_IO_SKIP_DATA_STRUCT, r->err);
        else if (is_struct_group(it.id, it.type))
            rc = logger_struct(r, it.id, child_obj, channel, depth + 1);
        else
            rc = rb_io_skip(r->log, r->path, channel, not_channel_reason(it.id), r->err);
        rb_free(child_obj);
        rb_free(channel);
    }
    rb_h5r_iter_end(&it);
    return rc;
}

/* ---- layout: logger or plain ------------------------------------------------------------------ */

static int holds_channel(rb_h5r *r, hid_t grp, int depth, bool *found)
{
    *found = false;
    if (depth > RB_H5_MAX_DEPTH)
        return RB_OK;
    rb_h5r_iter it;
    int rc = rb_h5r_iter_begin(r, grp, "", false, &it);
    while (rc == RB_OK && !*found && rb_h5r_iter_next(&it)) {
        if (is_struct_group(it.id, it.type) && !(*found = is_channel(it.id)))
            rc = holds_channel(r, it.id, depth + 1, found);
    }
    rb_h5r_iter_end(&it);
    return rc;
}

/* The logger's root: with no top-level time vector, the first top-level struct (link name order)
 * holding a channel, else the first top-level struct. *root = NULL: a plain file. */
static int find_root(rb_h5r *r, hid_t top, char **root)
{
    *root = NULL;
    for (size_t k = 0; k < 3; k++)
        if (rb_h5r_has_dataset(top, rb_io_time_names[k]))
            return RB_OK;
    const char *first = NULL, *with_channel = NULL;
    rb_h5r_iter it;
    int rc = rb_h5r_iter_begin(r, top, "/", true, &it);
    while (rc == RB_OK && !with_channel && rb_h5r_iter_next(&it)) {
        bool found = false;
        if (is_struct_group(it.id, it.type)) {
            if (!first)
                first = it.name;
            rc = holds_channel(r, it.id, 0, &found);
            if (found)
                with_channel = it.name;
        }
    }
    const char *chosen = with_channel ? with_channel : first;
    if (chosen && !(*root = rb_strdup(chosen)))
        rc = rb_h5r_nomem(r);
    rb_h5r_iter_end(&it);
    return rc;
}

/* Open the file and find the logger's root struct (*root NULL: a plain file). Call rb_h5r_close
 * whatever it returns. */
static int open_classified(rb_h5r *r, const char *path, rb_log *log, rb_err *err, char **root)
{
    *root = NULL;
    int rc = rb_h5r_open(r, path, log, err);
    if (rc)
        return rc;
    hid_t top = H5Gopen2(r->file, "/", H5P_DEFAULT);
    if (top < 0)
        return rb_h5r_fail(r, "/", "cannot open the root group");
    rc = find_root(r, top, root);
    H5Gclose(top);
    return rc;
}

int rb_io_classify_mat73(const char *path, rb_log_format *fmt, rb_err *err)
{
    rb_h5r r;
    char *root;
    int rc = open_classified(&r, path, NULL, err, &root);
    if (rc == RB_OK)
        *fmt = root ? RB_FMT_LOGGER_MAT73 : RB_FMT_PLAIN_MAT73;
    rb_free(root);
    rb_h5r_close(&r);
    return rc;
}

/* layouts NULL: read the samples; else (logger layout only) record where they are (h5read.h). */
static int read_mat73(const char *path, rb_log_format fmt, rb_log *log, rb_h5r_layouts *layouts, rb_err *err)
{
    rb_h5r r;
    hid_t root_grp = -1;
    char *root, *obj = NULL;
    int rc = open_classified(&r, path, log, err, &root);
    r.layout_only = layouts != NULL;
    if (rc)
        goto done;
    if (layouts && (fmt == RB_FMT_PLAIN_MAT73 || !root)) {
        rc = rb_err_set(err, RB_EINVAL, "%s: only the robot-logger layout is read in parts", path);
        goto done;
    }
    if (fmt == RB_FMT_PLAIN_MAT73 || !root) {
        log->format = RB_FMT_PLAIN_MAT73;
        rc = rb_h5r_read_plain(&r, true);
        goto done;
    }
    log->format = RB_FMT_LOGGER_MAT73;
    log->root_name = root;
    root = NULL;
    obj = rb_h5r_child_path("/", log->root_name);
    root_grp = H5Gopen2(r.file, log->root_name, H5P_DEFAULT);
    if (!obj)
        rc = rb_h5r_nomem(&r);
    else if (root_grp < 0)
        rc = rb_h5r_fail(&r, obj, "cannot open the root struct");
    else
        rc = logger_struct(&r, root_grp, obj, "", 0);
done:
    if (root_grp >= 0)
        H5Gclose(root_grp);
    rb_free(root);
    rb_free(obj);
    rb_h5r_close(&r);
    if (layouts)
        *layouts = (rb_h5r_layouts){r.layouts, r.n_layouts};
    return rc;
}

int rb_io_read_mat73(const char *path, rb_log_format fmt, rb_log *log, rb_err *err)
{
    return read_mat73(path, fmt, log, NULL, err);
}

int rb_io_layout_mat73(const char *path, rb_log *log, rb_h5r_layouts *layouts, rb_err *err)
{
    return read_mat73(path, RB_FMT_LOGGER_MAT73, log, layouts, err);
}

/* ---- named arrays ------------------------------------------------------------------------------ */

/* The char fields of a top-level struct RB_MAT_PROVENANCE_FIELD (as rb_arrays_write makes it) are the
 * attributes; its other fields are ignored. */
static int provenance_attrs(rb_h5r *r, rb_arrays *a)
{
    static const char obj[] = "/" RB_MAT_PROVENANCE_FIELD;
    H5I_type_t type;
    hid_t grp = rb_h5r_open_child(r->file, RB_MAT_PROVENANCE_FIELD, &type);
    if (grp < 0)
        return RB_OK;
    int rc = RB_OK;
    if (is_struct_group(grp, type)) {
        rb_h5r_iter it;
        rc = rb_h5r_iter_begin(r, grp, obj, true, &it);
        while (rc == RB_OK && rb_h5r_iter_next(&it)) {
            char cls[32], *item = NULL, *value = NULL;
            rb_h5r_matlab_class(it.id, cls);
            if (it.type != H5I_DATASET || strcmp(cls, "char") != 0)
                continue;
            if (!(item = rb_h5r_child_path(obj, it.name)))
                rc = rb_h5r_nomem(r);
            else if ((rc = read_char(r, it.id, item, &value)) == RB_OK &&
                     (rc = rb_arrays_set_attr(a, it.name, value, r->err)))
                rb_err_prefix(r->err, rc, "%s: ", r->path);
            rb_free(item);
            rb_free(value);
        }
        rb_h5r_iter_end(&it);
    }
    H5Oclose(grp);
    return rc;
}

int rb_io_read_arrays_mat73(const char *path, rb_arrays *a, rb_err *err)
{
    rb_h5r r;
    int rc = rb_h5r_open(&r, path, NULL, err);
    if (rc == RB_OK)
        rc = rb_h5r_read_arrays(&r, a, true);
    if (rc == RB_OK)
        rc = provenance_attrs(&r, a);
    rb_h5r_close(&r);
    return rc;
}
