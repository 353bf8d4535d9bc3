/* The MAP dynamics' solvers (roboest/observers.h, rb_map_*): the normal equations N d = h from the rows and the prior,
 * by the block-tree factorization (sparse) or by BLAS / LAPACK on the explicit matrices (dense, for tests).
 *
 * Block tree. Block k holds body k's unknowns and the wrenches f_c of its children, so every row touches one block
 * and its parent's: N has diagonal blocks N_kk and parent-child blocks N_kp only. Eliminating the leaves first (the
 * reverse body order: children follow their parents) makes no fill, as lib/sim/tree_chol.c's factorization of the
 * mass matrix (Featherstone sec. 6.5) does on scalars:
 *     N_kk = C_k C_k^T,  B_k = C_k^-1 N_kp,  N_pp -= B_k^T B_k           (k = nb-1 .. 0)
 *     z_k = C_k^-1 h_k,  h_p -= B_k^T z_k                                 (leaves first)
 *     x_k = C_k^-T (z_k - B_k x_p)                                        (root first)
 * N_kp is non-zero only in the columns of a_p and f_k (at most 12): B_k is kept on those. The covariance's diagonal
 * blocks follow from the root by the selected-inverse recursion (x_k given x_p has covariance (N_kk')^-1 and mean
 * linear in x_p with gain -(N_kk')^-1 N_kp):
 *     Sig_kk = C_k^-T C_k^-1 + Z_k Sig_pp Z_k^T,  Z_k = C_k^-T B_k.
 * The small dense kernels are written out (blocks of 12 to about 40 unknowns; no allocation, no LAPACK call). */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "map_internal.h"

/* Lower Cholesky factor in place (row-major n x n, the upper triangle left alone); false unless positive definite. */
static bool chol(double *A, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        double *Aj = A + j * n, s = Aj[j];
        for (size_t k = 0; k < j; k++)
            s -= Aj[k] * Aj[k];
        if (!(s > 0.0) || !isfinite(s))
            return false;
        double ljj = sqrt(s), inv = 1.0 / ljj;
        Aj[j] = ljj;
        for (size_t i = j + 1; i < n; i++) {
            double *Ai = A + i * n, t = Ai[j];
            for (size_t k = 0; k < j; k++)
                t -= Ai[k] * Aj[k];
            Ai[j] = t * inv;
        }
    }
    return true;
}

/* x := L^-1 x (x with stride inc). */
static void fwd(const double *L, size_t n, double *x, size_t inc)
{
    for (size_t i = 0; i < n; i++) {
        const double *Li = L + i * n;
        double s = x[i * inc];
        for (size_t k = 0; k < i; k++)
            s -= Li[k] * x[k * inc];
        x[i * inc] = s / Li[i];
    }
}

/* x := L^-T x. */
static void bwd(const double *L, size_t n, double *x, size_t inc)
{
    for (size_t i = n; i-- > 0;) {
        double s = x[i * inc];
        for (size_t k = i + 1; k < n; k++)
            s -= L[k * n + i] * x[k * inc];
        x[i * inc] = s / L[i * n + i];
    }
}

/* X := L^-1 X, X n x m row-major (rows at a time: the inner loops run along X's rows). */
static void fwd_mat(const double *restrict L, size_t n, double *restrict X, size_t m)
{
    for (size_t i = 0; i < n; i++) {
        const double *Li = L + i * n;
        double *restrict Xi = X + i * m;
        for (size_t k = 0; k < i; k++) {
            double l = Li[k];
            const double *restrict Xk = X + k * m;
            for (size_t j = 0; j < m; j++)
                Xi[j] -= l * Xk[j];
        }
        double inv = 1.0 / Li[i];
        for (size_t j = 0; j < m; j++)
            Xi[j] *= inv;
    }
}

/* X := L^-T X. */
static void bwd_mat(const double *restrict L, size_t n, double *restrict X, size_t m)
{
    for (size_t i = n; i-- > 0;) {
        double *restrict Xi = X + i * m, inv = 1.0 / L[i * n + i];
        for (size_t j = 0; j < m; j++)
            Xi[j] *= inv;
        for (size_t k = 0; k < i; k++) { /* row i of L^T x = b done: carry x_i into the rows above */
            double l = L[i * n + k];
            double *restrict Xk = X + k * m;
            for (size_t j = 0; j < m; j++)
                Xk[j] -= l * Xi[j];
        }
    }
}

/* Position of unknown g among the columns of the parent's block that block k couples to: its a_p, then f_k. */
static int coupled(const rb_map *M, size_t k, long g)
{
    int p = M->parent[k];
    long off = 0;
    if (M->ga[p] >= 0) {
        if (g >= M->ga[p] && g < M->ga[p] + 6)
            return (int)(g - M->ga[p]);
        off = 6;
    }
    if (g >= M->gf[k] && g < M->gf[k] + 6)
        return (int)(off + g - M->gf[k]);
    return -1;
}

static bool assemble(rb_map *M)
{
    memset(M->h, 0, M->ng * sizeof *M->h);
    for (size_t k = 0; k < M->nb; k++) {
        memset(M->Nkk + M->kk_off[k], 0, M->bn[k] * M->bn[k] * sizeof(double));
        memset(M->Nkp + M->kp_off[k], 0, M->bn[k] * M->ncol[k] * sizeof(double));
    }
    const map_rows *R = &M->rows;
    for (size_t r = 0; r < R->n; r++) {
        const int *col = R->col + r * R->maxnz;
        const double *val = R->val + r * R->maxnz;
        double w = R->w[r];
        for (int a = 0; a < R->nz[r]; a++) {
            int ba = M->blk[col[a]], la = M->loc[col[a]];
            double wa = w * val[a];
            M->h[M->boff[ba] + (size_t)la] += wa * R->rhs[r];
            for (int b = 0; b < R->nz[r]; b++) {
                int bb = M->blk[col[b]], lb = M->loc[col[b]];
                if (ba == bb) {
                    M->Nkk[M->kk_off[ba] + (size_t)la * M->bn[ba] + (size_t)lb] += wa * val[b];
                } else if (M->parent[ba] == bb) {
                    int c = coupled(M, (size_t)ba, col[b]);
                    if (c < 0)
                        return false;
                    M->Nkp[M->kp_off[ba] + (size_t)la * M->ncol[ba] + (size_t)c] += wa * val[b];
                } else if (M->parent[bb] != ba) {
                    return false; /* not block-tree-sparse: a bug in the rows */
                }
            }
        }
    }
    for (size_t g = 0; g < M->ng; g++) {
        int k = M->blk[g];
        M->Nkk[M->kk_off[k] + (size_t)M->loc[g] * (M->bn[k] + 1)] += M->prior[g];
    }
    return true;
}

static bool factor(rb_map *M)
{
    for (size_t k = M->nb; k-- > 0;) {
        size_t n = M->bn[k], nc = M->ncol[k];
        if (n == 0)
            continue;
        double *C = M->Nkk + M->kk_off[k];
        if (!chol(C, n)) {
            M->fail_body = (int)k;
            return false;
        }
        int p = M->parent[k];
        if (p < 0 || nc == 0)
            continue;
        double *B = M->Nkp + M->kp_off[k], *Np = M->Nkk + M->kk_off[p];
        size_t np = M->bn[p];
        const int *cols = M->cols + 12 * k;
        fwd_mat(C, n, B, nc);
        double *U = M->wk; /* B^T B, lower triangle, by rows of B */
        memset(U, 0, nc * nc * sizeof *U);
        for (size_t i = 0; i < n; i++) {
            const double *Bi = B + i * nc;
            for (size_t a = 0; a < nc; a++) {
                double ba = Bi[a];
                for (size_t b = 0; b <= a; b++)
                    U[a * nc + b] += ba * Bi[b];
            }
        }
        for (size_t a = 0; a < nc; a++)
            for (size_t b = 0; b <= a; b++) {
                Np[(size_t)cols[a] * np + (size_t)cols[b]] -= U[a * nc + b];
                if (a != b)
                    Np[(size_t)cols[b] * np + (size_t)cols[a]] -= U[a * nc + b];
            }
    }
    return true;
}

/* x := N^-1 x, x block-ordered, with the factors. */
static void solve_blocks(rb_map *M, double *x)
{
    for (size_t k = M->nb; k-- > 0;) {
        size_t n = M->bn[k], nc = M->ncol[k];
        double *xk = x + M->boff[k];
        fwd(M->Nkk + M->kk_off[k], n, xk, 1);
        int p = M->parent[k];
        if (p < 0 || nc == 0)
            continue;
        const double *B = M->Nkp + M->kp_off[k];
        const int *cols = M->cols + 12 * k;
        for (size_t a = 0; a < nc; a++) {
            double s = 0.0;
            for (size_t i = 0; i < n; i++)
                s += B[i * nc + a] * xk[i];
            x[M->boff[p] + (size_t)cols[a]] -= s;
        }
    }
    for (size_t k = 0; k < M->nb; k++) {
        size_t n = M->bn[k], nc = M->ncol[k];
        double *xk = x + M->boff[k];
        int p = M->parent[k];
        if (p >= 0 && nc > 0) {
            const double *B = M->Nkp + M->kp_off[k], *xp = x + M->boff[p];
            const int *cols = M->cols + 12 * k;
            for (size_t i = 0; i < n; i++) {
                double s = 0.0;
                for (size_t a = 0; a < nc; a++)
                    s += B[i * nc + a] * xp[cols[a]];
                xk[i] -= s;
            }
        }
        bwd(M->Nkk + M->kk_off[k], n, xk, 1);
    }
}

/* g = Y^T W (rhs - A d) - P d, the normal equations' residual computed from the rows (not from N, whose
 * product would lose what its conditioning loses), at position pos[i] of out. */
static void normal_residual(const rb_map *M, double *out, bool blocks)
{
    const map_rows *R = &M->rows;
    memset(out, 0, M->ng * sizeof *out);
    for (size_t r = 0; r < R->n; r++) {
        const int *col = R->col + r * R->maxnz;
        const double *val = R->val + r * R->maxnz;
        double e = R->rhs[r];
        for (int j = 0; j < R->nz[r]; j++)
            e -= val[j] * M->d[col[j]];
        e *= R->w[r];
        for (int j = 0; j < R->nz[r]; j++) {
            size_t i = blocks ? M->boff[M->blk[col[j]]] + (size_t)M->loc[col[j]] : (size_t)col[j];
            out[i] += val[j] * e;
        }
    }
    for (size_t g = 0; g < M->ng; g++) {
        size_t i = blocks ? M->boff[M->blk[g]] + (size_t)M->loc[g] : g;
        out[i] -= M->prior[g] * M->d[g];
    }
}

/* Iterative refinement on the seminormal equations (Bjorck): the constraint rows weigh up to 1e10
 * times the sensor rows, which costs the normal equations digits the refinement gives back. */
#define MAP_REFINE_STEPS 1

static void solve(rb_map *M)
{
    double *x = M->x;
    memcpy(x, M->h, M->ng * sizeof *x);
    solve_blocks(M, x);
    for (size_t g = 0; g < M->ng; g++)
        M->d[g] = x[M->boff[M->blk[g]] + (size_t)M->loc[g]];
    for (int it = 0; it < MAP_REFINE_STEPS; it++) {
        normal_residual(M, x, true);
        solve_blocks(M, x);
        for (size_t g = 0; g < M->ng; g++)
            M->d[g] += x[M->boff[M->blk[g]] + (size_t)M->loc[g]];
    }
}

/* Sig_kk for every block, root first. */
static void covariance(rb_map *M)
{
    size_t mb = M->maxblock;
    double *Li = M->wk, *Z = Li + mb * mb, *W = Z + 12 * mb, *S = W + 12 * mb;
    for (size_t k = 0; k < M->nb; k++) {
        size_t n = M->bn[k], nc = M->ncol[k];
        if (n == 0)
            continue;
        const double *C = M->Nkk + M->kk_off[k];
        double *Sk = M->Sig + M->kk_off[k];
        /* Li = C^-1 (lower, row by row), then Sk = Li^T Li (lower triangle, accumulated over Li's rows) */
        memset(Li, 0, n * n * sizeof *Li);
        for (size_t i = 0; i < n; i++) {
            const double *Ci = C + i * n;
            double *restrict Lr = Li + i * n;
            Lr[i] = 1.0;
            for (size_t r = 0; r < i; r++) {
                double c = Ci[r];
                const double *restrict Lk = Li + r * n;
                for (size_t j = 0; j <= r; j++)
                    Lr[j] -= c * Lk[j];
            }
            double inv = 1.0 / Ci[i];
            for (size_t j = 0; j <= i; j++)
                Lr[j] *= inv;
        }
        memset(Sk, 0, n * n * sizeof *Sk);
        for (size_t r = 0; r < n; r++) {
            const double *restrict Lr = Li + r * n;
            for (size_t i = 0; i <= r; i++) {
                double li = Lr[i];
                double *restrict Si = Sk + i * n;
                for (size_t j = 0; j <= i; j++)
                    Si[j] += li * Lr[j];
            }
        }
        int p = M->parent[k];
        if (p >= 0 && nc > 0) {
            const double *B = M->Nkp + M->kp_off[k], *Sp = M->Sig + M->kk_off[p];
            size_t np = M->bn[p];
            const int *cols = M->cols + 12 * k;
            memcpy(Z, B, n * nc * sizeof *Z);
            bwd_mat(C, n, Z, nc);
            for (size_t a = 0; a < nc; a++)
                for (size_t b = 0; b < nc; b++)
                    S[a * nc + b] = Sp[(size_t)cols[a] * np + (size_t)cols[b]];
            memset(W, 0, n * nc * sizeof *W);
            for (size_t i = 0; i < n; i++) /* W = Z S */
                for (size_t a = 0; a < nc; a++) {
                    double z = Z[i * nc + a];
                    for (size_t b = 0; b < nc; b++)
                        W[i * nc + b] += z * S[a * nc + b];
                }
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j <= i; j++) {
                    double s = 0.0;
                    for (size_t b = 0; b < nc; b++)
                        s += W[i * nc + b] * Z[j * nc + b];
                    Sk[i * n + j] += s;
                }
        }
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < i; j++)
                Sk[j * n + i] = Sk[i * n + j];
    }
    for (size_t g = 0; g < M->ng; g++) {
        int k = M->blk[g];
        M->var_d[g] = M->Sig[M->kk_off[k] + (size_t)M->loc[g] * (M->bn[k] + 1)];
    }
    for (size_t b = 0; b < M->nb; b++) {
        if (M->gfx[b] < 0)
            continue;
        int k = M->blk[M->gfx[b]];
        size_t n = M->bn[k], l0 = (size_t)M->loc[M->gfx[b]];
        for (size_t i = 0; i < 6; i++)
            for (size_t j = 0; j < 6; j++)
                M->fxcov[36 * b + 6 * i + j] = M->Sig[M->kk_off[k] + (l0 + i) * n + l0 + j];
    }
}

bool map_solve_sparse(rb_map *M)
{
    M->fail_body = -1, M->fail_g = -1;
    if (!assemble(M))
        return false;
    if (!factor(M))
        return false;
    solve(M);
    if (M->cfg.covariance)
        covariance(M);
    return true;
}

/* A (rows x ng, column-major, rows scaled by sqrt(w)) and b. */
static void dense_rows(const rb_map *M)
{
    const map_rows *R = &M->rows;
    size_t lda = R->cap;
    memset(M->A, 0, lda * M->ng * sizeof *M->A);
    for (size_t r = 0; r < R->n; r++) {
        double s = sqrt(R->w[r]);
        for (int j = 0; j < R->nz[r]; j++)
            M->A[r + (size_t)R->col[r * R->maxnz + (size_t)j] * lda] += s * R->val[r * R->maxnz + (size_t)j];
        M->b[r] = s * R->rhs[r];
    }
}

void map_dense_normal(const rb_map *M, double *out)
{
    dense_rows(M);
    size_t ng = M->ng;
    if (M->rows.n > 0)
        cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, (int)ng, (int)M->rows.n, 1.0, M->A, (int)M->rows.cap, 0.0,
                    out, (int)ng);
    else
        memset(out, 0, ng * ng * sizeof *out);
    for (size_t g = 0; g < ng; g++) {
        out[g * (ng + 1)] += M->prior[g];
        for (size_t i = g + 1; i < ng; i++)
            out[g + i * ng] = out[i + g * ng];
    }
}

bool map_solve_dense(rb_map *M)
{
    M->fail_body = -1, M->fail_g = -1;
    size_t ng = M->ng;
    map_dense_normal(M, M->Nd);
    if (M->rows.n > 0)
        cblas_dgemv(CblasColMajor, CblasTrans, (int)M->rows.n, (int)ng, 1.0, M->A, (int)M->rows.cap, M->b, 1, 0.0,
                    M->hd, 1);
    else
        memset(M->hd, 0, ng * sizeof *M->hd);
    lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int)ng, M->Nd, (lapack_int)ng);
    if (info != 0) {
        M->fail_g = info > 0 ? (long)info - 1 : 0;
        return false;
    }
    memcpy(M->d, M->hd, ng * sizeof *M->d);
    LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', (lapack_int)ng, 1, M->Nd, (lapack_int)ng, M->d, (lapack_int)ng);
    for (int it = 0; it < MAP_REFINE_STEPS; it++) {
        normal_residual(M, M->hd, false);
        LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', (lapack_int)ng, 1, M->Nd, (lapack_int)ng, M->hd, (lapack_int)ng);
        for (size_t g = 0; g < ng; g++)
            M->d[g] += M->hd[g];
    }
    if (!M->cfg.covariance)
        return true;
    /* variances of the outputs only: |L^-1 e_g|^2 (the torques), and the f_x blocks from six columns each */
    for (size_t g = 0; g < ng; g++)
        M->var_d[g] = NAN;
    for (size_t b = 0; b < M->nb; b++) {
        long gs[7]; /* the torque, then the six f_x of a wide-prior link */
        size_t cnt = 0;
        if (M->gtau[b] >= 0)
            gs[cnt++] = M->gtau[b];
        bool fx = M->gfx[b] >= 0 && M->wide[b];
        if (fx)
            for (long j = 0; j < 6; j++)
                gs[cnt++] = M->gfx[b] + j;
        if (cnt == 0)
            continue;
        for (size_t j = 0; j < cnt; j++) {
            double *y = M->yd + j * ng;
            memset(y, 0, ng * sizeof *y);
            size_t g = (size_t)gs[j];
            y[g] = 1.0;
            cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, (int)(ng - g), M->Nd + g + g * ng,
                        (int)ng, y + g, 1);
            M->var_d[g] = cblas_ddot((int)ng, y, 1, y, 1);
        }
        if (fx) {
            size_t o = M->gtau[b] >= 0 ? 1 : 0;
            for (size_t i = 0; i < 6; i++)
                for (size_t j = 0; j < 6; j++)
                    M->fxcov[36 * b + 6 * i + j] =
                        cblas_ddot((int)ng, M->yd + (o + i) * ng, 1, M->yd + (o + j) * ng, 1);
        }
    }
    return true;
}
