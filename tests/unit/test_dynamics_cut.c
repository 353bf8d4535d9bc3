/* lib/dynamics cut-system forward dynamics (rb_cut_dyn_*): the joint-torque UKF's process model.
 * Checked against the full model's algorithms, an independent formulation:
 *   - without cuts, K, K_b, h and G_c are the CRBA mass matrix, its base coupling, the RNEA bias forces and the
 *     transposed BODY frame Jacobians;
 *   - with cuts, a sample of the whole robot (ABA with random torques and random contact wrenches, FT readings
 *     from the RNEA's joint wrenches) satisfies K s_ddot + K_b a_B + h = tau + G_ft y + G_c w, and the solve
 *     gives back the ABA's joint accelerations from (tau, y, w): the per-sub-model forward dynamics with the
 *     measured FT wrenches is exact;
 *   - frames: J [a_B; s_ddot] + b is rb_dyn_frame_proper_acceleration (gravity counted once) and J [0; w_B;
 *     s_dot] the BODY angular velocity, for a floating base with a non-zero base linear velocity (which the cut
 *     system takes as zero).
 * Models: arm_2ft (fixed base, two FTs), the ergoCub right leg (leg and foot FTs), the humanoid lower body
 * (floating, six FTs, four foot contacts), random trees (no FT sensors). Tolerance 1e-9 relative. */
#include <criterion/criterion.h>
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

static const double TOL = 1e-9;

static rb_model *load(const char *path, const char *const *joints, size_t n, const char *base, bool floating)
{
    rb_model_opts o = {0};
    rb_model *m = NULL;
    rb_err err;
    o.joints = joints, o.n_joints = n, o.base = base, o.floating = floating;
    cr_assert_eq(rb_model_load_urdf(path, &o, &m, &err), RB_OK, "%s", err.msg);
    return m;
}

static size_t frame_of(const rb_model *m, const char *name)
{
    long f = rb_model_frame_index(m, name);
    cr_assert(f >= 0, "frame %s", name);
    return (size_t)f;
}

/* ---- no cuts: the full model's own matrices ------------------------------------------------------------------ */

static void check_uncut(rb_model *m, trng *r, const char *const *contacts, size_t nc)
{
    rb_err err;
    rb_submodels *sm = NULL;
    rb_cut_dyn *cd = NULL;
    rb_dyn *ws = NULL;
    const char *none[1] = {NULL};
    cr_assert_eq(rb_submodels_build(m, none, 0, &sm, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_cut_dyn_alloc(m, sm, contacts, nc, &cd, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    size_t n = m->n_dofs, nv = m->nv, vo = m->floating ? 6 : 0;
    double *q = calloc(m->nq, sizeof(double)), *nu = calloc(nv, sizeof(double)), *M = calloc(nv * nv, sizeof(double)),
           *h = calloc(nv, sizeof(double)), *hc = calloc(n + 1, sizeof(double)), *J = calloc(6 * nv, sizeof(double)),
           *Jc = calloc(6 * (6 + n), sizeof(double));
    for (int rep = 0; rep < 5; rep++) {
        random_state(r, m, q, nu, 2.0, NULL, 0);
        if (m->floating)
            nu[0] = nu[1] = nu[2] = 0.0; /* the cut system's base has no linear velocity */
        const double *s = q + (m->floating ? 7 : 0), *sd = nu + vo;
        cr_assert_eq(rb_cut_dyn_configure(m, cd, s, n, &err), RB_OK, "%s", err.msg);
        rb_cut_dyn_mats mt = rb_cut_dyn_get_mats(cd);
        rb_mat Mv = rb_mat_view(M, nv, nv, nv);
        cr_assert_eq(rb_dyn_mass_matrix(m, ws, q, &Mv, &err), RB_OK);
        for (size_t i = 0; i < n; i++) {
            for (size_t j = 0; j < n; j++)
                cr_assert(fabs(mt.K[i * n + j] - M[(vo + i) * nv + vo + j]) <=
                              TOL * (1 + fabs(M[(vo + i) * nv + vo + j])),
                          "K(%zu, %zu) %g vs M %g", i, j, mt.K[i * n + j], M[(vo + i) * nv + vo + j]);
            for (size_t k = 0; m->floating && k < 6; k++)
                cr_assert(fabs(mt.Kb[i * 6 + k] - M[(vo + i) * nv + k]) <= TOL * (1 + fabs(M[(vo + i) * nv + k])),
                          "Kb(%zu, %zu)", i, k);
        }
        /* h + K_b a_g with a_g the base's proper acceleration at rest: the bias forces, gravity included */
        double ag[6] = {0, 0, 0, 0, 0, 0};
        if (m->floating) {
            double R[9];
            rb_m3_from_quat(q + 3, R);
            rb_m3t_mul_v(R, m->gravity, ag);
        } else {
            memcpy(ag, m->gravity, 3 * sizeof(double));
        }
        for (int k = 0; k < 3; k++)
            ag[k] = -ag[k];
        cr_assert_eq(rb_cut_dyn_bias(m, cd, sd, n, m->floating ? nu + 3 : NULL, hc, &err), RB_OK, "%s", err.msg);
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < 6; k++)
                hc[i] += mt.Kb[i * 6 + (size_t)k] * ag[k];
        cr_assert_eq(rb_dyn_bias_forces(m, ws, q, nu, h, &err), RB_OK);
        cr_assert(rel_err(hc, h + vo, n) < TOL, "bias forces %g", rel_err(hc, h + vo, n));
        /* G_c = J^T (BODY) of each contact frame; the frame Jacobian's joint columns likewise */
        cr_assert_eq(rb_dyn_kinematics(m, ws, q, NULL, NULL, &err), RB_OK);
        for (size_t c = 0; c < nc; c++) {
            rb_mat Jv = rb_mat_view(J, 6, nv, nv);
            size_t f = frame_of(m, contacts[c]);
            cr_assert_eq(rb_dyn_frame_jacobian(m, ws, f, RB_DYN_BODY, &Jv, &err), RB_OK);
            cr_assert_eq(rb_cut_dyn_frame_jacobian(m, cd, f, Jc, &err), RB_OK);
            for (size_t i = 0; i < n; i++)
                for (int k = 0; k < 6; k++) {
                    double ref = J[(size_t)k * nv + vo + i];
                    cr_assert(fabs(mt.Gc[i * 6 * nc + 6 * c + (size_t)k] - ref) <= TOL * (1 + fabs(ref)),
                              "Gc(%zu, %zu)", i, 6 * c + (size_t)k);
                    cr_assert(fabs(Jc[(size_t)k * (6 + n) + 6 + i] - ref) <= TOL * (1 + fabs(ref)), "J(%d, %zu)", k, i);
                }
        }
    }
    free(q), free(nu), free(M), free(h), free(hc), free(J), free(Jc);
    rb_dyn_free(ws);
    rb_cut_dyn_free(cd);
    rb_submodels_free(sm);
}

Test(dynamics_cut, without_cuts_is_the_full_model)
{
    trng r = {11};
    const char *arm_c[] = {"forearm", "tool_frame"};
    rb_model *m = load(ARM, NULL, 0, NULL, false);
    check_uncut(m, &r, arm_c, 2);
    rb_model_free(m);
    for (int t = 0; t < 6; t++) {
        m = random_tree(&r, 4 + (size_t)t * 2, t % 2 == 1);
        const char *c[] = {m->frames[m->n_frames - 1].name};
        check_uncut(m, &r, c, 1);
        rb_model_free(m);
    }
}

/* ---- cuts: a simulated sample of the whole robot ----------------------------------------------------------------- */

typedef struct cut_case {
    const char *path, *base;
    const char *const *joints;
    size_t n_joints;
    bool floating;
    const char *const *fts;
    size_t n_fts;
    const char *const *contacts;
    size_t nc;
    const char *const *frames; /* checked as accelerometer / gyroscope frames */
    size_t n_frames;
} cut_case;

typedef struct cut_result {
    double residual, acc, frame_acc, frame_gyro;
} cut_result;

static cut_result run_cut_case(const cut_case *cc, trng *r)
{
    rb_err err;
    rb_model *m = load(cc->path, cc->joints, cc->n_joints, cc->base, cc->floating);
    rb_submodels *sm = NULL;
    rb_cut_dyn *cd = NULL;
    rb_dyn *ws = NULL;
    cr_assert_eq(rb_submodels_build(m, cc->fts, cc->n_fts, &sm, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_cut_dyn_alloc(m, sm, cc->contacts, cc->nc, &cd, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    size_t n = m->n_dofs, nv = m->nv, vo = m->floating ? 6 : 0, nft = sm->n_ft, nc = cc->nc;
    double *q = calloc(m->nq, sizeof(double)), *nu = calloc(nv, sizeof(double)), *nud = calloc(nv, sizeof(double)),
           *tau = calloc(nv, sizeof(double)), *tchk = calloc(nv, sizeof(double)),
           *ft_all = calloc(6 * m->n_ft + 1, sizeof(double)), *y = calloc(6 * nft + 1, sizeof(double)),
           *w = calloc(6 * nc + 1, sizeof(double)), *lhs = calloc(n + 1, sizeof(double)),
           *h = calloc(n + 1, sizeof(double)), *x = calloc(n + 1, sizeof(double)),
           *J = calloc(6 * (6 + n), sizeof(double));
    rb_ext_wrench *ext = calloc(nc + 1, sizeof *ext);
    cut_result res = {0, 0, 0, 0};
    for (int rep = 0; rep < 10; rep++) {
        random_state(r, m, q, nu, 2.0, NULL, 0);
        random_vector(r, tau + vo, n, -30.0, 30.0);
        memset(tau, 0, vo * sizeof(double));
        for (size_t c = 0; c < nc; c++) {
            ext[c].frame = (int)frame_of(m, cc->contacts[c]);
            ext[c].rep = RB_DYN_BODY;
            random_vector(r, ext[c].w, 3, -80.0, 80.0);
            random_vector(r, ext[c].w + 3, 3, -8.0, 8.0);
            memcpy(w + 6 * c, ext[c].w, sizeof ext[c].w);
        }
        cr_assert_eq(rb_dyn_aba(m, ws, q, nu, tau, ext, nc, nud, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_dyn_rnea(m, ws, q, nu, nud, ext, nc, tchk, &err), RB_OK);
        cr_assert(rel_err(tchk, tau, nv) < 1e-9);
        cr_assert_eq(rb_dyn_ft_wrenches(m, ws, ft_all, &err), RB_OK);
        for (size_t k = 0; k < nft; k++)
            memcpy(y + 6 * k, ft_all + 6 * sm->ft[k], 6 * sizeof(double));
        /* the base's proper acceleration with zero linear velocity: classical acceleration minus gravity */
        double aB[6] = {0, 0, 0, 0, 0, 0}, wB[3] = {0, 0, 0};
        if (m->floating) {
            double R[9], g[3], wv[3];
            rb_m3_from_quat(q + 3, R);
            rb_m3t_mul_v(R, m->gravity, g);
            rb_v3_cross(nu + 3, nu, wv);
            for (int k = 0; k < 3; k++)
                aB[k] = nud[k] + wv[k] - g[k], aB[3 + k] = nud[3 + k], wB[k] = nu[3 + k];
        } else {
            for (int k = 0; k < 3; k++)
                aB[k] = -m->gravity[k];
        }
        const double *s = q + (m->floating ? 7 : 0), *sd = nu + vo, *sdd = nud + vo;
        cr_assert_eq(rb_cut_dyn_configure(m, cd, s, n, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_cut_dyn_bias(m, cd, sd, n, m->floating ? wB : NULL, h, &err), RB_OK, "%s", err.msg);
        rb_cut_dyn_mats mt = rb_cut_dyn_get_mats(cd);
        /* residual of K s_ddot + K_b a_B + h - G_ft y - G_c w against tau */
        for (size_t i = 0; i < n; i++) {
            double v = h[i];
            for (size_t j = 0; j < n; j++)
                v += mt.K[i * n + j] * sdd[j];
            for (int k = 0; k < 6; k++)
                v += mt.Kb[i * 6 + (size_t)k] * aB[k];
            for (size_t k = 0; k < 6 * nft; k++)
                v -= mt.Gft[i * 6 * nft + k] * y[k];
            for (size_t k = 0; k < 6 * nc; k++)
                v -= mt.Gc[i * 6 * nc + k] * w[k];
            lhs[i] = v;
        }
        res.residual = fmax(res.residual, rel_err(lhs, tau + vo, n));
        /* forward: s_ddot = K^-1 (tau + G_ft y + G_c w - K_b a_B - h) */
        for (size_t i = 0; i < n; i++) {
            double v = tau[vo + i] - h[i];
            for (int k = 0; k < 6; k++)
                v -= mt.Kb[i * 6 + (size_t)k] * aB[k];
            for (size_t k = 0; k < 6 * nft; k++)
                v += mt.Gft[i * 6 * nft + k] * y[k];
            for (size_t k = 0; k < 6 * nc; k++)
                v += mt.Gc[i * 6 * nc + k] * w[k];
            x[i] = v;
        }
        cr_assert_eq(rb_cut_dyn_factor(cd, NULL, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_cut_dyn_solve(cd, x, 1, 1, &err), RB_OK, "%s", err.msg);
        res.acc = fmax(res.acc, rel_err(x, sdd, n));
        /* frames */
        cr_assert_eq(rb_dyn_kinematics(m, ws, q, nu, nud, &err), RB_OK);
        for (size_t fi = 0; fi < cc->n_frames; fi++) {
            size_t f = frame_of(m, cc->frames[fi]);
            double pa[6], vel[6], b[6], est[6], om[3];
            cr_assert_eq(rb_dyn_frame_proper_acceleration(m, ws, f, RB_DYN_BODY, pa, &err), RB_OK);
            cr_assert_eq(rb_dyn_frame_velocity(m, ws, f, RB_DYN_BODY, vel, &err), RB_OK);
            cr_assert_eq(rb_cut_dyn_frame_jacobian(m, cd, f, J, &err), RB_OK, "%s", err.msg);
            cr_assert_eq(rb_cut_dyn_frame_bias(m, cd, f, b, &err), RB_OK, "%s", err.msg);
            for (int k = 0; k < 6; k++) {
                const double *row = J + (size_t)k * (6 + n);
                double a = b[k], v = 0;
                for (int c = 0; c < 6; c++)
                    a += row[c] * aB[c];
                for (int c = 3; c < 6; c++)
                    v += row[c] * wB[c - 3];
                for (size_t j = 0; j < n; j++)
                    a += row[6 + j] * sdd[j], v += row[6 + j] * sd[j];
                est[k] = a;
                if (k >= 3)
                    om[k - 3] = v;
            }
            res.frame_acc = fmax(res.frame_acc, rel_err(est, pa, 6));
            res.frame_gyro = fmax(res.frame_gyro, rel_err(om, vel + 3, 3));
        }
    }
    free(q), free(nu), free(nud), free(tau), free(tchk), free(ft_all), free(y), free(w), free(lhs), free(h), free(x),
        free(J), free(ext);
    rb_dyn_free(ws);
    rb_cut_dyn_free(cd);
    rb_submodels_free(sm);
    rb_model_free(m);
    return res;
}

static void expect_exact(const cut_case *cc, const char *label)
{
    trng r = {2024};
    cut_result res = run_cut_case(cc, &r);
    cr_log_info("%s: residual %.2g, s_ddot %.2g, frame acc %.2g, gyro %.2g", label, res.residual, res.acc,
                res.frame_acc, res.frame_gyro);
    cr_assert(res.residual < TOL, "%s: residual %g", label, res.residual);
    cr_assert(res.acc < 1e-8, "%s: s_ddot %g", label, res.acc);
    cr_assert(res.frame_acc < TOL, "%s: frame acceleration %g", label, res.frame_acc);
    cr_assert(res.frame_gyro < TOL, "%s: frame angular velocity %g", label, res.frame_gyro);
}

Test(dynamics_cut, arm_with_two_fts_reproduces_the_full_model)
{
    static const char *fts[] = {"upper_arm_ft_sensor", "wrist_ft_sensor"},
                      *c[] = {"forearm", "tool_frame", "upper_arm"},
                      *fr[] = {"hand_acc", "forearm", "upper_arm_2", "base_link"};
    cut_case cc = {ARM, "base_link", NULL, 0, false, fts, 2, c, 3, fr, 4};
    expect_exact(&cc, "arm_2ft");
}

Test(dynamics_cut, ergocub_leg_with_leg_and_foot_fts_reproduces_the_full_model)
{
    test_need_shared("models/ergoCubSN000.urdf");
    static const char *joints[] = {"r_hip_pitch", "r_hip_roll", "r_hip_yaw", "r_knee", "r_ankle_pitch", "r_ankle_roll"};
    static const char *fts[] = {"r_leg_ft_sensor", "r_foot_front_ft_sensor", "r_foot_rear_ft_sensor"},
                      *c[] = {"r_foot_front", "r_foot_rear", "r_lower_leg"},
                      *fr[] = {"r_leg_ft_sensor", "r_foot_front_ft_sensor", "r_foot_rear_ft_sensor", "r_lower_leg"};
    cut_case cc = {ERGOCUB, "root_link", joints, 6, false, fts, 3, c, 3, fr, 4};
    expect_exact(&cc, "ergoCub right leg");
}

Test(dynamics_cut, floating_humanoid_reproduces_the_full_model)
{
    static const char *fts[] = {"l_leg_ft_sensor", "l_foot_front_ft_sensor", "l_foot_rear_ft_sensor",
                                "r_leg_ft_sensor", "r_foot_front_ft_sensor", "r_foot_rear_ft_sensor"},
                      *c[] = {"l_foot_front_contact", "l_foot_rear_contact", "r_foot_front_contact",
                              "r_foot_rear_contact", "l_lower_leg"},
                      *fr[] = {"waist_imu", "l_foot_imu", "r_foot_imu", "chest"};
    cut_case cc = {HUMANOID, NULL, NULL, 0, true, fts, 6, c, 5, fr, 4};
    expect_exact(&cc, "humanoid (floating)");
}

/* ---- factorization with a diagonal term, allocation, errors --------------------------------------------------- */

Test(dynamics_cut, solve_with_rotor_inertias_and_no_allocation)
{
    static const char *fts[] = {"upper_arm_ft_sensor", "wrist_ft_sensor"}, *c[] = {"forearm"};
    rb_err err;
    rb_model *m = load(ARM, NULL, 0, "base_link", false);
    rb_submodels *sm = NULL;
    rb_cut_dyn *cd = NULL;
    cr_assert_eq(rb_submodels_build(m, fts, 2, &sm, &err), RB_OK);
    cr_assert_eq(rb_cut_dyn_alloc(m, sm, c, 1, &cd, &err), RB_OK);
    size_t n = m->n_dofs;
    double s[4] = {0.3, -0.7, 1.1, 2.0}, sd[4] = {1, -2, 0.5, 3}, d[4] = {0.1, 0.256, 0.08, 0.05}, X[4 * 3], X0[4 * 3],
           h[4], J[6 * 10], b[6], w[3] = {0, 0, 0};
    for (size_t i = 0; i < 12; i++)
        X0[i] = X[i] = sin(1.0 + (double)i);
    test_alloc_count_init();
    test_alloc_counting = 1;
    long before = test_alloc_count, before_rb = rb_alloc_fail_after(-1);
    (void)before_rb;
    int rc = rb_cut_dyn_configure(m, cd, s, n, &err);
    rc = rc ? rc : rb_cut_dyn_factor(cd, d, &err);
    rc = rc ? rc : rb_cut_dyn_solve(cd, X, 3, 3, &err);
    rc = rc ? rc : rb_cut_dyn_bias(m, cd, sd, n, w, h, &err);
    rc = rc ? rc : rb_cut_dyn_frame_jacobian(m, cd, frame_of(m, "hand_acc"), J, &err);
    rc = rc ? rc : rb_cut_dyn_frame_bias(m, cd, frame_of(m, "hand_acc"), b, &err);
    test_alloc_counting = 0;
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    if (test_alloc_count_works())
        cr_assert_eq(test_alloc_count - before, 0, "allocations: %ld", test_alloc_count - before);
    cr_assert_eq(rb_alloc_fail_after(-1), 0, "rb_malloc calls");
    /* (K + diag d) X == X0 */
    rb_cut_dyn_mats mt = rb_cut_dyn_get_mats(cd);
    for (size_t i = 0; i < n; i++)
        for (size_t c2 = 0; c2 < 3; c2++) {
            double v = d[i] * X[i * 3 + c2];
            for (size_t j = 0; j < n; j++)
                v += mt.K[i * n + j] * X[j * 3 + c2];
            cr_assert(fabs(v - X0[i * 3 + c2]) < 1e-12 * (1 + fabs(X0[i * 3 + c2])), "row %zu col %zu: %g vs %g", i, c2,
                      v, X0[i * 3 + c2]);
        }
    /* the block structure: no entry of a shoulder row for the elbow / wrist accelerations */
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 2; j < 4; j++)
            cr_assert_eq(mt.K[i * n + j], 0.0, "K(%zu, %zu)", i, j);
    rb_cut_dyn_free(cd);
    rb_submodels_free(sm);
    rb_model_free(m);
}

Test(dynamics_cut, errors)
{
    static const char *fts[] = {"upper_arm_ft_sensor", "wrist_ft_sensor"}, *bad[] = {"forarm"},
                      *twice[] = {"forearm", "forearm"};
    rb_err err;
    rb_model *m = load(ARM, NULL, 0, "base_link", false);
    rb_submodels *sm = NULL;
    rb_cut_dyn *cd = NULL;
    cr_assert_eq(rb_submodels_build(m, fts, 2, &sm, &err), RB_OK);
    cr_assert_eq(rb_cut_dyn_alloc(m, sm, bad, 1, &cd, &err), RB_ENOTFOUND);
    cr_assert(strstr(err.msg, "forarm"), "%s", err.msg);
    cr_assert_null(cd);
    cr_assert_eq(rb_cut_dyn_alloc(m, sm, twice, 2, &cd, &err), RB_EINVAL);
    cr_assert_eq(rb_cut_dyn_alloc(m, sm, NULL, 0, &cd, &err), RB_OK);
    double s[4] = {0, 0.5, 1, 0}, x[4] = {1, 1, 1, 1}, h[4], d[4] = {0, 0, -100, 0};
    cr_assert_eq(rb_cut_dyn_bias(m, cd, s, 4, NULL, h, &err), RB_EINVAL); /* no configuration yet */
    cr_assert_eq(rb_cut_dyn_configure(m, cd, s, 3, &err), RB_EDIM);
    s[1] = NAN;
    cr_assert_eq(rb_cut_dyn_configure(m, cd, s, 4, &err), RB_ENUMERIC);
    s[1] = 0.5;
    cr_assert_eq(rb_cut_dyn_configure(m, cd, s, 4, &err), RB_OK);
    cr_assert_eq(rb_cut_dyn_solve(cd, x, 1, 1, &err), RB_EINVAL); /* not factored */
    cr_assert_eq(rb_cut_dyn_factor(cd, d, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "sub-model 1") && strstr(err.msg, "elbow"), "%s", err.msg);
    double b[6];
    cr_assert_eq(rb_cut_dyn_frame_bias(m, cd, 0, b, &err), RB_EINVAL); /* no velocities */
    cr_assert_eq(rb_cut_dyn_frame_bias(m, cd, m->n_frames, b, &err), RB_EINVAL);
    rb_cut_dyn_free(cd);
    rb_submodels_free(sm);
    rb_model_free(m);
}

/* ---- batches: the same bits as one call per column --------------------------------------------------------------- */

/* rb_cut_dyn_bias_batch and rb_cut_dyn_frame_bias_batch against rb_cut_dyn_bias / rb_cut_dyn_frame_bias per column,
 * bit for bit, at odd widths (the vector loops' tails), without allocating; a batch of another width after. */
static void expect_batch_bits(rb_model *m, const char *const *fts, size_t nft, const char *const *frames, size_t nfr)
{
    rb_err err;
    rb_submodels *sm = NULL;
    rb_cut_dyn *cd = NULL;
    cr_assert_eq(rb_submodels_build(m, fts, nft, &sm, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_cut_dyn_alloc(m, sm, NULL, 0, &cd, &err), RB_OK, "%s", err.msg);
    enum { COLS = 13 };
    cr_assert_eq(rb_cut_dyn_reserve_batch(cd, COLS, &err), RB_OK);
    size_t n = m->n_dofs;
    trng r = {77};
    double *s = calloc(n, sizeof(double)), *S = calloc(n * COLS, sizeof(double)), W[3 * COLS],
           *H = calloc(n * COLS, sizeof(double)), *h = calloc(n, sizeof(double)), B[3 * COLS], b[6];
    random_vector(&r, s, n, -1.0, 1.0);
    random_vector(&r, S, n * COLS, -3.0, 3.0);
    random_vector(&r, W, 3 * COLS, -2.0, 2.0);
    cr_assert_eq(rb_cut_dyn_configure(m, cd, s, n, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_cut_dyn_frame_bias_batch(m, cd, 0, B, 3, &err), RB_EINVAL); /* no batch yet */
    static const size_t widths[] = {COLS, 6, 1};
    for (size_t wi = 0; wi < 3; wi++) {
        size_t cols = widths[wi];
        const double *w = m->floating ? W : NULL;
        test_alloc_count_init();
        test_alloc_counting = 1;
        long before = test_alloc_count;
        int rc = rb_cut_dyn_bias_batch(m, cd, S, n, w, 3, cols, H, n, &err);
        test_alloc_counting = 0;
        cr_assert_eq(rc, RB_OK, "%s", err.msg);
        if (test_alloc_count_works())
            cr_assert_eq(test_alloc_count - before, 0, "allocations: %ld", test_alloc_count - before);
        for (size_t fi = 0; fi < nfr; fi++) {
            size_t f = frame_of(m, frames[fi]);
            cr_assert_eq(rb_cut_dyn_frame_bias_batch(m, cd, f, B, 3, &err), RB_OK, "%s", err.msg);
            for (size_t j = 0; j < cols; j++) {
                cr_assert_eq(rb_cut_dyn_bias(m, cd, S + j * n, n, w ? w + 3 * j : NULL, h, &err), RB_OK);
                cr_assert_eq(rb_cut_dyn_frame_bias(m, cd, f, b, &err), RB_OK);
                for (size_t i = 0; i < n; i++)
                    cr_assert(H[j * n + i] == h[i], "h %zu, column %zu of %zu: %.17g vs %.17g", i, j, cols,
                              H[j * n + i], h[i]);
                for (int k = 0; k < 3; k++)
                    cr_assert(B[3 * j + (size_t)k] == b[k], "%s %d, column %zu: %.17g vs %.17g", frames[fi], k, j,
                              B[3 * j + (size_t)k], b[k]);
            }
        }
    }
    cr_assert_eq(rb_cut_dyn_bias_batch(m, cd, S, n, NULL, 3, COLS + 1, H, n, &err), RB_EINVAL); /* beyond reserved */
    free(s), free(S), free(H), free(h);
    rb_cut_dyn_free(cd);
    rb_submodels_free(sm);
    rb_model_free(m);
}

Test(dynamics_cut, batches_give_the_bits_of_one_call_per_column)
{
    test_need_shared("models/ergoCubSN000.urdf");
    static const char *joints[] = {"r_hip_pitch", "r_hip_roll", "r_hip_yaw", "r_knee", "r_ankle_pitch", "r_ankle_roll"};
    static const char *leg_fts[] = {"r_leg_ft_sensor", "r_foot_front_ft_sensor", "r_foot_rear_ft_sensor"},
                      *leg_fr[] = {"r_leg_ft_sensor", "r_foot_front_ft_sensor", "root_link", "l_foot_front_ft_sensor"};
    expect_batch_bits(load(ERGOCUB, joints, 6, "root_link", false), leg_fts, 3, leg_fr, 4);
    static const char *hum_fts[] = {"l_leg_ft_sensor", "l_foot_front_ft_sensor", "l_foot_rear_ft_sensor",
                                    "r_leg_ft_sensor", "r_foot_front_ft_sensor", "r_foot_rear_ft_sensor"},
                      *hum_fr[] = {"waist_imu", "l_foot_imu", "r_foot_imu", "chest"};
    expect_batch_bits(load(HUMANOID, NULL, 0, NULL, true), hum_fts, 6, hum_fr, 4);
}
