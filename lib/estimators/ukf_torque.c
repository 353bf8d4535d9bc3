/* ukf_torque: the joint-torque paper's UKF (seed 000 eq. 5-8; the public estimator's design, design notes
 * CONVENTIONS.md): joint torques tau_j = tau_m - tau_F from motor currents, joint velocities, FT sensors, IMUs and
 * (optionally) a friction measurement, with the joint accelerations of the process from the forward dynamics of
 * the sub-models cut at the FT sensors (rb_cut_dyn). See roboest/estimators.h for the model.
 *
 * Cost. q is an input, not a state: the cut system's matrices at q (K, its factors, K^-1 times the maps of
 * the torque, FT, contact and base-acceleration blocks, the frame Jacobians) are computed once per sample; a
 * sigma point then costs a column of one matrix product over all of them (the filter's batch callbacks: n x the
 * blocks that drive s_ddot, times the sigma points' values of those blocks). Only the velocity-product
 * terms depend on the sigma point, through (s_dot, w_B) alone; the internal state order puts those first, so
 * the lower Cholesky factor's columns past them leave the velocities at the mean's: the terms are computed for
 * 2 n_v + 1 distinct velocities per filter phase (n_v = n, or n + 3 with a floating base's angular velocity) and
 * reused for the other sigma points (a cache keyed on the exact values). */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/filters.h"
#include "torque_common.h"

enum { IN_Q, IN_DQ, IN_CURRENT, IN_FT, IN_ACC, IN_GYRO, IN_FRICTION, N_IN };
enum {
    OUT_TAU_J,
    OUT_TAU_M,
    OUT_TAU_F,
    OUT_DQ,
    OUT_FT,
    OUT_CONTACTS,
    OUT_BASE,
    OUT_BIAS,
    OUT_DDQ,
    OUT_VAR,
    OUT_INNOVATION,
    OUT_NIS,
    OUT_ADAPT,
    N_OUT
};

/* State blocks in the filter's (internal) order: the velocities first (see the top comment). The published order
 * (var, rb_ukf_torque_process) is dq, tau_m, tau_f, ft, contacts, base (a_B, w_B), ft_bias, acc_bias, gyro_bias. */
enum { B_DQ, B_W, B_A, B_TM, B_TF, B_FT, B_C, B_FTB, B_AB, B_GB, N_BLK };
static const int spec_order[N_BLK] = {B_DQ, B_TM, B_TF, B_FT, B_C, B_A, B_W, B_FTB, B_AB, B_GB};
static const char *const blk_name[N_BLK] = {"dq",      "base", "base",     "tau_m",   "tau_f",
                                            "ft",      "contact", "ft_bias", "acc_bias", "gyro_bias"};

typedef struct block {
    size_t off, len, spec; /* internal offset, length, offset in the published order */
} block;

/* Velocity-product terms at one velocity (s_dot, w_B): the process's s_ddot offset and the accelerometers'. */
typedef struct vel_slot {
    bool valid;
    double *key;  /* n + 3 */
    double *b;    /* n: s_ddot at zero torques, wrenches and base linear acceleration */
    double *dacc; /* 3 n_acc */
} vel_slot;

typedef struct ukft {
    const rb_model *model;
    rb_submodels *sm;
    rb_cut_dyn *cd;
    rb_ft_est *est_init; /* the start-up FT prediction */
    rb_filter *ukf;
    size_t n, n_ft, nc, nacc, ngyro, N, M;
    bool floating, fric_meas, rate_model, calibrate, started;
    block b[N_BLK];
    size_t m_dq, m_cur, m_fric, m_ft, m_acc, m_gyro;
    size_t lo, na; /* columns lo .. lo + na of the state drive s_ddot (base acc. to contacts) */

    /* parameters */
    double *ktR;  /* n: k_t R (signed), N m/A */
    double *refl; /* n: R^2 J_m, kg m^2 */
    double *k0, *k1, *k2;
    double decay, dt_param;
    int *acc_frame, *gyro_frame, base_frame;
    size_t base_acc, base_gyro; /* base_imu's place in the accelerometer / gyroscope lists */
    double aB_fixed[6];

    /* per configuration */
    double *As, *AsT;    /* K^-1 [blocks driving s_ddot]: n x na row-major, and column-major (BLAS) */
    double *c0;          /* n: s_ddot of the fixed base's gravity */
    double *Jacc, *Jgyr; /* 3 n_acc x (6 + n): linear rows; 3 n_gyro x (6 + n): angular rows */
    double *J6;          /* 6 x (6 + n) scratch */
    vel_slot slot[2];
    int victim;          /* the slot a miss overwrites */
    bool phase_first;    /* the next lookup is a filter phase's first (the mean's velocity): keep its slot */
    double *h, *sdd;     /* n each */
    double *XaT;         /* 2N + 1 x na: the sigma points' driving blocks, transposed */
    double *Sdd, *Dacc;  /* n x (2N + 1), 3 n_acc x (2N + 1): per sigma point */

    /* per sample */
    double *z;           /* M */
    double *offset;      /* 6 n_ft */
    double *pred;        /* 6 n_ft */
    double *x0, *xs;     /* N each: start state, published-order scratch */
    double t_prev;

    /* jump adaptation (adapt_probability > 0; see adapt_to_jump) */
    double adapt_p, adapt_scale;
    bool adapt_tm, adapt_tf, adapt_ft;
    double *ad_limit;           /* n + 1: the gate by degrees of freedom (chi-square quantile at adapt_p) */
    double *ad_x, *ad_P, *ad_S; /* the update's prior x (N) and P (N x N); S (M x M) */
    double *ad_L, *ad_nu;       /* n x n, n: the current block's S and innovation */
    size_t *ad_idx;             /* n: the joints whose current was used */
    double ad_nis, ad_inflation; /* the last sample's current-block NIS and tau_m / tau_F inflation (out adapt) */
    double *ad_mem;

    size_t width[N_OUT];
    tq_strings names[N_OUT], units[N_OUT];
    double *block_mem;
} ukft;

/* ---- the model ------------------------------------------------------------------------------------------------- */

/* The matrices at configuration q (once per sample). */
static int configure(ukft *u, const double *q, rb_err *err)
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
    if ((rc = rb_cut_dyn_solve(u->cd, u->As, na, na, err)) || (rc = rb_cut_dyn_solve(u->cd, u->c0, 1, 1, err)))
        return rc;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < na; j++)
            u->AsT[j * n + i] = u->As[i * na + j];
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
static int velocity_terms(ukft *u, const double *x, const vel_slot **out, rb_err *err)
{
    size_t n = u->n;
    const double *sd = x + u->b[B_DQ].off, *w = u->floating ? x + u->b[B_W].off : NULL;
    for (int s = 0; s < 2; s++) {
        const vel_slot *sl = &u->slot[s];
        if (sl->valid && memcmp(sl->key, sd, n * sizeof *sd) == 0
            && (!w || memcmp(sl->key + n, w, 3 * sizeof *w) == 0)) {
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
        sl->b[i] = -u->h[i];
    if ((rc = rb_cut_dyn_solve(u->cd, sl->b, 1, 1, err)))
        return rc;
    for (size_t i = 0; i < n; i++)
        sl->b[i] += u->c0[i];
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
static int accelerations(ukft *u, const double *x, double *sdd, const vel_slot **vs, rb_err *err)
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
static void process_one(const ukft *u, const double *x, const double *sdd, double dt, double *xo)
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

/* Measurements (published order): dq, current tau_m / (k_t R), friction, FT + bias, accelerometers (proper
 * acceleration of the frame from the state's joint accelerations sdd, dacc the velocity terms) + bias, gyroscopes
 * + bias. */
static void measure_one(const ukft *u, const double *x, const double *sdd, const double *dacc, double *z)
{
    size_t n = u->n, cols = 6 + n;
    const double *sd = x + u->b[B_DQ].off, *tm = x + u->b[B_TM].off;
    for (size_t i = 0; i < n; i++) {
        z[u->m_dq + i] = sd[i];
        z[u->m_cur + i] = tm[i] / u->ktR[i];
        if (u->fric_meas)
            z[u->m_fric + i] = x[u->b[B_TF].off + i];
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

/* One state (the models outside a run). */
static int process(ukft *u, const double *x, double dt, double *xo, rb_err *err)
{
    const vel_slot *vs;
    int rc = accelerations(u, x, u->sdd, &vs, err);
    if (rc == RB_OK)
        process_one(u, x, u->sdd, dt, xo);
    return rc;
}

static int measure(ukft *u, const double *x, double *z, rb_err *err)
{
    const vel_slot *vs;
    int rc = accelerations(u, x, u->sdd, &vs, err);
    if (rc == RB_OK)
        measure_one(u, x, u->sdd, vs->dacc, z);
    return rc;
}

/* The sigma points (X: N x Ns column-major): s_ddot of each into Sdd (n x Ns) by one matrix product, K^-1 [drivers]
 * times their driving blocks, plus each one's velocity terms (and the accelerometers' into Dacc, 3 n_acc x Ns). */
static int batch_accelerations(ukft *u, const double *X, size_t Ns, bool acc_terms, rb_err *err)
{
    size_t n = u->n, N = u->N, na = u->na, a3 = 3 * u->nacc;
    for (size_t j = 0; j < Ns; j++) {
        const double *x = X + j * N;
        const vel_slot *vs;
        int rc = velocity_terms(u, x, &vs, err);
        if (rc)
            return rc;
        memcpy(u->Sdd + j * n, vs->b, n * sizeof *u->Sdd);
        if (acc_terms)
            memcpy(u->Dacc + j * a3, vs->dacc, a3 * sizeof *u->Dacc);
        for (size_t k = 0; k < na; k++)
            u->XaT[j + k * Ns] = x[u->lo + k];
    }
    /* (NoTrans, Trans) only: see the BLAS notes in lib/filters (no allocation in OpenBLAS's small kernels) */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int)n, (int)Ns, (int)na, 1.0, u->AsT, (int)n, u->XaT, (int)Ns,
                1.0, u->Sdd, (int)n);
    return RB_OK;
}

static int process_batch(void *user, const double *X, size_t Ns, const double *in, double dt, double *Y, rb_err *err)
{
    (void)in;
    ukft *u = user;
    int rc = batch_accelerations(u, X, Ns, false, err);
    for (size_t j = 0; rc == RB_OK && j < Ns; j++)
        process_one(u, X + j * u->N, u->Sdd + j * u->n, dt, Y + j * u->N);
    return rc;
}

static int measure_batch(void *user, const double *X, size_t Ns, double *Z, rb_err *err)
{
    ukft *u = user;
    int rc = batch_accelerations(u, X, Ns, true, err);
    for (size_t j = 0; rc == RB_OK && j < Ns; j++)
        measure_one(u, X + j * u->N, u->Sdd + j * u->n, u->Dacc + j * 3 * u->nacc, Z + j * u->M);
    return rc;
}

/* ---- layout --------------------------------------------------------------------------------------------------- */

static void lay_out(ukft *u, bool ft_bias, bool acc_bias, bool gyro_bias)
{
    size_t n = u->n, len[N_BLK] = {0};
    len[B_DQ] = len[B_TM] = len[B_TF] = n;
    len[B_W] = len[B_A] = u->floating ? 3 : 0;
    len[B_FT] = 6 * u->n_ft;
    len[B_C] = 6 * u->nc;
    len[B_FTB] = ft_bias ? 6 * u->n_ft : 0;
    len[B_AB] = acc_bias ? 3 * u->nacc : 0;
    len[B_GB] = gyro_bias ? 3 * u->ngyro : 0;
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
}

/* Published-order x <-> internal order. */
static void to_internal(const ukft *u, const double *xs, double *x)
{
    for (int k = 0; k < N_BLK; k++)
        memcpy(x + u->b[k].off, xs + u->b[k].spec, u->b[k].len * sizeof *x);
}
static void to_published(const ukft *u, const double *x, double *xs)
{
    for (int k = 0; k < N_BLK; k++)
        memcpy(xs + u->b[k].spec, x + u->b[k].off, u->b[k].len * sizeof *x);
}

/* The block and element of internal state index i, for messages. */
static void describe_state(const ukft *u, size_t i, char *buf, size_t size)
{
    const rb_model *m = u->model;
    for (int k = 0; k < N_BLK; k++) {
        const block *b = &u->b[k];
        if (i < b->off || i >= b->off + b->len)
            continue;
        size_t e = i - b->off;
        switch (k) {
        case B_DQ: case B_TM: case B_TF: snprintf(buf, size, "%s (joint %s)", blk_name[k], m->dof_names[e]); return;
        case B_A: snprintf(buf, size, "base (linear acceleration %c)", "xyz"[e]); return;
        case B_W: snprintf(buf, size, "base (angular velocity %c)", "xyz"[e]); return;
        case B_FT: case B_FTB:
            snprintf(buf, size, "%s (%s %s)", blk_name[k], m->ft[u->sm->ft[e / 6]].name, tq_wrench_axes[e % 6]);
            return;
        case B_C: snprintf(buf, size, "contact (%s)", u->names[OUT_CONTACTS].s[e]); return;
        case B_AB: snprintf(buf, size, "acc_bias (%s %c)", m->frames[u->acc_frame[e / 3]].name, "xyz"[e % 3]); return;
        case B_GB: snprintf(buf, size, "gyro_bias (%s %c)", m->frames[u->gyro_frame[e / 3]].name, "xyz"[e % 3]); return;
        }
    }
    snprintf(buf, size, "element %zu", i);
}

/* ---- parameters ----------------------------------------------------------------------------------------------- */

static const rb_param_value *P(const rb_stage_setup *s, const char *key) { return rb_params_get(s->params, key); }

static int find_in_list(const rb_param_value *v, const char *name, size_t *pos)
{
    for (size_t i = 0; i < v->count; i++)
        if (strcmp(v->strings[i], name) == 0) {
            *pos = i;
            return 1;
        }
    return 0;
}

/* The jump adaptation's keys: the others only with adapt_probability; "ft" only with FT sensors. */
static int check_adapt(const rb_stage_setup *st, size_t nft, rb_err *err)
{
    const rb_param_value *blocks = P(st, "adapt_blocks");
    if (!(rb_params_number(st->params, "adapt_probability") > 0)) {
        if (blocks->given || P(st, "adapt_scale")->given)
            return rb_err_set(err, RB_ECONFIG,
                              "adapt_blocks and adapt_scale need adapt_probability (the jump adaptation's gate, in "
                              "(0, 1), e.g. 0.9999)");
        return RB_OK;
    }
    for (size_t i = 0; blocks->given && i < blocks->count; i++)
        if (strcmp(blocks->strings[i], "ft") == 0 && nft == 0)
            return rb_err_set(err, RB_ECONFIG, "adapt_blocks[%zu] \"ft\" needs FT sensors (ft_sensors is empty)", i);
    return RB_OK;
}

/* Names, widths, counts: everything checkable before allocating. */
static int check_setup(const rb_stage_setup *st, rb_err *err)
{
    int rc = tq_need_model(st, err);
    if (rc)
        return rc;
    const rb_model *m = st->model;
    size_t n = m->n_dofs, nft = P(st, "ft_sensors")->count, nc = P(st, "contacts")->count;
    size_t nacc = P(st, "accelerometers")->count, ngyro = P(st, "gyroscopes")->count;
    if ((rc = tq_check_names(st, "ft_sensors", true, err)) || (rc = tq_check_names(st, "contacts", false, err))
        || (rc = tq_check_names(st, "accelerometers", false, err))
        || (rc = tq_check_names(st, "gyroscopes", false, err)))
        return rc;
    const char *base_imu = rb_params_string(st->params, "base_imu");
    if (m->floating && !base_imu)
        return rb_err_set(err, RB_ECONFIG,
                          "a floating base needs base_imu (an IMU frame on the base link, listed in accelerometers "
                          "and gyroscopes)");
    if (!m->floating && base_imu)
        return rb_err_set(err, RB_ECONFIG, "base_imu is for a floating base (model %s has a fixed base)",
                          m->name ? m->name : "");
    if (base_imu) {
        int f;
        size_t pos;
        if ((rc = tq_find_frame(st, "base_imu", SIZE_MAX, base_imu, &f, err)))
            return rc;
        if (m->frames[f].body != 0)
            return rb_err_set(err, RB_ECONFIG, "base_imu %s is not on the base link %s", base_imu,
                              m->bodies[0].name);
        if (!find_in_list(P(st, "accelerometers"), base_imu, &pos) || !find_in_list(P(st, "gyroscopes"), base_imu, &pos))
            return rb_err_set(err, RB_ECONFIG, "base_imu %s must be listed in accelerometers and gyroscopes",
                              base_imu);
    }
    if ((rc = tq_check_port(st, IN_Q, n, "one per model joint", true, err))
        || (rc = tq_check_port(st, IN_DQ, n, "one per model joint", true, err))
        || (rc = tq_check_port(st, IN_CURRENT, n, "one per model joint", true, err))
        || (rc = tq_check_port(st, IN_FT, 6 * nft, "6 per sensor of ft_sensors", false, err))
        || (rc = tq_check_port(st, IN_ACC, 3 * nacc, "3 per frame of accelerometers", false, err))
        || (rc = tq_check_port(st, IN_GYRO, 3 * ngyro, "3 per frame of gyroscopes", false, err)))
        return rc;
    if (st->in[IN_FRICTION].width && (rc = tq_check_port(st, IN_FRICTION, n, "one per model joint", true, err)))
        return rc;
    static const char *const per_joint[] = {"k_t", "gear_ratio", "motor_inertia", "q_dq", "q_tau_m", "q_tau_f",
                                            "p0_dq", "p0_tau_m", "p0_tau_f", "r_dq", "r_current", "r_friction",
                                            "friction_k0", "friction_k1", "friction_k2"};
    for (size_t i = 0; i < sizeof per_joint / sizeof per_joint[0]; i++)
        if ((rc = tq_check_count(st, per_joint[i], 1, n, err)))
            return rc;
    static const char *const per_ft[] = {"q_ft", "p0_ft", "r_ft", "q_ft_bias"};
    for (size_t i = 0; i < sizeof per_ft / sizeof per_ft[0]; i++)
        if ((rc = tq_check_count(st, per_ft[i], 6, nft, err)))
            return rc;
    if ((rc = tq_check_count(st, "q_contact", 6, nc, err)) || (rc = tq_check_count(st, "p0_contact", 6, nc, err))
        || (rc = tq_check_count(st, "q_base_imu", 6, 1, err)) || (rc = tq_check_count(st, "p0_base_imu", 6, 1, err))
        || (rc = tq_check_count(st, "r_acc", 3, nacc, err)) || (rc = tq_check_count(st, "q_acc_bias", 3, nacc, err))
        || (rc = tq_check_count(st, "r_gyro", 3, ngyro, err))
        || (rc = tq_check_count(st, "q_gyro_bias", 3, ngyro, err)))
        return rc;
    const rb_param_value *R = P(st, "gear_ratio");
    for (size_t i = 0; i < R->count; i++)
        if (R->numbers[i] == 0.0)
            return rb_err_set(err, RB_ECONFIG, "gear_ratio[%zu] is 0 (give the signed ratio, e.g. -160)",
                              i);
    const char *fd = rb_params_string(st->params, "friction_dynamics");
    bool rate = fd && strcmp(fd, "rate_model") == 0, given = P(st, "friction_k0")->given || P(st, "friction_k1")->given
                                                              || P(st, "friction_k2")->given;
    if (rate && !given)
        return rb_err_set(err, RB_ECONFIG, "friction_dynamics \"rate_model\" needs friction_k0, k1, k2");
    if (!rate && given)
        return rb_err_set(err, RB_ECONFIG, "friction_k0, k1, k2 need friction_dynamics \"rate_model\"");
    return check_adapt(st, nft, err);
}

/* ---- set-up ----------------------------------------------------------------------------------------------------- */

static void ukft_destroy(void *state)
{
    ukft *u = state;
    if (!u)
        return;
    rb_filter_free(u->ukf);
    rb_ft_est_free(u->est_init);
    rb_cut_dyn_free(u->cd);
    rb_submodels_free(u->sm);
    for (int k = 0; k < N_OUT; k++) {
        tq_strings_free(&u->names[k]);
        tq_strings_free(&u->units[k]);
    }
    rb_free(u->acc_frame);
    rb_free(u->block_mem);
    rb_free(u->ad_mem);
    rb_free(u->ad_idx);
    rb_free(u);
}

/* One allocation for every per-sample array. */
static int alloc_arrays(ukft *u, rb_err *err)
{
    size_t n = u->n, cols = 6 + n, nft6 = 6 * u->n_ft;
    size_t count = 5 * n                                 /* ktR refl k0 k1 k2 */
                   + 2 * n * u->na + n + 3 * (u->nacc + u->ngyro) * cols + 6 * cols /* As c0 Jacc Jgyr J6 */
                   + 2 * (n + 3 + n + 3 * u->nacc)        /* slots */
                   + 2 * n + u->M + 2 * nft6 + 2 * u->N  /* h sdd z offset pred x0 xs */
                   + (2 * u->N + 1) * (u->na + n + 3 * u->nacc); /* XaT Sdd Dacc */
    u->block_mem = rb_calloc(count, sizeof(double));
    u->acc_frame = rb_calloc(u->nacc + u->ngyro + 1, sizeof(int));
    if (!u->block_mem || !u->acc_frame)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    u->gyro_frame = u->acc_frame + u->nacc;
    double *p = u->block_mem;
#define TAKE(ptr, cnt) (ptr = p, p += (cnt))
    TAKE(u->ktR, n), TAKE(u->refl, n), TAKE(u->k0, n), TAKE(u->k1, n), TAKE(u->k2, n);
    TAKE(u->As, n * u->na), TAKE(u->AsT, n * u->na), TAKE(u->c0, n), TAKE(u->Jacc, 3 * u->nacc * cols), TAKE(u->Jgyr, 3 * u->ngyro * cols);
    TAKE(u->J6, 6 * cols);
    for (int s = 0; s < 2; s++)
        TAKE(u->slot[s].key, n + 3), TAKE(u->slot[s].b, n), TAKE(u->slot[s].dacc, 3 * u->nacc);
    TAKE(u->h, n), TAKE(u->sdd, n), TAKE(u->z, u->M), TAKE(u->offset, nft6), TAKE(u->pred, nft6);
    TAKE(u->x0, u->N), TAKE(u->xs, u->N);
    size_t Ns = 2 * u->N + 1;
    TAKE(u->XaT, Ns * u->na), TAKE(u->Sdd, Ns * n), TAKE(u->Dacc, Ns * 3 * u->nacc);
#undef TAKE
    return RB_OK;
}

/* The jump adaptation's settings, workspace and gates (dof 1..n); nothing when it is off. */
static int setup_adapt(ukft *u, const rb_stage_setup *st, rb_err *err)
{
    u->adapt_p = rb_params_number(st->params, "adapt_probability");
    if (!(u->adapt_p > 0))
        return RB_OK;
    u->adapt_scale = rb_params_number(st->params, "adapt_scale");
    const rb_param_value *blocks = P(st, "adapt_blocks");
    for (size_t i = 0; i < blocks->count; i++) {
        const char *b = blocks->strings[i];
        u->adapt_tm |= strcmp(b, "tau_m") == 0, u->adapt_tf |= strcmp(b, "tau_f") == 0;
        u->adapt_ft |= strcmp(b, "ft") == 0;
    }
    size_t n = u->n, N = u->N, M = u->M;
    u->ad_mem = rb_calloc((n + 1) + N + N * N + M * M + n * n + n, sizeof(double));
    u->ad_idx = rb_calloc(n + 1, sizeof(size_t));
    if (!u->ad_mem || !u->ad_idx)
        return rb_err_set(err, RB_ENOMEM, "out of memory (jump adaptation)");
    u->ad_limit = u->ad_mem, u->ad_x = u->ad_limit + n + 1, u->ad_P = u->ad_x + N, u->ad_S = u->ad_P + N * N;
    u->ad_L = u->ad_S + M * M, u->ad_nu = u->ad_L + n * n;
    for (size_t k = 1; k <= n; k++) {
        int rc = rb_chi2_quantile(u->adapt_p, (double)k, &u->ad_limit[k], err);
        if (rc)
            return rb_err_prefix(err, rc, "adapt_probability: ");
    }
    return RB_OK;
}

static void read_params(ukft *u, const rb_stage_setup *st)
{
    const rb_params *p = st->params;
    const rb_param_value *kt = P(st, "k_t"), *R = P(st, "gear_ratio"), *Jm = P(st, "motor_inertia");
    const rb_param_value *k0 = P(st, "friction_k0"), *k1 = P(st, "friction_k1"), *k2 = P(st, "friction_k2");
    for (size_t i = 0; i < u->n; i++) {
        double r = tq_value(R, 1, i, 0);
        u->ktR[i] = tq_value(kt, 1, i, 0) * r;
        u->refl[i] = r * r * tq_value(Jm, 1, i, 0);
        u->k0[i] = tq_value(k0, 1, i, 0), u->k1[i] = tq_value(k1, 1, i, 0), u->k2[i] = tq_value(k2, 1, i, 0);
    }
    u->decay = rb_params_number(p, "contact_decay");
    u->dt_param = rb_params_number(p, "dt");
    memset(u->aB_fixed, 0, sizeof u->aB_fixed);
    if (!u->floating)
        tq_fixed_base_acc(u->model, u->aB_fixed);
}

/* The diagonal of P0, Q and R (published parameters into the internal order). */
static void noise_diagonals(const ukft *u, const rb_stage_setup *st, double *p0, double *q, double *r)
{
    size_t n = u->n;
    for (size_t i = 0; i < n; i++) {
        q[u->b[B_DQ].off + i] = tq_value(P(st, "q_dq"), 1, i, 0);
        q[u->b[B_TM].off + i] = tq_value(P(st, "q_tau_m"), 1, i, 0);
        q[u->b[B_TF].off + i] = tq_value(P(st, "q_tau_f"), 1, i, 0);
        p0[u->b[B_DQ].off + i] = tq_value(P(st, "p0_dq"), 1, i, 0);
        p0[u->b[B_TM].off + i] = tq_value(P(st, "p0_tau_m"), 1, i, 0);
        p0[u->b[B_TF].off + i] = tq_value(P(st, "p0_tau_f"), 1, i, 0);
        r[u->m_dq + i] = tq_value(P(st, "r_dq"), 1, i, 0);
        r[u->m_cur + i] = tq_value(P(st, "r_current"), 1, i, 0);
        if (u->fric_meas)
            r[u->m_fric + i] = tq_value(P(st, "r_friction"), 1, i, 0);
    }
    for (size_t i = 0; i < 6 * u->n_ft; i++) {
        q[u->b[B_FT].off + i] = tq_value(P(st, "q_ft"), 6, i / 6, i % 6);
        p0[u->b[B_FT].off + i] = tq_value(P(st, "p0_ft"), 6, i / 6, i % 6);
        r[u->m_ft + i] = tq_value(P(st, "r_ft"), 6, i / 6, i % 6);
        if (u->b[B_FTB].len) {
            q[u->b[B_FTB].off + i] = tq_value(P(st, "q_ft_bias"), 6, i / 6, i % 6);
            p0[u->b[B_FTB].off + i] = P(st, "p0_bias")->numbers[0];
        }
    }
    for (size_t i = 0; i < 6 * u->nc; i++) {
        q[u->b[B_C].off + i] = tq_value(P(st, "q_contact"), 6, i / 6, i % 6);
        p0[u->b[B_C].off + i] = tq_value(P(st, "p0_contact"), 6, i / 6, i % 6);
    }
    for (size_t k = 0; u->floating && k < 3; k++) { /* q_base_imu, p0_base_imu: [a_B (3), w_B (3)] */
        q[u->b[B_A].off + k] = tq_value(P(st, "q_base_imu"), 6, 0, k);
        q[u->b[B_W].off + k] = tq_value(P(st, "q_base_imu"), 6, 0, 3 + k);
        p0[u->b[B_A].off + k] = tq_value(P(st, "p0_base_imu"), 6, 0, k);
        p0[u->b[B_W].off + k] = tq_value(P(st, "p0_base_imu"), 6, 0, 3 + k);
    }
    for (size_t i = 0; i < 3 * u->nacc; i++) {
        r[u->m_acc + i] = tq_value(P(st, "r_acc"), 3, i / 3, i % 3);
        if (u->b[B_AB].len) {
            q[u->b[B_AB].off + i] = tq_value(P(st, "q_acc_bias"), 3, i / 3, i % 3);
            p0[u->b[B_AB].off + i] = P(st, "p0_bias")->numbers[0];
        }
    }
    for (size_t i = 0; i < 3 * u->ngyro; i++) {
        r[u->m_gyro + i] = tq_value(P(st, "r_gyro"), 3, i / 3, i % 3);
        if (u->b[B_GB].len) {
            q[u->b[B_GB].off + i] = tq_value(P(st, "q_gyro_bias"), 3, i / 3, i % 3);
            p0[u->b[B_GB].off + i] = P(st, "p0_bias")->numbers[0];
        }
    }
}

static int make_filter(ukft *u, const rb_stage_setup *st, rb_err *err)
{
    size_t N = u->N, M = u->M;
    double *P0 = rb_calloc(N * N + N * N + M * M + 2 * N + M, sizeof(double));
    if (!P0)
        return rb_err_set(err, RB_ENOMEM, "out of memory (%zu-state filter)", N);
    double *Q = P0 + N * N, *R = Q + N * N, *p0 = R + M * M, *q = p0 + N, *r = q + N;
    noise_diagonals(u, st, p0, q, r);
    for (size_t i = 0; i < N; i++)
        P0[i * N + i] = p0[i], Q[i * N + i] = q[i];
    for (size_t i = 0; i < M; i++)
        R[i * M + i] = r[i];
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = N, o.m = M, o.P0 = P0, o.Q = Q, o.R = R;
    o.f_batch = process_batch, o.h_batch = measure_batch, o.user = u;
    o.alpha = rb_params_number(st->params, "alpha");
    o.beta = rb_params_number(st->params, "beta");
    o.kappa = rb_params_number(st->params, "kappa");
    int rc = rb_ukf_create(&o, &u->ukf, err);
    rb_free(P0);
    return rc;
}

static const char *joint_unit(const rb_model *m, size_t i, int kind)
{
    bool prism = m->bodies[m->dof_body[i]].type == RB_JOINT_PRISMATIC;
    switch (kind) {
    case 0: return prism ? "N" : "N m";
    case 1: return prism ? "m/s" : "rad/s";
    default: return prism ? "m/s^2" : "rad/s^2";
    }
}

/* Element names and units of the outputs. */
static int make_strings(ukft *u, const rb_stage_setup *st, rb_err *err)
{
    const rb_model *m = u->model;
    const rb_param_value *fts = P(st, "ft_sensors"), *cts = P(st, "contacts"), *acc = P(st, "accelerometers"),
                         *gyr = P(st, "gyroscopes");
    size_t n = u->n, w[N_OUT] = {0};
    w[OUT_TAU_J] = w[OUT_TAU_M] = w[OUT_TAU_F] = w[OUT_DQ] = w[OUT_DDQ] = n;
    w[OUT_FT] = 6 * u->n_ft, w[OUT_CONTACTS] = 6 * u->nc, w[OUT_BASE] = u->floating ? 6 : 0;
    w[OUT_BIAS] = u->b[B_FTB].len + u->b[B_AB].len + u->b[B_GB].len;
    w[OUT_VAR] = u->N, w[OUT_INNOVATION] = u->M, w[OUT_NIS] = 1, w[OUT_ADAPT] = u->adapt_p > 0 ? 2 : 0;
    int rc = RB_OK;
    for (int k = 0; !rc && k < N_OUT; k++) {
        rc = tq_strings_alloc(&u->names[k], w[k], err);
        rc = rc ? rc : tq_strings_alloc(&u->units[k], w[k], err);
    }
    tq_strings *N_ = u->names, *U = u->units;
    for (size_t i = 0; !rc && i < n; i++) {
        static const int jo[] = {OUT_TAU_J, OUT_TAU_M, OUT_TAU_F, OUT_DQ, OUT_DDQ};
        for (int k = 0; !rc && k < 5; k++) {
            int kind = jo[k] == OUT_DQ ? 1 : jo[k] == OUT_DDQ ? 2 : 0;
            rc = tq_strings_set(&N_[jo[k]], i, err, "%s", m->dof_names[i]);
            rc = rc ? rc : tq_strings_set(&U[jo[k]], i, err, "%s", joint_unit(m, i, kind));
        }
    }
    for (size_t i = 0; !rc && i < 6 * u->n_ft; i++) {
        rc = tq_strings_set(&N_[OUT_FT], i, err, "%s/%s", fts->strings[i / 6], tq_wrench_axes[i % 6]);
        rc = rc ? rc : tq_strings_set(&U[OUT_FT], i, err, "%s", tq_wrench_units[i % 6]);
    }
    for (size_t i = 0; !rc && i < 6 * u->nc; i++) {
        rc = tq_strings_set(&N_[OUT_CONTACTS], i, err, "%s/%s", cts->strings[i / 6], tq_wrench_axes[i % 6]);
        rc = rc ? rc : tq_strings_set(&U[OUT_CONTACTS], i, err, "%s", tq_wrench_units[i % 6]);
    }
    static const char *const base_names[6] = {"a_x", "a_y", "a_z", "w_x", "w_y", "w_z"};
    for (size_t i = 0; !rc && i < w[OUT_BASE]; i++) {
        rc = tq_strings_set(&N_[OUT_BASE], i, err, "%s", base_names[i]);
        rc = rc ? rc : tq_strings_set(&U[OUT_BASE], i, err, "%s", i < 3 ? "m/s^2" : "rad/s");
    }
    /* biases, var and innovation: "<block>/<element>" */
    size_t bi = 0;
    for (size_t i = 0; !rc && i < u->b[B_FTB].len; i++, bi++) {
        rc = tq_strings_set(&N_[OUT_BIAS], bi, err, "ft_bias/%s/%s", fts->strings[i / 6], tq_wrench_axes[i % 6]);
        rc = rc ? rc : tq_strings_set(&U[OUT_BIAS], bi, err, "%s", tq_wrench_units[i % 6]);
    }
    for (size_t i = 0; !rc && i < u->b[B_AB].len; i++, bi++) {
        rc = tq_strings_set(&N_[OUT_BIAS], bi, err, "acc_bias/%s/%c", acc->strings[i / 3], "xyz"[i % 3]);
        rc = rc ? rc : tq_strings_set(&U[OUT_BIAS], bi, err, "m/s^2");
    }
    for (size_t i = 0; !rc && i < u->b[B_GB].len; i++, bi++) {
        rc = tq_strings_set(&N_[OUT_BIAS], bi, err, "gyro_bias/%s/%c", gyr->strings[i / 3], "xyz"[i % 3]);
        rc = rc ? rc : tq_strings_set(&U[OUT_BIAS], bi, err, "rad/s");
    }
    /* var: published order; names from the value outputs */
    size_t vi = 0;
    struct { const char *prefix; int out; size_t from, len; const char *unit2; } vb[] = {
        {"dq", OUT_DQ, 0, n, NULL},        {"tau_m", OUT_TAU_M, 0, n, NULL}, {"tau_f", OUT_TAU_F, 0, n, NULL},
        {"ft", OUT_FT, 0, 6 * u->n_ft, NULL}, {"contact", OUT_CONTACTS, 0, 6 * u->nc, NULL},
        {"base", OUT_BASE, 0, w[OUT_BASE], NULL}, {NULL, OUT_BIAS, 0, w[OUT_BIAS], NULL}};
    for (size_t b = 0; !rc && b < sizeof vb / sizeof vb[0]; b++)
        for (size_t i = 0; !rc && i < vb[b].len; i++, vi++) {
            const char *nm = N_[vb[b].out].s[i], *un = U[vb[b].out].s[i];
            rc = vb[b].prefix ? tq_strings_set(&N_[OUT_VAR], vi, err, "%s/%s", vb[b].prefix, nm)
                              : tq_strings_set(&N_[OUT_VAR], vi, err, "%s", nm);
            rc = rc ? rc : tq_strings_set(&U[OUT_VAR], vi, err, strchr(un, ' ') || strchr(un, '/') ? "(%s)^2" : "%s^2",
                                          un);
        }
    for (size_t i = 0; !rc && i < n; i++) {
        rc = tq_strings_set(&N_[OUT_INNOVATION], u->m_dq + i, err, "dq/%s", m->dof_names[i]);
        rc = rc ? rc : tq_strings_set(&U[OUT_INNOVATION], u->m_dq + i, err, "%s", joint_unit(m, i, 1));
        rc = rc ? rc : tq_strings_set(&N_[OUT_INNOVATION], u->m_cur + i, err, "current/%s", m->dof_names[i]);
        rc = rc ? rc : tq_strings_set(&U[OUT_INNOVATION], u->m_cur + i, err, "A");
        if (!rc && u->fric_meas) {
            rc = tq_strings_set(&N_[OUT_INNOVATION], u->m_fric + i, err, "friction/%s", m->dof_names[i]);
            rc = rc ? rc : tq_strings_set(&U[OUT_INNOVATION], u->m_fric + i, err, "%s", joint_unit(m, i, 0));
        }
    }
    for (size_t i = 0; !rc && i < 6 * u->n_ft; i++) {
        rc = tq_strings_set(&N_[OUT_INNOVATION], u->m_ft + i, err, "ft/%s", N_[OUT_FT].s[i]);
        rc = rc ? rc : tq_strings_set(&U[OUT_INNOVATION], u->m_ft + i, err, "%s", tq_wrench_units[i % 6]);
    }
    for (size_t i = 0; !rc && i < 3 * u->nacc; i++) {
        rc = tq_strings_set(&N_[OUT_INNOVATION], u->m_acc + i, err, "acc/%s/%c", acc->strings[i / 3], "xyz"[i % 3]);
        rc = rc ? rc : tq_strings_set(&U[OUT_INNOVATION], u->m_acc + i, err, "m/s^2");
    }
    for (size_t i = 0; !rc && i < 3 * u->ngyro; i++) {
        rc = tq_strings_set(&N_[OUT_INNOVATION], u->m_gyro + i, err, "gyro/%s/%c", gyr->strings[i / 3], "xyz"[i % 3]);
        rc = rc ? rc : tq_strings_set(&U[OUT_INNOVATION], u->m_gyro + i, err, "rad/s");
    }
    rc = rc ? rc : tq_strings_set(&N_[OUT_NIS], 0, err, "nis");
    rc = rc ? rc : tq_strings_set(&U[OUT_NIS], 0, err, "1");
    if (w[OUT_ADAPT]) {
        rc = rc ? rc : tq_strings_set(&N_[OUT_ADAPT], 0, err, "nis_current");
        rc = rc ? rc : tq_strings_set(&U[OUT_ADAPT], 0, err, "1");
        rc = rc ? rc : tq_strings_set(&N_[OUT_ADAPT], 1, err, "inflation");
        rc = rc ? rc : tq_strings_set(&U[OUT_ADAPT], 1, err, "(N m)^2");
    }
    memcpy(u->width, w, sizeof w);
    for (int k = 0; !rc && k < N_OUT; k++)
        st->out[k] = (rb_port){w[k], (const char *const *)N_[k].s, (const char *const *)U[k].s};
    return rc;
}

static int ukft_create(const rb_stage_setup *st, void **state, rb_err *err)
{
    int rc = check_setup(st, err);
    if (rc)
        return rc;
    const rb_model *m = st->model;
    const rb_param_value *fts = P(st, "ft_sensors"), *cts = P(st, "contacts"), *acc = P(st, "accelerometers"),
                         *gyr = P(st, "gyroscopes");
    ukft *u = rb_calloc(1, sizeof *u);
    if (!u)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    u->model = m, u->n = m->n_dofs, u->floating = m->floating;
    u->n_ft = fts->count, u->nc = cts->count, u->nacc = acc->count, u->ngyro = gyr->count;
    u->fric_meas = st->in[IN_FRICTION].width > 0;
    const char *fd = rb_params_string(st->params, "friction_dynamics"), *off = rb_params_string(st->params, "ft_offset");
    u->rate_model = fd && strcmp(fd, "rate_model") == 0;
    u->calibrate = off && strcmp(off, "first_sample") == 0;
    lay_out(u, rb_params_boolean(st->params, "ft_bias"), rb_params_boolean(st->params, "acc_bias"),
            rb_params_boolean(st->params, "gyro_bias"));
    if ((rc = alloc_arrays(u, err)))
        goto fail;
    read_params(u, st);
    for (size_t i = 0; i < u->nacc; i++)
        u->acc_frame[i] = (int)rb_model_frame_index(m, acc->strings[i]);
    for (size_t i = 0; i < u->ngyro; i++)
        u->gyro_frame[i] = (int)rb_model_frame_index(m, gyr->strings[i]);
    const char *base_imu = rb_params_string(st->params, "base_imu");
    if (base_imu) {
        u->base_frame = (int)rb_model_frame_index(m, base_imu);
        find_in_list(acc, base_imu, &u->base_acc);
        find_in_list(gyr, base_imu, &u->base_gyro);
    }
    /* the start-up FT prediction balances the robot on its contacts (a fixed base: on its mounting) */
    const char *mount[1] = {m->bodies[0].name};
    bool own = m->floating && u->nc > 0;
    if ((rc = rb_submodels_build(m, (const char *const *)fts->strings, u->n_ft, &u->sm, err))
        || (rc = rb_cut_dyn_alloc(m, u->sm, (const char *const *)cts->strings, u->nc, &u->cd, err))
        || (rc = rb_ft_est_alloc(m, u->sm, base_imu, own ? (const char *const *)cts->strings : mount,
                                 own ? u->nc : (m->floating ? 0 : 1), &u->est_init, err))
        || (rc = make_filter(u, st, err)) || (rc = setup_adapt(u, st, err)) || (rc = make_strings(u, st, err)))
        goto fail;
    *state = u;
    return RB_OK;
fail:
    ukft_destroy(u);
    return rc;
}

/* ---- per sample -------------------------------------------------------------------------------------------------- */

/* The measurement vector of a sample (NaN: missing). */
static void gather_z(ukft *u, const double *const *in)
{
    size_t n = u->n;
    memcpy(u->z + u->m_dq, in[IN_DQ], n * sizeof *u->z);
    memcpy(u->z + u->m_cur, in[IN_CURRENT], n * sizeof *u->z);
    if (u->fric_meas)
        memcpy(u->z + u->m_fric, in[IN_FRICTION], n * sizeof *u->z);
    for (size_t i = 0; i < 6 * u->n_ft; i++)
        u->z[u->m_ft + i] = in[IN_FT][i] - u->offset[i];
    memcpy(u->z + u->m_acc, in[IN_ACC], 3 * u->nacc * sizeof *u->z);
    memcpy(u->z + u->m_gyro, in[IN_GYRO], 3 * u->ngyro * sizeof *u->z);
}

static double or0(double v) { return isfinite(v) ? v : 0.0; }

/* The public estimator's start: dq measured, tau_m = k_t R i_m, tau_F 0, contacts 0, biases 0, the base (floating)
 * from base_imu by eq. 7, the FT states the model's prediction for the robot on its contacts with the offset
 * o = f_measured - f_predicted (or the readings themselves with ft_offset "none"). */
static int initial_state(ukft *u, const double *const *in, rb_err *err)
{
    const rb_model *m = u->model;
    size_t n = u->n;
    double *x = u->x0;
    memset(x, 0, u->N * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        x[u->b[B_DQ].off + i] = or0(in[IN_DQ][i]);
        x[u->b[B_TM].off + i] = u->ktR[i] * or0(in[IN_CURRENT][i]);
    }
    rb_ft_est_input ei;
    memset(&ei, 0, sizeof ei);
    ei.s = in[IN_Q], ei.s_dot = x + u->b[B_DQ].off, ei.s_ddot = u->sdd, ei.n = n;
    memset(u->sdd, 0, n * sizeof *u->sdd);
    if (u->floating) {
        const double *aS = in[IN_ACC] + 3 * u->base_acc, *wS = in[IN_GYRO] + 3 * u->base_gyro;
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
        tq_fixed_base_acc(m, ei.acc);
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
            double y = in[IN_FT][i];
            if (u->calibrate && isfinite(y))
                u->offset[i] = y - u->pred[i];
            x[u->b[B_FT].off + i] = u->calibrate || !isfinite(y) ? u->pred[i] : y;
        }
    }
    return rb_filter_set_state(u->ukf, x, NULL, err);
}

/* Name the block of the state or measurement a numeric failure of the filter is at. */
static int name_failure(ukft *u, int rc, rb_err *err)
{
    if (rc != RB_ENUMERIC)
        return rc;
    size_t idx;
    char what[160];
    switch (rb_filter_last_failure(u->ukf, &idx)) {
    case RB_FILTER_FAIL_P:
        describe_state(u, idx, what, sizeof what);
        return rb_err_prefix(err, rc, "the state covariance lost positive definiteness at block %s: ", what);
    case RB_FILTER_FAIL_X:
        describe_state(u, idx, what, sizeof what);
        return rb_err_prefix(err, rc, "the state is not finite at block %s: ", what);
    case RB_FILTER_FAIL_S:
        return rb_err_prefix(err, rc, "the innovation covariance lost positive definiteness at measurement %s: ",
                             u->names[OUT_INNOVATION].s[idx]);
    case RB_FILTER_FAIL_Z:
        return rb_err_prefix(err, rc, "the predicted measurement %s is not finite: ", u->names[OUT_INNOVATION].s[idx]);
    default: return rc;
    }
}

static void write_outputs(ukft *u, double *const *out)
{
    const double *x = rb_filter_x(u->ukf);
    size_t n = u->n;
    rb_filter_diag d;
    rb_filter_get_diag(u->ukf, &d);
    const vel_slot *vs;
    rb_err scratch;
    if (accelerations(u, x, u->sdd, &vs, &scratch) != RB_OK)
        for (size_t i = 0; i < n; i++)
            u->sdd[i] = NAN;
    for (size_t i = 0; i < n; i++) {
        double tm = x[u->b[B_TM].off + i], tf = x[u->b[B_TF].off + i];
        out[OUT_TAU_J][i] = tm - tf - u->refl[i] * u->sdd[i];
        out[OUT_TAU_M][i] = tm, out[OUT_TAU_F][i] = tf;
        out[OUT_DQ][i] = x[u->b[B_DQ].off + i];
        out[OUT_DDQ][i] = u->sdd[i];
    }
    memcpy(out[OUT_FT], x + u->b[B_FT].off, 6 * u->n_ft * sizeof(double));
    memcpy(out[OUT_CONTACTS], x + u->b[B_C].off, 6 * u->nc * sizeof(double));
    if (u->floating) {
        memcpy(out[OUT_BASE], x + u->b[B_A].off, 3 * sizeof(double));
        memcpy(out[OUT_BASE] + 3, x + u->b[B_W].off, 3 * sizeof(double));
    }
    double *bias = out[OUT_BIAS];
    memcpy(bias, x + u->b[B_FTB].off, u->b[B_FTB].len * sizeof(double));
    memcpy(bias + u->b[B_FTB].len, x + u->b[B_AB].off, u->b[B_AB].len * sizeof(double));
    memcpy(bias + u->b[B_FTB].len + u->b[B_AB].len, x + u->b[B_GB].off, u->b[B_GB].len * sizeof(double));
    to_published(u, d.P_diag, out[OUT_VAR]);
    memcpy(out[OUT_INNOVATION], d.innovation, u->M * sizeof(double));
    out[OUT_NIS][0] = d.nis;
    if (u->width[OUT_ADAPT])
        out[OUT_ADAPT][0] = u->ad_nis, out[OUT_ADAPT][1] = u->ad_inflation;
}

/* NIS of the motor currents' block of the last update (the joints whose current was used, into ad_idx / ad_nu;
 * *k of them): nu_c^T S_cc^-1 nu_c by a Cholesky factor of S_cc (n x n at most). NaN when S_cc is not positive
 * definite (cannot happen after an update that succeeded; no adaptation then). */
static double current_nis(ukft *u, const rb_filter_diag *d, size_t *k)
{
    size_t M = u->M, c = 0;
    for (size_t i = 0; i < u->n; i++) {
        size_t j = u->m_cur + i;
        if (d->status[j] == RB_MEAS_USED)
            u->ad_idx[c] = i, u->ad_nu[c++] = d->innovation[j];
    }
    *k = c;
    double *L = u->ad_L, nis = 0.0;
    for (size_t a = 0; a < c; a++) {
        for (size_t b = 0; b <= a; b++) {
            double v = u->ad_S[(u->m_cur + u->ad_idx[a]) * M + u->m_cur + u->ad_idx[b]];
            for (size_t e = 0; e < b; e++)
                v -= L[a * c + e] * L[b * c + e];
            if (a == b) {
                if (!(v > 0))
                    return NAN;
                L[a * c + a] = sqrt(v);
            } else {
                L[a * c + b] = v / L[b * c + b];
            }
        }
        double y = u->ad_nu[a]; /* forward substitution: y = L^-1 nu */
        for (size_t e = 0; e < a; e++)
            y -= L[a * c + e] * u->ad_nu[e];
        u->ad_nu[a] = y / L[a * c + a];
        nis += u->ad_nu[a] * u->ad_nu[a];
    }
    return nis;
}

/* Innovation-triggered covariance inflation (adapt_probability > 0), after the sample's update: when the NIS of the
 * current block exceeds the chi-square gate (quantile adapt_probability, as many degrees of freedom as currents
 * used), the motor torque jumped by more than its random walk explains. Per joint i the prior variance that would
 * make the current's innovation consistent is short by d_i = (k_t R)_i^2 max(0, nu_i^2 - S_ii) (one-sample
 * covariance matching: E[nu_i^2] = S_ii); adapt_scale d_i is added to the prior variance of tau_m,i and/or tau_F,i
 * ("tau_m", "tau_f" in adapt_blocks; tau_F lets the dynamics decide whether the jump is in tau_j or in friction),
 * and with "ft" adapt_scale max(0, nu^2 - S) to each FT state's (its reading's innovation, H = I). The update is
 * then repeated from the inflated prior: the sample that shows the jump is the one that absorbs it. */
static int adapt_to_jump(ukft *u, rb_err *err)
{
    rb_filter_diag d;
    rb_filter_get_diag(u->ukf, &d);
    int rc = rb_filter_innovation_cov(u->ukf, u->ad_S, err);
    if (rc)
        return rc;
    size_t k, N = u->N, M = u->M;
    u->ad_nis = current_nis(u, &d, &k);
    if (k == 0 || !(u->ad_nis > u->ad_limit[k]))
        return RB_OK;
    double *P = u->ad_P, added = 0.0;
    for (size_t a = 0; a < k; a++) {
        size_t i = u->ad_idx[a], j = u->m_cur + i;
        double nu = d.innovation[j], ktR = u->ktR[i];
        double di = u->adapt_scale * ktR * ktR * fmax(0.0, nu * nu - u->ad_S[j * M + j]);
        size_t tm = u->b[B_TM].off + i, tf = u->b[B_TF].off + i;
        if (u->adapt_tm)
            P[tm * N + tm] += di;
        if (u->adapt_tf)
            P[tf * N + tf] += di;
        added += di;
    }
    for (size_t e = 0; u->adapt_ft && e < 6 * u->n_ft; e++) {
        size_t j = u->m_ft + e, s = u->b[B_FT].off + e;
        if (d.status[j] == RB_MEAS_USED)
            P[s * N + s] += u->adapt_scale * fmax(0.0, d.innovation[j] * d.innovation[j] - u->ad_S[j * M + j]);
    }
    u->ad_inflation = added;
    if ((rc = rb_filter_set_state(u->ukf, u->ad_x, P, err)))
        return rc;
    u->phase_first = true;
    return rb_filter_update(u->ukf, u->z, err);
}

static int ukft_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    ukft *u = state;
    bool q_ok = tq_finite(in[IN_Q], u->n);
    int rc = RB_OK;
    if (!u->started) {
        if (!q_ok) { /* nothing to start from: no estimate yet */
            for (int o = 0; o < N_OUT; o++)
                for (size_t i = 0; i < u->width[o]; i++)
                    out[o][i] = NAN;
            return RB_OK;
        }
        rb_filter_set_step(u->ukf, (long)k);
        if ((rc = configure(u, in[IN_Q], err)) || (rc = initial_state(u, in, err)))
            return rc;
        u->started = true;
    } else {
        double dt = u->dt_param > 0 ? u->dt_param : t - u->t_prev;
        if (!(dt > 0) || !isfinite(dt))
            return rb_err_set(err, RB_EINPUT, "time %.17g s does not follow %.17g s", t, u->t_prev);
        u->phase_first = true;
        rb_filter_set_step(u->ukf, (long)k - 1);
        if ((rc = rb_filter_predict(u->ukf, NULL, dt, err)))
            return name_failure(u, rc, err);
        if (q_ok && (rc = configure(u, in[IN_Q], err)))
            return rc;
    }
    u->t_prev = t;
    u->ad_nis = NAN, u->ad_inflation = 0.0;
    if (q_ok) {
        gather_z(u, in);
        if (u->adapt_p > 0) { /* the prior, for a repeated update */
            memcpy(u->ad_x, rb_filter_x(u->ukf), u->N * sizeof *u->ad_x);
            memcpy(u->ad_P, rb_filter_P(u->ukf), u->N * u->N * sizeof *u->ad_P);
        }
        u->phase_first = true;
        if ((rc = rb_filter_update(u->ukf, u->z, err)) || (u->adapt_p > 0 && (rc = adapt_to_jump(u, err))))
            return name_failure(u, rc, err);
    }
    u->phase_first = true;
    write_outputs(u, out);
    return RB_OK;
}

/* ---- the models outside a run (roboest/estimators.h) ---------------------------------------------------------- */

static int check_model_call(const void *stage, const double *q, const double *x, const double *o, rb_err *err)
{
    if (!stage || !q || !x || !o)
        return rb_err_set(err, RB_EINVAL, "ukf_torque model: NULL argument");
    return RB_OK;
}

size_t rb_ukf_torque_dims(const void *stage, size_t *n_meas)
{
    const ukft *u = stage;
    if (n_meas)
        *n_meas = u ? u->M : 0;
    return u ? u->N : 0;
}

int rb_ukf_torque_process(void *stage, const double *q, const double *x, double dt, double *x_out, rb_err *err)
{
    int rc = check_model_call(stage, q, x, x_out, err);
    ukft *u = stage;
    if (rc || (rc = configure(u, q, err)))
        return rc;
    double *xi = u->x0, *xo = u->xs;
    to_internal(u, x, xi);
    if ((rc = process(u, xi, dt, xo, err)))
        return rc;
    to_published(u, xo, x_out);
    return RB_OK;
}

int rb_ukf_torque_measure(void *stage, const double *q, const double *x, double *z, rb_err *err)
{
    int rc = check_model_call(stage, q, x, z, err);
    ukft *u = stage;
    if (rc || (rc = configure(u, q, err)))
        return rc;
    to_internal(u, x, u->x0);
    return measure(u, u->x0, z, err);
}

/* ---- the type ------------------------------------------------------------------------------------------------------ */

static const char *const ukft_in[] = {"q", "dq", "current", "ft", "acc", "gyro", "friction"};
static const char *const ukft_out[] = {"tau_j", "tau_m", "tau_f", "dq",  "ft",         "contacts",
                                       "base",  "bias",  "ddq",   "var", "innovation", "nis", "adapt"};
static const char *const friction_choices[] = {"random_walk", "rate_model", NULL};
static const char *const offset_choices[] = {"first_sample", "none", NULL};
static const char *const adapt_choices[] = {"tau_m", "tau_f", "ft", NULL};
static const char *const adapt_default[] = {"tau_m", "ft"};
static const double d_zero[] = {0.0};
static const double d_q_dq[] = {1e-3}, d_q_tau_m[] = {1e-3}, d_q_tau_f[] = {1e-2};
static const double d_q_ft[] = {1e-4, 1e-4, 1e-4, 1e-5, 1e-5, 1e-5}, d_q_contact[] = {1e-1};
static const double d_q_base[] = {1e-2}, d_q_bias[] = {1e-8};
static const double d_p0[] = {1e-2}, d_p0_bias[] = {1e-4};
static const double d_r_dq[] = {1e-3}, d_r_current[] = {1e-3}, d_r_friction[] = {1e-2};
static const double d_r_ft[] = {1.0, 1.0, 1.0, 0.1, 0.1, 0.1}, d_r_acc[] = {1.0}, d_r_gyro[] = {1e-2};

#define NUMS(nm, def, lo_excl, doc_)                                                                                   \
    {.name = nm, .kind = RB_PARAM_NUMBER_ARRAY, .def_numbers = def, .def_count = sizeof def / sizeof def[0],          \
     .min_count = 1, .has_min = true, .min = 0, .min_exclusive = lo_excl, .doc = doc_}
#define NAMES(nm, doc_) {.name = nm, .kind = RB_PARAM_STRING_ARRAY, .doc = doc_}
#define FLAG(nm, doc_) {.name = nm, .kind = RB_PARAM_BOOLEAN, .doc = doc_}

static const rb_param_spec ukft_params[] = {
    NAMES("ft_sensors", "the model's FT sensors the tree is cut at (the ft input: 6 values each, in this order)"),
    NAMES("contacts", "frames with an unknown contact wrench in the state (BODY: frame axes, about its origin)"),
    NAMES("accelerometers", "frames of the accelerometers of the acc input (3 values each, m/s^2, proper)"),
    NAMES("gyroscopes", "frames of the gyroscopes of the gyro input (3 values each, rad/s)"),
    {.name = "base_imu",
     .kind = RB_PARAM_STRING,
     .doc = "floating base: the IMU frame on the base link (listed in accelerometers and gyroscopes) that starts the "
            "base state (eq. 7)"},
    {.name = "k_t", .kind = RB_PARAM_NUMBER_ARRAY, .required = true, .min_count = 1, .has_min = true,
     .min_exclusive = true, .min = 0, .doc = "motor torque constants, N m/A (1 or n values)"},
    {.name = "gear_ratio", .kind = RB_PARAM_NUMBER_ARRAY, .required = true, .min_count = 1,
     .doc = "signed gear ratios R (theta_motor = R q; 1 or n values, non-zero); i_m = tau_m / (k_t R)"},
    NUMS("motor_inertia", d_zero, false,
         "rotor inertias J_m, kg m^2 (rotor side; 1 or n values): tau_j = tau_m - tau_F - R^2 J_m ddq; 0: neglected "
         "as in the paper"),
    {.name = "alpha", .kind = RB_PARAM_NUMBER, .def_number = 1.0, .has_min = true, .min_exclusive = true, .min = 0,
     .doc = "sigma-point spread"},
    {.name = "beta", .kind = RB_PARAM_NUMBER, .def_number = 2.0, .doc = "prior-distribution weight (2: Gaussian)"},
    {.name = "kappa", .kind = RB_PARAM_NUMBER, .def_number = 0.0, .doc = "secondary scaling"},
    {.name = "dt", .kind = RB_PARAM_NUMBER, .def_number = 0.0, .has_min = true, .min = 0,
     .doc = "process step, s; 0: the clock's interval t_k - t_(k-1)"},
    NUMS("q_dq", d_q_dq, false, "process variance per step of dq, (rad/s)^2 (1 or n values)"),
    NUMS("q_tau_m", d_q_tau_m, false, "process variance per step of tau_m, (N m)^2 (1 or n)"),
    NUMS("q_tau_f", d_q_tau_f, false, "process variance per step of tau_F, (N m)^2 (1 or n)"),
    NUMS("q_ft", d_q_ft, false, "process variance per step of the FT wrenches, N^2 and (N m)^2 (1, 6 or 6 n_ft)"),
    NUMS("q_contact", d_q_contact, false, "process variance per step of the contact wrenches (1, 6 or 6 n_c)"),
    NUMS("q_base_imu", d_q_base, false, "process variance per step of [a_B, w_B] (floating; 1 or 6)"),
    NUMS("q_ft_bias", d_q_bias, false, "process variance per step of the FT biases (1, 6 or 6 n_ft)"),
    NUMS("q_acc_bias", d_q_bias, false, "process variance per step of the accelerometer biases (1, 3 or 3 n_acc)"),
    NUMS("q_gyro_bias", d_q_bias, false, "process variance per step of the gyroscope biases (1, 3 or 3 n_gyro)"),
    NUMS("p0_dq", d_p0, true, "initial variance of dq, (rad/s)^2 (1 or n)"),
    NUMS("p0_tau_m", d_p0, true, "initial variance of tau_m, (N m)^2 (1 or n)"),
    NUMS("p0_tau_f", d_p0, true, "initial variance of tau_F, (N m)^2 (1 or n)"),
    NUMS("p0_ft", d_p0, true, "initial variance of the FT wrenches (1, 6 or 6 n_ft)"),
    NUMS("p0_contact", d_p0, true, "initial variance of the contact wrenches (1, 6 or 6 n_c)"),
    NUMS("p0_base_imu", d_p0, true, "initial variance of [a_B, w_B] (floating; 1 or 6)"),
    {.name = "p0_bias", .kind = RB_PARAM_NUMBER_ARRAY, .def_numbers = d_p0_bias, .def_count = 1, .min_count = 1,
     .max_count = 1, .has_min = true, .min_exclusive = true, .min = 0,
     .doc = "initial variance of every bias element (one value)"},
    NUMS("r_dq", d_r_dq, true, "measurement variance of dq, (rad/s)^2 (1 or n)"),
    NUMS("r_current", d_r_current, true, "measurement variance of the motor currents, A^2 (1 or n)"),
    NUMS("r_friction", d_r_friction, true, "measurement variance of the friction input, (N m)^2 (1 or n)"),
    NUMS("r_ft", d_r_ft, true, "measurement variance of the FT readings, N^2 and (N m)^2 (1, 6 or 6 n_ft)"),
    NUMS("r_acc", d_r_acc, true, "measurement variance of the accelerometers, (m/s^2)^2 (1, 3 or 3 n_acc)"),
    NUMS("r_gyro", d_r_gyro, true, "measurement variance of the gyroscopes, (rad/s)^2 (1, 3 or 3 n_gyro)"),
    {.name = "friction_dynamics", .kind = RB_PARAM_STRING, .def_string = "random_walk", .choices = friction_choices,
     .doc = "tau_F process: \"random_walk\" (the paper) or \"rate_model\" (the public estimator's older "
            "tau_F+ = tau_F + dt ddq (k2 + k0 k1 / cosh^2(k1 dq)))"},
    {.name = "friction_k0", .kind = RB_PARAM_NUMBER_ARRAY, .def_numbers = d_zero, .def_count = 1, .min_count = 1,
     .doc = "rate model k0, N m (1 or n); required with \"rate_model\", rejected otherwise"},
    {.name = "friction_k1", .kind = RB_PARAM_NUMBER_ARRAY, .def_numbers = d_zero, .def_count = 1, .min_count = 1,
     .doc = "rate model k1, s/rad (1 or n); required with \"rate_model\", rejected otherwise"},
    {.name = "friction_k2", .kind = RB_PARAM_NUMBER_ARRAY, .def_numbers = d_zero, .def_count = 1, .min_count = 1,
     .doc = "rate model k2, N m s/rad (1 or n); required with \"rate_model\", rejected otherwise"},
    {.name = "contact_decay", .kind = RB_PARAM_NUMBER, .def_number = 0.0, .has_min = true, .min = 0,
     .doc = "contact wrench decay rate k, 1/s: f+ = f - dt k f (0: random walk)"},
    FLAG("ft_bias", "FT bias states (measured FT = state + bias)"),
    FLAG("acc_bias", "accelerometer bias states"),
    FLAG("gyro_bias", "gyroscope bias states"),
    {.name = "ft_offset", .kind = RB_PARAM_STRING, .def_string = "first_sample", .choices = offset_choices,
     .doc = "\"first_sample\": o = f_measured(0) - f_predicted(0) subtracted from every reading; \"none\""},
    {.name = "adapt_probability", .kind = RB_PARAM_NUMBER, .def_number = 0.0, .has_min = true, .min = 0,
     .has_max = true, .max_exclusive = true, .max = 1,
     .doc = "jump adaptation: the chi-square probability of the motor currents' NIS gate (e.g. 0.9999; dof = currents "
            "used); above it the prior variance of adapt_blocks is inflated and the update repeated; 0: off"},
    {.name = "adapt_blocks", .kind = RB_PARAM_STRING_ARRAY, .def_strings = adapt_default, .def_count = 2,
     .min_count = 1, .choices = adapt_choices,
     .doc = "blocks the jump adaptation inflates: \"tau_m\", \"tau_f\" (by the current's variance shortfall), \"ft\" "
            "(by the FT readings' own; the default's \"ft\" does nothing without FT sensors)"},
    {.name = "adapt_scale", .kind = RB_PARAM_NUMBER, .def_number = 1.0, .has_min = true, .min_exclusive = true,
     .min = 0, .doc = "factor on the jump adaptation's inflation (1: the innovation made consistent)"},
};
#undef NUMS
#undef NAMES
#undef FLAG

const rb_stage_type rb_stage_ukf_torque = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "ukf_torque",
    .summary = "joint torques tau_m - tau_F by the joint-torque paper's UKF: motor currents, joint velocities, FT "
               "sensors, IMUs and an optional friction measurement, sub-model forward dynamics as process",
    .inputs = ukft_in,
    .n_inputs = N_IN,
    .optional_inputs = (1u << IN_FT) | (1u << IN_ACC) | (1u << IN_GYRO) | (1u << IN_FRICTION),
    .outputs = ukft_out,
    .n_outputs = N_OUT,
    .params = ukft_params,
    .n_params = sizeof ukft_params / sizeof ukft_params[0],
    .create = ukft_create,
    .step = ukft_step,
    .finish = NULL,
    .destroy = ukft_destroy,
};
