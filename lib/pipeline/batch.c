/* Running every log of a pipeline (rb_pipeline_run): the sessions, their output folders, one run each
 * (run.c) with its files (write.c), and the reports over every session. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline_internal.h"

typedef struct session {
    size_t n_paths;
    const char *const *paths;
    char *dir; /* output folder */
} session;

void rb_run_summary_free(rb_run_summary *s)
{
    if (!s)
        return;
    rb_strings_free(s->warnings, s->n_warnings);
    rb_report_free(s->report);
    memset(s, 0, sizeof *s);
}

static char *stem_of(const char *path)
{
    size_t n;
    const char *base = rb_path_stem(path, &n);
    return rb_strndup(base, n);
}

/* The sessions to run and their output folders. */
static int plan_sessions(const rb_pipeline *p, const rb_run_opts *opts, session **out, size_t *n_out, rb_err *err)
{
    size_t n = opts->logs ? (opts->concat ? opts->n_logs > 0 : opts->n_logs) : p->n_logs;
    if (n == 0)
        return rb_err_set(err, RB_ECONFIG, "%s: no log to run: list \"logs\" in the config or give log files",
                          p->config_path);
    session *ss = rb_calloc(n, sizeof *ss);
    if (!ss)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    const char *out_dir = opts->out_dir ? opts->out_dir : ".";
    int rc = RB_OK;
    for (size_t i = 0; !rc && i < n; i++) {
        if (!opts->logs)
            ss[i] = (session){p->logs[i].n_paths, (const char *const *)p->logs[i].paths, NULL};
        else
            ss[i] = (session){opts->concat ? opts->n_logs : 1, opts->logs + (opts->concat ? 0 : i), NULL};
        char *stem = stem_of(ss[i].paths[0]);
        ss[i].dir = !stem ? NULL : n > 1 ? rb_path_in(out_dir, stem) : rb_strdup(out_dir);
        rb_free(stem);
        if (!ss[i].dir)
            rc = rb_err_set(err, RB_ENOMEM, "out of memory");
        for (size_t k = 0; !rc && k < i; k++)
            if (strcmp(ss[k].dir, ss[i].dir) == 0)
                rc = rb_err_set(err, RB_ECONFIG, "logs %s and %s would both write into %s: give them different names",
                                ss[k].paths[0], ss[i].paths[0], ss[i].dir);
    }
    *out = ss;
    *n_out = n;
    return rc;
}

static void free_sessions(session *ss, size_t n)
{
    for (size_t i = 0; ss && i < n; i++)
        rb_free(ss[i].dir);
    rb_free(ss);
}

static int refuse_existing(const char *dir, const char *rel, rb_err *err)
{
    char *path = rb_path_in(dir, rel);
    if (!path)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    int rc = rb_outfile_check(path, false, err); /* exists, is an input, is not a regular file */
    rb_free(path);
    return rc;
}

/* Before any log is read: an existing target without overwrite is an error. */
static int check_targets(const rb_pipeline *p, const session *ss, size_t n, const char *out_dir, rb_err *err)
{
    int rc = RB_OK;
    for (size_t i = 0; !rc && i < n; i++) {
        for (size_t o = 0; !rc && o < p->n_outputs; o++)
            rc = refuse_existing(ss[i].dir, p->outputs[o].path, err);
        for (size_t o = 0; !rc && o < p->n_reports; o++)
            rc = refuse_existing(ss[i].dir, p->reports[o].path, err);
    }
    for (size_t o = 0; !rc && n > 1 && o < p->n_reports; o++)
        rc = refuse_existing(out_dir, p->reports[o].path, err);
    return rc;
}

static int append_text(char **dst, const char *sep, const char *s)
{
    char *joined = *dst ? rb_asprintf("%s%s%s", *dst, sep, s) : rb_strdup(s);
    if (!joined)
        return RB_ENOMEM;
    rb_free(*dst);
    *dst = joined;
    return RB_OK;
}

/* Fold one session's warnings, samples and metric rows into the summary. */
static int summarize(rb_run_summary *sum, rb_run_result *res, char **inputs, char **shas, rb_err *err)
{
    char **grown = rb_realloc(sum->warnings, (sum->n_warnings + res->n_warnings + 1) * sizeof *grown);
    if (!grown)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    sum->warnings = grown;
    for (size_t i = 0; i < res->n_warnings; i++)
        sum->warnings[sum->n_warnings++] = res->warnings[i];
    res->n_warnings = 0; /* moved */
    sum->n_logs++;
    sum->n_samples += res->clock.n;
    if (append_text(inputs, ",", res->input) || append_text(shas, ",", res->input_sha256))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    if (!res->report)
        return RB_OK;
    int rc = sum->report ? RB_OK : rb_report_new(&sum->report, res->report->title, err);
    for (size_t i = 0; !rc && i < res->report->n_rows; i++) {
        const rb_report_row *row = &res->report->rows[i];
        rc = rb_report_add(sum->report, row->run, row->estimate, row->reference, row->element, &row->stats, err);
    }
    if (!rc && res->report->has_faults) /* the fault monitor's elements, as the rows */
        rc = rb_report_set_fault_settings(sum->report, &res->report->fault_opts, err);
    for (size_t i = 0; !rc && i < res->report->n_faults; i++)
        rc = rb_report_add_fault(sum->report, &res->report->faults[i], err);
    for (size_t i = 0; !rc && i < res->report->n_warnings; i++)
        rc = rb_report_add_warning(sum->report, res->report->warnings[i], err);
    for (size_t i = 0; !rc && i < res->report->n_windows; i++)
        rc = rb_report_add_window(sum->report, res->report->windows[i], err);
    for (size_t i = 0; !rc && i < res->report->n_confusions; i++)
        rc = rb_report_add_confusion(sum->report, &res->report->confusions[i], err);
    return rc;
}

static bool windowed(const rb_run_opts *opts) { return opts->memory_limit > 0 || opts->window > 0; }

int rb_pipeline_run_windowed(const rb_pipeline *p, const char *const *paths, size_t n_paths, const rb_run_opts *opts,
                             rb_run_result **res, rb_err *err)
{
    if (n_paths != 1)
        return rb_err_set(err, RB_ECONFIG,
                          "%s: a session of %zu files is read whole: run its files one at a time to read them in "
                          "windows (memory limit)",
                          paths[0], n_paths);
    size_t window = opts->window ? opts->window : opts->memory_limit / 65536 > 4096 ? opts->memory_limit / 65536 : 4096;
    rb_log_source *src = NULL;
    int rc = rb_log_source_open(paths[0], opts->memory_limit, &src, err);
    if (!rc)
        rc = rb_pipeline_run_source(p, src, paths, 1, window, opts, res, err);
    rb_log_source_free(src);
    return rc;
}

static int run_session(const rb_pipeline *p, const rb_run_opts *opts, const session *s, bool own_dir,
                       rb_run_summary *sum, char **inputs, char **shas, rb_err *err)
{
    rb_log *log = NULL;
    rb_run_result *res = NULL;
    bool made = false;
    rb_run_opts o = *opts; /* windows: the CSV outputs written window by window into the log's folder */
    o.stream_dir = s->dir;
    int rc = windowed(opts) && own_dir ? rb_dir_make(s->dir, &made, err) : RB_OK;
    if (!rc)
        rc = windowed(opts) ? rb_pipeline_run_windowed(p, (const char *const *)s->paths, s->n_paths, &o, &res, err)
                            : rb_log_read_session(s->paths, s->n_paths, &log, NULL, err);
    if (!rc && !windowed(opts))
        rc = rb_pipeline_run_log(p, log, s->paths, s->n_paths, opts, &res, err);
    rb_log_free(log);
    if (!rc && own_dir && !made)
        rc = rb_dir_make(s->dir, &made, err);
    if (!rc)
        rc = rb_run_result_write(p, res, s->dir, opts->overwrite, err);
    if (!rc)
        rc = summarize(sum, res, inputs, shas, err);
    rb_run_result_free(res); /* first: it removes the temporaries of outputs written window by window */
    if (rc && made)
        rmdir(s->dir); /* only succeeds when empty: nothing of a failed session is left */
    return rc;
}

/* With several sessions, the reports in the top folder hold every session's rows. */
static int write_combined(const rb_pipeline *p, rb_run_summary *sum, const char *out_dir, const char *inputs,
                          const char *shas, bool overwrite, rb_err *err)
{
    rb_provenance pv = {0, NULL, NULL};
    int rc = rb_pipeline_provenance(p, inputs, shas, &pv, err);
    if (!rc)
        rc = rb_report_set_provenance(sum->report, &pv, err);
    rb_provenance_free(&pv);
    return rc ? rc : rb_pipeline_write_files(p, NULL, sum->report, out_dir, overwrite, err);
}

int rb_pipeline_run(const rb_pipeline *p, const rb_run_opts *opts, rb_run_summary *summary, rb_err *err)
{
    rb_run_opts defaults = {0};
    rb_run_summary local = {0};
    rb_run_summary *sum = summary ? summary : &local;
    session *ss = NULL;
    size_t n = 0;
    char *inputs = NULL, *shas = NULL;
    bool made = false;
    if (!opts)
        opts = &defaults;
    const char *out_dir = opts->out_dir ? opts->out_dir : ".";
    int rc = plan_sessions(p, opts, &ss, &n, err);
    if (!rc && !opts->overwrite)
        rc = check_targets(p, ss, n, out_dir, err);
    if (!rc)
        rc = rb_dir_make(out_dir, &made, err);
    for (size_t i = 0; !rc && i < n; i++)
        rc = run_session(p, opts, &ss[i], n > 1, sum, &inputs, &shas, err);
    if (!rc && n > 1 && sum->report && p->n_reports)
        rc = write_combined(p, sum, out_dir, inputs, shas, opts->overwrite, err);
    if (rc && made)
        rmdir(out_dir);
    free_sessions(ss, n);
    rb_free(inputs);
    rb_free(shas);
    rb_run_summary_free(&local);
    return rc;
}
