/* The runner of one log (run.c), shared with its metrics and what a run in windows does window by window
 * (run_metrics.c). */
#ifndef ROBOEST_PIPELINE_RUN_INTERNAL_H
#define ROBOEST_PIPELINE_RUN_INTERNAL_H

#include "pipeline_internal.h"

typedef struct rb_ref_stream rb_ref_stream;

typedef struct runner {
    const rb_pipeline *p;
    const rb_log *log;
    const rb_run_opts *opts;
    const char *const *paths; /* the files the log was read from (n_paths, may be 0) */
    size_t n_paths;
    char *label; /* the log for messages: its path(s) or "memory" */
    rb_err *err;
    rb_clock clock;
    double dt;
    double t_start;           /* the log's first sample: windows "from_start" count from it */
    const rb_channel **bound; /* every binding's channels, binding by binding (bound_off) */
    size_t *bound_off;        /* per binding: index of its first channel in bound; [n_signals] = total */
    size_t **select;          /* per binding: element indices (NULL: all) */
    rb_engine eng;            /* the stages and the signal table */
    rb_run_result *res;
    rb_log_source *src; /* a log read in windows (window.c); NULL: `log` holds every sample */
    size_t window;      /* clock samples per window */
    rb_feeder *feed;
    bool *whole; /* per signal-table entry: every row kept (not one window of a binding) */
    bool *only;  /* per signal-table entry: recorded for outputs written window by window alone (stream_out.c) */
    rb_metrics_stream **ms; /* per metric: scored window by window (NULL: at the end) */
    rb_ref_stream **refs;   /* per metric: its reference_log read window by window (NULL: none, or read whole) */
} runner;

/* RB_ENOMEM naming the log. */
int rb_run_nomem(runner *r);
/* A warning line of the run ("<log>: ..."): RB_ENOMEM. */
int rb_run_warn(runner *r, const char *fmt, ...) RB_PRINTF(2, 3);
/* The report of the run's metrics (res->report; none without metrics). */
int rb_run_compute_metrics(runner *r);
/* A run in windows with a folder (rb_run_opts.stream_dir): its CSV outputs begun, its metrics' accumulators made. */
int rb_run_begin_streams(runner *r);
/* After the stages stepped clock samples [k0, k1): the outputs' rows written, the references from other files
 * read, the metrics accumulated (a reference's read errors). */
int rb_run_stream_window(runner *r, size_t k0, size_t k1);
void rb_ref_stream_free(rb_ref_stream *rs);

#endif
