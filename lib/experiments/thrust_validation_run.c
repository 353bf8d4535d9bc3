/* The scale validation of thrust estimates (seed 004, V-B): the scales' temperature drift from the jets-off windows,
 * every variant's pipeline run on the log, E_T on its clock, the statistics, the table and the figures. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "experiments_internal.h"

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

/* The log's channels the file names, found once. */
typedef struct chans {
    const rb_channel **scales; /* n_scales */
    const rb_channel *temp;    /* NULL: none */
    long temp_el;              /* -1: the mean of the elements */
    const rb_channel *thr;     /* NULL: none */
} chans;

/* Every element summed (scales, temp_el -1 and !mean), their mean (mean), or one element. */
static double row_value(const rb_channel *ch, size_t k, long el, bool mean)
{
    const double *row = ch->data + k * ch->n_elements;
    if (el >= 0)
        return row[el];
    double s = 0;
    for (size_t i = 0; i < ch->n_elements; i++)
        s += row[i];
    return mean ? s / (double)ch->n_elements : s;
}

static int find_channel(const rb_thrust_validation *tv, const rb_log *log, const char *name, const char *key,
                        const rb_channel **out, rb_err *err)
{
    const rb_channel *ch = rb_log_find(log, name);
    if (!ch)
        return rb_err_set(err, RB_ENOTFOUND, "%s: channel %s not found (%s)", tv->log.paths[0], name, key);
    if (ch->n_samples == 0 || ch->n_elements == 0)
        return rb_err_set(err, RB_EINPUT, "%s: channel %s has no samples (%s)", tv->log.paths[0], name, key);
    *out = ch;
    return RB_OK;
}

static int find_channels(const rb_thrust_validation *tv, const rb_log *log, chans *ch, rb_err *err)
{
    int rc = RB_OK;
    for (size_t i = 0; !rc && i < tv->n_scales; i++) {
        char key[32];
        snprintf(key, sizeof key, "scales[%zu]", i);
        rc = find_channel(tv, log, tv->scales[i], key, &ch->scales[i], err);
    }
    ch->temp_el = -1;
    if (!rc && tv->temperature &&
        !(rc = find_channel(tv, log, tv->temperature, "temperature.channel", &ch->temp, err)) &&
        tv->temperature_element && (ch->temp_el = rb_channel_element_index(ch->temp, tv->temperature_element)) < 0)
        rc = rb_err_set(err, RB_ENOTFOUND, "%s: channel %s has no element '%s' (temperature.element)", tv->log.paths[0],
                        tv->temperature, tv->temperature_element);
    if (!rc && tv->throttles)
        rc = find_channel(tv, log, tv->throttles, "throttles.channel", &ch->thr, err);
    return rc;
}

/* ---- the jets-off windows ------------------------------------------------------------------------------------------ */
static const char *const WINDOW_NAMES[] = {"start", "end"};

/* The window must lie inside the channel's span and hold one of its samples. */
static int window_inside(const rb_thrust_validation *tv, const char *what, rb_interval w, const rb_channel *ch,
                         rb_err *err)
{
    double a = ch->time[0], b = ch->time[ch->n_samples - 1];
    bool holds = false;
    for (size_t k = 0; k < ch->n_samples && !holds; k++)
        holds = ch->time[k] >= w.t0 && ch->time[k] <= w.t1;
    if (w.t0 >= a && w.t1 <= b && holds)
        return RB_OK;
    return rb_err_set(err, RB_EINPUT, "%s: %s [%g, %g] s is outside the log: channel %s %s (t from %.17g to %.17g s)",
                      tv->log.paths[0], what, w.t0, w.t1, ch->name, holds ? "does not cover it" : "has no sample in it",
                      a, b);
}

static int windows_inside(const rb_thrust_validation *tv, const chans *ch, const char *what, rb_interval w, rb_err *err)
{
    int rc = RB_OK;
    for (size_t i = 0; !rc && i < tv->n_scales; i++)
        rc = window_inside(tv, what, w, ch->scales[i], err);
    if (!rc && ch->temp)
        rc = window_inside(tv, what, w, ch->temp, err);
    if (!rc && ch->thr)
        rc = window_inside(tv, what, w, ch->thr, err);
    return rc;
}

static int throttles_off(const rb_thrust_validation *tv, const chans *ch, size_t i, rb_err *err)
{
    const rb_channel *c = ch->thr;
    rb_interval w = tv->jets_off[i];
    for (size_t k = 0; k < c->n_samples; k++) {
        if (c->time[k] < w.t0 || c->time[k] > w.t1)
            continue;
        for (size_t j = 0; j < c->n_elements; j++) {
            double u = c->data[k * c->n_elements + j];
            if (!(u <= tv->throttle_off_tolerance))
                return rb_err_set(err, RB_EINPUT,
                                  "%s: jets_off[%zu] (the %s window, [%g, %g] s): jet '%s' of %s has throttle %g > "
                                  "throttle_off_tolerance %g at t = %.17g s: the jets must be off there",
                                  tv->log.paths[0], i, WINDOW_NAMES[i], w.t0, w.t1, c->element_names[j], c->name, u,
                                  tv->throttle_off_tolerance, c->time[k]);
        }
    }
    return RB_OK;
}

/* Mean over the window's samples of row_value. */
static int window_mean(const rb_thrust_validation *tv, size_t i, const rb_channel *c, long el, bool mean, double *out,
                       rb_err *err)
{
    rb_interval w = tv->jets_off[i];
    double s = 0;
    size_t n = 0;
    for (size_t k = 0; k < c->n_samples; k++) {
        if (c->time[k] < w.t0 || c->time[k] > w.t1)
            continue;
        double v = row_value(c, k, el, mean);
        if (!isfinite(v))
            return rb_err_set(err, RB_EINPUT, "%s: jets_off[%zu]: channel %s is not finite at t = %.17g s",
                              tv->log.paths[0], i, c->name, c->time[k]);
        s += v;
        n++;
    }
    *out = s / (double)n; /* n >= 1: windows_inside checked it */
    return RB_OK;
}

static int drift(const rb_thrust_validation *tv, const chans *ch, rb_thrust_drift *d, rb_err *err)
{
    *d = (rb_thrust_drift){tv->temperature_correction,        tv->has_jets_off, NAN, NAN, NAN, NAN, 0.0,
                           {tv->jets_off[0], tv->jets_off[1]}};
    int rc = RB_OK;
    for (size_t i = 0; !rc && tv->has_jets_off && i < 2; i++) {
        char what[64];
        snprintf(what, sizeof what, "jets_off[%zu] (the %s window)", i, WINDOW_NAMES[i]);
        rc = windows_inside(tv, ch, what, tv->jets_off[i], err);
        if (!rc)
            rc = throttles_off(tv, ch, i, err);
        double w = 0, part = 0;
        for (size_t s = 0; !rc && s < tv->n_scales; s++)
            if (!(rc = window_mean(tv, i, ch->scales[s], -1, false, &part, err)))
                w += part;
        if (!rc)
            *(i ? &d->w1 : &d->w0) = w;
        if (!rc && ch->temp)
            rc = window_mean(tv, i, ch->temp, ch->temp_el, true, i ? &d->temp1 : &d->temp0, err);
    }
    if (rc || !tv->temperature_correction)
        return rc;
    double dt = d->temp1 - d->temp0;
    d->alpha = (d->w1 - d->w0) / dt;
    if (!(fabs(dt) > 1e-9 * fmax(fabs(d->temp0), fabs(d->temp1))) || !isfinite(d->alpha))
        return rb_err_set(err, RB_EINPUT,
                          "%s: no temperature change between the jets-off windows (%s: mean %.17g then %.17g): the "
                          "drift alpha = dW / dT is undefined; set \"temperature_correction\": false to use the raw "
                          "readings",
                          tv->log.paths[0], tv->temperature, d->temp0, d->temp1);
    return RB_OK;
}

/* *out = *tv (shallow) with its "from_start" windows moved to the log's time; the jets-off windows' order checked
 * once both are in it. */
static int resolve_windows(const rb_thrust_validation *tv, const rb_log *log, rb_thrust_validation *out, rb_err *err)
{
    *out = *tv;
    double t_start = rb_log_start(log);
    for (size_t i = 0; i < 2; i++)
        if (tv->jets_off_from_start[i])
            out->jets_off[i].t0 += t_start, out->jets_off[i].t1 += t_start, out->jets_off_from_start[i] = false;
    if (tv->ramp_from_start)
        out->ramp.t0 += t_start, out->ramp.t1 += t_start, out->ramp_from_start = false;
    if (tv->has_jets_off && !(out->jets_off[0].t1 < out->jets_off[1].t0))
        return rb_err_set(err, RB_ECONFIG,
                          "%s: jets_off: the end window [%.17g, %.17g] s must start after the start window [%.17g, "
                          "%.17g] s ends (in the log's time)",
                          tv->path ? tv->path : tv->name, out->jets_off[1].t0, out->jets_off[1].t1, out->jets_off[0].t0,
                          out->jets_off[0].t1);
    return RB_OK;
}

int rb_thrust_drift_estimate(const rb_thrust_validation *tv_given, const rb_log *log, rb_thrust_drift *out, rb_err *err)
{
    rb_thrust_validation resolved, *tv = &resolved;
    int rc0 = resolve_windows(tv_given, log, &resolved, err);
    if (rc0)
        return rc0;
    chans ch = {rb_calloc(tv->n_scales, sizeof *ch.scales), NULL, -1, NULL};
    int rc = ch.scales ? find_channels(tv, log, &ch, err) : nomem(err);
    if (!rc)
        rc = drift(tv, &ch, out, err);
    rb_free(ch.scales);
    return rc;
}

/* ---- one variant ------------------------------------------------------------------------------------------------------- */
typedef struct job {
    const rb_thrust_validation *tv;
    const rb_log *log;
    bool read; /* the log was read from the file's paths (else given in memory: no paths to hash) */
    chans ch;
    const rb_thrust_drift *drift;
    double bound;
    rb_thrust_variant_result *out; /* n_variants slots */
    char **input_sha256;           /* n_variants slots */
    char ***warnings;              /* n_variants slots */
    size_t *n_warnings;
} job;

/* The clock samples [*k0, *k1) the scales and the temperature cover. */
static int covered(const job *jb, const rb_thrust_variant *var, const rb_clock *clk, size_t *k0, size_t *k1,
                   rb_err *err)
{
    double lo = -INFINITY, hi = INFINITY;
    for (size_t i = 0; i < jb->tv->n_scales; i++) {
        const rb_channel *c = jb->ch.scales[i];
        lo = fmax(lo, c->time[0]);
        hi = fmin(hi, c->time[c->n_samples - 1]);
    }
    if (jb->drift->corrected) {
        lo = fmax(lo, jb->ch.temp->time[0]);
        hi = fmin(hi, jb->ch.temp->time[jb->ch.temp->n_samples - 1]);
    }
    for (*k0 = 0; *k0 < clk->n && clk->t[*k0] < lo;)
        (*k0)++;
    for (*k1 = *k0; *k1 < clk->n && clk->t[*k1] <= hi;)
        (*k1)++;
    if (*k1 - *k0 >= 2)
        return RB_OK;
    return rb_err_set(err, RB_EINPUT,
                      "%s: the scales%s (t from %.17g to %.17g s) cover %zu sample(s) of variant %s's clock (t from "
                      "%.17g to %.17g s): at least two are needed",
                      jb->tv->log.paths[0], jb->drift->corrected ? " and the temperature" : "", lo, hi, *k1 - *k0,
                      var->name, clk->n ? clk->t[0] : NAN, clk->n ? clk->t[clk->n - 1] : NAN);
}

/* g times the corrected scale sum on the clock samples sub (into load). */
static int scale_load(const job *jb, const rb_clock *sub, double *load, double *tmp, rb_err *err)
{
    const rb_thrust_validation *tv = jb->tv;
    size_t n = sub->n;
    int rc = RB_OK;
    for (size_t k = 0; k < n; k++)
        load[k] = 0;
    for (size_t i = 0; !rc && i < tv->n_scales; i++) {
        const rb_channel *c = jb->ch.scales[i];
        if ((rc = rb_resample(c, NULL, 0, sub, RB_INTERP_LINEAR, RB_NONFINITE_ERROR, tmp, NULL, err)))
            return rb_err_prefix(err, rc, "%s: scales[%zu]: ", tv->log.paths[0], i);
        for (size_t k = 0; k < n; k++)
            for (size_t e = 0; e < c->n_elements; e++)
                load[k] += tmp[k * c->n_elements + e];
    }
    if (jb->drift->corrected) {
        const rb_channel *c = jb->ch.temp;
        size_t sel = jb->ch.temp_el >= 0 ? (size_t)jb->ch.temp_el : 0;
        size_t w = jb->ch.temp_el >= 0 ? 1 : c->n_elements;
        rc = rb_resample(c, jb->ch.temp_el >= 0 ? &sel : NULL, jb->ch.temp_el >= 0 ? 1 : 0, sub, RB_INTERP_LINEAR,
                         RB_NONFINITE_ERROR, tmp, NULL, err);
        if (rc)
            return rb_err_prefix(err, rc, "%s: temperature: ", tv->log.paths[0]);
        for (size_t k = 0; k < n; k++) {
            double temp = 0;
            for (size_t e = 0; e < w; e++)
                temp += tmp[k * w + e];
            load[k] -= jb->drift->alpha * (temp / (double)w - jb->drift->temp0);
        }
    }
    for (size_t k = 0; k < n; k++)
        load[k] *= tv->g;
    return RB_OK;
}

/* Statistics of x[0..n) against 0 at times t, over [t0, t1]. */
static int stats_of(const char *name, const double *x, const double *zeros, const double *t, size_t n, double t0,
                    double t1, rb_stats *out, rb_err *err)
{
    rb_metric_input in = {name, "0", x, zeros, t, n, 1, t0, t1};
    return rb_metrics_compute(&in, NULL, out, err);
}

static int variant_stats(const job *jb, const rb_thrust_variant *var, rb_thrust_variant_result *vr, double *work,
                         rb_err *err)
{
    const rb_thrust_validation *tv = jb->tv;
    size_t n = vr->n;
    double *zeros = work, *pct = work + n, *rate = work + 2 * n;
    for (size_t k = 0; k < n; k++) {
        zeros[k] = 0;
        pct[k] = vr->e_t[k] * 100.0 / (tv->mass * tv->g);
    }
    for (size_t k = 0; k + 1 < n; k++)
        rate[k] = (vr->support[k + 1] - vr->support[k]) / (vr->t[k + 1] - vr->t[k]);
    int rc = stats_of("E_T", vr->e_t, zeros, vr->t, n, -INFINITY, INFINITY, &vr->rows[RB_THRUST_E_T], err);
    if (!rc)
        rc = stats_of("E_T_percent", pct, zeros, vr->t, n, -INFINITY, INFINITY, &vr->rows[RB_THRUST_E_T_PERCENT], err);
    if (!rc)
        rc = stats_of("d_support", rate, zeros, vr->t + 1, n - 1, -INFINITY, INFINITY, &vr->rows[RB_THRUST_D_SUPPORT],
                      err);
    if (!rc && tv->has_ramp) {
        bool any = false;
        for (size_t k = 0; k < n && !any; k++)
            any = vr->t[k] >= tv->ramp.t0 && vr->t[k] <= tv->ramp.t1;
        if (!any)
            return rb_err_set(err, RB_EINPUT,
                              "%s: ramp [%g, %g] s holds no scored sample of variant %s's clock (t from %.17g to "
                              "%.17g s)",
                              tv->log.paths[0], tv->ramp.t0, tv->ramp.t1, var->name, vr->t[0], vr->t[n - 1]);
        rc = stats_of("E_T", vr->e_t, zeros, vr->t, n, tv->ramp.t0, tv->ramp.t1, &vr->rows[RB_THRUST_E_T_RAMP], err);
    }
    vr->passed = vr->rows[RB_THRUST_E_T].max_abs < jb->bound;
    return rc;
}

static int score(const job *jb, const rb_thrust_variant *var, const rb_run_result *res, const rb_run_signal *sig,
                 rb_thrust_variant_result *vr, rb_err *err)
{
    size_t k0, k1, wmax = 1;
    int rc = covered(jb, var, &res->clock, &k0, &k1, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < jb->tv->n_scales; i++)
        wmax = jb->ch.scales[i]->n_elements > wmax ? jb->ch.scales[i]->n_elements : wmax;
    if (jb->ch.temp && jb->ch.temp->n_elements > wmax)
        wmax = jb->ch.temp->n_elements;
    size_t n = k1 - k0;
    vr->n = n;
    vr->t = rb_malloc(n * sizeof *vr->t);
    vr->e_t = rb_malloc(n * sizeof *vr->e_t);
    vr->support = rb_malloc(n * sizeof *vr->support);
    vr->load = rb_malloc(n * sizeof *vr->load);
    double *work = rb_malloc(n * (wmax > 3 ? wmax : 3) * sizeof *work);
    if (!vr->t || !vr->e_t || !vr->support || !vr->load || !work) {
        rb_free(work);
        return nomem(err);
    }
    memcpy(vr->t, res->clock.t + k0, n * sizeof *vr->t);
    for (size_t k = 0; k < n && !rc; k++) {
        vr->support[k] = sig->data[k0 + k];
        if (!isfinite(vr->support[k]))
            rc = rb_err_set(err, RB_ENUMERIC, "%s: support %s is not finite (%g) at t = %.17g s", jb->tv->log.paths[0],
                            var->support, vr->support[k], vr->t[k]);
    }
    rb_clock sub = {n, vr->t};
    if (!rc)
        rc = scale_load(jb, &sub, vr->load, work, err);
    for (size_t k = 0; !rc && k < n; k++)
        vr->e_t[k] = vr->load[k] - vr->support[k];
    if (!rc)
        rc = variant_stats(jb, var, vr, work, err);
    rb_free(work);
    return rc;
}

static int run_variant(void *ctx, size_t v, rb_err *err) /* a pool task */
{
    job *jb = ctx;
    const rb_thrust_variant *var = &jb->tv->variants[v];
    const rb_cfg_session *ses = &jb->tv->log;
    rb_run_result *res = NULL;
    int rc = rb_pipeline_run_log(var->pipeline, jb->log, jb->read ? (const char *const *)ses->paths : NULL,
                                 jb->read ? ses->n_paths : 0, NULL, &res, err);
    const rb_run_signal *sig = rc ? NULL : rb_run_result_signal(res, var->support);
    if (!rc && !sig)
        rc = rb_err_set(err, RB_EINVAL, "support %s was not recorded", var->support);
    if (!rc && sig->width != 1)
        rc = rb_err_set(err, RB_EDIM,
                        "support %s has %zu elements (%s%s): it must be one, the vertical support W_jets . e3 (N)",
                        var->support, sig->width, sig->names[0], sig->width > 1 ? ", ..." : "");
    if (!rc)
        rc = score(jb, var, res, sig, &jb->out[v], err);
    if (!rc) {
        jb->input_sha256[v] = res->input_sha256;
        res->input_sha256 = NULL;
        jb->warnings[v] = res->warnings;
        jb->n_warnings[v] = res->n_warnings;
        res->warnings = NULL;
        res->n_warnings = 0;
    }
    rb_run_result_free(res);
    return rc ? rb_err_prefix(err, rc, "variant %s: ", var->name) : RB_OK;
}

/* ---- the table -------------------------------------------------------------------------------------------------------- */
static const char *const ROW_NAMES[RB_THRUST_N_ROWS] = {"E_T", "E_T_ramp", "E_T_percent", "d_support"};

static int provenance(const job *jb, rb_comparison *c, rb_err *err)
{
    const rb_thrust_validation *tv = jb->tv;
    rb_provenance pv;
    char *files = NULL;
    int rc = rb_experiments_provenance_open(&pv, "validation", tv->path, tv->sha256, err);
    for (size_t v = 0; !rc && v < tv->n_variants; v++)
        rc = rb_experiments_variant_provenance(&pv, tv->variants[v].name, tv->variants[v].pipeline, "support",
                                               tv->variants[v].support, err);
    if (!rc && !(files = jb->read ? rb_suite_session_text(&tv->log, ",", true) : rb_strdup("memory")))
        rc = nomem(err);
    if (!rc)
        rc = rb_provenance_add(&pv, "input", files, err);
    if (!rc)
        rc = rb_provenance_add(&pv, "input_sha256", jb->input_sha256[0] ? jb->input_sha256[0] : "", err);
    rb_free(files);
    return rb_experiments_provenance_close(&pv, rc, c, err);
}

static int make_table(const job *jb, rb_comparison **out, rb_err *err)
{
    const rb_thrust_validation *tv = jb->tv;
    const char *joints[RB_THRUST_N_ROWS];
    size_t rows[RB_THRUST_N_ROWS], nj = 0;
    for (size_t r = 0; r < RB_THRUST_N_ROWS; r++)
        if (r != RB_THRUST_E_T_RAMP || tv->has_ramp) {
            rows[nj] = r;
            joints[nj++] = ROW_NAMES[r];
        }
    const char **variants = rb_calloc(tv->n_variants, sizeof *variants);
    if (!variants)
        return nomem(err);
    for (size_t v = 0; v < tv->n_variants; v++)
        variants[v] = tv->variants[v].name;
    const char *logs[] = {tv->log_name};
    rb_comparison *c = NULL;
    int rc = rb_comparison_new(&c, tv->name, "scales", variants, tv->n_variants, logs, 1, joints, nj, err);
    rb_free(variants);
    if (rc)
        return rc;
    static const size_t shown[] = {3, 1, 2, 8}; /* max_abs, rmse, mae, mean_est */
    c->n_shown = 4;
    memcpy(c->shown, shown, sizeof shown);
    c->bootstrap = (rb_bootstrap){2000, 0, 0.95};
    for (size_t v = 0; v < tv->n_variants; v++) {
        for (size_t j = 0; j < nj; j++)
            *rb_comparison_at(c, v, j, 0) = jb->out[v].rows[rows[j]];
        *rb_comparison_at(c, v, nj, 0) = jb->out[v].rows[RB_THRUST_E_T]; /* "all": the whole run */
    }
    rc = provenance(jb, c, err);
    if (!rc)
        rc = rb_comparison_summarize(c, err);
    if (rc)
        rb_comparison_free(c);
    else
        *out = c;
    return rc;
}

/* ---- figures ------------------------------------------------------------------------------------------------------------ */
static int add_figure(rb_thrust_result *r, char *name, char *svg, rb_err *err)
{
    if (!name || !svg) {
        rb_free(name);
        rb_free(svg);
        return nomem(err);
    }
    r->figures[r->n_figures++] = (rb_suite_figure){name, svg};
    return RB_OK;
}

static void safe_name(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
              *s == '-' || *s == '.'))
            *s = '_';
}

/* lines[0] the reference; the span of every line. */
static int traces(const rb_thrust_validation *tv, const char *title, const char *y_label, const rb_trace_line *lines,
                  size_t n_lines, char **svg, rb_err *err)
{
    double t0 = INFINITY, t1 = -INFINITY;
    for (size_t i = 0; i < n_lines; i++)
        if (lines[i].n) {
            t0 = fmin(t0, lines[i].t[0]);
            t1 = fmax(t1, lines[i].t[lines[i].n - 1]);
        }
    return rb_svg_traces(title, y_label, lines, n_lines, tv->has_ramp ? &tv->ramp : NULL, tv->has_ramp, t0, t1, svg,
                         err);
}

static int figures(const rb_thrust_validation *tv, rb_thrust_result *r, rb_err *err)
{
    size_t V = tv->n_variants;
    rb_trace_line *lines = rb_calloc(V + 1, sizeof *lines);
    if (!lines || !(r->figures = rb_calloc(V + 2, sizeof *r->figures))) {
        rb_free(lines);
        return nomem(err);
    }
    double zt[2] = {INFINITY, -INFINITY}, zy[2] = {0, 0};
    for (size_t v = 0; v < V; v++) {
        zt[0] = fmin(zt[0], r->variants[v].t[0]);
        zt[1] = fmax(zt[1], r->variants[v].t[r->variants[v].n - 1]);
    }
    lines[0] = (rb_trace_line){"0", zt, zy, 2};
    for (size_t v = 0; v < V; v++)
        lines[v + 1] = (rb_trace_line){tv->variants[v].name, r->variants[v].t, r->variants[v].e_t, r->variants[v].n};
    char *svg = NULL, *title = rb_asprintf("%s: E_T, the scales against the estimated support", tv->name);
    int rc = title ? traces(tv, title, "E_T (N)", lines, V + 1, &svg, err) : nomem(err);
    rb_free(title);
    if (!rc)
        rc = add_figure(r, rb_strdup("E_T.svg"), svg, err);
    if (!rc) { /* the paper's Fig. 7: the support of each variant beside the corrected scales (variant 0's clock) */
        lines[0] = (rb_trace_line){"scales (corrected) x g", r->variants[0].t, r->variants[0].load, r->variants[0].n};
        for (size_t v = 0; v < V; v++)
            lines[v + 1] =
                (rb_trace_line){tv->variants[v].name, r->variants[v].t, r->variants[v].support, r->variants[v].n};
        title = rb_asprintf("%s: vertical support W_jets . e3", tv->name);
        rc = title ? traces(tv, title, "W_jets . e3 (N)", lines, V + 1, &svg, err) : nomem(err);
        rb_free(title);
        if (!rc)
            rc = add_figure(r, rb_strdup("support.svg"), svg, err);
    }
    lines[0] = (rb_trace_line){"0", zt, zy, 2};
    for (size_t v = 0; !rc && v < V; v++) {
        lines[1] = (rb_trace_line){tv->variants[v].name, r->variants[v].t, r->variants[v].e_t, r->variants[v].n};
        title = rb_asprintf("%s: E_T of %s", tv->name, tv->variants[v].name);
        rc = title ? traces(tv, title, "E_T (N)", lines, 2, &svg, err) : nomem(err);
        rb_free(title);
        char *name = rc ? NULL : rb_asprintf("E_T_%s.svg", tv->variants[v].name);
        if (name)
            safe_name(name);
        if (!rc)
            rc = add_figure(r, name, svg, err);
    }
    rb_free(lines);
    return rc;
}

/* ---- the run ------------------------------------------------------------------------------------------------------------- */
static int gather_warnings(job *jb, rb_thrust_result *r, rb_err *err)
{
    for (size_t v = 0; v < jb->tv->n_variants; v++)
        for (size_t w = 0; w < jb->n_warnings[v]; w++) {
            bool seen = false;
            for (size_t k = 0; k < r->n_warnings && !seen; k++)
                seen = strcmp(r->warnings[k], jb->warnings[v][w]) == 0;
            if (seen)
                continue;
            char **grown = rb_realloc(r->warnings, (r->n_warnings + 1) * sizeof *grown);
            if (!grown)
                return nomem(err);
            r->warnings = grown;
            r->warnings[r->n_warnings++] = jb->warnings[v][w];
            jb->warnings[v][w] = NULL;
        }
    return RB_OK;
}

void rb_thrust_result_free(rb_thrust_result *r)
{
    if (!r)
        return;
    for (size_t v = 0; r->variants && v < r->n_variants; v++) {
        rb_free(r->variants[v].t);
        rb_free(r->variants[v].e_t);
        rb_free(r->variants[v].support);
        rb_free(r->variants[v].load);
    }
    rb_free(r->variants);
    rb_comparison_free(r->table);
    for (size_t i = 0; i < r->n_figures; i++) {
        rb_free(r->figures[i].name);
        rb_free(r->figures[i].svg);
    }
    rb_free(r->figures);
    rb_strings_free(r->warnings, r->n_warnings);
    rb_free(r);
}

static int run_all(job *jb, const rb_thrust_opts *opts, rb_thrust_result *r, rb_err *err)
{
    const rb_thrust_validation *tv = jb->tv;
    size_t V = tv->n_variants;
    int rc = find_channels(tv, jb->log, &jb->ch, err);
    if (!rc)
        rc = drift(tv, &jb->ch, &r->drift, err);
    if (!rc && tv->has_ramp)
        rc = windows_inside(tv, &(chans){jb->ch.scales, jb->drift->corrected ? jb->ch.temp : NULL, -1, NULL}, "ramp",
                            tv->ramp, err);
    if (rc)
        return rc;
    r->bound = jb->bound = rb_thrust_bound(tv->bound_n, tv->bound_percent, tv->mass, tv->g, &r->binds);
    rb_pool pl = {jb, run_variant, V, opts ? opts->threads : 0, opts ? opts->progress : NULL, opts ? opts->user : NULL};
    bool cancelled = false;
    rc = rb_pool_run(&pl, &cancelled, err);
    if (cancelled)
        return rb_err_set(err, rc, "%s: validation cancelled by the caller", tv->path);
    if (!rc)
        rc = make_table(jb, &r->table, err);
    if (!rc)
        rc = figures(tv, r, err);
    if (!rc)
        rc = gather_warnings(jb, r, err);
    return rc;
}

int rb_thrust_validation_run(const rb_thrust_validation *tv, const rb_log *log, const rb_thrust_opts *opts,
                             rb_thrust_result **out, rb_err *err)
{
    *out = NULL;
    size_t V = tv->n_variants;
    rb_log *owned = NULL;
    rb_thrust_result *r = rb_calloc(1, sizeof *r);
    job jb = {0};
    jb.tv = tv;
    jb.log = log;
    jb.ch = (chans){rb_calloc(tv->n_scales, sizeof *jb.ch.scales), NULL, -1, NULL};
    if (r) {
        jb.drift = &r->drift;
        r->n_variants = V;
        r->variants = jb.out = rb_calloc(V, sizeof *jb.out);
    }
    jb.input_sha256 = rb_calloc(V, sizeof *jb.input_sha256);
    jb.warnings = rb_calloc(V, sizeof *jb.warnings);
    jb.n_warnings = rb_calloc(V, sizeof *jb.n_warnings);
    int rc = r && jb.out && jb.ch.scales && jb.input_sha256 && jb.warnings && jb.n_warnings ? RB_OK : nomem(err);
    if (!rc && !log) {
        rc = rb_log_read_session((const char *const *)tv->log.paths, tv->log.n_paths, &owned, NULL, err);
        jb.log = owned;
        jb.read = true;
    }
    rb_thrust_validation resolved;
    if (!rc && !(rc = resolve_windows(tv, jb.log, &resolved, err))) {
        jb.tv = &resolved;
        r->ramp = resolved.ramp;
        rc = run_all(&jb, opts, r, err);
    }
    for (size_t v = 0; v < V; v++) {
        rb_free(jb.input_sha256 ? jb.input_sha256[v] : NULL);
        if (jb.warnings)
            rb_strings_free(jb.warnings[v], jb.n_warnings[v]);
    }
    rb_free(jb.input_sha256);
    rb_free(jb.warnings);
    rb_free(jb.n_warnings);
    rb_free(jb.ch.scales);
    rb_log_free(owned);
    if (rc)
        rb_thrust_result_free(r);
    else
        *out = r;
    return rc;
}
