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
    size_t n; /* samples used */
    double mse, rmse, mae, max_abs, mean_abs_est, mean_abs_ref;
} rb_stats;

/* Two signals on one clock, T x n sample-major each, with their names for messages. */
typedef struct rb_metric_input {
    const char *estimate_name, *reference_name;
    const double *estimate, *reference;
    const double *time; /* T clock times (for the window) */
    size_t n_samples, n_elements;
    double t0, t1;      /* window [t0, t1]; -INFINITY / INFINITY for the whole run */
} rb_metric_input;

/* per_element: n_elements entries; overall: pooled. RB_ENUMERIC on non-finite data,
 * RB_EINPUT when the window holds no sample. */
int rb_metrics_compute(const rb_metric_input *in, rb_stats *per_element, rb_stats *overall, rb_err *err);

/* A report: rows of statistics, grouped by run (variant / log), for Markdown, JSON and CSV. */
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

int rb_report_new(rb_report **out, const char *title, rb_err *err);
void rb_report_free(rb_report *rep);
int rb_report_add(rb_report *rep, const char *run, const char *estimate, const char *reference,
                  const char *element, const rb_stats *stats, rb_err *err);
int rb_report_set_attr(rb_report *rep, const char *key, const char *value, rb_err *err);

typedef enum rb_report_format { RB_REPORT_MARKDOWN, RB_REPORT_JSON, RB_REPORT_CSV } rb_report_format;

/* From a path's extension: .md -> Markdown, .json -> JSON, .csv -> CSV. */
int rb_report_format_from_path(const char *path, rb_report_format *fmt, rb_err *err);
/* Render into a new NUL-terminated string (caller frees with rb_free). Numbers are printed with
 * round-trip precision in JSON and CSV, 4 significant digits in Markdown. RB_ENUMERIC if a
 * statistic is not finite. */
int rb_report_render(const rb_report *rep, rb_report_format fmt, char **text, rb_err *err);
/* Render and write through a temporary file renamed into place (nothing at path on error). */
int rb_report_write(const rb_report *rep, const char *path, rb_report_format fmt, bool overwrite,
                    rb_err *err);

#endif
