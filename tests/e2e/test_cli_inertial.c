/* `roboest run` with the inertial_ekf stage on small logs written here (.mat): the refusals (one line, exit code,
 * no output file) and the NaN paths that succeed. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/dynamics.h"
#include "roboest/io.h"

#define ARM RB_SOURCE "/datasets/arm_2ft.urdf"
#define T_N 600
#define T_DT 2e-3

typedef struct log_opts {
    const char *urdf;
    const char *body; /* payload on it (NULL: none) */
    double tau_scale; /* torques multiplied (1) */
    size_t big_joint; /* this joint's torque set to 1e308 (SIZE_MAX: none) */
    bool all_big;     /* every torque 1e308 */
    size_t repeat_at; /* timestamp k equal to k - 1 (0: none) */
    size_t contact_w; /* width of a "contacts" channel (0: none) */
} log_opts;

static void add(rb_log *log, const char *name, size_t n, const double *t, const double *data)
{
    rb_err err;
    cr_assert_eq(rb_log_add_channel_copy(log, name, T_N, n, t, data, NULL, NULL, &err), RB_OK, "%s", err.msg);
}

static char *write_log(const char *dir, const log_opts *o)
{
    rb_model_opts mo = {0};
    rb_model *m = NULL;
    rb_err err;
    cr_assert_eq(rb_model_load_urdf(o->urdf, &mo, &m, &err), RB_OK, "%s", err.msg);
    rb_dyn *ws = NULL;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    size_t n = m->n_dofs;
    if (o->body) {
        long b = rb_model_body_index(m, o->body);
        cr_assert(b > 0);
        double pi[10];
        memcpy(pi, m->bodies[b].inertia, sizeof pi);
        for (int a = 0; a < 10; a++)
            pi[a] *= 2.5; /* the same body, 2.5 times as dense */
        cr_assert_eq(rb_dyn_set_body_inertia(m, ws, (size_t)b, pi, &err), RB_OK, "%s", err.msg);
    }
    double *t = calloc(T_N, sizeof *t), *q = calloc(T_N * n, sizeof *q), *dq = calloc(T_N * n, sizeof *q),
           *ddq = calloc(T_N * n, sizeof *q), *tau = calloc(T_N * n, sizeof *q), *c = calloc(T_N * 8, sizeof *c);
    for (size_t k = 0; k < T_N; k++) {
        t[k] = (double)k * T_DT;
        if (o->repeat_at && k == o->repeat_at)
            t[k] = t[k - 1];
        for (size_t j = 0; j < n; j++) {
            double w = 1.3 + 0.7 * (double)j, a = 0.8 - 0.1 * (double)j, tt = (double)k * T_DT;
            q[k * n + j] = a * sin(w * tt + 0.4 * (double)j);
            dq[k * n + j] = a * w * cos(w * tt + 0.4 * (double)j);
            ddq[k * n + j] = -a * w * w * sin(w * tt + 0.4 * (double)j);
        }
        cr_assert_eq(rb_dyn_rnea(m, ws, q + k * n, dq + k * n, ddq + k * n, NULL, 0, tau + k * n, &err), RB_OK);
        for (size_t j = 0; j < n; j++) {
            tau[k * n + j] *= o->tau_scale;
            if (o->all_big || j == o->big_joint)
                tau[k * n + j] = 1e308;
        }
    }
    rb_log *log = NULL;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    add(log, "q", n, t, q);
    add(log, "dq", n, t, dq);
    add(log, "ddq", n, t, ddq);
    add(log, "tau", n, t, tau);
    if (o->contact_w)
        add(log, "contacts", o->contact_w, t, c);
    char *path = test_path(dir, "log.mat");
    rb_write_opts wo = {RB_OUT_MAT5, true, NULL};
    cr_assert_eq(rb_log_write(log, path, &wo, &err), RB_OK, "%s", err.msg);
    rb_log_free(log);
    free(t), free(q), free(dq), free(ddq), free(tau), free(c);
    rb_dyn_free(ws);
    rb_model_free(m);
    return path;
}

/* A pipeline on the log's channels: tau -> difference (offset, to make overflows) -> inertial_ekf (params, a JSON
 * fragment), the mass and the consistent flag written to est.csv. */
static char *write_config(const char *dir, const char *urdf, const char *params, const char *offset, bool contacts)
{
    char *path = test_path(dir, "p.json"), text[4096];
    snprintf(text, sizeof text,
             "{\"model\": {\"urdf\": \"%s\"}, \"clock\": {\"channel\": \"q\"},\n"
             " \"signals\": {\"q\": {\"channel\": \"q\"}, \"dq\": {\"channel\": \"dq\"}, \"ddq\": {\"channel\": "
             "\"ddq\"},\n  \"tau_raw\": {\"channel\": \"tau\"}%s},\n"
             " \"stages\": [{\"id\": \"neg\", \"type\": \"difference\", \"in\": {\"a\": \"tau_raw\"}, \"out\": "
             "{\"y\": \"tau\"}, \"params\": {\"offset\": %s}},\n"
             "  {\"id\": \"iekf\", \"type\": \"inertial_ekf\", \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"ddq\": "
             "\"ddq\", \"tau\": \"tau\"%s},\n   \"out\": {\"mass\": \"mass\", \"consistent\": \"cons\"}, \"params\": "
             "{%s}}],\n"
             " \"outputs\": [{\"path\": \"est.csv\", \"signals\": [\"mass\", \"cons\"]}],\n"
             " \"metrics\": [{\"estimate\": \"dq\", \"reference\": \"dq\"}], \"reports\": [\"report.md\"]}\n",
             urdf, contacts ? ", \"contacts\": {\"channel\": \"contacts\"}" : "", offset ? offset : "[0]",
             contacts ? ", \"contacts\": \"contacts\"" : "", params);
    test_write_file(path, text);
    return path;
}

typedef struct outcome {
    cli_result r;
    char *out_dir;
    char *dir;
} outcome;

static outcome run_case(const log_opts *lo, const char *params, const char *offset)
{
    outcome oc;
    oc.dir = test_tmpdir();
    char *log = write_log(oc.dir, lo), *cfg = write_config(oc.dir, lo->urdf, params, offset, lo->contact_w > 0);
    oc.out_dir = test_path(oc.dir, "out");
    const char *args[] = {"run", cfg, log, "-o", oc.out_dir, NULL};
    oc.r = cli_run(NULL, args);
    free(log), free(cfg);
    return oc;
}

static void expect_refusal(const outcome *oc, int code, const char *const *words)
{
    cr_log_info("exit %d: %s", oc->r.status, oc->r.err);
    cr_expect_eq(oc->r.status, code, "exit %d (want %d): %s", oc->r.status, code, oc->r.err);
    cr_expect_eq(test_count_lines(oc->r.err), 1, "not one line: %s", oc->r.err);
    for (size_t i = 0; words[i]; i++)
        cr_expect(strstr(oc->r.err, words[i]) != NULL, "no '%s' in: %s", words[i], oc->r.err);
    cr_expect(!test_exists(oc->out_dir) || test_count_entries(oc->out_dir) == 0, "outputs left in %s", oc->out_dir);
}

static void done(outcome *oc)
{
    cli_result_free(&oc->r);
    free(oc->out_dir);
    free(oc->dir);
}

static const log_opts ARM_LOG = {.urdf = ARM, .body = "forearm", .tau_scale = 1, .big_joint = SIZE_MAX};

Test(cli_inertial, unknown_body_is_refused_with_a_suggestion)
{
    outcome oc = run_case(&ARM_LOG, "\"bodies\": [\"forarm\"]", NULL);
    expect_refusal(&oc, CLI_EXIT_INPUT, (const char *const[]){"iekf", "forarm", "did you mean 'forearm'", NULL});
    done(&oc);
}

Test(cli_inertial, a_merged_link_is_refused_naming_its_body)
{
    outcome oc = run_case(&ARM_LOG, "\"bodies\": [\"tool_frame\"]", NULL);
    expect_refusal(&oc, CLI_EXIT_INPUT, (const char *const[]){"tool_frame", "merged into body 'hand'", NULL});
    done(&oc);
}

Test(cli_inertial, gate_probability_one_is_refused)
{
    outcome oc =
        run_case(&ARM_LOG, "\"bodies\": [\"forearm\"], \"gate\": \"probability\", \"gate_probability\": 1", NULL);
    expect_refusal(&oc, CLI_EXIT_INPUT, (const char *const[]){"iekf", "probability", NULL});
    done(&oc);
}

Test(cli_inertial, a_contact_input_of_the_wrong_width_is_refused_naming_it)
{
    log_opts lo = ARM_LOG;
    lo.contact_w = 4;
    outcome oc = run_case(&lo, "\"bodies\": [\"forearm\"], \"contacts\": [\"hand\"]", NULL);
    expect_refusal(&oc, CLI_EXIT_INPUT, (const char *const[]){"input contacts has 4 elements, expected 6", NULL});
    done(&oc);
}

Test(cli_inertial, repeated_timestamps_name_the_sample)
{
    log_opts lo = ARM_LOG;
    lo.repeat_at = 200;
    outcome oc = run_case(&lo, "\"bodies\": [\"forearm\"]", NULL);
    expect_refusal(&oc, CLI_EXIT_INPUT, (const char *const[]){"200", NULL});
    done(&oc);
}

/* A two-link URDF: link l1 with mass m1 and inertia i1, l2 with m2 and i2 (<inertia .../> elements). */
static char *small_urdf(const char *dir, double m1, const char *i1, double m2, const char *i2)
{
    char *path = test_path(dir, "two.urdf"), text[2048];
    snprintf(text, sizeof text,
             "<robot name=\"two\">\n"
             " <link name=\"base\"><inertial><mass value=\"1\"/><inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.1\" "
             "ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
             " <link name=\"l1\"><inertial><origin xyz=\"0 0 0.2\"/><mass value=\"%g\"/>%s</inertial></link>\n"
             " <link name=\"l2\"><inertial><origin xyz=\"0 0 0.2\"/><mass value=\"%g\"/>%s</inertial></link>\n"
             " <joint name=\"j1\" type=\"revolute\"><parent link=\"base\"/><child link=\"l1\"/><axis xyz=\"0 1 0\"/>"
             "<limit lower=\"-3\" upper=\"3\" effort=\"100\" velocity=\"10\"/></joint>\n"
             " <joint name=\"j2\" type=\"revolute\"><parent link=\"l1\"/><child link=\"l2\"/><origin xyz=\"0 0 0.4\"/>"
             "<axis xyz=\"1 0 0\"/><limit lower=\"-3\" upper=\"3\" effort=\"100\" velocity=\"10\"/></joint>\n"
             "</robot>\n",
             m1, i1, m2, i2);
    test_write_file(path, text);
    return path;
}

#define SOLID "<inertia ixx=\"0.02\" iyy=\"0.02\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>"

static void check_small(const char *body, double m1, const char *i1, double m2, const char *i2,
                        const char *const *words)
{
    char *dir = test_tmpdir(), *urdf = small_urdf(dir, m1, i1, m2, i2), params[64];
    log_opts lo = {.urdf = urdf, .tau_scale = 1, .big_joint = SIZE_MAX};
    snprintf(params, sizeof params, "\"bodies\": [\"%s\"]", body);
    outcome oc = run_case(&lo, params, NULL);
    expect_refusal(&oc, CLI_EXIT_INPUT, words);
    done(&oc);
    free(urdf), free(dir);
}

/* a flat plate (Izz = Ixx + Iyy): physical, but the pseudo-inertia is only semi-definite */
Test(cli_inertial, nominal_parameters_not_fully_consistent_are_refused)
{
    check_small("l2", 2, SOLID, 1, "<inertia ixx=\"0.01\" iyy=\"0.02\" izz=\"0.03\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>",
                (const char *const[]){"body l2", "not fully physically consistent", NULL});
}

Test(cli_inertial, zero_nominal_mass_is_refused)
{
    check_small("l1", 0, "<inertia ixx=\"0\" iyy=\"0\" izz=\"0\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>", 1, SOLID,
                (const char *const[]){"body l1", "mass", NULL});
}

Test(cli_inertial, an_overflowing_theta_is_a_numeric_error_naming_the_body)
{
    log_opts lo = ARM_LOG;
    lo.tau_scale = 1e6;
    outcome oc = run_case(&lo, "\"bodies\": [\"forearm\"], \"initial_var\": [100]", NULL);
    expect_refusal(&oc, CLI_EXIT_NUMERIC, (const char *const[]){"iekf", "sample", "body forearm", NULL});
    done(&oc);
}

Test(cli_inertial, a_covariance_losing_definiteness_names_the_stage_and_sample)
{
    outcome oc = run_case(&ARM_LOG, "\"bodies\": [\"forearm\"], \"process_var\": [1e308]", NULL);
    expect_refusal(&oc, CLI_EXIT_NUMERIC, (const char *const[]){"stage iekf", "sample", "not positive definite", NULL});
    done(&oc);
}

Test(cli_inertial, a_nan_torque_row_is_skipped_and_counted)
{
    log_opts lo = ARM_LOG;
    lo.big_joint = 2;
    outcome oc = run_case(&lo, "\"bodies\": [\"forearm\"], \"meas_var\": [0.01]", "[0, 0, -1e308, 0]");
    cr_expect_eq(oc.r.status, 0, "exit %d: %s", oc.r.status, oc.r.err);
    char want[128];
    snprintf(want, sizeof want, "%d rows skipped", T_N);
    cr_expect(strstr(oc.r.err, "stage iekf") && strstr(oc.r.err, want), "no '%s' in: %s", want, oc.r.err);
    char *csv = test_path(oc.out_dir, "est.csv");
    cr_expect(test_exists(csv));
    free(csv);
    /* the warning is in the run's report too */
    char *md = test_path(oc.out_dir, "report.md"), *text = test_read_file(md, NULL);
    cr_assert_not_null(text, "%s", md);
    const char *w = strstr(text, "## Warnings");
    cr_expect(w && strstr(w, "stage iekf") && strstr(w, want), "report.md: %s", text);
    free(text), free(md);
    done(&oc);
}

Test(cli_inertial, every_row_nan_only_predicts_and_keeps_the_prior)
{
    log_opts lo = ARM_LOG;
    lo.all_big = true;
    outcome oc = run_case(&lo, "\"bodies\": [\"forearm\"]", "[-1e308]");
    cr_expect_eq(oc.r.status, 0, "exit %d: %s", oc.r.status, oc.r.err);
    char want[128];
    snprintf(want, sizeof want, "0 updates, 0 gated (0.0 %%), 0 rows skipped (non-finite torque), %d predict-only",
             T_N);
    cr_expect(strstr(oc.r.err, want), "no '%s' in: %s", want, oc.r.err);
    char *csv = test_path(oc.out_dir, "est.csv"), *text = test_read_file(csv, NULL);
    cr_assert_not_null(text, "%s", csv);
    /* the forearm's nominal mass (1 kg) on the last line */
    char *last = strrchr(text, '\n');
    while (last && last > text && last[-1] != '\n')
        last--;
    cr_expect(last && strstr(last, ",1,1"), "last line: %s", last ? last : "(none)");
    free(text), free(csv);
    done(&oc);
}
