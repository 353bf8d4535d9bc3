/* roboest compare: every estimator variant on every log, the error table and the figures. */
#define _GNU_SOURCE /* sched_getaffinity: a rank's CPU binding */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "roboest/estimators.h"
#include "roboest/experiments.h"
#include "roboest/suite_mpi.h"

static const char *const COMPARE_HELP =
    "Usage: roboest compare SUITE.json [-o DIR] [--threads N] [--force] [-q] [--resume] [--shard K/N]\n"
    "                       [--memory-limit MB]\n"
    "       roboest compare SUITE.json --merge DIR... [-o DIR] [--force] [-q]\n"
    "       mpirun -np N roboest compare SUITE.json ...   (or srun: the runs spread over the ranks)\n"
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
    "  --memory-limit MB  the process's memory limit: each (variant, log) run in windows as 'roboest run\n"
    "                     --memory-limit' (its channels read in parts, the stages stepped window after\n"
    "                     window), and the suite's reference, contact and events channels read in parts\n"
    "                     too: the same report. What the suite holds whole (logs that cannot be read in\n"
    "                     parts, a trace's reference, a reference_log) comes off the limit first, and\n"
    "                     the runs at once (--threads) share the rest equally: each run gets (MB - held)\n"
    "                     / threads. Held whole over the limit is said before any run, a run needing\n"
    "                     more than its share as it starts, each in one line naming the MiB it needs\n"
    "                     (exit 3, no report). Under MPI the limit is each rank's\n"
    "  -h, --help         this help\n";

static const char *const COMPARE_HELP_PARTS =
    "  --resume           keep each finished run's result in DIR/runs/<key>.rbres (key: SHA-256 of the\n"
    "                     variant's pipeline, the bytes of its URDF, of the files its stages name (a friction\n"
    "                     network) and of the log, and the suite's settings) and compute only\n"
    "                     the runs not stored there; a corrupt or foreign file is recomputed (a warning).\n"
    "                     The report (rewritten) has the same bytes as a fresh run's. Without a window\n"
    "                     or \"settle\" in the suite, adding a variant changes every run's start-up skip\n"
    "                     and so every key\n"
    "  --shard K/N        run only the runs i (variant-major: i = variant * logs + log) with i mod N =\n"
    "                     K - 1 and store them in DIR/runs; no report (for job arrays)\n"
    "  --merge DIR...     no run: the report from the results stored in each DIR/runs; refused (exit 3)\n"
    "                     naming the first (variant, log) without a stored result, or with a corrupt one\n"
    "Under mpirun or srun (Open MPI; detected from the launcher's environment, otherwise MPI is not\n"
    "started) rank 0 hands the runs out, largest expected cost first (log size x pipeline stages), every\n"
    "rank runs them too, up to N at once on its threads (--threads N, else the suite's \"threads\", else\n"
    "1: one rank per core is the usual split; MPI is called from one thread per rank, an MPI library\n"
    "without MPI_THREAD_FUNNELED is refused at start; Open MPI binds a rank to one core unless started\n"
    "with --bind-to none or --map-by slot:PE=N, which a warning says) and sends their results to rank 0,\n"
    "which writes the report: the same bytes whatever the number of ranks and threads. A failing run\n"
    "fails the suite naming its (variant, log) and no report is written; a rank that dies of a signal\n"
    "it can catch names its run on stderr (a crash: the crashing thread's; SIGTERM: every run in\n"
    "progress on the rank), then Open MPI aborts the job (exit 128 + the signal; a rank killed by\n"
    "SIGKILL is named by Open MPI alone), and no report is written.\n"
    "\n"
    "Suite keys are documented in configs/README.md. Gate a CI job on the report with\n"
    "'roboest check DIR/report.json RULES'. Windows are [t0, t1] (absolute s) or {\"from_start\":\n"
    "[t0, t1]} (s after each log's first sample); without one, every variant of a log skips the\n"
    "largest start-up of the variants' stages (the suite's \"settle\"; the report's provenance\n"
    "\"log <name>: window\" says what was excluded).\n"
    "\n" CLI_EXIT_CODES_HELP;

typedef struct compare_args {
    const char *suite, *out_dir;
    const char **merge; /* n_merge folders with --merge */
    size_t n_merge;
    bool force, quiet, resume, merging;
    size_t shard_k, shard_n; /* 0: no --shard */
    rb_suite_opts opts;
} compare_args;

static bool parse_shard(const char *s, size_t *k, size_t *n)
{
    char *end;
    unsigned long a = strtoul(s, &end, 10);
    if (end == s || *end != '/')
        return false;
    const char *b = end + 1;
    unsigned long c = strtoul(b, &end, 10);
    if (end == b || *end || c < 1 || c > 1000000 || a < 1 || a > c)
        return false;
    *k = a, *n = c;
    return true;
}

static int parse_args(int argc, char **argv, compare_args *a)
{
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'}, {"threads", required_argument, NULL, 't'},
        {"force", no_argument, NULL, 'F'},        {"quiet", no_argument, NULL, 'q'},
        {"resume", no_argument, NULL, 'R'},       {"shard", required_argument, NULL, 'S'},
        {"merge", no_argument, NULL, 'M'},        {"memory-limit", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":o:qh", options, NULL)) != -1) {
        switch (opt) {
        case 'o': a->out_dir = optarg; break;
        case 't':
            if (!cli_parse_threads(optarg, &a->opts.threads))
                return cli_usage_error("compare", "--threads needs a whole number from 1 to 1024, not '%s'", optarg);
            break;
        case 'F': a->force = true; break;
        case 'q': a->quiet = true; break;
        case 'R': a->resume = true; break;
        case 'S':
            if (!parse_shard(optarg, &a->shard_k, &a->shard_n))
                return cli_usage_error("compare", "--shard needs K/N with 1 <= K <= N, not '%s'", optarg);
            break;
        case 'M': a->merging = true; break;
        case 'm': {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end || v == 0 || optarg[0] == '-' || v > SIZE_MAX >> 20)
                return cli_usage_error("compare", "--memory-limit needs a whole number > 0, got '%s'", optarg);
            a->opts.memory_limit = (size_t)v << 20;
            break;
        }
        case 'h':
            fputs(COMPARE_HELP, stdout);
            fputs(COMPARE_HELP_PARTS, stdout);
            return CLI_EXIT_OK;
        case ':': return cli_usage_error("compare", "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("compare", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error("compare", "missing SUITE.json");
    a->suite = argv[optind];
    a->merge = (const char **)argv + optind + 1;
    a->n_merge = (size_t)(argc - optind - 1);
    if (!a->merging && a->n_merge)
        return cli_usage_error("compare", "unexpected argument '%s'", argv[optind + 1]);
    if (a->merging && !a->n_merge)
        return cli_usage_error("compare", "--merge needs at least one folder of stored results");
    if (a->merging && (a->resume || a->shard_n))
        return cli_usage_error("compare", "--merge runs nothing: it takes neither --resume nor --shard");
    return -1;
}

/* ---- the store under DIR/runs ------------------------------------------------------------------------------- */
typedef struct store {
    char *dir; /* OUT/runs */
} store;

static int store_finished(void *user, size_t item, const rb_suite_pair *pair, rb_err *err)
{
    (void)item;
    store *st = user;
    return rb_suite_store_save(st->dir, pair, err);
}

static int make_dirs(const char *out, store *st, rb_err *err)
{
    bool made;
    int rc = rb_dir_make(out, &made, err);
    if (!rc && !(st->dir = rb_path_in(out, "runs")))
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    if (!rc)
        rc = rb_dir_make(st->dir, &made, err);
    return rc;
}

/* The stored result of every run from the folders, in order; the first run without one fails. */
static int load_merge(const compare_args *a, const rb_suite *s, char (*keys)[65], rb_suite_pair **runs, rb_err *err)
{
    size_t L = s->n_logs;
    for (size_t i = 0; i < s->n_variants * L; i++) {
        int rc = RB_ENOTFOUND;
        for (size_t d = 0; rc == RB_ENOTFOUND && d < a->n_merge; d++) {
            char *dir = rb_path_in(a->merge[d], "runs");
            if (!dir)
                return rb_err_set(err, RB_ENOMEM, "out of memory");
            rc = rb_suite_store_load(dir, keys[i], &runs[i], err);
            rb_free(dir);
        }
        if (rc == RB_ENOTFOUND)
            return rb_err_set(err, RB_EINPUT,
                              "%s: no stored result for variant %s, log %s (runs/%s.rbres) in %s%s: run its shard "
                              "first",
                              s->path, s->variants[i / L].name, s->log_names[i % L], keys[i], a->merge[0],
                              a->n_merge > 1 ? " or the other folders" : "");
        if (rc)
            return rb_err_prefix(err, rc, "variant %s, log %s: ", s->variants[i / L].name, s->log_names[i % L]);
    }
    return RB_OK;
}

/* The runs to make: the shard's, less those stored (--resume; runs[i] then holds the stored one). */
static int plan_items(const compare_args *a, const rb_suite *s, const store *st, char (*keys)[65], rb_suite_pair **runs,
                      size_t *items, size_t *n_items, size_t *n_read, rb_err *err)
{
    *n_items = 0;
    for (size_t i = 0; i < s->n_variants * s->n_logs; i++) {
        if (a->shard_n && i % a->shard_n != a->shard_k - 1)
            continue;
        int rc = a->resume ? rb_suite_store_load(st->dir, keys[i], &runs[i], err) : RB_ENOTFOUND;
        if (rc == RB_OK) {
            (*n_read)++;
            continue;
        }
        if (rc == RB_EINPUT) /* never trusted: made again */
            fprintf(stderr, "roboest: warning: %s; computing that run again\n", err->msg);
        else if (rc != RB_ENOTFOUND)
            return rc;
        items[(*n_items)++] = i;
    }
    return RB_OK;
}

/* ---- under MPI: a rank that dies names its runs ----------------------------------------------------------- */
static bool mpi_on;
static char died[64];
static size_t died_len;

static void say_runs(bool own_only)
{
    for (size_t slot = 0; slot < RB_SUITE_MPI_SLOTS; slot++) {
        size_t len;
        bool mine;
        const char *run = rb_suite_mpi_running(slot, &len, &mine);
        if (run && (mine || !own_only) &&
            (write(STDERR_FILENO, died, died_len) < 0 || write(STDERR_FILENO, run, len) < 0 ||
             write(STDERR_FILENO, "\n", 1) < 0))
            return;
    }
}

/* A crash names the faulting thread's run (else every run of the rank); SIGTERM (a scheduler's kill: scancel, a time
 * limit) every run in progress. SIGKILL cannot be caught. */
static void on_crash(int sig)
{
    bool own = false;
    for (size_t slot = 0; sig != SIGTERM && slot < RB_SUITE_MPI_SLOTS && !own; slot++) {
        size_t len;
        rb_suite_mpi_running(slot, &len, &own);
        own = own && len;
    }
    say_runs(own);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void catch_crashes(int rank)
{
    int n = snprintf(died, sizeof died, "roboest: rank %d died while running ", rank);
    died_len = n > 0 && (size_t)n < sizeof died ? (size_t)n : 0;
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], on_crash);
}

/* Open MPI binds each rank to a core by default (2 ranks or fewer): its threads would then take turns. */
static void warn_binding(const rb_suite *s, const rb_suite_opts *o)
{
    size_t t = o->threads ? o->threads : s->threads ? s->threads : 1;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (t > 1 && sched_getaffinity(0, sizeof set, &set) == 0 && (size_t)CPU_COUNT(&set) < t)
        fprintf(stderr,
                "roboest: warning: rank 0 may run on %d core%s (its CPU binding) for %zu threads: start mpirun with "
                "--bind-to none or --map-by slot:PE=%zu (srun: --cpus-per-task=%zu)\n",
                CPU_COUNT(&set), CPU_COUNT(&set) == 1 ? "" : "s", t, t, t);
}

static int compute(const rb_suite *s, const rb_suite_opts *opts, store *st, const size_t *items, size_t n,
                   rb_suite_pair **runs, rb_err *err)
{
    rb_suite_finished_fn fn = st->dir ? store_finished : NULL;
    rb_suite_pair **made = rb_calloc(n ? n : 1, sizeof *made);
    rb_suite_runner *rn = NULL;
    int rc = made ? RB_OK : rb_err_set(err, RB_ENOMEM, "out of memory");
    if (!rc && mpi_on)
        warn_binding(s, opts);
    if (!rc && mpi_on)
        rc = rb_suite_mpi_compute(s, opts, fn, st, items, n, made, err);
    else if (!rc && n && !(rc = rb_suite_runner_new(s, opts, &rn, err))) {
        rb_suite_runner_on_finished(rn, fn, st);
        rc = rb_suite_runner_run(rn, items, n, made, err);
    }
    for (size_t k = 0; !rc && k < n; k++)
        runs[items[k]] = made[k];
    rb_suite_runner_free(rn);
    rb_free(made);
    return rc;
}

static int write_report(const compare_args *a, const rb_suite *s, rb_suite_pair *const *runs, const char *out,
                        rb_err *err)
{
    rb_suite_result *res = NULL;
    int rc = rb_suite_report(s, &a->opts, runs, &res, err);
    for (size_t i = 0; res && i < res->n_warnings; i++)
        fprintf(stderr, "roboest: warning: %s\n", res->warnings[i]);
    if (!rc) /* --resume rewrites the report it completes */
        rc = rb_suite_result_write(res, out, a->force || a->resume, err);
    if (!rc) {
        char *table = NULL;
        rc = rb_comparison_render(res->table, RB_REPORT_MARKDOWN, &table, err);
        if (!rc)
            fputs(table, stdout);
        rb_free(table);
    }
    rb_suite_result_free(res);
    return rc;
}

/* --resume, --shard, --merge, or under MPI: the runs as data, then the report from them. */
static int compare_in_parts(compare_args *a, const rb_suite *s, const char *out, rb_err *err)
{
    size_t n = s->n_variants * s->n_logs, n_items = 0, n_read = 0;
    char(*keys)[65] = rb_calloc(n, sizeof *keys);
    rb_suite_pair **runs = rb_calloc(n, sizeof *runs);
    size_t *items = rb_calloc(n, sizeof *items);
    store st = {NULL};
    bool stored = a->resume || a->shard_n;
    int rc = keys && runs && items ? RB_OK : rb_err_set(err, RB_ENOMEM, "out of memory");
    if (!rc && (stored || a->merging))
        rc = rb_suite_keys(s, keys, err);
    if (!rc && a->merging)
        rc = load_merge(a, s, keys, runs, err);
    if (!rc && !a->merging && stored)
        rc = make_dirs(out, &st, err);
    if (!rc && !a->merging)
        rc = stored ? plan_items(a, s, &st, keys, runs, items, &n_items, &n_read, err) : RB_OK;
    if (!rc && !a->merging && !stored)
        for (size_t i = 0; i < n; i++)
            items[n_items++] = i;
    if (!rc && !a->merging)
        rc = compute(s, &a->opts, &st, items, n_items, runs, err);
    if (!rc && (stored || a->merging))
        fprintf(stderr, "roboest: compare: %zu run%s computed, %zu read from stored results\n", n_items,
                n_items == 1 ? "" : "s", a->merging ? n : n_read);
    if (!rc && !a->shard_n)
        rc = write_report(a, s, runs, out, err);
    for (size_t i = 0; runs && i < n; i++)
        rb_suite_pair_free(runs[i]);
    rb_free(runs);
    rb_free(keys);
    rb_free(items);
    rb_free(st.dir);
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    compare_args a = {0};
    int code = parse_args(argc, argv, &a);
    if (code >= 0)
        return code;
    int rank = 0;
    rb_err err;
    if (rb_suite_mpi_start(&mpi_on, &rank, &err) != RB_OK)
        return cli_fail(&err);

    rb_registry *reg = NULL;
    rb_suite *suite = NULL;
    rb_suite_result *res = NULL;
    cli_runs progress;
    cli_runs_init(&progress, "compare", a.quiet || mpi_on);
    a.opts.progress = cli_runs_update;
    a.opts.user = &progress;
    int rc = rb_registry_new(&reg, &err);
    if (rc == RB_OK)
        rc = rb_estimators_register(reg, &err);
    if (rc == RB_OK)
        rc = rb_suite_load(a.suite, reg, &suite, &err);
    const char *out = a.out_dir ? a.out_dir : suite && suite->outputs ? suite->outputs : ".";
    if (rank > 0) { /* every rank serves, so rank 0 never waits for one that cannot */
        catch_crashes(rank);
        rc = rb_suite_mpi_serve(rc == RB_OK ? suite : NULL, &a.opts, &err, &err);
    } else if (rc == RB_OK && (a.resume || a.shard_n || a.merging || mpi_on)) {
        rc = compare_in_parts(&a, suite, out, &err);
        cli_runs_done(&progress);
    } else if (rc == RB_OK) {
        rc = rb_suite_run(suite, &a.opts, &res, &err);
        cli_runs_done(&progress);
        for (size_t i = 0; res && i < res->n_warnings; i++)
            fprintf(stderr, "roboest: warning: %s\n", res->warnings[i]);
        if (rc == RB_OK)
            rc = rb_suite_result_write(res, out, a.force, &err);
        if (rc == RB_OK) {
            char *table = NULL;
            rc = rb_comparison_render(res->table, RB_REPORT_MARKDOWN, &table, &err);
            if (rc == RB_OK)
                fputs(table, stdout);
            rb_free(table);
        }
    }
    rb_suite_result_free(res);
    rb_suite_free(suite);
    rb_registry_free(reg);
    code = rc == RB_OK ? CLI_EXIT_OK : rank > 0 ? cli_exit_code(rc) : cli_fail(&err);
    if (mpi_on)
        rb_suite_mpi_end();
    return code;
}
