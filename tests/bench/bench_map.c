/* Time per sample of the MAP whole-body dynamics (roboest/observers.h, rb_map_step: kinematics, the constraint and
 * sensor rows, the normal equations and their solution, two refinement steps, the standard deviations) on the
 * project's humanoid (datasets/humanoid_lower_body.urdf, floating base): every joint (15; 22 bodies) and the right
 * leg's six (the other joints locked; 13 bodies), with its six FT sensors, three IMUs, the joint accelerations and
 * unknown wrenches at the four foot plates; the block-tree (sparse) and the dense solver, with and without the
 * standard deviations; and the C library allocations made by the steps. Targets (issue 17): sparse 100 us, dense 3 ms
 * per sample, no allocation. Never a timed test: it prints a table.
 * Timing: thread CPU time, OpenBLAS single-threaded (as the roboest command runs), 20 warm-up samples, then the
 * median of 9 batches of 200 samples (the dense solver: 9 x 20). Usage: bench_map ROOT [sparse|dense] (ROOT the repository; the
 * second argument runs one solver's cases only). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roboest/dynamics.h"
#include "roboest/observers.h"
#include "bench_allocs.h"
#include "bench_timing.h"

void openblas_set_num_threads(int);

#define SAMPLES 64
#define BATCHES 9

static const char *const imus[3] = {"waist_imu", "l_foot_imu", "r_foot_imu"};
static const char *const feet[4] = {"l_foot_front_contact", "l_foot_rear_contact", "r_foot_front_contact",
                                    "r_foot_rear_contact"};

typedef struct samples {
    size_t n;
    double *s, *sd, *sdd, *ft, *acc, *gyro; /* SAMPLES rows each */
} samples;

static unsigned long long lcg = 88172645463325252ULL;
static double uniform(double lo, double hi)
{
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (double)(lcg >> 11) / 9007199254740992.0;
}

/* Readings the model predicts for random walking-like states, plus sensor-like noise. */
static int make_samples(const rb_model *m, const int *acc, samples *S)
{
    size_t n = m->n_dofs;
    S->n = n;
    S->s = calloc(SAMPLES * n, sizeof(double)), S->sd = calloc(SAMPLES * n, sizeof(double));
    S->sdd = calloc(SAMPLES * n, sizeof(double)), S->ft = calloc(SAMPLES * 6 * m->n_ft, sizeof(double));
    S->acc = calloc(SAMPLES * 9, sizeof(double)), S->gyro = calloc(SAMPLES * 9, sizeof(double));
    rb_dyn *ws = NULL;
    rb_err err;
    if (rb_dyn_alloc(m, &ws, &err))
        return fprintf(stderr, "bench_map: %s\n", err.msg), 1;
    double *q = calloc(m->nq, sizeof(double)), *nu = calloc(m->nv, sizeof(double)),
           *nud = calloc(m->nv, sizeof(double));
    double *tau = calloc(m->nv, sizeof(double));
    for (size_t k = 0; k < SAMPLES; k++) {
        rb_dyn_neutral(m, q);
        for (size_t j = 0; j < n; j++)
            q[7 + j] = uniform(-0.4, 0.4), nu[6 + j] = uniform(-1, 1), nud[6 + j] = uniform(-5, 5);
        for (size_t j = 0; j < 6; j++)
            nu[j] = uniform(-0.3, 0.3), nud[j] = uniform(-2, 2);
        if (rb_dyn_rnea(m, ws, q, nu, nud, NULL, 0, tau, &err) ||
            rb_dyn_ft_wrenches(m, ws, S->ft + k * 6 * m->n_ft, &err) || rb_dyn_kinematics(m, ws, q, nu, nud, &err))
            return fprintf(stderr, "bench_map: %s\n", err.msg), 1;
        for (size_t i = 0; i < 3; i++) {
            double a[6], v[6];
            rb_dyn_frame_proper_acceleration(m, ws, (size_t)acc[i], RB_DYN_BODY, a, &err);
            rb_dyn_frame_velocity(m, ws, (size_t)acc[i], RB_DYN_BODY, v, &err);
            for (int c = 0; c < 3; c++)
                S->acc[9 * k + 3 * i + c] = a[c] + uniform(-0.03, 0.03),
                                       S->gyro[9 * k + 3 * i + c] = v[3 + c] + uniform(-0.005, 0.005);
        }
        for (size_t j = 0; j < 6 * m->n_ft; j++)
            S->ft[k * 6 * m->n_ft + j] += uniform(-0.5, 0.5);
        memcpy(S->s + k * n, q + 7, n * sizeof(double));
        memcpy(S->sd + k * n, nu + 6, n * sizeof(double));
        for (size_t j = 0; j < n; j++)
            S->sdd[k * n + j] = nud[6 + j] + uniform(-1, 1);
    }
    free(q), free(nu), free(nud), free(tau);
    rb_dyn_free(ws);
    return 0;
}

static const char *only; /* argv[2]: "sparse" or "dense" runs those cases only (profiling) */

static int bench(const char *label, const rb_model *m, bool dense, bool cov, int reps)
{
    if (only && strcmp(only, dense ? "dense" : "sparse") != 0)
        return 0;
    int acc[3], unk[4], ft[8];
    for (int i = 0; i < 3; i++)
        acc[i] = (int)rb_model_frame_index(m, imus[i]);
    for (int i = 0; i < 4; i++)
        unk[i] = (int)rb_model_frame_index(m, feet[i]);
    for (size_t i = 0; i < m->n_ft; i++)
        ft[i] = (int)i;
    samples S;
    if (make_samples(m, acc, &S))
        return 1;
    static double var[64];
    for (int i = 0; i < 64; i++)
        var[i] = 0.25;
    rb_map_config c;
    rb_map_config_init(&c);
    c.ft = ft, c.n_ft = m->n_ft, c.var_ft = var, c.acc = acc, c.n_acc = 3, c.var_acc = var;
    c.gyro = acc, c.n_gyro = 3, c.var_gyro = var, c.ddq = true, c.var_ddq = var;
    c.unknown = unk, c.n_unknown = 4, c.dense = dense, c.covariance = cov;
    rb_map *map = NULL;
    rb_err err;
    if (rb_map_alloc(m, &c, &map, &err))
        return fprintf(stderr, "bench_map: %s\n", err.msg), 1;
    rb_map_diag d;
    rb_map_get_diag(map, &d);
    rb_map_out o;
    size_t n = S.n, nf = 6 * m->n_ft;
    for (int i = 0; i < 20; i++) {
        size_t k = (size_t)i % SAMPLES;
        rb_map_input in = {S.s + k * n,   S.sd + k * n,   S.sdd + k * n, S.ft + k * nf,
                           S.acc + 9 * k, S.gyro + 9 * k, NULL,          NULL};
        if (rb_map_step(map, &in, &err))
            return fprintf(stderr, "bench_map: %s\n", err.msg), 1;
    }
    double per[BATCHES];
    long steps = 0;
    allocs = 0;
    for (int b = 0; b < BATCHES; b++) {
        counting = 1;
        double t0 = thread_seconds();
        for (int r = 0; r < reps; r++) {
            size_t k = (size_t)r % SAMPLES;
            rb_map_input in = {S.s + k * n,   S.sd + k * n,   S.sdd + k * n, S.ft + k * nf,
                               S.acc + 9 * k, S.gyro + 9 * k, NULL,          NULL};
            rb_map_step(map, &in, &err);
            rb_map_get_out(map, &o);
        }
        per[b] = (thread_seconds() - t0) / reps * 1e6;
        counting = 0;
        steps += reps;
    }
    qsort(per, BATCHES, sizeof per[0], cmp_double);
    printf("| %s | %zu | %zu | %s%s | %.1f | %s | %.3g |\n", label, m->n_bodies, d.n_unknowns,
           dense ? "dense" : "sparse", cov ? " + std" : "", per[BATCHES / 2], dense ? "3000" : "100",
           (double)allocs / (double)steps);
    rb_map_free(map);
    free(S.s), free(S.sd), free(S.sdd), free(S.ft), free(S.acc), free(S.gyro);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3)
        return fprintf(stderr, "usage: bench_map ROOT [sparse|dense]\n"), 2;
    only = argc == 3 ? argv[2] : NULL;
    openblas_set_num_threads(1);
    char path[4096];
    snprintf(path, sizeof path, "%s/datasets/humanoid_lower_body.urdf", argv[1]);
    static const char *const leg[6] = {"r_hip_pitch", "r_hip_roll",    "r_hip_yaw",
                                       "r_knee",      "r_ankle_pitch", "r_ankle_roll"};
    rb_model_opts full = {.floating = true}, right = {.floating = true, .joints = leg, .n_joints = 6};
    rb_model *mf = NULL, *mr = NULL;
    rb_err err;
    if (rb_model_load_urdf(path, &full, &mf, &err) || rb_model_load_urdf(path, &right, &mr, &err))
        return fprintf(stderr, "bench_map: %s\n", err.msg), 1;
    printf("MAP whole-body dynamics, humanoid_lower_body (floating): 6 FT, 3 accelerometers + gyroscopes, joint "
           "accelerations, 4 unknown foot wrenches\n");
    printf("| model | bodies | unknowns | solver | us / sample (median of %d batches) | target | allocations / "
           "sample |\n",
           BATCHES);
    printf("| --- | ---: | ---: | --- | ---: | ---: | ---: |\n");
    int rc = 0;
    rc |= bench("every joint (15)", mf, false, true, 200);
    rc |= bench("every joint (15)", mf, false, false, 200);
    rc |= bench("every joint (15)", mf, true, true, 20);
    rc |= bench("every joint (15)", mf, true, false, 20);
    rc |= bench("right leg (6)", mr, false, true, 200);
    rc |= bench("right leg (6)", mr, true, true, 20);
    rb_model_free(mf);
    rb_model_free(mr);
    return rc;
}
