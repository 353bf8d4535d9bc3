/*
 * HDF5 readers: the roboest .h5 layout, plain .h5 files of named datasets and named arrays (the HDF5
 * helpers they share with read_mat73.c are in h5read.c). Layouts are described in io.h.
 */
#include <stdio.h>
#include <string.h>

#include "h5read.h"

/* ---- plain layout ----------------------------------------------------------------------------- */

/* A dataset that can be a plain channel or the time vector: numeric, real, not MATLAB-empty. */
static bool plain_numeric(hid_t dset, bool matlab)
{
    if (!rb_h5r_is_numeric(dset))
        return false;
    if (!matlab)
        return true;
    char cls[32];
    rb_h5r_matlab_class(dset, cls);
    return rb_h5r_is_numeric_class(cls) && !rb_h5r_attr_true(dset, "MATLAB_empty");
}

/* A group to walk into: any group of a plain .h5 file, only structs in a MATLAB file. */
static bool plain_walks_into(hid_t grp, bool matlab)
{
    if (!matlab)
        return true;
    char cls[32];
    rb_h5r_matlab_class(grp, cls);
    return strcmp(cls, "struct") == 0;
}

/* Rows and columns in the writer's view: MATLAB's (HDF5 dims reversed) or numpy's. */
static bool plain_rows_cols(int rank, const hsize_t *dims, bool matlab, size_t *rows, size_t *cols)
{
    if (rank == 0) {
        *rows = *cols = 1;
    } else if (rank == 1) {
        *rows = (size_t)dims[0];
        *cols = 1;
    } else if (rank == 2) {
        *rows = (size_t)dims[matlab ? 1 : 0];
        *cols = (size_t)dims[matlab ? 0 : 1];
    } else {
        return false;
    }
    return true;
}

typedef struct plain_ctx {
    rb_h5r *r;
    bool matlab;
    size_t T;
    const double *time;
    const char *time_name;
} plain_ctx;

static int plain_dataset(plain_ctx *p, hid_t dset, const char *obj, const char *channel)
{
    int rank;
    hsize_t dims[RB_H5_MAX_RANK];
    size_t npoints, rows = 0, cols = 0, n;
    bool transposed;
    if (!plain_numeric(dset, p->matlab))
        return rb_io_skip_plain(p->r->log, p->r->path, channel, -1, 0, 0, p->T, p->r->err);
    int rc = rb_h5r_shape(p->r, dset, obj, &rank, dims, &npoints);
    if (rc)
        return rc;
    if (!plain_rows_cols(rank, dims, p->matlab, &rows, &cols) || !rb_io_plain_shape(rows, cols, p->T, &n, &transposed))
        return rb_io_skip_plain(p->r->log, p->r->path, channel, rank, rows, cols, p->T, p->r->err);
    rb_channel *ch;
    rc = rb_log_add_channel(p->r->log, channel, p->T, n, &ch, p->r->err);
    if (rc)
        return rb_err_prefix(p->r->err, rc, "%s: ", p->r->path);
    memcpy(ch->time, p->time, p->T * sizeof(double));
    /* In memory the dataset is [rows][cols] (numpy) or [cols][rows] (MATLAB, column-major). */
    bool sample_major = p->matlab ? transposed : !transposed;
    if (sample_major)
        return rb_h5r_read_doubles(p->r, dset, obj, npoints, ch->data);
    return rb_h5r_read_transposed(p->r, dset, obj, p->T, n, ch->data);
}

static int plain_group(plain_ctx *p, hid_t grp, const char *obj, const char *prefix, int depth)
{
    if (depth > RB_H5_MAX_DEPTH)
        return rb_h5r_fail(p->r, obj, "groups nested too deeply");
    rb_h5r_iter it;
    int rc = rb_h5r_iter_begin(p->r, grp, obj, p->matlab, &it); /* #refs#, #subsystem#: MATLAB's */
    while (rc == RB_OK && rb_h5r_iter_next(&it)) {
        if (depth == 0 && strcmp(it.name, p->time_name) == 0)
            continue;
        char *child_obj = rb_h5r_child_path(obj, it.name), *channel = rb_io_join_path(prefix, it.name);
        if (!child_obj || !channel)
            rc = rb_h5r_nomem(p->r);
        else if (it.type == H5I_DATASET)
            rc = plain_dataset(p, it.id, child_obj, channel);
        else if (plain_walks_into(it.id, p->matlab))
            rc = plain_group(p, it.id, child_obj, channel, depth + 1);
        rb_free(child_obj);
        rb_free(channel);
    }
    rb_h5r_iter_end(&it);
    return rc;
}

/* The time vector: the first of time, t, timestamps that is a numeric vector at the top level. */
static int plain_time(plain_ctx *p, hid_t root, double **time)
{
    for (size_t k = 0; k < 3; k++) {
        const char *name = rb_io_time_names[k];
        H5I_type_t type;
        hid_t dset = rb_h5r_open_child(root, name, &type);
        if (dset < 0)
            continue;
        int rank, rc = RB_OK;
        hsize_t dims[RB_H5_MAX_RANK];
        size_t npoints;
        bool usable = type == H5I_DATASET && plain_numeric(dset, p->matlab);
        if (usable)
            rc = rb_h5r_shape(p->r, dset, name, &rank, dims, &npoints);
        if (usable && rc == RB_OK && rb_h5r_is_vector(rank, dims)) {
            char obj[64];
            snprintf(obj, sizeof obj, "/%s", name);
            rc = rb_h5r_check_storage(p->r, dset, obj, npoints);
            if (rc == RB_OK) {
                *time = rb_calloc(npoints ? npoints : 1, sizeof(double));
                rc = *time ? rb_h5r_read_doubles(p->r, dset, obj, npoints, *time) : rb_h5r_nomem(p->r);
            }
            p->T = npoints;
            p->time_name = name;
            H5Oclose(dset);
            return rc;
        }
        H5Oclose(dset);
        if (rc)
            return rc;
    }
    return rb_h5r_fail(p->r, NULL, "no time vector (time, t or timestamps)%s",
                       p->matlab ? "" : " and no channel group (a group holding datasets data and timestamps)");
}

int rb_h5r_read_plain(rb_h5r *r, bool matlab)
{
    plain_ctx p = {r, matlab, 0, NULL, ""};
    double *time = NULL;
    hid_t root = H5Gopen2(r->file, "/", H5P_DEFAULT);
    if (root < 0)
        return rb_h5r_fail(r, "/", "cannot open the root group");
    int rc = plain_time(&p, root, &time);
    p.time = time;
    if (rc == RB_OK)
        rc = plain_group(&p, root, "/", "", 0);
    rb_free(time);
    H5Gclose(root);
    return rc;
}

/* ---- roboest layout --------------------------------------------------------------------------- */

/* A 1-D string array attribute (variable- or fixed-length) of one string per element of ch. */
static int read_string_attr(rb_h5r *r, hid_t obj, const char *name, const char *objpath, rb_channel *ch, bool units)
{
    int rc = RB_OK;
    rb_h5r_attr a;
    hid_t mem = -1;
    char **vbuf = NULL, *fbuf = NULL;
    bool vread = false;
    if (!rb_h5r_attr_open(obj, name, &a))
        return RB_OK; /* optional: names default to "0", "1", ..., units to "" */
    hssize_t count = a.space >= 0 ? H5Sget_simple_extent_npoints(a.space) : -1;
    if (a.type < 0 || H5Tget_class(a.type) != H5T_STRING || count < 0) {
        rc = rb_h5r_fail(r, objpath, "attribute %s is not an array of strings", name);
        goto done;
    }
    if ((size_t)count != ch->n_elements) {
        rc = rb_h5r_fail(r, objpath, "attribute %s holds %lld strings for %zu elements", name, (long long)count,
                         ch->n_elements);
        goto done;
    }
    size_t n = (size_t)count, size = H5Tget_size(a.type), bytes;
    if (n == 0)
        goto done;
    if (H5Tis_variable_str(a.type) > 0) {
        mem = rb_h5r_vlen_string_type(a.type);
        vbuf = rb_calloc(n, sizeof *vbuf);
        if (mem < 0 || !vbuf) {
            rc = rb_h5r_nomem(r);
            goto done;
        }
        if (H5Aread(a.id, mem, vbuf) < 0) {
            rc = rb_h5r_fail(r, objpath, "cannot read attribute %s", name);
            goto done;
        }
        vread = true;
    } else {
        if (size == 0 || size > RB_H5_MAX_NAME || !rb_size_mul(n, size, &bytes)) {
            rc = rb_h5r_fail(r, objpath, "attribute %s: unsupported string size", name);
            goto done;
        }
        if (!(fbuf = rb_malloc(bytes))) {
            rc = rb_h5r_nomem(r);
            goto done;
        }
        if (H5Aread(a.id, a.type, fbuf) < 0) {
            rc = rb_h5r_fail(r, objpath, "cannot read attribute %s", name);
            goto done;
        }
    }
    for (size_t i = 0; rc == RB_OK && i < n; i++) {
        char fixed[RB_H5_MAX_NAME + 1];
        const char *s = fixed;
        if (vbuf) {
            s = vbuf[i] ? vbuf[i] : "";
        } else {
            memcpy(fixed, fbuf + i * size, size);
            rb_h5r_trim_padding(fixed, size);
        }
        rc = units ? rb_channel_set_unit(ch, i, s, r->err) : rb_channel_set_name(ch, i, s, r->err);
    }
done:
    if (vread)
        H5Dvlen_reclaim(mem, a.space, H5P_DEFAULT, vbuf);
    rb_free(vbuf);
    rb_free(fbuf);
    if (mem >= 0)
        H5Tclose(mem);
    rb_h5r_attr_close(&a);
    return rc;
}

/* "(3, 7)": a dataset's shape for messages. */
static void shape_text(int rank, const hsize_t *dims, char *buf, size_t n)
{
    size_t used = (size_t)snprintf(buf, n, "(");
    for (int k = 0; k < rank && used < n; k++)
        used += (size_t)snprintf(buf + used, n - used, k ? ", %llu" : "%llu", (unsigned long long)dims[k]);
    if (used < n)
        snprintf(buf + used, n - used, rank == 1 ? ",)" : ")");
}

/* Channel group: `timestamps` a vector of T, `data` (T,) or (T, n), or (n, T) with n != T (written
 * column-major, e.g. from MATLAB or Julia) taken transposed; string attributes. */
static int roboest_channel(rb_h5r *r, hid_t grp, const char *obj, const char *name)
{
    int trank, drank;
    hsize_t tdims[RB_H5_MAX_RANK], ddims[RB_H5_MAX_RANK];
    size_t T, npoints, n = 1;
    bool transposed = false;
    rb_h5r_channel_group c;
    int rc = rb_h5r_channel_group_open(r, grp, obj, &c);
    if (rc)
        goto done;
    if (c.ts < 0 || c.ts_type != H5I_DATASET || c.data < 0 || c.data_type != H5I_DATASET) {
        bool no_ts = c.ts < 0 || c.ts_type != H5I_DATASET;
        rc = rb_h5r_fail(r, obj,
                         "channel group without a dataset `%s` (it has `%s`; a channel group holds `data` and "
                         "`timestamps`)",
                         no_ts ? "timestamps" : "data", no_ts ? "data" : "timestamps");
        goto done;
    }
    if ((rc = rb_h5r_shape(r, c.ts, c.ts_obj, &trank, tdims, &T)) ||
        (rc = rb_h5r_shape(r, c.data, c.data_obj, &drank, ddims, &npoints)))
        goto done;
    char tshape[96], dshape[96];
    shape_text(trank, tdims, tshape, sizeof tshape);
    shape_text(drank, ddims, dshape, sizeof dshape);
    if (trank < 1 || !rb_h5r_is_vector(trank, tdims)) {
        rc = rb_h5r_fail(r, c.ts_obj, "shape %s is not a vector of timestamps (channel %s)", tshape, name);
        goto done;
    }
    if (drank == 2 && ddims[0] != T && ddims[1] == T) {
        n = (size_t)ddims[0];
        transposed = true;
    } else if ((drank == 1 || drank == 2) && ddims[0] == T) {
        n = drank == 2 ? (size_t)ddims[1] : 1;
    } else {
        rc = rb_h5r_fail(r, c.data_obj,
                         "shape %s does not fit %zu timestamps (expected (%zu,), (%zu, n) or (n, %zu); channel %s)",
                         dshape, T, T, T, T, name);
        goto done;
    }
    if ((rc = rb_h5r_check_storage(r, c.ts, c.ts_obj, T)) ||
        (rc = rb_h5r_check_storage(r, c.data, c.data_obj, npoints)))
        goto done;
    rb_channel *ch;
    if ((rc = rb_h5r_add_channel(r, name, T, n, c.ts, c.ts_obj, c.data, c.data_obj, transposed, &ch)))
        goto done;
    if ((rc = read_string_attr(r, grp, "elements_names", obj, ch, false)) == RB_OK)
        rc = read_string_attr(r, grp, "units_of_measure", obj, ch, true);
done:
    rb_h5r_channel_group_close(&c);
    return rc;
}

/* Every group below the root holding `data` or `timestamps` is a channel (a lone one is an error saying
 * which is missing); other groups are walked into. */
static int roboest_group(rb_h5r *r, hid_t grp, const char *obj, const char *prefix, int depth)
{
    if (depth > RB_H5_MAX_DEPTH)
        return rb_h5r_fail(r, obj, "groups nested too deeply");
    int rc;
    if (depth > 0 && (rb_h5r_has_dataset(grp, "data") || rb_h5r_has_dataset(grp, "timestamps")) &&
        (rc = roboest_channel(r, grp, obj, prefix)))
        return rc;
    rb_h5r_iter it;
    rc = rb_h5r_iter_begin(r, grp, obj, false, &it);
    while (rc == RB_OK && rb_h5r_iter_next(&it)) {
        if (it.type != H5I_GROUP)
            continue;
        char *child_obj = rb_h5r_child_path(obj, it.name), *channel = rb_io_join_path(prefix, it.name);
        rc = child_obj && channel ? roboest_group(r, it.id, child_obj, channel, depth + 1) : rb_h5r_nomem(r);
        rb_free(child_obj);
        rb_free(channel);
    }
    rb_h5r_iter_end(&it);
    return rc;
}

typedef struct attr_ctx {
    rb_h5r *r;
    const char *skip;
    rb_io_attrs attrs;
    int rc;
} attr_ctx;

static herr_t string_attr(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    attr_ctx *ctx = data;
    char value[8192];
    if ((ctx->skip && strcmp(name, ctx->skip) == 0) || !rb_h5r_attr_str(loc, name, value, sizeof value))
        return 0; /* non-string attributes are ignored */
    ctx->rc = rb_io_attrs_set(ctx->attrs, name, value, ctx->r->err);
    if (ctx->rc)
        rb_err_prefix(ctx->r->err, ctx->rc, "%s: ", ctx->r->path);
    return ctx->rc ? 1 : 0;
}

int rb_h5r_string_attrs(rb_h5r *r, hid_t obj, const char *objpath, const char *skip, rb_io_attrs attrs)
{
    attr_ctx ctx = {r, skip, attrs, RB_OK};
    hsize_t idx = 0;
    if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, string_attr, &ctx) < 0 && ctx.rc == RB_OK)
        return rb_h5r_fail(r, objpath, "cannot read the attributes");
    return ctx.rc;
}

/* `marked`: the roboest layout, whose root attribute must name the version read; else any file of channel groups. */
static int read_roboest(rb_h5r *r, bool marked)
{
    char layout[64];
    hid_t root = H5Gopen2(r->file, "/", H5P_DEFAULT);
    if (root < 0)
        return rb_h5r_fail(r, "/", "cannot open the root group");
    int rc = RB_OK;
    if (marked &&
        (!rb_h5r_attr_str(root, "roboest_layout", layout, sizeof layout) || strcmp(layout, "channels/1") != 0)) {
        rc = rb_h5r_fail(r, NULL, "unsupported roboest layout (attribute roboest_layout is not channels/1)");
        goto done;
    }
    /* the layout marker is not log metadata */
    if ((rc = rb_h5r_string_attrs(r, root, "/", RB_H5_LAYOUT_ATTR, RB_IO_ATTRS(r->log))) == RB_OK)
        rc = roboest_group(r, root, "/", "", 0);
done:
    H5Gclose(root);
    return rc;
}

/* ---- named arrays ------------------------------------------------------------------------------ */

/* MATLAB size of an array marked MATLAB_empty: its dataset holds the dimensions, one of them 0. */
static int matlab_empty_dims(rb_h5r *r, hid_t dset, const char *obj, int *rank, size_t mdims[RB_H5_MAX_RANK])
{
    int hrank;
    hsize_t hdims[RB_H5_MAX_RANK];
    size_t n;
    double d[RB_H5_MAX_RANK];
    int rc = rb_h5r_shape(r, dset, obj, &hrank, hdims, &n);
    if (rc == RB_OK && (n < 1 || n > RB_H5_MAX_RANK))
        rc = rb_h5r_fail(r, obj, "empty array with %zu dimensions", n);
    if (rc == RB_OK)
        rc = rb_h5r_read_doubles(r, dset, obj, n, d);
    bool zero = false;
    for (size_t k = 0; rc == RB_OK && k < n; k++) {
        if (!(d[k] >= 0 && d[k] <= 1e15 && d[k] == (double)(size_t)d[k]))
            return rb_h5r_fail(r, obj, "empty array with a dimension of %g", d[k]);
        mdims[k] = (size_t)d[k];
        zero = zero || mdims[k] == 0;
    }
    if (rc == RB_OK && !zero)
        rc = rb_h5r_fail(r, obj, "marked empty (MATLAB_empty) but no dimension is 0");
    *rank = (int)n;
    return rc;
}

/* A top-level dataset: an array when it is numeric (MATLAB: of a numeric class), else skipped. */
static int array_dataset(rb_h5r *r, rb_arrays *a, hid_t dset, const char *obj, const char *name, bool matlab)
{
    int rank;
    hsize_t dims[RB_H5_MAX_RANK];
    size_t npoints, mdims[RB_H5_MAX_RANK];
    rb_array *arr;
    if (matlab) {
        char cls[32];
        rb_h5r_matlab_class(dset, cls);
        if (!rb_h5r_is_numeric_class(cls))
            return RB_OK; /* char, cell, struct arrays, function handles, ... */
        if (rb_h5r_attr_true(dset, "MATLAB_empty")) {
            int rc = matlab_empty_dims(r, dset, obj, &rank, mdims);
            return rc ? rc : rb_io_add_matlab_array(a, r->path, obj, name, rank, mdims, NULL, r->err);
        }
    }
    if (!rb_h5r_is_numeric(dset))
        return RB_OK; /* strings, compounds (MATLAB's complex numbers), references */
    int rc = rb_h5r_shape(r, dset, obj, &rank, dims, &npoints);
    if (rc == RB_OK)
        rc = rb_h5r_check_storage(r, dset, obj, npoints);
    if (rc)
        return rc;
    if (!matlab) {
        if (rank > 3)
            return rb_h5r_fail(r, obj, "%d dimensions (arrays have 1 to 3)", rank);
        size_t d[3] = {1, 1, 1};
        for (int k = 0; k < rank; k++)
            d[k] = (size_t)dims[k];
        if ((rc = rb_arrays_add(a, name, rank ? (size_t)rank : 1, d, &arr, r->err)))
            return rb_err_prefix(r->err, rc, "%s: ", r->path);
        return rb_h5r_read_doubles(r, dset, obj, npoints, arr->data);
    }
    /* MATLAB d0 x d1 x ... is HDF5 [...][d1][d0], in column-major order. */
    int hrank = rank;
    const hsize_t *hdims = dims;
    for (int k = 0; k < rank; k++)
        mdims[k] = (size_t)dims[rank - 1 - k];
    if (rank == 0)
        mdims[0] = 1;
    if ((rc = rb_io_add_matlab_array(a, r->path, obj, name, rank ? rank : 1, mdims, &arr, r->err)))
        return rc;
    while (hrank > 3 && hdims[0] == 1) { /* MATLAB's trailing singleton dimensions */
        hdims++;
        hrank--;
    }
    return rb_h5r_read_reversed(r, dset, obj, hrank, hdims, arr->data);
}

int rb_h5r_read_arrays(rb_h5r *r, rb_arrays *a, bool matlab)
{
    hid_t root = H5Gopen2(r->file, "/", H5P_DEFAULT);
    if (root < 0)
        return rb_h5r_fail(r, "/", "cannot open the root group");
    rb_h5r_iter it;
    int rc = rb_h5r_iter_begin(r, root, "/", matlab, &it); /* #refs#, #subsystem#: MATLAB's */
    while (rc == RB_OK && rb_h5r_iter_next(&it)) {
        if (it.type != H5I_DATASET)
            continue; /* groups (MATLAB structs) are skipped */
        char *obj = rb_h5r_child_path("/", it.name);
        rc = obj ? array_dataset(r, a, it.id, obj, it.name, matlab) : rb_h5r_nomem(r);
        rb_free(obj);
    }
    rb_h5r_iter_end(&it);
    if (rc == RB_OK && !matlab)
        rc = rb_h5r_string_attrs(r, root, "/", NULL, RB_IO_ATTRS(a));
    H5Gclose(root);
    return rc;
}

int rb_io_read_arrays_h5(const char *path, rb_arrays *a, rb_err *err)
{
    rb_h5r r;
    int rc = rb_h5r_open(&r, path, NULL, err);
    if (rc == RB_OK)
        rc = rb_h5r_read_arrays(&r, a, false);
    rb_h5r_close(&r);
    return rc;
}

/* True when a group below grp holds a dataset `data` or `timestamps` (a channel group). */
static bool has_channel_group(rb_h5r *r, hid_t grp, const char *obj, int depth, int *rc)
{
    if (depth > 0 && (rb_h5r_has_dataset(grp, "data") || rb_h5r_has_dataset(grp, "timestamps")))
        return true;
    if (depth > RB_H5_MAX_DEPTH)
        return false;
    bool found = false;
    rb_h5r_iter it;
    *rc = rb_h5r_iter_begin(r, grp, obj, false, &it);
    while (*rc == RB_OK && !found && rb_h5r_iter_next(&it))
        found = it.type == H5I_GROUP && has_channel_group(r, it.id, it.name, depth + 1, rc);
    rb_h5r_iter_end(&it);
    return found;
}

/* A file without the layout attribute: plain when it has a top-level time vector, else channel groups when
 * it has one (a file of neither is plain, whose reader says what is missing). */
static int plain_or_groups(rb_h5r *r, rb_log_format *fmt)
{
    *fmt = RB_FMT_PLAIN_H5;
    hid_t root = H5Gopen2(r->file, "/", H5P_DEFAULT);
    if (root < 0)
        return rb_h5r_fail(r, "/", "cannot open the root group");
    bool has_time = false;
    for (size_t k = 0; k < 3 && !has_time; k++) {
        H5I_type_t type;
        hid_t dset = rb_h5r_open_child(root, rb_io_time_names[k], &type);
        if (dset < 0)
            continue;
        int rank = 0;
        hsize_t dims[RB_H5_MAX_RANK];
        size_t npoints;
        rb_err quiet; /* a time vector that cannot be read is the plain reader's to report */
        rb_h5r probe = *r;
        probe.err = &quiet;
        has_time = type == H5I_DATASET && plain_numeric(dset, false) &&
                   rb_h5r_shape(&probe, dset, rb_io_time_names[k], &rank, dims, &npoints) == RB_OK &&
                   rb_h5r_is_vector(rank, dims);
        H5Oclose(dset);
    }
    int rc = RB_OK;
    if (!has_time && has_channel_group(r, root, "/", 0, &rc))
        *fmt = RB_FMT_GROUPS_H5;
    H5Gclose(root);
    return rc;
}

int rb_io_classify_h5(const char *path, rb_log_format *fmt, rb_err *err)
{
    rb_h5r r;
    int rc = rb_h5r_open(&r, path, NULL, err);
    if (rc)
        return rc;
    if (H5Aexists(r.file, "roboest_layout") > 0)
        *fmt = RB_FMT_ROBOEST_H5;
    else if ((rc = plain_or_groups(&r, fmt)) != RB_OK)
        *fmt = RB_FMT_PLAIN_H5;
    rb_h5r_close(&r);
    return rc;
}

int rb_io_read_h5(const char *path, rb_log_format fmt, rb_log *log, rb_err *err)
{
    rb_h5r r;
    int rc = rb_h5r_open(&r, path, log, err);
    if (rc)
        return rc;
    rc = fmt == RB_FMT_PLAIN_H5 ? rb_h5r_read_plain(&r, false) : read_roboest(&r, fmt == RB_FMT_ROBOEST_H5);
    rb_h5r_close(&r);
    return rc;
}

int rb_io_layout_h5(const char *path, rb_log_format fmt, rb_log *log, rb_h5r_layouts *layouts, rb_err *err)
{
    rb_h5r r;
    if (fmt == RB_FMT_PLAIN_H5)
        return rb_err_set(err, RB_EINVAL, "%s: a plain .h5 file is not read in parts", path);
    int rc = rb_h5r_open(&r, path, log, err);
    r.layout_only = true;
    if (!rc)
        rc = read_roboest(&r, fmt == RB_FMT_ROBOEST_H5);
    rb_h5r_close(&r);
    *layouts = (rb_h5r_layouts){r.layouts, r.n_layouts};
    return rc;
}
