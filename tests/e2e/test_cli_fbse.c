/* `roboest run` with the fbse_friction stage (seed 003 ch. 4) on the shipped walk datasets/walk_friction.mat through
 * the reproduction's pipelines (configs/fbse): the run, its outputs and counts; and the refusals, each one line, exit
 * 3, no output file: a phase out of range, a missing input, nonslip without the attitude, K of the wrong length, a
 * foot that is not a frame. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define PIPE RB_SOURCE "/configs/fbse/nonslip.json"

/* configs/fbse/nonslip.json with its relative paths made absolute and each (from, to) replacement made once. */
static char *pipeline(const char *dir, const char *name, const char *const *edits, size_t n_edits)
{
    char *text = test_read_file(PIPE, NULL);
    cr_assert(text, "cannot read %s", PIPE);
    const char *const fixed[] = {"\"../../datasets/", "\"" RB_SOURCE "/datasets/"};
    for (size_t e = 0; e <= n_edits; e++) {
        const char *from = e == 0 ? fixed[0] : edits[2 * (e - 1)], *to = e == 0 ? fixed[1] : edits[2 * (e - 1) + 1];
        for (;;) {
            char *at = strstr(text, from);
            if (!at) {
                cr_assert(e == 0 || at || strstr(text, to), "edit '%s' not found in %s", from, PIPE);
                break;
            }
            size_t lf = strlen(from), lt = strlen(to), len = strlen(text);
            char *next = malloc(len - lf + lt + 1);
            size_t off = (size_t)(at - text);
            memcpy(next, text, off), memcpy(next + off, to, lt), strcpy(next + off + lt, at + lf);
            free(text);
            text = next;
            if (e > 0)
                break;
        }
    }
    char *path = test_path(dir, name);
    test_write_file(path, text);
    free(text);
    return path;
}

static void refused(const char *name, const char *const *edits, size_t n_edits, const char *expect)
{
    char *dir = test_tmpdir(), *p = pipeline(dir, "p.json", edits, n_edits), *out = test_path(dir, "out");
    const char *args[] = {"run", p, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "%s: exit %d: %s", name, r.status, r.err);
    cr_expect(strstr(r.err, expect), "%s: stderr does not say '%s': %s", name, expect, r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "%s: one line: %s", name, r.err);
    char *csv = test_path(out, "fbse.csv");
    cr_expect(!test_exists(csv), "%s: an output was left", name);
    free(csv);
    cli_result_free(&r);
    free(p), free(out), free(dir);
}

Test(cli_fbse, nonslip_pipeline_runs_on_the_walk)
{
    char *dir = test_tmpdir(), *p = pipeline(dir, "p.json", NULL, 0), *out = test_path(dir, "out");
    const char *args[] = {"run", p, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, CLI_EXIT_OK, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "stage fbse: RLS updates"), "%s", r.err);
    cr_expect(strstr(r.err, "singular constraint (no update) 0 (left) and 0 (right)"), "%s", r.err);
    char *csv = test_path(out, "fbse.csv");
    size_t len = 0;
    char *text = test_read_file(csv, &len);
    cr_assert(text, "no %s", csv);
    cr_expect(strstr(text, "coulomb:l_knee [N m]"), "the outputs are named after the leg joints");
    cr_expect(strstr(text, "swing_rmse:r_hip_roll [N m]"));
    int rows = -1; /* the column header, then the rows; provenance lines start with '#' */
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        rows += *line != '#';
    cr_expect_eq(rows, 10601, "a row per sample of the 10.6 s walk at 1 kHz");
    free(text), free(csv);
    cli_result_free(&r);
    free(p), free(out), free(dir);
}

Test(cli_fbse, stages_lists_it)
{
    const char *args[] = {"stages", NULL};
    cli_result r = cli_run(NULL, args);
    cr_expect_eq(r.status, CLI_EXIT_OK);
    cr_expect(strstr(r.out, "fbse_friction"), "%s", r.out);
    cr_expect(strstr(r.out, "base_angular_acc"), "%s", r.out);
    cli_result_free(&r);
}

Test(cli_fbse, phase_out_of_range)
{
    /* the gait's phase 1 and 2 read as 3 and 6 */
    const char *e[] = {"\"phase\": {\n   \"channel\": \"truth/gait/phase\",",
                       "\"phase\": {\n   \"channel\": \"truth/gait/phase\", \"scale\": 3, \"unit\": \"n.d.\","};
    refused("phase", e, 1, "phase 3 is not 0 (double support), 1 (left) or 2 (right)");
}

Test(cli_fbse, missing_input)
{
    const char *e[] = {"\"tau\": \"tau_m\",", ""};
    refused("tau", e, 1, "tau");
}

Test(cli_fbse, nonslip_without_attitude)
{
    const char *e[] = {"\"orientation\": \"rpy\",", ""};
    refused("orientation", e, 1, "needs the orientation input");
}

Test(cli_fbse, filter_constants_of_the_wrong_length)
{
    const char *e[] = {"\"method\": \"nonslip\",", "\"method\": \"nonslip\", \"K\": [1, 2, 3],"};
    refused("K", e, 1, "K has 3 values");
}

Test(cli_fbse, foot_not_in_the_model)
{
    const char *e[] = {"\"l_sole\"", "\"l_sol\""};
    refused("feet", e, 1, "l_sol");
}
