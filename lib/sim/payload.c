/* lib/sim: payload schedules (the plant's changing bodies, roboest/sim.h) and their validation. */
#include <math.h>
#include <string.h>

#include "roboest/sim.h"

#include "sim_internal.h"

/* The mass of one segment's waveform at t (t inside the segment's window). */
static double segment_mass(const rb_sim_payload_segment *g, double t)
{
    if (t < g->t0)
        return g->offset;
    double u = t - g->t0;
    switch (g->kind) {
    case RB_PAYLOAD_SQUARE: return g->offset + (fmod(u, g->period) < 0.5 * g->period ? g->amplitude : -g->amplitude);
    case RB_PAYLOAD_SINE: return g->offset + g->amplitude * sin(2 * M_PI * u / g->period);
    case RB_PAYLOAD_STEPS: return g->offset + g->amplitude;
    default: return g->offset;
    }
}

double rb_sim_payload_mass(const rb_sim_payload *p, double m_nom, double t)
{
    for (size_t i = 0; i < p->n_segments; i++) {
        const rb_sim_payload_segment *g = &p->segments[i];
        if (t >= g->from && t < g->until)
            return segment_mass(g, t);
    }
    return m_nom;
}

static double mix_weight(const rb_sim_payload *p, double t)
{
    if (p->kind == RB_PAYLOAD_CONST)
        return 1.0;
    if (t < p->t0)
        return 0.0;
    double u = t - p->t0;
    switch (p->kind) {
    case RB_PAYLOAD_SQUARE: return fmod(u, p->period) >= 0.5 * p->period ? 1.0 : 0.0;
    case RB_PAYLOAD_SINE: return 0.5 * (1.0 - cos(2 * M_PI * u / p->period));
    case RB_PAYLOAD_STEPS: return 1.0;
    default: return 0.0;
    }
}

/* pi_nom with its mass changed to m the way the mode says (DENSITY, POINT). */
static void mass_changed(const rb_sim_payload *p, const double pi_nom[10], double m, double pi[10])
{
    if (p->mode == RB_PAYLOAD_DENSITY) {
        double k = m / pi_nom[0];
        for (int i = 0; i < 10; i++)
            pi[i] = k * pi_nom[i];
        return;
    }
    const double *c = p->at;
    double d = m - pi_nom[0], cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    memcpy(pi, pi_nom, 10 * sizeof *pi);
    pi[0] = m;
    for (int i = 0; i < 3; i++)
        pi[1 + i] += d * c[i];
    pi[4] += d * (cc - c[0] * c[0]), pi[5] -= d * c[0] * c[1], pi[6] -= d * c[0] * c[2];
    pi[7] += d * (cc - c[1] * c[1]), pi[8] -= d * c[1] * c[2], pi[9] += d * (cc - c[2] * c[2]);
}

void rb_sim_payload_eval(const rb_sim_payload *p, const double pi_nom[10], double t, double pi[10])
{
    if (p->mode == RB_PAYLOAD_MIX) {
        double w = mix_weight(p, t);
        for (int i = 0; i < 10; i++)
            pi[i] = p->pi_a[i] + w * (p->pi_b[i] - p->pi_a[i]);
        return;
    }
    mass_changed(p, pi_nom, rb_sim_payload_mass(p, pi_nom[0], t), pi);
}

/* The extremes of a segment's mass (square, sine: offset +- amplitude; steps: offset and offset + amplitude). */
static void segment_range(const rb_sim_payload_segment *g, double *lo, double *hi)
{
    double a = g->offset, b = g->offset;
    if (g->kind == RB_PAYLOAD_SQUARE || g->kind == RB_PAYLOAD_SINE)
        a = g->offset - fabs(g->amplitude), b = g->offset + fabs(g->amplitude);
    else if (g->kind == RB_PAYLOAD_STEPS)
        a = fmin(g->offset, g->offset + g->amplitude), b = fmax(g->offset, g->offset + g->amplitude);
    *lo = a, *hi = b;
}

int sim_payload_validate(const rb_model *m, const rb_sim_payload *pl, size_t n, rb_err *err)
{
    for (size_t k = 0; k < n; k++) {
        const rb_sim_payload *p = &pl[k];
        if (p->body < 0 || (size_t)p->body >= m->n_bodies)
            return rb_err_set(err, RB_ECONFIG, "sim: payload %zu: no body %d", k, p->body);
        const char *name = m->bodies[p->body].name;
        for (size_t i = 0; i < k; i++)
            if (pl[i].body == p->body)
                return rb_err_set(err, RB_ECONFIG, "sim: payload %zu: body %s has a payload already", k, name);
        if (p->mode == RB_PAYLOAD_MIX) {
            if (p->kind < RB_PAYLOAD_SQUARE || p->kind > RB_PAYLOAD_CONST)
                return rb_err_set(err, RB_ECONFIG, "sim: payload %s: unknown kind %d", name, (int)p->kind);
            if (!rb_inertia_is_physical(p->pi_a) || !rb_inertia_is_physical(p->pi_b))
                return rb_err_set(err, RB_ECONFIG, "sim: payload %s: inertial parameters not physically valid", name);
            if ((p->kind == RB_PAYLOAD_SQUARE || p->kind == RB_PAYLOAD_SINE) && !(p->period > 0))
                return rb_err_set(err, RB_ECONFIG, "sim: payload %s: period must be > 0", name);
            continue;
        }
        if (p->mode != RB_PAYLOAD_DENSITY && p->mode != RB_PAYLOAD_POINT)
            return rb_err_set(err, RB_ECONFIG, "sim: payload %s: unknown mode %d", name, (int)p->mode);
        const double *nom = m->bodies[p->body].inertia;
        if (!p->segments || p->n_segments == 0)
            return rb_err_set(err, RB_ECONFIG, "sim: payload %s: no segments", name);
        if (p->mode == RB_PAYLOAD_DENSITY && !(nom[0] > 0))
            return rb_err_set(err, RB_ECONFIG, "sim: payload %s: density mode needs a body of positive mass", name);
        for (int i = 0; i < 3; i++)
            if (!isfinite(p->at[i]))
                return rb_err_set(err, RB_ECONFIG, "sim: payload %s: point 'at' not finite", name);
        for (size_t i = 0; i < p->n_segments; i++) {
            const rb_sim_payload_segment *g = &p->segments[i];
            if (g->kind < RB_PAYLOAD_SQUARE || g->kind > RB_PAYLOAD_CONST)
                return rb_err_set(err, RB_ECONFIG, "sim: payload %s: segment %zu: unknown kind", name, i);
            if (!(g->from >= 0) || !(g->until > g->from) || !(g->t0 >= g->from) || !isfinite(g->t0))
                return rb_err_set(err, RB_ECONFIG, "sim: payload %s: segment %zu: needs 0 <= from <= t0, until > from",
                                  name, i);
            if (i > 0 && g->from < p->segments[i - 1].until)
                return rb_err_set(err, RB_ECONFIG, "sim: payload %s: segment %zu overlaps segment %zu", name, i, i - 1);
            if ((g->kind == RB_PAYLOAD_SQUARE || g->kind == RB_PAYLOAD_SINE) && !(g->period > 0))
                return rb_err_set(err, RB_ECONFIG, "sim: payload %s: segment %zu: period must be > 0", name, i);
            if (!isfinite(g->offset) || !isfinite(g->amplitude))
                return rb_err_set(err, RB_ECONFIG, "sim: payload %s: segment %zu: mass not finite", name, i);
            double lo, hi, pi[10];
            segment_range(g, &lo, &hi);
            if (!(lo > 0))
                return rb_err_set(err, RB_ECONFIG, "sim: payload %s: segment %zu: body mass %g kg must be > 0", name, i,
                                  lo);
            /* pi is affine in m and the valid set is convex: the two extremes decide */
            for (int e = 0; e < 2; e++) {
                mass_changed(p, nom, e ? hi : lo, pi);
                if (!rb_inertia_is_physical(pi))
                    return rb_err_set(err, RB_ECONFIG,
                                      "sim: payload %s: segment %zu: body mass %g kg gives parameters not physically "
                                      "valid",
                                      name, i, e ? hi : lo);
            }
        }
    }
    return RB_OK;
}

int rb_sim_set_model_inertia(rb_sim *s, size_t body, const double pi[10], rb_err *err)
{
    if (!s || !pi)
        return rb_err_set(err, RB_EINVAL, "rb_sim_set_model_inertia: NULL argument");
    if (body >= s->m->n_bodies)
        return rb_err_set(err, RB_EINVAL, "rb_sim_set_model_inertia: no body %zu", body);
    if (!rb_inertia_is_physical(pi))
        return rb_err_set(err, RB_EINVAL,
                          "rb_sim_set_model_inertia: body %s: parameters not physically valid (mass %g)",
                          s->m->bodies[body].name, pi[0]);
    memcpy(s->ctrl_pi + 10 * body, pi, 10 * sizeof *pi);
    s->ctrl_dirty[body] = 1;
    return RB_OK;
}

int sim_payload_sample(rb_sim *s, rb_err *err)
{
    const rb_model *m = s->m;
    int rc;
    for (size_t k = 0; k < s->npl; k++) {
        const rb_sim_payload *p = &s->payloads[k];
        double *pi = s->pl_pi + 10 * k;
        rb_sim_payload_eval(p, m->bodies[p->body].inertia, s->t, pi);
        if ((rc = rb_dyn_set_body_inertia(m, s->plant, (size_t)p->body, pi, err)) < 0)
            return rc;
    }
    return RB_OK;
}

/* The model's CoM at the IK's configuration q_r (controller workspace). */
static int ctrl_com(rb_sim *s, double c[3], rb_err *err)
{
    int rc = rb_dyn_kinematics(s->m, s->ctrl, s->q_r, NULL, NULL, err);
    return rc < 0 ? rc : rb_dyn_com(s->m, s->ctrl, c, err);
}

int sim_ctrl_model_sample(rb_sim *s, rb_err *err)
{
    const rb_model *m = s->m;
    bool any = false;
    int rc;
    for (size_t b = 0; b < m->n_bodies && !any; b++)
        any = s->ctrl_dirty[b];
    if (!any)
        return RB_OK;
    /* The balance CoM reference moves with the model's CoM at q_r (sim.h, rb_sim_set_model_inertia): kept at
     * com0, the IK would correct the model's CoM step within ik_T, a step of its velocity whose finite difference
     * is an acceleration spike of k dc / dt (0.4 % of a forearm's mass: ~13 rad/s^2, 50 N m at the torso). */
    double c0[3], c1[3];
    if (s->sc.balance.enabled && (rc = ctrl_com(s, c0, err)) < 0)
        return rc;
    for (size_t b = 0; b < m->n_bodies; b++) {
        if (!s->ctrl_dirty[b])
            continue;
        s->ctrl_dirty[b] = 0;
        s->share_ctrl = false;
        if ((rc = rb_dyn_set_body_inertia(m, s->ctrl, b, s->ctrl_pi + 10 * b, err)) < 0)
            return rc;
    }
    if (!s->sc.balance.enabled)
        return RB_OK;
    if ((rc = ctrl_com(s, c1, err)) < 0)
        return rc;
    for (int i = 0; i < 3; i++)
        s->com0[i] += c1[i] - c0[i];
    return RB_OK;
}
