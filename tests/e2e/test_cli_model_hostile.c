/* End-to-end: roboest model info / eval on hostile input. Devices and oversized files are refused before they
 * are read; a states file must fit the model (base arrays only with --floating) and hold finite numbers; every
 * failure is one line with its documented exit code and leaves no output. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define ARM RB_SOURCE "/datasets/arm_2ft.urdf" /* 4 joints */

/* N states of q, dq, ddq for the arm (4 joints), `extra` columns appended to the header with value 0.25;
 * the value of column `bad_col` in row `bad_row` replaced by `bad` (bad NULL: none). */
static void write_states(const char *path, size_t N, const char *extra, size_t n_extra, size_t bad_row, size_t bad_col,
                         const char *bad)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    const char *names[] = {"q", "dq", "ddq"};
    for (int a = 0; a < 3; a++)
        for (int j = 0; j < 4; j++)
            fprintf(f, "%s%s:%d", a + j ? "," : "", names[a], j);
    fprintf(f, "%s%s\n", extra ? "," : "", extra ? extra : "");
    for (size_t i = 0; i < N; i++) {
        for (size_t k = 0; k < 12 + n_extra; k++) {
            if (k)
                fputc(',', f);
            if (bad && i == bad_row && k == bad_col)
                fputs(bad, f);
            else
                fprintf(f, "%.17g", k < 12 ? 0.1 * (double)(k + i) - 0.5 : 0.25);
        }
        fputc('\n', f);
    }
    fclose(f);
}

static void expect_failure(const char *const *args, int status, const char *needle1, const char *needle2,
                           const char *out)
{
    cli_result r = cli_run(NULL, args);
    cr_expect_eq(r.status, status, "exit %d, stderr: %s", r.status, r.err);
    cr_expect(strstr(r.err, needle1) && (!needle2 || strstr(r.err, needle2)), "'%s', '%s' in: %s", needle1,
              needle2 ? needle2 : "", r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "one line: %s", r.err);
    cr_expect(!out || !test_exists(out), "no output on error");
    cli_result_free(&r);
}

Test(cli_model_hostile, devices_and_oversized_urdfs_are_refused)
{
    test_deadline(30);
    expect_failure((const char *[]){"model", "info", "/dev/zero", NULL}, CLI_EXIT_INPUT, "/dev/zero",
                   "not a regular file", NULL);
    expect_failure((const char *[]){"model", "info", "/dev/urandom", NULL}, CLI_EXIT_INPUT, "/dev/urandom",
                   "not a regular file", NULL);
    char *dir = test_tmpdir(), *big = test_path(dir, "big.urdf");
    test_write_file(big, "<robot name='r'><link name='a'/></robot>\n");
    cr_assert_eq(truncate(big, ((off_t)64 << 20) + 1), 0);
    expect_failure((const char *[]){"model", "info", big, NULL}, CLI_EXIT_INPUT, "big.urdf", "larger than 64 MiB",
                   NULL);
    unlink(big);
    free(big), free(dir);
}

Test(cli_model_hostile, control_characters_in_names_are_refused)
{
    char *dir = test_tmpdir(), *urdf = test_path(dir, "nl.urdf");
    test_write_file(urdf, "<robot name='r'>\n<link name='a&#10;b'/>\n</robot>\n");
    expect_failure((const char *[]){"model", "info", urdf, NULL}, CLI_EXIT_INPUT, "nl.urdf:2: link",
                   "\"a\\x0ab\" holds a control character", NULL);
    free(urdf), free(dir);
}

/* Base arrays in the states of a fixed-base model were ignored: the results were fixed-base ones. */
Test(cli_model_hostile, base_arrays_without_floating_are_refused)
{
    char *dir = test_tmpdir(), *states = test_path(dir, "s.csv"), *out = test_path(dir, "o.csv");
    const char *base[] = {"base_pose", "base_twist", "base_acc"};
    for (int b = 0; b < 3; b++) {
        char extra[256] = "";
        for (int j = 0; j < (b ? 6 : 7); j++)
            snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "%s%s:%d", j ? "," : "", base[b], j);
        write_states(states, 3, extra, b ? 6 : 7, 0, 0, NULL);
        expect_failure((const char *[]){"model", "eval", ARM, "--op", "gravity", "--states", states, "-o", out, NULL},
                       CLI_EXIT_INPUT, base[b], "--floating", out);
    }
    write_states(states, 3, NULL, 0, 0, 0, NULL);
    cli_result r =
        cli_run(NULL, (const char *[]){"model", "eval", ARM, "--op", "gravity", "--states", states, "-o", out, NULL});
    cr_expect_eq(r.status, CLI_EXIT_OK, "without base arrays: %s", r.err);
    cli_result_free(&r);
    unlink(out);
    free(states), free(out), free(dir);
}

/* Non-finite states went through to NaN results with exit 0: now exit 4 naming the array, state and joint. */
Test(cli_model_hostile, non_finite_states_are_numeric_failures)
{
    char *dir = test_tmpdir(), *states = test_path(dir, "s.csv"), *out = test_path(dir, "o.h5");
    write_states(states, 4, NULL, 0, 2, 1, "nan");
    expect_failure((const char *[]){"model", "eval", ARM, "--op", "mass-matrix", "--states", states, "-o", out, NULL},
                   CLI_EXIT_NUMERIC, "s.csv: q: state 2", "is nan", out);
    write_states(states, 4, NULL, 0, 3, 4 + 3, "-inf");
    expect_failure((const char *[]){"model", "eval", ARM, "--op", "rnea", "--states", states, "-o", out, NULL},
                   CLI_EXIT_NUMERIC, "s.csv: dq: state 3", "is -inf", out);
    /* an array the op does not read may hold anything (mass-matrix reads q only) */
    write_states(states, 4, NULL, 0, 1, 8, "nan");
    cli_result r = cli_run(
        NULL, (const char *[]){"model", "eval", ARM, "--op", "mass-matrix", "--states", states, "-o", out, NULL});
    cr_expect_eq(r.status, CLI_EXIT_OK, "ddq is not read by mass-matrix: %s", r.err);
    cli_result_free(&r);
    unlink(out);
    free(states), free(out), free(dir);
}
