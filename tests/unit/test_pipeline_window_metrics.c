/* A run in windows scores its metrics window by window (metrics.h rb_metrics_stream): the statistics, and the
 * errors, are rb_metrics_compute's on the whole run bit for bit whatever the windows (more elements than one
 * accumulation block, a bounded window, a non-finite sample, values that overflow). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/metrics.h"

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 11;
}

static double uniform(uint64_t *s) { return (double)next(s) / 9007199254740992.0; }

/* Both ways over windows of `w` samples: the same return code, message and statistics (bits). */
static void same(const rb_metric_input *in, size_t w)
{
    size_t n = in->n_elements;
    rb_stats *pa = calloc(n, sizeof *pa), *pb = calloc(n, sizeof *pb), aa = {0}, ab = {0};
    rb_err ea = {0}, eb = {0};
    int ra = rb_metrics_compute(in, pa, &aa, &ea);
    rb_metric_input desc = *in;
    desc.estimate = desc.reference = NULL;
    rb_metrics_stream *s = NULL;
    cr_assert_eq(rb_metrics_stream_new(&desc, &s, &eb), RB_OK);
    for (size_t k0 = 0; k0 < in->n_samples; k0 += w) {
        size_t k1 = in->n_samples - k0 < w ? in->n_samples : k0 + w;
        rb_metrics_stream_add(s, in->estimate + k0 * n, in->reference + k0 * n, k0, k1);
    }
    int rb = rb_metrics_stream_finish(s, pb, &ab, &eb);
    rb_metrics_stream_free(s);
    cr_assert_eq(rb, ra, "window %zu: %d, not %d (%s / %s)", w, rb, ra, eb.msg, ea.msg);
    if (ra) {
        cr_assert_str_eq(eb.msg, ea.msg);
    } else {
        cr_assert(memcmp(pa, pb, n * sizeof *pa) == 0, "window %zu: per element", w);
        cr_assert(memcmp(&aa, &ab, sizeof aa) == 0, "window %zu: overall", w);
    }
    free(pa), free(pb);
}

Test(pipeline_window_metrics, the_windows_give_the_whole_runs_statistics_and_errors)
{
    enum { T = 1500, N = 70 }; /* N > one accumulation block of 64 */
    static double t[T], e[T * N], r[T * N];
    uint64_t seed = 7;
    for (size_t k = 0; k < T; k++)
        t[k] = 100.0 + 0.001 * (double)k;
    for (size_t i = 0; i < T * N; i++) {
        r[i] = sin(0.01 * (double)i) * 1e3;
        e[i] = r[i] + (uniform(&seed) - 0.5) * (i % 7 == 0 ? 1e-9 : 1.0);
    }
    e[5 * N + 3] = 0;
    static const size_t windows[] = {1, 13, 64, 1000, T};
    rb_metric_input in = {"est", "ref", e, r, t, T, N, -INFINITY, INFINITY};
    for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++)
        same(&in, windows[w]);
    in.t0 = 100.2, in.t1 = 101.0; /* bounded */
    for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++)
        same(&in, windows[w]);
    e[900 * N + 66] = NAN; /* a bad sample in the second block, and a later one in the first */
    r[950 * N + 2] = INFINITY;
    for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++)
        same(&in, windows[w]);
    e[900 * N + 66] = 1e308, r[900 * N + 66] = -1e308, r[950 * N + 2] = 0; /* overflow */
    for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++)
        same(&in, windows[w]);
    in.t0 = 200, in.t1 = 300; /* no sample */
    same(&in, 100);
}
