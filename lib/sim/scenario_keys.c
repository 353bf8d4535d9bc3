/* lib/sim's scenario loader: the key helpers its sections share (booleans, fixed-length number arrays, names and
 * model frames with suggestions). */
#include <math.h>
#include <string.h>

#include "scenario_internal.h"

int sim_scn_opt_bool(rb_cfg *c, const cJSON *obj, const char *key, bool *out)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return RB_OK;
    rb_cfg_push_key(c, key, 0);
    int rc = cJSON_IsBool(v) ? RB_OK : rb_cfg_error(c, "expected true or false");
    if (!rc)
        *out = cJSON_IsTrue(v);
    rb_cfg_pop(c);
    return rc;
}

int sim_scn_want_numbers(rb_cfg *c, const cJSON *v, size_t n, double *out)
{
    if (!cJSON_IsArray(v) || (size_t)cJSON_GetArraySize(v) != n)
        return rb_cfg_error(c, "expected an array of %zu numbers", n);
    size_t i = 0;
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        rc = rb_cfg_want_number(c, e, &out[i]);
        rb_cfg_pop(c);
    }
    return rc;
}

int sim_scn_opt_numbers(rb_cfg *c, const cJSON *obj, const char *key, size_t n, double *out)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return RB_OK;
    rb_cfg_push_key(c, key, 0);
    int rc = sim_scn_want_numbers(c, v, n, out);
    rb_cfg_pop(c);
    return rc;
}

int sim_scn_want_name(rb_cfg *c, const char *what, const char *name, char *const *names, size_t n, size_t *index)
{
    rb_suggest sg;
    rb_suggest_init(&sg, name);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(names[i], name) == 0) {
            *index = i;
            return RB_OK;
        }
        rb_suggest_consider(&sg, names[i]);
    }
    const char *best = rb_suggest_best(&sg);
    if (best)
        return rb_cfg_error(c, "unknown %s '%s' (did you mean '%s'?)", what, name, best);
    return rb_cfg_error(c, "unknown %s '%s'", what, name);
}

int sim_scn_want_frame(scn *x, const cJSON *v, int *frame)
{
    rb_cfg *c = &x->c;
    const rb_model *m = x->s->model;
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return rb_cfg_error(c, "expected a frame name");
    long f = rb_model_frame_index(m, v->valuestring);
    if (f >= 0) {
        *frame = (int)f;
        return RB_OK;
    }
    rb_suggest sg;
    rb_suggest_init(&sg, v->valuestring);
    for (size_t i = 0; i < m->n_frames; i++)
        rb_suggest_consider(&sg, m->frames[i].name);
    const char *best = rb_suggest_best(&sg);
    if (best)
        return rb_cfg_error(c, "unknown frame '%s' (did you mean '%s'?)", v->valuestring, best);
    return rb_cfg_error(c, "unknown frame '%s'", v->valuestring);
}

int sim_scn_member_frame(scn *x, const cJSON *obj, const char *key, bool required, int *frame)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return required ? rb_cfg_error(&x->c, "missing key '%s'", key) : RB_OK;
    rb_cfg_push_key(&x->c, key, 0);
    int rc = sim_scn_want_frame(x, v, frame);
    rb_cfg_pop(&x->c);
    return rc;
}

/* ---- references (joint references and jet throttles) ---- */
static int key_error(rb_cfg *c, const char *key, const char *what)
{
    rb_cfg_push_key(c, key, 0);
    int rc = rb_cfg_error(c, "%s", what);
    rb_cfg_pop(c);
    return rc;
}

/* A points array (times or values) of a ramp or spline reference: at least 2 numbers, as many as *n when set. */
static int want_points(rb_cfg *c, const cJSON *obj, const char *key, size_t *n, double **out)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return rb_cfg_error(c, "missing key '%s'", key);
    rb_cfg_push_key(c, key, 0);
    int rc = RB_OK;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 2)
        rc = rb_cfg_error(c, "expected an array of at least 2 numbers");
    else if (*n && (size_t)cJSON_GetArraySize(v) != *n)
        rc = rb_cfg_error(c, "expected %zu numbers (as many as times)", *n);
    if (!rc) {
        *n = (size_t)cJSON_GetArraySize(v);
        *out = rb_malloc(*n * sizeof **out);
        rc = *out ? sim_scn_want_numbers(c, v, *n, *out) : rb_cfg_nomem(c);
    }
    rb_cfg_pop(c);
    return rc;
}

int sim_scn_parse_ref(rb_cfg *c, const cJSON *v, rb_sim_ref *r)
{
    static const char *const keys[] = {"kind",  "offset", "amplitude", "freq",  "freq_end",
                                       "phase", "t0",     "t1",        "times", "values"};
    static const char *const kinds[] = {"const", "sine", "chirp", "step", "spline", "ramp", NULL};
    size_t kind = 0;
    int rc = rb_cfg_check_object(c, v, keys, 10);
    if (!rc && !rb_cfg_member(v, "kind"))
        rc = rb_cfg_error(c, "missing key 'kind'");
    if (!rc)
        rc = rb_cfg_member_choice(c, v, "kind", kinds, &kind);
    r->kind = (rb_ref_kind)kind;
    if (!rc)
        rc = rb_cfg_member_number(c, v, "offset", RB_CFG_ANY, &r->offset);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "amplitude", RB_CFG_ANY, &r->amplitude);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "freq", RB_CFG_NON_NEGATIVE, &r->freq);
    r->freq_end = r->freq;
    if (!rc)
        rc = rb_cfg_member_number(c, v, "freq_end", RB_CFG_NON_NEGATIVE, &r->freq_end);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "phase", RB_CFG_ANY, &r->phase);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "t0", RB_CFG_ANY, &r->t0);
    r->t1 = r->t0;
    if (!rc)
        rc = rb_cfg_member_number(c, v, "t1", RB_CFG_ANY, &r->t1);
    if (!rc && r->kind == RB_REF_CHIRP && !(r->t1 > r->t0))
        rc = key_error(c, rb_cfg_member(v, "t1") ? "t1" : "kind", "a chirp needs t1 > t0");
    bool points = r->kind == RB_REF_SPLINE || r->kind == RB_REF_RAMP;
    if (!rc && points) {
        size_t n = 0;
        double *times = NULL, *values = NULL;
        rc = want_points(c, v, "times", &n, &times);
        r->times = times;
        for (size_t i = 1; !rc && i < n; i++)
            if (!(times[i] > times[i - 1])) {
                rb_cfg_push_key(c, "times", 0);
                rb_cfg_push_index(c, i);
                rc = rb_cfg_error(c, "times must increase strictly");
                rb_cfg_pop(c);
                rb_cfg_pop(c);
            }
        if (!rc)
            rc = want_points(c, v, "values", &n, &values);
        r->values = values;
        r->n_points = n;
    } else if (!rc && (rb_cfg_member(v, "times") || rb_cfg_member(v, "values"))) {
        rc = key_error(c, rb_cfg_member(v, "times") ? "times" : "values", "only for kind \"ramp\" or \"spline\"");
    }
    return rc;
}

/* ---- contacts named by other sections (events, scales) ---- */
int sim_scn_want_contact(scn *x, const cJSON *v, const char *purpose, size_t *k)
{
    rb_cfg *c = &x->c;
    const rb_scenario *s = x->s;
    size_t n = s->sim.n_contacts;
    if (n == 0)
        return rb_cfg_error(c, "the scenario has no contacts %s (add them under 'contacts')", purpose);
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (!(d >= 0 && d < (double)n && d == floor(d)))
            return rb_cfg_error(c, "expected a contact index in [0, %zu] or a contact's frame name", n - 1);
        *k = (size_t)d;
        return RB_OK;
    }
    if (!cJSON_IsString(v))
        return rb_cfg_error(c, "expected a contact index or a contact's frame name");
    char **names = rb_malloc(n * sizeof *names);
    if (!names)
        return rb_cfg_nomem(c);
    for (size_t i = 0; i < n; i++)
        names[i] = s->model->frames[s->contacts[i].frame].name;
    int rc = sim_scn_want_name(c, "contact frame", v->valuestring, names, n, k);
    rb_free(names);
    return rc;
}
