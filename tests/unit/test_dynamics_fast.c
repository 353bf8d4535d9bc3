/* The fast paths of lib/dynamics (issue 19): the mass matrix on the folded tree (fixed joints folded into their
 * parents, each entry written once, no zeroing of the whole matrix), forward dynamics by the tree-sparse L^T L
 * factorization, and RNEA on a fixed base with the bodies that do not move taken from a cache. Each against an
 * independent computation: M column by column from RNEA, the residual of M nu_dot = tau - h, and RNEA forced onto
 * its full pass (a zero wrench on a body that does not move). The models: random trees (fixed joints, branches,
 * prismatic joints) and datasets/humanoid_arms.urdf (FT-sensor bodies, locked joints) with its joints listed out
 * of the tree's order. The mass matrix's vectorized passes also against the scalar CRBA they replace, bit for bit. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/dynamics/dyn_internal.h"
#include "dyn_support.h"
#include "model_support.h"
#include "support.h"
#include "roboest/dynamics.h"
#include "roboest/model.h"

#define ARMS RB_SOURCE "/datasets/humanoid_arms.urdf"

/* out of the tree's order: arms before legs, each chain reversed; the torso and the left leg locked */
static const char *const SCRAMBLED[] = {"r_elbow",      "r_shoulder_yaw", "r_shoulder_roll", "r_shoulder_pitch",
                                        "l_elbow",      "l_shoulder_yaw", "l_shoulder_roll", "l_shoulder_pitch",
                                        "r_ankle_roll", "r_ankle_pitch",  "r_knee",          "r_hip_yaw",
                                        "r_hip_roll",   "r_hip_pitch"};
#define N_SCRAMBLED (sizeof SCRAMBLED / sizeof *SCRAMBLED)

static rb_model *load_arms(bool floating, bool scrambled)
{
    rb_model *m = NULL;
    rb_err err;
    rb_model_opts o = {
        .floating = floating, .joints = scrambled ? SCRAMBLED : NULL, .n_joints = scrambled ? N_SCRAMBLED : 0};
    cr_assert_eq(rb_model_load_urdf(ARMS, &o, &m, &err), RB_OK, "%s", err.msg);
    return m;
}

static rb_dyn *workspace(const rb_model *m)
{
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK, "%s", err.msg);
    return ws;
}

/* the models of the tests: random trees, fixed and floating, and the humanoid in both joint orders */
static rb_model *model_k(trng *r, int k)
{
    switch (k) {
    case 0: return random_tree(r, 14, false);
    case 1: return random_tree(r, 25, true);
    case 2: return load_arms(false, true);
    case 3: return load_arms(true, true);
    case 4: return load_arms(true, false);
    default: return load_arms(false, false);
    }
}
enum { N_MODELS = 6, N_STATES = 8 };

/* M e_j = RNEA(q, 0, e_j) - RNEA(q, 0, 0) */
static void mass_by_rnea(const rb_model *m, rb_dyn *ws, const double *q, double *M)
{
    size_t nv = m->nv;
    double *z = calloc(nv, sizeof *z), *e = calloc(nv, sizeof *e), *t0 = malloc(nv * sizeof *t0),
           *t = malloc(nv * sizeof *t);
    rb_err err;
    cr_assert_eq(rb_dyn_rnea(m, ws, q, z, z, NULL, 0, t0, &err), RB_OK, "%s", err.msg);
    for (size_t j = 0; j < nv; j++) {
        e[j] = 1.0;
        cr_assert_eq(rb_dyn_rnea(m, ws, q, z, e, NULL, 0, t, &err), RB_OK, "%s", err.msg);
        e[j] = 0.0;
        for (size_t i = 0; i < nv; i++)
            M[i * nv + j] = t[i] - t0[i];
    }
    free(z), free(e), free(t0), free(t);
}

Test(dynamics_fast, mass_matrix_every_entry_written_once_over_garbage)
{
    trng r = {0x19a};
    for (int k = 0; k < N_MODELS; k++) {
        rb_model *m = model_k(&r, k);
        rb_dyn *ws = workspace(m);
        size_t nv = m->nv, ld = nv + 3; /* padding columns: never written */
        double *buf = malloc(nv * ld * sizeof *buf), *ref = malloc(nv * nv * sizeof *ref),
               *got = malloc(nv * nv * sizeof *got), *q = malloc(m->nq * sizeof *q);
        rb_err err;
        for (int s = 0; s < N_STATES; s++) {
            random_state(&r, m, q, NULL, 0.0, NULL, 0.0);
            for (size_t i = 0; i < nv * ld; i++)
                buf[i] = NAN;
            rb_mat M = rb_mat_view(buf, nv, nv, ld);
            cr_assert_eq(rb_dyn_mass_matrix(m, ws, q, &M, &err), RB_OK, "%s", err.msg);
            for (size_t i = 0; i < nv; i++)
                memcpy(got + i * nv, buf + i * ld, nv * sizeof *got);
            for (size_t i = 0; i < nv; i++) {
                for (size_t c = nv; c < ld; c++)
                    cr_assert(isnan(buf[i * ld + c]), "model %d: padding (%zu, %zu) written", k, i, c);
                for (size_t j = 0; j < nv; j++)
                    cr_assert(got[i * nv + j] == got[j * nv + i], "model %d: M not symmetric at (%zu, %zu): %g %g", k,
                              i, j, got[i * nv + j], got[j * nv + i]);
            }
            mass_by_rnea(m, ws, q, ref);
            double e = rel_err(got, ref, nv * nv);
            cr_assert_lt(e, 1e-12, "model %d state %d: mass matrix off by %g (relative)", k, s, e);
        }
        free(buf), free(ref), free(got), free(q);
        rb_dyn_free(ws);
        rb_model_free(m);
    }
}

Test(dynamics_fast, forward_dynamics_by_the_tree_factorization_solves_the_equations)
{
    trng r = {0x19b};
    for (int k = 0; k < N_MODELS; k++) {
        rb_model *m = model_k(&r, k);
        rb_dyn *ws = workspace(m);
        size_t nv = m->nv;
        double *q = malloc(m->nq * sizeof *q), *nu = malloc(nv * sizeof *nu), *tau = malloc(nv * sizeof *tau),
               *acc = malloc(nv * sizeof *acc), *aba = malloc(nv * sizeof *aba), *h = malloc(nv * sizeof *h),
               *M = malloc(nv * nv * sizeof *M);
        rb_err err;
        for (int s = 0; s < N_STATES; s++) {
            random_state(&r, m, q, nu, 2.0, NULL, 0.0);
            random_vector(&r, tau, nv, -10.0, 10.0);
            cr_assert_eq(rb_dyn_fd_cholesky(m, ws, q, nu, tau, NULL, 0, acc, &err), RB_OK, "%s", err.msg);
            /* backward error of M acc = tau - h: rounding of a stable factorization, whatever M's condition */
            rb_mat Mv = rb_mat_view(M, nv, nv, nv);
            cr_assert_eq(rb_dyn_mass_matrix(m, ws, q, &Mv, &err), RB_OK, "%s", err.msg);
            cr_assert_eq(rb_dyn_bias_forces(m, ws, q, nu, h, &err), RB_OK, "%s", err.msg);
            double res = 0.0, scale = 0.0, nM = max_abs(M, nv * nv), nx = max_abs(acc, nv);
            for (size_t i = 0; i < nv; i++) {
                double y = 0.0;
                for (size_t j = 0; j < nv; j++)
                    y += M[i * nv + j] * acc[j];
                res = fmax(res, fabs(y - (tau[i] - h[i])));
                scale = fmax(scale, fabs(tau[i] - h[i]));
            }
            cr_assert_lt(res, 1e-13 * (nv * nM * nx + scale), "model %d state %d: residual %g", k, s, res);
            cr_assert_eq(rb_dyn_aba(m, ws, q, nu, tau, NULL, 0, aba, &err), RB_OK, "%s", err.msg);
            double e = rel_err(acc, aba, nv);
            cr_assert_lt(e, 1e-9, "model %d state %d: against ABA %g", k, s, e);
        }
        free(q), free(nu), free(tau), free(acc), free(aba), free(h), free(M);
        rb_dyn_free(ws);
        rb_model_free(m);
    }
}

/* RNEA with the cache of the bodies that do not move, then the same with a zero wrench on such a body (the full
 * pass): tau and every joint wrench the same values. */
static void check_rnea_against_full(const rb_model *m, rb_dyn *ws, const double *q, const double *nu,
                                    const double *nu_dot, int still_frame, const char *what)
{
    size_t nv = m->nv, nb = m->n_bodies;
    double *t1 = malloc(nv * sizeof *t1), *t2 = malloc(nv * sizeof *t2), *w1 = malloc(6 * nb * sizeof *w1),
           *w2 = malloc(6 * nb * sizeof *w2);
    rb_err err;
    rb_ext_wrench zero = {.frame = still_frame, .rep = RB_DYN_BODY};
    cr_assert_eq(rb_dyn_rnea(m, ws, q, nu, nu_dot, NULL, 0, t1, &err), RB_OK, "%s", err.msg);
    for (size_t b = 0; b < nb; b++)
        cr_assert_eq(rb_dyn_joint_wrench(m, ws, b, w1 + 6 * b, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_rnea(m, ws, q, nu, nu_dot, &zero, 1, t2, &err), RB_OK, "%s", err.msg);
    for (size_t b = 0; b < nb; b++)
        cr_assert_eq(rb_dyn_joint_wrench(m, ws, b, w2 + 6 * b, &err), RB_OK, "%s", err.msg);
    for (size_t i = 0; i < nv; i++)
        cr_assert(t1[i] == t2[i], "%s: tau[%zu] %.17g against the full pass's %.17g", what, i, t1[i], t2[i]);
    for (size_t i = 0; i < 6 * nb; i++)
        cr_assert(w1[i] == w2[i], "%s: body %zu's wrench %.17g against the full pass's %.17g", what, i / 6, w1[i],
                  w2[i]);
    free(t1), free(t2), free(w1), free(w2);
}

Test(dynamics_fast, fixed_base_rnea_skips_what_does_not_move_with_the_same_results)
{
    trng r = {0x19c};
    rb_model *m = load_arms(false, true); /* torso locked (a path to the arms), left leg locked (still) */
    rb_dyn *ws = workspace(m);
    size_t nv = m->nv;
    long still = rb_model_frame_index(m, "l_sole");
    cr_assert_geq(still, 0);
    double *q = malloc(m->nq * sizeof *q), *nu = malloc(nv * sizeof *nu), *nd = malloc(nv * sizeof *nd),
           *out = malloc(nv * sizeof *out), pi[10];
    rb_err err;
    for (int s = 0; s < N_STATES; s++) {
        random_state(&r, m, q, nu, 2.0, nd, 5.0);
        check_rnea_against_full(m, ws, q, nu, nd, (int)still, "state");
        /* another pass in between writes the bodies' twists and accelerations */
        cr_assert_eq(rb_dyn_aba(m, ws, q, nu, nd, NULL, 0, out, &err), RB_OK, "%s", err.msg);
        check_rnea_against_full(m, ws, q, nu, nd, (int)still, "after ABA");
        cr_assert_eq(rb_dyn_gravity_forces(m, ws, q, out, &err), RB_OK, "%s", err.msg);
        check_rnea_against_full(m, ws, q, NULL, NULL, (int)still, "gravity only");
    }
    /* a still body's inertia and the gravity change: the cache follows */
    long foot = rb_model_body_index(m, "l_foot_rear");
    cr_assert_geq(foot, 0);
    trng_inertia(&r, pi);
    cr_assert_eq(rb_dyn_set_body_inertia(m, ws, (size_t)foot, pi, &err), RB_OK, "%s", err.msg);
    check_rnea_against_full(m, ws, q, nu, nd, (int)still, "new inertia");
    double g0[3];
    memcpy(g0, m->gravity, sizeof g0);
    m->gravity[0] = 1.5;
    check_rnea_against_full(m, ws, q, nu, nd, (int)still, "new gravity");
    memcpy(m->gravity, g0, sizeof g0);
    free(q), free(nu), free(nd), free(out);
    rb_dyn_free(ws);
    rb_model_free(m);
}

/* The scalar CRBA on the folded tree that the vectorized passes of rbd_crba_folded replace: the same operations in
 * the same order (joint transform, pose composed in the root's frame, S, the inertia carried to the root's frame,
 * composite inertias leaves first, H_jn = S_j . IC_n S_n along each node's ancestors, the base's block and column),
 * the whole matrix in the velocity order with zeros between branches. */
static void scalar_crba(const rb_dyn *ws, const double *q, double *M)
{
    const size_t nn = ws->nn, nv = ws->nv;
    const dyn_body *N = ws->node;
    const bool fb = ws->floating;
    rb_xform *X = calloc(nn, sizeof *X);
    double(*IC)[10] = calloc(nn, sizeof *IC), (*S)[6] = calloc(nn, sizeof *S), F[6];
    for (size_t i = 0; i < nv * nv; i++)
        M[i] = 0.0;
    memcpy(IC[0], N[0].pi, sizeof IC[0]);
    for (size_t n = 1; n < nn; n++) {
        const dyn_body *b = &N[n];
        rb_xform Xj;
        dyn_joint_xform(b, q[b->qi], &Xj);
        if (b->parent == 0)
            X[n] = Xj;
        else
            rb_xform_compose(&X[b->parent], &Xj, &X[n]);
        double *s = S[n];
        if (b->kind == JK_REVOLUTE) {
            rb_m3_mul_v(X[n].R, b->k, s + 3);
            rb_v3_cross(X[n].p, s + 3, s);
        } else {
            rb_m3_mul_v(X[n].R, b->k, s);
        }
        const double m = b->pi[0], *p = X[n].p, *R = X[n].R, *pi = b->pi;
        const double IB[9] = {pi[4], pi[5], pi[6], pi[5], pi[7], pi[8], pi[6], pi[8], pi[9]};
        double Rh[3], RI[9], u[3];
        rb_m3_mul_v(R, pi + 1, Rh);
        rb_m3_mul(R, IB, RI);
        for (int i = 0; i < 3; i++)
            u[i] = Rh[i] + 0.5 * m * p[i];
        const double d = 2.0 * rb_v3_dot(p, u);
        static const int I[6] = {0, 0, 0, 1, 1, 2}, J[6] = {0, 1, 2, 1, 2, 2};
        for (int e = 0; e < 6; e++) {
            const int i = I[e], j = J[e];
            double v = RI[3 * i] * R[3 * j] + RI[3 * i + 1] * R[3 * j + 1] + RI[3 * i + 2] * R[3 * j + 2];
            IC[n][4 + e] = v - (u[i] * p[j] + p[i] * u[j]) + (i == j ? d : 0.0);
        }
        IC[n][0] = m;
        for (int i = 0; i < 3; i++)
            IC[n][1 + i] = Rh[i] + m * p[i];
    }
    for (size_t n = nn; n-- > 1;)
        for (int k = 0; k < 10; k++)
            IC[N[n].parent][k] += IC[n][k];
    if (fb) {
        const double *c = IC[0], m = c[0], hx = c[1], hy = c[2], hz = c[3];
        const double I6[36] = {m,   0,   0,   0,    hz,   -hy,  /* */
                               0,   m,   0,   -hz,  0,    hx,   /* */
                               0,   0,   m,   hy,   -hx,  0,    /* */
                               0,   -hz, hy,  c[4], c[5], c[6], /* */
                               hz,  0,   -hx, c[5], c[7], c[8], /* */
                               -hy, hx,  0,   c[6], c[8], c[9]};
        for (size_t r = 0; r < 6; r++)
            for (size_t k = 0; k < 6; k++)
                M[r * nv + k] = I6[6 * r + k];
    }
    for (size_t n = 1; n < nn; n++) {
        const size_t rn = (size_t)N[n].vi;
        rb_inertia_mul(IC[n], S[n], F);
        const double *sn = S[n];
        M[rn * nv + rn] = sn[0] * F[0] + sn[1] * F[1] + sn[2] * F[2] + sn[3] * F[3] + sn[4] * F[4] + sn[5] * F[5];
        for (int j = N[n].parent; j > 0; j = N[j].parent) {
            const size_t rj = (size_t)N[j].vi;
            const double *sj = S[j];
            M[rn * nv + rj] = M[rj * nv + rn] =
                sj[0] * F[0] + sj[1] * F[1] + sj[2] * F[2] + sj[3] * F[3] + sj[4] * F[4] + sj[5] * F[5];
        }
        if (fb)
            for (size_t k = 0; k < 6; k++)
                M[rn * nv + k] = M[k * nv + rn] = F[k];
    }
    free(X), free(IC), free(S);
}

Test(dynamics_fast, mass_matrix_bit_for_bit_the_scalar_crba)
{
    test_need_shared("models/ergoCubSN000.urdf");
    trng r = {0x19d};
    for (int k = 0; k < N_MODELS + 2; k++) {
        rb_model *m = NULL;
        if (k < N_MODELS) {
            m = model_k(&r, k);
        } else { /* ergoCub, every joint: floating (62 coordinates) and fixed */
            rb_err err;
            rb_model_opts o = {.floating = k == N_MODELS};
            cr_assert_eq(rb_model_load_urdf(RB_SHARED "/models/ergoCubSN000.urdf", &o, &m, &err), RB_OK, "%s", err.msg);
        }
        rb_dyn *ws = workspace(m);
        size_t nv = m->nv;
        double *got = malloc(nv * nv * sizeof *got), *ref = malloc(nv * nv * sizeof *ref),
               *q = malloc(m->nq * sizeof *q);
        rb_err err;
        const bool vec = ws->crba_vec;
        for (int s = 0; s < 2 * N_STATES; s++) {
            ws->crba_vec = vec && s < N_STATES; /* the vector passes where the CPU has them, then the scalar ones */
            random_state(&r, m, q, NULL, 0.0, NULL, 0.0);
            rb_mat M = rb_mat_view(got, nv, nv, nv);
            cr_assert_eq(rb_dyn_mass_matrix(m, ws, q, &M, &err), RB_OK, "%s", err.msg);
            scalar_crba(ws, q, ref);
            for (size_t i = 0; i < nv * nv; i++)
                cr_assert(memcmp(got + i, ref + i, sizeof *got) == 0,
                          "model %d state %d (%s passes): M(%zu, %zu) = %.17g, the scalar CRBA's %.17g", k, s,
                          ws->crba_vec ? "vector" : "scalar", i / nv, i % nv, got[i], ref[i]);
        }
        free(got), free(ref), free(q);
        rb_dyn_free(ws);
        rb_model_free(m);
    }
}
