/* In-situ FT calibration (roboest/experiments.h, rb_ftcal_*): exact recovery of C, o, m, c from noise-free
 * synthetic poses in both conventions, the ellipsoid's centre, the rank problems named, the static poses; and on a
 * simulated arm the calibrated raw counts against the ideal FT channel (the sign convention fixed once). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support.h"
#include "roboest/core.h"
#include "roboest/experiments.h"
#include "roboest/io.h"

#define NPOSE 30
#define NSET 3

typedef struct synth {
    double C[36], Kinv[36], o_raw[6], phi_b[4], added[4 * NSET];
    double r[6 * NPOSE * NSET], g[3 * NPOSE * NSET];
    size_t set[NPOSE * NSET], n;
} synth;

/* K = C^-1 built directly (C made from it by Gauss-Jordan), r = K M(phi_b + phi_j) g + o_raw. */
static void make(synth *s, const double *gdirs /* 3 x NPOSE or NULL: random */, size_t nsets, const double *added)
{
    rb_rng rng;
    rb_rng_seed(&rng, 11);
    double K[36], A[72];
    for (size_t i = 0; i < 36; i++)
        K[i] = (i / 6 == i % 6 ? (i / 6 < 3 ? 100.0 : 2000.0) : 0.0) +
               (i / 6 < 3 ? 100.0 : 2000.0) * 0.05 * (2 * rb_rng_uniform(&rng) - 1);
    memcpy(s->Kinv, K, sizeof K);
    for (size_t i = 0; i < 6; i++)
        for (size_t j = 0; j < 12; j++)
            A[12 * i + j] = j < 6 ? K[6 * i + j] : (j - 6 == i ? 1.0 : 0.0);
    for (size_t c = 0; c < 6; c++) { /* Gauss-Jordan with partial pivoting */
        size_t piv = c;
        for (size_t i = c + 1; i < 6; i++)
            if (fabs(A[12 * i + c]) > fabs(A[12 * piv + c]))
                piv = i;
        for (size_t j = 0; j < 12; j++) {
            double t = A[12 * c + j];
            A[12 * c + j] = A[12 * piv + j], A[12 * piv + j] = t;
        }
        double d = A[12 * c + c];
        for (size_t j = 0; j < 12; j++)
            A[12 * c + j] /= d;
        for (size_t i = 0; i < 6; i++)
            if (i != c) {
                double f = A[12 * i + c];
                for (size_t j = 0; j < 12; j++)
                    A[12 * i + j] -= f * A[12 * c + j];
            }
    }
    for (size_t i = 0; i < 6; i++)
        for (size_t j = 0; j < 6; j++)
            s->C[6 * i + j] = A[12 * i + 6 + j];
    const double o[6] = {1200, -800, 450, -300, 950, -1500}, phi[4] = {0.5, 0.0, 0.0, -0.02};
    memcpy(s->o_raw, o, sizeof o);
    memcpy(s->phi_b, phi, sizeof phi);
    memcpy(s->added, added, 4 * nsets * sizeof *added);
    s->n = 0;
    for (size_t j = 0; j < nsets; j++)
        for (size_t p = 0; p < NPOSE; p++) {
            double g[3];
            if (gdirs)
                memcpy(g, gdirs + 3 * p, sizeof g);
            else
                for (size_t c = 0; c < 3; c++)
                    g[c] = rb_rng_normal(&rng);
            double gn = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
            for (size_t c = 0; c < 3; c++)
                g[c] *= 9.81 / gn;
            const double *ad = added + 4 * j;
            double m = phi[0] + ad[0], h[3] = {phi[1] + ad[1], phi[2] + ad[2], phi[3] + ad[3]};
            double w[6] = {m * g[0],
                           m * g[1],
                           m * g[2],
                           h[1] * g[2] - h[2] * g[1],
                           h[2] * g[0] - h[0] * g[2],
                           h[0] * g[1] - h[1] * g[0]};
            for (size_t l = 0; l < 6; l++) {
                double u = o[l];
                for (size_t k = 0; k < 6; k++)
                    u += K[6 * l + k] * w[k];
                s->r[6 * s->n + l] = u;
            }
            memcpy(s->g + 3 * s->n, g, sizeof g);
            s->set[s->n++] = j;
        }
}

static const double ADDED[4 * NSET] = {0.5,  0.5 * 0.04, 0.0, 0.5 * 0.08, 1.0,    0.0,
                                       0.05, 0.06,       1.5, -0.045,     -0.045, 0.15};

Test(ft_calibration, recovers_c_o_mass_com_exactly_in_both_conventions)
{
    static synth s;
    make(&s, NULL, NSET, ADDED);
    rb_ftcal_data d = {s.n, s.r, s.g, s.set, NSET, ADDED};
    for (int conv = RB_FTCAL_PLUS; conv <= RB_FTCAL_MINUS; conv++) {
        rb_ftcal_fit f;
        rb_err err;
        cr_assert_eq(rb_ftcal_solve(&d, (rb_ftcal_convention)conv, RB_FTCAL_OFFSET_LS, &f, &err), RB_OK, "%s", err.msg);
        for (size_t i = 0; i < 36; i++)
            cr_expect_float_eq(f.C[i], s.C[i], 1e-9 * fabs(s.C[i / 7 * 7]) + 1e-12, "C[%zu]", i);
        double sign = conv == RB_FTCAL_PLUS ? -1.0 : 1.0;
        for (size_t l = 0; l < 6; l++)
            cr_expect_float_eq(f.o[l], sign * s.o_raw[l], 1e-6, "o[%zu] = %g (convention %d)", l, f.o[l], conv);
        cr_expect_float_eq(f.mass, 0.5, 1e-9);
        cr_expect_float_eq(f.com[2], -0.04, 1e-9);
        cr_expect(f.cond_force > 1 && f.cond_force < 1e3, "cond %g", f.cond_force);
        cr_expect(f.rms_force < 1e-9 && f.rms_moment < 1e-9);
        /* the calibrated wrench of a row is its load */
        double w[6];
        rb_ftcal_apply(&f, s.r + 6 * 5, w);
        cr_expect_float_eq(w[0], (0.5 + 0.5) * s.g[3 * 5], 1e-7);
        /* the ellipsoid offset gives the same C (noise-free: its centre is the offset) */
        rb_ftcal_fit fe;
        cr_assert_eq(rb_ftcal_solve(&d, (rb_ftcal_convention)conv, RB_FTCAL_OFFSET_ELLIPSOID, &fe, &err), RB_OK, "%s",
                     err.msg);
        for (size_t l = 0; l < 6; l++)
            cr_expect_float_eq(fe.o[l], f.o[l], 1e-5, "ellipsoid o[%zu]", l);
    }
}

Test(ft_calibration, ellipsoid_of_one_set)
{
    static synth s;
    make(&s, NULL, NSET, ADDED);
    rb_ftcal_ellipsoid e;
    rb_err err;
    cr_assert_eq(rb_ftcal_ellipsoid_fit(s.r + 6 * NPOSE, NPOSE, &e, &err), RB_OK, "%s", err.msg);
    for (size_t l = 0; l < 6; l++)
        cr_expect_float_eq(e.centre[l], s.o_raw[l], 1e-6, "centre[%zu] = %g", l, e.centre[l]);
    cr_expect(e.residual < 1e-9, "residual %g", e.residual);
    cr_expect(e.eig[2] > 1e3 && e.eig[3] < 1e-12 * e.eig[0], "eigenvalues %g %g %g %g", e.eig[0], e.eig[2], e.eig[3],
              e.eig[5]);
    cr_expect_eq(rb_ftcal_ellipsoid_fit(s.r, 8, &e, &err), RB_EINPUT);
}

static void expect_rank_error(const synth *s, size_t nsets, const double *added, const char *what)
{
    rb_ftcal_data d = {s->n, s->r, s->g, s->set, nsets, added};
    const char *names[] = {"a", "b", "c"};
    rb_err err;
    cr_expect_eq(rb_ftcal_check_rank(&d, names, &err), RB_EINPUT, "%s accepted", what);
    cr_expect(strstr(err.msg, what) != NULL, "expected '%s' in: %s", what, err.msg);
    rb_ftcal_fit f;
    cr_expect_eq(rb_ftcal_solve(&d, RB_FTCAL_PLUS, RB_FTCAL_OFFSET_LS, &f, &err), RB_EINPUT);
}

Test(ft_calibration, rank_problems_are_named)
{
    static synth s;
    /* one data set: the scale */
    make(&s, NULL, 1, ADDED);
    expect_rank_error(&s, 1, ADDED, "fewer than two different masses");
    /* three sets of the same mass at different points: the force rows' scale */
    double same[12] = {1, 0.04, 0, 0.08, 1, 0, 0.05, 0.06, 1, -0.03, -0.03, 0.1};
    make(&s, NULL, 3, same);
    expect_rank_error(&s, 3, same, "fewer than two different masses");
    /* two sets: loads on one line */
    make(&s, NULL, 2, ADDED);
    expect_rank_error(&s, 2, ADDED, "lie on one line");
    /* three masses at one point: on one line too */
    double line[12] = {0.5, 0.02, 0, 0.04, 1.0, 0.04, 0, 0.08, 1.5, 0.06, 0, 0.12};
    make(&s, NULL, 3, line);
    expect_rank_error(&s, 3, line, "lie on one line");
    /* gravity in the x-z plane only: two dimensions */
    double plane[3 * NPOSE], cone[3 * NPOSE];
    for (size_t p = 0; p < NPOSE; p++) {
        double a = 0.37 * (double)p;
        plane[3 * p] = cos(a), plane[3 * p + 1] = 0, plane[3 * p + 2] = sin(a);
        cone[3 * p] = 0.5 * cos(a), cone[3 * p + 1] = 0.5 * sin(a), cone[3 * p + 2] = -0.8;
    }
    make(&s, plane, NSET, ADDED);
    expect_rank_error(&s, NSET, ADDED, "span 2 dimensions");
    /* on a cone about z (the sensor turned about one axis): one circle */
    make(&s, cone, NSET, ADDED);
    expect_rank_error(&s, NSET, ADDED, "lie on one circle");
}

Test(ft_calibration, static_poses_from_gyro_and_accelerometer)
{
    /* 100 Hz: still 0-2 s, moving 2-3 s, still 3-5 s, a gyro blip at 4 s; accelerometer noise-free */
    enum { N = 500 };
    static double t[N], w[3 * N], a[3 * N];
    for (size_t k = 0; k < N; k++) {
        t[k] = 0.01 * (double)k;
        bool moving = t[k] >= 2.0 && t[k] < 3.0;
        w[3 * k] = moving ? 0.5 : 0.001;
        w[3 * k + 1] = fabs(t[k] - 4.0) < 0.005 ? 0.2 : 0.0;
        w[3 * k + 2] = 0;
        a[3 * k] = moving ? sin(20 * t[k]) : 0.0;
        a[3 * k + 1] = 0;
        a[3 * k + 2] = 9.81;
    }
    rb_ftcal_static_opts o = {0.3, 0.03, 0.1, 0.3};
    double *iv = NULL;
    size_t n = 0;
    rb_err err;
    cr_assert_eq(rb_ftcal_static_intervals(t, w, N, t, a, N, &o, &iv, &n, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(n, 3, "%zu intervals", n);
    cr_expect_float_eq(iv[0], 0.0, 1e-9);
    cr_expect(iv[1] > 1.95 && iv[1] < 2.0, "first ends at %g", iv[1]);
    cr_expect(iv[2] >= 3.0 && iv[2] < 3.05, "second starts at %g", iv[2]);
    cr_expect(iv[3] > 3.95 && iv[3] < 4.0, "second ends at %g (the blip)", iv[3]);
    cr_expect(iv[4] > 4.0 && iv[5] > 4.98, "third [%g, %g]", iv[4], iv[5]);
    rb_free(iv);
    /* the accelerometer's spread alone breaks a pose too */
    for (size_t k = 100; k < 110; k++)
        a[3 * k + 1] = k % 2 ? 0.5 : -0.5;
    cr_assert_eq(rb_ftcal_static_intervals(t, w, N, t, a, N, &o, &iv, &n, &err), RB_OK);
    cr_expect_eq(n, 4, "%zu intervals", n);
    rb_free(iv);
    /* channels that do not overlap */
    double late[N];
    for (size_t k = 0; k < N; k++)
        late[k] = t[k] + 100;
    cr_expect_eq(rb_ftcal_static_intervals(late, w, N, t, a, N, &o, &iv, &n, &err), RB_EINPUT);
    cr_expect(strstr(err.msg, "overlap") != NULL, "%s", err.msg);
}

/* On the simulated arm: a calibration from the shipped data sets maps the raw counts of another log (the same
 * sensor, a noise-free ideal FT beside it) onto that FT channel, in both conventions: the calibrated wrench is the
 * reading in the model's FT convention. */
Test(ft_calibration, calibrated_counts_match_the_model_ft_convention)
{
    test_deadline(120);
    char cfgp[512];
    snprintf(cfgp, sizeof cfgp, "%s/configs/ftcal/calibration.json", RB_SOURCE);
    for (int conv = 0; conv < 2; conv++) {
        rb_ftcal_config *cfg = NULL;
        rb_ftcal_result *res = NULL;
        rb_err err;
        cr_assert_eq(rb_ftcal_load(cfgp, &cfg, &err), RB_OK, "%s", err.msg);
        cfg->convention = (rb_ftcal_convention)conv;
        cr_assert_eq(rb_ftcal_run(cfg, NULL, &res, &err), RB_OK, "%s", err.msg);
        const char *text = "{\"model\": {\"urdf\": \"" RB_SOURCE "/datasets/arm_2ft.urdf\"}, \"duration\": 0.3,"
                           " \"q0\": {\"shoulder_pitch\": -0.7, \"elbow\": 1.9, \"wrist_roll\": 2.1},"
                           " \"payload\": {\"link\": \"hand\", \"kind\": \"steps\", \"added\": {\"mass\": 0.8,"
                           " \"com\": [0.02, -0.03, 0.07]}},"
                           " \"sensors\": [{\"kind\": \"ft\", \"ft\": \"wrist_ft_sensor\", \"noise\": 0},"
                           " {\"kind\": \"ft_raw\", \"ft\": \"wrist_ft_sensor\", \"noise\": 0, \"resolution\": 0,"
                           " \"counts_per_unit\": [100, 100, 100, 2000, 2000, 2000], \"cross_talk\": 0.05,"
                           " \"cross_talk_seed\": 2, \"offset\": [1200, -800, 450, -300, 950, -1500]}]}";
        rb_scenario *s = NULL;
        rb_log *log = NULL;
        cr_assert_eq(rb_scenario_load_text(text, strlen(text), "check.json", NULL, &s, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_scenario_run(s, NULL, NULL, &log, &err), RB_OK, "%s", err.msg);
        const rb_channel *ft = rb_log_find(log, "FTs/wrist_ft_sensor"),
                         *raw = rb_log_find(log, "FTs_raw/wrist_ft_sensor");
        cr_assert(ft && raw);
        double fmax = 0, emax = 0, mmax = 0;
        for (size_t t = 0; t < raw->n_samples; t += 50) {
            double w[6];
            rb_ftcal_apply(&res->fit, raw->data + 6 * t, w);
            for (size_t i = 0; i < 6; i++) {
                double e = fabs(w[i] - ft->data[6 * t + i]);
                if (i < 3) {
                    fmax = fmax > fabs(ft->data[6 * t + i]) ? fmax : fabs(ft->data[6 * t + i]);
                    emax = e > emax ? e : emax;
                } else {
                    mmax = e > mmax ? e : mmax;
                }
            }
        }
        cr_expect(fmax > 5.0, "loaded: %g N", fmax);
        cr_expect(emax < 0.01 * fmax, "convention %d: force error %g N of %g N", conv, emax, fmax);
        cr_expect(mmax < 0.01, "convention %d: moment error %g N m", conv, mmax);
        cr_expect(res->has_truth && res->err_C_rel < 0.01, "C error %g", res->err_C_rel);
        rb_log_free(log);
        rb_scenario_free(s);
        rb_ftcal_result_free(res);
        rb_ftcal_config_free(cfg);
    }
}
