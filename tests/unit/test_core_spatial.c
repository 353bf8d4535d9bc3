/* roboest/spatial.h: identities between operations on random high-entropy values, and the 6x6 matrices of
 * the textbook (Featherstone's, reordered linear first) written out explicitly. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "roboest/spatial.h"

#define TRIALS 200

/* splitmix64: reproducible, full 53-bit mantissas. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double uniform(double lo, double hi)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return lo + (hi - lo) * ((double)(z >> 11) / 9007199254740992.0);
}
static void rand_vec(double *v, size_t n, double scale)
{
    for (size_t i = 0; i < n; i++)
        v[i] = uniform(-scale, scale);
}
static void rand_unit(double a[3])
{
    double n;
    do {
        rand_vec(a, 3, 1.0);
        n = sqrt(rb_v3_dot(a, a));
    } while (n < 0.1);
    for (int i = 0; i < 3; i++)
        a[i] /= n;
}
static void rand_xform(rb_xform *X)
{
    double q[4];
    rand_vec(q, 4, 1.0);
    rb_m3_from_quat(q, X->R);
    rand_vec(X->p, 3, 2.0);
}
/* Physical inertial parameters about the frame origin: random mass, centre of mass, principal moments
 * satisfying the triangle inequality, random principal axes. */
static void rand_inertia(double pi[10])
{
    double m = uniform(0.1, 10.0), c[3], q[4], R[9], d[3];
    rand_vec(c, 3, 0.5);
    rand_vec(q, 4, 1.0);
    rb_m3_from_quat(q, R);
    /* from point masses: moments a+b, b+c, a+c with a, b, c >= 0 always satisfy the triangle inequality */
    double s[3] = {uniform(0.0, 0.05), uniform(0.0, 0.05), uniform(0.0, 0.05)};
    d[0] = s[1] + s[2], d[1] = s[0] + s[2], d[2] = s[0] + s[1];
    double Ic[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            Ic[3 * i + j] =
                R[3 * i] * d[0] * R[3 * j] + R[3 * i + 1] * d[1] * R[3 * j + 1] + R[3 * i + 2] * d[2] * R[3 * j + 2];
    double cc = rb_v3_dot(c, c), IO[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            IO[3 * i + j] = Ic[3 * i + j] + m * ((i == j ? cc : 0.0) - c[i] * c[j]);
    pi[0] = m, pi[1] = m * c[0], pi[2] = m * c[1], pi[3] = m * c[2];
    pi[4] = IO[0], pi[5] = IO[1], pi[6] = IO[2], pi[7] = IO[4], pi[8] = IO[5], pi[9] = IO[8];
}

static void expect_close(const double *a, const double *b, size_t n, double tol, const char *what)
{
    for (size_t i = 0; i < n; i++)
        cr_assert(fabs(a[i] - b[i]) <= tol * (1.0 + fabs(b[i])), "%s[%zu]: %.17g vs %.17g", what, i, a[i], b[i]);
}
static void expect_xform_close(const rb_xform *A, const rb_xform *B, double tol, const char *what)
{
    expect_close(A->R, B->R, 9, tol, what);
    expect_close(A->p, B->p, 3, tol, what);
}
static void expect_rotation(const double R[9], const char *what)
{
    double RtR[9], I[9];
    rb_m3t_mul(R, R, RtR);
    rb_m3_identity(I);
    expect_close(RtR, I, 9, 1e-14, what);
    double det =
        R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) + R[2] * (R[3] * R[7] - R[4] * R[6]);
    cr_assert(fabs(det - 1.0) < 1e-14, "%s: det %.17g", what, det);
}

/* [a]x: the cross-product matrix */
static void skew(const double a[3], double S[9])
{
    S[0] = 0, S[1] = -a[2], S[2] = a[1];
    S[3] = a[2], S[4] = 0, S[5] = -a[0];
    S[6] = -a[1], S[7] = a[0], S[8] = 0;
}
static void set_block(double M[36], int bi, int bj, const double B[9])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            M[6 * (3 * bi + i) + 3 * bj + j] = B[3 * i + j];
}
static void mul66(const double M[36], const double x[6], double y[6])
{
    for (int i = 0; i < 6; i++) {
        y[i] = 0;
        for (int j = 0; j < 6; j++)
            y[i] += M[6 * i + j] * x[j];
    }
}
static double dot6(const double a[6], const double b[6])
{
    double s = 0;
    for (int i = 0; i < 6; i++)
        s += a[i] * b[i];
    return s;
}

Test(core_spatial, matrix_vector_helpers_agree)
{
    for (int t = 0; t < TRIALS; t++) {
        double A[9], B[9], At[9], a[3], r1[3], r2[3], M1[9], M2[9];
        rand_vec(A, 9, 3.0), rand_vec(B, 9, 3.0), rand_vec(a, 3, 3.0);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                At[3 * i + j] = A[3 * j + i];
        rb_m3t_mul_v(A, a, r1);
        rb_m3_mul_v(At, a, r2);
        expect_close(r1, r2, 3, 1e-14, "R^T a");
        rb_m3t_mul(A, B, M1);
        rb_m3_mul(At, B, M2);
        expect_close(M1, M2, 9, 1e-14, "A^T B");
        double explicit_ab[9] = {0};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                for (int k = 0; k < 3; k++)
                    explicit_ab[3 * i + j] += A[3 * i + k] * B[3 * k + j];
        rb_m3_mul(A, B, M1);
        expect_close(M1, explicit_ab, 9, 1e-14, "A B");
        double S[9], c[3];
        skew(a, S);
        rb_m3_mul_v(S, r1, r2);
        rb_v3_cross(a, r1, c);
        expect_close(c, r2, 3, 1e-14, "cross");
    }
    double x[3] = {1, 0, 0}, y[3] = {0, 1, 0}, z[3];
    rb_v3_cross(x, y, z);
    cr_assert(z[0] == 0 && z[1] == 0 && z[2] == 1, "x cross y = z");
}

Test(core_spatial, rotations_are_orthonormal_and_agree)
{
    for (int t = 0; t < TRIALS; t++) {
        double r = uniform(-M_PI, M_PI), p = uniform(-M_PI / 2, M_PI / 2), y = uniform(-M_PI, M_PI);
        double R[9], A[9], Bm[9], tmp[9], ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};
        rb_m3_from_rpy(r, p, y, R);
        expect_rotation(R, "rpy");
        /* URDF rpy = Rz(yaw) Ry(pitch) Rx(roll) */
        double Rx[9], Ry[9], Rz[9];
        rb_m3_from_axis_angle(ex, r, Rx);
        rb_m3_from_axis_angle(ey, p, Ry);
        rb_m3_from_axis_angle(ez, y, Rz);
        rb_m3_mul(Rz, Ry, tmp);
        rb_m3_mul(tmp, Rx, A);
        expect_close(R, A, 9, 1e-14, "rpy vs axis-angle product");
        rb_m3_from_rpy(r, 0, 0, A);
        expect_close(A, Rx, 9, 1e-15, "roll about x");
        rb_m3_from_rpy(0, p, 0, A);
        expect_close(A, Ry, 9, 1e-15, "pitch about y");
        rb_m3_from_rpy(0, 0, y, A);
        expect_close(A, Rz, 9, 1e-15, "yaw about z");

        double n[3], angle = uniform(-M_PI, M_PI);
        rand_unit(n);
        rb_m3_from_axis_angle(n, angle, A);
        expect_rotation(A, "axis-angle");
        double An[3];
        rb_m3_mul_v(A, n, An);
        expect_close(An, n, 3, 1e-14, "the axis is fixed");
        double q[4] = {cos(angle / 2), sin(angle / 2) * n[0], sin(angle / 2) * n[1], sin(angle / 2) * n[2]};
        double scale = uniform(0.2, 5.0), qs[4];
        for (int i = 0; i < 4; i++)
            qs[i] = scale * q[i];
        rb_m3_from_quat(qs, Bm);
        expect_rotation(Bm, "quaternion");
        expect_close(Bm, A, 9, 1e-14, "quaternion vs axis-angle");
        /* -q is the same rotation */
        for (int i = 0; i < 4; i++)
            qs[i] = -q[i];
        rb_m3_from_quat(qs, Bm);
        expect_close(Bm, A, 9, 1e-14, "-q");
    }
    /* Simple cases by hand: a quarter turn about z takes x to y; roll pi/2 takes y to z. */
    double R[9], v[3], ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0};
    rb_m3_from_rpy(0, 0, M_PI / 2, R);
    rb_m3_mul_v(R, ex, v);
    expect_close(v, (double[]){0, 1, 0}, 3, 1e-15, "Rz x");
    rb_m3_from_rpy(M_PI / 2, 0, 0, R);
    rb_m3_mul_v(R, ey, v);
    expect_close(v, (double[]){0, 0, 1}, 3, 1e-15, "Rx y");
    rb_m3_from_rpy(0, M_PI / 2, 0, R);
    rb_m3_mul_v(R, ex, v);
    expect_close(v, (double[]){0, 0, -1}, 3, 1e-15, "Ry x");
    rb_m3_from_quat((double[]){M_SQRT1_2, 0, 0, M_SQRT1_2}, R);
    rb_m3_mul_v(R, ex, v);
    expect_close(v, (double[]){0, 1, 0}, 3, 1e-15, "quat z quarter turn");
}

Test(core_spatial, compose_and_inverse)
{
    for (int t = 0; t < TRIALS; t++) {
        rb_xform A, B, C, AB, BC, AB_C, A_BC, Ai, I, tmp, ABi, BiAi, Bi;
        rand_xform(&A), rand_xform(&B), rand_xform(&C);
        rb_xform_identity(&I);
        rb_xform_inverse(&A, &Ai);
        rb_xform_compose(&A, &Ai, &tmp);
        expect_xform_close(&tmp, &I, 1e-14, "A A^-1");
        rb_xform_compose(&Ai, &A, &tmp);
        expect_xform_close(&tmp, &I, 1e-14, "A^-1 A");
        rb_xform_compose(&A, &B, &AB);
        rb_xform_compose(&B, &C, &BC);
        rb_xform_compose(&AB, &C, &AB_C);
        rb_xform_compose(&A, &BC, &A_BC);
        expect_xform_close(&AB_C, &A_BC, 1e-13, "associativity");
        rb_xform_inverse(&AB, &ABi);
        rb_xform_inverse(&B, &Bi);
        rb_xform_compose(&Bi, &Ai, &BiAi);
        expect_xform_close(&ABi, &BiAi, 1e-13, "(AB)^-1");
        /* points: x_A = R x_B + p, composition maps points like successive maps */
        double x[3], y[3], z[3], w[3];
        rand_vec(x, 3, 1.0);
        rb_m3_mul_v(B.R, x, y);
        for (int i = 0; i < 3; i++)
            y[i] += B.p[i];
        rb_m3_mul_v(A.R, y, z);
        for (int i = 0; i < 3; i++)
            z[i] += A.p[i];
        rb_m3_mul_v(AB.R, x, w);
        for (int i = 0; i < 3; i++)
            w[i] += AB.p[i];
        expect_close(w, z, 3, 1e-14, "point map");
    }
}

Test(core_spatial, motion_and_force_transforms)
{
    for (int t = 0; t < TRIALS; t++) {
        rb_xform X, Y, XY;
        double m[6], f[6], a[6], b[6], c[6], M[36] = {0}, F[36] = {0}, S[9], SR[9];
        rand_xform(&X), rand_xform(&Y);
        rand_vec(m, 6, 3.0), rand_vec(f, 6, 3.0);
        /* inverses */
        rb_xform_motion(&X, m, a);
        rb_xform_motion_inv(&X, a, b);
        expect_close(b, m, 6, 1e-13, "motion_inv(motion)");
        rb_xform_motion_inv(&X, m, a);
        rb_xform_motion(&X, a, b);
        expect_close(b, m, 6, 1e-13, "motion(motion_inv)");
        rb_xform_force(&X, f, a);
        rb_xform_force_inv(&X, a, b);
        expect_close(b, f, 6, 1e-13, "force_inv(force)");
        rb_xform_force_inv(&X, f, a);
        rb_xform_force(&X, a, b);
        expect_close(b, f, 6, 1e-13, "force(force_inv)");
        /* the inverse transform's functions are the _inv functions */
        rb_xform Xi;
        rb_xform_inverse(&X, &Xi);
        rb_xform_motion(&Xi, m, a);
        rb_xform_motion_inv(&X, m, b);
        expect_close(a, b, 6, 1e-13, "motion(X^-1) = motion_inv(X)");
        rb_xform_force(&Xi, f, a);
        rb_xform_force_inv(&X, f, b);
        expect_close(a, b, 6, 1e-13, "force(X^-1) = force_inv(X)");
        /* power is frame-independent */
        double pa[6], pb[6];
        rb_xform_motion(&X, m, pa);
        rb_xform_force(&X, f, pb);
        cr_assert(fabs(dot6(pa, pb) - dot6(m, f)) < 1e-12 * (1 + fabs(dot6(m, f))), "power invariance");
        /* composition */
        rb_xform_compose(&X, &Y, &XY);
        rb_xform_motion(&Y, m, a);
        rb_xform_motion(&X, a, b);
        rb_xform_motion(&XY, m, c);
        expect_close(c, b, 6, 1e-13, "motion composition");
        rb_xform_force(&Y, f, a);
        rb_xform_force(&X, a, b);
        rb_xform_force(&XY, f, c);
        expect_close(c, b, 6, 1e-13, "force composition");
        /* explicit matrices, linear first: motion [[R, [p]x R], [0, R]], force [[R, 0], [[p]x R, R]] */
        skew(X.p, S);
        rb_m3_mul(S, X.R, SR);
        set_block(M, 0, 0, X.R), set_block(M, 0, 1, SR), set_block(M, 1, 1, X.R);
        set_block(F, 0, 0, X.R), set_block(F, 1, 0, SR), set_block(F, 1, 1, X.R);
        rb_xform_motion(&X, m, a);
        mul66(M, m, b);
        expect_close(a, b, 6, 1e-13, "motion matrix");
        rb_xform_force(&X, f, a);
        mul66(F, f, b);
        expect_close(a, b, 6, 1e-13, "force matrix");
    }
    /* Spinning about z through B's origin, at (2, 0, 0) in A: the point at A's origin moves with
     * w x (0 - p) = (0, -2, 0). */
    rb_xform X;
    rb_xform_identity(&X);
    X.p[0] = 2.0;
    double w[6] = {0, 0, 0, 0, 0, 1}, out[6];
    rb_xform_motion(&X, w, out);
    expect_close(out, (double[]){0, -2, 0, 0, 0, 1}, 6, 1e-15, "translated spin");
}

Test(core_spatial, cross_products_match_matrices)
{
    for (int t = 0; t < TRIALS; t++) {
        double a[6], b[6], f[6], r1[6], r2[6], crm[36] = {0}, crf[36], Sw[9], Sv[9];
        rand_vec(a, 6, 3.0), rand_vec(b, 6, 3.0), rand_vec(f, 6, 3.0);
        /* crm(a) = [[w]x, [v]x; 0, [w]x] for a = [v; w]; crf(a) = -crm(a)^T */
        skew(a + 3, Sw);
        skew(a, Sv);
        set_block(crm, 0, 0, Sw), set_block(crm, 0, 1, Sv), set_block(crm, 1, 1, Sw);
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++)
                crf[6 * i + j] = -crm[6 * j + i];
        rb_cross_motion(a, b, r1);
        mul66(crm, b, r2);
        expect_close(r1, r2, 6, 1e-13, "crm");
        rb_cross_force(a, f, r1);
        mul66(crf, f, r2);
        expect_close(r1, r2, 6, 1e-13, "crf");
        /* antisymmetry, and duality <a xf f, b> = -<f, a xm b> */
        rb_cross_motion(b, a, r2);
        for (int i = 0; i < 6; i++)
            r2[i] = -r2[i];
        rb_cross_motion(a, b, r1);
        expect_close(r1, r2, 6, 1e-13, "a x b = -b x a");
        rb_cross_force(a, f, r1);
        rb_cross_motion(a, b, r2);
        cr_assert(fabs(dot6(r1, b) + dot6(f, r2)) < 1e-11, "duality");
        /* transforms commute with cross products: X (a x b) = (X a) x (X b) */
        rb_xform X;
        double Xa[6], Xb[6], Xf[6], lhs[6], rhs[6];
        rand_xform(&X);
        rb_xform_motion(&X, a, Xa), rb_xform_motion(&X, b, Xb), rb_xform_force(&X, f, Xf);
        rb_cross_motion(a, b, r1);
        rb_xform_motion(&X, r1, lhs);
        rb_cross_motion(Xa, Xb, rhs);
        expect_close(lhs, rhs, 6, 1e-12, "X (a xm b)");
        rb_cross_force(a, f, r1);
        rb_xform_force(&X, r1, lhs);
        rb_cross_force(Xa, Xf, rhs);
        expect_close(lhs, rhs, 6, 1e-12, "X* (a xf f)");
    }
}

Test(core_spatial, inertia_products_and_change_of_frame)
{
    for (int t = 0; t < TRIALS; t++) {
        double pi[10], v[6], Xv[6], h1[6], h2[6], IA[10], M[36] = {0}, Sh[9], mS[9], I3[9], mI[9];
        rb_xform X;
        rand_inertia(pi);
        rand_xform(&X);
        rand_vec(v, 6, 3.0);
        /* explicit spatial inertia [[m 1, -[h]x], [[h]x, I]] */
        skew(pi + 1, Sh);
        rb_m3_identity(mI);
        for (int i = 0; i < 9; i++)
            mI[i] *= pi[0], mS[i] = -Sh[i];
        double Ib[9] = {pi[4], pi[5], pi[6], pi[5], pi[7], pi[8], pi[6], pi[8], pi[9]};
        memcpy(I3, Ib, sizeof I3);
        set_block(M, 0, 0, mI), set_block(M, 0, 1, mS), set_block(M, 1, 0, Sh), set_block(M, 1, 1, I3);
        rb_inertia_mul(pi, v, h1);
        mul66(M, v, h2);
        expect_close(h1, h2, 6, 1e-13, "inertia matrix");
        /* kinetic energy is positive */
        cr_assert(dot6(v, h1) > 0, "kinetic energy");
        /* momentum transforms as a force: I_A (X v) = X* (I_B v) */
        rb_inertia_to_parent(&X, pi, IA);
        rb_xform_motion(&X, v, Xv);
        rb_inertia_mul(IA, Xv, h1);
        rb_inertia_mul(pi, v, h2);
        double Xh[6];
        rb_xform_force(&X, h2, Xh);
        expect_close(h1, Xh, 6, 1e-12, "I_A X v = X* I_B v");
        /* mass kept, centre of mass moved as a point */
        cr_assert_eq(IA[0], pi[0]);
        double cB[3] = {pi[1] / pi[0], pi[2] / pi[0], pi[3] / pi[0]}, cA[3];
        rb_m3_mul_v(X.R, cB, cA);
        for (int i = 0; i < 3; i++)
            cA[i] += X.p[i];
        double hA[3] = {IA[1] / IA[0], IA[2] / IA[0], IA[3] / IA[0]};
        expect_close(hA, cA, 3, 1e-13, "centre of mass");
        /* two steps equal one */
        rb_xform Y, XY;
        double IY[10], IXY[10], IXY2[10];
        rand_xform(&Y);
        rb_xform_compose(&X, &Y, &XY);
        rb_inertia_to_parent(&Y, pi, IY);
        rb_inertia_to_parent(&X, IY, IXY);
        rb_inertia_to_parent(&XY, pi, IXY2);
        expect_close(IXY, IXY2, 10, 1e-12, "composition");
        /* back and forth */
        rb_xform Xi;
        double back[10];
        rb_xform_inverse(&X, &Xi);
        rb_inertia_to_parent(&Xi, IA, back);
        expect_close(back, pi, 10, 1e-11, "inverse");
    }
    /* A point mass at (1, 0, 0) from its own frame: I about A's origin is diag(0, m, m). */
    rb_xform X;
    rb_xform_identity(&X);
    X.p[0] = 1.0;
    double pt[10] = {2.0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, out[10];
    rb_inertia_to_parent(&X, pt, out);
    expect_close(out, (double[]){2, 2, 0, 0, 0, 0, 0, 2, 0, 2}, 10, 1e-15, "point mass");
}

Test(core_spatial, quaternion_of_a_rotation_round_trips)
{
    /* Random rotations, plus the cases where each pivot of Shepperd's method is taken (rotations by pi
     * about x, y, z and the identity). */
    double cases[24][4];
    for (int k = 0; k < 20; k++)
        for (int i = 0; i < 4; i++)
            cases[k][i] = uniform(-1, 1);
    const double pivots[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
    memcpy(cases[20], pivots, sizeof pivots);
    for (int k = 0; k < 24; k++) {
        double n = sqrt(cases[k][0] * cases[k][0] + cases[k][1] * cases[k][1] + cases[k][2] * cases[k][2] +
                        cases[k][3] * cases[k][3]);
        double want[4], R[9], got[4], R2[9];
        double sign = cases[k][0] < 0 ? -1 : 1;
        for (int i = 0; i < 4; i++)
            want[i] = sign * cases[k][i] / n;
        rb_m3_from_quat(cases[k], R);
        rb_quat_from_m3(R, got);
        rb_m3_from_quat(got, R2);
        for (int i = 0; i < 9; i++)
            cr_assert_float_eq(R2[i], R[i], 1e-14, "case %d: the rotation survives", k);
        if (fabs(want[0]) > 1e-12) /* w = 0: q and -q are both valid */
            for (int i = 0; i < 4; i++)
                cr_assert_float_eq(got[i], want[i], 1e-14, "case %d, component %d", k, i);
    }
}

Test(core_spatial, rpy_of_a_rotation_round_trips)
{
    /* Random rotations from quaternions (independent of the RPY code): the angles rebuild the matrix, pitch
     * lies in [-pi/2, pi/2], roll and yaw in [-pi, pi). */
    for (int t = 0; t < TRIALS; t++) {
        double q[4], R[9], rpy[3], back[9];
        rand_vec(q, 4, 1.0);
        rb_m3_from_quat(q, R);
        rb_m3_to_rpy(R, rpy);
        cr_assert(rpy[1] >= -M_PI / 2 && rpy[1] <= M_PI / 2, "pitch %g", rpy[1]);
        for (int i = 0; i < 3; i += 2)
            cr_assert(rpy[i] >= -M_PI && rpy[i] < M_PI, "angle %d = %g", i, rpy[i]);
        rb_m3_from_rpy(rpy[0], rpy[1], rpy[2], back);
        expect_close(back, R, 9, 1e-14, "rebuilt from rpy");
    }
    /* Angles inside the principal ranges come back as they were. */
    for (int t = 0; t < TRIALS; t++) {
        double in[3] = {uniform(-M_PI, M_PI), uniform(-1.5, 1.5), uniform(-M_PI, M_PI)}, R[9], out[3];
        rb_m3_from_rpy(in[0], in[1], in[2], R);
        rb_m3_to_rpy(R, out);
        expect_close(out, in, 3, 1e-12, "rpy round trip");
    }
    /* A half turn about x (roll +-pi) is reported as -pi; yaw the same about z. */
    double R[9], rpy[3];
    rb_m3_from_rpy(M_PI, 0, 0, R);
    rb_m3_to_rpy(R, rpy);
    cr_assert(rpy[0] == -M_PI && fabs(rpy[1]) < 1e-15 && fabs(rpy[2]) < 1e-15, "%g %g %g", rpy[0], rpy[1], rpy[2]);
    double Rz[9] = {-1, 0, 0, 0, -1, 0, 0, 0, 1};
    rb_m3_to_rpy(Rz, rpy);
    cr_assert(rpy[2] == -M_PI && rpy[0] == 0 && fabs(rpy[1]) < 1e-15, "%g %g %g", rpy[0], rpy[1], rpy[2]);
    /* Gimbal lock: pitch +-pi/2, roll 0 and the yaw that rebuilds the matrix. */
    for (int s = -1; s <= 1; s += 2) {
        rb_m3_from_rpy(0.3, s * M_PI / 2, -0.4, R);
        double back[9];
        rb_m3_to_rpy(R, rpy);
        cr_assert_float_eq(rpy[1], s * M_PI / 2, 1e-8);
        cr_assert_eq(rpy[0], 0.0);
        rb_m3_from_rpy(rpy[0], rpy[1], rpy[2], back);
        expect_close(back, R, 9, 1e-12, "gimbal lock");
    }
}
