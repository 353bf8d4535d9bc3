/* The bindings of a log read in windows (run.c with a rb_log_source): each binding's channels resampled onto the
 * clock window by window from parts of the file, with rb_resample's numbers bit for bit. A binding the signal table
 * keeps (an output or a metric operand) is filled row k0 on; the others hold one window from row 0
 * (rb_engine_set_window). Everything is allocated at set-up. */
#include <math.h>
#include <string.h>

#include "pipeline_internal.h"

typedef struct feed_part {
    rb_resampler *rs;
    size_t channel; /* in the source's log */
    size_t width;   /* values per clock sample */
} feed_part;

struct rb_feeder {
    rb_log_source *src;
    const rb_pipeline *p;
    size_t window, part;
    size_t *part_off;         /* per binding: its first part; [n_signals]: total */
    feed_part *parts;         /* per binding, per channel (none for an absent optional binding) */
    rb_channel_window *chans; /* per source channel (those bound only are read) */
    size_t *keep;             /* per source channel: the earliest sample a resampler needs */
    bool *used;               /* per source channel */
    double *block;            /* one channel of a several-channel binding, window x width */
};

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

void rb_feeder_free(rb_feeder *f)
{
    if (!f)
        return;
    for (size_t i = 0; f->parts && i < f->part_off[f->p->n_signals]; i++)
        rb_resampler_free(f->parts[i].rs);
    for (size_t c = 0; f->chans && c < rb_log_source_log(f->src)->n_channels; c++)
        rb_channel_window_free(&f->chans[c]);
    rb_free(f->parts);
    rb_free(f->part_off);
    rb_free(f->chans);
    rb_free(f->keep);
    rb_free(f->used);
    rb_free(f->block);
    rb_free(f);
}

int rb_feeder_new(const rb_feed_setup *in, rb_feeder **out, rb_err *err)
{
    const rb_pipeline *p = in->p;
    const rb_log *log = rb_log_source_log(in->src);
    rb_feeder *f = rb_calloc(1, sizeof *f);
    if (!f)
        return nomem(err);
    f->src = in->src;
    f->p = p;
    f->window = in->window;
    f->part = in->part;
    size_t total = in->bound_off[p->n_signals], widest = 1, nc = log->n_channels ? log->n_channels : 1;
    f->part_off = rb_calloc(p->n_signals + 1, sizeof *f->part_off);
    f->parts = rb_calloc(total ? total : 1, sizeof *f->parts);
    f->chans = rb_calloc(nc, sizeof *f->chans);
    f->keep = rb_calloc(nc, sizeof *f->keep);
    f->used = rb_calloc(nc, sizeof *f->used);
    int rc = f->part_off && f->parts && f->chans && f->keep && f->used ? RB_OK : nomem(err);
    size_t n = 0;
    for (size_t i = 0; !rc && i < p->n_signals; i++) {
        const rb_config_signal *s = &p->signals[i];
        f->part_off[i] = n;
        for (size_t c = 0; !rc && c < s->n_channels && in->bound[in->bound_off[i]]; c++) {
            const rb_channel *ch = in->bound[in->bound_off[i] + c];
            bool one = s->n_channels == 1;
            feed_part *fp = &f->parts[n++];
            fp->channel = (size_t)(ch - log->channels);
            fp->width = one && s->n_select ? s->n_select : ch->n_elements;
            f->used[fp->channel] = true;
            widest = s->n_channels > 1 && ch->n_elements > widest ? ch->n_elements : widest;
            rc = rb_resampler_new(ch, one ? in->select[i] : NULL, one ? s->n_select : 0, s->interp, s->nonfinite,
                                  &fp->rs, err);
        }
    }
    f->part_off[p->n_signals] = n;
    if (!rc && !(f->block = rb_malloc(f->window * widest * sizeof *f->block)))
        rc = nomem(err);
    if (rc) {
        rb_feeder_free(f);
        return rc;
    }
    *out = f;
    return RB_OK;
}

/* Every bound channel read until it holds the samples around clock times t[0..n). */
static int advance(rb_feeder *f, const double *t, size_t n, rb_err *err)
{
    const rb_log *log = rb_log_source_log(f->src);
    for (size_t c = 0; c < log->n_channels; c++)
        f->keep[c] = SIZE_MAX;
    for (size_t i = 0; i < f->part_off[f->p->n_signals]; i++) {
        size_t need = rb_resampler_need(f->parts[i].rs), c = f->parts[i].channel;
        f->keep[c] = need < f->keep[c] ? need : f->keep[c];
    }
    for (size_t c = 0; c < log->n_channels; c++) {
        if (!f->used[c])
            continue;
        int rc = rb_channel_window_advance(f->src, c, &f->chans[c], f->keep[c], t[n - 1], f->part, err);
        if (rc)
            return rc;
    }
    return RB_OK;
}

int rb_feeder_fill(rb_feeder *f, const double *clock_t, size_t k0, size_t k1, rb_live_signal *sig, const bool *whole,
                   size_t *failed, rb_err *err)
{
    const rb_pipeline *p = f->p;
    const double *t = clock_t + k0;
    size_t n = k1 - k0;
    *failed = SIZE_MAX;
    int rc = n ? advance(f, t, n, err) : RB_OK;
    if (rc || n == 0)
        return rc;
    for (size_t i = 0; i < p->n_signals; i++) {
        rb_live_signal *ls = &sig[i];
        double *dst = ls->data + (whole[i] ? k0 * ls->width : 0);
        size_t n_parts = f->part_off[i + 1] - f->part_off[i], col = 0;
        for (size_t c = 0; c < n_parts; c++) {
            feed_part *fp = &f->parts[f->part_off[i] + c];
            const rb_channel_window *cw = &f->chans[fp->channel];
            double *out = n_parts > 1 ? f->block : dst;
            if ((rc = rb_resampler_run(fp->rs, cw->time, cw->data, cw->first, cw->count, t, n, out, err))) {
                *failed = i;
                return rc;
            }
            for (size_t k = 0; n_parts > 1 && k < n; k++) /* a several-channel binding: this channel's columns */
                memcpy(dst + k * ls->width + col, f->block + k * fp->width, fp->width * sizeof *dst);
            col += fp->width;
        }
        if (p->signals[i].scale != 1)
            for (size_t k = 0; k < n * ls->width; k++)
                dst[k] *= p->signals[i].scale;
    }
    return RB_OK;
}

size_t rb_feeder_held(const rb_feeder *f, size_t binding)
{
    size_t held = 0;
    for (size_t i = f->part_off[binding]; i < f->part_off[binding + 1]; i++)
        held += rb_resampler_held(f->parts[i].rs);
    return held;
}

static double mib(double bytes) { return bytes / 1048576.0; }

int rb_feed_check_memory(const rb_pipeline *p, const rb_live_signal *sig, const bool *whole,
                         const rb_channel *const *bound, size_t n_bound, size_t T, size_t limit, const char *label,
                         rb_err *err)
{
    double kept = (double)T * sizeof(double), largest = 0, channel = 0;
    const char *what = "the clock", *ch_name = NULL;
    for (size_t t = 0; t < p->n_signal_table; t++) {
        double b = p->signal_table[t].recorded && whole[t] ? (double)T * (double)sig[t].width * sizeof(double) : 0;
        kept += b;
        if (b > largest)
            largest = b, what = p->signal_table[t].name;
    }
    for (size_t i = 0; i < n_bound; i++) {
        const rb_channel *ch = bound[i];
        double b = ch ? (double)ch->n_samples * 2 * sizeof(double) : 0; /* the check: time and its intervals */
        if (b > channel)
            channel = b, ch_name = ch->name;
    }
    if (kept + channel <= (double)limit)
        return RB_OK;
    if (channel > kept)
        return rb_err_set(err, RB_EINPUT,
                          "%s: channel %s needs %.1f MiB whole (its timestamps are checked: their median interval), "
                          "over the memory limit of %.1f MiB with the %.1f MiB kept for every sample: raise the limit",
                          label, ch_name, mib(channel), mib((double)limit), mib(kept));
    if (!ch_name) /* no bound channel: nothing else is held */
        return rb_err_set(err, RB_EINPUT,
                          "%s: the run keeps every one of its %zu samples of the clock, the outputs and the metric "
                          "operands: %.1f MiB (the largest: signal %s, %.1f MiB), over the memory limit of %.1f MiB",
                          label, T, mib(kept), what, mib(largest), mib((double)limit));
    return rb_err_set(err, RB_EINPUT,
                      "%s: the run keeps every one of its %zu samples of the clock, the outputs and the metric "
                      "operands: %.1f MiB (the largest: signal %s, %.1f MiB), %.1f MiB in all while channel %s's "
                      "timestamps are checked, over the memory limit of %.1f MiB",
                      label, T, mib(kept), what, mib(largest), mib(kept + channel), ch_name, mib((double)limit));
}
