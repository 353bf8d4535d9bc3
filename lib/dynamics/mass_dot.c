/* The time derivative of the mass matrix along a motion, by differentiating the CRBA's composite-inertia form.
 *
 * With every quantity in world coordinates, M_ij = S_j^T IC_i S_i for j an ancestor of i (or i itself), where S_i
 * is joint i's motion subspace and IC_i the composite inertia of the subtree of body i. A motion vector fixed in
 * body i moves as S_i_dot = v_i x S_i, and a rigid body's inertia, seen from fixed axes, as I_dot = v x* I - I v x
 * (Featherstone 2008, ch. 2), so
 *     M_ij_dot = (v_j x S_j)^T F + S_j^T (IC_dot_i S_i + IC_i (v_i x S_i)),   F = IC_i S_i,
 *     IC_dot_i = sum over the subtree k of (v_k x* I_k - I_k v_k x),
 * a scalar, evaluated in any coordinates: here body coordinates, carried up the chain as the CRBA carries F. The
 * floating base's six columns are the base body's axes (S_0 = 1), which move with v_0. M depends only on the joint
 * positions (the base twist is body-fixed), so the base twist cancels out of the result (the tests check it). */
#include <math.h>
#include <string.h>

#include "dyn_internal.h"

/* 6 x 6 motion cross matrix of v = [v_lin; w]: crm(v) m = v x_m m = [[w]x, [v_lin]x; 0, [w]x] m. */
static void crm6(const double v[6], double C[36])
{
    memset(C, 0, 36 * sizeof *C);
    const double *vl = v, *w = v + 3;
    const double W[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0};
    const double V[9] = {0, -vl[2], vl[1], vl[2], 0, -vl[0], -vl[1], vl[0], 0};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            C[6 * i + j] = W[3 * i + j];
            C[6 * i + 3 + j] = V[3 * i + j];
            C[6 * (3 + i) + 3 + j] = W[3 * i + j];
        }
}

/* 6 x 6 rigid-body inertia of pi (columns I e_k). */
static void inertia6(const double pi[10], double I6[36])
{
    for (int k = 0; k < 6; k++) {
        double e[6] = {0}, c[6];
        e[k] = 1.0;
        rb_inertia_mul(pi, e, c);
        for (int r = 0; r < 6; r++)
            I6[6 * r + k] = c[r];
    }
}

/* D, the inertia's rate in the body's coordinates: v x* I - I v x = -(C^T I + I C), C = crm(v). */
static void inertia_rate(const double v[6], const double I6[36], double D[36])
{
    double C[36];
    crm6(v, C);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            double s = 0;
            for (int k = 0; k < 6; k++)
                s += C[6 * k + i] * I6[6 * k + j] + I6[6 * i + k] * C[6 * k + j];
            D[6 * i + j] = -s;
        }
}

/* P += X^T D X with X = iXp (the motion transform from the parent's coordinates into body i's): the congruence
 * that carries a force-from-motion matrix to the parent. */
static void congruence_to_parent_add(const rb_xform *Xup, const double D[36], double P[36])
{
    double X[36], DX[36];
    for (int k = 0; k < 6; k++) {
        double e[6] = {0}, c[6];
        e[k] = 1.0;
        rb_xform_motion_inv(Xup, e, c);
        for (int r = 0; r < 6; r++)
            X[6 * r + k] = c[r];
    }
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            double s = 0;
            for (int k = 0; k < 6; k++)
                s += D[6 * i + k] * X[6 * k + j];
            DX[6 * i + j] = s;
        }
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            double s = 0;
            for (int k = 0; k < 6; k++)
                s += X[6 * k + i] * DX[6 * k + j];
            P[6 * i + j] += s;
        }
}

static void m6v(const double A[36], const double x[6], double out[6])
{
    for (int i = 0; i < 6; i++) {
        double s = 0;
        for (int k = 0; k < 6; k++)
            s += A[6 * i + k] * x[k];
        out[i] = s;
    }
}

static double dot6(const double a[6], const double b[6])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

int rb_dyn_mass_matrix_dot(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, rb_mat *Mdot,
                           rb_err *err)
{
    int rc = rbd_check(model, ws, err);
    if (rc < 0)
        return rc;
    if (!q || !nu || !Mdot || !Mdot->data)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_mass_matrix_dot: NULL q, nu or output");
    if (Mdot->rows != ws->nv || Mdot->cols != ws->nv || Mdot->stride < Mdot->cols)
        return rb_err_set(err, RB_EDIM, "rb_dyn_mass_matrix_dot: matrix is %zu x %zu, expected %zu x %zu", Mdot->rows,
                          Mdot->cols, ws->nv, ws->nv);
    const size_t nb = ws->nb, nv = ws->nv, ld = Mdot->stride;
    const dyn_body *B = ws->body;
    double(*v)[6] = ws->v, (*IC)[10] = ws->IC, (*ICd)[36] = ws->IA, *M = Mdot->data;
    ws->rest_in_place = false; /* v of every body is written */
    ws->rnea_valid = 0;

    /* body twists (body coordinates) and each body's own inertia rate */
    rbd_joint_xforms(ws, q);
    for (size_t i = 0; i < nb; i++) {
        const dyn_body *b = &B[i];
        if (i == 0) {
            for (int k = 0; k < 6; k++)
                v[0][k] = ws->floating ? nu[k] : 0.0;
        } else {
            rb_xform_motion_inv(&ws->Xup[i], v[b->parent], v[i]);
            if (b->vi >= 0)
                dyn_add_S(b, nu[b->vi], v[i]);
        }
        memcpy(IC[i], b->pi, sizeof IC[i]);
        double I6[36];
        inertia6(b->pi, I6);
        inertia_rate(v[i], I6, ICd[i]);
    }
    /* composite inertias and their rates, leaves first */
    for (size_t i = nb; i-- > 1;) {
        int p = B[i].parent;
        if (!B[p].moving)
            continue;
        double t[10];
        rb_inertia_to_parent(&ws->Xup[i], IC[i], t);
        for (int k = 0; k < 10; k++)
            IC[p][k] += t[k];
        congruence_to_parent_add(&ws->Xup[i], ICd[i], ICd[p]);
    }
    for (size_t r = 0; r < nv; r++)
        memset(M + r * ld, 0, nv * sizeof *M);
    double C0[36];
    crm6(v[0], C0);
    if (ws->floating) { /* crm(v0)^T IC_0 + IC_0_dot + IC_0 crm(v0) */
        double I6[36];
        inertia6(IC[0], I6);
        for (int i = 0; i < 6; i++)
            for (int j = i; j < 6; j++) { /* symmetric: one triangle, mirrored */
                double s = ICd[0][6 * i + j];
                for (int k = 0; k < 6; k++)
                    s += C0[6 * k + i] * I6[6 * k + j] + I6[6 * i + k] * C0[6 * k + j];
                M[i * ld + j] = M[j * ld + i] = s;
            }
    }
    for (size_t i = 1; i < nb; i++) {
        const dyn_body *b = &B[i];
        if (b->vi < 0 || !b->moving)
            continue;
        size_t vi = (size_t)b->vi;
        double S[6] = {0}, F[6], G[6], c[6], Hc[6], Y[6], t[6];
        dyn_add_S(b, 1.0, S);
        rb_inertia_mul(IC[i], S, F);
        m6v(ICd[i], S, G);
        rb_cross_motion(v[i], S, c);
        rb_inertia_mul(IC[i], c, Hc);
        M[vi * ld + vi] = 2.0 * dot6(c, F) + dot6(S, G);
        for (int k = 0; k < 6; k++)
            Y[k] = G[k] + Hc[k];
        for (int j = (int)i;;) { /* F and Y carried to each ancestor j as forces */
            rb_xform_force(&ws->Xup[j], F, t);
            memcpy(F, t, sizeof F);
            rb_xform_force(&ws->Xup[j], Y, t);
            memcpy(Y, t, sizeof Y);
            j = B[j].parent;
            if (j == 0) {
                if (ws->floating)
                    for (size_t k = 0; k < 6; k++) { /* S_0 = e_k: Y_k + (v_0 x e_k)^T F */
                        double s = Y[k];
                        for (int r = 0; r < 6; r++)
                            s += C0[6 * r + k] * F[r];
                        M[k * ld + vi] = M[vi * ld + k] = s;
                    }
                break;
            }
            if (B[j].vi >= 0) {
                double Sj[6] = {0}, cj[6];
                dyn_add_S(&B[j], 1.0, Sj);
                rb_cross_motion(v[j], Sj, cj);
                size_t vj = (size_t)B[j].vi;
                M[vi * ld + vj] = M[vj * ld + vi] = dot6(Sj, Y) + dot6(cj, F);
            }
        }
    }
    return RB_OK;
}
