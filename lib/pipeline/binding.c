/* What a binding does to its channels' elements besides picking them: the names and unit the config gives
 * them, the scale (shared with friction training specs), and names made unique across channels. Used by the
 * loader (config.c), the runner (run.c) and the stream (stream.c), so that a log and a stream agree. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pipeline_internal.h"

int rb_binding_scale_unit(rb_cfg *c, const cJSON *binding, double *scale, char **unit)
{
    const cJSON *sv = rb_cfg_member(binding, "scale"), *uv = rb_cfg_member(binding, "unit");
    int rc = RB_OK;
    if (sv) {
        rb_cfg_push_key(c, "scale", 0);
        rc = rb_cfg_want_number(c, sv, scale);
        if (!rc && *scale == 0)
            rc = rb_cfg_error(c, "must be non-zero (a factor every value is multiplied by)");
        rb_cfg_pop(c);
    }
    if (!rc && uv) {
        rb_cfg_push_key(c, "unit", 0);
        rc = rb_cfg_want_string(c, uv, false, unit);
        rb_cfg_pop(c);
    }
    if (!rc && sv && *scale != 1 && !uv) {
        rb_cfg_push_key(c, "scale", 0);
        rc = rb_cfg_error(c, "needs 'unit', the unit of the values after scaling (e.g. \"rad/s\")");
        rb_cfg_pop(c);
    }
    return rc;
}

bool rb_binding_numbered(const char *const *names, size_t n)
{
    char want[32];
    for (size_t i = 0; names && i < n; i++) {
        snprintf(want, sizeof want, "%zu", i);
        if (strcmp(names[i], want) != 0)
            return false;
    }
    return true;
}

static int set_string(char **slot, const char *value)
{
    char *copy = rb_strdup(value);
    if (!copy)
        return RB_ENOMEM;
    rb_free(*slot);
    *slot = copy;
    return RB_OK;
}

static void names_path(char *buf, size_t size, const char *binding)
{
    rb_json_step path[3] = {{"signals", 0}, {binding, 0}, {"names", 0}};
    rb_json_path_format(path, 3, buf, size);
}

/* "channel a" or "channels a + b" into buf. */
static void channels_text(char *buf, size_t size, const rb_bound_channel *ch, size_t n)
{
    size_t used = (size_t)snprintf(buf, size, "channel%s ", n > 1 ? "s" : "");
    for (size_t c = 0; c < n && used < size; c++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", c ? " + " : "", ch[c].name);
}

static int rename_elements(const rb_config_signal *s, rb_live_signal *ls, const rb_bound_channel *ch, size_t n_ch,
                           const char *label, rb_err *err)
{
    char where[256], chans[512];
    names_path(where, sizeof where, s->name);
    channels_text(chans, sizeof chans, ch, n_ch);
    if (s->n_names != ls->width)
        return rb_err_set(err, RB_EINPUT, "%s: %s: %zu names for the %zu elements of binding '%s' (%s)", label, where,
                          s->n_names, ls->width, s->name, chans);
    for (size_t c = 0; c < n_ch; c++)
        if (!rb_binding_numbered(ch[c].elements, ch[c].width))
            return rb_err_set(err, RB_EINPUT,
                              "%s: %s: channel %s names its elements ('%s', ...): 'names' renames only elements a "
                              "file leaves unnamed (0, 1, ...); pick named elements with 'elements'",
                              label, where, ch[c].name, ch[c].elements[0]);
    for (size_t e = 0; e < ls->width; e++)
        if (set_string(&ls->names[e], s->names[e]))
            return rb_err_set(err, RB_ENOMEM, "%s: out of memory", label);
    return RB_OK;
}

static bool names_collide(char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return true;
    return false;
}

/* Several channels whose names collide ("0".."5" twice, or one joint in a joint and a motor channel): every
 * element becomes "<channel>/<element>", so that outputs and report rows tell them apart. */
static int qualify(rb_live_signal *ls, const rb_bound_channel *ch, size_t n_ch)
{
    for (size_t c = 0, e = 0; c < n_ch; c++)
        for (size_t k = 0; k < ch[c].width && e < ls->width; k++, e++) {
            char *q = rb_asprintf("%s/%s", ch[c].name, ls->names[e]);
            if (!q)
                return RB_ENOMEM;
            rb_free(ls->names[e]);
            ls->names[e] = q;
        }
    return RB_OK;
}

int rb_binding_relabel(const rb_config_signal *s, rb_live_signal *ls, const rb_bound_channel *ch, size_t n_ch,
                       const char *label, rb_err *err)
{
    int rc = RB_OK;
    if (s->n_names)
        rc = rename_elements(s, ls, ch, n_ch, label, err);
    else if (n_ch > 1 && names_collide(ls->names, ls->width) && qualify(ls, ch, n_ch))
        rc = rb_err_set(err, RB_ENOMEM, "%s: out of memory", label);
    for (size_t e = 0; !rc && s->unit && e < ls->width; e++)
        if (set_string(&ls->units[e], s->unit))
            rc = rb_err_set(err, RB_ENOMEM, "%s: out of memory", label);
    return rc;
}
