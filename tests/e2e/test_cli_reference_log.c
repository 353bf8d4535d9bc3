/* End-to-end: the reference in a separate truth file (`reference_log`), aligned by time: `roboest run` metrics and
 * `roboest compare` score each log against its own truth file named from a template, without merging files; the
 * clock samples the truth does not cover are left out and counted; an epoch clock against a zero-based one is an
 * input error until `time_offset` is given. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

/* The log: sensors/tau = (sin t + off, cos t + off / 2) at 100 Hz, t from t0 + 1 to t0 + 6 s. */
static void write_log(const char *path, double t0, double off)
{
    FILE *f = fopen(path, "w");
    fprintf(f, "time,sensors/tau:j1,sensors/tau:j2\n");
    for (int k = 0; k <= 500; k++) {
        double t = 1.0 + 0.01 * k;
        fprintf(f, "%.17g,%.17g,%.17g\n", t0 + t, sin(t) + off, cos(t) + off / 2);
    }
    fclose(f);
}

/* The truth: truth/tau = (sin t, cos t) at 1 kHz (another clock than the log's) over [t0 + from, t0 + 6] s. */
static void write_truth(const char *path, double t0, double from)
{
    FILE *f = fopen(path, "w");
    fprintf(f, "time,truth/tau:j1 [N m],truth/tau:j2 [N m]\n");
    for (int k = (int)lround(from * 1000); k <= 6000; k++) {
        double t = 0.001 * k;
        fprintf(f, "%.17g,%.17g,%.17g\n", t0 + t, sin(t), cos(t));
    }
    fclose(f);
}

typedef struct fixture {
    char *dir, *logs;
} fixture;

/* logs/a.csv with logs/a_truth.csv (all of it), logs/b.csv with logs/b_truth.csv (from 2 s: 100 log samples
 * uncovered); the truth's clock starts at truth_t0 (the logs' at 0). */
static fixture make_fixture(double truth_t0)
{
    fixture fx = {test_tmpdir(), NULL};
    fx.logs = test_path(fx.dir, "logs");
    cr_assert_eq(mkdir(fx.logs, 0700), 0);
    const char *names[4] = {"a.csv", "a_truth.csv", "b.csv", "b_truth.csv"};
    for (int i = 0; i < 4; i++) {
        char *p = test_path(fx.logs, names[i]);
        if (i % 2 == 0)
            write_log(p, 0, i == 0 ? 0.1 : 0.3);
        else
            write_truth(p, truth_t0, i == 1 ? 0 : 2);
        free(p);
    }
    return fx;
}

static void free_fixture(fixture *fx) { free(fx->dir), free(fx->logs); }

static const char *const PIPELINE =
    "{\"clock\": {\"rate\": 100}, \"signals\": {\"tau_hat\": {\"channel\": \"sensors/tau\"}},\n"
    " \"metrics\": [{\"estimate\": \"tau_hat\", \"reference\": \"truth/tau\", \"reference_log\": %s}],\n"
    " \"reports\": [\"report.json\"]}\n";

static void write_pipeline(const char *path, const char *reference_log)
{
    char text[1024];
    snprintf(text, sizeof text, PIPELINE, reference_log);
    test_write_file(path, text);
}

/* The RMSE of element `element` in report.json's metric rows. */
static double report_rmse(const char *report, const char *element)
{
    char *text = test_read_file(report, NULL);
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root, "%s", text);
    double rmse = NAN;
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(root, "rows"))
    {
        const cJSON *e = cJSON_GetObjectItem(row, "element");
        if (e && strcmp(e->valuestring, element) == 0)
            rmse = cJSON_GetObjectItem(row, "rmse")->valuedouble;
    }
    cJSON_Delete(root);
    free(text);
    return rmse;
}

Test(cli_reference_log, run_scores_against_the_truth_file_of_each_log)
{
    fixture fx = make_fixture(0);
    char *cfg = test_path(fx.dir, "run.json"), *out = test_path(fx.dir, "out");
    write_pipeline(cfg, "\"{log_dir}/{log_stem}_truth.csv\"");
    char *a = test_path(fx.logs, "a.csv");
    cli_result r = cli_run("/", (const char *[]){"run", cfg, a, "-o", out, "-q", NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "%s", r.err);
    cr_expect_null(strstr(r.err, "outside"), "a_truth covers the whole log: %s", r.err);
    cli_result_free(&r);
    char *report = test_path(out, "report.json");
    cr_expect(fabs(report_rmse(report, "j1") - 0.1) < 1e-4, "j1 RMSE %g", report_rmse(report, "j1"));
    cr_expect(fabs(report_rmse(report, "j2") - 0.05) < 1e-4, "j2 RMSE %g", report_rmse(report, "j2"));
    free(report);
    /* b's truth starts at 2 s: the log's 100 samples before are not scored, and said so */
    char *b = test_path(fx.logs, "b.csv");
    r = cli_run("/", (const char *[]){"run", cfg, b, "-o", out, "-q", "--force", NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "%s", r.err);
    cr_expect(strstr(r.err, "100 clock samples outside the span of truth/tau"), "%s", r.err);
    report = test_path(out, "report.json");
    cr_expect(fabs(report_rmse(report, "j1") - 0.3) < 1e-4, "j1 RMSE %g", report_rmse(report, "j1"));
    cli_result_free(&r);
    /* a path without placeholders is relative to the config file, whatever the working directory */
    write_pipeline(cfg, "\"logs/a_truth.csv\"");
    r = cli_run("/", (const char *[]){"run", cfg, a, "-o", out, "-q", "--force", NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "%s", r.err);
    cr_expect(fabs(report_rmse(report, "j1") - 0.1) < 1e-4);
    cli_result_free(&r);
    free(report), free(a), free(b), free(cfg), free(out);
    free_fixture(&fx);
}

Test(cli_reference_log, epoch_truth_needs_a_time_offset)
{
    fixture fx = make_fixture(1.7e9);
    char *cfg = test_path(fx.dir, "run.json"), *out = test_path(fx.dir, "out"), *a = test_path(fx.logs, "a.csv");
    write_pipeline(cfg, "\"{log_dir}/{log_stem}_truth.csv\"");
    cli_result r = cli_run(NULL, (const char *[]){"run", cfg, a, "-o", out, "-q", NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "a_truth.csv") && strstr(r.err, "time_offset") && strstr(r.err, "epoch"), "%s", r.err);
    char *report = test_path(out, "report.json");
    cr_expect(!test_exists(report), "no report");
    cli_result_free(&r);
    write_pipeline(cfg, "{\"path\": \"{log_dir}/{log_stem}_truth.csv\", \"time_offset\": -1.7e9}");
    r = cli_run(NULL, (const char *[]){"run", cfg, a, "-o", out, "-q", NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "%s", r.err);
    cr_expect(fabs(report_rmse(report, "j1") - 0.1) < 1e-4, "j1 RMSE %g", report_rmse(report, "j1"));
    cli_result_free(&r);
    free(report), free(a), free(cfg), free(out);
    free_fixture(&fx);
}

Test(cli_reference_log, compare_suite_with_a_truth_file_per_log)
{
    fixture fx = make_fixture(0);
    char *suite = test_path(fx.dir, "suite.json"), *raw = test_path(fx.dir, "raw.json");
    char *out = test_path(fx.dir, "out");
    test_write_file(raw, "{\"clock\": {\"rate\": 100}, \"signals\": {\"tau_hat\": {\"channel\": \"sensors/tau\"}}}\n");
    test_write_file(suite,
                    "{\"name\": \"truth_files\",\n"
                    " \"variants\": [{\"name\": \"raw\", \"pipeline\": \"raw.json\", \"estimate\": \"tau_hat\"}],\n"
                    " \"logs\": [\"logs/a.csv\", \"logs/b.csv\"],\n"
                    " \"reference\": \"truth/tau\",\n"
                    " \"reference_log\": \"{log_dir}/{log_stem}_truth.csv\"}\n");
    cli_result r = cli_run("/", (const char *[]){"compare", suite, "-o", out, "-q", NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "%s", r.err);
    cr_expect(strstr(r.err, "100 clock samples outside the span of truth/tau") && strstr(r.err, "b_truth.csv"), "%s",
              r.err);
    cli_result_free(&r);
    char *csv_path = test_path(out, "report.csv");
    char *csv = test_read_file(csv_path, NULL);
    /* the RMSE of j1 per log: 0.1 (a) and 0.3 (b) */
    cr_expect(strstr(csv, "0.1") && strstr(csv, "0.3"), "%s", csv);
    free(csv), free(csv_path);
    free(suite), free(raw), free(out);
    free_fixture(&fx);
}
