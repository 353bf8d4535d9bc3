/* End-to-end: a run in windows scans its channels for sensor faults a part at a time (faults.c): a log whose
 * widest channel does not fit the memory limit whole runs under it, with the same bytes (report, faults, outputs,
 * stdout, stderr) as the whole-log run. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static char *src_path(const char *rel) { return test_path(RB_SOURCE, rel); }

/* The bytes of file rel in dirs a and b are the same (and not empty). */
static void same_file(const char *a, const char *b, const char *rel)
{
    char *fa = test_path(a, rel), *fb = test_path(b, rel);
    size_t la, lb;
    char *ca = test_read_file(fa, &la), *cb = test_read_file(fb, &lb);
    cr_assert_not_null(ca, "%s missing", fa);
    cr_assert_not_null(cb, "%s missing", fb);
    cr_assert(la > 0 && la == lb && memcmp(ca, cb, la) == 0, "%s and %s differ", fa, fb);
    free(ca), free(cb), free(fa), free(fb);
}

/* Text with every `from` replaced by `to` (malloc'd). */
static char *replace_all(const char *text, const char *from, const char *to)
{
    size_t n = 0, lf = strlen(from), lt = strlen(to);
    for (const char *q = strstr(text, from); q; q = strstr(q + lf, from))
        n++;
    char *out = malloc(strlen(text) + n * lt + 1), *w = out;
    for (const char *q; (q = strstr(text, from)) != NULL; text = q + lf) {
        memcpy(w, text, (size_t)(q - text));
        w += q - text;
        memcpy(w, to, lt);
        w += lt;
    }
    strcpy(w, text);
    return out;
}

/* Shipped config rel copied into dir (its "../../datasets/" made absolute) with `from` replaced by `to`; its path. */
static char *config_in(const char *dir, const char *rel, const char *from, const char *to)
{
    char *src = src_path(rel), *data = src_path("datasets/");
    size_t n;
    char *text = test_read_file(src, &n);
    cr_assert_not_null(text, "%s", src);
    char *a = replace_all(text, "../../datasets/", data), *b = replace_all(a, from, to);
    cr_assert(strcmp(a, b) != 0, "%s: no %s", rel, from);
    char *path = test_path(dir, "config.json");
    test_write_file(path, b);
    free(src), free(data), free(text), free(a), free(b);
    return path;
}

/* forearm_ekf.json in dir with reports, a metric of estimate est against ref and a touchier monitor (so that it
 * finds faults); its path. */
static char *forearm_config(const char *dir, const char *est, const char *ref)
{
    char extra[512];
    snprintf(extra, sizeof extra,
             "\"metrics\": [{\"name\": \"m\", \"estimate\": \"%s\", \"reference\": \"%s\"}], \"reports\": "
             "[\"report.json\", \"report.md\"], \"faults\": {\"stuck_window\": 20, \"saturation_window\": 10, "
             "\"stuck_tolerance\": 1e-9}, \"stages\": [",
             est, ref);
    return config_in(dir, "configs/inertial/forearm_ekf.json", "\"stages\": [", extra);
}

/* forearm_ekf's joints_state/positions with its data needs more than 1 MiB whole (the old monitor refused the run
 * up front, exit 3); scanned in parts the run goes under the limit, the fault tallies the whole run's. */
Test(cli_run_chunked2, the_fault_monitor_in_parts_runs_under_the_limit_same_bytes)
{
    char *dir = test_tmpdir(), *cfg = forearm_config(dir, "mass", "consistent");
    char *lg = src_path("datasets/inertial_forearm.mat");
    char *a = test_path(dir, "whole"), *b = test_path(dir, "limited");
    cli_result ra = cli_run(NULL, (const char *[]){"run", cfg, lg, "-o", a, "-q", NULL});
    cli_result rb = cli_run(NULL, (const char *[]){"run", cfg, lg, "-o", b, "-q", "--memory-limit", "1", NULL});
    cr_assert_eq(ra.status, CLI_EXIT_OK, "%s", ra.err);
    cr_assert_eq(rb.status, CLI_EXIT_OK, "%s", rb.err);
    cr_assert_str_eq(rb.out, ra.out);
    cr_assert_str_eq(rb.err, ra.err);
    char *rep = test_path(a, "report.json");
    size_t n;
    char *text = test_read_file(rep, &n);
    cr_assert_not_null(text, "%s", rep);
    cr_assert(strstr(text, "\"stuck\"") && strstr(text, "\"saturated\""), "the report has fault tallies");
    free(text), free(rep);
    same_file(a, b, "report.json");
    same_file(a, b, "report.md");
    cli_result_free(&ra), cli_result_free(&rb);
    free(dir), free(cfg), free(lg), free(a), free(b);
}

/* `roboest compare --memory-limit MB`: every (variant, log) run in windows, the same files and output. */
static void compare_both_ways(const char *suite, const char *limit)
{
    char *dir = test_tmpdir(), *s = src_path(suite), *a = test_path(dir, "whole"), *b = test_path(dir, "limited");
    cli_result ra = cli_run(NULL, (const char *[]){"compare", s, "-o", a, "-q", NULL});
    cli_result rb = cli_run(NULL, (const char *[]){"compare", s, "-o", b, "-q", "--memory-limit", limit, NULL});
    cr_assert_eq(ra.status, CLI_EXIT_OK, "%s: %s", suite, ra.err);
    cr_assert_eq(rb.status, CLI_EXIT_OK, "%s --memory-limit %s: %s", suite, limit, rb.err);
    cr_assert_str_eq(rb.out, ra.out, "%s: stdout", suite);
    cr_assert_str_eq(rb.err, ra.err, "%s: stderr", suite);
    static const char *const files[] = {"report.md", "report.json", "report.csv", "rmse_box.svg", "magnitude_box.svg"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        same_file(a, b, files[i]);
    cli_result_free(&ra), cli_result_free(&rb);
    free(dir), free(s), free(a), free(b);
}

Test(cli_run_chunked2, compare_with_a_memory_limit_same_report)
{
    compare_both_ways("configs/attitude/suite_balance.json", "1");
    compare_both_ways("configs/fbse/suite_coulomb.json", "64");
}

/* The limit reaches every run: what a run in windows keeps whole over it fails the suite up front, naming the
 * variant and the log; no report. */
Test(cli_run_chunked2, compare_under_a_too_small_limit_says_so)
{
    char *dir = test_tmpdir(), *s = src_path("configs/fbse/suite_coulomb.json"), *out = test_path(dir, "out");
    cli_result r = cli_run(NULL, (const char *[]){"compare", s, "-o", out, "-q", "--memory-limit", "1", NULL});
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_assert(strstr(r.err, "variant ") && strstr(r.err, "walk_friction.mat") && strstr(r.err, "limit of 1.0 MiB"),
              "%s", r.err);
    char *report = test_path(out, "report.json");
    cr_assert_not(test_exists(report));
    free(report);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"compare", s, "--memory-limit", "0", NULL});
    cr_assert_eq(r.status, CLI_EXIT_USAGE, "%s", r.err);
    cr_assert(strstr(r.err, "--memory-limit"), "%s", r.err);
    cli_result_free(&r);
    free(dir), free(s), free(out);
}

/* A run in windows writes its CSV outputs window by window: nonslip_gyro (fbse.csv, 13 MiB of signals that only the
 * CSV records) runs under 1 MiB, with the same bytes as the whole-log run (before: refused up front, exit 3). */
Test(cli_run_chunked2, csv_outputs_written_window_by_window_same_bytes)
{
    char *dir = test_tmpdir(), *cfg = src_path("configs/fbse/nonslip_gyro.json");
    char *lg = src_path("datasets/walk_friction.mat"), *a = test_path(dir, "whole"), *b = test_path(dir, "limited");
    cli_result ra = cli_run(NULL, (const char *[]){"run", cfg, lg, "-o", a, "-q", NULL});
    cli_result rb = cli_run(NULL, (const char *[]){"run", cfg, lg, "-o", b, "-q", "--memory-limit", "1", NULL});
    cr_assert_eq(ra.status, CLI_EXIT_OK, "%s", ra.err);
    cr_assert_eq(rb.status, CLI_EXIT_OK, "%s", rb.err);
    cr_assert_str_eq(rb.out, ra.out);
    cr_assert_str_eq(rb.err, ra.err);
    same_file(a, b, "fbse.csv");
    cli_result_free(&ra), cli_result_free(&rb);
    free(dir), free(cfg), free(lg), free(a), free(b);
}

/* The metrics' statistics are accumulated window by window: forearm_ekf scored on tau_obs against dq (5.7 MiB of
 * operands) runs under 1 MiB with the same report and stdout as the whole-log run (before: refused up front). */
Test(cli_run_chunked2, metrics_accumulated_window_by_window_same_report)
{
    char *dir = test_tmpdir(), *cfg = forearm_config(dir, "tau_obs", "dq");
    char *lg = src_path("datasets/inertial_forearm.mat");
    char *a = test_path(dir, "whole"), *b = test_path(dir, "limited");
    cli_result ra = cli_run(NULL, (const char *[]){"run", cfg, lg, "-o", a, "-q", NULL});
    cli_result rb = cli_run(NULL, (const char *[]){"run", cfg, lg, "-o", b, "-q", "--memory-limit", "1", NULL});
    cr_assert_eq(ra.status, CLI_EXIT_OK, "%s", ra.err);
    cr_assert_eq(rb.status, CLI_EXIT_OK, "%s", rb.err);
    cr_assert_str_eq(rb.out, ra.out);
    cr_assert_str_eq(rb.err, ra.err);
    cr_assert(strstr(ra.out, "tau_obs") || strstr(ra.out, "| m"), "the metric table: %s", ra.out);
    same_file(a, b, "report.json");
    same_file(a, b, "report.md");
    cli_result_free(&ra), cli_result_free(&rb);
    free(dir), free(cfg), free(lg), free(a), free(b);
}

/* What a run keeps whole (the operands of a confusion table) over the limit is refused before it runs, naming the
 * largest; nothing is written. */
Test(cli_run_chunked2, what_is_kept_whole_over_the_limit_is_said_up_front)
{
    char *dir = test_tmpdir();
    char *cfg = config_in(dir, "configs/inertial/forearm_ekf.json", "\"stages\": [",
                          "\"outputs\": [{\"path\": \"x.h5\", \"signals\": [\"dq\"]}], \"metrics\": [{\"name\": "
                          "\"c\", \"estimate\": \"dq\", \"reference\": \"dq\", \"labels\": [\"a\", \"b\"]}], "
                          "\"stages\": [");
    char *lg = src_path("datasets/inertial_forearm.mat"), *out = test_path(dir, "out");
    cli_result r = cli_run(NULL, (const char *[]){"run", cfg, lg, "-o", out, "-q", "--memory-limit", "1", NULL});
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "inertial_forearm.mat") && strstr(r.err, "the outputs and the metric operands") &&
                  strstr(r.err, "signal dq") && strstr(r.err, "MiB"),
              "%s", r.err);
    /* the total it needs counts the timestamp check of the largest bound channel too */
    double kept = 0, all = 0;
    const char *k = strstr(r.err, "operands: "), *a = strstr(r.err, " MiB), ");
    cr_assert(k && a && sscanf(k, "operands: %lf", &kept) == 1, "%s", r.err);
    cr_assert(sscanf(a, " MiB), %lf MiB in all while channel ", &all) == 1 && all > kept, "%s", r.err);
    cr_assert_not(test_exists(out));
    cli_result_free(&r);
    free(dir), free(cfg), free(lg), free(out);
}

/* A streamed output of a run whose files fail to be written leaves nothing: nonslip_gyro with an HDF5 output too
 * whose target (--force) is a folder, so that the write fails after the CSV was written window by window. */
Test(cli_run_chunked2, a_failing_write_leaves_no_streamed_output)
{
    char *dir = test_tmpdir();
    char *cfg = config_in(dir, "configs/fbse/nonslip_gyro.json", "\"outputs\": [",
                          "\"outputs\": [{\"path\": \"x.h5\", \"signals\": [\"friction\"]}, ");
    char *out = test_path(dir, "out"), *clash = test_path(out, "x.h5");
    cr_assert_eq(mkdir(out, 0755), 0);
    cr_assert_eq(mkdir(clash, 0755), 0);
    cli_result r = cli_run(NULL, (const char *[]){"run", cfg, "-o", out, "-q", "--force", "--window", "1000", NULL});
    cr_assert_eq(r.status, CLI_EXIT_OUTPUT, "%s", r.err);
    cr_assert(strstr(r.err, "x.h5"), "%s", r.err);
    DIR *d = opendir(out);
    cr_assert_not_null(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    cr_assert_eq(n, 1, "only the folder that was there: %zu entries", n);
    cli_result_free(&r);
    free(dir), free(cfg), free(out), free(clash);
}

/* A run in windows writes its .h5 and .mat (v7.3) outputs window by window: nonslip_gyro with its signals in both
 * (13 MiB that only the outputs record) runs under 1 MiB, the values read back those of the whole-log run, bit for
 * bit; with windows of 1000 samples too (not a multiple of the files' chunks). Before: refused up front (exit 3). */
Test(cli_run_chunked2, h5_and_mat_outputs_written_window_by_window_same_values)
{
    char *dir = test_tmpdir();
#define SIGNALS "[\"friction\", \"measured\", \"model\", \"coulomb\", \"dq\", \"phase\", \"truth\", \"swing_rmse\"]"
    char *cfg = config_in(dir, "configs/fbse/nonslip_gyro.json", "\"path\": \"fbse.csv\"",
                          "\"path\": \"fbse.h5\", \"signals\": " SIGNALS
                          "}, {\"path\": \"fbse.mat\", \"signals\": " SIGNALS "}, {\"path\": \"fbse.csv\"");
#undef SIGNALS
    char *lg = src_path("datasets/walk_friction.mat"), *a = test_path(dir, "whole"), *b = test_path(dir, "limited");
    char *c = test_path(dir, "window");
    cli_result ra = cli_run(NULL, (const char *[]){"run", cfg, lg, "-o", a, "-q", NULL});
    cli_result rb = cli_run(NULL, (const char *[]){"run", cfg, lg, "-o", b, "-q", "--memory-limit", "1", NULL});
    cli_result rc = cli_run(NULL, (const char *[]){"run", cfg, lg, "-o", c, "-q", "--window", "1000", NULL});
    cr_assert_eq(ra.status, CLI_EXIT_OK, "%s", ra.err);
    cr_assert_eq(rb.status, CLI_EXIT_OK, "%s", rb.err);
    cr_assert_eq(rc.status, CLI_EXIT_OK, "%s", rc.err);
    cr_assert_str_eq(rb.out, ra.out);
    cr_assert_str_eq(rb.err, ra.err);
    static const char *const files[] = {"fbse.h5", "fbse.mat"};
    for (size_t i = 0; i < 2; i++) {
        char *fa = test_path(a, files[i]), *fb = test_path(b, files[i]), *fc = test_path(c, files[i]);
        cr_assert_gt(test_same_log_values(fa, fb), 100000);
        cr_assert_gt(test_same_log_values(fa, fc), 100000);
        free(fa), free(fb), free(fc);
    }
    same_file(a, b, "fbse.csv");
    cli_result_free(&ra), cli_result_free(&rb), cli_result_free(&rc);
    free(dir), free(cfg), free(lg), free(a), free(b), free(c);
}
