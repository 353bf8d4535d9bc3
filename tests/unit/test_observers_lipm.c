/* LIPM CoM estimation (roboest/observers.h, rb_lipm_*; seed 003 ch. 3) on synthetic walking data (lipm_synth.h: the
 * exact LIPM CoM of a ZMP moving between two feet, with sensor noise): the thesis's cases 3.4.4 (clean), 3.4.2 (an
 * acceleration error) and 3.4.3 (a ZMP offset) with the acceptance numbers; the helpers (foot CoP, ZMP (3.1),
 * IMU-to-CoM acceleration (3.4), foot anchoring); the missing-data rules; no allocation per step. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "alloc_count.h"
#include "lipm_synth.h"
#include "roboest/observers.h"

#define ZC 0.8
#define G 9.81
#define DT 0.001
#define DUR 12.0

typedef struct lcase {
    rb_lipm_form form;
    double acc_err, acc_err_t; /* added to the measured x acceleration from acc_err_t */
    double zmp_off;            /* added to the measured x ZMP from the start */
    rb_lipm_perr perr;
} lcase;

typedef struct lrun {
    size_t n;
    double *pos, *vel, *corr, *off, *aerr; /* 2 n each */
} lrun;

static lipm_synth g_s;
static double *g_pn, *g_an; /* the noise: 2 n each */

static void make_data(void)
{
    if (g_s.n)
        return;
    cr_assert_eq(ls_make(&g_s, DUR, DT, ZC, G), 0);
    g_pn = calloc(2 * g_s.n, sizeof *g_pn), g_an = calloc(2 * g_s.n, sizeof *g_an);
    rb_rng r;
    rb_rng_seed(&r, 3);
    for (size_t i = 0; i < 2 * g_s.n; i++) {
        g_pn[i] = 0.002 * rb_rng_normal(&r); /* ZMP: 2 mm */
        g_an[i] = 0.05 * rb_rng_normal(&r);  /* acceleration: 0.05 m/s^2 */
    }
}

static void free_run(lrun *r) { free(r->pos), free(r->vel), free(r->corr), free(r->off), free(r->aerr); }

static lrun run(const lcase *lc)
{
    make_data();
    rb_lipm_config c;
    rb_lipm_config_init(&c);
    c.form = lc->form, c.z_c = ZC, c.gravity = G, c.dt = DT, c.perr_acc = lc->perr;
    rb_lipm *e = NULL;
    rb_err err;
    cr_assert_eq(rb_lipm_alloc(&c, &e, &err), RB_OK, "%s", err.msg);
    size_t n = g_s.n;
    lrun o = {.n = n};
    o.pos = calloc(2 * n, sizeof(double)), o.vel = calloc(2 * n, sizeof(double));
    o.corr = calloc(2 * n, sizeof(double)), o.off = calloc(2 * n, sizeof(double));
    o.aerr = calloc(2 * n, sizeof(double));
    for (size_t k = 0; k < n; k++) {
        double p[2], a[2];
        for (int i = 0; i < 2; i++) {
            p[i] = g_s.p[2 * k + i] + g_pn[2 * k + i];
            a[i] = g_s.cdd[2 * k + i] + g_an[2 * k + i];
        }
        p[0] += lc->zmp_off;
        if (g_s.t[k] >= lc->acc_err_t)
            a[0] += lc->acc_err;
        cr_assert_eq(rb_lipm_step(e, k, g_s.t[k], p, a, &err), RB_OK, "%s", err.msg);
        rb_lipm_out out;
        rb_lipm_get_out(e, &out);
        for (int i = 0; i < 2; i++) {
            o.pos[2 * k + i] = out.axis[i].pos, o.vel[2 * k + i] = out.axis[i].vel;
            o.corr[2 * k + i] = out.axis[i].corrected, o.off[2 * k + i] = out.axis[i].offset;
            o.aerr[2 * k + i] = out.axis[i].acc_error;
        }
    }
    rb_lipm_free(e);
    return o;
}

/* RMSE (3.25) of est - (ref + shift) on axis ax over [t0, t1). */
static double rmse(const double *est, const double *ref, double shift, int ax, double t0, double t1)
{
    double s = 0;
    size_t m = 0;
    for (size_t k = 0; k < g_s.n; k++)
        if (g_s.t[k] >= t0 && g_s.t[k] < t1) {
            double d = est[2 * k + ax] - ref[2 * k + ax] - shift;
            s += d * d, m++;
        }
    return sqrt(s / m);
}

static double at(const double *v, int ax, double t) { return v[2 * (size_t)llround(t / DT) + ax]; }

static double max_diff(const double *a, const double *b, int ax, double t0)
{
    double m = 0;
    for (size_t k = 0; k < g_s.n; k++)
        if (g_s.t[k] >= t0)
            m = fmax(m, fabs(a[2 * k + ax] - b[2 * k + ax]));
    return m;
}

/* 3.4.4: no error. Both forms track the truth and agree; the error estimates stay near 0. */
Test(observers_lipm, clean_forms_agree_and_track)
{
    lrun f1 = run(&(lcase){.form = RB_LIPM_FORM1}), f2 = run(&(lcase){.form = RB_LIPM_FORM2});
    for (int ax = 0; ax < 2; ax++) {
        double d = max_diff(f1.pos, f2.pos, ax, 1.0), r1 = rmse(f1.pos, g_s.c, 0, ax, 1, DUR),
               r2 = rmse(f2.corr, g_s.c, 0, ax, 1, DUR);
        cr_log_info("clean axis %c: max |form1 - form2| %.2f mm, RMSE form1 %.2f mm, form2 corrected %.2f mm, "
                    "offset at 5 s %.2f mm, acc error at 5 s %.3f m/s^2",
                    "xy"[ax], 1e3 * d, 1e3 * r1, 1e3 * r2, 1e3 * at(f2.off, ax, 5), at(f1.aerr, ax, 5));
        cr_expect_leq(d, 0.005, "axis %c: forms differ by %g m", "xy"[ax], d);
        /* 2 mm ZMP and 0.05 m/s^2 acceleration noise: about 5 mm (the acceleration noise times z_c / g) */
        cr_expect_leq(r1, 0.008, "axis %c: form 1 RMSE %g m", "xy"[ax], r1);
        cr_expect_leq(r2, 0.008, "axis %c: form 2 RMSE %g m", "xy"[ax], r2);
        cr_expect_leq(fabs(at(f2.off, ax, 8)), 0.004);
        cr_expect_leq(fabs(at(f1.aerr, ax, 8)), 0.1);
    }
    free_run(&f1), free_run(&f2);
}

/* 3.4.2: 0.5 m/s^2 added to the x acceleration from 1 s. Form 1 estimates it and keeps its position; form 2 drifts. */
static void acc_error_case(rb_lipm_perr perr, bool expect_estimate)
{
    lcase c1 = {.form = RB_LIPM_FORM1, .acc_err = 0.5, .acc_err_t = 1.0, .perr = perr}, c2 = c1;
    c2.form = RB_LIPM_FORM2;
    lrun f1 = run(&c1), f2 = run(&c2);
    double est = at(f1.aerr, 0, 5.0), r1 = rmse(f1.pos, g_s.c, 0, 0, 3, 10), va = rmse(f2.vel, g_s.cd, 0, 0, 0, 5),
           vb = rmse(f2.vel, g_s.cd, 0, 0, 5, 10), a = rmse(f2.corr, g_s.c, 0, 0, 0, 5),
           b = rmse(f2.corr, g_s.c, 0, 0, 5, 10), ua = rmse(f2.pos, g_s.c, 0, 0, 0, 5),
           ub = rmse(f2.pos, g_s.c, 0, 0, 5, 10);
    cr_log_info("acc error (%s): form 1 estimate at 5 s %.3f (at 10 s %.3f) m/s^2, form 1 RMSE 3-10 s %.2f mm; form 2 "
                "corrected RMSE 0-5 s %.2f mm, 5-10 s %.2f mm; uncorrected %.2f, %.2f mm; velocity %.4f, %.4f m/s",
                perr == RB_LIPM_PERR_MEASURED ? "measured" : "estimated", est, at(f1.aerr, 0, 10), 1e3 * r1, 1e3 * a,
                1e3 * b, 1e3 * ua, 1e3 * ub, va, vb);
    if (expect_estimate) {
        cr_expect(fabs(est - 0.5) <= 0.1, "form 1's acceleration-error estimate at 5 s: %g", est);
        /* after the onset's transient (1-3 s: the jerk input's one-sample step of 0.5 m/s^2) */
        cr_expect_leq(r1, 0.01, "form 1 RMSE %g m", r1);
        /* form 2: its position jumps by about z_c / g 0.5 = 41 mm at the onset and stays there (a bias); the
         * corrected CoM (3.26) and the velocity drift on */
        cr_expect_gt(b, a, "form 2 corrected RMSE 5-10 s %g m not above 0-5 s %g m", b, a);
        cr_expect_gt(vb, va, "form 2 velocity RMSE 5-10 s %g m/s not above 0-5 s %g m/s", vb, va);
        cr_expect_gt(ua, 0.025, "form 2 position RMSE 0-5 s %g m", ua);
    } else {
        cr_expect_lt(fabs(est), 0.1, "3.24 as printed: form 1's estimate at 5 s %g is not near 0", est);
    }
    free_run(&f1), free_run(&f2);
}

Test(observers_lipm, acc_error_form1_estimates_form2_drifts) { acc_error_case(RB_LIPM_PERR_MEASURED, true); }

/* With the estimated acceleration in the ZMP error (3.24 as printed), form 1's error estimate is its own filter
 * residual: it does not see the acceleration error (why the default is the measured acceleration). */
Test(observers_lipm, acc_error_unseen_with_estimated_acceleration) { acc_error_case(RB_LIPM_PERR_ESTIMATED, false); }

/* 3.4.3: 35 mm added to the measured x ZMP. Form 2 estimates it; form 1 takes it into its position. */
Test(observers_lipm, zmp_offset_form2_estimates_form1_fails)
{
    const double d = 0.035;
    lrun f1 = run(&(lcase){.form = RB_LIPM_FORM1, .zmp_off = d}),
         f2 = run(&(lcase){.form = RB_LIPM_FORM2, .zmp_off = d});
    double off = at(f2.off, 0, 5.0), r1 = rmse(f1.pos, g_s.c, 0, 0, 0, DUR), rc = rmse(f2.corr, g_s.c, 0, 0, 5, DUR),
           rcd = rmse(f2.corr, g_s.c, d, 0, 5, DUR), ru = rmse(f2.pos, g_s.c, 0, 0, 0, DUR);
    cr_log_info(
        "zmp offset: form 2 offset at 5 s %.2f mm; form 2 corrected RMSE 5-12 s vs the true CoM %.2f mm, vs the "
        "CoM + offset %.2f mm; form 2 uncorrected RMSE %.2f mm; form 1 RMSE %.2f mm",
        1e3 * off, 1e3 * rc, 1e3 * rcd, 1e3 * ru, 1e3 * r1);
    cr_expect(fabs(off - d) <= 0.004, "form 2 offset at 5 s: %g m", off);
    cr_expect_geq(r1, 0.025, "form 1 RMSE %g m", r1);
    cr_expect_leq(ru, 0.005, "form 2 position RMSE %g m", ru);
    /* a constant ZMP bias and a constant CoM shift give the same ZMP and acceleration (the LIPM is translation
     * invariant): (3.26) puts the bias into the corrected CoM, which matches the CoM the biased ZMP implies */
    cr_expect_leq(rcd, 0.005, "form 2 corrected RMSE against the CoM the offset ZMP implies %g m", rcd);
    cr_expect_geq(rc, 0.025, "form 2 corrected RMSE against the true CoM %g m", rc);
    free_run(&f1), free_run(&f2);
}

/* Both feet unloaded (NaN ZMP): form 1 only predicts, form 2 holds its ZMP state; counted. A NaN acceleration: counted. */
Test(observers_lipm, undefined_zmp_is_counted_and_held)
{
    for (int form = 1; form <= 2; form++) {
        rb_lipm_config c;
        rb_lipm_config_init(&c);
        c.form = form, c.z_c = ZC;
        rb_lipm *e = NULL;
        rb_err err;
        cr_assert_eq(rb_lipm_alloc(&c, &e, &err), RB_OK);
        double p[2] = {0.01, 0.02}, a[2] = {0.1, -0.1}, nan2[2] = {NAN, NAN};
        for (size_t k = 0; k < 100; k++)
            cr_assert_eq(rb_lipm_step(e, k, k * DT, p, a, &err), RB_OK, "%s", err.msg);
        rb_lipm_out before, after;
        rb_lipm_get_out(e, &before);
        for (size_t k = 100; k < 110; k++)
            cr_assert_eq(rb_lipm_step(e, k, k * DT, nan2, a, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_lipm_step(e, 110, 110 * DT, p, nan2, &err), RB_OK, "%s", err.msg);
        rb_lipm_get_out(e, &after);
        rb_lipm_diag d;
        rb_lipm_get_diag(e, &d);
        cr_expect_eq(d.zmp_undefined, 10, "form %d", form);
        cr_expect_eq(d.acc_missing, 2, "form %d", form);
        cr_expect_eq(d.steps, 111);
        cr_expect(isnan(after.axis[0].zmp_err), "form %d: e_p with a missing measured acceleration", form);
        /* the low-pass held while the ZMP was undefined: it moved by one sample's step only */
        cr_expect_lt(fabs(after.axis[0].offset - before.axis[0].offset), 1e-3);
        rb_lipm_free(e);
    }
}

Test(observers_lipm, config_errors)
{
    rb_lipm_config c;
    rb_lipm_config_init(&c);
    rb_lipm *e = NULL;
    rb_err err;
    cr_expect_eq(rb_lipm_alloc(&c, &e, &err), RB_ECONFIG); /* z_c 0 */
    cr_expect(strstr(err.msg, "z_c") != NULL, "%s", err.msg);
    c.z_c = -0.8;
    cr_expect_eq(rb_lipm_alloc(&c, &e, &err), RB_ECONFIG);
    c.z_c = 0.8, c.g3 = 0;
    cr_expect_eq(rb_lipm_alloc(&c, &e, &err), RB_ECONFIG);
    cr_expect(strstr(err.msg, "g3") != NULL, "%s", err.msg);
    c.g3 = 0.002;
    cr_assert_eq(rb_lipm_alloc(&c, &e, &err), RB_OK);
    double p[2] = {0, 0};
    cr_assert_eq(rb_lipm_step(e, 0, 1.0, p, p, &err), RB_OK);
    cr_expect_eq(rb_lipm_step(e, 1, 1.0, p, p, &err), RB_EINPUT);
    cr_expect(strstr(err.msg, "sample 1") != NULL, "%s", err.msg);
    rb_lipm_free(e);
}

/* A sole wrench: CoP and (3.1) with the threshold and the use mask. */
Test(observers_lipm, foot_cop_and_zmp)
{
    /* 400 N at (0.03, -0.02) on the sole 0.05 below the frame, with a tangential force: the moment about the origin */
    double f[3] = {20, -10, 400}, r[3] = {0.03, -0.02, -0.05}, tau[3], w[6], cop[3], fn;
    rb_v3_cross(r, f, tau);
    memcpy(w, f, sizeof f), memcpy(w + 3, tau, sizeof tau);
    rb_lipm_foot_cop(w, 0.05, cop, &fn);
    cr_expect_float_eq(cop[0], 0.03, 1e-12);
    cr_expect_float_eq(cop[1], -0.02, 1e-12);
    cr_expect_float_eq(fn, 400, 1e-12);
    double fns[2] = {300, 100}, rho[4] = {0.0, 0.09, 0.1, -0.09}, p[2];
    cr_expect_eq(rb_lipm_zmp(2, fns, rho, NULL, 20, p), 2);
    cr_expect_float_eq(p[0], 0.025, 1e-12);
    cr_expect_float_eq(p[1], 0.045, 1e-12);
    fns[1] = 10; /* below the threshold: the left foot alone */
    cr_expect_eq(rb_lipm_zmp(2, fns, rho, NULL, 20, p), 1);
    cr_expect_float_eq(p[1], 0.09, 1e-12);
    unsigned char use[2] = {0, 1};
    cr_expect_eq(rb_lipm_zmp(2, fns, rho, use, 20, p), 0);
    cr_expect(isnan(p[0]) && isnan(p[1]));
}

/* (3.4): a body spinning about its CoM (w and w_dot about z) with the IMU 3 cm off it reads the centripetal and
 * tangential accelerations; the CoM's acceleration comes out 0 (the thesis's + sign would give twice them). */
Test(observers_lipm, com_acc_removes_the_lever_arm)
{
    double w[3] = {0.3, -0.2, 1.5}, wd[3] = {0.5, 0.1, -2.0}, r[3] = {0.01, -0.01, 0.02}, R[9], wr[3], wwr[3], dr[3];
    rb_m3_from_rpy(0.1, -0.2, 0.7, R);
    rb_v3_cross(w, r, wr), rb_v3_cross(w, wr, wwr), rb_v3_cross(wd, r, dr);
    /* the IMU's proper acceleration in its axes: a_I - g_vec with a_I = w_dot x r + w x (w x r) (CoM at rest) */
    double gI[3], up[3] = {0, 0, G}, f[3], c[3];
    rb_m3t_mul_v(R, up, gI);
    for (int j = 0; j < 3; j++)
        f[j] = dr[j] + wwr[j] + gI[j];
    rb_lipm_com_acc(R, f, w, wd, r, G, c);
    for (int j = 0; j < 3; j++)
        cr_expect_float_eq(c[j], 0, 1e-12, "%d: %g", j, c[j]);
}

/* A foot held while loaded at two consecutive samples carries the base; a foot lifted follows the kinematics. */
Test(observers_lipm, anchor_holds_the_stance_foot)
{
    rb_lipm_anchor a;
    rb_lipm_anchor_init(&a);
    double rel[6] = {0, 0.09, -0.8, 0, -0.09, -0.8}, base0[3] = {1, 2, 0.8};
    unsigned char both[2] = {1, 1}, left[2] = {1, 0};
    rb_lipm_anchor_step(&a, rel, both, base0);
    cr_expect_float_eq(a.foot[0][1], 2.09, 1e-12);
    /* the base moves 5 cm forward over the left foot: rel changes, the left foot stays */
    double rel2[6] = {-0.05, 0.09, -0.8, 0.05, -0.09, -0.7};
    rb_lipm_anchor_step(&a, rel2, left, base0);
    cr_expect_float_eq(a.base[0], 1.05, 1e-12);
    cr_expect_float_eq(a.foot[0][0], 1.0, 1e-12);
    cr_expect_float_eq(a.foot[1][0], 1.10, 1e-12);
    cr_expect_eq(a.held_none, 0);
}

Test(observers_lipm, step_allocates_nothing)
{
    rb_lipm_config c;
    rb_lipm_config_init(&c);
    c.form = RB_LIPM_FORM2, c.z_c = ZC;
    rb_lipm *e = NULL;
    rb_err err;
    cr_assert_eq(rb_lipm_alloc(&c, &e, &err), RB_OK);
    double p[2] = {0.01, 0.02}, a[2] = {0.1, -0.1};
    test_alloc_count_init();
    double t = 0;
    test_alloc_count = 0, test_alloc_counting = 1;
    for (size_t k = 0; k < 50; k++, t += k % 2 ? DT : 1.5 * DT) /* a period that changes: A and B rebuilt */
        cr_assert_eq(rb_lipm_step(e, k, t, p, a, &err), RB_OK);
    test_alloc_counting = 0;
    if (test_alloc_count_works())
        cr_expect_eq(test_alloc_count, 0);
    rb_lipm_free(e);
}
