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

/* ---- a run in windows reads the truth file in windows too -------------------------------------------------------- */
/* dir/long.csv: the log of write_log over 60 s on a clock starting at log_t0; dir/long_truth.h5 (via `roboest
 * convert`), the truth at 1 kHz from `from` s to 60 s on a clock starting at t0 (1.4 MiB of samples: more than a
 * limit of 1 MiB), with a NaN at 40 s when nan_at_40. The CSV truth stays beside it (3 MiB of text). */
static void write_long(const char *dir, double log_t0, double t0, double from, bool nan_at_40)
{
    char *log = test_path(dir, "long.csv"), *csv = test_path(dir, "long_truth.csv"),
         *h5 = test_path(dir, "long_truth.h5");
    FILE *f = fopen(log, "w");
    fprintf(f, "time,sensors/tau:j1,sensors/tau:j2\n");
    for (int k = 0; k <= 6000; k++) {
        double t = 0.01 * k;
        fprintf(f, "%.17g,%.17g,%.17g\n", log_t0 + t, sin(t) + 0.1, cos(t) + 0.05);
    }
    fclose(f);
    f = fopen(csv, "w");
    fprintf(f, "time,truth/tau:j1 [N m],truth/tau:j2 [N m]\n");
    for (int k = (int)lround(from * 1000); k <= 60000; k++) {
        double t = 0.001 * k;
        if (nan_at_40 && k == 40000)
            fprintf(f, "%.17g,nan,%.17g\n", t0 + t, cos(t));
        else
            fprintf(f, "%.17g,%.17g,%.17g\n", t0 + t, sin(t), cos(t));
    }
    fclose(f);
    cli_result r = cli_run(NULL, (const char *[]){"convert", csv, "-o", h5, "--force", NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "%s", r.err);
    cli_result_free(&r);
    free(log), free(csv), free(h5);
}

/* The run of dir/run.json on long.csv into dir/out_<tag>, whole or (limit) in windows. */
static cli_result run_long(const char *dir, const char *tag, const char *limit, const char *window)
{
    char name[64];
    snprintf(name, sizeof name, "out_%s", tag);
    char *cfg = test_path(dir, "run.json"), *log = test_path(dir, "long.csv"), *out = test_path(dir, name);
    const char *args[] = {"run", cfg, log, "-o", out, "-q", "--memory-limit", limit, "--window", window, NULL};
    if (!limit)
        args[6] = NULL;
    cli_result r = cli_run(NULL, args);
    free(cfg), free(log), free(out);
    return r;
}

static void same_bytes(const char *dir, const char *a, const char *b, const char *rel)
{
    char *pa = test_path(dir, a), *pb = test_path(dir, b), *fa = test_path(pa, rel), *fb = test_path(pb, rel);
    size_t la, lb;
    char *ca = test_read_file(fa, &la), *cb = test_read_file(fb, &lb);
    cr_assert(ca && cb && la > 0 && la == lb && memcmp(ca, cb, la) == 0, "%s and %s differ", fa, fb);
    free(ca), free(cb), free(pa), free(pb), free(fa), free(fb);
}

/* A run in windows under 1 MiB reads the .h5 truth (1.4 MiB of samples) window by window: the same report, stdout
 * and stderr as the whole-log run; with a truth on an epoch clock and a log on one (time_offset), and a truth
 * covering the log from 20 s (the uncovered samples counted in the same warning). */
Test(cli_reference_log, a_run_in_windows_reads_the_truth_in_windows_same_report)
{
    static const struct {
        double log_t0, t0, from;
        const char *ref;
    } cases[] = {{0, 0, 0, "\"{log_dir}/{log_stem}_truth.h5\""},
                 {0, 1.7e9, 0, "{\"path\": \"{log_dir}/{log_stem}_truth.h5\", \"time_offset\": -1.7e9}"},
                 {1.7e9, 0, 0, "{\"path\": \"{log_dir}/{log_stem}_truth.h5\", \"time_offset\": 1.7e9}"},
                 {0, 0, 20, "{\"path\": \"{log_dir}/{log_stem}_truth.h5\", \"interp\": \"hold\"}"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *dir = test_tmpdir(), *cfg = test_path(dir, "run.json");
        write_long(dir, cases[i].log_t0, cases[i].t0, cases[i].from, false);
        write_pipeline(cfg, cases[i].ref);
        cli_result ra = run_long(dir, "whole", NULL, NULL), rb = run_long(dir, "windows", "1", "700");
        cr_assert_eq(ra.status, CLI_EXIT_OK, "case %zu: %s", i, ra.err);
        cr_assert_eq(rb.status, CLI_EXIT_OK, "case %zu: %s", i, rb.err);
        cr_assert_str_eq(rb.out, ra.out, "case %zu", i);
        cr_assert_str_eq(rb.err, ra.err, "case %zu", i);
        cr_assert((cases[i].from > 0) == (strstr(ra.err, "2000 clock samples outside") != NULL), "case %zu: %s", i,
                  ra.err);
        same_bytes(dir, "out_whole", "out_windows", "report.json");
        cli_result_free(&ra), cli_result_free(&rb);
        free(dir), free(cfg);
    }
}

/* A truth file that is read whole (CSV) and does not fit the limit is said up front, in one line naming it and
 * what it needs; nothing is written. */
Test(cli_reference_log, a_truth_read_whole_over_the_limit_is_said_up_front)
{
    char *dir = test_tmpdir(), *cfg = test_path(dir, "run.json"), *out = test_path(dir, "out_windows");
    write_long(dir, 0, 0, 0, false);
    write_pipeline(cfg, "\"{log_dir}/{log_stem}_truth.csv\"");
    cli_result r = run_long(dir, "windows", "1", "700");
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "long_truth.csv") && strstr(r.err, "MiB") && strstr(r.err, "metrics[0]"), "%s", r.err);
    cr_assert_not(test_exists(out));
    cli_result_free(&r);
    free(dir), free(cfg), free(out);
}

/* A run in windows failing mid-run (the truth's NaN at 40 s, met in a window after its outputs were written from
 * the first) leaves no file, not even a temporary: the whole-log run's error. */
Test(cli_reference_log, a_run_in_windows_failing_mid_run_leaves_no_output)
{
    char *dir = test_tmpdir(), *cfg = test_path(dir, "run.json"), *out = test_path(dir, "out_windows");
    write_long(dir, 0, 0, 0, true);
    test_write_file(cfg, "{\"clock\": {\"rate\": 100}, \"signals\": {\"tau_hat\": {\"channel\": \"sensors/tau\"}},\n"
                         " \"outputs\": [{\"path\": \"x.h5\", \"signals\": [\"tau_hat\"]},\n"
                         "             {\"path\": \"x.mat\", \"signals\": [\"tau_hat\"]},\n"
                         "             {\"path\": \"x.csv\", \"signals\": [\"tau_hat\"]}],\n"
                         " \"metrics\": [{\"estimate\": \"tau_hat\", \"reference\": \"truth/tau\",\n"
                         "              \"reference_log\": \"{log_dir}/{log_stem}_truth.h5\"}],\n"
                         " \"reports\": [\"report.json\"]}\n");
    cli_result ra = run_long(dir, "whole", NULL, NULL), rb = run_long(dir, "windows", "1", "700");
    cr_assert_eq(ra.status, CLI_EXIT_INPUT, "%s", ra.err);
    cr_assert_eq(rb.status, ra.status, "%s", rb.err);
    cr_assert_str_eq(rb.err, ra.err);
    cr_assert(strstr(rb.err, "long_truth.h5") && strstr(rb.err, "metrics[0]"), "%s", rb.err);
    cr_assert_eq(test_count_lines(rb.err), 1, "%s", rb.err);
    cr_assert_not(test_exists(out), "nothing written: %s", out);
    cli_result_free(&ra), cli_result_free(&rb);
    free(dir), free(cfg), free(out);
}
