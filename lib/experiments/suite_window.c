/* A suite's log read in parts (compare --memory-limit, suite_run.c): its first time, a channel part by part, a
 * channel whole when the suite needs it so (within the limit, else said up front), and the reference resampled onto
 * a run's clock window by window with rb_resampler, the numbers of rb_resample bit for bit. */
#include <math.h>

#include "experiments_internal.h"

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

int rb_suite_channel_parts(rb_log_source *src, const rb_channel *ch, size_t part, rb_suite_part_fn fn, void *user,
                           rb_err *err)
{
    const rb_log *log = rb_log_source_log(src);
    size_t c = (size_t)(ch - log->channels), n = ch->n_elements ? ch->n_elements : 1;
    double *t = rb_malloc(part * sizeof *t), *x = rb_malloc(part * n * sizeof *x);
    int rc = t && x ? RB_OK : nomem(err);
    for (size_t k = 0; !rc && k < ch->n_samples; k += part) {
        size_t m = ch->n_samples - k < part ? ch->n_samples - k : part;
        if (!(rc = rb_log_source_read(src, c, k, m, t, x, err)))
            rc = fn(user, t, x, m, err);
    }
    rb_free(t);
    rb_free(x);
    return rc;
}

int rb_suite_channel_whole(rb_log_source *src, const rb_channel *ch, bool data, size_t limit, const char *label,
                           const char *why, rb_channel *copy, rb_err *err)
{
    const rb_log *log = rb_log_source_log(src);
    *copy = *ch;
    copy->time = copy->data = NULL;
    size_t T = ch->n_samples ? ch->n_samples : 1, n = ch->n_elements ? ch->n_elements : 1;
    double need = (double)T * (double)(data ? n + 1 : 1) * sizeof(double);
    if (need > (double)limit)
        return rb_err_set(err, RB_EINPUT,
                          "%s: %s needs channel %s whole: %.1f MiB, over the memory limit of %.1f MiB: raise the "
                          "limit",
                          label, why, ch->name, need / 1048576.0, (double)limit / 1048576.0);
    copy->time = rb_malloc(T * sizeof *copy->time);
    copy->data = data ? rb_malloc(T * n * sizeof *copy->data) : NULL;
    int rc = copy->time && (!data || copy->data) ? RB_OK : nomem(err);
    if (!rc)
        rc = rb_log_source_read(src, (size_t)(ch - log->channels), 0, ch->n_samples, copy->time, copy->data, err);
    if (rc)
        rb_suite_channel_free(copy);
    return rc;
}

void rb_suite_channel_free(rb_channel *copy)
{
    rb_free(copy->time);
    rb_free(copy->data);
    copy->time = copy->data = NULL;
}

int rb_suite_resample_parts(const char *path, size_t limit, const char *channel, const size_t *sel, size_t n_sel,
                            const rb_clock *clk, rb_interp interp, double *out, rb_err *err)
{
    rb_log_source *src = NULL;
    rb_resampler *rs = NULL;
    rb_channel_window cw = {0};
    size_t window = limit / 65536 > 4096 ? limit / 65536 : 4096; /* as a run's (rb_pipeline_run_windowed) */
    int rc = rb_log_source_open(path, limit, &src, err);
    const rb_log *log = rc ? NULL : rb_log_source_log(src);
    const rb_channel *ch = log ? rb_log_find(log, channel) : NULL;
    if (!rc && !ch)
        rc = rb_err_set(err, RB_ENOTFOUND, "%s: channel %s not found", path, channel);
    if (!rc)
        rc = rb_resampler_new(ch, sel, n_sel, interp, RB_NONFINITE_ERROR, &rs, err);
    for (size_t k = 0; !rc && k < clk->n; k += window) {
        size_t m = clk->n - k < window ? clk->n - k : window;
        rc = rb_channel_window_advance(src, (size_t)(ch - log->channels), &cw, rb_resampler_need(rs), clk->t[k + m - 1],
                                       window, err);
        if (!rc)
            rc = rb_resampler_run(rs, cw.time, cw.data, cw.first, cw.count, clk->t + k, m, out + k * n_sel, err);
    }
    rb_channel_window_free(&cw);
    rb_resampler_free(rs);
    rb_log_source_free(src);
    return rc;
}
