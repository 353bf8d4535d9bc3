/* Robot-logger .mat files from independent writers: libmatio (v7.3, v5, compressed v7), h5py laid out
 * as MATLAB does (16- and 8-bit chars, an older logger), scipy.io (v5). */
#include <matio.h>

#include "io_read_expect.h"

Test(io_read_logger, matio_v73) { check_logger("logger_matio73.mat", RB_FMT_LOGGER_MAT73); }

Test(io_read_logger, matio_v5) { check_logger("logger_matio5.mat", RB_FMT_LOGGER_MAT5); }

Test(io_read_logger, matio_v7_compressed) { check_logger("logger_matio7.mat", RB_FMT_LOGGER_MAT5); }

Test(io_read_logger, h5py_v73_16bit_chars) { check_logger("logger_h5py73.mat", RB_FMT_LOGGER_MAT73); }

Test(io_read_logger, h5py_v73_8bit_chars_latin1_and_utf8) { check_logger("logger_h5py73_u8.mat", RB_FMT_LOGGER_MAT73); }

Test(io_read_logger, scipy_v5) { check_logger("logger_scipy5.mat", RB_FMT_LOGGER_MAT5); }

Test(io_read_logger, every_writer_and_version_reads_identically)
{
    static const char *const files[] = {"logger_matio5.mat", "logger_matio7.mat", "logger_h5py73.mat",
                                        "logger_h5py73_u8.mat", "logger_scipy5.mat"};
    rb_log *ref = read_ok("logger_matio73.mat");
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        rb_log *log = read_ok(files[f]);
        check_same(ref, log, files[f]);
        rb_log_free(log);
    }
    rb_log_free(ref);
}

/* Other root name, no elements_names/units_of_measure, data as MATLAB n x T and as int32 T x n,
 * a `dimensions` field that disagrees with the data. */
Test(io_read_logger, older_logger_defaults_names_and_other_shapes)
{
    static const expect_channel chans[3] = {
        {"com/position", 5, 3, 5, NULL, NULL},
        {"com/velocity", 6, 2, 6, NULL, NULL},
        {"flags/contact", 7, 4, 3, NULL, NULL},
    };
    rb_log *log = read_ok("logger_h5py73_old.mat");
    cr_assert_eq(log->format, RB_FMT_LOGGER_MAT73);
    cr_assert_str_eq(log->root_name, "balancing");
    cr_assert_eq(log->n_channels, 3);
    check_channel("old", log, &chans[0], false);
    check_channel("old", log, &chans[1], false);
    check_channel("old", log, &chans[2], true);
    cr_assert_null(rb_log_get_attr(log, "yarp_robot_name"));
    rb_log_free(log);
}

Test(io_read_logger, timestamps_must_match_the_data)
{
    char *path = fixture("bad_time_mismatch73.mat");
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(path, &log, &err), RB_EINPUT);
    cr_assert_null(log);
    cr_assert(strncmp(err.msg, path, strlen(path)) == 0, "%s", err.msg);
    cr_assert(strstr(err.msg, "channel joints_state/positions"), "%s", err.msg);
    rb_free(path);
}

Test(io_read_logger, huge_dimensions_are_refused_before_allocating)
{
    static const char *const files[] = {"bad_huge73.mat", "bad_huge5.mat"};
    for (size_t f = 0; f < 2; f++) {
        char *path = fixture(files[f]);
        rb_log *log = NULL;
        rb_err err;
        rb_alloc_fail_after(-1);
        cr_assert_eq(rb_log_read(path, &log, &err), RB_EINPUT, "%s: %s", files[f], err.msg);
        cr_assert(strncmp(err.msg, path, strlen(path)) == 0, "%s", err.msg);
        rb_free(path);
    }
}

static void silent(int level, char *message)
{
    (void)level;
    (void)message;
}

/* libmatio checks MATLAB's attributes strictly: that it reads the h5py files the way MATLAB's own
 * would read proves the fixtures are laid out like MATLAB's. */
Test(io_read_logger, h5py_fixtures_are_readable_by_libmatio)
{
    static const char *const files[] = {"logger_h5py73.mat", "logger_h5py73_u8.mat", "logger_h5py73_old.mat",
                                        "plain_h5py73.mat"};
    static const char *const roots[] = {"robot_logger_device", "robot_logger_device", "balancing", "s"};
    Mat_LogInitFunc("test", silent);
    for (size_t f = 0; f < 4; f++) {
        char *path = fixture(files[f]);
        mat_t *mat = Mat_Open(path, MAT_ACC_RDONLY);
        cr_assert_not_null(mat, "%s", files[f]);
        cr_assert_eq(Mat_GetVersion(mat), MAT_FT_MAT73);
        matvar_t *info = Mat_VarReadInfo(mat, roots[f]);
        cr_assert_not_null(info, "%s: %s", files[f], roots[f]);
        cr_assert_eq(info->class_type, MAT_C_STRUCT);
        Mat_VarFree(info);
        matvar_t *root = Mat_VarRead(mat, roots[f]);
        cr_assert_not_null(root, "%s", files[f]);
        if (f < 2) {
            /* robot_logger_device.joints_state.positions.data: MATLAB 3 x 1 x 5, (i, 0, t) at i + 3 t */
            matvar_t *js = Mat_VarGetStructFieldByName(root, "joints_state", 0);
            matvar_t *pos = js ? Mat_VarGetStructFieldByName(js, "positions", 0) : NULL;
            matvar_t *data = pos ? Mat_VarGetStructFieldByName(pos, "data", 0) : NULL;
            cr_assert_not_null(data, "%s", files[f]);
            cr_assert_eq(data->rank, 3);
            cr_assert(data->dims[0] == 3 && data->dims[1] == 1 && data->dims[2] == 5);
            cr_assert_eq(((double *)data->data)[1 + 3 * 4], logger_value(1, 4, 1));
            matvar_t *names = Mat_VarGetStructFieldByName(pos, "elements_names", 0);
            cr_assert_not_null(names);
            cr_assert_eq(names->class_type, MAT_C_CELL);
            matvar_t *second = Mat_VarGetCell(names, 1);
            cr_assert_not_null(second);
            cr_assert_eq(second->class_type, MAT_C_CHAR);
            cr_assert_eq(second->dims[0] * second->dims[1], 8, "gelenk_\xc3\xa4 is 8 characters");
        }
        Mat_VarFree(root);
        Mat_Close(mat);
        rb_free(path);
    }
}
