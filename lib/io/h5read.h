/*
 * HDF5 reading helpers shared by read_h5.c (roboest and plain .h5) and read_mat73.c (MATLAB v7.3).
 * Private to lib/io's readers. Every failure is an RB_EINPUT "<path>: <object>: <what>".
 */
#ifndef ROBOEST_IO_H5READ_H
#define ROBOEST_IO_H5READ_H

#include <hdf5.h>

#include "io_internal.h"

enum { RB_H5_MAX_RANK = 32, RB_H5_MAX_DEPTH = 32 };

typedef struct rb_h5r {
    const char *path; /* the file, named in messages */
    hid_t file;
    rb_log *log;
    rb_err *err;
    size_t visits; /* objects looked at: bounded, hard links may form cycles */
} rb_h5r;

/* Open read-only with HDF5's error printing off; RB_EINPUT naming the path if it is not HDF5. */
int rb_h5r_open(rb_h5r *r, const char *path, rb_log *log, rb_err *err);
void rb_h5r_close(rb_h5r *r);

/* RB_EINPUT "<path>: <obj>: <what>" (obj may be NULL). */
int rb_h5r_fail(rb_h5r *r, const char *obj, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Names of the hard links in a group, in creation order when tracked, else in name order (caller
 * frees with rb_h5r_free_names). Counts every child against the visit bound. */
int rb_h5r_children(rb_h5r *r, hid_t grp, const char *obj, char ***names, size_t *n);
void rb_h5r_free_names(char **names, size_t n);

/* Open child `name` if it is a hard link to a group or dataset: returns its id and *type, or -1. */
hid_t rb_h5r_open_child(hid_t grp, const char *name, H5I_type_t *type);

/* Scalar string attribute into buf (NUL-terminated, trailing NULs and spaces dropped); false if
 * absent, not a string or longer than cap - 1. */
bool rb_h5r_attr_str(hid_t obj, const char *attr, char *buf, size_t cap);
/* True if obj has a numeric scalar attribute `attr` that is not 0 (MATLAB_empty). */
bool rb_h5r_attr_true(hid_t obj, const char *attr);

/* Dataspace of a dataset: rank (0 for scalar), dims, and their product (checked for overflow). */
int rb_h5r_shape(rb_h5r *r, hid_t dset, const char *obj, int *rank, hsize_t dims[RB_H5_MAX_RANK],
                 size_t *npoints);
/* True if the dataset's element type is an integer or a float. */
bool rb_h5r_is_numeric(hid_t dset);
/* Read all npoints values of a numeric dataset as doubles into out with one H5Dread, after checking
 * that the file can hold that many (a corrupt header must not cost a giant allocation first). */
int rb_h5r_check_storage(rb_h5r *r, hid_t dset, const char *obj, size_t npoints);
int rb_h5r_read_doubles(rb_h5r *r, hid_t dset, const char *obj, size_t npoints, double *out);
/* Read a numeric dataset stored [n][T] (row-major) into a channel's sample-major T x n data. */
int rb_h5r_read_transposed(rb_h5r *r, hid_t dset, const char *obj, size_t T, size_t n, double *out);

/* Plain layout (see io.h): a top-level time vector and named numeric matrices. `matlab`: the file
 * is MATLAB v7.3 (dimensions reversed, MATLAB_class attributes, `#` groups skipped). */
int rb_h5r_read_plain(rb_h5r *r, bool matlab);

#endif
