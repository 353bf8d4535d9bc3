/* lib/dynamics jet engines: the steady-state inversion the flight controller uses (rb_jet_steady_throttle) and the
 * throttle for a wanted thrust acceleration (rb_jet_throttle_for_accel). Checked by the forward maps they invert:
 *   - T_ss(u(T)) = T within 1e-6 N at about 4000 thrusts covering each preset's steady range [T_ss(u_min),
 *     T_ss(u_max)], the throttle inside [u_min, u_max] and non-decreasing in T; outside the range the throttle's
 *     ends;
 *   - rb_jet_accel(T, T_dot, u(T, T_dot, T_ddot)) = T_ddot at random states whose throttle lies inside the range,
 *     and the steady case u(T, 0, 0) = the steady throttle. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

#include "roboest/dynamics.h"

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

/* Thrusts of the range: the steady thrusts of 2001 throttles over [u_min, u_max] and the midpoints between
 * neighbours closer than 1 N (the P160's steady thrust jumps from 0 to about 6 N: no rest point in between). */
Test(dynamics_jet_steady, steady_thrust_of_the_steady_throttle_is_the_thrust)
{
    cr_assert_geq(rb_jet_preset_count(), 4);
    for (size_t i = 0; i < rb_jet_preset_count(); i++) {
        rb_jet_params p = preset(i);
        const char *name = rb_jet_preset_name(i);
        double T_lo = rb_jet_steady_thrust(&p, p.u_min), T_hi = rb_jet_steady_thrust(&p, p.u_max), u_prev = -INFINITY;
        cr_assert_gt(T_hi - T_lo, 50.0, "%s: a usable range (%g .. %g N)", name, T_lo, T_hi);
        double worst = 0.0, T_prev = NAN;
        int checked = 0;
        for (int k = 0; k <= 2000; k++) {
            double Tk = rb_jet_steady_thrust(&p, p.u_min + (p.u_max - p.u_min) * k / 2000.0);
            double Ts[2] = {0.5 * (T_prev + Tk), Tk};
            for (int h = k == 0 || !(Tk - T_prev < 1.0); h < 2; h++) {
                double T = Ts[h], u = rb_jet_steady_throttle(&p, T);
                cr_assert(u >= p.u_min && u <= p.u_max, "%s: T %g N: throttle %g outside the range", name, T, u);
                cr_assert_geq(u, u_prev, "%s: T %g N: throttle %g below %g of a smaller thrust", name, T, u, u_prev);
                double e = fabs(rb_jet_steady_thrust(&p, u) - T);
                worst = e > worst ? e : worst;
                cr_assert_lt(e, 1e-6, "%s: T %g N: T_ss(u(T)) = %.12g (u %.12g)", name, T, rb_jet_steady_thrust(&p, u),
                             u);
                u_prev = u;
                checked++;
            }
            T_prev = Tk;
        }
        cr_assert_gt(checked, 3000, "%s", name);
        cr_log_info("%s: steady range %.3f .. %.3f N, worst |T_ss(u(T)) - T| %.3g N over %d thrusts", name, T_lo, T_hi,
                    worst, checked);
        cr_assert_eq(rb_jet_steady_throttle(&p, T_lo - 1.0), p.u_min, "%s", name);
        cr_assert_eq(rb_jet_steady_throttle(&p, -5.0), p.u_min, "%s", name);
        cr_assert_eq(rb_jet_steady_throttle(&p, T_hi + 1.0), p.u_max, "%s", name);
    }
}

Test(dynamics_jet_steady, throttle_for_an_acceleration_gives_that_acceleration)
{
    uint64_t seed = 4004;
    for (size_t i = 0; i < rb_jet_preset_count(); i++) {
        rb_jet_params p = preset(i);
        const char *name = rb_jet_preset_name(i);
        int inside = 0;
        for (int k = 0; k < 3000; k++) {
            double T = uniform(&seed, 0.0, p.T_max), D = uniform(&seed, -40.0, 40.0), A = uniform(&seed, -80, 80);
            double u = rb_jet_throttle_for_accel(&p, T, D, A);
            if (!(p.B_U + p.B_T * T + p.B_D * D > 0)) {
                cr_assert(isnan(u), "%s: g <= 0 gives NaN", name);
                continue;
            }
            cr_assert(u >= p.u_min && u <= p.u_max, "%s: throttle %g outside the range", name, u);
            if (u == p.u_min || u == p.u_max)
                continue; /* clamped */
            inside++;
            double a = rb_jet_accel(&p, T, D, u);
            cr_assert_lt(fabs(a - A), 1e-8 * (1 + fabs(A)), "%s: T %g T_dot %g: T_ddot %.12g, asked %.12g", name, T, D,
                         a, A);
        }
        cr_assert_gt(inside, 300, "%s: enough points inside the throttle range (%d)", name, inside);
        double T = 0.5 * (rb_jet_steady_thrust(&p, p.u_min) + rb_jet_steady_thrust(&p, p.u_max));
        cr_assert_lt(fabs(rb_jet_throttle_for_accel(&p, T, 0, 0) - rb_jet_steady_throttle(&p, T)), 1e-9, "%s", name);
    }
}
