/* The online inertial-parameter estimator of seed 001 (Foster et al.): see roboest/observers.h. The dynamics
 * module gives Y_est and tau_nom (eq. 7), the filters module runs the EKF on theta (eq. 18-21) or the KF on pi
 * (eq. 12, 15); this file is the glue: Delta tau (eq. 14), the delays, the bias, the low-passes, the rate limit. */
#include <math.h>
#include <string.h>

#include "observers_internal.h"

static const char *const pi_names[10] = {"m", "hx", "hy", "hz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz"};
static const char *const theta_names[10] = {"alpha", "d1", "d2", "d3", "s12", "s13", "s23", "t1", "t2", "t3"};

void rb_iekf_config_init(rb_iekf_config *cfg)
{
    static const double q[10] = {1e-2, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-4, 1e-4, 1e-4};
    static const double p0[10] = {0.25, 0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01};
    memset(cfg, 0, sizeof *cfg);
    cfg->filter = RB_IEKF_EKF_LOG_CHOLESKY;
    cfg->form = RB_LCHOL_UUT;
    memcpy(cfg->q, q, sizeof q);
    memcpy(cfg->p0, p0, sizeof p0);
    cfg->r_scalar = 1;
    cfg->gate = RB_IEKF_GATE_OFF;
    cfg->gate_value = 0.999;
    cfg->rate[0] = 3; /* kg/s [paper] */
    cfg->ddq = RB_IEKF_DDQ_GIVEN;
    cfg->var_warn_factor = 100;
}

void rb_iekf_config_defaults_kf(rb_iekf_config *cfg)
{
    static const double q[10] = {1, 1e-2, 1e-2, 1e-2, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3};
    static const double p0[10] = {25, 1, 1, 1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1};
    cfg->filter = RB_IEKF_KF_LINEAR;
    memcpy(cfg->q, q, sizeof q);
    memcpy(cfg->p0, p0, sizeof p0);
}

void rb_iekf_free(rb_iekf *e)
{
    if (!e)
        return;
    rb_filter_free(e->f);
    rb_dyn_condensed_free(e->cond);
    rb_dyn_free(e->ws);
    rb_free(e->bodies);
    rb_free(e->contacts);
    rb_free(e->r); /* one block for every double array */
    rb_free(e->consistent);
    rb_free(e->bias_cnt);
    rb_free(e);
}

static const char *body_name(const rb_iekf *e, size_t b) { return e->m->bodies[e->bodies[b]].name; }

/* ---- filter models (EKF): h(theta) = Y_est g(theta), H = Y_est blockdiag(G) ------------------------------------ */
static int to_pi_all(rb_iekf *e, const double *x, double *pi, double *G, rb_err *err)
{
    for (size_t b = 0; b < e->nb; b++) {
        int rc = G ? rb_lchol_jacobian(e->cfg.form, x + 10 * b, pi + 10 * b, G + 100 * b, err)
                   : rb_lchol_to_pi(e->cfg.form, x + 10 * b, pi + 10 * b, err);
        if (rc)
            return rb_err_prefix(err, rc, "body %s: ", body_name(e, b));
    }
    return RB_OK;
}

static void y_times(const rb_iekf *e, const double *pi, double *z)
{
    for (size_t i = 0; i < e->nv; i++) {
        const double *y = e->Y + i * e->np;
        double s = 0;
        for (size_t j = 0; j < e->np; j++)
            s += y[j] * pi[j];
        z[i] = s;
    }
}

static int ekf_h(void *user, const double *x, double *z_out, rb_err *err)
{
    rb_iekf *e = user;
    int rc = to_pi_all(e, x, e->gpi, NULL, err);
    if (!rc)
        y_times(e, e->gpi, z_out);
    return rc;
}

/* the random walk (eq. 18): theta_k = theta_{k-1} */
static int ekf_f(void *user, const double *x, const double *u, double dt, double *x_out, rb_err *err)
{
    (void)u, (void)dt, (void)err;
    const rb_iekf *e = user;
    memcpy(x_out, x, e->np * sizeof *x);
    return RB_OK;
}

static int ekf_jac_f(void *user, const double *x, const double *u, double dt, double *F, rb_err *err)
{
    (void)x, (void)u, (void)dt, (void)err;
    const rb_iekf *e = user;
    memset(F, 0, e->np * e->np * sizeof *F);
    for (size_t i = 0; i < e->np; i++)
        F[i * e->np + i] = 1;
    return RB_OK;
}

static int ekf_jac_h(void *user, const double *x, double *H, rb_err *err)
{
    rb_iekf *e = user;
    int rc = to_pi_all(e, x, e->gpi, e->G, err);
    if (rc)
        return rc;
    size_t np = e->np;
    for (size_t i = 0; i < e->nv; i++) {
        const double *y = e->Y + i * np;
        double *h = H + i * np;
        for (size_t b = 0; b < e->nb; b++) {
            const double *G = e->G + 100 * b, *yb = y + 10 * b;
            for (size_t j = 0; j < 10; j++) {
                double s = 0;
                for (size_t l = 0; l < 10; l++)
                    s += yb[l] * G[l * 10 + j];
                h[10 * b + j] = s;
            }
        }
    }
    return RB_OK;
}

/* ---- set-up ------------------------------------------------------------------------------------------------- */
static int check_config(const rb_model *m, const rb_iekf_config *c, rb_err *err)
{
    if (c->n_bodies == 0 || !c->bodies)
        return rb_err_set(err, RB_ECONFIG, "no body to estimate");
    for (size_t b = 0; b < c->n_bodies; b++) {
        size_t i = c->bodies[b];
        if (i >= m->n_bodies || (i == 0 && !m->floating))
            return rb_err_set(err, RB_ECONFIG, "bodies[%zu]: body %zu is not a moving body of model %s", b, i,
                              m->name ? m->name : "(unnamed)");
        for (size_t a = 0; a < b; a++)
            if (c->bodies[a] == i)
                return rb_err_set(err, RB_ECONFIG, "bodies[%zu]: body %s is listed twice", b, m->bodies[i].name);
        const double *pi = m->bodies[i].inertia;
        if (!(pi[0] > 0))
            return rb_err_set(err, RB_ECONFIG,
                              "body %s: nominal mass %g kg: the estimate starts from the model's "
                              "parameters and needs a positive mass",
                              m->bodies[i].name, pi[0]);
        if (c->filter == RB_IEKF_EKF_LOG_CHOLESKY && !rb_inertia_is_consistent(pi))
            return rb_err_set(err, RB_ECONFIG,
                              "body %s: nominal parameters not fully physically consistent (pseudo-inertia not "
                              "positive definite: a principal moment at or beyond the sum of the other two?); the "
                              "log-Cholesky filter starts from them",
                              m->bodies[i].name);
    }
    for (size_t j = 0; j < 10; j++) {
        if (!isfinite(c->q[j]) || c->q[j] < 0)
            return rb_err_set(err, RB_ECONFIG, "process variance of parameter %zu: %g (finite, >= 0)", j, c->q[j]);
        if (!isfinite(c->p0[j]) || !(c->p0[j] > 0))
            return rb_err_set(err, RB_ECONFIG, "initial variance of parameter %zu: %g (finite, > 0)", j, c->p0[j]);
        if (!isfinite(c->rate[j]) || c->rate[j] < 0)
            return rb_err_set(err, RB_ECONFIG, "rate limit of parameter %zu: %g (finite, >= 0)", j, c->rate[j]);
    }
    for (size_t i = 0; i < m->nv; i++) {
        double r = c->r ? c->r[i] : c->r_scalar;
        if (!isfinite(r) || !(r > 0))
            return rb_err_set(err, RB_ECONFIG, "measurement variance of row %zu: %g (finite, > 0)", i, r);
    }
    if (c->gate == RB_IEKF_GATE_PROBABILITY && !(c->gate_value > 0 && c->gate_value < 1))
        return rb_err_set(err, RB_ECONFIG, "gate probability %g: must lie in (0, 1) (1 would accept everything)",
                          c->gate_value);
    if (c->gate == RB_IEKF_GATE_NIS && !(c->gate_value > 0 && isfinite(c->gate_value)))
        return rb_err_set(err, RB_ECONFIG, "gate NIS threshold %g: must be finite and > 0", c->gate_value);
    if (!(c->bias_window >= 0 && isfinite(c->bias_window)) || !(c->residual_cutoff >= 0) ||
        !(c->estimate_cutoff >= 0) || !isfinite(c->residual_cutoff) || !isfinite(c->estimate_cutoff))
        return rb_err_set(err, RB_ECONFIG, "bias window and low-pass cutoffs must be finite and >= 0");
    if (!(c->var_warn_factor >= 0))
        return rb_err_set(err, RB_ECONFIG, "var_warn_factor %g: must be >= 0", c->var_warn_factor);
    for (size_t i = 0; i < c->n_contacts; i++) {
        const rb_iekf_contact *ct = &c->contacts[i];
        if (ct->frame < 0 || (size_t)ct->frame >= m->n_frames)
            return rb_err_set(err, RB_ECONFIG, "contacts[%zu]: frame %d out of range", i, ct->frame);
        if (ct->rep != RB_DYN_MIXED && ct->rep != RB_DYN_BODY)
            return rb_err_set(err, RB_ECONFIG, "contacts[%zu]: representation must be mixed or body", i);
    }
    return RB_OK;
}

/* Carve the double arrays out of one block. */
static int alloc_arrays(rb_iekf *e, rb_err *err)
{
    size_t np = e->np, nv = e->nv, nq = e->nq, n = e->n, nc6 = 6 * e->nc;
    size_t hist = nq + nv + n + nc6;
    size_t total = nv /* r */ + 2 * np /* qvar p0 */ + nv * np /* Y */ + 2 * nv /* tau_nom z */ + 6 * nv /* Jc */ +
                   100 * e->nb /* G */ + 2 * np /* gpi zhat(np for safety) */ + nv /* zhat */ + 3 * np /* pi pi_raw
                   theta */
                   + e->nb /* mass */ + 3 * e->nb /* com */ + nv /* residual */ + np /* var */ + nv    /* bias */
                   + np /* pi_lp */ + nv /* res_lp */ + nv /* bias_sum */ + 3 * hist + np /* max_var */ +
                   np * np /* info */ + nv /* nu_dot */;
    double *p = rb_calloc(total, sizeof *p);
    e->consistent = rb_calloc(e->nb, 1);
    e->bias_cnt = rb_calloc(nv, sizeof *e->bias_cnt);
    if (!p || !e->consistent || !e->bias_cnt) {
        rb_free(p);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
#define TAKE(field, len) (e->field = p, p += (len))
    TAKE(r, nv);
    TAKE(qvar, np);
    TAKE(p0, np);
    TAKE(Y, nv * np);
    TAKE(tau_nom, nv);
    TAKE(z, nv);
    TAKE(Jc, 6 * nv);
    TAKE(G, 100 * e->nb);
    TAKE(gpi, 2 * np);
    TAKE(zhat, nv);
    TAKE(pi, np);
    TAKE(pi_raw, np);
    TAKE(theta, np);
    TAKE(mass, e->nb);
    TAKE(com, 3 * e->nb);
    TAKE(residual, nv);
    TAKE(var, np);
    TAKE(bias, nv);
    TAKE(pi_lp, np);
    TAKE(res_lp, nv);
    TAKE(bias_sum, nv);
    for (int s = 0; s < 3; s++) {
        TAKE(hist[s].q, nq);
        TAKE(hist[s].nu, nv);
        TAKE(hist[s].tau, n);
        TAKE(hist[s].lambda, nc6);
    }
    TAKE(max_var, np);
    TAKE(info, np * np);
    TAKE(nu_dot, nv);
#undef TAKE
    return RB_OK;
}

static int make_filter(rb_iekf *e, const double *x0, rb_err *err)
{
    size_t np = e->np, nv = e->nv;
    double *P0 = rb_calloc(np * np + nv * nv + np * nv, sizeof *P0);
    if (!P0)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    double *R = P0 + np * np, *H = R + nv * nv;
    for (size_t i = 0; i < np; i++)
        P0[i * np + i] = e->p0[i];
    for (size_t i = 0; i < nv; i++)
        R[i * nv + i] = e->r[i];
    double *F = NULL;
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = np, o.m = nv, o.x0 = x0, o.P0 = P0, o.R = R;
    o.gate.mode = e->cfg.gate == RB_IEKF_GATE_OFF ? RB_GATE_OFF : RB_GATE_VECTOR;
    if (e->cfg.gate == RB_IEKF_GATE_PROBABILITY)
        o.gate.probability = e->cfg.gate_value;
    else if (e->cfg.gate == RB_IEKF_GATE_NIS)
        o.gate.threshold = e->cfg.gate_value;
    int rc;
    if (e->cfg.filter == RB_IEKF_KF_LINEAR) {
        F = rb_calloc(np * np, sizeof *F);
        if (!F) {
            rb_free(P0);
            return rb_err_set(err, RB_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < np; i++)
            F[i * np + i] = 1;
        o.F = F, o.H = H;
        rc = rb_kf_create(&o, &e->f, err);
    } else {
        o.h = ekf_h, o.jac_h = ekf_jac_h, o.user = e;
        o.f = ekf_f, o.jac_f = ekf_jac_f;
        rc = rb_ekf_create(&o, &e->f, err);
    }
    rb_free(F);
    rb_free(P0);
    return rc;
}

static void set_outputs_from_x(rb_iekf *e);
static int refresh(rb_iekf *e, size_t k, rb_err *err);

int rb_iekf_alloc(const rb_model *model, const rb_iekf_config *cfg, rb_iekf **out, rb_err *err)
{
    if (!model || !cfg || !out)
        return rb_err_set(err, RB_EINVAL, "rb_iekf_alloc: NULL argument");
    *out = NULL;
    int rc = check_config(model, cfg, err);
    if (rc)
        return rc;
    rb_iekf *e = rb_calloc(1, sizeof *e);
    if (!e)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    e->m = model, e->cfg = *cfg;
    e->nb = cfg->n_bodies, e->np = 10 * e->nb, e->nv = model->nv, e->nq = model->nq, e->n = model->n_dofs;
    e->nc = cfg->n_contacts;
    e->bodies = rb_calloc(e->nb, sizeof *e->bodies);
    e->contacts = rb_calloc(e->nc ? e->nc : 1, sizeof *e->contacts);
    if (!e->bodies || !e->contacts) {
        rb_iekf_free(e);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    memcpy(e->bodies, cfg->bodies, e->nb * sizeof *e->bodies);
    if (e->nc)
        memcpy(e->contacts, cfg->contacts, e->nc * sizeof *e->contacts);
    e->cfg.bodies = e->bodies, e->cfg.contacts = e->contacts;
    if ((rc = alloc_arrays(e, err))) {
        rb_iekf_free(e);
        return rc;
    }
    for (size_t i = 0; i < e->nv; i++)
        e->r[i] = cfg->r ? cfg->r[i] : cfg->r_scalar;
    e->cfg.r = e->r;
    for (size_t i = 0; i < e->np; i++)
        e->qvar[i] = cfg->q[i % 10], e->p0[i] = cfg->p0[i % 10];
    /* the start: the model's parameters (theta = g^-1 for the EKF) */
    for (size_t b = 0; b < e->nb; b++)
        memcpy(e->pi_raw + 10 * b, model->bodies[e->bodies[b]].inertia, 10 * sizeof(double));
    const double *x0 = e->pi_raw;
    if (cfg->filter == RB_IEKF_EKF_LOG_CHOLESKY) {
        for (size_t b = 0; !rc && b < e->nb; b++)
            if ((rc = rb_lchol_from_pi(cfg->form, e->pi_raw + 10 * b, e->theta + 10 * b, err)))
                rc = rb_err_prefix(err, RB_ECONFIG, "body %s: ", body_name(e, b));
        x0 = e->theta;
    }
    if (!rc)
        rc = rb_dyn_alloc(model, &e->ws, err);
    if (!rc && e->nc)
        rc = rb_dyn_reserve_contacts(e->ws, 6 * e->nc, err);
    if (!rc)
        rc = rb_dyn_condensed_alloc(model, e->bodies, e->nb, &e->cond, err);
    if (!rc)
        rc = make_filter(e, x0, err);
    if (!rc)
        rc = refresh(e, 0, err);
    if (rc) {
        rb_iekf_free(e);
        return rc;
    }
    memcpy(e->pi, e->pi_raw, e->np * sizeof *e->pi);
    memcpy(e->pi_lp, e->pi_raw, e->np * sizeof *e->pi);
    set_outputs_from_x(e);
    for (size_t i = 0; i < e->nv; i++)
        e->residual[i] = NAN;
    e->nis = NAN;
    *out = e;
    return RB_OK;
}

/* ---- per step ------------------------------------------------------------------------------------------------ */
static bool finite_all(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

/* pi_raw, theta, consistent, var, max_var from the filter's state; RB_ENUMERIC naming the body when theta or
 * pi is not finite. */
static int refresh(rb_iekf *e, size_t k, rb_err *err)
{
    const double *x = rb_filter_x(e->f), *P = rb_filter_P(e->f);
    size_t np = e->np;
    for (size_t b = 0; b < e->nb; b++) {
        const double *xb = x + 10 * b;
        for (size_t j = 0; j < 10; j++)
            if (!isfinite(xb[j]))
                return rb_err_set(err, RB_ENUMERIC, "sample %zu: body %s: %s = %g is not finite", k, body_name(e, b),
                                  e->cfg.filter == RB_IEKF_KF_LINEAR ? pi_names[j] : theta_names[j], xb[j]);
        if (e->cfg.filter == RB_IEKF_EKF_LOG_CHOLESKY) {
            rb_err sub;
            rb_err_clear(&sub);
            if (rb_lchol_to_pi(e->cfg.form, xb, e->pi_raw + 10 * b, &sub) || !finite_all(e->pi_raw + 10 * b, 10))
                return rb_err_set(err, RB_ENUMERIC,
                                  "sample %zu: body %s: theta overflows (alpha = %g, d = [%g, %g, %g]): pi = g(theta) "
                                  "is not finite; lower the variances",
                                  k, body_name(e, b), xb[0], xb[1], xb[2], xb[3]);
            memcpy(e->theta + 10 * b, xb, 10 * sizeof *xb);
        } else {
            memcpy(e->pi_raw + 10 * b, xb, 10 * sizeof *xb);
            rb_err sub;
            rb_err_clear(&sub);
            if (!rb_inertia_is_consistent(xb) || rb_lchol_from_pi(e->cfg.form, xb, e->theta + 10 * b, &sub))
                for (size_t j = 0; j < 10; j++)
                    e->theta[10 * b + j] = NAN;
        }
        e->consistent[b] = rb_inertia_is_consistent(e->pi_raw + 10 * b);
    }
    for (size_t i = 0; i < np; i++) {
        e->var[i] = P[i * np + i];
        if (e->var[i] > e->max_var[i])
            e->max_var[i] = e->var[i];
    }
    return RB_OK;
}

static double lp_gain(double fc, double dt) { return 1 - exp(-2 * M_PI * fc * dt); }

/* pi (low-passed, rate-limited), mass, com from pi_raw. */
static void stream_out(rb_iekf *e, double dt)
{
    size_t np = e->np;
    if (e->cfg.estimate_cutoff > 0 && e->est_lp_started && dt > 0) {
        double a = lp_gain(e->cfg.estimate_cutoff, dt);
        for (size_t i = 0; i < np; i++)
            e->pi_lp[i] += a * (e->pi_raw[i] - e->pi_lp[i]);
    } else {
        memcpy(e->pi_lp, e->pi_raw, np * sizeof *e->pi_lp);
    }
    e->est_lp_started = true;
    /* Per body, one step along the straight line towards the estimate, as long as every parameter's rate allows:
     * pi stays a convex combination of fully consistent parameters (the pseudo-inertia is linear in pi), so the
     * controller never gets a body whose mass moved without its first moment (a CoM h / m thrown off). */
    for (size_t b = 0; b < e->nb; b++) {
        double *pi = e->pi + 10 * b;
        const double *target = e->pi_lp + 10 * b;
        double frac = 1.0;
        for (size_t j = 0; j < 10 && dt > 0; j++) {
            double rate = e->cfg.rate[j], d = fabs(target[j] - pi[j]);
            if (rate > 0 && d > rate * dt)
                frac = fmin(frac, rate * dt / d);
        }
        for (size_t j = 0; j < 10; j++)
            pi[j] += frac * (target[j] - pi[j]);
    }
    set_outputs_from_x(e);
}

static void set_outputs_from_x(rb_iekf *e)
{
    for (size_t b = 0; b < e->nb; b++) {
        const double *p = e->pi + 10 * b;
        e->mass[b] = p[0];
        for (int a = 0; a < 3; a++)
            e->com[3 * b + a] = p[0] != 0 ? p[1 + a] / p[0] : NAN;
    }
}

/* Delta tau (eq. 14) into e->z, Y_est into e->Y; false when the motion or a contact is not finite. */
static int measurement(rb_iekf *e, const double *q, const double *nu, const double *nu_dot, const double *tau,
                       const double *lambda, bool *ok, rb_err *err)
{
    *ok = finite_all(q, e->nq) && finite_all(nu, e->nv) && finite_all(nu_dot, e->nv) &&
          (e->nc == 0 || finite_all(lambda, 6 * e->nc));
    if (!*ok)
        return RB_OK;
    int rc = rb_dyn_condensed_eval(e->m, e->ws, e->cond, q, nu, nu_dot, e->Y, e->tau_nom, err);
    if (rc)
        return rc;
    size_t nv = e->nv, base = e->m->floating ? 6 : 0;
    for (size_t i = 0; i < nv; i++) { /* a non-finite torque (NaN, an overflow) is a missing row */
        double to = i < base ? 0 : tau[i - base];
        e->z[i] = isfinite(to) ? to - e->tau_nom[i] : NAN;
    }
    rb_mat J = {6, nv, nv, e->Jc};
    for (size_t c = 0; c < e->nc; c++) {
        if ((rc = rb_dyn_frame_jacobian(e->m, e->ws, (size_t)e->contacts[c].frame, e->contacts[c].rep, &J, err)))
            return rb_err_prefix(err, rc, "contact %zu: ", c);
        const double *w = lambda + 6 * c;
        for (size_t i = 0; i < nv; i++) {
            double s = 0;
            for (size_t a = 0; a < 6; a++)
                s += e->Jc[a * nv + i] * w[a];
            e->z[i] += s;
        }
    }
    return RB_OK;
}

static void accumulate_info(rb_iekf *e)
{
    size_t np = e->np;
    for (size_t i = 0; i < e->nv; i++) {
        if (isnan(e->z[i]))
            continue;
        const double *y = e->Y + i * np;
        double w = 1 / e->r[i];
        for (size_t a = 0; a < np; a++) {
            if (y[a] == 0)
                continue;
            double ya = w * y[a];
            double *row = e->info + a * np;
            for (size_t b = 0; b < np; b++)
                row[b] += ya * y[b];
        }
    }
}

static int filter_failed(rb_iekf *e, size_t k, int rc, rb_err *err)
{
    size_t idx = 0;
    rb_filter_fail why = rb_filter_last_failure(e->f, &idx);
    const char *const *names = e->cfg.filter == RB_IEKF_KF_LINEAR ? pi_names : theta_names;
    if (why == RB_FILTER_FAIL_P && idx < e->np)
        return rb_err_prefix(err, rc, "sample %zu: covariance not positive definite (body %s, %s): ", k,
                             body_name(e, idx / 10), names[idx % 10]);
    if (why == RB_FILTER_FAIL_S)
        return rb_err_prefix(err, rc, "sample %zu: innovation covariance not positive definite (row %zu): ", k, idx);
    if (why == RB_FILTER_FAIL_X && idx < e->np)
        return rb_err_prefix(err, rc, "sample %zu: body %s: %s not finite: ", k, body_name(e, idx / 10),
                             names[idx % 10]);
    return rb_err_prefix(err, rc, "sample %zu: ", k);
}

static int predict(rb_iekf *e, size_t k, double dt, rb_err *err)
{
    if (!(dt > 0))
        return RB_OK;
    if (dt != e->dt) {
        rb_filter_mats mt = rb_filter_get_mats(e->f);
        for (size_t i = 0; i < e->np; i++)
            *rb_mat_at(&mt.Q, i, i) = e->qvar[i] * dt;
        e->dt = dt;
    }
    rb_filter_set_step(e->f, (long)k - 1);
    int rc = rb_filter_predict(e->f, NULL, dt, err);
    return rc ? filter_failed(e, k, rc, err) : RB_OK;
}

/* The residual low-pass on Delta tau (per row; a NaN row keeps its state and stays NaN). */
static void lowpass_residual(rb_iekf *e, double dt)
{
    if (!(e->cfg.residual_cutoff > 0))
        return;
    double a = e->res_lp_started && dt > 0 ? lp_gain(e->cfg.residual_cutoff, dt) : 1;
    for (size_t i = 0; i < e->nv; i++)
        if (!isnan(e->z[i]))
            e->z[i] = e->res_lp[i] += a * (e->z[i] - e->res_lp[i]);
    e->res_lp_started = true;
}

static int update(rb_iekf *e, size_t k, double t, rb_err *err)
{
    size_t nv = e->nv, rows = 0;
    for (size_t i = 0; i < nv; i++)
        rows += !isnan(e->z[i]);
    if (rows == 0) {
        e->predict_only++;
        return RB_OK;
    }
    e->rows_skipped += (long)(nv - rows);
    y_times(e, e->pi_raw, e->zhat);
    bool window = e->cfg.bias_window > 0 && !e->bias_frozen;
    if (window && t - e->t0 >= e->cfg.bias_window) {
        for (size_t i = 0; i < nv; i++)
            e->bias[i] = e->bias_cnt[i] ? e->bias_sum[i] / (double)e->bias_cnt[i] : 0;
        e->bias_frozen = true, window = false;
    }
    if (window) {
        for (size_t i = 0; i < nv; i++)
            if (!isnan(e->z[i]))
                e->bias_sum[i] += e->z[i] - e->zhat[i], e->bias_cnt[i]++;
        for (size_t i = 0; i < nv; i++)
            e->residual[i] = e->z[i] - e->zhat[i];
        return RB_OK;
    }
    for (size_t i = 0; i < nv; i++) {
        e->z[i] -= e->bias[i];
        e->residual[i] = e->z[i] - e->zhat[i];
    }
    if (e->cfg.filter == RB_IEKF_KF_LINEAR) {
        rb_filter_mats mt = rb_filter_get_mats(e->f);
        for (size_t i = 0; i < nv; i++)
            memcpy(rb_mat_at(&mt.H, i, 0), e->Y + i * e->np, e->np * sizeof(double));
    }
    int rc = rb_filter_update(e->f, e->z, err);
    if (rc)
        return filter_failed(e, k, rc, err);
    rb_filter_diag d;
    rb_filter_get_diag(e->f, &d);
    e->nis = d.nis;
    if (d.rejected) {
        e->gated = true, e->n_gated++;
        return RB_OK;
    }
    e->updated = true, e->updates++;
    accumulate_info(e);
    return RB_OK;
}

int rb_iekf_step(rb_iekf *e, size_t k, double t, const double *q, const double *nu, const double *nu_dot,
                 const double *tau, const double *lambda, rb_err *err)
{
    if (!e || !q || !nu || !tau || (e->nc && !lambda) || (e->cfg.ddq == RB_IEKF_DDQ_GIVEN && !nu_dot))
        return rb_err_set(err, RB_EINVAL, "rb_iekf_step: NULL argument");
    if (!isfinite(t))
        return rb_err_set(err, RB_EINPUT, "sample %zu: time %g is not finite", k, t);
    double dt = 0;
    if (e->n_steps > 0) {
        dt = t - e->t_prev;
        if (!(dt > 0))
            return rb_err_set(err, RB_EINPUT,
                              "sample %zu: t = %.17g s is not after the previous sample's %.17g s (dt <= 0: repeated "
                              "timestamps?)",
                              k, t, e->t_prev);
    } else {
        e->t0 = t;
    }
    e->t_prev = t;
    e->n_steps++;
    e->gated = e->updated = false;
    e->nis = NAN;
    for (size_t i = 0; i < e->nv; i++)
        e->residual[i] = NAN;
    int rc = predict(e, k, dt, err);
    if (rc)
        return rc;

    const double *dd = nu_dot;
    if (e->cfg.ddq == RB_IEKF_DDQ_CENTRAL) {
        iekf_sample *s = &e->hist[(e->n_steps - 1) % 3];
        s->t = t;
        memcpy(s->q, q, e->nq * sizeof *q);
        memcpy(s->nu, nu, e->nv * sizeof *nu);
        memcpy(s->tau, tau, e->n * sizeof *tau);
        if (e->nc)
            memcpy(s->lambda, lambda, 6 * e->nc * sizeof *lambda);
        if (e->n_steps < 3) {
            stream_out(e, dt);
            return RB_OK;
        }
        const iekf_sample *mid = &e->hist[(e->n_steps - 2) % 3], *old = &e->hist[(e->n_steps - 3) % 3];
        for (size_t i = 0; i < e->nv; i++)
            e->nu_dot[i] = (s->nu[i] - old->nu[i]) / (s->t - old->t);
        q = mid->q, nu = mid->nu, tau = mid->tau, lambda = mid->lambda, dd = e->nu_dot, t = mid->t;
    }
    bool ok;
    if ((rc = measurement(e, q, nu, dd, tau, lambda, &ok, err)))
        return rb_err_prefix(err, rc, "sample %zu: ", k);
    if (!ok) {
        e->predict_only++;
    } else {
        lowpass_residual(e, dt);
        if ((rc = update(e, k, t, err)))
            return rc;
    }
    if ((rc = refresh(e, k, err)))
        return rc;
    stream_out(e, dt);
    return RB_OK;
}

void rb_iekf_get_out(const rb_iekf *e, rb_iekf_out *o)
{
    o->pi = e->pi, o->pi_raw = e->pi_raw, o->theta = e->theta, o->mass = e->mass, o->com = e->com;
    o->consistent = e->consistent, o->residual = e->residual, o->nis = e->nis, o->gated = e->gated;
    o->updated = e->updated, o->var = e->var, o->bias = e->bias;
}

void rb_iekf_get_diag(const rb_iekf *e, rb_iekf_diag *d)
{
    d->steps = e->n_steps, d->updates = e->updates, d->gated = e->n_gated, d->rows_skipped = e->rows_skipped;
    d->predict_only = e->predict_only, d->max_var = e->max_var, d->info = e->info;
}
