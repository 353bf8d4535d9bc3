/* Scenario section "floor" (see scenario.c): the friction of the floor, its low-friction patches and the contacts'
 * own coefficients -> rb_sim_floor (roboest/sim_contact.h). Read after "contacts" (it names them). */
#include <math.h>
#include <string.h>

#include "roboest/config.h"
#include "roboest/sim.h"

#include "scenario_internal.h"

/* mu_s, mu_d, v_s of obj: mu_s defaults to mu_d when only that is given (else no limit), mu_d to mu_s; mu_s >= mu_d
 * (the message at mu_s). */
static int parse_coef(rb_cfg *c, const cJSON *obj, rb_sim_friction_coef *out)
{
    double mu_s = NAN, mu_d = NAN, v_s = 0.0;
    int rc = rb_cfg_member_number(c, obj, "mu_s", RB_CFG_NON_NEGATIVE, &mu_s);
    if (!rc)
        rc = rb_cfg_member_number(c, obj, "mu_d", RB_CFG_NON_NEGATIVE, &mu_d);
    if (!rc)
        rc = rb_cfg_member_number(c, obj, "v_s", RB_CFG_NON_NEGATIVE, &v_s);
    if (rc)
        return rc;
    if (isnan(mu_s))
        mu_s = isnan(mu_d) ? INFINITY : mu_d;
    if (isnan(mu_d))
        mu_d = mu_s;
    if (mu_s < mu_d) {
        rb_cfg_push_key(c, rb_cfg_member(obj, "mu_s") ? "mu_s" : "mu_d", 0);
        rc = rb_cfg_error(c, "the static coefficient mu_s (%g) must be >= the kinetic mu_d (%g)", mu_s, mu_d);
        rb_cfg_pop(c);
        return rc;
    }
    *out = (rb_sim_friction_coef){mu_s, mu_d, v_s};
    return RB_OK;
}

static int parse_patch(rb_cfg *c, const cJSON *e, rb_sim_floor_patch *p)
{
    static const char *const keys[] = {"min", "max", "mu_s", "mu_d", "v_s"};
    int rc = rb_cfg_check_object(c, e, keys, 5);
    for (int i = 0; !rc && i < 2; i++) {
        const char *key = keys[i];
        const cJSON *v = rb_cfg_member(e, key);
        rb_cfg_push_key(c, key, 0);
        rc = v ? sim_scn_want_numbers(c, v, 2, i ? p->max : p->min) : RB_OK;
        if (!rc && !v)
            rc = rb_cfg_error(c, "missing: the patch's %s corner [x, y] (m, world)", key);
        rb_cfg_pop(c);
    }
    if (!rc && !(p->min[0] < p->max[0] && p->min[1] < p->max[1])) {
        rb_cfg_push_key(c, "max", 0);
        rc = rb_cfg_error(c, "must be > min in x and y (got min [%g, %g], max [%g, %g]: inverted corners?)", p->min[0],
                          p->min[1], p->max[0], p->max[1]);
        rb_cfg_pop(c);
    }
    return rc ? rc : parse_coef(c, e, &p->coef);
}

static int parse_patches(scn *x, const cJSON *v)
{
    rb_cfg *c = &x->c;
    rb_sim_floor *f = &x->s->sim.floor;
    if (!cJSON_IsArray(v))
        return rb_cfg_error(c, "expected an array of patches [{min, max, mu_s, mu_d, v_s}]");
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    rb_sim_floor_patch *p = rb_calloc(n ? n : 1, sizeof *p);
    if (!p)
        return rb_cfg_nomem(c);
    f->patches = p, f->n_patches = n;
    int rc = RB_OK;
    for (const cJSON *e = v->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        rc = parse_patch(c, e, &p[i]);
        rb_cfg_pop(c);
    }
    return rc;
}

/* {<contact frame>: {mu_s, mu_d, v_s}} */
static int parse_contact_coefs(scn *x, const cJSON *v)
{
    static const char *const keys[] = {"mu_s", "mu_d", "v_s"};
    rb_cfg *c = &x->c;
    rb_sim_floor *f = &x->s->sim.floor;
    size_t nc = x->s->sim.n_contacts;
    int rc = rb_cfg_check_object(c, v, NULL, 0);
    rb_sim_friction_coef *own = rc ? NULL : rb_calloc(nc ? nc : 1, sizeof *own);
    if (!rc && !own)
        return rb_cfg_nomem(c);
    f->contact_coef = own;
    for (size_t k = 0; own && k < nc; k++)
        own[k] = (rb_sim_friction_coef){NAN, NAN, 0.0};
    for (const cJSON *e = rc ? NULL : v->child; e && !rc; e = e->next) {
        rb_cfg_push_key(c, e->string, 0);
        cJSON name = {0};
        name.type = cJSON_String, name.valuestring = e->string;
        size_t k = 0;
        rc = sim_scn_want_contact(x, &name, "to give friction coefficients", &k);
        if (!rc)
            rc = rb_cfg_check_object(c, e, keys, 3);
        if (!rc)
            rc = parse_coef(c, e, &own[k]);
        rb_cfg_pop(c);
    }
    return rc;
}

int sim_scn_parse_floor(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    static const char *const keys[] = {"mu_s", "mu_d", "v_s", "v_stick", "patches", "contacts"};
    rb_sim_floor *f = &x->s->sim.floor;
    f->enabled = true;
    f->v_stick = 1e-3;
    int rc = rb_cfg_check_object(c, v, keys, 6);
    if (!rc)
        rc = parse_coef(c, v, &f->coef);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "v_stick", RB_CFG_POSITIVE, &f->v_stick);
    const cJSON *p = rb_cfg_member(v, "patches"), *k = rb_cfg_member(v, "contacts");
    if (!rc && p) {
        rb_cfg_push_key(c, "patches", 0);
        rc = parse_patches(x, p);
        rb_cfg_pop(c);
    }
    if (!rc && k) {
        rb_cfg_push_key(c, "contacts", 0);
        rc = parse_contact_coefs(x, k);
        rb_cfg_pop(c);
    }
    return rc;
}

void sim_scn_free_floor(rb_scenario *s)
{
    rb_free((void *)s->sim.floor.patches);
    rb_free((void *)s->sim.floor.contact_coef);
}
