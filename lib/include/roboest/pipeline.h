/*
 * roboest pipeline: the JSON pipeline configuration, the runner that replays a log through the stages
 * and the stream that steps them inside a caller's loop. The stage interface and the registry are in
 * roboest/stage.h.
 *
 * A pipeline binds log channels to named signals, wires signals through stages (each stage type
 * is a causal estimator with named input and output ports), and names the signals to write and
 * the estimate/reference pairs to score. Loading validates everything that can be checked without
 * a log; running aligns the bound channels on one sample clock, steps every stage once per sample
 * in dependency order, records what is written or scored, and computes the metrics.
 *
 * Configuration file (JSON; every key below, unknown or duplicated keys are errors). Relative
 * paths in "model" and "logs" are relative to the folder holding the config file; "outputs" and
 * "reports" paths are relative to the run's output folder.
 *
 *   name        string, optional (default: the config file name without ".json"). Names the run in
 *               reports ("<name>/<log stem>").
 *   model       object, optional: {"urdf": path (required), "joints": [names] (optional, default
 *               all movable joints, URDF order; the order of every joint vector), "base": link
 *               (optional, default the URDF root), "floating": bool (default false)}. Loaded once
 *               when the pipeline loads (a missing joint or link is a config error at model.urdf),
 *               recorded as provenance and shared read-only by the model-based stages.
 *   logs        array, optional (default empty; the CLI may override it). Each entry is a path,
 *               or a non-empty array of paths forming one session (files concatenated in order).
 *   clock       object, required, exactly one of:
 *                 {"rate": Hz}         uniform clock, number > 0: from the latest first sample to
 *                                      the earliest last sample over the bound channels;
 *                 {"channel": name}    the timestamps of a log channel inside that common span.
 *   window      a time window (config.h rb_window: [t0, t1] absolute log s, or {"from_start": [t0, t1]}, s after
 *               the log's first sample), optional, limiting the clock.
 *   settle      number >= 0, s, optional (default: the largest settling time the stages declare,
 *               rb_stage_type.settle): a metric without a window scores from the clock's first sample plus
 *               settle (the filters' start-up transient excluded; 0: every sample).
 *   gap_factor  number > 1, optional (default 3): sample intervals longer than gap_factor x the
 *               channel's median interval are reported as gaps (warnings, not errors).
 *   signals     object, required, at least one entry: signal name -> binding
 *                 {"channel": log channel (required), or an array of channels whose elements are
 *                             concatenated in list order (e.g. every FT sensor of a leg as one signal;
 *                             each channel is resampled on its own, so their timestamps may differ),
 *                  "elements": [names] or [indices] (optional, default every element in order; single
 *                             channel only),
 *                  "interp": "linear" | "hold" (default "linear"),
 *                  "nonfinite": "error" | "hold" (default "error"),
 *                  "names": [names] (optional, default the channel's element names): the binding's
 *                             elements renamed, in order (after "elements" and concatenation), unique,
 *                             non-empty, not "all"; one per element (a count that differs is an error
 *                             naming the binding, the channel and both counts); only for channels
 *                             whose file leaves the elements unnamed ("0", "1", ...: RB_EINPUT at run
 *                             time otherwise, since renaming real names risks a silent mislabel),
 *                  "scale": number, finite and non-zero (default 1): every value read is multiplied
 *                             by it (deg/s -> rad/s: 0.017453292519943295), recorded as provenance
 *                             "signals.<name>.scale",
 *                  "unit": string (optional, default the channel's units): the unit of every element
 *                             after scaling, recorded in outputs; required with a scale other than 1,
 *                  "optional": bool (default false): a log with none of the binding's channels binds
 *                             it 0 wide (a stage input wired to it sees width 0, as if unwired) and
 *                             the run's warnings say so; some but not all of its channels is still
 *                             RB_ENOTFOUND naming the missing one}.
 *               Signal names use letters, digits and "_ . - /" (they become output channel names).
 *               Without "names", a binding of several channels whose element names collide (two
 *               unnamed channels both "0", "1", ...) names each element "<channel>/<element>".
 *   stages      array, optional: {"id": unique string (required), "type": registered stage type
 *               (required), "in": {port: signal} (every input port the type does not mark optional), "out": {port: new signal
 *               name} (at least one output port; a port left out is unwired: the stage still
 *               computes it, into a scratch row the runner owns, but it is no signal and is never
 *               recorded), "params": {name: value} (optional; per the type's schema, defaults
 *               filled in)}. Stages run in dependency order, ties in file order. An unknown port
 *               name is an error (with the closest port as a suggestion).
 *   outputs     array, optional: {"path": relative file name (required; .h5/.hdf5, .mat or .csv
 *               decides the format), "signals": [signal names] (required, non-empty)}.
 *   metrics     array, optional: {"estimate": signal (required), "reference": signal (required),
 *               "window": a time window (optional; default from the clock's first sample + settle), "name": label in the report
 *               (optional, default the estimate's name), "labels": [class names] (optional: a confusion table of
 *               class codes 0, 1, ... instead of error statistics, metrics.h rb_confusion), "reference_labels"
 *               (default labels), "where": signal (optional: the samples counted, where it is non-zero; same
 *               width), "reference_log": a path template or {"path", "time_offset", "interp"} (optional:
 *               "reference" is then a channel of that file, aligned by time; see rb_reference_log)}. Widths must
 *               agree (checked per run).
 *   reports     array of relative file names, optional (.md, .json or .csv decides the format);
 *               needs at least one metric.
 *   faults      object, optional: the sensor-fault monitor (metrics.h rb_fault_scan): every element of every
 *               bound channel, over the samples inside the run's clock span, and the normalized innovations of
 *               the stages that show them (ukf_torque), attributed to the input element they measure. Keys:
 *                 "enabled": bool (default true);
 *                 "stuck_window": integer >= 0 (default 200): that many consecutive samples within
 *                                 stuck_tolerance of the first are stuck (0: off);
 *                 "stuck_tolerance": number >= 0 (default 0: exactly equal), in the channel's unit;
 *                 "saturation_window": integer >= 0 (default 100): that many consecutive samples at the
 *                                 element's largest or smallest value over the span are saturated (0: off);
 *                 "k_sigma": number >= 0 (default 8): a normalized innovation beyond it is an outlier (0: off);
 *                 "settle": number >= 0 (default 0.5): seconds after the clock's first sample before outliers
 *                           count (a filter's start-up transient is no sensor fault).
 *               The findings go to rb_run_result.faults and the reports' faults section (not to the warnings).
 *
 * The resolved configuration (rb_pipeline_resolved_json, roboest run --print-config) lists only the
 * wired output ports: unwired ones are absent from "out", as in the file.
 *
 * Error messages of the loader read "<file>:<line>:<col>: <key path>: <what>" with the key path
 * written like stages[2].params.alpha; a malformed file gives "<file>:<line>:<col>: malformed
 * JSON (...)". Loader errors are RB_ECONFIG unless noted (RB_ENOTFOUND: the file is missing;
 * RB_ENOMEM).
 */
#ifndef ROBOEST_PIPELINE_H
#define ROBOEST_PIPELINE_H

#include "roboest/config.h"
#include "roboest/core.h"
#include "roboest/io.h"
#include "roboest/metrics.h"
#include "roboest/model.h"
#include "roboest/stage.h"

RB_API_BEGIN

/* ---- the loaded pipeline (read-only for callers) ------------------------------------------------- */
typedef struct rb_config_signal {
    char *name;
    char *channel;     /* channels[0] (borrowed from channels) */
    size_t n_channels; /* >= 1: several channels are concatenated, element blocks in list order */
    char **channels;
    size_t n_select;        /* 0: every element of the channel */
    char **select_names;    /* n_select element names, or NULL when selected by index */
    size_t *select_indices; /* n_select element indices, or NULL when selected by name */
    rb_interp interp;
    rb_nonfinite nonfinite;
    size_t n_names; /* 0: the channels' element names */
    char **names;   /* n_names names of the binding's elements ("names"), or NULL */
    double scale;   /* every value read is multiplied by it (default 1) */
    char *unit;     /* unit of every element after scaling ("unit"), or NULL: the channels' */
    bool optional;  /* "optional": a log with none of the channels binds it 0 wide (a warning), not an error */
} rb_config_signal;

typedef struct rb_config_stage {
    char *id;
    const rb_stage_type *type; /* borrowed from the registry */
    size_t file_index;         /* position in the file's "stages" array */
    char **in;                 /* type->n_inputs signal names, port order */
    char **out;                /* type->n_outputs signal names, port order; NULL: the port is unwired */
    size_t *in_signal;         /* type->n_inputs indices into rb_pipeline.signal_table */
    size_t *out_signal;        /* type->n_outputs indices into rb_pipeline.signal_table; SIZE_MAX: unwired */
    rb_param_value *params;    /* type->n_params, schema order */
} rb_config_stage;

typedef struct rb_config_output {
    char *path; /* relative to the run's output folder */
    rb_out_format format;
    size_t n_signals;
    char **signals;
    size_t *signal_index; /* into rb_pipeline.signal_table */
} rb_config_output;

/* A reference kept in another file than the log ("reference_log" of a pipeline metric or a suite): the
 * channel scored against is read from it and aligned by time on the run's clock (reference.c). */
typedef struct rb_reference_log {
    char *path;         /* as resolved at load: may hold {log_dir}, {log_stem}, {log_name} (NULL: none) */
    bool has_offset;    /* "time_offset" given: the clocks are not compared */
    double time_offset; /* s added to the reference file's timestamps */
    rb_interp interp;   /* onto the run's clock */
} rb_reference_log;

/* "reference_log" at c's current path: a path, or {"path", "time_offset", "interp" (only if allow_interp)}. The
 * path is resolved
 * against c->base_file's folder unless it is absolute or starts with {log_dir}; an unknown {placeholder} is
 * RB_ECONFIG. */
int rb_reference_log_parse(rb_cfg *c, const cJSON *v, bool allow_interp, rb_reference_log *out);
void rb_reference_log_free(rb_reference_log *rl);

/* The class labels of a confusion table, key `key` of object v (a pipeline metric's or a suite's "labels",
 * "reference_labels"): at most RB_CONFUSION_MAX valid names, none twice; *out NULL when absent and not required.
 * RB_ECONFIG naming the key and the label, RB_ENOMEM. */
int rb_confusion_labels_parse(rb_cfg *c, const cJSON *v, const char *key, bool required, char ***out, size_t *n);
/* The reference file's path for the log at log_path (*path, rb_free): RB_EINVAL for a placeholder without a path. */
int rb_reference_log_path(const rb_reference_log *rl, const char *log_path, char **path, rb_err *err);
/* The reference file of the log read from log_path (NULL: a log in memory, an error when the path has a
 * placeholder), read with its timestamps moved by time_offset, and the channel `channel` found in it.
 * *path (rb_free) names the file; free *out with rb_log_free. RB_ENOTFOUND (file, channel), RB_EINPUT. */
int rb_reference_log_read(const rb_reference_log *rl, const char *log_path, const char *channel, char **path,
                          rb_log **out, const rb_channel **ref, rb_err *err);
/* The reference channel against the run's clock t[0..n): RB_EINPUT when, without time_offset, one starts at
 * an epoch time (>= 1e6 s) and the other does not, or when it covers no sample of the clock; both name the
 * file, the spans and the key to give. */
int rb_reference_log_check_clock(const rb_reference_log *rl, const char *path, const rb_channel *ref, const double *t,
                                 size_t n, rb_err *err);

typedef struct rb_config_metric {
    char *name; /* label, default the estimate's name */
    char *estimate, *reference;
    size_t estimate_index, reference_index; /* into rb_pipeline.signal_table */
    bool has_window;
    rb_window window; /* [-INFINITY, INFINITY] without a window (then the run's start-up is skipped: settle) */
    bool confusion;   /* "labels" given: a confusion table of class codes (metrics.h) instead of error statistics */
    size_t n_labels, n_reference_labels;
    char **labels, **reference_labels; /* the estimate's and the reference's classes 0, 1, ... */
    char *where;                       /* NULL: every sample */
    size_t where_index;
    rb_reference_log reference_log; /* path set: `reference` is a channel of that file, not a signal */
} rb_config_metric;

typedef struct rb_config_report {
    char *path; /* relative to the run's output folder */
    rb_report_format format;
} rb_config_report;

/* Every signal, bound or produced by a stage (wired output ports only). */
typedef struct rb_signal_info {
    const char *name; /* borrowed from the binding or the stage */
    bool from_stage;  /* false: signals[index]; true: stages[index].out[port] */
    size_t index, port;
    bool recorded; /* an output or a metric operand: kept for every sample */
} rb_signal_info;

typedef struct rb_pipeline {
    char *name;
    char *config_path;   /* as given to the loader, for messages */
    char *config_sha256; /* of the config text, 64 hex characters */
    char *model_urdf;    /* resolved, NULL without "model" */
    size_t n_model_joints;
    char **model_joints;
    char *model_base; /* NULL: the URDF root */
    bool model_floating;
    rb_model *model;  /* loaded model, NULL without "model" */
    char *config_dir; /* folder of the config file ("." for text without a file) */
    size_t n_logs;
    rb_cfg_session *logs;
    double clock_rate;   /* Hz; 0 when the clock follows a channel */
    char *clock_channel; /* NULL for a uniform clock */
    bool has_window;
    rb_window window; /* [-INFINITY, INFINITY] without a window */
    bool has_settle;  /* "settle" given: the metrics' start-up skip; else the stages' (rb_pipeline_settle) */
    double settle;
    double gap_factor;
    size_t n_signals;
    rb_config_signal *signals; /* file order */
    size_t n_stages;
    rb_config_stage *stages; /* execution (dependency) order */
    size_t n_outputs;
    rb_config_output *outputs;
    size_t n_metrics;
    rb_config_metric *metrics;
    size_t n_reports;
    rb_config_report *reports;
    size_t n_signal_table;
    rb_signal_info *signal_table; /* bindings (file order), then wired stage outputs (stages in file order) */
    bool faults_enabled;          /* "faults": the sensor-fault monitor */
    rb_fault_opts faults;
} rb_pipeline;

/* Load and validate a pipeline file (caller frees *out with rb_pipeline_free). RB_ENOTFOUND if the
 * file cannot be opened; RB_ECONFIG with "<file>:<line>:<col>: <key path>: <what>"; RB_ENOMEM. */
int rb_pipeline_load(const char *path, const rb_registry *reg, rb_pipeline **out, rb_err *err);
/* The same from text (len bytes, need not be NUL-terminated). `name_for_messages` starts messages and
 * gives the default name; relative paths resolve against the folder of `base_file` (NULL: as written). */
int rb_pipeline_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                          const rb_registry *reg, rb_pipeline **out, rb_err *err);
void rb_pipeline_free(rb_pipeline *p);
/* The resolved configuration as indented JSON: defaults filled in, paths resolved, stages in execution
 * order, unwired output ports absent. Loading it again (base_file NULL) gives the same text. Caller
 * frees with rb_free; NULL when out of memory. */
char *rb_pipeline_resolved_json(const rb_pipeline *p);
/* The start-up a run's metrics without a window skip, s: "settle" when given, else the largest settling time the
 * stages' types declare (rb_stage_type.settle) for the sample period dt; *stage (may be NULL) the index in p->stages
 * of the stage that sets it, -1 for the key or when no stage declares one (0 s). */
double rb_pipeline_settle(const rb_pipeline *p, double dt, long *stage);
/* The sample period a run of p on log gives its stages: 1 / clock.rate, or the clock channel's median interval (NaN
 * when the log has no such channel or it has fewer than two samples). */
double rb_pipeline_period(const rb_pipeline *p, const rb_log *log);
/* Index of a signal in p->signal_table, -1 if absent. */
long rb_pipeline_signal_index(const rb_pipeline *p, const char *name);
/* The "scale" and "unit" keys of the channel binding object `binding` at c's current path, as a pipeline's
 * signals read them (friction training specs share it): *scale (finite, non-zero) is left as it is when
 * absent (the caller sets the default 1), *unit (a new copy, caller frees with rb_free) too (default NULL);
 * a scale other than 1 without a unit is an error ("needs 'unit'..."). RB_ECONFIG at the key, RB_ENOMEM. */
int rb_binding_scale_unit(rb_cfg *c, const cJSON *binding, double *scale, char **unit);

/* ---- running ---------------------------------------------------------------------------------------- */
typedef struct rb_run_opts {
    const char *out_dir;     /* output folder, created if missing (one level); NULL: "." */
    bool overwrite;          /* replace existing outputs (the CLI's --force) */
    const char *const *logs; /* override the config's logs (paths as given, relative to the working
                                folder); NULL: the config's */
    size_t n_logs;
    bool concat; /* the override list is one session rather than one log per path */
    /* Called with the samples done / total of the current log, at most every max(1%, 4096) samples
     * and once at the end. Return 0 to go on; non-zero cancels the run, which returns that value if
     * it is a negative rb_status and RB_EINVAL otherwise. May be NULL. */
    int (*progress)(void *user, size_t done, size_t total);
    void *user;
    /* Logs longer than memory: with memory_limit (bytes) or window (clock samples) > 0, a session of one file is
     * read in windows (rb_log_source, rb_pipeline_run_source; window 0: max(4096, limit / 64 KiB) samples) and a
     * layout read whole must fit the limit (said up front). 0 and 0: every log read whole. */
    size_t memory_limit, window;
    /* A run in windows (rb_pipeline_run_source) with this folder (rb_pipeline_run sets it to each log's): its
     * outputs (CSV, .h5, MATLAB v7.3) are begun there as temporaries and written window by window, its metrics'
     * statistics (not confusion tables) accumulated window by window (rb_metrics_stream), a metric's reference_log
     * read window by window (rb_log_source), the signals only these read held one window at a time;
     * rb_run_result_write into the same folder commits them with the other files (and a result freed without it
     * removes them). NULL: every output written at the end. */
    const char *stream_dir;
} rb_run_opts;

/* A recorded signal: clock-length x width values, sample-major. */
typedef struct rb_run_signal {
    char *name;
    size_t width;
    char **names; /* width element names */
    char **units; /* width units ("" unknown) */
    double *data; /* clock.n x width */
} rb_run_signal;

/* The result of one log run (caller frees with rb_run_result_free). */
typedef struct rb_run_result {
    char *run_name;     /* "<pipeline name>/<log stem>" ("memory" for an unnamed in-memory log) */
    char *input;        /* log file names, comma-separated ("memory" for an in-memory log) */
    char *input_sha256; /* SHA-256 of each log file, comma-separated ("" in memory) */
    rb_clock clock;     /* the sample clock, s */
    double dt;          /* the sample period given to the stages, s */
    size_t n_recorded;
    rb_run_signal *recorded; /* every output signal and metric operand, signal-table order */
    size_t *n_held;          /* per binding (p->signals order): non-finite samples held */
    rb_report *report;       /* metric rows of this log (and the faults); NULL without metrics */
    size_t n_faults;         /* the fault monitor's elements (0 when it is off): every bound channel element, then
                                the stage signals an innovation was attributed to */
    rb_report_fault *faults; /* run = run_name; tallies and first times as the report's */
    size_t n_warnings;
    char **warnings;                /* one line each, starting with the log name: gaps, held samples */
    struct rb_out_streams *streams; /* outputs written window by window (rb_run_opts.stream_dir), until written */
} rb_run_result;

/* Replay one in-memory log through the pipeline: check the bound channels' timestamps, build the clock,
 * resample every binding once, step the stages, record, compute the metrics. `paths` are the n_paths
 * files the log was read from (for names and provenance; NULL / 0 for a log built in memory). Errors:
 * RB_ENOTFOUND (a channel or element is missing; the message names the log, channel, element and the
 * config key), RB_EINPUT (bad timestamps, element index out of range, no common time span,
 * non-finite input under "error", naming channel and sample), RB_EDIM (metric widths), RB_ENUMERIC,
 * a stage's own error (prefixed with "stage <id>: sample k: "), RB_ENOMEM. No file is touched. */
int rb_pipeline_run_log(const rb_pipeline *p, const rb_log *log, const char *const *paths, size_t n_paths,
                        const rb_run_opts *opts, rb_run_result **out, rb_err *err);
/* rb_pipeline_run_log on a log read in windows of `window` clock samples (rb_log_source, roboest/io.h): each
 * binding's channels are read part by part and resampled window by window, the stages stepped window after
 * window; the result and its warnings are rb_pipeline_run_log's on the same log bit for bit (an error may be
 * another of the log's errors: a later binding's non-finite sample in an earlier window comes first). In
 * memory: the clock, the recorded signals (outputs and metric operands, every sample; with opts->stream_dir the
 * signals only outputs and statistics read are handled window by window instead, and res->recorded lacks them),
 * one window of each other binding, one part of a metric's reference_log (with opts->stream_dir), one channel's
 * timestamps whole at a time while they are checked, and one part of a channel at a time while the fault monitor
 * scans it.
 * RB_EINVAL for a window of 0. */
int rb_pipeline_run_source(const rb_pipeline *p, rb_log_source *src, const char *const *paths, size_t n_paths,
                           size_t window, const rb_run_opts *opts, rb_run_result **out, rb_err *err);
/* The session paths[0..n_paths) (one file: RB_ECONFIG for more) run by rb_pipeline_run_source on a rb_log_source
 * opened with opts->memory_limit, in windows of opts->window samples (0: max(4096, limit / 64 KiB)). */
int rb_pipeline_run_windowed(const rb_pipeline *p, const char *const *paths, size_t n_paths, const rb_run_opts *opts,
                             rb_run_result **res, rb_err *err);
void rb_run_result_free(rb_run_result *res);
/* A recorded signal by name, NULL if it was not recorded (borrowed). */
const rb_run_signal *rb_run_result_signal(const rb_run_result *res, const char *name);

/* What every output and report of a run records (roboest/core.h "provenance"): roboest_version, pipeline (its
 * name), config (the file name), config_sha256, input (the log files' names, comma-separated), input_sha256 (each
 * file's, comma-separated), model (the URDF; absent without one) and the files' checksums of
 * rb_pipeline_files_provenance. *pv is initialized here (release it with rb_provenance_free, also after a failure).
 * RB_ENOMEM, RB_EIO (a file named by the pipeline no longer readable). */
int rb_pipeline_provenance(const rb_pipeline *p, const char *input, const char *input_sha256, rb_provenance *pv,
                           rb_err *err);

/* The SHA-256 of every file besides the config and the logs that a run's numbers depend on: key_prefix
 * "model_sha256" (the URDF) and, for each stage parameter naming a file (schema flag `file`: a friction network,
 * learned slip thresholds), key_prefix "stages.<id>.<param>_sha256", in stage and parameter order. Added to *pv
 * (initialized by the caller). RB_ENOMEM, RB_EIO. */
int rb_pipeline_files_provenance(const rb_pipeline *p, const char *key_prefix, rb_provenance *pv, rb_err *err);

/* Calls fn(ctx, stage, param, path, err) for each stage parameter naming a file (schema flag `file`) that is set,
 * in stage and parameter order, with its resolved path (rb_stage_file_path); stops at fn's first non-zero
 * return and returns it. RB_ENOMEM. */
typedef int (*rb_stage_file_fn)(void *ctx, const rb_config_stage *st, const char *param, const char *path, rb_err *err);
int rb_pipeline_stage_files(const rb_pipeline *p, rb_stage_file_fn fn, void *ctx, rb_err *err);

/* Write the outputs and reports of one result into the folder out_dir (must exist), all or nothing:
 * every file goes to a temporary next to its target and all are renamed into place only when every one
 * was written. RB_EEXISTS (a target exists and !overwrite), RB_EIO (e.g. a missing folder), the
 * writers' errors (RB_ENUMERIC for a non-finite statistic), RB_ENOMEM: nothing appears. */
int rb_run_result_write(const rb_pipeline *p, const rb_run_result *res, const char *out_dir, bool overwrite,
                        rb_err *err);

/* What rb_pipeline_run did (release with rb_run_summary_free; zero-initialize before the call). */
typedef struct rb_run_summary {
    size_t n_logs;    /* sessions run */
    size_t n_samples; /* clock samples over all sessions */
    size_t n_warnings;
    char **warnings;   /* one line each, for the CLI to print */
    rb_report *report; /* metric rows of every session; NULL without metrics */
} rb_run_summary;

void rb_run_summary_free(rb_run_summary *s);

/* Run every log (the config's, or opts->logs): read it (a session of several files is concatenated with
 * rb_log_append), run it, write its outputs and reports into opts->out_dir, or into
 * opts->out_dir/<log stem> when there are several sessions (then the reports are also written into
 * opts->out_dir with every session's rows). Before any log is read, an existing target without
 * opts->overwrite is RB_EEXISTS. Each session's files appear all or nothing; a failing session stops
 * the run (earlier sessions' files stay). RB_ECONFIG when there is no log or two sessions share a stem;
 * the errors of rb_log_read, rb_log_append, rb_pipeline_run_log and rb_run_result_write, prefixed with
 * the log's path. `summary` may be NULL. */
int rb_pipeline_run(const rb_pipeline *p, const rb_run_opts *opts, rb_run_summary *summary, rb_err *err);

/* ---- streaming: the stages stepped by a caller, one sample at a time (stream.c) ---------------------------
 * For a program that produces the bound channels itself, sample by sample (a simulator running the
 * estimator inside its control loop): no log, no resampling. The stages are the same and are stepped by
 * the same code as rb_pipeline_run_log's, so a log whose channels are sampled on the stream's clock gives
 * the same numbers bit for bit either way. Each binding is one row per sample, filled from the caller's
 * channel rows through the binding's channel list (several channels concatenated in list order) and
 * element selection (by name or index); "interp" is irrelevant (the caller's clock is the stream's), and
 * "nonfinite" applies per sample. Every signal (binding or wired stage output) is one row, rewritten
 * every sample. */

typedef struct rb_stream rb_stream;

/* Set up the pipeline's stage graph for a caller who produces the bound channels one sample at a time.
 * The clock is uniform and known in advance: n_samples samples at t_k = k dt (the stages' create() sees
 * it: dt, n_samples, time). `p` is borrowed and must outlive the stream. Every channel a binding names
 * must be among `channels` (RB_ENOTFOUND "<pipeline>: binding 'x': channel 'c' is not among the
 * stream's channels (signals.x.channel); did you mean 'd'?", the suggestion only for a near miss) unless
 * the binding is optional and none of its channels is there (then it is 0 wide),
 * elements selected by name must exist (RB_ENOTFOUND naming binding, channel, element and
 * signals.x.elements[i]), indices in range (RB_EINPUT, same); a binding's "names", "scale" and "unit" apply
 * as in a log run (RB_EINPUT "<pipeline>: signals.x.names: ..." for a count that differs or a channel whose
 * `elements` are not NULL or "0", "1", ...). The pipeline's logs, clock, window,
 * outputs, metrics and reports are ignored. A stage's create() failing gives its error prefixed
 * "<pipeline>: stage <id>: ". RB_EINVAL for NULL arguments, a NULL channel name or dt not finite and
 * > 0; RB_ENOMEM. On failure *out is NULL and nothing is left allocated. */
int rb_stream_open(const rb_pipeline *p, const rb_channel_info *channels, size_t n_channels, double dt,
                   size_t n_samples, rb_stream **out, rb_err *err);
/* The row of channels[c] (its width values): the caller writes it before rb_stream_step; values not
 * rewritten keep the previous sample's (zero before the first write). NULL when c is out of range. */
double *rb_stream_channel_row(rb_stream *s, size_t c);
/* Step every stage at the next sample k (0, 1, ...; t = k dt): copy the bound elements from the channel
 * rows, apply each binding's nonfinite policy (error: RB_EINPUT "<pipeline>: binding 'x': channel 'c'
 * element 'e': non-finite value at sample k"; hold: the last finite value of that element, 0 before
 * any), step the stages in execution order. Allocates nothing and does no I/O. RB_EINVAL once n_samples
 * samples were stepped, after rb_stream_finish or after an earlier failed step (a failed stream only
 * accepts rb_stream_free); a stage's error prefixed "<pipeline>: stage <id>: sample k: " (RB_ENUMERIC
 * "step failed without a message" for a stage that fails without one). err may be NULL. */
int rb_stream_step(rb_stream *s, rb_err *err);
/* A signal (binding or wired stage output) by name: index >= 0, or -1 if absent. */
long rb_stream_find(const rb_stream *s, const char *name);
/* Its width (0 for an invalid index) and element names (width names; NULL for an invalid index). */
size_t rb_stream_width(const rb_stream *s, long signal);
const char *const *rb_stream_elements(const rb_stream *s, long signal);
/* The signal's row at the last stepped sample (zeros before the first step; valid until rb_stream_free;
 * contents change every step). NULL for an invalid index. */
const double *rb_stream_row(const rb_stream *s, long signal);
/* Stages' finish() (once; a stage's error prefixed "<pipeline>: stage <id>: finish: "); RB_EINVAL after
 * a failed step or a second call. rb_stream_free alone is fine after a failure. */
int rb_stream_finish(rb_stream *s, rb_err *err);
/* Destroys the stages and frees the stream (NULL is fine). */
void rb_stream_free(rb_stream *s);

RB_API_END

#endif
