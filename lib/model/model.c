/* Model container: the in-code builder, validation, lookups, and physical consistency of inertias. */
#include "roboest/model.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

/* ---- small helpers ------------------------------------------------------------------------------------- */

/* Grow *array (of `elem` bytes each) from n to n + 1 elements; the new element is zeroed. Capacities are
 * powers of two, implied by n (an array of 0 or 2^k elements is full), so n items cost O(n) copies. */
static int grow(void **array, size_t n, size_t elem, rb_err *err)
{
    if (n & (n - 1)) {
        memset((char *)*array + n * elem, 0, elem);
        return RB_OK;
    }
    size_t bytes;
    if (n > SIZE_MAX / 2 || !rb_size_mul(n ? 2 * n : 1, elem, &bytes))
        return rb_err_set(err, RB_ENOMEM, "model too large");
    void *p = rb_realloc(*array, bytes);
    if (!p)
        return rb_err_set(err, RB_ENOMEM, "out of memory (model)");
    memset((char *)p + n * elem, 0, elem);
    *array = p;
    return RB_OK;
}

static bool all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

/* ---- name indexes ------------------------------------------------------------------------------------- */
/* Models of tens of thousands of links are loaded too (generated chains): every look-up by name and every
 * uniqueness check goes through names sorted once, never a scan per name. */
struct rb_model_names {
    rb_name_ref *bodies, *frames, *dofs, *ft; /* sorted by name, then position (rb_name_ref_cmp) */
    size_t n_bodies, n_frames, n_dofs, n_ft;
};

/* The non-NULL names among n items (the name pointer of item i at base + i * stride + offset), sorted;
 * *count of them. NULL when out of memory. */
static rb_name_ref *sorted_names(const void *base, size_t stride, size_t offset, size_t n, size_t *count)
{
    rb_name_ref *refs = rb_calloc(n ? n : 1, sizeof *refs);
    *count = 0;
    if (!refs)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const char *name = *(char *const *)((const char *)base + i * stride + offset);
        if (name)
            refs[(*count)++] = (rb_name_ref){name, i};
    }
    qsort(refs, *count, sizeof *refs, rb_name_ref_cmp);
    return refs;
}

/* The lowest position holding `name`, -1 if none. */
static long find_name(const rb_name_ref *refs, size_t n, const char *name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(refs[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && strcmp(refs[lo].name, name) == 0 ? (long)refs[lo].index : -1;
}

static void names_free(struct rb_model_names *x)
{
    if (!x)
        return;
    rb_free(x->bodies);
    rb_free(x->frames);
    rb_free(x->dofs);
    rb_free(x->ft);
    rb_free(x);
}

/* A builder call changes the arrays: the look-ups scan them until rb_model_end indexes them again. */
static void names_drop(rb_model *model)
{
    names_free(model->names);
    model->names = NULL;
}

/* The model's index, if it still describes the arrays. */
static const struct rb_model_names *names_of(const rb_model *m)
{
    const struct rb_model_names *x = m->names;
    return x && x->n_bodies == m->n_bodies && x->n_frames == m->n_frames && x->n_dofs == m->n_dofs && x->n_ft == m->n_ft
               ? x
               : NULL;
}

bool rb_model_xform_is_valid(const rb_xform *X)
{
    if (!all_finite(X->R, 9) || !all_finite(X->p, 3))
        return false;
    double RtR[9];
    rb_m3t_mul(X->R, X->R, RtR);
    for (int i = 0; i < 9; i++)
        if (fabs(RtR[i] - (i % 4 == 0 ? 1.0 : 0.0)) > 1e-9)
            return false;
    double det = X->R[0] * (X->R[4] * X->R[8] - X->R[5] * X->R[7]) - X->R[1] * (X->R[3] * X->R[8] - X->R[5] * X->R[6]) +
                 X->R[2] * (X->R[3] * X->R[7] - X->R[4] * X->R[6]);
    return det > 0.0;
}

/* ---- builder ------------------------------------------------------------------------------------------- */

int rb_model_begin(rb_model **out, const char *name, const char *base_name, const double base_inertia[10],
                   bool floating, rb_err *err)
{
    int rc = RB_OK;
    rb_model *m = NULL;
    if (!out || !name || !base_name || !base_inertia)
        return rb_err_set(err, RB_EINVAL, "rb_model_begin: NULL argument");
    *out = NULL;
    m = rb_calloc(1, sizeof *m);
    if (!m || !(m->name = rb_strdup(name)) || !(m->bodies = rb_calloc(1, sizeof *m->bodies))) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory (model)");
        goto done;
    }
    m->floating = floating;
    m->gravity[2] = -9.81;
    m->n_bodies = 1;
    rb_body *b = &m->bodies[0];
    b->parent = -1;
    b->type = RB_JOINT_FIXED;
    b->dof = -1;
    rb_xform_identity(&b->X_parent);
    memcpy(b->inertia, base_inertia, sizeof b->inertia);
    if (!(b->name = rb_strdup(base_name))) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory (model)");
        goto done;
    }
    *out = m;
    m = NULL;
done:
    rb_model_free(m);
    return rc;
}

int rb_model_add_body(rb_model *model, const char *name, int parent, rb_joint_type type, const char *joint_name,
                      const rb_xform *X_parent, const double axis[3], const double inertia[10], rb_err *err)
{
    if (!model || !name || !joint_name || !X_parent || !inertia || (type != RB_JOINT_FIXED && !axis))
        return rb_err_set(err, RB_EINVAL, "rb_model_add_body: NULL argument");
    if (parent < 0 || (size_t)parent >= model->n_bodies)
        return rb_err_set(err, RB_EINVAL, "body %s: parent index %d out of range", name, parent);
    if (type != RB_JOINT_FIXED && type != RB_JOINT_REVOLUTE && type != RB_JOINT_PRISMATIC)
        return rb_err_set(err, RB_EINVAL, "body %s: invalid joint type %d", name, (int)type);
    if (model->n_bodies >= INT32_MAX || model->n_dofs >= INT32_MAX)
        return rb_err_set(err, RB_EINVAL, "model too large");
    names_drop(model);

    int rc;
    char *name_copy = rb_strdup(name), *joint_copy = rb_strdup(joint_name), *dof_copy = NULL;
    if (!name_copy || !joint_copy) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory (model)");
        goto done;
    }
    bool movable = type != RB_JOINT_FIXED;
    if (movable) {
        size_t n = model->n_dofs;
        if (!(dof_copy = rb_strdup(joint_name))) {
            rc = rb_err_set(err, RB_ENOMEM, "out of memory (model)");
            goto done;
        }
        /* All per-dof arrays grow first; n_dofs moves only once all of them have. */
        if ((rc = grow((void **)&model->dof_names, n, sizeof *model->dof_names, err)) < 0 ||
            (rc = grow((void **)&model->dof_body, n, sizeof *model->dof_body, err)) < 0 ||
            (rc = grow((void **)&model->dof_lower, n, sizeof *model->dof_lower, err)) < 0 ||
            (rc = grow((void **)&model->dof_upper, n, sizeof *model->dof_upper, err)) < 0 ||
            (rc = grow((void **)&model->dof_effort, n, sizeof *model->dof_effort, err)) < 0 ||
            (rc = grow((void **)&model->dof_velocity, n, sizeof *model->dof_velocity, err)) < 0)
            goto done;
    }
    if ((rc = grow((void **)&model->bodies, model->n_bodies, sizeof *model->bodies, err)) < 0)
        goto done;

    rb_body *b = &model->bodies[model->n_bodies];
    b->name = name_copy;
    b->joint_name = joint_copy;
    name_copy = joint_copy = NULL;
    b->parent = parent;
    b->type = type;
    b->X_parent = *X_parent;
    if (movable)
        memcpy(b->axis, axis, sizeof b->axis);
    memcpy(b->inertia, inertia, sizeof b->inertia);
    b->dof = -1;
    if (movable) {
        size_t n = model->n_dofs;
        b->dof = (int)n;
        model->dof_names[n] = dof_copy;
        dof_copy = NULL;
        model->dof_body[n] = (int)model->n_bodies;
        model->dof_lower[n] = -INFINITY;
        model->dof_upper[n] = INFINITY;
        model->dof_effort[n] = INFINITY;
        model->dof_velocity[n] = INFINITY;
        model->n_dofs = n + 1;
    }
    model->n_bodies++;
    rc = RB_OK;
done:
    rb_free(name_copy);
    rb_free(joint_copy);
    rb_free(dof_copy);
    return rc;
}

int rb_model_set_dof_limits(rb_model *model, size_t dof, double lower, double upper, double effort, double velocity,
                            rb_err *err)
{
    if (!model || dof >= model->n_dofs)
        return rb_err_set(err, RB_EINVAL, "rb_model_set_dof_limits: dof index out of range");
    if (isnan(lower) || isnan(upper) || isnan(effort) || isnan(velocity) || lower > upper || effort < 0 || velocity < 0)
        return rb_err_set(err, RB_EINVAL, "joint %s: invalid limits", model->dof_names[dof]);
    model->dof_lower[dof] = lower;
    model->dof_upper[dof] = upper;
    model->dof_effort[dof] = effort;
    model->dof_velocity[dof] = velocity;
    return RB_OK;
}

int rb_model_add_frame(rb_model *model, const char *name, int body, const rb_xform *X_body, rb_frame_kind kind,
                       rb_err *err)
{
    if (!model || !name || !X_body)
        return rb_err_set(err, RB_EINVAL, "rb_model_add_frame: NULL argument");
    if (body < 0 || (size_t)body >= model->n_bodies)
        return rb_err_set(err, RB_EINVAL, "frame %s: body index %d out of range", name, body);
    if (model->n_frames >= INT32_MAX)
        return rb_err_set(err, RB_EINVAL, "model too large");
    names_drop(model);
    int rc;
    char *copy = rb_strdup(name);
    if (!copy) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory (model)");
        goto done;
    }
    if ((rc = grow((void **)&model->frames, model->n_frames, sizeof *model->frames, err)) < 0)
        goto done;
    rb_frame *f = &model->frames[model->n_frames++];
    f->name = copy;
    copy = NULL;
    f->body = body;
    f->X_body = *X_body;
    f->kind = kind;
done:
    rb_free(copy);
    return rc;
}

int rb_model_add_ft_sensor(rb_model *model, const char *name, int child_body, int frame, int sensor_frame, int sign,
                           rb_err *err)
{
    if (!model || !name)
        return rb_err_set(err, RB_EINVAL, "rb_model_add_ft_sensor: NULL argument");
    if (child_body <= 0 || (size_t)child_body >= model->n_bodies || model->bodies[child_body].type != RB_JOINT_FIXED)
        return rb_err_set(err, RB_EINVAL, "FT sensor %s: body %d is not a body on a fixed joint", name, child_body);
    if (frame < 0 || (size_t)frame >= model->n_frames || sensor_frame < 0 || (size_t)sensor_frame >= model->n_frames)
        return rb_err_set(err, RB_EINVAL, "FT sensor %s: frame index out of range", name);
    if (sign != 1 && sign != -1)
        return rb_err_set(err, RB_EINVAL, "FT sensor %s: sign must be +1 or -1", name);
    names_drop(model);
    int rc;
    char *copy = rb_strdup(name), *joint = rb_strdup(model->bodies[child_body].joint_name);
    if (!copy || !joint) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory (model)");
        goto done;
    }
    if ((rc = grow((void **)&model->ft, model->n_ft, sizeof *model->ft, err)) < 0)
        goto done;
    rb_ft_sensor *s = &model->ft[model->n_ft++];
    s->name = copy;
    s->joint_name = joint;
    copy = joint = NULL;
    s->child_body = child_body;
    s->parent_body = model->bodies[child_body].parent;
    s->frame = frame;
    s->sensor_frame = sensor_frame;
    s->sign = sign;
done:
    rb_free(copy);
    rb_free(joint);
    return rc;
}

int rb_model_add_imu(rb_model *model, const char *name, rb_imu_kind kind, int frame, rb_err *err)
{
    if (!model || !name)
        return rb_err_set(err, RB_EINVAL, "rb_model_add_imu: NULL argument");
    if (frame < 0 || (size_t)frame >= model->n_frames)
        return rb_err_set(err, RB_EINVAL, "IMU %s: frame index out of range", name);
    if (kind != RB_SENSOR_ACCELEROMETER && kind != RB_SENSOR_GYROSCOPE)
        return rb_err_set(err, RB_EINVAL, "IMU %s: invalid kind", name);
    int rc;
    char *copy = rb_strdup(name);
    if (!copy) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory (model)");
        goto done;
    }
    if ((rc = grow((void **)&model->imu, model->n_imu, sizeof *model->imu, err)) < 0)
        goto done;
    rb_imu_sensor *s = &model->imu[model->n_imu++];
    s->name = copy;
    copy = NULL;
    s->kind = kind;
    s->frame = frame;
done:
    rb_free(copy);
    return rc;
}

int rb_model_set_dof_order(rb_model *model, const char *const *names, size_t n, rb_err *err)
{
    if (!model || (n && !names))
        return rb_err_set(err, RB_EINVAL, "rb_model_set_dof_order: NULL argument");
    if (n != model->n_dofs)
        return rb_err_set(err, RB_EINVAL, "joint order lists %zu joints, the model has %zu movable joints", n,
                          model->n_dofs);
    int rc = RB_OK;
    size_t *perm = NULL; /* perm[k] = old index of the joint placed at k */
    char **names_new = NULL;
    int *body_new = NULL;
    double *lim = NULL;
    rb_name_ref *sorted = NULL;
    bool *placed = NULL;
    size_t bytes, n_sorted;
    if (n == 0)
        return RB_OK;
    names_drop(model);
    if (!rb_size_mul(n, 4 * sizeof *lim, &bytes)) {
        rc = rb_err_set(err, RB_ENOMEM, "model too large");
        goto done;
    }
    perm = rb_calloc(n, sizeof *perm);
    names_new = rb_calloc(n, sizeof *names_new);
    body_new = rb_calloc(n, sizeof *body_new);
    lim = rb_malloc(bytes);
    placed = rb_calloc(n, sizeof *placed);
    sorted = sorted_names(model->dof_names, sizeof *model->dof_names, 0, n, &n_sorted);
    if (!perm || !names_new || !body_new || !lim || !placed || !sorted) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory (model)");
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        if (!names[k]) {
            rc = rb_err_set(err, RB_EINVAL, "joint order: NULL name at %zu", k);
            goto done;
        }
        long old = find_name(sorted, n_sorted, names[k]);
        if (old < 0) {
            rc = rb_err_set(err, RB_ENOTFOUND, "joint order: %s is not a movable joint of the model", names[k]);
            goto done;
        }
        if (placed[old]) {
            rc = rb_err_set(err, RB_EINVAL, "joint order: %s listed twice", names[k]);
            goto done;
        }
        placed[old] = true;
        perm[k] = (size_t)old;
    }
    for (size_t k = 0; k < n; k++) {
        size_t o = perm[k];
        names_new[k] = model->dof_names[o];
        body_new[k] = model->dof_body[o];
        lim[k] = model->dof_lower[o];
        lim[n + k] = model->dof_upper[o];
        lim[2 * n + k] = model->dof_effort[o];
        lim[3 * n + k] = model->dof_velocity[o];
    }
    for (size_t k = 0; k < n; k++) {
        model->dof_names[k] = names_new[k];
        model->dof_body[k] = body_new[k];
        model->dof_lower[k] = lim[k];
        model->dof_upper[k] = lim[n + k];
        model->dof_effort[k] = lim[2 * n + k];
        model->dof_velocity[k] = lim[3 * n + k];
        model->bodies[body_new[k]].dof = (int)k;
    }
done:
    rb_free(perm);
    rb_free(names_new);
    rb_free(body_new);
    rb_free(lim);
    rb_free(placed);
    rb_free(sorted);
    return rc;
}

/* RB_EINPUT "duplicate <what> name <name>" for the name of the first position whose name comes again later. */
static int check_unique(const char *what, const rb_name_ref *refs, size_t n, rb_err *err)
{
    const char *dup = NULL;
    size_t dup_at = SIZE_MAX;
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && strcmp(refs[j].name, refs[i].name) == 0; j++)
            ;
        if (j - i > 1 && refs[i].index < dup_at)
            dup = refs[i].name, dup_at = refs[i].index;
    }
    return dup ? rb_err_set(err, RB_EINPUT, "duplicate %s name %s", what, dup) : RB_OK;
}

/* The indexes of every name, checked for uniqueness (bodies, joints, frames, FT sensors, in this order). */
static int index_names(rb_model *m, struct rb_model_names *x, rb_err *err)
{
    size_t n_joints;
    rb_name_ref *joints =
        sorted_names(m->bodies, sizeof *m->bodies, offsetof(rb_body, joint_name), m->n_bodies, &n_joints);
    x->bodies = sorted_names(m->bodies, sizeof *m->bodies, offsetof(rb_body, name), m->n_bodies, &x->n_bodies);
    x->frames = sorted_names(m->frames, sizeof *m->frames, offsetof(rb_frame, name), m->n_frames, &x->n_frames);
    x->dofs = sorted_names(m->dof_names, sizeof *m->dof_names, 0, m->n_dofs, &x->n_dofs);
    x->ft = sorted_names(m->ft, sizeof *m->ft, offsetof(rb_ft_sensor, name), m->n_ft, &x->n_ft);
    int rc;
    if (!joints || !x->bodies || !x->frames || !x->dofs || !x->ft)
        rc = rb_err_set(err, RB_ENOMEM, "out of memory (model)");
    else if ((rc = check_unique("body", x->bodies, x->n_bodies, err)) == RB_OK &&
             (rc = check_unique("joint", joints, n_joints, err)) == RB_OK &&
             (rc = check_unique("frame", x->frames, x->n_frames, err)) == RB_OK)
        rc = check_unique("FT sensor", x->ft, x->n_ft, err);
    rb_free(joints);
    return rc;
}

int rb_model_end(rb_model *model, rb_err *err)
{
    if (!model)
        return rb_err_set(err, RB_EINVAL, "rb_model_end: NULL model");
    names_drop(model);
    int rc;
    for (size_t i = 0; i < model->n_bodies; i++) {
        rb_body *b = &model->bodies[i];
        if (i > 0 && (b->parent < 0 || (size_t)b->parent >= i))
            return rb_err_set(err, RB_EINVAL, "body %s: parent %d is not an earlier body", b->name, b->parent);
        if (!rb_model_xform_is_valid(&b->X_parent))
            return rb_err_set(err, RB_EINPUT, "body %s: joint pose is not a finite rigid transform", b->name);
        if (!rb_inertia_is_physical(b->inertia))
            return rb_err_set(err, RB_EINPUT, "body %s: inertia is not physically valid", b->name);
        if (b->type != RB_JOINT_FIXED) {
            double nrm = sqrt(rb_v3_dot(b->axis, b->axis));
            if (!(fabs(nrm - 1.0) <= 1e-9))
                return rb_err_set(err, RB_EINPUT, "joint %s: axis is not a unit vector", b->joint_name);
        }
    }
    /* A LINK frame at each body origin, unless the builder already made a frame of that name (the URDF
     * loader does, because a re-rooted body's link frame is not at the body origin). Frames added here
     * are not in `have`: two bodies of one name get two frames, and the body check below fails. */
    size_t n_have;
    rb_name_ref *have =
        sorted_names(model->frames, sizeof *model->frames, offsetof(rb_frame, name), model->n_frames, &n_have);
    if (!have)
        return rb_err_set(err, RB_ENOMEM, "out of memory (model)");
    for (size_t i = 0; i < model->n_bodies; i++) {
        if (find_name(have, n_have, model->bodies[i].name) >= 0)
            continue;
        rb_xform I;
        rb_xform_identity(&I);
        if ((rc = rb_model_add_frame(model, model->bodies[i].name, (int)i, &I, RB_FRAME_LINK, err)) < 0) {
            rb_free(have);
            return rc;
        }
    }
    rb_free(have);
    for (size_t i = 0; i < model->n_frames; i++)
        if (!rb_model_xform_is_valid(&model->frames[i].X_body))
            return rb_err_set(err, RB_EINPUT, "frame %s: pose is not a finite rigid transform", model->frames[i].name);
    struct rb_model_names *x = rb_calloc(1, sizeof *x);
    if (!x)
        return rb_err_set(err, RB_ENOMEM, "out of memory (model)");
    if ((rc = index_names(model, x, err)) < 0) {
        names_free(x);
        return rc;
    }
    model->names = x;
    model->nq = model->n_dofs + (model->floating ? 7 : 0);
    model->nv = model->n_dofs + (model->floating ? 6 : 0);
    model->total_mass = 0.0;
    for (size_t i = 0; i < model->n_bodies; i++)
        model->total_mass += model->bodies[i].inertia[0];
    return RB_OK;
}

void rb_model_free(rb_model *model)
{
    if (!model)
        return;
    rb_free(model->name);
    rb_free(model->source);
    for (size_t i = 0; i < model->n_bodies; i++) {
        rb_free(model->bodies[i].name);
        rb_free(model->bodies[i].joint_name);
    }
    rb_free(model->bodies);
    for (size_t i = 0; i < model->n_dofs; i++)
        rb_free(model->dof_names[i]);
    rb_free(model->dof_names);
    rb_free(model->dof_body);
    rb_free(model->dof_lower);
    rb_free(model->dof_upper);
    rb_free(model->dof_effort);
    rb_free(model->dof_velocity);
    for (size_t i = 0; i < model->n_frames; i++)
        rb_free(model->frames[i].name);
    rb_free(model->frames);
    for (size_t i = 0; i < model->n_ft; i++) {
        rb_free(model->ft[i].name);
        rb_free(model->ft[i].joint_name);
    }
    rb_free(model->ft);
    for (size_t i = 0; i < model->n_imu; i++)
        rb_free(model->imu[i].name);
    rb_free(model->imu);
    names_free(model->names);
    rb_free(model);
}

/* ---- lookups ----------------------------------------------------------------------------------------- */

long rb_model_body_index(const rb_model *model, const char *name)
{
    if (!model || !name)
        return -1;
    const struct rb_model_names *x = names_of(model);
    if (x)
        return find_name(x->bodies, x->n_bodies, name);
    for (size_t i = 0; i < model->n_bodies; i++)
        if (strcmp(model->bodies[i].name, name) == 0)
            return (long)i;
    return -1;
}

long rb_model_frame_index(const rb_model *model, const char *name)
{
    if (!model || !name)
        return -1;
    const struct rb_model_names *x = names_of(model);
    if (x)
        return find_name(x->frames, x->n_frames, name);
    for (size_t i = 0; i < model->n_frames; i++)
        if (strcmp(model->frames[i].name, name) == 0)
            return (long)i;
    return -1;
}

long rb_model_dof_index(const rb_model *model, const char *joint_name)
{
    if (!model || !joint_name)
        return -1;
    const struct rb_model_names *x = names_of(model);
    if (x)
        return find_name(x->dofs, x->n_dofs, joint_name);
    for (size_t i = 0; i < model->n_dofs; i++)
        if (strcmp(model->dof_names[i], joint_name) == 0)
            return (long)i;
    return -1;
}

long rb_model_ft_index(const rb_model *model, const char *sensor_name)
{
    if (!model || !sensor_name)
        return -1;
    const struct rb_model_names *x = names_of(model);
    if (x)
        return find_name(x->ft, x->n_ft, sensor_name);
    for (size_t i = 0; i < model->n_ft; i++)
        if (strcmp(model->ft[i].name, sensor_name) == 0)
            return (long)i;
    return -1;
}

/* ---- physical consistency ------------------------------------------------------------------------------ */

/* Eigenvalues of a symmetric 3x3 matrix (row-major), ascending: the closed-form trigonometric solution of
 * the characteristic cubic (accurate enough for a consistency check with a tolerance). */
static void sym3_eigenvalues(const double A[9], double ev[3])
{
    double p1 = A[1] * A[1] + A[2] * A[2] + A[5] * A[5];
    double q = (A[0] + A[4] + A[8]) / 3.0;
    if (p1 == 0.0) {
        ev[0] = A[0], ev[1] = A[4], ev[2] = A[8];
    } else {
        double p2 = (A[0] - q) * (A[0] - q) + (A[4] - q) * (A[4] - q) + (A[8] - q) * (A[8] - q) + 2.0 * p1;
        double p = sqrt(p2 / 6.0);
        double B[9];
        for (int i = 0; i < 9; i++)
            B[i] = (A[i] - (i % 4 == 0 ? q : 0.0)) / p;
        double detB = B[0] * (B[4] * B[8] - B[5] * B[7]) - B[1] * (B[3] * B[8] - B[5] * B[6]) +
                      B[2] * (B[3] * B[7] - B[4] * B[6]);
        double r = detB / 2.0;
        double phi = r <= -1.0 ? M_PI / 3.0 : r >= 1.0 ? 0.0 : acos(r) / 3.0;
        double e_hi = q + 2.0 * p * cos(phi), e_lo = q + 2.0 * p * cos(phi + 2.0 * M_PI / 3.0);
        ev[0] = e_lo, ev[2] = e_hi, ev[1] = 3.0 * q - e_lo - e_hi;
    }
    /* ascending */
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2 - i; j++)
            if (ev[j] > ev[j + 1]) {
                double t = ev[j];
                ev[j] = ev[j + 1], ev[j + 1] = t;
            }
}

bool rb_inertia_is_physical(const double pi[10])
{
    if (!pi || !all_finite(pi, 10))
        return false;
    double m = pi[0];
    if (m < 0.0)
        return false;
    double IO[9] = {pi[4], pi[5], pi[6], pi[5], pi[7], pi[8], pi[6], pi[8], pi[9]};
    double scale = fabs(pi[4]) + fabs(pi[7]) + fabs(pi[9]);
    if (m == 0.0) {
        /* A massless body has no first moment; a rotational inertia without mass is not physical either,
         * but rounding in merged inertias may leave dust. */
        double tol = 1e-12;
        for (int i = 1; i < 10; i++)
            if (fabs(pi[i]) > tol)
                return false;
        return true;
    }
    /* The rotational inertia about the centre of mass: I_c = I_O - m (|c|^2 1 - c c^T), c = h / m. */
    double c[3] = {pi[1] / m, pi[2] / m, pi[3] / m}, cc = rb_v3_dot(c, c), Ic[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            Ic[3 * i + j] = IO[3 * i + j] - m * ((i == j ? cc : 0.0) - c[i] * c[j]);
    /* The tolerance follows the magnitudes the subtraction above cancels. */
    double tol = 1e-9 * (scale + m * cc) + 1e-15;
    double ev[3];
    sym3_eigenvalues(Ic, ev);
    if (ev[0] < -tol)
        return false;
    /* Triangle inequality of the principal moments (the largest at most the sum of the others). */
    return ev[2] <= ev[0] + ev[1] + tol;
}
