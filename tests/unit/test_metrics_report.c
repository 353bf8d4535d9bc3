#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <valgrind/memcheck.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "roboest/metrics.h"
#include "support.h"

static rb_stats stats_of(size_t n, double mse, double rmse, double mae, double max_abs, double est, double ref)
{
    rb_stats s = {
        .n = n, .mse = mse, .rmse = rmse, .mae = mae, .max_abs = max_abs, .mean_abs_est = est, .mean_abs_ref = ref};
    return s;
}

/* Two rows whose %.4g text is known, names with a pipe and a backslash. */
static rb_report *small_report(void)
{
    rb_report *rep;
    rb_err err;
    cr_assert_eq(rb_report_new(&rep, "Joint torque errors", &err), RB_OK);
    cr_assert_eq(rb_report_set_attr(rep, "tool", "roboest 0.1.0", &err), RB_OK);
    cr_assert_eq(rb_report_set_attr(rep, "log", "a|b.mat", &err), RB_OK);
    rb_stats s1 = stats_of(3, 1.25 / 3, sqrt(1.25 / 3), 0.5, 1, 7.0 / 3, 2.5);
    rb_stats s2 = stats_of(6, 12345.678, 1e-7, 0, 123456789, 0.000125, 42);
    cr_assert_eq(rb_report_add(rep, "ukf|v1", "tau_hat", "tau", "r_knee", &s1, &err), RB_OK);
    cr_assert_eq(rb_report_add(rep, "rnea", "tau_hat", "tau\\ref", "all", &s2, &err), RB_OK);
    return rep;
}

static char *render(const rb_report *rep, rb_report_format fmt)
{
    char *text;
    rb_err err;
    cr_assert_eq(rb_report_render(rep, fmt, &text, &err), RB_OK, "%s", err.msg);
    return text;
}

Test(metrics_report, markdown_table_with_escaped_pipes)
{
    rb_report *rep = small_report();
    char *md = render(rep, RB_REPORT_MARKDOWN);
    const char *want =
        "# Joint torque errors\n"
        "\n"
        "- tool: roboest 0.1.0\n"
        "- log: a|b.mat\n"
        "\n"
        "| run | estimate | reference | element | MSE | RMSE | MAE | max abs | mean abs est"
        " | mean abs ref | N |\n"
        "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
        "| ukf\\|v1 | tau_hat | tau | r_knee | 0.4167 | 0.6455 | 0.5 | 1 | 2.333 | 2.5 | 3 |\n"
        "| rnea | tau_hat | tau\\\\ref | all | 1.235e+04 | 1e-07 | 0 | 1.235e+08 | 0.000125 | 42 | 6 |\n";
    cr_assert_str_eq(md, want);
    rb_free(md);
    rb_report_free(rep);
}

Test(metrics_report, rows_grouped_by_run_in_insertion_order)
{
    rb_report *rep;
    rb_err err;
    rb_stats s = stats_of(1, 1, 1, 1, 1, 1, 1);
    cr_assert_eq(rb_report_new(&rep, "t", &err), RB_OK);
    const char *runs[] = {"A", "B", "A", "C", "B", "A"};
    const char *elems[] = {"a1", "b1", "a2", "c1", "b2", "a3"};
    for (int k = 0; k < 6; k++)
        cr_assert_eq(rb_report_add(rep, runs[k], "e", "r", elems[k], &s, &err), RB_OK);
    const char *want[] = {"a1", "a2", "a3", "b1", "b2", "c1"};
    cr_assert_eq(rep->n_rows, 6);
    for (int k = 0; k < 6; k++) {
        cr_assert_str_eq(rep->rows[k].element, want[k]);
        cr_assert_eq(rep->rows[k].run[0], want[k][0] - 'a' + 'A');
    }
    cr_assert_eq(rb_report_add(rep, NULL, "e", "r", "x", &s, &err), RB_EINVAL);
    rb_report_free(rep);
}

Test(metrics_report, attrs_replace_existing_keys)
{
    rb_report *rep;
    rb_err err;
    cr_assert_eq(rb_report_new(&rep, "t", &err), RB_OK);
    cr_assert_eq(rb_report_set_attr(rep, "k", "1", &err), RB_OK);
    cr_assert_eq(rb_report_set_attr(rep, "j", "2", &err), RB_OK);
    cr_assert_eq(rb_report_set_attr(rep, "k", "3", &err), RB_OK);
    cr_assert_eq(rep->n_attrs, 2);
    cr_assert_str_eq(rep->attr_keys[0], "k");
    cr_assert_str_eq(rep->attr_values[0], "3");
    cr_assert_str_eq(rep->attr_keys[1], "j");
    rb_report_free(rep);
}

static void assert_bits_equal(double got, double want, const char *what)
{
    cr_assert(memcmp(&got, &want, sizeof got) == 0, "%s: %.17g parsed back, %.17g written", what, got, want);
}

Test(metrics_report, json_numbers_round_trip_bit_for_bit)
{
    rb_report *rep;
    rb_err err;
    cr_assert_eq(rb_report_new(&rep, "round \"trip\"", &err), RB_OK);
    cr_assert_eq(rb_report_set_attr(rep, "config_sha256", "ab12", &err), RB_OK);
    /* 0.1 + 0.2 and 0.7 + 0.1 are where a 15-digit printer is "close enough" but wrong. */
    const double v[2][6] = {{0.1 + 0.2, 0.7 + 0.1, 1.0 / 3, 5e-324, 1.7976931348623157e308, 2.0 / 3 * 1e-300},
                            {0.0, 1e22, 123456789.12345679, 2.5, 0.1, 299792458.0}};
    const size_t n[2] = {4294967301u, 7};
    for (int k = 0; k < 2; k++) {
        rb_stats s = stats_of(n[k], v[k][0], v[k][1], v[k][2], v[k][3], v[k][4], v[k][5]);
        const char *run = k ? "run2" : "run,1", *element = k ? "all" : "r_hip";
        cr_assert_eq(rb_report_add(rep, run, "tau_hat", "tau", element, &s, &err), RB_OK);
    }
    char *text = render(rep, RB_REPORT_JSON);
    cr_assert_null(strstr(text, "null"), "%s", text);
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root, "%s", text);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(root, "title")->valuestring, "round \"trip\"");
    cJSON *prov = cJSON_GetObjectItemCaseSensitive(root, "provenance");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(prov, "config_sha256")->valuestring, "ab12");
    cJSON *rows = cJSON_GetObjectItemCaseSensitive(root, "rows");
    cr_assert_eq(cJSON_GetArraySize(rows), 2);
    const char *keys[6] = {"mse", "rmse", "mae", "max_abs", "mean_abs_est", "mean_abs_ref"};
    for (int k = 0; k < 2; k++) {
        cJSON *row = cJSON_GetArrayItem(rows, k);
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(row, "run")->valuestring, k ? "run2" : "run,1");
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(row, "estimate")->valuestring, "tau_hat");
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(row, "reference")->valuestring, "tau");
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(row, "element")->valuestring, k ? "all" : "r_hip");
        cr_assert_eq(cJSON_GetObjectItemCaseSensitive(row, "n")->valuedouble, (double)n[k]);
        for (int j = 0; j < 6; j++) {
            cJSON *num = cJSON_GetObjectItemCaseSensitive(row, keys[j]);
            cr_assert(cJSON_IsNumber(num), "%s", keys[j]);
            assert_bits_equal(num->valuedouble, v[k][j], keys[j]);
        }
    }
    cJSON_Delete(root);
    rb_free(text);
    rb_report_free(rep);
}

Test(metrics_report, non_finite_statistic_is_refused_in_every_format)
{
    rb_report *rep = small_report();
    rb_err err;
    rb_stats bad = stats_of(2, 1, NAN, 1, 1, 1, 1);
    cr_assert_eq(rb_report_add(rep, "ekf", "v_hat", "v", "l_ankle", &bad, &err), RB_OK);
    for (int fmt = RB_REPORT_MARKDOWN; fmt <= RB_REPORT_CSV; fmt++) {
        char *text = (char *)"untouched";
        cr_assert_eq(rb_report_render(rep, (rb_report_format)fmt, &text, &err), RB_ENUMERIC);
        cr_assert_null(text);
        cr_assert_str_eq(err.msg, "run ekf: v_hat vs v: element l_ankle: rmse is NaN");
    }
    rep->rows[2].stats.rmse = 1;
    rep->rows[2].stats.max_abs = -INFINITY;
    cr_assert_eq(rb_report_render(rep, RB_REPORT_JSON, &(char *){NULL}, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "max_abs is infinite"), "%s", err.msg);
    rb_report_free(rep);
}

Test(metrics_report, csv_quotes_fields_and_round_trips_numbers)
{
    rb_report *rep;
    rb_err err;
    cr_assert_eq(rb_report_new(&rep, "csv", &err), RB_OK);
    cr_assert_eq(rb_report_set_attr(rep, "config", "demo.json\nsecond line", &err), RB_OK);
    rb_stats s = stats_of(5, 0.1 + 0.2, 1.0 / 3, 5e-324, 1e22, 0.7 + 0.1, 2.5);
    cr_assert_eq(rb_report_add(rep, "a,\"b\"", "#tau", " x", "plain", &s, &err), RB_OK);
    cr_assert_eq(rb_report_add(rep, "z", "e", "r", "two\nlines", &s, &err), RB_OK);
    char *csv = render(rep, RB_REPORT_CSV);
    const char *head = "# title: csv\n"
                       "# config: demo.json second line\n"
                       "run,estimate,reference,element,n,mse,rmse,mae,max_abs,mean_abs_est,mean_abs_ref\n"
                       "\"a,\"\"b\"\"\",\"#tau\",\" x\",plain,5,";
    cr_assert(strncmp(csv, head, strlen(head)) == 0, "%s", csv);
    cr_assert(strstr(csv, "\nz,e,r,\"two\nlines\",5,"), "%s", csv);

    const double want[6] = {s.mse, s.rmse, s.mae, s.max_abs, s.mean_abs_est, s.mean_abs_ref};
    char *p = csv + strlen(head) - 1;
    for (int j = 0; j < 6; j++) {
        cr_assert_eq(*p, ',', "field %d at %s", j, p);
        char *end;
        double x = strtod(p + 1, &end);
        assert_bits_equal(x, want[j], "csv number");
        p = end;
    }
    cr_assert_eq(*p, '\n');
    rb_free(csv);
    rb_report_free(rep);
}

Test(metrics_report, numbers_use_a_dot_in_any_locale)
{
    char dir[] = "/tmp/rb_locale_XXXXXX";
    cr_assert(test_decimal_comma_locale(LC_ALL, dir), "a decimal-comma locale (localedef, Debian's locales)");
    char probe[16];
    snprintf(probe, sizeof probe, "%.1f", 0.5);
    cr_assert_str_eq(probe, "0,5", "the locale really uses a decimal comma");
    rb_report *rep = small_report();
    char *md = render(rep, RB_REPORT_MARKDOWN), *csv = render(rep, RB_REPORT_CSV);
    char *json = render(rep, RB_REPORT_JSON);
    test_locale_restore(LC_ALL, dir);
    cr_assert(strstr(md, "| 0.4167 | 0.6455 | 0.5 |"), "%s", md);
    cr_assert(strstr(csv, ",0.5,1,"), "%s", csv);
    cr_assert(strstr(json, "\"mae\":\t0.5,"), "%s", json);
    rb_free(md);
    rb_free(csv);
    rb_free(json);
    rb_report_free(rep);
}

Test(metrics_report, format_from_path)
{
    rb_report_format fmt;
    rb_err err;
    cr_assert_eq(rb_report_format_from_path("out/r.md", &fmt, &err), RB_OK);
    cr_assert_eq(fmt, RB_REPORT_MARKDOWN);
    cr_assert_eq(rb_report_format_from_path("R.JSON", &fmt, &err), RB_OK);
    cr_assert_eq(fmt, RB_REPORT_JSON);
    cr_assert_eq(rb_report_format_from_path("a.b/x.csv", &fmt, &err), RB_OK);
    cr_assert_eq(fmt, RB_REPORT_CSV);
    cr_assert_eq(rb_report_format_from_path("out/r.txt", &fmt, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "out/r.txt"), "%s", err.msg);
    cr_assert_eq(rb_report_format_from_path("dir.md/report", &fmt, &err), RB_ECONFIG);
}

/* ---- writing -------------------------------------------------------------------------------- */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

Test(metrics_report, write_is_atomic_and_respects_overwrite)
{
    char dir[] = "/tmp/rb_metrics_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char *path = rb_asprintf("%s/report.json", dir);
    rb_report *rep = small_report();
    rb_err err;
    cr_assert_eq(rb_report_write(rep, path, RB_REPORT_JSON, false, &err), RB_OK, "%s", err.msg);
    char *json = render(rep, RB_REPORT_JSON);
    cr_assert_str_eq(slurp(path), json);

    cr_assert_eq(rb_report_set_attr(rep, "tool", "changed", &err), RB_OK);
    cr_assert_eq(rb_report_write(rep, path, RB_REPORT_JSON, false, &err), RB_EEXISTS);
    cr_assert(strstr(err.msg, path), "%s", err.msg);
    cr_assert_str_eq(slurp(path), json, "the existing file is left alone");
    cr_assert_eq(rb_report_write(rep, path, RB_REPORT_JSON, true, &err), RB_OK, "%s", err.msg);
    cr_assert(strstr(slurp(path), "changed"));
    cr_assert_eq(test_count_entries(dir), 1, "no temporary left behind");

    unlink(path);
    rmdir(dir);
    rb_free(json);
    rb_free(path);
    rb_report_free(rep);
}

Test(metrics_report, failed_write_leaves_nothing)
{
    char dir[] = "/tmp/rb_metrics_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char *path = rb_asprintf("%s/report.md", dir);
    rb_report *rep = small_report();
    rb_err err;
    rep->rows[0].stats.mse = NAN;
    cr_assert_eq(rb_report_write(rep, path, RB_REPORT_MARKDOWN, true, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, path) && strstr(err.msg, "mse is NaN"), "%s", err.msg);
    struct stat st;
    cr_assert_neq(stat(path, &st), 0);
    cr_assert_eq(test_count_entries(dir), 0);

    rep->rows[0].stats.mse = 1;
    char *missing = rb_asprintf("%s/no/such/report.md", dir);
    cr_assert_eq(rb_report_write(rep, missing, RB_REPORT_MARKDOWN, true, &err), RB_EIO);
    cr_assert(strstr(err.msg, missing), "%s", err.msg);
    cr_assert_eq(test_count_entries(dir), 0);

    rmdir(dir);
    rb_free(missing);
    rb_free(path);
    rb_report_free(rep);
}

/* ---- allocation failures -------------------------------------------------------------------- */

/* Criterion has already counted a test as passed when ASan or valgrind report leaks at the
 * worker's exit, so ask them from inside the test. Outside both tools this returns 0 (glibc's
 * own counters include cached free chunks, so they cannot tell a leak). */
static unsigned long leaked_blocks(void)
{
    unsigned long leaked = 0, dubious = 0, reachable = 0, suppressed = 0;
    VALGRIND_DO_QUICK_LEAK_CHECK; /* summary only: Criterion's live buffers look "possibly lost" */
    VALGRIND_COUNT_LEAK_BLOCKS(leaked, dubious, reachable, suppressed);
    (void)dubious, (void)reachable, (void)suppressed;
#if defined(__SANITIZE_ADDRESS__)
    leaked += __lsan_do_recoverable_leak_check() != 0;
#endif
    return leaked;
}

/* A report large enough that rows and attributes grow past their first capacity. */
static int build_report(rb_report **out, rb_err *err)
{
    rb_report *rep = NULL;
    int rc = rb_report_new(&rep, "alloc", err);
    rb_stats s = stats_of(10, 0.25, 0.5, 0.4, 1.5, 2, 2.25);
    char run[16], key[16];
    for (int k = 0; !rc && k < 12; k++) {
        snprintf(run, sizeof run, "run%d", k % 3);
        size_t before = rep->n_rows;
        rc = rb_report_add(rep, run, "tau_hat", "tau", "j", &s, err);
        if (rc)
            cr_assert_eq(rep->n_rows, before, "a failed add leaves the report unchanged");
    }
    for (int k = 0; !rc && k < 10; k++) {
        snprintf(key, sizeof key, "key%d", k);
        size_t before = rep->n_attrs;
        rc = rb_report_set_attr(rep, key, "value", err);
        if (rc)
            cr_assert_eq(rep->n_attrs, before, "a failed set_attr leaves the report unchanged");
    }
    if (!rc)
        rc = rb_report_set_attr(rep, "key3", "replaced", err);
    if (rc) {
        rb_report_free(rep);
        return rc;
    }
    *out = rep;
    return RB_OK;
}

Test(metrics_report, every_allocation_failure_is_enomem_without_leaks)
{
    unsigned long leaked_before = leaked_blocks();
    rb_err err;
    rb_report *rep = NULL;
    long n = 0;
    for (;; n++) {
        rb_alloc_fail_after(n);
        int rc = build_report(&rep, &err);
        rb_alloc_fail_after(-1);
        if (rc == RB_OK)
            break;
        cr_assert_eq(rc, RB_ENOMEM, "failure %ld: %s", n, err.msg);
    }
    cr_assert_gt(n, 20, "the loop went through the report's allocations");
    cr_assert_eq(rep->n_rows, 12);
    cr_assert_str_eq(rep->attr_values[3], "replaced");

    /* Route cJSON through rb_malloc so its allocations fail too (this test process only). */
    cJSON_Hooks hooks = {rb_malloc, rb_free};
    cJSON_InitHooks(&hooks);
    for (int fmt = RB_REPORT_MARKDOWN; fmt <= RB_REPORT_CSV; fmt++) {
        char *want = render(rep, (rb_report_format)fmt), *text = NULL;
        for (n = 0;; n++) {
            rb_alloc_fail_after(n);
            int rc = rb_report_render(rep, (rb_report_format)fmt, &text, &err);
            rb_alloc_fail_after(-1);
            if (rc == RB_OK)
                break;
            cr_assert_eq(rc, RB_ENOMEM, "format %d failure %ld: %s", fmt, n, err.msg);
            cr_assert_null(text);
        }
        cr_assert_gt(n, 0);
        cr_assert_str_eq(text, want);
        rb_free(text);
        rb_free(want);
    }
    cJSON_InitHooks(NULL);
    rb_report_free(rep);
    cr_assert_eq(leaked_blocks(), leaked_before, "blocks leaked (see the leak report above)");
}
