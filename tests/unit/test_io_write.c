/* Log writers: contents checked by independent readers (h5py, scipy, Python's csv, libmatio's C
 * API), deterministic bytes, atomic output, failure paths. */
#include <criterion/criterion.h>
#include <locale.h>
#include <math.h>
#include <matio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "roboest/io.h"
#include "support.h"

#define CHECK_PY RB_SOURCE "/tests/unit/io_write_check.py"
#define PYTHON "/usr/bin/python3" /* Debian's, with python3-h5py and python3-scipy */

/* ---- the log every check uses (io_write_check.py builds the same values) --------------------- */
enum { T = 5, N_POS = 3, N_FT = 2 };
static const double TIME[T] = {0.0, 0.01, 0.025, 0.5, 1.0};
static const char *const POS_NAMES[N_POS] = {"r_hip_pitch", "\xce\x94\xce\xb8_knee", "a,\"b\""}; /* Δθ_knee */
static const char *const POS_UNITS[N_POS] = {"rad", "", "N m"};
static const char *const FT_NAMES[N_FT] = {"fx", "fy"};
static const char *const FT_UNITS[N_FT] = {"N", "N"};
static const char *const ATTRS[][2] = {
    {"yarp_robot_name", "ergoCubSN001"},
    {"description_list", "l_hip_pitch,l_knee,torso_yaw"},
    {"roboest_version", "0.1.0"},
    {"config_sha256", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
    {"input file", "log one.mat"},
};

static double pos(int t, int i)
{
    if (t == 0 && i == 0)
        return 0.1;
    if (t == 1 && i == 2)
        return 1.0 / 3.0;
    if (t == 4 && i == 2)
        return -2.5e-300;
    if (t == 2 && i == 1)
        return NAN;
    return 100.0 * t + i + 0.125 * (i + 1);
}

static double ft(int t, int i) { return -(10.0 * t + i) - 0.5; }

/* Element names as MATLAB char (UTF-16 code units), written out by hand. */
static size_t utf16_of(const char *name, uint16_t *u)
{
    static const uint16_t KNEE[] = {0x0394, 0x03B8, '_', 'k', 'n', 'e', 'e'};
    if (strcmp(name, POS_NAMES[1]) == 0) {
        memcpy(u, KNEE, sizeof KNEE);
        return sizeof KNEE / sizeof KNEE[0];
    }
    size_t n = strlen(name); /* the others are ASCII */
    for (size_t k = 0; k < n; k++)
        u[k] = (uint16_t)name[k];
    return n;
}

static rb_log *make_log(bool with_empty)
{
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    double p[T * N_POS], f[T * N_FT];
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < N_POS; i++)
            p[t * N_POS + i] = pos(t, i);
        for (int i = 0; i < N_FT; i++)
            f[t * N_FT + i] = ft(t, i);
    }
    cr_assert_eq(rb_log_add_channel_copy(log, "joints_state/positions", T, N_POS, TIME, p, POS_NAMES, POS_UNITS, &err),
                 RB_OK);
    cr_assert_eq(rb_log_add_channel_copy(log, "FTs/l_arm_ft", T, N_FT, TIME, f, FT_NAMES, FT_UNITS, &err), RB_OK);
    if (with_empty)
        cr_assert_eq(rb_log_add_channel(log, "empty_channel", 0, 2, NULL, &err), RB_OK);
    for (size_t a = 0; a < sizeof ATTRS / sizeof ATTRS[0]; a++)
        cr_assert_eq(rb_log_set_attr(log, ATTRS[a][0], ATTRS[a][1], &err), RB_OK);
    return log;
}

/* Run the Python checker; assert it exits 0 and show what it printed otherwise. */
static void python_check(const char *mode, const char *path, bool with_empty)
{
    char cmd[1024], out[4096] = "";
    snprintf(cmd, sizeof cmd, "%s %s %s '%s'%s 2>&1", PYTHON, CHECK_PY, mode, path, with_empty ? " --with-empty" : "");
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s failed: %s", cmd, out);
}

static char *write_log(const rb_log *log, const char *dir, const char *file, rb_out_format fmt)
{
    char *path = rb_asprintf("%s/%s", dir, file);
    rb_write_opts opts = {.format = fmt};
    rb_err err;
    int rc = rb_log_write(log, path, &opts, &err);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    return path;
}

/* ---- contents, by independent readers -------------------------------------------------------- */
Test(io_write, h5_read_back_by_h5py)
{
    char *dir = test_temp_dir();
    rb_log *log = make_log(true);
    char *path = write_log(log, dir, "out.h5", RB_OUT_H5);
    python_check("h5", path, true);
    rb_free(path);
    rb_log_free(log);
    test_remove_tree(dir);
}

Test(io_write, csv_read_back_by_python_csv)
{
    char *dir = test_temp_dir();
    rb_log *log = make_log(false);
    char *path = write_log(log, dir, "out.csv", RB_OUT_CSV);
    python_check("csv", path, false);
    rb_free(path);
    rb_log_free(log);
    test_remove_tree(dir);
}

/* Element (i, t) of a libmatio n x 1 x T double at i + n * t: the sample-major order. */
static void check_matio_channel(matvar_t *root, const char *group, const char *leaf, size_t n, double (*fn)(int, int),
                                const char *const *names, bool v73)
{
    matvar_t *g = Mat_VarGetStructFieldByName(root, group, 0);
    cr_assert_not_null(g, "%s", group);
    matvar_t *ch = Mat_VarGetStructFieldByName(g, leaf, 0);
    cr_assert_not_null(ch, "%s.%s", group, leaf);
    matvar_t *data = Mat_VarGetStructFieldByName(ch, "data", 0);
    cr_assert_eq(data->class_type, MAT_C_DOUBLE);
    cr_assert_eq(data->rank, 3);
    cr_assert(data->dims[0] == n && data->dims[1] == 1 && data->dims[2] == T, "dims %zu %zu %zu", data->dims[0],
              data->dims[1], data->dims[2]);
    const double *x = data->data;
    for (int t = 0; t < T; t++)
        for (int i = 0; i < (int)n; i++) {
            double want = fn(t, i);
            cr_assert(isnan(want) ? isnan(x[i + n * t]) : x[i + n * t] == want, "%s.%s (%d, %d)", group, leaf, i, t);
        }
    matvar_t *ts = Mat_VarGetStructFieldByName(ch, "timestamps", 0);
    cr_assert(ts->rank == 2 && ts->dims[0] == T && ts->dims[1] == 1, "timestamps %zu x %zu", ts->dims[0], ts->dims[1]);
    cr_assert_arr_eq(ts->data, TIME, sizeof TIME);
    matvar_t *en = Mat_VarGetStructFieldByName(ch, "elements_names", 0);
    cr_assert_eq(en->class_type, MAT_C_CELL);
    cr_assert(en->dims[0] == n && en->dims[1] == 1);
    for (size_t i = 0; i < n; i++) {
        matvar_t *s = Mat_VarGetCell(en, (int)i);
        cr_assert_eq(s->class_type, MAT_C_CHAR);
        uint16_t want[64];
        size_t units = utf16_of(names[i], want);
        cr_assert_eq(s->dims[1], units, "%s: %zu chars", names[i], s->dims[1]);
        bool ascii = units == strlen(names[i]);
        if (v73 || !ascii) { /* MATLAB's UTF-16 code units (v5: miUTF16, v7.3: uint16) */
            cr_assert_eq(s->data_type, v73 ? MAT_T_UINT16 : MAT_T_UTF16, "%s", names[i]);
            cr_assert_arr_eq(s->data, want, units * 2, "%s", names[i]);
        } else { /* v5 ASCII: miUTF8, as the logger writes it */
            cr_assert_eq(s->data_type, MAT_T_UTF8);
            cr_assert_eq(s->nbytes, strlen(names[i]));
            cr_assert_arr_eq(s->data, names[i], strlen(names[i]), "%s", names[i]);
        }
    }
}

static void check_with_matio(const char *path, bool v73)
{
    mat_t *mat = Mat_Open(path, MAT_ACC_RDONLY);
    cr_assert_not_null(mat, "%s", path);
    cr_assert_eq(Mat_GetVersion(mat), v73 ? MAT_FT_MAT73 : MAT_FT_MAT5);
    matvar_t *root = Mat_VarRead(mat, "robot_logger_device");
    cr_assert_not_null(root);
    cr_assert_eq(root->class_type, MAT_C_STRUCT);
    check_matio_channel(root, "joints_state", "positions", N_POS, pos, POS_NAMES, v73);
    check_matio_channel(root, "FTs", "l_arm_ft", N_FT, ft, FT_NAMES, v73);
    matvar_t *name = Mat_VarGetStructFieldByName(
        Mat_VarGetStructFieldByName(Mat_VarGetStructFieldByName(root, "FTs", 0), "l_arm_ft", 0), "name", 0);
    cr_assert_eq(name->dims[1], strlen("FTs::l_arm_ft"));
    matvar_t *empty = Mat_VarGetStructFieldByName(root, "empty_channel", 0);
    cr_assert_not_null(empty);
    cr_assert_eq(Mat_VarGetNumberOfFields(empty), 0, "a zero-sample channel is a struct without fields");
    Mat_VarFree(root);
    Mat_Close(mat);
}

Test(io_write, mat73_read_back_by_h5py_and_libmatio)
{
    char *dir = test_temp_dir();
    rb_log *log = make_log(true);
    char *path = write_log(log, dir, "out.mat", RB_OUT_MAT73);
    python_check("mat73", path, true);
    check_with_matio(path, true);
    rb_free(path);
    rb_log_free(log);
    test_remove_tree(dir);
}

Test(io_write, mat5_read_back_by_scipy_and_libmatio)
{
    char *dir = test_temp_dir();
    rb_log *log = make_log(true);
    char *path = write_log(log, dir, "out.mat", RB_OUT_MAT5);
    python_check("mat5", path, true);
    check_with_matio(path, false);
    rb_free(path);
    rb_log_free(log);
    test_remove_tree(dir);
}

Test(io_write, mat_root_name_option)
{
    char *dir = test_temp_dir();
    rb_log *log = make_log(false);
    char *path = rb_asprintf("%s/root.mat", dir);
    rb_write_opts opts = {.format = RB_OUT_MAT73, .root_name = "balancing"};
    rb_err err;
    cr_assert_eq(rb_log_write(log, path, &opts, &err), RB_OK, "%s", err.msg);
    mat_t *mat = Mat_Open(path, MAT_ACC_RDONLY);
    matvar_t *root = Mat_VarReadInfo(mat, "balancing");
    cr_assert_not_null(root);
    Mat_VarFree(root);
    Mat_Close(mat);
    opts.root_name = "not an identifier";
    opts.overwrite = true;
    cr_assert_eq(rb_log_write(log, path, &opts, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "not an identifier"), "%s", err.msg);
    rb_free(path);
    rb_log_free(log);
    test_remove_tree(dir);
}

Test(io_write, csv_exact_text)
{
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    double t[2] = {0.5, 1.25}, a[2] = {0.1, NAN}, b[4] = {1, -INFINITY, 1e-300, 2.5};
    const char *an[] = {"x"}, *au[] = {"m/s"}, *bn[] = {"p,q", "r\"s"}, *bu[] = {"", "N"};
    cr_assert_eq(rb_log_add_channel_copy(log, "a", 2, 1, t, a, an, au, &err), RB_OK);
    cr_assert_eq(rb_log_add_channel_copy(log, "g/b", 2, 2, t, b, bn, bu, &err), RB_OK);
    cr_assert_eq(rb_log_set_attr(log, "model", "ergoCub.urdf", &err), RB_OK);
    cr_assert_eq(rb_log_set_attr(log, "note", "two\nlines", &err), RB_OK);
    char *dir = test_temp_dir();
    char *path = write_log(log, dir, "x.csv", RB_OUT_CSV);
    size_t len;
    char *text = test_slurp(path, &len);
    cr_assert_str_eq(text, "# model: ergoCub.urdf\n"
                           "# note: two lines\n"
                           "time,a:x [m/s],\"g/b:p,q\",\"g/b:r\"\"s [N]\"\n"
                           "0.5,0.1,1,-inf\n"
                           "1.25,nan,1e-300,2.5\n");
    free(text);
    rb_free(path);
    rb_log_free(log);
    test_remove_tree(dir);
}

/* Numbers keep their '.' under a decimal-comma locale: rb_format_double formats under "C" itself. */
Test(io_write, csv_ignores_the_locale)
{
    char locale_dir[] = "/tmp/rb_locale_XXXXXX";
    cr_assert(test_decimal_comma_locale(LC_ALL, locale_dir), "a decimal-comma locale (localedef, Debian's locales)");
    char probe[16];
    snprintf(probe, sizeof probe, "%.1f", 0.5);
    cr_assert_str_eq(probe, "0,5", "the locale really uses a decimal comma");
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    double t[2] = {0.5, 1.25}, x[2] = {0.1, -2.5e-300};
    cr_assert_eq(rb_log_add_channel_copy(log, "x", 2, 1, t, x, NULL, NULL, &err), RB_OK);
    char *dir = test_temp_dir();
    char *path = write_log(log, dir, "x.csv", RB_OUT_CSV);
    test_locale_restore(LC_ALL, locale_dir);
    size_t len;
    char *text = test_slurp(path, &len);
    cr_assert_str_eq(text, "time,x\n0.5,0.1\n1.25,-2.5e-300\n");
    free(text);
    rb_free(path);
    rb_log_free(log);
    test_remove_tree(dir);
}

/* ---- deterministic bytes --------------------------------------------------------------------- */
static void same_bytes_twice(rb_out_format fmt, const char *file)
{
    char *dir = test_temp_dir();
    rb_log *log = make_log(true);
    char *name2 = rb_asprintf("2%s", file);
    char *a = write_log(log, dir, file, fmt);
    sleep(1); /* HDF5 object times have one-second resolution: they would differ now */
    char *b = write_log(log, dir, name2, fmt);
    size_t la, lb;
    char *x = test_slurp(a, &la), *y = test_slurp(b, &lb);
    cr_assert_eq(la, lb, "%s: %zu vs %zu bytes", file, la, lb);
    cr_assert(memcmp(x, y, la) == 0, "%s: the two files differ", file);
    free(x);
    free(y);
    rb_free(a);
    rb_free(b);
    rb_free(name2);
    rb_log_free(log);
    test_remove_tree(dir);
}

Test(io_write, h5_bytes_are_deterministic) { same_bytes_twice(RB_OUT_H5, "d.h5"); }
Test(io_write, mat73_bytes_are_deterministic) { same_bytes_twice(RB_OUT_MAT73, "d.mat"); }
Test(io_write, mat5_bytes_are_deterministic) { same_bytes_twice(RB_OUT_MAT5, "d5.mat"); }

/* ---- atomic output ---------------------------------------------------------------------------- */
Test(io_write, existing_file_is_kept_without_overwrite)
{
    char *dir = test_temp_dir();
    char *path = rb_asprintf("%s/keep.h5", dir);
    FILE *f = fopen(path, "w");
    fputs("old contents", f);
    fclose(f);
    rb_log *log = make_log(false);
    rb_write_opts opts = {.format = RB_OUT_H5};
    rb_err err;
    cr_assert_eq(rb_log_write(log, path, &opts, &err), RB_EEXISTS);
    size_t len;
    char *text = test_slurp(path, &len);
    cr_assert_str_eq(text, "old contents");
    free(text);
    cr_assert_eq(test_count_entries(dir), 1, "no temporary file left");
    opts.overwrite = true;
    cr_assert_eq(rb_log_write(log, path, &opts, &err), RB_OK, "%s", err.msg);
    python_check("h5", path, false);
    cr_assert_eq(test_count_entries(dir), 1);
    rb_free(path);
    rb_log_free(log);
    test_remove_tree(dir);
}

Test(io_write, missing_folder_is_an_io_error)
{
    char *dir = test_temp_dir();
    char *path = rb_asprintf("%s/no/such/out.mat", dir);
    rb_log *log = make_log(false);
    rb_write_opts opts = {.format = RB_OUT_MAT73};
    rb_err err;
    cr_assert_eq(rb_log_write(log, path, &opts, &err), RB_EIO);
    cr_assert(strstr(err.msg, "does not exist"), "%s", err.msg);
    cr_assert_eq(test_count_entries(dir), 0);
    rb_free(path);
    rb_log_free(log);
    test_remove_tree(dir);
}

Test(io_write, failed_write_leaves_nothing)
{
    char *dir = test_temp_dir();
    char *path = rb_asprintf("%s/out.csv", dir);
    rb_log *log = make_log(false);
    log->channels[1].time[3] = 0.5000000000000001; /* one bit off */
    rb_err err;
    cr_assert_eq(rb_log_write(log, path, NULL, &err), RB_EINPUT); /* NULL opts: format from the name */
    cr_assert(strstr(err.msg, "out.csv: channel FTs/l_arm_ft: sample 3") && strstr(err.msg, "resample"), "%s", err.msg);
    cr_assert_eq(test_count_entries(dir), 0, "neither the output nor a temporary file");
    cr_assert_eq(log->channels[1].time[3], 0.5000000000000001, "input untouched");

    rb_log_free(log);
    log = make_log(true); /* a zero-sample channel cannot share the clock either */
    cr_assert_eq(rb_log_write(log, path, NULL, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "empty_channel has 0 samples"), "%s", err.msg);
    cr_assert_eq(test_count_entries(dir), 0);
    rb_free(path);
    rb_log_free(log);
    test_remove_tree(dir);
}

static void expect_write_error(rb_log *log, rb_out_format fmt, int code, const char *text)
{
    char *dir = test_temp_dir();
    char *path = rb_asprintf("%s/bad", dir);
    rb_write_opts opts = {.format = fmt};
    rb_err err;
    cr_assert_eq(rb_log_write(log, path, &opts, &err), code, "%s", err.msg);
    cr_assert(strstr(err.msg, text), "%s", err.msg);
    cr_assert(strncmp(err.msg, path, strlen(path)) == 0, "message starts with the path: %s", err.msg);
    cr_assert_eq(test_count_entries(dir), 0);
    rb_free(path);
    test_remove_tree(dir);
}

Test(io_write, invalid_inputs_are_refused)
{
    rb_log *log = make_log(false);
    rb_err err;
    cr_assert_eq(rb_channel_set_name(&log->channels[0], 1, "bad \xff byte", &err), RB_OK);
    for (int fmt = RB_OUT_H5; fmt <= RB_OUT_MAT5; fmt++)
        expect_write_error(log, (rb_out_format)fmt, RB_EINPUT,
                           "joints_state/positions: element 1: name is not valid UTF-8");
    rb_log_free(log);

    /* "a/data" would land where channel "a" keeps its data */
    log = make_log(false);
    double t[1] = {0}, x[1] = {1};
    cr_assert_eq(rb_log_add_channel_copy(log, "a", 1, 1, t, x, NULL, NULL, &err), RB_OK);
    cr_assert_eq(rb_log_add_channel_copy(log, "a/data", 1, 1, t, x, NULL, NULL, &err), RB_OK);
    expect_write_error(log, RB_OUT_H5, RB_EINPUT, "a/data: 'data' is taken by another channel");
    expect_write_error(log, RB_OUT_MAT73, RB_EINPUT, "'data' (under 'a') clashes");
    rb_log_free(log);

    log = make_log(false);
    cr_assert_eq(rb_log_add_channel_copy(log, "x//y", 1, 1, t, x, NULL, NULL, &err), RB_OK);
    expect_write_error(log, RB_OUT_H5, RB_EINPUT, "channel 'x//y': invalid name");
    expect_write_error(log, RB_OUT_MAT5, RB_EINPUT, "channel 'x//y': invalid name");
    rb_log_free(log);
}

Test(io_write, format_from_path)
{
    rb_out_format fmt;
    rb_err err;
    const char *paths[] = {"a.h5", "dir.x/B.HDF5", "log.mat", "x.CSV"};
    rb_out_format want[] = {RB_OUT_H5, RB_OUT_H5, RB_OUT_MAT73, RB_OUT_CSV};
    for (size_t k = 0; k < 4; k++) {
        cr_assert_eq(rb_out_format_from_path(paths[k], &fmt, &err), RB_OK, "%s", paths[k]);
        cr_assert_eq(fmt, want[k], "%s", paths[k]);
    }
    cr_assert_eq(rb_out_format_from_path("out.json", &fmt, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "out.json") && strstr(err.msg, ".h5") && strstr(err.msg, ".csv"), "%s", err.msg);
    cr_assert_eq(rb_out_format_from_path("h5", &fmt, &err), RB_ECONFIG);
}

Test(io_write, write_raw_names_the_path)
{
    char *dir = test_temp_dir();
    char *path = rb_asprintf("%s/raw.h5", dir);
    rb_log *log = make_log(false);
    rb_err err;
    cr_assert_eq(rb_log_write_raw(log, path, NULL, &err), RB_OK, "%s", err.msg);
    python_check("h5", path, false);
    cr_assert_eq(rb_log_write_raw(log, path, NULL, &err), RB_OK, "raw writes truncate");
    cr_assert_eq(test_count_entries(dir), 1);
    rb_free(path);
    rb_log_free(log);
    test_remove_tree(dir);
}

/* A full disk: libmatio does not report failed writes, so the v5 writer reads the file back.
 * (Not run for the HDF5-based formats: HDF5 1.10 leaks its file structure when H5Fcreate fails
 * on a full disk, which the sanitizer runs would report.) */
Test(io_write, full_disk_is_an_io_error)
{
    if (access("/dev/full", W_OK) != 0)
        cr_skip_test("no /dev/full");
    rb_log *log = make_log(false);
    const rb_out_format fmts[] = {RB_OUT_MAT5, RB_OUT_CSV};
    for (size_t k = 0; k < 2; k++) {
        rb_write_opts opts = {.format = fmts[k]};
        rb_err err;
        cr_assert_eq(rb_log_write_raw(log, "/dev/full", &opts, &err), RB_EIO, "format %d", (int)fmts[k]);
        cr_assert(strncmp(err.msg, "/dev/full: ", 11) == 0, "%s", err.msg);
    }
    rb_log_free(log);
}

/* ---- allocation failures ---------------------------------------------------------------------- */
Test(io_write, allocation_failures_fail_cleanly)
{
    const rb_out_format fmts[] = {RB_OUT_H5, RB_OUT_MAT73, RB_OUT_MAT5, RB_OUT_CSV};
    const char *files[] = {"f.h5", "f.mat", "f5.mat", "f.csv"};
    for (size_t k = 0; k < 4; k++) {
        rb_log *log = make_log(fmts[k] != RB_OUT_CSV);
        char *dir = test_temp_dir();
        char *path = rb_asprintf("%s/%s", dir, files[k]);
        rb_write_opts opts = {.format = fmts[k]};
        rb_err err;
        int rc = RB_ENOMEM;
        long n;
        for (n = 0; rc != RB_OK && n < 10000; n++) {
            rb_alloc_fail_after(n);
            rc = rb_log_write(log, path, &opts, &err);
            rb_alloc_fail_after(-1);
            if (rc != RB_OK) {
                cr_assert(rc == RB_ENOMEM || rc == RB_EIO, "%s, failure %ld: %s", files[k], n, err.msg);
                cr_assert_eq(test_count_entries(dir), 0, "%s, failure %ld: a file was left", files[k], n);
            }
        }
        cr_assert_eq(rc, RB_OK, "%s never succeeded", files[k]);
        cr_assert_gt(n, 1, "%s: no allocation was failed", files[k]);
        cr_assert_eq(test_count_entries(dir), 1);
        rb_free(path);
        test_remove_tree(dir);
        rb_log_free(log);
    }
}
