/* Jet engines (seed 004, section III-B; ../shared/design/PAPERS.md sections 4.1 and 4.5): the identified
 * second-order thrust model, its partial derivatives, the public simulator plugin's integration step and the public
 * coefficient sets (numbers only, each named by the file it comes from). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/core.h"
#include "roboest/dynamics.h"

#define ANCHOR "ami-iit/ironcub-mk1-software@36e4586, "

typedef struct jet_preset {
    const char *name;
    const char *source;
    rb_jet_params p;
} jet_preset;

/* Coefficients in the anchor's order [K_T, K_TT, K_D, K_DD, K_TD, B_U, B_T, B_D, B_UU, c]. The anchor's flight
 * controllers use 100 N for the P160 too (they alias it to the P100); 160 N is its rating, kept here so that a P160
 * scenario is not capped by the smaller engine's limit. */
static const jet_preset PRESETS[] = {
    {"ironcub_p100",
     ANCHOR "configJetControlParams.m (P100)",
     {-1.497225, -0.059093, -2.429288, 0.107146, 0.124828, 0.520267, 0.018470, -0.046559, 0.014813, -19.928301, 100.0,
      0.0, 120.0}},
    {"ironcub_p160",
     ANCHOR "configJetControlParams.m (P160)",
     {0.306530, -0.024867, -0.973422, 0.055786, 0.022618, 0.688710, 0.038025, -0.089879, -0.001393, -0.958953, 160.0,
      0.0, 120.0}},
    {"ironcub_p220_simulink",
     ANCHOR "thrust_estimation_v1.slx / Simulink (P220)",
     {0.237755, -0.012799, -0.860374, 0.023606, 0.008599, 1.139026, 0.019914, -0.050257, 0.000302, -0.692913, 220.0,
      0.0, 120.0}},
    {"ironcub_p220_gazebo",
     ANCHOR "Gazebo jets.ini (P220)",
     {-1.953561, -0.045804, 1.781593, 0.023776, -0.006976, 0.277460, 0.079341, -0.071026, 0.003995, -5.844843, 220.0,
      0.0, 120.0}},
};

#define N_PRESETS (sizeof PRESETS / sizeof PRESETS[0])

size_t rb_jet_preset_count(void) { return N_PRESETS; }

const char *rb_jet_preset_name(size_t i) { return i < N_PRESETS ? PRESETS[i].name : NULL; }

int rb_jet_preset(const char *name, rb_jet_params *out, const char **source, rb_err *err)
{
    if (!name)
        return rb_err_set(err, RB_EINVAL, "jet preset: no name given");
    rb_suggest s;
    rb_suggest_init(&s, name);
    char list[256];
    size_t used = 0;
    list[0] = '\0';
    for (size_t i = 0; i < N_PRESETS; i++) {
        if (strcmp(name, PRESETS[i].name) == 0) {
            *out = PRESETS[i].p;
            if (source)
                *source = PRESETS[i].source;
            return RB_OK;
        }
        rb_suggest_consider(&s, PRESETS[i].name);
        int w = snprintf(list + used, sizeof list - used, "%s'%s'", i ? ", " : "", PRESETS[i].name);
        if (w > 0 && (size_t)w < sizeof list - used)
            used += (size_t)w;
    }
    const char *best = rb_suggest_best(&s);
    if (best)
        return rb_err_set(err, RB_ENOTFOUND, "unknown jet preset '%s' (did you mean '%s'?)", name, best);
    return rb_err_set(err, RB_ENOTFOUND, "unknown jet preset '%s' (expected one of %s)", name, list);
}

double rb_jet_accel(const rb_jet_params *p, double T, double T_dot, double u)
{
    double d = p->K_T * T + p->K_TT * T * T + p->K_D * T_dot + p->K_DD * T_dot * T_dot + p->K_TD * T * T_dot + p->c;
    double g = p->B_U + p->B_T * T + p->B_D * T_dot;
    return d + g * (u + p->B_UU * u * u);
}

void rb_jet_accel_partials(const rb_jet_params *p, double T, double T_dot, double u, double d[3])
{
    double v = u + p->B_UU * u * u;
    d[0] = p->K_T + 2.0 * p->K_TT * T + p->K_TD * T_dot + p->B_T * v;
    d[1] = p->K_D + 2.0 * p->K_DD * T_dot + p->K_TD * T + p->B_D * v;
    d[2] = (p->B_U + p->B_T * T + p->B_D * T_dot) * (1.0 + 2.0 * p->B_UU * u);
}

void rb_jet_step(const rb_jet_params *p, double u, double dt, double *T, double *T_dot)
{
    double a = rb_jet_accel(p, *T, *T_dot, u);
    double T1 = *T + *T_dot * dt + 0.5 * a * dt * dt, Td1 = *T_dot + a * dt;
    if (T1 <= 0.0) {
        T1 = 0.0;
        if (Td1 < 0.0)
            Td1 = 0.0;
    } else if (T1 >= p->T_max) {
        T1 = p->T_max;
        if (Td1 > 0.0)
            Td1 = 0.0;
    }
    *T = T1;
    *T_dot = Td1;
}

double rb_jet_steady_thrust(const rb_jet_params *p, double u)
{
    /* T_dot = 0: K_TT T^2 + (K_T + B_T v) T + c + B_U v = 0 */
    double v = u + p->B_UU * u * u, a = p->K_TT, b = p->K_T + p->B_T * v, c = p->c + p->B_U * v, T;
    if (a == 0.0) {
        T = b != 0.0 ? -c / b : 0.0;
    } else {
        double disc = b * b - 4 * a * c;
        if (disc < 0)
            return 0.0;
        /* the larger root: there dT_ddot/dT = 2 a T + b < 0 when a < 0 (the stable rest point) */
        double r1 = (-b - sqrt(disc)) / (2 * a), r2 = (-b + sqrt(disc)) / (2 * a);
        T = r1 > r2 ? r1 : r2;
    }
    if (!(T > 0))
        return 0.0;
    return T < p->T_max ? T : p->T_max;
}

/* u with u + B_UU u^2 = v on the branch through u = 0 (the vertex when v is past it); written so that B_UU = 0
 * loses no digits. */
static double throttle_of_v(const rb_jet_params *p, double v)
{
    double disc = 1.0 + 4.0 * p->B_UU * v;
    if (disc < 0.0)
        return -0.5 / p->B_UU;
    return 2.0 * v / (1.0 + sqrt(disc));
}

static double clamp_throttle(const rb_jet_params *p, double u)
{
    return u < p->u_min ? p->u_min : u > p->u_max ? p->u_max : u;
}

double rb_jet_steady_throttle(const rb_jet_params *p, double T)
{
    double lo = p->u_min, hi = p->u_max, T_lo = rb_jet_steady_thrust(p, lo), T_hi = rb_jet_steady_thrust(p, hi);
    if (!(T > T_lo))
        return lo;
    if (!(T < T_hi))
        return hi;
    /* closed form: T_ddot = 0 at (T, 0) gives v; kept when it is the stable rest point of T */
    double g = p->B_U + p->B_T * T;
    if (g != 0.0) {
        double u = throttle_of_v(p, -(p->K_TT * T * T + p->K_T * T + p->c) / g);
        if (u >= lo && u <= hi && fabs(rb_jet_steady_thrust(p, u) - T) <= 1e-9 * (1.0 + T))
            return u;
    }
    /* otherwise bisection: T_ss is non-decreasing in u over the presets' ranges */
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (!(mid > lo && mid < hi))
            break;
        if (rb_jet_steady_thrust(p, mid) < T)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

double rb_jet_throttle_for_accel(const rb_jet_params *p, double T, double T_dot, double T_ddot)
{
    double d = p->K_T * T + p->K_TT * T * T + p->K_D * T_dot + p->K_DD * T_dot * T_dot + p->K_TD * T * T_dot + p->c;
    double g = p->B_U + p->B_T * T + p->B_D * T_dot;
    if (!(g > 0.0))
        return NAN;
    return clamp_throttle(p, throttle_of_v(p, (T_ddot - d) / g));
}
