/* roboest validate-thrust: seed 004's scale validation of thrust estimates (section V-B). */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "roboest/estimators.h"
#include "roboest/experiments.h"

static const char *const VALIDATE_THRUST_HELP =
    "Usage: roboest validate-thrust CONFIG.json [-o DIR] [--force] [-q]\n"
    "\n"
    "The thrust paper's scale validation (seed 004, section V-B): a jet humanoid stands on weighing\n"
    "scales while its jets thrust. Each variant's pipeline gives the vertical support the feet should\n"
    "carry, W_jets . e3 = (m g e3 - A(q) T) . e3 (N); the scales measure it:\n"
    "  E_T(t) = g (W_scales(t) - alpha (T(t) - T_0)) - support(t)\n"
    "with the scales' temperature drift alpha = (W(t_f) - W(t_0)) / (T(t_f) - T(t_0)) from the mean\n"
    "readings and temperatures over the jets-off windows at the start and the end (every throttle\n"
    "must be off there). E_T is computed on each pipeline's clock (the scales and the temperature\n"
    "resampled onto it). Acceptance: max |E_T| < min(bound.N, bound.percent % of m g) (the paper: 35 N,\n"
    "7 %). Writes into DIR:\n"
    "  report.md    alpha and its windows, the bound and which side binds, per variant max |E_T| (N and\n"
    "               % of m g), RMS, mean, the same over the ramp, RMS of d(support)/dt (smoothness),\n"
    "               pass or FAIL\n"
    "  report.json  a comparison report for 'roboest check' (joints E_T, E_T_ramp, E_T_percent,\n"
    "               d_support; statistics max_abs rmse mae mean_est; \"all\" is E_T), plus a\n"
    "               \"validation\" object; e.g. rule 'combined.max_abs[E_T] < 28.4'\n"
    "  E_T.svg, support.svg, E_T_<variant>.svg  E_T of every variant, the supports against the\n"
    "               corrected scales (the paper's Figs. 6-7), E_T of each variant; the ramp shaded\n"
    "and prints report.md on stdout. Either every file appears or none does.\n"
    "\n"
    "  -o, --output DIR   output folder (default: .)\n"
    "  --force            overwrite existing outputs\n"
    "  -q, --quiet        no progress line (it is shown only when stderr is a terminal)\n"
    "  -h, --help         this help\n"
    "\n"
    "Config keys are documented in configs/README.md (\"Thrust validation on scales\"). A throttle on\n"
    "inside a jets-off window, no temperature change between them, a missing channel, a window outside\n"
    "the log or a failing pipeline is an input error (exit 3) and nothing is written.\n"
    "\n" CLI_EXIT_CODES_HELP;

int cmd_validate_thrust(int argc, char **argv)
{
    cli_config_args a;
    int ex = cli_parse_config_args(argc, argv, "validate-thrust", VALIDATE_THRUST_HELP, &a);
    if (ex >= 0)
        return ex;

    rb_err err;
    rb_registry *reg = NULL;
    rb_thrust_validation *tv = NULL;
    rb_thrust_result *res = NULL;
    cli_runs progress;
    cli_runs_init(&progress, "validate-thrust", a.quiet);
    rb_thrust_opts opts = {0, cli_runs_update, &progress};
    int rc = rb_registry_new(&reg, &err);
    if (rc == RB_OK)
        rc = rb_estimators_register(reg, &err);
    if (rc == RB_OK)
        rc = rb_thrust_validation_load(a.config, reg, &tv, &err);
    if (rc == RB_OK)
        rc = rb_thrust_validation_run(tv, NULL, &opts, &res, &err);
    cli_runs_done(&progress);
    for (size_t i = 0; res && i < res->n_warnings; i++)
        fprintf(stderr, "roboest: warning: %s\n", res->warnings[i]);
    if (rc == RB_OK)
        rc = rb_thrust_validation_write(tv, res, a.out_dir, a.force, &err);
    if (rc == RB_OK) {
        char *md = NULL;
        rc = rb_thrust_validation_markdown(tv, res, &md, &err);
        if (rc == RB_OK)
            fputs(md, stdout);
        rb_free(md);
    }
    rb_thrust_result_free(res);
    rb_thrust_validation_free(tv);
    rb_registry_free(reg);
    return rc == RB_OK ? CLI_EXIT_OK : cli_fail(&err);
}
