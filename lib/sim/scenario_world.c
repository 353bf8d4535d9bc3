/* Scenario sections (see scenario.c): contacts, contact events, pushes, payload, balancing and sensors. */
#include <stdio.h>
#include <string.h>

#include "roboest/config.h"
#include "roboest/sim.h"

#include "scenario_internal.h"

/* ---- contacts and pushes -------------------------------------------------------------------------------------- */
int sim_scn_parse_contacts(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const keys[] = {"frame", "dim", "baumgarte_T", "active"};
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, "expected an array of contacts");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (!(x->s->contacts = rb_calloc(n ? n : 1, sizeof *x->s->contacts)))
        return rb_cfg_nomem(c);
    x->s->sim.contacts = x->s->contacts;
    x->s->sim.n_contacts = n;
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_sim_contact *k = &x->s->contacts[i];
        double dim = 6;
        k->baumgarte_T = 0.02;
        k->initially_active = true;
        rb_cfg_push_index(c, i);
        rc = rb_cfg_check_object(c, e, keys, 4);
        if (!rc)
            rc = sim_scn_member_frame(x, e, "frame", true, &k->frame);
        for (size_t j = 0; !rc && j < i; j++)
            if (x->s->contacts[j].frame == k->frame) {
                rb_cfg_push_key(c, "frame", 0);
                rc = rb_cfg_error(c, "frame '%s' already has contacts[%zu]", x->s->model->frames[k->frame].name, j);
                rb_cfg_pop(c);
            }
        if (!rc)
            rc = rb_cfg_member_number(c, e, "dim", RB_CFG_ANY, &dim);
        if (!rc && dim != 3 && dim != 6) {
            rb_cfg_push_key(c, "dim", 0);
            rc = rb_cfg_error(c, "must be 3 or 6");
            rb_cfg_pop(c);
        }
        k->dim = (int)dim;
        if (!rc)
            rc = rb_cfg_member_number(c, e, "baumgarte_T", RB_CFG_NON_NEGATIVE, &k->baumgarte_T);
        if (!rc)
            rc = sim_scn_opt_bool(c, e, "active", &k->initially_active);
        rb_cfg_pop(c);
    }
    return rc;
}

int sim_scn_parse_events(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const keys[] = {"t", "contact", "active"};
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, "expected an array of contact events");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (!(x->s->events = rb_calloc(n ? n : 1, sizeof *x->s->events)))
        return rb_cfg_nomem(c);
    x->s->sim.events = x->s->events;
    x->s->sim.n_events = n;
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_sim_contact_event *ev = &x->s->events[i];
        rb_cfg_push_index(c, i);
        rc = rb_cfg_check_object(c, e, keys, 3);
        for (size_t k = 0; !rc && k < 3; k++)
            if (!rb_cfg_member(e, keys[k]))
                rc = rb_cfg_error(c, "missing key '%s'", keys[k]);
        if (!rc)
            rc = rb_cfg_member_number(c, e, "t", RB_CFG_NON_NEGATIVE, &ev->t);
        if (!rc) {
            rb_cfg_push_key(c, "contact", 0);
            rc = sim_scn_want_contact(x, rb_cfg_member(e, "contact"), "to switch", &ev->contact);
            rb_cfg_pop(c);
        }
        if (!rc)
            rc = sim_scn_opt_bool(c, e, "active", &ev->active);
        rb_cfg_pop(c);
    }
    return rc;
}

static const char *const SHAPES[] = {"rect", "half_sine", "triangle", NULL};

int sim_scn_parse_pushes(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const keys[] = {"frame", "shape", "start", "duration", "wrench"};
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, "expected an array of pushes");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (!(x->s->pushes = rb_calloc(n ? n : 1, sizeof *x->s->pushes)))
        return rb_cfg_nomem(c);
    x->s->sim.pushes = x->s->pushes;
    x->s->sim.n_pushes = n;
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_sim_push *p = &x->s->pushes[i];
        size_t shape = 0;
        rb_cfg_push_index(c, i);
        rc = rb_cfg_check_object(c, e, keys, 5);
        if (!rc)
            rc = sim_scn_member_frame(x, e, "frame", true, &p->frame);
        if (!rc)
            rc = rb_cfg_member_choice(c, e, "shape", SHAPES, &shape);
        p->shape = (rb_push_shape)shape;
        if (!rc)
            rc = rb_cfg_member_number(c, e, "start", RB_CFG_NON_NEGATIVE, &p->start);
        p->duration = -1;
        if (!rc)
            rc = rb_cfg_member_number(c, e, "duration", RB_CFG_POSITIVE, &p->duration);
        if (!rc && p->duration < 0)
            rc = rb_cfg_error(c, "missing key 'duration'");
        const cJSON *w = rb_cfg_member(e, "wrench");
        if (!rc && !w)
            rc = rb_cfg_error(c, "missing key 'wrench'");
        if (!rc) {
            rb_cfg_push_key(c, "wrench", 0);
            rc = sim_scn_want_numbers(c, w, 6, p->peak);
            rb_cfg_pop(c);
        }
        rb_cfg_pop(c);
    }
    return rc;
}

int sim_scn_parse_random_pushes(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const keys[] = {"frame", "shape", "rate", "duration", "force_min", "force_max"};
    rb_sim_random_pushes *r = &x->s->sim.random_pushes;
    size_t shape = 0;
    int rc = rb_cfg_check_object(c, v, keys, 6);
    if (!rc)
        rc = sim_scn_member_frame(x, v, "frame", true, &r->frame);
    if (!rc)
        rc = rb_cfg_member_choice(c, v, "shape", SHAPES, &shape);
    r->shape = (rb_push_shape)shape;
    r->duration = 0.1;
    if (!rc)
        rc = rb_cfg_member_number(c, v, "rate", RB_CFG_POSITIVE, &r->rate);
    if (!rc && !rb_cfg_member(v, "rate"))
        rc = rb_cfg_error(c, "missing key 'rate'");
    if (!rc)
        rc = rb_cfg_member_number(c, v, "duration", RB_CFG_POSITIVE, &r->duration);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "force_min", RB_CFG_NON_NEGATIVE, &r->force_min);
    r->force_max = r->force_min;
    if (!rc)
        rc = rb_cfg_member_number(c, v, "force_max", RB_CFG_NON_NEGATIVE, &r->force_max);
    if (!rc && r->force_max < r->force_min) {
        rb_cfg_push_key(c, "force_max", 0);
        rc = rb_cfg_error(c, "must be >= force_min");
        rb_cfg_pop(c);
    }
    return rc;
}

/* ---- balancing ---------------------------------------------------------------------------------------------------- */
int sim_scn_parse_balance(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const keys[] = {"amplitude", "freq", "ik_T", "pelvis_height"};
    rb_sim_balance *b = &x->s->sim.balance;
    int rc = rb_cfg_check_object(c, v, keys, 4);
    for (size_t k = 0; !rc && k < 2; k++)
        if (!rb_cfg_member(v, keys[k]))
            rc = rb_cfg_error(c, "missing key '%s'", keys[k]);
    b->ik_T = 0.02;
    if (!rc)
        rc = rb_cfg_member_number(c, v, "amplitude", RB_CFG_NON_NEGATIVE, &b->amplitude);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "freq", RB_CFG_NON_NEGATIVE, &b->freq);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "ik_T", RB_CFG_POSITIVE, &b->ik_T);
    const cJSON *ph = rb_cfg_member(v, "pelvis_height");
    if (!rc && ph) {
        static const char *const pkeys[] = {"offset", "amplitude", "freq"};
        rb_cfg_push_key(c, "pelvis_height", 0);
        rc = rb_cfg_check_object(c, ph, pkeys, 3);
        if (!rc)
            rc = rb_cfg_member_number(c, ph, "offset", RB_CFG_ANY, &b->pelvis_height.offset);
        if (!rc)
            rc = rb_cfg_member_number(c, ph, "amplitude", RB_CFG_NON_NEGATIVE, &b->pelvis_height.amplitude);
        if (!rc)
            rc = rb_cfg_member_number(c, ph, "freq", RB_CFG_NON_NEGATIVE, &b->pelvis_height.freq);
        rb_cfg_pop(c);
        b->pelvis_height.enabled = true;
    }
    if (!rc && !x->s->model->floating)
        rc = rb_cfg_error(c, "needs a floating base (model.floating: true)");
    if (!rc && x->s->sim.n_contacts == 0)
        rc = rb_cfg_error(c, "needs contacts (the feet that stay planted, under 'contacts')");
    b->enabled = rc == RB_OK;
    return rc;
}

/* ---- sensors ----------------------------------------------------------------------------------------------------- */
static const char *const SENSOR_KINDS[] = {"joint_encoder", "motor_encoder", "motor_current", "ft", "accelerometer",
                                           "gyroscope",     "orientation",   "ft_raw",        NULL};
static const rb_sensor_kind SENSOR_KIND_OF[] = {
    RB_SENS_JOINT_ENCODER, RB_SENS_MOTOR_ENCODER, RB_SENS_MOTOR_CURRENT, RB_SENS_FT,
    RB_SENS_ACCELEROMETER, RB_SENS_GYROSCOPE,     RB_SENS_ORIENTATION,   RB_SENS_FT_RAW};
static const rb_scn_source SOURCE_OF[] = {RB_SCN_JOINT_POS, RB_SCN_MOTOR_POS, RB_SCN_MOTOR_CURRENT, RB_SCN_FT,
                                          RB_SCN_ACC,       RB_SCN_GYRO,      RB_SCN_ORIENTATION,   RB_SCN_FT_RAW};
static const char *const CHANNEL_OF[] = {"joints_state/positions", "motors_state/positions",
                                         "motors_state/currents",  "FTs/",
                                         "accelerometers/",        "gyros/",
                                         "orientations/",          "FTs_raw/"};
enum { KIND_FT = 3, KIND_FT_RAW = 7 };

enum { N_VECS = 8 };
static const char *const VEC_KEYS[N_VECS] = {"noise",      "bias",   "drift_rw", "drift_rate",
                                             "resolution", "offset", "lo",       "hi"};

static rb_sensor_vec *vec_field(rb_sensor_params *p, size_t k)
{
    rb_sensor_vec *f[] = {&p->noise_std,  &p->bias,   &p->drift_rw_std, &p->drift_rate,
                          &p->resolution, &p->offset, &p->lo,           &p->hi};
    return f[k];
}

/* Override k: a number (every element) or an array of n numbers. */
static int sensor_vec(rb_cfg *c, const cJSON *obj, size_t k, rb_scenario_sensor *ss)
{
    const cJSON *v = rb_cfg_member(obj, VEC_KEYS[k]);
    if (!v)
        return RB_OK;
    rb_sensor_vec *f = vec_field(&ss->params, k);
    rb_cfg_push_key(c, VEC_KEYS[k], 0);
    int rc;
    if (cJSON_IsArray(v)) {
        double *each = ss->values + k * ss->params.n;
        rc = sim_scn_want_numbers(c, v, ss->params.n, each);
        f->each = each;
    } else {
        rc = rb_cfg_want_number(c, v, &f->all);
        f->each = NULL;
    }
    rb_cfg_pop(c);
    return rc;
}

/* The IMU frame: a model frame, or a model IMU sensor's name. */
static int sensor_frame(scn *x, const cJSON *v, int *frame)
{
    const rb_model *m = x->s->model;
    for (size_t i = 0; cJSON_IsString(v) && i < m->n_imu; i++)
        if (strcmp(m->imu[i].name, v->valuestring) == 0 && rb_model_frame_index(m, v->valuestring) < 0) {
            *frame = m->imu[i].frame;
            return RB_OK;
        }
    return sim_scn_want_frame(x, v, frame);
}

static int frame_slot(scn *x, int frame, size_t *slot)
{
    int *frames = x->s->frames;
    size_t n = x->s->sim.n_frames;
    for (size_t i = 0; i < n; i++)
        if (frames[i] == frame) {
            *slot = i;
            return RB_OK;
        }
    frames[n] = frame;
    x->s->sim.n_frames = n + 1;
    *slot = n;
    return RB_OK;
}

/* ft_raw: the gain K = diag(counts_per_unit) (I + X) (6 x 6, row-major, after the per-element arrays): X from
 * cross_talk, a number a (each off-diagonal entry uniform in [-a, a], drawn from cross_talk_seed alone, so logs
 * simulated with different seeds share one sensor) or 36 numbers (row-major). */
static int raw_gain(rb_cfg *c, const cJSON *e, rb_scenario_sensor *ss)
{
    double cpu[6] = {100, 100, 100, 2000, 2000, 2000}, X[36] = {0}, a = 0, seed = 0;
    const cJSON *v = rb_cfg_member(e, "counts_per_unit");
    int rc = RB_OK;
    if (v) {
        rb_cfg_push_key(c, "counts_per_unit", 0);
        if (cJSON_IsArray(v))
            rc = sim_scn_want_numbers(c, v, 6, cpu);
        else if ((rc = rb_cfg_want_number(c, v, &cpu[0])) == RB_OK)
            for (size_t i = 1; i < 6; i++)
                cpu[i] = cpu[0];
        for (size_t i = 0; !rc && i < 6; i++)
            if (!(cpu[i] > 0))
                rc = rb_cfg_error(c, "counts per unit must be > 0 (element %zu is %g)", i, cpu[i]);
        rb_cfg_pop(c);
    }
    const cJSON *s = rb_cfg_member(e, "cross_talk_seed");
    if (!rc && s) {
        rb_cfg_push_key(c, "cross_talk_seed", 0);
        rc = rb_cfg_want_integer(c, s, 0, &seed);
        rb_cfg_pop(c);
    }
    v = rb_cfg_member(e, "cross_talk");
    if (!rc && v) {
        rb_cfg_push_key(c, "cross_talk", 0);
        if (cJSON_IsArray(v))
            rc = sim_scn_want_numbers(c, v, 36, X);
        else if ((rc = rb_cfg_want_number(c, v, &a)) == RB_OK && !(a >= 0 && a < 1))
            rc = rb_cfg_error(c, "a cross-talk amplitude must be in [0, 1) (got %g)", a);
        rb_cfg_pop(c);
        if (!rc && cJSON_IsArray(v) && s) {
            rb_cfg_push_key(c, "cross_talk_seed", 0);
            rc = rb_cfg_error(c, "only with a cross_talk amplitude (a number), not a matrix");
            rb_cfg_pop(c);
        }
    }
    if (!rc && !cJSON_IsArray(v) && a > 0) {
        rb_rng rng;
        rb_rng_seed(&rng, (uint64_t)seed);
        for (size_t i = 0; i < 36; i++) {
            double u = rb_rng_uniform(&rng);
            X[i] = i / 6 == i % 6 ? 0.0 : a * (2 * u - 1);
        }
    }
    double *K = ss->values + N_VECS * 6;
    for (size_t i = 0; !rc && i < 36; i++)
        K[i] = cpu[i / 6] * ((i / 6 == i % 6 ? 1.0 : 0.0) + X[i]);
    ss->params.gain = rc ? NULL : K;
    return rc;
}

static int one_sensor(scn *x, const cJSON *e, rb_scenario_sensor *ss)
{
    static const char *const keys[] = {"kind",
                                       "name",
                                       "ft",
                                       "frame",
                                       "rate",
                                       "jitter",
                                       "noise",
                                       "bias",
                                       "drift_rw",
                                       "drift_rate",
                                       "resolution",
                                       "offset",
                                       "lo",
                                       "hi",
                                       "temperature_drift",
                                       "counts_per_unit",
                                       "cross_talk",
                                       "cross_talk_seed"};
    rb_cfg *c = &x->c;
    const rb_model *m = x->s->model;
    size_t kind = 0;
    char *name = NULL;
    int rc = rb_cfg_check_object(c, e, keys, 18);
    if (!rc && !rb_cfg_member(e, "kind"))
        rc = rb_cfg_error(c, "missing key 'kind'");
    if (!rc)
        rc = rb_cfg_member_choice(c, e, "kind", SENSOR_KINDS, &kind);
    if (!rc)
        rc = rb_cfg_member_string(c, e, "name", false, &name);
    ss->source = SOURCE_OF[kind];
    bool joint_level = kind <= 2, is_ft = kind == KIND_FT || kind == KIND_FT_RAW;
    static const char *const raw_keys[] = {"counts_per_unit", "cross_talk", "cross_talk_seed"};
    for (size_t k = 0; !rc && kind != KIND_FT_RAW && k < 3; k++)
        if (rb_cfg_member(e, raw_keys[k])) {
            rb_cfg_push_key(c, raw_keys[k], 0);
            rc = rb_cfg_error(c, "only for an \"ft_raw\" sensor (raw strain-gauge counts)");
            rb_cfg_pop(c);
        }
    const char *ft_key = is_ft ? "ft" : "frame", *other = is_ft ? "frame" : "ft";
    if (!rc && joint_level && (rb_cfg_member(e, "ft") || rb_cfg_member(e, "frame"))) {
        rb_cfg_push_key(c, rb_cfg_member(e, "ft") ? "ft" : "frame", 0);
        rc = rb_cfg_error(c, "not for a %s sensor (it covers every joint)", SENSOR_KINDS[kind]);
        rb_cfg_pop(c);
    } else if (!rc && !joint_level && rb_cfg_member(e, other)) {
        rb_cfg_push_key(c, other, 0);
        rc = rb_cfg_error(c, "not for a%s %s sensor (use '%s')", strchr("aeiou", SENSOR_KINDS[kind][0]) ? "n" : "",
                          SENSOR_KINDS[kind], ft_key);
        rb_cfg_pop(c);
    }
    const char *leaf = NULL;
    if (!rc && !joint_level) {
        const cJSON *v = rb_cfg_member(e, ft_key);
        if (!v)
            rc = rb_cfg_error(c, "missing key '%s'", ft_key);
        if (!rc) {
            rb_cfg_push_key(c, ft_key, 0);
            if (is_ft) {
                char **names = rb_malloc((m->n_ft ? m->n_ft : 1) * sizeof *names);
                if (!names)
                    rc = rb_cfg_nomem(c);
                for (size_t i = 0; !rc && i < m->n_ft; i++)
                    names[i] = m->ft[i].name;
                if (!rc && !cJSON_IsString(v))
                    rc = rb_cfg_error(c, "expected an FT sensor name");
                if (!rc)
                    rc = sim_scn_want_name(c, "FT sensor", v->valuestring, names, m->n_ft, &ss->index);
                rb_free(names);
            } else {
                int frame = -1;
                rc = sensor_frame(x, v, &frame);
                if (!rc)
                    rc = frame_slot(x, frame, &ss->index);
            }
            leaf = rc ? NULL : v->valuestring;
            rb_cfg_pop(c);
        }
    }
    if (!rc) {
        const char *prefix = CHANNEL_OF[kind];
        const char *tail = joint_level ? "" : name ? name : leaf;
        size_t len = strlen(prefix) + strlen(tail) + 1;
        if (!(ss->channel = rb_malloc(len)))
            rc = rb_cfg_nomem(c);
        else
            snprintf(ss->channel, len, "%s%s", prefix, tail);
    }
    if (!rc && joint_level && name) {
        rb_cfg_push_key(c, "name", 0);
        rc = rb_cfg_error(c, "not for a %s sensor (its channel is %s)", SENSOR_KINDS[kind], ss->channel);
        rb_cfg_pop(c);
    }
    rb_free(name);
    if (rc)
        return rc;
    ss->params = rb_sensor_preset(SENSOR_KIND_OF[kind], ss->channel, m->n_dofs);
    if (!(ss->values = rb_calloc(N_VECS * ss->params.n + (kind == KIND_FT_RAW ? 36 : 0), sizeof *ss->values)))
        return rb_cfg_nomem(c);
    if (kind == KIND_FT_RAW && (rc = raw_gain(c, e, ss)) != RB_OK)
        return rc;
    rc = rb_cfg_member_number(c, e, "rate", RB_CFG_POSITIVE, &ss->params.rate_hz);
    if (!rc)
        rc = rb_cfg_member_number(c, e, "jitter", RB_CFG_NON_NEGATIVE, &ss->params.jitter_s);
    for (size_t k = 0; !rc && k < N_VECS; k++)
        rc = sensor_vec(c, e, k, ss);
    if (!rc)
        rc = sim_scn_parse_temperature_drift(x, e, is_ft, ss);
    rb_err err;
    if (!rc && rb_sensor_params_validate(&ss->params, &err) != RB_OK)
        rc = rb_cfg_error(c, "%s", err.msg);
    return rc;
}

int sim_scn_parse_sensors(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, "expected an array of sensors");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    x->s->sensors = rb_calloc(n ? n : 1, sizeof *x->s->sensors);
    x->s->frames = rb_calloc(n ? n : 1, sizeof *x->s->frames);
    if (!x->s->sensors || !x->s->frames)
        return rb_cfg_nomem(c);
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        x->s->n_sensors = i + 1;
        rc = one_sensor(x, e, &x->s->sensors[i]);
        for (size_t k = 0; !rc && k < i; k++)
            if (strcmp(x->s->sensors[k].channel, x->s->sensors[i].channel) == 0)
                rc = rb_cfg_error(c, "channel '%s' is already given by sensors[%zu]", x->s->sensors[i].channel, k);
        rb_cfg_pop(c);
    }
    if (x->s->sim.n_frames)
        x->s->sim.frames = x->s->frames;
    return rc;
}
