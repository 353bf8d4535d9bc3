/* lib/dynamics: physics along trajectories (energy balance with RK4 + ABA), invariance to the choice of the
 * base link, constrained forward dynamics with rigid contacts, and no allocation in any algorithm call. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/valgrind.h>

#include "alloc_count.h"
#include "dyn_support.h"
#include "roboest/dynamics.h"

/* ---- models ------------------------------------------------------------------------------------------ */

static rb_xform random_offset(trng *r, double x, double y, double z, double noise)
{
    rb_xform X;
    trng_rotation(r, X.R);
    X.p[0] = x + trng_uniform(r, -noise, noise);
    X.p[1] = y + trng_uniform(r, -noise, noise);
    X.p[2] = z + trng_uniform(r, -noise, noise);
    return X;
}

/* A pelvis with two 6-joint legs (random axes and link poses) ending in a foot on a fixed FT-sensor joint
 * (left) or directly (right), soles "l_sole" / "r_sole", and a 3-joint arm with a "hand" frame. */
static rb_model *biped(trng *r, bool floating)
{
    rb_model *m = NULL;
    rb_err err;
    double pi[10], axis[3];
    char name[32];
    trng_inertia(r, pi);
    pi[0] *= 3; /* heavier pelvis: scale every parameter to stay physical */
    for (int k = 1; k < 10; k++)
        pi[k] *= 3;
    cr_assert_eq(rb_model_begin(&m, "biped", "pelvis", pi, floating, &err), RB_OK);
    for (int leg = 0; leg < 2; leg++) {
        int parent = 0;
        for (int j = 0; j < 6; j++) {
            rb_xform X = random_offset(r, 0, j == 0 ? (leg ? -0.1 : 0.1) : 0, -0.15, 0.05);
            trng_unit(r, axis);
            trng_inertia(r, pi);
            snprintf(name, sizeof name, "%c%d", leg ? 'r' : 'l', j + 1);
            cr_assert_eq(rb_model_add_body(m, name, parent, RB_JOINT_REVOLUTE, name + 0, &X, axis, pi, &err), RB_OK,
                         "%s", err.msg);
            parent = (int)m->n_bodies - 1;
        }
        rb_xform S = random_offset(r, 0.05, 0, -0.05, 0.02);
        if (leg == 0) {
            rb_xform X = random_offset(r, 0, 0, -0.03, 0.01);
            trng_inertia(r, pi);
            cr_assert_eq(rb_model_add_body(m, "l_foot", parent, RB_JOINT_FIXED, "l_ft", &X, NULL, pi, &err), RB_OK);
            parent = (int)m->n_bodies - 1;
        }
        cr_assert_eq(rb_model_add_frame(m, leg ? "r_sole" : "l_sole", parent, &S, RB_FRAME_USER, &err), RB_OK);
    }
    int parent = 0;
    for (int j = 0; j < 3; j++) {
        rb_xform X = random_offset(r, 0, 0, 0.2, 0.05);
        trng_unit(r, axis);
        trng_inertia(r, pi);
        snprintf(name, sizeof name, "a%d", j + 1);
        cr_assert_eq(rb_model_add_body(m, name, parent, RB_JOINT_REVOLUTE, name, &X, axis, pi, &err), RB_OK);
        parent = (int)m->n_bodies - 1;
    }
    rb_xform H = random_offset(r, 0, 0, 0.1, 0.02);
    cr_assert_eq(rb_model_add_frame(m, "hand", parent, &H, RB_FRAME_USER, &err), RB_OK);
    cr_assert_eq(rb_model_end(m, &err), RB_OK, "%s", err.msg);
    int foot = (int)rb_model_body_index(m, "l_foot"), ff = (int)rb_model_frame_index(m, "l_foot");
    cr_assert_eq(rb_model_add_ft_sensor(m, "l_ft", foot, ff, ff, 1, &err), RB_OK, "%s", err.msg);
    return m;
}

/* ---- energy ------------------------------------------------------------------------------------------ */

/* x = [q; nu]; dx = [q_dot; ABA] (floating base: p_dot = R v_B, quat_dot = 1/2 quat (x) (0, w_B)). */
static void deriv(const rb_model *m, rb_dyn *ws, const double *x, const double *tau, double *dx)
{
    size_t nq = m->nq, n = m->n_dofs;
    const double *q = x, *nu = x + nq;
    if (m->floating) {
        double R[9];
        const double *qt = q + 3, *w = nu + 3;
        rb_m3_from_quat(qt, R);
        rb_m3_mul_v(R, nu, dx);
        dx[3] = 0.5 * (-qt[1] * w[0] - qt[2] * w[1] - qt[3] * w[2]);
        dx[4] = 0.5 * (qt[0] * w[0] + qt[2] * w[2] - qt[3] * w[1]);
        dx[5] = 0.5 * (qt[0] * w[1] - qt[1] * w[2] + qt[3] * w[0]);
        dx[6] = 0.5 * (qt[0] * w[2] + qt[1] * w[1] - qt[2] * w[0]);
        memcpy(dx + 7, nu + 6, n * sizeof *dx);
    } else {
        memcpy(dx, nu, n * sizeof *dx);
    }
    rb_err err;
    cr_assert_eq(rb_dyn_aba(m, ws, q, nu, tau, NULL, 0, dx + nq, &err), RB_OK, "%s", err.msg);
}

/* Power balance along a trajectory: with constant joint torques tau (base wrench 0), integrated by RK4 with
 * ABA (h = 1 ms, 0.3 s), T(t_N) - T(0) = int nu^T (tau - g(q)) dt (Simpson), T from the body twists. */
Test(dynamics_sim, kinetic_energy_rate_is_the_power_of_tau_and_gravity)
{
    for (int fb = 0; fb < 2; fb++)
        for (uint64_t seed = 1; seed <= 2; seed++) {
            trng r = {seed * 13 + (uint64_t)fb};
            rb_model *m = random_tree(&r, 9, fb);
            rb_dyn *ws;
            rb_err err;
            cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
            size_t nq = m->nq, nv = m->nv, nx = nq + nv;
            enum { N = 300 };
            const double h = 1e-3;
            double *x = calloc(nx, sizeof *x), *xs = calloc(nx, sizeof *xs), *k[4], *tau = calloc(nv, sizeof *tau),
                   *g = calloc(nv, sizeof *g), P[N + 1], T[N + 1];
            for (int s = 0; s < 4; s++)
                k[s] = calloc(nx, sizeof(double));
            random_state(&r, m, x, x + nq, 2.0, NULL, 0);
            random_vector(&r, tau + (fb ? 6 : 0), m->n_dofs, -5.0, 5.0);
            for (int step = 0; step <= N; step++) {
                double *q = x, *nu = x + nq, p = 0.0;
                cr_assert_eq(rb_dyn_gravity_forces(m, ws, q, g, &err), RB_OK);
                for (size_t i = 0; i < nv; i++)
                    p += nu[i] * (tau[i] - g[i]);
                P[step] = p;
                cr_assert_eq(rb_dyn_kinematics(m, ws, q, nu, NULL, &err), RB_OK);
                cr_assert_eq(rb_dyn_kinetic_energy(m, ws, &T[step], &err), RB_OK);
                if (step == N)
                    break;
                static const double c[4] = {0.0, 0.5, 0.5, 1.0};
                for (int s = 0; s < 4; s++) {
                    for (size_t i = 0; i < nx; i++)
                        xs[i] = x[i] + (s ? c[s] * h * k[s - 1][i] : 0.0);
                    deriv(m, ws, xs, tau, k[s]);
                }
                for (size_t i = 0; i < nx; i++)
                    x[i] += h / 6.0 * (k[0][i] + 2 * k[1][i] + 2 * k[2][i] + k[3][i]);
                if (fb) {
                    double n = sqrt(x[3] * x[3] + x[4] * x[4] + x[5] * x[5] + x[6] * x[6]);
                    for (int i = 3; i < 7; i++)
                        x[i] /= n;
                }
            }
            double W = 0.0, Wabs = 0.0;
            for (int s = 0; s <= N; s++) {
                double wgt = (s == 0 || s == N) ? 1.0 : (s % 2 ? 4.0 : 2.0);
                W += wgt * P[s] * h / 3.0;
                Wabs += wgt * fabs(P[s]) * h / 3.0;
            }
            double e = fabs(T[N] - T[0] - W) / fmax(1.0, Wabs);
            /* RK4 and Simpson: O(h^4); observed ~6e-10 */
            cr_assert(e < 1e-7, "energy balance (floating %d, seed %d): dT %g, work %g, error %g", fb, (int)seed,
                      T[N] - T[0], W, e);
            cr_assert(fabs(T[N] - T[0]) > 1e-3 * Wabs, "the trajectory does exchange energy");
            for (int s = 0; s < 4; s++)
                free(k[s]);
            free(x), free(xs), free(tau), free(g);
            rb_dyn_free(ws);
            rb_model_free(m);
        }
}

/* ---- base-link invariance ---------------------------------------------------------------------------- */

/* The same physical tree as m1 rooted at body 1 instead of body 0: body 1 becomes the base; body 0 hangs
 * from it through the reversed joint, its body frame the joint frame J (b0_X_J = X_parent of body 1) and
 * its axis negated, so B_X_J(q) = Rot(-k, q) = (X_1 Rot(k, q))^-1 J-side; its LINK frame "b0" is kept at
 * the old origin. Bodies keep their index except 0 <-> 1; the dofs keep their order. */
static rb_model *reroot(const rb_model *m1)
{
    rb_model *m = NULL;
    rb_err err;
    const rb_body *A = &m1->bodies[0], *B = &m1->bodies[1];
    rb_xform X1inv, I;
    rb_xform_inverse(&B->X_parent, &X1inv);
    rb_xform_identity(&I);
    double piA[10], axis[3] = {-B->axis[0], -B->axis[1], -B->axis[2]};
    rb_inertia_to_parent(&X1inv, A->inertia, piA);
    cr_assert_eq(rb_model_begin(&m, "rerooted", "b1", B->inertia, true, &err), RB_OK);
    cr_assert_eq(
        rb_model_add_body(m, "b0", 0, B->type, B->joint_name, &I, B->type == RB_JOINT_FIXED ? NULL : axis, piA, &err),
        RB_OK, "%s", err.msg);
    for (size_t i = 2; i < m1->n_bodies; i++) {
        const rb_body *b = &m1->bodies[i];
        int p = b->parent == 0 ? 1 : b->parent == 1 ? 0 : b->parent;
        rb_xform X = b->X_parent;
        if (b->parent == 0)
            rb_xform_compose(&X1inv, &b->X_parent, &X);
        cr_assert_eq(rb_model_add_body(m, b->name, p, b->type, b->joint_name, &X,
                                       b->type == RB_JOINT_FIXED ? NULL : b->axis, b->inertia, &err),
                     RB_OK, "%s", err.msg);
    }
    for (size_t f = 0; f < m1->n_frames; f++) {
        const rb_frame *fr = &m1->frames[f];
        if (fr->kind == RB_FRAME_LINK && fr->body != 0)
            continue;
        int body = fr->body == 0 ? 1 : fr->body == 1 ? 0 : fr->body;
        rb_xform X = fr->X_body;
        if (fr->body == 0)
            rb_xform_compose(&X1inv, &fr->X_body, &X);
        cr_assert_eq(rb_model_add_frame(m, fr->name, body, &X, fr->kind, &err), RB_OK, "%s", err.msg);
    }
    cr_assert_eq(rb_model_end(m, &err), RB_OK, "%s", err.msg);
    return m;
}

static size_t frame_of(const rb_model *m, const char *name)
{
    long f = rb_model_frame_index(m, name);
    cr_assert(f >= 0, "frame %s", name);
    return (size_t)f;
}

/* Same system rooted at another link: with the base motion carried over (pose, body-fixed twist and its
 * derivative of the new base), RNEA gives the same joint torques once the old base's wrench is applied as an
 * external wrench (and a zero new base wrench); ABA gives the same joint accelerations; energy, CoM and
 * centroidal momentum agree. Relative tolerance 1e-10 (observed ~1e-14). */
Test(dynamics_sim, results_do_not_depend_on_the_base_link)
{
    rb_err err;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        trng r = {seed * 271};
        rb_model *m1 = random_tree(&r, 10, true), *m2 = reroot(m1);
        rb_dyn *w1, *w2;
        cr_assert_eq(rb_dyn_alloc(m1, &w1, &err), RB_OK);
        cr_assert_eq(rb_dyn_alloc(m2, &w2, &err), RB_OK);
        size_t nq = m1->nq, nv = m1->nv;
        cr_assert_eq(m2->nv, nv);
        for (size_t k = 0; k < m1->n_dofs; k++)
            cr_assert_str_eq(m1->dof_names[k], m2->dof_names[k]);
        double *q1 = calloc(nq, sizeof(double)), *q2 = calloc(nq, sizeof(double)), *nu1 = calloc(nv, sizeof(double)),
               *nu2 = calloc(nv, sizeof(double)), *a1 = calloc(nv, sizeof(double)), *a2 = calloc(nv, sizeof(double)),
               *t1 = calloc(nv, sizeof(double)), *t2 = calloc(nv, sizeof(double));
        random_state(&r, m1, q1, nu1, 3.0, a1, 20.0);
        /* the new base's state from the old model's kinematics */
        size_t fb1 = frame_of(m1, "b1");
        cr_assert_eq(rb_dyn_kinematics(m1, w1, q1, nu1, a1, &err), RB_OK);
        const rb_xform *XB = rb_dyn_body_pose(w1, 1);
        memcpy(q2, XB->p, 3 * sizeof *q2);
        quat_from_m3(XB->R, q2 + 3);
        memcpy(q2 + 7, q1 + 7, m1->n_dofs * sizeof *q2);
        memcpy(nu2, rb_dyn_body_velocity(w1, 1), 6 * sizeof *nu2);
        memcpy(nu2 + 6, nu1 + 6, m1->n_dofs * sizeof *nu2);
        cr_assert_eq(rb_dyn_frame_acceleration(m1, w1, fb1, RB_DYN_BODY, a2, &err), RB_OK);
        memcpy(a2 + 6, a1 + 6, m1->n_dofs * sizeof *a2);

        /* the same frames in the same world poses */
        cr_assert_eq(rb_dyn_kinematics(m2, w2, q2, nu2, a2, &err), RB_OK);
        for (size_t f = 0; f < m1->n_frames; f++) {
            rb_xform X1, X2;
            size_t f2 = frame_of(m2, m1->frames[f].name);
            double v1[6], v2[6];
            rb_dyn_frame_pose(m1, w1, f, &X1, NULL);
            rb_dyn_frame_pose(m2, w2, f2, &X2, NULL);
            cr_assert(rel_err(X2.R, X1.R, 9) < 1e-12 && rel_err(X2.p, X1.p, 3) < 1e-12, "frame %s pose",
                      m1->frames[f].name);
            rb_dyn_frame_proper_acceleration(m1, w1, f, RB_DYN_BODY, v1, NULL);
            rb_dyn_frame_proper_acceleration(m2, w2, f2, RB_DYN_BODY, v2, NULL);
            cr_assert(rel_err(v2, v1, 6) < 1e-10, "frame %s acceleration", m1->frames[f].name);
        }
        double T1, T2, h1[6], h2[6];
        rb_dyn_kinetic_energy(m1, w1, &T1, NULL);
        rb_dyn_kinetic_energy(m2, w2, &T2, NULL);
        cr_assert(fabs(T1 - T2) < 1e-10 * fmax(1, T1), "kinetic energy");
        rb_dyn_centroidal_momentum(m1, w1, h1, NULL, NULL);
        rb_dyn_centroidal_momentum(m2, w2, h2, NULL, NULL);
        cr_assert(rel_err(h2, h1, 6) < 1e-10, "centroidal momentum");

        /* RNEA: old base wrench as an external wrench on the old base link, plus random wrenches */
        rb_ext_wrench e1[3], e2[4];
        for (int k = 0; k < 3; k++) {
            e1[k].frame = (int)trng_index(&r, m1->n_frames);
            e1[k].rep = (rb_dyn_rep)trng_index(&r, 3);
            random_vector(&r, e1[k].w, 6, -20, 20);
            e2[k] = e1[k];
            e2[k].frame = (int)frame_of(m2, m1->frames[e1[k].frame].name);
        }
        cr_assert_eq(rb_dyn_rnea(m1, w1, q1, nu1, a1, e1, 3, t1, &err), RB_OK);
        e2[3].frame = (int)frame_of(m2, "b0");
        e2[3].rep = RB_DYN_BODY;
        memcpy(e2[3].w, t1, 6 * sizeof *t1);
        cr_assert_eq(rb_dyn_rnea(m2, w2, q2, nu2, a2, e2, 4, t2, &err), RB_OK, "%s", err.msg);
        double zero[6] = {0};
        cr_assert(rel_err(t2, zero, 6) / fmax(1.0, max_abs(t1, 6)) < 1e-10, "new base wrench is zero: %g",
                  max_abs(t2, 6));
        double e = rel_err(t2 + 6, t1 + 6, m1->n_dofs);
        cr_assert(e < 1e-10, "joint torques (seed %d): %g", (int)seed, e);

        /* ABA: free-floating, same joint torques -> same joint accelerations and base motion */
        random_vector(&r, t1 + 6, m1->n_dofs, -20, 20);
        memset(t1, 0, 6 * sizeof *t1);
        memcpy(t2, t1, nv * sizeof *t2);
        cr_assert_eq(rb_dyn_aba(m1, w1, q1, nu1, t1, e1, 3, a1, &err), RB_OK);
        cr_assert_eq(rb_dyn_aba(m2, w2, q2, nu2, t2, e2, 3, a2, &err), RB_OK);
        e = rel_err(a2 + 6, a1 + 6, m1->n_dofs);
        cr_assert(e < 1e-10, "joint accelerations (seed %d): %g", (int)seed, e);
        double aB[6];
        cr_assert_eq(rb_dyn_kinematics(m1, w1, q1, nu1, a1, &err), RB_OK);
        rb_dyn_frame_acceleration(m1, w1, fb1, RB_DYN_BODY, aB, NULL);
        cr_assert(rel_err(a2, aB, 6) < 1e-10, "new base acceleration");

        free(q1), free(q2), free(nu1), free(nu2), free(a1), free(a2), free(t1), free(t2);
        rb_dyn_free(w1), rb_dyn_free(w2);
        rb_model_free(m1), rb_model_free(m2);
    }
}

/* ---- contacts ---------------------------------------------------------------------------------------- */

/* log of a rotation (axis * angle) through the quaternion. */
static void rot_log(const double R[9], double w[3])
{
    double q[4];
    quat_from_m3(R, q);
    if (q[0] < 0)
        for (int k = 0; k < 4; k++)
            q[k] = -q[k];
    double s = sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3]), t = 2.0 * atan2(s, q[0]);
    for (int k = 0; k < 3; k++)
        w[k] = s > 1e-300 ? q[1 + k] * t / s : 2.0 * q[1 + k];
}

/* Rigid contacts (two 6D soles and a 3D hand; a 3D hand on a fixed-base arm): the contact frames do not
 * accelerate (MIXED acceleration below 1e-9), the result satisfies the unconstrained dynamics with the
 * contact wrenches as external wrenches (RNEA and ABA), and with Baumgarte gains the contact acceleration
 * is -kd v - kp e. */
Test(dynamics_sim, constrained_forward_dynamics)
{
    rb_err err;
    for (int fb = 0; fb < 2; fb++)
        for (uint64_t seed = 1; seed <= 4; seed++) {
            trng r = {seed * 5 + (uint64_t)fb};
            rb_model *m = biped(&r, fb);
            rb_dyn *ws;
            cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
            size_t nq = m->nq, nv = m->nv;
            rb_contact ct[3] = {{(int)frame_of(m, "l_sole"), 6, 0, 0, {{0}, {0}}},
                                {(int)frame_of(m, "r_sole"), 6, 0, 0, {{0}, {0}}},
                                {(int)frame_of(m, "hand"), 3, 0, 0, {{0}, {0}}}};
            /* fixed base: only the hand (the legs hang from the fixed pelvis) */
            rb_contact *c = fb ? ct : ct + 2;
            size_t nc = fb ? 3 : 1, rows = fb ? 15 : 3;
            double *q = calloc(nq, sizeof(double)), *nu = calloc(nv, sizeof(double)), *tau = calloc(nv, sizeof(double)),
                   *nud = calloc(nv, sizeof(double)), *nud2 = calloc(nv, sizeof(double)),
                   *t2 = calloc(nv, sizeof(double)), lam[15];
            rb_ext_wrench ext[5];
            for (int trial = 0; trial < 4; trial++) {
                random_state(&r, m, q, nu, 2.0, NULL, 0);
                random_vector(&r, tau + (fb ? 6 : 0), m->n_dofs, -20, 20);
                ext[0].frame = (int)trng_index(&r, m->n_frames);
                ext[0].rep = (rb_dyn_rep)trng_index(&r, 3);
                random_vector(&r, ext[0].w, 6, -10, 10);
                bool baumgarte = trial >= 2;
                for (size_t k = 0; k < nc; k++) {
                    c[k].kp = baumgarte ? 100.0 : 0.0, c[k].kd = baumgarte ? 20.0 : 0.0;
                    cr_assert_eq(rb_dyn_kinematics(m, ws, q, NULL, NULL, &err), RB_OK);
                    rb_dyn_frame_pose(m, ws, (size_t)c[k].frame, &c[k].ref, NULL);
                    double dR[9], R[9], ax[3];
                    trng_unit(&r, ax);
                    /* trial 3: a reference turned by nearly pi (the logarithm's branch near pi) */
                    rb_m3_from_axis_angle(ax, trial == 3 ? trng_uniform(&r, 2.9, 3.1) : trng_uniform(&r, 0, 0.2), dR);
                    rb_m3_mul(dR, c[k].ref.R, R);
                    memcpy(c[k].ref.R, R, sizeof R);
                    for (int i = 0; i < 3; i++)
                        c[k].ref.p[i] += trng_uniform(&r, -0.02, 0.02);
                }
                cr_assert_eq(rb_dyn_fd_contact(m, ws, q, nu, tau, ext, 1, c, nc, nud, lam, &err), RB_OK, "%s", err.msg);

                /* the state left behind is (q, nu, nu_dot); recomputed, the contacts' accelerations are as asked */
                cr_assert_eq(rb_dyn_kinematics(m, ws, q, nu, nud, &err), RB_OK);
                size_t r0 = 0;
                for (size_t k = 0; k < nc; k++) {
                    double a[6], v[6], e6[6] = {0};
                    rb_xform X;
                    rb_dyn_frame_acceleration(m, ws, (size_t)c[k].frame, RB_DYN_MIXED, a, NULL);
                    rb_dyn_frame_velocity(m, ws, (size_t)c[k].frame, RB_DYN_MIXED, v, NULL);
                    rb_dyn_frame_pose(m, ws, (size_t)c[k].frame, &X, NULL);
                    if (baumgarte) {
                        double RrT[9], Re[9];
                        for (int i = 0; i < 3; i++)
                            for (int j = 0; j < 3; j++)
                                RrT[3 * i + j] = c[k].ref.R[3 * j + i];
                        rb_m3_mul(X.R, RrT, Re);
                        for (int i = 0; i < 3; i++)
                            e6[i] = X.p[i] - c[k].ref.p[i];
                        rot_log(Re, e6 + 3);
                    }
                    for (int i = 0; i < c[k].dim; i++) {
                        double want = -c[k].kd * v[i] - c[k].kp * e6[i];
                        cr_assert(fabs(a[i] - want) < 1e-9, "contact %zu row %d: acceleration %g, want %g", k, i, a[i],
                                  want);
                    }
                    /* the contact wrenches as external wrenches (MIXED) */
                    ext[1 + k].frame = c[k].frame;
                    ext[1 + k].rep = RB_DYN_MIXED;
                    memset(ext[1 + k].w, 0, sizeof ext[1 + k].w);
                    memcpy(ext[1 + k].w, lam + r0, (size_t)c[k].dim * sizeof *lam);
                    r0 += (size_t)c[k].dim;
                }
                cr_assert_eq(r0, rows);
                cr_assert_eq(rb_dyn_rnea(m, ws, q, nu, nud, ext, 1 + nc, t2, &err), RB_OK);
                double e = rel_err(t2, tau, nv);
                cr_assert(e < 1e-10, "RNEA with the contact wrenches gives tau back: %g", e);
                cr_assert_eq(rb_dyn_aba(m, ws, q, nu, tau, ext, 1 + nc, nud2, &err), RB_OK);
                e = rel_err(nud2, nud, nv);
                cr_assert(e < 1e-10, "ABA with the contact wrenches gives nu_dot: %g", e);
                cr_assert(max_abs(lam, rows) > 1.0, "the contacts carry load");
            }
            free(q), free(nu), free(tau), free(nud), free(nud2), free(t2);
            rb_dyn_free(ws);
            rb_model_free(m);
        }
}

/* ---- no allocation --------------------------------------------------------------------------------------
 * rb_malloc calls are counted by rb_alloc_fail_after, the C library's by alloc_count.h (so OpenBLAS and
 * LAPACK, called through their _work entry points, are covered; under valgrind only rb_malloc is). */

Test(dynamics_sim, no_allocation_in_any_algorithm_call)
{
    rb_err err;
    test_alloc_count_init();
    /* the counters do count: one rb_malloc, one malloc */
    void *(*volatile libc_malloc)(size_t) = malloc;
    rb_alloc_fail_after(-1);
    test_alloc_count = 0;
    test_alloc_counting = 1;
    void *p1 = rb_malloc(16), *p2 = libc_malloc(16);
    test_alloc_counting = 0;
    free(p2);
    rb_free(p1);
    cr_assert_eq(rb_alloc_fail_after(-1), 1);
    bool libc_counted = test_alloc_count_works();
    if (libc_counted)
        cr_assert_eq(test_alloc_count, 2, "rb_malloc's and malloc's allocations counted: %ld", test_alloc_count);
    for (int fb = 0; fb < 2; fb++) {
        trng r = {31337 + (uint64_t)fb};
        rb_model *m = biped(&r, fb);
        rb_dyn *ws;
        cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
        size_t nq = m->nq, nv = m->nv, nb = m->n_bodies;
        double *q = calloc(nq, sizeof(double)), *nu = calloc(nv, sizeof(double)), *nud = calloc(nv, sizeof(double)),
               *tau = calloc(nv, sizeof(double)), *out = calloc(nv, sizeof(double)), lam[15], v6[6], c3[3], ft[6];
        rb_mat M, J, Jc, A, Y;
        cr_assert_eq(rb_mat_alloc(&M, nv, nv, &err), RB_OK);
        cr_assert_eq(rb_mat_alloc(&J, 6, nv, &err), RB_OK);
        cr_assert_eq(rb_mat_alloc(&Jc, 3, nv, &err), RB_OK);
        cr_assert_eq(rb_mat_alloc(&A, 6, nv, &err), RB_OK);
        cr_assert_eq(rb_mat_alloc(&Y, nv, 10 * nb, &err), RB_OK);
        rb_contact ct[3] = {{(int)frame_of(m, "l_sole"), 6, 10, 5, {{0}, {0}}},
                            {(int)frame_of(m, "r_sole"), 6, 0, 0, {{0}, {0}}},
                            {(int)frame_of(m, "hand"), 3, 0, 0, {{0}, {0}}}};
        rb_xform_identity(&ct[0].ref);
        rb_contact *c = fb ? ct : ct + 2;
        size_t nc = fb ? 3 : 1;
        rb_ext_wrench ext = {(int)frame_of(m, "hand"), RB_DYN_MIXED, {1, 2, 3, 4, 5, 6}};
        size_t hand = frame_of(m, "hand");
        random_state(&r, m, q, nu, 2.0, nud, 10.0);
        random_vector(&r, tau, nv, -10, 10);

        enum { CALLS = 10000 };
        const char *names[] = {"kinematics", "frame queries", "jacobian",   "com jacobian",    "centroidal",
                               "rnea",       "bias",          "gravity",    "joint/ft wrench", "mass matrix",
                               "aba",        "fd_cholesky",   "fd_contact", "regressor",       "integrate"};
        for (int alg = 0; alg < 15; alg++) {
            rb_alloc_fail_after(-1);
            /* one warm-up call outside the count: OpenBLAS sets up its buffers on first use */
            for (int k = -1; k < CALLS; k++) {
                if (k == 0) {
                    rb_alloc_fail_after(-1);
                    test_alloc_count = 0;
                    test_alloc_counting = 1;
                }
                int rc = RB_OK;
                q[nq - 1] += 1e-6; /* a different state every call */
                switch (alg) {
                case 0: rc = rb_dyn_kinematics(m, ws, q, nu, nud, &err); break;
                case 1:
                    rc = rb_dyn_frame_velocity(m, ws, hand, RB_DYN_MIXED, v6, &err);
                    rc |= rb_dyn_frame_acceleration(m, ws, hand, RB_DYN_BODY, v6, &err);
                    rc |= rb_dyn_frame_jdot_nu(m, ws, hand, RB_DYN_INERTIAL, v6, &err);
                    rc |= rb_dyn_frame_proper_acceleration(m, ws, hand, RB_DYN_BODY, v6, &err);
                    break;
                case 2: rc = rb_dyn_frame_jacobian(m, ws, hand, RB_DYN_BODY, &J, &err); break;
                case 3: rc = rb_dyn_com_jacobian(m, ws, &Jc, c3, &err); break;
                case 4:
                    rc = rb_dyn_centroidal_matrix(m, ws, &A, c3, &err);
                    rc |= rb_dyn_centroidal_momentum(m, ws, v6, c3, &err);
                    break;
                case 5: rc = rb_dyn_rnea(m, ws, q, nu, nud, &ext, 1, out, &err); break;
                case 6: rc = rb_dyn_bias_forces(m, ws, q, nu, out, &err); break;
                case 7: rc = rb_dyn_gravity_forces(m, ws, q, out, &err); break;
                case 8:
                    rc = rb_dyn_joint_wrench(m, ws, 3, v6, &err);
                    rc |= rb_dyn_ft_wrenches(m, ws, ft, &err);
                    break;
                case 9: rc = rb_dyn_mass_matrix(m, ws, q, &M, &err); break;
                case 10: rc = rb_dyn_aba(m, ws, q, nu, tau, &ext, 1, out, &err); break;
                case 11: rc = rb_dyn_fd_cholesky(m, ws, q, nu, tau, &ext, 1, out, &err); break;
                case 12: rc = rb_dyn_fd_contact(m, ws, q, nu, tau, &ext, 1, c, nc, out, lam, &err); break;
                case 13: rc = rb_dyn_regressor(m, ws, q, nu, nud, &Y, &err); break;
                default: rb_dyn_integrate(m, q, nu, 1e-9, q); break;
                }
                if (rc != RB_OK) {
                    test_alloc_counting = 0;
                    cr_assert_fail("%s: %s", names[alg], err.msg);
                }
            }
            test_alloc_counting = 0;
            long made = rb_alloc_fail_after(-1);
            cr_assert_eq(made, 0, "%s: %ld rb_malloc calls in %d calls", names[alg], made, CALLS);
            if (libc_counted)
                cr_assert_eq(test_alloc_count, 0, "%s: %ld C-library allocations in %d calls", names[alg],
                             test_alloc_count, CALLS);
        }
        free(q), free(nu), free(nud), free(tau), free(out);
        rb_mat_free(&M), rb_mat_free(&J), rb_mat_free(&Jc), rb_mat_free(&A), rb_mat_free(&Y);
        rb_dyn_free(ws);
        rb_model_free(m);
    }
}
