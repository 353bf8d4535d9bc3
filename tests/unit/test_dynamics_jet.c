/* lib/dynamics jet engines (seed 004 section III-B, PAPERS.md 4.1 and 4.5). Checked against independent forms:
 *   - the partials by central differences at many (T, T_dot, u) of every preset;
 *   - the step by the model and the plugin's scheme written again here from the coefficient vector, and by its
 *     convergence as dt halves;
 *   - each preset's steady thrust against the equilibrium of the model solved in closed form, and the facts
 *     PAPERS.md 4.5 states (P100 threshold and thrust at 80, the P220 sets at throttle 0). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "roboest/dynamics.h"

/* a small deterministic generator (splitmix64) so the points do not depend on another helper */
static double uniform(uint64_t *s, double lo, double hi)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return lo + (hi - lo) * (double)(z >> 11) / 9007199254740992.0;
}

static rb_jet_params preset(size_t i)
{
    rb_jet_params p;
    rb_err err = {0};
    const char *name = rb_jet_preset_name(i);
    cr_assert_not_null(name);
    cr_assert_eq(rb_jet_preset(name, &p, NULL, &err), RB_OK, "%s: %s", name, err.msg);
    return p;
}

/* the model again, from the anchor-ordered vector [K_T, K_TT, K_D, K_DD, K_TD, B_U, B_T, B_D, B_UU, c] */
static void theta_of(const rb_jet_params *p, double th[10])
{
    const double v[10] = {p->K_T, p->K_TT, p->K_D, p->K_DD, p->K_TD, p->B_U, p->B_T, p->B_D, p->B_UU, p->c};
    memcpy(th, v, sizeof v);
}

static double ref_accel(const double th[10], double T, double D, double u)
{
    double dJ = th[0] * T + th[1] * T * T + th[2] * D + th[3] * D * D + th[4] * T * D + th[9];
    double gJ = th[5] + th[6] * T + th[7] * D;
    return dJ + gJ * (u + th[8] * u * u);
}

static void ref_step(const double th[10], double T_max, double u, double dt, double *T, double *D)
{
    double a = ref_accel(th, *T, *D, u);
    double T1 = *T + dt * *D + a * dt * dt / 2, D1 = *D + dt * a;
    if (T1 < 0)
        T1 = 0, D1 = fmax(D1, 0);
    if (T1 > T_max)
        T1 = T_max, D1 = fmin(D1, 0);
    *T = T1, *D = D1;
}

/* from (T, T_dot) at throttle u for `seconds` with rb_jet_step */
static void run(const rb_jet_params *p, double u, double seconds, double dt, double *T, double *D)
{
    long n = lround(seconds / dt);
    for (long k = 0; k < n; k++)
        rb_jet_step(p, u, dt, T, D);
}

/* The steady thrust from rest at throttle u, in closed form: with T_dot = 0 the model's T_ddot is the quadratic
 * K_TT T^2 + (K_T + B_T v) T + c + B_U v. At rest it pushes T up only where positive at T = 0; T then settles at
 * the quadratic's positive root (K_TT < 0 for every preset), or at T_max. */
static double steady_from_rest(const rb_jet_params *p, double u)
{
    double v = u + p->B_UU * u * u, a = p->K_TT, b = p->K_T + p->B_T * v, c = p->c + p->B_U * v;
    if (c <= 0)
        return 0;
    cr_assert_lt(a, 0);
    double r = (-b - sqrt(b * b - 4 * a * c)) / (2 * a);
    return fmin(r, p->T_max);
}

Test(dynamics_jet, presets_named_with_source_and_range)
{
    cr_assert_eq(rb_jet_preset_count(), 4);
    cr_assert_null(rb_jet_preset_name(rb_jet_preset_count()));
    const char *want[4] = {"ironcub_p100", "ironcub_p160", "ironcub_p220_simulink", "ironcub_p220_gazebo"};
    const double T_max[4] = {100, 160, 220, 220};
    for (size_t i = 0; i < 4; i++) {
        cr_assert_str_eq(rb_jet_preset_name(i), want[i]);
        rb_jet_params p;
        const char *src = NULL;
        rb_err err = {0};
        cr_assert_eq(rb_jet_preset(want[i], &p, &src, &err), RB_OK, "%s", err.msg);
        cr_assert_not_null(src);
        cr_assert(strstr(src, "ironcub-mk1-software@36e4586"), "%s", src);
        cr_assert_eq(p.u_min, 0);
        cr_assert_eq(p.u_max, 120);
        cr_assert_eq(p.T_max, T_max[i], "%s", want[i]);
        cr_assert_lt(p.K_TT, 0, "%s", want[i]);
    }
}

Test(dynamics_jet, unknown_preset_refused_with_suggestion)
{
    rb_jet_params p;
    memset(&p, 0x5a, sizeof p);
    rb_jet_params before = p;
    rb_err err = {0};
    cr_assert_eq(rb_jet_preset("ironcub_p220_gazeb", &p, NULL, &err), RB_ENOTFOUND);
    cr_assert(strstr(err.msg, "'ironcub_p220_gazeb'") && strstr(err.msg, "did you mean 'ironcub_p220_gazebo'"), "%s",
              err.msg);
    cr_assert_null(strchr(err.msg, '\n'));
    cr_assert_eq(memcmp(&p, &before, sizeof p), 0, "output written on failure");
    cr_assert_eq(rb_jet_preset("P160", &p, NULL, &err), RB_ENOTFOUND);
    cr_assert(strstr(err.msg, "ironcub_p160"), "%s", err.msg);
    cr_assert_eq(rb_jet_preset("turbojet_xyz", &p, NULL, &err), RB_ENOTFOUND);
    cr_assert(strstr(err.msg, "'turbojet_xyz'") && strstr(err.msg, "ironcub_p100"), "%s", err.msg);
    cr_assert_eq(rb_jet_preset("turbojet_xyz", &p, NULL, NULL), RB_ENOTFOUND);
}

Test(dynamics_jet, accel_matches_the_formula_written_again)
{
    uint64_t s = 4;
    for (size_t i = 0; i < rb_jet_preset_count(); i++) {
        rb_jet_params p = preset(i);
        double th[10];
        theta_of(&p, th);
        for (int k = 0; k < 500; k++) {
            double T = uniform(&s, 0, p.T_max), D = uniform(&s, -100, 100), u = uniform(&s, 0, 120);
            double want = ref_accel(th, T, D, u), got = rb_jet_accel(&p, T, D, u);
            cr_assert_leq(fabs(got - want), 1e-12 * (1 + fabs(want)), "%s (%g, %g, %g): %.17g vs %.17g",
                          rb_jet_preset_name(i), T, D, u, got, want);
        }
    }
}

Test(dynamics_jet, partials_match_central_differences)
{
    uint64_t s = 1;
    for (size_t i = 0; i < rb_jet_preset_count(); i++) {
        rb_jet_params p = preset(i);
        for (int k = 0; k < 1000; k++) {
            double x[3] = {uniform(&s, 0, p.T_max), uniform(&s, -100, 100), uniform(&s, 0, 120)}, d[3];
            rb_jet_accel_partials(&p, x[0], x[1], x[2], d);
            for (int j = 0; j < 3; j++) {
                double h = 1e-4 * (1 + fabs(x[j])), xp[3], xm[3];
                memcpy(xp, x, sizeof x), memcpy(xm, x, sizeof x);
                xp[j] += h, xm[j] -= h;
                double fd =
                    (rb_jet_accel(&p, xp[0], xp[1], xp[2]) - rb_jet_accel(&p, xm[0], xm[1], xm[2])) / (xp[j] - xm[j]);
                cr_assert_leq(fabs(d[j] - fd), 1e-6 * fmax(fabs(d[j]), 1), "%s d[%d] at (%g, %g, %g): %.12g vs %.12g",
                              rb_jet_preset_name(i), j, x[0], x[1], x[2], d[j], fd);
            }
        }
    }
}

/* A throttle changing every 0.5 s over [0, 120] with full-on and off stretches, so both clamps act (the first off
 * stretch is 40 s: the P160 set takes about 36 s to shut off from 80). */
Test(dynamics_jet, step_matches_independent_integration)
{
    const double dt = 1e-3;
    for (size_t i = 0; i < rb_jet_preset_count(); i++) {
        rb_jet_params p = preset(i);
        double th[10];
        theta_of(&p, th);
        uint64_t s = 7 + i;
        double T = 0, D = 0, Tr = 0, Dr = 0, u = 0;
        long at_zero = 0, at_max = 0;
        for (long k = 0; k < 120000; k++) {
            if (k % 500 == 0) {
                long seg = k / 500;
                u = seg < 8 ? 120 : seg < 88 ? 0 : seg % 60 < 8 ? 120 : seg % 60 < 28 ? 0 : uniform(&s, 0, 120);
            }
            rb_jet_step(&p, u, dt, &T, &D);
            ref_step(th, p.T_max, u, dt, &Tr, &Dr);
            cr_assert_leq(fabs(T - Tr), 1e-9 * (1 + fabs(Tr)), "%s step %ld: T %.17g vs %.17g", rb_jet_preset_name(i),
                          k, T, Tr);
            cr_assert_leq(fabs(D - Dr), 1e-9 * (1 + fabs(Dr)), "%s step %ld: T_dot %.17g vs %.17g",
                          rb_jet_preset_name(i), k, D, Dr);
            at_zero += Tr == 0, at_max += Tr == p.T_max;
        }
        /* the P220 Simulink set never reaches 0 once running (PAPERS.md 4.5): only its T_max clamp is exercised */
        if (strcmp(rb_jet_preset_name(i), "ironcub_p220_simulink") != 0)
            cr_assert_gt(at_zero, 0, "%s never clamped at 0", rb_jet_preset_name(i));
        cr_assert_gt(at_max, 0, "%s never clamped at T_max", rb_jet_preset_name(i));
    }
}

/* The scheme is first order in dt (T_dot by explicit Euler): halving dt halves the change of the response. */
Test(dynamics_jet, step_response_converges_as_dt_halves)
{
    for (size_t i = 0; i < rb_jet_preset_count(); i++) {
        rb_jet_params p = preset(i);
        double T[4][201];
        for (int r = 0; r < 4; r++) {
            double dt = 0.01 / (1 << r), Tc = 0, D = 0;
            T[r][0] = Tc;
            long per = 1L << r; /* steps per 0.01 s; sample every 0.1 s */
            for (int m = 1; m <= 200; m++) {
                for (long k = 0; k < 10 * per; k++)
                    rb_jet_step(&p, 80, dt, &Tc, &D);
                T[r][m] = Tc;
            }
        }
        double e[3] = {0, 0, 0};
        for (int r = 0; r < 3; r++)
            for (int m = 0; m <= 200; m++)
                e[r] = fmax(e[r], fabs(T[r][m] - T[r + 1][m]));
        cr_log_info("jet %s, throttle 80, 20 s: max |T(dt) - T(dt/2)| = %.3g, %.3g, %.3g N for dt = 10, 5, 2.5 ms",
                    rb_jet_preset_name(i), e[0], e[1], e[2]);
        cr_assert_gt(e[0], 0);
        for (int r = 0; r < 2; r++) {
            double ratio = e[r] / e[r + 1];
            cr_assert(ratio > 1.6 && ratio < 2.5, "%s: ratio %g", rb_jet_preset_name(i), ratio);
        }
        cr_assert_lt(e[2], 0.05 * T[3][200], "%s", rb_jet_preset_name(i));
    }
}

/* Steady thrust from rest after 30 s at throttles 0, 40, 80, 120: the closed-form equilibrium, logged. */
Test(dynamics_jet, step_responses_reach_the_model_equilibrium)
{
    const double u[4] = {0, 40, 80, 120};
    for (size_t i = 0; i < rb_jet_preset_count(); i++) {
        rb_jet_params p = preset(i);
        double Ts[4];
        for (int k = 0; k < 4; k++) {
            double T = 0, D = 0;
            run(&p, u[k], 30, 1e-3, &T, &D);
            Ts[k] = T;
            double want = steady_from_rest(&p, u[k]);
            cr_assert_leq(fabs(T - want), 1e-3 * (1 + want), "%s at %g: %.6g N, equilibrium %.6g N",
                          rb_jet_preset_name(i), u[k], T, want);
            cr_assert_leq(fabs(D), 1e-3, "%s at %g: not steady after 30 s (T_dot %g)", rb_jet_preset_name(i), u[k], D);
        }
        cr_log_info("jet %-22s steady thrust from rest (30 s) at throttle 0/40/80/120: %.2f %.2f %.2f %.2f N",
                    rb_jet_preset_name(i), Ts[0], Ts[1], Ts[2], Ts[3]);
        for (int k = 1; k < 4; k++)
            cr_assert_gt(Ts[k], Ts[k - 1], "%s: thrust not increasing with throttle", rb_jet_preset_name(i));
    }
}

/* PAPERS.md 4.5: the P100 gives no thrust below a throttle of about 28 and about 52 N at 80. */
Test(dynamics_jet, p100_threshold_and_thrust_at_80)
{
    rb_jet_params p;
    cr_assert_eq(rb_jet_preset("ironcub_p100", &p, NULL, NULL), RB_OK);
    double T = 0, D = 0;
    run(&p, 80, 30, 1e-3, &T, &D);
    cr_log_info("P100 at throttle 80: %.2f N", T);
    cr_assert(T > 48 && T < 56, "P100 at 80: %g N", T);
    /* the lowest throttle that gives thrust, by bisection on the simulated 30 s response */
    double lo = 0, hi = 80;
    for (int it = 0; it < 30; it++) {
        double mid = 0.5 * (lo + hi);
        T = 0, D = 0;
        run(&p, mid, 30, 1e-3, &T, &D);
        *(T > 0 ? &hi : &lo) = mid;
    }
    cr_log_info("P100 thrust threshold: throttle %.3f", hi);
    cr_assert(hi > 26 && hi < 30, "P100 threshold %g", hi);
}

/* Where T settles at throttle 0 coming down from a running engine, in closed form: the larger root of the
 * T_dot = 0 quadratic (the stable one, with K_TT < 0) if there is a positive one, else 0 (the engine shuts off). */
static double rest_after_cut(const rb_jet_params *p)
{
    double a = p->K_TT, b = p->K_T, c = p->c, disc = b * b - 4 * a * c;
    if (disc < 0)
        return 0;
    return fmax((-b - sqrt(disc)) / (2 * a), 0);
}

/* PAPERS.md 4.5: after running, the P220 Simulink set rests near 15 N with throttle 0 (still about 12 N 20 s after
 * the cut); the P220 Gazebo set shuts off cleanly. From rest at throttle 0 every set stays at 0. */
Test(dynamics_jet, throttle_cut_after_running)
{
    for (size_t i = 0; i < rb_jet_preset_count(); i++) {
        rb_jet_params p = preset(i);
        const char *name = rb_jet_preset_name(i);
        double T = 0, D = 0;
        run(&p, 0, 30, 1e-3, &T, &D);
        cr_assert_eq(T, 0, "%s from rest at 0: %g N", name, T);
        run(&p, 80, 30, 1e-3, &T, &D);
        double on = T, t_off = -1, at20 = 0;
        for (long k = 1; k <= 60000; k++) {
            rb_jet_step(&p, 0, 1e-3, &T, &D);
            if (T == 0 && t_off < 0)
                t_off = k * 1e-3;
            if (k == 20000)
                at20 = T;
        }
        double want = rest_after_cut(&p);
        cr_log_info("jet %-22s %.2f N at throttle 80; throttle 0: %.2f N after 20 s, %.2f N after 60 s (closed form "
                    "%.2f N), off after %.2f s",
                    name, on, at20, T, want, t_off);
        cr_assert_leq(fabs(T - want), 1e-3 * (1 + want), "%s 60 s after the cut: %g N, closed form %g N", name, T,
                      want);
        if (strcmp(name, "ironcub_p220_simulink") == 0) {
            cr_assert(at20 > 10 && at20 < 20, "%s 20 s after the cut: %g N", name, at20);
            cr_assert(T > 12 && T < 18, "%s 60 s after the cut: %g N", name, T);
        }
        if (strcmp(name, "ironcub_p220_gazebo") == 0)
            cr_assert(t_off > 0 && t_off < 5, "%s off after %g s", name, t_off);
    }
}

Test(dynamics_jet, clamping_holds)
{
    uint64_t s = 11;
    for (size_t i = 0; i < rb_jet_preset_count(); i++) {
        rb_jet_params p = preset(i);
        int low = 0, high = 0;
        for (int k = 0; k < 20000; k++) {
            double T = uniform(&s, 0, p.T_max), D = uniform(&s, -500, 500), u = uniform(&s, 0, 120);
            double dt = uniform(&s, 1e-4, 0.05);
            if (k % 4 == 0)
                T = k % 8 ? 0 : p.T_max;
            rb_jet_step(&p, u, dt, &T, &D);
            cr_assert(T >= 0 && T <= p.T_max, "%s: T %g", rb_jet_preset_name(i), T);
            if (T == 0) {
                cr_assert_geq(D, 0, "%s: T_dot %g at T = 0", rb_jet_preset_name(i), D);
                low++;
            }
            if (T == p.T_max) {
                cr_assert_leq(D, 0, "%s: T_dot %g at T_max", rb_jet_preset_name(i), D);
                high++;
            }
        }
        cr_assert(low > 100 && high > 100, "%s: clamps hit %d, %d times", rb_jet_preset_name(i), low, high);
    }
}
