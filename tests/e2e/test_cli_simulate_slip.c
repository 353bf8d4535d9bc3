/* End-to-end: roboest simulate on configs/scenarios/humanoid_balance.json (sensors, joint friction, the CoM sway) with
 * a low-friction floor and a hard sideways push: the friction channels (names, units), the feet slipping during the
 * push at mu_d and sticking again, the logged ratio against the logged contact wrenches, the same bytes twice, no
 * friction channels without a floor, and the floor's errors (one line naming the key, exit code 3, no output). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

#define HUMANOID_BALANCE RB_SOURCE "/configs/scenarios/humanoid_balance.json"

/* text with `from` (which must occur) replaced by `to` (text freed, a new string returned). */
static char *replace(char *text, const char *from, const char *to)
{
    char *at = strstr(text, from);
    cr_assert_not_null(at, "humanoid_balance.json lacks %s", from);
    size_t head = (size_t)(at - text);
    char *next = malloc(strlen(text) + strlen(to) + 1);
    memcpy(next, text, head);
    strcpy(next + head, to);
    strcat(next, at + strlen(from));
    free(text);
    return next;
}

/* humanoid_balance.json shortened to 2.5 s, the model by its absolute path, and `extra` keys after the balance. */
static char *scenario(const char *dir, const char *name, const char *extra)
{
    static const char *const BALANCE = "\"balance\": {\"amplitude\": 0.025, \"freq\": 0.25, \"ik_T\": 0.02},";
    char *text = test_read_file(HUMANOID_BALANCE, NULL), urdf[512], balance[1024];
    cr_assert_not_null(text);
    snprintf(urdf, sizeof urdf, "\"%s/datasets/humanoid_lower_body.urdf\"", RB_SOURCE);
    snprintf(balance, sizeof balance, "%s %s", BALANCE, extra);
    text = replace(text, "\"duration\": 10.0", "\"duration\": 2.5");
    text = replace(text, "\"../../datasets/humanoid_lower_body.urdf\"", urdf);
    text = replace(text, BALANCE, balance);
    char *path = test_path(dir, name);
    test_write_file(path, text);
    free(text);
    return path;
}

/* 150 N sideways on the pelvis for 0.3 s from 0.5 s, its line of action over the feet (mz: the pelvis sits 0.0398 m
 * behind the soles), on a floor of mu_s 0.1, mu_d 0.08 */
#define SLIPPERY                                                                                                       \
    "\"pushes\": [{\"frame\": \"root_link\", \"start\": 0.5, \"duration\": 0.3, \"wrench\": [0, 150, 0, 0, 0, "        \
    "5.97]}],"                                                                                                         \
    " \"floor\": {\"mu_s\": 0.1, \"mu_d\": 0.08},"

static rb_log *simulate(const char *scn, const char *out)
{
    const char *args[] = {"simulate", scn, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(out, &log, &err), RB_OK, "%s", err.msg);
    return log;
}

static const rb_channel *channel(const rb_log *log, const char *name, size_t n, const char *element, const char *unit)
{
    const rb_channel *ch = rb_log_find(log, name);
    cr_assert_not_null(ch, "missing %s", name);
    cr_assert_eq(ch->n_elements, n, "%s", name);
    cr_assert_str_eq(ch->element_names[1], element, "%s", name);
    cr_assert_str_eq(ch->units[1], unit, "%s", name);
    return ch;
}

Test(cli_simulate_slip, humanoid_slides_on_a_low_friction_floor)
{
    char *dir = test_tmpdir(), *scn = scenario(dir, "slip.json", SLIPPERY), *out = test_path(dir, "slip.mat");
    rb_log *log = simulate(scn, out);
    const rb_channel *v = channel(log, "truth/contacts/slip_velocity", 4, "l_sole_y", "m/s");
    const rb_channel *sl = channel(log, "truth/contacts/slipping", 2, "r_sole", "n.d.");
    const rb_channel *ratio = channel(log, "truth/contacts/friction_ratio", 2, "r_sole", "n.d.");
    channel(log, "truth/contacts/pulling", 2, "r_sole", "n.d.");
    const rb_channel *w[2] = {rb_log_find(log, "truth/contacts/l_sole"), rb_log_find(log, "truth/contacts/r_sole")};
    const rb_channel *base = rb_log_find(log, "truth/base/position");
    cr_assert(w[0] && w[1] && base);
    size_t n = sl->n_samples, slipping[2] = {0, 0};
    cr_assert_eq(n, 2501);
    double worst = 0.0, vmax = 0.0;
    for (size_t k = 0; k < n; k++)
        for (size_t c = 0; c < 2; c++) {
            const double *f = w[c]->data + 6 * k;
            double rt = f[2] > 0 ? hypot(f[0], f[1]) / f[2] : 0.0;
            cr_assert_float_eq(ratio->data[2 * k + c], rt, 1e-12, "sample %zu", k); /* the wrench logged */
            if (sl->data[2 * k + c] != 1.0) {
                cr_assert_eq(sl->data[2 * k + c], 0.0);
                cr_assert_eq(v->data[4 * k + 2 * c], 0.0, "a foot in stick has no slip velocity");
                continue;
            }
            slipping[c]++;
            vmax = fmax(vmax, hypot(v->data[4 * k + 2 * c], v->data[4 * k + 2 * c + 1]));
            if (f[2] > 0)
                worst = fmax(worst, fabs(ratio->data[2 * k + c] - 0.08));
        }
    for (size_t c = 0; c < 2; c++) {
        cr_assert_gt(slipping[c], 300, "foot %zu slipped %zu samples", c, slipping[c]);
        cr_assert_eq(sl->data[0 + c], 0.0, "before the push");
        cr_assert_eq(sl->data[2 * (n - 1) + c], 0.0, "stuck again at the end");
        cr_assert_eq(sl->data[2 * 780 + c], 1.0, "slipping at the end of the push");
    }
    cr_assert_lt(worst, 1e-9, "|f_t| / f_n - mu_d while slipping: %g", worst);
    cr_assert_gt(vmax, 0.3, "slip speed %g m/s", vmax);
    cr_assert_gt(base->data[3 * (n - 1) + 1] - base->data[1], 0.2, "the robot slid %g m",
                 base->data[3 * (n - 1) + 1] - base->data[1]);
    /* the same bytes twice */
    char *again = test_path(dir, "again.mat");
    rb_log_free(simulate(scn, again));
    size_t la = 0, lb = 0;
    char *a = test_read_file(out, &la), *b = test_read_file(again, &lb);
    cr_assert(la == lb && memcmp(a, b, la) == 0, "two runs differ");
    free(a), free(b), free(again);
    rb_log_free(log);
    free(dir), free(scn), free(out);
}

Test(cli_simulate_slip, no_floor_no_friction_channels)
{
    char *dir = test_tmpdir(), *scn = scenario(dir, "rigid.json", ""), *out = test_path(dir, "rigid.mat");
    rb_log *log = simulate(scn, out);
    cr_assert_not_null(rb_log_find(log, "truth/contacts_active"));
    for (size_t c = 0; c < log->n_channels; c++) {
        const char *name = log->channels[c].name;
        cr_assert(!strstr(name, "slip") && !strstr(name, "friction_ratio") && !strstr(name, "pulling"), "%s", name);
    }
    rb_log_free(log);
    free(dir), free(scn), free(out);
}

Test(cli_simulate_slip, floor_errors_one_line_no_output)
{
    static const struct {
        const char *extra, *message;
    } cases[] = {
        {"\"floor\": {\"mu_s\": 0.1, \"mu_d\": 0.2},",
         "floor.mu_s: the static coefficient mu_s (0.1) must be >= the kinetic mu_d (0.2)"},
        {"\"floor\": {\"patches\": [{\"min\": [0.5, -1], \"max\": [-0.5, 1], \"mu_s\": 0.1}]},",
         "floor.patches[0].max: must be > min in x and y (got min [0.5, -1], max [-0.5, 1]: inverted corners?)"},
        {"\"floor\": {\"contacts\": {\"l_sol\": {\"mu_s\": 0.2}}},",
         "floor.contacts.l_sol: unknown contact frame 'l_sol' (did you mean 'l_sole'?)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *dir = test_tmpdir(), *scn = scenario(dir, "bad.json", cases[i].extra), *out = test_path(dir, "x.mat");
        const char *args[] = {"simulate", scn, "-o", out, NULL};
        cli_result r = cli_run(NULL, args);
        cr_assert_eq(r.status, CLI_EXIT_INPUT, "case %zu: exit %d: %s", i, r.status, r.err);
        cr_assert_eq(test_count_lines(r.err), 1, "case %zu: %s", i, r.err);
        cr_assert(strstr(r.err, cases[i].message), "case %zu: %s", i, r.err);
        cr_assert(!test_exists(out), "case %zu left %s", i, out);
        cr_assert_eq(test_count_entries(dir), 1, "case %zu left a temporary file", i);
        cli_result_free(&r);
        free(dir), free(scn), free(out);
    }
}
