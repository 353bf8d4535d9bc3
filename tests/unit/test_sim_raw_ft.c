/* The simulator's raw FT sensor (kind "ft_raw"): the sensor model's gain (u = gain * truth before offset, noise and
 * quantization), the scenario keys (counts_per_unit, cross_talk, cross_talk_seed) and, on a simulated arm, the raw
 * counts against the ideal FT channel of the same sensor: r = K w + offset with w in the model's FT convention. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/io.h"
#include "roboest/sim.h"

#define ARM RB_SOURCE "/datasets/arm_2ft.urdf"

Test(sim_raw_ft, gain_applies_before_offset_and_quantization)
{
    double G[36], truth[6] = {1.5, -2.0, 3.25, 0.1, -0.2, 0.05}, off[6] = {10, 20, 30, 40, 50, 60}, y[6], stamp;
    for (size_t i = 0; i < 36; i++)
        G[i] = (i / 6 == i % 6 ? 100.0 : 0.0) + 0.5 * (double)(i % 7) - 1.0;
    rb_sensor_params p = rb_sensor_preset(RB_SENS_FT_RAW, "FTs_raw/x", 6);
    cr_assert_eq(p.n, 6);
    cr_assert_float_eq(rb_sensor_vec_at(p.resolution, 0), 1.0, 0);
    cr_assert_str_eq(rb_sensor_kind_name(RB_SENS_FT_RAW), "ft_raw");
    cr_assert_str_eq(rb_sensor_kind_unit(RB_SENS_FT_RAW, 4), "counts");
    p.noise_std.all = 0;
    p.resolution.all = 0;
    p.offset.each = off;
    p.gain = G;
    rb_sensor s;
    rb_err err;
    cr_assert_eq(rb_sensor_init(&s, &p, 1, 0.0, &err), RB_OK, "%s", err.msg);
    G[0] = 1e9; /* init copied the gain */
    cr_assert(rb_sensor_step(&s, 0.0, truth, y, &stamp));
    for (size_t i = 0; i < 6; i++) {
        double u = 0;
        for (size_t k = 0; k < 6; k++)
            u += (i == 0 && k == 0 ? 99.0 : G[6 * i + k]) * truth[k];
        cr_expect_float_eq(y[i], u + off[i], 1e-9, "element %zu: %g, expected %g", i, y[i], u + off[i]);
    }
    rb_sensor_free(&s);
    /* quantization applies to the counts, after the gain */
    p.resolution.all = 1.0;
    G[0] = 99.0;
    cr_assert_eq(rb_sensor_init(&s, &p, 1, 0.0, &err), RB_OK);
    cr_assert(rb_sensor_step(&s, 0.0, truth, y, &stamp));
    for (size_t i = 0; i < 6; i++)
        cr_expect_float_eq(y[i], round(y[i]), 0, "element %zu not a whole count: %g", i, y[i]);
    rb_sensor_free(&s);
    G[7] = NAN;
    cr_assert_eq(rb_sensor_params_validate(&p, &err), RB_ECONFIG);
    cr_expect(strstr(err.msg, "gain[1][1]") != NULL, "%s", err.msg);
}

static const char *SCN_HEAD = "{\"model\": {\"urdf\": \"" ARM "\"}, \"duration\": %g, \"seed\": %d,"
                              " \"q0\": {\"shoulder_pitch\": 0.6, \"elbow\": 0.9, \"wrist_roll\": 0.4},"
                              " \"sensors\": [%s]}";

static int load(const char *sensors, double duration, int seed, rb_scenario **s, rb_err *err)
{
    char text[2048];
    snprintf(text, sizeof text, SCN_HEAD, duration, seed, sensors);
    return rb_scenario_load_text(text, strlen(text), "raw.json", NULL, s, err);
}

static const rb_scenario_sensor *raw_sensor(const rb_scenario *s)
{
    for (size_t i = 0; i < s->n_sensors; i++)
        if (s->sensors[i].source == RB_SCN_FT_RAW)
            return &s->sensors[i];
    return NULL;
}

Test(sim_raw_ft, scenario_gain_from_counts_and_cross_talk)
{
    rb_scenario *s = NULL, *s2 = NULL, *s3 = NULL;
    rb_err err;
    const char *one = "{\"kind\": \"ft_raw\", \"ft\": \"wrist_ft_sensor\", \"counts_per_unit\": [50, 60, 70, 800, "
                      "900, 1000], \"cross_talk\": 0.1, \"cross_talk_seed\": 5}";
    cr_assert_eq(load(one, 0.01, 1, &s, &err), RB_OK, "%s", err.msg);
    const rb_scenario_sensor *ss = raw_sensor(s);
    cr_assert_not_null(ss);
    cr_assert_str_eq(ss->channel, "FTs_raw/wrist_ft_sensor");
    const double cpu[6] = {50, 60, 70, 800, 900, 1000};
    bool coupled = false;
    for (size_t i = 0; i < 36; i++) {
        size_t r = i / 6, c = i % 6;
        double x = ss->params.gain[i] / cpu[r] - (r == c ? 1.0 : 0.0);
        cr_expect(fabs(x) <= 0.1, "cross-talk [%zu][%zu] = %g beyond 0.1", r, c, x);
        coupled |= r != c && fabs(x) > 1e-3;
        if (r == c)
            cr_expect_float_eq(x, 0.0, 0);
    }
    cr_expect(coupled, "no cross-talk drawn");
    /* another scenario seed, the same sensor; another cross_talk_seed, another one */
    cr_assert_eq(load(one, 0.01, 2, &s2, &err), RB_OK, "%s", err.msg);
    cr_expect(memcmp(raw_sensor(s2)->params.gain, ss->params.gain, 36 * sizeof(double)) == 0);
    char other[512];
    snprintf(other, sizeof other, "%.*s6}", (int)(strlen(one) - 2), one);
    cr_assert_eq(load(other, 0.01, 1, &s3, &err), RB_OK, "%s", err.msg);
    cr_expect(memcmp(raw_sensor(s3)->params.gain, ss->params.gain, 36 * sizeof(double)) != 0);
    rb_scenario_free(s);
    rb_scenario_free(s2);
    rb_scenario_free(s3);
}

Test(sim_raw_ft, scenario_key_errors)
{
    struct {
        const char *sensor, *expect;
    } cases[] = {
        {"{\"kind\": \"ft_raw\", \"ft\": \"wrist_ft_sensor\", \"counts_per_unit\": 0}", "counts per unit must be > 0"},
        {"{\"kind\": \"ft\", \"ft\": \"wrist_ft_sensor\", \"cross_talk\": 0.1}", "only for an \"ft_raw\" sensor"},
        {"{\"kind\": \"ft_raw\", \"ft\": \"wrist_ft_sensor\", \"cross_talk\": 1.5}", "in [0, 1)"},
        {"{\"kind\": \"ft_raw\", \"ft\": \"wrist_ft_sensr\"}", "did you mean 'wrist_ft_sensor'"},
        {"{\"kind\": \"ft_raw\", \"frame\": \"hand\"}", "use 'ft'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rb_scenario *s = NULL;
        rb_err err;
        cr_expect_eq(load(cases[i].sensor, 0.01, 1, &s, &err), RB_ECONFIG, "case %zu accepted", i);
        cr_expect(strstr(err.msg, cases[i].expect) != NULL, "case %zu: %s", i, err.msg);
        cr_expect_null(s);
    }
}

/* The raw counts of a noise-free sensor are K times the ideal FT channel plus the offset, sample by sample: the
 * counts follow the model's FT convention (the reading's frame and sign). */
Test(sim_raw_ft, counts_follow_the_ideal_ft_channel)
{
    const char *sensors =
        "{\"kind\": \"ft\", \"ft\": \"wrist_ft_sensor\", \"noise\": 0, \"lo\": -1e9, \"hi\": 1e9},"
        "{\"kind\": \"ft_raw\", \"ft\": \"wrist_ft_sensor\", \"noise\": 0, \"resolution\": 0, \"cross_talk\": 0.05,"
        " \"offset\": [100, -200, 300, -400, 500, -600]}";
    rb_scenario *s = NULL;
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(load(sensors, 0.2, 3, &s, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_scenario_run(s, NULL, NULL, &log, &err), RB_OK, "%s", err.msg);
    const rb_channel *ft = rb_log_find(log, "FTs/wrist_ft_sensor"), *raw = rb_log_find(log, "FTs_raw/wrist_ft_sensor");
    cr_assert(ft && raw);
    cr_assert_eq(raw->n_samples, ft->n_samples);
    cr_assert_str_eq(raw->units[0], "counts");
    cr_assert_str_eq(raw->element_names[5], "sg5");
    const double *K = raw_sensor(s)->params.gain, off[6] = {100, -200, 300, -400, 500, -600};
    double wmax = 0;
    for (size_t t = 0; t < raw->n_samples; t++)
        for (size_t i = 0; i < 6; i++) {
            double u = off[i];
            for (size_t k = 0; k < 6; k++)
                u += K[6 * i + k] * ft->data[6 * t + k];
            wmax = fmax(wmax, fabs(ft->data[6 * t + i]));
            cr_assert_float_eq(raw->data[6 * t + i], u, 1e-9 * (1 + fabs(u)), "sample %zu element %zu", t, i);
        }
    cr_expect(wmax > 1.0, "the hand loads the sensor (max %g)", wmax);
    rb_log_free(log);
    rb_scenario_free(s);
}
