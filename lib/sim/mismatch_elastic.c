/* lib/sim: series-elastic joints of the plant-model mismatch (roboest/sim_mismatch.h, "elastic"): the rotor behind
 * the flexspline as a state of its own, the spring's torque on the link. The rotor's angle and velocity are RK4
 * states beside the link's: every stage of the link's RK4 sees the spring at the stage's state. */
#include <math.h>
#include <string.h>

#include "sim_internal.h"

int sim_elastic_init(rb_sim *s, rb_err *err)
{
    if (!(s->mmd.stiffness > 0))
        return RB_OK;
    size_t n = s->n ? s->n : 1;
    s->el_th = rb_calloc(n, sizeof *s->el_th);
    s->el_thd = rb_calloc(n, sizeof *s->el_thd);
    s->tau_s = rb_calloc(n, sizeof *s->tau_s);
    s->el_k = rb_calloc(8 * n, sizeof *s->el_k);
    if (!s->el_th || !s->el_thd || !s->tau_s || !s->el_k)
        return rb_err_set(err, RB_ENOMEM, "sim: out of memory");
    for (size_t j = 0; j < s->n; j++)
        if (s->arm_v[s->voff + j] > 0)
            s->arm_v[s->voff + j] = 0.0; /* the rotor leaves the link's mass matrix: it is behind the spring */
    return RB_OK;
}

/* Elastic: a rotor to put behind the spring, and a step that resolves the joint's fastest mode (decided at the first
 * sample: sqrt(K (1 / B + 1 / M_j)) dt < 2 and D (1 / B + 1 / M_j) dt < 1, inside RK4's and semi-implicit Euler's
 * stable ranges, M_j = 1 / (M^-1)_jj the link's apparent
 * inertia with every other coordinate free; a light link, e.g. a wrist, has its mode above what the step resolves
 * and stays rigid). el_thd holds NAN for a rigid joint. */
static bool elastic(const rb_sim *s, size_t j) { return s->el_thd[j] == s->el_thd[j]; }

static double spring(const rb_sim *s, double th, double thd, double q, double qd)
{
    return s->mmd.stiffness * (th - q) + s->mmd.damping * (thd - qd);
}

void sim_elastic_sample(rb_sim *s)
{
    if (!s->tau_s)
        return;
    const double *sq = s->q + (s->nq - s->n), *sv = s->nu + s->voff;
    double K = s->mmd.stiffness, dt = s->sc.dt;
    for (size_t j = 0; j < s->n; j++) {
        size_t v = s->voff + j;
        if (s->step == 0) { /* a loop already running: the spring carries the first motor torque */
            /* (M^-1)_vv = |L^-T e_v|^2 in the tree order, L the first sample's factor (rotors already off) */
            memset(s->tmp, 0, s->nv * sizeof *s->tmp);
            s->tmp[s->vpos[v]] = 1.0;
            tree_solve_lt(s->L, s->vpar, s->nv, s->tmp);
            double B = act_armature(&s->act[j]), inv_m = sim_dot(s->tmp, s->tmp, s->nv);
            double c = (1.0 / B + inv_m) * dt; /* the explicit damping's stability as well */
            bool ok = B > 0 && K * c * dt < 4.0 && s->mmd.damping * c < 1.0;
            s->el_th[j] = sq[j] + s->tau_m[j] / K;
            s->el_thd[j] = ok ? sv[j] : NAN;
            if (!ok)
                s->arm_v[v] = B; /* rigid after all: the rotor back on the link */
        }
        s->tau_s[j] = elastic(s, j) ? spring(s, s->el_th[j], s->el_thd[j], sq[j], sv[j]) : s->tau_m[j];
    }
}

/* Stage st (1..3) of the link's RK4 at (qs, nus), h = c_st dt: the rotors' stage state from stage st - 1's slopes,
 * the spring's torque into tau_net. Stage 0 is the sample's (sim_elastic_sample). */
void sim_elastic_stage(rb_sim *s, int st, double h)
{
    if (!s->tau_s)
        return;
    size_t n = s->n;
    double *kth = s->el_k, *kthd = s->el_k + 4 * n; /* slopes of theta and theta_dot per stage */
    const double *q = s->qs + (s->nq - n), *qd = s->nus + s->voff;
    for (size_t j = 0; j < n; j++) {
        if (!elastic(s, j))
            continue;
        double B = act_armature(&s->act[j]);
        if (st == 1)
            kth[j] = s->el_thd[j], kthd[j] = (s->tau_m[j] - s->tau_s[j]) / B;
        double th = s->el_th[j] + h * kth[(size_t)(st - 1) * n + j];
        double thd = s->el_thd[j] + h * kthd[(size_t)(st - 1) * n + j];
        double ts = spring(s, th, thd, q[j], qd[j]);
        kth[(size_t)st * n + j] = thd, kthd[(size_t)st * n + j] = (s->tau_m[j] - ts) / B;
        s->tau_net[j] = ts - (s->held[j] ? 0.0 : s->tau_f[j]);
    }
}

void sim_elastic_advance(rb_sim *s)
{
    if (!s->tau_s)
        return;
    size_t n = s->n;
    double dt = s->sc.dt, *kth = s->el_k, *kthd = s->el_k + 4 * n;
    for (size_t j = 0; j < n; j++) {
        if (!elastic(s, j))
            continue;
        if (s->sc.method != RB_SIM_RK4) { /* semi-implicit Euler, as the link: velocity first */
            s->el_thd[j] += dt * (s->tau_m[j] - s->tau_s[j]) / act_armature(&s->act[j]);
            s->el_th[j] += dt * s->el_thd[j];
            continue;
        }
        s->el_th[j] += dt * (kth[j] + 2 * kth[n + j] + 2 * kth[2 * n + j] + kth[3 * n + j]) / 6.0;
        s->el_thd[j] += dt * (kthd[j] + 2 * kthd[n + j] + 2 * kthd[2 * n + j] + kthd[3 * n + j]) / 6.0;
    }
}
