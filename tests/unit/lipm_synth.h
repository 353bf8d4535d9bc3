/* Synthetic LIPM walking data for the lipm_com tests and benchmark: a ZMP reference moving between two feet
 * (piecewise linear: a rest, then the thesis's gait timing, single support 0.6 s and double support 0.9 s, 0.1 m
 * steps forward, feet at y = +-0.09 m), and the bounded solution of c_ddot = w^2 (c - p), w^2 = g / z_c, for it,
 *     c = (w / 2) (F + B),  F = int_{-inf}^t e^{-w (t - s)} p ds,  B = int_t^inf e^{-w (s - t)} p ds,
 * computed exactly for p linear between samples; c_dot = (w^2 / 2) (B - F), c_ddot = w^2 (c - p). */
#ifndef LIPM_SYNTH_H
#define LIPM_SYNTH_H

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#define LS_FOOT_Y 0.09
#define LS_STEP_X 0.1

typedef struct lipm_synth {
    size_t n;
    double T, z_c, g;
    double *t;                /* n */
    double *p, *c, *cd, *cdd; /* 2 n each (x y per sample) */
    unsigned char *phase;     /* n: 0 double support, 1 left, 2 right */
    double *foot;             /* 4 n: left x y, right x y (the feet's positions) */
} lipm_synth;

typedef struct ls_knot {
    double t, x, y;
} ls_knot;

/* The ZMP knots, phases and feet of the gait: rest [0, 1), then per step DS 0.9 s (0.5 s before the first) and SS
 * 0.6 s alternating left / right, the last single support ending by t_end - 1.5 s, then back to mid-feet. */
static inline size_t ls_knots(double t_end, ls_knot *k, size_t cap)
{
    size_t n = 0;
    double t = 1.0, lx = 0, rx = 0;
    k[n++] = (ls_knot){0, 0, 0};
    k[n++] = (ls_knot){1.0, 0, 0};
    int left = 1;
    double ds = 0.5;
    while (t + ds + 0.6 <= t_end - 1.5 && n + 3 < cap) {
        double x = left ? lx : rx, y = left ? LS_FOOT_Y : -LS_FOOT_Y;
        k[n++] = (ls_knot){t + ds, x, y};
        k[n++] = (ls_knot){t + ds + 0.6, x, y};
        /* the swing foot lands one step ahead of the stance foot */
        if (left)
            rx = lx + LS_STEP_X;
        else
            lx = rx + LS_STEP_X;
        t += ds + 0.6;
        ds = 0.9;
        left = !left;
    }
    double mx = 0.5 * (lx + rx);
    k[n++] = (ls_knot){t + 0.9, mx, 0};
    k[n++] = (ls_knot){t_end + 1.0, mx, 0};
    return n;
}

static inline void ls_free(lipm_synth *s)
{
    free(s->t), free(s->p), free(s->c), free(s->cd), free(s->cdd), free(s->phase), free(s->foot);
}

/* duration s, period T, CoM height z_c. */
static inline int ls_make(lipm_synth *s, double duration, double T, double z_c, double g)
{
    ls_knot k[64];
    size_t nk = ls_knots(duration, k, 64), n = (size_t)llround(duration / T) + 1;
    s->n = n, s->T = T, s->z_c = z_c, s->g = g;
    s->t = calloc(n, sizeof *s->t);
    s->p = calloc(2 * n, sizeof *s->p), s->c = calloc(2 * n, sizeof *s->c);
    s->cd = calloc(2 * n, sizeof *s->cd), s->cdd = calloc(2 * n, sizeof *s->cdd);
    s->phase = calloc(n, 1), s->foot = calloc(4 * n, sizeof *s->foot);
    double *F = calloc(n, sizeof *F), *B = calloc(n, sizeof *B);
    if (!s->t || !s->p || !s->c || !s->cd || !s->cdd || !s->phase || !s->foot || !F || !B) {
        free(F), free(B);
        return -1;
    }
    size_t j = 0;
    double lx = 0, rx = 0;
    for (size_t i = 0; i < n; i++) {
        double t = i * T;
        s->t[i] = t;
        while (j + 2 < nk && k[j + 1].t <= t)
            j++;
        double a = (t - k[j].t) / (k[j + 1].t - k[j].t);
        if (a > 1)
            a = 1;
        s->p[2 * i] = k[j].x + a * (k[j + 1].x - k[j].x);
        s->p[2 * i + 1] = k[j].y + a * (k[j + 1].y - k[j].y);
        /* single support between a knot pair at the same point off the mid-line */
        bool ss = k[j].y == k[j + 1].y && k[j].x == k[j + 1].x && k[j].y != 0 && a < 1;
        s->phase[i] = ss ? (k[j].y > 0 ? 1 : 2) : 0;
        /* a foot moves only while the other one supports: it lands at the next knot of its side */
        if (s->phase[i] == 1)
            rx = k[j].x + LS_STEP_X;
        if (s->phase[i] == 2)
            lx = k[j].x + LS_STEP_X;
        s->foot[4 * i] = lx, s->foot[4 * i + 1] = LS_FOOT_Y;
        s->foot[4 * i + 2] = rx, s->foot[4 * i + 3] = -LS_FOOT_Y;
    }
    double w = sqrt(g / z_c), E = exp(-w * T);
    double i0 = (1 - E) / w, i1f = T / w - (1 - E) / (w * w), i1b = (1 - E * (1 + w * T)) / (w * w);
    for (int ax = 0; ax < 2; ax++) {
        F[0] = s->p[ax] / w;
        for (size_t i = 1; i < n; i++) {
            double p0 = s->p[2 * (i - 1) + ax], m = (s->p[2 * i + ax] - p0) / T;
            F[i] = E * F[i - 1] + p0 * i0 + m * i1f;
        }
        B[n - 1] = s->p[2 * (n - 1) + ax] / w;
        for (size_t i = n - 1; i-- > 0;) {
            double p0 = s->p[2 * i + ax], m = (s->p[2 * (i + 1) + ax] - p0) / T;
            B[i] = E * B[i + 1] + p0 * i0 + m * i1b;
        }
        for (size_t i = 0; i < n; i++) {
            s->c[2 * i + ax] = 0.5 * w * (F[i] + B[i]);
            s->cd[2 * i + ax] = 0.5 * w * w * (B[i] - F[i]);
            s->cdd[2 * i + ax] = w * w * (s->c[2 * i + ax] - s->p[2 * i + ax]);
        }
    }
    free(F), free(B);
    return 0;
}

#endif
