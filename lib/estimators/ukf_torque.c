/* ukf_torque: the joint-torque paper's UKF (seed 000 eq. 5-8; the public estimator's design, design notes
 * CONVENTIONS.md): joint torques tau_j = tau_m - tau_F from motor currents, joint velocities, FT sensors, IMUs and
 * (optionally) a friction measurement. ukf_torque_type.c holds its ports, documentation and parameter schema. The stage adapts ports and
 * parameters: the model (process, measurements, layout, start) is the dynamics module's (dynamics.h, rb_tukf_*),
 * the UKF and the jump adaptation the filters module's (filters.h, rb_ukf_create, rb_jump_*). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/filters.h"
#include "torque_calib.h"
#include "torque_common.h"
#include "ukf_torque.h"

typedef struct ukft {
    const rb_model *model;
    rb_tukf *tm; /* the model */
    const rb_tukf_layout *lay;
    rb_filter *ukf;
    rb_jump *jump; /* the jump adaptation (adapt_probability > 0), else NULL */
    size_t n, N, M;
    bool started;
    double dt_param, t_prev;
    double *z, *x0;              /* M, N */
    double ad_nis, ad_inflation; /* the last sample's current-block NIS and tau_m / tau_F inflation (out adapt) */
    size_t width[N_OUT];
    tq_strings names[N_OUT], units[N_OUT];
    /* for the fault monitor (tq_ukf_innovations): measurement j is element inno_elem[j] of input inno_port[j] */
    rb_stage_innovations inno;
    bool want_z;                   /* the monitor asked: every step fills inno_z */
    double *inno_z, *S;            /* M, M x M */
    size_t *inno_port, *inno_elem; /* M each */
    tq_ukf_calib *cal;             /* ft_offset "still_window" and check_constants (torque_calib.h) */
    char *notes[2];                /* IMU lists without their input */
    size_t n_notes;
    const char **all_notes; /* notes and the calibration's, gathered at finish */
    size_t n_all_notes;
} ukft;

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

/* The IMUs the filter uses: the list's, or none when its input is unwired or 0 wide (a log without IMUs; the stage
 * says so in a note). */
static size_t imu_count(const rb_stage_setup *st, const char *key, int port)
{
    return st->in[port].width ? P(st, key)->count : 0;
}

/* The friction keys: each needs the friction input, the correction's own keys friction_correction. */
static int check_friction(const rb_stage_setup *st, rb_err *err)
{
    static const char *const keys[] = {"r_friction",    "friction_correction", "q_correction",
                                       "p0_correction", "correction_v_c",      "correction_v_s"};
    const rb_param_value *terms = P(st, "friction_correction");
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (!P(st, keys[i])->given)
            continue;
        if (st->in[IN_FRICTION].width == 0)
            return rb_err_set(err, RB_ECONFIG, "%s needs the friction input (wire a friction stage's tau_F to it)",
                              keys[i]);
        if (i > 1 && terms->count == 0)
            return rb_err_set(err, RB_ECONFIG, "%s needs friction_correction (the terms to adapt)", keys[i]);
    }
    for (size_t a = 0; a < terms->count; a++)
        for (size_t b = 0; b < a; b++)
            if (strcmp(terms->strings[a], terms->strings[b]) == 0)
                return rb_err_set(err, RB_ECONFIG, "friction_correction[%zu] \"%s\" is listed twice", a,
                                  terms->strings[a]);
    /* the correction's slow random walks learn through the covariance recursion, which refresh_every slows down */
    if (terms->count && rb_params_integer(st->params, "refresh_every") > 1)
        return rb_err_set(
            err, RB_ECONFIG,
            "refresh_every > 1 is not with friction_correction (its slow random walks need the covariance "
            "at every sample: refresh_every 8 changed its tau_j RMSE by -15 %% on leg_pole_ground)");
    int rc = tq_check_count(st, "q_correction", 1, terms->count, err);
    return rc ? rc : tq_check_count(st, "p0_correction", 1, terms->count, err);
}

/* Names, widths, counts: everything checkable before allocating. */
static int check_setup(const rb_stage_setup *st, rb_err *err)
{
    int rc = tq_need_model(st, err);
    if (rc)
        return rc;
    const rb_model *m = st->model;
    size_t n = m->n_dofs, nft = P(st, "ft_sensors")->count, nc = P(st, "contacts")->count;
    size_t nacc = imu_count(st, "accelerometers", IN_ACC), ngyro = imu_count(st, "gyroscopes", IN_GYRO);
    if ((rc = tq_check_names(st, "ft_sensors", true, err)) || (rc = tq_check_names(st, "contacts", false, err)) ||
        (rc = tq_check_names(st, "accelerometers", false, err)) || (rc = tq_check_names(st, "gyroscopes", false, err)))
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
            return rb_err_set(err, RB_ECONFIG, "base_imu %s is not on the base link %s", base_imu, m->bodies[0].name);
        if (!find_in_list(P(st, "accelerometers"), base_imu, &pos) ||
            !find_in_list(P(st, "gyroscopes"), base_imu, &pos))
            return rb_err_set(err, RB_ECONFIG, "base_imu %s must be listed in accelerometers and gyroscopes", base_imu);
        if (!nacc || !ngyro) /* the base block starts from it (eq. 7) */
            return rb_err_set(err, RB_ECONFIG, "base_imu %s needs the %s input (unwired or 0 wide)", base_imu,
                              nacc ? "gyro" : "acc");
    }
    if ((rc = tq_check_port(st, IN_Q, n, "one per model joint", true, err)) ||
        (rc = tq_check_port(st, IN_DQ, n, "one per model joint", true, err)) ||
        (rc = tq_check_port(st, IN_CURRENT, n, "one per model joint", true, err)) ||
        (rc = tq_check_port(st, IN_FT, 6 * nft, "6 per sensor of ft_sensors", false, err)) ||
        (rc = tq_check_port(st, IN_ACC, 3 * nacc, "3 per frame of accelerometers", false, err)) ||
        (rc = tq_check_port(st, IN_GYRO, 3 * ngyro, "3 per frame of gyroscopes", false, err)))
        return rc;
    if (st->in[IN_FRICTION].width && (rc = tq_check_port(st, IN_FRICTION, n, "one per model joint", true, err)))
        return rc;
    static const char *const per_joint[] = {"k_t",       "gear_ratio", "motor_inertia", "q_dq",        "q_tau_m",
                                            "q_tau_f",   "p0_dq",      "p0_tau_m",      "p0_tau_f",    "r_dq",
                                            "r_current", "r_friction", "friction_k0",   "friction_k1", "friction_k2"};
    for (size_t i = 0; i < sizeof per_joint / sizeof per_joint[0]; i++)
        if ((rc = tq_check_count(st, per_joint[i], 1, n, err)))
            return rc;
    static const char *const per_ft[] = {"q_ft", "p0_ft", "r_ft", "q_ft_bias"};
    for (size_t i = 0; i < sizeof per_ft / sizeof per_ft[0]; i++)
        if ((rc = tq_check_count(st, per_ft[i], 6, nft, err)))
            return rc;
    /* the per-IMU keys fit the lists (the same pipeline runs on a log without IMUs) */
    size_t nacc_l = P(st, "accelerometers")->count, ngyro_l = P(st, "gyroscopes")->count;
    if ((rc = tq_check_count(st, "q_contact", 6, nc, err)) || (rc = tq_check_count(st, "p0_contact", 6, nc, err)) ||
        (rc = tq_check_count(st, "q_base_imu", 6, 1, err)) || (rc = tq_check_count(st, "p0_base_imu", 6, 1, err)) ||
        (rc = tq_check_count(st, "r_acc", 3, nacc_l, err)) || (rc = tq_check_count(st, "q_acc_bias", 3, nacc_l, err)) ||
        (rc = tq_check_count(st, "r_gyro", 3, ngyro_l, err)) ||
        (rc = tq_check_count(st, "q_gyro_bias", 3, ngyro_l, err)))
        return rc;
    const rb_param_value *R = P(st, "gear_ratio");
    for (size_t i = 0; i < R->count; i++)
        if (R->numbers[i] == 0.0)
            return rb_err_set(err, RB_ECONFIG, "gear_ratio[%zu] is 0 (give the signed ratio, e.g. -160)", i);
    const char *fd = rb_params_string(st->params, "friction_dynamics");
    bool rate = fd && strcmp(fd, "rate_model") == 0,
         given = P(st, "friction_k0")->given || P(st, "friction_k1")->given || P(st, "friction_k2")->given;
    if (rate && !given)
        return rb_err_set(err, RB_ECONFIG, "friction_dynamics \"rate_model\" needs friction_k0, k1, k2");
    if (!rate && given)
        return rb_err_set(err, RB_ECONFIG, "friction_k0, k1, k2 need friction_dynamics \"rate_model\"");
    if ((rc = check_friction(st, err)))
        return rc;
    return check_adapt(st, nft, err);
}

/* ---- set-up ----------------------------------------------------------------------------------------------------- */

void tq_ukf_destroy(void *state)
{
    ukft *u = state;
    if (!u)
        return;
    rb_jump_free(u->jump);
    rb_filter_free(u->ukf);
    rb_tukf_free(u->tm);
    for (int k = 0; k < N_OUT; k++) {
        tq_strings_free(&u->names[k]);
        tq_strings_free(&u->units[k]);
    }
    rb_free(u->z);
    rb_free(u->inno_z);
    rb_free(u->inno_port);
    tq_ukf_calib_free(u->cal);
    for (size_t i = 0; i < u->n_notes; i++)
        rb_free(u->notes[i]);
    rb_free(u->all_notes);
    rb_free(u);
}

/* The model from the parameters (names to model indices: check_setup found them all). */
static int make_model(ukft *u, const rb_stage_setup *st, rb_err *err)
{
    const rb_model *m = u->model;
    const rb_param_value *fts = P(st, "ft_sensors"), *cts = P(st, "contacts"), *acc = P(st, "accelerometers"),
                         *gyr = P(st, "gyroscopes");
    size_t n = u->n, nft = fts->count, nc = cts->count;
    size_t nacc = imu_count(st, "accelerometers", IN_ACC), ngyro = imu_count(st, "gyroscopes", IN_GYRO);
    int *idx = rb_calloc(nft + nc + nacc + ngyro + 1, sizeof *idx);
    double *v = rb_calloc(6 * n + 1, sizeof *v);
    int rc = RB_OK;
    if (!idx || !v) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
        goto done;
    }
    int *fi = idx, *ci = fi + nft, *ai = ci + nc, *gi = ai + nacc;
    for (size_t i = 0; i < nft; i++)
        fi[i] = (int)rb_model_ft_index(m, fts->strings[i]);
    for (size_t i = 0; i < nc; i++)
        ci[i] = (int)rb_model_frame_index(m, cts->strings[i]);
    for (size_t i = 0; i < nacc; i++)
        ai[i] = (int)rb_model_frame_index(m, acc->strings[i]);
    for (size_t i = 0; i < ngyro; i++)
        gi[i] = (int)rb_model_frame_index(m, gyr->strings[i]);
    double *kt = v, *R = kt + n, *Jm = R + n, *k0 = Jm + n, *k1 = k0 + n, *k2 = k1 + n;
    for (size_t i = 0; i < n; i++) {
        kt[i] = tq_value(P(st, "k_t"), 1, i, 0), R[i] = tq_value(P(st, "gear_ratio"), 1, i, 0);
        Jm[i] = tq_value(P(st, "motor_inertia"), 1, i, 0);
        k0[i] = tq_value(P(st, "friction_k0"), 1, i, 0), k1[i] = tq_value(P(st, "friction_k1"), 1, i, 0);
        k2[i] = tq_value(P(st, "friction_k2"), 1, i, 0);
    }
    const rb_params *p = st->params;
    const char *base_imu = rb_params_string(p, "base_imu"), *fd = rb_params_string(p, "friction_dynamics"),
               *off = rb_params_string(p, "ft_offset");
    rb_tukf_config c = {.base_imu = base_imu ? (int)rb_model_frame_index(m, base_imu) : -1};
    c.ft = fi, c.n_ft = nft, c.contacts = ci, c.n_contacts = nc, c.acc = ai, c.n_acc = nacc, c.gyro = gi;
    c.n_gyro = ngyro, c.k_t = kt, c.gear_ratio = R, c.motor_inertia = Jm, c.k0 = k0, c.k1 = k1, c.k2 = k2;
    c.friction = fd && strcmp(fd, "rate_model") == 0 ? RB_TUKF_RATE_MODEL : RB_TUKF_RANDOM_WALK;
    c.contact_decay = rb_params_number(p, "contact_decay");
    c.ft_bias = rb_params_boolean(p, "ft_bias"), c.acc_bias = rb_params_boolean(p, "acc_bias");
    c.gyro_bias = rb_params_boolean(p, "gyro_bias");
    c.friction_meas = st->in[IN_FRICTION].width > 0;
    c.ft_offset = off && strcmp(off, "first_sample") == 0;
    const char *vt = rb_params_string(p, "velocity_terms");
    c.mean_velocity_terms = vt && strcmp(vt, "mean") == 0;
    const rb_param_value *terms = P(st, "friction_correction");
    int corr[RB_TUKF_CORR_TERMS];
    static const char *const term_names[RB_TUKF_CORR_TERMS] = {"coulomb", "viscous", "offset", "scale", "stribeck"};
    for (size_t a = 0; a < terms->count && a < RB_TUKF_CORR_TERMS; a++)
        for (int t = 0; t < RB_TUKF_CORR_TERMS; t++)
            if (strcmp(terms->strings[a], term_names[t]) == 0)
                corr[a] = t;
    c.corr = corr, c.n_corr = terms->count, c.corr_v_c = rb_params_number(p, "correction_v_c");
    c.corr_v_s = rb_params_number(p, "correction_v_s");
    if ((rc = rb_tukf_alloc(m, &c, &u->tm, err)))
        goto done;
    u->lay = rb_tukf_get_layout(u->tm);
    u->N = u->lay->n_state, u->M = u->lay->n_meas;
    if (!(u->z = rb_calloc(u->M + u->N, sizeof *u->z))) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
        goto done;
    }
    u->x0 = u->z + u->M;
done:
    rb_free(idx);
    rb_free(v);
    return rc;
}

/* Each measurement block reads one input port, element for element (rb_tukf_measurement). */
static int make_innovations(ukft *u, rb_err *err)
{
    static const struct {
        int block, port;
    } from[] = {{RB_TUKF_Z_DQ, IN_DQ}, {RB_TUKF_Z_CURRENT, IN_CURRENT}, {RB_TUKF_Z_FRICTION, IN_FRICTION},
                {RB_TUKF_Z_FT, IN_FT}, {RB_TUKF_Z_ACC, IN_ACC},         {RB_TUKF_Z_GYRO, IN_GYRO}};
    size_t M = u->M;
    u->inno_z = rb_calloc(M * M + M + 1, sizeof *u->inno_z);
    u->inno_port = rb_calloc(2 * M + 1, sizeof *u->inno_port);
    if (!u->inno_z || !u->inno_port)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    u->S = u->inno_z + M;
    u->inno_elem = u->inno_port + M;
    for (size_t j = 0; j < M; j++)
        u->inno_z[j] = NAN;
    for (size_t b = 0; b < sizeof from / sizeof from[0]; b++)
        for (size_t i = 0; i < u->lay->z[from[b].block].len; i++) {
            size_t j = u->lay->z[from[b].block].off + i;
            u->inno_port[j] = (size_t)from[b].port;
            u->inno_elem[j] = i;
        }
    u->inno = (rb_stage_innovations){M, u->inno_port, u->inno_elem, u->inno_z};
    return RB_OK;
}

const rb_stage_innovations *tq_ukf_innovations(void *state)
{
    ukft *u = state;
    u->want_z = true;
    return &u->inno;
}

/* nu_j / sqrt(S_jj) of the update just made; NaN where S has no entry (the element was not used). */
static void normalize_innovations(ukft *u)
{
    rb_filter_diag d;
    rb_filter_get_diag(u->ukf, &d);
    rb_err scratch;
    bool have_S = rb_filter_innovation_cov(u->ukf, u->S, &scratch) == RB_OK;
    for (size_t j = 0; j < u->M; j++) {
        double s = have_S ? u->S[j * u->M + j] : NAN;
        u->inno_z[j] = s > 0 ? d.innovation[j] / sqrt(s) : NAN;
    }
}

/* The diagonal of P0, Q and R (published parameters into the filter order). */
static void noise_diagonals(const ukft *u, const rb_stage_setup *st, double *p0, double *q, double *r)
{
    const rb_tukf_layout *L = u->lay;
    size_t n = u->n, n_ft = L->x[RB_TUKF_FT].len / 6, nc = L->x[RB_TUKF_CONTACT].len / 6;
    size_t nacc = L->z[RB_TUKF_Z_ACC].len / 3, ngyro = L->z[RB_TUKF_Z_GYRO].len / 3;
    size_t o_dq = L->x[RB_TUKF_DQ].off, o_tm = L->x[RB_TUKF_TAU_M].off, o_tf = L->x[RB_TUKF_TAU_F].off;
    size_t o_ft = L->x[RB_TUKF_FT].off, o_ftb = L->x[RB_TUKF_FT_BIAS].off, o_c = L->x[RB_TUKF_CONTACT].off;
    size_t o_a = L->x[RB_TUKF_BASE_A].off, o_w = L->x[RB_TUKF_BASE_W].off;
    size_t o_ab = L->x[RB_TUKF_ACC_BIAS].off, o_gb = L->x[RB_TUKF_GYRO_BIAS].off;
    size_t m_dq = L->z[RB_TUKF_Z_DQ].off, m_cur = L->z[RB_TUKF_Z_CURRENT].off, m_fric = L->z[RB_TUKF_Z_FRICTION].off;
    size_t m_ft = L->z[RB_TUKF_Z_FT].off, m_acc = L->z[RB_TUKF_Z_ACC].off, m_gyro = L->z[RB_TUKF_Z_GYRO].off;
    for (size_t i = 0; i < n; i++) {
        q[o_dq + i] = tq_value(P(st, "q_dq"), 1, i, 0);
        q[o_tm + i] = tq_value(P(st, "q_tau_m"), 1, i, 0);
        q[o_tf + i] = tq_value(P(st, "q_tau_f"), 1, i, 0);
        p0[o_dq + i] = tq_value(P(st, "p0_dq"), 1, i, 0);
        p0[o_tm + i] = tq_value(P(st, "p0_tau_m"), 1, i, 0);
        p0[o_tf + i] = tq_value(P(st, "p0_tau_f"), 1, i, 0);
        r[m_dq + i] = tq_value(P(st, "r_dq"), 1, i, 0);
        r[m_cur + i] = tq_value(P(st, "r_current"), 1, i, 0);
        if (L->z[RB_TUKF_Z_FRICTION].len)
            r[m_fric + i] = tq_value(P(st, "r_friction"), 1, i, 0);
    }
    for (size_t i = 0; i < 6 * n_ft; i++) {
        q[o_ft + i] = tq_value(P(st, "q_ft"), 6, i / 6, i % 6);
        p0[o_ft + i] = tq_value(P(st, "p0_ft"), 6, i / 6, i % 6);
        r[m_ft + i] = tq_value(P(st, "r_ft"), 6, i / 6, i % 6);
        if (L->x[RB_TUKF_FT_BIAS].len) {
            q[o_ftb + i] = tq_value(P(st, "q_ft_bias"), 6, i / 6, i % 6);
            p0[o_ftb + i] = P(st, "p0_bias")->numbers[0];
        }
    }
    size_t o_fc = L->x[RB_TUKF_FRIC_CORR].off, nk = L->x[RB_TUKF_FRIC_CORR].len / (n ? n : 1);
    for (size_t e = 0; e < L->x[RB_TUKF_FRIC_CORR].len; e++) {
        q[o_fc + e] = tq_value(P(st, "q_correction"), 1, e % nk, 0);
        p0[o_fc + e] = tq_value(P(st, "p0_correction"), 1, e % nk, 0);
    }
    for (size_t i = 0; i < 6 * nc; i++) {
        q[o_c + i] = tq_value(P(st, "q_contact"), 6, i / 6, i % 6);
        p0[o_c + i] = tq_value(P(st, "p0_contact"), 6, i / 6, i % 6);
    }
    for (size_t k = 0; k < L->x[RB_TUKF_BASE_A].len; k++) { /* q_base_imu, p0_base_imu: [a_B (3), w_B (3)] */
        q[o_a + k] = tq_value(P(st, "q_base_imu"), 6, 0, k);
        q[o_w + k] = tq_value(P(st, "q_base_imu"), 6, 0, 3 + k);
        p0[o_a + k] = tq_value(P(st, "p0_base_imu"), 6, 0, k);
        p0[o_w + k] = tq_value(P(st, "p0_base_imu"), 6, 0, 3 + k);
    }
    for (size_t i = 0; i < 3 * nacc; i++) {
        r[m_acc + i] = tq_value(P(st, "r_acc"), 3, i / 3, i % 3);
        if (L->x[RB_TUKF_ACC_BIAS].len) {
            q[o_ab + i] = tq_value(P(st, "q_acc_bias"), 3, i / 3, i % 3);
            p0[o_ab + i] = P(st, "p0_bias")->numbers[0];
        }
    }
    for (size_t i = 0; i < 3 * ngyro; i++) {
        r[m_gyro + i] = tq_value(P(st, "r_gyro"), 3, i / 3, i % 3);
        if (L->x[RB_TUKF_GYRO_BIAS].len) {
            q[o_gb + i] = tq_value(P(st, "q_gyro_bias"), 3, i / 3, i % 3);
            p0[o_gb + i] = P(st, "p0_bias")->numbers[0];
        }
    }
}

static int process_batch(void *user, const double *X, size_t Ns, const double *in, double dt, double *Y, rb_err *err)
{
    (void)in;
    return rb_tukf_process_batch(user, X, Ns, dt, Y, err);
}

static int measure_batch(void *user, const double *X, size_t Ns, double *Z, rb_err *err)
{
    return rb_tukf_measure_batch(user, X, Ns, Z, err);
}

/* The model's structure for the structured UKF (rb_filter_opts.n_nonlinear): its Jacobians past the velocities. */
static int affine(void *user, const double *x, const double *in, double dt, rb_filter_csr *Jf, rb_filter_csr *Jh,
                  rb_err *err)
{
    (void)in;
    rb_filter_csr *J = Jf ? Jf : Jh;
    const rb_tukf_layout *L = rb_tukf_get_layout(user);
    J->rows = Jf ? L->n_state : L->n_meas, J->cols = L->n_state - rb_tukf_nonlinear(user);
    return rb_tukf_affine(user, x, dt, Jf != NULL, &J->ptr, &J->col, &J->val, err);
}

static int make_filter(ukft *u, const rb_stage_setup *st, rb_err *err)
{
    size_t N = u->N, M = u->M;
    double *P0 = rb_calloc(N * N + N * N + M * M + 3 * N + M, sizeof(double));
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
    o.f_batch = process_batch, o.h_batch = measure_batch, o.user = u->tm;
    const char *form = rb_params_string(st->params, "sigma_points");
    bool *identity = (bool *)(r + M); /* N flags in the block's tail */
    if (!form || strcmp(form, "dense") != 0) {
        o.n_nonlinear = rb_tukf_nonlinear(u->tm), o.affine = affine, o.identity = identity;
        rb_tukf_identity(u->tm, identity);
    }
    o.alpha = rb_params_number(st->params, "alpha");
    o.beta = rb_params_number(st->params, "beta");
    o.kappa = rb_params_number(st->params, "kappa");
    o.hold = (size_t)rb_params_integer(st->params, "refresh_every");
    int rc = rb_ukf_create(&o, &u->ukf, err);
    rb_free(P0);
    return rc;
}

/* The jump adaptation (adapt_probability > 0; see ukft_doc below): the motor currents gated, each inflating its
 * joint's tau_m and/or tau_F by (k_t R)^2 times its shortfall, and with "ft" each FT reading its FT state. */
static int make_jump(ukft *u, const rb_stage_setup *st, rb_err *err)
{
    double p = rb_params_number(st->params, "adapt_probability");
    if (!(p > 0))
        return RB_OK;
    bool tm = false, tf = false, ft = false;
    const rb_param_value *blocks = P(st, "adapt_blocks");
    for (size_t i = 0; i < blocks->count; i++) {
        const char *b = blocks->strings[i];
        tm |= strcmp(b, "tau_m") == 0, tf |= strcmp(b, "tau_f") == 0, ft |= strcmp(b, "ft") == 0;
    }
    const rb_tukf_layout *L = u->lay;
    size_t n = u->n, nft6 = L->x[RB_TUKF_FT].len, nt = 0;
    size_t *gate = rb_calloc(n + 1, sizeof *gate);
    double *ktR = rb_calloc(n + 1, sizeof *ktR);
    rb_jump_target *t = rb_calloc(2 * n + nft6 + 1, sizeof *t);
    int rc = RB_OK;
    if (!gate || !ktR || !t) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory (jump adaptation)");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        size_t j = L->z[RB_TUKF_Z_CURRENT].off + i;
        gate[i] = j;
        ktR[i] = tq_value(P(st, "k_t"), 1, i, 0) * tq_value(P(st, "gear_ratio"), 1, i, 0);
        if (tm)
            t[nt++] = (rb_jump_target){j, L->x[RB_TUKF_TAU_M].off + i, ktR[i]};
        if (tf)
            t[nt++] = (rb_jump_target){j, L->x[RB_TUKF_TAU_F].off + i, ktR[i]};
    }
    for (size_t e = 0; ft && e < nft6; e++)
        t[nt++] = (rb_jump_target){L->z[RB_TUKF_Z_FT].off + e, L->x[RB_TUKF_FT].off + e, 1.0};
    rb_jump_opts o = {.gate = gate, .gate_factor = ktR, .n_gate = n, .targets = t, .n_targets = nt};
    o.probability = p, o.scale = rb_params_number(st->params, "adapt_scale");
    if ((rc = rb_jump_create(u->ukf, &o, &u->jump, err)) == RB_EINVAL) /* the gate's chi-square quantile */
        rb_err_prefix(err, rc, "adapt_probability: ");
done:
    rb_free(gate);
    rb_free(ktR);
    rb_free(t);
    return rc;
}

/* A note per IMU list the stage runs without (its input unwired or 0 wide). */
static int imu_notes(ukft *u, const rb_stage_setup *st, rb_err *err)
{
    static const struct {
        const char *key, *input;
        int port;
    } imu[2] = {{"accelerometers", "acc", IN_ACC}, {"gyroscopes", "gyro", IN_GYRO}};
    for (int j = 0; j < 2; j++) {
        size_t c = P(st, imu[j].key)->count;
        if (c == 0 || st->in[imu[j].port].width)
            continue;
        char line[256];
        snprintf(line, sizeof line, "%zu %s listed but the %s input is unwired or empty: run without them", c,
                 imu[j].key, imu[j].input);
        if (!(u->notes[u->n_notes] = rb_strdup(line)))
            return rb_err_set(err, RB_ENOMEM, "out of memory");
        u->n_notes++;
    }
    return RB_OK;
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
    const rb_tukf_layout *L = u->lay;
    size_t n_ft = L->x[RB_TUKF_FT].len / 6, nc = L->x[RB_TUKF_CONTACT].len / 6;
    size_t l_ftb = L->x[RB_TUKF_FT_BIAS].len, l_ab = L->x[RB_TUKF_ACC_BIAS].len, l_gb = L->x[RB_TUKF_GYRO_BIAS].len;
    w[OUT_FT] = 6 * n_ft, w[OUT_CONTACTS] = 6 * nc, w[OUT_BASE] = m->floating ? 6 : 0;
    w[OUT_BIAS] = l_ftb + l_ab + l_gb;
    w[OUT_VAR] = u->N, w[OUT_INNOVATION] = u->M, w[OUT_NIS] = 1, w[OUT_ADAPT] = u->jump ? 2 : 0;
    w[OUT_CORRECTION] = L->x[RB_TUKF_FRIC_CORR].len;
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
    for (size_t i = 0; !rc && i < 6 * n_ft; i++) {
        rc = tq_strings_set(&N_[OUT_FT], i, err, "%s/%s", fts->strings[i / 6], tq_wrench_axes[i % 6]);
        rc = rc ? rc : tq_strings_set(&U[OUT_FT], i, err, "%s", tq_wrench_units[i % 6]);
    }
    for (size_t i = 0; !rc && i < 6 * nc; i++) {
        rc = tq_strings_set(&N_[OUT_CONTACTS], i, err, "%s/%s", cts->strings[i / 6], tq_wrench_axes[i % 6]);
        rc = rc ? rc : tq_strings_set(&U[OUT_CONTACTS], i, err, "%s", tq_wrench_units[i % 6]);
    }
    static const char *const base_names[6] = {"a_x", "a_y", "a_z", "w_x", "w_y", "w_z"};
    for (size_t i = 0; !rc && i < w[OUT_BASE]; i++) {
        rc = tq_strings_set(&N_[OUT_BASE], i, err, "%s", base_names[i]);
        rc = rc ? rc : tq_strings_set(&U[OUT_BASE], i, err, "%s", i < 3 ? "m/s^2" : "rad/s");
    }
    /* biases: "<block>/<element>" */
    size_t bi = 0;
    for (size_t i = 0; !rc && i < l_ftb; i++, bi++) {
        rc = tq_strings_set(&N_[OUT_BIAS], bi, err, "ft_bias/%s/%s", fts->strings[i / 6], tq_wrench_axes[i % 6]);
        rc = rc ? rc : tq_strings_set(&U[OUT_BIAS], bi, err, "%s", tq_wrench_units[i % 6]);
    }
    for (size_t i = 0; !rc && i < l_ab; i++, bi++) {
        rc = tq_strings_set(&N_[OUT_BIAS], bi, err, "acc_bias/%s/%c", acc->strings[i / 3], "xyz"[i % 3]);
        rc = rc ? rc : tq_strings_set(&U[OUT_BIAS], bi, err, "m/s^2");
    }
    for (size_t i = 0; !rc && i < l_gb; i++, bi++) {
        rc = tq_strings_set(&N_[OUT_BIAS], bi, err, "gyro_bias/%s/%c", gyr->strings[i / 3], "xyz"[i % 3]);
        rc = rc ? rc : tq_strings_set(&U[OUT_BIAS], bi, err, "rad/s");
    }
    /* var (published state order) and innovation: the model's "<block>/<element>" names */
    char nm[512];
    for (size_t i = 0; !rc && i < u->N; i++) {
        const char *un = rb_tukf_state_unit(u->tm, i);
        rb_tukf_state_name(u->tm, i, nm, sizeof nm);
        rc = tq_strings_set(&N_[OUT_VAR], i, err, "%s", nm);
        rc = rc ? rc : tq_strings_set(&U[OUT_VAR], i, err, strchr(un, ' ') || strchr(un, '/') ? "(%s)^2" : "%s^2", un);
    }
    for (size_t j = 0; !rc && j < u->M; j++) {
        rb_tukf_meas_name(u->tm, j, nm, sizeof nm);
        rc = tq_strings_set(&N_[OUT_INNOVATION], j, err, "%s", nm);
        rc = rc ? rc : tq_strings_set(&U[OUT_INNOVATION], j, err, "%s", rb_tukf_meas_unit(u->tm, j));
    }
    rc = rc ? rc : tq_strings_set(&N_[OUT_NIS], 0, err, "nis");
    rc = rc ? rc : tq_strings_set(&U[OUT_NIS], 0, err, "1");
    if (w[OUT_ADAPT]) {
        rc = rc ? rc : tq_strings_set(&N_[OUT_ADAPT], 0, err, "nis_current");
        rc = rc ? rc : tq_strings_set(&U[OUT_ADAPT], 0, err, "1");
        rc = rc ? rc : tq_strings_set(&N_[OUT_ADAPT], 1, err, "inflation");
        rc = rc ? rc : tq_strings_set(&U[OUT_ADAPT], 1, err, "(N m)^2");
    }
    /* the friction correction: the model's "fric_corr/<term>/<joint>" without the block */
    for (size_t e = 0; !rc && e < w[OUT_CORRECTION]; e++) {
        size_t i = u->lay->pub[RB_TUKF_FRIC_CORR].off + e;
        rb_tukf_state_name(u->tm, i, nm, sizeof nm);
        rc = tq_strings_set(&N_[OUT_CORRECTION], e, err, "%s", nm + strlen("fric_corr/"));
        rc = rc ? rc : tq_strings_set(&U[OUT_CORRECTION], e, err, "%s", rb_tukf_state_unit(u->tm, i));
    }
    memcpy(u->width, w, sizeof w);
    for (int k = 0; !rc && k < N_OUT; k++)
        st->out[k] = (rb_port){w[k], (const char *const *)N_[k].s, (const char *const *)U[k].s};
    return rc;
}

int tq_ukf_create(const rb_stage_setup *st, void **state, rb_err *err)
{
    int rc = check_setup(st, err);
    if (rc)
        return rc;
    ukft *u = rb_calloc(1, sizeof *u);
    if (!u)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    u->model = st->model, u->n = st->model->n_dofs;
    u->dt_param = rb_params_number(st->params, "dt");
    if ((rc = make_model(u, st, err)) || (rc = make_filter(u, st, err)) || (rc = make_jump(u, st, err)) ||
        (rc = make_strings(u, st, err)) || (rc = make_innovations(u, err)) || (rc = imu_notes(u, st, err)) ||
        (rc = tq_ukf_calib_create(st, IN_Q, &u->cal, err))) {
        tq_ukf_destroy(u);
        return rc;
    }
    *state = u;
    return RB_OK;
}

/* ---- per sample -------------------------------------------------------------------------------------------------- */

/* Name the block of the state or measurement a numeric failure of the filter is at. */
static int name_failure(ukft *u, int rc, rb_err *err)
{
    if (rc != RB_ENUMERIC)
        return rc;
    size_t idx;
    char what[160];
    switch (rb_filter_last_failure(u->ukf, &idx)) {
    case RB_FILTER_FAIL_P:
        rb_tukf_describe_state(u->tm, idx, what, sizeof what);
        return rb_err_prefix(err, rc, "the state covariance lost positive definiteness at block %s: ", what);
    case RB_FILTER_FAIL_X:
        rb_tukf_describe_state(u->tm, idx, what, sizeof what);
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
    const rb_tukf_layout *L = u->lay;
    rb_filter_diag d;
    rb_filter_get_diag(u->ukf, &d);
    rb_err scratch;
    rb_tukf_joint_torques(u->tm, x, out[OUT_TAU_J], out[OUT_DDQ], &scratch); /* NaN when the model fails */
    for (size_t i = 0; i < u->n; i++) {
        out[OUT_TAU_M][i] = x[L->x[RB_TUKF_TAU_M].off + i], out[OUT_TAU_F][i] = x[L->x[RB_TUKF_TAU_F].off + i];
        out[OUT_DQ][i] = x[L->x[RB_TUKF_DQ].off + i];
    }
    memcpy(out[OUT_FT], x + L->x[RB_TUKF_FT].off, L->x[RB_TUKF_FT].len * sizeof(double));
    memcpy(out[OUT_CONTACTS], x + L->x[RB_TUKF_CONTACT].off, L->x[RB_TUKF_CONTACT].len * sizeof(double));
    if (u->model->floating) {
        memcpy(out[OUT_BASE], x + L->x[RB_TUKF_BASE_A].off, 3 * sizeof(double));
        memcpy(out[OUT_BASE] + 3, x + L->x[RB_TUKF_BASE_W].off, 3 * sizeof(double));
    }
    double *bias = out[OUT_BIAS];
    for (int k = RB_TUKF_FT_BIAS; k <= RB_TUKF_GYRO_BIAS; k++) {
        memcpy(bias, x + L->x[k].off, L->x[k].len * sizeof(double));
        bias += L->x[k].len;
    }
    rb_tukf_to_published(u->tm, d.P_diag, out[OUT_VAR]);
    memcpy(out[OUT_INNOVATION], d.innovation, u->M * sizeof(double));
    out[OUT_NIS][0] = d.nis;
    if (u->width[OUT_ADAPT])
        out[OUT_ADAPT][0] = u->ad_nis, out[OUT_ADAPT][1] = u->ad_inflation;
    if (u->width[OUT_CORRECTION])
        memcpy(out[OUT_CORRECTION], x + L->x[RB_TUKF_FRIC_CORR].off, u->width[OUT_CORRECTION] * sizeof(double));
}

int tq_ukf_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    ukft *u = state;
    bool q_ok = tq_finite(in[IN_Q], u->n);
    rb_tukf_sample s = {.q = in[IN_Q], .dq = in[IN_DQ], .current = in[IN_CURRENT], .friction = in[IN_FRICTION]};
    s.ft = q_ok ? tq_ukf_calib_step(u->cal, t, in) : in[IN_FT], s.acc = in[IN_ACC], s.gyro = in[IN_GYRO];
    int rc = RB_OK;
    if (!u->started) {
        if (!q_ok) { /* nothing to start from: no estimate yet */
            for (int o = 0; o < N_OUT; o++)
                for (size_t i = 0; i < u->width[o]; i++)
                    out[o][i] = NAN;
            return RB_OK;
        }
        rb_filter_set_step(u->ukf, (long)k);
        if ((rc = rb_tukf_configure(u->tm, in[IN_Q], err)) || (rc = rb_tukf_initial_state(u->tm, &s, u->x0, err)) ||
            (rc = rb_filter_set_state(u->ukf, u->x0, NULL, err)))
            return rc;
        u->started = true;
    } else {
        double dt = u->dt_param > 0 ? u->dt_param : t - u->t_prev;
        if (!(dt > 0) || !isfinite(dt))
            return rb_err_set(err, RB_EINPUT, "time %.17g s does not follow %.17g s", t, u->t_prev);
        rb_filter_set_step(u->ukf, (long)k - 1);
        if ((rc = rb_filter_predict(u->ukf, NULL, dt, err)))
            return name_failure(u, rc, err);
        if (q_ok && (rc = rb_tukf_configure(u->tm, in[IN_Q], err)))
            return rc;
    }
    u->t_prev = t;
    u->ad_nis = NAN, u->ad_inflation = 0.0;
    if (q_ok) {
        rb_tukf_measurement(u->tm, &s, u->z);
        if (u->jump) /* the prior, for a repeated update */
            rb_jump_keep_prior(u->jump, u->ukf);
        if ((rc = rb_filter_update(u->ukf, u->z, err)) ||
            (u->jump && (rc = rb_jump_update(u->jump, u->ukf, u->z, &u->ad_nis, &u->ad_inflation, err))))
            return name_failure(u, rc, err);
    }
    if (u->want_z && q_ok)
        normalize_innovations(u);
    else if (u->want_z)
        for (size_t j = 0; j < u->M; j++)
            u->inno_z[j] = NAN;
    write_outputs(u, out);
    return RB_OK;
}

/* The calibration's closing findings, then every note in one list: the IMU lists', the calibration's. */
int tq_ukf_finish(void *state, rb_err *err)
{
    ukft *u = state;
    int rc = tq_ukf_calib_finish(u->cal, err);
    const char *const *cal = NULL;
    size_t n_cal = rc ? 0 : tq_ukf_calib_notes(u->cal, &cal);
    if (!rc && u->n_notes + n_cal) {
        rb_free(u->all_notes);
        if (!(u->all_notes = rb_calloc(u->n_notes + n_cal, sizeof *u->all_notes)))
            return rb_err_set(err, RB_ENOMEM, "out of memory");
        for (size_t i = 0; i < u->n_notes; i++)
            u->all_notes[i] = u->notes[i];
        for (size_t i = 0; i < n_cal; i++)
            u->all_notes[u->n_notes + i] = cal[i];
        u->n_all_notes = u->n_notes + n_cal;
    }
    return rc;
}

size_t tq_ukf_notes(void *state, const char *const **lines)
{
    ukft *u = state;
    *lines = (const char *const *)u->all_notes;
    return u->n_all_notes;
}
