/* Running a comparison suite's (variant, log) pairs: read the logs a set of runs needs, run the pairs on a pool of
 * threads, score the estimates against the reference channel, and leave each run's result as data (rb_suite_pair);
 * the report is made from those alone (suite_report.c), so the bytes never depend on the thread count, on timing
 * or on where the runs were made. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "experiments_internal.h"

/* What one log brings, prepared before any pair runs (read-only afterwards). */
typedef struct log_data {
    rb_log *log;           /* with --memory-limit: src's channels, their samples absent when read in parts */
    rb_log_source *src;    /* with --memory-limit (a session of one file), else NULL */
    rb_channel ref_copy;   /* a reference read in parts, read whole for the figures' traces */
    double ref_t0, ref_t1; /* the reference's first and last time */
    rb_log *ref_log;       /* the suite's reference_log for this log (NULL: the reference is in log) */
    char *ref_path;
    char ref_sha[65]; /* of ref_path's file, for the run's key */
    char *label;      /* its files joined by " + " */
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
typedef rb_suite_pair pair_out;

struct rb_suite_runner {
    const rb_suite *s;
    rb_suite_opts opts;
    char (*psha)[65]; /* each variant's pipeline hash, for the keys */
    const char **pp;
    size_t n_joints;
    char **joints;  /* the suite's, or the first log's reference elements once read (NULL until then) */
    char *log0_sha; /* the first log's files' hashes, when it names the joints */
    rb_suite_finished_fn finished;
    void *finished_user;
};

typedef struct job {
    const rb_suite *s;
    rb_suite_runner *rn;
    log_data *logs;       /* n_logs slots, the needed ones read */
    size_t n_need, *need; /* logs to read, in log order */
    size_t n_joints;
    char **joints; /* n_joints names (the runner's) */
    const size_t *items;
    pair_out **out; /* one per item */
    size_t n_pairs;
    const rb_suite_opts *opts;
    /* --memory-limit: the process's limit shared (rb_suite_opts.memory_limit); 0: none */
    size_t budget;  /* this runner's part: memory_limit / memory_parts */
    size_t at_once; /* runs at once on this runner's pool */
    size_t held;    /* what the job holds whole beside the runs (logs of layouts read whole, traces' references) */
    size_t share;   /* each run's: (budget - held) / at_once */
} job;

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

static char *join_paths(const rb_cfg_session *ses, const char *sep, bool base)
{
    return rb_suite_session_text(ses, sep, base);
}

/* ---- logs: read, checked, prepared ---------------------------------------------------------------------- */
/* The joint names: the suite's, or every element of the first log's reference channel; kept by the runner. */
static int choose_joints(job *jb, rb_err *err)
{
    const rb_suite *s = jb->s;
    rb_suite_runner *rn = jb->rn;
    const rb_channel *ref = s->n_joints ? NULL : jb->logs[0].ref;
    size_t n = s->n_joints ? s->n_joints : ref->n_elements;
    if (n == 0)
        return rb_err_set(err, RB_EINPUT, "%s: reference channel %s has no elements", jb->logs[0].label, ref->name);
    if (!(rn->joints = rb_calloc(n, sizeof *rn->joints)))
        return nomem(err);
    for (size_t j = 0; j < n; j++, rn->n_joints++)
        if (!(rn->joints[j] = rb_strdup(s->n_joints ? s->joints[j] : ref->element_names[j])))
            return nomem(err);
    int rc = s->n_joints ? RB_OK : rb_suite_session_sha(&s->logs[0], &rn->log0_sha, err);
    jb->joints = rn->joints, jb->n_joints = rn->n_joints;
    return rc;
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

/* A channel scanned in order, whole or part by part (suite_window.c): the contact stretches or the event times. */
typedef struct scan {
    const rb_suite *s;
    log_data *ld;
    size_t n, cap; /* elements; event_times' room */
    bool in, has_prev;
    double *prev; /* the events channel's previous sample */
} scan;

/* Stretches where any element of the contact channel exceeds the threshold in magnitude. */
static int contact_part(void *user, const double *time, const double *x, size_t n_samples, rb_err *err)
{
    scan *sc = user;
    log_data *ld = sc->ld;
    for (size_t t = 0; t < n_samples; t++) {
        bool active = false;
        for (size_t i = 0; i < sc->n && !active; i++)
            active = fabs(x[t * sc->n + i]) > sc->s->contact_threshold;
        if (active && !sc->in) {
            rb_interval *grown = rb_realloc(ld->shaded, (ld->n_shaded + 1) * sizeof *grown);
            if (!grown)
                return nomem(err);
            ld->shaded = grown;
            ld->shaded[ld->n_shaded++] = (rb_interval){time[t], time[t]};
        }
        if (active)
            ld->shaded[ld->n_shaded - 1].t1 = time[t];
        sc->in = active;
    }
    return RB_OK;
}

/* The times at which any element of the events channel changes value (NaN to NaN is no change). */
static int events_part(void *user, const double *time, const double *x, size_t n_samples, rb_err *err)
{
    scan *sc = user;
    log_data *ld = sc->ld;
    size_t n = sc->n;
    for (size_t t = 0; t < n_samples; t++) {
        const double *b = x + t * n;
        bool changed = false;
        for (size_t i = 0; i < n && !changed && sc->has_prev; i++)
            changed = sc->prev[i] != b[i] && !(isnan(sc->prev[i]) && isnan(b[i]));
        if (changed && ld->n_events == sc->cap) {
            size_t cap = sc->cap ? 2 * sc->cap : 64;
            double *grown = rb_realloc(ld->event_times, cap * sizeof *grown);
            if (!grown)
                return nomem(err);
            ld->event_times = grown, sc->cap = cap;
        }
        if (changed)
            ld->event_times[ld->n_events++] = time[t];
        for (size_t i = 0; i < n; i++)
            sc->prev[i] = b[i];
        sc->has_prev = true;
    }
    return RB_OK;
}

/* Channel `name` (what: the suite's key naming it) scanned by fn, whole or in parts. */
static int scan_channel(const rb_suite *s, log_data *ld, const char *name, const char *what, rb_suite_part_fn fn,
                        rb_err *err)
{
    const rb_channel *ch = rb_log_find(ld->log, name);
    if (!ch)
        return rb_err_set(err, RB_ENOTFOUND, "%s: %s channel %s not found (%s)", ld->label,
                          fn == contact_part ? "contact" : "events", name, what);
    scan sc = {
        s, ld, ch->n_elements, 0, false, false, rb_malloc((ch->n_elements ? ch->n_elements : 1) * sizeof(double))};
    int rc = sc.prev ? RB_OK : nomem(err);
    if (!rc && ch->time)
        rc = fn(&sc, ch->time, ch->data, ch->n_samples, err);
    else if (!rc)
        rc = rb_suite_channel_parts(ld->src, ch, 4096, fn, &sc, err);
    rb_free(sc.prev);
    return rc;
}

/* Run by the pool, one needed log per task: reading is the part of a log that needs no other log. */
static int read_log(void *ctx, size_t i, rb_err *err)
{
    job *jb = ctx;
    size_t l = jb->need[i];
    log_data *ld = &jb->logs[l];
    const rb_cfg_session *ses = &jb->s->logs[l];
    ld->label = join_paths(ses, " + ", false);
    if (!ld->label)
        return nomem(err);
    size_t limit = jb->budget;
    int rc;
    if (limit && ses->n_paths == 1) { /* opened only: what is read whole is said up front (rb_log_source_open) */
        if (!(rc = rb_log_source_open(ses->paths[0], limit, &ld->src, err)))
            ld->log = (rb_log *)rb_log_source_log(ld->src);
    } else {
        rc = rb_log_read_session((const char *const *)ses->paths, ses->n_paths, &ld->log, NULL, err);
    }
    if (!rc && jb->s->reference_log.path &&
        (rc = rb_reference_log_read(&jb->s->reference_log, ses->paths[0], jb->s->reference, &ld->ref_path, &ld->ref_log,
                                    &ld->ref, err)) != RB_OK)
        rb_err_prefix(err, rc, "%s: reference_log: ", ld->label);
    if (!rc && ld->ref_path)
        rc = rb_sha256_file(ld->ref_path, ld->ref_sha, err);
    return rc;
}

/* The start-up every variant skips on this log when neither it nor the suite has a window: the suite's "settle", else
 * the largest of the variants' pipelines' (rb_pipeline_settle at the period each runs at), so that every variant is
 * scored on the same samples. */
static int log_settle(job *jb, log_data *ld, rb_err *err)
{
    const rb_suite *s = jb->s;
    bool parts = ld->src && rb_log_source_chunked(ld->src);
    int rc = RB_OK;
    if (parts && (rc = rb_log_source_start(ld->src, &ld->t_start, err)) != RB_OK)
        return rc;
    if (!parts)
        ld->t_start = rb_log_start(ld->log);
    ld->settle = s->has_settle ? s->settle : 0.0;
    size_t by = SIZE_MAX;
    long stage = -1;
    for (size_t v = 0; v < s->n_variants && !s->has_settle; v++) {
        const rb_pipeline *p = s->variants[v].pipeline;
        long st;
        const rb_channel *clk = parts && p->clock_channel ? rb_log_find(ld->log, p->clock_channel) : NULL;
        rb_channel times = {0};
        rb_log one = {.n_channels = 1, .channels = &times}; /* the clock channel's times alone */
        if (clk && (rc = rb_suite_channel_whole(ld->src, clk, false, jb->budget, ld->label,
                                                "the start-up to skip (the clock's median interval)", &times, err)))
            return rc;
        double t = rb_pipeline_settle(p, rb_pipeline_period(p, clk ? &one : ld->log), &st);
        rb_suite_channel_free(&times);
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
    if (!ld->ref->time) { /* read in parts: its span, and the whole channel only for a figure's trace */
        bool traced = false;
        for (size_t k = 0; k < s->n_traces; k++)
            traced |= s->traces[k].log == l;
        size_t c = (size_t)(ld->ref - ld->log->channels), T = ld->ref->n_samples;
        if ((rc = rb_log_source_read(ld->src, c, 0, 1, &ld->ref_t0, NULL, err)) ||
            (rc = rb_log_source_read(ld->src, c, T - 1, 1, &ld->ref_t1, NULL, err)))
            return rc;
        if (traced && (rc = rb_suite_channel_whole(ld->src, ld->ref, true, jb->budget, ld->label,
                                                   "a figure's trace (figures.traces)", &ld->ref_copy, err)))
            return rc;
        if (traced)
            ld->ref = &ld->ref_copy;
    } else {
        ld->ref_t0 = ld->ref->time[0], ld->ref_t1 = ld->ref->time[ld->ref->n_samples - 1];
    }
    if (l == 0 && !jb->joints && (rc = choose_joints(jb, err)))
        return rc;
    rc = select_joints(jb, ld, err);
    if (!rc && s->contact_channel)
        rc = scan_channel(s, ld, s->contact_channel, "figures.contact.channel", contact_part, err);
    if (!rc && s->events_channel)
        rc = scan_channel(s, ld, s->events_channel, "events.channel", events_part, err);
    return rc ? rc : log_settle(jb, ld, err);
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
    double lo = fmax(ld->ref_t0, t0), hi = fmin(ld->ref_t1, t1);
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
                      ld->label, ref->name, ld->ref_t0, ld->ref_t1,
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
        if (ld->ref->data) /* else read in parts: window by window, the same numbers */
            rc = rb_resample(ld->ref, ld->sel, J, &sub, jb->s->reference_interp, RB_NONFINITE_ERROR, r, NULL, err);
        else
            rc = rb_suite_resample_parts(jb->s->logs[ld - jb->logs].paths[0], jb->share, jb->s->reference, ld->sel, J,
                                         &sub, jb->s->reference_interp, r, err);
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
        rb_suite_pair_trace *t = &po->traces[k];
        t->est_t = rb_malloc((res->clock.n ? res->clock.n : 1) * sizeof(double));
        t->est_y = rb_malloc((res->clock.n ? res->clock.n : 1) * sizeof(double));
        if (!t->est_t || !t->est_y)
            rc = nomem(err);
        for (size_t i = 0; !rc && i < res->clock.n; i++)
            if (res->clock.t[i] >= w0 && res->clock.t[i] <= w1) {
                t->est_t[t->est_n] = res->clock.t[i];
                t->est_y[t->est_n++] = est->data[i * est->width + col[j]];
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

/* The log's facts the report shows, copied into the run: its start, the start-up excluded, the joints, and for the
 * figures' traces on it the reference's samples of the joint and the contact stretches. */
static int log_facts(const job *jb, const log_data *ld, size_t l, pair_out *po, rb_err *err)
{
    const rb_suite *s = jb->s;
    po->t_start = ld->t_start;
    if (ld->settle_why && !(po->settle_why = rb_strdup(ld->settle_why)))
        return nomem(err);
    for (size_t j = 0; j < jb->n_joints; j++)
        if (!(po->joints[j] = rb_strdup(jb->joints[j])))
            return nomem(err);
    bool traced = false;
    for (size_t k = 0; k < s->n_traces; k++) {
        if (s->traces[k].log != l)
            continue;
        traced = true;
        size_t j = 0, n = ld->ref->n_samples;
        while (strcmp(jb->joints[j], s->traces[k].joint) != 0)
            j++;
        rb_suite_pair_trace *t = &po->traces[k];
        t->ref_t = rb_malloc((n ? n : 1) * sizeof(double));
        t->ref_y = rb_malloc((n ? n : 1) * sizeof(double));
        t->unit = rb_strdup(ld->ref->units[ld->sel[j]]);
        if (!t->ref_t || !t->ref_y || !t->unit)
            return nomem(err);
        for (size_t i = 0; i < n; i++) {
            t->ref_t[i] = ld->ref->time[i];
            t->ref_y[i] = ld->ref->data[i * ld->ref->n_elements + ld->sel[j]];
        }
        t->ref_n = n;
    }
    if (traced && ld->n_shaded) {
        if (!(po->shaded = rb_malloc(ld->n_shaded * sizeof *po->shaded)))
            return nomem(err);
        memcpy(po->shaded, ld->shaded, ld->n_shaded * sizeof *po->shaded);
        po->n_shaded = ld->n_shaded;
    }
    return RB_OK;
}

/* ---- the memory limit, shared ------------------------------------------------------------------------------- */
static size_t channel_bytes(const rb_channel *ch)
{
    return ch->time ? ch->n_samples * ((ch->data ? ch->n_elements : 0) + 1) * sizeof(double) : 0;
}

static size_t log_bytes(const rb_log *log)
{
    size_t b = 0;
    for (size_t c = 0; log && c < log->n_channels; c++)
        b += channel_bytes(&log->channels[c]);
    return b;
}

static double mib(size_t bytes) { return (double)bytes / 1048576.0; }

/* How the limit is shared, for messages: " (... MiB: ...)". */
static void limit_note(const job *jb, char *buf, size_t size)
{
    size_t parts = jb->opts->memory_parts ? jb->opts->memory_parts : 1, runs = jb->at_once * parts;
    size_t whole = jb->opts->memory_limit;
    int n = snprintf(buf, size, " (one run's share: %.1f MiB of the limit of %.1f MiB, %zu run%s at once",
                     mib(jb->share), mib(whole), runs, runs == 1 ? "" : "s");
    if (n > 0 && (size_t)n < size && jb->held)
        n += snprintf(buf + n, size - (size_t)n, ", less %.1f MiB the suite holds whole", mib(jb->held));
    if (n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, ": raise the limit or run fewer at once)");
}

/* With a memory limit, once the logs are prepared and before any run: what the job holds whole beside the runs (the
 * logs of layouts read whole, the references of figures' traces, reference_log files), added in log order against
 * this runner's part of the limit, then each run's share of the rest. */
static int share_memory(job *jb, rb_err *err)
{
    for (size_t k = 0; k < jb->n_need; k++) {
        const log_data *ld = &jb->logs[jb->need[k]];
        size_t b =
            log_bytes(ld->log) + log_bytes(ld->ref_log) + (ld->ref == &ld->ref_copy ? channel_bytes(ld->ref) : 0);
        jb->held += b;
        if (jb->held < jb->budget)
            continue;
        return rb_err_set(err, RB_EINPUT,
                          "%s: the suite holds %.1f MiB whole with this log (%.1f MiB of it: logs that cannot be read "
                          "in parts, a figure's trace of the reference, a reference_log), over the memory limit of "
                          "%.1f MiB before any run: raise the limit",
                          ld->label, mib(jb->held), mib(b), mib(jb->budget));
    }
    jb->share = (jb->budget - jb->held) / jb->at_once;
    jb->share += !jb->share; /* a byte, not 0 (no limit): the runs say they need more */
    return RB_OK;
}

static int run_pair(void *ctx, size_t item, rb_err *err) /* a pool task */
{
    job *jb = ctx;
    const rb_suite *s = jb->s;
    size_t i = jb->items[item], v = i / s->n_logs, l = i % s->n_logs;
    const rb_suite_variant *var = &s->variants[v];
    const log_data *ld = &jb->logs[l];
    pair_out *po = jb->out[item];
    rb_run_result *res = NULL;
    const rb_cfg_session *ses = &s->logs[l];
    const char *const *paths = (const char *const *)ses->paths;
    rb_run_opts lim = {.memory_limit = jb->share};
    int rc = lim.memory_limit ? rb_pipeline_run_windowed(var->pipeline, paths, ses->n_paths, &lim, &res, err)
                              : rb_pipeline_run_log(var->pipeline, ld->log, paths, ses->n_paths, NULL, &res, err);
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
        po->has_confusion = s->n_labels > 0;
        rb_suite_pair_key(s, jb->rn->pp, v, l, po->input_sha256, ld->ref_sha, jb->rn->log0_sha, po->key);
        rc = log_facts(jb, ld, l, po, err);
        if (!rc && jb->rn->finished)
            rc = jb->rn->finished(jb->rn->finished_user, i, po, err);
    }
    rb_run_result_free(res);
    if (rc && jb->share && jb->share < jb->opts->memory_limit &&
        strstr(err->msg, "memory limit")) { /* the run's share named: the limit is the process's */
        size_t len = strlen(err->msg);
        limit_note(jb, err->msg + len, sizeof err->msg - len);
    }
    return rc ? rb_err_prefix(err, rc, "variant %s: ", var->name) : RB_OK;
}

/* ---- the pool ---------------------------------------------------------------------------------------------- */
static size_t thread_count(const rb_suite *s, const rb_suite_opts *opts)
{
    return opts && opts->threads ? opts->threads : s->threads;
}

/* The runs at once on the pool (rb_pool_run's count). */
static size_t runs_at_once(const rb_suite *s, const rb_suite_opts *opts, size_t n)
{
    size_t t = thread_count(s, opts);
    if (t == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        t = cores > 0 ? (size_t)cores : 1;
    }
    return t < n ? t : n ? n : 1;
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

/* ---- the runner ------------------------------------------------------------------------------------------------ */
int rb_suite_runner_new(const rb_suite *s, const rb_suite_opts *opts, rb_suite_runner **out, rb_err *err)
{
    *out = NULL;
    rb_suite_runner *rn = rb_calloc(1, sizeof *rn);
    if (!rn || !(rn->psha = rb_calloc(s->n_variants, sizeof *rn->psha)) ||
        !(rn->pp = rb_calloc(s->n_variants, sizeof *rn->pp))) {
        rb_suite_runner_free(rn);
        return nomem(err);
    }
    rn->s = s;
    if (opts)
        rn->opts = *opts;
    int rc = RB_OK;
    for (size_t v = 0; !rc && v < s->n_variants; v++) {
        rc = rb_suite_pipeline_sha(s, v, rn->psha[v], err);
        rn->pp[v] = rn->psha[v];
    }
    if (rc)
        rb_suite_runner_free(rn);
    else
        *out = rn;
    return rc;
}

void rb_suite_runner_on_finished(rb_suite_runner *rn, rb_suite_finished_fn fn, void *user)
{
    rn->finished = fn;
    rn->finished_user = user;
}

void rb_suite_runner_free(rb_suite_runner *rn)
{
    if (!rn)
        return;
    rb_free(rn->psha);
    rb_free(rn->pp);
    rb_strings_free(rn->joints, rn->n_joints);
    rb_free(rn->log0_sha);
    rb_free(rn);
}

static void free_job(job *jb)
{
    const rb_suite *s = jb->s;
    for (size_t l = 0; jb->logs && l < s->n_logs; l++) {
        log_data *ld = &jb->logs[l];
        if (ld->src)
            rb_log_source_free(ld->src);
        else
            rb_log_free(ld->log);
        rb_suite_channel_free(&ld->ref_copy);
        rb_log_free(ld->ref_log);
        rb_free(ld->ref_path);
        rb_free(ld->label);
        rb_free(ld->sel);
        rb_free(ld->shaded);
        rb_free(ld->event_times);
        rb_free(ld->settle_why);
    }
    rb_free(jb->logs);
    rb_free(jb->need);
}

/* The logs the items need (and the first, while it has to name the joints), in log order. */
static int plan_logs(job *jb, rb_err *err)
{
    const rb_suite *s = jb->s;
    if (!(jb->logs = rb_calloc(s->n_logs, sizeof *jb->logs)) || !(jb->need = rb_calloc(s->n_logs, sizeof *jb->need)))
        return nomem(err);
    bool *needed = rb_calloc(s->n_logs, sizeof *needed);
    if (!needed)
        return nomem(err);
    for (size_t k = 0; k < jb->n_pairs; k++)
        needed[jb->items[k] % s->n_logs] = true;
    needed[0] |= !jb->joints;
    for (size_t l = 0; l < s->n_logs; l++)
        if (needed[l])
            jb->need[jb->n_need++] = l;
    rb_free(needed);
    return RB_OK;
}

int rb_suite_runner_run(rb_suite_runner *rn, const size_t *items, size_t n, rb_suite_pair **runs, rb_err *err)
{
    const rb_suite *s = rn->s;
    job jb = {0};
    jb.s = s;
    jb.rn = rn;
    jb.opts = &rn->opts;
    jb.items = items;
    jb.n_pairs = n;
    jb.out = runs;
    jb.joints = rn->joints, jb.n_joints = rn->n_joints;
    jb.budget = rn->opts.memory_limit / (rn->opts.memory_parts ? rn->opts.memory_parts : 1);
    jb.at_once = runs_at_once(s, &rn->opts, n);
    for (size_t k = 0; k < n; k++)
        runs[k] = NULL;
    for (size_t k = 0; k < n; k++)
        if (items[k] >= s->n_variants * s->n_logs)
            return rb_err_set(err, RB_EINVAL, "%s: run %zu of %zu runs", s->path, items[k], s->n_variants * s->n_logs);
    /* the suite's joints: no log is read for them (a run reads its own log only) */
    int rc = !jb.joints && s->n_joints ? choose_joints(&jb, err) : RB_OK;
    if (!rc)
        rc = plan_logs(&jb, err);
    if (!rc)
        rc = run_pool(&jb, read_log, jb.n_need, false, err);
    for (size_t k = 0; !rc && k < jb.n_need; k++)
        rc = prepare_log(&jb, jb.need[k], err);
    if (!rc && jb.budget)
        rc = share_memory(&jb, err);
    if (rc && jb.budget < rn->opts.memory_limit && strstr(err->msg, "memory limit")) { /* a part of the process's */
        size_t len = strlen(err->msg), parts = rn->opts.memory_parts;
        snprintf(err->msg + len, sizeof err->msg - len,
                 " (%.1f MiB: a 1/%zu part of the limit of %.1f MiB, for %zu threads)", mib(jb.budget), parts,
                 mib(rn->opts.memory_limit), parts);
    }
    if (!rc)
        rc = rb_suite_check_joints(s, jb.joints, jb.n_joints, err);
    for (size_t k = 0; !rc && k < n; k++)
        if (!(runs[k] = rb_suite_pair_alloc(jb.n_joints, s->n_traces)))
            rc = nomem(err);
    if (!rc)
        rc = run_pool(&jb, run_pair, n, true, err);
    free_job(&jb);
    for (size_t k = 0; rc && k < n; k++) {
        rb_suite_pair_free(runs[k]);
        runs[k] = NULL;
    }
    return rc;
}

/* ---- a whole suite in this process ------------------------------------------------------------------------------ */
/* Through the byte form and back: the report reads what a store or another process would give it. */
static int through_bytes(rb_suite_pair **r, const char *what, rb_err *err)
{
    unsigned char *bytes = NULL;
    size_t len = 0;
    rb_suite_pair *back = NULL;
    int rc = rb_suite_pair_encode(*r, &bytes, &len, err);
    if (!rc)
        rc = rb_suite_pair_decode(bytes, len, what, &back, err);
    rb_free(bytes);
    if (!rc) {
        rb_suite_pair_free(*r);
        *r = back;
    }
    return rc;
}

int rb_suite_run(const rb_suite *s, const rb_suite_opts *opts, rb_suite_result **out, rb_err *err)
{
    *out = NULL;
    size_t n = s->n_variants * s->n_logs;
    rb_suite_runner *rn = NULL;
    size_t *items = rb_calloc(n, sizeof *items);
    rb_suite_pair **runs = rb_calloc(n, sizeof *runs);
    int rc = items && runs ? rb_suite_runner_new(s, opts, &rn, err) : nomem(err);
    for (size_t i = 0; i < n && items; i++)
        items[i] = i;
    if (!rc)
        rc = rb_suite_runner_run(rn, items, n, runs, err);
    for (size_t i = 0; !rc && i < n; i++)
        rc = through_bytes(&runs[i], s->path, err);
    if (!rc)
        rc = rb_suite_report(s, opts, runs, out, err);
    for (size_t i = 0; runs && i < n; i++)
        rb_suite_pair_free(runs[i]);
    rb_free(runs);
    rb_free(items);
    rb_suite_runner_free(rn);
    return rc;
}
