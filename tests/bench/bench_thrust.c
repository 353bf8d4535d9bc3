/* Time per sample of the thrust estimator's step (roboest/observers.h, rb_tekf_step: the kinematics, the CoM and the
 * centroidal momentum, the jets' and feet's poses, the EKF predict and update, the outputs) with four jets on the
 * floating humanoid lower body (datasets/humanoid_lower_body.urdf, frames l_hip_1, r_hip_1, chest, torso_1 taken as
 * jets; 12 joints), standing on two feet (n = 26, m = 18: the paper's sizes) and in flight (n = 14, m = 6), for
 * each variant. Target: 30 us per sample. Never a timed test: it prints a table.
 * Inputs: smooth synthetic motion and throttles, constant foot wrenches (the cost does not depend on the values).
 * Timing: thread CPU time, 300 warm-up samples, then the median of 15 batches of 1000 samples.
 * Usage: bench_thrust [source folder] (default RB_SOURCE or "."). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roboest/dynamics.h"
#include "roboest/observers.h"
#include "bench_timing.h"

void openblas_set_num_threads(int);

#define SAMPLES 1000
#define BATCHES 15
#define NJ 4

static void die(const char *msg)
{
    fprintf(stderr, "bench_thrust: %s\n", msg);
    exit(1);
}

static void states(const rb_model *m, double *q, double *nu, double *u, double *w, double *rpm)
{
    size_t nq = m->nq, nv = m->nv, n = m->n_dofs;
    for (size_t k = 0; k < SAMPLES; k++) {
        double t = 1e-3 * (double)k, *qk = q + k * nq, *vk = nu + k * nv;
        rb_dyn_neutral(m, qk);
        qk[2] = 0.9;
        for (size_t j = 0; j < nv; j++)
            vk[j] = 0.05 * cos((1 + 0.3 * (double)j) * t);
        for (size_t j = 0; j < n; j++)
            qk[nq - n + j] = 0.2 * sin((1 + 0.3 * (double)(j + 6)) * t);
        for (int i = 0; i < NJ; i++) {
            u[k * NJ + i] = 60 + 20 * sin(0.5 * t + i);
            rpm[k * NJ + i] = 2500.0 * (i == 0 && k % 200 < 50); /* jet 0 scheduled now and then */
        }
        for (int a = 0; a < 12; a++)
            w[k * 12 + a] = a % 6 == 2 ? 200 : 1;
    }
}

static double time_case(const rb_model *m, rb_tekf_variant v, bool flight, bool sched, const double *q,
                        const double *nu, const double *u, const double *w, const double *rpm)
{
    static const char *const frames[NJ] = {"l_hip_1", "r_hip_1", "chest", "torso_1"};
    rb_tekf_jet jets[NJ];
    rb_tekf_foot feet[2] = {{(int)rb_model_frame_index(m, "l_sole"), RB_DYN_BODY},
                            {(int)rb_model_frame_index(m, "r_sole"), RB_DYN_BODY}};
    rb_err err;
    for (int i = 0; i < NJ; i++) {
        jets[i].frame = (int)rb_model_frame_index(m, frames[i]);
        jets[i].axis[0] = 0.1 * i, jets[i].axis[1] = 0.2, jets[i].axis[2] = 1;
        if (rb_jet_preset(i < 2 ? "ironcub_p100" : "ironcub_p220_gazebo", &jets[i].params, NULL, &err))
            die(err.msg);
    }
    rb_tekf_config c;
    rb_tekf_config_init(&c);
    c.jets = jets, c.n_jets = NJ, c.feet = feet, c.n_feet = flight ? 0 : 2, c.variant = v, c.schedule = sched;
    rb_tekf *e = NULL;
    if (rb_tekf_alloc(m, &c, &e, &err))
        die(err.msg);
    size_t nq = m->nq, nv = m->nv, k = 0;
    double per[BATCHES];
    for (int b = -1; b < BATCHES; b++) {
        size_t count = b < 0 ? 300 : SAMPLES;
        double t0 = thread_seconds();
        for (size_t i = 0; i < count; i++, k++) {
            size_t s = k % SAMPLES;
            if (rb_tekf_step(e, k, 1e-3 * (double)k, q + s * nq, nu + s * nv, u + s * NJ, flight ? NULL : w + s * 12,
                             sched ? rpm + s * NJ : NULL, &err))
                die(err.msg);
        }
        if (b >= 0)
            per[b] = (thread_seconds() - t0) / (double)count;
    }
    rb_tekf_free(e);
    qsort(per, BATCHES, sizeof *per, cmp_double);
    return per[BATCHES / 2];
}

int main(int argc, char **argv)
{
#ifdef RB_SOURCE
    const char *src = argc > 1 ? argv[1] : RB_SOURCE;
#else
    const char *src = argc > 1 ? argv[1] : ".";
#endif
    openblas_set_num_threads(1);
    char path[1024];
    snprintf(path, sizeof path, "%s/datasets/humanoid_lower_body.urdf", src);
    rb_model_opts o = {.floating = true};
    rb_model *m = NULL;
    rb_err err;
    if (rb_model_load_urdf(path, &o, &m, &err))
        die(err.msg);
    double *q = malloc(SAMPLES * m->nq * sizeof *q), *nu = malloc(SAMPLES * m->nv * sizeof *q),
           *u = malloc(SAMPLES * NJ * sizeof *q), *w = malloc(SAMPLES * 12 * sizeof *q),
           *rpm = malloc(SAMPLES * NJ * sizeof *q);
    if (!q || !nu || !u || !w || !rpm)
        die("out of memory");
    states(m, q, nu, u, w, rpm);
    printf("thrust estimator step, four jets, %s floating (nv = %zu), one core, median of %d x %d samples\n\n", m->name,
           m->nv, BATCHES, SAMPLES);
    printf("| contacts | variant | scheduling | n, m | us per sample | target |\n|---|---|---|---|---|---|\n");
    static const char *const names[3] = {"combined", "centroidal_only", "jets_only"};
    for (int flight = 0; flight < 2; flight++)
        for (int v = 0; v < 3; v++)
            printf("| %s | %s | off | %s | %.1f | 30 |\n", flight ? "in flight" : "two feet", names[v],
                   flight ? "14, 6" : "26, 18",
                   1e6 * time_case(m, (rb_tekf_variant)v, flight, false, q, nu, u, w, rpm));
    printf("| two feet | combined | on | 26, 18 | %.1f | 30 |\n",
           1e6 * time_case(m, RB_TEKF_COMBINED, false, true, q, nu, u, w, rpm));
    free(q), free(nu), free(u), free(w), free(rpm);
    rb_model_free(m);
    return 0;
}
