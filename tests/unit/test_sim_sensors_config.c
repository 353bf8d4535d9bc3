/* Sensor models: parameter validation (messages name the sensor and the parameter), the documented
 * seed derivation, determinism (same seed, same bytes; another name, another stream), allocation. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "roboest/core.h"
#include "roboest/sim.h"
#include "alloc_count.h"

#define SEED UINT64_C(77)

static void expect_config_error(const rb_sensor_params *p, const char *param)
{
    rb_err err;
    rb_err_clear(&err);
    cr_assert_eq(rb_sensor_params_validate(p, &err), RB_ECONFIG, "%s accepted", param);
    cr_expect(strstr(err.msg, p->name ? p->name : "(unnamed)") != NULL, "message lacks the sensor: %s", err.msg);
    cr_expect(strstr(err.msg, param) != NULL, "message lacks %s: %s", param, err.msg);
    rb_sensor s;
    rb_err_clear(&err);
    cr_assert_eq(rb_sensor_init(&s, p, SEED, 0.0, &err), RB_ECONFIG);
    cr_expect(strstr(err.msg, param) != NULL, "init message lacks %s: %s", param, err.msg);
    rb_sensor_free(&s); /* safe after a failed init */
}

Test(sim_sensors_config, presets_validate)
{
    for (int kind = RB_SENS_JOINT_ENCODER; kind <= RB_SENS_ORIENTATION; kind++) {
        rb_sensor_params p = rb_sensor_preset((rb_sensor_kind)kind, "x", 4);
        rb_err err;
        cr_assert_eq(rb_sensor_params_validate(&p, &err), RB_OK, "%s: %s", rb_sensor_kind_name(p.kind), err.msg);
    }
    cr_assert_str_eq(rb_sensor_kind_unit(RB_SENS_FT, 2), "N");
    cr_assert_str_eq(rb_sensor_kind_unit(RB_SENS_FT, 3), "N m");
    cr_assert_str_eq(rb_sensor_kind_unit(RB_SENS_ACCELEROMETER, 0), "m/s^2");
    cr_assert_eq(rb_sensor_preset(RB_SENS_FT, "f", 2).n, 6);
    cr_assert_eq(rb_sensor_preset(RB_SENS_GYROSCOPE, "g", 9).n, 3);
    cr_assert_eq(rb_sensor_preset(RB_SENS_JOINT_ENCODER, "j", 9).n, 9);
}

Test(sim_sensors_config, validation_errors_name_sensor_and_parameter)
{
    const double neg[3] = {0.1, 0.2, -0.3};
    rb_sensor_params base = rb_sensor_preset(RB_SENS_ACCELEROMETER, "accelerometers::l_foot_imu", 3);
    rb_sensor_params p;

    p = base;
    p.noise_std.all = -0.01;
    expect_config_error(&p, "noise_std[0]");
    p = base;
    p.noise_std.each = neg;
    expect_config_error(&p, "noise_std[2]");
    p = base;
    p.noise_std.all = NAN;
    expect_config_error(&p, "noise_std");
    p = base;
    p.rate_hz = 0;
    expect_config_error(&p, "rate_hz");
    p = base;
    p.rate_hz = -100;
    expect_config_error(&p, "rate_hz");
    p = base;
    p.rate_hz = NAN;
    expect_config_error(&p, "rate_hz");
    p = base;
    p.rate_hz = INFINITY;
    expect_config_error(&p, "rate_hz");
    p = base;
    p.resolution.all = -1e-3;
    expect_config_error(&p, "resolution");
    p = base;
    p.drift_rw_std.each = neg;
    expect_config_error(&p, "drift_rw_std[2]");
    p = base;
    p.jitter_s = -1e-4;
    expect_config_error(&p, "jitter_s");
    p = base;
    p.jitter_s = 0.5 / p.rate_hz;
    expect_config_error(&p, "jitter_s");
    p = base;
    p.bias.all = INFINITY;
    expect_config_error(&p, "bias");
    p = base;
    p.drift_rate.all = NAN;
    expect_config_error(&p, "drift_rate");
    p = base;
    p.offset.all = -INFINITY;
    expect_config_error(&p, "offset");
    p = base;
    p.lo.all = 5;
    p.hi.all = 4;
    expect_config_error(&p, "lo[0]");
    p = base;
    p.hi.all = NAN;
    expect_config_error(&p, "hi[0]");
    p = base;
    p.n = 0;
    expect_config_error(&p, "n = 0");
    p = base;
    p.name = NULL;
    expect_config_error(&p, "name");
    p = base;
    p.name = "";
    p.noise_std.all = -1;
    rb_err err;
    cr_assert_eq(rb_sensor_params_validate(&p, &err), RB_ECONFIG);
    cr_expect(strstr(err.msg, "name") != NULL, "%s", err.msg);
    /* zero noise, zero resolution are valid */
    p = base;
    p.noise_std.all = 0;
    p.resolution.all = 0;
    p.drift_rw_std.all = 0;
    cr_assert_eq(rb_sensor_params_validate(&p, &err), RB_OK, "%s", err.msg);
}

Test(sim_sensors_config, seed_derivation_is_fnv1a_of_the_name_xor_the_seed)
{
    /* FNV-1a 64 reference values: "" is the offset basis, "a" 0xaf63dc4c8601ec8c */
    cr_assert_eq(rb_sensor_seed(0, ""), UINT64_C(0xcbf29ce484222325));
    cr_assert_eq(rb_sensor_seed(0, "a"), UINT64_C(0xaf63dc4c8601ec8c));
    cr_assert_eq(rb_sensor_seed(UINT64_C(0x1234), "a"), UINT64_C(0xaf63dc4c8601ec8c) ^ UINT64_C(0x1234));
    cr_assert_eq(rb_sensor_seed(0, "foobar"), UINT64_C(0x85944171f73967e8));
}

/* Runs a jittered, noisy, drifting 6-axis sensor for 5000 steps into out (6 values + stamp per step;
 * NaN where no sample). */
static void run(const char *name, uint64_t seed, const double *noise_each, double *out)
{
    rb_sensor_params p = rb_sensor_preset(RB_SENS_FT, name, 6);
    p.rate_hz = 500;
    p.jitter_s = 1e-4;
    p.drift_rw_std.all = 0.05;
    p.resolution.all = 1e-4;
    if (noise_each)
        p.noise_std.each = noise_each;
    rb_sensor s;
    rb_err err;
    cr_assert_eq(rb_sensor_init(&s, &p, seed, 0.0, &err), RB_OK, "%s", err.msg);
    for (size_t k = 0; k < 5000; k++) {
        double t = (double)k * 1e-3, truth[6];
        for (size_t i = 0; i < 6; i++)
            truth[i] = 10 * sin(t + (double)i);
        double *o = out + 7 * k;
        if (!rb_sensor_step(&s, t, truth, o, o + 6))
            for (size_t i = 0; i < 7; i++)
                o[i] = NAN;
    }
    rb_sensor_free(&s);
}

static size_t n_diff(const double *a, const double *b, size_t n, size_t stride, size_t col)
{
    size_t d = 0;
    for (size_t k = 0; k < n; k++) {
        double x = a[k * stride + col], y = b[k * stride + col];
        if (!(isnan(x) && isnan(y)) && memcmp(&x, &y, sizeof x) != 0)
            d++;
    }
    return d;
}

Test(sim_sensors_config, same_seed_same_bytes_other_name_other_stream)
{
    size_t len = 7 * 5000;
    double *a = calloc(len, sizeof *a), *b = calloc(len, sizeof *b), *c = calloc(len, sizeof *c),
           *d = calloc(len, sizeof *d);
    cr_assert(a && b && c && d);
    run("FTs::r_leg_ft", SEED, NULL, a);
    run("FTs::r_leg_ft", SEED, NULL, b);
    cr_assert_eq(memcmp(a, b, len * sizeof *a), 0, "two runs with the same seed differ");
    run("FTs::l_leg_ft", SEED, NULL, c);
    run("FTs::r_leg_ft", SEED + 1, NULL, d);
    for (size_t col = 0; col < 7; col++) {
        cr_assert(n_diff(a, c, 5000, 7, col) > 2000, "another name: column %zu nearly the same stream", col);
        cr_assert(n_diff(a, d, 5000, 7, col) > 2000, "another seed: column %zu nearly the same stream", col);
    }
    /* changing element 3's noise leaves the other elements' bytes (and the stamps) unchanged */
    const double noise[6] = {0.5, 0.5, 0.5, 2.0, 0.5, 0.5};
    run("FTs::r_leg_ft", SEED, noise, c);
    for (size_t col = 0; col < 7; col++)
        cr_assert_eq(n_diff(a, c, 5000, 7, col) == 0, col != 3, "column %zu", col);
    free(a);
    free(b);
    free(c);
    free(d);
}

Test(sim_sensors_config, another_sensor_does_not_change_a_stream)
{
    rb_sensor_params pa = rb_sensor_preset(RB_SENS_GYROSCOPE, "gyros::waist", 3);
    rb_sensor_params pb = rb_sensor_preset(RB_SENS_ACCELEROMETER, "accelerometers::waist", 3);
    rb_sensor a1, a2, b;
    rb_err err;
    cr_assert_eq(rb_sensor_init(&a1, &pa, SEED, 0, &err), RB_OK);
    cr_assert_eq(rb_sensor_init(&b, &pb, SEED, 0, &err), RB_OK);
    double truth[3] = {0.1, -0.2, 9.81}, y1[3], y2[3], yb[3];
    double out1[3 * 1000];
    for (size_t k = 0; k < 1000; k++) {
        cr_assert(rb_sensor_step(&a1, (double)k * 0.01, truth, y1, NULL));
        cr_assert(rb_sensor_step(&b, (double)k * 0.01, truth, yb, NULL));
        memcpy(out1 + 3 * k, y1, sizeof y1);
    }
    cr_assert_eq(rb_sensor_init(&a2, &pa, SEED, 0, &err), RB_OK); /* alone this time */
    for (size_t k = 0; k < 1000; k++) {
        cr_assert(rb_sensor_step(&a2, (double)k * 0.01, truth, y2, NULL));
        cr_assert_eq(memcmp(out1 + 3 * k, y2, sizeof y2), 0);
    }
    rb_sensor_free(&a1);
    rb_sensor_free(&a2);
    rb_sensor_free(&b);
}

Test(sim_sensors_config, step_allocates_nothing_and_init_reports_no_memory)
{
    rb_sensor_params p = rb_sensor_preset(RB_SENS_JOINT_ENCODER, "joints_state::positions", 32);
    p.noise_std.all = 1e-4;
    p.drift_rw_std.all = 1e-5;
    p.jitter_s = 1e-4;
    rb_sensor s;
    rb_err err;
    rb_alloc_fail_after(0);
    cr_assert_eq(rb_sensor_init(&s, &p, SEED, 0, &err), RB_ENOMEM);
    rb_alloc_fail_after(-1);
    cr_expect(strstr(err.msg, "joints_state::positions") != NULL, "%s", err.msg);
    rb_sensor_free(&s);
    cr_assert_eq(rb_sensor_init(&s, &p, SEED, 0, &err), RB_OK, "%s", err.msg);
    double truth[32] = {0}, y[32], stamp;
    if (test_alloc_count_works()) {
        test_alloc_count_init();
        test_alloc_counting = 1;
        test_alloc_count = 0;
    }
    rb_alloc_fail_after(0); /* any rb_malloc in the steps would now fail */
    size_t got = 0;
    for (size_t k = 0; k < 5000; k++)
        got += rb_sensor_step(&s, (double)k * 1e-3, truth, y, &stamp);
    long lib_allocs = rb_alloc_fail_after(-1);
    test_alloc_counting = 0;
    cr_assert_eq(got, 5000);
    cr_assert_eq(lib_allocs, 0);
    if (test_alloc_count_works())
        cr_assert_eq(test_alloc_count, 0, "%ld C-library allocations in the steps", (long)test_alloc_count);
    rb_sensor_free(&s);
}
