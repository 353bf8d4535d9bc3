/* End-to-end: roboest simulate with jets, weighing scales and the temperature (seed 004). Every shipped thrust_*
 * scenario runs (1 s) and logs its channels; bad jets keys are refused in one line with exit 3 and no output. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

/* The shipped scenario `name` for 1 s with the model read in place; `jets0` (JSON, NULL: none) replaces the
 * first jet's members it names. Written to dir. */
static char *write_scenario(const char *dir, const char *name, const char *jets0)
{
    char path[512];
    snprintf(path, sizeof path, RB_SOURCE "/configs/scenarios/%s.json", name);
    char *text = test_read_file(path, NULL);
    cJSON *sc = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(sc, "%s", path);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(sc, "model"), "urdf",
                              cJSON_CreateString(RB_SOURCE "/datasets/jet_humanoid.urdf"));
    cJSON_ReplaceItemInObject(sc, "duration", cJSON_CreateNumber(1.0));
    if (jets0) {
        cJSON *patch = cJSON_Parse(jets0), *jet = cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "jets"), 0);
        cr_assert_not_null(patch, "%s", jets0);
        for (cJSON *e = patch->child; e; e = e->next) {
            cJSON_DeleteItemFromObject(jet, e->string);
            cJSON_AddItemToObject(jet, e->string, cJSON_Duplicate(e, true));
        }
        cJSON_Delete(patch);
    }
    char *out = cJSON_Print(sc), *file = test_path(dir, "scenario.json");
    test_write_file(file, out);
    free(out);
    cJSON_Delete(sc);
    return file;
}

static void runs_one_second(const char *name, const char *const *channels)
{
    char *dir = test_tmpdir(), *scn = write_scenario(dir, name, NULL), *out = test_path(dir, "out.mat");
    const char *args[] = {"simulate", scn, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "%s: exit %d: %s", name, r.status, r.err);
    cli_result_free(&r);
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(out, &log, &err), RB_OK, "%s", err.msg);
    for (size_t i = 0; channels[i]; i++) {
        const rb_channel *c = rb_log_find(log, channels[i]);
        cr_assert_not_null(c, "%s: channel %s", name, channels[i]);
        cr_assert_gt(c->n_samples, 9, "%s: %s has samples", name, channels[i]);
    }
    const rb_channel *T = rb_log_find(log, "truth/jets/thrusts");
    cr_assert_eq(T->n_elements, 4);
    cr_assert_str_eq(T->element_names[3], "chest_r_jet_turbine");
    rb_log_free(log);
    free(scn);
    free(out);
    free(dir);
}

Test(cli_simulate_jets, thrust_scales_runs)
{
    static const char *const ch[] = {"jets/throttles",
                                     "jets/rotor_speed_error",
                                     "truth/jets/thrusts",
                                     "scales/l_sole",
                                     "scales/r_sole",
                                     "FTs/l_leg_ft_sensor",
                                     "FTs/l_foot_ft_sensor",
                                     "temperatures/l_foot_ft_sensor",
                                     NULL};
    runs_one_second("thrust_scales", ch);
}

Test(cli_simulate_jets, thrust_failure_runs)
{
    static const char *const ch[] = {"jets/rotor_speed_error", "truth/jets/thrusts", "scales/r_sole",
                                     "temperatures/r_foot_ft_sensor", NULL};
    runs_one_second("thrust_failure", ch);
}

Test(cli_simulate_jets, thrust_flight_runs)
{
    static const char *const ch[] = {"jets/throttles", "truth/jets/thrusts", "truth/base/twist", "FTs/r_leg_ft_sensor",
                                     NULL};
    runs_one_second("thrust_flight", ch);
}

/* One line on stderr naming the key, exit 3 (input), no output file. */
static void assert_refused(const char *jets0, const char *needle1, const char *needle2)
{
    char *dir = test_tmpdir(), *scn = write_scenario(dir, "thrust_failure", jets0), *out = test_path(dir, "out.mat");
    const char *args[] = {"simulate", scn, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 3, "%s: exit %d: %s", jets0, r.status, r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "%s: one line: %s", jets0, r.err);
    cr_assert_not_null(strstr(r.err, needle1), "'%s' in: %s", needle1, r.err);
    cr_assert_not_null(strstr(r.err, needle2), "'%s' in: %s", needle2, r.err);
    cr_assert_not(test_exists(out), "no output file");
    cli_result_free(&r);
    free(scn);
    free(out);
    free(dir);
}

Test(cli_simulate_jets, bad_jets_are_refused)
{
    assert_refused("{\"preset\": \"ironcub_p220_gazebos\"}", "jets[0].preset", "did you mean 'ironcub_p220_gazebo'");
    assert_refused("{\"frame\": \"l_arm_jet_nozzle\"}", "jets[0].frame", "l_arm_jet_nozzle");
    assert_refused("{\"axis\": [0, 0, 0]}", "jets[0].axis", "non-zero");
    assert_refused("{\"failure\": [{\"from\": 1, \"until\": 2, \"fraction\": -0.1}]}", "jets[0].failure[0].fraction",
                   "1");
    assert_refused("{\"failure\": [{\"from\": 1, \"until\": 3, \"fraction\": 0.5}, {\"from\": 2, \"until\": 4, "
                   "\"fraction\": 0.5}]}",
                   "jets[0].failure[1].from", "overlaps");
}
