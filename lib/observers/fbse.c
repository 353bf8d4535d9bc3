/* Joint friction of a walking biped from its IMU, foot wrenches and joint states (roboest/observers.h, rb_fbse_*;
 * seed 003, Hashlamon thesis ch. 4): the legs' joint rows of the floating-base dynamics, with the accelerations from
 * the non-slipping feet (4.9-4.23) or avoided by a first-order filter (4.24-4.36), and per-joint RLS of a Coulomb and
 * viscous model (4.38-4.44) while the foot is down, the model while it swings. The header says what is computed. */
#include <math.h>
#include <string.h>

#include "roboest/observers.h"

#define MAXC 12 /* constraint rows: two 6D feet */

struct rb_fbse {
    const rb_model *m;
    rb_fbse_config cfg;
    rb_dyn *ws;
    size_t nv, nq, n, nleg[2], off[2], *dof;
    int foot[2], imu, ftf[2], ft_sign[2];
    double R_BS[9], p_BS[3], R_FN[2][9]; /* IMU in the base; FT reading axes -> foot axes */
    double *K, *sigma, *arm;
    rb_rls **rls;
    /* scratch */
    double *q, *nu, *nud, *tr, *M, *Md, *J, *A, *x;
    /* filter states (filtered) and their last inputs */
    double *y, *rs, *rv, *u_prev, *s_prev, *v_prev;
    bool started;
    double t_prev, w_prev[3], alpha_f[3];
    /* outputs */
    double *fric, *meas, *model_out, *fc, *fv, *link, *tdd, alpha[3];
    unsigned char contact[2], singular[2], down[2];
    rb_fbse_diag d;
    void *block;
};

/* Table 4.2, theta1..theta6 */
static const double K42[6] = {1, 2, 2, 2, 4, 2}, S42[6] = {1, 1, 1, 2, 4, 2};

void rb_fbse_config_init(rb_fbse_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->method = RB_FBSE_NONSLIP;
    cfg->alpha = RB_FBSE_ALPHA_MIN_NORM;
    cfg->regressors = RB_FBSE_REG_FILTERED;
    cfg->wrench = RB_FBSE_FT;
    cfg->p0 = 10, cfg->lambda = 1;
    cfg->singular_threshold = 1e-3;
    cfg->contact_on = 50, cfg->contact_off = 30;
}

void rb_fbse_free(rb_fbse *e)
{
    if (!e)
        return;
    for (size_t i = 0; e->rls && i < e->n; i++)
        rb_rls_free(e->rls[i]);
    rb_dyn_free(e->ws);
    rb_free(e->block);
    rb_free(e);
}

size_t rb_fbse_n_joints(const rb_fbse *e) { return e->n; }
size_t rb_fbse_joint_dof(const rb_fbse *e, size_t i) { return i < e->n ? e->dof[i] : SIZE_MAX; }
int rb_fbse_joint_leg(const rb_fbse *e, size_t i) { return i < e->off[1] ? 0 : 1; }

/* The dofs from the base to frame f's body, base first; RB_ECONFIG without any. */
static int chain(const rb_model *m, int f, size_t *dofs, size_t *n, rb_err *err)
{
    size_t c = 0;
    for (int b = m->frames[f].body; b > 0; b = m->bodies[b].parent)
        if (m->bodies[b].dof >= 0)
            dofs[c++] = (size_t)m->bodies[b].dof;
    if (!c)
        return rb_err_set(err, RB_ECONFIG, "foot %s: no joint between it and the base", m->frames[f].name);
    for (size_t i = 0; i < c / 2; i++) {
        size_t t = dofs[i];
        dofs[i] = dofs[c - 1 - i], dofs[c - 1 - i] = t;
    }
    *n = c;
    return RB_OK;
}

static bool in_subtree(const rb_model *m, int b, int root)
{
    for (; b >= 0; b = m->bodies[b].parent)
        if (b == root)
            return true;
    return false;
}

static int find_frame(const rb_model *m, const char *what, const char *name, int *out, rb_err *err)
{
    long f = name ? rb_model_frame_index(m, name) : -1;
    if (f < 0)
        return rb_err_set(err, RB_ECONFIG, "%s '%s': no such frame in model %s", what, name ? name : "(none)", m->name);
    *out = (int)f;
    return RB_OK;
}

/* FT mode: the sensor between leg and foot; the foot side leaves the model (zero inertia in the workspace). */
static int setup_ft(rb_fbse *e, int leg, rb_err *err)
{
    const rb_model *m = e->m;
    const char *name = e->cfg.ft[leg];
    long s = name ? rb_model_ft_index(m, name) : -1;
    if (s < 0)
        return rb_err_set(err, RB_ECONFIG, "FT sensor '%s': no such sensor in model %s", name ? name : "(none)",
                          m->name);
    const rb_ft_sensor *ft = &m->ft[s];
    int fb = m->frames[e->foot[leg]].body;
    if (!in_subtree(m, fb, ft->child_body))
        return rb_err_set(err, RB_ECONFIG, "FT sensor %s is not between the base and foot %s", name,
                          m->frames[e->foot[leg]].name);
    for (int b = fb; b != ft->child_body; b = m->bodies[b].parent)
        if (m->bodies[b].dof >= 0)
            return rb_err_set(err, RB_ECONFIG, "FT sensor %s: joint %s moves foot %s relative to it", name,
                              m->bodies[b].joint_name, m->frames[e->foot[leg]].name);
    e->ftf[leg] = ft->frame, e->ft_sign[leg] = ft->sign;
    const double zero[10] = {0};
    for (size_t b = 1; b < m->n_bodies; b++) {
        int rc;
        if (in_subtree(m, (int)b, ft->child_body) && (rc = rb_dyn_set_body_inertia(m, e->ws, b, zero, err)))
            return rc;
    }
    return RB_OK;
}

static int check_cfg(const rb_model *m, const rb_fbse_config *c, rb_err *err)
{
    if (!m->floating)
        return rb_err_set(err, RB_ECONFIG, "needs a floating-base model");
    if (!(c->p0 > 0) || !isfinite(c->p0))
        return rb_err_set(err, RB_ECONFIG, "p0 = %g must be finite and > 0", c->p0);
    if (!(c->lambda > 0 && c->lambda <= 1))
        return rb_err_set(err, RB_ECONFIG, "lambda = %g must be in (0, 1]", c->lambda);
    if (!(c->gyro_diff_cutoff >= 0) || !isfinite(c->gyro_diff_cutoff))
        return rb_err_set(err, RB_ECONFIG, "gyro_diff_cutoff = %g must be finite and >= 0", c->gyro_diff_cutoff);
    if (!(c->singular_threshold > 0 && c->singular_threshold < 1))
        return rb_err_set(err, RB_ECONFIG, "singular_threshold = %g must be in (0, 1)", c->singular_threshold);
    if (!(c->contact_off >= 0 && c->contact_on > c->contact_off) || !isfinite(c->contact_on))
        return rb_err_set(err, RB_ECONFIG, "contact thresholds: need contact_on (%g N) > contact_off (%g N) >= 0",
                          c->contact_on, c->contact_off);
    return RB_OK;
}

static int alloc_arrays(rb_fbse *e, rb_err *err)
{
    size_t n = e->n, nv = e->nv, cols = 3 + n;
    size_t count = 3 * n /* K sigma arm */ + e->nq + 3 * nv + 2 * nv * nv + 2 * 6 * nv + MAXC * cols + cols +
                   6 * n /* filters */ + 7 * n /* outputs */;
    size_t bytes = count * sizeof(double) + n * sizeof(size_t) + n * sizeof(rb_rls *);
    unsigned char *p = rb_calloc(1, bytes);
    if (!p)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    e->block = p;
    double *d = (double *)p;
    double **arr[] = {&e->K,      &e->sigma, &e->arm,  &e->y,         &e->rs, &e->rv, &e->u_prev, &e->s_prev,
                      &e->v_prev, &e->fric,  &e->meas, &e->model_out, &e->fc, &e->fv, &e->link,   &e->tdd};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++, d += n)
        *arr[i] = d;
    e->q = d, d += e->nq;
    e->nu = d, d += nv;
    e->nud = d, d += nv;
    e->tr = d, d += nv;
    e->M = d, d += nv * nv;
    e->Md = d, d += nv * nv;
    e->J = d, d += 12 * nv;
    e->A = d, d += MAXC * cols;
    e->x = d, d += cols;
    e->dof = (size_t *)d;
    e->rls = (rb_rls **)(e->dof + n);
    return RB_OK;
}

int rb_fbse_alloc(const rb_model *model, const rb_fbse_config *cfg, rb_fbse **out, rb_err *err)
{
    if (!model || !cfg || !out)
        return rb_err_set(err, RB_EINVAL, "rb_fbse_alloc: NULL argument");
    *out = NULL;
    int rc = check_cfg(model, cfg, err);
    if (rc)
        return rc;
    rb_fbse *e = rb_calloc(1, sizeof *e);
    if (!e)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    e->m = model, e->cfg = *cfg, e->nv = model->nv, e->nq = model->nq;
    size_t tmp[2][64];
    if ((rc = find_frame(model, "foot", cfg->feet[0], &e->foot[0], err)) ||
        (rc = find_frame(model, "foot", cfg->feet[1], &e->foot[1], err)) ||
        (rc = find_frame(model, "imu_frame", cfg->imu_frame, &e->imu, err)))
        goto fail;
    if (model->frames[e->imu].body != 0) {
        rc = rb_err_set(err, RB_ECONFIG, "imu_frame %s is not on the base body %s", cfg->imu_frame,
                        model->bodies[0].name);
        goto fail;
    }
    for (int l = 0; l < 2; l++) {
        size_t c = 0;
        for (int b = model->frames[e->foot[l]].body; b > 0; b = model->bodies[b].parent)
            c += model->bodies[b].dof >= 0;
        if (c > 64) {
            rc = rb_err_set(err, RB_ECONFIG, "foot %s: more than 64 joints to the base", cfg->feet[l]);
            goto fail;
        }
        if ((rc = chain(model, e->foot[l], tmp[l], &e->nleg[l], err)))
            goto fail;
    }
    for (size_t i = 0; i < e->nleg[0]; i++)
        for (size_t j = 0; j < e->nleg[1]; j++)
            if (tmp[0][i] == tmp[1][j]) {
                rc = rb_err_set(err, RB_ECONFIG, "feet %s and %s share joint %s: the legs must be separate chains",
                                cfg->feet[0], cfg->feet[1], model->dof_names[tmp[0][i]]);
                goto fail;
            }
    e->n = e->nleg[0] + e->nleg[1], e->off[0] = 0, e->off[1] = e->nleg[0];
    if ((rc = alloc_arrays(e, err)) || (rc = rb_dyn_alloc(model, &e->ws, err)))
        goto fail;
    for (int l = 0; l < 2; l++)
        memcpy(e->dof + e->off[l], tmp[l], e->nleg[l] * sizeof *e->dof);
    const rb_xform *XS = &model->frames[e->imu].X_body;
    memcpy(e->R_BS, XS->R, sizeof e->R_BS), memcpy(e->p_BS, XS->p, sizeof e->p_BS);
    for (size_t i = 0; i < e->n; i++) {
        size_t pos = i < e->off[1] ? i : i - e->off[1], nl = e->nleg[i < e->off[1] ? 0 : 1];
        bool table = nl == 6;
        if ((!cfg->K || !cfg->sigma) && !table) {
            rc = rb_err_set(err, RB_ECONFIG, "K and sigma: Table 4.2 is for 6-joint legs; give them for %zu joints",
                            e->n);
            goto fail;
        }
        e->K[i] = cfg->K ? cfg->K[i] : K42[pos];
        e->sigma[i] = cfg->sigma ? cfg->sigma[i] : S42[pos];
        e->arm[i] = cfg->armature ? cfg->armature[i] : 0;
        if (!(e->K[i] > 0) || !(e->sigma[i] > 0) || !isfinite(e->K[i]) || !isfinite(e->sigma[i]) || !(e->arm[i] >= 0) ||
            !isfinite(e->arm[i])) {
            rc = rb_err_set(err, RB_ECONFIG, "joint %s: K = %g and sigma = %g must be > 0, armature = %g >= 0",
                            model->dof_names[e->dof[i]], e->K[i], e->sigma[i], e->arm[i]);
            goto fail;
        }
        double P0[4] = {cfg->p0, 0, 0, cfg->p0};
        rb_rls_opts o = {.p = 2, .m = 1, .lambda = cfg->lambda, .P0 = P0};
        if ((rc = rb_rls_create(&o, &e->rls[i], err)))
            goto fail;
    }
    if (cfg->wrench == RB_FBSE_FT) {
        for (int l = 0; l < 2; l++)
            if ((rc = setup_ft(e, l, err)))
                goto fail;
        /* reading axes -> foot axes, both rigid on the foot side: from the neutral pose */
        rb_dyn_neutral(model, e->q);
        if ((rc = rb_dyn_kinematics(model, e->ws, e->q, NULL, NULL, err)))
            goto fail;
        for (int l = 0; l < 2; l++) {
            rb_xform XF, XR;
            if ((rc = rb_dyn_frame_pose(model, e->ws, (size_t)e->foot[l], &XF, err)) ||
                (rc = rb_dyn_frame_pose(model, e->ws, (size_t)e->ftf[l], &XR, err)))
                goto fail;
            for (int i = 0; i < 3; i++) /* R_FN = R_WF^T R_WR */
                for (int j = 0; j < 3; j++)
                    e->R_FN[l][3 * i + j] = XF.R[i] * XR.R[j] + XF.R[3 + i] * XR.R[3 + j] + XF.R[6 + i] * XR.R[6 + j];
        }
    }
    memset(e->q, 0, e->nq * sizeof *e->q);
    e->q[3] = 1;
    for (int j = 0; j < 3; j++)
        e->alpha[j] = NAN;
    *out = e;
    return RB_OK;
fail:
    rb_fbse_free(e);
    return rc;
}

/* Cholesky of the symmetric positive-definite n x n S (row-major, in place: L in the lower triangle); the smallest
 * to largest diagonal of L, 0 when a pivot is not positive. */
static double chol(double *S, size_t n)
{
    double lo = INFINITY, hi = 0;
    for (size_t j = 0; j < n; j++) {
        double d = S[j * n + j];
        for (size_t k = 0; k < j; k++)
            d -= S[j * n + k] * S[j * n + k];
        if (!(d > 0))
            return 0;
        double l = sqrt(d);
        S[j * n + j] = l;
        lo = fmin(lo, l), hi = fmax(hi, l);
        for (size_t i = j + 1; i < n; i++) {
            double s = S[i * n + j];
            for (size_t k = 0; k < j; k++)
                s -= S[i * n + k] * S[j * n + k];
            S[i * n + j] = s / l;
        }
    }
    return hi > 0 ? lo / hi : 0;
}

/* x = L^-T L^-1 b in place */
static void chol_solve(const double *L, size_t n, double *b)
{
    for (size_t i = 0; i < n; i++) {
        double s = b[i];
        for (size_t k = 0; k < i; k++)
            s -= L[i * n + k] * b[k];
        b[i] = s / L[i * n + i];
    }
    for (size_t i = n; i-- > 0;) {
        double s = b[i];
        for (size_t k = i + 1; k < n; k++)
            s -= L[k * n + i] * b[k];
        b[i] = s / L[i * n + i];
    }
}

/* x = A^T (A A^T)^-1 b, A r x c row-major (r <= MAXC): the minimum-norm solution; false if A A^T is singular by the
 * threshold. b (r) is overwritten. */
static bool min_norm(const double *A, size_t r, size_t c, double *b, double thr, double *x)
{
    double S[MAXC * MAXC];
    for (size_t i = 0; i < r; i++)
        for (size_t j = 0; j <= i; j++) {
            double s = 0;
            for (size_t k = 0; k < c; k++)
                s += A[i * c + k] * A[j * c + k];
            S[i * r + j] = S[j * r + i] = s;
        }
    if (chol(S, r) < thr)
        return false;
    chol_solve(S, r, b);
    for (size_t k = 0; k < c; k++) {
        double s = 0;
        for (size_t i = 0; i < r; i++)
            s += A[i * c + k] * b[i];
        x[k] = s;
    }
    return true;
}

static bool finite_n(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

static double sgn(double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0; }

/* The ground's normal force on each foot, for the contact hysteresis. */
static double normal_force(const rb_fbse *e, int l, const double *w)
{
    if (e->cfg.wrench == RB_FBSE_FT) { /* -(the leg on the foot side) = -sign reading, in the foot's axes */
        const double *R = e->R_FN[l];
        return -e->ft_sign[l] * (R[6] * w[0] + R[7] * w[1] + R[8] * w[2]);
    }
    return w[2];
}

static void set_ext(const rb_fbse *e, const rb_fbse_sample *s, const double R_WB[9], rb_ext_wrench ext[2])
{
    for (int l = 0; l < 2; l++) {
        const double *w = s->wrenches + 6 * l;
        if (e->cfg.wrench == RB_FBSE_FT) {
            ext[l].frame = e->ftf[l], ext[l].rep = RB_DYN_BODY;
            for (int j = 0; j < 6; j++)
                ext[l].w[j] = -e->ft_sign[l] * w[j]; /* the foot side on the leg */
        } else if (e->cfg.wrench == RB_FBSE_FEET_BODY) {
            ext[l].frame = e->foot[l], ext[l].rep = RB_DYN_BODY;
            memcpy(ext[l].w, w, sizeof ext[l].w);
        } else { /* world axes -> base axes (the estimator's world is the base) */
            ext[l].frame = e->foot[l], ext[l].rep = RB_DYN_MIXED;
            rb_m3t_mul_v(R_WB, w, ext[l].w);
            rb_m3t_mul_v(R_WB, w + 3, ext[l].w + 3);
        }
    }
}

static int update(rb_fbse *e, size_t i, double y, double r_sgn, double r_vel, rb_err *err)
{
    double Phi[2] = {r_sgn, r_vel};
    return rb_rls_update(e->rls[i], Phi, &y, err);
}

/* Non-slipping feet (4.9-4.23). */
static int step_nonslip(rb_fbse *e, const rb_fbse_sample *s, const double c0[3], const double R_WB[9], double T,
                        const rb_ext_wrench ext[2], rb_err *err)
{
    const rb_model *m = e->m;
    const size_t nv = e->nv, n = e->n;
    double gB[3], a0[3], alpha[3] = {0, 0, 0};
    rb_m3t_mul_v(R_WB, m->gravity, gB);
    for (int j = 0; j < 3; j++)
        a0[j] = c0[j] + gB[j]; /* the base origin's classical acceleration, without alpha's lever term */
    if (e->cfg.alpha == RB_FBSE_ALPHA_GYRO_DIFF) {
        double w[3];
        rb_m3_mul_v(e->R_BS, s->gyro, w);
        if (e->started && T > 0) {
            double g = e->cfg.gyro_diff_cutoff > 0 ? -expm1(-2 * M_PI * e->cfg.gyro_diff_cutoff * T) : 1.0;
            for (int j = 0; j < 3; j++)
                e->alpha_f[j] += g * ((w[j] - e->w_prev[j]) / T - e->alpha_f[j]);
        }
        memcpy(alpha, e->alpha_f, sizeof alpha);
    }
    int rc = rb_dyn_kinematics(m, e->ws, e->q, e->nu, NULL, err);
    if (rc)
        return rc;
    /* rows: each foot in contact with a regular J_m3; columns: alpha (3), then the legs' joints */
    size_t cols = 3 + n, r = 0;
    double rhs[MAXC], jd[6];
    int legs[2], nl = 0;
    for (int l = 0; l < 2; l++) {
        if (!e->contact[l])
            continue;
        double *J = e->J + (size_t)l * 6 * nv;
        rb_mat Jm = rb_mat_view(J, 6, nv, nv);
        if ((rc = rb_dyn_frame_jacobian(m, e->ws, (size_t)e->foot[l], RB_DYN_MIXED, &Jm, err)) ||
            (rc = rb_dyn_frame_jdot_nu(m, e->ws, (size_t)e->foot[l], RB_DYN_MIXED, jd, err)))
            return rc;
        double S[36];
        size_t nm = e->nleg[l];
        const size_t *dl = e->dof + e->off[l];
        for (int a = 0; a < 6; a++)
            for (int b = 0; b <= a; b++) {
                double v = 0;
                for (size_t k = 0; k < nm; k++)
                    v += J[a * nv + 6 + dl[k]] * J[b * nv + 6 + dl[k]];
                S[6 * a + b] = S[6 * b + a] = v;
            }
        if (nm < 6 || chol(S, 6) < e->cfg.singular_threshold) {
            e->singular[l] = 1, e->d.singular[l]++;
            continue;
        }
        for (int a = 0; a < 6; a++) {
            const double *Ja = J + a * nv;
            double px[3], lin = Ja[0] * a0[0] + Ja[1] * a0[1] + Ja[2] * a0[2];
            double *Ar = e->A + (r + (size_t)a) * cols;
            memset(Ar, 0, cols * sizeof *Ar);
            for (int c = 0; c < 3; c++) { /* alpha's columns: J_m2 + J_m1 [p]x */
                double ec[3] = {0, 0, 0};
                ec[c] = 1;
                rb_v3_cross(e->p_BS, ec, px);
                Ar[c] = Ja[3 + c] + Ja[0] * px[0] + Ja[1] * px[1] + Ja[2] * px[2];
            }
            for (size_t k = 0; k < nm; k++)
                Ar[3 + e->off[l] + k] = Ja[6 + dl[k]];
            rhs[r + (size_t)a] = -jd[a] - lin;
        }
        legs[nl++] = l;
        r += 6;
    }
    for (int j = 0; j < 3; j++)
        e->alpha[j] = NAN;
    if (!nl)
        return RB_OK;
    if (e->cfg.alpha == RB_FBSE_ALPHA_MIN_NORM) {
        if (!min_norm(e->A, r, cols, rhs, 1e-12, e->x)) {
            for (int i = 0; i < nl; i++)
                e->singular[legs[i]] = 1, e->d.singular[legs[i]]++;
            return RB_OK;
        }
        memcpy(alpha, e->x, sizeof alpha);
    } else { /* alpha known: each leg's square solve, A's joint block J_m3 theta_ddot = rhs - A_alpha alpha */
        for (int i = 0; i < nl; i++) {
            int l = legs[i];
            size_t nm = e->nleg[l];
            double Aj[6 * 6], b[6], th[6];
            for (int a = 0; a < 6; a++) {
                const double *Ar = e->A + ((size_t)i * 6 + (size_t)a) * cols;
                b[a] = rhs[(size_t)i * 6 + (size_t)a] - Ar[0] * alpha[0] - Ar[1] * alpha[1] - Ar[2] * alpha[2];
                for (size_t k = 0; k < nm; k++)
                    Aj[a * 6 + (int)k] = Ar[3 + e->off[l] + k];
            }
            if (!min_norm(Aj, 6, nm, b, 1e-12, th)) {
                e->singular[l] = 1, e->d.singular[l]++;
                legs[i] = -1;
                continue;
            }
            memcpy(e->x + 3 + e->off[l], th, nm * sizeof *th);
        }
    }
    memcpy(e->alpha, alpha, sizeof alpha);
    /* nu_dot = [f_B + g (the RNEA's gravity at an identity base attitude); alpha; theta_ddot] */
    double pa[3];
    rb_v3_cross(e->p_BS, alpha, pa);
    memset(e->nud, 0, nv * sizeof *e->nud);
    for (int j = 0; j < 3; j++)
        e->nud[j] = c0[j] + pa[j] + m->gravity[j], e->nud[3 + j] = alpha[j];
    for (int i = 0; i < nl; i++)
        if (legs[i] >= 0)
            for (size_t k = 0; k < e->nleg[legs[i]]; k++)
                e->nud[6 + e->dof[e->off[legs[i]] + k]] = e->x[3 + e->off[legs[i]] + k];
    if ((rc = rb_dyn_rnea(m, e->ws, e->q, e->nu, e->nud, ext, 2, e->tr, err)))
        return rc;
    for (int i = 0; i < nl; i++) {
        int l = legs[i];
        for (size_t k = 0; l >= 0 && k < e->nleg[l]; k++) {
            size_t j = e->off[l] + k, dof = e->dof[j];
            double tdd = e->x[3 + j], v = s->dq[dof];
            e->tdd[j] = tdd;
            e->meas[j] = s->tau[dof] - (e->tr[6 + dof] + e->arm[j] * tdd); /* (4.18) */
            if ((rc = update(e, j, e->meas[j], sgn(v), v, err)))
                return rc;
        }
    }
    return RB_OK;
}

/* Filtered dynamics (4.24-4.36), with the sign of the Z2 term corrected (header). */
static int step_filtered(rb_fbse *e, const rb_fbse_sample *s, const double c0[3], const double w[3], double T,
                         const rb_ext_wrench ext[2], rb_err *err)
{
    const rb_model *m = e->m;
    const size_t nv = e->nv;
    rb_mat M = rb_mat_view(e->M, nv, nv, nv), Md = rb_mat_view(e->Md, nv, nv, nv);
    int rc;
    memset(e->nud, 0, nv * sizeof *e->nud);
    for (int j = 0; j < 3; j++)
        e->nud[j] = c0[j] + m->gravity[j];
    if ((rc = rb_dyn_mass_matrix(m, e->ws, e->q, &M, err)) ||
        (rc = rb_dyn_mass_matrix_dot(m, e->ws, e->q, e->nu, &Md, err)) ||
        (rc = rb_dyn_rnea(m, e->ws, e->q, e->nu, e->nud, ext, 2, e->tr, err)))
        return rc;
    double pw[3];
    rb_v3_cross(e->p_BS, w, pw);
    for (int l = 0; l < 2; l++)
        for (size_t k = 0; k < e->nleg[l]; k++) {
            size_t i = e->off[l] + k, row = 6 + e->dof[i];
            const double *Mr = e->M + row * nv, *Mdr = e->Md + row * nv;
            double Hw = e->arm[i] * s->dq[e->dof[i]], Hdw = 0;
            for (int c = 0; c < 3; c++)
                Hw += Mr[3 + c] * w[c] + Mr[c] * pw[c], Hdw += Mdr[3 + c] * w[c] + Mdr[c] * pw[c];
            for (size_t kk = 0; kk < e->nleg[l]; kk++) {
                size_t col = 6 + e->dof[e->off[l] + kk];
                double v = s->dq[e->dof[e->off[l] + kk]];
                Hw += Mr[col] * v, Hdw += Mdr[col] * v;
            }
            double v = s->dq[e->dof[i]], K = e->K[i], sg = e->sigma[i];
            double xi1 = -Hw, xi2 = s->tau[e->dof[i]] + Hdw - e->tr[row], u = xi2 - sg * xi1;
            if (!e->started) {
                e->y[i] = -K * xi1, e->rs[i] = e->rv[i] = 0;
            } else { /* first-order hold: exact for inputs linear over the period */
                double om = -expm1(-sg * T), a = 1 - om, I0 = om / sg, I1 = 1 / sg - om / (sg * sg * T);
                double b0 = K * (I0 - I1), b1 = K * I1;
                e->y[i] = a * e->y[i] + b0 * e->u_prev[i] + b1 * u;
                e->rs[i] = a * e->rs[i] + b0 * e->s_prev[i] + b1 * sgn(v);
                e->rv[i] = a * e->rv[i] + b0 * e->v_prev[i] + b1 * v;
            }
            e->u_prev[i] = u, e->s_prev[i] = sgn(v), e->v_prev[i] = v;
            double uf = K * xi1 + e->y[i]; /* <u_F>_Z (4.34) */
            if (!e->contact[l])
                continue;
            e->meas[i] = uf * sg / K;
            bool lit = e->cfg.regressors == RB_FBSE_REG_LITERAL;
            if ((rc = update(e, i, uf, lit ? sgn(v) : e->rs[i], lit ? v : e->rv[i], err)))
                return rc;
        }
    return RB_OK;
}

int rb_fbse_step(rb_fbse *e, size_t k, double t, const rb_fbse_sample *s, rb_err *err)
{
    if (!e || !s || !s->q || !s->dq || !s->tau || !s->wrenches || !s->acc || !s->gyro)
        return rb_err_set(err, RB_EINVAL, "rb_fbse_step: NULL argument");
    if (s->phase < -1 || s->phase > 2)
        return rb_err_set(err, RB_EINPUT, "sample %zu: phase %d is not 0 (double support), 1 (left) or 2 (right)", k,
                          s->phase);
    if (e->started && !(t > e->t_prev))
        return rb_err_set(err, RB_EINPUT, "sample %zu: t = %.17g is not after the previous sample's %.17g", k, t,
                          e->t_prev);
    const size_t n = e->n;
    double T = e->started ? t - e->t_prev : 0;
    bool ok =
        finite_n(s->acc, 3) && finite_n(s->gyro, 3) && finite_n(s->wrenches, 12) && (!s->R_WI || finite_n(s->R_WI, 9));
    for (size_t i = 0; i < n && ok; i++) {
        size_t d = e->dof[i];
        ok = isfinite(s->q[d]) && isfinite(s->dq[d]) && isfinite(s->tau[d]);
    }
    bool need_att = e->cfg.method == RB_FBSE_NONSLIP || e->cfg.wrench == RB_FBSE_FEET_MIXED;
    if (need_att && !s->R_WI)
        return rb_err_set(err, RB_EINPUT, "sample %zu: no attitude (the %s needs the IMU's orientation)", k,
                          e->cfg.method == RB_FBSE_NONSLIP ? "nonslip method" : "mixed foot wrench");
    e->d.steps++;
    for (int l = 0; l < 2; l++) {
        if (s->phase >= 0)
            e->down[l] = s->phase == 0 || s->phase == l + 1;
        else if (finite_n(s->wrenches + 6 * l, 6)) {
            double fn = normal_force(e, l, s->wrenches + 6 * l);
            e->down[l] = e->down[l] ? fn >= e->cfg.contact_off : fn > e->cfg.contact_on;
        }
        e->contact[l] = e->down[l], e->singular[l] = 0;
    }
    for (size_t i = 0; i < n; i++)
        e->meas[i] = e->tdd[i] = NAN;
    int rc = RB_OK;
    double w[3] = {NAN, NAN, NAN};
    if (ok) {
        double R_WB[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, c0[3], wwp[3], wp[3];
        if (s->R_WI)
            for (int i = 0; i < 3; i++) /* R_WB = R_WI R_BS^T */
                for (int j = 0; j < 3; j++)
                    R_WB[3 * i + j] = s->R_WI[3 * i] * e->R_BS[3 * j] + s->R_WI[3 * i + 1] * e->R_BS[3 * j + 1] +
                                      s->R_WI[3 * i + 2] * e->R_BS[3 * j + 2];
        rb_m3_mul_v(e->R_BS, s->gyro, w);
        rb_m3_mul_v(e->R_BS, s->acc, c0);
        rb_v3_cross(w, e->p_BS, wp);
        rb_v3_cross(w, wp, wwp);
        for (int j = 0; j < 3; j++)
            c0[j] -= wwp[j];
        for (size_t i = 0; i < n; i++)
            e->q[7 + e->dof[i]] = s->q[e->dof[i]], e->nu[6 + e->dof[i]] = s->dq[e->dof[i]];
        memset(e->nu, 0, 3 * sizeof *e->nu);
        memcpy(e->nu + 3, w, sizeof w);
        rb_ext_wrench ext[2];
        set_ext(e, s, R_WB, ext);
        rc = e->cfg.method == RB_FBSE_NONSLIP ? step_nonslip(e, s, c0, R_WB, T, ext, err)
                                              : step_filtered(e, s, c0, w, T, ext, err);
        if (rc)
            return rc;
        memcpy(e->w_prev, w, sizeof w);
        e->started = true, e->t_prev = t;
    } else {
        e->d.nonfinite++;
        for (int j = 0; j < 3; j++)
            e->alpha[j] = NAN;
    }
    for (int l = 0; l < 2; l++)
        e->d.updates[l] += e->contact[l] && isfinite(e->meas[e->off[l]]);
    for (size_t i = 0; i < n; i++) {
        const double *th = rb_rls_theta(e->rls[i]);
        double v = s->dq[e->dof[i]];
        e->fc[i] = th[0], e->fv[i] = th[1];
        e->model_out[i] = th[0] * sgn(v) + th[1] * v;
        e->fric[i] = isfinite(e->meas[i]) ? e->meas[i] : e->model_out[i];
        e->link[i] = s->tau[e->dof[i]] - e->fric[i];
    }
    return rc;
}

void rb_fbse_get_out(const rb_fbse *e, rb_fbse_out *o)
{
    o->friction = e->fric, o->measured = e->meas, o->model = e->model_out;
    o->coulomb = e->fc, o->viscous = e->fv, o->link_torque = e->link, o->theta_ddot = e->tdd;
    memcpy(o->alpha, e->alpha, sizeof o->alpha);
    memcpy(o->contact, e->contact, 2), memcpy(o->singular, e->singular, 2);
}

void rb_fbse_get_diag(const rb_fbse *e, rb_fbse_diag *d) { *d = e->d; }
