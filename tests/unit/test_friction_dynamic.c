/* Dynamic friction: LuGre (steady state, presliding spring, stability of the exponential update at stiff
 * sigma0 dt), the stick-slip machine in small simulations whose motion is known in closed form, the
 * drift-aware step, and no allocation in any per-sample function. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "roboest/friction.h"
#include "alloc_count.h"

#define CLOSE(a, b, tol) cr_assert(fabs((a) - (b)) <= (tol), "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

static rb_friction_model lugre(double F_c, double F_s, double F_v, double v_s, double sigma0, double sigma1)
{
    rb_friction_model m = {.kind = RB_FRICTION_LUGRE, .lugre = {F_c, F_s, F_v, v_s, sigma0, sigma1}};
    cr_assert_eq(rb_friction_validate(&m, NULL), RB_OK);
    return m;
}

static rb_friction_model stiction(double F_c, double F_s, double F_v, double v_stick, double v_s)
{
    rb_friction_model m = {.kind = RB_FRICTION_STICTION, .stiction = {F_c, F_s, F_v, v_stick, v_s}};
    cr_assert_eq(rb_friction_validate(&m, NULL), RB_OK);
    return m;
}

/* ---- LuGre ----------------------------------------------------------------------------------------- */

/* At constant velocity the friction converges to g(v) sgn(v) + F_v v, in and out of the Stribeck region,
 * for both signs, whatever z started at. */
Test(friction_dynamic, lugre_steady_state_is_the_static_curve)
{
    rb_friction_model m = lugre(0.3, 0.6, 0.5, 0.01, 1e4, 2);
    const double vs[] = {0.05, -0.05, 0.005, -0.012, 1.0};
    const double z0[] = {0, 1e-4, -3e-4};
    for (size_t i = 0; i < 5; i++)
        for (size_t j = 0; j < 3; j++) {
            double v = vs[i], z = z0[j], F = 0;
            for (int k = 0; k < 3000; k++)
                F = rb_friction_lugre_step(&m, &z, v, 1e-3);
            double r = v / 0.01, want = (0.3 + 0.3 * exp(-r * r)) * (v > 0 ? 1 : -1) + 0.5 * v;
            CLOSE(F, want, 1e-12);
            CLOSE(F, rb_friction_eval(&m, v), 1e-12);
            CLOSE(z, (want - 0.5 * v) / 1e4, 1e-15);
        }
}

/* From rest, a small displacement x at constant small v: the z equation at constant v has the closed form
 * z = z_ss (1 - exp(-x / z_ss)), z_ss = g(v) / sigma0, which the exponential update reproduces exactly
 * whatever the step; and for x << z_ss the friction is the bristle spring, tau_F ~ sigma0 x. */
Test(friction_dynamic, lugre_presliding_spring)
{
    const double sigma0 = 1e3, v = 1e-4, dt = 1e-3;
    rb_friction_model m = lugre(0.3, 0.6, 0.5, 0.01, sigma0, 1.0);
    double g = 0.3 + 0.3 * exp(-(v / 0.01) * (v / 0.01)), z_ss = g / sigma0;
    double z = 0, F = 0;
    for (int k = 1; k <= 100; k++) {
        F = rb_friction_lugre_step(&m, &z, v, dt);
        double x = v * dt * k;
        CLOSE(z, z_ss * -expm1(-x / z_ss), 1e-13 * z_ss);
    }
    double x = 1e-5; /* x / z_ss = 0.017 */
    cr_assert(fabs(F - sigma0 * x) < 0.02 * sigma0 * x, "F %g vs sigma0 x %g", F, sigma0 * x);
    /* a spring: the incremental stiffness (F(2x) - F(x)) / x is sigma0 too */
    double z2 = 0, F2 = 0;
    for (int k = 0; k < 200; k++)
        F2 = rb_friction_lugre_step(&m, &z2, v, dt);
    cr_assert(fabs((F2 - F) / x - sigma0) < 0.04 * sigma0, "incremental stiffness %g", (F2 - F) / x);
    /* elastic: moving back to the start returns the torque to about zero (no slip happened) */
    for (int k = 0; k < 100; k++)
        F = rb_friction_lugre_step(&m, &z, -v, dt);
    cr_assert(fabs(F) < 0.05 * sigma0 * x, "F after returning %g", F);
    /* whereas a displacement of many z_ss (here 1e-2 rad, 17 z_ss) saturates at the sliding level g, far
     * below sigma0 x (10 N m): g (1 - exp(-17)) */
    z = 0;
    for (int k = 0; k < 100000; k++)
        F = rb_friction_lugre_step(&m, &z, v, dt);
    CLOSE(F, g + 0.5 * v, 1e-7);
}

/* sigma0 dt far beyond explicit Euler's limit (a dt ~ 1e5 against 2): the update stays bounded, monotone
 * between z and z_ss, and lands on the static curve; Euler with the same step blows up. */
Test(friction_dynamic, lugre_stable_at_stiff_sigma0_dt)
{
    const double sigma0 = 1e9, dt = 1e-3;
    rb_friction_model m = lugre(0.3, 0.6, 0.5, 0.01, sigma0, 3.0);
    double z = 0, z_euler = 0, euler_max = 0;
    for (int k = 0; k < 5000; k++) {
        double t = k * dt, v = 0.3 * sin(2 * M_PI * t) + 0.02 * sin(2 * M_PI * 7 * t);
        double z_before = z;
        double F = rb_friction_lugre_step(&m, &z, v, dt);
        cr_assert(isfinite(F) && fabs(sigma0 * z) <= 0.6 * (1 + 1e-12), "step %d: z %g F %g", k, z, F);
        double g = rb_friction_eval(&m, v) - 0.5 * v; /* g(v) sgn(v) */
        double z_ss = g / sigma0;
        if (v != 0)
            cr_assert(fmin(z_before, z_ss) - 1e-12 * fabs(z_ss) <= z && z <= fmax(z_before, z_ss) + 1e-12 * fabs(z_ss),
                      "step %d", k);
        if (fabs(v) > 1e-3)
            CLOSE(F, rb_friction_eval(&m, v), 1e-9);
        if (euler_max < 1e100) {
            double a = v == 0 ? 0 : sigma0 * fabs(v) / fabs(g);
            z_euler += dt * (v - a * z_euler);
            euler_max = fmax(euler_max, fabs(z_euler));
        }
    }
    cr_assert(euler_max > 1.0, "explicit Euler stayed bounded (%g): the case is not stiff", euler_max);
}

Test(friction_dynamic, lugre_zero_velocity_and_zero_dt)
{
    rb_friction_model m = lugre(0.3, 0.6, 0.5, 0.01, 1e4, 2);
    double z = 2e-5;
    double F = rb_friction_lugre_step(&m, &z, 0.0, 1e-3);
    cr_assert_eq(z, 2e-5, "v = 0 holds the bristles");
    CLOSE(F, 1e4 * 2e-5, 1e-15);
    F = rb_friction_lugre_step(&m, &z, 0.1, 0.0);
    cr_assert_eq(z, 2e-5, "dt = 0 leaves z");
    double g = 0.3 + 0.3 * exp(-100.0);
    CLOSE(F, 0.2 + 2 * (0.1 - 1e4 * 0.1 / g * 2e-5) + 0.05, 1e-12);
}

/* ---- stick-slip ---------------------------------------------------------------------------------------- */

Test(friction_dynamic, stiction_holds_below_breakaway_and_slips_above)
{
    rb_friction_model m = stiction(0.3, 0.5, 0.1, 1e-3, 0);
    rb_friction_state s;
    rb_friction_state_init(&s);
    cr_assert(s.stuck);
    bool stuck = false;
    for (double tau = -0.5; tau <= 0.5; tau += 0.01) {
        double F = rb_friction_stiction_step(&m, &s, 0.0, tau, &stuck);
        cr_assert(stuck && s.stuck, "tau %g", tau);
        cr_assert_eq(F, tau, "the held joint sees no net torque");
    }
    double F = rb_friction_stiction_step(&m, &s, 0.0, 0.5000001, &stuck);
    cr_assert(!stuck && !s.stuck);
    CLOSE(F, 0.3, 1e-15); /* Coulomb while slipping */
    rb_friction_state_init(&s);
    F = rb_friction_stiction_step(&m, &s, 0.0, -0.7, NULL);
    cr_assert(!s.stuck);
    CLOSE(F, -0.3, 1e-15);
    /* slipping: sliding law in the direction of motion */
    F = rb_friction_stiction_step(&m, &s, -0.4, -0.7, &stuck);
    cr_assert(!stuck);
    CLOSE(F, -0.3 - 0.04, 1e-15);
    /* with a Stribeck velocity the sliding law starts from F_s */
    rb_friction_model ms = stiction(0.3, 0.5, 0.1, 1e-3, 0.02);
    rb_friction_state_init(&s);
    F = rb_friction_stiction_step(&ms, &s, 0.0, 0.6, NULL);
    CLOSE(F, 0.5, 1e-15);
    F = rb_friction_stiction_step(&ms, &s, 0.02, 0.6, NULL);
    CLOSE(F, 0.3 + 0.2 / M_E + 0.002, 1e-15);
}

/* One joint of inertia J pushed by a torque pulse above breakaway, then released: it breaks away at the
 * pulse, accelerates at (tau - F_c) / J, decelerates at F_c / J, re-sticks where the closed form says it
 * stops, and stays there. Semi-implicit Euler; the caller zeroes v while the joint is held. */
Test(friction_dynamic, stiction_pulse_breaks_away_and_resticks)
{
    const double J = 0.05, dt = 1e-4, F_c = 0.3, F_s = 0.5; /* one step of Coulomb removes 6e-4 < v_stick */
    rb_friction_model m = stiction(F_c, F_s, 0, 1e-3, 0);
    rb_friction_state s;
    rb_friction_state_init(&s);
    double q = 0, v = 0, t_break = -1, t_stick = -1;
    for (int k = 0; k < 10000; k++) {
        double t = k * dt, tau = (t >= 0.1 - dt / 2 && t < 0.3 - dt / 2) ? 0.6 : 0.0;
        bool stuck;
        double F = rb_friction_stiction_step(&m, &s, v, tau, &stuck);
        if (!stuck && t_break < 0)
            t_break = t;
        if (stuck && t_break >= 0 && t_stick < 0)
            t_stick = t;
        if (stuck) {
            v = 0;
        } else {
            v += dt * (tau - F) / J;
            q += dt * v;
        }
        if (t < 0.1 - dt / 2)
            cr_assert(stuck && q == 0, "t %g: moved before the pulse", t);
    }
    CLOSE(t_break, 0.1, 1e-9);
    /* accelerate 0.2 s at 6 rad/s^2 to 1.2 rad/s, decelerate at 6 rad/s^2: at rest at t = 0.5, q = 0.24 */
    cr_assert(fabs(t_stick - 0.5) <= 5 * dt, "re-stuck at %g, expected 0.5", t_stick);
    CLOSE(q, 0.24, 1e-3);
    cr_assert(s.stuck && v == 0, "stays stuck after the pulse");
}

/* The motor side winds a harmonic-drive spring at constant speed while the joint is held: the joint does
 * not move until the spring torque k (theta_m - q) exceeds F_s, then slips, re-sticks, and the cycle
 * repeats (stick-slip). */
Test(friction_dynamic, stiction_motor_winds_up_then_stick_slip)
{
    const double J = 0.05, k = 100, w = 0.05, dt = 1e-5, F_s = 0.5;
    rb_friction_model m = stiction(0.3, F_s, 0.05, 1e-3, 0);
    rb_friction_state s;
    rb_friction_state_init(&s);
    double q = 0, v = 0, q_held = 0, tau_prev = 0;
    int stick_phases = 0, breakaways = 0;
    bool was_stuck = true;
    for (int i = 0; i < 200000; i++) { /* 2 s */
        double theta_m = w * i * dt, tau = k * (theta_m - q);
        bool stuck;
        double F = rb_friction_stiction_step(&m, &s, v, tau, &stuck);
        if (stuck) {
            if (!was_stuck) {
                stick_phases++;
                q_held = q;
            }
            v = 0;
            cr_assert_eq(q, q_held, "step %d: the held joint moved", i);
            cr_assert(fabs(tau) <= F_s);
        } else {
            if (was_stuck) {
                breakaways++;
                cr_assert(fabs(tau) > F_s && fabs(tau_prev) <= F_s, "step %d: breakaway at tau %g", i, tau);
                if (breakaways == 1)
                    CLOSE(i * dt, F_s / (k * w), 2 * dt); /* the first winding: 0.1 s */
            }
            v += dt * (tau - F) / J;
            q += dt * v;
        }
        if (i * dt < F_s / (k * w) - 2 * dt)
            cr_assert(q == 0 && stuck, "step %d: the joint moved before breakaway", i);
        was_stuck = stuck;
        tau_prev = tau;
    }
    /* each cycle: up to one period 2 pi sqrt(J / k) = 0.14 s of slip, then ~0.08 s of winding the spring from
     * about 0.1 back to 0.5 N m: 8 or 9 cycles in 2 s */
    cr_assert(stick_phases >= 6 && breakaways >= 6, "%d stick phases, %d breakaways", stick_phases, breakaways);
    cr_log_info("stick-slip: %d stick phases, %d breakaways in 2 s", stick_phases, breakaways);
    /* on average the joint follows the motor (the spring deflects at most F_s / k = 5 mrad) */
    cr_assert(fabs(q - w * 2.0) < 0.006, "q %g", q);
}

/* A step too coarse for the band: the velocity jumps over zero; the sign change still re-sticks. */
Test(friction_dynamic, stiction_resticks_on_a_sign_change)
{
    const double J = 0.001, dt = 1e-3; /* one step of Coulomb removes 0.3 rad/s */
    rb_friction_model m = stiction(0.3, 0.5, 0, 1e-9, 0);
    rb_friction_state s;
    rb_friction_state_init(&s);
    s.stuck = false;
    s.v_prev = 0.5;
    double v = 0.45;
    int k;
    for (k = 0; k < 10; k++) {
        bool stuck;
        double F = rb_friction_stiction_step(&m, &s, v, 0.0, &stuck);
        if (stuck)
            break;
        v -= dt * F / J;
    }
    cr_assert(k <= 3 && s.stuck, "not stuck after %d steps, v %g", k, v);
}

/* Slowing down inside the band under a torque that opposes the motion but cannot break away: it sticks now,
 * before the velocity changes sign. */
Test(friction_dynamic, stiction_resticks_when_slowing_in_the_band)
{
    rb_friction_model m = stiction(0.3, 0.5, 0, 1e-3, 0);
    rb_friction_state s;
    rb_friction_state_init(&s);
    s.stuck = false;
    s.v_prev = 8e-4;
    bool stuck;
    double F = rb_friction_stiction_step(&m, &s, 5e-4, -0.4, &stuck);
    cr_assert(stuck);
    cr_assert_eq(F, -0.4);
    /* the same velocity while speeding up (after a breakaway) keeps slipping */
    s.stuck = false;
    s.v_prev = 2e-4;
    F = rb_friction_stiction_step(&m, &s, 5e-4, 0.4, &stuck);
    cr_assert(!stuck);
    cr_assert_eq(F, 0.3);
}

Test(friction_dynamic, stiction_keeps_slipping_when_the_torque_can)
{
    const double J = 0.05, dt = 1e-4;
    rb_friction_model m = stiction(0.3, 0.5, 0, 1e-3, 0);
    rb_friction_state s;
    rb_friction_state_init(&s);
    /* breakaway, then a torque between F_c and F_s: it keeps moving (net 0.1 N m), it does not re-stick */
    double v = 0;
    for (int k = 0; k < 1000; k++) {
        double tau = k == 0 ? 0.55 : 0.4;
        bool stuck;
        double F = rb_friction_stiction_step(&m, &s, v, tau, &stuck);
        cr_assert(!stuck, "step %d: re-stuck while accelerating", k);
        v += dt * (tau - F) / J;
    }
    CLOSE(v, 1e-4 * 0.25 / 0.05 + 999 * 1e-4 * 0.1 / 0.05, 1e-12);
    /* reversal under a torque above breakaway: passes through zero without sticking */
    for (int k = 0; k < 3000; k++) {
        bool stuck;
        double F = rb_friction_stiction_step(&m, &s, v, -0.8, &stuck);
        cr_assert(!stuck, "step %d: stuck at the reversal (v %g)", k, v);
        v += dt * (-0.8 - F) / J;
    }
    cr_assert(v < -0.1, "v %g", v);
    /* and with a torque below F_c it comes to rest and holds */
    for (int k = 0; k < 30000 && !s.stuck; k++) {
        double F = rb_friction_stiction_step(&m, &s, v, 0.1, NULL);
        v = s.stuck ? 0 : v + dt * (0.1 - F) / J;
    }
    cr_assert(s.stuck);
}

/* ---- drift through rb_friction_step ------------------------------------------------------------------ */

Test(friction_dynamic, step_applies_drift)
{
    rb_friction_state s;
    /* static model: tau_F(t, v) = s(t) tau_F(v) */
    rb_friction_model cvm = {.kind = RB_FRICTION_CV, .cv = {0.3, 0.5, 0.01}};
    cvm.drift = (rb_friction_drift){.amplitude = 0.25, .period = 60};
    cr_assert_eq(rb_friction_validate(&cvm, NULL), RB_OK);
    rb_friction_state_init(&s);
    for (double t = 0; t < 120; t += 0.7) {
        bool stuck = true;
        double F = rb_friction_step(&cvm, &s, t, 1e-3, 0.2, 0, &stuck);
        CLOSE(F, (1 + 0.25 * sin(2 * M_PI * t / 60)) * (0.3 * tanh(20.0) + 0.1), 1e-14);
        cr_assert(!stuck);
    }
    /* LuGre of a robot worn to twice the friction: steady state twice the new robot's */
    rb_friction_model lm = lugre(0.3, 0.6, 0.5, 0.01, 1e4, 2);
    lm.drift = (rb_friction_drift){.s0 = 2, .s1 = 2};
    rb_friction_state_init(&s);
    double F = 0;
    for (int k = 0; k < 3000; k++)
        F = rb_friction_step(&lm, &s, k * 1e-3, 1e-3, 0.03, 0, NULL);
    CLOSE(F, 2 * rb_friction_eval(&lm, 0.03), 1e-12);
    /* stiction: the breakaway torque follows the ramp 1 -> 1.5 over 10 s */
    rb_friction_model sm = stiction(0.3, 0.5, 0, 1e-3, 0);
    sm.drift = (rb_friction_drift){.s0 = 1, .s1 = 1.5, .t0 = 0, .t1 = 10};
    rb_friction_state_init(&s);
    bool stuck;
    F = rb_friction_step(&sm, &s, 10.0, 1e-3, 0, 0.7, &stuck);
    cr_assert(stuck && F == 0.7, "held at t = 10 (F_s 0.75)");
    F = rb_friction_step(&sm, &s, 0.0, 1e-3, 0, 0.7, &stuck);
    cr_assert(!stuck, "breaks away at t = 0 (F_s 0.5)");
    CLOSE(F, 0.3, 1e-15);
}

/* ---- no allocation ---------------------------------------------------------------------------------- */

Test(friction_dynamic, per_sample_functions_allocate_nothing)
{
    if (!test_alloc_count_works())
        cr_skip_test("under valgrind, which replaces malloc itself, C-library allocations are not counted");
    test_alloc_count_init();
    rb_friction_model models[6];
    const char *names[] = {"none", "coulomb_viscous", "scv", "tanh6", "lugre", "stiction"};
    const double params[6][6] = {{0},
                                 {0.3, 0.5, 0.01},
                                 {0.3, 0.6, 0.5, 0.01, 0.001},
                                 {0.7, 100, 10, 0.6, 100, 0.9},
                                 {0.3, 0.6, 0.5, 0.01, 1e5, 2},
                                 {0.3, 0.6, 0.5, 1e-3, 0.01}};
    const size_t counts[6] = {0, 3, 5, 6, 6, 5};
    for (int i = 0; i < 6; i++) {
        rb_err err;
        cr_assert_eq(rb_friction_build(names[i], params[i], counts[i], &models[i], &err), RB_OK, "%s", err.msg);
        models[i].drift = (rb_friction_drift){.s0 = 1, .s1 = 1.2, .t1 = 1, .amplitude = 0.1, .period = 0.3};
    }
    volatile double sink = 0;
    test_alloc_counting = 1;
    test_alloc_count = 0;
    for (int i = 0; i < 6; i++) {
        rb_friction_state s;
        rb_friction_state_init(&s);
        for (int k = 0; k < 2000; k++) {
            double t = k * 1e-3, v = 0.4 * sin(7 * t), phi[3];
            rb_friction_model now;
            bool stuck;
            rb_friction_at_time(&models[i], t, &now);
            sink += rb_friction_eval(&models[i], v) + rb_friction_slope(&models[i], v);
            sink += rb_friction_step(&models[i], &s, t, 1e-3, v, 0.7 * cos(3 * t), &stuck);
            sink += rb_friction_drift_scale(&models[i].drift, t) + rb_friction_sign(v, 0.01);
            sink += (double)rb_friction_regressor(&now, v, phi);
        }
    }
    long made = test_alloc_count;
    test_alloc_counting = 0;
    cr_assert_eq(made, 0, "%ld allocations in the per-sample functions", made);
    cr_assert(isfinite(sink));
}
