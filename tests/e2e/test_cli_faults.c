/* End-to-end: the sensor-fault monitor through `roboest run` and `roboest check`. A log made by `roboest simulate`
 * (arm_pole) gets one injected fault (a stuck motor current, a saturated motor current, a 100x joint-encoder spike);
 * the shipped configs/torque_arm_pole.json (kf_derivative -> rnea_torque and ukf_torque) runs on it, and the report
 * names the channel, element, kind, count and first sample, while the clean log and the shipped demo report none;
 * `roboest check` gates on the faults (exit 6 on the faulty log, 0 on the clean one). */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

#define ARM_POLE RB_SOURCE "/configs/scenarios/arm_pole.json"
#define TORQUE RB_SOURCE "/configs/torque_arm_pole.json"

/* arm_pole.json with the model's absolute path, simulated into dir/arm.h5 (2 s at 1 kHz); returns that path. */
static char *simulate_arm(const char *dir)
{
    char *text = test_read_file(ARM_POLE, NULL);
    cr_assert_not_null(text);
    const char *key = "\"../../datasets/arm_2ft.urdf\"";
    char repl[512];
    snprintf(repl, sizeof repl, "\"%s/datasets/arm_2ft.urdf\"", RB_SOURCE);
    char *at = strstr(text, key);
    cr_assert_not_null(at, "arm_pole.json lacks %s", key);
    size_t head = (size_t)(at - text);
    char *next = malloc(strlen(text) + strlen(repl) + 1);
    memcpy(next, text, head);
    strcpy(next + head, repl);
    strcat(next, at + strlen(key));
    char *scn = test_path(dir, "arm.json"), *log = test_path(dir, "arm.h5");
    test_write_file(scn, next);
    free(text), free(next);
    const char *args[] = {"simulate", scn, "-o", log, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "simulate: exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    free(scn);
    return log;
}

typedef enum fault { STUCK, SATURATED, SPIKE } fault;

enum { FAULT_AT = 600, STUCK_LEN = 700, CLIPPED = 400 };

static int descending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* The log at `in` with one fault injected, written to dir/name. */
static char *inject(const char *dir, const char *in, const char *name, fault f)
{
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(in, &log, &err), RB_OK, "%s", err.msg);
    const char *channel = f == SPIKE ? "joints_state/positions" : "motors_state/currents";
    rb_channel *ch = (rb_channel *)rb_log_find(log, channel);
    cr_assert_not_null(ch, "%s", channel);
    size_t w = ch->n_elements, e = f == SATURATED ? 1 : 2; /* shoulder_pitch / elbow */
    cr_assert(ch->n_samples > FAULT_AT + STUCK_LEN);
    if (f == STUCK) { /* off the sensor's 1 mA grid: no clean sample equals it */
        double held = ch->data[FAULT_AT * w + e] + 1e-7;
        for (size_t k = FAULT_AT; k < FAULT_AT + STUCK_LEN; k++)
            ch->data[k * w + e] = held;
    } else if (f == SPIKE) {
        ch->data[FAULT_AT * w + e] *= 100;
    } else { /* clipped on the side of its largest magnitude, at the level CLIPPED samples reach */
        double top = 0;
        for (size_t k = 0; k < ch->n_samples; k++)
            top = fabs(ch->data[k * w + e]) > fabs(top) ? ch->data[k * w + e] : top;
        double sign = top >= 0 ? 1 : -1, *v = malloc(ch->n_samples * sizeof *v);
        for (size_t k = 0; k < ch->n_samples; k++)
            v[k] = sign * ch->data[k * w + e];
        qsort(v, ch->n_samples, sizeof *v, descending);
        double lim = v[CLIPPED];
        free(v);
        size_t clipped = 0, run = 0, longest = 0;
        for (size_t k = 0; k < ch->n_samples; k++) {
            bool over = sign * ch->data[k * w + e] >= lim;
            if (over)
                ch->data[k * w + e] = sign * lim;
            clipped += over, run = over ? run + 1 : 0, longest = run > longest ? run : longest;
        }
        cr_log_info("clipped %zu samples at %g A, longest run %zu (top %g)", clipped, sign * lim, longest, top);
    }
    char *out = test_path(dir, name);
    rb_write_opts wo = {RB_OUT_H5, true, NULL};
    cr_assert_eq(rb_log_write(log, out, &wo, &err), RB_OK, "%s", err.msg);
    rb_log_free(log);
    return out;
}

/* text with the first `key` replaced by `repl` (text freed). */
static char *replace(char *text, const char *key, const char *repl)
{
    char *at = strstr(text, key);
    cr_assert_not_null(at, "no %s", key);
    size_t head = (size_t)(at - text);
    char *next = malloc(strlen(text) + strlen(repl) + 1);
    memcpy(next, text, head);
    strcpy(next + head, repl);
    strcat(next, at + strlen(key));
    free(text);
    return next;
}

/* The shipped torque pipeline with the model's absolute path and the upper-arm FT sensor's moment noise as
 * arm_pole simulates it (0.5 N m; the shipped r_ft says 0.02 N m for both sensors, and the monitor rightly
 * flags the upper arm's moments as outliers then). */
static char *torque_config(const char *dir)
{
    char *text = test_read_file(TORQUE, NULL), urdf[512];
    cr_assert_not_null(text);
    snprintf(urdf, sizeof urdf, "\"%s/datasets/arm_2ft.urdf\"", RB_SOURCE);
    text = replace(text, "\"../datasets/arm_2ft.urdf\"", urdf);
    text = replace(text, "\"r_ft\": [0.25, 0.25, 0.25, 4e-4, 4e-4, 4e-4]",
                   "\"r_ft\": [0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 4e-4, 4e-4, 4e-4]");
    char *path = test_path(dir, "torque.json");
    test_write_file(path, text);
    free(text);
    return path;
}

/* `roboest run` of the torque pipeline on log into dir/sub; returns the parsed report.json. */
static cJSON *run_torque(const char *dir, const char *log, const char *sub, char **report_path)
{
    char *out = test_path(dir, sub), *cfg = torque_config(dir);
    const char *args[] = {"run", cfg, log, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "run: exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    *report_path = test_path(out, "report.json");
    char *text = test_read_file(*report_path, NULL);
    cr_assert_not_null(text, "%s", *report_path);
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root);
    free(text), free(out), free(cfg);
    return root;
}

static const cJSON *faults_of(const cJSON *report)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(report, "faults");
    cr_assert(cJSON_IsObject(f), "the report has no faults section");
    return f;
}

static double number(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    cr_assert(cJSON_IsNumber(v), "no number %s", key);
    return v->valuedouble;
}

/* The element's entry (channel, element); fails when absent. */
static const cJSON *element(const cJSON *faults, const char *channel, const char *name)
{
    const cJSON *els = cJSON_GetObjectItemCaseSensitive(faults, "elements");
    for (const cJSON *e = els ? els->child : NULL; e; e = e->next) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "channel"),
                    *n = cJSON_GetObjectItemCaseSensitive(e, "element");
        if (cJSON_IsString(c) && cJSON_IsString(n) && strcmp(c->valuestring, channel) == 0 &&
            strcmp(n->valuestring, name) == 0)
            return e;
    }
    cr_assert_fail("no element %s %s in the faults section", channel, name);
    return NULL;
}

static void log_faults(const char *what, const cJSON *faults)
{
    cr_log_info("%s: faults total %g (stuck %g, saturated %g, outlier %g)", what, number(faults, "total"),
                number(faults, "stuck"), number(faults, "saturated"), number(faults, "outlier"));
    const cJSON *els = cJSON_GetObjectItemCaseSensitive(faults, "elements");
    for (const cJSON *e = els ? els->child : NULL; e; e = e->next)
        for (const char *const *k = (const char *const[]){"stuck", "saturated", "outlier", NULL}; *k; k++) {
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, *k);
            if (number(t, "count") > 0)
                cr_log_info("  %s %s/%s %s: %g from sample %g", cJSON_GetObjectItem(e, "signal")->valuestring,
                            cJSON_GetObjectItem(e, "channel")->valuestring,
                            cJSON_GetObjectItem(e, "element")->valuestring, *k, number(t, "count"),
                            number(t, "first_sample"));
        }
}

static int check(const char *report, const char *rule)
{
    const char *args[] = {"check", report, "--rule", rule, NULL};
    cli_result r = cli_run(NULL, args);
    int status = r.status;
    cli_result_free(&r);
    return status;
}

Test(cli_faults, demo_has_no_fault)
{
    char *dir = test_tmpdir(), *out = test_path(dir, "demo"), *rep = test_path(out, "report.json");
    const char *args[] = {"run", RB_SOURCE "/configs/demo.json", "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "run: exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    char *text = test_read_file(rep, NULL);
    cJSON *root = cJSON_Parse(text);
    const cJSON *f = faults_of(root);
    log_faults("demo", f);
    cr_assert_eq(number(f, "total"), 0);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(f, "elements")), 7, "q (3), qd_true (3), elbow_motor (1)");
    cr_assert_eq(check(rep, "faults.total == 0"), 0);
    cJSON_Delete(root);
    free(text), free(rep), free(out);
    test_remove_tree(dir);
}

Test(cli_faults, clean_log_has_no_fault_and_passes_the_gate)
{
    char *dir = test_tmpdir(), *log = simulate_arm(dir), *rep;
    cJSON *root = run_torque(dir, log, "clean", &rep);
    const cJSON *f = faults_of(root);
    log_faults("clean arm_pole", f);
    cr_assert_eq(number(f, "total"), 0);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(f, "elements")) > 0, 1, "the monitored elements are listed");
    cr_assert_eq(check(rep, "faults.total == 0"), 0);
    cr_assert_eq(check(rep, "faults.stuck[motors_state/currents] <= 0"), 0);
    cJSON_Delete(root);
    free(rep), free(log);
    test_remove_tree(dir);
}

Test(cli_faults, stuck_current_is_named_and_fails_the_gate)
{
    char *dir = test_tmpdir(), *clean = simulate_arm(dir), *log = inject(dir, clean, "stuck.h5", STUCK), *rep;
    cJSON *root = run_torque(dir, log, "stuck", &rep);
    const cJSON *f = faults_of(root);
    log_faults("stuck elbow current", f);
    const cJSON *s = cJSON_GetObjectItem(element(f, "motors_state/currents", "elbow"), "stuck");
    cr_assert_eq(number(s, "count"), STUCK_LEN);
    cr_assert_eq(number(s, "first_sample"), FAULT_AT);
    cr_assert_eq(number(f, "stuck"), STUCK_LEN, "no other element is stuck");
    cr_assert_eq(check(rep, "faults.total == 0"), 6);
    cr_assert_eq(check(rep, "faults.stuck[motors_state/currents/elbow] == 0"), 6);
    cr_assert_eq(check(rep, "faults.stuck[motors_state/currents/shoulder_yaw] == 0"), 0);
    cJSON_Delete(root);
    free(rep), free(log), free(clean);
    test_remove_tree(dir);
}

Test(cli_faults, saturated_current_is_named_and_fails_the_gate)
{
    char *dir = test_tmpdir(), *clean = simulate_arm(dir), *log = inject(dir, clean, "sat.h5", SATURATED), *rep;
    cJSON *root = run_torque(dir, log, "sat", &rep);
    const cJSON *f = faults_of(root);
    log_faults("saturated shoulder_pitch current", f);
    const cJSON *s = cJSON_GetObjectItem(element(f, "motors_state/currents", "shoulder_pitch"), "saturated");
    cr_assert(number(s, "count") >= 100 && number(s, "count") <= CLIPPED + 1, "%g", number(s, "count"));
    cr_assert_eq(number(f, "saturated"), number(s, "count"), "no other element is saturated");
    cr_assert_eq(number(f, "stuck"), 0, "a saturated run is not also stuck");
    cr_assert_eq(check(rep, "faults.saturated == 0"), 6);
    cJSON_Delete(root);
    free(rep), free(log), free(clean);
    test_remove_tree(dir);
}

Test(cli_faults, encoder_spike_is_an_innovation_outlier)
{
    char *dir = test_tmpdir(), *clean = simulate_arm(dir), *log = inject(dir, clean, "spike.h5", SPIKE), *rep;
    cJSON *root = run_torque(dir, log, "spike", &rep);
    const cJSON *f = faults_of(root);
    log_faults("100x elbow encoder spike", f);
    const cJSON *o = cJSON_GetObjectItem(element(f, "", "elbow"), "outlier"); /* dq: kf_derivative's, from q */
    cr_assert_gt(number(o, "count"), 0);
    cr_assert_eq(number(o, "first_sample"), FAULT_AT, "the clock sample of the spike");
    cr_assert_eq(number(f, "stuck") + number(f, "saturated"), 0, "one sample is neither stuck nor saturated");
    cr_assert_eq(check(rep, "faults.outlier == 0"), 6);
    cJSON_Delete(root);
    free(rep), free(log), free(clean);
    test_remove_tree(dir);
}
