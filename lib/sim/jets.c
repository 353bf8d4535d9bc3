/* lib/sim: jets (seed 004): the thrust model run at the simulation step, failures, the rotor-speed model and the
 * jets' wrenches. The model is documented in roboest/sim.h ("jets"). */
#include <math.h>
#include <string.h>

#include "roboest/sim.h"

#include "sim_internal.h"

double rb_sim_jet_steady_thrust(const rb_jet_params *p, double u) { return rb_jet_steady_thrust(p, u); }

double rb_sim_jet_rpm(const rb_sim_jet *jet, double T)
{
    double x = T / jet->params.T_max;
    x = x < 0 ? 0 : x > 1 ? 1 : x;
    return jet->rpm_max * sqrt(x);
}

int sim_jets_validate(const rb_sim_scenario *sc, rb_err *err)
{
    const rb_model *m = sc->model;
    if (sc->n_jets && !sc->jets)
        return rb_err_set(err, RB_ECONFIG, "sim: jets: NULL list");
    for (size_t k = 0; k < sc->n_jets; k++) {
        const rb_sim_jet *j = &sc->jets[k];
        const double *a = j->axis;
        if (j->frame < 0 || (size_t)j->frame >= m->n_frames)
            return rb_err_set(err, RB_ECONFIG, "sim: jet %zu: frame %d out of range", k, j->frame);
        if (!isfinite(a[0]) || !isfinite(a[1]) || !isfinite(a[2]) || a[0] * a[0] + a[1] * a[1] + a[2] * a[2] == 0)
            return rb_err_set(err, RB_ECONFIG, "sim: jet %zu: axis must be finite and non-zero", k);
        if (!(j->params.T_max > 0) || !isfinite(j->params.T_max) || !(j->params.u_min <= j->params.u_max))
            return rb_err_set(err, RB_ECONFIG, "sim: jet %zu: needs T_max > 0 and u_min <= u_max", k);
        if (!(j->rotor_tau >= 0) || !isfinite(j->rotor_tau) || !(j->rpm_max > 0) || !isfinite(j->rpm_max))
            return rb_err_set(err, RB_ECONFIG, "sim: jet %zu: needs rotor_tau >= 0 and rpm_max > 0", k);
        const rb_sim_ref *u = &j->throttle;
        if (u->kind == RB_REF_SPLINE || u->kind == RB_REF_RAMP) {
            if (!u->times || !u->values || u->n_points < 2)
                return rb_err_set(err, RB_ECONFIG, "sim: jet %zu: throttle needs >= 2 points", k);
            for (size_t i = 1; i < u->n_points; i++)
                if (!(u->times[i] > u->times[i - 1]))
                    return rb_err_set(err, RB_ECONFIG, "sim: jet %zu: throttle times must increase", k);
        }
        if (j->n_failures && !j->failures)
            return rb_err_set(err, RB_ECONFIG, "sim: jet %zu: NULL failure list", k);
        for (size_t i = 0; i < j->n_failures; i++) {
            const rb_sim_jet_failure *f = &j->failures[i];
            if (!(f->fraction >= 0 && f->fraction <= 1))
                return rb_err_set(err, RB_ECONFIG, "sim: jet %zu: failure %zu: fraction must be in [0, 1]", k, i);
            if (!(f->from < f->until) || !isfinite(f->from))
                return rb_err_set(err, RB_ECONFIG, "sim: jet %zu: failure %zu: needs from < until", k, i);
            if (i > 0 && f->from < j->failures[i - 1].until)
                return rb_err_set(err, RB_ECONFIG,
                                  "sim: jet %zu: failure %zu: overlaps failure %zu (failures in time order, apart)", k,
                                  i, i - 1);
        }
    }
    return sim_flight_validate(sc, err);
}

int sim_jets_init(rb_sim *s, const rb_sim_scenario *sc, rb_err *err)
{
    size_t n = s->njet = sc->n_jets, nf = 0;
    for (size_t k = 0; k < n; k++)
        nf += sc->jets[k].n_failures;
    size_t cnt = n ? n : 1;
    s->jets = rb_calloc(cnt, sizeof *s->jets);
    s->jfail = rb_calloc(nf ? nf : 1, sizeof *s->jfail);
    double **arrays[] = {&s->jet_T, &s->jet_Td, &s->jet_u, &s->jet_thr, &s->jet_thr_rate, &s->jet_rpm_des, &s->jet_rpm};
    bool ok = s->jets && s->jfail;
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        ok = (*arrays[i] = rb_calloc(cnt, sizeof **arrays[i])) && ok;
    if (!ok)
        return rb_err_set(err, RB_ENOMEM, "sim: out of memory");
    for (size_t k = 0, g = 0; k < n; k++) {
        rb_sim_jet *j = &s->jets[k];
        *j = sc->jets[k];
        double *a = j->axis, norm = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        for (int i = 0; i < 3; i++)
            a[i] /= norm;
        if (j->n_failures)
            memcpy(s->jfail + g, j->failures, j->n_failures * sizeof *s->jfail);
        j->failures = s->jfail + g;
        g += j->n_failures;
        s->jet_rpm[k] = NAN; /* the first sample sets it to rpm(T_d) */
    }
    int rc = sim_flight_init(s, sc, err);
    if (rc < 0)
        return rc;
    for (size_t k = 0; k < n; k++) {
        const rb_sim_jet *j = &s->jets[k];
        double u[3];
        rb_sim_ref_eval(&j->throttle, 0.0, u);
        if (j->steady_start)
            s->jet_T[k] = rb_jet_steady_thrust(&j->params, s->flight ? sim_flight_throttle(s, k) : u[0]);
    }
    s->sc.jets = NULL;
    rb_sim_truth *tr = &s->truth;
    tr->n_jets = n;
    tr->jet_throttle = s->jet_u, tr->jet_thrust = s->jet_thr, tr->jet_thrust_rate = s->jet_thr_rate;
    tr->jet_rpm_des = s->jet_rpm_des, tr->jet_rpm = s->jet_rpm;
    return RB_OK;
}

/* The fraction of the model's thrust jet k delivers at t. */
static double delivered_fraction(const rb_sim_jet *j, double t)
{
    for (size_t i = 0; i < j->n_failures; i++)
        if (t >= j->failures[i].from && t < j->failures[i].until)
            return j->failures[i].fraction;
    return 1.0;
}

int sim_jets_sample(rb_sim *s, rb_err *err)
{
    double t = s->t;
    int rc = s->flight ? sim_flight_sample(s, err) : RB_OK;
    if (rc < 0)
        return rc;
    for (size_t k = 0; k < s->njet; k++) {
        const rb_sim_jet *j = &s->jets[k];
        double u[3], f = delivered_fraction(j, t);
        if (s->flight)
            u[0] = sim_flight_throttle(s, k);
        else
            rb_sim_ref_eval(&j->throttle, t, u);
        s->jet_u[k] = u[0] < j->params.u_min ? j->params.u_min : u[0] > j->params.u_max ? j->params.u_max : u[0];
        s->jet_thr[k] = f * s->jet_T[k];
        s->jet_thr_rate[k] = f * s->jet_Td[k];
        s->jet_rpm_des[k] = rb_sim_jet_rpm(j, rb_sim_jet_steady_thrust(&j->params, s->jet_u[k]));
        if (isnan(s->jet_rpm[k]) || !(j->rotor_tau > 0))
            s->jet_rpm[k] = rb_sim_jet_rpm(j, s->jet_thr[k]);
        rb_ext_wrench *e = &s->ext[s->n_ext_push++];
        e->frame = j->frame, e->rep = RB_DYN_BODY;
        for (int i = 0; i < 3; i++)
            e->w[i] = s->jet_thr[k] * j->axis[i], e->w[3 + i] = 0.0;
    }
    return RB_OK;
}

void sim_jets_advance(rb_sim *s)
{
    double dt = s->sc.dt;
    for (size_t k = 0; k < s->njet; k++) {
        const rb_sim_jet *j = &s->jets[k];
        if (j->rotor_tau > 0) {
            double target = rb_sim_jet_rpm(j, s->jet_thr[k]);
            s->jet_rpm[k] = target + (s->jet_rpm[k] - target) * exp(-dt / j->rotor_tau);
        }
        rb_jet_step(&j->params, s->jet_u[k], dt, &s->jet_T[k], &s->jet_Td[k]);
    }
}

void sim_jets_free(rb_sim *s)
{
    sim_flight_free(s);
    void *arrays[] = {s->jets,    s->jfail,        s->jet_T,       s->jet_Td, s->jet_u,
                      s->jet_thr, s->jet_thr_rate, s->jet_rpm_des, s->jet_rpm};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        rb_free(arrays[i]);
}
