/* The fault monitor of a run in windows scans each channel in parts (metrics.h rb_fault_stream): its tallies are
 * rb_fault_scan's on the whole span bit for bit, whatever the parts (runs across part boundaries, runs at an
 * extreme too short to be saturated going on as stuck runs, non-finite samples, +-0, constant elements). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

#include "roboest/metrics.h"

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* Runs of repeated values, some at the extremes, some near each other, a few NaN, Inf and signed zeros. */
static void fill(double *x, size_t n, uint64_t *seed)
{
    for (size_t k = 0; k < n;) {
        size_t len = 1 + next(seed) % 40;
        double v;
        switch (next(seed) % 8) {
        case 0: v = 5.0; break; /* the top */
        case 1: v = -5.0; break;
        case 2: v = NAN; break;
        case 3: v = next(seed) % 2 ? 0.0 : -0.0; break;
        case 4: v = INFINITY; break;
        default: v = (double)(next(seed) % 9) * 0.25 - 1.0;
        }
        for (size_t i = 0; i < len && k < n; i++, k++)
            x[k] = v + (next(seed) % 4 == 0 ? 1e-3 * (double)(next(seed) % 3) : 0); /* within or beyond tol */
    }
}

static void check(const double *x, size_t n, size_t stride, const rb_fault_opts *o, size_t part)
{
    rb_fault_tally want[2], got[2];
    rb_fault_tally_init(want, 2), rb_fault_tally_init(got, 2);
    rb_fault_scan(x, n, stride, o, &want[0], &want[1]);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t at = 0; at < n; at += part)
        rb_fault_range(x + at * stride, n - at < part ? n - at : part, stride, &lo, &hi);
    rb_fault_stream s;
    rb_fault_stream_init(&s, lo, hi);
    for (size_t at = 0; at < n; at += part)
        rb_fault_stream_push(&s, x + at * stride, n - at < part ? n - at : part, stride, o, &got[0], &got[1]);
    rb_fault_stream_end(&s, o, &got[0], &got[1]);
    for (int j = 0; j < 2; j++) {
        cr_assert_eq(got[j].count, want[j].count, "kind %d, part %zu, n %zu: %zu, not %zu", j, part, n, got[j].count,
                     want[j].count);
        cr_assert_eq(got[j].first, want[j].first, "kind %d, part %zu: first %zu, not %zu", j, part, got[j].first,
                     want[j].first);
    }
}

Test(pipeline_window_faults, the_scan_in_parts_is_the_whole_scan)
{
    static const rb_fault_opts opts[] = {
        {.stuck_window = 20, .stuck_tolerance = 0, .saturation_window = 10},
        {.stuck_window = 5, .stuck_tolerance = 2e-3, .saturation_window = 30},
        {.stuck_window = 0, .stuck_tolerance = 0, .saturation_window = 3},
        {.stuck_window = 3, .stuck_tolerance = 1e-3, .saturation_window = 0},
        {.stuck_window = 1, .stuck_tolerance = INFINITY, .saturation_window = 1},
    };
    static const size_t parts[] = {1, 2, 7, 64, 1000, 5000};
    enum { N = 3000, W = 3 };
    static double x[N * W];
    uint64_t seed = 42;
    size_t found = 0;
    for (int round = 0; round < 20; round++) {
        fill(x, N * W, &seed);
        for (size_t o = 0; o < sizeof opts / sizeof opts[0]; o++)
            for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++)
                for (size_t e = 0; e < W; e++) {
                    size_t n = round % 3 ? N : N / 2 + (size_t)round; /* parts not dividing n */
                    check(x + e, n, W, &opts[o], parts[p]);
                    rb_fault_tally t[2];
                    rb_fault_tally_init(t, 2);
                    rb_fault_scan(x + e, n, W, &opts[o], &t[0], &t[1]);
                    found += t[0].count && t[1].count;
                }
    }
    cr_assert_gt(found, 100, "the data shows both kinds of fault");
}

/* A constant element: never saturated (no extremes apart), a run across every part stuck once. */
Test(pipeline_window_faults, a_constant_element_across_parts_is_one_stuck_run)
{
    double x[100];
    for (size_t k = 0; k < 100; k++)
        x[k] = k < 3 ? NAN : 1.5;
    rb_fault_opts o = {.stuck_window = 10, .saturation_window = 5};
    for (size_t part = 1; part <= 100; part++)
        check(x, 100, 1, &o, part);
    rb_fault_tally t[2];
    rb_fault_tally_init(t, 2);
    rb_fault_stream s;
    rb_fault_stream_init(&s, 1.5, 1.5);
    for (size_t k = 0; k < 100; k += 9)
        rb_fault_stream_push(&s, x + k, 100 - k < 9 ? 100 - k : 9, 1, &o, &t[0], &t[1]);
    rb_fault_stream_end(&s, &o, &t[0], &t[1]);
    cr_assert_eq(t[0].count, 97);
    cr_assert_eq(t[0].first, 3);
    cr_assert_eq(t[1].count, 0);
}
