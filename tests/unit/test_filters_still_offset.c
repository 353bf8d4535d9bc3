/* rb_still_offset: a constant offset averaged over a still window (given or detected), frozen after it. */
#include <criterion/criterion.h>
#include <math.h>

#include "roboest/filters.h"

/* 1 kHz samples: meas = pred + 2 + a known zero-mean wiggle (+-0.5 alternating), dq 0 until t_move, then 1 rad/s. */
static void feed(rb_still_offset *o, double t_move, double t_end)
{
    for (int k = 0; k * 1e-3 <= t_end; k++) {
        double t = k * 1e-3, dq = t < t_move ? 0.0 : 1.0, pred = 10.0, meas = 12.0 + (k % 2 ? 0.5 : -0.5);
        if (t >= t_move)
            meas += 5.0; /* what moving does to the reading: must not enter the offset */
        rb_still_offset_add(o, t, &dq, 1, &meas, &pred);
    }
}

Test(filters_still_offset, detected_window_averages_until_a_joint_moves)
{
    rb_err err;
    rb_still_offset o;
    rb_still_offset_cfg cfg = {.speed = 0.05, .t_max = 10.0};
    cr_assert_eq(rb_still_offset_init(&o, &cfg, 1, &err), RB_OK, "%s", err.msg);
    feed(&o, 0.5, 1.0);
    cr_assert(o.frozen);
    cr_assert_float_eq(o.offset[0], 2.0, 1e-3, "offset %g: the mean of the still samples", o.offset[0]);
    cr_assert_float_eq(o.t_end, 0.5, 1e-9);
    rb_still_offset_free(&o);
}

Test(filters_still_offset, given_window_then_frozen)
{
    rb_err err;
    rb_still_offset o;
    rb_still_offset_cfg cfg = {.given = true, .w0 = 0.1, .w1 = 0.3};
    cr_assert_eq(rb_still_offset_init(&o, &cfg, 1, &err), RB_OK, "%s", err.msg);
    feed(&o, 0.5, 1.0);
    cr_assert(o.frozen);
    cr_assert_float_eq(o.offset[0], 2.0, 1e-2, "%g", o.offset[0]);
    cr_assert(o.n_avg >= 199 && o.n_avg <= 201, "%zu samples in [0.1, 0.3] s", o.n_avg);
    rb_still_offset_free(&o);
}

Test(filters_still_offset, first_only_is_the_first_sample)
{
    rb_err err;
    rb_still_offset o;
    rb_still_offset_cfg cfg = {.first_only = true};
    cr_assert_eq(rb_still_offset_init(&o, &cfg, 1, &err), RB_OK, "%s", err.msg);
    feed(&o, 0.5, 1.0);
    cr_assert_float_eq(o.offset[0], 1.5, 1e-12, "the first sample: 12 - 0.5 - 10");
    rb_still_offset_free(&o);
}

Test(filters_still_offset, bad_configurations)
{
    rb_err err;
    rb_still_offset o;
    rb_still_offset_cfg w = {.given = true, .w0 = 0.3, .w1 = 0.1}, d = {.speed = 0.0, .t_max = 1.0};
    cr_assert_eq(rb_still_offset_init(&o, &w, 1, &err), RB_EINVAL);
    rb_still_offset_free(&o);
    cr_assert_eq(rb_still_offset_init(&o, &d, 1, &err), RB_EINVAL);
    rb_still_offset_free(&o);
}
