/* Mass matrix (CRBA), forward dynamics (ABA; CRBA + Cholesky) and forward dynamics with rigid contacts. */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "dyn_internal.h"

/* ---- 6 x 6 spatial inertias (articulated bodies) ------------------------------------------------------
 * Row-major 6 x 6 [[A, B], [B^T, C]] mapping a twist [v; w] to momentum [l; k]; for a rigid body A = m 1,
 * B = -[h]x, C = I (spatial.h). */

static void ia_from_pi(const double pi[10], double Ia6[36])
{
    const double m = pi[0], hx = pi[1], hy = pi[2], hz = pi[3];
    const double M[36] = {m,   0,   0,   0,     hz,    -hy,   /* */
                          0,   m,   0,   -hz,   0,     hx,    /* */
                          0,   0,   m,   hy,    -hx,   0,     /* */
                          0,   -hz, hy,  pi[4], pi[5], pi[6], /* */
                          hz,  0,   -hx, pi[5], pi[7], pi[8], /* */
                          -hy, hx,  0,   pi[6], pi[8], pi[9]};
    memcpy(Ia6, M, sizeof M);
}

/* out = R X R^T for the 3x3 block of I at (r0, c0). */
static void block_rot(const double R[9], const double Ia6[36], int r0, int c0, double out[9])
{
    double RX[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            RX[3 * i + j] = R[3 * i] * Ia6[6 * r0 + c0 + j] + R[3 * i + 1] * Ia6[6 * (r0 + 1) + c0 + j] +
                            R[3 * i + 2] * Ia6[6 * (r0 + 2) + c0 + j];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = RX[3 * i] * R[3 * j] + RX[3 * i + 1] * R[3 * j + 1] + RX[3 * i + 2] * R[3 * j + 2];
}

/* P += pX*_i I iXp, X = parent_X_i = {R, p} (the congruence that carries a spatial inertia to the parent): with
 * [p]x = P, rotating gives A', B', C' (R . R^T), then
 *     A'' = A',  B'' = B' - A' P,  C'' = C' + P B'' + (P B')^T. */
static void ia_to_parent_add(const rb_xform *X, const double Ia6[36], double P[36])
{
    double A[9], B[9], C[9], B2[9], PB2[9], PB[9];
    const double *p = X->p;
    block_rot(X->R, Ia6, 0, 0, A);
    block_rot(X->R, Ia6, 0, 3, B);
    block_rot(X->R, Ia6, 3, 3, C);
    for (int i = 0; i < 3; i++) { /* row i of A' P is (row i of A') x p */
        double t[3];
        rb_v3_cross(A + 3 * i, p, t);
        for (int j = 0; j < 3; j++)
            B2[3 * i + j] = B[3 * i + j] - t[j];
    }
    for (int j = 0; j < 3; j++) { /* column j of P X is p x (column j of X) */
        double b2[3] = {B2[j], B2[3 + j], B2[6 + j]}, b[3] = {B[j], B[3 + j], B[6 + j]}, t2[3], t[3];
        rb_v3_cross(p, b2, t2);
        rb_v3_cross(p, b, t);
        for (int i = 0; i < 3; i++)
            PB2[3 * i + j] = t2[i], PB[3 * i + j] = t[i];
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            P[6 * i + j] += A[3 * i + j];
            P[6 * i + 3 + j] += B2[3 * i + j];
            P[6 * (3 + j) + i] += B2[3 * i + j];
            P[6 * (3 + i) + 3 + j] += C[3 * i + j] + PB2[3 * i + j] + PB[3 * j + i];
        }
}

static void m6_mul_v(const double Ia6[36], const double x[6], double out[6])
{
    for (int i = 0; i < 6; i++)
        out[i] = Ia6[6 * i] * x[0] + Ia6[6 * i + 1] * x[1] + Ia6[6 * i + 2] * x[2] + Ia6[6 * i + 3] * x[3] +
                 Ia6[6 * i + 4] * x[4] + Ia6[6 * i + 5] * x[5];
}

int rb_dyn_mass_matrix(const rb_model *model, rb_dyn *ws, const double *q, rb_mat *M, rb_err *err)
{
    int rc = rbd_check(model, ws, err);
    if (rc < 0)
        return rc;
    if (!q || !M || !M->data)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_mass_matrix: NULL q or output");
    if (M->rows != ws->nv || M->cols != ws->nv || M->stride < M->cols)
        return rb_err_set(err, RB_EDIM, "rb_dyn_mass_matrix: matrix is %zu x %zu, expected %zu x %zu", M->rows, M->cols,
                          ws->nv, ws->nv);
    rbd_crba_folded(ws, q, M->data, M->stride);
    ws->rnea_valid = 0;
    return RB_OK;
}

/* ---- ABA ------------------------------------------------------------------------------------------------- */

int rb_dyn_aba(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, const double *tau,
               const rb_ext_wrench *ext, size_t n_ext, double *nu_dot, rb_err *err)
{
    int rc = rbd_check_call(model, ws, q, nu_dot, ext, n_ext, "rb_dyn_aba", err);
    if (rc < 0)
        return rc;
    const size_t nb = ws->nb;
    const dyn_body *B = ws->body;
    const bool fb = ws->floating;
    rb_xform *Xup = ws->Xup, X0base;
    double(*v)[6] = ws->v, (*a)[6] = ws->a, (*c)[6] = ws->c, (*IA)[36] = ws->IA, (*pA)[6] = ws->pA, (*U)[6] = ws->U,
    *D = ws->D, *u = ws->u;
    double gB[3], Iv[6], t[6];
    ws->rnea_valid = 0;
    ws->rest_in_place = false; /* v and a of every body are written */

    /* pass 1 (table 7.1): v_i, c_i, IA_i = I_i, pA_i = v_i x* I_i v_i */
    rbd_joint_xforms(ws, q);
    if (fb) {
        dyn_base_pose(q, &X0base);
        rb_m3t_mul_v(X0base.R, model->gravity, gB);
    } else {
        rb_xform_identity(&X0base);
        memcpy(gB, model->gravity, sizeof gB);
    }
    for (size_t i = 0; i < nb; i++) {
        const dyn_body *b = &B[i];
        if (i == 0) {
            for (int k = 0; k < 6; k++)
                v[0][k] = fb && nu ? nu[k] : 0.0, c[0][k] = 0.0;
        } else {
            rb_xform_motion_inv(&Xup[i], v[b->parent], v[i]);
            if (b->vi >= 0 && nu) {
                double qd = nu[b->vi];
                dyn_add_S(b, qd, v[i]);
                dyn_cross_S(b, v[i], qd, c[i]);
            } else {
                memset(c[i], 0, sizeof c[i]);
            }
        }
        if (!b->moving)
            continue;
        ia_from_pi(b->pi, IA[i]);
        rb_inertia_mul(b->pi, v[i], Iv);
        rb_cross_force(v[i], Iv, pA[i]);
    }
    for (size_t e = 0; e < n_ext; e++) {
        int body = model->frames[ext[e].frame].body;
        if (!B[body].moving)
            continue; /* a wrench on what does not move is borne by the fixed base */
        rbd_ext_to_body(model, ws, Xup, &X0base, &ext[e], t);
        double *p = pA[body];
        for (int k = 0; k < 6; k++)
            p[k] -= t[k];
    }
    if (fb && tau)
        for (int k = 0; k < 6; k++)
            pA[0][k] -= tau[k];

    /* pass 2: U_i = IA_i S_i, D_i = S_i^T U_i, u_i = tau_i - S_i^T pA_i,
     * Ia = IA_i - U_i U_i^T / D_i, pa = pA_i + Ia c_i + U_i u_i / D_i, accumulated into the parent */
    for (size_t i = nb; i-- > 1;) {
        const dyn_body *b = &B[i];
        double *Ia6 = IA[i], *pa = pA[i];
        if (!b->moving)
            continue;
        if (b->vi >= 0) {
            int o = b->kind == JK_REVOLUTE ? 3 : 0;
            const double *k = b->k;
            for (int r = 0; r < 6; r++)
                U[i][r] = Ia6[6 * r + o] * k[0] + Ia6[6 * r + o + 1] * k[1] + Ia6[6 * r + o + 2] * k[2];
            D[i] = dyn_St(b, U[i]);
            if (!(D[i] > 0.0))
                return rb_err_set(err, RB_ENUMERIC, "rb_dyn_aba: joint %s moves no inertia",
                                  model->bodies[i].joint_name ? model->bodies[i].joint_name : "");
            u[i] = (tau ? tau[b->vi] : 0.0) - dyn_St(b, pa);
            double inv = 1.0 / D[i], Ic[6], s = u[i] * inv;
            for (int r = 0; r < 6; r++) {
                double Ur = U[i][r] * inv;
                for (int cc = 0; cc < 6; cc++)
                    Ia6[6 * r + cc] -= Ur * U[i][cc];
            }
            m6_mul_v(Ia6, c[i], Ic);
            for (int r = 0; r < 6; r++)
                pa[r] += Ic[r] + U[i][r] * s;
        }
        int p = b->parent;
        if (!B[p].moving)
            continue;
        ia_to_parent_add(&Xup[i], Ia6, IA[p]);
        rb_xform_force(&Xup[i], pa, t);
        for (int k = 0; k < 6; k++)
            pA[p][k] += t[k];
    }

    /* pass 3: a_0 = -g (fixed base) or IA_0 a_0 = -pA_0 (floating base, chapter 9); then
     * a'_i = iXp a_p + c_i, qdd_i = (u_i - U_i^T a'_i) / D_i, a_i = a'_i + S_i qdd_i */
    if (fb) {
        double mp[6] = {-pA[0][0], -pA[0][1], -pA[0][2], -pA[0][3], -pA[0][4], -pA[0][5]};
        if (!rbd_spd6_solve(IA[0], mp, a[0]))
            return rb_err_set(err, RB_ENUMERIC, "rb_dyn_aba: the floating base's articulated inertia is singular");
        for (int k = 0; k < 6; k++)
            nu_dot[k] = a[0][k] + (k < 3 ? gB[k] : 0.0);
    } else {
        for (int k = 0; k < 6; k++)
            a[0][k] = k < 3 ? -gB[k] : 0.0;
    }
    for (size_t i = 1; i < nb; i++) {
        const dyn_body *b = &B[i];
        rb_xform_motion_inv(&Xup[i], a[b->parent], a[i]);
        for (int k = 0; k < 6; k++)
            a[i][k] += c[i][k];
        if (b->vi >= 0) {
            const double *Ui = U[i], *ai = a[i];
            double qdd = (u[i] - (Ui[0] * ai[0] + Ui[1] * ai[1] + Ui[2] * ai[2] + Ui[3] * ai[3] + Ui[4] * ai[4] +
                                  Ui[5] * ai[5])) /
                         D[i];
            nu_dot[b->vi] = qdd;
            dyn_add_S(b, qdd, a[i]);
        }
    }
    return RB_OK;
}

/* ---- CRBA + Cholesky ------------------------------------------------------------------------------------ */

/* M (ws->M) factored in place as L L^T (lower triangle, column-major = the row-major upper triangle). */
static int factor_M(rb_dyn *ws, const char *what, rb_err *err)
{
    lapack_int n = (lapack_int)ws->nv;
    lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, ws->M, n);
    if (info != 0)
        return rb_err_set(err, RB_ENUMERIC, "%s: the mass matrix is not positive definite (LAPACK dpotrf: %d)", what,
                          (int)info);
    return RB_OK;
}

static void solve_M(rb_dyn *ws, double *x)
{
    lapack_int n = (lapack_int)ws->nv;
    LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', n, 1, ws->M, n, x, n);
}

/* nu_dot0 = M^-1 (tau - h), M factored in ws->M, h in ws->h. */
static int unconstrained(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, const double *tau,
                         const rb_ext_wrench *ext, size_t n_ext, double *nu_dot, const char *what, rb_err *err)
{
    rbd_crba_folded(ws, q, ws->M, ws->nv);
    rbd_rnea(model, ws, q, nu, NULL, ext, n_ext, ws->h);
    ws->rnea_valid = 0;
    for (size_t k = 0; k < ws->nv; k++)
        nu_dot[k] = (tau ? tau[k] : 0.0) - ws->h[k];
    if (ws->nv == 0)
        return RB_OK;
    int rc = factor_M(ws, what, err);
    if (rc < 0)
        return rc;
    solve_M(ws, nu_dot);
    return RB_OK;
}

int rb_dyn_fd_cholesky(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, const double *tau,
                       const rb_ext_wrench *ext, size_t n_ext, double *nu_dot, rb_err *err)
{
    int rc = rbd_check_call(model, ws, q, nu_dot, ext, n_ext, "rb_dyn_fd_cholesky", err);
    if (rc < 0)
        return rc;
    /* M in the tree order, factored L^T L with the tree's sparsity (no fill-in), h by RNEA */
    const size_t nv = ws->nv;
    double *x = ws->tmp;
    rbd_crba_folded(ws, q, NULL, 0);
    rbd_rnea(model, ws, q, nu, NULL, ext, n_ext, ws->h);
    ws->rnea_valid = 0;
    if (!rbd_tree_ltl(ws))
        return rb_err_set(err, RB_ENUMERIC, "rb_dyn_fd_cholesky: the mass matrix is not positive definite");
    for (size_t k = 0; k < nv; k++) {
        size_t v = (size_t)ws->tperm[k];
        x[k] = (tau ? tau[v] : 0.0) - ws->h[v];
    }
    rbd_tree_solve(ws, x);
    for (size_t k = 0; k < nv; k++)
        nu_dot[ws->tperm[k]] = x[k];
    return RB_OK;
}

/* ---- contacts -------------------------------------------------------------------------------------------- */

/* w = log(R) (axis times angle), robust near 0 and pi. */
static void so3_log(const double R[9], double w[3])
{
    double sv[3] = {R[7] - R[5], R[2] - R[6], R[3] - R[1]}; /* 2 sin(t) axis */
    double c = 0.5 * (R[0] + R[4] + R[8] - 1.0), s = 0.5 * sqrt(rb_v3_dot(sv, sv));
    double t = atan2(s, c);
    if (t < 1e-6) {
        double k = 0.5 * (1.0 + t * t / 6.0);
        for (int i = 0; i < 3; i++)
            w[i] = k * sv[i];
    } else if (c > -0.9) {
        double k = t / (2.0 * s);
        for (int i = 0; i < 3; i++)
            w[i] = k * sv[i];
    } else { /* near pi: (R + R^T)/2 - c 1 = (1 - c) a a^T; the largest diagonal gives a stable column */
        int j = R[0] >= R[4] && R[0] >= R[8] ? 0 : R[4] >= R[8] ? 1 : 2;
        double a[3];
        for (int i = 0; i < 3; i++)
            a[i] = 0.5 * (R[3 * i + j] + R[3 * j + i]) - (i == j ? c : 0.0);
        double n = sqrt(rb_v3_dot(a, a));
        if (rb_v3_dot(a, sv) < 0.0)
            n = -n;
        for (int i = 0; i < 3; i++)
            w[i] = t * a[i] / n;
    }
}

int rb_dyn_fd_contact(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, const double *tau,
                      const rb_ext_wrench *ext, size_t n_ext, const rb_contact *contacts, size_t n_contacts,
                      double *nu_dot, double *lambda, rb_err *err)
{
    static const char what[] = "rb_dyn_fd_contact";
    int rc = rbd_check_call(model, ws, q, nu_dot, ext, n_ext, what, err);
    if (rc < 0)
        return rc;
    if (n_contacts && (!contacts || !lambda))
        return rb_err_set(err, RB_EINVAL, "%s: NULL contacts or lambda", what);
    size_t rows = 0, nv = ws->nv;
    for (size_t k = 0; k < n_contacts; k++) {
        if (contacts[k].frame < 0 || (size_t)contacts[k].frame >= model->n_frames)
            return rb_err_set(err, RB_EINVAL, "%s: contact %zu: frame %d out of range", what, k, contacts[k].frame);
        if (contacts[k].dim != 3 && contacts[k].dim != 6)
            return rb_err_set(err, RB_EINVAL, "%s: contact %zu: dim must be 3 or 6", what, k);
        rows += (size_t)contacts[k].dim;
    }
    if (rows > ws->max_rows)
        return rb_err_set(err, RB_EDIM, "%s: %zu contact rows, room for %zu (rb_dyn_reserve_contacts)", what, rows,
                          ws->max_rows);

    /* constraint rows: J_c (MIXED), desired acceleration - J_c_dot nu */
    rbd_kinematics(ws, q, nu, NULL, true);
    size_t r0 = 0;
    for (size_t k = 0; k < n_contacts; k++) {
        const rb_contact *ct = &contacts[k];
        size_t fr = (size_t)ct->frame, d = (size_t)ct->dim;
        rb_mat J6 = rb_mat_view(ws->Y, 6, nv, nv); /* scratch: Y holds max(rows, 6) x nv */
        double jdn[6], vc[6], e[6] = {0};
        rb_xform X;
        if ((rc = rb_dyn_frame_jacobian(model, ws, fr, RB_DYN_MIXED, &J6, err)) < 0 ||
            (rc = rb_dyn_frame_jdot_nu(model, ws, fr, RB_DYN_MIXED, jdn, err)) < 0 ||
            (rc = rb_dyn_frame_velocity(model, ws, fr, RB_DYN_MIXED, vc, err)) < 0 ||
            (rc = rb_dyn_frame_pose(model, ws, fr, &X, err)) < 0)
            return rc;
        memcpy(ws->Jc + r0 * nv, ws->Y, d * nv * sizeof *ws->Jc);
        if (ct->kp != 0.0) {
            double RrT[9], Rerr[9];
            for (int i = 0; i < 3; i++) {
                e[i] = X.p[i] - ct->ref.p[i];
                for (int j = 0; j < 3; j++)
                    RrT[3 * i + j] = ct->ref.R[3 * j + i];
            }
            rb_m3_mul(X.R, RrT, Rerr);
            so3_log(Rerr, e + 3);
        }
        for (size_t i = 0; i < d; i++)
            ws->rhs[r0 + i] = -ct->kd * vc[i] - ct->kp * e[i] - jdn[i];
        r0 += d;
    }

    /* unconstrained nu_dot0 = M^-1 (tau - h), M = L L^T */
    if ((rc = unconstrained(model, ws, q, nu, tau, ext, n_ext, nu_dot, what, err)) < 0)
        return rc;
    if (rows > 0 && nv > 0) {
        lapack_int n = (lapack_int)nv, m = (lapack_int)rows;
        /* rhs -= J_c nu_dot0 */
        cblas_dgemv(CblasRowMajor, CblasNoTrans, m, n, -1.0, ws->Jc, n, nu_dot, 1, 1.0, ws->rhs, 1);
        /* Y = L^-1 J_c^T (J_c row-major is J_c^T column-major), S = Y^T Y = J_c M^-1 J_c^T */
        memcpy(ws->Y, ws->Jc, rows * nv * sizeof *ws->Y);
        LAPACKE_dtrtrs_work(LAPACK_COL_MAJOR, 'L', 'N', 'N', n, m, ws->M, n, ws->Y, n);
        cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, m, n, 1.0, ws->Y, n, 0.0, ws->S, m);
        lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', m, ws->S, m);
        if (info != 0)
            return rb_err_set(err, RB_ENUMERIC,
                              "%s: the contact system J M^-1 J^T is not positive definite (redundant contacts?)", what);
        memcpy(ws->lam, ws->rhs, rows * sizeof *ws->lam);
        LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', m, 1, ws->S, m, ws->lam, m);
        /* nu_dot = nu_dot0 + M^-1 J_c^T lambda */
        cblas_dgemv(CblasRowMajor, CblasTrans, m, n, 1.0, ws->Jc, n, ws->lam, 1, 0.0, ws->tmp, 1);
        solve_M(ws, ws->tmp);
        for (size_t k = 0; k < nv; k++)
            nu_dot[k] += ws->tmp[k];
        memcpy(lambda, ws->lam, rows * sizeof *lambda);
    } else if (rows > 0) {
        memset(lambda, 0, rows * sizeof *lambda);
    }
    rbd_kinematics(ws, q, nu, nu_dot, true);
    return RB_OK;
}
