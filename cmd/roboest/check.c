/* roboest check: gate a CI job on rules over a compare report (or a run report's fault counts). */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "roboest/experiments.h"

/* Reports are at most megabytes; the bound keeps a wrong path (a device, a huge file) out of memory. */
#define REPORT_MAX_BYTES ((size_t)1 << 30)

static const char *const CHECK_HELP =
    "Usage: roboest check REPORT.json [RULES] [--rule RULE]... [--junit FILE] [--force] [-q]\n"
    "\n"
    "Evaluates rules on a report written by 'roboest compare' (or by 'roboest run': its fault counts)\n"
    "and prints PASS or FAIL for each.\n"
    "RULES is a file with one rule per line ('#' starts a comment); --rule adds one more (repeatable).\n"
    "A rule compares two operands with <, <=, >, >=, == or !=; an operand is a number or\n"
    "VARIANT.STAT[JOINT].FIELD, where [JOINT] (default: all joints) and .FIELD (mean by default; sd,\n"
    "lo, hi, min, max: the spread, the bootstrap interval and the extremes across logs; or the name of\n"
    "one of the report's logs: the value on that log) are optional:\n"
    "  ukf_pinn.rmse < rnea.rmse\n"
    "  ukf_pinn.rmse < 1.2\n"
    "  ukf_pinn.mae[r_knee].hi <= 0.5\n"
    "  ukf_pinn.rmse.leg_pole_free < rnea.rmse.leg_pole_free\n"
    "Either side may be two operands joined by * or / (a scaled bound, a ratio of two variants'\n"
    "values; a division by zero fails the rule):\n"
    "  kf.rmse[torso] <= 0.1 * 5\n"
    "  noadapt.rmse / adapt.rmse >= 2.0\n"
    "or, on a run report with the fault monitor's section, faults.KIND[NAME] with KIND total, stuck,\n"
    "saturated or outlier and NAME (optional) a channel, a signal, or either with /ELEMENT:\n"
    "  faults.total == 0\n"
    "  faults.stuck[motors_state/currents/elbow] == 0\n"
    "and, on a confusion table (a suite's \"confusion\", a run metric's \"labels\"), NAME.confusion[TRUE]\n"
    "[PREDICTED] (a row percentage; .count: the count) and NAME.utilization, NAME a variant or metric:\n"
    "  ratio_t.confusion[slipping][slipping] >= 70\n"
    "  slip.utilization < 80\n"
    "Exit code 0 when every rule holds, 6 when one does not; an unknown variant, statistic or joint\n"
    "or a malformed rule is an input error (3) and writes nothing.\n"
    "\n"
    "  --rule RULE    a rule on the command line (after those of RULES)\n"
    "  --junit FILE   also write a JUnit XML file (one test case per rule) for CI systems\n"
    "  --force        overwrite an existing JUnit file\n"
    "  -q, --quiet    print only the failing rules\n"
    "  -h, --help     this help\n"
    "\n" CLI_EXIT_CODES_HELP;

typedef struct rule_list {
    char **rules, **wheres; /* from the file (owned) */
    size_t n_file;
    const char **all, **all_wheres;
    char (*labels)[32];
    size_t n;
} rule_list;

static int gather(rule_list *rl, const char *rules_file, char **inline_rules, size_t n_inline, rb_err *err)
{
    if (rules_file) {
        int rc = rb_rules_read(rules_file, &rl->rules, &rl->wheres, &rl->n_file, err);
        if (rc)
            return rc;
    }
    rl->n = rl->n_file + n_inline;
    rl->all = rb_calloc(rl->n, sizeof *rl->all);
    rl->all_wheres = rb_calloc(rl->n, sizeof *rl->all_wheres);
    rl->labels = rb_calloc(n_inline ? n_inline : 1, sizeof *rl->labels);
    if (!rl->all || !rl->all_wheres || !rl->labels)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t i = 0; i < rl->n_file; i++) {
        rl->all[i] = rl->rules[i];
        rl->all_wheres[i] = rl->wheres[i];
    }
    for (size_t i = 0; i < n_inline; i++) {
        snprintf(rl->labels[i], sizeof rl->labels[i], "--rule %zu", i + 1);
        rl->all[rl->n_file + i] = inline_rules[i];
        rl->all_wheres[rl->n_file + i] = rl->labels[i];
    }
    return RB_OK;
}

static void free_rules(rule_list *rl)
{
    rb_rules_free(rl->rules, rl->wheres, rl->n_file);
    rb_free(rl->all);
    rb_free(rl->all_wheres);
    rb_free(rl->labels);
}

static void print_results(const rb_check *c, bool quiet)
{
    for (size_t i = 0; i < c->n_rules; i++) {
        const rb_rule_result *r = &c->rules[i];
        if (!quiet || !r->passed)
            printf("%s  %s  (%s)\n", r->passed ? "PASS" : "FAIL", r->message, r->where);
    }
    printf("rules: %zu hold, %zu fail\n", c->n_rules - c->n_failed, c->n_failed);
}

int cmd_check(int argc, char **argv)
{
    static const struct option options[] = {
        {"rule", required_argument, NULL, 'r'}, {"junit", required_argument, NULL, 'j'},
        {"force", no_argument, NULL, 'F'},      {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0}};
    char **inline_rules = rb_calloc((size_t)argc, sizeof *inline_rules);
    size_t n_inline = 0;
    const char *junit = NULL;
    bool force = false, quiet = false;
    int opt, usage = 0;
    optind = 1;
    opterr = 0;
    if (!inline_rules) {
        fputs("roboest: out of memory\n", stderr);
        return CLI_EXIT_INTERNAL;
    }
    while (!usage && (opt = getopt_long(argc, argv, ":r:qh", options, NULL)) != -1) {
        switch (opt) {
        case 'r': inline_rules[n_inline++] = optarg; break;
        case 'j': junit = optarg; break;
        case 'F': force = true; break;
        case 'q': quiet = true; break;
        case 'h':
            fputs(CHECK_HELP, stdout);
            rb_free(inline_rules);
            return CLI_EXIT_OK;
        case ':': usage = cli_usage_error("check", "option '%s' needs a value", argv[optind - 1]); break;
        default: usage = cli_usage_error("check", "unknown option '%s'", argv[optind - 1]); break;
        }
    }
    if (!usage && optind >= argc)
        usage = cli_usage_error("check", "missing REPORT.json");
    if (!usage && argc - optind > 2)
        usage = cli_usage_error("check", "unexpected argument '%s'", argv[optind + 2]);
    if (!usage && argc - optind < 2 && n_inline == 0)
        usage = cli_usage_error("check", "no rules: give a RULES file or --rule");
    if (usage) {
        rb_free(inline_rules);
        return usage;
    }
    const char *report = argv[optind], *rules_file = argc - optind == 2 ? argv[optind + 1] : NULL;

    rb_err err;
    rule_list rl = {0};
    rb_check *c = NULL;
    char *text = NULL, *xml = NULL;
    size_t len = 0;
    int rc = gather(&rl, rules_file, inline_rules, n_inline, &err);
    if (rc == RB_OK)
        rc = rb_file_read_all(report, REPORT_MAX_BYTES, &text, &len, &err);
    if (rc == RB_OK)
        rc = rb_check_rules(text, len, report, rl.all, rl.all_wheres, rl.n, &c, &err);
    if (rc == RB_OK && junit) {
        char name[512];
        snprintf(name, sizeof name, "roboest check %s", report);
        rc = rb_check_junit(c, name, &xml, &err);
        if (rc == RB_OK)
            rc = rb_text_write(xml, junit, force, &err);
    }
    if (rc == RB_OK)
        print_results(c, quiet);
    int code = rc != RB_OK ? cli_fail(&err) : c->n_failed ? CLI_EXIT_CHECK : CLI_EXIT_OK;
    rb_free(xml);
    rb_free(text);
    rb_check_free(c);
    free_rules(&rl);
    rb_free(inline_rules);
    return code;
}
