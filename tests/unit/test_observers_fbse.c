/* FBSE joint friction (roboest/observers.h, rb_fbse_*; seed 003 ch. 4) on the simulated walk datasets/walk_friction.mat
 * (the thesis's gait, Table 4.1 friction on both legs, noisy ankle FTs and waist IMU; configs/fbse/README.md):
 *   - nonslip, both base angular accelerations: the identified Coulomb friction of every leg joint within 15 % of the
 *     batch least-squares fit (rb_lstsq) of F_c sgn(v) + F_v v to the TRUE friction over the samples the RLS used,
 *     and the identified model's friction over those samples within 15 % (RMS) of that fit's;
 *   - the swinging legs' friction against the truth, beside what the truth's own fit achieves there;
 *   - filtered: (sigma / K) <u_F>_Z against the true friction through the same filter (the equations, their sign);
 *   - eq. 4.39 as printed (unfiltered regressors) identifies K / sigma times the friction;
 *   - contact from the normal force against the gait's phase; a straight knee (singular); bad input; no allocation. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "roboest/io.h"
#include "roboest/observers.h"

#define WALKER RB_SOURCE "/datasets/walker_biped.urdf"
#define WALK RB_SOURCE "/datasets/walk_friction.mat"
#define NJ 12

static const double KT = 0.111, RG[NJ] = {100, -160, 100, -100, 100, -160, -100, 160, -100, 100, -100, 160};
static const double ARM6[6] = {0.083, 0.14336, 0.083, 0.083, 0.083, 0.14336};
static const char *const JN[NJ] = {"l_hip_pitch", "l_hip_roll", "l_hip_yaw", "l_knee", "l_ankle_pitch", "l_ankle_roll",
                                   "r_hip_pitch", "r_hip_roll", "r_hip_yaw", "r_knee", "r_ankle_pitch", "r_ankle_roll"};

typedef struct walk {
    size_t T;
    double *t, *q, *dq, *tau, *ft, *acc, *gyro, *R, *phase, *truth; /* sample-major */
} walk;

static rb_model *g_m;
static walk g_w;

static const double *chan(const rb_log *log, const char *name, size_t n)
{
    const rb_channel *c = rb_log_find(log, name);
    cr_assert(c, "%s: no channel %s", WALK, name);
    cr_assert_eq(c->n_elements, n, "%s: %zu elements", name, c->n_elements);
    cr_assert_eq(c->n_samples, g_w.T);
    return c->data;
}

static void load(void)
{
    if (g_m)
        return;
    rb_err err;
    rb_model_opts o = {.floating = true};
    cr_assert_eq(rb_model_load_urdf(WALKER, &o, &g_m, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(g_m->n_dofs, NJ);
    for (size_t j = 0; j < NJ; j++)
        cr_assert_str_eq(g_m->dof_names[j], JN[j]);
    rb_log *log = NULL;
    cr_assert_eq(rb_log_read(WALK, &log, &err), RB_OK, "%s", err.msg);
    const rb_channel *qc = rb_log_find(log, "joints_state/positions");
    cr_assert(qc);
    size_t T = g_w.T = qc->n_samples;
    g_w.t = malloc(T * sizeof(double)), memcpy(g_w.t, qc->time, T * sizeof(double));
    const double *q = chan(log, "joints_state/positions", NJ), *dq = chan(log, "joints_state/velocities", NJ),
                 *cur = chan(log, "motors_state/currents", NJ), *fl = chan(log, "FTs/l_ankle_ft_sensor", 6),
                 *fr = chan(log, "FTs/r_ankle_ft_sensor", 6), *acc = chan(log, "accelerometers/waist_imu", 3),
                 *gy = chan(log, "gyros/waist_imu", 3), *rpy = chan(log, "orientations/waist_imu", 3),
                 *ph = chan(log, "truth/gait/phase", 1), *tr = chan(log, "truth/joints/friction_torques", NJ);
    g_w.q = malloc(T * NJ * 8), g_w.dq = malloc(T * NJ * 8), g_w.tau = malloc(T * NJ * 8);
    g_w.truth = malloc(T * NJ * 8), g_w.ft = malloc(T * 12 * 8), g_w.acc = malloc(T * 3 * 8);
    g_w.gyro = malloc(T * 3 * 8), g_w.R = malloc(T * 9 * 8), g_w.phase = malloc(T * 8);
    memcpy(g_w.q, q, T * NJ * 8), memcpy(g_w.dq, dq, T * NJ * 8), memcpy(g_w.truth, tr, T * NJ * 8);
    memcpy(g_w.acc, acc, T * 3 * 8), memcpy(g_w.gyro, gy, T * 3 * 8), memcpy(g_w.phase, ph, T * 8);
    for (size_t k = 0; k < T; k++) {
        for (size_t j = 0; j < NJ; j++)
            g_w.tau[k * NJ + j] = KT * RG[j] * cur[k * NJ + j];
        memcpy(g_w.ft + 12 * k, fl + 6 * k, 6 * 8), memcpy(g_w.ft + 12 * k + 6, fr + 6 * k, 6 * 8);
        rb_m3_from_rpy(rpy[3 * k], rpy[3 * k + 1], rpy[3 * k + 2], g_w.R + 9 * k);
    }
    rb_log_free(log);
}

static void base_cfg(rb_fbse_config *c, double *arm)
{
    rb_fbse_config_init(c);
    c->feet[0] = "l_sole", c->feet[1] = "r_sole", c->imu_frame = "waist_imu";
    c->ft[0] = "l_ankle_ft_sensor", c->ft[1] = "r_ankle_ft_sensor";
    for (int i = 0; i < NJ; i++)
        arm[i] = ARM6[i % 6];
    c->armature = arm;
}

typedef struct result {
    double fc[NJ], fv[NJ];
    double *meas, *fric, *model; /* T x NJ */
    unsigned char *contact;      /* T x 2 */
    rb_fbse_diag d;
} result;

static void free_result(result *r) { free(r->meas), free(r->fric), free(r->model), free(r->contact); }

static result run(const rb_fbse_config *c, bool phase)
{
    load();
    rb_fbse *e = NULL;
    rb_err err;
    cr_assert_eq(rb_fbse_alloc(g_m, c, &e, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_fbse_n_joints(e), NJ);
    size_t T = g_w.T;
    result r = {
        .meas = malloc(T * NJ * 8), .fric = malloc(T * NJ * 8), .model = malloc(T * NJ * 8), .contact = malloc(T * 2)};
    for (size_t k = 0; k < T; k++) {
        rb_fbse_sample s = {g_w.q + NJ * k,  g_w.dq + NJ * k,  g_w.tau + NJ * k, g_w.ft + 12 * k,
                            g_w.acc + 3 * k, g_w.gyro + 3 * k, g_w.R + 9 * k,    phase ? (int)g_w.phase[k] : -1};
        cr_assert_eq(rb_fbse_step(e, k, g_w.t[k], &s, &err), RB_OK, "%s", err.msg);
        rb_fbse_out o;
        rb_fbse_get_out(e, &o);
        for (size_t j = 0; j < NJ; j++) {
            cr_assert_eq(rb_fbse_joint_dof(e, j), j);
            r.meas[k * NJ + j] = o.measured[j], r.fric[k * NJ + j] = o.friction[j], r.model[k * NJ + j] = o.model[j];
        }
        r.contact[2 * k] = o.contact[0], r.contact[2 * k + 1] = o.contact[1];
        if (k + 1 == T)
            memcpy(r.fc, o.coulomb, sizeof r.fc), memcpy(r.fv, o.viscous, sizeof r.fv);
    }
    rb_fbse_get_diag(e, &r.d);
    rb_fbse_free(e);
    return r;
}

static double sgn(double v) { return v > 0 ? 1 : v < 0 ? -1 : 0; }

/* The batch LS of the truth over the samples the estimator measured joint j (rb_lstsq, QR). */
static void reference(const result *r, size_t j, double th[2])
{
    size_t T = g_w.T, N = 0;
    double *Phi = malloc(2 * T * 8), *y = malloc(T * 8);
    for (size_t k = 0; k < T; k++)
        if (isfinite(r->meas[k * NJ + j])) {
            double v = g_w.dq[k * NJ + j];
            Phi[2 * N] = sgn(v), Phi[2 * N + 1] = v, y[N++] = g_w.truth[k * NJ + j];
        }
    rb_err err;
    cr_assert_eq(rb_lstsq(Phi, y, N, 2, 1, th, NULL, &err), RB_OK, "%s", err.msg);
    free(Phi), free(y);
}

/* Coulomb within 15 % of the reference; the model's friction over the measured samples within 15 % (RMS) of the
 * reference's. Logs every number (the viscous coefficients too). */
static void check_parameters(const char *what, const result *r)
{
    for (size_t j = 0; j < NJ; j++) {
        double th[2], se = 0, sr = 0;
        long n = 0;
        reference(r, j, th);
        for (size_t k = 0; k < g_w.T; k++)
            if (isfinite(r->meas[k * NJ + j])) {
                double v = g_w.dq[k * NJ + j], ref = th[0] * sgn(v) + th[1] * v, est = r->fc[j] * sgn(v) + r->fv[j] * v;
                se += (est - ref) * (est - ref), sr += ref * ref, n++;
            }
        double ec = (r->fc[j] - th[0]) / fabs(th[0]), ev = (r->fv[j] - th[1]) / fabs(th[1]), em = sqrt(se / sr);
        cr_log_info(
            "%s %-14s F_c %.4f (ref %.4f, %+.1f %%)  F_v %.4f (ref %.4f, %+.1f %%)  model %.1f %%  (%ld samples)", what,
            JN[j], r->fc[j], th[0], 100 * ec, r->fv[j], th[1], 100 * ev, 100 * em, n);
        cr_expect_leq(fabs(ec), 0.15, "%s %s: F_c %.4f vs the truth's fit %.4f", what, JN[j], r->fc[j], th[0]);
        cr_expect_leq(em, 0.15, "%s %s: the model's friction is %.1f %% (RMS) off the truth's fit", what, JN[j],
                      100 * em);
    }
}

Test(observers_fbse, nonslip_min_norm_parameters_against_batch_ls_of_the_truth)
{
    rb_fbse_config c;
    double arm[NJ];
    base_cfg(&c, arm);
    result r = run(&c, true);
    cr_expect_eq(r.d.singular[0] + r.d.singular[1], 0);
    cr_expect_gt(r.d.updates[0], 4000);
    cr_expect_gt(r.d.updates[1], 4000);
    check_parameters("min_norm", &r);
    free_result(&r);
}

Test(observers_fbse, nonslip_gyro_diff_parameters_against_batch_ls_of_the_truth)
{
    rb_fbse_config c;
    double arm[NJ];
    base_cfg(&c, arm);
    c.alpha = RB_FBSE_ALPHA_GYRO_DIFF;
    result r = run(&c, true);
    check_parameters("gyro_diff", &r);
    free_result(&r);
}

/* While a leg swings its friction is the model's: against the truth, beside the truth's own contact fit there (the
 * best a Coulomb-viscous model identified in contact can do). The 0.15 N m holds on the hip roll; on the hip
 * pitch, hip yaw and knee the truth's own fit misses it (the swing reaches 1.3-2.2 rad/s against at most 0.34 in
 * contact, and the Stribeck dip of Table 4.1's model bends the fit: configs/fbse/README.md). */
Test(observers_fbse, swinging_legs_model_against_the_truth)
{
    rb_fbse_config c;
    double arm[NJ];
    base_cfg(&c, arm);
    result r = run(&c, true);
    for (size_t j = 0; j < NJ; j++) {
        int leg = j < 6 ? 0 : 1;
        double th[2], se = 0, sf = 0;
        long n = 0;
        reference(&r, j, th);
        for (size_t k = 0; k < g_w.T; k++) {
            if (r.contact[2 * k + leg])
                continue;
            double v = g_w.dq[k * NJ + j], y = g_w.truth[k * NJ + j], f = th[0] * sgn(v) + th[1] * v;
            cr_assert_eq(r.fric[k * NJ + j], r.model[k * NJ + j], "swinging: the friction output is the model's");
            se += (r.fric[k * NJ + j] - y) * (r.fric[k * NJ + j] - y), sf += (f - y) * (f - y), n++;
        }
        double rmse = sqrt(se / n), best = sqrt(sf / n);
        cr_log_info("swing %-14s RMSE %.4f N m (the truth's fit: %.4f) over %ld samples", JN[j], rmse, best, n);
        if (j % 6 > 3)
            continue; /* the bound is for the hip and knee joints */
        /* the 0.15 N m where a Coulomb-viscous model fitted to the truth in contact meets it; where it does not,
         * no estimate of that model can, and the test says so instead of hiding it */
        if (best <= 0.15)
            cr_expect_leq(rmse, 0.15, "%s: swing RMSE %.4f N m above the issue's 0.15", JN[j], rmse);
        else
            cr_expect_gt(rmse, 0.15, "%s: the truth's fit misses 0.15 N m (%.4f) but the estimate does not?", JN[j],
                         best);
    }
    free_result(&r);
}

/* The filtered equations (4.24-4.36, with the derived sign): (sigma / K) <u_F>_Z is the true friction through the
 * unit-gain filter sigma / (s + sigma) (computed here from the truth, first-order hold), to the sensors' noise. */
Test(observers_fbse, filtered_friction_is_the_filtered_truth)
{
    rb_fbse_config c;
    double arm[NJ];
    base_cfg(&c, arm);
    c.method = RB_FBSE_FILTERED;
    result r = run(&c, true);
    static const double S6[6] = {1, 1, 1, 2, 4, 2};
    for (size_t j = 0; j < NJ; j++) {
        double s = S6[j % 6], y = 0, se = 0, mean_abs = 0;
        long n = 0;
        for (size_t k = 0; k < g_w.T; k++) {
            double u = g_w.truth[k * NJ + j];
            if (k) { /* first-order hold, unit gain */
                double T = g_w.t[k] - g_w.t[k - 1], om = -expm1(-s * T), I1 = 1 - om / (s * T);
                y = (1 - om) * y + (om - I1) * g_w.truth[(k - 1) * NJ + j] + I1 * u;
            }
            double m = r.meas[k * NJ + j];
            if (isfinite(m))
                se += (m - y) * (m - y), mean_abs += fabs(y), n++;
        }
        double rms = sqrt(se / n);
        cr_log_info("filtered %-14s RMS against the filtered truth %.4f N m (its mean |.| %.4f)", JN[j], rms,
                    mean_abs / n);
        cr_expect_leq(rms, 0.05, "%s: (sigma / K) <u_F>_Z is %.4f N m RMS off the filtered truth", JN[j], rms);
    }
    free_result(&r);
}

/* Eq. 4.39 as printed regresses <u_F>_Z on unfiltered regressors: it identifies about K / sigma times the friction.
 * Table 4.2's gains with poles at 50 rad/s (fast against the gait, so the filter is its DC gain): hip roll and yaw
 * (K / sigma = 2) come out doubled against the filtered regressors' values, the others (K / sigma = 1) not. */
Test(observers_fbse, literal_eq_4_39_doubles_the_friction_where_k_over_sigma_is_2)
{
    rb_fbse_config c;
    double arm[NJ], K[NJ], S[NJ];
    static const double K6[6] = {50, 100, 100, 50, 50, 50};
    for (int i = 0; i < NJ; i++)
        K[i] = K6[i % 6], S[i] = 50;
    base_cfg(&c, arm);
    c.method = RB_FBSE_FILTERED, c.K = K, c.sigma = S;
    result f = run(&c, true);
    c.regressors = RB_FBSE_REG_LITERAL;
    result l = run(&c, true);
    for (size_t j = 0; j < NJ; j++) {
        double ratio = l.fc[j] / f.fc[j], kos = K[j] / S[j];
        cr_log_info("literal %-14s K/sigma %g: F_c %.4f against %.4f (x %.2f)", JN[j], kos, l.fc[j], f.fc[j], ratio);
        if (j % 6 == 5)
            continue; /* ankle roll: F_c 0.03 N m, within the noise */
        if (kos == 2)
            cr_expect(ratio > 1.6 && ratio < 2.4, "%s: literal F_c x %.2f, expected about 2", JN[j], ratio);
        else
            cr_expect(ratio > 0.6 && ratio < 1.25, "%s: literal F_c x %.2f, expected about 1", JN[j], ratio);
    }
    free_result(&f), free_result(&l);
}

Test(observers_fbse, contact_from_the_normal_force_follows_the_phase)
{
    rb_fbse_config c;
    double arm[NJ];
    base_cfg(&c, arm);
    result r = run(&c, false);
    long agree = 0;
    for (size_t k = 0; k < g_w.T; k++) {
        int ph = (int)g_w.phase[k];
        agree += r.contact[2 * k] == (ph == 0 || ph == 1) && r.contact[2 * k + 1] == (ph == 0 || ph == 2);
    }
    double frac = (double)agree / (double)g_w.T;
    cr_log_info("contact from the normal force: %.2f %% of the samples as the phase says", 100 * frac);
    cr_expect_geq(frac, 0.97);
    free_result(&r);
}

/* A straight knee makes the stance leg's J_m3 singular: NaN, no update, counted; the RLS keeps its parameters. */
Test(observers_fbse, straight_knee_is_singular_nan_and_no_update)
{
    load();
    rb_fbse_config c;
    double arm[NJ];
    base_cfg(&c, arm);
    rb_fbse *e = NULL;
    rb_err err;
    cr_assert_eq(rb_fbse_alloc(g_m, &c, &e, &err), RB_OK, "%s", err.msg);
    size_t k0 = 700; /* left single support */
    cr_assert_eq(g_w.phase[k0], 1);
    double q[NJ];
    for (size_t k = 0; k < 50; k++) {
        size_t i = k0 + k;
        memcpy(q, g_w.q + NJ * i, sizeof q);
        q[3] = 0, q[0] = 0, q[4] = 0; /* left knee straight, hip and ankle pitch at zero */
        rb_fbse_sample s = {
            q, g_w.dq + NJ * i, g_w.tau + NJ * i, g_w.ft + 12 * i, g_w.acc + 3 * i, g_w.gyro + 3 * i, g_w.R + 9 * i, 1};
        cr_assert_eq(rb_fbse_step(e, i, g_w.t[i], &s, &err), RB_OK, "%s", err.msg);
        rb_fbse_out o;
        rb_fbse_get_out(e, &o);
        cr_assert(o.singular[0] && o.contact[0]);
        for (size_t j = 0; j < 6; j++) {
            cr_assert(isnan(o.measured[j]) && isnan(o.theta_ddot[j]));
            cr_assert_eq(o.coulomb[j], 0);
            cr_assert_eq(o.viscous[j], 0); /* Phi0: never updated */
            cr_assert_eq(o.friction[j], o.model[j]);
        }
    }
    rb_fbse_diag d;
    rb_fbse_get_diag(e, &d);
    cr_expect_eq(d.singular[0], 50);
    cr_expect_eq(d.updates[0], 0);
    cr_expect_eq(d.singular[1], 0);
    /* gyro_diff: the square solve, singular too */
    rb_fbse_free(e);
    c.alpha = RB_FBSE_ALPHA_GYRO_DIFF;
    cr_assert_eq(rb_fbse_alloc(g_m, &c, &e, &err), RB_OK, "%s", err.msg);
    rb_fbse_sample s = {
        q, g_w.dq + NJ * k0, g_w.tau + NJ * k0, g_w.ft + 12 * k0, g_w.acc + 3 * k0, g_w.gyro + 3 * k0, g_w.R + 9 * k0,
        1};
    cr_assert_eq(rb_fbse_step(e, k0, g_w.t[k0], &s, &err), RB_OK, "%s", err.msg);
    rb_fbse_get_diag(e, &d);
    cr_expect_eq(d.singular[0], 1);
    cr_expect_eq(d.updates[0], 0);
    rb_fbse_free(e);
}

Test(observers_fbse, bad_input)
{
    load();
    rb_fbse_config c;
    double arm[NJ];
    base_cfg(&c, arm);
    rb_fbse *e = NULL;
    rb_err err;
    cr_assert_eq(rb_fbse_alloc(g_m, &c, &e, &err), RB_OK, "%s", err.msg);
    rb_fbse_sample s = {g_w.q, g_w.dq, g_w.tau, g_w.ft, g_w.acc, g_w.gyro, g_w.R, 3};
    cr_expect_eq(rb_fbse_step(e, 0, 0.0, &s, &err), RB_EINPUT);
    cr_expect(strstr(err.msg, "phase 3"), "%s", err.msg);
    s.phase = -2;
    cr_expect_eq(rb_fbse_step(e, 0, 0.0, &s, &err), RB_EINPUT);
    s.phase = 0, s.R_WI = NULL; /* nonslip needs the attitude */
    cr_expect_eq(rb_fbse_step(e, 0, 0.0, &s, &err), RB_EINPUT);
    cr_expect(strstr(err.msg, "attitude"), "%s", err.msg);
    s.R_WI = g_w.R;
    cr_assert_eq(rb_fbse_step(e, 0, 0.0, &s, &err), RB_OK, "%s", err.msg);
    cr_expect_eq(rb_fbse_step(e, 1, 0.0, &s, &err), RB_EINPUT, "a clock that does not advance");
    /* a non-finite input: no update, the model, counted */
    double ft[12];
    memcpy(ft, g_w.ft + 12, sizeof ft);
    ft[2] = NAN;
    rb_fbse_sample s1 = {g_w.q + NJ, g_w.dq + NJ, g_w.tau + NJ, ft, g_w.acc + 3, g_w.gyro + 3, g_w.R + 9, 0};
    cr_assert_eq(rb_fbse_step(e, 1, g_w.t[1], &s1, &err), RB_OK, "%s", err.msg);
    rb_fbse_out o;
    rb_fbse_get_out(e, &o);
    rb_fbse_diag d;
    rb_fbse_get_diag(e, &d);
    cr_expect_eq(d.nonfinite, 1);
    cr_expect(isnan(o.measured[0]) && o.friction[0] == o.model[0]);
    rb_fbse_free(e);
    /* configuration */
    rb_fbse_config b = c;
    b.feet[0] = "l_sol";
    cr_expect_eq(rb_fbse_alloc(g_m, &b, &e, &err), RB_ECONFIG);
    b = c, b.imu_frame = "l_foot_imu";
    cr_expect_eq(rb_fbse_alloc(g_m, &b, &e, &err), RB_ECONFIG);
    cr_expect(strstr(err.msg, "not on the base body"), "%s", err.msg);
    b = c, b.ft[0] = "l_leg_ft_sensor"; /* above the hip: not between the leg's joints and the foot */
    cr_expect_eq(rb_fbse_alloc(g_m, &b, &e, &err), RB_ECONFIG);
    cr_expect(strstr(err.msg, "moves foot"), "%s", err.msg);
    double K[NJ];
    for (int i = 0; i < NJ; i++)
        K[i] = i == 3 ? 0 : 1;
    b = c, b.K = K, b.sigma = K;
    cr_expect_eq(rb_fbse_alloc(g_m, &b, &e, &err), RB_ECONFIG);
    cr_expect(strstr(err.msg, "l_knee"), "%s", err.msg);
    b = c, b.contact_on = 10, b.contact_off = 20;
    cr_expect_eq(rb_fbse_alloc(g_m, &b, &e, &err), RB_ECONFIG);
    b = c, b.feet[1] = "l_sole";
    cr_expect_eq(rb_fbse_alloc(g_m, &b, &e, &err), RB_ECONFIG);
    cr_expect(strstr(err.msg, "share joint"), "%s", err.msg);
    cr_expect_null(e);
}

Test(observers_fbse, no_allocation_per_step)
{
    load();
    for (int method = 0; method < 2; method++) {
        rb_fbse_config c;
        double arm[NJ];
        base_cfg(&c, arm);
        c.method = method ? RB_FBSE_FILTERED : RB_FBSE_NONSLIP;
        rb_fbse *e = NULL;
        rb_err err;
        cr_assert_eq(rb_fbse_alloc(g_m, &c, &e, &err), RB_OK, "%s", err.msg);
        test_alloc_count_init();
        test_alloc_count = 0, test_alloc_counting = 1;
        for (size_t k = 0; k < 1200; k += 1) {
            rb_fbse_sample s = {g_w.q + NJ * k,  g_w.dq + NJ * k,  g_w.tau + NJ * k, g_w.ft + 12 * k,
                                g_w.acc + 3 * k, g_w.gyro + 3 * k, g_w.R + 9 * k,    (int)g_w.phase[k]};
            cr_assert_eq(rb_fbse_step(e, k, g_w.t[k], &s, &err), RB_OK, "%s", err.msg);
        }
        test_alloc_counting = 0;
        if (test_alloc_count_works())
            cr_expect_eq(test_alloc_count, 0, "method %d allocated", method);
        rb_fbse_free(e);
    }
}
