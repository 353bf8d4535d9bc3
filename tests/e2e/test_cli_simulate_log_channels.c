/* End-to-end: roboest simulate with the scenario key log_channels. The log keeps the channels listed (names, or
 * prefixes ending in '/'), in log order, with the samples a full log has; bad entries (no match, an empty list,
 * not strings) are refused in one line with exit 3 and no output file. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

/* The shipped dataset scenario inertial_forearm (log_channels set) for 0.2 s with the model read in place, and
 * log_channels replaced by the JSON `log_channels` (NULL: kept as shipped, "-": removed), written to dir. */
static char *write_scenario(const char *dir, const char *name, const char *log_channels)
{
    char *text = test_read_file(RB_SOURCE "/configs/scenarios/datasets/inertial_forearm.json", NULL);
    cJSON *sc = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(sc);
    cr_assert_not_null(cJSON_GetObjectItem(sc, "log_channels"));
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(sc, "model"), "urdf",
                              cJSON_CreateString(RB_SOURCE "/datasets/humanoid_arms.urdf"));
    cJSON_ReplaceItemInObject(sc, "duration", cJSON_CreateNumber(0.2));
    if (log_channels && strcmp(log_channels, "-") == 0) {
        cJSON_DeleteItemFromObject(sc, "log_channels");
    } else if (log_channels) {
        cJSON *v = cJSON_Parse(log_channels);
        cr_assert_not_null(v, "%s", log_channels);
        cJSON_ReplaceItemInObject(sc, "log_channels", v);
    }
    char *out = cJSON_Print(sc), *path = test_path(dir, name);
    test_write_file(path, out);
    free(out);
    cJSON_Delete(sc);
    return path;
}

static rb_log *simulate(const char *scenario, const char *out)
{
    const char *args[] = {"simulate", scenario, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(out, &log, &err), RB_OK, "%s", err.msg);
    return log;
}

/* Whether the shipped scenario's log_channels keep `name`: an entry equal to it, or a prefix ending in '/' (the
 * rule of the key, written again here from its documentation). */
static bool shipped(const char *name)
{
    char *text = test_read_file(RB_SOURCE "/configs/scenarios/datasets/inertial_forearm.json", NULL);
    cJSON *sc = cJSON_Parse(text);
    free(text);
    bool kept = false;
    for (const cJSON *e = cJSON_GetObjectItem(sc, "log_channels")->child; e && !kept; e = e->next) {
        size_t n = strlen(e->valuestring);
        kept = n && e->valuestring[n - 1] == '/' ? strncmp(name, e->valuestring, n) == 0
                                                 : strcmp(name, e->valuestring) == 0;
    }
    cJSON_Delete(sc);
    return kept;
}

Test(cli_simulate_log_channels, keeps_the_listed_channels_as_a_full_log_has_them)
{
    char *dir = test_tmpdir(), *full_scn = write_scenario(dir, "full.json", "-"),
         *kept_scn = write_scenario(dir, "kept.json", NULL), *full_out = test_path(dir, "full.mat"),
         *kept_out = test_path(dir, "kept.mat");
    rb_log *full = simulate(full_scn, full_out), *kept = simulate(kept_scn, kept_out);
    size_t k = 0;
    for (size_t c = 0; c < full->n_channels; c++) {
        const rb_channel *x = &full->channels[c];
        if (!shipped(x->name))
            continue;
        cr_assert_lt(k, kept->n_channels, "%s missing", x->name);
        const rb_channel *y = &kept->channels[k++];
        cr_assert_str_eq(y->name, x->name, "log order");
        cr_assert_eq(y->n_samples, x->n_samples, "%s", x->name);
        cr_assert_eq(y->n_elements, x->n_elements, "%s", x->name);
        cr_assert_eq(memcmp(y->time, x->time, x->n_samples * sizeof *x->time), 0, "%s: times", x->name);
        cr_assert_eq(memcmp(y->data, x->data, x->n_samples * x->n_elements * sizeof *x->data), 0, "%s: values",
                     x->name);
        for (size_t e = 0; e < x->n_elements; e++)
            cr_assert_str_eq(y->element_names[e], x->element_names[e], "%s", x->name);
    }
    cr_assert_eq(kept->n_channels, k, "the log has %zu channels, %zu listed", kept->n_channels, k);
    cr_assert_not_null(rb_log_find(kept, "truth/payload/l_forearm"), "the prefix truth/payload/");
    cr_assert_null(rb_log_find(kept, "FTs/l_wrist_ft_sensor"));
    cr_assert_lt(test_file_size(kept_out), test_file_size(full_out) / 2);
    rb_log_free(full);
    rb_log_free(kept);
    free(full_scn);
    free(kept_scn);
    free(full_out);
    free(kept_out);
    free(dir);
}

/* One line on stderr naming the entry, exit 3 (input), no output file. */
static void assert_refused(const char *log_channels, const char *needle1, const char *needle2)
{
    char *dir = test_tmpdir(), *scn = write_scenario(dir, "bad.json", log_channels), *out = test_path(dir, "out.mat");
    const char *args[] = {"simulate", scn, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 3, "%s: exit %d: %s", log_channels, r.status, r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "%s: one line: %s", log_channels, r.err);
    cr_assert_not_null(strstr(r.err, needle1), "%s: no '%s' in: %s", log_channels, needle1, r.err);
    cr_assert_not_null(strstr(r.err, needle2), "%s: no '%s' in: %s", log_channels, needle2, r.err);
    cr_assert_not(test_exists(out), "%s: an output file", log_channels);
    cli_result_free(&r);
    free(scn);
    free(out);
    free(dir);
}

Test(cli_simulate_log_channels, refuses_an_entry_that_matches_nothing_with_a_suggestion)
{
    assert_refused("[\"joints_state/positions\", \"truth/joints/torque\"]", "log_channels[1]",
                   "'truth/joints/torque' matches no channel the scenario logs (did you mean 'truth/joints/torques'?)");
    assert_refused("[\"truth/payloads/\"]", "log_channels[0]", "(did you mean 'truth/payload/'?)");
    assert_refused("[\"FTs/l_wrist_ft_sensr\"]", "log_channels[0]", "(did you mean 'FTs/l_wrist_ft_sensor'?)");
    /* this scenario has no pelvis-height task */
    assert_refused("[\"truth/tasks/\"]", "log_channels[0]", "'truth/tasks/' matches no channel");
}

Test(cli_simulate_log_channels, refuses_an_empty_list_and_entries_that_are_not_strings)
{
    assert_refused("[]", "log_channels", "must not be empty");
    assert_refused("[\"truth/com\", 3]", "log_channels[1]", "expected a string");
    assert_refused("[\"truth/com\", \"\"]", "log_channels[1]", "");
    assert_refused("[[\"truth/com\"]]", "log_channels[0]", "expected a string");
    assert_refused("\"truth/com\"", "log_channels", "expected an array of strings");
    assert_refused("{\"truth/com\": true}", "log_channels", "expected an array of strings");
}
