/* FT-sensor-based joint torque estimation: the "RNEA-based estimation using FT sensors" baseline of the
 * joint-torque paper (seed 000), on the sub-models of submodel.c. See roboest/dynamics.h for the method. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dyn_internal.h"
#include "ft_internal.h"

struct rb_ft_est {
    const rb_submodels *sm;
    rb_dyn *dyn; /* owned: the per-body joint constants (dyn->body) */
    size_t nb, n, n_frames, n_ft, nc, n_sub;
    int imu_body; /* the IMU frame S: its body and pose there */
    rb_xform imu_X;

    /* per FT sensor of the set: its joint's tree child and parent; the reading y maps to the wrench the tree
     * parent exerts on the tree child, in tree-child coordinates, as sigma * X_cF^* y */
    int *ft_tc, *ft_tp, *ft_sigma;
    rb_xform *ft_XcF;
    unsigned char *cut; /* per body: its parent joint is a cut FT joint */

    /* contacts, and their order grouped by sub-model (sub_first / sub_count into c_order) */
    int *c_frame, *c_body, *c_sub, *c_order, *all_order;
    size_t *sub_first, *sub_count;
    rb_xform *c_X; /* the contact frame's pose in its body */
    rb_xform *c_T; /* scratch: the contact frame's pose in its system's base */

    /* per-sample scratch */
    rb_xform *Xup, *X0; /* parent_X_i, and body i's pose in the base */
    double (*v)[6], (*a)[6], (*f)[6], (*F)[6], (*res)[6];
    double *w; /* contact wrenches, 6 per contact */
    bool have_res;

    void *block;
};

/* ---- workspace --------------------------------------------------------------------------------------------- */

static void *carve(char *base, size_t *off, size_t bytes)
{
    size_t o = (*off + 63) & ~(size_t)63;
    *off = o + bytes;
    return base ? base + o : NULL;
}

static size_t layout(rb_ft_est *e, char *base)
{
    size_t off = 0, nb = e->nb, nf = e->n_ft, nc = e->nc, ns = e->n_sub;
    e->ft_tc = carve(base, &off, nf * sizeof *e->ft_tc);
    e->ft_tp = carve(base, &off, nf * sizeof *e->ft_tp);
    e->ft_sigma = carve(base, &off, nf * sizeof *e->ft_sigma);
    e->ft_XcF = carve(base, &off, nf * sizeof *e->ft_XcF);
    e->cut = carve(base, &off, nb * sizeof *e->cut);
    e->c_frame = carve(base, &off, nc * sizeof *e->c_frame);
    e->c_body = carve(base, &off, nc * sizeof *e->c_body);
    e->c_sub = carve(base, &off, nc * sizeof *e->c_sub);
    e->c_order = carve(base, &off, nc * sizeof *e->c_order);
    e->all_order = carve(base, &off, nc * sizeof *e->all_order);
    e->sub_first = carve(base, &off, ns * sizeof *e->sub_first);
    e->sub_count = carve(base, &off, ns * sizeof *e->sub_count);
    e->c_X = carve(base, &off, nc * sizeof *e->c_X);
    e->c_T = carve(base, &off, nc * sizeof *e->c_T);
    e->Xup = carve(base, &off, nb * sizeof *e->Xup);
    e->X0 = carve(base, &off, nb * sizeof *e->X0);
    e->v = carve(base, &off, nb * sizeof *e->v);
    e->a = carve(base, &off, nb * sizeof *e->a);
    e->f = carve(base, &off, nb * sizeof *e->f);
    e->F = carve(base, &off, nb * sizeof *e->F);
    e->res = carve(base, &off, ns * sizeof *e->res);
    e->w = carve(base, &off, 6 * nc * sizeof *e->w);
    return off;
}

/* Set up the FT sensors and contacts of a laid-out workspace. */
static int setup(const rb_model *model, rb_ft_est *e, const char *const *contacts, rb_err *err)
{
    static const char what[] = "rb_ft_est_alloc";
    const rb_submodels *sm = e->sm;
    int rc = rbd_cut_fts(model, sm, e->ft_tc, e->ft_tp, e->ft_XcF, e->ft_sigma, e->cut, what, err);
    if (rc)
        return rc;
    for (size_t j = 0; j < e->nc; j++) {
        long f = rbd_contact_frame(model, contacts, j, what, err);
        if (f < 0)
            return (int)f;
        e->c_frame[j] = (int)f;
        e->c_body[j] = model->frames[f].body;
        e->c_sub[j] = sm->body_sub[e->c_body[j]];
        e->c_X[j] = model->frames[f].X_body;
        e->all_order[j] = (int)j;
        e->sub_count[e->c_sub[j]]++;
    }
    for (size_t k = 1; k < e->n_sub; k++)
        e->sub_first[k] = e->sub_first[k - 1] + e->sub_count[k - 1];
    for (size_t k = 0; k < e->n_sub; k++)
        e->sub_count[k] = 0;
    for (size_t j = 0; j < e->nc; j++) {
        size_t k = (size_t)e->c_sub[j];
        e->c_order[e->sub_first[k] + e->sub_count[k]++] = (int)j;
    }
    return RB_OK;
}

int rb_ft_est_alloc(const rb_model *model, const rb_submodels *sm, const char *imu_frame, const char *const *contacts,
                    size_t n_contacts, rb_ft_est **out, rb_err *err)
{
    static const char what[] = "rb_ft_est_alloc";
    if (!model || !sm || !out || (n_contacts && !contacts))
        return rb_err_set(err, RB_EINVAL, "%s: NULL argument", what);
    *out = NULL;
    if (sm->n_bodies != model->n_bodies || sm->n_dofs != model->n_dofs || sm->n_frames != model->n_frames ||
        sm->n_model_ft != model->n_ft || sm->n_imu != model->n_imu)
        return rb_err_set(err, RB_EINVAL, "%s: the sub-models were built for another model", what);
    long imu_f = -1;
    if (imu_frame && (imu_f = rb_model_frame_index(model, imu_frame)) < 0)
        return rb_err_set(err, RB_ENOTFOUND, "%s: IMU frame %s: no such frame in model %s", what, imu_frame,
                          model->name ? model->name : "");
    if (n_contacts > 100000)
        return rb_err_set(err, RB_EINVAL, "%s: %zu contacts is too many", what, n_contacts);

    int rc = RB_OK;
    rb_ft_est *e = rb_calloc(1, sizeof *e);
    if (!e)
        return rb_err_set(err, RB_ENOMEM, "out of memory (FT estimator)");
    e->sm = sm;
    e->nb = model->n_bodies, e->n = model->n_dofs, e->n_frames = model->n_frames;
    e->n_ft = sm->n_ft, e->nc = n_contacts, e->n_sub = sm->n_sub;
    if (imu_f >= 0) {
        e->imu_body = model->frames[imu_f].body;
        e->imu_X = model->frames[imu_f].X_body;
    } else {
        e->imu_body = 0;
        rb_xform_identity(&e->imu_X);
    }
    if ((rc = rb_dyn_alloc(model, &e->dyn, err)) < 0)
        goto done;
    size_t bytes = layout(e, NULL);
    if (!(e->block = rb_calloc(1, bytes + 64))) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory (FT estimator, %zu bytes)", bytes);
        goto done;
    }
    layout(e, (char *)e->block + (64 - (uintptr_t)e->block % 64) % 64);
    if ((rc = setup(model, e, contacts, err)) < 0)
        goto done;
    *out = e;
    e = NULL;
done:
    rb_ft_est_free(e);
    return rc;
}

void rb_ft_est_free(rb_ft_est *est)
{
    if (!est)
        return;
    rb_dyn_free(est->dyn);
    rb_free(est->block);
    rb_free(est);
}

size_t rb_ft_est_n_contacts(const rb_ft_est *est) { return est ? est->nc : 0; }

/* ---- per sample --------------------------------------------------------------------------------------------- */

/* Forward pass (Featherstone table 5.1) with the base state from the IMU at S (header, step 1): Xup, X0, body
 * twists v (base linear velocity zero), proper accelerations a and f_i = I_i a_i + v_i x* I_i v_i. */
static void forward(const rb_model *model, rb_ft_est *e, const rb_ft_est_input *in)
{
    const dyn_body *B = e->dyn->body;
    const size_t nb = e->nb;
    rb_xform *Xup = e->Xup, *X0 = e->X0;
    double(*v)[6] = e->v, (*a)[6] = e->a;

    /* poses and the velocities the joints alone give (base still) */
    rb_xform_identity(&Xup[0]);
    rb_xform_identity(&X0[0]);
    memset(v[0], 0, sizeof v[0]);
    for (size_t i = 1; i < nb; i++) {
        const dyn_body *b = &B[i];
        int d = model->bodies[i].dof;
        dyn_joint_xform(b, b->kind != JK_FIXED ? in->s[d] : 0.0, &Xup[i]);
        rb_xform_compose(&X0[b->parent], &Xup[i], &X0[i]);
        rb_xform_motion_inv(&Xup[i], v[b->parent], v[i]);
        if (b->kind != JK_FIXED)
            dyn_add_S(b, in->s_dot[d], v[i]);
    }
    rb_xform XS; /* S in the base: (R_BS, p_BS) */
    rb_xform_compose(&X0[e->imu_body], &e->imu_X, &XS);
    double vS[6], aS[6], t[3], u[3];
    rb_xform_motion_inv(&e->imu_X, v[e->imu_body], vS);
    for (int k = 0; k < 3; k++) /* w_B = R_BS (w_S - w_rel) */
        t[k] = in->gyro[k] - vS[3 + k];
    double v0[6] = {0, 0, 0, 0, 0, 0};
    rb_m3_mul_v(XS.R, t, v0 + 3);

    /* twists with the base rotating at w_B, accelerations with the base's accelerations zero */
    memcpy(v[0], v0, sizeof v0);
    memset(a[0], 0, sizeof a[0]);
    for (size_t i = 1; i < nb; i++) {
        const dyn_body *b = &B[i];
        int p = b->parent, d = model->bodies[i].dof;
        rb_xform_motion_inv(&Xup[i], v[p], v[i]);
        rb_xform_motion_inv(&Xup[i], a[p], a[i]);
        if (b->kind != JK_FIXED) {
            double qd = in->s_dot[d], cS[6];
            dyn_add_S(b, qd, v[i]);
            dyn_cross_S(b, v[i], qd, cS);
            for (int k = 0; k < 6; k++)
                a[i][k] += cS[k];
            dyn_add_S(b, in->s_ddot[d], a[i]);
        }
    }
    /* the base acceleration giving S the measured one: alpha_B = R_BS (alpha_S - alpha_rel),
     * a_B = R_BS (a_S - w_S x v_S - a_rel) + p_BS x alpha_B */
    rb_xform_motion_inv(&e->imu_X, v[e->imu_body], vS);
    rb_xform_motion_inv(&e->imu_X, a[e->imu_body], aS);
    double a0[6], wv[3], pa[3];
    for (int k = 0; k < 3; k++)
        t[k] = (in->alpha ? in->alpha[k] : 0.0) - aS[3 + k];
    rb_m3_mul_v(XS.R, t, a0 + 3);
    rb_v3_cross(vS + 3, vS, wv);
    for (int k = 0; k < 3; k++)
        u[k] = in->acc[k] - wv[k] - aS[k];
    rb_m3_mul_v(XS.R, u, a0);
    rb_v3_cross(XS.p, a0 + 3, pa);
    for (int k = 0; k < 3; k++)
        a0[k] += pa[k];

    /* accelerations are affine in the base's: a_i += iX_B a_B; then the body wrenches */
    for (size_t i = 0; i < nb; i++) {
        double ai[6], Iv[6], vIv[6];
        rb_xform_motion_inv(&X0[i], a0, ai);
        for (int k = 0; k < 6; k++)
            a[i][k] += ai[k];
        rb_inertia_mul(B[i].pi, a[i], e->f[i]);
        rb_inertia_mul(B[i].pi, v[i], Iv);
        rb_cross_force(v[i], Iv, vIv);
        for (int k = 0; k < 6; k++)
            e->f[i][k] += vIv[k];
    }
}

/* F_i = f_i - (external wrenches on body i): the FT readings ft (NULL: none) on both sides of their joints, the
 * contact wrenches w (NULL: none). */
static void init_F(rb_ft_est *e, const double *ft, const double *w)
{
    memcpy(e->F, e->f, e->nb * sizeof *e->F);
    for (size_t k = 0; ft && k < e->n_ft; k++) {
        int c = e->ft_tc[k], p = e->ft_tp[k];
        double wc[6], wp[6];
        rb_xform_force(&e->ft_XcF[k], ft + 6 * k, wc);
        for (int i = 0; i < 6; i++)
            wc[i] *= e->ft_sigma[k];
        rb_xform_force(&e->Xup[c], wc, wp); /* the tree parent feels -wc */
        for (int i = 0; i < 6; i++)
            e->F[c][i] -= wc[i], e->F[p][i] += wp[i];
    }
    for (size_t j = 0; w && j < e->nc; j++) {
        double wb[6];
        rb_xform_force(&e->c_X[j], w + 6 * j, wb);
        for (int i = 0; i < 6; i++)
            e->F[e->c_body[j]][i] -= wb[i];
    }
}

/* RNEA backward pass: tau_i = S_i^T F_i (tau may be NULL), F_p += pX_i^* F_i, stopping at cut joints if `cuts`.
 * Afterwards F at a sub-model's base (or at the base) is the wrench its bodies still need. */
static void backward(const rb_model *model, rb_ft_est *e, bool cuts, double *tau)
{
    const dyn_body *B = e->dyn->body;
    double t[6];
    for (size_t i = e->nb; i-- > 1;) {
        const dyn_body *b = &B[i];
        if (tau && b->kind != JK_FIXED)
            tau[model->bodies[i].dof] = dyn_St(b, e->F[i]);
        if (cuts && e->cut[i])
            continue;
        rb_xform_force(&e->Xup[i], e->F[i], t);
        for (int k = 0; k < 6; k++)
            e->F[b->parent][k] += t[k];
    }
}

/* Contact frame poses in their system's base: the sub-model base (per_sub) or the model base. */
static void contact_poses(rb_ft_est *e, bool per_sub)
{
    for (size_t j = 0; j < e->nc; j++) {
        rb_xform XbF, inv, t;
        rb_xform_compose(&e->X0[e->c_body[j]], &e->c_X[j], &XbF);
        int base = per_sub ? e->sm->sub[e->c_sub[j]].base : 0;
        if (base == 0) {
            e->c_T[j] = XbF;
        } else {
            rb_xform_inverse(&e->X0[base], &inv);
            rb_xform_compose(&inv, &XbF, &t);
            e->c_T[j] = t;
        }
    }
}

/* The contact wrenches w_j (j = idx[0..m)) with sum_j X_j^* w_j = r, X_j = c_T[j] (header, step 3): one contact
 * w = X^-* r; several: the minimum-norm w_j = X_j^T y, (sum_j X_j^* X_j^T) y = r, where X^T, the transpose of
 * the force transform, is the inverse motion transform. False if that 6 x 6 system is singular. */
static bool solve_contacts(rb_ft_est *e, const int *idx, size_t m, const double r[6])
{
    if (m == 0)
        return true;
    if (m == 1) {
        rb_xform_force_inv(&e->c_T[idx[0]], r, e->w + 6 * idx[0]);
        return true;
    }
    double G[36] = {0}, y[6];
    for (size_t j = 0; j < m; j++) {
        const rb_xform *T = &e->c_T[idx[j]];
        for (int c = 0; c < 6; c++) {
            double unit[6] = {0, 0, 0, 0, 0, 0}, u[6], g[6];
            unit[c] = 1.0;
            rb_xform_motion_inv(T, unit, u);
            rb_xform_force(T, u, g);
            for (int i = 0; i < 6; i++)
                G[6 * i + c] += g[i];
        }
    }
    if (!rbd_spd6_solve(G, r, y))
        return false;
    for (size_t j = 0; j < m; j++)
        rb_xform_motion_inv(&e->c_T[idx[j]], y, e->w + 6 * idx[j]);
    return true;
}

static int check_finite(const double *x, size_t n, const char *what, const char *name, rb_err *err)
{
    for (size_t k = 0; k < n; k++)
        if (!isfinite(x[k]))
            return rb_err_set(err, RB_ENUMERIC, "%s: %s[%zu] is not finite", what, name, k);
    return RB_OK;
}

static int check_call(const rb_model *model, const rb_ft_est *e, const rb_ft_est_input *in, bool with_ft,
                      const char *what, rb_err *err)
{
    if (!model || !e || !in)
        return rb_err_set(err, RB_EINVAL, "%s: NULL argument", what);
    if (e->nb != model->n_bodies || e->n != model->n_dofs || e->n_frames != model->n_frames)
        return rb_err_set(err, RB_EINVAL, "%s: the estimator was made for another model", what);
    if (in->n != e->n)
        return rb_err_set(err, RB_EDIM, "%s: %zu joint values, the model has %zu dofs", what, in->n, e->n);
    if (e->n && (!in->s || !in->s_dot || !in->s_ddot))
        return rb_err_set(err, RB_EINVAL, "%s: NULL joint positions, velocities or accelerations", what);
    if (with_ft && in->n_ft_values != 6 * e->n_ft)
        return rb_err_set(err, RB_EDIM, "%s: %zu FT values, expected %zu (6 for each of %zu sensors)", what,
                          in->n_ft_values, 6 * e->n_ft, e->n_ft);
    if (with_ft && e->n_ft && !in->ft)
        return rb_err_set(err, RB_EINVAL, "%s: NULL FT readings", what);
    int rc;
    if ((rc = check_finite(in->s, e->n, what, "s", err)) < 0 ||
        (rc = check_finite(in->s_dot, e->n, what, "s_dot", err)) < 0 ||
        (rc = check_finite(in->s_ddot, e->n, what, "s_ddot", err)) < 0 ||
        (rc = check_finite(in->acc, 3, what, "acc", err)) < 0 ||
        (rc = check_finite(in->gyro, 3, what, "gyro", err)) < 0 ||
        (in->alpha && (rc = check_finite(in->alpha, 3, what, "alpha", err)) < 0) ||
        (with_ft && (rc = check_finite(in->ft, 6 * e->n_ft, what, "ft", err)) < 0))
        return rc;
    return RB_OK;
}

static int check_out(const double *x, size_t n, size_t expected, bool optional, const char *what, const char *name,
                     rb_err *err)
{
    if (optional && !x && n == 0)
        return RB_OK;
    if (n != expected)
        return rb_err_set(err, RB_EDIM, "%s: %s has %zu values, expected %zu", what, name, n, expected);
    if (!x && n)
        return rb_err_set(err, RB_EINVAL, "%s: NULL %s", what, name);
    return RB_OK;
}

int rb_ft_est_torques(const rb_model *model, rb_ft_est *est, const rb_ft_est_input *in, double *tau, size_t n_tau,
                      double *wrenches, size_t n_wrench_values, rb_err *err)
{
    static const char what[] = "rb_ft_est_torques";
    int rc = check_call(model, est, in, true, what, err);
    if (rc < 0 || (rc = check_out(tau, n_tau, est->n, false, what, "tau", err)) < 0 ||
        (rc = check_out(wrenches, n_wrench_values, 6 * est->nc, true, what, "the contact wrenches", err)) < 0)
        return rc;
    est->have_res = false;
    forward(model, est, in);
    /* the wrench each sub-model needs beyond its FT wrenches, then its contacts */
    init_F(est, in->ft, NULL);
    backward(model, est, true, NULL);
    contact_poses(est, true);
    for (size_t k = 0; k < est->n_sub; k++) {
        const rb_submodel *sub = &est->sm->sub[k];
        if (!solve_contacts(est, est->c_order + est->sub_first[k], est->sub_count[k], est->F[sub->base]))
            return rb_err_set(err, RB_ENUMERIC, "%s: singular contact system in sub-model %zu", what, k);
    }
    /* torques with the FT and contact wrenches; what is left at each sub-model base is its residual */
    init_F(est, in->ft, est->w);
    backward(model, est, true, tau);
    for (size_t k = 0; k < est->n_sub; k++)
        memcpy(est->res[k], est->F[est->sm->sub[k].base], sizeof est->res[k]);
    est->have_res = true;
    if (wrenches)
        memcpy(wrenches, est->w, 6 * est->nc * sizeof *wrenches);
    return RB_OK;
}

int rb_ft_est_predict_ft(const rb_model *model, rb_ft_est *est, const rb_ft_est_input *in, const double *wrenches_in,
                         double *ft_out, size_t n_ft_values, double *wrenches_out, size_t n_wrench_values, rb_err *err)
{
    static const char what[] = "rb_ft_est_predict_ft";
    int rc = check_call(model, est, in, false, what, err);
    if (rc < 0 || (rc = check_out(ft_out, n_ft_values, 6 * est->n_ft, false, what, "the FT output", err)) < 0 ||
        (rc = check_out(wrenches_out, n_wrench_values, 6 * est->nc, true, what, "the contact wrenches", err)) < 0 ||
        (wrenches_in && (rc = check_finite(wrenches_in, 6 * est->nc, what, "wrenches_in", err)) < 0))
        return rc;
    forward(model, est, in);
    if (wrenches_in) {
        memcpy(est->w, wrenches_in, 6 * est->nc * sizeof *est->w);
    } else { /* the whole robot, no cut: the contacts balance its Newton-Euler equations */
        init_F(est, NULL, NULL);
        backward(model, est, false, NULL);
        contact_poses(est, false);
        if (!solve_contacts(est, est->all_order, est->nc, est->F[0]))
            return rb_err_set(err, RB_ENUMERIC, "%s: singular contact system", what);
    }
    init_F(est, NULL, est->w);
    backward(model, est, false, NULL);
    for (size_t k = 0; k < est->n_ft; k++) { /* y = sigma X_cF^-* (wrench of the tree parent on the tree child) */
        rb_xform_force_inv(&est->ft_XcF[k], est->F[est->ft_tc[k]], ft_out + 6 * k);
        for (int i = 0; i < 6; i++)
            ft_out[6 * k + i] *= est->ft_sigma[k];
    }
    if (wrenches_out)
        memcpy(wrenches_out, est->w, 6 * est->nc * sizeof *wrenches_out);
    return RB_OK;
}

int rb_ft_est_residual(const rb_ft_est *est, size_t sub, double out[6], rb_err *err)
{
    if (!est || !out)
        return rb_err_set(err, RB_EINVAL, "rb_ft_est_residual: NULL argument");
    if (sub >= est->n_sub)
        return rb_err_set(err, RB_EINVAL, "rb_ft_est_residual: sub-model %zu out of range (%zu)", sub, est->n_sub);
    if (!est->have_res)
        return rb_err_set(err, RB_EINVAL, "rb_ft_est_residual: no estimate computed");
    memcpy(out, est->res[sub], 6 * sizeof *out);
    return RB_OK;
}
