/* Confusion tables (roboest/metrics.h, rb_confusion_*): counts against a direct count of random classes with a
 * window and a where mask, row percentages and the utilization, the thesis's Table 3 read back, classes outside the
 * labels (and NaN, 1.5) refused while a masked sample is never read, and the tables in a run report (Markdown, JSON
 * with null for an empty row, CSV) and in a comparison table. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "roboest/core.h"
#include "roboest/metrics.h"

#define T 500
#define N 2

static void random_classes(rb_rng *rng, double *e, double *r, double *w, double *t)
{
    for (size_t k = 0; k < T; k++) {
        t[k] = 0.01 * (double)k;
        for (size_t i = 0; i < N; i++) {
            e[k * N + i] = floor(3 * rb_rng_uniform(rng));
            r[k * N + i] = floor(2 * rb_rng_uniform(rng));
            w[k * N + i] = rb_rng_uniform(rng) < 0.7;
        }
    }
}

Test(metrics_confusion, counts_match_a_direct_count)
{
    static double e[T * N], r[T * N], w[T * N], t[T];
    rb_rng rng;
    rb_rng_seed(&rng, 11);
    random_classes(&rng, e, r, w, t);
    rb_confusion c;
    rb_err err;
    cr_assert_eq(rb_confusion_init(&c, 2, 3, &err), RB_OK);
    rb_confusion_input in = {"pred", "truth", e, r, w, t, T, N, 1.0, 3.0};
    cr_assert_eq(rb_confusion_count(&in, &c, &err), RB_OK, "%s", err.msg);
    double direct[2][3] = {{0}}, total = 0, not0 = 0;
    for (size_t k = 0; k < T; k++)
        for (size_t i = 0; i < N; i++)
            if (t[k] >= 1.0 && t[k] <= 3.0 && w[k * N + i] != 0) {
                direct[(int)r[k * N + i]][(int)e[k * N + i]]++;
                total++;
                not0 += e[k * N + i] != 0;
            }
    for (int i = 0; i < 2; i++) {
        double row = direct[i][0] + direct[i][1] + direct[i][2];
        for (int j = 0; j < 3; j++) {
            cr_assert_eq(c.counts[i * 3 + j], direct[i][j]);
            cr_assert_float_eq(rb_confusion_percent(&c, (size_t)i, (size_t)j), 100 * direct[i][j] / row, 1e-12);
        }
    }
    cr_assert_eq(rb_confusion_total(&c), total);
    cr_assert_float_eq(rb_confusion_utilization(&c), 100 * not0 / total, 1e-12);
    /* adding a second count of the same input doubles every cell */
    rb_confusion d = c;
    cr_assert_eq(rb_confusion_count(&in, &d, &err), RB_OK);
    for (int i = 0; i < 6; i++)
        cr_assert_eq(d.counts[i], 2 * c.counts[i]);
    rb_confusion other;
    rb_confusion_init(&other, 3, 3, &err);
    cr_assert_eq(rb_confusion_add(&other, &c, &err), RB_EINVAL);
}

Test(metrics_confusion, the_thesis_table_3)
{
    /* PAPERS.md 0.5: rows true non-slipping [37, 23, 3], true slipping [1, 14, 4] in the columns {non-slipping,
     * slipping, tends to slip}; here the columns are {no slip, tends to slip, slipping} */
    rb_confusion c;
    rb_err err;
    rb_confusion_init(&c, 2, 3, &err);
    double cells[6] = {37, 3, 23, 1, 4, 14};
    memcpy(c.counts, cells, sizeof cells);
    cr_assert_float_eq(rb_confusion_percent(&c, 1, 2), 73.684, 1e-3); /* "74 %" */
    cr_assert_float_eq(rb_confusion_percent(&c, 0, 0), 58.730, 1e-3); /* "59 %" */
    cr_assert_float_eq(rb_confusion_percent(&c, 0, 2), 36.508, 1e-3); /* "37 %" */
    cr_assert_float_eq(rb_confusion_utilization(&c), 53.659, 1e-3);   /* "54 %" */
    rb_confusion_init(&c, 3, 3, &err);
    cr_assert(isnan(rb_confusion_percent(&c, 1, 1))); /* an empty row has no percentage */
    cr_assert(isnan(rb_confusion_utilization(&c)));
    cr_assert_eq(rb_confusion_init(&c, 0, 3, &err), RB_EINVAL);
    cr_assert_eq(rb_confusion_init(&c, 2, RB_CONFUSION_MAX + 1, &err), RB_EINVAL);
}

Test(metrics_confusion, classes_outside_the_labels_are_refused)
{
    double e[4] = {0, 2, 3, 1}, r[4] = {0, 1, 1, 0}, t[4] = {0, 1, 2, 3};
    rb_confusion c;
    rb_err err;
    rb_confusion_init(&c, 2, 3, &err);
    rb_confusion_input in = {"prediction", "slipping", e, r, NULL, t, 4, 1, -INFINITY, INFINITY};
    cr_assert_eq(rb_confusion_count(&in, &c, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "estimate prediction") && strstr(err.msg, "sample 2") && strstr(err.msg, "is 3"), "%s",
              err.msg);
    double w[4] = {1, 1, 0, 1}; /* masked: never read */
    rb_confusion_init(&c, 2, 3, &err);
    in.where = w;
    cr_assert_eq(rb_confusion_count(&in, &c, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_confusion_total(&c), 3);
    r[1] = 2; /* the reference has two labels */
    cr_assert_eq(rb_confusion_count(&in, &c, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "reference slipping"), "%s", err.msg);
    r[1] = 1, e[1] = 1.5;
    cr_assert_eq(rb_confusion_count(&in, &c, &err), RB_EINPUT);
    e[1] = NAN;
    cr_assert_eq(rb_confusion_count(&in, &c, &err), RB_EINPUT);
    e[1] = 1;
    in.t0 = 3; /* outside the window: not read either */
    e[0] = 7;
    rb_confusion_init(&c, 2, 3, &err);
    cr_assert_eq(rb_confusion_count(&in, &c, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_confusion_total(&c), 1);
}

static rb_report_confusion table(char **labels, char **ref_labels)
{
    rb_report_confusion c = {.run = "p/walk",
                             .name = "slip",
                             .estimate = "prediction",
                             .reference = "slipping",
                             .where = "contact",
                             .labels = labels,
                             .reference_labels = ref_labels};
    rb_err err;
    rb_confusion_init(&c.table, 3, 3, &err);
    double cells[9] = {40, 5, 5, 0, 0, 0, 1, 2, 7}; /* the middle row empty */
    memcpy(c.table.counts, cells, sizeof cells);
    return c;
}

Test(metrics_confusion, in_a_run_report)
{
    char *labels[3] = {"no_slip", "tends_to_slip", "slipping"};
    rb_report *rep = NULL;
    rb_err err;
    cr_assert_eq(rb_report_new(&rep, "slip", &err), RB_OK);
    rb_report_confusion c = table(labels, labels);
    cr_assert_eq(rb_report_add_confusion(rep, &c, &err), RB_OK);
    char *json = NULL, *md = NULL, *csv = NULL;
    cr_assert_eq(rb_report_render(rep, RB_REPORT_JSON, &json, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_report_render(rep, RB_REPORT_MARKDOWN, &md, &err), RB_OK);
    cr_assert_eq(rb_report_render(rep, RB_REPORT_CSV, &csv, &err), RB_OK);
    cJSON *root = cJSON_Parse(json);
    cr_assert(root, "%s", json);
    const cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "confusions"), 0);
    cr_assert_str_eq(cJSON_GetObjectItem(t, "where")->valuestring, "contact");
    const cJSON *counts = cJSON_GetObjectItem(t, "counts"), *pct = cJSON_GetObjectItem(t, "row_percent");
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            cr_assert_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(counts, i), j)->valuedouble, c.table.counts[3 * i + j]);
    cr_assert(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetArrayItem(pct, 1), 0))); /* an empty row: null, said so */
    cr_assert_float_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(pct, 2), 2)->valuedouble, 70, 1e-12);
    cr_assert_float_eq(cJSON_GetObjectItem(t, "utilization")->valuedouble, 100.0 * (60 - 41) / 60,
                       1e-12); /* all but the no_slip column */
    cr_assert(strstr(md, "## Confusion slip (p/walk)") && strstr(md, "| no_slip | 40 (80.0 %) | 5 (10.0 %)"), "%s", md);
    cr_assert(strstr(csv, "# confusion: run p/walk, slip, reference slipping, estimate slipping: 7"), "%s", csv);
    cJSON_Delete(root);
    rb_free(json);
    rb_free(md);
    rb_free(csv);
    rb_report_free(rep);
}

Test(metrics_confusion, in_a_comparison_table)
{
    const char *variants[2] = {"a", "b"}, *logs[2] = {"l1", "l2"}, *joints[1] = {"r_sole"};
    const char *labels[3] = {"no_slip", "tends_to_slip", "slipping"}, *ref[2] = {"no_slip", "slipping"};
    rb_comparison *c = NULL;
    rb_err err;
    cr_assert_eq(rb_comparison_new(&c, "t", "truth", variants, 2, logs, 2, joints, 1, &err), RB_OK);
    cr_assert_eq(rb_comparison_set_confusion(c, labels, 3, ref, 2, "contact", &err), RB_OK);
    for (size_t v = 0; v < 2; v++)
        for (size_t l = 0; l < 2; l++)
            rb_comparison_confusion(c, v, l)->counts[5] = (double)(1 + v + 2 * l); /* slipping -> slipping */
    cr_assert_eq(rb_comparison_summarize(c, &err), RB_OK);
    char *json = NULL;
    cr_assert_eq(rb_comparison_render(c, RB_REPORT_JSON, &json, &err), RB_OK);
    cJSON *root = cJSON_Parse(json);
    cr_assert(root, "%s", json);
    const cJSON *b = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "confusion"), "variants"), 1);
    cr_assert_str_eq(cJSON_GetObjectItem(b, "name")->valuestring, "b");
    /* the logs pooled: 2 + 4 */
    cr_assert_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(b, "counts"), 1), 2)->valuedouble, 6);
    cJSON_Delete(root);
    rb_free(json);
    rb_comparison_free(c);
}
