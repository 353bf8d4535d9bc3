/* Dynamic friction: LuGre with the exact exponential update of z, the stick-slip state machine, and the
 * drift-aware step of any model. See roboest/friction.h. */
#include <math.h>

#include "friction_internal.h"

void rb_friction_state_init(rb_friction_state *s)
{
    s->z = 0;
    s->v_prev = 0;
    s->stuck = true;
}

double rb_friction_lugre_step(const rb_friction_model *m, double *z, double v, double dt)
{
    const rb_friction_lugre *p = &m->lugre;
    double g = rb_fric_stribeck(p->F_c, p->F_s, p->v_s, v);
    double a = p->sigma0 * fabs(v) / g;
    if (dt > 0) {
        if (a > 0) {
            /* z+ = z_ss + (z - z_ss) e^(-a dt), written with expm1 so that small a dt keeps its digits */
            double z_ss = (v > 0 ? g : -g) / p->sigma0, em = expm1(-a * dt);
            *z = *z + (*z - z_ss) * em;
        } else {
            *z += v * dt;
        }
    }
    return p->sigma0 * *z + p->sigma1 * (v - a * *z) + p->F_v * v;
}

static double sgn(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }

static double sliding(const rb_friction_stiction *p, double dir, double v)
{
    return dir * rb_fric_stribeck(p->F_c, p->F_s, p->v_s, v) + p->F_v * v;
}

double rb_friction_stiction_step(const rb_friction_model *m, rb_friction_state *s, double v, double tau_applied,
                                 bool *stuck)
{
    const rb_friction_stiction *p = &m->stiction;
    double tau = tau_applied, F;
    if (!s->stuck) {
        double av = fabs(v);
        bool at_rest = (s->v_prev != 0 && v * s->v_prev <= 0) ||
                       (av < p->v_stick && (av < fabs(s->v_prev) || fabs(tau) <= p->F_c));
        if (at_rest && fabs(tau) <= p->F_s)
            s->stuck = true;
    }
    if (s->stuck) {
        if (fabs(tau) <= p->F_s) {
            F = tau;
        } else {
            s->stuck = false;
            F = sliding(p, sgn(tau), v);
        }
    } else {
        F = sliding(p, v != 0 ? sgn(v) : sgn(tau), v);
    }
    s->v_prev = v;
    if (stuck)
        *stuck = s->stuck;
    return F;
}

double rb_friction_step(const rb_friction_model *m, rb_friction_state *s, double t, double dt, double v,
                        double tau_applied, bool *stuck)
{
    rb_friction_model now;
    rb_friction_at_time(m, t, &now);
    if (stuck)
        *stuck = false;
    switch (now.kind) {
    case RB_FRICTION_LUGRE: return rb_friction_lugre_step(&now, &s->z, v, dt);
    case RB_FRICTION_STICTION: return rb_friction_stiction_step(&now, s, v, tau_applied, stuck);
    default: return rb_friction_eval(&now, v);
    }
}
