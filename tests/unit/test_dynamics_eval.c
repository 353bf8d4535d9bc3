/* lib/dynamics batch evaluation (rb_dyn_eval, the engine of `roboest model eval`), called directly: every row
 * of the results is the dynamics function's output for that state, bit for bit (the same code on the same
 * numbers), on datasets/arm_2ft.urdf with random high-entropy states, fixed and floating base; forward
 * dynamics inverts rnea across two calls; the states' gravity replaces the model's without changing the
 * model; shapes and provenance attributes; and the errors with their messages. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dyn_support.h"
#include "roboest/dynamics.h"
#include "roboest/io.h"

#define ARM RB_SOURCE "/datasets/arm_2ft.urdf"

static const char *const SHA = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static rb_model *load_arm(bool floating)
{
    rb_model_opts opts = {.floating = floating};
    rb_model *m = NULL;
    rb_err err;
    cr_assert_eq(rb_model_load_urdf(ARM, &opts, &m, &err), RB_OK, "%s", err.msg);
    return m;
}

/* A new N x cols array `name` in `s` (ndim 2), its data to fill. */
static double *add(rb_arrays *s, const char *name, size_t N, size_t cols)
{
    rb_array *a = NULL;
    rb_err err;
    size_t dims[3] = {N, cols, 1};
    cr_assert_eq(rb_arrays_add(s, name, 2, dims, &a, &err), RB_OK, "%s", err.msg);
    return a->data;
}

/* Random states for `m`: q, dq, ddq (N x n) and, floating base, base_pose, base_twist, base_acc; the packed
 * q (N x nq), nu and nu_dot (N x nv) of every row in the caller's buffers. */
static rb_arrays *random_states(const rb_model *m, size_t N, uint64_t seed, double *qv, double *nu, double *nud)
{
    rb_arrays *s = NULL;
    rb_err err;
    cr_assert_eq(rb_arrays_new(&s, &err), RB_OK);
    size_t n = m->n_dofs, bq = m->floating ? 7 : 0, bv = m->floating ? 6 : 0;
    add(s, "q", N, n), add(s, "dq", N, n), add(s, "ddq", N, n);
    if (m->floating)
        add(s, "base_pose", N, 7), add(s, "base_twist", N, 6), add(s, "base_acc", N, 6);
    /* an add may move the arrays before it: look them up once all are there */
    double *q = rb_arrays_find(s, "q")->data, *dq = rb_arrays_find(s, "dq")->data,
           *ddq = rb_arrays_find(s, "ddq")->data;
    double *pose = NULL, *twist = NULL, *acc = NULL;
    if (m->floating)
        pose = rb_arrays_find(s, "base_pose")->data, twist = rb_arrays_find(s, "base_twist")->data,
        acc = rb_arrays_find(s, "base_acc")->data;
    trng r = {seed};
    for (size_t i = 0; i < N; i++) {
        double *qi = qv + m->nq * i, *vi = nu + m->nv * i, *ai = nud + m->nv * i;
        random_state(&r, m, qi, vi, 3.0, ai, 20.0);
        memcpy(q + n * i, qi + bq, n * sizeof *q);
        memcpy(dq + n * i, vi + bv, n * sizeof *dq);
        memcpy(ddq + n * i, ai + bv, n * sizeof *ddq);
        if (m->floating) {
            memcpy(pose + 7 * i, qi, 7 * sizeof *pose);
            memcpy(twist + 6 * i, vi, 6 * sizeof *twist);
            memcpy(acc + 6 * i, ai, 6 * sizeof *acc);
        }
    }
    return s;
}

static rb_arrays *eval_ok(const rb_model *m, rb_dyn_eval_op op, const rb_arrays *s, const rb_dyn_eval_opts *o)
{
    rb_arrays *res = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_eval(m, op, s, o, &res, &err), RB_OK, "%s: %s", rb_dyn_eval_op_name(op), err.msg);
    cr_assert_not_null(res);
    return res;
}

static const rb_array *result(const rb_arrays *res, const char *name, size_t ndim, size_t d0, size_t d1, size_t d2)
{
    const rb_array *a = rb_arrays_find(res, name);
    cr_assert_not_null(a, "no result %s", name);
    cr_assert(a->ndim == ndim && a->dims[0] == d0 && a->dims[1] == d1 && a->dims[2] == d2,
              "%s: %zu-D %zu x %zu x %zu, expected %zu-D %zu x %zu x %zu", name, a->ndim, a->dims[0], a->dims[1],
              a->dims[2], ndim, d0, d1, d2);
    return a;
}

static const char *attr(const rb_arrays *res, const char *key)
{
    for (size_t k = 0; k < res->n_attrs; k++)
        if (strcmp(res->attrs[k].key, key) == 0)
            return res->attrs[k].value;
    return NULL;
}

static void expect_fail(const rb_model *m, rb_dyn_eval_op op, const rb_arrays *s, const rb_dyn_eval_opts *o, int code,
                        const char *msg)
{
    rb_arrays *res = (rb_arrays *)&res; /* must come back NULL */
    rb_err err;
    int rc = rb_dyn_eval(m, op, s, o, &res, &err);
    cr_expect_eq(rc, code, "%s: %s (%s), expected %s", rb_dyn_eval_op_name(op), rb_status_name(rc), err.msg,
                 rb_status_name(code));
    cr_expect_null(res, "no result on failure");
    if (msg)
        cr_expect_str_eq(err.msg, msg);
}

Test(dynamics_eval, op_names_and_needs)
{
    static const char *const names[] = {"forward-kinematics",
                                        "jacobian",
                                        "djdq",
                                        "mass-matrix",
                                        "generalised-forces",
                                        "gravity",
                                        "rnea",
                                        "forward-dynamics",
                                        "com",
                                        "centroidal-momentum",
                                        "regressor"};
    cr_assert_eq(sizeof names / sizeof names[0], (size_t)RB_DYN_EVAL_N_OPS);
    for (int k = 0; k < RB_DYN_EVAL_N_OPS; k++) {
        cr_expect_str_eq(rb_dyn_eval_op_name((rb_dyn_eval_op)k), names[k]);
        cr_expect_eq(rb_dyn_eval_op_from_name(names[k]), k, "%s", names[k]);
    }
    cr_expect_eq(rb_dyn_eval_op_from_name("RNEA"), -1, "case-sensitive");
    cr_expect_eq(rb_dyn_eval_op_from_name("mass_matrix"), -1);
    cr_expect_eq(rb_dyn_eval_op_from_name(NULL), -1);
    cr_expect_null(rb_dyn_eval_op_name((rb_dyn_eval_op)RB_DYN_EVAL_N_OPS));
    cr_expect_eq(rb_dyn_eval_op_needs(RB_DYN_EVAL_RNEA), RB_DYN_EVAL_NEEDS_DQ | RB_DYN_EVAL_NEEDS_DDQ);
    cr_expect_eq(rb_dyn_eval_op_needs(RB_DYN_EVAL_FORWARD_DYNAMICS), RB_DYN_EVAL_NEEDS_DQ | RB_DYN_EVAL_NEEDS_TAU);
    cr_expect_eq(rb_dyn_eval_op_needs(RB_DYN_EVAL_MASS_MATRIX), 0u);
    cr_expect_eq(rb_dyn_eval_op_needs(RB_DYN_EVAL_FORWARD_KINEMATICS), (unsigned)RB_DYN_EVAL_TAKES_FRAME,
                 "forward-kinematics: frame optional");
    cr_expect_eq(rb_dyn_eval_op_needs(RB_DYN_EVAL_DJDQ),
                 RB_DYN_EVAL_NEEDS_DQ | RB_DYN_EVAL_NEEDS_FRAME | RB_DYN_EVAL_TAKES_FRAME);
    cr_expect_eq(rb_dyn_eval_op_needs((rb_dyn_eval_op)RB_DYN_EVAL_N_OPS), 0u);
}

/* Fixed base: every row of rnea and mass-matrix is rb_dyn_rnea / rb_dyn_mass_matrix at that state, and the
 * provenance attributes come in their order. */
Test(dynamics_eval, rnea_and_mass_matrix_rows_fixed_base)
{
    enum { N = 7 };
    rb_model *m = load_arm(false);
    size_t nv = m->nv;
    cr_assert_eq(nv, 4);
    double qv[N * 4], nu[N * 4], nud[N * 4], tau[4], M[16];
    rb_arrays *s = random_states(m, N, 11, qv, nu, nud);
    rb_dyn_eval_opts o = {-1, RB_DYN_MIXED, "some/dir/arm_states.csv", SHA};
    rb_arrays *rt = eval_ok(m, RB_DYN_EVAL_RNEA, s, &o);
    rb_arrays *rm = eval_ok(m, RB_DYN_EVAL_MASS_MATRIX, s, &o);
    const rb_array *T = result(rt, "tau", 2, N, nv, 1), *MM = result(rm, "M", 3, N, nv, nv);
    cr_expect_eq(rt->n, 1, "one result");
    rb_dyn *ws;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    for (size_t i = 0; i < N; i++) {
        cr_assert_eq(rb_dyn_rnea(m, ws, qv + nv * i, nu + nv * i, nud + nv * i, NULL, 0, tau, &err), RB_OK);
        cr_expect(memcmp(T->data + nv * i, tau, sizeof tau) == 0, "state %zu: rnea row", i);
        rb_mat Mv = rb_mat_view(M, nv, nv, nv);
        cr_assert_eq(rb_dyn_mass_matrix(m, ws, qv + nv * i, &Mv, &err), RB_OK);
        cr_expect(memcmp(MM->data + nv * nv * i, M, sizeof M) == 0, "state %zu: mass-matrix row", i);
    }
    cr_expect(max_abs(T->data, N * nv) > 1.0, "non-trivial torques");

    static const char *const keys[] = {"roboest_version", "model", "op", "input", "input_sha256", "joints"};
    cr_assert_eq(rt->n_attrs, 6);
    for (size_t k = 0; k < 6; k++)
        cr_expect_str_eq(rt->attrs[k].key, keys[k], "attribute %zu", k);
    cr_expect_str_eq(attr(rt, "roboest_version"), RB_VERSION);
    cr_expect_str_eq(attr(rt, "model"), ARM);
    cr_expect_str_eq(attr(rt, "op"), "rnea");
    cr_expect_str_eq(attr(rm, "op"), "mass-matrix");
    cr_expect_str_eq(attr(rt, "input"), "arm_states.csv", "the last path component");
    cr_expect_str_eq(attr(rt, "input_sha256"), SHA);
    char joints[256] = "";
    for (size_t j = 0; j < m->n_dofs; j++)
        strcat(strcat(joints, j ? "," : ""), m->dof_names[j]);
    cr_expect_str_eq(attr(rt, "joints"), joints);
    cr_expect_null(attr(rt, "frames"), "frames only for forward-kinematics of every frame");

    /* without names: no input attributes; opts NULL is frame -1, mixed */
    rb_arrays *bare = eval_ok(m, RB_DYN_EVAL_RNEA, s, NULL);
    cr_expect_null(attr(bare, "input"));
    cr_expect_null(attr(bare, "input_sha256"));
    cr_expect(memcmp(result(bare, "tau", 2, N, nv, 1)->data, T->data, N * nv * sizeof(double)) == 0);
    rb_arrays_free(bare);
    rb_dyn_free(ws);
    rb_arrays_free(rt), rb_arrays_free(rm), rb_arrays_free(s);
    rb_model_free(m);
}

/* Floating base: states packed as [base_pose, q], [base_twist, dq], [base_acc, ddq]; rnea rows match
 * rb_dyn_rnea, and forward-dynamics of rnea's tau (a second call, tau N x nv) gives back nu_dot. */
Test(dynamics_eval, floating_base_rnea_and_forward_dynamics)
{
    enum { N = 5 };
    rb_model *m = load_arm(true);
    size_t nq = m->nq, nv = m->nv;
    cr_assert_eq(nv, 10);
    double qv[N * 11], nu[N * 10], nud[N * 10], tau[10];
    rb_arrays *s = random_states(m, N, 23, qv, nu, nud);
    rb_arrays *rt = eval_ok(m, RB_DYN_EVAL_RNEA, s, NULL);
    const rb_array *T = result(rt, "tau", 2, N, nv, 1);
    rb_dyn *ws;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    for (size_t i = 0; i < N; i++) {
        cr_assert_eq(rb_dyn_rnea(m, ws, qv + nq * i, nu + nv * i, nud + nv * i, NULL, 0, tau, &err), RB_OK);
        cr_expect(memcmp(T->data + nv * i, tau, sizeof tau) == 0, "state %zu: rnea row", i);
    }
    cr_expect(max_abs(T->data, N * nv) > 1.0, "non-trivial base wrench and torques");

    memcpy(add(s, "tau", N, nv), T->data, N * nv * sizeof(double));
    rb_arrays *rf = eval_ok(m, RB_DYN_EVAL_FORWARD_DYNAMICS, s, NULL);
    const rb_array *A = result(rf, "ddq", 2, N, nv, 1);
    for (size_t i = 0; i < N; i++)
        cr_expect(rel_err(A->data + nv * i, nud + nv * i, nv) < 1e-9, "state %zu: ABA(RNEA(nu_dot)) = nu_dot: %g", i,
                  rel_err(A->data + nv * i, nud + nv * i, nv));
    rb_dyn_free(ws);
    rb_arrays_free(rt), rb_arrays_free(rf), rb_arrays_free(s);
    rb_model_free(m);
}

/* An optional gravity array replaces model->gravity for the call; the caller's model is not changed. */
Test(dynamics_eval, gravity_from_the_states)
{
    enum { N = 3 };
    rb_model *m = load_arm(false), *m2 = load_arm(false);
    double qv[N * 4], nu[N * 4], nud[N * 4], g[4];
    rb_arrays *s = random_states(m, N, 31, qv, nu, nud);
    rb_arrays *r0 = eval_ok(m, RB_DYN_EVAL_GRAVITY, s, NULL);
    const double grav[3] = {0.5, -1.25, -3.75};
    double *G = add(s, "gravity", N, 3);
    for (size_t i = 0; i < N; i++)
        memcpy(G + 3 * i, grav, sizeof grav);
    rb_arrays *r1 = eval_ok(m, RB_DYN_EVAL_GRAVITY, s, NULL);
    cr_expect(m->gravity[0] == 0.0 && m->gravity[1] == 0.0 && m->gravity[2] == -9.81, "the model is unchanged");
    memcpy(m2->gravity, grav, sizeof grav);
    rb_dyn *ws;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m2, &ws, &err), RB_OK);
    const rb_array *g0 = result(r0, "g", 2, N, 4, 1), *g1 = result(r1, "g", 2, N, 4, 1);
    for (size_t i = 0; i < N; i++) {
        cr_assert_eq(rb_dyn_gravity_forces(m2, ws, qv + 4 * i, g, &err), RB_OK);
        cr_expect(memcmp(g1->data + 4 * i, g, sizeof g) == 0, "state %zu: gravity of the states", i);
    }
    cr_expect(rel_err(g0->data, g1->data, N * 4) > 0.1, "the model's gravity without the array");
    /* rows that differ */
    G = (double *)rb_arrays_find(s, "gravity")->data;
    G[3 * 2 + 1] += 1e-3;
    rb_dyn_eval_opts o = {-1, RB_DYN_MIXED, "st.h5", NULL};
    expect_fail(m, RB_DYN_EVAL_GRAVITY, s, &o, RB_EINPUT,
                "st.h5: gravity: row 2 differs from row 0 (one gravity per file)");
    rb_dyn_free(ws);
    rb_arrays_free(r0), rb_arrays_free(r1), rb_arrays_free(s);
    rb_model_free(m), rb_model_free(m2);
}

/* Forward kinematics of one frame and of every frame (shape and frames attribute), and the Jacobian in the
 * representation asked for. */
Test(dynamics_eval, frames_and_representations)
{
    enum { N = 4 };
    rb_model *m = load_arm(false);
    size_t nv = m->nv, F = m->n_frames;
    cr_assert_gt(F, 2);
    double qv[N * 4], nu[N * 4], nud[N * 4];
    rb_arrays *s = random_states(m, N, 47, qv, nu, nud);
    long f = (long)F - 1;
    rb_dyn_eval_opts all = {-1, RB_DYN_MIXED, NULL, NULL}, one = {f, RB_DYN_MIXED, NULL, NULL};
    rb_arrays *ra = eval_ok(m, RB_DYN_EVAL_FORWARD_KINEMATICS, s, &all);
    rb_arrays *r1 = eval_ok(m, RB_DYN_EVAL_FORWARD_KINEMATICS, s, &one);
    const rb_array *Pa = result(ra, "pose", 3, N, F, 7), *P1 = result(r1, "pose", 2, N, 7, 1);
    char *names = calloc(F, 64);
    for (size_t k = 0; k < F; k++)
        strcat(strcat(names, k ? "," : ""), m->frames[k].name);
    cr_expect_str_eq(attr(ra, "frames"), names);
    cr_expect_null(attr(r1, "frames"));
    free(names);
    rb_dyn *ws;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    for (size_t i = 0; i < N; i++) {
        rb_xform X;
        fk_frame_pose(m, ws, qv + 4 * i, (size_t)f, &X);
        double want[7];
        memcpy(want, X.p, sizeof X.p);
        rb_quat_from_m3(X.R, want + 3);
        cr_expect(memcmp(P1->data + 7 * i, want, sizeof want) == 0, "state %zu: pose of frame %ld", i, f);
        cr_expect(memcmp(Pa->data + (F * i + (size_t)f) * 7, want, sizeof want) == 0, "state %zu: every frame", i);
    }
    double J[6 * 4];
    for (rb_dyn_rep rep = RB_DYN_BODY; rep <= RB_DYN_INERTIAL; rep++) {
        rb_dyn_eval_opts o = {f, rep, NULL, NULL};
        rb_arrays *rj = eval_ok(m, RB_DYN_EVAL_JACOBIAN, s, &o);
        const rb_array *JJ = result(rj, "J", 3, N, 6, nv);
        for (size_t i = 0; i < N; i++) {
            rb_mat Jv = rb_mat_view(J, 6, nv, nv);
            cr_assert_eq(rb_dyn_kinematics(m, ws, qv + 4 * i, NULL, NULL, &err), RB_OK);
            cr_assert_eq(rb_dyn_frame_jacobian(m, ws, (size_t)f, rep, &Jv, &err), RB_OK);
            cr_expect(memcmp(JJ->data + 6 * nv * i, J, sizeof J) == 0, "state %zu: Jacobian, rep %d", i, (int)rep);
        }
        rb_arrays_free(rj);
    }
    rb_dyn_free(ws);
    rb_arrays_free(ra), rb_arrays_free(r1), rb_arrays_free(s);
    rb_model_free(m);
}

/* A state array the op needs is missing: RB_ENOTFOUND naming it and the states. */
Test(dynamics_eval, missing_state_matrix)
{
    rb_model *m = load_arm(false), *mf = load_arm(true);
    rb_arrays *s = NULL;
    rb_err err;
    cr_assert_eq(rb_arrays_new(&s, &err), RB_OK);
    add(s, "q", 2, 4);
    add(s, "dq", 2, 4);
    rb_dyn_eval_opts o = {-1, RB_DYN_MIXED, "data/arm_states.csv", NULL};
    expect_fail(m, RB_DYN_EVAL_RNEA, s, &o, RB_ENOTFOUND, "data/arm_states.csv: no array ddq (needed here)");
    expect_fail(m, RB_DYN_EVAL_FORWARD_DYNAMICS, s, &o, RB_ENOTFOUND,
                "data/arm_states.csv: no array tau (needed here)");
    expect_fail(mf, RB_DYN_EVAL_COM, s, NULL, RB_ENOTFOUND, "states: no array base_pose (needed here)");
    add(s, "base_pose", 2, 7);
    expect_fail(mf, RB_DYN_EVAL_GENERALISED_FORCES, s, NULL, RB_ENOTFOUND, "states: no array base_twist (needed here)");
    /* a fixed base would ignore the base arrays: the results would not be the ones asked for */
    expect_fail(m, RB_DYN_EVAL_GENERALISED_FORCES, s, NULL, RB_EINPUT,
                "states: has base_pose, but the model has a fixed base (load it floating, roboest model eval "
                "--floating, or leave base_pose out)");
    rb_arrays_free(s);
    cr_assert_eq(rb_arrays_new(&s, &err), RB_OK);
    add(s, "q", 2, 4);
    add(s, "dq", 2, 4);
    rb_arrays *ok = eval_ok(m, RB_DYN_EVAL_GENERALISED_FORCES, s, NULL); /* fixed base: dq is enough */
    result(ok, "h", 2, 2, 4, 1);
    rb_arrays_free(ok), rb_arrays_free(s);
    rb_model_free(m), rb_model_free(mf);
}

/* A non-finite value in an array the op reads: RB_ENUMERIC naming the array, state, element and joint, not NaN
 * results; an array the op does not read is not looked at. */
Test(dynamics_eval, non_finite_states)
{
    rb_model *m = load_arm(false), *mf = load_arm(true);
    rb_arrays *s = NULL;
    rb_err err;
    cr_assert_eq(rb_arrays_new(&s, &err), RB_OK);
    add(s, "q", 3, 4);
    double *dq = add(s, "dq", 3, 4), *ddq = add(s, "ddq", 3, 4);
    ddq[5] = NAN;
    rb_arrays *ok = eval_ok(m, RB_DYN_EVAL_GENERALISED_FORCES, s, NULL); /* ddq not read */
    rb_arrays_free(ok);
    dq[4 * 2 + 1] = -INFINITY;
    char want[256];
    snprintf(want, sizeof want, "states: dq: state 2, element 1 (joint %s) is -inf: states must be finite",
             m->dof_names[1]);
    expect_fail(m, RB_DYN_EVAL_GENERALISED_FORCES, s, NULL, RB_ENUMERIC, want);
    dq[4 * 2 + 1] = 0;
    expect_fail(m, RB_DYN_EVAL_RNEA, s, NULL, RB_ENUMERIC, NULL);
    /* base arrays of a floating base: no joint to name */
    add(s, "base_pose", 3, 7)[7 + 3] = NAN;
    add(s, "base_twist", 3, 6);
    expect_fail(mf, RB_DYN_EVAL_GENERALISED_FORCES, s, NULL, RB_ENUMERIC,
                "states: base_pose: state 1, element 3 is nan: states must be finite");
    rb_arrays_free(s);
    rb_model_free(m), rb_model_free(mf);
}

/* A state array of the wrong shape: RB_EDIM with both shapes. A single state stored as a vector is one row. */
Test(dynamics_eval, wrong_shape)
{
    rb_model *m = load_arm(false);
    rb_arrays *s = NULL;
    rb_err err;
    cr_assert_eq(rb_arrays_new(&s, &err), RB_OK);
    add(s, "q", 4, 3);
    expect_fail(m, RB_DYN_EVAL_GRAVITY, s, NULL, RB_EDIM, "states: q is 4 x 3, expected 4 x 4");
    rb_arrays_free(s);

    cr_assert_eq(rb_arrays_new(&s, &err), RB_OK);
    add(s, "q", 4, 4);
    add(s, "dq", 3, 4);
    rb_dyn_eval_opts o = {-1, RB_DYN_MIXED, "st.mat", NULL};
    expect_fail(m, RB_DYN_EVAL_GENERALISED_FORCES, s, &o, RB_EDIM, "st.mat: dq is 3 x 4, expected 4 x 4");
    rb_arrays *ok = eval_ok(m, RB_DYN_EVAL_MASS_MATRIX, s, &o); /* dq not read */
    result(ok, "M", 3, 4, 4, 4);
    rb_arrays_free(ok), rb_arrays_free(s);

    cr_assert_eq(rb_arrays_new(&s, &err), RB_OK);
    rb_array *v = NULL;
    cr_assert_eq(rb_arrays_add(s, "q", 1, (size_t[3]){4, 1, 1}, &v, &err), RB_OK);
    v->data[0] = 0.3;
    ok = eval_ok(m, RB_DYN_EVAL_COM, s, NULL);
    result(ok, "com", 2, 1, 3, 1);
    rb_arrays_free(ok), rb_arrays_free(s);
    rb_model_free(m);
}

/* A dynamics failure at one state comes back with the states, the state and the op in front. */
Test(dynamics_eval, failing_state_is_named)
{
    rb_err err;
    double pi[10] = {0}, z[3] = {0, 0, 1};
    trng r = {3};
    trng_inertia(&r, pi);
    rb_model *m = NULL;
    rb_xform X;
    rb_xform_identity(&X);
    cr_assert_eq(rb_model_begin(&m, "massless", "base", pi, false, &err), RB_OK);
    cr_assert_eq(rb_model_add_body(m, "arm", 0, RB_JOINT_REVOLUTE, "shoulder", &X, z, pi, &err), RB_OK);
    memset(pi, 0, sizeof pi);
    cr_assert_eq(rb_model_add_body(m, "tip", 1, RB_JOINT_REVOLUTE, "wrist", &X, z, pi, &err), RB_OK);
    cr_assert_eq(rb_model_end(m, &err), RB_OK, "%s", err.msg);
    rb_arrays *s = NULL;
    cr_assert_eq(rb_arrays_new(&s, &err), RB_OK);
    add(s, "q", 2, 2);
    add(s, "dq", 2, 2);
    add(s, "tau", 2, 2);
    rb_dyn_eval_opts o = {-1, RB_DYN_MIXED, "run/st.csv", NULL};
    expect_fail(m, RB_DYN_EVAL_FORWARD_DYNAMICS, s, &o, RB_ENUMERIC,
                "run/st.csv: state 0: forward-dynamics: rb_dyn_aba: joint wrist moves no inertia");
    rb_arrays_free(s);
    rb_model_free(m);
}

/* Programming errors: RB_EINVAL before anything is read. */
Test(dynamics_eval, invalid_arguments)
{
    rb_model *m = load_arm(false);
    double qv[8], nu[8], nud[8];
    rb_arrays *s = random_states(m, 2, 5, qv, nu, nud), *res = NULL;
    rb_err err;
    rb_dyn_eval_opts none = {-1, RB_DYN_MIXED, NULL, NULL}, f0 = {0, RB_DYN_MIXED, NULL, NULL};
    expect_fail(m, RB_DYN_EVAL_JACOBIAN, s, &none, RB_EINVAL, "rb_dyn_eval: jacobian needs a frame");
    expect_fail(m, RB_DYN_EVAL_COM, s, &f0, RB_EINVAL, "rb_dyn_eval: com takes no frame");
    rb_dyn_eval_opts far = {(long)m->n_frames, RB_DYN_MIXED, NULL, NULL};
    expect_fail(m, RB_DYN_EVAL_DJDQ, s, &far, RB_EINVAL, NULL);
    rb_dyn_eval_opts rep = {0, (rb_dyn_rep)7, NULL, NULL};
    expect_fail(m, RB_DYN_EVAL_JACOBIAN, s, &rep, RB_EINVAL, NULL);
    expect_fail(m, (rb_dyn_eval_op)RB_DYN_EVAL_N_OPS, s, NULL, RB_EINVAL, NULL);
    expect_fail(NULL, RB_DYN_EVAL_COM, s, NULL, RB_EINVAL, NULL);
    expect_fail(m, RB_DYN_EVAL_COM, NULL, NULL, RB_EINVAL, NULL);
    cr_expect_eq(rb_dyn_eval(m, RB_DYN_EVAL_COM, s, NULL, NULL, &err), RB_EINVAL);
    cr_expect_eq(rb_dyn_eval(m, RB_DYN_EVAL_JACOBIAN, s, &f0, &res, &err), RB_OK, "frame 0 is a frame: %s", err.msg);
    rb_arrays_free(res), rb_arrays_free(s);
    rb_model_free(m);
}
