/* CoM estimation on the linear inverted pendulum (roboest/observers.h, rb_lipm_*; seed 003, ch. 3): two adaptive
 * Kalman filters (rb_akf) per estimator, one per horizontal axis, in form 1 or form 2, with the ZMP error's
 * low-pass, plus the helpers a stage needs around them (foot CoP, ZMP, IMU-to-CoM acceleration, foot anchoring). */
#include <math.h>
#include <string.h>

#include "roboest/observers.h"

typedef struct lipm_axis {
    rb_akf *akf;
    rb_filter_mats mats;
    double p_prev, a_prev; /* the last defined ZMP / finite acceleration (NaN: none yet) */
    double lpf, vel_f;
    double zmp, zmp_err;
} lipm_axis;

struct rb_lipm {
    rb_lipm_config cfg;
    size_t n;
    double T, w2; /* the current model period; g / z_c */
    double t_prev;
    lipm_axis ax[2];
    long steps, zmp_undefined, acc_missing;
};

void rb_lipm_config_init(rb_lipm_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->form = RB_LIPM_FORM1;
    cfg->gravity = 9.81;
    cfg->dt = 0.001;
    cfg->N_Q = 2000, cfg->N_R = 1000;
    cfg->p0 = 100, cfg->q0 = 1, cfg->r0 = 1;
    cfg->g3 = 0.002;
    cfg->lpf_cutoff = 0.1;
    cfg->perr_acc = RB_LIPM_PERR_MEASURED;
}

void rb_lipm_free(rb_lipm *e)
{
    if (!e)
        return;
    for (int i = 0; i < 2; i++)
        rb_akf_free(e->ax[i].akf);
    rb_free(e);
}

static bool pos_finite(double v) { return isfinite(v) && v > 0; }

static int check_cfg(const rb_lipm_config *c, rb_err *err)
{
    if (c->form != RB_LIPM_FORM1 && c->form != RB_LIPM_FORM2)
        return rb_err_set(err, RB_ECONFIG, "lipm: form must be 1 or 2");
    if (!pos_finite(c->z_c))
        return rb_err_set(err, RB_ECONFIG, "lipm: z_c must be finite and > 0 (got %g m)", c->z_c);
    if (!pos_finite(c->gravity) || !pos_finite(c->dt))
        return rb_err_set(err, RB_ECONFIG, "lipm: gravity and dt must be finite and > 0 (got %g, %g)", c->gravity,
                          c->dt);
    if (!pos_finite(c->p0) || !pos_finite(c->r0) || !(c->q0 >= 0) || !isfinite(c->q0))
        return rb_err_set(err, RB_ECONFIG, "lipm: p0 and r0 must be > 0, q0 >= 0 (got %g, %g, %g)", c->p0, c->r0,
                          c->q0);
    if (!(c->N_Q > 1) || !(c->N_R > 1) || !isfinite(c->N_Q) || !isfinite(c->N_R))
        return rb_err_set(err, RB_ECONFIG, "lipm: N_Q and N_R must be finite and > 1 (got %g, %g)", c->N_Q, c->N_R);
    if (!(c->g3 > 0 && c->g3 <= 1))
        return rb_err_set(err, RB_ECONFIG, "lipm: g3 must be in (0, 1] (got %g)", c->g3);
    if (!pos_finite(c->lpf_cutoff))
        return rb_err_set(err, RB_ECONFIG, "lipm: lpf_cutoff must be finite and > 0 (got %g Hz)", c->lpf_cutoff);
    if (!isfinite(c->c0[0]) || !isfinite(c->c0[1]))
        return rb_err_set(err, RB_ECONFIG, "lipm: c0 must be finite");
    return RB_OK;
}

/* A and B of the form for period T (row-major, n x n and n x 1). */
static void build_model(const rb_lipm *e, double T, double *A, double *B)
{
    size_t n = e->n;
    memset(A, 0, n * n * sizeof *A);
    memset(B, 0, n * sizeof *B);
    for (size_t i = 0; i < n; i++)
        A[i * n + i] = 1;
    A[0 * n + 1] = T, A[0 * n + 2] = 0.5 * T * T, A[1 * n + 2] = T;
    if (e->cfg.form == RB_LIPM_FORM1) {
        B[2] = T; /* (3.9) */
    } else {
        A[2 * n + 1] = e->w2 * T; /* (3.17) */
        B[2] = -e->w2 * T, B[3] = T;
    }
}

static void set_period(rb_lipm *e, double T)
{
    double A[16], B[4];
    build_model(e, T, A, B);
    for (int i = 0; i < 2; i++) {
        rb_filter_mats *m = &e->ax[i].mats;
        for (size_t r = 0; r < e->n; r++) {
            for (size_t c = 0; c < e->n; c++)
                *rb_mat_at(&m->F, r, c) = A[r * e->n + c];
            *rb_mat_at(&m->B, r, 0) = B[r];
        }
    }
    e->T = T;
}

int rb_lipm_alloc(const rb_lipm_config *cfg, rb_lipm **out, rb_err *err)
{
    *out = NULL;
    int rc = check_cfg(cfg, err);
    if (rc)
        return rc;
    rb_lipm *e = rb_calloc(1, sizeof *e);
    if (!e)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    e->cfg = *cfg;
    e->n = cfg->form == RB_LIPM_FORM1 ? 3 : 4;
    e->w2 = cfg->gravity / cfg->z_c;
    e->t_prev = NAN;
    size_t n = e->n;
    double A[16], B[4], C[4] = {0}, P0[16] = {0}, Q0[4], R0 = cfg->r0, x0[4] = {0};
    build_model(e, cfg->dt, A, B);
    if (cfg->form == RB_LIPM_FORM1)
        C[0] = 1, C[2] = -1 / e->w2; /* (3.10) */
    else
        C[2] = 1; /* (3.18) */
    for (size_t i = 0; i < n; i++)
        P0[i * n + i] = cfg->p0, Q0[i] = cfg->q0;
    for (int i = 0; i < 2; i++) {
        x0[0] = cfg->c0[i];
        if (cfg->form == RB_LIPM_FORM2)
            x0[3] = cfg->c0[i]; /* at rest the ZMP is under the CoM */
        rb_akf_opts o = {.n = n, .m = 1, .nu = 1, .A = A, .B = B, .C = C, .x0 = x0, .P0 = P0, .Q0 = Q0, .R0 = &R0};
        o.N_R = cfg->N_R, o.N_Q = cfg->N_Q;
        if ((rc = rb_akf_create(&o, &e->ax[i].akf, err))) {
            rb_err_prefix(err, rc, "lipm: ");
            rb_lipm_free(e);
            return rc;
        }
        e->ax[i].mats = rb_akf_get_mats(e->ax[i].akf);
        e->ax[i].p_prev = e->ax[i].a_prev = NAN;
        e->ax[i].zmp = e->ax[i].zmp_err = NAN;
    }
    e->T = cfg->dt;
    *out = e;
    return RB_OK;
}

static int step_axis(rb_lipm *e, int i, size_t k, double p, double a, rb_err *err)
{
    lipm_axis *x = &e->ax[i];
    double T = e->T, u = 0, z;
    if (e->cfg.form == RB_LIPM_FORM1) {
        if (isfinite(a) && isfinite(x->a_prev))
            u = (a - x->a_prev) / T; /* (3.11) */
        z = p;                       /* NaN: the AKF only predicts */
    } else {
        if (isfinite(p) && isfinite(x->p_prev))
            u = (p - x->p_prev) / T; /* (3.16) */
        z = a;
    }
    if (isfinite(a))
        x->a_prev = a;
    if (isfinite(p))
        x->p_prev = p;
    int rc = rb_akf_step(x->akf, &u, &z, err);
    if (rc)
        return rb_err_prefix(err, rc, "sample %zu: axis %c: ", k, "xy"[i]);
    const double *s = rb_akf_x(x->akf);
    if (e->cfg.form == RB_LIPM_FORM2)
        x->vel_f = e->cfg.g3 * s[1] + (1 - e->cfg.g3) * x->vel_f; /* (3.19) */
    x->zmp = p;
    double acc = e->cfg.perr_acc == RB_LIPM_PERR_MEASURED ? a : s[2];
    x->zmp_err = p - (s[0] - acc / e->w2); /* (3.24) */
    if (isfinite(x->zmp_err))
        x->lpf += (1 - exp(-2 * M_PI * e->cfg.lpf_cutoff * T)) * (x->zmp_err - x->lpf);
    return RB_OK;
}

int rb_lipm_step(rb_lipm *e, size_t k, double t, const double p[2], const double a[2], rb_err *err)
{
    if (isfinite(e->t_prev)) {
        double T = t - e->t_prev;
        if (!(T > 0))
            return rb_err_set(err, RB_EINPUT, "sample %zu: t = %.9g is not after the previous sample's %.9g (dt <= 0)",
                              k, t, e->t_prev);
        if (fabs(T - e->T) > 1e-9 * e->T)
            set_period(e, T);
    }
    e->t_prev = t;
    bool p_nan = !isfinite(p[0]) || !isfinite(p[1]);
    double pp[2] = {p_nan ? NAN : p[0], p_nan ? NAN : p[1]};
    for (int i = 0; i < 2; i++) {
        if (!isfinite(a[i]))
            e->acc_missing++;
        int rc = step_axis(e, i, k, pp[i], a[i], err);
        if (rc)
            return rc;
    }
    e->zmp_undefined += p_nan;
    e->steps++;
    return RB_OK;
}

void rb_lipm_get_out(const rb_lipm *e, rb_lipm_out *out)
{
    for (int i = 0; i < 2; i++) {
        const lipm_axis *x = &e->ax[i];
        rb_lipm_axis_out *o = &out->axis[i];
        const double *s = rb_akf_x(x->akf), *P = rb_akf_P(x->akf);
        o->pos = s[0], o->vel_state = s[1], o->acc = s[2];
        o->vel = e->cfg.form == RB_LIPM_FORM2 ? x->vel_f : s[1];
        o->zmp = x->zmp, o->zmp_err = x->zmp_err;
        o->offset = x->lpf;
        o->acc_error = e->w2 * x->lpf;
        o->corrected = e->cfg.form == RB_LIPM_FORM2 ? s[0] + x->lpf : s[0]; /* (3.26) */
        for (size_t j = 0; j < 4; j++)
            o->var[j] = j < e->n ? P[j * e->n + j] : NAN;
    }
}

void rb_lipm_get_diag(const rb_lipm *e, rb_lipm_diag *d)
{
    d->steps = e->steps, d->zmp_undefined = e->zmp_undefined, d->acc_missing = e->acc_missing;
}

size_t rb_lipm_dim(const rb_lipm *e) { return e->n; }

void rb_lipm_foot_cop(const double w[6], double h, double cop[3], double *fn)
{
    double fz = w[2];
    *fn = fz;
    if (!(fz > 0)) {
        cop[0] = cop[1] = NAN, cop[2] = -h;
        return;
    }
    cop[0] = -(w[4] + h * w[0]) / fz;
    cop[1] = (w[3] - h * w[1]) / fz;
    cop[2] = -h;
}

size_t rb_lipm_zmp(size_t n, const double *fn, const double *rho, const unsigned char *use, double fn_min, double p[2])
{
    double s = 0, sx = 0, sy = 0;
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        if ((use && !use[i]) || !(fn[i] > fn_min) || !isfinite(rho[2 * i]) || !isfinite(rho[2 * i + 1]))
            continue;
        s += fn[i], sx += fn[i] * rho[2 * i], sy += fn[i] * rho[2 * i + 1];
        used++;
    }
    if (!used || !(s > 0)) {
        p[0] = p[1] = NAN;
        return 0;
    }
    p[0] = sx / s, p[1] = sy / s; /* (3.1) */
    return used;
}

void rb_lipm_com_acc(const double R[9], const double f[3], const double w[3], const double w_dot[3], const double r[3],
                     double g, double c_ddot[3])
{
    double wr[3], wwr[3], dr[3], lever[3], lw[3];
    rb_v3_cross(w, r, wr);
    rb_v3_cross(w, wr, wwr);
    rb_v3_cross(w_dot, r, dr);
    for (int j = 0; j < 3; j++)
        lever[j] = f[j] - dr[j] - wwr[j];
    rb_m3_mul_v(R, lever, lw);
    c_ddot[0] = lw[0], c_ddot[1] = lw[1], c_ddot[2] = lw[2] - g;
}

void rb_lipm_anchor_init(rb_lipm_anchor *a) { memset(a, 0, sizeof *a); }

void rb_lipm_anchor_step(rb_lipm_anchor *a, const double rel[6], const unsigned char loaded[2], const double base0[3])
{
    if (!a->started) {
        memcpy(a->base, base0, sizeof a->base);
    } else {
        double sum[3] = {0};
        int held = 0;
        for (int i = 0; i < 2; i++)
            if (loaded[i] && a->loaded[i]) {
                for (int j = 0; j < 3; j++)
                    sum[j] += a->foot[i][j] - rel[3 * i + j];
                held++;
            }
        if (held)
            for (int j = 0; j < 3; j++)
                a->base[j] = sum[j] / held;
        else
            a->held_none++;
    }
    for (int i = 0; i < 2; i++) {
        if (!(a->started && loaded[i] && a->loaded[i]))
            for (int j = 0; j < 3; j++)
                a->foot[i][j] = a->base[j] + rel[3 * i + j];
        a->loaded[i] = loaded[i];
    }
    a->started = true;
}
