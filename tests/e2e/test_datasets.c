/* The simulated logs shipped in datasets/: scripts/make-datasets.sh makes them again byte for byte, and
 * datasets/SHA256SUMS lists exactly them with their checksums. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/core.h"

Test(datasets, regenerate_byte_for_byte_with_the_listed_checksums)
{
    test_deadline(600);
    char *dir = test_tmpdir();
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && ROBOEST='%s/roboest' scripts/make-datasets.sh '%s' >/dev/null 2>&1",
             RB_SOURCE, RB_BUILD, dir);
    cr_assert_eq(system(cmd), 0, "scripts/make-datasets.sh runs");

    char *sums_path = test_path(dir, "SHA256SUMS");
    size_t n_sums, n_shipped_sums;
    char *sums = test_read_file(sums_path, &n_sums);
    char *shipped_sums = test_read_file(RB_SOURCE "/datasets/SHA256SUMS", &n_shipped_sums);
    cr_assert_not_null(sums);
    cr_assert_not_null(shipped_sums, "datasets/SHA256SUMS is shipped");
    cr_expect(n_sums == n_shipped_sums && memcmp(sums, shipped_sums, n_sums) == 0,
              "the fresh checksums are the shipped ones:\n%s\nvs\n%s", sums, shipped_sums);

    /* Every listed file: the shipped bytes have the listed checksum (so a stale file is caught too). */
    int files = 0;
    for (char *line = strtok(shipped_sums, "\n"); line; line = strtok(NULL, "\n")) {
        char hex[65], name[256];
        cr_assert_eq(sscanf(line, "%64s %255s", hex, name), 2, "%s", line);
        char *shipped = test_path(RB_SOURCE "/datasets", name);
        char actual[65];
        rb_err err;
        cr_assert_eq(rb_sha256_file(shipped, actual, &err), RB_OK, "%s", err.msg);
        cr_expect_str_eq(actual, hex, "datasets/%s matches SHA256SUMS", name);
        cr_expect_lt(test_file_size(shipped), 8u << 20, "datasets/%s stays a few MB", name);
        free(shipped);
        files++;
    }
    /* the joint-torque paper's six, seed 001's five, seed 004's three, seed 003's eight, seed 002's three */
    cr_expect_eq(files, 31, "thirty-one simulated logs");
    free(sums), free(shipped_sums), free(sums_path), free(dir);
}
