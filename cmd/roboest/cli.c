#include "cli.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_exit_code(int status)
{
    switch (status) {
    case RB_OK: return CLI_EXIT_OK;
    case RB_ENOTFOUND:
    case RB_EINPUT:
    case RB_ECONFIG:
    case RB_EDIM: return CLI_EXIT_INPUT;
    case RB_ENUMERIC: return CLI_EXIT_NUMERIC;
    case RB_EIO:
    case RB_EEXISTS: return CLI_EXIT_OUTPUT;
    default: return CLI_EXIT_INTERNAL;
    }
}

int cli_fail(const rb_err *err)
{
    fprintf(stderr, "roboest: %s\n", err->msg[0] ? err->msg : rb_status_name(err->code));
    return cli_exit_code(err->code);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "roboest%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'roboest%s%s --help')\n", cmd ? " " : "", cmd ? cmd : "");
    va_end(ap);
    return CLI_EXIT_USAGE;
}

int cli_print_json(cJSON *doc)
{
    char *text = doc ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (!text) {
        fputs("roboest: out of memory\n", stderr);
        return CLI_EXIT_INTERNAL;
    }
    puts(text);
    cJSON_free(text);
    return CLI_EXIT_OK;
}

bool cli_parse_double(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v))
        return false;
    *out = v;
    return true;
}

void cli_progress_init(cli_progress *p, const char *label, bool quiet)
{
    p->enabled = !quiet && isatty(STDERR_FILENO);
    p->label = label;
    p->seen = false;
}

int cli_progress_update(void *user, size_t done, size_t total)
{
    cli_progress *p = user;
    if (!p->enabled || total == 0)
        return 0;
    double now = rb_monotonic_seconds();
    if (!p->seen || done < p->done_last) { /* first report, or the next log began */
        p->seen = true;
        p->t_first = now;
        p->done_first = done;
    }
    p->done_last = done;
    double frac = (double)done / (double)total;
    double elapsed = now - p->t_first;
    double rate = elapsed > 0 ? (double)(done - p->done_first) / elapsed : 0;
    double left = rate > 0 ? (double)(total - done) / rate : 0;
    enum { WIDTH = 30 };
    char bar[WIDTH + 1];
    int filled = (int)(frac * WIDTH);
    for (int i = 0; i < WIDTH; i++)
        bar[i] = i < filled ? '=' : (i == filled ? '>' : ' ');
    bar[WIDTH] = '\0';
    fprintf(stderr, "\r%s [%s] %3.0f%% %zu/%zu samples", p->label, bar, 100 * frac, done, total);
    if (rate > 0)
        fprintf(stderr, ", %.3g samples/s, %.0f s left", rate, left);
    fputs("   ", stderr);
    fflush(stderr);
    return 0;
}

void cli_progress_done(cli_progress *p)
{
    if (p->enabled) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
}

bool cli_parse_threads(const char *s, size_t *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < 1 || v > 1024)
        return false;
    *out = (size_t)v;
    return true;
}

void cli_runs_init(cli_runs *r, const char *label, bool quiet)
{
    r->enabled = !quiet && isatty(STDERR_FILENO);
    r->label = label;
}

int cli_runs_update(void *user, size_t done, size_t total)
{
    const cli_runs *r = user;
    if (r->enabled) {
        fprintf(stderr, "\r%s: %zu/%zu runs done", r->label, done, total);
        fflush(stderr);
    }
    return 0;
}

void cli_runs_done(const cli_runs *r)
{
    if (r->enabled)
        fputs("\r\033[K", stderr);
}

/* Async-signal-safe: the temporaries go, then the signal is delivered again with its default action
 * (SA_RESETHAND), so the process ends as killed by it (status 128 + signal in a shell). */
static void on_stop_signal(int sig)
{
    rb_outfiles_unlink_all();
    raise(sig);
}

void cli_guard_outputs(void)
{
    rb_inputs_guard_enable();
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop_signal;
        sa.sa_flags = SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        /* A signal ignored by whoever started us (nohup, a background job) stays ignored. */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

int cli_parse_config_args(int argc, char **argv, const char *cmd, const char *help, cli_config_args *a)
{
    static const struct option options[] = {{"output", required_argument, NULL, 'o'},
                                            {"force", no_argument, NULL, 'F'},
                                            {"quiet", no_argument, NULL, 'q'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    *a = (cli_config_args){NULL, ".", false, false};
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":o:qh", options, NULL)) != -1) {
        switch (opt) {
        case 'o': a->out_dir = optarg; break;
        case 'F': a->force = true; break;
        case 'q': a->quiet = true; break;
        case 'h': fputs(help, stdout); return CLI_EXIT_OK;
        case ':': return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error(cmd, "missing CONFIG.json");
    if (optind + 1 < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
    a->config = argv[optind];
    return -1;
}
