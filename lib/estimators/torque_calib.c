/* The start-up FT offset over a still window and ukf_torque's motor-constant check (see torque_calib.h). */
#include "torque_calib.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const tq_offset_choices[] = {"first_sample", "still_window", "none", NULL};

/* ---- the start-up FT offset ------------------------------------------------------------------------------------ */

int tq_ftoff_init(tq_ftoff *c, const rb_params *p, size_t m, rb_err *err)
{
    memset(c, 0, sizeof *c);
    const char *mode = rb_params_string(p, "ft_offset");
    const rb_param_value *win = rb_params_get(p, "ft_offset_window");
    c->mode = !mode || strcmp(mode, "none") == 0  ? TQ_OFF_NONE
              : strcmp(mode, "still_window") == 0 ? TQ_OFF_WINDOW
                                                  : TQ_OFF_FIRST;
    rb_still_offset_cfg cfg = {.first_only = c->mode == TQ_OFF_FIRST,
                               .speed = rb_params_number(p, "ft_offset_still_speed"),
                               .t_max = rb_params_number(p, "ft_offset_still_max")};
    c->t_min = rb_params_number(p, "ft_offset_still_min");
    bool still_given = rb_params_get(p, "ft_offset_still_speed")->given ||
                       rb_params_get(p, "ft_offset_still_min")->given || rb_params_get(p, "ft_offset_still_max")->given;
    if (c->mode != TQ_OFF_WINDOW && (win->given || still_given))
        return rb_err_set(err, RB_ECONFIG, "%s needs ft_offset \"still_window\"",
                          win->given ? "ft_offset_window" : "ft_offset_still_speed, _min and _max");
    if (win->given) {
        if (win->count != 2)
            return rb_err_set(err, RB_ECONFIG, "ft_offset_window has %zu values, expected 2 ([t0, t1] in s)",
                              win->count);
        cfg.given = true, cfg.w0 = win->numbers[0], cfg.w1 = win->numbers[1];
        if (!(cfg.w1 > cfg.w0))
            return rb_err_set(err, RB_ECONFIG, "ft_offset_window [%g, %g]: t1 must be after t0", cfg.w0, cfg.w1);
        if (still_given)
            return rb_err_set(err, RB_ECONFIG,
                              "ft_offset_still_speed, _min and _max detect the window: not with ft_offset_window");
    }
    if (cfg.t_max < c->t_min)
        return rb_err_set(err, RB_ECONFIG, "ft_offset_still_max %g s is below ft_offset_still_min %g s", cfg.t_max,
                          c->t_min);
    if (m == 0)
        c->mode = TQ_OFF_NONE;
    return rb_still_offset_init(&c->est, &cfg, m, err);
}

void tq_ftoff_free(tq_ftoff *c) { rb_still_offset_free(&c->est); }

void tq_ftoff_finish(tq_ftoff *c)
{
    const rb_still_offset *o = &c->est;
    c->note[0] = '\0';
    if (c->mode != TQ_OFF_WINDOW || !o->started)
        return;
    if (o->cfg.given && o->n_avg == 0)
        snprintf(c->note, sizeof c->note,
                 "ft_offset_window [%g, %g] s held no complete sample: the FT offset is the first sample's", o->cfg.w0,
                 o->cfg.w1);
    else if (!o->cfg.given && o->t_end - o->t_first < c->t_min && o->n_avg == 0)
        snprintf(c->note, sizeof c->note,
                 "ft_offset \"still_window\": no still window at the start (a joint moved faster than %g rad/s at the "
                 "first sample): the FT offset is the first sample's",
                 o->cfg.speed);
    else if (!o->cfg.given && o->t_end - o->t_first < c->t_min)
        snprintf(c->note, sizeof c->note,
                 "ft_offset \"still_window\": no still window at the start (%s %.3g s after the first sample, "
                 "ft_offset_still_min %g s): the FT offset is the mean of the %zu still samples before",
                 o->frozen ? "a joint moved" : "the log ended", o->t_end - o->t_first, c->t_min, o->n_avg);
}

/* ---- ukf_torque's offset and check -------------------------------------------------------------------------------- */

enum { P_Q, P_DQ, P_CURRENT, P_FT, P_ACC, P_GYRO };
enum { S_N, S_S, S_X, S_SS, S_SX, S_XX, S_Y, S_SY, S_XY, S_YY, N_SUMS }; /* per joint: sums for the regression */
#define CHECK_MIN_SAMPLES 200                                            /* below: the joint is not judged */
#define CHECK_DDQ_TIME 0.02 /* s: time constant of the low-pass on d(dq)/dt (the inertial torques of the check) */

struct tq_ukf_calib {
    const rb_model *model;
    size_t n, m, port;
    bool pass_corrected; /* "still_window": the UKF gets f - o */
    tq_ftoff off;
    rb_submodels *sm;
    rb_ft_est *est_pred, *est_tau; /* the offset's prediction (as rb_tukf_initial_state's), the check's torques */
    bool no_wrench;                /* floating base without contacts: predicted with none */
    size_t acc_i, gyro_i;          /* floating: the base IMU in the acc and gyro inputs */
    bool check;
    double v_lo, v_hi, min_spread, min_corr;
    double *ktR, *sums;                    /* n, N_SUMS n */
    double *pred, *corr, *tau, *dq0, *sdd; /* m, m, n, n, n (sdd: zero) */
    double *ddq, *dq_prev, t_prev;         /* n, n: the check's joint accelerations, d(dq)/dt low-passed */
    bool have_prev;
    char **lines;
    size_t n_lines;
};

void tq_ukf_calib_free(tq_ukf_calib *c)
{
    if (!c)
        return;
    tq_ftoff_free(&c->off);
    rb_ft_est_free(c->est_pred);
    rb_ft_est_free(c->est_tau);
    rb_submodels_free(c->sm);
    rb_free(c->ktR);
    for (size_t i = 0; i < c->n_lines; i++)
        rb_free(c->lines[i]);
    rb_free(c->lines);
    rb_free(c);
}

static size_t list_index(const rb_param_value *v, const char *name)
{
    for (size_t i = 0; i < v->count; i++)
        if (strcmp(v->strings[i], name) == 0)
            return i;
    return 0;
}

int tq_ukf_calib_create(const rb_stage_setup *st, size_t port, tq_ukf_calib **out, rb_err *err)
{
    const rb_model *m = st->model;
    const rb_params *p = st->params;
    const rb_param_value *fts = rb_params_get(p, "ft_sensors"), *cts = rb_params_get(p, "contacts");
    const char *base_imu = rb_params_string(p, "base_imu");
    *out = NULL;
    tq_ukf_calib *c = rb_calloc(1, sizeof *c);
    if (!c)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    c->model = m, c->n = m->n_dofs, c->m = 6 * fts->count, c->port = port;
    int rc = tq_ftoff_init(&c->off, p, c->m, err);
    if (rc)
        goto fail;
    c->pass_corrected = c->off.mode == TQ_OFF_WINDOW;
    c->check = rb_params_boolean(p, "check_constants") && c->m > 0;
    c->v_lo = rb_params_number(p, "check_speed_min"), c->v_hi = rb_params_number(p, "check_speed_max");
    c->min_spread = rb_params_number(p, "check_min_spread");
    c->min_corr = rb_params_number(p, "check_min_correlation");
    if (!(c->v_hi > c->v_lo)) {
        rc = rb_err_set(err, RB_ECONFIG, "check_speed_max %g rad/s must be above check_speed_min %g rad/s", c->v_hi,
                        c->v_lo);
        goto fail;
    }
    size_t n = c->n;
    if (!(c->ktR = rb_calloc((N_SUMS + 6) * n + 2 * c->m + 1, sizeof *c->ktR))) {
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
        goto fail;
    }
    c->sums = c->ktR + n, c->tau = c->sums + N_SUMS * n, c->dq0 = c->tau + n, c->sdd = c->dq0 + n;
    c->pred = c->sdd + n, c->corr = c->pred + c->m;
    c->ddq = c->corr + c->m, c->dq_prev = c->ddq + n;
    for (size_t i = 0; i < n; i++)
        c->ktR[i] = tq_value(rb_params_get(p, "k_t"), 1, i, 0) * tq_value(rb_params_get(p, "gear_ratio"), 1, i, 0);
    if (base_imu) {
        c->acc_i = list_index(rb_params_get(p, "accelerometers"), base_imu);
        c->gyro_i = list_index(rb_params_get(p, "gyroscopes"), base_imu);
    }
    if (c->m == 0 || (c->off.mode == TQ_OFF_NONE && !c->check)) {
        *out = c;
        return RB_OK;
    }
    /* the prediction balances the robot on its contacts (a fixed base: on its mounting), as the model's start */
    const char *mount[1] = {m->bodies[0].name};
    bool own = m->floating && cts->count > 0;
    c->no_wrench = m->floating && cts->count == 0;
    if ((rc = rb_submodels_build(m, (const char *const *)fts->strings, fts->count, &c->sm, err)) ||
        (rc = rb_ft_est_alloc(m, c->sm, base_imu, own ? (const char *const *)cts->strings : mount,
                              own ? cts->count : (m->floating ? 0 : 1), &c->est_pred, err)) ||
        (c->check &&
         (rc = rb_ft_est_alloc(m, c->sm, base_imu, (const char *const *)cts->strings, cts->count, &c->est_tau, err))))
        goto fail;
    *out = c;
    return RB_OK;
fail:
    tq_ukf_calib_free(c);
    return rc;
}

/* The check's samples of joint i: slow but moving, with a finite current. */
static bool check_sample(const tq_ukf_calib *c, const double *dq, const double *cur, size_t i)
{
    double v = fabs(dq[i]);
    return v >= c->v_lo && v <= c->v_hi && isfinite(cur[i]);
}

static void check_add(tq_ukf_calib *c, const double *dq, const double *cur)
{
    for (size_t i = 0; i < c->n; i++) {
        if (!check_sample(c, dq, cur, i) || !isfinite(c->tau[i]))
            continue;
        double s = dq[i] > 0 ? 1.0 : -1.0, x = c->tau[i], y = c->ktR[i] * cur[i], *S = c->sums + N_SUMS * i;
        S[S_N] += 1, S[S_S] += s, S[S_X] += x, S[S_SS] += s * s, S[S_SX] += s * x, S[S_XX] += x * x;
        S[S_Y] += y, S[S_SY] += s * y, S[S_XY] += x * y, S[S_YY] += y * y;
    }
}

const double *tq_ukf_calib_step(tq_ukf_calib *c, double t, const double *const *in)
{
    const double *q = in[c->port + P_Q], *dq = in[c->port + P_DQ], *cur = in[c->port + P_CURRENT];
    const double *ft = in[c->port + P_FT];
    size_t n = c->n, m = c->m;
    if (m == 0 || (c->off.mode == TQ_OFF_NONE && !c->check))
        return ft;
    if (c->check && tq_finite(dq, n)) {
        if (c->have_prev && t > c->t_prev) {
            double dt = t - c->t_prev, al = dt / (CHECK_DDQ_TIME + dt);
            for (size_t i = 0; i < n; i++)
                c->ddq[i] += al * ((dq[i] - c->dq_prev[i]) / dt - c->ddq[i]);
        }
        memcpy(c->dq_prev, dq, n * sizeof *dq);
        c->t_prev = t, c->have_prev = true;
    }
    /* a floating base without its IMU reading: only the first sample's offset (or0, as the model's start) */
    bool imu_ok = !c->model->floating || (tq_finite(in[c->port + P_ACC] + 3 * c->acc_i, 3) &&
                                          tq_finite(in[c->port + P_GYRO] + 3 * c->gyro_i, 3));
    bool collect = tq_ftoff_collecting(&c->off) && (imu_ok || !c->off.est.started), check = false;
    for (size_t i = 0; c->check && imu_ok && !check && i < n; i++)
        check = check_sample(c, dq, cur, i);
    if (collect || check) {
        rb_ft_est_input ei;
        memset(&ei, 0, sizeof ei);
        for (size_t i = 0; i < n; i++)
            c->dq0[i] = isfinite(dq[i]) ? dq[i] : 0.0;
        ei.s = q, ei.s_dot = c->dq0, ei.s_ddot = c->sdd, ei.n = n, ei.n_ft_values = m;
        if (c->model->floating) {
            const double *a = in[c->port + P_ACC] + 3 * c->acc_i, *w = in[c->port + P_GYRO] + 3 * c->gyro_i;
            for (int k = 0; k < 3; k++)
                ei.acc[k] = isfinite(a[k]) ? a[k] : 0.0, ei.gyro[k] = isfinite(w[k]) ? w[k] : 0.0;
        } else {
            tq_fixed_base_acc(c->model, ei.acc);
        }
        rb_err scratch;
        static const double none[1] = {0.0};
        if (collect && rb_ft_est_predict_ft(c->model, c->est_pred, &ei, c->no_wrench ? none : NULL, c->pred, m, NULL, 0,
                                            &scratch) == RB_OK)
            tq_ftoff_add(&c->off, t, dq, n, ft, c->pred);
        for (size_t i = 0; i < m; i++)
            c->corr[i] = ft[i] - c->off.est.offset[i];
        ei.ft = c->corr;
        ei.s_ddot = c->ddq;
        if (check && tq_finite(c->corr, m) &&
            rb_ft_est_torques(c->model, c->est_tau, &ei, c->tau, n, NULL, 0, &scratch) == RB_OK)
            check_add(c, dq, cur);
    } else if (c->pass_corrected) {
        for (size_t i = 0; i < m; i++)
            c->corr[i] = ft[i] - c->off.est.offset[i];
    }
    return c->pass_corrected ? c->corr : ft;
}

/* The slope between k_t R i (y) and the FT-based torque x with an intercept and sign(dq) as nuisance regressors (the
 * Frisch-Waugh-Lovell partial regression, from the sums), and x's spread beyond them. False: too few samples. Both
 * are noisy (x carries the differentiated velocity's noise, y the friction the sign does not model), so the slope is
 * the reduced major axis sign(xy) sqrt(yy / xx), not y on x: that one shrinks by the correlation (0.41 for 0.70 on
 * a hip yaw of other_robot_motion.mat whose torque barely varies, a false scale warning). */
static bool check_fit(const double *S, double *slope, double *spread, double *corr)
{
    double n = S[S_N];
    if (n < CHECK_MIN_SAMPLES)
        return false;
    double n1 = S[S_SS] - S[S_S] * S[S_S] / n; /* sign(dq) once centred: 0 when the joint moved one way only */
    double xe1 = S[S_SX] - S[S_S] * S[S_X] / n, ye1 = S[S_SY] - S[S_S] * S[S_Y] / n;
    double xx = S[S_XX] - S[S_X] * S[S_X] / n, xy = S[S_XY] - S[S_X] * S[S_Y] / n;
    double yy = S[S_YY] - S[S_Y] * S[S_Y] / n;
    if (n1 > 1e-9 * n)
        xx -= xe1 * xe1 / n1, xy -= xe1 * ye1 / n1, yy -= ye1 * ye1 / n1;
    *spread = sqrt(fmax(xx, 0.0) / n);
    *slope = xx > 0 && yy >= 0 ? copysign(sqrt(yy / xx), xy) : NAN;
    *corr = xx > 0 && yy > 0 ? xy / sqrt(xx * yy) : 0.0;
    return true;
}

static int add_line(tq_ukf_calib *c, rb_err *err, const char *text)
{
    char **l = rb_realloc(c->lines, (c->n_lines + 1) * sizeof *l);
    if (!l)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    c->lines = l;
    if (!(l[c->n_lines] = rb_strdup(text)))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    c->n_lines++;
    return RB_OK;
}

int tq_ukf_calib_finish(tq_ukf_calib *c, rb_err *err)
{
    for (size_t i = 0; i < c->n_lines; i++)
        rb_free(c->lines[i]);
    c->n_lines = 0;
    tq_ftoff_finish(&c->off);
    int rc = c->off.note[0] ? add_line(c, err, c->off.note) : RB_OK;
    char buf[512];
    for (size_t i = 0; !rc && c->check && i < c->n; i++) {
        const double *S = c->sums + N_SUMS * i;
        double a, spread, r;
        const char *joint = c->model->dof_names[i];
        if (!check_fit(S, &a, &spread, &r) || !(spread >= c->min_spread) || !(fabs(r) >= c->min_corr) || !isfinite(a))
            continue; /* not judged (documented): too few samples, too little torque variation or in common */
        if (a < 0)
            snprintf(buf, sizeof buf,
                     "joint %s: the motor torque k_t R i and the FT-based joint torque disagree in sign (slope %.3g "
                     "over %.0f slow samples, correlation %.2f): check the sign of its gear_ratio",
                     joint, a, S[S_N], r);
        else if (a < 0.5 || a > 2.0)
            snprintf(buf, sizeof buf,
                     "joint %s: the motor torque k_t R i is %.3g times the FT-based joint torque (slope over %.0f slow "
                     "samples, correlation %.2f, expected near 1): check its k_t and the magnitude of its gear_ratio",
                     joint, a, S[S_N], r);
        else
            continue;
        rc = add_line(c, err, buf);
    }
    return rc;
}

size_t tq_ukf_calib_notes(tq_ukf_calib *c, const char *const **lines)
{
    *lines = (const char *const *)c->lines;
    return c->n_lines;
}
