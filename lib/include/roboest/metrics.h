/*
 * roboest metrics: error statistics between an estimate and a reference, and reports.
 *
 * For estimate e and reference r over the samples in the window:
 *   MSE = mean((e - r)^2), RMSE = sqrt(MSE), MAE = mean|e - r|, max_abs = max|e - r|,
 *   mean_abs_est = mean|e|, mean_abs_ref = mean|r| (for energy-like comparisons),
 *   min_est = min e, max_est = max e, mean_est = mean e, count_zero_est = #{e == 0} (the estimate alone:
 *   for a 0/1 flag output, min_est == 1 means set on every sample, mean_est is the fraction set and
 *   count_zero_est the samples where it is not), rms_est = sqrt(mean e^2) (the estimate alone: the size of a
 *   difference of two estimates, with any reference).
 * rb_metrics_steps and rb_metrics_events add the step response and the error around events (below).
 * Statistics are given per element and over all elements (every element's samples pooled).
 * A non-finite estimate or reference sample is an RB_ENUMERIC error naming the signal, the
 * element and the first bad sample: NaN never turns silently into a number or a JSON null.
 */
#ifndef ROBOEST_METRICS_H
#define ROBOEST_METRICS_H

#include <stdio.h>

#include "roboest/core.h"

RB_API_BEGIN

typedef struct rb_stats {
    size_t n; /* values used: samples in the window (per element), samples x elements (pooled) */
    double mse, rmse, mae, max_abs, mean_abs_est, mean_abs_ref;
    double min_est, max_est, mean_est, count_zero_est; /* the estimate alone (rb_metrics_compute) */
    double rms_est;                                    /* sqrt(mean e^2): the estimate alone, e.g. a difference */
    double rise_time, step_delay, steps_unsettled;     /* rb_metrics_steps; 0 until it runs */
    double event_peak, event_max;                      /* rb_metrics_events; 0 until it runs */
    size_t n_steps, n_events;                          /* steps and events these cover */
} rb_stats;

/* Two signals on one clock, T x n sample-major each, with their names for messages. */
typedef struct rb_metric_input {
    const char *estimate_name, *reference_name; /* for messages; NULL reads "estimate"/"reference" */
    const double *estimate, *reference;         /* T x n each, sample t, element i at t * n + i */
    const double *time;           /* T clock times (for the window); may be NULL when t0, t1 are both infinite */
    size_t n_samples, n_elements; /* T, n */
    double t0, t1;                /* window [t0, t1]; -INFINITY / INFINITY for the whole run */
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
/* rb_metrics_compute over samples that come window by window (a log read in windows), with its results and errors
 * bit for bit: desc is its input without the data (estimate and reference unread; time every sample's, kept by
 * the caller, as the names). add: the rows of samples [k0, k1) (est and ref: (k1 - k0) x n, row 0 sample k0),
 * windows in order. finish: rb_metrics_compute's results and errors. new allocates n accumulators (RB_ENOMEM). */
typedef struct rb_metrics_stream rb_metrics_stream;
int rb_metrics_stream_new(const rb_metric_input *desc, rb_metrics_stream **out, rb_err *err);
void rb_metrics_stream_add(rb_metrics_stream *s, const double *est, const double *ref, size_t k0, size_t k1);
int rb_metrics_stream_finish(const rb_metrics_stream *s, rb_stats *per_element, rb_stats *overall, rb_err *err);
void rb_metrics_stream_free(rb_metrics_stream *s);

/* ---- step response and errors around events (response.c) ----
 * Both read the samples of rb_metrics_compute's window (time required, increasing; samples finite: call
 * rb_metrics_compute first, which checks them) and set only their own fields of per_element (n_elements
 * entries, may be NULL) and overall (may be NULL). Nothing is allocated.
 *
 * rb_metrics_steps: a step of element i is a jump |r[k] - r[k-1]| > min_jump between consecutive window
 * samples; its time is t[k] (the first sample at the new value) and it lasts until the next step of the
 * element (exclusive) or the window's end. Within it, the first times the estimate reaches 10 %, 50 % and
 * 90 % of the way from r[k-1] to r[k] (linear interpolation between the sample before the crossing and the
 * crossing sample, never before t[k]) give rise_time = t90 - t10 and step_delay = t50 - t[k], means over the
 * element's steps. A step the estimate never takes to 90 % is unsettled: counted in steps_unsettled, and a
 * crossing it never reaches is taken at the step's end (the next step's time, or the last window sample's),
 * t10 at t[k] if 10 % is never reached: the rise time is then a pessimistic bound (the time left), never
 * NaN. n_steps counts the steps; an element without one gets NaN rise_time and step_delay. Pooled: the
 * means over every element's steps, the sum of the unsettled counts.
 * RB_EINVAL: in == NULL, no time vector, min_jump not > 0 or not finite; the errors of a window with no
 * sample as rb_metrics_compute. */
int rb_metrics_steps(const rb_metric_input *in, double min_jump, rb_stats *per_element, rb_stats *overall, rb_err *err);
/* rb_metrics_events: for each event time te (n_events of them, any order), the window samples with time in
 * [te + a, te + b] (a <= b); an event whose interval holds no window sample is skipped. event_peak is the
 * mean over the events of max |e - r| over the interval, event_max the largest of these; n_events counts the
 * events used (NaN statistics when none). Pooled: per event the max over every element. Intervals may
 * overlap. RB_EINVAL: in == NULL, no time vector, events NULL with n_events > 0, a or b not finite, a > b. */
int rb_metrics_events(const rb_metric_input *in, const double *event_times, size_t n_events, double a, double b,
                      rb_stats *per_element, rb_stats *overall, rb_err *err);

/* ---- the sensor-fault monitor (fault.c) ----
 * Three kinds of fault of one sensor element (a log channel's element, or a measurement a filter compares
 * with its prediction):
 *   stuck      a run of at least stuck_window consecutive finite samples within stuck_tolerance of the run's
 *              first sample (a sensor that stopped updating); every sample of the run counts;
 *   saturated  a run of at least saturation_window consecutive samples exactly equal to the largest or to the
 *              smallest finite value of the samples scanned (a sensor pinned at its limit), when these differ
 *              (an element that never changes is stuck at most); such a run counts as saturated, not as stuck;
 *   outlier    a normalized innovation |nu_j| / sqrt(S_jj) beyond k_sigma (S the filter's innovation
 *              covariance), checked one sample at a time as the filter runs.
 * Non-finite samples break runs and are never counted. A window or k_sigma of 0 turns its detector off.
 * Nothing here allocates. */
typedef enum rb_fault_kind { RB_FAULT_STUCK, RB_FAULT_SATURATED, RB_FAULT_OUTLIER, RB_FAULT_N_KINDS } rb_fault_kind;
/* "stuck", "saturated", "outlier"; NULL out of range. */
const char *rb_fault_kind_name(int kind);

typedef struct rb_fault_opts {
    size_t stuck_window;      /* samples; 0: off */
    double stuck_tolerance;   /* >= 0, in the element's unit; 0: exactly equal */
    size_t saturation_window; /* samples; 0: off */
    double k_sigma;           /* >= 0; 0: off */
    double settle;            /* s, >= 0: outliers count from the first sample's time + settle on (the caller of
                                 rb_fault_outliers applies it: a filter's start-up transient is no sensor fault) */
} rb_fault_opts;

typedef struct rb_fault_tally {
    size_t count; /* faulty samples */
    size_t first; /* index of the first one; SIZE_MAX while count is 0 */
} rb_fault_tally;

/* n empty tallies (count 0, first SIZE_MAX). */
void rb_fault_tally_init(rb_fault_tally *t, size_t n);
/* The stuck and saturated samples of x[k * stride], k < n, added to *stuck and *saturated (first: the
 * index k). The extremes are those of these n samples: scan the span that matters (a run's window). */
void rb_fault_scan(const double *x, size_t n, size_t stride, const rb_fault_opts *o, rb_fault_tally *stuck,
                   rb_fault_tally *saturated);
/* rb_fault_scan over samples that come in parts (a log read in windows), with the same tallies bit for bit: the
 * extremes first (rb_fault_range over every part, lo = INFINITY and hi = -INFINITY before the first), then
 * rb_fault_stream_init with them, rb_fault_stream_push of every part in order, rb_fault_stream_end. The state is
 * a few words: the run open at the end of a part goes on in the next. */
typedef struct rb_fault_stream {
    double lo, hi, v0; /* the extremes; the open run's first value */
    size_t at, start;  /* the next sample's index; the open run's first */
    int mode;          /* 0: no run open, 1: at an extreme (saturated if long enough), 2: within the tolerance */
} rb_fault_stream;
void rb_fault_range(const double *x, size_t n, size_t stride, double *lo, double *hi);
void rb_fault_stream_init(rb_fault_stream *s, double lo, double hi);
void rb_fault_stream_push(rb_fault_stream *s, const double *x, size_t n, size_t stride, const rb_fault_opts *o,
                          rb_fault_tally *stuck, rb_fault_tally *saturated);
void rb_fault_stream_end(rb_fault_stream *s, const rb_fault_opts *o, rb_fault_tally *stuck, rb_fault_tally *saturated);
/* Sample k of m normalized innovations z (NaN: the element was not used): each |z[j]| > k_sigma adds one to
 * tally[j] (first: k). Does nothing when k_sigma is 0. */
void rb_fault_outliers(const double *z, size_t m, double k_sigma, size_t k, rb_fault_tally *tally);

/* ---- confusion tables of class codes (confusion.c) ----
 * A classifier's estimate against a reference, both class codes: the reference's classes are the rows (0 ..
 * n_rows - 1, "the true class"), the estimate's the columns (0 .. n_cols - 1, "the predicted class"). Counts are
 * over the samples in the window [t0, t1] where `where` (when given) is finite and non-zero, element by element (the
 * elements pooled); such a sample's estimate and reference must be integers among the codes: anything else (a
 * class outside the labels, NaN, 1.5) is an RB_EINPUT error naming the signal, element, sample, time and value, so
 * a mislabelled signal never turns into counts silently. Samples outside the window or where `where` is 0 or NaN are
 * never read. Derived numbers: a cell's row percentage (100 count / its row's total; NaN for an empty row) and the
 * utilization, the percentage of counted samples whose estimate is not class 0 (the thesis's "controller
 * utilization" when class 0 is "no slip"; NaN when nothing was counted). Nothing is allocated. */
enum { RB_CONFUSION_MAX = 16 }; /* classes per side */

typedef struct rb_confusion {
    size_t n_rows, n_cols;                              /* reference classes, estimate classes */
    double counts[RB_CONFUSION_MAX * RB_CONFUSION_MAX]; /* [i * n_cols + j]: reference i, estimate j */
} rb_confusion;

typedef struct rb_confusion_input {
    const char *estimate_name, *reference_name; /* for messages (NULL: "estimate", "reference") */
    const double *estimate, *reference;         /* T x n each, sample-major */
    const double *where;                        /* T x n or NULL: every sample in the window */
    const double *time;                         /* T times; may be NULL when t0, t1 are both infinite */
    size_t n_samples, n_elements;
    double t0, t1;
} rb_confusion_input;

/* An empty table (RB_EINVAL outside 1 .. RB_CONFUSION_MAX classes per side). */
int rb_confusion_init(rb_confusion *c, size_t n_rows, size_t n_cols, rb_err *err);
/* Add the input's counts to c (errors above; RB_EINVAL for NULL data, a NaN bound or a bounded window without
 * times). On error c holds the samples before the bad one. */
int rb_confusion_count(const rb_confusion_input *in, rb_confusion *c, rb_err *err);
/* dst += src (same shape: RB_EINVAL otherwise). */
int rb_confusion_add(rb_confusion *dst, const rb_confusion *src, rb_err *err);
double rb_confusion_total(const rb_confusion *c);
double rb_confusion_row_total(const rb_confusion *c, size_t i);
double rb_confusion_percent(const rb_confusion *c, size_t i, size_t j); /* NaN: an empty row */
double rb_confusion_utilization(const rb_confusion *c);                 /* NaN: nothing counted */

/* A confusion table in a report (rb_report_add_confusion): what was compared and with which labels. */
typedef struct rb_report_confusion {
    char *run, *name, *estimate, *reference, *where; /* where: "" for every sample */
    char **labels;                                   /* table.n_cols names of the estimate's classes */
    char **reference_labels;                         /* table.n_rows names of the reference's classes */
    rb_confusion table;
} rb_report_confusion;

/* One monitored element in a report (rb_report_add_fault): where it comes from and its tallies. */
typedef struct rb_report_fault {
    char *run;                              /* as the rows' run */
    char *signal;                           /* the pipeline signal the element belongs to */
    char *channel;                          /* the log channel it was read from; "" for a signal a stage computed */
    char *element;                          /* element name */
    rb_fault_tally tally[RB_FAULT_N_KINDS]; /* first: the channel's sample index (for a stage's signal: the
                                               run's clock index) */
    double first_time[RB_FAULT_N_KINDS];    /* time of that sample, s (unused while count is 0) */
} rb_report_fault;

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
    bool has_faults;          /* a fault monitor ran (rb_report_set_fault_settings): the faults section is written */
    rb_fault_opts fault_opts; /* its settings */
    size_t n_faults, cap_faults;
    rb_report_fault *faults; /* every monitored element, grouped by run as the rows */
    size_t n_warnings, cap_warnings;
    char **warnings; /* one line each (the run's warnings: the logs', the stages' findings), in adding order */
    size_t n_confusions, cap_confusions;
    rb_report_confusion *confusions; /* confusion tables, grouped by run as the rows */
    size_t n_windows, cap_windows;
    char **windows; /* one line per run and metric: the samples scored and the start-up excluded, in adding order */
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
int rb_report_add(rb_report *rep, const char *run, const char *estimate, const char *reference, const char *element,
                  const rb_stats *stats, rb_err *err);
/* Set provenance key = value (copied), replacing the value of an existing key; keys keep the
 * order of their first setting. RB_EINVAL on a NULL argument, RB_ENOMEM (report unchanged). */
int rb_report_set_attr(rb_report *rep, const char *key, const char *value, rb_err *err);
int rb_report_set_provenance(rb_report *rep, const rb_provenance *pv, rb_err *err);
/* Add a warning line (copied): Markdown "## Warnings" (a list after the table), JSON "warnings" (an array), CSV
 * "# warning: " comment lines before the header; nothing is written without warnings. RB_EINVAL on a NULL
 * argument, RB_ENOMEM (report unchanged). */
int rb_report_add_warning(rb_report *rep, const char *line, rb_err *err);
/* Add the line saying which window a metric of a run scored (copied): Markdown "## Scored windows" (a list after the
 * confusions), JSON "windows" (an array), CSV "# window: " comment lines. RB_EINVAL on a NULL argument, RB_ENOMEM
 * (report unchanged). */
int rb_report_add_window(rb_report *rep, const char *line, rb_err *err);
/* Mark the report as holding a fault monitor's findings, with its settings (the faults section is then
 * written even when no element has a fault). RB_EINVAL on a NULL argument. */
int rb_report_set_fault_settings(rb_report *rep, const rb_fault_opts *o, rb_err *err);
/* Add a monitored element (strings and tallies copied; grouped by run like the rows). RB_EINVAL on a NULL
 * argument or string, RB_ENOMEM (the report is then unchanged). */
int rb_report_add_fault(rb_report *rep, const rb_report_fault *f, rb_err *err);

/* Add a confusion table (strings, labels and counts copied; labels: table.n_cols and table.n_rows names). Rendered
 * after the rows: Markdown "## Confusion <name> (<run>)" (reference \ estimate, "count (row %)" cells, row totals,
 * the utilization), JSON "confusions": [{"run", "name", "estimate", "reference", "where", "labels",
 * "reference_labels", "counts": [[...] per reference class], "row_percent": [[...]] (null for an empty row),
 * "utilization" (null when empty), "n"}], CSV "# confusion ..." comment lines. RB_EINVAL on a NULL argument,
 * RB_ENOMEM (report unchanged). */
int rb_report_add_confusion(rb_report *rep, const rb_report_confusion *c, rb_err *err);

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
int rb_report_write(const rb_report *rep, const char *path, rb_report_format fmt, bool overwrite, rb_err *err);

/* ==== comparisons of estimator variants over several logs (bootstrap.c, compare.c, figures.c) ====
 * `roboest compare` runs every (variant, log) pair and fills an rb_comparison with each pair's statistics per
 * joint and pooled over the joints; the summary across logs is the mean, the sample standard deviation
 * (n - 1; 0 with one log), the extremes and a percentile-bootstrap interval of the mean. */

/* The statistics of rb_stats in report order: 0 "mse", 1 "rmse", 2 "mae", 3 "max_abs", 4 "mean_abs_est",
 * 5 "mean_abs_ref" (the error statistics, RB_N_ERROR_STATS of them), 6 "min_est", 7 "max_est", 8 "mean_est",
 * 9 "count_zero_est", 10 "rise_time", 11 "step_delay", 12 "steps_unsettled", 13 "event_peak", 14
 * "event_max", 15 "rms_est". */
enum {
    RB_N_STATS = 16,
    RB_N_ERROR_STATS = 6,
    RB_STAT_RISE_TIME = 10,
    RB_STAT_STEP_DELAY = 11,
    RB_STAT_STEPS_UNSETTLED = 12,
    RB_STAT_EVENT_PEAK = 13,
    RB_STAT_EVENT_MAX = 14,
    RB_STAT_RMS_EST = 15
};
const char *rb_stat_key(size_t k);   /* "rmse"; NULL for k >= RB_N_STATS */
const char *rb_stat_title(size_t k); /* "RMSE" */
double rb_stat_value(const rb_stats *s, size_t k);
long rb_stat_index(const char *key); /* -1 when unknown */

/* ---- quantiles and the percentile bootstrap (bootstrap.c) ---- */
/* The p-quantile (p in [0, 1]) of n >= 1 ascending values by linear interpolation between order statistics
 * (Hyndman and Fan's type 7, numpy's default): h = (n - 1) p, x[floor h] + (h - floor h)(x[floor h + 1] -
 * x[floor h]). */
double rb_quantile_sorted(const double *sorted, size_t n, double p);
/* Ascending sort of n doubles in place (NaN-free input). */
void rb_sort_doubles(double *x, size_t n);

typedef struct rb_bootstrap {
    size_t samples; /* B replicates, >= 1 */
    uint64_t seed;  /* of the rb_rng that draws the resampling plan */
    double level;   /* central probability of the interval, in (0, 1), e.g. 0.95 */
} rb_bootstrap;

/* The resampling plan: B rows of n indices, drawn with replacement. A fresh rb_rng seeded with bs->seed
 * draws row 0 first, element by element: idx[b * n + i] = floor(n * rb_rng_uniform(rng)). The same plan
 * serves every quantity (so intervals of different variants come from the same resamples). idx holds
 * B x n values. RB_EINVAL on n == 0, B == 0 or a level outside (0, 1). */
int rb_bootstrap_draw(const rb_bootstrap *bs, size_t n, size_t *idx, rb_err *err);
/* Percentile interval of the mean of x[0..n): replicate b is the mean of x[idx[b * n + i]] over i; *lo and
 * *hi are the (1 - level) / 2 and (1 + level) / 2 quantiles (type 7) of the B replicates. scratch holds B
 * doubles. With n == 1 every replicate is x[0]: the interval collapses to the value. */
void rb_bootstrap_mean_interval(const double *x, size_t n, const size_t *idx, size_t B, double level, double *scratch,
                                double *lo, double *hi);

/* Box-plot figures of a sample (Tukey): quartiles of type 7, whiskers at the most extreme values inside
 * [q1 - 1.5 IQR, q3 + 1.5 IQR], values outside are outliers. */
typedef struct rb_box {
    size_t n;
    double q1, median, q3;
    double whisker_lo, whisker_hi;
    size_t n_outliers;
} rb_box;

/* Box figures of x[0..n) (n >= 1, finite); scratch holds n doubles (a sorted copy is left there). */
void rb_box_stats(const double *x, size_t n, double *scratch, rb_box *box);

/* ---- the comparison table (compare.c) ---- */
typedef struct rb_summary {
    double mean, sd, lo, hi, min, max; /* across logs; [lo, hi] the bootstrap interval of the mean */
} rb_summary;

/* A published value of one statistic (the mean across logs: "ours"), for the "Published beside ours" table. */
typedef struct rb_published {
    size_t variant, joint, stat; /* joint == n_joints: all joints pooled; stat as rb_stat_key */
    double value;                /* the paper's, finite */
    char *source;                /* e.g. "Table II, no adaptation" */
} rb_published;

typedef struct rb_comparison {
    char *title;
    char *reference; /* what the estimates were compared with (a channel name) */
    size_t n_variants, n_logs, n_joints;
    char **variants, **logs, **joints; /* names (logs: file stems) */
    size_t n_shown;
    size_t shown[RB_N_STATS]; /* the statistics the tables show, in order (indices as rb_stat_key) */
    rb_bootstrap bootstrap;
    /* Per-pair statistics: values[(v * (n_joints + 1) + j) * n_logs + l], joint j == n_joints is "all"
     * (every joint's samples pooled). */
    rb_stats *values;
    /* Filled by rb_comparison_summarize: summary[((v * (n_joints + 1) + j) * RB_N_STATS + k]. */
    rb_summary *summary;
    bool summarized;
    size_t n_attrs;
    char **attr_keys, **attr_values; /* provenance, in setting order */
    size_t n_published;
    rb_published *published; /* numbers of a publication shown beside ours, in adding order */
    bool has_confusion;      /* rb_comparison_set_confusion: a confusion table per variant and log */
    char **labels, **reference_labels;
    char *confusion_where;    /* the signal that selected the samples ("" for all) */
    rb_confusion *confusions; /* [v * n_logs + l], the suite's joints pooled */
} rb_comparison;

/* A table for the given names (copied); every statistic starts at zero and the error statistics (the first
 * RB_N_ERROR_STATS) are shown.
 * Caller frees with rb_comparison_free. RB_EINVAL for no variant, log or joint; RB_ENOMEM. */
int rb_comparison_new(rb_comparison **out, const char *title, const char *reference, const char *const *variants,
                      size_t n_variants, const char *const *logs, size_t n_logs, const char *const *joints,
                      size_t n_joints, rb_err *err);
void rb_comparison_free(rb_comparison *c);
/* The statistics of variant v, joint j (n_joints: all joints) on log l (borrowed, writable). */
rb_stats *rb_comparison_at(const rb_comparison *c, size_t v, size_t j, size_t l);
/* The summary of statistic k (after rb_comparison_summarize). */
const rb_summary *rb_comparison_summary(const rb_comparison *c, size_t v, size_t j, size_t k);
/* Add a published value (source copied). RB_EINVAL for an index out of range or a non-finite value,
 * RB_ENOMEM (the table is then unchanged). */
int rb_comparison_add_published(rb_comparison *c, size_t v, size_t j, size_t k, double value, const char *source,
                                rb_err *err);
/* Give the table confusion tables: labels (n_cols estimate classes) and reference_labels (n_rows), where ("" for all
 * samples); every (variant, log) table starts empty: fill rb_comparison_confusion(c, v, l). Rendered after the
 * published values: Markdown "## Confusion" (per variant, the logs pooled: counts summed), JSON "confusion":
 * {"labels", "reference_labels", "where", "variants": [{"name", "counts", "row_percent", "utilization", "n",
 * "per_log": [{"log", "counts"}]}]}; the CSV does not show them. RB_EINVAL (class counts), RB_ENOMEM. */
int rb_comparison_set_confusion(rb_comparison *c, const char *const *labels, size_t n_cols,
                                const char *const *reference_labels, size_t n_rows, const char *where, rb_err *err);
rb_confusion *rb_comparison_confusion(const rb_comparison *c, size_t v, size_t l);
/* Set provenance key = value (copied; an existing key's value is replaced). */
int rb_comparison_set_attr(rb_comparison *c, const char *key, const char *value, rb_err *err);
int rb_comparison_set_provenance(rb_comparison *c, const rb_provenance *pv, rb_err *err);
/* Mean, standard deviation, extremes and bootstrap interval over the logs for every variant, joint and
 * statistic, with one resampling plan (rb_bootstrap_draw over the n_logs logs). RB_ENUMERIC when a value is
 * not finite (naming variant, joint, log and statistic), RB_EINVAL for a bad c->bootstrap, RB_ENOMEM. */
int rb_comparison_summarize(rb_comparison *c, rb_err *err);
/* Render (after rb_comparison_summarize) into a new string (caller frees with rb_free), numbers under the
 * C locale: round-trip in JSON and CSV, 4 significant digits in Markdown.
 *   Markdown: "# title", provenance list, a line saying what the intervals are, then "## All joints": one
 *     row per variant, one column per shown statistic, cells "mean ± sd [lo, hi]"; then per shown
 *     statistic "## <STAT> per joint": one row per variant, one column per joint, cells "mean [lo, hi]".
 *     With one log the cells hold the value alone.
 *   JSON: {"title", "provenance": {}, "reference", "statistics": [shown keys], "bootstrap": {"over": "logs",
 *     "samples", "seed", "level"}, "logs": [names], "joints": [names], "variants": [{"name", "all": {stat:
 *     summary}, "joints": {joint: {stat: summary}}}]} with summary = {"mean", "sd", "lo", "hi", "min",
 *     "max", "per_log": [values in log order]}; only shown statistics appear.
 *   With published values: Markdown ends with "## Published beside ours" (source | variant | joint |
 *     statistic | paper | ours | ratio, ratio = ours / paper, "n/a" when the paper's value is 0 or the ratio overflows; %.4g), JSON
 *     gets "published": [{"source", "variant", "joint", "statistic", "paper", "ours", "ratio" (null when
 *     the paper's value is 0)}] after "variants"; ours is the summary's mean. The CSV does not show them.
 *   CSV: "# key: value" comment lines, then the header variant,joint,statistic,mean,sd,lo,hi,min,max and one
 *     column per log (its name), one line per variant, joint ("all" first, then the joints) and statistic.
 * RB_EINVAL when not summarized or for an unknown format, RB_ENOMEM. */
int rb_comparison_render(const rb_comparison *c, rb_report_format fmt, char **text, rb_err *err);

/* ---- SVG figures (figures.c): self-contained SVG 1.1 text, no scripts, no external references ---- */
/* "Nice" axis ticks: multiples of 1, 2 or 5 x 10^k covering [lo, hi] with about `target` ticks; returns the
 * count written to ticks (at most max). lo == hi gets a small span around the value. */
size_t rb_nice_ticks(double lo, double hi, size_t target, double *ticks, size_t max);

typedef struct rb_box_series {
    const char *label;    /* x-axis label of the box */
    const double *values; /* n finite values */
    size_t n;
} rb_box_series;

/* Box plots side by side, one per series (<g class="box"> each, holding the box <rect>, the median <line>,
 * the whiskers and one <circle class="outlier"> per outlier), y axis with nice ticks, labels.
 * RB_EINVAL for no series or an empty one, RB_ENUMERIC for a non-finite value (naming the series), RB_ENOMEM. */
int rb_svg_boxplot(const char *title, const char *y_label, const rb_box_series *series, size_t n_series, char **svg,
                   rb_err *err);

typedef struct rb_trace_line {
    const char *label;
    const double *t, *y; /* n samples, t increasing */
    size_t n;
} rb_trace_line;

typedef struct rb_interval {
    double t0, t1;
} rb_interval;

/* Time traces over [t0, t1]: lines[0] is the reference (black, dashed, drawn last), the others take the palette in order
 * (one <polyline class="trace"> per line, thinned to at most ~2 points per
 * horizontal pixel by keeping each pixel column's extremes), shaded intervals (one <rect class="shade"> per
 * interval that meets [t0, t1], clipped to it), a legend, axes with nice ticks; times shown relative to t0.
 * Non-finite samples are skipped. RB_EINVAL for t1 <= t0, RB_ENOMEM. */
int rb_svg_traces(const char *title, const char *y_label, const rb_trace_line *lines, size_t n_lines,
                  const rb_interval *shaded, size_t n_shaded, double t0, double t1, char **svg, rb_err *err);

/* Lines of y over x (the lines' t is their x, increasing): lines[0] black dashed (a reference level), the others
 * the palette, a marker per point, axes with nice ticks over the x span of every line, the given x label and a
 * legend. RB_EINVAL for an empty x span, RB_ENOMEM. */
int rb_svg_xy(const char *title, const char *x_label, const char *y_label, const rb_trace_line *lines, size_t n_lines,
              char **svg, rb_err *err);

/* Write text to path through a temporary renamed into place (RB_EEXISTS without overwrite, RB_EIO). */
int rb_text_write(const char *text, const char *path, bool overwrite, rb_err *err);

RB_API_END

#endif
