/* End-to-end, issue 18: the first robot's friction network and noise carried to the other robots of datasets/
 * (configs/paper/suite_other_robots.json), gated by configs/paper/rules_other_robots.txt: with the online friction
 * correction the UKF beats the RNEA and the UKF without friction measurement on every other robot, and stays within
 * 5 % of the uncorrected UKF-PINN on the robot the network was trained on. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define PAPER RB_SOURCE "/configs/paper"

Test(paper_other_robots, the_corrected_network_beats_rnea_and_no_friction_on_every_robot)
{
    test_deadline(180);
    cr_assert(test_exists(RB_SOURCE "/datasets/other_robot_lugre.mat"),
              "datasets/other_robot_lugre.mat is missing: run scripts/make-datasets.sh");
    char *dir = test_tmpdir(), *out = test_path(dir, "other");
    cli_result r = cli_run(NULL, (const char *[]){"compare", PAPER "/suite_other_robots.json", "-o", out, "-q", NULL});
    cr_assert_eq(r.status, 0, "compare: %s", r.err);
    /* the true constants raise no motor-constant warning on any of these robots */
    cr_assert_null(strstr(r.err, "gear_ratio"), "%s", r.err);
    cli_result_free(&r);
    char *report = test_path(out, "report.json");
    r = cli_run(NULL, (const char *[]){"check", report, PAPER "/rules_other_robots.txt", NULL});
    cr_assert_eq(r.status, 0, "the rules do not hold:\n%s%s", r.out, r.err);
    cr_assert(strstr(r.out, "rules: 18 hold, 0 fail"), "%s", r.out);
    cli_result_free(&r);
    /* the gate is real: without the correction the network loses to the UKF without friction on a robot whose
     * friction differs (the scaled one: 0.5x-2x per joint) */
    r = cli_run(NULL, (const char *[]){"check", report, "--rule",
                                       "ukf_pinn.rmse.other_robot_scaled < ukf_nofric.rmse.other_robot_scaled", NULL});
    cr_assert_eq(r.status, 6, "%s%s", r.out, r.err);
    cli_result_free(&r);
    free(report), free(out), free(dir);
}
