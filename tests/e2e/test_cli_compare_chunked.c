/* End-to-end: roboest compare --memory-limit reads the suite's own channels (reference, contact, events) in parts
 * as the runs read their bindings: the reference resampled onto each run's clock window by window, the contact
 * stretches and the events scanned part by part, the log's channels nobody uses never read. The report has the
 * bytes of the whole-log compare; what must be read whole (a figure's trace of the reference) and does not fit is
 * said up front, exit 3, no report. The logs are written here (roboest .h5 layout, read in parts). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "roboest/io.h"

#define T_CLOCK 60000 /* 60 s at 1 kHz */
#define REF_RATE 5    /* reference samples per clock sample: 7.2 MB whole */
#define BULK 160      /* elements of a channel no one reads: 77 MB whole */

static void add(rb_log *log, const char *name, size_t T, size_t n, double dt, const char *const *names,
                double (*f)(double t, size_t i, double off), double off)
{
    rb_channel *ch = NULL;
    rb_err err;
    cr_assert_eq(rb_log_add_channel(log, name, T, n, &ch, &err), RB_OK, "%s", err.msg);
    for (size_t k = 0; k < T; k++) {
        ch->time[k] = 1.0 + dt * (double)k;
        for (size_t i = 0; f && i < n; i++)
            ch->data[k * n + i] = f(ch->time[k], i, off);
    }
    for (size_t i = 0; names && i < n; i++)
        cr_assert_eq(rb_channel_set_name(ch, i, names[i], &err), RB_OK);
}

static double truth(double t, size_t i, double off) { return (void)off, i ? cos(t) : sin(3 * t); }
static double sensed(double t, size_t i, double off) { return truth(t, i, 0) + off * sin(17 * t + (double)i); }
static double pushes(double t, size_t i, double off) { return (void)i, (void)off, fmod(t, 7.0) < 1.0 ? 5.0 : 0.0; }
static double phase(double t, size_t i, double off) { return (void)i, (void)off, floor(t / 4.0); }

static void write_log(const char *dir, const char *name, double off)
{
    static const char *const joints[] = {"j1", "j2"};
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    add(log, "sensors/tau", T_CLOCK, 2, 1e-3, joints, sensed, off);
    add(log, "truth/tau", (size_t)T_CLOCK * REF_RATE, 2, 1e-3 / REF_RATE, joints, truth, 0);
    add(log, "truth/pushes", T_CLOCK / 10, 1, 1e-2, NULL, pushes, 0);
    add(log, "truth/phase", T_CLOCK / 10, 1, 1e-2, NULL, phase, 0);
    add(log, "camera/features", T_CLOCK, BULK, 1e-3, NULL, NULL, 0);
    char *path = test_path(dir, name);
    rb_write_opts o = {RB_OUT_H5, true, NULL};
    cr_assert_eq(rb_log_write(log, path, &o, &err), RB_OK, "%s", err.msg);
    rb_log_free(log);
    free(path);
}

/* The logs written by a child process: this one stays small, and so do the roboest processes it forks (a child's peak
 * memory counts the parent's pages it starts with). */
static char *make_suite(const char *dir)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        write_log(dir, "a.h5", 0.05);
        write_log(dir, "b.h5", 0.1);
        _exit(0);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the logs written");
    char *raw = test_path(dir, "raw.json"), *smooth = test_path(dir, "smooth.json"), *suite = test_path(dir, "s.json");
    test_write_file(raw, "{\"clock\": {\"rate\": 1000}, \"signals\": {\"tau_hat\": {\"channel\": \"sensors/tau\"}}}\n");
    test_write_file(smooth, "{\"clock\": {\"rate\": 1000}, \"signals\": {\"m\": {\"channel\": \"sensors/tau\"}},\n"
                            " \"stages\": [{\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"m\"},\n"
                            "              \"out\": {\"y\": \"tau_lp\"}, \"params\": {\"cutoff_hz\": 5}}]}\n");
    test_write_file(suite,
                    "{\"name\": \"long logs\",\n"
                    " \"variants\": [{\"name\": \"raw\", \"pipeline\": \"raw.json\", \"estimate\": \"tau_hat\"},\n"
                    "   {\"name\": \"smooth\", \"pipeline\": \"smooth.json\", \"estimate\": \"tau_lp\"}],\n"
                    " \"logs\": [\"a.h5\", \"b.h5\"], \"reference\": \"truth/tau\", \"joints\": [\"j1\", \"j2\"],\n"
                    " \"statistics\": [\"rmse\", \"max_abs\", \"event_peak\", \"event_max\"],\n"
                    " \"events\": {\"channel\": \"truth/phase\", \"window\": [-0.1, 0.5]},\n"
                    " \"figures\": {\"traces\": [{\"joint\": \"j1\", \"log\": \"a\", \"window\": [10, 12]}],\n"
                    "             \"contact\": {\"channel\": \"truth/pushes\", \"threshold\": 1}}}\n");
    free(raw), free(smooth);
    return suite;
}

static void same_file(const char *a, const char *b, const char *name)
{
    char *pa = test_path(a, name), *pb = test_path(b, name);
    size_t la = 0, lb = 0;
    char *ta = test_read_file(pa, &la), *tb = test_read_file(pb, &lb);
    cr_assert(ta && tb, "%s and %s exist", pa, pb);
    cr_expect(la == lb && memcmp(ta, tb, la) == 0, "%s: the same bytes as %s", pb, pa);
    free(ta), free(tb), free(pa), free(pb);
}

/* roboest compare SUITE -o out -q --threads 1 --memory-limit MB, waited for alone: its exit code and peak memory. */
static int limited_compare(const char *suite, const char *out, struct rusage *ru)
{
    const char *args[] = {"compare", suite, "-o", out, "-q", "--threads", "1", "--memory-limit", "16", NULL};
    int null_fd = open("/dev/null", O_WRONLY);
    pid_t pid = cli_spawn(NULL, args, null_fd, null_fd, 0);
    close(null_fd);
    int status = 0;
    cr_assert_eq(wait4(pid, &status, 0, ru), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Test(cli_compare_chunked, the_suites_channels_read_in_parts_same_report_less_memory)
{
    char *dir = test_tmpdir(), *suite = make_suite(dir), *whole = test_path(dir, "whole"), *lim = test_path(dir, "lim");
    char *peak_dir = test_path(dir, "peak");
    struct rusage ru;
    cr_assert_eq(limited_compare(suite, peak_dir, &ru), CLI_EXIT_OK);
    cli_result rl = cli_run(
        NULL, (const char *[]){"compare", suite, "-o", lim, "-q", "--threads", "1", "--memory-limit", "16", NULL});
    cr_assert_eq(rl.status, CLI_EXIT_OK, "%s", rl.err);
    double bulk_mib = (double)T_CLOCK * (BULK + 1) * sizeof(double) / 1048576.0;
    /* the whole-log read holds the unused camera channel (74 MiB; peak 200 MiB before): the limited one never reads
     * it (peak about 53 MiB: the runs, the reference whole for the trace and its copies in the runs) */
#ifndef __SANITIZE_ADDRESS__ /* AddressSanitizer's shadow and quarantine weigh more than the channel: the plain run checks it */
    cr_expect_lt((double)ru.ru_maxrss / 1024.0, bulk_mib, "peak %.1f MiB, the unused channel %.1f MiB",
                 (double)ru.ru_maxrss / 1024.0, bulk_mib);
#else
    (void)bulk_mib;
    cr_log_info("peak %.1f MiB under AddressSanitizer (not checked)", (double)ru.ru_maxrss / 1024.0);
#endif
    cli_result rw = cli_run(NULL, (const char *[]){"compare", suite, "-o", whole, "-q", "--threads", "1", NULL});
    cr_assert_eq(rw.status, CLI_EXIT_OK, "%s", rw.err);
    cr_expect_str_eq(rl.out, rw.out);
    cr_expect_str_eq(rl.err, rw.err);
    static const char *const files[] = {"report.md",    "report.json",       "report.csv",
                                        "rmse_box.svg", "magnitude_box.svg", "trace_a_j1_0.svg"};
    cr_expect_eq(test_count_entries(lim), 6, "%s: the report and the figures", lim);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        same_file(whole, lim, files[i]);
    cli_result_free(&rl), cli_result_free(&rw);
    free(whole), free(lim), free(peak_dir), free(suite), free(dir);
}

/* A figure's trace holds the reference's samples: that channel is read whole, and over the limit it is said up
 * front (before any run), exit 3, one line naming the log, the channel and the memory; no report. */
Test(cli_compare_chunked, a_trace_of_a_reference_over_the_limit_is_said_up_front)
{
    char *dir = test_tmpdir(), *suite = make_suite(dir), *out = test_path(dir, "out");
    cli_result r = cli_run(NULL, (const char *[]){"compare", suite, "-o", out, "-q", "--memory-limit", "4", NULL});
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "one line: %s", r.err);
    cr_expect(strstr(r.err, "a.h5") && strstr(r.err, "figures.traces") && strstr(r.err, "truth/tau") &&
                  strstr(r.err, "MiB"),
              "%s", r.err);
    cr_expect_not(test_exists(out), "no report: %s", out);
    cli_result_free(&r);
    free(out), free(suite), free(dir);
}

/* The limit is the process's: what the suite holds whole (here the trace's reference of log a, 6.9 MiB) comes off it
 * first, and the runs at once share the rest. A run keeps about 2.3 MiB whole (the clock, the estimate, a channel's
 * timestamps while they are checked): under 10 MiB one run at a time fits (3.1 MiB for it), two at once do not (1.6
 * MiB each), which is said as the runs start, one line naming the share, exit 3, no report; under 14 MiB two fit.
 * The report's bytes are the whole-log compare's either way. */
Test(cli_compare_chunked, the_limit_is_the_processs_and_the_runs_at_once_share_it)
{
    char *dir = test_tmpdir(), *suite = make_suite(dir), *whole = test_path(dir, "whole");
    cli_result rw = cli_run(NULL, (const char *[]){"compare", suite, "-o", whole, "-q", "--threads", "1", NULL});
    cr_assert_eq(rw.status, CLI_EXIT_OK, "%s", rw.err);
    static const struct {
        const char *threads, *mb;
        bool fits;
    } cases[] = {{"1", "10", true}, {"2", "10", false}, {"2", "14", true}};
    static const char *const files[] = {"report.md",    "report.json",       "report.csv",
                                        "rmse_box.svg", "magnitude_box.svg", "trace_a_j1_0.svg"};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char name[32];
        snprintf(name, sizeof name, "t%s_%s", cases[c].threads, cases[c].mb);
        char *out = test_path(dir, name);
        cli_result r = cli_run(NULL, (const char *[]){"compare", suite, "-o", out, "-q", "--threads", cases[c].threads,
                                                      "--memory-limit", cases[c].mb, NULL});
        if (cases[c].fits) {
            cr_expect_eq(r.status, CLI_EXIT_OK, "--threads %s --memory-limit %s: %s", cases[c].threads, cases[c].mb,
                         r.err);
            for (size_t i = 0; r.status == CLI_EXIT_OK && i < sizeof files / sizeof files[0]; i++)
                same_file(whole, out, files[i]);
        } else {
            cr_expect_eq(r.status, CLI_EXIT_INPUT, "--threads %s --memory-limit %s: %s", cases[c].threads, cases[c].mb,
                         r.err);
            cr_expect_eq(test_count_lines(r.err), 1, "one line: %s", r.err);
            cr_expect(strstr(r.err, "variant ") && strstr(r.err, ".h5") && strstr(r.err, "MiB") &&
                          strstr(r.err, "of the limit of 10.0 MiB, 2 runs at once") &&
                          strstr(r.err, "6.9 MiB the suite holds whole"),
                      "names the run, what it needs and its share: %s", r.err);
            cr_expect_not(test_exists(out), "no report: %s", out);
        }
        cli_result_free(&r);
        free(out);
    }
    cli_result_free(&rw);
    free(whole), free(suite), free(dir);
}

/* What the suite holds whole adds up over the logs: a trace on each log holds both references (6.9 MiB each), over
 * 12 MiB at the second log, said before any run (one line naming it and the MiB, exit 3, no report). */
Test(cli_compare_chunked, what_the_suite_holds_whole_adds_up_and_is_said_before_any_run)
{
    char *dir = test_tmpdir(), *suite = make_suite(dir), *two = test_path(dir, "two.json"),
         *out = test_path(dir, "out");
    size_t len = 0;
    char *text = test_read_file(suite, &len), *at = text ? strstr(text, "\"window\": [10, 12]}]") : NULL;
    cr_assert(at, "the suite's trace");
    FILE *f = fopen(two, "w");
    cr_assert(f);
    fprintf(f, "%.*s\"window\": [10, 12]}, {\"joint\": \"j2\", \"log\": \"b\"}]%s", (int)(at - text), text,
            at + strlen("\"window\": [10, 12]}]"));
    fclose(f);
    cli_result r = cli_run(NULL, (const char *[]){"compare", two, "-o", out, "-q", "--memory-limit", "12", NULL});
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "one line: %s", r.err);
    cr_expect(strstr(r.err, "b.h5: the suite holds 13.7 MiB whole") && strstr(r.err, "memory limit of 12.0 MiB") &&
                  strstr(r.err, "before any run"),
              "%s", r.err);
    cr_expect_not(test_exists(out), "no report: %s", out);
    cli_result_free(&r);
    free(text), free(two), free(out), free(suite), free(dir);
}

/* mpirun -np 2 build/roboest compare suite -o out -q --threads T --memory-limit MB: the exit code, stderr in *err. */
static int mpirun_limited(const char *suite, const char *out, const char *threads, const char *mb, char **err)
{
    cli_result r = cli_run_mpi(
        2, (const char *[]){"compare", suite, "-o", out, "-q", "--threads", threads, "--memory-limit", mb, NULL});
    int status = r.status;
    *err = r.err;
    free(r.out);
    return status;
}

/* Under MPI the limit is each rank's, and a rank's threads each get a part of it (each holds its own logs): 10 MiB
 * holds the trace's reference (6.9 MiB) for one thread, not for each of two (5 MiB parts), which is said in one line
 * naming the part, exit 3, no report; one thread a rank gives the whole-log report's bytes. */
Test(cli_compare_chunked, under_mpi_the_limit_is_each_ranks_and_its_threads_share_it)
{
    char *dir = test_tmpdir(), *suite = make_suite(dir), *whole = test_path(dir, "whole"), *one = test_path(dir, "one");
    char *two = test_path(dir, "two"), *err = NULL;
    cli_result rw = cli_run(NULL, (const char *[]){"compare", suite, "-o", whole, "-q", "--threads", "1", NULL});
    cr_assert_eq(rw.status, CLI_EXIT_OK, "%s", rw.err);
    int status = mpirun_limited(suite, one, "1", "10", &err);
    cr_expect_eq(status, CLI_EXIT_OK, "one thread a rank: %s", err);
    static const char *const files[] = {"report.md",    "report.json",       "report.csv",
                                        "rmse_box.svg", "magnitude_box.svg", "trace_a_j1_0.svg"};
    for (size_t i = 0; status == CLI_EXIT_OK && i < sizeof files / sizeof files[0]; i++)
        same_file(whole, one, files[i]);
    free(err);
    status = mpirun_limited(suite, two, "2", "10", &err);
    cr_expect_eq(status, CLI_EXIT_INPUT, "two threads a rank: %s", err);
    const char *at = err ? strstr(err, "roboest: /") : NULL;
    cr_expect(at && strstr(at, "a.h5") && strstr(at, "truth/tau") &&
                  strstr(at, "(5.0 MiB: a 1/2 part of the limit of 10.0 MiB, for 2 threads)\n"),
              "names the log, the channel and the thread's part: %s", err);
    int said = 0;
    for (const char *p = err; p && (p = strstr(p, "roboest: ")); p++)
        said += strncmp(p, "roboest: warning: ", 18) != 0; /* the CPU binding's warning aside */
    cr_expect_eq(said, 1, "one line, from rank 0: %s", err);
    cr_expect_not(test_exists(two), "no report: %s", two);
    cli_result_free(&rw);
    free(err), free(two), free(one), free(whole), free(suite), free(dir);
}
