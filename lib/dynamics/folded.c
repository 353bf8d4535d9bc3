/* The folded tree: the root and the bodies with a movable joint, each carrying the bodies that fixed joints attach
 * to it (FT-sensor halves, locked joints, frames' bodies) as one rigid body. The passes that need no per-body wrench
 * (the mass matrix, forward dynamics by its factorization) run on it: a fixed joint adds no coordinate, so it only
 * costs a transform per pass. Folding is exact algebra, done once (and again when a body's inertia changes); the
 * results differ from the unfolded passes by rounding only (composed constant transforms, summed inertias).
 *
 * Also the tree-sparse Cholesky factorization of the mass matrix (Featherstone, "Rigid Body Dynamics Algorithms",
 * section 6.5, table 6.3: H = L^T L; numbering the coordinates parents first, L has no fill-in), the same
 * algorithm as the simulator's (lib/sim/tree_chol.c, which sits above this module). */
#include <math.h>
#include <string.h>

#include "dyn_internal.h"

/* The mass matrix's vector passes (below): GNU C vectors of 4 doubles, built for AVX2, run where the CPU has it. */
#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_VEC 1
#define VEC_FN __attribute__((target("avx2")))
#else
#define HAVE_VEC 0
#endif

void rbd_body_joint_consts(dyn_body *d)
{
    memset(d->A, 0, sizeof d->A);
    memset(d->B, 0, sizeof d->B);
    memcpy(d->C, d->Xp.R, sizeof d->C);
    memset(d->Rpk, 0, sizeof d->Rpk);
    if (d->kind == JK_FIXED)
        return;
    const double *R = d->Xp.R, *k = d->k;
    rb_m3_mul_v(R, k, d->Rpk);
    /* R(q) = Rp (cos q 1 + sin q [k]x + (1 - cos q) k k^T) = cos q (Rp - Rp k k^T) + sin q Rp [k]x + Rp k k^T */
    const double K[9] = {0, -k[2], k[1], k[2], 0, -k[0], -k[1], k[0], 0};
    rb_m3_mul(R, K, d->A);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            d->B[3 * r + c] = d->Rpk[r] * k[c];
            d->C[3 * r + c] = R[3 * r + c] - d->B[3 * r + c];
        }
}

void rbd_fold_inertia(rb_dyn *ws)
{
    for (size_t i = 0; i < ws->nb; i++) {
        const dyn_body *b = &ws->body[i];
        double *pi = ws->node[ws->node_of[i]].pi, t[10];
        if (i == 0 || b->vi >= 0) {
            memcpy(pi, b->pi, sizeof b->pi);
        } else {
            rb_inertia_to_parent(&ws->Xnode[i], b->pi, t);
            for (int k = 0; k < 10; k++)
                pi[k] += t[k];
        }
    }
}

/* A node's joint constants by columns, for the mass matrix's forward pass (zero in the fourth row) */
static void joint_cols(const dyn_body *d, rbd_jcols *c)
{
    memset(c, 0, sizeof *c);
    for (int col = 0; col < 3; col++)
        for (int r = 0; r < 3; r++) {
            c->C[col][r] = d->kind == JK_REVOLUTE ? d->C[3 * r + col] : d->Xp.R[3 * r + col];
            c->A[col][r] = d->A[3 * r + col];
            c->B[col][r] = d->B[3 * r + col];
        }
    for (int r = 0; r < 3; r++)
        c->p[r] = d->Xp.p[r], c->Rpk[r] = d->Rpk[r];
}

void rbd_fold(rb_dyn *ws)
{
    const dyn_body *B = ws->body;
    size_t nn = 0;
    for (size_t i = 0; i < ws->nb; i++) {
        const dyn_body *b = &B[i];
        if (i == 0 || b->vi >= 0) {
            dyn_body *d = &ws->node[nn];
            *d = *b;
            rb_xform_identity(&ws->Xnode[i]);
            ws->node_of[i] = (int)nn++;
            if (i == 0)
                continue;
            d->parent = ws->node_of[b->parent];
            rb_xform_compose(&ws->Xnode[b->parent], &b->Xp, &d->Xp);
            d->moving = true;
            rbd_body_joint_consts(d);
            joint_cols(d, &ws->NJ[nn - 1]);
        } else {
            ws->node_of[i] = ws->node_of[b->parent];
            rb_xform_compose(&ws->Xnode[b->parent], &b->Xp, &ws->Xnode[i]);
        }
    }
    ws->nn = nn;
    rbd_fold_inertia(ws);

    /* the tree order of the factorization: the base's 6 coordinates, then the nodes' (body order: parents first) */
    const size_t vo = ws->floating ? 6 : 0;
    for (size_t k = 0; k < vo; k++)
        ws->tperm[k] = (int)k, ws->tpar[k] = (int)k - 1;
    ws->trow[0] = ws->vrow[0] = -1;
    for (size_t n = 1; n < nn; n++) {
        int r = (int)(vo + n - 1), p = ws->node[n].parent;
        ws->trow[n] = r;
        ws->vrow[n] = ws->node[n].vi;
        ws->tperm[r] = ws->node[n].vi;
        ws->tpar[r] = p == 0 ? (int)vo - 1 : ws->trow[p];
    }
    /* the compact rows of the factorization: row k holds its diagonal, then its entries at its ancestors, nearest
     * first (tanc: the same layout with the coordinates) */
    size_t off = 0;
    for (size_t k = 0; k < ws->nv; k++) {
        ws->toff[k] = off;
        ws->tanc[off++] = (int)k;
        for (int i = ws->tpar[k]; i >= 0; i = ws->tpar[i])
            ws->tanc[off++] = i;
        ws->tdep[k] = (int)(off - ws->toff[k] - 1);
    }
    /* the zeros of M: in each joint's row, the runs of columns of the joints on other branches (neither ancestors
     * nor descendants); mark[node] = the row's node a is on the node's path to the root, or the node on a's */
    unsigned char *mark = ws->rest_scratch;
    size_t nr = 0;
    for (size_t a = 1; a < nn; a++) {
        memset(mark, 0, nn);
        for (int j = (int)a; j > 0; j = ws->node[j].parent)
            mark[j] = 1;
        for (size_t b = a + 1; b < nn; b++)
            mark[b] = mark[ws->node[b].parent] && (ws->node[b].parent >= (int)a);
        /* columns in velocity order: mark by velocity index */
        unsigned char *vmark = mark + nn;
        memset(vmark, 0, ws->nv);
        for (size_t b = 1; b < nn; b++)
            vmark[ws->node[b].vi] = mark[b];
        for (size_t c = vo; c < ws->nv;) {
            if (vmark[c]) {
                c++;
                continue;
            }
            size_t c0 = c;
            while (c < ws->nv && !vmark[c])
                c++;
            ws->zrun[nr][0] = ws->node[a].vi, ws->zrun[nr][1] = (int)c0, ws->zrun[nr][2] = (int)(c - c0);
            nr++;
        }
    }
    ws->n_zrun = nr;

    /* the subtrees as runs: nend[n] = 1 + the last node of n's subtree (nodes in between that are not in it, when the
     * body order is not depth first, get entries that the zero runs overwrite); ncols[n]: the run's columns follow the
     * nodes' */
#if HAVE_VEC
    ws->crba_vec = __builtin_cpu_supports("avx2");
#endif
    int *end = ws->nend;
    for (size_t n = 0; n < nn; n++)
        end[n] = (int)n + 1;
    for (size_t n = nn; n-- > 1;) {
        int p = ws->node[n].parent;
        if (p > 0 && end[p] < end[n])
            end[p] = end[n];
    }
    for (size_t n = 1; n < nn; n++) {
        ws->ncols[n] = 1;
        for (size_t m = n; m < (size_t)end[n]; m++)
            if (ws->node[m].vi != ws->node[n].vi + (int)(m - n))
                ws->ncols[n] = 0;
    }
}

/* dot product of a motion and a force vector */
static inline double dot6(const double m[6], const double f[6])
{
    return m[0] * f[0] + m[1] * f[1] + m[2] * f[2] + m[3] * f[3] + m[4] * f[4] + m[5] * f[5];
}

/* rb_inertia_to_parent with the symmetry used (the same parallel-axis algebra, 6 entries of the rotated inertia, not
 * 9): I_A = R I_B R^T - (u p^T + p u^T) + 2 (p . u) 1 with u = R h_B + m p / 2. */
static inline void inertia_to_root(const rb_xform *X, const double pi[10], double out[10])
{
    const double m = pi[0], *p = X->p, *R = X->R;
    const double IB[9] = {pi[4], pi[5], pi[6], pi[5], pi[7], pi[8], pi[6], pi[8], pi[9]};
    double Rh[3], RI[9], u[3];
    rb_m3_mul_v(R, pi + 1, Rh);
    rb_m3_mul(R, IB, RI);
    for (int i = 0; i < 3; i++)
        u[i] = Rh[i] + 0.5 * m * p[i];
    const double d = 2.0 * rb_v3_dot(p, u);
    static const int I[6] = {0, 0, 0, 1, 1, 2}, J[6] = {0, 1, 2, 1, 2, 2};
    for (int e = 0; e < 6; e++) {
        const int i = I[e], j = J[e];
        double v = RI[3 * i] * R[3 * j] + RI[3 * i + 1] * R[3 * j + 1] + RI[3 * i + 2] * R[3 * j + 2];
        out[4 + e] = v - (u[i] * p[j] + p[i] * u[j]) + (i == j ? d : 0.0);
    }
    out[0] = m;
    for (int i = 0; i < 3; i++)
        out[1 + i] = Rh[i] + m * p[i];
}

/* The forward pass of the mass matrix, scalar: each node's pose in the root's frame, S and its inertia there. */
static void crba_forward_scalar(rb_dyn *ws, const double *q)
{
    const size_t nn = ws->nn;
    const dyn_body *N = ws->node;
    rb_xform *X = ws->NXs;
    double(*IC)[10] = ws->NIC, (*S)[6] = ws->NS;
    for (size_t n = 1; n < nn; n++) {
        const dyn_body *b = &N[n];
        int p = b->parent;
        if (p == 0) {
            dyn_joint_xform(b, q[b->qi], &X[n]);
        } else {
            rb_xform Xj;
            dyn_joint_xform(b, q[b->qi], &Xj);
            rb_xform_compose(&X[p], &Xj, &X[n]);
        }
        double *s = S[n];
        if (b->kind == JK_REVOLUTE) { /* [p x R k; R k] */
            rb_m3_mul_v(X[n].R, b->k, s + 3);
            rb_v3_cross(X[n].p, s + 3, s);
        } else { /* [R k; 0] */
            rb_m3_mul_v(X[n].R, b->k, s);
            s[3] = s[4] = s[5] = 0.0;
        }
        inertia_to_root(&X[n], b->pi, IC[n]);
    }
}

/* The forward pass of the mass matrix: each node's pose in the root's frame, its motion subspace S and its inertia
 * there. Written on columns of 4 doubles (GNU C vectors, AVX2: crba_vec), else by the scalar code. Every entry
 * is computed by the same operations in the same order as the scalar code it replaces (dyn_joint_xform,
 * rb_xform_compose, rb_m3_mul_v, the parallel-axis algebra of rb_inertia_to_parent with 6 entries of the rotated
 * inertia), a column of a product being the sum over k of column k times a scalar: products are commutative, and
 * with no contraction (ISO C mode) and no reassociation the vector width changes no bit. */
#if HAVE_VEC
typedef double v4 __attribute__((vector_size(32)));
#define BC(x) ((v4){(x), (x), (x), (x)})

VEC_FN static void crba_forward_vec(rb_dyn *ws, const double *q)
{
    const size_t nn = ws->nn;
    const dyn_body *N = ws->node;
    const rbd_jcols *J = ws->NJ;
    rbd_pose4 *X = ws->NX;
    double(*IC)[10] = ws->NIC, (*S)[6] = ws->NS;
    for (size_t n = 1; n < nn; n++) {
        const dyn_body *b = &N[n];
        const rbd_jcols *jc = &J[n];
        const double x = q[b->qi];
        v4 C0, C1, C2, A0, A1, A2, B0, B1, B2, P, Rpk, R0, R1, R2;
        memcpy(&C0, jc->C[0], 32), memcpy(&C1, jc->C[1], 32), memcpy(&C2, jc->C[2], 32), memcpy(&P, jc->p, 32);
        /* the joint's transform (dyn_joint_xform): R = cos q C + sin q A + B, by columns */
        if (b->kind == JK_REVOLUTE) {
            const double c = cos(x), s = sin(x);
            memcpy(&A0, jc->A[0], 32), memcpy(&A1, jc->A[1], 32), memcpy(&A2, jc->A[2], 32);
            memcpy(&B0, jc->B[0], 32), memcpy(&B1, jc->B[1], 32), memcpy(&B2, jc->B[2], 32);
            R0 = BC(c) * C0 + BC(s) * A0 + B0;
            R1 = BC(c) * C1 + BC(s) * A1 + B1;
            R2 = BC(c) * C2 + BC(s) * A2 + B2;
        } else {
            memcpy(&Rpk, jc->Rpk, 32);
            R0 = C0, R1 = C1, R2 = C2;
            P = P + BC(x) * Rpk;
        }
        /* composed with the parent's pose: column j of Rp Rj = sum_k (column k of Rp) Rj[k][j], k = 0, 1, 2 */
        v4 c0, c1, c2, p;
        const int par = b->parent;
        if (par == 0) {
            c0 = R0, c1 = R1, c2 = R2, p = P;
        } else {
            v4 a0, a1, a2, pp;
            memcpy(&a0, X[par].c[0], 32), memcpy(&a1, X[par].c[1], 32), memcpy(&a2, X[par].c[2], 32);
            memcpy(&pp, X[par].p, 32);
            c0 = a0 * BC(R0[0]) + a1 * BC(R0[1]) + a2 * BC(R0[2]);
            c1 = a0 * BC(R1[0]) + a1 * BC(R1[1]) + a2 * BC(R1[2]);
            c2 = a0 * BC(R2[0]) + a1 * BC(R2[1]) + a2 * BC(R2[2]);
            p = a0 * BC(P[0]) + a1 * BC(P[1]) + a2 * BC(P[2]) + pp;
        }
        memcpy(X[n].c[0], &c0, 32), memcpy(X[n].c[1], &c1, 32), memcpy(X[n].c[2], &c2, 32), memcpy(X[n].p, &p, 32);
        /* S: revolute [p x R k; R k], prismatic [R k; 0] */
        double *s = S[n];
        const v4 Rk = c0 * BC(b->k[0]) + c1 * BC(b->k[1]) + c2 * BC(b->k[2]);
        if (b->kind == JK_REVOLUTE) {
            s[3] = Rk[0], s[4] = Rk[1], s[5] = Rk[2];
            s[0] = p[1] * s[5] - p[2] * s[4];
            s[1] = p[2] * s[3] - p[0] * s[5];
            s[2] = p[0] * s[4] - p[1] * s[3];
        } else {
            s[0] = Rk[0], s[1] = Rk[1], s[2] = Rk[2];
            s[3] = s[4] = s[5] = 0.0;
        }
        /* the inertia in the root's frame: h = R h_B + m p and I_A = R I_B R^T - (u p^T + p u^T) + 2 (p . u) 1 with
         * u = R h_B + m p / 2 (the parallel-axis algebra of rb_inertia_to_parent, 6 entries of the rotated inertia) */
        const double *pi = b->pi, m = pi[0];
        double *out = IC[n];
        const v4 Rh = c0 * BC(pi[1]) + c1 * BC(pi[2]) + c2 * BC(pi[3]);
        /* column j of R I_B: sum_k (column k of R) I_B[k][j], I_B = [[4 5 6] [5 7 8] [6 8 9]] in pi's indices */
        const v4 RI0 = c0 * BC(pi[4]) + c1 * BC(pi[5]) + c2 * BC(pi[6]);
        const v4 RI1 = c0 * BC(pi[5]) + c1 * BC(pi[7]) + c2 * BC(pi[8]);
        const v4 RI2 = c0 * BC(pi[6]) + c1 * BC(pi[8]) + c2 * BC(pi[9]);
        const v4 u = Rh + BC(0.5 * m) * p;
        const double d = 2.0 * (p[0] * u[0] + p[1] * u[1] + p[2] * u[2]);
        /* column j of (R I_B) R^T: sum_k (column k of R I_B) R[j][k]; then - (u p_j + p u_j), + d on the diagonal (the
         * scalar form adds 0.0 off it: kept, it turns -0 into +0) */
        const v4 W0 = RI0 * BC(c0[0]) + RI1 * BC(c1[0]) + RI2 * BC(c2[0]) - (u * BC(p[0]) + p * BC(u[0])) +
                      (v4){d, 0.0, 0.0, 0.0};
        const v4 W1 = RI0 * BC(c0[1]) + RI1 * BC(c1[1]) + RI2 * BC(c2[1]) - (u * BC(p[1]) + p * BC(u[1])) +
                      (v4){0.0, d, 0.0, 0.0};
        const v4 W2 = RI0 * BC(c0[2]) + RI1 * BC(c1[2]) + RI2 * BC(c2[2]) - (u * BC(p[2]) + p * BC(u[2])) +
                      (v4){0.0, 0.0, d, 0.0};
        const v4 h = Rh + BC(m) * p;
        out[0] = m, out[1] = h[0], out[2] = h[1], out[3] = h[2];
        out[4] = W0[0], out[5] = W1[0], out[6] = W2[0], out[7] = W1[1], out[8] = W2[1], out[9] = W2[2];
    }
}

/* The entries H_jn = S_j . F_n of the whole matrix for every node j and each node n of its subtree after it (a run of
 * nodes, ws->nruns): four n at a time from F by components (ws->NF), each the same 6-term sum in the same order as
 * dot6; row j's run of columns stored whole when the columns follow the nodes, column j's entry by entry. */
VEC_FN static void crba_subtrees(rb_dyn *ws, double *M, size_t ld)
{
    const size_t nn = ws->nn, nf = nn + 4;
    const int *row = ws->vrow, *end = ws->nend;
    const double *F0 = ws->NF, *F1 = F0 + nf, *F2 = F1 + nf, *F3 = F2 + nf, *F4 = F3 + nf, *F5 = F4 + nf;
    for (size_t j = 1; j < nn; j++) {
        const int e = end[j];
        if (e == (int)j + 1)
            continue;
        const size_t rj = (size_t)row[j];
        const double *s = ws->NS[j];
        const v4 S0 = BC(s[0]), S1 = BC(s[1]), S2 = BC(s[2]), S3 = BC(s[3]), S4 = BC(s[4]), S5 = BC(s[5]);
        double *Mj = M + rj * ld;
        for (int n = (int)j + 1; n < e; n += 4) {
            v4 f0, f1, f2, f3, f4, f5;
            memcpy(&f0, F0 + n, 32), memcpy(&f1, F1 + n, 32), memcpy(&f2, F2 + n, 32);
            memcpy(&f3, F3 + n, 32), memcpy(&f4, F4 + n, 32), memcpy(&f5, F5 + n, 32);
            const v4 h = S0 * f0 + S1 * f1 + S2 * f2 + S3 * f3 + S4 * f4 + S5 * f5;
            const int cnt = e - n < 4 ? e - n : 4;
            if (cnt == 4 && ws->ncols[j])
                memcpy(Mj + rj + (size_t)(n - (int)j), &h, 32);
            else
                for (int i = 0; i < cnt; i++)
                    Mj[row[n + i]] = h[i];
            for (int i = 0; i < cnt; i++)
                M[(size_t)row[n + i] * ld + rj] = h[i];
        }
    }
}
#endif

/* CRBA (Featherstone table 6.2) on the folded tree, in the root's frame: each node's pose, motion subspace S and
 * inertia are carried to the root's frame once, so composite inertias are plain sums and H_ij = S_j . IC_i S_i is
 * a 6-term dot product for every ancestor j (no transform per ancestor). M == NULL: into ws->M in the compact tree
 * rows of rbd_tree_ltl, ancestor by ancestor. Else the whole symmetric matrix (row stride ld, velocity order): by
 * subtrees with the vector passes (crba_subtrees), ancestor by ancestor without; then the zeros (the pairs on
 * different branches). Each entry is written once (with a depth-first body order), and both ways give the same bits. */
void rbd_crba_folded(rb_dyn *ws, const double *q, double *M, size_t ld)
{
    const bool full = M != NULL;
    const int *row = full ? ws->vrow : ws->trow;
    const size_t *toff = ws->toff;
    const int *tdep = ws->tdep;
    if (!full)
        M = ws->M, ld = 0;
/* entry (r, c): c an ancestor of r, or r itself, in the compact rows */
#define AT(r, c) (full ? (size_t)(r)*ld + (size_t)(c) : toff[r] + (size_t)(tdep[r] - tdep[c]))
    const size_t nn = ws->nn, nf = nn + 4;
    const dyn_body *N = ws->node;
    double(*IC)[10] = ws->NIC, (*S)[6] = ws->NS, F[6], *NF = ws->NF;
    const bool fb = ws->floating;
    if (fb)
        memcpy(IC[0], N[0].pi, sizeof IC[0]);
#if HAVE_VEC
    const bool vec = ws->crba_vec;
    if (vec)
        crba_forward_vec(ws, q);
    else
#else
    const bool vec = false;
#endif
        crba_forward_scalar(ws, q);
    const bool runs = full && vec; /* the whole matrix by subtrees */
    /* composite inertias, leaves first (the same sums in the same order either way); the whole matrix takes each
     * node's F, diagonal entry and base entries as soon as its IC is whole */
    for (size_t n = nn; n-- > 1;) {
        if (runs) {
            const size_t rn = (size_t)row[n];
            rb_inertia_mul(IC[n], S[n], F);
            M[rn * ld + rn] = dot6(S[n], F);
            for (size_t k = 0; k < 6; k++)
                NF[k * nf + n] = F[k];
            if (fb)
                for (size_t k = 0; k < 6; k++)
                    M[rn * ld + k] = F[k], M[k * ld + rn] = F[k];
        }
        int p = N[n].parent;
        if (p == 0 && !fb)
            continue; /* the fixed base's composite inertia is never used */
        for (int k = 0; k < 10; k++)
            IC[p][k] += IC[n][k];
    }
    if (fb) { /* the base block: the composite inertia as a 6 x 6 matrix [[m 1, -[h]x], [[h]x, I]] */
        const double *c = IC[0], m = c[0], hx = c[1], hy = c[2], hz = c[3];
        const double I6[36] = {m,   0,   0,   0,    hz,   -hy,  /* */
                               0,   m,   0,   -hz,  0,    hx,   /* */
                               0,   0,   m,   hy,   -hx,  0,    /* */
                               0,   -hz, hy,  c[4], c[5], c[6], /* */
                               hz,  0,   -hx, c[5], c[7], c[8], /* */
                               -hy, hx,  0,   c[6], c[8], c[9]};
        for (size_t r = 0; r < 6; r++)
            for (size_t k = 0; k <= r || (full && k < 6); k++)
                M[AT(r, k)] = I6[6 * r + k];
    }
#if HAVE_VEC
    if (runs)
        crba_subtrees(ws, M, ld);
#endif
    for (size_t n = 1; n < nn && !runs; n++) {
        size_t rn = (size_t)row[n];
        rb_inertia_mul(IC[n], S[n], F);
        M[AT(rn, rn)] = dot6(S[n], F);
        for (int j = N[n].parent; j > 0; j = N[j].parent) {
            size_t rj = (size_t)row[j];
            double h = dot6(S[j], F);
            M[AT(rn, rj)] = h;
            if (full)
                M[rj * ld + rn] = h;
        }
        if (fb)
            for (size_t k = 0; k < 6; k++) {
                M[AT(rn, k)] = F[k];
                if (full)
                    M[k * ld + rn] = F[k];
            }
    }
    if (full)
        for (size_t k = 0; k < ws->n_zrun; k++)
            memset(M + (size_t)ws->zrun[k][0] * ld + (size_t)ws->zrun[k][1], 0, (size_t)ws->zrun[k][2] * sizeof *M);
#undef AT
}

bool rbd_tree_ltl(rb_dyn *ws)
{
    double *L = ws->M;
    const size_t *toff = ws->toff;
    const int *tdep = ws->tdep, *tanc = ws->tanc;
    for (size_t k = ws->nv; k-- > 0;) {
        double *Lk = L + toff[k];
        const int d = tdep[k];
        if (!(Lk[0] > 0.0))
            return false;
        double dinv = 1.0 / sqrt(Lk[0]);
        Lk[0] = dinv; /* the solves multiply by it: no division on their dependency chain */
        for (int b = 1; b <= d; b++)
            Lk[b] *= dinv;
        /* the a-th ancestor i's row (its diagonal, then its own ancestors) lines up with Lk[a..d] */
        for (int a = 1; a <= d; a++) {
            double *Li = L + toff[tanc[toff[k] + (size_t)a]], hki = Lk[a];
            for (int b = 0; b <= d - a; b++)
                Li[b] -= hki * Lk[a + b];
        }
    }
    return true;
}

void rbd_tree_solve(const rb_dyn *ws, double *x)
{
    const double *L = ws->M;
    const size_t *toff = ws->toff, n = ws->nv;
    const int *tdep = ws->tdep, *tanc = ws->tanc;
    for (size_t k = n; k-- > 0;) { /* L^T y = x */
        const double *Lk = L + toff[k];
        const int *ak = tanc + toff[k];
        double xk = x[k] * Lk[0];
        x[k] = xk;
        for (int b = 1; b <= tdep[k]; b++)
            x[ak[b]] -= Lk[b] * xk;
    }
    for (size_t k = 0; k < n; k++) { /* L x = y */
        const double *Lk = L + toff[k];
        const int *ak = tanc + toff[k];
        double v = x[k];
        for (int b = 1; b <= tdep[k]; b++)
            v -= Lk[b] * x[ak[b]];
        x[k] = v * Lk[0];
    }
}
