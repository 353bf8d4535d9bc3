/* A run in windows writes its CSV, .h5 and MATLAB v7.3 outputs window by window (run.c, write.c): each begun as a
 * temporary next to its target when the stages are created, its header (CSV) or its layout with every dataset at
 * its full length (.h5, .mat v7.3: rb_h5_stream) then, its rows after each window, and committed with the run's
 * other files (rb_pipeline_write_files), so that a log's files still appear all together or not at all. The CSV
 * rows are rb_log_write's CSV bytes (rb_csv_stream); the .h5 and .mat values are rb_log_write's values. A signal
 * only such outputs record is then held one window at a time. A MATLAB v5/v7 output (RB_OUT_MAT5; a pipeline's .mat
 * outputs are v7.3) would be written at the end from signals kept for every sample: libmatio writes a v5 variable
 * whole (one deflated element, its length first), with no appending (its Mat_VarWriteAppend is for v7.3 files
 * only). The statistics of a metric (rb_metrics_stream) are accumulated window by window too (run_metrics.c), a
 * reference from another file (reference_log) read window by window for them; a confusion table still reads its
 * operands whole. */
#include <string.h>

#include "pipeline_internal.h"

struct rb_out_streams {
    size_t n;            /* p->n_outputs */
    rb_outfile *files;   /* per output; begun for a streamed one */
    rb_csv_stream **csv; /* per output: NULL when not streamed as CSV (or closed) */
    rb_h5_stream **h5;   /* per output: NULL when not streamed as .h5 or .mat v7.3 (or closed) */
    bool *begun;
    const double **rows; /* one per signal of the widest output: its rows of the current window */
};

bool rb_output_streamed(const rb_pipeline *p, size_t o) { return p->outputs[o].format != RB_OUT_MAT5; }

bool rb_metric_streamed(const rb_pipeline *p, size_t m) { return !p->metrics[m].confusion; }

void rb_out_streams_mark(const rb_pipeline *p, bool *only)
{
    for (size_t t = 0; t < p->n_signal_table; t++)
        only[t] = false;
    for (size_t o = 0; o < p->n_outputs; o++)
        for (size_t i = 0; rb_output_streamed(p, o) && i < p->outputs[o].n_signals; i++)
            only[p->outputs[o].signal_index[i]] = true;
    for (size_t m = 0; m < p->n_metrics; m++) /* a reference_log is read window by window (run_metrics.c) */
        if (rb_metric_streamed(p, m)) {
            only[p->metrics[m].estimate_index] = true;
            if (!p->metrics[m].reference_log.path)
                only[p->metrics[m].reference_index] = true;
        }
    for (size_t o = 0; o < p->n_outputs; o++) /* kept for every sample by another output or a metric */
        for (size_t i = 0; !rb_output_streamed(p, o) && i < p->outputs[o].n_signals; i++)
            only[p->outputs[o].signal_index[i]] = false;
    for (size_t m = 0; m < p->n_metrics; m++) {
        const rb_config_metric *mt = &p->metrics[m];
        if (rb_metric_streamed(p, m))
            continue;
        only[mt->estimate_index] = false;
        if (!mt->reference_log.path)
            only[mt->reference_index] = false;
        if (mt->where)
            only[mt->where_index] = false;
    }
}

void rb_out_streams_free(rb_out_streams *st)
{
    if (!st)
        return;
    for (size_t o = 0; o < st->n; o++) {
        rb_csv_stream_abort(st->csv[o]);
        rb_h5_stream_abort(st->h5[o]);
        if (st->begun[o])
            rb_outfile_abort(&st->files[o]);
    }
    rb_free(st->files);
    rb_free(st->csv);
    rb_free(st->h5);
    rb_free(st->begun);
    rb_free(st->rows);
    rb_free(st);
}

/* Output o's header: its signals as channels without samples (names and units from sig), the provenance. */
static int output_head(const rb_pipeline *p, const rb_run_result *res, const rb_config_output *o,
                       const rb_live_signal *sig, rb_log **out, rb_err *err)
{
    rb_log *log = NULL;
    int rc = rb_log_new(&log, err);
    for (size_t i = 0; !rc && i < o->n_signals; i++) {
        const rb_live_signal *s = &sig[o->signal_index[i]];
        rc = rb_log_add_channel_copy(log, o->signals[i], 0, s->width, NULL, NULL, (const char *const *)s->names,
                                     (const char *const *)s->units, err);
    }
    if (!rc)
        rc = rb_pipeline_output_provenance(p, res, log, err);
    if (rc)
        rb_log_free(log);
    else
        *out = log;
    return rc;
}

static int begin_one(rb_out_streams *st, const rb_pipeline *p, const rb_run_result *res, const rb_live_signal *sig,
                     size_t o, const char *dir, bool overwrite, rb_err *err)
{
    char *target = rb_path_in(dir, p->outputs[o].path);
    int rc =
        target ? rb_outfile_begin(&st->files[o], target, overwrite, err) : rb_err_set(err, RB_ENOMEM, "out of memory");
    rb_free(target);
    if (rc)
        return rc;
    st->begun[o] = true;
    rb_log *head = NULL;
    rc = output_head(p, res, &p->outputs[o], sig, &head, err);
    if (!rc && p->outputs[o].format == RB_OUT_CSV)
        rc = rb_csv_stream_open(head, st->files[o].tmp_path, st->files[o].path, &st->csv[o], err);
    else if (!rc)
        rc = rb_h5_stream_open(head, res->clock.n, p->outputs[o].format, NULL, st->files[o].tmp_path, st->files[o].path,
                               &st->h5[o], err);
    rb_log_free(head);
    return rc;
}

int rb_out_streams_begin(const rb_pipeline *p, const rb_run_result *res, const rb_live_signal *sig, const char *dir,
                         bool overwrite, rb_out_streams **out, rb_err *err)
{
    *out = NULL;
    size_t widest = 1, any = 0;
    for (size_t o = 0; o < p->n_outputs; o++)
        if (rb_output_streamed(p, o)) {
            any++;
            widest = p->outputs[o].n_signals > widest ? p->outputs[o].n_signals : widest;
        }
    if (!any)
        return RB_OK;
    rb_out_streams *st = rb_calloc(1, sizeof *st);
    if (st) {
        st->n = p->n_outputs;
        st->files = rb_calloc(st->n, sizeof *st->files);
        st->csv = rb_calloc(st->n, sizeof *st->csv);
        st->h5 = rb_calloc(st->n, sizeof *st->h5);
        st->begun = rb_calloc(st->n, sizeof *st->begun);
        st->rows = rb_calloc(widest, sizeof *st->rows);
    }
    int rc = st && st->files && st->csv && st->h5 && st->begun && st->rows
                 ? RB_OK
                 : rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t o = 0; !rc && o < p->n_outputs; o++)
        if (rb_output_streamed(p, o))
            rc = begin_one(st, p, res, sig, o, dir, overwrite, err);
    if (rc) {
        rb_out_streams_free(st);
        return rc;
    }
    *out = st;
    return RB_OK;
}

void rb_out_streams_rows(rb_out_streams *st, const rb_pipeline *p, const rb_live_signal *sig, const bool *whole,
                         const double *time, size_t k0, size_t k1)
{
    for (size_t o = 0; st && o < st->n; o++) {
        if (!st->csv[o] && !st->h5[o])
            continue;
        const rb_config_output *out = &p->outputs[o];
        for (size_t i = 0; i < out->n_signals; i++) {
            size_t t = out->signal_index[i];
            st->rows[i] = sig[t].data + (whole[t] ? k0 : 0) * sig[t].width;
        }
        if (st->csv[o])
            rb_csv_stream_rows(st->csv[o], time + k0, st->rows, k1 - k0);
        else
            rb_h5_stream_rows(st->h5[o], time + k0, st->rows, k1 - k0);
    }
}

bool rb_out_streams_has(const rb_out_streams *st, size_t o) { return st && o < st->n && st->begun[o]; }

int rb_out_streams_close(rb_out_streams *st, rb_err *err)
{
    int rc = RB_OK;
    for (size_t o = 0; st && o < st->n; o++) {
        if (rc) { /* the first failure is the message */
            rb_csv_stream_abort(st->csv[o]);
            rb_h5_stream_abort(st->h5[o]);
        } else {
            rc = st->h5[o] ? rb_h5_stream_close(st->h5[o], err) : rb_csv_stream_close(st->csv[o], err);
        }
        st->csv[o] = NULL;
        st->h5[o] = NULL;
    }
    return rc;
}

int rb_out_streams_commit(rb_out_streams *st, size_t o, bool ok, rb_err *err)
{
    if (!rb_out_streams_has(st, o))
        return RB_OK;
    st->begun[o] = false;
    if (ok)
        return rb_outfile_commit(&st->files[o], err);
    rb_outfile_abort(&st->files[o]);
    return RB_OK;
}
