/* Inputs real tools and careless hands produce: FIFOs, CSV dialects (trailing commas, quotes, BOM, CR-only and
 * CRLF line ends), duplicate names, text that is not UTF-8, entries that cannot be channels, impossible clocks.
 * Each either reads correctly or fails with a message naming the file and the culprit. */
#include <hdf5.h>
#include <matio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "roboest/io.h"
#include "support.h"

static char *dir;

static void setup(void)
{
    test_deadline(30);
    dir = test_temp_dir();
}
static void teardown(void) { test_remove_tree(dir); }

TestSuite(io_read_hostile, .init = setup, .fini = teardown);

static char *in_dir(const char *name) { return rb_asprintf("%s/%s", dir, name); }

/* `len` bytes (text may hold NULs) into a new file of the test folder; returns its path (rb_free). */
static char *put_bytes(const char *name, const char *bytes, size_t len)
{
    char *path = in_dir(name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, len, f), len);
    fclose(f);
    return path;
}

static char *put_text(const char *name, const char *text) { return put_bytes(name, text, strlen(text)); }

static rb_log *read_ok(const char *path)
{
    rb_log *log = NULL;
    rb_err err;
    rb_err_clear(&err);
    int rc = rb_log_read(path, &log, &err);
    cr_assert_eq(rc, RB_OK, "%s: %s", path, err.msg);
    return log;
}

/* The read fails with `code`, a one-line message starting with the path and holding each of the NULL-terminated
 * fragments. */
static void read_fails(const char *path, int code, const char *const *fragments)
{
    rb_log *log = NULL;
    rb_err err;
    rb_err_clear(&err);
    int rc = rb_log_read(path, &log, &err);
    cr_assert_eq(rc, code, "%s: %s: %s", path, rb_status_name(rc), err.msg);
    cr_assert_null(log);
    cr_assert(strncmp(err.msg, path, strlen(path)) == 0, "starts with the path: %s", err.msg);
    cr_assert_null(strchr(err.msg, '\n'), "%s", err.msg);
    for (size_t k = 0; fragments[k]; k++)
        cr_assert(strstr(err.msg, fragments[k]), "'%s' in: %s", fragments[k], err.msg);
}

#define FAILS(path, code, ...) read_fails(path, code, (const char *const[]){__VA_ARGS__, NULL})

/* ---- not regular files ------------------------------------------------------------------------ */

/* Opening a FIFO for reading waits for a writer: the readers must look before they open. The suite's timeout
 * ends the test when they do not. */
Test(io_read_hostile, fifo_is_refused_without_blocking)
{
    char *path = in_dir("pipe.csv");
    cr_assert_eq(mkfifo(path, 0600), 0);
    FAILS(path, RB_EINPUT, "not a regular file");
    rb_arrays *a = NULL;
    rb_err err;
    cr_assert_eq(rb_arrays_read(path, &a, &err), RB_EINPUT, "%s", err.msg);
    cr_assert(strstr(err.msg, "not a regular file"), "%s", err.msg);
    rb_free(path);
}

Test(io_read_hostile, git_lfs_pointer_is_named)
{
    char *path = put_text("log.mat", "version https://git-lfs.github.com/spec/v1\n"
                                     "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
                                     "size 12345\n");
    FAILS(path, RB_EINPUT, "Git LFS pointer", "git lfs pull");
    rb_free(path);
}

/* ---- CSV dialects ------------------------------------------------------------------------------- */

static void check_ab(const rb_log *log, size_t T, const double *time, const double *a, const double *b)
{
    const rb_channel *ca = rb_log_find(log, "a"), *cb = rb_log_find(log, "b");
    cr_assert_eq(log->n_channels, 2);
    cr_assert(ca && cb);
    cr_assert_eq(ca->n_samples, T);
    cr_assert_eq(ca->n_elements, 1);
    cr_assert_eq(cb->n_elements, 1);
    for (size_t t = 0; t < T; t++) {
        cr_assert_eq(ca->time[t], time[t]);
        cr_assert_eq(ca->data[t], a[t]);
        cr_assert_eq(cb->data[t], b[t]);
    }
}

Test(io_read_hostile, csv_trailing_commas_are_empty_trailing_columns)
{
    /* A spreadsheet's export: the header and rows end in commas, some rows in more than one. */
    char *path = put_text("trail.csv", "time,a,b,\n0,1,2,\n0.5,3,4,,\n1,5,6\n");
    rb_log *log = read_ok(path);
    check_ab(log, 3, (double[]){0, 0.5, 1}, (double[]){1, 3, 5}, (double[]){2, 4, 6});
    rb_log_free(log);
    rb_free(path);
    /* a value under a column without a name would be dropped: refused */
    path = put_text("trail_value.csv", "time,a,b,\n0,1,2,\n0.5,3,4,7\n");
    FAILS(path, RB_EINPUT, "trail_value.csv:3:", "column 4", "no name");
    rb_free(path);
}

Test(io_read_hostile, csv_empty_column_name_inside_is_named_by_number)
{
    char *path = put_text("hole.csv", "time,a,,b\n0,1,2,3\n");
    FAILS(path, RB_EINPUT, "hole.csv:1:", "column 3 has no name");
    rb_free(path);
    path = put_text("hole_quoted.csv", "time,a,\"\",b\n0,1,2,3\n");
    FAILS(path, RB_EINPUT, "hole_quoted.csv:1:", "column 3 has no name");
    rb_free(path);
}

Test(io_read_hostile, csv_line_ends_cr_only_crlf_and_bom)
{
    const double time[2] = {0, 0.5}, a[2] = {1, 3}, b[2] = {2, 4};
    const char *bodies[] = {"time,a,b\r0,1,2\r0.5,3,4\r", "time,a,b\r0,1,2\r0.5,3,4",
                            "\xEF\xBB\xBFtime,a,b\r\n0,1,2\r\n0.5,3,4\r\n", "# k: v\r\rtime,a,b\r0,1,2\r\r0.5,3,4\r"};
    for (size_t k = 0; k < sizeof bodies / sizeof bodies[0]; k++) {
        char name[32];
        snprintf(name, sizeof name, "ends%zu.csv", k);
        char *path = put_text(name, bodies[k]);
        rb_log *log = read_ok(path);
        check_ab(log, 2, time, a, b);
        rb_log_free(log);
        rb_free(path);
    }
    /* line numbers count CR-only ends */
    char *path = put_text("cr_bad.csv", "time,a,b\r0,1,2\r0.5,x,4\r");
    FAILS(path, RB_EINPUT, "cr_bad.csv:3:", "not a number");
    rb_free(path);
}

Test(io_read_hostile, csv_quoted_fields_rfc4180)
{
    /* names with commas, quotes and line ends inside quotes; quoted numbers are numbers */
    char *path = put_text("quoted.csv", "time,\"a,b\",\"c\"\"d\",\"e\r\nf:x [m]\"\n\"0\",\"1\",2,\" 3 \"\n0.5,4,5,6\n");
    rb_log *log = read_ok(path);
    cr_assert_eq(log->n_channels, 3);
    const rb_channel *ab = rb_log_find(log, "a,b"), *cd = rb_log_find(log, "c\"d"), *ef = rb_log_find(log, "e\r\nf");
    cr_assert(ab && cd && ef);
    cr_assert_str_eq(ef->element_names[0], "x");
    cr_assert_str_eq(ef->units[0], "m");
    cr_assert_eq(ab->n_samples, 2);
    cr_assert_eq(ab->data[0], 1);
    cr_assert_eq(cd->data[1], 5);
    cr_assert_eq(ef->data[0], 3);
    cr_assert_eq(ef->data[1], 6);
    rb_log_free(log);
    rb_free(path);
    path = put_text("open_quote.csv", "time,\"a\n0,1\n");
    FAILS(path, RB_EINPUT, "open_quote.csv:1:", "unterminated quoted field");
    rb_free(path);
}

Test(io_read_hostile, csv_nul_byte_is_refused)
{
    char text[80000];
    size_t n = (size_t)snprintf(text, sizeof text, "time,a\n");
    for (int k = 0; k < 7000; k++) /* past the bytes detection looks at */
        n += (size_t)snprintf(text + n, sizeof text - n, "%d,%d\n", k, k);
    memcpy(text + n, "7000,1\0009\n", 9);
    char *path = put_bytes("nul.csv", text, n + 9);
    FAILS(path, RB_EINPUT, "nul.csv:7002:", "NUL");
    rb_free(path);
}

/* ---- duplicates -------------------------------------------------------------------------------- */

Test(io_read_hostile, csv_duplicate_columns_name_both_numbers)
{
    char *path = put_text("dup.csv", "time,a,a\n0,1,2\n");
    FAILS(path, RB_EINPUT, "dup.csv:1:", "columns 2 and 3");
    rb_free(path);
    path = put_text("dup_apart.csv", "time,a,b,a\n0,1,2,3\n");
    FAILS(path, RB_EINPUT, "dup_apart.csv:1:", "columns 2 and 4");
    rb_free(path);
    path = put_text("dup_element.csv", "time,q:x [rad],q:y,q:x [deg]\n0,1,2,3\n");
    FAILS(path, RB_EINPUT, "dup_element.csv:1:", "columns 2 and 4", "channel q", "element x");
    rb_free(path);
    /* a bare column is a one-element channel: more columns of that channel are a clash */
    path = put_text("bare_and_named.csv", "time,q,q:y\n0,1,2\n");
    FAILS(path, RB_EINPUT, "bare_and_named.csv:1:", "columns 2 and 3", "channel q");
    rb_free(path);
    /* the columns of one channel must be together */
    path = put_text("apart.csv", "time,q:x,b,q:y\n0,1,2,3\n");
    FAILS(path, RB_EINPUT, "apart.csv:1:", "columns 2 and 4", "channel q");
    rb_free(path);
}

/* ---- text that is not UTF-8 -------------------------------------------------------------------- */

Test(io_read_hostile, csv_invalid_utf8_names_the_input)
{
    char *path = put_text("latin1.csv", "time,a,gelenk_\xe4:x\n0,1,2\n");
    FAILS(path, RB_EINPUT, "latin1.csv:1:", "column 3", "not valid UTF-8");
    rb_free(path);
    path = put_text("latin1_attr.csv", "# robot: k\xf6nig\ntime,a\n0,1\n");
    FAILS(path, RB_EINPUT, "latin1_attr.csv:1:", "not valid UTF-8");
    rb_free(path);
}

/* ---- entries that are not channels: skipped and said so ------------------------------------------- */

enum { T = 5 };

static matvar_t *doubles(const char *name, int rank, size_t *dims, size_t count)
{
    double *v = calloc(count + 1, sizeof *v);
    for (size_t k = 0; k < count; k++)
        v[k] = 0.01 * (double)k;
    matvar_t *m = Mat_VarCreate(name, MAT_C_DOUBLE, MAT_T_DOUBLE, rank, dims, v, 0);
    free(v);
    cr_assert_not_null(m);
    return m;
}

/* A logger channel struct {data, timestamps}: data n x 1 x T, or a struct when n is SIZE_MAX. */
static matvar_t *channel(size_t n)
{
    static const char *fields[] = {"data", "timestamps"};
    size_t one[2] = {1, 1}, ddims[3] = {n, 1, T}, tdims[2] = {T, 1};
    matvar_t *ch = Mat_VarCreateStruct(NULL, 2, one, fields, 2);
    matvar_t *data;
    if (n == SIZE_MAX) {
        static const char *inner[] = {"x"};
        data = Mat_VarCreateStruct(NULL, 2, one, inner, 1);
        Mat_VarSetStructFieldByName(data, "x", 0, doubles(NULL, 2, tdims, T));
    } else {
        data = doubles(NULL, 3, ddims, n * T);
    }
    Mat_VarSetStructFieldByName(ch, "data", 0, data);
    Mat_VarSetStructFieldByName(ch, "timestamps", 0, doubles(NULL, 2, tdims, T));
    return ch;
}

/* robot_logger_device {good (2 elements, unless !good), as_struct (data a struct), no_elements (0 x 1 x T)}. */
static char *logger_file(const char *name, enum mat_ft version, bool good)
{
    static const char *fields[] = {"good", "as_struct", "no_elements"};
    char *path = in_dir(name);
    mat_t *mat = Mat_CreateVer(path, NULL, version);
    cr_assert_not_null(mat);
    size_t one[2] = {1, 1};
    matvar_t *root = Mat_VarCreateStruct("robot_logger_device", 2, one, fields + !good, 3 - !good);
    if (good)
        Mat_VarSetStructFieldByName(root, "good", 0, channel(2));
    Mat_VarSetStructFieldByName(root, "as_struct", 0, channel(SIZE_MAX));
    Mat_VarSetStructFieldByName(root, "no_elements", 0, channel(0));
    cr_assert_eq(Mat_VarWrite(mat, root, MAT_COMPRESSION_NONE), 0);
    Mat_VarFree(root);
    Mat_Close(mat);
    return path;
}

/* time (T x 1), long (T + 2 x 2, not on the time vector), plus good (T x 3) when `good`. */
static char *plain_file(const char *name, enum mat_ft version, bool good)
{
    char *path = in_dir(name);
    mat_t *mat = Mat_CreateVer(path, NULL, version);
    cr_assert_not_null(mat);
    size_t tdims[2] = {T, 1}, ldims[2] = {T + 2, 2}, gdims[2] = {T, 3};
    matvar_t *vars[3] = {doubles("time", 2, tdims, T), doubles("long", 2, ldims, (T + 2) * 2),
                         good ? doubles("good", 2, gdims, T * 3) : NULL};
    for (size_t k = 0; k < 3 && vars[k]; k++) {
        cr_assert_eq(Mat_VarWrite(mat, vars[k], MAT_COMPRESSION_NONE), 0);
        Mat_VarFree(vars[k]);
    }
    Mat_Close(mat);
    return path;
}

static char *plain_h5(const char *name, bool good)
{
    char *path = in_dir(name);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert(f >= 0);
    double buf[(T + 2) * 3] = {0};
    for (size_t k = 0; k < (T + 2) * 3; k++)
        buf[k] = 0.01 * (double)k;
    struct {
        const char *name;
        int rank;
        hsize_t dims[2];
    } sets[3] = {{"time", 1, {T, 1}}, {"long", 2, {T + 2, 2}}, {"good", 2, {T, 3}}};
    for (size_t k = 0; k < (good ? 3u : 2u); k++) {
        hid_t space = H5Screate_simple(sets[k].rank, sets[k].dims, NULL);
        hid_t d = H5Dcreate2(f, sets[k].name, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        cr_assert(d >= 0);
        H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
        H5Dclose(d);
        H5Sclose(space);
    }
    H5Fclose(f);
    return path;
}

static void expect_skipped(const rb_log *log, size_t k, const char *name, const char *reason)
{
    cr_assert(k < log->n_skipped, "%zu skipped, wanted entry %zu (%s)", log->n_skipped, k, name);
    cr_assert_str_eq(log->skipped[k].name, name);
    cr_assert(strstr(log->skipped[k].reason, reason), "%s: '%s' in '%s'", name, reason, log->skipped[k].reason);
}

static void check_logger(enum mat_ft version, const char *tag)
{
    char name[64];
    snprintf(name, sizeof name, "logger_%s.mat", tag);
    char *path = logger_file(name, version, true);
    rb_log *log = read_ok(path);
    cr_assert_eq(log->n_channels, 1, "%s", tag);
    cr_assert_not_null(rb_log_find(log, "good"));
    expect_skipped(log, 0, "as_struct", "data is a struct");
    expect_skipped(log, 1, "no_elements", "zero elements");
    cr_assert_eq(log->n_skipped, 2, "%s", tag);
    rb_log_free(log);
    rb_free(path);
    snprintf(name, sizeof name, "logger_none_%s.mat", tag);
    path = logger_file(name, version, false);
    FAILS(path, RB_EINPUT, "no channel", "as_struct", "data is a struct", "1 more");
    rb_free(path);
}

Test(io_read_hostile, logger_v5_entries_that_are_not_channels_are_listed) { check_logger(MAT_FT_MAT5, "v5"); }

Test(io_read_hostile, logger_v73_entries_that_are_not_channels_are_listed) { check_logger(MAT_FT_MAT73, "v73"); }

static void check_plain(char *good, char *bad, const char *tag)
{
    rb_log *log = read_ok(good);
    cr_assert_eq(log->n_channels, 1, "%s", tag);
    cr_assert_not_null(rb_log_find(log, "good"));
    expect_skipped(log, 0, "long", "7 x 2");
    cr_assert(strstr(log->skipped[0].reason, "5 samples"), "%s", log->skipped[0].reason);
    cr_assert_eq(log->n_skipped, 1, "%s", tag);
    rb_log_free(log);
    FAILS(bad, RB_EINPUT, "no channel", "long", "7 x 2");
    rb_free(good);
    rb_free(bad);
}

Test(io_read_hostile, plain_v5_matrix_off_the_time_vector_is_listed)
{
    check_plain(plain_file("p5.mat", MAT_FT_MAT5, true), plain_file("p5_none.mat", MAT_FT_MAT5, false), "v5");
}

Test(io_read_hostile, plain_v73_matrix_off_the_time_vector_is_listed)
{
    check_plain(plain_file("p73.mat", MAT_FT_MAT73, true), plain_file("p73_none.mat", MAT_FT_MAT73, false), "v73");
}

Test(io_read_hostile, plain_h5_matrix_off_the_time_vector_is_listed)
{
    check_plain(plain_h5("p.h5", true), plain_h5("p_none.h5", false), "h5");
}

/* ---- writing what cannot be read back ------------------------------------------------------------- */

Test(io_read_hostile, empty_log_is_not_written)
{
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    const rb_out_format formats[] = {RB_OUT_CSV, RB_OUT_H5, RB_OUT_MAT73, RB_OUT_MAT5};
    const char *names[] = {"e.csv", "e.h5", "e.mat", "e5.mat"};
    for (size_t k = 0; k < 4; k++) {
        char *path = in_dir(names[k]);
        rb_write_opts o = {formats[k], false, NULL};
        cr_assert_eq(rb_log_write(log, path, &o, &err), RB_EINPUT, "%s: %s", names[k], err.msg);
        cr_assert(strstr(err.msg, path) && strstr(err.msg, "no channels"), "%s", err.msg);
        rb_free(path);
    }
    cr_assert_eq(test_count_entries(dir), 0, "nothing left in the folder");
    /* CSV holds a channel's elements as columns: one without elements would vanish */
    cr_assert_eq(rb_log_add_channel(log, "a", 2, 1, NULL, &err), RB_OK);
    cr_assert_eq(rb_log_add_channel(log, "none", 2, 0, NULL, &err), RB_OK);
    log->channels[0].time[1] = 1;
    log->channels[1].time[1] = 1;
    char *path = in_dir("z.csv");
    cr_assert_eq(rb_log_write(log, path, NULL, &err), RB_EINPUT, "%s", err.msg);
    cr_assert(strstr(err.msg, "channel none") && strstr(err.msg, "no elements"), "%s", err.msg);
    cr_assert_eq(test_count_entries(dir), 0);
    rb_free(path);
    rb_log_free(log);
}

/* What the CSV writer writes, the CSV reader reads back: names with commas, quotes, CR, LF, brackets. */
Test(io_read_hostile, csv_round_trip_of_awkward_names)
{
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    const char *names[] = {"p,q", "say \"hi\"", "two\nlines", "cr\ronly", "crlf\r\nend", "b [x]"};
    const size_t n = sizeof names / sizeof names[0];
    for (size_t c = 0; c < n; c++) {
        const char *el[2] = {"e,1", "e\n2"}, *un[2] = {"N m", "\"q\""};
        double time[3] = {0, 0.5, 1}, data[6];
        for (size_t k = 0; k < 6; k++)
            data[k] = (double)(c * 10 + k) + 0.25;
        cr_assert_eq(rb_log_add_channel_copy(log, names[c], 3, 2, time, data, el, un, &err), RB_OK, "%s", err.msg);
    }
    cr_assert_eq(rb_log_set_attr(log, "origin", "test", &err), RB_OK);
    char *path = in_dir("round.csv");
    cr_assert_eq(rb_log_write(log, path, NULL, &err), RB_OK, "%s", err.msg);
    rb_log *back = read_ok(path);
    cr_assert_eq(back->n_channels, n);
    for (size_t c = 0; c < n; c++) {
        const rb_channel *a = &log->channels[c], *b = &back->channels[c];
        cr_assert_str_eq(b->name, a->name);
        for (size_t i = 0; i < 2; i++) {
            cr_assert_str_eq(b->element_names[i], a->element_names[i]);
            cr_assert_str_eq(b->units[i], a->units[i]);
        }
        cr_assert_eq(memcmp(a->data, b->data, 6 * sizeof(double)), 0, "%s", a->name);
        cr_assert_eq(memcmp(a->time, b->time, 3 * sizeof(double)), 0, "%s", a->name);
    }
    cr_assert_str_eq(rb_log_get_attr(back, "origin"), "test");
    rb_log_free(back);
    rb_log_free(log);
    rb_free(path);
}

/* ---- impossible clocks ---------------------------------------------------------------------------- */

static void resample_fails(const char *csv, double rate, const char *const *fragments)
{
    char *path = put_text("clock.csv", csv);
    rb_log *log = read_ok(path), *out = NULL;
    rb_err err;
    int rc = rb_log_resample(log, rate, &out, &err);
    cr_assert_eq(rc, RB_EINPUT, "%s: %s", rb_status_name(rc), err.msg);
    cr_assert_null(out);
    for (size_t k = 0; fragments[k]; k++)
        cr_assert(strstr(err.msg, fragments[k]), "'%s' in: %s", fragments[k], err.msg);
    rb_log_free(log);
    rb_free(path);
}

#define RESAMPLE_FAILS(csv, rate, ...) resample_fails(csv, rate, (const char *const[]){__VA_ARGS__, NULL})

Test(io_read_hostile, impossible_clocks_name_the_likely_cause)
{
    /* int64 nanoseconds since the epoch, 100 Hz */
    RESAMPLE_FAILS("time,a\n1700000000000000000,1\n1700000000010000000,2\n1700000000020000000,3\n", 100, "nanoseconds",
                   "1e-9");
    /* nanoseconds from 0 */
    RESAMPLE_FAILS("time,a\n0,1\n10000000,2\n20000000,3\n30000000,4\n", 100, "nanoseconds", "1e-9");
    RESAMPLE_FAILS("time,a\n0,1\n1e300,2\n", 100, "1e+300");
    /* seconds, but a rate no log holds */
    RESAMPLE_FAILS("time,a\n0,1\n0.01,2\n0.02,3\n", 1e12, "1e+12 Hz", "100 Hz");
}

Test(io_read_hostile, impossible_uniform_clock_is_an_input_error)
{
    rb_clock clk;
    rb_err err;
    cr_assert_eq(rb_clock_uniform(&clk, 0, 1e300, 100, &err), RB_EINPUT, "%s", err.msg);
    cr_assert_eq(rb_clock_uniform(&clk, 1.7e18, 1.7e18 + 1e10, 100, &err), RB_EINPUT, "%s", err.msg);
    cr_assert(strstr(err.msg, "nanoseconds"), "%s", err.msg);
    cr_assert_eq(clk.n, 0);
    cr_assert_null(clk.t);
}

/* Two elements with one name would make a binding by name ambiguous: never written, in any format. */
Test(io_read_hostile, duplicate_element_names_are_not_written)
{
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    const char *names[3] = {"x", "y", "x"};
    double time[2] = {0, 1}, data[6] = {0};
    cr_assert_eq(rb_log_add_channel_copy(log, "q", 2, 3, time, data, names, NULL, &err), RB_OK);
    const char *files[] = {"d.h5", "d.mat", "d.csv"};
    for (size_t k = 0; k < 3; k++) {
        char *path = in_dir(files[k]);
        cr_assert_eq(rb_log_write(log, path, NULL, &err), RB_EINPUT, "%s: %s", files[k], err.msg);
        cr_assert(strstr(err.msg, "channel q") && strstr(err.msg, "elements 0 and 2") && strstr(err.msg, "named x"),
                  "%s", err.msg);
        rb_free(path);
    }
    cr_assert_eq(test_count_entries(dir), 0);
    rb_log_free(log);
}

static rb_log *one_channel_log(double t0, const char *skipped, const char *why)
{
    rb_log *log = NULL;
    rb_err err;
    double time[2] = {t0, t0 + 0.01}, data[2] = {1, 2};
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    cr_assert_eq(rb_log_add_channel_copy(log, "q", 2, 1, time, data, NULL, NULL, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_note_skipped(log, skipped, why, &err), RB_OK);
    return log;
}

Test(io_read_hostile, a_session_lists_what_each_of_its_files_skipped_once)
{
    rb_log *first = one_channel_log(0, "labels", "data is a struct, not a numeric array");
    rb_log *second = one_channel_log(1, "labels", "data is a struct, not a numeric array");
    rb_log *third = one_channel_log(2, "pwm", "zero elements");
    rb_err err;
    cr_assert_eq(rb_log_append(first, second, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_append(first, third, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(first->n_skipped, 2);
    cr_assert_str_eq(first->skipped[0].name, "labels");
    cr_assert_str_eq(first->skipped[1].name, "pwm");
    cr_assert_str_eq(first->skipped[1].reason, "zero elements");
    cr_assert_eq(first->channels[0].n_samples, 6);
    rb_log_free(first);
    rb_log_free(second);
    rb_log_free(third);
}
