/* Batch evaluation (roboest model eval): states packed from named arrays, one op per row, result shapes and
 * provenance attributes. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "roboest/dynamics.h"
#include "roboest/io.h"

static const struct {
    const char *name;
    unsigned needs;
} OPS[RB_DYN_EVAL_N_OPS] = {
    [RB_DYN_EVAL_FORWARD_KINEMATICS] = {"forward-kinematics", RB_DYN_EVAL_TAKES_FRAME},
    [RB_DYN_EVAL_JACOBIAN] = {"jacobian", RB_DYN_EVAL_NEEDS_FRAME | RB_DYN_EVAL_TAKES_FRAME},
    [RB_DYN_EVAL_DJDQ] = {"djdq", RB_DYN_EVAL_NEEDS_DQ | RB_DYN_EVAL_NEEDS_FRAME | RB_DYN_EVAL_TAKES_FRAME},
    [RB_DYN_EVAL_MASS_MATRIX] = {"mass-matrix", 0},
    [RB_DYN_EVAL_GENERALISED_FORCES] = {"generalised-forces", RB_DYN_EVAL_NEEDS_DQ},
    [RB_DYN_EVAL_GRAVITY] = {"gravity", 0},
    [RB_DYN_EVAL_RNEA] = {"rnea", RB_DYN_EVAL_NEEDS_DQ | RB_DYN_EVAL_NEEDS_DDQ},
    [RB_DYN_EVAL_FORWARD_DYNAMICS] = {"forward-dynamics", RB_DYN_EVAL_NEEDS_DQ | RB_DYN_EVAL_NEEDS_TAU},
    [RB_DYN_EVAL_COM] = {"com", 0},
    [RB_DYN_EVAL_CENTROIDAL_MOMENTUM] = {"centroidal-momentum", RB_DYN_EVAL_NEEDS_DQ},
    [RB_DYN_EVAL_REGRESSOR] = {"regressor", RB_DYN_EVAL_NEEDS_DQ | RB_DYN_EVAL_NEEDS_DDQ},
};

const char *rb_dyn_eval_op_name(rb_dyn_eval_op op) { return (unsigned)op < RB_DYN_EVAL_N_OPS ? OPS[op].name : NULL; }

int rb_dyn_eval_op_from_name(const char *name)
{
    for (int k = 0; name && k < RB_DYN_EVAL_N_OPS; k++)
        if (strcmp(OPS[k].name, name) == 0)
            return k;
    return -1;
}

unsigned rb_dyn_eval_op_needs(rb_dyn_eval_op op) { return (unsigned)op < RB_DYN_EVAL_N_OPS ? OPS[op].needs : 0; }

typedef struct eval_ctx {
    const char *states_name;
    const rb_model *model; /* the caller's model, or a copy of it with the states' gravity */
    rb_dyn *ws;
    rb_dyn_eval_op op;
    rb_dyn_rep rep;
    long frame; /* -1: every frame (forward-kinematics only) */
    size_t N;   /* states */
    const rb_array *q, *dq, *ddq, *tau, *base_pose, *base_twist, *base_acc;
    double *qv, *nu, *nu_dot, *tau_v; /* one state, nq / nv sized */
} eval_ctx;

/* RB_ENUMERIC naming the first non-finite value of the rows x cols array `name` (a NaN state gives NaN results
 * silently otherwise); column first_joint is joint 0 (cols: none). */
static int check_finite(const eval_ctx *c, const char *name, const double *v, size_t rows, size_t cols,
                        size_t first_joint, rb_err *err)
{
    for (size_t i = 0; i < rows * cols; i++) {
        if (isfinite(v[i]))
            continue;
        size_t row = i / cols, col = i % cols;
        char joint[300] = "";
        if (col >= first_joint && col - first_joint < c->model->n_dofs)
            snprintf(joint, sizeof joint, " (joint %s)", c->model->dof_names[col - first_joint]);
        return rb_err_set(err, RB_ENUMERIC, "%s: %s: state %zu, element %zu%s is %g: states must be finite",
                          c->states_name, name, row, col, joint, v[i]);
    }
    return RB_OK;
}

/* The states array `name` as N x cols (N from q), all finite; NULL with an error if required and absent. */
static int state_array(eval_ctx *c, const rb_arrays *states, const char *name, size_t cols, size_t first_joint,
                       bool required, const rb_array **out, rb_err *err)
{
    const rb_array *a = rb_arrays_find(states, name);
    *out = a;
    if (!a)
        return required ? rb_err_set(err, RB_ENOTFOUND, "%s: no array %s (needed here)", c->states_name, name) : RB_OK;
    /* A single state saved as a row vector reads back as a vector (io.h): take it as 1 x cols. */
    bool one_row = a->ndim == 1 && cols > 1 && a->dims[0] == cols && c->N <= 1;
    size_t rows = one_row ? 1 : c->N ? c->N : a->dims[0];
    if (one_row)
        ;
    else if (a->ndim > 2 || a->dims[0] != rows || a->dims[1] != cols)
        return rb_err_set(err, RB_EDIM, "%s: %s is %zu x %zu, expected %zu x %zu", c->states_name, name, a->dims[0],
                          a->dims[1], rows, cols);
    c->N = rows;
    return check_finite(c, name, a->data, rows, cols, first_joint, err);
}

/* The arrays the op needs; `gravity_model` receives the model with the states' gravity, if they hold one. */
static int load_states(eval_ctx *c, const rb_arrays *states, unsigned needs, rb_model *gravity_model, rb_err *err)
{
    const rb_model *m = c->model;
    bool fl = m->floating;
    const size_t none = SIZE_MAX, tau_joint0 = fl ? 6 : 0;
    static const char *const base[] = {"base_pose", "base_twist", "base_acc"};
    int rc = RB_OK;
    for (size_t i = 0; i < 3 && !fl && !rc; i++) /* a fixed base would ignore them: not the results asked for */
        if (rb_arrays_find(states, base[i]))
            rc = rb_err_set(err, RB_EINPUT,
                            "%s: has %s, but the model has a fixed base (load it floating, roboest model eval "
                            "--floating, or leave %s out)",
                            c->states_name, base[i], base[i]);
    if (!rc)
        rc = state_array(c, states, "q", m->n_dofs, 0, true, &c->q, err);
    if (!rc && fl)
        rc = state_array(c, states, "base_pose", 7, none, true, &c->base_pose, err);
    if (!rc && (needs & RB_DYN_EVAL_NEEDS_DQ))
        rc = state_array(c, states, "dq", m->n_dofs, 0, true, &c->dq, err);
    if (!rc && (needs & RB_DYN_EVAL_NEEDS_DQ) && fl)
        rc = state_array(c, states, "base_twist", 6, none, true, &c->base_twist, err);
    if (!rc && (needs & RB_DYN_EVAL_NEEDS_DDQ))
        rc = state_array(c, states, "ddq", m->n_dofs, 0, true, &c->ddq, err);
    if (!rc && (needs & RB_DYN_EVAL_NEEDS_DDQ) && fl)
        rc = state_array(c, states, "base_acc", 6, none, true, &c->base_acc, err);
    if (!rc && (needs & RB_DYN_EVAL_NEEDS_TAU))
        rc = state_array(c, states, "tau", m->nv, tau_joint0, true, &c->tau, err);
    const rb_array *g = NULL;
    if (!rc)
        rc = state_array(c, states, "gravity", 3, none, false, &g, err);
    for (size_t i = 1; !rc && g && i < g->dims[0]; i++)
        if (memcmp(g->data, g->data + 3 * i, 3 * sizeof(double)) != 0)
            rc = rb_err_set(err, RB_EINPUT, "%s: gravity: row %zu differs from row 0 (one gravity per file)",
                            c->states_name, i);
    if (!rc && g && g->dims[0]) {
        /* the caller's model stays immutable: a shallow copy (same arrays) carries the gravity */
        *gravity_model = *m;
        memcpy(gravity_model->gravity, g->data, sizeof gravity_model->gravity);
        c->model = gravity_model;
    }
    return rc;
}

/* State i into qv, nu, nu_dot, tau_v. */
static void fill_state(eval_ctx *c, size_t i)
{
    const rb_model *m = c->model;
    size_t n = m->n_dofs, nb_q = m->floating ? 7 : 0, nb_v = m->floating ? 6 : 0;
    if (m->floating)
        memcpy(c->qv, c->base_pose->data + 7 * i, 7 * sizeof(double));
    memcpy(c->qv + nb_q, c->q->data + n * i, n * sizeof(double));
    if (c->dq) {
        if (m->floating)
            memcpy(c->nu, c->base_twist->data + 6 * i, 6 * sizeof(double));
        memcpy(c->nu + nb_v, c->dq->data + n * i, n * sizeof(double));
    }
    if (c->ddq) {
        if (m->floating)
            memcpy(c->nu_dot, c->base_acc->data + 6 * i, 6 * sizeof(double));
        memcpy(c->nu_dot + nb_v, c->ddq->data + n * i, n * sizeof(double));
    }
    if (c->tau)
        memcpy(c->tau_v, c->tau->data + m->nv * i, m->nv * sizeof(double));
}

static void pose7(const rb_xform *X, double *out)
{
    memcpy(out, X->p, 3 * sizeof(double));
    rb_quat_from_m3(X->R, out + 3);
}

/* Evaluate state i into `out` (the row of the result array; `extra` the second result, if any). */
static int eval_row(eval_ctx *c, double *out, double *extra, rb_err *err)
{
    const rb_model *m = c->model;
    rb_dyn *ws = c->ws;
    const double *nu = c->dq ? c->nu : NULL;
    rb_mat J;
    rb_xform X;
    int rc = RB_OK;
    switch (c->op) {
    case RB_DYN_EVAL_FORWARD_KINEMATICS:
        rc = rb_dyn_kinematics(m, ws, c->qv, NULL, NULL, err);
        if (c->frame >= 0) {
            if (!rc && !(rc = rb_dyn_frame_pose(m, ws, (size_t)c->frame, &X, err)))
                pose7(&X, out);
            break;
        }
        for (size_t f = 0; !rc && f < m->n_frames; f++)
            if (!(rc = rb_dyn_frame_pose(m, ws, f, &X, err)))
                pose7(&X, out + 7 * f);
        break;
    case RB_DYN_EVAL_JACOBIAN:
        J = rb_mat_view(out, 6, m->nv, m->nv);
        if (!(rc = rb_dyn_kinematics(m, ws, c->qv, NULL, NULL, err)))
            rc = rb_dyn_frame_jacobian(m, ws, (size_t)c->frame, c->rep, &J, err);
        break;
    case RB_DYN_EVAL_DJDQ:
        if (!(rc = rb_dyn_kinematics(m, ws, c->qv, nu, NULL, err)))
            rc = rb_dyn_frame_jdot_nu(m, ws, (size_t)c->frame, c->rep, out, err);
        break;
    case RB_DYN_EVAL_MASS_MATRIX:
        J = rb_mat_view(out, m->nv, m->nv, m->nv);
        rc = rb_dyn_mass_matrix(m, ws, c->qv, &J, err);
        break;
    case RB_DYN_EVAL_GENERALISED_FORCES: rc = rb_dyn_bias_forces(m, ws, c->qv, nu, out, err); break;
    case RB_DYN_EVAL_GRAVITY: rc = rb_dyn_gravity_forces(m, ws, c->qv, out, err); break;
    case RB_DYN_EVAL_RNEA: rc = rb_dyn_rnea(m, ws, c->qv, nu, c->nu_dot, NULL, 0, out, err); break;
    case RB_DYN_EVAL_FORWARD_DYNAMICS: rc = rb_dyn_aba(m, ws, c->qv, nu, c->tau_v, NULL, 0, out, err); break;
    case RB_DYN_EVAL_COM:
        if (!(rc = rb_dyn_kinematics(m, ws, c->qv, NULL, NULL, err)))
            rc = rb_dyn_com(m, ws, out, err);
        break;
    case RB_DYN_EVAL_CENTROIDAL_MOMENTUM:
        if (!(rc = rb_dyn_kinematics(m, ws, c->qv, nu, NULL, err)))
            rc = rb_dyn_centroidal_momentum(m, ws, out, extra, err);
        break;
    case RB_DYN_EVAL_REGRESSOR:
        J = rb_mat_view(out, m->nv, 10 * m->n_bodies, 10 * m->n_bodies);
        rc = rb_dyn_regressor(m, ws, c->qv, nu, c->nu_dot, &J, err);
        break;
    }
    return rc;
}

/* The result arrays of an op: name, dims (the first is N). */
static int add_results(eval_ctx *c, rb_arrays *res, rb_array **main, rb_array **extra, rb_err *err)
{
    const rb_model *m = c->model;
    size_t N = c->N, nv = m->nv;
    struct {
        const char *name;
        size_t ndim, d1, d2;
    } spec = {NULL, 2, 0, 1};
    switch (c->op) {
    case RB_DYN_EVAL_FORWARD_KINEMATICS:
        spec.name = "pose";
        if (c->frame >= 0)
            spec.d1 = 7;
        else
            spec.ndim = 3, spec.d1 = m->n_frames, spec.d2 = 7;
        break;
    case RB_DYN_EVAL_JACOBIAN: spec.name = "J", spec.ndim = 3, spec.d1 = 6, spec.d2 = nv; break;
    case RB_DYN_EVAL_DJDQ: spec.name = "djdq", spec.d1 = 6; break;
    case RB_DYN_EVAL_MASS_MATRIX: spec.name = "M", spec.ndim = 3, spec.d1 = nv, spec.d2 = nv; break;
    case RB_DYN_EVAL_GENERALISED_FORCES: spec.name = "h", spec.d1 = nv; break;
    case RB_DYN_EVAL_GRAVITY: spec.name = "g", spec.d1 = nv; break;
    case RB_DYN_EVAL_RNEA: spec.name = "tau", spec.d1 = nv; break;
    case RB_DYN_EVAL_FORWARD_DYNAMICS: spec.name = "ddq", spec.d1 = nv; break;
    case RB_DYN_EVAL_COM: spec.name = "com", spec.d1 = 3; break;
    case RB_DYN_EVAL_CENTROIDAL_MOMENTUM: spec.name = "centroidal_momentum", spec.d1 = 6; break;
    case RB_DYN_EVAL_REGRESSOR: spec.name = "Y", spec.ndim = 3, spec.d1 = nv, spec.d2 = 10 * m->n_bodies; break;
    }
    size_t dims[3] = {N, spec.d1, spec.d2};
    int rc = rb_arrays_add(res, spec.name, spec.ndim, dims, main, err);
    *extra = NULL;
    if (!rc && c->op == RB_DYN_EVAL_CENTROIDAL_MOMENTUM) {
        size_t cdims[3] = {N, 3, 1};
        rc = rb_arrays_add(res, "com", 2, cdims, extra, err);
        *main = (rb_array *)rb_arrays_find(res, "centroidal_momentum"); /* add may have moved it */
    }
    return rc;
}

static int set_provenance(const eval_ctx *c, rb_arrays *res, const rb_dyn_eval_opts *opts, rb_err *err)
{
    const rb_model *m = c->model;
    /* the order of every joint-space axis, and of the frames in a whole-model pose */
    size_t len = 1;
    for (size_t i = 0; i < m->n_dofs; i++)
        len += strlen(m->dof_names[i]) + 1;
    for (size_t f = 0; f < m->n_frames; f++)
        len += strlen(m->frames[f].name) + 1;
    char *joints = rb_calloc(len, 1), *frames = rb_calloc(len, 1);
    rb_provenance pv = {0, NULL, NULL};
    int rc = joints && frames ? rb_provenance_init(&pv, err) : rb_err_set(err, RB_ENOMEM, "out of memory");
    if (!rc) {
        for (size_t i = 0; i < m->n_dofs; i++)
            strcat(strcat(joints, i ? "," : ""), m->dof_names[i]);
        for (size_t f = 0; f < m->n_frames; f++)
            strcat(strcat(frames, f ? "," : ""), m->frames[f].name);
        rc = rb_provenance_add(&pv, "model", m->source, err);
    }
    if (!rc)
        rc = rb_provenance_add(&pv, "op", OPS[c->op].name, err);
    if (!rc && opts->states_name)
        rc = rb_provenance_add(&pv, "input", rb_path_basename(opts->states_name), err);
    if (!rc)
        rc = rb_provenance_add(&pv, "input_sha256", opts->states_sha256, err);
    if (!rc)
        rc = rb_provenance_add(&pv, "joints", joints, err);
    if (!rc && c->op == RB_DYN_EVAL_FORWARD_KINEMATICS && c->frame < 0)
        rc = rb_provenance_add(&pv, "frames", frames, err);
    if (!rc)
        rc = rb_arrays_set_provenance(res, &pv, err);
    rb_provenance_free(&pv);
    rb_free(joints);
    rb_free(frames);
    return rc;
}

static int check_args(const rb_model *model, rb_dyn_eval_op op, const rb_arrays *states, const rb_dyn_eval_opts *opts,
                      rb_arrays **out, rb_err *err)
{
    if (!model || !states || !out)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_eval: NULL model, states or output");
    if ((unsigned)op >= RB_DYN_EVAL_N_OPS)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_eval: op %d out of range", (int)op);
    unsigned needs = OPS[op].needs;
    if ((needs & RB_DYN_EVAL_NEEDS_FRAME) && opts->frame < 0)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_eval: %s needs a frame", OPS[op].name);
    if (opts->frame >= 0 && !(needs & RB_DYN_EVAL_TAKES_FRAME))
        return rb_err_set(err, RB_EINVAL, "rb_dyn_eval: %s takes no frame", OPS[op].name);
    if (opts->frame < -1 || (opts->frame >= 0 && (size_t)opts->frame >= model->n_frames))
        return rb_err_set(err, RB_EINVAL, "rb_dyn_eval: frame %ld out of range (model %s has %zu frames)", opts->frame,
                          model->name ? model->name : "", model->n_frames);
    if (opts->rep != RB_DYN_BODY && opts->rep != RB_DYN_MIXED && opts->rep != RB_DYN_INERTIAL)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_eval: representation %d out of range", (int)opts->rep);
    return RB_OK;
}

int rb_dyn_eval(const rb_model *model, rb_dyn_eval_op op, const rb_arrays *states, const rb_dyn_eval_opts *opts,
                rb_arrays **out, rb_err *err)
{
    static const rb_dyn_eval_opts defaults = {-1, RB_DYN_MIXED, NULL, NULL};
    if (!opts)
        opts = &defaults;
    if (out)
        *out = NULL;
    int rc = check_args(model, op, states, opts, out, err);
    if (rc)
        return rc;
    eval_ctx c = {.states_name = opts->states_name ? opts->states_name : "states",
                  .model = model,
                  .op = op,
                  .rep = opts->rep,
                  .frame = opts->frame};
    rb_model gravity_model;
    rb_arrays *res = NULL;
    rb_array *main = NULL, *extra = NULL;
    rc = load_states(&c, states, OPS[op].needs, &gravity_model, err);
    const rb_model *m = c.model;
    if (!rc)
        rc = rb_dyn_alloc(m, &c.ws, err);
    c.qv = rb_calloc(m->nq, sizeof(double));
    c.nu = rb_calloc(m->nv, sizeof(double));
    c.nu_dot = rb_calloc(m->nv, sizeof(double));
    c.tau_v = rb_calloc(m->nv, sizeof(double));
    if (!rc && (!c.qv || !c.nu || !c.nu_dot || !c.tau_v))
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    if (!rc)
        rc = rb_arrays_new(&res, err);
    if (!rc)
        rc = add_results(&c, res, &main, &extra, err);
    size_t row = main ? main->dims[1] * main->dims[2] : 0;
    for (size_t i = 0; !rc && i < c.N; i++) {
        fill_state(&c, i);
        rc = eval_row(&c, main->data + row * i, extra ? extra->data + 3 * i : NULL, err);
        if (rc)
            rb_err_prefix(err, rc, "%s: state %zu: %s: ", c.states_name, i, OPS[op].name);
    }
    if (!rc)
        rc = set_provenance(&c, res, opts, err);
    rb_dyn_free(c.ws);
    rb_free(c.qv);
    rb_free(c.nu);
    rb_free(c.nu_dot);
    rb_free(c.tau_v);
    if (rc)
        rb_arrays_free(res);
    else
        *out = res;
    return rc;
}
