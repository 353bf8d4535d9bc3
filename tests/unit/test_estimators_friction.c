/* The friction stages: motor_torque, friction_model and friction_pinn against direct computations (the
 * formulas written out, a fine RK4 integration of the LuGre equation, the network evaluated on hand-built
 * histories), causality, no allocation per step, and their one-line errors. Parameters go through the
 * pipeline loader (schema bounds and defaults as in a real config); the stages are then stepped directly. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc_count.h"
#include "roboest/estimators.h"
#include "roboest/pipeline.h"
#include "roboest/friction.h"
#include "support.h"

/* A stage made from a one-stage pipeline text: the loader validates `params`, then create() is called with
 * our own ports and clock. */
typedef struct sh {
    rb_registry *reg;
    rb_pipeline *p;
    rb_params params;
    rb_port in[2], out[1];
    const rb_stage_type *type;
    void *state;
} sh;

static const char *const JOINTS[] = {"r_hip", "r_knee", "r_ankle"};

/* Load `type` with `params` (JSON object text) and create it on `n_in` inputs of width n (names JOINTS).
 * Returns create()'s status (the loader must accept the text). */
static int sh_create(sh *h, const char *type, const char *params, size_t n_in, size_t n, double dt,
                     const char *config_dir, rb_err *err)
{
    memset(h, 0, sizeof *h);
    cr_assert_eq(rb_registry_new(&h->reg, err), RB_OK);
    cr_assert_eq(rb_estimators_register(h->reg, err), RB_OK, "%s", err->msg);
    char text[4096];
    snprintf(text, sizeof text,
             "{\"clock\": {\"rate\": 100}, \"signals\": {\"a\": {\"channel\": \"a\"}, \"b\": {\"channel\": \"b\"}},"
             " \"stages\": [{\"id\": \"s\", \"type\": \"%s\", \"in\": %s, \"out\": {\"%s\": \"y\"}, \"params\": %s}]}",
             type,
             n_in == 1 ? (strcmp(type, "motor_torque") == 0 ? "{\"current\": \"a\"}" : "{\"velocity\": \"a\"}")
                       : "{\"motor_velocity\": \"a\", \"joint_velocity\": \"b\"}",
             strcmp(type, "motor_torque") == 0 ? "tau_m" : "tau_F", params);
    cr_assert_eq(rb_pipeline_load_text(text, strlen(text), "t.json", NULL, h->reg, &h->p, err), RB_OK, "%s: %s", text,
                 err->msg);
    h->type = h->p->stages[0].type;
    h->params = (rb_params){h->type, h->p->stages[0].params};
    for (size_t i = 0; i < n_in; i++)
        h->in[i] = (rb_port){n, JOINTS, NULL};
    rb_stage_setup setup = {"s", &h->params, h->in, h->out, dt, 0, NULL, NULL, config_dir};
    return h->type->create(&setup, &h->state, err);
}

static void sh_free(sh *h)
{
    if (h->state)
        h->type->destroy(h->state);
    rb_pipeline_free(h->p);
    rb_registry_free(h->reg);
}

/* Step the stage over T samples: inputs a (and b) T x n sample-major, outputs y T x n. */
static void sh_run(sh *h, size_t T, size_t n, const double *t, const double *a, const double *b, double *y)
{
    rb_err err;
    for (size_t k = 0; k < T; k++) {
        const double *in[2] = {a + k * n, b ? b + k * n : NULL};
        double *out[1] = {y + k * n};
        cr_assert_eq(h->type->step(h->state, k, t[k], in, out, &err), RB_OK, "%s", err.msg);
    }
}

static void expect_create_error(const char *type, const char *params, size_t n_in, size_t n, double dt,
                                const char *config_dir, const char *const *fragments)
{
    sh h;
    rb_err err;
    int rc = sh_create(&h, type, params, n_in, n, dt, config_dir, &err);
    cr_assert(rc != RB_OK, "%s accepted %s", type, params);
    cr_assert_null(h.state);
    cr_assert_null(strchr(err.msg, '\n'));
    cr_assert(strstr(err.msg, "stage s"), "%s", err.msg);
    for (const char *const *f = fragments; *f; f++)
        cr_assert(strstr(err.msg, *f), "'%s' not in: %s", *f, err.msg);
    sh_free(&h);
}

/* Steps allocate nothing (C library and OpenBLAS included). */
static void expect_no_allocation(sh *h, size_t T, size_t n, const double *t, const double *a, const double *b,
                                 double *y)
{
    if (!test_alloc_count_works())
        return;
    test_alloc_count_init();
    rb_err err;
    test_alloc_counting = 1;
    test_alloc_count = 0;
    for (size_t k = 0; k < T; k++) {
        const double *in[2] = {a + k * n, b ? b + k * n : NULL};
        double *out[1] = {y + k * n};
        h->type->step(h->state, k, t[k], in, out, &err);
    }
    test_alloc_counting = 0;
    cr_assert_eq(test_alloc_count, 0, "%s: %ld allocations in %zu steps", h->type->name, test_alloc_count, T);
}

/* ---- motor_torque ------------------------------------------------------------------------------- */

Test(estimators_friction, motor_torque_is_kt_R_I)
{
    enum { T = 50, N = 3 };
    double t[T], I[T * N], y[T * N];
    for (int k = 0; k < T; k++) {
        t[k] = 0.01 * k;
        for (int i = 0; i < N; i++)
            I[k * N + i] = sin(0.3 * k + i) * (i + 1);
    }
    I[7 * N + 1] = NAN;
    sh h;
    rb_err err;
    cr_assert_eq(sh_create(&h, "motor_torque", "{\"k_t\": [0.05, 0.04, 0.11], \"R\": [-160]}", 1, N, 0.01, ".", &err),
                 RB_OK, "%s", err.msg);
    cr_assert_eq(h.out[0].width, N);
    cr_assert_str_eq(h.out[0].names[2], "r_ankle");
    cr_assert_str_eq(h.out[0].units[0], "N m");
    sh_run(&h, T, N, t, I, NULL, y);
    const double kt[N] = {0.05, 0.04, 0.11};
    for (int k = 0; k < T; k++)
        for (int i = 0; i < N; i++) {
            if (k == 7 && i == 1) {
                cr_assert(isnan(y[k * N + i]), "NaN passes through");
                continue;
            }
            cr_assert(fabs(y[k * N + i] - kt[i] * -160 * I[k * N + i]) <= 1e-15 * fabs(y[k * N + i]) + 1e-300);
        }
    expect_no_allocation(&h, T, N, t, I, NULL, y);
    sh_free(&h);
    expect_create_error("motor_torque", "{\"k_t\": [0.05, 0.04], \"R\": [100]}", 1, N, 0.01, ".",
                        (const char *const[]){"k_t has 2 values for 3 elements", NULL});
    expect_create_error("motor_torque", "{\"k_t\": [0.05], \"R\": [100, 0, 100]}", 1, N, 0.01, ".",
                        (const char *const[]){"R[1] is 0", NULL});
}

/* ---- friction_model ----------------------------------------------------------------------------- */

static double sgn(double v) { return (v > 0) - (v < 0); }

/* Velocities crossing zero slowly (through the Stribeck region) and fast. */
static double vel(size_t k, size_t i)
{
    return 0.4 * sin(0.013 * (double)k + (double)i) + 0.02 * sin(0.21 * (double)k);
}

Test(estimators_friction, friction_model_static_curves_match_their_formulas)
{
    enum { T = 800, N = 2 };
    double t[T], v[T * N], y[T * N];
    for (size_t k = 0; k < T; k++) {
        t[k] = 0.001 * (double)k;
        for (size_t i = 0; i < N; i++)
            v[k * N + i] = vel(k, i);
    }
    const char *cases[] = {
        "{\"model\": \"coulomb_viscous\", \"F_c\": [0.3, 0.2], \"F_v\": [0.5]}",
        "{\"model\": \"scv\", \"F_c\": [0.306], \"F_s\": [0.601], \"F_v\": [0.673], \"v_s\": [0.0094, 0.02]}",
        "{\"model\": \"scv\", \"F_c\": [0.306], \"F_s\": [0.601], \"F_v\": [0.673], \"v_s\": [0.0094], \"v_eps\": [0]}",
        "{\"model\": \"tanh6\", \"g1\": [0.7], \"g2\": [100], \"g3\": [10], \"g4\": [0.6, 0.5], \"g5\": [100], "
        "\"g6\": [0.9]}",
    };
    for (int c = 0; c < 4; c++) {
        sh h;
        rb_err err;
        cr_assert_eq(sh_create(&h, "friction_model", cases[c], 1, N, 0.001, ".", &err), RB_OK, "%s", err.msg);
        sh_run(&h, T, N, t, v, NULL, y);
        for (size_t k = 0; k < T; k++)
            for (size_t i = 0; i < N; i++) {
                double x = v[k * N + i], want;
                if (c == 0)
                    want = (i ? 0.2 : 0.3) * sgn(x) + 0.5 * x;
                else if (c == 3)
                    want = 0.7 * (tanh(100 * x) - tanh(10 * x)) + (i ? 0.5 : 0.6) * tanh(100 * x) + 0.9 * x;
                else {
                    double vs = (i && c == 1) ? 0.02 : 0.0094, S = c == 1 ? tanh(x / (vs / 10)) : sgn(x);
                    want = (0.306 + (0.601 - 0.306) * exp(-(x / vs) * (x / vs))) * S + 0.673 * x;
                }
                cr_assert(fabs(y[k * N + i] - want) <= 1e-14, "case %d k %zu i %zu: %.17g vs %.17g", c, k, i,
                          y[k * N + i], want);
            }
        expect_no_allocation(&h, T, N, t, v, NULL, y);
        sh_free(&h);
    }
}

/* dz/dt = v - sigma0 |v| z / g(v) with v held at v_k over (t_{k-1}, t_k], integrated by RK4 with 200
 * substeps; tau = sigma0 z + sigma1 dz/dt + F_v v. */
static double lugre_rk4(double *z, double v, double dt, const double p[6])
{
    double Fc = p[0], Fs = p[1], Fv = p[2], vs = p[3], s0 = p[4], s1 = p[5];
    double g = Fc + (Fs - Fc) * exp(-(v / vs) * (v / vs)), a = s0 * fabs(v) / g;
    double h = dt / 200;
    for (int i = 0; i < 200; i++) {
        double k1 = v - a * *z, k2 = v - a * (*z + h / 2 * k1), k3 = v - a * (*z + h / 2 * k2),
               k4 = v - a * (*z + h * k3);
        *z += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
    }
    return s0 * *z + s1 * (v - a * *z) + Fv * v;
}

Test(estimators_friction, friction_model_lugre_matches_a_fine_integration)
{
    enum { T = 3000, N = 2 };
    double t[T], v[T * N], y[T * N];
    for (size_t k = 0; k < T; k++) { /* a jittery clock around 1 ms */
        t[k] = 0.001 * (double)k + 0.0002 * sin(1.3 * (double)k);
        for (size_t i = 0; i < N; i++)
            v[k * N + i] = vel(k, i);
    }
    v[100 * N + 1] = NAN;
    sh h;
    rb_err err;
    cr_assert_eq(sh_create(&h, "friction_model",
                           "{\"model\": \"lugre\", \"F_c\": [0.3], \"F_s\": [0.6], \"F_v\": [0.7], \"v_s\": [0.01], "
                           "\"sigma0\": [100, 2000], \"sigma1\": [0.5]}",
                           1, N, 0.001, ".", &err),
                 RB_OK, "%s", err.msg);
    sh_run(&h, T, N, t, v, NULL, y);
    double z[N] = {0, 0}, worst = 0;
    for (size_t k = 0; k < T; k++)
        for (size_t i = 0; i < N; i++) {
            const double p[6] = {0.3, 0.6, 0.7, 0.01, i ? 2000 : 100, 0.5};
            double x = v[k * N + i];
            if (!isfinite(x)) {
                cr_assert(isnan(y[k * N + i]), "NaN velocity gives NaN");
                continue;
            }
            double want = lugre_rk4(&z[i], x, k ? t[k] - t[k - 1] : 0, p);
            worst = fmax(worst, fabs(y[k * N + i] - want));
            cr_assert(fabs(y[k * N + i] - want) <= 1e-9, "k %zu i %zu: %.17g vs %.17g", k, i, y[k * N + i], want);
        }
    cr_log_info("lugre vs RK4: largest difference %.3g N m", worst);
    sh_free(&h);
}

Test(estimators_friction, friction_model_errors_name_the_parameter)
{
    /* an empty array is an absent parameter (the resolved configuration lists every parameter) */
    sh h;
    rb_err err;
    cr_assert_eq(sh_create(&h, "friction_model",
                           "{\"model\": \"coulomb_viscous\", \"F_c\": [0.3], \"F_v\": [0.7], \"g1\": [], "
                           "\"v_eps\": []}",
                           1, 3, 0.01, ".", &err),
                 RB_OK, "%s", err.msg);
    sh_free(&h);
    expect_create_error("friction_model", "{\"model\": \"scv\", \"F_c\": [0.3], \"F_s\": [0.6], \"F_v\": [0.7]}", 1, 3,
                        0.01, ".", (const char *const[]){"model scv needs v_s", NULL});
    expect_create_error("friction_model",
                        "{\"model\": \"coulomb_viscous\", \"F_c\": [0.3], \"F_v\": [0.7], \"g1\": [1]}", 1, 3, 0.01,
                        ".", (const char *const[]){"g1 is not a parameter of model coulomb_viscous", NULL});
    expect_create_error("friction_model", "{\"model\": \"coulomb_viscous\", \"F_c\": [0.3, 0.2], \"F_v\": [0.7]}", 1, 3,
                        0.01, ".", (const char *const[]){"F_c has 2 values for 3 elements", NULL});
    expect_create_error(
        "friction_model",
        "{\"model\": \"scv\", \"F_c\": [0.3, 0.3, 0.7], \"F_s\": [0.6], \"F_v\": [0.7], \"v_s\": [0.01]}", 1, 3, 0.01,
        ".", (const char *const[]){"element r_ankle", "F_s", "F_c", NULL});
}

/* ---- friction_pinn ------------------------------------------------------------------------------ */

enum { PH = 4 };

/* A two-joint network file (r_hip, r_knee; H 4, 9/6 hidden units, random weights) at 1 ms in dir. */
static char *write_net(const char *dir, rb_friction_net_file **keep)
{
    rb_friction_net_file *f;
    rb_err err;
    cr_assert_eq(rb_friction_net_file_new(&f, &err), RB_OK);
    f->sample_period = 0.001;
    rb_rng rng;
    rb_rng_seed(&rng, 77);
    for (int j = 0; j < 2; j++) {
        rb_friction_net_joint *e;
        cr_assert_eq(rb_friction_net_file_add(f, JOINTS[j], &e, &err), RB_OK);
        e->H = PH;
        cr_assert_eq(rb_friction_net_alloc(&e->net, 2 * PH, 9, 6, &err), RB_OK);
        for (size_t i = 0; i < e->net.n_params; i++)
            e->net.theta[i] = 0.5 * rb_rng_normal(&rng);
        for (size_t i = 0; i < 2 * PH; i++)
            e->net.mean[i] = 0.1 * rb_rng_normal(&rng), e->net.iqr[i] = i < PH ? 30 : 0.3;
        cr_assert_eq(rb_friction_preset("ergocub_r_knee", &e->scv, &err), RB_OK);
        e->scv.scv.v_eps = 0.001;
        rb_friction_net_train_opts_init(&e->train);
    }
    char *path = malloc(strlen(dir) + 16);
    sprintf(path, "%s/net.json", dir);
    cr_assert_eq(rb_friction_net_file_write(f, path, true, &err), RB_OK, "%s", err.msg);
    *keep = f;
    return path;
}

/* Joint velocity v and rotor-side motor velocity w = -100 v (+ a little slip) for 2 joints. */
static void pinn_inputs(size_t T, double *t, double *w, double *v)
{
    for (size_t k = 0; k < T; k++) {
        t[k] = 0.001 * (double)k;
        for (size_t i = 0; i < 2; i++) {
            v[k * 2 + i] = vel(k, i);
            w[k * 2 + i] = -100 * v[k * 2 + i] + 0.3 * sin(0.05 * (double)k);
        }
    }
}

Test(estimators_friction, friction_pinn_is_the_network_on_the_histories)
{
    enum { T = 300 };
    char *dir = test_temp_dir();
    rb_friction_net_file *f;
    free(write_net(dir, &f));
    double t[T], w[T * 2], v[T * 2], y[T * 2], x[2 * PH], work[64];
    pinn_inputs(T, t, w, v);
    w[150 * 2 + 1] = NAN; /* restarts joint 1's history at k = 150 */
    const char *fills[3] = {"zero", "model", "nan"};
    for (int mode = 0; mode < 3; mode++) {
        char params[256];
        snprintf(params, sizeof params, "{\"network\": \"net.json\", \"history_fill\": \"%s\"%s}", fills[mode],
                 mode == 1 ? ", \"H\": 4" : "");
        sh h;
        rb_err err;
        cr_assert_eq(sh_create(&h, "friction_pinn", params, 2, 2, 0.001, dir, &err), RB_OK, "%s", err.msg);
        cr_assert_str_eq(h.out[0].names[1], "r_knee");
        cr_assert_str_eq(h.out[0].units[1], "N m");
        sh_run(&h, T, 2, t, w, v, y);
        for (size_t k = 0; k < T; k++)
            for (size_t i = 0; i < 2; i++) {
                const rb_friction_net_joint *e = &f->joints[i];
                bool full = k >= PH - 1 && !(i == 1 && k >= 150 && k < 150 + PH);
                double got = y[k * 2 + i];
                if (!full) {
                    double want = mode == 0 ? 0 : mode == 1 ? rb_friction_eval(&e->scv, v[k * 2 + i]) : NAN;
                    cr_assert(got == want || (isnan(got) && isnan(want)), "mode %d k %zu i %zu: %g vs %g", mode, k, i,
                              got, want);
                    continue;
                }
                for (size_t j = 0; j < PH; j++) { /* oldest first: sample k - PH + 1 + j */
                    x[j] = w[(k - PH + 1 + j) * 2 + i];
                    x[PH + j] = v[(k - PH + 1 + j) * 2 + i];
                }
                double want = rb_friction_net_forward(&e->net, x, work);
                cr_assert(fabs(got - want) <= 1e-5 * fmax(1, fabs(want)), "k %zu i %zu: %.17g vs %.17g", k, i, got,
                          want);
            }
        expect_no_allocation(&h, T, 2, t, w, v, y);
        sh_free(&h);
    }
    rb_friction_net_file_free(f);
    test_remove_tree(dir);
}

/* friction_pinn's block step (the runner's blocks of samples) gives the bits of step() per sample, in blocks of
 * every size around its own chunk, with a NaN restarting one joint's history and each history_fill; and allocates
 * nothing. */
Test(estimators_friction, friction_pinn_block_step_gives_the_bits_of_the_sample_steps)
{
    enum { T = 400 };
    char *dir = test_temp_dir();
    rb_friction_net_file *f;
    free(write_net(dir, &f));
    double t[T], w[T * 2], v[T * 2], y1[T * 2], y2[T * 2];
    pinn_inputs(T, t, w, v);
    w[150 * 2 + 1] = NAN, v[211 * 2] = NAN;
    const size_t sizes[] = {1, 2, 63, 64, 65, 128, 7, 40, 1000}; /* around the block; the last: what is left */
    const char *fills[3] = {"zero", "model", "nan"};
    for (int mode = 0; mode < 3; mode++) {
        char params[256];
        snprintf(params, sizeof params, "{\"network\": \"net.json\", \"history_fill\": \"%s\"}", fills[mode]);
        sh a, b;
        rb_err err;
        cr_assert_eq(sh_create(&a, "friction_pinn", params, 2, 2, 0.001, dir, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(sh_create(&b, "friction_pinn", params, 2, 2, 0.001, dir, &err), RB_OK, "%s", err.msg);
        cr_assert_not_null(b.type->step_block);
        sh_run(&a, T, 2, t, w, v, y1);
        memset(y2, 0, sizeof y2);
        const size_t in_stride[2] = {2, 2}, out_stride[1] = {2};
        size_t failed = 0, calls = 0;
        bool counting = test_alloc_count_works();
        if (counting)
            test_alloc_count_init();
        test_alloc_count = 0;
        for (size_t k = 0, s = 0; k < T; k += sizes[s++ % 9]) {
            size_t count = T - k < sizes[s % 9] ? T - k : sizes[s % 9];
            const double *in[2] = {w + 2 * k, v + 2 * k};
            double *out[1] = {y2 + 2 * k};
            test_alloc_counting = counting;
            int rc = b.type->step_block(b.state, k, count, t + k, in, in_stride, out, out_stride, &failed, &err);
            test_alloc_counting = 0;
            cr_assert_eq(rc, RB_OK);
            calls++;
        }
        cr_assert_eq(calls, 9);
        cr_assert_eq(test_alloc_count, 0, "the block step allocated %ld times", test_alloc_count);
        cr_assert(memcmp(y1, y2, sizeof y1) == 0, "history_fill %s: the block step's outputs differ", fills[mode]);
        sh_free(&a);
        sh_free(&b);
    }
    rb_friction_net_file_free(f);
    test_remove_tree(dir);
}

/* The output at k never depends on inputs after k: change everything from k0 on and compare up to k0. */
Test(estimators_friction, stages_are_causal)
{
    enum { T = 200, K0 = 120 };
    char *dir = test_temp_dir();
    rb_friction_net_file *f;
    free(write_net(dir, &f));
    double t[T], w[T * 2], v[T * 2], w2[T * 2], v2[T * 2], y1[T * 2], y2[T * 2];
    pinn_inputs(T, t, w, v);
    memcpy(w2, w, sizeof w);
    memcpy(v2, v, sizeof v);
    for (size_t k = K0 + 1; k < T; k++)
        for (size_t i = 0; i < 2; i++)
            w2[k * 2 + i] = -w[k * 2 + i] + 5, v2[k * 2 + i] = 3 * v[k * 2 + i] - 0.1;
    const char *types[3] = {"friction_pinn", "friction_model", "motor_torque"};
    const char *params[3] = {"{\"network\": \"net.json\"}",
                             "{\"model\": \"lugre\", \"F_c\": [0.3], \"F_s\": [0.6], \"F_v\": [0.7], \"v_s\": [0.01], "
                             "\"sigma0\": [100], \"sigma1\": [0.5]}",
                             "{\"k_t\": [0.05], \"R\": [100]}"};
    for (int s = 0; s < 3; s++) {
        size_t n_in = s == 0 ? 2 : 1;
        for (int run = 0; run < 2; run++) {
            sh h;
            rb_err err;
            cr_assert_eq(sh_create(&h, types[s], params[s], n_in, 2, 0.001, dir, &err), RB_OK, "%s", err.msg);
            const double *a = s == 0 ? (run ? w2 : w) : (run ? v2 : v), *b = s == 0 ? (run ? v2 : v) : NULL;
            sh_run(&h, T, 2, t, a, b, run ? y2 : y1);
            sh_free(&h);
        }
        cr_assert_eq(memcmp(y1, y2, (K0 + 1) * 2 * sizeof *y1), 0, "%s: outputs up to k0 changed", types[s]);
        cr_assert_neq(memcmp(y1, y2, sizeof y1), 0, "%s: later inputs must matter", types[s]);
    }
    rb_friction_net_file_free(f);
    test_remove_tree(dir);
}

Test(estimators_friction, friction_pinn_errors_name_the_file_and_item)
{
    char *dir = test_temp_dir();
    rb_friction_net_file *f;
    char *path = write_net(dir, &f);
    expect_create_error("friction_pinn", "{\"network\": \"missing.json\"}", 2, 2, 0.001, dir,
                        (const char *const[]){"missing.json", NULL});
    expect_create_error("friction_pinn", "{\"network\": \"net.json\"}", 2, 3, 0.001, dir,
                        (const char *const[]){"net.json", "no network for joint 'r_ankle'", "r_hip, r_knee", NULL});
    expect_create_error("friction_pinn", "{\"network\": \"net.json\", \"joints\": [\"r_knee\"]}", 2, 2, 0.001, dir,
                        (const char *const[]){"joints names 1 joints for 2 elements", NULL});
    expect_create_error("friction_pinn", "{\"network\": \"net.json\", \"H\": 20}", 2, 2, 0.001, dir,
                        (const char *const[]){"net.json", "joint r_hip has H = 4", "H = 20", NULL});
    expect_create_error("friction_pinn", "{\"network\": \"net.json\"}", 2, 2, 0.01, dir,
                        (const char *const[]){"sample period of 0.001 s", "0.01 s", NULL});
    /* motor_velocity of another width */
    sh h;
    rb_err err;
    cr_assert_eq(rb_registry_new(&h.reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(h.reg, &err), RB_OK);
    rb_param_value vals[4] = {{.string = "net.json"}, {.count = 0}, {.string = "zero"}, {.number = 0}};
    rb_params params = {&rb_stage_friction_pinn, vals};
    rb_port in[2] = {{3, JOINTS, NULL}, {2, JOINTS, NULL}}, out[1];
    rb_stage_setup setup = {"s", &params, in, out, 0.001, 0, NULL, NULL, dir};
    void *state = NULL;
    cr_assert_eq(rb_stage_friction_pinn.create(&setup, &state, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "motor_velocity has 3 elements and joint_velocity 2"), "%s", err.msg);
    rb_registry_free(h.reg);
    /* the file's first layer one column short: the wrong input size, named with the file and the item */
    size_t len;
    char *text = test_slurp(path, &len), *at = strstr(text, "\"weights\": [\n          [");
    cr_assert_not_null(at);
    char *comma = strchr(at + 24, ',');
    memmove(at + 24, comma + 2, strlen(comma + 2) + 1); /* drop row 0's first value */
    FILE *fp = fopen(path, "w");
    fputs(text, fp);
    fclose(fp);
    expect_create_error("friction_pinn", "{\"network\": \"net.json\"}", 2, 2, 0.001, dir,
                        (const char *const[]){"net.json", "joints[0] (r_hip)", "layers[0].weights row 0 has 7 values",
                                              "2 H = 8", NULL});
    free(text);
    free(path);
    rb_friction_net_file_free(f);
    test_remove_tree(dir);
}

/* In a pipeline file, "network" is relative to that file's folder, whatever the working directory. */
Test(estimators_friction, friction_pinn_network_path_is_relative_to_the_pipeline)
{
    char *dir = test_temp_dir();
    rb_friction_net_file *f;
    free(write_net(dir, &f));
    char cfg[512], sub[512];
    snprintf(sub, sizeof sub, "%s/configs", dir);
    cr_assert_eq(mkdir(sub, 0755), 0);
    snprintf(cfg, sizeof cfg, "%s/configs/p.json", dir);
    FILE *fp = fopen(cfg, "w");
    fputs("{\"clock\": {\"rate\": 1000}, \"signals\": {\"w\": {\"channel\": \"w\"}, \"v\": {\"channel\": \"v\"}},\n"
          " \"stages\": [{\"id\": \"pinn\", \"type\": \"friction_pinn\", \"in\": {\"motor_velocity\": \"w\", "
          "\"joint_velocity\": \"v\"}, \"out\": {\"tau_F\": \"tau_F\"}, \"params\": {\"network\": \"../net.json\"}}],\n"
          " \"outputs\": [{\"path\": \"o.h5\", \"signals\": [\"tau_F\"]}]}\n",
          fp);
    fclose(fp);
    rb_registry *reg;
    rb_pipeline *p;
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK);
    cr_assert_eq(rb_pipeline_load(cfg, reg, &p, &err), RB_OK, "%s", err.msg);
    enum { T = 50 };
    double t[T], w[T * 2], v[T * 2];
    pinn_inputs(T, t, w, v);
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    cr_assert_eq(rb_log_add_channel_copy(log, "w", T, 2, t, w, JOINTS, NULL, &err), RB_OK);
    cr_assert_eq(rb_log_add_channel_copy(log, "v", T, 2, t, v, JOINTS, NULL, &err), RB_OK);
    rb_run_result *res;
    cr_assert_eq(rb_pipeline_run_log(p, log, NULL, 0, NULL, &res, &err), RB_OK, "%s", err.msg);
    const rb_run_signal *sig = rb_run_result_signal(res, "tau_F");
    cr_assert_not_null(sig);
    cr_assert_eq(sig->data[0], 0.0, "history not full yet: zero");
    double x[2 * PH], work[64];
    size_t k = T - 1;
    for (size_t j = 0; j < PH; j++)
        x[j] = w[(k - PH + 1 + j) * 2 + 1], x[PH + j] = v[(k - PH + 1 + j) * 2 + 1];
    double want = rb_friction_net_forward(&f->joints[1].net, x, work);
    cr_assert(fabs(sig->data[k * 2 + 1] - want) <= 1e-5 * fmax(1, fabs(want)), "%g vs %g", sig->data[k * 2 + 1], want);
    rb_run_result_free(res);
    rb_log_free(log);
    rb_pipeline_free(p);
    rb_registry_free(reg);
    rb_friction_net_file_free(f);
    test_remove_tree(dir);
}
