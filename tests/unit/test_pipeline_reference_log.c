/* A metric's reference in another file (reference_log, lib/pipeline/reference.c): the key's checks, the clocks'
 * check, and that the resolved configuration keeps it. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/pipeline.h"

static rb_registry *reg;

static void setup(void)
{
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK);
}

static void teardown(void) { rb_registry_free(reg); }

TestSuite(pipeline_reference_log, .init = setup, .fini = teardown);

static int load(const char *reference_log, rb_pipeline **p, rb_err *err)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"clock\": {\"rate\": 100}, \"signals\": {\"q\": {\"channel\": \"q\"}},\n"
             " \"metrics\": [{\"estimate\": \"q\", \"reference\": \"truth/q\", \"reference_log\": %s}]}",
             reference_log);
    return rb_pipeline_load_text(text, strlen(text), "cfg/run.json", "cfg/run.json", reg, p, err);
}

Test(pipeline_reference_log, paths_relative_to_the_config_unless_log_dir)
{
    rb_pipeline *p;
    rb_err err;
    cr_assert_eq(load("\"truth/{log_stem}.h5\"", &p, &err), RB_OK, "%s", err.msg);
    cr_assert_str_eq(p->metrics[0].reference_log.path, "cfg/truth/{log_stem}.h5");
    cr_assert(!p->metrics[0].reference_log.has_offset);
    char *json = rb_pipeline_resolved_json(p);
    cr_assert(strstr(json, "\"reference_log\""), "%s", json);
    rb_free(json);
    rb_pipeline_free(p);
    cr_assert_eq(
        load("{\"path\": \"{log_dir}/{log_stem}_truth.h5\", \"time_offset\": -5, \"interp\": \"hold\"}", &p, &err),
        RB_OK, "%s", err.msg);
    const rb_reference_log *rl = &p->metrics[0].reference_log;
    cr_assert_str_eq(rl->path, "{log_dir}/{log_stem}_truth.h5");
    cr_assert(rl->has_offset && rl->time_offset == -5 && rl->interp == RB_INTERP_HOLD);
    rb_pipeline_free(p);
}

Test(pipeline_reference_log, unknown_placeholder_is_a_config_error)
{
    rb_pipeline *p = NULL;
    rb_err err;
    cr_assert_eq(load("\"{log_dir}/{stem}.h5\"", &p, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "reference_log") && strstr(err.msg, "unknown placeholder"), "%s", err.msg);
    cr_assert_null(p);
}

static rb_channel *channel(rb_log *log, const char *name, double t0, size_t T, double dt)
{
    rb_channel *ch;
    rb_err err;
    cr_assert_eq(rb_log_add_channel(log, name, T, 1, &ch, &err), RB_OK);
    for (size_t k = 0; k < T; k++) {
        ch->time[k] = t0 + (double)k * dt;
        ch->data[k] = 0;
    }
    return ch;
}

Test(pipeline_reference_log, epoch_against_zero_based_clock)
{
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    rb_channel *ref = channel(log, "truth/q", 1.7e9, 100, 0.01);
    double t[3] = {0, 0.5, 0.9};
    rb_reference_log rl = {"truth.h5", false, 0, RB_INTERP_LINEAR};
    cr_assert_eq(rb_reference_log_check_clock(&rl, "truth.h5", ref, t, 3, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "truth.h5") && strstr(err.msg, "epoch") && strstr(err.msg, "time_offset"), "%s", err.msg);
    /* an offset given: only the overlap is checked */
    rl.has_offset = true;
    cr_assert_eq(rb_reference_log_check_clock(&rl, "truth.h5", ref, t, 3, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "covers no sample"), "%s", err.msg);
    for (size_t k = 0; k < 100; k++)
        ref->time[k] -= 1.7e9;
    cr_assert_eq(rb_reference_log_check_clock(&rl, "truth.h5", ref, t, 3, &err), RB_OK, "%s", err.msg);
    rb_log_free(log);
}

/* A log in memory has no folder nor stem to fill the template with. */
Test(pipeline_reference_log, placeholder_needs_a_log_file)
{
    rb_pipeline *p;
    rb_err err;
    cr_assert_eq(load("\"{log_dir}/{log_stem}_truth.h5\"", &p, &err), RB_OK, "%s", err.msg);
    rb_log *log;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    channel(log, "q", 0, 100, 0.01);
    rb_run_result *res = NULL;
    cr_assert_neq(rb_pipeline_run_log(p, log, NULL, 0, NULL, &res, &err), RB_OK);
    cr_assert(strstr(err.msg, "metrics[0]") && strstr(err.msg, "{log_dir} needs a log read from a file"), "%s",
              err.msg);
    cr_assert_null(res);
    rb_log_free(log);
    rb_pipeline_free(p);
}
