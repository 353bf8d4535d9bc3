/*
 * lib/pipeline internals shared between its files: not installed, not part of the API.
 *   config.c  JSON text -> typed rb_pipeline (the sections), and the loader's entry points
 *   graph.c   the signal graph: signal table, wiring, execution order, output and metric references
 *   engine.c  the stage graph stepped sample by sample, shared by run.c (a log) and stream.c (a caller)
 *   run.c     one log through the stages (rb_pipeline_run_log); write.c its files; batch.c every log
 *   stream.c  the stages stepped by a caller; binding.c the names, units and scale of bindings (both);
 *   registry.c, resolved.c, provenance.c
 */
#ifndef ROBOEST_PIPELINE_INTERNAL_H
#define ROBOEST_PIPELINE_INTERNAL_H

#include <cjson/cJSON.h>

#include "roboest/config.h"
#include "roboest/pipeline.h"

/* ---- the loader's context (config.c, graph.c) ------------------------------------------------ */
typedef struct pload {
    rb_cfg c;
    const rb_registry *reg;
    rb_pipeline *p;
    uint64_t stage_optional; /* the optional_inputs of the stage being parsed */
} pload;

/* graph.c, once every section is parsed: build p->signal_table, wire every stage port, output and
 * metric to it, put the stages in execution order, check that no two files share a path. */
int rb_cfg_check_graph(pload *x);

/* ---- the stage engine (engine.c): the one way to step a stage graph, for run.c and stream.c --------- */
/* One signal while running: `data` holds n_rows x width values; stride is width for a clock-length or
 * block-length buffer and 0 for a single row rewritten every sample (a stream's bindings). */
typedef struct rb_live_signal {
    size_t width, stride;
    double *data;
    char **names, **units; /* width each, owned */
} rb_live_signal;

typedef int (*rb_stage_step_fn)(void *, size_t, double, const double *const *, double *const *, rb_err *);
typedef int (*rb_stage_block_fn)(void *, size_t, size_t, const double *, const double *const *, const size_t *,
                                 double *const *, const size_t *, size_t *, rb_err *);

/* The stages of a pipeline with the signals they read and write. Set-up, in order:
 *   rb_engine_init         the signal table (every entry empty) and the stage states;
 *   (the caller fills sig[i] of every binding i < p->n_signals: width, stride, data, names, units)
 *   rb_engine_create       the loop tables, every stage's create(), the wired outputs' signals, the
 *                          scratch rows of the unwired outputs and the pointer tables;
 * then rb_engine_steps (per sample, allocates nothing), rb_engine_finish, and rb_engine_free (always). */
typedef struct rb_engine {
    const rb_pipeline *p;
    const char *label;   /* starts the engine's own messages (borrowed) */
    rb_err *err;         /* given to the stages (may be changed between calls) */
    rb_live_signal *sig; /* per signal-table entry */
    void **state;        /* per stage (execution order); NULL until created */
    /* loop tables: ports of every stage, inputs then outputs, stage by stage */
    size_t n_in_ptr, n_out_ptr;
    const double **in_ptr, **in_base;
    double **out_ptr, **out_base;
    size_t *in_stride, *out_stride, *in_off, *out_off;
    size_t *in_row0;  /* per input port: the clock index of its signal's row 0 (a window's first sample, else 0) */
    size_t *out_row0; /* per output port: the same */
    const bool *windowed_out; /* NULL, or per signal-table entry: a recorded stage output held window_rows rows */
    size_t window_rows;
    size_t *out_width;              /* per output port, as create() set it */
    rb_stage_step_fn *steps;        /* per stage */
    rb_stage_block_fn *block_steps; /* per stage: its type's step_block, or NULL */
    bool *blocked;                  /* per signal-table entry: a stage output nobody keeps, holding one block's rows */
    size_t *block_in; /* the input ports reading such a signal (n_block_in), then the output ports writing one */
    size_t *block_out, n_block_in, n_block_out;
    double *scratch; /* one row per unwired output port, rewritten every sample, never read */
    /* the fault monitor's watch on the stages that show innovations (rb_engine_watch_innovations) */
    const rb_stage_innovations **inno; /* per stage; NULL: none, or not watched */
    rb_fault_tally **inno_tally;       /* per stage: inno[s]->m tallies of outliers */
    double k_sigma, inno_from;         /* outliers are counted from time inno_from on */
} rb_engine;

/* Zeroes *e and allocates the empty signal table and the state slots. RB_ENOMEM ("out of memory"). */
int rb_engine_init(rb_engine *e, const rb_pipeline *p, const char *label, rb_err *err);
/* Creates the stages on a clock of n_samples times (time, borrowed until rb_engine_free) with period dt.
 * A wired output gets `recorded_rows` rows when the signal table marks it recorded and recorded_rows > 1
 * (or a window's rows, windowed_out), else the rows of one block (RB_STAGE_BLOCK), each with stride its width. When a stage's create() fails, *failed_stage is its
 * index and the message is create()'s own (the caller prefixes it); otherwise *failed_stage = SIZE_MAX
 * and errors (RB_ENOMEM) start with the label. */
int rb_engine_create(rb_engine *e, double dt, size_t n_samples, const double *time, size_t recorded_rows,
                     size_t *failed_stage);
/* Steps samples [k0, k1) at times time[k]: blocks of up to RB_STAGE_BLOCK samples, each stage (in execution
 * order) over the whole block before the next, reading and writing the rows base + (k - row0) * stride.
 * Allocates nothing. On a stage's non-zero return, stops and returns it with the sample and stage in
 * *failed_k, *failed_stage (the message is the stage's own): the earliest sample that fails, and the first
 * stage failing at it, as stepping sample by sample would report. */
int rb_engine_steps(rb_engine *e, size_t k0, size_t k1, const double *time, size_t *failed_k, size_t *failed_stage);
/* Windowed runs (window.c): the signals not marked in whole[] (per signal-table entry) hold the rows of clock
 * samples [k0, ...) from their row 0 on; the others every row from sample 0. Allocates nothing. */
void rb_engine_set_window(rb_engine *e, const bool *whole, size_t k0);
/* After rb_engine_create: every stage whose type shows innovations is asked for them, and from then on
 * rb_engine_steps counts each of its measurements' normalized innovations beyond k_sigma (> 0) at the samples
 * whose time is >= t_from in e->inno_tally[s] (first: the sample index). RB_ENOMEM. */
int rb_engine_watch_innovations(rb_engine *e, double k_sigma, double t_from);
/* Every stage's finish() in order; on failure *failed_stage is its index (the message is its own). */
int rb_engine_finish(rb_engine *e, size_t *failed_stage);
/* Destroys the created stages and frees everything (also after a failure; e zeroed is fine). */
void rb_engine_free(rb_engine *e);
/* Copies of n strings src[sel[i]] (sel NULL: src[i]); a NULL src gives "0", "1", ... when numbered, else
 * "". NULL when out of memory (nothing left allocated). */
char **rb_pipeline_copy_strings(const char *const *src, const size_t *sel, size_t n, bool numbered);

/* ---- a log read in windows (window.c, for run.c) -------------------------------------------------------------- */
/* The bindings of a log read from src, resampled window by window: `bound`, `bound_off`, `select` as run.c keeps
 * them (every binding's channels, borrowed from the source's log; NULL for an absent optional binding). */
typedef struct rb_feed_setup {
    rb_log_source *src;
    const rb_pipeline *p;
    const rb_channel *const *bound;
    const size_t *bound_off;
    size_t *const *select;
    size_t window; /* clock samples per window (> 0) */
    size_t part;   /* samples read from the file at a time (> 0) */
} rb_feed_setup;
typedef struct rb_feeder rb_feeder;
int rb_feeder_new(const rb_feed_setup *in, rb_feeder **out, rb_err *err);
/* Bindings resampled at clock_t[k0..k1) (k1 - k0 <= window) into sig[i].data: from row k0 when whole[i] (a
 * binding kept for every sample), else from row 0. On error *failed is the binding (SIZE_MAX: reading the file). */
int rb_feeder_fill(rb_feeder *f, const double *clock_t, size_t k0, size_t k1, rb_live_signal *sig, const bool *whole,
                   size_t *failed, rb_err *err);
/* Values of binding i held so far (rb_resample's n_held). */
size_t rb_feeder_held(const rb_feeder *f, size_t binding);
void rb_feeder_free(rb_feeder *f);
/* RB_EINPUT up front when what a run in windows keeps whole does not fit `limit` bytes: the clock, the recorded
 * signals (sig: the signal table, T rows each; those whole[] marks) and the timestamps of the largest bound channel (n_bound in bound,
 * NULL skipped) read whole for its check (the fault monitor reads parts). The message names the largest part. */
int rb_feed_check_memory(const rb_pipeline *p, const rb_live_signal *sig, const bool *whole,
                         const rb_channel *const *bound, size_t n_bound, size_t T, size_t limit, const char *label,
                         rb_err *err);

/* ---- outputs written window by window (stream_out.c, for run.c and write.c) ------------------------------------ */
/* Output o is written window by window in a run in windows with a folder (rb_run_opts.stream_dir): a CSV, .h5 or
 * MATLAB v7.3 one (not MATLAB v5/v7, which libmatio writes whole). */
bool rb_output_streamed(const rb_pipeline *p, size_t o);
/* Metric m is scored window by window (rb_metrics_stream) in such a run: statistics against a signal or a
 * reference_log (read window by window), not a confusion table. */
bool rb_metric_streamed(const rb_pipeline *p, size_t m);
/* only[t] (per signal-table entry): recorded for such outputs and metrics alone (no other output or metric). */
void rb_out_streams_mark(const rb_pipeline *p, bool *only);
typedef struct rb_out_streams rb_out_streams;
/* Every streamed output begun in dir (rb_outfile) and its header written (names and units from sig, the signal
 * table's live signals; provenance from res; .h5 and .mat: every dataset res->clock.n long); *out NULL when the
 * pipeline has none. Errors: the target's, the writers' checks'. */
int rb_out_streams_begin(const rb_pipeline *p, const rb_run_result *res, const rb_live_signal *sig, const char *dir,
                         bool overwrite, rb_out_streams **out, rb_err *err);
/* The rows of clock samples [k0, k1): signal t's from row k0 when whole[t], else from row 0. A write failure is
 * kept for rb_out_streams_close. */
void rb_out_streams_rows(rb_out_streams *st, const rb_pipeline *p, const rb_live_signal *sig, const bool *whole,
                         const double *time, size_t k0, size_t k1);
bool rb_out_streams_has(const rb_out_streams *st, size_t o);
/* Every stream closed (RB_EIO: the first write that failed); then each output committed (ok) or aborted. */
int rb_out_streams_close(rb_out_streams *st, rb_err *err);
int rb_out_streams_commit(rb_out_streams *st, size_t o, bool ok, rb_err *err);
/* Aborts what is not committed (NULL: nothing). */
void rb_out_streams_free(rb_out_streams *st);
/* The run's provenance into an output's attributes (provenance.c). */
int rb_pipeline_output_provenance(const rb_pipeline *p, const rb_run_result *res, rb_log *log, rb_err *err);
/* ---- bindings (binding.c): names, units and scale, the same for a log (run.c) and a stream (stream.c) ---- */
/* One channel a binding reads: its name, width and element names (borrowed; NULL: "0", "1", ...). */
typedef struct rb_bound_channel {
    const char *name;
    size_t width;
    const char *const *elements;
} rb_bound_channel;

/* True when names (n; NULL counts) are the placeholders "0", "1", ... a reader gives unnamed elements. */
bool rb_binding_numbered(const char *const *names, size_t n);
/* Binding s's element names and units in ls (width each, owned, already copied from its n_ch channels ch):
 * the config's "names" replace the names (RB_EINPUT when their count is not ls->width or a channel names
 * its elements), "unit" replaces every unit, and without "names" colliding names of several channels
 * become "<channel>/<element>". Messages start with label. RB_ENOMEM. */
int rb_binding_relabel(const rb_config_signal *s, rb_live_signal *ls, const rb_bound_channel *ch, size_t n_ch,
                       const char *label, rb_err *err);

/* ---- the sensor-fault monitor (faults.c) --------------------------------------------------------------------- */
/* The "faults" section: its defaults (set before parsing), its parser and its resolved form. */
void rb_pipeline_faults_default(rb_pipeline *p);
int rb_pipeline_parse_faults(rb_cfg *c, const cJSON *v);
/* confusion.c: a metric's "labels", "reference_labels" and "where" (v: the metric's object). */
int rb_pipeline_parse_confusion(rb_cfg *c, const cJSON *v, rb_config_metric *m);
void rb_pipeline_faults_resolved(rb_cfg_builder *b, cJSON *root, const rb_pipeline *p);

/* What the monitor reads once a log's stages have stepped (all borrowed from the runner). */
typedef struct rb_fault_run {
    const rb_pipeline *p;
    const rb_engine *eng;           /* sig[i].width of every binding; inno, inno_tally when watched */
    const rb_channel *const *bound; /* every binding's channels, binding by binding (bound_off) */
    const size_t *bound_off;        /* per binding: index of its first channel in bound */
    const size_t *const *select;    /* per binding: element indices (NULL: all) */
    const rb_clock *clock;
    rb_log_source *src; /* a log read in windows: the channels' samples are read from it in parts */
    size_t part;        /* with src: samples read at a time (0: 4096) */
} rb_fault_run;

/* res->faults: every bound channel element (stuck and saturated over the samples inside the clock's span, each
 * channel element once) and the outliers of the watched stages' innovations, attributed to the element each
 * measurement reads. run names the rows. RB_ENOMEM (res->faults may then be partly filled). */
int rb_pipeline_gather_faults(const rb_fault_run *in, const char *run, rb_run_result *res, rb_err *err);
/* rb_pipeline_gather_faults under res->run_name, then the settings and every row into res->report (if any). */
int rb_pipeline_report_faults(const rb_fault_run *in, rb_run_result *res, rb_err *err);
void rb_run_faults_free(rb_run_result *res);

/* write.c: up to p->n_outputs outputs of `res` (res NULL: none) and p->n_reports reports of `report` (NULL:
 * none) into dir, all or nothing (rb_run_result_write's rules). */
int rb_pipeline_write_files(const rb_pipeline *p, const rb_run_result *res, const rb_report *report, const char *dir,
                            bool overwrite, rb_err *err);

/* ---- small helpers ---------------------------------------------------------------------------- */
/* registry.c: x within the bounds of a NUMBER / INTEGER / array-element parameter. */
bool rb_pipeline_param_within(const rb_param_spec *ps, double x);

#endif
