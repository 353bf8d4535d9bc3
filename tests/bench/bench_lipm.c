/* Time per sample of the LIPM CoM estimator (roboest/observers.h, rb_lipm_step: two axes, each an adaptive KF step
 * of the thesis's form 1 (n = 3) or form 2 (n = 4), the ZMP error and its low-pass), alone and with the per-sample
 * helpers a stage adds before it (two foot CoPs, the ZMP (3.1), the CoM acceleration (3.4); the kinematics of q
 * excluded). Target: 3 us per sample for both axes. Never a timed test: it prints a table.
 * Inputs: the synthetic walk of tests/unit/lipm_synth.h at 1 kHz with noise (the cost does not depend on them).
 * Timing: thread CPU time, 300 warm-up samples, then the median of 15 batches of 1000 samples.
 * Usage: bench_lipm. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../unit/lipm_synth.h"
#include "roboest/observers.h"
#include "bench_timing.h"

#define SAMPLES 1000
#define BATCHES 15
#define WARMUP 300

static lipm_synth g_s;

/* One sample's inputs at index i of the walk; with helpers, p and a through the stage's per-sample functions. */
static void inputs(size_t i, bool helpers, double p[2], double a[2])
{
    const double *pz = g_s.p + 2 * i, *cdd = g_s.cdd + 2 * i;
    if (!helpers) {
        p[0] = pz[0], p[1] = pz[1], a[0] = cdd[0], a[1] = cdd[1];
        return;
    }
    double w[2][6] = {{0, 0, 300, 300 * 0.01, -300 * (pz[0] - g_s.foot[4 * i]), 0},
                      {0, 0, 230, 0, -230 * (pz[0] - g_s.foot[4 * i + 2]), 0}};
    double fn[2], rho[4], cop[3];
    for (int f = 0; f < 2; f++) {
        rb_lipm_foot_cop(w[f], 0.0, cop, &fn[f]);
        rho[2 * f] = g_s.foot[4 * i + 2 * f] + cop[0], rho[2 * f + 1] = g_s.foot[4 * i + 2 * f + 1] + cop[1];
    }
    rb_lipm_zmp(2, fn, rho, NULL, 20, p);
    double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, f[3] = {cdd[0], cdd[1], 9.81}, wv[3] = {0.01, -0.02, 0.03};
    double wd[3] = {0.1, 0.2, -0.1}, r[3] = {0.01, -0.01, 0.02}, c[3];
    rb_lipm_com_acc(R, f, wv, wd, r, 9.81, c);
    a[0] = c[0], a[1] = c[1];
}

static double time_case(rb_lipm_form form, bool helpers)
{
    rb_lipm_config c;
    rb_lipm_config_init(&c);
    c.form = form, c.z_c = 0.8;
    rb_lipm *e = NULL;
    rb_err err;
    if (rb_lipm_alloc(&c, &e, &err)) {
        fprintf(stderr, "bench_lipm: %s\n", err.msg);
        exit(1);
    }
    size_t k = 0;
    double p[2], a[2], t[BATCHES];
    for (size_t i = 0; i < WARMUP; i++, k++) {
        inputs(k % g_s.n, helpers, p, a);
        rb_lipm_step(e, k, 1e-3 * (double)k, p, a, &err);
    }
    for (int b = 0; b < BATCHES; b++) {
        double t0 = thread_seconds();
        for (size_t i = 0; i < SAMPLES; i++, k++) {
            inputs(k % g_s.n, helpers, p, a);
            if (rb_lipm_step(e, k, 1e-3 * (double)k, p, a, &err)) {
                fprintf(stderr, "bench_lipm: %s\n", err.msg);
                exit(1);
            }
        }
        t[b] = (thread_seconds() - t0) / SAMPLES * 1e6;
    }
    rb_lipm_free(e);
    qsort(t, BATCHES, sizeof t[0], cmp_double);
    return t[BATCHES / 2];
}

int main(void)
{
    if (ls_make(&g_s, 12.0, 1e-3, 0.8, 9.81)) {
        fprintf(stderr, "bench_lipm: out of memory\n");
        return 1;
    }
    printf("| case | us per sample (x and y) |\n| --- | --- |\n");
    printf("| form 1 (n = 3), filters only | %.3f |\n", time_case(RB_LIPM_FORM1, false));
    printf("| form 2 (n = 4), filters only | %.3f |\n", time_case(RB_LIPM_FORM2, false));
    printf("| form 1 with the CoP, ZMP and IMU helpers | %.3f |\n", time_case(RB_LIPM_FORM1, true));
    printf("| form 2 with the CoP, ZMP and IMU helpers | %.3f |\n", time_case(RB_LIPM_FORM2, true));
    printf("\ntarget: 3 us per sample for both axes\n");
    ls_free(&g_s);
    return 0;
}
