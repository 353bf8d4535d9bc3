/* Friction network forward pass per joint at the paper's sizes: rb_fnet_forward (double, dgemv) and the
 * inference form the friction_pinn stage runs (rb_fnet_infer_forward: W2 transposed in single precision,
 * ReLU-off columns skipped), for one joint and for six joints stepped in turn (a leg: six networks'
 * weights compete for the cache). Never a timed test: it prints a Markdown table.
 *
 * Inputs: H = 20 (40 features), hidden sizes 150/150, 233/229 (ergoCub r_knee) and 300/300, He-normal
 * weights with small random biases, inputs drifting slowly so every call sees a different vector.
 * OpenBLAS runs single-threaded (as the CLI does). Timing: median of BATCHES batches of ~10 ms.
 *
 * Usage: make build/bench_friction && build/bench_friction [BATCHES]   (default 15) */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "roboest/friction.h"

enum { NJ = 6, NIN = 40 };

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median microseconds per joint evaluation over batches; inference form when `fast`. */
static double time_per_joint(rb_fnet *nets, rb_fnet_infer *fast, size_t nj, bool use_fast, int batches)
{
    double x[NIN], *work = malloc((NIN + 600) * sizeof *work), sink = 0, *per = malloc(batches * sizeof *per);
    for (int i = 0; i < NIN; i++)
        x[i] = 0.05 * i;
    size_t calls = 1;
    for (;;) { /* calls per batch for ~10 ms */
        double t0 = rb_monotonic_seconds();
        for (size_t c = 0; c < calls; c++)
            for (size_t j = 0; j < nj; j++)
                sink += use_fast ? rb_fnet_infer_forward(&fast[j], x, work) : rb_fnet_forward(&nets[j], x, work);
        if (rb_monotonic_seconds() - t0 > 0.01)
            break;
        calls *= 2;
    }
    for (int b = 0; b < batches; b++) {
        double t0 = rb_monotonic_seconds();
        for (size_t c = 0; c < calls; c++) {
            x[c % NIN] += 1e-4;
            for (size_t j = 0; j < nj; j++)
                sink += use_fast ? rb_fnet_infer_forward(&fast[j], x, work) : rb_fnet_forward(&nets[j], x, work);
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

int main(int argc, char **argv)
{
    int batches = argc > 1 ? atoi(argv[1]) : 15;
    if (batches < 1)
        batches = 15;
    openblas_set_num_threads(1);
    const size_t sizes[3][2] = {{150, 150}, {233, 229}, {300, 300}};
    printf("| hidden | joints | rb_fnet_forward us/joint | rb_fnet_infer_forward us/joint |\n");
    printf("|---|---|---|---|\n");
    for (int s = 0; s < 3; s++) {
        rb_fnet nets[NJ];
        rb_fnet_infer fast[NJ];
        rb_rng rng;
        rb_rng_seed(&rng, 1);
        rb_err err;
        for (int j = 0; j < NJ; j++) {
            if (rb_fnet_alloc(&nets[j], NIN, sizes[s][0], sizes[s][1], &err)) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
            }
            rb_fnet_init_weights(&nets[j], &rng);
            rb_fnet_parts p = rb_fnet_parts_of(&nets[j]);
            for (size_t i = 0; i < nets[j].h1; i++)
                p.b1[i] = 0.05 * rb_rng_normal(&rng);
            if (rb_fnet_infer_init(&fast[j], &nets[j], &err)) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
            }
        }
        for (size_t nj = 1; nj <= NJ; nj += NJ - 1)
            printf("| %zu/%zu | %zu | %.2f | %.2f |\n", sizes[s][0], sizes[s][1], nj,
                   time_per_joint(nets, fast, nj, false, batches), time_per_joint(nets, fast, nj, true, batches));
        for (int j = 0; j < NJ; j++) {
            rb_fnet_free(&nets[j]);
            rb_fnet_infer_free(&fast[j]);
        }
    }
    return 0;
}
