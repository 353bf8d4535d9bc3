/* HDF5 files of one group per channel (`data` + `timestamps`) written by other programs, without the
 * roboest_layout marker: read by their content, or an error naming the file, the group and what is missing
 * or misshapen. The files are written here with the HDF5 C API (as h5py would: row-major shapes). */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <math.h>
#include <string.h>

#include "roboest/io.h"
#include "support.h"

enum { T = 5 };

static char *dir;

static void setup(void) { dir = test_temp_dir(); }
static void teardown(void) { test_remove_tree(dir); }

/* A dataset at `path` (intermediate groups made) of the given shape holding v[k] = base + k. */
static void put(hid_t file, const char *path, int rank, const hsize_t *dims, double base)
{
    size_t n = 1;
    for (int k = 0; k < rank; k++)
        n *= (size_t)dims[k];
    double v[64];
    cr_assert(n <= 64);
    for (size_t k = 0; k < n; k++)
        v[k] = base + (double)k;
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t space = H5Screate_simple(rank, dims, NULL);
    hid_t d = H5Dcreate2(file, path, H5T_NATIVE_DOUBLE, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert(d >= 0, "cannot create %s", path);
    cr_assert(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    H5Sclose(space);
    H5Pclose(lcpl);
}

static hid_t create(const char *name, char **path)
{
    *path = rb_asprintf("%s/%s", dir, name);
    hid_t f = H5Fcreate(*path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert(f >= 0);
    return f;
}

static const hsize_t ts[1] = {T};

TestSuite(io_h5_groups, .init = setup, .fini = teardown);

Test(io_h5_groups, channel_groups_without_marker)
{
    char *path;
    hid_t f = create("groups.h5", &path);
    put(f, "/joints/positions/timestamps", 1, ts, 10.0); /* nested: the channel joints/positions */
    put(f, "/joints/positions/data", 2, (hsize_t[]){T, 2}, 0.0);
    put(f, "/imu/timestamps", 1, ts, 10.0);
    put(f, "/imu/data", 1, ts, 100.0);                        /* (T,): one element */
    put(f, "/wrench/timestamps", 2, (hsize_t[]){T, 1}, 10.0); /* a (T, 1) time vector */
    put(f, "/wrench/data", 2, (hsize_t[]){3, T}, 0.0);        /* (n, T): column-major writer */
    H5Fclose(f);
    rb_log_format fmt;
    rb_err err;
    cr_assert_eq(rb_log_detect(path, &fmt, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(fmt, RB_FMT_GROUPS_H5);
    rb_log *log = NULL;
    cr_assert_eq(rb_log_read(path, &log, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(log->format, RB_FMT_GROUPS_H5);
    cr_assert_eq(log->n_channels, 3);
    const rb_channel *pos = rb_log_find(log, "joints/positions");
    cr_assert_not_null(pos);
    cr_assert(pos->n_samples == T && pos->n_elements == 2);
    cr_assert(pos->time[0] == 10 && pos->time[T - 1] == 14);
    cr_assert(pos->data[3 * 2 + 1] == 7, "(T, n) is sample-major");
    const rb_channel *imu = rb_log_find(log, "imu");
    cr_assert(imu && imu->n_elements == 1 && imu->data[4] == 104);
    const rb_channel *w = rb_log_find(log, "wrench");
    cr_assert(w && w->n_samples == T && w->n_elements == 3);
    /* stored [3][T]: element i of sample t is at i * T + t */
    for (size_t t = 0; t < T; t++)
        for (size_t i = 0; i < 3; i++)
            cr_assert_eq(w->data[t * 3 + i], (double)(i * T + t), "wrench sample %zu element %zu", t, i);
    rb_log_free(log);
    rb_free(path);
    /* a top-level time vector still makes a file plain (its groups nested matrices), as before */
    f = create("plain.h5", &path);
    put(f, "/time", 1, ts, 0.0);
    put(f, "/grp/data", 2, (hsize_t[]){T, 2}, 0.0);
    put(f, "/grp/timestamps", 1, ts, 0.0);
    H5Fclose(f);
    cr_assert_eq(rb_log_detect(path, &fmt, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(fmt, RB_FMT_PLAIN_H5);
    rb_free(path);
}

static void expect_error(const char *path, const char *const *parts, size_t n)
{
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(path, &log, &err), RB_EINPUT);
    cr_assert_null(log);
    cr_assert(strncmp(err.msg, path, strlen(path)) == 0, "names the file: %s", err.msg);
    for (size_t k = 0; k < n; k++)
        cr_assert(strstr(err.msg, parts[k]), "'%s' in: %s", parts[k], err.msg);
    cr_assert_null(strchr(err.msg, '\n'));
}

Test(io_h5_groups, missing_timestamps_named)
{
    char *path;
    hid_t f = create("no_ts.h5", &path);
    put(f, "/good/timestamps", 1, ts, 0.0);
    put(f, "/good/data", 1, ts, 0.0);
    put(f, "/arm/torques/data", 2, (hsize_t[]){T, 2}, 0.0);
    H5Fclose(f);
    expect_error(path, (const char *const[]){"/arm/torques", "without a dataset `timestamps`"}, 2);
    rb_free(path);
}

Test(io_h5_groups, missing_data_named)
{
    char *path;
    hid_t f = create("no_data.h5", &path);
    put(f, "/good/timestamps", 1, ts, 0.0);
    put(f, "/good/data", 1, ts, 0.0);
    put(f, "/lonely/timestamps", 1, ts, 0.0);
    H5Fclose(f);
    expect_error(path, (const char *const[]){"/lonely:", "without a dataset `data`"}, 2);
    rb_free(path);
}

Test(io_h5_groups, wrong_shape_named)
{
    char *path;
    hid_t f = create("shape.h5", &path);
    put(f, "/ch/timestamps", 1, ts, 0.0);
    put(f, "/ch/data", 2, (hsize_t[]){4, 6}, 0.0);
    H5Fclose(f);
    expect_error(path, (const char *const[]){"/ch/data", "shape (4, 6)", "5 timestamps"}, 3);
    rb_free(path);
}

Test(io_h5_groups, timestamps_not_a_vector)
{
    char *path;
    hid_t f = create("ts2d.h5", &path);
    put(f, "/ch/timestamps", 2, (hsize_t[]){2, 3}, 0.0);
    put(f, "/ch/data", 1, (hsize_t[]){6}, 0.0);
    H5Fclose(f);
    expect_error(path, (const char *const[]){"/ch/timestamps", "shape (2, 3)", "not a vector"}, 3);
    rb_free(path);
}
