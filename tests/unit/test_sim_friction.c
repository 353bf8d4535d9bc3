/* Frictional contacts (roboest/sim_contact.h): the standing humanoid of humanoid_balance.json pushed sideways holds
 * on a high-friction floor and slips on a low-friction one (kinetic friction mu_d f_n, the feet moving by the
 * integral of their slip velocity, sticking again after the push), a low-friction patch acts only where it lies, the
 * Stribeck curve, the RNEA identity with the applied (friction) wrenches, determinism, no allocation per step, and the
 * scenario errors.
 * The pushes: a push at the pelvis (0.8 m up) on a robot whose feet are 0.18 m apart tips it over its +y foot as soon
 * as F h > m g 0.09, about 60 N: the contacts are bilateral, so it stays up, but its -y foot unloads and slips at any
 * mu (f_n -> 0). A foot that holds is loaded: the floors that must hold get 40 N (the -y foot's |f_t| / f_n about
 * 0.25). While the robot slides, the friction at the feet takes the push's moment with the robot's inertia and both
 * feet stay loaded: the low-friction floors get 150 N. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "roboest/dynamics.h"
#include "roboest/sim.h"

#define BASE RB_SOURCE "/configs/scenarios/test.json"

/* humanoid_balance.json's robot standing still (balance with no sway), its PD gains, 2 s; a sideways push of FY N
 * on the pelvis for 0.3 s from 0.5 s. The pelvis sits 0.0398 m behind the soles: the push's moment mz = 0.0398 FY
 * puts its line of action over the feet (no yaw). Then the floor (or nothing). */
static const char *const SCENARIO =
    "{\"model\": {\"urdf\": \"../../datasets/humanoid_lower_body.urdf\", \"floating\": true},\n"
    " \"duration\": 2.0, \"dt\": 0.001, \"method\": \"%s\",\n"
    " \"base_pose\": {\"position\": [-0.0298, 0.0, 0.83585]},\n"
    " \"q0\": {\"l_hip_pitch\": -0.2, \"l_knee\": 0.4, \"l_ankle_pitch\": -0.2,\n"
    "        \"r_hip_pitch\": -0.2, \"r_knee\": 0.4, \"r_ankle_pitch\": -0.2},\n"
    " \"contacts\": [{\"frame\": \"l_sole\"}, {\"frame\": \"r_sole\"}],\n"
    " \"balance\": {\"amplitude\": 0.0, \"freq\": 0.0},\n"
    " \"controller\": {\"kind\": \"pd\", \"gravity_comp\": true, \"gains\": {\n"
    "  \"torso_pitch\": {\"kp\": 400, \"kd\": 8}, \"torso_roll\": {\"kp\": 400, \"kd\": 8},\n"
    "  \"torso_yaw\": {\"kp\": 200, \"kd\": 4}, \"l_hip_pitch\": {\"kp\": 800, \"kd\": 15},\n"
    "  \"l_hip_roll\": {\"kp\": 800, \"kd\": 15}, \"l_hip_yaw\": {\"kp\": 300, \"kd\": 6},\n"
    "  \"l_knee\": {\"kp\": 800, \"kd\": 15}, \"l_ankle_pitch\": {\"kp\": 600, \"kd\": 12},\n"
    "  \"l_ankle_roll\": {\"kp\": 600, \"kd\": 12}, \"r_hip_pitch\": {\"kp\": 800, \"kd\": 15},\n"
    "  \"r_hip_roll\": {\"kp\": 800, \"kd\": 15}, \"r_hip_yaw\": {\"kp\": 300, \"kd\": 6},\n"
    "  \"r_knee\": {\"kp\": 800, \"kd\": 15}, \"r_ankle_pitch\": {\"kp\": 600, \"kd\": 12},\n"
    "  \"r_ankle_roll\": {\"kp\": 600, \"kd\": 12}}},\n"
    " \"pushes\": [{\"frame\": \"root_link\", \"start\": 0.5, \"duration\": 0.3,\n"
    "              \"wrench\": [0, %.17g, 0, 0, 0, %.17g]}]%s%s}\n";

#define PUSH_START 0.5
#define PUSH_END 0.8

static rb_scenario *load_floor(const char *method, double fy, const char *floor)
{
    char text[8192];
    snprintf(text, sizeof text, SCENARIO, method, fy, 0.0398 * fy, floor ? ",\n \"floor\": " : "", floor ? floor : "");
    rb_scenario *s = NULL;
    rb_err err;
    int rc = rb_scenario_load_text(text, strlen(text), "slip.json", BASE, &s, &err);
    cr_assert_eq(rc, RB_OK, "%s", rc ? err.msg : "");
    return s;
}

/* One run, sample by sample: the soles' world x-y, the friction truth, the contact forces. */
typedef struct slip_run {
    size_t n;
    double *t, *foot, *sv; /* 4 per sample: l x y, r x y */
    unsigned char *sl;     /* 2 per sample */
    double *ratio, *fn;    /* 2 per sample */
    double id_err;         /* max |rnea(q, nu, nu_dot, pushes + contacts) - [0; tau_j]| */
    double mu_err;         /* max ||f_t| - mu(|v_t|) f_n| / f_n over the slipping samples with f_n > 0 */
    double dt;
} slip_run;

/* Kinetic coefficient of the Stribeck form, written out here (the library's is rb_sim_friction_mu). */
static double stribeck(double mu_s, double mu_d, double v_s, double v)
{
    return v_s > 0 ? mu_d + (mu_s - mu_d) * exp(-(v / v_s) * (v / v_s)) : mu_d;
}

static void run(const char *method, double fy, const char *floor, double mu_s, double mu_d, double v_s, slip_run *r)
{
    rb_scenario *s = load_floor(method, fy, floor);
    const rb_model *m = s->model;
    rb_sim_scenario sc = s->sim;
    int frames[2] = {(int)rb_model_frame_index(m, "l_sole"), (int)rb_model_frame_index(m, "r_sole")};
    sc.frames = frames, sc.n_frames = 2;
    rb_sim *sim = NULL;
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(&sc, &sim, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    const rb_sim_truth *t = rb_sim_truth_get(sim);
    const rb_sim_contact_truth *ct = rb_sim_contact_truth_get(sim);
    cr_assert_not_null(ct);
    cr_assert_eq(ct->n_contacts, 2);
    size_t cap = rb_sim_n_steps(sim) + 1;
    memset(r, 0, sizeof *r);
    r->dt = sc.dt;
    r->t = calloc(cap, sizeof *r->t), r->foot = calloc(4 * cap, sizeof *r->foot),
    r->sv = calloc(4 * cap, sizeof *r->sv);
    r->sl = calloc(2 * cap, 1), r->ratio = calloc(2 * cap, sizeof *r->ratio), r->fn = calloc(2 * cap, sizeof *r->fn);
    int rc;
    do {
        size_t k = r->n++;
        cr_assert_leq(r->n, cap);
        r->t[k] = t->t;
        for (int c = 0; c < 2; c++) {
            const double *w = t->contact_wrench + 6 * c;
            r->foot[4 * k + 2 * c] = t->frame_pose[c].p[0], r->foot[4 * k + 2 * c + 1] = t->frame_pose[c].p[1];
            r->sv[4 * k + 2 * c] = ct->slip_velocity[2 * c], r->sv[4 * k + 2 * c + 1] = ct->slip_velocity[2 * c + 1];
            r->sl[2 * k + c] = ct->slipping[c];
            r->ratio[2 * k + c] = ct->friction_ratio[c];
            r->fn[2 * k + c] = w[2];
            if (ct->slipping[c] && w[2] > 0) {
                double v = hypot(ct->slip_velocity[2 * c], ct->slip_velocity[2 * c + 1]);
                double e = fabs(hypot(w[0], w[1]) - stribeck(mu_s, mu_d, v_s, v) * w[2]) / w[2];
                r->mu_err = fmax(r->mu_err, e);
                cr_assert_eq(w[5], 0.0, "a slipping foot's yaw moment is released");
            }
        }
        /* the logged wrenches are the applied ones: the RNEA with them gives the joint torques */
        rb_ext_wrench ext[3];
        size_t ne = 0;
        for (size_t p = 0; p < t->n_pushes; p++) {
            ext[ne].frame = t->push_list[p].frame, ext[ne].rep = RB_DYN_MIXED;
            memcpy(ext[ne++].w, t->push_wrench + 6 * p, sizeof ext[0].w);
        }
        for (int c = 0; c < 2; c++) {
            ext[ne].frame = frames[c], ext[ne].rep = RB_DYN_MIXED;
            memcpy(ext[ne++].w, t->contact_wrench + 6 * c, sizeof ext[0].w);
        }
        double tau[64];
        cr_assert_eq(rb_dyn_rnea(m, ws, t->q, t->nu, t->nu_dot, ext, ne, tau, &err), RB_OK, "%s", err.msg);
        for (size_t i = 0; i < 6; i++)
            r->id_err = fmax(r->id_err, fabs(tau[i]));
        for (size_t j = 0; j < t->n; j++)
            r->id_err = fmax(r->id_err, fabs(tau[6 + j] - t->tau_j[j]));
    } while ((rc = rb_sim_step(sim, &err)) == 1);
    cr_assert_eq(rc, 0, "%s", err.msg);
    rb_dyn_free(ws);
    rb_sim_finish(sim);
    rb_scenario_free(s);
}

static void run_free(slip_run *r) { free(r->t), free(r->foot), free(r->sv), free(r->sl), free(r->ratio), free(r->fn); }

static size_t sample_at(const slip_run *r, double t) { return (size_t)lround(t / r->dt); }

/* Samples with foot c slipping within [t0, t1]. */
static size_t slipping_in(const slip_run *r, int c, double t0, double t1)
{
    size_t n = 0;
    for (size_t k = sample_at(r, t0); k <= sample_at(r, t1) && k < r->n; k++)
        n += r->sl[2 * k + c];
    return n;
}

/* The furthest foot c got from where it stood. */
static double foot_travel(const slip_run *r, int c)
{
    double d = 0.0;
    for (size_t k = 0; k < r->n; k++)
        d = fmax(d, hypot(r->foot[4 * k + 2 * c] - r->foot[2 * c], r->foot[4 * k + 2 * c + 1] - r->foot[2 * c + 1]));
    return d;
}

#define LOW "{\"mu_s\": 0.1, \"mu_d\": 0.08}"
#define HARD 150.0 /* N: slips the low-friction floor */
#define MILD 40.0  /* N: the high-friction floor holds (both feet loaded) */
#define HIGH "{\"mu_s\": 1.0, \"mu_d\": 0.8}"

Test(sim_friction, high_friction_floor_never_slips)
{
    slip_run r;
    run("euler", MILD, HIGH, 1.0, 0.8, 0.0, &r);
    double peak = 0.0;
    for (size_t k = 0; k < r.n; k++)
        for (int c = 0; c < 2; c++) {
            cr_assert_eq(r.sl[2 * k + c], 0, "t = %g: foot %d slips", r.t[k], c);
            peak = fmax(peak, r.ratio[2 * k + c]);
        }
    cr_assert_gt(peak, 0.1, "the push loads the feet sideways (|f_t|/f_n %g)", peak);
    cr_assert_lt(peak, 1.0);
    for (size_t k = 0; k < r.n; k++)
        cr_assert_gt(r.fn[2 * k + 1], 20.0, "t = %g: the -y foot unloads", r.t[k]);
    for (int c = 0; c < 2; c++)
        cr_assert_lt(foot_travel(&r, c), 1e-6, "foot %d moved %g m", c, foot_travel(&r, c));
    cr_assert_lt(r.id_err, 1e-7, "RNEA identity %g", r.id_err);
    run_free(&r);
}

Test(sim_friction, low_friction_floor_slips_under_the_push_and_sticks_again)
{
    slip_run r;
    run("euler", HARD, LOW, 0.1, 0.08, 0.0, &r);
    for (int c = 0; c < 2; c++) {
        /* slipping at the end of the push, stuck before it and at the end */
        cr_assert_gt(slipping_in(&r, c, PUSH_END - 0.1, PUSH_END), 50, "foot %d", c);
        cr_assert_eq(slipping_in(&r, c, 0.0, PUSH_START), 0, "foot %d", c);
        cr_assert_eq(slipping_in(&r, c, 1.8, 2.0), 0, "foot %d slips to the end", c);
        /* sideways (+y) by about a third of a metre, by the integral of its slip velocity: semi-implicit Euler
         * moves the frame by dt times the velocity of the next sample */
        double ix = 0.0, iy = 0.0, dx = r.foot[4 * (r.n - 1) + 2 * c] - r.foot[2 * c],
               dy = r.foot[4 * (r.n - 1) + 2 * c + 1] - r.foot[2 * c + 1];
        for (size_t k = 1; k < r.n; k++)
            ix += r.dt * r.sv[4 * k + 2 * c], iy += r.dt * r.sv[4 * k + 2 * c + 1];
        cr_assert_gt(dy, 0.2, "foot %d slid %g m", c, dy);
        cr_assert_lt(fabs(dx), 0.05, "foot %d: %g m along x", c, dx);
        cr_assert_lt(hypot(dx - ix, dy - iy), 2e-3 * hypot(dx, dy), "foot %d: moved (%g, %g), slip integral (%g, %g)",
                     c, dx, dy, ix, iy);
        /* the foot stops: still over the last 0.2 s */
        size_t k0 = sample_at(&r, 1.8);
        for (size_t k = k0; k < r.n; k++)
            cr_assert_lt(hypot(r.foot[4 * k + 2 * c] - r.foot[4 * k0 + 2 * c],
                               r.foot[4 * k + 2 * c + 1] - r.foot[4 * k0 + 2 * c + 1]),
                         1e-5, "foot %d at %g s", c, r.t[k]);
    }
    /* kinetic friction: |f_t| = mu_d f_n while slipping */
    cr_assert_lt(r.mu_err, 1e-9, "|f_t| / f_n - mu_d: %g", r.mu_err);
    cr_assert_lt(r.id_err, 1e-7, "RNEA identity while slipping %g", r.id_err);
    run_free(&r);
}

Test(sim_friction, a_low_friction_patch_slips_only_where_it_lies)
{
    /* the high-friction floor and the mild push; a low-friction patch under the right (-y) foot only: it slips, the
     * left one holds */
    slip_run r;
    run("euler", MILD,
        "{\"mu_s\": 1.0, \"mu_d\": 0.8, \"patches\": [{\"min\": [-0.3, -0.5], \"max\": [0.3, 0.0], \"mu_s\": 0.1, "
        "\"mu_d\": 0.08}]}",
        0.1, 0.08, 0.0, &r);
    cr_assert_gt(slipping_in(&r, 1, PUSH_START, PUSH_END), 50);
    cr_assert_gt(foot_travel(&r, 1), 0.01, "right foot %g m", foot_travel(&r, 1));
    cr_assert_eq(slipping_in(&r, 0, 0.0, 2.0), 0);
    cr_assert_lt(foot_travel(&r, 0), 1e-6);
    cr_assert_lt(r.mu_err, 1e-9);
    cr_assert_lt(r.id_err, 1e-7, "RNEA identity %g", r.id_err);
    run_free(&r);
    /* the same patch away from the feet: nothing slips */
    run("euler", MILD,
        "{\"mu_s\": 1.0, \"mu_d\": 0.8, \"patches\": [{\"min\": [1.0, -0.5], \"max\": [2.0, 0.0], \"mu_s\": 0.1, "
        "\"mu_d\": 0.08}]}",
        1.0, 0.8, 0.0, &r);
    for (int c = 0; c < 2; c++) {
        cr_assert_eq(slipping_in(&r, c, 0.0, 2.0), 0);
        cr_assert_lt(foot_travel(&r, c), 1e-6);
    }
    run_free(&r);
}

/* A contact's own coefficients replace the floor's; a patch where the contact stands replaces both. */
Test(sim_friction, contact_coefficients_and_their_precedence)
{
    slip_run r;
    run("euler", MILD, "{\"mu_s\": 1.0, \"mu_d\": 0.8, \"contacts\": {\"r_sole\": {\"mu_s\": 0.1, \"mu_d\": 0.08}}}",
        0.1, 0.08, 0.0, &r);
    cr_assert_gt(slipping_in(&r, 1, PUSH_START, PUSH_END), 50);
    cr_assert_eq(slipping_in(&r, 0, 0.0, 2.0), 0);
    cr_assert_lt(r.mu_err, 1e-9);
    run_free(&r);
    run("euler", MILD,
        "{\"mu_s\": 1.0, \"mu_d\": 0.8, \"contacts\": {\"r_sole\": {\"mu_s\": 0.1, \"mu_d\": 0.08}},"
        " \"patches\": [{\"min\": [-0.3, -0.5], \"max\": [0.3, 0.0], \"mu_s\": 2.0, \"mu_d\": 1.5}]}",
        2.0, 1.5, 0.0, &r);
    for (int c = 0; c < 2; c++)
        cr_assert_eq(slipping_in(&r, c, 0.0, 2.0), 0, "foot %d", c);
    run_free(&r);
    /* the coefficients in effect, in the truth */
    rb_scenario *s = load_floor(
        "euler", 0.0, "{\"mu_s\": 0.7, \"contacts\": {\"r_sole\": {\"mu_s\": 0.3, \"mu_d\": 0.2, \"v_s\": 0.01}}}");
    rb_sim *sim = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(&s->sim, &sim, &err), RB_OK, "%s", err.msg);
    const rb_sim_contact_truth *ct = rb_sim_contact_truth_get(sim);
    cr_assert_eq(ct->mu_s[0], 0.7);
    cr_assert_eq(ct->mu_d[0], 0.7); /* mu_d defaults to mu_s */
    cr_assert_eq(ct->mu_s[1], 0.3);
    cr_assert_eq(ct->mu_d[1], 0.2);
    rb_sim_finish(sim);
    rb_scenario_free(s);
    s = load_floor("euler", 0.0, "{\"patches\": [{\"min\": [5, 5], \"max\": [6, 6], \"mu_d\": 0.2}]}");
    cr_assert(isinf(s->sim.floor.coef.mu_s) && isinf(s->sim.floor.coef.mu_d), "no limit outside the patches");
    cr_assert_eq(s->sim.floor.patches[0].coef.mu_s, 0.2); /* mu_s defaults to mu_d */
    cr_assert_eq(s->sim.floor.v_stick, 1e-3);
    rb_scenario_free(s);
}

Test(sim_friction, the_friction_ratio_follows_the_stribeck_curve)
{
    slip_run r;
    run("euler", HARD, "{\"mu_s\": 0.12, \"mu_d\": 0.05, \"v_s\": 0.1}", 0.12, 0.05, 0.1, &r);
    double lo = INFINITY, hi = 0.0;
    size_t n = 0;
    for (size_t k = 0; k < r.n; k++)
        for (int c = 0; c < 2; c++)
            if (r.sl[2 * k + c] && r.fn[2 * k + c] > 0) {
                double v = hypot(r.sv[4 * k + 2 * c], r.sv[4 * k + 2 * c + 1]);
                cr_assert_float_eq(r.ratio[2 * k + c], stribeck(0.12, 0.05, 0.1, v), 1e-12, "t = %g, v = %g", r.t[k],
                                   v);
                lo = fmin(lo, r.ratio[2 * k + c]), hi = fmax(hi, r.ratio[2 * k + c]);
                n++;
            }
    cr_assert_gt(n, 200);
    /* the run covers the curve: near mu_s at the start of the slip, near mu_d at speed */
    cr_assert_gt(hi, 0.115, "highest ratio %g", hi);
    cr_assert_lt(lo, 0.06, "lowest ratio %g", lo);
    cr_assert_lt(r.mu_err, 1e-9);
    cr_assert_lt(r.id_err, 1e-7, "RNEA identity %g", r.id_err);
    rb_sim_friction_coef c = {0.12, 0.05, 0.1};
    cr_assert_float_eq(rb_sim_friction_mu(&c, 0.05), stribeck(0.12, 0.05, 0.1, 0.05), 1e-15);
    run_free(&r);
}

Test(sim_friction, rk4_slips_as_euler_does)
{
    slip_run e, k;
    run("euler", HARD, LOW, 0.1, 0.08, 0.0, &e);
    run("rk4", HARD, LOW, 0.1, 0.08, 0.0, &k);
    for (int c = 0; c < 2; c++) {
        double de = e.foot[4 * (e.n - 1) + 2 * c + 1] - e.foot[2 * c + 1];
        double dk = k.foot[4 * (k.n - 1) + 2 * c + 1] - k.foot[2 * c + 1];
        cr_assert_gt(slipping_in(&k, c, PUSH_END - 0.1, PUSH_END), 50);
        cr_assert_eq(slipping_in(&k, c, 1.8, 2.0), 0);
        cr_assert_lt(fabs(de - dk), 0.02 * de, "foot %d: euler %g m, rk4 %g m", c, de, dk);
    }
    cr_assert_lt(k.mu_err, 1e-9);
    cr_assert_lt(k.id_err, 1e-7);
    run_free(&e), run_free(&k);
}

/* Two runs with slipping give the same bytes; the steps allocate nothing. */
static void bytes_run(double *buf, size_t per, long *allocs, long *c_allocs)
{
    rb_scenario *s = load_floor("euler", HARD, "{\"mu_s\": 0.12, \"mu_d\": 0.05, \"v_s\": 0.1}");
    rb_sim *sim = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(&s->sim, &sim, &err), RB_OK, "%s", err.msg);
    const rb_sim_truth *t = rb_sim_truth_get(sim);
    const rb_sim_contact_truth *ct = rb_sim_contact_truth_get(sim);
    size_t slipping = 0;
    test_alloc_count_init();
    rb_alloc_fail_after(-1);
    test_alloc_count = 0;
    test_alloc_counting = 1;
    for (size_t k = 0; k < 1500; k++) {
        double *o = buf + k * per;
        memcpy(o, t->q, t->nq * sizeof *o), o += t->nq;
        memcpy(o, t->nu_dot, t->nv * sizeof *o), o += t->nv;
        memcpy(o, t->contact_wrench, 12 * sizeof *o), o += 12;
        memcpy(o, ct->slip_velocity, 4 * sizeof *o), o += 4;
        memcpy(o, ct->friction_ratio, 2 * sizeof *o);
        slipping += ct->slipping[0];
        if (rb_sim_step(sim, &err) != 1)
            cr_assert_fail("%s", err.msg);
    }
    test_alloc_counting = 0;
    *allocs = rb_alloc_fail_after(-1);
    *c_allocs = test_alloc_count;
    cr_assert_gt(slipping, 100);
    rb_sim_finish(sim);
    rb_scenario_free(s);
}

Test(sim_friction, deterministic_and_allocation_free)
{
    size_t per = 64; /* q 22, nu_dot 21, wrenches 12, slip velocities 4, ratios 2 */
    double *a = calloc(1500 * per, sizeof *a), *b = calloc(1500 * per, sizeof *b);
    long ra, ca, rb, cb;
    bytes_run(a, per, &ra, &ca);
    bytes_run(b, per, &rb, &cb);
    cr_assert_eq(memcmp(a, b, 1500 * per * sizeof *a), 0);
    cr_assert_eq(ra, 0, "rb_malloc calls during steps: %ld", ra);
    if (test_alloc_count_works())
        cr_assert_eq(ca, 0, "C-library allocations during steps: %ld", ca);
    free(a), free(b);
}

/* ---- errors ---- */
static void expect_error(const char *floor, const char *message)
{
    char text[8192];
    snprintf(text, sizeof text, SCENARIO, "euler", 0.0, 0.0, ",\n \"floor\": ", floor);
    rb_scenario *s = (rb_scenario *)1;
    rb_err err;
    int rc = rb_scenario_load_text(text, strlen(text), "slip.json", BASE, &s, &err);
    cr_assert_eq(rc, RB_ECONFIG, "rc %d: %s", rc, rc ? err.msg : "");
    cr_assert_null(s);
    cr_assert(strstr(err.msg, message), "got '%s', expected '%s'", err.msg, message);
    cr_assert_null(strchr(err.msg, '\n'));
}

Test(sim_friction, static_below_kinetic_is_rejected_naming_the_key)
{
    expect_error("{\"mu_s\": 0.1, \"mu_d\": 0.2}",
                 "floor.mu_s: the static coefficient mu_s (0.1) must be >= the kinetic");
    expect_error("{\"mu_s\": 0.5, \"patches\": [{\"min\": [0, 0], \"max\": [1, 1], \"mu_s\": 0.05, \"mu_d\": 0.1}]}",
                 "floor.patches[0].mu_s: the static coefficient mu_s (0.05)");
    expect_error("{\"contacts\": {\"r_sole\": {\"mu_s\": 0.2, \"mu_d\": 0.3}}}", "floor.contacts.r_sole.mu_s");
    expect_error("{\"mu_d\": -0.1}", "floor.mu_d");
    expect_error("{\"v_stick\": 0}", "floor.v_stick");
    expect_error("{\"contacts\": {\"l_soel\": {\"mu_s\": 0.2}}}", "did you mean 'l_sole'");
    expect_error("{\"mu\": 0.2}", "floor: unknown key 'mu'");
    /* the library's own check */
    rb_scenario *s = load_floor("euler", 0.0, LOW);
    rb_sim_scenario sc = s->sim;
    sc.floor.coef.mu_d = 0.3;
    rb_sim *sim = (rb_sim *)1;
    rb_err err;
    cr_assert_eq(rb_sim_init(&sc, &sim, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "floor: mu_s (0.1) must be >= mu_d (0.3)"), "%s", err.msg);
    rb_scenario_free(s);
}

Test(sim_friction, inverted_patch_corners_are_rejected)
{
    expect_error("{\"patches\": [{\"min\": [1, 0], \"max\": [0, 1], \"mu_s\": 0.1}]}",
                 "floor.patches[0].max: must be > min in x and y (got min [1, 0], max [0, 1]: inverted corners?)");
    expect_error("{\"patches\": [{\"min\": [0, 0], \"max\": [1, 1]}, {\"min\": [0, 2], \"max\": [1, 2]}]}",
                 "floor.patches[1].max: must be > min");
    expect_error("{\"patches\": [{\"max\": [1, 1]}]}", "floor.patches[0].min: missing");
    rb_scenario *s = load_floor("euler", 0.0, LOW);
    rb_sim_scenario sc = s->sim;
    rb_sim_floor_patch p = {{0, 0}, {-1, 1}, {0.1, 0.1, 0}};
    sc.floor.patches = &p, sc.floor.n_patches = 1;
    rb_sim *sim = (rb_sim *)1;
    rb_err err;
    cr_assert_eq(rb_sim_init(&sc, &sim, &err), RB_ECONFIG);
    cr_assert(strstr(err.msg, "floor patch 0: min must be < max"), "%s", err.msg);
    rb_scenario_free(s);
}

Test(sim_friction, no_floor_no_friction_truth)
{
    rb_scenario *s = load_floor("euler", HARD, NULL);
    cr_assert(!s->sim.floor.enabled);
    rb_sim *sim = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(&s->sim, &sim, &err), RB_OK, "%s", err.msg);
    cr_assert_null(rb_sim_contact_truth_get(sim));
    rb_sim_finish(sim);
    rb_scenario_free(s);
}
