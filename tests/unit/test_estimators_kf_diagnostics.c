/* kf_derivative's diagnostic outputs (innovation, NIS, var) checked by hand, and the stage in pipelines. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/pipeline.h"
#include "roboest/training.h"
#include "roboest/filters.h"

#include "estimators_kf_support.h"

/* ---- diagnostics ---------------------------------------------------------------------------------------- */

/* Width of port j for n elements. */
static size_t port_width(int j, size_t n) { return j == OUT_VAR ? 3 * n : n; }

/* Every port of the stage over a whole run, sample-major; each step is checked to allocate nothing. */
typedef struct stage_run {
    double *port[N_OUT];
} stage_run;

static void stage_run_all(stage_h *h, const double *t, const double *zs, size_t n_samples, size_t n, stage_run *run)
{
    for (int j = 0; j < N_OUT; j++)
        cr_assert_not_null(run->port[j] = malloc(n_samples * port_width(j, n) * sizeof(double)));
    for (size_t k = 0; k < n_samples; k++) {
        const double *pin[1] = {zs + k * n};
        double *pout[N_OUT];
        for (int j = 0; j < N_OUT; j++)
            pout[j] = run->port[j] + k * port_width(j, n);
        rb_err err;
        rb_alloc_fail_after(0);
        int rc = rb_stage_kf_derivative.step(h->state, k, t[k], pin, pout, &err);
        long allocs = rb_alloc_fail_after(-1);
        cr_assert_eq(rc, RB_OK, "k %zu: %s", k, err.msg);
        cr_assert_eq(allocs, 0, "step allocates nothing");
    }
}

static void stage_run_free(stage_run *run)
{
    for (int j = 0; j < N_OUT; j++)
        free(run->port[j]);
}

/* a equals b within rel * max(|b|, floor), or both are NaN */
static bool near(double got, double want, double rel, double floor)
{
    if (isnan(got) || isnan(want))
        return isnan(got) && isnan(want);
    return fabs(got - want) <= rel * fmax(fabs(want), floor);
}

/* The stage's diagnostics against the same filter run by hand through the filters API (rb_kf_create, then
 * per sample: rebuild F and Q for the actual interval, rb_filter_predict, read the predicted x and P,
 * rb_filter_update), with the innovation z - x^-[0] and NIS nu^2 / (P^-[0][0] + r) computed from the
 * prediction rather than read from rb_filter_get_diag. Also, from the stage's own outputs alone: the
 * innovation is z_k - (x + dT x_dot + dT^2/2 x_ddot)_{k-1}. Two elements with different q and r on a
 * jittered clock (F and Q change every sample); element 1 starts at sample 5 and misses sample 700. */
Test(estimators_kf, innovation_nis_and_var_match_the_filter_run_by_hand)
{
    enum { N = 3000 };
    const char *names[] = {"r_knee", "r_ankle"}, *units[] = {"rad", "N.m"};
    const double q[2] = {50, 2e3}, r[2] = {1e-6, 4e-6}, qd[3] = {0, 0, 0}, p0[3] = {1, 1e2, 1e4};
    static double t[N], zz[2 * N];
    rb_rng rng;
    rb_rng_seed(&rng, 11);
    for (int k = 0; k < N; k++) {
        t[k] = 0.001 * k + 0.0002 * sin(1.3 * k);
        zz[2 * k] = sin(3 * t[k]) + 1e-3 * rb_rng_normal(&rng);
        zz[2 * k + 1] = k < 5 || k == 700 ? NAN : t[k] * t[k] + 2e-3 * rb_rng_normal(&rng);
    }
    stage_h h;
    rb_err err;
    cr_assert_eq(stage_create(&h, "jerk", q, 2, qd, false, r, 2, 2, names, units, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(h.out[OUT_INNOVATION].width, 2);
    cr_assert_str_eq(h.out[OUT_INNOVATION].names[1], "r_ankle");
    cr_assert_str_eq(h.out[OUT_INNOVATION].units[1], "N.m");
    cr_assert_eq(h.out[OUT_NIS].width, 2);
    cr_assert_str_eq(h.out[OUT_NIS].units[0], "1");
    const rb_port *vp = &h.out[OUT_VAR];
    cr_assert_eq(vp->width, 6);
    const char *var_names[] = {"r_knee/x",  "r_knee/x_dot",  "r_knee/x_ddot",
                               "r_ankle/x", "r_ankle/x_dot", "r_ankle/x_ddot"};
    const char *var_units[] = {"rad^2", "rad^2/s^2", "rad^2/s^4", "(N.m)^2", "(N.m)^2/s^2", "(N.m)^2/s^4"};
    for (int i = 0; i < 6; i++) {
        cr_assert_str_eq(vp->names[i], var_names[i]);
        cr_assert_str_eq(vp->units[i], var_units[i]);
    }
    stage_run run;
    stage_run_all(&h, t, zz, N, 2, &run);
    rb_stage_kf_derivative.destroy(h.state);
    const double *X = run.port[OUT_X], *V = run.port[OUT_X_DOT], *A = run.port[OUT_X_DDOT];
    const double *inno = run.port[OUT_INNOVATION], *nis = run.port[OUT_NIS], *var = run.port[OUT_VAR];

    for (int e = 0; e < 2; e++) {
        rb_kfd_params par = {.noise = RB_KFD_JERK, .q = q[e], .r = r[e], .p0 = {p0[0], p0[1], p0[2]}};
        double F[9], Q[9], H[3] = {1, 0, 0}, R = r[e], P0[9] = {p0[0], 0, 0, 0, p0[1], 0, 0, 0, p0[2]};
        rb_kfd_model(&par, 0.001, F, Q);
        rb_filter_opts o;
        rb_filter_opts_init(&o);
        o.n = 3, o.m = 1, o.P0 = P0, o.Q = Q, o.R = &R, o.F = F, o.H = H;
        rb_filter *f;
        cr_assert_eq(rb_kf_create(&o, &f, &err), RB_OK, "%s", err.msg);
        int start = e ? 5 : 0;
        double max_inno_err = 0, max_pred_err = 0;
        for (int k = 0; k < N; k++) {
            double z_k = zz[2 * k + e], want_inno = NAN, want_nis = NAN;
            if (k < start) {
                cr_assert(isnan(X[2 * k + e]) && isnan(inno[2 * k + e]) && isnan(nis[2 * k + e]));
                cr_assert(isnan(var[6 * k + 3 * e]) && isnan(var[6 * k + 3 * e + 2]));
                continue;
            }
            if (k == start) {
                const double x0[3] = {z_k, 0, 0};
                cr_assert_eq(rb_filter_set_state(f, x0, P0, &err), RB_OK);
            } else {
                double dt = t[k] - t[k - 1];
                rb_kfd_model(&par, dt, F, Q);
                rb_filter_mats m = rb_filter_get_mats(f);
                for (size_t i = 0; i < 3; i++)
                    for (size_t j = 0; j < 3; j++) {
                        *rb_mat_at(&m.F, i, j) = F[3 * i + j];
                        *rb_mat_at(&m.Q, i, j) = Q[3 * i + j];
                    }
                cr_assert_eq(rb_filter_predict(f, NULL, dt, &err), RB_OK, "%s", err.msg);
                if (!isnan(z_k)) {
                    want_inno = z_k - rb_filter_x(f)[0];
                    want_nis = want_inno * want_inno / (rb_filter_P(f)[0] + r[e]);
                    /* the identity from the stage's previous outputs only */
                    int j = 2 * (k - 1) + e;
                    double pred = X[j] + dt * V[j] + dt * dt / 2 * A[j];
                    max_pred_err = fmax(max_pred_err, fabs(inno[2 * k + e] - (z_k - pred)));
                }
            }
            cr_assert_eq(rb_filter_update(f, &z_k, &err), RB_OK, "%s", err.msg);
            const double *xs = rb_filter_x(f), *P = rb_filter_P(f);
            cr_assert(near(inno[2 * k + e], want_inno, 1e-9, 1e-6), "k %d element %d: innovation %.17g vs %.17g", k, e,
                      inno[2 * k + e], want_inno);
            cr_assert(near(nis[2 * k + e], want_nis, 1e-9, 1e-12), "k %d element %d: NIS %.17g vs %.17g", k, e,
                      nis[2 * k + e], want_nis);
            if (!isnan(want_inno))
                max_inno_err = fmax(max_inno_err, fabs(inno[2 * k + e] - want_inno));
            for (int c = 0; c < 3; c++)
                cr_assert(near(var[6 * k + 3 * e + c], P[4 * c], 1e-12, 0), "k %d element %d: var %d %.17g vs %.17g", k,
                          e, c, var[6 * k + 3 * e + c], P[4 * c]);
            cr_assert(near(X[2 * k + e], xs[0], 1e-12, 1e-12) && near(V[2 * k + e], xs[1], 1e-12, 1e-9));
        }
        cr_log_info("element %d: innovation vs the hand run %.3g, vs the prediction from the outputs %.3g", e,
                    max_inno_err, max_pred_err);
        cr_assert(max_pred_err < 1e-12, "innovation vs z - F s_{k-1}: %.3g", max_pred_err);
        /* the start: nothing predicted; P = diag(p0) updated with z_0 changes only var_x */
        int s0 = 2 * start + e;
        cr_assert(isnan(inno[s0]) && isnan(nis[s0]));
        cr_assert(near(var[6 * start + 3 * e], p0[0] * r[e] / (p0[0] + r[e]), 1e-12, 0));
        cr_assert(near(var[6 * start + 3 * e + 1], p0[1], 1e-14, 0));
        cr_assert(near(var[6 * start + 3 * e + 2], p0[2], 1e-14, 0));
        rb_filter_free(f);
    }
    /* the skipped sample: no innovation, and the prediction alone only adds uncertainty */
    cr_assert(isnan(inno[2 * 700 + 1]) && isnan(nis[2 * 700 + 1]) && isfinite(inno[2 * 700]));
    for (int c = 0; c < 3; c++)
        cr_assert(var[6 * 700 + 3 + c] > var[6 * 699 + 3 + c], "var %d grows over the skipped sample", c);
    stage_run_free(&run);
}

/* White jerk of spectral density q integrated over dt: w = sqrt(q dt) D L u with u ~ N(0, I_3),
 * D = diag(dt^2, dt, 1) and L the Cholesky factor of M = [[1/20, 1/8, 1/6], [1/8, 1/3, 1/2], [1/6, 1/2, 1]],
 * so that cov(w) = q dt D M D is the model's Q (checked against rb_kfd_model). */
static void jerk_noise_factor(double q, double dt, double G[9])
{
    const double M[9] = {1.0 / 20, 1.0 / 8, 1.0 / 6, 1.0 / 8, 1.0 / 3, 1.0 / 2, 1.0 / 6, 1.0 / 2, 1};
    double L[9] = {0};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j <= i; j++) {
            double m = M[3 * i + j];
            for (int k = 0; k < j; k++)
                m -= L[3 * i + k] * L[3 * j + k];
            L[3 * i + j] = i == j ? sqrt(m) : m / L[3 * j + j];
        }
    const double d[3] = {dt * dt, dt, 1};
    for (int i = 0; i < 9; i++)
        G[i] = sqrt(q * dt) * d[i / 3] * L[i];
    rb_kfd_params par = {.noise = RB_KFD_JERK, .q = q, .r = 1, .p0 = {1, 1, 1}};
    double F[9], Q[9];
    rb_kfd_model(&par, dt, F, Q);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double c = 0;
            for (int k = 0; k < 3; k++)
                c += G[3 * i + k] * G[3 * j + k];
            cr_assert(fabs(c - Q[3 * i + j]) <= 1e-12 * fabs(Q[3 * i + j]), "G G^T = Q at %d %d", i, j);
        }
}

/* Mean NIS after `from` of one element's filter (q, r) over the signal. */
static double mean_nis(const double *t, const double *zz, size_t n_samples, size_t from, double q, double r,
                       double *above)
{
    const double r1[1] = {r}, q1[1] = {q}, qd[3] = {0, 0, 0};
    stage_h h;
    rb_err err;
    cr_assert_eq(stage_create(&h, "jerk", q1, 1, qd, false, r1, 1, 1, NULL, NULL, &err), RB_OK, "%s", err.msg);
    stage_run run;
    stage_run_all(&h, t, zz, n_samples, 1, &run);
    rb_stage_kf_derivative.destroy(h.state);
    double s = 0;
    size_t n_above = 0;
    for (size_t k = from; k < n_samples; k++) {
        s += run.port[OUT_NIS][k];
        n_above += run.port[OUT_NIS][k] > 3.841458820694124; /* chi-square(1) 95 % quantile */
    }
    stage_run_free(&run);
    if (above)
        *above = (double)n_above / (double)(n_samples - from);
    return s / (double)(n_samples - from);
}

/* Data that follow the filter's own model (s_k = F s_{k-1} + w_k, w_k ~ N(0, Q) with q = 100 unit^2/s^5, z_k =
 * x_k + v_k, v_k ~ N(0, r = 1e-6), 1 kHz, 40 s): with the same q and r the filter is the optimal one, its
 * innovations are white with variance S_k, and NIS is chi-square with 1 degree of freedom. Over the
 * M = 38 000 samples after a 2 s warm-up the mean NIS has standard deviation sqrt(2 / M) = 0.0073.
 * Asserted: |mean NIS - 1| < 0.05 (about 7 sigma) and the share of NIS above the 95 % quantile within
 * 0.05 +- 0.01 (its sigma is 0.0011). The same data through filters with r 10x too small or too large
 * move the mean well outside (asserted > 2 and < 0.5): the check has teeth. */
Test(estimators_kf, nis_averages_one_when_the_model_fits)
{
    enum { N = 40000, WARMUP = 2000 };
    const double q = 100, r = 1e-6, dt = 0.001;
    static double t[N], zz[N];
    double G[9], s[3] = {0.3, -0.5, 2.0};
    jerk_noise_factor(q, dt, G);
    rb_rng rng;
    rb_rng_seed(&rng, 2024);
    for (int k = 0; k < N; k++) {
        t[k] = dt * k;
        if (k > 0) {
            double u[3] = {rb_rng_normal(&rng), rb_rng_normal(&rng), rb_rng_normal(&rng)};
            double next[3] = {s[0] + dt * s[1] + dt * dt / 2 * s[2], s[1] + dt * s[2], s[2]};
            for (int i = 0; i < 3; i++)
                s[i] = next[i] + G[3 * i] * u[0] + G[3 * i + 1] * u[1] + G[3 * i + 2] * u[2];
        }
        zz[k] = s[0] + sqrt(r) * rb_rng_normal(&rng);
    }
    double above, fit = mean_nis(t, zz, N, WARMUP, q, r, &above);
    double small_r = mean_nis(t, zz, N, WARMUP, q, r / 10, NULL), large_r = mean_nis(t, zz, N, WARMUP, q, r * 10, NULL);
    cr_log_info("mean NIS: %.4f (%.4f above the 95 %% quantile); r / 10: %.3f; r x 10: %.3f", fit, above, small_r,
                large_r);
    cr_assert(fabs(fit - 1) < 0.05, "mean NIS %.4f", fit);
    cr_assert(fabs(above - 0.05) < 0.01, "share above the 95 %% quantile %.4f", above);
    cr_assert(small_r > 2 && large_r < 0.5, "mistuned: %.3f, %.3f", small_r, large_r);
}

/* P does not depend on the data (linear KF, no sample skipped), so var must follow the Riccati recursion
 * computed here in plain C in its textbook form (P^- = F P F^T + Q, S = P^-_00 + r, K = P^-_{:,0} / S,
 * P = P^- - K S K^T; the filter uses the Joseph form through BLAS): within 1e-7 relative at every sample
 * (the two forms round differently and P's condition number is about 1e8; the largest difference seen is
 * 5.5e-9). It starts at diag(p0) updated with z_0 (var_x = p0_x r / (p0_x + r), the others p0), shrinks
 * by more than two orders of magnitude (q 1e3, r 1e-6, 1 kHz: 1.8e-7, 2.8e-3, 19.5 from 1, 1e2, 1e4) and
 * is constant to 1e-12 over the last second. */
Test(estimators_kf, var_shrinks_from_p0_to_the_riccati_steady_state)
{
    enum { N = 5000 };
    const double q = 1e3, r = 1e-6, p0[3] = {1, 1e2, 1e4};
    static double t[N], zz[N];
    rb_rng rng;
    rb_rng_seed(&rng, 5);
    for (int k = 0; k < N; k++) {
        t[k] = 0.001 * k;
        zz[k] = cos(2 * t[k]) + 1e-3 * rb_rng_normal(&rng);
    }
    const double q1[1] = {q}, r1[1] = {r}, qd[3] = {0, 0, 0};
    stage_h h;
    rb_err err;
    cr_assert_eq(stage_create(&h, "jerk", q1, 1, qd, false, r1, 1, 1, NULL, NULL, &err), RB_OK, "%s", err.msg);
    cr_assert_str_eq(h.out[OUT_VAR].names[1], "0/x_dot", "unnamed elements are numbered");
    cr_assert_str_eq(h.out[OUT_VAR].units[0], "", "unknown unit stays unknown");
    stage_run run;
    stage_run_all(&h, t, zz, N, 1, &run);
    rb_stage_kf_derivative.destroy(h.state);
    const double *var = run.port[OUT_VAR];

    double P[9] = {p0[0], 0, 0, 0, p0[1], 0, 0, 0, p0[2]}, worst = 0;
    rb_kfd_params par = {.noise = RB_KFD_JERK, .q = q, .r = r, .p0 = {p0[0], p0[1], p0[2]}};
    for (int k = 0; k < N; k++) {
        if (k > 0) { /* P = F P F^T + Q */
            double F[9], Q[9], FP[9];
            rb_kfd_model(&par, t[k] - t[k - 1], F, Q);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) {
                    FP[3 * i + j] = 0;
                    for (int l = 0; l < 3; l++)
                        FP[3 * i + j] += F[3 * i + l] * P[3 * l + j];
                }
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) {
                    double pij = Q[3 * i + j];
                    for (int l = 0; l < 3; l++)
                        pij += FP[3 * i + l] * F[3 * j + l];
                    P[3 * i + j] = pij;
                }
        }
        double S = P[0] + r, K[3] = {P[0] / S, P[3] / S, P[6] / S};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                P[3 * i + j] -= K[i] * S * K[j];
        for (int c = 0; c < 3; c++) {
            double d = fabs(var[3 * k + c] - P[4 * c]) / P[4 * c];
            worst = fmax(worst, d);
            cr_assert(d < 1e-7, "k %d var %d: %.17g vs %.17g", k, c, var[3 * k + c], P[4 * c]);
        }
    }
    cr_log_info("var vs the textbook Riccati recursion: largest relative difference %.3g", worst);
    cr_assert(fabs(var[0] - p0[0] * r / (p0[0] + r)) <= 1e-12 * var[0]);
    cr_assert(var[1] == p0[1] && var[2] == p0[2], "the first update only informs x");
    const double *last = var + 3 * (N - 1), *earlier = var + 3 * (N - 1001);
    for (int c = 0; c < 3; c++) {
        cr_log_info("var %d: p0 %g, steady state %.6g", c, p0[c], last[c]);
        cr_assert(last[c] < 1e-2 * p0[c], "var %d shrinks by orders of magnitude: %g", c, last[c]);
        cr_assert(fabs(last[c] - earlier[c]) <= 1e-12 * last[c], "var %d is steady: %.17g vs %.17g", c, last[c],
                  earlier[c]);
    }
    for (int k = 0; k < N; k++)
        cr_assert(var[3 * k] <= p0[0], "var_x never exceeds p0 (k %d)", k);
    stage_run_free(&run);
}

/* Through the pipeline: the schema's defaults and arrays as the loader fills them, on an in-memory log. */
Test(estimators_kf, runs_in_a_pipeline)
{
    const char *cfg =
        "{\"clock\": {\"rate\": 500}, \"signals\": {\"q\": {\"channel\": \"pos\"}, \"dq\": "
        "{\"channel\": \"vel\"}},\n"
        " \"stages\": [{\"id\": \"kf\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"},\n"
        "   \"out\": {\"x\": \"qf\", \"x_dot\": \"qd\", \"x_ddot\": \"qdd\"}, \"params\": {\"q\": [1e3, 1e4]}}],\n"
        " \"metrics\": [{\"estimate\": \"qd\", \"reference\": \"dq\", \"window\": [1, 4]}]}";
    rb_registry *reg;
    rb_pipeline *p;
    rb_log *log;
    rb_channel *pos, *vel;
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_pipeline_load_text(cfg, strlen(cfg), "kf.json", NULL, reg, &p, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    cr_assert_eq(rb_log_add_channel(log, "pos", 2001, 2, &pos, &err), RB_OK);
    cr_assert_eq(rb_log_add_channel(log, "vel", 2001, 2, &vel, &err), RB_OK);
    for (size_t k = 0; k <= 2000; k++) {
        double t = 0.002 * (double)k;
        pos->time[k] = vel->time[k] = t;
        pos->data[2 * k] = sin(t), pos->data[2 * k + 1] = 0.1 * sin(5 * t);
        vel->data[2 * k] = cos(t), vel->data[2 * k + 1] = 0.5 * cos(5 * t);
    }
    rb_run_result *res;
    cr_assert_eq(rb_pipeline_run_log(p, log, NULL, 0, NULL, &res, &err), RB_OK, "%s", err.msg);
    cr_assert_not_null(res->report);
    for (size_t i = 0; i < res->report->n_rows; i++)
        cr_assert(res->report->rows[i].stats.rmse < 2e-3, "%s rmse %g", res->report->rows[i].element,
                  res->report->rows[i].stats.rmse);
    rb_run_result_free(res);
    rb_log_free(log);
    rb_pipeline_free(p);
    const char *bad =
        "{\"clock\": {\"rate\": 500}, \"signals\": {\"q\": {\"channel\": \"pos\"}},\n"
        " \"stages\": [{\"id\": \"kf\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"},\n"
        "   \"out\": {\"x\": \"qf\", \"x_dot\": \"qd\", \"x_ddot\": \"qdd\"}, \"params\": {\"r\": [0]}}]}";
    cr_assert_eq(rb_pipeline_load_text(bad, strlen(bad), "bad.json", NULL, reg, &p, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "stages[0].params.r"), "%s", err.msg);
    rb_registry_free(reg);
}

/* Wiring the diagnostics changes nothing else: the same log through the stage with only x_dot wired, and with
 * x_dot and every diagnostic wired and written, gives bit-identical velocities; the diagnostics arrive with
 * their widths, names and units. */
Test(estimators_kf, wiring_the_diagnostics_leaves_the_estimates_unchanged)
{
    const char *tmpl = "{\"clock\": {\"rate\": 500}, \"signals\": {\"q\": {\"channel\": \"pos\"}},\n"
                       " \"stages\": [{\"id\": \"kf\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"},\n"
                       "   \"out\": {\"x_dot\": \"qd\"%s}}],\n"
                       " \"outputs\": [{\"path\": \"qd.csv\", \"signals\": [\"qd\"%s]}]}";
    char *bare = rb_asprintf(tmpl, "", ""),
         *diag = rb_asprintf(tmpl, ", \"innovation\": \"nu\", \"nis\": \"nis\", \"var\": \"P\"",
                             ", \"nu\", \"nis\", \"P\"");
    rb_registry *reg;
    rb_pipeline *p1, *p2;
    rb_log *log;
    rb_channel *pos;
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_pipeline_load_text(bare, strlen(bare), "bare.json", NULL, reg, &p1, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_pipeline_load_text(diag, strlen(diag), "diag.json", NULL, reg, &p2, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(p1->n_signal_table, 2, "q and qd: the five unwired ports are no signals");
    cr_assert_eq(p2->n_signal_table, 5);
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    cr_assert_eq(rb_log_add_channel(log, "pos", 1001, 2, &pos, &err), RB_OK);
    rb_rng rng;
    rb_rng_seed(&rng, 9);
    for (size_t k = 0; k <= 1000; k++) {
        double t = 0.002 * (double)k;
        pos->time[k] = t;
        pos->data[2 * k] = sin(t) + 1e-3 * rb_rng_normal(&rng);
        pos->data[2 * k + 1] = 0.1 * sin(5 * t) + 1e-3 * rb_rng_normal(&rng);
    }
    rb_run_result *r1, *r2;
    cr_assert_eq(rb_pipeline_run_log(p1, log, NULL, 0, NULL, &r1, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_pipeline_run_log(p2, log, NULL, 0, NULL, &r2, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(r1->n_recorded, 1);
    const rb_run_signal *v1 = rb_run_result_signal(r1, "qd"), *v2 = rb_run_result_signal(r2, "qd");
    cr_assert_eq(memcmp(v1->data, v2->data, r1->clock.n * 2 * sizeof(double)), 0);
    const rb_run_signal *nu = rb_run_result_signal(r2, "nu"), *nis = rb_run_result_signal(r2, "nis"),
                        *P = rb_run_result_signal(r2, "P");
    cr_assert(nu->width == 2 && nis->width == 2 && P->width == 6);
    cr_assert_str_eq(P->names[5], "1/x_ddot");
    cr_assert_str_eq(nis->units[1], "1");
    cr_assert(isnan(nu->data[0]) && isnan(nis->data[1]), "nothing predicted at the first sample");
    for (size_t k = 1; k < r2->clock.n; k++)
        for (size_t i = 0; i < 2; i++)
            cr_assert(isfinite(nu->data[2 * k + i]) && nis->data[2 * k + i] >= 0);
    rb_run_result_free(r1);
    rb_run_result_free(r2);
    rb_log_free(log);
    rb_pipeline_free(p1);
    rb_pipeline_free(p2);
    rb_registry_free(reg);
    rb_free(bare);
    rb_free(diag);
}

/* The shipped configs run as they are on the shipped log (their kf_derivative stage leaves the diagnostics
 * unwired), and wiring the demo's NIS into its output changes none of its estimates or metrics. */
Test(estimators_kf, shipped_configs_run_unchanged)
{
    char *demo_path = rb_asprintf("%s/configs/demo.json", RB_SOURCE);
    char *min_path = rb_asprintf("%s/configs/minimal.json", RB_SOURCE);
    char *log_path = rb_asprintf("%s/datasets/demo_arm.mat", RB_SOURCE);
    rb_registry *reg;
    rb_pipeline *demo, *minimal, *wired;
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_pipeline_load(demo_path, reg, &demo, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_pipeline_load(min_path, reg, &minimal, &err), RB_OK, "%s", err.msg);
    const rb_config_stage *kf = NULL;
    for (size_t s = 0; s < demo->n_stages; s++)
        if (demo->stages[s].type == &rb_stage_kf_derivative)
            kf = &demo->stages[s];
    cr_assert_not_null(kf);
    for (size_t j = OUT_INNOVATION; j < N_OUT; j++)
        cr_assert(kf->out[j] == NULL && kf->out_signal[j] == SIZE_MAX, "port %s is unwired",
                  rb_stage_kf_derivative.outputs[j]);

    static char text[1 << 14];
    FILE *fp = fopen(demo_path, "rb");
    cr_assert_not_null(fp, "%s", demo_path);
    size_t len = fread(text, 1, sizeof text - 1, fp);
    fclose(fp);
    cr_assert(len > 0 && len < sizeof text - 1);
    text[len] = '\0';
    char *edited;
    const char *ports = "\"x_ddot\": \"qdd_kf\"}", *outs = "\"elbow_motor_dd\"]";
    const char *at1 = strstr(text, ports), *at2 = strstr(text, outs);
    cr_assert(at1 && at2 && at1 < at2);
    edited = rb_asprintf("%.*s\"x_ddot\": \"qdd_kf\", \"nis\": \"qd_kf_nis\"}%.*s\"elbow_motor_dd\", \"qd_kf_nis\"]%s",
                         (int)(at1 - text), text, (int)(at2 - (at1 + strlen(ports))), at1 + strlen(ports),
                         at2 + strlen(outs));
    cr_assert_eq(rb_pipeline_load_text(edited, strlen(edited), "demo_nis.json", demo_path, reg, &wired, &err), RB_OK,
                 "%s", err.msg);

    cr_assert_eq(rb_log_read(log_path, &log, &err), RB_OK, "%s", err.msg);
    rb_run_result *rd, *rm, *rw;
    cr_assert_eq(rb_pipeline_run_log(demo, log, NULL, 0, NULL, &rd, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_pipeline_run_log(minimal, log, NULL, 0, NULL, &rm, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_pipeline_run_log(wired, log, NULL, 0, NULL, &rw, &err), RB_OK, "%s", err.msg);
    cr_assert_not_null(rb_run_result_signal(rm, "qd"));
    cr_assert_eq(rw->n_recorded, rd->n_recorded + 1);
    for (size_t i = 0; i < rd->n_recorded; i++) {
        const rb_run_signal *sd = &rd->recorded[i], *sw = rb_run_result_signal(rw, sd->name);
        cr_assert(sw && sw->width == sd->width, "%s", sd->name);
        cr_assert_eq(memcmp(sd->data, sw->data, rd->clock.n * sd->width * sizeof(double)), 0, "%s", sd->name);
    }
    cr_assert_eq(rd->report->n_rows, rw->report->n_rows);
    for (size_t i = 0; i < rd->report->n_rows; i++)
        cr_assert_eq(rd->report->rows[i].stats.rmse, rw->report->rows[i].stats.rmse);
    const rb_run_signal *nis = rb_run_result_signal(rw, "qd_kf_nis");
    for (size_t i = 0; i < nis->width; i++) {
        double s = 0;
        size_t n = 0;
        for (size_t k = 0; k < rw->clock.n; k++)
            if (!isnan(nis->data[k * nis->width + i]))
                s += nis->data[k * nis->width + i], n++;
        cr_log_info("demo log, joint %s: mean NIS %.3g over %zu samples", nis->names[i], s / (double)n, n);
        cr_assert(n + 1 == rw->clock.n && isfinite(s), "NaN only at the first sample");
    }
    rb_run_result_free(rd);
    rb_run_result_free(rm);
    rb_run_result_free(rw);
    rb_log_free(log);
    rb_pipeline_free(demo);
    rb_pipeline_free(minimal);
    rb_pipeline_free(wired);
    rb_registry_free(reg);
    rb_free(edited);
    rb_free(demo_path);
    rb_free(min_path);
    rb_free(log_path);
}
