/* Time of the in-situ FT calibration after reading (roboest/experiments.h, rb_ftcal_run and rb_ftcal_solve). Target:
 * 100,000 samples calibrated in at most 1 s. Never a timed test: it prints a table.
 *   1. rb_ftcal_run on the shipped data sets (datasets/ft_calibration_{a,b,c}.mat, read before the clock starts):
 *      static poses from the IMU, the pose means, both least squares, the ellipsoids, the held-out check; rows one
 *      per pose, then every raw sample of the training poses.
 *   2. rb_ftcal_solve on 100,000 synthetic sample rows (three data sets, random gravity directions, 2-count noise).
 * Wall-clock, best of 5. Usage: bench_ftcal [source folder] (default RB_SOURCE or "."). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/experiments.h"
#include "roboest/io.h"

#ifndef RB_SOURCE
#define RB_SOURCE "."
#endif

static void die(const char *what, const rb_err *err)
{
    fprintf(stderr, "bench_ftcal: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

static void run_config(const char *src, const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/configs/ftcal/%s", src, file);
    rb_ftcal_config *cfg = NULL;
    rb_err err;
    if (rb_ftcal_load(path, &cfg, &err) != RB_OK)
        die(path, &err);
    rb_log *logs[RB_FTCAL_MAX_SETS] = {0};
    size_t raw = 0;
    for (size_t j = 0; j < cfg->n_sets; j++) {
        if (rb_log_read(cfg->sets[j].log.paths[0], &logs[j], &err) != RB_OK)
            die(cfg->sets[j].log.paths[0], &err);
        raw += rb_log_find(logs[j], cfg->raw)->n_samples;
    }
    double best = INFINITY;
    rb_ftcal_result *r = NULL;
    for (int rep = 0; rep < 5; rep++) {
        rb_ftcal_result_free(r);
        double t0 = rb_monotonic_seconds();
        if (rb_ftcal_run(cfg, (const rb_log *const *)logs, &r, &err) != RB_OK)
            die(file, &err);
        best = fmin(best, rb_monotonic_seconds() - t0);
    }
    printf("| %s (rows: %s) | %zu raw samples in the logs, %zu in training poses, %zu rows | %.4f s | %.3f s |\n", file,
           cfg->per_sample ? "samples" : "windows", raw, r->samples, r->rows, best, best * 100000.0 / (double)raw);
    rb_ftcal_result_free(r);
    for (size_t j = 0; j < cfg->n_sets; j++)
        rb_log_free(logs[j]);
    rb_ftcal_config_free(cfg);
}

static void run_synthetic(size_t n)
{
    double *r = malloc(6 * n * sizeof *r), *g = malloc(3 * n * sizeof *g);
    size_t *set = malloc(n * sizeof *set);
    if (!r || !g || !set)
        die("out of memory", NULL);
    const double added[12] = {0.5, 0.02, 0, 0.04, 1.0, 0, 0.05, 0.06, 1.5, -0.045, -0.045, 0.15};
    rb_rng rng;
    rb_rng_seed(&rng, 3);
    double K[36];
    for (size_t i = 0; i < 36; i++)
        K[i] = (i / 6 == i % 6 ? 1.0 : 0.05 * (2 * rb_rng_uniform(&rng) - 1)) * (i / 6 < 3 ? 100 : 2000);
    for (size_t i = 0; i < n; i++) {
        size_t j = i * 3 / n, pose = i / 500; /* 500 samples per pose */
        rb_rng pr;
        rb_rng_seed(&pr, 100 + pose);
        double v[3] = {rb_rng_normal(&pr), rb_rng_normal(&pr), rb_rng_normal(&pr)};
        double vn = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (size_t c = 0; c < 3; c++)
            g[3 * i + c] = 9.81 * v[c] / vn;
        const double *a = added + 4 * j, *gi = g + 3 * i;
        double m = 0.5 + a[0], h[3] = {a[1], a[2], a[3] - 0.02};
        double w[6] = {m * gi[0],
                       m * gi[1],
                       m * gi[2],
                       h[1] * gi[2] - h[2] * gi[1],
                       h[2] * gi[0] - h[0] * gi[2],
                       h[0] * gi[1] - h[1] * gi[0]};
        for (size_t l = 0; l < 6; l++) {
            double u = 1000.0 * (double)l;
            for (size_t k = 0; k < 6; k++)
                u += K[6 * l + k] * w[k];
            r[6 * i + l] = u + 2.0 * rb_rng_normal(&rng);
        }
        set[i] = j;
    }
    rb_ftcal_data d = {n, r, g, set, 3, added};
    rb_ftcal_fit f;
    rb_err err;
    double best = INFINITY;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = rb_monotonic_seconds();
        if (rb_ftcal_solve(&d, RB_FTCAL_PLUS, RB_FTCAL_OFFSET_LS, &f, &err) != RB_OK)
            die("solve", &err);
        best = fmin(best, rb_monotonic_seconds() - t0);
    }
    printf("| rb_ftcal_solve, synthetic | %zu sample rows (3 data sets, %zu poses) | %.4f s | %.3f s |\n", n, n / 500,
           best, best * 100000.0 / (double)n);
    free(r);
    free(g);
    free(set);
}

int main(int argc, char **argv)
{
    openblas_set_num_threads(1);
    const char *src = argc > 1 ? argv[1] : RB_SOURCE;
    printf("| calibration | input | best of 5 | per 100,000 samples |\n|---|---|---|---|\n");
    run_config(src, "calibration.json");
    run_config(src, "calibration_samples.json");
    run_synthetic(100000);
    printf("\nTarget: 100,000 samples calibrated in at most 1 s after reading.\n");
    return 0;
}
