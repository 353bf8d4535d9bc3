/* roboest check: rules such as "ukf.rmse < rnea.rmse" evaluated on a comparison report, and JUnit XML. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments_internal.h"

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

static const char *const FIELDS[] = {"mean", "sd", "lo", "hi", "min", "max"};
enum { N_FIELDS = 6 };

/* ---- rules files ------------------------------------------------------------------------------------------- */
void rb_rules_free(char **rules, char **wheres, size_t n)
{
    rb_strings_free(rules, n);
    rb_strings_free(wheres, n);
}

static int add_rule(char ***rules, char ***wheres, size_t *n, const char *text, size_t len, const char *path,
                    size_t line, rb_err *err)
{
    char **r = rb_realloc(*rules, (*n + 1) * sizeof *r);
    if (r)
        *rules = r;
    char **w = r ? rb_realloc(*wheres, (*n + 1) * sizeof *w) : NULL;
    if (w)
        *wheres = w;
    char *rule = w ? rb_strndup(text, len) : NULL, *where = rule ? rb_asprintf("%s:%zu", path, line) : NULL;
    if (!where) {
        rb_free(rule);
        return nomem(err);
    }
    (*rules)[*n] = rule;
    (*wheres)[(*n)++] = where;
    return RB_OK;
}

int rb_rules_read(const char *path, char ***rules, char ***wheres, size_t *n, rb_err *err)
{
    char *text = NULL;
    size_t len = 0;
    *rules = *wheres = NULL;
    *n = 0;
    int rc = rb_cfg_read_file(path, &text, &len, err);
    size_t line = 1;
    for (size_t pos = 0; !rc && pos < len; line++) {
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        size_t stop = pos;
        while (stop < end && text[stop] != '#')
            stop++;
        size_t a = pos, z = stop;
        while (a < z && isspace((unsigned char)text[a]))
            a++;
        while (z > a && isspace((unsigned char)text[z - 1]))
            z--;
        if (z > a && memchr(text + a, '\0', z - a))
            rc = rb_err_set(err, RB_EINPUT, "%s:%zu: NUL byte in a rule", path, line);
        else if (z > a)
            rc = add_rule(rules, wheres, n, text + a, z - a, path, line, err);
        pos = end + 1;
    }
    if (!rc && *n == 0)
        rc = rb_err_set(err, RB_ECONFIG, "%s: no rule (one per line; '#' starts a comment)", path);
    rb_free(text);
    if (rc) {
        rb_rules_free(*rules, *wheres, *n);
        *rules = *wheres = NULL;
        *n = 0;
    }
    return rc;
}

/* ---- the report ----------------------------------------------------------------------------------------------- */
typedef struct report {
    const char *name;
    const cJSON *variants, *statistics, *joints; /* a comparison report's (NULL in a run report) */
    const cJSON *logs;                           /* a comparison report's log names (per_log's order), or NULL */
    const cJSON *faults;                         /* the fault monitor's section, NULL without one */
    const cJSON *confusion;                      /* a comparison's "confusion" object, NULL without one */
    const cJSON *confusions;                     /* a run report's "confusions" array, NULL without one */
} report;

static const cJSON *member(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

static int open_report(const cJSON *root, report *rep, rb_err *err)
{
    if (!cJSON_IsObject(root))
        return rb_err_set(err, RB_EINPUT, "%s: not a roboest comparison report (expected a JSON object)", rep->name);
    rep->variants = member(root, "variants");
    rep->statistics = member(root, "statistics");
    rep->joints = member(root, "joints");
    rep->logs = cJSON_IsArray(member(root, "logs")) ? member(root, "logs") : NULL;
    rep->faults = cJSON_IsObject(member(root, "faults")) ? member(root, "faults") : NULL;
    rep->confusion = cJSON_IsObject(member(root, "confusion")) ? member(root, "confusion") : NULL;
    rep->confusions = cJSON_IsArray(member(root, "confusions")) ? member(root, "confusions") : NULL;
    if ((rep->faults || rep->confusions) && !rep->variants) { /* a run report: faults.* and confusion tables */
        rep->statistics = rep->joints = NULL;
        return RB_OK;
    }
    const char *missing = !cJSON_IsArray(rep->variants)     ? "variants"
                          : !cJSON_IsArray(rep->statistics) ? "statistics"
                          : !cJSON_IsArray(rep->joints)     ? "joints"
                                                            : NULL;
    if (missing)
        return rb_err_set(err, RB_EINPUT,
                          "%s: not a roboest comparison report (no \"%s\" array; make it with "
                          "roboest compare) nor a run report with a faults section",
                          rep->name, missing);
    return RB_OK;
}

/* ---- rules ------------------------------------------------------------------------------------------------------ */
typedef struct operand {
    bool is_number;
    double number;
    char variant[128], stat[64], joint[256], field[128], col[64];
    bool has_joint, has_col; /* has_col: a second [ ] (a confusion cell's estimate class) */
    size_t start, end;       /* its text in the rule */
} operand;

typedef struct rule_ctx {
    const char *text, *where;
    size_t pos;
    rb_err *err;
} rule_ctx;

RB_PRINTF(2, 3)
static int rule_error(rule_ctx *r, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return rb_err_set(r->err, RB_ECONFIG, "%s: '%s': %s", r->where, r->text, what);
}

static void skip_blank(rule_ctx *r)
{
    while (r->text[r->pos] && isspace((unsigned char)r->text[r->pos]))
        r->pos++;
}

static bool word_char(char c, bool dash) { return isalnum((unsigned char)c) || c == '_' || (dash && c == '-'); }

/* A word of word_char into buf; false if empty or too long. */
static bool take_word(rule_ctx *r, bool dash, char *buf, size_t size)
{
    size_t n = 0;
    while (word_char(r->text[r->pos], dash)) {
        if (n + 1 >= size)
            return false;
        buf[n++] = r->text[r->pos++];
    }
    buf[n] = '\0';
    return n > 0;
}

static int parse_reference(rule_ctx *r, operand *o)
{
    if (!take_word(r, true, o->variant, sizeof o->variant))
        return rule_error(r, "column %zu: expected a number or VARIANT.STAT", r->pos + 1);
    if (r->text[r->pos] != '.')
        return rule_error(r, "column %zu: expected '.' and a statistic after '%s' (e.g. %s.rmse)", r->pos + 1,
                          o->variant, o->variant);
    r->pos++;
    if (!take_word(r, false, o->stat, sizeof o->stat))
        return rule_error(r, "column %zu: expected a statistic (e.g. rmse)", r->pos + 1);
    if (r->text[r->pos] == '[') {
        const char *close = strchr(r->text + r->pos, ']');
        if (!close)
            return rule_error(r, "column %zu: '[' without ']'", r->pos + 1);
        size_t a = r->pos + 1, z = (size_t)(close - r->text);
        while (a < z && isspace((unsigned char)r->text[a]))
            a++;
        while (z > a && isspace((unsigned char)r->text[z - 1]))
            z--;
        if (z == a || z - a >= sizeof o->joint)
            return rule_error(r, "column %zu: expected a joint name inside [ ]", r->pos + 1);
        memcpy(o->joint, r->text + a, z - a);
        o->joint[z - a] = '\0';
        o->has_joint = true;
        r->pos = (size_t)(close - r->text) + 1;
        if (r->text[r->pos] == '[') { /* VARIANT.confusion[TRUE][PREDICTED] */
            r->pos++;
            if (!take_word(r, true, o->col, sizeof o->col) || r->text[r->pos] != ']')
                return rule_error(r, "column %zu: expected a class label and ']'", r->pos + 1);
            r->pos++;
            o->has_col = true;
        }
    }
    strcpy(o->field, "mean");
    if (r->text[r->pos] == '.') {
        r->pos++;
        if (!take_word(r, false, o->field, sizeof o->field))
            return rule_error(r, "column %zu: expected a field (mean, sd, lo, hi, min, max) or a log's name",
                              r->pos + 1);
    }
    return RB_OK;
}

static int parse_operand(rule_ctx *r, operand *o)
{
    skip_blank(r);
    memset(o, 0, sizeof *o);
    o->start = r->pos;
    char c = r->text[r->pos];
    int rc = RB_OK;
    if (isdigit((unsigned char)c) || c == '-' || c == '+' || c == '.') {
        char *end;
        o->number = strtod(r->text + r->pos, &end);
        if (end == r->text + r->pos || !isfinite(o->number))
            return rule_error(r, "column %zu: expected a finite number", r->pos + 1);
        o->is_number = true;
        r->pos = (size_t)(end - r->text);
    } else {
        rc = parse_reference(r, o);
    }
    o->end = r->pos;
    return rc;
}

enum op { LT, LE, GT, GE, EQ, NE };
static const char *const OP_TEXT[] = {"<", "<=", ">", ">=", "==", "!="};

static int parse_op(rule_ctx *r, enum op *op)
{
    skip_blank(r);
    const char *s = r->text + r->pos;
    if (s[0] == '<' || s[0] == '>') {
        bool eq = s[1] == '=';
        *op = s[0] == '<' ? (eq ? LE : LT) : (eq ? GE : GT);
        r->pos += eq ? 2 : 1;
        return RB_OK;
    }
    if ((s[0] == '=' || s[0] == '!') && s[1] == '=') {
        *op = s[0] == '=' ? EQ : NE;
        r->pos += 2;
        return RB_OK;
    }
    return rule_error(r, "column %zu: expected a comparison (<, <=, >, >=, == or !=)", r->pos + 1);
}

/* An unknown name among the `name` strings of the array's items (key NULL: the items are strings). */
static int unknown(rule_ctx *r, const char *what, const char *name, const cJSON *arr, const char *key)
{
    rb_suggest sg;
    rb_suggest_init(&sg, name);
    char list[256] = "";
    for (const cJSON *e = arr ? arr->child : NULL; e; e = e->next) {
        const cJSON *s = key ? member(e, key) : e;
        if (!cJSON_IsString(s))
            continue;
        rb_suggest_consider(&sg, s->valuestring);
        size_t used = strlen(list);
        if (used + strlen(s->valuestring) + 3 < sizeof list)
            snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", s->valuestring);
    }
    const char *best = rb_suggest_best(&sg);
    if (best)
        return rule_error(r, "unknown %s '%s' (did you mean '%s'?)", what, name, best);
    return rule_error(r, "unknown %s '%s' (the report has: %s)", what, name, list[0] ? list : "none");
}

static bool in_strings(const cJSON *arr, const char *s)
{
    for (const cJSON *e = arr->child; e; e = e->next)
        if (cJSON_IsString(e) && strcmp(e->valuestring, s) == 0)
            return true;
    return false;
}

/* A field of the statistics (*log -1), or the name of one of the report's logs (*log its index in per_log). */
static int check_field(rule_ctx *r, const cJSON *logs, const char *field, long *log)
{
    *log = -1;
    for (size_t f = 0; f < N_FIELDS; f++)
        if (strcmp(field, FIELDS[f]) == 0)
            return RB_OK;
    long i = 0;
    for (const cJSON *e = logs ? logs->child : NULL; e; e = e->next, i++)
        if (cJSON_IsString(e) && strcmp(e->valuestring, field) == 0) {
            *log = i;
            return RB_OK;
        }
    rb_suggest sg;
    rb_suggest_init(&sg, field);
    for (size_t f = 0; f < N_FIELDS; f++)
        rb_suggest_consider(&sg, FIELDS[f]);
    for (const cJSON *e = logs ? logs->child : NULL; e; e = e->next)
        if (cJSON_IsString(e))
            rb_suggest_consider(&sg, e->valuestring);
    const char *best = rb_suggest_best(&sg);
    if (best)
        return rule_error(r, "unknown field '%s' (did you mean '%s'?)", field, best);
    return rule_error(r, "unknown field '%s' (mean, sd, lo, hi, min, max or one of the report's logs)", field);
}

/* ---- faults.KIND[NAME]: the fault monitor's counts in a run report ---- */
static const char *const FAULT_STATS[] = {"total", "stuck", "saturated", "outlier"};

static const char *text_of(const cJSON *obj, const char *key)
{
    const cJSON *s = member(obj, key);
    return cJSON_IsString(s) ? s->valuestring : "";
}

/* NAME is a channel, a signal, or either followed by "/element". */
static bool names_element(const cJSON *e, const char *name)
{
    const char *ch = text_of(e, "channel"), *sig = text_of(e, "signal"), *el = text_of(e, "element");
    if ((ch[0] && strcmp(ch, name) == 0) || strcmp(sig, name) == 0)
        return true;
    const char *bases[2] = {ch, sig};
    for (int b = 0; b < 2; b++) {
        size_t n = strlen(bases[b]);
        if (n && strncmp(name, bases[b], n) == 0 && name[n] == '/' && strcmp(name + n + 1, el) == 0)
            return true;
    }
    return false;
}

static int unknown_element(rule_ctx *r, const report *rep, const char *name)
{
    rb_suggest sg;
    rb_suggest_init(&sg, name);
    const cJSON *els = member(rep->faults, "elements");
    char full[512];
    for (const cJSON *e = els ? els->child : NULL; e; e = e->next) {
        const char *bases[2] = {text_of(e, "channel"), text_of(e, "signal")};
        for (int b = 0; b < 2; b++) {
            if (!bases[b][0])
                continue;
            rb_suggest_consider(&sg, bases[b]);
            snprintf(full, sizeof full, "%s/%s", bases[b], text_of(e, "element"));
            rb_suggest_consider(&sg, full);
        }
    }
    const char *best = rb_suggest_best(&sg);
    if (best)
        return rule_error(r, "no monitored channel, signal or element '%s' (did you mean '%s'?)", name, best);
    return rule_error(r, "no monitored channel, signal or element '%s'", name);
}

static int lookup_faults(rule_ctx *r, const report *rep, const operand *o, double *value)
{
    int kind = -1;
    for (int k = 0; k < 4; k++)
        if (strcmp(o->stat, FAULT_STATS[k]) == 0)
            kind = k;
    if (kind < 0)
        return rule_error(r, "unknown fault count '%s' (total, stuck, saturated or outlier)", o->stat);
    if (strcmp(o->field, "mean") != 0 && strcmp(o->field, "count") != 0)
        return rule_error(r, "faults.%s has no field '%s' (it is a count of samples)", o->stat, o->field);
    if (!o->has_joint) {
        const cJSON *num = member(rep->faults, o->stat);
        if (!cJSON_IsNumber(num))
            return rb_err_set(r->err, RB_EINPUT, "%s: faults: no number %s (a damaged report?)", rep->name, o->stat);
        *value = num->valuedouble;
        return RB_OK;
    }
    double sum = 0;
    bool found = false;
    const cJSON *els = member(rep->faults, "elements");
    for (const cJSON *e = els ? els->child : NULL; e; e = e->next) {
        if (!names_element(e, o->joint))
            continue;
        found = true;
        for (int k = 1; k < 4; k++)
            if (kind == 0 || kind == k) {
                const cJSON *num = member(member(e, FAULT_STATS[k]), "count");
                if (!cJSON_IsNumber(num))
                    return rb_err_set(r->err, RB_EINPUT, "%s: faults: %s: no count %s (a damaged report?)", rep->name,
                                      o->joint, FAULT_STATS[k]);
                sum += num->valuedouble;
            }
    }
    if (!found)
        return unknown_element(r, rep, o->joint);
    *value = sum;
    return RB_OK;
}

/* ---- NAME.confusion[TRUE][PREDICTED] and NAME.utilization: confusion tables ----
 * NAME: a variant (compare report) or a confusion metric's name (run report: its runs pooled). The cell's row
 * percentage by default (field "percent" or "mean"), its count with ".count"; utilization: the percentage of the
 * samples predicted other than the first label. */
static long label_index(const cJSON *labels, const char *name)
{
    long i = 0;
    for (const cJSON *e = labels ? labels->child : NULL; e; e = e->next, i++)
        if (cJSON_IsString(e) && strcmp(e->valuestring, name) == 0)
            return i;
    return -1;
}

/* counts[i][j] of a table's "counts" added into sum (rows x cols, at most RB_CONFUSION_MAX each). */
static bool add_counts(const cJSON *t, double *sum, size_t rows, size_t cols)
{
    const cJSON *counts = member(t, "counts");
    if (!cJSON_IsArray(counts) || cJSON_GetArraySize(counts) != (int)rows)
        return false;
    size_t i = 0;
    for (const cJSON *row = counts->child; row; row = row->next, i++) {
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != (int)cols)
            return false;
        size_t j = 0;
        for (const cJSON *c = row->child; c; c = c->next, j++) {
            if (!cJSON_IsNumber(c))
                return false;
            sum[i * cols + j] += c->valuedouble;
        }
    }
    return true;
}

static int lookup_confusion(rule_ctx *r, const report *rep, const operand *o, double *value)
{
    bool cell = strcmp(o->stat, "confusion") == 0;
    if (cell && !o->has_col)
        return rule_error(r,
                          "%s.confusion needs [TRUE][PREDICTED] class labels (e.g. %s.confusion[slipping][slipping])",
                          o->variant, o->variant);
    if (!cell && o->has_joint)
        return rule_error(r, "%s.utilization takes no [ ]", o->variant);
    bool count = strcmp(o->field, "count") == 0;
    if (!count && strcmp(o->field, "mean") != 0 && strcmp(o->field, "percent") != 0)
        return rule_error(r, "unknown field '%s' of a confusion table (percent or count)", o->field);
    const cJSON *labels = NULL, *ref_labels = NULL;
    double sum[RB_CONFUSION_MAX * RB_CONFUSION_MAX] = {0};
    bool found = false, ok = true;
    const cJSON *list = rep->confusion ? member(rep->confusion, "variants") : rep->confusions;
    if (!list)
        return rule_error(r, "the report has no confusion table (a suite's or a metric's \"confusion\" / \"labels\")");
    for (const cJSON *e = list->child; e && ok; e = e->next) {
        const cJSON *name = member(e, "name");
        if (!cJSON_IsString(name) || strcmp(name->valuestring, o->variant) != 0)
            continue;
        const cJSON *holder = rep->confusion ? rep->confusion : e;
        if (!found) {
            labels = member(holder, "labels");
            ref_labels = member(holder, "reference_labels");
        }
        found = true;
        int rows = cJSON_GetArraySize(ref_labels), cols = cJSON_GetArraySize(labels);
        ok = cJSON_IsArray(labels) && cJSON_IsArray(ref_labels) && rows > 0 && cols > 0 && rows <= RB_CONFUSION_MAX &&
             cols <= RB_CONFUSION_MAX && add_counts(e, sum, (size_t)rows, (size_t)cols);
    }
    if (!found)
        return unknown(r, rep->confusion ? "variant" : "confusion metric", o->variant, list, "name");
    if (!ok)
        return rb_err_set(r->err, RB_EINPUT, "%s: confusion %s: malformed counts (a damaged report?)", rep->name,
                          o->variant);
    size_t rows = (size_t)cJSON_GetArraySize(ref_labels), cols = (size_t)cJSON_GetArraySize(labels);
    if (!cell) {
        double n = 0, zero = 0;
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < cols; j++) {
                n += sum[i * cols + j];
                zero += j == 0 ? sum[i * cols] : 0;
            }
        *value = count ? n - zero : n > 0 ? 100 * (n - zero) / n : NAN;
        return RB_OK;
    }
    long i = label_index(ref_labels, o->joint), j = label_index(labels, o->col);
    if (i < 0)
        return unknown(r, "reference class", o->joint, ref_labels, NULL);
    if (j < 0)
        return unknown(r, "estimate class", o->col, labels, NULL);
    double n = 0;
    for (size_t k = 0; k < cols; k++)
        n += sum[(size_t)i * cols + k];
    double c = sum[(size_t)i * cols + (size_t)j];
    *value = count ? c : n > 0 ? 100 * c / n : NAN;
    return RB_OK;
}

static int lookup(rule_ctx *r, const report *rep, const operand *o, double *value)
{
    if (o->is_number) {
        *value = o->number;
        return RB_OK;
    }
    if (rep->faults && strcmp(o->variant, "faults") == 0)
        return lookup_faults(r, rep, o, value);
    if (strcmp(o->stat, "confusion") == 0 || strcmp(o->stat, "utilization") == 0)
        return lookup_confusion(r, rep, o, value);
    if (o->has_col)
        return rule_error(r, "a second [ ] belongs to a confusion cell: %s.confusion[TRUE][PREDICTED]", o->variant);
    if (!rep->variants)
        return rule_error(r,
                          "a run report holds only the fault counts (faults.total, faults.stuck[CHANNEL], ...) and "
                          "confusion tables (NAME.confusion[TRUE][PREDICTED]); '%s' needs a report of roboest compare",
                          o->variant);
    const cJSON *var = NULL;
    for (const cJSON *e = rep->variants->child; e && !var; e = e->next) {
        const cJSON *name = member(e, "name");
        if (cJSON_IsString(name) && strcmp(name->valuestring, o->variant) == 0)
            var = e;
    }
    if (!var)
        return unknown(r, "variant", o->variant, rep->variants, "name");
    if (!in_strings(rep->statistics, o->stat)) {
        if (rb_stat_index(o->stat) >= 0)
            return rule_error(r, "statistic '%s' is not in the report (add it to the suite's \"statistics\")", o->stat);
        return unknown(r, "statistic", o->stat, rep->statistics, NULL);
    }
    if (o->has_joint && !in_strings(rep->joints, o->joint))
        return unknown(r, "joint", o->joint, rep->joints, NULL);
    long log;
    int rc = check_field(r, rep->logs, o->field, &log);
    if (rc)
        return rc;
    const cJSON *group = o->has_joint ? member(member(var, "joints"), o->joint) : member(var, "all");
    const cJSON *num = log < 0 ? member(member(group, o->stat), o->field)
                               : cJSON_GetArrayItem(member(member(group, o->stat), "per_log"), (int)log);
    if (!cJSON_IsNumber(num))
        return rb_err_set(r->err, RB_EINPUT, "%s: variant %s: %s%s%s%s: no number %s (a damaged report?)", rep->name,
                          o->variant, o->stat, o->has_joint ? "[" : "", o->has_joint ? o->joint : "",
                          o->has_joint ? "]" : "", o->field);
    *value = num->valuedouble;
    return RB_OK;
}

static bool holds(double a, enum op op, double b)
{
    switch (op) {
    case LT: return a < b;
    case LE: return a <= b;
    case GT: return a > b;
    case GE: return a >= b;
    case EQ: return a == b;
    default: return a != b;
    }
}

/* One side of a rule: an operand, or two joined by '*' or '/' (a bound scaled by a number, a ratio of two
 * variants' values). */
typedef struct term {
    operand f[2];
    size_t n;     /* 1 or 2 */
    char op;      /* '*' or '/' when n == 2 */
    double v[2];  /* the operands' values */
    double value; /* the term's */
} term;

static int parse_term(rule_ctx *r, term *t)
{
    t->n = 1;
    int rc = parse_operand(r, &t->f[0]);
    skip_blank(r);
    if (!rc && (r->text[r->pos] == '*' || r->text[r->pos] == '/')) {
        t->op = r->text[r->pos++];
        t->n = 2;
        rc = parse_operand(r, &t->f[1]);
    }
    return rc;
}

static bool all_numbers(const term *t) { return t->f[0].is_number && (t->n == 1 || t->f[1].is_number); }

static int eval_term(rule_ctx *r, const report *rep, term *t)
{
    for (size_t i = 0; i < t->n; i++) {
        int rc = lookup(r, rep, &t->f[i], &t->v[i]);
        if (rc)
            return rc;
    }
    t->value = t->n == 1 ? t->v[0] : t->op == '*' ? t->v[0] * t->v[1] : t->v[0] / t->v[1];
    return RB_OK;
}

static char *describe(const char *text, const term *t)
{
    size_t a = t->f[0].start, z = t->f[t->n - 1].end;
    if (all_numbers(t))
        return rb_asprintf("%.*s", (int)(z - a), text + a);
    if (t->n == 1)
        return rb_asprintf("%.*s = %.6g", (int)(z - a), text + a, t->value);
    return rb_asprintf("%.*s = %.6g %c %.6g = %.6g", (int)(z - a), text + a, t->v[0], t->op, t->v[1], t->value);
}

static int eval_rule(const report *rep, const char *text, const char *where, rb_rule_result *res, rb_err *err)
{
    rule_ctx r = {text, where, 0, err};
    term a, b;
    enum op op = LT;
    int rc = parse_term(&r, &a);
    if (!rc)
        rc = parse_op(&r, &op);
    if (!rc)
        rc = parse_term(&r, &b);
    skip_blank(&r);
    if (!rc && text[r.pos])
        rc = rule_error(&r, "column %zu: unexpected '%c' after the rule", r.pos + 1, text[r.pos]);
    if (!rc && all_numbers(&a) && all_numbers(&b))
        rc = rule_error(&r, "compares two numbers: name a VARIANT.STAT on one side");
    if (!rc)
        rc = eval_term(&r, rep, &a);
    if (!rc)
        rc = eval_term(&r, rep, &b);
    if (rc)
        return rc;
    res->left = a.value;
    res->right = b.value;
    /* a ratio over a zero (0 / 0, or x / 0) is no evidence either way: the rule fails, saying why */
    bool undefined = !isfinite(a.value) || !isfinite(b.value);
    res->passed = !undefined && holds(res->left, op, res->right);
    char *l = describe(text, &a), *rt = describe(text, &b);
    res->message = l && rt ? rb_asprintf("%s %s%s %s%s", l, res->passed ? "" : "is not ", OP_TEXT[op], rt,
                                         undefined ? " (no value: a division by zero or an empty confusion row)" : "")
                           : NULL;
    rb_free(l);
    rb_free(rt);
    return res->message ? RB_OK : nomem(err);
}

void rb_check_free(rb_check *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_rules; i++) {
        rb_free(c->rules[i].rule);
        rb_free(c->rules[i].where);
        rb_free(c->rules[i].message);
    }
    rb_free(c->rules);
    rb_free(c);
}

static char *trimmed(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    return rb_strndup(s, n);
}

int rb_check_rules(const char *report_json, size_t len, const char *report_name, const char *const *rules,
                   const char *const *wheres, size_t n_rules, rb_check **out, rb_err *err)
{
    *out = NULL;
    report rep = {.name = report_name ? report_name : "report.json"};
    const char *end = NULL;
    if (memchr(report_json, '\0', len))
        return rb_err_set(err, RB_EINPUT, "%s: not JSON (NUL byte)", rep.name);
    cJSON *root = cJSON_ParseWithLengthOpts(report_json, len, &end, 0);
    if (!root) {
        rb_err e;
        rb_cfg_malformed(rep.name, report_json, len, end ? (size_t)(end - report_json) : 0, NULL, &e);
        return rb_err_set(err, RB_EINPUT, "%s", e.msg);
    }
    rb_check *c = rb_calloc(1, sizeof *c);
    if (c)
        c->rules = rb_calloc(n_rules ? n_rules : 1, sizeof *c->rules);
    int rc = c && c->rules ? open_report(root, &rep, err) : nomem(err);
    rb_locale_scope loc; /* numbers in rules read with '.' whatever the locale */
    bool pushed = false;
    if (!rc)
        pushed = (rc = rb_c_locale_push(&loc, err)) == RB_OK;
    for (size_t i = 0; !rc && i < n_rules; i++) {
        rb_rule_result *res = &c->rules[i];
        c->n_rules = i + 1;
        res->rule = trimmed(rules[i]);
        res->where = rb_asprintf("%s", wheres ? wheres[i] : "rule");
        if (!res->rule || !res->where)
            rc = nomem(err);
        if (!rc)
            rc = eval_rule(&rep, res->rule, res->where, res, err);
        if (!rc && !res->passed)
            c->n_failed++;
    }
    if (pushed)
        rb_c_locale_pop(&loc);
    cJSON_Delete(root);
    if (rc)
        rb_check_free(c);
    else
        *out = c;
    return rc;
}

/* ---- JUnit XML ------------------------------------------------------------------------------------------------ */
static char *xml_escape(const char *s)
{
    size_t n = 1;
    for (const char *p = s; *p; p++)
        n += 6;
    char *out = rb_malloc(n), *o = out;
    if (!out)
        return NULL;
    for (; *s; s++) {
        const char *rep = *s == '&'    ? "&amp;"
                          : *s == '<'  ? "&lt;"
                          : *s == '>'  ? "&gt;"
                          : *s == '"'  ? "&quot;"
                          : *s == '\'' ? "&apos;"
                                       : NULL;
        if (rep) {
            strcpy(o, rep);
            o += strlen(rep);
        } else if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n') {
            *o++ = *s;
        }
    }
    *o = '\0';
    return out;
}

/* Appends the printf text to *doc (freed and NULL when out of memory). */
RB_PRINTF(2, 3)
static void append(char **doc, const char *fmt, ...)
{
    if (!*doc)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    size_t used = strlen(*doc);
    char *grown = n >= 0 ? rb_realloc(*doc, used + (size_t)n + 1) : NULL;
    if (!grown) {
        rb_free(*doc);
        *doc = NULL;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(grown + used, (size_t)n + 1, fmt, ap);
    va_end(ap);
    *doc = grown;
}

int rb_check_junit(const rb_check *c, const char *suite_name, char **xml, rb_err *err)
{
    *xml = NULL;
    char *doc = rb_strdup("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    char *name = xml_escape(suite_name ? suite_name : "roboest check");
    if (!name) {
        rb_free(doc);
        return nomem(err);
    }
    append(&doc, "<testsuites tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n", c->n_rules, c->n_failed);
    append(&doc, "  <testsuite name=\"%s\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\">\n", name,
           c->n_rules, c->n_failed);
    for (size_t i = 0; doc && i < c->n_rules; i++) {
        const rb_rule_result *r = &c->rules[i];
        char *rule = xml_escape(r->rule), *msg = xml_escape(r->message), *where = xml_escape(r->where);
        if (rule && msg && where) {
            append(&doc, "    <testcase classname=\"roboest.check\" name=\"%s\"", rule);
            if (r->passed)
                append(&doc, "/>\n");
            else
                append(&doc, ">\n      <failure message=\"%s\" type=\"rule\">%s: %s</failure>\n    </testcase>\n", msg,
                       where, msg);
        } else {
            rb_free(doc);
            doc = NULL;
        }
        rb_free(rule);
        rb_free(msg);
        rb_free(where);
    }
    append(&doc, "  </testsuite>\n</testsuites>\n");
    rb_free(name);
    if (!doc)
        return nomem(err);
    *xml = doc;
    return RB_OK;
}
