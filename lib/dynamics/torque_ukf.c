/* The joint-torque UKF's model (seed 000 eq. 5-8; the public estimator's design, CONVENTIONS.md): the process f
 * (the forward dynamics of the sub-models cut at the FT sensors, rb_cut_dyn), the measurement model h
 * (currents, FT readings, accelerometers, gyroscopes), their batch forms for sigma points, the layout and the start.
 * See roboest/dynamics.h ("the joint-torque UKF's model") for the orders.
 *
 * Cost. q is an input, not a state: the cut system's matrices at q (K, its factors, K^-1 times the maps of
 * the torque, FT, contact and base-acceleration blocks, the frame Jacobians) are computed once per sample; a
 * sigma point then costs a column of one matrix product over all of them (the batch forms: n x the blocks that
 * drive s_ddot, times the sigma points' values of those blocks). Only the velocity-product terms depend on the
 * sigma point, through (s_dot, w_B) alone; the filter order puts those first, so the lower Cholesky factor's
 * columns past them leave the velocities at the mean's: the terms are computed for 2 n_v + 1 distinct velocities
 * per batch (n_v = n, or n + 3 with a floating base's angular velocity) and reused for the other sigma points (keyed
 * on the exact values), all of a batch's in one pass over the bodies (rb_cut_dyn_bias_batch: the same bits as one
 * rb_cut_dyn_bias call each, vectorized across the velocities). The single-state calls keep a two-slot cache. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/dynamics.h"

#include "torque_ukf_internal.h"

/* ---- the model ------------------------------------------------------------------------------------------------- */

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* The matrices at configuration q (once per sample). */
static int configure(rb_tukf *u, const double *q, rb_err *err)
{
    const rb_model *m = u->model;
    size_t n = u->n, na = u->na;
    int rc = rb_cut_dyn_configure(m, u->cd, q, n, err);
    if (rc == RB_OK)
        rc = rb_cut_dyn_factor(u->cd, u->refl, err);
    if (rc)
        return rc;
    rb_cut_dyn_mats mt = rb_cut_dyn_get_mats(u->cd);
    memset(u->As, 0, n * na * sizeof *u->As);
    for (size_t i = 0; i < n; i++) {
        double *row = u->As + i * na;
        if (u->floating)
            for (int k = 0; k < 3; k++)
                row[u->b[B_A].off - u->lo + (size_t)k] = -mt.Kb[i * 6 + (size_t)k];
        row[u->b[B_TM].off - u->lo + i] = 1.0;
        row[u->b[B_TF].off - u->lo + i] = -1.0;
        memcpy(row + u->b[B_FT].off - u->lo, mt.Gft + i * 6 * u->n_ft, 6 * u->n_ft * sizeof *row);
        memcpy(row + u->b[B_C].off - u->lo, mt.Gc + i * 6 * u->nc, 6 * u->nc * sizeof *row);
        double g = 0.0;
        for (int k = 0; k < 6; k++)
            g -= mt.Kb[i * 6 + (size_t)k] * u->aB_fixed[k];
        u->c0[i] = g;
    }
    /* K^-1 once (n columns), then products: cheaper than solving for the na blocks and each velocity's terms */
    memset(u->Kinv, 0, n * n * sizeof *u->Kinv);
    for (size_t i = 0; i < n; i++)
        u->Kinv[i * n + i] = 1.0;
    if ((rc = rb_cut_dyn_solve(u->cd, u->Kinv, n, n, err)))
        return rc;
    for (size_t i = 0; i < n; i++) /* column-major K^-1 for BLAS, and c0 = K^-1 g */
        for (size_t j = 0; j < n; j++)
            u->Kc[i + j * n] = u->Kinv[i * n + j];
    memcpy(u->h, u->c0, n * sizeof *u->h);
    for (size_t i = 0; i < n; i++)
        u->c0[i] = dot(u->Kinv + i * n, u->h, n);
    /* AsT (column-major n x na) = K^-1 blocks, (NoTrans, Trans) only (see the BLAS notes in lib/filters) */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int)n, (int)na, (int)n, 1.0, u->Kc, (int)n, u->As, (int)na,
                0.0, u->AsT, (int)n);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < na; j++)
            u->As[i * na + j] = u->AsT[j * n + i];
    size_t cols = 6 + n;
    for (size_t a = 0; a < u->nacc; a++) {
        if ((rc = rb_cut_dyn_frame_jacobian(m, u->cd, (size_t)u->acc_frame[a], u->J6, err)))
            return rc;
        memcpy(u->Jacc + 3 * a * cols, u->J6, 3 * cols * sizeof *u->J6);
    }
    for (size_t g = 0; g < u->ngyro; g++) {
        if ((rc = rb_cut_dyn_frame_jacobian(m, u->cd, (size_t)u->gyro_frame[g], u->J6, err)))
            return rc;
        memcpy(u->Jgyr + 3 * g * cols, u->J6 + 3 * cols, 3 * cols * sizeof *u->J6);
    }
    u->slot[0].valid = u->slot[1].valid = false;
    u->victim = 0;
    u->phase_first = true;
    return RB_OK;
}

/* The velocity-product terms at x's velocities, from the cache or computed into a slot. */
static int velocity_terms(rb_tukf *u, const double *x, const vel_slot **out, rb_err *err)
{
    size_t n = u->n;
    const double *sd = x + u->b[B_DQ].off, *w = u->floating ? x + u->b[B_W].off : NULL;
    for (int s = 0; s < 2; s++) {
        const vel_slot *sl = &u->slot[s];
        if (sl->valid && memcmp(sl->key, sd, n * sizeof *sd) == 0 &&
            (!w || memcmp(sl->key + n, w, 3 * sizeof *w) == 0)) {
            if (u->phase_first) /* the mean's velocity: every sigma point past the velocity columns has it */
                u->victim = 1 - s, u->phase_first = false;
            *out = sl;
            return RB_OK;
        }
    }
    vel_slot *sl = &u->slot[u->victim];
    if (u->phase_first)
        u->victim = 1 - u->victim, u->phase_first = false;
    sl->valid = false;
    memcpy(sl->key, sd, n * sizeof *sd);
    if (w)
        memcpy(sl->key + n, w, 3 * sizeof *w);
    else
        memset(sl->key + n, 0, 3 * sizeof *sl->key);
    int rc = rb_cut_dyn_bias(u->model, u->cd, sd, n, w, u->h, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        sl->b[i] = u->c0[i] - dot(u->Kinv + i * n, u->h, n);
    for (size_t a = 0; a < u->nacc; a++) {
        double bf[6];
        if ((rc = rb_cut_dyn_frame_bias(u->model, u->cd, (size_t)u->acc_frame[a], bf, err)))
            return rc;
        memcpy(sl->dacc + 3 * a, bf, 3 * sizeof *bf);
    }
    sl->valid = true;
    *out = sl;
    return RB_OK;
}

/* s_ddot (n) of the process model at x (seed 000 eq. 6 per sub-model, solved parents first). */
static int accelerations(rb_tukf *u, const double *x, double *sdd, const vel_slot **vs, rb_err *err)
{
    int rc = velocity_terms(u, x, vs, err);
    if (rc)
        return rc;
    /* AsT holds As column-major (n x na, leading dimension n) */
    memcpy(sdd, (*vs)->b, u->n * sizeof *sdd);
    cblas_dgemv(CblasColMajor, CblasNoTrans, (int)u->n, (int)u->na, 1.0, u->AsT, (int)u->n, x + u->lo, 1, 1.0, sdd, 1);
    return RB_OK;
}

/* Process: dq integrated by explicit Euler with s_ddot(x); tau_F a random walk or the rate model; contacts
 * decaying (or a random walk); every other block a random walk (seed 000 eq. 8). */
static void process_one(const rb_tukf *u, const double *x, const double *sdd, double dt, double *xo)
{
    memcpy(xo, x, u->N * sizeof *xo);
    const double *sd = x + u->b[B_DQ].off;
    double *dq = xo + u->b[B_DQ].off, *tf = xo + u->b[B_TF].off, *c = xo + u->b[B_C].off;
    for (size_t i = 0; i < u->n; i++) {
        dq[i] += dt * sdd[i];
        if (u->rate_model) { /* d/dt (k0 tanh(k1 s_dot) + k2 s_dot) */
            double ch = cosh(u->k1[i] * sd[i]);
            tf[i] += dt * sdd[i] * (u->k2[i] + u->k0[i] * u->k1[i] / (ch * ch));
        }
    }
    if (u->decay > 0.0)
        for (size_t i = 0; i < 6 * u->nc; i++)
            c[i] -= dt * u->decay * x[u->b[B_C].off + i];
}

/* The friction correction's regressors phi (nk) at joint velocity v (rb_tukf_config.corr; the scale term's is 0: its
 * regressor is tau_F, added by correction). */
static void corr_terms(const rb_tukf *u, double v, double *phi)
{
    for (size_t a = 0; a < u->nk; a++)
        switch (u->corr[a]) {
        case RB_TUKF_CORR_COULOMB: phi[a] = tanh(v / u->v_c); break;
        case RB_TUKF_CORR_VISCOUS: phi[a] = v; break;
        case RB_TUKF_CORR_OFFSET: phi[a] = 1.0; break;
        case RB_TUKF_CORR_STRIBECK: phi[a] = tanh(v / u->v_c) * exp(-(v / u->v_s) * (v / u->v_s)); break;
        default: phi[a] = 0.0; break;
        }
}

/* The friction correction of joint i at x: theta_i . phi_i, phi_i the regressors at x's velocity of joint i (the scale
 * term's: tau_F). */
static double correction(const rb_tukf *u, const double *x, size_t i, const double *phi)
{
    double c = 0.0;
    const double *th = x + u->b[B_FC].off + i * u->nk;
    for (size_t a = 0; a < u->nk; a++)
        c += th[a] * (u->corr[a] == RB_TUKF_CORR_SCALE ? x[u->b[B_TF].off + i] : phi[a]);
    return c;
}

/* The regressors of every joint at x into phi (n x nk). A sigma point moves joint i's velocity only along the
 * factor's columns up to i (lower triangular), so most keep the first state's (the mean's) bits: x0, phi0 its
 * velocities and regressors (NULL: none yet), reused then. */
static void corr_all(const rb_tukf *u, const double *x, const double *x0, const double *phi0, double *phi)
{
    const double *v = x + u->b[B_DQ].off, *v0 = x0 ? x0 + u->b[B_DQ].off : NULL;
    for (size_t i = 0; i < u->n; i++) {
        if (v0 && memcmp(&v[i], &v0[i], sizeof *v) == 0)
            memcpy(phi + i * u->nk, phi0 + i * u->nk, u->nk * sizeof *phi);
        else
            corr_terms(u, v[i], phi + i * u->nk);
    }
}

/* Measurements: dq, current tau_m / (k_t R), friction, FT + bias, accelerometers (proper acceleration of the frame
 * from the state's joint accelerations sdd, dacc the velocity terms) + bias, gyroscopes + bias. */
static void measure_one(const rb_tukf *u, const double *x, const double *sdd, const double *dacc, const double *phi,
                        double *z)
{
    size_t n = u->n, cols = 6 + n;
    const double *sd = x + u->b[B_DQ].off, *tm = x + u->b[B_TM].off;
    for (size_t i = 0; i < n; i++) {
        z[u->m_dq + i] = sd[i];
        z[u->m_cur + i] = tm[i] / u->ktR[i];
        if (u->fric_meas)
            z[u->m_fric + i] = x[u->b[B_TF].off + i] - correction(u, x, i, phi + i * u->nk);
    }
    for (size_t i = 0; i < 6 * u->n_ft; i++)
        z[u->m_ft + i] = x[u->b[B_FT].off + i] + (u->b[B_FTB].len ? x[u->b[B_FTB].off + i] : 0.0);
    double aB[6];
    memcpy(aB, u->aB_fixed, sizeof aB);
    if (u->floating)
        memcpy(aB, x + u->b[B_A].off, 3 * sizeof *aB);
    for (size_t r = 0; r < 3 * u->nacc; r++) {
        const double *row = u->Jacc + r * cols;
        double v = dacc[r] + (u->b[B_AB].len ? x[u->b[B_AB].off + r] : 0.0);
        for (int k = 0; k < 6; k++)
            v += row[k] * aB[k];
        for (size_t j = 0; j < n; j++)
            v += row[6 + j] * sdd[j];
        z[u->m_acc + r] = v;
    }
    for (size_t r = 0; r < 3 * u->ngyro; r++) {
        const double *row = u->Jgyr + r * cols;
        double v = u->b[B_GB].len ? x[u->b[B_GB].off + r] : 0.0;
        for (int k = 0; u->floating && k < 3; k++)
            v += row[3 + k] * x[u->b[B_W].off + (size_t)k];
        for (size_t j = 0; j < n; j++)
            v += row[6 + j] * sd[j];
        z[u->m_gyro + r] = v;
    }
}

/* The velocity terms of a chunk of distinct velocities Vd, Wd (cnt columns) into Bd and Dd: one batched pass for all
 * (rb_cut_dyn_bias_batch: the same bits as velocity_terms one by one). */
static int distinct_terms(rb_tukf *u, size_t cnt, bool acc_terms, rb_err *err)
{
    size_t n = u->n, a3 = 3 * u->nacc;
    int rc = rb_cut_dyn_bias_batch(u->model, u->cd, u->Vd, n, u->floating ? u->Wd : NULL, 3, cnt, u->Hd, n, err);
    if (rc)
        return rc;
    for (size_t d = 0; d < cnt; d++)
        for (size_t i = 0; i < n; i++)
            u->Bd[d * n + i] = u->c0[i] - dot(u->Kinv + i * n, u->Hd + d * n, n);
    for (size_t a = 0; acc_terms && a < u->nacc; a++)
        if ((rc = rb_cut_dyn_frame_bias_batch(u->model, u->cd, (size_t)u->acc_frame[a], u->Dd + 3 * a, a3, err)))
            return rc;
    return RB_OK;
}

/* The sigma points (X: N x Ns column-major): s_ddot of each into Sdd (n x Ns) by one matrix product, K^-1 [drivers]
 * times their driving blocks, plus each one's velocity terms (and the accelerometers' into Dacc, 3 n_acc x Ns). The
 * velocity terms are computed once per distinct velocity (a sigma point with the first one's velocity bits reuses
 * its terms; with mean_velocity_terms every one does), batched in chunks of dcap. */
static int batch_accelerations(rb_tukf *u, const double *X, size_t Ns, bool acc_terms, rb_err *err)
{
    size_t n = u->n, N = u->N, na = u->na, a3 = 3 * u->nacc, nd = 0;
    size_t o_dq = u->b[B_DQ].off, o_w = u->b[B_W].off;
    for (size_t j = 0; j < Ns; j++) {
        const double *x = X + j * N;
        if (j > 0 && (u->mean_terms || (memcmp(x + o_dq, X + o_dq, n * sizeof *x) == 0 &&
                                        (!u->floating || memcmp(x + o_w, X + o_w, 3 * sizeof *x) == 0)))) {
            u->dmap[j] = 0;
            continue;
        }
        u->dmap[j] = nd;
        u->dsrc[nd++] = j;
    }
    for (size_t c0 = 0; c0 < nd; c0 += u->dcap) { /* chunks of distinct velocities */
        size_t cnt = nd - c0 < u->dcap ? nd - c0 : u->dcap;
        for (size_t d = 0; d < cnt; d++) {
            const double *x = X + u->dsrc[c0 + d] * N;
            memcpy(u->Vd + d * n, x + o_dq, n * sizeof *x);
            if (u->floating)
                memcpy(u->Wd + 3 * d, x + o_w, 3 * sizeof *x);
        }
        int rc = distinct_terms(u, cnt, acc_terms, err);
        if (rc)
            return rc;
        for (size_t j = 0; j < Ns; j++) {
            size_t d = u->dmap[j];
            if (d < c0 || d >= c0 + cnt)
                continue;
            memcpy(u->Sdd + j * n, u->Bd + (d - c0) * n, n * sizeof *u->Sdd);
            if (acc_terms)
                memcpy(u->Dacc + j * a3, u->Dd + (d - c0) * a3, a3 * sizeof *u->Dacc);
        }
    }
    for (size_t j = 0; j < Ns; j++) {
        const double *x = X + j * N;
        for (size_t k = 0; k < na; k++)
            u->XaT[j + k * Ns] = x[u->lo + k];
    }
    /* (NoTrans, Trans) only: see the BLAS notes in lib/filters (no allocation in OpenBLAS's small kernels) */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int)n, (int)Ns, (int)na, 1.0, u->AsT, (int)n, u->XaT, (int)Ns,
                1.0, u->Sdd, (int)n);
    return RB_OK;
}

static int check_batch(const rb_tukf *u, const double *X, size_t Ns, const double *out, rb_err *err)
{
    if (!u || !X || !out)
        return rb_err_set(err, RB_EINVAL, "torque UKF model: NULL argument");
    if (Ns > 2 * u->N + 1)
        return rb_err_set(err, RB_EDIM, "torque UKF model: %zu states in a batch, at most %zu", Ns, 2 * u->N + 1);
    return RB_OK;
}

int rb_tukf_process_batch(rb_tukf *u, const double *X, size_t Ns, double dt, double *Y, rb_err *err)
{
    int rc = check_batch(u, X, Ns, Y, err);
    if (rc)
        return rc;
    u->phase_first = true;
    rc = batch_accelerations(u, X, Ns, false, err);
    for (size_t j = 0; rc == RB_OK && j < Ns; j++)
        process_one(u, X + j * u->N, u->Sdd + j * u->n, dt, Y + j * u->N);
    return rc;
}

int rb_tukf_measure_batch(rb_tukf *u, const double *X, size_t Ns, double *Z, rb_err *err)
{
    int rc = check_batch(u, X, Ns, Z, err);
    if (rc)
        return rc;
    u->phase_first = true;
    rc = batch_accelerations(u, X, Ns, true, err);
    size_t np = u->n * u->nk;
    for (size_t j = 0; rc == RB_OK && j < Ns; j++) {
        const double *x = X + j * u->N;
        if (np)
            corr_all(u, x, j ? X : NULL, u->phi0, j ? u->phi : u->phi0);
        measure_one(u, x, u->Sdd + j * u->n, u->Dacc + j * 3 * u->nacc, j ? u->phi : u->phi0, Z + j * u->M);
    }
    return rc;
}

static int check_call(const rb_tukf *u, const double *a, const double *b, rb_err *err)
{
    if (!u || !a || !b)
        return rb_err_set(err, RB_EINVAL, "torque UKF model: NULL argument");
    return RB_OK;
}

int rb_tukf_configure(rb_tukf *u, const double *q, rb_err *err)
{
    int rc = check_call(u, q, q, err);
    return rc ? rc : configure(u, q, err);
}

int rb_tukf_process(rb_tukf *u, const double *x, double dt, double *x_out, rb_err *err)
{
    int rc = check_call(u, x, x_out, err);
    if (rc)
        return rc;
    const vel_slot *vs;
    u->phase_first = true;
    rc = accelerations(u, x, u->sdd, &vs, err);
    if (rc == RB_OK)
        process_one(u, x, u->sdd, dt, x_out);
    return rc;
}

int rb_tukf_measure(rb_tukf *u, const double *x, double *z, rb_err *err)
{
    int rc = check_call(u, x, z, err);
    if (rc)
        return rc;
    const vel_slot *vs;
    u->phase_first = true;
    rc = accelerations(u, x, u->sdd, &vs, err);
    if (rc == RB_OK) {
        corr_all(u, x, NULL, NULL, u->phi0);
        measure_one(u, x, u->sdd, vs->dacc, u->phi0, z);
    }
    return rc;
}

int rb_tukf_joint_torques(rb_tukf *u, const double *x, double *tau_j, double *ddq, rb_err *err)
{
    int rc = check_call(u, x, tau_j, err);
    if (rc || (rc = check_call(u, x, ddq, err)))
        return rc;
    size_t n = u->n;
    const vel_slot *vs;
    u->phase_first = true;
    rc = accelerations(u, x, u->sdd, &vs, err);
    if (rc != RB_OK)
        for (size_t i = 0; i < n; i++)
            u->sdd[i] = NAN;
    for (size_t i = 0; i < n; i++) {
        double tm = x[u->b[B_TM].off + i], tf = x[u->b[B_TF].off + i];
        tau_j[i] = tm - tf - u->refl[i] * u->sdd[i];
        ddq[i] = u->sdd[i];
    }
    return rc;
}

/* ---- the structure --------------------------------------------------------------------------------------------- */

size_t rb_tukf_nonlinear(const rb_tukf *u)
{
    for (size_t a = 0; a < u->nk; a++)
        if (u->corr[a] == RB_TUKF_CORR_SCALE)
            return 0;
    return u->b[B_DQ].len + u->b[B_W].len;
}

void rb_tukf_identity(const rb_tukf *u, bool *flags)
{
    for (size_t i = 0; i < u->N; i++)
        flags[i] = i >= u->b[B_DQ].len;
    for (size_t i = 0; u->rate_model && i < u->n; i++)
        flags[u->b[B_TF].off + i] = false;
    for (size_t i = 0; u->decay > 0.0 && i < u->b[B_C].len; i++)
        flags[u->b[B_C].off + i] = false;
}

/* Row entries of the Jacobian being built: value v at filter-order column c (>= l). */
#define PUT(c, v) (u->jcol[nz] = (c)-l, u->jval[nz++] = (v))

int rb_tukf_affine(rb_tukf *u, const double *x, double dt, bool process, const size_t **ptr, const size_t **col,
                   const double **val, rb_err *err)
{
    int rc = check_call(u, x, x, err);
    size_t l = u ? rb_tukf_nonlinear(u) : 0, n = u ? u->n : 0, na = u ? u->na : 0, lo = u ? u->lo : 0, nz = 0;
    if (rc || !ptr || !col || !val || l == 0)
        return rc ? rc : rb_err_set(err, RB_EINVAL, "torque UKF model: no affine structure (NULL or a scale term)");
    const double *sd = x + u->b[B_DQ].off;
    if (process) { /* dq: dt As; tau_F (rate model): I + dt rho(dq) As; contacts: 1 - dt decay; the rest: I */
        for (size_t i = 0; i < u->N; i++) {
            u->jptr[i] = nz;
            size_t e = i - u->b[B_TF].off;
            bool rate = u->rate_model && i >= u->b[B_TF].off && e < n, dq = i < u->b[B_DQ].len;
            double ch = rate ? cosh(u->k1[e] * sd[e]) : 1.0,
                   s = rate ? dt * (u->k2[e] + u->k0[e] * u->k1[e] / (ch * ch)) : dt;
            if (dq || rate)
                for (size_t k = 0; k < na; k++)
                    PUT(lo + k, s * u->As[(dq ? i : e) * na + k] + (lo + k == i ? 1.0 : 0.0));
            else if (i >= u->b[B_C].off && i < u->b[B_C].off + u->b[B_C].len && u->decay > 0.0)
                PUT(i, 1.0 - dt * u->decay);
            else if (i >= l)
                PUT(i, 1.0);
        }
        u->jptr[u->N] = nz;
    } else {
        size_t cols = 6 + n, ftb = u->b[B_FTB].len, ab = u->b[B_AB].len, gb = u->b[B_GB].len;
        for (size_t j = 0; j < u->M; j++) {
            u->jptr[j] = nz;
            if (j >= u->m_cur && j < u->m_fric) { /* tau_m / (k_t R) */
                PUT(u->b[B_TM].off + j - u->m_cur, 1.0 / u->ktR[j - u->m_cur]);
            } else if (j >= u->m_fric && j < u->m_ft) { /* tau_F - theta . phi(dq) */
                size_t i = j - u->m_fric;
                double phi[RB_TUKF_CORR_TERMS];
                corr_terms(u, sd[i], phi);
                PUT(u->b[B_TF].off + i, 1.0);
                for (size_t a = 0; a < u->nk; a++)
                    PUT(u->b[B_FC].off + i * u->nk + a, -phi[a]);
            } else if (j >= u->m_ft && j < u->m_acc) { /* ft + bias */
                PUT(u->b[B_FT].off + j - u->m_ft, 1.0);
                if (ftb)
                    PUT(u->b[B_FTB].off + j - u->m_ft, 1.0);
            } else if (j >= u->m_acc && j < u->m_gyro) { /* J_q As (+ J_B on a_B) + bias */
                size_t r = j - u->m_acc;
                const double *row = u->Jacc + r * cols;
                for (size_t k = 0; k < na; k++) {
                    double v = u->floating && k < 3 ? row[k] : 0.0;
                    for (size_t q = 0; q < n; q++)
                        v += row[6 + q] * u->As[q * na + k];
                    PUT(lo + k, v);
                }
                if (ab)
                    PUT(u->b[B_AB].off + r, 1.0);
            } else if (j >= u->m_gyro && gb) {
                PUT(u->b[B_GB].off + j - u->m_gyro, 1.0);
            }
        }
        u->jptr[u->M] = nz;
    }
    *ptr = u->jptr, *col = u->jcol, *val = u->jval;
    return RB_OK;
}
#undef PUT

/* ---- the start ------------------------------------------------------------------------------------------------ */

static double or0(double v) { return isfinite(v) ? v : 0.0; }

/* The public estimator's start: dq measured, tau_m = k_t R i_m, tau_F 0, contacts 0, biases 0, the base (floating)
 * from base_imu by eq. 7, the FT states the model's prediction for the robot on its contacts with the offset
 * o = f_measured - f_predicted (or the readings themselves with ft_offset off). */
int rb_tukf_initial_state(rb_tukf *u, const rb_tukf_sample *in, double *x, rb_err *err)
{
    if (!u || !in || !x)
        return rb_err_set(err, RB_EINVAL, "torque UKF model: NULL argument");
    const rb_model *m = u->model;
    size_t n = u->n;
    memset(x, 0, u->N * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        x[u->b[B_DQ].off + i] = or0(in->dq[i]);
        x[u->b[B_TM].off + i] = u->ktR[i] * or0(in->current[i]);
    }
    rb_ft_est_input ei;
    memset(&ei, 0, sizeof ei);
    ei.s = in->q, ei.s_dot = x + u->b[B_DQ].off, ei.s_ddot = u->sdd, ei.n = n;
    memset(u->sdd, 0, n * sizeof *u->sdd);
    if (u->floating) {
        const double *aS = in->acc + 3 * u->base_acc, *wS = in->gyro + 3 * u->base_gyro;
        const rb_xform *X = &m->frames[u->base_frame].X_body;
        double wB[3], aB[3], wp[3], wwp[3];
        for (int k = 0; k < 3; k++)
            ei.acc[k] = or0(aS[k]), ei.gyro[k] = or0(wS[k]);
        rb_m3_mul_v(X->R, ei.gyro, wB);
        rb_m3_mul_v(X->R, ei.acc, aB);
        rb_v3_cross(wB, X->p, wp);
        rb_v3_cross(wB, wp, wwp);
        for (int k = 0; k < 3; k++) /* a_B = R_BS a_S - w_B x (w_B x p_BS), w_B = R_BS w_S (eq. 7) */
            x[u->b[B_A].off + (size_t)k] = aB[k] - wwp[k], x[u->b[B_W].off + (size_t)k] = wB[k];
    } else {
        for (int k = 0; k < 3; k++) /* a fixed base's proper acceleration (base = world): -g */
            ei.acc[k] = -m->gravity[k];
    }
    size_t nft6 = 6 * u->n_ft;
    memset(u->offset, 0, nft6 * sizeof *u->offset);
    if (nft6) {
        bool none = m->floating && u->nc == 0;
        memset(u->pred, 0, nft6 * sizeof *u->pred);
        int rc = rb_ft_est_predict_ft(m, u->est_init, &ei, none ? u->h : NULL, u->pred, nft6, NULL, 0, err);
        if (rc)
            return rb_err_prefix(err, rc, "start-up FT prediction: ");
        for (size_t i = 0; i < nft6; i++) {
            double y = in->ft[i];
            if (u->calibrate && isfinite(y))
                u->offset[i] = y - u->pred[i];
            x[u->b[B_FT].off + i] = u->calibrate || !isfinite(y) ? u->pred[i] : y;
        }
    }
    return RB_OK;
}

void rb_tukf_measurement(const rb_tukf *u, const rb_tukf_sample *in, double *z)
{
    size_t n = u->n;
    memcpy(z + u->m_dq, in->dq, n * sizeof *z);
    memcpy(z + u->m_cur, in->current, n * sizeof *z);
    if (u->fric_meas)
        memcpy(z + u->m_fric, in->friction, n * sizeof *z);
    for (size_t i = 0; i < 6 * u->n_ft; i++)
        z[u->m_ft + i] = in->ft[i] - u->offset[i];
    if (u->nacc)
        memcpy(z + u->m_acc, in->acc, 3 * u->nacc * sizeof *z);
    if (u->ngyro)
        memcpy(z + u->m_gyro, in->gyro, 3 * u->ngyro * sizeof *z);
}

/* ---- layout and names ------------------------------------------------------------------------------------------ */

static void lay_out(rb_tukf *u, bool ft_bias, bool acc_bias, bool gyro_bias)
{
    size_t n = u->n, len[N_BLK] = {0};
    len[B_DQ] = len[B_TM] = len[B_TF] = n;
    len[B_W] = len[B_A] = u->floating ? 3 : 0;
    len[B_FT] = 6 * u->n_ft;
    len[B_C] = 6 * u->nc;
    len[B_FTB] = ft_bias ? 6 * u->n_ft : 0;
    len[B_AB] = acc_bias ? 3 * u->nacc : 0;
    len[B_GB] = gyro_bias ? 3 * u->ngyro : 0;
    len[B_FC] = u->nk * n;
    size_t off = 0;
    for (int k = 0; k < N_BLK; k++) {
        u->b[k].off = off, u->b[k].len = len[k];
        off += len[k];
    }
    u->N = off;
    off = 0;
    for (int k = 0; k < N_BLK; k++) {
        u->b[spec_order[k]].spec = off;
        off += len[spec_order[k]];
    }
    u->lo = u->floating ? u->b[B_A].off : u->b[B_TM].off;
    u->na = u->b[B_C].off + u->b[B_C].len - u->lo;
    u->m_dq = 0, u->m_cur = n;
    u->m_fric = 2 * n;
    u->m_ft = u->m_fric + (u->fric_meas ? n : 0);
    u->m_acc = u->m_ft + 6 * u->n_ft;
    u->m_gyro = u->m_acc + 3 * u->nacc;
    u->M = u->m_gyro + 3 * u->ngyro;

    rb_tukf_layout *l = &u->lay;
    l->n_state = u->N, l->n_meas = u->M;
    for (int k = 0; k < RB_TUKF_N_BLOCKS; k++) {
        const block *b = &u->b[spec_order[k]];
        l->x[k] = (rb_tukf_span){b->off, b->len};
        l->pub[k] = (rb_tukf_span){b->spec, b->len};
    }
    l->z[RB_TUKF_Z_DQ] = (rb_tukf_span){u->m_dq, n};
    l->z[RB_TUKF_Z_CURRENT] = (rb_tukf_span){u->m_cur, n};
    l->z[RB_TUKF_Z_FRICTION] = (rb_tukf_span){u->m_fric, u->fric_meas ? n : 0};
    l->z[RB_TUKF_Z_FT] = (rb_tukf_span){u->m_ft, 6 * u->n_ft};
    l->z[RB_TUKF_Z_ACC] = (rb_tukf_span){u->m_acc, 3 * u->nacc};
    l->z[RB_TUKF_Z_GYRO] = (rb_tukf_span){u->m_gyro, 3 * u->ngyro};
}

const rb_tukf_layout *rb_tukf_get_layout(const rb_tukf *u) { return u ? &u->lay : NULL; }

void rb_tukf_to_filter(const rb_tukf *u, const double *xs, double *x)
{
    for (int k = 0; k < N_BLK; k++)
        memcpy(x + u->b[k].off, xs + u->b[k].spec, u->b[k].len * sizeof *x);
}

void rb_tukf_to_published(const rb_tukf *u, const double *x, double *xs)
{
    for (int k = 0; k < N_BLK; k++)
        memcpy(xs + u->b[k].spec, x + u->b[k].off, u->b[k].len * sizeof *x);
}

/* ---- the workspace --------------------------------------------------------------------------------------------- */

void rb_tukf_free(rb_tukf *u)
{
    if (!u)
        return;
    rb_ft_est_free(u->est_init);
    rb_cut_dyn_free(u->cd);
    rb_submodels_free(u->sm);
    rb_free(u->acc_frame);
    rb_free(u->block_mem);
    rb_free(u->jptr);
    rb_free(u->jval);
    rb_free(u->dmap);
    rb_free(u);
}

/* One allocation for every per-sample array. */
static int alloc_arrays(rb_tukf *u, rb_err *err)
{
    size_t n = u->n, cols = 6 + n, nft6 = 6 * u->n_ft;
    size_t count = 5 * n                                                                        /* ktR refl k0 k1 k2 */
                   + 2 * n * u->na + 2 * n * n + n + 3 * (u->nacc + u->ngyro) * cols + 6 * cols /* As Kinv c0 J */
                   + 2 * (n + 3 + n + 3 * u->nacc)                                              /* slots */
                   + 2 * n + 2 * nft6                                                           /* h sdd offset pred */
                   + (2 * u->N + 1) * (u->na + n + 3 * u->nacc)                                 /* XaT Sdd Dacc */
                   + 2 * n * u->nk                                                              /* phi0 phi */
                   + u->dcap * (3 * n + 3 + 3 * u->nacc);                                       /* Vd Wd Hd Bd Dd */
    size_t rows = (u->N > u->M ? u->N : u->M) + 1, cap = (u->N + u->M) * u->na + u->N + u->M * (1 + u->nk);
    u->block_mem = rb_calloc(count, sizeof(double));
    u->jptr = rb_calloc(rows + cap, sizeof(size_t)); /* rb_tukf_affine's rows (at most na + 1 entries each) */
    u->jval = rb_calloc(cap, sizeof(double));
    if (!u->jptr || !u->jval)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    u->jcol = u->jptr + rows;
    u->acc_frame = rb_calloc(u->nacc + u->ngyro + u->nc + 1, sizeof(int));
    if (!u->block_mem || !u->acc_frame)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    u->gyro_frame = u->acc_frame + u->nacc;
    u->contact_frame = u->gyro_frame + u->ngyro;
    double *p = u->block_mem;
#define TAKE(ptr, cnt) (ptr = p, p += (cnt))
    TAKE(u->ktR, n), TAKE(u->refl, n), TAKE(u->k0, n), TAKE(u->k1, n), TAKE(u->k2, n);
    TAKE(u->As, n * u->na), TAKE(u->AsT, n * u->na), TAKE(u->Kinv, n * n), TAKE(u->Kc, n * n), TAKE(u->c0, n),
        TAKE(u->Jacc, 3 * u->nacc * cols);
    TAKE(u->Jgyr, 3 * u->ngyro * cols), TAKE(u->J6, 6 * cols);
    for (int s = 0; s < 2; s++)
        TAKE(u->slot[s].key, n + 3), TAKE(u->slot[s].b, n), TAKE(u->slot[s].dacc, 3 * u->nacc);
    TAKE(u->h, n), TAKE(u->sdd, n), TAKE(u->offset, nft6), TAKE(u->pred, nft6);
    size_t Ns = 2 * u->N + 1;
    TAKE(u->XaT, Ns * u->na), TAKE(u->Sdd, Ns * n), TAKE(u->Dacc, Ns * 3 * u->nacc);
    TAKE(u->phi0, n * u->nk), TAKE(u->phi, n * u->nk);
    TAKE(u->Vd, n * u->dcap), TAKE(u->Wd, 3 * u->dcap), TAKE(u->Hd, n * u->dcap), TAKE(u->Bd, n * u->dcap),
        TAKE(u->Dd, 3 * u->nacc * u->dcap);
#undef TAKE
    if (!(u->dmap = rb_calloc(2 * Ns, sizeof *u->dmap)))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    u->dsrc = u->dmap + Ns;
    return RB_OK;
}

static bool frames_ok(const rb_model *m, const int *f, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (f[i] < 0 || (size_t)f[i] >= m->n_frames)
            return false;
    return true;
}

/* The position of frame f in list[0..count) (count when absent). */
static size_t position(const int *list, size_t count, int f)
{
    size_t i = 0;
    while (i < count && list[i] != f)
        i++;
    return i;
}

static int check_config(const rb_model *m, const rb_tukf_config *c, rb_err *err)
{
    size_t n = m->n_dofs;
    if ((c->n_ft && !c->ft) || (c->n_contacts && !c->contacts) || (c->n_acc && !c->acc) || (c->n_gyro && !c->gyro) ||
        !c->k_t || !c->gear_ratio || (c->friction == RB_TUKF_RATE_MODEL && (!c->k0 || !c->k1 || !c->k2)) ||
        (c->n_corr && !c->corr))
        return rb_err_set(err, RB_EINVAL, "torque UKF model: NULL array in the configuration");
    if (c->n_corr && (!c->friction_meas || c->n_corr > RB_TUKF_CORR_TERMS || !(c->corr_v_c > 0) || !(c->corr_v_s > 0)))
        return rb_err_set(err, RB_EINVAL,
                          "torque UKF model: a friction correction needs friction_meas, at most %d terms and v_c > 0",
                          RB_TUKF_CORR_TERMS);
    for (size_t a = 0; a < c->n_corr; a++)
        if (c->corr[a] < 0 || c->corr[a] >= RB_TUKF_CORR_TERMS)
            return rb_err_set(err, RB_EINVAL, "torque UKF model: friction correction term %d unknown", c->corr[a]);
    for (size_t i = 0; i < c->n_ft; i++)
        if (c->ft[i] < 0 || (size_t)c->ft[i] >= m->n_ft)
            return rb_err_set(err, RB_EINVAL, "torque UKF model: FT sensor index %d out of range", c->ft[i]);
    if (!frames_ok(m, c->contacts, c->n_contacts) || !frames_ok(m, c->acc, c->n_acc) ||
        !frames_ok(m, c->gyro, c->n_gyro))
        return rb_err_set(err, RB_EINVAL, "torque UKF model: frame index out of range");
    for (size_t i = 0; i < n; i++)
        if (c->gear_ratio[i] == 0.0)
            return rb_err_set(err, RB_EINVAL, "torque UKF model: gear ratio %zu is 0", i);
    if (m->floating != (c->base_imu >= 0))
        return rb_err_set(err, RB_EINVAL, "torque UKF model: base_imu is %s for a %s base",
                          m->floating ? "required" : "not used", m->floating ? "floating" : "fixed");
    if (c->base_imu >= 0 &&
        (!frames_ok(m, &c->base_imu, 1) || m->frames[c->base_imu].body != 0 ||
         position(c->acc, c->n_acc, c->base_imu) == c->n_acc || position(c->gyro, c->n_gyro, c->base_imu) == c->n_gyro))
        return rb_err_set(err, RB_EINVAL,
                          "torque UKF model: base_imu must be a frame on the base body listed in acc and gyro");
    return RB_OK;
}

/* The cut system, the sub-models and the start-up FT prediction (made by name). */
static int make_parts(rb_tukf *u, const rb_tukf_config *c, rb_err *err)
{
    const rb_model *m = u->model;
    const char **names = rb_calloc(u->n_ft + u->nc + 1, sizeof *names);
    if (!names)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    const char **fts = names, **cts = names + u->n_ft;
    for (size_t i = 0; i < u->n_ft; i++)
        fts[i] = m->ft[c->ft[i]].name;
    for (size_t i = 0; i < u->nc; i++)
        cts[i] = m->frames[c->contacts[i]].name;
    /* the start-up FT prediction balances the robot on its contacts (a fixed base: on its mounting) */
    const char *mount[1] = {m->bodies[0].name}, *base_imu = c->base_imu >= 0 ? m->frames[c->base_imu].name : NULL;
    bool own = m->floating && u->nc > 0;
    int rc;
    if ((rc = rb_submodels_build(m, fts, u->n_ft, &u->sm, err)) ||
        (rc = rb_cut_dyn_alloc(m, u->sm, cts, u->nc, &u->cd, err)))
        goto done;
    rc = rb_ft_est_alloc(m, u->sm, base_imu, own ? cts : mount, own ? u->nc : (m->floating ? 0 : 1), &u->est_init, err);
done:
    rb_free(names);
    return rc;
}

int rb_tukf_alloc(const rb_model *m, const rb_tukf_config *c, rb_tukf **out, rb_err *err)
{
    if (!m || !c || !out)
        return rb_err_set(err, RB_EINVAL, "torque UKF model: NULL argument");
    *out = NULL;
    int rc = check_config(m, c, err);
    if (rc)
        return rc;
    rb_tukf *u = rb_calloc(1, sizeof *u);
    if (!u)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    u->model = m, u->n = m->n_dofs, u->floating = m->floating;
    u->n_ft = c->n_ft, u->nc = c->n_contacts, u->nacc = c->n_acc, u->ngyro = c->n_gyro;
    u->fric_meas = c->friction_meas;
    u->rate_model = c->friction == RB_TUKF_RATE_MODEL;
    u->calibrate = c->ft_offset;
    u->nk = c->n_corr, u->v_c = c->corr_v_c, u->v_s = c->corr_v_s;
    for (size_t a = 0; a < u->nk; a++)
        u->corr[a] = c->corr[a];
    lay_out(u, c->ft_bias, c->acc_bias, c->gyro_bias);
    u->dcap = 2 * (u->b[B_DQ].len + u->b[B_W].len) + 1; /* a filter's distinct sigma-point velocities */
    if ((rc = alloc_arrays(u, err)))
        goto fail;
    for (size_t i = 0; i < u->n; i++) {
        double r = c->gear_ratio[i];
        u->ktR[i] = c->k_t[i] * r;
        u->refl[i] = r * r * (c->motor_inertia ? c->motor_inertia[i] : 0.0);
        u->k0[i] = c->k0 ? c->k0[i] : 0.0, u->k1[i] = c->k1 ? c->k1[i] : 0.0, u->k2[i] = c->k2 ? c->k2[i] : 0.0;
    }
    u->decay = c->contact_decay;
    u->mean_terms = c->mean_velocity_terms;
    memset(u->aB_fixed, 0, sizeof u->aB_fixed);
    if (!u->floating)
        for (int k = 0; k < 3; k++)
            u->aB_fixed[k] = -m->gravity[k];
    for (size_t i = 0; i < u->nacc; i++)
        u->acc_frame[i] = c->acc[i];
    for (size_t i = 0; i < u->ngyro; i++)
        u->gyro_frame[i] = c->gyro[i];
    for (size_t i = 0; i < u->nc; i++)
        u->contact_frame[i] = c->contacts[i];
    if (c->base_imu >= 0) {
        u->base_frame = c->base_imu;
        u->base_acc = position(c->acc, c->n_acc, c->base_imu);
        u->base_gyro = position(c->gyro, c->n_gyro, c->base_imu);
    }
    if ((rc = make_parts(u, c, err)) || (rc = rb_cut_dyn_reserve_batch(u->cd, u->dcap, err)))
        goto fail;
    *out = u;
    return RB_OK;
fail:
    rb_tukf_free(u);
    return rc;
}
