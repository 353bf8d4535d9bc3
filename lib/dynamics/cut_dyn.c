/* Forward dynamics of the sub-models cut at FT sensors with the FT and contact wrenches as inputs: the process
 * model of the joint-torque UKF (seed 000 eq. 6). See roboest/dynamics.h ("forward dynamics of the sub-models")
 * for the equations. K is a CRBA (Featherstone table 6.2) whose composite inertias stop at the cut joints and
 * whose upward walk keeps only the lower-triangular half once it crosses a cut. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dyn_internal.h"
#include "ft_internal.h"

struct rb_cut_dyn {
    const rb_model *model; /* borrowed (names for messages) */
    const rb_submodels *sm;
    rb_dyn *dyn; /* owned: the per-body joint constants (dyn->body) */
    size_t nb, n, n_frames, n_ft, nc, n_sub;

    /* FT sensors of the set: tree child and parent of the joint, sign, reading frame in the tree child */
    int *ft_tc, *ft_tp, *ft_sigma;
    rb_xform *ft_XcF;
    unsigned char *cut; /* per body: its parent joint is a cut FT joint */
    int *c_body;        /* contacts: body and frame pose in it */
    rb_xform *c_X;

    /* configuration */
    bool configured, factored, have_vel;
    rb_xform *Xup, *X0;        /* parent_X_i and body i's pose in the base */
    double (*IC)[10];          /* composite inertias within the sub-models */
    double *K, *Kb, *Gft, *Gc; /* n x n, n x 6, n x 6 n_ft, n x 6 nc (row-major) */

    /* factorization: dofs grouped by sub-model, blk[k] .. blk[k + 1] in order[], Cholesky factors L (lower,
     * row-major n_k x n_k each, at Loff[k]) */
    int *order;
    size_t *blk, *Loff;
    double *L;
    double *tmp; /* n */

    /* velocities */
    double (*v)[6], (*a)[6], (*f)[6];

    /* batches of velocities (rb_cut_dyn_bias_batch): per body 6 rows of bcols values (body i, row c at
     * (6 i + c) bcols), capacity bcap columns; bdone: the last batch's column count (0: none since configure) */
    size_t bcap, bcols, bdone;
    double *bv, *ba, *bf;
    int *moving; /* the bodies a joint moves, in order (a fixed base's others keep zero velocity terms) */
    size_t n_moving;

    void *block;
};

/* ---- workspace --------------------------------------------------------------------------------------------- */

static void *carve(char *base, size_t *off, size_t bytes)
{
    size_t o = (*off + 63) & ~(size_t)63;
    *off = o + bytes;
    return base ? base + o : NULL;
}

static size_t layout(rb_cut_dyn *c, char *base)
{
    size_t off = 0, nb = c->nb, n = c->n, nf = c->n_ft, nc = c->nc;
    c->ft_tc = carve(base, &off, nf * sizeof *c->ft_tc);
    c->ft_tp = carve(base, &off, nf * sizeof *c->ft_tp);
    c->ft_sigma = carve(base, &off, nf * sizeof *c->ft_sigma);
    c->ft_XcF = carve(base, &off, nf * sizeof *c->ft_XcF);
    c->cut = carve(base, &off, nb * sizeof *c->cut);
    c->c_body = carve(base, &off, nc * sizeof *c->c_body);
    c->c_X = carve(base, &off, nc * sizeof *c->c_X);
    c->Xup = carve(base, &off, nb * sizeof *c->Xup);
    c->X0 = carve(base, &off, nb * sizeof *c->X0);
    c->IC = carve(base, &off, nb * sizeof *c->IC);
    c->K = carve(base, &off, n * n * sizeof *c->K);
    c->Kb = carve(base, &off, 6 * n * sizeof *c->Kb);
    c->Gft = carve(base, &off, 6 * n * nf * sizeof *c->Gft);
    c->Gc = carve(base, &off, 6 * n * nc * sizeof *c->Gc);
    c->order = carve(base, &off, n * sizeof *c->order);
    c->blk = carve(base, &off, (c->n_sub + 1) * sizeof *c->blk);
    c->Loff = carve(base, &off, c->n_sub * sizeof *c->Loff);
    c->L = carve(base, &off, n * n * sizeof *c->L);
    c->tmp = carve(base, &off, n * sizeof *c->tmp);
    c->v = carve(base, &off, nb * sizeof *c->v);
    c->a = carve(base, &off, nb * sizeof *c->a);
    c->f = carve(base, &off, nb * sizeof *c->f);
    return off;
}

static int setup(const rb_model *model, rb_cut_dyn *c, const char *const *contacts, rb_err *err)
{
    static const char what[] = "rb_cut_dyn_alloc";
    const rb_submodels *sm = c->sm;
    int rc = rbd_cut_fts(model, sm, c->ft_tc, c->ft_tp, c->ft_XcF, c->ft_sigma, c->cut, what, err);
    if (rc)
        return rc;
    for (size_t j = 0; j < c->nc; j++) {
        long f = rbd_contact_frame(model, contacts, j, what, err);
        if (f < 0)
            return (int)f;
        c->c_body[j] = model->frames[f].body;
        c->c_X[j] = model->frames[f].X_body;
    }
    /* dofs grouped by sub-model, in set order (a sub-model's base lies below its parent's bodies) */
    size_t pos = 0, loff = 0;
    for (size_t k = 0; k < c->n_sub; k++) {
        const rb_submodel *sub = &sm->sub[k];
        c->blk[k] = pos;
        c->Loff[k] = loff;
        for (size_t d = 0; d < sub->n_dofs; d++)
            c->order[pos++] = sub->dofs[d];
        loff += sub->n_dofs * sub->n_dofs;
    }
    c->blk[c->n_sub] = pos;
    if (pos != c->n)
        return rb_err_set(err, RB_EINVAL, "%s: the sub-models hold %zu dofs, the model %zu", what, pos, c->n);
    return RB_OK;
}

int rb_cut_dyn_alloc(const rb_model *model, const rb_submodels *sm, const char *const *contacts, size_t n_contacts,
                     rb_cut_dyn **out, rb_err *err)
{
    static const char what[] = "rb_cut_dyn_alloc";
    if (!model || !sm || !out || (n_contacts && !contacts))
        return rb_err_set(err, RB_EINVAL, "%s: NULL argument", what);
    *out = NULL;
    if (sm->n_bodies != model->n_bodies || sm->n_dofs != model->n_dofs || sm->n_frames != model->n_frames ||
        sm->n_model_ft != model->n_ft || sm->n_imu != model->n_imu)
        return rb_err_set(err, RB_EINVAL, "%s: the sub-models were built for another model", what);
    if (n_contacts > 100000)
        return rb_err_set(err, RB_EINVAL, "%s: %zu contacts is too many", what, n_contacts);
    int rc = RB_OK;
    rb_cut_dyn *c = rb_calloc(1, sizeof *c);
    if (!c)
        return rb_err_set(err, RB_ENOMEM, "out of memory (cut dynamics)");
    c->model = model;
    c->sm = sm;
    c->nb = model->n_bodies, c->n = model->n_dofs, c->n_frames = model->n_frames;
    c->n_ft = sm->n_ft, c->nc = n_contacts, c->n_sub = sm->n_sub;
    if ((rc = rb_dyn_alloc(model, &c->dyn, err)) < 0)
        goto done;
    size_t bytes = layout(c, NULL);
    if (!(c->block = rb_calloc(1, bytes + 64))) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory (cut dynamics, %zu bytes)", bytes);
        goto done;
    }
    layout(c, (char *)c->block + (64 - (uintptr_t)c->block % 64) % 64);
    if ((rc = setup(model, c, contacts, err)) < 0)
        goto done;
    *out = c;
    c = NULL;
done:
    rb_cut_dyn_free(c);
    return rc;
}

void rb_cut_dyn_free(rb_cut_dyn *cd)
{
    if (!cd)
        return;
    rb_dyn_free(cd->dyn);
    rb_free(cd->bv);
    rb_free(cd->moving);
    rb_free(cd->block);
    rb_free(cd);
}

static int check(const rb_model *model, const rb_cut_dyn *c, const char *what, rb_err *err)
{
    if (!model || !c)
        return rb_err_set(err, RB_EINVAL, "%s: NULL argument", what);
    if (c->nb != model->n_bodies || c->n != model->n_dofs || c->n_frames != model->n_frames)
        return rb_err_set(err, RB_EINVAL, "%s: the workspace was made for another model", what);
    return RB_OK;
}

static int check_vec(const double *x, size_t n, size_t expected, const char *what, const char *name, rb_err *err)
{
    if (n != expected)
        return rb_err_set(err, RB_EDIM, "%s: %s has %zu values, expected %zu", what, name, n, expected);
    if (!x && n)
        return rb_err_set(err, RB_EINVAL, "%s: NULL %s", what, name);
    for (size_t k = 0; k < n; k++)
        if (!isfinite(x[k]))
            return rb_err_set(err, RB_ENUMERIC, "%s: %s[%zu] is not finite", what, name, k);
    return RB_OK;
}

/* ---- configuration ------------------------------------------------------------------------------------------ */

/* Column `col` of G (n rows, stride ld): the generalized forces of the wrench e (coordinates of body b) acting
 * on body b, through the joints between b and its sub-model's base. */
static void walk_wrench(const rb_model *model, const rb_cut_dyn *c, int b, const double e_in[6], double *G, size_t ld,
                        size_t col)
{
    const dyn_body *B = c->dyn->body;
    double e[6], t[6];
    memcpy(e, e_in, sizeof e);
    for (int j = b;;) {
        int d = model->bodies[j].dof;
        if (d >= 0)
            G[(size_t)d * ld + col] = dyn_St(&B[j], e);
        if (j == 0 || c->cut[j])
            break;
        rb_xform_force(&c->Xup[j], e, t);
        memcpy(e, t, sizeof e);
        j = B[j].parent;
    }
}

static void mass_matrix(const rb_model *model, rb_cut_dyn *c)
{
    const dyn_body *B = c->dyn->body;
    size_t n = c->n;
    memset(c->K, 0, n * n * sizeof *c->K);
    for (size_t i = c->nb; i-- > 1;) {
        if (c->cut[i])
            continue;
        double t[10];
        rb_inertia_to_parent(&c->Xup[i], c->IC[i], t);
        for (int k = 0; k < 10; k++)
            c->IC[B[i].parent][k] += t[k];
    }
    for (size_t i = 1; i < c->nb; i++) {
        int di = model->bodies[i].dof;
        if (di < 0)
            continue;
        double S[6] = {0, 0, 0, 0, 0, 0}, F[6], t[6];
        dyn_add_S(&B[i], 1.0, S);
        rb_inertia_mul(c->IC[i], S, F);
        c->K[(size_t)di * n + (size_t)di] = dyn_St(&B[i], F);
        bool crossed = false;
        for (int j = (int)i; j != 0;) {
            crossed = crossed || c->cut[j];
            rb_xform_force(&c->Xup[j], F, t);
            memcpy(F, t, sizeof F);
            j = B[j].parent;
            int dj = model->bodies[j].dof;
            if (dj < 0)
                continue;
            double val = dyn_St(&B[j], F);
            c->K[(size_t)di * n + (size_t)dj] = val; /* torque at i for s_ddot_j: j is above i */
            if (!crossed)
                c->K[(size_t)dj * n + (size_t)di] = val; /* torque at j for s_ddot_i: same sub-model only */
        }
        memcpy(c->Kb + 6 * (size_t)di, F, sizeof F);
    }
}

int rb_cut_dyn_configure(const rb_model *model, rb_cut_dyn *cd, const double *s, size_t n, rb_err *err)
{
    static const char what[] = "rb_cut_dyn_configure";
    int rc = check(model, cd, what, err);
    if (rc < 0 || (rc = check_vec(s, n, cd->n, what, "s", err)) < 0)
        return rc;
    const dyn_body *B = cd->dyn->body;
    cd->configured = cd->factored = cd->have_vel = false;
    cd->bdone = 0;
    rb_xform_identity(&cd->Xup[0]);
    rb_xform_identity(&cd->X0[0]);
    memcpy(cd->IC[0], B[0].pi, sizeof cd->IC[0]);
    for (size_t i = 1; i < cd->nb; i++) {
        int d = model->bodies[i].dof;
        dyn_joint_xform(&B[i], d >= 0 ? s[d] : 0.0, &cd->Xup[i]);
        rb_xform_compose(&cd->X0[B[i].parent], &cd->Xup[i], &cd->X0[i]);
        memcpy(cd->IC[i], B[i].pi, sizeof cd->IC[i]);
    }
    mass_matrix(model, cd);
    size_t nft6 = 6 * cd->n_ft, nc6 = 6 * cd->nc;
    memset(cd->Gft, 0, cd->n * nft6 * sizeof *cd->Gft);
    memset(cd->Gc, 0, cd->n * nc6 * sizeof *cd->Gc);
    for (size_t k = 0; k < cd->n_ft; k++) {
        for (int m = 0; m < 6; m++) { /* the tree parent feels minus the wrench the reading puts on the child */
            double e[6] = {0, 0, 0, 0, 0, 0}, wc[6], wp[6];
            e[m] = -(double)cd->ft_sigma[k];
            rb_xform_force(&cd->ft_XcF[k], e, wc);
            rb_xform_force(&cd->Xup[cd->ft_tc[k]], wc, wp);
            walk_wrench(model, cd, cd->ft_tp[k], wp, cd->Gft, nft6, 6 * k + (size_t)m);
        }
    }
    for (size_t j = 0; j < cd->nc; j++) {
        for (int m = 0; m < 6; m++) {
            double e[6] = {0, 0, 0, 0, 0, 0}, wb[6];
            e[m] = 1.0;
            rb_xform_force(&cd->c_X[j], e, wb);
            walk_wrench(model, cd, cd->c_body[j], wb, cd->Gc, nc6, 6 * j + (size_t)m);
        }
    }
    cd->configured = true;
    return RB_OK;
}

rb_cut_dyn_mats rb_cut_dyn_get_mats(const rb_cut_dyn *cd)
{
    rb_cut_dyn_mats m;
    memset(&m, 0, sizeof m);
    if (!cd)
        return m;
    m.n = cd->n, m.n_ft = cd->n_ft, m.n_c = cd->nc;
    if (cd->configured)
        m.K = cd->K, m.Kb = cd->Kb, m.Gft = cd->Gft, m.Gc = cd->Gc;
    return m;
}

/* ---- factorization and solves ------------------------------------------------------------------------------- */

int rb_cut_dyn_factor(rb_cut_dyn *cd, const double *d, rb_err *err)
{
    static const char what[] = "rb_cut_dyn_factor";
    if (!cd)
        return rb_err_set(err, RB_EINVAL, "%s: NULL workspace", what);
    if (!cd->configured)
        return rb_err_set(err, RB_EINVAL, "%s: no configuration", what);
    size_t n = cd->n;
    cd->factored = false;
    for (size_t k = 0; k < cd->n_sub; k++) {
        size_t b0 = cd->blk[k], nk = cd->blk[k + 1] - b0;
        double *L = cd->L + cd->Loff[k];
        for (size_t r = 0; r < nk; r++)
            for (size_t q = 0; q < nk; q++) {
                size_t i = (size_t)cd->order[b0 + r], j = (size_t)cd->order[b0 + q];
                L[r * nk + q] = cd->K[i * n + j] + (d && i == j ? d[i] : 0.0);
            }
        /* Cholesky L L^T, lower triangle in place (blocks are a few joints: no LAPACK call) */
        for (size_t j = 0; j < nk; j++) {
            double s = L[j * nk + j];
            for (size_t p = 0; p < j; p++)
                s -= L[j * nk + p] * L[j * nk + p];
            if (!(s > 0.0) || !isfinite(s)) {
                const rb_model *m = cd->model;
                return rb_err_set(err, RB_ENUMERIC,
                                  "%s: the mass matrix of sub-model %zu (base %s) is not positive definite at joint %s "
                                  "(pivot %g)",
                                  what, k, m->bodies[cd->sm->sub[k].base].name, m->dof_names[cd->order[b0 + j]], s);
            }
            double ljj = sqrt(s);
            L[j * nk + j] = ljj;
            for (size_t i = j + 1; i < nk; i++) {
                double t = L[i * nk + j];
                for (size_t p = 0; p < j; p++)
                    t -= L[i * nk + p] * L[j * nk + p];
                L[i * nk + j] = t / ljj;
            }
        }
    }
    cd->factored = true;
    return RB_OK;
}

int rb_cut_dyn_solve(const rb_cut_dyn *cd, double *X, size_t cols, size_t ld, rb_err *err)
{
    static const char what[] = "rb_cut_dyn_solve";
    if (!cd || (!X && cols))
        return rb_err_set(err, RB_EINVAL, "%s: NULL argument", what);
    if (!cd->factored)
        return rb_err_set(err, RB_EINVAL, "%s: no factorization since the last configuration", what);
    if (ld < cols)
        return rb_err_set(err, RB_EDIM, "%s: stride %zu below %zu columns", what, ld, cols);
    size_t n = cd->n;
    double *y = cd->tmp;
    for (size_t col = 0; col < cols; col++) {
        for (size_t k = 0; k < cd->n_sub; k++) {
            size_t b0 = cd->blk[k], nk = cd->blk[k + 1] - b0;
            const double *L = cd->L + cd->Loff[k];
            /* rhs of the block: minus the coupling to the joints solved before (earlier blocks) */
            for (size_t r = 0; r < nk; r++) {
                size_t i = (size_t)cd->order[b0 + r];
                double t = X[i * ld + col];
                for (size_t q = 0; q < b0; q++) {
                    size_t j = (size_t)cd->order[q];
                    t -= cd->K[i * n + j] * X[j * ld + col];
                }
                y[r] = t;
            }
            for (size_t r = 0; r < nk; r++) { /* L y' = y */
                double t = y[r];
                for (size_t p = 0; p < r; p++)
                    t -= L[r * nk + p] * y[p];
                y[r] = t / L[r * nk + r];
            }
            for (size_t r = nk; r-- > 0;) { /* L^T x = y' */
                double t = y[r];
                for (size_t p = r + 1; p < nk; p++)
                    t -= L[p * nk + r] * y[p];
                y[r] = t / L[r * nk + r];
            }
            for (size_t r = 0; r < nk; r++)
                X[(size_t)cd->order[b0 + r] * ld + col] = y[r];
        }
    }
    return RB_OK;
}

/* ---- velocities ------------------------------------------------------------------------------------------------ */

int rb_cut_dyn_bias(const rb_model *model, rb_cut_dyn *cd, const double *s_dot, size_t n, const double *w_B, double *h,
                    rb_err *err)
{
    static const char what[] = "rb_cut_dyn_bias";
    int rc = check(model, cd, what, err);
    if (rc < 0 || (rc = check_vec(s_dot, n, cd->n, what, "s_dot", err)) < 0 ||
        (w_B && (rc = check_vec(w_B, 3, 3, what, "w_B", err)) < 0))
        return rc;
    if (!h && n)
        return rb_err_set(err, RB_EINVAL, "%s: NULL output", what);
    if (!cd->configured)
        return rb_err_set(err, RB_EINVAL, "%s: no configuration", what);
    const dyn_body *B = cd->dyn->body;
    double(*v)[6] = cd->v, (*a)[6] = cd->a, (*f)[6] = cd->f;
    memset(v[0], 0, sizeof v[0]);
    memset(a[0], 0, sizeof a[0]);
    if (w_B)
        memcpy(v[0] + 3, w_B, 3 * sizeof *w_B);
    for (size_t i = 0; i < cd->nb; i++) {
        const dyn_body *b = &B[i];
        if (i > 0) {
            rb_xform_motion_inv(&cd->Xup[i], v[b->parent], v[i]);
            rb_xform_motion_inv(&cd->Xup[i], a[b->parent], a[i]);
            int d = model->bodies[i].dof;
            if (d >= 0) {
                double qd = s_dot[d], cS[6];
                dyn_add_S(b, qd, v[i]);
                dyn_cross_S(b, v[i], qd, cS);
                for (int k = 0; k < 6; k++)
                    a[i][k] += cS[k];
            }
        }
        double Iv[6], vIv[6];
        rb_inertia_mul(b->pi, a[i], f[i]);
        rb_inertia_mul(b->pi, v[i], Iv);
        rb_cross_force(v[i], Iv, vIv);
        for (int k = 0; k < 6; k++)
            f[i][k] += vIv[k];
    }
    cd->have_vel = true;
    /* backward pass inside the sub-models; f becomes the wrench across each joint */
    for (size_t i = cd->nb; i-- > 1;) {
        int d = model->bodies[i].dof;
        if (d >= 0)
            h[d] = dyn_St(&B[i], f[i]);
        if (cd->cut[i])
            continue;
        double t[6];
        rb_xform_force(&cd->Xup[i], f[i], t);
        for (int k = 0; k < 6; k++)
            f[B[i].parent][k] += t[k];
    }
    return RB_OK;
}

/* ---- batches of velocities --------------------------------------------------------------------------------- */

/* The kernels below are rb_cut_dyn_bias's per-body operations (spatial.h, dyn_internal.h) written over nc columns at
 * once, each column's operations and their order unchanged: the same bits as one call per column, vectorized across
 * the columns (no contraction and no reassociation in ISO C, so the vector width changes no bit). Rows: 6 vectors of
 * nc values, row c at x + c ld. */
static int check_frame(const rb_model *model, const rb_cut_dyn *cd, size_t frame, const char *what, rb_err *err);

#define BATCH_KERNEL __attribute__((target_clones("avx2", "default")))
#define ROW(x, c) ((x) + (size_t)(c)*ld)

/* out = X^-1 m (rb_xform_motion_inv) */
static inline void motion_inv_b(const rb_xform *X, const double *restrict m, double *restrict out, size_t ld, size_t nc)
{
    const double *R = X->R, *p = X->p;
    const double *m0 = ROW(m, 0), *m1 = ROW(m, 1), *m2 = ROW(m, 2), *w0 = ROW(m, 3), *w1 = ROW(m, 4), *w2 = ROW(m, 5);
    double *o0 = ROW(out, 0), *o1 = ROW(out, 1), *o2 = ROW(out, 2), *o3 = ROW(out, 3), *o4 = ROW(out, 4),
           *o5 = ROW(out, 5);
    for (size_t j = 0; j < nc; j++) {
        double pw0 = p[1] * w2[j] - p[2] * w1[j], pw1 = p[2] * w0[j] - p[0] * w2[j], pw2 = p[0] * w1[j] - p[1] * w0[j];
        double v0 = m0[j] - pw0, v1 = m1[j] - pw1, v2 = m2[j] - pw2;
        o3[j] = R[0] * w0[j] + R[3] * w1[j] + R[6] * w2[j];
        o4[j] = R[1] * w0[j] + R[4] * w1[j] + R[7] * w2[j];
        o5[j] = R[2] * w0[j] + R[5] * w1[j] + R[8] * w2[j];
        o0[j] = R[0] * v0 + R[3] * v1 + R[6] * v2;
        o1[j] = R[1] * v0 + R[4] * v1 + R[7] * v2;
        o2[j] = R[2] * v0 + R[5] * v1 + R[8] * v2;
    }
}

/* v += S qd, then a += v x_m (S qd) (dyn_add_S, dyn_cross_S); qd row at qd with stride 1 */
static inline void joint_terms_b(const dyn_body *b, const double *restrict qd, double *restrict v, double *restrict a,
                                 size_t ld, size_t nc)
{
    const double k0 = b->k[0], k1 = b->k[1], k2 = b->k[2];
    bool rev = b->kind == JK_REVOLUTE;
    int o = rev ? 3 : 0;
    double *s0 = ROW(v, o), *s1 = ROW(v, o + 1), *s2 = ROW(v, o + 2);
    for (size_t j = 0; j < nc; j++)
        s0[j] += k0 * qd[j], s1[j] += k1 * qd[j], s2[j] += k2 * qd[j];
    /* revolute: [v_lin x s; w x s]; prismatic: [w x s; 0] */
    const double *x0 = ROW(v, rev ? 0 : 3), *x1 = ROW(v, rev ? 1 : 4), *x2 = ROW(v, rev ? 2 : 5);
    const double *w0 = ROW(v, 3), *w1 = ROW(v, 4), *w2 = ROW(v, 5);
    double *a0 = ROW(a, 0), *a1 = ROW(a, 1), *a2 = ROW(a, 2), *a3 = ROW(a, 3), *a4 = ROW(a, 4), *a5 = ROW(a, 5);
    for (size_t j = 0; j < nc; j++) {
        double t0 = k0 * qd[j], t1 = k1 * qd[j], t2 = k2 * qd[j];
        a0[j] += x1[j] * t2 - x2[j] * t1;
        a1[j] += x2[j] * t0 - x0[j] * t2;
        a2[j] += x0[j] * t1 - x1[j] * t0;
        if (rev) {
            a3[j] += w1[j] * t2 - w2[j] * t1;
            a4[j] += w2[j] * t0 - w0[j] * t2;
            a5[j] += w0[j] * t1 - w1[j] * t0;
        } else {
            a3[j] += 0.0, a4[j] += 0.0, a5[j] += 0.0;
        }
    }
}

/* f = I a + v x_f (I v) (rb_inertia_mul, rb_cross_force) */
static inline void body_wrench_b(const double pi[10], const double *restrict v, const double *restrict a,
                                 double *restrict f, size_t ld, size_t nc)
{
    const double mass = pi[0], h0 = pi[1], h1 = pi[2], h2 = pi[3];
    const double *v0 = ROW(v, 0), *v1 = ROW(v, 1), *v2 = ROW(v, 2), *w0 = ROW(v, 3), *w1 = ROW(v, 4), *w2 = ROW(v, 5);
    const double *a0 = ROW(a, 0), *a1 = ROW(a, 1), *a2 = ROW(a, 2), *b0 = ROW(a, 3), *b1 = ROW(a, 4), *b2 = ROW(a, 5);
    double *f0 = ROW(f, 0), *f1 = ROW(f, 1), *f2 = ROW(f, 2), *f3 = ROW(f, 3), *f4 = ROW(f, 4), *f5 = ROW(f, 5);
    for (size_t j = 0; j < nc; j++) {
        /* I a */
        double hw0 = h1 * b2[j] - h2 * b1[j], hw1 = h2 * b0[j] - h0 * b2[j], hw2 = h0 * b1[j] - h1 * b0[j];
        double hv0 = h1 * a2[j] - h2 * a1[j], hv1 = h2 * a0[j] - h0 * a2[j], hv2 = h0 * a1[j] - h1 * a0[j];
        double F0 = mass * a0[j] - hw0, F1 = mass * a1[j] - hw1, F2 = mass * a2[j] - hw2;
        double F3 = pi[4] * b0[j] + pi[5] * b1[j] + pi[6] * b2[j] + hv0;
        double F4 = pi[5] * b0[j] + pi[7] * b1[j] + pi[8] * b2[j] + hv1;
        double F5 = pi[6] * b0[j] + pi[8] * b1[j] + pi[9] * b2[j] + hv2;
        /* I v */
        double gw0 = h1 * w2[j] - h2 * w1[j], gw1 = h2 * w0[j] - h0 * w2[j], gw2 = h0 * w1[j] - h1 * w0[j];
        double gv0 = h1 * v2[j] - h2 * v1[j], gv1 = h2 * v0[j] - h0 * v2[j], gv2 = h0 * v1[j] - h1 * v0[j];
        double I0 = mass * v0[j] - gw0, I1 = mass * v1[j] - gw1, I2 = mass * v2[j] - gw2;
        double I3 = pi[4] * w0[j] + pi[5] * w1[j] + pi[6] * w2[j] + gv0;
        double I4 = pi[5] * w0[j] + pi[7] * w1[j] + pi[8] * w2[j] + gv1;
        double I5 = pi[6] * w0[j] + pi[8] * w1[j] + pi[9] * w2[j] + gv2;
        /* v x_f (I v) = [w x Iv_lin; w x Iv_ang + v_lin x Iv_lin] */
        double c0 = w1[j] * I2 - w2[j] * I1, c1 = w2[j] * I0 - w0[j] * I2, c2 = w0[j] * I1 - w1[j] * I0;
        double c3 = w1[j] * I5 - w2[j] * I4, c4 = w2[j] * I3 - w0[j] * I5, c5 = w0[j] * I4 - w1[j] * I3;
        double t0 = v1[j] * I2 - v2[j] * I1, t1 = v2[j] * I0 - v0[j] * I2, t2 = v0[j] * I1 - v1[j] * I0;
        c3 += t0, c4 += t1, c5 += t2;
        f0[j] = F0 + c0, f1[j] = F1 + c1, f2[j] = F2 + c2;
        f3[j] = F3 + c3, f4[j] = F4 + c4, f5[j] = F5 + c5;
    }
}

/* fp += X f (rb_xform_force) */
static inline void force_add_b(const rb_xform *X, const double *restrict f, double *restrict fp, size_t ld, size_t nc)
{
    const double *R = X->R, *p = X->p;
    const double *f0 = ROW(f, 0), *f1 = ROW(f, 1), *f2 = ROW(f, 2), *f3 = ROW(f, 3), *f4 = ROW(f, 4), *f5 = ROW(f, 5);
    double *g0 = ROW(fp, 0), *g1 = ROW(fp, 1), *g2 = ROW(fp, 2), *g3 = ROW(fp, 3), *g4 = ROW(fp, 4), *g5 = ROW(fp, 5);
    for (size_t j = 0; j < nc; j++) {
        double o0 = R[0] * f0[j] + R[1] * f1[j] + R[2] * f2[j];
        double o1 = R[3] * f0[j] + R[4] * f1[j] + R[5] * f2[j];
        double o2 = R[6] * f0[j] + R[7] * f1[j] + R[8] * f2[j];
        double o3 = R[0] * f3[j] + R[1] * f4[j] + R[2] * f5[j];
        double o4 = R[3] * f3[j] + R[4] * f4[j] + R[5] * f5[j];
        double o5 = R[6] * f3[j] + R[7] * f4[j] + R[8] * f5[j];
        double pf0 = p[1] * o2 - p[2] * o1, pf1 = p[2] * o0 - p[0] * o2, pf2 = p[0] * o1 - p[1] * o0;
        o3 += pf0, o4 += pf1, o5 += pf2;
        g0[j] += o0, g1[j] += o1, g2[j] += o2, g3[j] += o3, g4[j] += o4, g5[j] += o5;
    }
}

int rb_cut_dyn_reserve_batch(rb_cut_dyn *cd, size_t cols, rb_err *err)
{
    if (!cd)
        return rb_err_set(err, RB_EINVAL, "rb_cut_dyn_reserve_batch: NULL argument");
    if (cols <= cd->bcap)
        return RB_OK;
    size_t nb = cd->nb;
    double *mem = rb_calloc(3 * 6 * nb * cols + 1, sizeof *mem);
    int *mv = cd->moving ? cd->moving : rb_calloc(nb + 1, sizeof *mv);
    if (!mem || !mv) {
        rb_free(mem);
        if (mv != cd->moving)
            rb_free(mv);
        return rb_err_set(err, RB_ENOMEM, "out of memory (cut dynamics, batch of %zu)", cols);
    }
    rb_free(cd->bv);
    cd->bv = mem, cd->ba = mem + 6 * nb * cols, cd->bf = mem + 12 * nb * cols;
    cd->bcap = cols, cd->bcols = 0, cd->bdone = 0;
    cd->moving = mv, cd->n_moving = 0;
    for (size_t i = 1; i < nb; i++)
        if (cd->dyn->body[i].moving)
            mv[cd->n_moving++] = (int)i;
    return RB_OK;
}

/* rb_cut_dyn_bias_batch's passes (its arguments checked); static, so the clones' resolver stays out of the
 * library's exports */
BATCH_KERNEL
static void bias_batch(const rb_model *model, rb_cut_dyn *cd, const double *S_dot, size_t lds, const double *W_B,
                       size_t ldw, size_t cols, double *H, size_t ldh)
{
    const dyn_body *B = cd->dyn->body;
    size_t ld = cols, nb6 = 6 * ld;
    double *V = cd->bv, *A = cd->ba, *F = cd->bf;
    if (cols != cd->bcols) { /* a fixed base's still bodies keep zero velocity terms at this width */
        memset(V, 0, 6 * cd->nb * cd->bcap * sizeof *V);
        memset(A, 0, 6 * cd->nb * cd->bcap * sizeof *A);
        cd->bcols = cols;
    }
    memset(V, 0, nb6 * sizeof *V);
    memset(A, 0, nb6 * sizeof *A);
    for (size_t j = 0; W_B && j < cols; j++)
        for (int k = 0; k < 3; k++)
            V[(size_t)(3 + k) * ld + j] = W_B[j * ldw + (size_t)k];
    for (size_t m = 0; m < cd->n_moving; m++) {
        size_t i = (size_t)cd->moving[m];
        const dyn_body *b = &B[i];
        double *v = V + i * nb6, *a = A + i * nb6;
        motion_inv_b(&cd->Xup[i], V + (size_t)b->parent * nb6, v, ld, cols);
        motion_inv_b(&cd->Xup[i], A + (size_t)b->parent * nb6, a, ld, cols);
        int d = model->bodies[i].dof;
        if (d >= 0) {
            double *q = F + i * nb6; /* f is written after: its first row holds the joint's velocities */
            for (size_t j = 0; j < cols; j++)
                q[j] = S_dot[j * lds + (size_t)d];
            joint_terms_b(b, q, v, a, ld, cols);
        }
        body_wrench_b(b->pi, v, a, F + i * nb6, ld, cols);
    }
    for (size_t m = cd->n_moving; m-- > 0;) {
        size_t i = (size_t)cd->moving[m];
        int d = model->bodies[i].dof;
        const double *f = F + i * nb6;
        if (d >= 0) {
            bool rev = B[i].kind == JK_REVOLUTE;
            const double k0 = B[i].k[0], k1 = B[i].k[1], k2 = B[i].k[2];
            const double *x0 = ROW(f, rev ? 3 : 0), *x1 = ROW(f, rev ? 4 : 1), *x2 = ROW(f, rev ? 5 : 2);
            for (size_t j = 0; j < cols; j++)
                H[j * ldh + (size_t)d] = k0 * x0[j] + k1 * x1[j] + k2 * x2[j];
        }
        if (cd->cut[i] || B[i].parent <= 0 || !B[B[i].parent].moving) /* the base's wrench is not used */
            continue;
        force_add_b(&cd->Xup[i], f, F + (size_t)B[i].parent * nb6, ld, cols);
    }
    cd->bdone = cols;
}

int rb_cut_dyn_bias_batch(const rb_model *model, rb_cut_dyn *cd, const double *S_dot, size_t lds, const double *W_B,
                          size_t ldw, size_t cols, double *H, size_t ldh, rb_err *err)
{
    static const char what[] = "rb_cut_dyn_bias_batch";
    int rc = check(model, cd, what, err);
    if (rc < 0)
        return rc;
    if ((cols && (!S_dot || !H)) || lds < cd->n || ldh < cd->n || (W_B && ldw < 3))
        return rb_err_set(err, RB_EINVAL, "%s: NULL output or leading dimension too small", what);
    if (cols > cd->bcap)
        return rb_err_set(err, RB_EINVAL, "%s: %zu columns, %zu reserved (rb_cut_dyn_reserve_batch)", what, cols,
                          cd->bcap);
    if (!cd->configured)
        return rb_err_set(err, RB_EINVAL, "%s: no configuration", what);
    bias_batch(model, cd, S_dot, lds, W_B, ldw, cols, H, ldh);
    return RB_OK;
}

int rb_cut_dyn_frame_bias_batch(const rb_model *model, const rb_cut_dyn *cd, size_t frame, double *out, size_t ldo,
                                rb_err *err)
{
    static const char what[] = "rb_cut_dyn_frame_bias_batch";
    int rc = check_frame(model, cd, frame, what, err);
    if (rc < 0)
        return rc;
    if (!out || ldo < 3)
        return rb_err_set(err, RB_EINVAL, "%s: NULL output or leading dimension below 3", what);
    if (!cd->bdone)
        return rb_err_set(err, RB_EINVAL, "%s: no batch of velocities since the last configuration", what);
    const rb_frame *fr = &model->frames[frame];
    size_t ld = cd->bcols, nb6 = 6 * ld;
    const rb_xform *X = &fr->X_body;
    const double *v = cd->bv + (size_t)fr->body * nb6, *a = cd->ba + (size_t)fr->body * nb6;
    for (size_t j = 0; j < cd->bdone; j++) {
        double m[6], vF[6], aF[6], wv[3];
        for (int c = 0; c < 6; c++)
            m[c] = v[(size_t)c * ld + j];
        rb_xform_motion_inv(X, m, vF);
        for (int c = 0; c < 6; c++)
            m[c] = a[(size_t)c * ld + j];
        rb_xform_motion_inv(X, m, aF);
        rb_v3_cross(vF + 3, vF, wv);
        for (int k = 0; k < 3; k++)
            out[j * ldo + (size_t)k] = aF[k] + wv[k];
    }
    return RB_OK;
}
#undef ROW

/* ---- frames ---------------------------------------------------------------------------------------------------- */

static int check_frame(const rb_model *model, const rb_cut_dyn *cd, size_t frame, const char *what, rb_err *err)
{
    int rc = check(model, cd, what, err);
    if (rc < 0)
        return rc;
    if (frame >= model->n_frames)
        return rb_err_set(err, RB_EINVAL, "%s: frame %zu out of range (%zu frames)", what, frame, model->n_frames);
    if (!cd->configured)
        return rb_err_set(err, RB_EINVAL, "%s: no configuration", what);
    return RB_OK;
}

int rb_cut_dyn_frame_jacobian(const rb_model *model, const rb_cut_dyn *cd, size_t frame, double *J, rb_err *err)
{
    static const char what[] = "rb_cut_dyn_frame_jacobian";
    int rc = check_frame(model, cd, frame, what, err);
    if (rc < 0)
        return rc;
    if (!J)
        return rb_err_set(err, RB_EINVAL, "%s: NULL output", what);
    const dyn_body *B = cd->dyn->body;
    const rb_frame *fr = &model->frames[frame];
    size_t cols = 6 + cd->n;
    memset(J, 0, 6 * cols * sizeof *J);
    rb_xform T; /* the frame's pose in the base */
    rb_xform_compose(&cd->X0[fr->body], &fr->X_body, &T);
    for (int c = 0; c < 6; c++) {
        double u[6] = {0, 0, 0, 0, 0, 0}, o[6];
        u[c] = 1.0;
        rb_xform_motion_inv(&T, u, o);
        for (int r = 0; r < 6; r++)
            J[(size_t)r * cols + (size_t)c] = o[r];
    }
    for (int j = fr->body; j != 0; j = B[j].parent) {
        int d = model->bodies[j].dof;
        if (d < 0)
            continue;
        double S[6] = {0, 0, 0, 0, 0, 0}, Sb[6], o[6];
        dyn_add_S(&B[j], 1.0, S);
        rb_xform_motion(&cd->X0[j], S, Sb);
        rb_xform_motion_inv(&T, Sb, o);
        for (int r = 0; r < 6; r++)
            J[(size_t)r * cols + 6 + (size_t)d] = o[r];
    }
    return RB_OK;
}

int rb_cut_dyn_frame_bias(const rb_model *model, const rb_cut_dyn *cd, size_t frame, double out[6], rb_err *err)
{
    static const char what[] = "rb_cut_dyn_frame_bias";
    int rc = check_frame(model, cd, frame, what, err);
    if (rc < 0)
        return rc;
    if (!out)
        return rb_err_set(err, RB_EINVAL, "%s: NULL output", what);
    if (!cd->have_vel)
        return rb_err_set(err, RB_EINVAL, "%s: no velocities since the last configuration", what);
    const rb_frame *fr = &model->frames[frame];
    double vF[6], wv[3];
    rb_xform_motion_inv(&fr->X_body, cd->v[fr->body], vF);
    rb_xform_motion_inv(&fr->X_body, cd->a[fr->body], out);
    rb_v3_cross(vF + 3, vF, wv);
    for (int k = 0; k < 3; k++)
        out[k] += wv[k];
    return RB_OK;
}
