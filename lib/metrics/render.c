#include "metrics_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

/* ---- statistics in a fixed order, shared by every format -------------------------------------- */

enum { N_STATS = 6 };
static const char *const stat_keys[N_STATS] = {"mse", "rmse", "mae", "max_abs", "mean_abs_est", "mean_abs_ref"};
static const char *const stat_titles[N_STATS] = {"MSE", "RMSE", "MAE", "max abs", "mean abs est", "mean abs ref"};

static void stat_values(const rb_stats *s, double v[N_STATS])
{
    v[0] = s->mse;
    v[1] = s->rmse;
    v[2] = s->mae;
    v[3] = s->max_abs;
    v[4] = s->mean_abs_est;
    v[5] = s->mean_abs_ref;
}

/* cJSON would print NaN/Inf as null and CSV readers would choke on "nan": refuse up front. */
static int check_finite(const rb_report *rep, rb_err *err)
{
    for (size_t k = 0; k < rep->n_faults; k++)
        for (int j = 0; j < RB_FAULT_N_KINDS; j++)
            if (rep->faults[k].tally[j].count && !isfinite(rep->faults[k].first_time[j]))
                return rb_err_set(
                    err, RB_ENUMERIC, "run %s: fault monitor: signal %s element %s: %s time is not finite",
                    rep->faults[k].run, rep->faults[k].signal, rep->faults[k].element, rb_fault_kind_name(j));
    if (rep->has_faults && !(isfinite(rep->fault_opts.stuck_tolerance) && isfinite(rep->fault_opts.k_sigma) &&
                             isfinite(rep->fault_opts.settle)))
        return rb_err_set(err, RB_ENUMERIC, "fault monitor: stuck_tolerance, k_sigma and settle must be finite");
    for (size_t k = 0; k < rep->n_rows; k++) {
        const rb_report_row *row = &rep->rows[k];
        double v[N_STATS];
        stat_values(&row->stats, v);
        for (int j = 0; j < N_STATS; j++)
            if (!isfinite(v[j]))
                return rb_err_set(err, RB_ENUMERIC, "run %s: %s vs %s: element %s: %s is %s", row->run, row->estimate,
                                  row->reference, row->element, stat_keys[j], isnan(v[j]) ? "NaN" : "infinite");
    }
    return RB_OK;
}

/* ---- Markdown ------------------------------------------------------------------------------- */

/* GitHub tables split rows on unescaped pipes; escaping backslashes too keeps "a\|b" intact. */
static void md_cell(sbuf *b, const char *s)
{
    rb_sb_putc(b, ' ');
    for (; *s; s++) {
        if (*s == '|' || *s == '\\')
            rb_sb_putc(b, '\\');
        rb_sb_putc(b, *s == '\n' || *s == '\r' ? ' ' : *s);
    }
    rb_sb_puts(b, " |");
}

static void md_header(sbuf *b)
{
    rb_sb_puts(b, "| run | estimate | reference | element |");
    for (int j = 0; j < N_STATS; j++)
        rb_sb_printf(b, " %s |", stat_titles[j]);
    rb_sb_puts(b, " N |\n| --- | --- | --- | --- |");
    for (int j = 0; j <= N_STATS; j++)
        rb_sb_puts(b, " ---: |");
    rb_sb_putc(b, '\n');
}

/* ---- the fault monitor's section, shared by every format ------------------------------------- */

static void fault_totals(const rb_report *rep, size_t totals[RB_FAULT_N_KINDS], size_t *faulty)
{
    *faulty = 0;
    for (int j = 0; j < RB_FAULT_N_KINDS; j++)
        totals[j] = 0;
    for (size_t k = 0; k < rep->n_faults; k++) {
        size_t any = 0;
        for (int j = 0; j < RB_FAULT_N_KINDS; j++) {
            totals[j] += rep->faults[k].tally[j].count;
            any += rep->faults[k].tally[j].count;
        }
        *faulty += any > 0;
    }
}

static void md_faults(const rb_report *rep, sbuf *b)
{
    const rb_fault_opts *o = &rep->fault_opts;
    size_t totals[RB_FAULT_N_KINDS], faulty;
    fault_totals(rep, totals, &faulty);
    rb_sb_puts(b, "\n## Sensor faults\n\n");
    rb_sb_printf(b,
                 "- settings: stuck_window %zu, stuck_tolerance %.4g, saturation_window %zu, k_sigma %.4g, settle %.4g "
                 "s\n",
                 o->stuck_window, o->stuck_tolerance, o->saturation_window, o->k_sigma, o->settle);
    rb_sb_printf(b, "- faulty samples: %zu stuck, %zu saturated, %zu outlier, in %zu of %zu monitored elements\n",
                 totals[0], totals[1], totals[2], faulty, rep->n_faults);
    if (!faulty)
        return;
    rb_sb_puts(b, "\n| run | signal | channel | element | kind | count | first sample | first time (s) |\n"
                  "| --- | --- | --- | --- | --- | ---: | ---: | ---: |\n");
    for (size_t k = 0; k < rep->n_faults; k++) {
        const rb_report_fault *f = &rep->faults[k];
        for (int j = 0; j < RB_FAULT_N_KINDS; j++) {
            if (!f->tally[j].count)
                continue;
            rb_sb_putc(b, '|');
            md_cell(b, f->run);
            md_cell(b, f->signal);
            md_cell(b, f->channel);
            md_cell(b, f->element);
            md_cell(b, rb_fault_kind_name(j));
            rb_sb_printf(b, " %zu | %zu | %.17g |\n", f->tally[j].count, f->tally[j].first, f->first_time[j]);
        }
    }
}

static void render_markdown(const rb_report *rep, sbuf *b)
{
    rb_sb_puts(b, "# ");
    rb_sb_put_line_text(b, rep->title);
    rb_sb_puts(b, "\n\n");
    for (size_t k = 0; k < rep->n_attrs; k++) {
        rb_sb_puts(b, "- ");
        rb_sb_put_line_text(b, rep->attr_keys[k]);
        rb_sb_puts(b, ": ");
        rb_sb_put_line_text(b, rep->attr_values[k]);
        rb_sb_putc(b, '\n');
    }
    if (rep->n_attrs)
        rb_sb_putc(b, '\n');
    if (rep->n_rows || !rep->n_confusions) /* a report of confusion tables alone has no error rows */
        md_header(b);
    for (size_t k = 0; k < rep->n_rows; k++) {
        const rb_report_row *row = &rep->rows[k];
        double v[N_STATS];
        stat_values(&row->stats, v);
        rb_sb_putc(b, '|');
        md_cell(b, row->run);
        md_cell(b, row->estimate);
        md_cell(b, row->reference);
        md_cell(b, row->element);
        for (int j = 0; j < N_STATS; j++)
            rb_sb_printf(b, " %.4g |", v[j]);
        rb_sb_printf(b, " %zu |\n", row->stats.n);
    }
    rb_report_md_confusions(rep, b);
    if (rep->n_windows)
        rb_sb_puts(b, "\n## Scored windows\n\n");
    for (size_t k = 0; k < rep->n_windows; k++) {
        rb_sb_puts(b, "- ");
        rb_sb_put_line_text(b, rep->windows[k]);
        rb_sb_putc(b, '\n');
    }
    if (rep->has_faults)
        md_faults(rep, b);
    if (rep->n_warnings)
        rb_sb_puts(b, "\n## Warnings\n\n");
    for (size_t k = 0; k < rep->n_warnings; k++) {
        rb_sb_puts(b, "- ");
        rb_sb_put_line_text(b, rep->warnings[k]);
        rb_sb_putc(b, '\n');
    }
}

/* ---- JSON ----------------------------------------------------------------------------------- */

/* Numbers go in as raw text from rb_format_double: cJSON 1.7's own printer accepts "%1.15g"
 * when it is merely close (0.1 + 0.2 comes out as 0.3), which is not a round trip. */
static bool json_number(cJSON *obj, const char *key, double x)
{
    char buf[32];
    return cJSON_AddRawToObject(obj, key, rb_format_double(x, buf)) != NULL;
}

static bool json_row(cJSON *rows, const rb_report_row *row)
{
    cJSON *obj = cJSON_CreateObject();
    if (!obj || !cJSON_AddItemToArray(rows, obj)) {
        cJSON_Delete(obj);
        return false;
    }
    char n[32];
    snprintf(n, sizeof n, "%zu", row->stats.n);
    bool ok = cJSON_AddStringToObject(obj, "run", row->run) &&
              cJSON_AddStringToObject(obj, "estimate", row->estimate) &&
              cJSON_AddStringToObject(obj, "reference", row->reference) &&
              cJSON_AddStringToObject(obj, "element", row->element) && cJSON_AddRawToObject(obj, "n", n);
    double v[N_STATS];
    stat_values(&row->stats, v);
    for (int j = 0; j < N_STATS && ok; j++)
        ok = json_number(obj, stat_keys[j], v[j]);
    return ok;
}

static bool json_count(cJSON *obj, const char *key, size_t n)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%zu", n);
    return cJSON_AddRawToObject(obj, key, buf) != NULL;
}

static bool json_fault(cJSON *elements, const rb_report_fault *f)
{
    cJSON *obj = cJSON_CreateObject();
    if (!obj || !cJSON_AddItemToArray(elements, obj)) {
        cJSON_Delete(obj);
        return false;
    }
    bool ok = cJSON_AddStringToObject(obj, "run", f->run) && cJSON_AddStringToObject(obj, "signal", f->signal) &&
              cJSON_AddStringToObject(obj, "channel", f->channel) &&
              cJSON_AddStringToObject(obj, "element", f->element);
    for (int j = 0; ok && j < RB_FAULT_N_KINDS; j++) {
        cJSON *kind = cJSON_AddObjectToObject(obj, rb_fault_kind_name(j));
        ok = kind && json_count(kind, "count", f->tally[j].count);
        if (ok && f->tally[j].count) /* no first sample without a fault */
            ok = json_count(kind, "first_sample", f->tally[j].first) &&
                 json_number(kind, "first_time", f->first_time[j]);
    }
    return ok;
}

/* "faults": {"settings", "total", "stuck", "saturated", "outlier", "elements": [every monitored element]} */
static bool json_faults(cJSON *root, const rb_report *rep)
{
    const rb_fault_opts *o = &rep->fault_opts;
    size_t totals[RB_FAULT_N_KINDS], faulty, all = 0;
    fault_totals(rep, totals, &faulty);
    cJSON *faults = cJSON_AddObjectToObject(root, "faults");
    cJSON *set = faults ? cJSON_AddObjectToObject(faults, "settings") : NULL;
    bool ok = set && json_count(set, "stuck_window", o->stuck_window) &&
              json_number(set, "stuck_tolerance", o->stuck_tolerance) &&
              json_count(set, "saturation_window", o->saturation_window) && json_number(set, "k_sigma", o->k_sigma) &&
              json_number(set, "settle", o->settle);
    for (int j = 0; j < RB_FAULT_N_KINDS; j++)
        all += totals[j];
    ok = ok && json_count(faults, "total", all);
    for (int j = 0; ok && j < RB_FAULT_N_KINDS; j++)
        ok = json_count(faults, rb_fault_kind_name(j), totals[j]);
    cJSON *elements = ok ? cJSON_AddArrayToObject(faults, "elements") : NULL;
    for (size_t k = 0; elements && ok && k < rep->n_faults; k++)
        ok = json_fault(elements, &rep->faults[k]);
    return ok && elements;
}

static cJSON *json_tree(const rb_report *rep)
{
    cJSON *root = cJSON_CreateObject();
    bool ok = root && cJSON_AddStringToObject(root, "title", rep->title);
    cJSON *prov = ok ? cJSON_AddObjectToObject(root, "provenance") : NULL;
    for (size_t k = 0; prov && k < rep->n_attrs; k++)
        ok = ok && cJSON_AddStringToObject(prov, rep->attr_keys[k], rep->attr_values[k]);
    cJSON *rows = ok && prov ? cJSON_AddArrayToObject(root, "rows") : NULL;
    for (size_t k = 0; rows && k < rep->n_rows; k++)
        ok = ok && json_row(rows, &rep->rows[k]);
    if (ok && rows && rep->n_confusions) { /* written by hand: round-trip numbers, null for an empty row */
        char *text = rb_report_json_confusions(rep);
        ok = text && cJSON_AddRawToObject(root, "confusions", text);
        rb_free(text);
    }
    cJSON *windows = ok && rows && rep->n_windows ? cJSON_AddArrayToObject(root, "windows") : NULL;
    for (size_t k = 0; windows && k < rep->n_windows; k++)
        ok = ok && cJSON_AddItemToArray(windows, cJSON_CreateString(rep->windows[k]));
    ok = ok && (windows || !rep->n_windows);
    if (ok && rows && rep->has_faults)
        ok = json_faults(root, rep);
    cJSON *warnings = ok && rows && rep->n_warnings ? cJSON_AddArrayToObject(root, "warnings") : NULL;
    for (size_t k = 0; warnings && k < rep->n_warnings; k++)
        ok = ok && cJSON_AddItemToArray(warnings, cJSON_CreateString(rep->warnings[k]));
    ok = ok && (warnings || !rep->n_warnings);
    if (ok && rows)
        return root;
    cJSON_Delete(root);
    return NULL;
}

static void render_json(const rb_report *rep, sbuf *b)
{
    cJSON *root = json_tree(rep);
    char *text = root ? cJSON_Print(root) : NULL;
    if (text) {
        rb_sb_puts(b, text);
        rb_sb_putc(b, '\n');
    } else {
        b->failed = true; /* cJSON fails only on allocation: the numbers were checked */
    }
    cJSON_free(text);
    cJSON_Delete(root);
}

/* ---- CSV ------------------------------------------------------------------------------------ */

/* Comment lines: the table's header stays the metric rows' own. */
static void csv_faults(const rb_report *rep, sbuf *b)
{
    size_t totals[RB_FAULT_N_KINDS], faulty;
    fault_totals(rep, totals, &faulty);
    rb_sb_printf(b, "# faults: %zu stuck, %zu saturated, %zu outlier, in %zu of %zu monitored elements\n", totals[0],
                 totals[1], totals[2], faulty, rep->n_faults);
    for (size_t k = 0; k < rep->n_faults; k++) {
        const rb_report_fault *f = &rep->faults[k];
        for (int j = 0; j < RB_FAULT_N_KINDS; j++) {
            if (!f->tally[j].count)
                continue;
            char t[32];
            rb_sb_printf(b, "# fault: %s, %zu samples from sample %zu (t = %s s): run ", rb_fault_kind_name(j),
                         f->tally[j].count, f->tally[j].first, rb_format_double(f->first_time[j], t));
            rb_sb_put_line_text(b, f->run);
            rb_sb_puts(b, ", signal ");
            rb_sb_put_line_text(b, f->signal);
            rb_sb_puts(b, ", channel ");
            rb_sb_put_line_text(b, f->channel);
            rb_sb_puts(b, ", element ");
            rb_sb_put_line_text(b, f->element);
            rb_sb_putc(b, '\n');
        }
    }
}

static void render_csv(const rb_report *rep, sbuf *b)
{
    rb_sb_puts(b, "# title: ");
    rb_sb_put_line_text(b, rep->title);
    rb_sb_putc(b, '\n');
    for (size_t k = 0; k < rep->n_attrs; k++) {
        rb_sb_puts(b, "# ");
        rb_sb_put_line_text(b, rep->attr_keys[k]);
        rb_sb_puts(b, ": ");
        rb_sb_put_line_text(b, rep->attr_values[k]);
        rb_sb_putc(b, '\n');
    }
    if (rep->has_faults)
        csv_faults(rep, b);
    rb_report_csv_confusions(rep, b);
    for (size_t k = 0; k < rep->n_windows; k++) {
        rb_sb_puts(b, "# window: ");
        rb_sb_put_line_text(b, rep->windows[k]);
        rb_sb_putc(b, '\n');
    }
    for (size_t k = 0; k < rep->n_warnings; k++) {
        rb_sb_puts(b, "# warning: ");
        rb_sb_put_line_text(b, rep->warnings[k]);
        rb_sb_putc(b, '\n');
    }
    rb_sb_puts(b, "run,estimate,reference,element,n");
    for (int j = 0; j < N_STATS; j++)
        rb_sb_printf(b, ",%s", stat_keys[j]);
    rb_sb_putc(b, '\n');
    for (size_t k = 0; k < rep->n_rows; k++) {
        const rb_report_row *row = &rep->rows[k];
        const char *text[4] = {row->run, row->estimate, row->reference, row->element};
        for (int j = 0; j < 4; j++) {
            rb_sb_put_csv(b, text[j]);
            rb_sb_putc(b, ',');
        }
        rb_sb_printf(b, "%zu", row->stats.n);
        double v[N_STATS];
        stat_values(&row->stats, v);
        for (int j = 0; j < N_STATS; j++) {
            char buf[32];
            rb_sb_putc(b, ',');
            rb_sb_puts(b, rb_format_double(v[j], buf));
        }
        rb_sb_putc(b, '\n');
    }
}

/* ---- entry point ---------------------------------------------------------------------------- */

int rb_report_render(const rb_report *rep, rb_report_format fmt, char **text, rb_err *err)
{
    if (!text)
        return rb_err_set(err, RB_EINVAL, "rb_report_render: no output");
    *text = NULL;
    if (!rep)
        return rb_err_set(err, RB_EINVAL, "rb_report_render: no report");
    if (fmt != RB_REPORT_MARKDOWN && fmt != RB_REPORT_JSON && fmt != RB_REPORT_CSV)
        return rb_err_set(err, RB_EINVAL, "rb_report_render: unknown format %d", (int)fmt);
    int rc = check_finite(rep, err);
    if (rc)
        return rc;
    /* Data text must read the same in every locale. rb_format_double sees to that itself, but
     * Markdown's "%.4g" follows LC_NUMERIC: render under the C locale (this thread only). */
    rb_locale_scope c_locale;
    if ((rc = rb_c_locale_push(&c_locale, err)))
        return rc;
    sbuf b = {0};
    if (fmt == RB_REPORT_MARKDOWN)
        render_markdown(rep, &b);
    else if (fmt == RB_REPORT_JSON)
        render_json(rep, &b);
    else
        render_csv(rep, &b);
    rb_c_locale_pop(&c_locale);
    if (b.failed || !b.data) {
        rb_free(b.data);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    *text = b.data;
    return RB_OK;
}
