/* End-to-end: a suite variant's own "window" scores it over that window instead of the suite's (one estimator early
 * and late in the same run, as two variants a rule compares); a bad one is refused naming the key. The log is
 * written here: an estimate whose error is 0.1 before t = 5 s and 0.3 after. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static double rmse_of(const cJSON *report, const char *variant)
{
    const cJSON *v = NULL;
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(report, "variants"))
    {
        if (strcmp(cJSON_GetObjectItem(v, "name")->valuestring, variant) == 0)
            return cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "all"), "rmse"), "mean")->valuedouble;
    }
    cr_assert_fail("no variant %s", variant);
    return NAN;
}

Test(cli_compare_variant_window, each_variant_over_its_own_window)
{
    char *dir = test_tmpdir(), *log = test_path(dir, "a.csv"), *pipe = test_path(dir, "p.json");
    char *suite = test_path(dir, "s.json"), *out = test_path(dir, "out"), *report = test_path(out, "report.json");
    FILE *f = fopen(log, "w");
    cr_assert_not_null(f);
    fprintf(f, "time,truth/x:a [m],est/x:a [m]\n");
    for (int k = 0; k <= 1000; k++) /* 0 .. 10 s at 100 Hz */
        fprintf(f, "%.17g,%.17g,%.17g\n", 0.01 * k, 1.0, 1.0 + (k < 500 ? 0.1 : 0.3));
    fclose(f);
    test_write_file(pipe, "{\"clock\": {\"rate\": 100}, \"signals\": {\"x\": {\"channel\": \"est/x\"}}}\n");
    test_write_file(suite,
                    "{\"name\": \"w\", \"variants\": [\n"
                    " {\"name\": \"early\", \"pipeline\": \"p.json\", \"estimate\": \"x\", \"window\": [0, 4.9]},\n"
                    " {\"name\": \"late\", \"pipeline\": \"p.json\", \"estimate\": \"x\", \"window\": [5, 10]},\n"
                    " {\"name\": \"all\", \"pipeline\": \"p.json\", \"estimate\": \"x\"}],\n"
                    " \"logs\": [\"a.csv\"], \"reference\": \"truth/x\", \"window\": [0, 10],\n"
                    " \"statistics\": [\"rmse\"]}\n");
    const char *args[] = {"compare", suite, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    char *text = test_read_file(report, NULL);
    cJSON *rep = cJSON_Parse(text);
    cr_assert_not_null(rep);
    cr_assert_float_eq(rmse_of(rep, "early"), 0.1, 1e-12);
    cr_assert_float_eq(rmse_of(rep, "late"), 0.3, 1e-12);
    cr_assert_float_eq(rmse_of(rep, "all"), sqrt((500 * 0.01 + 501 * 0.09) / 1001), 1e-12);
    cJSON_Delete(rep);
    free(text);
    /* a rule compares the two windows of one estimator */
    const char *check[] = {"check", report, "--rule", "late.rmse > 2.5 * early.rmse", "-q", NULL};
    r = cli_run(NULL, check);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    /* an inverted window is refused naming the variant's key */
    test_write_file(suite,
                    "{\"name\": \"w\", \"variants\": [\n"
                    " {\"name\": \"early\", \"pipeline\": \"p.json\", \"estimate\": \"x\", \"window\": [5, 1]}],\n"
                    " \"logs\": [\"a.csv\"], \"reference\": \"truth/x\"}\n");
    char *out2 = test_path(dir, "out2");
    const char *bad[] = {"compare", suite, "-o", out2, "-q", NULL};
    r = cli_run(NULL, bad);
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "variants[0].window"), "%s", r.err);
    cr_assert_eq(test_count_lines(r.err), 1);
    cr_assert_not(test_exists(out2));
    cli_result_free(&r);
    free(dir), free(log), free(pipe), free(suite), free(out), free(report), free(out2);
}
