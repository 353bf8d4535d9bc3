/* lib/sim's scenario loader: the key helpers its sections share (booleans, fixed-length number arrays, names and
 * model frames with suggestions). */
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
