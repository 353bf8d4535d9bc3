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
 * N_kp is non-zero only in the columns of a_p and f_k (at most 12): B_k is kept on those. Only the outputs'
 * variances are computed, each |L^-1 e_g|^2 over g's block and its ancestors (a selected inverse of every diagonal
 * block cost twice the solve).
 * The small dense kernels are written out (blocks of 12 to about 40 unknowns; no allocation, no LAPACK call). */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "map_internal.h"

/* The block kernels' loops vectorize; AVX2 where the CPU has it, chosen at load time. Only the vector width differs:
 * no contraction (ISO C mode) and no reassociation, so every machine gets the same bits. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KERNEL __attribute__((target_clones("avx2", "default")))
#else
#define KERNEL
#endif

/* Lower Cholesky factor in place (row-major n x n, the upper triangle left alone); false unless positive definite. */
KERNEL static bool chol(double *A, size_t n)
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

/* x := L^-1 x. */
static void fwd(const double *L, size_t n, double *x)
{
    for (size_t i = 0; i < n; i++) {
        const double *Li = L + i * n;
        double s = x[i];
        for (size_t k = 0; k < i; k++)
            s -= Li[k] * x[k];
        x[i] = s / Li[i];
    }
}

/* x := L^-T x, along L's rows: x_i done, carried into the rows above. */
static void bwd(const double *L, size_t n, double *x)
{
    for (size_t i = n; i-- > 0;) {
        const double *Li = L + i * n;
        double xi = x[i] / Li[i];
        x[i] = xi;
        for (size_t k = 0; k < i; k++)
            x[k] -= Li[k] * xi;
    }
}

/* X := L^-1 X, X n x m row-major (rows at a time: the inner loops run along X's rows). */
KERNEL static void fwd_mat(const double *restrict L, size_t n, double *restrict X, size_t m)
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

KERNEL static bool assemble(rb_map *M)
{
    memset(M->h, 0, M->ng * sizeof *M->h);
    for (size_t k = 0; k < M->nb; k++) {
        memset(M->Nkk + M->kk_off[k], 0, M->bn[k] * M->bn[k] * sizeof(double));
        memset(M->Nkp + M->kp_off[k], 0, M->bn[k] * M->ncol[k] * sizeof(double));
    }
    const map_rows *R = &M->rows;
    int *bk = M->row_blk, *lk = M->row_loc, *ck = M->row_cpl;
    for (size_t r = 0; r < R->n; r++) {
        const int *col = R->col + r * R->maxnz;
        const double *val = R->val + r * R->maxnz;
        int nz = R->nz[r], child = -1, other = -1;
        /* a row touches one block, or a block and its parent (the child's entries couple to the parent's) */
        for (int j = 0; j < nz; j++) {
            bk[j] = M->blk[col[j]], lk[j] = M->loc[col[j]];
            if (bk[j] != bk[0])
                other = bk[j];
        }
        if (other >= 0) {
            if (M->parent[bk[0]] == other)
                child = bk[0];
            else if (M->parent[other] == bk[0])
                child = other;
            else
                return false; /* not block-tree-sparse: a bug in the rows */
            for (int j = 0; j < nz; j++)
                if (bk[j] != child && (ck[j] = coupled(M, (size_t)child, col[j])) < 0)
                    return false;
        }
        double w = R->w[r];
        for (int a = 0; a < nz; a++) {
            int ba = bk[a];
            size_t la = (size_t)lk[a];
            double wa = w * val[a];
            M->h[M->boff[ba] + la] += wa * R->rhs[r];
            double *Nrow = M->Nkk + M->kk_off[ba] + la * M->bn[ba];
            double *Prow = ba == child ? M->Nkp + M->kp_off[ba] + la * M->ncol[ba] : NULL;
            for (int b = 0; b < nz; b++) {
                if (bk[b] == ba)
                    Nrow[lk[b]] += wa * val[b];
                else if (Prow)
                    Prow[ck[b]] += wa * val[b];
            }
        }
    }
    for (size_t g = 0; g < M->ng; g++) {
        int k = M->blk[g];
        M->Nkk[M->kk_off[k] + (size_t)M->loc[g] * (M->bn[k] + 1)] += M->prior[g];
    }
    return true;
}

KERNEL static bool factor(rb_map *M)
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
KERNEL static void solve_blocks(rb_map *M, double *x)
{
    for (size_t k = M->nb; k-- > 0;) {
        size_t n = M->bn[k], nc = M->ncol[k];
        double *xk = x + M->boff[k];
        fwd(M->Nkk + M->kk_off[k], n, xk);
        int p = M->parent[k];
        if (p < 0 || nc == 0)
            continue;
        const double *B = M->Nkp + M->kp_off[k];
        const int *cols = M->cols + 12 * k;
        double s[12] = {0}; /* B^T xk, each sum in i order, along B's rows */
        for (size_t i = 0; i < n; i++)
            for (size_t a = 0; a < nc; a++)
                s[a] += B[i * nc + a] * xk[i];
        for (size_t a = 0; a < nc; a++)
            x[M->boff[p] + (size_t)cols[a]] -= s[a];
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
        bwd(M->Nkk + M->kk_off[k], n, xk);
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

bool map_cov_layout(rb_map *M)
{
    size_t nb = M->nb, *sub = rb_calloc(nb, sizeof *sub), *next = rb_calloc(nb, sizeof *next);
    M->cov_lo = rb_calloc(nb, sizeof *M->cov_lo), M->cov_w = rb_calloc(nb, sizeof *M->cov_w);
    M->cov_yoff = rb_calloc(nb, sizeof *M->cov_yoff), M->cov_fx = rb_calloc(nb, sizeof *M->cov_fx);
    bool ok = sub && next && M->cov_lo && M->cov_w && M->cov_yoff && M->cov_fx;
    if (ok) {
        size_t own_total = 0;
        for (size_t k = nb; k-- > 0;) { /* columns per subtree, leaves first */
            size_t own = (M->gtau[k] >= 0) + (M->gfx[k] >= 0 && M->wide[k] ? 6 : 0);
            own_total += own;
            sub[k] += own;
            if (M->parent[k] >= 0)
                sub[M->parent[k]] += sub[k];
        }
        size_t root_next = 0, yoff = 0;
        for (size_t k = 0; k < nb; k++) { /* preorder ranges: a parent's own columns, then its children's */
            int p = M->parent[k];
            size_t lo = p >= 0 ? next[p] : root_next;
            if (p >= 0)
                next[p] += sub[k];
            else
                root_next += sub[k];
            M->cov_lo[k] = lo, M->cov_w[k] = sub[k], next[k] = lo + (M->gtau[k] >= 0);
            M->cov_fx[k] = M->gfx[k] >= 0 && M->wide[k] ? (long)next[k] : -1;
            if (M->cov_fx[k] >= 0)
                next[k] += 6;
            M->cov_yoff[k] = yoff, yoff += M->bn[k] * sub[k];
        }
        M->n_cov = own_total;
        ok = (M->cov_g = rb_calloc(own_total + 1, sizeof *M->cov_g)) &&
             (M->cov_ss = rb_calloc(own_total + 1, sizeof *M->cov_ss)) &&
             (M->cov_Y = rb_calloc(yoff + 1, sizeof(double)));
        M->cov_ysize = yoff;
        for (size_t k = 0; ok && k < nb; k++) {
            if (M->gtau[k] >= 0)
                M->cov_g[M->cov_lo[k]] = M->gtau[k];
            for (long j = 0; M->cov_fx[k] >= 0 && j < 6; j++)
                M->cov_g[M->cov_fx[k] + j] = M->gfx[k] + j;
        }
    }
    rb_free(sub), rb_free(next);
    return ok;
}

/* Variances of the outputs only, as the dense path: |L^-1 e_g|^2 for each torque, and each wide-prior link's f_x
 * block from its six columns. With the leaves eliminated first, L^-1 e_g is non-zero only on g's block and its
 * ancestors: the forward half of solve_blocks, on every output's column at once. The columns are numbered so that
 * each subtree's are contiguous (map_cov_layout): block k carries its subtree's cov_w[k] columns. */
KERNEL static void covariance(rb_map *M)
{
    double *Yall = M->cov_Y;
    memset(Yall, 0, M->cov_ysize * sizeof *Yall);
    for (size_t g = 0; g < M->ng; g++)
        M->var_d[g] = NAN;
    memset(M->cov_ss, 0, M->n_cov * sizeof *M->cov_ss);
    for (size_t c = 0; c < M->n_cov; c++) {
        long g = M->cov_g[c];
        int k = M->blk[g];
        Yall[M->cov_yoff[k] + (size_t)M->loc[g] * M->cov_w[k] + c - M->cov_lo[k]] = 1.0;
    }
    for (size_t b = 0; b < M->nb; b++)
        if (M->cov_fx[b] >= 0)
            memset(M->fxcov + 36 * b, 0, 36 * sizeof *M->fxcov);
    for (size_t k = M->nb; k-- > 0;) {
        size_t n = M->bn[k], w = M->cov_w[k], lo = M->cov_lo[k];
        if (n == 0 || w == 0)
            continue;
        double *Y = Yall + M->cov_yoff[k];
        fwd_mat(M->Nkk + M->kk_off[k], n, Y, w);
        double *ss = M->cov_ss + lo;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < w; j++)
                ss[j] += Y[i * w + j] * Y[i * w + j];
        for (size_t b = 0; b < M->nb; b++) { /* the f_x blocks whose columns pass through k */
            long c0 = M->cov_fx[b];
            if (c0 < (long)lo || c0 >= (long)(lo + w))
                continue;
            double *C = M->fxcov + 36 * b;
            const double *Yc = Y + (size_t)c0 - lo;
            for (size_t i = 0; i < n; i++) /* the lower triangle; mirrored at the end */
                for (size_t r = 0; r < 6; r++)
                    for (size_t q = 0; q <= r; q++)
                        C[6 * r + q] += Yc[i * w + r] * Yc[i * w + q];
        }
        int p = M->parent[k];
        size_t nc = M->ncol[k];
        if (p < 0 || nc == 0)
            continue;
        const double *B = M->Nkp + M->kp_off[k];
        const int *cols = M->cols + 12 * k;
        size_t wp = M->cov_w[p];
        double *Yp = Yall + M->cov_yoff[p] + lo - M->cov_lo[p];
        for (size_t a = 0; a < nc; a++) {
            double *row = Yp + (size_t)cols[a] * wp;
            for (size_t i = 0; i < n; i++) {
                double v = B[i * nc + a];
                const double *Yi = Y + i * w;
                for (size_t j = 0; j < w; j++)
                    row[j] -= v * Yi[j];
            }
        }
    }
    for (size_t c = 0; c < M->n_cov; c++)
        M->var_d[M->cov_g[c]] = M->cov_ss[c];
    for (size_t b = 0; b < M->nb; b++)
        for (size_t r = 0; M->cov_fx[b] >= 0 && r < 6; r++)
            for (size_t q = 0; q < r; q++)
                M->fxcov[36 * b + 6 * q + r] = M->fxcov[36 * b + 6 * r + q];
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
