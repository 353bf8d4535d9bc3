/* KF / EKF / UKF: identities between the filters and with batch least squares, the shared
 * measurement handling (missing elements, gating, scheduling), chi-square quantiles (covariance
 * repair, diagnostics, errors and allocation behaviour: test_filters_robustness.c). */
#include <criterion/criterion.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "filters_support.h"
#include "roboest/core.h"
#include "roboest/filters.h"

/* ---- chi-square ------------------------------------------------------------------------------ */

/* Recorded with:
 *   /usr/bin/python3 -c "from scipy.stats import chi2; print('%.17g' % chi2.ppf(p, k))"
 *   /usr/bin/python3 -c "from scipy.special import gammainc; print('%.17g' % gammainc(a, x))"
 * (scipy 1.10, Debian 12). */
static const double chi2_ppf_ref[][3] = {
    {0.95, 1, 3.841458820694124},      {0.95, 2, 5.991464547107979},        {0.975, 10, 20.483177350807388},
    {0.025, 10, 3.2469727802368413},   {0.999, 1, 10.827566170662733},      {0.5, 3, 2.3659738843753377},
    {1e-6, 1, 1.5707963267957187e-12}, {1e-4, 0.5, 1.3499395786223448e-16}, {0.9999999, 60, 135.19400106183176},
    {0.05, 60, 43.187958453989765},    {0.997, 30, 55.642881830389889},     {0.01, 200, 156.43196610759165},
    {0.99, 1000, 1106.9689943522174},
};
static const double gamma_p_ref[][3] = {
    {0.5, 0.1, 0.34527915398142317}, {1, 2, 0.8646647167633873},    {3, 2.5, 0.45618688411667035},
    {10, 20, 0.99500458769169242},   {30, 25, 0.18210391597745509}, {0.25, 5, 0.99950797487555365},
    {100, 90, 0.15822098918643007},
};

Test(filters, chi2_quantile_matches_scipy)
{
    for (size_t i = 0; i < sizeof chi2_ppf_ref / sizeof chi2_ppf_ref[0]; i++) {
        double p = chi2_ppf_ref[i][0], k = chi2_ppf_ref[i][1], want = chi2_ppf_ref[i][2], q = -1;
        rb_err err;
        cr_assert_eq(rb_chi2_quantile(p, k, &q, &err), RB_OK);
        cr_assert(fabs(q - want) <= 1e-11 * want, "p %g k %g: %.17g vs scipy %.17g", p, k, q, want);
        cr_assert(fabs(rb_chi2_cdf(q, k) - p) <= 1e-12 * fmax(p, 1e-300) + 1e-15, "cdf round trip p %g k %g", p, k);
    }
    for (size_t i = 0; i < sizeof gamma_p_ref / sizeof gamma_p_ref[0]; i++) {
        double got = rb_gamma_p(gamma_p_ref[i][0], gamma_p_ref[i][1]);
        cr_assert(fabs(got - gamma_p_ref[i][2]) <= 1e-13 * gamma_p_ref[i][2], "P(%g, %g) = %.17g vs %.17g",
                  gamma_p_ref[i][0], gamma_p_ref[i][1], got, gamma_p_ref[i][2]);
    }
    double q;
    rb_err err;
    cr_assert_eq(rb_chi2_quantile(1.0, 3, &q, &err), RB_EINVAL);
    cr_assert_eq(rb_chi2_quantile(0.5, 0, &q, &err), RB_EINVAL);
    cr_assert(isnan(rb_gamma_p(-1, 1)));
}

/* scipy at test time as well, when it is there (the recorded table above is the fallback). */
Test(filters, chi2_quantile_matches_scipy_live)
{
    FILE *p = popen("/usr/bin/python3 -c \"from scipy.stats import chi2\n"
                    "for k in (1, 3, 7.5, 42, 85, 181):\n"
                    "  for q in (0.001, 0.05, 0.5, 0.95, 0.9973):\n"
                    "    print(q, k, repr(chi2.ppf(q, k)))\" 2>/dev/null",
                    "r");
    if (!p)
        cr_skip_test("no python3");
    double pr, k, want;
    int rows = 0;
    while (fscanf(p, "%lf %lf %lf", &pr, &k, &want) == 3) {
        double q;
        cr_assert_eq(rb_chi2_quantile(pr, k, &q, NULL), RB_OK);
        cr_assert(fabs(q - want) <= 1e-11 * want, "p %g k %g: %.17g vs scipy %.17g", pr, k, q, want);
        rows++;
    }
    int st = pclose(p);
    if (rows == 0 || st != 0)
        cr_skip_test("scipy not available (recorded values are checked by chi2_quantile_matches_scipy)");
    cr_assert_eq(rows, 30);
}

/* ---- KF against batch weighted least squares -------------------------------------------------- */

/* Static state (F = I, Q = 0) measured through a different random H_k each step (written through
 * the filter's H view). The KF's final estimate is the information-form solution
 *   (P0^-1 + sum H_k^T R^-1 H_k) x = P0^-1 x0 + sum H_k^T R^-1 z_k,  P = (...)^-1,
 * solved here with LAPACK (dposv). */
Test(filters, kf_equals_batch_weighted_least_squares)
{
    enum { n = 3, m = 2, T = 60 };
    rb_rng rng;
    rb_rng_seed(&rng, 11);
    double P0[n * n], R[m * m], x0[n] = {0.5, -1.0, 2.0}, xt[n] = {1.0, 0.3, -0.7};
    fs_rand_spd(&rng, n, 1.0, 0.5, P0);
    fs_rand_spd(&rng, m, 0.5, 0.2, R);
    double F[n * n] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, H0[m * n] = {1, 0, 0, 0, 1, 1};
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = n;
    o.m = m;
    o.x0 = x0;
    o.P0 = P0;
    o.R = R;
    o.F = F;
    o.H = H0;
    rb_filter *kf;
    rb_err err;
    cr_assert_eq(rb_kf_create(&o, &kf, &err), RB_OK, "%s", err.msg);
    rb_filter_mats mats = rb_filter_get_mats(kf);

    /* Information accumulators: Lam = P0^-1 + sum H^T R^-1 H, eta = P0^-1 x0 + sum H^T R^-1 z. */
    double Lam[n * n], eta[n];
    double Id[n * n] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, Pc[n * n];
    memcpy(Pc, P0, sizeof Pc);
    memcpy(Lam, Id, sizeof Lam);
    cr_assert_eq(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', n, n, Pc, n, Lam, n), 0); /* Lam = P0^-1 */
    for (int i = 0; i < n; i++) {
        eta[i] = 0;
        for (int j = 0; j < n; j++)
            eta[i] += Lam[i * n + j] * x0[j];
    }
    double Lr[m * m];
    memcpy(Lr, R, sizeof Lr);
    cr_assert_eq(LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', m, Lr, m), 0);
    for (int t = 0; t < T; t++) {
        double H[m * n], z[m], RiH[m * n], Riz[m];
        for (int i = 0; i < m * n; i++)
            H[i] = rb_rng_normal(&rng);
        for (int i = 0; i < m; i++) {
            z[i] = 0;
            for (int j = 0; j < n; j++)
                z[i] += H[i * n + j] * xt[j];
        }
        double e[m] = {rb_rng_normal(&rng), rb_rng_normal(&rng)};
        for (int i = 0; i < m; i++)
            for (int j = 0; j <= i; j++)
                z[i] += Lr[i * m + j] * e[j];
        memcpy(mats.H.data, H, sizeof H);
        cr_assert_eq(rb_filter_predict(kf, NULL, 0.01, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_filter_update(kf, z, &err), RB_OK, "%s", err.msg);
        memcpy(RiH, H, sizeof H);
        memcpy(Riz, z, sizeof z);
        cr_assert_eq(LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', m, n, Lr, m, RiH, n), 0);
        cr_assert_eq(LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', m, 1, Lr, m, Riz, 1), 0);
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++)
                for (int k = 0; k < m; k++)
                    Lam[i * n + j] += H[k * n + i] * RiH[k * n + j];
            for (int k = 0; k < m; k++)
                eta[i] += H[k * n + i] * Riz[k];
        }
    }
    double Pw[n * n], xw[n];
    memcpy(Pw, Id, sizeof Pw);
    memcpy(xw, eta, sizeof xw);
    double Lc[n * n];
    memcpy(Lc, Lam, sizeof Lc);
    cr_assert_eq(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', n, 1, Lc, n, xw, 1), 0);
    memcpy(Lc, Lam, sizeof Lc);
    cr_assert_eq(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', n, n, Lc, n, Pw, n), 0);

    double ex = fs_maxrel(rb_filter_x(kf), xw, n), eP = fs_maxrel(rb_filter_P(kf), Pw, n * n);
    cr_assert(ex < 1e-12, "x differs from WLS by %g", ex);
    cr_assert(eP < 1e-12, "P differs from WLS by %g", eP);
    const double *P = rb_filter_P(kf);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            cr_assert_eq(P[i * n + j], P[j * n + i], "P not exactly symmetric");
    rb_filter_free(kf);
}

/* ---- EKF and UKF on a linear model equal the KF ------------------------------------------------ */

/* Run kf and other side by side on the same simulated data (with missing elements); compare after
 * every predict and update. */
static void run_side_by_side(const fs_linear *s, rb_filter *kf, rb_filter *other, double tol, int steps, uint64_t seed)
{
    rb_rng rng;
    rb_rng_seed(&rng, seed);
    size_t n = s->n, m = s->m;
    double xt[FS_MAXN], z[FS_MAXM], u[1];
    memcpy(xt, s->x0, n * sizeof(double));
    double worst = 0;
    rb_err err;
    for (int t = 0; t < steps; t++) {
        u[0] = sin(0.1 * t);
        double nx[FS_MAXN];
        fs_lin_f((void *)s, xt, u, 0.01, nx, NULL);
        for (size_t i = 0; i < n; i++)
            xt[i] = nx[i] + 0.1 * rb_rng_normal(&rng);
        fs_lin_h((void *)s, xt, z, NULL);
        for (size_t i = 0; i < m; i++)
            z[i] += 0.3 * rb_rng_normal(&rng);
        if (t % 7 == 3)
            z[t % m] = NAN;
        cr_assert_eq(rb_filter_predict(kf, u, 0.01, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_filter_predict(other, u, 0.01, &err), RB_OK, "%s", err.msg);
        worst = fmax(worst, fs_maxrel(rb_filter_x(other), rb_filter_x(kf), n));
        worst = fmax(worst, fs_maxrel(rb_filter_P(other), rb_filter_P(kf), n * n));
        if (t % 11 == 5)
            continue; /* no measurement this step */
        cr_assert_eq(rb_filter_update(kf, z, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_filter_update(other, z, &err), RB_OK, "%s", err.msg);
        worst = fmax(worst, fs_maxrel(rb_filter_x(other), rb_filter_x(kf), n));
        worst = fmax(worst, fs_maxrel(rb_filter_P(other), rb_filter_P(kf), n * n));
        rb_filter_diag dk, dothers;
        rb_filter_get_diag(kf, &dk);
        rb_filter_get_diag(other, &dothers);
        cr_assert_eq(dk.dof, dothers.dof);
        cr_assert(fabs(dk.nis - dothers.nis) <= tol * (1 + dk.nis), "t %d nis %.17g vs %.17g dof %zu", t, dk.nis,
                  dothers.nis, dk.dof);
    }
    cr_assert(worst <= tol, "largest relative difference %g > %g", worst, tol);
    cr_log_info("side by side: largest relative difference %g (tolerance %g)", worst, tol);
}

Test(filters, ekf_on_linear_model_equals_kf)
{
    fs_linear s;
    fs_linear_make(&s, 4, 3, 21);
    rb_filter_opts o;
    fs_linear_opts(&s, &o);
    rb_filter *kf, *ekf;
    rb_err err;
    cr_assert_eq(rb_kf_create(&o, &kf, &err), RB_OK, "%s", err.msg);
    o.jac_f = fs_lin_jf;
    o.jac_h = fs_lin_jh;
    cr_assert_eq(rb_ekf_create(&o, &ekf, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_filter_get_kind(ekf), RB_FILTER_EKF);
    run_side_by_side(&s, kf, ekf, 1e-12, 300, 5);
    rb_filter_free(kf);
    rb_filter_free(ekf);
}

Test(filters, ekf_finite_difference_jacobians_on_linear_model)
{
    fs_linear s;
    fs_linear_make(&s, 4, 3, 22);
    rb_filter_opts o;
    fs_linear_opts(&s, &o);
    rb_filter *kf, *ekf;
    cr_assert_eq(rb_kf_create(&o, &kf, NULL), RB_OK);
    cr_assert_eq(rb_ekf_create(&o, &ekf, NULL), RB_OK); /* jac_f, jac_h NULL: central differences */
    run_side_by_side(&s, kf, ekf, 1e-8, 200, 6);
    rb_filter_free(kf);
    rb_filter_free(ekf);
}

Test(filters, ukf_on_linear_model_equals_kf)
{
    /* Default scaling (alpha 1, beta 2, kappa 0) and a small alpha (negative centre weights). */
    const double alphas[] = {1.0, 0.3, 1e-2};
    for (size_t a = 0; a < 3; a++) {
        fs_linear s;
        fs_linear_make(&s, 5, 3, 31 + a);
        rb_filter_opts o;
        fs_linear_opts(&s, &o);
        rb_filter *kf, *ukf;
        rb_err err;
        cr_assert_eq(rb_kf_create(&o, &kf, &err), RB_OK, "%s", err.msg);
        o.alpha = alphas[a];
        cr_assert_eq(rb_ukf_create(&o, &ukf, &err), RB_OK, "%s", err.msg);
        run_side_by_side(&s, kf, ukf, 1e-9, 300, 7 + a);
        rb_filter_free(kf);
        rb_filter_free(ukf);
    }
}

/* ---- missing elements ------------------------------------------------------------------------ */

/* Nonlinear measurement; drop >= 0 leaves that row out (m - 1 outputs). */
typedef struct nl_meas {
    fs_linear lin;
    int drop;
} nl_meas;

static int nl_h(void *user, const double *x, double *z, rb_err *err)
{
    (void)err;
    const nl_meas *s = user;
    double full[3] = {x[0] * x[0] + x[1], sin(x[1]) + x[2], x[0] * x[2] + 0.5 * x[1]};
    size_t k = 0;
    for (int i = 0; i < 3; i++)
        if (i != s->drop)
            z[k++] = full[i];
    return RB_OK;
}

static void remove_row(const double *R, size_t m, int drop, double *out)
{
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < m; j++)
            if ((int)i != drop && (int)j != drop)
                out[k++] = R[i * m + j];
}

Test(filters, nan_element_equals_update_without_that_row)
{
    for (int kind = 0; kind < 3; kind++) {
        for (int drop = 0; drop < 3; drop++) {
            nl_meas full, part;
            fs_linear_make(&full.lin, 3, 3, 41);
            full.drop = -1;
            part = full;
            part.drop = drop;
            part.lin.m = 2;
            remove_row(full.lin.R, 3, drop, part.lin.R);
            size_t k = 0;
            for (int i = 0; i < 3; i++)
                if (i != drop)
                    memcpy(part.lin.H + 3 * k++, full.lin.H + 3 * i, 3 * sizeof(double));
            rb_filter_opts oa, ob;
            fs_linear_opts(&full.lin, &oa);
            fs_linear_opts(&part.lin, &ob);
            oa.user = &full;
            ob.user = &part;
            oa.h = ob.h = nl_h;
            rb_filter *fa, *fb;
            int (*create)(const rb_filter_opts *, rb_filter **, rb_err *) = kind == 0   ? rb_kf_create
                                                                            : kind == 1 ? rb_ekf_create
                                                                                        : rb_ukf_create;
            rb_err err;
            cr_assert_eq(create(&oa, &fa, &err), RB_OK, "%s", err.msg);
            cr_assert_eq(create(&ob, &fb, &err), RB_OK, "%s", err.msg);
            double z[3] = {0.7, -0.2, 1.1}, zp[2];
            k = 0;
            for (int i = 0; i < 3; i++)
                if (i != drop)
                    zp[k++] = z[i];
            z[drop] = NAN;
            for (int step = 0; step < 3; step++) {
                double u = 0.2;
                cr_assert_eq(rb_filter_predict(fa, &u, 0.1, &err), RB_OK, "%s", err.msg);
                cr_assert_eq(rb_filter_predict(fb, &u, 0.1, &err), RB_OK, "%s", err.msg);
                cr_assert_eq(rb_filter_update(fa, z, &err), RB_OK, "%s", err.msg);
                cr_assert_eq(rb_filter_update(fb, zp, &err), RB_OK, "%s", err.msg);
                double ex = fs_maxrel(rb_filter_x(fa), rb_filter_x(fb), 3);
                double eP = fs_maxrel(rb_filter_P(fa), rb_filter_P(fb), 9);
                cr_assert(ex < 1e-13 && eP < 1e-13, "kind %d drop %d: x %g P %g", kind, drop, ex, eP);
            }
            rb_filter_diag d;
            rb_filter_get_diag(fa, &d);
            cr_assert_eq(d.status[drop], RB_MEAS_MISSING);
            cr_assert(isnan(d.innovation[drop]));
            cr_assert_eq(d.dof, 2);
            cr_assert_eq(d.missing_elements, 3);
            double S[9];
            cr_assert_eq(rb_filter_innovation_cov(fa, S, &err), RB_OK);
            cr_assert(isnan(S[drop * 3 + (drop + 1) % 3]) && isnan(S[drop * 4]));
            /* All missing: nothing changes. */
            double xb[3], Pb[9], zn[3] = {NAN, NAN, NAN};
            memcpy(xb, rb_filter_x(fa), sizeof xb);
            memcpy(Pb, rb_filter_P(fa), sizeof Pb);
            cr_assert_eq(rb_filter_update(fa, zn, &err), RB_OK);
            cr_assert_arr_eq(xb, rb_filter_x(fa), sizeof xb);
            cr_assert_arr_eq(Pb, rb_filter_P(fa), sizeof Pb);
            rb_filter_get_diag(fa, &d);
            cr_assert(isnan(d.nis));
            cr_assert_eq(d.dof, 0);
            rb_filter_free(fa);
            rb_filter_free(fb);
        }
    }
}

/* ---- gating -------------------------------------------------------------------------------------
 * A random-walk scalar seen by two sensors (R = I); each element is an outlier (+20, i.e. about 19
 * innovation standard deviations) with probability 5 %. Over 100 seeded runs of 400 steps:
 *   - ungated, the estimate is biased by about +1 (what the test checks: bias > 0.5);
 *   - element gate at p = 0.9999 (limit 15.1): every injected outlier is rejected, false rejections
 *     stay below 0.2 % of the good elements, and the estimate is unbiased: the mean error over runs
 *     (after 50 steps) is within 4 standard errors of zero and below 0.02 in absolute value (the
 *     steady-state standard deviation of the estimate is about 0.26). */
typedef struct gate_run {
    double mean_err; /* over runs of the per-run mean error */
    double se;       /* its standard error */
    long injected, gated, good;
    long gated_updates;
} gate_run;

static gate_run run_gating(rb_gate_mode mode, double probability)
{
    enum { runs = 100, T = 400, burn = 50 };
    double F = 1, H[2] = {1, 1}, Q = 0.01, R[4] = {1, 0, 0, 1}, P0 = 1, x0 = 0;
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = 1;
    o.m = 2;
    o.F = &F;
    o.H = H;
    o.Q = &Q;
    o.R = R;
    o.P0 = &P0;
    o.x0 = &x0;
    o.gate.mode = mode;
    o.gate.probability = probability;
    gate_run g = {0, 0, 0, 0, 0, 0};
    double sum = 0, sum2 = 0;
    rb_rng rng;
    rb_rng_seed(&rng, 99);
    for (int r = 0; r < runs; r++) {
        rb_filter *kf;
        rb_err err;
        cr_assert_eq(rb_kf_create(&o, &kf, &err), RB_OK, "%s", err.msg);
        double xt = 0, run_err = 0;
        for (int t = 0; t < T; t++) {
            xt += 0.1 * rb_rng_normal(&rng);
            double z[2];
            for (int i = 0; i < 2; i++) {
                z[i] = xt + rb_rng_normal(&rng);
                if (rb_rng_uniform(&rng) < 0.05) {
                    z[i] += 20.0;
                    g.injected++;
                } else {
                    g.good++;
                }
            }
            cr_assert_eq(rb_filter_predict(kf, NULL, 0.01, &err), RB_OK, "%s", err.msg);
            cr_assert_eq(rb_filter_update(kf, z, &err), RB_OK, "%s", err.msg);
            if (t >= burn)
                run_err += rb_filter_x(kf)[0] - xt;
        }
        rb_filter_diag d;
        rb_filter_get_diag(kf, &d);
        g.gated += d.gated_elements;
        g.gated_updates += d.gated_updates;
        run_err /= (T - burn);
        sum += run_err;
        sum2 += run_err * run_err;
        rb_filter_free(kf);
    }
    g.mean_err = sum / runs;
    g.se = sqrt((sum2 / runs - g.mean_err * g.mean_err) / (runs - 1));
    return g;
}

Test(filters, element_gate_rejects_outliers_and_stays_unbiased)
{
    gate_run off = run_gating(RB_GATE_OFF, 0);
    cr_assert(off.mean_err > 0.5, "ungated bias %g: the outliers should matter", off.mean_err);
    cr_assert_eq(off.gated, 0);
    gate_run on = run_gating(RB_GATE_ELEMENT, 0.9999);
    cr_assert(on.gated >= on.injected, "gated %ld < injected %ld", on.gated, on.injected);
    cr_assert(on.gated - on.injected <= 0.002 * on.good, "false rejections %ld of %ld", on.gated - on.injected,
              on.good);
    cr_assert(fabs(on.mean_err) <= 4 * on.se && fabs(on.mean_err) < 0.02, "gated bias %g (standard error %g)",
              on.mean_err, on.se);
}

Test(filters, vector_gate_rejects_whole_updates)
{
    gate_run on = run_gating(RB_GATE_VECTOR, 0.9999);
    cr_assert(on.gated_updates > 0);
    cr_assert_eq(on.gated, 0);
    cr_assert(fabs(on.mean_err) <= 4 * on.se && fabs(on.mean_err) < 0.02, "gated bias %g (standard error %g)",
              on.mean_err, on.se);

    /* One update by hand: an outlier is rejected whole, x and P untouched, diagnostics say so. */
    double F = 1, H[2] = {1, 1}, R[4] = {1, 0, 0, 1}, P0 = 1;
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = 1;
    o.m = 2;
    o.F = &F;
    o.H = H;
    o.R = R;
    o.P0 = &P0;
    o.gate.mode = RB_GATE_VECTOR;
    o.gate.threshold = 9.0;
    rb_filter *kf;
    cr_assert_eq(rb_kf_create(&o, &kf, NULL), RB_OK);
    double z[2] = {10, 0.1};
    cr_assert_eq(rb_filter_update(kf, z, NULL), RB_OK);
    rb_filter_diag d;
    rb_filter_get_diag(kf, &d);
    cr_assert(d.rejected);
    cr_assert_eq(d.gate_limit, 9.0);
    cr_assert_eq(d.status[0], RB_MEAS_GATED);
    cr_assert_eq(d.status[1], RB_MEAS_GATED);
    cr_assert(d.nis > 9.0);
    cr_assert_eq(rb_filter_x(kf)[0], 0.0);
    cr_assert_eq(rb_filter_P(kf)[0], 1.0);
    z[0] = 0.2;
    cr_assert_eq(rb_filter_update(kf, z, NULL), RB_OK);
    rb_filter_get_diag(kf, &d);
    cr_assert(!d.rejected);
    cr_assert_eq(d.gated_updates, 1);
    cr_assert(rb_filter_x(kf)[0] > 0.0);
    rb_filter_free(kf);
}

/* ---- scheduling ------------------------------------------------------------------------------ */
typedef struct sched_log {
    int calls_predict, calls_update;
    long last_step;
    double q_scale;
    int fail_at; /* step at which the callback fails (0: never) */
} sched_log;

static int schedule_cb(void *user, rb_filter_sched *s, rb_err *err)
{
    sched_log *log = user;
    log->last_step = s->step;
    if (s->phase == RB_FILTER_PREDICT) {
        log->calls_predict++;
        cr_assert(s->z == NULL);
        cr_assert_eq(s->dt, 0.5);
        if (log->fail_at && s->step == log->fail_at)
            return rb_err_set(err, RB_ECONFIG, "rotor speed missing");
        /* Raise the process noise of state 0 when the "input" is large (thrust-paper style). */
        double *Q = s->mats.Q.data;
        Q[0] = (s->u && fabs(s->u[0]) > 1.0) ? log->q_scale : 0.01;
    } else {
        log->calls_update++;
        cr_assert(s->z != NULL);
        cr_assert(s->u == NULL);
    }
    return RB_OK;
}

Test(filters, scheduling_callback_changes_q)
{
    fs_linear s;
    fs_linear_make(&s, 2, 1, 51);
    memset(s.Q, 0, sizeof s.Q);
    rb_filter_opts o;
    fs_linear_opts(&s, &o);
    sched_log log = {0, 0, 0, 4.0, 0};
    o.schedule = schedule_cb;
    o.schedule_user = &log;
    rb_filter *a, *b;
    cr_assert_eq(rb_kf_create(&o, &a, NULL), RB_OK);
    o.schedule = NULL;
    cr_assert_eq(rb_kf_create(&o, &b, NULL), RB_OK);
    rb_filter_mats mb = rb_filter_get_mats(b);
    rb_err err;
    for (int t = 0; t < 6; t++) {
        double u = t % 2 ? 2.0 : 0.5, z = 0.3 * t;
        mb.Q.data[0] = fabs(u) > 1.0 ? 4.0 : 0.01; /* what the callback does, by hand */
        cr_assert_eq(rb_filter_predict(a, &u, 0.5, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_filter_predict(b, &u, 0.5, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(log.last_step, t + 1);
        cr_assert_eq(rb_filter_update(a, &z, &err), RB_OK);
        cr_assert_eq(rb_filter_update(b, &z, &err), RB_OK);
        cr_assert_arr_eq(rb_filter_P(a), rb_filter_P(b), 4 * sizeof(double));
        cr_assert_arr_eq(rb_filter_x(a), rb_filter_x(b), 2 * sizeof(double));
    }
    cr_assert_eq(log.calls_predict, 6);
    cr_assert_eq(log.calls_update, 6);
    /* A failing callback stops the step, names it, and leaves the state alone. */
    log.fail_at = 8;
    double x[2], P[4], u = 0;
    memcpy(x, rb_filter_x(a), sizeof x);
    memcpy(P, rb_filter_P(a), sizeof P);
    o.schedule = schedule_cb;
    rb_filter_set_step(a, 7);
    cr_assert_eq(rb_filter_predict(a, &u, 0.5, &err), RB_ECONFIG);
    cr_assert_str_eq(err.msg, "kf predict, step 8: scheduling: rotor speed missing");
    cr_assert_arr_eq(x, rb_filter_x(a), sizeof x);
    cr_assert_arr_eq(P, rb_filter_P(a), sizeof P);
    rb_filter_diag d;
    rb_filter_get_diag(a, &d);
    cr_assert_eq(d.step, 7);
    rb_filter_free(a);
    rb_filter_free(b);
}
