/* lib/dynamics on the shared URDF models (ergoCub, the four-joint models with FT sensors and IMUs), loaded
 * by lib/model: the identities between algorithms, sensor-frame Jacobians, accelerometers at rest, the
 * model-predicted FT readings against Newton-Euler on each sensor's child half, and invariance to the base
 * link chosen at load time (re-rooting reverses joints, FT joints included). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dyn_support.h"
#include "roboest/dynamics.h"
#include "support.h"

#define MODELS RB_SHARED "/models"

static const char *const URDFS[] = {MODELS "/ergoCubSN000.urdf", MODELS "/four_joints_two_sensors.urdf",
                                    MODELS "/four_joints_two_ft_three_imu.urdf"};
enum { N_URDFS = sizeof URDFS / sizeof URDFS[0] };

static rb_model *load(const char *path, bool floating, const char *base)
{
    rb_model_opts o = {0};
    rb_model *m = NULL;
    rb_err err;
    o.floating = floating;
    o.base = base;
    cr_assert_eq(rb_model_load_urdf(path, &o, &m, &err), RB_OK, "%s", err.msg);
    return m;
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

/* M nu_dot + h = RNEA, Y pi = RNEA (1e-12), M positive definite (LAPACK-free check through the
 * Cholesky forward dynamics), ABA = CRBA + Cholesky and RNEA(ABA(tau)) = tau (relative 1e-9: ergoCub's
 * finger links weigh grams, so M is ill-conditioned). */
Test(dynamics_urdf, identities_on_the_shared_models)
{
    test_need_shared("models/ergoCubSN000.urdf");
    test_need_shared("models/four_joints_two_sensors.urdf");
    test_need_shared("models/four_joints_two_ft_three_imu.urdf");
    rb_err err;
    for (int u = 0; u < N_URDFS; u++)
        for (int fb = 0; fb < 2; fb++) {
            rb_model *m = load(URDFS[u], fb, NULL);
            rb_dyn *ws;
            cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
            size_t nq = m->nq, nv = m->nv, npi = 10 * m->n_bodies;
            double *q = calloc(nq, sizeof(double)), *nu = calloc(nv, sizeof(double)), *nud = calloc(nv, sizeof(double)),
                   *tau = calloc(nv, sizeof(double)), *h = calloc(nv, sizeof(double)), *x = calloc(nv, sizeof(double)),
                   *y = calloc(nv, sizeof(double)), *pi = calloc(npi, sizeof(double));
            rb_mat M, Y;
            cr_assert_eq(rb_mat_alloc(&M, nv, nv, &err), RB_OK);
            cr_assert_eq(rb_mat_alloc(&Y, nv, npi, &err), RB_OK);
            rb_dyn_inertial_params(m, pi);
            trng r = {(uint64_t)(u * 2 + fb + 1)};
            for (int k = 0; k < 3; k++) {
                random_state(&r, m, q, nu, 2.0, nud, 10.0);
                cr_assert_eq(rb_dyn_rnea(m, ws, q, nu, nud, NULL, 0, tau, &err), RB_OK);
                cr_assert_eq(rb_dyn_mass_matrix(m, ws, q, &M, &err), RB_OK);
                cr_assert_eq(rb_dyn_bias_forces(m, ws, q, nu, h, &err), RB_OK);
                mat_vec(&M, nud, x);
                for (size_t i = 0; i < nv; i++)
                    x[i] += h[i];
                cr_assert(rel_err(x, tau, nv) < 1e-12, "%s: M nu_dot + h = RNEA: %g", URDFS[u], rel_err(x, tau, nv));
                cr_assert_eq(rb_dyn_regressor(m, ws, q, nu, nud, &Y, &err), RB_OK);
                mat_vec(&Y, pi, x);
                cr_assert(rel_err(x, tau, nv) < 1e-12, "%s: Y pi = RNEA", URDFS[u]);

                random_vector(&r, tau + (fb ? 6 : 0), m->n_dofs, -5, 5);
                cr_assert_eq(rb_dyn_aba(m, ws, q, nu, tau, NULL, 0, x, &err), RB_OK, "%s", err.msg);
                cr_assert_eq(rb_dyn_fd_cholesky(m, ws, q, nu, tau, NULL, 0, y, &err), RB_OK, "%s", err.msg);
                cr_assert(rel_err(x, y, nv) < 1e-9, "%s: ABA = CRBA + Cholesky: %g", URDFS[u], rel_err(x, y, nv));
                cr_assert_eq(rb_dyn_rnea(m, ws, q, nu, x, NULL, 0, y, &err), RB_OK);
                cr_assert(rel_err(y, tau, nv) < 1e-9, "%s: RNEA(ABA(tau)) = tau: %g", URDFS[u], rel_err(y, tau, nv));
            }
            free(q), free(nu), free(nud), free(tau), free(h), free(x), free(y), free(pi);
            rb_mat_free(&M), rb_mat_free(&Y);
            rb_dyn_free(ws);
            rb_model_free(m);
        }
}

/* IMU and FT frames: Jacobians (three representations) against central differences (1e-8, step 1e-6);
 * accelerometers at rest read -R^T g. */
Test(dynamics_urdf, sensor_frames)
{
    test_need_shared("models/ergoCubSN000.urdf");
    rb_err err;
    rb_model *m = load(URDFS[0], true, NULL);
    rb_dyn *ws;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    size_t nq = m->nq, nv = m->nv;
    double *q = calloc(nq, sizeof(double)), *qp = calloc(nq, sizeof(double)), *qm = calloc(nq, sizeof(double)),
           *nu = calloc(nv, sizeof(double));
    rb_mat J;
    cr_assert_eq(rb_mat_alloc(&J, 6, nv, &err), RB_OK);
    trng r = {12};
    random_state(&r, m, q, NULL, 0, NULL, 0);
    size_t frames[16], nf = 0;
    for (size_t i = 0; i < m->n_imu && nf < 16; i++)
        frames[nf++] = (size_t)m->imu[i].frame;
    for (size_t i = 0; i < m->n_ft && nf < 16; i++)
        frames[nf++] = (size_t)m->ft[i].sensor_frame;
    const double eps = 1e-6;
    for (size_t i = 0; i < nf; i++)
        for (int rep = 0; rep < 3; rep++) {
            rb_xform X, Xp, Xm;
            fk_frame_pose(m, ws, q, frames[i], &X);
            cr_assert_eq(rb_dyn_frame_jacobian(m, ws, frames[i], (rb_dyn_rep)rep, &J, &err), RB_OK);
            for (size_t k = 0; k < nv; k++) {
                double col[6], ref[6];
                for (int rr = 0; rr < 6; rr++)
                    col[rr] = *rb_mat_at(&J, (size_t)rr, k);
                perturb(m, q, k, eps, qp);
                perturb(m, q, k, -eps, qm);
                fk_frame_pose(m, ws, qp, frames[i], &Xp);
                fk_frame_pose(m, ws, qm, frames[i], &Xm);
                pose_rate(&Xm, &Xp, 2 * eps, (rb_dyn_rep)rep, &X, ref);
                cr_assert(rel_err(col, ref, 6) < 1e-8, "frame %s rep %d column %zu: %g", m->frames[frames[i]].name, rep,
                          k, rel_err(col, ref, 6));
            }
            cr_assert_eq(rb_dyn_kinematics(m, ws, q, NULL, NULL, &err), RB_OK);
        }
    cr_assert_eq(rb_dyn_kinematics(m, ws, q, nu, NULL, &err), RB_OK);
    for (size_t i = 0; i < m->n_imu; i++) {
        rb_xform X;
        double a[6], ref[6] = {0};
        rb_dyn_frame_pose(m, ws, (size_t)m->imu[i].frame, &X, NULL);
        rb_m3t_mul_v(X.R, m->gravity, ref);
        for (int k = 0; k < 3; k++)
            ref[k] = -ref[k];
        cr_assert_eq(rb_dyn_frame_proper_acceleration(m, ws, (size_t)m->imu[i].frame, RB_DYN_BODY, a, &err), RB_OK);
        cr_assert(rel_err(a, ref, 6) < 1e-12, "IMU %s at rest", m->imu[i].name);
        cr_assert(fabs(sqrt(rb_v3_dot(a, a)) - 9.81) < 1e-12);
    }
    free(q), free(qp), free(qm), free(nu);
    rb_mat_free(&J);
    rb_dyn_free(ws);
    rb_model_free(m);
}

/* The reading of FT sensor s predicted by Newton-Euler on the half of the tree on the sensor's child side
 * (kinematic state), with the sensor's sign, in its reading frame. */
static void ft_reference(const rb_model *m, const rb_dyn *ws, size_t s, const rb_ext_wrench *ext, size_t n_ext,
                         double out[6])
{
    const rb_ft_sensor *ft = &m->ft[s];
    double W[6];
    if (m->bodies[ft->child_body].parent == ft->parent_body) {
        subtree_wrench(m, ws, (size_t)ft->child_body, ext, n_ext, W);
    } else { /* reversed by re-rooting: the parent half is the subtree, and the child half feels the opposite */
        cr_assert_eq(m->bodies[ft->parent_body].parent, ft->child_body);
        subtree_wrench(m, ws, (size_t)ft->parent_body, ext, n_ext, W);
        for (int k = 0; k < 6; k++)
            W[k] = -W[k];
    }
    rb_xform X;
    rb_dyn_frame_pose(m, ws, (size_t)ft->frame, &X, NULL);
    rb_xform_force_inv(&X, W, out);
    for (int k = 0; k < 6; k++)
        out[k] *= ft->sign;
}

/* Model-predicted FT readings: against Newton-Euler on the child halves (1e-11 relative), with contact
 * wrenches on the soles; the same readings, joint torques and accelerations whichever link is the floating
 * base (root_link, l_foot_front: the path crosses the reversed FT joint l_foot_front_ft_sensor and the
 * reversed left leg; r_hand_palm). */
Test(dynamics_urdf, ft_readings_and_base_link_invariance)
{
    test_need_shared("models/ergoCubSN000.urdf");
    rb_err err;
    static const char *const bases[] = {"l_foot_front", "r_hand_palm"};
    rb_model *m1 = load(URDFS[0], true, NULL);
    rb_dyn *w1;
    cr_assert_eq(rb_dyn_alloc(m1, &w1, &err), RB_OK);
    size_t nq = m1->nq, nv = m1->nv, n = m1->n_dofs, nft = m1->n_ft;
    double *q1 = calloc(nq, sizeof(double)), *nu1 = calloc(nv, sizeof(double)), *a1 = calloc(nv, sizeof(double)),
           *t1 = calloc(nv, sizeof(double)), *q2 = calloc(nq, sizeof(double)), *nu2 = calloc(nv, sizeof(double)),
           *a2 = calloc(nv, sizeof(double)), *t2 = calloc(nv, sizeof(double)), *ft1 = calloc(6 * nft, sizeof(double)),
           *ft2 = calloc(6 * nft, sizeof(double));
    trng r = {2718};
    random_state(&r, m1, q1, nu1, 1.5, a1, 8.0);
    rb_ext_wrench e1[2] = {{(int)rb_model_frame_index(m1, "l_sole"), RB_DYN_MIXED, {5, -3, 250, 2, -4, 1}},
                           {(int)rb_model_frame_index(m1, "r_sole"), RB_DYN_BODY, {-7, 2, 230, -1, 3, 0.5}}};
    cr_assert(e1[0].frame >= 0 && e1[1].frame >= 0);
    cr_assert_eq(rb_dyn_rnea(m1, w1, q1, nu1, a1, e1, 2, t1, &err), RB_OK);
    cr_assert_eq(rb_dyn_ft_wrenches(m1, w1, ft1, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_kinematics(m1, w1, q1, nu1, a1, &err), RB_OK);
    for (size_t s = 0; s < nft; s++) {
        double ref[6];
        ft_reference(m1, w1, s, e1, 2, ref);
        cr_assert(rel_err(ft1 + 6 * s, ref, 6) < 1e-11, "FT %s: %g", m1->ft[s].name, rel_err(ft1 + 6 * s, ref, 6));
    }

    for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++) {
        rb_model *m2 = load(URDFS[0], true, bases[b]);
        rb_dyn *w2;
        cr_assert_eq(rb_dyn_alloc(m2, &w2, &err), RB_OK);
        cr_assert_eq(m2->n_dofs, n);
        cr_assert_eq(m2->n_ft, nft);
        /* base state from the first model's frame of the new base link */
        size_t fbase = (size_t)rb_model_frame_index(m1, bases[b]);
        const rb_body *b2 = &m2->bodies[0];
        cr_assert_str_eq(b2->name, bases[b]);
        cr_assert_eq(rb_model_frame_index(m2, bases[b]) >= 0, true);
        rb_xform X;
        double v[6], a[6];
        rb_dyn_frame_pose(m1, w1, fbase, &X, NULL);
        rb_dyn_frame_velocity(m1, w1, fbase, RB_DYN_BODY, v, NULL);
        rb_dyn_frame_acceleration(m1, w1, fbase, RB_DYN_BODY, a, NULL);
        /* the new base body's frame is the link frame (a root is never reversed) */
        const rb_frame *lf = &m2->frames[rb_model_frame_index(m2, bases[b])];
        cr_assert_eq(lf->body, 0);
        cr_assert(rel_err(lf->X_body.p, (double[3]){0, 0, 0}, 3) < 1e-15);
        memcpy(q2, X.p, 3 * sizeof *q2);
        quat_from_m3(X.R, q2 + 3);
        memcpy(nu2, v, sizeof v);
        memcpy(a2, a, sizeof a);
        for (size_t k = 0; k < n; k++) { /* joints by name */
            long d = rb_model_dof_index(m1, m2->dof_names[k]);
            cr_assert(d >= 0);
            q2[7 + k] = q1[7 + (size_t)d], nu2[6 + k] = nu1[6 + (size_t)d], a2[6 + k] = a1[6 + (size_t)d];
        }
        /* the old base wrench as an external wrench on root_link (BODY: the old base frame) */
        rb_ext_wrench e2[3];
        for (int k = 0; k < 2; k++) {
            e2[k] = e1[k];
            e2[k].frame = (int)rb_model_frame_index(m2, m1->frames[e1[k].frame].name);
        }
        e2[2].frame = (int)rb_model_frame_index(m2, "root_link");
        e2[2].rep = RB_DYN_BODY;
        memcpy(e2[2].w, t1, 6 * sizeof *t1);
        cr_assert_eq(rb_dyn_rnea(m2, w2, q2, nu2, a2, e2, 3, t2, &err), RB_OK);
        cr_assert(max_abs(t2, 6) < 1e-10 * fmax(1, max_abs(t1, nv)), "base %s: new base wrench %g", bases[b],
                  max_abs(t2, 6));
        for (size_t k = 0; k < n; k++) {
            long d = rb_model_dof_index(m1, m2->dof_names[k]);
            cr_assert(fabs(t2[6 + k] - t1[6 + (size_t)d]) < 1e-10 * fmax(1, max_abs(t1, nv)), "base %s: joint %s",
                      bases[b], m2->dof_names[k]);
        }
        cr_assert_eq(rb_dyn_ft_wrenches(m2, w2, ft2, &err), RB_OK, "%s", err.msg);
        for (size_t s = 0; s < nft; s++) {
            long s1 = rb_model_ft_index(m1, m2->ft[s].name);
            cr_assert(s1 >= 0);
            double e = rel_err(ft2 + 6 * s, ft1 + 6 * s1, 6);
            cr_assert(e < 1e-10, "base %s: FT %s: %g", bases[b], m2->ft[s].name, e);
        }
        cr_assert_eq(rb_dyn_kinematics(m2, w2, q2, nu2, a2, &err), RB_OK);
        for (size_t s = 0; s < nft; s++) {
            double ref[6];
            ft_reference(m2, w2, s, e2, 3, ref);
            cr_assert(rel_err(ft2 + 6 * s, ref, 6) < 1e-10, "base %s: FT %s against Newton-Euler", bases[b],
                      m2->ft[s].name);
        }
        rb_dyn_free(w2);
        rb_model_free(m2);
    }
    free(q1), free(nu1), free(a1), free(t1), free(q2), free(nu2), free(a2), free(t2), free(ft1), free(ft2);
    rb_dyn_free(w1);
    rb_model_free(m1);
}
