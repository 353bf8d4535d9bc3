/* Quantiles, box-plot figures and the percentile bootstrap of a mean. */
#include <math.h>
#include <stdlib.h>

#include "metrics_internal.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void rb_sort_doubles(double *x, size_t n) { qsort(x, n, sizeof *x, cmp_double); }

double rb_quantile_sorted(const double *sorted, size_t n, double p)
{
    double h = (double)(n - 1) * p;
    size_t i = (size_t)floor(h);
    if (i + 1 >= n)
        return sorted[n - 1];
    return sorted[i] + (h - (double)i) * (sorted[i + 1] - sorted[i]);
}

int rb_bootstrap_draw(const rb_bootstrap *bs, size_t n, size_t *idx, rb_err *err)
{
    if (!bs || !idx || n == 0 || bs->samples == 0 || !(bs->level > 0 && bs->level < 1))
        return rb_err_set(err, RB_EINVAL, "rb_bootstrap_draw: needs items, samples >= 1 and a level in (0, 1)");
    rb_rng rng;
    rb_rng_seed(&rng, bs->seed);
    for (size_t b = 0; b < bs->samples; b++)
        for (size_t i = 0; i < n; i++) {
            size_t k = (size_t)((double)n * rb_rng_uniform(&rng));
            idx[b * n + i] = k < n ? k : n - 1; /* u < 1, but n * u may round up to n */
        }
    return RB_OK;
}

void rb_bootstrap_mean_interval(const double *x, size_t n, const size_t *idx, size_t B, double level, double *scratch,
                                double *lo, double *hi)
{
    for (size_t b = 0; b < B; b++) {
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += x[idx[b * n + i]];
        scratch[b] = sum / (double)n;
    }
    rb_sort_doubles(scratch, B);
    *lo = rb_quantile_sorted(scratch, B, (1 - level) / 2);
    *hi = rb_quantile_sorted(scratch, B, (1 + level) / 2);
}

void rb_box_stats(const double *x, size_t n, double *scratch, rb_box *box)
{
    for (size_t i = 0; i < n; i++)
        scratch[i] = x[i];
    rb_sort_doubles(scratch, n);
    box->n = n;
    box->q1 = rb_quantile_sorted(scratch, n, 0.25);
    box->median = rb_quantile_sorted(scratch, n, 0.5);
    box->q3 = rb_quantile_sorted(scratch, n, 0.75);
    double reach = 1.5 * (box->q3 - box->q1), lo_fence = box->q1 - reach, hi_fence = box->q3 + reach;
    box->whisker_lo = box->q1;
    box->whisker_hi = box->q3;
    box->n_outliers = 0;
    for (size_t i = 0; i < n; i++) {
        if (scratch[i] < lo_fence || scratch[i] > hi_fence)
            box->n_outliers++;
        else if (scratch[i] < box->whisker_lo)
            box->whisker_lo = scratch[i];
        else if (scratch[i] > box->whisker_hi)
            box->whisker_hi = scratch[i];
    }
}
