/* Kinematic state: poses, twists, accelerations; frame queries, Jacobians, centre of mass, centroidal
 * momentum. */
#include <math.h>
#include <string.h>

#include "dyn_internal.h"

void rbd_kinematics(rb_dyn *ws, const double *q, const double *nu, const double *nu_dot, bool with_vel)
{
    const size_t nb = ws->nb;
    const dyn_body *B = ws->body;
    rb_xform *Xup = ws->kXup, *X0 = ws->kX0;
    double(*v)[6] = ws->kv, (*ab)[6] = ws->kab, (*a)[6] = ws->ka;

    rbd_kin_joint_xforms(ws, q);
    if (ws->floating)
        dyn_base_pose(q, &X0[0]);
    else
        rb_xform_identity(&X0[0]);
    for (int k = 0; k < 6; k++) {
        v[0][k] = ws->floating && nu ? nu[k] : 0.0;
        a[0][k] = ws->floating && nu_dot ? nu_dot[k] : 0.0;
        ab[0][k] = 0.0;
    }
    for (size_t i = 1; i < nb; i++) {
        const dyn_body *b = &B[i];
        int p = b->parent;
        rb_xform_compose(&X0[p], &Xup[i], &X0[i]);
        if (!with_vel)
            continue;
        /* v_i = iXp v_p + S qd;  a_i = iXp a_p + S qdd + v_i x S qd  (table 5.1, with and without qdd) */
        rb_xform_motion_inv(&Xup[i], v[p], v[i]);
        rb_xform_motion_inv(&Xup[i], ab[p], ab[i]);
        if (nu_dot)
            rb_xform_motion_inv(&Xup[i], a[p], a[i]);
        if (b->vi >= 0 && nu) {
            double qd = nu[b->vi], cS[6];
            dyn_add_S(b, qd, v[i]);
            dyn_cross_S(b, v[i], qd, cS);
            for (int k = 0; k < 6; k++)
                ab[i][k] += cS[k];
            if (nu_dot)
                for (int k = 0; k < 6; k++)
                    a[i][k] += cS[k];
        }
        if (!nu_dot)
            memcpy(a[i], ab[i], sizeof a[i]); /* the same sums: no second transform */
        else if (b->vi >= 0)
            dyn_add_S(b, nu_dot[b->vi], a[i]);
    }
    ws->level = with_vel ? LEVEL_ACC : LEVEL_POS;
}

int rb_dyn_kinematics(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, const double *nu_dot,
                      rb_err *err)
{
    int rc = rbd_check(model, ws, err);
    if (rc < 0)
        return rc;
    if (!q)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_kinematics: NULL q");
    rbd_kinematics(ws, q, nu, nu_dot, nu != NULL);
    return RB_OK;
}

const rb_xform *rb_dyn_body_pose(const rb_dyn *ws, size_t body)
{
    if (!ws || ws->level < LEVEL_POS || body >= ws->nb)
        return NULL;
    return &ws->kX0[body];
}

const double *rb_dyn_body_velocity(const rb_dyn *ws, size_t body)
{
    if (!ws || ws->level < LEVEL_VEL || body >= ws->nb)
        return NULL;
    return ws->kv[body];
}

const double *rb_dyn_body_acceleration(const rb_dyn *ws, size_t body)
{
    if (!ws || ws->level < LEVEL_ACC || body >= ws->nb)
        return NULL;
    return ws->ka[body];
}

static int check_query(const rb_model *model, const rb_dyn *ws, size_t frame, int level, rb_dyn_rep rep,
                       const char *what, rb_err *err)
{
    int rc = rbd_check(model, ws, err);
    if (rc < 0)
        return rc;
    if (frame >= model->n_frames)
        return rb_err_set(err, RB_EINVAL, "%s: frame %zu out of range", what, frame);
    if (ws->level < level)
        return rb_err_set(err, RB_EINVAL, "%s: rb_dyn_kinematics was not called%s", what,
                          level > LEVEL_POS ? " with velocities" : "");
    if (rep != RB_DYN_BODY && rep != RB_DYN_MIXED && rep != RB_DYN_INERTIAL)
        return rb_err_set(err, RB_EINVAL, "%s: invalid representation", what);
    return RB_OK;
}

int rb_dyn_frame_pose(const rb_model *model, const rb_dyn *ws, size_t frame, rb_xform *out, rb_err *err)
{
    int rc = check_query(model, ws, frame, LEVEL_POS, RB_DYN_BODY, "rb_dyn_frame_pose", err);
    if (rc < 0)
        return rc;
    const rb_frame *fr = &model->frames[frame];
    rb_xform_compose(&ws->kX0[fr->body], &fr->X_body, out);
    return RB_OK;
}

/* The frame's world pose and its BODY velocity and acceleration (from body acceleration `acc`). */
static void frame_state(const rb_model *model, const rb_dyn *ws, size_t frame, double (*acc)[6], rb_xform *X0F,
                        double vF[6], double aF[6])
{
    const rb_frame *fr = &model->frames[frame];
    rb_xform_compose(&ws->kX0[fr->body], &fr->X_body, X0F);
    rb_xform_motion_inv(&fr->X_body, ws->kv[fr->body], vF);
    if (acc)
        rb_xform_motion_inv(&fr->X_body, acc[fr->body], aF);
}

/* A BODY motion vector of the frame in representation rep (velocities; spatial accelerations for BODY and
 * INERTIAL). */
static void body_to_rep(const rb_xform *X0F, const double m[6], rb_dyn_rep rep, double out[6])
{
    if (rep == RB_DYN_BODY)
        memcpy(out, m, 6 * sizeof *out);
    else if (rep == RB_DYN_INERTIAL)
        rb_xform_motion(X0F, m, out);
    else {
        rb_m3_mul_v(X0F->R, m, out);
        rb_m3_mul_v(X0F->R, m + 3, out + 3);
    }
}

int rb_dyn_frame_velocity(const rb_model *model, const rb_dyn *ws, size_t frame, rb_dyn_rep rep, double out[6],
                          rb_err *err)
{
    int rc = check_query(model, ws, frame, LEVEL_VEL, rep, "rb_dyn_frame_velocity", err);
    if (rc < 0)
        return rc;
    rb_xform X0F;
    double vF[6];
    frame_state(model, ws, frame, NULL, &X0F, vF, NULL);
    body_to_rep(&X0F, vF, rep, out);
    return RB_OK;
}

/* d/dt (J nu) from the BODY acceleration aF: BODY and INERTIAL are spatial accelerations; MIXED is the
 * classical acceleration of the origin, R (a_lin + w x v), with R w_dot. */
static void accel_to_rep(const rb_xform *X0F, const double vF[6], const double aF[6], rb_dyn_rep rep, double out[6])
{
    if (rep != RB_DYN_MIXED) {
        body_to_rep(X0F, aF, rep, out);
        return;
    }
    double wv[3], lin[3];
    rb_v3_cross(vF + 3, vF, wv);
    for (int k = 0; k < 3; k++)
        lin[k] = aF[k] + wv[k];
    rb_m3_mul_v(X0F->R, lin, out);
    rb_m3_mul_v(X0F->R, aF + 3, out + 3);
}

int rb_dyn_frame_acceleration(const rb_model *model, const rb_dyn *ws, size_t frame, rb_dyn_rep rep, double out[6],
                              rb_err *err)
{
    int rc = check_query(model, ws, frame, LEVEL_ACC, rep, "rb_dyn_frame_acceleration", err);
    if (rc < 0)
        return rc;
    rb_xform X0F;
    double vF[6], aF[6];
    frame_state(model, ws, frame, ws->ka, &X0F, vF, aF);
    accel_to_rep(&X0F, vF, aF, rep, out);
    return RB_OK;
}

int rb_dyn_frame_jdot_nu(const rb_model *model, const rb_dyn *ws, size_t frame, rb_dyn_rep rep, double out[6],
                         rb_err *err)
{
    int rc = check_query(model, ws, frame, LEVEL_ACC, rep, "rb_dyn_frame_jdot_nu", err);
    if (rc < 0)
        return rc;
    rb_xform X0F;
    double vF[6], aF[6];
    frame_state(model, ws, frame, ws->kab, &X0F, vF, aF);
    accel_to_rep(&X0F, vF, aF, rep, out);
    return RB_OK;
}

int rb_dyn_frame_proper_acceleration(const rb_model *model, const rb_dyn *ws, size_t frame, rb_dyn_rep rep,
                                     double out[6], rb_err *err)
{
    int rc = check_query(model, ws, frame, LEVEL_ACC, rep, "rb_dyn_frame_proper_acceleration", err);
    if (rc < 0)
        return rc;
    rb_xform X0F;
    double vF[6], aF[6], g[3];
    frame_state(model, ws, frame, ws->ka, &X0F, vF, aF);
    accel_to_rep(&X0F, vF, aF, rep, out);
    /* gravity enters once: subtract g in the output's axes */
    if (rep == RB_DYN_BODY) { /* classical linear acceleration in frame axes, then - R^T g */
        double wv[3];
        rb_v3_cross(vF + 3, vF, wv);
        rb_m3t_mul_v(X0F.R, model->gravity, g);
        for (int k = 0; k < 3; k++)
            out[k] += wv[k] - g[k];
    } else {
        for (int k = 0; k < 3; k++)
            out[k] -= model->gravity[k];
    }
    return RB_OK;
}

static int check_mat(const rb_mat *J, size_t rows, size_t cols, const char *what, rb_err *err)
{
    if (!J || !J->data)
        return rb_err_set(err, RB_EINVAL, "%s: NULL matrix", what);
    if (J->rows != rows || J->cols != cols || J->stride < cols)
        return rb_err_set(err, RB_EDIM, "%s: matrix is %zu x %zu, expected %zu x %zu", what, J->rows, J->cols, rows,
                          cols);
    return RB_OK;
}

static void mat_zero(rb_mat *J)
{
    for (size_t r = 0; r < J->rows; r++)
        memset(J->data + r * J->stride, 0, J->cols * sizeof *J->data);
}

/* Column of the Jacobian from a motion vector s_W in world coordinates (about the world origin). */
static void world_col_to_rep(const rb_xform *X0F, const double sW[6], rb_dyn_rep rep, double col[6])
{
    if (rep == RB_DYN_INERTIAL)
        memcpy(col, sW, 6 * sizeof *col);
    else if (rep == RB_DYN_BODY)
        rb_xform_motion_inv(X0F, sW, col);
    else { /* velocity of the point at the frame origin: v + w x p */
        double wp[3];
        rb_v3_cross(sW + 3, X0F->p, wp);
        for (int k = 0; k < 3; k++)
            col[k] = sW[k] + wp[k], col[3 + k] = sW[3 + k];
    }
}

int rb_dyn_frame_jacobian(const rb_model *model, const rb_dyn *ws, size_t frame, rb_dyn_rep rep, rb_mat *J, rb_err *err)
{
    int rc = check_query(model, ws, frame, LEVEL_POS, rep, "rb_dyn_frame_jacobian", err);
    if (rc < 0 || (rc = check_mat(J, 6, ws->nv, "rb_dyn_frame_jacobian", err)) < 0)
        return rc;
    const rb_frame *fr = &model->frames[frame];
    rb_xform X0F;
    rb_xform_compose(&ws->kX0[fr->body], &fr->X_body, &X0F);
    mat_zero(J);
    double sW[6], col[6];
    for (int j = fr->body; j > 0; j = ws->body[j].parent) {
        const dyn_body *b = &ws->body[j];
        if (b->vi < 0)
            continue;
        double S[6] = {0};
        dyn_add_S(b, 1.0, S);
        rb_xform_motion(&ws->kX0[j], S, sW);
        world_col_to_rep(&X0F, sW, rep, col);
        for (int r = 0; r < 6; r++)
            J->data[r * J->stride + (size_t)b->vi] = col[r];
    }
    if (ws->floating)
        for (int k = 0; k < 6; k++) {
            double e[6] = {0};
            e[k] = 1.0;
            rb_xform_motion(&ws->kX0[0], e, sW);
            world_col_to_rep(&X0F, sW, rep, col);
            for (int r = 0; r < 6; r++)
                J->data[r * J->stride + (size_t)k] = col[r];
        }
    return RB_OK;
}

/* ---- centre of mass and centroidal momentum ------------------------------------------------------- */

double rb_dyn_total_mass(const rb_model *model)
{
    double m = 0.0;
    for (size_t i = 0; i < model->n_bodies; i++)
        m += model->bodies[i].inertia[0];
    return m;
}

static int check_state(const rb_model *model, const rb_dyn *ws, int level, const char *what, rb_err *err)
{
    int rc = rbd_check(model, ws, err);
    if (rc < 0)
        return rc;
    if (ws->level < level)
        return rb_err_set(err, RB_EINVAL, "%s: rb_dyn_kinematics was not called%s", what,
                          level > LEVEL_POS ? " with velocities" : "");
    return RB_OK;
}

/* sum m_i c_i and the total mass from the world poses. */
static double com_sum(const rb_dyn *ws, double mc[3])
{
    double m = 0.0, Rh[3];
    mc[0] = mc[1] = mc[2] = 0.0;
    for (size_t i = 0; i < ws->nb; i++) {
        const double *pi = ws->body[i].pi;
        rb_m3_mul_v(ws->kX0[i].R, pi + 1, Rh);
        for (int k = 0; k < 3; k++)
            mc[k] += Rh[k] + pi[0] * ws->kX0[i].p[k];
        m += pi[0];
    }
    return m;
}

/* The CoM and (mass not NULL) the total mass of the workspace's parameters. */
static int com_of(const rb_dyn *ws, double com[3], double *mass, const char *what, rb_err *err)
{
    double mc[3], m = com_sum(ws, mc);
    if (!(m > 0.0))
        return rb_err_set(err, RB_ENUMERIC, "%s: the model has no mass", what);
    for (int k = 0; k < 3; k++)
        com[k] = mc[k] / m;
    if (mass)
        *mass = m;
    return RB_OK;
}

int rb_dyn_com(const rb_model *model, const rb_dyn *ws, double com[3], rb_err *err)
{
    int rc = check_state(model, ws, LEVEL_POS, "rb_dyn_com", err);
    if (rc < 0)
        return rc;
    if (!com)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_com: NULL output");
    return com_of(ws, com, NULL, "rb_dyn_com", err);
}

/* Composite inertias of the state: IC_p += pXi* IC_i iXp (Featherstone table 6.2, first loop). */
static void state_composites(rb_dyn *ws)
{
    for (size_t i = 0; i < ws->nb; i++)
        memcpy(ws->kIC[i], ws->body[i].pi, sizeof ws->kIC[i]);
    for (size_t i = ws->nb; i-- > 1;) {
        double t[10];
        rb_inertia_to_parent(&ws->kXup[i], ws->kIC[i], t);
        double *P = ws->kIC[ws->body[i].parent];
        for (int k = 0; k < 10; k++)
            P[k] += t[k];
    }
}

/* For each velocity coordinate, the momentum IC S of what it moves, in world coordinates about the world
 * origin; calls emit(col, hW) (floating base: the 6 base columns first). */
typedef void (*momentum_col_fn)(void *ctx, size_t col, const double hW[6]);
static void momentum_columns(rb_dyn *ws, momentum_col_fn emit, void *ctx)
{
    double F[6], hW[6];
    state_composites(ws);
    if (ws->floating)
        for (size_t k = 0; k < 6; k++) {
            double e[6] = {0};
            e[k] = 1.0;
            rb_inertia_mul(ws->kIC[0], e, F);
            rb_xform_force(&ws->kX0[0], F, hW);
            emit(ctx, k, hW);
        }
    for (size_t i = 1; i < ws->nb; i++) {
        const dyn_body *b = &ws->body[i];
        if (b->vi < 0)
            continue;
        double S[6] = {0};
        dyn_add_S(b, 1.0, S);
        rb_inertia_mul(ws->kIC[i], S, F);
        rb_xform_force(&ws->kX0[i], F, hW);
        emit(ctx, (size_t)b->vi, hW);
    }
}

typedef struct col_ctx {
    rb_mat *J;
    double com[3], m;
} col_ctx;

static void emit_com_col(void *vctx, size_t col, const double hW[6])
{
    col_ctx *c = vctx;
    for (int r = 0; r < 3; r++)
        c->J->data[r * c->J->stride + col] = hW[r] / c->m;
}

static void emit_cmm_col(void *vctx, size_t col, const double hW[6])
{
    col_ctx *c = vctx;
    double cl[3];
    rb_v3_cross(c->com, hW, cl);
    for (int r = 0; r < 3; r++) {
        c->J->data[r * c->J->stride + col] = hW[r];
        c->J->data[(3 + r) * c->J->stride + col] = hW[3 + r] - cl[r];
    }
}

int rb_dyn_com_jacobian(const rb_model *model, rb_dyn *ws, rb_mat *J, double com[3], rb_err *err)
{
    int rc = check_state(model, ws, LEVEL_POS, "rb_dyn_com_jacobian", err);
    if (rc < 0 || (rc = check_mat(J, 3, ws->nv, "rb_dyn_com_jacobian", err)) < 0)
        return rc;
    col_ctx c = {J, {0, 0, 0}, 0.0};
    /* the workspace's mass, as its momentum columns and CoM (rb_dyn_set_body_inertia): J nu is c_dot */
    if ((rc = com_of(ws, c.com, &c.m, "rb_dyn_com_jacobian", err)) < 0)
        return rc;
    mat_zero(J);
    momentum_columns(ws, emit_com_col, &c);
    if (com)
        memcpy(com, c.com, sizeof c.com);
    return RB_OK;
}

int rb_dyn_centroidal_matrix(const rb_model *model, rb_dyn *ws, rb_mat *A, double com[3], rb_err *err)
{
    int rc = check_state(model, ws, LEVEL_POS, "rb_dyn_centroidal_matrix", err);
    if (rc < 0 || (rc = check_mat(A, 6, ws->nv, "rb_dyn_centroidal_matrix", err)) < 0)
        return rc;
    col_ctx c = {A, {0, 0, 0}, 0.0};
    if ((rc = com_of(ws, c.com, NULL, "rb_dyn_centroidal_matrix", err)) < 0)
        return rc;
    mat_zero(A);
    momentum_columns(ws, emit_cmm_col, &c);
    if (com)
        memcpy(com, c.com, sizeof c.com);
    return RB_OK;
}

int rb_dyn_centroidal_momentum(const rb_model *model, const rb_dyn *ws, double hG[6], double com[3], rb_err *err)
{
    int rc = check_state(model, ws, LEVEL_VEL, "rb_dyn_centroidal_momentum", err);
    if (rc < 0)
        return rc;
    if (!hG)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_centroidal_momentum: NULL output");
    double c[3];
    if ((rc = com_of(ws, c, NULL, "rb_dyn_centroidal_momentum", err)) < 0)
        return rc;
    double h[6] = {0}, hi[6], hW[6], cl[3];
    for (size_t i = 0; i < ws->nb; i++) {
        rb_inertia_mul(ws->body[i].pi, ws->kv[i], hi);
        rb_xform_force(&ws->kX0[i], hi, hW);
        for (int k = 0; k < 6; k++)
            h[k] += hW[k];
    }
    rb_v3_cross(c, h, cl);
    for (int k = 0; k < 3; k++)
        hG[k] = h[k], hG[3 + k] = h[3 + k] - cl[k];
    if (com)
        memcpy(com, c, sizeof c);
    return RB_OK;
}

int rb_dyn_kinetic_energy(const rb_model *model, const rb_dyn *ws, double *T, rb_err *err)
{
    int rc = check_state(model, ws, LEVEL_VEL, "rb_dyn_kinetic_energy", err);
    if (rc < 0)
        return rc;
    if (!T)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_kinetic_energy: NULL output");
    double e = 0.0, hi[6];
    for (size_t i = 0; i < ws->nb; i++) {
        rb_inertia_mul(ws->body[i].pi, ws->kv[i], hi);
        for (int k = 0; k < 6; k++)
            e += ws->kv[i][k] * hi[k];
    }
    *T = 0.5 * e;
    return RB_OK;
}
