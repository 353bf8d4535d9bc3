/* The run report's warnings (rb_report_add_warning): a list after the table in Markdown, an array in JSON, comment
 * lines before the header in CSV; nothing at all without warnings. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/metrics.h"

static char *render(const rb_report *rep, rb_report_format f)
{
    char *text = NULL;
    rb_err err;
    cr_assert_eq(rb_report_render(rep, f, &text, &err), RB_OK, "%s", err.msg);
    return text;
}

static rb_report *report_with_a_row(void)
{
    rb_report *rep = NULL;
    rb_err err;
    cr_assert_eq(rb_report_new(&rep, "t", &err), RB_OK);
    rb_stats st = {.n = 2, .mse = 1, .rmse = 1, .mae = 1, .max_abs = 1};
    cr_assert_eq(rb_report_add(rep, "run", "est", "ref", "all", &st, &err), RB_OK, "%s", err.msg);
    return rep;
}

Test(metrics_report_warnings, every_format_carries_the_warnings)
{
    rb_report *rep = report_with_a_row();
    rb_err err;
    cr_assert_eq(rb_report_add_warning(rep, "log.mat: stage inertial: 12 rows skipped (non-finite torque)", &err),
                 RB_OK);
    cr_assert_eq(rb_report_add_warning(rep, "second", &err), RB_OK);
    char *md = render(rep, RB_REPORT_MARKDOWN), *json = render(rep, RB_REPORT_JSON), *csv = render(rep, RB_REPORT_CSV);
    cr_assert(strstr(md, "\n## Warnings\n\n- log.mat: stage inertial: 12 rows skipped (non-finite torque)\n- second\n"),
              "%s", md);
    cr_assert(strstr(json, "\"warnings\":") && strstr(json, "\"second\""), "%s", json);
    const char *w = strstr(csv, "# warning: second\n"), *header = strstr(csv, "run,estimate,reference");
    cr_assert(w && header && w < header, "%s", csv);
    free(md), free(json), free(csv);
    rb_report_free(rep);
}

Test(metrics_report_warnings, no_warning_writes_nothing)
{
    rb_report *rep = report_with_a_row();
    char *md = render(rep, RB_REPORT_MARKDOWN), *json = render(rep, RB_REPORT_JSON), *csv = render(rep, RB_REPORT_CSV);
    cr_assert_null(strstr(md, "Warnings"));
    cr_assert_null(strstr(json, "warnings"));
    cr_assert_null(strstr(csv, "warning"));
    free(md), free(json), free(csv);
    rb_report_free(rep);
}
