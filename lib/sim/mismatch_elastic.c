/* lib/sim: series-elastic joints of the plant-model mismatch (roboest/sim_mismatch.h, "elastic"): the rotor behind
 * the flexspline as a state of its own, the spring's torque on the link. */
#include <math.h>
#include <string.h>

#include "sim_internal.h"

enum { SUBSTEPS = 10 }; /* the rotor mode (~150 Hz at the realistic stiffness) resolved within a 1 ms step */

int sim_elastic_init(rb_sim *s, rb_err *err)
{
    if (!(s->mmd.stiffness > 0))
        return RB_OK;
    size_t n = s->n ? s->n : 1;
    s->el_th = rb_calloc(n, sizeof *s->el_th);
    s->el_thd = rb_calloc(n, sizeof *s->el_thd);
    s->tau_s = rb_calloc(n, sizeof *s->tau_s);
    if (!s->el_th || !s->el_thd || !s->tau_s)
        return rb_err_set(err, RB_ENOMEM, "sim: out of memory");
    for (size_t j = 0; j < s->n; j++)
        if (s->arm_v[s->voff + j] > 0)
            s->arm_v[s->voff + j] = 0.0; /* the rotor leaves the link's mass matrix: it is behind the spring */
    return RB_OK;
}

/* Elastic: a rotor to put behind the spring, and a link side heavy enough for the step (decided at the first
 * sample from the diagonal of M(q): the link's mode sqrt(K / M_jj) under 1 / dt; a lighter link, e.g. a wrist, has
 * its mode above what the step resolves and stays rigid). el_thd holds NAN for a rigid joint. */
static bool elastic(const rb_sim *s, size_t j) { return s->el_thd[j] == s->el_thd[j]; }

void sim_elastic_sample(rb_sim *s)
{
    if (!s->tau_s)
        return;
    const double *sq = s->q + (s->nq - s->n), *sv = s->nu + s->voff;
    double K = s->mmd.stiffness, D = s->mmd.damping;
    double dt = s->sc.dt;
    for (size_t j = 0; j < s->n; j++) {
        size_t v = s->voff + j;
        if (s->step == 0) { /* a loop already running: the spring carries the first motor torque */
            bool heavy = s->Mraw[v * s->nv + v] > K * dt * dt;
            s->el_th[j] = sq[j] + s->tau_m[j] / K;
            s->el_thd[j] = act_armature(&s->act[j]) > 0 && heavy ? sv[j] : NAN;
            if (!elastic(s, j))
                s->arm_v[v] = act_armature(&s->act[j]); /* rigid after all: the rotor back on the link */
        }
        if (!elastic(s, j)) {
            s->tau_s[j] = s->tau_m[j];
            continue;
        }
        s->tau_s[j] = K * (s->el_th[j] - sq[j]) + D * (s->el_thd[j] - sv[j]);
    }
}

void sim_elastic_advance(rb_sim *s)
{
    if (!s->tau_s)
        return;
    size_t n = s->n, vo = s->voff;
    const double *sq = s->q + (s->nq - n), *sv = s->nu + vo, *sa = s->nu_dot + vo;
    double K = s->mmd.stiffness, D = s->mmd.damping, h = s->sc.dt / SUBSTEPS;
    for (size_t j = 0; j < n; j++) {
        if (!elastic(s, j))
            continue;
        double B = act_armature(&s->act[j]), th = s->el_th[j], thd = s->el_thd[j];
        /* semi-implicit Euler against the link moving with its sample's acceleration over the step */
        for (int k = 0; k < SUBSTEPS; k++) {
            double t = k * h, q = sq[j] + sv[j] * t + 0.5 * sa[j] * t * t, qd = sv[j] + sa[j] * t;
            double ts = K * (th - q) + D * (thd - qd);
            thd += h * (s->tau_m[j] - ts) / B;
            th += h * thd;
        }
        s->el_th[j] = th, s->el_thd[j] = thd;
    }
}
