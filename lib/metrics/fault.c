/* The sensor-fault monitor's detectors (metrics.h): stuck and saturated runs over one element's samples, and
 * innovation outliers one sample at a time. Nothing here allocates. */
#include <math.h>
#include <stdint.h>

#include "roboest/metrics.h"

const char *rb_fault_kind_name(int kind)
{
    static const char *const names[RB_FAULT_N_KINDS] = {"stuck", "saturated", "outlier"};
    return kind >= 0 && kind < RB_FAULT_N_KINDS ? names[kind] : NULL;
}

void rb_fault_tally_init(rb_fault_tally *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        t[i] = (rb_fault_tally){0, SIZE_MAX};
}

static void tally_add(rb_fault_tally *t, size_t first, size_t count)
{
    if (t->count == 0)
        t->first = first;
    t->count += count;
}

void rb_fault_scan(const double *x, size_t n, size_t stride, const rb_fault_opts *o, rb_fault_tally *stuck,
                   rb_fault_tally *saturated)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t k = 0; k < n; k++) {
        double v = x[k * stride];
        if (isfinite(v)) {
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    }
    for (size_t k = 0; k < n;) {
        double v0 = x[k * stride];
        if (!isfinite(v0)) {
            k++;
            continue;
        }
        size_t e = k + 1;
        if (o->saturation_window && lo < hi && (v0 == hi || v0 == lo)) { /* a constant element is stuck at most */
            while (e < n && x[e * stride] == v0)
                e++;
            if (e - k >= o->saturation_window) {
                tally_add(saturated, k, e - k);
                k = e;
                continue;
            }
            e = k + 1; /* too short for saturation: it may still be stuck */
        }
        /* |x - v0| <= tol is false for NaN: a non-finite sample ends the run */
        while (e < n && fabs(x[e * stride] - v0) <= o->stuck_tolerance)
            e++;
        if (o->stuck_window && e - k >= o->stuck_window)
            tally_add(stuck, k, e - k);
        k = e;
    }
}

void rb_fault_range(const double *x, size_t n, size_t stride, double *lo, double *hi)
{
    for (size_t k = 0; k < n; k++) { /* rb_fault_scan's: the extremes compare equal in any order (even +-0) */
        double v = x[k * stride];
        if (isfinite(v)) {
            *lo = v < *lo ? v : *lo;
            *hi = v > *hi ? v : *hi;
        }
    }
}

void rb_fault_stream_init(rb_fault_stream *s, double lo, double hi)
{
    *s = (rb_fault_stream){.lo = lo, .hi = hi, .v0 = 0, .at = 0, .start = 0, .mode = 0};
}

enum { RUN_NONE, RUN_EXTREME, RUN_NEAR };

/* rb_fault_scan's run at an extreme ends: saturated when long enough, else it goes on as a stuck run (the equal
 * samples are within any tolerance). */
static void end_extreme(rb_fault_stream *s, const rb_fault_opts *o, rb_fault_tally *saturated)
{
    if (s->at - s->start >= o->saturation_window) {
        tally_add(saturated, s->start, s->at - s->start);
        s->mode = RUN_NONE;
    } else {
        s->mode = RUN_NEAR;
    }
}

static void end_near(rb_fault_stream *s, const rb_fault_opts *o, rb_fault_tally *stuck)
{
    if (o->stuck_window && s->at - s->start >= o->stuck_window)
        tally_add(stuck, s->start, s->at - s->start);
    s->mode = RUN_NONE;
}

void rb_fault_stream_push(rb_fault_stream *s, const double *x, size_t n, size_t stride, const rb_fault_opts *o,
                          rb_fault_tally *stuck, rb_fault_tally *saturated)
{
    for (size_t k = 0; k < n; k++, s->at++) {
        double v = x[k * stride];
        if (s->mode == RUN_EXTREME) {
            if (v == s->v0)
                continue;
            end_extreme(s, o, saturated);
        }
        if (s->mode == RUN_NEAR) {
            if (fabs(v - s->v0) <= o->stuck_tolerance) /* false for NaN */
                continue;
            end_near(s, o, stuck);
        }
        if (!isfinite(v))
            continue;
        s->start = s->at, s->v0 = v;
        s->mode = o->saturation_window && s->lo < s->hi && (v == s->hi || v == s->lo) ? RUN_EXTREME : RUN_NEAR;
    }
}

void rb_fault_stream_end(rb_fault_stream *s, const rb_fault_opts *o, rb_fault_tally *stuck, rb_fault_tally *saturated)
{
    if (s->mode == RUN_EXTREME)
        end_extreme(s, o, saturated);
    if (s->mode == RUN_NEAR)
        end_near(s, o, stuck);
}

void rb_fault_outliers(const double *z, size_t m, double k_sigma, size_t k, rb_fault_tally *tally)
{
    if (!(k_sigma > 0))
        return;
    for (size_t j = 0; j < m; j++)
        if (fabs(z[j]) > k_sigma) /* false for NaN */
            tally_add(&tally[j], k, 1);
}
