/* The momentum-based thrust EKF of seed 004 (Mohamed et al.): see roboest/observers.h (rb_tekf). The dynamics
 * module gives the poses, the CoM and the centroidal momentum, and the jet model; the filters module runs the EKF;
 * this file is the process model of eq. 3 and 8 (explicit Euler), the scheduling of sec. V-E and the outputs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/observers.h"

struct rb_tekf {
    const rb_model *m;
    rb_tekf_config cfg; /* jets, feet point into this struct's arrays */
    size_t nt, nf, n, mz;
    rb_tekf_jet *jets;
    rb_tekf_foot *feet;
    double mass;
    rb_dyn *ws;
    rb_filter *f;
    /* the model of the last sample whose motion was finite: A (6 x nt row-major), G_X_f (6 x 6 per foot) */
    double *A, *X;
    double *u;     /* nt: the throttles the next predict uses */
    double *u_new; /* nt: this sample's, checked */
    double *qvar;  /* n: process variance per second, unscheduled */
    double *t_high;
    unsigned char *sched;
    double *z, *x;
    /* outputs */
    double *L_meas, *W_jets, *var;
    double support_N, support_kg, nis;
    double t_prev;
    long steps, updates, predict_only, nan_throttle, clamped_throttle, clamped_thrust, scheduled_steps;
};

/* the ten coefficients of rb_jet_params, in the order of the perturbation */
static double *coef(rb_jet_params *p, size_t j)
{
    double *c[10] = {&p->K_T, &p->K_TT, &p->K_D, &p->K_DD, &p->K_TD, &p->B_U, &p->B_T, &p->B_D, &p->B_UU, &p->c};
    return c[j];
}

void rb_tekf_config_init(rb_tekf_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->variant = RB_TEKF_COMBINED;
    /* [anchor] thrust_estimation_v1.slx: P0 = Q = 10 I, R = 10 I */
    cfg->q_T = cfg->q_T_dot = cfg->q_L = cfg->q_W = 10;
    cfg->p0_T = cfg->p0_T_dot = cfg->p0_L = cfg->p0_W = 10;
    cfg->r_L = cfg->r_W = 10;
    /* ours: the paper gives no values */
    cfg->q_T_centroidal = 1e4;
    cfg->sched_threshold = 1000;
    cfg->sched_var = 1e4;
    cfg->sched_hold = 0.5;
    cfg->seed = 1;
    cfg->gravity = 9.81;
}

void rb_tekf_free(rb_tekf *e)
{
    if (!e)
        return;
    rb_filter_free(e->f);
    rb_dyn_free(e->ws);
    rb_free(e->jets);
    rb_free(e->feet);
    rb_free(e->A); /* one block for every double array */
    rb_free(e->sched);
    rb_free(e);
}

static const char *frame_name(const rb_tekf *e, int frame) { return e->m->frames[frame].name; }

/* ---- the process model (continuous) and its filter callbacks --------------------------------------------------- */
static size_t iL(const rb_tekf *e) { return 2 * e->nt; }
static size_t iW(const rb_tekf *e) { return 2 * e->nt + 6; }

/* xdot = f_c(x, u) with the stored A, G_X_f. */
static void f_cont(const rb_tekf *e, const double *x, const double *u, double *xd)
{
    size_t nt = e->nt, l = iL(e), w = iW(e);
    for (size_t i = 0; i < nt; i++) {
        if (e->cfg.variant == RB_TEKF_CENTROIDAL_ONLY) {
            xd[i] = 0, xd[nt + i] = 0;
        } else {
            xd[i] = x[nt + i];
            xd[nt + i] = rb_jet_accel(&e->jets[i].params, x[i], x[nt + i], u[i]);
        }
    }
    for (size_t r = 0; r < 6; r++) {
        double s = r == 2 ? -e->mass * e->cfg.gravity : 0;
        for (size_t i = 0; i < nt; i++)
            s += e->A[r * nt + i] * x[i];
        for (size_t f = 0; f < e->nf; f++) {
            const double *X = e->X + 36 * f + 6 * r, *W = x + w + 6 * f;
            for (size_t c = 0; c < 6; c++)
                s += X[c] * W[c];
        }
        xd[l + r] = s;
    }
    memset(xd + w, 0, 6 * e->nf * sizeof *xd);
}

/* The jet's Euler step kept in the model's domain as the plant keeps it (rb_jet_step): T in [0, T_max], with T_dot
 * not pushing past the bound it sits on. Outside that range the fitted model is not a jet (its K_D, K_DD make T_dot
 * grow without bound at zero throttle), and an unclamped prediction there grows P until S is not positive definite.
 * Returns which of T (bit 0) and T_dot (bit 1) the bound fixed. */
static unsigned jet_bound(const rb_jet_params *p, double *T, double *T_dot)
{
    unsigned fixed = 0; /* on a bound exactly, nothing is fixed: x0 = 0 keeps its P0 */
    if (*T < 0.0) {
        *T = 0.0, fixed = 1;
        if (*T_dot < 0.0)
            *T_dot = 0.0, fixed |= 2;
    } else if (*T > p->T_max) {
        *T = p->T_max, fixed = 1;
        if (*T_dot > 0.0)
            *T_dot = 0.0, fixed |= 2;
    }
    return fixed;
}

static int cb_f(void *user, const double *x, const double *u, double dt, double *x_out, rb_err *err)
{
    (void)err;
    const rb_tekf *e = user;
    f_cont(e, x, u, x_out);
    for (size_t i = 0; i < e->n; i++)
        x_out[i] = x[i] + dt * x_out[i];
    if (e->cfg.variant != RB_TEKF_CENTROIDAL_ONLY)
        for (size_t i = 0; i < e->nt; i++)
            jet_bound(&e->jets[i].params, x_out + i, x_out + e->nt + i);
    return RB_OK;
}

static int cb_jac_f(void *user, const double *x, const double *u, double dt, double *F, rb_err *err)
{
    (void)err;
    const rb_tekf *e = user;
    size_t n = e->n, nt = e->nt, l = iL(e), w = iW(e);
    memset(F, 0, n * n * sizeof *F);
    for (size_t i = 0; i < n; i++)
        F[i * n + i] = 1;
    if (e->cfg.variant != RB_TEKF_CENTROIDAL_ONLY)
        for (size_t i = 0; i < nt; i++) {
            const rb_jet_params *p = &e->jets[i].params;
            double d[3], T1 = x[i] + dt * x[nt + i], Td1 = x[nt + i] + dt * rb_jet_accel(p, x[i], x[nt + i], u[i]);
            unsigned fixed = jet_bound(p, &T1, &Td1); /* a component the bound fixed does not depend on x */
            rb_jet_accel_partials(p, x[i], x[nt + i], u[i], d);
            F[i * n + nt + i] += dt;
            F[(nt + i) * n + i] += dt * d[0];
            F[(nt + i) * n + nt + i] += dt * d[1];
            for (unsigned b = 0; b < 2; b++)
                if (fixed & (1u << b))
                    F[(b * nt + i) * n + i] = 0, F[(b * nt + i) * n + nt + i] = 0;
        }
    for (size_t r = 0; r < 6; r++) {
        double *row = F + (l + r) * n;
        if (e->cfg.variant != RB_TEKF_JETS_ONLY) /* jets only: T is exact for the momentum (no link to z) */
            for (size_t i = 0; i < nt; i++)
                row[i] = dt * e->A[r * nt + i];
        for (size_t f = 0; f < e->nf; f++)
            for (size_t c = 0; c < 6; c++)
                row[w + 6 * f + c] = dt * e->X[36 * f + 6 * r + c];
    }
    return RB_OK;
}

static int cb_h(void *user, const double *x, double *z, rb_err *err)
{
    (void)err;
    const rb_tekf *e = user;
    memcpy(z, x + iL(e), e->mz * sizeof *z);
    return RB_OK;
}

static int cb_jac_h(void *user, const double *x, double *H, rb_err *err)
{
    (void)x, (void)err;
    const rb_tekf *e = user;
    memset(H, 0, e->mz * e->n * sizeof *H);
    for (size_t j = 0; j < e->mz; j++)
        H[j * e->n + iL(e) + j] = 1;
    return RB_OK;
}

/* Q_d = Q dt, with the scheduled jets' T and T_dot at sched_var (sec. V-E). */
static int cb_schedule(void *user, rb_filter_sched *s, rb_err *err)
{
    (void)err;
    const rb_tekf *e = user;
    if (s->phase != RB_FILTER_PREDICT)
        return RB_OK;
    for (size_t i = 0; i < e->n; i++) {
        double q = e->qvar[i];
        if (i < 2 * e->nt && e->sched[i % e->nt])
            q = e->cfg.sched_var;
        *rb_mat_at(&s->mats.Q, i, i) = q * s->dt;
    }
    return RB_OK;
}

/* ---- set-up ------------------------------------------------------------------------------------------------- */
static bool pos_finite(double v) { return isfinite(v) && v > 0; }

static int check_config(const rb_model *m, const rb_tekf_config *c, rb_err *err)
{
    if (c->n_jets == 0 || !c->jets)
        return rb_err_set(err, RB_ECONFIG, "no jet");
    for (size_t i = 0; i < c->n_jets; i++) {
        const rb_tekf_jet *j = &c->jets[i];
        if (j->frame < 0 || (size_t)j->frame >= m->n_frames)
            return rb_err_set(err, RB_ECONFIG, "jets[%zu]: frame %d out of range", i, j->frame);
        double len = sqrt(rb_v3_dot(j->axis, j->axis));
        if (!(len > 1e-12) || !isfinite(len))
            return rb_err_set(err, RB_ECONFIG, "jets[%zu] (%s): thrust axis [%g, %g, %g] has no direction", i,
                              m->frames[j->frame].name, j->axis[0], j->axis[1], j->axis[2]);
        if (!(j->params.u_max >= j->params.u_min))
            return rb_err_set(err, RB_ECONFIG, "jets[%zu] (%s): throttle range [%g, %g] is empty", i,
                              m->frames[j->frame].name, j->params.u_min, j->params.u_max);
        for (size_t a = 0; a < i; a++)
            if (c->jets[a].frame == j->frame)
                return rb_err_set(err, RB_ECONFIG, "jets[%zu]: frame %s is listed twice", i, m->frames[j->frame].name);
    }
    for (size_t i = 0; i < c->n_feet; i++) {
        const rb_tekf_foot *f = &c->feet[i];
        if (f->frame < 0 || (size_t)f->frame >= m->n_frames)
            return rb_err_set(err, RB_ECONFIG, "feet[%zu]: frame %d out of range", i, f->frame);
        if (f->rep != RB_DYN_BODY && f->rep != RB_DYN_MIXED)
            return rb_err_set(err, RB_ECONFIG, "feet[%zu]: convention must be body or mixed", i);
        for (size_t a = 0; a < i; a++)
            if (c->feet[a].frame == f->frame)
                return rb_err_set(err, RB_ECONFIG, "feet[%zu]: frame %s is listed twice", i, m->frames[f->frame].name);
    }
    const double qs[4] = {c->q_T, c->q_T_dot, c->q_L, c->q_W};
    const double ps[4] = {c->p0_T, c->p0_T_dot, c->p0_L, c->p0_W};
    static const char *const blk[4] = {"T", "T_dot", "L", "W"};
    for (int b = 0; b < 4; b++) {
        if (!isfinite(qs[b]) || qs[b] < 0)
            return rb_err_set(err, RB_ECONFIG, "process variance of %s: %g (finite, >= 0)", blk[b], qs[b]);
        if (!pos_finite(ps[b]))
            return rb_err_set(err, RB_ECONFIG, "initial variance of %s: %g (finite, > 0)", blk[b], ps[b]);
    }
    if (!pos_finite(c->r_L) || !pos_finite(c->r_W))
        return rb_err_set(err, RB_ECONFIG, "measurement variances %g (L), %g (W): finite, > 0", c->r_L, c->r_W);
    if (c->variant == RB_TEKF_CENTROIDAL_ONLY && !pos_finite(c->q_T_centroidal))
        return rb_err_set(err, RB_ECONFIG, "centroidal-only thrust process variance %g: finite, > 0",
                          c->q_T_centroidal);
    if (c->schedule && (!(c->sched_threshold >= 0) || !isfinite(c->sched_threshold) || !pos_finite(c->sched_var) ||
                        !(c->sched_hold >= 0) || !isfinite(c->sched_hold)))
        return rb_err_set(err, RB_ECONFIG,
                          "scheduling: threshold %g (>= 0), variance %g (> 0), hold %g s (>= 0), all finite",
                          c->sched_threshold, c->sched_var, c->sched_hold);
    if (!(c->perturb >= 0 && c->perturb < 1))
        return rb_err_set(err, RB_ECONFIG, "perturbation %g: a fraction in [0, 1)", c->perturb);
    if (!pos_finite(c->gravity))
        return rb_err_set(err, RB_ECONFIG, "gravity %g: finite, > 0", c->gravity);
    double mm = rb_dyn_total_mass(m);
    if (!(c->mass >= 0) || !isfinite(c->mass))
        return rb_err_set(err, RB_ECONFIG, "mass %g kg: finite, >= 0 (0: the model's)", c->mass);
    if (c->mass > 0 && fabs(c->mass - mm) > 0.02 * mm)
        return rb_err_set(err, RB_ECONFIG,
                          "mass %g kg differs from the model's total mass %g kg by %.1f %% (more than 2 %%): wrong "
                          "model or configuration?",
                          c->mass, mm, 100 * fabs(c->mass - mm) / mm);
    return RB_OK;
}

static int alloc_arrays(rb_tekf *e, rb_err *err)
{
    size_t nt = e->nt, n = e->n;
    size_t total = 6 * nt + 36 * e->nf + 3 * nt /* u u_new t_high */ + n /* qvar */ + e->mz + n /* z x */ + 6 + 6 +
                   n /* L_meas W_jets var */;
    double *p = rb_calloc(total, sizeof *p);
    e->sched = rb_calloc(nt, 1);
    if (!p || !e->sched) {
        rb_free(p);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
#define TAKE(field, len) (e->field = p, p += (len))
    TAKE(A, 6 * nt);
    TAKE(X, 36 * e->nf);
    TAKE(u, nt);
    TAKE(u_new, nt);
    TAKE(t_high, nt);
    TAKE(qvar, n);
    TAKE(z, e->mz);
    TAKE(x, n);
    TAKE(L_meas, 6);
    TAKE(W_jets, 6);
    TAKE(var, n);
#undef TAKE
    return RB_OK;
}

static void perturb(rb_tekf *e)
{
    if (!(e->cfg.perturb > 0))
        return;
    rb_rng rng;
    rb_rng_seed(&rng, e->cfg.seed);
    for (size_t i = 0; i < e->nt; i++)
        for (size_t j = 0; j < 10; j++)
            *coef(&e->jets[i].params, j) *= 1 + e->cfg.perturb * (2 * rb_rng_uniform(&rng) - 1);
}

static int make_filter(rb_tekf *e, rb_err *err)
{
    size_t n = e->n, mz = e->mz, nt = e->nt;
    double *P0 = rb_calloc(n * n + mz * mz, sizeof *P0);
    if (!P0)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    double *R = P0 + n * n;
    const rb_tekf_config *c = &e->cfg;
    bool centroidal = c->variant == RB_TEKF_CENTROIDAL_ONLY;
    for (size_t i = 0; i < n; i++) {
        bool T = i < nt, Td = !T && i < 2 * nt, L = !T && !Td && i < iW(e);
        P0[i * n + i] = T ? c->p0_T : Td ? c->p0_T_dot : L ? c->p0_L : c->p0_W;
        e->qvar[i] = T    ? (centroidal ? c->q_T_centroidal : c->q_T)
                     : Td ? (centroidal ? 0 : c->q_T_dot)
                     : L  ? c->q_L
                          : c->q_W;
    }
    for (size_t j = 0; j < mz; j++)
        R[j * mz + j] = j < 6 ? c->r_L : c->r_W;
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = n, o.m = mz, o.nu = nt, o.P0 = P0, o.R = R; /* x0 = 0 [anchor] */
    o.f = cb_f, o.h = cb_h, o.jac_f = cb_jac_f, o.jac_h = cb_jac_h, o.user = e;
    o.schedule = cb_schedule, o.schedule_user = e;
    int rc = rb_ekf_create(&o, &e->f, err);
    rb_free(P0);
    return rc;
}

static void outputs(rb_tekf *e);

int rb_tekf_alloc(const rb_model *model, const rb_tekf_config *cfg, rb_tekf **out, rb_err *err)
{
    if (!model || !cfg || !out)
        return rb_err_set(err, RB_EINVAL, "rb_tekf_alloc: NULL argument");
    *out = NULL;
    int rc = check_config(model, cfg, err);
    if (rc)
        return rc;
    rb_tekf *e = rb_calloc(1, sizeof *e);
    if (!e)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    e->m = model, e->cfg = *cfg;
    e->nt = cfg->n_jets, e->nf = cfg->n_feet;
    e->n = 2 * e->nt + 6 + 6 * e->nf, e->mz = 6 + 6 * e->nf;
    e->mass = cfg->mass > 0 ? cfg->mass : rb_dyn_total_mass(model);
    e->jets = rb_calloc(e->nt, sizeof *e->jets);
    e->feet = rb_calloc(e->nf ? e->nf : 1, sizeof *e->feet);
    if (!e->jets || !e->feet) {
        rb_tekf_free(e);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    memcpy(e->jets, cfg->jets, e->nt * sizeof *e->jets);
    if (e->nf)
        memcpy(e->feet, cfg->feet, e->nf * sizeof *e->feet);
    e->cfg.jets = e->jets, e->cfg.feet = e->feet;
    for (size_t i = 0; i < e->nt; i++) {
        double *a = e->jets[i].axis, len = sqrt(rb_v3_dot(a, a));
        for (int k = 0; k < 3; k++)
            a[k] /= len;
    }
    perturb(e);
    if ((rc = alloc_arrays(e, err)) || (rc = rb_dyn_alloc(model, &e->ws, err)) || (rc = make_filter(e, err))) {
        rb_tekf_free(e);
        return rc;
    }
    for (size_t i = 0; i < e->nt; i++)
        e->t_high[i] = -INFINITY;
    e->nis = NAN;
    for (size_t i = 0; i < 6; i++)
        e->L_meas[i] = NAN;
    outputs(e);
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

/* W_jets, support, var from the filter's state (x clamped already). */
static void outputs(rb_tekf *e)
{
    const double *x = rb_filter_x(e->f), *P = rb_filter_P(e->f);
    size_t nt = e->nt;
    for (size_t r = 0; r < 6; r++) {
        double s = r == 2 ? e->mass * e->cfg.gravity : 0;
        for (size_t i = 0; i < nt; i++)
            s -= e->A[r * nt + i] * x[i];
        e->W_jets[r] = s;
    }
    e->support_N = e->W_jets[2];
    e->support_kg = e->support_N / e->cfg.gravity;
    for (size_t i = 0; i < e->n; i++)
        e->var[i] = P[i * e->n + i];
}

/* A, G_X_f and L_meas at (q, nu): the kinematics, the CoM, the frames' poses. */
static int model_at(rb_tekf *e, const double *q, const double *nu, rb_err *err)
{
    const rb_model *m = e->m;
    double c[3];
    int rc = rb_dyn_kinematics(m, e->ws, q, nu, NULL, err);
    if (!rc)
        rc = rb_dyn_centroidal_momentum(m, e->ws, e->L_meas, c, err);
    if (rc)
        return rc;
    size_t nt = e->nt;
    rb_xform X;
    for (size_t i = 0; i < nt; i++) {
        if ((rc = rb_dyn_frame_pose(m, e->ws, (size_t)e->jets[i].frame, &X, err)))
            return rc;
        double l[3], r[3], mo[3];
        rb_m3_mul_v(X.R, e->jets[i].axis, l);
        rb_v3_set(r, X.p[0] - c[0], X.p[1] - c[1], X.p[2] - c[2]);
        rb_v3_cross(r, l, mo);
        for (int a = 0; a < 3; a++)
            e->A[a * nt + i] = l[a], e->A[(3 + a) * nt + i] = mo[a];
    }
    for (size_t f = 0; f < e->nf; f++) {
        if ((rc = rb_dyn_frame_pose(m, e->ws, (size_t)e->feet[f].frame, &X, err)))
            return rc;
        double *G = e->X + 36 * f, R[9], r[3];
        if (e->feet[f].rep == RB_DYN_BODY)
            memcpy(R, X.R, sizeof R);
        else
            rb_m3_identity(R);
        rb_v3_set(r, X.p[0] - c[0], X.p[1] - c[1], X.p[2] - c[2]);
        memset(G, 0, 36 * sizeof *G);
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                G[a * 6 + b] = R[a * 3 + b];
                G[(3 + a) * 6 + 3 + b] = R[a * 3 + b];
            }
        /* tau_G += r x (R f): rows 3..5, columns 0..2 = skew(r) R */
        for (int b = 0; b < 3; b++) {
            double col[3] = {R[b], R[3 + b], R[6 + b]}, rc3[3];
            rb_v3_cross(r, col, rc3);
            for (int a = 0; a < 3; a++)
                G[(3 + a) * 6 + b] = rc3[a];
        }
    }
    return RB_OK;
}

static int filter_failed(rb_tekf *e, size_t k, int rc, rb_err *err)
{
    size_t idx = 0, nt = e->nt;
    rb_filter_fail why = rb_filter_last_failure(e->f, &idx);
    if (why == RB_FILTER_FAIL_S || why == RB_FILTER_FAIL_Z)
        idx += iL(e);
    else if (why == RB_FILTER_FAIL_NONE)
        return rb_err_prefix(err, rc, "sample %zu: ", k);
    char what[96];
    if (idx < nt)
        snprintf(what, sizeof what, "T of jet %s", frame_name(e, e->jets[idx].frame));
    else if (idx < 2 * nt)
        snprintf(what, sizeof what, "T_dot of jet %s", frame_name(e, e->jets[idx - nt].frame));
    else if (idx < iW(e))
        snprintf(what, sizeof what, "L[%zu]", idx - iL(e));
    else
        snprintf(what, sizeof what, "W of foot %s [%zu]", frame_name(e, e->feet[(idx - iW(e)) / 6].frame),
                 (idx - iW(e)) % 6);
    return rb_err_prefix(err, rc, "sample %zu: %s: ", k, what);
}

/* This sample's throttles into u_new: not finite -> the last one (counted), out of range -> clamped (counted) or RB_EINPUT. */
static int throttles(rb_tekf *e, size_t k, const double *u, rb_err *err)
{
    for (size_t i = 0; i < e->nt; i++) {
        const rb_jet_params *p = &e->jets[i].params;
        double v = u[i];
        if (!isfinite(v)) { /* NaN, or an overflow upstream */
            e->nan_throttle++;
            v = e->u[i];
        } else if (!(v >= p->u_min && v <= p->u_max)) {
            if (e->cfg.throttle_error)
                return rb_err_set(err, RB_EINPUT, "sample %zu: jet %s: throttle %g outside [%g, %g]", k,
                                  frame_name(e, e->jets[i].frame), v, p->u_min, p->u_max);
            e->clamped_throttle++;
            v = v < p->u_min ? p->u_min : p->u_max;
        }
        e->u_new[i] = v;
    }
    return RB_OK;
}

static void schedule(rb_tekf *e, double t, const double *err_rpm)
{
    bool any = false;
    for (size_t i = 0; i < e->nt; i++) {
        if (fabs(err_rpm[i]) > e->cfg.sched_threshold) /* false for NaN: no news, the hold runs on */
            e->t_high[i] = t;
        e->sched[i] = t - e->t_high[i] <= e->cfg.sched_hold;
        any |= e->sched[i] != 0;
    }
    e->scheduled_steps += any;
}

int rb_tekf_step(rb_tekf *e, size_t k, double t, const double *q, const double *nu, const double *u,
                 const double *w_feet, const double *rpm_err, rb_err *err)
{
    if (!e || !q || !nu || !u || (e->nf && !w_feet) || (e->cfg.schedule && !rpm_err))
        return rb_err_set(err, RB_EINVAL, "rb_tekf_step: NULL argument");
    if (!isfinite(t))
        return rb_err_set(err, RB_EINPUT, "sample %zu: time %g is not finite", k, t);
    double dt = 0;
    if (e->steps > 0) {
        dt = t - e->t_prev;
        if (!(dt > 0))
            return rb_err_set(err, RB_EINPUT,
                              "sample %zu: t = %.17g s is not after the previous sample's %.17g s (dt <= 0: repeated "
                              "timestamps?)",
                              k, t, e->t_prev);
    }
    int rc = throttles(e, k, u, err);
    if (rc)
        return rc;
    if (e->cfg.schedule)
        schedule(e, t, rpm_err);
    e->nis = NAN;
    if (e->steps > 0) { /* explicit Euler over [t_{k-1}, t_k] with the previous sample's inputs and model */
        rb_filter_set_step(e->f, (long)k - 1);
        if ((rc = rb_filter_predict(e->f, e->u, dt, err)))
            return filter_failed(e, k, rc, err);
    }
    e->t_prev = t;
    memcpy(e->u, e->u_new, e->nt * sizeof *e->u);
    bool ok = finite_all(q, e->m->nq) && finite_all(nu, e->m->nv);
    if (ok) {
        if ((rc = model_at(e, q, nu, err)))
            return rb_err_prefix(err, rc, "sample %zu: ", k);
        memcpy(e->z, e->L_meas, 6 * sizeof *e->z);
        for (size_t j = 0; j < 6 * e->nf; j++)
            e->z[6 + j] = isfinite(w_feet[j]) ? w_feet[j] : NAN;
        if ((rc = rb_filter_update(e->f, e->z, err)))
            return filter_failed(e, k, rc, err);
        rb_filter_diag d;
        rb_filter_get_diag(e->f, &d);
        e->nis = d.nis;
        e->updates += d.dof > 0;
    } else {
        for (size_t i = 0; i < 6; i++)
            e->L_meas[i] = NAN;
        e->predict_only++;
    }
    /* T in [0, T_max]: a thrust cannot pull, nor pass the jet's maximum */
    const double *x = rb_filter_x(e->f);
    bool out = false;
    for (size_t i = 0; i < e->nt; i++)
        out |= x[i] < 0 || x[i] > e->jets[i].params.T_max;
    if (out) {
        memcpy(e->x, x, e->n * sizeof *e->x);
        for (size_t i = 0; i < e->nt; i++)
            if (jet_bound(&e->jets[i].params, e->x + i, e->x + e->nt + i))
                e->clamped_thrust++;
        if ((rc = rb_filter_set_state(e->f, e->x, NULL, err)))
            return rb_err_prefix(err, rc, "sample %zu: ", k);
    }
    e->steps++;
    outputs(e);
    return RB_OK;
}

void rb_tekf_get_out(const rb_tekf *e, rb_tekf_out *o)
{
    const double *x = rb_filter_x(e->f);
    o->T = x, o->T_dot = x + e->nt, o->L = x + iL(e), o->W = x + iW(e);
    o->L_meas = e->L_meas, o->W_jets = e->W_jets, o->support_N = e->support_N, o->support_kg = e->support_kg;
    o->scheduled = e->sched, o->var = e->var, o->nis = e->nis;
}

void rb_tekf_get_diag(const rb_tekf *e, rb_tekf_diag *d)
{
    d->steps = e->steps, d->updates = e->updates, d->predict_only = e->predict_only;
    d->nan_throttle = e->nan_throttle, d->clamped_throttle = e->clamped_throttle;
    d->clamped_thrust = e->clamped_thrust, d->scheduled_steps = e->scheduled_steps;
}

const rb_jet_params *rb_tekf_jet_params(const rb_tekf *e, size_t i) { return i < e->nt ? &e->jets[i].params : NULL; }

void rb_tekf_dims(const rb_tekf *e, size_t *n, size_t *m)
{
    if (n)
        *n = e->n;
    if (m)
        *m = e->mz;
}
