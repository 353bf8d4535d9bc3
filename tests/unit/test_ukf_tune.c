/* rb_ukft_tune (roboest/training.h) on the shipped still log of the leg on a pole: the current noise is the
 * simulator's preset (0.02 A), the groups it reports, the kept parameters, the written pipeline's paths and the
 * stage selection errors. */
#define _GNU_SOURCE
#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/pipeline.h"
#include "roboest/training.h"
#include "support.h"

#define LOG RB_SOURCE "/datasets/leg_pole_ground.mat"
#define PIPE RB_SOURCE "/configs/paper/leg_ukf_pinn.json"

static rb_registry *registry(void)
{
    rb_registry *reg = NULL;
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK);
    return reg;
}

static const rb_ukft_tune_param *group(const rb_ukft_tune_result *r, const char *name)
{
    for (size_t i = 0; i < r->n_params; i++)
        if (strcmp(r->params[i].name, name) == 0)
            return &r->params[i];
    return NULL;
}

Test(ukf_tune, variances_from_the_still_log)
{
    test_deadline(120);
    rb_registry *reg = registry();
    rb_ukft_tune_opts o;
    rb_ukft_tune_opts_init(&o);
    rb_ukft_tune_result *r = NULL;
    rb_err err;
    const char *logs[] = {LOG};
    cr_assert_eq(rb_ukft_tune(PIPE, reg, logs, 1, &o, &r, &err), RB_OK, "%s", err.msg);
    cr_assert_str_eq(r->stage_id, "ukf");
    cr_assert_eq(r->n_joints, 6);
    cr_assert_gt(r->n_still_windows, 10); /* the foot presses on the ground: the whole log is still */
    const rb_ukft_tune_param *rc = group(r, "r_current"), *qm = group(r, "q_tau_m"), *qf = group(r, "q_tau_f");
    cr_assert(rc && qm && qf && group(r, "r_ft") && group(r, "q_ft") && group(r, "r_friction"));
    for (size_t j = 0; j < 6; j++) {
        cr_assert(fabs(rc->values[j] / 4e-4 - 1) < 0.1, "r_current[%zu] = %g", j, rc->values[j]);
        cr_assert_eq(qf->values[j], qm->values[j]);
        cr_assert(qm->values[j] > 0);
    }
    cr_assert_eq(group(r, "r_ft")->count, 18);
    cr_assert(strstr(rc->why, "still windows"));
    bool kept_rdq = false;
    for (size_t i = 0; i < r->n_kept; i++)
        kept_rdq |= strcmp(r->kept[i], "r_dq") == 0;
    cr_assert(kept_rdq);
    /* written elsewhere, the network and the URDF still resolve */
    char *dir = test_temp_dir(), *out = NULL;
    cr_assert(asprintf(&out, "%s/tuned.json", dir) > 0);
    cr_assert_eq(rb_ukft_tune_write(r, out, false, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_ukft_tune_write(r, out, false, &err), RB_EEXISTS);
    rb_pipeline *p = NULL;
    cr_assert_eq(rb_pipeline_load(out, reg, &p, &err), RB_OK, "%s", err.msg);
    const rb_config_stage *st = NULL;
    for (size_t i = 0; i < p->n_stages; i++)
        if (strcmp(p->stages[i].id, "ukf") == 0)
            st = &p->stages[i];
    cr_assert_not_null(st);
    const rb_param_value *v = rb_params_get(&(rb_params){st->type, st->params}, "r_current");
    cr_assert_eq(v->count, 6);
    cr_assert_eq(v->numbers[2], rc->values[2]);
    rb_pipeline_free(p);
    free(out);
    test_remove_tree(dir);
    rb_ukft_tune_result_free(r);
    rb_registry_free(reg);
}

Test(ukf_tune, stage_selection_errors)
{
    rb_registry *reg = registry();
    rb_ukft_tune_opts o;
    rb_ukft_tune_opts_init(&o);
    o.stage = "kfd";
    rb_ukft_tune_result *r = NULL;
    rb_err err;
    const char *logs[] = {LOG};
    cr_assert_eq(rb_ukft_tune(PIPE, reg, logs, 1, &o, &r, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "no ukf_torque stage with id 'kfd'") && strstr(err.msg, "leg_ukf_pinn.json"), "%s",
              err.msg);
    cr_assert_null(r);
    o.stage = NULL;
    cr_assert_eq(rb_ukft_tune(RB_SOURCE "/configs/paper/leg_rnea.json", reg, logs, 1, &o, &r, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "no ukf_torque stage"), "%s", err.msg);
    rb_registry_free(reg);
}
