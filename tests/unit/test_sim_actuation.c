/* lib/sim: the gear's windup under stiction (k_gear) and the joint-limit stops. All runs are seeded. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/sim.h"

static rb_model *load_arm(void)
{
    rb_model *m = NULL;
    rb_err err;
    char path[1024];
    snprintf(path, sizeof path, "%s/datasets/arm_2ft.urdf", RB_SOURCE);
    cr_assert_eq(rb_model_load_urdf(path, NULL, &m, &err), RB_OK, "%s", err.msg);
    cr_assert_geq(m->n_dofs, 4);
    return m;
}

static rb_sim *start(const rb_sim_scenario *sc)
{
    rb_sim *s = NULL;
    rb_err err;
    cr_assert_eq(rb_sim_init(sc, &s, &err), RB_OK, "%s", err.msg);
    return s;
}

/* The arm with every joint held by a large stiction but shoulder_yaw (vertical axis: no gravity torque), whose
 * breakaway torque is F_S; PD on shoulder_yaw towards a linear ramp r(t) = slope t, so the motor torque
 * kp slope t + kd slope rises slowly while the joint is held. */
enum { YAW = 0 };
static const double F_S = 4.0, KP = 20.0, KD = 1.0, SLOPE = 0.25, K_GEAR = 500.0, GEAR_R = -100.0;

typedef struct windup {
    rb_model *m;
    rb_friction_model fr[8];
    rb_sim_ref ref[8];
    rb_sim_joint_ctrl g[8];
    rb_sim_actuator act[8];
    double times[2], values[2];
    rb_sim_scenario sc;
} windup;

static void windup_setup(windup *w, double k_gear)
{
    memset(w, 0, sizeof *w);
    w->m = load_arm();
    rb_err err;
    for (size_t j = 0; j < w->m->n_dofs; j++) {
        double p[4] = {j == YAW ? 0.8 * F_S : 100.0, j == YAW ? F_S : 1000.0, 0.1, 1e-3};
        cr_assert_eq(rb_friction_build("stiction", p, 4, &w->fr[j], &err), RB_OK, "%s", err.msg);
        w->act[j] = (rb_sim_actuator){.k_t = 0.05, .R = GEAR_R, .J_m = 1e-5, .i_max = 0, .k_gear = k_gear};
    }
    w->times[0] = 0.0, w->times[1] = 10.0, w->values[0] = 0.0, w->values[1] = 10.0 * SLOPE;
    w->ref[YAW] = (rb_sim_ref){.kind = RB_REF_SPLINE, .times = w->times, .values = w->values, .n_points = 2};
    w->g[YAW] = (rb_sim_joint_ctrl){.kp = KP, .kd = KD};
    for (size_t j = 1; j < w->m->n_dofs; j++)
        w->ref[j] = (rb_sim_ref){.kind = RB_REF_CONST};
    rb_sim_scenario *sc = &w->sc;
    sc->model = w->m, sc->dt = 1e-3, sc->duration = 1.2, sc->seed = 5;
    sc->refs = w->ref, sc->gains = w->g, sc->actuators = w->act, sc->friction = w->fr, sc->ctrl = RB_CTRL_PD;
}

/* Below breakaway the joint encoder stays put while the motor encoder moves by R tau_g / k_gear (tau_g the
 * transmitted torque tau_j + tau_F); the rotor velocity and acceleration are the backward differences of
 * that windup; above breakaway the joint moves. */
Test(sim_actuation, stiction_winds_the_gear_up_then_breaks_away)
{
    windup w;
    windup_setup(&w, K_GEAR);
    rb_sim *s = start(&w.sc);
    const rb_sim_truth *tr = rb_sim_truth_get(s);
    rb_err err;
    const double s0 = tr->s[YAW], mp0 = tr->motor_pos[YAW];
    cr_assert_eq(mp0, GEAR_R * (s0 + (tr->tau_j[YAW] + tr->tau_f[YAW]) / K_GEAR));
    double mp_prev = mp0, mv_prev = tr->motor_vel[YAW], t_break = -1.0, tau_m_at_break = 0.0, tau_g_max = 0.0;
    size_t held_steps = 0;
    while (rb_sim_step(s, &err) == 1) {
        double tau_g = tr->tau_j[YAW] + tr->tau_f[YAW];
        if (tr->stuck[YAW] && t_break < 0) {
            held_steps++;
            tau_g_max = fmax(tau_g_max, fabs(tau_g));
            cr_assert_eq(tr->s[YAW], s0, "the joint moved while held at t = %g", tr->t);
            cr_assert_eq(tr->s_dot[YAW], 0.0);
            /* motor position: exactly R (s + tau_g / k_gear); its change from the start R (tau_g - tau_g0) / k_g */
            cr_assert_float_eq(tr->motor_pos[YAW] - GEAR_R * s0, GEAR_R * tau_g / K_GEAR, 1e-12 * fabs(GEAR_R));
            /* rotor velocity and acceleration: backward differences of the rotor angle and velocity */
            double v_fd = (tr->motor_pos[YAW] - mp_prev) / w.sc.dt, a_fd = (tr->motor_vel[YAW] - mv_prev) / w.sc.dt;
            cr_assert_float_eq(tr->motor_vel[YAW], v_fd, 1e-9 * (1 + fabs(v_fd)), "t = %g", tr->t);
            if (held_steps > 1)
                cr_assert_float_eq(tr->motor_acc[YAW], a_fd, 1e-6 * (1 + fabs(a_fd)), "t = %g", tr->t);
        } else if (t_break < 0) {
            t_break = tr->t, tau_m_at_break = tr->tau_m[YAW];
        }
        mp_prev = tr->motor_pos[YAW], mv_prev = tr->motor_vel[YAW];
    }
    /* the motor wound up by a visible angle while the joint did not move */
    cr_assert_gt(fabs(GEAR_R) * tau_g_max / K_GEAR, 0.5, "rotor windup %g rad", fabs(GEAR_R) * tau_g_max / K_GEAR);
    /* breakaway when the torque the joint sees reaches F_s: motor torque kp slope t + kd slope */
    double t_expected = (F_S - KD * SLOPE) / (KP * SLOPE);
    cr_assert_gt(t_break, 0.0, "never broke away");
    cr_assert_float_eq(t_break, t_expected, 3e-3, "breakaway at %g s, expected %g s", t_break, t_expected);
    cr_assert_leq(tau_g_max, F_S + 1e-9);
    cr_assert_geq(tau_m_at_break, F_S - KP * SLOPE * w.sc.dt, "motor torque %g at breakaway", tau_m_at_break);
    cr_assert_gt(fabs(tr->s[YAW] - s0), 1e-3, "the joint did not move after breakaway");
    rb_sim_finish(s);
    rb_model_free(w.m);
}

/* Truth of a run, one sample after another. */
static size_t record(const rb_sim_scenario *sc, double *out, size_t per)
{
    rb_sim *s = start(sc);
    const rb_sim_truth *tr = rb_sim_truth_get(s);
    rb_err err;
    size_t k = 0, n = tr->n;
    do {
        double *o = out + k * per;
        const double *parts[] = {tr->q,     tr->nu,      tr->nu_dot,    tr->tau_j,     tr->tau_m,
                                 tr->tau_f, tr->current, tr->motor_pos, tr->motor_vel, tr->motor_acc};
        const size_t len[] = {tr->nq, tr->nv, tr->nv, n, n, n, n, n, n, n};
        for (size_t i = 0; i < sizeof len / sizeof len[0]; i++)
            memcpy(o, parts[i], len[i] * sizeof *o), o += len[i];
        memcpy(o, tr->ft, 6 * tr->n_ft * sizeof *o);
        k++;
    } while (rb_sim_step(s, &err) == 1);
    rb_sim_finish(s);
    return k;
}

/* k_gear = 0 (explicitly, or a struct that never names the field) is the rigid gear of before: the same bits,
 * theta = R s exactly; a compliant gear changes the rotor side only. */
Test(sim_actuation, rigid_gear_is_bit_identical_and_windup_does_not_feed_back)
{
    windup w;
    windup_setup(&w, 0.0);
    size_t n = w.m->n_dofs, per = 2 * w.m->nq + 10 * n + 6 * w.m->n_ft, steps = 1202;
    double *a = calloc(steps * per, sizeof *a), *b = calloc(steps * per, sizeof *b),
           *c = calloc(steps * per, sizeof *c);
    size_t ka = record(&w.sc, a, per);
    for (size_t j = 0; j < n; j++) /* the same actuators written without the field */
        w.act[j] = (rb_sim_actuator){.k_t = 0.05, .R = GEAR_R, .J_m = 1e-5, .i_max = 0};
    size_t kb = record(&w.sc, b, per);
    cr_assert_eq(ka, kb);
    cr_assert_eq(memcmp(a, b, ka * per * sizeof *a), 0, "k_gear = 0 differs from the field left out");
    /* theta = R s, theta_dot = R s_dot, theta_ddot = R s_ddot, bit for bit */
    size_t nq = w.m->nq, nv = w.m->nv, off_mp = nq + 2 * nv + 4 * n;
    for (size_t k = 0; k < ka; k++)
        for (size_t j = 0; j < n; j++) {
            const double *o = a + k * per;
            cr_assert_eq(o[off_mp + j], GEAR_R * o[nq - n + j]);
            cr_assert_eq(o[off_mp + n + j], GEAR_R * o[nq + nv - n + j]);
            cr_assert_eq(o[off_mp + 2 * n + j], GEAR_R * o[nq + 2 * nv - n + j]);
        }
    for (size_t j = 0; j < n; j++)
        w.act[j].k_gear = K_GEAR;
    size_t kc = record(&w.sc, c, per);
    cr_assert_eq(ka, kc);
    double dmotor = 0.0;
    for (size_t k = 0; k < ka; k++) {
        const double *x = a + k * per, *y = c + k * per;
        cr_assert_eq(memcmp(x, y, off_mp * sizeof *x), 0, "joint side changed by the windup at sample %zu", k);
        cr_assert_eq(memcmp(x + off_mp + 3 * n, y + off_mp + 3 * n, 6 * w.m->n_ft * sizeof *x), 0);
        for (size_t j = 0; j < n; j++)
            dmotor = fmax(dmotor, fabs(x[off_mp + j] - y[off_mp + j]));
    }
    cr_assert_gt(dmotor, 0.1, "the windup changed no rotor angle");
    free(a), free(b), free(c);
    rb_model_free(w.m);
}

Test(sim_actuation, k_gear_must_be_finite_and_non_negative)
{
    windup w;
    windup_setup(&w, 0.0);
    const double bad[3] = {-1.0, INFINITY, NAN};
    for (int i = 0; i < 3; i++) {
        w.act[2].k_gear = bad[i];
        rb_sim *s = NULL;
        rb_err err;
        cr_assert_eq(rb_sim_init(&w.sc, &s, &err), RB_ECONFIG);
        cr_assert_null(s);
        cr_assert_not_null(strstr(err.msg, w.m->dof_names[2]), "%s", err.msg);
        cr_assert_not_null(strstr(err.msg, "k_gear"), "%s", err.msg);
        cr_assert_null(strchr(err.msg, '\n'));
    }
    rb_model_free(w.m);
}

/* The elbow (limits [0, 2.4] rad) driven by a PD towards 3 rad and back to 1 rad: with joint_limits it stops
 * at 2.4 (never beyond, velocity into the limit zero, at_limit set) and leaves when pulled back; without, it
 * goes past. */
static double elbow_run(bool limits, double *t_leave, size_t *n_at_limit)
{
    rb_model *m = load_arm();
    rb_sim_joint_ctrl g[8] = {{0}};
    rb_sim_ref ref[8];
    rb_sim_actuator act[8]; /* the rotors' inertia keeps the stiff PD stable at 1 ms */
    double times[4] = {0.0, 0.3, 0.8, 1.0}, values[4] = {2.0, 3.0, 3.0, 1.0};
    for (size_t j = 0; j < m->n_dofs; j++)
        ref[j] = (rb_sim_ref){.kind = RB_REF_CONST}, g[j] = (rb_sim_joint_ctrl){.kp = 300, .kd = 20},
        act[j] = (rb_sim_actuator){.k_t = 0.05, .R = 100, .J_m = 1e-5};
    size_t E = (size_t)rb_model_dof_index(m, "elbow");
    ref[E] = (rb_sim_ref){.kind = RB_REF_SPLINE, .times = times, .values = values, .n_points = 4};
    double q0[8] = {0};
    q0[E] = 2.0;
    rb_sim_scenario sc = {0};
    sc.model = m, sc.dt = 1e-3, sc.duration = 1.6, sc.q0 = q0, sc.refs = ref, sc.gains = g, sc.actuators = act;
    sc.ctrl = RB_CTRL_PD, sc.gravity_comp = true, sc.joint_limits = limits;
    rb_sim *s = start(&sc);
    const rb_sim_truth *tr = rb_sim_truth_get(s);
    rb_err err;
    double hi = m->dof_upper[E], s_max = tr->s[E];
    *t_leave = -1.0, *n_at_limit = 0;
    bool was_at = false;
    while (rb_sim_step(s, &err) == 1) {
        s_max = fmax(s_max, tr->s[E]);
        if (limits) {
            cr_assert_leq(tr->s[E], hi, "beyond the limit at t = %g", tr->t);
            cr_assert_eq(tr->at_limit[E], tr->s[E] == hi, "at_limit flag at t = %g", tr->t);
            if (tr->at_limit[E])
                cr_assert_leq(tr->s_dot[E], 0.0, "velocity into the limit at t = %g", tr->t);
            for (size_t j = 0; j < m->n_dofs; j++)
                cr_assert(j == E || !tr->at_limit[j]);
        } else {
            cr_assert_eq(tr->at_limit[E], 0);
        }
        *n_at_limit += tr->at_limit[E];
        if (was_at && !tr->at_limit[E] && *t_leave < 0)
            *t_leave = tr->t;
        was_at = tr->at_limit[E];
    }
    cr_assert_lt(fabs(tr->s[E] - 1.0), 0.05, "does not follow the reference back: %g", tr->s[E]);
    rb_sim_finish(s);
    rb_model_free(m);
    return s_max;
}

Test(sim_actuation, joint_limits_stop_the_joint)
{
    double t_leave, t_dummy;
    size_t n_at, n_free;
    double s_free = elbow_run(false, &t_dummy, &n_free);
    cr_assert_gt(s_free, 2.6, "without limits the elbow should pass 2.4: %g", s_free);
    double s_lim = elbow_run(true, &t_leave, &n_at);
    cr_assert_eq(s_lim, 2.4);
    cr_assert_gt(n_at, 300, "held at the limit for %zu samples", n_at); /* reference above 2.4 for ~0.6 s */
    cr_assert_gt(t_leave, 0.8, "left the limit at %g s", t_leave);      /* only once the reference comes back */
    cr_assert_lt(t_leave, 1.0, "left the limit at %g s", t_leave);
}

Test(sim_actuation, initial_configuration_is_clamped_into_the_limits)
{
    rb_model *m = load_arm();
    size_t E = (size_t)rb_model_dof_index(m, "elbow");
    double q0[8] = {0}, nu0[8] = {0};
    q0[E] = -0.3, nu0[E] = -1.0; /* below the lower limit 0, moving further down */
    rb_sim_scenario sc = {0};
    sc.model = m, sc.dt = 1e-3, sc.duration = 0.01, sc.q0 = q0, sc.nu0 = nu0, sc.joint_limits = true;
    rb_sim *s = start(&sc);
    const rb_sim_truth *tr = rb_sim_truth_get(s);
    cr_assert_eq(tr->s[E], m->dof_lower[E]);
    cr_assert_eq(tr->s_dot[E], 0.0);
    cr_assert_eq(tr->at_limit[E], 1);
    rb_sim_finish(s);
    rb_model_free(m);
}
