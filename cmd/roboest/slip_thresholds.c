/* roboest slip-thresholds: the friction thresholds a slip_predictor stage learns on one walk, as the JSON its
 * thresholds_file reads (the thesis's protocol: learn on one walk, predict on another; seed 003 ch. 5). */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "roboest/estimators.h"
#include "roboest/pipeline.h"

static const char *const SLIP_THRESHOLDS_HELP =
    "Usage: roboest slip-thresholds LOG -p PIPELINE.json [--stage ID] [-o FILE] [--force] [-q]\n"
    "\n"
    "Runs the pipeline's slip_predictor stage (thresholds \"learn\") on LOG and prints the friction\n"
    "thresholds it holds at the log's end, per foot and axis, as JSON (the thesis's protocol, seed 003\n"
    "ch. 5: thresholds learned on one walk are used to predict slip on another):\n"
    "  {\"stage\": \"slip_predictor\", \"learned_from\", \"input_sha256\", \"pipeline\", \"unit\", \"feet\",\n"
    "   \"axes\", \"static_friction\", \"stribeck_friction\", \"coulomb_friction\"}\n"
    "(numbers round-trip; one value per foot and axis, feet-major). A stage given\n"
    "  \"thresholds\": \"fixed\", \"thresholds_file\": \"FILE\"\n"
    "with the same feet, axes and unit predicts with them. The stage's output \"thresholds\" must be\n"
    "wired (to any signal name); the pipeline's outputs and reports are not written. A table of the\n"
    "thresholds (F_s, F_st, F_c and F_suf = max(F_c - F_ms, 0)) goes to stderr unless -q.\n"
    "\n"
    "  -p, --pipeline FILE  the pipeline holding the slip_predictor stage (required)\n"
    "  --stage ID           the stage, when the pipeline has several slip_predictor stages\n"
    "  -o, --output FILE    write the JSON there (atomically) instead of stdout\n"
    "  --force              overwrite FILE\n"
    "  -q, --quiet          no table on stderr\n"
    "  -h, --help           this help\n"
    "\n"
    "A pipeline without such a stage, a stage with thresholds \"fixed\" or without its thresholds\n"
    "output wired, or a log the pipeline cannot run is an input error (exit 3) and nothing is written.\n"
    "\n" CLI_EXIT_CODES_HELP;

static int find_stage(const rb_pipeline *p, const char *id, const rb_config_stage **out, rb_err *err)
{
    *out = NULL;
    for (size_t s = 0; s < p->n_stages; s++) {
        const rb_config_stage *st = &p->stages[s];
        if (strcmp(st->type->name, "slip_predictor") != 0 || (id && strcmp(st->id, id) != 0))
            continue;
        if (*out)
            return rb_err_set(err, RB_ECONFIG, "%s: several slip_predictor stages (%s, %s): choose one with --stage",
                              p->config_path, (*out)->id, st->id);
        *out = st;
    }
    if (!*out)
        return rb_err_set(err, RB_ECONFIG, "%s: no slip_predictor stage%s%s", p->config_path, id ? " with id " : "",
                          id ? id : "");
    return RB_OK;
}

static const rb_param_value *param(const rb_config_stage *st, const char *name)
{
    for (size_t i = 0; i < st->type->n_params; i++)
        if (strcmp(st->type->params[i].name, name) == 0)
            return &st->params[i];
    return NULL;
}

/* An array of the thresholds' element j (0 F_s, 1 F_st, 2 F_c) of every foot and axis at the last sample. */
static cJSON *column(const rb_run_signal *thr, size_t n, size_t j)
{
    cJSON *a = cJSON_CreateArray();
    const double *last = thr->data + (n - 1) * thr->width;
    for (size_t i = 0; a && i < thr->width / 4; i++) {
        char buf[40];
        if (!cJSON_AddItemToArray(a, cJSON_CreateRaw(rb_format_double(last[4 * i + j], buf)))) {
            cJSON_Delete(a);
            return NULL;
        }
    }
    return a;
}

static cJSON *strings(const rb_param_value *v)
{
    return cJSON_CreateStringArray((const char *const *)v->strings, (int)v->count);
}

static int document(const rb_pipeline *p, const rb_config_stage *st, const rb_run_result *res, const rb_run_signal *thr,
                    char **text, rb_err *err)
{
    cJSON *doc = cJSON_CreateObject();
    bool ok = doc && cJSON_AddStringToObject(doc, "stage", "slip_predictor") &&
              cJSON_AddStringToObject(doc, "learned_from", res->input) &&
              cJSON_AddStringToObject(doc, "input_sha256", res->input_sha256) &&
              cJSON_AddStringToObject(doc, "pipeline", rb_path_basename(p->config_path)) &&
              cJSON_AddStringToObject(doc, "unit", param(st, "unit")->string) &&
              cJSON_AddItemToObject(doc, "feet", strings(param(st, "feet"))) &&
              cJSON_AddItemToObject(doc, "axes", strings(param(st, "axes")));
    const char *keys[3] = {"static_friction", "stribeck_friction", "coulomb_friction"};
    for (size_t j = 0; ok && j < 3; j++)
        ok = cJSON_AddItemToObject(doc, keys[j], column(thr, res->clock.n, j));
    *text = ok ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (!*text)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    return RB_OK;
}

static void print_table(const rb_run_signal *thr, size_t n, const char *unit)
{
    const double *last = thr->data + (n - 1) * thr->width;
    fprintf(stderr, "%-16s %12s %12s %12s %12s  (%s)\n", "foot/axis", "F_s", "F_st", "F_c", "F_suf",
            strcmp(unit, "ratio") == 0 ? "|F_t| / F_N" : "N");
    for (size_t i = 0; i < thr->width / 4; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s", thr->names[4 * i]);
        char *slash = strrchr(name, '/');
        if (slash)
            *slash = '\0';
        fprintf(stderr, "%-16s %12.6g %12.6g %12.6g %12.6g\n", name, last[4 * i], last[4 * i + 1], last[4 * i + 2],
                last[4 * i + 3]);
    }
}

static int learn(const char *log_path, const char *pipe_path, const char *id, const char *out, bool force, bool quiet,
                 rb_err *err)
{
    rb_registry *reg = NULL;
    rb_pipeline *p = NULL;
    rb_log *log = NULL;
    rb_run_result *res = NULL;
    char *text = NULL;
    const rb_config_stage *st = NULL;
    int rc = rb_registry_new(&reg, err);
    if (!rc)
        rc = rb_estimators_register(reg, err);
    if (!rc)
        rc = rb_pipeline_load(pipe_path, reg, &p, err);
    if (!rc)
        rc = find_stage(p, id, &st, err);
    size_t port = 0;
    while (!rc && strcmp(st->type->outputs[port], "thresholds") != 0)
        port++;
    if (!rc && strcmp(param(st, "thresholds")->string, "learn") != 0)
        rc = rb_err_set(err, RB_ECONFIG, "%s: stage %s has thresholds \"%s\": nothing to learn (give \"learn\")",
                        pipe_path, st->id, param(st, "thresholds")->string);
    if (!rc && !st->out[port])
        rc = rb_err_set(err, RB_ECONFIG, "%s: stage %s: wire its output thresholds (\"out\": {\"thresholds\": ...})",
                        pipe_path, st->id);
    if (!rc) /* the runner then keeps every sample of it */
        p->signal_table[st->out_signal[port]].recorded = true;
    if (!rc)
        rc = rb_log_read(log_path, &log, err);
    if (!rc)
        rc = rb_pipeline_run_log(p, log, &log_path, 1, NULL, &res, err);
    const rb_run_signal *thr = rc ? NULL : rb_run_result_signal(res, st->out[port]);
    if (!rc && (!thr || res->clock.n == 0))
        rc = rb_err_set(err, RB_EINPUT, "%s: no sample of the thresholds", log_path);
    if (!rc)
        rc = document(p, st, res, thr, &text, err);
    if (!rc && !quiet)
        print_table(thr, res->clock.n, param(st, "unit")->string);
    if (!rc && out) {
        char *line = rb_asprintf("%s\n", text);
        rc = line ? rb_text_write(line, out, force, err) : rb_err_set(err, RB_ENOMEM, "out of memory");
        rb_free(line);
    } else if (!rc) {
        puts(text);
    }
    cJSON_free(text);
    rb_run_result_free(res);
    rb_log_free(log);
    rb_pipeline_free(p);
    rb_registry_free(reg);
    return rc;
}

int cmd_slip_thresholds(int argc, char **argv)
{
    static const struct option options[] = {{"pipeline", required_argument, NULL, 'p'},
                                            {"stage", required_argument, NULL, 's'},
                                            {"output", required_argument, NULL, 'o'},
                                            {"force", no_argument, NULL, 'F'},
                                            {"quiet", no_argument, NULL, 'q'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    const char *pipe_path = NULL, *stage = NULL, *out = NULL;
    bool force = false, quiet = false;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":p:o:qh", options, NULL)) != -1) {
        switch (opt) {
        case 'p': pipe_path = optarg; break;
        case 's': stage = optarg; break;
        case 'o': out = optarg; break;
        case 'F': force = true; break;
        case 'q': quiet = true; break;
        case 'h': fputs(SLIP_THRESHOLDS_HELP, stdout); return CLI_EXIT_OK;
        case ':': return cli_usage_error("slip-thresholds", "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("slip-thresholds", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error("slip-thresholds", "missing LOG");
    if (optind + 1 < argc)
        return cli_usage_error("slip-thresholds", "unexpected argument '%s'", argv[optind + 1]);
    if (!pipe_path)
        return cli_usage_error("slip-thresholds", "missing -p PIPELINE.json (the slip_predictor stage to learn with)");
    rb_err err;
    int rc = learn(argv[optind], pipe_path, stage, out, force, quiet, &err);
    return rc == RB_OK ? CLI_EXIT_OK : cli_fail(&err);
}
