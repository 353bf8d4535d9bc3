/* Private to lib/dynamics: the workspace layout and small inline helpers shared by its files. */
#ifndef ROBOEST_DYN_INTERNAL_H
#define ROBOEST_DYN_INTERNAL_H

#include <stdbool.h>
#include <string.h>

#include "roboest/dynamics.h"

enum { LEVEL_NONE = 0, LEVEL_POS = 1, LEVEL_VEL = 2, LEVEL_ACC = 3 };

/* Joint kinds. */
enum { JK_FIXED = 0, JK_REVOLUTE, JK_PRISMATIC };

typedef struct dyn_body {
    int parent;  /* -1 for the base */
    int qi, vi;  /* index in q and in nu (7 + dof, 6 + dof for a floating base), -1 for a fixed joint */
    int kind;    /* JK_* */
    bool moving; /* a joint between the root and the body moves it (always, for a floating base); a fixed
                      * base's non-moving bodies take no part in M or in forward dynamics */
    double k[3]; /* unit axis, body frame */
    rb_xform Xp; /* X_parent */
    /* Revolute: the joint's rotation composed with X_parent's, R(q) = Rp Rot(k, q) = cos q C + sin q A + B with
     * C = Rp - B, A = Rp [k]x, B = (Rp k) k^T (Rodrigues' formula multiplied out once). Prismatic: Rpk. */
    double C[9], A[9], B[9];
    double Rpk[3];
    double pi[10]; /* inertial parameters */
} dyn_body;

/* The mass matrix's forward pass (folded.c) works on columns of 4 (3 used): a node's joint constants (dyn_body's C, A,
 * B, the pose's Xp.p and Rpk; a prismatic joint's C holds Xp.R), and a pose (R by columns, p). */
typedef struct rbd_jcols {
    double C[3][4], A[3][4], B[3][4], p[4], Rpk[4];
} rbd_jcols;
typedef struct rbd_pose4 {
    double c[3][4], p[4];
} rbd_pose4;

struct rb_dyn {
    size_t nb, nv, nq, n_dofs;
    bool floating;
    dyn_body *body;

    /* kinematic state (rb_dyn_kinematics) */
    int level;
    rb_xform *kXup, *kX0; /* parent_X_i and W_X_i */
    double (*kv)[6];      /* body twists, body coordinates */
    double (*kab)[6];     /* accelerations with nu_dot = 0 (no gravity) */
    double (*ka)[6];      /* accelerations with the state's nu_dot (no gravity) */
    double (*kIC)[10];    /* composite inertias of the state (centroidal functions) */

    /* Joint transforms, recomputed only when the joint positions change: Xup (the dynamics passes) holds those of
     * xq, kXup (the kinematic state) those of kq, when the flag says so. */
    double *xq, *kq;
    bool xq_valid, kq_valid;

    /* dynamics scratch */
    rb_xform *Xup;
    double (*v)[6], (*a)[6], (*f)[6];
    double (*IC)[10];
    double (*IA)[36], (*pA)[6], (*U)[6], (*c)[6], *D, *u;
    int rnea_valid;      /* f holds the joint wrenches of the last RNEA */
    double *M, *h, *tmp; /* nv x nv, nv, nv */

    /* The folded tree (folded.c): node 0 the root, then the bodies with a movable joint in body order, each with
     * the bodies fixed joints attach to it folded in (node parent: the parent node; Xp: from the parent node's
     * frame; pi: the folded inertia). */
    size_t nn;
    dyn_body *node;
    int *node_of;      /* nb: the node a body is folded into */
    rb_xform *Xnode;   /* nb: a body's pose in its node's frame (constant) */
    rbd_jcols *NJ;     /* nn: the nodes' joint constants by columns (rbd_fold; rbd_crba_folded) */
    rbd_pose4 *NX;     /* nn: the nodes' poses in the root's frame, by columns (rbd_crba_folded's vector passes) */
    rb_xform *NXs;     /* nn: the same, its scalar passes' */
    bool crba_vec;     /* the vector passes (an x86-64 CPU with AVX2; set by rbd_fold, the tests clear it) */
    double (*NIC)[10]; /* nn: composite inertias, the root's frame */
    double (*NS)[6];   /* nn: motion subspaces, the root's frame */
    /* The whole matrix by subtrees (rbd_crba_folded): node n's subtree lies in the nodes n .. nend[n] - 1 (all of them
     * when the body order is depth first, as the URDF reader makes it); ncols[n]: their columns follow the nodes'. NF:
     * the nodes' F = IC S by components (6 rows of nn + 4). */
    int *nend;
    unsigned char *ncols;
    double *NF;
    int *trow, *vrow;  /* nn: a node's coordinate in the tree order, its velocity index (-1 for the root) */
    int *tperm, *tpar; /* nv: tree order -> velocity index; parent coordinate in the tree order, -1 at the top */
    size_t *toff;      /* nv: where a coordinate's compact row starts (ws->M, rbd_tree_ltl) */
    int *tdep, *tanc;  /* nv: a coordinate's number of ancestors; the compact rows' coordinates */
    size_t n_zrun;
    int (*zrun)[3];              /* the zeros of M (joints on different branches): row, first column, length */
    unsigned char *rest_scratch; /* nn + nv bytes (rbd_fold) */

    /* RNEA on a fixed base (rnea.c): the bodies that do not move have v = 0 and a constant acceleration and wrench;
     * kept for the gravity g_rest they were computed with (rest_valid). */
    bool rest_valid, rest_in_place; /* rest_in_place: v, a, f of those bodies hold them (any other pass clears it) */
    double g_rest[3];
    double (*a_rest)[6], (*f_rest)[6];
    unsigned char *rest; /* nb: REST_* of each body */

    /* contacts */
    size_t max_rows;
    double *Jc, *Y, *S, *rhs, *lam; /* rows x nv, nv x rows, rows x rows, rows, rows */
    void *contact_block;

    void *block;
};

/* How RNEA treats a body on a fixed base: moving; not moving, with a moving body in its subtree (its wrench still
 * collects its children's); not moving and nothing below moves (its wrench is constant). */
enum { REST_MOVING = 0, REST_PATH, REST_STILL };

/* ---- helpers shared between files ----------------------------------------------------------------- */

int rbd_check(const rb_model *model, const rb_dyn *ws, rb_err *err);
/* Xup from the joint value (revolute, prismatic, fixed). */
static inline void dyn_joint_xform(const dyn_body *b, double x, rb_xform *X)
{
    switch (b->kind) {
    case JK_REVOLUTE: {
        double c = cos(x), s = sin(x);
        for (int k = 0; k < 9; k++)
            X->R[k] = c * b->C[k] + s * b->A[k] + b->B[k];
        X->p[0] = b->Xp.p[0], X->p[1] = b->Xp.p[1], X->p[2] = b->Xp.p[2];
        break;
    }
    case JK_PRISMATIC:
        memcpy(X->R, b->Xp.R, sizeof X->R);
        for (int k = 0; k < 3; k++)
            X->p[k] = b->Xp.p[k] + x * b->Rpk[k];
        break;
    default: *X = b->Xp; break;
    }
}

/* World pose of the floating base from q (p, quaternion w x y z). */
static inline void dyn_base_pose(const double *q, rb_xform *X)
{
    rb_m3_from_quat(q + 3, X->R);
    X->p[0] = q[0], X->p[1] = q[1], X->p[2] = q[2];
}

/* Motion subspace S of a 1-dof joint times a scalar, added: out += S x. */
static inline void dyn_add_S(const dyn_body *b, double x, double out[6])
{
    int o = b->kind == JK_REVOLUTE ? 3 : 0;
    out[o] += b->k[0] * x, out[o + 1] += b->k[1] * x, out[o + 2] += b->k[2] * x;
}
/* S^T f */
static inline double dyn_St(const dyn_body *b, const double f[6])
{
    const double *x = b->kind == JK_REVOLUTE ? f + 3 : f;
    return b->k[0] * x[0] + b->k[1] * x[1] + b->k[2] * x[2];
}
/* out = v x_m (S qd) for a 1-dof joint: the velocity-product acceleration c_i of table 5.1. */
static inline void dyn_cross_S(const dyn_body *b, const double v[6], double qd, double out[6])
{
    double s[3] = {b->k[0] * qd, b->k[1] * qd, b->k[2] * qd};
    if (b->kind == JK_REVOLUTE) { /* [v_lin x s; w x s] */
        rb_v3_cross(v, s, out);
        rb_v3_cross(v + 3, s, out + 3);
    } else { /* [w x s; 0] */
        rb_v3_cross(v + 3, s, out);
        out[3] = out[4] = out[5] = 0.0;
    }
}

/* ws->Xup (rbd_joint_xforms) or ws->kXup (rbd_kin_joint_xforms) for the joint positions of q: reused when they are
 * the ones held, copied from the other array when it holds them, else computed. */
void rbd_joint_xforms(rb_dyn *ws, const double *q);
void rbd_kin_joint_xforms(rb_dyn *ws, const double *q);

/* World pose of body i from the Xup chain and the base pose (walks to the root). */
void rbd_body_world_pose(const rb_dyn *ws, const rb_xform *Xup, const rb_xform *X0base, int i, rb_xform *out);
/* Wrench `e` as a force on its frame's body, in body coordinates. Xup/X0base give the configuration. */
void rbd_ext_to_body(const rb_model *model, const rb_dyn *ws, const rb_xform *Xup, const rb_xform *X0base,
                     const rb_ext_wrench *e, double out[6]);
int rbd_check_ext(const rb_model *model, const rb_ext_wrench *ext, size_t n_ext, rb_err *err);
/* The checks every dynamics entry point makes: workspace for this model, q and the output given, and the
 * external wrenches valid; `what` names the function in the message. */
int rbd_check_call(const rb_model *model, rb_dyn *ws, const double *q, const double *out, const rb_ext_wrench *ext,
                   size_t n_ext, const char *what, rb_err *err);
/* Solve A x = b for a symmetric positive-definite 6 x 6 A by Cholesky (A is not modified); false if A is not
 * positive definite. */
bool rbd_spd6_solve(const double A[36], const double b[6], double x[6]);
/* RNEA into tau (no argument checks); leaves Xup, v, a, f of the configuration. */
int rbd_rnea(const rb_model *model, rb_dyn *ws, const double *q, const double *nu, const double *nu_dot,
             const rb_ext_wrench *ext, size_t n_ext, double *tau);
/* The inertial-parameter regressor's block of one body: f = I(pi) a + v x* I(pi) v = K pi, F[c] the column of
 * pi_c (v, a the body's twist and proper acceleration, body coordinates). */
void rbd_regressor_block(const double v[6], const double a[6], double F[10][6]);
/* Writes body i's block F onto the generalized forces its parameters produce: tau_j = S_j^T X*_{j<-i} F for the
 * joints j from i to the root (floating base: the base's 6 rows), at Y[row * stride + col + c]; other rows are
 * not touched. F is overwritten. Uses ws->Xup (a forward pass at the configuration). */
void rbd_regressor_project(const rb_dyn *ws, size_t i, double F[10][6], double *Y, size_t stride, size_t col);
/* Kinematic state (no argument checks); with_vel: velocities and accelerations, NULL nu / nu_dot as zero. */
void rbd_kinematics(rb_dyn *ws, const double *q, const double *nu, const double *nu_dot, bool with_vel);

/* folded.c: a joint's constants C, A, B, Rpk from its Xp, k and kind */
void rbd_body_joint_consts(dyn_body *d);
/* Builds the folded tree from ws->body (at allocation); rbd_fold_inertia sums the folded inertias again (after a
 * body's inertia changed). */
void rbd_fold(rb_dyn *ws);
void rbd_fold_inertia(rb_dyn *ws);
/* The mass matrix on the folded tree: M != NULL, the whole symmetric matrix (row stride ld); M == NULL, into ws->M in
 * the compact tree rows rbd_tree_ltl factors. */
void rbd_crba_folded(rb_dyn *ws, const double *q, double *M, size_t ld);
/* H = L^T L in place in ws->M (compact tree rows: row k's diagonal then its entries at its ancestors, nearest
 * first; the tree order has parents first, so L has no fill-in), the diagonal stored as 1 / L_kk; false if H is
 * not positive definite. */
bool rbd_tree_ltl(rb_dyn *ws);
/* x <- H^-1 x (x in the tree order) with H factored by rbd_tree_ltl. */
void rbd_tree_solve(const rb_dyn *ws, double *x);

#endif
