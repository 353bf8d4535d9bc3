/* Comparison suites: loading (messages with file:line:col, key paths, suggestions), running (statistics
 * computable by hand, joints matched by name or position, the first failure in pair order whatever the
 * timing, the same bytes for any thread count), writing all or nothing, and rules checked on the report. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "roboest/estimators.h"
#include "roboest/experiments.h"
#include "support.h"

#define T0 50.0
#define RATE 100.0
#define N_SAMPLES 1001 /* 10 s */

static const double OFFSETS[2][2] = {{0.1, -0.2}, {0.3, 0.4}}; /* log a, log b; joints j1, j2 */

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* truth/tau = (sin t, cos t); sensors/tau = truth + the log's offsets; sensors/unnamed the same with
 * elements "0", "1"; truth/pushes is 3 inside two stretches. Log b lacks `drop` (may be NULL). */
static void write_log(const char *dir, const char *name, const double off[2], const char *drop)
{
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    const char *chans[] = {"truth/tau", "sensors/tau", "sensors/unnamed", "truth/pushes"};
    for (int c = 0; c < 4; c++) {
        if (drop && strcmp(drop, chans[c]) == 0)
            continue;
        size_t n = c == 3 ? 1 : 2;
        rb_channel *ch;
        cr_assert_eq(rb_log_add_channel(log, chans[c], N_SAMPLES, n, &ch, &err), RB_OK);
        for (size_t k = 0; k < N_SAMPLES; k++) {
            double t = T0 + (double)k / RATE;
            ch->time[k] = t;
            if (c == 3) {
                ch->data[k] = (t > 52 && t < 53) || (t > 56 && t < 56.5) ? 3 : 0;
                continue;
            }
            for (size_t i = 0; i < 2; i++)
                ch->data[k * 2 + i] = (i ? cos(t) : sin(t)) + (c ? off[i] : 0);
        }
        if (c < 2) {
            cr_assert_eq(rb_channel_set_name(ch, 0, "j1", &err), RB_OK);
            cr_assert_eq(rb_channel_set_name(ch, 1, "j2", &err), RB_OK);
            cr_assert_eq(rb_channel_set_unit(ch, 0, "N m", &err), RB_OK);
        }
    }
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert_eq(rb_log_write(log, path, NULL, &err), RB_OK, "%s", err.msg);
    rb_log_free(log);
}

/* raw: the measured channel itself; swapped: its elements in the other order (matched by name); lp: a
 * stage output with numbered elements (matched by position); clocks at 50 Hz, unlike the logs. */
static void write_pipelines(const char *dir)
{
    write_text(dir, "raw.json",
               "{\"clock\": {\"rate\": 50}, \"signals\": {\"tau_hat\": {\"channel\": \"sensors/tau\"}}}\n");
    write_text(dir, "swapped.json",
               "{\"clock\": {\"rate\": 50}, \"signals\": {\"tau_hat\": {\"channel\": \"sensors/tau\", "
               "\"elements\": [\"j2\", \"j1\"]}}}\n");
    write_text(dir, "lp.json",
               "{\"clock\": {\"rate\": 50}, \"signals\": {\"x\": {\"channel\": \"sensors/unnamed\"}},\n"
               " \"stages\": [{\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"x\"}, \"out\": {\"y\": "
               "\"tau_hat\"}, \"params\": {\"cutoff_hz\": 1e9}}]}\n");
}

static const char *const SUITE =
    "{\n"
    "  \"name\": \"offsets\",\n"
    "  \"variants\": [\n"
    "    {\"name\": \"raw\", \"pipeline\": \"raw.json\", \"estimate\": \"tau_hat\"},\n"
    "    {\"name\": \"swapped\", \"pipeline\": \"swapped.json\", \"estimate\": \"tau_hat\"},\n"
    "    {\"name\": \"lp\", \"pipeline\": \"lp.json\", \"estimate\": \"tau_hat\"}\n"
    "  ],\n"
    "  \"logs\": [\"a.h5\", \"b.h5\"],\n"
    "  \"reference\": \"truth/tau\",\n"
    "  \"window\": [51, 55],\n"
    "  \"statistics\": [\"mse\", \"rmse\", \"mae\", \"max_abs\"],\n"
    "  \"bootstrap\": {\"samples\": 3000, \"seed\": 4},\n"
    "  \"figures\": {\"traces\": [{\"joint\": \"j2\", \"log\": \"b\"}], \"contact\": {\"channel\": \"truth/pushes\"}}\n"
    "}\n";

typedef struct setup {
    char *dir;
    rb_registry *reg;
} setup;

static setup make_setup(const char *drop_in_b)
{
    setup s = {test_temp_dir(), NULL};
    rb_err err;
    cr_assert_eq(rb_registry_new(&s.reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(s.reg, &err), RB_OK);
    write_log(s.dir, "a.h5", OFFSETS[0], NULL);
    write_log(s.dir, "b.h5", OFFSETS[1], drop_in_b);
    write_pipelines(s.dir);
    return s;
}

static void free_setup(setup *s)
{
    rb_registry_free(s->reg);
    test_remove_tree(s->dir);
}

static int load(setup *s, const char *text, rb_suite **suite, rb_err *err)
{
    char base[512];
    snprintf(base, sizeof base, "%s/suite.json", s->dir);
    return rb_suite_load_text(text, strlen(text), "suite.json", base, s->reg, suite, err);
}

static rb_suite_result *run(setup *s, const char *text, size_t threads)
{
    rb_suite *suite;
    rb_suite_result *res;
    rb_err err;
    cr_assert_eq(load(s, text, &suite, &err), RB_OK, "%s", err.msg);
    rb_suite_opts opts = {.threads = threads};
    cr_assert_eq(rb_suite_run(suite, &opts, &res, &err), RB_OK, "%s", err.msg);
    rb_suite_free(suite);
    return res;
}

Test(experiments_suite, statistics_by_hand)
{
    setup s = make_setup(NULL);
    rb_suite_result *res = run(&s, SUITE, 2);
    const rb_comparison *c = res->table;
    cr_assert_eq(c->n_variants, 3);
    cr_assert_eq(c->n_joints, 2);
    cr_assert_str_eq(c->joints[1], "j2");
    cr_assert_str_eq(c->logs[1], "b");
    for (size_t v = 0; v < 3; v++)
        for (size_t l = 0; l < 2; l++) {
            const double *o = OFFSETS[l];
            for (size_t j = 0; j < 2; j++) {
                const rb_stats *st = rb_comparison_at(c, v, j, l);
                /* linear interpolation of truth + offset, minus that of truth, is the offset */
                cr_assert_float_eq(st->rmse, fabs(o[j]), 1e-12, "v %zu l %zu j %zu: %.17g", v, l, j, st->rmse);
                cr_assert_float_eq(st->mae, fabs(o[j]), 1e-12);
                cr_assert_float_eq(st->max_abs, fabs(o[j]), 1e-12);
                cr_assert_eq(st->n, 201, "50 Hz samples in [51, 55] s"); /* 4 s x 50 Hz + 1 */
            }
            const rb_stats *all = rb_comparison_at(c, v, 2, l);
            cr_assert_float_eq(all->mse, (o[0] * o[0] + o[1] * o[1]) / 2, 1e-12);
            cr_assert_eq(all->n, 402);
        }
    const rb_summary *sum = rb_comparison_summary(c, 1, 0, 1); /* swapped, j1, rmse: 0.1 and 0.3 */
    cr_assert_float_eq(sum->mean, 0.2, 1e-12);
    cr_assert_float_eq(sum->sd, sqrt(0.02), 1e-12);
    cr_assert_float_eq(sum->lo, 0.1, 1e-12); /* two logs: the extremes, see test_metrics_compare.c */
    cr_assert_float_eq(sum->hi, 0.3, 1e-12);
    cr_assert_eq(res->n_pairs, 6);
    cr_assert_eq(res->n_figures, 3);
    cr_assert_str_eq(res->figures[2].name, "trace_b_j2_0.svg");
    size_t shades = 0;
    for (const char *p = res->figures[2].svg; (p = strstr(p, "class=\"shade\"")); p++)
        shades++;
    cr_assert_eq(shades, 2, "two push stretches shaded");
    cr_assert(strstr(res->figures[2].svg, "j2 (") == NULL, "j2 has no unit");
    rb_suite_result_free(res);
    free_setup(&s);
}

static char *all_bytes(const rb_suite_result *r)
{
    char *md, *json, *csv;
    rb_err err;
    cr_assert_eq(rb_comparison_render(r->table, RB_REPORT_MARKDOWN, &md, &err), RB_OK);
    cr_assert_eq(rb_comparison_render(r->table, RB_REPORT_JSON, &json, &err), RB_OK);
    cr_assert_eq(rb_comparison_render(r->table, RB_REPORT_CSV, &csv, &err), RB_OK);
    char *s = rb_asprintf("%s%s%s", md, json, csv);
    for (size_t i = 0; i < r->n_figures; i++) {
        char *t = rb_asprintf("%s%s%s", s, r->figures[i].name, r->figures[i].svg);
        rb_free(s);
        s = t;
    }
    rb_free(md);
    rb_free(json);
    rb_free(csv);
    return s;
}

Test(experiments_suite, thread_count_does_not_change_the_bytes)
{
    setup s = make_setup(NULL);
    rb_suite_result *one = run(&s, SUITE, 1), *two = run(&s, SUITE, 2), *four = run(&s, SUITE, 4);
    char *a = all_bytes(one), *b = all_bytes(two), *c = all_bytes(four);
    cr_assert_str_eq(a, b);
    cr_assert_str_eq(a, c);
    rb_free(a), rb_free(b), rb_free(c);
    rb_suite_result_free(one), rb_suite_result_free(two), rb_suite_result_free(four);
    free_setup(&s);
}

/* swapped fails on log b (index 3 in pair order), lp on log a (index 4, possibly first in time): the error
 * is always swapped's. */
Test(experiments_suite, first_failure_in_pair_order)
{
    setup s = make_setup(NULL);
    write_text(s.dir, "swapped.json",
               "{\"clock\": {\"rate\": 50}, \"signals\": {\"tau_hat\": {\"channel\": \"sensors/tau\", "
               "\"elements\": [\"j2\", \"j1\"]}, \"only_a\": {\"channel\": \"a_only\"}}}\n");
    write_text(s.dir, "lp.json",
               "{\"clock\": {\"rate\": 50}, \"signals\": {\"tau_hat\": {\"channel\": \"nowhere\"}}}\n");
    rb_log *log;
    rb_err err;
    char path[512];
    snprintf(path, sizeof path, "%s/a.h5", s.dir);
    cr_assert_eq(rb_log_read(path, &log, &err), RB_OK);
    const rb_channel *ref = rb_log_find(log, "truth/tau");
    cr_assert_eq(rb_log_add_channel_copy(log, "a_only", ref->n_samples, 1, ref->time, ref->time, NULL, NULL, &err),
                 RB_OK);
    rb_write_opts wo = {RB_OUT_H5, true, NULL};
    cr_assert_eq(rb_log_write(log, path, &wo, &err), RB_OK);
    rb_log_free(log);
    rb_suite *suite;
    cr_assert_eq(load(&s, SUITE, &suite, &err), RB_OK, "%s", err.msg);
    for (int rep = 0; rep < 6; rep++) {
        rb_suite_opts opts = {.threads = 2};
        rb_suite_result *res = NULL;
        cr_assert_eq(rb_suite_run(suite, &opts, &res, &err), RB_ENOTFOUND);
        cr_assert_null(res);
        cr_assert(strncmp(err.msg, "variant swapped: ", 17) == 0 && strstr(err.msg, "b.h5") &&
                      strstr(err.msg, "a_only"),
                  "%s", err.msg);
    }
    rb_suite_free(suite);
    free_setup(&s);
}

Test(experiments_suite, log_without_the_reference)
{
    setup s = make_setup("truth/tau");
    rb_suite *suite;
    rb_suite_result *res = NULL;
    rb_err err;
    cr_assert_eq(load(&s, SUITE, &suite, &err), RB_OK);
    cr_assert_eq(rb_suite_run(suite, NULL, &res, &err), RB_ENOTFOUND);
    cr_assert(strstr(err.msg, "b.h5") && strstr(err.msg, "reference channel truth/tau not found"), "%s", err.msg);
    rb_suite_free(suite);
    free_setup(&s);
}

static char *suite_with(const char *from, const char *to)
{
    const char *at = strstr(SUITE, from);
    cr_assert_not_null(at, "%s", from);
    return rb_asprintf("%.*s%s%s", (int)(at - SUITE), SUITE, to, at + strlen(from));
}

Test(experiments_suite, loader_messages)
{
    setup s = make_setup(NULL);
    const struct {
        const char *from, *to, *expect[3];
    } cases[] = {
        {"\"window\"", "\"windw\"", {"suite.json:10:3", "unknown key 'windw'", "did you mean 'window'"}},
        {"\"estimate\": \"tau_hat\"}\n  ],",
         "\"estimate\": \"tau_hta\"}\n  ],",
         {"suite.json:6:43: variants[2].estimate", "signal 'tau_hta' is not in pipeline", "did you mean 'tau_hat'"}},
        {"\"lp.json\"", "\"missing.json\"", {"variants[2].pipeline", "missing.json", "no such file"}},
        {"\"name\": \"swapped\"", "\"name\": \"raw\"", {"variants[1].name", "already used by variants[0]", NULL}},
        {"\"log\": \"b\"", "\"log\": \"c\"", {"figures.traces[0].log", "unknown log 'c'", NULL}},
        {"\"max_abs\"", "\"max_abss\"", {"statistics[3]", "did you mean 'max_abs'", NULL}},
        {"\"b.h5\"", "\"sub/a.h5\"", {"logs[1]", "same name 'a'", NULL}},
        {"\"joint\": \"j2\"", "\"joint\": 2", {"figures.traces[0].joint", "expected a string", NULL}},
        {"\"seed\": 4", "\"seed\": -1", {"bootstrap.seed", "integer >= 0", NULL}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = suite_with(cases[i].from, cases[i].to);
        rb_suite *suite = NULL;
        rb_err err;
        cr_assert_eq(load(&s, text, &suite, &err), RB_ECONFIG, "case %zu", i);
        cr_assert_null(suite);
        for (int k = 0; k < 3 && cases[i].expect[k]; k++)
            cr_assert(strstr(err.msg, cases[i].expect[k]), "case %zu: '%s' not in: %s", i, cases[i].expect[k], err.msg);
        rb_free(text);
    }
    free_setup(&s);
}

Test(experiments_suite, estimate_without_the_joint)
{
    setup s = make_setup(NULL);
    char *text = suite_with("\"reference\": \"truth/tau\",", "\"reference\": \"truth/tau\", \"joints\": [\"j2\"],");
    rb_suite_result *res = run(&s, text, 2); /* j2 alone is fine everywhere */
    cr_assert_eq(res->table->n_joints, 1);
    cr_assert_float_eq(rb_comparison_at(res->table, 2, 0, 1)->rmse, 0.4, 1e-12); /* lp, by position: j2 */
    rb_suite_result_free(res);
    rb_free(text);
    write_text(s.dir, "raw.json",
               "{\"clock\": {\"rate\": 50}, \"signals\": {\"tau_hat\": {\"channel\": \"sensors/tau\", "
               "\"elements\": [\"j1\"]}}}\n");
    rb_suite *suite;
    rb_err err;
    cr_assert_eq(load(&s, SUITE, &suite, &err), RB_OK);
    cr_assert_eq(rb_suite_run(suite, NULL, &res, &err), RB_ENOTFOUND);
    cr_assert(strstr(err.msg, "variant raw: ") && strstr(err.msg, "estimate tau_hat has no element 'j2'"), "%s",
              err.msg);
    rb_suite_free(suite);
    free_setup(&s);
}

Test(experiments_suite, write_all_or_nothing)
{
    setup s = make_setup(NULL);
    rb_suite_result *res = run(&s, SUITE, 2);
    char out[512];
    snprintf(out, sizeof out, "%s/out", s.dir);
    rb_err err;
    cr_assert_eq(rb_suite_result_write(res, out, false, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(test_count_entries(out), 6); /* 3 reports, 3 figures */
    char path[600];
    snprintf(path, sizeof path, "%s/report.md", out);
    remove(path);
    cr_assert_eq(rb_suite_result_write(res, out, false, &err), RB_EEXISTS); /* report.json is there */
    cr_assert_eq(test_count_entries(out), 5, "nothing new, no temporaries");
    cr_assert_eq(rb_suite_result_write(res, out, true, &err), RB_OK);
    cr_assert_eq(test_count_entries(out), 6);
    rb_suite_result_free(res);
    free_setup(&s);
}

/* ---- rules ---------------------------------------------------------------------------------------------- */
static char *report_json(setup *s)
{
    rb_suite_result *res = run(s, SUITE, 2);
    char *json;
    rb_err err;
    cr_assert_eq(rb_comparison_render(res->table, RB_REPORT_JSON, &json, &err), RB_OK);
    rb_suite_result_free(res);
    return json;
}

Test(experiments_suite, rules_evaluate_on_the_report)
{
    setup s = make_setup(NULL);
    char *json = report_json(&s);
    /* rmse (all joints) per log: a sqrt(0.025) = 0.158, b sqrt(0.125) = 0.354; j1: 0.1, 0.3 */
    const char *rules[] = {"raw.rmse < swapped.rmse.max", "raw.rmse < 0.26",        " raw.rmse[j1] > 0.21 ",
                           "lp.max_abs[ j2 ].hi >= 0.39", "0.31 < raw.mae[j1].max", "raw.rmse.sd<1e-3"};
    const char *wheres[] = {"r:1", "r:2", "r:3", "r:4", "r:5", "r:6"};
    rb_check *c;
    rb_err err;
    cr_assert_eq(rb_check_rules(json, strlen(json), "report.json", rules, wheres, 6, &c, &err), RB_OK, "%s", err.msg);
    const bool expect[] = {true, true, false, true, false, false};
    for (int i = 0; i < 6; i++)
        cr_assert_eq(c->rules[i].passed, expect[i], "%s: %s", rules[i], c->rules[i].message);
    cr_assert_eq(c->n_failed, 3);
    cr_assert_float_eq(c->rules[2].left, 0.2, 1e-12);
    cr_assert(strstr(c->rules[2].message, "raw.rmse[j1] = 0.2 is not > 0.21"), "%s", c->rules[2].message);
    cr_assert_str_eq(c->rules[2].rule, "raw.rmse[j1] > 0.21");
    char *xml;
    cr_assert_eq(rb_check_junit(c, "ci", &xml, &err), RB_OK);
    cr_assert(strstr(xml, "tests=\"6\" failures=\"3\""), "%s", xml);
    cr_assert(strstr(xml, "name=\"raw.rmse &lt; 0.26\"/>"), "%s", xml);
    rb_free(xml);
    rb_check_free(c);
    rb_free(json);
    free_setup(&s);
}

Test(experiments_suite, bad_rules_are_named)
{
    setup s = make_setup(NULL);
    char *json = report_json(&s);
    const struct {
        const char *rule, *expect;
    } cases[] = {
        {"rw.rmse < 1", "unknown variant 'rw' (did you mean 'raw'?)"},
        {"raw.rmsee < 1", "unknown statistic 'rmsee' (did you mean 'rmse'?)"},
        {"raw.mean_abs_est < 1", "statistic 'mean_abs_est' is not in the report"},
        {"raw.rmse[j3] < 1", "unknown joint 'j3' (did you mean 'j1'?)"},
        {"raw.rmse.hii < 1", "unknown field 'hii' (did you mean 'hi'?)"},
        {"raw.rmse = 1", "column 10: expected a comparison"},
        {"raw.rmse < ", "column 11: expected a number or VARIANT.STAT"},
        {"raw < 1", "column 4: expected '.' and a statistic"},
        {"raw.rmse < 1 2", "column 14: unexpected '2'"},
        {"1 < 2", "compares two numbers"},
        {"raw.rmse[j1 < 1", "'[' without ']'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *where = "rules.txt:7";
        rb_check *c = NULL;
        rb_err err;
        cr_assert_eq(rb_check_rules(json, strlen(json), "report.json", &cases[i].rule, &where, 1, &c, &err), RB_ECONFIG,
                     "%s", cases[i].rule);
        cr_assert_null(c);
        cr_assert(strncmp(err.msg, "rules.txt:7: '", 14) == 0 && strstr(err.msg, cases[i].expect), "%s -> %s",
                  cases[i].rule, err.msg);
    }
    const char *rule = "raw.rmse < 1";
    rb_check *c = NULL;
    rb_err err;
    cr_assert_eq(rb_check_rules("{\"rows\": []}", 12, "old.json", &rule, NULL, 1, &c, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "old.json: not a roboest comparison report"), "%s", err.msg);
    cr_assert_eq(rb_check_rules("{\"a\": ", 6, "cut.json", &rule, NULL, 1, &c, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "cut.json:1:"), "%s", err.msg);
    rb_free(json);
    free_setup(&s);
}

Test(experiments_suite, rules_file)
{
    char *dir = test_temp_dir(), path[512];
    snprintf(path, sizeof path, "%s/rules.txt", dir);
    FILE *f = fopen(path, "w");
    fputs("# gates\n\n  a.rmse < b.rmse   # better\nc.mae < 1\n   # nothing\n", f);
    fclose(f);
    char **rules, **wheres;
    size_t n;
    rb_err err;
    cr_assert_eq(rb_rules_read(path, &rules, &wheres, &n, &err), RB_OK);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(rules[0], "a.rmse < b.rmse");
    cr_assert(strstr(wheres[0], "rules.txt:3"));
    cr_assert(strstr(wheres[1], "rules.txt:4"));
    rb_rules_free(rules, wheres, n);
    f = fopen(path, "w");
    fputs("# only comments\n", f);
    fclose(f);
    cr_assert_eq(rb_rules_read(path, &rules, &wheres, &n, &err), RB_ECONFIG);
    test_remove_tree(dir);
}

/* Every allocation failing in turn: loading, running (one thread, then two: a failure inside a worker too)
 * and rendering end in RB_ENOMEM with nothing leaked (ASan / valgrind runs check), until they succeed. */
Test(experiments_suite, allocation_failures)
{
    setup s = make_setup(NULL);
    const char *small =
        "{\"variants\": [{\"name\": \"raw\", \"pipeline\": \"raw.json\", \"estimate\": \"tau_hat\"},\n"
        "  {\"name\": \"lp\", \"pipeline\": \"lp.json\", \"estimate\": \"tau_hat\"}],\n"
        " \"logs\": [\"a.h5\", \"b.h5\"], \"reference\": \"truth/tau\", \"bootstrap\": {\"samples\": 50},\n"
        " \"figures\": {\"traces\": [{\"joint\": \"j1\", \"log\": 0}], \"contact\": {\"channel\": "
        "\"truth/pushes\"}}}\n";
    for (size_t threads = 1; threads <= 2; threads++) {
        long n, step = threads == 1 ? 1 : 7;
        for (n = 0;; n += step) {
            rb_suite *suite = NULL;
            rb_suite_result *res = NULL;
            char *json = NULL;
            rb_err err;
            rb_suite_opts opts = {.threads = threads};
            rb_alloc_fail_after(n);
            int rc = load(&s, small, &suite, &err);
            if (!rc)
                rc = rb_suite_run(suite, &opts, &res, &err);
            if (!rc)
                rc = rb_comparison_render(res->table, RB_REPORT_JSON, &json, &err);
            rb_alloc_fail_after(-1);
            rb_free(json);
            rb_suite_result_free(res);
            rb_suite_free(suite);
            if (rc == RB_OK)
                break;
            cr_assert_eq(rc, RB_ENOMEM, "threads %zu, failure %ld: %s", threads, n, err.msg);
        }
        cr_assert_gt(n, 200, "the loop went through the allocations");
    }
    free_setup(&s);
}
