/*
 * lib/io internals shared by the readers (and writers): not installed, not part of the API.
 * Every reader fills an empty log made by rb_log_read; its messages start with the file's path.
 */
#ifndef ROBOEST_IO_INTERNAL_H
#define ROBOEST_IO_INTERNAL_H

#include <stdint.h>

#include "roboest/io.h"

/* ---- readers (detect.c dispatches on rb_log_detect's answer) ---- */
int rb_io_read_mat73(const char *path, rb_log_format fmt, rb_log *log, rb_err *err);
int rb_io_read_mat5(const char *path, rb_log_format fmt, rb_log *log, rb_err *err);
int rb_io_read_h5(const char *path, rb_log_format fmt, rb_log *log, rb_err *err);
int rb_io_read_csv(const char *path, rb_log *log, rb_err *err);

/* Layout of a MATLAB v7.3 file (logger or plain) / of a non-MATLAB HDF5 file / of a v5 file. */
int rb_io_classify_mat73(const char *path, rb_log_format *fmt, rb_err *err);
int rb_io_classify_h5(const char *path, rb_log_format *fmt, rb_err *err);
int rb_io_classify_mat5(const char *path, rb_log_format *fmt, rb_err *err);

/* ---- writers (write.c dispatches; `file` is written, `shown` is the path named in messages) ----
 * On error a partial file may be left at `file` (rb_log_write removes its temporary). */
int rb_io_write_h5(const rb_log *log, const char *file, const char *shown, rb_err *err);
int rb_io_write_mat(const rb_log *log, const char *file, const char *shown, bool mat73, const char *root_name,
                    rb_err *err);
int rb_io_write_csv(const rb_log *log, const char *file, const char *shown, rb_err *err);
/* UTF-16 code units of UTF-8 text s into out (NULL: count only) and their number into *n_units;
 * false on malformed UTF-8. */
bool rb_io_utf8_to_utf16(const char *s, uint16_t *out, size_t *n_units);
/* RB_EINPUT naming `shown` and the string unless every channel name, element name, unit and
 * attribute of the log is valid UTF-8 (HDF5 and MATLAB files store text as Unicode). */
int rb_io_check_utf8(const rb_log *log, const char *shown, rb_err *err);
/* RB_EIO with "shown: " + the formatted text + the innermost message on HDF5's error stack
 * (write_h5.c; for callers of HDF5 whose automatic error printing is off). */
int rb_io_h5_fail(const char *shown, rb_err *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* roboest .h5 layout: the root string attribute RB_H5_LAYOUT_ATTR = RB_H5_LAYOUT_VALUE marks it. */
#define RB_H5_LAYOUT_ATTR "roboest_layout"
#define RB_H5_LAYOUT_VALUE "channels/1"
/* Robot-logger .mat: root struct field holding the log attributes other than yarp_robot_name and
 * description_list, one char field per key (layout in write_mat.c's top comment). */
#define RB_MAT_PROVENANCE_FIELD "roboest_provenance"

/* ---- shared helpers ---- */
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
/* Free n strings and the array holding them (NULL items or array allowed). */
void rb_io_free_strings(char **items, size_t n);

/* Length (1 to 4) of the UTF-8 sequence at b (n > 0 bytes available) and its code point in *cp;
 * 0 when it is not valid UTF-8 (bad or missing continuation byte, overlong, surrogate, above
 * U+10FFFF). */
size_t rb_io_utf8_decode(const uint8_t *b, size_t n, uint32_t *cp);
/* UTF-8 text (caller frees with rb_free) of MATLAB char codes: UTF-16 code units (surrogate pairs
 * joined, lone surrogates -> U+FFFD, NULs dropped). NULL on allocation failure. */
char *rb_io_utf16_to_utf8(const uint16_t *codes, size_t n);
/* UTF-8 text of 8-bit char codes: kept as is when they are valid UTF-8, else read as Latin-1. */
char *rb_io_bytes_to_utf8(const uint8_t *bytes, size_t n);

/* Transpose a rows x cols row-major matrix into dst (cols x rows); dst and src must not overlap. */
void rb_io_transpose(double *dst, const double *src, size_t rows, size_t cols);

#endif
