/* roboest tune: pick an estimator's noise parameters on a log (the library does the search). */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "roboest/training.h"
#include "roboest/estimators.h"
#include "roboest/io.h"

static const char *const TUNE_HELP =
    "Usage: roboest tune ESTIMATOR LOG [OPTIONS]\n"
    "\n"
    "Picks an estimator's noise parameters on a log and prints them with a config snippet.\n"
    "\n"
    "Estimators:\n"
    "  kf-derivative   process noise q of the kf_derivative stage ('roboest tune kf-derivative --help')\n"
    "  ukf-torque      process and measurement variances of a pipeline's ukf_torque stage, from the log alone\n"
    "                  ('roboest tune ukf-torque --help')\n"
    "\n" CLI_EXIT_CODES_HELP;

static const char *const KFD_HELP =
    "Usage: roboest tune kf-derivative LOG --channel NAME [--elements LIST] [--reference CHANNEL]\n"
    "                                  [--r VARIANCE] [--q-min Q] [--q-max Q] [--warmup SECONDS]\n"
    "\n"
    "Chooses the jerk spectral density q (unit^2/s^5) of the kf_derivative stage (constant-acceleration\n"
    "Kalman filter, process_noise \"jerk\") for each element of a position channel, running the stage's\n"
    "own filter over the channel's time stamps, and prints q, the criterion at q and a config snippet.\n"
    "\n"
    "Criterion, over the samples after the warm-up:\n"
    "  with --reference: the RMSE of the filter's velocity x_dot against the reference channel (e.g. the\n"
    "    true velocity a simulated log carries), resampled linearly onto the position's time stamps;\n"
    "  without: the RMS of the one-step-ahead prediction error of the position, z_k - x^-_k, which grows\n"
    "    when q is too small (the filter lags) and when it is too large (it follows the noise).\n"
    "Search: log10 q on a half-decade grid over [q-min, q-max], then golden-section to 0.01 decade; q is\n"
    "rounded to 3 significant digits. Deterministic. Details: roboest/training.h (rb_kfd_tune).\n"
    "\n"
    "  LOG                 any log roboest reads (see 'roboest info')\n"
    "  --channel NAME      the position channel (e.g. joints_state/positions); required\n"
    "  --elements LIST     comma-separated element names (or indices when no element has that name);\n"
    "                      default every element\n"
    "  --reference CHANNEL velocity channel scored against; its element with the same name, else the one\n"
    "                      at the same index\n"
    "  --r VARIANCE        measurement variance r, unit^2 (the filter depends on q / r); default estimated\n"
    "                      per element as mean((third difference of the position)^2) / 20, 3 digits\n"
    "  --q-min Q, --q-max Q  search interval for q; default q dT^5 / r from 1e-18 to 1e2 (dT the median\n"
    "                      interval)\n"
    "  --warmup SECONDS    start-up time not scored (default 10 % of the log's duration)\n"
    "  -h, --help          this help\n"
    "\n"
    "A minimum within half a decade of an end of the interval is reported as a warning on stderr.\n"
    "\n" CLI_EXIT_CODES_HELP;

/* JSON string literal of s on stdout. */
static void print_json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

/* Element i of the channel for a --elements token: a name first, else an index. */
static int element_index(const rb_channel *ch, const char *token, size_t *out, rb_err *err)
{
    long i = rb_channel_element_index(ch, token);
    if (i >= 0) {
        *out = (size_t)i;
        return RB_OK;
    }
    char *end;
    unsigned long v = strtoul(token, &end, 10);
    if (token[0] && isdigit((unsigned char)token[0]) && *end == '\0') {
        if (v < ch->n_elements) {
            *out = (size_t)v;
            return RB_OK;
        }
        return rb_err_set(err, RB_ENOTFOUND, "channel %s: element index %lu out of range (%zu elements)", ch->name, v,
                          ch->n_elements);
    }
    return rb_err_set(err, RB_ENOTFOUND, "channel %s: no element named '%s'", ch->name, token);
}

/* Parse --elements into indices (caller frees *idx). */
static int parse_elements(const rb_channel *ch, const char *list, size_t **idx, size_t *n, rb_err *err)
{
    size_t cap = 1;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    *idx = rb_calloc(cap, sizeof **idx);
    char *copy = rb_strdup(list);
    if (!*idx || !copy) {
        rb_free(copy);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    int rc = RB_OK;
    *n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == RB_OK; tok = strtok_r(NULL, ",", &save))
        rc = element_index(ch, tok, &(*idx)[(*n)++], err);
    if (rc == RB_OK && *n == 0)
        rc = rb_err_set(err, RB_ENOTFOUND, "channel %s: --elements names no element", ch->name);
    rb_free(copy);
    return rc;
}

static void print_snippet(const rb_channel *ch, const size_t *sel, size_t n, const rb_kfd_tune_result *res,
                          const rb_kfd_tune_opts *o)
{
    char sig[256], buf[32];
    size_t len = 0;
    for (const char *p = ch->name; *p && len + 1 < sizeof sig; p++)
        sig[len++] = (isalnum((unsigned char)*p) || strchr("_.-/", *p)) ? *p : '_';
    sig[len] = '\0';
    printf("\nConfig snippet (kf_derivative stage; merge into \"signals\" and \"stages\"):\n");
    printf("  \"signals\": {\n    ");
    print_json_string(sig);
    printf(": {\"channel\": ");
    print_json_string(ch->name);
    printf(", \"elements\": [");
    for (size_t i = 0; i < n; i++) {
        printf("%s", i ? ", " : "");
        print_json_string(ch->element_names[sel[i]]);
    }
    printf("]}\n  },\n  \"stages\": [\n    {\"id\": \"kf_derivative\", \"type\": \"kf_derivative\", \"in\": {\"x\": ");
    print_json_string(sig);
    printf("},\n     \"out\": {\"x\": \"%s_filtered\", \"x_dot\": \"%s_dot\", \"x_ddot\": \"%s_ddot\"},\n", sig, sig,
           sig);
    printf("     \"params\": {\"process_noise\": \"jerk\", \"q\": [");
    for (size_t i = 0; i < n; i++)
        printf("%s%s", i ? ", " : "", rb_format_double(res[i].q, buf));
    printf("], \"r\": [");
    for (size_t i = 0; i < n; i++)
        printf("%s%s", i ? ", " : "", rb_format_double(res[i].r, buf));
    printf("], \"p0\": [");
    for (size_t i = 0; i < 3; i++)
        printf("%s%s", i ? ", " : "", rb_format_double(o->p0[i], buf));
    printf("]}}\n  ]\n");
}

static bool parse_positive(const char *s, double *out) { return cli_parse_double(s, out) && *out > 0; }

static int cmd_tune_kfd(int argc, char **argv)
{
    static const struct option options[] = {{"channel", required_argument, NULL, 'c'},
                                            {"elements", required_argument, NULL, 'e'},
                                            {"reference", required_argument, NULL, 'R'},
                                            {"r", required_argument, NULL, 'r'},
                                            {"q-min", required_argument, NULL, 'a'},
                                            {"q-max", required_argument, NULL, 'b'},
                                            {"warmup", required_argument, NULL, 'w'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    const char *cmd = "tune kf-derivative", *channel = NULL, *elements = NULL, *reference = NULL;
    rb_kfd_tune_opts o;
    rb_kfd_tune_opts_init(&o);
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (opt) {
        case 'c': channel = optarg; break;
        case 'e': elements = optarg; break;
        case 'R': reference = optarg; break;
        case 'r':
            if (!parse_positive(optarg, &o.r))
                return cli_usage_error(cmd, "--r needs a positive number, got '%s'", optarg);
            break;
        case 'a':
            if (!parse_positive(optarg, &o.q_min))
                return cli_usage_error(cmd, "--q-min needs a positive number, got '%s'", optarg);
            break;
        case 'b':
            if (!parse_positive(optarg, &o.q_max))
                return cli_usage_error(cmd, "--q-max needs a positive number, got '%s'", optarg);
            break;
        case 'w':
            if (!cli_parse_double(optarg, &o.warmup) || o.warmup < 0)
                return cli_usage_error(cmd, "--warmup needs a number of seconds >= 0, got '%s'", optarg);
            break;
        case 'h': fputs(KFD_HELP, stdout); return CLI_EXIT_OK;
        case ':': return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error(cmd, "missing LOG");
    if (optind + 1 < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
    if (!channel)
        return cli_usage_error(cmd, "missing --channel");
    if (o.q_min > 0 && o.q_max > 0 && !(o.q_min < o.q_max))
        return cli_usage_error(cmd, "--q-min must be below --q-max");
    const char *path = argv[optind];

    rb_err err;
    rb_log *log = NULL;
    size_t *sel = NULL, n = 0;
    rb_kfd_tune_result *res = NULL;
    int rc = rb_log_read(path, &log, &err);
    const rb_channel *ch = NULL, *ref = NULL;
    if (rc == RB_OK && !(ch = rb_log_find(log, channel)))
        rc = rb_err_set(&err, RB_ENOTFOUND, "%s: no channel '%s'", path, channel);
    if (rc == RB_OK && reference && !(ref = rb_log_find(log, reference)))
        rc = rb_err_set(&err, RB_ENOTFOUND, "%s: no reference channel '%s'", path, reference);
    if (rc == RB_OK && elements) {
        rc = parse_elements(ch, elements, &sel, &n, &err);
    } else if (rc == RB_OK) {
        n = ch->n_elements;
        sel = rb_calloc(n ? n : 1, sizeof *sel);
        if (!sel)
            rc = rb_err_set(&err, RB_ENOMEM, "out of memory");
        for (size_t i = 0; sel && i < n; i++)
            sel[i] = i;
    }
    if (rc == RB_OK && !(res = rb_calloc(n ? n : 1, sizeof *res)))
        rc = rb_err_set(&err, RB_ENOMEM, "out of memory");
    for (size_t i = 0; rc == RB_OK && i < n; i++) {
        const char *name = ch->element_names[sel[i]];
        size_t ref_elem = 0;
        if (ref) {
            long j = rb_channel_element_index(ref, name);
            if (j >= 0)
                ref_elem = (size_t)j;
            else if (sel[i] < ref->n_elements)
                ref_elem = sel[i];
            else
                rc = rb_err_set(&err, RB_ENOTFOUND, "%s: reference channel %s has no element '%s' (nor index %zu)",
                                path, ref->name, name, sel[i]);
        }
        if (rc == RB_OK)
            rc = rb_kfd_tune_channel(ch, sel[i], ref, ref_elem, &o, &res[i], &err);
        if (rc)
            rb_err_prefix(&err, rc, "%s: ", path);
        else if (res[i].at_bound)
            fprintf(stderr,
                    "roboest: warning: element %s: the minimum lies at the edge of the searched interval "
                    "[%.3g, %.3g]; widen it with --q-min / --q-max\n",
                    name, res[i].q_min, res[i].q_max);
    }
    if (rc == RB_OK && n > 0) {
        printf("kf-derivative tuning of %s in %s: %zu samples, median interval %.6g s\n", ch->name, path, ch->n_samples,
               res[0].dt);
        if (ref)
            printf("criterion: RMSE of x_dot against %s after t = %.17g s (%zu samples), unit/s\n", ref->name,
                   res[0].t_scored, res[0].n_scored);
        else
            printf("criterion: RMS one-step prediction error of the position after t = %.17g s (%zu samples), unit\n",
                   res[0].t_scored, res[0].n_scored);
        printf("\n%-20s %-12s %-24s %-24s %s\n", "element", "q", "r", "criterion", "evaluations");
        for (size_t i = 0; i < n; i++) {
            char bq[32], br[32], bc[32];
            printf("%-20s %-12s %-24s %-24s %zu\n", ch->element_names[sel[i]], rb_format_double(res[i].q, bq),
                   rb_format_double(res[i].r, br), rb_format_double(res[i].criterion, bc), res[i].evaluations);
        }
        print_snippet(ch, sel, n, res, &o);
    }
    rb_free(res);
    rb_free(sel);
    rb_log_free(log);
    return rc == RB_OK ? CLI_EXIT_OK : cli_fail(&err);
}

static const char *const UKF_HELP =
    "Usage: roboest tune ukf-torque LOG [LOG...] --pipeline P.json [-o TUNED.json] [--force] [--stage ID]\n"
    "                               [--still-velocity RAD_S] [--still-range RAD] [--still-duration S]\n"
    "                               [--max-lag STEPS] [--settle S] [--no-still-window]\n"
    "\n"
    "Chooses the variances of the pipeline's ukf_torque stage from the logs alone (no truth channel is read),\n"
    "prints each parameter group with the statistic it came from, and with -o writes the pipeline with the\n"
    "stage's params replaced. The pipeline runs on each log without the stage, so the statistics see the\n"
    "stage's inputs as it does (after offsets, filters and the friction network, on the pipeline's clock):\n"
    "  r_current, r_ft, r_acc, r_gyro  sensor noise in still windows: var(second difference) / 6, times the\n"
    "                  clock samples per sample of a slower channel (an IMU at 100 Hz on a 1 kHz clock: 10)\n"
    "  q_tau_m         increments of k_t R i (k_t and the signed gear ratio from the stage) over 1..max-lag\n"
    "                  steps fitted as c + a L^2 (a: the per-step increment without the current noise c), then\n"
    "                  q = (4 a)^(2/3) R^(1/3), R = (k_t R)^2 r_current: the random walk that follows such a\n"
    "                  signal with the least error\n"
    "  q_ft            the same on the FT inputs (R = r_ft)\n"
    "  q_tau_f         q_tau_m (the friction's increments are not observable without truth)\n"
    "  r_friction      the friction input's residual against the UKF's own tau_F with the input unwired (and\n"
    "                  the tuned variances), minus the UKF's variance of tau_F\n"
    "Every other parameter is kept. Details: roboest/training.h (rb_ukft_tune).\n"
    "\n"
    "  LOG             logs roboest reads; several are pooled (e.g. one with a still stretch, one moving)\n"
    "  --pipeline P    the pipeline with the ukf_torque stage; required\n"
    "  -o TUNED.json   write the tuned pipeline (relative paths rewritten to resolve from its folder; never\n"
    "                  the input pipeline); an existing file only with --force\n"
    "  --stage ID      the ukf_torque stage to tune when the pipeline has several\n"
    "  --still-velocity RAD_S  a still window has every joint's |dq| at most this (default 0.05)\n"
    "  --still-range RAD       ... and every joint's q within this range (default 0.01)\n"
    "  --still-duration S      ... over at least this long (default 0.2)\n"
    "  --no-still-window       with no still window, estimate the sensor noise over the whole logs (third\n"
    "                  differences / 20: the signals must be smooth at the sample rate) instead of failing\n"
    "  --max-lag STEPS  lags of the increment fits, clock steps (default 30, >= 2)\n"
    "  --settle S      seconds at each log's start left out of the friction residual (default 0.5)\n"
    "  -h, --help      this help\n"
    "\n" CLI_EXIT_CODES_HELP;

static int make_registry(rb_registry **reg, rb_err *err)
{
    int rc = rb_registry_new(reg, err);
    return rc == RB_OK ? rb_estimators_register(*reg, err) : rc;
}

static int cmd_tune_ukf(int argc, char **argv)
{
    static const struct option options[] = {{"pipeline", required_argument, NULL, 'p'},
                                            {"output", required_argument, NULL, 'o'},
                                            {"force", no_argument, NULL, 'f'},
                                            {"stage", required_argument, NULL, 's'},
                                            {"still-velocity", required_argument, NULL, 'v'},
                                            {"still-range", required_argument, NULL, 'r'},
                                            {"still-duration", required_argument, NULL, 'd'},
                                            {"no-still-window", no_argument, NULL, 'n'},
                                            {"max-lag", required_argument, NULL, 'm'},
                                            {"settle", required_argument, NULL, 'S'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    const char *cmd = "tune ukf-torque", *pipeline = NULL, *output = NULL;
    bool force = false;
    rb_ukft_tune_opts o;
    rb_ukft_tune_opts_init(&o);
    double v;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
        switch (opt) {
        case 'p': pipeline = optarg; break;
        case 'o': output = optarg; break;
        case 'f': force = true; break;
        case 's': o.stage = optarg; break;
        case 'n': o.allow_no_still = true; break;
        case 'v':
            if (!cli_parse_double(optarg, &o.still_velocity) || o.still_velocity < 0)
                return cli_usage_error(cmd, "--still-velocity needs a number >= 0, got '%s'", optarg);
            break;
        case 'r':
            if (!cli_parse_double(optarg, &o.still_range) || o.still_range < 0)
                return cli_usage_error(cmd, "--still-range needs a number >= 0, got '%s'", optarg);
            break;
        case 'd':
            if (!parse_positive(optarg, &o.still_duration))
                return cli_usage_error(cmd, "--still-duration needs a positive number, got '%s'", optarg);
            break;
        case 'm':
            if (!cli_parse_double(optarg, &v) || v < 2 || v > 100000 || v != (double)(size_t)v)
                return cli_usage_error(cmd, "--max-lag needs an integer >= 2, got '%s'", optarg);
            o.max_lag = (size_t)v;
            break;
        case 'S':
            if (!cli_parse_double(optarg, &o.settle) || o.settle < 0)
                return cli_usage_error(cmd, "--settle needs a number of seconds >= 0, got '%s'", optarg);
            break;
        case 'h': fputs(UKF_HELP, stdout); return CLI_EXIT_OK;
        case ':': return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error(cmd, "missing LOG");
    if (!pipeline)
        return cli_usage_error(cmd, "missing --pipeline");
    rb_err err;
    rb_registry *reg = NULL;
    rb_ukft_tune_result *res = NULL;
    int rc = output ? rb_outfile_check(output, force, &err) : RB_OK;
    if (rc == RB_OK)
        rc = make_registry(&reg, &err);
    if (rc == RB_OK)
        rc = rb_ukft_tune(pipeline, reg, (const char *const *)argv + optind, (size_t)(argc - optind), &o, &res, &err);
    if (rc == RB_OK) {
        printf("ukf-torque tuning of stage %s in %s on %zu log%s (clock %.6g s): %zu still windows, %zu samples\n",
               res->stage_id, pipeline, res->n_logs, res->n_logs > 1 ? "s" : "", res->dt, res->n_still_windows,
               res->n_still_samples);
        for (size_t i = 0; i < res->n_params; i++) {
            char b[32];
            printf("%s = [", res->params[i].name);
            for (size_t k = 0; k < res->params[i].count; k++)
                printf("%s%s", k ? ", " : "", rb_format_double(res->params[i].values[k], b));
            printf("]  <- %s\n", res->params[i].why);
        }
        printf("kept:");
        for (size_t i = 0; i < res->n_kept; i++)
            printf(" %s", res->kept[i]);
        printf("\n");
        if (output) {
            rc = rb_ukft_tune_write(res, output, force, &err);
            if (rc == RB_OK)
                printf("wrote %s\n", output);
        }
    }
    rb_ukft_tune_result_free(res);
    rb_registry_free(reg);
    return rc == RB_OK ? CLI_EXIT_OK : cli_fail(&err);
}

int cmd_tune(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error("tune", "missing ESTIMATOR (kf-derivative, ukf-torque)");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(TUNE_HELP, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "kf-derivative") == 0)
        return cmd_tune_kfd(argc - 1, argv + 1);
    if (strcmp(argv[1], "ukf-torque") == 0)
        return cmd_tune_ukf(argc - 1, argv + 1);
    return cli_usage_error("tune", "unknown estimator '%s' (known: kf-derivative, ukf-torque)", argv[1]);
}
