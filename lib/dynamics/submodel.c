/* Sub-models: the tree cut at FT-sensor joints (the public UKF joint-torque estimator's split). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ft_internal.h"
#include "roboest/dynamics.h"

bool rbd_ft_tree_sides(const rb_model *model, const rb_ft_sensor *ft, int *tc, int *tp)
{
    int c = ft->child_body, p = ft->parent_body, nb = (int)model->n_bodies;
    if (c < 0 || c >= nb || p < 0 || p >= nb || c == p)
        return false;
    if (c > 0 && model->bodies[c].parent == p)
        *tc = c, *tp = p;
    else if (p > 0 && model->bodies[p].parent == c)
        *tc = p, *tp = c;
    else
        return false;
    return model->bodies[*tc].type == RB_JOINT_FIXED;
}

bool rbd_frame_in_joint_child(const rb_model *model, int tc, int tp, int frame, rb_xform *out)
{
    const rb_frame *fr = &model->frames[frame];
    if (fr->body == tc) {
        *out = fr->X_body;
        return true;
    }
    if (fr->body != tp)
        return false;
    rb_xform inv;
    rb_xform_inverse(&model->bodies[tc].X_parent, &inv); /* fixed joint: parent_X_tc = X_parent */
    rb_xform_compose(&inv, &fr->X_body, out);
    return true;
}

int rbd_cut_fts(const rb_model *model, const rb_submodels *sm, int *tc, int *tp, rb_xform *XcF, int *sigma,
                unsigned char *cut, const char *what, rb_err *err)
{
    for (size_t k = 0; k < sm->n_ft; k++) {
        const rb_ft_sensor *ft = &model->ft[sm->ft[k]];
        if (!rbd_ft_tree_sides(model, ft, &tc[k], &tp[k]))
            return rb_err_set(err, RB_EINVAL, "%s: FT sensor %s: its bodies are not joined by a fixed joint", what,
                              ft->name);
        if (!rbd_frame_in_joint_child(model, tc[k], tp[k], ft->frame, &XcF[k]))
            return rb_err_set(err, RB_EINVAL, "%s: FT sensor %s: its reading frame is on neither side of the joint",
                              what, ft->name);
        /* reversed joint: the reading's parent_body side is the tree child */
        sigma[k] = tc[k] == ft->child_body ? ft->sign : -ft->sign;
        cut[tc[k]] = 1;
    }
    return RB_OK;
}

long rbd_contact_frame(const rb_model *model, const char *const *contacts, size_t j, const char *what, rb_err *err)
{
    if (!contacts[j])
        return rb_err_set(err, RB_EINVAL, "%s: contact frame %zu is NULL", what, j);
    long f = rb_model_frame_index(model, contacts[j]);
    if (f < 0)
        return rb_err_set(err, RB_ENOTFOUND, "%s: contact frame %s: no such frame in model %s", what, contacts[j],
                          model->name ? model->name : "");
    for (size_t i = 0; i < j; i++)
        if (strcmp(contacts[i], contacts[j]) == 0)
            return rb_err_set(err, RB_EINVAL, "%s: contact frame %s is listed twice", what, contacts[j]);
    return f;
}

static bool same_pose(const rb_xform *A, const rb_xform *B)
{
    for (int k = 0; k < 9; k++)
        if (!(fabs(A->R[k] - B->R[k]) <= 1e-9))
            return false;
    for (int k = 0; k < 3; k++)
        if (!(fabs(A->p[k] - B->p[k]) <= 1e-9))
            return false;
    return true;
}

/* Carve aligned arrays out of one block: a first pass with base == NULL only sums the sizes. */
static void *carve(char *base, size_t *off, size_t bytes)
{
    size_t o = (*off + 15) & ~(size_t)15;
    *off = o + bytes;
    return base ? base + o : NULL;
}

/* Counts gathered before the block is laid out. */
typedef struct counts {
    size_t n_sub, n_ft, nb, n_dofs, n_frames, n_imu_entries;
} counts;

static size_t layout(rb_submodels *sm, const counts *c, char *base)
{
    size_t off = 0;
    sm->sub = carve(base, &off, c->n_sub * sizeof *sm->sub);
    sm->ft = carve(base, &off, c->n_ft * sizeof *sm->ft);
    sm->body_sub = carve(base, &off, c->nb * sizeof *sm->body_sub);
    /* the per-sub-model arrays, back to back, handed out in sub-model order by the caller */
    int *bodies = carve(base, &off, c->nb * sizeof(int));
    int *dofs = carve(base, &off, c->n_dofs * sizeof(int));
    int *frames = carve(base, &off, c->n_frames * sizeof(int));
    rb_submodel_ft *fts = carve(base, &off, 2 * c->n_ft * sizeof(rb_submodel_ft));
    rb_submodel_imu *imus = carve(base, &off, c->n_imu_entries * sizeof(rb_submodel_imu));
    if (base && c->n_sub) {
        sm->sub[0].bodies = bodies, sm->sub[0].dofs = dofs, sm->sub[0].frames = frames;
        sm->sub[0].ft = fts, sm->sub[0].imu = imus;
    }
    return off;
}

/* The set position (at or after `from`) of the FT sensor whose sensor frame IMU frame `frame` sits on (the
 * same frame, or the same pose); -1 if none. set: model FT indices; tc/tp: the joint sides per position. */
static int imu_on_ft(const rb_model *model, const int *set, size_t n_ft, const int *tc, const int *tp, int frame,
                     size_t from)
{
    for (size_t k = from; k < n_ft; k++) {
        const rb_ft_sensor *ft = &model->ft[set[k]];
        rb_xform Xi, Xs;
        if (frame == ft->sensor_frame)
            return (int)k;
        if (rbd_frame_in_joint_child(model, tc[k], tp[k], frame, &Xi) &&
            rbd_frame_in_joint_child(model, tc[k], tp[k], ft->sensor_frame, &Xs) && same_pose(&Xi, &Xs))
            return (int)k;
    }
    return -1;
}

/* For every set position k of an FT sensor that IMU frame f sits on (uses the locals model, set, n_ft, tc, tp). */
#define FOR_FT_UNDER_IMU(k, f)                                                                                         \
    for (int k = imu_on_ft(model, set, n_ft, tc, tp, f, 0); k >= 0;                                                    \
         k = imu_on_ft(model, set, n_ft, tc, tp, f, (size_t)k + 1))

/* Resolve the FT list into set (model indices), tc/tp (joint sides) and cut (1 + set position per tree child). */
static int resolve_fts(const rb_model *model, const char *const *ft_names, size_t n_ft, int *set, int *tc, int *tp,
                       int *cut, rb_err *err)
{
    static const char what[] = "rb_submodels_build";
    for (size_t k = 0; k < n_ft; k++) {
        long s = (long)k;
        if (ft_names && !ft_names[k])
            return rb_err_set(err, RB_EINVAL, "%s: FT name %zu is NULL", what, k);
        if (ft_names && (s = rb_model_ft_index(model, ft_names[k])) < 0)
            return rb_err_set(err, RB_ENOTFOUND, "%s: no FT sensor named %s in model %s", what, ft_names[k],
                              model->name ? model->name : "");
        const rb_ft_sensor *ft = &model->ft[s];
        if (!rbd_ft_tree_sides(model, ft, &tc[k], &tp[k]))
            return rb_err_set(err, RB_EINVAL, "%s: FT sensor %s: its bodies are not joined by a fixed joint", what,
                              ft->name);
        if (cut[tc[k]])
            return rb_err_set(err, RB_EINVAL, "%s: FT sensor %s %s", what, ft->name,
                              set[cut[tc[k]] - 1] == s ? "is listed twice"
                                                       : "sits on the same joint as another listed sensor");
        cut[tc[k]] = (int)k + 1;
        set[k] = (int)s;
        if (ft->frame < 0 || (size_t)ft->frame >= model->n_frames || ft->sensor_frame < 0 ||
            (size_t)ft->sensor_frame >= model->n_frames)
            return rb_err_set(err, RB_EINVAL, "%s: FT sensor %s: frame index out of range", what, ft->name);
    }
    for (size_t i = 0; i < model->n_imu; i++)
        if (model->imu[i].frame < 0 || (size_t)model->imu[i].frame >= model->n_frames)
            return rb_err_set(err, RB_EINVAL, "%s: IMU %s: frame index out of range", what, model->imu[i].name);
    return RB_OK;
}

/* Fill the laid-out set: sizes per sub-model, consecutive slices of the shared arrays, then the entries. */
static void fill(const rb_model *model, rb_submodels *sm, const int *set, size_t n_ft, const int *tc, const int *tp,
                 size_t *imu_cnt)
{
    rb_submodel *S = sm->sub;
    size_t nb = model->n_bodies;
    for (size_t k = 0; k < sm->n_sub; k++)
        S[k].parent = -1, S[k].base_ft = -1, S[k].base = -1;
    for (size_t i = 0; i < nb; i++) {
        rb_submodel *b = &S[sm->body_sub[i]];
        if (b->n_bodies++ == 0)
            b->base = (int)i;
        b->mass += model->bodies[i].inertia[0];
    }
    for (size_t d = 0; d < model->n_dofs; d++)
        S[sm->body_sub[model->dof_body[d]]].n_dofs++;
    for (size_t f = 0; f < model->n_frames; f++)
        S[sm->body_sub[model->frames[f].body]].n_frames++;
    for (size_t k = 0; k < n_ft; k++) {
        S[sm->body_sub[tc[k]]].n_ft++;
        S[sm->body_sub[tp[k]]].n_ft++;
        S[sm->body_sub[tc[k]]].parent = sm->body_sub[tp[k]];
        S[sm->body_sub[tc[k]]].base_ft = (int)k;
    }
    for (size_t i = 0; i < model->n_imu; i++) {
        int f = model->imu[i].frame, b = model->frames[f].body;
        imu_cnt[sm->body_sub[b]]++;
        FOR_FT_UNDER_IMU(k, f)
        imu_cnt[sm->body_sub[b == tc[k] ? tp[k] : tc[k]]]++;
    }
    for (size_t k = 1; k < sm->n_sub; k++) {
        S[k].bodies = S[k - 1].bodies + S[k - 1].n_bodies;
        S[k].dofs = S[k - 1].dofs + S[k - 1].n_dofs;
        S[k].frames = S[k - 1].frames + S[k - 1].n_frames;
        S[k].ft = S[k - 1].ft + S[k - 1].n_ft;
        S[k].imu = S[k - 1].imu + imu_cnt[k - 1];
    }
    for (size_t k = 0; k < sm->n_sub; k++)
        S[k].n_bodies = S[k].n_dofs = S[k].n_frames = S[k].n_ft = 0;
    for (size_t i = 0; i < nb; i++) {
        rb_submodel *b = &S[sm->body_sub[i]];
        b->bodies[b->n_bodies++] = (int)i;
    }
    for (size_t d = 0; d < model->n_dofs; d++) {
        rb_submodel *b = &S[sm->body_sub[model->dof_body[d]]];
        b->dofs[b->n_dofs++] = (int)d;
    }
    for (size_t f = 0; f < model->n_frames; f++) {
        rb_submodel *b = &S[sm->body_sub[model->frames[f].body]];
        b->frames[b->n_frames++] = (int)f;
    }
    for (size_t k = 0; k < n_ft; k++) {
        /* + on the side the reading is applied to: the model child's side for sign +1 (parent_to_child) */
        const rb_ft_sensor *ft = &model->ft[set[k]];
        rb_submodel *bc = &S[sm->body_sub[ft->child_body]], *bp = &S[sm->body_sub[ft->parent_body]];
        bc->ft[bc->n_ft++] = (rb_submodel_ft){set[k], (int)k, ft->sign, ft->child_body};
        bp->ft[bp->n_ft++] = (rb_submodel_ft){set[k], (int)k, -ft->sign, ft->parent_body};
    }
    for (size_t i = 0; i < model->n_imu; i++) {
        int f = model->imu[i].frame, b = model->frames[f].body;
        rb_submodel *own = &S[sm->body_sub[b]];
        rb_submodel_imu *e = &own->imu[own->n_imu++];
        *e = (rb_submodel_imu){(int)i, b, model->frames[f].X_body, false};
        FOR_FT_UNDER_IMU(k, f)
        {
            int other = b == tc[k] ? tp[k] : tc[k];
            rb_xform Xc;
            rbd_frame_in_joint_child(model, tc[k], tp[k], f, &Xc);
            rb_submodel *o = &S[sm->body_sub[other]];
            rb_submodel_imu *e2 = &o->imu[o->n_imu++];
            e2->imu = (int)i, e2->body = other, e2->shared = true;
            if (other == tc[k])
                e2->X_body = Xc;
            else /* through the fixed joint: tp_X_tc = X_parent */
                rb_xform_compose(&model->bodies[tc[k]].X_parent, &Xc, &e2->X_body);
            e->shared = true;
        }
    }
}

int rb_submodels_build(const rb_model *model, const char *const *ft_names, size_t n_names, rb_submodels **out,
                       rb_err *err)
{
    static const char what[] = "rb_submodels_build";
    if (!model || !out || (n_names && !ft_names))
        return rb_err_set(err, RB_EINVAL, "%s: NULL argument", what);
    *out = NULL;
    if (model->n_bodies == 0 || !model->bodies || model->n_bodies > INT32_MAX / 2)
        return rb_err_set(err, RB_EINVAL, "%s: model %s has no bodies", what, model->name ? model->name : "");
    for (size_t i = 1; i < model->n_bodies; i++)
        if (model->bodies[i].parent < 0 || (size_t)model->bodies[i].parent >= i)
            return rb_err_set(err, RB_EINVAL, "%s: body %zu is not in topological order", what, i);

    size_t nb = model->n_bodies, n_ft = ft_names ? n_names : model->n_ft;
    int *set = NULL, *tc = NULL, *tp = NULL, *cut = NULL;
    size_t *imu_cnt = NULL;
    rb_submodels *sm = NULL;
    int rc = RB_OK;
    if (!(sm = rb_calloc(1, sizeof *sm)) || !(set = rb_calloc(n_ft + 1, sizeof *set)) ||
        !(tc = rb_calloc(n_ft + 1, sizeof *tc)) || !(tp = rb_calloc(n_ft + 1, sizeof *tp)) ||
        !(cut = rb_calloc(nb, sizeof *cut)) || !(imu_cnt = rb_calloc(n_ft + 1, sizeof *imu_cnt))) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory (sub-models)");
        goto done;
    }
    if ((rc = resolve_fts(model, ft_names, n_ft, set, tc, tp, cut, err)) < 0)
        goto done;
    sm->n_ft = n_ft;
    sm->n_sub = n_ft + 1;
    sm->n_bodies = nb, sm->n_dofs = model->n_dofs, sm->n_frames = model->n_frames;
    sm->n_model_ft = model->n_ft, sm->n_imu = model->n_imu;

    /* IMU entries: one per IMU, plus one per FT sensor frame it sits on */
    counts c = {sm->n_sub, n_ft, nb, model->n_dofs, model->n_frames, 0};
    for (size_t i = 0; i < model->n_imu; i++) {
        c.n_imu_entries++;
        FOR_FT_UNDER_IMU(k, model->imu[i].frame)
        c.n_imu_entries++;
    }
    size_t bytes = layout(sm, &c, NULL);
    if (!(sm->block = rb_calloc(1, bytes + 16))) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory (sub-models, %zu bytes)", bytes);
        goto done;
    }
    layout(sm, &c, (char *)sm->block + (16 - (uintptr_t)sm->block % 16) % 16);
    memcpy(sm->ft, set, n_ft * sizeof *set);
    /* sub-model of every body: a new one at the base and at every cut, in body (topological) order */
    for (size_t i = 0, next = 0; i < nb; i++)
        sm->body_sub[i] = (i == 0 || cut[i]) ? (int)next++ : sm->body_sub[model->bodies[i].parent];
    fill(model, sm, set, n_ft, tc, tp, imu_cnt);
    *out = sm;
    sm = NULL;
done:
    rb_free(set);
    rb_free(tc);
    rb_free(tp);
    rb_free(cut);
    rb_free(imu_cnt);
    rb_submodels_free(sm);
    return rc;
}

void rb_submodels_free(rb_submodels *sm)
{
    if (!sm)
        return;
    rb_free(sm->block);
    rb_free(sm);
}
