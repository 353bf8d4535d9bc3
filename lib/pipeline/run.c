/* The runner: align a log's channels on one clock, step the stages (engine.c), record, score. Everything
 * that can allocate or look things up by name happens at set-up; the per-sample loop is the engine's. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "run_internal.h"

/* Items joined by sep into a new string (NULL when out of memory). */
static char *join(const char *const *items, size_t n, const char *sep, const char *(*map)(const char *))
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(map ? map(items[i]) : items[i]) + (i ? strlen(sep) : 0);
    char *s = rb_malloc(len);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i)
            strcat(s, sep);
        strcat(s, map ? map(items[i]) : items[i]);
    }
    return s;
}

static void key_path(char *buf, size_t size, const char *section, const char *name, const char *key, long index)
{
    rb_json_step path[4] = {{section, 0}, {name, 0}, {key, 0}, {NULL, index < 0 ? 0 : (size_t)index}};
    rb_json_path_format(path, index < 0 ? 3 : 4, buf, size);
}

/* ---- provenance and names ------------------------------------------------------------------------- */
static int describe_input(runner *r)
{
    rb_run_result *res = r->res;
    const char *const *paths = r->paths;
    size_t n_paths = r->n_paths;
    r->label = n_paths ? join(paths, n_paths, " + ", NULL) : rb_strdup("memory");
    r->eng.label = r->label;
    res->input = n_paths ? join(paths, n_paths, ",", rb_path_basename) : rb_strdup("memory");
    if (!r->label || !res->input)
        return rb_err_set(r->err, RB_ENOMEM, "out of memory");
    char(*hex)[65] = rb_calloc(n_paths ? n_paths : 1, sizeof *hex);
    const char **parts = rb_calloc(n_paths ? n_paths : 1, sizeof *parts);
    int rc = hex && parts ? RB_OK : rb_run_nomem(r);
    for (size_t i = 0; !rc && i < n_paths; i++) {
        rc = rb_sha256_file(paths[i], hex[i], r->err);
        parts[i] = hex[i];
    }
    if (!rc && !(res->input_sha256 = join(parts, n_paths, ",", NULL)))
        rc = rb_run_nomem(r);
    size_t stem_len;
    const char *stem = rb_path_stem(n_paths ? paths[0] : "memory", &stem_len);
    if (!rc && !(res->run_name = rb_asprintf("%s/%.*s", r->p->name, (int)stem_len, stem)))
        rc = rb_run_nomem(r);
    rb_free(hex);
    rb_free(parts);
    return rc;
}

/* ---- bindings: channels and elements ---------------------------------------------------------------- */
static int select_elements(runner *r, size_t i, const rb_channel *ch)
{
    const rb_config_signal *s = &r->p->signals[i];
    rb_live_signal *ls = &r->eng.sig[i];
    char where[256];
    ls->width = s->n_select ? s->n_select : ch->n_elements;
    if (s->n_select && !(r->select[i] = rb_malloc(s->n_select * sizeof(size_t))))
        return rb_run_nomem(r);
    for (size_t e = 0; e < s->n_select; e++) {
        key_path(where, sizeof where, "signals", s->name, "elements", (long)e);
        if (s->select_names) {
            long idx = rb_channel_element_index(ch, s->select_names[e]);
            if (idx < 0)
                return rb_err_set(r->err, RB_ENOTFOUND, "%s: channel %s has no element '%s' (%s)", r->label, ch->name,
                                  s->select_names[e], where);
            r->select[i][e] = (size_t)idx;
        } else if (s->select_indices[e] >= ch->n_elements) {
            return rb_err_set(r->err, RB_EINPUT, "%s: channel %s has %zu elements: index %zu is out of range (%s)",
                              r->label, ch->name, ch->n_elements, s->select_indices[e], where);
        } else {
            r->select[i][e] = s->select_indices[e];
        }
    }
    return RB_OK;
}

/* A binding of several channels: their elements one after the other, every element of each. */
static int concat_channels(runner *r, size_t i)
{
    const rb_channel *const *parts = r->bound + r->bound_off[i];
    size_t n_parts = r->p->signals[i].n_channels, width = 0;
    rb_live_signal *ls = &r->eng.sig[i];
    for (size_t c = 0; c < n_parts; c++)
        width += parts[c]->n_elements;
    ls->width = width;
    ls->names = rb_calloc(width ? width : 1, sizeof *ls->names);
    ls->units = rb_calloc(width ? width : 1, sizeof *ls->units);
    if (!ls->names || !ls->units)
        return rb_run_nomem(r);
    for (size_t c = 0, e = 0; c < n_parts; c++) {
        size_t w = parts[c]->n_elements;
        char **names = rb_pipeline_copy_strings((const char *const *)parts[c]->element_names, NULL, w, true);
        char **units = rb_pipeline_copy_strings((const char *const *)parts[c]->units, NULL, w, false);
        if (names && units) { /* the strings move into the signal's arrays */
            memcpy(ls->names + e, names, w * sizeof *names);
            memcpy(ls->units + e, units, w * sizeof *units);
            e += w;
            rb_free(names);
            rb_free(units);
        } else {
            rb_strings_free(names, names ? w : 0);
            rb_strings_free(units, units ? w : 0);
            return rb_run_nomem(r);
        }
    }
    return RB_OK;
}

/* The config's names and unit for binding i, from its channels (binding.c). */
static int relabel(runner *r, size_t i)
{
    const rb_config_signal *s = &r->p->signals[i];
    rb_bound_channel *ch = rb_calloc(s->n_channels, sizeof *ch);
    if (!ch)
        return rb_run_nomem(r);
    for (size_t c = 0; c < s->n_channels; c++) {
        const rb_channel *bc = r->bound[r->bound_off[i] + c];
        ch[c] = (rb_bound_channel){bc->name, bc->n_elements, (const char *const *)bc->element_names};
    }
    int rc = rb_binding_relabel(s, &r->eng.sig[i], ch, s->n_channels, r->label, r->err);
    rb_free(ch);
    return rc;
}

/* An optional binding whose channels the log lacks, all of them: 0 wide (a stage input wired to it sees none),
 * said in the warnings. Some of them present is an error naming the first missing one. */
static int bind_absent(runner *r, size_t i, size_t n_found, size_t missing)
{
    const rb_config_signal *s = &r->p->signals[i];
    rb_live_signal *ls = &r->eng.sig[i];
    char where[256];
    key_path(where, sizeof where, "signals", s->name, "channel", s->n_channels > 1 ? (long)missing : -1);
    if (!s->optional)
        return rb_err_set(r->err, RB_ENOTFOUND, "%s: channel %s not found (%s)", r->label, s->channels[missing], where);
    if (n_found)
        return rb_err_set(r->err, RB_ENOTFOUND,
                          "%s: channel %s not found (%s) while the binding's other channels are there (an optional "
                          "binding is all of its channels or none)",
                          r->label, s->channels[missing], where);
    ls->width = 0;
    ls->names = rb_calloc(1, sizeof *ls->names);
    ls->units = rb_calloc(1, sizeof *ls->units);
    if (!ls->names || !ls->units)
        return rb_run_nomem(r);
    return rb_run_warn(r, "optional signal %s: the log has no channel %s%s: bound 0 wide", s->name, s->channel,
                       s->n_channels > 1 ? " (nor the binding's others)" : "");
}

static int bind_channels(runner *r)
{
    for (size_t i = 0; i < r->p->n_signals; i++) {
        const rb_config_signal *s = &r->p->signals[i];
        size_t n_found = 0, missing = SIZE_MAX;
        for (size_t c = 0; c < s->n_channels; c++) {
            const rb_channel *ch = rb_log_find(r->log, s->channels[c]);
            if (ch)
                n_found++;
            else if (missing == SIZE_MAX)
                missing = c;
            r->bound[r->bound_off[i] + c] = ch;
        }
        int rc = RB_OK;
        if (missing != SIZE_MAX) {
            if ((rc = bind_absent(r, i, n_found, missing)))
                return rc;
            continue;
        }
        if (s->n_channels > 1) {
            rc = concat_channels(r, i);
        } else {
            const rb_channel *ch = r->bound[r->bound_off[i]];
            rb_live_signal *ls = &r->eng.sig[i];
            if (!(rc = select_elements(r, i, ch))) {
                ls->names =
                    rb_pipeline_copy_strings((const char *const *)ch->element_names, r->select[i], ls->width, true);
                ls->units = rb_pipeline_copy_strings((const char *const *)ch->units, r->select[i], ls->width, false);
                if (!ls->names || !ls->units)
                    rc = rb_run_nomem(r);
            }
        }
        if (!rc)
            rc = relabel(r, i);
        if (rc)
            return rc;
    }
    return RB_OK;
}

/* ---- timestamps and the clock ------------------------------------------------------------------------ */
typedef struct span {
    double lo, hi;   /* the time span every checked channel covers */
    double clock_dt; /* the clock channel's period: 1 / its rate from the span (rb_time_report.rate) */
} span;

static int check_channel(runner *r, const rb_channel *ch, span *sp, double *period)
{
    rb_time_report rep;
    rb_channel copy; /* a log read in windows: its timestamps, for now (window.c) */
    int rc = rb_log_source_load(r->src, ch, false, &copy, r->err);
    if (!rc)
        rc = rb_channel_check_time(&copy, r->p->gap_factor, &rep, r->err);
    rb_log_source_unload(ch, &copy);
    if (rc)
        return rb_err_prefix(r->err, rc, "%s: ", r->label);
    if (ch->n_samples == 0)
        return rb_err_set(r->err, RB_EINPUT, "%s: channel %s has no samples", r->label, ch->name);
    if (rep.t_first > sp->lo)
        sp->lo = rep.t_first;
    if (rep.t_last < sp->hi)
        sp->hi = rep.t_last;
    if (period) /* not the median interval: with epoch timestamps each interval is off by up to 2.4e-7 s */
        *period = 1.0 / rep.rate;
    char hint[96];
    if (rb_time_units_hint(&rep, hint, sizeof hint) &&
        (rc =
             rb_run_warn(r,
                         "channel %s: median sample interval %g s, last timestamp %g: %s (every rate and derivative is "
                         "off by that factor)",
                         ch->name, rep.median_dt, rep.t_last, hint)))
        return rc;
    if (rep.n_gaps)
        return rb_run_warn(
            r,
            "channel %s: %zu gap%s longer than %g x the median interval %g s (longest %g s, first before "
            "sample %zu)",
            ch->name, rep.n_gaps, rep.n_gaps > 1 ? "s" : "", r->p->gap_factor, rep.median_dt, rep.max_gap,
            rep.first_gap);
    return RB_OK;
}

/* Every bound channel (each once) and the clock channel. */
static int check_times(runner *r, span *sp, const rb_channel **clock_ch)
{
    sp->lo = -INFINITY;
    sp->hi = INFINITY;
    sp->clock_dt = NAN;
    *clock_ch = NULL;
    if (r->p->clock_channel && !(*clock_ch = rb_log_find(r->log, r->p->clock_channel)))
        return rb_err_set(r->err, RB_ENOTFOUND, "%s: channel %s not found (clock.channel)", r->label,
                          r->p->clock_channel);
    for (size_t i = 0; i < r->bound_off[r->p->n_signals]; i++) {
        bool seen = !r->bound[i] || r->bound[i] == *clock_ch; /* NULL: an absent optional binding */
        for (size_t k = 0; k < i && !seen; k++)
            seen = r->bound[k] == r->bound[i];
        int rc = seen ? RB_OK : check_channel(r, r->bound[i], sp, NULL);
        if (rc)
            return rc;
    }
    return *clock_ch ? check_channel(r, *clock_ch, sp, &sp->clock_dt) : RB_OK;
}

static int make_clock(runner *r)
{
    const rb_pipeline *p = r->p;
    const rb_channel *clock_ch;
    span sp;
    int rc = check_times(r, &sp, &clock_ch);
    if (rc)
        return rc;
    double w0, w1;
    if (r->src && (rc = rb_log_source_start(r->src, &r->t_start, r->err)))
        return rc;
    if (!r->src)
        r->t_start = rb_log_start(r->log);
    rb_window_resolve(&p->window, r->t_start, &w0, &w1);
    double lo = fmax(sp.lo, w0), hi = fmin(sp.hi, w1);
    if (!isfinite(sp.lo) && !isfinite(sp.hi)) /* every binding optional and absent, no clock channel */
        return rb_err_set(r->err, RB_ENOTFOUND, "%s: the log has none of the bound channels (all optional: %s, ...)",
                          r->label, p->signals[0].channel);
    if (!(hi >= lo)) {
        if (p->has_window)
            return rb_err_set(r->err, RB_EINPUT,
                              "%s: the bound channels share no time inside the window [%.17g, %.17g] s%s "
                              "(common span [%.17g, %.17g] s)",
                              r->label, w0, w1, p->window.from_start ? " (window.from_start)" : "", sp.lo, sp.hi);
        return rb_err_set(r->err, RB_EINPUT,
                          "%s: the bound channels share no time span (latest start %.17g s, earliest end %.17g s)",
                          r->label, sp.lo, sp.hi);
    }
    if (clock_ch) {
        rb_channel copy;
        if (!(rc = rb_log_source_load(r->src, clock_ch, false, &copy, r->err)))
            rc = rb_clock_from_channel(&r->res->clock, &copy, lo, hi, r->err);
        rb_log_source_unload(clock_ch, &copy);
        r->dt = sp.clock_dt;
    } else {
        r->dt = 1.0 / p->clock_rate;
        rc = rb_clock_uniform(&r->res->clock, lo, hi, p->clock_rate, r->err);
        rb_clock *c = &r->res->clock;
        /* t0 + k / rate may round a hair past hi, outside a channel's span: pin the last tick to hi. */
        if (!rc && c->n && c->t[c->n - 1] > hi) {
            if (c->n > 1 && !(hi > c->t[c->n - 2]))
                c->n--;
            else
                c->t[c->n - 1] = hi;
        }
    }
    return rc ? rb_err_prefix(r->err, rc, "%s: ", r->label) : RB_OK;
}

/* A binding of several channels: each resampled into a scratch block, then placed in its columns. */
static int resample_concat(runner *r, size_t i, size_t *held)
{
    const rb_config_signal *s = &r->p->signals[i];
    rb_live_signal *ls = &r->eng.sig[i];
    size_t T = r->res->clock.n, col = 0;
    double *block = rb_malloc((T ? T : 1) * ls->width * sizeof *block); /* T x width fits: ls->data does */
    if (!block)
        return rb_run_nomem(r);
    int rc = RB_OK;
    for (size_t c = 0; !rc && c < s->n_channels; c++) {
        const rb_channel *ch = r->bound[r->bound_off[i] + c];
        size_t w = ch->n_elements, part_held = 0;
        rc = rb_resample(ch, NULL, 0, &r->res->clock, s->interp, s->nonfinite, block, &part_held, r->err);
        for (size_t k = 0; !rc && k < T; k++)
            memcpy(ls->data + k * ls->width + col, block + k * w, w * sizeof *block);
        *held += part_held;
        col += w;
    }
    rb_free(block);
    return rc;
}

/* Binding i's held values: in the result and, when any, in the warnings. */
static int note_held(runner *r, size_t i, size_t held)
{
    const rb_config_signal *s = &r->p->signals[i];
    r->res->n_held[i] = held;
    return held ? rb_run_warn(r, "signal %s: %zu non-finite value%s of channel %s held at the last finite value",
                              s->name, held, held > 1 ? "s" : "", s->channel)
                : RB_OK;
}

/* An error resampling binding i, prefixed with the log and the binding's key. */
static int binding_failed(runner *r, int rc, size_t i)
{
    char where[256];
    rb_json_step path[2] = {{"signals", 0}, {r->p->signals[i].name, 0}};
    rb_json_path_format(path, 2, where, sizeof where);
    return rb_err_prefix(r->err, rc, "%s: %s: ", r->label, where);
}

/* Each binding is resampled once onto the whole clock. */
static int resample_bindings(runner *r)
{
    size_t T = r->res->clock.n;
    for (size_t i = 0; i < r->p->n_signals; i++) {
        const rb_config_signal *s = &r->p->signals[i];
        rb_live_signal *ls = &r->eng.sig[i];
        size_t count, bytes, rows = r->src && !r->whole[i] && r->window < T ? r->window : T;
        if (!rb_size_mul(rows, ls->width, &count) || !rb_size_mul(count, sizeof(double), &bytes))
            return rb_err_set(r->err, RB_ENOMEM, "%s: signal %s: %zu x %zu samples is too large", r->label, s->name, T,
                              ls->width);
        if (!(ls->data = rb_malloc(bytes ? bytes : 1)))
            return rb_run_nomem(r);
        ls->stride = ls->width;
        size_t held = 0;
        if (!r->bound[r->bound_off[i]] || r->src) /* absent optional binding: 0 wide; windows: run_loop */
            continue;
        int rc = s->n_channels > 1 ? resample_concat(r, i, &held)
                                   : rb_resample(r->bound[r->bound_off[i]], r->select[i], s->n_select, &r->res->clock,
                                                 s->interp, s->nonfinite, ls->data, &held, r->err);
        if (rc)
            return binding_failed(r, rc, i);
        if (s->scale != 1)
            for (size_t k = 0; k < T * ls->width; k++)
                ls->data[k] *= s->scale;
        if ((rc = note_held(r, i, held)))
            return rc;
    }
    rb_feed_setup fs = {
        r->src, r->p, r->bound, r->bound_off, r->select, r->window, r->window > 4096 ? r->window : 4096};
    return r->src ? rb_feeder_new(&fs, &r->feed, r->err) : RB_OK; /* windows: run_loop resamples */
}

/* ---- stages ------------------------------------------------------------------------------------------- */
static int create_stages(runner *r)
{
    size_t failed;
    int rc = rb_engine_create(&r->eng, r->dt, r->res->clock.n, r->res->clock.t, r->res->clock.n, &failed);
    if (rc && failed != SIZE_MAX) {
        const rb_config_stage *st = &r->p->stages[failed];
        rb_err_prefix(r->err, rc, "%s: stage %s (%s): ", r->label, st->id, st->type->name);
    }
    if (!rc && r->src && r->opts && r->opts->memory_limit) /* what the run keeps whole, said before it runs */
        rc = rb_feed_check_memory(r->p, r->eng.sig, r->whole, r->bound, r->bound_off[r->p->n_signals], r->res->clock.n,
                                  r->opts->memory_limit, r->label, r->err);
    return rc;
}

static int cancelled(runner *r, int code)
{
    int rc = code < 0 && code >= RB_EINVAL ? code : RB_EINVAL;
    return rb_err_set(r->err, rc, "%s: run cancelled by the caller", r->label);
}

static int step_failed(runner *r, int rc, size_t s, size_t k)
{
    const rb_config_stage *st = &r->p->stages[s];
    if (r->err && r->err->code == RB_OK)
        rc = rb_err_set(r->err, RB_ENUMERIC, "step failed without a message");
    return rb_err_prefix(r->err, rc, "%s: stage %s (%s): sample %zu (t = %.17g s): ", r->label, st->id, st->type->name,
                         k, r->res->clock.t[k]);
}

/* Steps samples [k0, k1). */
static int run_samples(runner *r, size_t k0, size_t k1)
{
    size_t k, s;
    int rc = rb_engine_steps(&r->eng, k0, k1, r->res->clock.t, &k, &s);
    return rc != RB_OK ? step_failed(r, rc, s, k) : RB_OK;
}

/* A log read in windows: the bindings of samples [k0, k1) first (window.c). */
static int fill_window(runner *r, size_t k0, size_t k1)
{
    size_t failed;
    int rc = rb_feeder_fill(r->feed, r->res->clock.t, k0, k1, r->eng.sig, r->whole, &failed, r->err);
    if (rc)
        return failed != SIZE_MAX ? binding_failed(r, rc, failed) : rb_err_prefix(r->err, rc, "%s: ", r->label);
    rb_engine_set_window(&r->eng, r->whole, k0);
    return RB_OK;
}

/* The held values of a log read in windows, said as resample_bindings says them. */
static int held_warnings(runner *r)
{
    int rc = RB_OK;
    for (size_t i = 0; !rc && r->feed && i < r->p->n_signals; i++)
        rc = note_held(r, i, rb_feeder_held(r->feed, i));
    return rc;
}

static int run_loop(runner *r)
{
    size_t T = r->res->clock.n, chunk = r->src ? r->window : T / 100 > 4096 ? T / 100 : 4096; /* windows: one */
    for (size_t k0 = 0; k0 < T;) {
        size_t k1 = T - k0 > chunk ? k0 + chunk : T;
        int rc = r->src ? fill_window(r, k0, k1) : RB_OK;
        if (!rc)
            rc = run_samples(r, k0, k1);
        if (rc)
            return rc;
        if ((rc = rb_run_stream_window(r, k0, k1)))
            return rc;
        k0 = k1;
        if (r->opts && r->opts->progress && (rc = r->opts->progress(r->opts->user, k0, T)) != 0)
            return cancelled(r, rc);
    }
    size_t s;
    int rc = held_warnings(r);
    if (rc || (rc = rb_engine_finish(&r->eng, &s)) == RB_OK)
        goto notes;
    if (rc != RB_OK) {
        const rb_config_stage *st = &r->p->stages[s];
        return rb_err_prefix(r->err, rc, "%s: stage %s (%s): finish: ", r->label, st->id, st->type->name);
    }
notes:
    for (s = 0; !rc && s < r->p->n_stages; s++) { /* the stages' notes join the warnings */
        const rb_config_stage *st = &r->p->stages[s];
        const char *const *lines = NULL;
        size_t n = st->type->notes && r->eng.state[s] ? st->type->notes(r->eng.state[s], &lines) : 0;
        for (size_t i = 0; i < n; i++)
            if ((rc = rb_run_warn(r, "stage %s: %s", st->id, lines[i])))
                return rc;
    }
    return rc;
}

/* ---- the sensor-fault monitor (faults.c) ------------------------------------------------------------------ */
static int watch_faults(runner *r)
{
    const rb_pipeline *p = r->p;
    return p->faults_enabled && p->faults.k_sigma > 0
               ? rb_engine_watch_innovations(&r->eng, p->faults.k_sigma,
                                             (r->res->clock.n ? r->res->clock.t[0] : 0) + p->faults.settle)
               : RB_OK;
}

/* The tallies into the result and the report's faults section (no warnings: those are the log's gaps and
 * held samples; a caller reads res->faults). */
static int report_faults(runner *r)
{
    if (!r->p->faults_enabled)
        return RB_OK;
    rb_fault_run in = {.p = r->p, .eng = &r->eng, .bound = r->bound, .bound_off = r->bound_off};
    in.select = (const size_t *const *)r->select, in.clock = &r->res->clock;
    in.src = r->src, in.part = r->window > 4096 ? r->window : 4096;
    return rb_pipeline_report_faults(&in, r->res, r->err);
}

/* The run's warnings (the log's gaps and held samples, the stages' findings) close the report too: a CI job that
 * keeps only the report still sees them. */
static int report_warnings(runner *r)
{
    int rc = RB_OK;
    for (size_t k = 0; !rc && r->res->report && k < r->res->n_warnings; k++)
        rc = rb_report_add_warning(r->res->report, r->res->warnings[k], r->err);
    return rc;
}

/* ---- result --------------------------------------------------------------------------------------------- */
/* Recorded signals move from the runner into the result. */
static int collect(runner *r)
{
    const rb_pipeline *p = r->p;
    size_t n = 0;
    for (size_t t = 0; t < p->n_signal_table; t++)
        n += p->signal_table[t].recorded;
    r->res->recorded = rb_calloc(n ? n : 1, sizeof *r->res->recorded);
    if (!r->res->recorded)
        return rb_run_nomem(r);
    for (size_t t = 0; t < p->n_signal_table; t++) {
        if (!p->signal_table[t].recorded || r->only[t]) /* written window by window */
            continue;
        rb_live_signal *ls = &r->eng.sig[t];
        rb_run_signal *out = &r->res->recorded[r->res->n_recorded];
        if (!(out->name = rb_strdup(p->signal_table[t].name)))
            return rb_run_nomem(r);
        out->width = ls->width;
        out->names = ls->names;
        out->units = ls->units;
        out->data = ls->data;
        ls->names = ls->units = NULL;
        ls->data = NULL;
        r->res->n_recorded++;
    }
    r->res->dt = r->dt;
    return RB_OK;
}

static void runner_free(runner *r)
{
    const rb_pipeline *p = r->p;
    rb_engine_free(&r->eng);
    for (size_t i = 0; r->select && i < p->n_signals; i++)
        rb_free(r->select[i]);
    rb_free(r->select);
    rb_free(r->bound);
    rb_free(r->bound_off);
    rb_free(r->label);
    rb_feeder_free(r->feed);
    rb_free(r->whole);
    rb_free(r->only);
    for (size_t m = 0; r->ms && m < p->n_metrics; m++)
        rb_metrics_stream_free(r->ms[m]);
    rb_free(r->ms);
    for (size_t m = 0; r->refs && m < p->n_metrics; m++)
        rb_ref_stream_free(r->refs[m]);
    rb_free(r->refs);
}

static int runner_init(runner *r)
{
    const rb_pipeline *p = r->p;
    r->res = rb_calloc(1, sizeof *r->res);
    r->bound_off = rb_calloc(p->n_signals + 1, sizeof *r->bound_off);
    for (size_t i = 0; r->bound_off && i < p->n_signals; i++)
        r->bound_off[i + 1] = r->bound_off[i] + p->signals[i].n_channels;
    r->bound = r->bound_off ? rb_calloc(r->bound_off[p->n_signals] + 1, sizeof *r->bound) : NULL;
    r->select = rb_calloc(p->n_signals, sizeof *r->select);
    r->whole = rb_calloc(p->n_signal_table + 1, sizeof *r->whole);
    r->only = rb_calloc(p->n_signal_table + 1, sizeof *r->only);
    if (r->only && r->src && r->opts && r->opts->stream_dir)
        rb_out_streams_mark(p, r->only);
    for (size_t t = 0; r->whole && r->only && t < p->n_signal_table; t++) /* windows: the bindings not kept */
        r->whole[t] = (t >= p->n_signals || p->signal_table[t].recorded) && !r->only[t];
    if (r->res && !(r->res->n_held = rb_calloc(p->n_signals, sizeof *r->res->n_held))) {
        rb_free(r->res);
        r->res = NULL;
    }
    if (!r->res || !r->bound || !r->select || !r->whole || !r->only)
        return rb_err_set(r->err, RB_ENOMEM, "out of memory");
    int rc = rb_engine_init(&r->eng, p, NULL, r->err);
    r->eng.windowed_out = r->only, r->eng.window_rows = r->window;
    return rc;
}

static int run(runner *r, rb_run_result **out)
{
    /* In order: each phase uses what the ones before it made. Only run_loop is per sample. */
    static int (*const phases[])(runner *) = {
        runner_init,       describe_input,         bind_channels, make_clock,
        resample_bindings, create_stages,          watch_faults,  rb_run_begin_streams,
        run_loop,          rb_run_compute_metrics, report_faults, report_warnings,
        collect,
    };
    *out = NULL;
    int rc = RB_OK;
    for (size_t i = 0; !rc && i < sizeof phases / sizeof phases[0]; i++)
        rc = phases[i](r);
    runner_free(r);
    if (rc)
        rb_run_result_free(r->res);
    else
        *out = r->res;
    return rc;
}

int rb_pipeline_run_log(const rb_pipeline *p, const rb_log *log, const char *const *paths, size_t n_paths,
                        const rb_run_opts *opts, rb_run_result **out, rb_err *err)
{
    runner r = {.p = p, .log = log, .opts = opts, .paths = paths, .n_paths = n_paths, .err = err};
    return run(&r, out);
}

int rb_pipeline_run_source(const rb_pipeline *p, rb_log_source *src, const char *const *paths, size_t n_paths,
                           size_t window, const rb_run_opts *opts, rb_run_result **out, rb_err *err)
{
    if (!src || window == 0)
        return rb_err_set(err, RB_EINVAL, "rb_pipeline_run_source: no source or a window of 0 samples");
    runner r = {.p = p, .log = rb_log_source_log(src), .opts = opts, .paths = paths, .n_paths = n_paths, .err = err};
    r.src = src, r.window = window;
    return run(&r, out);
}
