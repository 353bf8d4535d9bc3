/* End-to-end: roboest info / convert on inputs that used to block, vanish silently or fail with the wrong exit
 * code: a FIFO, entries that cannot be channels, an empty log, text that is not UTF-8, impossible clocks, a Git
 * LFS pointer. Every failure: one line on stderr naming the file, the documented exit code, nothing written. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <hdf5.h>
#include <matio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

static void deadline(void) { test_deadline(60); }

TestSuite(cli_inputs_hostile, .init = deadline);

static void expect_failure(cli_result *r, int code, const char *const *fragments)
{
    cr_expect_eq(r->status, code, "exit %d, wanted %d; stderr: %s", r->status, code, r->err);
    cr_expect_eq(test_count_lines(r->err), 1, "one line on stderr, got: %s", r->err);
    for (size_t k = 0; fragments[k]; k++)
        cr_expect(strstr(r->err, fragments[k]) != NULL, "stderr lacks '%s': %s", fragments[k], r->err);
    cr_expect_str_empty(r->out, "nothing on stdout: %s", r->out);
}

#define EXPECT_FAILURE(r, code, ...) expect_failure(r, code, (const char *const[]){__VA_ARGS__, NULL})

static cli_result run(const char *const *args) { return cli_run(NULL, args); }

Test(cli_inputs_hostile, info_on_a_fifo_fails_at_once)
{
    char *dir = test_tmpdir(), *fifo = test_path(dir, "log.csv");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cli_result r = run((const char *[]){"info", fifo, NULL});
    EXPECT_FAILURE(&r, CLI_EXIT_INPUT, fifo, "not a regular file");
    cli_result_free(&r);
    free(fifo), free(dir);
}

/* robot_logger_device {good: 2 x 1 x 4, as_struct: data a struct} (v7.3), without `good` when !good. */
static void write_logger(const char *path, bool good)
{
    static const char *root_fields[] = {"good", "as_struct"}, *ch_fields[] = {"data", "timestamps"}, *x[] = {"x"};
    size_t one[2] = {1, 1}, ddims[3] = {2, 1, 4}, tdims[2] = {4, 1};
    double data[8] = {1, 2, 3, 4, 5, 6, 7, 8}, time[4] = {0, 0.01, 0.02, 0.03};
    mat_t *mat = Mat_CreateVer(path, NULL, MAT_FT_MAT73);
    cr_assert_not_null(mat);
    matvar_t *root = Mat_VarCreateStruct("robot_logger_device", 2, one, root_fields + !good, 2 - !good);
    for (int k = !good; k < 2; k++) {
        matvar_t *ch = Mat_VarCreateStruct(NULL, 2, one, ch_fields, 2), *d;
        if (k == 0) {
            d = Mat_VarCreate(NULL, MAT_C_DOUBLE, MAT_T_DOUBLE, 3, ddims, data, 0);
        } else {
            d = Mat_VarCreateStruct(NULL, 2, one, x, 1);
            Mat_VarSetStructFieldByName(d, "x", 0, Mat_VarCreate(NULL, MAT_C_DOUBLE, MAT_T_DOUBLE, 2, tdims, time, 0));
        }
        Mat_VarSetStructFieldByName(ch, "data", 0, d);
        Mat_VarSetStructFieldByName(ch, "timestamps", 0,
                                    Mat_VarCreate(NULL, MAT_C_DOUBLE, MAT_T_DOUBLE, 2, tdims, time, 0));
        Mat_VarSetStructFieldByName(root, root_fields[k], 0, ch);
    }
    cr_assert_eq(Mat_VarWrite(mat, root, MAT_COMPRESSION_NONE), 0);
    Mat_VarFree(root);
    Mat_Close(mat);
}

Test(cli_inputs_hostile, skipped_entries_are_listed_and_nothing_readable_is_an_error)
{
    char *dir = test_tmpdir(), *some = test_path(dir, "some.mat"), *none = test_path(dir, "none.mat");
    char *out = test_path(dir, "out.csv");
    write_logger(some, true);
    write_logger(none, false);
    cli_result r = run((const char *[]){"info", some, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "1 channels, 1 skipped"), "%s", r.out);
    cr_expect(strstr(r.out, "skipped: as_struct (data is a struct"), "%s", r.out);
    cli_result_free(&r);
    r = run((const char *[]){"info", "--json", some, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cJSON *doc = cJSON_Parse(r.out), *skipped = cJSON_GetObjectItemCaseSensitive(doc, "skipped");
    cr_assert_eq(cJSON_GetArraySize(skipped), 1, "%s", r.out);
    cJSON *s0 = cJSON_GetArrayItem(skipped, 0);
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(s0, "name")->valuestring, "as_struct");
    cr_expect(strstr(cJSON_GetObjectItemCaseSensitive(s0, "reason")->valuestring, "data is a struct"));
    cJSON_Delete(doc);
    cli_result_free(&r);

    r = run((const char *[]){"info", none, NULL});
    EXPECT_FAILURE(&r, CLI_EXIT_INPUT, none, "no channel", "as_struct", "data is a struct");
    cli_result_free(&r);
    r = run((const char *[]){"convert", none, "-o", out, NULL});
    EXPECT_FAILURE(&r, CLI_EXIT_INPUT, none, "as_struct");
    cli_result_free(&r);
    cr_expect_eq(test_count_entries(dir), 2, "only the inputs in the folder");
    free(some), free(none), free(out), free(dir);
}

/* A roboest .h5 file with its layout marker and no channel. */
static void write_empty_h5(const char *path)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t type = H5Tcopy(H5T_C_S1), space = H5Screate(H5S_SCALAR);
    H5Tset_size(type, 10);
    hid_t a = H5Acreate2(f, "roboest_layout", type, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, type, "channels/1");
    H5Aclose(a);
    H5Sclose(space);
    H5Tclose(type);
    H5Fclose(f);
}

Test(cli_inputs_hostile, empty_log_is_neither_read_nor_written)
{
    char *dir = test_tmpdir(), *h5 = test_path(dir, "empty.h5"), *out = test_path(dir, "out.csv");
    write_empty_h5(h5);
    cli_result r = run((const char *[]){"convert", h5, "-o", out, NULL});
    EXPECT_FAILURE(&r, CLI_EXIT_INPUT, h5, "no channels");
    cli_result_free(&r);
    r = run((const char *[]){"info", h5, NULL});
    EXPECT_FAILURE(&r, CLI_EXIT_INPUT, h5, "no channels");
    cli_result_free(&r);
    cr_expect_eq(test_count_entries(dir), 1, "only the input in the folder");
    free(h5), free(out), free(dir);
}

Test(cli_inputs_hostile, invalid_utf8_header_names_the_input)
{
    char *dir = test_tmpdir(), *csv = test_path(dir, "in.csv"), *out = test_path(dir, "out.h5");
    test_write_file(csv, "time,gelenk_\xe4\n0,1\n0.1,2\n");
    cli_result r = run((const char *[]){"convert", csv, "-o", out, NULL});
    EXPECT_FAILURE(&r, CLI_EXIT_INPUT, csv, "column 2", "not valid UTF-8");
    cr_expect(!strstr(r.err, "out.h5"), "names the input, not the output: %s", r.err);
    cli_result_free(&r);
    cr_expect_eq(test_count_entries(dir), 1);
    free(csv), free(out), free(dir);
}

Test(cli_inputs_hostile, impossible_clocks_exit_3_with_the_cause)
{
    char *dir = test_tmpdir(), *ns = test_path(dir, "ns.csv"), *big = test_path(dir, "big.csv");
    char *ok = test_path(dir, "ok.csv"), *out = test_path(dir, "out.h5");
    FILE *f = fopen(ns, "w");
    fprintf(f, "time,a\n");
    for (int k = 0; k < 100; k++)
        fprintf(f, "%lld,%d\n", 1700000000000000000LL + 10000000LL * k, k);
    fclose(f);
    test_write_file(big, "time,a\n0,1\n1e300,2\n");
    test_write_file(ok, "time,a\n0,1\n0.01,2\n0.02,3\n");
    cli_result r = run((const char *[]){"convert", ns, "-o", out, "--rate", "100", NULL});
    EXPECT_FAILURE(&r, CLI_EXIT_INPUT, "timestamps look like nanoseconds", "scale them by 1e-9");
    cli_result_free(&r);
    r = run((const char *[]){"convert", big, "-o", out, "--rate", "100", NULL});
    EXPECT_FAILURE(&r, CLI_EXIT_INPUT, "1e+300");
    cli_result_free(&r);
    r = run((const char *[]){"convert", ok, "-o", out, "--rate", "1e12", NULL});
    EXPECT_FAILURE(&r, CLI_EXIT_INPUT, "1e+12 Hz");
    cli_result_free(&r);
    cr_expect_eq(test_count_entries(dir), 3, "only the inputs in the folder");
    free(ns), free(big), free(ok), free(out), free(dir);
}

/* Nanosecond timestamps on their own clock used to run silently, every rate and derivative off by 1e9: info and
 * run say so (run still runs: the log is readable, its units are the user's to fix); seconds say nothing. */
Test(cli_inputs_hostile, timestamps_in_other_units_are_named)
{
    char *dir = test_tmpdir(), *ns = test_path(dir, "ns.csv"), *us = test_path(dir, "us.csv");
    char *s = test_path(dir, "s.csv"), *cfg = test_path(dir, "p.json");
    FILE *f = fopen(ns, "w"), *g = fopen(us, "w"), *h = fopen(s, "w");
    fprintf(f, "time,q:a\n");
    fprintf(g, "time,q:a\n");
    fprintf(h, "time,q:a\n");
    for (int k = 0; k < 50; k++) {
        fprintf(f, "%lld,%d\n", 1700000000000000000LL + 10000000LL * k, k);
        fprintf(g, "%lld,%d\n", 1700000000000000LL + 10000LL * k, k);
        fprintf(h, "%.17g,%d\n", 1700000000.0 + 0.01 * k, k);
    }
    fclose(f), fclose(g), fclose(h);
    test_write_file(cfg,
                    "{\"name\": \"p\", \"clock\": {\"channel\": \"q\"}, \"signals\": {\"q\": {\"channel\": \"q\"}},\n"
                    " \"stages\": [{\"id\": \"d\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"},"
                    " \"out\": {\"dx\": \"qd\"}}],\n"
                    " \"outputs\": [{\"path\": \"est.csv\", \"signals\": [\"qd\"]}]}\n");
    const char *logs[] = {ns, us, s},
               *hints[] = {"nanoseconds: scale them by 1e-9", "microseconds: scale them by 1e-6", NULL};
    for (int i = 0; i < 3; i++) {
        cli_result r = run((const char *[]){"info", logs[i], NULL});
        cr_assert_eq(r.status, CLI_EXIT_OK, "%s", r.err);
        cr_expect_eq(strstr(r.out, "timestamps look like") != NULL, hints[i] != NULL, "%s", r.out);
        cr_expect(!hints[i] || strstr(r.out, hints[i]), "%s", r.out);
        cli_result_free(&r);
        r = run((const char *[]){"info", "--json", logs[i], NULL});
        cr_expect_eq(strstr(r.out, "\"time_hint\"") != NULL, hints[i] != NULL, "%s", r.out);
        cli_result_free(&r);
        char name[16];
        snprintf(name, sizeof name, "out%d", i);
        char *out = test_path(dir, name);
        r = run((const char *[]){"run", cfg, logs[i], "-o", out, "-q", NULL});
        cr_assert_eq(r.status, CLI_EXIT_OK, "%s", r.err);
        cr_expect_eq(strstr(r.err, "warning") != NULL, hints[i] != NULL, "%s", r.err);
        cr_expect(!hints[i] || (strstr(r.err, "channel q: median sample interval") && strstr(r.err, hints[i])), "%s",
                  r.err);
        cli_result_free(&r);
        free(out);
    }
    free(ns), free(us), free(s), free(cfg), free(dir);
}

Test(cli_inputs_hostile, csv_from_spreadsheets_converts)
{
    char *dir = test_tmpdir(), *csv = test_path(dir, "in.csv"), *out = test_path(dir, "out.csv");
    test_write_file(csv, "\xEF\xBB\xBFtime,\"q:a\",q:b,\r0,\"1\",2,\r0.5,3,4,\r");
    cli_result r = run((const char *[]){"convert", csv, "-o", out, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    char *text = test_read_file(out, NULL);
    cr_expect(strstr(text, "\ntime,q:a,q:b\n0,1,2\n0.5,3,4\n"), "%s", text);
    free(text);
    free(csv), free(out), free(dir);
}

Test(cli_inputs_hostile, help_and_lfs_pointer)
{
    cli_result r = run((const char *[]){"info", "--help", NULL});
    cr_expect(strstr(r.out, "over their total length"), "info --help says what the rate is: %s", r.out);
    cli_result_free(&r);
    char *dir = test_tmpdir(), *lfs = test_path(dir, "log.mat");
    test_write_file(lfs, "version https://git-lfs.github.com/spec/v1\n"
                         "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 9\n");
    r = run((const char *[]){"info", lfs, NULL});
    EXPECT_FAILURE(&r, CLI_EXIT_INPUT, lfs, "this is a Git LFS pointer, not the log: fetch it with git lfs pull");
    cli_result_free(&r);
    free(lfs), free(dir);
}
