/* Attitude from one IMU (roboest/observers.h, rb_att_*): a gravity-vector KF (written out: its F is block diagonal
 * and H = [-I I I]) feeding roll and pitch to a quaternion EKF (the filters module, normalized by its projection
 * hook), which gives the KF its yaw back. */
#include <math.h>
#include <string.h>

#include "roboest/observers.h"
#include "roboest/spatial.h"

enum { KN = 9 }; /* the KF's state */

struct rb_att {
    rb_att_config cfg;
    /* gravity KF, row-major */
    double x[KN], P[KN * KN];
    double C[KN * 3], W[KN * 3]; /* P H^T, then its columns times L^-T */
    /* quaternion EKF */
    rb_filter *ekf;
    double w[3]; /* the gyroscope (held) */
    double t_prev;
    bool init, updated;
    double q_meas[4];
    long steps, waiting, acc_missing, no_update, gyro_held, flips;
};

void rb_att_config_init(rb_att_config *c)
{
    memset(c, 0, sizeof *c);
    c->acc_noise = 0.02;
    c->gyro_noise = 0.005;
    c->lin_acc_rw = 3.0;
    c->lin_acc_decay = 5.0;
    c->bias_rw = 1e-3;
    c->gravity_std0 = 10.0;
    c->lin_acc_std0 = 1.0;
    c->bias_std0 = 0.1;
    c->quat_noise = 0.003;
    c->quat_std0 = 0.1;
}

void rb_att_free(rb_att *a)
{
    if (!a)
        return;
    rb_filter_free(a->ekf);
    rb_free(a);
}

/* q_k = (I + dt/2 Omega(w)) q_{k-1}: F row-major (4 x 4) */
static void omega_matrix(const double w[3], double dt, double F[16])
{
    double h = 0.5 * dt, x = h * w[0], y = h * w[1], z = h * w[2];
    const double M[16] = {1, -x, -y, -z, x, 1, z, -y, y, -z, 1, x, z, y, -x, 1};
    memcpy(F, M, sizeof M);
}

static int q_f(void *user, const double *q, const double *u, double dt, double *out, rb_err *err)
{
    (void)u, (void)err;
    const rb_att *a = user;
    double F[16];
    omega_matrix(a->w, dt, F);
    for (int i = 0; i < 4; i++)
        out[i] = F[4 * i] * q[0] + F[4 * i + 1] * q[1] + F[4 * i + 2] * q[2] + F[4 * i + 3] * q[3];
    return RB_OK;
}

static int q_jf(void *user, const double *q, const double *u, double dt, double *F, rb_err *err)
{
    (void)q, (void)u, (void)err;
    const rb_att *a = user;
    omega_matrix(a->w, dt, F);
    return RB_OK;
}

static int q_h(void *user, const double *q, double *z, rb_err *err)
{
    (void)user, (void)err;
    memcpy(z, q, 4 * sizeof *q);
    return RB_OK;
}

static int q_jh(void *user, const double *q, double *H, rb_err *err)
{
    (void)user, (void)q, (void)err;
    memset(H, 0, 16 * sizeof *H);
    H[0] = H[5] = H[10] = H[15] = 1.0;
    return RB_OK;
}

/* q / |q| and P = J P J^T, J = (I - u u^T) / |q|: P loses its variance along q. */
static void normalize(double *q, double *P)
{
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]), Pu[4], uPu = 0.0;
    for (int i = 0; i < 4; i++)
        q[i] /= n;
    for (int i = 0; i < 4; i++) {
        Pu[i] = P[4 * i] * q[0] + P[4 * i + 1] * q[1] + P[4 * i + 2] * q[2] + P[4 * i + 3] * q[3];
        uPu += q[i] * Pu[i];
    }
    /* (I - u u^T) P (I - u u^T) = P - u Pu^T - Pu u^T + (u^T P u) u u^T */
    double s = 1.0 / (n * n);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            P[4 * i + j] = s * (P[4 * i + j] - q[i] * Pu[j] - Pu[i] * q[j] + uPu * q[i] * q[j]);
}

static int project(void *user, double *q, double *P, rb_err *err)
{
    (void)user;
    double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (!(n2 > 1e-12))
        return rb_err_set(err, RB_ENUMERIC, "quaternion of norm %g after the update", sqrt(n2));
    normalize(q, P);
    return RB_OK;
}

static int check_config(const rb_att_config *c, rb_err *err)
{
    const struct {
        const char *key;
        double v;
        bool positive;
    } v[] = {{"acc_noise", c->acc_noise, true},       {"gyro_noise", c->gyro_noise, false},
             {"lin_acc_rw", c->lin_acc_rw, false},    {"lin_acc_decay", c->lin_acc_decay, false},
             {"bias_rw", c->bias_rw, false},          {"gravity_std0", c->gravity_std0, true},
             {"lin_acc_std0", c->lin_acc_std0, true}, {"bias_std0", c->bias_std0, true},
             {"quat_noise", c->quat_noise, true},     {"quat_std0", c->quat_std0, true}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i].v) || (v[i].positive ? !(v[i].v > 0.0) : !(v[i].v >= 0.0)))
            return rb_err_set(err, RB_ECONFIG, "%s = %g must be finite and %s", v[i].key, v[i].v,
                              v[i].positive ? "> 0" : ">= 0");
    if (c->have_q0) {
        const double *q = c->q0;
        double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
        if (!isfinite(n2))
            return rb_err_set(err, RB_ECONFIG, "initial orientation [%g, %g, %g, %g] has a non-finite element", q[0],
                              q[1], q[2], q[3]);
        if (!(n2 > 1e-24))
            return rb_err_set(err, RB_ECONFIG, "initial orientation [%g, %g, %g, %g] has zero norm", q[0], q[1], q[2],
                              q[3]);
    }
    return RB_OK;
}

int rb_att_alloc(const rb_att_config *cfg, rb_att **out, rb_err *err)
{
    *out = NULL;
    int rc = check_config(cfg, err);
    if (rc)
        return rc;
    rb_att *a = rb_calloc(1, sizeof *a);
    if (!a)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    a->cfg = *cfg;
    double P0[16] = {0}, R[16] = {0}, x0[4] = {1, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
        P0[5 * i] = cfg->quat_std0 * cfg->quat_std0;
        R[5 * i] = cfg->quat_noise * cfg->quat_noise;
    }
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = 4, o.m = 4, o.x0 = x0, o.P0 = P0, o.R = R;
    o.f = q_f, o.jac_f = q_jf, o.h = q_h, o.jac_h = q_jh, o.project = project, o.user = a;
    if ((rc = rb_ekf_create(&o, &a->ekf, err))) {
        rb_att_free(a);
        return rc;
    }
    for (int i = 0; i < 4; i++)
        a->q_meas[i] = NAN;
    *out = a;
    return RB_OK;
}

/* x_0 = P_0 H^T (H P_0 H^T)^-1 acc with P_0 diagonal and H = [-I I I]: H P_0 H^T = (sg^2 + sa^2 + sb^2) I. */
static void kf_start(rb_att *a, const double acc[3])
{
    const rb_att_config *c = &a->cfg;
    double v[3] = {c->gravity_std0 * c->gravity_std0, c->lin_acc_std0 * c->lin_acc_std0, c->bias_std0 * c->bias_std0};
    double s = v[0] + v[1] + v[2];
    memset(a->P, 0, sizeof a->P);
    for (int b = 0; b < 3; b++)
        for (int i = 0; i < 3; i++) {
            a->x[3 * b + i] = (b == 0 ? -1.0 : 1.0) * v[b] / s * acc[i];
            a->P[(3 * b + i) * (KN + 1)] = v[b];
        }
}

void rb_att_gravity_step(const double w[3], double dt, bool first_order, double A[9])
{
    if (first_order) {
        const double M[9] = {1, w[2] * dt, -w[1] * dt, -w[2] * dt, 1, w[0] * dt, w[1] * dt, -w[0] * dt, 1};
        memcpy(A, M, sizeof M);
        return;
    }
    double nw = sqrt(rb_v3_dot(w, w));
    if (!(nw * dt > 1e-300)) {
        rb_m3_identity(A);
        return;
    }
    /* exp(-[w]x dt) = the rotation by -|w| dt about w / |w| */
    double axis[3] = {w[0] / nw, w[1] / nw, w[2] / nw};
    rb_m3_from_axis_angle(axis, -nw * dt, A);
}

/* x = F x, P = F P F^T + Q; F = blockdiag(A, d I, I), A = exp(-[w]x dt) (or I - [w]x dt). */
static void kf_predict(rb_att *a, double dt)
{
    const rb_att_config *c = &a->cfg;
    double A[9];
    rb_att_gravity_step(a->w, dt, c->first_order, A);
    double d = exp(-c->lin_acc_decay * dt), g[3], FP[KN * KN];
    /* Q_g at the prior g */
    double sg = c->gyro_noise * dt, g2 = rb_v3_dot(a->x, a->x), qg[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            qg[3 * i + j] = sg * sg * ((i == j) * g2 - a->x[i] * a->x[j]);
    rb_m3_mul_v(A, a->x, g);
    memcpy(a->x, g, sizeof g);
    for (int i = 3; i < 6; i++)
        a->x[i] *= d;
    /* FP = F P: the gravity rows through A, the a_b rows scaled */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < KN; j++)
            FP[i * KN + j] = A[3 * i] * a->P[j] + A[3 * i + 1] * a->P[KN + j] + A[3 * i + 2] * a->P[2 * KN + j];
    for (int i = 3; i < KN; i++)
        for (int j = 0; j < KN; j++)
            FP[i * KN + j] = (i < 6 ? d : 1.0) * a->P[i * KN + j];
    /* P = FP F^T: the same on the columns */
    for (int i = 0; i < KN; i++) {
        const double *r = FP + i * KN;
        double *o = a->P + i * KN;
        for (int j = 0; j < 3; j++)
            o[j] = A[3 * j] * r[0] + A[3 * j + 1] * r[1] + A[3 * j + 2] * r[2];
        for (int j = 3; j < KN; j++)
            o[j] = (j < 6 ? d : 1.0) * r[j];
    }
    double qa = c->lin_acc_rw * c->lin_acc_rw * dt, qb = c->bias_rw * c->bias_rw * dt;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            a->P[i * KN + j] += qg[3 * i + j];
        a->P[(3 + i) * (KN + 1)] += qa;
        a->P[(6 + i) * (KN + 1)] += qb;
    }
}

/* The update on the finite elements of acc (h = -g + a + b): nu = acc - H x, C = P H^T, S = H C + R = L L^T,
 * W = C L^-T, x += W L^-1 nu, P -= W W^T. Returns the elements used, or -1 when S is not positive definite. */
static int kf_update(rb_att *a, const double acc[3])
{
    int idx[3], k = 0;
    for (int i = 0; i < 3; i++)
        if (isfinite(acc[i]))
            idx[k++] = i;
    if (k == 0)
        return 0;
    double nu[3], S[9], L[9] = {0}, r = a->cfg.acc_noise * a->cfg.acc_noise;
    for (int j = 0; j < k; j++) {
        int e = idx[j];
        nu[j] = acc[e] + a->x[e] - a->x[3 + e] - a->x[6 + e];
        for (int i = 0; i < KN; i++)
            a->C[i * 3 + j] = -a->P[i * KN + e] + a->P[i * KN + 3 + e] + a->P[i * KN + 6 + e];
    }
    for (int j = 0; j < k; j++)
        for (int l = 0; l < k; l++) {
            int e = idx[j];
            S[3 * j + l] = -a->C[e * 3 + l] + a->C[(3 + e) * 3 + l] + a->C[(6 + e) * 3 + l] + (j == l ? r : 0.0);
        }
    for (int j = 0; j < k; j++) {
        for (int l = 0; l <= j; l++) {
            double s = 0.5 * (S[3 * j + l] + S[3 * l + j]);
            for (int m = 0; m < l; m++)
                s -= L[3 * j + m] * L[3 * l + m];
            if (l == j) {
                if (!(s > 0.0))
                    return -1;
                L[3 * j + j] = sqrt(s);
            } else {
                L[3 * j + l] = s / L[3 * l + l];
            }
        }
    }
    /* y = L^-1 nu; W = C L^-T row by row (W L^T = C) */
    double y[3];
    for (int j = 0; j < k; j++) {
        double s = nu[j];
        for (int m = 0; m < j; m++)
            s -= L[3 * j + m] * y[m];
        y[j] = s / L[3 * j + j];
    }
    for (int i = 0; i < KN; i++) {
        const double *ci = a->C + 3 * i;
        double *wi = a->W + 3 * i;
        for (int j = 0; j < k; j++) {
            double s = ci[j];
            for (int m = 0; m < j; m++)
                s -= wi[m] * L[3 * j + m];
            wi[j] = s / L[3 * j + j];
        }
    }
    for (int i = 0; i < KN; i++) {
        const double *wi = a->W + 3 * i;
        for (int j = 0; j < k; j++)
            a->x[i] += wi[j] * y[j];
        for (int l = 0; l <= i; l++) {
            const double *wl = a->W + 3 * l;
            double s = 0.0;
            for (int j = 0; j < k; j++)
                s += wi[j] * wl[j];
            a->P[i * KN + l] -= s;
            a->P[l * KN + i] = a->P[i * KN + l];
        }
    }
    return k;
}

/* roll, pitch from the gravity estimate: f = -g / |g| is the third row of R = Rz Ry Rx. */
static void tilt(const double g[3], double *roll, double *pitch)
{
    *roll = atan2(-g[1], -g[2]);
    *pitch = atan2(g[0], hypot(g[1], g[2]));
}

static void quat_from_rpy(double roll, double pitch, double yaw, double q[4])
{
    double R[9];
    rb_m3_from_rpy(roll, pitch, yaw, R);
    rb_quat_from_m3(R, q);
}

static int ekf_failed(int rc, size_t k, rb_err *err)
{
    rb_err_prefix(err, rc, "sample %zu: attitude EKF: ", k);
    return rc;
}

/* The first sample with a finite accelerometer: both filters start from it. */
static int start(rb_att *a, size_t k, const double acc[3], rb_err *err)
{
    kf_start(a, acc);
    double q[4], P[16], roll, pitch, s2 = a->cfg.quat_std0 * a->cfg.quat_std0;
    if (a->cfg.have_q0) {
        memcpy(q, a->cfg.q0, sizeof q);
    } else {
        tilt(a->x, &roll, &pitch);
        quat_from_rpy(roll, pitch, 0.0, q);
    }
    for (int i = 0; i < 16; i++)
        P[i] = (i % 5 == 0) ? s2 : 0.0;
    normalize(q, P);
    int rc = rb_filter_set_state(a->ekf, q, P, err);
    if (rc)
        return ekf_failed(rc, k, err);
    rb_filter_set_step(a->ekf, (long)k);
    a->init = true;
    return RB_OK;
}

int rb_att_step(rb_att *a, size_t k, double t, const double acc[3], const double gyro[3], rb_err *err)
{
    int rc;
    a->steps++;
    a->updated = false;
    bool held = false, missing = false;
    for (int i = 0; i < 3; i++) {
        if (isfinite(gyro[i]))
            a->w[i] = gyro[i];
        else
            held = true;
        missing |= !isfinite(acc[i]);
    }
    a->gyro_held += held;
    if (!a->init) {
        if (missing) {
            a->waiting++;
            return RB_OK;
        }
        a->t_prev = t;
        return start(a, k, acc, err);
    }
    double dt = t - a->t_prev;
    if (!(dt > 0.0) || !isfinite(dt))
        return rb_err_set(err, RB_EINPUT, "sample %zu: t = %.17g is not after the previous sample's %.17g (dt <= 0)", k,
                          t, a->t_prev);
    a->t_prev = t;
    a->acc_missing += missing;
    kf_predict(a, dt);
    int used = kf_update(a, acc);
    if (used < 0)
        return rb_err_set(err, RB_ENUMERIC, "sample %zu: gravity KF: innovation covariance not positive definite", k);
    for (int i = 0; i < KN; i++)
        if (!isfinite(a->x[i]) || !isfinite(a->P[i * (KN + 1)]))
            return rb_err_set(err, RB_ENUMERIC, "sample %zu: gravity KF: state element %d is not finite", k, i);

    /* the EKF's process noise at its prior q */
    rb_filter_mats m = rb_filter_get_mats(a->ekf);
    const double *q = rb_filter_x(a->ekf);
    double sq = 0.5 * a->cfg.gyro_noise * dt;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            m.Q.data[4 * i + j] = sq * sq * ((i == j) - q[i] * q[j]);
    if ((rc = rb_filter_predict(a->ekf, NULL, dt, err)))
        return ekf_failed(rc, k, err);
    if (used == 0) {
        a->no_update++;
        double qn[4], P[16];
        memcpy(qn, rb_filter_x(a->ekf), sizeof qn);
        memcpy(P, rb_filter_P(a->ekf), sizeof P);
        normalize(qn, P);
        if ((rc = rb_filter_set_state(a->ekf, qn, P, err)))
            return ekf_failed(rc, k, err);
        return RB_OK;
    }
    double roll, pitch, rpy[3], R[9];
    tilt(a->x, &roll, &pitch);
    q = rb_filter_x(a->ekf);
    rb_m3_from_quat(q, R);
    rb_m3_to_rpy(R, rpy);
    quat_from_rpy(roll, pitch, rpy[2], a->q_meas);
    if (a->q_meas[0] * q[0] + a->q_meas[1] * q[1] + a->q_meas[2] * q[2] + a->q_meas[3] * q[3] < 0.0) {
        for (int i = 0; i < 4; i++)
            a->q_meas[i] = -a->q_meas[i];
        a->flips++;
    }
    if ((rc = rb_filter_update(a->ekf, a->q_meas, err)))
        return ekf_failed(rc, k, err);
    a->updated = true;
    return RB_OK;
}

void rb_att_get_out(const rb_att *a, rb_att_out *o)
{
    o->initialized = a->init;
    o->updated = a->updated;
    if (!a->init) {
        double *all[] = {o->q, o->rpy, o->gravity, o->lin_acc, o->bias, o->q_meas, o->var};
        size_t len[] = {4, 3, 3, 3, 3, 4, 13};
        for (size_t b = 0; b < 7; b++)
            for (size_t i = 0; i < len[b]; i++)
                all[b][i] = NAN;
        return;
    }
    const double *q = rb_filter_x(a->ekf), *P = rb_filter_P(a->ekf);
    double s = q[0] < 0.0 ? -1.0 : 1.0, R[9];
    for (int i = 0; i < 4; i++) {
        o->q[i] = s * q[i];
        o->q_meas[i] = a->updated ? a->q_meas[i] : NAN;
        o->var[KN + i] = P[5 * i];
    }
    rb_m3_from_quat(o->q, R);
    rb_m3_to_rpy(R, o->rpy);
    memcpy(o->gravity, a->x, 3 * sizeof *a->x);
    memcpy(o->lin_acc, a->x + 3, 3 * sizeof *a->x);
    memcpy(o->bias, a->x + 6, 3 * sizeof *a->x);
    for (int i = 0; i < KN; i++)
        o->var[i] = a->P[i * (KN + 1)];
}

void rb_att_get_diag(const rb_att *a, rb_att_diag *d)
{
    d->steps = a->steps;
    d->waiting = a->waiting;
    d->acc_missing = a->acc_missing;
    d->no_update = a->no_update;
    d->gyro_held = a->gyro_held;
    d->flips = a->flips;
}
