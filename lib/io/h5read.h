/*
 * HDF5 reading helpers (h5read.c, h5chunks.c) shared by read_h5.c (roboest and plain .h5) and
 * read_mat73.c (MATLAB v7.3). Private to lib/io's readers. Every failure is an RB_EINPUT
 * "<path>: <object>: <what>" or an RB_ENOMEM naming the path.
 */
#ifndef ROBOEST_IO_H5READ_H
#define ROBOEST_IO_H5READ_H

#include <hdf5.h>

#include "io_internal.h"

enum { RB_H5_MAX_RANK = 32, RB_H5_MAX_DEPTH = 32, RB_H5_MAX_NAME = 4096 };

typedef struct rb_h5r {
    const char *path; /* the file, named in messages */
    hid_t file;
    rb_log *log;
    rb_err *err;
    size_t visits; /* objects looked at: bounded, hard links may form cycles */
    bool entered;  /* rb_io_h5_enter called (h5isolate.h): no fork while the file is read */
    /* Layout only (chunked.c): channels are added without their samples (rb_io_add_channel_meta) and where
     * their datasets are is recorded in layouts, one entry per channel in log order; set after open. */
    bool layout_only;
    struct rb_h5r_layout *layouts;
    size_t n_layouts, cap_layouts;
} rb_h5r;

/* Where a channel's samples are: its datasets' object paths and whether data is stored [n][T]. */
typedef struct rb_h5r_layout {
    char *ts_obj, *data_obj;
    bool transposed;
} rb_h5r_layout;

/* A channel of T samples x n elements from datasets ts (T values) and data (T x n, or [n][T] when transposed),
 * both checked as numeric arrays holding that many values: read whole into a new channel of the log, or in
 * layout-only mode added without samples and its layout recorded. *out (may be NULL): the channel. */
int rb_h5r_add_channel(rb_h5r *r, const char *channel, size_t T, size_t n, hid_t ts, const char *ts_obj, hid_t data,
                       const char *data_obj, bool transposed, rb_channel **out);
void rb_h5r_layouts_free(rb_h5r_layout *l, size_t n);
typedef struct rb_h5r_layouts {
    rb_h5r_layout *items;
    size_t n;
} rb_h5r_layouts;
/* The layout-only reads (read_mat73.c: the robot-logger layout; read_h5.c: roboest and channel-group files): log
 * gets the channels without samples, *layouts (always set, also on error; free with rb_h5r_layouts_free) where
 * their samples are. */
int rb_io_layout_mat73(const char *path, rb_log *log, rb_h5r_layouts *layouts, rb_err *err);
int rb_io_layout_h5(const char *path, rb_log_format fmt, rb_log *log, rb_h5r_layouts *layouts, rb_err *err);

/* Open read-only with HDF5's error printing off; RB_EINPUT naming the path if it is not HDF5.
 * Call rb_h5r_close whatever it returns. Open to close is in-process HDF5 use (rb_io_h5_enter). */
int rb_h5r_open(rb_h5r *r, const char *path, rb_log *log, rb_err *err);
void rb_h5r_close(rb_h5r *r);

/* RB_EINPUT "<path>: <obj>: <what>" (obj may be NULL). */
int rb_h5r_fail(rb_h5r *r, const char *obj, const char *fmt, ...) RB_PRINTF(3, 4);
/* RB_ENOMEM "<path>: out of memory". */
static inline int rb_h5r_nomem(rb_h5r *r) { return rb_err_set(r->err, RB_ENOMEM, "%s: out of memory", r->path); }

/* Path of child `name` of object `obj`, for messages ("/" + "a" is "/a", "/a" + "b" is "/a/b").
 * Caller frees with rb_free; NULL on allocation failure. */
char *rb_h5r_child_path(const char *obj, const char *name);

/* Open child `name` if it is a hard link to a group or dataset: returns its id and *type, or -1.
 * Soft and external links are never followed: they could point anywhere, even into other files. */
hid_t rb_h5r_open_child(hid_t grp, const char *name, H5I_type_t *type);
/* True if child `name` of grp is a dataset (as rb_h5r_open_child finds it). */
bool rb_h5r_has_dataset(hid_t grp, const char *name);

/* The children of a group that rb_h5r_open_child opens, in creation order when the file tracks it,
 * else in name order; every link counts against the visit bound:
 *
 *     rb_h5r_iter it;
 *     int rc = rb_h5r_iter_begin(r, grp, obj, false, &it);
 *     while (rc == RB_OK && rb_h5r_iter_next(&it))
 *         ... it.name, it.id, it.type ...
 *     rb_h5r_iter_end(&it);
 *
 * `skip_internal` passes over names starting with '#' (MATLAB's #refs#, #subsystem#) unopened.
 * it.id is open until the next call: the body must not close it. */
typedef struct rb_h5r_iter {
    hid_t grp;
    bool skip_internal;
    char **names;
    size_t n_names, next;
    const char *name; /* the current child's link name */
    hid_t id;         /* the current child, a group or a dataset */
    H5I_type_t type;  /* H5I_GROUP or H5I_DATASET */
} rb_h5r_iter;

int rb_h5r_iter_begin(rb_h5r *r, hid_t grp, const char *obj, bool skip_internal, rb_h5r_iter *it);
bool rb_h5r_iter_next(rb_h5r_iter *it);
void rb_h5r_iter_end(rb_h5r_iter *it);

/* The `timestamps` and `data` children of a channel group, as rb_h5r_open_child opens them (id -1
 * when absent), with their object paths for messages. Open fails only with RB_ENOMEM: whether a
 * child may be missing is the caller's to say. Close whatever open returned. */
typedef struct rb_h5r_channel_group {
    hid_t ts, data;
    H5I_type_t ts_type, data_type;
    char *ts_obj, *data_obj;
} rb_h5r_channel_group;

int rb_h5r_channel_group_open(rb_h5r *r, hid_t grp, const char *obj, rb_h5r_channel_group *c);
void rb_h5r_channel_group_close(rb_h5r_channel_group *c);

/* An attribute with its type and dataspace (each -1 when HDF5 cannot give it). */
typedef struct rb_h5r_attr {
    hid_t id, type, space;
} rb_h5r_attr;

/* False (nothing to close) when obj has no attribute `name` or it cannot be opened. */
bool rb_h5r_attr_open(hid_t obj, const char *name, rb_h5r_attr *a);
void rb_h5r_attr_close(rb_h5r_attr *a);
/* Memory type for reading variable-length strings of file type `type`, -1 on failure. HDF5 does not
 * convert between ASCII and UTF-8: read in the file's character set. */
hid_t rb_h5r_vlen_string_type(hid_t type);
/* Strip trailing NULs and spaces (fixed-length strings are padded with either). */
void rb_h5r_trim_padding(char *s, size_t len);
/* Scalar string attribute into buf (NUL-terminated, trailing NULs and spaces dropped); false if
 * absent, not a string or longer than cap - 1. */
bool rb_h5r_attr_str(hid_t obj, const char *attr, char *buf, size_t cap);
/* True if obj has a numeric scalar attribute `attr` that is not 0 (MATLAB_empty). */
bool rb_h5r_attr_true(hid_t obj, const char *attr);
/* MATLAB_class attribute of a v7.3 object into cls ("" when absent or unreadable). */
void rb_h5r_matlab_class(hid_t obj, char cls[32]);
/* True for MATLAB's numeric classes: double, single, int8 ... uint64 and logical. */
bool rb_h5r_is_numeric_class(const char *cls);

/* Dataspace of a dataset: rank (0 for scalar), dims, and their product (checked for overflow). */
int rb_h5r_shape(rb_h5r *r, hid_t dset, const char *obj, int *rank, hsize_t dims[RB_H5_MAX_RANK], size_t *npoints);
/* True when at most one dimension differs from 1 (a vector or a scalar, in any orientation). */
bool rb_h5r_is_vector(int rank, const hsize_t *dims);
/* True if the dataset's element type is an integer or a float. */
bool rb_h5r_is_numeric(hid_t dset);
/* An integer or float type whose layout HDF5's conversions can follow: 1, 2, 4 or 8 bytes, its bits
 * (and a float's sign, exponent and mantissa) inside them. libhdf5 1.10 converts a corrupt one by
 * reading past its buffers: check before any read that converts numbers. */
bool rb_h5r_valid_number_type(hid_t type);
/* RB_EINPUT "<path>: <obj>: corrupt number type (...)" unless the dataset's type is valid as above. */
int rb_h5r_check_number_type(rb_h5r *r, hid_t dset, const char *obj);
/* RB_EINPUT unless the file can hold npoints values of the dataset: call before allocating room for
 * them, so that a corrupt header cannot cost a giant allocation. */
int rb_h5r_check_storage(rb_h5r *r, hid_t dset, const char *obj, size_t npoints);
/* All npoints values of a numeric dataset as doubles into out, with one H5Dread (storage checked). */
int rb_h5r_read_doubles(rb_h5r *r, hid_t dset, const char *obj, size_t npoints, double *out);
/* Fast path of the whole-dataset reads above (h5chunks.c): a chunked dataset of native doubles filtered
 * by shuffle and deflate only (what our writers make) is read chunk by chunk as stored bytes, the only
 * part done under HDF5's global lock, then inflated, unshuffled and placed here, so that other threads
 * can use HDF5 meanwhile. npoints is the dataset's size; the values are the ones H5Dread gives. *done
 * false (RB_OK) when the dataset is of another kind or a chunk does not decode: read it with H5Dread,
 * which reads it or says what is wrong. RB_ENOMEM naming the path. */
int rb_h5r_read_chunks(rb_h5r *r, hid_t dset, size_t npoints, double *out, bool *done);
/* Read a numeric dataset of HDF5 dimensions dims (rank 0 to 3) into out with its axes reversed:
 * [d0][d1][d2] becomes [d2][d1][d0] (a MATLAB array, column-major, into row-major order). */
int rb_h5r_read_reversed(rb_h5r *r, hid_t dset, const char *obj, int rank, const hsize_t *dims, double *out);
/* Read a numeric dataset stored [n][T] (row-major) into a channel's sample-major T x n data. */
int rb_h5r_read_transposed(rb_h5r *r, hid_t dset, const char *obj, size_t T, size_t n, double *out);
/* Every scalar string attribute of obj but `skip` (may be NULL) into attrs, in name order; other
 * attributes are ignored. */
int rb_h5r_string_attrs(rb_h5r *r, hid_t obj, const char *objpath, const char *skip, rb_io_attrs attrs);

/* Plain layout (see io.h): a top-level time vector and named numeric matrices. `matlab`: the file
 * is MATLAB v7.3 (dimensions reversed, MATLAB_class attributes, `#` groups skipped). */
int rb_h5r_read_plain(rb_h5r *r, bool matlab);
/* Named arrays (io.h): every numeric top-level dataset, and (not `matlab`) the root's string
 * attributes. `matlab`: dimensions reversed, MATLAB_class and MATLAB_empty honoured, `#` skipped. */
int rb_h5r_read_arrays(rb_h5r *r, rb_arrays *a, bool matlab);

#endif
