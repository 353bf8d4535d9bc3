/* The attitude estimator (roboest/observers.h, rb_att_*): roll and pitch of a rotating, accelerating IMU with noise
 * and a constant accelerometer bias against the truth; the sign of the proper acceleration; the start-up split; the
 * written-out gravity KF against the filters module's rb_kf; the q / -q hemisphere; the yaw (gyro only); NaN
 * samples; the bias unobservable without rotation; refusals; no allocation per step. The IMU data are generated
 * here from a known motion. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "roboest/core.h"
#include "roboest/filters.h"
#include "roboest/observers.h"
#include "roboest/spatial.h"

#define G 9.81
#define DEG (3.14159265358979323846 / 180.0)

/* A motion: body rate w(t) (IMU axes), world linear acceleration a_W(t), the IMU's truth sampled every dt. */
typedef struct synth {
    size_t n;
    double dt;
    double *acc, *gyro, *rpy, *t; /* 3 per sample (t: 1) */
    double R[9];                  /* the last truth rotation */
} synth;

typedef struct motion {
    bool walking;        /* small tilts at gait frequencies; else a tumbling motion (tilts of tens of degrees) */
    double amp_w, amp_a; /* scales of the rate (rad/s) and the linear acceleration (m/s^2) */
    double bias[3];      /* accelerometer bias, m/s^2 */
    double acc_std, gyro_std;
    double rpy0[3];
    double yaw_rate; /* rad/s about the IMU's z added to the rate */
    uint64_t seed;
} motion;

#define TAU (2 * 3.14159265358979323846)

static void rate(const motion *m, double t, double w[3])
{
    if (m->walking) { /* about +-3 deg of roll and pitch at the gait's 0.45 and 0.9 Hz, a slow turn */
        w[0] = m->amp_w * 0.3 * sin(TAU * 0.45 * t);
        w[1] = m->amp_w * 0.25 * sin(TAU * 0.9 * t + 1.0);
        w[2] = m->amp_w * 0.2 * sin(0.5 * t + 2.0) + m->yaw_rate;
        return;
    }
    w[0] = m->amp_w * 0.6 * sin(0.9 * t);
    w[1] = m->amp_w * 0.5 * sin(0.7 * t + 1.0);
    w[2] = m->amp_w * 0.4 * sin(0.5 * t + 2.0) + m->yaw_rate;
}

static void lin_acc(const motion *m, double t, double a[3])
{
    if (m->walking) { /* forward at the step frequency, sideways at half of it, vertical at twice it */
        a[0] = m->amp_a * 1.0 * sin(TAU * 0.9 * t);
        a[1] = m->amp_a * 0.8 * sin(TAU * 0.45 * t + 0.5);
        a[2] = m->amp_a * 1.5 * sin(TAU * 1.8 * t + 1.0);
        return;
    }
    a[0] = m->amp_a * 0.8 * sin(2.1 * t);
    a[1] = m->amp_a * 0.6 * sin(1.7 * t + 0.5);
    a[2] = m->amp_a * 0.5 * sin(2.9 * t + 1.0);
}

/* Truth by the exact rotation over 20 sub-steps with the rate at each sub-step's middle. */
static void synth_make(synth *s, const motion *m, size_t n, double dt)
{
    s->n = n, s->dt = dt;
    s->acc = malloc(3 * n * sizeof(double)), s->gyro = malloc(3 * n * sizeof(double));
    s->rpy = malloc(3 * n * sizeof(double)), s->t = malloc(n * sizeof(double));
    cr_assert(s->acc && s->gyro && s->rpy && s->t);
    rb_rng rng;
    rb_rng_seed(&rng, m->seed);
    rb_m3_from_rpy(m->rpy0[0], m->rpy0[1], m->rpy0[2], s->R);
    const int sub = 20;
    for (size_t k = 0; k < n; k++) {
        double t = (double)k * dt;
        if (k > 0) {
            for (int j = 0; j < sub; j++) {
                double w[3], E[9], Rn[9], h = dt / sub;
                rate(m, t - dt + (j + 0.5) * h, w);
                double nw = sqrt(rb_v3_dot(w, w));
                if (nw > 0) {
                    double ax[3] = {w[0] / nw, w[1] / nw, w[2] / nw};
                    rb_m3_from_axis_angle(ax, nw * h, E);
                    rb_m3_mul(s->R, E, Rn);
                    memcpy(s->R, Rn, sizeof Rn);
                }
            }
        }
        double aw[3], f[3], w[3];
        lin_acc(m, t, aw);
        aw[2] += G; /* a_W - g_W */
        rb_m3t_mul_v(s->R, aw, f);
        rate(m, t, w);
        for (int i = 0; i < 3; i++) {
            s->acc[3 * k + i] = f[i] + m->bias[i] + m->acc_std * rb_rng_normal(&rng);
            s->gyro[3 * k + i] = w[i] + m->gyro_std * rb_rng_normal(&rng);
        }
        rb_m3_to_rpy(s->R, s->rpy + 3 * k);
        s->t[k] = t;
    }
}

static void synth_free(synth *s) { free(s->acc), free(s->gyro), free(s->rpy), free(s->t); }

static double wrap(double a) { return remainder(a, 2 * 3.14159265358979323846); }

typedef struct result {
    double rmse[3], max_abs[3]; /* roll pitch yaw, rad, from t_skip on */
    double tilt_rmse;           /* rad: the angle between the true and the estimated up direction */
    rb_att_out last;
    rb_att_diag diag;
} result;

static result run(const rb_att_config *c, const synth *s, double t_skip)
{
    rb_att *a = NULL;
    rb_err err;
    cr_assert_eq(rb_att_alloc(c, &a, &err), RB_OK, "%s", err.msg);
    result r;
    memset(&r, 0, sizeof r);
    size_t cnt = 0;
    for (size_t k = 0; k < s->n; k++) {
        cr_assert_eq(rb_att_step(a, k, s->t[k], s->acc + 3 * k, s->gyro + 3 * k, &err), RB_OK, "%s", err.msg);
        rb_att_get_out(a, &r.last);
        double nq = sqrt(r.last.q[0] * r.last.q[0] + r.last.q[1] * r.last.q[1] + r.last.q[2] * r.last.q[2] +
                         r.last.q[3] * r.last.q[3]);
        cr_assert_float_eq(nq, 1.0, 1e-12, "sample %zu: |q| = %.17g", k, nq);
        cr_assert(r.last.q[0] >= 0);
        if (s->t[k] < t_skip)
            continue;
        cnt++;
        double Re[9], Rt[9];
        rb_m3_from_quat(r.last.q, Re);
        rb_m3_from_rpy(s->rpy[3 * k], s->rpy[3 * k + 1], s->rpy[3 * k + 2], Rt);
        double cz = Re[6] * Rt[6] + Re[7] * Rt[7] + Re[8] * Rt[8]; /* the third rows: the world's up in the IMU */
        double tilt = atan2(sqrt(fmax(0.0, 1 - cz * cz)), cz);
        r.tilt_rmse += tilt * tilt;
        for (int i = 0; i < 3; i++) {
            double e = wrap(r.last.rpy[i] - s->rpy[3 * k + i]);
            r.rmse[i] += e * e;
            r.max_abs[i] = fmax(r.max_abs[i], fabs(e));
        }
    }
    for (int i = 0; i < 3; i++)
        r.rmse[i] = sqrt(r.rmse[i] / (double)cnt);
    r.tilt_rmse = sqrt(r.tilt_rmse / (double)cnt);
    rb_att_get_diag(a, &r.diag);
    rb_att_free(a);
    return r;
}

/* The simulator's IMU preset noise (rb_sensor_preset); its accelerometer has no constant bias. */
static const motion walking = {.walking = true,
                               .amp_w = 1.0,
                               .amp_a = 1.0,
                               .acc_std = 0.02,
                               .gyro_std = 0.005,
                               .rpy0 = {0.02, -0.03, 0.3},
                               .seed = 3};
static const motion tumbling = {.amp_w = 1.0,
                                .amp_a = 1.0,
                                .bias = {0.05, -0.04, 0.06},
                                .acc_std = 0.02,
                                .gyro_std = 0.005,
                                .rpy0 = {0.1, -0.2, 0.3},
                                .seed = 3};

Test(observers_attitude, roll_and_pitch_of_a_walking_imu)
{
    synth s;
    synth_make(&s, &walking, 6000, 0.01); /* 60 s at 100 Hz */
    rb_att_config c;
    rb_att_config_init(&c);
    result r = run(&c, &s, 5.0);
    cr_log_info("walking-like IMU (+-3 deg, linear acceleration up to 1.5 m/s^2, preset noise): roll RMSE %.3f deg "
                "(max %.3f), pitch %.3f (max %.3f)",
                r.rmse[0] / DEG, r.max_abs[0] / DEG, r.rmse[1] / DEG, r.max_abs[1] / DEG);
    cr_expect(r.rmse[0] < 0.5 * DEG, "roll RMSE %g deg", r.rmse[0] / DEG);
    cr_expect(r.rmse[1] < 0.5 * DEG, "pitch RMSE %g deg", r.rmse[1] / DEG);
    /* the accelerometer alone (its tilt, through the linear acceleration) is far worse: the filter earns its keep */
    double se = 0;
    for (size_t k = 500; k < s.n; k++) {
        const double *f = s.acc + 3 * k;
        double e = wrap(atan2(f[1], f[2]) - s.rpy[3 * k]);
        se += e * e;
    }
    cr_expect(sqrt(se / (double)(s.n - 500)) > 4 * r.rmse[0], "the accelerometer's roll alone: %g deg",
              sqrt(se / (double)(s.n - 500)) / DEG);
    synth_free(&s);
}

Test(observers_attitude, tumbling_imu_with_a_bias)
{
    synth s;
    synth_make(&s, &tumbling, 6000, 0.01);
    rb_att_config c;
    rb_att_config_init(&c);
    result r = run(&c, &s, 5.0);
    cr_log_info("tumbling IMU (tilts of tens of degrees), bias [0.05 -0.04 0.06]: tilt RMSE %.3f deg (roll %.3f, pitch "
                "%.3f: Euler angles near pitch +-90 deg magnify); bias [%.4f %.4f %.4f], |g| %.4f",
                r.tilt_rmse / DEG, r.rmse[0] / DEG, r.rmse[1] / DEG, r.last.bias[0], r.last.bias[1], r.last.bias[2],
                sqrt(rb_v3_dot(r.last.gravity, r.last.gravity)));
    cr_expect(r.tilt_rmse < 0.6 * DEG, "tilt RMSE %g deg", r.tilt_rmse / DEG);
    /* rotation makes the bias observable: the estimate heads for it (slowly: tens of seconds), where a still IMU
     * leaves it near 0 (bias_unobservable_without_rotation) */
    for (int i = 0; i < 3; i++)
        cr_expect(fabs(r.last.bias[i] - tumbling.bias[i]) < 0.7 * fabs(tumbling.bias[i]) &&
                      r.last.bias[i] * tumbling.bias[i] > 0,
                  "bias[%d] %g, true %g", i, r.last.bias[i], tumbling.bias[i]);
    cr_expect(fabs(sqrt(rb_v3_dot(r.last.gravity, r.last.gravity)) - G) < 0.05, "gravity keeps its magnitude");
    /* the standard form's first-order gravity step lengthens g_b */
    c.first_order = true;
    result f = run(&c, &s, 5.0);
    cr_log_info("first-order gravity step: |g| %.4f, tilt RMSE %.3f deg",
                sqrt(rb_v3_dot(f.last.gravity, f.last.gravity)), f.tilt_rmse / DEG);
    cr_expect(sqrt(rb_v3_dot(f.last.gravity, f.last.gravity)) > G + 0.1);
    synth_free(&s);
}

Test(observers_attitude, proper_acceleration_sign_and_static_tilt)
{
    /* at rest (no rate, no linear acceleration, no noise): a level IMU reads +g up; a tilted one its tilt */
    const double tilts[][2] = {{0, 0}, {0.3, -0.2}, {-1.0, 0.6}, {2.5, 0.1}};
    for (size_t i = 0; i < sizeof tilts / sizeof tilts[0]; i++) {
        motion m = {.rpy0 = {tilts[i][0], tilts[i][1], 0.0}};
        synth s;
        synth_make(&s, &m, 200, 0.01);
        if (i == 0)
            cr_assert(fabs(s.acc[2] - G) < 1e-12 && fabs(s.acc[0]) < 1e-12, "a level IMU at rest reads [0 0 +g]");
        rb_att_config c;
        rb_att_config_init(&c);
        result r = run(&c, &s, 0.0);
        cr_expect(r.max_abs[0] < 1e-9 && r.max_abs[1] < 1e-9, "roll %g pitch %g: errors %g %g", tilts[i][0],
                  tilts[i][1], r.max_abs[0], r.max_abs[1]);
        double R[9], gw[3] = {0, 0, -G}, gb[3];
        rb_m3_from_rpy(tilts[i][0], tilts[i][1], 0.0, R);
        rb_m3t_mul_v(R, gw, gb);
        for (int j = 0; j < 3; j++) /* the direction of gravity, its magnitude split by the start-up weights */
            cr_expect(fabs(r.last.gravity[j] / sqrt(rb_v3_dot(r.last.gravity, r.last.gravity)) - gb[j] / G) < 1e-9);
        cr_expect(r.last.gravity[2] * gb[2] > 0, "gravity points down: [%g %g %g]", r.last.gravity[0],
                  r.last.gravity[1], r.last.gravity[2]);
        synth_free(&s);
    }
}

Test(observers_attitude, start_up_decomposes_the_first_sample)
{
    const double acc[3] = {1.2, -0.7, 9.6}, gyro[3] = {0, 0, 0};
    rb_att_config c;
    rb_att_config_init(&c);
    c.gravity_std0 = c.lin_acc_std0 = c.bias_std0 = 0.5; /* equal weights: the plain pseudo-inverse */
    rb_att *a = NULL;
    rb_err err;
    cr_assert_eq(rb_att_alloc(&c, &a, &err), RB_OK, "%s", err.msg);
    rb_att_out o;
    rb_att_get_out(a, &o);
    cr_assert(!o.initialized && isnan(o.q[0]) && isnan(o.gravity[0]), "NaN before the first sample");
    cr_assert_eq(rb_att_step(a, 0, 0.0, acc, gyro, &err), RB_OK, "%s", err.msg);
    rb_att_get_out(a, &o);
    for (int i = 0; i < 3; i++) {
        cr_expect_float_eq(o.gravity[i], -acc[i] / 3, 1e-15);
        cr_expect_float_eq(o.lin_acc[i], acc[i] / 3, 1e-15);
        cr_expect_float_eq(o.bias[i], acc[i] / 3, 1e-15);
        cr_expect_float_eq(-o.gravity[i] + o.lin_acc[i] + o.bias[i], acc[i], 1e-14, "the split explains the sample");
    }
    rb_att_free(a);
    rb_att_config_init(&c); /* the defaults give gravity sg^2 / (sg^2 + sa^2 + sb^2) of it */
    cr_assert_eq(rb_att_alloc(&c, &a, &err), RB_OK);
    cr_assert_eq(rb_att_step(a, 0, 0.0, acc, gyro, &err), RB_OK);
    rb_att_get_out(a, &o);
    double s = 100 + 1 + 0.01;
    for (int i = 0; i < 3; i++)
        cr_expect_float_eq(o.gravity[i], -100 / s * acc[i], 1e-14);
    cr_expect_float_eq(o.rpy[0], atan2(acc[1], acc[2]), 1e-12);
    cr_expect_float_eq(o.rpy[1], atan2(-acc[0], hypot(acc[1], acc[2])), 1e-12);
    cr_expect(fabs(o.rpy[2]) < 1e-15, "yaw starts at 0: %g", o.rpy[2]);
    rb_att_free(a);
}

/* The written-out KF against rb_kf with the same F, Q, H, R at every step, a NaN element included. */
Test(observers_attitude, gravity_kf_equals_the_filters_module)
{
    motion m = tumbling;
    synth s;
    synth_make(&s, &m, 600, 0.01);
    s.acc[3 * 100 + 1] = NAN;
    s.acc[3 * 200 + 0] = s.acc[3 * 200 + 2] = NAN;
    s.acc[3 * 300 + 0] = s.acc[3 * 300 + 1] = s.acc[3 * 300 + 2] = NAN;
    rb_att_config c;
    rb_att_config_init(&c);
    rb_att *a = NULL;
    rb_err err;
    cr_assert_eq(rb_att_alloc(&c, &a, &err), RB_OK);
    cr_assert_eq(rb_att_step(a, 0, 0.0, s.acc, s.gyro, &err), RB_OK);
    rb_att_out o;
    rb_att_get_out(a, &o);
    double x0[9], P0[81] = {0}, H[27] = {0}, R[9] = {0}, F[81] = {0};
    double v0[3] = {c.gravity_std0 * c.gravity_std0, c.lin_acc_std0 * c.lin_acc_std0, c.bias_std0 * c.bias_std0};
    for (int i = 0; i < 3; i++) {
        x0[i] = o.gravity[i], x0[3 + i] = o.lin_acc[i], x0[6 + i] = o.bias[i];
        for (int b = 0; b < 3; b++) {
            P0[(3 * b + i) * 10] = v0[b];
            H[9 * i + 3 * b + i] = b == 0 ? -1 : 1;
        }
        R[4 * i] = c.acc_noise * c.acc_noise;
    }
    rb_filter_opts fo;
    rb_filter_opts_init(&fo);
    fo.n = 9, fo.m = 3, fo.x0 = x0, fo.P0 = P0, fo.R = R, fo.F = F, fo.H = H;
    rb_filter *kf = NULL;
    cr_assert_eq(rb_kf_create(&fo, &kf, &err), RB_OK, "%s", err.msg);
    double worst_x = 0, worst_p = 0;
    for (size_t k = 1; k < s.n; k++) {
        const double *w = s.gyro + 3 * k, *x = rb_filter_x(kf), dt = s.dt;
        rb_filter_mats mm = rb_filter_get_mats(kf);
        double d = exp(-c.lin_acc_decay * dt), sg = c.gyro_noise * dt, g2 = rb_v3_dot(x, x);
        double A[9];
        rb_att_gravity_step(w, dt, false, A);
        memset(mm.F.data, 0, 81 * sizeof(double));
        memset(mm.Q.data, 0, 81 * sizeof(double));
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) {
                mm.F.data[9 * i + j] = A[3 * i + j];
                mm.Q.data[9 * i + j] = sg * sg * ((i == j) * g2 - x[i] * x[j]);
            }
            mm.F.data[10 * (3 + i)] = d;
            mm.F.data[10 * (6 + i)] = 1;
            mm.Q.data[10 * (3 + i)] = c.lin_acc_rw * c.lin_acc_rw * dt;
            mm.Q.data[10 * (6 + i)] = c.bias_rw * c.bias_rw * dt;
        }
        cr_assert_eq(rb_filter_predict(kf, NULL, dt, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_filter_update(kf, s.acc + 3 * k, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_att_step(a, k, s.t[k], s.acc + 3 * k, s.gyro + 3 * k, &err), RB_OK, "%s", err.msg);
        rb_att_get_out(a, &o);
        x = rb_filter_x(kf);
        const double *P = rb_filter_P(kf);
        for (int i = 0; i < 3; i++) {
            double mine[3] = {o.gravity[i], o.lin_acc[i], o.bias[i]};
            for (int b = 0; b < 3; b++) {
                worst_x = fmax(worst_x, fabs(mine[b] - x[3 * b + i]));
                worst_p = fmax(worst_p, fabs(o.var[3 * b + i] - P[(3 * b + i) * 10]) / P[(3 * b + i) * 10]);
            }
        }
    }
    cr_log_info("gravity KF against rb_kf: largest state difference %.3g, relative variance difference %.3g", worst_x,
                worst_p);
    cr_expect(worst_x < 1e-9, "state differs by %g", worst_x);
    cr_expect(worst_p < 1e-9, "variance differs by %g (relative)", worst_p);
    rb_filter_free(kf);
    rb_att_free(a);
    synth_free(&s);
}

Test(observers_attitude, measured_quaternion_taken_in_the_prediction_hemisphere)
{
    /* q0 = -identity: the same rotation, in the other hemisphere from the measured quaternions (w >= 0) */
    synth s;
    synth_make(&s, &walking, 2000, 0.01);
    rb_att_config c;
    rb_att_config_init(&c);
    c.have_q0 = true;
    c.q0[0] = -1;
    result r = run(&c, &s, 5.0);
    cr_expect(r.diag.flips > 1900, "flips %ld", r.diag.flips);
    cr_expect(r.rmse[0] < 0.5 * DEG && r.rmse[1] < 0.5 * DEG, "roll %g pitch %g deg", r.rmse[0] / DEG, r.rmse[1] / DEG);
    c.q0[0] = 1; /* +identity: the outputs (w >= 0) must not tell the two starts apart */
    result r2 = run(&c, &s, 5.0);
    cr_expect(fabs(r2.rmse[0] - r.rmse[0]) < 1e-9 && fabs(r2.rmse[1] - r.rmse[1]) < 1e-9,
              "the start's hemisphere changes nothing: roll %g vs %g", r.rmse[0], r2.rmse[0]);
    synth_free(&s);
}

Test(observers_attitude, yaw_follows_the_gyroscope_only)
{
    /* a constant turn about the vertical with a tilt: yaw integrates the rate from the given start */
    motion m = {.yaw_rate = 0.2, .rpy0 = {0.1, 0.05, 0.0}, .acc_std = 0.02};
    synth s;
    synth_make(&s, &m, 1000, 0.01);
    rb_att_config c;
    rb_att_config_init(&c);
    c.have_q0 = true;
    double R[9];
    rb_m3_from_rpy(0.0, 0.0, 0.7, R);
    rb_quat_from_m3(R, c.q0);
    for (int i = 0; i < 3; i++) /* the truth started at yaw 0: the estimate keeps the 0.7 offset */
        c.q0[i] *= 2.0;         /* any non-zero norm */
    c.q0[3] *= 2.0;
    rb_att *a = NULL;
    rb_err err;
    cr_assert_eq(rb_att_alloc(&c, &a, &err), RB_OK);
    rb_att_out o;
    double worst = 0;
    for (size_t k = 0; k < s.n; k++) {
        cr_assert_eq(rb_att_step(a, k, s.t[k], s.acc + 3 * k, s.gyro + 3 * k, &err), RB_OK, "%s", err.msg);
        rb_att_get_out(a, &o);
        worst = fmax(worst, fabs(wrap(o.rpy[2] - s.rpy[3 * k + 2] - 0.7)));
    }
    cr_log_info("yaw: offset kept within %.3g rad over 10 s of a 0.2 rad/s turn", worst);
    cr_expect(worst < 0.01, "yaw off the gyro's integral by %g rad", worst);
    cr_expect(fabs(wrap(o.rpy[2] - 0.7 - 0.2 * s.t[s.n - 1] - 0.0)) < 0.05, "yaw %g", o.rpy[2]);
    rb_att_free(a);
    synth_free(&s);
}

Test(observers_attitude, nan_samples_held_skipped_and_counted)
{
    synth s;
    synth_make(&s, &walking, 800, 0.01);
    double *clean = malloc(3 * s.n * sizeof(double));
    cr_assert_not_null(clean);
    memcpy(clean, s.acc, 3 * s.n * sizeof(double));
    for (int i = 0; i < 3; i++)
        s.acc[i] = s.acc[3 + i] = NAN; /* two samples before the start-up */
    s.gyro[3 * 50 + 1] = NAN;
    s.gyro[3 * 51] = INFINITY;
    s.acc[3 * 60 + 2] = NAN;
    for (size_t k = 100; k < 110; k++)
        for (int i = 0; i < 3; i++)
            s.acc[3 * k + i] = NAN;
    rb_att_config c;
    rb_att_config_init(&c);
    rb_att *a = NULL, *ref = NULL;
    rb_err err;
    cr_assert_eq(rb_att_alloc(&c, &a, &err), RB_OK);
    cr_assert_eq(rb_att_alloc(&c, &ref, &err), RB_OK);
    rb_att_out o, oref;
    double worst = 0;
    for (size_t k = 0; k < s.n; k++) {
        cr_assert_eq(rb_att_step(a, k, s.t[k], s.acc + 3 * k, s.gyro + 3 * k, &err), RB_OK, "%s", err.msg);
        rb_att_get_out(a, &o);
        if (k >= 2) {
            double g[3] = {s.gyro[3 * k], s.gyro[3 * k + 1], s.gyro[3 * k + 2]};
            if (k == 50)
                g[1] = s.gyro[3 * 49 + 1];
            if (k == 51)
                g[0] = s.gyro[3 * 50]; /* what holding gives */
            cr_assert_eq(rb_att_step(ref, k, s.t[k], clean + 3 * k, g, &err), RB_OK, "%s", err.msg);
            rb_att_get_out(ref, &oref);
        }
        if (k < 2) {
            cr_assert(!o.initialized && isnan(o.rpy[0]) && isnan(o.var[0]), "sample %zu: NaN before the start", k);
            continue;
        }
        for (int i = 0; i < 4; i++)
            cr_assert(isfinite(o.q[i]), "sample %zu", k);
        cr_assert_eq(o.updated, k > 2 && !(k >= 100 && k < 110), "sample %zu", k);
        if (k >= 100 && k < 110)
            cr_assert(isnan(o.q_meas[0]));
        if (k < 60)
            for (int i = 0; i < 4; i++) /* the held gyroscope is the clean run's with the held values */
                cr_assert_float_eq(o.q[i], oref.q[i], 1e-15, "sample %zu", k);
        for (int i = 0; i < 2; i++)
            worst = fmax(worst, fabs(o.rpy[i] - oref.rpy[i]));
    }
    cr_log_info("NaN accelerometer samples (one element once, all ten times): roll / pitch within %.3g deg of the "
                "clean run",
                worst / DEG);
    cr_expect(worst < 0.5 * DEG, "%g deg from the clean run", worst / DEG);
    rb_att_diag d;
    rb_att_get_diag(a, &d);
    cr_expect_eq(d.steps, 800);
    cr_expect_eq(d.waiting, 2);
    cr_expect_eq(d.gyro_held, 2);
    cr_expect_eq(d.acc_missing, 11);
    cr_expect_eq(d.no_update, 10);
    rb_att_free(a), rb_att_free(ref);
    free(clean);
    synth_free(&s);
}

Test(observers_attitude, bias_unobservable_without_rotation)
{
    /* a still IMU, tilted, with a bias across gravity: the tilt estimate absorbs it (about b / g rad), the bias
     * estimate stays near its prior; the same bias with rotation is found (the first test) */
    motion m = {.rpy0 = {0.2, -0.1, 0.0}, .bias = {0.08, -0.05, 0.0}, .acc_std = 0.02, .gyro_std = 0.005, .seed = 5};
    synth s;
    synth_make(&s, &m, 6000, 0.01);
    rb_att_config c;
    rb_att_config_init(&c);
    result r = run(&c, &s, 30.0);
    double tilt_err = hypot(r.rmse[0], r.rmse[1]), expect = hypot(0.08, 0.05) / G;
    cr_log_info("still IMU with a bias of %.3f m/s^2 across gravity: tilt error %.3f deg (b / g = %.3f deg), bias "
                "estimate [%.4f %.4f %.4f]",
                hypot(0.08, 0.05), tilt_err / DEG, expect / DEG, r.last.bias[0], r.last.bias[1], r.last.bias[2]);
    cr_expect(tilt_err > 0.7 * expect && tilt_err < 1.3 * expect, "tilt error %g, b / g %g", tilt_err, expect);
    cr_expect(hypot(r.last.bias[0], r.last.bias[1]) < 0.3 * hypot(0.08, 0.05), "bias [%g %g] found without rotation",
              r.last.bias[0], r.last.bias[1]);
    synth_free(&s);
}

Test(observers_attitude, refusals_name_the_cause)
{
    rb_att_config c;
    rb_att *a = NULL;
    rb_err err;
    rb_att_config_init(&c);
    c.have_q0 = true;
    cr_assert_eq(rb_att_alloc(&c, &a, &err), RB_ECONFIG);
    cr_assert_null(a);
    cr_expect_str_eq(err.msg, "initial orientation [0, 0, 0, 0] has zero norm");
    c.q0[2] = NAN;
    cr_assert_eq(rb_att_alloc(&c, &a, &err), RB_ECONFIG);
    cr_expect(strstr(err.msg, "non-finite"), "%s", err.msg);
    rb_att_config_init(&c);
    c.acc_noise = 0;
    cr_assert_eq(rb_att_alloc(&c, &a, &err), RB_ECONFIG);
    cr_expect_str_eq(err.msg, "acc_noise = 0 must be finite and > 0");
    rb_att_config_init(&c);
    c.lin_acc_decay = -1;
    cr_assert_eq(rb_att_alloc(&c, &a, &err), RB_ECONFIG);
    cr_expect_str_eq(err.msg, "lin_acc_decay = -1 must be finite and >= 0");

    rb_att_config_init(&c);
    cr_assert_eq(rb_att_alloc(&c, &a, &err), RB_OK);
    const double acc[3] = {0, 0, G}, gyro[3] = {0, 0, 0};
    cr_assert_eq(rb_att_step(a, 0, 1.0, acc, gyro, &err), RB_OK);
    cr_assert_eq(rb_att_step(a, 1, 1.0, acc, gyro, &err), RB_EINPUT);
    cr_expect(strstr(err.msg, "sample 1: t = 1 is not after the previous sample's 1 (dt <= 0)"), "%s", err.msg);
    rb_att_free(a);
}

Test(observers_attitude, steps_allocate_nothing)
{
    if (!test_alloc_count_works())
        cr_skip_test("allocation counting does not work under valgrind");
    test_alloc_count_init();
    motion m = tumbling;
    synth s;
    synth_make(&s, &m, 200, 0.01);
    s.acc[3 * 20] = NAN;
    s.gyro[3 * 30] = NAN;
    rb_att_config c;
    rb_att_config_init(&c);
    rb_att *a = NULL;
    rb_err err;
    cr_assert_eq(rb_att_alloc(&c, &a, &err), RB_OK);
    long allocs = 0;
    for (size_t k = 0; k < s.n; k++) {
        rb_att_out o;
        test_alloc_count = 0;
        test_alloc_counting = 1;
        int rc = rb_att_step(a, k, s.t[k], s.acc + 3 * k, s.gyro + 3 * k, &err);
        rb_att_get_out(a, &o);
        test_alloc_counting = 0;
        allocs += test_alloc_count;
        cr_assert_eq(rc, RB_OK, "%s", err.msg);
    }
    cr_expect_eq(allocs, 0, "%ld allocations in %zu steps", allocs, s.n);
    rb_att_free(a);
    synth_free(&s);
}
