/* rb_filter_opts.hold (UKF): the covariance and gain refreshed every `hold` steps, the steps between stepping the mean
 * with the refresh's gain. Checked against the definition computed here from the filter's own refresh (its gain,
 * its S) and the models: which steps are refreshes, the mean-only predict and the held update, P held, the vector gate
 * on the refresh's S, the fallback to a full update, set_state's refresh, hold 1 being the exact filter, bad options. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "filters_support.h"
#include "support.h"

#define N 5
#define M 3

/* A nonlinear process on the linear system: x+ = F x + B u + 0.05 sin(x) (elementwise). */
static int nl_f(void *user, const double *x, const double *u, double dt, double *out, rb_err *err)
{
    int rc = fs_lin_f(user, x, u, dt, out, err);
    for (size_t i = 0; i < N; i++)
        out[i] += 0.05 * sin(x[i]);
    return rc;
}

typedef struct run {
    fs_linear s;
    rb_filter *f;
    rb_rng rng;
    double xt[N];
} run;

static void run_make(run *r, size_t hold, rb_gate_mode gate, uint64_t seed)
{
    fs_linear_make(&r->s, N, M, seed);
    rb_filter_opts o;
    fs_linear_opts(&r->s, &o);
    o.f = nl_f;
    o.hold = hold;
    o.gate.mode = gate;
    o.gate.threshold = 30.0;
    rb_err err;
    cr_assert_eq(rb_ukf_create(&o, &r->f, &err), RB_OK, "%s", err.msg);
    rb_rng_seed(&r->rng, seed + 1);
    memcpy(r->xt, r->s.x0, sizeof r->xt);
}

/* The next true state and its noisy measurement (u = 1). */
static void run_truth(run *r, double z[M])
{
    double u = 1.0, nx[N];
    rb_err err;
    nl_f(&r->s, r->xt, &u, 0.01, nx, &err);
    for (size_t i = 0; i < N; i++)
        r->xt[i] = nx[i] + 0.05 * rb_rng_normal(&r->rng);
    fs_lin_h(&r->s, r->xt, z, &err);
    for (size_t i = 0; i < M; i++)
        z[i] += 0.1 * rb_rng_normal(&r->rng);
}

static void step(run *r, const double z[M])
{
    double u = 1.0;
    rb_err err;
    cr_assert_eq(rb_filter_predict(r->f, &u, 0.01, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_filter_update(r->f, z, &err), RB_OK, "%s", err.msg);
}

/* hold 1 (and 0) is the exact filter, bit for bit. */
Test(filters_hold, hold_1_is_the_exact_filter)
{
    run a, b;
    run_make(&a, 0, RB_GATE_OFF, 11);
    run_make(&b, 1, RB_GATE_OFF, 11);
    for (int k = 0; k < 50; k++) {
        double z[M];
        run_truth(&a, z);
        run_truth(&b, z);
        step(&a, z);
        step(&b, z);
        cr_assert_eq(memcmp(rb_filter_x(a.f), rb_filter_x(b.f), N * sizeof(double)), 0, "x at step %d", k);
        cr_assert_eq(memcmp(rb_filter_P(a.f), rb_filter_P(b.f), N * N * sizeof(double)), 0, "P at step %d", k);
        cr_assert_not(rb_filter_held(b.f));
    }
    rb_filter_free(a.f), rb_filter_free(b.f);
}

/* hold 4: steps 1, 5, 9, ... are refreshes (P moves); on the three steps after each, x = f(x) + K (z - h(f(x))) with
 * the refresh's gain (rb_filter_gain then), the NIS on the refresh's S, and P bit for bit the refresh's. */
Test(filters_hold, held_steps_apply_the_refreshs_gain_to_the_mean)
{
    run r;
    run_make(&r, 4, RB_GATE_OFF, 21);
    double K[N * M], S[M * M], P[N * N];
    rb_err err;
    int refreshes = 0;
    for (int k = 1; k <= 40; k++) {
        double z[M], x0[N], xp[N], zh[M], u = 1.0;
        run_truth(&r, z);
        memcpy(x0, rb_filter_x(r.f), sizeof x0);
        step(&r, z);
        bool refresh = (k - 1) % 4 == 0;
        cr_assert_eq(rb_filter_held(r.f), !refresh, "step %d: held %d", k, rb_filter_held(r.f));
        if (refresh) {
            cr_assert_neq(memcmp(P, rb_filter_P(r.f), sizeof P), 0, "a refresh moves P (step %d)", k);
            memcpy(P, rb_filter_P(r.f), sizeof P);
            cr_assert_eq(rb_filter_gain(r.f, K, &err), RB_OK, "%s", err.msg);
            cr_assert_eq(rb_filter_innovation_cov(r.f, S, &err), RB_OK, "%s", err.msg);
            refreshes++;
            continue;
        }
        cr_assert_eq(memcmp(P, rb_filter_P(r.f), sizeof P), 0, "P held at step %d", k);
        nl_f(&r.s, x0, &u, 0.01, xp, &err);
        fs_lin_h(&r.s, xp, zh, &err);
        double nu[M], want[N];
        for (size_t i = 0; i < M; i++)
            nu[i] = z[i] - zh[i];
        for (size_t i = 0; i < N; i++) {
            want[i] = xp[i];
            for (size_t j = 0; j < M; j++)
                want[i] += K[i * M + j] * nu[j];
        }
        double e = fs_maxrel(rb_filter_x(r.f), want, N);
        cr_assert_lt(e, 1e-12, "step %d: x differs from f(x) + K nu by %g", k, e);
        /* NIS = nu^T S^-1 nu on the refresh's S: by Cholesky here */
        double L[M * M] = {0}, y[M];
        for (size_t i = 0; i < M; i++)
            for (size_t j = 0; j <= i; j++) {
                double v = S[i * M + j];
                for (size_t q = 0; q < j; q++)
                    v -= L[i * M + q] * L[j * M + q];
                L[i * M + j] = i == j ? sqrt(v) : v / L[j * M + j];
            }
        double nis = 0.0;
        for (size_t i = 0; i < M; i++) {
            double v = nu[i];
            for (size_t q = 0; q < i; q++)
                v -= L[i * M + q] * y[q];
            y[i] = v / L[i * M + i], nis += y[i] * y[i];
        }
        rb_filter_diag d;
        rb_filter_get_diag(r.f, &d);
        cr_assert_float_eq(d.nis, nis, 1e-9 * (1 + nis), "step %d: NIS %g against %g", k, d.nis, nis);
    }
    cr_assert_eq(refreshes, 10);
    rb_filter_free(r.f);
}

/* Over a long run the held filter stays close to the exact one (the same noise): its estimate error within 10 % of
 * the exact filter's RMS, and not the same numbers. */
Test(filters_hold, the_held_filter_tracks_like_the_exact_one)
{
    run a, b;
    run_make(&a, 1, RB_GATE_OFF, 31);
    run_make(&b, 4, RB_GATE_OFF, 31);
    double ea = 0.0, eb = 0.0;
    for (int k = 0; k < 2000; k++) {
        double z[M];
        run_truth(&a, z);
        run_truth(&b, z);
        step(&a, z);
        step(&b, z);
        for (size_t i = 0; k >= 200 && i < N; i++) {
            double da = rb_filter_x(a.f)[i] - a.xt[i], db = rb_filter_x(b.f)[i] - b.xt[i];
            ea += da * da, eb += db * db;
        }
    }
    cr_log_info("estimate error RMS: exact %g, hold 4 %g", sqrt(ea / 9000), sqrt(eb / 9000));
    cr_assert_lt(fabs(sqrt(eb / ea) - 1.0), 0.1, "exact %g, hold 4 %g", sqrt(ea / 9000), sqrt(eb / 9000));
    cr_assert_neq(ea, eb);
    rb_filter_free(a.f), rb_filter_free(b.f);
}

/* A missing element on a held step: a full update (P moves), whose elements the next held steps then use; and
 * rb_filter_set_state, rb_filter_hold_refresh: the next step is a refresh. */
Test(filters_hold, other_elements_set_state_and_hold_refresh_make_full_steps)
{
    run r;
    run_make(&r, 8, RB_GATE_OFF, 41);
    double z[M], P[N * N];
    run_truth(&r, z);
    step(&r, z); /* refresh */
    run_truth(&r, z);
    step(&r, z);
    cr_assert(rb_filter_held(r.f));
    memcpy(P, rb_filter_P(r.f), sizeof P);
    run_truth(&r, z);
    z[1] = NAN;
    step(&r, z);
    cr_assert_not(rb_filter_held(r.f), "another element set: a full update");
    cr_assert_neq(memcmp(P, rb_filter_P(r.f), sizeof P), 0);
    rb_filter_diag d;
    rb_filter_get_diag(r.f, &d);
    cr_assert_eq(d.status[1], RB_MEAS_MISSING);
    run_truth(&r, z);
    z[1] = NAN;
    step(&r, z);
    cr_assert(rb_filter_held(r.f), "the same two elements: held on the new gain");
    rb_err err;
    cr_assert_eq(rb_filter_set_state(r.f, rb_filter_x(r.f), NULL, &err), RB_OK);
    run_truth(&r, z);
    z[1] = NAN;
    step(&r, z);
    cr_assert_not(rb_filter_held(r.f), "set_state: a refresh");
    run_truth(&r, z);
    z[1] = NAN;
    step(&r, z);
    cr_assert(rb_filter_held(r.f));
    rb_filter_hold_refresh(r.f);
    run_truth(&r, z);
    z[1] = NAN;
    step(&r, z);
    cr_assert_not(rb_filter_held(r.f), "hold_refresh: a refresh");
    rb_filter_free(r.f);
}

/* The vector gate on a held step: an outlier is rejected on the refresh's S and x stays f(x). */
Test(filters_hold, the_vector_gate_rejects_on_a_held_step)
{
    run r;
    run_make(&r, 4, RB_GATE_VECTOR, 51);
    double z[M], x0[N], xp[N], u = 1.0;
    rb_err err;
    run_truth(&r, z);
    step(&r, z);
    run_truth(&r, z);
    z[0] += 100.0;
    memcpy(x0, rb_filter_x(r.f), sizeof x0);
    step(&r, z);
    rb_filter_diag d;
    rb_filter_get_diag(r.f, &d);
    cr_assert(rb_filter_held(r.f) && d.rejected, "held %d rejected %d", rb_filter_held(r.f), d.rejected);
    nl_f(&r.s, x0, &u, 0.01, xp, &err);
    cr_assert_lt(fs_maxrel(rb_filter_x(r.f), xp, N), 1e-15, "a rejected held update leaves x = f(x)");
    cr_assert_eq(d.gated_updates, 1);
    rb_filter_free(r.f);
}

Test(filters_hold, bad_options_are_refused)
{
    fs_linear s;
    fs_linear_make(&s, N, M, 61);
    rb_filter_opts o;
    fs_linear_opts(&s, &o);
    o.hold = 4;
    rb_filter *f = NULL;
    rb_err err;
    cr_assert_eq(rb_ekf_create(&o, &f, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "hold"), "%s", err.msg);
    cr_assert_eq(rb_kf_create(&o, &f, &err), RB_EINVAL);
    o.gate.mode = RB_GATE_ELEMENT, o.gate.threshold = 9.0;
    cr_assert_eq(rb_ukf_create(&o, &f, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "element gate"), "%s", err.msg);
    cr_assert_null(f);
}

/* A jump adaptation firing on a held step: the repeated update is a full one from the HELD P inflated (the prior the
 * held update left), bit for bit what set_state(prior x, held P + d e_0 e_0^T) and a plain update give. */
Test(filters_hold, a_jump_on_a_held_step_is_a_full_update_from_the_held_p)
{
    run a, c;
    run_make(&a, 4, RB_GATE_OFF, 71);
    run_make(&c, 4, RB_GATE_OFF, 71);
    static const size_t gate[1] = {0};
    static const rb_jump_target target[1] = {{0, 0, 1.0}};
    rb_jump_opts jo = {.gate = gate, .n_gate = 1, .targets = target, .n_targets = 1, .probability = 0.999, .scale = 1};
    rb_jump *j = NULL;
    rb_err err;
    cr_assert_eq(rb_jump_create(a.f, &jo, &j, &err), RB_OK, "%s", err.msg);
    double z[M], u = 1.0;
    for (int k = 0; k < 2; k++) { /* a refresh, then a held step, without a jump */
        run_truth(&a, z);
        run_truth(&c, z);
        cr_assert_eq(rb_filter_predict(a.f, &u, 0.01, &err), RB_OK);
        rb_jump_keep_prior(j, a.f);
        cr_assert_eq(rb_filter_update(a.f, z, &err), RB_OK);
        cr_assert_eq(rb_jump_update(j, a.f, z, NULL, NULL, &err), RB_OK, "%s", err.msg);
        step(&c, z);
    }
    run_truth(&a, z);
    run_truth(&c, z);
    z[0] += 50.0; /* a jump */
    cr_assert_eq(rb_filter_predict(a.f, &u, 0.01, &err), RB_OK);
    rb_jump_keep_prior(j, a.f);
    cr_assert_eq(rb_filter_update(a.f, z, &err), RB_OK);
    cr_assert(rb_filter_held(a.f));
    double nis = 0, inflation = 0;
    cr_assert_eq(rb_jump_update(j, a.f, z, &nis, &inflation, &err), RB_OK, "%s", err.msg);
    cr_assert_gt(inflation, 0.0, "the jump fired (NIS %g)", nis);
    cr_assert_not(rb_filter_held(a.f), "the repeated update is a full one");
    /* the replica: the held update's innovation and S, then the inflated held P */
    double x0[N], P[N * N], S[M * M];
    cr_assert_eq(rb_filter_predict(c.f, &u, 0.01, &err), RB_OK);
    memcpy(x0, rb_filter_x(c.f), sizeof x0);
    memcpy(P, rb_filter_P(c.f), sizeof P);
    cr_assert_eq(rb_filter_update(c.f, z, &err), RB_OK);
    rb_filter_diag d;
    rb_filter_get_diag(c.f, &d);
    cr_assert_eq(rb_filter_innovation_cov(c.f, S, &err), RB_OK);
    P[0] += fmax(0.0, d.innovation[0] * d.innovation[0] - S[0]);
    cr_assert_eq(rb_filter_set_state(c.f, x0, P, &err), RB_OK);
    cr_assert_eq(rb_filter_update(c.f, z, &err), RB_OK);
    cr_assert_eq(memcmp(rb_filter_x(a.f), rb_filter_x(c.f), N * sizeof(double)), 0, "x");
    cr_assert_eq(memcmp(rb_filter_P(a.f), rb_filter_P(c.f), N * N * sizeof(double)), 0, "P");
    rb_jump_free(j);
    rb_filter_free(a.f), rb_filter_free(c.f);
}
