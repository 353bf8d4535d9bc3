/* `roboest run` with the legged_odometry stage on a log simulated here (`roboest simulate` of a 0.4 s cut of
 * configs/scenarios/humanoid_balance.json with the right foot's contact off from 0.15 s to 0.3 s): the estimate
 * written and compared with the log's truth, the contact from flags and from wrenches; the refusals (one line,
 * exit 3, no output). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

#define SCENARIO RB_SOURCE "/configs/scenarios/humanoid_balance.json"
#define URDF RB_SOURCE "/datasets/humanoid_lower_body.urdf"

/* The scenario's text with a shorter run, the model by absolute path, the lift events, only the channels used. */
static char *simulate(const char *dir)
{
    size_t len = 0;
    char *text = test_read_file(SCENARIO, &len);
    cr_assert_not_null(text);
    char *out = calloc(len + 4096, 1);
    cr_assert_not_null(out);
    const char *dur = strstr(text, "\"duration\": 10.0"), *urdf = strstr(text, "\"../../datasets/");
    cr_assert(dur && urdf && urdf < dur);
    const char *urdf_end = strchr(urdf + 1, '"') + 1;
    int n =
        snprintf(out, len + 4096,
                 "%.*s\"%s\"%.*s\"duration\": 0.4,\n  \"events\": [{\"t\": 0.15, \"contact\": "
                 "\"r_sole\", \"active\": false}, {\"t\": 0.3, \"contact\": \"r_sole\", \"active\": true}],\n"
                 "  \"log_channels\": [\"joints_state/\", \"truth/\"]%s",
                 (int)(urdf - text), text, URDF, (int)(dur - urdf_end), urdf_end, dur + strlen("\"duration\": 10.0"));
    cr_assert(n > 0);
    char *scn = test_path(dir, "scn.json"), *log = test_path(dir, "log.h5");
    test_write_file(scn, out);
    const char *args[] = {"simulate", scn, "-o", log, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "simulate: %s", r.err);
    cli_result_free(&r);
    free(text), free(out), free(scn);
    return log;
}

/* A pipeline: q, dq, the contact input(s) named by `contact_in` (a JSON fragment of the stage's "in"), params. */
static char *write_config(const char *dir, const char *model, const char *contact_in, const char *params)
{
    char *path = test_path(dir, "p.json"), text[4096];
    snprintf(text, sizeof text,
             "{\"model\": %s, \"clock\": {\"channel\": \"joints_state/positions\"},\n"
             " \"signals\": {\"q\": {\"channel\": \"joints_state/positions\"}, \"dq\": {\"channel\": "
             "\"joints_state/velocities\"},\n  \"flags\": {\"channel\": \"truth/contacts_active\", \"interp\": "
             "\"hold\"},\n  \"wr\": {\"channel\": [\"truth/contacts/l_sole\", \"truth/contacts/r_sole\"]}},\n"
             " \"stages\": [{\"id\": \"lo\", \"type\": \"legged_odometry\", \"in\": {\"q\": \"q\", \"dq\": \"dq\"%s},\n"
             "   \"out\": {\"base_position\": \"pos\", \"base_twist\": \"twist\", \"stance\": \"stance\"}, \"params\": "
             "{%s}}],\n"
             " \"outputs\": [{\"path\": \"est.h5\", \"signals\": [\"pos\", \"twist\", \"stance\"]}]}\n",
             model, contact_in, params);
    test_write_file(path, text);
    return path;
}

#define FLOATING "{\"urdf\": \"" URDF "\", \"floating\": true}"
#define FEET "\"feet\": [\"l_sole\", \"r_sole\"], \"base_pose0\": [-0.0298, 0, 0.83585, 0, 0, 0]"

typedef struct outcome {
    cli_result r;
    char *dir, *out_dir;
} outcome;

/* The simulated log, made once per test process (each test case is one) and shared by its runs. */
static char *g_log_dir, *g_log;

static void free_log(void) { free(g_log_dir), free(g_log); }

static void make_log(void)
{
    if (!g_log) {
        g_log_dir = test_tmpdir();
        g_log = simulate(g_log_dir);
        atexit(free_log);
    }
}

static outcome run_case(const char *model, const char *contact_in, const char *params)
{
    make_log();
    outcome oc;
    oc.dir = test_tmpdir();
    char *cfg = write_config(oc.dir, model, contact_in, params);
    oc.out_dir = test_path(oc.dir, "out");
    const char *args[] = {"run", cfg, g_log, "-o", oc.out_dir, NULL};
    oc.r = cli_run(NULL, args);
    free(cfg);
    return oc;
}

static void done(outcome *oc)
{
    cli_result_free(&oc->r);
    free(oc->dir), free(oc->out_dir);
}

static double max_err(const rb_channel *a, const rb_channel *b, size_t skip)
{
    cr_assert_eq(a->n_elements, b->n_elements);
    cr_assert_eq(a->n_samples, b->n_samples);
    double m = 0;
    for (size_t k = skip; k < a->n_samples; k++)
        for (size_t j = 0; j < a->n_elements; j++)
            m = fmax(m, fabs(a->data[k * a->n_elements + j] - b->data[k * b->n_elements + j]));
    return m;
}

static void check_estimate(const outcome *oc, const char *what)
{
    cr_assert_eq(oc->r.status, 0, "%s: exit %d: %s", what, oc->r.status, oc->r.err);
    char *est = test_path(oc->out_dir, "est.h5");
    rb_log *e = NULL, *t = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(est, &e, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_log_read(g_log, &t, &err), RB_OK, "%s", err.msg);
    const rb_channel *pos = rb_log_find(e, "pos"), *tw = rb_log_find(e, "twist"), *st = rb_log_find(e, "stance");
    const rb_channel *tpos = rb_log_find(t, "truth/base/position"), *ttw = rb_log_find(t, "truth/base/twist");
    cr_assert(pos && tw && st && tpos && ttw);
    size_t off = 0;
    for (size_t k = 0; k < st->n_samples; k++)
        off += st->data[2 * k + 1] == 0;
    /* the wrench build-up delays a touchdown by a few samples: skip none, the bound holds through it */
    double ep = max_err(pos, tpos, 0), et = max_err(tw, ttw, 0);
    cr_log_info("%s: %zu samples, right foot off on %zu; position err %.3g m, twist err %.3g", what, pos->n_samples,
                off, ep, et);
    cr_expect(off >= 145 && off <= 160, "%s: right foot off on %zu samples", what, off);
    cr_expect(ep < 5e-4, "%s: position error %g m", what, ep);
    cr_expect(et < 0.05, "%s: twist error %g", what, et);
    rb_log_free(e), rb_log_free(t);
    free(est);
}

Test(cli_odometry, flags_and_wrenches_follow_the_truth)
{
    test_deadline(120);
    outcome a = run_case(FLOATING, ", \"contacts\": \"flags\"", FEET);
    check_estimate(&a, "flags");
    done(&a);
    outcome b = run_case(FLOATING, ", \"wrenches\": \"wr\"", FEET ", \"contact_source\": \"wrenches\"");
    check_estimate(&b, "wrenches");
    done(&b);
}

static void expect_refusal(const char *model, const char *contact_in, const char *params, const char *const *words)
{
    outcome oc = run_case(model, contact_in, params);
    cr_log_info("exit %d: %s", oc.r.status, oc.r.err);
    cr_expect_eq(oc.r.status, CLI_EXIT_INPUT, "exit %d: %s", oc.r.status, oc.r.err);
    cr_expect_eq(test_count_lines(oc.r.err), 1, "not one line: %s", oc.r.err);
    for (size_t i = 0; words[i]; i++)
        cr_expect(strstr(oc.r.err, words[i]) != NULL, "no '%s' in: %s", words[i], oc.r.err);
    cr_expect(!test_exists(oc.out_dir) || test_count_entries(oc.out_dir) == 0, "outputs left in %s", oc.out_dir);
    done(&oc);
}

Test(cli_odometry, bad_configs_one_line_exit_3_no_output)
{
    test_deadline(120);
    expect_refusal(FLOATING, ", \"contacts\": \"flags\"", "\"feet\": [\"l_sole\", \"r_soel\"]",
                   (const char *const[]){"feet[1]", "r_soel", "r_sole", NULL});
    expect_refusal(FLOATING, ", \"contacts\": \"flags\"", "\"feet\": []", (const char *const[]){"feet", NULL});
    expect_refusal(FLOATING, ", \"contacts\": \"flags\", \"wrenches\": \"wr\"", FEET,
                   (const char *const[]){"both", "contacts", "wrenches", NULL});
    expect_refusal(FLOATING, "", FEET, (const char *const[]){"no contact input", NULL});
    expect_refusal(FLOATING, ", \"wrenches\": \"wr\"", FEET, (const char *const[]){"contact_source", NULL});
    expect_refusal(FLOATING, ", \"contacts\": \"flags\"", "\"feet\": [\"l_sole\"]",
                   (const char *const[]){"contacts", NULL});
    expect_refusal("{\"urdf\": \"" URDF "\"}", ", \"contacts\": \"flags\"", "\"feet\": [\"l_sole\", \"r_sole\"]",
                   (const char *const[]){"floating", NULL});
    expect_refusal(FLOATING, ", \"wrenches\": \"wr\"",
                   FEET ", \"contact_source\": \"wrenches\", \"force_on\": 10, \"force_off\": 20",
                   (const char *const[]){"force_off", NULL});
}
