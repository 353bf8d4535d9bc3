/* Inertial parameters (seed 001, ../shared/design/PAPERS.md section 1): the pseudo-inertia and full physical
 * consistency (Wensing, Kim, Slotine 2017), the log-Cholesky maps in both forms (Rucker and Wensing 2022: J = U U^T;
 * the seed's printed eq. 17: J = U^T U) with their inverses and Jacobians, and the condensed regressor (eq. 6-7). */
#include <math.h>
#include <string.h>

#include "dyn_internal.h"

/* ---- pseudo-inertia ----------------------------------------------------------------------------------------- */

void rb_inertia_pseudo(const double pi[10], double J[16])
{
    /* Sigma = tr(I)/2 1 - I, the second moment of the mass about the origin; its diagonal in the form that
     * does not subtract a large trace from a large element */
    J[0] = 0.5 * (pi[7] + pi[9] - pi[4]), J[1] = -pi[5], J[2] = -pi[6], J[3] = pi[1];
    J[4] = -pi[5], J[5] = 0.5 * (pi[4] + pi[9] - pi[7]), J[6] = -pi[8], J[7] = pi[2];
    J[8] = -pi[6], J[9] = -pi[8], J[10] = 0.5 * (pi[4] + pi[7] - pi[9]), J[11] = pi[3];
    J[12] = pi[1], J[13] = pi[2], J[14] = pi[3], J[15] = pi[0];
}

/* The inverse of rb_inertia_pseudo (linear; reads the upper triangle): I = tr(Sigma) 1 - Sigma. */
static void pi_from_pseudo(const double J[16], double pi[10])
{
    pi[0] = J[15], pi[1] = J[3], pi[2] = J[7], pi[3] = J[11];
    pi[4] = J[5] + J[10], pi[5] = -J[1], pi[6] = -J[2];
    pi[7] = J[0] + J[10], pi[8] = -J[6], pi[9] = J[0] + J[5];
}

bool rb_inertia_is_consistent(const double pi[10])
{
    if (!pi)
        return false;
    double J[16], L[16] = {0};
    rb_inertia_pseudo(pi, J);
    double dmax = fmax(fmax(J[0], J[5]), fmax(J[10], J[15]));
    double tol = 1e-12 * dmax;
    if (!(dmax > 0.0) || !isfinite(dmax))
        return false;
    for (int k = 0; k < 4; k++) { /* lower Cholesky, row by row; !(d > tol) also catches NaN */
        for (int i = k; i < 4; i++) {
            double s = J[4 * i + k];
            for (int j = 0; j < k; j++)
                s -= L[4 * i + j] * L[4 * k + j];
            if (i == k) {
                if (!(s > tol))
                    return false;
                L[4 * k + k] = sqrt(s);
            } else {
                L[4 * i + k] = s / L[4 * k + k];
            }
        }
    }
    return true;
}

/* ---- log-Cholesky ------------------------------------------------------------------------------------------- */

static bool all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

static void fill_nan(double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = NAN;
}

/* pi = g(theta), closed form. The alpha-free factor U/e^alpha is written Ub below. */
static void lchol_pi(rb_lchol_form form, const double th[10], double pi[10])
{
    const double E = exp(2.0 * th[0]);
    const double e1 = exp(th[1]), e2 = exp(th[2]), e3 = exp(th[3]);
    const double s12 = th[4], s13 = th[5], s23 = th[6], t1 = th[7], t2 = th[8], t3 = th[9];
    double S11, S12, S13, S22, S23, S33, m, h1, h2, h3; /* J / e^(2 alpha) */
    if (form == RB_LCHOL_UUT) {
        /* rows of Ub dotted: the mass at the CoM t, Sigma = m (L L^T + t t^T) */
        S11 = e1 * e1 + s12 * s12 + s13 * s13 + t1 * t1;
        S12 = s12 * e2 + s13 * s23 + t1 * t2;
        S13 = s13 * e3 + t1 * t3;
        S22 = e2 * e2 + s23 * s23 + t2 * t2;
        S23 = s23 * e3 + t2 * t3;
        S33 = e3 * e3 + t3 * t3;
        m = 1.0, h1 = t1, h2 = t2, h3 = t3;
    } else {
        /* columns of Ub dotted (eq. 17 as printed) */
        S11 = e1 * e1;
        S12 = e1 * s12;
        S13 = e1 * s13;
        S22 = s12 * s12 + e2 * e2;
        S23 = s12 * s13 + e2 * s23;
        S33 = s13 * s13 + s23 * s23 + e3 * e3;
        h1 = e1 * t1, h2 = s12 * t1 + e2 * t2, h3 = s13 * t1 + s23 * t2 + e3 * t3;
        m = t1 * t1 + t2 * t2 + t3 * t3 + 1.0;
    }
    pi[0] = E * m, pi[1] = E * h1, pi[2] = E * h2, pi[3] = E * h3;
    pi[4] = E * (S22 + S33), pi[5] = -E * S12, pi[6] = -E * S13;
    pi[7] = E * (S11 + S33), pi[8] = -E * S23, pi[9] = E * (S11 + S22);
}

static int lchol_check(const double theta[10], const double *pi, rb_err *err)
{
    if (!all_finite(theta, 10))
        return rb_err_set(err, RB_ENUMERIC, "log-Cholesky: theta is not finite");
    if (!all_finite(pi, 10))
        return rb_err_set(err, RB_ENUMERIC, "log-Cholesky: theta overflows");
    return RB_OK;
}

static int lchol_args(rb_lchol_form form, const void *in, const void *out, rb_err *err)
{
    if (!in || !out)
        return rb_err_set(err, RB_EINVAL, "log-Cholesky: NULL argument");
    if (form != RB_LCHOL_UUT && form != RB_LCHOL_PAPER_EQ17)
        return rb_err_set(err, RB_EINVAL, "log-Cholesky: unknown form %d", (int)form);
    return RB_OK;
}

int rb_lchol_to_pi(rb_lchol_form form, const double theta[10], double pi[10], rb_err *err)
{
    int rc = lchol_args(form, theta, pi, err);
    if (rc < 0)
        return rc;
    lchol_pi(form, theta, pi);
    rc = lchol_check(theta, pi, err);
    if (rc < 0)
        fill_nan(pi, 10);
    return rc;
}

int rb_lchol_jacobian(rb_lchol_form form, const double theta[10], double pi[10], double G[100], rb_err *err)
{
    int rc = lchol_args(form, theta, pi, err);
    if (rc < 0)
        return rc;
    if (!G)
        return rb_err_set(err, RB_EINVAL, "log-Cholesky: NULL Jacobian");
    lchol_pi(form, theta, pi);
    /* J = E Ub Ub^T (or E Ub^T Ub), E = e^(2 alpha): d/d alpha = 2 pi. Every other theta_j moves one entry (a, b) of
     * Ub at rate c (e^d for a diagonal entry, 1 otherwise), so dJ = E c (e_k w^T + w e_k^T) with k = a and w column b
     * of Ub (U U^T), or k = b and w row a of Ub (U^T U); pi is linear in J. */
    const double E = exp(2.0 * theta[0]);
    const double Ub[16] = {
        exp(theta[1]), theta[4], theta[5], theta[7], 0, exp(theta[2]), theta[6], theta[8], 0, 0, exp(theta[3]),
        theta[9],      0,        0,        0,        1};
    static const int ea[10] = {0, 0, 1, 2, 0, 0, 1, 0, 1, 2}, eb[10] = {0, 0, 1, 2, 1, 2, 2, 3, 3, 3};
    for (int i = 0; i < 10; i++)
        G[i * 10] = 2.0 * pi[i];
    for (int j = 1; j < 10; j++) {
        int a = ea[j], b = eb[j], k = form == RB_LCHOL_UUT ? a : b;
        double c = E * (a == b ? Ub[5 * a] : 1.0), w[4], dJ[16] = {0}, dpi[10];
        for (int r = 0; r < 4; r++)
            w[r] = form == RB_LCHOL_UUT ? Ub[4 * r + b] : Ub[4 * a + r];
        for (int r = 0; r < 4; r++) {
            dJ[4 * k + r] += c * w[r];
            dJ[4 * r + k] += c * w[r];
        }
        pi_from_pseudo(dJ, dpi);
        for (int i = 0; i < 10; i++)
            G[i * 10 + j] = dpi[i];
    }
    rc = lchol_check(theta, pi, err);
    if (rc == RB_OK && !all_finite(G, 100))
        rc = rb_err_set(err, RB_ENUMERIC, "log-Cholesky: theta overflows");
    if (rc < 0)
        fill_nan(pi, 10);
    return rc;
}

/* sqrt of a Cholesky pivot, false when it is not positive (rounding on a nearly singular J). */
static bool pivot(double p, double *out)
{
    if (!(p > 0.0))
        return false;
    *out = sqrt(p);
    return true;
}

int rb_lchol_from_pi(rb_lchol_form form, const double pi[10], double theta[10], rb_err *err)
{
    int rc = lchol_args(form, pi, theta, err);
    if (rc < 0)
        return rc;
    fill_nan(theta, 10);
    if (!rb_inertia_is_consistent(pi))
        goto inconsistent;
    double J[16];
    rb_inertia_pseudo(pi, J);
    if (form == RB_LCHOL_UUT) {
        /* J / m = [[L L^T + t t^T, t], [t^T, 1]] with t = h / m: L is the upper ("reversed") Cholesky factor of
         * A = Sigma / m - t t^T, the CoM-centred second moment per unit mass, taken from its last row up. */
        const double m = pi[0], t[3] = {pi[1] / m, pi[2] / m, pi[3] / m};
        double A[9], L11, L22, L33;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                A[3 * i + j] = J[4 * i + j] / m - t[i] * t[j];
        if (!pivot(A[8], &L33))
            goto inconsistent;
        double L13 = A[2] / L33, L23 = A[5] / L33;
        if (!pivot(A[4] - L23 * L23, &L22))
            goto inconsistent;
        double L12 = (A[1] - L13 * L23) / L22;
        if (!pivot(A[0] - L12 * L12 - L13 * L13, &L11))
            goto inconsistent;
        const double th[10] = {0.5 * log(m), log(L11), log(L22), log(L33), L12, L13, L23, t[0], t[1], t[2]};
        memcpy(theta, th, sizeof th);
    } else {
        /* J = R^T R, R the ordinary upper Cholesky factor = e^alpha Ub: R_44 = e^alpha. */
        double R[16] = {0};
        for (int k = 0; k < 4; k++) {
            double p = J[5 * k];
            for (int j = 0; j < k; j++)
                p -= R[4 * j + k] * R[4 * j + k];
            if (!pivot(p, &R[5 * k]))
                goto inconsistent;
            for (int c = k + 1; c < 4; c++) {
                double s = J[4 * k + c];
                for (int j = 0; j < k; j++)
                    s -= R[4 * j + k] * R[4 * j + c];
                R[4 * k + c] = s / R[5 * k];
            }
        }
        const double ea = R[15];
        const double th[10] = {log(ea),   log(R[0] / ea), log(R[5] / ea), log(R[10] / ea), R[1] / ea,
                               R[2] / ea, R[6] / ea,      R[3] / ea,      R[7] / ea,       R[11] / ea};
        memcpy(theta, th, sizeof th);
    }
    if (all_finite(theta, 10))
        return RB_OK;
    fill_nan(theta, 10); /* a subnormal mass */
    return rb_err_set(err, RB_ENUMERIC, "log-Cholesky: theta of these parameters is not finite");
inconsistent:
    return rb_err_set(err, RB_EINPUT,
                      "inertial parameters not fully physically consistent (pseudo-inertia not positive definite)");
}

/* ---- condensed regressor ------------------------------------------------------------------------------------ */

struct rb_dyn_condensed {
    const rb_model *model;
    size_t n_est;
    size_t *bodies;
    rb_dyn *ws; /* the model's parameters, the chosen bodies' zeroed: its RNEA is tau_nom */
};

void rb_dyn_condensed_free(rb_dyn_condensed *c)
{
    if (!c)
        return;
    rb_dyn_free(c->ws);
    rb_free(c->bodies);
    rb_free(c);
}

int rb_dyn_condensed_alloc(const rb_model *model, const size_t *bodies, size_t n_est, rb_dyn_condensed **out,
                           rb_err *err)
{
    if (out)
        *out = NULL;
    if (!model || !out || (n_est && !bodies))
        return rb_err_set(err, RB_EINVAL, "rb_dyn_condensed_alloc: NULL argument");
    for (size_t k = 0; k < n_est; k++) {
        size_t b = bodies[k];
        if (b >= model->n_bodies)
            return rb_err_set(err, RB_EINVAL, "rb_dyn_condensed_alloc: body %zu out of range (%zu bodies)", b,
                              model->n_bodies);
        if (b == 0 && !model->floating)
            return rb_err_set(err, RB_EINVAL,
                              "rb_dyn_condensed_alloc: body 0 (%s) is the fixed base: its parameters do not enter the "
                              "dynamics",
                              model->bodies[0].name);
        for (size_t l = 0; l < k; l++)
            if (bodies[l] == b)
                return rb_err_set(err, RB_EINVAL, "rb_dyn_condensed_alloc: body %zu (%s) is listed twice", b,
                                  model->bodies[b].name);
    }
    rb_dyn_condensed *c = rb_calloc(1, sizeof *c);
    if (!c)
        return rb_err_set(err, RB_ENOMEM, "rb_dyn_condensed_alloc: out of memory");
    c->model = model;
    c->n_est = n_est;
    c->bodies = rb_calloc(n_est ? n_est : 1, sizeof *c->bodies);
    if (!c->bodies) {
        rb_dyn_condensed_free(c);
        return rb_err_set(err, RB_ENOMEM, "rb_dyn_condensed_alloc: out of memory");
    }
    if (n_est)
        memcpy(c->bodies, bodies, n_est * sizeof *bodies);
    int rc = rb_dyn_alloc(model, &c->ws, err);
    static const double zero[10] = {0};
    for (size_t k = 0; rc == RB_OK && k < n_est; k++)
        rc = rb_dyn_set_body_inertia(model, c->ws, bodies[k], zero, err);
    if (rc < 0) {
        rb_dyn_condensed_free(c);
        return rc;
    }
    *out = c;
    return RB_OK;
}

static int check_finite(const double *x, size_t n, const char *what, rb_err *err)
{
    for (size_t i = 0; x && i < n; i++)
        if (!isfinite(x[i]))
            return rb_err_set(err, RB_ENUMERIC, "rb_dyn_condensed_eval: %s[%zu] is not finite", what, i);
    return RB_OK;
}

int rb_dyn_condensed_eval(const rb_model *model, rb_dyn *ws, rb_dyn_condensed *c, const double *q, const double *nu,
                          const double *nu_dot, double *Y_est, double *tau_nom, rb_err *err)
{
    int rc = rbd_check_call(model, ws, q, tau_nom, NULL, 0, "rb_dyn_condensed_eval", err);
    if (rc < 0)
        return rc;
    if (!c || c->model != model)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_condensed_eval: %s",
                          c ? "condensed regressor made for another model" : "NULL condensed regressor");
    if (c->n_est && !Y_est)
        return rb_err_set(err, RB_EINVAL, "rb_dyn_condensed_eval: NULL Y_est");
    if ((rc = check_finite(q, model->nq, "q", err)) < 0 || (rc = check_finite(nu, model->nv, "nu", err)) < 0 ||
        (rc = check_finite(nu_dot, model->nv, "nu_dot", err)) < 0)
        return rc;
    rb_dyn *w = c->ws;
    rbd_rnea(model, w, q, nu, nu_dot, NULL, 0, tau_nom);
    /* the forward pass left every body's twist and proper acceleration in w: one block per chosen body */
    const size_t cols = 10 * c->n_est;
    if (cols)
        memset(Y_est, 0, model->nv * cols * sizeof *Y_est);
    double F[10][6];
    for (size_t k = 0; k < c->n_est; k++) {
        rbd_regressor_block(w->v[c->bodies[k]], w->a[c->bodies[k]], F);
        rbd_regressor_project(w, c->bodies[k], F, Y_est, cols, 10 * k);
    }
    rbd_kinematics(ws, q, nu, nu_dot, true);
    return RB_OK;
}
