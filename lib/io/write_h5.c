/*
 * roboest .h5 writers of logs and named arrays (layouts at rb_io_write_h5 and
 * rb_io_write_arrays_h5 below).
 *
 * Bytes are deterministic: no object times (H5Pset_obj_track_times off on the file, group and
 * dataset creation lists), fixed library version bounds (v1.8 format, so HDF5 >= 1.8 reads it),
 * fixed chunking and compression.
 *
 * Files are built in memory (HDF5's core driver without backing store) and written out by
 * rb_io_h5_finish: with the file on disk, a write failing inside H5Fclose (disk full) leaves HDF5
 * 1.10 holding a freed file behind a live id, and its exit handler (H5close) then crashes.
 */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io_internal.h"

enum { CHUNK_BYTES = 64 * 1024, DEFLATE_LEVEL = 4 };

typedef struct h5w {
    const char *shown; /* path named in messages */
    hid_t file, fcpl, fapl, gcpl, lcpl, acpl, str_type;
    rb_io_h5_image image;
    bool on_disk; /* a file written window by window (rb_io_h5_create_deferred): on disk (h5soft.c) */
} h5w;

/* The most specific message on the stack; of an operating-system failure (HDF5 writes "...,
 * errno = 28, error message = 'No space left on device', buf = ...") only the quoted reason. */
static herr_t innermost_error(unsigned n, const H5E_error2_t *e, void *data)
{
    if (n != 0 || !e->desc)
        return 0;
    const char *os = strstr(e->desc, "error message = '");
    const char *end = os ? strchr(os + 17, '\'') : NULL;
    if (os && end)
        snprintf(data, 256, "%.*s", (int)(end - os - 17), os + 17);
    else
        snprintf(data, 256, "%s", e->desc);
    return 0;
}

int rb_io_h5_fail(const char *shown, rb_err *err, const char *fmt, ...)
{
    char what[512], detail[256] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_error, detail);
    return rb_err_set(err, RB_EIO, "%s: %s%s%s", shown, what, detail[0] ? ": " : "", detail);
}

#define h5_fail(w, err, ...) rb_io_h5_fail((w)->shown, err, __VA_ARGS__)

static void close_id(hid_t id, herr_t (*close)(hid_t))
{
    if (id >= 0)
        close(id);
}

static int make_plists(h5w *w, rb_err *err)
{
    w->fcpl = H5Pcreate(H5P_FILE_CREATE);
    w->fapl = H5Pcreate(H5P_FILE_ACCESS);
    w->gcpl = H5Pcreate(H5P_GROUP_CREATE);
    w->lcpl = H5Pcreate(H5P_LINK_CREATE);
    w->acpl = H5Pcreate(H5P_ATTRIBUTE_CREATE);
    w->str_type = H5Tcopy(H5T_C_S1);
    unsigned order = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;
    bool ok = w->fcpl >= 0 && w->fapl >= 0 && w->gcpl >= 0 && w->lcpl >= 0 && w->acpl >= 0 && w->str_type >= 0;
    /* Creation order is kept so a reader can list channels in the order they were written. */
    ok = ok && H5Pset_obj_track_times(w->fcpl, 0) >= 0 && H5Pset_link_creation_order(w->fcpl, order) >= 0;
    ok = ok && H5Pset_obj_track_times(w->gcpl, 0) >= 0 && H5Pset_link_creation_order(w->gcpl, order) >= 0;
    ok = ok && H5Pset_libver_bounds(w->fapl, H5F_LIBVER_V18, H5F_LIBVER_V18) >= 0;
    ok = ok && (w->on_disk ? rb_io_h5_soft_fapl(w->fapl) >= 0 : rb_io_h5_memory_fapl(w->fapl, &w->image) >= 0);
    /* Strong close: H5Fclose releases the file even if an error path left an object open. */
    ok = ok && H5Pset_fclose_degree(w->fapl, H5F_CLOSE_STRONG) >= 0;
    ok = ok && H5Pset_char_encoding(w->lcpl, H5T_CSET_UTF8) >= 0 && H5Pset_char_encoding(w->acpl, H5T_CSET_UTF8) >= 0;
    ok = ok && H5Tset_size(w->str_type, H5T_VARIABLE) >= 0 && H5Tset_cset(w->str_type, H5T_CSET_UTF8) >= 0;
    return ok ? RB_OK : h5_fail(w, err, "cannot set up HDF5 property lists");
}

static void close_plists(h5w *w)
{
    close_id(w->fcpl, H5Pclose);
    close_id(w->fapl, H5Pclose);
    close_id(w->gcpl, H5Pclose);
    close_id(w->lcpl, H5Pclose);
    close_id(w->acpl, H5Pclose);
    close_id(w->str_type, H5Tclose);
}

/* Scalar variable-length UTF-8 string attribute (what h5py writes for a str). */
static int write_str_attr(const h5w *w, hid_t obj, const char *name, const char *value, rb_err *err)
{
    int rc = RB_OK;
    hid_t space = H5Screate(H5S_SCALAR), attr = -1;
    if (space < 0 || (attr = H5Acreate2(obj, name, w->str_type, space, w->acpl, H5P_DEFAULT)) < 0 ||
        H5Awrite(attr, w->str_type, &value) < 0)
        rc = h5_fail(w, err, "cannot write attribute %s", name);
    close_id(attr, H5Aclose);
    close_id(space, H5Sclose);
    return rc;
}

/* 1-D array of variable-length UTF-8 strings. */
static int write_str_array_attr(const h5w *w, hid_t obj, const char *channel, const char *name, char *const *values,
                                size_t n, rb_err *err)
{
    int rc = RB_OK;
    hsize_t dim = n;
    hid_t space = H5Screate_simple(1, &dim, NULL), attr = -1;
    if (space < 0 || (attr = H5Acreate2(obj, name, w->str_type, space, w->acpl, H5P_DEFAULT)) < 0 ||
        (n > 0 && H5Awrite(attr, w->str_type, values) < 0))
        rc = h5_fail(w, err, "channel %s: cannot write attribute %s", channel, name);
    close_id(attr, H5Aclose);
    close_id(space, H5Sclose);
    return rc;
}

/* Chunked, shuffled and deflated double dataset of rank 1 to 3, whole rows of about CHUNK_BYTES per
 * chunk. An empty axis is made unlimited because a chunk may not exceed a fixed maximum of 0. `kind`
 * and `owner` ("channel", "joints/q") name what is written in messages. data NULL: created, not written
 * (a file written window by window: rb_io_h5_create_deferred). */
static int write_doubles(const h5w *w, hid_t grp, const char *kind, const char *owner, const char *name, int rank,
                         const hsize_t *dims, const double *data, rb_err *err)
{
    int rc = RB_OK;
    hsize_t maxdims[3], chunk[3], row_values = 1;
    bool empty = false;
    for (int d = 0; d < rank; d++) {
        empty = empty || dims[d] == 0;
        if (d > 0 && dims[d] > 0)
            row_values = row_values * dims[d];
    }
    hsize_t rows = CHUNK_BYTES / (row_values * sizeof(double));
    if (rows < 1)
        rows = 1;
    for (int d = 0; d < rank; d++) {
        hsize_t want = d == 0 ? rows : dims[d] > 0 ? dims[d] : 1;
        maxdims[d] = dims[d] > 0 ? dims[d] : H5S_UNLIMITED;
        chunk[d] = dims[d] > 0 && dims[d] < want ? dims[d] : want;
    }
    hid_t space = H5Screate_simple(rank, dims, maxdims), dcpl = H5Pcreate(H5P_DATASET_CREATE), dset = -1;
    if (space < 0 || dcpl < 0 || H5Pset_obj_track_times(dcpl, 0) < 0 || H5Pset_chunk(dcpl, rank, chunk) < 0 ||
        H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, DEFLATE_LEVEL) < 0) {
        rc = h5_fail(w, err, "%s %s: cannot set up dataset %s", kind, owner, name);
        goto done;
    }
    dset = H5Dcreate2(grp, name, H5T_IEEE_F64LE, space, w->lcpl, dcpl, H5P_DEFAULT);
    if (dset < 0 || (!empty && data && H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0))
        rc = h5_fail(w, err, "%s %s: cannot write dataset %s", kind, owner, name);
done:
    close_id(dset, H5Dclose);
    close_id(dcpl, H5Pclose);
    close_id(space, H5Sclose);
    return rc;
}

/* Make sure `name` is free in `grp`: a channel may not reuse another channel's dataset names. */
static int check_free(const h5w *w, hid_t grp, const char *channel, const char *name, rb_err *err)
{
    htri_t exists = H5Lexists(grp, name, H5P_DEFAULT);
    if (exists < 0)
        return h5_fail(w, err, "channel %s: cannot look up %s", channel, name);
    if (exists)
        return rb_err_set(err, RB_EINPUT, "%s: channel %s: '%s' is taken by another channel", w->shown, channel, name);
    return RB_OK;
}

/* Open or create in *g the group for one path component below `parent`. */
static int open_component(const h5w *w, hid_t parent, const char *channel, const char *comp, hid_t *g, rb_err *err)
{
    htri_t exists = H5Lexists(parent, comp, H5P_DEFAULT);
    if (exists < 0)
        return h5_fail(w, err, "channel %s: cannot look up group %s", channel, comp);
    if (!exists) {
        *g = H5Gcreate2(parent, comp, w->lcpl, w->gcpl, H5P_DEFAULT);
        return *g >= 0 ? RB_OK : h5_fail(w, err, "channel %s: cannot create group %s", channel, comp);
    }
    /* H5Oopen + H5Iget_type rather than H5Oget_info, whose signature changed in HDF5 1.12. */
    hid_t obj = H5Oopen(parent, comp, H5P_DEFAULT);
    if (obj < 0)
        return h5_fail(w, err, "channel %s: cannot open %s", channel, comp);
    if (H5Iget_type(obj) != H5I_GROUP) {
        H5Oclose(obj);
        return rb_err_set(err, RB_EINPUT, "%s: channel %s: '%s' is taken by another channel's dataset", w->shown,
                          channel, comp);
    }
    *g = obj;
    return RB_OK;
}

/* Group *grp for a channel's slash path, creating the missing ones; components must be non-empty
 * and not "." or ".." (which HDF5 would interpret). */
static int open_channel_group(const h5w *w, const char *channel, hid_t *grp, rb_err *err)
{
    int rc = RB_OK;
    char *path = rb_strdup(channel);
    if (!path)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    *grp = H5Gopen2(w->file, "/", H5P_DEFAULT);
    if (*grp < 0)
        rc = h5_fail(w, err, "cannot open the root group");
    for (char *comp = path, *next; rc == RB_OK && comp; comp = next) {
        next = strchr(comp, '/');
        if (next)
            *next++ = '\0';
        hid_t child = -1;
        if (!comp[0] || strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0)
            rc = rb_err_set(err, RB_EINPUT, "%s: channel '%s': invalid name (empty, '.' or '..' path component)",
                            w->shown, channel);
        else
            rc = open_component(w, *grp, channel, comp, &child, err);
        H5Gclose(*grp);
        *grp = child;
    }
    rb_free(path);
    return rc;
}

static int write_channel(const h5w *w, const rb_channel *ch, rb_err *err)
{
    hid_t grp = -1;
    int rc = open_channel_group(w, ch->name, &grp, err);
    hsize_t dims[2] = {ch->n_samples, ch->n_elements};
    const char *names[] = {"data", "timestamps"};
    for (int k = 0; k < 2 && rc == RB_OK; k++)
        rc = check_free(w, grp, ch->name, names[k], err);
    if (rc == RB_OK)
        rc = write_doubles(w, grp, "channel", ch->name, "data", 2, dims, ch->data, err);
    if (rc == RB_OK)
        rc = write_doubles(w, grp, "channel", ch->name, "timestamps", 1, dims, ch->time, err);
    if (rc == RB_OK)
        rc = write_str_array_attr(w, grp, ch->name, "elements_names", ch->element_names, ch->n_elements, err);
    if (rc == RB_OK)
        rc = write_str_array_attr(w, grp, ch->name, "units_of_measure", ch->units, ch->n_elements, err);
    close_id(grp, H5Gclose);
    return rc;
}

/* Root string attributes: the layout mark `layout` (NULL: none), then attrs but any key `layout`. */
static int write_root_attrs(const h5w *w, const char *layout, const rb_attr *attrs, size_t n, rb_err *err)
{
    int rc = layout ? write_str_attr(w, w->file, layout, RB_H5_LAYOUT_VALUE, err) : RB_OK;
    for (size_t a = 0; rc == RB_OK && a < n; a++) {
        if (layout && strcmp(attrs[a].key, layout) == 0) /* the writer owns the layout mark */
            continue;
        rc = write_str_attr(w, w->file, attrs[a].key, attrs[a].value, err);
    }
    return rc;
}

/* Create the file `file` with the writer's property lists (w->file is -1 on failure). */
static int create_file(h5w *w, const char *file, rb_err *err)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the library never prints */
    int rc = make_plists(w, err);
    if (rc)
        return rc;
    w->file = H5Fcreate(file, H5F_ACC_TRUNC, w->fcpl, w->fapl);
    return w->file >= 0 ? RB_OK : h5_fail(w, err, "cannot create the file");
}

static int close_file(h5w *w, const char *file, int rc, rb_err *err)
{
    rc = rb_io_h5_finish(w->file, &w->image, rc, file, w->shown, NULL, 0, err);
    close_plists(w);
    return rc;
}

/* ---- the file image onto the disk ------------------------------------------------------------------ */
/* The core driver's buffer goes through these callbacks, so the one it frees at close, holding every byte
 * H5Fclose wrote, is kept for rb_io_h5_finish. */
static void *image_malloc(size_t size, H5FD_file_image_op_t op, void *udata)
{
    (void)op;
    rb_io_h5_image *im = udata;
    im->cap = size;
    return rb_malloc(size ? size : 1);
}

static void *image_memcpy(void *dest, const void *src, size_t size, H5FD_file_image_op_t op, void *udata)
{
    (void)op, (void)udata;
    return memcpy(dest, src, size);
}

static void *image_realloc(void *ptr, size_t size, H5FD_file_image_op_t op, void *udata)
{
    (void)op;
    rb_io_h5_image *im = udata;
    void *grown = rb_realloc(ptr, size ? size : 1);
    if (grown)
        im->cap = size;
    return grown;
}

static herr_t image_free(void *ptr, H5FD_file_image_op_t op, void *udata)
{
    rb_io_h5_image *im = udata;
    if (op == H5FD_FILE_IMAGE_OP_FILE_CLOSE && !im->kept)
        im->kept = ptr;
    else
        rb_free(ptr);
    return 0;
}

/* Every copy of the access list shares the writer's record. */
static void *udata_copy(void *udata) { return udata; }
static herr_t udata_free(void *udata)
{
    (void)udata;
    return 0;
}

int rb_io_h5_memory_fapl(int64_t fapl, rb_io_h5_image *im)
{
    H5FD_file_image_callbacks_t cb = {
        image_malloc, image_memcpy, image_realloc, image_free, udata_copy, udata_free, im};
    im->kept = NULL;
    im->cap = 0;
    return H5Pset_fapl_core(fapl, 1 << 20, 0) < 0 || H5Pset_file_image_callbacks(fapl, &cb) < 0 ? -1 : 0;
}

static uint64_t le_uint(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The file's length: the superblock's end-of-file address (the buffer is allocated in whole increments).
 * The superblock is at 0 or after a user block of 512, 1024, ... bytes. 0 if it is not found. */
static size_t image_length(const unsigned char *buf, size_t cap)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    for (size_t at = 0; at + 64 <= cap; at = at ? 2 * at : 512) {
        const unsigned char *sb = buf + at;
        if (memcmp(sb, sig, 8) != 0)
            continue;
        int vers = sb[8], so = vers < 2 ? sb[13] : sb[9];
        /* Version 0/1: 24 (+4 in version 1) bytes of fields, then base, free-space and end-of-file addresses;
         * version 2/3: 12 bytes, then base, extension and end-of-file addresses. */
        size_t field = vers == 0 ? 24 : vers == 1 ? 28 : vers <= 3 ? 12 : 0;
        if (!field || so != 8 || at + field + 3 * 8 > cap)
            return 0;
        uint64_t eof = le_uint(sb + field + 2 * 8, 8);
        return eof <= cap ? (size_t)eof : 0;
    }
    return 0;
}

static int write_image(const char *path, const char *shown, const unsigned char *buf, size_t n, rb_err *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return rb_err_set(err, RB_EIO, "%s: cannot create the file: %s", shown, strerror(errno));
    int e = 0;
    for (size_t done = 0; !e && done < n;) {
        ssize_t k = write(fd, buf + done, n - done);
        if (k > 0)
            done += (size_t)k;
        else if (k < 0 && errno != EINTR)
            e = errno;
    }
    if (close(fd) != 0 && !e)
        e = errno;
    return e ? rb_err_set(err, RB_EIO, "%s: cannot write: %s", shown, strerror(e)) : RB_OK;
}

int rb_io_h5_finish(int64_t file, rb_io_h5_image *im, int rc, const char *path, const char *shown, const void *head,
                    size_t head_len, rb_err *err)
{
    if (file >= 0 && H5Fclose(file) < 0 && rc == RB_OK) /* in memory: only the library itself can fail here */
        rc = rb_io_h5_fail(shown, err, "cannot close the file");
    size_t n = im->kept ? image_length(im->kept, im->cap) : 0;
    if (rc == RB_OK && (n == 0 || n < head_len))
        rc = rb_err_set(err, RB_EIO, "%s: HDF5 left no whole file image in memory", shown);
    if (rc == RB_OK) {
        if (head_len) /* the .mat header over the userblock; .h5 files have none */
            memcpy(im->kept, head, head_len);
        rc = write_image(path, shown, im->kept, n, err);
    }
    rb_free(im->kept);
    im->kept = NULL;
    return rc;
}

/*
 * Layout: root string attribute roboest_layout = "channels/1" plus one per log attribute; one group
 * per channel along its slash path, holding `data` (T x n doubles) and `timestamps` (T), chunked
 * (about 64 KiB per chunk), shuffled and deflated (level 4), and the attributes `elements_names`,
 * `units_of_measure` (n variable-length UTF-8 strings). Zero-sample channels are written with
 * zero-length datasets (their first axis unlimited). Links and groups keep creation order.
 */
/* The file, its root attributes and every channel (data written, or only made when w->on_disk defers it). */
static int write_log(h5w *w, const rb_log *log, const char *file, rb_err *err)
{
    int rc = rb_io_check_utf8(log, w->shown, err);
    if (rc == RB_OK)
        rc = create_file(w, file, err);
    if (rc == RB_OK)
        rc = write_root_attrs(w, RB_H5_LAYOUT_ATTR, log->attrs, log->n_attrs, err);
    for (size_t c = 0; rc == RB_OK && c < log->n_channels; c++)
        rc = write_channel(w, &log->channels[c], err);
    return rc;
}

int rb_io_write_h5(const rb_log *log, const char *file, const char *shown, rb_err *err)
{
    h5w w = {.shown = shown, .file = -1, .fcpl = -1, .fapl = -1, .gcpl = -1, .lcpl = -1, .acpl = -1, .str_type = -1};
    int rc = write_log(&w, log, file, err);
    return close_file(&w, file, rc, err);
}

int rb_io_h5_create_deferred(const rb_log *log, const char *file, const char *shown, int64_t *out, rb_err *err)
{
    h5w w = {.shown = shown, .file = -1, .fcpl = -1, .fapl = -1, .gcpl = -1, .lcpl = -1, .acpl = -1, .str_type = -1};
    w.on_disk = true;
    *out = -1;
    int rc = write_log(&w, log, file, err);
    close_plists(&w);
    if (rc == RB_OK)
        *out = w.file;
    else if (w.file >= 0) /* its writes may have failed: the driver keeps that from HDF5 (h5soft.c) */
        H5Fclose(w.file);
    return rc;
}

/*
 * Named arrays: root string attributes, then one top-level dataset per array with the array's own
 * dimensions (N, N x a or N x a x b doubles, chunked by whole rows, shuffled and deflated as above),
 * in creation order. Names were checked by rb_arrays_write.
 */
int rb_io_write_arrays_h5(const rb_arrays *a, const char *file, const char *shown, rb_err *err)
{
    h5w w = {.shown = shown, .file = -1, .fcpl = -1, .fapl = -1, .gcpl = -1, .lcpl = -1, .acpl = -1, .str_type = -1};
    int rc = create_file(&w, file, err);
    if (rc == RB_OK)
        rc = write_root_attrs(&w, NULL, a->attrs, a->n_attrs, err);
    for (size_t k = 0; rc == RB_OK && k < a->n; k++) {
        const rb_array *arr = &a->items[k];
        hsize_t dims[3] = {arr->dims[0], arr->dims[1], arr->dims[2]};
        rc = write_doubles(&w, w.file, "array", arr->name, arr->name, (int)arr->ndim, dims, arr->data, err);
    }
    return close_file(&w, file, rc, err);
}
