/* Runner benchmark: what the pipeline runner adds per stage per sample over the stages' own work.
 *
 * A chain of N stages (x -> s1 -> ... -> sN) runs over an in-memory log of T samples. The runner's
 * cost is the run time with N stages minus the run time with the same log and no stage (set-up,
 * resampling), minus the time the N stages' step() calls take when called directly in a tight loop
 * on the same data. Two stage types: `copy` (a one-line step, so the figure is almost all runner)
 * and the built-in `lowpass`. Measurements alternate and the minimum of several rounds is kept.
 * Prints a Markdown table; the target is at most 50 ns per stage per sample. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/pipeline.h"

enum { SAMPLES = 400000, STAGES = 20, WIDTH = 3, ROUNDS = 5 };

static int copy_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)state, (void)k, (void)t, (void)err;
    for (size_t i = 0; i < WIDTH; i++)
        out[0][i] = in[0][i];
    return RB_OK;
}

static int copy_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    (void)err;
    setup->out[0] = setup->in[0];
    *state = NULL;
    return RB_OK;
}

static const char *const copy_in[] = {"x"};
static const char *const copy_out[] = {"y"};
static const rb_stage_type copy_type = {.version = RB_STAGE_TYPE_VERSION,
                                        .name = "copy",
                                        .summary = "y = x",
                                        .inputs = copy_in,
                                        .n_inputs = 1,
                                        .outputs = copy_out,
                                        .n_outputs = 1,
                                        .create = copy_create,
                                        .step = copy_step};

static void check(int rc, const rb_err *err)
{
    if (rc != RB_OK) {
        fprintf(stderr, "bench_runner: %s\n", err->msg);
        exit(1);
    }
}

/* A chain of n stages of `type` ("copy" or "lowpass"). */
static char *chain_config(const char *type, int n)
{
    size_t cap = 4096 + (size_t)n * 200, len = 0;
    char *s = malloc(cap);
    len += (size_t)snprintf(s + len, cap - len,
                            "{\"clock\": {\"rate\": 1000}, \"signals\": {\"s0\": {\"channel\": \"x\"}},"
                            " \"stages\": [");
    for (int i = 1; i <= n; i++)
        len += (size_t)snprintf(s + len, cap - len,
                                "%s{\"id\": \"st%d\", \"type\": \"%s\", \"in\": {\"x\": \"s%d\"}, \"out\": {\"y\": "
                                "\"s%d\"}%s}",
                                i > 1 ? ", " : "", i, type, i - 1, i,
                                strcmp(type, "lowpass") == 0 ? ", \"params\": {\"cutoff_hz\": 5}" : "");
    snprintf(s + len, cap - len, "]}");
    return s;
}

static double time_run(const rb_registry *reg, const char *type, int n, const rb_log *log)
{
    rb_err err;
    rb_pipeline *p = NULL;
    char *text = chain_config(type, n);
    check(rb_pipeline_load_text(text, strlen(text), "bench.json", NULL, reg, &p, &err), &err);
    rb_run_result *res = NULL;
    double t0 = rb_monotonic_seconds();
    check(rb_pipeline_run_log(p, log, NULL, 0, NULL, &res, &err), &err);
    double seconds = rb_monotonic_seconds() - t0;
    rb_run_result_free(res);
    rb_pipeline_free(p);
    free(text);
    return seconds;
}

/* The same n steps called directly: the stages' own work. */
static double time_direct(const rb_stage_type *type, int n, const rb_log *log)
{
    rb_err err;
    rb_param_value cutoff = {.given = true, .number = 5.0};
    rb_params params = {type, &cutoff};
    rb_port in = {WIDTH, NULL, NULL}, out = {0, NULL, NULL};
    double period = 1e-3;
    rb_stage_setup setup = {.id = "bench",
                            .params = &params,
                            .in = &in,
                            .out = &out,
                            .dt = period,
                            .n_samples = SAMPLES,
                            .time = log->channels[0].time};
    void **states = calloc((size_t)n, sizeof *states);
    double *buf = calloc((size_t)(n + 1) * WIDTH, sizeof(double));
    for (int i = 0; i < n; i++)
        check(type->create(&setup, &states[i], &err), &err);
    const double *data = log->channels[0].data;
    double t0 = rb_monotonic_seconds();
    for (size_t k = 0; k < SAMPLES; k++) {
        memcpy(buf, data + k * WIDTH, WIDTH * sizeof(double));
        for (int i = 0; i < n; i++) {
            const double *ins[1] = {buf + (size_t)i * WIDTH};
            double *outs[1] = {buf + (size_t)(i + 1) * WIDTH};
            type->step(states[i], k, (double)k * period, ins, outs, &err);
        }
    }
    double seconds = rb_monotonic_seconds() - t0;
    volatile double sink = buf[(size_t)n * WIDTH];
    (void)sink;
    for (int i = 0; i < n; i++)
        if (type->destroy)
            type->destroy(states[i]);
    free(states);
    free(buf);
    return seconds;
}

int main(void)
{
    rb_err err;
    rb_registry *reg = NULL;
    check(rb_registry_new(&reg, &err), &err);
    check(rb_estimators_register(reg, &err), &err);
    check(rb_registry_add(reg, &copy_type, &err), &err);
    rb_log *log = NULL;
    check(rb_log_new(&log, &err), &err);
    rb_channel *ch;
    check(rb_log_add_channel(log, "x", SAMPLES, WIDTH, &ch, &err), &err);
    for (size_t k = 0; k < SAMPLES; k++) {
        ch->time[k] = (double)k * 1e-3;
        for (size_t i = 0; i < WIDTH; i++)
            ch->data[k * WIDTH + i] = sin(0.001 * (double)k + (double)i);
    }
    const char *types[] = {"copy", "lowpass"};
    printf("runner benchmark: %d samples, chains of %d stages, %d elements per signal, min of %d rounds\n", SAMPLES,
           STAGES, WIDTH, ROUNDS);
    printf("| stage   | run, no stage [ms] | run, %d stages [ms] | steps alone [ms] | runner ns / stage / sample |\n",
           STAGES);
    printf("|---------|-------------------:|-------------------:|-----------------:|---------------------------:|\n");
    for (int ty = 0; ty < 2; ty++) {
        double base = INFINITY, full = INFINITY, direct = INFINITY;
        for (int r = 0; r < ROUNDS; r++) {
            base = fmin(base, time_run(reg, types[ty], 0, log));
            full = fmin(full, time_run(reg, types[ty], STAGES, log));
            direct = fmin(direct, time_direct(rb_registry_find(reg, types[ty]), STAGES, log));
        }
        double overhead_ns = (full - base - direct) / ((double)STAGES * SAMPLES) * 1e9;
        printf("| %-7s | %18.1f | %18.1f | %16.1f | %26.1f |\n", types[ty], base * 1e3, full * 1e3, direct * 1e3,
               overhead_ns);
    }
    printf("target: runner ns / stage / sample <= 50\n");
    rb_log_free(log);
    rb_registry_free(reg);
    return 0;
}
