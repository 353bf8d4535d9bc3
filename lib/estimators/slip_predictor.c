/* slip_predictor: set-up and steps over the observers module's rb_slip (roboest/observers.h; seed 003 ch. 5). The
 * ports, parameters and documentation are in slip_predictor_type.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/config.h"
#include "roboest/spatial.h"
#include "slip_predictor.h"
#include "torque_common.h"

enum { SP_MAX_NOTES = 16 };

typedef struct sp_stage {
    size_t nf, na, force_stride;
    rb_slip *feet;
    int support[8]; /* per foot: the phase code of its single support */
    bool have_phase;
    tq_strings names, thr_names, thr_units, foot_names;
    const char *unit;
    char *notes[SP_MAX_NOTES];
    size_t n_notes;
    char *warn[8];
    size_t n_warn;
} sp_stage;

static const char *const AXIS_NAMES[3] = {"x", "y", "t"};
static const char *const THR_NAMES[4] = {"F_s", "F_st", "F_c", "F_suf"};

void sp_destroy(void *state)
{
    sp_stage *s = state;
    if (!s)
        return;
    rb_free(s->feet);
    tq_strings_free(&s->names);
    tq_strings_free(&s->thr_names);
    tq_strings_free(&s->thr_units);
    tq_strings_free(&s->foot_names);
    for (size_t i = 0; i < s->n_notes; i++)
        rb_free(s->notes[i]);
    for (size_t i = 0; i < s->n_warn; i++)
        rb_free(s->warn[i]);
    rb_free(s);
}

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

/* The strings of member key equal want[0..n) (a thresholds file learned for another set-up is refused). */
static int same_strings(const char *path, const cJSON *root, const char *key, const char *const *want, size_t n,
                        rb_err *err)
{
    const cJSON *a = rb_cfg_member(root, key);
    size_t i = 0;
    for (const cJSON *e = cJSON_IsArray(a) ? a->child : NULL; e; e = e->next, i++)
        if (!cJSON_IsString(e) || i >= n || strcmp(e->valuestring, want[i]) != 0)
            break;
    if (!cJSON_IsArray(a) || i != n || cJSON_GetArraySize(a) != (int)n)
        return rb_err_set(err, RB_ECONFIG,
                          "thresholds_file %s: \"%s\" does not match the stage's (learned for "
                          "another set-up?)",
                          path, key);
    return RB_OK;
}

/* thresholds_file: a JSON object written by `roboest slip-thresholds` (its keys: roboest/observers.h sec. rb_slip and
 * the stage's doc) sets static_friction, stribeck_friction and coulomb_friction per foot and axis. */
static int read_thresholds(const rb_stage_setup *st, const char *const *feet, size_t nf, const char *const *axes,
                           size_t na, double *fs, double *fst, double *fc, rb_err *err)
{
    static const char *const allowed[] = {
        "stage", "learned_from",    "input_sha256",      "pipeline",         "unit",           "feet",
        "axes",  "static_friction", "stribeck_friction", "coulomb_friction", "slip_threshold", "samples"};
    char *path = rb_stage_file_path(st->config_dir, rb_params_string(st->params, "thresholds_file")), *text = NULL;
    if (!path)
        return nomem(err);
    size_t len = 0;
    cJSON *root = NULL;
    int rc = rb_cfg_read_file(path, &text, &len, err);
    if (!rc)
        rc = rb_cfg_parse_json(path, text, len, &root, err);
    if (!rc && !cJSON_IsObject(root))
        rc = rb_err_set(err, RB_ECONFIG, "thresholds_file %s: expected a JSON object", path);
    for (const cJSON *e = rc ? NULL : root->child; e && !rc; e = e->next) {
        bool ok = false;
        for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
            ok = ok || strcmp(e->string, allowed[i]) == 0;
        if (!ok)
            rc = rb_err_set(err, RB_ECONFIG, "thresholds_file %s: unknown key '%s'", path, e->string);
    }
    const cJSON *unit = rc ? NULL : rb_cfg_member(root, "unit");
    if (!rc && (!cJSON_IsString(unit) || strcmp(unit->valuestring, rb_params_string(st->params, "unit")) != 0))
        rc = rb_err_set(err, RB_ECONFIG, "thresholds_file %s: \"unit\" is not the stage's \"%s\"", path,
                        rb_params_string(st->params, "unit"));
    if (!rc && !(rc = same_strings(path, root, "feet", feet, nf, err)))
        rc = same_strings(path, root, "axes", axes, na, err);
    const char *keys[3] = {"static_friction", "stribeck_friction", "coulomb_friction"};
    double *dst[3] = {fs, fst, fc};
    for (int k = 0; k < 3 && !rc; k++) {
        const cJSON *a = rb_cfg_member(root, keys[k]);
        size_t i = 0;
        for (const cJSON *e = cJSON_IsArray(a) ? a->child : NULL; e && i < nf * na; e = e->next, i++) {
            if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || e->valuedouble < 0)
                break;
            dst[k][i] = e->valuedouble;
        }
        if (!cJSON_IsArray(a) || i != nf * na || cJSON_GetArraySize(a) != (int)(nf * na))
            rc =
                rb_err_set(err, RB_ECONFIG, "thresholds_file %s: \"%s\" must hold %zu numbers >= 0 (per foot and axis)",
                           path, keys[k], nf * na);
    }
    cJSON_Delete(root);
    rb_free(text);
    rb_free(path);
    return rc;
}

static int add_warning(sp_stage *s, char *line, rb_err *err)
{
    if (!line)
        return nomem(err);
    if (s->n_warn >= sizeof s->warn / sizeof s->warn[0]) {
        rb_free(line);
        return RB_OK;
    }
    s->warn[s->n_warn++] = line;
    return RB_OK;
}

/* The rotations foot <- sensor from the model (accelerometers, ft_sensors) or accelerometer_rpy. */
static int mounts(const rb_stage_setup *st, sp_stage *s, const char *const *feet, rb_slip_config *cfgs, rb_err *err)
{
    const rb_param_value *accs = rb_params_get(st->params, "accelerometers");
    const rb_param_value *fts = rb_params_get(st->params, "ft_sensors");
    const rb_param_value *rpy = rb_params_get(st->params, "accelerometer_rpy");
    int rc;
    if (!st->model && (accs->count || fts->count))
        return rb_err_set(err, RB_ECONFIG, "accelerometers and ft_sensors need the pipeline's \"model\"");
    bool have_rpy = rpy->count > 0; /* an empty array (--print-config's rendering of "none") is none */
    if (accs->count && have_rpy)
        return rb_err_set(err, RB_ECONFIG,
                          "give accelerometers (the model's rotations) or accelerometer_rpy, not both");
    if ((accs->count && accs->count != s->nf) || (fts->count && fts->count != s->nf))
        return rb_err_set(err, RB_ECONFIG, "accelerometers and ft_sensors need one name per foot (%zu)", s->nf);
    if (have_rpy && (rc = tq_check_count(st, "accelerometer_rpy", 3, s->nf, err)))
        return rc;
    for (size_t f = 0; f < s->nf; f++) {
        rb_slip_config *c = &cfgs[f];
        if (have_rpy)
            rb_m3_from_rpy(tq_value(rpy, 3, f, 0), tq_value(rpy, 3, f, 1), tq_value(rpy, 3, f, 2), c->R_acc);
        if (!st->model)
            continue;
        int foot, sensor;
        if ((rc = tq_find_frame(st, "feet", f, feet[f], &foot, err)))
            return rc;
        bool rigid;
        if (accs->count) {
            if ((rc = tq_find_frame(st, "accelerometers", f, accs->strings[f], &sensor, err)) ||
                (rc = rb_slip_mount(st->model, (size_t)foot, (size_t)sensor, c->R_acc, &rigid, err)))
                return rc;
            if (!rigid &&
                (rc = add_warning(s,
                                  rb_asprintf("accelerometer %s is not on foot %s (a joint moves between them): its "
                                              "rotation is the one at q = 0 and its reading is not the foot's",
                                              accs->strings[f], feet[f]),
                                  err)))
                return rc;
        }
        if (fts->count) {
            int ft;
            if ((rc = tq_find_ft(st, "ft_sensors", f, fts->strings[f], &ft, err)) ||
                (rc = rb_slip_mount(st->model, (size_t)foot, (size_t)st->model->ft[ft].frame, c->R_ft, &rigid, err)))
                return rc;
            if (!rigid &&
                (rc = add_warning(s,
                                  rb_asprintf("FT sensor %s's frame is not on foot %s (a joint moves between them): "
                                              "its rotation is the one at q = 0",
                                              fts->strings[f], feet[f]),
                                  err)))
                return rc;
        }
    }
    return RB_OK;
}

static int axes_of(const rb_param_value *v, rb_slip_axis *axes, rb_err *err)
{
    if (v->count < 1 || v->count > RB_SLIP_MAX_AXES)
        return rb_err_set(err, RB_ECONFIG, "axes has %zu values: give 1 to 3 of \"x\", \"y\", \"t\"", v->count);
    for (size_t a = 0; a < v->count; a++) {
        axes[a] = v->strings[a][0] == 'x' ? RB_SLIP_X : v->strings[a][0] == 'y' ? RB_SLIP_Y : RB_SLIP_T;
        for (size_t b = 0; b < a; b++)
            if (axes[b] == axes[a])
                return rb_err_set(err, RB_ECONFIG, "axes: \"%s\" is listed twice", v->strings[a]);
    }
    return RB_OK;
}

static int phase_setup(const rb_stage_setup *st, sp_stage *s, rb_err *err)
{
    const rb_param_value *sp = rb_params_get(st->params, "support_phase");
    s->have_phase = st->in[SP_PHASE].width > 0;
    if (!s->have_phase)
        return RB_OK;
    if (st->in[SP_PHASE].width != 1)
        return rb_err_set(err, RB_ECONFIG,
                          "input phase has %zu elements, expected 1 (0 double support, 1 left, 2 "
                          "right support)",
                          st->in[SP_PHASE].width);
    if (sp->count != s->nf)
        return rb_err_set(err, RB_ECONFIG, "support_phase has %zu values: give one per foot (%zu) with phase wired",
                          sp->count, s->nf);
    for (size_t f = 0; f < s->nf; f++)
        s->support[f] = (int)sp->numbers[f];
    return RB_OK;
}

static int names_setup(sp_stage *s, const char *const *feet, const rb_slip_axis *axes, bool ratio, rb_err *err)
{
    size_t n = s->nf * s->na;
    int rc;
    if ((rc = tq_strings_alloc(&s->names, n, err)) || (rc = tq_strings_alloc(&s->thr_names, 4 * n, err)) ||
        (rc = tq_strings_alloc(&s->thr_units, 4 * n, err)) || (rc = tq_strings_alloc(&s->foot_names, s->nf, err)))
        return rc;
    s->unit = ratio ? "" : "N";
    for (size_t f = 0; f < s->nf && !rc; f++) {
        rc = tq_strings_set(&s->foot_names, f, err, "%s", feet[f]);
        for (size_t a = 0; a < s->na && !rc; a++) {
            rc = tq_strings_set(&s->names, f * s->na + a, err, "%s/%s", feet[f], AXIS_NAMES[axes[a]]);
            for (size_t j = 0; j < 4 && !rc; j++)
                if (!(rc = tq_strings_set(&s->thr_names, 4 * (f * s->na + a) + j, err, "%s/%s/%s", feet[f],
                                          AXIS_NAMES[axes[a]], THR_NAMES[j])))
                    rc = tq_strings_set(&s->thr_units, 4 * (f * s->na + a) + j, err, "%s", s->unit);
        }
    }
    return rc;
}

static int sp_create_in(const rb_stage_setup *st, sp_stage *s, rb_err *err)
{
    const rb_params *p = st->params;
    const rb_param_value *feet_v = rb_params_get(p, "feet");
    const char *const *feet = (const char *const *)feet_v->strings;
    s->nf = feet_v->count;
    if (s->nf < 1 || s->nf > 8)
        return rb_err_set(err, RB_ECONFIG, "feet has %zu names: give 1 to 8", s->nf);
    rb_slip_axis axes[RB_SLIP_MAX_AXES];
    int rc = axes_of(rb_params_get(p, "axes"), axes, err);
    if (rc)
        return rc;
    s->na = rb_params_get(p, "axes")->count;
    size_t fw = st->in[SP_FORCE].width;
    if (fw != 3 * s->nf && fw != 6 * s->nf)
        return rb_err_set(err, RB_ECONFIG,
                          "input force has %zu elements, expected %zu or %zu (fx fy fz [mx my mz] per "
                          "foot of feet)",
                          fw, 3 * s->nf, 6 * s->nf);
    s->force_stride = fw / s->nf;
    if ((rc = tq_check_port(st, SP_ACC, 3 * s->nf, "x y z per foot of feet", false, err)) ||
        (rc = phase_setup(st, s, err)))
        return rc;
    bool ratio = strcmp(rb_params_string(p, "unit"), "ratio") == 0;
    bool fixed = strcmp(rb_params_string(p, "thresholds"), "fixed") == 0;
    const char *const keys[3] = {"static_friction", "stribeck_friction", "coulomb_friction"};
    for (int k = 0; k < 3; k++)
        if ((rc = tq_check_count(st, keys[k], s->na, s->nf, err)))
            return rc;
    bool from_file = rb_params_get(p, "thresholds_file")->given;
    if (fixed && !from_file && !rb_params_get(p, "coulomb_friction")->given)
        return rb_err_set(err, RB_ECONFIG,
                          "thresholds \"fixed\" needs coulomb_friction or thresholds_file (e.g. "
                          "written by roboest slip-thresholds)");
    double thr[3][8 * RB_SLIP_MAX_AXES];
    for (int k = 0; k < 3; k++)
        for (size_t f = 0; f < s->nf; f++)
            for (size_t a = 0; a < s->na; a++)
                thr[k][f * s->na + a] = tq_value(rb_params_get(p, keys[k]), s->na, f, a);
    if (from_file && (rc = read_thresholds(st, feet, s->nf, (const char *const *)rb_params_get(p, "axes")->strings,
                                           s->na, thr[0], thr[1], thr[2], err)))
        return rc;
    rb_slip_config cfgs[8];
    double g = strcmp(rb_params_string(p, "slip_threshold_unit"), "g") == 0 ? 9.80665 : 1.0;
    for (size_t f = 0; f < s->nf; f++) {
        rb_slip_config *c = &cfgs[f];
        rb_slip_config_init(c);
        c->foot_mass = rb_params_number(p, "foot_mass");
        c->tr = rb_params_number(p, "slip_threshold") * g;
        c->margin = rb_params_number(p, "safety_margin");
        c->ratio = ratio;
        c->learn = !fixed;
        c->bias_samples = (size_t)llround(rb_params_number(p, "bias_window") / st->dt);
        c->hold_samples = (size_t)llround(rb_params_number(p, "hold_after_touchdown") / st->dt);
        c->contact_on = rb_params_number(p, "contact_force");
        c->contact_off = c->contact_on / 2;
        c->n_axes = s->na;
        for (size_t a = 0; a < s->na; a++) {
            c->axes[a] = axes[a];
            c->fs0[a] = thr[0][f * s->na + a];
            c->fst0[a] = thr[1][f * s->na + a];
            c->fc0[a] = thr[2][f * s->na + a];
        }
    }
    if ((rc = mounts(st, s, feet, cfgs, err)))
        return rc;
    s->feet = rb_calloc(s->nf, sizeof *s->feet);
    if (!s->feet)
        return nomem(err);
    for (size_t f = 0; f < s->nf; f++)
        if ((rc = rb_slip_init(&s->feet[f], &cfgs[f], err)))
            return rc;
    if ((rc = names_setup(s, feet, axes, ratio, err)))
        return rc;
    size_t n = s->nf * s->na;
    const char *const *nm = (const char *const *)s->names.s;
    const char *const *fn = (const char *const *)s->foot_names.s;
    rb_port *o = st->out;
    o[SP_PREDICTION] = (rb_port){n, nm, NULL};
    o[SP_PREDICTION_FOOT] = (rb_port){s->nf, fn, NULL};
    o[SP_DETECTED] = (rb_port){n, nm, NULL};
    o[SP_THRESHOLDS] = (rb_port){4 * n, (const char *const *)s->thr_names.s, (const char *const *)s->thr_units.s};
    o[SP_TANGENTIAL] = (rb_port){n, nm, (const char *const *)s->thr_units.s};
    o[SP_FRICTION] = (rb_port){n, nm, (const char *const *)s->thr_units.s};
    o[SP_ACCELERATION] = (rb_port){n, nm, NULL};
    o[SP_CONTACT] = (rb_port){s->nf, fn, NULL};
    o[SP_NORMAL] = (rb_port){s->nf, fn, NULL};
    return RB_OK;
}

int sp_create(const rb_stage_setup *st, void **state, rb_err *err)
{
    sp_stage *s = rb_calloc(1, sizeof *s);
    if (!s)
        return nomem(err);
    int rc = sp_create_in(st, s, err);
    if (rc) {
        sp_destroy(s);
        return rc;
    }
    *state = s;
    return RB_OK;
}

int sp_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)t;
    sp_stage *s = state;
    int phase = -1;
    if (s->have_phase) {
        double v = in[SP_PHASE][0];
        if (!(v == 0 || v == 1 || v == 2))
            return rb_err_set(err, RB_EINPUT,
                              "sample %zu: phase = %g is not 0 (double support), 1 (left support) or 2 "
                              "(right support)",
                              k, v);
        phase = (int)v;
    }
    for (size_t f = 0; f < s->nf; f++) {
        rb_slip_out o;
        int contact = phase < 0 ? -1 : (phase == 0 || phase == s->support[f]);
        rb_slip_step(&s->feet[f], in[SP_FORCE] + f * s->force_stride, in[SP_ACC] + 3 * f, contact, &o);
        for (size_t a = 0; a < s->na; a++) {
            size_t i = f * s->na + a;
            out[SP_PREDICTION][i] = o.prediction[a];
            out[SP_DETECTED][i] = o.detected[a];
            out[SP_TANGENTIAL][i] = o.ft[a];
            out[SP_FRICTION][i] = o.ff[a];
            out[SP_ACCELERATION][i] = o.acc[a];
            double *th = out[SP_THRESHOLDS] + 4 * i;
            th[0] = o.fs[a], th[1] = o.fst[a], th[2] = o.fc[a], th[3] = o.fsuf[a];
        }
        out[SP_PREDICTION_FOOT][f] = o.worst;
        out[SP_CONTACT][f] = o.contact;
        out[SP_NORMAL][f] = o.normal;
    }
    return RB_OK;
}

int sp_finish(void *state, rb_err *err)
{
    sp_stage *s = state;
    for (size_t i = 0; i < s->n_notes; i++)
        rb_free(s->notes[i]);
    s->n_notes = 0;
    for (size_t i = 0; i < s->n_warn && s->n_notes < SP_MAX_NOTES; i++)
        if (!(s->notes[s->n_notes++] = rb_strdup(s->warn[i])))
            return nomem(err);
    for (size_t f = 0; f < s->nf && s->n_notes < SP_MAX_NOTES; f++) {
        const rb_slip *sl = &s->feet[f];
        if (sl->n_nonfinite &&
            !(s->notes[s->n_notes++] = rb_asprintf("%s: %ld sample(s) with a non-finite force or acceleration element "
                                                   "(outputs NaN, state held)",
                                                   s->foot_names.s[f], sl->n_nonfinite)))
            return nomem(err);
    }
    return RB_OK;
}

size_t sp_notes(void *state, const char *const **lines)
{
    sp_stage *s = state;
    *lines = (const char *const *)s->notes;
    return s->n_notes;
}
