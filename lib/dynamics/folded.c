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

/* dot product of a motion and a force vector */
static inline double dot6(const double m[6], const double f[6])
{
    return m[0] * f[0] + m[1] * f[1] + m[2] * f[2] + m[3] * f[3] + m[4] * f[4] + m[5] * f[5];
}

/* CRBA (Featherstone table 6.2) on the folded tree, in the root's frame: each node's pose, motion subspace S and
 * inertia are carried to the root's frame once, so composite inertias are plain sums and H_ij = S_j . IC_i S_i is
 * a 6-term dot product for every ancestor j (no transform per ancestor). M == NULL: into ws->M in the compact tree
 * rows of rbd_tree_ltl; else the whole symmetric matrix (row stride ld, velocity order), each entry written once. */
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
    const size_t nn = ws->nn;
    const dyn_body *N = ws->node;
    rb_xform *X = ws->NX;
    double(*IC)[10] = ws->NIC, (*S)[6] = ws->NS, F[6];
    const bool fb = ws->floating;
    if (fb)
        memcpy(IC[0], N[0].pi, sizeof IC[0]);
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
    for (size_t n = nn; n-- > 1;) {
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
    for (size_t n = 1; n < nn; n++) {
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
#undef AT
    if (full)
        for (size_t k = 0; k < ws->n_zrun; k++)
            memset(M + (size_t)ws->zrun[k][0] * ld + (size_t)ws->zrun[k][1], 0, (size_t)ws->zrun[k][2] * sizeof *M);
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
