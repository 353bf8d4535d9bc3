/* Friction network forward pass per joint at the paper's sizes: rb_friction_net_forward (double, dgemv) and the
 * inference form the friction_pinn stage runs (rb_friction_net_infer_forward: W2 transposed in single precision,
 * ReLU-off columns skipped), for one joint and for six joints stepped in turn (a leg: six networks'
 * weights compete for the cache). Never a timed test: it prints a Markdown table.
 *
 * Inputs: H = 20 (40 features), hidden sizes 150/150, 233/229 (ergoCub r_knee) and 300/300, He-normal
 * weights with small random biases, inputs drifting slowly so every call sees a different vector.
 * OpenBLAS runs single-threaded (as the CLI does). Timing: median of BATCHES batches of ~10 ms.
 *
 * Then the friction_pinn stage itself on a six-joint leg (H 20, 233/229 units, random weights written to a
 * network file in /tmp): its step() per 1 kHz sample, and the real-time factor that leaves.
 *
 * Usage: make build/bench_friction && build/bench_friction [BATCHES]   (default 15) */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "roboest/estimators.h"
#include "roboest/friction.h"

enum { NJ = 6, NIN = 40 };

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median microseconds per joint evaluation over batches; inference form when `fast`. */
static double time_per_joint(rb_fnet *nets, rb_friction_net_infer *fast, size_t nj, bool use_fast, int batches)
{
    double x[NIN], *work = malloc((NIN + 600) * sizeof *work), sink = 0, *per = malloc(batches * sizeof *per);
    for (int i = 0; i < NIN; i++)
        x[i] = 0.05 * i;
    size_t calls = 1;
    for (;;) { /* calls per batch for ~10 ms */
        double t0 = rb_monotonic_seconds();
        for (size_t c = 0; c < calls; c++)
            for (size_t j = 0; j < nj; j++)
                sink += use_fast ? rb_friction_net_infer_forward(&fast[j], x, work)
                                 : rb_friction_net_forward(&nets[j], x, work);
        if (rb_monotonic_seconds() - t0 > 0.01)
            break;
        calls *= 2;
    }
    for (int b = 0; b < batches; b++) {
        double t0 = rb_monotonic_seconds();
        for (size_t c = 0; c < calls; c++) {
            x[c % NIN] += 1e-4;
            for (size_t j = 0; j < nj; j++)
                sink += use_fast ? rb_friction_net_infer_forward(&fast[j], x, work)
                                 : rb_friction_net_forward(&nets[j], x, work);
        }
        per[b] = (rb_monotonic_seconds() - t0) / (double)(calls * nj) * 1e6;
    }
    qsort(per, batches, sizeof *per, cmp);
    double med = per[batches / 2];
    if (!isfinite(sink))
        med = NAN;
    free(per);
    free(work);
    return med;
}

/* The friction_pinn stage on 6 joints: median microseconds per step over batches of 1000 samples. */
static double stage_step_us(int batches)
{
    rb_friction_net_file *f;
    rb_err err;
    static const char *const names[NJ] = {"hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll"};
    if (rb_friction_net_file_new(&f, &err))
        return NAN;
    f->sample_period = 0.001;
    rb_rng rng;
    rb_rng_seed(&rng, 2);
    for (int j = 0; j < NJ; j++) {
        rb_friction_net_joint *e;
        if (rb_friction_net_file_add(f, names[j], &e, &err) || rb_friction_net_alloc(&e->net, NIN, 233, 229, &err) ||
            rb_friction_preset("ergocub_r_knee", &e->scv, &err))
            return NAN;
        e->H = NIN / 2;
        rb_friction_net_init_weights(&e->net, &rng);
        rb_friction_net_train_opts_init(&e->train);
    }
    char dir[] = "/tmp/rb_bench_friction_XXXXXX";
    if (!mkdtemp(dir) || rb_friction_net_file_write(f, "/tmp/rb_bench_friction_net.json", true, &err)) {
        rb_friction_net_file_free(f);
        return NAN;
    }
    rb_friction_net_file_free(f);
    rb_param_value vals[4] = {{.string = "/tmp/rb_bench_friction_net.json"}, {.count = 0}, {.string = "zero"}, {0}};
    rb_params params = {&rb_stage_friction_pinn, vals};
    rb_port in[2] = {{NJ, names, NULL}, {NJ, names, NULL}}, out[1];
    rb_stage_setup setup = {"pinn", &params, in, out, 0.001, 0, NULL, NULL, dir};
    void *state = NULL;
    if (rb_stage_friction_pinn.create(&setup, &state, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return NAN;
    }
    double w[NJ], v[NJ], y[NJ], *per = malloc(batches * sizeof *per), sink = 0;
    const double *ins[2] = {w, v};
    double *outs[1] = {y};
    for (int b = -1; b < batches; b++) { /* batch -1 warms up */
        double t0 = rb_monotonic_seconds();
        for (int k = 0; k < 1000; k++) {
            for (int j = 0; j < NJ; j++) {
                v[j] = 0.5 * sin(0.01 * k + j);
                w[j] = -100 * v[j];
            }
            rb_stage_friction_pinn.step(state, (size_t)k, 0.001 * k, ins, outs, &err);
            sink += y[0];
        }
        if (b >= 0)
            per[b] = (rb_monotonic_seconds() - t0) / 1000 * 1e6;
    }
    rb_stage_friction_pinn.destroy(state);
    remove("/tmp/rb_bench_friction_net.json");
    rmdir(dir);
    qsort(per, batches, sizeof *per, cmp);
    double med = isfinite(sink) ? per[batches / 2] : NAN;
    free(per);
    return med;
}

int main(int argc, char **argv)
{
    int batches = argc > 1 ? atoi(argv[1]) : 15;
    if (batches < 1)
        batches = 15;
    openblas_set_num_threads(1);
    const size_t sizes[3][2] = {{150, 150}, {233, 229}, {300, 300}};
    printf("| hidden | joints | rb_friction_net_forward us/joint | rb_friction_net_infer_forward us/joint |\n");
    printf("|---|---|---|---|\n");
    for (int s = 0; s < 3; s++) {
        rb_fnet nets[NJ];
        rb_friction_net_infer fast[NJ];
        rb_rng rng;
        rb_rng_seed(&rng, 1);
        rb_err err;
        for (int j = 0; j < NJ; j++) {
            if (rb_friction_net_alloc(&nets[j], NIN, sizes[s][0], sizes[s][1], &err)) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
            }
            rb_friction_net_init_weights(&nets[j], &rng);
            rb_friction_net_parts p = rb_friction_net_parts_of(&nets[j]);
            for (size_t i = 0; i < nets[j].h1; i++)
                p.b1[i] = 0.05 * rb_rng_normal(&rng);
            if (rb_friction_net_infer_init(&fast[j], &nets[j], &err)) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
            }
        }
        for (size_t nj = 1; nj <= NJ; nj += NJ - 1)
            printf("| %zu/%zu | %zu | %.2f | %.2f |\n", sizes[s][0], sizes[s][1], nj,
                   time_per_joint(nets, fast, nj, false, batches), time_per_joint(nets, fast, nj, true, batches));
        for (int j = 0; j < NJ; j++) {
            rb_friction_net_free(&nets[j]);
            rb_friction_net_infer_free(&fast[j]);
        }
    }
    double us = stage_step_us(batches);
    printf("\nfriction_pinn stage, 6 joints, H 20, 233/229: %.1f us per sample (%.0fx real time at 1 kHz)\n", us,
           1000.0 / us);
    return 0;
}
