/* Scenario section `flight` (see scenario.c): the jets' flight controller, documented in roboest/sim_flight.h. Its
 * two arrays (waypoints, excitation direction) are owned through s->sim.flight and freed by sim_scn_free_flight. */
#include <math.h>
#include <string.h>

#include "roboest/config.h"
#include "roboest/sim.h"

#include "scenario_internal.h"

/* Optional member `key`: a number >= 0 for every axis, or n of them. */
static int gains(rb_cfg *c, const cJSON *obj, const char *key, size_t n, double *out)
{
    const cJSON *v = rb_cfg_member(obj, key);
    if (!v)
        return RB_OK;
    rb_cfg_push_key(c, key, 0);
    double g[3] = {0, 0, 0};
    int rc = RB_OK;
    if (cJSON_IsArray(v)) {
        rc = sim_scn_want_numbers(c, v, n, g);
    } else if ((rc = rb_cfg_want_number(c, v, &g[0])) == RB_OK) {
        for (size_t i = 1; i < n; i++)
            g[i] = g[0];
    }
    for (size_t i = 0; !rc && i < n; i++)
        if (!(g[i] >= 0))
            rc = rb_cfg_error(c, "must be >= 0 (got %g)", g[i]);
    if (!rc)
        memcpy(out, g, n * sizeof *out);
    rb_cfg_pop(c);
    return rc;
}

/* An optional object member of the flight section read by `read`. */
static int with_object(rb_cfg *c, const cJSON *v, const char *key, int (*read)(rb_cfg *, const cJSON *))
{
    const cJSON *o = rb_cfg_member(v, key);
    if (!o)
        return RB_OK;
    rb_cfg_push_key(c, key, 0);
    int rc = read(c, o);
    rb_cfg_pop(c);
    return rc;
}

static int read_com(rb_cfg *c, const cJSON *v)
{
    static const char *const keys[] = {"kp", "kd", "ki"};
    rb_sim_flight *f = &((scn *)c)->s->sim.flight;
    int rc = rb_cfg_check_object(c, v, keys, 3);
    if (!rc)
        rc = gains(c, v, "kp", 3, f->com_kp);
    if (!rc)
        rc = gains(c, v, "kd", 3, f->com_kd);
    if (!rc)
        rc = gains(c, v, "ki", 3, f->com_ki);
    return rc;
}

static int read_attitude(rb_cfg *c, const cJSON *v)
{
    static const char *const keys[] = {"kp", "kd", "ki"};
    rb_sim_flight *f = &((scn *)c)->s->sim.flight;
    int rc = rb_cfg_check_object(c, v, keys, 3);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "kp", RB_CFG_NON_NEGATIVE, &f->att_kp);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "kd", RB_CFG_NON_NEGATIVE, &f->att_kd);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "ki", RB_CFG_NON_NEGATIVE, &f->att_ki);
    return rc;
}

static int read_yaw(rb_cfg *c, const cJSON *v)
{
    static const char *const keys[] = {"kp", "kd", "max_thrust"};
    rb_sim_flight *f = &((scn *)c)->s->sim.flight;
    int rc = rb_cfg_check_object(c, v, keys, 3);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "kp", RB_CFG_NON_NEGATIVE, &f->yaw_kp);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "kd", RB_CFG_NON_NEGATIVE, &f->yaw_kd);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "max_thrust", RB_CFG_NON_NEGATIVE, &f->yaw_max_thrust);
    return rc;
}

static int read_waypoints(rb_cfg *c, const cJSON *v)
{
    static const char *const keys[] = {"t", "offset"};
    rb_sim_flight *f = &((scn *)c)->s->sim.flight;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1)
        return rb_cfg_error(c, "expected a non-empty array of {t, offset}");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    rb_sim_flight_waypoint *w = rb_calloc(n, sizeof *w);
    if (!w)
        return rb_cfg_nomem(c);
    f->waypoints = w;
    f->n_waypoints = n;
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        rc = rb_cfg_check_object(c, e, keys, 2);
        for (size_t k = 0; !rc && k < 2; k++)
            if (!rb_cfg_member(e, keys[k]))
                rc = rb_cfg_error(c, "missing key '%s'", keys[k]);
        if (!rc)
            rc = rb_cfg_member_number(c, e, "t", RB_CFG_POSITIVE, &w[i].t);
        if (!rc && i > 0 && !(w[i].t > w[i - 1].t)) {
            rb_cfg_push_key(c, "t", 0);
            rc = rb_cfg_error(c, "must be > the previous waypoint's (%g s)", w[i - 1].t);
            rb_cfg_pop(c);
        }
        if (!rc)
            rc = sim_scn_opt_numbers(c, e, "offset", 3, w[i].offset);
        rb_cfg_pop(c);
    }
    return rc;
}

static int read_excitation(rb_cfg *c, const cJSON *v)
{
    static const char *const keys[] = {"amplitude", "freq", "freq_end", "from", "until", "direction"};
    rb_scenario *s = ((scn *)c)->s;
    rb_sim_flight_excitation *x = &s->sim.flight.excitation;
    int rc = rb_cfg_check_object(c, v, keys, 6);
    if (!rc && !rb_cfg_member(v, "amplitude"))
        rc = rb_cfg_error(c, "missing key 'amplitude'");
    if (!rc)
        rc = rb_cfg_member_number(c, v, "amplitude", RB_CFG_POSITIVE, &x->amplitude);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "freq", RB_CFG_NON_NEGATIVE, &x->freq);
    x->freq_end = x->freq;
    if (!rc)
        rc = rb_cfg_member_number(c, v, "freq_end", RB_CFG_NON_NEGATIVE, &x->freq_end);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "from", RB_CFG_NON_NEGATIVE, &x->from);
    x->until = s->sim.duration;
    if (!rc)
        rc = rb_cfg_member_number(c, v, "until", RB_CFG_ANY, &x->until);
    if (!rc && !(x->until > x->from)) {
        rb_cfg_push_key(c, rb_cfg_member(v, "until") ? "until" : "from", 0);
        rc = rb_cfg_error(c, "needs from < until (until defaults to the duration, %g s)", s->sim.duration);
        rb_cfg_pop(c);
    }
    if (!rc && s->sim.n_jets < 4)
        rc = rb_cfg_error(c, "needs four jets or more (a null space of the controllable rows)");
    const cJSON *d = rb_cfg_member(v, "direction");
    if (!rc && d) {
        double *dir = rb_calloc(s->sim.n_jets, sizeof *dir);
        if (!dir)
            return rb_cfg_nomem(c);
        x->direction = dir;
        rb_cfg_push_key(c, "direction", 0);
        rc = sim_scn_want_numbers(c, d, s->sim.n_jets, dir);
        rb_cfg_pop(c);
    }
    return rc;
}

int sim_scn_parse_flight(rb_cfg *c, const cJSON *v)
{
    static const char *const keys[] = {"rate",      "com",       "attitude", "yaw", "max_tilt", "thrust_response",
                                       "waypoints", "excitation"};
    rb_scenario *s = ((scn *)c)->s;
    rb_sim_flight *f = &s->sim.flight;
    *f = rb_sim_flight_defaults();
    f->enabled = false; /* until read whole */
    int rc = rb_cfg_check_object(c, v, keys, 8);
    if (!rc && !s->model->floating)
        rc = rb_cfg_error(c, "needs a floating base (model.floating: true)");
    if (!rc && s->sim.n_jets == 0)
        rc = rb_cfg_error(c, "needs jets (the 'jets' the controller drives)");
    if (!rc && s->sim.balance.enabled)
        rc = rb_cfg_error(c, "conflicts with 'balance' (the flight holds the CoM with the jets)");
    if (!rc)
        rc = rb_cfg_member_number(c, v, "rate", RB_CFG_POSITIVE, &f->rate);
    if (!rc)
        rc = with_object(c, v, "com", read_com);
    if (!rc)
        rc = with_object(c, v, "attitude", read_attitude);
    if (!rc)
        rc = with_object(c, v, "yaw", read_yaw);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "max_tilt", RB_CFG_POSITIVE, &f->max_tilt);
    if (!rc && !(f->max_tilt < M_PI / 2)) {
        rb_cfg_push_key(c, "max_tilt", 0);
        rc = rb_cfg_error(c, "must be < pi/2 rad");
        rb_cfg_pop(c);
    }
    if (!rc)
        rc = rb_cfg_member_number(c, v, "thrust_response", RB_CFG_NON_NEGATIVE, &f->thrust_response);
    if (!rc)
        rc = with_object(c, v, "waypoints", read_waypoints);
    if (!rc)
        rc = with_object(c, v, "excitation", read_excitation);
    f->enabled = rc == RB_OK;
    return rc;
}

void sim_scn_free_flight(rb_scenario *s)
{
    rb_free((void *)s->sim.flight.waypoints);
    rb_free((void *)s->sim.flight.excitation.direction);
}
