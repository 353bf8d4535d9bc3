/* End-to-end: roboest compare under `mpirun --oversubscribe -np N` (Open MPI, installed by make deps; as root
 * where CI runs, hence --allow-run-as-root). The report has the bytes of the plain run for N = 1, 2, 3, and with
 * threads in the ranks (--threads 2, 3); a failing run names its (variant, log), the exit code is the run's, and no
 * report is written. No case is skipped: without
 * mpirun the tests fail. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static void write_log(const char *dir, const char *name, double off, bool nan_at_2s)
{
    char *path = test_path(dir, name);
    FILE *f = fopen(path, "w");
    fprintf(f, "time,sensors/tau:j1,sensors/tau:j2,truth/tau:j1 [N m],truth/tau:j2 [N m]\n");
    for (int k = 0; k <= 400; k++) {
        double t = 1.0 + 0.01 * k;
        fprintf(f, "%.17g,%.17g,%.17g,%.17g,%.17g\n", t, nan_at_2s && k == 100 ? NAN : sin(t) + off, cos(t) + off / 3,
                sin(t), cos(t));
    }
    fclose(f);
    free(path);
}

static char *make_suite(const char *dir, bool failing)
{
    write_log(dir, "a.csv", 0.1, false);
    write_log(dir, "b.csv", 0.3, failing);
    write_log(dir, "c.csv", 0.2, false);
    write_log(dir, "d.csv", 0.4, false);
    char *raw = test_path(dir, "raw.json"), *smooth = test_path(dir, "smooth.json"), *suite = test_path(dir, "s.json");
    test_write_file(raw, "{\"clock\": {\"rate\": 100}, \"signals\": {\"tau_hat\": {\"channel\": \"sensors/tau\"}}}\n");
    test_write_file(smooth, "{\"clock\": {\"rate\": 100}, \"signals\": {\"m\": {\"channel\": \"sensors/tau\"}},\n"
                            " \"stages\": [{\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"m\"},\n"
                            "              \"out\": {\"y\": \"tau_lp\"}, \"params\": {\"cutoff_hz\": 2}}]}\n");
    test_write_file(suite,
                    "{\"name\": \"mpi\",\n"
                    " \"variants\": [{\"name\": \"raw\", \"pipeline\": \"raw.json\", \"estimate\": \"tau_hat\"},\n"
                    "   {\"name\": \"smooth\", \"pipeline\": \"smooth.json\", \"estimate\": \"tau_lp\"}],\n"
                    " \"logs\": [\"a.csv\", \"b.csv\", \"c.csv\", \"d.csv\"],\n"
                    " \"reference\": \"truth/tau\",\n"
                    " \"figures\": {\"traces\": [{\"joint\": \"j2\", \"log\": \"c\"}]}}\n");
    free(raw), free(smooth);
    return suite;
}

/* mpirun -np n build/roboest compare suite -o out -q [--threads threads]: the exit code, stderr in *err (free). */
static int mpirun_compare_threads(int n, const char *threads, const char *suite, const char *out, char **err)
{
    cli_result r = cli_run_mpi(
        n, (const char *[]){"compare", suite, "-o", out, "-q", threads ? "--threads" : NULL, threads, NULL});
    int status = r.status;
    *err = r.err;
    free(r.out);
    return status;
}

static int mpirun_compare(int n, const char *suite, const char *out, char **err)
{
    return mpirun_compare_threads(n, NULL, suite, out, err);
}

static void expect_same_reports(const char *a, const char *b)
{
    static const char *const names[] = {"report.md",    "report.json",       "report.csv",
                                        "rmse_box.svg", "magnitude_box.svg", "trace_c_j2_0.svg"};
    cr_expect_eq(test_count_entries(b), 6, "%s: the report and the figures, nothing else", b);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *pa = test_path(a, names[i]), *pb = test_path(b, names[i]);
        size_t la = 0, lb = 0;
        char *ta = test_read_file(pa, &la), *tb = test_read_file(pb, &lb);
        cr_assert(ta && tb, "%s and %s exist", pa, pb);
        cr_expect(la == lb && memcmp(ta, tb, la) == 0, "%s: the same bytes as %s", pb, pa);
        free(ta), free(tb), free(pa), free(pb);
    }
}

Test(cli_compare_mpi, the_report_has_the_plain_runs_bytes_on_1_2_and_3_ranks)
{
    char *dir = test_tmpdir(), *suite = make_suite(dir, false), *plain = test_path(dir, "plain");
    cli_result r = cli_run(NULL, (const char *[]){"compare", suite, "-o", plain, "-q", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    for (int n = 1; n <= 3; n++) {
        char name[32];
        snprintf(name, sizeof name, "np%d", n);
        char *out = test_path(dir, name), *err = NULL;
        int status = mpirun_compare(n, suite, out, &err);
        cr_assert_eq(status, 0, "mpirun -np %d: exit %d: %s", n, status, err ? err : "");
        expect_same_reports(plain, out);
        free(err), free(out);
    }
    free(plain), free(suite), free(dir);
}

/* Ranks x threads: every rank runs up to --threads runs at once, the report's bytes do not move. */
Test(cli_compare_mpi, the_report_has_the_plain_runs_bytes_with_threads_in_the_ranks)
{
    char *dir = test_tmpdir(), *suite = make_suite(dir, false), *plain = test_path(dir, "plain");
    cli_result r = cli_run(NULL, (const char *[]){"compare", suite, "-o", plain, "-q", "--threads", "1", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    static const struct {
        int n;
        const char *threads;
    } cases[] = {{1, "2"}, {2, "2"}, {3, "2"}, {2, "3"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char name[32];
        snprintf(name, sizeof name, "np%d_t%s", cases[c].n, cases[c].threads);
        char *out = test_path(dir, name), *err = NULL;
        int status = mpirun_compare_threads(cases[c].n, cases[c].threads, suite, out, &err);
        cr_assert_eq(status, 0, "mpirun -np %d --threads %s: exit %d: %s", cases[c].n, cases[c].threads, status,
                     err ? err : "");
        expect_same_reports(plain, out);
        free(err), free(out);
    }
    free(plain), free(suite), free(dir);
}

Test(cli_compare_mpi, a_failing_run_is_named_and_leaves_no_report)
{
    char *dir = test_tmpdir(), *suite = make_suite(dir, true), *plain = test_path(dir, "plain");
    cli_result r = cli_run(NULL, (const char *[]){"compare", suite, "-o", plain, "-q", NULL});
    cr_assert(r.status == CLI_EXIT_INPUT || r.status == CLI_EXIT_NUMERIC, "the plain run fails too: %s", r.err);
    for (int n = 2; n <= 3; n++) {
        char name[32];
        snprintf(name, sizeof name, "np%d", n);
        char *out = test_path(dir, name), *err = NULL;
        int status = mpirun_compare_threads(n, n == 3 ? "2" : NULL, suite, out, &err);
        cr_expect_eq(status, r.status, "mpirun -np %d: the plain run's exit code: %s", n, err ? err : "");
        cr_expect(err && strstr(err, "variant raw: ") && strstr(err, "b.csv"), "names the run: %s", err ? err : "");
        cr_expect(err && strstr(err, r.err), "the plain run's message (%s): %s", r.err, err ? err : "");
        int said = 0;
        for (const char *at = err; at && (at = strstr(at, "roboest: variant")); at++)
            said++;
        cr_expect_eq(said, 1, "said once, by rank 0: %s", err ? err : "");
        cr_expect_not(test_exists(out), "no report: %s", out);
        free(err), free(out);
    }
    cli_result_free(&r);
    free(plain), free(suite), free(dir);
}
