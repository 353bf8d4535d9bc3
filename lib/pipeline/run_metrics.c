/* The runner's metrics (run.c): each metric's window, its reference, its statistics or confusion table into the
 * run's report; and what a run in windows handles window by window (stream_out.c): its outputs, the statistics of
 * its metrics and the references these read from another file (reference_log). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "run_internal.h"

/* ---- metrics ------------------------------------------------------------------------------------------ */
/* Metric m's window in the log's time: its own (a "from_start" one counted from the log's first sample), else from
 * the clock's first sample plus the pipeline's settle (the filters' start-up) to the end. The report says which. */
static void metric_bounds(runner *r, size_t m, double *t0, double *t1, double *settle, long *st)
{
    const rb_config_metric *mt = &r->p->metrics[m];
    const rb_clock *clk = &r->res->clock;
    *settle = 0.0, *st = -1;
    if (mt->has_window) {
        rb_window_resolve(&mt->window, r->t_start, t0, t1);
    } else {
        *settle = rb_pipeline_settle(r->p, r->dt, st);
        *t0 = *settle > 0 && clk->n ? clk->t[0] + *settle : -INFINITY;
        *t1 = INFINITY;
    }
}

static int metric_window(runner *r, size_t m, double *t0, double *t1, double *settle)
{
    const rb_config_metric *mt = &r->p->metrics[m];
    const rb_clock *clk = &r->res->clock;
    char why[256];
    long st;
    metric_bounds(r, m, t0, t1, settle, &st);
    if (mt->has_window) {
        char w[128];
        rb_window_text(&mt->window, w, sizeof w);
        snprintf(why, sizeof why, "its window %s", w);
    } else {
        if (st >= 0)
            snprintf(why, sizeof why, "start-up of %.4g s excluded (settle: stage %s, %s)", *settle,
                     r->p->stages[st].id, r->p->stages[st].type->name);
        else if (*settle > 0)
            snprintf(why, sizeof why, "start-up of %.4g s excluded (the pipeline's settle)", *settle);
        else
            snprintf(why, sizeof why, "no start-up excluded (settle 0%s)", r->p->has_settle ? "" : ": none declared");
    }
    double lo = clk->n ? fmax(*t0, clk->t[0]) : NAN, hi = clk->n ? fmin(*t1, clk->t[clk->n - 1]) : NAN;
    char *line = rb_asprintf("%s: metrics[%zu] %s: t from %.15g to %.15g s (clock from %.15g s): %s", r->res->run_name,
                             m, mt->name, lo, hi, clk->n ? clk->t[0] : NAN, why);
    int rc = line ? rb_report_add_window(r->res->report, line, r->err) : rb_run_nomem(r);
    rb_free(line);
    return rc;
}

/* A metric's error, saying when the default start-up skip left it nothing to score. */
static int metric_failed(runner *r, int rc, size_t m, double settle)
{
    if (rc == RB_EINPUT && settle > 0)
        return rb_err_prefix(r->err, rc,
                             "%s: metrics[%zu]: with the start-up of %g s excluded (settle; \"settle\": 0 scores "
                             "every sample): ",
                             r->label, m, settle);
    return rb_err_prefix(r->err, rc, "%s: metrics[%zu]: ", r->label, m);
}

/* A metric's reference_log read in windows (a run in windows with a folder): the channel of the other file read
 * part by part (rb_log_source, opened with the run's memory limit) and resampled onto each window's clock samples it
 * covers, the values of reference_from_file bit for bit (the same offset added to the same timestamps, the same
 * resampling). */
struct rb_ref_stream {
    rb_log_source *src;
    size_t c; /* the channel's index in src's log */
    char *path;
    rb_resampler *rs;
    rb_channel_window win;
    double offset;
    size_t k0, k1;         /* the clock samples the reference covers */
    size_t width, outside; /* outside: clock samples of the metric's window it does not cover */
    double lo, hi;         /* its first and last time (offset added) */
    double t0, t1;         /* the times scored */
    double *shifted;       /* the window's times plus the offset (cap values) */
    size_t cap;
    double *rows; /* one window of the reference on the clock (window x width) */
};

void rb_ref_stream_free(rb_ref_stream *rs)
{
    if (!rs)
        return;
    rb_resampler_free(rs->rs);
    rb_channel_window_free(&rs->win);
    rb_log_source_free(rs->src);
    rb_free(rs->path);
    rb_free(rs->shifted);
    rb_free(rs->rows);
    rb_free(rs);
}

/* The reference channel's first and last times, the offset added, checked against the clock (as
 * rb_reference_log_check_clock checks the file read whole). */
static int ref_stream_span(runner *r, size_t m, rb_ref_stream *rs, const rb_channel *ch)
{
    const rb_config_metric *mt = &r->p->metrics[m];
    const rb_clock *clk = &r->res->clock;
    double ends[2];
    int rc = rb_log_source_read(rs->src, rs->c, 0, 1, &ends[0], NULL, r->err);
    if (!rc)
        rc = rb_log_source_read(rs->src, rs->c, ch->n_samples - 1, 1, &ends[1], NULL, r->err);
    for (int k = 0; !rc && rs->offset != 0 && k < 2; k++)
        ends[k] += rs->offset;
    rb_channel view = *ch;
    view.time = ends, view.n_samples = 2;
    if (!rc)
        rc = rb_reference_log_check_clock(&mt->reference_log, rs->path, &view, clk->t, clk->n, r->err);
    if (rc)
        return rc;
    rs->lo = ends[0], rs->hi = ends[1];
    while (rs->k0 < clk->n && clk->t[rs->k0] < rs->lo)
        rs->k0++;
    for (rs->k1 = rs->k0; rs->k1 < clk->n && clk->t[rs->k1] <= rs->hi;)
        rs->k1++;
    return RB_OK;
}

/* Metric m's reference_log opened for a run in windows; [t0, t1] the metric's window (metric_bounds). */
static int ref_stream_open(runner *r, size_t m, double t0, double t1, rb_ref_stream **out)
{
    const rb_config_metric *mt = &r->p->metrics[m];
    const rb_clock *clk = &r->res->clock;
    rb_ref_stream *rs = rb_calloc(1, sizeof *rs);
    if (!rs)
        return rb_run_nomem(r);
    *out = rs;
    rs->offset = mt->reference_log.time_offset;
    int rc = rb_reference_log_path(&mt->reference_log, r->n_paths ? r->paths[0] : NULL, &rs->path, r->err);
    if (!rc)
        rc = rb_log_source_open(rs->path, r->opts->memory_limit, &rs->src, r->err);
    const rb_channel *ch = rc ? NULL : rb_log_find(rb_log_source_log(rs->src), mt->reference);
    if (!rc && !ch)
        rc = rb_err_set(r->err, RB_ENOTFOUND, "%s: reference channel %s not found (reference_log)", rs->path,
                        mt->reference);
    if (!rc && ch->n_samples == 0)
        rc = rb_err_set(r->err, RB_EINPUT, "%s: reference channel %s has no samples", rs->path, mt->reference);
    if (!rc) {
        rs->c = (size_t)(ch - rb_log_source_log(rs->src)->channels);
        rs->width = ch->n_elements;
        rc = ref_stream_span(r, m, rs, ch);
    }
    if (!rc) {
        for (size_t k = 0; k < clk->n; k++)
            rs->outside += (k < rs->k0 || k >= rs->k1) && clk->t[k] >= t0 && clk->t[k] <= t1;
        rs->t0 = fmax(t0, rs->lo), rs->t1 = fmin(t1, rs->hi);
        rc = rb_resampler_new(ch, NULL, 0, mt->reference_log.interp, RB_NONFINITE_ERROR, &rs->rs, r->err);
    }
    if (!rc && !(rs->rows = rb_calloc(r->window * rs->width + 1, sizeof *rs->rows)))
        rc = rb_run_nomem(r);
    return rc ? rb_err_prefix(r->err, rc, "%s: metrics[%zu]: ", r->label, m) : RB_OK;
}

/* The reference of clock samples [k0, k1) into rs->rows (0 where the file does not cover the clock, as
 * reference_from_file leaves them). */
static int ref_stream_window(runner *r, rb_ref_stream *rs, size_t k0, size_t k1)
{
    const rb_clock *clk = &r->res->clock;
    size_t a = k0 > rs->k0 ? k0 : rs->k0, b = k1 < rs->k1 ? k1 : rs->k1;
    memset(rs->rows, 0, (k1 - k0) * rs->width * sizeof *rs->rows);
    if (a >= b)
        return RB_OK;
    /* the raw times past the last clock time less the offset, a hair more (far above the rounding of the shift, a
     * few ulps of the larger of the two): a sample after it once shifted */
    double t_last = clk->t[b - 1] - rs->offset;
    if (rs->offset != 0)
        t_last += 1e-12 * (1.0 + fabs(clk->t[b - 1]) + fabs(rs->offset));
    size_t part = r->window > 4096 ? r->window : 4096;
    int rc = rb_channel_window_advance(rs->src, rs->c, &rs->win, rb_resampler_need(rs->rs), t_last, part, r->err);
    const double *times = rs->win.time;
    if (!rc && rs->offset != 0) {
        if (rs->win.count > rs->cap) {
            double *grown = rb_realloc(rs->shifted, rs->win.count * sizeof *grown);
            if (!grown)
                return rb_run_nomem(r);
            rs->shifted = grown, rs->cap = rs->win.count;
        }
        for (size_t i = 0; i < rs->win.count; i++)
            rs->shifted[i] = rs->win.time[i] + rs->offset;
        times = rs->shifted;
    }
    if (!rc)
        rc = rb_resampler_run(rs->rs, times, rs->win.data, rs->win.first, rs->win.count, clk->t + a, b - a,
                              rs->rows + (a - k0) * rs->width, r->err);
    return rc ? rb_err_prefix(r->err, rc, "%s: ", rs->path) : RB_OK;
}

/* A metric's reference on the clock: a signal, or (reference_log) a channel of another file resampled onto the
 * clock samples it covers, the others left out of [t0, t1] and counted in a warning. */
typedef struct metric_ref {
    const double *data; /* clock.n x width */
    size_t width;
    double t0, t1; /* the times scored */
    double *owned;
} metric_ref;

static int reference_from_file(runner *r, size_t m, double t0, double t1, metric_ref *mr)
{
    const rb_config_metric *mt = &r->p->metrics[m];
    const rb_clock *clk = &r->res->clock;
    char *path = NULL;
    rb_log *log = NULL;
    const rb_channel *ch = NULL;
    int rc = rb_reference_log_read(&mt->reference_log, r->n_paths ? r->paths[0] : NULL, mt->reference, &path, &log, &ch,
                                   r->err);
    if (!rc)
        rc = rb_reference_log_check_clock(&mt->reference_log, path, ch, clk->t, clk->n, r->err);
    size_t k0 = 0, k1, outside = 0;
    if (!rc) {
        double lo = ch->time[0], hi = ch->time[ch->n_samples - 1];
        while (k0 < clk->n && clk->t[k0] < lo)
            k0++;
        for (k1 = k0; k1 < clk->n && clk->t[k1] <= hi;)
            k1++;
        for (size_t k = 0; k < clk->n; k++)
            outside += (k < k0 || k >= k1) && clk->t[k] >= t0 && clk->t[k] <= t1;
        mr->width = ch->n_elements;
        mr->t0 = fmax(t0, lo);
        mr->t1 = fmin(t1, hi);
        if (!(mr->owned = rb_calloc(clk->n * mr->width + 1, sizeof(double))))
            rc = rb_run_nomem(r);
    }
    if (!rc) {
        rb_clock sub = {k1 - k0, clk->t + k0};
        rc = rb_resample(ch, NULL, 0, &sub, mt->reference_log.interp, RB_NONFINITE_ERROR, mr->owned + k0 * mr->width,
                         NULL, r->err);
        if (rc)
            rb_err_prefix(r->err, rc, "%s: ", path);
        mr->data = mr->owned;
    }
    if (!rc && outside)
        rc = rb_run_warn(
            r,
            "metrics[%zu] (%s): %zu clock sample%s outside the span of %s in %s (t from %.17g to %.17g s) not "
            "scored",
            m, mt->name, outside, outside > 1 ? "s" : "", mt->reference, path, ch->time[0],
            ch->time[ch->n_samples - 1]);
    if (rc)
        rb_err_prefix(r->err, rc, "%s: metrics[%zu]: ", r->label, m);
    rb_free(path);
    rb_log_free(log);
    return rc;
}

/* The reference over the metric's window [t0, t1] (metric_window). */
static int metric_reference(runner *r, size_t m, double t0, double t1, metric_ref *mr)
{
    const rb_config_metric *mt = &r->p->metrics[m];
    *mr = (metric_ref){NULL, 0, t0, t1, NULL};
    const rb_ref_stream *rs = r->refs ? r->refs[m] : NULL;
    if (rs) { /* read window by window: its rows went to the metric's accumulators */
        mr->width = rs->width, mr->t0 = rs->t0, mr->t1 = rs->t1;
        int rc = !rs->outside ? RB_OK
                              : rb_run_warn(r,
                                            "metrics[%zu] (%s): %zu clock sample%s outside the span of %s in %s (t "
                                            "from %.17g to %.17g s) not scored",
                                            m, mt->name, rs->outside, rs->outside > 1 ? "s" : "", mt->reference,
                                            rs->path, rs->lo, rs->hi);
        return rc ? rb_err_prefix(r->err, rc, "%s: metrics[%zu]: ", r->label, m) : RB_OK;
    }
    if (mt->reference_log.path)
        return reference_from_file(r, m, t0, t1, mr);
    mr->data = r->eng.sig[mt->reference_index].data;
    mr->width = r->eng.sig[mt->reference_index].width;
    return RB_OK;
}

/* Metric m's window (metric_window) and its reference over it (metric_reference); ref.owned is NULL or to free. */
static int metric_begin(runner *r, size_t m, metric_ref *ref, double *settle)
{
    double t0, t1;
    *ref = (metric_ref){NULL, 0, NAN, NAN, NULL};
    int rc = metric_window(r, m, &t0, &t1, settle);
    return rc ? rc : metric_reference(r, m, t0, t1, ref);
}

static int score(runner *r, size_t m, rb_stats *per)
{
    const rb_config_metric *mt = &r->p->metrics[m];
    const rb_live_signal *e = &r->eng.sig[mt->estimate_index];
    double settle;
    metric_ref ref;
    int rc = metric_begin(r, m, &ref, &settle);
    if (!rc && e->width != ref.width)
        rc = rb_err_set(r->err, RB_EDIM, "%s: metrics[%zu]: estimate %s has %zu elements, reference %s has %zu",
                        r->label, m, mt->estimate, e->width, mt->reference, ref.width);
    if (rc) {
        rb_free(ref.owned);
        return rc;
    }
    rb_metric_input in = {mt->estimate,    mt->reference, e->data, ref.data, r->res->clock.t,
                          r->res->clock.n, e->width,      ref.t0,  ref.t1};
    rb_stats all;
    rc = r->ms && r->ms[m] ? rb_metrics_stream_finish(r->ms[m], per, &all, r->err)
                           : rb_metrics_compute(&in, per, &all, r->err);
    rb_free(ref.owned);
    if (rc)
        return metric_failed(r, rc, m, settle);
    const char *run = r->res->run_name;
    for (size_t i = 0; !rc && i < e->width; i++)
        rc = rb_report_add(r->res->report, run, mt->name, mt->reference, e->names[i], &per[i], r->err);
    if (!rc)
        rc = rb_report_add(r->res->report, run, mt->name, mt->reference, "all", &all, r->err);
    return rc;
}

/* A confusion table of class codes (metrics.h): the elements pooled, the samples where `where` is set. */
static int score_confusion(runner *r, size_t m)
{
    const rb_config_metric *mt = &r->p->metrics[m];
    const rb_live_signal *e = &r->eng.sig[mt->estimate_index];
    const rb_live_signal *w = mt->where ? &r->eng.sig[mt->where_index] : NULL;
    double settle;
    metric_ref ref;
    int rc = metric_begin(r, m, &ref, &settle);
    if (!rc && (e->width != ref.width || (w && w->width != e->width)))
        rc = rb_err_set(r->err, RB_EDIM, "%s: metrics[%zu]: estimate %s has %zu elements, reference %s has %zu%s%s",
                        r->label, m, mt->estimate, e->width, mt->reference, ref.width, w ? ", where " : "",
                        w ? mt->where : "");
    if (rc) {
        rb_free(ref.owned);
        return rc;
    }
    rb_report_confusion c = {.run = r->res->run_name,
                             .name = mt->name,
                             .estimate = mt->estimate,
                             .reference = mt->reference,
                             .where = mt->where,
                             .labels = mt->labels,
                             .reference_labels = mt->reference_labels};
    rb_confusion_input in = {mt->estimate,    mt->reference,   e->data,  ref.data, w ? w->data : NULL,
                             r->res->clock.t, r->res->clock.n, e->width, ref.t0,   ref.t1};
    rc = rb_confusion_init(&c.table, mt->n_reference_labels, mt->n_labels, r->err);
    if (!rc)
        rc = rb_confusion_count(&in, &c.table, r->err);
    rb_free(ref.owned);
    if (rc)
        return metric_failed(r, rc, m, settle);
    return rb_report_add_confusion(r->res->report, &c, r->err);
}

int rb_run_compute_metrics(runner *r)
{
    if (r->p->n_metrics == 0)
        return RB_OK;
    int rc = rb_report_new(&r->res->report, r->p->name, r->err);
    rb_provenance pv = {0, NULL, NULL};
    if (!rc && !(rc = rb_pipeline_provenance(r->p, r->res->input, r->res->input_sha256, &pv, r->err)))
        rc = rb_report_set_provenance(r->res->report, &pv, r->err);
    rb_provenance_free(&pv);
    for (size_t m = 0; !rc && m < r->p->n_metrics; m++) {
        if (r->p->metrics[m].confusion) {
            rc = score_confusion(r, m);
            continue;
        }
        size_t width = r->eng.sig[r->p->metrics[m].estimate_index].width;
        rb_stats *per = rb_calloc(width ? width : 1, sizeof *per);
        rc = per ? score(r, m, per) : rb_run_nomem(r);
        rb_free(per);
    }
    return rc;
}

/* Outputs written window by window (stream_out.c): begun once the stages named their signals' elements. */
int rb_run_begin_streams(runner *r)
{
    const rb_pipeline *p = r->p;
    const char *dir = r->src && r->opts ? r->opts->stream_dir : NULL;
    int rc =
        dir ? rb_out_streams_begin(p, r->res, r->eng.sig, dir, r->opts->overwrite, &r->res->streams, r->err) : RB_OK;
    if (!rc && dir && !(r->ms = rb_calloc(p->n_metrics + 1, sizeof *r->ms)))
        rc = rb_run_nomem(r);
    if (!rc && dir && !(r->refs = rb_calloc(p->n_metrics + 1, sizeof *r->refs)))
        rc = rb_run_nomem(r);
    for (size_t m = 0; !rc && dir && m < p->n_metrics; m++) {
        const rb_config_metric *mt = &p->metrics[m];
        size_t w = r->eng.sig[mt->estimate_index].width;
        if (!rb_metric_streamed(p, m))
            continue;
        double settle;
        long st;
        rb_metric_input in = {mt->estimate, mt->reference, NULL, NULL, r->res->clock.t, r->res->clock.n, w, 0, 0};
        metric_bounds(r, m, &in.t0, &in.t1, &settle, &st);
        if (mt->reference_log.path && (rc = ref_stream_open(r, m, in.t0, in.t1, &r->refs[m])) == RB_OK)
            in.t0 = r->refs[m]->t0, in.t1 = r->refs[m]->t1;
        size_t ref_width =
            mt->reference_log.path ? (r->refs[m] ? r->refs[m]->width : 0) : r->eng.sig[mt->reference_index].width;
        if (!rc && w == ref_width) /* else RB_EDIM: score says it */
            rc = rb_metrics_stream_new(&in, &r->ms[m], r->err);
    }
    return rc;
}

/* Signal t's row of clock sample k0 (a window's first). */
static const double *row_of(const runner *r, size_t t, size_t k0)
{
    return r->eng.sig[t].data + (r->whole[t] ? k0 : 0) * r->eng.sig[t].width;
}

int rb_run_stream_window(runner *r, size_t k0, size_t k1)
{
    rb_out_streams_rows(r->res->streams, r->p, r->eng.sig, r->whole, r->res->clock.t, k0, k1);
    for (size_t m = 0; r->ms && m < r->p->n_metrics; m++) {
        if (!r->ms[m])
            continue;
        rb_ref_stream *rs = r->refs ? r->refs[m] : NULL;
        int rc = rs ? ref_stream_window(r, rs, k0, k1) : RB_OK;
        if (rc)
            return rb_err_prefix(r->err, rc, "%s: metrics[%zu]: ", r->label, m);
        rb_metrics_stream_add(r->ms[m], row_of(r, r->p->metrics[m].estimate_index, k0),
                              rs ? rs->rows : row_of(r, r->p->metrics[m].reference_index, k0), k0, k1);
    }
    return RB_OK;
}
