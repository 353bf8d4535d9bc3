/* End-to-end: output safety. A write that fails (full disk, simulated by a file size limit) gives
 * exit 5 and one line, not a crash; --force never replaces an input of the command, a symbolic link
 * or a device; SIGINT and SIGTERM remove the temporaries of unfinished outputs. In every case the
 * inputs keep their bytes and no hidden .NAME.tmp-* file is left. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define DEMO RB_SOURCE "/datasets/demo_arm.mat"
#define BIG RB_SOURCE "/datasets/humanoid_balance.mat"

/* Names in dir that are temporaries of an output (".NAME.tmp-XXXXXX"). */
static int count_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] == '.' && strstr(e->d_name, ".tmp-") != NULL;
    closedir(d);
    return n;
}

static bool same_bytes(const char *a, const char *b)
{
    size_t na, nb;
    char *x = test_read_file(a, &na), *y = test_read_file(b, &nb);
    bool same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x), free(y);
    return same;
}

/* Start build/roboest with args, stdout to /dev/null and stderr into err_path (cli_spawn: file size limit). */
static pid_t spawn(const char *const *args, const char *err_path, rlim_t fsize)
{
    int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600), null_fd = open("/dev/null", O_WRONLY);
    pid_t pid = cli_spawn(NULL, args, null_fd, fd, (long)fsize);
    close(fd);
    close(null_fd);
    return pid;
}

/* Run to the end with a file size limit; the exit status (128 + signal if killed) and stderr (free()). */
static int run_limited(const char *const *args, rlim_t fsize, char **err)
{
    char err_path[] = "/tmp/roboest_err_XXXXXX";
    close(mkstemp(err_path));
    int ws = 0;
    waitpid(spawn(args, err_path, fsize), &ws, 0);
    *err = test_read_file(err_path, NULL);
    unlink(err_path);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

Test(outputs_safety, a_full_disk_gives_exit_5_in_every_format)
{
    char *dir = test_tmpdir();
    const char *names[] = {"out.h5", "out.mat", "out5.mat", "out.csv"};
    for (size_t i = 0; i < 4; i++) {
        char *out = test_path(dir, names[i]), *err = NULL;
        const char *args[] = {"convert", DEMO, "-o", out, i == 2 ? "--format" : NULL, "mat5", NULL};
        /* 32 KiB: the header and a part of the data fit, the whole file (about 300 KB) does not. */
        int status = run_limited(args, 32 * 1024, &err);
        cr_expect_eq(status, CLI_EXIT_OUTPUT, "%s: exit %d (139 is HDF5 crashing at exit); stderr: %s", names[i],
                     status, err);
        cr_expect_eq(test_count_lines(err), 1, "%s: one line: %s", names[i], err);
        cr_expect(strstr(err, out) && (strstr(err, "File too large") || strstr(err, "cut short")), "%s: %s", names[i],
                  err);
        cr_expect(!test_exists(out), "%s: no output", names[i]);
        free(out), free(err);
    }
    cr_expect_eq(count_temporaries(dir), 0);
    /* Without the limit the same commands succeed: the limit, not the command, made them fail. */
    char *out = test_path(dir, "out.h5"), *err = NULL;
    cr_expect_eq(run_limited((const char *[]){"convert", DEMO, "-o", out, NULL}, 0, &err), CLI_EXIT_OK, "%s", err);
    free(out), free(err), free(dir);
}

/* A run in windows writes its .h5 and .mat outputs on disk window by window (not built in memory): a full disk met
 * mid-run is exit 5 in one line naming the output, HDF5 does not crash at exit, and nothing is left in the folder
 * (no output, no temporary). */
Test(outputs_safety, a_full_disk_in_a_run_in_windows_gives_exit_5_and_no_file)
{
    char *dir = test_tmpdir(), *src = test_path(RB_SOURCE, "configs/demo.json");
    char *text = test_read_file(src, NULL);
    cr_assert_not_null(text, "%s", src);
    const char *ext[] = {".h5", ".mat"};
    for (size_t i = 0; i < 2; i++) {
        char *cfg = test_path(dir, "demo.json"), *out = test_path(dir, "out"), *err = NULL;
        char *at = strstr(text, "estimates.h5\"");
        cr_assert_not_null(at);
        char *edited = malloc(strlen(text) + 8);
        sprintf(edited, "%.*sestimates%s%s", (int)(at - text), text, ext[i], at + strlen("estimates.h5"));
        test_write_file(cfg, edited);
        const char *args[] = {"run", cfg, DEMO, "-o", out, "-q", "--window", "500", NULL};
        /* 64 KiB: the first windows' chunks fit, the whole file (about 900 KB) does not */
        int status = run_limited(args, 64 * 1024, &err);
        cr_expect_eq(status, CLI_EXIT_OUTPUT, "%s: exit %d (139 is HDF5 crashing at exit); stderr: %s", ext[i], status,
                     err);
        cr_expect_eq(test_count_lines(err), 1, "%s: one line: %s", ext[i], err);
        cr_expect(strstr(err, "estimates") && strstr(err, "File too large"), "%s: %s", ext[i], err);
        cr_expect(!test_exists(out), "%s: nothing left in %s", ext[i], out);
        free(err);
        cr_expect_eq(run_limited(args, 0, &err), CLI_EXIT_OK, "%s without the limit: %s", ext[i], err);
        test_remove_tree(out); /* frees it */
        free(cfg), free(err), free(edited);
    }
    free(text), free(src), free(dir);
}

Test(outputs_safety, convert_never_writes_over_its_input)
{
    char *dir = test_tmpdir(), *in = test_path(dir, "a.mat"), *copy = test_path(dir, "a.orig");
    char *hard = test_path(dir, "hard.mat"), *soft = test_path(dir, "soft.mat");
    cli_result r = cli_run(NULL, (const char *[]){"convert", DEMO, "-o", in, NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "%s", r.err);
    cli_result_free(&r);
    test_truncate_copy(in, copy, (size_t)-1);
    cr_assert_eq(link(in, hard), 0);
    cr_assert_eq(symlink("a.mat", soft), 0);
    const char *targets[] = {in, hard, soft};
    for (size_t t = 0; t < 3; t++) {
        for (int force = 0; force < 2; force++) {
            r = cli_run(NULL, (const char *[]){"convert", in, "-o", targets[t], force ? "--force" : NULL, NULL});
            cr_expect_eq(r.status, CLI_EXIT_OUTPUT, "%s force=%d: exit %d", targets[t], force, r.status);
            cr_expect(strstr(r.err, "is an input of this command") && strstr(r.err, "choose another output"),
                      "%s force=%d: %s", targets[t], force, r.err);
            cr_expect_eq(test_count_lines(r.err), 1, "%s", r.err);
            cli_result_free(&r);
        }
    }
    cr_expect(same_bytes(in, copy), "the input keeps its bytes");
    struct stat st;
    cr_expect(lstat(soft, &st) == 0 && S_ISLNK(st.st_mode), "the link is still a link");
    cr_expect_eq(count_temporaries(dir), 0);
    free(in), free(copy), free(hard), free(soft), free(dir);
}

static void write_log(const char *path)
{
    FILE *f = fopen(path, "w");
    fprintf(f, "time,joints_state/positions:j1 [rad],joints_state/velocities:j1 [rad/s]\n");
    for (int k = 0; k <= 200; k++)
        fprintf(f, "%.17g,%.17g,%.17g\n", 0.01 * k, sin(0.01 * k), cos(0.01 * k));
    fclose(f);
}

/* The case: the log is DIR/qd.csv and the pipeline writes qd.csv into DIR. */
Test(outputs_safety, run_never_writes_over_its_log)
{
    char *dir = test_tmpdir(), *log = test_path(dir, "qd.csv"), *copy = test_path(dir, "qd.orig");
    char *config = test_path(dir, "pipeline.json"), *report = test_path(dir, "report.md");
    write_log(log);
    test_truncate_copy(log, copy, (size_t)-1);
    test_write_file(config, "{\"name\": \"e2e\", \"clock\": {\"rate\": 100},\n"
                            " \"signals\": {\"q\": {\"channel\": \"joints_state/positions\"},\n"
                            "             \"qd_ref\": {\"channel\": \"joints_state/velocities\"}},\n"
                            " \"stages\": [{\"id\": \"diff\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"},"
                            " \"out\": {\"dx\": \"qd\"}}],\n"
                            " \"outputs\": [{\"path\": \"qd.csv\", \"signals\": [\"qd\"]}],\n"
                            " \"metrics\": [{\"estimate\": \"qd\", \"reference\": \"qd_ref\"}],\n"
                            " \"reports\": [\"report.md\"]}\n");
    for (int force = 0; force < 2; force++) {
        cli_result r = cli_run(NULL, (const char *[]){"run", config, log, "-o", dir, force ? "--force" : NULL, NULL});
        cr_expect_eq(r.status, CLI_EXIT_OUTPUT, "force=%d: exit %d: %s", force, r.status, r.err);
        cr_expect(strstr(r.err, "qd.csv: is an input of this command"), "force=%d: %s", force, r.err);
        cli_result_free(&r);
    }
    cr_expect(same_bytes(log, copy), "the log keeps its bytes");
    cr_expect(!test_exists(report), "all or nothing: no report either");
    cr_expect_eq(count_temporaries(dir), 0);
    /* Into another folder the same run works. */
    char *out = test_path(dir, "out");
    cli_result r = cli_run(NULL, (const char *[]){"run", config, log, "-o", out, NULL});
    cr_expect_eq(r.status, CLI_EXIT_OK, "%s", r.err);
    cli_result_free(&r);
    free(dir), free(log), free(copy), free(config), free(report), free(out);
}

Test(outputs_safety, force_never_replaces_a_link_or_a_device)
{
    char *dir = test_tmpdir(), *target = test_path(dir, "target.csv"), *soft = test_path(dir, "soft.csv");
    char *fifo = test_path(dir, "fifo.csv"), *dev = test_path(dir, "null.csv");
    test_write_file(target, "keep me\n");
    cr_assert_eq(symlink("target.csv", soft), 0);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    /* A device of our own (a copy of /dev/null's node, made as root): a regression replaces it, not /dev/null. */
    bool have_dev = mknod(dev, S_IFCHR | 0600, makedev(1, 3)) == 0;
    struct {
        const char *out, *kind;
    } cases[] = {{soft, "symbolic link"}, {fifo, "FIFO"}, {dir, "folder"}, {dev, "device"}};
    for (size_t i = 0; i < 3 + (size_t)have_dev; i++) {
        for (int force = 0; force < 2; force++) {
            const char *args[] = {"convert", DEMO, "-o", cases[i].out, "--format", "csv", force ? "--force" : NULL,
                                  NULL};
            cli_result r = cli_run(NULL, args);
            cr_expect_eq(r.status, CLI_EXIT_OUTPUT, "%s force=%d: exit %d: %s", cases[i].out, force, r.status, r.err);
            char want[96];
            snprintf(want, sizeof want, "is a %s, not a regular file", cases[i].kind);
            cr_expect(strstr(r.err, want) && strstr(r.err, cases[i].out), "%s force=%d: %s", cases[i].out, force,
                      r.err);
            cli_result_free(&r);
        }
    }
    struct stat st;
    cr_expect(lstat(soft, &st) == 0 && S_ISLNK(st.st_mode), "the link is still a link");
    cr_expect(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO is still a FIFO");
    cr_expect(!have_dev || (lstat(dev, &st) == 0 && S_ISCHR(st.st_mode)), "the device is still a device");
    char *text = test_read_file(target, NULL);
    cr_expect_str_eq(text, "keep me\n");
    free(text);
    cr_expect_eq(count_temporaries(dir), 0);
    free(dir), free(target), free(soft), free(fifo), free(dev);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Start a conversion of the largest shipped log, catch it (SIGSTOP) while its temporary exists, send
 * `sig` and let it go on: it must end killed by `sig`, with nothing left in the folder. A conversion
 * that finished before it was caught is tried again. */
static void stop_while_writing(int sig)
{
    for (int attempt = 0; attempt < 20; attempt++) {
        char *dir = test_tmpdir(), *out = test_path(dir, "big.mat"), *log = test_path(dir, "stderr.txt");
        pid_t pid = spawn((const char *[]){"convert", BIG, "-o", out, NULL}, log, 0);
        bool caught = false;
        for (int k = 0; k < 20000 && !caught; k++) {
            if (count_temporaries(dir) > 0) {
                kill(pid, SIGSTOP);
                caught = count_temporaries(dir) > 0; /* still writing once stopped */
                if (!caught)
                    kill(pid, SIGCONT);
                break;
            }
            if (waitpid(pid, NULL, WNOHANG) == pid) {
                pid = -1;
                break;
            }
            sleep_ms(1);
        }
        if (!caught) { /* too quick this time */
            if (pid > 0)
                waitpid(pid, NULL, 0);
            unlink(out), unlink(log), rmdir(dir);
            free(dir), free(out), free(log);
            continue;
        }
        kill(pid, sig);
        kill(pid, SIGCONT);
        int ws = 0;
        waitpid(pid, &ws, 0);
        cr_expect(WIFSIGNALED(ws) && WTERMSIG(ws) == sig, "killed by signal %d (status %d)", sig,
                  WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws));
        cr_expect_eq(count_temporaries(dir), 0, "no temporary left after signal %d", sig);
        cr_expect(!test_exists(out), "no output");
        unlink(log), rmdir(dir);
        free(dir), free(out), free(log);
        return;
    }
    cr_assert_fail("the conversion never was caught while writing");
}

Test(outputs_safety, sigterm_removes_the_temporary)
{
    test_deadline(120);
    stop_while_writing(SIGTERM);
}

Test(outputs_safety, sigint_removes_the_temporary)
{
    test_deadline(120);
    stop_while_writing(SIGINT);
}
