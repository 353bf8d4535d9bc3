/* Time per sample of the slip predictor (roboest/observers.h, rb_slip_step: rotations, bias, contact, detection,
 * the thresholds' steps 4-5 and the prediction) and of the slip_predictor stage's step (two feet, axes x, y and t:
 * its outputs written as a pipeline would read them), on a synthetic walk at 1 kHz (stance with force peaks and
 * acceleration spikes, swing), and the C library allocations made by those calls. Target: 2 us per sample (both
 * feet), no allocation. Never a timed test: it prints a table.
 * Timing: thread CPU time, 300 warm-up samples, then the median of 15 batches of 1000 samples.
 * Allocations: this program interposes malloc, calloc and realloc (forwarding to glibc) and counts them while the
 * steps run. Usage: bench_slip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roboest/estimators.h"
#include "roboest/observers.h"
#include "bench_allocs.h"
#include "bench_timing.h"

#define SAMPLES 1000
#define BATCHES 15
#define WARMUP 300
#define TAU 6.283185307179586

static double force[12 * SAMPLES], acc[6 * SAMPLES], phase[SAMPLES];

static void synth(void)
{
    for (size_t k = 0; k < SAMPLES; k++) { /* 1.5 s gait cycles squeezed into 1 s: both feet, swing and stance */
        double t = 0.001 * (double)k, s = sin(TAU * t);
        phase[k] = s > 0.5 ? 1 : s < -0.5 ? 2 : 0;
        for (int f = 0; f < 2; f++) {
            double *F = force + 12 * k + 6 * f, *A = acc + 6 * k + 3 * f;
            bool swing = (f == 1 && phase[k] == 1) || (f == 0 && phase[k] == 2);
            F[0] = 10 * sin(TAU * 3 * t + f), F[1] = 15 * cos(TAU * 2 * t), F[2] = swing ? -9.8 : 300 + 200 * s;
            F[3] = F[4] = F[5] = 0.5;
            A[0] = (k % 97 == 0) ? 3 : 0.02 * sin(TAU * 50 * t), A[1] = -0.02 * cos(TAU * 40 * t), A[2] = -9.81;
        }
    }
}

static double time_batches(void (*step)(void *, size_t), void *ctx, long *steps)
{
    for (size_t i = 0; i < WARMUP; i++)
        step(ctx, i % SAMPLES);
    double per[BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        counting = 1;
        double t0 = thread_seconds();
        for (size_t i = 0; i < SAMPLES; i++)
            step(ctx, i);
        per[b] = (thread_seconds() - t0) / SAMPLES * 1e6;
        counting = 0;
        *steps += SAMPLES;
    }
    qsort(per, BATCHES, sizeof per[0], cmp_double);
    return per[BATCHES / 2];
}

static void step_module(void *ctx, size_t i)
{
    rb_slip *feet = ctx;
    rb_slip_out o;
    int ph = (int)phase[i];
    for (int f = 0; f < 2; f++)
        rb_slip_step(&feet[f], force + 12 * i + 6 * f, acc + 6 * i + 3 * f, ph == 0 || ph == f + 1, &o);
}

typedef struct stage_ctx {
    void *state;
    double *rows[9];
} stage_ctx;

static void step_stage(void *ctx, size_t i)
{
    stage_ctx *s = ctx;
    const double *in[3] = {force + 12 * i, acc + 6 * i, phase + i};
    rb_err err;
    rb_stage_slip_predictor.step(s->state, i, 0.001 * (double)i, in, s->rows, &err);
}

int main(void)
{
    synth();
    rb_err err;
    rb_slip feet[2];
    rb_slip_config c;
    rb_slip_config_init(&c);
    c.n_axes = 3;
    c.axes[0] = RB_SLIP_X, c.axes[1] = RB_SLIP_Y, c.axes[2] = RB_SLIP_T;
    for (int f = 0; f < 2; f++)
        if (rb_slip_init(&feet[f], &c, &err)) {
            fprintf(stderr, "bench_slip: %s\n", err.msg);
            return 1;
        }
    long steps_m = 0, steps_s = 0;
    double us_m = time_batches(step_module, feet, &steps_m);
    long allocs_m = allocs;
    allocs = 0;

    /* the stage, set up as a pipeline would (no model: the rotations are identities) */
    static const char *const feet_names[2] = {"l_sole", "r_sole"}, *const axes[3] = {"x", "y", "t"};
    const rb_stage_type *ty = &rb_stage_slip_predictor;
    rb_param_value vals[32] = {{0}};
    for (size_t i = 0; i < ty->n_params; i++) {
        const rb_param_spec *ps = &ty->params[i];
        vals[i].number = ps->def_number, vals[i].string = (char *)ps->def_string;
        vals[i].count = ps->def_count, vals[i].numbers = (double *)ps->def_numbers;
        vals[i].strings = (char **)ps->def_strings;
        if (strcmp(ps->name, "feet") == 0)
            vals[i].strings = (char **)feet_names, vals[i].count = 2;
        if (strcmp(ps->name, "axes") == 0)
            vals[i].strings = (char **)axes, vals[i].count = 3;
        if (strcmp(ps->name, "foot_mass") == 0)
            vals[i].number = 1;
    }
    rb_params params = {ty, vals};
    rb_port in[3] = {{12, NULL, NULL}, {6, NULL, NULL}, {1, NULL, NULL}}, out[9];
    rb_stage_setup st = {"slip", &params, in, out, 0.001, SAMPLES, NULL, NULL, "."};
    stage_ctx sc = {0};
    if (ty->create(&st, &sc.state, &err)) {
        fprintf(stderr, "bench_slip: %s\n", err.msg);
        return 1;
    }
    for (int j = 0; j < 9; j++)
        sc.rows[j] = calloc(out[j].width, sizeof(double));
    double us_s = time_batches(step_stage, &sc, &steps_s);
    long allocs_s = allocs;
    ty->destroy(sc.state);
    for (int j = 0; j < 9; j++)
        free(sc.rows[j]);
    printf("slip predictor, two feet, axes x y t, synthetic 1 kHz walk\n");
    printf("| case | us / sample (median of %d x %d) | target | allocations / sample |\n", BATCHES, SAMPLES);
    printf("| --- | ---: | ---: | ---: |\n");
    printf("| rb_slip_step x 2 feet | %.3f | 2 | %.3g (%ld in %ld samples) |\n", us_m,
           (double)allocs_m / (double)steps_m, allocs_m, steps_m);
    printf("| slip_predictor stage step (2 feet) | %.3f | 2 | %.3g (%ld in %ld samples) |\n", us_s,
           (double)allocs_s / (double)steps_s, allocs_s, steps_s);
    return 0;
}
