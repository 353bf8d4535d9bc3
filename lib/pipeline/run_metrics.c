/* The runner's metrics (run.c): each metric's window, its reference, its statistics or confusion table into the
 * run's report; and what a run in windows handles window by window (stream_out.c): its CSV outputs and the
 * statistics of its metrics against a signal. */
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
    for (size_t m = 0; !rc && dir && m < p->n_metrics; m++) {
        const rb_config_metric *mt = &p->metrics[m];
        size_t w = r->eng.sig[mt->estimate_index].width;
        if (!rb_metric_streamed(p, m) || w != r->eng.sig[mt->reference_index].width) /* RB_EDIM: score says it */
            continue;
        double settle;
        long st;
        rb_metric_input in = {mt->estimate, mt->reference, NULL, NULL, r->res->clock.t, r->res->clock.n, w, 0, 0};
        metric_bounds(r, m, &in.t0, &in.t1, &settle, &st);
        rc = rb_metrics_stream_new(&in, &r->ms[m], r->err);
    }
    return rc;
}

/* Signal t's row of clock sample k0 (a window's first). */
static const double *row_of(const runner *r, size_t t, size_t k0)
{
    return r->eng.sig[t].data + (r->whole[t] ? k0 : 0) * r->eng.sig[t].width;
}

void rb_run_stream_window(runner *r, size_t k0, size_t k1)
{
    rb_out_streams_rows(r->res->streams, r->p, r->eng.sig, r->whole, r->res->clock.t, k0, k1);
    for (size_t m = 0; r->ms && m < r->p->n_metrics; m++)
        if (r->ms[m])
            rb_metrics_stream_add(r->ms[m], row_of(r, r->p->metrics[m].estimate_index, k0),
                                  row_of(r, r->p->metrics[m].reference_index, k0), k0, k1);
}
