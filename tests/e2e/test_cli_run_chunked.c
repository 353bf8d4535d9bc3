/* End-to-end: `roboest run --window N` / `--memory-limit MB` reads the log in windows (its channels in parts,
 * resampled window by window, the stages stepped window after window) and writes what the whole-log run writes:
 * the same bytes of every CSV output, report, stdout and stderr, and the same values (bit for bit), names and
 * attributes of every .h5 and .mat output (written window by window: their chunks lie elsewhere in the file), on
 * shipped pipelines and logs. A layout that must be read
 * whole says up front what it needs against the limit (exit 3, nothing written). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static char *src_path(const char *rel) { return test_path(RB_SOURCE, rel); }

/* Every file of dir a (and its subfolders) is in dir b with the same bytes; how many. */
static size_t same_files(const char *a, const char *b)
{
    size_t n = 0;
    DIR *d = opendir(a);
    cr_assert_not_null(d, "%s", a);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char *fa = test_path(a, e->d_name), *fb = test_path(b, e->d_name);
        DIR *sub = opendir(fa);
        if (sub) {
            closedir(sub);
            n += same_files(fa, fb);
        } else {
            size_t la, lb, len = strlen(fa);
            char *ca = test_read_file(fa, &la), *cb = test_read_file(fb, &lb);
            cr_assert_not_null(cb, "%s missing", fb);
            /* .h5 and .mat outputs written window by window: the same values, their chunks placed otherwise */
            if (len > 4 && (strcmp(fa + len - 3, ".h5") == 0 || strcmp(fa + len - 4, ".mat") == 0))
                cr_assert_gt(test_same_log_values(fa, fb), 0, "%s: no values", fa);
            else
                cr_assert(la == lb && memcmp(ca, cb, la) == 0, "%s and %s differ", fa, fb);
            free(ca), free(cb);
            n++;
        }
        free(fa), free(fb);
    }
    closedir(d);
    return n;
}

/* config (and log, may be NULL: the config's) run whole and in windows of `window` samples: the same bytes. */
static void same_both_ways(const char *config, const char *log, const char *window)
{
    char *dir = test_tmpdir(), *cfg = src_path(config), *lg = log ? src_path(log) : NULL;
    char *a = test_path(dir, "whole"), *b = test_path(dir, "windows");
    const char *args_a[] = {"run", cfg, "-o", a, "-q", lg, NULL};
    const char *args_b[] = {"run", cfg, "-o", b, "-q", "--window", window, lg, NULL};
    cli_result ra = cli_run(NULL, args_a), rb = cli_run(NULL, args_b);
    cr_assert_eq(ra.status, CLI_EXIT_OK, "%s: %s", config, ra.err);
    cr_assert_eq(rb.status, CLI_EXIT_OK, "%s --window %s: %s", config, window, rb.err);
    cr_assert_str_eq(rb.out, ra.out, "%s: stdout", config);
    cr_assert_str_eq(rb.err, ra.err, "%s: stderr", config);
    cr_assert_gt(same_files(a, b), 0, "%s: no output", config);
    cli_result_free(&ra), cli_result_free(&rb);
    free(dir), free(cfg), free(lg), free(a), free(b);
}

Test(cli_run_chunked, demo_in_windows_of_1_and_1000_samples_same_bytes)
{
    same_both_ways("configs/demo.json", NULL, "1"); /* a clock channel, a selection held at NaN */
    same_both_ways("configs/demo.json", NULL, "1000");
}

Test(cli_run_chunked, shipped_pipelines_in_windows_same_bytes)
{
    static const char *const runs[][2] = {
        {"configs/attitude/balance.json", "datasets/humanoid_balance.mat"},
        {"configs/fbse/nonslip_gyro.json", "datasets/walk_friction.mat"},
        {"configs/map/leg_map.json", "datasets/leg_pole_free.mat"},
        {"configs/slip/predict_patches_ratio.json", "datasets/walk_patches_a.mat"},
        {"configs/paper/humanoid_ukf_pinn.json", "datasets/humanoid_balance.mat"},
        {"configs/paper/leg_current_minus_pinn.json", "datasets/leg_pole_second_robot.mat"},
        {"configs/paper/leg_ukf_scv.json", "datasets/leg_pole_second_robot.mat"},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
        same_both_ways(runs[i][0], runs[i][1], i % 2 ? "1000" : "777");
}

/* --memory-limit alone picks the window; the v7.3 log is read in parts whatever the limit. */
Test(cli_run_chunked, memory_limit_reads_in_windows_same_bytes)
{
    char *dir = test_tmpdir(), *cfg = src_path("configs/demo.json");
    char *a = test_path(dir, "whole"), *b = test_path(dir, "limited");
    cli_result ra = cli_run(NULL, (const char *[]){"run", cfg, "-o", a, "-q", NULL});
    cli_result rb = cli_run(NULL, (const char *[]){"run", cfg, "-o", b, "-q", "--memory-limit", "1", NULL});
    cr_assert_eq(rb.status, CLI_EXIT_OK, "%s", rb.err);
    cr_assert_str_eq(rb.out, ra.out);
    cr_assert_gt(same_files(a, b), 0);
    cli_result_free(&ra), cli_result_free(&rb);
    free(dir), free(cfg), free(a), free(b);
}

/* A MATLAB v7 (compressed) log larger than the limit: one line naming the file, what it needs and why. */
Test(cli_run_chunked, a_v5_log_over_the_limit_says_what_it_needs)
{
    char *dir = test_tmpdir(), *log = test_path(dir, "balance5.mat"), *src = src_path("datasets/humanoid_balance.mat");
    char *cfg = src_path("configs/attitude/balance.json"), *out = test_path(dir, "out");
    cli_result rc = cli_run(NULL, (const char *[]){"convert", src, "-o", log, "--format", "mat5", NULL});
    cr_assert_eq(rc.status, CLI_EXIT_OK, "%s", rc.err);
    cr_assert_gt(test_file_size(log), 1u << 20);
    cli_result r = cli_run(NULL, (const char *[]){"run", cfg, log, "-o", out, "-q", "--memory-limit", "1", NULL});
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, log), "%s", r.err);
    cr_assert(strstr(r.err, "must fit in memory"), "%s", r.err);
    cr_assert(strstr(r.err, "MiB"), "%s", r.err);
    cr_assert_not(test_exists(out));
    /* under a limit it fits, read whole: the numbers of the v7.3 log */
    cli_result ok = cli_run(NULL, (const char *[]){"run", cfg, log, "-o", out, "-q", "--memory-limit", "64", NULL});
    cr_assert_eq(ok.status, CLI_EXIT_OK, "%s", ok.err);
    cli_result_free(&rc), cli_result_free(&r), cli_result_free(&ok);
    free(dir), free(log), free(src), free(cfg), free(out);
}

Test(cli_run_chunked, bad_values_are_usage_errors)
{
    char *cfg = src_path("configs/demo.json");
    static const char *const bad[][2] = {{"--window", "0"}, {"--window", "-3"}, {"--memory-limit", "x"}};
    for (size_t i = 0; i < 3; i++) {
        cli_result r = cli_run(NULL, (const char *[]){"run", cfg, bad[i][0], bad[i][1], NULL});
        cr_assert_eq(r.status, CLI_EXIT_USAGE, "%s %s: %s", bad[i][0], bad[i][1], r.err);
        cr_assert(strstr(r.err, bad[i][0]), "%s", r.err);
        cli_result_free(&r);
    }
    free(cfg);
}

/* What a run in windows keeps whole over the limit: test_cli_run_chunked2.c (CSV outputs are written window by
 * window, the fault monitor reads parts). */
