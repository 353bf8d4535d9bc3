/* roboest check: a field naming one of the report's logs reads that log's value of the statistic (per_log). */
#include <criterion/criterion.h>
#include <string.h>

#include "roboest/experiments.h"

static const char REPORT[] =
    "{\"logs\": [\"robot_a\", \"robot_b\"], \"statistics\": [\"rmse\"], \"joints\": [\"knee\"],"
    " \"variants\": ["
    "  {\"name\": \"ukf\", \"all\": {\"rmse\": {\"mean\": 0.2, \"sd\": 0.1, \"lo\": 0.1, \"hi\": 0.3, \"min\": 0.1,"
    "   \"max\": 0.3, \"per_log\": [0.1, 0.3]}},"
    "   \"joints\": {\"knee\": {\"rmse\": {\"mean\": 0.2, \"sd\": 0.1, \"lo\": 0.1, \"hi\": 0.3, \"min\": 0.1,"
    "   \"max\": 0.3, \"per_log\": [0.15, 0.25]}}}},"
    "  {\"name\": \"rnea\", \"all\": {\"rmse\": {\"mean\": 0.2, \"sd\": 0, \"lo\": 0.2, \"hi\": 0.2, \"min\": 0.2,"
    "   \"max\": 0.2, \"per_log\": [0.2, 0.2]}},"
    "   \"joints\": {\"knee\": {\"rmse\": {\"mean\": 0.2, \"sd\": 0, \"lo\": 0.2, \"hi\": 0.2, \"min\": 0.2,"
    "   \"max\": 0.2, \"per_log\": [0.2, 0.2]}}}}]}";

static rb_check *check(const char *rule, int expect_rc, rb_err *err)
{
    const char *rules[] = {rule}, *wheres[] = {"--rule 1"};
    rb_check *c = NULL;
    cr_assert_eq(rb_check_rules(REPORT, strlen(REPORT), "report.json", rules, wheres, 1, &c, err), expect_rc, "%s: %s",
                 rule, err->msg);
    return c;
}

Test(check_per_log, a_log_name_reads_that_logs_value)
{
    rb_err err;
    /* the means tie; per log the UKF wins on robot_a and loses on robot_b */
    rb_check *c = check("ukf.rmse.robot_a < rnea.rmse.robot_a", RB_OK, &err);
    cr_assert_eq(c->n_failed, 0, "%s", c->rules[0].message);
    cr_assert_float_eq(c->rules[0].left, 0.1, 1e-15);
    rb_check_free(c);
    c = check("ukf.rmse.robot_b < rnea.rmse.robot_b", RB_OK, &err);
    cr_assert_eq(c->n_failed, 1);
    cr_assert_float_eq(c->rules[0].left, 0.3, 1e-15);
    rb_check_free(c);
    c = check("ukf.rmse[knee].robot_b <= 0.25", RB_OK, &err);
    cr_assert_eq(c->n_failed, 0, "%s", c->rules[0].message);
    cr_assert_float_eq(c->rules[0].left, 0.25, 1e-15);
    rb_check_free(c);
}

Test(check_per_log, an_unknown_log_is_named_with_a_suggestion)
{
    rb_err err;
    cr_assert_null(check("ukf.rmse.robot_c < 1", RB_ECONFIG, &err));
    cr_assert(strstr(err.msg, "unknown field 'robot_c'") && strstr(err.msg, "robot_a"), "%s", err.msg);
}
