/* lib/sim: scenario validation, engine allocation, the random push schedule, finish. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/sim.h"

/* The engine layout lives in sim.c; these two files share it through this declaration. */
#include "sim_internal.h"

static int validate(const rb_sim_scenario *sc, rb_err *err)
{
    const rb_model *m = sc->model;
    size_t n = m->n_dofs;
    if (!(sc->dt > 0) || !isfinite(sc->dt))
        return rb_err_set(err, RB_ECONFIG, "sim: dt must be finite and > 0");
    if (!(sc->duration >= 0) || !isfinite(sc->duration))
        return rb_err_set(err, RB_ECONFIG, "sim: duration must be finite and >= 0");
    if (sc->method != RB_SIM_EULER && sc->method != RB_SIM_RK4)
        return rb_err_set(err, RB_ECONFIG, "sim: unknown integration method");
    if (sc->torque_feedback != RB_TFB_TRUTH && sc->torque_feedback != RB_TFB_NONE &&
        sc->torque_feedback != RB_TFB_EXTERNAL)
        return rb_err_set(err, RB_ECONFIG, "sim: unknown torque feedback %d", (int)sc->torque_feedback);
    for (size_t j = 0; sc->refs && j < n; j++)
        if (sc->refs[j].kind == RB_REF_SPLINE) {
            const rb_sim_ref *r = &sc->refs[j];
            if (!r->times || !r->values || r->n_points < 2)
                return rb_err_set(err, RB_ECONFIG, "sim: joint %s: spline needs >= 2 points", m->dof_names[j]);
            for (size_t k = 1; k < r->n_points; k++)
                if (!(r->times[k] > r->times[k - 1]))
                    return rb_err_set(err, RB_ECONFIG, "sim: joint %s: spline times must increase", m->dof_names[j]);
        }
    for (size_t j = 0; sc->actuators && j < n; j++) {
        const rb_sim_actuator *a = &sc->actuators[j];
        bool dflt = a->k_t == 0 && a->R == 0 && a->J_m == 0 && a->i_max == 0;
        if (!dflt && (!(a->k_t > 0) || a->R == 0 || !isfinite(a->R) || !(a->J_m >= 0) || !(a->i_max >= 0)))
            return rb_err_set(err, RB_ECONFIG, "sim: joint %s: actuator needs k_t > 0, R != 0, J_m >= 0, i_max >= 0",
                              m->dof_names[j]);
        if (!(a->k_gear >= 0) || !isfinite(a->k_gear))
            return rb_err_set(err, RB_ECONFIG, "sim: joint %s: actuator: k_gear must be finite and >= 0",
                              m->dof_names[j]);
    }
    for (size_t j = 0; sc->friction && j < n; j++) {
        int rc = rb_friction_validate(&sc->friction[j], err);
        if (rc < 0)
            return rb_err_prefix(err, RB_ECONFIG, "sim: joint %s: ", m->dof_names[j]);
    }
    for (size_t k = 0; k < sc->n_contacts; k++) {
        const rb_sim_contact *c = &sc->contacts[k];
        if (c->frame < 0 || (size_t)c->frame >= m->n_frames || (c->dim != 3 && c->dim != 6) || !(c->baumgarte_T >= 0))
            return rb_err_set(err, RB_ECONFIG, "sim: contact %zu: needs a model frame, dim 3 or 6, baumgarte_T >= 0",
                              k);
    }
    for (size_t k = 0; k < sc->n_events; k++)
        if (sc->events[k].contact >= sc->n_contacts || !isfinite(sc->events[k].t))
            return rb_err_set(err, RB_ECONFIG, "sim: contact event %zu: no such contact", k);
    for (size_t k = 0; k < sc->n_pushes; k++) {
        const rb_sim_push *p = &sc->pushes[k];
        if (p->frame < 0 || (size_t)p->frame >= m->n_frames || !(p->duration > 0))
            return rb_err_set(err, RB_ECONFIG, "sim: push %zu: needs a model frame and duration > 0", k);
    }
    const rb_sim_random_pushes *rp = &sc->random_pushes;
    if (rp->rate != 0 && (!(rp->rate > 0) || rp->frame < 0 || (size_t)rp->frame >= m->n_frames || !(rp->duration > 0) ||
                          !(rp->force_min >= 0) || !(rp->force_max >= rp->force_min)))
        return rb_err_set(err, RB_ECONFIG,
                          "sim: random pushes: need rate > 0, a model frame, duration > 0, "
                          "0 <= force_min <= force_max");
    const rb_sim_random_contacts *rc_ = &sc->random_contacts;
    bool bad = rc_->rate != 0 &&
               (!(rc_->rate > 0) || !rc_->frames || rc_->n_frames == 0 || !(rc_->from >= 0) ||
                !(rc_->until > rc_->from) || !(rc_->duration_min > 0) || !(rc_->duration_max >= rc_->duration_min) ||
                !(rc_->force_min >= 0) || !(rc_->force_max >= rc_->force_min));
    for (size_t k = 0; !bad && rc_->rate > 0 && k < rc_->n_frames; k++)
        bad = rc_->frames[k] < 0 || (size_t)rc_->frames[k] >= m->n_frames;
    if (bad)
        return rb_err_set(err, RB_ECONFIG,
                          "sim: random contacts: need rate > 0, model frames, 0 <= from < until, "
                          "0 < duration_min <= duration_max, 0 <= force_min <= force_max");
    if (sc->n_payloads && !sc->payloads)
        return rb_err_set(err, RB_ECONFIG, "sim: payloads: NULL list");
    int rc = sim_payload_validate(m, sc->payloads, sc->n_payloads, err);
    if (rc < 0)
        return rc;
    if (sc->balance.enabled && (!m->floating || sc->n_contacts == 0))
        return rb_err_set(err, RB_ECONFIG, "sim: balance needs a floating base and contacts");
    for (size_t k = 0; sc->frames && k < sc->n_frames; k++)
        if (sc->frames[k] < 0 || (size_t)sc->frames[k] >= m->n_frames)
            return rb_err_set(err, RB_ECONFIG, "sim: frame %d out of range", sc->frames[k]);
    if ((rc = sim_gait_check(sc, err)) < 0)
        return rc;
    return (rc = sim_jets_validate(sc, err)) < 0 ? rc : sim_fric_validate(sc, err);
}

/* The random contacts (sim_mismatch.h) on their own stream, after the random pushes in `out` when non-NULL; returns
 * the count. */
static size_t draw_contacts(const rb_sim_scenario *sc, rb_sim_push *out)
{
    const rb_sim_random_contacts *rc = &sc->random_contacts;
    if (!(rc->rate > 0))
        return 0;
    rb_rng rng;
    rb_rng_seed(&rng, sc->seed ^ RB_SIM_CONTACTS_STREAM);
    size_t k = 0;
    double t = rc->from, end = fmin(rc->until, sc->duration);
    for (;;) {
        t += -log(1.0 - rb_rng_uniform(&rng)) / rc->rate;
        size_t f = (size_t)(rb_rng_uniform(&rng) * (double)rc->n_frames);
        double ang = 2 * M_PI * rb_rng_uniform(&rng);
        double mag = rc->force_min + (rc->force_max - rc->force_min) * rb_rng_uniform(&rng);
        double dur = rc->duration_min + (rc->duration_max - rc->duration_min) * rb_rng_uniform(&rng);
        if (t >= end)
            return k;
        if (out) {
            rb_sim_push *p = &out[k];
            memset(p, 0, sizeof *p);
            p->frame = rc->frames[f < rc->n_frames ? f : rc->n_frames - 1];
            p->shape = RB_PUSH_HALF_SINE, p->start = t, p->duration = dur;
            p->peak[0] = mag * cos(ang), p->peak[1] = mag * sin(ang);
        }
        k++;
    }
}

/* Poisson push times over [0, duration); fills `out` when non-NULL, returns the count. */
static size_t draw_pushes(const rb_sim_scenario *sc, rb_sim_push *out)
{
    const rb_sim_random_pushes *rp = &sc->random_pushes;
    if (!(rp->rate > 0))
        return 0;
    rb_rng rng;
    rb_rng_seed(&rng, sc->seed);
    size_t k = 0;
    double t = 0.0;
    for (;;) {
        t += -log(1.0 - rb_rng_uniform(&rng)) / rp->rate;
        double ang = 2 * M_PI * rb_rng_uniform(&rng);
        double mag = rp->force_min + (rp->force_max - rp->force_min) * rb_rng_uniform(&rng);
        if (t >= sc->duration)
            return k;
        if (out) {
            rb_sim_push *p = &out[k];
            memset(p, 0, sizeof *p);
            p->frame = rp->frame, p->shape = rp->shape, p->start = t, p->duration = rp->duration;
            p->peak[0] = mag * cos(ang), p->peak[1] = mag * sin(ang);
        }
        k++;
    }
}

static int cmp_event(const void *a, const void *b)
{
    const rb_sim_contact_event *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t ? 1 : 0;
}

#define ALLOC(ptr, count)                                                                                              \
    do {                                                                                                               \
        size_t cnt_ = (count);                                                                                         \
        if (!((ptr) = rb_calloc(cnt_ ? cnt_ : 1, sizeof *(ptr))))                                                      \
            goto nomem;                                                                                                \
    } while (0)

/* The run's mismatch (sim_mismatch.h): the plant's bodies (not the payloads'), the command delay line. */
static int mismatch_init(rb_sim *s, const rb_sim_scenario *sc, rb_err *err)
{
    const rb_model *m = s->m;
    int rc = rb_sim_mismatch_draw(&sc->mismatch, m, sc->seed, &s->mmd, err);
    if (rc < 0)
        return rc;
    s->mm_on = true;
    for (size_t b = 0; b < m->n_bodies; b++) {
        if (!s->mmd.changed[b] || s->body_pi[b] != m->bodies[b].inertia) /* a payload's body keeps its payload */
            continue;
        s->body_pi[b] = s->mmd.body_pi + 10 * b;
        s->share_ctrl = false; /* the controller keeps the model */
        if ((rc = rb_dyn_set_body_inertia(m, s->plant, b, s->body_pi[b], err)) < 0)
            return rc;
    }
    s->ring_len = s->mmd.command_delay + 1;
    s->ring_pos = 0;
    if (!(s->cmd_ring = rb_calloc(s->ring_len * (s->n ? s->n : 1), sizeof *s->cmd_ring)))
        return rb_err_set(err, RB_ENOMEM, "sim: out of memory");
    for (size_t i = 0; i < s->ring_len * s->n; i++)
        s->cmd_ring[i] = NAN; /* empty: the first command fills it */
    return sim_elastic_init(s, err);
}

int rb_sim_init(const rb_sim_scenario *sc, rb_sim **out, rb_err *err)
{
    if (!sc || !out || !sc->model)
        return rb_err_set(err, RB_EINVAL, "rb_sim_init: NULL argument");
    *out = NULL;
    int rc = validate(sc, err);
    if (rc < 0)
        return rc;
    const rb_model *m = sc->model;
    rb_sim *s = rb_calloc(1, sizeof *s);
    if (!s)
        return rb_err_set(err, RB_ENOMEM, "sim: out of memory");
    s->sc = *sc;
    s->m = m;
    size_t n = s->n = m->n_dofs, nq = s->nq = m->nq, nv = s->nv = m->nv;
    s->voff = m->floating ? 6 : 0;
    s->nc = sc->n_contacts;
    size_t n_rand = draw_pushes(sc, NULL), n_contacts_rand = draw_contacts(sc, NULL);
    s->npush = sc->n_pushes + n_rand + n_contacts_rand;
    s->nf = sc->frames ? sc->n_frames : m->n_imu;
    s->n_steps = (size_t)ceil(sc->duration / sc->dt - 1e-9);
    size_t rows = n;
    for (size_t k = 0; k < s->nc; k++)
        rows += (size_t)sc->contacts[k].dim;
    s->max_rows = rows;
    size_t ik_rows = rows + 6 > nv ? rows + 6 : nv;

    if ((rc = rb_dyn_alloc(m, &s->plant, err)) < 0 || (rc = rb_dyn_alloc(m, &s->ctrl, err)) < 0)
        goto fail;
    ALLOC(s->refs, n);
    ALLOC(s->gains, n);
    ALLOC(s->act, n);
    ALLOC(s->fric, n);
    ALLOC(s->fst, n);
    ALLOC(s->contacts, s->nc);
    ALLOC(s->events, sc->n_events);
    ALLOC(s->pushes, s->npush);
    ALLOC(s->frames, s->nf);
    ALLOC(s->active, s->nc);
    ALLOC(s->cref, s->nc);
    ALLOC(s->vperm, nv);
    ALLOC(s->vpos, nv);
    ALLOC(s->vpar, nv);
    ALLOC(s->arm_v, nv);
    ALLOC(s->Mraw, nv * nv);
    ALLOC(s->L, nv * nv);
    ALLOC(s->h, nv);
    ALLOC(s->q, nq);
    ALLOC(s->nu, nv);
    ALLOC(s->nu_dot, nv);
    ALLOC(s->tau_net, n);
    ALLOC(s->held, n);
    ALLOC(s->tau_j, n);
    ALLOC(s->tau_m, n);
    ALLOC(s->tau_f, n);
    ALLOC(s->tau_des, n);
    ALLOC(s->cur, n);
    ALLOC(s->cur_cmd, n);
    ALLOC(s->mpos, n);
    ALLOC(s->mvel, n);
    ALLOC(s->macc, n);
    ALLOC(s->ref, n);
    ALLOC(s->ref_d, n);
    ALLOC(s->ref_dd, n);
    ALLOC(s->stuck, n);
    ALLOC(s->cw, 6 * s->nc);
    ALLOC(s->pw, 6 * s->npush);
    ALLOC(s->ft, 6 * m->n_ft);
    ALLOC(s->fpose, s->nf);
    ALLOC(s->fvel, 6 * s->nf);
    ALLOC(s->facc, 6 * s->nf);
    ALLOC(s->tau_prev, n);
    ALLOC(s->tau_ref, n);
    ALLOC(s->tau_hat, n);
    ALLOC(s->tau_f_hat, n);
    ALLOC(s->int_e, n);
    ALLOC(s->tau_g_prev, n);
    ALLOC(s->wdot_prev, n);
    ALLOC(s->at_limit, n);
    ALLOC(s->ext, s->npush + sc->n_jets + s->nc);
    ALLOC(s->a0, nv);
    ALLOC(s->Jc, rows * nv);
    ALLOC(s->Y, rows * nv);
    ALLOC(s->S, rows * rows);
    ALLOC(s->c, rows);
    ALLOC(s->lam, rows);
    ALLOC(s->yleaf, rows);
    ALLOC(s->cleaf, s->nc);
    ALLOC(s->J6, 6 * nv);
    ALLOC(s->tmp, nv);
    ALLOC(s->gv, nv);
    ALLOC(s->hold, n);
    ALLOC(s->qs, nq);
    ALLOC(s->nus, nv);
    ALLOC(s->kv, 4 * nv);
    ALLOC(s->ka, 4 * nv);
    ALLOC(s->q_r, nq);
    ALLOC(s->nu_r, nv);
    ALLOC(s->nu_r_prev, nv);
    ALLOC(s->A, ik_rows * nv);
    ALLOC(s->AtA, nv * nv);
    ALLOC(s->rhs, ik_rows);
    s->npl = sc->n_payloads;
    size_t nseg = 0;
    for (size_t k = 0; k < s->npl; k++)
        nseg += sc->payloads[k].n_segments;
    ALLOC(s->payloads, s->npl);
    ALLOC(s->segs, nseg);
    ALLOC(s->pl_pi, 10 * s->npl);
    ALLOC(s->body_pi, m->n_bodies);
    ALLOC(s->ctrl_pi, 10 * m->n_bodies);
    ALLOC(s->ctrl_dirty, m->n_bodies);
    ALLOC(s->free_j, n);

    /* copies */
    if (sc->q0)
        memcpy(s->q, sc->q0, nq * sizeof *s->q);
    else
        rb_dyn_neutral(m, s->q);
    if (sc->nu0)
        memcpy(s->nu, sc->nu0, nv * sizeof *s->nu);
    for (size_t j = 0; j < n; j++) {
        if (sc->refs)
            s->refs[j] = sc->refs[j];
        else
            s->refs[j].kind = RB_REF_CONST, s->refs[j].offset = s->q[nq - n + j];
        if (sc->gains)
            s->gains[j] = sc->gains[j];
        if (sc->actuators)
            s->act[j] = sc->actuators[j];
        if (sc->friction)
            s->fric[j] = sc->friction[j];
        rb_friction_state_init(&s->fst[j]);
        s->tau_hat[j] = s->tau_f_hat[j] = NAN; /* no estimate before rb_sim_set_torque_feedback */
    }
    if (s->nc)
        memcpy(s->contacts, sc->contacts, s->nc * sizeof *s->contacts);
    if (sc->n_events) {
        memcpy(s->events, sc->events, sc->n_events * sizeof *s->events);
        /* stable order by time: insertion sort (qsort is not stable) */
        for (size_t i = 1; i < sc->n_events; i++)
            for (size_t k = i; k > 0 && cmp_event(&s->events[k - 1], &s->events[k]) > 0; k--) {
                rb_sim_contact_event x = s->events[k];
                s->events[k] = s->events[k - 1], s->events[k - 1] = x;
            }
    }
    if (sc->n_pushes)
        memcpy(s->pushes, sc->pushes, sc->n_pushes * sizeof *s->pushes);
    draw_pushes(sc, s->pushes + sc->n_pushes);
    draw_contacts(sc, s->pushes + sc->n_pushes + n_rand);
    for (size_t f = 0; f < s->nf; f++)
        s->frames[f] = sc->frames ? sc->frames[f] : m->imu[f].frame;
    s->sc.refs = NULL, s->sc.gains = NULL, s->sc.actuators = NULL, s->sc.friction = NULL;
    s->sc.contacts = NULL, s->sc.events = NULL, s->sc.pushes = NULL, s->sc.frames = NULL;
    s->sc.q0 = NULL, s->sc.nu0 = NULL;
    tree_order(m, s->vperm, s->vpos, s->vpar);
    for (size_t k = 0; k < s->nc; k++)
        s->cleaf[k] = tree_leaf(m, s->vpos, m->frames[s->contacts[k].frame].body);
    for (size_t j = 0; j < n; j++)
        s->arm_v[s->voff + j] = act_armature(&s->act[j]);
    for (size_t b = 0; b < m->n_bodies; b++)
        s->body_pi[b] = m->bodies[b].inertia;
    for (size_t k = 0, g = 0; k < s->npl; k++) {
        rb_sim_payload *p = &s->payloads[k];
        *p = sc->payloads[k];
        if (p->mode != RB_PAYLOAD_MIX && p->n_segments) {
            memcpy(s->segs + g, p->segments, p->n_segments * sizeof *s->segs);
            p->segments = s->segs + g;
            g += p->n_segments;
        } else {
            p->segments = NULL, p->n_segments = 0;
        }
        s->body_pi[p->body] = s->pl_pi + 10 * k;
    }
    const unsigned char *free_j = sc->gait.enabled ? sc->gait.free_joints : sc->balance.free_joints;
    if (free_j)
        memcpy(s->free_j, free_j, n * sizeof *s->free_j);
    s->sc.payloads = NULL, s->sc.balance.free_joints = NULL, s->sc.gait.free_joints = NULL;
    s->share_ctrl = s->npl == 0;
    if (sc->mismatch.enabled && (rc = mismatch_init(s, sc, err)) < 0)
        goto fail;
    if ((rc = sim_jets_init(s, sc, err)) < 0 || (rc = sim_fric_init(s, sc, err)) < 0)
        goto fail;
    if (sc->joint_limits)
        sim_apply_limits(s);

    for (size_t k = 0; k < s->nc; k++)
        if (sc->contacts[k].initially_active && (rc = sim_activate_contact(s, k, err)) < 0)
            goto fail;
    if (sim_ik_on(s)) {
        memcpy(s->q_r, s->q, nq * sizeof *s->q_r);
        if ((rc = rb_dyn_kinematics(m, s->ctrl, s->q_r, NULL, NULL, err)) < 0 ||
            (rc = rb_dyn_com(m, s->ctrl, s->com0, err)) < 0)
            goto fail;
        const rb_xform *XB = rb_dyn_body_pose(s->ctrl, 0);
        s->z_B0 = XB->p[2];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                s->R_B0[3 * i + j] = XB->R[3 * j + i];
    }
    if (sc->gait.enabled && (rc = sim_gait_init(s, err)) < 0)
        goto fail;

    rb_sim_truth *tr = &s->truth;
    tr->n = n, tr->nq = nq, tr->nv = nv;
    tr->q = s->q, tr->nu = s->nu, tr->nu_dot = s->nu_dot;
    tr->s = s->q + (nq - n), tr->s_dot = s->nu + s->voff, tr->s_ddot = s->nu_dot + s->voff;
    tr->tau_j = s->tau_j, tr->tau_m = s->tau_m, tr->tau_f = s->tau_f, tr->tau_des = s->tau_des;
    tr->tau_ref = s->tau_ref;
    for (int i = 0; i < 3; i++)
        tr->com_ref[i] = NAN; /* balance_ik sets it */
    tr->current = s->cur, tr->current_cmd = s->cur_cmd;
    tr->motor_pos = s->mpos, tr->motor_vel = s->mvel, tr->motor_acc = s->macc;
    tr->ref = s->ref, tr->stuck = s->stuck, tr->at_limit = s->at_limit;
    rb_xform_identity(&tr->base_pose);
    tr->n_contacts = s->nc, tr->contact_wrench = s->cw, tr->contact_active = s->active;
    tr->n_pushes = s->npush, tr->push_wrench = s->pw, tr->push_list = s->pushes;
    tr->n_frames = s->nf, tr->frames = s->frames, tr->frame_pose = s->fpose, tr->frame_vel = s->fvel,
    tr->frame_acc = s->facc;
    tr->n_ft = m->n_ft, tr->ft = s->ft;
    tr->n_payloads = s->npl, tr->payload_pi = s->pl_pi;
    tr->pelvis_height_ref = NAN;
    for (int i = 0; i < 6; i++) /* the gait sets them */
        tr->gait.feet_ref[i] = NAN;
    for (int i = 0; i < 2; i++)
        tr->gait.zmp_ref[i] = tr->gait.zmp[i] = NAN;

    if ((rc = sim_compute_sample(s, err)) < 0)
        goto fail;
    *out = s;
    return RB_OK;
nomem:
    rc = rb_err_set(err, RB_ENOMEM, "sim: out of memory");
fail:
    rb_sim_finish(s);
    return rc;
}

void rb_sim_finish(rb_sim *s)
{
    if (!s)
        return;
    rb_dyn_free(s->plant);
    rb_dyn_free(s->ctrl);
    sim_jets_free(s);
    sim_fric_free(s);
    sim_gait_free(s);
    rb_sim_mismatch_draws_free(&s->mmd);
    rb_free(s->cmd_ring);
    rb_free(s->el_th), rb_free(s->el_thd), rb_free(s->tau_s), rb_free(s->el_k);
    void *arrays[] = {s->refs,      s->gains,     s->act,        s->fric,
                      s->fst,       s->contacts,  s->events,     s->pushes,
                      s->frames,    s->active,    s->cref,       s->vperm,
                      s->vpos,      s->vpar,      s->arm_v,      s->Mraw,
                      s->L,         s->h,         s->tau_g_prev, s->wdot_prev,
                      s->at_limit,  s->gv,        s->yleaf,      s->cleaf,
                      s->q,         s->nu,        s->nu_dot,     s->tau_net,
                      s->held,      s->tau_j,     s->tau_m,      s->tau_f,
                      s->tau_des,   s->cur,       s->cur_cmd,    s->mpos,
                      s->mvel,      s->macc,      s->ref,        s->ref_d,
                      s->ref_dd,    s->stuck,     s->cw,         s->pw,
                      s->ft,        s->fpose,     s->fvel,       s->facc,
                      s->tau_prev,  s->int_e,     s->tau_ref,    s->tau_hat,
                      s->tau_f_hat, s->ext,       s->a0,         s->Jc,
                      s->Y,         s->S,         s->c,          s->lam,
                      s->J6,        s->tmp,       s->hold,       s->qs,
                      s->nus,       s->kv,        s->ka,         s->q_r,
                      s->nu_r,      s->nu_r_prev, s->A,          s->AtA,
                      s->rhs,       s->payloads,  s->segs,       (void *)s->body_pi,
                      s->pl_pi,     s->ctrl_pi,   s->ctrl_dirty, s->free_j};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        rb_free(arrays[i]);
    rb_free(s);
}
