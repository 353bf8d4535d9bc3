/* Detection by content, and inputs that must fail cleanly: missing, empty, text, truncated, corrupt,
 * and every allocation failing in turn. */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_read_expect.h"
#include "support.h"

static int read_code(const char *path, rb_err *err)
{
    rb_log *log = NULL;
    rb_err_clear(err);
    int rc = rb_log_read(path, &log, err);
    if (rc)
        cr_assert_null(log, "%s: no log on failure", path);
    rb_log_free(log);
    return rc;
}

/* A failure's message starts with the path and is one line. */
static void check_failure(const char *path, int want, const char *contains)
{
    rb_err err;
    int rc = read_code(path, &err);
    cr_assert_eq(rc, want, "%s: %s (%s)", path, rb_status_name(rc), err.msg);
    cr_assert(strncmp(err.msg, path, strlen(path)) == 0, "message starts with the path: %s", err.msg);
    cr_assert_null(strchr(err.msg, '\n'), "%s", err.msg);
    if (contains)
        cr_assert(strstr(err.msg, contains), "'%s' in: %s", contains, err.msg);
}

Test(io_read_bad, missing_file)
{
    char *path = fixture("no_such_log.mat");
    check_failure(path, RB_ENOTFOUND, ": no such file");
    rb_free(path);
}

Test(io_read_bad, empty_text_and_folder_are_not_logs)
{
    const char *files[] = {"empty.mat", "text.mat"};
    for (size_t k = 0; k < 2; k++) {
        char *path = fixture(files[k]);
        check_failure(path, RB_EINPUT, ": not a log file (");
        rb_free(path);
    }
    check_failure(RB_FIXTURES, RB_EINPUT, "not a log file");
}

Test(io_read_bad, csv_errors_name_line_and_column)
{
    char *path = fixture("bad_fields.csv");
    check_failure(path, RB_EINPUT, "bad_fields.csv:3: 2 fields, the header has 3 (column 'b' missing)");
    rb_free(path);
    path = fixture("bad_number.csv");
    check_failure(path, RB_EINPUT, "bad_number.csv:4: column 'a:y [m]': not a number: 'abc'");
    rb_free(path);
}

/* Every truncated copy (HDF5, v7.3, v5, compressed v7 cut at 100, 600, half, size - 1 bytes) fails
 * with RB_EINPUT: never a crash, never a partial log. */
Test(io_read_bad, truncated_files)
{
    DIR *dir = opendir(RB_FIXTURES);
    cr_assert_not_null(dir);
    struct dirent *e;
    size_t n = 0;
    while ((e = readdir(dir)) != NULL) {
        if (strncmp(e->d_name, "trunc_", 6) != 0)
            continue;
        char *path = fixture(e->d_name);
        check_failure(path, RB_EINPUT, NULL);
        rb_free(path);
        n++;
    }
    closedir(dir);
    cr_assert_geq(n, 28, "the truncated fixtures exist (%zu)", n);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    cr_assert(in && out);
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, k, out);
    fclose(in);
    fclose(out);
}

Test(io_read_bad, layout_comes_from_content_not_extension)
{
    static const struct {
        const char *file;
        rb_log_format fmt;
    } cases[] = {
        {"logger_matio73.mat", RB_FMT_LOGGER_MAT73},
        {"logger_matio5.mat", RB_FMT_LOGGER_MAT5},
        {"logger_matio7.mat", RB_FMT_LOGGER_MAT5},
        {"plain_matio73.mat", RB_FMT_PLAIN_MAT73},
        {"plain_scipy5.mat", RB_FMT_PLAIN_MAT5},
        {"roboest.h5", RB_FMT_ROBOEST_H5},
        {"plain.h5", RB_FMT_PLAIN_H5},
        {"log.csv", RB_FMT_CSV},
    };
    static const char *const exts[] = {".txt", ".h5", ".mat", ".csv"};
    char dir[] = "/tmp/rb_io_detect_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *src = fixture(cases[k].file), *dst = rb_asprintf("%s/renamed%s", dir, exts[k % 4]);
        copy_file(src, dst);
        rb_log_format fmt;
        rb_err err;
        cr_assert_eq(rb_log_detect(src, &fmt, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(fmt, cases[k].fmt, "%s: %s", cases[k].file, rb_log_format_name(fmt));
        cr_assert_eq(rb_log_detect(dst, &fmt, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(fmt, cases[k].fmt, "%s renamed %s", cases[k].file, exts[k % 4]);
        rb_log *log = NULL;
        cr_assert_eq(rb_log_read(dst, &log, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(log->format, cases[k].fmt);
        rb_log_free(log);
        unlink(dst);
        rb_free(src);
        rb_free(dst);
    }
    rmdir(dir);
}

/* The Nth allocation failing gives RB_ENOMEM (no leak, no crash: run under ASan), for every N until
 * the read needs no more. */
Test(io_read_bad, every_allocation_failure_is_reported)
{
    static const char *const files[] = {"logger_h5py73.mat",
                                        "logger_matio5.mat",
                                        "logger_matio7.mat",
                                        "plain_matio5.mat",
                                        "plain.h5",
                                        "roboest.h5",
                                        "log.csv"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char *path = fixture(files[f]);
        int rc = RB_ENOMEM;
        long k;
        for (k = 0; rc != RB_OK && k < 100000; k++) {
            rb_log *log = NULL;
            rb_err err;
            rb_alloc_fail_after(k);
            rc = rb_log_read(path, &log, &err);
            rb_alloc_fail_after(-1);
            cr_assert(rc == RB_OK || rc == RB_ENOMEM, "%s: allocation %ld: %s", files[f], k, err.msg);
            cr_assert((rc == RB_OK) == (log != NULL));
            rb_log_free(log);
        }
        cr_assert_eq(rc, RB_OK, "%s", files[f]);
        cr_assert_gt(k, 5, "%s: the read allocates", files[f]);
        rb_free(path);
    }
}

/* A CSV whose channel a appears in two runs of columns fails (RB_EINPUT, through the "path:line: " prefix)
 * with or without an rb_err: err == NULL must not turn the failure into a log. */
Test(io_read_bad, failures_keep_their_code_when_err_is_null)
{
    char *dir = test_temp_dir(), *path = rb_asprintf("%s/split_channel.csv", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("time,a:x,b:y,a:z\n0,1,2,3\n1,4,5,6\n", f);
    fclose(f);
    check_failure(path, RB_EINPUT, "split_channel.csv:1: channel a appears twice");
    rb_log *log = NULL;
    cr_assert_eq(rb_log_read(path, &log, NULL), RB_EINPUT);
    cr_assert_null(log);
    rb_free(path);
    test_remove_tree(dir);
}

Test(io_read_bad, null_arguments)
{
    rb_log *log;
    rb_log_format fmt;
    rb_err err;
    cr_assert_eq(rb_log_read(NULL, &log, &err), RB_EINVAL);
    cr_assert_eq(rb_log_read("x", NULL, &err), RB_EINVAL);
    cr_assert_eq(rb_log_detect(NULL, &fmt, &err), RB_EINVAL);
}
