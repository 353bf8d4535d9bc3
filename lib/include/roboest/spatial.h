/*
 * roboest spatial algebra (part of the core module): small fixed-size 3D and 6D operations, inline.
 *
 * Conventions, followed everywhere in roboest:
 *   - 3-vectors are double[3]; 3x3 matrices double[9], row-major.
 *   - 6D vectors put the LINEAR part first: a twist (motion vector) is [v; w], a wrench (force
 *     vector) is [f; tau], the moment taken about the origin of the frame the vector is expressed in.
 *   - A transform rb_xform {R, p} is the pose of a frame B in a frame A: R = A_R_B (the columns are
 *     B's axes in A coordinates), p = A_p_B (B's origin in A coordinates); a point maps as
 *     x_A = R x_B + p. The same transform carries 6D vectors from B to A:
 *         motion:  w_A = R w_B,   v_A = R v_B + p x w_A
 *         force:   f_A = R f_B,   tau_A = R tau_B + p x f_A
 *     and the inverse functions carry them from A to B.
 *   - Inertial parameters of a body, about its frame's origin and in its axes:
 *         pi = [m, h_x, h_y, h_z, I_xx, I_xy, I_xz, I_yy, I_yz, I_zz],  h = m c (c: centre of mass),
 *     I the rotational inertia about the origin (I = I_c + m (|c|^2 1 - c c^T)). The spatial inertia
 *     maps a twist to the body's momentum [linear; angular about the origin]:
 *         l = m v - h x w,      k = I w + h x v.
 *   - Gravity enters through the proper acceleration of the base (a_0 = -g), so accelerometers and
 *     inverse dynamics see it exactly once.
 */
#ifndef ROBOEST_SPATIAL_H
#define ROBOEST_SPATIAL_H

#include <math.h>

#include "roboest/core.h"

RB_API_BEGIN

typedef struct rb_xform {
    double R[9]; /* A_R_B, row-major */
    double p[3]; /* A_p_B */
} rb_xform;

/* ---- 3D ------------------------------------------------------------------------------------------- */
static inline void rb_v3_set(double out[3], double x, double y, double z) { out[0] = x, out[1] = y, out[2] = z; }
static inline double rb_v3_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
/* out = a x b (out may alias neither a nor b) */
static inline void rb_v3_cross(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}
/* out = R a (out may not alias a) */
static inline void rb_m3_mul_v(const double R[9], const double a[3], double out[3])
{
    out[0] = R[0] * a[0] + R[1] * a[1] + R[2] * a[2];
    out[1] = R[3] * a[0] + R[4] * a[1] + R[5] * a[2];
    out[2] = R[6] * a[0] + R[7] * a[1] + R[8] * a[2];
}
/* out = R^T a (out may not alias a) */
static inline void rb_m3t_mul_v(const double R[9], const double a[3], double out[3])
{
    out[0] = R[0] * a[0] + R[3] * a[1] + R[6] * a[2];
    out[1] = R[1] * a[0] + R[4] * a[1] + R[7] * a[2];
    out[2] = R[2] * a[0] + R[5] * a[1] + R[8] * a[2];
}
/* out = A B (out may alias neither) */
static inline void rb_m3_mul(const double A[9], const double B[9], double out[9])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}
/* out = A^T B (out may alias neither) */
static inline void rb_m3t_mul(const double A[9], const double B[9], double out[9])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
}
static inline void rb_m3_identity(double out[9])
{
    for (int i = 0; i < 9; i++)
        out[i] = (i % 4 == 0) ? 1.0 : 0.0;
}
/* URDF rpy: R = Rz(yaw) Ry(pitch) Rx(roll) (fixed axes x, then y, then z). */
static inline void rb_m3_from_rpy(double roll, double pitch, double yaw, double out[9])
{
    double cr = cos(roll), sr = sin(roll), cp = cos(pitch), sp = sin(pitch), cy = cos(yaw), sy = sin(yaw);
    out[0] = cy * cp, out[1] = cy * sp * sr - sy * cr, out[2] = cy * sp * cr + sy * sr;
    out[3] = sy * cp, out[4] = sy * sp * sr + cy * cr, out[5] = sy * sp * cr - cy * sr;
    out[6] = -sp, out[7] = cp * sr, out[8] = cp * cr;
}
/* Roll, pitch, yaw of a rotation in the rb_m3_from_rpy convention R = Rz(yaw) Ry(pitch) Rx(roll) (iDynTree's
 * Rotation::RPY / getRPY; the robot logger's orientations channels): pitch in [-pi/2, pi/2], roll and yaw in
 * [-pi, pi) (atan2's +pi is returned as -pi). Pitch is atan2(-R31, hypot(R11, R21)), accurate near +-pi/2.
 * At the singularity (|pitch| = pi/2, hypot(R11, R21) below 1e-12) only roll -+ yaw is defined: roll = 0
 * is taken and yaw = atan2(-R12, R22). rb_m3_from_rpy(rpy) rebuilds R. */
static inline void rb_m3_to_rpy(const double R[9], double rpy[3])
{
    double c = hypot(R[0], R[3]);
    rpy[1] = atan2(-R[6], c);
    if (c > 1e-12) {
        rpy[0] = atan2(R[7], R[8]);
        rpy[2] = atan2(R[3], R[0]);
    } else {
        rpy[0] = 0.0;
        rpy[2] = atan2(-R[1], R[4]);
    }
    const double pi = 3.14159265358979323846; /* M_PI is not C11 */
    for (int i = 0; i < 3; i += 2)
        if (rpy[i] >= pi)
            rpy[i] = -pi;
}
/* Rotation by `angle` about the unit vector `axis` (Rodrigues). */
static inline void rb_m3_from_axis_angle(const double axis[3], double angle, double out[9])
{
    double c = cos(angle), s = sin(angle), t = 1.0 - c, x = axis[0], y = axis[1], z = axis[2];
    out[0] = t * x * x + c, out[1] = t * x * y - s * z, out[2] = t * x * z + s * y;
    out[3] = t * x * y + s * z, out[4] = t * y * y + c, out[5] = t * y * z - s * x;
    out[6] = t * x * z - s * y, out[7] = t * y * z + s * x, out[8] = t * z * z + c;
}
/* Rotation of the unit quaternion (w, x, y, z) (normalized here). */
static inline void rb_m3_from_quat(const double q[4], double out[9])
{
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
    out[0] = 1 - 2 * (y * y + z * z), out[1] = 2 * (x * y - w * z), out[2] = 2 * (x * z + w * y);
    out[3] = 2 * (x * y + w * z), out[4] = 1 - 2 * (x * x + z * z), out[5] = 2 * (y * z - w * x);
    out[6] = 2 * (x * z - w * y), out[7] = 2 * (y * z + w * x), out[8] = 1 - 2 * (x * x + y * y);
}

/* Unit quaternion (w, x, y, z) with w >= 0 of a rotation matrix (Shepperd's method: the largest of
 * 4w^2, 4x^2, 4y^2, 4z^2 is taken as the pivot, so no division by a small number). */
static inline void rb_quat_from_m3(const double R[9], double q[4])
{
    double t = R[0] + R[4] + R[8], w, x, y, z;
    if (t >= R[0] && t >= R[4] && t >= R[8]) {
        double s = 2.0 * sqrt(1.0 + t);
        w = 0.25 * s, x = (R[7] - R[5]) / s, y = (R[2] - R[6]) / s, z = (R[3] - R[1]) / s;
    } else if (R[0] >= R[4] && R[0] >= R[8]) {
        double s = 2.0 * sqrt(1.0 + R[0] - R[4] - R[8]);
        w = (R[7] - R[5]) / s, x = 0.25 * s, y = (R[1] + R[3]) / s, z = (R[2] + R[6]) / s;
    } else if (R[4] >= R[8]) {
        double s = 2.0 * sqrt(1.0 + R[4] - R[0] - R[8]);
        w = (R[2] - R[6]) / s, x = (R[1] + R[3]) / s, y = 0.25 * s, z = (R[5] + R[7]) / s;
    } else {
        double s = 2.0 * sqrt(1.0 + R[8] - R[0] - R[4]);
        w = (R[3] - R[1]) / s, x = (R[2] + R[6]) / s, y = (R[5] + R[7]) / s, z = 0.25 * s;
    }
    double sign = w < 0 ? -1.0 : 1.0, n = sqrt(w * w + x * x + y * y + z * z);
    q[0] = sign * w / n, q[1] = sign * x / n, q[2] = sign * y / n, q[3] = sign * z / n;
}

/* ---- transforms ------------------------------------------------------------------------------------ */
static inline void rb_xform_identity(rb_xform *X)
{
    rb_m3_identity(X->R);
    X->p[0] = X->p[1] = X->p[2] = 0.0;
}
/* out = A_X_C = A_X_B * B_X_C (out may alias neither input) */
static inline void rb_xform_compose(const rb_xform *AB, const rb_xform *BC, rb_xform *out)
{
    rb_m3_mul(AB->R, BC->R, out->R);
    rb_m3_mul_v(AB->R, BC->p, out->p);
    for (int i = 0; i < 3; i++)
        out->p[i] += AB->p[i];
}
/* out = B_X_A from A_X_B (out may not alias X) */
static inline void rb_xform_inverse(const rb_xform *X, rb_xform *out)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out->R[3 * i + j] = X->R[3 * j + i];
    rb_m3t_mul_v(X->R, X->p, out->p);
    for (int i = 0; i < 3; i++)
        out->p[i] = -out->p[i];
}
/* Motion vector m_B (in B) -> out (in A). out may not alias m. */
static inline void rb_xform_motion(const rb_xform *X, const double m[6], double out[6])
{
    double pw[3];
    rb_m3_mul_v(X->R, m + 3, out + 3);
    rb_m3_mul_v(X->R, m, out);
    rb_v3_cross(X->p, out + 3, pw);
    for (int i = 0; i < 3; i++)
        out[i] += pw[i];
}
/* Motion vector m_A (in A) -> out (in B). out may not alias m. */
static inline void rb_xform_motion_inv(const rb_xform *X, const double m[6], double out[6])
{
    double pw[3], v[3];
    rb_v3_cross(X->p, m + 3, pw);
    for (int i = 0; i < 3; i++)
        v[i] = m[i] - pw[i];
    rb_m3t_mul_v(X->R, m + 3, out + 3);
    rb_m3t_mul_v(X->R, v, out);
}
/* Force vector f_B (in B) -> out (in A). out may not alias f. */
static inline void rb_xform_force(const rb_xform *X, const double f[6], double out[6])
{
    double pf[3];
    rb_m3_mul_v(X->R, f, out);
    rb_m3_mul_v(X->R, f + 3, out + 3);
    rb_v3_cross(X->p, out, pf);
    for (int i = 0; i < 3; i++)
        out[3 + i] += pf[i];
}
/* Force vector f_A (in A) -> out (in B). out may not alias f. */
static inline void rb_xform_force_inv(const rb_xform *X, const double f[6], double out[6])
{
    double pf[3], t[3];
    rb_v3_cross(X->p, f, pf);
    for (int i = 0; i < 3; i++)
        t[i] = f[3 + i] - pf[i];
    rb_m3t_mul_v(X->R, f, out);
    rb_m3t_mul_v(X->R, t, out + 3);
}

/* ---- 6D products ------------------------------------------------------------------------------------ */
/* out = a x_m b = [w_a x v_b + v_a x w_b; w_a x w_b] (motion cross motion; out may not alias) */
static inline void rb_cross_motion(const double a[6], const double b[6], double out[6])
{
    double t[3];
    rb_v3_cross(a + 3, b, out);
    rb_v3_cross(a, b + 3, t);
    for (int i = 0; i < 3; i++)
        out[i] += t[i];
    rb_v3_cross(a + 3, b + 3, out + 3);
}
/* out = a x_f f = [w_a x f; w_a x tau + v_a x f] (motion cross force; out may not alias) */
static inline void rb_cross_force(const double a[6], const double f[6], double out[6])
{
    double t[3];
    rb_v3_cross(a + 3, f, out);
    rb_v3_cross(a + 3, f + 3, out + 3);
    rb_v3_cross(a, f, t);
    for (int i = 0; i < 3; i++)
        out[3 + i] += t[i];
}

/* ---- inertia ------------------------------------------------------------------------------------------ */
/* Momentum of a body with parameters pi moving with twist m: out = I(pi) m (out may not alias m). */
static inline void rb_inertia_mul(const double pi[10], const double m[6], double out[6])
{
    const double mass = pi[0], *h = pi + 1, *v = m, *w = m + 3;
    double hw[3], hv[3];
    rb_v3_cross(h, w, hw);
    rb_v3_cross(h, v, hv);
    out[0] = mass * v[0] - hw[0], out[1] = mass * v[1] - hw[1], out[2] = mass * v[2] - hw[2];
    out[3] = pi[4] * w[0] + pi[5] * w[1] + pi[6] * w[2] + hv[0];
    out[4] = pi[5] * w[0] + pi[7] * w[1] + pi[8] * w[2] + hv[1];
    out[5] = pi[6] * w[0] + pi[8] * w[1] + pi[9] * w[2] + hv[2];
}
/* Parameters of a body in frame A from its parameters in frame B (pose X = A_X_B):
 *   h_A = R h_B + m p,
 *   I_A = R I_B R^T - [p]x[R h_B]x - [R h_B]x[p]x - m [p]x[p]x   (parallel axes, exact).
 * out may not alias pi. */
static inline void rb_inertia_to_parent(const rb_xform *X, const double pi[10], double out[10])
{
    const double m = pi[0], *p = X->p;
    double Rh[3], IB[9] = {pi[4], pi[5], pi[6], pi[5], pi[7], pi[8], pi[6], pi[8], pi[9]}, RI[9], IA[9];
    rb_m3_mul_v(X->R, pi + 1, Rh);
    rb_m3_mul(X->R, IB, RI);
    for (int i = 0; i < 3; i++) /* IA = RI R^T */
        for (int j = 0; j < 3; j++)
            IA[3 * i + j] = RI[3 * i] * X->R[3 * j] + RI[3 * i + 1] * X->R[3 * j + 1] + RI[3 * i + 2] * X->R[3 * j + 2];
    /* Shifting the origin by -p: I_A = I' - [p]x[Rh]x - [Rh]x[p]x - m [p]x[p]x, where [a]x[b]x =
     * b a^T - (a.b) 1. */
    double pRh = rb_v3_dot(p, Rh), pp = rb_v3_dot(p, p);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double delta = i == j ? 1.0 : 0.0;
            IA[3 * i + j] +=
                -(Rh[i] * p[j] - pRh * delta) - (p[i] * Rh[j] - pRh * delta) - m * (p[i] * p[j] - pp * delta);
        }
    out[0] = m;
    for (int i = 0; i < 3; i++)
        out[1 + i] = Rh[i] + m * p[i];
    out[4] = IA[0], out[5] = IA[1], out[6] = IA[2], out[7] = IA[4], out[8] = IA[5], out[9] = IA[8];
}

RB_API_END

#endif
