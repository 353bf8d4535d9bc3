/* Workspace: one block sized from the model, per-body constants, configuration helpers, shared helpers. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dyn_internal.h"

#define DEFAULT_CONTACT_ROWS 24

/* Carve aligned arrays out of one block: a first pass with base == NULL only sums the sizes. */
static void *carve(char *base, size_t *off, size_t bytes)
{
    size_t o = (*off + 63) & ~(size_t)63;
    *off = o + bytes;
    return base ? base + o : NULL;
}

static size_t layout(rb_dyn *ws, char *base)
{
    size_t off = 0, nb = ws->nb, nv = ws->nv;
    ws->body = carve(base, &off, nb * sizeof *ws->body);
    ws->kXup = carve(base, &off, nb * sizeof *ws->kXup);
    ws->kX0 = carve(base, &off, nb * sizeof *ws->kX0);
    ws->kv = carve(base, &off, nb * sizeof *ws->kv);
    ws->kab = carve(base, &off, nb * sizeof *ws->kab);
    ws->ka = carve(base, &off, nb * sizeof *ws->ka);
    ws->kIC = carve(base, &off, nb * sizeof *ws->kIC);
    ws->Xup = carve(base, &off, nb * sizeof *ws->Xup);
    ws->v = carve(base, &off, nb * sizeof *ws->v);
    ws->a = carve(base, &off, nb * sizeof *ws->a);
    ws->f = carve(base, &off, nb * sizeof *ws->f);
    ws->IC = carve(base, &off, nb * sizeof *ws->IC);
    ws->IA = carve(base, &off, nb * sizeof *ws->IA);
    ws->pA = carve(base, &off, nb * sizeof *ws->pA);
    ws->U = carve(base, &off, nb * sizeof *ws->U);
    ws->c = carve(base, &off, nb * sizeof *ws->c);
    ws->D = carve(base, &off, nb * sizeof *ws->D);
    ws->u = carve(base, &off, nb * sizeof *ws->u);
    ws->M = carve(base, &off, nv * nv * sizeof *ws->M);
    ws->h = carve(base, &off, nv * sizeof *ws->h);
    ws->tmp = carve(base, &off, nv * sizeof *ws->tmp);
    ws->xq = carve(base, &off, ws->n_dofs * sizeof *ws->xq);
    ws->kq = carve(base, &off, ws->n_dofs * sizeof *ws->kq);
    size_t nn = ws->n_dofs + 1;
    ws->node = carve(base, &off, nn * sizeof *ws->node);
    ws->node_of = carve(base, &off, nb * sizeof *ws->node_of);
    ws->Xnode = carve(base, &off, nb * sizeof *ws->Xnode);
    ws->NJ = carve(base, &off, nn * sizeof *ws->NJ);
    ws->NX = carve(base, &off, nn * sizeof *ws->NX);
    ws->NXs = carve(base, &off, nn * sizeof *ws->NXs);
    ws->NIC = carve(base, &off, nn * sizeof *ws->NIC);
    ws->NS = carve(base, &off, nn * sizeof *ws->NS);
    ws->nend = carve(base, &off, nn * sizeof *ws->nend);
    ws->ncols = carve(base, &off, nn * sizeof *ws->ncols);
    ws->NF = carve(base, &off, 6 * (nn + 4) * sizeof *ws->NF);
    ws->trow = carve(base, &off, nn * sizeof *ws->trow);
    ws->vrow = carve(base, &off, nn * sizeof *ws->vrow);
    ws->tperm = carve(base, &off, nv * sizeof *ws->tperm);
    ws->tpar = carve(base, &off, nv * sizeof *ws->tpar);
    ws->toff = carve(base, &off, nv * sizeof *ws->toff);
    ws->tdep = carve(base, &off, nv * sizeof *ws->tdep);
    ws->tanc = carve(base, &off, (nv * (nv + 1) / 2 + 1) * sizeof *ws->tanc);
    ws->zrun = carve(base, &off, (ws->n_dofs * (ws->n_dofs + 1) / 2 + 1) * sizeof *ws->zrun);
    ws->rest_scratch = carve(base, &off, nn + nv);
    ws->a_rest = carve(base, &off, nb * sizeof *ws->a_rest);
    ws->f_rest = carve(base, &off, nb * sizeof *ws->f_rest);
    ws->rest = carve(base, &off, nb * sizeof *ws->rest);
    return off;
}

static void init_body(const rb_model *model, size_t i, dyn_body *d)
{
    const rb_body *b = &model->bodies[i];
    size_t qoff = model->floating ? 7 : 0, voff = model->floating ? 6 : 0;
    d->parent = i == 0 ? -1 : b->parent;
    d->kind = i == 0 || b->type == RB_JOINT_FIXED ? JK_FIXED
              : b->type == RB_JOINT_REVOLUTE      ? JK_REVOLUTE
                                                  : JK_PRISMATIC;
    d->qi = d->kind == JK_FIXED ? -1 : (int)(qoff + (size_t)b->dof);
    d->vi = d->kind == JK_FIXED ? -1 : (int)(voff + (size_t)b->dof);
    d->Xp = b->X_parent;
    memcpy(d->pi, b->inertia, sizeof d->pi);
    memset(d->k, 0, sizeof d->k);
    if (d->kind != JK_FIXED)
        memcpy(d->k, b->axis, sizeof d->k);
    rbd_body_joint_consts(d);
}

int rb_dyn_alloc(const rb_model *model, rb_dyn **out, rb_err *err)
{
    if (!model || !out)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_alloc: NULL argument");
    *out = NULL;
    if (model->n_bodies == 0 || !model->bodies)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_alloc: model %s has no bodies", model->name ? model->name : "");
    if (model->n_bodies > INT32_MAX / 2 || model->nv > 100000)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_alloc: model too large");
    for (size_t i = 1; i < model->n_bodies; i++) {
        const rb_body *b = &model->bodies[i];
        if (b->parent < 0 || (size_t)b->parent >= i)
            return rb_err_set(err, RB_EINVAL, "rb_dyn_alloc: body %zu is not in topological order", i);
        if (b->type != RB_JOINT_FIXED && (b->dof < 0 || (size_t)b->dof >= model->n_dofs))
            return rb_err_set(err, RB_EINVAL, "rb_dyn_alloc: body %zu has an invalid dof index", i);
    }
    if (model->nv != model->n_dofs + (model->floating ? 6 : 0) ||
        model->nq != model->n_dofs + (model->floating ? 7 : 0))
        return rb_err_set(err, RB_EINVAL, "rb_dyn_alloc: model %s is not finished (rb_model_end)",
                          model->name ? model->name : "");

    rb_dyn *ws = rb_calloc(1, sizeof *ws);
    if (!ws)
        return rb_err_set(err, RB_ENOMEM, "out of memory (dynamics workspace)");
    ws->nb = model->n_bodies;
    ws->nv = model->nv;
    ws->nq = model->nq;
    ws->n_dofs = model->n_dofs;
    ws->floating = model->floating;
    size_t bytes = layout(ws, NULL);
    if (!(ws->block = rb_calloc(1, bytes + 64))) {
        rb_free(ws);
        return rb_err_set(err, RB_ENOMEM, "out of memory (dynamics workspace, %zu bytes)", bytes);
    }
    char *base = (char *)ws->block + (64 - (uintptr_t)ws->block % 64) % 64;
    layout(ws, base);
    for (size_t i = 0; i < ws->nb; i++) {
        dyn_body *d = &ws->body[i];
        init_body(model, i, d);
        d->moving = ws->floating || (i > 0 && (d->kind != JK_FIXED || ws->body[d->parent].moving));
    }
    for (size_t i = ws->nb; i-- > 0;) { /* a body's class after its subtree's (children come after parents) */
        if (ws->body[i].moving)
            ws->rest[i] = REST_MOVING;
        else if (ws->rest[i] != REST_PATH)
            ws->rest[i] = REST_STILL;
        if (i > 0 && ws->rest[i] != REST_STILL)
            ws->rest[ws->body[i].parent] = REST_PATH;
    }
    rbd_fold(ws);
    int rc = rb_dyn_reserve_contacts(ws, DEFAULT_CONTACT_ROWS, err);
    if (rc < 0) {
        rb_dyn_free(ws);
        return rc;
    }
    *out = ws;
    return RB_OK;
}

void rb_dyn_free(rb_dyn *ws)
{
    if (!ws)
        return;
    rb_free(ws->contact_block);
    rb_free(ws->block);
    rb_free(ws);
}

int rb_dyn_reserve_contacts(rb_dyn *ws, size_t rows, rb_err *err)
{
    if (!ws)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_reserve_contacts: NULL workspace");
    if (rows < 6)
        rows = 6; /* the Jacobian scratch of rb_dyn_fd_contact needs 6 rows */
    if (rows <= ws->max_rows && ws->contact_block)
        return RB_OK;
    if (rows > 6000)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_reserve_contacts: %zu rows is too many", rows);
    size_t nv = ws->nv, n = 2 * rows * nv + rows * rows + 2 * rows;
    double *blk = rb_calloc(n ? n : 1, sizeof *blk);
    if (!blk)
        return rb_err_set(err, RB_ENOMEM, "out of memory (contact workspace, %zu rows)", rows);
    rb_free(ws->contact_block);
    ws->contact_block = blk;
    ws->Jc = blk;
    ws->Y = ws->Jc + rows * nv;
    ws->S = ws->Y + rows * nv;
    ws->rhs = ws->S + rows * rows;
    ws->lam = ws->rhs + rows;
    ws->max_rows = rows;
    return RB_OK;
}

int rbd_check(const rb_model *model, const rb_dyn *ws, rb_err *err)
{
    if (!model || !ws)
        return rb_err_set(err, RB_EINVAL, "dynamics: NULL model or workspace");
    if (ws->nb != model->n_bodies || ws->nv != model->nv || ws->floating != model->floating)
        return rb_err_set(err, RB_EINVAL, "dynamics: the workspace was made for another model");
    return RB_OK;
}

int rb_dyn_set_body_inertia(const rb_model *model, rb_dyn *ws, size_t body, const double pi[10], rb_err *err)
{
    int rc = rbd_check(model, ws, err);
    if (rc < 0)
        return rc;
    if (!pi)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_set_body_inertia: NULL parameters");
    if (body >= ws->nb)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_set_body_inertia: body %zu out of range (%zu bodies)", body, ws->nb);
    for (int k = 0; k < 10; k++)
        if (!isfinite(pi[k]))
            return rb_err_set(err, RB_EINVAL, "rb_dyn_set_body_inertia: body %zu: non-finite parameter", body);
    if (!rb_inertia_is_physical(pi))
        return rb_err_set(err, RB_EINVAL, "rb_dyn_set_body_inertia: body %zu: parameters not physically valid", body);
    memcpy(ws->body[body].pi, pi, sizeof ws->body[body].pi);
    rbd_fold_inertia(ws);
    ws->rest_valid = ws->rest_in_place = false;
    ws->level = LEVEL_NONE; /* composite inertias and anything derived from the old parameters are stale */
    ws->rnea_valid = 0;
    return RB_OK;
}

int rbd_check_ext(const rb_model *model, const rb_ext_wrench *ext, size_t n_ext, rb_err *err)
{
    if (n_ext && !ext)
        return rb_err_set(err, RB_EINVAL, "dynamics: NULL external wrenches");
    for (size_t k = 0; k < n_ext; k++) {
        if (ext[k].frame < 0 || (size_t)ext[k].frame >= model->n_frames)
            return rb_err_set(err, RB_EINVAL, "dynamics: external wrench %zu: frame %d out of range", k, ext[k].frame);
        if (ext[k].rep != RB_DYN_BODY && ext[k].rep != RB_DYN_MIXED && ext[k].rep != RB_DYN_INERTIAL)
            return rb_err_set(err, RB_EINVAL, "dynamics: external wrench %zu: invalid representation", k);
    }
    return RB_OK;
}

/* The joint positions of q (after the floating base's 7 coordinates). */
static const double *joint_positions(const rb_dyn *ws, const double *q) { return q + (ws->nq - ws->n_dofs); }

static bool holds(const rb_dyn *ws, const double *key, bool valid, const double *q)
{
    return valid && memcmp(key, joint_positions(ws, q), ws->n_dofs * sizeof *key) == 0;
}

/* The joint transforms of q into X, remembering q's joint positions in key; other / other_key (the other array)
 * may already hold them. Bit-identical whichever way they are obtained. */
static void joint_xforms(rb_dyn *ws, const double *q, rb_xform *X, double *key, bool *valid, const rb_xform *other,
                         const double *other_key, bool other_valid)
{
    if (holds(ws, key, *valid, q))
        return;
    if (holds(ws, other_key, other_valid, q)) {
        memcpy(X, other, ws->nb * sizeof *X);
    } else {
        rb_xform_identity(&X[0]);
        for (size_t i = 1; i < ws->nb; i++) {
            const dyn_body *b = &ws->body[i];
            dyn_joint_xform(b, b->qi >= 0 ? q[b->qi] : 0.0, &X[i]);
        }
    }
    memcpy(key, joint_positions(ws, q), ws->n_dofs * sizeof *key);
    *valid = true;
}

void rbd_joint_xforms(rb_dyn *ws, const double *q)
{
    joint_xforms(ws, q, ws->Xup, ws->xq, &ws->xq_valid, ws->kXup, ws->kq, ws->kq_valid);
}

void rbd_kin_joint_xforms(rb_dyn *ws, const double *q)
{
    joint_xforms(ws, q, ws->kXup, ws->kq, &ws->kq_valid, ws->Xup, ws->xq, ws->xq_valid);
}

void rbd_body_world_pose(const rb_dyn *ws, const rb_xform *Xup, const rb_xform *X0base, int i, rb_xform *out)
{
    rb_xform X = Xup[i], t;
    if (i == 0) {
        *out = *X0base;
        return;
    }
    for (int j = ws->body[i].parent; j > 0; j = ws->body[j].parent) {
        rb_xform_compose(&Xup[j], &X, &t);
        X = t;
    }
    rb_xform_compose(X0base, &X, out);
}

void rbd_ext_to_body(const rb_model *model, const rb_dyn *ws, const rb_xform *Xup, const rb_xform *X0base,
                     const rb_ext_wrench *e, double out[6])
{
    const rb_frame *fr = &model->frames[e->frame];
    double wF[6];
    if (e->rep == RB_DYN_BODY) {
        rb_xform_force(&fr->X_body, e->w, out);
        return;
    }
    rb_xform X0b;
    rbd_body_world_pose(ws, Xup, X0base, fr->body, &X0b);
    if (e->rep == RB_DYN_INERTIAL) {
        rb_xform_force_inv(&X0b, e->w, out);
        return;
    }
    /* MIXED: world axes about the frame origin -> frame axes, then into the body */
    rb_xform X0F;
    rb_xform_compose(&X0b, &fr->X_body, &X0F);
    rb_m3t_mul_v(X0F.R, e->w, wF);
    rb_m3t_mul_v(X0F.R, e->w + 3, wF + 3);
    rb_xform_force(&fr->X_body, wF, out);
}

/* ---- configurations ---------------------------------------------------------------------------------- */

void rb_dyn_neutral(const rb_model *model, double *q)
{
    memset(q, 0, model->nq * sizeof *q);
    if (model->floating)
        q[3] = 1.0;
}

/* Hamilton product out = a b, (w x y z). */
static void quat_mul(const double a[4], const double b[4], double out[4])
{
    out[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    out[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    out[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    out[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

void rb_dyn_integrate(const rb_model *model, const double *q, const double *nu, double dt, double *q_out)
{
    size_t n = model->n_dofs, qo = model->floating ? 7 : 0, vo = model->floating ? 6 : 0;
    for (size_t k = 0; k < n; k++)
        q_out[qo + k] = q[qo + k] + dt * nu[vo + k];
    if (!model->floating)
        return;
    /* W_X_B exp(dt xi), xi = [v; w] body-fixed: rotation exp([w dt]), translation V(w dt) v dt with
     * V(phi) = 1 + (1 - cos t)/t^2 [phi]x + (t - sin t)/t^3 [phi]x^2, t = |phi|. */
    double phi[3] = {nu[3] * dt, nu[4] * dt, nu[5] * dt}, rho[3] = {nu[0] * dt, nu[1] * dt, nu[2] * dt};
    double t2 = rb_v3_dot(phi, phi), t = sqrt(t2), b1, b2, sh, ch;
    if (t < 1e-4) { /* Taylor: relative error below 1e-17 */
        b1 = 0.5 - t2 / 24.0 + t2 * t2 / 720.0;
        b2 = 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0;
        sh = 0.5 - t2 / 48.0 + t2 * t2 / 3840.0; /* sin(t/2)/t */
    } else {
        b1 = (1.0 - cos(t)) / t2;
        b2 = (t - sin(t)) / (t2 * t);
        sh = sin(0.5 * t) / t;
    }
    ch = cos(0.5 * t);
    double pr[3], ppr[3], dp[3], R[9], dpw[3];
    rb_v3_cross(phi, rho, pr);
    rb_v3_cross(phi, pr, ppr);
    for (int k = 0; k < 3; k++)
        dp[k] = rho[k] + b1 * pr[k] + b2 * ppr[k];
    double quat[4] = {q[3], q[4], q[5], q[6]};
    double nq = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
    for (int k = 0; k < 4; k++)
        quat[k] /= nq;
    rb_m3_from_quat(quat, R);
    rb_m3_mul_v(R, dp, dpw);
    double dq[4] = {ch, sh * phi[0], sh * phi[1], sh * phi[2]}, qn[4];
    quat_mul(quat, dq, qn);
    double nn = sqrt(qn[0] * qn[0] + qn[1] * qn[1] + qn[2] * qn[2] + qn[3] * qn[3]);
    for (int k = 0; k < 3; k++)
        q_out[k] = q[k] + dpw[k];
    for (int k = 0; k < 4; k++)
        q_out[3 + k] = qn[k] / nn;
}

/* Solve A x = b for a symmetric positive-definite 6 x 6 A (Cholesky; A is not modified). */
bool rbd_spd6_solve(const double A[36], const double b[6], double x[6])
{
    double L[36] = {0}, y[6];
    for (int j = 0; j < 6; j++) {
        double d = A[6 * j + j];
        for (int k = 0; k < j; k++)
            d -= L[6 * j + k] * L[6 * j + k];
        if (!(d > 0.0))
            return false;
        d = sqrt(d);
        L[6 * j + j] = d;
        for (int i = j + 1; i < 6; i++) {
            double s = A[6 * i + j];
            for (int k = 0; k < j; k++)
                s -= L[6 * i + k] * L[6 * j + k];
            L[6 * i + j] = s / d;
        }
    }
    for (int i = 0; i < 6; i++) {
        double s = b[i];
        for (int k = 0; k < i; k++)
            s -= L[6 * i + k] * y[k];
        y[i] = s / L[6 * i + i];
    }
    for (int i = 6; i-- > 0;) {
        double s = y[i];
        for (int k = i + 1; k < 6; k++)
            s -= L[6 * k + i] * x[k];
        x[i] = s / L[6 * i + i];
    }
    return true;
}

int rbd_check_call(const rb_model *model, rb_dyn *ws, const double *q, const double *out, const rb_ext_wrench *ext,
                   size_t n_ext, const char *what, rb_err *err)
{
    int rc = rbd_check(model, ws, err);
    if (rc < 0)
        return rc;
    if (!q || !out)
        return rb_err_set(err, RB_EINVAL, "%s: NULL q or output", what);
    return rbd_check_ext(model, ext, n_ext, err);
}
