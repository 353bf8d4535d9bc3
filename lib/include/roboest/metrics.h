/*
 * roboest metrics: error statistics between an estimate and a reference, and reports.
 *
 * For estimate e and reference r over the samples in the window:
 *   MSE = mean((e - r)^2), RMSE = sqrt(MSE), MAE = mean|e - r|, max_abs = max|e - r|,
 *   mean_abs_est = mean|e|, mean_abs_ref = mean|r| (for energy-like comparisons).
 * Statistics are given per element and over all elements (every element's samples pooled).
 * A non-finite estimate or reference sample is an RB_ENUMERIC error naming the signal, the
 * element and the first bad sample: NaN never turns silently into a number or a JSON null.
 */
#ifndef ROBOEST_METRICS_H
#define ROBOEST_METRICS_H

#include <stdio.h>

#include "roboest/core.h"

typedef struct rb_stats {
    size_t n; /* values used: samples in the window (per element), samples x elements (pooled) */
    double mse, rmse, mae, max_abs, mean_abs_est, mean_abs_ref;
} rb_stats;

/* Two signals on one clock, T x n sample-major each, with their names for messages. */
typedef struct rb_metric_input {
    const char *estimate_name, *reference_name; /* for messages; NULL reads "estimate"/"reference" */
    const double *estimate, *reference;         /* T x n each, sample t, element i at t * n + i */
    const double *time; /* T clock times (for the window); may be NULL when t0, t1 are both infinite */
    size_t n_samples, n_elements; /* T, n */
    double t0, t1;      /* window [t0, t1]; -INFINITY / INFINITY for the whole run */
} rb_metric_input;

/* Statistics of in->estimate against in->reference over the samples whose time lies in
 * [t0, t1] (both ends inclusive; samples outside the window are never read, so an estimator's
 * warm-up NaNs before t0 do no harm). Sums are compensated (Neumaier), so long logs keep full
 * precision. Nothing is allocated.
 *
 * per_element: n_elements entries (may be NULL); overall: pooled over all elements (may be
 * NULL). Their contents are unspecified on error.
 *
 * Errors:
 *   RB_ENUMERIC  a non-finite sample in the window: "<signal>: element <i>: sample <t> is NaN
 *                (t = <time> s)", the earliest bad sample (lowest element on ties, estimate
 *                before reference); or a statistic overflows (values near DBL_MAX);
 *   RB_EINPUT    the window holds no sample (message names the window and both signals), no
 *                elements, or a non-finite time stamp when the window is bounded;
 *   RB_EINVAL    in == NULL, NULL data with T x n > 0, a NaN bound, or a bounded window
 *                without a time vector. */
int rb_metrics_compute(const rb_metric_input *in, rb_stats *per_element, rb_stats *overall, rb_err *err);

/* A report: rows of statistics, grouped by run (variant / log), for Markdown, JSON and CSV.
 * Every string is owned by the report (copied in, freed by rb_report_free). */
typedef struct rb_report_row {
    char *run;       /* e.g. pipeline or variant name + log name */
    char *estimate;  /* signal name */
    char *reference; /* signal name */
    char *element;   /* element name, or "all" for the pooled row */
    rb_stats stats;
} rb_report_row;

typedef struct rb_report {
    char *title;
    size_t n_rows, cap_rows;
    rb_report_row *rows;
    size_t n_attrs, cap_attrs; /* provenance (key, value), written in every format */
    char **attr_keys, **attr_values;
} rb_report;

/* New empty report titled `title` (copied); *out is freed with rb_report_free.
 * RB_EINVAL if out or title is NULL, RB_ENOMEM. */
int rb_report_new(rb_report **out, const char *title, rb_err *err);
/* Frees the report and every string in it; rep may be NULL. */
void rb_report_free(rb_report *rep);
/* Add a row (strings and stats copied). Rows stay grouped by run: a row whose run is already
 * present goes right after that run's last row, a new run goes at the end; otherwise insertion
 * order is kept. Statistics are not checked here: rendering rejects non-finite ones.
 * RB_EINVAL on a NULL argument, RB_ENOMEM (the report is then unchanged). */
int rb_report_add(rb_report *rep, const char *run, const char *estimate, const char *reference,
                  const char *element, const rb_stats *stats, rb_err *err);
/* Set provenance key = value (copied), replacing the value of an existing key; keys keep the
 * order of their first setting. RB_EINVAL on a NULL argument, RB_ENOMEM (report unchanged). */
int rb_report_set_attr(rb_report *rep, const char *key, const char *value, rb_err *err);

typedef enum rb_report_format { RB_REPORT_MARKDOWN, RB_REPORT_JSON, RB_REPORT_CSV } rb_report_format;

/* From a path's extension (case-insensitive): .md -> Markdown, .json -> JSON, .csv -> CSV.
 * RB_ECONFIG naming the path otherwise. */
int rb_report_format_from_path(const char *path, rb_report_format *fmt, rb_err *err);
/* Render into a new NUL-terminated string (caller frees with rb_free; *text is NULL on error).
 * Numbers are printed with round-trip precision in JSON and CSV, 4 significant digits in
 * Markdown, always with a '.' decimal point whatever the process locale.
 *   Markdown: "# title", provenance as a "- key: value" list, then one table with columns
 *     run | estimate | reference | element | MSE | RMSE | MAE | max abs | mean abs est |
 *     mean abs ref | N; '|' and '\' in text are backslash-escaped, newlines become spaces.
 *   JSON: {"title", "provenance": {key: value}, "rows": [{"run", "estimate", "reference",
 *     "element", "n", "mse", "rmse", "mae", "max_abs", "mean_abs_est", "mean_abs_ref"}]}.
 *   CSV: "# title: ..." and "# key: value" comment lines, a header row with the JSON row keys,
 *     one line per row; fields quoted RFC 4180 style when they hold , " CR LF, start with '#'
 *     or have leading/trailing spaces.
 * RB_ENUMERIC if a statistic is not finite (message names run, signals, element, statistic),
 * RB_EINVAL on a NULL argument or unknown format, RB_ENOMEM. */
int rb_report_render(const rb_report *rep, rb_report_format fmt, char **text, rb_err *err);
/* Render and write through a temporary file renamed into place (nothing at path on error).
 * Errors of rb_report_render (prefixed with the path), RB_EEXISTS if path exists and
 * !overwrite, RB_EIO (missing folder, failed write) with the path in the message. */
int rb_report_write(const rb_report *rep, const char *path, rb_report_format fmt, bool overwrite,
                    rb_err *err);

#endif
