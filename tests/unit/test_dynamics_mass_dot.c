/* lib/dynamics rb_dyn_mass_matrix_dot (seed 003's filtered dynamics needs H_dot): against the central difference of
 * the CRBA along the motion, M(q (+) e nu) - M(q (-) e nu) over 2 e, on random trees (fixed and floating, revolute
 * and prismatic joints, branches) and on the walker biped; the base twist must not change the result (M depends on
 * the joint positions only); symmetry; no allocation; the argument checks. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "dyn_support.h"
#include "roboest/dynamics.h"
#include "support.h"

#define WALKER RB_SOURCE "/datasets/walker_biped.urdf"

/* max |Mdot - finite difference| / max(1, max |finite difference|) */
static double fd_error(const rb_model *m, rb_dyn *ws, const double *q, const double *nu, double *Md)
{
    size_t nv = m->nv, nq = m->nq;
    double *qp = calloc(nq, sizeof *qp), *qm = calloc(nq, sizeof *qm), *Mp = calloc(nv * nv, sizeof *Mp),
           *Mm = calloc(nv * nv, sizeof *Mm), *fd = calloc(nv * nv, sizeof *fd);
    const double e = 1e-6;
    rb_dyn_integrate(m, q, nu, e, qp);
    rb_dyn_integrate(m, q, nu, -e, qm);
    rb_err err;
    rb_mat A = rb_mat_view(Mp, nv, nv, nv), B = rb_mat_view(Mm, nv, nv, nv), D = rb_mat_view(Md, nv, nv, nv);
    cr_assert_eq(rb_dyn_mass_matrix(m, ws, qp, &A, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_mass_matrix(m, ws, qm, &B, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_mass_matrix_dot(m, ws, q, nu, &D, &err), RB_OK, "%s", err.msg);
    for (size_t i = 0; i < nv * nv; i++)
        fd[i] = (Mp[i] - Mm[i]) / (2 * e);
    double r = rel_err(Md, fd, nv * nv);
    free(qp), free(qm), free(Mp), free(Mm), free(fd);
    return r;
}

Test(dynamics_mass_dot, random_trees_match_central_differences)
{
    trng r = {20240316};
    for (int t = 0; t < 40; t++) {
        bool floating = t % 2 == 1;
        rb_model *m = random_tree(&r, 3 + trng_index(&r, 12), floating);
        rb_dyn *ws = NULL;
        rb_err err;
        cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK, "%s", err.msg);
        double *q = calloc(m->nq, sizeof *q), *nu = calloc(m->nv, sizeof *nu), *Md = calloc(m->nv * m->nv, 8);
        random_state(&r, m, q, nu, 3.0, NULL, 0);
        double e = fd_error(m, ws, q, nu, Md);
        cr_expect_lt(e, 1e-6, "tree %d (%s, nv %zu): relative error %g", t, floating ? "floating" : "fixed", m->nv, e);
        for (size_t i = 0; i < m->nv; i++)
            for (size_t j = 0; j < i; j++)
                cr_expect_eq(Md[i * m->nv + j], Md[j * m->nv + i], "tree %d: not symmetric at (%zu, %zu)", t, i, j);
        free(q), free(nu), free(Md);
        rb_dyn_free(ws);
        rb_model_free(m);
    }
}

Test(dynamics_mass_dot, walker_biped_and_base_twist_cancels)
{
    rb_model *m = NULL;
    rb_err err;
    rb_model_opts o = {.floating = true};
    cr_assert_eq(rb_model_load_urdf(WALKER, &o, &m, &err), RB_OK, "%s", err.msg);
    rb_dyn *ws = NULL;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK, "%s", err.msg);
    trng r = {77};
    size_t nv = m->nv;
    double *q = calloc(m->nq, sizeof *q), *nu = calloc(nv, sizeof *nu), *Md = calloc(nv * nv, 8),
           *Md0 = calloc(nv * nv, 8);
    random_state(&r, m, q, nu, 2.0, NULL, 0);
    double e = fd_error(m, ws, q, nu, Md);
    cr_expect_lt(e, 1e-6, "walker: relative error %g", e);
    cr_expect_gt(max_abs(Md, nv * nv), 0.1, "a moving biped's mass matrix changes");
    /* the same joint velocities with the base at rest: the same M_dot */
    memset(nu, 0, 6 * sizeof *nu);
    rb_mat D0 = rb_mat_view(Md0, nv, nv, nv);
    cr_assert_eq(rb_dyn_mass_matrix_dot(m, ws, q, nu, &D0, &err), RB_OK, "%s", err.msg);
    cr_expect_lt(rel_err(Md0, Md, nv * nv), 1e-12, "the base twist changed M_dot by %g", rel_err(Md0, Md, nv * nv));
    /* no allocation */
    test_alloc_count_init();
    test_alloc_count = 0, test_alloc_counting = 1;
    rb_dyn_mass_matrix_dot(m, ws, q, nu, &D0, &err);
    test_alloc_counting = 0;
    if (test_alloc_count_works())
        cr_expect_eq(test_alloc_count, 0, "rb_dyn_mass_matrix_dot allocated");
    /* argument checks */
    rb_mat bad = rb_mat_view(Md0, nv - 1, nv, nv);
    cr_expect_eq(rb_dyn_mass_matrix_dot(m, ws, q, nu, &bad, &err), RB_EDIM);
    cr_expect_eq(rb_dyn_mass_matrix_dot(m, ws, q, NULL, &D0, &err), RB_EINVAL);
    free(q), free(nu), free(Md), free(Md0);
    rb_dyn_free(ws);
    rb_model_free(m);
}
