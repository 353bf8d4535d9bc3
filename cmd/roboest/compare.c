/* roboest compare: every estimator variant on every log, the error table and the figures. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "roboest/estimators.h"
#include "roboest/experiments.h"

static const char *const COMPARE_HELP =
    "Usage: roboest compare SUITE.json [-o DIR] [--threads N] [--force] [-q]\n"
    "\n"
    "Runs every (variant, log) pair of the suite on all cores: each variant is a pipeline and the\n"
    "signal in it that holds the estimate; each estimate is scored against the suite's reference\n"
    "channel of the log (resampled onto the run's clock), per joint and over all joints. The\n"
    "reference may be kept in a separate truth file per log: \"reference_log\":\n"
    "\"{log_dir}/{log_stem}_truth.h5\" (aligned by time; samples it does not cover are not scored and\n"
    "counted in a warning; configs/README.md, \"Reference logs\"). Writes into DIR:\n"
    "  report.md, report.json, report.csv  MSE, RMSE, MAE (or the suite's \"statistics\") per variant,\n"
    "      over all joints and per joint: mean and standard deviation across logs with a percentile-\n"
    "      bootstrap interval of the mean (logs resampled with replacement; one log: no spread).\n"
    "      Statistics: mse rmse mae max_abs mean_abs_est mean_abs_ref (errors), min_est max_est\n"
    "      mean_est count_zero_est (the estimate alone, e.g. a 0/1 flag), rise_time step_delay\n"
    "      steps_unsettled (the suite's \"steps\"), event_peak event_max (its \"events\"); the\n"
    "      suite's \"published\" values appear beside ours (\"Published beside ours\", ratio ours/paper)\n"
    "  rmse_box.svg       RMSE per variant, a box over every (log, joint)\n"
    "  magnitude_box.svg  mean |estimate| per variant and mean |reference|, a box over every (log, joint)\n"
    "  trace_<log>_<joint>_<i>.svg  the suite's figures.traces: estimates against the reference, with\n"
    "      the contact channel's active stretches shaded\n"
    "and prints the Markdown table on stdout. Either every file appears or none does; the bytes do not\n"
    "depend on the number of threads. Warnings (gaps, held samples) go to stderr.\n"
    "\n"
    "  -o, --output DIR   output folder (default: the suite's \"outputs\", else .)\n"
    "  --threads N        worker threads (default: the suite's \"threads\", else one per core)\n"
    "  --force            overwrite existing outputs\n"
    "  -q, --quiet        no progress line (it is shown only when stderr is a terminal)\n"
    "  -h, --help         this help\n"
    "\n"
    "Suite keys are documented in configs/README.md. Gate a CI job on the report with\n"
    "'roboest check DIR/report.json RULES'. Windows are [t0, t1] (absolute s) or {\"from_start\":\n"
    "[t0, t1]} (s after each log's first sample); without one, every variant of a log skips the\n"
    "largest start-up of the variants' stages (the suite's \"settle\"; the report's provenance\n"
    "\"log <name>: window\" says what was excluded).\n"
    "\n" CLI_EXIT_CODES_HELP;

int cmd_compare(int argc, char **argv)
{
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'}, {"threads", required_argument, NULL, 't'},
        {"force", no_argument, NULL, 'F'},        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    const char *out_dir = NULL;
    bool force = false, quiet = false;
    rb_suite_opts opts = {0};
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":o:qh", options, NULL)) != -1) {
        switch (opt) {
        case 'o': out_dir = optarg; break;
        case 't':
            if (!cli_parse_threads(optarg, &opts.threads))
                return cli_usage_error("compare", "--threads needs a whole number from 1 to 1024, not '%s'", optarg);
            break;
        case 'F': force = true; break;
        case 'q': quiet = true; break;
        case 'h': fputs(COMPARE_HELP, stdout); return CLI_EXIT_OK;
        case ':': return cli_usage_error("compare", "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("compare", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error("compare", "missing SUITE.json");
    if (optind + 1 < argc)
        return cli_usage_error("compare", "unexpected argument '%s'", argv[optind + 1]);
    const char *suite_path = argv[optind];

    rb_err err;
    rb_registry *reg = NULL;
    rb_suite *suite = NULL;
    rb_suite_result *res = NULL;
    cli_runs progress;
    cli_runs_init(&progress, "compare", quiet);
    opts.progress = cli_runs_update;
    opts.user = &progress;
    int rc = rb_registry_new(&reg, &err);
    if (rc == RB_OK)
        rc = rb_estimators_register(reg, &err);
    if (rc == RB_OK)
        rc = rb_suite_load(suite_path, reg, &suite, &err);
    if (rc == RB_OK)
        rc = rb_suite_run(suite, &opts, &res, &err);
    cli_runs_done(&progress);
    for (size_t i = 0; res && i < res->n_warnings; i++)
        fprintf(stderr, "roboest: warning: %s\n", res->warnings[i]);
    if (rc == RB_OK)
        rc = rb_suite_result_write(res, out_dir ? out_dir : suite->outputs ? suite->outputs : ".", force, &err);
    if (rc == RB_OK) {
        char *table = NULL;
        rc = rb_comparison_render(res->table, RB_REPORT_MARKDOWN, &table, &err);
        if (rc == RB_OK)
            fputs(table, stdout);
        rb_free(table);
    }
    rb_suite_result_free(res);
    rb_suite_free(suite);
    rb_registry_free(reg);
    return rc == RB_OK ? CLI_EXIT_OK : cli_fail(&err);
}
