/* Writing a run's outputs and reports all or nothing (every log of a pipeline: batch.c). */
#include <stdio.h>
#include <string.h>

#include "pipeline_internal.h"

/* The log of output_log gives its samples back to the run's result before it is freed. */
static void output_log_free(rb_log *log)
{
    for (size_t c = 0; log && c < log->n_channels; c++)
        log->channels[c].time = log->channels[c].data = NULL;
    rb_log_free(log);
}

/* The recorded signals of one output as a log on the run's clock: their samples borrowed (not copied: a log longer
 * than memory holds them once), free with output_log_free. */
static int output_log(const rb_pipeline *p, const rb_run_result *res, const rb_config_output *o, rb_log **out,
                      rb_err *err)
{
    rb_log *log = NULL;
    int rc = rb_log_new(&log, err);
    for (size_t i = 0; !rc && i < o->n_signals; i++) {
        const rb_run_signal *s = rb_run_result_signal(res, o->signals[i]);
        size_t n = log->n_channels;
        if (!s)
            rc = rb_err_set(err, RB_EINVAL, "%s: signal %s was not recorded", o->path, o->signals[i]);
        else
            rc = rb_log_add_channel_copy(log, s->name, 0, s->width, NULL, NULL, (const char *const *)s->names,
                                         (const char *const *)s->units, err);
        if (log->n_channels > n) { /* added (its names may have failed): it borrows the samples either way */
            rb_channel *ch = &log->channels[log->n_channels - 1];
            rb_free(ch->time), rb_free(ch->data);
            ch->n_samples = res->clock.n;
            ch->time = res->clock.t, ch->data = s->data;
        }
    }
    if (!rc)
        rc = rb_pipeline_output_provenance(p, res, log, err);
    if (rc)
        output_log_free(log);
    else
        *out = log;
    return rc;
}

int rb_pipeline_write_files(const rb_pipeline *p, const rb_run_result *res, const rb_report *report, const char *dir,
                            bool overwrite, rb_err *err)
{
    size_t n_out = res ? p->n_outputs : 0, n_rep = report ? p->n_reports : 0, begun = 0;
    rb_outfile *files = rb_calloc(n_out + n_rep + 1, sizeof *files);
    int rc = files ? RB_OK : rb_err_set(err, RB_ENOMEM, "out of memory");
    rb_out_streams *st = res ? res->streams : NULL; /* begun and written already: closed, then committed */
    for (; !rc && begun < n_out + n_rep; begun++) { /* every target first: a clash fails before any writing */
        if (begun < n_out && rb_out_streams_has(st, begun))
            continue;
        const char *rel = begun < n_out ? p->outputs[begun].path : p->reports[begun - n_out].path;
        char *target = rb_path_in(dir, rel);
        rc = target ? rb_outfile_begin(&files[begun], target, overwrite, err)
                    : rb_err_set(err, RB_ENOMEM, "out of memory");
        rb_free(target);
        if (rc)
            break;
    }
    if (!rc)
        rc = rb_out_streams_close(st, err);
    for (size_t i = 0; !rc && i < n_out; i++) {
        if (rb_out_streams_has(st, i))
            continue;
        rb_log *log = NULL;
        rb_write_opts wo = {p->outputs[i].format, true, NULL};
        rc = output_log(p, res, &p->outputs[i], &log, err);
        if (!rc && (rc = rb_log_write_raw(log, files[i].tmp_path, &wo, err)) != RB_OK)
            rb_err_prefix(err, rc, "%s: ", files[i].path);
        output_log_free(log);
    }
    for (size_t i = 0; !rc && i < n_rep; i++) {
        rb_outfile *f = &files[n_out + i];
        if ((rc = rb_report_write(report, f->tmp_path, p->reports[i].format, true, err)) != RB_OK)
            rb_err_prefix(err, rc, "%s: ", f->path);
    }
    for (size_t i = 0; i < begun; i++) {
        /* Once every file is written, commit them all; a failing rename aborts the rest. */
        if (i < n_out && rb_out_streams_has(st, i)) {
            int c = rb_out_streams_commit(st, i, !rc, err);
            rc = rc ? rc : c;
        } else if (!rc)
            rc = rb_outfile_commit(&files[i], err);
        else
            rb_outfile_abort(&files[i]);
    }
    rb_free(files);
    return rc;
}

int rb_run_result_write(const rb_pipeline *p, const rb_run_result *res, const char *out_dir, bool overwrite,
                        rb_err *err)
{
    return rb_pipeline_write_files(p, res, res->report, out_dir, overwrite, err);
}
