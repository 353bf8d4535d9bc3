/* The walking gait (roboest/sim_gait.h): the thesis's schedule at its checkpoints, the preview controller's CoM
 * against its ZMP reference, the swing foot's spline and footholds, a whole walk of configs/scenarios/walk.json on
 * the 12-DoF biped (upright, CoM on the plan, stance feet still, contacts switched by the phase, the advance), the
 * truth's CoM velocity and acceleration and ZMP against other ways of computing them, determinism, bad keys. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"
#include "alloc_count.h"
#include "roboest/dynamics.h"
#include "roboest/sim.h"

#define WALK RB_SOURCE "/configs/scenarios/walk.json"

/* ---- schedule ------------------------------------------------------------------------------------------------ */

/* Thesis 4.4.1: DS -> LS at 0.5 s, LS -> DS at 1.1 s, DS -> RS at 2.0 s, the last LS ends at 10.1 s. */
Test(sim_gait, the_phase_schedule_is_the_theses)
{
    rb_sim_gait g = rb_sim_gait_defaults();
    cr_assert_eq(rb_gait_n_steps(&g), 7);
    static const struct {
        double t;
        rb_gait_phase ph;
    } at[] = {{0.0, RB_GAIT_DS},    {0.499, RB_GAIT_DS}, {0.5, RB_GAIT_LS},  {1.099, RB_GAIT_LS},
              {1.1, RB_GAIT_DS},    {1.999, RB_GAIT_DS}, {2.0, RB_GAIT_RS},  {2.599, RB_GAIT_RS},
              {2.6, RB_GAIT_DS},    {3.5, RB_GAIT_LS},   {5.0, RB_GAIT_RS},  {9.5, RB_GAIT_LS},
              {10.099, RB_GAIT_LS}, {10.1, RB_GAIT_DS},  {10.6, RB_GAIT_DS}, {100.0, RB_GAIT_DS}};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        cr_expect_eq(rb_gait_phase_at(&g, at[i].t, NULL, NULL), at[i].ph, "t = %g: phase %d, expected %d", at[i].t,
                     rb_gait_phase_at(&g, at[i].t, NULL, NULL), at[i].ph);
    /* the seven single supports alternate from the left; each lasts ss */
    size_t k = 0, count = 0;
    rb_gait_phase last = RB_GAIT_DS;
    double s = -1, since = 0;
    for (int i = 0; i <= 12000; i++) {
        double t = i * 1e-3;
        rb_gait_phase ph = rb_gait_phase_at(&g, t, &k, &s);
        if (ph != RB_GAIT_DS && last == RB_GAIT_DS) {
            cr_expect_eq(ph, count % 2 == 0 ? RB_GAIT_LS : RB_GAIT_RS, "single support %zu", count);
            cr_expect_eq(k, count);
            cr_expect_float_eq(s, 0.0, 1e-9);
            since = t;
            count++;
        }
        if (ph == RB_GAIT_DS && last != RB_GAIT_DS)
            cr_expect_float_eq(t - since, 0.6, 1e-9, "single support %zu lasts ss", count - 1);
        last = ph;
    }
    cr_expect_eq(count, 7);
    g.first = RB_GAIT_RIGHT;
    cr_expect_eq(rb_gait_phase_at(&g, 0.5, NULL, NULL), RB_GAIT_RS);
    cr_expect_eq(rb_gait_phase_at(&g, 2.0, NULL, NULL), RB_GAIT_LS);
    g.stop = 10.0; /* the seventh no longer fits */
    cr_expect_eq(rb_gait_n_steps(&g), 6);
    cr_expect_eq(rb_gait_phase_at(&g, 9.6, NULL, NULL), RB_GAIT_DS);
}

/* ---- the plan ---------------------------------------------------------------------------------------------------- */

static rb_gait_plan *walk_plan(rb_sim_gait *g, double duration)
{
    rb_gait_start st = {{{0.0, 0.09, 0.0}, {0.0, -0.09, 0.0}}, {-0.0164, 0.0, 0.7176}, 9.81};
    rb_gait_plan *p = NULL;
    rb_err err;
    cr_assert_eq(rb_gait_plan_new(g, &st, duration, &p, &err), RB_OK, "%s", err.msg);
    return p;
}

/* The ZMP of the planned CoM, c - z_c / g c_ddot, follows the reference: the walk proper (from the end of the first
 * single support) within a millimetre RMS and 3 mm at worst; the first double support starts from rest, so the CoM
 * lags there (it must have moved before t = 0 to follow). The CoM starts at rest and ends over the feet's midpoint. */
Test(sim_gait, the_preview_controllers_zmp_tracks_the_reference)
{
    rb_sim_gait g = rb_sim_gait_defaults();
    rb_gait_plan *p = walk_plan(&g, 14.0);
    double zc = rb_gait_plan_zc(p), se = 0, worst = 0, worst_ss = 0;
    size_t n = 0;
    cr_assert_float_eq(zc, 0.7176, 1e-12);
    for (int i = 0; i <= 10600; i++) {
        double t = i * 1e-3, c[3], cdd[3], r[2];
        rb_gait_plan_com(p, t, c, NULL, cdd);
        rb_gait_plan_zmp_ref(p, t, r);
        double ex = c[0] - zc / 9.81 * cdd[0] - r[0], ey = c[1] - zc / 9.81 * cdd[1] - r[1], e = hypot(ex, ey);
        if (t < 1.1)
            continue;
        se += e * e, n++;
        worst = fmax(worst, e);
        if (rb_gait_phase_at(&g, t, NULL, NULL) != RB_GAIT_DS)
            worst_ss = fmax(worst_ss, e);
    }
    cr_expect_lt(sqrt(se / (double)n), 1e-3, "ZMP error RMS %g m", sqrt(se / (double)n));
    cr_expect_lt(worst, 3e-3, "worst ZMP error %g m", worst);
    cr_expect_lt(worst_ss, 2e-3, "worst ZMP error in single support %g m", worst_ss);
    double c0[3], v0[3], c1[3], v1[3];
    rb_gait_plan_com(p, 0.0, c0, v0, NULL);
    rb_gait_plan_com(p, 14.0, c1, v1, NULL); /* at rest again, 3.9 s after the last step */
    cr_expect_float_eq(c0[0], -0.0164, 1e-15);
    cr_expect_float_eq(v0[0], 0.0, 1e-15);
    cr_expect_float_eq(c0[2], 0.7176, 1e-15);
    cr_expect_float_eq(c1[0], 6 * 0.06, 1e-3, "the CoM ends over the closed feet: %g", c1[0]);
    cr_expect_float_eq(c1[1], 0.0, 1e-3);
    cr_expect_lt(fabs(v1[0]) + fabs(v1[1]), 1e-3);
    rb_gait_plan_free(p);
}

/* With `stand` the robot stands still until then: the planned CoM and the ZMP reference are exactly the initial CoM
 * on [0, stand) (nothing previewed), both move from stand on, the first shift of the ZMP taking [stand, start), and
 * the walk proper tracks its reference as without it. */
Test(sim_gait, standing_still_before_the_walk_holds_the_com_at_rest)
{
    rb_sim_gait g = rb_sim_gait_defaults();
    g.stand = 1.0, g.start = 1.9, g.stop = 11.5;
    rb_gait_plan *p = walk_plan(&g, 12.0);
    double zc = rb_gait_plan_zc(p), se = 0;
    size_t n = 0;
    for (int i = 0; i < 1000; i++) {
        double t = i * 1e-3, c[3], v[3], a[3], r[2];
        rb_gait_plan_com(p, t, c, v, a);
        rb_gait_plan_zmp_ref(p, t, r);
        cr_assert(c[0] == -0.0164 && c[1] == 0.0 && c[2] == 0.7176, "t = %g: CoM (%g, %g, %g)", t, c[0], c[1], c[2]);
        cr_assert(v[0] == 0 && v[1] == 0 && a[0] == 0 && a[1] == 0, "t = %g: the CoM moves", t);
        cr_assert(r[0] == -0.0164 && r[1] == 0.0, "t = %g: ZMP reference (%g, %g)", t, r[0], r[1]);
    }
    double c[3], v[3], r[2];
    rb_gait_plan_com(p, 1.1, c, v, NULL);
    cr_expect_gt(v[1], 1e-3, "the CoM moves towards the first stance foot after stand: %g m/s", v[1]);
    rb_gait_plan_zmp_ref(p, 1.45, r);
    cr_expect_float_eq(r[1], 0.09 / 2, 1e-12, "half-way through the first shift at 1.45 s: %g", r[1]);
    for (int i = 2500; i <= 12000; i++) { /* from the end of the first single support */
        double t = i * 1e-3, cdd[3];
        rb_gait_plan_com(p, t, c, NULL, cdd);
        rb_gait_plan_zmp_ref(p, t, r);
        double e = hypot(c[0] - zc / 9.81 * cdd[0] - r[0], c[1] - zc / 9.81 * cdd[1] - r[1]);
        se += e * e, n++;
    }
    cr_expect_lt(sqrt(se / (double)n), 1e-3, "ZMP error RMS %g m", sqrt(se / (double)n));
    rb_gait_plan_free(p);
    g.stand = 1.9; /* not before the first single support */
    rb_err err;
    cr_expect_eq(rb_sim_gait_validate(&g, &err), RB_ECONFIG);
    cr_expect_not_null(strstr(err.msg, "gait.stand"), "%s", err.msg);
}

/* Between plan steps the CoM follows the held jerk's cubic: its velocity and acceleration are its derivatives. */
Test(sim_gait, the_planned_com_velocity_and_acceleration_are_its_derivatives)
{
    rb_sim_gait g = rb_sim_gait_defaults();
    rb_gait_plan *p = walk_plan(&g, 10.6);
    const double h = 1e-5;
    for (double t = 0.3; t < 10; t += 0.7373) {
        double cm[3], cp[3], v[3], a[3], vm[3], vp[3];
        rb_gait_plan_com(p, t - h, cm, vm, NULL);
        rb_gait_plan_com(p, t + h, cp, vp, NULL);
        rb_gait_plan_com(p, t, NULL, v, a);
        for (int i = 0; i < 2; i++) {
            cr_expect_float_eq(v[i], (cp[i] - cm[i]) / (2 * h), 1e-6, "t = %g axis %d", t, i);
            cr_expect_float_eq(a[i], (vp[i] - vm[i]) / (2 * h), 1e-4, "t = %g axis %d", t, i);
        }
    }
    rb_gait_plan_free(p);
}

/* The swing: from lift-off to the foothold with zero velocity at both ends and swing_height at mid-swing; the
 * footholds advance by step_length from the first foot on (2 step lengths a step), the last step closes the feet. */
Test(sim_gait, the_swing_foot_reaches_its_foothold)
{
    const double from[3] = {0.1, -0.09, 0.0}, to[3] = {0.22, -0.09, 0.002};
    double p[3], v[3];
    rb_gait_swing(from, to, 0.03, 0.0, 0.6, p, v);
    for (int i = 0; i < 3; i++)
        cr_expect(p[i] == from[i] && v[i] == 0.0);
    rb_gait_swing(from, to, 0.03, 1.0, 0.6, p, v);
    for (int i = 0; i < 3; i++)
        cr_expect(fabs(p[i] - to[i]) < 1e-15 && fabs(v[i]) < 1e-15, "axis %d: %g %g", i, p[i], v[i]);
    rb_gait_swing(from, to, 0.03, 0.5, 0.6, p, v);
    cr_expect_float_eq(p[2], 0.001 + 0.03, 1e-15);
    cr_expect_float_eq(v[2], (to[2] - from[2]) * 1.875 / 0.6, 1e-12, "the bump's top: only the glide's climb");
    for (double s = 0.01; s < 1; s += 0.01) { /* velocity = the position's derivative */
        double pm[3], pp[3];
        rb_gait_swing(from, to, 0.03, s - 1e-6, 0.6, pm, NULL);
        rb_gait_swing(from, to, 0.03, s + 1e-6, 0.6, pp, NULL);
        rb_gait_swing(from, to, 0.03, s, 0.6, p, v);
        for (int i = 0; i < 3; i++)
            cr_expect_float_eq(v[i], (pp[i] - pm[i]) / (2e-6 * 0.6), 1e-6);
        cr_expect_geq(p[2], 0.0);
    }

    rb_sim_gait g = rb_sim_gait_defaults();
    rb_gait_plan *plan = walk_plan(&g, 10.6);
    for (size_t k = 0; k < 7; k++) {
        double hold[3], feet[6], vel[6];
        rb_gait_plan_foothold(plan, k, hold);
        int swing = k % 2 == 0 ? 1 : 0; /* LS first: the right foot swings */
        cr_expect_float_eq(hold[0], 0.06 * (double)(k + 1 < 6 ? k + 1 : 6), 1e-15, "step %zu", k);
        cr_expect_float_eq(hold[1], swing ? -0.09 : 0.09, 1e-15);
        cr_expect_float_eq(hold[2], 0.0, 1e-15);
        double end = 0.5 + 1.5 * (double)k + 0.6;
        rb_gait_plan_feet(plan, end - 1e-4, feet, vel);
        for (int i = 0; i < 3; i++)
            cr_expect_float_eq(feet[3 * swing + i], hold[i], 1e-6, "step %zu: the swing foot at its foothold", k);
        rb_gait_plan_feet(plan, end - 0.3, feet, vel);
        cr_expect_gt(feet[3 * swing + 2], 0.029, "mid-swing height");
        cr_expect(vel[3 * (1 - swing)] == 0.0 && vel[3 * (1 - swing) + 2] == 0.0, "the stance foot is still");
    }
    rb_gait_plan_free(plan);
}

/* ---- a walk ------------------------------------------------------------------------------------------------------ */

static rb_scenario *load_walk(const char *gait_patch, const char *root_patch, rb_err *err, int *rc)
{
    char *text = NULL;
    FILE *f = fopen(WALK, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = calloc((size_t)len + 1, 1);
    cr_assert_eq(fread(text, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    cJSON *j = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(j);
    cJSON *patches[2] = {gait_patch ? cJSON_Parse(gait_patch) : NULL, root_patch ? cJSON_Parse(root_patch) : NULL};
    cJSON *into[2] = {cJSON_GetObjectItem(j, "gait"), j};
    for (int i = 0; i < 2; i++) {
        if (!patches[i])
            continue;
        for (cJSON *e = patches[i]->child; e; e = e->next) {
            cJSON_DeleteItemFromObject(into[i], e->string);
            if (!cJSON_IsNull(e))
                cJSON_AddItemToObject(into[i], e->string, cJSON_Duplicate(e, true));
        }
        cJSON_Delete(patches[i]);
    }
    text = cJSON_Print(j);
    cJSON_Delete(j);
    rb_scenario *s = NULL;
    *rc = rb_scenario_load_text(text, strlen(text), "walk.json", WALK, &s, err);
    free(text);
    return s;
}

/* The shipped walk over the thesis's whole schedule (0 - 10.6 s, seven single supports): the base stays upright, the
 * CoM on its plan (a few millimetres), the feet's contacts follow the phase, a foot in contact does not move (nor sink
 * into the ground), the swing foot lands on its foothold, the ZMP of the contact wrenches stays under the stance
 * foot, and the robot advances by six step lengths. */
Test(sim_gait, a_walk_of_walk_json_stays_upright_on_its_plan)
{
    test_deadline(120);
    rb_err err;
    int rc;
    rb_scenario *sc = load_walk(NULL, NULL, &err, &rc);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    const rb_model *m = sc->model;
    cr_assert_eq(m->n_dofs, 12, "the 12-DoF biped");
    rb_sim *sim = NULL;
    rb_dyn *ws = NULL;
    cr_assert_eq(rb_sim_init(&sc->sim, &sim, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    const int feet[2] = {sc->sim.gait.feet[0], sc->sim.gait.feet[1]};
    double planted[2][3], com0 = NAN, feet0 = NAN, se = 0, worst_tilt = 0, worst_slide = 0, lowest = 0, worst_land = 0;
    double worst_cop = 0;
    size_t n = 0, singles = 0;
    bool was_in[2] = {false, false};
    rb_gait_phase last = RB_GAIT_DS;
    for (;;) {
        const rb_sim_truth *t = rb_sim_truth_get(sim);
        if (isnan(com0))
            com0 = t->com[0];
        double rpy[3];
        rb_m3_to_rpy(t->base_pose.R, rpy);
        worst_tilt = fmax(worst_tilt, fmax(fabs(rpy[0]), fabs(rpy[1])));
        double ex = t->com[0] - t->com_ref[0], ey = t->com[1] - t->com_ref[1], ez = t->com[2] - t->com_ref[2];
        se += ex * ex + ey * ey + ez * ez, n++;
        cr_assert_eq(rb_dyn_kinematics(m, ws, t->q, NULL, NULL, &err), RB_OK);
        rb_gait_phase ph = t->gait.phase;
        for (int f = 0; f < 2; f++) {
            rb_xform X;
            cr_assert_eq(rb_dyn_frame_pose(m, ws, (size_t)feet[f], &X, &err), RB_OK);
            lowest = fmin(lowest, X.p[2]);
            bool swinging = (ph == RB_GAIT_LS && f == 1) || (ph == RB_GAIT_RS && f == 0);
            cr_expect_eq(t->contact_active[f], !swinging, "t = %g: foot %d's contact follows the phase", t->t, f);
            bool in = t->contact_active[f];
            if (in && !was_in[f]) {
                memcpy(planted[f], X.p, sizeof planted[f]);
                if (t->t == 0 && f == 1)
                    feet0 = (planted[0][0] + planted[1][0]) / 2;
                if (t->t > 0) /* a touch-down: where the plan put it */
                    worst_land = fmax(
                        worst_land, hypot(hypot(X.p[0] - t->gait.feet_ref[3 * f], X.p[1] - t->gait.feet_ref[3 * f + 1]),
                                          X.p[2] - 0.0));
            }
            if (in)
                worst_slide = fmax(
                    worst_slide, hypot(hypot(X.p[0] - planted[f][0], X.p[1] - planted[f][1]), X.p[2] - planted[f][2]));
            was_in[f] = in;
            if (in && ph != RB_GAIT_DS) /* single support: the CoP under the stance sole (0.24 x 0.09 m) */
                worst_cop =
                    fmax(worst_cop, fmax(fabs(t->gait.zmp[0] - X.p[0]) / 0.12, fabs(t->gait.zmp[1] - X.p[1]) / 0.045));
        }
        singles += ph != RB_GAIT_DS && last == RB_GAIT_DS;
        last = ph;
        rc = rb_sim_step(sim, &err);
        cr_assert_geq(rc, 0, "%s", err.msg);
        if (rc == 0)
            break;
    }
    const rb_sim_truth *t = rb_sim_truth_get(sim);
    cr_expect_float_eq(t->t, 10.6, 1e-9);
    cr_expect_eq(singles, 7);
    cr_expect_lt(worst_tilt, 5 * M_PI / 180, "base roll / pitch up to %g deg", worst_tilt * 180 / M_PI);
    cr_expect_lt(sqrt(se / (double)n), 3e-3, "CoM off its plan by %g m RMS", sqrt(se / (double)n));
    cr_expect_lt(worst_slide, 5e-4, "a foot in contact moved %g m", worst_slide);
    cr_expect_gt(lowest, -1e-3, "a foot sank %g m into the ground", -lowest);
    cr_expect_lt(worst_land, 2e-3, "a swing foot landed %g m off its foothold", worst_land);
    cr_expect_lt(worst_cop, 1.0, "the CoP left the stance sole (%g of its half size)", worst_cop);
    /* six step lengths: the feet close side by side 0.36 m ahead; the CoM comes to rest over them */
    double mid = (planted[0][0] + planted[1][0]) / 2;
    cr_expect_float_eq(mid - feet0, 6 * 0.06, 1e-3, "the feet advanced %g m", mid - feet0);
    cr_expect_float_eq(t->com[0], mid, 0.01, "the CoM at %g m, the feet at %g m", t->com[0], mid);
    cr_expect_lt(t->com[0] - com0, 0.4, "the CoM advanced %g m", t->com[0] - com0);
    rb_dyn_free(ws);
    rb_sim_finish(sim);
    rb_scenario_free(sc);
}

/* truth->com_vel and com_acc: the velocity is the linear centroidal momentum over the mass (rb_dyn, another
 * computation), the acceleration is Newton's: m c_ddot = the contact forces + m g. The ZMP is where the contact
 * wrenches' horizontal moments vanish, on the ground (the soles' initial height). */
Test(sim_gait, the_truth_com_motion_and_zmp_agree_with_newton_and_the_wrenches)
{
    rb_err err;
    int rc;
    rb_scenario *sc = load_walk(NULL, "{\"duration\": 2.2}", &err, &rc);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    const rb_model *m = sc->model;
    rb_sim *sim = NULL;
    rb_dyn *ws = NULL;
    cr_assert_eq(rb_sim_init(&sc->sim, &sim, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_alloc(m, &ws, &err), RB_OK);
    double mass = rb_dyn_total_mass(m), ground = NAN, speed = 0;
    for (;;) {
        const rb_sim_truth *t = rb_sim_truth_get(sim);
        cr_assert(t->valid & RB_SIM_TRUTH_COM_MOTION);
        double F[3] = {0, 0, 0}, M[2] = {0, 0}, hG[6], com[3];
        cr_assert_eq(rb_dyn_kinematics(m, ws, t->q, t->nu, NULL, &err), RB_OK);
        cr_assert_eq(rb_dyn_centroidal_momentum(m, ws, hG, com, &err), RB_OK);
        for (size_t c = 0; c < t->n_contacts; c++) {
            const double *w = t->contact_wrench + 6 * c;
            rb_xform X;
            cr_assert_eq(rb_dyn_frame_pose(m, ws, (size_t)sc->sim.contacts[c].frame, &X, &err), RB_OK);
            if (isnan(ground))
                ground = X.p[2]; /* both soles start on it */
            double r[3] = {X.p[0] - t->gait.zmp[0], X.p[1] - t->gait.zmp[1], X.p[2] - ground};
            for (int i = 0; i < 3; i++)
                F[i] += w[i];
            M[0] += w[3] + r[1] * w[2] - r[2] * w[1];
            M[1] += w[4] + r[2] * w[0] - r[0] * w[2];
        }
        for (int i = 0; i < 3; i++) {
            cr_expect_float_eq(t->com[i], com[i], 1e-12, "t = %g: c, axis %d", t->t, i);
            cr_expect_float_eq(t->com_vel[i], hG[i] / mass, 1e-12, "t = %g: c_dot, axis %d", t->t, i);
            cr_expect_float_eq(t->com_acc[i], F[i] / mass + m->gravity[i], 1e-9 * (1 + fabs(F[i])),
                               "t = %g: Newton, axis %d: %g", t->t, i, t->com_acc[i]);
        }
        cr_expect_lt(fabs(M[0]) + fabs(M[1]), 1e-9 * F[2], "t = %g: moments %g %g about the ZMP", t->t, M[0], M[1]);
        speed = fmax(speed, hypot(t->com_vel[0], t->com_vel[1]));
        rc = rb_sim_step(sim, &err);
        cr_assert_geq(rc, 0, "%s", err.msg);
        if (rc == 0)
            break;
    }
    cr_expect_gt(speed, 0.05, "the CoM moves (%g m/s)", speed);
    rb_dyn_free(ws);
    rb_sim_finish(sim);
    rb_scenario_free(sc);
}

/* The same scenario gives the same log, bit for bit (the plan, the phase switching, the IK: no hidden state). */
Test(sim_gait, a_walk_is_deterministic)
{
    test_deadline(60);
    rb_log *logs[2] = {NULL, NULL};
    for (int r = 0; r < 2; r++) {
        rb_err err;
        int rc;
        rb_scenario *sc = load_walk(NULL, "{\"duration\": 2.7}", &err, &rc);
        cr_assert_eq(rc, RB_OK, "%s", err.msg);
        cr_assert_eq(rb_scenario_run(sc, NULL, NULL, &logs[r], &err), RB_OK, "%s", err.msg);
        rb_scenario_free(sc);
    }
    cr_assert_eq(logs[0]->n_channels, logs[1]->n_channels);
    size_t gait_channels = 0;
    for (size_t c = 0; c < logs[0]->n_channels; c++) {
        const rb_channel *a = &logs[0]->channels[c], *b = &logs[1]->channels[c];
        cr_assert_str_eq(a->name, b->name);
        cr_assert_eq(a->n_samples, b->n_samples);
        cr_expect(memcmp(a->data, b->data, a->n_samples * a->n_elements * sizeof *a->data) == 0, "%s", a->name);
        cr_expect(memcmp(a->time, b->time, a->n_samples * sizeof *a->time) == 0, "%s", a->name);
        gait_channels += strncmp(a->name, "truth/gait/", 11) == 0;
    }
    cr_expect_eq(gait_channels, 5);
    rb_log_free(logs[0]);
    rb_log_free(logs[1]);
}

/* A bad gait: one line naming the key. */
static void assert_refused(const char *gait_patch, const char *root_patch, const char *needle1, const char *needle2)
{
    rb_err err;
    int rc;
    rb_scenario *s = load_walk(gait_patch, root_patch, &err, &rc);
    cr_assert_eq(rc, RB_ECONFIG, "%s %s: %d", gait_patch, root_patch, rc);
    cr_assert_null(s);
    cr_assert_null(strchr(err.msg, '\n'), "one line: %s", err.msg);
    cr_assert_not_null(strstr(err.msg, needle1), "'%s' in: %s", needle1, err.msg);
    cr_assert_not_null(strstr(err.msg, needle2), "'%s' in: %s", needle2, err.msg);
}

Test(sim_gait, bad_gait_keys_are_refused)
{
    assert_refused("{\"ds\": -0.9}", NULL, "gait.ds", "> 0");
    assert_refused("{\"ss\": 0}", NULL, "gait.ss", "> 0");
    assert_refused("{\"start\": -1}", NULL, "gait.start", ">= 0");
    assert_refused("{\"stand\": 0.5}", NULL, "gait.stand", "before the first single support");
    assert_refused("{\"stop\": 0.8}", NULL, "gait.stop", "no single support fits");
    assert_refused("{\"step_length\": 0.5}", NULL, "gait.step_length", "[-0.2, 0.2]");
    assert_refused("{\"step_length\": -0.3}", NULL, "gait.step_length", "[-0.2, 0.2]");
    assert_refused("{\"swing_height\": 0.5}", NULL, "gait.swing_height", "(0, 0.2]");
    assert_refused("{\"step_width\": 2}", NULL, "gait.step_width", "(0, 0.6]");
    assert_refused("{\"preview\": 0.01}", NULL, "gait.preview", "[0.1, 5]");
    assert_refused("{\"first\": \"lef\"}", NULL, "gait.first", "did you mean 'left'");
    assert_refused("{\"feedforward\": \"none\"}", NULL, "gait.feedforward", "dynamics");
    assert_refused("{\"feet\": [\"l_sole\", \"r_sol\"]}", NULL, "gait.feet[1]", "did you mean 'r_sole'");
    assert_refused("{\"feet\": [\"l_sole\", \"l_sole\"]}", NULL, "gait.feet", "one frame");
    assert_refused("{\"feet\": [\"l_sole\"]}", NULL, "gait.feet", "[left foot frame, right foot frame]");
    assert_refused("{\"feet\": [\"l_sole\", \"r_sole_fl\"]}", NULL, "gait.feet[1]", "needs a 6D contact");
    assert_refused("{\"stride\": 0.1}", NULL, "gait", "unknown key 'stride'");
    assert_refused(NULL, "{\"model\": {\"urdf\": \"../../datasets/walker_biped.urdf\"}, \"base_pose\": null}", "gait",
                   "floating base");
    assert_refused(NULL, "{\"balance\": {\"amplitude\": 0.01, \"freq\": 0.5}}", "gait", "not with 'balance'");
    assert_refused(NULL, "{\"contacts\": [{\"frame\": \"l_sole\"}]}", "gait: feet[1]", "'r_sole' needs a 6D contact");
    assert_refused(NULL, "{\"contacts\": [{\"frame\": \"l_sole\"}, {\"frame\": \"r_sole\", \"dim\": 3}]}",
                   "gait: feet[1]", "6D");
    assert_refused(NULL, "{\"events\": [{\"t\": 1, \"contact\": \"r_sole\", \"active\": false}]}", "gait",
                   "events[0] switches the contact of foot 'r_sole'");
    assert_refused(NULL, "{\"controller\": null}", "gait", "needs a controller");
}

/* The plan's own checks (a CoM too low for the pendulum, a height change without a first double support) come at
 * set-up, from the engine, naming the key. */
Test(sim_gait, a_bad_plan_is_refused_at_set_up)
{
    rb_sim_gait g = rb_sim_gait_defaults();
    rb_gait_start st = {{{0.0, 0.09, 0.0}, {0.0, -0.09, 0.0}}, {0.0, 0.0, 0.7}, 9.81};
    rb_gait_plan *p = NULL;
    rb_err err;
    g.com_height = 0.03;
    cr_expect_eq(rb_gait_plan_new(&g, &st, 5, &p, &err), RB_ECONFIG);
    cr_expect_not_null(strstr(err.msg, "gait.com_height"), "%s", err.msg);
    g.com_height = 0.65, g.start = 0;
    cr_expect_eq(rb_gait_plan_new(&g, &st, 5, &p, &err), RB_ECONFIG);
    cr_expect_not_null(strstr(err.msg, "start > stand"), "%s", err.msg);
    cr_expect_null(p);
    g.start = 0.5; /* lowered over the first double support, then held */
    cr_assert_eq(rb_gait_plan_new(&g, &st, 5, &p, &err), RB_OK, "%s", err.msg);
    double c[3], v[3];
    rb_gait_plan_com(p, 0.0, c, v, NULL);
    cr_expect(c[2] == 0.7 && v[2] == 0.0);
    rb_gait_plan_com(p, 0.5, c, v, NULL);
    cr_expect(c[2] == 0.65 && v[2] == 0.0);
    cr_expect_float_eq(rb_gait_plan_zc(p), 0.65, 1e-15);
    rb_gait_plan_free(p);
}

/* The plan is made at set-up: stepping a walk through lift-offs and touch-downs allocates nothing (neither rb_malloc
 * nor the C library). */
Test(sim_gait, stepping_a_walk_allocates_nothing)
{
    rb_err err;
    int rc;
    rb_scenario *sc = load_walk(NULL, "{\"duration\": 2.7}", &err, &rc);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    rb_sim *sim = NULL;
    cr_assert_eq(rb_sim_init(&sc->sim, &sim, &err), RB_OK, "%s", err.msg);
    test_alloc_count_init();
    rb_alloc_fail_after(-1);
    test_alloc_count = 0;
    test_alloc_counting = 1;
    size_t switches = 0;
    rb_gait_phase last = rb_sim_truth_get(sim)->gait.phase;
    while ((rc = rb_sim_step(sim, &err)) == 1) {
        switches += rb_sim_truth_get(sim)->gait.phase != last;
        last = rb_sim_truth_get(sim)->gait.phase;
    }
    test_alloc_counting = 0;
    long allocs = rb_alloc_fail_after(-1), c_allocs = test_alloc_count;
    cr_assert_eq(rc, 0, "%s", err.msg);
    cr_expect_eq(switches, 4, "LS, DS, RS, DS");
    cr_expect_eq(allocs, 0, "rb_malloc calls while stepping: %ld", allocs);
    if (test_alloc_count_works())
        cr_expect_eq(c_allocs, 0, "C library allocations while stepping: %ld", c_allocs);
    rb_sim_finish(sim);
    rb_scenario_free(sc);
}
