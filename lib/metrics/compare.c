/* The comparison table: per-pair statistics of every variant on every log, their summary across logs
 * (mean, spread, bootstrap interval of the mean) and its Markdown, JSON and CSV renderings. */
#include <math.h>
#include <string.h>

#include "metrics_internal.h"

static const char *const STAT_KEYS[RB_N_STATS] = {
    "mse",      "rmse",           "mae",       "max_abs",    "mean_abs_est",    "mean_abs_ref", "min_est",   "max_est",
    "mean_est", "count_zero_est", "rise_time", "step_delay", "steps_unsettled", "event_peak",   "event_max", "rms_est"};
static const char *const STAT_TITLES[RB_N_STATS] = {
    "MSE",      "RMSE",           "MAE",       "max abs",    "mean abs est",    "mean abs ref", "min est",   "max est",
    "mean est", "count zero est", "rise time", "step delay", "steps unsettled", "event peak",   "event max", "rms est"};

const char *rb_stat_key(size_t k) { return k < RB_N_STATS ? STAT_KEYS[k] : NULL; }
const char *rb_stat_title(size_t k) { return k < RB_N_STATS ? STAT_TITLES[k] : NULL; }

double rb_stat_value(const rb_stats *s, size_t k)
{
    switch (k) {
    case 0: return s->mse;
    case 1: return s->rmse;
    case 2: return s->mae;
    case 3: return s->max_abs;
    case 4: return s->mean_abs_est;
    case 5: return s->mean_abs_ref;
    case 6: return s->min_est;
    case 7: return s->max_est;
    case 8: return s->mean_est;
    case 9: return s->count_zero_est;
    case RB_STAT_RISE_TIME: return s->rise_time;
    case RB_STAT_STEP_DELAY: return s->step_delay;
    case RB_STAT_STEPS_UNSETTLED: return s->steps_unsettled;
    case RB_STAT_EVENT_PEAK: return s->event_peak;
    case RB_STAT_RMS_EST: return s->rms_est;
    default: return s->event_max;
    }
}

long rb_stat_index(const char *key)
{
    for (size_t k = 0; k < RB_N_STATS; k++)
        if (strcmp(key, STAT_KEYS[k]) == 0)
            return (long)k;
    return -1;
}

static void free_strings(char **s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        rb_free(s[i]);
    rb_free(s);
}

static char **copy_strings(const char *const *src, size_t n)
{
    char **out = rb_calloc(n, sizeof *out);
    for (size_t i = 0; out && i < n; i++)
        if (!(out[i] = rb_strdup(src[i]))) {
            free_strings(out, i);
            return NULL;
        }
    return out;
}

void rb_comparison_free(rb_comparison *c)
{
    if (!c)
        return;
    rb_free(c->title);
    rb_free(c->reference);
    free_strings(c->variants, c->n_variants);
    free_strings(c->logs, c->n_logs);
    free_strings(c->joints, c->n_joints);
    rb_free(c->values);
    rb_free(c->summary);
    free_strings(c->attr_keys, c->n_attrs);
    free_strings(c->attr_values, c->n_attrs);
    for (size_t i = 0; i < c->n_published; i++)
        rb_free(c->published[i].source);
    rb_free(c->published);
    rb_comparison_confusion_free(c);
    rb_free(c);
}

int rb_comparison_new(rb_comparison **out, const char *title, const char *reference, const char *const *variants,
                      size_t n_variants, const char *const *logs, size_t n_logs, const char *const *joints,
                      size_t n_joints, rb_err *err)
{
    *out = NULL;
    if (!title || !reference || !n_variants || !n_logs || !n_joints || !variants || !logs || !joints)
        return rb_err_set(err, RB_EINVAL, "rb_comparison_new: needs a title, a reference, variants, logs and joints");
    size_t cells, count;
    if (!rb_size_mul(n_variants, n_joints + 1, &cells) || !rb_size_mul(cells, n_logs, &count) ||
        count > SIZE_MAX / sizeof(rb_stats) || cells > SIZE_MAX / (RB_N_STATS * sizeof(rb_summary)))
        return rb_err_set(err, RB_ENOMEM, "comparison of %zu variants x %zu joints x %zu logs is too large", n_variants,
                          n_joints, n_logs);
    rb_comparison *c = rb_calloc(1, sizeof *c);
    if (!c)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    c->n_variants = n_variants;
    c->n_logs = n_logs;
    c->n_joints = n_joints;
    c->title = rb_strdup(title);
    c->reference = rb_strdup(reference);
    c->variants = copy_strings(variants, n_variants);
    c->logs = copy_strings(logs, n_logs);
    c->joints = copy_strings(joints, n_joints);
    c->values = rb_calloc(count, sizeof *c->values);
    c->summary = rb_calloc(cells * RB_N_STATS, sizeof *c->summary);
    c->n_shown = RB_N_ERROR_STATS;
    for (size_t k = 0; k < RB_N_ERROR_STATS; k++)
        c->shown[k] = k;
    c->bootstrap = (rb_bootstrap){2000, 0, 0.95};
    if (!c->title || !c->reference || !c->variants || !c->logs || !c->joints || !c->values || !c->summary) {
        rb_comparison_free(c);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    *out = c;
    return RB_OK;
}

rb_stats *rb_comparison_at(const rb_comparison *c, size_t v, size_t j, size_t l)
{
    return &c->values[(v * (c->n_joints + 1) + j) * c->n_logs + l];
}

const rb_summary *rb_comparison_summary(const rb_comparison *c, size_t v, size_t j, size_t k)
{
    return &c->summary[(v * (c->n_joints + 1) + j) * RB_N_STATS + k];
}

int rb_comparison_add_published(rb_comparison *c, size_t v, size_t j, size_t k, double value, const char *source,
                                rb_err *err)
{
    if (!c || !source || v >= c->n_variants || j > c->n_joints || k >= RB_N_STATS || !isfinite(value))
        return rb_err_set(err, RB_EINVAL, "rb_comparison_add_published: index out of range or value not finite");
    rb_published *grown = rb_realloc(c->published, (c->n_published + 1) * sizeof *grown);
    if (!grown)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    c->published = grown;
    char *copy = rb_strdup(source);
    if (!copy)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    c->published[c->n_published++] = (rb_published){v, j, k, value, copy};
    return RB_OK;
}

int rb_comparison_set_attr(rb_comparison *c, const char *key, const char *value, rb_err *err)
{
    for (size_t i = 0; i < c->n_attrs; i++)
        if (strcmp(c->attr_keys[i], key) == 0) {
            char *copy = rb_strdup(value);
            if (!copy)
                return rb_err_set(err, RB_ENOMEM, "out of memory");
            rb_free(c->attr_values[i]);
            c->attr_values[i] = copy;
            return RB_OK;
        }
    char **keys = rb_realloc(c->attr_keys, (c->n_attrs + 1) * sizeof *keys);
    if (keys)
        c->attr_keys = keys;
    char **values = keys ? rb_realloc(c->attr_values, (c->n_attrs + 1) * sizeof *values) : NULL;
    if (values)
        c->attr_values = values;
    char *k = values ? rb_strdup(key) : NULL, *v = k ? rb_strdup(value) : NULL;
    if (!v) {
        rb_free(k);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    c->attr_keys[c->n_attrs] = k;
    c->attr_values[c->n_attrs++] = v;
    return RB_OK;
}

static int set_comparison_attr(void *c, const char *key, const char *value, rb_err *err)
{
    return rb_comparison_set_attr(c, key, value, err);
}

int rb_comparison_set_provenance(rb_comparison *c, const rb_provenance *pv, rb_err *err)
{
    return rb_provenance_each(pv, set_comparison_attr, c, err);
}

static const char *joint_name(const rb_comparison *c, size_t j) { return j < c->n_joints ? c->joints[j] : "all"; }

/* Mean, sample standard deviation and extremes of one statistic across the logs. */
static void describe(const double *x, size_t n, rb_summary *s)
{
    double sum = 0;
    s->min = s->max = x[0];
    for (size_t l = 0; l < n; l++) {
        sum += x[l];
        s->min = fmin(s->min, x[l]);
        s->max = fmax(s->max, x[l]);
    }
    s->mean = sum / (double)n;
    double ss = 0;
    for (size_t l = 0; l < n; l++)
        ss += (x[l] - s->mean) * (x[l] - s->mean);
    s->sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
}

int rb_comparison_summarize(rb_comparison *c, rb_err *err)
{
    size_t L = c->n_logs, B = c->bootstrap.samples, n_idx;
    if (B == 0 || !rb_size_mul(B, L, &n_idx))
        return rb_err_set(err, RB_EINVAL, "bootstrap: samples must be >= 1 (and B x logs must fit in memory)");
    size_t *idx = rb_malloc(n_idx * sizeof *idx);
    double *scratch = rb_malloc(B * sizeof *scratch), *x = rb_malloc(L * sizeof *x);
    int rc = idx && scratch && x ? rb_bootstrap_draw(&c->bootstrap, L, idx, err)
                                 : rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t v = 0; !rc && v < c->n_variants; v++)
        for (size_t j = 0; !rc && j <= c->n_joints; j++)
            for (size_t k = 0; !rc && k < RB_N_STATS; k++) {
                for (size_t l = 0; !rc && l < L; l++) {
                    x[l] = rb_stat_value(rb_comparison_at(c, v, j, l), k);
                    if (!isfinite(x[l]))
                        rc = rb_err_set(err, RB_ENUMERIC, "variant %s: joint %s: log %s: %s is %s", c->variants[v],
                                        joint_name(c, j), c->logs[l], STAT_KEYS[k], isnan(x[l]) ? "NaN" : "infinite");
                }
                if (rc)
                    break;
                rb_summary *s = &c->summary[(v * (c->n_joints + 1) + j) * RB_N_STATS + k];
                describe(x, L, s);
                rb_bootstrap_mean_interval(x, L, idx, B, c->bootstrap.level, scratch, &s->lo, &s->hi);
            }
    rb_free(idx);
    rb_free(scratch);
    rb_free(x);
    c->summarized = rc == RB_OK;
    return rc;
}

/* ---- Markdown ---------------------------------------------------------------------------------------------- */
static void md_text(sbuf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '|' || *s == '\\')
            rb_sb_putc(b, '\\');
        rb_sb_putc(b, *s == '\n' || *s == '\r' ? ' ' : *s);
    }
}

static void md_intervals_note(const rb_comparison *c, sbuf *b)
{
    if (c->n_logs == 1)
        rb_sb_puts(b, "Cells: the statistic on the one log (no spread across logs, no interval). Reference: ");
    else
        rb_sb_printf(b,
                     "Cells: mean over %zu logs ± sample standard deviation [%g %% percentile-bootstrap interval of "
                     "the mean: %zu resamples of the logs with replacement, seed %llu]. Reference: ",
                     c->n_logs, 100 * c->bootstrap.level, c->bootstrap.samples, (unsigned long long)c->bootstrap.seed);
    md_text(b, c->reference);
    rb_sb_puts(b, ".\n\n");
}

static void md_rule(sbuf *b, size_t n_cols)
{
    rb_sb_puts(b, "| --- |");
    for (size_t i = 0; i < n_cols; i++)
        rb_sb_puts(b, " ---: |");
    rb_sb_putc(b, '\n');
}

static void md_all_joints(const rb_comparison *c, sbuf *b)
{
    rb_sb_puts(b, "## All joints\n\n| variant |");
    for (size_t i = 0; i < c->n_shown; i++)
        rb_sb_printf(b, " %s |", STAT_TITLES[c->shown[i]]);
    rb_sb_putc(b, '\n');
    md_rule(b, c->n_shown);
    for (size_t v = 0; v < c->n_variants; v++) {
        rb_sb_puts(b, "| ");
        md_text(b, c->variants[v]);
        rb_sb_puts(b, " |");
        for (size_t i = 0; i < c->n_shown; i++) {
            const rb_summary *s = rb_comparison_summary(c, v, c->n_joints, c->shown[i]);
            if (c->n_logs == 1) /* no spread to show */
                rb_sb_printf(b, " %.4g |", s->mean);
            else
                rb_sb_printf(b, " %.4g ± %.4g [%.4g, %.4g] |", s->mean, s->sd, s->lo, s->hi);
        }
        rb_sb_putc(b, '\n');
    }
}

static void md_per_joint(const rb_comparison *c, size_t k, sbuf *b)
{
    rb_sb_printf(b, "\n## %s per joint\n\n| variant |", STAT_TITLES[k]);
    for (size_t j = 0; j < c->n_joints; j++) {
        rb_sb_putc(b, ' ');
        md_text(b, c->joints[j]);
        rb_sb_puts(b, " |");
    }
    rb_sb_putc(b, '\n');
    md_rule(b, c->n_joints);
    for (size_t v = 0; v < c->n_variants; v++) {
        rb_sb_puts(b, "| ");
        md_text(b, c->variants[v]);
        rb_sb_puts(b, " |");
        for (size_t j = 0; j < c->n_joints; j++) {
            const rb_summary *s = rb_comparison_summary(c, v, j, k);
            if (c->n_logs == 1)
                rb_sb_printf(b, " %.4g |", s->mean);
            else
                rb_sb_printf(b, " %.4g [%.4g, %.4g] |", s->mean, s->lo, s->hi);
        }
        rb_sb_putc(b, '\n');
    }
}

/* ---- published numbers beside ours ---- */
static double published_ours(const rb_comparison *c, const rb_published *p)
{
    return rb_comparison_summary(c, p->variant, p->joint, p->stat)->mean;
}

static void md_published(const rb_comparison *c, sbuf *b)
{
    if (!c->n_published)
        return;
    rb_sb_puts(b, "\n## Published beside ours\n\nOurs: the mean across logs. Ratio: ours / paper.\n\n"
                  "| source | variant | joint | statistic | paper | ours | ratio |\n"
                  "| --- | --- | --- | --- | ---: | ---: | ---: |\n");
    for (size_t i = 0; i < c->n_published; i++) {
        const rb_published *p = &c->published[i];
        const char *cells[] = {p->source, c->variants[p->variant], joint_name(c, p->joint)};
        rb_sb_putc(b, '|');
        for (size_t k = 0; k < 3; k++) {
            rb_sb_putc(b, ' ');
            md_text(b, cells[k]);
            rb_sb_puts(b, " |");
        }
        double ours = published_ours(c, p), ratio = ours / p->value;
        rb_sb_printf(b, " %s | %.10g | %.4g |", STAT_KEYS[p->stat], p->value, ours);
        if (isfinite(ratio))
            rb_sb_printf(b, " %.4g |\n", ratio);
        else
            rb_sb_puts(b, " n/a |\n");
    }
}

static void render_markdown(const rb_comparison *c, sbuf *b)
{
    rb_sb_puts(b, "# ");
    rb_sb_put_line_text(b, c->title);
    rb_sb_puts(b, "\n\n");
    for (size_t i = 0; i < c->n_attrs; i++) {
        rb_sb_puts(b, "- ");
        rb_sb_put_line_text(b, c->attr_keys[i]);
        rb_sb_puts(b, ": ");
        rb_sb_put_line_text(b, c->attr_values[i]);
        rb_sb_putc(b, '\n');
    }
    if (c->n_attrs)
        rb_sb_putc(b, '\n');
    md_intervals_note(c, b);
    md_all_joints(c, b);
    for (size_t i = 0; i < c->n_shown; i++)
        md_per_joint(c, c->shown[i], b);
    md_published(c, b);
    rb_comparison_md_confusion(c, b);
}

/* ---- JSON (written by hand: numbers must be round-trip text, and the key order fixed) ------------------------ */
static void json_key(sbuf *b, const char *key, int indent)
{
    rb_sb_printf(b, "%*s", indent, "");
    rb_sb_put_json_string(b, key);
    rb_sb_puts(b, ": ");
}

static void json_names(sbuf *b, char *const *names, size_t n)
{
    rb_sb_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            rb_sb_puts(b, ", ");
        rb_sb_put_json_string(b, names[i]);
    }
    rb_sb_putc(b, ']');
}

static void json_summary(const rb_comparison *c, size_t v, size_t j, sbuf *b, int indent)
{
    rb_sb_puts(b, "{\n");
    for (size_t i = 0; i < c->n_shown; i++) {
        size_t k = c->shown[i];
        const rb_summary *s = rb_comparison_summary(c, v, j, k);
        json_key(b, STAT_KEYS[k], indent + 2);
        const char *names[] = {"mean", "sd", "lo", "hi", "min", "max"};
        const double vals[] = {s->mean, s->sd, s->lo, s->hi, s->min, s->max};
        rb_sb_putc(b, '{');
        for (size_t f = 0; f < 6; f++) {
            rb_sb_printf(b, "\"%s\": ", names[f]);
            rb_sb_put_double(b, vals[f]);
            rb_sb_puts(b, ", ");
        }
        rb_sb_puts(b, "\"per_log\": [");
        for (size_t l = 0; l < c->n_logs; l++) {
            if (l)
                rb_sb_puts(b, ", ");
            rb_sb_put_double(b, rb_stat_value(rb_comparison_at(c, v, j, l), k));
        }
        rb_sb_printf(b, "]}%s\n", i + 1 < c->n_shown ? "," : "");
    }
    rb_sb_printf(b, "%*s}", indent, "");
}

static void json_variant(const rb_comparison *c, size_t v, sbuf *b)
{
    rb_sb_puts(b, "    {\n");
    json_key(b, "name", 6);
    rb_sb_put_json_string(b, c->variants[v]);
    rb_sb_puts(b, ",\n");
    json_key(b, "all", 6);
    json_summary(c, v, c->n_joints, b, 6);
    rb_sb_puts(b, ",\n");
    json_key(b, "joints", 6);
    rb_sb_puts(b, "{\n");
    for (size_t j = 0; j < c->n_joints; j++) {
        json_key(b, c->joints[j], 8);
        json_summary(c, v, j, b, 8);
        rb_sb_puts(b, j + 1 < c->n_joints ? ",\n" : "\n");
    }
    rb_sb_printf(b, "      }\n    }%s\n", v + 1 < c->n_variants ? "," : "");
}

static void render_json(const rb_comparison *c, sbuf *b)
{
    rb_sb_puts(b, "{\n");
    json_key(b, "title", 2);
    rb_sb_put_json_string(b, c->title);
    rb_sb_puts(b, ",\n");
    json_key(b, "provenance", 2);
    rb_sb_puts(b, "{");
    for (size_t i = 0; i < c->n_attrs; i++) {
        rb_sb_puts(b, i ? ",\n" : "\n");
        json_key(b, c->attr_keys[i], 4);
        rb_sb_put_json_string(b, c->attr_values[i]);
    }
    rb_sb_puts(b, c->n_attrs ? "\n  },\n" : "},\n");
    json_key(b, "reference", 2);
    rb_sb_put_json_string(b, c->reference);
    rb_sb_puts(b, ",\n");
    json_key(b, "statistics", 2);
    rb_sb_putc(b, '[');
    for (size_t i = 0; i < c->n_shown; i++)
        rb_sb_printf(b, "%s\"%s\"", i ? ", " : "", STAT_KEYS[c->shown[i]]);
    rb_sb_puts(b, "],\n");
    json_key(b, "bootstrap", 2);
    rb_sb_printf(b, "{\"over\": \"logs\", \"samples\": %zu, \"seed\": %llu, \"level\": ", c->bootstrap.samples,
                 (unsigned long long)c->bootstrap.seed);
    rb_sb_put_double(b, c->bootstrap.level);
    rb_sb_puts(b, "},\n");
    json_key(b, "logs", 2);
    json_names(b, c->logs, c->n_logs);
    rb_sb_puts(b, ",\n");
    json_key(b, "joints", 2);
    json_names(b, c->joints, c->n_joints);
    rb_sb_puts(b, ",\n");
    json_key(b, "variants", 2);
    rb_sb_puts(b, "[\n");
    for (size_t v = 0; v < c->n_variants; v++)
        json_variant(c, v, b);
    rb_sb_puts(b, "  ]");
    if (c->n_published) {
        rb_sb_puts(b, ",\n");
        json_key(b, "published", 2);
        rb_sb_puts(b, "[\n");
        for (size_t i = 0; i < c->n_published; i++) {
            const rb_published *p = &c->published[i];
            double ours = published_ours(c, p), ratio = ours / p->value;
            rb_sb_puts(b, "    {\"source\": ");
            rb_sb_put_json_string(b, p->source);
            rb_sb_puts(b, ", \"variant\": ");
            rb_sb_put_json_string(b, c->variants[p->variant]);
            rb_sb_puts(b, ", \"joint\": ");
            rb_sb_put_json_string(b, joint_name(c, p->joint));
            rb_sb_printf(b, ", \"statistic\": \"%s\", \"paper\": ", STAT_KEYS[p->stat]);
            rb_sb_put_double(b, p->value);
            rb_sb_puts(b, ", \"ours\": ");
            rb_sb_put_double(b, ours);
            rb_sb_puts(b, ", \"ratio\": ");
            if (isfinite(ratio)) /* a paper value of 0 has no ratio */
                rb_sb_put_double(b, ratio);
            else
                rb_sb_puts(b, "null");
            rb_sb_printf(b, "}%s\n", i + 1 < c->n_published ? "," : "");
        }
        rb_sb_puts(b, "  ]");
    }
    rb_comparison_json_confusion(c, b);
    rb_sb_puts(b, "\n}\n");
}

/* ---- CSV ---------------------------------------------------------------------------------------------------- */
static void render_csv(const rb_comparison *c, sbuf *b)
{
    rb_sb_puts(b, "# title: ");
    rb_sb_put_line_text(b, c->title);
    rb_sb_puts(b, "\n# reference: ");
    rb_sb_put_line_text(b, c->reference);
    rb_sb_printf(b, "\n# bootstrap: over logs, %zu samples, seed %llu, level ", c->bootstrap.samples,
                 (unsigned long long)c->bootstrap.seed);
    rb_sb_put_double(b, c->bootstrap.level);
    rb_sb_putc(b, '\n');
    for (size_t i = 0; i < c->n_attrs; i++) {
        rb_sb_puts(b, "# ");
        rb_sb_put_line_text(b, c->attr_keys[i]);
        rb_sb_puts(b, ": ");
        rb_sb_put_line_text(b, c->attr_values[i]);
        rb_sb_putc(b, '\n');
    }
    rb_sb_puts(b, "variant,joint,statistic,mean,sd,lo,hi,min,max");
    for (size_t l = 0; l < c->n_logs; l++) {
        rb_sb_putc(b, ',');
        rb_sb_put_csv(b, c->logs[l]);
    }
    rb_sb_putc(b, '\n');
    for (size_t v = 0; v < c->n_variants; v++)
        for (size_t jj = 0; jj <= c->n_joints; jj++) {
            size_t j = jj == 0 ? c->n_joints : jj - 1; /* "all" first */
            for (size_t i = 0; i < c->n_shown; i++) {
                size_t k = c->shown[i];
                const rb_summary *s = rb_comparison_summary(c, v, j, k);
                rb_sb_put_csv(b, c->variants[v]);
                rb_sb_putc(b, ',');
                rb_sb_put_csv(b, joint_name(c, j));
                rb_sb_printf(b, ",%s", STAT_KEYS[k]);
                const double vals[] = {s->mean, s->sd, s->lo, s->hi, s->min, s->max};
                for (size_t f = 0; f < 6; f++) {
                    rb_sb_putc(b, ',');
                    rb_sb_put_double(b, vals[f]);
                }
                for (size_t l = 0; l < c->n_logs; l++) {
                    rb_sb_putc(b, ',');
                    rb_sb_put_double(b, rb_stat_value(rb_comparison_at(c, v, j, l), k));
                }
                rb_sb_putc(b, '\n');
            }
        }
}

int rb_comparison_render(const rb_comparison *c, rb_report_format fmt, char **text, rb_err *err)
{
    if (!text)
        return rb_err_set(err, RB_EINVAL, "rb_comparison_render: no output");
    *text = NULL;
    if (!c || !c->summarized)
        return rb_err_set(err, RB_EINVAL, "rb_comparison_render: the comparison is not summarized");
    if (fmt != RB_REPORT_MARKDOWN && fmt != RB_REPORT_JSON && fmt != RB_REPORT_CSV)
        return rb_err_set(err, RB_EINVAL, "rb_comparison_render: unknown format %d", (int)fmt);
    rb_locale_scope c_locale;
    int rc = rb_c_locale_push(&c_locale, err);
    if (rc)
        return rc;
    sbuf b = {0};
    if (fmt == RB_REPORT_MARKDOWN)
        render_markdown(c, &b);
    else if (fmt == RB_REPORT_JSON)
        render_json(c, &b);
    else
        render_csv(c, &b);
    rb_c_locale_pop(&c_locale);
    return rb_sb_finish(&b, text, err);
}
