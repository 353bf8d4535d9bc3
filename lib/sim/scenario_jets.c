/* Scenario sections (see scenario.c) for the thrust experiments of seed 004: jets, the temperature and the weighing
 * scales, and the FT sensors' temperature drift. Keys are documented in roboest/sim.h ("scenarios"). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/config.h"
#include "roboest/dynamics.h"
#include "roboest/sim.h"

#include "scenario_internal.h"

double rb_scn_temperature_at(const rb_scn_temperature *temp, double t)
{
    if (!temp->enabled)
        return temp->t0;
    double tc = t < temp->from ? temp->from : t > temp->until ? temp->until : t;
    return temp->t0 + temp->rate * (tc - temp->from);
}

/* An error at member `key` of the current object. */
static int key_error(rb_cfg *c, const char *key, const char *what)
{
    rb_cfg_push_key(c, key, 0);
    int rc = rb_cfg_error(c, "%s", what);
    rb_cfg_pop(c);
    return rc;
}

/* ---- jets --------------------------------------------------------------------------------------------------------- */

/* failure: [{from, until, fraction}] in time order, apart; into the scenario's shared array from index *used. */
static int parse_failures(scn *x, const cJSON *v, rb_sim_jet *j, size_t *used)
{
    static const char *const keys[] = {"from", "until", "fraction"};
    rb_cfg *c = &x->c;
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, "expected an array of {from, until, fraction}");
    rb_sim_jet_failure *f0 = x->s->jet_failures + *used;
    size_t i = 0;
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_sim_jet_failure *f = f0 + i;
        rb_cfg_push_index(c, i);
        rc = rb_cfg_check_object(c, e, keys, 3);
        for (size_t k = 0; !rc && k < 3; k++)
            if (!rb_cfg_member(e, keys[k]))
                rc = rb_cfg_error(c, "missing key '%s'", keys[k]);
        if (!rc)
            rc = rb_cfg_member_number(c, e, "from", RB_CFG_NON_NEGATIVE, &f->from);
        if (!rc)
            rc = rb_cfg_member_number(c, e, "until", RB_CFG_ANY, &f->until);
        if (!rc && !(f->until > f->from))
            rc = key_error(c, "until", "must be > from");
        if (!rc)
            rc = rb_cfg_member_number(c, e, "fraction", RB_CFG_UNIT_CLOSED, &f->fraction);
        if (!rc && i > 0 && f->from < f0[i - 1].until)
            rc = key_error(c, "from", "overlaps the failure before (failures in time order, apart)");
        rb_cfg_pop(c);
    }
    j->failures = f0;
    j->n_failures = i;
    *used += i;
    return rc;
}

static int parse_rotor(rb_cfg *c, const cJSON *v, rb_sim_jet *j, double *noise)
{
    static const char *const keys[] = {"tau", "rpm_max", "noise"};
    int rc = rb_cfg_check_object(c, v, keys, 3);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "tau", RB_CFG_NON_NEGATIVE, &j->rotor_tau);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "rpm_max", RB_CFG_POSITIVE, &j->rpm_max);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "noise", RB_CFG_NON_NEGATIVE, noise);
    return rc;
}

static int one_jet(scn *x, const cJSON *e, size_t k, size_t *used)
{
    static const char *const keys[] = {"frame", "preset", "axis", "throttle", "steady_start", "failure", "rotor"};
    rb_cfg *c = &x->c;
    rb_scenario *s = x->s;
    rb_sim_jet *j = &s->jets[k];
    j->axis[2] = -1.0;
    j->rotor_tau = 0.1;
    j->rpm_max = 100000.0;
    int rc = rb_cfg_check_object(c, e, keys, 7);
    if (!rc)
        rc = sim_scn_member_frame(x, e, "frame", true, &j->frame);
    for (size_t i = 0; !rc && i < k; i++)
        if (s->jets[i].frame == j->frame) {
            rb_cfg_push_key(c, "frame", 0);
            rc = rb_cfg_error(c, "frame '%s' already has jets[%zu]", s->model->frames[j->frame].name, i);
            rb_cfg_pop(c);
        }
    const cJSON *preset = rb_cfg_member(e, "preset");
    if (!rc && !preset)
        rc = rb_cfg_error(c, "missing key 'preset'");
    if (!rc) {
        rb_cfg_push_key(c, "preset", 0);
        rb_err err;
        if (!cJSON_IsString(preset))
            rc = rb_cfg_error(c, "expected a jet preset name");
        else if (rb_jet_preset(preset->valuestring, &j->params, NULL, &err) != RB_OK)
            rc = rb_cfg_error(c, "%s", err.msg);
        rb_cfg_pop(c);
    }
    if (!rc)
        rc = sim_scn_opt_numbers(c, e, "axis", 3, j->axis);
    if (!rc && !(j->axis[0] * j->axis[0] + j->axis[1] * j->axis[1] + j->axis[2] * j->axis[2] > 0))
        rc = key_error(c, "axis", "must be non-zero");
    const cJSON *thr = rb_cfg_member(e, "throttle");
    bool flight = rb_cfg_member(x->root, "flight") != NULL; /* it sets the throttles */
    if (!rc && !thr && !flight)
        rc = rb_cfg_error(c, "missing key 'throttle'");
    if (!rc && thr && flight)
        rc = key_error(c, "throttle", "not allowed with 'flight' (the flight controller sets the throttles)");
    if (!rc && thr) {
        rb_cfg_push_key(c, "throttle", 0);
        rc = sim_scn_parse_ref(c, thr, &j->throttle);
        rb_cfg_pop(c);
    }
    if (!rc)
        rc = sim_scn_opt_bool(c, e, "steady_start", &j->steady_start);
    const cJSON *fail = rb_cfg_member(e, "failure");
    if (!rc && fail) {
        rb_cfg_push_key(c, "failure", 0);
        rc = parse_failures(x, fail, j, used);
        rb_cfg_pop(c);
    }
    const cJSON *rotor = rb_cfg_member(e, "rotor");
    if (!rc && rotor) {
        rb_cfg_push_key(c, "rotor", 0);
        rc = parse_rotor(c, rotor, j, &s->jet_noise[k]);
        rb_cfg_pop(c);
    }
    return rc;
}

int sim_scn_parse_jets(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    rb_scenario *s = x->s;
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, "expected an array of jets");
    size_t n = (size_t)cJSON_GetArraySize(v), nf = 0;
    for (const cJSON *e = v->child; e; e = e->next) {
        const cJSON *f = cJSON_IsObject(e) ? rb_cfg_member(e, "failure") : NULL;
        nf += f && cJSON_IsArray(f) ? (size_t)cJSON_GetArraySize(f) : 0;
    }
    s->jets = rb_calloc(n ? n : 1, sizeof *s->jets);
    s->jet_failures = rb_calloc(nf ? nf : 1, sizeof *s->jet_failures);
    s->jet_noise = rb_calloc(n ? n : 1, sizeof *s->jet_noise);
    if (!s->jets || !s->jet_failures || !s->jet_noise)
        return rb_cfg_nomem(c);
    s->sim.jets = s->jets;
    int rc = RB_OK;
    size_t i = 0, used = 0;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        s->sim.n_jets = i + 1; /* freed with the scenario from here on */
        rc = one_jet(x, e, i, &used);
        rb_cfg_pop(c);
    }
    return rc;
}

void sim_scn_free_jets(rb_scenario *s)
{
    for (size_t k = 0; s->jets && k < s->sim.n_jets; k++) {
        rb_free((void *)s->jets[k].throttle.times);
        rb_free((void *)s->jets[k].throttle.values);
    }
    rb_free(s->jets);
    rb_free(s->jet_failures);
    rb_free(s->jet_noise);
    rb_free(s->scales);
    sim_scn_free_flight(s);
}

/* ---- temperature ------------------------------------------------------------------------------------------------ */
int sim_scn_parse_temperature(rb_cfg *c, const cJSON *v)
{
    static const char *const keys[] = {"t0", "rate", "from", "until", "noise", "resolution"};
    rb_scn_temperature *T = &((scn *)c)->s->temperature;
    T->enabled = true;
    T->t0 = 25.0;
    T->until = INFINITY;
    int rc = rb_cfg_check_object(c, v, keys, 6);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "t0", RB_CFG_ANY, &T->t0);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "rate", RB_CFG_ANY, &T->rate);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "from", RB_CFG_NON_NEGATIVE, &T->from);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "until", RB_CFG_ANY, &T->until);
    if (!rc && !(T->until > T->from))
        rc = key_error(c, "until", "must be > from");
    if (!rc)
        rc = rb_cfg_member_number(c, v, "noise", RB_CFG_NON_NEGATIVE, &T->noise);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "resolution", RB_CFG_NON_NEGATIVE, &T->resolution);
    return rc;
}

/* FT sensor key temperature_drift: a number (every axis) or 6 numbers, per kelvin; needs the temperature. */
int sim_scn_parse_temperature_drift(scn *x, const cJSON *e, bool is_ft, rb_scenario_sensor *ss)
{
    rb_cfg *c = &x->c;
    const cJSON *v = rb_cfg_member(e, "temperature_drift");
    if (!v)
        return RB_OK;
    rb_cfg_push_key(c, "temperature_drift", 0);
    int rc = RB_OK;
    if (!is_ft)
        rc = rb_cfg_error(c, "only for an ft sensor");
    else if (!x->s->temperature.enabled)
        rc = rb_cfg_error(c, "needs the scenario's 'temperature'");
    else if (cJSON_IsArray(v))
        rc = sim_scn_want_numbers(c, v, 6, ss->temperature_drift);
    else if ((rc = rb_cfg_want_number(c, v, &ss->temperature_drift[0])) == RB_OK)
        for (int i = 1; i < 6; i++)
            ss->temperature_drift[i] = ss->temperature_drift[0];
    ss->temperature_log = rc == RB_OK;
    rb_cfg_pop(c);
    return rc;
}

/* ---- scales ------------------------------------------------------------------------------------------------------ */

int sim_scn_parse_scales(rb_cfg *c, const cJSON *v)
{
    static const char *const keys[] = {"contact", "drift_per_kelvin", "noise", "resolution", "rate"};
    scn *x = (scn *)c;
    rb_scenario *s = x->s;
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, "expected an array of scales");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    if (!(s->scales = rb_calloc(n ? n : 1, sizeof *s->scales)))
        return rb_cfg_nomem(c);
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_scn_scale *sc = &s->scales[i];
        s->n_scales = i + 1;
        rb_cfg_push_index(c, i);
        rc = rb_cfg_check_object(c, e, keys, 5);
        if (!rc && !rb_cfg_member(e, "contact"))
            rc = rb_cfg_error(c, "missing key 'contact'");
        if (!rc) {
            rb_cfg_push_key(c, "contact", 0);
            rc = sim_scn_want_contact(x, rb_cfg_member(e, "contact"), "to put a scale under", &sc->contact);
            for (size_t k = 0; !rc && k < i; k++)
                if (s->scales[k].contact == sc->contact)
                    rc = rb_cfg_error(c, "contact %zu already has scales[%zu]", sc->contact, k);
            rb_cfg_pop(c);
        }
        if (!rc)
            rc = rb_cfg_member_number(c, e, "drift_per_kelvin", RB_CFG_ANY, &sc->drift_per_kelvin);
        if (!rc && sc->drift_per_kelvin != 0 && !s->temperature.enabled)
            rc = key_error(c, "drift_per_kelvin", "needs the scenario's 'temperature'");
        if (!rc)
            rc = rb_cfg_member_number(c, e, "noise", RB_CFG_NON_NEGATIVE, &sc->noise);
        if (!rc)
            rc = rb_cfg_member_number(c, e, "resolution", RB_CFG_NON_NEGATIVE, &sc->resolution);
        if (!rc)
            rc = rb_cfg_member_number(c, e, "rate", RB_CFG_POSITIVE, &sc->rate);
        rb_cfg_pop(c);
    }
    return rc;
}
