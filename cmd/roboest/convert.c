/* roboest convert: any supported log format to any other. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "roboest/io.h"

static const char *const CONVERT_HELP =
    "Usage: roboest convert LOG [LOG...] -o OUT [--format FMT] [--root NAME] [--rate HZ] [--force]\n"
    "\n"
    "Reads LOG (any supported layout, detected by content) and writes every channel to OUT.\n"
    "Several LOGs are one session split over files (as the robot logger does every 30 min):\n"
    "their samples are concatenated channel by channel, in the order given.\n"
    "The output records the roboest version and the input files' SHA-256 checksums.\n"
    "Entries of LOG that are not channels are not converted: a note on stderr says how many\n"
    "(`roboest info LOG` lists them); a log with no channel is an input error, and nothing is written.\n"
    "\n"
    "  -o, --output OUT  output file; nothing is written unless the conversion succeeds\n"
    "  --format FMT      h5 (roboest HDF5 layout), mat (robot-logger layout, MATLAB v7.3),\n"
    "                    mat5 (robot-logger layout, MATLAB v7 compressed) or csv;\n"
    "                    default from OUT's extension (.h5/.hdf5, .mat, .csv)\n"
    "  --root NAME       root struct name for .mat output (default robot_logger_device)\n"
    "  --rate HZ         resample every channel (linear interpolation) onto one uniform clock\n"
    "                    spanning the time all channels cover; CSV output needs channels on one\n"
    "                    clock, so logger files with per-channel timestamps need this. A clock\n"
    "                    over 1000 times longer than the longest channel (and over 1e7 samples)\n"
    "                    is an input error naming the likely cause (timestamps in nanoseconds)\n"
    "  --force           overwrite OUT if it exists\n"
    "  -h, --help        this help\n"
    "\n" CLI_EXIT_CODES_HELP;

static int parse_format(const char *s, rb_out_format *fmt)
{
    static const struct {
        const char *name;
        rb_out_format fmt;
    } names[] = {
        {"h5", RB_OUT_H5}, {"mat", RB_OUT_MAT73}, {"mat73", RB_OUT_MAT73}, {"mat5", RB_OUT_MAT5}, {"csv", RB_OUT_CSV}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) {
            *fmt = names[i].fmt;
            return 0;
        }
    return -1;
}

int cmd_convert(int argc, char **argv)
{
    static const struct option options[] = {{"output", required_argument, NULL, 'o'},
                                            {"format", required_argument, NULL, 'f'},
                                            {"root", required_argument, NULL, 'r'},
                                            {"rate", required_argument, NULL, 'R'},
                                            {"force", no_argument, NULL, 'F'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    const char *out_path = NULL, *format = NULL, *root = NULL;
    double rate = 0;
    bool force = false;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "o:h", options, NULL)) != -1) {
        switch (opt) {
        case 'o': out_path = optarg; break;
        case 'f': format = optarg; break;
        case 'r': root = optarg; break;
        case 'R':
            if (!cli_parse_double(optarg, &rate) || rate <= 0)
                return cli_usage_error("convert", "--rate needs a positive number of Hz, not '%s'", optarg);
            break;
        case 'F': force = true; break;
        case 'h': fputs(CONVERT_HELP, stdout); return CLI_EXIT_OK;
        case ':':
        case '?':
        default:
            if (optopt && strchr("o", optopt))
                return cli_usage_error("convert", "option -%c needs a value", optopt);
            return cli_usage_error("convert", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error("convert", "missing input LOG");
    if (!out_path)
        return cli_usage_error("convert", "missing -o OUT");
    rb_err err;
    rb_write_opts wopts = {RB_OUT_H5, force, root};
    if (format && parse_format(format, &wopts.format) != 0)
        return cli_usage_error("convert", "unknown --format '%s' (h5, mat, mat5 or csv)", format);
    if (!format && rb_out_format_from_path(out_path, &wopts.format, &err) != RB_OK)
        return cli_usage_error("convert", "%s (or give --format)", err.msg);

    rb_log *log = NULL, *resampled = NULL;
    rb_session_id id = {NULL, NULL};
    rb_provenance pv = {0, NULL, NULL};
    int rc = rb_log_read_session((const char *const *)argv + optind, (size_t)(argc - optind), &log, &id, &err);
    if (rc == RB_OK && log->n_skipped)
        fprintf(stderr, "roboest: note: %zu entries of %s are not channels and are not converted (first: %s: %s)\n",
                log->n_skipped, argv[optind], log->skipped[0].name, log->skipped[0].reason);
    if (rc == RB_OK)
        rc = rb_session_provenance(&id, &pv, &err);
    if (rc == RB_OK)
        rc = rb_log_set_provenance(log, &pv, &err);
    rb_provenance_free(&pv);
    rb_session_id_free(&id);
    if (rc == RB_OK && rate > 0)
        rc = rb_log_resample(log, rate, &resampled, &err);
    if (rc == RB_OK)
        rc = rb_log_write(resampled ? resampled : log, out_path, &wopts, &err);
    rb_log_free(log);
    rb_log_free(resampled);
    return rc == RB_OK ? CLI_EXIT_OK : cli_fail(&err);
}
