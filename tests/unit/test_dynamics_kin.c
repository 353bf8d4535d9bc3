/* lib/dynamics: kinematics, Jacobians, accelerations, centre of mass and centroidal momentum against
 * central finite differences of forward kinematics and against body-by-body sums, on random trees
 * (fixed and floating base) at random states. Floating-base positions are perturbed along the body-fixed
 * twist with the exponential map (rb_dyn_integrate). Relative errors: max |a - b| / max(1, max |b|). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dyn_support.h"
#include "roboest/dynamics.h"

static const double EPS = 1e-6;       /* central-difference step (rad, m, s) */
static const double TOL_FDIFF = 1e-8; /* truncation ~EPS^2, rounding ~1e-16 / EPS: observed ~1e-10 */
static const double TOL_ID = 1e-12;   /* identities (observed: ~1e-15) */

typedef struct kfix {
    rb_model *m;
    rb_dyn *ws;
    double *q, *nu, *nud, *qp, *qm, *nup, *num;
    rb_mat J;
} kfix;

static kfix ksetup(trng *r, size_t nb, bool floating)
{
    kfix f = {0};
    rb_err err;
    f.m = random_tree(r, nb, floating);
    cr_assert_not_null(f.m);
    cr_assert_eq(rb_dyn_alloc(f.m, &f.ws, &err), RB_OK, "%s", err.msg);
    size_t nq = f.m->nq + 1, nv = f.m->nv + 1;
    f.q = calloc(nq, sizeof(double)), f.qp = calloc(nq, sizeof(double)), f.qm = calloc(nq, sizeof(double));
    f.nu = calloc(nv, sizeof(double)), f.nud = calloc(nv, sizeof(double));
    f.nup = calloc(nv, sizeof(double)), f.num = calloc(nv, sizeof(double));
    cr_assert_eq(rb_mat_alloc(&f.J, 6, f.m->nv, &err), RB_OK);
    return f;
}

static void kteardown(kfix *f)
{
    rb_dyn_free(f->ws);
    rb_model_free(f->m);
    free(f->q), free(f->qp), free(f->qm), free(f->nu), free(f->nud), free(f->nup), free(f->num);
    rb_mat_free(&f->J);
}

static const rb_dyn_rep REPS[3] = {RB_DYN_BODY, RB_DYN_MIXED, RB_DYN_INERTIAL};

/* Frame Jacobians (three representations) against central differences of the frame poses. */
Test(dynamics_kin, frame_jacobians_match_finite_differences)
{
    rb_err err;
    for (int fb = 0; fb < 2; fb++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            trng r = {seed * 31 + (uint64_t)fb};
            kfix f = ksetup(&r, 12, fb);
            size_t nv = f.m->nv, nf = f.m->n_frames;
            rb_xform *X0 = calloc(nf, sizeof *X0), *Xp = calloc(nf * nv, sizeof *Xp), *Xm = calloc(nf * nv, sizeof *Xm);
            random_state(&r, f.m, f.q, NULL, 0, NULL, 0);
            for (size_t k = 0; k < nv; k++) {
                perturb(f.m, f.q, k, EPS, f.qp);
                perturb(f.m, f.q, k, -EPS, f.qm);
                for (size_t i = 0; i < nf; i++) {
                    fk_frame_pose(f.m, f.ws, f.qp, i, &Xp[i * nv + k]);
                    fk_frame_pose(f.m, f.ws, f.qm, i, &Xm[i * nv + k]);
                }
            }
            cr_assert_eq(rb_dyn_kinematics(f.m, f.ws, f.q, NULL, NULL, &err), RB_OK);
            for (size_t i = 0; i < nf; i++)
                rb_dyn_frame_pose(f.m, f.ws, i, &X0[i], NULL);
            for (size_t i = 0; i < nf; i++)
                for (int rp = 0; rp < 3; rp++) {
                    cr_assert_eq(rb_dyn_frame_jacobian(f.m, f.ws, i, REPS[rp], &f.J, &err), RB_OK, "%s", err.msg);
                    for (size_t k = 0; k < nv; k++) {
                        double col[6], ref[6];
                        pose_rate(&Xm[i * nv + k], &Xp[i * nv + k], 2 * EPS, REPS[rp], &X0[i], ref);
                        for (int rr = 0; rr < 6; rr++)
                            col[rr] = *rb_mat_at(&f.J, (size_t)rr, k);
                        double e = rel_err(col, ref, 6);
                        cr_assert(e < TOL_FDIFF, "J frame %s rep %d column %zu (floating %d): %g", f.m->frames[i].name,
                                  rp, k, fb, e);
                    }
                }
            free(X0), free(Xp), free(Xm);
            kteardown(&f);
        }
}

/* Velocities are J nu; d/dt (J nu) (the frame acceleration) and J_dot nu match central differences of
 * the velocity along q (+) t nu, nu + t nu_dot; acceleration = J nu_dot + J_dot nu. */
Test(dynamics_kin, frame_velocities_and_accelerations)
{
    rb_err err;
    for (int fb = 0; fb < 2; fb++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            trng r = {seed * 57 + (uint64_t)fb};
            kfix f = ksetup(&r, 12, fb);
            size_t nv = f.m->nv, nf = f.m->n_frames;
            random_state(&r, f.m, f.q, f.nu, 3.0, f.nud, 20.0);
            double *vp = calloc(nf * 18, sizeof *vp), *vm = calloc(nf * 18, sizeof *vm);
            double *vp0 = calloc(nf * 18, sizeof *vp0), *vm0 = calloc(nf * 18, sizeof *vm0);
            for (int sgn = -1; sgn <= 1; sgn += 2) {
                double *dst = sgn > 0 ? vp : vm, *dst0 = sgn > 0 ? vp0 : vm0;
                rb_dyn_integrate(f.m, f.q, f.nu, sgn * EPS, f.qp);
                for (size_t k = 0; k < nv; k++)
                    f.nup[k] = f.nu[k] + sgn * EPS * f.nud[k];
                cr_assert_eq(rb_dyn_kinematics(f.m, f.ws, f.qp, f.nup, NULL, &err), RB_OK);
                for (size_t i = 0; i < nf; i++)
                    for (int rp = 0; rp < 3; rp++)
                        rb_dyn_frame_velocity(f.m, f.ws, i, REPS[rp], dst + 18 * i + 6 * rp, NULL);
                cr_assert_eq(rb_dyn_kinematics(f.m, f.ws, f.qp, f.nu, NULL, &err), RB_OK);
                for (size_t i = 0; i < nf; i++)
                    for (int rp = 0; rp < 3; rp++)
                        rb_dyn_frame_velocity(f.m, f.ws, i, REPS[rp], dst0 + 18 * i + 6 * rp, NULL);
            }
            cr_assert_eq(rb_dyn_kinematics(f.m, f.ws, f.q, f.nu, f.nud, &err), RB_OK);
            for (size_t i = 0; i < nf; i++)
                for (int rp = 0; rp < 3; rp++) {
                    double v[6], a[6], jdn[6], Jv[6] = {0}, Ja[6] = {0}, ref[6], ref0[6];
                    cr_assert_eq(rb_dyn_frame_velocity(f.m, f.ws, i, REPS[rp], v, &err), RB_OK, "%s", err.msg);
                    cr_assert_eq(rb_dyn_frame_acceleration(f.m, f.ws, i, REPS[rp], a, &err), RB_OK, "%s", err.msg);
                    cr_assert_eq(rb_dyn_frame_jdot_nu(f.m, f.ws, i, REPS[rp], jdn, &err), RB_OK, "%s", err.msg);
                    cr_assert_eq(rb_dyn_frame_jacobian(f.m, f.ws, i, REPS[rp], &f.J, &err), RB_OK);
                    for (int rr = 0; rr < 6; rr++) {
                        for (size_t k = 0; k < nv; k++) {
                            Jv[rr] += *rb_mat_at(&f.J, (size_t)rr, k) * f.nu[k];
                            Ja[rr] += *rb_mat_at(&f.J, (size_t)rr, k) * f.nud[k];
                        }
                        Ja[rr] += jdn[rr];
                        ref[rr] = (vp[18 * i + 6 * rp + rr] - vm[18 * i + 6 * rp + rr]) / (2 * EPS);
                        ref0[rr] = (vp0[18 * i + 6 * rp + rr] - vm0[18 * i + 6 * rp + rr]) / (2 * EPS);
                    }
                    cr_assert(rel_err(v, Jv, 6) < TOL_ID, "velocity = J nu (frame %zu, rep %d)", i, rp);
                    cr_assert(rel_err(a, Ja, 6) < TOL_ID, "acceleration = J nu_dot + J_dot nu (frame %zu, rep %d)", i,
                              rp);
                    double e = rel_err(a, ref, 6), e0 = rel_err(jdn, ref0, 6);
                    cr_assert(e < 10 * TOL_FDIFF, "d/dt(J nu) frame %zu rep %d (floating %d): %g", i, rp, fb, e);
                    cr_assert(e0 < 10 * TOL_FDIFF, "J_dot nu frame %zu rep %d (floating %d): %g", i, rp, fb, e0);
                }
            free(vp), free(vm), free(vp0), free(vm0);
            kteardown(&f);
        }
}

/* Proper acceleration: at rest a frame reads -R^T g (an accelerometer aligned with the world reads
 * +9.81 up); in motion it is the classical acceleration minus g; in free fall (floating base, nu = 0,
 * tau = 0, forward dynamics by ABA) every frame reads zero. */
Test(dynamics_kin, proper_acceleration)
{
    rb_err err;
    for (int fb = 0; fb < 2; fb++) {
        trng r = {2024 + (uint64_t)fb};
        kfix f = ksetup(&r, 10, fb);
        size_t nf = f.m->n_frames;
        /* aligned with the world at the neutral configuration: the base link frame */
        rb_dyn_neutral(f.m, f.q);
        memset(f.nu, 0, f.m->nv * sizeof *f.nu);
        cr_assert_eq(rb_dyn_kinematics(f.m, f.ws, f.q, f.nu, NULL, &err), RB_OK);
        double a[6], ref[6];
        cr_assert_eq(
            rb_dyn_frame_proper_acceleration(f.m, f.ws, (size_t)rb_model_frame_index(f.m, "b0"), RB_DYN_BODY, a, &err),
            RB_OK, "%s", err.msg);
        const double up[6] = {0, 0, 9.81, 0, 0, 0};
        cr_assert(rel_err(a, up, 6) < 1e-15, "at rest, aligned: (%g %g %g)", a[0], a[1], a[2]);

        random_state(&r, f.m, f.q, NULL, 0, NULL, 0);
        cr_assert_eq(rb_dyn_kinematics(f.m, f.ws, f.q, f.nu, NULL, &err), RB_OK);
        for (size_t i = 0; i < nf; i++) {
            rb_xform X;
            rb_dyn_frame_pose(f.m, f.ws, i, &X, NULL);
            rb_m3t_mul_v(X.R, f.m->gravity, ref);
            for (int k = 0; k < 3; k++)
                ref[k] = -ref[k], ref[3 + k] = 0.0;
            cr_assert_eq(rb_dyn_frame_proper_acceleration(f.m, f.ws, i, RB_DYN_BODY, a, &err), RB_OK);
            cr_assert(rel_err(a, ref, 6) < TOL_ID, "at rest: -R^T g");
        }

        /* moving: BODY = R^T (MIXED - g), MIXED = classical - g, INERTIAL = spatial + [-g; 0] */
        random_state(&r, f.m, f.q, f.nu, 3.0, f.nud, 20.0);
        cr_assert_eq(rb_dyn_kinematics(f.m, f.ws, f.q, f.nu, f.nud, &err), RB_OK);
        for (size_t i = 0; i < nf; i++) {
            double am[6], ai[6], pb[6], pm[6], pin[6], lin[3];
            rb_xform X;
            rb_dyn_frame_pose(f.m, f.ws, i, &X, NULL);
            rb_dyn_frame_acceleration(f.m, f.ws, i, RB_DYN_MIXED, am, NULL);
            rb_dyn_frame_acceleration(f.m, f.ws, i, RB_DYN_INERTIAL, ai, NULL);
            rb_dyn_frame_proper_acceleration(f.m, f.ws, i, RB_DYN_BODY, pb, NULL);
            rb_dyn_frame_proper_acceleration(f.m, f.ws, i, RB_DYN_MIXED, pm, NULL);
            rb_dyn_frame_proper_acceleration(f.m, f.ws, i, RB_DYN_INERTIAL, pin, NULL);
            for (int k = 0; k < 3; k++)
                lin[k] = am[k] - f.m->gravity[k];
            rb_m3t_mul_v(X.R, lin, ref);
            rb_m3t_mul_v(X.R, am + 3, ref + 3);
            cr_assert(rel_err(pb, ref, 6) < TOL_ID, "proper BODY");
            for (int k = 0; k < 6; k++)
                ref[k] = am[k] - (k < 3 ? f.m->gravity[k] : 0.0);
            cr_assert(rel_err(pm, ref, 6) < TOL_ID, "proper MIXED");
            for (int k = 0; k < 6; k++)
                ref[k] = ai[k] - (k < 3 ? f.m->gravity[k] : 0.0);
            cr_assert(rel_err(pin, ref, 6) < TOL_ID, "proper INERTIAL");
        }

        if (fb) { /* free fall */
            random_state(&r, f.m, f.q, NULL, 0, NULL, 0);
            memset(f.nu, 0, f.m->nv * sizeof *f.nu);
            cr_assert_eq(rb_dyn_aba(f.m, f.ws, f.q, f.nu, NULL, NULL, 0, f.nud, &err), RB_OK);
            cr_assert_eq(rb_dyn_kinematics(f.m, f.ws, f.q, f.nu, f.nud, &err), RB_OK);
            const double zero[6] = {0};
            for (size_t i = 0; i < nf; i++) {
                cr_assert_eq(rb_dyn_frame_proper_acceleration(f.m, f.ws, i, RB_DYN_BODY, a, &err), RB_OK);
                cr_assert(rel_err(a, zero, 6) < 1e-10, "free fall reads zero: frame %zu (%g %g %g)", i, a[0], a[1],
                          a[2]);
            }
        }
        kteardown(&f);
    }
}

/* CoM against body sums, CoM Jacobian against finite differences; the centroidal momentum matrix against
 * body-by-body momenta about the CoM; rate of centroidal momentum in free flight is gravity alone;
 * kinetic energy 1/2 nu^T M nu. */
Test(dynamics_kin, com_and_centroidal_momentum)
{
    rb_err err;
    for (int fb = 0; fb < 2; fb++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            trng r = {seed * 101 + (uint64_t)fb};
            kfix f = ksetup(&r, 14, fb);
            size_t nv = f.m->nv, nb = f.m->n_bodies;
            rb_mat Jc, A, M;
            cr_assert_eq(rb_mat_alloc(&Jc, 3, nv, &err), RB_OK);
            cr_assert_eq(rb_mat_alloc(&A, 6, nv, &err), RB_OK);
            cr_assert_eq(rb_mat_alloc(&M, nv, nv, &err), RB_OK);
            double mass = rb_dyn_total_mass(f.m);
            cr_assert(fabs(mass - f.m->total_mass) < 1e-12);
            random_state(&r, f.m, f.q, f.nu, 3.0, NULL, 0);

            /* CoM Jacobian by central differences */
            double cp[3], cm[3], c[3], c2[3];
            for (size_t k = 0; k < nv; k++) {
                perturb(f.m, f.q, k, EPS, f.qp);
                perturb(f.m, f.q, k, -EPS, f.qm);
                cr_assert_eq(rb_dyn_kinematics(f.m, f.ws, f.qp, NULL, NULL, &err), RB_OK);
                rb_dyn_com(f.m, f.ws, cp, NULL);
                cr_assert_eq(rb_dyn_kinematics(f.m, f.ws, f.qm, NULL, NULL, &err), RB_OK);
                rb_dyn_com(f.m, f.ws, cm, NULL);
                cr_assert_eq(rb_dyn_kinematics(f.m, f.ws, f.q, NULL, NULL, &err), RB_OK);
                cr_assert_eq(rb_dyn_com_jacobian(f.m, f.ws, &Jc, c, &err), RB_OK, "%s", err.msg);
                double col[3], ref[3];
                for (int rr = 0; rr < 3; rr++)
                    col[rr] = *rb_mat_at(&Jc, (size_t)rr, k), ref[rr] = (cp[rr] - cm[rr]) / (2 * EPS);
                cr_assert(rel_err(col, ref, 3) < TOL_FDIFF, "CoM Jacobian column %zu: %g", k, rel_err(col, ref, 3));
            }

            /* CoM and momenta body by body: body CoM c_i = R h/m + p, velocity R (v + w x c_local); about the
             * CoM: k_G = sum R I_ci R^T w_W + m_i (c_i - c) x c_i_dot */
            cr_assert_eq(rb_dyn_kinematics(f.m, f.ws, f.q, f.nu, NULL, &err), RB_OK);
            double mc[3] = {0}, l[3] = {0}, kG[3] = {0}, hG[6], Anu[6] = {0}, T = 0.0;
            double(*ci)[3] = calloc(nb, sizeof *ci), (*cdi)[3] = calloc(nb, sizeof *cdi);
            for (size_t i = 0; i < nb; i++) {
                const double *pi = f.m->bodies[i].inertia, *v = rb_dyn_body_velocity(f.ws, i);
                const rb_xform *X = rb_dyn_body_pose(f.ws, i);
                double m = pi[0], cl[3] = {0}, wc[3], vc[3];
                if (m > 0)
                    for (int k = 0; k < 3; k++)
                        cl[k] = pi[1 + k] / m;
                rb_m3_mul_v(X->R, cl, ci[i]);
                rb_v3_cross(v + 3, cl, wc);
                for (int k = 0; k < 3; k++)
                    ci[i][k] += X->p[k], vc[k] = v[k] + wc[k];
                rb_m3_mul_v(X->R, vc, cdi[i]);
                for (int k = 0; k < 3; k++)
                    mc[k] += m * ci[i][k], l[k] += m * cdi[i][k];
            }
            cr_assert_eq(rb_dyn_com(f.m, f.ws, c2, &err), RB_OK);
            for (int k = 0; k < 3; k++)
                c[k] = mc[k] / mass;
            cr_assert(rel_err(c2, c, 3) < TOL_ID, "CoM");
            for (size_t i = 0; i < nb; i++) {
                const double *pi = f.m->bodies[i].inertia, *v = rb_dyn_body_velocity(f.ws, i);
                const rb_xform *X = rb_dyn_body_pose(f.ws, i);
                double m = pi[0], cl[3] = {0};
                if (m > 0)
                    for (int k = 0; k < 3; k++)
                        cl[k] = pi[1 + k] / m;
                double cc = rb_v3_dot(cl, cl), Ic[9];
                double IO[9] = {pi[4], pi[5], pi[6], pi[5], pi[7], pi[8], pi[6], pi[8], pi[9]};
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++)
                        Ic[3 * a + b] = IO[3 * a + b] - m * ((a == b ? cc : 0.0) - cl[a] * cl[b]);
                double Iw[3], RIw[3], d[3], dl[3];
                rb_m3_mul_v(Ic, v + 3, Iw);
                rb_m3_mul_v(X->R, Iw, RIw);
                for (int k = 0; k < 3; k++)
                    d[k] = ci[i][k] - c[k];
                rb_v3_cross(d, cdi[i], dl);
                for (int k = 0; k < 3; k++)
                    kG[k] += RIw[k] + m * dl[k];
                T += 0.5 * (m * rb_v3_dot(cdi[i], cdi[i]) + rb_v3_dot(v + 3, Iw));
            }
            cr_assert_eq(rb_dyn_centroidal_matrix(f.m, f.ws, &A, NULL, &err), RB_OK, "%s", err.msg);
            for (int rr = 0; rr < 6; rr++)
                for (size_t k = 0; k < nv; k++)
                    Anu[rr] += *rb_mat_at(&A, (size_t)rr, k) * f.nu[k];
            double ref[6] = {l[0], l[1], l[2], kG[0], kG[1], kG[2]};
            cr_assert(rel_err(Anu, ref, 6) < TOL_ID, "A_G nu = sum of body momenta about the CoM: %g",
                      rel_err(Anu, ref, 6));
            cr_assert_eq(rb_dyn_centroidal_momentum(f.m, f.ws, hG, NULL, &err), RB_OK);
            cr_assert(rel_err(hG, ref, 6) < TOL_ID, "h_G");
            for (size_t k = 0; k < nv; k++)
                for (int rr = 0; rr < 3; rr++)
                    cr_assert(fabs(*rb_mat_at(&A, (size_t)rr, k) - mass * *rb_mat_at(&Jc, (size_t)rr, k)) <
                                  TOL_ID * fmax(1.0, mass),
                              "linear rows of A_G = m J_com");
            double Te;
            cr_assert_eq(rb_dyn_kinetic_energy(f.m, f.ws, &Te, &err), RB_OK);
            cr_assert(fabs(Te - T) < TOL_ID * fmax(1.0, T), "kinetic energy body by body");
            cr_assert_eq(rb_dyn_mass_matrix(f.m, f.ws, f.q, &M, &err), RB_OK);
            double TM = 0.0;
            for (size_t i = 0; i < nv; i++)
                for (size_t k = 0; k < nv; k++)
                    TM += 0.5 * f.nu[i] * *rb_mat_at(&M, i, k) * f.nu[k];
            cr_assert(fabs(Te - TM) < TOL_ID * fmax(1.0, T), "kinetic energy = 1/2 nu^T M nu");

            if (fb) { /* free flight: d/dt h_G = [m g; 0] whatever the joint torques */
                double *tau = calloc(nv, sizeof *tau), hp[6], hm[6], dh[6];
                random_vector(&r, tau + 6, nv - 6, -20, 20);
                cr_assert_eq(rb_dyn_aba(f.m, f.ws, f.q, f.nu, tau, NULL, 0, f.nud, &err), RB_OK);
                for (int sgn = -1; sgn <= 1; sgn += 2) {
                    rb_dyn_integrate(f.m, f.q, f.nu, sgn * EPS, f.qp);
                    for (size_t k = 0; k < nv; k++)
                        f.nup[k] = f.nu[k] + sgn * EPS * f.nud[k];
                    cr_assert_eq(rb_dyn_kinematics(f.m, f.ws, f.qp, f.nup, NULL, &err), RB_OK);
                    cr_assert_eq(rb_dyn_centroidal_momentum(f.m, f.ws, sgn > 0 ? hp : hm, NULL, &err), RB_OK);
                }
                for (int k = 0; k < 6; k++)
                    dh[k] = (hp[k] - hm[k]) / (2 * EPS), ref[k] = k < 3 ? mass * f.m->gravity[k] : 0.0;
                cr_assert(rel_err(dh, ref, 6) < 1e-6, "d/dt h_G = m g in free flight: %g", rel_err(dh, ref, 6));
                free(tau);
            }
            free(ci), free(cdi);
            rb_mat_free(&Jc), rb_mat_free(&A), rb_mat_free(&M);
            kteardown(&f);
        }
}

/* rb_dyn_integrate moves with a constant body-fixed twist: q (+) (a + b) nu = (q (+) a nu) (+) b nu, and the
 * quaternion stays a unit one. */
Test(dynamics_kin, integrate_is_the_exponential_map)
{
    trng r = {8};
    kfix f = ksetup(&r, 6, true);
    double *q1 = calloc(f.m->nq, sizeof *q1), *q2 = calloc(f.m->nq, sizeof *q2);
    for (int k = 0; k < 20; k++) {
        random_state(&r, f.m, f.q, f.nu, 5.0, NULL, 0);
        double a = trng_uniform(&r, -1, 1), b = trng_uniform(&r, -1, 1);
        if (k == 0)
            memset(f.nu + 3, 0, 3 * sizeof *f.nu), a = 1e-9; /* the small-angle branch */
        rb_dyn_integrate(f.m, f.q, f.nu, a, q1);
        rb_dyn_integrate(f.m, q1, f.nu, b, q1); /* in place */
        rb_dyn_integrate(f.m, f.q, f.nu, a + b, q2);
        double e = rel_err(q1, q2, f.m->nq);
        cr_assert(e < 1e-13, "group property: %g", e);
        double n = sqrt(q1[3] * q1[3] + q1[4] * q1[4] + q1[5] * q1[5] + q1[6] * q1[6]);
        cr_assert(fabs(n - 1.0) < 1e-15);
    }
    free(q1), free(q2);
    kteardown(&f);
}
