/* Time per sample of the FBSE joint-friction estimator (roboest/observers.h, rb_fbse_step: both legs of the 12-DoF
 * walker; the per-joint RLS included) on the walk datasets/walk_friction.mat, for each method: nonslip with the
 * thesis's minimum-norm solve and with the gyro's derivative, filtered with the filtered and the literal regressors;
 * each with the gait's phase and with contact from the normal force. Target: 40 us per sample. Never a timed test:
 * it prints a table (no allocation per step: tests/unit/test_observers_fbse.c, no_allocation_per_step).
 * Timing: thread CPU time, the whole walk (10601 samples) once as warm-up, then the median of 7 passes over it.
 * Usage: bench_fbse ROOT (the source tree: ROOT/datasets/...). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roboest/io.h"
#include "roboest/observers.h"
#include "bench_timing.h"

#define NJ 12
#define PASSES 7

static void die(const char *what, const rb_err *err)
{
    fprintf(stderr, "bench_fbse: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

static size_t T;
static double *g_t, *g_q, *g_dq, *g_tau, *g_ft, *g_acc, *g_gyro, *g_R, *g_phase;

static const double *chan(const rb_log *log, const char *name, size_t n)
{
    const rb_channel *c = rb_log_find(log, name);
    if (!c || c->n_elements != n || c->n_samples != T)
        die(name, NULL);
    return c->data;
}

static void load(const char *root)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/datasets/walk_friction.mat", root);
    rb_log *log = NULL;
    rb_err err;
    if (rb_log_read(path, &log, &err))
        die(path, &err);
    const rb_channel *qc = rb_log_find(log, "joints_state/positions");
    if (!qc)
        die("joints_state/positions", NULL);
    T = qc->n_samples;
    static const double KT = 0.111, RG[NJ] = {100, -160, 100, -100, 100, -160, -100, 160, -100, 100, -100, 160};
    const double *cur = chan(log, "motors_state/currents", NJ), *fl = chan(log, "FTs/l_ankle_ft_sensor", 6),
                 *fr = chan(log, "FTs/r_ankle_ft_sensor", 6), *rpy = chan(log, "orientations/waist_imu", 3);
    g_t = malloc(T * 8), g_q = malloc(T * NJ * 8), g_dq = malloc(T * NJ * 8), g_tau = malloc(T * NJ * 8);
    g_ft = malloc(T * 12 * 8), g_acc = malloc(T * 3 * 8), g_gyro = malloc(T * 3 * 8), g_R = malloc(T * 9 * 8);
    g_phase = malloc(T * 8);
    memcpy(g_t, qc->time, T * 8), memcpy(g_q, qc->data, T * NJ * 8);
    memcpy(g_dq, chan(log, "joints_state/velocities", NJ), T * NJ * 8);
    memcpy(g_acc, chan(log, "accelerometers/waist_imu", 3), T * 3 * 8);
    memcpy(g_gyro, chan(log, "gyros/waist_imu", 3), T * 3 * 8);
    memcpy(g_phase, chan(log, "truth/gait/phase", 1), T * 8);
    for (size_t k = 0; k < T; k++) {
        for (size_t j = 0; j < NJ; j++)
            g_tau[k * NJ + j] = KT * RG[j] * cur[k * NJ + j];
        memcpy(g_ft + 12 * k, fl + 6 * k, 48), memcpy(g_ft + 12 * k + 6, fr + 6 * k, 48);
        rb_m3_from_rpy(rpy[3 * k], rpy[3 * k + 1], rpy[3 * k + 2], g_R + 9 * k);
    }
    rb_log_free(log);
}

static double time_case(const rb_model *m, rb_fbse_method method, rb_fbse_alpha alpha, rb_fbse_regressors reg,
                        bool phase)
{
    rb_fbse_config c;
    rb_fbse_config_init(&c);
    c.feet[0] = "l_sole", c.feet[1] = "r_sole", c.imu_frame = "waist_imu";
    c.ft[0] = "l_ankle_ft_sensor", c.ft[1] = "r_ankle_ft_sensor";
    c.method = method, c.alpha = alpha, c.regressors = reg;
    double t[PASSES];
    for (int p = -1; p < PASSES; p++) {
        rb_fbse *e = NULL;
        rb_err err;
        if (rb_fbse_alloc(m, &c, &e, &err))
            die("rb_fbse_alloc", &err);
        double t0 = thread_seconds();
        for (size_t k = 0; k < T; k++) {
            rb_fbse_sample s = {g_q + NJ * k,  g_dq + NJ * k,  g_tau + NJ * k, g_ft + 12 * k,
                                g_acc + 3 * k, g_gyro + 3 * k, g_R + 9 * k,    phase ? (int)g_phase[k] : -1};
            if (rb_fbse_step(e, k, g_t[k], &s, &err))
                die("rb_fbse_step", &err);
        }
        if (p >= 0)
            t[p] = (thread_seconds() - t0) / (double)T * 1e6;
        rb_fbse_free(e);
    }
    qsort(t, PASSES, sizeof t[0], cmp_double);
    return t[PASSES / 2];
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_fbse ROOT\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/datasets/walker_biped.urdf", argv[1]);
    rb_model *m = NULL;
    rb_err err;
    rb_model_opts o = {.floating = true};
    if (rb_model_load_urdf(path, &o, &m, &err))
        die(path, &err);
    load(argv[1]);
    printf("| case | us per sample (phase given) | us per sample (contact from the force) |\n| --- | --- | --- |\n");
    struct {
        const char *name;
        rb_fbse_method m;
        rb_fbse_alpha a;
        rb_fbse_regressors r;
    } cases[] = {{"nonslip, min_norm", RB_FBSE_NONSLIP, RB_FBSE_ALPHA_MIN_NORM, RB_FBSE_REG_FILTERED},
                 {"nonslip, gyro_diff", RB_FBSE_NONSLIP, RB_FBSE_ALPHA_GYRO_DIFF, RB_FBSE_REG_FILTERED},
                 {"filtered, filtered regressors", RB_FBSE_FILTERED, RB_FBSE_ALPHA_MIN_NORM, RB_FBSE_REG_FILTERED},
                 {"filtered, literal (4.39)", RB_FBSE_FILTERED, RB_FBSE_ALPHA_MIN_NORM, RB_FBSE_REG_LITERAL}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        printf("| %s | %.2f | %.2f |\n", cases[i].name, time_case(m, cases[i].m, cases[i].a, cases[i].r, true),
               time_case(m, cases[i].m, cases[i].a, cases[i].r, false));
    printf("\ntarget: 40 us per sample (both legs)\n");
    rb_model_free(m);
    return 0;
}
