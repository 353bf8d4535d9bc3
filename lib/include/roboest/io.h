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
 *   - CSV: optional `# key: value` comment lines, a header row whose first column is the time,
 *     then columns named `channel:element` (or `channel:element [unit]`); consecutive columns
 *     with the same channel prefix form one channel; a column without ':' is a one-element
 *     channel named by the column.
 *
 * Errors: RB_ENOTFOUND (no such file/channel/element), RB_EINPUT (corrupt, truncated,
 * unsupported or inconsistent file; the message names the file and the object), RB_ENOMEM,
 * RB_EIO and RB_EEXISTS (writers). Readers never modify their input.
 */
#ifndef ROBOEST_IO_H
#define ROBOEST_IO_H

#include "roboest/core.h"

typedef struct rb_channel {
    char *name;           /* slash path, e.g. "joints_state/positions" */
    size_t n_samples;     /* T */
    size_t n_elements;    /* n */
    double *time;         /* T timestamps in seconds */
    double *data;         /* T x n, sample-major */
    char **element_names; /* n names, never NULL */
    char **units;         /* n units, "" when unknown, never NULL */
} rb_channel;

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
    RB_FMT_CSV
} rb_log_format;

/* Human-readable name of a layout ("robot-logger MATLAB v7.3", ...). */
const char *rb_log_format_name(rb_log_format fmt);

typedef struct rb_log {
    char *root_name;     /* root struct of a robot-logger file; NULL otherwise */
    rb_log_format format;
    size_t n_channels, cap_channels;
    rb_channel *channels;
    /* String metadata: `yarp_robot_name`, `description_list` (joint names joined by ','),
     * and provenance written by roboest (`roboest_version`, `config_sha256`, `input_sha256`,
     * `model`, ...). Keys are unique. */
    size_t n_attrs, cap_attrs;
    rb_attr *attrs;
} rb_log;

/* ---- building and querying ---------------------------------------------------------------- */
/* Empty log (caller frees with rb_log_free). */
int rb_log_new(rb_log **out, rb_err *err);
void rb_log_free(rb_log *log);

/* Append a channel of T samples x n elements with zeroed time and data, element names "0".."n-1"
 * and empty units; *out (borrowed, valid until the next channel is added) is for filling in.
 * RB_EINPUT if the name exists already; RB_ENOMEM when T x n overflows or allocation fails. */
int rb_log_add_channel(rb_log *log, const char *name, size_t n_samples, size_t n_elements,
                       rb_channel **out, rb_err *err);
/* Same, copying time (T), data (T x n) and, when not NULL, names and units (n each). */
int rb_log_add_channel_copy(rb_log *log, const char *name, size_t n_samples, size_t n_elements,
                            const double *time, const double *data, const char *const *names,
                            const char *const *units, rb_err *err);
/* Replace element name / unit i of a channel (copies s). */
int rb_channel_set_name(rb_channel *ch, size_t i, const char *s, rb_err *err);
int rb_channel_set_unit(rb_channel *ch, size_t i, const char *s, rb_err *err);

/* Channel by exact name, NULL if absent (borrowed). */
const rb_channel *rb_log_find(const rb_log *log, const char *name);
/* Index of an element by name, -1 if absent. */
long rb_channel_element_index(const rb_channel *ch, const char *element_name);

/* Set (replace) / get a string attribute; get returns NULL if absent (borrowed). */
int rb_log_set_attr(rb_log *log, const char *key, const char *value, rb_err *err);
const char *rb_log_get_attr(const rb_log *log, const char *key);

/* Append the samples of `next` to `log` channel by channel (a session the logger split over
 * several files). Both must hold the same channels with the same elements, and every channel of
 * `next` must start after the matching channel of `log` ends; errors name the channel. Mismatches
 * leave `log` untouched; after RB_ENOMEM some channels may already hold the appended samples. */
int rb_log_append(rb_log *log, const rb_log *next, rb_err *err);

/* ---- reading ---------------------------------------------------------------------------------- */
/* Detect the layout of a file from its content. */
int rb_log_detect(const char *path, rb_log_format *fmt, rb_err *err);
/* Read every channel of a file (caller frees *out with rb_log_free). Messages start with path. */
int rb_log_read(const char *path, rb_log **out, rb_err *err);

/* ---- writing ---------------------------------------------------------------------------------- */
typedef enum rb_out_format {
    RB_OUT_H5,    /* roboest .h5 layout: chunked, deflate-compressed, attributes */
    RB_OUT_MAT73, /* robot-logger layout, MATLAB v7.3 */
    RB_OUT_MAT5,  /* robot-logger layout, MATLAB v7 (v5 container, compressed) */
    RB_OUT_CSV    /* needs every channel on the same timestamps */
} rb_out_format;

/* Output format from a path's extension: .h5/.hdf5 -> H5, .mat -> MAT73, .csv -> CSV. */
int rb_out_format_from_path(const char *path, rb_out_format *fmt, rb_err *err);

typedef struct rb_write_opts {
    rb_out_format format;
    bool overwrite;        /* replace an existing file (the CLI's --force) */
    const char *root_name; /* root struct for .mat output; NULL -> "robot_logger_device" */
} rb_write_opts;

/* Write `log` (channels and attributes) to `path` through a temporary file in the same folder,
 * renamed into place only on success: on any error nothing appears at `path`. */
int rb_log_write(const rb_log *log, const char *path, const rb_write_opts *opts, rb_err *err);
/* Write directly to `path`, creating or truncating it (for callers managing rb_outfile). */
int rb_log_write_raw(const rb_log *log, const char *path, const rb_write_opts *opts, rb_err *err);

/* ---- time: checks, clocks and resampling ------------------------------------------------------ */
typedef struct rb_time_report {
    double t_first, t_last; /* seconds (NaN when T == 0) */
    double median_dt;       /* median sample interval (NaN when T < 2) */
    size_t n_gaps;          /* intervals longer than gap_factor x median_dt */
    double max_gap;         /* longest interval, seconds */
    size_t first_gap;       /* sample index after the first gap, SIZE_MAX if none */
} rb_time_report;

/* Statistics of a channel's timestamps; RB_EINPUT naming the channel and the sample index if a
 * timestamp is not finite or not strictly greater than the one before it. */
int rb_channel_check_time(const rb_channel *ch, double gap_factor, rb_time_report *rep, rb_err *err);

/* A sample clock: strictly increasing times (owned). */
typedef struct rb_clock {
    size_t n;
    double *t;
} rb_clock;

/* Uniform clock t0, t0 + dt, ... up to t1 (inclusive within 1e-9 dt). */
int rb_clock_uniform(rb_clock *clk, double t0, double t1, double dt, rb_err *err);
/* The timestamps of a channel that fall in [t0, t1] (use -INFINITY / INFINITY for no bound). */
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

/* Resample elements `sel` (n_sel indices into the channel; NULL = all, in order) onto the clock,
 * writing clk->n x n_sel sample-major values into out. Clock times outside the channel's time
 * span are an RB_EINPUT error naming the channel and the time. Non-finite input samples follow
 * `policy`; *n_held (may be NULL) receives how many output values were held. One pass over the
 * channel: O(T + clk->n). Errors name the channel, element and sample index. */
int rb_resample(const rb_channel *ch, const size_t *sel, size_t n_sel, const rb_clock *clk,
                rb_interp interp, rb_nonfinite policy, double *out, size_t *n_held, rb_err *err);

#endif
