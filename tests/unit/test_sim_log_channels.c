/* The scenario key log_channels (rb_scenario_run): the log keeps the channels named or under a prefix, in log
 * order, with the very samples a full log has; the hook still sees every channel; entries that match nothing are
 * refused with a suggestion. The dataset scenarios of paper 001 are the paper's scenarios with only the duration,
 * log rate and channels changed. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/sim.h"

#define BALANCE RB_SOURCE "/configs/scenarios/datasets/humanoid_balance.json"

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    return text;
}

static cJSON *read_json(const char *path)
{
    char *text = read_text(path);
    cJSON *j = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(j, "%s", path);
    return j;
}

/* The balancing humanoid (two contacts, FT sensors, IMUs) for 0.3 s; log_channels the key's JSON (NULL: absent). */
static int load_balance(const char *log_channels, rb_scenario **s, rb_err *err)
{
    cJSON *j = read_json(BALANCE);
    cJSON_ReplaceItemInObject(j, "duration", cJSON_CreateNumber(0.3));
    if (log_channels) {
        cJSON *v = cJSON_Parse(log_channels);
        cr_assert_not_null(v, "%s", log_channels);
        cJSON_AddItemToObject(j, "log_channels", v);
    }
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    int rc = rb_scenario_load_text(text, strlen(text), "balance.json", BALANCE, s, err);
    free(text);
    return rc;
}

static rb_scenario *balance(const char *log_channels)
{
    rb_scenario *s = NULL;
    rb_err err;
    cr_assert_eq(load_balance(log_channels, &s, &err), RB_OK, "%s", err.msg);
    return s;
}

static rb_log *run(const rb_scenario *s, const rb_scenario_hook *hook)
{
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_scenario_run(s, NULL, hook, &log, &err), RB_OK, "%s", err.msg);
    cr_assert_not_null(log);
    return log;
}

static bool same_channel(const rb_channel *x, const rb_channel *y)
{
    if (strcmp(x->name, y->name) || x->n_samples != y->n_samples || x->n_elements != y->n_elements ||
        memcmp(x->time, y->time, x->n_samples * sizeof *x->time) ||
        memcmp(x->data, y->data, x->n_samples * x->n_elements * sizeof *x->data))
        return false;
    for (size_t e = 0; e < x->n_elements; e++)
        if (strcmp(x->element_names[e], y->element_names[e]) || strcmp(x->units[e], y->units[e]))
            return false;
    return true;
}

/* kept: the full log's channels whose names `keep` accepts, in the full log's order, bit for bit. */
static void assert_subset(const rb_log *full, const rb_log *kept, bool (*keep)(const char *))
{
    size_t k = 0;
    for (size_t c = 0; c < full->n_channels; c++) {
        if (!keep(full->channels[c].name))
            continue;
        cr_assert_lt(k, kept->n_channels, "%s missing", full->channels[c].name);
        cr_assert(same_channel(&full->channels[c], &kept->channels[k]), "%s differs from the full log's (%s)",
                  kept->channels[k].name, full->channels[c].name);
        k++;
    }
    cr_assert_eq(k, kept->n_channels, "the log has %zu channels, %zu expected", kept->n_channels, k);
    cr_assert_eq(kept->n_attrs, full->n_attrs);
}

static bool base_com_jpos(const char *name)
{
    return strncmp(name, "truth/base/", 11) == 0 || strcmp(name, "truth/com") == 0 ||
           strcmp(name, "joints_state/positions") == 0;
}

/* Entries in another order than the log's: the log's order stands. */
Test(sim_log_channels, keeps_the_named_channels_and_prefixes_in_log_order)
{
    rb_scenario *all = balance(NULL), *some = balance("[\"truth/com\", \"truth/base/\", \"joints_state/positions\"]");
    rb_log *full = run(all, NULL), *kept = run(some, NULL);
    cr_assert_gt(full->n_channels, 20);
    cr_assert_eq(kept->n_channels, 6); /* position, orientation, twist, acceleration, com, positions */
    assert_subset(full, kept, base_com_jpos);
    rb_log_free(full);
    rb_log_free(kept);
    rb_scenario_free(all);
    rb_scenario_free(some);
}

static bool contacts(const char *name) { return strncmp(name, "truth/contacts/", 15) == 0; }

/* A prefix ends with '/': truth/contacts/ keeps the two contact wrenches, not truth/contacts_active. */
Test(sim_log_channels, a_prefix_keeps_only_what_is_under_it)
{
    rb_scenario *all = balance(NULL), *some = balance("[\"truth/contacts/\"]");
    rb_log *full = run(all, NULL), *kept = run(some, NULL);
    cr_assert_eq(kept->n_channels, 2);
    assert_subset(full, kept, contacts);
    cr_assert_null(rb_log_find(kept, "truth/contacts_active"));
    rb_log_free(full);
    rb_log_free(kept);
    rb_scenario_free(all);
    rb_scenario_free(some);
}

/* ---- the hook sees every channel, measured as in a full run ---- */
typedef struct watcher {
    size_t n;
    char **names;
    size_t *fresh; /* per channel: samples seen fresh */
    double *last;  /* per channel: element 0 of the newest row */
} watcher;

static int watch_start(void *user, const rb_channel_info *ch, size_t n, rb_err *err)
{
    (void)err;
    watcher *w = user;
    w->n = n;
    w->names = calloc(n, sizeof *w->names);
    w->fresh = calloc(n, sizeof *w->fresh);
    w->last = calloc(n, sizeof *w->last);
    for (size_t c = 0; c < n; c++)
        w->names[c] = strdup(ch[c].name);
    return RB_OK;
}

static int watch_sample(void *user, rb_sim *sim, size_t k, double t, const double *const *latest, const bool *fresh,
                        rb_err *err)
{
    (void)sim, (void)k, (void)t, (void)err;
    watcher *w = user;
    for (size_t c = 0; c < w->n; c++) {
        if (fresh[c]) {
            cr_assert_not_null(latest[c], "%s", w->names[c]);
            w->fresh[c]++;
            w->last[c] = latest[c][0];
        }
    }
    return RB_OK;
}

static void watcher_free(watcher *w)
{
    for (size_t c = 0; c < w->n; c++)
        free(w->names[c]);
    free(w->names);
    free(w->fresh);
    free(w->last);
}

Test(sim_log_channels, the_hook_sees_every_channel)
{
    rb_scenario *all = balance(NULL), *some = balance("[\"truth/com\", \"truth/base/\", \"joints_state/positions\"]");
    rb_log *full = run(all, NULL);
    watcher w = {0};
    rb_scenario_hook hook = {watch_start, watch_sample, &w};
    rb_log *kept = run(some, &hook);
    assert_subset(full, kept, base_com_jpos); /* a hook changes nothing in the log */
    cr_assert_eq(w.n, full->n_channels, "the hook got %zu channels, the scenario logs %zu", w.n, full->n_channels);
    for (size_t c = 0; c < w.n; c++) {
        const rb_channel *fc = &full->channels[c];
        cr_assert_str_eq(w.names[c], fc->name);
        cr_assert_eq(w.fresh[c], fc->n_samples, "%s: %zu samples fresh in the hook, %zu in a full log", fc->name,
                     w.fresh[c], fc->n_samples);
        cr_assert_eq(w.last[c], fc->data[(fc->n_samples - 1) * fc->n_elements], "%s: newest row", fc->name);
    }
    watcher_free(&w);
    rb_log_free(full);
    rb_log_free(kept);
    rb_scenario_free(all);
    rb_scenario_free(some);
}

/* ---- refusals: one line, the entry and its place named ---- */
static void assert_refused(const char *log_channels, const char *needle1, const char *needle2)
{
    rb_scenario *s = NULL;
    rb_err err;
    cr_assert_eq(load_balance(log_channels, &s, &err), RB_ECONFIG, "%s accepted", log_channels);
    cr_assert_null(s);
    cr_assert_null(strchr(err.msg, '\n'), "one line: %s", err.msg);
    cr_assert_not_null(strstr(err.msg, needle1), "%s: no '%s' in: %s", log_channels, needle1, err.msg);
    cr_assert_not_null(strstr(err.msg, needle2), "%s: no '%s' in: %s", log_channels, needle2, err.msg);
}

Test(sim_log_channels, refuses_entries_that_match_nothing)
{
    assert_refused("[\"truth/com\", \"truth/bse/\"]", "log_channels[1]", "did you mean 'truth/base/'?");
    assert_refused("[\"truth/base/positon\"]", "log_channels[0]", "did you mean 'truth/base/position'?");
    /* no trailing '/': a channel name, and no channel is called truth/base */
    assert_refused("[\"truth/base\"]", "'truth/base'", "did you mean 'truth/base/'?");
    /* no payload in this scenario */
    assert_refused("[\"truth/payload/\"]", "log_channels[0]", "'truth/payload/'");
    assert_refused("[]", "log_channels", "must not be empty");
    assert_refused("[\"truth/com\", 3]", "log_channels[1]", "expected a string");
    assert_refused("\"truth/com\"", "log_channels", "expected an array of strings");
}

/* ---- the dataset scenarios of paper 001 ---- */
static const char *const INERTIAL[] = {"inertial_torso_square", "inertial_forearm", "inertial_low_excitation",
                                       "inertial_impacts", "inertial_dumbbell"};

static const char *const KEPT[] = {"joints_state/positions", "joints_state/velocities", "motors_state/currents",
                                   "truth/joints/torques",   "truth/base/position",     "truth/base/orientation",
                                   "truth/base/twist",       "truth/contacts/",         "truth/contacts_active",
                                   "truth/payload_mass",     "truth/payload/",          "truth/tasks/"};

/* Only duration, log_rate and log_channels differ (and the model path, relative to another folder). */
Test(sim_log_channels, the_inertial_dataset_scenarios_are_the_papers_with_fewer_channels)
{
    for (size_t i = 0; i < sizeof INERTIAL / sizeof INERTIAL[0]; i++) {
        char path[512], copy[512];
        snprintf(path, sizeof path, RB_SOURCE "/configs/scenarios/%s.json", INERTIAL[i]);
        snprintf(copy, sizeof copy, RB_SOURCE "/configs/scenarios/datasets/%s.json", INERTIAL[i]);
        cJSON *a = read_json(path), *b = read_json(copy);
        cJSON *dur_a = cJSON_GetObjectItem(a, "duration"), *dur_b = cJSON_GetObjectItem(b, "duration");
        cr_assert(cJSON_IsNumber(dur_b) && dur_b->valuedouble > 0 && dur_b->valuedouble <= dur_a->valuedouble,
                  "%s: duration", copy);
        const cJSON *lc = cJSON_GetObjectItem(b, "log_channels");
        cr_assert(cJSON_IsArray(lc), "%s: log_channels", copy);
        size_t n_lc = (size_t)cJSON_GetArraySize(lc);
        bool has_tasks = cJSON_GetObjectItem(cJSON_GetObjectItem(a, "balance"), "pelvis_height") != NULL;
        size_t k = 0;
        for (size_t e = 0; e < sizeof KEPT / sizeof KEPT[0]; e++) {
            if (!has_tasks && strcmp(KEPT[e], "truth/tasks/") == 0)
                continue;
            cr_assert_lt(k, n_lc, "%s: log_channels lacks %s", copy, KEPT[e]);
            cr_assert_str_eq(cJSON_GetArrayItem(lc, (int)k)->valuestring, KEPT[e], "%s: log_channels[%zu]", copy, k);
            k++;
        }
        cr_assert_eq(k, n_lc, "%s: log_channels has more entries", copy);
        const char *drop[] = {"duration", "log_rate", "log_channels"};
        for (size_t d = 0; d < 3; d++) {
            cJSON_DeleteItemFromObject(a, drop[d]);
            cJSON_DeleteItemFromObject(b, drop[d]);
        }
        cJSON *ua = cJSON_GetObjectItem(cJSON_GetObjectItem(a, "model"), "urdf");
        cJSON *ub = cJSON_GetObjectItem(cJSON_GetObjectItem(b, "model"), "urdf");
        cr_assert_str_eq(ua->valuestring, "../../datasets/humanoid_arms.urdf");
        cr_assert_str_eq(ub->valuestring, "../../../datasets/humanoid_arms.urdf", "%s", copy);
        cJSON_SetValuestring(ub, ua->valuestring);
        cr_assert(cJSON_Compare(a, b, true), "%s: more than duration, log_rate and log_channels differ from %s", copy,
                  path);
        cJSON_Delete(a);
        cJSON_Delete(b);
        rb_scenario *s = NULL;
        rb_err err;
        cr_assert_eq(rb_scenario_load(copy, &s, &err), RB_OK, "%s", err.msg);
        rb_scenario_free(s);
    }
}
