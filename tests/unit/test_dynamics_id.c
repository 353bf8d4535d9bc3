/* lib/dynamics: inverse and forward dynamics checked by identities between methods, on random trees
 * (branching, revolute, prismatic and fixed joints, random axes, poses and inertias; fixed and floating
 * base) at random high-entropy states. Tolerances are relative: max |a - b| / max(1, max |b|). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dyn_support.h"
#include "roboest/dynamics.h"

/* identities exact in exact arithmetic, evaluated through different code paths (observed: below 2e-15) */
static const double TOL_ID = 1e-12;
/* forward dynamics: errors grow with the condition number of M (observed: below 1e-12) */
static const double TOL_FD = 1e-10;

static const size_t SIZES[] = {2, 5, 12, 30};
enum { N_SEEDS = 3, N_STATES = 5 };

typedef struct fixture {
    rb_model *m;
    rb_dyn *ws;
    size_t nq, nv;
    double *q, *nu, *nud, *tau, *tmp, *tmp2;
    rb_mat M;
} fixture;

static fixture setup(trng *r, size_t nb, bool floating)
{
    fixture f = {0};
    rb_err err;
    f.m = random_tree(r, nb, floating);
    cr_assert_not_null(f.m);
    cr_assert_eq(rb_dyn_alloc(f.m, &f.ws, &err), RB_OK, "%s", err.msg);
    f.nq = f.m->nq, f.nv = f.m->nv;
    f.q = calloc(f.nq + 1, sizeof *f.q);
    f.nu = calloc(f.nv + 1, sizeof *f.nu);
    f.nud = calloc(f.nv + 1, sizeof *f.nud);
    f.tau = calloc(f.nv + 1, sizeof *f.tau);
    f.tmp = calloc(f.nv + 1, sizeof *f.tmp);
    f.tmp2 = calloc(f.nv + 1, sizeof *f.tmp2);
    cr_assert_eq(rb_mat_alloc(&f.M, f.nv, f.nv, &err), RB_OK);
    return f;
}

static void teardown(fixture *f)
{
    rb_dyn_free(f->ws);
    rb_model_free(f->m);
    free(f->q), free(f->nu), free(f->nud), free(f->tau), free(f->tmp), free(f->tmp2);
    rb_mat_free(&f->M);
}

/* Cholesky in place on a copy: true if positive definite. */
static bool is_spd(const rb_mat *M)
{
    size_t n = M->rows;
    double *L = calloc(n * n + 1, sizeof *L);
    bool ok = true;
    for (size_t j = 0; j < n && ok; j++) {
        double d = *rb_mat_at(M, j, j);
        for (size_t k = 0; k < j; k++)
            d -= L[j * n + k] * L[j * n + k];
        if (!(d > 0.0)) {
            ok = false;
            break;
        }
        L[j * n + j] = sqrt(d);
        for (size_t i = j + 1; i < n; i++) {
            double s = *rb_mat_at(M, i, j);
            for (size_t k = 0; k < j; k++)
                s -= L[i * n + k] * L[j * n + k];
            L[i * n + j] = s / L[j * n + j];
        }
    }
    free(L);
    return ok;
}

static void mat_vec(const rb_mat *A, const double *x, double *y)
{
    for (size_t i = 0; i < A->rows; i++) {
        double s = 0.0;
        for (size_t j = 0; j < A->cols; j++)
            s += *rb_mat_at(A, i, j) * x[j];
        y[i] = s;
    }
}

static void random_ext(trng *r, const rb_model *m, rb_ext_wrench *ext, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        ext[k].frame = (int)trng_index(r, m->n_frames);
        ext[k].rep = (rb_dyn_rep)trng_index(r, 3);
        random_vector(r, ext[k].w, 6, -20.0, 20.0);
    }
}

/* M symmetric positive definite; M nu_dot + h = RNEA; h(q, 0) = g(q); Y pi = RNEA. */
Test(dynamics_id, crba_rnea_regressor_identities)
{
    rb_err err;
    for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; s++)
        for (int fb = 0; fb < 2; fb++)
            for (uint64_t seed = 1; seed <= N_SEEDS; seed++) {
                trng r = {seed * 1000 + SIZES[s] * 10 + (uint64_t)fb};
                fixture f = setup(&r, SIZES[s], fb);
                size_t npi = 10 * f.m->n_bodies;
                double *pi = calloc(npi, sizeof *pi), *h = calloc(f.nv + 1, sizeof *h),
                       *g = calloc(f.nv + 1, sizeof *g);
                rb_mat Y;
                cr_assert_eq(rb_mat_alloc(&Y, f.nv, npi, &err), RB_OK);
                rb_dyn_inertial_params(f.m, pi);
                for (int k = 0; k < N_STATES; k++) {
                    random_state(&r, f.m, f.q, f.nu, 3.0, f.nud, 20.0);
                    cr_assert_eq(rb_dyn_mass_matrix(f.m, f.ws, f.q, &f.M, &err), RB_OK, "%s", err.msg);
                    for (size_t i = 0; i < f.nv; i++)
                        for (size_t j = 0; j < f.nv; j++)
                            cr_assert_eq(*rb_mat_at(&f.M, i, j), *rb_mat_at(&f.M, j, i), "M symmetric");
                    cr_assert(is_spd(&f.M), "M positive definite (nb %zu, floating %d, seed %d)", SIZES[s], fb,
                              (int)seed);

                    cr_assert_eq(rb_dyn_rnea(f.m, f.ws, f.q, f.nu, f.nud, NULL, 0, f.tau, &err), RB_OK, "%s", err.msg);
                    cr_assert_eq(rb_dyn_bias_forces(f.m, f.ws, f.q, f.nu, h, &err), RB_OK, "%s", err.msg);
                    mat_vec(&f.M, f.nud, f.tmp);
                    for (size_t i = 0; i < f.nv; i++)
                        f.tmp[i] += h[i];
                    double e = rel_err(f.tmp, f.tau, f.nv);
                    cr_assert(e < TOL_ID, "M nu_dot + h = RNEA: %g (nb %zu, floating %d)", e, SIZES[s], fb);

                    /* h(q, 0) = g(q), and RNEA with NULL velocity and acceleration is g as well */
                    cr_assert_eq(rb_dyn_gravity_forces(f.m, f.ws, f.q, g, &err), RB_OK);
                    memset(f.tmp2, 0, f.nv * sizeof *f.tmp2);
                    cr_assert_eq(rb_dyn_bias_forces(f.m, f.ws, f.q, f.tmp2, h, &err), RB_OK);
                    cr_assert(rel_err(h, g, f.nv) < TOL_ID, "h(q, 0) = g(q)");
                    cr_assert_eq(rb_dyn_rnea(f.m, f.ws, f.q, NULL, NULL, NULL, 0, h, &err), RB_OK);
                    cr_assert(rel_err(h, g, f.nv) < TOL_ID, "RNEA(q, 0, 0) = g(q)");

                    /* Y(q, nu, nu_dot) pi = RNEA(q, nu, nu_dot) */
                    cr_assert_eq(rb_dyn_regressor(f.m, f.ws, f.q, f.nu, f.nud, &Y, &err), RB_OK, "%s", err.msg);
                    mat_vec(&Y, pi, f.tmp);
                    e = rel_err(f.tmp, f.tau, f.nv);
                    cr_assert(e < TOL_ID, "Y pi = RNEA: %g", e);
                }
                rb_mat_free(&Y);
                free(pi), free(h), free(g);
                teardown(&f);
            }
}

/* ABA = CRBA + Cholesky, RNEA(q, nu, FD(q, nu, tau)) = tau, with and without external wrenches. */
Test(dynamics_id, forward_dynamics_inverts_rnea)
{
    rb_err err;
    rb_ext_wrench ext[4];
    for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; s++)
        for (int fb = 0; fb < 2; fb++)
            for (uint64_t seed = 1; seed <= N_SEEDS; seed++) {
                trng r = {seed * 7919 + SIZES[s] * 10 + (uint64_t)fb};
                fixture f = setup(&r, SIZES[s], fb);
                for (int k = 0; k < N_STATES; k++) {
                    size_t n_ext = (size_t)k % 5;
                    random_state(&r, f.m, f.q, f.nu, 3.0, NULL, 0);
                    random_vector(&r, f.tau, f.nv, -30.0, 30.0);
                    random_ext(&r, f.m, ext, n_ext);
                    cr_assert_eq(rb_dyn_aba(f.m, f.ws, f.q, f.nu, f.tau, ext, n_ext, f.nud, &err), RB_OK, "%s",
                                 err.msg);
                    cr_assert_eq(rb_dyn_fd_cholesky(f.m, f.ws, f.q, f.nu, f.tau, ext, n_ext, f.tmp, &err), RB_OK, "%s",
                                 err.msg);
                    double e = rel_err(f.nud, f.tmp, f.nv);
                    cr_assert(e < TOL_FD, "ABA = CRBA + Cholesky: %g (nb %zu, floating %d)", e, SIZES[s], fb);
                    cr_assert_eq(rb_dyn_rnea(f.m, f.ws, f.q, f.nu, f.nud, ext, n_ext, f.tmp2, &err), RB_OK);
                    e = rel_err(f.tmp2, f.tau, f.nv);
                    cr_assert(e < TOL_FD, "RNEA(ABA(tau)) = tau: %g (nb %zu, floating %d)", e, SIZES[s], fb);
                    cr_assert_eq(rb_dyn_rnea(f.m, f.ws, f.q, f.nu, f.tmp, ext, n_ext, f.tmp2, &err), RB_OK);
                    e = rel_err(f.tmp2, f.tau, f.nv);
                    cr_assert(e < TOL_FD, "RNEA(CRBA FD(tau)) = tau: %g", e);
                }
                teardown(&f);
            }
}

/* An external wrench in each representation enters as - J^T w, J the frame Jacobian of the same
 * representation (so the representations of wrenches and Jacobians agree). */
Test(dynamics_id, external_wrenches_enter_through_the_jacobian_transpose)
{
    rb_err err;
    for (int fb = 0; fb < 2; fb++) {
        trng r = {4242 + (uint64_t)fb};
        fixture f = setup(&r, 14, fb);
        rb_mat J;
        cr_assert_eq(rb_mat_alloc(&J, 6, f.nv, &err), RB_OK);
        for (int k = 0; k < 10; k++) {
            rb_ext_wrench e;
            random_state(&r, f.m, f.q, f.nu, 3.0, f.nud, 20.0);
            random_ext(&r, f.m, &e, 1);
            cr_assert_eq(rb_dyn_rnea(f.m, f.ws, f.q, f.nu, f.nud, NULL, 0, f.tau, &err), RB_OK);
            cr_assert_eq(rb_dyn_rnea(f.m, f.ws, f.q, f.nu, f.nud, &e, 1, f.tmp, &err), RB_OK, "%s", err.msg);
            cr_assert_eq(rb_dyn_kinematics(f.m, f.ws, f.q, NULL, NULL, &err), RB_OK);
            cr_assert_eq(rb_dyn_frame_jacobian(f.m, f.ws, (size_t)e.frame, e.rep, &J, &err), RB_OK, "%s", err.msg);
            for (size_t i = 0; i < f.nv; i++) {
                double s = 0.0;
                for (int rr = 0; rr < 6; rr++)
                    s += *rb_mat_at(&J, (size_t)rr, i) * e.w[rr];
                f.tmp2[i] = f.tau[i] - s;
            }
            double er = rel_err(f.tmp, f.tmp2, f.nv);
            cr_assert(er < TOL_ID, "RNEA with a wrench (rep %d) = RNEA - J^T w: %g", (int)e.rep, er);
        }
        rb_mat_free(&J);
        teardown(&f);
    }
}

/* The wrench each joint transmits (rb_dyn_joint_wrench) equals Newton-Euler on the subtree it carries,
 * with external wrenches; the base's is the floating base's generalized force. */
Test(dynamics_id, joint_wrenches_balance_their_subtree)
{
    rb_err err;
    rb_ext_wrench ext[3];
    for (int fb = 0; fb < 2; fb++) {
        trng r = {777 + (uint64_t)fb};
        fixture f = setup(&r, 16, fb);
        for (int k = 0; k < 5; k++) {
            random_state(&r, f.m, f.q, f.nu, 3.0, f.nud, 20.0);
            random_ext(&r, f.m, ext, 3);
            cr_assert_eq(rb_dyn_rnea(f.m, f.ws, f.q, f.nu, f.nud, ext, 3, f.tau, &err), RB_OK);
            cr_assert_eq(rb_dyn_kinematics(f.m, f.ws, f.q, f.nu, f.nud, &err), RB_OK);
            for (size_t i = fb ? 0 : 1; i < f.m->n_bodies; i++) {
                double w[6], ref[6];
                cr_assert_eq(rb_dyn_joint_wrench(f.m, f.ws, i, w, &err), RB_OK, "%s", err.msg);
                {
                    double W[6];
                    subtree_wrench(f.m, f.ws, i, ext, 3, W);
                    rb_xform_force_inv(rb_dyn_body_pose(f.ws, i), W, ref);
                }
                double e = rel_err(w, ref, 6);
                cr_assert(e < TOL_ID, "joint wrench of body %zu: %g", i, e);
                if (i == 0)
                    cr_assert(rel_err(f.tau, ref, 6) < TOL_ID, "base part of tau is the base wrench");
            }
        }
        teardown(&f);
    }
}

/* FT sensors on fixed joints: readings follow the sensor's sign and reading frame (child link, parent link
 * or a sensor frame), including a joint reversed by the tree's order. */
Test(dynamics_id, ft_sensor_readings)
{
    rb_err err;
    trng r = {99};
    double pi[10], z[3] = {0, 0, 1};
    rb_model *m = NULL;
    rb_xform X, Xs;
    trng_inertia(&r, pi);
    cr_assert_eq(rb_model_begin(&m, "ft", "base", pi, true, &err), RB_OK);
    rb_xform_identity(&X);
    X.p[2] = -0.3;
    trng_inertia(&r, pi);
    cr_assert_eq(rb_model_add_body(m, "thigh", 0, RB_JOINT_REVOLUTE, "hip", &X, z, pi, &err), RB_OK);
    trng_rotation(&r, X.R);
    trng_inertia(&r, pi);
    cr_assert_eq(rb_model_add_body(m, "shank", 1, RB_JOINT_FIXED, "ft_joint", &X, NULL, pi, &err), RB_OK);
    trng_inertia(&r, pi);
    X.p[1] = 0.1;
    cr_assert_eq(rb_model_add_body(m, "foot", 2, RB_JOINT_REVOLUTE, "ankle", &X, z, pi, &err), RB_OK);
    trng_rotation(&r, Xs.R);
    random_vector(&r, Xs.p, 3, -0.1, 0.1);
    cr_assert_eq(rb_model_add_frame(m, "ft_sensor", 2, &Xs, RB_FRAME_SENSOR, &err), RB_OK);
    cr_assert_eq(rb_model_add_frame(m, "sole", 3, &Xs, RB_FRAME_USER, &err), RB_OK);
    cr_assert_eq(rb_model_end(m, &err), RB_OK, "%s", err.msg);
    long f_sensor = rb_model_frame_index(m, "ft_sensor"), f_thigh = rb_model_frame_index(m, "thigh"),
         f_shank = rb_model_frame_index(m, "shank"), f_sole = rb_model_frame_index(m, "sole");
    cr_assert_eq(rb_model_add_ft_sensor(m, "s_sensor", 2, (int)f_sensor, (int)f_sensor, 1, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_model_add_ft_sensor(m, "s_parent", 2, (int)f_thigh, (int)f_sensor, -1, &err), RB_OK);
    cr_assert_eq(rb_model_add_ft_sensor(m, "s_child", 2, (int)f_shank, (int)f_sensor, 1, &err), RB_OK);
    rb_dyn *ws;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    double q[9], nu[8], nud[8], tau[8], ft[18];
    random_state(&r, m, q, nu, 2.0, nud, 10.0);
    rb_ext_wrench sole = {(int)f_sole, RB_DYN_MIXED, {10, -20, 300, 1, 2, -3}};
    cr_assert_eq(rb_dyn_ft_wrenches(m, ws, ft, &err), RB_EINVAL, "before any inverse dynamics");
    cr_assert_eq(rb_dyn_rnea(m, ws, q, nu, nud, &sole, 1, tau, &err), RB_OK);
    cr_assert_eq(rb_dyn_ft_wrenches(m, ws, ft, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_kinematics(m, ws, q, nu, nud, &err), RB_OK);
    double wW[6], ref[6];
    subtree_wrench(m, ws, 2, &sole, 1, wW); /* parent half on child half, world coordinates */
    const long frames[3] = {f_sensor, f_thigh, f_shank};
    const double sign[3] = {1, -1, 1};
    for (int s = 0; s < 3; s++) {
        rb_xform XF;
        rb_dyn_frame_pose(m, ws, (size_t)frames[s], &XF, NULL);
        rb_xform_force_inv(&XF, wW, ref);
        for (int k = 0; k < 6; k++)
            ref[k] *= sign[s];
        double e = rel_err(ft + 6 * s, ref, 6);
        cr_assert(e < TOL_ID, "FT reading %d: %g", s, e);
    }
    rb_dyn_free(ws);
    rb_model_free(m);
}

/* Degenerate and invalid inputs. */
Test(dynamics_id, edge_cases_and_errors)
{
    rb_err err;
    double pi[10];
    trng r = {5};
    trng_inertia(&r, pi);
    /* a fixed base alone: nv = 0, every algorithm succeeds with empty outputs */
    rb_model *m0 = NULL;
    rb_dyn *w0 = NULL;
    cr_assert_eq(rb_model_begin(&m0, "lone", "base", pi, false, &err), RB_OK);
    cr_assert_eq(rb_model_end(m0, &err), RB_OK);
    cr_assert_eq(rb_dyn_alloc(m0, &w0, &err), RB_OK, "%s", err.msg);
    double dummy[6] = {0}, q0[1] = {0};
    rb_mat M0 = rb_mat_view(dummy, 0, 0, 0);
    cr_assert_eq(rb_dyn_rnea(m0, w0, q0, NULL, NULL, NULL, 0, dummy, &err), RB_OK);
    cr_assert_eq(rb_dyn_mass_matrix(m0, w0, q0, &M0, &err), RB_OK);
    cr_assert_eq(rb_dyn_aba(m0, w0, q0, NULL, NULL, NULL, 0, dummy, &err), RB_OK);
    cr_assert_eq(rb_dyn_fd_cholesky(m0, w0, q0, NULL, NULL, NULL, 0, dummy, &err), RB_OK);
    cr_assert_eq(rb_dyn_kinematics(m0, w0, q0, NULL, NULL, &err), RB_OK);
    double c[3];
    cr_assert_eq(rb_dyn_com(m0, w0, c, &err), RB_OK);
    cr_assert(fabs(c[0] - pi[1] / pi[0]) < 1e-15);

    /* a workspace for another model, wrong sizes, queries before the state exists */
    trng r2 = {6};
    rb_model *m = random_tree(&r2, 6, true);
    rb_dyn *ws = NULL;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    double q[32] = {0}, out[32], v6[6];
    rb_dyn_neutral(m, q);
    cr_assert_eq(rb_dyn_rnea(m, w0, q, NULL, NULL, NULL, 0, out, &err), RB_EINVAL);
    cr_assert_eq(rb_dyn_frame_velocity(m, ws, 0, RB_DYN_BODY, v6, &err), RB_EINVAL, "no state yet");
    cr_assert_eq(rb_dyn_kinematics(m, ws, q, NULL, NULL, &err), RB_OK);
    cr_assert_eq(rb_dyn_frame_velocity(m, ws, 0, RB_DYN_BODY, v6, &err), RB_EINVAL, "positions only");
    cr_assert_null(rb_dyn_body_velocity(ws, 0));
    cr_assert_eq(rb_dyn_frame_pose(m, ws, m->n_frames, NULL, &err), RB_EINVAL);
    double Mbuf[64];
    rb_mat Mbad = rb_mat_view(Mbuf, 3, 3, 3);
    cr_assert_eq(rb_dyn_mass_matrix(m, ws, q, &Mbad, &err), RB_EDIM);
    rb_ext_wrench bad = {(int)m->n_frames, RB_DYN_BODY, {0}};
    cr_assert_eq(rb_dyn_rnea(m, ws, q, NULL, NULL, &bad, 1, out, &err), RB_EINVAL);
    rb_contact ct[5];
    memset(ct, 0, sizeof ct);
    int f_base = (int)rb_model_frame_index(m, "b0");
    for (int k = 0; k < 5; k++)
        ct[k].frame = f_base, ct[k].dim = 6;
    cr_assert_eq(rb_dyn_fd_contact(m, ws, q, NULL, NULL, NULL, 0, ct, 5, out, out, &err), RB_EDIM, "30 rows > 24");
    ct[0].dim = 4;
    cr_assert_eq(rb_dyn_fd_contact(m, ws, q, NULL, NULL, NULL, 0, ct, 1, out, out, &err), RB_EINVAL);
    /* two 6D contacts on one body: J M^-1 J^T is singular */
    ct[0].dim = 6;
    double lam[12];
    cr_assert_eq(rb_dyn_fd_contact(m, ws, q, NULL, NULL, NULL, 0, ct, 2, out, lam, &err), RB_ENUMERIC);
    rb_dyn_free(ws);
    rb_model_free(m);

    /* a revolute joint moving a massless leaf: ABA and the Cholesky solve report a numeric failure */
    rb_model *mz = NULL;
    double zero[10] = {0}, z[3] = {0, 0, 1};
    rb_xform X;
    rb_xform_identity(&X);
    cr_assert_eq(rb_model_begin(&mz, "massless", "base", pi, false, &err), RB_OK);
    cr_assert_eq(rb_model_add_body(mz, "tip", 0, RB_JOINT_REVOLUTE, "j", &X, z, zero, &err), RB_OK);
    cr_assert_eq(rb_model_end(mz, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_alloc(mz, &ws, &err), RB_OK);
    cr_assert_eq(rb_dyn_aba(mz, ws, q0, NULL, NULL, NULL, 0, out, &err), RB_ENUMERIC);
    cr_assert_eq(rb_dyn_fd_cholesky(mz, ws, q0, NULL, NULL, NULL, 0, out, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "positive definite") != NULL, "%s", err.msg);
    rb_dyn_free(ws);
    rb_model_free(mz);
    rb_dyn_free(w0);
    rb_model_free(m0);
}

Test(dynamics_id, set_body_inertia_equals_a_model_built_with_it)
{
    /* Replacing one body's inertia in a workspace (the simulator's payload changes) gives the same
     * inverse dynamics and mass matrix as a workspace made for a model built with that inertia. */
    for (int fb = 0; fb < 2; fb++) {
        trng r1 = {4242 + (uint64_t)fb}, r2 = {4242 + (uint64_t)fb};
        rb_model *m1 = random_tree(&r1, 9, fb), *m2 = random_tree(&r2, 9, fb);
        trng r = {77};
        size_t b = 1 + trng_index(&r, m1->n_bodies - 1);
        double pi[10];
        trng_inertia(&r, pi);
        memcpy(m2->bodies[b].inertia, pi, sizeof pi);
        rb_dyn *w1, *w2;
        rb_err err;
        cr_assert_eq(rb_dyn_alloc(m1, &w1, &err), RB_OK);
        cr_assert_eq(rb_dyn_alloc(m2, &w2, &err), RB_OK);
        cr_assert_eq(rb_dyn_set_body_inertia(m1, w1, b, pi, &err), RB_OK, "%s", err.msg);
        size_t nq = m1->nq, nv = m1->nv;
        double *q = calloc(nq, sizeof *q), *nu = calloc(nv, sizeof *nu), *nud = calloc(nv, sizeof *nud);
        double *t1 = calloc(nv, sizeof *t1), *t2 = calloc(nv, sizeof *t2);
        random_state(&r, m1, q, nu, 2.0, nud, 5.0);
        cr_assert_eq(rb_dyn_rnea(m1, w1, q, nu, nud, NULL, 0, t1, &err), RB_OK);
        cr_assert_eq(rb_dyn_rnea(m2, w2, q, nu, nud, NULL, 0, t2, &err), RB_OK);
        cr_assert(rel_err(t1, t2, nv) < 1e-12, "rnea differs: %g", rel_err(t1, t2, nv));
        rb_mat M1, M2;
        cr_assert_eq(rb_mat_alloc(&M1, nv, nv, &err), RB_OK);
        cr_assert_eq(rb_mat_alloc(&M2, nv, nv, &err), RB_OK);
        cr_assert_eq(rb_dyn_mass_matrix(m1, w1, q, &M1, &err), RB_OK);
        cr_assert_eq(rb_dyn_mass_matrix(m2, w2, q, &M2, &err), RB_OK);
        cr_assert(rel_err(M1.data, M2.data, nv * nv) < 1e-12, "mass matrix differs");
        double bad[10] = {-1, 0, 0, 0, 1, 0, 0, 1, 0, 1};
        cr_assert_eq(rb_dyn_set_body_inertia(m1, w1, b, bad, &err), RB_EINVAL, "a negative mass is refused");
        rb_mat_free(&M1), rb_mat_free(&M2);
        free(q), free(nu), free(nud), free(t1), free(t2);
        rb_dyn_free(w1), rb_dyn_free(w2);
        rb_model_free(m1), rb_model_free(m2);
    }
}

/* The joint transforms are computed once per joint configuration and shared between the passes: interleaving
 * two configurations on one workspace gives the same bits as fresh workspaces, and a kinematics call at another
 * configuration leaves the wrenches of the last RNEA (FT readings, joint wrenches) alone. */
Test(dynamics_id, shared_joint_transforms_are_never_stale)
{
    rb_err err;
    trng r = {4242};
    for (int fl = 0; fl < 2; fl++) {
        rb_model *m = random_tree(&r, 12, fl == 1);
        cr_assert_not_null(m);
        size_t nq = m->nq, nv = m->nv;
        double *q1 = calloc(nq, sizeof *q1), *q2 = calloc(nq, sizeof *q2), *nu = calloc(nv, sizeof *nu),
               *nud = calloc(nv, sizeof *nud), *ta = calloc(nv, sizeof *ta), *tb = calloc(nv, sizeof *tb);
        random_state(&r, m, q1, nu, 2.0, nud, 5.0);
        random_state(&r, m, q2, NULL, 0.0, NULL, 0.0);
        memcpy(q2, q1, (nq - m->n_dofs) * sizeof *q2); /* same base, other joints: only the cache tells them apart */
        rb_dyn *ws, *fresh;
        cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
        rb_mat Ma, Mb;
        cr_assert_eq(rb_mat_alloc(&Ma, nv, nv, &err), RB_OK);
        cr_assert_eq(rb_mat_alloc(&Mb, nv, nv, &err), RB_OK);
        /* shared workspace: kinematics q1, RNEA q2, CRBA q1, kinematics q2, RNEA q1, kinematics q2 */
        rb_xform Xa, Xb;
        double wa[6], wb[6];
        size_t body = m->n_bodies - 1;
        cr_assert_eq(rb_dyn_kinematics(m, ws, q1, nu, nud, &err), RB_OK);
        cr_assert_eq(rb_dyn_rnea(m, ws, q2, nu, nud, NULL, 0, ta, &err), RB_OK);
        cr_assert_eq(rb_dyn_frame_pose(m, ws, m->n_frames - 1, &Xa, &err), RB_OK); /* still q1's */
        cr_assert_eq(rb_dyn_mass_matrix(m, ws, q1, &Ma, &err), RB_OK);
        cr_assert_eq(rb_dyn_kinematics(m, ws, q2, nu, nud, &err), RB_OK);
        cr_assert_eq(rb_dyn_rnea(m, ws, q1, nu, nud, NULL, 0, tb, &err), RB_OK);
        cr_assert_eq(rb_dyn_kinematics(m, ws, q2, NULL, NULL, &err), RB_OK);
        cr_assert_eq(rb_dyn_joint_wrench(m, ws, body, wa, &err), RB_OK);
        /* fresh workspaces, one call each */
        double *tc = calloc(nv, sizeof *tc);
        cr_assert_eq(rb_dyn_alloc(m, &fresh, &err), RB_OK);
        cr_assert_eq(rb_dyn_rnea(m, fresh, q2, nu, nud, NULL, 0, tc, &err), RB_OK);
        cr_assert_eq(memcmp(ta, tc, nv * sizeof *ta), 0, "RNEA at q2 after kinematics at q1");
        rb_dyn_free(fresh);
        cr_assert_eq(rb_dyn_alloc(m, &fresh, &err), RB_OK);
        cr_assert_eq(rb_dyn_kinematics(m, fresh, q1, nu, nud, &err), RB_OK);
        cr_assert_eq(rb_dyn_frame_pose(m, fresh, m->n_frames - 1, &Xb, &err), RB_OK);
        cr_assert_eq(memcmp(&Xa, &Xb, sizeof Xa), 0, "kinematic state kept by an RNEA at another q");
        rb_dyn_free(fresh);
        cr_assert_eq(rb_dyn_alloc(m, &fresh, &err), RB_OK);
        cr_assert_eq(rb_dyn_mass_matrix(m, fresh, q1, &Mb, &err), RB_OK);
        for (size_t i = 0; i < nv; i++)
            cr_assert_eq(memcmp(rb_mat_at(&Ma, i, 0), rb_mat_at(&Mb, i, 0), nv * sizeof(double)), 0, "M row %zu", i);
        rb_dyn_free(fresh);
        cr_assert_eq(rb_dyn_alloc(m, &fresh, &err), RB_OK);
        cr_assert_eq(rb_dyn_rnea(m, fresh, q1, nu, nud, NULL, 0, tc, &err), RB_OK);
        cr_assert_eq(memcmp(tb, tc, nv * sizeof *tb), 0, "RNEA at q1 after kinematics at q2");
        cr_assert_eq(rb_dyn_joint_wrench(m, fresh, body, wb, &err), RB_OK);
        cr_assert_eq(memcmp(wa, wb, sizeof wa), 0, "joint wrench of the last RNEA after kinematics elsewhere");
        rb_dyn_free(fresh);
        rb_mat_free(&Ma), rb_mat_free(&Mb);
        rb_dyn_free(ws);
        free(q1), free(q2), free(nu), free(nud), free(ta), free(tb), free(tc);
        rb_model_free(m);
    }
}
