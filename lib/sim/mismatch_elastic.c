/* lib/sim: series-elastic joints of the plant-model mismatch (roboest/sim_mismatch.h, "elastic"): the rotor behind
 * the flexspline as a state of its own, the spring's torque on the link. The spring is implicit over the step (its
 * torque at the step's end state, predicted with the sample's mass matrix): a harmonic drive's catalogue stiffness
 * puts the rotor-link mode of a light link above what a 1 ms explicit step resolves (and the modes of a chain are
 * faster than any one joint's, and move with the configuration), which diverged within 0.05 s. */
#include <math.h>
#include <string.h>

#include "sim_internal.h"

int sim_elastic_init(rb_sim *s, rb_err *err)
{
    if (!(s->mmd.stiffness > 0))
        return RB_OK;
    size_t n = s->n ? s->n : 1, nv = s->nv ? s->nv : 1;
    s->el_th = rb_calloc(n, sizeof *s->el_th);
    s->el_thd = rb_calloc(n, sizeof *s->el_thd);
    s->tau_s = rb_calloc(n, sizeof *s->tau_s);
    s->el_k = rb_calloc(n * (nv + n + 1) + s->max_rows * 2 * n, sizeof *s->el_k);
    if (!s->el_th || !s->el_thd || !s->tau_s || !s->el_k)
        return rb_err_set(err, RB_ENOMEM, "sim: out of memory");
    for (size_t j = 0; j < s->n; j++)
        if (s->arm_v[s->voff + j] > 0)
            s->arm_v[s->voff + j] = 0.0; /* the rotor leaves the link's mass matrix: it is behind the spring */
    return RB_OK;
}

/* A joint without a rotor (J_m = 0) has nothing behind a spring and stays rigid: el_thd holds NAN. */
static bool elastic(const rb_sim *s, size_t j) { return s->el_thd[j] == s->el_thd[j]; }

static double spring(const rb_sim *s, double th, double thd, double q, double qd)
{
    return s->mmd.stiffness * (th - q) + s->mmd.damping * (thd - qd);
}

/* The spring at the sample's state: the torque of the sample's first solve (tau_s), from which sim_elastic_implicit
 * predicts the step's. */
void sim_elastic_sample(rb_sim *s)
{
    if (!s->tau_s)
        return;
    const double *sq = s->q + (s->nq - s->n), *sv = s->nu + s->voff;
    for (size_t j = 0; j < s->n; j++) {
        if (s->step == 0) { /* a loop already running: the spring carries the first motor torque */
            s->el_th[j] = sq[j] + s->tau_m[j] / s->mmd.stiffness;
            s->el_thd[j] = act_armature(&s->act[j]) > 0 ? sv[j] : NAN;
        }
        s->tau_s[j] = elastic(s, j) ? spring(s, s->el_th[j], s->el_thd[j], sq[j], sv[j]) : s->tau_m[j];
    }
}

/* The step's spring torques tau' (after the sample's solve with tau_s, nu_dot = a_e): the spring at the mean of
 * the sample's windup and the predicted end one, the damper at the end (r = theta - s moving as r' = r + dt r_dot +
 * g dt^2 rho, r_dot' = r_dot + dt rho with rho = tau_m / B - a_e + W (tau_s - tau'), W = (M^-1) on the elastic
 * joints, the rotors off, constrained by the sample's contacts and held joints as its solve was: a link in
 * contact responds far less than free), g = 1 semi-implicit Euler, 1/2 RK4 (the torque constant over the stages: Newmark's average
 * acceleration, which keeps a mode's energy). tau' = K (r + r') / 2 + D r_dot' is linear:
 * (1 + c (B^-1 + W)) tau' = K (r + (dt r_dot + g dt^2 u) / 2) + D (r_dot + dt u), u = tau_m / B - a_e + W tau_s,
 * c = g K dt^2 / 2 + D dt. Stable at any stiffness; with the link's semi-implicit Euler a mode is damped by about
 * omega dt / 4 of critical (the least that stays stable at any omega dt). Returns whether tau_s changed (the caller
 * solves again); the joints' tau_net follow. */
/* W -= Z^T S^-1 Z, Z = Y_rows^T y (the sample's last solve's rows and Cholesky factor S; slipping contacts, whose
 * system is not symmetric: W stays the free links', an overestimate). */
static void constrain(rb_sim *s, const double *Y, size_t m, double *W, double *Z)
{
    size_t rows = 0, nv = s->nv;
    for (size_t k = 0; k < s->nc; k++)
        rows += s->active[k] ? (size_t)s->contacts[k].dim : 0;
    if (s->fr && rows > 0)
        return;
    for (size_t j = 0; j < s->n; j++)
        rows += s->held[j] != 0;
    if (rows == 0)
        return;
    double *z = Z + rows * m;
    for (size_t a = 0; a < m; a++)
        for (size_t r = 0; r < rows; r++)
            Z[a * rows + r] = sim_dot(s->Y + r * nv, Y + a * nv, nv);
    for (size_t a = 0; a < m; a++) {
        memcpy(z, Z + a * rows, rows * sizeof *z);
        sim_chol_solve(s->S, rows, z);
        for (size_t b = 0; b <= a; b++)
            W[a * m + b] = W[b * m + a] = W[a * m + b] - sim_dot(Z + b * rows, z, rows);
    }
}

bool sim_elastic_implicit(rb_sim *s)
{
    if (!s->tau_s)
        return false;
    size_t n = s->n, nv = s->nv, vo = s->voff, m = 0;
    bool rk4 = s->sc.method == RB_SIM_RK4;
    double K = s->mmd.stiffness, D = s->mmd.damping, dt = s->sc.dt, g = rk4 ? 0.5 : 1.0, be = rk4 ? 1.0 : 0.5;
    double *Y = s->el_k, *A = Y + n * nv, *x = A + n * n, c = be * g * K * dt * dt + D * dt;
    for (size_t j = 0; j < n; j++) {
        if (!elastic(s, j))
            continue;
        double *y = Y + m++ * nv; /* (M^-1)_ab = (L^-T e_a) . (L^-T e_b) */
        memset(y, 0, nv * sizeof *y);
        y[s->vpos[vo + j]] = 1.0;
        tree_solve_lt(s->L, s->vpar, nv, y);
    }
    if (m == 0)
        return false;
    for (size_t a = 0; a < m; a++)
        for (size_t b = 0; b <= a; b++)
            A[a * m + b] = A[b * m + a] = sim_dot(Y + a * nv, Y + b * nv, nv);
    constrain(s, Y, m, A, x + n);
    const double *sq = s->q + (s->nq - n), *sv = s->nu + vo;
    for (size_t j = 0, a = 0; j < n; j++) {
        if (!elastic(s, j))
            continue;
        double B = act_armature(&s->act[j]), u = s->tau_m[j] / B - s->nu_dot[vo + j];
        for (size_t j2 = 0, b = 0; j2 < n; j2++)
            if (elastic(s, j2))
                u += A[a * m + b++] * s->tau_s[j2];
        double r = s->el_th[j] - sq[j], rd = s->el_thd[j] - sv[j];
        x[a++] = K * (r + be * (dt * rd + g * dt * dt * u)) + D * (rd + dt * u);
    }
    for (size_t j = 0, a = 0; j < n; j++) {
        if (!elastic(s, j))
            continue;
        for (size_t b = 0; b < m; b++)
            A[a * m + b] *= c;
        A[a * m + a] += 1.0 + c / act_armature(&s->act[j]);
        a++;
    }
    if (!sim_chol(A, m)) /* SPD by construction; round-off: keep the explicit spring */
        return false;
    sim_chol_solve(A, m, x);
    for (size_t j = 0, a = 0; j < n; j++) {
        if (!elastic(s, j))
            continue;
        s->tau_s[j] = x[a++];
        s->tau_net[j] = s->tau_s[j] - (s->held[j] ? 0.0 : s->tau_f[j]);
    }
    return true;
}

/* The rotors over the step under the constant acceleration (tau_m - tau') / B: semi-implicit Euler (velocity
 * first, as the link), or exactly (RK4, whose link stages see the same constant torque). */
void sim_elastic_advance(rb_sim *s)
{
    if (!s->tau_s)
        return;
    double dt = s->sc.dt;
    for (size_t j = 0; j < s->n; j++) {
        if (!elastic(s, j))
            continue;
        double acc = (s->tau_m[j] - s->tau_s[j]) / act_armature(&s->act[j]);
        if (s->sc.method != RB_SIM_RK4) {
            s->el_thd[j] += dt * acc;
            s->el_th[j] += dt * s->el_thd[j];
        } else {
            s->el_th[j] += dt * s->el_thd[j] + 0.5 * dt * dt * acc;
            s->el_thd[j] += dt * acc;
        }
    }
}
