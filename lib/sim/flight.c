/* lib/sim: the jets' flight controller (roboest/sim_flight.h documents the loop): CoM and attitude PID at its own
 * rate from the true state through the controller's model, the jets' wrench allocation by damped least squares over
 * the controllable rows, the throttles by the jet model's inverse, the null-space excitation. */
#include <math.h>
#include <string.h>

#include "roboest/sim.h"

#include "sim_internal.h"

/* Damping of the allocation toward T0 (sim_flight.h step 4), per (T_mean / T_max,i)^2 (T_i - T0_i)^2. */
#define FLIGHT_DAMPING 1e-8
/* Limits of the integral terms: 2.5 m/s^2 (CoM), 2.5 rad/s^2 (attitude). */
#define FLIGHT_INT_LIMIT 2.5
/* The yaw control's damping: a null-direction moment arm below 2 cm gets less than half its share. */
#define FLIGHT_YAW_ARM 0.02

struct sim_flight {
    rb_sim_flight cfg;
    rb_sim_flight_waypoint *wp;
    size_t nj, nv, ticks;
    double t_last, L, T_mean, psi0, com0[3];
    double ie_com[3], ie_att[2];
    double *AG; /* 6 x nv: the centroidal momentum matrix */
    double *A;  /* 6 x nj: the jets' matrix (world axes, about the CoM) */
    double *T_hover, *T_des, *T_lo, *T_hi, *d, *u, *H, *rhs, *dir;
};

rb_sim_flight rb_sim_flight_defaults(void)
{
    rb_sim_flight f;
    memset(&f, 0, sizeof f);
    f.enabled = true;
    f.rate = 100.0;
    for (int i = 0; i < 3; i++) {
        f.com_kp[i] = i < 2 ? 1.5 : 6.0;
        f.com_kd[i] = i < 2 ? 2.4 : 5.0;
        f.com_ki[i] = i < 2 ? 0.0 : 2.0;
    }
    f.att_kp = 25.0, f.att_kd = 10.0, f.att_ki = 4.0;
    f.yaw_kp = 1.0, f.yaw_kd = 2.0, f.yaw_max_thrust = 0.0;
    f.max_tilt = 0.06;
    f.thrust_response = 10.0;
    f.excitation.freq = f.excitation.freq_end = 0.1;
    return f;
}

static bool gain_ok(double g) { return g >= 0 && isfinite(g); }

int sim_flight_validate(const rb_sim_scenario *sc, rb_err *err)
{
    const rb_sim_flight *f = &sc->flight;
    if (!f->enabled)
        return RB_OK;
    if (!sc->model->floating)
        return rb_err_set(err, RB_ECONFIG, "sim: flight: needs a floating base");
    if (sc->n_jets == 0)
        return rb_err_set(err, RB_ECONFIG, "sim: flight: needs jets");
    if (sc->balance.enabled)
        return rb_err_set(err, RB_ECONFIG, "sim: flight: conflicts with balance");
    for (size_t k = 0; k < sc->n_jets; k++) {
        const rb_sim_ref *r = &sc->jets[k].throttle;
        if (r->kind != RB_REF_CONST || r->offset != 0 || r->amplitude != 0 || r->times || r->n_points)
            return rb_err_set(err, RB_ECONFIG, "sim: jet %zu: throttle: set while flight is on (the flight sets it)",
                              k);
    }
    if (!(f->rate > 0) || !isfinite(f->rate))
        return rb_err_set(err, RB_ECONFIG, "sim: flight: rate must be finite and > 0");
    for (int i = 0; i < 3; i++)
        if (!gain_ok(f->com_kp[i]) || !gain_ok(f->com_kd[i]) || !gain_ok(f->com_ki[i]))
            return rb_err_set(err, RB_ECONFIG, "sim: flight: com gains must be finite and >= 0");
    if (!gain_ok(f->att_kp) || !gain_ok(f->att_kd) || !gain_ok(f->att_ki))
        return rb_err_set(err, RB_ECONFIG, "sim: flight: attitude gains must be finite and >= 0");
    if (!gain_ok(f->yaw_kp) || !gain_ok(f->yaw_kd) || !gain_ok(f->yaw_max_thrust))
        return rb_err_set(err, RB_ECONFIG, "sim: flight: yaw gains and max_thrust must be finite and >= 0");
    if (!(f->max_tilt > 0 && f->max_tilt < M_PI / 2))
        return rb_err_set(err, RB_ECONFIG, "sim: flight: max_tilt must be in (0, pi/2)");
    if (!gain_ok(f->thrust_response))
        return rb_err_set(err, RB_ECONFIG, "sim: flight: thrust_response must be finite and >= 0");
    if (f->n_waypoints && !f->waypoints)
        return rb_err_set(err, RB_ECONFIG, "sim: flight: NULL waypoint list");
    for (size_t i = 0; i < f->n_waypoints; i++) {
        const rb_sim_flight_waypoint *w = &f->waypoints[i];
        if (!(w->t > (i ? w[-1].t : 0.0)) || !isfinite(w->t))
            return rb_err_set(err, RB_ECONFIG, "sim: flight: waypoint %zu: times must be > 0 and increase", i);
        for (int k = 0; k < 3; k++)
            if (!isfinite(w->offset[k]))
                return rb_err_set(err, RB_ECONFIG, "sim: flight: waypoint %zu: offset must be finite", i);
    }
    const rb_sim_flight_excitation *x = &f->excitation;
    if (!gain_ok(x->amplitude) || !gain_ok(x->freq) || !gain_ok(x->freq_end))
        return rb_err_set(err, RB_ECONFIG, "sim: flight: excitation: amplitude and frequencies must be >= 0");
    if (x->amplitude > 0) {
        if (!(x->until > x->from) || !isfinite(x->from) || !isfinite(x->until))
            return rb_err_set(err, RB_ECONFIG, "sim: flight: excitation: needs from < until");
        if (sc->n_jets < 4)
            return rb_err_set(err, RB_ECONFIG, "sim: flight: excitation: needs four jets or more (a null space)");
        for (size_t k = 0; x->direction && k < sc->n_jets; k++)
            if (!isfinite(x->direction[k]))
                return rb_err_set(err, RB_ECONFIG, "sim: flight: excitation: direction must be finite");
    }
    return RB_OK;
}

/* ---- small dense algebra (n = the number of jets) ---- */

/* In place A = L L^T (lower triangle; diagonal stored as 1 / L_jj), then x <- A^-1 x. False: not positive
 * definite. */
static bool chol_solve(double *A, size_t n, double *x)
{
    for (size_t j = 0; j < n; j++) {
        double *Aj = A + j * n, d = Aj[j];
        for (size_t k = 0; k < j; k++)
            d -= Aj[k] * Aj[k];
        if (!(d > 0.0))
            return false;
        Aj[j] = 1.0 / sqrt(d);
        for (size_t i = j + 1; i < n; i++) {
            double *Ai = A + i * n, s = Ai[j];
            for (size_t k = 0; k < j; k++)
                s -= Ai[k] * Aj[k];
            Ai[j] = s * Aj[j];
        }
    }
    for (size_t i = 0; i < n; i++) {
        double s = x[i];
        for (size_t k = 0; k < i; k++)
            s -= A[i * n + k] * x[k];
        x[i] = s * A[i * n + i];
    }
    for (size_t i = n; i-- > 0;) {
        double s = x[i];
        for (size_t k = i + 1; k < n; k++)
            s -= A[k * n + i] * x[k];
        x[i] = s * A[i * n + i];
    }
    return true;
}

static void cross(const double a[3], const double b[3], double c[3])
{
    c[0] = a[1] * b[2] - a[2] * b[1], c[1] = a[2] * b[0] - a[0] * b[2], c[2] = a[0] * b[1] - a[1] * b[0];
}

static double norm3(const double a[3]) { return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }

static double smoothstep(double x) { return x <= 0 ? 0 : x >= 1 ? 1 : x * x * (3 - 2 * x); }

/* ---- references ---- */

/* The CoM reference's offset from c(0), its velocity and acceleration at t (sim_flight.h waypoints). */
static void com_reference(const struct sim_flight *fl, double t, double p[3], double v[3], double a[3])
{
    const rb_sim_flight_waypoint *w = fl->wp;
    size_t n = fl->cfg.n_waypoints, i = 0;
    while (i < n && t >= w[i].t)
        i++;
    for (int k = 0; k < 3; k++)
        v[k] = a[k] = 0.0;
    if (i == n) {
        for (int k = 0; k < 3; k++)
            p[k] = n ? w[n - 1].offset[k] : 0.0;
        return;
    }
    double ta = i ? w[i - 1].t : 0.0, D = w[i].t - ta, x = (t - ta) / D;
    x = x < 0 ? 0 : x;
    double s = x * x * (3 - 2 * x), sd = 6 * x * (1 - x) / D, sdd = (6 - 12 * x) / (D * D);
    for (int k = 0; k < 3; k++) {
        double pa = i ? w[i - 1].offset[k] : 0.0, dp = w[i].offset[k] - pa;
        p[k] = pa + s * dp, v[k] = sd * dp, a[k] = sdd * dp;
    }
}

/* The excitation's delta(t) (N, before the direction). */
static double excitation(const rb_sim_flight_excitation *x, double t)
{
    if (!(x->amplitude > 0) || t <= x->from || t >= x->until)
        return 0.0;
    double D = x->until - x->from, tau = t - x->from, tr = D / 4 < 1.0 ? D / 4 : 1.0;
    double env = smoothstep(tau / tr) * smoothstep((D - tau) / tr);
    double phase = 2 * M_PI * (x->freq * tau + (x->freq_end - x->freq) * tau * tau / (2 * D));
    return x->amplitude * env * sin(phase);
}

/* ---- the model at the current state ---- */

/* Kinematics of the controller's model at (q, nu); the CoM, its velocity, the mass, the base rotation and angular
 * velocity (world), the locked inertia about the CoM (world), the jets' matrix A. */
typedef struct flight_state {
    double com[3], vcom[3], m, R[9], w[3], IG[9];
} flight_state;

static int measure(rb_sim *s, struct sim_flight *fl, flight_state *st, rb_err *err)
{
    const rb_model *m = s->m;
    size_t nv = s->nv, nj = fl->nj;
    rb_mat AG = rb_mat_view(fl->AG, 6, nv, nv);
    int rc;
    if ((rc = rb_dyn_kinematics(m, s->ctrl, s->q, s->nu, NULL, err)) < 0 ||
        (rc = rb_dyn_centroidal_matrix(m, s->ctrl, &AG, st->com, err)) < 0)
        return rc;
    rb_m3_from_quat(s->q + 3, st->R);
    double trace = 0.0;
    for (int i = 0; i < 3; i++) {
        st->vcom[i] = sim_dot(fl->AG + (size_t)i * nv, s->nu, nv);
        st->w[i] = st->R[3 * i] * s->nu[3] + st->R[3 * i + 1] * s->nu[4] + st->R[3 * i + 2] * s->nu[5];
        for (int j = 0; j < 3; j++) {
            /* A_G's base columns: l = m R_B v_B + ..., k_G = I_G R_B w_B */
            double a = 0.0, b = 0.0;
            for (int k = 0; k < 3; k++) {
                a += fl->AG[(size_t)i * nv + (size_t)k] * st->R[3 * j + k];
                b += fl->AG[(size_t)(3 + i) * nv + 3 + (size_t)k] * st->R[3 * j + k];
            }
            if (i == j)
                trace += a;
            st->IG[3 * i + j] = b;
        }
    }
    st->m = trace / 3.0;
    for (int i = 0; i < 3; i++) {
        st->vcom[i] /= st->m;
        for (int j = 0; j < i; j++)
            st->IG[3 * i + j] = st->IG[3 * j + i] = 0.5 * (st->IG[3 * i + j] + st->IG[3 * j + i]);
    }
    for (size_t k = 0; k < nj; k++) {
        const rb_sim_jet *j = &s->jets[k];
        rb_xform X;
        if ((rc = rb_dyn_frame_pose(m, s->ctrl, (size_t)j->frame, &X, err)) < 0)
            return rc;
        double l[3], r[3], rl[3];
        for (int i = 0; i < 3; i++) {
            l[i] = X.R[3 * i] * j->axis[0] + X.R[3 * i + 1] * j->axis[1] + X.R[3 * i + 2] * j->axis[2];
            r[i] = X.p[i] - st->com[i];
        }
        cross(r, l, rl);
        for (int i = 0; i < 3; i++)
            fl->A[(size_t)i * nj + k] = l[i], fl->A[(size_t)(3 + i) * nj + k] = rl[i];
    }
    return RB_OK;
}

/* The collective direction n = sum_i l_i w_i / |.| (world). */
static void collective(const struct sim_flight *fl, const double *w, double n[3])
{
    for (int i = 0; i < 3; i++)
        n[i] = sim_dot(fl->A + (size_t)i * fl->nj, w, fl->nj);
    double a = norm3(n);
    for (int i = 0; i < 3; i++)
        n[i] = a > 0 ? n[i] / a : (i == 2);
}

/* The allocation's three rows (sim_flight.h step 4) into rows[3][nj] with their weights. */
static void alloc_rows(const struct sim_flight *fl, const double n[3], double *rows, double *wts)
{
    size_t nj = fl->nj;
    for (size_t k = 0; k < nj; k++) {
        rows[k] = n[0] * fl->A[k] + n[1] * fl->A[nj + k] + n[2] * fl->A[2 * nj + k];
        rows[nj + k] = fl->A[3 * nj + k], rows[2 * nj + k] = fl->A[4 * nj + k];
    }
    wts[0] = 1.0, wts[1] = wts[2] = 1.0 / fl->L;
}

/* T_des = the damped least-squares solution toward T0 (in T_des on entry) of the rows for the targets b. */
static int allocate(rb_sim *s, struct sim_flight *fl, const double n[3], const double b[3], rb_err *err)
{
    size_t nj = fl->nj;
    double wts[3], *rw = fl->H + nj * nj; /* the rows after H */
    size_t nr = 3;
    alloc_rows(fl, n, rw, wts);
    for (size_t i = 0; i < nj; i++) {
        double mu = FLIGHT_DAMPING * (fl->T_mean / s->jets[i].params.T_max) * (fl->T_mean / s->jets[i].params.T_max);
        fl->rhs[i] = mu * fl->T_des[i];
        for (size_t j = 0; j < nj; j++)
            fl->H[i * nj + j] = i == j ? mu : 0.0;
        for (size_t r = 0; r < nr; r++) {
            double w2 = wts[r] * wts[r];
            fl->rhs[i] += w2 * b[r] * rw[r * nj + i];
            for (size_t j = 0; j < nj; j++)
                fl->H[i * nj + j] += w2 * rw[r * nj + i] * rw[r * nj + j];
        }
    }
    if (!chol_solve(fl->H, nj, fl->rhs))
        return rb_err_set(err, RB_ENUMERIC, "sim: t = %.6g s: flight: allocation singular", s->t);
    for (size_t i = 0; i < nj; i++) {
        double T = fl->rhs[i];
        fl->T_des[i] = T < fl->T_lo[i] ? fl->T_lo[i] : T > fl->T_hi[i] ? fl->T_hi[i] : T;
    }
    return RB_OK;
}

/* ---- set-up ---- */

/* At t = 0 (the model at q0): the lever arm L, the hover split T_hover, the null direction d. */
static int hover(rb_sim *s, struct sim_flight *fl, const flight_state *st, rb_err *err)
{
    size_t nj = fl->nj;
    double n[3], b[3] = {st->m * norm3(s->m->gravity), 0, 0};
    fl->L = 1e-3; /* the largest moment arm |(r x l)_xy| of a jet */
    fl->T_mean = 0.0;
    for (size_t k = 0; k < nj; k++) {
        const rb_jet_params *p = &s->jets[k].params;
        double mx = fl->A[3 * nj + k], my = fl->A[4 * nj + k], arm = sqrt(mx * mx + my * my);
        fl->L = arm > fl->L ? arm : fl->L;
        fl->T_lo[k] = rb_jet_steady_thrust(p, p->u_min), fl->T_hi[k] = rb_jet_steady_thrust(p, p->u_max);
        fl->T_mean += p->T_max / (double)nj;
        fl->T_des[k] = 0.0;
    }
    collective(fl, fl->T_hi, n); /* first guess; then the split's own direction */
    int rc = allocate(s, fl, n, b, err);
    if (rc < 0)
        return rc;
    collective(fl, fl->T_des, n);
    memset(fl->T_des, 0, nj * sizeof *fl->T_des);
    if ((rc = allocate(s, fl, n, b, err)) < 0)
        return rc;
    memcpy(fl->T_hover, fl->T_des, nj * sizeof *fl->T_hover);
    if (nj < 4)
        return RB_OK; /* no null space: no excitation (refused), no yaw */
    /* the null space of the three controllable rows M (weighted): P = 1 - M^T (M M^T)^-1 M; d = P dir, or the
     * column of P with the largest norm */
    collective(fl, fl->T_hover, n);
    double wts[3], G[9], *M = fl->H + nj * nj, *v = fl->rhs, best = -1.0, dmax = 0.0;
    alloc_rows(fl, n, M, wts);
    for (size_t r = 0; r < 3; r++)
        for (size_t k = 0; k < nj; k++)
            M[r * nj + k] *= wts[r];
    for (size_t c = 0; c < nj; c++) {
        double y[3];
        for (size_t k = 0; k < nj; k++) {
            v[k] = fl->dir ? fl->dir[k] : (double)(k == c);
            dmax = fabs(v[k]) > dmax ? fabs(v[k]) : dmax;
        }
        for (size_t r = 0; r < 3; r++) {
            y[r] = sim_dot(M + r * nj, v, nj);
            for (size_t r2 = 0; r2 < 3; r2++)
                G[3 * r + r2] = sim_dot(M + r * nj, M + r2 * nj, nj) + (r == r2 ? 1e-12 : 0.0);
        }
        if (!chol_solve(G, 3, y))
            return rb_err_set(err, RB_ENUMERIC, "sim: flight: excitation: the jets' rows are singular");
        double nrm = 0.0;
        for (size_t k = 0; k < nj; k++) {
            v[k] -= M[k] * y[0] + M[nj + k] * y[1] + M[2 * nj + k] * y[2];
            nrm += v[k] * v[k];
        }
        if (nrm > best) {
            best = nrm;
            memcpy(fl->d, v, nj * sizeof *fl->d);
        }
        if (fl->dir)
            break;
    }
    double big = 0.0, scale = 0.0;
    for (size_t k = 0; k < nj; k++)
        if (fabs(fl->d[k]) > big)
            big = fabs(fl->d[k]), scale = fl->d[k];
    if (!(big > 1e-6 * dmax))
        return rb_err_set(err, RB_ECONFIG, "sim: flight: excitation: the direction has no null-space part");
    for (size_t k = 0; k < nj; k++)
        fl->d[k] /= scale;
    return RB_OK;
}

/* The throttle of jet k for T_des,k (sim_flight.h step 5); Td_ff, Tdd_ff: the excitation's feed-forward. */
static double throttle(const rb_sim *s, const struct sim_flight *fl, size_t k, double Td_ff, double Tdd_ff)
{
    const rb_jet_params *p = &s->jets[k].params;
    double w = fl->cfg.thrust_response, Td = fl->T_des[k];
    if (w > 0) {
        double T = s->jet_T[k], D = s->jet_Td[k];
        double u = rb_jet_throttle_for_accel(p, T, D, Tdd_ff + 2 * w * (Td_ff - D) + w * w * (Td - T));
        if (!isnan(u))
            return u;
    }
    return rb_jet_steady_throttle(p, Td);
}

int sim_flight_init(rb_sim *s, const rb_sim_scenario *sc, rb_err *err)
{
    if (!sc->flight.enabled)
        return RB_OK;
    struct sim_flight *fl = s->flight = rb_calloc(1, sizeof *fl);
    if (!fl)
        return rb_err_set(err, RB_ENOMEM, "sim: out of memory");
    size_t nj = fl->nj = sc->n_jets, nv = fl->nv = s->nv, nw = sc->flight.n_waypoints;
    fl->cfg = sc->flight;
    fl->wp = rb_calloc(nw ? nw : 1, sizeof *fl->wp);
    fl->AG = rb_calloc(6 * nv, sizeof *fl->AG);
    fl->A = rb_calloc(6 * nj, sizeof *fl->A);
    fl->H = rb_calloc(nj * nj + 4 * nj, sizeof *fl->H); /* H, then room for the rows */
    double **arrays[] = {&fl->T_hover, &fl->T_des, &fl->T_lo, &fl->T_hi, &fl->d, &fl->u, &fl->rhs};
    bool ok = fl->wp && fl->AG && fl->A && fl->H;
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        ok = (*arrays[i] = rb_calloc(nj, sizeof **arrays[i])) && ok;
    if (sc->flight.excitation.direction)
        ok = (fl->dir = rb_calloc(nj, sizeof *fl->dir)) && ok;
    if (!ok)
        return rb_err_set(err, RB_ENOMEM, "sim: out of memory");
    if (nw)
        memcpy(fl->wp, sc->flight.waypoints, nw * sizeof *fl->wp);
    if (fl->dir)
        memcpy(fl->dir, sc->flight.excitation.direction, nj * sizeof *fl->dir);
    fl->cfg.waypoints = NULL, fl->cfg.excitation.direction = NULL;
    flight_state st;
    int rc;
    if ((rc = measure(s, fl, &st, err)) < 0 || (rc = hover(s, fl, &st, err)) < 0)
        return rc;
    double x0 = excitation(&fl->cfg.excitation, 0.0);
    for (size_t k = 0; k < nj; k++) {
        fl->T_des[k] = fl->T_hover[k] + x0 * fl->d[k];
        fl->u[k] = rb_jet_steady_throttle(&s->jets[k].params, fl->T_des[k]);
    }
    s->truth.jet_thrust_des = fl->T_des;
    return RB_OK;
}

/* One update at s->t (sim_flight.h steps 1-5). */
static int update(rb_sim *s, struct sim_flight *fl, rb_err *err)
{
    const rb_sim_flight *f = &fl->cfg;
    size_t nj = fl->nj;
    flight_state st;
    int rc = measure(s, fl, &st, err);
    if (rc < 0)
        return rc;
    double rpy[3];
    rb_m3_to_rpy(st.R, rpy);
    if (fl->ticks == 0) {
        memcpy(fl->com0, st.com, sizeof fl->com0);
        fl->psi0 = rpy[2];
        fl->t_last = s->t;
    }
    double h = s->t - fl->t_last, p[3], v[3], a[3], F[3], gn = norm3(s->m->gravity);
    fl->t_last = s->t;
    com_reference(fl, s->t, p, v, a);
    for (int i = 0; i < 3; i++) {
        double e = fl->com0[i] + p[i] - st.com[i];
        if (f->com_ki[i] > 0) {
            double lim = FLIGHT_INT_LIMIT / f->com_ki[i];
            fl->ie_com[i] += e * h;
            fl->ie_com[i] = fl->ie_com[i] > lim ? lim : fl->ie_com[i] < -lim ? -lim : fl->ie_com[i];
        }
        a[i] += f->com_kp[i] * e + f->com_kd[i] * (v[i] - st.vcom[i]) + f->com_ki[i] * fl->ie_com[i];
    }
    double axy = hypot(a[0], a[1]), amax = gn * tan(f->max_tilt);
    if (axy > amax)
        a[0] *= amax / axy, a[1] *= amax / axy;
    for (int i = 0; i < 3; i++)
        F[i] = st.m * (a[i] - s->m->gravity[i]);

    /* attitude: turn the collective direction n onto F */
    double n[3], b3[3], c[3], e[3] = {0, 0, 0}, alpha[3], tau[3];
    collective(fl, fl->T_hover, n);
    double fn = norm3(F);
    for (int i = 0; i < 3; i++)
        b3[i] = fn > 0 ? F[i] / fn : n[i];
    cross(n, b3, c);
    double sn = norm3(c), ang = atan2(sn, n[0] * b3[0] + n[1] * b3[1] + n[2] * b3[2]);
    for (int i = 0; sn > 0 && i < 3; i++)
        e[i] = -ang * c[i] / sn;
    for (int i = 0; i < 2; i++) {
        if (f->att_ki > 0) {
            double lim = FLIGHT_INT_LIMIT / f->att_ki;
            fl->ie_att[i] += e[i] * h;
            fl->ie_att[i] = fl->ie_att[i] > lim ? lim : fl->ie_att[i] < -lim ? -lim : fl->ie_att[i];
        }
        alpha[i] = -f->att_kp * e[i] - f->att_kd * st.w[i] - f->att_ki * fl->ie_att[i];
    }
    double epsi = remainder(rpy[2] - fl->psi0, 2 * M_PI);
    alpha[2] = -f->yaw_kp * epsi - f->yaw_kd * st.w[2];
    for (int i = 0; i < 3; i++)
        tau[i] = st.IG[3 * i] * alpha[0] + st.IG[3 * i + 1] * alpha[1] + st.IG[3 * i + 2] * alpha[2];

    /* allocation toward T0 = T_hover + excitation, then the throttles */
    const double hd = 1e-3;
    double x0 = excitation(&f->excitation, s->t), xp = excitation(&f->excitation, s->t + hd),
           xm = excitation(&f->excitation, s->t - hd);
    double xd = (xp - xm) / (2 * hd), xdd = (xp - 2 * x0 + xm) / (hd * hd);
    double b[3] = {n[0] * F[0] + n[1] * F[1] + n[2] * F[2], tau[0], tau[1]};
    for (size_t k = 0; k < nj; k++)
        fl->T_des[k] = fl->T_hover[k] + x0 * fl->d[k];
    if ((rc = allocate(s, fl, n, b, err)) < 0)
        return rc;
    if (f->yaw_max_thrust > 0) {
        /* yaw through the null direction, damped where its moment arm g (N m per N) is below YAW_ARM */
        double g = sim_dot(fl->A + 5 * nj, fl->d, nj), r = tau[2] - sim_dot(fl->A + 5 * nj, fl->T_des, nj);
        double y = g * r / (g * g + FLIGHT_YAW_ARM * FLIGHT_YAW_ARM), ym = f->yaw_max_thrust;
        y = y > ym ? ym : y < -ym ? -ym : y;
        for (size_t k = 0; k < nj; k++)
            fl->T_des[k] = fl->T_hover[k] + (x0 + y) * fl->d[k];
        if ((rc = allocate(s, fl, n, b, err)) < 0)
            return rc;
    }
    for (size_t k = 0; k < nj; k++)
        fl->u[k] = throttle(s, fl, k, xd * fl->d[k], xdd * fl->d[k]);
    return RB_OK;
}

int sim_flight_sample(rb_sim *s, rb_err *err)
{
    struct sim_flight *fl = s->flight;
    double rate = fl->cfg.rate;
    if (fl->ticks == 0 || s->t >= (double)fl->ticks / rate - 1e-9) {
        int rc = update(s, fl, err);
        if (rc < 0)
            return rc;
        fl->ticks = (size_t)floor(s->t * rate + 1e-6) + 1;
    }
    double p[3], v[3], a[3];
    com_reference(fl, s->t, p, v, a);
    for (int i = 0; i < 3; i++)
        s->truth.com_ref[i] = fl->com0[i] + p[i];
    return RB_OK;
}

double sim_flight_throttle(const rb_sim *s, size_t k) { return s->flight->u[k]; }

void sim_flight_free(rb_sim *s)
{
    struct sim_flight *fl = s->flight;
    if (!fl)
        return;
    void *arrays[] = {fl->wp,   fl->AG,   fl->A, fl->H, fl->T_hover, fl->T_des,
                      fl->T_lo, fl->T_hi, fl->d, fl->u, fl->rhs,     fl->dir};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        rb_free(arrays[i]);
    rb_free(fl);
    s->flight = NULL;
}
