/* End-to-end: roboest validate-thrust (seed 004, V-B) on a synthetic CSV log written here: the report's alpha, E_T
 * statistics and verdicts against values computed here from the same samples, the figures, `roboest check` rules on
 * report.json, --force, and every error (one line, exit 3, nothing written). */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <libxml/parser.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define N_SAMPLES 3001 /* 100 Hz, 0 .. 30 s */
#define MASS 41.402
#define G 9.81

/* Every column of the log, per sample, kept to compute the expected numbers from. */
typedef struct sample {
    double t, left, right, temp_a, temp_b, thr_arm, thr_chest, combined, centroidal;
} sample;

typedef struct make_opts {
    double temp_slope;  /* degrees per s (0: constant) */
    double throttle_at; /* the chest throttle set to 3 at this time (< 0: never) */
} make_opts;

static double thrust(double t) /* vertical, N: off in [0, 5] and [25, 30], a ramp over [10, 20] */
{
    return t <= 6 || t >= 24 ? 0 : t < 10 ? 30 * (t - 6) / 4 : t < 20 ? 30 + 70 * (t - 10) / 10 : 100 * (24 - t) / 4;
}

static void make_samples(sample *s, const make_opts *o)
{
    for (int k = 0; k < N_SAMPLES; k++) {
        double t = k / 100.0, temp = 22 + o->temp_slope * t, load = MASS * G - thrust(t);
        double kg = load / G + 0.05 * (temp - 22) + 0.01 * sin(3 * t); /* a drift and a wobble the scales add */
        s[k] = (sample){t,
                        0.45 * kg,
                        0.55 * kg,
                        temp - 0.8,
                        temp + 0.8,
                        thrust(t) > 0 ? 40 : 0,
                        (thrust(t) > 0 ? 60 : 0) + (o->throttle_at >= 0 && fabs(t - o->throttle_at) < 1e-9 ? 3 : 0),
                        load + 4 * sin(0.5 * t),
                        load + 6 * sin(0.5 * t) + 2 * sin(40 * t)};
    }
}

static void write_csv(const char *path, const sample *s)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("time,scales/left:w [kg],scales/right:w [kg],ft/temp:l_foot,ft/temp:r_foot,jets/throttle:arm,"
          "jets/throttle:chest,est/combined:z [N],est/centroidal:z [N]\n",
          f);
    for (int k = 0; k < N_SAMPLES; k++)
        fprintf(f, "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", s[k].t, s[k].left, s[k].right,
                s[k].temp_a, s[k].temp_b, s[k].thr_arm, s[k].thr_chest, s[k].combined, s[k].centroidal);
    fclose(f);
}

static const char *const CONFIG =
    "{\"name\": \"scales\",\n"
    " \"log\": \"thrust.csv\",\n"
    " \"variants\": [{\"name\": \"combined\", \"pipeline\": \"combined.json\", \"support\": \"support\"},\n"
    "              {\"name\": \"centroidal\", \"pipeline\": \"centroidal.json\", \"support\": \"support\"}],\n"
    " \"scales\": [\"scales/left\", \"scales/right\"],\n"
    " \"temperature\": {\"channel\": \"ft/temp\"},\n"
    " \"throttles\": {\"channel\": \"jets/throttle\"},\n"
    " \"jets_off\": [[0, 5], [25, 30]],\n"
    " \"ramp\": [10, 20],\n"
    " \"mass\": 41.402}\n";

typedef struct fixture {
    char *dir, *config, *out, *report;
    sample *s;
} fixture;

static fixture make_fixture(const char *config_text, const make_opts *o)
{
    fixture fx = {test_tmpdir(), NULL, NULL, NULL, calloc(N_SAMPLES, sizeof(sample))};
    fx.config = test_path(fx.dir, "v.json");
    fx.out = test_path(fx.dir, "out");
    fx.report = test_path(fx.out, "report.json");
    make_samples(fx.s, o);
    char *log = test_path(fx.dir, "thrust.csv"), *a = test_path(fx.dir, "combined.json"),
         *b = test_path(fx.dir, "centroidal.json");
    write_csv(log, fx.s);
    test_write_file(a, "{\"clock\": {\"rate\": 100}, \"signals\": {\"support\": {\"channel\": \"est/combined\"}}}\n");
    test_write_file(b, "{\"clock\": {\"rate\": 100}, \"signals\": {\"support\": {\"channel\": \"est/centroidal\"}}}\n");
    test_write_file(fx.config, config_text);
    free(log), free(a), free(b);
    return fx;
}

static void free_fixture(fixture *fx) { free(fx->dir), free(fx->config), free(fx->out), free(fx->report), free(fx->s); }

static char *with(const char *from, const char *to)
{
    const char *at = strstr(CONFIG, from);
    cr_assert_not_null(at, "'%s' is in the config", from);
    size_t n = strlen(CONFIG) - strlen(from) + strlen(to) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%.*s%s%s", (int)(at - CONFIG), CONFIG, to, at + strlen(from));
    return s;
}

/* ---- the expected numbers, from the samples ------------------------------------------------------------------------ */
typedef struct expected {
    double alpha, temp0;
    double max_abs[2], rms[2], ramp_max[2], rate_rms[2];
} expected;

static expected expect_from(const sample *s)
{
    expected e = {0};
    double w[2] = {0, 0}, temp[2] = {0, 0};
    int n[2] = {0, 0};
    for (int k = 0; k < N_SAMPLES; k++) {
        int i = s[k].t <= 5 ? 0 : s[k].t >= 25 ? 1 : -1;
        if (i < 0)
            continue;
        w[i] += s[k].left + s[k].right;
        temp[i] += (s[k].temp_a + s[k].temp_b) / 2;
        n[i]++;
    }
    e.temp0 = temp[0] / n[0];
    e.alpha = (w[1] / n[1] - w[0] / n[0]) / (temp[1] / n[1] - e.temp0);
    for (int v = 0; v < 2; v++) {
        double ss = 0, rr = 0;
        for (int k = 0; k < N_SAMPLES; k++) {
            double sup = v ? s[k].centroidal : s[k].combined;
            double load = G * (s[k].left + s[k].right - e.alpha * ((s[k].temp_a + s[k].temp_b) / 2 - e.temp0));
            double et = load - sup;
            e.max_abs[v] = fmax(e.max_abs[v], fabs(et));
            ss += et * et;
            if (s[k].t >= 10 && s[k].t <= 20)
                e.ramp_max[v] = fmax(e.ramp_max[v], fabs(et));
            if (k) {
                double prev = v ? s[k - 1].centroidal : s[k - 1].combined;
                double d = (sup - prev) / (s[k].t - s[k - 1].t);
                rr += d * d;
            }
        }
        e.rms[v] = sqrt(ss / N_SAMPLES);
        e.rate_rms[v] = sqrt(rr / (N_SAMPLES - 1));
    }
    return e;
}

static double stat_of(const cJSON *root, int v, const char *joint, const char *stat)
{
    const cJSON *var = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "variants"), v);
    const cJSON *x = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(var, "joints"), joint), stat);
    cr_assert_not_null(x, "%s[%s] in report.json", stat, joint);
    return cJSON_GetObjectItem(x, "mean")->valuedouble;
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-6 * fmax(1, fabs(b)); }

Test(cli_validate_thrust, the_report_holds_the_numbers_computed_here)
{
    fixture fx = make_fixture(CONFIG, &(make_opts){0.2, -1});
    expected e = expect_from(fx.s);
    cli_result r = cli_run(NULL, (const char *[]){"validate-thrust", fx.config, "-o", fx.out, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "# scales") && strstr(r.out, "the percent bound binds") && strstr(r.out, "## combined"),
              "%s", r.out);
    cli_result_free(&r);

    char *text = test_read_file(fx.report, NULL);
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root, "report.json is JSON");
    const cJSON *val = cJSON_GetObjectItem(root, "validation");
    double alpha = cJSON_GetObjectItem(val, "alpha")->valuedouble;
    cr_expect(near(alpha, e.alpha), "alpha %.17g, computed here %.17g", alpha, e.alpha);
    cr_expect(fabs(e.alpha - 0.05) < 0.01, "the drift the log was made with");
    const cJSON *bound = cJSON_GetObjectItem(val, "bound");
    cr_expect(near(cJSON_GetObjectItem(bound, "value")->valuedouble, 0.07 * MASS * G));
    cr_expect_str_eq(cJSON_GetObjectItem(bound, "binds")->valuestring, "percent");
    for (int v = 0; v < 2; v++) {
        cr_expect(near(stat_of(root, v, "E_T", "max_abs"), e.max_abs[v]), "variant %d max |E_T| %.17g, here %.17g", v,
                  stat_of(root, v, "E_T", "max_abs"), e.max_abs[v]);
        cr_expect(near(stat_of(root, v, "E_T", "rmse"), e.rms[v]), "variant %d RMS", v);
        cr_expect(near(stat_of(root, v, "E_T_ramp", "max_abs"), e.ramp_max[v]), "variant %d ramp", v);
        cr_expect(near(stat_of(root, v, "E_T_percent", "max_abs"), 100 * e.max_abs[v] / (MASS * G)));
        cr_expect(near(stat_of(root, v, "d_support", "rmse"), e.rate_rms[v]), "variant %d smoothness %.17g, here %.17g",
                  v, stat_of(root, v, "d_support", "rmse"), e.rate_rms[v]);
        const cJSON *vv = cJSON_GetArrayItem(cJSON_GetObjectItem(val, "variants"), v);
        cr_expect_eq(cJSON_IsTrue(cJSON_GetObjectItem(vv, "passed")), e.max_abs[v] < 0.07 * MASS * G);
    }
    cr_expect(e.rate_rms[0] < e.rate_rms[1], "the combined support is the smoother one here");
    cJSON_Delete(root);
    free(text);

    const char *figures[] = {"report.md",   "report.json",      "E_T.svg",
                             "support.svg", "E_T_combined.svg", "E_T_centroidal.svg"};
    cr_expect_eq(test_count_entries(fx.out), 6);
    for (size_t i = 2; i < 6; i++) {
        char *p = test_path(fx.out, figures[i]);
        xmlDocPtr doc = xmlReadFile(p, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR);
        cr_expect_not_null(doc, "%s is well-formed SVG", figures[i]);
        xmlFreeDoc(doc);
        free(p);
    }

    /* roboest check on report.json: "all" is the whole run's E_T */
    char rule_ok[128], rule_fail[128];
    snprintf(rule_ok, sizeof rule_ok, "combined.max_abs[E_T] < %.6g", e.max_abs[0] * 1.001);
    snprintf(rule_fail, sizeof rule_fail, "centroidal.max_abs < %.6g", e.max_abs[1] * 0.999);
    r = cli_run(NULL, (const char *[]){"check", fx.report, "--rule", rule_ok, "--rule",
                                       "combined.rmse[d_support] < centroidal.rmse[d_support]", NULL});
    cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"check", fx.report, "--rule", rule_fail, NULL});
    cr_expect_eq(r.status, CLI_EXIT_CHECK, "%s%s", r.out, r.err);
    cli_result_free(&r);
    free_fixture(&fx);
}

Test(cli_validate_thrust, force_is_needed_to_replace_the_outputs)
{
    fixture fx = make_fixture(CONFIG, &(make_opts){0.2, -1});
    cli_result r = cli_run(NULL, (const char *[]){"validate-thrust", fx.config, "-o", fx.out, "-q", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    char *md = test_path(fx.out, "report.md");
    test_write_file(md, "mine\n");
    r = cli_run(NULL, (const char *[]){"validate-thrust", fx.config, "-o", fx.out, NULL});
    cr_expect_eq(r.status, CLI_EXIT_OUTPUT, "%s", r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "%s", r.err);
    cli_result_free(&r);
    char *text = test_read_file(md, NULL);
    cr_expect_str_eq(text, "mine\n", "left untouched without --force");
    free(text);
    r = cli_run(NULL, (const char *[]){"validate-thrust", fx.config, "-o", fx.out, "--force", NULL});
    cr_expect_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    text = test_read_file(md, NULL);
    cr_expect(strstr(text, "# scales"), "replaced with --force");
    free(text);
    cr_expect_eq(test_count_entries(fx.out), 6, "no temporary left");
    free(md);
    free_fixture(&fx);
}

static void expect_failure(const char *config_text, const make_opts *o, const char *const *must)
{
    fixture fx = make_fixture(config_text, o);
    cli_result r = cli_run(NULL, (const char *[]){"validate-thrust", fx.config, "-o", fx.out, NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "one line: %s", r.err);
    for (; *must; must++)
        cr_expect(strstr(r.err, *must), "'%s' in: %s", *must, r.err);
    cr_expect_str_empty(r.out);
    cr_expect_not(test_exists(fx.out), "nothing written");
    cli_result_free(&r);
    free_fixture(&fx);
}

Test(cli_validate_thrust, a_throttle_on_in_a_jets_off_window)
{
    expect_failure(CONFIG, &(make_opts){0.2, 2.5},
                   (const char *[]){"jets_off[0]", "start window", "jet 'chest'", "t = 2.5 s", NULL});
}

Test(cli_validate_thrust, no_temperature_change_between_the_windows)
{
    expect_failure(CONFIG, &(make_opts){0, -1},
                   (const char *[]){"no temperature change", "\"temperature_correction\": false", NULL});
}

Test(cli_validate_thrust, without_the_correction_a_constant_temperature_is_fine)
{
    char *text = with("\"mass\"", "\"temperature_correction\": false, \"mass\"");
    fixture fx = make_fixture(text, &(make_opts){0, -1});
    cli_result r = cli_run(NULL, (const char *[]){"validate-thrust", fx.config, "-o", fx.out, NULL});
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "Temperature correction off"), "%s", r.out);
    cli_result_free(&r);
    free_fixture(&fx);
    free(text);
}

Test(cli_validate_thrust, a_missing_channel)
{
    char *text = with("\"scales/right\"", "\"scales/rihgt\"");
    expect_failure(text, &(make_opts){0.2, -1}, (const char *[]){"scales/rihgt", "not found", "scales[1]", NULL});
    free(text);
}

Test(cli_validate_thrust, a_window_outside_the_log)
{
    char *text = with("[25, 30]", "[25, 31]");
    expect_failure(text, &(make_opts){0.2, -1}, (const char *[]){"jets_off[1]", "[25, 31] s is outside the log", NULL});
    free(text);
}

Test(cli_validate_thrust, a_failing_pipeline_and_a_bad_key)
{
    fixture fx = make_fixture(CONFIG, &(make_opts){0.2, -1});
    char *p = test_path(fx.dir, "centroidal.json");
    test_write_file(p, "{\"clock\": {\"rate\": 100}, \"signals\": {\"support\": {\"channel\": \"est/nothing\"}}}\n");
    cli_result r = cli_run(NULL, (const char *[]){"validate-thrust", fx.config, "-o", fx.out, NULL});
    cr_expect_eq(r.status, CLI_EXIT_INPUT, "%s", r.err);
    cr_expect(strstr(r.err, "variant centroidal: ") && strstr(r.err, "est/nothing"), "%s", r.err);
    cr_expect_eq(test_count_lines(r.err), 1, "%s", r.err);
    cr_expect_not(test_exists(fx.out));
    cli_result_free(&r);
    free(p);
    free_fixture(&fx);

    char *text = with("\"ramp\"", "\"rampe\"");
    expect_failure(text, &(make_opts){0.2, -1}, (const char *[]){"v.json:9:", "rampe", "did you mean 'ramp'", NULL});
    free(text);
}

Test(cli_validate_thrust, help_and_usage)
{
    cli_result r = cli_run(NULL, (const char *[]){"validate-thrust", "--help", NULL});
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "Usage: roboest validate-thrust CONFIG.json") && strstr(r.out, "Exit codes:") &&
                  strstr(r.out, "--force"),
              "%s", r.out);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"validate-thrust", NULL});
    cr_expect_eq(r.status, CLI_EXIT_USAGE);
    cr_expect(strstr(r.err, "missing CONFIG.json"), "%s", r.err);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *[]){"--help", NULL});
    cr_expect(strstr(r.out, "validate-thrust CONFIG.json"), "%s", r.out);
    cli_result_free(&r);
}
