/*
 * HDF5-based reads in a child process (h5isolate.c; io.h: rb_io_set_hdf5_isolation). Private to lib/io.
 * `kind` is RB_IO_MAT73 or RB_IO_HDF5 (rb_io_sniff's answer). Each returns what the in-process read would
 * (the child's error and message as they are), or RB_EINPUT "<path>: corrupt HDF5 file (the HDF5 library
 * failed reading it: SIGSEGV)" when the child dies, by a signal or with a non-zero exit status.
 */
#ifndef ROBOEST_IO_H5ISOLATE_H
#define ROBOEST_IO_H5ISOLATE_H

#include "io_internal.h"

/* True when rb_io_set_hdf5_isolation is on (and this is not the reading child itself). */
bool rb_io_hdf5_isolation(void);
/* rb_log_detect's layout of the file. */
int rb_io_h5_isolated_detect(const char *path, rb_io_kind kind, rb_log_format *fmt, rb_err *err);
/* The layout and every channel into the empty log (format, root name, attributes, skipped entries). */
int rb_io_h5_isolated_log(const char *path, rb_io_kind kind, rb_log *log, rb_err *err);
/* Every array into the empty set (rb_arrays_read). */
int rb_io_h5_isolated_arrays(const char *path, rb_io_kind kind, rb_arrays *a, rb_err *err);

/* The fork lock (defined in h5read.c, below the readers the child runs). In-process HDF5 use (writers,
 * reads with isolation off) between enter and leave holds it shared: a fork for an isolated read, between
 * fork_begin and fork_end (held exclusively), waits until no thread is inside HDF5, whose global lock the
 * child would otherwise inherit held. fork_end(true) in the child: its enter and leave do nothing. */
void rb_io_h5_enter(void);
void rb_io_h5_leave(void);
void rb_io_h5_fork_begin(void);
void rb_io_h5_fork_end(bool in_child);
bool rb_io_h5_in_child(void);

#endif
