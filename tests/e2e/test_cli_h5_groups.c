/* End-to-end: `roboest info` on HDF5 files of one group per channel written by another program (no roboest
 * marker), with epoch timestamps at 1 kHz: the channels are listed and the rate reads 1000 Hz; a group
 * without `timestamps` is one line naming the file, the group and the missing dataset, exit 3. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum { T = 3001 };

static void put(hid_t file, const char *path, int rank, const hsize_t *dims, const double *v)
{
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t space = H5Screate_simple(rank, dims, NULL);
    hid_t d = H5Dcreate2(file, path, H5T_NATIVE_DOUBLE, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert(d >= 0 && H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0, "%s", path);
    H5Dclose(d);
    H5Sclose(space);
    H5Pclose(lcpl);
}

/* /joints/positions (T, 2) and /imu (T,), epoch timestamps at 1 kHz; without /imu/timestamps when broken. */
static char *write_log(const char *dir, bool broken)
{
    char *path = test_path(dir, broken ? "broken.h5" : "groups.h5");
    double *t = malloc(T * sizeof *t), *x = calloc(2 * T, sizeof *x);
    for (size_t k = 0; k < T; k++)
        t[k] = 1.7e9 + (double)k * 1e-3;
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert(f >= 0);
    put(f, "/joints/positions/timestamps", 1, (hsize_t[]){T}, t);
    put(f, "/joints/positions/data", 2, (hsize_t[]){T, 2}, x);
    if (!broken)
        put(f, "/imu/timestamps", 1, (hsize_t[]){T}, t);
    put(f, "/imu/data", 1, (hsize_t[]){T}, x);
    H5Fclose(f);
    free(t), free(x);
    return path;
}

Test(cli_h5_groups, info_lists_groups_at_1000_hz)
{
    char *dir = test_tmpdir(), *path = write_log(dir, false);
    cli_result r = cli_run(NULL, (const char *[]){"info", "--json", path, NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "%s", r.err);
    cJSON *root = cJSON_Parse(r.out);
    cr_assert_not_null(root, "%s", r.out);
    cr_expect_str_eq(cJSON_GetObjectItem(root, "format")->valuestring, "channel groups, HDF5");
    const cJSON *chans = cJSON_GetObjectItem(root, "channels");
    cr_assert_eq(cJSON_GetArraySize(chans), 2);
    const cJSON *c0 = cJSON_GetArrayItem(chans, 0), *c1 = cJSON_GetArrayItem(chans, 1); /* in link-name order */
    cr_expect_str_eq(cJSON_GetObjectItem(c0, "name")->valuestring, "imu");
    cr_expect_str_eq(cJSON_GetObjectItem(c1, "name")->valuestring, "joints/positions");
    cr_expect_eq(cJSON_GetObjectItem(c1, "elements")->valuedouble, 2);
    for (int k = 0; k < 2; k++) {
        double rate = cJSON_GetObjectItem(cJSON_GetArrayItem(chans, k), "rate")->valuedouble;
        cr_expect(fabs(rate - 1000) < 1e-3, "channel %d: rate %.9g Hz", k, rate);
    }
    cJSON_Delete(root);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"info", path, NULL});
    cr_assert_eq(r.status, CLI_EXIT_OK, "%s", r.err);
    cr_expect(strstr(r.out, "1000 "), "the table says 1000 Hz: %s", r.out);
    cli_result_free(&r);
    free(path), free(dir);
}

Test(cli_h5_groups, missing_timestamps_named)
{
    char *dir = test_tmpdir(), *path = write_log(dir, true);
    cli_result r = cli_run(NULL, (const char *[]){"info", path, NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, path) && strstr(r.err, "/imu") && strstr(r.err, "`timestamps`"), "%s", r.err);
    cr_expect_str_empty(r.out);
    cli_result_free(&r);
    free(path), free(dir);
}
