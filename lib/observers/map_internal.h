/* Private to lib/observers: the MAP dynamics workspace (roboest/observers.h, rb_map_*), shared by map.c (set-up,
 * kinematics, rows, outputs) and map_solve.c (the block-tree and dense solvers, which read the rows and the layout
 * and never call back into map.c). */
#ifndef ROBOEST_MAP_INTERNAL_H
#define ROBOEST_MAP_INTERNAL_H

#include "roboest/observers.h"

/* One row of D or Y: sum_j val[j] d[col[j]] = rhs, weight w = 1 / variance. */
typedef struct map_rows {
    size_t n, cap, maxnz;
    int *nz;      /* cap: entries per row */
    int *col;     /* cap x maxnz: global indices into d */
    double *val;  /* cap x maxnz */
    double *rhs;  /* cap */
    double *w;    /* cap */
    bool *sensor; /* cap: a sensor row (else a constraint row) */
} map_rows;

struct rb_map {
    const rb_model *m;
    rb_map_config cfg; /* the arrays point into this struct's copies */
    size_t nb, n, ng;  /* bodies, dofs, unknowns */
    bool floating;
    /* per body: offsets in d (-1: absent), children */
    long *ga, *gf, *gtau, *gfx, *gqdd;
    int *parent;
    /* per body: the external-wrench prior: 1 wide (unknown or known link), 0 tight */
    unsigned char *wide;
    /* per sensor, precomputed */
    int *ft_body;    /* n_ft: the FT joint's tree child j (its f_j is measured) */
    double *ft_M;    /* 36 n_ft: y = M f_j, row-major */
    int *acc_body;   /* n_acc */
    rb_xform *acc_X; /* n_acc: frame pose in its body */
    int *gyro_body;
    rb_xform *gyro_X;
    int *known_body;
    double *known_M; /* 36 n_known: y = M f_x_b */
    int *unk_body;
    double *unk_M; /* 36 n_unknown: wrench at the frame = M f_x_b */
    double *prior; /* ng: precision of each unknown */
    /* kinematics of the sample */
    rb_xform *Xup;     /* nb: body in parent */
    double (*R0)[9];   /* nb: body axes in base axes */
    double (*S)[6];    /* nb: joint motion subspace */
    double (*v)[6];    /* nb: velocity */
    double (*vrel)[6]; /* nb: velocity with a still base */
    double (*c)[6];    /* nb: v x S qd */
    double a0[6];      /* fixed base: -g */
    double w0[3];
    map_rows rows;
    /* block layout (sparse solver): block k = [a, f_x, tau, qdd, f_c of the children]; f_c sits in its parent's */
    int *blk, *loc; /* ng: block and position in it of each unknown */
    size_t *bn;     /* nb: block size */
    size_t *boff;   /* nb: block offset in the block-ordered vector */
    size_t *ncol;   /* nb: columns of the parent's block coupled to block k (its a_p, its own f_k) */
    int *cols;      /* 12 nb: those columns (positions in the parent's block) */
    size_t *kk_off; /* nb: N_kk (bn^2) in Nkk; its Cholesky factor in place */
    size_t *kp_off; /* nb: N_kp (bn x ncol) in Nkp; then B_k = C_k^-1 N_kp */
    double *Nkk, *Nkp;
    double *h, *x;                    /* block-ordered right-hand side and solution */
    double *wk;                       /* scratch: B^T B (12 x 12) */
    int *row_blk, *row_loc, *row_cpl; /* scratch, maxnz each: a row's entries' block, position, parent column */
    /* the outputs' columns of L^-1 (map_cov_layout), numbered so that each subtree's are contiguous */
    size_t n_cov, cov_ysize;
    size_t *cov_lo, *cov_w, *cov_yoff; /* nb: block k's first column, its subtree's count, its rows' offset */
    long *cov_fx;                      /* nb: a wide-prior body's first f_x column, else -1 */
    long *cov_g;                       /* n_cov: the unknown of each column */
    double *cov_Y;                     /* cov_ysize: block k's bn x cov_w rows */
    double *cov_ss;                    /* n_cov: each column's sum of squares */
    size_t maxblock;
    /* dense solver */
    double *A, *b, *Nd, *hd, *yd; /* rows x ng (column-major), rows, ng x ng, ng, ng */
    /* results */
    double *d, *var_d; /* ng each: estimate, its variance */
    double *fxcov;     /* 36 nb: the covariance of each body's f_x (body axes) */
    double *tau, *tau_std, *wrench, *wrench_std;
    double residual;
    size_t rows_used, dropped;
    bool have_out;
    rb_map_diag diag;
    int fail_body; /* the body whose block was not positive definite, -1 */
    long fail_g;   /* dense: the unknown at the failing leading minor */
};

/* map_rows.c: the rows of a sample (q, qd finite) into map->rows, after the kinematics and (floating base) the base
 * rate from the gyroscopes; false when a floating base had no finite gyroscope reading (w_0 = 0 then). */
bool map_build(rb_map *map, const rb_map_input *in);
/* 6 x 6 row-major matrices of roboest/spatial.h's force transforms (X the pose of B in A): B -> A, A -> B; C = A B. */
void map_force_mat(const rb_xform *X, double M[36]);
void map_force_inv_mat(const rb_xform *X, double M[36]);
void map_mat6_mul(const double A[36], const double B[36], double C[36]);

/* map_solve.c: the normal equations from the rows and the prior, solved; d and (with cfg.covariance) var_d and fxcov set.
 * Returns false when N is not positive definite (fail_body / fail_g set). */
bool map_solve_sparse(rb_map *map);
/* The covariance's column layout for map_solve_sparse (after layout and the priors); false: out of memory. */
bool map_cov_layout(rb_map *map);
bool map_solve_dense(rb_map *map);
/* Dense N (ng x ng, column-major, both triangles) from the rows and the prior into out. */
void map_dense_normal(const rb_map *map, double *out);

#endif
