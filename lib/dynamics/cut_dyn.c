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
