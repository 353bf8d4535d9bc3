/* lib/dynamics inertial parameters (seed 001, PAPERS.md section 1): full physical consistency, the log-Cholesky maps
 * in both forms (J = U U^T, Rucker and Wensing; J = U^T U, the seed's printed eq. 17) and the condensed regressor.
 * Checked against independent formulations:
 *   - g(theta) against U U^T formed with plain loops and the entries of PAPERS.md 1.3, and the eq. 17 form against
 *     the formulas printed in the seed;
 *   - g^-1 by round trips both ways, the Jacobian by central differences;
 *   - consistency of g(theta) by the eigenvalues of the rotational inertia about the CoM (LAPACKE_dsyev);
 *   - Y_est pi_est + tau_nom against the RNEA with the model's parameters, Y_est against rb_dyn_regressor's
 *     columns, on ergoCub (fixed and floating), the humanoid lower body (floating) and arm_2ft (fixed). */
#include <criterion/criterion.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "dyn_support.h"
#include "roboest/dynamics.h"
#include "support.h"

#define ERGOCUB RB_SHARED "/models/ergoCubSN000.urdf"
#define ARM RB_SOURCE "/datasets/arm_2ft.urdf"
#define HUMANOID RB_SOURCE "/datasets/humanoid_lower_body.urdf"
#define HUMANOID_ARMS RB_SOURCE "/datasets/humanoid_arms.urdf"

static const rb_lchol_form FORMS[2] = {RB_LCHOL_UUT, RB_LCHOL_PAPER_EQ17};
static const char *const FORM_NAME[2] = {"UU^T", "eq17"};

/* A fully consistent pi: mass 0.01..100 kg, CoM within 0.5 m, principal second moments s_k (kg m^2) spread over
 * three decades; the principal moments s2 + s3, s1 + s3, s1 + s2 then meet the triangle inequalities. */
static void random_pi(trng *r, double pi[10])
{
    double m = pow(10.0, trng_uniform(r, -2.0, 2.0)), c[3], s[3], R[9];
    for (int k = 0; k < 3; k++) {
        c[k] = trng_uniform(r, -0.5, 0.5);
        s[k] = m * pow(10.0, trng_uniform(r, -4.0, -1.0));
    }
    trng_rotation(r, R);
    double D[3] = {s[1] + s[2], s[0] + s[2], s[0] + s[1]}, In[9], cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double v = 0.0;
            for (int k = 0; k < 3; k++)
                v += R[3 * i + k] * D[k] * R[3 * j + k];
            In[3 * i + j] = v + m * ((i == j ? cc : 0.0) - c[i] * c[j]);
        }
    pi[0] = m, pi[1] = m * c[0], pi[2] = m * c[1], pi[3] = m * c[2];
    pi[4] = In[0], pi[5] = In[1], pi[6] = In[2], pi[7] = In[4], pi[8] = In[5], pi[9] = In[8];
}

/* alpha in [-2, 2], d in [d_lo, d_hi], |s| <= s_max, |t| <= t_max */
static void random_theta(trng *r, double th[10], double d_lo, double d_hi, double s_max, double t_max)
{
    th[0] = trng_uniform(r, -2.0, 2.0);
    for (int k = 1; k < 4; k++)
        th[k] = trng_uniform(r, d_lo, d_hi);
    for (int k = 4; k < 7; k++)
        th[k] = trng_uniform(r, -s_max, s_max);
    for (int k = 7; k < 10; k++)
        th[k] = trng_uniform(r, -t_max, t_max);
}

/* Error of pi a against b, each group (m, h, I) relative to its own scale: m, |h| + sqrt(m tr I), tr I. */
static double pi_err(const double a[10], const double b[10])
{
    double tr = b[4] + b[7] + b[9], hs = sqrt(b[1] * b[1] + b[2] * b[2] + b[3] * b[3]) + sqrt(b[0] * tr), e = 0.0;
    for (int i = 0; i < 10; i++) {
        double scale = i == 0 ? b[0] : i < 4 ? hs : tr;
        e = fmax(e, fabs(a[i] - b[i]) / scale);
    }
    return e;
}

/* pi from a pseudo-inertia, written here from J = [[tr(I)/2 1 - I, h], [h^T, m]]. */
static void pi_of_J(double J[4][4], double pi[10])
{
    double tr = J[0][0] + J[1][1] + J[2][2], In[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            In[i][j] = (i == j ? tr : 0.0) - J[i][j];
    pi[0] = J[3][3], pi[1] = J[0][3], pi[2] = J[1][3], pi[3] = J[2][3];
    pi[4] = In[0][0], pi[5] = In[0][1], pi[6] = In[0][2], pi[7] = In[1][1], pi[8] = In[1][2], pi[9] = In[2][2];
}

static void U_of(const double th[10], double U[4][4])
{
    double ea = exp(th[0]);
    double u[4][4] = {
        {exp(th[1]), th[4], th[5], th[7]}, {0, exp(th[2]), th[6], th[8]}, {0, 0, exp(th[3]), th[9]}, {0, 0, 0, 1}};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            U[i][j] = ea * u[i][j];
}

/* ---- the maps ------------------------------------------------------------------------------------------------- */

Test(dynamics_inertial, uut_is_U_U_transpose_and_the_closed_forms_of_papers_1_3)
{
    trng r = {11};
    rb_err err;
    for (int n = 0; n < 500; n++) {
        double th[10], pi[10], ref[10], U[4][4], J[4][4];
        random_theta(&r, th, -3.0, 2.0, 3.0, 3.0);
        cr_assert_eq(rb_lchol_to_pi(RB_LCHOL_UUT, th, pi, &err), RB_OK, "%s", err.msg);
        U_of(th, U);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                J[i][j] = 0.0;
                for (int k = 0; k < 4; k++)
                    J[i][j] += U[i][k] * U[j][k];
            }
        pi_of_J(J, ref);
        cr_assert_lt(pi_err(pi, ref), 1e-13, "UU^T: %g", pi_err(pi, ref));
        /* PAPERS.md 1.3, entry by entry */
        double E = exp(2 * th[0]), e1 = exp(th[1]), e2 = exp(th[2]), e3 = exp(th[3]), s12 = th[4], s13 = th[5],
               s23 = th[6], t1 = th[7], t2 = th[8], t3 = th[9];
        double p13[10] = {E,
                          E * t1,
                          E * t2,
                          E * t3,
                          E * (s23 * s23 + t2 * t2 + t3 * t3 + e2 * e2 + e3 * e3),
                          -E * (s12 * e2 + s13 * s23 + t1 * t2),
                          -E * (s13 * e3 + t1 * t3),
                          E * (s12 * s12 + s13 * s13 + t1 * t1 + t3 * t3 + e1 * e1 + e3 * e3),
                          -E * (s23 * e3 + t2 * t3),
                          E * (s12 * s12 + s13 * s13 + s23 * s23 + t1 * t1 + t2 * t2 + e1 * e1 + e2 * e2)};
        cr_assert_lt(pi_err(pi, p13), 1e-13, "PAPERS.md 1.3: %g", pi_err(pi, p13));
        /* t is the centre of mass */
        for (int k = 0; k < 3; k++)
            cr_assert_lt(fabs(pi[1 + k] / pi[0] - th[7 + k]), 1e-13 * (1 + fabs(th[7 + k])));
    }
}

Test(dynamics_inertial, eq17_is_the_printed_formula_and_U_transpose_U)
{
    trng r = {12};
    rb_err err;
    for (int n = 0; n < 500; n++) {
        double th[10], pi[10], U[4][4], J[4][4], ref[10];
        random_theta(&r, th, -3.0, 2.0, 3.0, 3.0);
        cr_assert_eq(rb_lchol_to_pi(RB_LCHOL_PAPER_EQ17, th, pi, &err), RB_OK, "%s", err.msg);
        /* seed 001 eq. (17) as printed */
        double E = exp(2 * th[0]), e1 = exp(th[1]), e2 = exp(th[2]), e3 = exp(th[3]), s12 = th[4], s13 = th[5],
               s23 = th[6], t1 = th[7], t2 = th[8], t3 = th[9];
        double printed[10] = {E * (t1 * t1 + t2 * t2 + t3 * t3 + 1),
                              E * t1 * e1,
                              E * (t1 * s12 + t2 * e2),
                              E * (t1 * s13 + t2 * s23 + t3 * e3),
                              E * (s12 * s12 + s13 * s13 + s23 * s23 + exp(2 * th[2]) + exp(2 * th[3])),
                              E * (-s12 * e1),
                              E * (-s13 * e1),
                              E * (s13 * s13 + s23 * s23 + exp(2 * th[1]) + exp(2 * th[3])),
                              E * (-s12 * s13 - s23 * e2),
                              E * (s12 * s12 + exp(2 * th[1]) + exp(2 * th[2]))};
        cr_assert_lt(pi_err(pi, printed), 1e-13, "eq. 17: %g", pi_err(pi, printed));
        U_of(th, U);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                J[i][j] = 0.0;
                for (int k = 0; k < 4; k++)
                    J[i][j] += U[k][i] * U[k][j];
            }
        pi_of_J(J, ref);
        cr_assert_lt(pi_err(pi, ref), 1e-13, "U^T U: %g", pi_err(pi, ref));
    }
}

Test(dynamics_inertial, inverse_round_trips_both_ways)
{
    trng r = {13};
    rb_err err;
    for (int f = 0; f < 2; f++)
        for (int n = 0; n < 2000; n++) {
            double pi[10], th[10], back[10], th2[10];
            random_pi(&r, pi);
            cr_assert(rb_inertia_is_consistent(pi));
            cr_assert_eq(rb_lchol_from_pi(FORMS[f], pi, th, &err), RB_OK, "%s: %s", FORM_NAME[f], err.msg);
            cr_assert_eq(rb_lchol_to_pi(FORMS[f], th, back, &err), RB_OK, "%s", err.msg);
            cr_assert_lt(pi_err(back, pi), 1e-12, "%s: g(g^-1(pi)) = pi: %g", FORM_NAME[f], pi_err(back, pi));

            /* g^-1 loses digits as the body gets thin and sheared (small d, large s): moderate theta here */
            random_theta(&r, th, -1.5, 2.0, 1.5, 1.5);
            cr_assert_eq(rb_lchol_to_pi(FORMS[f], th, pi, &err), RB_OK, "%s", err.msg);
            cr_assert_eq(rb_lchol_from_pi(FORMS[f], pi, th2, &err), RB_OK, "%s: %s", FORM_NAME[f], err.msg);
            for (int k = 0; k < 10; k++)
                cr_assert_lt(fabs(th2[k] - th[k]), 1e-11 * (1 + fabs(th[k])), "%s: theta[%d] %.17g != %.17g",
                             FORM_NAME[f], k, th2[k], th[k]);
        }
}

Test(dynamics_inertial, the_two_forms_give_different_theta)
{
    trng r = {14};
    rb_err err;
    for (int n = 0; n < 50; n++) {
        double pi[10], a[10], b[10], cross[10], d = 0.0;
        random_pi(&r, pi);
        cr_assert_eq(rb_lchol_from_pi(RB_LCHOL_UUT, pi, a, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_lchol_from_pi(RB_LCHOL_PAPER_EQ17, pi, b, &err), RB_OK, "%s", err.msg);
        for (int k = 0; k < 10; k++)
            d = fmax(d, fabs(a[k] - b[k]));
        cr_assert_gt(d, 1e-3, "theta of the two forms agree");
        cr_assert_eq(rb_lchol_to_pi(RB_LCHOL_PAPER_EQ17, a, cross, &err), RB_OK);
        cr_assert_gt(pi_err(cross, pi), 1e-3, "a UU^T theta read as eq. 17 gives the same pi");
        /* UU^T: e^(2 alpha) is the mass */
        cr_assert_lt(fabs(exp(2 * a[0]) - pi[0]), 1e-13 * pi[0]);
    }
}

Test(dynamics_inertial, jacobian_matches_central_differences)
{
    trng r = {15};
    rb_err err;
    for (int f = 0; f < 2; f++)
        for (int n = 0; n < 200; n++) {
            double th[10], pi[10], G[100], pi0[10];
            random_theta(&r, th, -3.0, 2.0, 3.0, 3.0);
            cr_assert_eq(rb_lchol_jacobian(FORMS[f], th, pi, G, &err), RB_OK, "%s", err.msg);
            cr_assert_eq(rb_lchol_to_pi(FORMS[f], th, pi0, &err), RB_OK);
            for (int i = 0; i < 10; i++)
                cr_assert_eq(pi[i], pi0[i], "the Jacobian's pi is g(theta)");
            for (int j = 0; j < 10; j++) {
                double h = 1e-5 * (1 + fabs(th[j])), tp[10], tm[10], pp[10], pm[10], scale = 0.0;
                memcpy(tp, th, sizeof tp), memcpy(tm, th, sizeof tm);
                tp[j] += h, tm[j] -= h;
                cr_assert_eq(rb_lchol_to_pi(FORMS[f], tp, pp, &err), RB_OK);
                cr_assert_eq(rb_lchol_to_pi(FORMS[f], tm, pm, &err), RB_OK);
                for (int i = 0; i < 10; i++)
                    scale = fmax(scale, fabs(G[i * 10 + j]));
                for (int i = 0; i < 10; i++) {
                    double fd = (pp[i] - pm[i]) / (2 * h);
                    cr_assert_lt(fabs(fd - G[i * 10 + j]), 1e-7 * scale + 1e-12, "%s: dpi_%d/dtheta_%d: %g vs %g",
                                 FORM_NAME[f], i, j, G[i * 10 + j], fd);
                }
            }
        }
}

/* Eigenvalues (ascending) of the rotational inertia about the CoM. */
static void com_moments(const double pi[10], double ev[3])
{
    double m = pi[0], c[3] = {pi[1] / m, pi[2] / m, pi[3] / m}, cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    double In[9] = {pi[4], pi[5], pi[6], pi[5], pi[7], pi[8], pi[6], pi[8], pi[9]};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            In[3 * i + j] -= m * ((i == j ? cc : 0.0) - c[i] * c[j]);
    cr_assert_eq(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', 3, In, 3, ev), 0);
}

Test(dynamics_inertial, any_theta_gives_fully_consistent_parameters)
{
    trng r = {16};
    rb_err err;
    for (int f = 0; f < 2; f++)
        for (int n = 0; n < 3000; n++) {
            double th[10], pi[10], ev[3];
            /* large translations, large shears, small scales (not all at once: a needle far from the origin is
             * singular to rounding) */
            switch (n % 3) {
            case 0: random_theta(&r, th, -2.0, 2.0, 2.0, 20.0); break;
            case 1: random_theta(&r, th, -1.0, 2.0, 10.0, 2.0); break;
            default: random_theta(&r, th, -5.0, 0.0, 1.0, 1.0); break;
            }
            cr_assert_eq(rb_lchol_to_pi(FORMS[f], th, pi, &err), RB_OK, "%s", err.msg);
            cr_assert(rb_inertia_is_consistent(pi), "%s: theta %d", FORM_NAME[f], n);
            cr_assert_gt(pi[0], 0.0);
            com_moments(pi, ev);
            /* the cancellation in I_c = I - m (|c|^2 1 - c c^T) bounds what can be checked */
            double tol = 1e-12 * (pi[4] + pi[7] + pi[9]);
            cr_assert_gt(ev[0], tol, "%s: I_c not positive definite: %g %g %g", FORM_NAME[f], ev[0], ev[1], ev[2]);
            cr_assert_gt(ev[0] + ev[1] - ev[2], tol, "%s: triangle inequality: %g %g %g", FORM_NAME[f], ev[0], ev[1],
                         ev[2]);
        }
}

Test(dynamics_inertial, consistency_and_the_inverse_refuse_bad_parameters)
{
    trng r = {17};
    rb_err err;
    double good[10], bad[6][10];
    random_pi(&r, good);
    memset(bad[0], 0, sizeof bad[0]); /* m = 0 */
    memcpy(bad[1], good, sizeof good);
    bad[1][0] = -good[0];                                    /* negative mass */
    double tri[10] = {1.0, 0, 0, 0, 1.0, 0, 0, 1.0, 0, 3.0}; /* I_c = diag(1, 1, 3): positive, 3 > 1 + 1 */
    memcpy(bad[2], tri, sizeof tri);
    memcpy(bad[3], good, sizeof good);
    bad[3][6] = NAN;
    double point[10] = {2.0, 0.2, 0, 0, 0, 0, 0, 0.02, 0, 0.02}; /* a point mass at (0.1, 0, 0): J singular */
    memcpy(bad[4], point, sizeof point);
    memcpy(bad[5], good, sizeof good);
    bad[5][0] = 0.0; /* massless with a first moment */
    cr_assert(rb_inertia_is_consistent(good));
    for (int b = 0; b < 6; b++) {
        cr_assert_not(rb_inertia_is_consistent(bad[b]), "case %d", b);
        for (int f = 0; f < 2; f++) {
            double th[10];
            cr_assert_eq(rb_lchol_from_pi(FORMS[f], bad[b], th, &err), RB_EINPUT, "case %d %s", b, FORM_NAME[f]);
            cr_assert(strstr(err.msg, "not fully physically consistent (pseudo-inertia not positive definite)"), "%s",
                      err.msg);
            cr_assert(isnan(th[0]));
        }
    }
    cr_assert_not(rb_inertia_is_consistent(NULL));
}

Test(dynamics_inertial, theta_overflow_is_a_numeric_error)
{
    rb_err err;
    double th[10] = {400, 0, 0, 0, 0, 0, 0, 0, 0, 0}, pi[10], G[100];
    for (int f = 0; f < 2; f++) {
        th[0] = 400, th[2] = 0;
        cr_assert_eq(rb_lchol_to_pi(FORMS[f], th, pi, &err), RB_ENUMERIC);
        cr_assert(strstr(err.msg, "log-Cholesky: theta overflows"), "%s", err.msg);
        cr_assert(isnan(pi[0]));
        cr_assert_eq(rb_lchol_jacobian(FORMS[f], th, pi, G, &err), RB_ENUMERIC);
        cr_assert(strstr(err.msg, "theta overflows"), "%s", err.msg);
        th[0] = 0, th[2] = 800;
        cr_assert_eq(rb_lchol_to_pi(FORMS[f], th, pi, &err), RB_ENUMERIC);
        th[2] = NAN;
        cr_assert_eq(rb_lchol_to_pi(FORMS[f], th, pi, &err), RB_ENUMERIC);
        th[2] = 0;
        cr_assert_eq(rb_lchol_to_pi(FORMS[f], th, pi, &err), RB_OK);
    }
}

/* ---- condensed regressor -------------------------------------------------------------------------------------- */

static rb_model *load(const char *path, bool floating)
{
    rb_model_opts o = {.floating = floating};
    rb_model *m = NULL;
    rb_err err;
    cr_assert_eq(rb_model_load_urdf(path, &o, &m, &err), RB_OK, "%s", err.msg);
    return m;
}

/* Y_est pi_est + tau_nom = RNEA, Y_est = rb_dyn_regressor's columns, ws left at the state, for n_est = 1, 2, 3
 * bodies (the floating base's body among them in one set). */
static void check_condensed(const char *path, bool floating, uint64_t seed)
{
    rb_model *m = load(path, floating);
    rb_err err;
    trng r = {seed};
    size_t nb = m->n_bodies, nv = m->nv;
    rb_dyn *ws = NULL, *ref = NULL;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    cr_assert_eq(rb_dyn_alloc(m, &ref, &err), RB_OK);
    rb_mat Y;
    cr_assert_eq(rb_mat_alloc(&Y, nv, 10 * nb, &err), RB_OK);
    double *q = calloc(m->nq, sizeof *q), *nu = calloc(nv, sizeof *nu), *nud = calloc(nv, sizeof *nud),
           *tau = calloc(nv, sizeof *tau), *tn = calloc(nv, sizeof *tn), *Ye = calloc(nv * 30, sizeof *Ye),
           *pi = calloc(10 * nb, sizeof *pi);
    rb_dyn_inertial_params(m, pi);
    for (size_t n_est = 1; n_est <= 3; n_est++)
        for (int set = 0; set < 3; set++) {
            size_t bodies[3];
            for (size_t k = 0; k < n_est; k++) {
                bool dup;
                do { /* distinct bodies, one with a mass */
                    bodies[k] = 1 + trng_index(&r, nb - 1);
                    dup = m->bodies[bodies[k]].inertia[0] <= 0.0;
                    for (size_t l = 0; l < k; l++)
                        dup = dup || bodies[l] == bodies[k];
                } while (dup);
            }
            if (floating && set == 0)
                bodies[n_est - 1] = 0;
            rb_dyn_condensed *c = NULL;
            cr_assert_eq(rb_dyn_condensed_alloc(m, bodies, n_est, &c, &err), RB_OK, "%s", err.msg);
            for (int s = 0; s < 4; s++) {
                random_state(&r, m, q, nu, 2.0, nud, 5.0);
                cr_assert_eq(rb_dyn_rnea(m, ref, q, nu, nud, NULL, 0, tau, &err), RB_OK);
                cr_assert_eq(rb_dyn_condensed_eval(m, ws, c, q, nu, nud, Ye, tn, &err), RB_OK, "%s", err.msg);
                double scale = 1.0 + max_abs(tau, nv);
                for (size_t i = 0; i < nv; i++) {
                    double v = tn[i];
                    for (size_t k = 0; k < n_est; k++)
                        for (int p = 0; p < 10; p++)
                            v += Ye[i * 10 * n_est + 10 * k + (size_t)p] * pi[10 * bodies[k] + (size_t)p];
                    cr_assert_lt(fabs(v - tau[i]), 1e-10 * scale, "%s: row %zu: %g vs %g", path, i, v, tau[i]);
                }
                cr_assert_eq(rb_dyn_regressor(m, ref, q, nu, nud, &Y, &err), RB_OK);
                double ys = 1.0 + max_abs(Y.data, nv * 10 * nb);
                for (size_t i = 0; i < nv; i++)
                    for (size_t k = 0; k < n_est; k++)
                        for (size_t p = 0; p < 10; p++) {
                            double a = Ye[i * 10 * n_est + 10 * k + p], b = *rb_mat_at(&Y, i, 10 * bodies[k] + p);
                            cr_assert_lt(fabs(a - b), 1e-12 * ys, "%s: Y[%zu][body %zu, %zu]: %g vs %g", path, i,
                                         bodies[k], p, a, b);
                        }
                /* ws holds the kinematic state of (q, nu, nu_dot) */
                cr_assert_eq(rb_dyn_kinematics(m, ref, q, nu, nud, &err), RB_OK);
                size_t b = nb - 1;
                cr_assert_not_null(rb_dyn_body_acceleration(ws, b));
                cr_assert_lt(rel_err(rb_dyn_body_acceleration(ws, b), rb_dyn_body_acceleration(ref, b), 6), 1e-14);
                cr_assert_lt(rel_err(rb_dyn_body_pose(ws, b)->p, rb_dyn_body_pose(ref, b)->p, 3), 1e-14);
            }
            rb_dyn_condensed_free(c);
        }
    free(q), free(nu), free(nud), free(tau), free(tn), free(Ye), free(pi);
    rb_mat_free(&Y);
    rb_dyn_free(ws), rb_dyn_free(ref);
    rb_model_free(m);
}

Test(dynamics_inertial, condensed_ergocub_fixed_and_floating)
{
    test_need_shared("models/ergoCubSN000.urdf");
    check_condensed(ERGOCUB, false, 21);
    check_condensed(ERGOCUB, true, 22);
}

Test(dynamics_inertial, condensed_humanoid_floating_and_arm_fixed)
{
    check_condensed(HUMANOID, true, 23);
    check_condensed(ARM, false, 24);
    /* seed 001's humanoid with arms, floating and fixed (the experiments' bodies among the random ones) */
    check_condensed(HUMANOID_ARMS, true, 25);
    check_condensed(HUMANOID_ARMS, false, 26);
}

Test(dynamics_inertial, condensed_refuses_bad_bodies_and_inputs)
{
    rb_model *m = load(ARM, false), *h = load(HUMANOID, true);
    rb_err err;
    rb_dyn_condensed *c = NULL;
    size_t nb = m->n_bodies, out_of_range[2] = {1, nb}, dup[3] = {1, 2, 1}, base[1] = {0};
    cr_assert_eq(rb_dyn_condensed_alloc(m, out_of_range, 2, &c, &err), RB_EINVAL);
    cr_assert_null(c);
    char want[64];
    snprintf(want, sizeof want, "body %zu", nb);
    cr_assert(strstr(err.msg, want), "%s", err.msg);
    cr_assert_eq(rb_dyn_condensed_alloc(m, dup, 3, &c, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, m->bodies[1].name) && strstr(err.msg, "twice"), "%s", err.msg);
    cr_assert_eq(rb_dyn_condensed_alloc(m, base, 1, &c, &err), RB_EINVAL); /* a fixed base's body */
    cr_assert(strstr(err.msg, m->bodies[0].name), "%s", err.msg);
    cr_assert_null(c);

    /* a floating base's body 0 is accepted; eval checks its model, outputs and inputs */
    cr_assert_eq(rb_dyn_condensed_alloc(h, base, 1, &c, &err), RB_OK, "%s", err.msg);
    rb_dyn *ws = NULL, *wm = NULL;
    cr_assert_eq(rb_dyn_alloc(h, &ws, &err), RB_OK);
    cr_assert_eq(rb_dyn_alloc(m, &wm, &err), RB_OK);
    double *q = calloc(h->nq, sizeof *q), *Y = calloc(h->nv * 10, sizeof *Y), *tau = calloc(h->nv, sizeof *tau);
    rb_dyn_neutral(h, q);
    cr_assert_eq(rb_dyn_condensed_eval(h, ws, c, q, NULL, NULL, Y, tau, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_condensed_eval(m, wm, c, q, NULL, NULL, Y, tau, &err), RB_EINVAL);
    cr_assert_eq(rb_dyn_condensed_eval(h, ws, c, q, NULL, NULL, NULL, tau, &err), RB_EINVAL);
    q[h->nq - 1] = NAN;
    cr_assert_eq(rb_dyn_condensed_eval(h, ws, c, q, NULL, NULL, Y, tau, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "q["), "%s", err.msg);
    free(q), free(Y), free(tau);
    rb_dyn_condensed_free(c);
    rb_dyn_condensed_free(NULL);
    rb_dyn_free(ws), rb_dyn_free(wm);
    rb_model_free(m), rb_model_free(h);
}

Test(dynamics_inertial, condensed_eval_allocates_nothing)
{
    rb_model *m = load(HUMANOID, true);
    rb_err err;
    rb_dyn *ws = NULL;
    rb_dyn_condensed *c = NULL;
    size_t bodies[2] = {0, m->n_bodies - 1};
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    cr_assert_eq(rb_dyn_condensed_alloc(m, bodies, 2, &c, &err), RB_OK, "%s", err.msg);
    trng r = {31};
    double *q = calloc(m->nq, sizeof *q), *nu = calloc(m->nv, sizeof *nu), *nud = calloc(m->nv, sizeof *nud),
           *Y = calloc(m->nv * 20, sizeof *Y), *tau = calloc(m->nv, sizeof *tau);
    random_state(&r, m, q, nu, 2.0, nud, 5.0);
    test_alloc_count_init();
    test_alloc_counting = 1;
    long before = test_alloc_count;
    (void)rb_alloc_fail_after(-1);
    int rc = RB_OK;
    for (int k = 0; k < 3 && rc == RB_OK; k++) {
        q[k] += 0.1; /* new joint positions each call */
        q[m->nq - 1 - (size_t)k] += 0.1;
        rc = rb_dyn_condensed_eval(m, ws, c, q, nu, nud, Y, tau, &err);
    }
    test_alloc_counting = 0;
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    if (test_alloc_count_works())
        cr_assert_eq(test_alloc_count - before, 0, "allocations: %ld", test_alloc_count - before);
    cr_assert_eq(rb_alloc_fail_after(-1), 0, "rb_malloc calls");
    free(q), free(nu), free(nud), free(Y), free(tau);
    rb_dyn_condensed_free(c);
    rb_dyn_free(ws);
    rb_model_free(m);
}
