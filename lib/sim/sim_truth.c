/* lib/sim: the truth's own passes (rb_sim_truth_compute): frame motion, FT wrenches, energy, centre of mass. */
#include <string.h>

#include "roboest/sim.h"

#include "sim_internal.h"

/* ---- the truth's own passes ------------------------------------------------------------------------------ */

/* The plant's kinematic state at the sample, at least at `level` (KIN_POS: poses; KIN_ACC: with nu_dot). */
static int sample_kinematics(rb_sim *s, int level, rb_err *err)
{
    if (s->kin >= level)
        return RB_OK;
    int rc = level == KIN_POS ? rb_dyn_kinematics(s->m, s->plant, s->q, NULL, NULL, err)
                              : rb_dyn_kinematics(s->m, s->plant, s->q, s->nu, s->nu_dot, err);
    if (rc < 0)
        return rc;
    s->kin = level == KIN_POS ? KIN_POS : KIN_ACC;
    return RB_OK;
}

/* Each frame's world pose, BODY velocity and BODY proper acceleration from its body's pose, twist and
 * acceleration (one transform each; rb_dyn_frame_pose / _velocity / _proper_acceleration give the same):
 * v_F = F_X_b v_b, a_F = F_X_b a_b, proper linear acceleration a_F,lin + w_F x v_F,lin - R_WF^T g. */
static int truth_frames(rb_sim *s, rb_err *err)
{
    int rc = sample_kinematics(s, KIN_ACC, err);
    if (rc < 0)
        return rc;
    const rb_model *m = s->m;
    for (size_t f = 0; f < s->nf; f++) {
        const rb_frame *fr = &m->frames[s->frames[f]];
        double *v = s->fvel + 6 * f, *a = s->facc + 6 * f, wv[3], g[3];
        rb_xform_compose(rb_dyn_body_pose(s->plant, (size_t)fr->body), &fr->X_body, &s->fpose[f]);
        rb_xform_motion_inv(&fr->X_body, rb_dyn_body_velocity(s->plant, (size_t)fr->body), v);
        rb_xform_motion_inv(&fr->X_body, rb_dyn_body_acceleration(s->plant, (size_t)fr->body), a);
        rb_v3_cross(v + 3, v, wv);
        rb_m3t_mul_v(s->fpose[f].R, m->gravity, g);
        for (int k = 0; k < 3; k++)
            a[k] += wv[k] - g[k];
    }
    return RB_OK;
}

/* FT wrenches: the RNEA of the sample with the pushes in effect and the contact wrenches. */
static int truth_ft(rb_sim *s, rb_err *err)
{
    if (!s->m->n_ft)
        return RB_OK;
    size_t next = s->n_ext_push;
    for (size_t k = 0; k < s->nc; k++) {
        if (!s->active[k])
            continue;
        s->ext[next].frame = s->contacts[k].frame;
        s->ext[next].rep = RB_DYN_MIXED;
        memcpy(s->ext[next].w, s->cw + 6 * k, sizeof s->ext[next].w);
        next++;
    }
    int rc = rb_dyn_rnea(s->m, s->plant, s->q, s->nu, s->nu_dot, s->ext, next, s->gv, err);
    if (rc < 0)
        return rc;
    return rb_dyn_ft_wrenches(s->m, s->plant, s->ft, err);
}

/* Kinetic energy nu^T (M + diag(R^2 J_m)) nu / 2 (M of the sample), potential -g . sum (m_i p_i + R_i h_i). */
static int truth_energy(rb_sim *s, rb_err *err)
{
    const rb_model *m = s->m;
    size_t nv = s->nv;
    int rc = sample_kinematics(s, KIN_POS, err);
    if (rc < 0)
        return rc;
    double T = 0.0, V = 0.0;
    for (size_t i = 0; i < nv; i++)
        T += s->nu[i] * (sim_dot(s->Mraw + i * nv, s->nu, nv) + s->arm_v[i] * s->nu[i]);
    for (size_t i = 0; i < m->n_bodies; i++) {
        const double *pi = s->body_pi[i];
        const rb_xform *X = rb_dyn_body_pose(s->plant, i);
        double Rh[3];
        rb_m3_mul_v(X->R, pi + 1, Rh);
        for (int k = 0; k < 3; k++)
            V -= m->gravity[k] * (pi[0] * X->p[k] + Rh[k]);
    }
    s->truth.kinetic = 0.5 * T, s->truth.potential = V;
    return RB_OK;
}

/* Centre of mass of the plant: sum_i (m_i p_i + R_i h_i) / sum_i m_i over the bodies, the payload body with its
 * current parameters; with `motion` its velocity and acceleration from the bodies' (body-fixed twist [v; w] and its
 * derivative [a; alpha]): a body point r moves at R (v + w x r) and accelerates at R (a + w x v + alpha x r +
 * w x (w x r)), so the sums take h_i = m_i r_i in place of m_i r_i. */
static int truth_com(rb_sim *s, bool motion, rb_err *err)
{
    const rb_model *m = s->m;
    int rc = sample_kinematics(s, motion ? KIN_ACC : KIN_POS, err);
    if (rc < 0)
        return rc;
    double mass = 0.0, sum[3] = {0, 0, 0}, vel[3] = {0, 0, 0}, acc[3] = {0, 0, 0};
    for (size_t b = 0; b < m->n_bodies; b++) {
        const double *pi = s->body_pi[b], *h = pi + 1;
        const rb_xform *X = rb_dyn_body_pose(s->plant, b);
        double Rh[3];
        rb_m3_mul_v(X->R, h, Rh);
        for (int i = 0; i < 3; i++)
            sum[i] += pi[0] * X->p[i] + Rh[i];
        mass += pi[0];
        if (!motion)
            continue;
        const double *v = rb_dyn_body_velocity(s->plant, b), *a = rb_dyn_body_acceleration(s->plant, b);
        double wh[3], wv[3], ah[3], wwh[3], bv[3], ba[3], Rv[3], Ra[3];
        rb_v3_cross(v + 3, h, wh);
        rb_v3_cross(v + 3, v, wv);
        rb_v3_cross(a + 3, h, ah);
        rb_v3_cross(v + 3, wh, wwh);
        for (int i = 0; i < 3; i++) {
            bv[i] = pi[0] * v[i] + wh[i];
            ba[i] = pi[0] * (a[i] + wv[i]) + ah[i] + wwh[i];
        }
        rb_m3_mul_v(X->R, bv, Rv);
        rb_m3_mul_v(X->R, ba, Ra);
        for (int i = 0; i < 3; i++)
            vel[i] += Rv[i], acc[i] += Ra[i];
    }
    for (int i = 0; i < 3; i++) {
        s->truth.com[i] = mass > 0 ? sum[i] / mass : 0.0;
        if (motion)
            s->truth.com_vel[i] = mass > 0 ? vel[i] / mass : 0.0, s->truth.com_acc[i] = mass > 0 ? acc[i] / mass : 0.0;
    }
    return RB_OK;
}

int rb_sim_truth_compute(rb_sim *s, unsigned parts, rb_err *err)
{
    if (!s)
        return rb_err_set(err, RB_EINVAL, "rb_sim_truth_compute: NULL engine");
    unsigned todo = parts & RB_SIM_TRUTH_ALL & ~s->truth.valid;
    int rc = RB_OK;
    if (todo & RB_SIM_TRUTH_FRAMES)
        rc = truth_frames(s, err); /* first: its kinematics pass serves the energy too */
    if (rc >= 0 && (todo & RB_SIM_TRUTH_FT))
        rc = truth_ft(s, err);
    if (rc >= 0 && (todo & RB_SIM_TRUTH_ENERGY))
        rc = truth_energy(s, err);
    if (rc >= 0 && (todo & (RB_SIM_TRUTH_COM | RB_SIM_TRUTH_COM_MOTION)))
        rc = truth_com(s, (todo & RB_SIM_TRUTH_COM_MOTION) != 0, err);
    if (rc < 0)
        return rc;
    s->truth.valid |= todo | (todo & RB_SIM_TRUTH_COM_MOTION ? RB_SIM_TRUTH_COM : 0u);
    return RB_OK;
}

const rb_sim_mismatch_draws *rb_sim_mismatch_get(const rb_sim *s) { return s && s->mm_on ? &s->mmd : NULL; }
