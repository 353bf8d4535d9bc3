/* roboest run: replay logs through a pipeline; roboest stages: what a pipeline can use. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "roboest/estimators.h"
#include "roboest/pipeline.h"

static const char *const RUN_HELP =
    "Usage: roboest run PIPELINE.json [LOG...] [-o DIR] [--concat] [--force] [-q] [--print-config]\n"
    "                   [--memory-limit MB] [--window N]\n"
    "\n"
    "Replays each log through the pipeline: aligns the bound channels on the sample clock, steps\n"
    "every stage once per sample in dependency order (causally), writes the configured outputs and\n"
    "metric reports into DIR, and prints the metric table (Markdown) on stdout. With several logs,\n"
    "each gets a subfolder DIR/<log name> and DIR also receives reports over every log. The files of\n"
    "a log appear all together or not at all. Warnings (gaps, held non-finite samples) go to stderr.\n"
    "Every output records the roboest version and the SHA-256 of the config, the inputs, the model\n"
    "and every file a stage parameter names (a friction network).\n"
    "\n"
    "  LOG...           logs to run instead of the config's \"logs\" (one run each)\n"
    "  -o, --output DIR output folder (created if its parent exists; default: .)\n"
    "  --concat         the LOGs are one session split over files: concatenate them into one run\n"
    "  --force          overwrite existing outputs\n"
    "  -q, --quiet      no progress bar (it is shown only when stderr is a terminal)\n"
    "  --print-config   print the resolved configuration (defaults filled in) and exit\n"
    "  --memory-limit MB  for logs longer than memory: read each log in windows, its channels in\n"
    "                   parts (robot-logger MATLAB v7.3 and .h5 layouts; MATLAB v5/v7, CSV and plain\n"
    "                   files are read whole and must fit in MB, else exit 3 saying what they need);\n"
    "                   the same numbers as without it. Every output is written window by window\n"
    "                   (.csv: the same bytes; .h5 and .mat: the same values and datasets, the chunks\n"
    "                   placed otherwise), statistics accumulated window by window, a reference_log\n"
    "                   read in windows (its v5/v7, CSV or plain file whole: it must fit too). Kept\n"
    "                   whole: the clock, the signals of confusion tables, and one channel's\n"
    "                   timestamps at a time for their checks. Not with --concat\n"
    "  --window N       clock samples per window (default max(4096, MB x 16)); implies windows\n"
    "  -h, --help       this help\n"
    "\n"
    "The configuration keys are documented in configs/README.md; 'roboest stages' lists the stage\n"
    "types and their parameters. A binding may name the elements a log leaves unnamed (\"names\":\n"
    "r_knee rather than 3 in outputs and reports) and read a channel in other units (\"scale\",\n"
    "\"unit\": deg/s as rad/s; the output records the new unit, provenance the scale). A binding\n"
    "marked \"optional\" whose channels the log lacks is 0 wide (a warning), not an error. A metric's\n"
    "reference may be a channel of a separate truth file, aligned by time (\"reference_log\":\n"
    "\"{log_dir}/{log_stem}_truth.h5\"; configs/README.md, \"Reference logs\"). A window is\n"
    "[t0, t1] (absolute s) or {\"from_start\": [t0, t1]} (s after the log's first sample). A metric\n"
    "without one skips the stages' start-up (\"settle\": by default the largest settling time the\n"
    "stage types declare, e.g. kf_derivative's; 0: none); the report's \"Scored windows\" says what.\n"
    "\n" CLI_EXIT_CODES_HELP;

static const char *const STAGES_HELP =
    "Usage: roboest stages [--markdown]\n"
    "\n"
    "Lists every stage type a pipeline can use: inputs, outputs and parameters (kind, default,\n"
    "bounds, meaning). In a pipeline every input port is wired; output ports may be left out of\n"
    "\"out\" (at least one wired), e.g. a filter's diagnostics when they are not wanted.\n"
    "\n"
    "  --markdown   the full reference instead: what each type computes (model, equations, units,\n"
    "               start-up, errors), its ports and its parameters, as Markdown; configs/stages.md\n"
    "               is this output (make stages-doc regenerates it)\n"
    "  -h, --help   this help\n"
    "\n" CLI_EXIT_CODES_HELP;

static int make_registry(rb_registry **reg, rb_err *err)
{
    int rc = rb_registry_new(reg, err);
    if (rc == RB_OK)
        rc = rb_estimators_register(*reg, err);
    return rc;
}

static void print_warnings(char **warnings, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "roboest: warning: %s\n", warnings[i]);
}

int cmd_run(int argc, char **argv)
{
    static const struct option options[] = {{"output", required_argument, NULL, 'o'},
                                            {"concat", no_argument, NULL, 'c'},
                                            {"force", no_argument, NULL, 'F'},
                                            {"quiet", no_argument, NULL, 'q'},
                                            {"print-config", no_argument, NULL, 'p'},
                                            {"memory-limit", required_argument, NULL, 'm'},
                                            {"window", required_argument, NULL, 'w'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    rb_run_opts opts = {0};
    bool quiet = false, print_config = false;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":o:qh", options, NULL)) != -1) {
        switch (opt) {
        case 'o': opts.out_dir = optarg; break;
        case 'c': opts.concat = true; break;
        case 'F': opts.overwrite = true; break;
        case 'q': quiet = true; break;
        case 'p': print_config = true; break;
        case 'm':
        case 'w': {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end || v == 0 || optarg[0] == '-' || (opt == 'm' && v > SIZE_MAX >> 20))
                return cli_usage_error("run", "%s needs a whole number > 0, got '%s'",
                                       opt == 'm' ? "--memory-limit" : "--window", optarg);
            if (opt == 'm')
                opts.memory_limit = (size_t)v << 20;
            else
                opts.window = (size_t)v;
            break;
        }
        case 'h': fputs(RUN_HELP, stdout); return CLI_EXIT_OK;
        case ':': return cli_usage_error("run", "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("run", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error("run", "missing PIPELINE.json");
    const char *config = argv[optind++];
    if (optind < argc) {
        opts.logs = (const char *const *)argv + optind;
        opts.n_logs = (size_t)(argc - optind);
        for (size_t i = 0; i < opts.n_logs; i++) /* before any session writes: a later session's log too */
            rb_input_note(opts.logs[i]);
    } else if (opts.concat) {
        return cli_usage_error("run", "--concat needs the LOGs on the command line");
    }

    rb_err err;
    rb_registry *reg = NULL;
    rb_pipeline *p = NULL;
    rb_run_summary summary = {0};
    int rc = make_registry(&reg, &err);
    if (rc == RB_OK)
        rc = rb_pipeline_load(config, reg, &p, &err);
    if (rc == RB_OK && print_config) {
        char *text = rb_pipeline_resolved_json(p);
        if (text)
            puts(text);
        else
            rc = rb_err_set(&err, RB_ENOMEM, "out of memory");
        rb_free(text);
        goto done;
    }
    cli_progress progress;
    cli_progress_init(&progress, "run", quiet);
    opts.progress = cli_progress_update;
    opts.user = &progress;
    if (rc == RB_OK)
        rc = rb_pipeline_run(p, &opts, &summary, &err);
    cli_progress_done(&progress);
    print_warnings(summary.warnings, summary.n_warnings);
    if (rc == RB_OK && summary.report) {
        char *table = NULL;
        rc = rb_report_render(summary.report, RB_REPORT_MARKDOWN, &table, &err);
        if (rc == RB_OK)
            fputs(table, stdout);
        rb_free(table);
    }
done:
    rb_run_summary_free(&summary);
    rb_pipeline_free(p);
    rb_registry_free(reg);
    return rc == RB_OK ? CLI_EXIT_OK : cli_fail(&err);
}

/* The default and bounds come from the library, which writes the same words into the reference (--markdown). */
static int print_param(const rb_param_spec *ps, rb_err *err)
{
    char *def = NULL, *bounds = NULL;
    int rc = rb_param_default_text(ps, &def, err);
    if (rc == RB_OK && (rc = rb_param_bounds_text(ps, &bounds, err)) == RB_OK) {
        printf("    %-14s %s%s", ps->name, rb_param_kind_name(ps->kind), ps->required ? ", required" : "");
        if (def[0])
            printf(", default %s", def);
        if (bounds[0])
            printf(", %s", bounds);
        printf("\n    %-14s %s\n", "", ps->doc ? ps->doc : "");
    }
    rb_free(def);
    rb_free(bounds);
    return rc;
}

static const char *const STAGES_MARKDOWN_HEAD =
    "<!-- Generated by `roboest stages --markdown` (make stages-doc): do not edit by hand. -->\n"
    "# Stage types\n"
    "\n"
    "Every stage type a pipeline can use, in name order: what it computes, its ports and its parameters.\n"
    "Every stage is causal: its outputs at a sample depend on the samples up to that one only. How a\n"
    "pipeline wires stages and sets their parameters: [README.md](README.md#keys). The text comes from the\n"
    "stage types themselves (`lib/estimators/`); `roboest stages` lists the parameters in short.\n"
    "\n";

static int print_markdown(const rb_registry *reg, rb_err *err)
{
    char *md = NULL;
    int rc = rb_registry_markdown(reg, &md, err);
    if (rc == RB_OK)
        fputs(STAGES_MARKDOWN_HEAD, stdout), fputs(md, stdout);
    rb_free(md);
    return rc;
}

int cmd_stages(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(STAGES_HELP, stdout);
        return CLI_EXIT_OK;
    }
    bool markdown = argc > 1 && strcmp(argv[1], "--markdown") == 0;
    if (argc > 1 + markdown)
        return cli_usage_error("stages", "unexpected argument '%s'", argv[1 + markdown]);
    rb_err err;
    rb_registry *reg = NULL;
    int rc = make_registry(&reg, &err);
    if (rc == RB_OK && markdown)
        rc = print_markdown(reg, &err);
    for (size_t i = 0; rc == RB_OK && !markdown && i < rb_registry_count(reg); i++) {
        const rb_stage_type *t = rb_registry_at(reg, i);
        printf("%s%s\n  %s\n  in:", i ? "\n" : "", t->name, t->summary);
        for (size_t k = 0; k < t->n_inputs; k++)
            printf(" %s%s", t->inputs[k], k < 64 && (t->optional_inputs >> k & 1) ? " (optional)" : "");
        printf("\n  out:");
        for (size_t k = 0; k < t->n_outputs; k++)
            printf(" %s", t->outputs[k]);
        printf("\n  params:%s\n", t->n_params ? "" : " none");
        for (size_t k = 0; rc == RB_OK && k < t->n_params; k++)
            rc = print_param(&t->params[k], &err);
    }
    rb_registry_free(reg);
    return rc == RB_OK ? CLI_EXIT_OK : cli_fail(&err);
}
