/* The jets' flight controller (roboest/sim_flight.h) on the shipped thrust_flight scenario (the jet humanoid
 * free-floating, shoulder-roll and torso-yaw sines tracked by the joint PD): it hovers for 20 s with the CoM within
 * 5 cm of its reference and roll and pitch within 5 deg, follows a height waypoint, its null-space excitation moves
 * the single thrusts by at least its amplitude without disturbing the flight, bad keys are refused in one line
 * naming the key (the scenario file and rb_sim_init), and it is deterministic and allocates nothing per step. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "roboest/sim.h"

#define FLIGHT RB_SOURCE "/configs/scenarios/thrust_flight.json"

static cJSON *shipped(void)
{
    FILE *f = fopen(FLIGHT, "rb");
    cr_assert_not_null(f, FLIGHT);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    cJSON *j = cJSON_Parse(buf);
    cr_assert_not_null(j, FLIGHT);
    return j;
}

/* The shipped scenario for `duration` s with its "flight" replaced by `flight` (JSON; NULL: kept). */
static cJSON *scenario(double duration, const char *flight)
{
    cJSON *j = shipped();
    cJSON_ReplaceItemInObject(j, "duration", cJSON_CreateNumber(duration));
    if (flight) {
        cJSON *f = cJSON_Parse(flight);
        cr_assert_not_null(f, "%s", flight);
        cJSON_ReplaceItemInObject(j, "flight", f);
    }
    return j;
}

static int load(cJSON *j, rb_scenario **s, rb_err *err)
{
    char *text = cJSON_Print(j);
    int rc = rb_scenario_load_text(text, strlen(text), "flight.json", FLIGHT, s, err);
    free(text);
    return rc;
}

static rb_log *run(cJSON *j)
{
    rb_scenario *s = NULL;
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(load(j, &s, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_scenario_run(s, NULL, NULL, &log, &err), RB_OK, "%s", err.msg);
    rb_scenario_free(s);
    cJSON_Delete(j);
    return log;
}

static const rb_channel *channel(const rb_log *log, const char *name)
{
    const rb_channel *c = rb_log_find(log, name);
    cr_assert_not_null(c, "channel %s", name);
    return c;
}

/* Largest CoM error (m) against truth/flight/com_ref and largest |roll|, |pitch| of the base (deg). */
typedef struct errors {
    double com, roll, pitch;
} errors;

static errors flight_errors(const rb_log *log)
{
    const rb_channel *c = channel(log, "truth/com"), *r = channel(log, "truth/flight/com_ref"),
                     *q = channel(log, "truth/base/orientation");
    cr_assert_eq(c->n_samples, r->n_samples);
    errors e = {0, 0, 0};
    for (size_t k = 0; k < c->n_samples; k++) {
        double d2 = 0.0, R[9], rpy[3];
        for (int i = 0; i < 3; i++)
            d2 += (c->data[3 * k + i] - r->data[3 * k + i]) * (c->data[3 * k + i] - r->data[3 * k + i]);
        rb_m3_from_quat(q->data + 4 * k, R);
        rb_m3_to_rpy(R, rpy);
        e.com = fmax(e.com, sqrt(d2));
        e.roll = fmax(e.roll, fabs(rpy[0]) * 180 / M_PI);
        e.pitch = fmax(e.pitch, fabs(rpy[1]) * 180 / M_PI);
    }
    return e;
}

static void within_bounds(const errors *e, const char *what)
{
    cr_log_info("%s: max CoM error %.4f m, max |roll| %.3f deg, max |pitch| %.3f deg", what, e->com, e->roll, e->pitch);
    cr_assert_lt(e->com, 0.05, "%s: CoM error %g m", what, e->com);
    cr_assert_lt(e->roll, 5.0, "%s: roll %g deg", what, e->roll);
    cr_assert_lt(e->pitch, 5.0, "%s: pitch %g deg", what, e->pitch);
}

Test(sim_flight, hovers_20_s_with_the_joints_moving)
{
    rb_log *log = run(scenario(20.0, "{}"));
    const rb_channel *c = channel(log, "truth/com"), *s = channel(log, "joints_state/positions");
    cr_assert_gt(c->time[c->n_samples - 1], 19.9);
    /* the joints do move: the shoulder roll's sine (0.1 rad) */
    size_t j = 0;
    while (j < s->n_elements && strcmp(s->element_names[j], "l_shoulder_roll") != 0)
        j++;
    cr_assert_lt(j, s->n_elements);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t k = 0; k < s->n_samples; k++)
        lo = fmin(lo, s->data[k * s->n_elements + j]), hi = fmax(hi, s->data[k * s->n_elements + j]);
    cr_assert_gt(hi - lo, 0.15, "shoulder roll range %g rad", hi - lo);
    errors e = flight_errors(log);
    within_bounds(&e, "hover 20 s");
    const rb_channel *r = channel(log, "truth/flight/com_ref");
    for (int i = 0; i < 3; i++)
        cr_assert_eq(r->data[3 * (r->n_samples - 1) + i], r->data[i], "the reference holds the start");
    cr_assert_lt(fabs(r->data[0] - c->data[0]) + fabs(r->data[2] - c->data[2]), 1e-12, "it starts at the CoM");
    rb_log_free(log);
}

Test(sim_flight, a_height_waypoint_is_followed)
{
    rb_log *log = run(scenario(10.0, "{\"waypoints\": [{\"t\": 2, \"offset\": [0, 0, 0]}, {\"t\": 5, \"offset\": "
                                     "[0, 0, 0.3]}]}"));
    const rb_channel *c = channel(log, "truth/com"), *r = channel(log, "truth/flight/com_ref");
    size_t last = c->n_samples - 1, mid = 350; /* 3.5 s: halfway up */
    cr_assert_lt(fabs(r->data[3 * last + 2] - r->data[2] - 0.3), 1e-12);
    cr_assert_lt(fabs(r->data[3 * mid + 2] - r->data[2] - 0.15), 1e-9, "smoothstep halfway: %g",
                 r->data[3 * mid + 2] - r->data[2]);
    double climb = c->data[3 * last + 2] - c->data[2];
    cr_log_info("height step: climbed %.4f m of 0.3 m", climb);
    cr_assert_lt(fabs(climb - 0.3), 0.01, "climbed %g m", climb);
    errors e = flight_errors(log);
    within_bounds(&e, "height step 0.3 m");
    rb_log_free(log);
}

/* The shipped excitation (15 N, 0.1 -> 0.5 Hz over 2-18 s) against the same flight without it. */
Test(sim_flight, the_null_space_excitation_moves_the_thrusts_not_the_robot)
{
    cJSON *j = shipped();
    const cJSON *x = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "flight"), "excitation");
    cr_assert_not_null(x, "the shipped flight is excited");
    double amp = cJSON_GetObjectItem(x, "amplitude")->valuedouble;
    cJSON_Delete(j);
    rb_log *with = run(scenario(20.0, NULL)), *without = run(scenario(20.0, "{\"rate\": 100}"));
    const rb_channel *a = channel(with, "truth/jets/thrusts"), *b = channel(without, "truth/jets/thrusts");
    cr_assert_eq(a->n_samples, b->n_samples);
    double dmax = 0.0, dsum = 0.0;
    for (size_t k = 0; k < a->n_samples; k++) {
        double s = 0.0;
        for (size_t i = 0; i < a->n_elements; i++) {
            double d = a->data[k * a->n_elements + i] - b->data[k * b->n_elements + i];
            dmax = fmax(dmax, fabs(d));
            s += d;
        }
        dsum = fmax(dsum, fabs(s));
    }
    cr_log_info("excitation %g N: largest single-thrust change %.3f N, largest change of their sum %.3f N", amp, dmax,
                dsum);
    cr_assert_geq(dmax, amp, "a thrust moves by the amplitude: %g N", dmax);
    cr_assert_lt(dsum, 0.25 * amp, "the total thrust barely moves: %g N", dsum);
    errors e = flight_errors(with);
    within_bounds(&e, "hover 20 s with the excitation");
    rb_log_free(with);
    rb_log_free(without);
}

/* A refused scenario: one line naming the key (needle1) and saying why (needle2). */
static void refused(cJSON *j, const char *needle1, const char *needle2)
{
    rb_scenario *s = NULL;
    rb_err err;
    int rc = load(j, &s, &err);
    cJSON_Delete(j);
    cr_assert_eq(rc, RB_ECONFIG, "%s: refused (rc %d)", needle1, rc);
    cr_assert_null(s);
    cr_assert_null(strchr(err.msg, '\n'), "one line: %s", err.msg);
    cr_assert_not_null(strstr(err.msg, needle1), "'%s' in: %s", needle1, err.msg);
    cr_assert_not_null(strstr(err.msg, needle2), "'%s' in: %s", needle2, err.msg);
}

Test(sim_flight, bad_flight_keys_are_refused_naming_the_key)
{
    refused(scenario(1, "{\"com\": {\"kp\": -1}}"), "flight.com.kp", ">= 0");
    refused(scenario(1, "{\"com\": {\"kd\": [1, -2, 3]}}"), "flight.com.kd", ">= 0");
    refused(scenario(1, "{\"attitude\": {\"kp\": -25}}"), "flight.attitude.kp", "0");
    refused(scenario(1, "{\"rate\": 0}"), "flight.rate", "0");
    refused(scenario(1, "{\"rate\": -100}"), "flight.rate", "0");
    refused(scenario(1, "{\"waypoints\": [{\"t\": 2, \"offset\": [0, 0, 0.1]}, {\"t\": 1, \"offset\": [0, 0, 0]}]}"),
            "flight.waypoints[1].t", "previous");
    refused(scenario(1, "{\"excitation\": {\"amplitude\": 5, \"direction\": [1, 0]}}"), "flight.excitation.direction",
            "4");
    refused(scenario(1, "{\"excitation\": {\"amplitude\": 5, \"from\": 3}}"), "flight.excitation.from", "until");
    refused(scenario(1, "{\"gains\": {}}"), "flight", "unknown key 'gains'");
    cJSON *fixed = scenario(1, "{}");
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(fixed, "model"), "floating", cJSON_CreateFalse());
    cJSON_DeleteItemFromObject(fixed, "base_pose");
    refused(fixed, "flight", "floating base");
    cJSON *nojets = scenario(1, "{}");
    cJSON_DeleteItemFromObject(nojets, "jets");
    refused(nojets, "flight", "needs jets");
    cJSON *thr = scenario(1, "{}");
    cJSON_AddItemToObject(cJSON_GetArrayItem(cJSON_GetObjectItem(thr, "jets"), 2), "throttle",
                          cJSON_Parse("{\"kind\": \"const\", \"offset\": 70}"));
    refused(thr, "jets[2].throttle", "flight");
    /* without flight a jet's throttle stays required */
    cJSON *none = scenario(1, "{}");
    cJSON_DeleteItemFromObject(none, "flight");
    refused(none, "jets[0]", "throttle");
}

/* rb_sim_init refuses the same in one line "sim: ...". */
static void init_refused(const rb_sim_scenario *sc, const char *needle1, const char *needle2)
{
    rb_sim *sim = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(sc, &sim, &err), RB_ECONFIG, "%s", needle1);
    cr_assert_null(sim);
    cr_assert_null(strchr(err.msg, '\n'), "one line: %s", err.msg);
    cr_assert_not_null(strstr(err.msg, needle1), "'%s' in: %s", needle1, err.msg);
    cr_assert_not_null(strstr(err.msg, needle2), "'%s' in: %s", needle2, err.msg);
}

Test(sim_flight, the_engine_refuses_a_bad_flight)
{
    rb_scenario *s = NULL;
    rb_err err;
    cJSON *j = scenario(1, NULL);
    cr_assert_eq(load(j, &s, &err), RB_OK, "%s", err.msg);
    cJSON_Delete(j);
    rb_sim_scenario sc = s->sim;
    sc.flight.rate = 0;
    init_refused(&sc, "flight", "rate");
    sc = s->sim, sc.flight.att_kd = -1;
    init_refused(&sc, "flight", "attitude");
    sc = s->sim, sc.flight.com_ki[2] = NAN;
    init_refused(&sc, "flight", "com");
    sc = s->sim, sc.n_jets = 0;
    init_refused(&sc, "flight", "needs jets");
    rb_sim_jet jets[4];
    memcpy(jets, s->sim.jets, sizeof jets);
    jets[1].throttle.offset = 80;
    sc = s->sim, sc.jets = jets;
    init_refused(&sc, "jet 1", "throttle");
    double dir[4] = {1, 1, 1, 1}; /* the total thrust: no null-space part */
    sc = s->sim, sc.flight.excitation.direction = dir;
    init_refused(&sc, "flight", "null-space");
    rb_scenario_free(s);
}

/* Two engines from the same scenario give bit-identical states; the steps allocate nothing. */
Test(sim_flight, deterministic_and_no_allocation_per_step)
{
    rb_scenario *s = NULL;
    rb_err err;
    cJSON *j = scenario(2.0, NULL);
    cr_assert_eq(load(j, &s, &err), RB_OK, "%s", err.msg);
    cJSON_Delete(j);
    rb_sim *a = NULL, *b = NULL;
    cr_assert_eq(rb_sim_init(&s->sim, &a, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_sim_init(&s->sim, &b, &err), RB_OK, "%s", err.msg);
    const rb_sim_truth *ta = rb_sim_truth_get(a), *tb = rb_sim_truth_get(b);
    cr_assert_not_null(ta->jet_thrust_des);
    test_alloc_count_init();
    rb_alloc_fail_after(-1);
    test_alloc_count = 0;
    test_alloc_counting = 1;
    int ra, rb;
    size_t steps = 0;
    while ((ra = rb_sim_step(a, &err)) == 1) {
        rb = rb_sim_step(b, &err);
        cr_assert_eq(rb, 1, "%s", err.msg);
        cr_assert_eq(memcmp(ta->q, tb->q, ta->nq * sizeof *ta->q), 0, "q at step %zu", steps);
        cr_assert_eq(memcmp(ta->jet_throttle, tb->jet_throttle, 4 * sizeof *ta->jet_throttle), 0);
        steps++;
    }
    test_alloc_counting = 0;
    cr_assert_eq(ra, 0, "%s", err.msg);
    long allocs = rb_alloc_fail_after(-1);
    cr_assert_eq(allocs, 0, "rb_malloc calls: %ld", allocs);
    if (test_alloc_count_works())
        cr_assert_eq(test_alloc_count, 0, "C-library allocations: %ld", test_alloc_count);
    cr_assert_eq(steps, 2000);
    rb_sim_finish(a);
    rb_sim_finish(b);
    rb_scenario_free(s);
}
