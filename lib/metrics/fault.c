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

void rb_fault_outliers(const double *z, size_t m, double k_sigma, size_t k, rb_fault_tally *tally)
{
    if (!(k_sigma > 0))
        return;
    for (size_t j = 0; j < m; j++)
        if (fabs(z[j]) > k_sigma) /* false for NaN */
            tally_add(&tally[j], k, 1);
}
