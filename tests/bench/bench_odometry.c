/* Time per sample of the legged odometry step (roboest/observers.h, rb_lodo_step: one kinematics pass with
 * velocities, the stance feet's poses and joint-induced velocities, the pose from the held feet, the 6 x 6 least
 * squares, the slip) on the floating humanoid lower body (datasets/humanoid_lower_body.urdf, 15 joints), two feet
 * in stance (l_sole, r_sole) and one. Target: 10 us per sample with two feet. Never a timed test: it prints a table.
 * Inputs: smooth synthetic joint motion around the standing pose (the cost does not depend on the values).
 * Timing: thread CPU time, 300 warm-up samples, then the median of 15 batches of 1000 samples.
 * Usage: bench_odometry [source folder] (default RB_SOURCE or "."). */
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
#define WARMUP 300

/* Median time per sample (us) with the given stance flags. */
static double time_case(const rb_model *m, const int *feet, const double flags[2], const double *s, const double *sd)
{
    rb_lodo_config c;
    rb_lodo_config_init(&c);
    c.feet = feet, c.n_feet = 2;
    rb_lodo *e = NULL;
    rb_err err;
    if (rb_lodo_alloc(m, &c, &e, &err)) {
        fprintf(stderr, "bench_odometry: %s\n", err.msg);
        exit(1);
    }
    size_t n = m->n_dofs, k = 0;
    for (size_t i = 0; i < WARMUP; i++, k++)
        if (rb_lodo_step(e, k, 1e-3 * (double)k, s + (i % SAMPLES) * n, sd + (i % SAMPLES) * n, flags, &err)) {
            fprintf(stderr, "bench_odometry: %s\n", err.msg);
            exit(1);
        }
    double per[BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        double t0 = thread_seconds();
        for (size_t i = 0; i < SAMPLES; i++, k++)
            rb_lodo_step(e, k, 1e-3 * (double)k, s + i * n, sd + i * n, flags, &err);
        per[b] = (thread_seconds() - t0) / SAMPLES * 1e6;
    }
    rb_lodo_free(e);
    qsort(per, BATCHES, sizeof per[0], cmp_double);
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
    char path[4096];
    snprintf(path, sizeof path, "%s/datasets/humanoid_lower_body.urdf", src);
    rb_model_opts mo = {.floating = true};
    rb_model *m = NULL;
    rb_err err;
    if (rb_model_load_urdf(path, &mo, &m, &err)) {
        fprintf(stderr, "bench_odometry: %s\n", err.msg);
        return 1;
    }
    int feet[2] = {(int)rb_model_frame_index(m, "l_sole"), (int)rb_model_frame_index(m, "r_sole")};
    if (feet[0] < 0 || feet[1] < 0) {
        fprintf(stderr, "bench_odometry: no l_sole / r_sole in %s\n", path);
        return 1;
    }
    size_t n = m->n_dofs;
    double *s = malloc(SAMPLES * n * sizeof *s), *sd = malloc(SAMPLES * n * sizeof *sd);
    if (!s || !sd)
        return 1;
    for (size_t k = 0; k < SAMPLES; k++)
        for (size_t j = 0; j < n; j++) {
            double w = 1 + 0.3 * (double)j, t = 1e-3 * (double)k;
            s[k * n + j] = 0.2 * sin(w * t) + (j % 3 == 0 ? -0.2 : 0.1);
            sd[k * n + j] = 0.2 * w * cos(w * t);
        }
    const double two[2] = {1, 1}, one[2] = {1, 0}, none[2] = {0, 0};
    double t2 = time_case(m, feet, two, s, sd), t1 = time_case(m, feet, one, s, sd),
           t0 = time_case(m, feet, none, s, sd);
    printf("Legged odometry step (rb_lodo_step), humanoid lower body (%zu joints, nv = %zu), thread CPU time, median "
           "of %d x %d samples\n\n",
           n, m->nv, BATCHES, SAMPLES);
    printf("| stance | us per sample | target |\n|---|---|---|\n");
    printf("| two feet (l_sole, r_sole) | %.2f | 10 |\n", t2);
    printf("| one foot (l_sole) | %.2f | |\n", t1);
    printf("| none (flight: the kinematics pass, then the prediction) | %.2f | |\n", t0);
    free(s), free(sd);
    rb_model_free(m);
    return 0;
}
