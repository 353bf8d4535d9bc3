/* roboest closed-loop: the simulator's torque loop with each configuration's estimator inside it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "roboest/estimators.h"
#include "roboest/experiments.h"

static const char *const CLOSED_LOOP_HELP =
    "Usage: roboest closed-loop CONFIG.json [-o DIR] [--threads N] [--force] [-q]\n"
    "\n"
    "The joint-torque paper's closed-loop experiment (its Tables I and II): simulates the config's\n"
    "scenario (controller kind \"torque\", CoM balancing, pushes) once per configuration and seed,\n"
    "with the configuration's estimator pipeline stepped inside the control loop at every step: the\n"
    "low-level torque controller gets its torque feedback (PI on tau_ref - tau_hat) and its friction\n"
    "compensation (tau_F_hat added to the motor torque) from the pipeline's signals named in the\n"
    "config, one control period late as on a robot; without feedback the loop is feedforward. A\n"
    "configuration's \"inertia\" signal (e.g. inertial_ekf's rate-limited pi) sets inertial parameters\n"
    "of the controller's model the same way (seed 001's adaptation).\n"
    "Scores, against the simulator's truth: torque tracking (tau_j against the desired tau_ref: MSE,\n"
    "RMSE, MAE, max |e|, mean |tau_j|), the CoM error per axis before the disturbances and over the\n"
    "whole run (mean and max), and the estimate's own error; and the tracking as a robot without\n"
    "joint torque sensors measures it (the paper's reading): the fed-back estimate tau_hat against\n"
    "tau_ref, beside the paper's Table II. A run whose CoM leaves the reference by\n"
    "more than max_com_error, or whose simulation or estimator fails numerically, is reported as\n"
    "diverged (with when and why) and scored up to there. Writes into DIR:\n"
    "  report.md          Table I (CoM mean/max error [x, y, z], mm) and Table II (tracking) in the\n"
    "                     paper's layout, the estimation error, the whole-run CoM error, every run's status\n"
    "  torque.{md,json,csv}, torque_loop.*, com_before.*, com_all.*, estimation.*  per joint /\n"
    "                     axis, mean, sd and\n"
    "                     bootstrap interval over the seeds (roboest check reads the .json)\n"
    "  task.{md,json,csv}  with a \"task\": one logged element against its reference (e.g. the elbow\n"
    "                     angle), with a publication's values beside ours (\"published\")\n"
    "  rmse_box.svg, magnitude_box.svg  tracking RMSE and mean |tau_j| per configuration (a box over\n"
    "                     every seed and joint), com_y.svg  the CoM y of every configuration (pushes shaded)\n"
    "and prints report.md on stdout. Either every file appears or none does; the bytes do not depend\n"
    "on the number of threads.\n"
    "With \"mismatch_levels\" (levels of the scenario's plant-model \"mismatch\") or\n"
    "\"disturbance_scales\" (factors on every push's force) the experiment runs at every level x scale:\n"
    "  stability.md       per configuration and point: diverged runs of the seeds, earliest divergence\n"
    "                     (s); the torque RMSE and Table II's ratios (RNEA / UKF-PINN, UKF / UKF-PINN,\n"
    "                     RNEA-PINN / RNEA) against the level, beside the paper's; both readings\n"
    "  stability.json     the same for roboest check (statistics diverged, diverged_fraction, rmse,\n"
    "                     ratio; joints the points level_<l>_scale_<s>)\n"
    "  sensitivity.svg    the ratios against the mismatch level (two levels or more)\n"
    "The other files show the scenario's own level (the last level when unlisted) at scale 1.\n"
    "\n"
    "  -o, --output DIR   output folder (default: .)\n"
    "  --threads N        worker threads (default: the config's \"threads\", else one per core)\n"
    "  --force            overwrite existing outputs\n"
    "  -q, --quiet        no progress line (it is shown only when stderr is a terminal)\n"
    "  -h, --help         this help\n"
    "\n"
    "Config keys are documented in configs/README.md (\"Closed loop\").\n"
    "\n" CLI_EXIT_CODES_HELP;

int cmd_closed_loop(int argc, char **argv)
{
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'}, {"threads", required_argument, NULL, 't'},
        {"force", no_argument, NULL, 'F'},        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    const char *out_dir = ".";
    bool force = false, quiet = false;
    rb_closed_loop_opts opts = {0};
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":o:qh", options, NULL)) != -1) {
        switch (opt) {
        case 'o': out_dir = optarg; break;
        case 't':
            if (!cli_parse_threads(optarg, &opts.threads))
                return cli_usage_error("closed-loop", "--threads needs a whole number from 1 to 1024, not '%s'",
                                       optarg);
            break;
        case 'F': force = true; break;
        case 'q': quiet = true; break;
        case 'h': fputs(CLOSED_LOOP_HELP, stdout); return CLI_EXIT_OK;
        case ':': return cli_usage_error("closed-loop", "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("closed-loop", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error("closed-loop", "missing CONFIG.json");
    if (optind + 1 < argc)
        return cli_usage_error("closed-loop", "unexpected argument '%s'", argv[optind + 1]);

    rb_err err;
    rb_registry *reg = NULL;
    rb_closed_loop *cl = NULL;
    rb_closed_loop_result *res = NULL;
    cli_runs progress;
    cli_runs_init(&progress, "closed-loop", quiet);
    opts.progress = cli_runs_update;
    opts.user = &progress;
    int rc = rb_registry_new(&reg, &err);
    if (rc == RB_OK)
        rc = rb_estimators_register(reg, &err);
    if (rc == RB_OK)
        rc = rb_closed_loop_load(argv[optind], reg, &cl, &err);
    if (rc == RB_OK)
        rc = rb_closed_loop_sweep(cl, &opts, &res, &err);
    cli_runs_done(&progress);
    if (rc == RB_OK)
        rc = rb_closed_loop_write(cl, res, out_dir, force, &err);
    if (rc == RB_OK) {
        char *md = NULL;
        rc = rb_closed_loop_markdown(cl, res, &md, &err);
        if (rc == RB_OK)
            fputs(md, stdout);
        rb_free(md);
    }
    rb_closed_loop_result_free(res);
    rb_closed_loop_free(cl);
    rb_registry_free(reg);
    return rc == RB_OK ? CLI_EXIT_OK : cli_fail(&err);
}
