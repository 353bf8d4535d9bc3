/* Maximum-a-posteriori whole-body dynamics (roboest/observers.h, rb_map_*; seed 002's slides, PAPERS.md sec. 2.2):
 * the set-up (unknowns, sensors, prior, the block layout), the kinematics of a sample, the constraint and sensor
 * rows, the outputs. The solvers are map_solve.c's. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "map_internal.h"

void rb_map_config_init(rb_map_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->var_dyn = 1e-6;
    cfg->var_free = 1e4;
    cfg->var_unknown = 1e4;
    cfg->var_zero = 1e-6;
    cfg->covariance = true;
}

void rb_map_free(rb_map *M)
{
    if (!M)
        return;
    void **p[] = {(void **)&M->cfg.ft,
                  (void **)&M->cfg.var_ft,
                  (void **)&M->cfg.acc,
                  (void **)&M->cfg.var_acc,
                  (void **)&M->cfg.gyro,
                  (void **)&M->cfg.var_gyro,
                  (void **)&M->cfg.var_ddq,
                  (void **)&M->cfg.tau,
                  (void **)&M->cfg.var_tau,
                  (void **)&M->cfg.known,
                  (void **)&M->cfg.var_known,
                  (void **)&M->cfg.unknown,
                  (void **)&M->ga,
                  (void **)&M->gf,
                  (void **)&M->gtau,
                  (void **)&M->gfx,
                  (void **)&M->gqdd,
                  (void **)&M->parent,
                  (void **)&M->wide,
                  (void **)&M->ft_body,
                  (void **)&M->ft_M,
                  (void **)&M->acc_body,
                  (void **)&M->acc_X,
                  (void **)&M->gyro_body,
                  (void **)&M->gyro_X,
                  (void **)&M->known_body,
                  (void **)&M->known_M,
                  (void **)&M->unk_body,
                  (void **)&M->unk_M,
                  (void **)&M->prior,
                  (void **)&M->Xup,
                  (void **)&M->R0,
                  (void **)&M->S,
                  (void **)&M->v,
                  (void **)&M->vrel,
                  (void **)&M->c,
                  (void **)&M->rows.nz,
                  (void **)&M->rows.col,
                  (void **)&M->rows.val,
                  (void **)&M->rows.rhs,
                  (void **)&M->rows.w,
                  (void **)&M->rows.sensor,
                  (void **)&M->blk,
                  (void **)&M->loc,
                  (void **)&M->bn,
                  (void **)&M->boff,
                  (void **)&M->ncol,
                  (void **)&M->cols,
                  (void **)&M->kk_off,
                  (void **)&M->kp_off,
                  (void **)&M->Nkk,
                  (void **)&M->Nkp,
                  (void **)&M->h,
                  (void **)&M->x,
                  (void **)&M->wk,
                  (void **)&M->row_blk,
                  (void **)&M->row_loc,
                  (void **)&M->row_cpl,
                  (void **)&M->cov_lo,
                  (void **)&M->cov_w,
                  (void **)&M->cov_yoff,
                  (void **)&M->cov_fx,
                  (void **)&M->cov_g,
                  (void **)&M->cov_Y,
                  (void **)&M->cov_ss,
                  (void **)&M->A,
                  (void **)&M->b,
                  (void **)&M->Nd,
                  (void **)&M->hd,
                  (void **)&M->yd,
                  (void **)&M->d,
                  (void **)&M->var_d,
                  (void **)&M->fxcov,
                  (void **)&M->tau,
                  (void **)&M->tau_std,
                  (void **)&M->wrench,
                  (void **)&M->wrench_std};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        rb_free(*p[i]);
    rb_free(M);
}

/* ---- set-up --------------------------------------------------------------------------------------------------- */

static const char *mname(const rb_model *m) { return m->name ? m->name : ""; }

/* Pose of frame f in body b, when f is on b or on a body joined to b by a fixed joint (its parent or child). */
static bool pose_in(const rb_model *m, int b, int f, rb_xform *out)
{
    const rb_frame *fr = &m->frames[f];
    if (fr->body == b) {
        *out = fr->X_body;
        return true;
    }
    rb_xform t;
    if (m->bodies[b].parent == fr->body && m->bodies[b].type == RB_JOINT_FIXED) { /* f on b's parent */
        rb_xform_inverse(&m->bodies[b].X_parent, &t);
        rb_xform_compose(&t, &fr->X_body, out);
        return true;
    }
    if (m->bodies[fr->body].parent == b && m->bodies[fr->body].type == RB_JOINT_FIXED) {
        rb_xform_compose(&m->bodies[fr->body].X_parent, &fr->X_body, out);
        return true;
    }
    return false;
}

static int copy_ints(const int *src, size_t n, int **dst, rb_err *err)
{
    *dst = NULL;
    if (n == 0)
        return RB_OK;
    if (!src)
        return rb_err_set(err, RB_EINVAL, "rb_map_alloc: NULL array with %zu entries", n);
    if (!(*dst = rb_malloc(n * sizeof **dst)))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    memcpy(*dst, src, n * sizeof **dst);
    return RB_OK;
}

static int copy_vars(const double *src, size_t n, const char *what, double **dst, rb_err *err)
{
    *dst = NULL;
    if (n == 0)
        return RB_OK;
    if (!src)
        return rb_err_set(err, RB_EINVAL, "rb_map_alloc: NULL %s with %zu entries", what, n);
    for (size_t i = 0; i < n; i++)
        if (!(src[i] > 0.0) || !isfinite(src[i]))
            return rb_err_set(err, RB_ECONFIG, "%s[%zu] = %g: a variance must be positive and finite", what, i, src[i]);
    if (!(*dst = rb_malloc(n * sizeof **dst)))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    memcpy(*dst, src, n * sizeof **dst);
    return RB_OK;
}

static int check_frames(const rb_model *m, const int *f, size_t n, const char *what, rb_err *err)
{
    for (size_t i = 0; i < n; i++) {
        if (f[i] < 0 || (size_t)f[i] >= m->n_frames)
            return rb_err_set(err, RB_EINVAL, "%s[%zu]: frame %d is not in model %s (%zu frames)", what, i, f[i],
                              mname(m), m->n_frames);
        for (size_t j = 0; j < i; j++)
            if (f[j] == f[i])
                return rb_err_set(err, RB_ECONFIG, "%s[%zu]: frame %s is listed twice", what, i, m->frames[f[i]].name);
    }
    return RB_OK;
}

static int copy_config(rb_map *M, const rb_map_config *c, rb_err *err)
{
    const rb_model *m = M->m;
    size_t n = m->n_dofs;
    int rc;
    M->cfg = *c;
    /* the copies below replace the caller's arrays; until then none is ours (rb_map_free frees them) */
    M->cfg.ft = M->cfg.acc = M->cfg.gyro = M->cfg.tau = M->cfg.known = M->cfg.unknown = NULL;
    M->cfg.var_ft = M->cfg.var_acc = M->cfg.var_gyro = M->cfg.var_ddq = M->cfg.var_tau = M->cfg.var_known = NULL;
    if ((rc = copy_ints(c->ft, c->n_ft, (int **)&M->cfg.ft, err)) ||
        (rc = copy_vars(c->var_ft, 6 * c->n_ft, "var_ft", (double **)&M->cfg.var_ft, err)) ||
        (rc = copy_ints(c->acc, c->n_acc, (int **)&M->cfg.acc, err)) ||
        (rc = copy_vars(c->var_acc, 3 * c->n_acc, "var_acc", (double **)&M->cfg.var_acc, err)) ||
        (rc = copy_ints(c->gyro, c->n_gyro, (int **)&M->cfg.gyro, err)) ||
        (rc = copy_vars(c->var_gyro, 3 * c->n_gyro, "var_gyro", (double **)&M->cfg.var_gyro, err)) ||
        (c->ddq && (rc = copy_vars(c->var_ddq, n, "var_ddq", (double **)&M->cfg.var_ddq, err))) ||
        (rc = copy_ints(c->tau, c->n_tau, (int **)&M->cfg.tau, err)) ||
        (rc = copy_vars(c->var_tau, c->n_tau, "var_tau", (double **)&M->cfg.var_tau, err)) ||
        (rc = copy_ints(c->known, c->n_known, (int **)&M->cfg.known, err)) ||
        (rc = copy_vars(c->var_known, 6 * c->n_known, "var_known", (double **)&M->cfg.var_known, err)) ||
        (rc = copy_ints(c->unknown, c->n_unknown, (int **)&M->cfg.unknown, err)))
        return rc;
    struct {
        const char *name;
        double v;
        bool inf_ok;
    } sc[] = {{"var_dyn", c->var_dyn, false},
              {"var_free", c->var_free, true},
              {"var_unknown", c->var_unknown, true},
              {"var_zero", c->var_zero, false}};
    for (size_t i = 0; i < 4; i++)
        if (!(sc[i].v > 0.0) || (!sc[i].inf_ok && isinf(sc[i].v)))
            return rb_err_set(err, RB_ECONFIG, "%s = %g: a variance must be positive%s", sc[i].name, sc[i].v,
                              sc[i].inf_ok ? " (or INFINITY: no prior)" : " and finite");
    if ((rc = check_frames(m, c->acc, c->n_acc, "acc", err)) ||
        (rc = check_frames(m, c->gyro, c->n_gyro, "gyro", err)) ||
        (rc = check_frames(m, c->known, c->n_known, "known", err)) ||
        (rc = check_frames(m, c->unknown, c->n_unknown, "unknown", err)))
        return rc;
    for (size_t i = 0; i < c->n_ft; i++) {
        if (c->ft[i] < 0 || (size_t)c->ft[i] >= m->n_ft)
            return rb_err_set(err, RB_EINVAL, "ft[%zu]: FT sensor %d is not in model %s (%zu sensors)", i, c->ft[i],
                              mname(m), m->n_ft);
        for (size_t j = 0; j < i; j++)
            if (c->ft[j] == c->ft[i])
                return rb_err_set(err, RB_ECONFIG, "ft[%zu]: FT sensor %s is listed twice", i, m->ft[c->ft[i]].name);
    }
    for (size_t i = 0; i < c->n_tau; i++) {
        if (c->tau[i] < 0 || (size_t)c->tau[i] >= n)
            return rb_err_set(err, RB_EINVAL, "tau[%zu]: joint %d is not in model %s (%zu joints)", i, c->tau[i],
                              mname(m), n);
        for (size_t j = 0; j < i; j++)
            if (c->tau[j] == c->tau[i])
                return rb_err_set(err, RB_ECONFIG, "tau[%zu]: joint %s is listed twice", i, m->dof_names[c->tau[i]]);
    }
    return RB_OK;
}

/* The FT sensor's measured wrench as a map of f_j, j the tree child of its fixed joint. */
static int ft_setup(rb_map *M, size_t i, rb_err *err)
{
    const rb_model *m = M->m;
    const rb_ft_sensor *s = &m->ft[M->cfg.ft[i]];
    int c = s->child_body, p = s->parent_body, j;
    if (c > 0 && (size_t)c < m->n_bodies && m->bodies[c].parent == p && m->bodies[c].type == RB_JOINT_FIXED)
        j = c;
    else if (p > 0 && (size_t)p < m->n_bodies && m->bodies[p].parent == c && m->bodies[p].type == RB_JOINT_FIXED)
        j = p; /* reversed by re-rooting */
    else
        return rb_err_set(err, RB_ECONFIG,
                          "ft[%zu]: FT sensor %s: joint %s is not a sensor joint of model %s (no fixed joint joins "
                          "its two bodies)",
                          i, s->name, s->joint_name ? s->joint_name : "?", mname(m));
    if (s->joint_name && m->bodies[j].joint_name && strcmp(s->joint_name, m->bodies[j].joint_name) != 0)
        return rb_err_set(err, RB_ECONFIG, "ft[%zu]: FT sensor %s: joint %s is not a sensor joint of model %s", i,
                          s->name, s->joint_name, mname(m));
    rb_xform cXF;
    if (s->frame < 0 || (size_t)s->frame >= m->n_frames || !pose_in(m, c, s->frame, &cXF))
        return rb_err_set(err, RB_ECONFIG, "ft[%zu]: FT sensor %s: its reading frame is on neither side of joint %s", i,
                          s->name, s->joint_name ? s->joint_name : "?");
    double Fi[36], *out = M->ft_M + 36 * i;
    map_force_inv_mat(&cXF, Fi);
    if (j == c) {
        for (int k = 0; k < 36; k++)
            out[k] = s->sign * Fi[k];
    } else { /* the parent half's wrench on the child half = -(c's wrench on p), carried to c */
        double F[36];
        map_force_mat(&m->bodies[p].X_parent, F);
        map_mat6_mul(Fi, F, out);
        for (int k = 0; k < 36; k++)
            out[k] *= -s->sign;
    }
    M->ft_body[i] = j;
    return RB_OK;
}

#define ALLOC(ptr, count)                                                                                              \
    do {                                                                                                               \
        size_t cnt_ = (count);                                                                                         \
        if (!((ptr) = rb_calloc(cnt_ ? cnt_ : 1, sizeof *(ptr))))                                                      \
            return rb_err_set(err, RB_ENOMEM, "out of memory");                                                        \
    } while (0)

/* Unknowns in d's order, the block layout, the rows' room. */
static int layout(rb_map *M, rb_err *err)
{
    const rb_model *m = M->m;
    size_t nb = M->nb;
    ALLOC(M->ga, nb);
    ALLOC(M->gf, nb);
    ALLOC(M->gtau, nb);
    ALLOC(M->gfx, nb);
    ALLOC(M->gqdd, nb);
    ALLOC(M->parent, nb);
    ALLOC(M->wide, nb);
    long g = 0;
    for (size_t b = 0; b < nb; b++) {
        M->parent[b] = m->bodies[b].parent;
        M->ga[b] = M->gf[b] = M->gtau[b] = M->gfx[b] = M->gqdd[b] = -1;
        if (b == 0 && !M->floating)
            continue;
        bool mov = b > 0 && m->bodies[b].type != RB_JOINT_FIXED;
        M->ga[b] = g, g += 6;
        if (b > 0)
            M->gf[b] = g, g += 6;
        if (mov)
            M->gtau[b] = g++;
        M->gfx[b] = g, g += 6;
        if (mov)
            M->gqdd[b] = g++;
    }
    M->ng = (size_t)g;
    if (M->ng == 0)
        return rb_err_set(err, RB_ECONFIG, "model %s has nothing to estimate (a fixed base alone)", mname(m));
    ALLOC(M->blk, M->ng);
    ALLOC(M->loc, M->ng);
    ALLOC(M->bn, nb);
    ALLOC(M->boff, nb);
    ALLOC(M->ncol, nb);
    ALLOC(M->cols, 12 * nb);
    ALLOC(M->kk_off, nb);
    ALLOC(M->kp_off, nb);
    /* block k: a, f_x, tau, qdd of body k, then f_c of its children in body order */
    for (size_t b = 0; b < nb; b++) {
        size_t l = 0;
        long own[4][2] = {{M->ga[b], 6}, {M->gfx[b], 6}, {M->gtau[b], 1}, {M->gqdd[b], 1}};
        for (int t = 0; t < 4; t++)
            for (long j = 0; own[t][0] >= 0 && j < own[t][1]; j++)
                M->blk[own[t][0] + j] = (int)b, M->loc[own[t][0] + j] = (int)l++;
        for (size_t c = b + 1; c < nb; c++)
            if (M->parent[c] == (int)b)
                for (long j = 0; j < 6; j++)
                    M->blk[M->gf[c] + j] = (int)b, M->loc[M->gf[c] + j] = (int)l++;
        M->bn[b] = l;
    }
    size_t off = 0, kk = 0, kp = 0;
    M->maxblock = 1;
    for (size_t b = 0; b < nb; b++) {
        M->boff[b] = off, off += M->bn[b];
        M->kk_off[b] = kk, kk += M->bn[b] * M->bn[b];
        if (M->bn[b] > M->maxblock)
            M->maxblock = M->bn[b];
        int p = M->parent[b];
        size_t nc = 0;
        if (p >= 0) {
            for (long j = 0; M->ga[p] >= 0 && j < 6; j++)
                M->cols[12 * b + nc++] = M->loc[M->ga[p] + j];
            for (long j = 0; j < 6; j++)
                M->cols[12 * b + nc++] = M->loc[M->gf[b] + j];
        }
        M->ncol[b] = nc;
        M->kp_off[b] = kp, kp += M->bn[b] * nc;
    }
    ALLOC(M->Nkk, kk);
    ALLOC(M->Nkp, kp);
    ALLOC(M->h, M->ng);
    ALLOC(M->x, M->ng);
    ALLOC(M->wk, 144);
    /* rows: 13 per body, the sensors; the widest row is a body's balance with its children */
    size_t maxch = 0, cap = 13 * nb + 6 * M->cfg.n_ft + 3 * M->cfg.n_acc + 3 * M->cfg.n_gyro +
                            (M->cfg.ddq ? m->n_dofs : 0) + M->cfg.n_tau + 6 * M->cfg.n_known;
    for (size_t b = 0; b < nb; b++) {
        size_t ch = 0;
        for (size_t c = b + 1; c < nb; c++)
            ch += M->parent[c] == (int)b;
        if (ch > maxch)
            maxch = ch;
    }
    map_rows *R = &M->rows;
    R->cap = cap, R->maxnz = 14 + 6 * maxch;
    ALLOC(R->nz, cap);
    ALLOC(R->col, cap * R->maxnz);
    ALLOC(R->val, cap * R->maxnz);
    ALLOC(M->row_blk, R->maxnz);
    ALLOC(M->row_loc, R->maxnz);
    ALLOC(M->row_cpl, R->maxnz);
    ALLOC(R->rhs, cap);
    ALLOC(R->w, cap);
    ALLOC(R->sensor, cap);
    return RB_OK;
}

static int find_link(rb_map *M, const int *frames, size_t n, const char *what, int *body, double *Mout, bool inv,
                     rb_err *err)
{
    const rb_model *m = M->m;
    for (size_t i = 0; i < n; i++) {
        const rb_frame *fr = &m->frames[frames[i]];
        body[i] = fr->body;
        if (fr->body == 0 && !M->floating)
            return rb_err_set(err, RB_ECONFIG,
                              "%s[%zu]: frame %s is on the fixed base %s: its mount bears any wrench there (leave it "
                              "out)",
                              what, i, fr->name, m->bodies[0].name);
        for (size_t j = 0; j < i; j++)
            if (body[j] == body[i])
                return rb_err_set(err, RB_ECONFIG,
                                  "%s[%zu]: frames %s and %s are both on link %s (one wrench per link)", what, i,
                                  m->frames[frames[j]].name, fr->name, m->bodies[fr->body].name);
        /* the wrench at the frame (frame axes, about its origin) from f_x in the body */
        (void)inv;
        map_force_inv_mat(&fr->X_body, Mout + 36 * i);
    }
    return RB_OK;
}

static int sensors_setup(rb_map *M, rb_err *err)
{
    const rb_model *m = M->m;
    const rb_map_config *c = &M->cfg;
    int rc;
    ALLOC(M->ft_body, c->n_ft);
    ALLOC(M->ft_M, 36 * c->n_ft);
    for (size_t i = 0; i < c->n_ft; i++)
        if ((rc = ft_setup(M, i, err)))
            return rc;
    ALLOC(M->acc_body, c->n_acc);
    ALLOC(M->acc_X, c->n_acc);
    ALLOC(M->gyro_body, c->n_gyro);
    ALLOC(M->gyro_X, c->n_gyro);
    for (size_t i = 0; i < c->n_acc; i++)
        M->acc_body[i] = m->frames[c->acc[i]].body, M->acc_X[i] = m->frames[c->acc[i]].X_body;
    for (size_t i = 0; i < c->n_gyro; i++)
        M->gyro_body[i] = m->frames[c->gyro[i]].body, M->gyro_X[i] = m->frames[c->gyro[i]].X_body;
    ALLOC(M->known_body, c->n_known);
    ALLOC(M->known_M, 36 * c->n_known);
    ALLOC(M->unk_body, c->n_unknown);
    ALLOC(M->unk_M, 36 * c->n_unknown);
    if ((rc = find_link(M, c->known, c->n_known, "known", M->known_body, M->known_M, true, err)) ||
        (rc = find_link(M, c->unknown, c->n_unknown, "unknown", M->unk_body, M->unk_M, true, err)))
        return rc;
    for (size_t i = 0; i < c->n_known; i++)
        for (size_t j = 0; j < c->n_unknown; j++)
            if (M->known_body[i] == M->unk_body[j])
                return rb_err_set(err, RB_ECONFIG, "known[%zu] (%s) and unknown[%zu] (%s) are both on link %s", i,
                                  m->frames[c->known[i]].name, j, m->frames[c->unknown[j]].name,
                                  m->bodies[M->known_body[i]].name);
    for (size_t i = 0; i < c->n_known; i++)
        M->wide[M->known_body[i]] = 1;
    for (size_t i = 0; i < c->n_unknown; i++)
        M->wide[M->unk_body[i]] = 1;
    ALLOC(M->prior, M->ng);
    double pf = isinf(c->var_free) ? 0.0 : 1.0 / c->var_free, pu = isinf(c->var_unknown) ? 0.0 : 1.0 / c->var_unknown;
    for (size_t g = 0; g < M->ng; g++)
        M->prior[g] = pf;
    for (size_t b = 0; b < M->nb; b++)
        for (long j = 0; M->gfx[b] >= 0 && j < 6; j++)
            M->prior[M->gfx[b] + j] = M->wide[b] ? pu : 1.0 / c->var_zero;
    return RB_OK;
}

static double residual(const rb_map *M)
{
    const map_rows *R = &M->rows;
    double J = 0.0;
    for (size_t r = 0; r < R->n; r++) {
        double e = -R->rhs[r];
        for (int j = 0; j < R->nz[r]; j++)
            e += R->val[r * R->maxnz + (size_t)j] * M->d[R->col[r * R->maxnz + (size_t)j]];
        J += R->w[r] * e * e;
    }
    for (size_t g = 0; g < M->ng; g++)
        J += M->prior[g] * M->d[g] * M->d[g];
    return sqrt(J);
}

static void outputs(rb_map *M)
{
    const rb_model *m = M->m;
    bool cov = M->cfg.covariance;
    for (size_t j = 0; j < M->n; j++) {
        long g = M->gtau[m->dof_body[j]];
        M->tau[j] = M->d[g];
        M->tau_std[j] = cov ? sqrt(M->var_d[g]) : NAN;
    }
    for (size_t u = 0; u < M->cfg.n_unknown; u++) {
        int b = M->unk_body[u];
        const double *T = M->unk_M + 36 * u, *C = M->fxcov + 36 * b, *fx = M->d + M->gfx[b];
        for (int r = 0; r < 6; r++) {
            double s = 0.0, v = 0.0;
            for (int k = 0; k < 6; k++) {
                s += T[6 * r + k] * fx[k];
                for (int l = 0; l < 6; l++)
                    v += T[6 * r + k] * C[6 * k + l] * T[6 * r + l];
            }
            M->wrench[6 * u + r] = s;
            M->wrench_std[6 * u + r] = cov ? sqrt(v) : NAN;
        }
    }
    M->residual = residual(M);
    M->rows_used = M->rows.n;
}

static const char *const kind_names[5] = {"acceleration", "joint wrench", "joint torque", "external wrench",
                                          "joint acceleration"};

/* The unknowns in N's null space, by kind and link, into msg. */
static int unobservable(rb_map *M, rb_err *err)
{
    size_t ng = M->ng;
    double *N = rb_malloc(ng * ng * sizeof *N), *ev = rb_malloc(ng * sizeof *ev);
    bool alloc_dense = !M->A;
    if (alloc_dense) {
        M->A = rb_calloc(M->rows.cap * ng, sizeof *M->A);
        M->b = rb_calloc(M->rows.cap, sizeof *M->b);
    }
    int rc = RB_OK;
    if (!N || !ev || !M->A || !M->b) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
        goto done;
    }
    map_dense_normal(M, N);
    /* Jacobi scaling first: the rows' weights span many decades, the null space is what is exactly singular */
    for (size_t j = 0; j < ng; j++)
        ev[j] = N[j * (ng + 1)] > 0 ? 1.0 / sqrt(N[j * (ng + 1)]) : 1.0;
    for (size_t j = 0; j < ng; j++)
        for (size_t i = 0; i < ng; i++)
            N[i + j * ng] *= ev[i] * ev[j];
    if (LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'L', (lapack_int)ng, N, (lapack_int)ng, ev) != 0) {
        rc = rb_err_set(err, RB_ECONFIG, "the MAP's normal matrix is singular (its eigen-decomposition failed)");
        goto done;
    }
    double tol = 1e-13 * fabs(ev[ng - 1]);
    char list[RB_ERR_MSG_MAX] = "";
    size_t len = 0;
    for (int kind = 0; kind < 5; kind++) {
        bool first = true;
        for (size_t b = 0; b < M->nb; b++) {
            long g0 = (long[]){M->ga[b], M->gf[b], M->gtau[b], M->gfx[b], M->gqdd[b]}[kind];
            long cnt = kind == 2 || kind == 4 ? 1 : 6;
            bool hit = false;
            for (size_t e = 0; g0 >= 0 && e < ng && ev[e] <= tol && !hit; e++)
                for (long j = 0; j < cnt && !hit; j++)
                    hit = fabs(N[(size_t)(g0 + j) + e * ng]) > 1e-4;
            if (!hit)
                continue;
            int w = snprintf(list + len, sizeof list - len, "%s%s%s", first ? (len ? "; " : "") : ", ",
                             first ? kind_names[kind] : "", "");
            if (w > 0 && (size_t)w < sizeof list - len)
                len += (size_t)w;
            w = snprintf(list + len, sizeof list - len, "%s%s", first ? " of " : "", M->m->bodies[b].name);
            if (w > 0 && (size_t)w < sizeof list - len)
                len += (size_t)w;
            first = false;
        }
    }
    rc = rb_err_set(err, RB_ECONFIG,
                    "unobservable (no prior and no sensor fixes them): %s; give them a prior or a sensor",
                    len ? list : "(the null space could not be attributed)");
done:
    rb_free(N);
    rb_free(ev);
    if (alloc_dense) {
        rb_free(M->A), rb_free(M->b);
        M->A = M->b = NULL;
    }
    return rc;
}

static int check_observable(rb_map *M, rb_err *err)
{
    size_t n = M->n,
           cap = 3 * n + 6 * M->cfg.n_ft + 3 * M->cfg.n_acc + 3 * M->cfg.n_gyro + M->cfg.n_tau + 6 * M->cfg.n_known + 1;
    double *z = rb_calloc(cap, sizeof *z);
    if (!z)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    rb_map_input in = {.s = z, .s_dot = z, .s_ddot = z, .ft = z, .acc = z, .gyro = z, .tau = z, .known = z};
    map_build(M, &in);
    bool cov = M->cfg.covariance;
    M->cfg.covariance = false;
    bool ok = map_solve_sparse(M);
    M->cfg.covariance = cov;
    rb_free(z);
    return ok ? RB_OK : unobservable(M, err);
}

int rb_map_alloc(const rb_model *model, const rb_map_config *cfg, rb_map **out, rb_err *err)
{
    if (!out)
        return rb_err_set(err, RB_EINVAL, "rb_map_alloc: NULL output");
    *out = NULL;
    if (!model || !cfg)
        return rb_err_set(err, RB_EINVAL, "rb_map_alloc: NULL argument");
    rb_map *M = rb_calloc(1, sizeof *M);
    if (!M)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    M->m = model, M->nb = model->n_bodies, M->n = model->n_dofs, M->floating = model->floating;
    M->fail_body = -1, M->fail_g = -1;
    for (int i = 0; i < 3; i++)
        M->a0[i] = -model->gravity[i];
    int rc = copy_config(M, cfg, err);
    if (!rc && M->floating && M->cfg.n_gyro == 0)
        M->diag.base_rate_unobserved = true;
    rc = rc ? rc : layout(M, err);
    rc = rc ? rc : sensors_setup(M, err);
    if (!rc) {
        size_t nb = M->nb, ng = M->ng, nu = M->cfg.n_unknown;
        if (!(M->Xup = rb_calloc(nb, sizeof *M->Xup)) || !(M->R0 = rb_calloc(nb, sizeof *M->R0)) ||
            !(M->S = rb_calloc(nb, sizeof *M->S)) || !(M->v = rb_calloc(nb, sizeof *M->v)) ||
            !(M->vrel = rb_calloc(nb, sizeof *M->vrel)) || !(M->c = rb_calloc(nb, sizeof *M->c)) ||
            !(M->d = rb_calloc(ng, sizeof *M->d)) || !(M->var_d = rb_calloc(ng, sizeof *M->var_d)) ||
            !(M->fxcov = rb_calloc(36 * nb, sizeof *M->fxcov)) || !(M->tau = rb_calloc(M->n + 1, sizeof *M->tau)) ||
            !(M->tau_std = rb_calloc(M->n + 1, sizeof *M->tau_std)) ||
            !(M->wrench = rb_calloc(6 * nu + 1, sizeof *M->wrench)) ||
            !(M->wrench_std = rb_calloc(6 * nu + 1, sizeof *M->wrench_std)))
            rc = rb_err_set(err, RB_ENOMEM, "out of memory");
        if (!rc && !M->cfg.dense && M->cfg.covariance && !map_cov_layout(M))
            rc = rb_err_set(err, RB_ENOMEM, "out of memory");
        if (!rc && M->cfg.dense &&
            (!(M->A = rb_calloc(M->rows.cap * ng, sizeof *M->A)) || !(M->b = rb_calloc(M->rows.cap, sizeof *M->b)) ||
             !(M->Nd = rb_calloc(ng * ng, sizeof *M->Nd)) || !(M->hd = rb_calloc(ng, sizeof *M->hd)) ||
             !(M->yd = rb_calloc(7 * ng, sizeof *M->yd))))
            rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    rc = rc ? rc : check_observable(M, err);
    if (rc) {
        rb_map_free(M);
        return rc;
    }
    M->diag.n_unknowns = M->ng;
    *out = M;
    return RB_OK;
}

int rb_map_step(rb_map *M, const rb_map_input *in, rb_err *err)
{
    if (!M || !in || !in->s || !in->s_dot)
        return rb_err_set(err, RB_EINVAL, "rb_map_step: NULL argument");
    const rb_map_config *c = &M->cfg;
    if ((c->n_ft && !in->ft) || (c->n_acc && !in->acc) || (c->n_gyro && !in->gyro) || (c->ddq && !in->s_ddot) ||
        (c->n_tau && !in->tau) || (c->n_known && !in->known))
        return rb_err_set(err, RB_EINVAL, "rb_map_step: a configured sensor group has no readings");
    for (size_t j = 0; j < M->n; j++)
        if (!isfinite(in->s[j]) || !isfinite(in->s_dot[j]))
            return rb_err_set(err, RB_ENUMERIC, "joint %s: position or velocity is not finite", M->m->dof_names[j]);
    M->have_out = false;
    if (!map_build(M, in) && M->floating)
        M->diag.rate_unobserved++;
    bool ok = c->dense ? map_solve_dense(M) : map_solve_sparse(M);
    if (!ok) {
        int b = M->fail_body;
        if (b < 0 && M->fail_g >= 0 && (size_t)M->fail_g < M->ng)
            for (size_t k = 0; k < M->nb; k++)
                if (M->fail_g >= (M->ga[k] >= 0 ? M->ga[k] : M->gf[k]) && M->ga[k] + 0 <= M->fail_g)
                    b = (int)k;
        return rb_err_set(err, RB_ENUMERIC,
                          "the MAP's normal matrix is not positive definite at link %s (a quantity neither a sensor "
                          "nor the prior fixes, or non-finite readings)",
                          b >= 0 ? M->m->bodies[b].name : "?");
    }
    outputs(M);
    M->diag.steps++;
    M->diag.dropped += (long)M->dropped;
    M->have_out = true;
    return RB_OK;
}

void rb_map_get_out(const rb_map *M, rb_map_out *out)
{
    memset(out, 0, sizeof *out);
    out->tau = M->tau, out->tau_std = M->tau_std, out->wrench = M->wrench, out->wrench_std = M->wrench_std;
    out->d = M->d;
    memcpy(out->base_rate, M->w0, sizeof M->w0);
    out->residual = M->have_out ? M->residual : NAN;
    out->rows = M->rows_used, out->dropped = M->dropped;
}

void rb_map_get_diag(const rb_map *M, rb_map_diag *diag) { *diag = M->diag; }

int rb_map_layout_of(const rb_map *M, size_t body, rb_map_layout *out, rb_err *err)
{
    if (!M || !out || body >= M->nb)
        return rb_err_set(err, RB_EINVAL, "rb_map_layout_of: body %zu out of range", body);
    *out = (rb_map_layout){M->ga[body], M->gf[body], M->gtau[body], M->gfx[body], M->gqdd[body]};
    return RB_OK;
}
