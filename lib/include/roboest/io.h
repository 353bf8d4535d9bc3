/*
 * roboest io: robot logs in and out.
 *
 * A log is a set of channels. A channel is a time-stamped matrix: T samples of n elements,
 * stored sample-major (sample t, element i at data[t * n + i]), with one name and one unit
 * per element. Channel names are slash paths below the root struct of the file
 * ("joints_state/positions" for the logger's `joints_state::positions`).
 *
 * Readers choose the layout from the file's content, never from its extension:
 *   - robot-logger layout, MATLAB v7.3 (HDF5 + 512-byte MATLAB user block) or v5/v7 (libmatio):
 *     one root struct (any name) whose nested structs are channels holding `data` (MATLAB
 *     n x 1 x T, or n x T), `timestamps` (T x 1 or 1 x T), `elements_names`, `units_of_measure`,
 *     `dimensions`, `name`; empty channels are skipped; names default to "0", "1", ...;
 *   - plain .mat (any version) or .h5 files of named matrices plus a time vector named `time`,
 *     `t` or `timestamps`: every numeric matrix with T rows (T x n, rows are samples, as written
 *     by MATLAB `[t, x]` or numpy `x.shape == (T, n)`) is a channel; a matrix with T columns and
 *     not T rows is taken transposed; nested groups/structs give slash paths;
 *   - the roboest .h5 layout (what rb_log_write writes): one group per channel holding `data`
 *     (T x n), `timestamps` (T) and string-array attributes `elements_names`, `units_of_measure`;
 *   - HDF5 channel groups (RB_FMT_GROUPS_H5): the same groups written by any program, without the
 *     roboest_layout attribute;
 *   - CSV: optional `# key: value` comment lines, a header row whose first column is the time
 *     (named time, t, timestamp or timestamps),
 *     then columns named `channel:element` (or `channel:element [unit]`); consecutive columns
 *     with the same channel prefix form one channel; a column without ':' is a one-element
 *     channel named by the column.
 *
 * Reading, in detail (rb_log_detect / rb_log_read):
 *   - detection: HDF5 signature at byte 0, 512, 1024, 2048, ... -> MATLAB v7.3 when the file starts
 *     with the text "MATLAB 7.3 MAT-file", else HDF5; "MATLAB 5.0 MAT-file" header with version
 *     0x0100 and endian "IM"/"MI" -> MATLAB v5/v7; text whose first line that is neither blank nor a
 *     `#` comment holds a comma and starts with a time column (`time`, `t`, `timestamp` or
 *     `timestamps`, any case, optionally quoted or followed by a unit: `time [s]`) -> CSV; anything else is RB_EINPUT "<path>: not a log file (...)".
 *   - MATLAB files (v5 and v7.3 alike) are in the robot-logger layout when they have no top-level
 *     time vector and at least one top-level struct. The root is the first top-level struct that
 *     holds a channel (v7.3: in link-name order; v5: in file order), else the first top-level struct;
 *     other top-level variables are ignored. Below the root, a struct whose `data` field is an array
 *     is a channel (nested structs give the slash path); other structs are walked into. Root fields
 *     `yarp_robot_name` (char) and `description_list` (cell of char, joined by ',') become attributes.
 *     `data`: MATLAB d1 x ... x dk x T (any k >= 1: the logger's n x 1 x T, or n x T) gives
 *     n = d1 * ... * dk; a 2-D T x n (T rows, not T columns) is taken transposed; a square T x T is
 *     n x T. `timestamps` must be a vector of T values, else RB_EINPUT naming the channel. Channels
 *     with no samples or no elements, or whose `data`/`timestamps` are MATLAB-empty, are skipped.
 *     Numeric classes (double, single, int*, uint*, logical) are converted to double. Char arrays:
 *     16-bit codes are UTF-16; 8-bit codes are UTF-8 when valid, else Latin-1. A missing or empty
 *     `elements_names` gives "0", "1", ...; missing `units_of_measure` gives ""; present ones must
 *     hold exactly n strings. `dimensions` and `name` are not used (older writers got them wrong).
 *   - plain files: the time vector is the first of `time`, `t`, `timestamps` that is a numeric
 *     vector at the top level (the others are then ordinary matrices); its length is T. Rows and
 *     columns are MATLAB's for .mat files and numpy's (`shape`) for .h5 (a 1-D dataset of length T
 *     is T x 1). A numeric 2-D matrix with T rows is a channel of n = columns elements (also when
 *     it is T x T); with T columns and not T rows it is taken transposed; anything else (other
 *     shapes, char, cell, complex, sparse, empty) is ignored. Elements are named "0".."n-1", units
 *     "". MATLAB structs / HDF5 groups give slash paths; every channel shares the time vector.
 *   - roboest .h5 (the root has a string attribute `roboest_layout`; only "channels/1" is read):
 *     every group below the root holding a dataset `data` is a channel named by its path;
 *     `data` is [T][n] (or [T] for n = 1), `timestamps` [T], both any integer or float type; the
 *     group's attributes `elements_names` and `units_of_measure` are 1-D arrays of n strings
 *     (variable-length UTF-8 as written; fixed-length accepted), each optional. Channels with no
 *     samples are kept. Root string attributes other than `roboest_layout` are the log's attributes.
 *     `timestamps` may be any vector of T ((T,), (T, 1), (1, T)); `data` (n, T) with n != T is taken
 *     transposed (a column-major writer). A group holding only one of `data` and `timestamps`, or a
 *     shape that does not fit, is RB_EINPUT "<path>: <group>[/<dataset>]: ..." saying which.
 *   - HDF5 files without `roboest_layout`: plain when the root holds a time vector (above), else read
 *     as the roboest layout (no marker checked) when some group holds `data` or `timestamps`; a file
 *     with neither is RB_EINPUT "no time vector (time, t or timestamps) and no channel group ...".
 *   - CSV: comment lines (`#`) may appear anywhere; `# key: value` (key of letters, digits, `_.-`)
 *     sets an attribute, other comments are ignored; blank lines are skipped; lines end with LF,
 *     CRLF or a lone CR; a UTF-8 BOM is dropped; fields may be quoted as in RFC 4180 ("a, b" with ""
 *     for a quote, line ends inside the quotes are part of the field). The header's first column
 *     names the time; a column without ':' is a whole one-element channel (element "0"); a
 *     channel's columns are consecutive and name distinct elements (else RB_EINPUT naming both
 *     column numbers); empty trailing header fields (trailing commas) are no columns and must stay
 *     empty in the rows; an empty name inside the header is RB_EINPUT naming the column number, as
 *     is a name or attribute that is not UTF-8, and a NUL byte names its line. Numbers (quoted or
 *     not) are parsed under the C locale; an empty field, "nan" or "NaN" is NaN. Errors name the
 *     line ("<path>:<line>: ...") and the column.
 *   - entries that are not channels (a struct whose `data` is a struct, zero samples or elements, an
 *     empty struct, a non-struct field in a logger file, a plain matrix whose length is not T, ...)
 *     are recorded in rb_log.skipped with the reason; a file with no channel is RB_EINPUT naming the
 *     first of them (or "no channels"). Two elements of one channel with the same name are RB_EINPUT
 *     in every format. Only regular files are opened (a FIFO is refused without blocking); a Git LFS
 *     pointer is RB_EINPUT "<path>: this is a Git LFS pointer, not the log: fetch it with git lfs pull".
 *   - channel order: HDF5 creation order when the file tracks it, else link-name order (v7.3,
 *     HDF5); file / field order (v5); column order (CSV).
 *   - sizes read from a file are checked before anything is allocated: a dataset claiming more
 *     values than its stored bytes could hold (or decompress to) is RB_EINPUT, as is any v5 element
 *     that does not fit in its parent or in the file (v5 files are checked element by element
 *     before libmatio reads them).
 *
 * Errors: RB_ENOTFOUND (no such file/channel/element), RB_EINPUT (corrupt, truncated,
 * unsupported or inconsistent file; the message names the file and the object), RB_ENOMEM,
 * RB_EIO and RB_EEXISTS (writers). Readers never modify their input.
 */
#ifndef ROBOEST_IO_H
#define ROBOEST_IO_H

#include "roboest/core.h"

RB_API_BEGIN

typedef struct rb_channel {
    char *name;           /* slash path, e.g. "joints_state/positions" */
    size_t n_samples;     /* T */
    size_t n_elements;    /* n */
    double *time;         /* T timestamps in seconds */
    double *data;         /* T x n, sample-major */
    char **element_names; /* n names, never NULL */
    char **units;         /* n units, "" when unknown, never NULL */
} rb_channel;

/* A channel's description without its samples: its name as a log channel ("joints_state/positions"),
 * width and element names / units (borrowed), e.g. what a program producing the channels sample by sample
 * (a simulation) offers a pipeline stream. */
typedef struct rb_channel_info {
    const char *name;
    size_t width;
    const char *const *elements; /* width names (NULL: "0", "1", ...) */
    const char *const *units;    /* width units, NULL: all "" */
} rb_channel_info;

typedef struct rb_attr {
    char *key;
    char *value;
} rb_attr;

typedef enum rb_log_format {
    RB_FMT_MEMORY = 0,   /* built in memory, not read from a file */
    RB_FMT_LOGGER_MAT73, /* robot-logger layout, MATLAB v7.3 (HDF5) */
    RB_FMT_LOGGER_MAT5,  /* robot-logger layout, MATLAB v5/v7 */
    RB_FMT_PLAIN_MAT73,  /* named matrices, MATLAB v7.3 */
    RB_FMT_PLAIN_MAT5,   /* named matrices, MATLAB v5/v7 */
    RB_FMT_ROBOEST_H5,   /* roboest .h5 layout */
    RB_FMT_PLAIN_H5,     /* named datasets in a plain HDF5 file */
    RB_FMT_CSV,
    RB_FMT_GROUPS_H5 /* one group per channel (data, timestamps) in an HDF5 file without the roboest marker */
} rb_log_format;

/* Human-readable name of a layout ("robot-logger MATLAB v7.3", ...). */
const char *rb_log_format_name(rb_log_format fmt);

/* An entry of a file that did not become a channel, and why ("a struct", "zero elements", "12 rows but
 * the time vector has 10"): readers record them so `roboest info` can list them. */
typedef struct rb_skipped {
    char *name;
    char *reason;
} rb_skipped;

typedef struct rb_log {
    char *root_name; /* root struct of a robot-logger file; NULL otherwise */
    rb_log_format format;
    size_t n_channels, cap_channels;
    rb_channel *channels;
    /* String metadata: `yarp_robot_name`, `description_list` (joint names joined by ','),
     * and provenance written by roboest (`roboest_version`, `config_sha256`, `input_sha256`,
     * `model`, ...). Keys are unique. */
    size_t n_attrs, cap_attrs;
    rb_attr *attrs;
    /* Entries of the file read that are not channels, in file order (empty for a built log). */
    size_t n_skipped, cap_skipped;
    rb_skipped *skipped;
} rb_log;

/* ---- building and querying ---------------------------------------------------------------- */
/* Empty log (caller frees with rb_log_free). */
int rb_log_new(rb_log **out, rb_err *err);
void rb_log_free(rb_log *log);

/* Append a channel of T samples x n elements with zeroed time and data, element names "0".."n-1"
 * and empty units; *out (borrowed, valid until the next channel is added) is for filling in.
 * RB_EINPUT if the name exists already; RB_ENOMEM when T x n overflows or allocation fails. */
int rb_log_add_channel(rb_log *log, const char *name, size_t n_samples, size_t n_elements, rb_channel **out,
                       rb_err *err);
/* Same, copying time (T), data (T x n) and, when not NULL, names and units (n each). */
int rb_log_add_channel_copy(rb_log *log, const char *name, size_t n_samples, size_t n_elements, const double *time,
                            const double *data, const char *const *names, const char *const *units, rb_err *err);
/* Record an entry of the file that is not a channel (copies name and reason). */
int rb_log_note_skipped(rb_log *log, const char *name, const char *reason, rb_err *err);
/* Replace element name / unit i of a channel (copies s). */
int rb_channel_set_name(rb_channel *ch, size_t i, const char *s, rb_err *err);
int rb_channel_set_unit(rb_channel *ch, size_t i, const char *s, rb_err *err);

/* Channel by exact name, NULL if absent (borrowed). */
const rb_channel *rb_log_find(const rb_log *log, const char *name);
/* The log's first sample: the earliest finite time stamp of any channel (what a window "from_start" counts from,
 * config.h rb_window); NaN for a log without one. */
double rb_log_start(const rb_log *log);
/* Index of an element by name, -1 if absent. */
long rb_channel_element_index(const rb_channel *ch, const char *element_name);

/* Set (replace) / get a string attribute; get returns NULL if absent (borrowed). */
int rb_log_set_attr(rb_log *log, const char *key, const char *value, rb_err *err);
/* Every pair of pv as attributes, in order (roboest/core.h "provenance"). */
int rb_log_set_provenance(rb_log *log, const rb_provenance *pv, rb_err *err);
const char *rb_log_get_attr(const rb_log *log, const char *key);

/* Append the samples of `next` to `log` channel by channel (a session the logger split over
 * several files). Both must hold the same channels with the same elements, and every channel of
 * `next` must start after the matching channel of `log` ends; errors name the channel. Entries `next`
 * skipped are added to log->skipped unless listed there already. Mismatches
 * leave `log` untouched; after RB_ENOMEM some channels may already hold the appended samples. */
int rb_log_append(rb_log *log, const rb_log *next, rb_err *err);

/* ---- reading ---------------------------------------------------------------------------------- */
/* Detect the layout of a file from its content (rules in the comment at the top of this file).
 * RB_ENOTFOUND "<path>: no such file"; RB_EINPUT "<path>: not a log file (...)" or a corrupt file. */
int rb_log_detect(const char *path, rb_log_format *fmt, rb_err *err);
/* Read every channel of a file (caller frees *out with rb_log_free; *out is NULL on failure).
 * Sets log->format, and log->root_name for the robot-logger layout. Messages start with the path
 * and, for structured files, name the object ("<path>: /root/joints_state/positions/data: ...").
 * RB_ENOTFOUND, RB_EINPUT, RB_ENOMEM. The library's HDF5 error printing is turned off. */
int rb_log_read(const char *path, rb_log **out, rb_err *err);
/* Process-wide, off by default (the roboest command turns it on): read HDF5-based files (MATLAB v7.3,
 * .h5; rb_log_detect, rb_log_read, rb_arrays_read) in a child process (fork) that sends the result back
 * through a pipe. libhdf5 1.10 overflows buffers on some corrupt files below any check the API allows; a
 * child that dies reading a file is RB_EINPUT "<path>: corrupt HDF5 file (the HDF5 library failed reading
 * it: SIGSEGV)" (or "exit status N") instead of a crash of the caller. Costs a fork and a copy of the data
 * through the pipe per file. Threads: safe while every HDF5 call of the process goes through this
 * library (a fork waits until no thread is inside HDF5); HDF5 calls of the caller's own may leave HDF5's
 * lock held in the child, which then never ends. */
void rb_io_set_hdf5_isolation(bool on);

/* ---- reading in bounded parts: logs longer than memory ------------------------------------------------
 * A log opened for reading its channels part by part. The robot-logger MATLAB v7.3 layout and the roboest and
 * channel-group .h5 layouts are read in parts (HDF5 hyperslabs): opening reads the channels' names, elements,
 * units and sizes (every check rb_log_read makes before reading a value), and rb_log_source_read the samples
 * asked for, the same doubles as rb_log_read's bit for bit. Other layouts are read whole at opening: libmatio
 * cannot read part of a compressed v5/v7 variable, CSV is text, and the plain layouts share one time vector;
 * with memory_limit > 0 (bytes) such a log is RB_EINPUT up front when its file is larger than the limit, or
 * after reading when its samples (T x (n + 1) doubles per channel) are, the message naming the file, its
 * layout, the memory it needs and its largest channel. rb_log_detect's errors and rb_log_read's for the
 * checks before reading; RB_ENOMEM. The HDF5 reads run in this process (rb_io_set_hdf5_isolation covers the
 * layout detection only). */
typedef struct rb_log_source rb_log_source;
int rb_log_source_open(const char *path, size_t memory_limit, rb_log_source **out, rb_err *err);
/* The channels (borrowed): names, elements, units, n_samples; time and data are NULL when the source is read
 * in parts (rb_log_source_chunked), else every sample is there. */
const rb_log *rb_log_source_log(const rb_log_source *s);
bool rb_log_source_chunked(const rb_log_source *s);
/* Samples [first, first + count) of channel c: their times into time (count values, may be NULL) and their
 * values into data (count x n sample-major, may be NULL). RB_EINVAL out of range; RB_EINPUT naming the file and
 * dataset when HDF5 cannot read them; RB_ENOMEM. Allocates only when a transposed dataset ([n][T]) needs a
 * larger scratch than before. */
int rb_log_source_read(rb_log_source *s, size_t c, size_t first, size_t count, double *time, double *data, rb_err *err);
void rb_log_source_free(rb_log_source *s);
/* Channel ch of s's log whole into copy (its description, every time, and every value when data; data NULL
 * otherwise); a channel holding its samples already (s may then be NULL) is copied as it is. Free with
 * rb_log_source_unload. rb_log_source_read's errors, RB_ENOMEM. */
int rb_log_source_load(rb_log_source *s, const rb_channel *ch, bool data, rb_channel *copy, rb_err *err);
void rb_log_source_unload(const rb_channel *ch, rb_channel *copy);
/* rb_log_start's time (each channel's first finite time, the earliest) read part by part: *start NAN when none. */
int rb_log_source_start(rb_log_source *s, double *start, rb_err *err);
/* The samples [first, first + count) of a channel around a window of clock times, read part by part: each
 * rb_channel_window_advance drops the samples before keep_from (the least rb_resampler_need of the resamplers
 * reading the channel) and reads parts of `part` samples until the window holds a sample after t_last or
 * reaches the channel's end. Start zeroed; rb_channel_window_free. Allocates only when the window grows past
 * its largest size so far. RB_EINVAL (keep_from before the window, part 0), rb_log_source_read's errors. */
typedef struct rb_channel_window {
    size_t first, count, cap;
    double *time, *data; /* count times, count x n values */
} rb_channel_window;
int rb_channel_window_advance(rb_log_source *s, size_t c, rb_channel_window *w, size_t keep_from, double t_last,
                              size_t part, rb_err *err);
void rb_channel_window_free(rb_channel_window *w);

/* ---- sessions: the files of one recording, which the logger splits every 30 min ---------------------- */
/* What identifies a session's files in provenance: their names (basenames) and their SHA-256, each list in
 * file order joined by ",". */
typedef struct rb_session_id {
    char *names;
    char *sha256;
} rb_session_id;

/* Read n >= 1 files (rb_log_read) and concatenate them in order (rb_log_append; its error is prefixed
 * "<first file>: appending <file>: "). id (may be NULL) receives the names and checksums (release with
 * rb_session_id_free). On failure *out and *id are untouched. */
int rb_log_read_session(const char *const *paths, size_t n, rb_log **out, rb_session_id *id, rb_err *err);
void rb_session_id_free(rb_session_id *id);
/* The provenance of a log read from a session: roboest_version, input (the names), input_sha256 (*pv initialized
 * here; release with rb_provenance_free, also after a failure). RB_ENOMEM. */
int rb_session_provenance(const rb_session_id *id, rb_provenance *pv, rb_err *err);

/* ---- writing ---------------------------------------------------------------------------------- */
typedef enum rb_out_format {
    RB_OUT_H5,    /* roboest .h5 layout: chunked, deflate-compressed, attributes */
    RB_OUT_MAT73, /* robot-logger layout, MATLAB v7.3 */
    RB_OUT_MAT5,  /* robot-logger layout, MATLAB v7 (v5 container, compressed) */
    RB_OUT_CSV    /* needs every channel on the same timestamps */
} rb_out_format;

/* Output format from a path's extension (ASCII case ignored): .h5/.hdf5 -> H5, .mat -> MAT73,
 * .csv -> CSV; anything else is RB_ECONFIG naming the path and the accepted extensions. */
int rb_out_format_from_path(const char *path, rb_out_format *fmt, rb_err *err);

typedef struct rb_write_opts {
    rb_out_format format;
    bool overwrite;        /* replace an existing file (the CLI's --force) */
    const char *root_name; /* root struct for .mat output; NULL -> "robot_logger_device" */
} rb_write_opts;

/* Write `log` (channels and attributes) to `path` through a temporary file in the same folder,
 * renamed into place only on success: on any error nothing appears at `path` and no temporary is
 * left. `log` is not modified. opts NULL: format from the extension, no overwrite, default root.
 * The same log always gives the same bytes (no creation times or dates in any format).
 *   RB_OUT_H5: root string attribute roboest_layout = "channels/1" plus one per log attribute;
 *     a group per channel along its slash path (creation order kept) with `data` [T][n] and
 *     `timestamps` [T] doubles (chunked, shuffled, deflated) and the attributes `elements_names`
 *     and `units_of_measure` (n variable-length UTF-8 strings); zero-sample channels are written
 *     with zero-length datasets.
 *   RB_OUT_MAT73 / RB_OUT_MAT5: the robot-logger layout (root struct opts->root_name, which must
 *     be a MATLAB identifier, else RB_EINVAL); yarp_robot_name and description_list attributes
 *     become root fields, the other attributes fields of a root struct `roboest_provenance` (keys
 *     made MATLAB identifiers); zero-sample channels become structs without fields, as the logger
 *     writes them (readers skip them). Details in lib/io/write_mat.c.
 *   RB_OUT_CSV: `# key: value` lines, header `time,channel:element [unit],...`, round-trip numbers;
 *     every channel must have bit-identical timestamps, else RB_EINPUT naming the first channel
 *     and sample that differ.
 * Errors (messages start with `path`): RB_EEXISTS (path exists and !overwrite), RB_EIO (missing
 * folder, HDF5/libmatio/stdio failure), RB_EINPUT (a log without channels, two elements of a channel
 * with one name, text that is not UTF-8, an empty/'.'/'..' path component, a channel path that
 * collides with another channel's dataset or .mat field; CSV: a channel without elements, a name or
 * unit the CSV reader would give back changed), RB_ENOMEM. */
int rb_log_write(const rb_log *log, const char *path, const rb_write_opts *opts, rb_err *err);
/* Write directly to `path`, creating or truncating it (for callers managing rb_outfile); on error
 * a partial file may be left there. */
int rb_log_write_raw(const rb_log *log, const char *path, const rb_write_opts *opts, rb_err *err);

/* A CSV log written a block of rows at a time (a run in windows): the bytes of rb_log_write's CSV writer for the same
 * log. Open creates `file` (truncating it, no temporary: the caller's rb_outfile) and writes the attributes and the
 * header of `log`, whose samples are not read (its checks: RB_EINPUT, RB_EIO, RB_ENOMEM). Rows: n samples at times
 * t, data[c] channel c's n x width values (sample-major); a stdio failure is kept for close. Close returns it
 * (RB_EIO naming `shown`) and frees s (NULL: nothing); abort closes and frees without a word. */
typedef struct rb_csv_stream rb_csv_stream;
int rb_csv_stream_open(const rb_log *log, const char *file, const char *shown, rb_csv_stream **out, rb_err *err);
void rb_csv_stream_rows(rb_csv_stream *s, const double *t, const double *const *data, size_t n);
int rb_csv_stream_close(rb_csv_stream *s, rb_err *err);
void rb_csv_stream_abort(rb_csv_stream *s);

/* A .h5 or MATLAB v7.3 log (format RB_OUT_H5 or RB_OUT_MAT73, the default root struct when root_name is NULL)
 * written a block of rows at a time (a run in windows): open creates `file` on disk (truncating it, no temporary:
 * the caller's rb_outfile) with the layout of `log`, every channel n_samples long (its samples in `log`, if any,
 * are not read), and the checks of rb_log_write (RB_EINPUT, RB_EIO, RB_ENOMEM). Rows: the next n samples at times
 * t, data[c] channel c's n x width values (sample-major); a failure is kept for close. Close returns it (RB_EIO
 * naming `shown`; RB_EINVAL unless exactly n_samples rows were written) and frees s (NULL: nothing); abort closes
 * and frees without a word (the file is left for the caller to remove, its bytes gone). Read back, the file holds
 * the values, names, units and attributes rb_log_write writes for the same log, in the same datasets; the layout
 * differs only where write_stream.c says (the chunks' order in the file; a .mat file's timestamps chunked). */
typedef struct rb_h5_stream rb_h5_stream;
int rb_h5_stream_open(const rb_log *log, size_t n_samples, rb_out_format format, const char *root_name,
                      const char *file, const char *shown, rb_h5_stream **out, rb_err *err);
void rb_h5_stream_rows(rb_h5_stream *s, const double *t, const double *const *data, size_t n);
int rb_h5_stream_close(rb_h5_stream *s, rb_err *err);
void rb_h5_stream_abort(rb_h5_stream *s);

/* ---- named arrays (states and results files: no time vector) ------------------------------------
 * A set of named arrays of doubles with 1 to 3 dimensions, the first one the row (state) index, as
 * `roboest model eval` reads states and writes results: `q` N x n, `M` N x n x n. In memory every
 * array is row-major (C order): element (i, j, k) of an N x a x b array is data[(i * a + j) * b + k].
 * Files:
 *   - .h5: one top-level dataset per array with exactly these dimensions (numpy/h5py read the same
 *     shape), plus root string attributes;
 *   - .mat (MATLAB v7.3 through HDF5, or v7 with RB_OUT_MAT5): one variable per array, MATLAB size
 *     N x a x b (MATLAB's M(i, j, k) is element (i, j, k) here; a 1-D array is N x 1); the reader
 *     takes v5/v7/v7.3. Attributes are the char fields of a top-level struct `roboest_provenance`
 *     (keys made MATLAB identifiers as for logs, so other keys come back changed);
 *   - .csv: a header row of columns named `name` (N x 1), `name:j` (N x a) or `name:j:k` (N x a x b),
 *     one row per state; `# key: value` comment lines for the attributes. Indices start at 0; the
 *     writer puts k fastest, the reader takes an array's columns in any order as long as they are
 *     consecutive and cover every index once. Names hold no whitespace, control character, ',', '"'
 *     or ':' and do not start with '#'; every array must have the same N (writer: else RB_EINPUT).
 * Files are recognized by content as for logs (the CSV header is every field a column name; else
 * RB_EINPUT "<path>: not an array file (...)"). Numeric arrays of any class (integers, single,
 * logical) are read as doubles; char, cell, string, complex and sparse arrays, groups and structs are
 * skipped. A vector stored as 1 x N or N (MATLAB row vector, numpy 1-D) is read as N x 1 (ndim 1, as
 * are N x 1 and scalars: MATLAB cannot tell a one-row 1 x a from a vector, so it comes back a x 1);
 * MATLAB's trailing singleton dimensions past the third are dropped; more dimensions are RB_EINPUT
 * naming the variable, as are stored sizes the file cannot hold (checked before allocating). */
typedef struct rb_array {
    char *name;
    size_t ndim;    /* 1..3 */
    size_t dims[3]; /* dims[0] rows; unused dimensions are 1 */
    double *data;   /* dims[0] * dims[1] * dims[2] values, row-major */
} rb_array;

typedef struct rb_arrays {
    size_t n, cap;
    rb_array *items;
    size_t n_attrs, cap_attrs;
    rb_attr *attrs;
} rb_arrays;

int rb_arrays_new(rb_arrays **out, rb_err *err);
void rb_arrays_free(rb_arrays *a);
/* Append a zeroed array (ndim 1..3; dims beyond ndim ignored) and return it in *out (borrowed until
 * the next add). RB_EINPUT if the name exists, RB_ENOMEM on overflow or allocation failure, RB_EINVAL
 * for ndim outside 1..3. */
int rb_arrays_add(rb_arrays *a, const char *name, size_t ndim, const size_t dims[3], rb_array **out, rb_err *err);
/* Array by exact name, NULL if absent (borrowed). */
const rb_array *rb_arrays_find(const rb_arrays *a, const char *name);
int rb_arrays_set_attr(rb_arrays *a, const char *key, const char *value, rb_err *err);
int rb_arrays_set_provenance(rb_arrays *a, const rb_provenance *pv, rb_err *err);
/* Read every numeric array of a .mat (v5/v7/v7.3), .h5 or .csv file, chosen by content; nested
 * groups/structs are skipped. Messages start with the path. Caller frees *out with rb_arrays_free;
 * *out is NULL on failure. RB_ENOTFOUND, RB_EINPUT, RB_ENOMEM. */
int rb_arrays_read(const char *path, rb_arrays **out, rb_err *err);
/* Write through a temporary file renamed into place (nothing at path on error); opts->format
 * RB_OUT_H5, RB_OUT_MAT73, RB_OUT_MAT5 or RB_OUT_CSV; opts->root_name is unused; opts NULL: format
 * from the extension, no overwrite. The same set always gives the same bytes. Errors (messages start
 * with `path`): RB_EEXISTS, RB_EIO, RB_EINPUT (a name the format cannot hold: an HDF5 name with '/',
 * a .mat name that is not a MATLAB identifier or is roboest_provenance while there are attributes,
 * see above for CSV; text that is not UTF-8), RB_ENOMEM. */
int rb_arrays_write(const rb_arrays *a, const char *path, const rb_write_opts *opts, rb_err *err);

/* ---- time: checks, clocks and resampling ------------------------------------------------------ */
typedef struct rb_time_report {
    double t_first, t_last; /* seconds (NaN when T == 0) */
    double median_dt;       /* median sample interval (NaN when T < 2) */
    size_t n_gaps;          /* intervals longer than gap_factor x median_dt */
    double max_gap;         /* longest interval, seconds (NaN when T < 2) */
    size_t first_gap;       /* sample index after the first gap, SIZE_MAX if none */
    double rate;            /* Hz: the intervals that are not gaps, counted, over their total length (NaN when
                             * T < 2): from the span, so exact where one interval is not (epoch timestamps) */
} rb_time_report;

/* Statistics of a channel's timestamps; RB_EINPUT naming the channel and the sample index if a
 * timestamp is not finite or not strictly greater than the one before it. The median of an even
 * number of intervals is the mean of the middle two. gap_factor must be finite and > 0
 * (RB_EINVAL); RB_ENOMEM when the interval copy cannot be allocated. */
int rb_channel_check_time(const rb_channel *ch, double gap_factor, rb_time_report *rep, rb_err *err);
/* True, with the likely unit in buf ("timestamps look like nanoseconds: scale them by 1e-9"), when a channel's
 * timestamps (rep from rb_channel_check_time) cannot be seconds: nanoseconds when the largest |t| is in
 * [1e17, 1e20) or the median interval in [1e5, 1e11) s, microseconds when |t| is in [1e14, 1e17) or the interval
 * in [100, 1e5) s. A log in other units runs, with every rate and derivative wrong by that factor. */
bool rb_time_units_hint(const rb_time_report *rep, char *buf, size_t n);

/* A sample clock: strictly increasing times (owned). */
typedef struct rb_clock {
    size_t n;
    double *t;
} rb_clock;

/* Uniform clock at `rate` Hz: t0, t0 + 1/rate, ... up to t1 (inclusive within 1e-9 of a step):
 * floor((t1 - t0) rate + 1e-9) + 1 times, each t0 + k / rate (divided, not accumulated, so 0.3 s at
 * 10 Hz is exactly 0.3). RB_EINVAL unless t0, t1, rate are finite, t0 <= t1 and rate > 0, or when a
 * step is below the resolution of the times; RB_EINPUT naming the likely cause (nanosecond
 * timestamps, ...) above 1e9 times; RB_ENOMEM. On error the clock is empty (n 0, t NULL).
 * Free with rb_clock_free. */
int rb_clock_uniform(rb_clock *clk, double t0, double t1, double rate, rb_err *err);
/* The timestamps of a channel that fall in [t0, t1] (use -INFINITY / INFINITY for no bound).
 * RB_EINVAL when t0 > t1 or a bound is NaN; RB_EINPUT when no sample falls in the window or the
 * channel's timestamps are not strictly increasing (naming the sample). */
int rb_clock_from_channel(rb_clock *clk, const rb_channel *ch, double t0, double t1, rb_err *err);
void rb_clock_free(rb_clock *clk);

typedef enum rb_interp {
    RB_INTERP_LINEAR, /* linear between the two neighbouring samples */
    RB_INTERP_HOLD    /* zero-order hold: the latest sample at or before t */
} rb_interp;

typedef enum rb_nonfinite {
    RB_NONFINITE_ERROR, /* a NaN/Inf sample used by the clock is an RB_EINPUT error */
    RB_NONFINITE_HOLD   /* replaced by the last finite sample of that element, and counted */
} rb_nonfinite;

/* Resample elements `sel` (n_sel indices into the channel; NULL = all n elements in order, with
 * n_sel 0 or n) onto the clock, writing clk->n x n_sel sample-major values into out. Clock times
 * outside the channel's time span are an RB_EINPUT error naming the channel and the time (the
 * exact first and last sample times are inside). A clock time equal to a sample time gives that
 * sample exactly. Non-finite input samples follow `policy`: only samples the clock uses count (for
 * LINEAR the two neighbours, for HOLD the latest one); under HOLD a non-finite neighbour is
 * replaced by the element's last finite value at or before the lower neighbour, and RB_EINPUT when
 * there is none yet; *n_held (may be NULL) receives how many output values used a replacement.
 * One merge pass over the channel: O(T + clk->n). Errors name the channel, element and sample
 * index: RB_EINPUT (non-increasing or non-finite channel timestamps, non-finite samples under
 * RB_NONFINITE_ERROR), RB_EINVAL (sel index out of range, clock not strictly increasing or not
 * finite), RB_ENOMEM. On error `out` may be partly written. */
int rb_resample(const rb_channel *ch, const size_t *sel, size_t n_sel, const rb_clock *clk, rb_interp interp,
                rb_nonfinite policy, double *out, size_t *n_held, rb_err *err);

/* rb_resample window by window, for a channel read in parts (rb_log_source): the same values bit for bit, the
 * same non-finite handling, counts and messages (sample indices are the channel's). rb_resampler_new takes the
 * channel's description (name, n_samples, n_elements, element_names: borrowed until rb_resampler_free; time and
 * data unused) and the selection (copied). Each rb_resampler_run resamples the clock times t[0..n) (increasing,
 * after the previous run's) from the channel's samples [first, first + count), given in time and data
 * (count x n_elements): first must be at most rb_resampler_need (the latest sample at or before the previous
 * run's last clock time, 0 at the start) and the samples must reach past t[n - 1] (a sample after it) or to the
 * channel's end, else RB_EINVAL. Clock times outside the channel's span are RB_EINPUT as in rb_resample. Only
 * rb_resampler_new allocates. rb_resampler_held: the values held so far (rb_resample's *n_held). */
typedef struct rb_resampler rb_resampler;
int rb_resampler_new(const rb_channel *ch, const size_t *sel, size_t n_sel, rb_interp interp, rb_nonfinite policy,
                     rb_resampler **out, rb_err *err);
int rb_resampler_run(rb_resampler *r, const double *time, const double *data, size_t first, size_t count,
                     const double *t, size_t n, double *out, rb_err *err);
size_t rb_resampler_need(const rb_resampler *r);
size_t rb_resampler_held(const rb_resampler *r);
void rb_resampler_free(rb_resampler *r);

/* Every channel of `in` resampled (linear, non-finite samples an error) onto one uniform clock at `rate` Hz
 * (rb_clock_uniform) over the span all non-empty channels cover, names, units and attributes copied: a new
 * log (rb_log_free). RB_EINPUT "the channels share no common time span to resample", or when the clock would
 * hold over 1000 times the samples of the longest channel and over 1e7 (naming the likely cause: timestamps in
 * nanoseconds or microseconds, or the rate against the channel's 1 / median interval); rb_resample's errors,
 * RB_ENOMEM. */
int rb_log_resample(const rb_log *in, double rate, rb_log **out, rb_err *err);

RB_API_END

#endif
