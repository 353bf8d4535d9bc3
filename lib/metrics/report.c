#include "metrics_internal.h"

#include <errno.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static int enomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

int rb_report_new(rb_report **out, const char *title, rb_err *err)
{
    if (!out || !title)
        return rb_err_set(err, RB_EINVAL, "rb_report_new: out and title are required");
    *out = NULL;
    rb_report *rep = rb_calloc(1, sizeof *rep);
    if (!rep)
        return enomem(err);
    rep->title = rb_strdup(title);
    if (!rep->title) {
        rb_free(rep);
        return enomem(err);
    }
    *out = rep;
    return RB_OK;
}

static void free_row(rb_report_row *row)
{
    rb_free(row->run);
    rb_free(row->estimate);
    rb_free(row->reference);
    rb_free(row->element);
}

static void free_fault(rb_report_fault *f)
{
    rb_free(f->run);
    rb_free(f->signal);
    rb_free(f->channel);
    rb_free(f->element);
}

void rb_report_free(rb_report *rep)
{
    if (!rep)
        return;
    for (size_t k = 0; k < rep->n_rows; k++)
        free_row(&rep->rows[k]);
    for (size_t k = 0; k < rep->n_attrs; k++) {
        rb_free(rep->attr_keys[k]);
        rb_free(rep->attr_values[k]);
    }
    for (size_t k = 0; k < rep->n_faults; k++)
        free_fault(&rep->faults[k]);
    rb_free(rep->faults);
    rb_strings_free(rep->warnings, rep->n_warnings);
    rb_strings_free(rep->windows, rep->n_windows);
    rb_report_confusions_free(rep);
    rb_free(rep->rows);
    rb_free(rep->attr_keys);
    rb_free(rep->attr_values);
    rb_free(rep->title);
    rb_free(rep);
}

/* Room for one more item in *items (capacity *cap); *items and *cap change only on success. */
static bool reserve(void **items, size_t *cap, size_t used, size_t item_size)
{
    if (used < *cap)
        return true;
    size_t new_cap = *cap ? 2 * *cap : 8, bytes;
    if (!rb_size_mul(new_cap, item_size, &bytes))
        return false;
    void *grown = rb_realloc(*items, bytes);
    if (!grown)
        return false;
    *items = grown;
    *cap = new_cap;
    return true;
}

/* Keeps each run's rows together: after the last row of the same run, else at the end. */
static size_t insert_position(const rb_report *rep, const char *run)
{
    for (size_t k = rep->n_rows; k > 0; k--)
        if (strcmp(rep->rows[k - 1].run, run) == 0)
            return k;
    return rep->n_rows;
}

int rb_report_add(rb_report *rep, const char *run, const char *estimate, const char *reference, const char *element,
                  const rb_stats *stats, rb_err *err)
{
    if (!rep || !run || !estimate || !reference || !element || !stats)
        return rb_err_set(err, RB_EINVAL, "rb_report_add: NULL argument");
    void *rows = rep->rows;
    if (!reserve(&rows, &rep->cap_rows, rep->n_rows, sizeof *rep->rows))
        return enomem(err);
    rep->rows = rows;
    rb_report_row row = {rb_strdup(run), rb_strdup(estimate), rb_strdup(reference), rb_strdup(element), *stats};
    if (!row.run || !row.estimate || !row.reference || !row.element) {
        free_row(&row);
        return enomem(err);
    }
    size_t at = insert_position(rep, run);
    memmove(&rep->rows[at + 1], &rep->rows[at], (rep->n_rows - at) * sizeof *rep->rows);
    rep->rows[at] = row;
    rep->n_rows++;
    return RB_OK;
}

int rb_report_add_warning(rb_report *rep, const char *line, rb_err *err)
{
    if (!rep || !line)
        return rb_err_set(err, RB_EINVAL, "rb_report_add_warning: NULL argument");
    char *copy = rb_strdup(line);
    if (!copy || !reserve((void **)&rep->warnings, &rep->cap_warnings, rep->n_warnings, sizeof *rep->warnings)) {
        rb_free(copy);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    rep->warnings[rep->n_warnings++] = copy;
    return RB_OK;
}

int rb_report_add_window(rb_report *rep, const char *line, rb_err *err)
{
    if (!rep || !line)
        return rb_err_set(err, RB_EINVAL, "rb_report_add_window: NULL argument");
    char *copy = rb_strdup(line);
    if (!copy || !reserve((void **)&rep->windows, &rep->cap_windows, rep->n_windows, sizeof *rep->windows)) {
        rb_free(copy);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    rep->windows[rep->n_windows++] = copy;
    return RB_OK;
}

int rb_report_set_fault_settings(rb_report *rep, const rb_fault_opts *o, rb_err *err)
{
    if (!rep || !o)
        return rb_err_set(err, RB_EINVAL, "rb_report_set_fault_settings: NULL argument");
    rep->has_faults = true;
    rep->fault_opts = *o;
    return RB_OK;
}

int rb_report_add_fault(rb_report *rep, const rb_report_fault *f, rb_err *err)
{
    if (!rep || !f || !f->run || !f->signal || !f->channel || !f->element)
        return rb_err_set(err, RB_EINVAL, "rb_report_add_fault: NULL argument");
    void *items = rep->faults;
    if (!reserve(&items, &rep->cap_faults, rep->n_faults, sizeof *rep->faults))
        return enomem(err);
    rep->faults = items;
    rb_report_fault copy = *f;
    copy.run = rb_strdup(f->run), copy.signal = rb_strdup(f->signal), copy.channel = rb_strdup(f->channel);
    copy.element = rb_strdup(f->element);
    if (!copy.run || !copy.signal || !copy.channel || !copy.element) {
        free_fault(&copy);
        return enomem(err);
    }
    size_t at = rep->n_faults; /* after the same run's last element, as the rows */
    while (at > 0 && strcmp(rep->faults[at - 1].run, f->run) != 0)
        at--;
    if (at == 0)
        at = rep->n_faults;
    memmove(&rep->faults[at + 1], &rep->faults[at], (rep->n_faults - at) * sizeof *rep->faults);
    rep->faults[at] = copy;
    rep->n_faults++;
    return RB_OK;
}

static int replace_attr(rb_report *rep, size_t k, const char *value, rb_err *err)
{
    char *copy = rb_strdup(value);
    if (!copy)
        return enomem(err);
    rb_free(rep->attr_values[k]);
    rep->attr_values[k] = copy;
    return RB_OK;
}

int rb_report_set_attr(rb_report *rep, const char *key, const char *value, rb_err *err)
{
    if (!rep || !key || !value)
        return rb_err_set(err, RB_EINVAL, "rb_report_set_attr: NULL argument");
    for (size_t k = 0; k < rep->n_attrs; k++)
        if (strcmp(rep->attr_keys[k], key) == 0)
            return replace_attr(rep, k, value, err);
    /* Both arrays share cap_attrs: grow the keys on a copy of the capacity so a failure on the
     * values leaves cap_attrs true for both. */
    size_t cap = rep->cap_attrs;
    void *keys = rep->attr_keys, *values = rep->attr_values;
    bool ok = reserve(&keys, &cap, rep->n_attrs, sizeof *rep->attr_keys);
    rep->attr_keys = keys;
    cap = rep->cap_attrs;
    ok = ok && reserve(&values, &cap, rep->n_attrs, sizeof *rep->attr_values);
    rep->attr_values = values;
    if (!ok)
        return enomem(err);
    rep->cap_attrs = cap;
    char *k_copy = rb_strdup(key), *v_copy = rb_strdup(value);
    if (!k_copy || !v_copy) {
        rb_free(k_copy);
        rb_free(v_copy);
        return enomem(err);
    }
    rep->attr_keys[rep->n_attrs] = k_copy;
    rep->attr_values[rep->n_attrs] = v_copy;
    rep->n_attrs++;
    return RB_OK;
}

static int set_report_attr(void *rep, const char *key, const char *value, rb_err *err)
{
    return rb_report_set_attr(rep, key, value, err);
}

int rb_report_set_provenance(rb_report *rep, const rb_provenance *pv, rb_err *err)
{
    return rb_provenance_each(pv, set_report_attr, rep, err);
}

int rb_report_format_from_path(const char *path, rb_report_format *fmt, rb_err *err)
{
    if (!path || !fmt)
        return rb_err_set(err, RB_EINVAL, "rb_report_format_from_path: NULL argument");
    const char *dot = strrchr(rb_path_basename(path), '.');
    if (dot && strcasecmp(dot, ".md") == 0)
        *fmt = RB_REPORT_MARKDOWN;
    else if (dot && strcasecmp(dot, ".json") == 0)
        *fmt = RB_REPORT_JSON;
    else if (dot && strcasecmp(dot, ".csv") == 0)
        *fmt = RB_REPORT_CSV;
    else
        return rb_err_set(err, RB_ECONFIG, "%s: unknown report format (use .md, .json or .csv)", path);
    return RB_OK;
}

static int write_text(const char *tmp_path, const char *path, const char *text, rb_err *err)
{
    FILE *f = fopen(tmp_path, "wb");
    if (!f)
        return rb_err_set(err, RB_EIO, "%s: cannot write: %s", path, strerror(errno));
    size_t len = strlen(text);
    bool ok = fwrite(text, 1, len, f) == len && fflush(f) == 0;
    /* fsync before the rename: otherwise a crash can leave an empty file under the final name. */
    ok = ok && fsync(fileno(f)) == 0;
    int e = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (!ok)
        return rb_err_set(err, RB_EIO, "%s: cannot write: %s", path, strerror(e));
    return RB_OK;
}

int rb_report_write(const rb_report *rep, const char *path, rb_report_format fmt, bool overwrite, rb_err *err)
{
    if (!path)
        return rb_err_set(err, RB_EINVAL, "rb_report_write: no path");
    rb_outfile out = {0};
    char *text = NULL;
    int rc = rb_report_render(rep, fmt, &text, err);
    if (rc) {
        rb_err_prefix(err, rc, "%s: ", path);
        goto done;
    }
    if ((rc = rb_outfile_begin(&out, path, overwrite, err)))
        goto done;
    if ((rc = write_text(out.tmp_path, path, text, err)))
        goto done;
    rc = rb_outfile_commit(&out, err);
done:
    rb_outfile_abort(&out); /* no-op after begin failed or commit ran: both leave out empty */
    rb_free(text);
    return rc;
}
