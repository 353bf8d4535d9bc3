/* rms_est: the estimate's root mean square over the window, whatever the reference (the size of a difference of
 * two estimates), per element and pooled; and its key in the comparison tables. */
#include <criterion/criterion.h>
#include <math.h>

#include "roboest/metrics.h"

Test(metrics_rms_est, hand_computed_over_the_window_and_pooled)
{
    /* sample 0 lies outside [0.1, 0.3]; inside, element 0: e = {1, -2, 2}, element 1: e = {0, 4, 3} */
    const double time[] = {0.0, 0.1, 0.2, 0.3};
    const double e[] = {100, -100, 1, 0, -2, 4, 2, 3};
    const double r[] = {7, 7, 5, -5, 5, -5, 5, -5}; /* any reference: rms_est does not read it */
    rb_metric_input in = {
        .estimate = e, .reference = r, .time = time, .n_samples = 4, .n_elements = 2, .t0 = 0.1, .t1 = 0.3};
    rb_stats el[2], all;
    rb_err err;
    cr_assert_eq(rb_metrics_compute(&in, el, &all, &err), RB_OK, "%s", err.msg);
    cr_assert_float_eq(el[0].rms_est, sqrt(9.0 / 3), 1e-15);
    cr_assert_float_eq(el[1].rms_est, sqrt(25.0 / 3), 1e-15);
    cr_assert_float_eq(all.rms_est, sqrt(34.0 / 6), 1e-15);
    long k = rb_stat_index("rms_est");
    cr_assert_geq(k, 0, "rms_est is a statistic key");
    cr_assert_str_eq(rb_stat_key((size_t)k), "rms_est");
    cr_assert_float_eq(rb_stat_value(&el[1], (size_t)k), sqrt(25.0 / 3), 1e-15);
}
