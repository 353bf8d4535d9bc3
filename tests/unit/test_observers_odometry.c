/* Legged odometry (roboest/observers.h, rb_lodo) on the simulator: the humanoid of
 * configs/scenarios/humanoid_balance.json standing on both feet (rigid 6D contacts, Baumgarte T = 0.02 s) with its
 * CoM sway, driven sample by sample (rb_sim_init / rb_sim_step); the estimate against the simulator's truth and
 * against independent computations (the full BODY Jacobians of the dynamics module and LAPACK's least squares,
 * finite differences of the estimated pose). */
#include <criterion/criterion.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "alloc_count.h"
#include "roboest/dynamics.h"
#include "roboest/observers.h"
#include "roboest/sim.h"

#define BALANCE RB_SOURCE "/configs/scenarios/humanoid_balance.json"
#define MAXF 2

typedef struct run_cfg {
    double duration;
    const rb_sim_contact_event *events;
    size_t n_events;
    rb_lodo_source source;
    double force_on, force_off;
    /* samples in [flight_from, flight_to) get all-zero contact flags (a fake flight; 0, 0: none) */
    size_t flight_from, flight_to;
} run_cfg;

typedef struct sample {
    double t, pos[3], quat[4], twist[6], slip[MAXF];
    double true_pos[3], true_R[9], true_twist[6];
    double ls_twist[6]; /* truth twist minus the least-squares correction of the true feet velocities */
    double foot_speed;  /* the largest true speed of a stance foot's origin, m/s */
    unsigned char stance[MAXF], active[MAXF];
    bool flight;
} sample;

typedef struct run_out {
    size_t n;
    sample *s;
    double max_foot_speed; /* of the truth's stance feet (Baumgarte drift), m/s */
    long allocs;
    rb_lodo_diag diag;
} run_out;

static double dist3(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

static double max_abs_diff(const double *a, const double *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

/* Rotation angle between a quaternion and a rotation matrix, rad. */
static double angle_to(const double q[4], const double R[9])
{
    double Rq[9], D[9];
    rb_m3_from_quat(q, Rq);
    rb_m3t_mul(Rq, R, D);
    double c = (D[0] + D[4] + D[8] - 1) / 2;
    return acos(fmax(-1, fmin(1, c)));
}

/* Independent of the estimator: the base twist that zeroes the stance feet's BODY velocity in the least-squares
 * sense, from the truth twist and the true feet velocities v (full BODY Jacobians, LAPACK dgels):
 * nu_B = nu_B,true - argmin |J_base d - v|. */
static void ls_correction(const rb_model *m, rb_dyn *ws, const rb_sim_truth *tr, const int *feet,
                          const unsigned char *stance, double out[6], double *max_speed)
{
    rb_err err;
    cr_assert_eq(rb_dyn_kinematics(m, ws, tr->q, tr->nu, NULL, &err), RB_OK, "%s", err.msg);
    double J[6 * 64], A[12 * 6], b[12];
    size_t rows = 0;
    for (size_t i = 0; i < MAXF; i++) {
        if (!stance[i])
            continue;
        rb_mat Jm = {6, m->nv, m->nv, J};
        cr_assert_eq(rb_dyn_frame_jacobian(m, ws, (size_t)feet[i], RB_DYN_BODY, &Jm, &err), RB_OK, "%s", err.msg);
        double v[6];
        cr_assert_eq(rb_dyn_frame_velocity(m, ws, (size_t)feet[i], RB_DYN_BODY, v, &err), RB_OK, "%s", err.msg);
        *max_speed = fmax(*max_speed, sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
        for (int r = 0; r < 6; r++, rows++) {
            for (int c = 0; c < 6; c++)
                A[rows * 6 + (size_t)c] = J[(size_t)r * m->nv + (size_t)c];
            b[rows] = v[r];
        }
    }
    memcpy(out, tr->base_twist, 6 * sizeof(double));
    if (!rows)
        return;
    cr_assert_eq(LAPACKE_dgels(LAPACK_ROW_MAJOR, 'N', (lapack_int)rows, 6, 1, A, 6, b, 1), 0);
    for (int a = 0; a < 6; a++)
        out[a] -= b[a];
}

static rb_scenario *load_balance(void)
{
    rb_scenario *s = NULL;
    rb_err err;
    cr_assert_eq(rb_scenario_load(BALANCE, &s, &err), RB_OK, "%s", err.msg);
    return s;
}

static void feet_of(const rb_model *m, int feet[MAXF])
{
    const char *names[MAXF] = {"l_sole", "r_sole"};
    for (int i = 0; i < MAXF; i++) {
        long f = rb_model_frame_index(m, names[i]);
        cr_assert(f >= 0, "no frame %s", names[i]);
        feet[i] = (int)f;
    }
}

static run_out run(const run_cfg *rc, bool count_allocs)
{
    rb_scenario *scn = load_balance();
    const rb_model *m = scn->model;
    cr_assert_eq(scn->sim.n_contacts, MAXF);
    rb_sim_scenario sc = scn->sim;
    sc.duration = rc->duration;
    sc.truth_on_demand = true;
    sc.events = rc->events, sc.n_events = rc->n_events;
    rb_sim *sim = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(&sc, &sim, &err), RB_OK, "%s", err.msg);
    int feet[MAXF];
    feet_of(m, feet);
    const rb_sim_truth *tr = rb_sim_truth_get(sim);
    rb_lodo_config c;
    rb_lodo_config_init(&c);
    c.feet = feet, c.n_feet = MAXF, c.source = rc->source;
    if (rc->force_on > 0)
        c.force_on = rc->force_on, c.force_off = rc->force_off;
    c.base0 = tr->base_pose;
    rb_lodo *e = NULL;
    cr_assert_eq(rb_lodo_alloc(m, &c, &e, &err), RB_OK, "%s", err.msg);
    rb_dyn *ws = NULL;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    size_t cap = (size_t)(rc->duration / sc.dt) + 3;
    run_out out = {0};
    out.s = calloc(cap, sizeof *out.s);
    cr_assert_not_null(out.s);
    if (count_allocs)
        test_alloc_count_init();
    for (size_t k = 0;; k++) {
        cr_assert(k < cap);
        sample *sp = &out.s[k];
        double flags[MAXF];
        for (int i = 0; i < MAXF; i++) {
            sp->active[i] = tr->contact_active[i];
            flags[i] = (k >= rc->flight_from && k < rc->flight_to) ? 0 : tr->contact_active[i];
        }
        const double *contact = rc->source == RB_LODO_FLAGS ? flags : tr->contact_wrench;
        if (count_allocs) {
            test_alloc_count = 0;
            test_alloc_counting = 1;
        }
        int rcode = rb_lodo_step(e, k, tr->t, tr->s, tr->s_dot, contact, &err);
        if (count_allocs) {
            test_alloc_counting = 0;
            out.allocs += test_alloc_count;
        }
        cr_assert_eq(rcode, RB_OK, "%s", err.msg);
        rb_lodo_out o;
        rb_lodo_get_out(e, &o);
        sp->t = tr->t;
        memcpy(sp->pos, o.position, sizeof sp->pos);
        memcpy(sp->quat, o.orientation, sizeof sp->quat);
        memcpy(sp->twist, o.twist, sizeof sp->twist);
        memcpy(sp->slip, o.slip, sizeof sp->slip);
        memcpy(sp->stance, o.stance, sizeof sp->stance);
        sp->flight = o.flight;
        memcpy(sp->true_pos, tr->base_pose.p, sizeof sp->true_pos);
        memcpy(sp->true_R, tr->base_pose.R, sizeof sp->true_R);
        memcpy(sp->true_twist, tr->base_twist, sizeof sp->true_twist);
        ls_correction(m, ws, tr, feet, tr->contact_active, sp->ls_twist, &sp->foot_speed);
        out.max_foot_speed = fmax(out.max_foot_speed, sp->foot_speed);
        out.n = k + 1;
        int r = rb_sim_step(sim, &err);
        cr_assert(r >= 0, "%s", err.msg);
        if (r == 0)
            break;
    }
    rb_lodo_get_diag(e, &out.diag);
    rb_dyn_free(ws);
    rb_lodo_free(e);
    rb_sim_finish(sim);
    rb_scenario_free(scn);
    return out;
}

/* Largest errors over samples [from, to). */
typedef struct errs {
    double twist, twist_v, twist_w, ls, pos, ang;
} errs;

static errs errors(const run_out *o, size_t from, size_t to)
{
    errs e = {0};
    for (size_t k = from; k < to && k < o->n; k++) {
        const sample *s = &o->s[k];
        e.twist = fmax(e.twist, max_abs_diff(s->twist, s->true_twist, 6));
        e.twist_v = fmax(e.twist_v, max_abs_diff(s->twist, s->true_twist, 3));
        e.twist_w = fmax(e.twist_w, max_abs_diff(s->twist + 3, s->true_twist + 3, 3));
        e.ls = fmax(e.ls, max_abs_diff(s->twist, s->ls_twist, 6));
        e.pos = fmax(e.pos, dist3(s->pos, s->true_pos));
        e.ang = fmax(e.ang, angle_to(s->quat, s->true_R));
    }
    return e;
}

Test(observers_odometry, two_feet_twist_and_pose_follow_the_truth)
{
    run_cfg rc = {.duration = 4.0};
    run_out o = run(&rc, false);
    errs e = errors(&o, 0, o.n);
    double vmax = 0;
    for (size_t k = 0; k < o.n; k++)
        vmax = fmax(vmax, fabs(o.s[k].true_twist[1]));
    cr_log_info("two feet, %zu samples: twist err %.3g (v %.3g m/s, w %.3g rad/s), true |v_y| max %.3g m/s, "
                "true feet speed max %.3g m/s; vs the independent LS %.3g; pose %.3g m, %.3g rad",
                o.n, e.twist, e.twist_v, e.twist_w, vmax, o.max_foot_speed, e.ls, e.pos, e.ang);
    /* The sway moves the base: the comparison is not between zeros. */
    cr_assert(vmax > 1e-3, "the base hardly moves: %g m/s", vmax);
    /* The estimate is exactly the twist that stops both feet: it equals the truth up to the truth's own feet
     * velocities (Baumgarte drift) mapped through the least squares, computed independently. */
    cr_expect(e.ls < 1e-9, "estimate vs truth minus the LS of the true feet velocities: %g", e.ls);
    /* The truth's feet move by the Baumgarte drift only (measured 2.9e-6 m/s at most over the 4 s sway): the
     * twist error is that velocity mapped to the base by the least squares (measured: 0.98 times it for v, 0.28 /m
     * for w); 3 times it is the bound. The pose follows the feet, which the Baumgarte terms hold within microns of their poses. */
    cr_expect(o.max_foot_speed < 1e-5, "truth feet speed %g m/s", o.max_foot_speed);
    cr_expect(e.twist_v < 3 * o.max_foot_speed + 1e-12 && e.twist_w < 3 * o.max_foot_speed + 1e-12,
              "twist error v %g m/s, w %g rad/s against feet speed %g m/s", e.twist_v, e.twist_w, o.max_foot_speed);
    cr_expect(e.pos < 1e-6 && e.ang < 1e-6, "pose error %g m, %g rad", e.pos, e.ang);
    for (size_t k = 0; k < o.n; k++)
        cr_assert(o.s[k].stance[0] && o.s[k].stance[1] && !o.s[k].flight, "sample %zu: stance", k);
    free(o.s);
}

/* The right foot's contact switched off at 0.3 s and on again at 0.7 s (contact events): the left foot alone
 * carries the estimate, exactly (6 equations, 6 unknowns), and the right foot touching down is recorded. */
static const rb_sim_contact_event LIFT[] = {{.t = 0.3, .contact = 1, .active = false},
                                            {.t = 0.7, .contact = 1, .active = true}};

Test(observers_odometry, one_foot_lifted_works_from_the_other)
{
    run_cfg rc = {.duration = 1.0, .events = LIFT, .n_events = 2};
    run_out o = run(&rc, false);
    size_t off = 0;
    double moved = 0;
    for (size_t k = 0; k < o.n; k++) {
        const sample *s = &o.s[k];
        cr_assert_eq(s->stance[1], s->active[1], "sample %zu: stance %d, truth %d", k, s->stance[1], s->active[1]);
        cr_assert(s->stance[0] && !s->flight);
        if (!s->stance[1]) {
            off++;
            cr_assert(isnan(s->slip[1]), "sample %zu: slip of a swing foot %g", k, s->slip[1]);
            /* one foot: the solution stops it exactly */
            cr_assert(s->slip[0] < 1e-12, "sample %zu: one-foot slip %g", k, s->slip[0]);
        }
    }
    errs one = errors(&o, 300, 700), before = errors(&o, 0, 700), after = errors(&o, 700, o.n),
         end = errors(&o, o.n - 50, o.n), all = errors(&o, 0, o.n);
    double ratio = 0;
    for (size_t k = 300; k < 700; k++)
        moved = fmax(moved, max_abs_diff(o.s[k].true_twist, o.s[299].true_twist, 6));
    for (size_t k = 0; k < o.n; k++)
        ratio = fmax(ratio, max_abs_diff(o.s[k].twist, o.s[k].true_twist, 6) / (o.s[k].foot_speed + 1e-12));
    cr_log_info(
        "one foot for %zu samples: twist err %.3g (v %.3g, w %.3g), pose %.3g m %.3g rad; before the "
        "touchdown: pose %.3g m; after it: twist %.3g, pose %.3g m %.3g rad, last 50 samples %.3g m; vs LS %.3g; "
        "truth feet speed max %.3g m/s; twist error / feet speed max %.3g; touchdowns %ld",
        off, one.twist, one.twist_v, one.twist_w, one.pos, one.ang, before.pos, after.twist, after.pos, after.ang,
        end.pos, all.ls, o.max_foot_speed, ratio, o.diag.touchdowns);
    cr_expect_eq(off, 400);
    cr_expect(moved > 1e-3, "the base twist hardly changes with one foot: %g", moved);
    /* on every sample, touchdown transient included: the LS of the true feet velocities, computed apart */
    cr_expect(all.ls < 1e-9, "estimate vs truth minus the LS of the true feet velocities: %g", all.ls);
    cr_expect(ratio < 3, "twist error up to %g times the true feet speed", ratio);
    cr_expect(one.twist < 1e-5 && before.pos < 1e-6 && before.ang < 1e-6, "one foot: twist %g, pose %g m %g rad",
              one.twist, before.pos, before.ang);
    /* the right foot lands moving (the truth's contact holds it where it is at 0.7 s and the Baumgarte terms stop
     * it over ~T = 0.02 s): while it settles, the average of the two feet's base poses carries its motion */
    cr_expect(after.pos < 2e-4 && after.ang < 1e-4, "after the touchdown: pose %g m, %g rad", after.pos, after.ang);
    cr_expect(end.pos < 1e-6, "settled again (0.95-1 s): pose %g m", end.pos);
    cr_expect_eq(o.diag.touchdowns, 3, "touchdowns %ld (2 at the start, 1 at 0.7 s)", o.diag.touchdowns);
    free(o.s);
}

/* Contact from the truth's contact wrenches (MIXED, f_z world vertical) with hysteresis gives the flags' stance. */
Test(observers_odometry, wrenches_give_the_stance_of_the_flags)
{
    run_cfg rf = {.duration = 1.0, .events = LIFT, .n_events = 2};
    run_cfg rw = rf;
    rw.source = RB_LODO_WRENCHES, rw.force_on = 40, rw.force_off = 20;
    run_out a = run(&rf, false), b = run(&rw, false);
    cr_assert_eq(a.n, b.n);
    size_t differ = 0, last_differ = 0;
    for (size_t k = 0; k < a.n; k++) {
        bool same = a.s[k].stance[0] == b.s[k].stance[0] && a.s[k].stance[1] == b.s[k].stance[1];
        if (!same) {
            differ++, last_differ = k;
            continue;
        }
        cr_assert(max_abs_diff(a.s[k].twist, b.s[k].twist, 6) == 0, "sample %zu", k);
    }
    cr_log_info("wrench stance differs from the flags on %zu samples, the last %zu", differ, last_differ);
    /* the wrench builds up after the touchdown at 0.7 s: a few samples late, never early, never elsewhere */
    cr_expect(differ <= 10 && (differ == 0 || (last_differ >= 700 && last_differ < 700 + differ)),
              "%zu samples differ, the last %zu", differ, last_differ);
    free(a.s), free(b.s);
}

/* Hysteresis on f_z with synthetic wrenches (joints still): enters above force_on, leaves below force_off. */
Test(observers_odometry, wrench_hysteresis)
{
    rb_scenario *scn = load_balance();
    int feet[MAXF];
    feet_of(scn->model, feet);
    rb_lodo_config c;
    rb_lodo_config_init(&c);
    c.feet = feet, c.n_feet = 1, c.source = RB_LODO_WRENCHES, c.force_on = 50, c.force_off = 25;
    rb_lodo *e = NULL;
    rb_err err;
    cr_assert_eq(rb_lodo_alloc(scn->model, &c, &e, &err), RB_OK, "%s", err.msg);
    double s[32] = {0}, fz[] = {0, 30, 60, 30, 26, 24, 30, 51, NAN, 10};
    unsigned char want[] = {0, 0, 1, 1, 1, 0, 0, 1, 1, 0};
    for (size_t k = 0; k < sizeof fz / sizeof fz[0]; k++) {
        double w[6] = {0, 0, fz[k], 0, 0, 0};
        cr_assert_eq(rb_lodo_step(e, k, 0.01 * (double)k, s, s, w, &err), RB_OK, "%s", err.msg);
        rb_lodo_out o;
        rb_lodo_get_out(e, &o);
        cr_expect_eq(o.stance[0], want[k], "sample %zu: f_z %g: stance %d", k, fz[k], o.stance[0]);
        cr_expect_eq(o.flight, !want[k]);
    }
    rb_lodo_free(e);
    rb_scenario_free(scn);
}

/* Every foot off for 50 samples (flags zeroed while the truth keeps both feet down): the flight flag, the last
 * twist held, the pose integrating it; back on the feet the twist is the truth's again, the pose keeps the
 * offset the flight made. */
Test(observers_odometry, flight_integrates_the_last_twist)
{
    run_cfg rc = {.duration = 0.5, .flight_from = 200, .flight_to = 250};
    run_out o = run(&rc, false);
    const sample *last = &o.s[199];
    for (size_t k = 200; k < 250; k++) {
        const sample *s = &o.s[k];
        cr_assert(s->flight && !s->stance[0] && !s->stance[1], "sample %zu", k);
        cr_assert(max_abs_diff(s->twist, last->twist, 6) == 0, "sample %zu: twist changed", k);
    }
    /* constant body twist: 50 steps of exp(dt nu) are exp(50 dt nu); its linear part for a small w */
    const sample *f = &o.s[249];
    double R[9], dp[3], v_world[3];
    rb_m3_from_quat(last->quat, R);
    rb_m3_mul_v(R, last->twist, v_world);
    for (int a = 0; a < 3; a++)
        dp[a] = f->pos[a] - last->pos[a];
    double T = f->t - last->t;
    cr_expect(fabs(T - 0.05) < 1e-9, "T %g", T);
    for (int a = 0; a < 3; a++)
        cr_expect(fabs(dp[a] - T * v_world[a]) < 1e-6, "axis %d: moved %g, v T %g", a, dp[a], T * v_world[a]);
    errs after = errors(&o, 251, o.n);
    cr_log_info("flight 50 samples: moved %.3g m; after: twist err %.3g, pose err %.3g m; flight count %ld",
                dist3(f->pos, last->pos), after.twist, after.pos, o.diag.flight);
    cr_expect_eq(o.diag.flight, 50);
    cr_expect(after.twist < 1e-5, "twist after the flight %g", after.twist);
    free(o.s);
}

/* Independent of the truth: the estimated pose's increments are the estimated twist integrated the way the
 * simulator integrates (semi-implicit Euler: q_{k+1} = q_k (+) dt nu_{k+1}, rb_dyn_integrate), i.e. the pose and
 * the twist, computed by different routes (recorded feet poses; least squares over velocities), agree. Checked
 * where the feet are kinematically consistent (slip below 1e-6 m/s: not the touchdown transient of 0.7 s, where
 * the true right foot still moves while the Baumgarte terms stop it). */
Test(observers_odometry, pose_increments_give_the_twist)
{
    run_cfg rc = {.duration = 1.0, .events = LIFT, .n_events = 2};
    run_out o = run(&rc, false);
    rb_scenario *scn = load_balance();
    const rb_model *m = scn->model;
    double *q = calloc(m->nq, sizeof *q), *nu = calloc(m->nv, sizeof *nu);
    cr_assert(q && nu);
    double worst_p = 0, worst_a = 0, vmax = 0;
    size_t checked = 0;
    for (size_t k = 0; k + 1 < o.n; k++) {
        const sample *a = &o.s[k], *b = &o.s[k + 1];
        bool consistent = true;
        for (int i = 0; i < MAXF; i++)
            consistent = consistent && (!b->stance[i] || b->slip[i] < 1e-6) && a->stance[i] == b->stance[i];
        if (!consistent)
            continue;
        double dt = b->t - a->t;
        memcpy(q, a->pos, 3 * sizeof *q);
        memcpy(q + 3, a->quat, 4 * sizeof *q);
        memcpy(nu, b->twist, 6 * sizeof *nu);
        rb_dyn_integrate(m, q, nu, dt, q);
        double Rb[9];
        rb_m3_from_quat(b->quat, Rb);
        worst_p = fmax(worst_p, dist3(q, b->pos) / dt);
        worst_a = fmax(worst_a, angle_to(q + 3, Rb) / dt);
        vmax = fmax(vmax, fabs(b->twist[1]));
        checked++;
    }
    cr_log_info("pose increments vs the twist over %zu samples: %.3g m/s, %.3g rad/s (|v_y| up to %.3g m/s)", checked,
                worst_p, worst_a, vmax);
    cr_expect(checked > 700, "%zu samples checked", checked);
    cr_expect(vmax > 1e-3);
    cr_expect(worst_p < 5e-5 && worst_a < 5e-5, "pose increments vs the twist: %g m/s, %g rad/s", worst_p, worst_a);
    free(q), free(nu);
    rb_scenario_free(scn);
    free(o.s);
}

Test(observers_odometry, steps_allocate_nothing)
{
    if (!test_alloc_count_works())
        cr_skip_test("under valgrind C-library allocations are not counted");
    run_cfg rc = {.duration = 0.2, .events = LIFT, .n_events = 0, .flight_from = 50, .flight_to = 60};
    run_out o = run(&rc, true);
    cr_expect_eq(o.allocs, 0, "%ld allocations in %zu steps", o.allocs, o.n);
    rb_lodo_free(NULL);
    free(o.s);
}

Test(observers_odometry, config_errors_and_time)
{
    rb_scenario *scn = load_balance();
    const rb_model *m = scn->model;
    int feet[3];
    feet_of(m, feet);
    rb_lodo_config c;
    rb_lodo *e = NULL;
    rb_err err;
    struct {
        int case_id;
        const char *want;
    } cases[] = {{0, "no foot"}, {1, "listed twice"}, {2, "out of range"}, {3, "force_off"}, {4, "base0"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rb_lodo_config_init(&c);
        c.feet = feet, c.n_feet = 2;
        switch (cases[i].case_id) {
        case 0: c.n_feet = 0; break;
        case 1: feet[2] = feet[0], c.n_feet = 3; break;
        case 2: feet[2] = (int)m->n_frames, c.n_feet = 3; break;
        case 3: c.source = RB_LODO_WRENCHES, c.force_on = 10, c.force_off = 20; break;
        case 4: c.base0.p[1] = NAN; break;
        }
        cr_expect_eq(rb_lodo_alloc(m, &c, &e, &err), RB_ECONFIG, "case %d", cases[i].case_id);
        cr_expect_null(e);
        cr_expect(strstr(err.msg, cases[i].want) != NULL, "case %d: %s", cases[i].case_id, err.msg);
    }
    rb_model_opts mo = {.floating = false};
    rb_model *fixed = NULL;
    cr_assert_eq(rb_model_load_urdf(RB_SOURCE "/datasets/humanoid_lower_body.urdf", &mo, &fixed, &err), RB_OK);
    rb_lodo_config_init(&c);
    c.feet = feet, c.n_feet = 2;
    cr_expect_eq(rb_lodo_alloc(fixed, &c, &e, &err), RB_ECONFIG);
    cr_expect(strstr(err.msg, "floating") != NULL, "%s", err.msg);
    rb_model_free(fixed);
    cr_assert_eq(rb_lodo_alloc(m, &c, &e, &err), RB_OK, "%s", err.msg);
    double s[32] = {0}, flags[2] = {1, 1};
    cr_assert_eq(rb_lodo_step(e, 0, 1.0, s, s, flags, &err), RB_OK);
    cr_expect_eq(rb_lodo_step(e, 1, 1.0, s, s, flags, &err), RB_EINPUT);
    cr_expect(strstr(err.msg, "sample 1") != NULL && strstr(err.msg, "dt <= 0") != NULL, "%s", err.msg);
    rb_lodo_free(e);
    rb_scenario_free(scn);
}

/* Two stance feet that disagree (the left knee bent 0.02 rad while both feet are held): the base pose is the
 * average of the two implied ones, positions averaged, orientations at the geodesic midpoint (slerp 1/2),
 * computed here from the kinematics of the dynamics module; the LS leaves both feet slipping. */
Test(observers_odometry, two_disagreeing_feet_average)
{
    rb_scenario *scn = load_balance();
    const rb_model *m = scn->model;
    int feet[MAXF];
    feet_of(m, feet);
    rb_lodo_config c;
    rb_lodo_config_init(&c);
    c.feet = feet, c.n_feet = MAXF;
    rb_m3_from_rpy(0.1, -0.05, 0.3, c.base0.R);
    rb_v3_set(c.base0.p, 0.2, -0.1, 0.8);
    rb_lodo *e = NULL;
    rb_err err;
    cr_assert_eq(rb_lodo_alloc(m, &c, &e, &err), RB_OK, "%s", err.msg);
    size_t n = m->n_dofs;
    double *s = calloc(n, sizeof *s), *sd = calloc(n, sizeof *sd), *q = calloc(m->nq, sizeof *q), flags[2] = {1, 1};
    memcpy(s, scn->sim.q0 + 7, n * sizeof *s);
    long knee = rb_model_dof_index(m, "l_knee");
    cr_assert(knee >= 0);
    sd[knee] = 1.0;
    cr_assert_eq(rb_lodo_step(e, 0, 0, s, sd, flags, &err), RB_OK, "%s", err.msg);
    /* the feet's world poses, as recorded at the first sample */
    rb_dyn *ws = NULL;
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    rb_dyn_neutral(m, q);
    memcpy(q + 7, s, n * sizeof *s);
    cr_assert_eq(rb_dyn_kinematics(m, ws, q, NULL, NULL, &err), RB_OK);
    rb_xform XWF[MAXF], XBF, XFB, XWB[MAXF];
    for (int i = 0; i < MAXF; i++) {
        cr_assert_eq(rb_dyn_frame_pose(m, ws, (size_t)feet[i], &XBF, &err), RB_OK);
        rb_xform_compose(&c.base0, &XBF, &XWF[i]);
    }
    s[knee] += 0.02;
    cr_assert_eq(rb_lodo_step(e, 1, 0.001, s, sd, flags, &err), RB_OK, "%s", err.msg);
    memcpy(q + 7, s, n * sizeof *s);
    cr_assert_eq(rb_dyn_kinematics(m, ws, q, NULL, NULL, &err), RB_OK);
    for (int i = 0; i < MAXF; i++) {
        cr_assert_eq(rb_dyn_frame_pose(m, ws, (size_t)feet[i], &XBF, &err), RB_OK);
        rb_xform_inverse(&XBF, &XFB);
        rb_xform_compose(&XWF[i], &XFB, &XWB[i]);
    }
    double pmid[3], D[9], axis[3], Rh[9], Rmid[9];
    for (int a = 0; a < 3; a++)
        pmid[a] = (XWB[0].p[a] + XWB[1].p[a]) / 2;
    rb_m3t_mul(XWB[0].R, XWB[1].R, D);
    double ang = acos(fmax(-1, fmin(1, (D[0] + D[4] + D[8] - 1) / 2)));
    rb_v3_set(axis, D[7] - D[5], D[2] - D[6], D[3] - D[1]);
    double an = sqrt(rb_v3_dot(axis, axis));
    for (int a = 0; a < 3; a++)
        axis[a] /= an;
    rb_m3_from_axis_angle(axis, ang / 2, Rh);
    rb_m3_mul(XWB[0].R, Rh, Rmid);
    rb_lodo_out o;
    rb_lodo_get_out(e, &o);
    double gap = dist3(XWB[0].p, XWB[1].p);
    cr_log_info("feet disagree by %.3g m, %.3g rad: estimate vs the average %.3g m, %.3g rad; slip %.3g %.3g m/s", gap,
                ang, dist3(o.position, pmid), angle_to(o.orientation, Rmid), o.slip[0], o.slip[1]);
    cr_expect(gap > 1e-3 && ang > 1e-3, "the feet hardly disagree: %g m, %g rad", gap, ang);
    cr_expect(dist3(o.position, pmid) < 1e-12, "position %g from the average", dist3(o.position, pmid));
    cr_expect(angle_to(o.orientation, Rmid) < 1e-7, "orientation %g rad from the midpoint",
              angle_to(o.orientation, Rmid));
    cr_expect(o.slip[0] > 1e-3 && o.slip[1] > 1e-3, "slip %g %g", o.slip[0], o.slip[1]);
    free(s), free(sd), free(q);
    rb_dyn_free(ws);
    rb_lodo_free(e);
    rb_scenario_free(scn);
}
