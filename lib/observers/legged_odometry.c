/* Legged odometry (roboest/observers.h, rb_lodo_*): the floating base from stance feet held at the world poses
 * they had when they touched down. The kinematics run with the base at the world origin, so frame poses are
 * B_X_F and BODY velocities with a zero base twist are J_F,joints s_dot. */
#include <math.h>
#include <string.h>

#include "roboest/observers.h"

struct rb_lodo {
    const rb_model *m;
    rb_lodo_config cfg; /* feet points into this struct */
    size_t nf, n, nq, nv;
    int *feet;
    rb_dyn *ws;
    double *q, *nu;         /* kinematics: base at the origin, twist 0 */
    double *qw, *nuw;       /* the world base pose as a q for rb_dyn_integrate (joints unused) */
    rb_xform *X_BF;         /* per foot, this sample */
    rb_xform *X_WF;         /* per foot, recorded at touchdown */
    double *c;              /* 6 per foot: J_F,joints s_dot (BODY) */
    unsigned char *stance;  /* this sample */
    unsigned char *prev;    /* the previous sample's */
    double *slip;           /* per foot */
    double pos[3], quat[4]; /* the estimate */
    double twist[6];
    double t_prev;
    bool flight, predict_only;
    size_t n_stance;
    long steps, n_flight, n_predict, touchdowns;
    double max_slip;
};

void rb_lodo_config_init(rb_lodo_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->source = RB_LODO_FLAGS;
    cfg->force_on = 50;
    cfg->force_off = 25;
    rb_xform_identity(&cfg->base0);
}

void rb_lodo_free(rb_lodo *e)
{
    if (!e)
        return;
    rb_dyn_free(e->ws);
    rb_free(e->feet);
    rb_free(e->q);
    rb_free(e->X_BF);
    rb_free(e->stance);
    rb_free(e);
}

static bool finite_n(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

static int check_config(const rb_model *m, const rb_lodo_config *c, rb_err *err)
{
    if (!m->floating)
        return rb_err_set(err, RB_ECONFIG, "legged odometry needs a floating-base model (model %s has a fixed base)",
                          m->name ? m->name : "");
    if (c->n_feet == 0 || !c->feet)
        return rb_err_set(err, RB_ECONFIG, "feet: no foot frame given");
    for (size_t i = 0; i < c->n_feet; i++) {
        if (c->feet[i] < 0 || (size_t)c->feet[i] >= m->n_frames)
            return rb_err_set(err, RB_ECONFIG, "feet[%zu]: frame %d out of range (model %s has %zu frames)", i,
                              c->feet[i], m->name ? m->name : "", m->n_frames);
        for (size_t j = 0; j < i; j++)
            if (c->feet[j] == c->feet[i])
                return rb_err_set(err, RB_ECONFIG, "feet[%zu]: frame '%s' is listed twice", i,
                                  m->frames[c->feet[i]].name);
    }
    if (c->source == RB_LODO_WRENCHES &&
        !(isfinite(c->force_on) && isfinite(c->force_off) && c->force_off >= 0 && c->force_off <= c->force_on))
        return rb_err_set(err, RB_ECONFIG, "force thresholds: need 0 <= force_off (%g N) <= force_on (%g N), finite",
                          c->force_off, c->force_on);
    if (!finite_n(c->base0.R, 9) || !finite_n(c->base0.p, 3))
        return rb_err_set(err, RB_ECONFIG, "base0: not finite");
    return RB_OK;
}

int rb_lodo_alloc(const rb_model *model, const rb_lodo_config *cfg, rb_lodo **out, rb_err *err)
{
    *out = NULL;
    int rc = check_config(model, cfg, err);
    if (rc)
        return rc;
    rb_lodo *e = rb_calloc(1, sizeof *e);
    if (!e)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    size_t nf = cfg->n_feet;
    e->m = model, e->cfg = *cfg, e->nf = nf, e->n = model->n_dofs, e->nq = model->nq, e->nv = model->nv;
    e->feet = rb_calloc(nf, sizeof *e->feet);
    e->q = rb_calloc(2 * (e->nq + e->nv) + 7 * nf, sizeof *e->q);
    e->X_BF = rb_calloc(2 * nf, sizeof *e->X_BF);
    e->stance = rb_calloc(2 * nf, 1);
    if (!e->feet || !e->q || !e->X_BF || !e->stance) {
        rb_lodo_free(e);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    if ((rc = rb_dyn_alloc(model, &e->ws, err))) {
        rb_lodo_free(e);
        return rc;
    }
    memcpy(e->feet, cfg->feet, nf * sizeof *e->feet);
    e->cfg.feet = e->feet;
    e->nu = e->q + e->nq, e->qw = e->nu + e->nv, e->nuw = e->qw + e->nq, e->c = e->nuw + e->nv;
    e->slip = e->c + 6 * nf;
    e->X_WF = e->X_BF + nf, e->prev = e->stance + nf;
    rb_dyn_neutral(model, e->q);
    rb_dyn_neutral(model, e->qw);
    for (size_t i = 0; i < nf; i++)
        e->slip[i] = NAN;
    e->quat[0] = 1;
    *out = e;
    return RB_OK;
}

/* Stance from this sample's contact input (hysteresis on f_z for wrenches; a non-finite value keeps the state). */
static void update_stance(rb_lodo *e, const double *contact)
{
    for (size_t i = 0; i < e->nf; i++) {
        bool was = e->prev[i], now = was;
        if (e->cfg.source == RB_LODO_FLAGS) {
            if (isfinite(contact[i]))
                now = contact[i] > 0.5;
        } else {
            double fz = contact[6 * i + 2];
            if (isfinite(fz))
                now = was ? fz >= e->cfg.force_off : fz > e->cfg.force_on;
        }
        e->stance[i] = now;
    }
}

static void set_pose(rb_lodo *e, const double R[9], const double p[3])
{
    memcpy(e->pos, p, sizeof e->pos);
    rb_quat_from_m3(R, e->quat);
}

/* The base pose that puts every held foot at its recorded pose: positions and quaternions averaged. */
static void pose_from_feet(rb_lodo *e)
{
    double p[3] = {0, 0, 0}, qs[4] = {0, 0, 0, 0}, q0[4] = {0, 0, 0, 0};
    size_t h = 0;
    for (size_t i = 0; i < e->nf; i++) {
        if (!(e->stance[i] && e->prev[i]))
            continue;
        rb_xform X_FB, X_WB;
        rb_xform_inverse(&e->X_BF[i], &X_FB);
        rb_xform_compose(&e->X_WF[i], &X_FB, &X_WB);
        double qi[4];
        rb_quat_from_m3(X_WB.R, qi);
        if (h == 0)
            memcpy(q0, qi, sizeof q0);
        double sg = qi[0] * q0[0] + qi[1] * q0[1] + qi[2] * q0[2] + qi[3] * q0[3] < 0 ? -1.0 : 1.0;
        for (int a = 0; a < 4; a++)
            qs[a] += sg * qi[a];
        for (int a = 0; a < 3; a++)
            p[a] += X_WB.p[a];
        h++;
    }
    double nq = sqrt(qs[0] * qs[0] + qs[1] * qs[1] + qs[2] * qs[2] + qs[3] * qs[3]);
    for (int a = 0; a < 4; a++)
        e->quat[a] = qs[a] / nq;
    if (e->quat[0] < 0)
        for (int a = 0; a < 4; a++)
            e->quat[a] = -e->quat[a];
    for (int a = 0; a < 3; a++)
        e->pos[a] = p[a] / (double)h;
}

/* The last pose moved by the last twist over dt (exact SE(3) exponential). */
static void predict(rb_lodo *e, double dt)
{
    memcpy(e->qw, e->pos, 3 * sizeof(double));
    memcpy(e->qw + 3, e->quat, 4 * sizeof(double));
    memcpy(e->nuw, e->twist, 6 * sizeof(double));
    rb_dyn_integrate(e->m, e->qw, e->nuw, dt, e->qw);
    memcpy(e->pos, e->qw, 3 * sizeof(double));
    memcpy(e->quat, e->qw + 3, 4 * sizeof(double));
    if (e->quat[0] < 0)
        for (int a = 0; a < 4; a++)
            e->quat[a] = -e->quat[a];
}

/* In-place Cholesky A = L L^T of a 6 x 6 and the solve of A x = b (x overwrites b); false if not positive
 * definite. Plain loops, not LAPACK: at this size a call into OpenBLAS costs more than the work and takes its
 * process-wide lock on the per-sample path (the filters module's rule for dimensions up to 8, roboest/filters.h). */
static bool chol6_solve(double A[36], double b[6])
{
    for (int j = 0; j < 6; j++) {
        double d = A[6 * j + j];
        for (int k = 0; k < j; k++)
            d -= A[6 * j + k] * A[6 * j + k];
        if (!(d > 0))
            return false;
        d = sqrt(d);
        A[6 * j + j] = d;
        for (int i = j + 1; i < 6; i++) {
            double s = A[6 * i + j];
            for (int k = 0; k < j; k++)
                s -= A[6 * i + k] * A[6 * j + k];
            A[6 * i + j] = s / d;
        }
    }
    for (int i = 0; i < 6; i++) {
        for (int k = 0; k < i; k++)
            b[i] -= A[6 * i + k] * b[k];
        b[i] /= A[6 * i + i];
    }
    for (int i = 5; i >= 0; i--) {
        for (int k = i + 1; k < 6; k++)
            b[i] -= A[6 * k + i] * b[k];
        b[i] /= A[6 * i + i];
    }
    return true;
}

/* J_F,base of foot i: the columns F_X_B e_j (BODY). */
static void base_columns(const rb_xform *X_BF, double J[36])
{
    for (int j = 0; j < 6; j++) {
        double u[6] = {0, 0, 0, 0, 0, 0}, col[6];
        u[j] = 1;
        rb_xform_motion_inv(X_BF, u, col);
        for (int r = 0; r < 6; r++)
            J[6 * r + j] = col[r];
    }
}

/* Least squares over the stance feet: sum J_i^T J_i nu_B = -sum J_i^T c_i; then each foot's implied speed. */
static int solve_twist(rb_lodo *e, size_t k, rb_err *err)
{
    double A[36] = {0}, b[6] = {0}, J[36];
    for (size_t i = 0; i < e->nf; i++) {
        if (!e->stance[i])
            continue;
        base_columns(&e->X_BF[i], J);
        const double *c = e->c + 6 * i;
        for (int r = 0; r < 6; r++) {
            for (int a = 0; a < 6; a++) {
                b[a] -= J[6 * r + a] * c[r];
                for (int d = 0; d < 6; d++)
                    A[6 * a + d] += J[6 * r + a] * J[6 * r + d];
            }
        }
    }
    if (!chol6_solve(A, b))
        return rb_err_set(err, RB_ENUMERIC,
                          "sample %zu: legged odometry: the stance feet's normal matrix is not "
                          "positive definite",
                          k);
    memcpy(e->twist, b, sizeof b);
    for (size_t i = 0; i < e->nf; i++) {
        if (!e->stance[i])
            continue;
        double v[6];
        rb_xform_motion_inv(&e->X_BF[i], e->twist, v);
        const double *c = e->c + 6 * i;
        double s = sqrt((v[0] + c[0]) * (v[0] + c[0]) + (v[1] + c[1]) * (v[1] + c[1]) + (v[2] + c[2]) * (v[2] + c[2]));
        e->slip[i] = s;
        if (s > e->max_slip)
            e->max_slip = s;
    }
    return RB_OK;
}

int rb_lodo_step(rb_lodo *e, size_t k, double t, const double *s, const double *s_dot, const double *contact,
                 rb_err *err)
{
    const rb_model *m = e->m;
    double dt = 0;
    if (e->steps > 0) {
        dt = t - e->t_prev;
        if (!(dt > 0))
            return rb_err_set(err, RB_EINPUT,
                              "sample %zu: t = %.17g is not after the previous sample's %.17g (dt <= 0)", k, t,
                              e->t_prev);
    }
    e->flight = e->predict_only = false;
    for (size_t i = 0; i < e->nf; i++)
        e->slip[i] = NAN;
    bool first = e->steps == 0;
    e->steps++;
    e->t_prev = t;
    if (!finite_n(s, e->n) || !finite_n(s_dot, e->n)) {
        if (first)
            set_pose(e, e->cfg.base0.R, e->cfg.base0.p);
        else
            predict(e, dt);
        e->predict_only = true;
        e->n_predict++;
        return RB_OK; /* stance and the recorded poses stay */
    }
    memcpy(e->q + 7, s, e->n * sizeof *s);
    memcpy(e->nu + 6, s_dot, e->n * sizeof *s_dot);
    int rc = rb_dyn_kinematics(m, e->ws, e->q, e->nu, NULL, err);
    update_stance(e, contact);
    size_t held = 0, ns = 0;
    for (size_t i = 0; !rc && i < e->nf; i++) {
        if (!e->stance[i])
            continue;
        ns++;
        held += e->prev[i];
        rc = rb_dyn_frame_pose(m, e->ws, (size_t)e->feet[i], &e->X_BF[i], err);
        if (!rc)
            rc = rb_dyn_frame_velocity(m, e->ws, (size_t)e->feet[i], RB_DYN_BODY, e->c + 6 * i, err);
    }
    if (rc)
        return rc;
    if (first)
        set_pose(e, e->cfg.base0.R, e->cfg.base0.p);
    else if (held)
        pose_from_feet(e);
    else
        predict(e, dt);
    /* touchdowns are recorded at the pose the held feet (or the prediction) give */
    rb_xform X_WB;
    rb_m3_from_quat(e->quat, X_WB.R);
    memcpy(X_WB.p, e->pos, sizeof X_WB.p);
    for (size_t i = 0; i < e->nf; i++)
        if (e->stance[i] && !e->prev[i]) {
            rb_xform_compose(&X_WB, &e->X_BF[i], &e->X_WF[i]);
            e->touchdowns++;
        }
    e->n_stance = ns;
    if (ns)
        rc = solve_twist(e, k, err);
    else {
        e->flight = true;
        e->n_flight++;
    }
    memcpy(e->prev, e->stance, e->nf);
    return rc;
}

void rb_lodo_get_out(const rb_lodo *e, rb_lodo_out *out)
{
    out->position = e->pos;
    out->orientation = e->quat;
    out->twist = e->twist;
    out->stance = e->stance;
    out->slip = e->slip;
    out->n_stance = e->n_stance;
    out->flight = e->flight;
    out->predict_only = e->predict_only;
}

void rb_lodo_get_diag(const rb_lodo *e, rb_lodo_diag *d)
{
    d->steps = e->steps;
    d->flight = e->n_flight;
    d->predict_only = e->n_predict;
    d->touchdowns = e->touchdowns;
    d->max_slip = e->max_slip;
}
