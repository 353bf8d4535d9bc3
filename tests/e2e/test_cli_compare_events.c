/* End-to-end: roboest compare with the statistics of online parameter estimation (step response, events,
 * the estimate alone, published values) and roboest check rules on them, including products and ratios.
 * The logs are written here: a mass estimate that is an exact first-order lag of a square-wave true mass,
 * with spikes after contact changes, and a 0/1 consistency flag. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum { N_SAMPLES = 1201 };                   /* 0 .. 12 s at 100 Hz */
static const double DT = 0.01;               /* s */
static const double EVENT_T[] = {4, 6.5, 9}; /* contact changes, 1.5 s after the square wave's steps */
static const double SPIKE[] = {1.5, 0.5, 1.0};

/* truth/mass (30 +/- 5 kg, switching every 2.5 s), sensors/mass_hat (its lag of time constant tau, plus a spike
 * 50 ms after each contact change), sensors/consistent (0 for 20 samples from the first contact change) and
 * truth/contacts (l, r) unless without_contacts. */
static void write_log(const char *path, double tau, bool without_contacts)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "time,truth/mass:torso [kg],sensors/mass_hat:torso [kg],sensors/consistent:torso%s\n",
            without_contacts ? "" : ",truth/contacts:l,truth/contacts:r");
    double y = 25, a = exp(-DT / tau);
    for (int k = 0; k < N_SAMPLES; k++) {
        double t = DT * k;
        double r = (long)floor((t + 1e-9) / 2.5) % 2 ? 35 : 25;
        y = r + (y - r) * a;
        double spike = 0;
        int l = 0, rr = 0;
        for (int e = 0; e < 3; e++) {
            if (k == (int)lround(EVENT_T[e] / DT) + 5)
                spike = SPIKE[e];
        }
        l = t >= 4 - 1e-9 && t < 9 - 1e-9;
        rr = t >= 6.5 - 1e-9;
        int consistent = !(k >= 400 && k < 420);
        fprintf(f, "%.17g,%.17g,%.17g,%d", t, r, y + spike, consistent);
        if (!without_contacts)
            fprintf(f, ",%d,%d", l, rr);
        fputc('\n', f);
    }
    fclose(f);
}

static const char *const SUITE =
    "{\"name\": \"mass\",\n"
    " \"variants\": [{\"name\": \"lag\", \"pipeline\": \"lag.json\", \"estimate\": \"m_hat\"},\n"
    "              {\"name\": \"flag\", \"pipeline\": \"flag.json\", \"estimate\": \"ok\"}],\n"
    " \"logs\": [\"a.csv\", \"b.csv\"],\n"
    " \"reference\": {\"channel\": \"truth/mass\", \"interp\": \"hold\"},\n"
    " \"steps\": {\"min_jump\": 5},\n"
    " \"events\": {\"channel\": \"truth/contacts\", \"window\": [0, 0.2]},\n"
    " \"statistics\": [\"rmse\", \"rise_time\", \"step_delay\", \"event_peak\", \"event_max\", \"min_est\", "
    "\"mean_est\", \"count_zero_est\"],\n"
    " \"published\": [{\"variant\": \"lag\", \"joint\": \"torso\", \"statistic\": \"rise_time\", \"value\": 0.25,\n"
    "                \"source\": \"Table II, no adaptation\"}]}\n";

typedef struct fixture {
    char *dir, *suite, *out, *report;
} fixture;

static fixture make_fixture(const char *suite_text, bool b_without_contacts)
{
    fixture fx = {test_tmpdir(), NULL, NULL, NULL};
    fx.suite = test_path(fx.dir, "suite.json");
    fx.out = test_path(fx.dir, "out");
    fx.report = test_path(fx.out, "report.json");
    char *a = test_path(fx.dir, "a.csv"), *b = test_path(fx.dir, "b.csv");
    char *lag = test_path(fx.dir, "lag.json"), *flag = test_path(fx.dir, "flag.json");
    write_log(a, 0.1, false);
    write_log(b, 0.2, b_without_contacts);
    test_write_file(lag,
                    "{\"clock\": {\"rate\": 100}, \"signals\": {\"m_hat\": {\"channel\": \"sensors/mass_hat\"}}}\n");
    test_write_file(flag,
                    "{\"clock\": {\"rate\": 100}, \"signals\": {\"ok\": {\"channel\": \"sensors/consistent\"}}}\n");
    test_write_file(fx.suite, suite_text);
    free(a), free(b), free(lag), free(flag);
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

/* variants[v].joints.torso.<stat>.mean of report.json */
static double stat_of(const cJSON *root, int v, const char *stat)
{
    const cJSON *var = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "variants"), v);
    const cJSON *s = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(var, "joints"), "torso"), stat);
    cr_assert_not_null(s, "variant %d has %s", v, stat);
    return cJSON_GetObjectItem(s, "mean")->valuedouble;
}

Test(cli_compare_events, step_event_flag_statistics_published_and_rules)
{
    fixture fx = make_fixture(SUITE, false);
    cli_result r = cli_run(NULL, (const char *[]){"compare", fx.suite, "-o", fx.out, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "## Published beside ours"), "%s", r.out);
    cr_expect(strstr(r.out, "| Table II, no adaptation | lag | torso | rise_time | 0.25 |"), "%s", r.out);
    cr_expect(strstr(r.out, "## steps unsettled per joint"), "shown with the rise time: %s", r.out);
    cli_result_free(&r);

    size_t len;
    char *json = test_read_file(fx.report, &len);
    cJSON *root = cJSON_Parse(json);
    cr_assert_not_null(root, "%s", json);
    /* first-order lags of tau 0.1 and 0.2 s (mean over the two logs): 10-90 % in tau ln 9; 50 % tau ln 2 after
     * the sample before the step, the lag having moved on the step's own sample: tau ln 2 - DT after it */
    double rise = stat_of(root, 0, "rise_time"), delay = stat_of(root, 0, "step_delay");
    cr_expect(fabs(rise - 0.15 * log(9)) <= DT / 2, "rise %.6g, want %.6g", rise, 0.15 * log(9));
    cr_expect(fabs(delay - (0.15 * log(2) - DT)) <= DT / 2, "delay %.6g, want %.6g", delay, 0.15 * log(2) - DT);
    cr_expect_eq(stat_of(root, 0, "steps_unsettled"), 0);
    /* the spikes 50 ms after each contact change, inside [t_e, t_e + 0.2] */
    double peak = stat_of(root, 0, "event_peak"), max = stat_of(root, 0, "event_max");
    cr_expect(fabs(peak - (1.5 + 0.5 + 1.0) / 3) < 0.01, "event_peak %.6g", peak);
    cr_expect(fabs(max - 1.5) < 0.01, "event_max %.6g", max);
    /* the flag: 20 inconsistent samples of 1201 on each log */
    cr_expect_eq(stat_of(root, 1, "min_est"), 0);
    cr_expect_eq(stat_of(root, 1, "count_zero_est"), 20);
    cr_expect(fabs(stat_of(root, 1, "mean_est") - (1 - 20.0 / N_SAMPLES)) < 1e-12);
    const cJSON *pub = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "published"), 0);
    cr_assert_not_null(pub, "%s", json);
    cr_expect_eq(cJSON_GetObjectItem(pub, "ours")->valuedouble, rise);
    cr_expect_eq(cJSON_GetObjectItem(pub, "ratio")->valuedouble, rise / 0.25);
    cJSON_Delete(root);
    free(json);

    char *rules = test_path(fx.dir, "rules.txt");
    test_write_file(rules, "lag.rise_time[torso] <= 0.5\n"
                           "lag.rise_time[torso] <= 0.1 * 5\n"
                           "flag.count_zero_est[torso] > 0\n"
                           "flag.min_est < 1\n"
                           "lag.event_max / lag.event_peak >= 1.4\n"
                           "2 * lag.step_delay < lag.rise_time\n");
    r = cli_run(NULL, (const char *[]){"check", fx.report, rules, NULL});
    cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_expect(strstr(r.out, "rules: 6 hold, 0 fail"), "%s", r.out);
    cr_expect(strstr(r.out, "lag.event_max / lag.event_peak = "), "%s", r.out);
    cli_result_free(&r);
    /* a ratio that does not hold fails (exit 6) with both values; one over a zero fails saying so */
    r = cli_run(NULL, (const char *[]){"check", fx.report, "--rule", "lag.rise_time / lag.step_delay > 4", "--rule",
                                       "lag.rmse / flag.min_est > 0", NULL});
    cr_expect_eq(r.status, CLI_EXIT_CHECK, "%s%s", r.out, r.err);
    cr_expect(strstr(r.out, "rules: 0 hold, 2 fail"), "%s", r.out);
    cr_expect(strstr(r.out, "division by zero"), "%s", r.out);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"check", fx.report, "--rule", "lag.rise_time / > 4", NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "%s%s", r.out, r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "%s", r.err);
    cli_result_free(&r);
    free(rules);
    free_fixture(&fx);
}

static void expect_compare_failure(const char *suite_text, bool b_without_contacts, const char *const *must)
{
    fixture fx = make_fixture(suite_text, b_without_contacts);
    cli_result r = cli_run(NULL, (const char *[]){"compare", fx.suite, "-o", fx.out, NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "exit %d: %s", r.status, r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "one line: %s", r.err);
    for (const char *const *m = must; *m; m++)
        cr_expect(strstr(r.err, *m), "stderr lacks '%s': %s", *m, r.err);
    cr_expect(test_count_entries(fx.out) <= 0, "no report: %d entries", test_count_entries(fx.out));
    cli_result_free(&r);
    free_fixture(&fx);
}

Test(cli_compare_events, step_statistics_need_steps)
{
    char *s = with(" \"steps\": {\"min_jump\": 5},\n", "");
    expect_compare_failure(s, false, (const char *[]){"statistics[1]", "rise_time", "\"steps\"", NULL});
    free(s);
}

Test(cli_compare_events, steps_need_min_jump)
{
    char *s = with("{\"min_jump\": 5}", "{\"min_jmp\": 5}");
    expect_compare_failure(s, false, (const char *[]){"steps", "min_jmp", "min_jump", NULL});
    free(s);
}

Test(cli_compare_events, event_statistics_need_events)
{
    char *s = with(" \"events\": {\"channel\": \"truth/contacts\", \"window\": [0, 0.2]},\n", "");
    expect_compare_failure(s, false, (const char *[]){"statistics[3]", "event_peak", "\"events\"", NULL});
    free(s);
}

Test(cli_compare_events, events_channel_missing_from_a_log)
{
    expect_compare_failure(SUITE, true, (const char *[]){"b.csv", "events channel truth/contacts not found", NULL});
}

Test(cli_compare_events, a_joint_without_step)
{
    char *s = with("\"min_jump\": 5", "\"min_jump\": 20");
    expect_compare_failure(s, false, (const char *[]){"a.csv", "joint 'torso'", "no step", "steps.min_jump", NULL});
    free(s);
}

Test(cli_compare_events, published_unknown_variant_joint_statistic_key)
{
    char *s = with("{\"variant\": \"lag\"", "{\"variant\": \"lga\"");
    expect_compare_failure(s, false, (const char *[]){"published[0].variant", "unknown variant 'lga'", "'lag'", NULL});
    free(s);
    s = with("\"statistic\": \"rise_time\"", "\"statistic\": \"rise_tim\"");
    expect_compare_failure(s, false, (const char *[]){"published[0].statistic", "rise_tim", "rise_time", NULL});
    free(s);
    s = with("\"source\":", "\"sourse\":");
    expect_compare_failure(s, false, (const char *[]){"published[0]", "sourse", "source", NULL});
    free(s);
    s = with("\"joint\": \"torso\"", "\"joint\": \"torsoo\"");
    expect_compare_failure(s, false, (const char *[]){"published[0]", "joint 'torsoo'", "truth/mass", NULL});
    free(s);
}
