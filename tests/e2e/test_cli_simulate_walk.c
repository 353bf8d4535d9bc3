/* End-to-end: roboest simulate configs/scenarios/walk.json, the 12-DoF biped walking on the thesis's schedule (seed
 * 003): the gait's truth channels with their elements and units, the phase at the thesis's checkpoints, a walk that
 * stays upright on its CoM plan and advances by six step lengths, the same bytes from the same scenario, bad gait
 * keys refused in one line with exit 3 and no output. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"

#define WALK RB_SOURCE "/configs/scenarios/walk.json"

/* walk.json with the model read in place, `patch` (JSON, NULL: none) replacing the gait's members it names and
 * `root` (JSON, NULL: none) the top-level ones, written to dir. */
static char *write_walk(const char *dir, const char *patch, const char *root)
{
    char *text = test_read_file(WALK, NULL);
    cJSON *sc = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(sc);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(sc, "model"), "urdf",
                              cJSON_CreateString(RB_SOURCE "/datasets/walker_biped.urdf"));
    const char *patches[2] = {patch, root};
    cJSON *into[2] = {cJSON_GetObjectItem(sc, "gait"), sc};
    for (int i = 0; i < 2; i++) {
        if (!patches[i])
            continue;
        cJSON *p = cJSON_Parse(patches[i]);
        cr_assert_not_null(p, "%s", patches[i]);
        for (cJSON *e = p->child; e; e = e->next) {
            cJSON_DeleteItemFromObject(into[i], e->string);
            if (!cJSON_IsNull(e)) /* null: the key removed */
                cJSON_AddItemToObject(into[i], e->string, cJSON_Duplicate(e, true));
        }
        cJSON_Delete(p);
    }
    char *out = cJSON_Print(sc), *file = test_path(dir, "walk.json");
    test_write_file(file, out);
    free(out);
    cJSON_Delete(sc);
    return file;
}

static const rb_channel *channel(const rb_log *log, const char *name, size_t n, const char *e0, const char *unit)
{
    const rb_channel *c = rb_log_find(log, name);
    cr_assert_not_null(c, "channel %s", name);
    cr_assert_eq(c->n_elements, n, "%s: %zu elements", name, c->n_elements);
    cr_expect_str_eq(c->element_names[0], e0, "%s", name);
    cr_expect_str_eq(c->units[0], unit, "%s", name);
    return c;
}

static double at(const rb_channel *c, size_t k, size_t e) { return c->data[k * c->n_elements + e]; }

/* The sample of c at time t (1 kHz truth from 0). */
static size_t sample_at(const rb_channel *c, double t)
{
    size_t k = (size_t)lround(t * 1000.0);
    cr_assert_lt(k, c->n_samples);
    cr_assert_float_eq(c->time[k], t, 1e-9);
    return k;
}

/* roboest simulate SCENARIO -o OUT, which must succeed; the log it wrote. */
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

Test(cli_simulate_walk, walk_json_walks_on_the_theses_schedule)
{
    test_deadline(120);
    char *dir = test_tmpdir(), *out = test_path(dir, "walk.mat");
    rb_log *log = simulate(WALK, out);
    const rb_channel *ph = channel(log, "truth/gait/phase", 1, "phase", "n.d.");
    const rb_channel *ref = channel(log, "truth/gait/com_ref", 3, "x", "m");
    channel(log, "truth/gait/zmp_ref", 2, "x", "m");
    const rb_channel *feet = channel(log, "truth/gait/feet_ref", 6, "l_x", "m");
    channel(log, "truth/gait/zmp", 2, "x", "m");
    const rb_channel *com = channel(log, "truth/com", 3, "x", "m");
    channel(log, "truth/com_velocity", 3, "x", "m/s");
    channel(log, "truth/com_acceleration", 3, "x", "m/s^2");
    const rb_channel *quat = channel(log, "truth/base/orientation", 4, "qw", "n.d.");
    const rb_channel *act = channel(log, "truth/contacts_active", 2, "l_sole", "n.d.");
    cr_assert_eq(ph->n_samples, 10601);
    /* the thesis's checkpoints: DS -> LS at 0.5 s, LS -> DS at 1.1 s, DS -> RS at 2.0 s, the last LS ends at 10.1 s */
    static const struct {
        double t, phase;
    } checks[] = {{0.499, 0}, {0.5, 1}, {1.099, 1}, {1.1, 0},    {1.999, 0}, {2.0, 2},
                  {2.599, 2}, {2.6, 0}, {9.5, 1},   {10.099, 1}, {10.1, 0},  {10.6, 0}};
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        size_t k = sample_at(ph, checks[i].t);
        cr_expect_eq(at(ph, k, 0), checks[i].phase, "t = %g: phase %g", checks[i].t, at(ph, k, 0));
        /* the swing foot's contact is off, the stance foot's on */
        cr_expect_eq(at(act, k, 0), checks[i].phase != 2, "t = %g: left contact", checks[i].t);
        cr_expect_eq(at(act, k, 1), checks[i].phase != 1, "t = %g: right contact", checks[i].t);
    }
    double se = 0, tilt = 0;
    for (size_t k = 0; k < com->n_samples; k++) {
        for (int i = 0; i < 3; i++)
            se += pow(at(com, k, i) - at(ref, k, i), 2);
        /* the base's roll and pitch: the tilt of its z axis, from the quaternion */
        double w = at(quat, k, 0), x = at(quat, k, 1), y = at(quat, k, 2);
        double zz = 1 - 2 * (x * x + y * y);
        (void)w;
        tilt = fmax(tilt, acos(fmin(1.0, zz)));
    }
    cr_expect_lt(sqrt(se / (double)com->n_samples), 3e-3, "CoM off the plan by %g m RMS",
                 sqrt(se / (double)com->n_samples));
    cr_expect_lt(tilt, 5 * M_PI / 180, "the base tilts by %g deg", tilt * 180 / M_PI);
    size_t end = com->n_samples - 1;
    /* six step lengths: the feet (from x = 0) close side by side 0.36 m ahead, the CoM comes to rest over them */
    cr_expect_float_eq(at(feet, 0, 0), 0.0, 1e-6);
    cr_expect_float_eq(at(feet, end, 0), 6 * 0.06, 1e-3, "left foot at %g", at(feet, end, 0));
    cr_expect_float_eq(at(feet, end, 3), 6 * 0.06, 1e-3, "right foot at %g", at(feet, end, 3));
    cr_expect_float_eq(at(com, end, 0), 6 * 0.06, 0.01, "the CoM at %g m", at(com, end, 0));
    rb_log_free(log);
    free(out);
    free(dir);
}

Test(cli_simulate_walk, the_same_scenario_gives_the_same_bytes)
{
    test_deadline(60);
    char *dir = test_tmpdir(), *scn = write_walk(dir, NULL, "{\"duration\": 2.7}");
    char *outs[2] = {test_path(dir, "a.mat"), test_path(dir, "b.mat")};
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"simulate", scn, "-o", outs[i], "-q", NULL};
        cli_result r = cli_run(NULL, args);
        cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
        cli_result_free(&r);
    }
    size_t na, nb;
    char *a = test_read_file(outs[0], &na), *b = test_read_file(outs[1], &nb);
    cr_assert_gt(na, 100000u);
    cr_expect(na == nb && memcmp(a, b, na) == 0, "two runs: %zu and %zu bytes, different", na, nb);
    free(a), free(b), free(outs[0]), free(outs[1]), free(scn), free(dir);
}

/* gait.stand: the simulated robot, not only its plan, stands still until then (the CoM's truth velocity and
 * acceleration zero to rounding, the phase double support) and walks after it (the first single support at start). */
Test(cli_simulate_walk, a_walk_with_stand_starts_at_rest)
{
    test_deadline(60);
    char *dir = test_tmpdir(), *out = test_path(dir, "stand.mat");
    char *scn = write_walk(dir, "{\"stand\": 1.0, \"start\": 1.9, \"stop\": 3.2}", "{\"duration\": 2.6}");
    rb_log *log = simulate(scn, out);
    const rb_channel *v = channel(log, "truth/com_velocity", 3, "x", "m/s");
    const rb_channel *a = channel(log, "truth/com_acceleration", 3, "x", "m/s^2");
    const rb_channel *ph = channel(log, "truth/gait/phase", 1, "phase", "n.d.");
    double vmax = 0, amax = 0;
    for (size_t k = 0; k < sample_at(v, 0.999); k++)
        for (size_t e = 0; e < 2; e++)
            vmax = fmax(vmax, fabs(at(v, k, e))), amax = fmax(amax, fabs(at(a, k, e)));
    cr_expect_lt(vmax, 1e-9, "the CoM moves while standing: %g m/s", vmax);
    cr_expect_lt(amax, 1e-9, "the CoM accelerates while standing: %g m/s^2", amax);
    cr_expect_gt(fabs(at(v, sample_at(v, 1.2), 1)), 1e-3, "the CoM still at rest after stand");
    cr_expect_eq(at(ph, sample_at(ph, 1.899), 0), 0.0);
    cr_expect_eq(at(ph, sample_at(ph, 1.9), 0), 1.0, "the first (left) single support at start");
    rb_log_free(log);
    free(scn), free(out), free(dir);
}

/* One line on stderr naming the key, exit 3 (input), no output file. */
static void assert_refused(const char *patch, const char *root, const char *needle1, const char *needle2)
{
    char *dir = test_tmpdir(), *scn = write_walk(dir, patch, root), *out = test_path(dir, "out.mat");
    const char *args[] = {"simulate", scn, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, CLI_EXIT_INPUT, "%s %s: exit %d: %s", patch, root, r.status, r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "one line: %s", r.err);
    cr_assert_not_null(strstr(r.err, needle1), "'%s' in: %s", needle1, r.err);
    cr_assert_not_null(strstr(r.err, needle2), "'%s' in: %s", needle2, r.err);
    cr_assert_not(test_exists(out), "no output file");
    cli_result_free(&r);
    free(scn);
    free(out);
    free(dir);
}

Test(cli_simulate_walk, bad_gait_keys_are_refused)
{
    assert_refused("{\"ds\": 0}", NULL, "gait.ds", "> 0");
    assert_refused("{\"ss\": -0.6}", NULL, "gait.ss", "> 0");
    assert_refused("{\"step_length\": 0.4}", NULL, "gait.step_length", "[-0.2, 0.2]");
    assert_refused("{\"feet\": [\"l_toe\", \"r_sole\"]}", NULL, "gait.feet[0]", "unknown frame 'l_toe'");
    assert_refused(NULL, "{\"balance\": {\"amplitude\": 0.02, \"freq\": 0.25}}", "gait", "not with 'balance'");
    assert_refused(NULL, "{\"model\": {\"urdf\": \"" RB_SOURCE "/datasets/walker_biped.urdf\"}, \"base_pose\": null}",
                   "gait", "floating base");
    /* the plan's check comes when the run sets up */
    assert_refused("{\"com_height\": 0.02}", NULL, "gait.com_height", "above the feet");
}
