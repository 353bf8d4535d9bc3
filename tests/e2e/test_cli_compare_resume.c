/* End-to-end: roboest compare --resume, --shard K/N and --merge. Stored runs give a report with the same bytes as
 * a fresh run's; a stored run is not made again (its file untouched, the count on stderr); a corrupt one is made
 * again; shards merged give the fresh report; a merge with a shard missing names the run and writes nothing. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

/* truth/tau and a measurement offset by `off`, 100 Hz for 4 s. */
static void write_log(const char *dir, const char *name, double off)
{
    char *path = test_path(dir, name);
    FILE *f = fopen(path, "w");
    fprintf(f, "time,sensors/tau:j1,sensors/tau:j2,truth/tau:j1 [N m],truth/tau:j2 [N m]\n");
    for (int k = 0; k <= 400; k++) {
        double t = 1.0 + 0.01 * k;
        fprintf(f, "%.17g,%.17g,%.17g,%.17g,%.17g\n", t, sin(t) + off, cos(t) + off / 3, sin(t), cos(t));
    }
    fclose(f);
    free(path);
}

static const char *const SUITE_FMT =
    "{\"name\": \"resume\",\n"
    " \"variants\": [{\"name\": \"raw\", \"pipeline\": \"raw.json\", \"estimate\": \"tau_hat\"},\n"
    "              {\"name\": \"smooth\", \"pipeline\": \"smooth.json\", \"estimate\": \"tau_lp\"}],\n"
    " \"logs\": [%s],\n"
    " \"reference\": \"truth/tau\",\n"
    " \"figures\": {\"traces\": [{\"joint\": \"j1\", \"log\": \"a\"}]}}\n";

static char *make_suite(const char *dir, const char *logs)
{
    write_log(dir, "a.csv", 0.1);
    write_log(dir, "b.csv", 0.3);
    write_log(dir, "c.csv", 0.2);
    char *raw = test_path(dir, "raw.json"), *smooth = test_path(dir, "smooth.json"), *suite = test_path(dir, "s.json");
    test_write_file(raw, "{\"clock\": {\"rate\": 100}, \"signals\": {\"tau_hat\": {\"channel\": \"sensors/tau\"}}}\n");
    test_write_file(smooth, "{\"clock\": {\"rate\": 100}, \"signals\": {\"m\": {\"channel\": \"sensors/tau\"}},\n"
                            " \"stages\": [{\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"m\"},\n"
                            "              \"out\": {\"y\": \"tau_lp\"}, \"params\": {\"cutoff_hz\": 2}}]}\n");
    char text[2048];
    snprintf(text, sizeof text, SUITE_FMT, logs);
    test_write_file(suite, text);
    free(raw), free(smooth);
    return suite;
}

static void run_ok(const char *const *args, const char *stderr_has)
{
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    if (stderr_has)
        cr_expect(strstr(r.err, stderr_has), "stderr has '%s': %s", stderr_has, r.err);
    cli_result_free(&r);
}

/* Every report file of `a` (report.*, the figures) has the same bytes in `b`. */
static void expect_same_reports(const char *a, const char *b)
{
    static const char *const names[] = {"report.md",    "report.json",       "report.csv",
                                        "rmse_box.svg", "magnitude_box.svg", "trace_a_j1_0.svg"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *pa = test_path(a, names[i]), *pb = test_path(b, names[i]);
        size_t la = 0, lb = 0;
        char *ta = test_read_file(pa, &la), *tb = test_read_file(pb, &lb);
        cr_assert(ta && tb, "%s and %s exist", pa, pb);
        cr_expect(la == lb && memcmp(ta, tb, la) == 0, "%s: the same bytes as %s", pb, pa);
        free(ta), free(tb), free(pa), free(pb);
    }
}

static char *first_stored(const char *out)
{
    char *runs = test_path(out, "runs");
    DIR *d = opendir(runs);
    cr_assert_not_null(d, "%s exists", runs);
    char *path = NULL;
    for (struct dirent *e; (e = readdir(d)) && !path;)
        if (strstr(e->d_name, ".rbres"))
            path = test_path(runs, e->d_name);
    closedir(d);
    free(runs);
    cr_assert_not_null(path);
    return path;
}

Test(cli_compare_resume, stored_runs_give_the_fresh_report_and_are_not_made_again)
{
    char *dir = test_tmpdir(), *suite = make_suite(dir, "\"a.csv\", \"b.csv\"");
    char *fresh = test_path(dir, "fresh"), *out = test_path(dir, "out");
    run_ok((const char *[]){"compare", suite, "-o", fresh, "-q", NULL}, NULL);
    run_ok((const char *[]){"compare", suite, "-o", out, "-q", "--resume", NULL},
           "4 runs computed, 0 read from stored results");
    expect_same_reports(fresh, out);
    cr_expect_eq(test_count_entries(out), 7, "the report, the figures and runs/");

    char *stored = first_stored(out);
    struct stat before, after;
    cr_assert_eq(stat(stored, &before), 0);
    run_ok((const char *[]){"compare", suite, "-o", out, "-q", "--resume", NULL},
           "0 runs computed, 4 read from stored results");
    cr_assert_eq(stat(stored, &after), 0);
    cr_expect(before.st_ino == after.st_ino && before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
                  before.st_mtim.tv_nsec == after.st_mtim.tv_nsec,
              "%s was not written again", stored);
    expect_same_reports(fresh, out);

    /* a log added: only its runs are made, and the report is the fresh one of the larger suite */
    free(make_suite(dir, "\"a.csv\", \"b.csv\", \"c.csv\""));
    char *fresh3 = test_path(dir, "fresh3");
    run_ok((const char *[]){"compare", suite, "-o", fresh3, "-q", NULL}, NULL);
    run_ok((const char *[]){"compare", suite, "-o", out, "-q", "--resume", NULL},
           "2 runs computed, 4 read from stored results");
    expect_same_reports(fresh3, out);
    free(stored), free(fresh), free(fresh3), free(out), free(suite), free(dir);
}

Test(cli_compare_resume, a_corrupt_stored_run_is_made_again_never_trusted)
{
    char *dir = test_tmpdir(), *suite = make_suite(dir, "\"a.csv\", \"b.csv\"");
    char *fresh = test_path(dir, "fresh"), *out = test_path(dir, "out");
    run_ok((const char *[]){"compare", suite, "-o", fresh, "-q", NULL}, NULL);
    run_ok((const char *[]){"compare", suite, "-o", out, "-q", "--resume", NULL}, NULL);
    char *stored = first_stored(out);
    size_t len = 0;
    char *bytes = test_read_file(stored, &len);
    bytes[len / 2] ^= 0x01; /* one bit of a statistic or a trace sample */
    FILE *f = fopen(stored, "wb");
    fwrite(bytes, 1, len, f);
    fclose(f);
    cli_result r = cli_run(NULL, (const char *[]){"compare", suite, "-o", out, "-q", "--resume", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, stored) && strstr(r.err, "checksum mismatch") && strstr(r.err, "computing that run again"),
              "%s", r.err);
    cr_expect(strstr(r.err, "1 run computed, 3 read from stored results"), "%s", r.err);
    cli_result_free(&r);
    expect_same_reports(fresh, out);
    size_t len2 = 0;
    char *again = test_read_file(stored, &len2);
    cr_expect(len2 == len && memcmp(again, bytes, len) != 0, "the stored run was written again, whole");
    free(again), free(bytes), free(stored), free(fresh), free(out), free(suite), free(dir);
}

Test(cli_compare_resume, shards_merged_give_the_single_run_report)
{
    char *dir = test_tmpdir(), *suite = make_suite(dir, "\"a.csv\", \"b.csv\", \"c.csv\"");
    char *fresh = test_path(dir, "fresh"), *merged = test_path(dir, "merged");
    char *shard[3] = {test_path(dir, "s1"), test_path(dir, "s2"), test_path(dir, "s3")};
    run_ok((const char *[]){"compare", suite, "-o", fresh, "-q", NULL}, NULL);
    const char *k[3] = {"1/3", "2/3", "3/3"};
    for (int i = 0; i < 3; i++) {
        run_ok((const char *[]){"compare", suite, "-o", shard[i], "-q", "--shard", k[i], NULL},
               "2 runs computed, 0 read from stored results");
        cr_expect_eq(test_count_entries(shard[i]), 1, "a shard leaves runs/ only, no report");
    }
    run_ok((const char *[]){"compare", suite, "-q", "--merge", shard[0], shard[1], shard[2], "-o", merged, NULL},
           "0 runs computed, 6 read from stored results");
    expect_same_reports(fresh, merged);

    /* shard 2 missing: the first run without a result is named, exit 3, nothing written */
    char *partial = test_path(dir, "partial");
    cli_result r =
        cli_run(NULL, (const char *[]){"compare", suite, "--merge", shard[0], shard[2], "-o", partial, NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_expect(strstr(r.err, "no stored result for variant raw, log b"), "%s", r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "%s", r.err);
    cr_expect_not(test_exists(partial), "no report folder");
    cli_result_free(&r);
    for (int i = 0; i < 3; i++)
        free(shard[i]);
    free(partial), free(fresh), free(merged), free(suite), free(dir);
}
