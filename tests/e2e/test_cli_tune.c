/* End-to-end: roboest tune kf-derivative. On a CSV log of noisy sinusoids with their true velocities, the
 * tuned q (run through `roboest run` with the printed config snippet) gives a lower velocity RMSE than q
 * 100x larger and 100x smaller; help, determinism and the documented exit codes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/core.h"

/* 10 s at 1 kHz: j1 = sin(2 pi 0.5 t) + N(0, 1e-3^2), j2 = 0.5 sin(2 pi 2 t) + N(0, 5e-4^2), and the exact
 * velocities. */
static char *write_log(const char *dir)
{
    char *path = test_path(dir, "log.csv");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "time,joints_state/positions:j1 [rad],joints_state/positions:j2 [rad],"
               "joints_state/velocities:j1 [rad/s],joints_state/velocities:j2 [rad/s]\n");
    rb_rng rng;
    rb_rng_seed(&rng, 12345);
    const double w1 = 2 * M_PI * 0.5, w2 = 2 * M_PI * 2.0;
    for (int k = 0; k <= 10000; k++) {
        double t = 0.001 * k, n1 = 1e-3 * rb_rng_normal(&rng), n2 = 5e-4 * rb_rng_normal(&rng);
        fprintf(f, "%.17g,%.17g,%.17g,%.17g,%.17g\n", t, sin(w1 * t) + n1, 0.5 * sin(w2 * t) + n2, w1 * cos(w1 * t),
                0.5 * w2 * cos(w2 * t));
    }
    fclose(f);
    return path;
}

/* The config snippet the command printed, with the reference velocity bound too, wrapped into a pipeline
 * that scores the filter's velocity over [1, 10] s into report.csv. q_scale multiplies every q. */
static char *pipeline_from_snippet(const char *out, double q_scale)
{
    const char *snip = strstr(out, "\"signals\": {");
    cr_assert_not_null(snip, "snippet in:\n%s", out);
    /* q values */
    const char *qa = strstr(snip, "\"q\": [");
    cr_assert_not_null(qa);
    char *end;
    double q1 = strtod(qa + 6, &end), q2 = strtod(end + 1, &end);
    cr_assert(*end == ']' && q1 > 0 && q2 > 0, "two q values: %s", qa);
    const char *qend = strchr(qa, ']') + 1;
    size_t cap = strlen(snip) + 1024;
    char *cfg = malloc(cap);
    int n = snprintf(cfg, cap,
                     "{\"logs\": [\"log.csv\"], \"clock\": {\"channel\": \"joints_state/positions\"},\n"
                     "  \"signals\": {\"dq\": {\"channel\": \"joints_state/velocities\"},%.*s"
                     "\"q\": [%.17g, %.17g]%s,\n"
                     "  \"metrics\": [{\"estimate\": \"joints_state/positions_dot\", \"reference\": \"dq\", "
                     "\"window\": [1, 10]}],\n"
                     "  \"reports\": [\"report.csv\"]}\n",
                     (int)(qa - (snip + 12)), snip + 12, q1 * q_scale, q2 * q_scale, qend);
    cr_assert(n > 0 && (size_t)n < cap);
    /* the snippet ends with "  ]\n" closing "stages": drop the trailing newline inside the object */
    return cfg;
}

/* RMSE of element `elem` (j1, j2 or all) in a report.csv. */
static double report_rmse(const char *csv, const char *elem)
{
    char *copy = strdup(csv), *save = NULL;
    int col_elem = -1, col_rmse = -1;
    double rmse = NAN;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        char *fs = NULL;
        int c = 0;
        bool header = col_rmse < 0;
        const char *el = NULL, *rm = NULL;
        for (char *f = strtok_r(line, ",", &fs); f; f = strtok_r(NULL, ",", &fs), c++) {
            if (header && strcmp(f, "element") == 0)
                col_elem = c;
            if (header && strcmp(f, "rmse") == 0)
                col_rmse = c;
            if (!header && c == col_elem)
                el = f;
            if (!header && c == col_rmse)
                rm = f;
        }
        if (!header && el && rm && strcmp(el, elem) == 0)
            rmse = strtod(rm, NULL);
    }
    free(copy);
    cr_assert(isfinite(rmse), "element %s in report:\n%s", elem, csv);
    return rmse;
}

/* Run the pipeline for q_scale in a fresh output folder; the velocity RMSE of each element. */
static void run_scaled(const char *dir, const char *tune_out, double q_scale, double rmse[2])
{
    char name[64], outdir[64];
    snprintf(name, sizeof name, "p_%g.json", q_scale);
    snprintf(outdir, sizeof outdir, "out_%g", q_scale);
    char *cfg = pipeline_from_snippet(tune_out, q_scale), *cfg_path = test_path(dir, name);
    test_write_file(cfg_path, cfg);
    cli_result r = cli_run(dir, (const char *const[]){"run", name, "-o", outdir, "-q", NULL});
    cr_assert_eq(r.status, 0, "run with q x %g: %s\nconfig:\n%s", q_scale, r.err, cfg);
    char *report_path = test_path(dir, outdir), *csv_path = test_path(report_path, "report.csv");
    char *csv = test_read_file(csv_path, NULL);
    cr_assert_not_null(csv);
    rmse[0] = report_rmse(csv, "j1");
    rmse[1] = report_rmse(csv, "j2");
    free(csv), free(csv_path), free(report_path), free(cfg), free(cfg_path);
    cli_result_free(&r);
}

Test(cli_tune, tuned_q_beats_a_hundred_times_larger_and_smaller)
{
    char *dir = test_tmpdir(), *log = write_log(dir);
    cli_result r =
        cli_run(dir, (const char *const[]){"tune", "kf-derivative", "log.csv", "--channel", "joints_state/positions",
                                           "--reference", "joints_state/velocities", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_empty(r.err, "no warning: the minimum is inside the interval (%s)", r.err);
    cr_assert(strstr(r.out, "criterion: RMSE of x_dot against joints_state/velocities"), "%s", r.out);
    cr_assert(strstr(r.out, "\"type\": \"kf_derivative\""), "%s", r.out);
    double best[2], large[2], small[2];
    run_scaled(dir, r.out, 1.0, best);
    run_scaled(dir, r.out, 100.0, large);
    run_scaled(dir, r.out, 0.01, small);
    cr_log_info("velocity RMSE j1: tuned %.4g, q x100 %.4g, q /100 %.4g; j2: %.4g, %.4g, %.4g", best[0], large[0],
                small[0], best[1], large[1], small[1]);
    for (int e = 0; e < 2; e++) {
        cr_assert(best[e] < large[e], "element %d: tuned %.6g vs q x100 %.6g", e, best[e], large[e]);
        cr_assert(best[e] < small[e], "element %d: tuned %.6g vs q /100 %.6g", e, best[e], small[e]);
    }
    /* the printed criterion is that RMSE (same filter, same samples: t >= 1 s) */
    const char *row = strstr(r.out, "\nj1 ");
    cr_assert_not_null(row);
    double q, rr, crit;
    cr_assert_eq(sscanf(row + 4, "%lf %lf %lf", &q, &rr, &crit), 3, "%s", row);
    cr_assert(fabs(crit - best[0]) <= 1e-9 * best[0], "criterion %.17g vs run RMSE %.17g", crit, best[0]);
    /* deterministic: the same command prints the same bytes */
    cli_result again =
        cli_run(dir, (const char *const[]){"tune", "kf-derivative", "log.csv", "--channel", "joints_state/positions",
                                           "--reference", "joints_state/velocities", NULL});
    cr_assert_eq(again.status, 0);
    cr_assert_str_eq(again.out, r.out);
    cli_result_free(&again);
    cli_result_free(&r);
    free(log), free(dir);
}

Test(cli_tune, without_a_reference_the_prediction_error_picks_a_close_q)
{
    char *dir = test_tmpdir(), *log = write_log(dir);
    const char *base[] = {
        "tune", "kf-derivative", "log.csv", "--channel", "joints_state/positions", "--elements", "j2", NULL, NULL,
        NULL};
    cli_result pem = cli_run(dir, base);
    cr_assert_eq(pem.status, 0, "%s", pem.err);
    cr_assert(strstr(pem.out, "criterion: RMS one-step prediction error"), "%s", pem.out);
    base[7] = "--reference", base[8] = "joints_state/velocities";
    cli_result ref = cli_run(dir, base);
    cr_assert_eq(ref.status, 0, "%s", ref.err);
    double q_pem, q_ref;
    cr_assert_eq(sscanf(strstr(pem.out, "\nj2 ") + 4, "%lf", &q_pem), 1);
    cr_assert_eq(sscanf(strstr(ref.out, "\nj2 ") + 4, "%lf", &q_ref), 1);
    cr_assert(!strstr(pem.out, "\nj1 "), "only the selected element");
    cr_assert(fabs(log10(q_pem / q_ref)) < 0.5, "prediction-error q %g vs reference q %g", q_pem, q_ref);
    cli_result_free(&pem);
    cli_result_free(&ref);
    free(log), free(dir);
}

Test(cli_tune, help_lists_every_option_and_the_exit_codes)
{
    cli_result r = cli_run(NULL, (const char *const[]){"tune", "kf-derivative", "--help", NULL});
    cr_assert_eq(r.status, 0);
    const char *must[] = {"--channel", "--elements",  "--reference",      "--r ", "--q-min", "--q-max", "--warmup",
                          "--help",    "Exit codes:", "prediction error", "RMSE"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        cr_assert(strstr(r.out, must[i]), "'%s' in:\n%s", must[i], r.out);
    cli_result_free(&r);
    r = cli_run(NULL, (const char *const[]){"tune", "--help", NULL});
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "kf-derivative") && strstr(r.out, "Exit codes:"));
    cli_result_free(&r);
    r = cli_run(NULL, (const char *const[]){"--help", NULL});
    cr_assert(strstr(r.out, "tune kf-derivative"), "%s", r.out);
    cli_result_free(&r);
}

Test(cli_tune, usage_and_input_errors_have_their_exit_codes)
{
    char *dir = test_tmpdir(), *log = write_log(dir);
    struct {
        const char *args[10];
        int status;
        const char *msg;
    } cases[] = {
        {{"tune", NULL}, CLI_EXIT_USAGE, "missing ESTIMATOR"},
        {{"tune", "kalman", NULL}, CLI_EXIT_USAGE, "unknown estimator 'kalman'"},
        {{"tune", "kf-derivative", "log.csv", NULL}, CLI_EXIT_USAGE, "missing --channel"},
        {{"tune", "kf-derivative", "--channel", "x", NULL}, CLI_EXIT_USAGE, "missing LOG"},
        {{"tune", "kf-derivative", "log.csv", "--channel", "joints_state/positions", "--r", "-1", NULL},
         CLI_EXIT_USAGE,
         "--r needs a positive number"},
        {{"tune", "kf-derivative", "log.csv", "--channel", "joints_state/positions", "--bogus", NULL},
         CLI_EXIT_USAGE,
         "unknown option '--bogus'"},
        {{"tune", "kf-derivative", "log.csv", "--channel", "joints_state/positions", "--q-min", "10", "--q-max", "1",
          NULL},
         CLI_EXIT_USAGE,
         "--q-min must be below --q-max"},
        {{"tune", "kf-derivative", "nope.csv", "--channel", "x", NULL}, CLI_EXIT_INPUT, "nope.csv"},
        {{"tune", "kf-derivative", "log.csv", "--channel", "joints_state/torques", NULL},
         CLI_EXIT_INPUT,
         "no channel 'joints_state/torques'"},
        {{"tune", "kf-derivative", "log.csv", "--channel", "joints_state/positions", "--elements", "j1,j9", NULL},
         CLI_EXIT_INPUT,
         "no element named 'j9'"},
        {{"tune", "kf-derivative", "log.csv", "--channel", "joints_state/positions", "--reference", "vel", NULL},
         CLI_EXIT_INPUT,
         "no reference channel 'vel'"},
        {{"tune", "kf-derivative", "log.csv", "--channel", "joints_state/positions", "--warmup", "20", NULL},
         CLI_EXIT_INPUT,
         "no sample to score"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_result r = cli_run(dir, cases[i].args);
        cr_assert_eq(r.status, cases[i].status, "case %zu: status %d: %s", i, r.status, r.err);
        cr_assert(strstr(r.err, cases[i].msg), "case %zu: '%s' in: %s", i, cases[i].msg, r.err);
        cr_assert_eq(test_count_lines(r.err), 1, "one line: %s", r.err);
        cr_assert_str_empty(r.out);
        cli_result_free(&r);
    }
    /* a constant position has no noise to estimate r from: a numeric failure naming the way out */
    char *flat = test_path(dir, "flat.csv");
    test_write_file(flat, "time,pos\n0,1\n0.1,1\n0.2,1\n0.3,1\n0.4,1\n0.5,1\n0.6,1\n0.7,1\n0.8,1\n0.9,1\n");
    cli_result r = cli_run(dir, (const char *const[]){"tune", "kf-derivative", "flat.csv", "--channel", "pos", NULL});
    cr_assert_eq(r.status, CLI_EXIT_NUMERIC, "%s", r.err);
    cr_assert(strstr(r.err, "give r"), "%s", r.err);
    cli_result_free(&r);
    r = cli_run(dir,
                (const char *const[]){"tune", "kf-derivative", "flat.csv", "--channel", "pos", "--r", "1e-6", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    free(flat), free(log), free(dir);
}
