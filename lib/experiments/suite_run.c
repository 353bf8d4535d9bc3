/* Running a comparison suite: read the logs, run every (variant, log) pair on a pool of threads, score the
 * estimates against the reference channel, then summarize and draw in a fixed order, so that the bytes of
 * the result never depend on the thread count or on timing. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "experiments_internal.h"

/* What one log brings, prepared before any pair runs (read-only afterwards). */
typedef struct log_data {
    rb_log *log;
    rb_log *ref_log; /* the suite's reference_log for this log (NULL: the reference is in log) */
    char *ref_path;
    char *label; /* its files joined by " + " */
    char *files; /* basenames joined by "," */
    const rb_channel *ref;
    size_t *sel; /* n_joints element indices into ref */
    size_t n_shaded;
    rb_interval *shaded; /* active stretches of the contact channel */
    size_t n_events;
    double *event_times; /* samples of the events channel at which an element changed value */
    double t_start;      /* the log's first sample (windows "from_start") */
    double settle;       /* without a window: each run scored from its clock's first sample + settle */
    char *settle_why;    /* which variant's stage sets it, for the report */
} log_data;

/* What one pair leaves behind (its own slot, written by one thread only). */
typedef struct pair_out {
    rb_stats *stats;    /* n_joints + 1 ("all" last) */
    char *input_sha256; /* of the log's files (the runner computes it: in parallel, not while reading) */
    size_t n_samples;
    size_t n_warnings;
    char **warnings;
    double **trace_t, **trace_y; /* per suite trace whose log is this pair's: the estimate of its joint */
    size_t *trace_n;
    rb_confusion confusion; /* the suite's "confusion": the joints pooled */
} pair_out;

typedef struct job {
    const rb_suite *s;
    log_data *logs;
    size_t n_joints;
    char **joints; /* n_joints names (the suite's, or the first log's reference elements) */
    pair_out *out; /* n_variants x n_logs, variant-major */
    size_t n_pairs;
    const rb_suite_opts *opts;
    rb_suite_result *res;     /* the table goes here */
    rb_suite_figure *figures; /* 2 + n_traces slots (box plots, traces), filled by the post-phase tasks */
} job;

/* Post-phase tasks, each with its own slot: the table, the two box plots, then one per trace. Task i > 0
 * makes figure i - 1. */
enum { POST_TABLE, POST_RMSE_BOX, POST_MAGNITUDE_BOX, POST_TRACES };

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

static char *join_paths(const rb_cfg_session *ses, const char *sep, bool base)
{
    size_t len = 1;
    for (size_t i = 0; i < ses->n_paths; i++)
        len += strlen(ses->paths[i]) + strlen(sep);
    char *s = rb_malloc(len);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (size_t i = 0; i < ses->n_paths; i++) {
        if (i)
            strcat(s, sep);
        strcat(s, base ? rb_path_basename(ses->paths[i]) : ses->paths[i]);
    }
    return s;
}

/* ---- logs: read, checked, prepared ---------------------------------------------------------------------- */
/* The joint names: the suite's, or every element of the first log's reference channel. */
static int choose_joints(job *jb, rb_err *err)
{
    const rb_suite *s = jb->s;
    const rb_channel *ref = jb->logs[0].ref;
    jb->n_joints = s->n_joints ? s->n_joints : ref->n_elements;
    if (jb->n_joints == 0)
        return rb_err_set(err, RB_EINPUT, "%s: reference channel %s has no elements", jb->logs[0].label, ref->name);
    if (!(jb->joints = rb_calloc(jb->n_joints, sizeof *jb->joints)))
        return nomem(err);
    for (size_t j = 0; j < jb->n_joints; j++)
        if (!(jb->joints[j] = rb_strdup(s->n_joints ? s->joints[j] : ref->element_names[j])))
            return nomem(err);
    return RB_OK;
}

static int select_joints(job *jb, log_data *ld, rb_err *err)
{
    if (!(ld->sel = rb_calloc(jb->n_joints, sizeof *ld->sel)))
        return nomem(err);
    for (size_t j = 0; j < jb->n_joints; j++) {
        long idx = rb_channel_element_index(ld->ref, jb->joints[j]);
        if (idx < 0)
            return rb_err_set(err, RB_ENOTFOUND, "%s: reference channel %s has no element '%s' (%s)", ld->label,
                              ld->ref->name, jb->joints[j], jb->s->n_joints ? "joints" : "the first log's joints");
        ld->sel[j] = (size_t)idx;
    }
    return RB_OK;
}

/* Stretches where any element of the contact channel exceeds the threshold in magnitude. */
static int contact_intervals(const rb_suite *s, log_data *ld, rb_err *err)
{
    const rb_channel *ch = rb_log_find(ld->log, s->contact_channel);
    if (!ch)
        return rb_err_set(err, RB_ENOTFOUND, "%s: contact channel %s not found (figures.contact.channel)", ld->label,
                          s->contact_channel);
    bool in = false;
    for (size_t t = 0; t < ch->n_samples; t++) {
        bool active = false;
        for (size_t i = 0; i < ch->n_elements && !active; i++)
            active = fabs(ch->data[t * ch->n_elements + i]) > s->contact_threshold;
        if (active && !in) {
            rb_interval *grown = rb_realloc(ld->shaded, (ld->n_shaded + 1) * sizeof *grown);
            if (!grown)
                return nomem(err);
            ld->shaded = grown;
            ld->shaded[ld->n_shaded++] = (rb_interval){ch->time[t], ch->time[t]};
        }
        if (active)
            ld->shaded[ld->n_shaded - 1].t1 = ch->time[t];
        in = active;
    }
    return RB_OK;
}

/* The times at which any element of the events channel changes value (NaN to NaN is no change). */
static int event_times(const rb_suite *s, log_data *ld, rb_err *err)
{
    const rb_channel *ch = rb_log_find(ld->log, s->events_channel);
    if (!ch)
        return rb_err_set(err, RB_ENOTFOUND, "%s: events channel %s not found (events.channel)", ld->label,
                          s->events_channel);
    if (!(ld->event_times = rb_malloc((ch->n_samples ? ch->n_samples : 1) * sizeof *ld->event_times)))
        return nomem(err);
    size_t n = ch->n_elements;
    for (size_t t = 1; t < ch->n_samples; t++) {
        bool changed = false;
        for (size_t i = 0; i < n && !changed; i++) {
            double a = ch->data[(t - 1) * n + i], b = ch->data[t * n + i];
            changed = a != b && !(isnan(a) && isnan(b));
        }
        if (changed)
            ld->event_times[ld->n_events++] = ch->time[t];
    }
    return RB_OK;
}

/* Run by the pool, one log per task: reading is the part of a log that needs no other log. */
static int read_log(void *ctx, size_t l, rb_err *err)
{
    job *jb = ctx;
    log_data *ld = &jb->logs[l];
    const rb_cfg_session *ses = &jb->s->logs[l];
    ld->label = join_paths(ses, " + ", false);
    ld->files = join_paths(ses, ",", true);
    if (!ld->label || !ld->files)
        return nomem(err);
    int rc = rb_log_read_session((const char *const *)ses->paths, ses->n_paths, &ld->log, NULL, err);
    if (!rc && jb->s->reference_log.path &&
        (rc = rb_reference_log_read(&jb->s->reference_log, ses->paths[0], jb->s->reference, &ld->ref_path, &ld->ref_log,
                                    &ld->ref, err)) != RB_OK)
        rb_err_prefix(err, rc, "%s: reference_log: ", ld->label);
    return rc;
}

/* The start-up every variant skips on this log when neither it nor the suite has a window: the suite's "settle", else
 * the largest of the variants' pipelines' (rb_pipeline_settle at the period each runs at), so that every variant is
 * scored on the same samples. */
static int log_settle(job *jb, log_data *ld, rb_err *err)
{
    const rb_suite *s = jb->s;
    ld->t_start = rb_log_start(ld->log);
    ld->settle = s->has_settle ? s->settle : 0.0;
    size_t by = SIZE_MAX;
    long stage = -1;
    for (size_t v = 0; v < s->n_variants && !s->has_settle; v++) {
        const rb_pipeline *p = s->variants[v].pipeline;
        long st;
        double t = rb_pipeline_settle(p, rb_pipeline_period(p, ld->log), &st);
        if (t > ld->settle)
            ld->settle = t, by = v, stage = st;
    }
    if (s->has_settle)
        ld->settle_why = rb_asprintf("the suite's settle %.4g s", s->settle);
    else if (by == SIZE_MAX)
        ld->settle_why = rb_strdup("no start-up excluded (settle 0: none declared)");
    else if (stage < 0)
        ld->settle_why = rb_asprintf("start-up of %.4g s excluded (variant %s: its pipeline's settle)", ld->settle,
                                     s->variants[by].name);
    else
        ld->settle_why = rb_asprintf("start-up of %.4g s excluded (settle: variant %s, stage %s, %s)", ld->settle,
                                     s->variants[by].name, s->variants[by].pipeline->stages[stage].id,
                                     s->variants[by].pipeline->stages[stage].type->name);
    return ld->settle_why ? RB_OK : nomem(err);
}

/* In log order, once every log is read. */
static int prepare_log(job *jb, size_t l, rb_err *err)
{
    const rb_suite *s = jb->s;
    log_data *ld = &jb->logs[l];
    int rc;
    if (ld->ref_log)
        ld->ref = rb_log_find(ld->ref_log, s->reference); /* read_log found it */
    else if (!(ld->ref = rb_log_find(ld->log, s->reference)))
        return rb_err_set(err, RB_ENOTFOUND, "%s: reference channel %s not found (reference)", ld->label, s->reference);
    if (ld->ref->n_samples == 0)
        return rb_err_set(err, RB_EINPUT, "%s: reference channel %s has no samples", ld->label, s->reference);
    if (l == 0 && (rc = choose_joints(jb, err)))
        return rc;
    rc = select_joints(jb, ld, err);
    if (!rc && s->contact_channel)
        rc = contact_intervals(s, ld, err);
    if (!rc && s->events_channel)
        rc = event_times(s, ld, err);
    return rc ? rc : log_settle(jb, ld, err);
}

/* The index of a joint name (NULL: all joints, n_joints); SIZE_MAX when it is not scored. */
static size_t joint_of(const job *jb, const char *name)
{
    if (!name)
        return jb->n_joints;
    for (size_t j = 0; j < jb->n_joints; j++)
        if (strcmp(jb->joints[j], name) == 0)
            return j;
    return SIZE_MAX;
}

static int check_trace_joints(const job *jb, rb_err *err)
{
    for (size_t k = 0; k < jb->s->n_traces; k++) {
        bool found = false;
        for (size_t j = 0; j < jb->n_joints && !found; j++)
            found = strcmp(jb->joints[j], jb->s->traces[k].joint) == 0;
        if (!found)
            return rb_err_set(err, RB_ENOTFOUND,
                              "%s: figures.traces[%zu]: joint '%s' is not an element of the "
                              "reference channel %s",
                              jb->s->path, k, jb->s->traces[k].joint, jb->s->reference);
    }
    for (size_t k = 0; k < jb->s->n_published; k++)
        if (joint_of(jb, jb->s->published[k].joint) == SIZE_MAX)
            return rb_err_set(err, RB_ENOTFOUND,
                              "%s: published[%zu]: joint '%s' is not an element of the reference channel %s",
                              jb->s->path, k, jb->s->published[k].joint, jb->s->reference);
    return RB_OK;
}

/* ---- one pair --------------------------------------------------------------------------------------------- */
/* Every element name "0", "1", ...: a stage that does not name its outputs. */
static bool numbered(const rb_run_signal *sig)
{
    for (size_t i = 0; i < sig->width; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%zu", i);
        if (strcmp(sig->names[i], buf) != 0)
            return false;
    }
    return true;
}

/* Column of the estimate for each joint: by name, else (elements unnamed) by the reference channel's position. */
static int match_columns(const job *jb, const log_data *ld, const rb_suite_variant *var, const rb_run_signal *est,
                         size_t *col, rb_err *err)
{
    size_t missing = SIZE_MAX;
    for (size_t j = 0; j < jb->n_joints; j++) {
        col[j] = SIZE_MAX;
        for (size_t i = 0; i < est->width && col[j] == SIZE_MAX; i++)
            if (strcmp(est->names[i], jb->joints[j]) == 0)
                col[j] = i;
        if (col[j] == SIZE_MAX && missing == SIZE_MAX)
            missing = j;
    }
    if (missing == SIZE_MAX)
        return RB_OK;
    if (!numbered(est))
        return rb_err_set(err, RB_ENOTFOUND, "%s: estimate %s has no element '%s' (it has %zu: %s%s)", ld->label,
                          var->estimate, jb->joints[missing], est->width, est->names[0], est->width > 1 ? ", ..." : "");
    if (est->width != ld->ref->n_elements)
        return rb_err_set(err, RB_EDIM,
                          "%s: estimate %s has %zu unnamed elements but reference channel %s has %zu: cannot match "
                          "them by position",
                          ld->label, var->estimate, est->width, ld->ref->name, ld->ref->n_elements);
    for (size_t j = 0; j < jb->n_joints; j++) /* unnamed: the reference channel's positions */
        col[j] = ld->sel[j];
    return RB_OK;
}

/* The clock samples [*k0, *k1) that the reference channel and the window cover. */
/* The times scored on one log: the variant's window, else the suite's (a "from_start" one counted from the log's
 * first sample), else from the clock's first sample plus the start-up (settle) to the end. */
static void scored_window(const job *jb, const log_data *ld, const rb_suite_variant *var, const rb_clock *clk,
                          double *t0, double *t1)
{
    rb_window_resolve(var->has_window ? &var->window : &jb->s->window, ld->t_start, t0, t1);
    if (!var->has_window && !jb->s->has_window && ld->settle > 0 && clk->n)
        *t0 = clk->t[0] + ld->settle;
}

static int scored_range(const job *jb, const log_data *ld, const rb_suite_variant *var, const rb_clock *clk, size_t *k0,
                        size_t *k1, rb_err *err)
{
    const rb_channel *ref = ld->ref;
    double t0, t1;
    scored_window(jb, ld, var, clk, &t0, &t1);
    double lo = fmax(ref->time[0], t0), hi = fmin(ref->time[ref->n_samples - 1], t1);
    *k0 = 0;
    while (*k0 < clk->n && clk->t[*k0] < lo)
        (*k0)++;
    *k1 = *k0;
    while (*k1 < clk->n && clk->t[*k1] <= hi)
        (*k1)++;
    if (*k1 > *k0)
        return RB_OK;
    return rb_err_set(err, RB_EINPUT,
                      "%s: reference channel %s (t from %.17g to %.17g s)%s covers no sample of the run's clock (t "
                      "from %.17g to %.17g s)",
                      ld->label, ref->name, ref->time[0], ref->time[ref->n_samples - 1],
                      jb->s->has_window || var->has_window ? " inside the window"
                      : ld->settle > 0                     ? " after the excluded start-up (settle)"
                                                           : "",
                      clk->n ? clk->t[0] : NAN, clk->n ? clk->t[clk->n - 1] : NAN);
}

/* The step and event statistics, when the suite asks for them: every joint must have a step, the log an event. */
static int score_response(const job *jb, const log_data *ld, const rb_metric_input *in, pair_out *po, rb_err *err)
{
    const rb_suite *s = jb->s;
    size_t J = jb->n_joints, n = in->n_samples;
    int rc = RB_OK;
    if (s->step_min_jump > 0 && !(rc = rb_metrics_steps(in, s->step_min_jump, po->stats, &po->stats[J], err)))
        for (size_t j = 0; j < J; j++)
            if (po->stats[j].n_steps == 0)
                return rb_err_set(err, RB_EINPUT,
                                  "%s: joint '%s': reference channel %s has no step larger than steps.min_jump = %g "
                                  "in the scored window (t from %.17g to %.17g s): rise_time and step_delay need one",
                                  ld->label, jb->joints[j], s->reference, s->step_min_jump, in->time[0],
                                  in->time[n - 1]);
    if (!rc && s->events_channel &&
        !(rc = rb_metrics_events(in, ld->event_times, ld->n_events, s->events_a, s->events_b, po->stats, &po->stats[J],
                                 err)) &&
        po->stats[J].n_events == 0)
        return rb_err_set(err, RB_EINPUT,
                          "%s: events channel %s has no event (%zu changes of value) whose window [%g, %g] s holds a "
                          "scored sample (t from %.17g to %.17g s)",
                          ld->label, s->events_channel, ld->n_events, s->events_a, s->events_b, in->time[0],
                          in->time[n - 1]);
    return rc ? rb_err_prefix(err, rc, "%s: ", ld->label) : RB_OK;
}

/* The confusion table of the pair (roboest/metrics.h): e, r the scored samples [k0, k0 + n) of the joints, where
 * the suite's `where` signal (its columns matched like the estimate's) is set. */
static int score_confusion(const job *jb, const log_data *ld, const rb_suite_variant *var, const rb_run_result *res,
                           const double *e, const double *r, size_t k0, size_t n, pair_out *po, rb_err *err)
{
    const rb_suite *s = jb->s;
    size_t J = jb->n_joints, *col = NULL;
    double *w = NULL;
    int rc = rb_confusion_init(&po->confusion, s->n_reference_labels, s->n_labels, err);
    const rb_run_signal *ws = s->confusion_where ? rb_run_result_signal(res, s->confusion_where) : NULL;
    if (!rc && s->confusion_where) {
        rb_suite_variant wv = *var;
        wv.estimate = s->confusion_where;
        if (!ws)
            rc = rb_err_set(err, RB_EINVAL, "%s: where signal %s was not recorded", ld->label, s->confusion_where);
        else if (!(col = rb_calloc(J, sizeof *col)) || !(w = rb_malloc((n ? n : 1) * J * sizeof *w)))
            rc = nomem(err);
        else
            rc = match_columns(jb, ld, &wv, ws, col, err);
        for (size_t k = 0; !rc && k < n; k++)
            for (size_t j = 0; j < J; j++)
                w[k * J + j] = ws->data[(k0 + k) * ws->width + col[j]];
    }
    rb_confusion_input in = {var->estimate, s->reference, e, r, w, res->clock.t + k0, n, J, -INFINITY, INFINITY};
    if (!rc && (rc = rb_confusion_count(&in, &po->confusion, err)) != RB_OK)
        rb_err_prefix(err, rc, "%s: confusion: ", ld->label);
    rb_free(col);
    rb_free(w);
    return rc;
}

static int score(const job *jb, const log_data *ld, const rb_suite_variant *var, const rb_run_result *res,
                 const rb_run_signal *est, pair_out *po, rb_err *err)
{
    size_t J = jb->n_joints, k0, k1, *col = rb_calloc(J, sizeof *col);
    double *e = NULL, *r = NULL;
    int rc = col ? match_columns(jb, ld, var, est, col, err) : nomem(err);
    if (!rc && ld->ref_log &&
        (rc = rb_reference_log_check_clock(&jb->s->reference_log, ld->ref_path, ld->ref, res->clock.t, res->clock.n,
                                           err)) != RB_OK)
        rb_err_prefix(err, rc, "%s: reference_log: ", ld->label);
    if (!rc)
        rc = scored_range(jb, ld, var, &res->clock, &k0, &k1, err);
    size_t n = rc ? 0 : k1 - k0;
    if (!rc && (!(e = rb_malloc(n * J * sizeof *e)) || !(r = rb_malloc(n * J * sizeof *r))))
        rc = nomem(err);
    if (!rc) {
        rb_clock sub = {n, res->clock.t + k0};
        rc = rb_resample(ld->ref, ld->sel, J, &sub, jb->s->reference_interp, RB_NONFINITE_ERROR, r, NULL, err);
        if (rc)
            rb_err_prefix(err, rc, "%s: reference: ", ld->label);
    }
    if (!rc) {
        for (size_t k = 0; k < n; k++)
            for (size_t j = 0; j < J; j++)
                e[k * J + j] = est->data[(k0 + k) * est->width + col[j]];
        rb_metric_input in = {var->estimate, jb->s->reference, e, r, res->clock.t + k0, n, J, -INFINITY, INFINITY};
        if ((rc = rb_metrics_compute(&in, po->stats, &po->stats[J], err)) != RB_OK)
            rb_err_prefix(err, rc, "%s: ", ld->label);
        if (!rc)
            rc = score_response(jb, ld, &in, po, err);
        if (!rc && jb->s->n_labels)
            rc = score_confusion(jb, ld, var, res, e, r, k0, n, po, err);
    }
    for (size_t k = 0; !rc && k < jb->s->n_traces; k++) {
        const rb_suite_trace *tr = &jb->s->traces[k];
        if (tr->log != (size_t)(ld - jb->logs))
            continue;
        size_t j = 0;
        while (strcmp(jb->joints[j], tr->joint) != 0)
            j++;
        double w0, w1;
        rb_window_resolve(&tr->window, ld->t_start, &w0, &w1);
        po->trace_t[k] = rb_malloc((res->clock.n ? res->clock.n : 1) * sizeof(double));
        po->trace_y[k] = rb_malloc((res->clock.n ? res->clock.n : 1) * sizeof(double));
        if (!po->trace_t[k] || !po->trace_y[k])
            rc = nomem(err);
        for (size_t i = 0; !rc && i < res->clock.n; i++)
            if (res->clock.t[i] >= w0 && res->clock.t[i] <= w1) {
                po->trace_t[k][po->trace_n[k]] = res->clock.t[i];
                po->trace_y[k][po->trace_n[k]++] = est->data[i * est->width + col[j]];
            }
    }
    rb_free(col);
    rb_free(e);
    rb_free(r);
    return rc;
}

/* A reference from another file may start late or end early: the clock samples of the window it does not cover
 * are not scored, and a warning of the run says how many. */
static int note_outside(const job *jb, const log_data *ld, const rb_suite_variant *var, rb_run_result *res, rb_err *err)
{
    double t0, t1;
    scored_window(jb, ld, var, &res->clock, &t0, &t1);
    double lo = ld->ref->time[0], hi = ld->ref->time[ld->ref->n_samples - 1];
    size_t outside = 0;
    for (size_t k = 0; k < res->clock.n; k++)
        outside += res->clock.t[k] >= t0 && res->clock.t[k] <= t1 && (res->clock.t[k] < lo || res->clock.t[k] > hi);
    if (!outside)
        return RB_OK;
    char **grown = rb_realloc(res->warnings, (res->n_warnings + 1) * sizeof *grown);
    if (!grown)
        return nomem(err);
    res->warnings = grown;
    if (!(grown[res->n_warnings] =
              rb_asprintf("%s: %zu clock sample%s outside the span of %s in %s (t from %.17g to %.17g s) not scored",
                          ld->label, outside, outside > 1 ? "s" : "", jb->s->reference, ld->ref_path, lo, hi)))
        return nomem(err);
    res->n_warnings++;
    return RB_OK;
}

static int run_pair(void *ctx, size_t i, rb_err *err) /* a pool task */
{
    job *jb = ctx;
    const rb_suite *s = jb->s;
    size_t v = i / s->n_logs, l = i % s->n_logs;
    const rb_suite_variant *var = &s->variants[v];
    const log_data *ld = &jb->logs[l];
    pair_out *po = &jb->out[i];
    rb_run_result *res = NULL;
    const rb_cfg_session *ses = &s->logs[l];
    int rc =
        rb_pipeline_run_log(var->pipeline, ld->log, (const char *const *)ses->paths, ses->n_paths, NULL, &res, err);
    const rb_run_signal *est = rc ? NULL : rb_run_result_signal(res, var->estimate);
    if (!rc && !est)
        rc = rb_err_set(err, RB_EINVAL, "%s: estimate %s was not recorded", ld->label, var->estimate);
    if (!rc)
        rc = score(jb, ld, var, res, est, po, err);
    if (!rc && ld->ref_log)
        rc = note_outside(jb, ld, var, res, err);
    if (!rc) {
        po->n_samples = res->clock.n;
        po->input_sha256 = res->input_sha256;
        res->input_sha256 = NULL;
        po->warnings = res->warnings;
        po->n_warnings = res->n_warnings;
        res->warnings = NULL;
        res->n_warnings = 0;
    }
    rb_run_result_free(res);
    return rc ? rb_err_prefix(err, rc, "variant %s: ", var->name) : RB_OK;
}

/* ---- the pool ---------------------------------------------------------------------------------------------- */
static size_t thread_count(const rb_suite *s, const rb_suite_opts *opts)
{
    return opts && opts->threads ? opts->threads : s->threads;
}

/* `task` for items 0..n-1 on the pool; with `progress`, items done go to the caller's callback. */
static int run_pool(job *jb, int (*task)(void *, size_t, rb_err *), size_t n, bool progress, rb_err *err)
{
    const rb_suite_opts *o = jb->opts;
    rb_pool pl = {jb, task, n, thread_count(jb->s, o), progress && o ? o->progress : NULL, o ? o->user : NULL};
    bool cancelled = false;
    int rc = rb_pool_run(&pl, &cancelled, err);
    return cancelled ? rb_err_set(err, rc, "%s: comparison cancelled by the caller", jb->s->path) : rc;
}

/* ---- the table ------------------------------------------------------------------------------------------------ */

/* "log <name>: window": the suite's window resolved on the log, or the start-up the runs skip without one; a variant
 * with its own window adds "log <name>: variant <v>: window". */
static int window_provenance(const job *jb, rb_provenance *pv, size_t l, rb_err *err)
{
    const rb_suite *s = jb->s;
    const log_data *ld = &jb->logs[l];
    char w[128];
    double t0, t1;
    int rc = RB_OK;
    if (s->has_window) {
        rb_window_text(&s->window, w, sizeof w);
        rb_window_resolve(&s->window, ld->t_start, &t0, &t1);
        char *text = rb_asprintf("t from %.15g to %.15g s (the suite's window %s)", t0, t1, w);
        rc = text ? rb_provenance_addf(pv, text, err, "log %s: window", s->log_names[l]) : nomem(err);
        rb_free(text);
    } else {
        rc = rb_provenance_addf(pv, ld->settle_why, err, "log %s: window", s->log_names[l]);
    }
    for (size_t v = 0; !rc && v < s->n_variants; v++) {
        if (!s->variants[v].has_window)
            continue;
        rb_window_text(&s->variants[v].window, w, sizeof w);
        rb_window_resolve(&s->variants[v].window, ld->t_start, &t0, &t1);
        char *text = rb_asprintf("t from %.15g to %.15g s (%s)", t0, t1, w);
        rc = text
                 ? rb_provenance_addf(pv, text, err, "log %s: variant %s: window", s->log_names[l], s->variants[v].name)
                 : nomem(err);
        rb_free(text);
    }
    return rc;
}

static int provenance(const job *jb, rb_comparison *c, rb_err *err)
{
    const rb_suite *s = jb->s;
    rb_provenance pv = {0, NULL, NULL};
    int rc = rb_provenance_init(&pv, err);
    if (!rc)
        rc = rb_provenance_add(&pv, "suite", rb_path_basename(s->path), err);
    if (!rc)
        rc = rb_provenance_add(&pv, "suite_sha256", s->sha256, err);
    for (size_t v = 0; !rc && v < s->n_variants; v++)
        rc = rb_experiments_variant_provenance(&pv, s->variants[v].name, s->variants[v].pipeline, "estimate",
                                               s->variants[v].estimate, err);
    for (size_t l = 0; !rc && l < s->n_logs; l++) {
        rc = rb_provenance_addf(&pv, jb->logs[l].files, err, "log %s: input", s->log_names[l]);
        if (!rc) /* variant 0's */
            rc = rb_provenance_addf(&pv, jb->out[l].input_sha256, err, "log %s: input_sha256", s->log_names[l]);
        if (!rc) /* the scored samples: the window, or what the start-up skip excluded */
            rc = window_provenance(jb, &pv, l, err);
    }
    if (!rc)
        rc = rb_comparison_set_provenance(c, &pv, err);
    rb_provenance_free(&pv);
    return rc;
}

static int make_table(const job *jb, rb_comparison **out, rb_err *err)
{
    const rb_suite *s = jb->s;
    const char **variants = rb_calloc(s->n_variants, sizeof *variants);
    if (!variants)
        return nomem(err);
    for (size_t v = 0; v < s->n_variants; v++)
        variants[v] = s->variants[v].name;
    rb_comparison *c = NULL;
    int rc = rb_comparison_new(&c, s->name, s->reference, variants, s->n_variants, (const char *const *)s->log_names,
                               s->n_logs, (const char *const *)jb->joints, jb->n_joints, err);
    rb_free(variants);
    if (rc)
        return rc;
    c->n_shown = s->n_stats;
    memcpy(c->shown, s->stats, sizeof c->shown);
    c->bootstrap = s->bootstrap;
    for (size_t k = 0; !rc && k < s->n_published; k++) {
        const rb_suite_published *p = &s->published[k];
        rc = rb_comparison_add_published(c, p->variant, joint_of(jb, p->joint), p->stat, p->value, p->source, err);
    }
    for (size_t v = 0; v < s->n_variants; v++)
        for (size_t l = 0; l < s->n_logs; l++)
            for (size_t j = 0; j <= jb->n_joints; j++)
                *rb_comparison_at(c, v, j, l) = jb->out[v * s->n_logs + l].stats[j];
    if (!rc && s->n_labels)
        rc = rb_comparison_set_confusion(c, (const char *const *)s->labels, s->n_labels,
                                         (const char *const *)s->reference_labels, s->n_reference_labels,
                                         s->confusion_where, err);
    for (size_t v = 0; !rc && s->n_labels && v < s->n_variants; v++)
        for (size_t l = 0; l < s->n_logs; l++)
            *rb_comparison_confusion(c, v, l) = jb->out[v * s->n_logs + l].confusion;
    if (!rc)
        rc = provenance(jb, c, err);
    if (!rc)
        rc = rb_comparison_summarize(c, err);
    if (rc)
        rb_comparison_free(c);
    else
        *out = c;
    return rc;
}

/* ---- figures --------------------------------------------------------------------------------------------------- */
/* The figure of post-phase task `task` takes name and svg (both freed on failure). */
static int set_figure(const job *jb, size_t task, char *name, char *svg, rb_err *err)
{
    if (!name || !svg) {
        rb_free(name);
        rb_free(svg);
        return nomem(err);
    }
    jb->figures[task - POST_RMSE_BOX] = (rb_suite_figure){name, svg};
    return RB_OK;
}

/* Box plots of statistic k over every (log, joint) value of each variant; with_ref adds the reference's. */
static int box_figure(const job *jb, size_t task, size_t k, bool with_ref, const char *file, const char *title,
                      const char *y_label, rb_err *err)
{
    const rb_suite *s = jb->s;
    size_t L = s->n_logs, J = jb->n_joints, n_series = s->n_variants + with_ref;
    rb_box_series *series = rb_calloc(n_series, sizeof *series);
    double *values = rb_calloc(n_series * L * J, sizeof *values);
    int rc = series && values ? RB_OK : nomem(err);
    for (size_t b = 0; !rc && b < n_series; b++) {
        bool is_ref = b == s->n_variants;
        series[b] = (rb_box_series){is_ref ? "reference" : s->variants[b].name, values + b * L * J, L * J};
        for (size_t l = 0; l < L; l++)
            for (size_t j = 0; j < J; j++) {
                const rb_stats *st = &jb->out[(is_ref ? 0 : b) * L + l].stats[j];
                values[b * L * J + l * J + j] = is_ref ? st->mean_abs_ref : rb_stat_value(st, k);
            }
    }
    char *svg = NULL;
    if (!rc)
        rc = rb_svg_boxplot(title, y_label, series, n_series, &svg, err);
    if (!rc)
        rc = set_figure(jb, task, rb_strdup(file), svg, err);
    rb_free(series);
    rb_free(values);
    return rc;
}

static void safe_name(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
              *s == '-' || *s == '.'))
            *s = '_';
}

static int trace_figure(const job *jb, size_t k, rb_err *err)
{
    const rb_suite *s = jb->s;
    const rb_suite_trace *tr = &s->traces[k];
    const log_data *ld = &jb->logs[tr->log];
    size_t j = 0, n_lines = s->n_variants + 1;
    while (strcmp(jb->joints[j], tr->joint) != 0)
        j++;
    rb_trace_line *lines = rb_calloc(n_lines, sizeof *lines);
    double *ref_y = rb_malloc(ld->ref->n_samples * sizeof *ref_y);
    if (!lines || !ref_y) {
        rb_free(lines);
        rb_free(ref_y);
        return nomem(err);
    }
    for (size_t i = 0; i < ld->ref->n_samples; i++)
        ref_y[i] = ld->ref->data[i * ld->ref->n_elements + ld->sel[j]];
    lines[0] = (rb_trace_line){s->reference, ld->ref->time, ref_y, ld->ref->n_samples};
    double t0 = INFINITY, t1 = -INFINITY;
    for (size_t v = 0; v < s->n_variants; v++) {
        const pair_out *po = &jb->out[v * s->n_logs + tr->log];
        lines[v + 1] = (rb_trace_line){s->variants[v].name, po->trace_t[k], po->trace_y[k], po->trace_n[k]};
        if (po->trace_n[k]) {
            t0 = fmin(t0, po->trace_t[k][0]);
            t1 = fmax(t1, po->trace_t[k][po->trace_n[k] - 1]);
        }
    }
    if (tr->has_window)
        rb_window_resolve(&tr->window, ld->t_start, &t0, &t1);
    char *title = rb_asprintf("%s: %s on %s", s->name, tr->joint, s->log_names[tr->log]);
    char *file = rb_asprintf("trace_%s_%s_%zu.svg", s->log_names[tr->log], tr->joint, k);
    char *svg = NULL;
    int rc = title && file ? RB_OK : nomem(err);
    if (!rc && !(t1 > t0))
        rc =
            rb_err_set(err, RB_EINPUT, "%s: figures.traces[%zu]: no estimate sample in the trace's window", s->path, k);
    if (!rc) {
        safe_name(file);
        const char *unit = ld->ref->units[ld->sel[j]];
        char y_label[300];
        snprintf(y_label, sizeof y_label, unit[0] ? "%s (%s)" : "%s", tr->joint, unit);
        rc = rb_svg_traces(title, y_label, lines, n_lines, ld->shaded, ld->n_shaded, t0, t1, &svg, err);
    }
    if (!rc) {
        rc = set_figure(jb, POST_TRACES + k, file, svg, err);
        file = NULL;
    }
    rb_free(title);
    rb_free(file);
    rb_free(lines);
    rb_free(ref_y);
    return rc;
}

/* A post-phase task (on the pool: the table's bootstrap and the figures need only the pairs' slots). */
static int post_task(void *ctx, size_t i, rb_err *err)
{
    const job *jb = ctx;
    char title[512];
    switch (i) {
    case POST_TABLE: return make_table(jb, &jb->res->table, err);
    case POST_RMSE_BOX:
        snprintf(title, sizeof title, "%s: RMSE per joint and log", jb->s->name);
        return box_figure(jb, i, 1, false, "rmse_box.svg", title, "RMSE", err);
    case POST_MAGNITUDE_BOX:
        snprintf(title, sizeof title, "%s: mean magnitude per joint and log", jb->s->name);
        return box_figure(jb, i, 4, true, "magnitude_box.svg", title, "mean |value|", err);
    default: return trace_figure(jb, i - POST_TRACES, err);
    }
}

/* The table and the figures, made on the pool; the figures keep their slots' order. */
static int post_phase(job *jb, rb_suite_result *r, rb_err *err)
{
    size_t n_figures = POST_TRACES - POST_RMSE_BOX + jb->s->n_traces;
    if (!(jb->figures = rb_calloc(n_figures, sizeof *jb->figures)))
        return nomem(err);
    jb->res = r;
    int rc = run_pool(jb, post_task, POST_RMSE_BOX + n_figures, false, err);
    if (!rc) {
        r->figures = jb->figures;
        r->n_figures = n_figures;
        jb->figures = NULL;
    }
    return rc;
}

/* ---- gathering, in pair order ----------------------------------------------------------------------------------- */
static int gather_warnings(const job *jb, rb_suite_result *r, rb_err *err)
{
    for (size_t i = 0; i < jb->n_pairs; i++) {
        pair_out *po = &jb->out[i];
        r->n_samples += po->n_samples;
        for (size_t w = 0; w < po->n_warnings; w++) {
            bool seen = false;
            for (size_t k = 0; k < r->n_warnings && !seen; k++)
                seen = strcmp(r->warnings[k], po->warnings[w]) == 0;
            if (seen)
                continue;
            char **grown = rb_realloc(r->warnings, (r->n_warnings + 1) * sizeof *grown);
            if (!grown)
                return nomem(err);
            r->warnings = grown;
            r->warnings[r->n_warnings++] = po->warnings[w];
            po->warnings[w] = NULL;
        }
    }
    return RB_OK;
}

static void free_job(job *jb)
{
    const rb_suite *s = jb->s;
    for (size_t l = 0; jb->logs && l < s->n_logs; l++) {
        log_data *ld = &jb->logs[l];
        rb_log_free(ld->log);
        rb_log_free(ld->ref_log);
        rb_free(ld->ref_path);
        rb_free(ld->label);
        rb_free(ld->files);
        rb_free(ld->sel);
        rb_free(ld->shaded);
        rb_free(ld->event_times);
        rb_free(ld->settle_why);
    }
    rb_free(jb->logs);
    for (size_t i = 0; jb->out && i < jb->n_pairs; i++) {
        pair_out *po = &jb->out[i];
        rb_free(po->stats);
        rb_free(po->input_sha256);
        rb_strings_free(po->warnings, po->n_warnings);
        for (size_t k = 0; k < s->n_traces; k++) {
            rb_free(po->trace_t ? po->trace_t[k] : NULL);
            rb_free(po->trace_y ? po->trace_y[k] : NULL);
        }
        rb_free(po->trace_t);
        rb_free(po->trace_y);
        rb_free(po->trace_n);
    }
    rb_free(jb->out);
    rb_strings_free(jb->joints, jb->n_joints);
    for (size_t k = 0; jb->figures && k < POST_TRACES - POST_RMSE_BOX + s->n_traces; k++) {
        rb_free(jb->figures[k].name);
        rb_free(jb->figures[k].svg);
    }
    rb_free(jb->figures);
}

static int alloc_slots(job *jb, rb_err *err)
{
    const rb_suite *s = jb->s;
    size_t nt = s->n_traces ? s->n_traces : 1;
    if (!(jb->out = rb_calloc(jb->n_pairs, sizeof *jb->out)))
        return nomem(err);
    for (size_t i = 0; i < jb->n_pairs; i++) {
        pair_out *po = &jb->out[i];
        po->stats = rb_calloc(jb->n_joints + 1, sizeof *po->stats);
        po->trace_t = rb_calloc(nt, sizeof *po->trace_t);
        po->trace_y = rb_calloc(nt, sizeof *po->trace_y);
        po->trace_n = rb_calloc(nt, sizeof *po->trace_n);
        if (!po->stats || !po->trace_t || !po->trace_y || !po->trace_n)
            return nomem(err);
    }
    return RB_OK;
}

void rb_suite_result_free(rb_suite_result *r)
{
    if (!r)
        return;
    rb_comparison_free(r->table);
    for (size_t i = 0; i < r->n_figures; i++) {
        rb_free(r->figures[i].name);
        rb_free(r->figures[i].svg);
    }
    rb_free(r->figures);
    rb_strings_free(r->warnings, r->n_warnings);
    rb_free(r);
}

int rb_suite_run(const rb_suite *s, const rb_suite_opts *opts, rb_suite_result **out, rb_err *err)
{
    *out = NULL;
    job jb = {0};
    jb.s = s;
    jb.opts = opts;
    jb.n_pairs = s->n_variants * s->n_logs;
    rb_suite_result *r = rb_calloc(1, sizeof *r);
    int rc = r && (jb.logs = rb_calloc(s->n_logs, sizeof *jb.logs)) ? RB_OK : nomem(err);
    if (!rc)
        rc = run_pool(&jb, read_log, s->n_logs, false, err);
    for (size_t l = 0; !rc && l < s->n_logs; l++)
        rc = prepare_log(&jb, l, err);
    if (!rc)
        rc = check_trace_joints(&jb, err);
    if (!rc)
        rc = alloc_slots(&jb, err);
    if (!rc)
        rc = run_pool(&jb, run_pair, jb.n_pairs, true, err);
    if (!rc)
        rc = post_phase(&jb, r, err);
    if (!rc)
        rc = gather_warnings(&jb, r, err);
    if (r)
        r->n_pairs = jb.n_pairs;
    free_job(&jb);
    if (rc)
        rb_suite_result_free(r);
    else
        *out = r;
    return rc;
}

/* ---- writing ---------------------------------------------------------------------------------------------------- */
int rb_suite_result_write(const rb_suite_result *r, const char *dir, bool overwrite, rb_err *err)
{
    static const char *const reports[] = {"report.md", "report.json", "report.csv"};
    static const rb_report_format formats[] = {RB_REPORT_MARKDOWN, RB_REPORT_JSON, RB_REPORT_CSV};
    size_t n = 3 + r->n_figures;
    const char **names = rb_calloc(n, sizeof *names);
    char **texts = rb_calloc(n, sizeof *texts);
    int rc = names && texts ? RB_OK : nomem(err);
    for (size_t i = 0; !rc && i < 3; i++) {
        names[i] = reports[i];
        rc = rb_comparison_render(r->table, formats[i], &texts[i], err);
    }
    for (size_t i = 0; !rc && i < r->n_figures; i++) {
        names[3 + i] = r->figures[i].name;
        texts[3 + i] = r->figures[i].svg;
    }
    if (!rc)
        rc = rb_texts_write(dir, names, (const char *const *)texts, n, overwrite, err);
    for (size_t i = 0; texts && i < 3; i++)
        rb_free(texts[i]);
    rb_free(texts);
    rb_free(names);
    return rc;
}
