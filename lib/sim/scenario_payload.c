/* Scenario section "payload" (see scenario.c): one payload object or a list of them (roboest/sim.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/config.h"
#include "roboest/sim.h"

#include "scenario_internal.h"

/* A model body by name (string value at the current path). A link merged into a body by a fixed joint is
 * named with its body, since the payload changes a whole body. */
static int want_body(scn *x, const cJSON *v, int *body)
{
    rb_cfg *c = &x->c;
    const rb_model *m = x->s->model;
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return rb_cfg_error(c, "expected a body (link) name");
    long b = rb_model_body_index(m, v->valuestring);
    if (b >= 0) {
        *body = (int)b;
        return RB_OK;
    }
    long f = rb_model_frame_index(m, v->valuestring);
    if (f >= 0 && m->frames[f].kind == RB_FRAME_LINK)
        return rb_cfg_error(c, "link '%s' is merged into body '%s' (fixed joint): name the body", v->valuestring,
                            m->bodies[m->frames[f].body].name);
    rb_suggest sg;
    rb_suggest_init(&sg, v->valuestring);
    for (size_t i = 0; i < m->n_bodies; i++)
        rb_suggest_consider(&sg, m->bodies[i].name);
    const char *best = rb_suggest_best(&sg);
    if (best)
        return rb_cfg_error(c, "unknown body '%s' (did you mean '%s'?)", v->valuestring, best);
    return rb_cfg_error(c, "unknown body '%s'", v->valuestring);
}

static int physical_or_error(rb_cfg *c, const char *key, const double pi[10])
{
    if (rb_inertia_is_physical(pi))
        return RB_OK;
    if (key)
        rb_cfg_push_key(c, key, 0);
    int rc = rb_cfg_error(c,
                          "not physically valid (mass %g; the inertia about the centre of mass must be positive "
                          "semi-definite and satisfy the triangle inequalities)",
                          pi[0]);
    if (key)
        rb_cfg_pop(c);
    return rc;
}

/* Parameters (about the body frame) of a rigid mass `mass` with its centre of mass at com (body frame) and
 * rotational inertia Ic about that centre, in body axes (parallel axes: I = Ic + m (|c|^2 1 - c c^T)). */
static void added_mass_params(double mass, const double com[3], const double Ic[6], double pi[10])
{
    double cc = com[0] * com[0] + com[1] * com[1] + com[2] * com[2];
    pi[0] = mass;
    for (int i = 0; i < 3; i++)
        pi[1 + i] = mass * com[i];
    pi[4] = Ic[0] + mass * (cc - com[0] * com[0]);
    pi[5] = Ic[1] - mass * com[0] * com[1];
    pi[6] = Ic[2] - mass * com[0] * com[2];
    pi[7] = Ic[3] + mass * (cc - com[1] * com[1]);
    pi[8] = Ic[4] - mass * com[1] * com[2];
    pi[9] = Ic[5] + mass * (cc - com[2] * com[2]);
}

static int parse_added(rb_cfg *c, const cJSON *v, const double pi_a[10], double pi_b[10])
{
    static const char *const keys[] = {"mass", "com", "inertia"};
    double mass = -1, com[3] = {0, 0, 0}, Ic[6] = {0, 0, 0, 0, 0, 0}, own[10];
    int rc = rb_cfg_check_object(c, v, keys, 3);
    if (!rc && !rb_cfg_member(v, "mass"))
        rc = rb_cfg_error(c, "missing key 'mass'");
    if (!rc)
        rc = rb_cfg_member_number(c, v, "mass", RB_CFG_POSITIVE, &mass);
    if (!rc)
        rc = sim_scn_opt_numbers(c, v, "com", 3, com);
    if (!rc)
        rc = sim_scn_opt_numbers(c, v, "inertia", 6, Ic);
    double about_com[10] = {mass, 0, 0, 0, Ic[0], Ic[1], Ic[2], Ic[3], Ic[4], Ic[5]};
    if (!rc)
        rc = physical_or_error(c, "inertia", about_com);
    if (!rc) {
        added_mass_params(mass, com, Ic, own);
        for (int i = 0; i < 10; i++)
            pi_b[i] = pi_a[i] + own[i];
    }
    return rc;
}

/* The single-body mixture form {link, kind, t0, period, pi_a, pi_b | added} (RB_PAYLOAD_MIX). */
static int parse_mix(scn *x, const cJSON *v, rb_sim_payload *p)
{
    rb_cfg *c = &x->c;
    static const char *const kinds[] = {"square", "sine", "steps", NULL};
    size_t kind = 0;
    int rc = RB_OK;
    if (!rb_cfg_member(v, "kind"))
        rc = rb_cfg_error(c, "missing key 'kind' (or 'mode' with 'segments')");
    if (!rc)
        rc = rb_cfg_member_choice(c, v, "kind", kinds, &kind);
    p->mode = RB_PAYLOAD_MIX;
    p->kind = (rb_payload_kind)(kind + 1);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "t0", RB_CFG_NON_NEGATIVE, &p->t0);
    if (!rc)
        rc = rb_cfg_member_number(c, v, "period", RB_CFG_POSITIVE, &p->period);
    if (!rc && p->kind == RB_PAYLOAD_STEPS && rb_cfg_member(v, "period")) {
        rb_cfg_push_key(c, "period", 0);
        rc = rb_cfg_error(c, "only for kind \"square\" or \"sine\" (\"steps\" changes once, at t0)");
        rb_cfg_pop(c);
    } else if (!rc && p->kind != RB_PAYLOAD_STEPS && !rb_cfg_member(v, "period")) {
        rc = rb_cfg_error(c, "missing key 'period' (kind \"%s\" repeats)", kinds[kind]);
    }
    if (!rc)
        memcpy(p->pi_a, x->s->model->bodies[p->body].inertia, sizeof p->pi_a);
    if (!rc)
        rc = sim_scn_opt_numbers(c, v, "pi_a", 10, p->pi_a);
    if (!rc)
        rc = physical_or_error(c, "pi_a", p->pi_a);
    const cJSON *added = rb_cfg_member(v, "added"), *pi_b = rb_cfg_member(v, "pi_b");
    if (!rc && !!added == !!pi_b)
        rc = rb_cfg_error(c, "expected either 'pi_b' (10 parameters) or 'added' (a rigid mass on the body)");
    if (!rc && pi_b)
        rc = sim_scn_opt_numbers(c, v, "pi_b", 10, p->pi_b);
    if (!rc && added) {
        rb_cfg_push_key(c, "added", 0);
        rc = parse_added(c, added, p->pi_a, p->pi_b);
        rb_cfg_pop(c);
    }
    if (!rc)
        rc = physical_or_error(c, added ? "added" : "pi_b", p->pi_b);
    return rc;
}

/* One segment {kind, from, until, t0, period | freq, offset, amplitude} of a mass waveform; prev_until: the end
 * of the segment before (-1: none). */
static int parse_segment(scn *x, const cJSON *e, const rb_sim_payload *p, size_t i, double prev_until,
                         rb_sim_payload_segment *g)
{
    rb_cfg *c = &x->c;
    static const char *const keys[] = {"kind", "from", "until", "t0", "period", "freq", "offset", "amplitude"};
    static const char *const kinds[] = {"square", "sine", "steps", "constant", NULL};
    const double m_nom = x->s->model->bodies[p->body].inertia[0];
    size_t kind = 0;
    int rc = rb_cfg_check_object(c, e, keys, 8);
    if (!rc && !rb_cfg_member(e, "kind"))
        rc = rb_cfg_error(c, "missing key 'kind'");
    if (!rc)
        rc = rb_cfg_member_choice(c, e, "kind", kinds, &kind);
    g->kind = (rb_payload_kind)(kind + 1);
    g->from = i == 0 ? 0.0 : NAN, g->until = INFINITY, g->offset = m_nom, g->amplitude = 0.0;
    if (!rc && i > 0 && !rb_cfg_member(e, "from"))
        rc = rb_cfg_error(c, "missing key 'from' (every segment after the first starts at a given time)");
    if (!rc)
        rc = rb_cfg_member_number(c, e, "from", RB_CFG_NON_NEGATIVE, &g->from);
    if (!rc && g->from < prev_until) {
        rb_cfg_push_key(c, "from", 0);
        rc = rb_cfg_error(c, "segment overlaps the one before (which lasts until %g s)", prev_until);
        rb_cfg_pop(c);
    }
    if (!rc)
        rc = rb_cfg_member_number(c, e, "until", RB_CFG_POSITIVE, &g->until);
    if (!rc && !(g->until > g->from)) {
        rb_cfg_push_key(c, "until", 0);
        rc = rb_cfg_error(c, "must be after 'from' (%g s)", g->from);
        rb_cfg_pop(c);
    }
    g->t0 = g->from;
    if (!rc)
        rc = rb_cfg_member_number(c, e, "t0", RB_CFG_NON_NEGATIVE, &g->t0);
    if (!rc && (g->t0 < g->from || g->t0 >= g->until)) {
        rb_cfg_push_key(c, "t0", 0);
        rc = rb_cfg_error(c, "must lie in the segment [from, until)");
        rb_cfg_pop(c);
    }
    bool periodic = g->kind == RB_PAYLOAD_SQUARE || g->kind == RB_PAYLOAD_SINE;
    const cJSON *per = rb_cfg_member(e, "period"), *freq = rb_cfg_member(e, "freq");
    if (!rc && periodic && !!per == !!freq)
        rc = rb_cfg_error(c, "expected one of 'period' (s) or 'freq' (Hz) (kind \"%s\" repeats)", kinds[kind]);
    if (!rc && !periodic && (per || freq)) {
        rb_cfg_push_key(c, per ? "period" : "freq", 0);
        rc = rb_cfg_error(c, "only for kind \"square\" or \"sine\"");
        rb_cfg_pop(c);
    }
    double f = 0.0;
    if (!rc && per)
        rc = rb_cfg_member_number(c, e, "period", RB_CFG_POSITIVE, &g->period);
    if (!rc && freq && !(rc = rb_cfg_member_number(c, e, "freq", RB_CFG_POSITIVE, &f)))
        g->period = 1.0 / f;
    if (!rc)
        rc = rb_cfg_member_number(c, e, "offset", RB_CFG_POSITIVE, &g->offset);
    if (!rc)
        rc = rb_cfg_member_number(c, e, "amplitude", RB_CFG_ANY, &g->amplitude);
    /* the body mass over the segment and the parameters at its extremes (pi is affine in m) */
    double lo = g->offset, hi = g->offset;
    if (periodic)
        lo = g->offset - fabs(g->amplitude), hi = g->offset + fabs(g->amplitude);
    else if (g->kind == RB_PAYLOAD_STEPS)
        lo = fmin(lo, g->offset + g->amplitude), hi = fmax(hi, g->offset + g->amplitude);
    if (!rc && !(lo > 0))
        rc = rb_cfg_error(c, "the body mass reaches %g kg (offset %g, amplitude %g): it must stay > 0", lo, g->offset,
                          g->amplitude);
    for (int k = 0; !rc && k < 2; k++) {
        rb_sim_payload_segment one = {RB_PAYLOAD_CONST, 0.0, INFINITY, 0.0, 0.0, k ? hi : lo, 0.0};
        rb_sim_payload q = *p;
        double pi[10];
        q.segments = &one, q.n_segments = 1;
        rb_sim_payload_eval(&q, x->s->model->bodies[p->body].inertia, 0.0, pi);
        if (!rb_inertia_is_physical(pi))
            rc = rb_cfg_error(c,
                              "at body mass %g kg the parameters are not physically valid (the point 'at' too far "
                              "inside a body losing mass?)",
                              k ? hi : lo);
    }
    return rc;
}

/* The segment form {link, mode, at, segments}. */
static int parse_modal(scn *x, const cJSON *v, rb_sim_payload *p, rb_sim_payload_segment *segs)
{
    rb_cfg *c = &x->c;
    static const char *const modes[] = {"density", "point", NULL};
    size_t mode = 0;
    int rc = rb_cfg_member_choice(c, v, "mode", modes, &mode);
    p->mode = mode == 0 ? RB_PAYLOAD_DENSITY : RB_PAYLOAD_POINT;
    static const char *const mix_only[] = {"kind", "t0", "period", "pi_a", "pi_b", "added"};
    for (size_t k = 0; !rc && k < 6; k++)
        if (rb_cfg_member(v, mix_only[k])) {
            rb_cfg_push_key(c, mix_only[k], 0);
            rc = rb_cfg_error(c, "not with 'mode' (the mass waveform goes in 'segments')");
            rb_cfg_pop(c);
        }
    if (!rc && p->mode == RB_PAYLOAD_POINT && !rb_cfg_member(v, "at"))
        rc = rb_cfg_error(c, "missing key 'at' (mode \"point\": where the mass changes, body frame)");
    if (!rc && p->mode == RB_PAYLOAD_DENSITY && rb_cfg_member(v, "at")) {
        rb_cfg_push_key(c, "at", 0);
        rc = rb_cfg_error(c, "only for mode \"point\"");
        rb_cfg_pop(c);
    }
    if (!rc)
        rc = sim_scn_opt_numbers(c, v, "at", 3, p->at);
    const cJSON *sv = rb_cfg_member(v, "segments");
    if (!rc && !sv)
        rc = rb_cfg_error(c, "missing key 'segments'");
    if (!rc && (!cJSON_IsArray(sv) || cJSON_GetArraySize(sv) == 0)) {
        rb_cfg_push_key(c, "segments", 0);
        rc = rb_cfg_error(c, "expected a non-empty array of segments");
        rb_cfg_pop(c);
    }
    if (rc)
        return rc;
    if (p->mode == RB_PAYLOAD_DENSITY && !(x->s->model->bodies[p->body].inertia[0] > 0))
        return rb_cfg_error(c, "mode \"density\" needs a body of positive mass");
    p->segments = segs;
    p->n_segments = 0;
    rb_cfg_push_key(c, "segments", 0);
    size_t i = 0;
    for (const cJSON *e = sv->child; e && !rc; e = e->next, i++) {
        rb_cfg_push_index(c, i);
        rc = parse_segment(x, e, p, i, i ? segs[i - 1].until : -1.0, &segs[i]);
        p->n_segments = i + 1;
        rb_cfg_pop(c);
    }
    rb_cfg_pop(c);
    return rc;
}

static int parse_one(scn *x, const cJSON *v, size_t k, rb_sim_payload *p, rb_sim_payload_segment *segs)
{
    rb_cfg *c = &x->c;
    static const char *const keys[] = {"link", "kind",  "t0",   "period", "pi_a",
                                       "pi_b", "added", "mode", "at",     "segments"};
    int rc = rb_cfg_check_object(c, v, keys, 10);
    if (!rc && !rb_cfg_member(v, "link"))
        rc = rb_cfg_error(c, "missing key 'link'");
    if (!rc) {
        rb_cfg_push_key(c, "link", 0);
        rc = want_body(x, rb_cfg_member(v, "link"), &p->body);
        for (size_t i = 0; !rc && i < k; i++)
            if (x->s->payloads[i].body == p->body)
                rc = rb_cfg_error(c, "body '%s' has payload[%zu] already", x->s->model->bodies[p->body].name, i);
        rb_cfg_pop(c);
    }
    if (rc)
        return rc;
    return rb_cfg_member(v, "mode") ? parse_modal(x, v, p, segs) : parse_mix(x, v, p);
}

int sim_scn_parse_payload(rb_cfg *c, const cJSON *v)
{
    scn *x = (scn *)c;
    bool list = cJSON_IsArray(v);
    if (!list && !cJSON_IsObject(v))
        return rb_cfg_error(c, "expected a payload object or an array of them");
    size_t n = list ? (size_t)cJSON_GetArraySize(v) : 1, nseg = 0;
    const cJSON *first = list ? v->child : v;
    for (const cJSON *e = first; e; e = list ? e->next : NULL) {
        const cJSON *sv = cJSON_IsObject(e) ? rb_cfg_member(e, "segments") : NULL;
        if (cJSON_IsArray(sv))
            nseg += (size_t)cJSON_GetArraySize(sv);
    }
    x->s->payloads = rb_calloc(n ? n : 1, sizeof *x->s->payloads);
    x->s->segments = rb_calloc(nseg ? nseg : 1, sizeof *x->s->segments);
    if (!x->s->payloads || !x->s->segments)
        return rb_cfg_nomem(c);
    int rc = RB_OK;
    size_t k = 0, g = 0;
    for (const cJSON *e = first; e && !rc; e = list ? e->next : NULL, k++) {
        if (list)
            rb_cfg_push_index(c, k);
        if (!cJSON_IsObject(e))
            rc = rb_cfg_error(c, "expected a payload object");
        if (!rc)
            rc = parse_one(x, e, k, &x->s->payloads[k], x->s->segments + g);
        g += x->s->payloads[k].n_segments;
        if (list)
            rb_cfg_pop(c);
    }
    x->s->sim.payloads = x->s->payloads;
    x->s->sim.n_payloads = rc ? 0 : n;
    return rc;
}
