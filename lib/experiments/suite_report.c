/* A suite's report from its runs (rb_suite_pair, suite_store.c) alone: the table with its bootstrap and the
 * figures as pool tasks into fixed slots, then the warnings in run order; nothing here reads a log, so runs made
 * in other processes or read back from a store give the same bytes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "experiments_internal.h"

typedef struct report {
    const rb_suite *s;
    const rb_suite_opts *opts;
    rb_suite_pair *const *runs; /* n_variants x n_logs, variant-major */
    size_t n_joints;
    char **joints;            /* borrowed from runs[0] */
    rb_suite_result *res;     /* the table goes here */
    rb_suite_figure *figures; /* 2 + n_traces slots (box plots, traces), filled by the post-phase tasks */
} report;

/* Post-phase tasks, each with its own slot: the table, the two box plots, then one per trace. Task i > 0
 * makes figure i - 1. */
enum { POST_TABLE, POST_RMSE_BOX, POST_MAGNITUDE_BOX, POST_TRACES };

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

char *rb_suite_session_text(const rb_cfg_session *ses, const char *sep, bool base)
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

/* The index of a joint name (NULL: all joints, n_joints); SIZE_MAX when it is not scored. */
static size_t joint_of(char *const *joints, size_t n_joints, const char *name)
{
    if (!name)
        return n_joints;
    for (size_t j = 0; j < n_joints; j++)
        if (strcmp(joints[j], name) == 0)
            return j;
    return SIZE_MAX;
}

int rb_suite_check_joints(const rb_suite *s, char *const *joints, size_t n_joints, rb_err *err)
{
    for (size_t k = 0; k < s->n_traces; k++)
        if (joint_of(joints, n_joints, s->traces[k].joint) == SIZE_MAX)
            return rb_err_set(err, RB_ENOTFOUND,
                              "%s: figures.traces[%zu]: joint '%s' is not an element of the "
                              "reference channel %s",
                              s->path, k, s->traces[k].joint, s->reference);
    for (size_t k = 0; k < s->n_published; k++)
        if (joint_of(joints, n_joints, s->published[k].joint) == SIZE_MAX)
            return rb_err_set(err, RB_ENOTFOUND,
                              "%s: published[%zu]: joint '%s' is not an element of the reference channel %s", s->path,
                              k, s->published[k].joint, s->reference);
    return RB_OK;
}

/* ---- the pool ---------------------------------------------------------------------------------------------- */
static size_t thread_count(const rb_suite *s, const rb_suite_opts *opts)
{
    return opts && opts->threads ? opts->threads : s->threads;
}

/* `task` for items 0..n-1 on the pool; with `progress`, items done go to the caller's callback. */
static int run_pool(report *jb, int (*task)(void *, size_t, rb_err *), size_t n, bool progress, rb_err *err)
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
static int window_provenance(const report *jb, rb_provenance *pv, size_t l, rb_err *err)
{
    const rb_suite *s = jb->s;
    const rb_suite_pair *ld = jb->runs[l]; /* variant 0's: the log's facts are the same in every run of it */
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

static int provenance(const report *jb, rb_comparison *c, rb_err *err)
{
    const rb_suite *s = jb->s;
    rb_provenance pv;
    int rc = rb_experiments_provenance_open(&pv, "suite", s->path, s->sha256, err);
    for (size_t v = 0; !rc && v < s->n_variants; v++)
        rc = rb_experiments_variant_provenance(&pv, s->variants[v].name, s->variants[v].pipeline, "estimate",
                                               s->variants[v].estimate, err);
    for (size_t l = 0; !rc && l < s->n_logs; l++) {
        char *files = rb_suite_session_text(&s->logs[l], ",", true);
        rc = files ? rb_provenance_addf(&pv, files, err, "log %s: input", s->log_names[l]) : nomem(err);
        rb_free(files);
        if (!rc) /* variant 0's */
            rc = rb_provenance_addf(&pv, jb->runs[l]->input_sha256, err, "log %s: input_sha256", s->log_names[l]);
        if (!rc) /* the scored samples: the window, or what the start-up skip excluded */
            rc = window_provenance(jb, &pv, l, err);
    }
    return rb_experiments_provenance_close(&pv, rc, c, err);
}

static int make_table(const report *jb, rb_comparison **out, rb_err *err)
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
        rc = rb_comparison_add_published(c, p->variant, joint_of(jb->joints, jb->n_joints, p->joint), p->stat, p->value,
                                         p->source, err);
    }
    for (size_t v = 0; v < s->n_variants; v++)
        for (size_t l = 0; l < s->n_logs; l++)
            for (size_t j = 0; j <= jb->n_joints; j++)
                *rb_comparison_at(c, v, j, l) = jb->runs[v * s->n_logs + l]->stats[j];
    if (!rc && s->n_labels)
        rc = rb_comparison_set_confusion(c, (const char *const *)s->labels, s->n_labels,
                                         (const char *const *)s->reference_labels, s->n_reference_labels,
                                         s->confusion_where, err);
    for (size_t v = 0; !rc && s->n_labels && v < s->n_variants; v++)
        for (size_t l = 0; l < s->n_logs; l++)
            *rb_comparison_confusion(c, v, l) = jb->runs[v * s->n_logs + l]->confusion;
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
static int set_figure(const report *jb, size_t task, char *name, char *svg, rb_err *err)
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
static int box_figure(const report *jb, size_t task, size_t k, bool with_ref, const char *file, const char *title,
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
                const rb_stats *st = &jb->runs[(is_ref ? 0 : b) * L + l]->stats[j];
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

static int trace_figure(const report *jb, size_t k, rb_err *err)
{
    const rb_suite *s = jb->s;
    const rb_suite_trace *tr = &s->traces[k];
    const rb_suite_pair *ld = jb->runs[tr->log]; /* variant 0's: the reference and the shading */
    const rb_suite_pair_trace *rt = &ld->traces[k];
    size_t n_lines = s->n_variants + 1;
    rb_trace_line *lines = rb_calloc(n_lines, sizeof *lines);
    if (!lines)
        return nomem(err);
    lines[0] = (rb_trace_line){s->reference, rt->ref_t, rt->ref_y, rt->ref_n};
    double t0 = INFINITY, t1 = -INFINITY;
    for (size_t v = 0; v < s->n_variants; v++) {
        const rb_suite_pair_trace *po = &jb->runs[v * s->n_logs + tr->log]->traces[k];
        lines[v + 1] = (rb_trace_line){s->variants[v].name, po->est_t, po->est_y, po->est_n};
        if (po->est_n) {
            t0 = fmin(t0, po->est_t[0]);
            t1 = fmax(t1, po->est_t[po->est_n - 1]);
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
        const char *unit = rt->unit ? rt->unit : "";
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
    return rc;
}

/* A post-phase task (on the pool: the table's bootstrap and the figures need only the pairs' slots). */
static int post_task(void *ctx, size_t i, rb_err *err)
{
    const report *jb = ctx;
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
static int post_phase(report *jb, rb_suite_result *r, rb_err *err)
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

/* ---- gathering, in run order ------------------------------------------------------------------------------------ */
static int gather_warnings(const report *jb, rb_suite_result *r, rb_err *err)
{
    for (size_t i = 0; i < r->n_pairs; i++) {
        const rb_suite_pair *po = jb->runs[i];
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
            if (!(r->warnings[r->n_warnings] = rb_strdup(po->warnings[w])))
                return nomem(err);
            r->n_warnings++;
        }
    }
    return RB_OK;
}

/* Every run scores the same joints in the same order (runs of one suite do; a merge of others would not). */
static int same_joints(const report *jb, rb_err *err)
{
    const rb_suite *s = jb->s;
    for (size_t i = 1; i < s->n_variants * s->n_logs; i++) {
        const rb_suite_pair *r = jb->runs[i];
        bool same = r->n_joints == jb->n_joints;
        for (size_t j = 0; same && j < jb->n_joints; j++)
            same = strcmp(r->joints[j], jb->joints[j]) == 0;
        if (!same)
            return rb_err_set(err, RB_EINPUT, "%s: variant %s, log %s: its run scored other joints than the first run",
                              s->path, s->variants[i / s->n_logs].name, s->log_names[i % s->n_logs]);
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

int rb_suite_report(const rb_suite *s, const rb_suite_opts *opts, rb_suite_pair *const *runs, rb_suite_result **out,
                    rb_err *err)
{
    *out = NULL;
    report jb = {s, opts, runs, runs[0]->n_joints, runs[0]->joints, NULL, NULL};
    rb_suite_result *r = rb_calloc(1, sizeof *r);
    int rc = r ? same_joints(&jb, err) : nomem(err);
    if (!rc)
        rc = rb_suite_check_joints(s, jb.joints, jb.n_joints, err);
    if (!rc)
        rc = post_phase(&jb, r, err);
    if (r)
        r->n_pairs = s->n_variants * s->n_logs;
    if (!rc)
        rc = gather_warnings(&jb, r, err);
    for (size_t k = 0; jb.figures && k < POST_TRACES - POST_RMSE_BOX + s->n_traces; k++) {
        rb_free(jb.figures[k].name);
        rb_free(jb.figures[k].svg);
    }
    rb_free(jb.figures);
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
