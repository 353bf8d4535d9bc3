/* The pipeline config's "faults" section: defaults, every key, errors with the key path, the resolved form. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "roboest/pipeline.h"

static int load(const char *faults, rb_pipeline **p, rb_err *err)
{
    rb_registry *reg = NULL;
    cr_assert_eq(rb_registry_new(&reg, err), RB_OK);
    char text[1024];
    snprintf(text, sizeof text, "{\"clock\": {\"rate\": 100}, \"signals\": {\"q\": {\"channel\": \"a/b\"}}%s}", faults);
    int rc = rb_pipeline_load_text(text, strlen(text), "f.json", NULL, reg, p, err);
    rb_registry_free(reg);
    return rc;
}

Test(pipeline_faults, defaults_keys_and_round_trip)
{
    rb_pipeline *p = NULL, *q = NULL;
    rb_err err;
    cr_assert_eq(load("", &p, &err), RB_OK, "%s", err.msg);
    cr_assert(p->faults_enabled);
    cr_assert_eq(p->faults.stuck_window, 200);
    cr_assert_eq(p->faults.saturation_window, 100);
    cr_assert_eq(p->faults.k_sigma, 8.0);
    cr_assert_eq(p->faults.settle, 0.5);
    rb_pipeline_free(p);
    cr_assert_eq(load(", \"faults\": {\"enabled\": false, \"stuck_window\": 7, \"stuck_tolerance\": 0.01, "
                      "\"saturation_window\": 0, \"k_sigma\": 5, \"settle\": 2}",
                      &p, &err),
                 RB_OK, "%s", err.msg);
    cr_assert(!p->faults_enabled);
    cr_assert_eq(p->faults.stuck_window, 7);
    cr_assert_eq(p->faults.stuck_tolerance, 0.01);
    cr_assert_eq(p->faults.saturation_window, 0);
    cr_assert_eq(p->faults.k_sigma, 5.0);
    cr_assert_eq(p->faults.settle, 2.0);
    char *j1 = rb_pipeline_resolved_json(p);
    cr_assert(strstr(j1, "\"faults\"") && strstr(j1, "\"stuck_window\":\t7"), "%s", j1);
    rb_registry *reg = NULL;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_pipeline_load_text(j1, strlen(j1), "r.json", NULL, reg, &q, &err), RB_OK, "%s", err.msg);
    char *j2 = rb_pipeline_resolved_json(q);
    cr_assert_str_eq(j1, j2);
    rb_free(j1), rb_free(j2);
    rb_pipeline_free(p), rb_pipeline_free(q), rb_registry_free(reg);
}

Test(pipeline_faults, bad_keys_name_their_path)
{
    static const struct {
        const char *faults, *msg;
    } cases[] = {
        {", \"faults\": {\"stuck_window\": -1}", "faults.stuck_window"},
        {", \"faults\": {\"stuck_window\": 2.5}", "faults.stuck_window"},
        {", \"faults\": {\"k_sigma\": -3}", "faults.k_sigma"},
        {", \"faults\": {\"enabled\": 1}", "faults.enabled"},
        {", \"faults\": {\"stuck_windw\": 5}", "stuck_windw"},
        {", \"faults\": []", "faults"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rb_pipeline *p = NULL;
        rb_err err;
        cr_assert_eq(load(cases[i].faults, &p, &err), RB_ECONFIG, "case %zu", i);
        cr_assert(strstr(err.msg, cases[i].msg), "case %zu: %s", i, err.msg);
        cr_assert_null(p);
    }
}
