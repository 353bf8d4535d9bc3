/*
 * roboest pipeline: the stage interface, the stage registry, the JSON pipeline configuration and
 * the runner that replays a log through the stages.
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
 *   window      [t0, t1], optional: absolute log times in seconds, t0 < t1, limiting the clock.
 *   gap_factor  number > 1, optional (default 3): sample intervals longer than gap_factor x the
 *               channel's median interval are reported as gaps (warnings, not errors).
 *   signals     object, required, at least one entry: signal name -> binding
 *                 {"channel": log channel (required), or an array of channels whose elements are
 *                             concatenated in list order (e.g. every FT sensor of a leg as one signal;
 *                             each channel is resampled on its own, so their timestamps may differ),
 *                  "elements": [names] or [indices] (optional, default every element in order; single
 *                             channel only),
 *                  "interp": "linear" | "hold" (default "linear"),
 *                  "nonfinite": "error" | "hold" (default "error")}.
 *               Signal names use letters, digits and "_ . - /" (they become output channel names).
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
 *               "window": [t0, t1] (optional, absolute seconds), "name": label in the report
 *               (optional, default the estimate's name)}. Widths must agree (checked per run).
 *   reports     array of relative file names, optional (.md, .json or .csv decides the format);
 *               needs at least one metric.
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
#include "roboest/sim.h"

/* ---- stage parameters --------------------------------------------------------------------- */
typedef enum rb_param_kind {
    RB_PARAM_NUMBER,       /* finite double */
    RB_PARAM_INTEGER,      /* integral number, |x| <= 2^53 */
    RB_PARAM_BOOLEAN,      /* true / false */
    RB_PARAM_STRING,       /* string, optionally one of `choices` */
    RB_PARAM_NUMBER_ARRAY, /* array of finite numbers */
    RB_PARAM_STRING_ARRAY  /* array of strings */
} rb_param_kind;

/* Name of a kind for messages and --help ("number", "string array", ...). */
const char *rb_param_kind_name(rb_param_kind kind);

/* One parameter of a stage type's schema. Zero-initialized fields mean "no bound / no default". */
typedef struct rb_param_spec {
    const char *name;
    rb_param_kind kind;
    bool required;
    double def_number;                /* default of NUMBER / INTEGER / BOOLEAN (0 or 1) */
    const char *def_string;           /* default of STRING (NULL: none) */
    const double *def_numbers;        /* default of NUMBER_ARRAY (def_count values) */
    const char *const *def_strings;   /* default of STRING_ARRAY (def_count strings) */
    size_t def_count;
    bool has_min, min_exclusive;      /* value (each array element) >= min, or > min */
    double min;
    bool has_max, max_exclusive;      /* value (each array element) <= max, or < max */
    double max;
    size_t min_count, max_count;      /* array length bounds; max_count 0: unbounded */
    const char *const *choices;       /* STRING / STRING_ARRAY: allowed values, NULL-terminated */
    const char *doc;                  /* one line, with the unit */
} rb_param_spec;

/* A validated parameter value. Owned by the pipeline; read-only for stages. */
typedef struct rb_param_value {
    bool given;        /* set in the config; false: the default */
    double number;     /* NUMBER, INTEGER, BOOLEAN (0 or 1) */
    char *string;      /* STRING (NULL: optional and absent without default) */
    size_t count;      /* NUMBER_ARRAY / STRING_ARRAY length */
    double *numbers;   /* count values */
    char **strings;    /* count strings */
} rb_param_value;

struct rb_stage_type;

/* The parameters of one stage: values[i] belongs to type->params[i]. */
typedef struct rb_params {
    const struct rb_stage_type *type;
    const rb_param_value *values;
} rb_params;

/* Value by name, NULL if the type's schema has no such parameter. */
const rb_param_value *rb_params_get(const rb_params *p, const char *name);
/* Typed shortcuts: NAN / 0 / false / NULL when the schema has no such parameter. */
double rb_params_number(const rb_params *p, const char *name);
long long rb_params_integer(const rb_params *p, const char *name);
bool rb_params_boolean(const rb_params *p, const char *name);
const char *rb_params_string(const rb_params *p, const char *name);

/* ---- stages ------------------------------------------------------------------------------------ */
/* One port of a stage at set-up: `width` elements per sample with their names and units. */
typedef struct rb_port {
    size_t width;
    const char *const *names; /* width element names; outputs: NULL gives "0", "1", ... */
    const char *const *units; /* width units ("" unknown); outputs: NULL gives "" */
} rb_port;

/* What a stage's create() gets. Everything is borrowed and stays valid until destroy(). */
typedef struct rb_stage_setup {
    const char *id;          /* the stage's id in the config, for messages */
    const rb_params *params; /* validated, defaults filled in */
    const rb_port *in;       /* type->n_inputs ports, in the type's order */
    rb_port *out;            /* type->n_outputs ports: create() sets width, names, units of every port,
                                wired or not; the name and unit strings must stay valid until destroy()
                                (input names may be reused) */
    double dt;               /* sample period, s: 1 / rate for a uniform clock, the channel's median
                                interval for a channel clock */
    size_t n_samples;        /* clock length */
    const double *time;      /* n_samples clock times, s, strictly increasing */
    const rb_model *model;   /* the pipeline's model (config key "model"), NULL without one */
    const char *config_dir;  /* folder of the pipeline file: files named in params are relative to it */
} rb_stage_setup;

/*
 * A stage type. The runner calls create() once per run, then step() for k = 0 .. n_samples-1 in
 * order, then finish(), then destroy() (also after a failure once create() succeeded).
 *   create   allocate everything the stage needs and set the outputs' widths; returns RB_OK or an
 *            rb_status with a message (RB_ECONFIG for a parameter that does not fit the inputs);
 *            on failure nothing is left allocated.
 *   step     compute sample k from the inputs at sample k (in[i]: in port i's width values) and
 *            its own state only (causal); write every output value (out[j]: width values). The
 *            output rows are write-only: keep in the state whatever the next sample needs. An
 *            unwired output's row is the runner's scratch (distinct from every other row, same
 *            width): a stage writes all its outputs and never needs to know which are wired. Must
 *            not allocate or do I/O. A non-zero return (an rb_status with a message) stops the run.
 *   finish   end-of-run work (may be NULL).
 *   destroy  free the state (may be NULL when create allocates nothing).
 */
typedef struct rb_stage_type {
    const char *name;    /* registry key, e.g. "lowpass" */
    const char *summary; /* one line for --help */
    const char *const *inputs;
    size_t n_inputs;
    uint64_t optional_inputs; /* bit j set: input port j may be left unwired; create() then sees width 0
                                 (names, units NULL) and step() a non-NULL pointer to nothing */
    const char *const *outputs;
    size_t n_outputs;
    const rb_param_spec *params;
    size_t n_params;
    int (*create)(const rb_stage_setup *setup, void **state, rb_err *err);
    int (*step)(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err);
    int (*finish)(void *state, rb_err *err);
    void (*destroy)(void *state);
} rb_stage_type;

/* ---- registry ------------------------------------------------------------------------------------ */
typedef struct rb_registry rb_registry;

/* Empty registry (caller frees with rb_registry_free). */
int rb_registry_new(rb_registry **out, rb_err *err);
void rb_registry_free(rb_registry *reg);
/* Add a type (borrowed: it must outlive the registry, normally a static). RB_EINVAL if the name is
 * taken or the type is malformed (no step, duplicate port or parameter names, a default outside its
 * bounds or choices); RB_ENOMEM. */
int rb_registry_add(rb_registry *reg, const rb_stage_type *type, rb_err *err);
/* Type by exact name, NULL if absent (borrowed). */
const rb_stage_type *rb_registry_find(const rb_registry *reg, const char *name);
/* Iteration for listings, in name order: i < rb_registry_count(reg). */
size_t rb_registry_count(const rb_registry *reg);
const rb_stage_type *rb_registry_at(const rb_registry *reg, size_t i);

/* ---- the loaded pipeline (read-only for callers) ------------------------------------------------- */
typedef struct rb_config_signal {
    char *name;
    char *channel;            /* channels[0] (borrowed from channels) */
    size_t n_channels;        /* >= 1: several channels are concatenated, element blocks in list order */
    char **channels;
    size_t n_select;          /* 0: every element of the channel */
    char **select_names;      /* n_select element names, or NULL when selected by index */
    size_t *select_indices;   /* n_select element indices, or NULL when selected by name */
    rb_interp interp;
    rb_nonfinite nonfinite;
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
    char *path;               /* relative to the run's output folder */
    rb_out_format format;
    size_t n_signals;
    char **signals;
    size_t *signal_index;     /* into rb_pipeline.signal_table */
} rb_config_output;

typedef struct rb_config_metric {
    char *name;               /* label, default the estimate's name */
    char *estimate, *reference;
    size_t estimate_index, reference_index; /* into rb_pipeline.signal_table */
    bool has_window;
    double t0, t1;            /* -INFINITY / INFINITY without a window */
} rb_config_metric;

typedef struct rb_config_report {
    char *path;               /* relative to the run's output folder */
    rb_report_format format;
} rb_config_report;

/* Every signal, bound or produced by a stage (wired output ports only). */
typedef struct rb_signal_info {
    const char *name;         /* borrowed from the binding or the stage */
    bool from_stage;          /* false: signals[index]; true: stages[index].out[port] */
    size_t index, port;
    bool recorded;            /* an output or a metric operand: kept for every sample */
} rb_signal_info;

typedef struct rb_pipeline {
    char *name;
    char *config_path;        /* as given to the loader, for messages */
    char *config_sha256;      /* of the config text, 64 hex characters */
    char *model_urdf;         /* resolved, NULL without "model" */
    size_t n_model_joints;
    char **model_joints;
    char *model_base;         /* NULL: the URDF root */
    bool model_floating;
    rb_model *model;          /* loaded model, NULL without "model" */
    char *config_dir;         /* folder of the config file ("." for text without a file) */
    size_t n_logs;
    rb_cfg_session *logs;
    double clock_rate;        /* Hz; 0 when the clock follows a channel */
    char *clock_channel;      /* NULL for a uniform clock */
    bool has_window;
    double t0, t1;            /* -INFINITY / INFINITY without a window */
    double gap_factor;
    size_t n_signals;
    rb_config_signal *signals; /* file order */
    size_t n_stages;
    rb_config_stage *stages;   /* execution (dependency) order */
    size_t n_outputs;
    rb_config_output *outputs;
    size_t n_metrics;
    rb_config_metric *metrics;
    size_t n_reports;
    rb_config_report *reports;
    size_t n_signal_table;
    rb_signal_info *signal_table; /* bindings (file order), then wired stage outputs (stages in file order) */
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
/* Index of a signal in p->signal_table, -1 if absent. */
long rb_pipeline_signal_index(const rb_pipeline *p, const char *name);

/* ---- running ---------------------------------------------------------------------------------------- */
typedef struct rb_run_opts {
    const char *out_dir;     /* output folder, created if missing (one level); NULL: "." */
    bool overwrite;          /* replace existing outputs (the CLI's --force) */
    const char *const *logs; /* override the config's logs (paths as given, relative to the working
                                folder); NULL: the config's */
    size_t n_logs;
    bool concat;             /* the override list is one session rather than one log per path */
    /* Called with the samples done / total of the current log, at most every max(1%, 4096) samples
     * and once at the end. Return 0 to go on; non-zero cancels the run, which returns that value if
     * it is a negative rb_status and RB_EINVAL otherwise. May be NULL. */
    int (*progress)(void *user, size_t done, size_t total);
    void *user;
} rb_run_opts;

/* A recorded signal: clock-length x width values, sample-major. */
typedef struct rb_run_signal {
    char *name;
    size_t width;
    char **names;   /* width element names */
    char **units;   /* width units ("" unknown) */
    double *data;   /* clock.n x width */
} rb_run_signal;

/* The result of one log run (caller frees with rb_run_result_free). */
typedef struct rb_run_result {
    char *run_name;          /* "<pipeline name>/<log stem>" ("memory" for an unnamed in-memory log) */
    char *input;             /* log file names, comma-separated ("memory" for an in-memory log) */
    char *input_sha256;      /* SHA-256 of each log file, comma-separated ("" in memory) */
    rb_clock clock;          /* the sample clock, s */
    double dt;               /* the sample period given to the stages, s */
    size_t n_recorded;
    rb_run_signal *recorded; /* every output signal and metric operand, signal-table order */
    size_t *n_held;          /* per binding (p->signals order): non-finite samples held */
    rb_report *report;       /* metric rows of this log; NULL without metrics */
    size_t n_warnings;
    char **warnings;         /* one line each, starting with the log name: gaps, held samples */
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
void rb_run_result_free(rb_run_result *res);
/* A recorded signal by name, NULL if it was not recorded (borrowed). */
const rb_run_signal *rb_run_result_signal(const rb_run_result *res, const char *name);

/* Write the outputs and reports of one result into the folder out_dir (must exist), all or nothing:
 * every file goes to a temporary next to its target and all are renamed into place only when every one
 * was written. RB_EEXISTS (a target exists and !overwrite), RB_EIO (e.g. a missing folder), the
 * writers' errors (RB_ENUMERIC for a non-finite statistic), RB_ENOMEM: nothing appears. */
int rb_run_result_write(const rb_pipeline *p, const rb_run_result *res, const char *out_dir, bool overwrite,
                        rb_err *err);

/* What rb_pipeline_run did (release with rb_run_summary_free; zero-initialize before the call). */
typedef struct rb_run_summary {
    size_t n_logs;         /* sessions run */
    size_t n_samples;      /* clock samples over all sessions */
    size_t n_warnings;
    char **warnings;       /* one line each, for the CLI to print */
    rb_report *report;     /* metric rows of every session; NULL without metrics */
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

/* One channel the caller feeds to a stream: its name as a log channel ("joints_state/positions"),
 * width and element names / units (borrowed until rb_stream_open returns; the stream copies what it keeps). */
typedef struct rb_stream_channel {
    const char *name;
    size_t width;
    const char *const *elements; /* width names (NULL: "0", "1", ...) */
    const char *const *units;    /* width units, NULL: all "" */
} rb_stream_channel;

typedef struct rb_stream rb_stream;

/* Set up the pipeline's stage graph for a caller who produces the bound channels one sample at a time.
 * The clock is uniform and known in advance: n_samples samples at t_k = k dt (the stages' create() sees
 * it: dt, n_samples, time). `p` is borrowed and must outlive the stream. Every channel a binding names
 * must be among `channels` (RB_ENOTFOUND "<pipeline>: binding 'x': channel 'c' is not among the
 * stream's channels (signals.x.channel); did you mean 'd'?", the suggestion only for a near miss),
 * elements selected by name must exist (RB_ENOTFOUND naming binding, channel, element and
 * signals.x.elements[i]), indices in range (RB_EINPUT, same). The pipeline's logs, clock, window,
 * outputs, metrics and reports are ignored. A stage's create() failing gives its error prefixed
 * "<pipeline>: stage <id>: ". RB_EINVAL for NULL arguments, a NULL channel name or dt not finite and
 * > 0; RB_ENOMEM. On failure *out is NULL and nothing is left allocated. */
int rb_stream_open(const rb_pipeline *p, const rb_stream_channel *channels, size_t n_channels, double dt,
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

/* ==== simulation scenarios (lib/pipeline/scenario.c) ========================================================
 * A scenario JSON file -> a filled rb_sim_scenario (roboest/sim.h), its model, the sensors to sample and the
 * output options, for `roboest simulate`. Errors are RB_ECONFIG "<file>:<line>:<col>: <key path>: <what>"
 * with a suggestion for an unknown key or value (the pipeline loader's helpers), RB_ENOTFOUND / RB_EINPUT
 * for the scenario or model file. Every key not listed here is an error. Units SI, angles rad.
 *
 *   name        string; default: the file's stem
 *   model       {urdf (required; relative to the scenario file), joints ([names]; default: all movable
 *               joints), base (link; default the URDF root), floating (bool, default false)}
 *   duration    s, >= 0 (required)           dt          s, > 0 (default 0.001)
 *   method      "euler" (default) | "rk4"    log_rate    Hz, > 0 (default 1 / dt): the rate of the
 *   seed        integer >= 0 (default 0)                 noise-free channels and of the truth
 *   base_pose   floating base only: {position [x y z] (m), rpy [roll pitch yaw] (rad, R = Rz Ry Rx)}, the
 *               base's initial pose in the world (default: the origin, identity)
 *   q0          {joint: rad}: initial joint positions (others 0)
 *   references  {joint: {kind: "const"|"sine"|"chirp"|"step"|"spline", offset, amplitude, freq, freq_end,
 *               phase, t0, t1, times [s], values [rad]}} (rb_sim_ref; joints left out hold their q0)
 *   controller  {kind: "none"|"pd"|"torque" (default "none"), gravity_comp (bool), gains: {joint:
 *               {kp, kd, kp_tau, ki_tau}}, torque_feedback, friction_compensation}
 *               torque_feedback (kind "torque" only): "truth" (default: the torque loop's PI acts on the
 *               true joint torque of the previous sample) | "none" (feedforward, no PI) -> RB_TFB_TRUTH /
 *               RB_TFB_NONE. RB_TFB_EXTERNAL (estimated torques) is not a file option: only a program
 *               driving the loop (roboest closed-loop) can give estimates; "external" is an error.
 *               friction_compensation (kind "torque" only): only false (the default) in a file, for the
 *               same reason.
 *   actuators   {joint: {k_t, R, J_m, i_max, k_gear}} (defaults k_t 1, R 1, J_m 0, i_max 0: no limit,
 *               k_gear 0: rigid gear; k_gear N m/rad >= 0 winds the rotor up against the joint, sim.h)
 *   friction    {joint: {model: rb_friction_build name, params: [...]} or {preset: rb_friction_preset
 *               name}, plus optional drift: {s0, s1, t0, t1, amplitude, period, phase, mask}}
 *   joint_limits  bool (default false): stop the joints at the model's position limits (sim.h, step 4)
 *   contacts    [{frame, dim (3|6, default 6), baumgarte_T (s, default 0.02), active (default true)}]
 *               (one contact per frame)
 *   events      [{t (s, >= 0), contact (index in contacts, or its frame name), active (bool)}], all keys
 *               required: switch a contact on (an object placed under a foot; its reference pose is the
 *               frame's pose at t) or off (removed) -> rb_sim_contact_event
 *   pushes      [{frame, shape: "rect"|"half_sine"|"triangle", start, duration, wrench [fx fy fz mx my mz]
 *               (MIXED: world axes, about the frame origin)}]
 *   random_pushes {frame, shape, rate (1/s), duration, force_min, force_max}
 *   payload     {link (a model body, named after its URDF link; a link merged into another body by a fixed
 *               joint is refused with that body's name), kind: "square"|"sine"|"steps" (required), t0 (s,
 *               >= 0, default 0), period (s, > 0; required for square and sine, refused for steps),
 *               pi_a (10 numbers, default: the body's parameters in the model), and exactly one of
 *               pi_b (10 numbers) or added: {mass (kg, > 0, required), com [x y z] (m, body frame,
 *               default 0), inertia [Ixx Ixy Ixz Iyy Iyz Izz] (kg m^2, about the added mass's centre of
 *               mass in body axes, default 0: a point mass)}} -> rb_sim_payload. Parameters follow
 *               roboest/spatial.h: [m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz] about the body frame.
 *               `added` gives pi_b = pi_a + [m_a, m_a c, I_c + m_a (|c|^2 1 - c c^T)] (parallel axes).
 *               pi_a, the added mass's own inertia and pi_b must be physically valid
 *               (rb_inertia_is_physical).
 *   balance     {amplitude (m, >= 0), freq (Hz, >= 0), ik_T (s, > 0, default 0.02)} -> rb_sim_balance:
 *               the CoM moves sideways (world y) by amplitude sin(2 pi freq t) while the contacts stay
 *               planted; needs a floating base, contacts and a controller; no references with it
 *   sensors     [{kind: "joint_encoder"|"motor_encoder"|"motor_current"|"ft"|"accelerometer"|"gyroscope"|
 *               "orientation", name (channel leaf; default: the FT sensor or frame name), ft (FT kind:
 *               model FT sensor), frame (IMU kinds: model frame or IMU sensor name), and overrides of the
 *               preset: rate, jitter, noise, bias, drift_rw, drift_rate, resolution, offset, lo, hi (a
 *               number for every element or an array of one per element)}]. An orientation sensor
 *               logs roll pitch yaw (rad) of the frame's world orientation, R = Rz(yaw) Ry(pitch) Rx(roll)
 *               (rb_m3_to_rpy: iDynTree's RPY, the robot logger's orientations channels), each wrapped
 *               into [-pi, pi) after noise.
 *   Not supported (rejected as unknown keys): per-element subsets of joint-level sensors.
 */
typedef enum rb_scn_source {
    RB_SCN_JOINT_POS = 0, /* joints_state/positions */
    RB_SCN_MOTOR_POS,     /* motors_state/positions */
    RB_SCN_MOTOR_CURRENT, /* motors_state/currents */
    RB_SCN_FT,            /* FTs/<name>: model FT sensor `index` */
    RB_SCN_ACC,           /* accelerometers/<name>: frame slot `index` of sim.frames */
    RB_SCN_GYRO,          /* gyros/<name>: frame slot `index` of sim.frames */
    RB_SCN_ORIENTATION    /* orientations/<name>: frame slot `index` of sim.frames (roll pitch yaw of its world
                           * orientation, rb_m3_to_rpy) */
} rb_scn_source;

typedef struct rb_scenario_sensor {
    char *channel;           /* full channel path, e.g. "FTs/wrist_ft_sensor" */
    rb_scn_source source;
    size_t index;            /* FT sensor or frame slot (see rb_scn_source) */
    rb_sensor_params params; /* name = channel; per-element arrays point into `values` */
    double *values;          /* owned storage of the per-element arrays */
} rb_scenario_sensor;

typedef struct rb_scenario {
    char *name, *path, *sha256; /* scenario name, file and the SHA-256 of its text */
    char *urdf;                 /* resolved model path */
    rb_model *model;            /* loaded model (owned) */
    rb_sim_scenario sim;        /* every pointer in it points into this struct's arrays */
    double log_rate;            /* Hz */
    rb_scenario_sensor *sensors;
    size_t n_sensors;
    /* owned arrays behind sim (internal) */
    double *q0; /* nq */
    rb_sim_ref *refs;
    rb_sim_joint_ctrl *gains;
    rb_sim_actuator *actuators;
    rb_friction_model *friction;
    rb_sim_contact *contacts;
    rb_sim_contact_event *events;
    rb_sim_push *pushes;
    int *frames;
} rb_scenario;

/* ---- scenario runs (lib/pipeline/scenario_run.c) ----
 * What `roboest simulate` does, as a library call: simulate, measure every sensor, record every channel and
 * build the log. The channels, in log order (element names and units as the log gets them):
 *   joints_state/{positions,velocities,accelerations,desired_torques}, motors_state/{positions,velocities,
 *   currents} (joints), the scenario's sensors (FTs/..., accelerometers/..., gyros/..., orientations/...) in
 *   file order, truth/joints/{positions,velocities,accelerations,references,torques,friction_torques},
 *   truth/motors/{torques,currents,current_commands,positions,velocities,accelerations}, truth/joints/at_limit
 *   (joint_limits), truth/contacts/<frame> (per contact), truth/contacts_active (contacts), truth/pushes
 *   (pushes: <i>_fx ... <i>_mz), truth/base/{position,orientation,twist,acceleration}, truth/com,
 *   truth/payload/<body> (payload), truth/energy.
 * Joint-level channels without a configured sensor and the truth are noise-free at log_rate. The log's
 * attributes: roboest_version, scenario, scenario_sha256, model, seed, yarp_robot_name, description_list. */

/* (rb_stream_channel: see "streaming" above) */

/* What a scenario run offers a program that acts inside the loop. */
typedef struct rb_scenario_hook {
    /* Once, after the engine is initialized and before the first sample: the run's channels (every logged
     * channel: sensors and truth, in log order; borrowed for the call). NULL: not called. */
    int (*start)(void *user, const rb_stream_channel *channels, size_t n_channels, rb_err *err);
    /* Every simulation sample (k = 0 .. n_steps, t = k dt), after the channels due at it have been
     * measured, before the step that follows: latest[c] = channel c's newest measured row (NULL before
     * its first sample), fresh[c] = measured at this sample. The hook may call rb_sim_set_torque_feedback
     * (and rb_sim_truth_compute). Non-zero (an rb_status with a message) stops the run. NULL: not called. */
    int (*sample)(void *user, rb_sim *sim, size_t k, double t, const double *const *latest,
                  const bool *fresh, rb_err *err);
    void *user;
} rb_scenario_hook;

/* Run a loaded scenario: simulate, measure every sensor, record every channel, build the log exactly as
 * `roboest simulate` writes it (sensor channels, truth/..., attributes). `sim` overrides s->sim (a copy the
 * caller modified, e.g. torque_feedback), NULL: s->sim. hook NULL: none. *out: the log (rb_log_free), NULL
 * when out == NULL (then nothing is recorded beyond what the hook needs). Errors: rb_sim_*'s,
 * the hook's, RB_ENOMEM. Deterministic: the same scenario gives the same log. */
int rb_scenario_run(const rb_scenario *s, const rb_sim_scenario *sim, const rb_scenario_hook *hook,
                    rb_log **out, rb_err *err);

/* Load and validate a scenario file (caller frees with rb_scenario_free; *out NULL on failure). */
int rb_scenario_load(const char *path, rb_scenario **out, rb_err *err);
/* The same from text: name_for_messages starts messages, base_file anchors the model path. */
int rb_scenario_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                          rb_scenario **out, rb_err *err);
void rb_scenario_free(rb_scenario *s);

/* ==== importing the public UKF joint-torque estimator's configuration (lib/pipeline/ini.c, import_rde.c) =====
 *
 * ---- YARP-style .ini files (rb_ini) ----
 * The syntax of YARP's ResourceFinder / Property .ini files as the public estimator's configurations use it,
 * read strictly (anything else is an error, RB_ECONFIG "<file>:<line>: <what>"):
 *   - one statement per line: `key value`, `[GROUP]` or `[include GROUP "file.ini"]`; blank lines;
 *   - comments start at `;` or `#` outside a quoted string and run to the end of the line (whole lines,
 *     indented lines, after a value, and between the elements of a list);
 *   - key: letters, digits and `_ . -`, starting with a letter or `_`; unique within its group;
 *   - value: exactly one of a bare word (`0.01`, `true`: any run of characters but whitespace and
 *     `( ) , " ; # [ ]`), a quoted string (`"urdf/robot.urdf"`; escapes `\"` and `\\`, no line break), or a
 *     list in parentheses whose elements are bare words or quoted strings separated by commas and/or white
 *     space, which may span lines: `("a", "b")`, `(1e-3, 2e-3)`, `()`. A second value after the first
 *     ("key 1 2"), an empty element (`(1,, 2)`, `(1,)`), a nested list and a missing `)` are errors;
 *   - `[GROUP]` starts a group holding the following keys; groups of one file are siblings under the file's
 *     root (`GROUP` named like keys; unique among its siblings);
 *   - `[include GROUP "file.ini"]` (the file name may also be a bare word) makes GROUP a group of the
 *     including file's root whose keys are the included file's top-level keys and whose sub-groups are the
 *     included file's own [SECTION]s (and includes); the path is relative to the including file's folder. An include nested deeper than 8 files
 *     or a cycle is an error; so is a key right after an include line (start a [GROUP] first);
 *   - a NUL byte or a file above 64 MiB is an error; "\r\n" line ends are accepted.
 * Errors, e.g. "<file>:<line of the '('>: unterminated list for key 'k' (found '[' on line N)" (or "(no ')'
 * before the end of the file)"; a '(' on a later line reads the same), "<file>:<line>: include file 'x.ini'
 * not found (<resolved path>)", "<file>:<line>: duplicate key 'k' (first on line M)"; RB_ENOTFOUND when the
 * top file itself cannot be opened; RB_ENOMEM.
 */
typedef struct rb_ini_entry {
    char *key;
    size_t n_values;    /* 1 for a scalar; any count (0 included) for a list */
    char **values;      /* the texts, quotes and escapes removed */
    bool *quoted;       /* per value: written in double quotes */
    bool is_list;       /* written in parentheses */
    const char *file;   /* where it is written (borrowed from rb_ini.files) */
    size_t line;        /* of the key */
} rb_ini_entry;

typedef struct rb_ini_group {
    char *name;                   /* "" for the root of the top file */
    const char *file;             /* the file holding its keys (borrowed from rb_ini.files) */
    size_t line;                  /* its [GROUP] line in `file`; 0 for a whole file (a root or an include) */
    size_t n_entries;
    rb_ini_entry *entries;        /* file order */
    size_t n_groups;
    struct rb_ini_group *groups;  /* file order */
} rb_ini_group;

typedef struct rb_ini {
    rb_ini_group root;
    size_t n_files;
    char **files;                 /* every file read, top file first, as opened (include paths resolved) */
} rb_ini;

/* Read an .ini file and its includes (caller frees *out with rb_ini_free; *out NULL on failure). */
int rb_ini_load(const char *path, rb_ini **out, rb_err *err);
/* The same from text (len bytes); `name` starts messages and anchors relative include paths. */
int rb_ini_load_text(const char *text, size_t len, const char *name, rb_ini **out, rb_err *err);
void rb_ini_free(rb_ini *ini);

/* Sub-group / entry by exact (case-sensitive) name, NULL if absent (borrowed). */
const rb_ini_group *rb_ini_group_find(const rb_ini_group *g, const char *name);
const rb_ini_entry *rb_ini_entry_find(const rb_ini_group *g, const char *key);
/* "<file>:<line>: [NAME]" (a group with a header line) or "<file>:1: group NAME" into buf, for messages. */
void rb_ini_group_where(const rb_ini_group *g, char *buf, size_t size);

/* Typed reads of key `key` of group g. Absent: RB_ECONFIG "<group where>: missing key 'key'" when
 * `required`, else RB_OK with the output untouched. A value of the wrong shape: RB_ECONFIG "<file>:<line>:
 * key 'key': expected <what>, got ...". Numbers are decimal ([+-]digits[.digits][(e|E)[+-]digits], finite;
 * read under the C locale) written as bare words; booleans are 0, 1, true or false. */
int rb_ini_get_string(const rb_ini_group *g, const char *key, bool required, const char **out, rb_err *err);
int rb_ini_get_number(const rb_ini_group *g, const char *key, bool required, double *out, rb_err *err);
int rb_ini_get_bool(const rb_ini_group *g, const char *key, bool required, bool *out, rb_err *err);
/* A list of strings (bare or quoted): *out borrowed from the entry (n_values strings). */
int rb_ini_get_strings(const rb_ini_group *g, const char *key, bool required, const char *const **out, size_t *n,
                       rb_err *err);
/* A list of exactly `count` numbers into dst (else "expected a list of <count> numbers, got <m>"). */
int rb_ini_get_numbers(const rb_ini_group *g, const char *key, bool required, double *dst, size_t count,
                       rb_err *err);
/* The decimal number syntax above, strictly (the whole of s). */
bool rb_ini_parse_number(const char *s, double *out);

/* ---- the import (rb_rde_import) ----
 * The folder of the public estimator's configuration (config.ini, including model.ini and ukf.ini, which
 * includes ukf/ukf_state.ini and ukf/ukf_measurement.ini) -> a roboest pipeline running the ukf_torque stage
 * on robot-logger channels. Every number is carried over unchanged (covariances are variances, as there).
 *
 * config.ini [GENERAL]
 *   urdf_path       -> "model"."urdf", found (unless opts->urdf is given) at the first existing of
 *                      B/urdf_path and B/<its file name> for B = DIR, DIR/.., DIR/../.. (the public repository
 *                      keeps configs in python/config/NAME and models in python/urdf); written relative to
 *                      the folder of opts->out_path (absolute without it)
 *   sampling_time   -> params.dt and "clock": {"rate": 1 / sampling_time}: the public estimator steps once
 *                      per sampling_time, so the pipeline resamples the log to that rate
 *   robot_name      not mapped (a label); dataset: not mapped (a note): the log is given to `roboest run`
 * model.ini (group MODEL)
 *   joint_list      -> "model"."joints" (the order of every joint vector), signal elements
 *   base_link       -> "model"."base" (fixed base: the public configurations are fixed-base)
 *   [FT] names      -> params.ft_sensors (URDF force/torque sensors of these names must exist) and the
 *                      signal "ft" bound to ["FTs/<name>", ...]; associated_joints must be the sensors' URDF
 *                      joints; frames are not mapped (the reading's frame is the URDF sensor's; a note names
 *                      frames the URDF lacks)
 *   [EXTERNAL_CONTACT] frames -> params.contacts (URDF frames)
 *   [ACCELEROMETER] / [GYROSCOPE] names, frames -> params.accelerometers / gyroscopes: the frames of the
 *                      IMUs the measurement dynamics_list uses, in model.ini order, and the signals "acc" /
 *                      "gyro" bound to ["accelerometers/<name>", ...] / ["gyros/<name>", ...]; unused IMUs:
 *                      notes
 * ukf.ini (group UKF): alpha, beta, kappa -> params alpha, beta, kappa
 * ukf_state.ini: the blocks of dynamics_list (others: notes), each with name, dynamic_model, covariance
 * (-> q_*), initial_covariance (-> p0_*), elements (checked: joint_list for per-joint blocks), by `name`:
 *   ds (JointVelocityStateDynamics)                     -> q_dq, p0_dq
 *   tau_m (ZeroVelocityStateDynamics)                   -> q_tau_m, p0_tau_m
 *   tau_F (FrictionTorqueStateDynamics, friction_k0/k1/k2) -> friction_dynamics "rate_model", friction_k0..2,
 *         (ZeroVelocityStateDynamics)                   -> friction_dynamics "random_walk"; q_tau_f, p0_tau_f
 *   an [FT] name (ZeroVelocityStateDynamics)            -> q_ft, p0_ft (6 per sensor, ft_sensors order)
 *   a contact frame (ZeroVelocityStateDynamics, or ExternalContactStateDynamics with k)
 *                                                       -> q_contact, p0_contact; contact_decay = k (one value)
 *   <FT name>_bias, <accelerometer name>_bias, <gyroscope name>_bias (ZeroVelocityStateDynamics)
 *                                                       -> q_ft_bias / q_acc_bias / q_gyro_bias and p0_bias
 *         ([one value]: the stage takes one), used when the sensors' measurements have use_bias 1
 *   ("ZeroVelocityDynamics" is read as ZeroVelocityStateDynamics, its older name)
 * ukf_measurement.ini: the blocks of dynamics_list, by name and dynamic_model:
 *   ds (ConstantMeasurementModel)                       -> r_dq
 *   i_m (MotorCurrentMeasurementDynamics, gear_ratio, torque_constant) -> r_current, gear_ratio, k_t
 *   an [FT] name (ConstantMeasurementModel, use_bias)   -> r_ft, ft_bias
 *   an [ACCELEROMETER] name (AccelerometerMeasurementDynamics, use_bias) -> r_acc, acc_bias
 *   a [GYROSCOPE] name (GyroscopeMeasurementDynamics, use_bias) -> r_gyro, gyro_bias
 * Signals (robot-logger channels): q = joints_state/positions, dq = joints_state/velocities (the public
 * estimator measures the logged velocities), current = motors_state/currents, each with elements joint_list;
 * ft, acc, gyro as above (absent groups leave the port unwired). Stage "ukf" of type ukf_torque with
 * ft_offset "first_sample" (the public application's start-up offset); outputs ukf/tau_j, ukf/tau_m, ukf/tau_f,
 * ukf/dq, ukf/ft, ukf/contacts, ukf/var, ukf/innovation, ukf/nis written to ukf_torque.h5. No "name" (the
 * pipeline file's stem), no "logs", no metrics.
 *
 * Notes (rb_rde_import.notes, one line each, "<file>:<line>: ..." where a line is known): the dataset; keys and
 * groups the import does not use; blocks not in a dynamics_list (the public estimator ignores them too); IMUs of
 * model.ini no measurement uses; bias states whose measurements have use_bias 0; [FT] frames the URDF lacks;
 * contacts on the base body of their sub-model (the tree cut at the FT sensors): in the public estimator's
 * process model (each sub-model's joint accelerations, its base acceleration known) no joint acceleration
 * depends on them, so no measurement observes them (in the shipped files: ergoCub's r_foot_front and
 * r_foot_rear, the four-joint model's base_link and link_6).
 *
 * Errors (RB_ECONFIG unless noted, "<file>:<line>: <what>"): the ini errors above; a missing required key
 * (name, dynamic_model, covariance, initial_covariance of a state block, ...); dynamics_list naming a block
 * without a [BLOCK] group; an unknown dynamic_model ("[BLOCK]: unknown dynamic_model 'X'"); a block name that
 * is none of the above (e.g. an FT name not in model.ini [FT] names); a block twice; a length that does not
 * fit (joints, 6 per FT / contact, 3 per IMU); an FT sensor or contact without its state block, an FT without
 * its measurement, no ds / i_m / tau_m / tau_F; unknown keys in a block; use_bias differing within FTs,
 * accelerometers or gyroscopes, or use_bias without the bias state; a friction (tau_F) measurement (wire a
 * friction stage by hand); the newer bipedal-locomotion-framework format (variable_name); no URDF found
 * (RB_ENOTFOUND naming every path tried); a joint_list name that is no movable URDF joint, a base_link that is
 * no link, an FT name that is no URDF force/torque sensor, a contact or measured IMU frame that is no frame
 * (RB_ENOTFOUND); associated_joints that are not the sensors' joints; the URDF loader's errors; RB_ENOMEM.
 */
typedef struct rb_rde_import_opts {
    const char *urdf;     /* the URDF to use; NULL: search as above */
    const char *out_path; /* where the pipeline will be written (its folder must exist): the URDF path is made
                             relative to its folder; NULL: absolute */
} rb_rde_import_opts;

typedef struct rb_rde_import {
    char *json;           /* the pipeline: cJSON's indented text plus a newline, deterministic */
    char *urdf;           /* the URDF file used, as opened */
    size_t n_joints, n_ft, n_contacts, n_acc, n_gyro;
    size_t n_notes;
    char **notes;         /* one line each: what was read but not mapped, and why */
} rb_rde_import;

/* dir: the configuration folder, or its config.ini. Fills *out (release with rb_rde_import_free; it is
 * zeroed first and left empty on failure). */
int rb_rde_import_dir(const char *dir, const rb_rde_import_opts *opts, rb_rde_import *out, rb_err *err);
void rb_rde_import_free(rb_rde_import *imp);

/* ==== comparison suites and CI checks (lib/pipeline/suite.c, compare.c, check.c) ===================== * A suite runs every (variant, log) pair: each variant is a pipeline file and the signal in it that holds the
 * estimate; every estimate is scored against one reference channel of the log, which the suite resamples onto
 * each run's clock itself (the pipelines need not bind it). Suite file (JSON; unknown or duplicated keys are
 * errors with suggestions; relative paths resolve against the suite file's folder):
 *
 *   name        string, optional (default: the file's stem): the report's title.
 *   variants    array, required, non-empty: {"name": [A-Za-z_][A-Za-z0-9_-]* unique (required), "pipeline":
 *               path (required; loaded and validated like `roboest run`'s), "estimate": a signal of that
 *               pipeline (required; bound or a stage output)}. The pipeline's own "logs", "outputs",
 *               "metrics" and "reports" are ignored.
 *   logs        array, required, non-empty: paths, or arrays of paths forming one session; logs are named
 *               by the stem of their first file, which must be unique.
 *   reference   required: a channel name, or {"channel": name (required), "interp": "linear" | "hold"
 *               (default "linear")}. Simulated logs: e.g. "truth/joints/torques"; real logs: the desired
 *               torques, which turns the table into tracking errors.
 *   joints      array of element names, optional (default: every element of the reference channel, in its
 *               order): the joints scored, looked up by name in the reference channel and in each estimate.
 *               An estimate whose element names are the default "0", "1", ... is matched by position
 *               instead (it must then have as many elements as the reference channel).
 *   window      [t0, t1], optional: absolute log times (s) scored; samples outside are never read. Scoring
 *               always keeps to the part of each run's clock that the reference channel covers.
 *   statistics  array, optional (default ["mse", "rmse", "mae"]): shown statistics, from mse rmse mae max_abs
 *               mean_abs_est mean_abs_ref (rb_stat_key).
 *   bootstrap   {"samples": integer >= 1 (default 2000), "seed": integer >= 0 (default 0), "level": number
 *               in (0, 1) (default 0.95)}: percentile bootstrap of the mean across logs (logs resampled with
 *               replacement; with one log the interval is the value itself).
 *   figures     optional: {"traces": [{"joint": name (required), "log": log name or index (required),
 *               "window": [t0, t1] (optional, absolute s; default the whole run)}], "contact": {"channel":
 *               name (required), "threshold": number >= 0 (default 0)}}. A contact sample is active when
 *               any element's magnitude exceeds the threshold (e.g. "truth/pushes" of a simulated log: the
 *               contacts no sensor measures); active stretches are shaded in the traces.
 *   outputs     folder, optional: where rb_suite_result_write puts the files (the CLI's -o wins).
 *   threads     integer >= 1, optional (default: one per online core).
 *
 * Loader errors: RB_ENOTFOUND (the suite file is missing), RB_ECONFIG "<file>:<line>:<col>: <key path>:
 * <what>" (also for a variant's pipeline that is missing or invalid, with the pipeline's own message, and for
 * an estimate that is not a signal of its pipeline), RB_ENOMEM. */
typedef struct rb_suite_variant {
    char *name;
    char *pipeline_path;   /* resolved */
    char *estimate;        /* signal name in the pipeline */
    rb_pipeline *pipeline; /* loaded (owned); the estimate signal is marked recorded */
} rb_suite_variant;

typedef struct rb_suite_trace {
    char *joint;
    size_t log;            /* index into rb_suite.logs */
    bool has_window;
    double t0, t1;         /* absolute s; -INFINITY / INFINITY without a window */
} rb_suite_trace;

typedef struct rb_suite {
    char *name, *path, *sha256;  /* name, file as given, SHA-256 of its text */
    size_t n_variants;
    rb_suite_variant *variants;
    size_t n_logs;
    rb_cfg_session *logs;     /* paths resolved */
    char **log_names;            /* n_logs stems */
    char *reference;             /* channel */
    rb_interp reference_interp;
    size_t n_joints;             /* 0: every element of the reference channel */
    char **joints;
    bool has_window;
    double t0, t1;
    size_t n_stats;
    size_t stats[RB_N_STATS];    /* shown statistics (rb_stat_key indices) */
    rb_bootstrap bootstrap;
    size_t n_traces;
    rb_suite_trace *traces;
    char *contact_channel;       /* NULL: no shading */
    double contact_threshold;
    char *outputs;               /* resolved folder; NULL when not given */
    size_t threads;              /* 0: one per online core */
} rb_suite;

/* Load and validate a suite and every variant's pipeline (caller frees with rb_suite_free). */
int rb_suite_load(const char *path, const rb_registry *reg, rb_suite **out, rb_err *err);
int rb_suite_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                       const rb_registry *reg, rb_suite **out, rb_err *err);
void rb_suite_free(rb_suite *s);

typedef struct rb_suite_opts {
    size_t threads; /* 0: the suite's "threads", else one per online core; never more than the pairs */
    /* Called after each finished pair with the pairs done and the total, from the worker threads but never
     * two at a time. Non-zero cancels (as rb_run_opts.progress). May be NULL. */
    int (*progress)(void *user, size_t done, size_t total);
    void *user;
} rb_suite_opts;

typedef struct rb_suite_figure {
    char *name; /* file name: rmse_box.svg, magnitude_box.svg, trace_<log>_<joint>_<i>.svg (i: the trace's
                   index in figures.traces; characters other than [A-Za-z0-9_.-] become '_') */
    char *svg;
} rb_suite_figure;

typedef struct rb_suite_result {
    rb_comparison *table;        /* summarized; provenance: roboest version, suite file and SHA-256, each
                                    variant's pipeline SHA-256, each log's files and SHA-256 */
    size_t n_figures;
    rb_suite_figure *figures;
    size_t n_warnings;
    char **warnings;             /* one line each (gaps, held samples), in pair order, repeats dropped */
    size_t n_pairs, n_samples;   /* runs made, clock samples over all runs */
} rb_suite_result;

/* Read the logs on a pool of threads (one log per task; HDF5-based files take turns under HDF5's own lock
 * only for metadata and stored chunk bytes: the readers decompress our writers' chunks outside it), check in
 * log order that each has the reference channel with every joint (and the contact channel), then run the
 * (variant, log) pairs on the pool (a shared work queue; each pair reads only shared immutable data and writes
 * only its own slot), score each estimate, then summarize (with the bootstrap) and draw each figure as
 * separate pool tasks into fixed slots: the result does not depend on the thread count or timing. The first
 * failing log, then the first failing pair in (variant, log) order, then the table before the figures in
 * their order decides the error,
 * whatever the timing: a pair's
 * message starts with "variant <name>: " and names the log. Errors: those of rb_log_read / rb_log_append
 * (prefixed with the log path), RB_ENOTFOUND (reference or contact channel, joint, estimate element),
 * RB_EINPUT (the reference covers no part of a run's clock), RB_EDIM, RB_ENUMERIC (a non-finite estimate in
 * the scored window), rb_pipeline_run_log's errors, RB_ENOMEM. The calling thread works too; a thread that
 * cannot start only lowers the parallelism. */
int rb_suite_run(const rb_suite *s, const rb_suite_opts *opts, rb_suite_result **out, rb_err *err);
void rb_suite_result_free(rb_suite_result *r);
/* report.md, report.json, report.csv and every figure into dir (created if missing, one level), all or
 * nothing: every file goes to a temporary first and all are renamed only when all were written.
 * RB_EEXISTS (a target exists and !overwrite, before anything is written), RB_EIO, RB_ENOMEM. */
int rb_suite_result_write(const rb_suite_result *r, const char *dir, bool overwrite, rb_err *err);

/* ---- rules over a comparison report, for CI (check.c) ----
 * A rule compares two operands:  OPERAND OP OPERAND  with OP one of < <= > >=; an operand is a number or
 * VARIANT.STAT[JOINT].FIELD where [JOINT] (a joint of the report; default: all joints pooled) and .FIELD
 * (mean (default), sd, lo, hi, min or max of the summary across logs) are optional. Blanks between tokens
 * are ignored. Examples: "ukf_pinn.rmse < rnea.rmse", "ukf_pinn.rmse < 1.2", "ukf.mae[r_knee].hi <= 0.5". */
typedef struct rb_rule_result {
    char *rule;      /* the rule's text, trimmed */
    char *where;     /* where it came from ("rules.txt:3", "--rule 1") */
    bool passed;
    double left, right;
    char *message;   /* "ukf.rmse = 1.3 is not < rnea.rmse = 1.1" (failed) or "... < ..." (passed) */
} rb_rule_result;

typedef struct rb_check {
    size_t n_rules, n_failed;
    rb_rule_result *rules;
} rb_check;

/* Parse a comparison report (rb_comparison_render's JSON) and evaluate each rule in order. A bad rule stops
 * the check: RB_ECONFIG "<where>: '<rule>': <what>" for a syntax error (naming the column) or an unknown
 * variant, statistic or joint (with the closest name as a suggestion); RB_EINPUT "<report_name>: ..." for a
 * report that is not such JSON; RB_ENOMEM. A rule that does not hold is no error: (*out)->n_failed counts
 * them. Caller frees with rb_check_free. */
int rb_check_rules(const char *report_json, size_t len, const char *report_name, const char *const *rules,
                   const char *const *wheres, size_t n_rules, rb_check **out, rb_err *err);
void rb_check_free(rb_check *c);
/* Rules from a file: one per line, '#' starts a comment, blank lines skipped; wheres are "<path>:<line>".
 * Caller frees both arrays with rb_rules_free. RB_ENOTFOUND, RB_EINPUT (unreadable), RB_ECONFIG (no rule),
 * RB_ENOMEM. */
int rb_rules_read(const char *path, char ***rules, char ***wheres, size_t *n, rb_err *err);
void rb_rules_free(char **rules, char **wheres, size_t n);
/* JUnit XML: <testsuites> holding one <testsuite name tests failures errors="0"> with one <testcase
 * classname="roboest.check" name="<rule>"> per rule, a failing one holding <failure message="...">. Caller
 * frees *xml with rb_free. */
int rb_check_junit(const rb_check *c, const char *suite_name, char **xml, rb_err *err);

/* ==== friction training specs (lib/pipeline/friction_spec.c) ===============================================
 * A JSON file telling `roboest train-friction` (rb_friction_train in roboest/estimators.h) where the data of a
 * friction network come from. Errors are RB_ECONFIG "<file>:<line>:<col>: <key path>: <what>" with
 * suggestions, as for pipelines; every key not listed is an error. Paths are relative to the spec's folder.
 *
 *   logs            non-empty array (optional when the logs come from the command line: a spec without logs
 *                   cannot train until rb_friction_spec_set_logs gives some); each entry a log path, an array
 *                   of paths (one session the
 *                   logger split over files, concatenated in order), or {"log": path or [paths],
 *                   "torques": path}: "torques" names a second file (e.g. the estimates `roboest run` wrote)
 *                   that holds the torque channel for this log; without it the torque channel is in the log.
 *   joints          required: element names of the joints to train, unique (one network each).
 *   joint_velocity  {"channel": name, "elements": [names], "kf_derivative": {"q": [...], "r": [...],
 *   motor_velocity   "p0": [3]}}. Default channels joints_state/velocities and motors_state/velocities.
 *                   "elements" (default: the joints) picks each joint's element, in joint order. With
 *                   "kf_derivative" the channel holds positions and the velocity is the x_dot output of the
 *                   kf_derivative stage's filter (process_noise "jerk"; q, r: 1 or one per joint, defaults
 *                   1e4 and 1e-6; p0 default [1, 1e2, 1e4]) run over the training clock, exactly what a
 *                   pipeline with that stage feeds friction_pinn at replay. Motor velocities are used as the
 *                   log has them (rotor side for motors_state).
 *   current         {"channel", "elements"}: motor currents, A (default motors_state/currents).
 *   torque          required {"channel", "elements"}: the joint torque tau_j, N m: "truth/joints/torques"
 *                   in a log of `roboest simulate`, or a signal of an estimates file (logs[].torques), e.g.
 *                   the rnea_torque stage's output (the paper's data pipeline).
 *   k_t, R          required number arrays, 1 value or one per joint: torque constant (N m/A, > 0) and the
 *                   signed gear ratio (non-zero). The friction target is tau_F = k_t R I_m - tau_j.
 *   motor_inertia   optional number array, 1 value or one per joint: rotor inertias J_m (kg m^2, rotor side,
 *                   >= 0; default none). The target becomes tau_F = k_t R I_m - tau_j - R^2 J_m a, with a the
 *                   joint acceleration: the kf_derivative filter's x_ddot when joint_velocity has
 *                   "kf_derivative", else the central difference of the joint velocity on the clock
 *                   (one-sided at a session's ends). The paper neglects this term (eq. 2); a simulated log
 *                   with rotor inertia needs it for the target to be the friction alone.
 *   clock           {"rate": Hz} or {"channel": name} as in a pipeline (default: the joint_velocity
 *                   channel's time stamps), limited to the span every used channel covers; friction_pinn
 *                   must later run on a clock of the same period.
 *   window          [t0, t1], absolute log seconds, optional.
 *   network         {"H" (integer >= 1, default 20), "hidden" ([h1, h2], default [233, 229]), "dropout"
 *                   ([0, 1), 0.1), "lambda" ([0, 1], 0.12), "learning_rate" (> 0, 1e-3), "epochs" (>= 1,
 *                   200), "batch_size" (>= 1, 256), "patience" (>= 0, 20), "seed" (integer >= 0, 0),
 *                   "split_block" (samples >= 1, 500)}: rb_fnet_train's options (roboest/friction.h).
 *   scv             {"v_eps" (>= 0, default 0), "v_s" (> 0 fixes it; default searched), "v_s_min",
 *                   "v_s_max", "grid"}: the fit of the physics model (rb_friction_fit).
 *   analytic        array of model names ("coulomb_viscous", "scv", "tanh6") also fitted by least squares
 *                   for the friction_model stage (with scv's v_eps and bracket options; tanh6 keeps its
 *                   default grid of 13 per scale).
 */
typedef struct rb_fspec_signal {
    char *channel;
    char **elements;     /* n_joints element names (the joints by default) */
    bool kf_derivative;  /* the channel holds positions: velocities from the kf_derivative filter */
    double *q, *r;       /* n_joints each (expanded from 1 or n values); kf_derivative only */
    double p0[3];
} rb_fspec_signal;

typedef struct rb_fspec_log {
    size_t n_paths;
    char **paths;   /* resolved; one session, concatenated in order */
    char *torques;  /* resolved path of the file with the torque channel, NULL: the log itself */
} rb_fspec_log;

typedef struct rb_friction_spec {
    char *path, *sha256;      /* the spec file (as given) and the SHA-256 of its text */
    size_t n_logs;
    rb_fspec_log *logs;
    size_t n_joints;
    char **joints;
    rb_fspec_signal joint_velocity, motor_velocity, current, torque;
    double *k_t, *R;          /* n_joints each */
    double *J_m;              /* n_joints rotor inertias (kg m^2), or NULL: none subtracted */
    double clock_rate;        /* Hz; 0: the clock follows clock_channel */
    char *clock_channel;      /* default: joint_velocity.channel */
    bool has_window;
    double t0, t1;
    size_t H, split_block;
    rb_fnet_train_opts train; /* progress unset */
    rb_friction_fit_opts scv;
    size_t n_analytic;
    rb_friction_kind analytic[3];
} rb_friction_spec;

/* Load and validate a spec (caller frees with rb_friction_spec_free; *out NULL on failure). RB_ENOTFOUND,
 * RB_ECONFIG, RB_ENOMEM. */
int rb_friction_spec_load(const char *path, rb_friction_spec **out, rb_err *err);
/* The same from text: name_for_messages starts messages, base_file anchors relative paths. */
int rb_friction_spec_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                               rb_friction_spec **out, rb_err *err);
void rb_friction_spec_free(rb_friction_spec *s);
/* Replace the spec's logs by n single-file sessions (paths copied as given, e.g. relative to the working folder;
 * the torque channel is then read from each log itself). RB_ENOMEM leaves the spec unchanged. */
int rb_friction_spec_set_logs(rb_friction_spec *s, const char *const *paths, size_t n, rb_err *err);

/* ==== the closed loop: estimators inside the simulator's torque loop (closed_loop.c, closed_loop_run.c) =====
 * The joint-torque paper's Tables I and II (../shared/seeds, section IV-C): the low-level torque controller of a
 * simulated robot (rb_sim RB_CTRL_TORQUE: inverse-dynamics feedforward tau_ref, PI on the torque error, friction
 * compensation) gets its torque feedback and its friction compensation from an estimator pipeline stepped inside
 * the loop (rb_stream over the channels rb_scenario_run measures), one configuration at a time:
 *     tau_m_des = tau_ref + R^2 J_m s_ddot_cmd + kp_tau e + ki_tau int e [+ tau_F_hat],  e = tau_ref - tau_hat
 * with tau_hat, tau_F_hat of sample k used at sample k + 1 (one control period of delay, as on the robot).
 * Every configuration runs the same scenario with the same seeds (same sensor noise, pushes); scores:
 *   torque tracking  tau_j (true joint torque) against tau_ref (the controller's desired joint torque) on the
 *                    scored joints over [settle, end]: MSE, RMSE, MAE, max |e|, mean |tau_j| (mean_abs_est, the
 *                    paper's Fig. 7 "torque magnitude"), per joint and pooled;
 *   CoM              the plant's CoM against the balance reference c_ref(t) per axis x, y, z over
 *                    [settle, disturbances_from) (Table I: before the disturbances; mean |e| = mae, max |e| =
 *                    max_abs) and over [settle, end];
 *   estimation       the estimate tau_hat against tau_j over [settle, end] (configurations with feedback), and
 *                    the compensation tau_F_hat against the true friction tau_F (configurations with compensation).
 * A run whose CoM leaves the reference by more than max_com_error, or whose simulation fails numerically, has
 * diverged: it stops there, its scores cover what ran, and the report says when and why (the paper's RNEA-PINN
 * "necessitating early termination"). Seeds are the "logs" of the comparison tables (mean, sd, bootstrap).
 *
 * Configuration file (JSON; paths relative to it):
 *   name               string, optional (default: the file stem)
 *   scenario           path of a scenario file (rb_scenario_load) with controller kind "torque" and balance
 *   joints             [joint names], optional: torque tracking is scored on them (default: every joint)
 *   settle             s >= 0, default 0.5: the start every score ignores
 *   disturbances_from  s > settle, optional (default: the first push's start, else the end): Table I's window end
 *   max_com_error      m > 0, default 0.1: divergence threshold (max over the axes of |c - c_ref|)
 *   seeds              [integers >= 0], optional (default: [the scenario's seed]): one run per seed and
 *                      configuration
 *   threads            integer >= 1, optional (default: one per online core)
 *   bootstrap          {samples, seed, level} over the seeds, as in comparison suites
 *   configurations     [{name (letters, digits, '_', '-'), label (optional, the table's row name; default
 *                      name), pipeline (path, optional), feedback (a signal of the pipeline: the torque
 *                      estimate, optional), torque_sensor (true: the feedback is the true joint torque, an
 *                      ideal joint torque sensor: a reference row; not with feedback), compensation (a
 *                      signal of the pipeline: the friction estimate, optional)}]: without feedback or
 *                      torque_sensor the loop is feedforward (no PI term), without
 *                      compensation nothing is added; feedback or compensation need a pipeline; the signals'
 *                      element names are joint names of the scenario's model (joints the signal lacks get no
 *                      feedback / compensation). The pipeline's clock rate, when it has one, must be 1 / the
 *                      scenario's dt: it is stepped every control period.
 * Errors: RB_ENOTFOUND (the file), RB_ECONFIG "<file>:<line>:<col>: <key path>: <what>" (also for a scenario or
 * pipeline that fails to load, with its own message), RB_ENOMEM. */
typedef struct rb_cl_config {
    char *name, *label;
    char *pipeline_path;   /* resolved, NULL: none */
    rb_pipeline *pipeline; /* loaded (owned), NULL: none */
    char *feedback;        /* signal name, NULL: feedforward (or the torque sensor) */
    bool torque_sensor;    /* feedback from the true joint torque (an ideal joint torque sensor, RB_TFB_TRUTH) */
    char *compensation;    /* signal name, NULL: no friction compensation */
} rb_cl_config;

typedef struct rb_closed_loop {
    char *name, *path, *sha256; /* name, file as given, SHA-256 of its text */
    rb_scenario *scenario;      /* loaded (owned) */
    size_t n_joints;
    char **joints;              /* scored joints */
    size_t *joint_dof;          /* their joint indices in the scenario's model (0 .. n_dofs-1) */
    double settle, disturbances_from, max_com_error;
    size_t n_seeds;
    uint64_t *seeds;
    size_t threads;             /* 0: one per online core */
    rb_bootstrap bootstrap;
    size_t n_configs;
    rb_cl_config *configs;
} rb_closed_loop;

int rb_closed_loop_load(const char *path, const rb_registry *reg, rb_closed_loop **out, rb_err *err);
int rb_closed_loop_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                             const rb_registry *reg, rb_closed_loop **out, rb_err *err);
void rb_closed_loop_free(rb_closed_loop *cl);

typedef struct rb_cl_opts {
    size_t threads; /* 0: the file's "threads", else one per online core */
    /* After each finished run (configuration x seed) with runs done / total, never two at a time; non-zero
     * cancels. May be NULL. */
    int (*progress)(void *user, size_t done, size_t total);
    void *user;
} rb_cl_opts;

typedef struct rb_cl_status {
    bool diverged;
    double t_end;  /* s: the end of the run (the scenario's duration, or where it diverged) */
    char *why;     /* diverged: one line ("CoM error 0.12 m > max_com_error at t = 6.2 s", or the sim's error) */
} rb_cl_status;

typedef struct rb_cl_result {
    rb_comparison *torque;      /* tracking: variants = configurations, logs = "seed_<s>", joints = scored */
    rb_comparison *com_before;  /* CoM, joints = x, y, z, over [settle, disturbances_from) */
    rb_comparison *com_all;     /* CoM over [settle, end] */
    rb_comparison *estimation;  /* tau_hat vs tau_j; variants = configurations with feedback; NULL if none */
    rb_comparison *friction;    /* tau_F_hat vs tau_F; variants = configurations with compensation; NULL if none */
    size_t n_runs;              /* n_configs x n_seeds */
    rb_cl_status *status;       /* n_runs, configuration-major */
    size_t n_figures;
    rb_suite_figure *figures;   /* rmse_box.svg, magnitude_box.svg, com_y.svg (first seed, pushes shaded) */
    size_t n_steps;             /* simulation steps over all runs (as scheduled; diverged runs stop earlier) */
} rb_cl_result;

/* Run every (configuration, seed) on a pool of threads; each run reads only shared immutable data and writes
 * its own slot, and the tables and figures are made afterwards in a fixed order: the result does not depend on
 * the thread count. The lowest failing run decides the error ("configuration <name>: seed <s>: ..."); a
 * divergence is not an error. Errors: rb_scenario_run's and rb_stream's (set-up), a scored window without
 * samples (RB_EINPUT), RB_ENOMEM. */
int rb_closed_loop_run(const rb_closed_loop *cl, const rb_cl_opts *opts, rb_cl_result **out, rb_err *err);
void rb_cl_result_free(rb_cl_result *r);
/* The paper's layout as Markdown (Table I: CoM mean and max error per axis in mm before the disturbances;
 * Table II: torque tracking MSE, RMSE, MAE; then the estimation error, the CoM over the whole run, the status of
 * every run), a new string (rb_free). RB_ENOMEM. */
int rb_cl_result_markdown(const rb_closed_loop *cl, const rb_cl_result *r, char **text, rb_err *err);
/* Into dir (created if missing, one level), all or nothing: report.md (rb_cl_result_markdown), torque.{md,json,
 * csv}, com_before.*, com_all.*, estimation.*, friction.* (each rb_comparison_render, the last two only when
 * some configuration has feedback / compensation; `roboest check` reads the .json) and
 * the figures. RB_EEXISTS (a target exists and !overwrite, before anything is written), RB_EIO, RB_ENOMEM. */
int rb_cl_result_write(const rb_closed_loop *cl, const rb_cl_result *r, const char *dir, bool overwrite,
                       rb_err *err);

#endif
