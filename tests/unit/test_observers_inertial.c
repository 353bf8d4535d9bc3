/* The online inertial-parameter estimator (roboest/observers.h, rb_iekf) on trajectories simulated here: exact
 * torques from the RNEA of a plant whose body carries a payload (a point mass), sinusoidal joint motion. */
#include <criterion/criterion.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "alloc_count.h"
#include "roboest/dynamics.h"
#include "roboest/observers.h"

#define ARM RB_SOURCE "/datasets/arm_2ft.urdf"
#define DT 1e-3

static rb_model *load(const char *path, bool floating)
{
    rb_model_opts o = {.floating = floating};
    rb_model *m = NULL;
    rb_err err;
    cr_assert_eq(rb_model_load_urdf(path, &o, &m, &err), RB_OK, "%s", err.msg);
    return m;
}

static size_t body(const rb_model *m, const char *name)
{
    long b = rb_model_body_index(m, name);
    cr_assert(b > 0, "no body %s", name);
    return (size_t)b;
}

/* pi + a point mass pm at c (body frame): consistent when pi is. */
static void add_point_mass(const double pi[10], double pm, const double c[3], double out[10])
{
    memcpy(out, pi, 10 * sizeof *out);
    out[0] += pm;
    for (int a = 0; a < 3; a++)
        out[1 + a] += pm * c[a];
    double cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    out[4] += pm * (cc - c[0] * c[0]);
    out[5] -= pm * c[0] * c[1];
    out[6] -= pm * c[0] * c[2];
    out[7] += pm * (cc - c[1] * c[1]);
    out[8] -= pm * c[1] * c[2];
    out[9] += pm * (cc - c[2] * c[2]);
}

/* Joint j: q = q0_j + amp * a_j sin(w_j t + p_j). */
static void motion(size_t n, double t, double amp, double *q, double *dq, double *ddq)
{
    for (size_t j = 0; j < n; j++) {
        double w = 1.3 + 0.7 * (double)j, p = 0.4 * (double)j, a = (0.8 - 0.1 * (double)j) * amp,
               q0 = 0.3 * (double)(j % 2);
        q[j] = q0 + a * sin(w * t + p);
        dq[j] = a * w * cos(w * t + p);
        ddq[j] = -a * w * w * sin(w * t + p);
    }
}

/* A run: the plant's body `b` has parameters pi_true (from t >= t_load; the model's before), torques offset by
 * `offset` (n, may be NULL), spike of `spike` N m on joint 0 at sample k_spike. Steps the estimator N samples;
 * per-sample check callback. */
typedef struct run_opts {
    double amp;
    double t_load;
    const double *offset;
    size_t k_spike;
    double spike;
    size_t nan_joint; /* a joint whose torque is NaN on every sample (SIZE_MAX: none) */
    bool all_nan;
} run_opts;

typedef void (*per_sample_fn)(void *user, size_t k, const rb_iekf *e);

static void run(const rb_model *m, rb_iekf *e, size_t b, const double pi_true[10], size_t N, const run_opts *ro,
                per_sample_fn cb, void *user)
{
    rb_dyn *plant = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(m, &plant, &err), RB_OK, "%s", err.msg);
    size_t n = m->n_dofs;
    double q[16], dq[16], ddq[16], tau[16];
    bool loaded = false;
    for (size_t k = 0; k < N; k++) {
        double t = (double)k * DT;
        if (!loaded && t >= ro->t_load) {
            cr_assert_eq(rb_dyn_set_body_inertia(m, plant, b, pi_true, &err), RB_OK, "%s", err.msg);
            loaded = true;
        }
        motion(n, t, ro->amp, q, dq, ddq);
        cr_assert_eq(rb_dyn_rnea(m, plant, q, dq, ddq, NULL, 0, tau, &err), RB_OK, "%s", err.msg);
        for (size_t j = 0; ro->offset && j < n; j++)
            tau[j] += ro->offset[j];
        if (k == ro->k_spike)
            tau[0] += ro->spike;
        if (ro->nan_joint < n)
            tau[ro->nan_joint] = NAN;
        for (size_t j = 0; ro->all_nan && j < n; j++)
            tau[j] = NAN;
        cr_assert_eq(rb_iekf_step(e, k, t, q, dq, ddq, tau, NULL, &err), RB_OK, "sample %zu: %s", k, err.msg);
        if (cb)
            cb(user, k, e);
    }
    rb_dyn_free(plant);
}

static const run_opts DEFAULT_RUN = {.amp = 1, .t_load = 0, .k_spike = SIZE_MAX, .nan_joint = SIZE_MAX};

static rb_iekf *make(const rb_model *m, size_t b, rb_iekf_filter filter, rb_lchol_form form, double r)
{
    rb_iekf_config c;
    rb_iekf_config_init(&c);
    if (filter == RB_IEKF_KF_LINEAR)
        rb_iekf_config_defaults_kf(&c);
    c.form = form;
    c.bodies = &b, c.n_bodies = 1;
    c.r_scalar = r;
    for (int j = 0; j < 10; j++)
        c.q[j] *= 1e-3;
    rb_iekf *e = NULL;
    rb_err err;
    cr_assert_eq(rb_iekf_alloc(m, &c, &e, &err), RB_OK, "%s", err.msg);
    return e;
}

static void payload(const rb_model *m, size_t b, double pm, double out[10])
{
    const double c[3] = {0.05, 0.02, 0.12};
    add_point_mass(m->bodies[b].inertia, pm, c, out);
}

static void count_consistent(void *user, size_t k, const rb_iekf *e)
{
    (void)k;
    rb_iekf_out o;
    rb_iekf_get_out(e, &o);
    long *c = user;
    c[0] += o.consistent[0] != 0;
    c[1]++;
}

static void check_converges(rb_iekf_filter filter, rb_lchol_form form)
{
    rb_model *m = load(ARM, false);
    size_t b = body(m, "forearm");
    double pt[10];
    payload(m, b, 1.5, pt);
    rb_iekf *e = make(m, b, filter, form, 1e-2);
    long cons[2] = {0, 0};
    run(m, e, b, pt, 6000, &DEFAULT_RUN, count_consistent, cons);
    rb_iekf_out o;
    rb_iekf_get_out(e, &o);
    cr_expect(fabs(o.pi_raw[0] - pt[0]) < 0.01 * pt[0], "mass %g, true %g (nominal %g)", o.pi_raw[0], pt[0],
              m->bodies[b].inertia[0]);
    cr_expect(fabs(o.pi[0] - pt[0]) < 0.01 * pt[0], "streamed mass %g, true %g", o.pi[0], pt[0]);
    for (int a = 0; a < 3; a++)
        cr_expect(fabs(o.pi_raw[1 + a] - pt[1 + a]) < 0.02, "h[%d] %g, true %g", a, o.pi_raw[1 + a], pt[1 + a]);
    if (filter == RB_IEKF_EKF_LOG_CHOLESKY)
        cr_expect_eq(cons[0], cons[1], "EKF consistent on %ld of %ld samples", cons[0], cons[1]);
    rb_iekf_free(e);
    rb_model_free(m);
}

Test(observers_inertial, ekf_uut_converges_to_the_payload_mass)
{
    check_converges(RB_IEKF_EKF_LOG_CHOLESKY, RB_LCHOL_UUT);
}
Test(observers_inertial, ekf_paper_eq17_converges_too)
{
    check_converges(RB_IEKF_EKF_LOG_CHOLESKY, RB_LCHOL_PAPER_EQ17);
}
Test(observers_inertial, kf_converges_to_the_payload_mass) { check_converges(RB_IEKF_KF_LINEAR, RB_LCHOL_UUT); }

/* With Q = 0 the KF is recursive least squares: its pi equals the batch solution of
 * (P0^-1 + sum Y^T R^-1 Y) pi = P0^-1 pi0 + sum Y^T R^-1 z over the same samples. */
Test(observers_inertial, kf_without_process_noise_equals_batch_least_squares)
{
    rb_model *m = load(ARM, false);
    size_t b = body(m, "forearm"), n = m->n_dofs, N = 400;
    double pt[10];
    payload(m, b, 1.5, pt);
    rb_iekf_config c;
    rb_iekf_config_init(&c);
    rb_iekf_config_defaults_kf(&c);
    c.bodies = &b, c.n_bodies = 1, c.r_scalar = 1e-2;
    memset(c.q, 0, sizeof c.q);
    rb_iekf *e = NULL;
    rb_err err;
    cr_assert_eq(rb_iekf_alloc(m, &c, &e, &err), RB_OK, "%s", err.msg);
    rb_dyn *plant = NULL, *ws = NULL;
    rb_dyn_condensed *cd = NULL;
    cr_assert_eq(rb_dyn_alloc(m, &plant, &err), RB_OK);
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    cr_assert_eq(rb_dyn_condensed_alloc(m, &b, 1, &cd, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_set_body_inertia(m, plant, b, pt, &err), RB_OK);
    double A[100] = {0}, rhs[10] = {0}, Y[16 * 10], tn[16], q[16], dq[16], ddq[16], tau[16];
    for (int i = 0; i < 10; i++) {
        A[i * 10 + i] = 1 / c.p0[i];
        rhs[i] = m->bodies[b].inertia[i] / c.p0[i];
    }
    for (size_t k = 0; k < N; k++) {
        double t = (double)k * 7e-3; /* a longer stride: more excitation in few samples */
        motion(n, t, 1, q, dq, ddq);
        cr_assert_eq(rb_dyn_rnea(m, plant, q, dq, ddq, NULL, 0, tau, &err), RB_OK);
        tau[1] += 0.05 * sin(37.0 * t); /* not exactly in the model: the fit has a residual */
        cr_assert_eq(rb_iekf_step(e, k, t, q, dq, ddq, tau, NULL, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_dyn_condensed_eval(m, ws, cd, q, dq, ddq, Y, tn, &err), RB_OK, "%s", err.msg);
        for (size_t i = 0; i < n; i++) {
            double z = tau[i] - tn[i];
            for (int a = 0; a < 10; a++) {
                rhs[a] += Y[i * 10 + a] * z / c.r_scalar;
                for (int d = 0; d < 10; d++)
                    A[a * 10 + d] += Y[i * 10 + a] * Y[i * 10 + d] / c.r_scalar;
            }
        }
    }
    cr_assert_eq(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', 10, 1, A, 10, rhs, 1), 0);
    rb_iekf_out o;
    rb_iekf_get_out(e, &o);
    for (int a = 0; a < 10; a++)
        cr_expect(fabs(o.pi_raw[a] - rhs[a]) <= 1e-6 * (1 + fabs(rhs[a])), "pi[%d]: KF %.12g, batch %.12g", a,
                  o.pi_raw[a], rhs[a]);
    rb_dyn_condensed_free(cd);
    rb_dyn_free(ws);
    rb_dyn_free(plant);
    rb_iekf_free(e);
    rb_model_free(m);
}

/* Nearly still joints: the KF explains the payload by m and h alone and leaves I, so the pseudo-inertia of its
 * estimate goes indefinite; the EKF's stays consistent on every sample. */
Test(observers_inertial, kf_goes_inconsistent_on_low_excitation_while_the_ekf_does_not)
{
    rb_model *m = load(ARM, false);
    size_t b = body(m, "forearm");
    double pt[10];
    const double c[3] = {0.0, 0.0, 0.35};
    add_point_mass(m->bodies[b].inertia, 3, c, pt);
    run_opts ro = DEFAULT_RUN;
    ro.amp = 0.01;
    long kf[2] = {0, 0}, ekf[2] = {0, 0};
    rb_iekf *e = make(m, b, RB_IEKF_KF_LINEAR, RB_LCHOL_UUT, 1e-2);
    run(m, e, b, pt, 3000, &ro, count_consistent, kf);
    rb_iekf_free(e);
    e = make(m, b, RB_IEKF_EKF_LOG_CHOLESKY, RB_LCHOL_UUT, 1e-2);
    run(m, e, b, pt, 3000, &ro, count_consistent, ekf);
    rb_iekf_free(e);
    cr_expect(kf[0] < kf[1], "the KF stayed consistent on all %ld samples", kf[1]);
    cr_expect_eq(ekf[0], ekf[1], "EKF consistent on %ld of %ld samples", ekf[0], ekf[1]);
    rb_model_free(m);
}

typedef struct spike_watch {
    size_t k;
    bool gated;
    double m_before, m_after;
} spike_watch;

static void watch_spike(void *user, size_t k, const rb_iekf *e)
{
    spike_watch *w = user;
    rb_iekf_out o;
    rb_iekf_get_out(e, &o);
    if (k + 1 == w->k)
        w->m_before = o.pi_raw[0];
    if (k == w->k)
        w->gated = o.gated, w->m_after = o.pi_raw[0];
}

Test(observers_inertial, the_gate_rejects_an_injected_spike)
{
    rb_model *m = load(ARM, false);
    size_t b = body(m, "forearm");
    double pt[10];
    payload(m, b, 1.5, pt);
    double jump[2];
    for (int g = 0; g < 2; g++) {
        rb_iekf_config c;
        rb_iekf_config_init(&c);
        c.bodies = &b, c.n_bodies = 1, c.r_scalar = 1e-2;
        c.gate = g ? RB_IEKF_GATE_PROBABILITY : RB_IEKF_GATE_OFF, c.gate_value = 0.9999;
        rb_iekf *e = NULL;
        rb_err err;
        cr_assert_eq(rb_iekf_alloc(m, &c, &e, &err), RB_OK, "%s", err.msg);
        run_opts ro = DEFAULT_RUN;
        ro.k_spike = 3000, ro.spike = 40;
        spike_watch w = {.k = 3000};
        run(m, e, b, pt, 3001, &ro, watch_spike, &w);
        jump[g] = fabs(w.m_after - w.m_before);
        cr_expect_eq(w.gated, g == 1, "gate %d: gated flag %d at the spike", g, w.gated);
        rb_iekf_free(e);
    }
    cr_expect(jump[1] == 0 && jump[0] > 1e-3, "mass jump at the spike: %g ungated, %g gated", jump[0], jump[1]);
    rb_model_free(m);
}

Test(observers_inertial, bias_calibration_removes_a_constant_torque_offset)
{
    rb_model *m = load(ARM, false);
    size_t b = body(m, "forearm");
    double pt[10], off[4] = {0.4, -0.3, 0.25, 0.1};
    payload(m, b, 1.5, pt);
    double err_mass[2];
    for (int w = 0; w < 2; w++) {
        rb_iekf_config c;
        rb_iekf_config_init(&c);
        c.bodies = &b, c.n_bodies = 1, c.r_scalar = 1e-2;
        c.bias_window = w ? 1.0 : 0;
        rb_iekf *e = NULL;
        rb_err err;
        cr_assert_eq(rb_iekf_alloc(m, &c, &e, &err), RB_OK, "%s", err.msg);
        run_opts ro = DEFAULT_RUN;
        ro.offset = off, ro.t_load = 1.0; /* the model's load during the window */
        run(m, e, b, pt, 10000, &ro, NULL, NULL);
        rb_iekf_out o;
        rb_iekf_get_out(e, &o);
        err_mass[w] = fabs(o.pi_raw[0] - pt[0]) / pt[0];
        cr_log_info("window %d: mass %g true %g bias %g %g", w, o.pi_raw[0], pt[0], o.bias[0], o.bias[1]);
        if (w)
            for (int j = 0; j < 4; j++)
                cr_expect(fabs(o.bias[j] - off[j]) < 1e-9, "bias[%d] %g, offset %g", j, o.bias[j], off[j]);
        rb_iekf_free(e);
    }
    cr_expect(err_mass[1] < 0.01, "with the bias window: mass error %g", err_mass[1]);
    cr_expect(err_mass[0] > err_mass[1], "without: %g, with: %g", err_mass[0], err_mass[1]);
    rb_model_free(m);
}

typedef struct rate_watch {
    double prev, prev_raw, worst, worst_raw;
    size_t inconsistent; /* samples whose streamed pi was not fully consistent */
    double com_jump;     /* largest change of the streamed CoM h / m in a sample */
    double prev_com[3];
} rate_watch;

static void watch_rate(void *user, size_t k, const rb_iekf *e)
{
    rate_watch *w = user;
    rb_iekf_out o;
    rb_iekf_get_out(e, &o);
    if (k > 0) {
        double d = fabs(o.pi[0] - w->prev), dr = fabs(o.pi_raw[0] - w->prev_raw);
        w->worst = d > w->worst ? d : w->worst;
        w->worst_raw = dr > w->worst_raw ? dr : w->worst_raw;
        for (int a = 0; a < 3; a++)
            w->com_jump = fmax(w->com_jump, fabs(o.com[a] - w->prev_com[a]));
    }
    w->inconsistent += !rb_inertia_is_consistent(o.pi);
    w->prev = o.pi[0], w->prev_raw = o.pi_raw[0];
    for (int a = 0; a < 3; a++)
        w->prev_com[a] = o.com[a];
}

Test(observers_inertial, rate_limit_holds_on_the_streamed_mass)
{
    rb_model *m = load(ARM, false);
    size_t b = body(m, "forearm");
    double pt[10];
    payload(m, b, 1.5, pt);
    rb_iekf *e = make(m, b, RB_IEKF_EKF_LOG_CHOLESKY, RB_LCHOL_UUT, 1e-2);
    rate_watch w = {0};
    run(m, e, b, pt, 4000, &DEFAULT_RUN, watch_rate, &w);
    cr_expect(w.worst <= 3 * DT * (1 + 1e-12), "streamed mass moved %g in a sample (limit %g)", w.worst, 3 * DT);
    /* the limited pi moves along a line between consistent parameters: consistent itself, and its CoM h / m does
     * not jump while the mass is held back (a per-element clamp moved h at once: CoM 1.5 times out) */
    cr_expect_eq(w.inconsistent, 0, "%zu samples with an inconsistent streamed pi", w.inconsistent);
    cr_expect(w.com_jump < 1e-3, "streamed CoM jumped %g m in a sample", w.com_jump);
    cr_expect(w.worst_raw > 3 * DT, "the raw estimate never moved faster than the limit (%g): nothing tested",
              w.worst_raw);
    rb_iekf_out o;
    rb_iekf_get_out(e, &o);
    cr_expect(fabs(o.pi[0] - pt[0]) < 0.01 * pt[0], "streamed mass %g, true %g", o.pi[0], pt[0]);
    rb_iekf_free(e);
    rb_model_free(m);
}

/* forearm and wrist with the wrist joint held still: one rigid body to the data. */
Test(observers_inertial, two_locked_bodies_are_reported_not_separately_identifiable)
{
    rb_model *m = load(ARM, false);
    size_t bodies[2] = {body(m, "forearm"), body(m, "wrist")}, n = m->n_dofs;
    long wj = rb_model_dof_index(m, "wrist_roll");
    cr_assert(wj >= 0);
    rb_iekf_config c;
    rb_iekf_config_init(&c);
    c.bodies = bodies, c.n_bodies = 2, c.r_scalar = 1e-2;
    rb_iekf *e = NULL;
    rb_err err;
    cr_assert_eq(rb_iekf_alloc(m, &c, &e, &err), RB_OK, "%s", err.msg);
    rb_dyn *plant = NULL;
    cr_assert_eq(rb_dyn_alloc(m, &plant, &err), RB_OK);
    double q[16], dq[16], ddq[16], tau[16];
    for (size_t k = 0; k < 2000; k++) {
        double t = (double)k * DT;
        motion(n, t, 1, q, dq, ddq);
        q[wj] = 0.3, dq[wj] = 0, ddq[wj] = 0;
        cr_assert_eq(rb_dyn_rnea(m, plant, q, dq, ddq, NULL, 0, tau, &err), RB_OK);
        cr_assert_eq(rb_iekf_step(e, k, t, q, dq, ddq, tau, NULL, &err), RB_OK, "%s", err.msg);
    }
    size_t joint, per[2];
    bool sep;
    cr_assert_eq(rb_iekf_identifiability(e, &joint, per, &sep, &err), RB_OK, "%s", err.msg);
    cr_expect(!sep, "ranks: joint %zu, bodies %zu + %zu", joint, per[0], per[1]);
    cr_expect(joint < per[0] + per[1]);
    char **lines = NULL;
    size_t nl = 0;
    cr_assert_eq(rb_iekf_warnings(e, &lines, &nl, &err), RB_OK);
    bool found = false;
    for (size_t i = 0; i < nl; i++)
        found |= strstr(lines[i], "not separately identifiable") != NULL && strstr(lines[i], "wrist") != NULL;
    cr_expect(found, "no identifiability warning among %zu lines", nl);
    rb_strings_free(lines, nl);
    rb_dyn_free(plant);
    rb_iekf_free(e);
    rb_model_free(m);
}

Test(observers_inertial, nan_rows_are_skipped_and_all_nan_only_predicts)
{
    rb_model *m = load(ARM, false);
    size_t b = body(m, "forearm");
    double pt[10];
    payload(m, b, 1.5, pt);
    rb_iekf *e = make(m, b, RB_IEKF_EKF_LOG_CHOLESKY, RB_LCHOL_UUT, 1e-2);
    run_opts ro = DEFAULT_RUN;
    ro.nan_joint = 3;
    run(m, e, b, pt, 500, &ro, NULL, NULL);
    rb_iekf_diag d;
    rb_iekf_get_diag(e, &d);
    cr_expect_eq(d.rows_skipped, 500);
    cr_expect_eq(d.updates, 500);
    rb_iekf_free(e);
    e = make(m, b, RB_IEKF_EKF_LOG_CHOLESKY, RB_LCHOL_UUT, 1e-2);
    ro.nan_joint = SIZE_MAX, ro.all_nan = true;
    run(m, e, b, pt, 200, &ro, NULL, NULL);
    rb_iekf_get_diag(e, &d);
    rb_iekf_out o;
    rb_iekf_get_out(e, &o);
    cr_expect_eq(d.updates, 0);
    cr_expect_eq(d.predict_only, 200);
    for (int a = 0; a < 10; a++)
        cr_expect(fabs(o.pi_raw[a] - m->bodies[b].inertia[a]) <= 1e-12 * (1 + fabs(m->bodies[b].inertia[a])),
                  "the prior moved: pi[%d] %.17g, nominal %.17g", a, o.pi_raw[a], m->bodies[b].inertia[a]);
    rb_iekf_free(e);
    rb_model_free(m);
}

static void count_allocs(void *user, size_t k, const rb_iekf *e) { (void)user, (void)k, (void)e; }

Test(observers_inertial, steps_allocate_nothing)
{
    if (!test_alloc_count_works())
        cr_skip_test("under valgrind C-library allocations are not counted");
    test_alloc_count_init();
    rb_model *m = load(ARM, false);
    size_t bodies[2] = {body(m, "forearm"), body(m, "wrist")}, n = m->n_dofs;
    for (int f = 0; f < 2; f++) {
        rb_iekf_config c;
        rb_iekf_config_init(&c);
        if (f)
            rb_iekf_config_defaults_kf(&c);
        c.bodies = bodies, c.n_bodies = 2, c.gate = RB_IEKF_GATE_PROBABILITY, c.bias_window = 0.01;
        c.residual_cutoff = 20, c.estimate_cutoff = 5, c.ddq = f ? RB_IEKF_DDQ_CENTRAL : RB_IEKF_DDQ_GIVEN;
        rb_iekf *e = NULL;
        rb_err err;
        cr_assert_eq(rb_iekf_alloc(m, &c, &e, &err), RB_OK, "%s", err.msg);
        double q[16], dq[16], ddq[16], tau[16] = {1, 2, NAN, 0.5};
        long allocs = 0;
        for (size_t k = 0; k < 100; k++) {
            motion(n, (double)k * DT, 1, q, dq, ddq);
            test_alloc_count = 0;
            test_alloc_counting = 1;
            int rc = rb_iekf_step(e, k, (double)k * DT, q, dq, ddq, tau, NULL, &err);
            test_alloc_counting = 0;
            allocs += test_alloc_count;
            cr_assert_eq(rc, RB_OK, "%s", err.msg);
            count_allocs(NULL, k, e);
        }
        cr_expect_eq(allocs, 0, "filter %d: %ld allocations in 100 steps", f, allocs);
        rb_iekf_free(e);
    }
    rb_model_free(m);
}

Test(observers_inertial, config_errors_name_the_body_and_the_sample)
{
    rb_model *m = load(ARM, false);
    size_t b = body(m, "forearm");
    rb_iekf_config c;
    rb_iekf_config_init(&c);
    c.bodies = &b, c.n_bodies = 1;
    c.gate = RB_IEKF_GATE_PROBABILITY, c.gate_value = 1;
    rb_iekf *e = NULL;
    rb_err err;
    cr_expect_eq(rb_iekf_alloc(m, &c, &e, &err), RB_ECONFIG);
    cr_expect(strstr(err.msg, "probability") != NULL, "%s", err.msg);
    c.gate = RB_IEKF_GATE_OFF;
    cr_assert_eq(rb_iekf_alloc(m, &c, &e, &err), RB_OK, "%s", err.msg);
    double q[4] = {0}, dq[4] = {0}, ddq[4] = {0}, tau[4] = {0};
    cr_assert_eq(rb_iekf_step(e, 0, 1.0, q, dq, ddq, tau, NULL, &err), RB_OK, "%s", err.msg);
    cr_expect_eq(rb_iekf_step(e, 1, 1.0, q, dq, ddq, tau, NULL, &err), RB_EINPUT);
    cr_expect(strstr(err.msg, "sample 1") && strstr(err.msg, "dt <= 0"), "%s", err.msg);
    rb_iekf_free(e);
    rb_model_free(m);
}
