/*
 * lib/io internals shared by the readers (and writers): not installed, not part of the API.
 * Every reader fills an empty log made by rb_log_read; its messages start with the file's path.
 *
 * Layers, each calling only those below it (no circle between the files):
 *   dispatch    detect.c (rb_log_detect, rb_log_read), write.c (rb_log_write), arrays_io.c (rb_arrays_read,
 *               rb_arrays_write), session.c: the format from the content or the path, then its reader or writer
 *   isolation   h5isolate.c: an HDF5-based read in a child process when asked (a corrupt file that crashes
 *               libhdf5 is an input error), and the lock that keeps a fork out of in-process HDF5 use
 *   formats     read_csv.c, read_h5.c (+ h5read.c, h5chunks.c), read_mat5.c (+ read_mat5_check.c), read_mat73.c,
 *               write_csv.c, write_h5.c, write_mat.c
 *   containers  log.c (logs, channels, attribute lists), arrays.c (named arrays), time.c (clocks, resampling)
 *   common.c    shapes, names and paths, UTF-8 / UTF-16 text: what the formats share
 */
#ifndef ROBOEST_IO_INTERNAL_H
#define ROBOEST_IO_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "roboest/io.h"

/* ---- file kinds, from the content (detect.c) ---- */
typedef enum rb_io_kind { RB_IO_HDF5, RB_IO_MAT73, RB_IO_MAT5, RB_IO_CSV } rb_io_kind;
/* The container of a file by its first bytes: HDF5 signature (MATLAB v7.3 when the file starts with
 * "MATLAB 7.3 MAT-file"), MATLAB v5 header, or CSV text whose first line that is neither blank nor a
 * `#` comment is a log header (`arrays` false: a comma and a time column first) or an array header
 * (`arrays` true: every field a column name as rb_io_array_column parses it). RB_ENOTFOUND
 * "<path>: no such file"; RB_EINPUT "<path>: not a log file (...)" (arrays: "not an array file"). */
int rb_io_sniff(const char *path, bool arrays, rb_io_kind *kind, rb_err *err);

/* ---- readers (detect.c dispatches on rb_log_detect's answer) ---- */
int rb_io_read_mat73(const char *path, rb_log_format fmt, rb_log *log, rb_err *err);
int rb_io_read_mat5(const char *path, rb_log_format fmt, rb_log *log, rb_err *err);
int rb_io_read_h5(const char *path, rb_log_format fmt, rb_log *log, rb_err *err);
int rb_io_read_csv(const char *path, rb_log *log, rb_err *err);

/* After a reader (detect.c): a log without channels is RB_EINPUT naming the first entry skipped; text must be
 * UTF-8 and a channel's element names distinct. */
int rb_io_check_read(const char *path, const rb_log *log, rb_err *err);

/* Layout of a MATLAB v7.3 file (logger or plain) / of a non-MATLAB HDF5 file / of a v5 file. */
int rb_io_classify_mat73(const char *path, rb_log_format *fmt, rb_err *err);
int rb_io_classify_h5(const char *path, rb_log_format *fmt, rb_err *err);
int rb_io_classify_mat5(const char *path, rb_log_format *fmt, rb_err *err);
/* The element structure of a v5 file checked before libmatio opens it (read_mat5_check.c): every
 * element fits in its parent and holds the bytes its dimensions need. RB_EINPUT naming the path and
 * the byte offset; RB_ENOMEM. */
int rb_io_validate_mat5(const char *path, rb_err *err);

/* ---- writers (write.c dispatches; `file` is written, `shown` is the path named in messages) ----
 * On error a partial file may be left at `file` (rb_log_write removes its temporary). */
/* `write` called on a temporary next to `path` (opts resolved: NULL is the format from the extension,
 * no overwrite), renamed into place on success, removed on failure; RB_EINVAL naming `fn` when `what`
 * or `path` is NULL. rb_log_write and rb_arrays_write. */
typedef int (*rb_io_write_fn)(const void *what, const char *file, const char *shown, const rb_write_opts *opts,
                              rb_err *err);
int rb_io_write_atomic(const char *fn, const void *what, const char *path, const rb_write_opts *opts,
                       rb_io_write_fn write, rb_err *err);
int rb_io_write_h5(const rb_log *log, const char *file, const char *shown, rb_err *err);
int rb_io_write_mat(const rb_log *log, const char *file, const char *shown, bool mat73, const char *root_name,
                    rb_err *err);
int rb_io_write_csv(const rb_log *log, const char *file, const char *shown, rb_err *err);
/* UTF-16 code units of UTF-8 text s into out (NULL: count only) and their number into *n_units;
 * false on malformed UTF-8 (common.c). */
bool rb_io_utf8_to_utf16(const char *s, uint16_t *out, size_t *n_units);
/* RB_EINPUT naming `shown` and the string unless every channel name, element name, unit and
 * attribute of the log is valid UTF-8 (HDF5 and MATLAB files store text as Unicode). */
int rb_io_check_utf8(const rb_log *log, const char *shown, rb_err *err);
/* RB_EINPUT naming `shown`, the channel, both element indices and the name when two elements of a channel share a
 * name (binding an element by name would be ambiguous); RB_ENOMEM. */
int rb_io_check_element_names(const rb_log *log, const char *shown, rb_err *err);
/* RB_EIO with "shown: " + the formatted text + the innermost message on HDF5's error stack
 * (write_h5.c; for callers of HDF5 whose automatic error printing is off). */
int rb_io_h5_fail(const char *shown, rb_err *err, const char *fmt, ...) RB_PRINTF(3, 4);
/* HDF5 writers build the file in memory and write it out at the end (write_h5.c: why). hid_t is int64_t
 * here, so this header needs no HDF5 include. rb_io_h5_memory_fapl sets the in-memory driver on a file
 * access list, its buffer recorded in *im (which must outlive the file; -1 on failure). rb_io_h5_finish
 * closes the file (always; file -1: none was created, rc is then an error) and, if rc is RB_OK, writes its
 * bytes to `path`, the first head_len of them replaced by `head` (a user block); the status. Call it after
 * every rb_io_h5_memory_fapl: a failed H5Fcreate may have left a buffer in *im too. */
typedef struct rb_io_h5_image {
    unsigned char *kept; /* the buffer the driver freed at close */
    size_t cap;          /* its allocated size */
} rb_io_h5_image;
int rb_io_h5_memory_fapl(int64_t fapl, rb_io_h5_image *im);
int rb_io_h5_finish(int64_t file, rb_io_h5_image *im, int rc, const char *path, const char *shown, const void *head,
                    size_t head_len, rb_err *err);
/* A file written window by window (write_stream.c): created on disk (HDF5's default driver, not in memory) with
 * `log`'s layout, its channels' data and timestamps datasets made at their full size but not written (the
 * channels' samples are NULL); *out the open file (int64_t: hid_t), -1 on error (then nothing is left open).
 * The .h5 datasets are as rb_io_write_h5 makes them; the .mat ones as rb_io_write_mat's v7.3 but for the
 * timestamps, chunked by 8192 samples (rb_io_write_mat makes one chunk of them all). */
int rb_io_h5_create_deferred(const rb_log *log, const char *file, const char *shown, int64_t *out, rb_err *err);
int rb_io_mat73_create_deferred(const rb_log *log, const char *file, const char *shown, const char *root_name,
                                int64_t *out, rb_err *err);
/* The 128-byte MATLAB v7.3 header in the 512-byte user block, written over the file's first bytes. */
void rb_io_mat73_header(unsigned char h[128]);
/* The file driver of such files on disk (h5soft.c): a failing write or truncate is kept, not returned to HDF5 (which
 * could then not close the file), and later writes dropped. rb_io_h5_soft_fapl sets it on a file access list (-1 on
 * failure); rb_io_h5_soft_watch has the errno of the file's first failed write (0: none) kept in *failed from then on,
 * through its close too (-1: the file has no such driver). */
int rb_io_h5_soft_fapl(int64_t fapl);
int rb_io_h5_soft_watch(int64_t file, int *failed);
/* roboest .h5 layout: the root string attribute RB_H5_LAYOUT_ATTR = RB_H5_LAYOUT_VALUE marks it. */
#define RB_H5_LAYOUT_ATTR "roboest_layout"
#define RB_H5_LAYOUT_VALUE "channels/1"
/* Robot-logger .mat: root struct field holding the log attributes other than yarp_robot_name and
 * description_list, one char field per key (layout in write_mat.c's top comment). */
#define RB_MAT_PROVENANCE_FIELD "roboest_provenance"

/* ---- named arrays (arrays_io.c dispatches; layouts in io.h) ----
 * Readers fill an empty rb_arrays; `file` / `shown` as for the log writers. */
int rb_io_read_arrays_h5(const char *path, rb_arrays *a, rb_err *err);    /* read_h5.c */
int rb_io_read_arrays_mat73(const char *path, rb_arrays *a, rb_err *err); /* read_mat73.c */
int rb_io_read_arrays_mat5(const char *path, rb_arrays *a, rb_err *err);  /* read_mat5.c */
int rb_io_read_arrays_csv(const char *path, rb_arrays *a, rb_err *err);   /* read_csv.c */
int rb_io_write_arrays_h5(const rb_arrays *a, const char *file, const char *shown, rb_err *err);
int rb_io_write_arrays_mat(const rb_arrays *a, const char *file, const char *shown, bool mat73, rb_err *err);
int rb_io_write_arrays_csv(const rb_arrays *a, const char *file, const char *shown, rb_err *err);
/* A CSV array column `name`, `name:j` or `name:j:k` (j, k decimal, no sign): the name's length in
 * *name_len, the number of indices (0..2) in *n_idx and their values in idx[]. False when `field`
 * is not one: an empty name, or one holding whitespace, a control character, ',', '"' or ':', or
 * starting with '#'. */
bool rb_io_array_column(const char *field, size_t *name_len, size_t *n_idx, size_t idx[2]);
/* MATLAB's size of an array (N x 1 for a vector, N x a, N x a x b) into mdims; returns the rank. */
int rb_io_array_matlab_dims(const rb_array *arr, size_t mdims[3]);
/* Add an array of MATLAB size mdims[0] x ... (rank 1..3 after dropping trailing singleton dimensions
 * beyond the second; a 2-D vector, 1 x N or N x 1, is the 1-D N). RB_EINPUT "<path>: <obj>: ..." for
 * more than 3 dimensions; rb_arrays_add's errors prefixed with the path. */
int rb_io_add_matlab_array(rb_arrays *a, const char *path, const char *obj, const char *name, int rank,
                           const size_t *mdims, rb_array **out, rb_err *err);

/* ---- attribute lists (rb_log's and rb_arrays' attrs, n_attrs, cap_attrs; log.c) ---- */
typedef struct rb_io_attrs {
    rb_attr **items;
    size_t *n, *cap;
} rb_io_attrs;
#define RB_IO_ATTRS(owner) ((rb_io_attrs){&(owner)->attrs, &(owner)->n_attrs, &(owner)->cap_attrs})
/* Set (replace) attribute key to a copy of value ("" for NULL); RB_ENOMEM. */
int rb_io_attrs_set(rb_io_attrs attrs, const char *key, const char *value, rb_err *err);
const char *rb_io_attrs_get(const rb_attr *attrs, size_t n, const char *key);
void rb_io_attrs_free(rb_attr *attrs, size_t n);
/* Grow an array of `size`-byte items to hold `need`, doubling the capacity; RB_ENOMEM. */
int rb_io_grow(void **items, size_t *cap, size_t need, size_t size, rb_err *err);

/* ---- shared helpers (common.c) ---- */
/* `time`, `t` or `timestamps`: the names of a plain file's time vector, in order of preference. */
extern const char *const rb_io_time_names[3];

/* Plain layout: a rows x cols matrix (in the writer's view: MATLAB's for .mat, numpy's for .h5) is a
 * channel of T samples when rows == T (n = cols), else when cols == T (taken transposed, n = rows).
 * Returns false when neither holds. */
bool rb_io_plain_shape(size_t rows, size_t cols, size_t T, size_t *n, bool *transposed);

/* Channel name of child `name` below the slash path `prefix` ("" at the root: just `name`).
 * Caller frees with rb_free; NULL on allocation failure. */
char *rb_io_join_path(const char *prefix, const char *name);
/* The n strings joined with `sep` between them (caller frees with rb_free); NULL on allocation
 * failure. */
char *rb_io_join_strings(char *const *items, size_t n, char sep);

/* Length (1 to 4) of the UTF-8 sequence at b (n > 0 bytes available) and its code point in *cp;
 * 0 when it is not valid UTF-8 (bad or missing continuation byte, overlong, surrogate, above
 * U+10FFFF). */
size_t rb_io_utf8_decode(const uint8_t *b, size_t n, uint32_t *cp);
/* UTF-8 text (caller frees with rb_free) of MATLAB char codes: UTF-16 code units (surrogate pairs
 * joined, lone surrogates -> U+FFFD, NULs dropped). NULL on allocation failure. */
char *rb_io_utf16_to_utf8(const uint16_t *codes, size_t n);
/* UTF-8 text of 8-bit char codes: kept as is when they are valid UTF-8, else read as Latin-1. */
char *rb_io_bytes_to_utf8(const uint8_t *bytes, size_t n);

/* Entries of a file that are not channels, recorded in log->skipped (rb_log_note_skipped) so `roboest info` can
 * list them; errors prefixed with the path. The reasons every reader gives alike: */
#define RB_IO_SKIP_DATA_STRUCT "data is a struct, not a numeric array"
#define RB_IO_SKIP_NO_SAMPLES "zero samples"
#define RB_IO_SKIP_NO_ELEMENTS "zero elements"
#define RB_IO_SKIP_EMPTY_STRUCT "an empty struct (how the logger writes a channel with no samples)"
#define RB_IO_SKIP_NOT_STRUCT "not a struct, so neither a channel nor a group of channels"
int rb_io_skip(rb_log *log, const char *path, const char *name, const char *reason, rb_err *err);
/* A plain file's entry that is not a channel for a time vector of T samples: rank < 0 when it is not a real
 * numeric array, else its rank and, for rank <= 2, its rows x cols in the writer's view. */
int rb_io_skip_plain(rb_log *log, const char *path, const char *name, int rank, size_t rows, size_t cols, size_t T,
                     rb_err *err);

/* rb_log_add_channel without the samples: time and data stay NULL (a layout read by chunked.c, whose samples
 * are read later in bounded parts). */
int rb_io_add_channel_meta(rb_log *log, const char *name, size_t n_samples, size_t n_elements, rb_channel **out,
                           rb_err *err);

/* Transpose a rows x cols row-major matrix into dst (cols x rows); dst and src must not overlap. */
void rb_io_transpose(double *dst, const double *src, size_t rows, size_t cols);
/* Reverse the axes of a C-order array of ndim (1..3) dimensions dims: [d0][d1][d2] into [d2][d1][d0]
 * (element (i, j, k) moves to (k, j, i)). A MATLAB (column-major) array of size d0 x d1 x d2 is the
 * C-order [d2][d1][d0]: this converts between the two. dst and src must not overlap. */
void rb_io_reverse_axes(double *dst, const double *src, size_t ndim, const size_t *dims);
/* MATLAB identifier: a letter, then letters, digits and '_', at most 63 characters. */
bool rb_io_is_matlab_identifier(const char *s);

#endif
