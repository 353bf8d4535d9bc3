/* Shared pieces of the roboest command: exit codes, messages, argument helpers, progress bar. */
#ifndef ROBOEST_CLI_H
#define ROBOEST_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/core.h"

/* Exit codes, documented in `roboest --help`. */
enum cli_exit {
    CLI_EXIT_OK = 0,
    CLI_EXIT_INTERNAL = 1, /* out of memory or a bug */
    CLI_EXIT_USAGE = 2,    /* bad command line */
    CLI_EXIT_INPUT = 3,    /* missing or corrupt file, missing channel or element, bad config */
    CLI_EXIT_NUMERIC = 4,  /* numeric failure (non-finite values, filter divergence) */
    CLI_EXIT_OUTPUT = 5,   /* cannot write an output, it exists without --force, or is an input or not a regular file */
    CLI_EXIT_CHECK = 6     /* roboest check: at least one rule does not hold */
};

#define CLI_EXIT_CODES_HELP                                                                                            \
    "Exit codes:\n"                                                                                                    \
    "  0  success\n"                                                                                                   \
    "  1  internal error (out of memory)\n"                                                                            \
    "  2  usage error (unknown command or option, missing argument)\n"                                                 \
    "  3  input error (missing or corrupt file, missing channel or element, bad config)\n"                             \
    "  4  numeric failure (non-finite values in results)\n"                                                            \
    "  5  output error (cannot write, the output exists and --force was not given, or it is an input\n"                \
    "     of the command or not a regular file: --force never replaces those)\n"                                       \
    "  6  roboest check: at least one rule does not hold\n"                                                            \
    "  128+N  stopped by signal N (SIGINT, SIGTERM, SIGHUP): unfinished outputs are removed\n"

/* For the whole process: files read are never outputs (rb_inputs_guard_enable), and SIGINT, SIGTERM
 * and SIGHUP remove the temporaries of unfinished outputs before ending the process as that signal. */
void cli_guard_outputs(void);
/* Map a library status to an exit code. */
int cli_exit_code(int status);
/* Print "roboest: <message>" as one line on stderr and return the exit code for err->code. */
int cli_fail(const rb_err *err);
/* Print "roboest <cmd>: <message>" for a usage error plus a hint to --help; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) RB_PRINTF(2, 3);

/* The arguments of a command run on one configuration file: CONFIG.json [-o DIR] [--force] [-q]. */
typedef struct cli_config_args {
    const char *config, *out_dir; /* out_dir "." unless -o */
    bool force, quiet;
} cli_config_args;
/* Parse them; -1 to go on, else the exit code to return (--help printed on stdout: CLI_EXIT_OK; a usage error). */
int cli_parse_config_args(int argc, char **argv, const char *cmd, const char *help, cli_config_args *a);

/* Print a JSON document on stdout and delete it; returns CLI_EXIT_OK or CLI_EXIT_INTERNAL (out of memory). */
struct cJSON;
int cli_print_json(struct cJSON *doc);

/* Parse a finite double option value; false on garbage. */
bool cli_parse_double(const char *s, double *out);
/* Parse a --threads value: a whole number from 1 to 1024; false otherwise. */
bool cli_parse_threads(const char *s, size_t *out);

/* Progress bar on stderr, drawn only when stderr is a terminal and not quiet. */
typedef struct cli_progress {
    bool enabled;
    const char *label;
    /* The rate is measured from the first report of the current log, so reading the log and
     * setting up the run do not count as slow samples. */
    double t_first;
    size_t done_first;
    size_t done_last;
    bool seen;
} cli_progress;

void cli_progress_init(cli_progress *p, const char *label, bool quiet);
/* Library progress callback: user is a cli_progress. Returns 0 (never cancels). */
int cli_progress_update(void *user, size_t done, size_t total);
void cli_progress_done(cli_progress *p);

/* "<label>: done/total runs done" on one stderr line, for commands that run a pool of runs (compare,
 * closed-loop): drawn only when stderr is a terminal and not quiet; cli_runs_done clears the line. */
typedef struct cli_runs {
    bool enabled;
    const char *label;
} cli_runs;

void cli_runs_init(cli_runs *r, const char *label, bool quiet);
/* Library progress callback: user is a cli_runs. Returns 0 (never cancels). */
int cli_runs_update(void *user, size_t done, size_t total);
void cli_runs_done(const cli_runs *r);

int cmd_info(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_stages(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_import_rde(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_train_friction(int argc, char **argv);
int cmd_closed_loop(int argc, char **argv);
int cmd_validate_thrust(int argc, char **argv);
int cmd_calibrate_ft(int argc, char **argv);
int cmd_slip_thresholds(int argc, char **argv);

#endif
