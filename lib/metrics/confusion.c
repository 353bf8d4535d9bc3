/* Confusion tables of class codes (roboest/metrics.h, "confusion tables"): counting, and their sections in run
 * reports and comparison tables. */
#include <math.h>
#include <string.h>

#include "metrics_internal.h"

int rb_confusion_init(rb_confusion *c, size_t n_rows, size_t n_cols, rb_err *err)
{
    if (!c || n_rows < 1 || n_cols < 1 || n_rows > RB_CONFUSION_MAX || n_cols > RB_CONFUSION_MAX)
        return rb_err_set(err, RB_EINVAL, "a confusion table needs 1 to %d classes per side (%zu x %zu)",
                          RB_CONFUSION_MAX, n_rows, n_cols);
    memset(c, 0, sizeof *c);
    c->n_rows = n_rows;
    c->n_cols = n_cols;
    return RB_OK;
}

/* The class of value x, or -1 when it is not one of 0 .. n - 1. */
static long class_of(double x, size_t n)
{
    if (!(x >= 0) || x > (double)(n - 1) || x != floor(x))
        return -1;
    return (long)x;
}

static int bad_class(const char *what, const char *name, size_t i, size_t k, const double *time, double x, size_t n,
                     rb_err *err)
{
    char t[40] = "";
    if (time)
        snprintf(t, sizeof t, " (t = %.17g s)", time[k]);
    return rb_err_set(err, RB_EINPUT,
                      "%s %s: element %zu: sample %zu%s is %.17g: not a class (0 to %zu: one of its %zu "
                      "labels)",
                      what, name, i, k, t, x, n - 1, n);
}

int rb_confusion_count(const rb_confusion_input *in, rb_confusion *c, rb_err *err)
{
    if (!in || !c || ((!in->estimate || !in->reference) && in->n_samples * in->n_elements > 0))
        return rb_err_set(err, RB_EINVAL, "rb_confusion_count: NULL argument");
    if (isnan(in->t0) || isnan(in->t1) || ((isfinite(in->t0) || isfinite(in->t1)) && !in->time))
        return rb_err_set(err, RB_EINVAL, "rb_confusion_count: a NaN bound or a bounded window without times");
    const char *en = in->estimate_name ? in->estimate_name : "estimate";
    const char *rn = in->reference_name ? in->reference_name : "reference";
    size_t n = in->n_elements;
    for (size_t k = 0; k < in->n_samples; k++) {
        if (in->time && (in->time[k] < in->t0 || in->time[k] > in->t1))
            continue;
        for (size_t i = 0; i < n; i++) {
            size_t at = k * n + i;
            if (in->where && !(isfinite(in->where[at]) && in->where[at] != 0))
                continue;
            long r = class_of(in->reference[at], c->n_rows), e = class_of(in->estimate[at], c->n_cols);
            if (r < 0)
                return bad_class("reference", rn, i, k, in->time, in->reference[at], c->n_rows, err);
            if (e < 0)
                return bad_class("estimate", en, i, k, in->time, in->estimate[at], c->n_cols, err);
            c->counts[(size_t)r * c->n_cols + (size_t)e] += 1;
        }
    }
    return RB_OK;
}

int rb_confusion_add(rb_confusion *dst, const rb_confusion *src, rb_err *err)
{
    if (!dst || !src || dst->n_rows != src->n_rows || dst->n_cols != src->n_cols)
        return rb_err_set(err, RB_EINVAL, "rb_confusion_add: tables of different shapes");
    for (size_t i = 0; i < dst->n_rows * dst->n_cols; i++)
        dst->counts[i] += src->counts[i];
    return RB_OK;
}

double rb_confusion_row_total(const rb_confusion *c, size_t i)
{
    double s = 0;
    for (size_t j = 0; j < c->n_cols; j++)
        s += c->counts[i * c->n_cols + j];
    return s;
}

double rb_confusion_total(const rb_confusion *c)
{
    double s = 0;
    for (size_t i = 0; i < c->n_rows; i++)
        s += rb_confusion_row_total(c, i);
    return s;
}

double rb_confusion_percent(const rb_confusion *c, size_t i, size_t j)
{
    double n = rb_confusion_row_total(c, i);
    return n > 0 ? 100.0 * c->counts[i * c->n_cols + j] / n : NAN;
}

double rb_confusion_utilization(const rb_confusion *c)
{
    double n = rb_confusion_total(c), zero = 0;
    for (size_t i = 0; i < c->n_rows; i++)
        zero += c->counts[i * c->n_cols];
    return n > 0 ? 100.0 * (n - zero) / n : NAN;
}

/* ---- in a run report ---------------------------------------------------------------------------------------- */
static void free_confusion(rb_report_confusion *c)
{
    rb_free(c->run);
    rb_free(c->name);
    rb_free(c->estimate);
    rb_free(c->reference);
    rb_free(c->where);
    rb_strings_free(c->labels, c->table.n_cols);
    rb_strings_free(c->reference_labels, c->table.n_rows);
}

void rb_report_confusions_free(rb_report *rep)
{
    for (size_t k = 0; k < rep->n_confusions; k++)
        free_confusion(&rep->confusions[k]);
    rb_free(rep->confusions);
}

static char **copy_strings(char *const *src, size_t n)
{
    char **out = rb_calloc(n ? n : 1, sizeof *out);
    for (size_t i = 0; out && i < n; i++)
        if (!(out[i] = rb_strdup(src[i]))) {
            rb_strings_free(out, i);
            return NULL;
        }
    return out;
}

int rb_report_add_confusion(rb_report *rep, const rb_report_confusion *c, rb_err *err)
{
    if (!rep || !c || !c->run || !c->name || !c->estimate || !c->reference || !c->labels || !c->reference_labels)
        return rb_err_set(err, RB_EINVAL, "rb_report_add_confusion: NULL argument");
    if (rep->n_confusions == rep->cap_confusions) {
        size_t cap = rep->cap_confusions ? 2 * rep->cap_confusions : 4;
        rb_report_confusion *grown = rb_realloc(rep->confusions, cap * sizeof *grown);
        if (!grown)
            return rb_err_set(err, RB_ENOMEM, "out of memory");
        rep->confusions = grown;
        rep->cap_confusions = cap;
    }
    rb_report_confusion d = {rb_strdup(c->run),
                             rb_strdup(c->name),
                             rb_strdup(c->estimate),
                             rb_strdup(c->reference),
                             rb_strdup(c->where ? c->where : ""),
                             copy_strings(c->labels, c->table.n_cols),
                             copy_strings(c->reference_labels, c->table.n_rows),
                             c->table};
    if (!d.run || !d.name || !d.estimate || !d.reference || !d.where || !d.labels || !d.reference_labels) {
        rb_free(d.run), rb_free(d.name), rb_free(d.estimate), rb_free(d.reference), rb_free(d.where);
        if (d.labels)
            rb_strings_free(d.labels, c->table.n_cols);
        if (d.reference_labels)
            rb_strings_free(d.reference_labels, c->table.n_rows);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    rep->confusions[rep->n_confusions++] = d;
    return RB_OK;
}

/* A Markdown table: rows the reference's labels, columns the estimate's, "count (row %)" cells. */
static void md_table(sbuf *b, char *const *labels, char *const *ref_labels, const rb_confusion *t)
{
    rb_sb_puts(b, "| reference \\ estimate |");
    for (size_t j = 0; j < t->n_cols; j++) {
        rb_sb_putc(b, ' ');
        rb_sb_put_line_text(b, labels[j]);
        rb_sb_puts(b, " |");
    }
    rb_sb_puts(b, " total |\n|---|");
    for (size_t j = 0; j <= t->n_cols; j++)
        rb_sb_puts(b, "---|");
    rb_sb_putc(b, '\n');
    for (size_t i = 0; i < t->n_rows; i++) {
        rb_sb_puts(b, "| ");
        rb_sb_put_line_text(b, ref_labels[i]);
        rb_sb_puts(b, " |");
        for (size_t j = 0; j < t->n_cols; j++) {
            double p = rb_confusion_percent(t, i, j);
            rb_sb_printf(b, " %.0f", t->counts[i * t->n_cols + j]);
            if (isfinite(p))
                rb_sb_printf(b, " (%.1f %%)", p);
            rb_sb_puts(b, " |");
        }
        rb_sb_printf(b, " %.0f |\n", rb_confusion_row_total(t, i));
    }
    double u = rb_confusion_utilization(t);
    rb_sb_puts(b, "\nutilization (estimate other than ");
    rb_sb_put_line_text(b, labels[0]);
    if (isfinite(u))
        rb_sb_printf(b, "): %.1f %% of %.0f samples\n", u, rb_confusion_total(t));
    else
        rb_sb_puts(b, "): none counted\n");
}

void rb_report_md_confusions(const rb_report *rep, sbuf *b)
{
    for (size_t k = 0; k < rep->n_confusions; k++) {
        const rb_report_confusion *c = &rep->confusions[k];
        rb_sb_puts(b, "\n## Confusion ");
        rb_sb_put_line_text(b, c->name);
        rb_sb_puts(b, " (");
        rb_sb_put_line_text(b, c->run);
        rb_sb_puts(b, ")\n\nestimate ");
        rb_sb_put_line_text(b, c->estimate);
        rb_sb_puts(b, " against reference ");
        rb_sb_put_line_text(b, c->reference);
        if (c->where[0]) {
            rb_sb_puts(b, ", samples where ");
            rb_sb_put_line_text(b, c->where);
            rb_sb_puts(b, " is set");
        }
        rb_sb_puts(b, "; rows: the reference's class, columns: the estimate's (count, row percentage)\n\n");
        md_table(b, c->labels, c->reference_labels, &c->table);
    }
}

/* Round-trip text, or null for NaN (an empty row, nothing counted: documented, never a silent number). */
static void put_number_or_null(sbuf *b, double x)
{
    if (isfinite(x))
        rb_sb_put_double(b, x);
    else
        rb_sb_puts(b, "null");
}

static void json_names(sbuf *b, char *const *names, size_t n)
{
    rb_sb_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        rb_sb_puts(b, i ? ", " : "");
        rb_sb_put_json_string(b, names[i]);
    }
    rb_sb_putc(b, ']');
}

/* "counts", "row_percent", "utilization", "n" of one table, as JSON members (no braces). */
static void json_table(sbuf *b, const rb_confusion *t)
{
    rb_sb_puts(b, "\"counts\": [");
    for (size_t i = 0; i < t->n_rows; i++) {
        rb_sb_puts(b, i ? ", [" : "[");
        for (size_t j = 0; j < t->n_cols; j++)
            rb_sb_printf(b, "%s%.0f", j ? ", " : "", t->counts[i * t->n_cols + j]);
        rb_sb_putc(b, ']');
    }
    rb_sb_puts(b, "], \"row_percent\": [");
    for (size_t i = 0; i < t->n_rows; i++) {
        rb_sb_puts(b, i ? ", [" : "[");
        for (size_t j = 0; j < t->n_cols; j++) {
            rb_sb_puts(b, j ? ", " : "");
            put_number_or_null(b, rb_confusion_percent(t, i, j));
        }
        rb_sb_putc(b, ']');
    }
    rb_sb_puts(b, "], \"utilization\": ");
    put_number_or_null(b, rb_confusion_utilization(t));
    rb_sb_printf(b, ", \"n\": %.0f", rb_confusion_total(t));
}

char *rb_report_json_confusions(const rb_report *rep)
{
    sbuf b = {0};
    rb_sb_putc(&b, '[');
    for (size_t k = 0; k < rep->n_confusions; k++) {
        const rb_report_confusion *c = &rep->confusions[k];
        rb_sb_puts(&b, k ? ", {\"run\": " : "{\"run\": ");
        rb_sb_put_json_string(&b, c->run);
        const char *keys[4] = {"name", "estimate", "reference", "where"};
        const char *vals[4] = {c->name, c->estimate, c->reference, c->where};
        for (int i = 0; i < 4; i++) {
            rb_sb_printf(&b, ", \"%s\": ", keys[i]);
            rb_sb_put_json_string(&b, vals[i]);
        }
        rb_sb_puts(&b, ", \"labels\": ");
        json_names(&b, c->labels, c->table.n_cols);
        rb_sb_puts(&b, ", \"reference_labels\": ");
        json_names(&b, c->reference_labels, c->table.n_rows);
        rb_sb_puts(&b, ", ");
        json_table(&b, &c->table);
        rb_sb_putc(&b, '}');
    }
    rb_sb_putc(&b, ']');
    if (b.failed) {
        rb_free(b.data);
        return NULL;
    }
    return b.data;
}

void rb_report_csv_confusions(const rb_report *rep, sbuf *b)
{
    for (size_t k = 0; k < rep->n_confusions; k++) {
        const rb_report_confusion *c = &rep->confusions[k];
        const rb_confusion *t = &c->table;
        for (size_t i = 0; i < t->n_rows; i++)
            for (size_t j = 0; j < t->n_cols; j++) {
                rb_sb_puts(b, "# confusion: run ");
                rb_sb_put_line_text(b, c->run);
                rb_sb_puts(b, ", ");
                rb_sb_put_line_text(b, c->name);
                rb_sb_puts(b, ", reference ");
                rb_sb_put_line_text(b, c->reference_labels[i]);
                rb_sb_puts(b, ", estimate ");
                rb_sb_put_line_text(b, c->labels[j]);
                rb_sb_printf(b, ": %.0f\n", t->counts[i * t->n_cols + j]);
            }
    }
}

/* ---- in a comparison table ------------------------------------------------------------------------------------ */
int rb_comparison_set_confusion(rb_comparison *c, const char *const *labels, size_t n_cols,
                                const char *const *reference_labels, size_t n_rows, const char *where, rb_err *err)
{
    rb_confusion t;
    int rc = rb_confusion_init(&t, n_rows, n_cols, err);
    if (rc)
        return rc;
    if (!c || !labels || !reference_labels || c->has_confusion)
        return rb_err_set(err, RB_EINVAL, "rb_comparison_set_confusion: NULL argument or set twice");
    char **lab = copy_strings((char *const *)labels, n_cols),
         **ref = copy_strings((char *const *)reference_labels, n_rows);
    char *w = rb_strdup(where ? where : "");
    size_t n_tables = c->n_variants * c->n_logs;
    rb_confusion *tables = rb_malloc((n_tables > 0 ? n_tables : 1) * sizeof *tables);
    if (!lab || !ref || !w || !tables) {
        if (lab)
            rb_strings_free(lab, n_cols);
        if (ref)
            rb_strings_free(ref, n_rows);
        rb_free(w);
        rb_free(tables);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < c->n_variants * c->n_logs; i++)
        tables[i] = t;
    c->labels = lab, c->reference_labels = ref, c->confusion_where = w, c->confusions = tables;
    c->has_confusion = true;
    return RB_OK;
}

rb_confusion *rb_comparison_confusion(const rb_comparison *c, size_t v, size_t l)
{
    return c->has_confusion ? &c->confusions[v * c->n_logs + l] : NULL;
}

void rb_comparison_confusion_free(rb_comparison *c)
{
    if (!c->has_confusion)
        return;
    rb_strings_free(c->labels, c->confusions[0].n_cols);
    rb_strings_free(c->reference_labels, c->confusions[0].n_rows);
    rb_free(c->confusion_where);
    rb_free(c->confusions);
}

/* The variant's table, its logs pooled. */
static rb_confusion pooled(const rb_comparison *c, size_t v)
{
    rb_confusion t = c->confusions[v * c->n_logs];
    for (size_t l = 1; l < c->n_logs; l++)
        rb_confusion_add(&t, &c->confusions[v * c->n_logs + l], NULL);
    return t;
}

void rb_comparison_md_confusion(const rb_comparison *c, sbuf *b)
{
    if (!c->has_confusion)
        return;
    rb_sb_puts(b, "\n## Confusion\n\nrows: the reference's class, columns: the estimate's (count, row percentage), "
                  "the logs pooled");
    if (c->confusion_where[0]) {
        rb_sb_puts(b, "; samples where ");
        rb_sb_put_line_text(b, c->confusion_where);
        rb_sb_puts(b, " is set");
    }
    rb_sb_puts(b, "\n");
    for (size_t v = 0; v < c->n_variants; v++) {
        rb_confusion t = pooled(c, v);
        rb_sb_puts(b, "\n### ");
        rb_sb_put_line_text(b, c->variants[v]);
        rb_sb_puts(b, "\n\n");
        md_table(b, c->labels, c->reference_labels, &t);
    }
}

void rb_comparison_json_confusion(const rb_comparison *c, sbuf *b)
{
    if (!c->has_confusion)
        return;
    rb_sb_puts(b, ",\n  \"confusion\": {\"labels\": ");
    json_names(b, c->labels, c->confusions[0].n_cols);
    rb_sb_puts(b, ", \"reference_labels\": ");
    json_names(b, c->reference_labels, c->confusions[0].n_rows);
    rb_sb_puts(b, ", \"where\": ");
    rb_sb_put_json_string(b, c->confusion_where);
    rb_sb_puts(b, ", \"variants\": [");
    for (size_t v = 0; v < c->n_variants; v++) {
        rb_confusion t = pooled(c, v);
        rb_sb_puts(b, v ? ",\n    {\"name\": " : "\n    {\"name\": ");
        rb_sb_put_json_string(b, c->variants[v]);
        rb_sb_puts(b, ", ");
        json_table(b, &t);
        rb_sb_puts(b, ", \"per_log\": [");
        for (size_t l = 0; l < c->n_logs; l++) {
            rb_sb_puts(b, l ? ", {\"log\": " : "{\"log\": ");
            rb_sb_put_json_string(b, c->logs[l]);
            rb_sb_puts(b, ", ");
            json_table(b, &c->confusions[v * c->n_logs + l]);
            rb_sb_putc(b, '}');
        }
        rb_sb_puts(b, "]}");
    }
    rb_sb_puts(b, "\n  ]}");
}
