/* Helpers shared by the filter unit tests: small random linear systems and comparisons. */
#ifndef ROBOEST_TEST_FILTERS_SUPPORT_H
#define ROBOEST_TEST_FILTERS_SUPPORT_H

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "roboest/core.h"
#include "roboest/filters.h"

#define FS_MAXN 8
#define FS_MAXM 8

/* x+ = F x + B u, z = H x (rows `rows` of the full H when drop >= 0: that row removed). */
typedef struct fs_linear {
    size_t n, m, nu;
    double F[FS_MAXN * FS_MAXN], B[FS_MAXN], H[FS_MAXM * FS_MAXN];
    double Q[FS_MAXN * FS_MAXN], R[FS_MAXM * FS_MAXM], x0[FS_MAXN], P0[FS_MAXN * FS_MAXN];
} fs_linear;

/* A = G G^T / n + diag_add I, G with N(0, scale^2) entries. */
static inline void fs_rand_spd(rb_rng *rng, size_t n, double scale, double diag_add, double *A)
{
    double G[FS_MAXN * FS_MAXN];
    for (size_t i = 0; i < n * n; i++)
        G[i] = scale * rb_rng_normal(rng);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            double s = 0.0;
            for (size_t k = 0; k < n; k++)
                s += G[i * n + k] * G[j * n + k];
            A[i * n + j] = s / (double)n + (i == j ? diag_add : 0.0);
        }
    }
}

/* Random stable linear system (infinity norm of F at most 0.98) with nu = 1. */
static inline void fs_linear_make(fs_linear *s, size_t n, size_t m, uint64_t seed)
{
    rb_rng rng;
    rb_rng_seed(&rng, seed);
    memset(s, 0, sizeof *s);
    s->n = n;
    s->m = m;
    s->nu = 1;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++)
            s->F[i * n + j] = (i == j ? 0.9 : 0.0) + 0.1 * rb_rng_normal(&rng);
        s->B[i] = rb_rng_normal(&rng);
        s->x0[i] = rb_rng_normal(&rng);
    }
    for (size_t i = 0; i < m * n; i++)
        s->H[i] = rb_rng_normal(&rng);
    double norm = 0.0;
    for (size_t i = 0; i < n; i++) {
        double row = 0.0;
        for (size_t j = 0; j < n; j++)
            row += fabs(s->F[i * n + j]);
        norm = row > norm ? row : norm;
    }
    if (norm > 0.98)
        for (size_t i = 0; i < n * n; i++)
            s->F[i] *= 0.98 / norm;
    fs_rand_spd(&rng, n, 0.3, 0.01, s->Q);
    fs_rand_spd(&rng, m, 0.5, 0.1, s->R);
    fs_rand_spd(&rng, n, 1.0, 0.5, s->P0);
}

static inline int fs_lin_f(void *user, const double *x, const double *u, double dt, double *out, rb_err *err)
{
    (void)dt;
    (void)err;
    const fs_linear *s = user;
    for (size_t i = 0; i < s->n; i++) {
        double v = u ? s->B[i] * u[0] : 0.0;
        for (size_t j = 0; j < s->n; j++)
            v += s->F[i * s->n + j] * x[j];
        out[i] = v;
    }
    return RB_OK;
}

static inline int fs_lin_h(void *user, const double *x, double *z, rb_err *err)
{
    (void)err;
    const fs_linear *s = user;
    for (size_t i = 0; i < s->m; i++) {
        double v = 0.0;
        for (size_t j = 0; j < s->n; j++)
            v += s->H[i * s->n + j] * x[j];
        z[i] = v;
    }
    return RB_OK;
}

static inline int fs_lin_jf(void *user, const double *x, const double *u, double dt, double *F, rb_err *err)
{
    (void)x;
    (void)u;
    (void)dt;
    (void)err;
    const fs_linear *s = user;
    memcpy(F, s->F, s->n * s->n * sizeof(double));
    return RB_OK;
}

static inline int fs_lin_jh(void *user, const double *x, double *H, rb_err *err)
{
    (void)x;
    (void)err;
    const fs_linear *s = user;
    memcpy(H, s->H, s->m * s->n * sizeof(double));
    return RB_OK;
}

/* Options for a filter on the linear system (KF: matrices; EKF/UKF: the callbacks above). */
static inline void fs_linear_opts(const fs_linear *s, rb_filter_opts *o)
{
    rb_filter_opts_init(o);
    o->n = s->n;
    o->m = s->m;
    o->nu = s->nu;
    o->x0 = s->x0;
    o->P0 = s->P0;
    o->Q = s->Q;
    o->R = s->R;
    o->F = s->F;
    o->B = s->B;
    o->H = s->H;
    o->f = fs_lin_f;
    o->h = fs_lin_h;
    o->user = (void *)s;
}

/* max_i |a_i - b_i| / (1 + |b_i|) */
static inline double fs_maxrel(const double *a, const double *b, size_t n)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]) / (1.0 + fabs(b[i]));
        if (!(d <= worst))
            worst = d;
    }
    return worst;
}

#endif
