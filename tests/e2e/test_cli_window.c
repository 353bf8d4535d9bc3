/* End-to-end: time windows relative to the log's first sample ({"from_start": [t0, t1]}) in pipelines and suites, on
 * logs stamped with epoch times (~1.7e9 s, as a robot logger writes them), and the metrics' default start-up skip
 * (settle). The logs are written here: an estimate whose error is 0.1 for the first 5 s of the log and 0.3 after. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define EPOCH 1700000000.0

/* 10 s at 100 Hz from t_start: truth/x = 1, est/x = 1 + 0.1 (first 5 s) or + 0.3; pos/x = 0.5 t (a ramp, from 0). */
static void write_log(const char *path, double t_start)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "time,truth/x:a [m],est/x:a [m],pos/x:a [m],truth/v:a [m/s]\n");
    for (int k = 0; k <= 1000; k++)
        fprintf(f, "%.17g,1,%.17g,%.17g,0.5\n", t_start + 0.01 * k, 1.0 + (k < 500 ? 0.1 : 0.3), 0.005 * k);
    fclose(f);
}

static cli_result run(const char *const *args)
{
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    return r;
}

/* The pooled row of metric `name` in a run report: n and rmse. */
static void pooled(const cJSON *rep, const char *name, double *n, double *rmse)
{
    const cJSON *row = NULL;
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(rep, "rows"))
    {
        if (strcmp(cJSON_GetObjectItem(row, "estimate")->valuestring, name) == 0 &&
            strcmp(cJSON_GetObjectItem(row, "element")->valuestring, "all") == 0) {
            *n = cJSON_GetObjectItem(row, "n")->valuedouble;
            *rmse = cJSON_GetObjectItem(row, "rmse")->valuedouble;
            return;
        }
    }
    cr_assert_fail("no pooled row %s", name);
}

/* The report's "windows" line of metric `name` (NULL when absent). */
static const char *window_line(const cJSON *rep, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, " %s: t from", name);
    const cJSON *w = NULL;
    cJSON_ArrayForEach(w, cJSON_GetObjectItem(rep, "windows"))
    {
        if (strstr(w->valuestring, key))
            return w->valuestring;
    }
    return NULL;
}

Test(cli_window, from_start_selects_the_samples_of_the_absolute_window_on_an_epoch_log)
{
    char *dir = test_tmpdir(), *log = test_path(dir, "epoch.csv"), *pa = test_path(dir, "abs.json");
    char *pr = test_path(dir, "rel.json"), *oa = test_path(dir, "oa"), *orr = test_path(dir, "or");
    char *ra = test_path(oa, "r.json"), *rr = test_path(orr, "r.json");
    write_log(log, EPOCH);
    /* the clock limited to [1, 9.5] s of the log, one metric over [2, 7] s: 3 s at 0.1 and 2 s at 0.3 */
    test_write_file(pa, "{\"clock\": {\"rate\": 100}, \"window\": [1700000001, 1700000009.5],\n"
                        " \"signals\": {\"x\": {\"channel\": \"est/x\"}, \"t\": {\"channel\": \"truth/x\"}},\n"
                        " \"metrics\": [{\"estimate\": \"x\", \"reference\": \"t\", \"name\": \"w\",\n"
                        "               \"window\": [1700000002, 1700000007]},\n"
                        "              {\"estimate\": \"x\", \"reference\": \"t\", \"name\": \"whole\"}],\n"
                        " \"reports\": [\"r.json\"]}\n");
    test_write_file(pr, "{\"clock\": {\"rate\": 100}, \"window\": {\"from_start\": [1, 9.5]},\n"
                        " \"signals\": {\"x\": {\"channel\": \"est/x\"}, \"t\": {\"channel\": \"truth/x\"}},\n"
                        " \"metrics\": [{\"estimate\": \"x\", \"reference\": \"t\", \"name\": \"w\",\n"
                        "               \"window\": {\"from_start\": [2, 7]}},\n"
                        "              {\"estimate\": \"x\", \"reference\": \"t\", \"name\": \"whole\"}],\n"
                        " \"reports\": [\"r.json\"]}\n");
    const char *a1[] = {"run", pa, log, "-o", oa, "-q", NULL}, *a2[] = {"run", pr, log, "-o", orr, "-q", NULL};
    cli_result r = run(a1);
    cli_result_free(&r);
    r = run(a2);
    cli_result_free(&r);
    cJSON *ja = test_read_json(NULL, ra), *jr = test_read_json(NULL, rr);
    double na, rmse_a, nr, rmse_r;
    pooled(ja, "w", &na, &rmse_a);
    pooled(jr, "w", &nr, &rmse_r);
    cr_assert_eq(na, 501, "samples of [2, 7] s at 100 Hz: %g", na);
    cr_assert_eq(nr, na, "the relative window scores %g samples, the absolute one %g", nr, na);
    cr_assert_eq(rmse_r, rmse_a);
    cr_assert_float_eq(rmse_a, sqrt((300 * 0.01 + 201 * 0.09) / 501), 1e-9);
    pooled(ja, "whole", &na, &rmse_a);
    pooled(jr, "whole", &nr, &rmse_r);
    cr_assert_eq(na, 851, "the clock [1, 9.5] s: %g samples", na);
    cr_assert(nr == na && rmse_r == rmse_a, "the relative clock window: %g samples, the absolute %g", nr, na);
    /* the report says which window: the relative one as written and where it fell in the log */
    const char *line = window_line(jr, "w");
    cr_assert(line && strstr(line, "t from 1700000002 to 1700000007 s") &&
                  strstr(line, "[2, 7] s after the log's first sample"),
              "%s", line ? line : "(none)");
    cJSON_Delete(ja);
    cJSON_Delete(jr);
    free(dir), free(log), free(pa), free(pr), free(oa), free(orr), free(ra), free(rr);
}

/* A relative window is resolved per log: two logs 1234.5 s apart score the same stretch of each. */
Test(cli_window, suite_of_two_logs_with_different_starts)
{
    char *dir = test_tmpdir(), *la = test_path(dir, "a.csv"), *lb = test_path(dir, "b.csv");
    char *pipe = test_path(dir, "p.json"), *suite = test_path(dir, "s.json"), *out = test_path(dir, "out");
    char *report = test_path(out, "report.json");
    write_log(la, EPOCH);
    write_log(lb, EPOCH + 1234.5);
    test_write_file(pipe, "{\"clock\": {\"rate\": 100}, \"signals\": {\"x\": {\"channel\": \"est/x\"}}}\n");
    test_write_file(suite, "{\"name\": \"w\", \"variants\": [\n"
                           " {\"name\": \"early\", \"pipeline\": \"p.json\", \"estimate\": \"x\"},\n"
                           " {\"name\": \"late\", \"pipeline\": \"p.json\", \"estimate\": \"x\",\n"
                           "  \"window\": {\"from_start\": [5, 10]}}],\n"
                           " \"logs\": [\"a.csv\", \"b.csv\"], \"reference\": \"truth/x\",\n"
                           " \"window\": {\"from_start\": [0, 4.99]}, \"statistics\": [\"rmse\"],\n"
                           " \"figures\": {\"traces\": [{\"joint\": \"a\", \"log\": \"b\",\n"
                           "                            \"window\": {\"from_start\": [4, 6]}}]}}\n");
    const char *args[] = {"compare", suite, "-o", out, "-q", NULL};
    cli_result r = run(args);
    cli_result_free(&r);
    cJSON *rep = test_read_json(NULL, report);
    const cJSON *v = NULL;
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(rep, "variants"))
    {
        const char *name = cJSON_GetObjectItem(v, "name")->valuestring;
        const cJSON *per_log =
            cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "all"), "rmse"), "per_log");
        cr_assert_eq(cJSON_GetArraySize(per_log), 2);
        for (int l = 0; l < 2; l++)
            cr_assert_float_eq(cJSON_GetArrayItem(per_log, l)->valuedouble, strcmp(name, "early") ? 0.3 : 0.1, 1e-12,
                               "variant %s, log %d: %g", name, l, cJSON_GetArrayItem(per_log, l)->valuedouble);
    }
    /* the provenance says where each log's window fell */
    const cJSON *prov = cJSON_GetObjectItem(rep, "provenance");
    const cJSON *wb = cJSON_GetObjectItem(prov, "log b: window");
    cr_assert(cJSON_IsString(wb) && strstr(wb->valuestring, "t from 1700001234.5 to 1700001239.49 s"), "%s",
              cJSON_IsString(wb) ? wb->valuestring : "(none)");
    char *trace = test_path(out, "trace_b_a_0.svg");
    cr_assert(test_exists(trace));
    free(trace);
    cJSON_Delete(rep);
    /* the equivalent absolute window holds no sample of the second log: it is an error naming that log */
    char *text = test_read_file(suite, NULL), *at = strstr(text, "{\"from_start\": [0, 4.99]}");
    cr_assert_not_null(at);
    char *abs_suite = test_path(dir, "abs.json"), *out2 = test_path(dir, "out2");
    char *fixed = malloc(strlen(text) + 64);
    snprintf(fixed, strlen(text) + 64, "%.*s[1700000000, 1700000004.99]%s", (int)(at - text), text,
             at + strlen("{\"from_start\": [0, 4.99]}"));
    test_write_file(abs_suite, fixed);
    const char *bad[] = {"compare", abs_suite, "-o", out2, "-q", NULL};
    r = cli_run(NULL, bad);
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "b.csv") && strstr(r.err, "inside the window"), "%s", r.err);
    cli_result_free(&r);
    free(text), free(fixed), free(abs_suite), free(out2);
    free(dir), free(la), free(lb), free(pipe), free(suite), free(out), free(report);
}

Test(cli_window, a_bad_relative_window_names_its_key)
{
    char *dir = test_tmpdir(), *log = test_path(dir, "a.csv"), *pipe = test_path(dir, "p.json");
    char *out = test_path(dir, "out");
    write_log(log, EPOCH);
    const char *cases[][2] = {
        {"{\"from_start\": [5, 1]}", "metrics[0].window.from_start[1]: must be greater than window[0]"},
        {"{\"from_stat\": [0, 1]}", "metrics[0].window: unknown key 'from_stat' (did you mean 'from_start'?)"},
        {"{}", "metrics[0].window: missing key 'from_start'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "{\"clock\": {\"rate\": 100}, \"signals\": {\"x\": {\"channel\": \"est/x\"}, \"t\": {\"channel\": "
                 "\"truth/x\"}},\n \"metrics\": [{\"estimate\": \"x\", \"reference\": \"t\", \"window\": %s}],\n"
                 " \"reports\": [\"r.json\"]}\n",
                 cases[i][0]);
        test_write_file(pipe, text);
        const char *args[] = {"run", pipe, log, "-o", out, "-q", NULL};
        cli_result r = cli_run(NULL, args);
        cr_assert_eq(r.status, CLI_EXIT_INPUT, "%s: exit %d: %s", cases[i][0], r.status, r.err);
        cr_assert(strstr(r.err, cases[i][1]), "%s: %s", cases[i][0], r.err);
        cr_assert_eq(test_count_lines(r.err), 1);
        cr_assert_not(test_exists(out));
        cli_result_free(&r);
    }
    free(dir), free(log), free(pipe), free(out);
}

/* Without a window a metric skips the pipeline's start-up (the kf_derivative's settling time); "settle": 0 or a
 * window scores every sample, as before. The velocity of a ramp starts at 0 while the truth is 0.5 m/s. */
Test(cli_window, metrics_skip_the_filters_start_up_by_default)
{
    char *dir = test_tmpdir(), *log = test_path(dir, "a.csv"), *pipe = test_path(dir, "p.json");
    write_log(log, EPOCH);
    const char *variants[] = {"", ", \"settle\": 0", ", \"settle\": 0.5"};
    double n[3], rmse[3];
    for (int i = 0; i < 3; i++) {
        char text[1024], name[16];
        snprintf(text, sizeof text,
                 "{\"clock\": {\"rate\": 100}%s,\n"
                 " \"signals\": {\"q\": {\"channel\": \"pos/x\"}, \"v\": {\"channel\": \"truth/v\"}},\n"
                 " \"stages\": [{\"id\": \"kf\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"},\n"
                 "              \"out\": {\"x_dot\": \"qd\"}}],\n"
                 " \"metrics\": [{\"estimate\": \"qd\", \"reference\": \"v\"}], \"reports\": [\"r.json\"]}\n",
                 variants[i]);
        test_write_file(pipe, text);
        snprintf(name, sizeof name, "out%d", i);
        char *out = test_path(dir, name), *rep = test_path(out, "r.json");
        const char *args[] = {"run", pipe, log, "-o", out, "-q", NULL};
        cli_result r = run(args);
        cli_result_free(&r);
        cJSON *j = test_read_json(NULL, rep);
        pooled(j, "qd", &n[i], &rmse[i]);
        const char *line = window_line(j, "qd");
        cr_assert_not_null(line);
        if (i == 0) /* the report states the start-up it excluded and which stage sets it */
            cr_assert(strstr(line, "start-up of 0.1 s excluded (settle: stage kf, kf_derivative)"), "%s", line);
        if (i == 1)
            cr_assert(strstr(line, "no start-up excluded (settle 0)"), "%s", line);
        cJSON_Delete(j);
        free(out), free(rep);
    }
    /* kf_derivative's defaults settle in 0.100001 s at 100 Hz: 11 samples fewer, and an error well below the transient's */
    cr_assert_eq(n[1], 1001);
    cr_assert_eq(n[0], 990, "%g samples scored (t >= 0.100001 s)", n[0]);
    cr_assert_eq(n[2], 951);
    cr_assert(rmse[0] < 0.2 * rmse[1], "rmse with the start-up skipped %g, with it %g", rmse[0], rmse[1]);
    free(dir), free(log), free(pipe);
}

/* A suite without a window skips the largest start-up of its variants on every variant (the same samples for all);
 * with a window it scores what the window says, as before. */
Test(cli_window, suite_skips_the_largest_start_up_of_its_variants)
{
    char *dir = test_tmpdir(), *log = test_path(dir, "a.csv"), *kf = test_path(dir, "kf.json");
    char *raw = test_path(dir, "raw.json"), *suite = test_path(dir, "s.json"), *out = test_path(dir, "out");
    char *report = test_path(out, "report.json");
    write_log(log, 0.0);
    test_write_file(kf, "{\"clock\": {\"rate\": 100}, \"signals\": {\"q\": {\"channel\": \"pos/x\"}},\n"
                        " \"stages\": [{\"id\": \"kf\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"},\n"
                        "              \"out\": {\"x_dot\": \"qd\"}}]}\n");
    test_write_file(raw, "{\"clock\": {\"rate\": 100}, \"signals\": {\"qd\": {\"channel\": \"truth/v\"}}}\n");
    const char *windows[] = {"", ", \"window\": [0, 10]"};
    for (int i = 0; i < 2; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"variants\": [{\"name\": \"kf\", \"pipeline\": \"kf.json\", \"estimate\": \"qd\"},\n"
                 "  {\"name\": \"raw\", \"pipeline\": \"raw.json\", \"estimate\": \"qd\"}],\n"
                 " \"logs\": [\"a.csv\"], \"reference\": \"truth/v\", \"statistics\": [\"max_abs\"]%s}\n",
                 windows[i]);
        test_write_file(suite, text);
        const char *args[] = {"compare", suite, "-o", out, "-q", "--force", NULL};
        cli_result r = run(args);
        cli_result_free(&r);
        cJSON *rep = test_read_json(NULL, report);
        const cJSON *w = cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "provenance"), "log a: window");
        cr_assert(cJSON_IsString(w));
        const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItem(rep, "variants"), 0);
        double max_abs =
            cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "all"), "max_abs"), "mean")->valuedouble;
        if (i == 0) {
            cr_assert(
                strstr(w->valuestring, "start-up of 0.1 s excluded (settle: variant kf, stage kf, kf_derivative)"),
                "%s", w->valuestring);
            cr_assert(max_abs < 0.05, "the filter's error after its start-up: %g", max_abs);
        } else {
            cr_assert(strstr(w->valuestring, "the suite's window [0, 10] s"), "%s", w->valuestring);
            cr_assert_float_eq(max_abs, 0.5, 1e-9, "the first sample's velocity is 0: %g", max_abs);
        }
        cJSON_Delete(rep);
    }
    free(dir), free(log), free(kf), free(raw), free(suite), free(out), free(report);
}

/* A friction training spec's relative window fits what the absolute one fits, on an epoch-stamped log whose friction
 * doubles after 5 s: only the first 4.9 s are used either way. */
Test(cli_window, training_spec_from_start_fits_the_absolute_windows_samples)
{
    char *dir = test_tmpdir(), *log = test_path(dir, "e.csv"), *rel = test_path(dir, "rel.json");
    char *abs_spec = test_path(dir, "abs.json");
    FILE *f = fopen(log, "w");
    cr_assert_not_null(f);
    fprintf(f, "time,joints_state/velocities:a [rad/s],motors_state/currents:a [A],tau/x:a [N.m]\n");
    for (int k = 0; k <= 1000; k++) {
        double t = 0.01 * k, v = sin(2 * t), tau = 0.5 * cos(t), s = v > 0 ? 1 : -1;
        double fr = t < 5 ? 0.3 * s + 0.1 * v : 0.6 * s + 0.2 * v;
        fprintf(f, "%.17g,%.17g,%.17g,%.17g\n", EPOCH + t, v, tau + fr, tau); /* k_t R = 1 */
    }
    fclose(f);
    const char *spec = "{\"logs\": [\"e.csv\"], \"joints\": [\"a\"], \"torque\": {\"channel\": \"tau/x\"}, \"k_t\": "
                       "[0.1], \"R\": [10], \"window\": %s}";
    char text[512];
    snprintf(text, sizeof text, spec, "{\"from_start\": [0, 4.9]}");
    test_write_file(rel, text);
    snprintf(text, sizeof text, spec, "[1700000000, 1700000004.9]");
    test_write_file(abs_spec, text);
    const char *a1[] = {"train-friction", "rel.json", "--fit-analytic", "coulomb_viscous", NULL};
    const char *a2[] = {"train-friction", "abs.json", "--fit-analytic", "coulomb_viscous", NULL};
    cli_result r1 = cli_run(dir, a1), r2 = cli_run(dir, a2);
    cr_assert(r1.status == 0 && r2.status == 0, "%s / %s", r1.err, r2.err);
    cr_assert_str_eq(r1.out, r2.out);
    cr_assert(strstr(r1.out, "on all 491 samples") && strstr(r1.out, "\"F_c\": [0.3"), "%s", r1.out);
    cli_result_free(&r1);
    cli_result_free(&r2);
    free(dir), free(log), free(rel), free(abs_spec);
}

/* A suite's events.window is relative to each event already: "from_start" is refused there, naming the key. */
Test(cli_window, events_window_refuses_from_start)
{
    char *dir = test_tmpdir(), *log = test_path(dir, "a.csv"), *pipe = test_path(dir, "p.json");
    char *suite = test_path(dir, "s.json"), *out = test_path(dir, "out");
    write_log(log, EPOCH);
    test_write_file(pipe, "{\"clock\": {\"rate\": 100}, \"signals\": {\"x\": {\"channel\": \"est/x\"}}}\n");
    test_write_file(suite, "{\"variants\": [{\"name\": \"v\", \"pipeline\": \"p.json\", \"estimate\": \"x\"}],\n"
                           " \"logs\": [\"a.csv\"], \"reference\": \"truth/x\",\n"
                           " \"events\": {\"channel\": \"est/x\", \"window\": {\"from_start\": [0, 1]}},\n"
                           " \"statistics\": [\"event_peak\"]}\n");
    const char *args[] = {"compare", suite, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "events.window: expected [t0, t1] in seconds") && strstr(r.err, "does not apply"), "%s",
              r.err);
    cr_assert_not(test_exists(out));
    cli_result_free(&r);
    free(dir), free(log), free(pipe), free(suite), free(out);
}
