/* End-to-end: roboest run. Bad configs and bad logs give one line naming the file, key, channel or
 * sample, the documented exit code, and no output file. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

typedef struct fixture {
    char *dir, *log, *config, *out;
} fixture;

/* A log of sin(t) and t^2/2 with their exact derivatives; `bad_row` (if >= 0) is replaced by `bad`. */
static void write_log(const char *path, int bad_row, const char *bad)
{
    FILE *f = fopen(path, "w");
    fprintf(f, "time,joints_state/positions:j1 [rad],joints_state/positions:j2 [rad],"
               "joints_state/velocities:j1 [rad/s],joints_state/velocities:j2 [rad/s]\n");
    for (int k = 0; k <= 300; k++) {
        double t = 5.0 + 0.01 * k;
        if (k == bad_row)
            fprintf(f, "%s\n", bad);
        else
            fprintf(f, "%.17g,%.17g,%.17g,%.17g,%.17g\n", t, sin(t), 0.5 * t * t, cos(t), t);
    }
    fclose(f);
}

static const char *const GOOD_CONFIG =
    "{\n"
    "  \"name\": \"e2e\",\n"
    "  \"logs\": [\"log.csv\"],\n"
    "  \"clock\": {\"rate\": 100},\n"
    "  \"signals\": {\n"
    "    \"q\": {\"channel\": \"joints_state/positions\"},\n"
    "    \"qd_ref\": {\"channel\": \"joints_state/velocities\"}\n"
    "  },\n"
    "  \"stages\": [\n"
    "    {\"id\": \"diff\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, \"out\": {\"dx\": \"qd\"}}\n"
    "  ],\n"
    "  \"outputs\": [{\"path\": \"est.h5\", \"signals\": [\"qd\"]}],\n"
    "  \"metrics\": [{\"estimate\": \"qd\", \"reference\": \"qd_ref\", \"window\": [5.1, 8.0]}],\n"
    "  \"reports\": [\"report.md\", \"report.json\"]\n"
    "}\n";

static fixture make_fixture(const char *config_text)
{
    fixture fx;
    fx.dir = test_tmpdir();
    fx.log = test_path(fx.dir, "log.csv");
    fx.config = test_path(fx.dir, "pipeline.json");
    fx.out = test_path(fx.dir, "out");
    write_log(fx.log, -1, NULL);
    test_write_file(fx.config, config_text);
    return fx;
}

static void free_fixture(fixture *fx) { free(fx->dir), free(fx->log), free(fx->config), free(fx->out); }

/* Replace the first occurrence of `from` in GOOD_CONFIG by `to`. */
static char *config_with(const char *from, const char *to)
{
    const char *at = strstr(GOOD_CONFIG, from);
    cr_assert_not_null(at, "'%s' is in the base config", from);
    size_t n = strlen(GOOD_CONFIG) - strlen(from) + strlen(to) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%.*s%s%s", (int)(at - GOOD_CONFIG), GOOD_CONFIG, to, at + strlen(from));
    return s;
}

static void expect_run_failure(const char *config_text, int code, const char *const *must_contain, int bad_row,
                               const char *bad)
{
    fixture fx = make_fixture(config_text);
    if (bad_row >= 0)
        write_log(fx.log, bad_row, bad);
    cli_result r = cli_run(NULL, (const char *[]){"run", fx.config, "-o", fx.out, NULL});
    cr_expect_eq(r.status, code, "exit %d, wanted %d; stderr: %s", r.status, code, r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "one line on stderr, got: %s", r.err);
    for (const char *const *m = must_contain; *m; m++)
        cr_expect(strstr(r.err, *m), "stderr lacks '%s': %s", *m, r.err);
    cr_expect_str_empty(r.out, "nothing on stdout: %s", r.out);
    cr_expect(test_count_entries(fx.out) <= 0, "no output file: %d entries in %s", test_count_entries(fx.out), fx.out);
    cli_result_free(&r);
    free_fixture(&fx);
}

Test(cli_run, writes_estimates_and_reports)
{
    fixture fx = make_fixture(GOOD_CONFIG);
    cli_result r = cli_run(NULL, (const char *[]){"run", fx.config, "-o", fx.out, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "| e2e/log | qd | qd_ref | j1 |"), "the metric table goes to stdout: %s", r.out);
    cr_expect_str_empty(r.err, "no progress bar when stderr is not a terminal: %s", r.err);
    cli_result_free(&r);
    char *est = test_path(fx.out, "est.h5"), *md = test_path(fx.out, "report.md");
    char *json = test_path(fx.out, "report.json"), *csv = test_path(fx.dir, "est.csv");
    cr_expect(test_exists(est) && test_exists(md) && test_exists(json));

    /* The estimate is the backward difference of sin: check a sample against the formula. */
    r = cli_run(NULL, (const char *[]){"convert", est, "-o", csv, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    char *text = test_read_file(csv, NULL);
    cr_expect(strstr(text, "# config_sha256: ") && strstr(text, "# input_sha256: "), "provenance:\n%.400s", text);
    const char *row = strstr(text, "\n5.5,");
    cr_assert_not_null(row, "a row at t = 5.5:\n%.600s", text);
    double t, qd1;
    cr_assert_eq(sscanf(row + 1, "%lf,%lf", &t, &qd1), 2);
    double expected = (sin(5.0 + 0.01 * 50) - sin(5.0 + 0.01 * 49)) / 0.01;
    cr_expect(fabs(qd1 - expected) < 1e-9, "qd(5.5) = %.17g, backward difference %.17g", qd1, expected);
    free(text);

    /* Running again without --force refuses before doing anything; with --force it replaces. */
    r = cli_run(NULL, (const char *[]){"run", fx.config, "-o", fx.out, NULL});
    cr_expect_eq(r.status, CLI_EXIT_OUTPUT, "%s", r.err);
    cr_expect(strstr(r.err, "--force"), "%s", r.err);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"run", fx.config, "-o", fx.out, "--force", "-q", NULL});
    cr_expect_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    cr_expect_eq(test_count_entries(fx.out), 3, "no temporary files left");
    free(est), free(md), free(json), free(csv);
    free_fixture(&fx);
}

Test(cli_run, logs_on_the_command_line_and_print_config)
{
    fixture fx = make_fixture(GOOD_CONFIG);
    char *other = test_path(fx.dir, "second.csv");
    write_log(other, -1, NULL);
    cli_result r = cli_run(NULL, (const char *[]){"run", fx.config, fx.log, other, "-o", fx.out, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    char *sub = test_path(fx.out, "second/est.h5"), *top = test_path(fx.out, "report.json");
    cr_expect(test_exists(sub), "one folder per log");
    cr_expect(test_exists(top), "reports over every log");
    char *combined = test_read_file(top, NULL);
    cr_expect(strstr(combined, "e2e/log") && strstr(combined, "e2e/second"), "%s", combined);
    free(combined);

    r = cli_run(NULL, (const char *[]){"run", fx.config, "--print-config", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"finite_difference\"") && strstr(r.out, "\"order\""), "defaults are filled in: %s",
              r.out);
    cli_result_free(&r);
    free(sub), free(top), free(other);
    free_fixture(&fx);
}

/* The shipped demo leaves the kf_derivative diagnostics unwired: --print-config lists the wired ports only,
 * and `roboest stages` lists every port of the type. */
Test(cli_run, print_config_lists_only_wired_output_ports)
{
    cli_result r = cli_run(NULL, (const char *[]){"run", RB_SOURCE "/configs/demo.json", "--print-config", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *kf = strstr(r.out, "\"kf_derivative\"");
    cr_assert_not_null(kf, "%s", r.out);
    const char *end = strstr(kf, "\"params\"");
    cr_assert_not_null(end);
    const char *xdd = strstr(kf, "\"x_ddot\":\t\"qdd_kf\"");
    cr_expect(xdd && xdd < end, "%s", r.out);
    const char *nis = strstr(kf, "\"nis\"");
    cr_expect(!nis || nis > end, "unwired ports are absent: %s", r.out);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"stages", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "out: x x_dot x_ddot innovation nis var"), "%s", r.out);
    cli_result_free(&r);
}

Test(cli_run, bad_configs)
{
    expect_run_failure("{\n  \"name\": \"x\",\n  \"clock\": {\"rate\": 100,}\n}\n", CLI_EXIT_INPUT,
                       (const char *[]){"pipeline.json:3:", "malformed JSON", NULL}, -1, NULL);
    char *c = config_with("\"finite_difference\"", "\"finite_diference\"");
    expect_run_failure(c, CLI_EXIT_INPUT,
                       (const char *[]){"pipeline.json:10:", "stages[0].type", "finite_difference", NULL}, -1, NULL);
    free(c);
    c = config_with("\"in\": {\"x\": \"q\"}", "\"in\": {\"x\": \"q_nowhere\"}");
    expect_run_failure(c, CLI_EXIT_INPUT, (const char *[]){"pipeline.json:10:", "stages[0].in.x", "q_nowhere", NULL},
                       -1, NULL);
    free(c);
    c = config_with("\"clock\": {\"rate\": 100}", "\"clock\": {\"rate\": \"fast\"}");
    expect_run_failure(c, CLI_EXIT_INPUT, (const char *[]){"pipeline.json:4:", "clock.rate", NULL}, -1, NULL);
    free(c);
    c = config_with("\"signals\"", "\"signal\"");
    expect_run_failure(c, CLI_EXIT_INPUT, (const char *[]){"pipeline.json:5:", "signals", NULL}, -1, NULL);
    free(c);
}

Test(cli_run, bad_logs)
{
    char *c = config_with("\"joints_state/velocities\"", "\"joints_state/accelerations\"");
    expect_run_failure(c, CLI_EXIT_INPUT, (const char *[]){"log.csv", "joints_state/accelerations", NULL}, -1, NULL);
    free(c);
    /* wrong element count: an element index the channel does not have */
    c = config_with("{\"channel\": \"joints_state/positions\"}",
                    "{\"channel\": \"joints_state/positions\", \"elements\": [0, 2]}");
    expect_run_failure(c, CLI_EXIT_INPUT, (const char *[]){"joints_state/positions", "2", NULL}, -1, NULL);
    free(c);
    /* estimate and reference of different widths */
    c = config_with("{\"channel\": \"joints_state/velocities\"}",
                    "{\"channel\": \"joints_state/velocities\", \"elements\": [\"j2\"]}");
    expect_run_failure(c, CLI_EXIT_INPUT, (const char *[]){"qd", "qd_ref", NULL}, -1, NULL);
    free(c);
    /* NaN in an input channel: an error by default, naming the channel and the sample */
    expect_run_failure(GOOD_CONFIG, CLI_EXIT_INPUT, (const char *[]){"joints_state/positions", "j1", "sample", NULL},
                       150, "6.5,nan,21.125,0.97,6.5");
    /* non-monotonic timestamps */
    expect_run_failure(GOOD_CONFIG, CLI_EXIT_INPUT, (const char *[]){"log.csv", "sample 120", NULL}, 120,
                       "6.0,0.1,0.1,0.1,0.1");
    /* output path in a missing folder */
    c = config_with("\"path\": \"est.h5\"", "\"path\": \"missing/est.h5\"");
    expect_run_failure(c, CLI_EXIT_OUTPUT, (const char *[]){"missing", NULL}, -1, NULL);
    free(c);
}

Test(cli_run, nonfinite_hold_counts_and_warns)
{
    char *c = config_with("{\"channel\": \"joints_state/positions\"}",
                          "{\"channel\": \"joints_state/positions\", \"nonfinite\": \"hold\"}");
    fixture fx = make_fixture(c);
    write_log(fx.log, 150, "6.5,nan,21.125,0.97,6.5");
    cli_result r = cli_run(NULL, (const char *[]){"run", fx.config, "-o", fx.out, NULL});
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "warning") && strstr(r.err, "held"), "the held samples are reported: %s", r.err);
    cli_result_free(&r);
    free(c);
    free_fixture(&fx);
}

Test(cli_run, non_finite_estimate_is_a_numeric_failure)
{
    /* Finite positions whose differences overflow: the estimate becomes infinite, the metric refuses
     * it (naming the signal and the sample), nothing is written. */
    fixture fx = make_fixture(GOOD_CONFIG);
    FILE *f = fopen(fx.log, "w");
    fprintf(f, "time,joints_state/positions:j1,joints_state/positions:j2,"
               "joints_state/velocities:j1,joints_state/velocities:j2\n");
    for (int k = 0; k <= 300; k++)
        fprintf(f, "%.17g,%s,0,0,0\n", 5.0 + 0.01 * k, k % 2 ? "1.7e308" : "-1.7e308");
    fclose(f);
    cli_result r = cli_run(NULL, (const char *[]){"run", fx.config, "-o", fx.out, NULL});
    cr_expect_eq(r.status, CLI_EXIT_NUMERIC, "exit %d: %s", r.status, r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "qd") && strstr(r.err, "sample"), "%s", r.err);
    cr_expect(test_count_entries(fx.out) <= 0, "no output file");
    cli_result_free(&r);
    free_fixture(&fx);
}
