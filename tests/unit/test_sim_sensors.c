/* Sensor measurement models (roboest/sim.h, "sensor models"): noise statistics, exactness with the
 * noise off, quantization, saturation, sample times and jitter, bias / offset, drift.
 *
 * Statistical bounds. Noise: N = 40000 samples per element. The sample mean of the residual has
 * standard error sigma / sqrt(N) = 0.005 sigma, so the 5 % bound (|mean| < 0.05 sigma) is 10 standard
 * errors; the sample std has relative standard error about 1 / sqrt(2 N) = 0.35 %, so 5 % is 14.
 * Random walk: M = 4000 independent sensors; the RMS over them of w(T) has relative standard error
 * about 1 / sqrt(2 M) = 1.1 %, and the bound is 5 % (4.5 standard errors). The streams are seeded, so
 * each test is deterministic; the bounds say a correct model cannot fail them by bad luck of the seed. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/core.h"
#include "roboest/sim.h"

#define NSTAT 40000
#define SEED UINT64_C(20240611)

static void init_ok(rb_sensor *s, const rb_sensor_params *p, uint64_t seed, double t0)
{
    rb_err err;
    rb_err_clear(&err);
    int rc = rb_sensor_init(s, p, seed, t0, &err);
    cr_assert_eq(rc, RB_OK, "init %s: %s", p->name, err.msg);
}

/* Truth of element i at time t: a smooth signal of moderate size. */
static double truth_at(double t, size_t i, double scale) { return scale * sin(1.3 * t + 0.7 * (double)i); }

/* Every sample: residual y - truth - expected constant; mean and std per element against sigma. */
static void check_noise_stats(rb_sensor_params p, const double *sigma_each)
{
    p.drift_rw_std.all = 0;
    p.drift_rw_std.each = NULL;
    p.resolution.all = 0;
    p.resolution.each = NULL;
    p.jitter_s = 0;
    double bias[8];
    for (size_t i = 0; i < p.n; i++)
        bias[i] = 0.1 * (double)(i + 1);
    p.bias.each = bias;
    rb_sensor s;
    init_ok(&s, &p, SEED, 0.0);
    double sum[8] = {0}, sum2[8] = {0}, truth[8], y[8];
    size_t got = 0;
    double dt = 1.0 / p.rate_hz;
    for (size_t k = 0; got < NSTAT; k++) {
        double t = (double)k * dt;
        for (size_t i = 0; i < p.n; i++)
            truth[i] = truth_at(t, i, 1.0);
        if (!rb_sensor_step(&s, t, truth, y, NULL))
            continue;
        for (size_t i = 0; i < p.n; i++) {
            double e = y[i] - truth[i] - bias[i];
            sum[i] += e;
            sum2[i] += e * e;
        }
        got++;
    }
    for (size_t i = 0; i < p.n; i++) {
        double sig = sigma_each ? sigma_each[i] : p.noise_std.all;
        double mean = sum[i] / NSTAT;
        double sd = sqrt((sum2[i] - NSTAT * mean * mean) / (NSTAT - 1));
        cr_expect(fabs(mean) < 0.05 * sig, "%s[%zu]: mean residual %g vs sigma %g", p.name, i, mean, sig);
        cr_expect(fabs(sd / sig - 1) < 0.05, "%s[%zu]: std %g vs configured %g", p.name, i, sd, sig);
    }
    rb_sensor_free(&s);
}

Test(sim_sensors, noise_statistics_match_configuration_for_every_kind)
{
    const rb_sensor_kind kinds[] = {RB_SENS_MOTOR_CURRENT, RB_SENS_FT, RB_SENS_ACCELEROMETER, RB_SENS_GYROSCOPE,
                                    RB_SENS_ORIENTATION};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        rb_sensor_params p = rb_sensor_preset(kinds[k], rb_sensor_kind_name(kinds[k]), 4);
        cr_assert(p.noise_std.all > 0, "preset %s has noise", p.name);
        check_noise_stats(p, NULL);
    }
    /* encoders (no noise in the preset) with noise added, and per-element stds on an FT */
    rb_sensor_params enc = rb_sensor_preset(RB_SENS_JOINT_ENCODER, "joints_state::positions", 5);
    enc.noise_std.all = 1e-3;
    check_noise_stats(enc, NULL);
    rb_sensor_params mot = rb_sensor_preset(RB_SENS_MOTOR_ENCODER, "motors_state::positions", 3);
    mot.noise_std.all = 2e-2;
    check_noise_stats(mot, NULL);
    double ft_std[6] = {0.5, 0.6, 0.9, 0.02, 0.03, 0.01};
    rb_sensor_params ft = rb_sensor_preset(RB_SENS_FT, "FTs::l_arm_ft", 0);
    ft.noise_std.each = ft_std;
    check_noise_stats(ft, ft_std);
}

Test(sim_sensors, noise_off_gives_the_true_value_exactly)
{
    for (int kind = RB_SENS_CUSTOM; kind <= RB_SENS_ORIENTATION; kind++) {
        rb_sensor_params p = rb_sensor_preset((rb_sensor_kind)kind, rb_sensor_kind_name((rb_sensor_kind)kind), 7);
        if (p.rate_hz == 0)
            p.rate_hz = 250;
        p.noise_std.all = 0;
        p.drift_rw_std.all = 0;
        p.resolution.all = 0;
        p.lo.all = -INFINITY;
        p.hi.all = INFINITY;
        rb_sensor s;
        init_ok(&s, &p, SEED, 0.0);
        double truth[7], y[7], stamp;
        size_t got = 0;
        for (size_t k = 0; k < 2000; k++) {
            double t = (double)k * 1e-3;
            for (size_t i = 0; i < p.n; i++)
                truth[i] = truth_at(t, i, kind == RB_SENS_ORIENTATION ? 3.0 : 123.456);
            if (!rb_sensor_step(&s, t, truth, y, &stamp))
                continue;
            got++;
            cr_assert_eq(stamp, t);
            for (size_t i = 0; i < p.n; i++)
                cr_assert_eq(y[i], truth[i], "%s[%zu] t=%g: %.17g != %.17g", p.name, i, t, y[i], truth[i]);
        }
        cr_assert(got > 0);
        rb_sensor_free(&s);
    }
}

static void check_quantized(rb_sensor_params p, double scale)
{
    rb_sensor s;
    init_ok(&s, &p, SEED, 0.0);
    double res = p.resolution.all, truth[4], y[4];
    for (size_t k = 0; k < 20000; k++) {
        double t = (double)k * 1e-3;
        for (size_t i = 0; i < p.n; i++)
            truth[i] = truth_at(t, i, scale) + 1e-5 * (double)k;
        cr_assert(rb_sensor_step(&s, t, truth, y, NULL));
        for (size_t i = 0; i < p.n; i++) {
            double m = y[i] / res;
            cr_assert(fabs(m - round(m)) < 1e-9 * fmax(1.0, fabs(m)), "%s: %.17g is not a multiple of %g", p.name, y[i],
                      res);
            if (p.noise_std.all == 0) {
                cr_assert_eq(y[i], res * round(truth[i] / res));
                cr_assert(fabs(y[i] - truth[i]) <= 0.5 * res * (1 + 1e-9));
            }
        }
    }
    rb_sensor_free(&s);
}

Test(sim_sensors, quantization_gives_multiples_of_the_resolution)
{
    rb_sensor_params je = rb_sensor_preset(RB_SENS_JOINT_ENCODER, "joints_state::positions", 4);
    cr_assert_eq(je.resolution.all, 2 * M_PI / 16384);
    check_quantized(je, 3.0);
    rb_sensor_params me = rb_sensor_preset(RB_SENS_MOTOR_ENCODER, "motors_state::positions", 4);
    cr_assert_eq(me.resolution.all, rb_sensor_encoder_resolution(16384));
    check_quantized(me, 500.0); /* rotor side: about R times the joint */
    me.resolution.all = rb_sensor_encoder_resolution(1000);
    me.noise_std.all = 0.01;
    check_quantized(me, 500.0);
    rb_sensor_params cur = rb_sensor_preset(RB_SENS_MOTOR_CURRENT, "motors_state::currents", 4);
    cur.noise_std.all = 0;
    check_quantized(cur, 5.0);
}

Test(sim_sensors, saturation_clamps_to_the_limits)
{
    rb_sensor_params p = rb_sensor_preset(RB_SENS_MOTOR_CURRENT, "motors_state::currents", 1);
    p.noise_std.all = 0;
    p.resolution.all = 0;
    rb_sensor s;
    init_ok(&s, &p, SEED, 0.0);
    size_t lo = 0, hi = 0;
    for (size_t k = 0; k < 4001; k++) {
        double t = (double)k * 1e-3, truth = -20.0 + 0.01 * (double)k, y;
        cr_assert(rb_sensor_step(&s, t, &truth, &y, NULL));
        double want = truth < -10 ? -10 : truth > 10 ? 10 : truth;
        cr_assert_eq(y, want, "truth %g: %g", truth, y);
        lo += y == -10;
        hi += y == 10;
    }
    cr_assert(lo > 900 && hi > 900);
    rb_sensor_free(&s);
}

/* Simulation at dt for `steps` steps from t0; counts samples and checks each is the first step at or
 * after its nominal instant. */
static size_t count_samples(double rate, double dt, size_t steps, double t0)
{
    rb_sensor_params p = rb_sensor_params_default("rate_probe", 1);
    p.rate_hz = rate;
    rb_sensor s;
    init_ok(&s, &p, SEED, t0);
    size_t got = 0;
    double truth = 1, y;
    for (size_t j = 0; j < steps; j++) {
        double t = t0 + (double)j * dt;
        double nominal = rb_sensor_next_time(&s);
        if (rb_sensor_step(&s, t, &truth, &y, NULL)) {
            if (rate <= 1 / dt) {
                cr_assert(t >= nominal - 1e-9 && t - dt < nominal + 1e-9, "rate %g: sample at %.12g for nominal %.12g",
                          rate, t, nominal);
            }
            got++;
        }
    }
    rb_sensor_free(&s);
    return got;
}

Test(sim_sensors, rate_gives_the_sample_count_over_a_window)
{
    /* a 10 s window of a 1 kHz simulation */
    cr_assert_eq(count_samples(1000, 1e-3, 10000, 0), 10000);
    cr_assert_eq(count_samples(500, 1e-3, 10000, 0), 5000);
    cr_assert_eq(count_samples(300, 1e-3, 10000, 0), 3000);   /* not a divisor of 1 kHz */
    cr_assert_eq(count_samples(100, 1e-3, 10000, 2.5), 1000); /* starting at t0 = 2.5 s */
    cr_assert_eq(count_samples(7, 1e-3, 10000, 0), 70);
    cr_assert_eq(count_samples(4000, 1e-3, 10000, 0), 10000); /* faster than the simulation */
}

Test(sim_sensors, timestamp_jitter_stays_within_bounds)
{
    rb_sensor_params p = rb_sensor_preset(RB_SENS_GYROSCOPE, "gyros::waist_imu", 3);
    p.jitter_s = 2e-3;
    rb_sensor s;
    init_ok(&s, &p, SEED, 0.0);
    double truth[3] = {0.1, 0.2, 0.3}, y[3], stamp, prev = -INFINITY, sum = 0, maxdev = 0;
    size_t got = 0;
    for (size_t j = 0; j < 100000; j++) {
        double t = (double)j * 1e-3;
        if (!rb_sensor_step(&s, t, truth, y, &stamp))
            continue;
        double d = stamp - t;
        cr_assert(fabs(d) <= p.jitter_s, "stamp %g at t %g", stamp, t);
        cr_assert(stamp > prev, "timestamps must increase");
        prev = stamp;
        sum += d;
        maxdev = fmax(maxdev, fabs(d));
        got++;
    }
    cr_assert_eq(got, 10000);
    /* uniform on [-j, j]: std j / sqrt(3); the mean's standard error is j / sqrt(3 N) = 0.0058 j */
    cr_expect(fabs(sum / (double)got) < 0.05 * p.jitter_s);
    cr_expect(maxdev > 0.95 * p.jitter_s);
    rb_sensor_free(&s);
}

Test(sim_sensors, bias_and_start_up_offset_appear_exactly)
{
    rb_sensor_params p = rb_sensor_preset(RB_SENS_FT, "FTs::r_foot_front_ft", 0);
    const double offset[6] = {12.5, -7.25, 31.0, 0.75, -1.5, 0.125};
    const double bias[6] = {0.3, -0.1, 0.7, 0.01, 0.02, -0.03};
    p.noise_std.all = 0;
    p.offset.each = offset;
    p.bias.each = bias;
    rb_sensor s;
    init_ok(&s, &p, SEED, 0.0);
    double truth[6], y[6];
    for (size_t k = 0; k < 3000; k++) {
        double t = (double)k * 1e-3;
        for (size_t i = 0; i < 6; i++)
            truth[i] = truth_at(t, i, i < 3 ? 300.0 : 20.0);
        cr_assert(rb_sensor_step(&s, t, truth, y, NULL));
        for (size_t i = 0; i < 6; i++)
            cr_assert_eq(y[i], truth[i] + offset[i] + bias[i], "t %g [%zu]", t, i);
    }
    rb_sensor_free(&s);

    /* representable values: the offset is seen exactly, sample after sample */
    p.bias.each = NULL;
    p.bias.all = 0;
    init_ok(&s, &p, SEED, 0.0);
    double zero[6] = {0};
    for (size_t k = 0; k < 10; k++) {
        cr_assert(rb_sensor_step(&s, (double)k * 1e-3, zero, y, NULL));
        cr_assert_arr_eq(y, offset, sizeof y);
    }
    rb_sensor_free(&s);
}

Test(sim_sensors, linear_drift_grows_at_its_rate)
{
    rb_sensor_params p = rb_sensor_params_default("temperatures::drifting", 2);
    p.rate_hz = 100;
    double rate[2] = {0.3, -2e-3};
    p.drift_rate.each = rate;
    rb_sensor s;
    init_ok(&s, &p, SEED, 1.0);
    double truth[2] = {5.0, -1.0}, y[2];
    for (size_t k = 0; k <= 10000; k++) {
        double t = 1.0 + (double)k * 1e-2;
        cr_assert(rb_sensor_step(&s, t, truth, y, NULL));
        for (size_t i = 0; i < 2; i++)
            cr_assert(fabs(y[i] - (truth[i] + rate[i] * (t - 1.0))) < 1e-12, "t %g: %g", t, y[i]);
    }
    rb_sensor_free(&s);
}

Test(sim_sensors, random_walk_std_grows_like_sqrt_t)
{
    enum { M = 4000 };
    const double q = 0.1, dt = 0.01; /* units per sqrt(s); 100 Hz sensor on a 100 Hz clock */
    const double checks[3] = {1.0, 4.0, 16.0};
    double ms[3] = {0};
    for (size_t m = 0; m < M; m++) {
        char name[32];
        snprintf(name, sizeof name, "accelerometers::imu_%zu", m);
        rb_sensor_params p = rb_sensor_params_default(name, 1);
        p.rate_hz = 100;
        p.drift_rw_std.all = q;
        rb_sensor s;
        init_ok(&s, &p, SEED, 0.0);
        double truth = 0, y = 0;
        size_t c = 0;
        for (size_t k = 0; k <= 1600; k++) {
            cr_assert(rb_sensor_step(&s, (double)k * dt, &truth, &y, NULL));
            if (k == 100 || k == 400 || k == 1600)
                ms[c++] += y * y;
        }
        rb_sensor_free(&s);
    }
    double sd[3];
    for (size_t c = 0; c < 3; c++) {
        sd[c] = sqrt(ms[c] / M);
        double want = q * sqrt(checks[c]);
        cr_expect(fabs(sd[c] / want - 1) < 0.05, "T = %g s: drift std %g, expected %g", checks[c], sd[c], want);
    }
    double slope = log(sd[2] / sd[0]) / log(checks[2] / checks[0]);
    cr_expect(fabs(slope - 0.5) < 0.05, "log-log slope %g, expected 0.5", slope);
}

Test(sim_sensors, wrap_angles_keeps_rpy_in_range)
{
    rb_sensor_params p = rb_sensor_preset(RB_SENS_ORIENTATION, "orientations::head_imu", 3);
    rb_sensor s;
    init_ok(&s, &p, SEED, 0.0);
    double truth[3] = {M_PI - 1e-4, -M_PI + 1e-4, 0.5}, y[3];
    for (size_t k = 0; k < 5000; k++) {
        cr_assert(rb_sensor_step(&s, (double)k * 1e-2, truth, y, NULL));
        for (size_t i = 0; i < 3; i++)
            cr_assert(y[i] >= -M_PI && y[i] < M_PI, "%.17g", y[i]);
    }
    rb_sensor_free(&s);
}
