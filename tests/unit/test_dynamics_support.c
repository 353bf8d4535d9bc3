/* Helpers for the lib/dynamics tests (no tests here): see dyn_support.h. */
#include "dyn_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t trng_next(trng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double trng_uniform(trng *r, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(trng_next(r) >> 11) * 0x1.0p-53);
}

size_t trng_index(trng *r, size_t n) { return n ? (size_t)(trng_next(r) % n) : 0; }

void trng_unit(trng *r, double v[3])
{
    double n;
    do {
        for (int k = 0; k < 3; k++)
            v[k] = trng_uniform(r, -1.0, 1.0);
        n = sqrt(rb_v3_dot(v, v));
    } while (n < 0.1 || n > 1.0);
    for (int k = 0; k < 3; k++)
        v[k] /= n;
}

static void random_quat(trng *r, double q[4])
{
    double n;
    do {
        for (int k = 0; k < 4; k++)
            q[k] = trng_uniform(r, -1.0, 1.0);
        n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    } while (n < 0.1 || n > 1.0);
    for (int k = 0; k < 4; k++)
        q[k] /= n;
}

void trng_rotation(trng *r, double R[9])
{
    double q[4];
    random_quat(r, q);
    rb_m3_from_quat(q, R);
}

void trng_inertia(trng *r, double pi[10])
{
    double m = trng_uniform(r, 0.2, 4.0), c[3], R[9];
    /* principal second moments s_k >= 0: I = diag(s2 + s3, s1 + s3, s1 + s2) meets the triangle inequality */
    double s[3];
    for (int k = 0; k < 3; k++) {
        c[k] = trng_uniform(r, -0.3, 0.3);
        s[k] = m * trng_uniform(r, 0.001, 0.04);
    }
    double D[3] = {s[1] + s[2], s[0] + s[2], s[0] + s[1]}, Ic[9];
    trng_rotation(r, R);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            Ic[3 * i + j] =
                R[3 * i] * D[0] * R[3 * j] + R[3 * i + 1] * D[1] * R[3 * j + 1] + R[3 * i + 2] * D[2] * R[3 * j + 2];
    double cc = rb_v3_dot(c, c), I[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            I[3 * i + j] = Ic[3 * i + j] + m * ((i == j ? cc : 0.0) - c[i] * c[j]);
    pi[0] = m;
    for (int k = 0; k < 3; k++)
        pi[1 + k] = m * c[k];
    pi[4] = I[0], pi[5] = I[1], pi[6] = I[2], pi[7] = I[4], pi[8] = I[5], pi[9] = I[8];
}

rb_model *random_tree(trng *r, size_t n_bodies, bool floating)
{
    rb_model *m = NULL;
    rb_err err;
    double pi[10];
    char name[32], joint[32];
    trng_inertia(r, pi);
    if (rb_model_begin(&m, "random", "b0", pi, floating, &err) < 0)
        return NULL;
    for (size_t i = 1; i < n_bodies; i++) {
        int parent = trng_uniform(r, 0, 1) < 0.6 ? (int)i - 1 : (int)trng_index(r, i);
        double u = trng_uniform(r, 0, 1), axis[3];
        rb_joint_type type = u < 0.15 ? RB_JOINT_FIXED : u < 0.35 ? RB_JOINT_PRISMATIC : RB_JOINT_REVOLUTE;
        rb_xform X;
        if (trng_uniform(r, 0, 1) < 0.3)
            rb_m3_identity(X.R);
        else
            trng_rotation(r, X.R);
        for (int k = 0; k < 3; k++)
            X.p[k] = trng_uniform(r, -0.5, 0.5);
        if (trng_uniform(r, 0, 1) < 0.3) {
            memset(axis, 0, sizeof axis);
            axis[trng_index(r, 3)] = trng_uniform(r, 0, 1) < 0.5 ? -1.0 : 1.0;
        } else {
            trng_unit(r, axis);
        }
        trng_inertia(r, pi);
        if (type == RB_JOINT_FIXED && trng_uniform(r, 0, 1) < 0.3)
            memset(pi, 0, sizeof pi);
        snprintf(name, sizeof name, "b%zu", i);
        snprintf(joint, sizeof joint, "j%zu", i);
        if (rb_model_add_body(m, name, parent, type, joint, &X, type == RB_JOINT_FIXED ? NULL : axis, pi, &err) < 0)
            goto fail;
    }
    for (size_t k = 0; k < n_bodies / 2 + 1; k++) {
        rb_xform X;
        trng_rotation(r, X.R);
        for (int j = 0; j < 3; j++)
            X.p[j] = trng_uniform(r, -0.4, 0.4);
        snprintf(name, sizeof name, "f%zu", k);
        if (rb_model_add_frame(m, name, (int)trng_index(r, n_bodies), &X, RB_FRAME_USER, &err) < 0)
            goto fail;
    }
    if (rb_model_end(m, &err) < 0)
        goto fail;
    return m;
fail:
    fprintf(stderr, "random_tree: %s\n", err.msg);
    rb_model_free(m);
    return NULL;
}

void random_vector(trng *r, double *x, size_t n, double lo, double hi)
{
    for (size_t k = 0; k < n; k++)
        x[k] = trng_uniform(r, lo, hi);
}

void random_state(trng *r, const rb_model *m, double *q, double *nu, double vmax, double *nu_dot, double amax)
{
    size_t qo = m->floating ? 7 : 0;
    if (q) {
        if (m->floating) {
            for (int k = 0; k < 3; k++)
                q[k] = trng_uniform(r, -1.0, 1.0);
            random_quat(r, q + 3);
        }
        for (size_t k = 0; k < m->n_dofs; k++) {
            bool prismatic = m->bodies[m->dof_body[k]].type == RB_JOINT_PRISMATIC;
            q[qo + k] = prismatic ? trng_uniform(r, -0.5, 0.5) : trng_uniform(r, -M_PI, M_PI);
        }
    }
    if (nu)
        random_vector(r, nu, m->nv, -vmax, vmax);
    if (nu_dot)
        random_vector(r, nu_dot, m->nv, -amax, amax);
}

double max_abs(const double *a, size_t n)
{
    double e = 0.0;
    for (size_t k = 0; k < n; k++)
        e = fmax(e, fabs(a[k]));
    return e;
}

double rel_err(const double *a, const double *b, size_t n)
{
    double e = 0.0;
    for (size_t k = 0; k < n; k++)
        e = fmax(e, fabs(a[k] - b[k]));
    return e / fmax(1.0, max_abs(b, n));
}

void fk_frame_pose(const rb_model *m, rb_dyn *ws, const double *q, size_t f, rb_xform *X)
{
    rb_dyn_kinematics(m, ws, q, NULL, NULL, NULL);
    rb_dyn_frame_pose(m, ws, f, X, NULL);
}

void pose_rate(const rb_xform *Xm, const rb_xform *Xp, double dt, rb_dyn_rep rep, const rb_xform *X, double out[6])
{
    double pd[3], dR[9], W[9], w[3];
    for (int k = 0; k < 3; k++)
        pd[k] = (Xp->p[k] - Xm->p[k]) / dt;
    for (int k = 0; k < 9; k++)
        dR[k] = (Xp->R[k] - Xm->R[k]) / dt;
    if (rep == RB_DYN_BODY) {
        rb_m3t_mul(X->R, dR, W); /* R^T R_dot = [w_B]x */
        rb_m3t_mul_v(X->R, pd, out);
    } else {
        double Rt[9];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                Rt[3 * i + j] = X->R[3 * j + i];
        rb_m3_mul(dR, Rt, W); /* R_dot R^T = [w]x */
        memcpy(out, pd, sizeof pd);
    }
    w[0] = 0.5 * (W[7] - W[5]), w[1] = 0.5 * (W[2] - W[6]), w[2] = 0.5 * (W[3] - W[1]);
    memcpy(out + 3, w, sizeof w);
    if (rep == RB_DYN_INERTIAL) { /* velocity of the body point at the world origin: p_dot - w x p */
        double wp[3];
        rb_v3_cross(w, X->p, wp);
        for (int k = 0; k < 3; k++)
            out[k] -= wp[k];
    }
}

void perturb(const rb_model *m, const double *q, size_t k, double t, double *q_out)
{
    double *e = calloc(m->nv, sizeof *e);
    e[k] = 1.0;
    rb_dyn_integrate(m, q, e, t, q_out);
    free(e);
}

void quat_from_m3(const double R[9], double q[4])
{
    double tr = R[0] + R[4] + R[8];
    if (tr > 0) {
        double s = 2.0 * sqrt(tr + 1.0);
        q[0] = 0.25 * s, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s, q[3] = (R[3] - R[1]) / s;
    } else if (R[0] > R[4] && R[0] > R[8]) {
        double s = 2.0 * sqrt(1.0 + R[0] - R[4] - R[8]);
        q[0] = (R[7] - R[5]) / s, q[1] = 0.25 * s, q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
    } else if (R[4] > R[8]) {
        double s = 2.0 * sqrt(1.0 + R[4] - R[0] - R[8]);
        q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = 0.25 * s, q[3] = (R[5] + R[7]) / s;
    } else {
        double s = 2.0 * sqrt(1.0 + R[8] - R[0] - R[4]);
        q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s, q[3] = 0.25 * s;
    }
}

/* Wrench of the world on the subtree of body i, by Newton-Euler on the subtree's bodies in world
 * coordinates: sum of momentum rates minus gravity minus external wrenches. Uses the kinematic state. */
void subtree_wrench(const rb_model *m, const rb_dyn *ws, size_t i, const rb_ext_wrench *ext, size_t n_ext, double W[6])
{
    memset(W, 0, 6 * sizeof *W);
    for (size_t j = i; j < m->n_bodies; j++) {
        size_t a = j;
        while (a > i && a != 0)
            a = (size_t)m->bodies[a].parent;
        if (a != i)
            continue;
        const rb_xform *X = rb_dyn_body_pose(ws, j);
        const double *v = rb_dyn_body_velocity(ws, j), *pi = m->bodies[j].inertia;
        double Ia[6], Iv[6], vIv[6], hd[6], hdW[6];
        const double *acc = rb_dyn_body_acceleration(ws, j);
        rb_inertia_mul(pi, acc, Ia);
        rb_inertia_mul(pi, v, Iv);
        rb_cross_force(v, Iv, vIv);
        for (int k = 0; k < 6; k++)
            hd[k] = Ia[k] + vIv[k];
        rb_xform_force(X, hd, hdW);
        /* gravity: force m g at the world CoM c = R h / m + p: moment c x m g = (R h + m p) x g */
        double Rh[3], mc[3], mg[3], cg[3];
        rb_m3_mul_v(X->R, pi + 1, Rh);
        for (int k = 0; k < 3; k++)
            mc[k] = Rh[k] + pi[0] * X->p[k], mg[k] = pi[0] * m->gravity[k];
        rb_v3_cross(mc, m->gravity, cg);
        for (int k = 0; k < 3; k++)
            W[k] += hdW[k] - mg[k], W[3 + k] += hdW[3 + k] - cg[k];
    }
    for (size_t e = 0; e < n_ext; e++) {
        const rb_frame *fr = &m->frames[ext[e].frame];
        size_t a = (size_t)fr->body;
        while (a > i && a != 0)
            a = (size_t)m->bodies[a].parent;
        if (a != i)
            continue;
        rb_xform XF;
        double wW[6];
        rb_dyn_frame_pose(m, ws, (size_t)ext[e].frame, &XF, NULL);
        if (ext[e].rep == RB_DYN_INERTIAL) {
            memcpy(wW, ext[e].w, sizeof wW);
        } else {
            double wF[6];
            if (ext[e].rep == RB_DYN_BODY)
                rb_xform_force(&XF, ext[e].w, wW);
            else { /* world axes about the frame origin */
                rb_xform T = XF;
                rb_m3_identity(T.R);
                memcpy(wF, ext[e].w, sizeof wF);
                rb_xform_force(&T, wF, wW);
            }
        }
        for (int k = 0; k < 6; k++)
            W[k] -= wW[k];
    }
}
