/* roboest calibrate-ft: seed 002's in-situ calibration of a six-axis FT sensor from static poses. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "roboest/experiments.h"

static const char *const CALIBRATE_FT_HELP =
    "Usage: roboest calibrate-ft CONFIG.json [-o DIR] [--force] [-q]\n"
    "\n"
    "In-situ calibration of a six-axis force/torque sensor (seed 002, the CoDyCo slides; Traversaro et al.,\n"
    "ICRA 2015): a rigid body hangs on the sensor in static poses, an accelerometer on it gives gravity in the\n"
    "sensor frame, data sets with known added masses fix the scale. Model w = C (r + o) (\"convention\":\n"
    "\"plus\", the slides') or w = C (r - o) (\"minus\"): r the raw reading, o the offset, C 6 x 6, w the wrench\n"
    "in the model's FT convention (the reading frame, moment about its origin). Static poses: the gyroscope\n"
    "below gyro_max and the accelerometer's spread below acc_std_max over a window. Step 1: the offset (and\n"
    "K_j = C^-1 M(c_j) per data set) by linear least squares, or from the ellipsoid the raw readings lie on;\n"
    "step 2: C, the body's mass and centre of mass by a second least squares. Every k-th pose (holdout) is\n"
    "kept out and checked: its calibrated force norm against m g. Writes into DIR:\n"
    "  calibration.json  C, o, the body's m and c (sensor frame), residuals, condition numbers, samples\n"
    "                    used, per data set the ellipsoid and the held-out check, the truth errors when the\n"
    "                    config names the simulated sensor's scenario, provenance\n"
    "  report.md         the same as tables: the ellipsoid residual, the raw covariance's eigenvalues (three\n"
    "                    large, three at the noise level), the held-out check, the errors against the truth\n"
    "and prints report.md on stdout. Either both files appear or none does.\n"
    "\n"
    "  -o, --output DIR   output folder (default: .)\n"
    "  --force            overwrite existing outputs\n"
    "  -q, --quiet        accepted for symmetry (nothing is drawn)\n"
    "  -h, --help         this help\n"
    "\n"
    "Config keys: configs/README.md (\"FT sensor calibration\"). Rank problems are input errors (exit 3) that\n"
    "name what to add: a data set whose gravity directions span fewer than three dimensions (or lie on one\n"
    "circle), fewer than two different added masses (the scale of C), added loads on one line (one wrench\n"
    "direction never excited); so are a missing channel and a data set without a static pose.\n"
    "\n" CLI_EXIT_CODES_HELP;

int cmd_calibrate_ft(int argc, char **argv)
{
    cli_config_args a;
    int ex = cli_parse_config_args(argc, argv, "calibrate-ft", CALIBRATE_FT_HELP, &a);
    if (ex >= 0)
        return ex;

    rb_err err;
    rb_ftcal_config *cfg = NULL;
    rb_ftcal_result *res = NULL;
    char *md = NULL;
    int rc = rb_ftcal_load(a.config, &cfg, &err);
    if (rc == RB_OK)
        rc = rb_ftcal_run(cfg, NULL, &res, &err);
    if (rc == RB_OK)
        rc = rb_ftcal_markdown(cfg, res, &md, &err);
    if (rc == RB_OK)
        rc = rb_ftcal_write(cfg, res, a.out_dir, a.force, &err);
    if (rc == RB_OK)
        fputs(md, stdout);
    rb_free(md);
    rb_ftcal_result_free(res);
    rb_ftcal_config_free(cfg);
    return rc == RB_OK ? CLI_EXIT_OK : cli_fail(&err);
}
