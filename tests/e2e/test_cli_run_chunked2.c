/* End-to-end: a run in windows scans its channels for sensor faults a part at a time (faults.c): a log whose
 * widest channel does not fit the memory limit whole runs under it, with the same bytes (report, faults, outputs,
 * stdout, stderr) as the whole-log run. */
#include <criterion/criterion.h>
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

/* forearm_ekf.json in dir with reports and a touchier monitor (so that it finds faults); its path. */
static char *forearm_config(const char *dir)
{
    char *src = src_path("configs/inertial/forearm_ekf.json"), *data = src_path("datasets/");
    size_t n;
    char *text = test_read_file(src, &n);
    cr_assert_not_null(text, "%s", src);
    char *end = strrchr(text, '}'), *urdf = strstr(text, "../../datasets/");
    cr_assert(end && urdf);
    *end = '\0';
    size_t cap = n + strlen(data) + 512;
    char *out = malloc(cap);
    snprintf(out, cap,
             "%.*s%s%s, \"metrics\": [{\"name\": \"m\", \"estimate\": \"mass\", \"reference\": \"consistent\"}], "
             "\"reports\": [\"report.json\", \"report.md\"], \"faults\": {\"stuck_window\": 20, "
             "\"saturation_window\": 10, \"stuck_tolerance\": 1e-9}}\n",
             (int)(urdf - text), text, data, urdf + strlen("../../datasets/"));
    char *path = test_path(dir, "forearm.json");
    test_write_file(path, out);
    free(src), free(data), free(text), free(out);
    return path;
}

/* forearm_ekf's joints_state/positions with its data needs more than 1 MiB whole (the old monitor refused the run
 * up front, exit 3); scanned in parts the run goes under the limit, the fault tallies the whole run's. */
Test(cli_run_chunked2, the_fault_monitor_in_parts_runs_under_the_limit_same_bytes, .timeout = 300)
{
    char *dir = test_tmpdir(), *cfg = forearm_config(dir);
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
