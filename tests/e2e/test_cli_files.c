/* End-to-end: roboest info / convert on good and bad files. Every failure must give one line on
 * stderr naming the file, the documented exit code, and leave no output behind. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* 201 samples at 100 Hz of two 2-element channels on one clock: positions sin(t), t^2/2 and their
 * exact derivatives cos(t), t. */
static void write_csv_log(const char *path)
{
    FILE *f = fopen(path, "w");
    fprintf(f, "# origin: e2e test\n");
    fprintf(f, "time,joints_state/positions:j1 [rad],joints_state/positions:j2 [rad],"
               "joints_state/velocities:j1 [rad/s],joints_state/velocities:j2 [rad/s]\n");
    for (int k = 0; k <= 200; k++) {
        double t = 10.0 + 0.01 * k;
        fprintf(f, "%.17g,%.17g,%.17g,%.17g,%.17g\n", t, sin(t), 0.5 * t * t, cos(t), t);
    }
    fclose(f);
}

static void expect_failure(cli_result *r, int code, const char *must_contain, const char *out_path)
{
    cr_expect_eq(r->status, code, "exit %d, wanted %d; stderr: %s", r->status, code, r->err);
    cr_expect_eq(test_count_lines(r->err), 1, "one line on stderr, got: %s", r->err);
    cr_expect(strstr(r->err, must_contain) != NULL, "stderr lacks '%s': %s", must_contain, r->err);
    cr_expect_str_empty(r->out, "nothing on stdout: %s", r->out);
    if (out_path)
        cr_expect(!test_exists(out_path), "no output file may appear at %s", out_path);
}

Test(cli_files, help_and_version)
{
    cli_result r = cli_run(NULL, (const char *[]){"--help", NULL});
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "Exit codes:") && strstr(r.out, "convert"), "%s", r.out);
    cli_result_free(&r);
    const char *cmds[] = {"info", "convert", "run", "stages"};
    for (size_t i = 0; i < 4; i++) {
        r = cli_run(NULL, (const char *[]){cmds[i], "--help", NULL});
        cr_expect_eq(r.status, 0, "%s --help", cmds[i]);
        cr_expect(strstr(r.out, "Usage: roboest") && strstr(r.out, "Exit codes:"), "%s --help: %s", cmds[i], r.out);
        cli_result_free(&r);
    }
    r = cli_run(NULL, (const char *[]){"--version", NULL});
    cr_expect(strncmp(r.out, "roboest ", 8) == 0, "%s", r.out);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"frobnicate", NULL});
    expect_failure(&r, CLI_EXIT_USAGE, "unknown command 'frobnicate'", NULL);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"info", "--bogus", "x", NULL});
    expect_failure(&r, CLI_EXIT_USAGE, "--bogus", NULL);
    cli_result_free(&r);
}

Test(cli_files, convert_round_trips_through_every_format)
{
    char *dir = test_tmpdir();
    char *csv = test_path(dir, "log.csv"), *mat = test_path(dir, "log.mat"), *mat5 = test_path(dir, "log5.mat");
    char *h5 = test_path(dir, "log.h5"), *back = test_path(dir, "back.csv");
    write_csv_log(csv);
    cli_result r = cli_run(NULL, (const char *[]){"convert", csv, "-o", mat, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"convert", mat, "-o", mat5, "--format", "mat5", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"convert", mat5, "-o", h5, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"convert", h5, "-o", back, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);

    /* The data rows survive csv -> mat v7.3 -> mat v7 -> h5 -> csv bit for bit (both sides printed by
     * the same CSV writer, so equal text means equal doubles). */
    char *direct = test_path(dir, "direct.csv");
    r = cli_run(NULL, (const char *[]){"convert", csv, "-o", direct, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    char *a = test_read_file(direct, NULL), *b = test_read_file(back, NULL);
    const char *rows_a = strstr(a, "\ntime,"), *rows_b = strstr(b, "\ntime,");
    cr_assert(rows_a && rows_b, "header rows present:\n%s", b);
    cr_assert_str_eq(rows_b, rows_a, "header and data rows differ after the round trip");
    cr_expect(strstr(b, "# roboest_version: "), "provenance recorded:\n%.300s", b);
    cr_expect(strstr(b, "# input_sha256: "), "input checksum recorded:\n%.300s", b);
    free(a);
    free(b);

    /* Existing output without --force: refused, file untouched; with --force: replaced. */
    size_t before = test_file_size(h5);
    r = cli_run(NULL, (const char *[]){"convert", csv, "-o", h5, NULL});
    expect_failure(&r, CLI_EXIT_OUTPUT, "--force", NULL);
    cr_expect_eq(test_file_size(h5), before);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"convert", csv, "-o", h5, "--force", NULL});
    cr_expect_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    cr_expect_eq(test_count_entries(dir), 6, "no temporary files left behind");
    free(direct), free(csv), free(mat), free(mat5), free(h5), free(back), free(dir);
}

Test(cli_files, info_json_describes_every_channel)
{
    char *dir = test_tmpdir();
    char *csv = test_path(dir, "log.csv"), *mat = test_path(dir, "log.mat");
    write_csv_log(csv);
    cli_result r = cli_run(NULL, (const char *[]){"convert", csv, "-o", mat, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"info", "--json", mat, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cJSON *root = cJSON_Parse(r.out);
    cr_assert_not_null(root, "stdout is one JSON object: %s", r.out);
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(root, "format")->valuestring, "robot-logger MATLAB v7.3");
    cJSON *channels = cJSON_GetObjectItemCaseSensitive(root, "channels");
    cr_assert_eq(cJSON_GetArraySize(channels), 2);
    cJSON *vel = NULL, *ch;
    cJSON_ArrayForEach(ch, channels) if (strcmp(cJSON_GetObjectItem(ch, "name")->valuestring,
                                                "joints_state/velocities") == 0) vel = ch;
    cr_assert_not_null(vel, "channel names are slash paths");
    cr_expect_eq(cJSON_GetObjectItem(vel, "samples")->valuedouble, 201);
    cr_expect_eq(cJSON_GetObjectItem(vel, "elements")->valuedouble, 2);
    cr_expect_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(vel, "element_names"), 1)->valuestring, "j2");
    cr_expect_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(vel, "units"), 0)->valuestring, "rad/s");
    cr_expect_eq(cJSON_GetObjectItem(vel, "t_first")->valuedouble, 10.0);
    cr_expect_eq(cJSON_GetObjectItem(vel, "t_last")->valuedouble, 10.0 + 0.01 * 200);
    /* element j2 is t over [10, 12]; j1 is cos(t): its minimum is cos(10 + 0.01 k) at the k nearest pi */
    cr_expect_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(vel, "min"), 1)->valuedouble, 10.0);
    cr_expect_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(vel, "max"), 1)->valuedouble, 12.0);
    double min_cos = 1;
    for (int k = 0; k <= 200; k++)
        min_cos = fmin(min_cos, cos(10.0 + 0.01 * k));
    cr_expect_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(vel, "min"), 0)->valuedouble, min_cos,
                 "numbers round-trip exactly");
    cr_expect_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(vel, "nan_count"), 0)->valuedouble, 0);
    cr_expect(fabs(cJSON_GetObjectItem(vel, "rate")->valuedouble - 100.0) < 1e-6);
    cJSON_Delete(root);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"info", mat, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "joints_state/velocities") && strstr(r.out, "j2 [rad/s]"), "%s", r.out);
    cli_result_free(&r);
    free(csv), free(mat), free(dir);
}

Test(cli_files, bad_input_files)
{
    char *dir = test_tmpdir();
    char *out = test_path(dir, "out.h5");
    char *missing = test_path(dir, "missing.mat");
    cli_result r = cli_run(NULL, (const char *[]){"convert", missing, "-o", out, NULL});
    expect_failure(&r, CLI_EXIT_INPUT, missing, out);
    cli_result_free(&r);

    char *empty = test_path(dir, "empty.mat");
    test_write_file(empty, "");
    r = cli_run(NULL, (const char *[]){"convert", empty, "-o", out, NULL});
    expect_failure(&r, CLI_EXIT_INPUT, empty, out);
    cli_result_free(&r);

    char *text = test_path(dir, "notes.mat");
    test_write_file(text, "these are my notes, not a MATLAB file\n");
    r = cli_run(NULL, (const char *[]){"info", text, NULL});
    expect_failure(&r, CLI_EXIT_INPUT, text, NULL);
    cli_result_free(&r);

    /* Truncated .mat (v7.3 and v7) and .h5 files, cut at several offsets. */
    char *csv = test_path(dir, "log.csv");
    write_csv_log(csv);
    const char *kinds[] = {"mat", "mat5", "h5"};
    for (int k = 0; k < 3; k++) {
        char name[32];
        snprintf(name, sizeof name, "good_%s.%s", kinds[k], k == 2 ? "h5" : "mat");
        char *good = test_path(dir, name);
        r = cli_run(NULL, (const char *[]){"convert", csv, "-o", good, "--format", kinds[k], NULL});
        cr_assert_eq(r.status, 0, "%s", r.err);
        cli_result_free(&r);
        size_t size = test_file_size(good);
        size_t cuts[] = {64, 300, 600, 2048, size / 2, size - 1};
        for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
            char *cut = test_path(dir, "cut.mat");
            test_truncate_copy(good, cut, cuts[c]);
            r = cli_run(NULL, (const char *[]){"convert", cut, "-o", out, NULL});
            cr_expect(r.status == CLI_EXIT_INPUT, "%s cut at %zu: exit %d: %s", kinds[k], cuts[c], r.status, r.err);
            cr_expect_eq(test_count_lines(r.err), 1, "%s cut at %zu: %s", kinds[k], cuts[c], r.err);
            cr_expect(strstr(r.err, cut), "%s cut at %zu: message names the file: %s", kinds[k], cuts[c], r.err);
            cr_expect(!test_exists(out));
            cli_result_free(&r);
            free(cut);
        }
        free(good);
    }

    char *good = test_path(dir, "good.h5");
    r = cli_run(NULL, (const char *[]){"convert", csv, "-o", good, NULL});
    cli_result_free(&r);
    char *nodir = test_path(dir, "no/such/folder/out.h5");
    r = cli_run(NULL, (const char *[]){"convert", good, "-o", nodir, NULL});
    expect_failure(&r, CLI_EXIT_OUTPUT, "does not exist", nodir);
    cli_result_free(&r);
    free(out), free(missing), free(empty), free(text), free(csv), free(good), free(nodir), free(dir);
}

Test(cli_files, csv_needs_one_clock_unless_resampled)
{
    char *dir = test_tmpdir();
    char *a = test_path(dir, "a.csv"), *b = test_path(dir, "b.csv"), *ha = test_path(dir, "a.h5");
    char *hb = test_path(dir, "b.h5"), *out = test_path(dir, "out.csv");
    test_write_file(a, "time,x\n0,1\n0.1,2\n0.2,3\n0.3,4\n");
    test_write_file(b, "time,y\n0.05,10\n0.15,20\n0.25,30\n");
    const char *const *steps[] = {(const char *[]){"convert", a, "-o", ha, NULL},
                                  (const char *[]){"convert", b, "-o", hb, NULL}};
    for (int i = 0; i < 2; i++) {
        cli_result r = cli_run(NULL, steps[i]);
        cr_assert_eq(r.status, 0, "%s", r.err);
        cli_result_free(&r);
    }
    /* Two files of one session with channels of different names cannot be concatenated. */
    cli_result r = cli_run(NULL, (const char *[]){"convert", ha, hb, "-o", out, NULL});
    expect_failure(&r, CLI_EXIT_INPUT, "channel", out);
    cli_result_free(&r);
    free(a), free(b), free(ha), free(hb), free(out), free(dir);
}

Test(cli_files, convert_resamples_onto_one_clock)
{
    char *dir = test_tmpdir();
    char *a = test_path(dir, "a.csv"), *b = test_path(dir, "b.csv");
    char *mat = test_path(dir, "session.mat"), *out = test_path(dir, "out.csv");
    /* A session split over two files, with an irregular interval where they meet, resampled at 10 Hz. */
    test_write_file(a, "time,x,y\n0,1,10\n0.1,2,20\n0.2,3,30\n0.3,4,40\n");
    test_write_file(b, "time,x,y\n0.45,5,50\n0.65,7,70\n");
    cli_result r = cli_run(NULL, (const char *[]){"convert", a, b, "-o", mat, NULL});
    cr_assert_eq(r.status, 0, "a session of two files: %s", r.err);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"convert", mat, "-o", out, "--rate", "10", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    char *text = test_read_file(out, NULL);
    /* uniform 10 Hz clock over [0, 0.65]: 0 .. 0.6; at 0.4 x is between 4 (t 0.3) and 5 (t 0.45) */
    cr_expect(strstr(text, "\n0.4,4.666666666666667,46.66666666666667\n") ||
                  strstr(text, "\n0.4,4.6666666666666661,46.666666666666664\n"),
              "linear interpolation at 0.4 s:\n%s", text);
    cr_expect(strstr(text, "\n0.6,6.5,65\n"), "%s", text);
    cr_expect(!strstr(text, "\n0.7,"), "the clock stays inside the data: %s", text);
    free(text);
    free(a), free(b), free(mat), free(out), free(dir);
}

Test(cli_files, stages_lists_types_and_parameters)
{
    cli_result r = cli_run(NULL, (const char *[]){"stages", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "lowpass") && strstr(r.out, "cutoff_hz") && strstr(r.out, "finite_difference"), "%s",
              r.out);
    cli_result_free(&r);
}

Test(cli_files, demo_log_regenerates_byte_for_byte)
{
    char *dir = test_tmpdir();
    char *fresh = test_path(dir, "demo_arm.mat");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && ROBOEST='%s/roboest' scripts/make-demo-log.sh '%s' >/dev/null 2>&1",
             RB_SOURCE, RB_BUILD, fresh);
    cr_assert_eq(system(cmd), 0, "scripts/make-demo-log.sh runs");
    size_t n_fresh, n_shipped;
    char *a = test_read_file(fresh, &n_fresh);
    char *b = test_read_file(RB_SOURCE "/datasets/demo_arm.mat", &n_shipped);
    cr_assert_not_null(b);
    cr_expect(n_fresh == n_shipped && memcmp(a, b, n_fresh) == 0,
              "datasets/demo_arm.mat is what scripts/make-demo-log.sh makes (%zu vs %zu bytes)", n_fresh, n_shipped);
    free(a), free(b), free(fresh), free(dir);
}
