/* The MAP dynamics' rows (roboest/observers.h, rb_map_*): the kinematics of a sample, the Newton-Euler constraint
 * rows and the sensor rows (map_build), and the 6 x 6 spatial matrices they are made of. */
#include <math.h>
#include <string.h>

#include "map_internal.h"

/* ---- 6 x 6 spatial matrices (row-major), roboest/spatial.h's transforms written as matrices ---------------- */

static void skew(const double p[3], double S[9])
{
    S[0] = 0, S[1] = -p[2], S[2] = p[1];
    S[3] = p[2], S[4] = 0, S[5] = -p[0];
    S[6] = -p[1], S[7] = p[0], S[8] = 0;
}

/* Motion vectors from A to B (X the pose of B in A): [[R^T, -R^T [p]x], [0, R^T]]. */
static void motion_inv_mat(const rb_xform *X, double M[36])
{
    double P[9], RtP[9];
    skew(X->p, P);
    rb_m3t_mul(X->R, P, RtP);
    memset(M, 0, 36 * sizeof *M);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            M[6 * i + j] = M[6 * (i + 3) + j + 3] = X->R[3 * j + i];
            M[6 * i + j + 3] = -RtP[3 * i + j];
        }
}

/* Force vectors from B to A: [[R, 0], [[p]x R, R]]. */
void map_force_mat(const rb_xform *X, double M[36])
{
    double P[9], PR[9];
    skew(X->p, P);
    rb_m3_mul(P, X->R, PR);
    memset(M, 0, 36 * sizeof *M);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            M[6 * i + j] = M[6 * (i + 3) + j + 3] = X->R[3 * i + j];
            M[6 * (i + 3) + j] = PR[3 * i + j];
        }
}

/* Force vectors from A to B: [[R^T, 0], [-R^T [p]x, R^T]]. */
void map_force_inv_mat(const rb_xform *X, double M[36])
{
    double P[9], RtP[9];
    skew(X->p, P);
    rb_m3t_mul(X->R, P, RtP);
    memset(M, 0, 36 * sizeof *M);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            M[6 * i + j] = M[6 * (i + 3) + j + 3] = X->R[3 * j + i];
            M[6 * (i + 3) + j] = -RtP[3 * i + j];
        }
}

void map_mat6_mul(const double A[36], const double B[36], double C[36])
{
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            double s = 0.0;
            for (int k = 0; k < 6; k++)
                s += A[6 * i + k] * B[6 * k + j];
            C[6 * i + j] = s;
        }
}

/* Spatial inertia: [[m 1, -[h]x], [[h]x, I]]. */
static void inertia_mat(const double pi[10], double M[36])
{
    double H[9];
    skew(pi + 1, H);
    memset(M, 0, 36 * sizeof *M);
    for (int i = 0; i < 3; i++) {
        M[6 * i + i] = pi[0];
        for (int j = 0; j < 3; j++)
            M[6 * i + j + 3] = -H[3 * i + j], M[6 * (i + 3) + j] = H[3 * i + j];
    }
    const double In[9] = {pi[4], pi[5], pi[6], pi[5], pi[7], pi[8], pi[6], pi[8], pi[9]};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            M[6 * (i + 3) + j + 3] = In[3 * i + j];
}

/* ---- kinematics and rows --------------------------------------------------------------------------------------- */

static void kinematics(rb_map *M, const double *s, const double *sd)
{
    const rb_model *m = M->m;
    memset(M->vrel[0], 0, sizeof M->vrel[0]);
    rb_m3_identity(M->R0[0]);
    for (size_t b = 1; b < M->nb; b++) {
        const rb_body *B = &m->bodies[b];
        rb_xform J;
        rb_xform_identity(&J);
        memset(M->S[b], 0, sizeof M->S[b]);
        double q = 0.0, qd = 0.0;
        if (B->type == RB_JOINT_REVOLUTE) {
            q = s[B->dof], qd = sd[B->dof];
            rb_m3_from_axis_angle(B->axis, q, J.R);
            memcpy(M->S[b] + 3, B->axis, sizeof B->axis);
        } else if (B->type == RB_JOINT_PRISMATIC) {
            q = s[B->dof], qd = sd[B->dof];
            for (int i = 0; i < 3; i++)
                J.p[i] = B->axis[i] * q;
            memcpy(M->S[b], B->axis, sizeof B->axis);
        }
        rb_xform_compose(&B->X_parent, &J, &M->Xup[b]);
        rb_m3_mul(M->R0[B->parent], M->Xup[b].R, M->R0[b]);
        rb_xform_motion_inv(&M->Xup[b], M->vrel[B->parent], M->vrel[b]);
        for (int i = 0; i < 6; i++)
            M->vrel[b][i] += M->S[b][i] * qd;
    }
}

/* Velocities from the base rate w0, and the velocity-product accelerations v x S qd. */
static void velocities(rb_map *M, const double *sd)
{
    const rb_model *m = M->m;
    memset(M->v[0], 0, sizeof M->v[0]);
    memcpy(M->v[0] + 3, M->w0, sizeof M->w0);
    memset(M->c[0], 0, sizeof M->c[0]);
    for (size_t b = 1; b < M->nb; b++) {
        const rb_body *B = &m->bodies[b];
        double qd = B->dof >= 0 ? sd[B->dof] : 0.0, Sq[6];
        rb_xform_motion_inv(&M->Xup[b], M->v[B->parent], M->v[b]);
        for (int i = 0; i < 6; i++)
            M->v[b][i] += M->S[b][i] * qd, Sq[i] = M->S[b][i] * qd;
        rb_cross_motion(M->v[b], Sq, M->c[b]);
    }
}

/* Floating base: w0 by weighted least squares over the finite gyroscope elements. */
static bool base_rate(rb_map *M, const double *gyro)
{
    memset(M->w0, 0, sizeof M->w0);
    if (!M->floating || M->cfg.n_gyro == 0)
        return !M->floating;
    double H[9] = {0}, r[3] = {0};
    for (size_t i = 0; i < M->cfg.n_gyro; i++) {
        int b = M->gyro_body[i];
        double A[9]; /* y = A w0 + c: A = R_bF^T R0_b^T */
        for (int x = 0; x < 3; x++)
            for (int y = 0; y < 3; y++) {
                double s = 0.0;
                for (int k = 0; k < 3; k++)
                    s += M->gyro_X[i].R[3 * k + x] * M->R0[b][3 * y + k];
                A[3 * x + y] = s;
            }
        double cw[3];
        rb_m3t_mul_v(M->gyro_X[i].R, M->vrel[b] + 3, cw);
        for (int x = 0; x < 3; x++) {
            double y = gyro[3 * i + x];
            if (!isfinite(y))
                continue;
            double w = 1.0 / M->cfg.var_gyro[3 * i + x];
            for (int a = 0; a < 3; a++) {
                r[a] += w * A[3 * x + a] * (y - cw[x]);
                for (int bb = 0; bb < 3; bb++)
                    H[3 * a + bb] += w * A[3 * x + a] * A[3 * x + bb];
            }
        }
    }
    double det =
        H[0] * (H[4] * H[8] - H[5] * H[7]) - H[1] * (H[3] * H[8] - H[5] * H[6]) + H[2] * (H[3] * H[7] - H[4] * H[6]);
    double tr = H[0] + H[4] + H[8];
    if (!(fabs(det) > 1e-12 * tr * tr * tr) || tr == 0.0)
        return false;
    double Inv[9] = {H[4] * H[8] - H[5] * H[7], H[2] * H[7] - H[1] * H[8], H[1] * H[5] - H[2] * H[4],
                     H[5] * H[6] - H[3] * H[8], H[0] * H[8] - H[2] * H[6], H[2] * H[3] - H[0] * H[5],
                     H[3] * H[7] - H[4] * H[6], H[1] * H[6] - H[0] * H[7], H[0] * H[4] - H[1] * H[3]};
    for (int a = 0; a < 3; a++)
        M->w0[a] = (Inv[3 * a] * r[0] + Inv[3 * a + 1] * r[1] + Inv[3 * a + 2] * r[2]) / det;
    return true;
}

static size_t row_new(rb_map *M, double rhs, double w, bool sensor)
{
    map_rows *R = &M->rows;
    size_t r = R->n++;
    R->nz[r] = 0, R->rhs[r] = rhs, R->w[r] = w, R->sensor[r] = sensor;
    return r;
}

static void row_add(rb_map *M, size_t r, long g, double v)
{
    map_rows *R = &M->rows;
    if (v == 0.0 || g < 0)
        return;
    size_t k = r * R->maxnz + (size_t)R->nz[r]++;
    R->col[k] = (int)g, R->val[k] = v;
}

static void constraint_rows(rb_map *M)
{
    const rb_model *m = M->m;
    double wd = 1.0 / M->cfg.var_dyn, X[36], I6[36], F[36];
    if (M->floating) { /* the base: -I a_0 + f_x_0 - sum X* f_c = v x* I v */
        double Iv[6], b[6];
        rb_inertia_mul(m->bodies[0].inertia, M->v[0], Iv);
        rb_cross_force(M->v[0], Iv, b);
        inertia_mat(m->bodies[0].inertia, I6);
        for (int r = 0; r < 6; r++) {
            size_t row = row_new(M, b[r], wd, false);
            for (int k = 0; k < 6; k++)
                row_add(M, row, M->ga[0] + k, -I6[6 * r + k]);
            row_add(M, row, M->gfx[0] + r, 1.0);
            for (size_t c = 1; c < M->nb; c++) {
                if (M->parent[c] != 0)
                    continue;
                map_force_mat(&M->Xup[c], F);
                for (int k = 0; k < 6; k++)
                    row_add(M, row, M->gf[c] + k, -F[6 * r + k]);
            }
        }
    }
    for (size_t i = 1; i < M->nb; i++) {
        int p = M->parent[i];
        motion_inv_mat(&M->Xup[i], X);
        double Xa0[6] = {0};
        if (M->ga[p] < 0)
            rb_xform_motion_inv(&M->Xup[i], M->a0, Xa0);
        for (int r = 0; r < 6; r++) { /* a_i - X a_p - S qdd = v x S qd (+ X a_0 for a fixed parent) */
            size_t row = row_new(M, M->c[i][r] + Xa0[r], wd, false);
            row_add(M, row, M->ga[i] + r, 1.0);
            for (int k = 0; M->ga[p] >= 0 && k < 6; k++)
                row_add(M, row, M->ga[p] + k, -X[6 * r + k]);
            row_add(M, row, M->gqdd[i], -M->S[i][r]);
        }
        double Iv[6], b[6];
        rb_inertia_mul(m->bodies[i].inertia, M->v[i], Iv);
        rb_cross_force(M->v[i], Iv, b);
        inertia_mat(m->bodies[i].inertia, I6);
        for (int r = 0; r < 6; r++) { /* f_i - I a_i + f_x_i - sum X* f_c = v x* I v */
            size_t row = row_new(M, b[r], wd, false);
            row_add(M, row, M->gf[i] + r, 1.0);
            for (int k = 0; k < 6; k++)
                row_add(M, row, M->ga[i] + k, -I6[6 * r + k]);
            row_add(M, row, M->gfx[i] + r, 1.0);
            for (size_t c = i + 1; c < M->nb; c++) {
                if (M->parent[c] != (int)i)
                    continue;
                map_force_mat(&M->Xup[c], F);
                for (int k = 0; k < 6; k++)
                    row_add(M, row, M->gf[c] + k, -F[6 * r + k]);
            }
        }
        if (M->gtau[i] >= 0) { /* tau - S^T f = 0 */
            size_t row = row_new(M, 0.0, wd, false);
            row_add(M, row, M->gtau[i], 1.0);
            for (int k = 0; k < 6; k++)
                row_add(M, row, M->gf[i] + k, -M->S[i][k]);
        }
    }
}

static void sensor_rows(rb_map *M, const rb_map_input *in)
{
    const rb_map_config *c = &M->cfg;
    const rb_model *m = M->m;
    size_t dropped = 0;
    for (size_t i = 0; i < c->n_ft; i++)
        for (int r = 0; r < 6; r++) {
            double y = in->ft[6 * i + r];
            if (!isfinite(y)) {
                dropped++;
                continue;
            }
            size_t row = row_new(M, y, 1.0 / c->var_ft[6 * i + r], true);
            for (int k = 0; k < 6; k++)
                row_add(M, row, M->gf[M->ft_body[i]] + k, M->ft_M[36 * i + 6 * r + k]);
        }
    for (size_t i = 0; i < c->n_acc; i++) {
        int b = M->acc_body[i];
        double X[36], vF[6], cor[3], aF[6] = {0};
        motion_inv_mat(&M->acc_X[i], X);
        rb_xform_motion_inv(&M->acc_X[i], M->v[b], vF);
        rb_v3_cross(vF + 3, vF, cor);
        if (M->ga[b] < 0)
            rb_xform_motion_inv(&M->acc_X[i], M->a0, aF);
        for (int r = 0; r < 3; r++) {
            double y = in->acc[3 * i + r];
            if (!isfinite(y)) {
                dropped++;
                continue;
            }
            size_t row = row_new(M, y - cor[r] - aF[r], 1.0 / c->var_acc[3 * i + r], true);
            for (int k = 0; M->ga[b] >= 0 && k < 6; k++)
                row_add(M, row, M->ga[b] + k, X[6 * r + k]);
        }
    }
    for (size_t i = 0; i < c->n_gyro; i++) { /* no unknown of d: the residual only */
        double wF[3];
        rb_m3t_mul_v(M->gyro_X[i].R, M->v[M->gyro_body[i]] + 3, wF);
        for (int r = 0; r < 3; r++) {
            double y = in->gyro[3 * i + r];
            if (!isfinite(y)) {
                dropped++;
                continue;
            }
            row_new(M, y - wF[r], 1.0 / c->var_gyro[3 * i + r], true);
        }
    }
    for (size_t j = 0; c->ddq && j < m->n_dofs; j++) {
        double y = in->s_ddot[j];
        if (!isfinite(y)) {
            dropped++;
            continue;
        }
        size_t row = row_new(M, y, 1.0 / c->var_ddq[j], true);
        row_add(M, row, M->gqdd[m->dof_body[j]], 1.0);
    }
    for (size_t i = 0; i < c->n_tau; i++) {
        double y = in->tau[i];
        if (!isfinite(y)) {
            dropped++;
            continue;
        }
        size_t row = row_new(M, y, 1.0 / c->var_tau[i], true);
        row_add(M, row, M->gtau[m->dof_body[c->tau[i]]], 1.0);
    }
    for (size_t i = 0; i < c->n_known; i++)
        for (int r = 0; r < 6; r++) {
            double y = in->known[6 * i + r];
            if (!isfinite(y)) {
                dropped++;
                continue;
            }
            size_t row = row_new(M, y, 1.0 / c->var_known[6 * i + r], true);
            for (int k = 0; k < 6; k++)
                row_add(M, row, M->gfx[M->known_body[i]] + k, M->known_M[36 * i + 6 * r + k]);
        }
    M->dropped = dropped;
}

/* The rows of a sample (q, qd finite). Returns false when a floating base's rate had no finite gyroscope. */
bool map_build(rb_map *M, const rb_map_input *in)
{
    M->rows.n = 0;
    kinematics(M, in->s, in->s_dot);
    bool rate = base_rate(M, in->gyro);
    velocities(M, in->s_dot);
    constraint_rows(M);
    sensor_rows(M, in);
    return rate;
}
