/* End-to-end: roboest simulate with the jets' flight controller (roboest/sim_flight.h). The shipped thrust_flight
 * scenario (20 s, the null-space excitation, the joints moving) keeps the CoM within 5 cm of its reference and roll
 * and pitch within 5 deg and logs the controller's channels; a height waypoint is followed; bad flight keys are
 * refused in one line naming the key, exit 3, no output file. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "roboest/io.h"
#include "roboest/spatial.h"

/* The shipped thrust_flight scenario with the model read in place; `patch` (JSON, NULL: none) replaces the root
 * members it names ("flight": {...}, "duration": ...). Written to dir. */
static char *write_scenario(const char *dir, const char *patch)
{
    char *text = test_read_file(RB_SOURCE "/configs/scenarios/thrust_flight.json", NULL);
    cJSON *sc = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(sc);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(sc, "model"), "urdf",
                              cJSON_CreateString(RB_SOURCE "/datasets/jet_humanoid.urdf"));
    if (patch) {
        cJSON *p = cJSON_Parse(patch);
        cr_assert_not_null(p, "%s", patch);
        for (cJSON *e = p->child; e; e = e->next) {
            cJSON_DeleteItemFromObject(sc, e->string);
            if (!cJSON_IsNull(e))
                cJSON_AddItemToObject(sc, e->string, cJSON_Duplicate(e, true));
        }
        cJSON_Delete(p);
    }
    char *out = cJSON_Print(sc), *file = test_path(dir, "scenario.json");
    test_write_file(file, out);
    free(out);
    cJSON_Delete(sc);
    return file;
}

static rb_log *simulate(const char *patch)
{
    char *dir = test_tmpdir(), *scn = write_scenario(dir, patch), *out = test_path(dir, "out.mat");
    const char *args[] = {"simulate", scn, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cli_result_free(&r);
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_log_read(out, &log, &err), RB_OK, "%s", err.msg);
    free(scn);
    free(out);
    free(dir);
    return log;
}

static const rb_channel *channel(const rb_log *log, const char *name)
{
    const rb_channel *c = rb_log_find(log, name);
    cr_assert_not_null(c, "channel %s", name);
    return c;
}

/* Largest CoM error (m), |roll| and |pitch| (deg) over the log. */
static void errors(const rb_log *log, double e[3])
{
    const rb_channel *c = channel(log, "truth/com"), *r = channel(log, "truth/flight/com_ref"),
                     *q = channel(log, "truth/base/orientation");
    e[0] = e[1] = e[2] = 0.0;
    for (size_t k = 0; k < c->n_samples; k++) {
        double d = hypot(hypot(c->data[3 * k] - r->data[3 * k], c->data[3 * k + 1] - r->data[3 * k + 1]),
                         c->data[3 * k + 2] - r->data[3 * k + 2]),
               R[9], rpy[3];
        rb_m3_from_quat(q->data + 4 * k, R);
        rb_m3_to_rpy(R, rpy);
        e[0] = fmax(e[0], d), e[1] = fmax(e[1], fabs(rpy[0]) * 180 / M_PI),
        e[2] = fmax(e[2], fabs(rpy[1]) * 180 / M_PI);
    }
}

Test(cli_simulate_flight, the_shipped_flight_hovers_20_s)
{
    rb_log *log = simulate(NULL);
    const rb_channel *c = channel(log, "truth/com"), *T = channel(log, "truth/flight/desired_thrusts"),
                     *u = channel(log, "jets/throttles");
    cr_assert_gt(c->time[c->n_samples - 1], 19.9);
    cr_assert_eq(T->n_elements, 4);
    cr_assert_str_eq(T->element_names[2], "chest_l_jet_turbine");
    double umin = INFINITY, umax = -INFINITY;
    for (size_t k = 0; k < u->n_samples * 4; k++)
        umin = fmin(umin, u->data[k]), umax = fmax(umax, u->data[k]);
    cr_assert(umin >= 0 && umax <= 120 && umax - umin > 10, "throttles in %g .. %g", umin, umax);
    double e[3];
    errors(log, e);
    cr_log_info("thrust_flight: max CoM error %.4f m, |roll| %.3f deg, |pitch| %.3f deg", e[0], e[1], e[2]);
    cr_assert_lt(e[0], 0.05);
    cr_assert_lt(e[1], 5.0);
    cr_assert_lt(e[2], 5.0);
    rb_log_free(log);
}

Test(cli_simulate_flight, take_off_and_move_forward)
{
    rb_log *log = simulate("{\"duration\": 12, \"flight\": {\"waypoints\": [{\"t\": 1, \"offset\": [0, 0, 0]}, "
                           "{\"t\": 4, \"offset\": [0, 0, 0.25]}, {\"t\": 9, \"offset\": [0.4, 0, 0.25]}]}}");
    const rb_channel *c = channel(log, "truth/com");
    size_t last = c->n_samples - 1;
    double dx = c->data[3 * last] - c->data[0], dz = c->data[3 * last + 2] - c->data[2], e[3];
    errors(log, e);
    cr_log_info("take-off 0.25 m, forward 0.4 m: moved %.4f m, %.4f m; max CoM error %.4f m, |roll| %.3f deg, "
                "|pitch| %.3f deg",
                dx, dz, e[0], e[1], e[2]);
    cr_assert_lt(fabs(dz - 0.25), 0.01, "climbed %g m", dz);
    cr_assert_lt(fabs(dx - 0.4), 0.02, "moved %g m", dx);
    cr_assert_lt(e[0], 0.05);
    cr_assert_lt(e[1], 5.0);
    cr_assert_lt(e[2], 5.0);
    rb_log_free(log);
}

static void assert_refused(const char *patch, const char *needle1, const char *needle2)
{
    char *dir = test_tmpdir(), *scn = write_scenario(dir, patch), *out = test_path(dir, "out.mat");
    const char *args[] = {"simulate", scn, "-o", out, "-q", NULL};
    cli_result r = cli_run(NULL, args);
    cr_assert_eq(r.status, 3, "%s: exit %d: %s", patch, r.status, r.err);
    cr_assert_eq(test_count_lines(r.err), 1, "%s: one line: %s", patch, r.err);
    cr_assert_not_null(strstr(r.err, needle1), "'%s' in: %s", needle1, r.err);
    cr_assert_not_null(strstr(r.err, needle2), "'%s' in: %s", needle2, r.err);
    cr_assert_not(test_exists(out), "no output file");
    cli_result_free(&r);
    free(scn);
    free(out);
    free(dir);
}

Test(cli_simulate_flight, bad_flight_keys_are_refused)
{
    assert_refused("{\"flight\": {\"com\": {\"kp\": [1, 1, -6]}}}", "flight.com.kp", ">= 0");
    assert_refused("{\"flight\": {\"attitude\": {\"kd\": -10}}}", "flight.attitude.kd", "0");
    assert_refused("{\"flight\": {\"rate\": 0}}", "flight.rate", "0");
    assert_refused("{\"model\": {\"urdf\": \"" RB_SOURCE "/datasets/jet_humanoid.urdf\"}, \"base_pose\": null}",
                   "flight", "floating base");
    assert_refused("{\"jets\": null, \"log_channels\": null}", "flight", "needs jets");
    assert_refused("{\"jets\": [{\"frame\": \"l_arm_jet_turbine\", \"preset\": \"ironcub_p100\", \"throttle\": "
                   "{\"kind\": \"const\", \"offset\": 100}}], \"log_channels\": null}",
                   "jets[0].throttle", "flight");
}
