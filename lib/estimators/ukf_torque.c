/* ukf_torque: the joint-torque paper's UKF (seed 000 eq. 5-8; the public estimator's design, design notes
 * CONVENTIONS.md): joint torques tau_j = tau_m - tau_F from motor currents, joint velocities, FT sensors, IMUs and
 * (optionally) a friction measurement. ukft_doc below describes the estimator. The stage adapts ports and
 * parameters: the model (process, measurements, layout, start) is the dynamics module's (dynamics.h, rb_tukf_*),
 * the UKF and the jump adaptation the filters module's (filters.h, rb_ukf_create, rb_jump_*). */
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

/* Names, widths, counts: everything checkable before allocating. */
static int check_setup(const rb_stage_setup *st, rb_err *err)
{
    int rc = tq_need_model(st, err);
    if (rc)
        return rc;
    const rb_model *m = st->model;
    size_t n = m->n_dofs, nft = P(st, "ft_sensors")->count, nc = P(st, "contacts")->count;
    size_t nacc = P(st, "accelerometers")->count, ngyro = P(st, "gyroscopes")->count;
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
    if ((rc = tq_check_count(st, "q_contact", 6, nc, err)) || (rc = tq_check_count(st, "p0_contact", 6, nc, err)) ||
        (rc = tq_check_count(st, "q_base_imu", 6, 1, err)) || (rc = tq_check_count(st, "p0_base_imu", 6, 1, err)) ||
        (rc = tq_check_count(st, "r_acc", 3, nacc, err)) || (rc = tq_check_count(st, "q_acc_bias", 3, nacc, err)) ||
        (rc = tq_check_count(st, "r_gyro", 3, ngyro, err)) || (rc = tq_check_count(st, "q_gyro_bias", 3, ngyro, err)))
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
    return check_adapt(st, nft, err);
}

/* ---- set-up ----------------------------------------------------------------------------------------------------- */

static void ukft_destroy(void *state)
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
    rb_free(u);
}

/* The model from the parameters (names to model indices: check_setup found them all). */
static int make_model(ukft *u, const rb_stage_setup *st, rb_err *err)
{
    const rb_model *m = u->model;
    const rb_param_value *fts = P(st, "ft_sensors"), *cts = P(st, "contacts"), *acc = P(st, "accelerometers"),
                         *gyr = P(st, "gyroscopes");
    size_t n = u->n, nft = fts->count, nc = cts->count, nacc = acc->count, ngyro = gyr->count;
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
    o.f_batch = process_batch, o.h_batch = measure_batch, o.user = u->tm;
    o.alpha = rb_params_number(st->params, "alpha");
    o.beta = rb_params_number(st->params, "beta");
    o.kappa = rb_params_number(st->params, "kappa");
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
    ukft *u = rb_calloc(1, sizeof *u);
    if (!u)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    u->model = st->model, u->n = st->model->n_dofs;
    u->dt_param = rb_params_number(st->params, "dt");
    if ((rc = make_model(u, st, err)) || (rc = make_filter(u, st, err)) || (rc = make_jump(u, st, err)) ||
        (rc = make_strings(u, st, err))) {
        ukft_destroy(u);
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
}

static int ukft_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    ukft *u = state;
    bool q_ok = tq_finite(in[IN_Q], u->n);
    rb_tukf_sample s = {.q = in[IN_Q], .dq = in[IN_DQ], .current = in[IN_CURRENT], .friction = in[IN_FRICTION]};
    s.ft = in[IN_FT], s.acc = in[IN_ACC], s.gyro = in[IN_GYRO];
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
    write_outputs(u, out);
    return RB_OK;
}

/* ---- the type ---------------------------------------------------------------------------------------------------- */

static const char *const ukft_in[] = {"q", "dq", "current", "ft", "acc", "gyro", "friction"};
static const char *const ukft_out[] = {"tau_j", "tau_m", "tau_f", "dq",         "ft",  "contacts", "base",
                                       "bias",  "ddq",   "var",   "innovation", "nis", "adapt"};
/* Longer than the 4095 characters ISO C guarantees in one string literal; GCC and clang take any length. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
static const char ukft_doc[] =
    "The joint-torque paper's unscented Kalman filter (seed 000 eq. 5-8; the public\n"
    "RobotDynamicsEstimator's design): joint torques without torque sensors. The model (process,\n"
    "measurements, layout, start) is `roboest/dynamics.h`'s `rb_tukf_*`, the jump adaptation\n"
    "`roboest/filters.h`'s `rb_jump_*`; the stage adapts ports and parameters.\n"
    "\n"
    "`q` is not a state: the model is evaluated at the measured positions. The inputs `ft`, `acc`,\n"
    "`gyro` and `friction` are optional (width 0 when their lists are empty, or unwired). NaN in a\n"
    "measured input skips that element of the update; a sample with a non-finite `q` is predicted only.\n"
    "\n"
    "State (in the published order, as `var`): `dq` (n); `tau_m` (n, the motor torque at the joint,\n"
    "N m); `tau_F` (n); `ft` (6 per FT sensor: its reading in the sensor's convention, offset-corrected);\n"
    "`contacts` (6 per contact, BODY at the frame: its axes); for a floating base `base` (6: `a_B`, the\n"
    "proper linear acceleration of the base origin in base axes, and `w_B`, its angular velocity); the\n"
    "optional biases `ft_bias` (6 per FT sensor), `acc_bias` (3 per accelerometer), `gyro_bias` (3 per\n"
    "gyroscope).\n"
    "\n"
    "Process over `dt` (the clock's interval `t_k - t_(k-1)`, or the `dt` parameter), at the previous\n"
    "sample's q:\n"
    "\n"
    "    K(q) ddq + K_b(q) a + h(q, dq, w_B) = tau_m - tau_F - diag(R^2 J_m) ddq + G_ft y + G_c w\n"
    "\n"
    "the forward dynamics of every sub-model of the tree cut at the FT sensors (`roboest/dynamics.h`'s\n"
    "`rb_cut_dyn`; eq. 6), each sub-model's\n"
    "\n"
    "    M_ss ddq = tau_m - tau_F - R^2 J_m ddq - C - M_sb alpha_g + sum J_FT^T f_FT + J_c^T f_c\n"
    "\n"
    "(`J_c^T f_c`: the paper's `J_ext^T f_ext`) with its base acceleration `alpha_g` given by the joints\n"
    "above it, solved parents first by Cholesky factors of the `M_ss` blocks (no inverse formed). The\n"
    "robot's base acceleration is `a = [-g; 0]` for a fixed base (gravity enters once, as the base's\n"
    "proper acceleration) and `a = [a_B; 0]` for a floating one (eq. 7: the base's angular acceleration\n"
    "taken as zero). Then\n"
    "\n"
    "    dq+    = dq + dt ddq                                    (explicit Euler)\n"
    "    tau_F+ = tau_F                                          (\"random_walk\", eq. 8)\n"
    "           = tau_F + dt ddq (k2 + k0 k1 / cosh^2(k1 dq))    (\"rate_model\")\n"
    "    w+     = w - dt k w                                     (contacts; k = contact_decay, 0: random walk)\n"
    "\n"
    "and every other block constant (a random walk); the process noise is `diag(q_*)` per step.\n"
    "\n"
    "Measurements (in the published order, as `innovation`): `dq` (n); the motor currents\n"
    "`i = tau_m / (k_t R)` (n, R the SIGNED gear ratio); `friction = tau_F` (n, when wired: a friction\n"
    "model's output measures the `tau_F` block, the paper's key idea); `ft` = the FT state + `ft_bias`\n"
    "(6 per FT sensor); each accelerometer the proper acceleration of its frame (frame axes) from `a`,\n"
    "the process model's `ddq` at the state and the velocity-product terms, + `acc_bias` (3 each); each\n"
    "gyroscope the angular velocity of its frame from `w_B` and `dq`, + `gyro_bias` (3 each); the\n"
    "measurement noise is `diag(r_*)`.\n"
    "\n"
    "The UKF is the filters module's (`alpha`, `beta`, `kappa`; fresh sigma points for the update,\n"
    "Cholesky square root, no explicit inverse, P kept symmetric), its sigma points evaluated in batch:\n"
    "the model's matrices at q are computed once per sample.\n"
    "\n"
    "Start (the first sample with a finite `q`, then updated with that sample): `dq` measured,\n"
    "`tau_m = R k_t i_m`, `tau_F = 0`, contacts 0, biases 0, a floating base's block from `base_imu` by\n"
    "eq. 7 (`w_B = R_BS w_S`, `a_B = R_BS a_S - w_B x (w_B x p_BS)`), and the FT states the readings the\n"
    "model predicts for the measured q, dq and zero joint accelerations with the robot balanced on its\n"
    "contacts (a fixed base: one wrench at the base link). With `ft_offset` `\"first_sample\"` the offset\n"
    "`o = f_measured(0) - f_predicted(0)` is subtracted from every later reading (the robot should be\n"
    "still at the start); with `\"none\"` the FT states start at the readings (use it when the log does not\n"
    "start at rest).\n"
    "\n"
    "Jump adaptation (opt-in: `adapt_probability` in (0, 1); 0, the default, is off and changes nothing;\n"
    "the model and why:\n"
    "[paper/README.md](paper/README.md#the-humanoid-the-right-leg-of-the-balancing-floating-base-humanoid),\n"
    "\"The humanoid\"): an innovation-triggered covariance inflation for jumps of the random-walk blocks (a\n"
    "controller's torque step, a load or contact change) that their small per-step variance follows\n"
    "slowly. After the sample's update, the currents' NIS `nu_c^T S_cc^-1 nu_c` (the rows and columns of\n"
    "the currents used, c of them) is compared with the chi-square quantile\n"
    "`rb_chi2_quantile(adapt_probability, c)`: the current measures `tau_m` alone and exactly (H diagonal,\n"
    "no model error), so its NIS is the one that reveals a torque step and stays calibrated when the\n"
    "dynamics or IMU models are off. Above the gate, the update is repeated from the same prior x with\n"
    "the prior variance of the `adapt_blocks` raised by the innovation's shortfall (one-sample covariance\n"
    "matching, `E[nu_i^2] = S_ii`), times `adapt_scale`:\n"
    "\n"
    "    tau_m,i and/or tau_F,i  + (k_t R)_i^2 max(0, nu_i^2 - S_ii)     (nu_i, S_ii: current i)\n"
    "    ft element e            + max(0, nu_e^2 - S_ee)                  (its FT reading's)\n"
    "\n"
    "so the sample that shows the jump absorbs it (applying it to the next prediction instead would\n"
    "leave this sample's estimate a step behind and let the state's correlations spread the jump into the\n"
    "other blocks first). `tau_F` is not in the default: a current innovation says nothing about\n"
    "friction, and a `tau_F` as free as `tau_m` lets the dynamics cancel the jump. The FT states are: a\n"
    "torque step moves the contact and FT wrenches too, and FT states that lag force the dynamics to hold\n"
    "`tau_j` back. It costs one more update on triggered samples, and no allocation.\n"
    "\n"
    "Errors in a step: RB_ENUMERIC when the state covariance loses positive definiteness, the innovation\n"
    "covariance does, or the state or predicted measurements stop being finite, naming the block and\n"
    "element; the runner prefixes the stage and the sample (`stage ukf (ukf_torque): sample 0 (t = 0 s):\n"
    "the innovation covariance lost positive definiteness at measurement acc/forearm/x: ...`). A\n"
    "sub-model's mass matrix that is not positive definite stops the run too, naming the sub-model and\n"
    "the joint.\n"
    "\n"
    "Like `rnea_torque`, this stage needs the pipeline's `model` key (`rb_stage_setup.model`): every\n"
    "joint vector (n = the model's joints) follows `model.joints`, and joint-vector inputs whose element\n"
    "names are model joints must be bound in that order. Configuration errors (RB_ECONFIG) name the\n"
    "parameter and item: a misspelt FT sensor or frame (with the closest model name), an input whose\n"
    "width does not fit the parameters, a per-element array of the wrong length.\n"
    "\n"
    "Per-element parameters take one value for all, or one per element: per joint 1 or n values; per FT\n"
    "sensor 1, 6 (the same for each) or 6 n_ft; per contact 1, 6 or 6 n_c; per IMU 1, 3 or 3 n_imu.\n"
    "Variances are the diagonal entries of the covariance matrices; the process ones are per step. The\n"
    "defaults are the public ergoCub configuration's (tuned for 100 Hz). A pipeline with the friction\n"
    "measurement wires a friction stage's output into `friction`:\n"
    "\n"
    "    {\"id\": \"ukf\", \"type\": \"ukf_torque\",\n"
    "     \"in\": {\"q\": \"q\", \"dq\": \"dq\", \"current\": \"current\", \"ft\": \"ft\",\n"
    "            \"acc\": \"acc\", \"gyro\": \"gyro\", \"friction\": \"tau_f_model\"},\n"
    "     \"out\": {\"tau_j\": \"tau_ukf\", \"nis\": \"nis\"},\n"
    "     \"params\": {\"ft_sensors\": [\"upper_arm_ft_sensor\", \"wrist_ft_sensor\"],\n"
    "                \"accelerometers\": [\"hand_acc\"], \"gyroscopes\": [\"hand_gyro\"],\n"
    "                \"k_t\": [0.05, 0.05, 0.05, 0.04], \"gear_ratio\": [-100, 160, -100, 100],\n"
    "                \"r_friction\": [2.5e-3]}}\n";
#pragma GCC diagnostic pop
static const char *const ukft_in_docs[] = {
    "n values, rad: the joint positions (not a state: the model is evaluated at the measured q)", /* q */
    "n values, rad/s: the joint velocities",                                                      /* dq */
    "n values, A: the motor currents",                                                            /* current */
    "6 per sensor of `ft_sensors`, in that order, each as the sensor reports it (N, N m)",        /* ft */
    "3 per frame of `accelerometers`, m/s^2: their proper accelerations",                         /* acc */
    "3 per frame of `gyroscopes`, rad/s: their angular velocities",                               /* gyro */
    "n values, N m: a friction stage's `tau_F`, measuring the state's `tau_F` block",             /* friction */
};
static const char *const ukft_out_docs[] = {
    "n values, N m: the joint torques `tau_m - tau_F - R^2 J_m ddq` (`tau_m - tau_F` with "
    "`motor_inertia` 0, as in the paper)",                                     /* tau_j */
    "n values, N m: the motor torque at the joint",                            /* tau_m */
    "n values, N m: the friction torque `tau_F`",                              /* tau_f */
    "n values, rad/s: the joint velocities",                                   /* dq */
    "6 per FT sensor (N, N m): the FT states, the readings offset-corrected",  /* ft */
    "6 per contact (N, N m): the contact wrenches, BODY at the contact frame", /* contacts */
    "6 for a floating base (`a_x`, `a_y`, `a_z` in m/s^2: `a_B`; `w_x`, `w_y`, `w_z` in rad/s: "
    "`w_B`), 0 wide otherwise", /* base */
    "the bias blocks in order, `ft_bias/<sensor>/<axis>`, `acc_bias/<frame>/<axis>`, "
    "`gyro_bias/<frame>/<axis>`; 0 wide without",                                 /* bias */
    "n values, rad/s^2: the process model's joint accelerations at the estimate", /* ddq */
    "one per state element: the diagonal of P after the update, in the published state order; names "
    "`<block>/<element>`, units the state's squared", /* var */
    "one per measurement: `z - zhat`, NaN where skipped; names `dq/<joint>`, `current/<joint>`, "
    "`friction/<joint>`, `ft/<sensor>/<axis>`, `acc/<frame>/<axis>`, `gyro/<frame>/<axis>`", /* innovation */
    "1 value, unit `1`: the update's normalized innovation squared `nu^T S^-1 nu` over the "
    "measurements used (NaN if none)", /* nis */
    "2 values with `adapt_probability` > 0, else 0 wide: `nis_current`, the NIS of the motor "
    "currents' block of the sample's first update (NaN without an update), and `inflation`, the "
    "variance added per joint to the `tau_m` / `tau_F` of `adapt_blocks`, summed over the joints ((N "
    "m)^2; 0: the gate was not crossed, or no current's innovation exceeded its `S_ii`)", /* adapt */
};
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

#define NUMS_MORE(nm, def, lo_excl, doc_, details_)                                                                    \
    {                                                                                                                  \
        .name = nm, .kind = RB_PARAM_NUMBER_ARRAY, .def_numbers = def, .def_count = sizeof def / sizeof def[0],        \
        .min_count = 1, .has_min = true, .min = 0, .min_exclusive = lo_excl, .doc = doc_, .details = details_          \
    }
#define NUMS(nm, def, lo_excl, doc_) NUMS_MORE(nm, def, lo_excl, doc_, NULL)
#define NAMES(nm, doc_)                                                                                                \
    {                                                                                                                  \
        .name = nm, .kind = RB_PARAM_STRING_ARRAY, .doc = doc_, .details = "default `[]`"                              \
    }
#define FLAG(nm, doc_)                                                                                                 \
    {                                                                                                                  \
        .name = nm, .kind = RB_PARAM_BOOLEAN, .doc = doc_                                                              \
    }

static const rb_param_spec ukft_params[] = {
    NAMES("ft_sensors", "the model's FT sensors the tree is cut at (the ft input: 6 values each, in this order)"),
    NAMES("contacts", "frames with an unknown contact wrench in the state (BODY: frame axes, about its origin)"),
    NAMES("accelerometers", "frames of the accelerometers of the acc input (3 values each, m/s^2, proper)"),
    NAMES("gyroscopes", "frames of the gyroscopes of the gyro input (3 values each, rad/s)"),
    {.name = "base_imu",
     .kind = RB_PARAM_STRING,
     .doc = "floating base: the IMU frame on the base link (listed in accelerometers and gyroscopes) that starts the "
            "base state (eq. 7)",
     .details = "required for a floating base, rejected for a fixed base"},
    {.name = "k_t",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .required = true,
     .min_count = 1,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "motor torque constants, N m/A (1 or n values)"},
    {.name = "gear_ratio",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .required = true,
     .min_count = 1,
     .doc = "signed gear ratios R (theta_motor = R q; 1 or n values, non-zero); i_m = tau_m / (k_t R)",
     .details = "e.g. -160"},
    NUMS_MORE("motor_inertia", d_zero, false,
              "rotor inertias J_m, kg m^2 (rotor side; 1 or n values): tau_j = tau_m - tau_F - R^2 J_m ddq; 0: "
              "neglected as in the paper",
              "`R^2 J_m` joins each joint's inertia; neglecting it is wrong for light joints behind high reductions"),
    {.name = "alpha",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1.0,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "sigma-point spread"},
    {.name = "beta", .kind = RB_PARAM_NUMBER, .def_number = 2.0, .doc = "prior-distribution weight (2: Gaussian)"},
    {.name = "kappa", .kind = RB_PARAM_NUMBER, .def_number = 0.0, .doc = "secondary scaling"},
    {.name = "dt",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.0,
     .has_min = true,
     .min = 0,
     .doc = "process step, s; 0: the clock's interval t_k - t_(k-1)"},
    NUMS("q_dq", d_q_dq, false, "process variance per step of dq, (rad/s)^2 (1 or n values)"),
    NUMS("q_tau_m", d_q_tau_m, false, "process variance per step of tau_m, (N m)^2 (1 or n)"),
    NUMS("q_tau_f", d_q_tau_f, false, "process variance per step of tau_F, (N m)^2 (1 or n)"),
    NUMS("q_ft", d_q_ft, false, "process variance per step of the FT wrenches, N^2 and (N m)^2 (1, 6 or 6 n_ft)"),
    NUMS("q_contact", d_q_contact, false, "process variance per step of the contact wrenches (1, 6 or 6 n_c)"),
    NUMS_MORE("q_base_imu", d_q_base, false, "process variance per step of [a_B, w_B] (floating; 1 or 6)",
              "(m/s^2)^2 for `a_B`, (rad/s)^2 for `w_B`"),
    NUMS("q_ft_bias", d_q_bias, false, "process variance per step of the FT biases (1, 6 or 6 n_ft)"),
    NUMS("q_acc_bias", d_q_bias, false, "process variance per step of the accelerometer biases (1, 3 or 3 n_acc)"),
    NUMS("q_gyro_bias", d_q_bias, false, "process variance per step of the gyroscope biases (1, 3 or 3 n_gyro)"),
    NUMS("p0_dq", d_p0, true, "initial variance of dq, (rad/s)^2 (1 or n)"),
    NUMS("p0_tau_m", d_p0, true, "initial variance of tau_m, (N m)^2 (1 or n)"),
    NUMS("p0_tau_f", d_p0, true, "initial variance of tau_F, (N m)^2 (1 or n)"),
    NUMS("p0_ft", d_p0, true, "initial variance of the FT wrenches (1, 6 or 6 n_ft)"),
    NUMS("p0_contact", d_p0, true, "initial variance of the contact wrenches (1, 6 or 6 n_c)"),
    NUMS("p0_base_imu", d_p0, true, "initial variance of [a_B, w_B] (floating; 1 or 6)"),
    {.name = "p0_bias",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = d_p0_bias,
     .def_count = 1,
     .min_count = 1,
     .max_count = 1,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "initial variance of every bias element (one value)"},
    NUMS("r_dq", d_r_dq, true, "measurement variance of dq, (rad/s)^2 (1 or n)"),
    NUMS("r_current", d_r_current, true, "measurement variance of the motor currents, A^2 (1 or n)"),
    NUMS("r_friction", d_r_friction, true, "measurement variance of the friction input, (N m)^2 (1 or n)"),
    NUMS("r_ft", d_r_ft, true, "measurement variance of the FT readings, N^2 and (N m)^2 (1, 6 or 6 n_ft)"),
    NUMS("r_acc", d_r_acc, true, "measurement variance of the accelerometers, (m/s^2)^2 (1, 3 or 3 n_acc)"),
    NUMS("r_gyro", d_r_gyro, true, "measurement variance of the gyroscopes, (rad/s)^2 (1, 3 or 3 n_gyro)"),
    {.name = "friction_dynamics",
     .kind = RB_PARAM_STRING,
     .def_string = "random_walk",
     .choices = friction_choices,
     .doc = "tau_F process: \"random_walk\" (the paper) or \"rate_model\" (the public estimator's older "
            "tau_F+ = tau_F + dt ddq (k2 + k0 k1 / cosh^2(k1 dq)))"},
    {.name = "friction_k0",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = d_zero,
     .def_count = 1,
     .min_count = 1,
     .doc = "rate model k0, N m (1 or n); required with \"rate_model\", rejected otherwise",
     .details = "the rate model's friction is `k0 tanh(k1 dq) + k2 dq`"},
    {.name = "friction_k1",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = d_zero,
     .def_count = 1,
     .min_count = 1,
     .doc = "rate model k1, s/rad (1 or n); required with \"rate_model\", rejected otherwise",
     .details = "the rate model's friction is `k0 tanh(k1 dq) + k2 dq`"},
    {.name = "friction_k2",
     .kind = RB_PARAM_NUMBER_ARRAY,
     .def_numbers = d_zero,
     .def_count = 1,
     .min_count = 1,
     .doc = "rate model k2, N m s/rad (1 or n); required with \"rate_model\", rejected otherwise",
     .details = "the rate model's friction is `k0 tanh(k1 dq) + k2 dq`"},
    {.name = "contact_decay",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.0,
     .has_min = true,
     .min = 0,
     .doc = "contact wrench decay rate k, 1/s: f+ = f - dt k f (0: random walk)"},
    FLAG("ft_bias", "FT bias states (measured FT = state + bias)"),
    FLAG("acc_bias", "accelerometer bias states"),
    FLAG("gyro_bias", "gyroscope bias states"),
    {.name = "ft_offset",
     .kind = RB_PARAM_STRING,
     .def_string = "first_sample",
     .choices = offset_choices,
     .doc = "\"first_sample\": o = f_measured(0) - f_predicted(0) subtracted from every reading; \"none\"",
     .details = "`\"first_sample\"` needs the robot still at the start; with `\"none\"` the FT states start at the "
                "readings (for a log that does not start at rest)"},
    {.name = "adapt_probability",
     .kind = RB_PARAM_NUMBER,
     .def_number = 0.0,
     .has_min = true,
     .min = 0,
     .has_max = true,
     .max_exclusive = true,
     .max = 1,
     .doc = "jump adaptation: the chi-square probability of the motor currents' NIS gate (e.g. 0.9999; dof = currents "
            "used); above it the prior variance of adapt_blocks is inflated and the update repeated; 0: off",
     .details = "off (0, or absent) changes nothing"},
    {.name = "adapt_blocks",
     .kind = RB_PARAM_STRING_ARRAY,
     .def_strings = adapt_default,
     .def_count = 2,
     .min_count = 1,
     .choices = adapt_choices,
     .doc = "blocks the jump adaptation inflates: \"tau_m\", \"tau_f\" (by the current's variance shortfall), \"ft\" "
            "(by the FT readings' own; the default's \"ft\" does nothing without FT sensors)",
     .details = "default `[\"tau_m\", \"ft\"]`; given explicitly, `\"ft\"` needs FT sensors; rejected without "
                "`adapt_probability`"},
    {.name = "adapt_scale",
     .kind = RB_PARAM_NUMBER,
     .def_number = 1.0,
     .has_min = true,
     .min_exclusive = true,
     .min = 0,
     .doc = "factor on the jump adaptation's inflation (1: the innovation made consistent)",
     .details = "rejected without `adapt_probability`"},
};
#undef NUMS
#undef NUMS_MORE
#undef NAMES
#undef FLAG

const rb_stage_type rb_stage_ukf_torque = {
    .version = RB_STAGE_TYPE_VERSION,
    .name = "ukf_torque",
    .summary = "joint torques tau_m - tau_F by the joint-torque paper's UKF: motor currents, joint velocities, FT "
               "sensors, IMUs and an optional friction measurement, sub-model forward dynamics as process",
    .doc = ukft_doc,
    .inputs = ukft_in,
    .input_docs = ukft_in_docs,
    .n_inputs = N_IN,
    .optional_inputs = (1u << IN_FT) | (1u << IN_ACC) | (1u << IN_GYRO) | (1u << IN_FRICTION),
    .outputs = ukft_out,
    .output_docs = ukft_out_docs,
    .n_outputs = N_OUT,
    .params = ukft_params,
    .n_params = sizeof ukft_params / sizeof ukft_params[0],
    .create = ukft_create,
    .step = ukft_step,
    .finish = NULL,
    .destroy = ukft_destroy,
};
