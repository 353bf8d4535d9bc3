/* Time per sample of the attitude estimator's step (roboest/observers.h, rb_att_step: the gravity KF's predict and
 * update, roll and pitch, the quaternion EKF's predict, measured quaternion and update with its normalization) and of
 * rb_att_get_out, on a synthetic walking-like IMU at 100 Hz, and the C library allocations made by those calls.
 * Target: 2 us per sample, no allocation. Never a timed test: it prints a table.
 * Timing: thread CPU time, 300 warm-up samples, then the median of 15 batches of 1000 samples.
 * Allocations: this program interposes malloc, calloc and realloc (forwarding to glibc) and counts them while the
 * steps run. Usage: bench_attitude. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "roboest/observers.h"
#include "bench_allocs.h"
#include "bench_timing.h"

void openblas_set_num_threads(int);

#define SAMPLES 1000
#define BATCHES 15
#define WARMUP 300
#define TAU 6.283185307179586

int main(void)
{
    openblas_set_num_threads(1);
    static double acc[3 * SAMPLES], gyro[3 * SAMPLES];
    for (size_t k = 0; k < SAMPLES; k++) { /* a few degrees of sway, walking-like accelerations */
        double t = 0.01 * (double)k;
        gyro[3 * k] = 0.3 * sin(TAU * 0.45 * t), gyro[3 * k + 1] = 0.25 * sin(TAU * 0.9 * t + 1);
        gyro[3 * k + 2] = 0.2 * sin(0.5 * t);
        acc[3 * k] = 0.05 * sin(TAU * 0.9 * t) + sin(TAU * 0.9 * t);
        acc[3 * k + 1] = 0.8 * sin(TAU * 0.45 * t + 0.5), acc[3 * k + 2] = 9.81 + 1.5 * sin(TAU * 1.8 * t + 1);
    }
    rb_att_config c;
    rb_att_config_init(&c);
    rb_att *a = NULL;
    rb_err err;
    if (rb_att_alloc(&c, &a, &err)) {
        fprintf(stderr, "bench_attitude: %s\n", err.msg);
        return 1;
    }
    rb_att_out o;
    size_t k = 0;
    for (size_t i = 0; i < WARMUP; i++, k++)
        if (rb_att_step(a, k, 0.01 * (double)k, acc + 3 * (i % SAMPLES), gyro + 3 * (i % SAMPLES), &err)) {
            fprintf(stderr, "bench_attitude: %s\n", err.msg);
            return 1;
        }
    double per[BATCHES];
    long steps = 0;
    for (int b = 0; b < BATCHES; b++) {
        counting = 1;
        double t0 = thread_seconds();
        for (size_t i = 0; i < SAMPLES; i++, k++) {
            rb_att_step(a, k, 0.01 * (double)k, acc + 3 * i, gyro + 3 * i, &err);
            rb_att_get_out(a, &o);
        }
        per[b] = (thread_seconds() - t0) / SAMPLES * 1e6;
        counting = 0;
        steps += SAMPLES;
    }
    rb_att_free(a);
    qsort(per, BATCHES, sizeof per[0], cmp_double);
    printf("attitude estimator (gravity KF n = 9 + quaternion EKF n = 4), 100 Hz walking-like IMU\n");
    printf("| case | us / sample (median of %d x %d) | target | allocations / sample |\n", BATCHES, SAMPLES);
    printf("| --- | ---: | ---: | ---: |\n");
    printf("| rb_att_step + rb_att_get_out | %.3f | 2 | %.3g (%ld in %ld samples) |\n", per[BATCHES / 2],
           (double)allocs / (double)steps, allocs, steps);
    return 0;
}
