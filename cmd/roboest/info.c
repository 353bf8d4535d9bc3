/* roboest info: what a log holds. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "roboest/io.h"

static const char *const INFO_HELP =
    "Usage: roboest info [--json] [--gap-factor X] LOG\n"
    "\n"
    "Lists the channels of a log: samples, elements, element names and units, rate, time span,\n"
    "gaps (intervals longer than X times the median interval; default X = 3), non-monotonic\n"
    "timestamps and non-finite sample counts. The rate, in Hz, is the number of sample intervals\n"
    "over their total length, gaps left out (from the span, not one rounded interval: a 1 kHz log\n"
    "with epoch timestamps reads 1000 Hz; timestamps are seconds; a channel whose timestamps look like nanoseconds or "
    "microseconds\n"
    "gets a line saying so, and \"time_hint\" in --json). Entries of the file that are not\n"
    "channels are listed as skipped, with the reason (a struct where data should be, zero\n"
    "elements, a matrix whose length is not the time vector's, ...); a file with no channel at\n"
    "all is an input error naming the first.\n"
    "\n"
    "CSV: a header row (time first, then `channel:element [unit]` or `channel` columns; each\n"
    "channel's columns together, no element twice), then one row per sample. Accepted: a UTF-8\n"
    "BOM, LF, CRLF or CR-only line ends, RFC 4180 quotes (\"a,b\", \"\" for a quote, line ends inside\n"
    "quotes; quoted numbers are numbers), trailing commas (empty trailing columns, which must stay\n"
    "empty). Errors: an empty column name inside the header (named by its number), duplicate\n"
    "columns or elements (both column numbers), text that is not UTF-8, a NUL byte.\n"
    "\n"
    "  --json          print one JSON object instead of a table:\n"
    "                  {\"format\": ..., \"root\": ..., \"attributes\": {...}, \"channels\": [{\"name\",\n"
    "                  \"samples\", \"elements\", \"element_names\", \"units\", \"t_first\", \"t_last\",\n"
    "                  \"rate\", \"gaps\", \"time_error\", \"min\", \"max\", \"mean\", \"nan_count\"}],\n"
    "                  \"skipped\": [{\"name\", \"reason\"}]} (skipped only when entries were)\n"
    "                  names are slash paths below the root struct; min, max and mean are over the\n"
    "                  finite samples of each element (null when it has none); nan_count counts NaN\n"
    "                  and infinite samples; time_error is null or the timestamp problem found\n"
    "  --gap-factor X  gap threshold as a multiple of the median sample interval\n"
    "  -h, --help      this help\n"
    "\n" CLI_EXIT_CODES_HELP;

typedef struct element_stats {
    double min, max, mean;
    size_t n_nonfinite;
} element_stats;

static void element_summary(const rb_channel *ch, size_t i, element_stats *s)
{
    double sum = 0;
    size_t n_finite = 0;
    s->min = INFINITY;
    s->max = -INFINITY;
    s->n_nonfinite = 0;
    for (size_t t = 0; t < ch->n_samples; t++) {
        double v = ch->data[t * ch->n_elements + i];
        if (!isfinite(v)) {
            s->n_nonfinite++;
            continue;
        }
        s->min = v < s->min ? v : s->min;
        s->max = v > s->max ? v : s->max;
        sum += v;
        n_finite++;
    }
    s->mean = n_finite ? sum / (double)n_finite : NAN;
    if (!n_finite)
        s->min = s->max = NAN;
}

/* A number printed to round-trip (cJSON's own printer may drop the 16th and 17th digits), or null when
 * it is not finite (documented per field). */
static cJSON *json_number(double v)
{
    char buf[32];
    return isfinite(v) ? cJSON_CreateRaw(rb_format_double(v, buf)) : cJSON_CreateNull();
}

static cJSON *channel_json(const rb_channel *ch, double gap_factor)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", ch->name);
    cJSON_AddItemToObject(o, "samples", json_number((double)ch->n_samples));
    cJSON_AddItemToObject(o, "elements", json_number((double)ch->n_elements));
    cJSON *names = cJSON_AddArrayToObject(o, "element_names");
    cJSON *units = cJSON_AddArrayToObject(o, "units");
    for (size_t i = 0; i < ch->n_elements; i++) {
        cJSON_AddItemToArray(names, cJSON_CreateString(ch->element_names[i]));
        cJSON_AddItemToArray(units, cJSON_CreateString(ch->units[i]));
    }
    rb_time_report rep;
    rb_err err;
    int time_rc = rb_channel_check_time(ch, gap_factor, &rep, &err);
    cJSON_AddItemToObject(o, "t_first", json_number(ch->n_samples ? ch->time[0] : NAN));
    cJSON_AddItemToObject(o, "t_last", json_number(ch->n_samples ? ch->time[ch->n_samples - 1] : NAN));
    cJSON_AddItemToObject(o, "rate", json_number(time_rc == RB_OK ? rep.rate : NAN));
    cJSON_AddItemToObject(o, "gaps", json_number(time_rc == RB_OK ? (double)rep.n_gaps : 0));
    cJSON_AddItemToObject(o, "time_error", time_rc == RB_OK ? cJSON_CreateNull() : cJSON_CreateString(err.msg));
    char hint[96];
    if (time_rc == RB_OK && rb_time_units_hint(&rep, hint, sizeof hint)) /* only then: other logs keep their bytes */
        cJSON_AddStringToObject(o, "time_hint", hint);
    cJSON *mins = cJSON_AddArrayToObject(o, "min");
    cJSON *maxs = cJSON_AddArrayToObject(o, "max");
    cJSON *means = cJSON_AddArrayToObject(o, "mean");
    cJSON *nans = cJSON_AddArrayToObject(o, "nan_count");
    for (size_t i = 0; i < ch->n_elements; i++) {
        element_stats s;
        element_summary(ch, i, &s);
        cJSON_AddItemToArray(mins, json_number(s.min));
        cJSON_AddItemToArray(maxs, json_number(s.max));
        cJSON_AddItemToArray(means, json_number(s.mean));
        cJSON_AddItemToArray(nans, json_number((double)s.n_nonfinite));
    }
    return o;
}

static int print_json(const rb_log *log, double gap_factor)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", rb_log_format_name(log->format));
    cJSON_AddItemToObject(root, "root", log->root_name ? cJSON_CreateString(log->root_name) : cJSON_CreateNull());
    cJSON *attrs = cJSON_AddObjectToObject(root, "attributes");
    for (size_t a = 0; a < log->n_attrs; a++)
        cJSON_AddStringToObject(attrs, log->attrs[a].key, log->attrs[a].value);
    cJSON *channels = cJSON_AddArrayToObject(root, "channels");
    for (size_t c = 0; c < log->n_channels; c++)
        cJSON_AddItemToArray(channels, channel_json(&log->channels[c], gap_factor));
    cJSON *skipped = log->n_skipped ? cJSON_AddArrayToObject(root, "skipped") : NULL;
    for (size_t k = 0; k < log->n_skipped; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", log->skipped[k].name);
        cJSON_AddStringToObject(o, "reason", log->skipped[k].reason);
        cJSON_AddItemToArray(skipped, o);
    }
    return cli_print_json(root);
}

static void print_table(const char *path, const rb_log *log, double gap_factor)
{
    printf("%s: %s", path, rb_log_format_name(log->format));
    if (log->root_name)
        printf(", root struct %s", log->root_name);
    printf(", %zu channels", log->n_channels);
    if (log->n_skipped)
        printf(", %zu skipped", log->n_skipped);
    printf("\n");
    for (size_t a = 0; a < log->n_attrs; a++)
        printf("  %s: %s\n", log->attrs[a].key, log->attrs[a].value);
    printf("\n%-40s %9s %8s %10s %12s %6s %9s\n", "channel", "samples", "elements", "rate [Hz]", "duration [s]", "gaps",
           "non-finite");
    for (size_t c = 0; c < log->n_channels; c++) {
        const rb_channel *ch = &log->channels[c];
        rb_time_report rep;
        rb_err err;
        int time_rc = rb_channel_check_time(ch, gap_factor, &rep, &err);
        size_t nonfinite = 0;
        for (size_t i = 0; i < ch->n_elements; i++) {
            element_stats s;
            element_summary(ch, i, &s);
            nonfinite += s.n_nonfinite;
        }
        double duration = ch->n_samples ? ch->time[ch->n_samples - 1] - ch->time[0] : 0;
        printf("%-40s %9zu %8zu %10.4g %12.6g %6zu %9zu\n", ch->name, ch->n_samples, ch->n_elements,
               time_rc == RB_OK ? rep.rate : NAN, duration, time_rc == RB_OK ? rep.n_gaps : 0, nonfinite);
        char hint[96];
        if (time_rc != RB_OK)
            printf("  timestamps: %s\n", err.msg);
        else if (rb_time_units_hint(&rep, hint, sizeof hint))
            printf("  %s\n", hint);
        if (time_rc == RB_OK && rep.n_gaps)
            printf("  gaps: %zu, longest %.6g s, first before sample %zu\n", rep.n_gaps, rep.max_gap, rep.first_gap);
        printf("  elements:");
        for (size_t i = 0; i < ch->n_elements; i++)
            printf("%s %s%s%s%s", i ? "," : "", ch->element_names[i], ch->units[i][0] ? " [" : "", ch->units[i],
                   ch->units[i][0] ? "]" : "");
        printf("\n");
    }
    if (log->n_skipped)
        printf("\n");
    for (size_t k = 0; k < log->n_skipped; k++)
        printf("skipped: %s (%s)\n", log->skipped[k].name, log->skipped[k].reason);
}

int cmd_info(int argc, char **argv)
{
    static const struct option options[] = {{"json", no_argument, NULL, 'j'},
                                            {"gap-factor", required_argument, NULL, 'g'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    bool json = false;
    double gap_factor = 3.0;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case 'j': json = true; break;
        case 'g':
            if (!cli_parse_double(optarg, &gap_factor) || gap_factor <= 1)
                return cli_usage_error("info", "--gap-factor needs a number above 1, not '%s'", optarg);
            break;
        case 'h': fputs(INFO_HELP, stdout); return CLI_EXIT_OK;
        default: return cli_usage_error("info", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 1)
        return cli_usage_error("info", "expected one LOG, got %d", argc - optind);
    const char *path = argv[optind];
    rb_err err;
    rb_log *log = NULL;
    if (rb_log_read(path, &log, &err) != RB_OK)
        return cli_fail(&err);
    int rc = CLI_EXIT_OK;
    if (json)
        rc = print_json(log, gap_factor);
    else
        print_table(path, log, gap_factor);
    rb_log_free(log);
    return rc;
}
