/* The scale validation of thrust estimates (seed 004, V-B): JSON text -> validated rb_thrust_validation (the log,
 * the variants with their loaded pipelines, the scale, temperature and throttle channels, the windows, the bound).
 * Keys are documented in roboest/experiments.h; messages come from the configuration toolkit (roboest/config.h). */
#include <math.h>
#include <string.h>

#include "experiments_internal.h"

typedef struct tload {
    rb_cfg c;
    rb_thrust_validation *tv;
    const rb_registry *reg;
} tload;

/* ---- variants ----------------------------------------------------------------------------------------------- */
static int one_variant(tload *x, const cJSON *v, rb_thrust_variant *var)
{
    rb_experiments_variant f = {&var->name, &var->pipeline_path, &var->support, &var->pipeline, NULL, NULL};
    return rb_experiments_parse_variant(&x->c, x->reg, v, "support", &f);
}

static int parse_variants(rb_cfg *c, const cJSON *v)
{
    tload *x = (tload *)c;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return rb_cfg_error(c, "expected a non-empty array of variants ({\"name\", \"pipeline\", \"support\"})");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (!(x->tv->variants = rb_calloc(n, sizeof *x->tv->variants)))
        return rb_cfg_nomem(c);
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        x->tv->n_variants = i + 1;
        rc = one_variant(x, e, &x->tv->variants[i]);
        for (size_t k = 0; !rc && k < i; k++)
            if (strcmp(x->tv->variants[k].name, x->tv->variants[i].name) == 0) {
                rb_cfg_push_key(c, "name", 0);
                rc = rb_cfg_error(c, "variant name '%s' is already used by variants[%zu]", x->tv->variants[i].name, k);
                rb_cfg_pop(c);
            }
        rb_cfg_pop(c);
    }
    return rc;
}

/* ---- the log and its channels ---------------------------------------------------------------------------------- */
static int parse_log(rb_cfg *c, const cJSON *v)
{
    tload *x = (tload *)c;
    int rc = rb_cfg_want_session(c, v, &x->tv->log);
    size_t len;
    const char *stem = rc ? NULL : rb_path_stem(x->tv->log.paths[0], &len);
    if (stem && !(x->tv->log_name = rb_strndup(stem, len)))
        rc = rb_cfg_nomem(c);
    return rc;
}

static int parse_scales(rb_cfg *c, const cJSON *v)
{
    tload *x = (tload *)c;
    int rc = rb_cfg_want_strings(c, v, false, &x->tv->scales, &x->tv->n_scales);
    size_t dup, first;
    if (!rc)
        rc = rb_cfg_find_duplicate(c, (const char *const *)x->tv->scales, x->tv->n_scales, &dup, &first);
    if (!rc && dup != SIZE_MAX) {
        rb_cfg_push_index(c, dup);
        rc = rb_cfg_error(c, "channel '%s' is already listed at scales[%zu]", x->tv->scales[dup], first);
        rb_cfg_pop(c);
    }
    return rc;
}

static int parse_temperature(rb_cfg *c, const cJSON *v)
{
    tload *x = (tload *)c;
    static const char *const keys[] = {"channel", "element"};
    int rc = rb_cfg_check_object(c, v, keys, 2);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "channel", true, &x->tv->temperature);
    if (!rc)
        rc = rb_cfg_member_string(c, v, "element", false, &x->tv->temperature_element);
    return rc;
}

static int parse_throttles(rb_cfg *c, const cJSON *v)
{
    tload *x = (tload *)c;
    static const char *const keys[] = {"channel"};
    int rc = rb_cfg_check_object(c, v, keys, 1);
    return rc ? rc : rb_cfg_member_string(c, v, "channel", true, &x->tv->throttles);
}

/* ---- windows ------------------------------------------------------------------------------------------------------ */
static int parse_jets_off(rb_cfg *c, const cJSON *v)
{
    tload *x = (tload *)c;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2)
        return rb_cfg_error(c, "expected two windows [[t0, t1], [t0, t1]] (s): jets off at the start and at the end");
    size_t i = 0;
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        rb_window w;
        if (!(rc = rb_cfg_want_window(c, e, false, &w)))
            x->tv->jets_off[i] = (rb_interval){w.t0, w.t1}, x->tv->jets_off_from_start[i] = w.from_start;
        /* comparable here when both count from the same origin; otherwise checked once resolved, per run */
        if (!rc && i == 1 && x->tv->jets_off_from_start[0] == x->tv->jets_off_from_start[1] &&
            !(x->tv->jets_off[0].t1 < x->tv->jets_off[1].t0))
            rc = rb_cfg_error(c, "the end window must start after the start window ends (%g s)", x->tv->jets_off[0].t1);
        rb_cfg_pop(c);
    }
    x->tv->has_jets_off = !rc;
    return rc;
}

static int parse_ramp(rb_cfg *c, const cJSON *v)
{
    tload *x = (tload *)c;
    x->tv->has_ramp = true;
    rb_window w;
    int rc = rb_cfg_want_window(c, v, false, &w);
    if (!rc)
        x->tv->ramp = (rb_interval){w.t0, w.t1}, x->tv->ramp_from_start = w.from_start;
    return rc;
}

static int parse_correction(rb_cfg *c, const cJSON *v)
{
    tload *x = (tload *)c;
    if (!cJSON_IsBool(v))
        return rb_cfg_error(c, "expected true or false");
    x->tv->temperature_correction = cJSON_IsTrue(v);
    return RB_OK;
}

/* ---- numbers ---------------------------------------------------------------------------------------------------- */
static int positive(rb_cfg *c, const cJSON *v, double *out)
{
    int rc = rb_cfg_want_number(c, v, out);
    return rc ? rc : rb_cfg_check_rule(c, *out, RB_CFG_POSITIVE);
}

static int parse_mass(rb_cfg *c, const cJSON *v) { return positive(c, v, &((tload *)c)->tv->mass); }
static int parse_g(rb_cfg *c, const cJSON *v) { return positive(c, v, &((tload *)c)->tv->g); }

static int parse_tolerance(rb_cfg *c, const cJSON *v)
{
    tload *x = (tload *)c;
    int rc = rb_cfg_want_number(c, v, &x->tv->throttle_off_tolerance);
    return rc ? rc : rb_cfg_check_rule(c, x->tv->throttle_off_tolerance, RB_CFG_NON_NEGATIVE);
}

static int parse_bound(rb_cfg *c, const cJSON *v)
{
    tload *x = (tload *)c;
    static const char *const keys[] = {"N", "percent"};
    int rc = rb_cfg_check_object(c, v, keys, 2);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "N", RB_CFG_POSITIVE, &x->tv->bound_n);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "percent", RB_CFG_POSITIVE, &x->tv->bound_percent);
    return rc;
}

static int parse_name(rb_cfg *c, const cJSON *v)
{
    tload *x = (tload *)c;
    rb_free(x->tv->name);
    x->tv->name = NULL;
    return rb_cfg_want_string(c, v, false, &x->tv->name);
}

/* temperature_correction first: it decides what is required. */
static const rb_cfg_section sections[] = {
    {"name", false, parse_name},
    {"temperature_correction", false, parse_correction},
    {"log", true, parse_log},
    {"variants", true, parse_variants},
    {"scales", true, parse_scales},
    {"temperature", false, parse_temperature},
    {"throttles", false, parse_throttles},
    {"jets_off", false, parse_jets_off},
    {"ramp", false, parse_ramp},
    {"mass", true, parse_mass},
    {"g", false, parse_g},
    {"bound", false, parse_bound},
    {"throttle_off_tolerance", false, parse_tolerance},
};

/* The keys whose need depends on others. */
static int check_required(rb_cfg *c, const rb_thrust_validation *tv)
{
    if (tv->temperature_correction && !tv->has_jets_off)
        return rb_cfg_error(c, "missing key 'jets_off' ([[t0, t1], [t0, t1]]: the jets-off windows the temperature "
                               "correction needs; or set \"temperature_correction\": false)");
    if (tv->temperature_correction && !tv->temperature)
        return rb_cfg_error(c, "missing key 'temperature' ({\"channel\": ...}: the temperature correction needs it; "
                               "or set \"temperature_correction\": false)");
    if (tv->has_jets_off && !tv->throttles)
        return rb_cfg_error(c, "missing key 'throttles' ({\"channel\": ...}: the jets-off windows are checked "
                               "against it)");
    return RB_OK;
}

void rb_thrust_validation_free(rb_thrust_validation *tv)
{
    if (!tv)
        return;
    for (size_t i = 0; tv->variants && i < tv->n_variants; i++) {
        rb_free(tv->variants[i].name);
        rb_free(tv->variants[i].pipeline_path);
        rb_free(tv->variants[i].support);
        rb_pipeline_free(tv->variants[i].pipeline);
    }
    rb_free(tv->variants);
    rb_strings_free(tv->log.paths, tv->log.n_paths);
    rb_free(tv->log_name);
    rb_strings_free(tv->scales, tv->n_scales);
    rb_free(tv->temperature);
    rb_free(tv->temperature_element);
    rb_free(tv->throttles);
    rb_free(tv->name);
    rb_free(tv->path);
    rb_free(tv->sha256);
    rb_free(tv);
}

static int init_tv(void *doc, const char *file, const char *name, const char *sha256)
{
    rb_thrust_validation *tv = doc;
    tv->sha256 = rb_strdup(sha256);
    tv->path = rb_strdup(file);
    tv->name = rb_strdup(name);
    tv->temperature_correction = true;
    tv->g = 9.81;
    tv->bound_n = 35;
    tv->bound_percent = 7;
    return tv->sha256 && tv->path && tv->name ? RB_OK : RB_ENOMEM;
}

static int parse_tv(const rb_cfg *c, const cJSON *root, void *doc, const void *reg)
{
    tload x = {*c, doc, reg};
    int rc = rb_cfg_sections(&x.c, root, sections, sizeof sections / sizeof sections[0]);
    return rc ? rc : check_required(&x.c, x.tv);
}

static void free_tv(void *doc) { rb_thrust_validation_free(doc); }

static const rb_cfg_format tv_format = {
    "validate_thrust.json", "validate_thrust", true, sizeof(rb_thrust_validation), init_tv, parse_tv, free_tv};

int rb_thrust_validation_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                                   const rb_registry *reg, rb_thrust_validation **out, rb_err *err)
{
    return rb_cfg_load_text(&tv_format, text, len, name_for_messages, base_file, reg, (void **)out, err);
}

int rb_thrust_validation_load(const char *path, const rb_registry *reg, rb_thrust_validation **out, rb_err *err)
{
    return rb_cfg_load(&tv_format, path, reg, (void **)out, err);
}

double rb_thrust_bound(double bound_n, double bound_percent, double mass, double g, const char **binds)
{
    double pct = bound_percent / 100.0 * mass * g;
    if (binds)
        *binds = bound_n < pct ? "N" : pct < bound_n ? "percent" : "both";
    return fmin(bound_n, pct);
}
