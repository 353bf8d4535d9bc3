/* A reference kept in another file than the log (the "reference_log" of pipeline metrics and suites): its path
 * from a template per log, the file read with its clock moved, and the check that both clocks are one. */
#include <math.h>
#include <string.h>

#include "pipeline_internal.h"

static const char *const placeholders[] = {"{log_dir}", "{log_stem}", "{log_name}"};

/* Index of the placeholder at s, or -1. */
static int placeholder_at(const char *s)
{
    for (int k = 0; k < 3; k++)
        if (strncmp(s, placeholders[k], strlen(placeholders[k])) == 0)
            return k;
    return -1;
}

static int check_template(rb_cfg *c, const char *path)
{
    for (const char *s = path; *s; s++)
        if (*s == '{' && placeholder_at(s) < 0)
            return rb_cfg_error(c, "unknown placeholder in '%s' (known: {log_dir}, {log_stem}, {log_name})", path);
    return RB_OK;
}

int rb_reference_log_parse(rb_cfg *c, const cJSON *v, bool allow_interp, rb_reference_log *out)
{
    static const char *const keys[] = {"path", "time_offset", "interp"};
    static const char *const interps[] = {"linear", "hold", NULL};
    char *given = NULL;
    int rc;
    out->interp = RB_INTERP_LINEAR;
    if (cJSON_IsString(v)) {
        rc = rb_cfg_want_string(c, v, false, &given);
    } else if (cJSON_IsObject(v)) {
        size_t interp = 0;
        rc = rb_cfg_check_object(c, v, keys, 3);
        if (!rc)
            rc = rb_cfg_member_string(c, v, "path", true, &given);
        if (!rc && rb_cfg_member(v, "time_offset")) {
            out->has_offset = true;
            rc = rb_cfg_member_number(c, v, "time_offset", RB_CFG_ANY, &out->time_offset);
        }
        if (!rc && rb_cfg_member(v, "interp") && !allow_interp)
            rc = rb_cfg_error(c, "interp: a suite resamples its reference as reference.interp says");
        if (!rc)
            rc = rb_cfg_member_choice(c, v, "interp", interps, &interp);
        out->interp = interp == 1 ? RB_INTERP_HOLD : RB_INTERP_LINEAR;
    } else {
        rc = rb_cfg_error(c,
                          "expected a path or {\"path\": ..., \"time_offset\": s, \"interp\": \"linear\" | \"hold\"}");
    }
    if (!rc)
        rc = check_template(c, given);
    /* {log_dir} is the log's folder as the log was named: not moved into the config's folder */
    if (!rc && !(out->path = placeholder_at(given) == 0 ? rb_strdup(given) : rb_path_relative_to(c->base_file, given)))
        rc = rb_cfg_nomem(c);
    rb_free(given);
    return rc;
}

void rb_reference_log_free(rb_reference_log *rl)
{
    rb_free(rl->path);
    rl->path = NULL;
}

/* The template with the log's folder, stem and file name in place of the placeholders. */
static int expand(const char *tmpl, const char *log_path, char **out, rb_err *err)
{
    size_t len = 1, stem_len = 0;
    const char *base = log_path ? rb_path_basename(log_path) : NULL;
    const char *stem = log_path ? rb_path_stem(log_path, &stem_len) : NULL;
    int dir_len = base && base > log_path ? (int)(base - log_path - 1) : -1; /* -1: "." */
    const char *vals[3] = {dir_len < 0 ? "." : log_path, stem, base};
    size_t lens[3] = {dir_len < 0 ? 1 : (size_t)dir_len, stem_len, base ? strlen(base) : 0};
    for (const char *s = tmpl; *s;) {
        int k = placeholder_at(s);
        if (k >= 0 && !log_path)
            return rb_err_set(err, RB_EINVAL, "reference_log %s: %s needs a log read from a file", tmpl,
                              placeholders[k]);
        len += k >= 0 ? lens[k] : 1;
        s += k >= 0 ? strlen(placeholders[k]) : 1;
    }
    char *o = rb_malloc(len);
    if (!o)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    size_t n = 0;
    for (const char *s = tmpl; *s;) {
        int k = placeholder_at(s);
        if (k >= 0) {
            memcpy(o + n, vals[k], lens[k]);
            n += lens[k];
            s += strlen(placeholders[k]);
        } else {
            o[n++] = *s++;
        }
    }
    o[n] = '\0';
    *out = o;
    return RB_OK;
}

int rb_reference_log_path(const rb_reference_log *rl, const char *log_path, char **path, rb_err *err)
{
    return expand(rl->path, log_path, path, err);
}

int rb_reference_log_read(const rb_reference_log *rl, const char *log_path, const char *channel, char **path,
                          rb_log **out, const rb_channel **ref, rb_err *err)
{
    *out = NULL;
    *path = NULL;
    int rc = expand(rl->path, log_path, path, err);
    if (!rc)
        rc = rb_log_read(*path, out, err);
    if (rc)
        return rc;
    if (!(*ref = rb_log_find(*out, channel)))
        return rb_err_set(err, RB_ENOTFOUND, "%s: reference channel %s not found (reference_log)", *path, channel);
    if ((*ref)->n_samples == 0)
        return rb_err_set(err, RB_EINPUT, "%s: reference channel %s has no samples", *path, channel);
    for (size_t c = 0; rl->time_offset != 0 && c < (*out)->n_channels; c++) /* our copy: the file is untouched */
        for (size_t k = 0; k < (*out)->channels[c].n_samples; k++)
            (*out)->channels[c].time[k] += rl->time_offset;
    return RB_OK;
}

/* Unix time of 1970-01-12: a clock past it counts from an epoch, not from the log's start. */
#define EPOCH_LIKE 1e6

int rb_reference_log_check_clock(const rb_reference_log *rl, const char *path, const rb_channel *ref, const double *t,
                                 size_t n, rb_err *err)
{
    if (n == 0)
        return RB_OK;
    double r0 = ref->time[0], r1 = ref->time[ref->n_samples - 1];
    bool ref_epoch = fabs(r0) >= EPOCH_LIKE, log_epoch = fabs(t[0]) >= EPOCH_LIKE;
    if (!rl->has_offset && ref_epoch != log_epoch)
        return rb_err_set(err, RB_EINPUT,
                          "%s: reference channel %s starts at %.17g s and the run's clock at %.17g s: %s; give "
                          "reference_log.time_offset (s added to the reference's timestamps; %.17g aligns the first "
                          "samples)",
                          path, ref->name, r0, t[0],
                          ref_epoch ? "the reference counts from an epoch, the log from its start"
                                    : "the log counts from an epoch, the reference from its start",
                          t[0] - r0);
    if (r1 < t[0] || r0 > t[n - 1])
        return rb_err_set(err, RB_EINPUT,
                          "%s: reference channel %s (t from %.17g to %.17g s) covers no sample of the run's clock (t "
                          "from %.17g to %.17g s)%s",
                          path, ref->name, r0, r1, t[0], t[n - 1],
                          rl->has_offset ? " after reference_log.time_offset" : ": give reference_log.time_offset");
    return RB_OK;
}
