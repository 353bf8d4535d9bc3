/* Adaptive Kalman filter (thesis eq. 2.28-2.42): against a direct transcription of the equations, against
 * the plain KF when adaptation is switched off, and recovering true noise covariances 10x off. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "roboest/filters.h"

/* ---- a direct transcription (explicit inverse of S, simple covariance form), small sizes only ---- */
enum { MAXN = 4 };

typedef struct ref_akf {
    size_t n, m;
    double A[MAXN * MAXN], C[MAXN * MAXN];
    double x[MAXN], P[MAXN * MAXN], Q[MAXN], R[MAXN], ebar[MAXN], lbar[MAXN], NR, NQ;
} ref_akf;

static void invert(double *a, size_t n) /* Gauss-Jordan with partial pivoting */
{
    double b[MAXN][2 * MAXN];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < 2 * n; j++)
            b[i][j] = j < n ? a[i * n + j] : (double)(j - n == i);
    for (size_t c = 0; c < n; c++) {
        size_t piv = c;
        for (size_t r = c + 1; r < n; r++)
            if (fabs(b[r][c]) > fabs(b[piv][c]))
                piv = r;
        for (size_t j = 0; j < 2 * n; j++) {
            double t = b[c][j];
            b[c][j] = b[piv][j];
            b[piv][j] = t;
        }
        double d = b[c][c];
        for (size_t j = 0; j < 2 * n; j++)
            b[c][j] /= d;
        for (size_t r = 0; r < n; r++)
            if (r != c) {
                double f = b[r][c];
                for (size_t j = 0; j < 2 * n; j++)
                    b[r][j] -= f * b[c][j];
            }
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            a[i * n + j] = b[i][n + j];
}

static void ref_step(ref_akf *f, const double *z)
{
    size_t n = f->n, m = f->m;
    double a1 = (f->NR - 1) / f->NR, a2 = (f->NQ - 1) / f->NQ;
    double xm[MAXN] = {0}, APA[MAXN * MAXN] = {0}, Pm[MAXN * MAXN], e[MAXN], CPC[MAXN * MAXN] = {0};
    double PCt[MAXN * MAXN] = {0}, S[MAXN * MAXN], K[MAXN * MAXN] = {0}, Pk[MAXN * MAXN];
    for (size_t i = 0; i < n; i++) /* 2.28 */
        for (size_t j = 0; j < n; j++)
            xm[i] += f->A[i * n + j] * f->x[j];
    for (size_t i = 0; i < n; i++) /* 2.29 */
        for (size_t j = 0; j < n; j++) {
            for (size_t k = 0; k < n; k++)
                for (size_t l = 0; l < n; l++)
                    APA[i * n + j] += f->A[i * n + k] * f->P[k * n + l] * f->A[j * n + l];
            Pm[i * n + j] = APA[i * n + j] + (i == j ? f->Q[i] : 0);
        }
    for (size_t i = 0; i < m; i++) { /* 2.30 */
        e[i] = z[i];
        for (size_t j = 0; j < n; j++)
            e[i] -= f->C[i * n + j] * xm[j];
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++)
            for (size_t k = 0; k < n; k++)
                PCt[i * m + j] += Pm[i * n + k] * f->C[j * n + k];
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < m; j++)
            for (size_t k = 0; k < n; k++)
                CPC[i * m + j] += f->C[i * n + k] * PCt[k * m + j];
    for (size_t i = 0; i < m; i++) { /* 2.31-2.34 */
        f->ebar[i] = a1 * f->ebar[i] + e[i] / f->NR;
        double dR = (e[i] - f->ebar[i]) * (e[i] - f->ebar[i]) / (f->NR - 1) - CPC[i * m + i] / f->NR;
        f->R[i] = fabs(a1 * f->R[i] + dR);
    }
    for (size_t i = 0; i < m; i++) /* 2.36 */
        for (size_t j = 0; j < m; j++)
            S[i * m + j] = CPC[i * m + j] + (i == j ? f->R[i] : 0);
    invert(S, m);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++)
            for (size_t k = 0; k < m; k++)
                K[i * m + j] += PCt[i * m + k] * S[k * m + j];
    double lam[MAXN];
    for (size_t i = 0; i < n; i++) { /* 2.35, 2.41 */
        lam[i] = 0;
        for (size_t j = 0; j < m; j++)
            lam[i] += K[i * m + j] * e[j];
        f->x[i] = xm[i] + lam[i];
    }
    for (size_t i = 0; i < n; i++) /* 2.37 */
        for (size_t j = 0; j < n; j++) {
            double kcp = 0;
            for (size_t k = 0; k < m; k++)
                kcp += K[i * m + k] * PCt[j * m + k]; /* (K C P^-)_ij = sum_k K_ik (P^- C^T)_jk */
            Pk[i * n + j] = Pm[i * n + j] - kcp;
        }
    for (size_t i = 0; i < n; i++) { /* 2.38-2.42 */
        f->lbar[i] = a2 * f->lbar[i] + lam[i] / f->NQ;
        double dQ =
            (Pk[i * n + i] - APA[i * n + i]) / f->NQ + (lam[i] - f->lbar[i]) * (lam[i] - f->lbar[i]) / (f->NQ - 1);
        f->Q[i] = fabs(a2 * f->Q[i] + dQ);
    }
    /* The simple form (I - K C) P^- is not symmetric in floating point, and left so the asymmetry grows
     * (here 1e-7 relative in P(0, 1) after 100 steps): symmetrize as the library does. */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            f->P[i * n + j] = 0.5 * (Pk[i * n + j] + Pk[j * n + i]);
}

/* A constant-velocity state [p, v] (dt 0.01 s) with p measured twice and v once. */
static const double CV_A[4] = {1, 0.01, 0, 1};
static const double CV_C[6] = {1, 0, 1, 0, 0, 1};

Test(filters_akf, matches_a_direct_transcription_of_the_thesis_equations)
{
    ref_akf ref = {.n = 2, .m = 3, .NR = 30, .NQ = 50};
    memcpy(ref.A, CV_A, sizeof CV_A);
    memcpy(ref.C, CV_C, sizeof CV_C);
    double P0[4] = {0.5, 0.1, 0.1, 2.0}, Q0[2] = {1e-4, 1e-2}, R0[3] = {0.01, 0.04, 0.2};
    memcpy(ref.P, P0, sizeof P0);
    memcpy(ref.Q, Q0, sizeof Q0);
    memcpy(ref.R, R0, sizeof R0);
    rb_akf_opts o = {.n = 2, .m = 3, .A = CV_A, .C = CV_C, .P0 = P0, .Q0 = Q0, .R0 = R0, .N_R = 30, .N_Q = 50};
    rb_akf *akf;
    rb_err err;
    cr_assert_eq(rb_akf_create(&o, &akf, &err), RB_OK, "%s", err.msg);
    rb_rng rng;
    rb_rng_seed(&rng, 7);
    double x[2] = {0.3, -1.0};
    for (int k = 0; k < 300; k++) {
        x[0] += 0.01 * x[1] + 0.01 * rb_rng_normal(&rng);
        x[1] += 0.1 * rb_rng_normal(&rng);
        double z[3] = {x[0] + 0.1 * rb_rng_normal(&rng), x[0] + 0.3 * rb_rng_normal(&rng), x[1] + rb_rng_normal(&rng)};
        ref_step(&ref, z);
        rb_alloc_fail_after(0); /* the step allocates nothing */
        int rc = rb_akf_step(akf, NULL, z, &err);
        long allocs = rb_alloc_fail_after(-1);
        cr_assert_eq(rc, RB_OK, "%s", err.msg);
        cr_assert_eq(allocs, 0);
        const double *ax = rb_akf_x(akf), *aP = rb_akf_P(akf), *aQ = rb_akf_Q(akf), *aR = rb_akf_R(akf);
        for (int i = 0; i < 2; i++) {
            cr_assert(fabs(ax[i] - ref.x[i]) <= 1e-9 * (1 + fabs(ref.x[i])), "k %d x[%d] %.17g vs %.17g", k, i, ax[i],
                      ref.x[i]);
            cr_assert(fabs(aQ[i] - ref.Q[i]) <= 1e-9 * ref.Q[i], "k %d Q[%d] %.17g vs %.17g", k, i, aQ[i], ref.Q[i]);
            for (int j = 0; j < 2; j++)
                cr_assert(fabs(aP[i * 2 + j] - ref.P[i * 2 + j]) <= 1e-9 * (fabs(ref.P[0]) + fabs(ref.P[3])),
                          "k %d P(%d,%d) %.17g vs %.17g", k, i, j, aP[i * 2 + j], ref.P[i * 2 + j]);
            cr_assert_eq(aP[i * 2 + (1 - i)], aP[(1 - i) * 2 + i], "P stays exactly symmetric");
        }
        for (int i = 0; i < 3; i++)
            cr_assert(fabs(aR[i] - ref.R[i]) <= 1e-9 * ref.R[i], "k %d R[%d] %.17g vs %.17g", k, i, aR[i], ref.R[i]);
    }
    rb_akf_free(akf);
}

Test(filters_akf, without_adaptation_it_is_the_plain_kalman_filter)
{
    /* N -> infinity: a = 1, dR and dQ -> 0, so R and Q stay and the AKF is the KF. */
    double P0[4] = {1, 0, 0, 1}, Q0[2] = {1e-4, 1e-2}, R0[3] = {0.01, 0.04, 0.2};
    rb_akf_opts o = {.n = 2, .m = 3, .A = CV_A, .C = CV_C, .P0 = P0, .Q0 = Q0, .R0 = R0, .N_R = 1e15, .N_Q = 1e15};
    double Qm[4] = {Q0[0], 0, 0, Q0[1]}, Rm[9] = {R0[0], 0, 0, 0, R0[1], 0, 0, 0, R0[2]};
    rb_filter_opts fo;
    rb_filter_opts_init(&fo);
    fo.n = 2, fo.m = 3, fo.P0 = P0, fo.Q = Qm, fo.R = Rm, fo.F = CV_A, fo.H = CV_C;
    rb_akf *akf;
    rb_filter *kf;
    rb_err err;
    cr_assert_eq(rb_akf_create(&o, &akf, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_kf_create(&fo, &kf, &err), RB_OK, "%s", err.msg);
    rb_rng rng;
    rb_rng_seed(&rng, 11);
    for (int k = 0; k < 500; k++) {
        double p = sin(0.02 * k), z[3] = {p + 0.1 * rb_rng_normal(&rng), p + 0.2 * rb_rng_normal(&rng),
                                          2 * cos(0.02 * k) + 0.4 * rb_rng_normal(&rng)};
        cr_assert_eq(rb_akf_step(akf, NULL, z, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_filter_predict(kf, NULL, 0.01, &err), RB_OK);
        cr_assert_eq(rb_filter_update(kf, z, &err), RB_OK);
        for (int i = 0; i < 2; i++)
            cr_assert(fabs(rb_akf_x(akf)[i] - rb_filter_x(kf)[i]) <= 1e-9, "k %d x[%d]", k, i);
    }
    for (int i = 0; i < 3; i++)
        cr_assert(fabs(rb_akf_R(akf)[i] / R0[i] - 1) < 1e-9, "R unchanged: %.17g", rb_akf_R(akf)[i]);
    rb_akf_free(akf);
    rb_filter_free(kf);
}

/* Tail average of the adapted Q and R of a scalar random walk x_k = x_{k-1} + w (Q = 0.01) measured by
 * two sensors (R = 1 and 0.25), starting from Q0 = fq Q, R0 = fr R. */
static void redundant_random_walk(double fq, double fr, double *q_ratio, double r_ratio[2])
{
    const double Qt = 0.01, Rt[2] = {1.0, 0.25};
    const double A = 1, C[2] = {1, 1}, P0 = 1, Q0 = fq * Qt, R0[2] = {fr * Rt[0], fr * Rt[1]};
    rb_akf_opts o = {.n = 1, .m = 2, .A = &A, .C = C, .P0 = &P0, .Q0 = &Q0, .R0 = R0, .N_R = 2000, .N_Q = 2000};
    rb_akf *akf;
    rb_err err;
    cr_assert_eq(rb_akf_create(&o, &akf, &err), RB_OK, "%s", err.msg);
    rb_rng rng;
    rb_rng_seed(&rng, 2024);
    const int N = 300000, tail = N / 2;
    double x = 0, sq = 0, sr[2] = {0, 0};
    for (int k = 0; k < N; k++) {
        x += sqrt(Qt) * rb_rng_normal(&rng);
        double z[2] = {x + sqrt(Rt[0]) * rb_rng_normal(&rng), x + sqrt(Rt[1]) * rb_rng_normal(&rng)};
        cr_assert_eq(rb_akf_step(akf, NULL, z, &err), RB_OK, "%s", err.msg);
        if (k >= N - tail) {
            sq += rb_akf_Q(akf)[0];
            sr[0] += rb_akf_R(akf)[0];
            sr[1] += rb_akf_R(akf)[1];
        }
    }
    *q_ratio = sq / tail / Qt;
    r_ratio[0] = sr[0] / tail / Rt[0];
    r_ratio[1] = sr[1] / tail / Rt[1];
    rb_akf_free(akf);
}

/* N_R = N_Q = 2000, 300000 samples, averages over the last 150000: R within 5 %, Q within 25 % of the
 * truth from guesses 10x too large, 10x too small, and 10x off in opposite directions. */
Test(filters_akf, recovers_true_noise_covariances_ten_times_off)
{
    const double start[4][2] = {{10, 10}, {0.1, 0.1}, {10, 0.1}, {0.1, 10}};
    for (int c = 0; c < 4; c++) {
        double q, r[2];
        redundant_random_walk(start[c][0], start[c][1], &q, r);
        cr_log_info("AKF start Q x%g R x%g: tail Q/Q_true %.3f, R/R_true %.3f %.3f", start[c][0], start[c][1], q, r[0],
                    r[1]);
        cr_assert(fabs(q - 1) <= 0.25, "start %d: Q/Q_true %.3f", c, q);
        cr_assert(fabs(r[0] - 1) <= 0.05 && fabs(r[1] - 1) <= 0.05, "start %d: R/R_true %.3f %.3f", c, r[0], r[1]);
    }
}

Test(filters_akf, one_sensor_per_quantity_fixes_only_the_innovation_covariance)
{
    /* The documented limit: a random walk measured once. The rules drive C P^- C^T + R to the variance of
     * the innovations about their running mean but cannot split it into Q and R: here Q collapses towards
     * its floor, and with it the filter lags (the innovations' mean square is then about 2.2 times that). */
    const double A = 1, C = 1, P0 = 1, Qt = 0.01, Rt = 1, Q0 = 10 * Qt, R0 = 10 * Rt;
    rb_akf_opts o = {.n = 1, .m = 1, .A = &A, .C = &C, .P0 = &P0, .Q0 = &Q0, .R0 = &R0, .N_R = 200, .N_Q = 200};
    rb_akf *akf;
    rb_err err;
    cr_assert_eq(rb_akf_create(&o, &akf, &err), RB_OK, "%s", err.msg);
    rb_rng rng;
    rb_rng_seed(&rng, 5);
    double x = 0, s_dev = 0, s_pred = 0, ebar = 0;
    const int N = 100000;
    for (int k = 0; k < N; k++) {
        x += sqrt(Qt) * rb_rng_normal(&rng);
        double z = x + sqrt(Rt) * rb_rng_normal(&rng);
        cr_assert_eq(rb_akf_step(akf, NULL, &z, &err), RB_OK, "%s", err.msg);
        if (k >= N / 2) {
            rb_filter_diag d;
            double S;
            rb_filter_get_diag(rb_akf_filter(akf), &d);
            cr_assert_eq(rb_filter_innovation_cov(rb_akf_filter(akf), &S, &err), RB_OK);
            double e = d.innovation[0];
            ebar = (199.0 * ebar + e) / 200.0; /* (2.31) with N_R = 200 */
            s_dev += (e - ebar) * (e - ebar) * 200.0 / 199.0;
            s_pred += S;
        }
    }
    cr_assert(rb_akf_Q(akf)[0] < 0.1 * Qt, "Q %.3g is not identified", rb_akf_Q(akf)[0]);
    cr_assert(fabs(s_pred / s_dev - 1) < 0.05, "predicted vs observed innovation variance %.4f", s_pred / s_dev);
    rb_akf_free(akf);
}

Test(filters_akf, floors_keep_the_covariances_positive)
{
    /* Noise-free measurements of a constant: the residuals vanish, |diag(.)| would drive R and Q to 0. */
    const double A = 1, C[2] = {1, 1}, P0 = 1, Q0 = 1e-3, R0[2] = {1e-2, 1e-2}, qf = 1e-8, rf[2] = {1e-6, 2e-6};
    rb_akf_opts o = {.n = 1,
                     .m = 2,
                     .A = &A,
                     .C = C,
                     .P0 = &P0,
                     .Q0 = &Q0,
                     .R0 = R0,
                     .N_R = 5,
                     .N_Q = 5,
                     .q_floor = &qf,
                     .r_floor = rf};
    rb_akf *akf;
    rb_err err;
    cr_assert_eq(rb_akf_create(&o, &akf, &err), RB_OK, "%s", err.msg);
    for (int k = 0; k < 2000; k++) {
        double z[2] = {3.0, 3.0};
        cr_assert_eq(rb_akf_step(akf, NULL, z, &err), RB_OK, "k %d: %s", k, err.msg);
    }
    cr_assert_eq(rb_akf_R(akf)[0], 1e-6);
    cr_assert_eq(rb_akf_R(akf)[1], 2e-6);
    cr_assert_eq(rb_akf_Q(akf)[0], 1e-8);
    cr_assert(fabs(rb_akf_x(akf)[0] - 3.0) < 1e-9);
    cr_assert(rb_akf_P(akf)[0] > 0);
    rb_akf_free(akf);
}

Test(filters_akf, missing_elements_leave_their_statistics_alone)
{
    double P0[4] = {1, 0, 0, 1}, Q0[2] = {1e-4, 1e-2}, R0[3] = {0.01, 0.04, 0.2};
    rb_akf_opts o = {.n = 2, .m = 3, .A = CV_A, .C = CV_C, .P0 = P0, .Q0 = Q0, .R0 = R0, .N_R = 20, .N_Q = 20};
    rb_akf *akf;
    rb_err err;
    cr_assert_eq(rb_akf_create(&o, &akf, &err), RB_OK, "%s", err.msg);
    double z[3] = {0.1, 0.12, 0.5};
    cr_assert_eq(rb_akf_step(akf, NULL, z, &err), RB_OK);
    double R1 = rb_akf_R(akf)[1], Q[2] = {rb_akf_Q(akf)[0], rb_akf_Q(akf)[1]};
    double z2[3] = {0.11, NAN, 0.4};
    cr_assert_eq(rb_akf_step(akf, NULL, z2, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_akf_R(akf)[1], R1, "the missing element's R is kept");
    cr_assert_neq(rb_akf_R(akf)[0], R0[0]);
    double none[3] = {NAN, NAN, NAN};
    Q[0] = rb_akf_Q(akf)[0], Q[1] = rb_akf_Q(akf)[1];
    cr_assert_eq(rb_akf_step(akf, NULL, none, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_akf_Q(akf)[0], Q[0], "no measurement: Q kept");
    cr_assert_eq(rb_akf_Q(akf)[1], Q[1]);
    rb_filter_diag d;
    rb_filter_get_diag(rb_akf_filter(akf), &d);
    cr_assert_eq(d.status[0], RB_MEAS_MISSING);
    rb_akf_free(akf);
}

Test(filters_akf, inputs_drive_the_prediction)
{
    /* x_k = x_{k-1} + 0.1 u: with a tiny P0 and huge R the state follows the input alone. */
    const double A = 1, B = 0.1, C = 1, P0 = 1e-12, Q0 = 1e-12, R0 = 1e6;
    rb_akf_opts o = {
        .n = 1, .m = 1, .nu = 1, .A = &A, .B = &B, .C = &C, .P0 = &P0, .Q0 = &Q0, .R0 = &R0, .N_R = 1e9, .N_Q = 1e9};
    rb_akf *akf;
    rb_err err;
    cr_assert_eq(rb_akf_create(&o, &akf, &err), RB_OK, "%s", err.msg);
    for (int k = 0; k < 10; k++) {
        double u = 2.0, z = 0.0;
        cr_assert_eq(rb_akf_step(akf, &u, &z, &err), RB_OK);
    }
    cr_assert(fabs(rb_akf_x(akf)[0] - 2.0) < 1e-9, "x %.17g", rb_akf_x(akf)[0]);
    rb_akf_free(akf);
}

Test(filters_akf, rejects_bad_options)
{
    const double A = 1, C = 1, P0 = 1, Q0 = 1, R0 = 1, bad = -1, notpd = -1;
    rb_akf *akf = (rb_akf *)&akf;
    rb_err err;
    rb_akf_opts o = {.n = 1, .m = 1, .A = &A, .C = &C, .P0 = &P0, .Q0 = &Q0, .R0 = &R0, .N_R = 1, .N_Q = 10};
    cr_assert_eq(rb_akf_create(&o, &akf, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "N_R"), "%s", err.msg);
    cr_assert_null(akf);
    o.N_R = 10;
    o.R0 = &bad;
    cr_assert_eq(rb_akf_create(&o, &akf, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "R0[0]"), "%s", err.msg);
    o.R0 = &R0;
    o.r_floor = &bad;
    cr_assert_eq(rb_akf_create(&o, &akf, &err), RB_EINVAL);
    o.r_floor = NULL;
    o.C = NULL;
    cr_assert_eq(rb_akf_create(&o, &akf, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "C is required"), "%s", err.msg);
    o.C = &C;
    o.P0 = &notpd;
    cr_assert_eq(rb_akf_create(&o, &akf, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "akf: "), "%s", err.msg);
    cr_assert_null(akf);
}

Test(filters_akf, a_failed_step_changes_nothing)
{
    const double A = 1, C = 1, P0 = 1, Q0 = 0.1, R0 = 0.5;
    rb_akf_opts o = {.n = 1, .m = 1, .A = &A, .C = &C, .P0 = &P0, .Q0 = &Q0, .R0 = &R0, .N_R = 10, .N_Q = 10};
    rb_akf *akf;
    rb_err err;
    cr_assert_eq(rb_akf_create(&o, &akf, &err), RB_OK, "%s", err.msg);
    double z = 1.0;
    cr_assert_eq(rb_akf_step(akf, NULL, &z, &err), RB_OK);
    double x = rb_akf_x(akf)[0], P = rb_akf_P(akf)[0], q = rb_akf_Q(akf)[0], r = rb_akf_R(akf)[0];
    rb_filter_diag d0, d1;
    rb_filter_get_diag(rb_akf_filter(akf), &d0);
    z = INFINITY;
    cr_assert_eq(rb_akf_step(akf, NULL, &z, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "akf: "), "%s", err.msg);
    rb_filter_get_diag(rb_akf_filter(akf), &d1);
    cr_assert_eq(rb_akf_x(akf)[0], x);
    cr_assert_eq(rb_akf_P(akf)[0], P);
    cr_assert_eq(rb_akf_Q(akf)[0], q);
    cr_assert_eq(rb_akf_R(akf)[0], r);
    cr_assert_eq(d1.step, d0.step, "step counter restored");
    z = 1.1;
    cr_assert_eq(rb_akf_step(akf, NULL, &z, &err), RB_OK, "%s", err.msg);
    rb_akf_free(akf);
}

Test(filters_akf, allocation_failures_leave_nothing_behind)
{
    double P0[4] = {1, 0, 0, 1}, Q0[2] = {1e-4, 1e-2}, R0[3] = {0.01, 0.04, 0.2};
    rb_akf_opts o = {.n = 2, .m = 3, .A = CV_A, .C = CV_C, .P0 = P0, .Q0 = Q0, .R0 = R0, .N_R = 20, .N_Q = 20};
    rb_err err;
    int rc = RB_ENOMEM;
    long n;
    for (n = 0; n < 100 && rc != RB_OK; n++) {
        rb_akf *akf = NULL;
        rb_alloc_fail_after(n);
        rc = rb_akf_create(&o, &akf, &err);
        rb_alloc_fail_after(-1);
        if (rc == RB_OK)
            rb_akf_free(akf);
        else
            cr_assert(rc == RB_ENOMEM && akf == NULL, "allocation %ld: %d %s", n, rc, err.msg);
    }
    cr_assert_eq(rc, RB_OK);
    cr_assert(n > 2, "%ld", n);
}
