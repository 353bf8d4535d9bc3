/* roboest: command-line front end. One file per subcommand; no numerics here. */
#include <cblas.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "roboest/io.h"

static const char *const MAIN_HELP =
    "Usage: roboest [--help] [--version] COMMAND [ARGS...]\n"
    "\n"
    "Replays robot logs through estimator pipelines and reports their errors.\n"
    "\n"
    "Commands:\n"
    "  info LOG            channels, element names, units, rate, duration, gaps, NaN counts\n"
    "  convert LOG -o OUT  any supported log format to any other (.h5, .mat, .csv)\n"
    "  run PIPELINE.json   run a pipeline on its logs (or the LOGs given) and write estimates\n"
    "                      and metric reports\n"
    "  stages              list the stage types a pipeline can use, with their parameters\n"
    "  model info URDF     the model roboest computes on: bodies, joints, frames, sensors, mass\n"
    "  model eval URDF     kinematics and dynamics (RNEA, mass matrix, ABA, ...) for a file of states\n"
    "  compare SUITE.json  run every estimator variant on every log, write the error table (Markdown,\n"
    "                      JSON, CSV) with bootstrap intervals and SVG figures\n"
    "  check REPORT.json RULES\n"
    "                      check rules such as 'ukf.rmse < rnea.rmse' on a compare report (CI gate,\n"
    "                      JUnit XML)\n"
    "  simulate SCENARIO.json -o LOG\n"
    "                      simulate a robot: its log (robot-logger layout) and the noise-free truth\n"
    "  tune kf-derivative LOG --channel NAME\n"
    "                      choose the kf_derivative stage's process noise on a log\n"
    "  tune ukf-torque LOG --pipeline P.json\n"
    "                      the ukf_torque stage's variances from the log alone (no truth)\n"
    "  import-rde DIR -o PIPELINE.json\n"
    "                      the public UKF joint-torque estimator's .ini configuration as a pipeline\n"
    "  train-friction SPEC.json -o NET.json\n"
    "                      train the friction network (friction_pinn stage) on logs; with\n"
    "                      --fit-analytic, least-squares friction_model parameters\n"
    "  closed-loop CONFIG.json\n"
    "                      the simulator's torque loop with estimators inside it (torque feedback,\n"
    "                      friction compensation): tracking and CoM tables, the paper's Tables I, II\n"
    "  validate-thrust CONFIG.json\n"
    "                      thrust estimates against weighing scales (seed 004, V-B): E_T per variant,\n"
    "                      the scales' temperature drift, the 35 N / 7 % acceptance\n"
    "  slip-thresholds LOG -p PIPELINE.json\n"
    "                      the friction thresholds a slip_predictor stage learns on one walk, as the\n"
    "                      JSON its thresholds_file reads (seed 003 ch. 5: learn on one, predict on another)\n"
    "\n"
    "Logs are read by content: robot-logger MATLAB v7.3 and v5/v7 files, plain .mat/.h5 files of\n"
    "named matrices with a time vector, roboest .h5 files, and CSV with a header row. HDF5-based\n"
    "files (v7.3, .h5) are read in a child process: a file that crashes the HDF5 library is an input\n"
    "error (exit 3).\n"
    "'roboest COMMAND --help' describes each command.\n"
    "\n" CLI_EXIT_CODES_HELP;

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
};

static const struct command COMMANDS[] = {{"info", cmd_info},
                                          {"convert", cmd_convert},
                                          {"run", cmd_run},
                                          {"stages", cmd_stages},
                                          {"model", cmd_model},
                                          {"tune", cmd_tune},
                                          {"simulate", cmd_simulate},
                                          {"import-rde", cmd_import_rde},
                                          {"compare", cmd_compare},
                                          {"check", cmd_check},
                                          {"train-friction", cmd_train_friction},
                                          {"closed-loop", cmd_closed_loop},
                                          {"validate-thrust", cmd_validate_thrust},
                                          {"calibrate-ft", cmd_calibrate_ft},
                                          {"slip-thresholds", cmd_slip_thresholds}};

int main(int argc, char **argv)
{
    /* The per-sample factorizations are small (n <= ~100): OpenBLAS's threads cost more than they gain
     * there (dpotrf at n = 90: 19 us on one thread, 55 us on two, measured by make bench-filters) and its
     * threaded level-3 code allocates on every call. Parallelism belongs across logs, not inside a step. */
    openblas_set_num_threads(1);
    cli_guard_outputs();
    /* libhdf5 1.10 can crash on a corrupt file: read HDF5-based files in a child process, so that a
     * corrupt file is an input error (exit 3), never a crash. */
    rb_io_set_hdf5_isolation(true);
    if (argc < 2)
        return cli_usage_error(NULL, "missing command");
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(MAIN_HELP, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("roboest %s\n", RB_VERSION);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (strcmp(cmd, COMMANDS[i].name) == 0)
            return COMMANDS[i].run(argc - 1, argv + 1);
    return cli_usage_error(NULL, "unknown command '%s'", cmd);
}
