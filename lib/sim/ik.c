/* lib/sim: the differential inverse kinematics behind balancing and walking (roboest/sim_gait.h): one velocity
 * solve per sample at the reference configuration q_r of the controller's model, whose joint part gives the joint
 * references. */
#include <math.h>
#include <string.h>

#include "roboest/sim.h"

#include "sim_internal.h"

/* nu_r = (A^T A + eps 1)^-1 A^T rhs (A: rows x nv in s->A), the damped least-squares solution (eps = 1e-10: the
 * exact, minimum-norm one when A has full row rank). Solved in the smaller of its two equal forms: with
 * rows <= nv as A^T (A A^T + eps 1)^-1 rhs, a rows x rows system over dot products of A's contiguous rows. */
static int damped_least_squares(rb_sim *s, size_t rows, rb_err *err)
{
    size_t nv = s->nv;
    double *G = s->AtA;
    if (rows <= nv) {
        for (size_t r = 0; r < rows; r++)
            for (size_t r2 = 0; r2 <= r; r2++)
                G[r * rows + r2] = G[r2 * rows + r] =
                    sim_dot(s->A + r * nv, s->A + r2 * nv, nv) + (r == r2 ? 1e-10 : 0.0);
        if (!sim_chol(G, rows))
            return rb_err_set(err, RB_ENUMERIC, "sim: t = %.6g s: balance IK singular", s->t);
        sim_chol_solve(G, rows, s->rhs);
        memset(s->nu_r, 0, nv * sizeof *s->nu_r);
        for (size_t r = 0; r < rows; r++)
            for (size_t i = 0; i < nv; i++)
                s->nu_r[i] += s->A[r * nv + i] * s->rhs[r];
        return RB_OK;
    }
    for (size_t i = 0; i < nv; i++) {
        double x = 0.0;
        for (size_t r = 0; r < rows; r++)
            x += s->A[r * nv + i] * s->rhs[r];
        s->nu_r[i] = x;
        for (size_t j = 0; j <= i; j++) {
            double a = 0.0;
            for (size_t r = 0; r < rows; r++)
                a += s->A[r * nv + i] * s->A[r * nv + j];
            G[i * nv + j] = G[j * nv + i] = a + (i == j ? 1e-10 : 0.0);
        }
    }
    if (!sim_chol(G, nv))
        return rb_err_set(err, RB_ENUMERIC, "sim: t = %.6g s: balance IK singular", s->t);
    sim_chol_solve(G, nv, s->nu_r);
    return RB_OK;
}

/* Six rows of a frame's MIXED Jacobian tracking a pose: linear v_ref + k (p_ref - p), angular -k log(R R_ref^T)
 * (rb_sim_balance's IK rows; a contact: v_ref 0). */
static int frame_task(rb_sim *s, size_t f, const rb_xform *ref, const double *v_ref, double k, int dim, size_t *rows,
                      rb_err *err)
{
    const rb_model *m = s->m;
    size_t nv = s->nv;
    rb_mat J6 = rb_mat_view(s->J6, 6, nv, nv);
    rb_xform X;
    double e[6];
    int rc;
    if ((rc = rb_dyn_frame_jacobian(m, s->ctrl, f, RB_DYN_MIXED, &J6, err)) < 0 ||
        (rc = rb_dyn_frame_pose(m, s->ctrl, f, &X, err)) < 0)
        return rc;
    sim_pose_error(&X, ref, e);
    for (int r = 0; r < dim; r++, (*rows)++) {
        memcpy(s->A + *rows * nv, s->J6 + (size_t)r * nv, nv * sizeof *s->A);
        s->rhs[*rows] = v_ref && r < 3 ? v_ref[r] - k * e[r] : -k * e[r];
    }
    return RB_OK;
}

/* One IK velocity solve at the reference configuration q_r (controller model): the contacts in effect, the CoM
 * (balance: the sway; gait: the plan), the pelvis's orientation, the gait's swing foot. */
static int ik_solve(rb_sim *s, rb_err *err)
{
    const rb_model *m = s->m;
    size_t nv = s->nv, rows = 0;
    double ik_T = s->sc.gait.enabled ? s->sc.gait.ik_T : s->sc.balance.ik_T;
    double k = 1.0 / (ik_T > 0 ? ik_T : 0.02);
    int rc;
    if ((rc = rb_dyn_kinematics(m, s->ctrl, s->q_r, NULL, NULL, err)) < 0)
        return rc;
    for (size_t c = 0; c < s->nc; c++)
        if (s->active[c] && (rc = frame_task(s, (size_t)s->contacts[c].frame, &s->cref[c], NULL, k, s->contacts[c].dim,
                                             &rows, err)) < 0)
            return rc;
    int swing;
    const double *sp, *sv, *sR;
    if (s->gait && sim_gait_swing_task(s, &swing, &sp, &sv, &sR)) {
        rb_xform ref;
        memcpy(ref.p, sp, sizeof ref.p);
        memcpy(ref.R, sR, sizeof ref.R);
        if ((rc = frame_task(s, (size_t)swing, &ref, sv, k, 6, &rows, err)) < 0)
            return rc;
    }
    double com[3], cref[3], cdot[3];
    rb_mat Jcom = rb_mat_view(s->A + rows * nv, 3, nv, nv);
    if ((rc = rb_dyn_com_jacobian(m, s->ctrl, &Jcom, com, err)) < 0)
        return rc;
    if (s->gait) { /* sim_gait_sample planned this sample's CoM */
        memcpy(cref, s->truth.com_ref, sizeof cref);
        memcpy(cdot, sim_gait_com_dot(s), sizeof cdot);
    } else {
        double w = 2 * M_PI * s->sc.balance.freq, a = s->sc.balance.amplitude;
        cref[0] = s->com0[0], cref[1] = s->com0[1] + a * sin(w * s->t), cref[2] = s->com0[2];
        cdot[0] = 0.0, cdot[1] = a * w * cos(w * s->t), cdot[2] = 0.0;
        memcpy(s->truth.com_ref, cref, sizeof cref);
    }
    for (int i = 0; i < 3; i++)
        s->rhs[rows + (size_t)i] = cdot[i] + k * (cref[i] - com[i]);
    const rb_xform *XB = rb_dyn_body_pose(s->ctrl, 0);
    if (s->sc.balance.enabled && s->sc.balance.pelvis_height.enabled) {
        /* the base height instead of the CoM's: world z of the base velocity, e_z^T R_B v_B */
        double wz = 2 * M_PI * s->sc.balance.pelvis_height.freq, a = s->sc.balance.pelvis_height.amplitude;
        double zr = s->z_B0 + s->sc.balance.pelvis_height.offset + a * sin(wz * s->t), zd = a * wz * cos(wz * s->t);
        double *row = s->A + (rows + 2) * nv;
        memset(row, 0, nv * sizeof *row);
        for (int i = 0; i < 3; i++)
            row[i] = XB->R[6 + i];
        s->rhs[rows + 2] = zd + k * (zr - XB->p[2]);
        s->truth.pelvis_height_ref = zr;
    }
    rows += 3;
    double RRt[9], lw[3], wB[3];
    rb_m3_mul(XB->R, s->R_B0, RRt); /* R_B R_B0^T: R_B0 holds the transpose */
    sim_rot_log(RRt, lw);
    for (int i = 0; i < 3; i++)
        lw[i] *= -k;
    rb_m3t_mul_v(XB->R, lw, wB);
    for (int i = 0; i < 3; i++, rows++) {
        memset(s->A + rows * nv, 0, nv * sizeof *s->A);
        s->A[rows * nv + 3 + (size_t)i] = 1.0;
        s->rhs[rows] = wB[i];
    }
    /* free joints: given (their reference's velocity moves to the right-hand side), out of the solve */
    for (size_t j = 0; j < s->n; j++) {
        if (!s->free_j[j])
            continue;
        size_t col = s->voff + j;
        for (size_t r = 0; r < rows; r++) {
            s->rhs[r] -= s->A[r * nv + col] * s->ref_d[j];
            s->A[r * nv + col] = 0.0;
        }
    }
    if ((rc = damped_least_squares(s, rows, err)) < 0)
        return rc;
    for (size_t j = 0; j < s->n; j++)
        if (s->free_j[j])
            s->nu_r[s->voff + j] = s->ref_d[j];
    return RB_OK;
}

int sim_ik_refs(rb_sim *s, rb_err *err)
{
    size_t n = s->n, vo = s->voff;
    int rc;
    for (size_t j = 0; j < n; j++) {
        if (!s->free_j[j])
            continue;
        double r[3];
        rb_sim_ref_eval(&s->refs[j], s->t, r);
        s->q_r[7 + j] = r[0], s->ref_d[j] = r[1];
    }
    if ((rc = sim_ctrl_model_sample(s, err)) < 0 || (rc = ik_solve(s, err)) < 0)
        return rc;
    for (size_t j = 0; j < n; j++) {
        if (s->free_j[j]) {
            double r[3];
            rb_sim_ref_eval(&s->refs[j], s->t, r);
            s->ref[j] = r[0], s->ref_d[j] = r[1], s->ref_dd[j] = r[2];
            continue;
        }
        s->ref[j] = s->q_r[7 + j];
        s->ref_d[j] = s->nu_r[vo + j];
        s->ref_dd[j] = s->step == 0 ? 0.0 : (s->nu_r[vo + j] - s->nu_r_prev[vo + j]) / s->sc.dt;
    }
    return RB_OK;
}
