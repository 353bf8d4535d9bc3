/* End-to-end: roboest compare and roboest check. A good suite writes the reports and figures and a rules
 * file gates on them (exit 0 / 6, JUnit XML); bad input gives one line naming the item, the documented
 * exit code, and no report. */
#include <criterion/criterion.h>
#include <libxml/parser.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* truth/tau (sin, cos) and a measurement offset by `off` (+ off / 2 on j2), at 100 Hz for 5 s. */
static void write_log(const char *path, double off, bool with_truth)
{
    FILE *f = fopen(path, "w");
    fprintf(f, "time,sensors/tau:j1,sensors/tau:j2%s\n", with_truth ? ",truth/tau:j1 [N m],truth/tau:j2 [N m]" : "");
    for (int k = 0; k <= 500; k++) {
        double t = 1.0 + 0.01 * k;
        fprintf(f, "%.17g,%.17g,%.17g", t, sin(t) + off, cos(t) + off / 2);
        if (with_truth)
            fprintf(f, ",%.17g,%.17g", sin(t), cos(t));
        fputc('\n', f);
    }
    fclose(f);
}

static const char *const SUITE =
    "{\"name\": \"e2e\",\n"
    " \"variants\": [{\"name\": \"raw\", \"pipeline\": \"raw.json\", \"estimate\": \"tau_hat\"},\n"
    "              {\"name\": \"smooth\", \"pipeline\": \"smooth.json\", \"estimate\": \"tau_lp\"}],\n"
    " \"logs\": [\"a.csv\", \"b.csv\"],\n"
    " \"reference\": {\"channel\": \"truth/tau\"},\n"
    " \"figures\": {\"traces\": [{\"joint\": \"j1\", \"log\": \"a\"}]}}\n";

typedef struct fixture {
    char *dir, *suite, *out, *report;
} fixture;

static fixture make_fixture(const char *suite_text, bool truth_in_b)
{
    fixture fx = {test_tmpdir(), NULL, NULL, NULL};
    fx.suite = test_path(fx.dir, "suite.json");
    fx.out = test_path(fx.dir, "out");
    fx.report = test_path(fx.out, "report.json");
    char *a = test_path(fx.dir, "a.csv"), *b = test_path(fx.dir, "b.csv");
    char *raw = test_path(fx.dir, "raw.json"), *smooth = test_path(fx.dir, "smooth.json");
    write_log(a, 0.1, true);
    write_log(b, 0.3, truth_in_b);
    test_write_file(raw, "{\"clock\": {\"rate\": 100}, \"signals\": {\"tau_hat\": {\"channel\": \"sensors/tau\"}}}\n");
    test_write_file(smooth, "{\"clock\": {\"rate\": 100}, \"signals\": {\"m\": {\"channel\": \"sensors/tau\"}},\n"
                            " \"stages\": [{\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"m\"},\n"
                            "              \"out\": {\"y\": \"tau_lp\"}, \"params\": {\"cutoff_hz\": 2}}]}\n");
    test_write_file(fx.suite, suite_text);
    free(a), free(b), free(raw), free(smooth);
    return fx;
}

static void free_fixture(fixture *fx) { free(fx->dir), free(fx->suite), free(fx->out), free(fx->report); }

static char *with(const char *from, const char *to)
{
    const char *at = strstr(SUITE, from);
    cr_assert_not_null(at, "'%s' is in the suite", from);
    size_t n = strlen(SUITE) - strlen(from) + strlen(to) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%.*s%s%s", (int)(at - SUITE), SUITE, to, at + strlen(from));
    return s;
}

Test(cli_compare, writes_the_table_and_figures_then_check_gates)
{
    fixture fx = make_fixture(SUITE, true);
    cli_result r = cli_run(NULL, (const char *[]){"compare", fx.suite, "-o", fx.out, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "## All joints") && strstr(r.out, "| raw |") && strstr(r.out, "## RMSE per joint"), "%s",
              r.out);
    cr_expect_str_empty(r.err);
    cli_result_free(&r);
    cr_expect_eq(test_count_entries(fx.out), 6, "report.md/json/csv, rmse_box, magnitude_box, one trace");
    char *svg = test_path(fx.out, "trace_a_j1_0.svg");
    xmlDocPtr doc = xmlReadFile(svg, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR);
    cr_expect_not_null(doc, "the trace is well-formed XML");
    xmlFreeDoc(doc);
    free(svg);

    /* raw's RMSE over both joints: log a sqrt((0.01 + 0.0025) / 2), log b sqrt((0.09 + 0.0225) / 2) */
    char *rules = test_path(fx.dir, "rules.txt"), *junit = test_path(fx.dir, "junit.xml");
    test_write_file(rules, "# CI gates\nraw.rmse < 0.16\nraw.rmse > 0.15\nsmooth.mae[j2] > 0\n");
    r = cli_run(NULL, (const char *[]){"check", fx.report, rules, "--junit", junit, NULL});
    cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_expect(strstr(r.out, "rules: 3 hold, 0 fail"), "%s", r.out);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"check", fx.report, rules, "--rule", "smooth.rmse < raw.rmse[j2]", "--junit",
                                       junit, "--force", NULL});
    cr_expect_eq(r.status, CLI_EXIT_CHECK, "%s%s", r.out, r.err);
    cr_expect(strstr(r.out, "FAIL  smooth.rmse = ") && strstr(r.out, "(--rule 1)"), "%s", r.out);
    cli_result_free(&r);
    doc = xmlReadFile(junit, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR);
    cr_assert_not_null(doc);
    xmlNodePtr suites = xmlDocGetRootElement(doc), suite = suites->children;
    while (suite && suite->type != XML_ELEMENT_NODE)
        suite = suite->next;
    int cases = 0, failures = 0;
    for (xmlNodePtr c = suite ? suite->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, "testcase") == 0) {
            cases++;
            for (xmlNodePtr f = c->children; f; f = f->next)
                failures += f->type == XML_ELEMENT_NODE && strcmp((const char *)f->name, "failure") == 0;
        }
    cr_expect_eq(cases, 4);
    cr_expect_eq(failures, 1);
    xmlFreeDoc(doc);
    free(rules), free(junit);
    free_fixture(&fx);
}

static void expect_compare_failure(const char *suite_text, bool truth_in_b, int code, const char *const *must)
{
    fixture fx = make_fixture(suite_text, truth_in_b);
    cli_result r = cli_run(NULL, (const char *[]){"compare", fx.suite, "-o", fx.out, NULL});
    cr_expect_eq(r.status, code, "exit %d, wanted %d: %s", r.status, code, r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "one line: %s", r.err);
    for (const char *const *m = must; *m; m++)
        cr_expect(strstr(r.err, *m), "stderr lacks '%s': %s", *m, r.err);
    cr_expect(test_count_entries(fx.out) <= 0, "no report: %d entries", test_count_entries(fx.out));
    cli_result_free(&r);
    free_fixture(&fx);
}

Test(cli_compare, missing_pipeline)
{
    char *s = with("smooth.json", "nowhere.json");
    expect_compare_failure(s, true, CLI_EXIT_INPUT,
                           (const char *[]){"suite.json:3:", "variants[1].pipeline", "nowhere.json", NULL});
    free(s);
}

Test(cli_compare, unknown_estimate_signal)
{
    char *s = with("\"tau_lp\"", "\"tau_l\"");
    expect_compare_failure(s, true, CLI_EXIT_INPUT,
                           (const char *[]){"variants[1].estimate", "'tau_l'", "did you mean 'tau_lp'", NULL});
    free(s);
}

Test(cli_compare, log_without_the_reference)
{
    expect_compare_failure(SUITE, false, CLI_EXIT_INPUT,
                           (const char *[]){"b.csv", "reference channel truth/tau not found", NULL});
}

Test(cli_compare, bad_suite_key_and_usage)
{
    char *s = with("\"figures\"", "\"figure\"");
    expect_compare_failure(s, true, CLI_EXIT_INPUT, (const char *[]){"unknown key 'figure'", "'figures'", NULL});
    free(s);
    cli_result r = cli_run(NULL, (const char *[]){"compare", NULL});
    cr_expect_eq(r.status, CLI_EXIT_USAGE);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"compare", "x.json", "--threads", "0", NULL});
    cr_expect_eq(r.status, CLI_EXIT_USAGE);
    cli_result_free(&r);
}

static void expect_check_failure(const char *rules_text, const char *inline_rule, const char *const *must)
{
    fixture fx = make_fixture(SUITE, true);
    cli_result r = cli_run(NULL, (const char *[]){"compare", fx.suite, "-o", fx.out, "-q", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    char *rules = test_path(fx.dir, "rules.txt"), *junit = test_path(fx.dir, "junit.xml");
    test_write_file(rules, rules_text);
    r = inline_rule
            ? cli_run(NULL, (const char *[]){"check", fx.report, rules, "--rule", inline_rule, "--junit", junit, NULL})
            : cli_run(NULL, (const char *[]){"check", fx.report, rules, "--junit", junit, NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "%s%s", r.out, r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "one line: %s", r.err);
    for (const char *const *m = must; *m; m++)
        cr_expect(strstr(r.err, *m), "stderr lacks '%s': %s", *m, r.err);
    cr_expect_str_empty(r.out, "no verdicts: %s", r.out);
    cr_expect(!test_exists(junit), "no JUnit file");
    cli_result_free(&r);
    free(rules), free(junit);
    free_fixture(&fx);
}

Test(cli_compare, rule_with_unknown_variant)
{
    expect_check_failure("raw.rmse < 1\nsmoth.rmse < raw.rmse\n", NULL,
                         (const char *[]){"rules.txt:2", "unknown variant 'smoth'", "did you mean 'smooth'", NULL});
}

Test(cli_compare, malformed_rules)
{
    expect_check_failure("raw.rmse < 1\n", "raw.rmse =< 1",
                         (const char *[]){"--rule 1", "'raw.rmse =< 1'", "column 10: expected a comparison", NULL});
    expect_check_failure("raw.rmse[j1 < 1\n", NULL, (const char *[]){"rules.txt:1", "'[' without ']'", NULL});
    expect_check_failure("# nothing\n", NULL, (const char *[]){"rules.txt: no rule", NULL});
}
