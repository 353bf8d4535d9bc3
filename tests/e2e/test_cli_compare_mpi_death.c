/* End-to-end: a worker rank of `mpirun -np 2 roboest compare` that dies in the middle of a run. The test kills the
 * rank itself (no hook in roboest): it finds rank 1 among mpirun's descendants by OMPI_COMM_WORLD_RANK=1 in its
 * environment, stops it (SIGSTOP) until it is caught with one of the suite's logs open, i.e. inside a run, and sends
 * the signal there. What the user sees then:
 *  - SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM (a crash, or a scheduler's kill): the rank says
 *    "roboest: rank 1 died while running variant V, log L" on stderr before it dies;
 *  - SIGKILL (nothing runs in the rank any more): only Open MPI's "mpirun noticed that process rank 1 ... exited on
 *    signal 9 (Killed)", without the run;
 * and in every case Open MPI aborts the job (rank 0 too), mpirun exits non-zero (128 + the signal), and there is no
 * report: rank 0 writes only once every run is back, and without --resume it has not made the output folder. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define N_LOGS 4

/* Logs long enough that a run lasts a while (about 0.3 s): copies, not links (/proc/PID/fd may show any of an inode's
 * names). */
/* The joints are named: without them a rank's first run reads the first log too (for its joints), and the log open
 * would not be the run's. */
static char *make_suite(const char *dir)
{
    char *first = test_path(dir, "l0.csv");
    FILE *f = fopen(first, "w");
    cr_assert(f);
    fprintf(f, "time,sensors/tau:j1,sensors/tau:j2,truth/tau:j1 [N m],truth/tau:j2 [N m]\n");
    for (int k = 0; k <= 200000; k++) {
        double t = 1.0 + 0.001 * k;
        fprintf(f, "%.17g,%.17g,%.17g,%.17g,%.17g\n", t, sin(t) + 0.1, cos(t) + 0.1, sin(t), cos(t));
    }
    fclose(f);
    for (int i = 1; i < N_LOGS; i++) {
        char name[32];
        snprintf(name, sizeof name, "l%d.csv", i);
        char *p = test_path(dir, name);
        size_t len = 0;
        char *bytes = test_read_file(first, &len);
        FILE *c = fopen(p, "w");
        cr_assert(bytes && c && fwrite(bytes, 1, len, c) == len);
        fclose(c);
        free(bytes);
        free(p);
    }
    free(first);
    char *raw = test_path(dir, "raw.json"), *smooth = test_path(dir, "smooth.json"), *suite = test_path(dir, "s.json");
    test_write_file(raw, "{\"clock\": {\"rate\": 1000}, \"signals\": {\"tau_hat\": {\"channel\": \"sensors/tau\"}}}\n");
    test_write_file(smooth, "{\"clock\": {\"rate\": 1000}, \"signals\": {\"m\": {\"channel\": \"sensors/tau\"}},\n"
                            " \"stages\": [{\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"m\"},\n"
                            "              \"out\": {\"y\": \"tau_lp\"}, \"params\": {\"cutoff_hz\": 2}}]}\n");
    test_write_file(suite,
                    "{\"name\": \"death\",\n"
                    " \"variants\": [{\"name\": \"raw\", \"pipeline\": \"raw.json\", \"estimate\": \"tau_hat\"},\n"
                    "   {\"name\": \"smooth\", \"pipeline\": \"smooth.json\", \"estimate\": \"tau_lp\"}],\n"
                    " \"logs\": [\"l0.csv\", \"l1.csv\", \"l2.csv\", \"l3.csv\"],\n"
                    " \"reference\": \"truth/tau\", \"joints\": [\"j1\", \"j2\"]}\n");
    free(raw), free(smooth);
    return suite;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    int ppid = 0;
    char state;
    return p && sscanf(p + 1, " %c %d", &state, &ppid) == 2 ? (pid_t)ppid : 0;
}

static bool has_env(pid_t pid, const char *entry)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    size_t len = 0;
    char *env = test_read_file(path, &len);
    bool found = false;
    for (size_t at = 0; env && at < len && !found; at += strlen(env + at) + 1)
        found = strcmp(env + at, entry) == 0;
    free(env);
    return found;
}

/* Rank 1 among the descendants of mpirun (0: not started yet). */
static pid_t find_rank1(pid_t mpirun)
{
    DIR *d = opendir("/proc");
    pid_t found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid <= 0)
            continue;
        pid_t up = pid;
        for (int depth = 0; depth < 4 && up > 1 && up != mpirun; depth++)
            up = parent_of(up);
        if (up == mpirun && pid != mpirun && has_env(pid, "OMPI_COMM_WORLD_RANK=1"))
            found = pid;
    }
    if (d)
        closedir(d);
    return found;
}

/* Every thread of pid stopped (state T). */
static bool all_stopped(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    bool stopped = d != NULL;
    for (struct dirent *e; d && stopped && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char sp[320], buf[512];
        snprintf(sp, sizeof sp, "/proc/%d/task/%s/stat", (int)pid, e->d_name);
        FILE *f = fopen(sp, "r");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = 0;
        const char *p = strrchr(buf, ')');
        stopped = p && (p[2] == 'T' || p[2] == 't');
    }
    if (d)
        closedir(d);
    return stopped;
}

/* The stems of the suite's logs that pid holds open, at most `want` (each in stem[k], "" if none): how many. */
static int open_logs(pid_t pid, const char *dir, int want, char (*stem)[64])
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    int found = 0;
    for (int k = 0; k < want; k++)
        stem[k][0] = 0;
    size_t dl = strlen(dir);
    for (struct dirent *e; d && found < want && (e = readdir(d));) {
        char fp[320], target[4096];
        snprintf(fp, sizeof fp, "/proc/%d/fd/%s", (int)pid, e->d_name);
        ssize_t n = readlink(fp, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = 0;
        size_t tl = (size_t)n;
        if (strncmp(target, dir, dl) == 0 && target[dl] == '/' && tl > 4 && strcmp(target + tl - 4, ".csv") == 0)
            snprintf(stem[found++], 64, "%.*s", (int)(tl - dl - 5), target + dl + 1);
    }
    if (d)
        closedir(d);
    return found;
}

/* Start mpirun -np 2 roboest compare --threads `threads`, catch rank 1 inside `threads` runs (as many of the suite's
 * logs open), send it sig: mpirun's exit code (128 + signal if it was killed), its stderr in *err (free), the logs
 * rank 1 had open in stem[0..threads). */
static int kill_rank1_in_runs(const char *dir, const char *suite, const char *out, int sig, int threads,
                              char (*stem)[64], char **err)
{
    char t[16];
    snprintf(t, sizeof t, "%d", threads);
    char err_path[] = "/tmp/roboest_mpi_death_XXXXXX";
    int err_fd = mkstemp(err_path);
    int null_fd = open("/dev/null", O_WRONLY);
    pid_t mpirun =
        cli_spawn_mpi(2, (const char *[]){"compare", suite, "-o", out, "-q", "--threads", t, NULL}, null_fd, err_fd);
    close(null_fd);
    double deadline = now() + 120;
    pid_t rank1 = 0;
    int caught = 0;
    while (caught < threads && now() < deadline && waitpid(mpirun, NULL, WNOHANG) == 0) {
        if (!rank1)
            rank1 = find_rank1(mpirun);
        if (rank1 && kill(rank1, SIGSTOP) == 0) {
            while (!all_stopped(rank1) && now() < deadline)
                nanosleep(&(struct timespec){0, 100000}, NULL);
            caught = open_logs(rank1, dir, threads, stem);
            if (caught == threads) /* frozen inside its runs: the signal arrives there */
                kill(rank1, sig);
            kill(rank1, SIGCONT);
        }
        if (caught < threads)
            nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
    int status = 0;
    waitpid(mpirun, &status, 0);
    close(err_fd);
    *err = test_read_file(err_path, NULL);
    unlink(err_path);
    cr_assert(caught == threads, "rank 1 (pid %d) caught inside %d runs at once before the suite ended: %s", (int)rank1,
              threads, *err ? *err : "");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int kill_rank1_in_a_run(const char *dir, const char *suite, const char *out, int sig, char *stem, size_t size,
                               char **err)
{
    char stems[1][64];
    int status = kill_rank1_in_runs(dir, suite, out, sig, 1, stems, err);
    snprintf(stem, size, "%s", stems[0]);
    return status;
}

static void expect_named_death(int sig)
{
    char *dir = test_tmpdir(), *suite = make_suite(dir), *out = test_path(dir, "out"), *err = NULL, stem[64];
    int status = kill_rank1_in_a_run(dir, suite, out, sig, stem, sizeof stem, &err);
    cr_expect_neq(status, 0, "signal %d: mpirun fails: %s", sig, err);
    char said[128];
    snprintf(said, sizeof said, ", log %s\n", stem);
    const char *at = strstr(err, "roboest: rank 1 died while running variant ");
    cr_expect(at && strstr(at, said), "signal %d: names the run on log %s: %s", sig, stem, err);
    cr_expect_not(test_exists(out), "no report, no output folder: %s", out);
    free(err), free(out), free(suite), free(dir);
}

Test(cli_compare_mpi_death, a_rank_that_crashes_names_its_run_and_leaves_no_report) { expect_named_death(SIGSEGV); }

Test(cli_compare_mpi_death, a_rank_terminated_by_the_scheduler_names_its_run) { expect_named_death(SIGTERM); }

Test(cli_compare_mpi_death, a_killed_rank_fails_the_suite_without_a_report)
{
    char *dir = test_tmpdir(), *suite = make_suite(dir), *out = test_path(dir, "out"), *err = NULL, stem[64];
    int status = kill_rank1_in_a_run(dir, suite, out, SIGKILL, stem, sizeof stem, &err);
    cr_expect_neq(status, 0, "mpirun fails: %s", err);
    /* SIGKILL leaves the rank no word: Open MPI's line names the rank and the signal, not the run */
    cr_expect(strstr(err, "rank 1") && strstr(err, "signal 9"), "the rank and its signal: %s", err);
    cr_expect_not(strstr(err, "roboest: rank 1 died"), "%s", err);
    cr_expect_not(test_exists(out), "no report, no output folder: %s", out);
    free(err), free(out), free(suite), free(dir);
}

/* Threads in the rank (--threads 2): rank 1 is caught with two of the suite's logs open, i.e. running two runs at
 * once, and SIGTERM names both. */
Test(cli_compare_mpi_death, a_terminated_rank_with_two_threads_names_both_of_its_runs)
{
    char *dir = test_tmpdir(), *suite = make_suite(dir), *out = test_path(dir, "out"), *err = NULL, stem[2][64];
    int status = kill_rank1_in_runs(dir, suite, out, SIGTERM, 2, stem, &err);
    cr_expect_neq(status, 0, "mpirun fails: %s", err);
    int said = 0;
    for (const char *at = err; (at = strstr(at, "roboest: rank 1 died while running variant ")); at++)
        said++;
    cr_expect_eq(said, 2, "two runs named: %s", err);
    for (int k = 0; k < 2; k++) {
        char log[160];
        snprintf(log, sizeof log, ", log %s\n", stem[k]);
        cr_expect(strstr(err, log), "names the run on log %s: %s", stem[k], err);
    }
    cr_expect_not(test_exists(out), "no report, no output folder: %s", out);
    free(err), free(out), free(suite), free(dir);
}
