/* Comparison tables: quantiles, the percentile bootstrap (against numpy on the same resampling plan, and its
 * coverage on synthetic data), box-plot figures, summaries, renderings, and the SVG figures (parsed by
 * libxml2). */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "roboest/metrics.h"
#include "support.h"

#define CHECK_PY RB_SOURCE "/tests/unit/metrics_bootstrap_check.py"
#define PYTHON "/usr/bin/python3"

Test(metrics_compare, quantiles_are_type_7)
{
    const double x[] = {1, 2, 3, 4};
    cr_assert_float_eq(rb_quantile_sorted(x, 4, 0.25), 1.75, 1e-15); /* numpy.quantile([1,2,3,4], .25) */
    cr_assert_float_eq(rb_quantile_sorted(x, 4, 0.5), 2.5, 1e-15);
    cr_assert_float_eq(rb_quantile_sorted(x, 4, 0.0), 1, 0);
    cr_assert_float_eq(rb_quantile_sorted(x, 4, 1.0), 4, 0);
    cr_assert_float_eq(rb_quantile_sorted(x, 1, 0.3), 1, 0);
}

Test(metrics_compare, draws_are_uniform_and_reproducible)
{
    enum { N = 7, B = 20000 };
    rb_bootstrap bs = {B, 11, 0.9};
    size_t *a = malloc(sizeof(size_t) * N * B), *b = malloc(sizeof(size_t) * N * B);
    rb_err err;
    cr_assert_eq(rb_bootstrap_draw(&bs, N, a, &err), RB_OK);
    cr_assert_eq(rb_bootstrap_draw(&bs, N, b, &err), RB_OK);
    cr_assert_eq(memcmp(a, b, sizeof(size_t) * N * B), 0);
    double count[N] = {0}, chi2 = 0;
    for (size_t i = 0; i < (size_t)N * B; i++) {
        cr_assert_lt(a[i], N);
        count[a[i]]++;
    }
    for (int k = 0; k < N; k++)
        chi2 += pow(count[k] - B, 2) / B; /* expected B per value */
    cr_assert_lt(chi2, 22.46, "chi2 %g with 6 degrees of freedom (p = 0.001 bound)", chi2);
    bs.samples = 0;
    cr_assert_eq(rb_bootstrap_draw(&bs, N, a, &err), RB_EINVAL);
    free(a);
    free(b);
}

/* The same plan, x and level through numpy: interval and box figures agree to rounding. */
Test(metrics_compare, bootstrap_and_boxes_match_numpy)
{
    enum { N = 23, B = 999 };
    double x[N], scratch[B > N ? B : N], lo, hi;
    rb_rng rng;
    rb_rng_seed(&rng, 5);
    for (int i = 0; i < N; i++)
        x[i] = rb_rng_normal(&rng) * (i == 3 ? 9 : 1) + (i == 17 ? 8 : 0); /* two outliers */
    rb_bootstrap bs = {B, 99, 0.9};
    size_t *idx = malloc(sizeof(size_t) * N * B);
    rb_err err;
    cr_assert_eq(rb_bootstrap_draw(&bs, N, idx, &err), RB_OK);
    rb_bootstrap_mean_interval(x, N, idx, B, bs.level, scratch, &lo, &hi);
    rb_box box;
    rb_box_stats(x, N, scratch, &box);

    char *dir = test_temp_dir(), path[512], cmd[1200], out[512] = "";
    snprintf(path, sizeof path, "%s/plan.txt", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "%d %d %.17g\n", N, B, bs.level);
    for (int i = 0; i < N; i++)
        fprintf(f, "%.17g ", x[i]);
    fputc('\n', f);
    for (int b = 0; b < B; b++) {
        for (int i = 0; i < N; i++)
            fprintf(f, "%zu ", idx[b * N + i]);
        fputc('\n', f);
    }
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s %s '%s' 2>&1", PYTHON, CHECK_PY, path);
    FILE *p = popen(cmd, "r");
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: %s", cmd, out);
    double v[7];
    int outliers;
    cr_assert_eq(
        sscanf(out, "%lf %lf %lf %lf %lf %lf %lf %d", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &outliers), 8,
        "%s", out);
    const double mine[7] = {lo, hi, box.q1, box.median, box.q3, box.whisker_lo, box.whisker_hi};
    for (int k = 0; k < 7; k++)
        cr_assert_float_eq(mine[k], v[k], 1e-12 * (1 + fabs(v[k])), "figure %d: %.17g vs numpy %.17g", k, mine[k],
                           v[k]);
    cr_assert_eq((int)box.n_outliers, outliers);
    cr_assert_geq(outliers, 1);
    free(idx);
    test_remove_tree(dir);
}

/* On normal samples the 90 % percentile interval of the mean covers the true mean about 90 % of the time
 * (a little less for n = 30: the percentile interval is slightly narrow). 400 data sets: the binomial
 * spread of the coverage is 1.5 %. */
Test(metrics_compare, bootstrap_coverage_on_synthetic_data)
{
    enum { N = 30, B = 1000, SETS = 400 };
    rb_bootstrap bs = {B, 7, 0.9};
    size_t *idx = malloc(sizeof(size_t) * N * B);
    double x[N], scratch[B], lo, hi;
    rb_err err;
    cr_assert_eq(rb_bootstrap_draw(&bs, N, idx, &err), RB_OK);
    rb_rng rng;
    rb_rng_seed(&rng, 2024);
    int covered = 0;
    for (int s = 0; s < SETS; s++) {
        for (int i = 0; i < N; i++)
            x[i] = 3 + 2 * rb_rng_normal(&rng);
        rb_bootstrap_mean_interval(x, N, idx, B, bs.level, scratch, &lo, &hi);
        covered += lo <= 3 && 3 <= hi;
    }
    double coverage = (double)covered / SETS;
    cr_assert(coverage > 0.84 && coverage < 0.95, "coverage %g", coverage);
    free(idx);
}

/* ---- the table ------------------------------------------------------------------------------------------- */
static rb_comparison *table(size_t n_logs, const double *rmse_per_log)
{
    const char *variants[] = {"fast", "slow|pipe"}, *logs[] = {"log_a", "log,b", "c"}, *joints[] = {"j1", "j2"};
    rb_comparison *c;
    rb_err err;
    cr_assert_eq(rb_comparison_new(&c, "Study", "truth/tau", variants, 2, logs, n_logs, joints, 2, &err), RB_OK);
    for (size_t v = 0; v < 2; v++)
        for (size_t j = 0; j <= 2; j++)
            for (size_t l = 0; l < n_logs; l++) {
                double r = rmse_per_log[l] * (double)(v + 1) + 0.01 * (double)j;
                *rb_comparison_at(c, v, j, l) = (rb_stats){.n = 100,
                                                           .mse = r * r,
                                                           .rmse = r,
                                                           .mae = 0.8 * r,
                                                           .max_abs = 2 * r,
                                                           .mean_abs_est = 1.5,
                                                           .mean_abs_ref = 1.25};
            }
    c->bootstrap = (rb_bootstrap){4000, 1, 0.95};
    return c;
}

Test(metrics_compare, summary_closed_form)
{
    const double r[] = {0.1, 0.3};
    rb_comparison *c = table(2, r);
    rb_err err;
    cr_assert_eq(rb_comparison_summarize(c, &err), RB_OK, "%s", err.msg);
    const rb_summary *s = rb_comparison_summary(c, 0, 2, 1); /* fast, all, rmse: 0.12 and 0.32 */
    cr_assert_float_eq(s->mean, 0.22, 1e-15);
    cr_assert_float_eq(s->sd, 0.2 / sqrt(2), 1e-15);
    cr_assert_float_eq(s->min, 0.12, 1e-15);
    cr_assert_float_eq(s->max, 0.32, 1e-15);
    /* Two logs: resample means are 0.12, 0.22, 0.32 with probabilities 1/4, 1/2, 1/4, so the 2.5 % and
     * 97.5 % quantiles of 4000 replicates are the extremes. */
    cr_assert_float_eq(s->lo, 0.12, 1e-15);
    cr_assert_float_eq(s->hi, 0.32, 1e-15);
    rb_comparison_free(c);
}

Test(metrics_compare, one_log_collapses_the_interval)
{
    const double r[] = {0.4};
    rb_comparison *c = table(1, r);
    rb_err err;
    cr_assert_eq(rb_comparison_summarize(c, &err), RB_OK);
    const rb_summary *s = rb_comparison_summary(c, 1, 0, 2); /* slow, j1, mae = 0.8 * 0.8 */
    cr_assert_float_eq(s->mean, 0.64, 1e-15);
    cr_assert_eq(s->sd, 0);
    cr_assert_eq(s->lo, s->mean);
    cr_assert_eq(s->hi, s->mean);
    rb_comparison_free(c);
}

Test(metrics_compare, nonfinite_value_is_named)
{
    const double r[] = {0.1, 0.3};
    rb_comparison *c = table(2, r);
    rb_comparison_at(c, 1, 0, 1)->mae = NAN;
    rb_err err;
    cr_assert_eq(rb_comparison_summarize(c, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "slow|pipe") && strstr(err.msg, "j1") && strstr(err.msg, "log,b") &&
                  strstr(err.msg, "mae"),
              "%s", err.msg);
    char *text;
    cr_assert_eq(rb_comparison_render(c, RB_REPORT_JSON, &text, &err), RB_EINVAL); /* not summarized */
    rb_comparison_free(c);
}

Test(metrics_compare, json_round_trips_and_markdown_escapes)
{
    const double r[] = {0.1, 0.7, 0.3};
    rb_comparison *c = table(3, r);
    rb_err err;
    c->n_shown = 2;
    c->shown[0] = 1, c->shown[1] = 5;
    cr_assert_eq(rb_comparison_set_attr(c, "suite", "s.json", &err), RB_OK);
    cr_assert_eq(rb_comparison_summarize(c, &err), RB_OK);
    char *json, *md, *csv;
    cr_assert_eq(rb_comparison_render(c, RB_REPORT_JSON, &json, &err), RB_OK);
    cr_assert_eq(rb_comparison_render(c, RB_REPORT_MARKDOWN, &md, &err), RB_OK);
    cr_assert_eq(rb_comparison_render(c, RB_REPORT_CSV, &csv, &err), RB_OK);
    cJSON *root = cJSON_Parse(json);
    cr_assert_not_null(root, "%s", json);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(root, "statistics")), 2);
    const cJSON *v1 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "variants"), 1);
    cr_assert_str_eq(cJSON_GetObjectItem(v1, "name")->valuestring, "slow|pipe");
    const cJSON *rm = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v1, "joints"), "j2"), "rmse");
    const rb_summary *s = rb_comparison_summary(c, 1, 1, 1);
    cr_assert_eq(cJSON_GetObjectItem(rm, "mean")->valuedouble, s->mean); /* bit for bit */
    cr_assert_eq(cJSON_GetObjectItem(rm, "hi")->valuedouble, s->hi);
    cr_assert_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(rm, "per_log"), 1)->valuedouble,
                 rb_comparison_at(c, 1, 1, 1)->rmse);
    cr_assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(v1, "all"), "mse")); /* not shown */
    cJSON_Delete(root);
    cr_assert(strstr(md, "| slow\\|pipe |"), "%s", md);
    cr_assert(strstr(md, "## RMSE per joint") && strstr(md, "## mean abs ref per joint"));
    /* CSV: 2 variants x 3 joint rows x 2 statistics, a header, and the quoted log name */
    cr_assert(strstr(csv, "variant,joint,statistic,mean,sd,lo,hi,min,max,log_a,\"log,b\",c\n"), "%s", csv);
    int rows = 0;
    for (const char *p = csv; (p = strchr(p, '\n')); p++)
        rows++;
    cr_assert_eq(rows, 4 + 1 + 12, "%s", csv); /* title, reference, bootstrap, suite */
    rb_free(json);
    rb_free(md);
    rb_free(csv);
    rb_comparison_free(c);
}

/* ---- figures ------------------------------------------------------------------------------------------ */
static xmlDocPtr parse_svg(const char *svg)
{
    xmlDocPtr doc = xmlReadMemory(svg, (int)strlen(svg), "figure.svg", NULL, XML_PARSE_NONET | XML_PARSE_NOERROR);
    cr_assert_not_null(doc, "not well-formed XML:\n%s", svg);
    return doc;
}

static int count(xmlDocPtr doc, const char *xpath)
{
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathRegisterNs(ctx, BAD_CAST "s", BAD_CAST "http://www.w3.org/2000/svg");
    xmlXPathObjectPtr r = xmlXPathEvalExpression(BAD_CAST xpath, ctx);
    cr_assert_not_null(r, "%s", xpath);
    int n = r->nodesetval ? r->nodesetval->nodeNr : 0;
    xmlXPathFreeObject(r);
    xmlXPathFreeContext(ctx);
    return n;
}

Test(metrics_compare, nice_ticks)
{
    double t[32];
    size_t n = rb_nice_ticks(0.013, 0.871, 6, t, 32);
    cr_assert_geq(n, 4);
    cr_assert_leq(t[0], 0.013);
    cr_assert_geq(t[n - 1], 0.871);
    double step = t[1] - t[0], mant = step / pow(10, floor(log10(step)));
    cr_assert(fabs(mant - 1) < 1e-9 || fabs(mant - 2) < 1e-9 || fabs(mant - 5) < 1e-9, "step %g", step);
    for (size_t i = 1; i < n; i++)
        cr_assert_float_eq(t[i] - t[i - 1], step, 1e-12);
    n = rb_nice_ticks(5, 5, 6, t, 32); /* a flat range still gets an axis */
    cr_assert(n >= 2 && t[0] < 5 && t[n - 1] > 5);
}

Test(metrics_compare, boxplot_svg_structure)
{
    const double a[] = {1, 2, 3, 4, 5, 6, 7, 8, 40}, b[] = {2, 2.5, 3}, c[] = {-1, 9};
    rb_box_series s[] = {{"fast", a, 9}, {"slow & <old>", b, 3}, {"ref", c, 2}};
    char *svg;
    rb_err err;
    cr_assert_eq(rb_svg_boxplot("RMSE \"all\"", "RMSE (N m)", s, 3, &svg, &err), RB_OK, "%s", err.msg);
    xmlDocPtr doc = parse_svg(svg);
    cr_assert_eq(count(doc, "//s:g[@class='box']"), 3);
    cr_assert_eq(count(doc, "//s:g[@class='box']/s:rect[@class='iqr']"), 3);
    cr_assert_eq(count(doc, "//s:line[@class='median']"), 3);
    cr_assert_eq(count(doc, "//s:circle[@class='outlier']"), 1); /* 40 is beyond q3 + 1.5 IQR = 13 */
    cr_assert_eq(count(doc, "//s:text[@class='x-label' and .='slow & <old>']"), 1);
    cr_assert_geq(count(doc, "//s:text[@class='tick-label']"), 3);
    xmlFreeDoc(doc);
    rb_free(svg);
    double bad[] = {1, NAN};
    s[1] = (rb_box_series){"nan", bad, 2};
    cr_assert_eq(rb_svg_boxplot("t", "y", s, 3, &svg, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "nan"));
}

Test(metrics_compare, traces_svg_shading_and_thinning)
{
    enum { T = 100000 };
    double *t = malloc(T * sizeof *t), *y = malloc(T * sizeof *y), *e = malloc(T * sizeof *e);
    for (int k = 0; k < T; k++) {
        t[k] = 100 + k * 1e-4;
        y[k] = sin(t[k]);
        e[k] = k == 500 ? NAN : y[k] + 0.01;
    }
    rb_trace_line lines[] = {{"truth", t, y, T}, {"est", t, e, T}};
    rb_interval shade[] = {{90, 95}, {101, 102}, {104, 104.5}, {109.5, 120}, {130, 131}};
    char *svg;
    rb_err err;
    cr_assert_eq(rb_svg_traces("j1", "tau (N m)", lines, 2, shade, 5, 100, 110, &svg, &err), RB_OK);
    xmlDocPtr doc = parse_svg(svg);
    cr_assert_eq(count(doc, "//s:rect[@class='shade']"), 3); /* the two outside [100, 110] are left out */
    cr_assert_eq(count(doc, "//s:polyline[@class='trace']"), 2);
    cr_assert(strlen(svg) < 200000, "thinned: %zu bytes for 2 x %d samples", strlen(svg), T);
    cr_assert_null(strstr(svg, "nan"));
    xmlFreeDoc(doc);
    rb_free(svg);
    cr_assert_eq(rb_svg_traces("j1", "y", lines, 2, NULL, 0, 5, 5, &svg, &err), RB_EINVAL);
    free(t);
    free(y);
    free(e);
}
