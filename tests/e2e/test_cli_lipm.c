/* `roboest run` with the lipm_com stage on a synthetic walking log written here (tests/unit/lipm_synth.h: the exact
 * LIPM CoM of a ZMP moving between two feet; the feet's wrenches at the soles carrying the robot's weight with that
 * ZMP, an upright IMU reading the CoM's acceleration, the feet's positions and the gait phase): both forms against
 * the truth, the test-only ZMP offset, both feet unloaded (counted and held), and the refusals (one line, exit 3, no
 * output). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/lipm_synth.h"
#include "harness.h"
#include "roboest/io.h"
#include "roboest/model.h"

#define URDF RB_SOURCE "/datasets/humanoid_lower_body.urdf"
#define ZC 0.8
#define G 9.81
#define DT 0.002
#define DUR 8.0
#define MASS 53.7

typedef struct log_opts {
    double unload_from, unload_to; /* both feet's wrenches 0 in [from, to) (0, 0: never) */
    size_t bad_phase_at;           /* phase 3 at this sample (0: never) */
    size_t zero_quat_at;           /* a zero quaternion at this sample (0: never) */
} log_opts;

static lipm_synth g_s;

static void add(rb_log *log, const char *name, size_t n, const double *t, const double *data)
{
    rb_err err;
    cr_assert_eq(rb_log_add_channel_copy(log, name, g_s.n, n, t, data, NULL, NULL, &err), RB_OK, "%s", err.msg);
}

static char *write_log(const char *dir, const log_opts *o)
{
    if (!g_s.n)
        cr_assert_eq(ls_make(&g_s, DUR, DT, ZC, G), 0);
    rb_err err;
    rb_model *m = NULL;
    cr_assert_eq(rb_model_load_urdf(URDF, NULL, &m, &err), RB_OK, "%s", err.msg);
    size_t n = m->n_dofs, N = g_s.n;
    double *q = calloc(N * n, sizeof *q), *quat = calloc(4 * N, sizeof *quat), *acc = calloc(3 * N, sizeof *acc),
           *gyro = calloc(3 * N, sizeof *gyro), *wr = calloc(12 * N, sizeof *wr), *feet = calloc(6 * N, sizeof *feet),
           *phase = calloc(N, sizeof *phase);
    const double mg = MASS * G;
    for (size_t k = 0; k < N; k++) {
        quat[4 * k] = o->zero_quat_at && k == o->zero_quat_at ? 0 : 1;
        acc[3 * k] = g_s.cdd[2 * k], acc[3 * k + 1] = g_s.cdd[2 * k + 1], acc[3 * k + 2] = G;
        const double *f = g_s.foot + 4 * k, *p = g_s.p + 2 * k;
        for (int i = 0; i < 2; i++)
            feet[6 * k + 3 * i] = f[2 * i], feet[6 * k + 3 * i + 1] = f[2 * i + 1];
        /* weights by the ZMP's place between the feet (y), both CoPs at the ZMP's x */
        double a = (p[1] - f[3]) / (f[1] - f[3]);
        a = a < 0 ? 0 : a > 1 ? 1 : a;
        double F[2] = {a * mg, (1 - a) * mg};
        for (int i = 0; i < 2; i++) {
            double cx = p[0] - f[2 * i], cy = 0; /* the CoP relative to the sole, world axes */
            double *w = wr + 12 * k + 6 * i;
            w[2] = F[i], w[3] = F[i] * cy, w[4] = -F[i] * cx;
        }
        if (g_s.t[k] >= o->unload_from && g_s.t[k] < o->unload_to)
            memset(wr + 12 * k, 0, 12 * sizeof *wr);
        phase[k] = o->bad_phase_at && k == o->bad_phase_at ? 3 : g_s.phase[k];
    }
    rb_log *log = NULL;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    add(log, "q", n, g_s.t, q);
    add(log, "quat", 4, g_s.t, quat);
    add(log, "acc", 3, g_s.t, acc);
    add(log, "gyro", 3, g_s.t, gyro);
    add(log, "wrenches", 12, g_s.t, wr);
    add(log, "feet", 6, g_s.t, feet);
    add(log, "phase", 1, g_s.t, phase);
    add(log, "com", 2, g_s.t, g_s.c);
    char *path = test_path(dir, "log.mat");
    rb_write_opts wo = {RB_OUT_MAT5, true, NULL};
    cr_assert_eq(rb_log_write(log, path, &wo, &err), RB_OK, "%s", err.msg);
    rb_log_free(log);
    free(q), free(quat), free(acc), free(gyro), free(wr), free(feet), free(phase);
    rb_model_free(m);
    return path;
}

#define BASE_PARAMS                                                                                                    \
    "\"z_c\": 0.8, \"imu_frame\": \"root_link\", \"feet\": [\"l_sole\", \"r_sole\"], \"wrench_rep\": \"mixed\", "      \
    "\"imu_position\": [0, 0, 0]"

static char *write_config(const char *dir, const char *params, bool phase)
{
    char *path = test_path(dir, "p.json"), text[4096];
    snprintf(text, sizeof text,
             "{\"model\": {\"urdf\": \"%s\", \"floating\": true}, \"clock\": {\"channel\": \"q\"},\n"
             " \"signals\": {\"q\": {\"channel\": \"q\"}, \"quat\": {\"channel\": \"quat\"}, \"acc\": {\"channel\": "
             "\"acc\"}, \"gyro\": {\"channel\": \"gyro\"}, \"wr\": {\"channel\": \"wrenches\"}, \"feet\": "
             "{\"channel\": \"feet\"}, \"phase\": {\"channel\": \"phase\", \"interp\": \"hold\"}},\n"
             " \"stages\": [{\"id\": \"lipm\", \"type\": \"lipm_com\", \"in\": {\"q\": \"q\", \"orientation\": "
             "\"quat\", \"acc\": \"acc\", \"gyro\": \"gyro\", \"wrenches\": \"wr\", \"feet_position\": \"feet\"%s},\n"
             "   \"out\": {\"position\": \"c\", \"offset\": \"off\", \"corrected\": \"cc\", \"support\": \"sup\"}, "
             "\"params\": {%s}}],\n"
             " \"outputs\": [{\"path\": \"est.mat\", \"signals\": [\"c\", \"off\", \"cc\", \"sup\"]}]}\n",
             URDF, phase ? ", \"phase\": \"phase\"" : "", params);
    test_write_file(path, text);
    return path;
}

typedef struct outcome {
    cli_result r;
    char *dir, *out_dir;
} outcome;

static outcome run_case(const log_opts *lo, const char *params, bool phase)
{
    outcome oc;
    oc.dir = test_tmpdir();
    char *log = write_log(oc.dir, lo), *cfg = write_config(oc.dir, params, phase);
    oc.out_dir = test_path(oc.dir, "out");
    const char *args[] = {"run", cfg, log, "-o", oc.out_dir, NULL};
    oc.r = cli_run(NULL, args);
    free(log), free(cfg);
    return oc;
}

static void done(outcome *oc)
{
    cli_result_free(&oc->r);
    free(oc->dir), free(oc->out_dir);
}

/* RMSE of channel `name` (2 elements) minus the truth CoM minus shift, x axis, over [t0, t1). */
static double rmse_x(const outcome *oc, const char *name, double shift, double t0, double t1)
{
    char *est = test_path(oc->out_dir, "est.mat");
    rb_log *e = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(est, &e, &err), RB_OK, "%s", err.msg);
    const rb_channel *c = rb_log_find(e, name);
    cr_assert(c && c->n_elements == 2 && c->n_samples == g_s.n, "%s", name);
    double s = 0;
    size_t m = 0;
    for (size_t k = 0; k < g_s.n; k++)
        if (g_s.t[k] >= t0 && g_s.t[k] < t1) {
            double d = c->data[2 * k] - g_s.c[2 * k] - shift;
            s += d * d, m++;
        }
    rb_log_free(e);
    free(est);
    return sqrt(s / m);
}

static double value_at(const outcome *oc, const char *name, size_t el, double t)
{
    char *est = test_path(oc->out_dir, "est.mat");
    rb_log *e = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(est, &e, &err), RB_OK, "%s", err.msg);
    const rb_channel *c = rb_log_find(e, name);
    cr_assert(c);
    double v = c->data[c->n_elements * (size_t)llround(t / DT) + el];
    rb_log_free(e);
    free(est);
    return v;
}

Test(cli_lipm, both_forms_track_the_truth)
{
    const log_opts lo = {0};
    outcome a = run_case(&lo, BASE_PARAMS ", \"form\": 1", true), b = run_case(&lo, BASE_PARAMS ", \"form\": 2", true);
    cr_assert_eq(a.r.status, 0, "exit %d: %s", a.r.status, a.r.err);
    cr_assert_eq(b.r.status, 0, "exit %d: %s", b.r.status, b.r.err);
    double r1 = rmse_x(&a, "c", 0, 1, DUR), r2 = rmse_x(&b, "cc", 0, 1, DUR);
    cr_log_info("noise-free log: form 1 RMSE %.3f mm, form 2 corrected %.3f mm", 1e3 * r1, 1e3 * r2);
    cr_expect_lt(r1, 0.002, "form 1 RMSE %g m", r1);
    cr_expect_lt(r2, 0.002, "form 2 RMSE %g m", r2);
    /* the phase names the support: in left support (t = 1.8 s) only the left foot counts */
    cr_expect_eq(value_at(&a, "sup", 0, 1.8), 1);
    cr_expect_eq(value_at(&a, "sup", 1, 1.8), 0);
    done(&a), done(&b);
}

/* The thesis's 3.4.3 on the clean log through the test-only key: form 2's offset estimate finds the 35 mm. */
Test(cli_lipm, test_zmp_offset_is_estimated_by_form2)
{
    const log_opts lo = {0};
    outcome oc = run_case(&lo, BASE_PARAMS ", \"form\": 2, \"test_zmp_offset\": [0.035, 0]", false);
    cr_assert_eq(oc.r.status, 0, "exit %d: %s", oc.r.status, oc.r.err);
    double off = value_at(&oc, "off", 0, 5.0), r = rmse_x(&oc, "c", 0, 1, DUR);
    cr_log_info("offset at 5 s %.2f mm, position RMSE %.3f mm", 1e3 * off, 1e3 * r);
    cr_expect(fabs(off - 0.035) < 0.004, "offset %g m", off);
    cr_expect_lt(r, 0.002);
    done(&oc);
}

/* Both feet unloaded for 0.2 s: the run goes on, the samples are counted in the warnings, the estimate holds. */
Test(cli_lipm, unloaded_feet_are_counted)
{
    const log_opts lo = {.unload_from = 3.0, .unload_to = 3.2};
    outcome oc = run_case(&lo, BASE_PARAMS, false);
    cr_assert_eq(oc.r.status, 0, "exit %d: %s", oc.r.status, oc.r.err);
    cr_expect(strstr(oc.r.err, "100 of 4001 samples with no loaded foot") != NULL, "warnings: %s", oc.r.err);
    double r = rmse_x(&oc, "c", 0, 1, DUR);
    cr_expect_lt(r, 0.01, "RMSE %g m", r);
    done(&oc);
}

static void expect_refusal(const log_opts *lo, const char *params, bool phase, const char *const *words)
{
    outcome oc = run_case(lo, params, phase);
    cr_log_info("exit %d: %s", oc.r.status, oc.r.err);
    cr_expect_eq(oc.r.status, CLI_EXIT_INPUT, "exit %d: %s", oc.r.status, oc.r.err);
    cr_expect_eq(test_count_lines(oc.r.err), 1, "not one line: %s", oc.r.err);
    for (size_t i = 0; words[i]; i++)
        cr_expect(strstr(oc.r.err, words[i]) != NULL, "no '%s' in: %s", words[i], oc.r.err);
    cr_expect(!test_exists(oc.out_dir) || test_count_entries(oc.out_dir) == 0, "outputs left in %s", oc.out_dir);
    done(&oc);
}

Test(cli_lipm, refusals)
{
    const log_opts clean = {0};
    expect_refusal(&clean,
                   "\"z_c\": 0, \"imu_frame\": \"root_link\", \"feet\": [\"l_sole\", \"r_sole\"], \"wrench_rep\": "
                   "\"mixed\"",
                   false, (const char *const[]){"z_c", NULL});
    expect_refusal(&clean,
                   "\"z_c\": 0.8, \"imu_frame\": \"waist_imu_x\", \"feet\": [\"l_sole\", \"r_sole\"], \"wrench_rep\": "
                   "\"mixed\"",
                   false, (const char *const[]){"imu_frame", "waist_imu_x", NULL});
    expect_refusal(&clean, "\"z_c\": 0.8, \"imu_frame\": \"root_link\", \"feet\": [\"l_sole\", \"r_foot\"]", false,
                   (const char *const[]){"feet[1]", "r_foot", NULL});
    expect_refusal(&(log_opts){.bad_phase_at = 1234}, BASE_PARAMS, true,
                   (const char *const[]){"sample 1234", "phase 3", NULL});
    expect_refusal(&(log_opts){.zero_quat_at = 777}, BASE_PARAMS, false,
                   (const char *const[]){"sample 777", "zero norm", NULL});
}
