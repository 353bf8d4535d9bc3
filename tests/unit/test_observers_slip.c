/* The slip predictor (roboest/observers.h, rb_slip_*; seed 003 ch. 5): the thesis's threshold steps 4-5 on a
 * hand-made sequence (values derived here from eq. 5.22-5.30), the prediction regions of eq. 5.20 at their edges,
 * the accelerometer bias and mount rotation, the ratio form, contact hysteresis and holding, fixed thresholds, the
 * touch-down hold, non-finite samples, refusals (negative Tr or F_ms, foot mass not positive), the mount of a model's
 * frames (rigid or across a joint: the "not on the foot" case) and no allocation per step. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "roboest/observers.h"
#include "roboest/spatial.h"
#include "support.h"

static rb_slip_config base(void)
{
    rb_slip_config c;
    rb_slip_config_init(&c);
    c.tr = 1.0; /* m/s^2 */
    c.margin = 5.0;
    c.bias_samples = 0;
    return c;
}

/* One contact sample: tangential force fx (N) at F_N = 400, foot acceleration ax (m/s^2) along x. */
static void step_x(rb_slip *s, double fx, double ax, rb_slip_out *o)
{
    double F[3] = {fx, 0, 400}, A[3] = {ax, 0, 0};
    rb_slip_step(s, F, A, 1, o);
}

Test(observers_slip, thesis_steps_by_hand)
{
    rb_slip_config c = base();
    c.foot_mass = 2.0;
    rb_slip s;
    rb_err err;
    cr_assert_eq(rb_slip_init(&s, &c, &err), RB_OK, "%s", err.msg);
    rb_slip_out o;
    /* not slipping: F_s the running maximum of |F_t|, F_c follows it (start 0), F_st 0 */
    step_x(&s, 10, 0, &o);
    step_x(&s, -20, 0, &o);
    step_x(&s, 15, 0, &o);
    cr_assert_float_eq(o.fs[0], 20, 1e-12);
    cr_assert_float_eq(o.fc[0], 20, 1e-12);
    cr_assert_float_eq(o.fst[0], 0, 1e-12);
    cr_assert_float_eq(o.fsuf[0], 15, 1e-12);
    cr_assert_eq(o.detected[0], 0);
    /* slipping (|p''| = 1.5 >= Tr): F_f = F_t + m_f p'' = 9 + 3 = 12, F_c = min(12, 20), F_st = 20 - 12, F_s held */
    step_x(&s, 9, 1.5, &o);
    cr_assert_eq(o.detected[0], 1);
    cr_assert_float_eq(o.ff[0], 12, 1e-12);
    cr_assert_float_eq(o.fc[0], 12, 1e-12);
    cr_assert_float_eq(o.fst[0], 8, 1e-12);
    cr_assert_float_eq(o.fs[0], 20, 1e-12);
    cr_assert_float_eq(o.fsuf[0], 7, 1e-12);
    /* not slipping below F_c + F_st: nothing moves but F_c = min(F_s, F_c) */
    step_x(&s, 18, 0, &o);
    cr_assert_float_eq(o.fc[0], 12, 1e-12);
    cr_assert_float_eq(o.fs[0], 20, 1e-12);
    /* above F_c + F_st = 20: F_s = 25 and F_c = |25 - F_st| = 17 (5.25) */
    step_x(&s, -25, 0, &o);
    cr_assert_float_eq(o.fs[0], 25, 1e-12);
    cr_assert_float_eq(o.fc[0], 17, 1e-12);
    cr_assert_float_eq(o.fsuf[0], 12, 1e-12);
    cr_assert_eq(s.n_detected, 1);
}

Test(observers_slip, prediction_regions_at_their_edges)
{
    /* 5.20: |F_t| <= F_suf no slip, F_suf < |F_t| < F_c tends to slip, |F_t| >= F_c slipping */
    cr_assert_eq(rb_slip_classify(16, 16, 21), RB_SLIP_NO);
    cr_assert_eq(rb_slip_classify(-16.001, 16, 21), RB_SLIP_TENDS);
    cr_assert_eq(rb_slip_classify(20.999, 16, 21), RB_SLIP_TENDS);
    cr_assert_eq(rb_slip_classify(-21, 16, 21), RB_SLIP_SLIPPING);
    cr_assert_eq(rb_slip_classify(0, 0, 0), RB_SLIP_SLIPPING); /* nothing learned yet: any force reaches F_c = 0 */
    /* in a step: the class of |F_t| against the thresholds the step ends with */
    rb_slip_config c = base();
    c.learn = false;
    c.fc0[0] = 21, c.fs0[0] = 85, c.fst0[0] = 64;
    rb_slip s;
    rb_err err;
    cr_assert_eq(rb_slip_init(&s, &c, &err), RB_OK, "%s", err.msg);
    rb_slip_out o;
    double f[4] = {10, -18, 21, 30};
    rb_slip_class want[4] = {RB_SLIP_NO, RB_SLIP_TENDS, RB_SLIP_SLIPPING, RB_SLIP_SLIPPING};
    for (int i = 0; i < 4; i++) {
        step_x(&s, f[i], 0, &o);
        cr_assert_eq(o.prediction[0], want[i], "F_t = %g", f[i]);
        cr_assert_eq(o.worst, want[i]);
    }
    cr_assert_float_eq(o.fc[0], 21, 0); /* fixed: never learned */
    cr_assert_float_eq(o.fs[0], 85, 0);
    cr_assert_float_eq(o.fsuf[0], 16, 0);
}

Test(observers_slip, bias_and_upside_down_mount)
{
    /* the foot IMU mounted 180 deg about x reads -g along its z at rest, and a foot acceleration +a along the foot's y
     * as -a: with its rotation and the bias from the first samples, p'' is the foot's, gravity and offsets gone */
    rb_slip_config c = base();
    c.bias_samples = 50;
    c.n_axes = 2;
    c.axes[0] = RB_SLIP_X, c.axes[1] = RB_SLIP_Y;
    rb_m3_from_rpy(M_PI, 0, 0, c.R_acc);
    rb_slip s;
    rb_err err;
    cr_assert_eq(rb_slip_init(&s, &c, &err), RB_OK, "%s", err.msg);
    rb_slip_out o;
    double F[3] = {3, 4, 300}, rest[3] = {0.3, -0.2, -9.81}; /* a sensor offset of (0.3, -0.2) */
    for (int k = 0; k < 50; k++)
        rb_slip_step(&s, F, rest, 1, &o);
    cr_assert_eq(s.n_detected, 0);
    double moving[3] = {0.3, -0.2 - 2.0, -9.81}; /* the foot accelerates at +2 m/s^2 along its y */
    rb_slip_step(&s, F, moving, 1, &o);
    cr_assert_float_eq(o.acc[0], 0, 1e-9);
    cr_assert_float_eq(o.acc[1], 2.0, 1e-9);
    cr_assert_eq(o.detected[0], 0);
    cr_assert_eq(o.detected[1], 1);
    cr_assert_float_eq(o.ff[1], 4 + 1.0 * 2.0, 1e-9); /* F_f = F_t + m_f p'' */
    /* without the rotation the sign is wrong: F_f = 4 - 2 */
    rb_m3_identity(c.R_acc);
    cr_assert_eq(rb_slip_init(&s, &c, &err), RB_OK);
    for (int k = 0; k < 50; k++)
        rb_slip_step(&s, F, rest, 1, &o);
    rb_slip_step(&s, F, moving, 1, &o);
    cr_assert_float_eq(o.ff[1], 4 - 2.0, 1e-9);
}

Test(observers_slip, ratio_form_and_tangential_axis)
{
    rb_slip_config c = base();
    c.ratio = true;
    c.margin = 0.01;
    c.axes[0] = RB_SLIP_T;
    rb_slip s;
    rb_err err;
    cr_assert_eq(rb_slip_init(&s, &c, &err), RB_OK, "%s", err.msg);
    rb_slip_out o;
    double F[3] = {6, 8, 200}, A[3] = {0, 0, 0}; /* |F_t| = 10 N at F_N 200: 0.05 */
    rb_slip_step(&s, F, A, 1, &o);
    cr_assert_float_eq(o.ft[0], 0.05, 1e-12);
    cr_assert_float_eq(o.fs[0], 0.05, 1e-12);
    double F2[3] = {3, 4, 500}; /* 5 N at 500 N: 0.01, below F_c: no slip (F_suf 0.04) */
    rb_slip_step(&s, F2, A, 1, &o);
    cr_assert_eq(o.prediction[0], RB_SLIP_NO);
    double F3[3] = {0, 1, -5}; /* in contact by the caller's flag with F_N <= 0: an infinite ratio, nothing learned */
    rb_slip_step(&s, F3, A, 1, &o);
    cr_assert(isinf(o.ft[0]));
    cr_assert_eq(o.prediction[0], RB_SLIP_SLIPPING);
    cr_assert_float_eq(o.fs[0], 0.05, 1e-12);
}

Test(observers_slip, contact_hysteresis_holds_the_thresholds)
{
    rb_slip_config c = base();
    c.contact_on = 30, c.contact_off = 15;
    rb_slip s;
    rb_err err;
    cr_assert_eq(rb_slip_init(&s, &c, &err), RB_OK, "%s", err.msg);
    rb_slip_out o;
    double A[3] = {5, 0, 0}; /* a swinging foot accelerates: no detection out of contact */
    double F_swing[3] = {50, 0, 20}, F_on[3] = {7, 0, 31}, F_mid[3] = {7, 0, 20}, F_off[3] = {7, 0, 14};
    rb_slip_step(&s, F_swing, A, -1, &o);
    cr_assert(!o.contact);
    cr_assert_eq(o.prediction[0], RB_SLIP_NO);
    cr_assert_eq(o.detected[0], 0);
    cr_assert_float_eq(o.fs[0], 0, 0); /* held (5.21) */
    double Z[3] = {0, 0, 0};
    rb_slip_step(&s, F_on, Z, -1, &o);
    cr_assert(o.contact);
    cr_assert_float_eq(o.fs[0], 7, 0);
    rb_slip_step(&s, F_mid, Z, -1, &o); /* between the two levels: still in contact */
    cr_assert(o.contact);
    rb_slip_step(&s, F_off, Z, -1, &o);
    cr_assert(!o.contact);
    /* the caller's flag wins over the force */
    rb_slip_step(&s, F_swing, Z, 1, &o);
    cr_assert(o.contact);
    cr_assert_float_eq(o.fs[0], 50, 0);
}

Test(observers_slip, hold_after_touchdown_skips_the_impact)
{
    rb_slip_config c = base();
    c.hold_samples = 3;
    rb_slip s;
    rb_err err;
    cr_assert_eq(rb_slip_init(&s, &c, &err), RB_OK, "%s", err.msg);
    rb_slip_out o;
    double F[3] = {5, 0, 300}, spike[3] = {20, 0, 0}, Z[3] = {0, 0, 0};
    rb_slip_step(&s, F, Z, 0, &o);
    for (int k = 0; k < 3; k++) { /* the impact right after touch-down: no detection, no learning */
        rb_slip_step(&s, F, spike, 1, &o);
        cr_assert_eq(o.detected[0], 0);
        cr_assert_float_eq(o.fs[0], 0, 0);
    }
    rb_slip_step(&s, F, spike, 1, &o);
    cr_assert_eq(o.detected[0], 1);
}

Test(observers_slip, nonfinite_sample_gives_nan_and_holds)
{
    rb_slip_config c = base();
    rb_slip s;
    rb_err err;
    cr_assert_eq(rb_slip_init(&s, &c, &err), RB_OK, "%s", err.msg);
    rb_slip_out o;
    step_x(&s, 10, 0, &o);
    double F[3] = {NAN, 0, 300}, A[3] = {0, 0, 0};
    rb_slip_step(&s, F, A, 1, &o);
    cr_assert(isnan(o.ft[0]));
    cr_assert_float_eq(o.fs[0], 10, 0);
    cr_assert_eq(s.n_nonfinite, 1);
}

Test(observers_slip, refuses_bad_configurations)
{
    rb_slip s;
    rb_err err;
    const char *const keys[] = {"foot_mass", "foot_mass", "slip_threshold", "safety_margin", "coulomb_friction"};
    rb_slip_config c = base();
    c.foot_mass = 0;
    cr_assert_eq(rb_slip_init(&s, &c, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, keys[0]), "%s", err.msg);
    c = base(), c.foot_mass = -1;
    cr_assert_eq(rb_slip_init(&s, &c, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, keys[1]), "%s", err.msg);
    c = base(), c.tr = -0.09;
    cr_assert_eq(rb_slip_init(&s, &c, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, keys[2]), "%s", err.msg);
    c = base(), c.margin = -5;
    cr_assert_eq(rb_slip_init(&s, &c, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, keys[3]), "%s", err.msg);
    c = base(), c.fc0[0] = INFINITY;
    cr_assert_eq(rb_slip_init(&s, &c, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, keys[4]), "%s", err.msg);
    c = base(), c.R_acc[0] = 2;
    cr_assert_eq(rb_slip_init(&s, &c, &err), RB_ECONFIG);
    c = base(), c.n_axes = 0;
    cr_assert_eq(rb_slip_init(&s, &c, &err), RB_ECONFIG);
}

Test(observers_slip, mount_from_the_walker_model)
{
    rb_model *m = NULL;
    rb_err err;
    rb_model_opts opts = {.floating = true};
    cr_assert_eq(rb_model_load_urdf(RB_SOURCE "/datasets/walker_biped.urdf", &opts, &m, &err), RB_OK, "%s", err.msg);
    long sole = rb_model_frame_index(m, "r_sole"), imu = rb_model_frame_index(m, "r_foot_imu");
    long waist = rb_model_frame_index(m, "waist_imu");
    cr_assert(sole >= 0 && imu >= 0 && waist >= 0);
    double R[9], Rx[9];
    bool rigid = false;
    /* the foot IMU sits on the ankle link, the sole on the foot plate under the FT sensor: fixed joints only */
    cr_assert_eq(rb_slip_mount(m, (size_t)sole, (size_t)imu, R, &rigid, &err), RB_OK);
    cr_assert(rigid);
    rb_m3_from_rpy(M_PI, 0, 0, Rx);
    for (int i = 0; i < 9; i++)
        cr_assert_float_eq(R[i], Rx[i], 1e-12, "R[%d]", i);
    /* the waist IMU: the leg's joints lie between (the stage warns) */
    cr_assert_eq(rb_slip_mount(m, (size_t)sole, (size_t)waist, R, &rigid, &err), RB_OK);
    cr_assert(!rigid);
    cr_assert_eq(rb_slip_mount(m, m->n_frames, 0, R, &rigid, &err), RB_EINVAL);
    rb_model_free(m);
}

Test(observers_slip, no_allocation_per_step)
{
    test_alloc_count_init();
    rb_slip_config c = base();
    c.n_axes = 3;
    c.axes[1] = RB_SLIP_Y, c.axes[2] = RB_SLIP_T;
    rb_slip s;
    rb_err err;
    cr_assert_eq(rb_slip_init(&s, &c, &err), RB_OK);
    rb_slip_out o;
    test_alloc_count = 0;
    test_alloc_counting = 1;
    for (int k = 0; k < 1000; k++) {
        double F[3] = {10 * sin(k), 5 * cos(k), 300}, A[3] = {(k % 50) ? 0 : 3, 0, 0};
        rb_slip_step(&s, F, A, k % 300 < 200, &o);
    }
    test_alloc_counting = 0;
    if (test_alloc_count_works())
        cr_assert_eq(test_alloc_count, 0);
    cr_assert_eq(s.n_steps, 1000);
}
