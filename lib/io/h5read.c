/* HDF5 reading helpers of h5read.h (read_h5.c, read_mat73.c): files, groups, children, attributes, datasets. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "h5isolate.h"
#include "h5read.h"

enum {
    MAX_CHILDREN = 1000000, /* links in one group */
    MAX_VISITS = 1000000,   /* objects in one file: hard links may form cycles or fan out */
    /* deflate never compresses more than about 1032:1; a dataset claiming more values than its stored
     * bytes could decompress to is corrupt. */
    MAX_DEFLATE_RATIO = 1100
};

/* ---- the fork lock (h5isolate.h) -------------------------------------------------------------- */

static pthread_rwlock_t fork_lock = PTHREAD_RWLOCK_INITIALIZER;
static bool in_child; /* set in a reading child, single-threaded, whose copy of the lock stays held */

void rb_io_h5_enter(void)
{
    if (!in_child)
        pthread_rwlock_rdlock(&fork_lock);
}

void rb_io_h5_leave(void)
{
    if (!in_child)
        pthread_rwlock_unlock(&fork_lock);
}

void rb_io_h5_fork_begin(void) { pthread_rwlock_wrlock(&fork_lock); }

void rb_io_h5_fork_end(bool child)
{
    if (child)
        in_child = true;
    else
        pthread_rwlock_unlock(&fork_lock);
}

bool rb_io_h5_in_child(void) { return in_child; }

/* ---- helpers (h5read.h) --------------------------------------------------------------------- */

int rb_h5r_fail(rb_h5r *r, const char *obj, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (obj)
        return rb_err_set(r->err, RB_EINPUT, "%s: %s: %s", r->path, obj, what);
    return rb_err_set(r->err, RB_EINPUT, "%s: %s", r->path, what);
}

int rb_h5r_open(rb_h5r *r, const char *path, rb_log *log, rb_err *err)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->log = log;
    r->err = err;
    r->file = -1;
    rb_io_h5_enter();
    r->entered = true;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the library never prints */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    /* STRONG: closing the file also closes any object a failure path might have left open. */
    if (fapl < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
        if (fapl >= 0)
            H5Pclose(fapl);
        rb_h5r_close(r);
        return rb_h5r_fail(r, NULL, "HDF5 could not set up file access");
    }
    r->file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (r->file < 0) {
        rb_h5r_close(r);
        return rb_h5r_fail(r, NULL, "not a readable HDF5 file (truncated or corrupt)");
    }
    return RB_OK;
}

void rb_h5r_close(rb_h5r *r)
{
    if (r->file >= 0)
        H5Fclose(r->file);
    r->file = -1;
    if (r->entered)
        rb_io_h5_leave();
    r->entered = false;
}

/* ---- groups and their children ---------------------------------------------------------------- */

char *rb_h5r_child_path(const char *obj, const char *name)
{
    return rb_asprintf("%s%s%s", obj, strcmp(obj, "/") == 0 ? "" : "/", name);
}

typedef struct link_list {
    char **names;
    size_t n, cap;
    bool nomem;
} link_list;

/* H5Literate callback: keep the name of every hard link, up to the count H5Gget_info gave. */
static herr_t collect_link(hid_t grp, const char *name, const H5L_info_t *info, void *data)
{
    (void)grp;
    link_list *l = data;
    if (info->type != H5L_TYPE_HARD || strlen(name) > RB_H5_MAX_NAME)
        return 0;
    if (l->n == l->cap)
        return 1; /* more links than the group said it had: stop, the caller reports it */
    if (!(l->names[l->n] = rb_strdup(name))) {
        l->nomem = true;
        return -1;
    }
    l->n++;
    return 0;
}

/* Names of the hard links in a group, in creation order when tracked, else in name order (caller
 * frees with rb_strings_free). Counts every child against the visit bound. One H5Literate pass:
 * looking the names up one index at a time (H5Lget_name_by_idx) rebuilds a table of the whole group
 * per call in dense link storage, quadratic in the group's size. */
static int children(rb_h5r *r, hid_t grp, const char *obj, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    H5G_info_t info;
    if (H5Gget_info(grp, &info) < 0)
        return rb_h5r_fail(r, obj, "cannot list the group");
    if (info.nlinks > MAX_CHILDREN || r->visits + info.nlinks > MAX_VISITS)
        return rb_h5r_fail(r, obj, "too many objects (corrupt file?)");
    r->visits += (size_t)info.nlinks;
    if (info.nlinks == 0)
        return RB_OK;
    link_list l = {rb_calloc((size_t)info.nlinks, sizeof(char *)), 0, (size_t)info.nlinks, false};
    if (!l.names)
        return rb_err_set(r->err, RB_ENOMEM, "%s: %s: out of memory", r->path, obj);
    /* Creation order keeps the writer's channel order; files that do not track it list by name. */
    herr_t status = H5Literate(grp, H5_INDEX_CRT_ORDER, H5_ITER_INC, NULL, collect_link, &l);
    if (status < 0 && !l.nomem && l.n == 0)
        status = H5Literate(grp, H5_INDEX_NAME, H5_ITER_INC, NULL, collect_link, &l);
    if (status < 0 || l.nomem) {
        rb_strings_free(l.names, l.n);
        if (l.nomem)
            return rb_err_set(r->err, RB_ENOMEM, "%s: %s: out of memory", r->path, obj);
        return rb_h5r_fail(r, obj, "cannot list the group's links");
    }
    *names = l.names;
    *n = l.n;
    return RB_OK;
}

hid_t rb_h5r_open_child(hid_t grp, const char *name, H5I_type_t *type)
{
    H5L_info_t linfo;
    if (H5Lexists(grp, name, H5P_DEFAULT) <= 0 || H5Lget_info(grp, name, &linfo, H5P_DEFAULT) < 0 ||
        linfo.type != H5L_TYPE_HARD)
        return -1;
    hid_t id = H5Oopen(grp, name, H5P_DEFAULT);
    if (id < 0)
        return -1;
    *type = H5Iget_type(id);
    if (*type != H5I_GROUP && *type != H5I_DATASET) {
        H5Oclose(id);
        return -1;
    }
    return id;
}

bool rb_h5r_has_dataset(hid_t grp, const char *name)
{
    H5I_type_t type;
    hid_t id = rb_h5r_open_child(grp, name, &type);
    if (id < 0)
        return false;
    H5Oclose(id);
    return type == H5I_DATASET;
}

int rb_h5r_iter_begin(rb_h5r *r, hid_t grp, const char *obj, bool skip_internal, rb_h5r_iter *it)
{
    memset(it, 0, sizeof *it);
    it->grp = grp;
    it->skip_internal = skip_internal;
    it->id = -1;
    return children(r, grp, obj, &it->names, &it->n_names);
}

bool rb_h5r_iter_next(rb_h5r_iter *it)
{
    if (it->id >= 0)
        H5Oclose(it->id);
    it->id = -1;
    while (it->next < it->n_names) {
        const char *name = it->names[it->next++];
        if (it->skip_internal && name[0] == '#')
            continue;
        it->id = rb_h5r_open_child(it->grp, name, &it->type);
        if (it->id >= 0) {
            it->name = name;
            return true;
        }
    }
    return false;
}

void rb_h5r_iter_end(rb_h5r_iter *it)
{
    if (it->id >= 0)
        H5Oclose(it->id);
    it->id = -1;
    rb_strings_free(it->names, it->n_names);
    it->names = NULL;
    it->n_names = 0;
}

int rb_h5r_channel_group_open(rb_h5r *r, hid_t grp, const char *obj, rb_h5r_channel_group *c)
{
    c->ts_obj = rb_h5r_child_path(obj, "timestamps");
    c->data_obj = rb_h5r_child_path(obj, "data");
    c->ts = rb_h5r_open_child(grp, "timestamps", &c->ts_type);
    c->data = rb_h5r_open_child(grp, "data", &c->data_type);
    return c->ts_obj && c->data_obj ? RB_OK : rb_h5r_nomem(r);
}

void rb_h5r_channel_group_close(rb_h5r_channel_group *c)
{
    if (c->ts >= 0)
        H5Oclose(c->ts);
    if (c->data >= 0)
        H5Oclose(c->data);
    rb_free(c->ts_obj);
    rb_free(c->data_obj);
    c->ts = c->data = -1;
    c->ts_obj = c->data_obj = NULL;
}

/* ---- attributes ------------------------------------------------------------------------------- */

bool rb_h5r_attr_open(hid_t obj, const char *name, rb_h5r_attr *a)
{
    a->type = a->space = -1;
    a->id = H5Aexists(obj, name) > 0 ? H5Aopen(obj, name, H5P_DEFAULT) : -1;
    if (a->id < 0)
        return false;
    a->type = H5Aget_type(a->id);
    a->space = H5Aget_space(a->id);
    return true;
}

void rb_h5r_attr_close(rb_h5r_attr *a)
{
    if (a->space >= 0)
        H5Sclose(a->space);
    if (a->type >= 0)
        H5Tclose(a->type);
    H5Aclose(a->id);
}

hid_t rb_h5r_vlen_string_type(hid_t type)
{
    hid_t mem = H5Tcopy(H5T_C_S1);
    if (mem >= 0 && (H5Tset_size(mem, H5T_VARIABLE) < 0 || H5Tset_cset(mem, H5Tget_cset(type)) < 0)) {
        H5Tclose(mem);
        return -1;
    }
    return mem;
}

void rb_h5r_trim_padding(char *s, size_t len)
{
    s[len] = '\0';
    size_t end = strlen(s);
    while (end > 0 && s[end - 1] == ' ')
        s[--end] = '\0';
}

bool rb_h5r_attr_str(hid_t obj, const char *name, char *buf, size_t cap)
{
    rb_h5r_attr a;
    bool ok = false;
    if (!rb_h5r_attr_open(obj, name, &a))
        return false;
    if (a.type < 0 || a.space < 0 || H5Tget_class(a.type) != H5T_STRING || H5Sget_simple_extent_npoints(a.space) != 1)
        goto done;
    if (H5Tis_variable_str(a.type) > 0) {
        char *s = NULL;
        hid_t mem = rb_h5r_vlen_string_type(a.type);
        if (mem >= 0 && H5Aread(a.id, mem, &s) >= 0) {
            if (s && strlen(s) < cap) {
                memcpy(buf, s, strlen(s) + 1);
                rb_h5r_trim_padding(buf, strlen(buf));
                ok = true;
            }
            H5Dvlen_reclaim(mem, a.space, H5P_DEFAULT, &s);
        }
        if (mem >= 0)
            H5Tclose(mem);
    } else {
        size_t size = H5Tget_size(a.type);
        /* Read with the file's own type: converting NULLTERM <-> NULLPAD strings would drop a byte. */
        if (size > 0 && size < cap && H5Aread(a.id, a.type, buf) >= 0) {
            rb_h5r_trim_padding(buf, size);
            ok = true;
        }
    }
done:
    rb_h5r_attr_close(&a);
    return ok;
}

bool rb_h5r_attr_true(hid_t obj, const char *name)
{
    rb_h5r_attr a;
    long long v = 0;
    if (!rb_h5r_attr_open(obj, name, &a))
        return false;
    bool yes = a.type >= 0 && a.space >= 0 && H5Tget_class(a.type) == H5T_INTEGER && rb_h5r_valid_number_type(a.type) &&
               H5Sget_simple_extent_npoints(a.space) == 1 && H5Aread(a.id, H5T_NATIVE_LLONG, &v) >= 0 && v != 0;
    rb_h5r_attr_close(&a);
    return yes;
}

void rb_h5r_matlab_class(hid_t obj, char cls[32])
{
    if (!rb_h5r_attr_str(obj, "MATLAB_class", cls, 32))
        cls[0] = '\0';
}

bool rb_h5r_is_numeric_class(const char *cls)
{
    static const char *const names[] = {"double", "single", "int8",  "uint8",  "int16",  "uint16",
                                        "int32",  "uint32", "int64", "uint64", "logical"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(cls, names[k]) == 0)
            return true;
    return false;
}

/* ---- datasets --------------------------------------------------------------------------------- */

int rb_h5r_shape(rb_h5r *r, hid_t dset, const char *obj, int *rank, hsize_t dims[RB_H5_MAX_RANK], size_t *npoints)
{
    int rc = RB_OK;
    hid_t space = H5Dget_space(dset);
    if (space < 0)
        return rb_h5r_fail(r, obj, "cannot read the dataspace");
    H5S_class_t cls = H5Sget_simple_extent_type(space);
    int nd = cls == H5S_SIMPLE ? H5Sget_simple_extent_ndims(space) : 0;
    if (cls == H5S_NULL) {
        *rank = 1;
        dims[0] = 0;
    } else if (cls == H5S_SCALAR) {
        *rank = 0;
    } else if (nd < 0 || nd > RB_H5_MAX_RANK || H5Sget_simple_extent_dims(space, dims, NULL) != nd) {
        rc = rb_h5r_fail(r, obj, "unsupported dataspace");
        goto done;
    } else {
        *rank = nd;
    }
    size_t count = 1;
    for (int k = 0; k < *rank; k++) {
        if (dims[k] > SIZE_MAX || !rb_size_mul(count, (size_t)dims[k], &count)) {
            rc = rb_h5r_fail(r, obj, "dimensions overflow");
            goto done;
        }
    }
    *npoints = count;
done:
    H5Sclose(space);
    return rc;
}

bool rb_h5r_is_vector(int rank, const hsize_t *dims)
{
    int non_singleton = 0;
    for (int d = 0; d < rank; d++)
        non_singleton += dims[d] != 1;
    return non_singleton <= 1;
}

bool rb_h5r_valid_number_type(hid_t type)
{
    H5T_class_t cls = H5Tget_class(type);
    size_t size = H5Tget_size(type), prec = H5Tget_precision(type), bits = 8 * size;
    int offset = H5Tget_offset(type);
    H5T_order_t order = H5Tget_order(type);
    bool ok = (cls == H5T_INTEGER || cls == H5T_FLOAT) && (size == 1 || size == 2 || size == 4 || size == 8) &&
              (order == H5T_ORDER_LE || order == H5T_ORDER_BE) && offset >= 0 && prec >= 1 &&
              prec + (size_t)offset <= bits;
    if (!ok || cls == H5T_INTEGER)
        return ok;
    size_t spos, epos, esize, mpos, msize, end = (size_t)offset + prec;
    return H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize) >= 0 && esize >= 1 && msize >= 1 && spos < end &&
           epos + esize <= end && mpos + msize <= end && esize < 64;
}

bool rb_h5r_is_numeric(hid_t dset)
{
    hid_t type = H5Dget_type(dset);
    if (type < 0)
        return false;
    H5T_class_t cls = H5Tget_class(type);
    H5Tclose(type);
    return cls == H5T_INTEGER || cls == H5T_FLOAT;
}

int rb_h5r_check_number_type(rb_h5r *r, hid_t dset, const char *obj)
{
    hid_t type = H5Dget_type(dset);
    bool ok = type >= 0 && rb_h5r_valid_number_type(type);
    size_t size = type >= 0 ? H5Tget_size(type) : 0, prec = type >= 0 ? H5Tget_precision(type) : 0;
    int offset = type >= 0 ? H5Tget_offset(type) : -1;
    if (type >= 0)
        H5Tclose(type);
    return ok ? RB_OK
              : rb_h5r_fail(r, obj, "corrupt number type (%zu bytes, %zu bits at offset %d)", size, prec, offset);
}

int rb_h5r_check_storage(rb_h5r *r, hid_t dset, const char *obj, size_t npoints)
{
    int rc = RB_OK;
    hid_t type = H5Dget_type(dset), dcpl = -1;
    if (type < 0) {
        rc = rb_h5r_fail(r, obj, "cannot read the dataset's type");
        goto done;
    }
    size_t need;
    if (!rb_size_mul(npoints, H5Tget_size(type), &need)) {
        rc = rb_h5r_fail(r, obj, "%zu values overflow", npoints);
        goto done;
    }
    unsigned long long stored = (unsigned long long)H5Dget_storage_size(dset);
    if ((unsigned long long)need <= stored)
        goto done; /* stored whole: whether it is filtered does not matter (and copying the list costs) */
    if ((dcpl = H5Dget_create_plist(dset)) < 0) {
        rc = rb_h5r_fail(r, obj, "cannot read the dataset's type");
        goto done;
    }
    bool filtered = H5Pget_nfilters(dcpl) > 0;
    unsigned long long limit = filtered ? stored * MAX_DEFLATE_RATIO + 4096 : stored;
    if (need > 0 && (unsigned long long)need > limit)
        rc = rb_h5r_fail(r, obj, "claims %zu values (%zu bytes) but the file stores %llu bytes (corrupt?)", npoints,
                         need, stored);
done:
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (type >= 0)
        H5Tclose(type);
    return rc;
}

/* A real numeric dataset whose file can hold npoints values: the checks before every read. */
static int check_numeric(rb_h5r *r, hid_t dset, const char *obj, size_t npoints)
{
    if (!rb_h5r_is_numeric(dset))
        return rb_h5r_fail(r, obj, "not a real numeric array");
    int rc = rb_h5r_check_number_type(r, dset, obj);
    return rc ? rc : rb_h5r_check_storage(r, dset, obj, npoints);
}

/* Our writers' compressed doubles are decompressed outside HDF5's lock (rb_h5r_read_chunks); anything
 * else HDF5 converts to double while reading: no copy of our own. */
static int read_checked_doubles(rb_h5r *r, hid_t dset, const char *obj, size_t npoints, double *out)
{
    bool done;
    int rc = rb_h5r_read_chunks(r, dset, npoints, out, &done);
    if (rc || done)
        return rc;
    if (H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
        return rb_h5r_fail(r, obj, "cannot read the values (truncated or corrupt?)");
    return RB_OK;
}

int rb_h5r_read_doubles(rb_h5r *r, hid_t dset, const char *obj, size_t npoints, double *out)
{
    int rc = check_numeric(r, dset, obj, npoints);
    if (rc || npoints == 0)
        return rc;
    return read_checked_doubles(r, dset, obj, npoints, out);
}

int rb_h5r_read_reversed(rb_h5r *r, hid_t dset, const char *obj, int rank, const hsize_t *dims, double *out)
{
    size_t d[3] = {1, 1, 1}, count = 1, bytes, longest = 1;
    if (rank > 3)
        return rb_h5r_fail(r, obj, "%d dimensions (at most 3 here)", rank);
    for (int k = 0; k < rank; k++) {
        if (dims[k] > SIZE_MAX || !rb_size_mul(count, (size_t)dims[k], &count))
            return rb_h5r_fail(r, obj, "too large");
        d[k] = (size_t)dims[k];
        longest = d[k] > longest ? d[k] : longest;
    }
    if (!rb_size_mul(count, sizeof(double), &bytes))
        return rb_h5r_fail(r, obj, "too large");
    int rc = check_numeric(r, dset, obj, count);
    if (rc || count == 0)
        return rc;
    if (count == longest) /* at most one dimension above 1: the order is the same either way */
        return read_checked_doubles(r, dset, obj, count, out);
    double *tmp = rb_malloc(bytes);
    if (!tmp)
        return rb_err_set(r->err, RB_ENOMEM, "%s: %s: out of memory", r->path, obj);
    rc = read_checked_doubles(r, dset, obj, count, tmp);
    if (rc == RB_OK)
        rb_io_reverse_axes(out, tmp, (size_t)rank, d);
    rb_free(tmp);
    return rc;
}

int rb_h5r_read_transposed(rb_h5r *r, hid_t dset, const char *obj, size_t T, size_t n, double *out)
{
    hsize_t dims[2] = {n, T};
    return rb_h5r_read_reversed(r, dset, obj, 2, dims, out);
}

/* ---- a channel's samples, whole or as a layout (chunked.c) ------------------------------------ */

void rb_h5r_layouts_free(rb_h5r_layout *l, size_t n)
{
    for (size_t i = 0; l && i < n; i++) {
        rb_free(l[i].ts_obj);
        rb_free(l[i].data_obj);
    }
    rb_free(l);
}

static int record_layout(rb_h5r *r, const char *ts_obj, const char *data_obj, bool transposed)
{
    int rc = rb_io_grow((void **)&r->layouts, &r->cap_layouts, r->n_layouts + 1, sizeof *r->layouts, r->err);
    if (rc)
        return rc;
    rb_h5r_layout l = {rb_strdup(ts_obj), rb_strdup(data_obj), transposed};
    if (!l.ts_obj || !l.data_obj) {
        rb_free(l.ts_obj);
        rb_free(l.data_obj);
        return rb_h5r_nomem(r);
    }
    r->layouts[r->n_layouts++] = l;
    return RB_OK;
}

int rb_h5r_add_channel(rb_h5r *r, const char *channel, size_t T, size_t n, hid_t ts, const char *ts_obj, hid_t data,
                       const char *data_obj, bool transposed, rb_channel **out)
{
    rb_channel *ch;
    int rc;
    if (r->layout_only) { /* the checks a whole read makes before reading, then only where the values are */
        if ((rc = check_numeric(r, ts, ts_obj, T)) || (rc = check_numeric(r, data, data_obj, T * n)))
            return rc;
        if ((rc = rb_io_add_channel_meta(r->log, channel, T, n, &ch, r->err)))
            return rb_err_prefix(r->err, rc, "%s: ", r->path);
        if ((rc = record_layout(r, ts_obj, data_obj, transposed)))
            return rc;
    } else {
        if ((rc = rb_log_add_channel(r->log, channel, T, n, &ch, r->err)))
            return rb_err_prefix(r->err, rc, "%s: ", r->path);
        if ((rc = rb_h5r_read_doubles(r, ts, ts_obj, T, ch->time)) ||
            (rc = transposed ? rb_h5r_read_transposed(r, data, data_obj, T, n, ch->data)
                             : rb_h5r_read_doubles(r, data, data_obj, T * n, ch->data)))
            return rc;
    }
    if (out)
        *out = ch;
    return RB_OK;
}
