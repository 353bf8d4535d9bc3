/* Inverse dynamics: RNEA with external wrenches, bias and gravity forces, joint and FT wrenches, and the
 * inertial-parameter regressor. */
#include <math.h>
#include <string.h>

#include "dyn_internal.h"

/* Fixed base: the bodies that do not move have v = 0, a = iX0 (-g) and f = I a, whatever the state; a STILL body's
 * wrench (nothing below it moves) also has its subtree's added. Computed once per gravity, by the same operations
 * in the same order as the passes below (the same bits), from the constant transforms of ws->Xup. */
static void rest_prepare(rb_dyn *ws, const double g[3])
{
    const dyn_body *B = ws->body;
    double(*a)[6] = ws->a_rest, (*f)[6] = ws->f_rest, t[6];
    if (ws->rest_valid && memcmp(ws->g_rest, g, sizeof ws->g_rest) == 0)
        return;
    for (int k = 0; k < 6; k++)
        a[0][k] = k < 3 ? 0.0 - g[k] : 0.0;
    rb_inertia_mul(B[0].pi, a[0], f[0]);
    for (size_t i = 1; i < ws->nb; i++)
        if (ws->rest[i] != REST_MOVING) {
            rb_xform_motion_inv(&ws->Xup[i], a[B[i].parent], a[i]);
            rb_inertia_mul(B[i].pi, a[i], f[i]);
        }
    for (size_t i = ws->nb; i-- > 1;)
        if (ws->rest[i] == REST_STILL && ws->rest[B[i].parent] == REST_STILL) {
            rb_xform_force(&ws->Xup[i], f[i], t);
            for (int k = 0; k < 6; k++)
                f[B[i].parent][k] += t[k];
        }
    memcpy(ws->g_rest, g, sizeof ws->g_rest);
    ws->rest_valid = true;
    ws->rest_in_place = false;
}

/* Forward pass of the RNEA (Featherstone table 5.1) with gravity as the base's proper acceleration
 * a_0 = -g: Xup, v, a; and, if with_f, f_i = I_i a_i + v_i x* I_i v_i. nu, nu_dot NULL: zero. skip_rest (fixed
 * base, with_f): the bodies that do not move take their constant v, a, f (rest_prepare), copied only when another
 * pass may have overwritten them, a PATH body's wrench every time (the backward pass adds to it). */
static void rnea_forward(rb_dyn *ws, const double g[3], const double *q, const double *nu, const double *nu_dot,
                         rb_xform *X0base, bool with_f, bool skip_rest)
{
    const size_t nb = ws->nb;
    const dyn_body *B = ws->body;
    rb_xform *Xup = ws->Xup;
    double(*v)[6] = ws->v, (*a)[6] = ws->a, (*f)[6] = ws->f;
    double gB[3], Iv[6], vIv[6];

    rbd_joint_xforms(ws, q);
    if (ws->floating) {
        dyn_base_pose(q, X0base);
        rb_m3t_mul_v(X0base->R, g, gB);
    } else {
        rb_xform_identity(X0base);
        memcpy(gB, g, sizeof gB);
    }
    for (int k = 0; k < 6; k++) {
        v[0][k] = ws->floating && nu ? nu[k] : 0.0;
        a[0][k] = ws->floating && nu_dot ? nu_dot[k] : 0.0;
    }
    for (int k = 0; k < 3; k++)
        a[0][k] -= gB[k];
    if (skip_rest)
        rest_prepare(ws, g);
    else
        ws->rest_in_place = false;
    for (size_t i = 0; i < nb; i++) {
        const dyn_body *b = &B[i];
        if (skip_rest && ws->rest[i] != REST_MOVING) {
            if (!ws->rest_in_place) {
                memset(v[i], 0, sizeof v[i]);
                memcpy(a[i], ws->a_rest[i], sizeof a[i]);
                memcpy(f[i], ws->f_rest[i], sizeof f[i]);
            } else if (ws->rest[i] == REST_PATH) {
                memcpy(f[i], ws->f_rest[i], sizeof f[i]);
            }
            continue;
        }
        if (i > 0) {
            int p = b->parent;
            if (nu)
                rb_xform_motion_inv(&Xup[i], v[p], v[i]); /* v_i = iXp v_p + S qd */
            else
                memset(v[i], 0, sizeof v[i]);
            rb_xform_motion_inv(&Xup[i], a[p], a[i]); /* a_i = iXp a_p + S qdd + v_i x S qd */
            if (b->vi >= 0) {
                if (nu) {
                    double qd = nu[b->vi], cS[6];
                    dyn_add_S(b, qd, v[i]);
                    dyn_cross_S(b, v[i], qd, cS);
                    for (int k = 0; k < 6; k++)
                        a[i][k] += cS[k];
                }
                if (nu_dot)
                    dyn_add_S(b, nu_dot[b->vi], a[i]);
            }
        }
        if (!with_f)
            continue;
        rb_inertia_mul(b->pi, a[i], f[i]); /* f_i = I_i a_i + v_i x* I_i v_i */
        if (nu) {
            rb_inertia_mul(b->pi, v[i], Iv);
            rb_cross_force(v[i], Iv, vIv);
            for (int k = 0; k < 6; k++)
                f[i][k] += vIv[k];
        }
    }
}

/* Backward pass: tau_i = S_i^T f_i, f_p += pXi* f_i; floating base: the base wrench f_0 first. skip_rest: a STILL
 * body's wrench is final already (rest_prepare); only one under a PATH body is carried to it. */
static void rnea_backward(rb_dyn *ws, double *tau, bool skip_rest)
{
    const dyn_body *B = ws->body;
    double(*f)[6] = ws->f, t[6];
    for (size_t i = ws->nb; i-- > 1;) {
        const dyn_body *b = &B[i];
        if (skip_rest && ws->rest[i] == REST_STILL && ws->rest[b->parent] == REST_STILL)
            continue;
        if (b->vi >= 0)
            tau[b->vi] = dyn_St(b, f[i]);
        rb_xform_force(&ws->Xup[i], f[i], t);
        double *fp = f[b->parent];
        for (int k = 0; k < 6; k++)
            fp[k] += t[k];
    }
    if (ws->floating)
        memcpy(tau, f[0], 6 * sizeof *tau);
}

static void apply_ext(const rb_model *model, rb_dyn *ws, const rb_xform *X0base, const rb_ext_wrench *ext, size_t n_ext,
                      double (*target)[6])
{
    double w[6];
    for (size_t e = 0; e < n_ext; e++) {
        rbd_ext_to_body(model, ws, ws->Xup, X0base, &ext[e], w);
        double *t = target[model->frames[ext[e].frame].body];
        for (int k = 0; k < 6; k++)
            t[k] -= w[k];
    }
}

int rbd_rnea(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, const double *nu_dot,
             const rb_ext_wrench *ext, size_t n_ext, double *tau)
{
    rb_xform X0base;
    bool skip_rest = !ws->floating; /* unless a wrench acts on a body that does not move */
    for (size_t e = 0; e < n_ext && skip_rest; e++)
        skip_rest = ws->body[model->frames[ext[e].frame].body].moving;
    rnea_forward(ws, model->gravity, q, nu, nu_dot, &X0base, true, skip_rest);
    apply_ext(model, ws, &X0base, ext, n_ext, ws->f);
    rnea_backward(ws, tau, skip_rest);
    ws->rest_in_place = skip_rest;
    return RB_OK;
}

int rb_dyn_rnea(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, const double *nu_dot,
                const rb_ext_wrench *ext, size_t n_ext, double *tau, rb_err *err)
{
    int rc = rbd_check_call(model, ws, q, tau, ext, n_ext, "rb_dyn_rnea", err);
    if (rc < 0)
        return rc;
    rbd_rnea(model, ws, q, nu, nu_dot, ext, n_ext, tau);
    ws->rnea_valid = 1;
    return RB_OK;
}

int rb_dyn_bias_forces(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, double *h, rb_err *err)
{
    int rc = rbd_check_call(model, ws, q, h, NULL, 0, "rb_dyn_bias_forces", err);
    if (rc < 0)
        return rc;
    rbd_rnea(model, ws, q, nu, NULL, NULL, 0, h);
    ws->rnea_valid = 1;
    return RB_OK;
}

int rb_dyn_gravity_forces(const rb_model *model, rb_dyn *ws, const double *q, double *g, rb_err *err)
{
    int rc = rbd_check_call(model, ws, q, g, NULL, 0, "rb_dyn_gravity_forces", err);
    if (rc < 0)
        return rc;
    rbd_rnea(model, ws, q, NULL, NULL, NULL, 0, g);
    ws->rnea_valid = 1;
    return RB_OK;
}

int rb_dyn_joint_wrench(const rb_model *model, const rb_dyn *ws, size_t body, double out[6], rb_err *err)
{
    int rc = rbd_check(model, ws, err);
    if (rc < 0)
        return rc;
    if (!out || body >= ws->nb)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_joint_wrench: body %zu out of range", body);
    if (!ws->rnea_valid)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_joint_wrench: no inverse dynamics computed");
    memcpy(out, ws->f[body], 6 * sizeof *out);
    return RB_OK;
}

/* Pose of body `other` in body `c`, for two bodies joined by a fixed joint (either one the tree parent). */
static bool neighbour_pose(const rb_dyn *ws, int c, int other, rb_xform *out)
{
    if (other == c)
        rb_xform_identity(out);
    else if (ws->body[c].parent == other)
        rb_xform_inverse(&ws->Xup[c], out);
    else if (ws->body[other].parent == c)
        *out = ws->Xup[other];
    else
        return false;
    return true;
}

int rb_dyn_ft_wrenches(const rb_model *model, const rb_dyn *ws, double *out, rb_err *err)
{
    int rc = rbd_check(model, ws, err);
    if (rc < 0)
        return rc;
    if (!out && model->n_ft)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_ft_wrenches: NULL output");
    if (!ws->rnea_valid)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_ft_wrenches: no inverse dynamics computed");
    for (size_t s = 0; s < model->n_ft; s++) {
        const rb_ft_sensor *ft = &model->ft[s];
        int c = ft->child_body, p = ft->parent_body;
        double w[6]; /* wrench of the parent half on the child half, child body coordinates */
        if (c <= 0 || (size_t)c >= ws->nb || p < 0 || (size_t)p >= ws->nb || ft->frame < 0 ||
            (size_t)ft->frame >= model->n_frames)
            return rb_err_set(err, RB_EINVAL, "FT sensor %s: invalid body or frame index", ft->name);
        if (ws->body[c].parent == p) {
            memcpy(w, ws->f[c], sizeof w);
        } else if (ws->body[p].parent == c) { /* joint reversed by re-rooting: f_p is the child half's on p */
            double m[6] = {-ws->f[p][0], -ws->f[p][1], -ws->f[p][2], -ws->f[p][3], -ws->f[p][4], -ws->f[p][5]};
            rb_xform_force(&ws->Xup[p], m, w);
        } else {
            return rb_err_set(err, RB_EINVAL, "FT sensor %s: bodies %d and %d are not joined", ft->name, c, p);
        }
        const rb_frame *fr = &model->frames[ft->frame];
        rb_xform cXb, cXF;
        if (!neighbour_pose(ws, c, fr->body, &cXb))
            return rb_err_set(err, RB_EINVAL, "FT sensor %s: frame %s is on neither side of the joint", ft->name,
                              fr->name);
        rb_xform_compose(&cXb, &fr->X_body, &cXF);
        rb_xform_force_inv(&cXF, w, out + 6 * s);
        if (ft->sign < 0)
            for (int k = 0; k < 6; k++)
                out[6 * s + k] = -out[6 * s + k];
    }
    return RB_OK;
}

/* ---- regressor ---------------------------------------------------------------------------------------- */

/* Columns of I(pi) m as a linear map of pi = [m, h, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]: K[c] is column c. */
static void inertia_basis(const double m[6], double K[10][6])
{
    const double *v = m, *w = m + 3;
    memset(K, 0, 10 * sizeof K[0]);
    /* linear: m v - h x w = m v + w x h;  angular: I w + h x v = I w - v x h */
    K[0][0] = v[0], K[0][1] = v[1], K[0][2] = v[2];
    for (int c = 0; c < 3; c++) {
        double e[3] = {0, 0, 0}, t[3];
        e[c] = 1.0;
        rb_v3_cross(w, e, t);
        K[1 + c][0] = t[0], K[1 + c][1] = t[1], K[1 + c][2] = t[2];
        rb_v3_cross(v, e, t);
        K[1 + c][3] = -t[0], K[1 + c][4] = -t[1], K[1 + c][5] = -t[2];
    }
    K[4][3] = w[0];                 /* Ixx */
    K[5][3] = w[1], K[5][4] = w[0]; /* Ixy */
    K[6][3] = w[2], K[6][5] = w[0]; /* Ixz */
    K[7][4] = w[1];                 /* Iyy */
    K[8][4] = w[2], K[8][5] = w[1]; /* Iyz */
    K[9][5] = w[2];                 /* Izz */
}

void rbd_regressor_block(const double v[6], const double a[6], double F[10][6])
{
    double Ka[10][6], Kv[10][6], t[6];
    inertia_basis(a, Ka);
    inertia_basis(v, Kv);
    for (int c = 0; c < 10; c++) {
        rb_cross_force(v, Kv[c], t);
        for (int k = 0; k < 6; k++)
            F[c][k] = Ka[c][k] + t[k];
    }
}

void rbd_regressor_project(const rb_dyn *ws, size_t i, double F[10][6], double *Y, size_t stride, size_t col)
{
    double t[6];
    for (int j = (int)i;; j = ws->body[j].parent) {
        const dyn_body *b = &ws->body[j];
        if (j == 0) {
            if (ws->floating)
                for (int k = 0; k < 6; k++)
                    for (int c = 0; c < 10; c++)
                        Y[(size_t)k * stride + col + (size_t)c] = F[c][k];
            return;
        }
        if (b->vi >= 0)
            for (int c = 0; c < 10; c++)
                Y[(size_t)b->vi * stride + col + (size_t)c] = dyn_St(b, F[c]);
        if (b->parent == 0 && !ws->floating)
            return; /* the fixed base takes no row */
        for (int c = 0; c < 10; c++) {
            rb_xform_force(&ws->Xup[j], F[c], t);
            memcpy(F[c], t, sizeof t);
        }
    }
}

int rb_dyn_regressor(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, const double *nu_dot,
                     rb_mat *Y, rb_err *err)
{
    int rc = rbd_check(model, ws, err);
    if (rc < 0)
        return rc;
    if (!q || !Y || !Y->data)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_regressor: NULL q or output");
    if (Y->rows != ws->nv || Y->cols != 10 * ws->nb || Y->stride < Y->cols)
        return rb_err_set(err, RB_EDIM, "rb_dyn_regressor: matrix is %zu x %zu, expected %zu x %zu", Y->rows, Y->cols,
                          ws->nv, 10 * ws->nb);
    rb_xform X0base;
    rnea_forward(ws, model->gravity, q, nu, nu_dot, &X0base, false, false);
    for (size_t r = 0; r < Y->rows; r++)
        memset(Y->data + r * Y->stride, 0, Y->cols * sizeof *Y->data);
    double F[10][6];
    for (size_t i = 0; i < ws->nb; i++) {
        /* f_i = I_i a_i + v_i x* I_i v_i = (K(a_i) + v_i x* K(v_i)) pi_i; its share of every ancestor's tau */
        rbd_regressor_block(ws->v[i], ws->a[i], F);
        rbd_regressor_project(ws, i, F, Y->data, Y->stride, 10 * i);
    }
    ws->rnea_valid = 0;
    return RB_OK;
}

void rb_dyn_inertial_params(const rb_model *model, double *pi)
{
    for (size_t i = 0; i < model->n_bodies; i++)
        memcpy(pi + 10 * i, model->bodies[i].inertia, 10 * sizeof *pi);
}
