/* A channel clock's period given to the stages (rb_run_result.dt) is 1 / the channel's rate from its span: with
 * epoch timestamps the median interval is off by up to 2.4e-7 s in 1 ms. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/pipeline.h"

Test(pipeline_clock_rate, epoch_channel_clock_period)
{
    rb_err err;
    rb_registry *reg;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK);
    rb_log *log;
    rb_channel *ch;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    cr_assert_eq(rb_log_add_channel(log, "enc", 5001, 1, &ch, &err), RB_OK);
    for (size_t k = 0; k < 5001; k++) {
        ch->time[k] = 1.7e9 + (double)k * 1e-3;
        ch->data[k] = (double)k;
    }
    const char *text = "{\"clock\": {\"channel\": \"enc\"}, \"signals\": {\"q\": {\"channel\": \"enc\"}},\n"
                       " \"stages\": [{\"id\": \"fd\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q\"}, "
                       "\"out\": {\"dx\": \"v\"}}]}";
    rb_pipeline *p;
    cr_assert_eq(rb_pipeline_load_text(text, strlen(text), "run.json", "run.json", reg, &p, &err), RB_OK, "%s",
                 err.msg);
    rb_run_result *res;
    cr_assert_eq(rb_pipeline_run_log(p, log, NULL, 0, NULL, &res, &err), RB_OK, "%s", err.msg);
    cr_assert(fabs(res->dt - 1e-3) < 1e-12, "dt %.17g s", res->dt);
    rb_run_result_free(res);
    rb_pipeline_free(p);
    rb_log_free(log);
    rb_registry_free(reg);
}
