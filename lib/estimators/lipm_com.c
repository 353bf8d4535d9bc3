/* lipm_com: the CoM from the feet's wrenches and the base IMU on the linear inverted pendulum (seed 003 ch. 3), over
 * the observers module's rb_lipm_* (roboest/observers.h). Per sample: the kinematics of q with the base at the origin
 * (feet, IMU frame, CoM relative to the base), the attitude input for the base's orientation, (3.4) for the CoM's
 * acceleration, the feet's CoPs and (3.1) for the ZMP at the anchored feet, then the two axes' filters.
 * The parameter schema and the documentation are in lipm_com_type.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lipm_com.h"
#include "roboest/observers.h"
#include "torque_common.h"

struct lc_stage {
    const rb_model *m;
    rb_dyn *ws;
    rb_lipm *est;
    rb_lipm_anchor anchor;
    double *q; /* nq: base at the origin, identity orientation */
    int imu, feet[2];
    bool mixed, feet_given, phase_given, r_given, ang_diff;
    double h[2], fn_min, g, z_c, com0[2], r_B[3];
    /* com_motion "kinematic": the CoM's motion in the base (B_c(q)) through a critically damped second-order
     * filter of natural frequency cm_w (rad/s): position cm_x, rate cm_v, acceleration cm_a, base axes */
    bool cm_kin, cm_started;
    double cm_w, cm_x[3], cm_v[3], cm_a[3];
    /* with dq, the IMU's rigid-body part of (3.4) and the measured ZMP pass through the same filter (its x state),
     * so that every term stays in step with the legs' part the filter differentiates: a swing leg's lift-off jolts
     * the pelvis IMU, and only in step does the jolt cancel in the sum */
    bool ra_started, pz_started;
    double ra_x[3], ra_v[3], ra_a[3], pz_x[3], pz_v[3], pz_a[3];
    /* zmp_model "centroidal": the centroidal angular momentum (world axes) through the same filter; nu the
     * kinematics' velocity [0, w_B, dq] */
    bool zmp_cent, km_started, dq_given;
    double *nu, km_x[3], km_v[3], km_a[3], mass;
    double acc_err[2], acc_err_t, zmp_off[2];
    double w_prev[3], t_prev;
    bool started;
    char *note;
};

void lc_destroy(void *state)
{
    lc_stage *s = state;
    if (!s)
        return;
    rb_lipm_free(s->est);
    rb_dyn_free(s->ws);
    rb_free(s->q);
    rb_free(s->nu);
    rb_free(s->note);
    rb_free(s);
}

static const char *const xy_names[2] = {"x", "y"}, *const m_units[2] = {"m", "m"};
static const char *const ms_units[2] = {"m/s", "m/s"}, *const mss_units[2] = {"m/s^2", "m/s^2"};
static const char *const xyz_names[3] = {"x", "y", "z"}, *const m3_units[3] = {"m", "m", "m"};
static const char *const ms3_units[3] = {"m/s", "m/s", "m/s"};
static const char *const var_names[8] = {"x/c", "x/c_dot", "x/c_ddot", "x/p", "y/c", "y/c_dot", "y/c_ddot", "y/p"};
static const char *const var_units[8] = {"m^2", "m^2/s^2", "m^2/s^4", "m^2", "m^2", "m^2/s^2", "m^2/s^4", "m^2"};
static const char *const var1_names[6] = {"x/c", "x/c_dot", "x/c_ddot", "y/c", "y/c_dot", "y/c_ddot"};
static const char *const var1_units[6] = {"m^2", "m^2/s^2", "m^2/s^4", "m^2", "m^2/s^2", "m^2/s^4"};
static const char *const support_names[2] = {"left", "right"};

static int check_ports(const rb_stage_setup *st, rb_err *err)
{
    int rc;
    if ((rc = tq_check_port(st, LC_Q, st->model->n_dofs, "one per model joint", true, err)) ||
        (rc = tq_check_port(st, LC_QUAT, 4, "a unit quaternion w x y z", false, err)) ||
        (rc = tq_check_port(st, LC_ACC, 3, "the IMU's proper acceleration", false, err)) ||
        (rc = tq_check_port(st, LC_GYRO, 3, "the IMU's angular velocity", false, err)) ||
        (rc = tq_check_port(st, LC_WRENCHES, 12, "6 per foot, left then right: [f; tau]", false, err)))
        return rc;
    if (st->in[LC_FEET].width && (rc = tq_check_port(st, LC_FEET, 6, "left x y z, right x y z", false, err)))
        return rc;
    if (st->in[LC_PHASE].width && (rc = tq_check_port(st, LC_PHASE, 1, "0, 1 or 2", false, err)))
        return rc;
    if (st->in[LC_DQ].width && (rc = tq_check_port(st, LC_DQ, st->model->n_dofs, "one per model joint", true, err)))
        return rc;
    return RB_OK;
}

static int read_params(const rb_stage_setup *st, lc_stage *s, rb_lipm_config *c, rb_err *err)
{
    const rb_params *p = st->params;
    int rc;
    const rb_param_value *fv = rb_params_get(p, "feet"), *h = rb_params_get(p, "sole_depth"),
                         *r = rb_params_get(p, "imu_position"), *c0 = rb_params_get(p, "com0"),
                         *ae = rb_params_get(p, "test_acc_error"), *zo = rb_params_get(p, "test_zmp_offset");
    if ((rc = tq_find_frame(st, "imu_frame", SIZE_MAX, rb_params_string(p, "imu_frame"), &s->imu, err)) ||
        (rc = tq_check_names(st, "feet", false, err)))
        return rc;
    for (int i = 0; i < 2; i++) {
        s->feet[i] = (int)rb_model_frame_index(st->model, fv->strings[i]);
        s->h[i] = h->numbers[i], s->com0[i] = c0->numbers[i];
        s->acc_err[i] = ae->numbers[i], s->zmp_off[i] = zo->numbers[i];
    }
    s->r_given = r->count == 3;
    if (r->count != 0 && r->count != 3)
        return rb_err_set(err, RB_ECONFIG, "imu_position has %zu values: give 3 (x y z, m) or none", r->count);
    for (int j = 0; s->r_given && j < 3; j++)
        s->r_B[j] = r->numbers[j];
    s->mixed = strcmp(rb_params_string(p, "wrench_rep"), "mixed") == 0;
    s->ang_diff = strcmp(rb_params_string(p, "angular_acc"), "difference") == 0;
    s->cm_kin = !s->r_given && strcmp(rb_params_string(p, "com_motion"), "kinematic") == 0;
    s->cm_w = 2 * M_PI * rb_params_number(p, "com_motion_cutoff");
    s->zmp_cent = strcmp(rb_params_string(p, "zmp_model"), "centroidal") == 0;
    s->dq_given = st->in[LC_DQ].width > 0;
    if (s->zmp_cent && !st->in[LC_DQ].width)
        return rb_err_set(err, RB_ECONFIG, "zmp_model \"centroidal\" needs the dq input (the joint velocities)");
    s->fn_min = rb_params_number(p, "force_threshold");
    s->acc_err_t = rb_params_number(p, "test_acc_error_time");
    const double *gv = st->model->gravity;
    double g = rb_params_number(p, "gravity");
    s->g = g > 0 ? g : sqrt(gv[0] * gv[0] + gv[1] * gv[1] + gv[2] * gv[2]);
    if (!(s->g > 0))
        return rb_err_set(err, RB_ECONFIG, "gravity: the model's gravity is zero: give gravity (m/s^2)");
    rb_lipm_config_init(c);
    c->form = rb_params_integer(p, "form") == 2 ? RB_LIPM_FORM2 : RB_LIPM_FORM1;
    c->z_c = s->z_c = rb_params_number(p, "z_c");
    c->gravity = s->g;
    c->dt = st->dt > 0 ? st->dt : 0.001;
    c->N_Q = rb_params_number(p, "N_Q"), c->N_R = rb_params_number(p, "N_R");
    c->p0 = rb_params_number(p, "p0"), c->q0 = rb_params_number(p, "q0"), c->r0 = rb_params_number(p, "r0");
    c->g3 = rb_params_number(p, "g3"), c->lpf_cutoff = rb_params_number(p, "lpf_cutoff");
    c->c0[0] = s->com0[0], c->c0[1] = s->com0[1];
    c->perr_acc =
        strcmp(rb_params_string(p, "zmp_error_acc"), "estimated") == 0 ? RB_LIPM_PERR_ESTIMATED : RB_LIPM_PERR_MEASURED;
    return RB_OK;
}

int lc_create(const rb_stage_setup *st, void **state, rb_err *err)
{
    int rc = tq_need_floating_model(st, err);
    if (rc)
        return rc;
    const rb_model *m = st->model;
    if ((rc = check_ports(st, err)))
        return rc;
    lc_stage *s = rb_calloc(1, sizeof *s);
    if (!s)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    s->m = m;
    s->feet_given = st->in[LC_FEET].width > 0, s->phase_given = st->in[LC_PHASE].width > 0;
    rb_lipm_config c;
    if ((rc = read_params(st, s, &c, err)) || (rc = rb_lipm_alloc(&c, &s->est, err)) ||
        (rc = rb_dyn_alloc(m, &s->ws, err))) {
        lc_destroy(s);
        return rc;
    }
    s->mass = rb_dyn_total_mass(m);
    if (!(s->q = rb_calloc(m->nq, sizeof *s->q)) || !(s->nu = rb_calloc(m->nv, sizeof *s->nu))) {
        lc_destroy(s);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    s->q[3] = 1; /* identity base orientation */
    rb_lipm_anchor_init(&s->anchor);
    size_t nv = c.form == RB_LIPM_FORM2 ? 8 : 6;
    rb_port *o = st->out;
    for (int j = LC_POS; j <= LC_CORR; j++)
        o[j] = (rb_port){2, xy_names, m_units};
    o[LC_VEL] = (rb_port){2, xy_names, ms_units};
    o[LC_ACC_OUT] = (rb_port){2, xy_names, mss_units};
    o[LC_ACC_ERR] = (rb_port){2, xy_names, mss_units};
    o[LC_BASE_POS] = (rb_port){3, xyz_names, m3_units};
    o[LC_BASE_VEL] = (rb_port){3, xyz_names, ms3_units};
    o[LC_VAR] = nv == 8 ? (rb_port){8, var_names, var_units} : (rb_port){6, var1_names, var1_units};
    o[LC_SUPPORT] = (rb_port){2, support_names, NULL};
    *state = s;
    return RB_OK;
}

static bool finite_n(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

/* The phase input: -1 none (unwired or NaN), else 0, 1, 2; RB_EINPUT for anything else. */
static int read_phase(const lc_stage *s, const double *in, int *phase, rb_err *err)
{
    *phase = -1;
    if (!s->phase_given || isnan(in[0]))
        return RB_OK;
    double v = in[0];
    if (v != 0 && v != 1 && v != 2)
        return rb_err_set(err, RB_EINPUT, "phase %g is not 0 (double support), 1 (left) or 2 (right)", v);
    *phase = (int)v;
    return RB_OK;
}

/* com_motion "kinematic": the legs move the CoM within the base, so the IMU (on the base) is not rigidly at r from
 * it: c = p_B + R_WB B_c(q) adds R_WB (B_c_ddot + 2 w_B x B_c_dot) to the rigid-body terms of (3.4). B_c's rate
 * and acceleration come from a critically damped second-order filter (explicit Euler over the sample's period),
 * which differentiates the encoders' kinematics twice without their noise above com_motion_cutoff. */
/* One step of the critically damped second-order filter x'' = w^2 (u - x) - 2 w x' (explicit Euler over dt; the
 * first call starts at rest on u): x' and x'' are u's rate and acceleration below w. */
static void diff2_step(bool *started, double w, double dt, const double u[3], double x[3], double v[3], double a[3])
{
    if (!*started) {
        memcpy(x, u, 3 * sizeof *x);
        memset(v, 0, 3 * sizeof *v), memset(a, 0, 3 * sizeof *a);
        *started = true;
        return;
    }
    for (int j = 0; dt > 0 && j < 3; j++) {
        a[j] = w * w * (u[j] - x[j]) - 2 * w * v[j];
        v[j] += dt * a[j];
        x[j] += dt * v[j];
    }
}

/* com_motion "kinematic" (see the type's doc). With the joint velocities (hG: the centroidal momentum of [0, w_B, dq],
 * base axes) B_c's rate is exact, B_c_dot = l / m - w_B x B_c, and the filter differentiates it once; without them it
 * differentiates B_c(q) twice. */
static void com_motion(lc_stage *s, double t, const double B_c[3], const double w_B[3], const double *hG,
                       const double R_WB[9], double cdd[3])
{
    double dt = s->cm_started ? t - s->t_prev : 0.0, bcd[3], acc[3], wxv[3], e_B[3], e_W[3];
    if (hG) {
        double wxc[3];
        rb_v3_cross(w_B, B_c, wxc);
        for (int j = 0; j < 3; j++)
            bcd[j] = hG[j] / s->mass - wxc[j];
        diff2_step(&s->cm_started, s->cm_w, dt, bcd, s->cm_x, s->cm_v, s->cm_a);
        memcpy(acc, s->cm_v, sizeof acc);
        diff2_step(&s->ra_started, s->cm_w, dt, cdd, s->ra_x, s->ra_v, s->ra_a);
        memcpy(cdd, s->ra_x, 3 * sizeof *cdd);
    } else {
        diff2_step(&s->cm_started, s->cm_w, dt, B_c, s->cm_x, s->cm_v, s->cm_a);
        memcpy(bcd, s->cm_v, sizeof bcd), memcpy(acc, s->cm_a, sizeof acc);
    }
    rb_v3_cross(w_B, bcd, wxv);
    for (int j = 0; j < 3; j++)
        e_B[j] = acc[j] + 2 * wxv[j];
    rb_m3_mul_v(R_WB, e_B, e_W);
    for (int j = 0; j < 3; j++)
        cdd[j] += e_W[j];
}

/* The kinematics again with the velocity [0, w_B, dq] (base at the origin: world = base axes) and the centroidal
 * momentum hG = [l; k_G] there (base axes; the base's linear velocity does not change k_G). */
static int momentum(lc_stage *s, const double *dq, const double w_B[3], double hG[6], rb_err *err)
{
    const rb_model *m = s->m;
    memset(s->nu, 0, 3 * sizeof *s->nu);
    memcpy(s->nu + 3, w_B, 3 * sizeof *w_B);
    memcpy(s->nu + 6, dq, m->n_dofs * sizeof *dq);
    int rc = rb_dyn_kinematics(m, s->ws, s->q, s->nu, NULL, err);
    return rc ? rc : rb_dyn_centroidal_momentum(m, s->ws, hG, NULL, err);
}

/* zmp_model "centroidal": k_G turned into the world, its rate k_dot (the filter); the pendulum's ZMP is
 * p + [k_dot_y, -k_dot_x] / (m g). */
static void zmp_shift(lc_stage *s, double t, const double hG[6], const double R_WB[9], double shift[2])
{
    double k_W[3];
    rb_m3_mul_v(R_WB, hG + 3, k_W);
    diff2_step(&s->km_started, s->cm_w, s->km_started ? t - s->t_prev : 0.0, k_W, s->km_x, s->km_v, s->km_a);
    double mg = s->mass * s->g;
    shift[0] = s->km_v[1] / mg, shift[1] = -s->km_v[0] / mg;
}

int lc_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    lc_stage *s = state;
    const rb_model *m = s->m;
    int phase, rc = read_phase(s, in[LC_PHASE], &phase, err);
    if (rc)
        return rc;
    const double *qu = in[LC_QUAT];
    double qn = sqrt(qu[0] * qu[0] + qu[1] * qu[1] + qu[2] * qu[2] + qu[3] * qu[3]);
    if (isfinite(qn) && !(qn > 1e-9))
        return rb_err_set(err, RB_EINPUT, "input orientation: the quaternion has zero norm (not an attitude)");
    bool att = isfinite(qn), kin = finite_n(in[LC_Q], m->n_dofs);
    double R_WI[9] = {0}, R_WB[9] = {0}, p[2] = {NAN, NAN}, a[2] = {NAN, NAN}, c_off[3] = {0}, w_W[3] = {0};
    unsigned char use[2] = {0, 0};
    if (att)
        rb_m3_from_quat(qu, R_WI);
    if (kin) {
        memcpy(s->q + 7, in[LC_Q], m->n_dofs * sizeof(double));
        if ((rc = rb_dyn_kinematics(m, s->ws, s->q, NULL, NULL, err)))
            return rc;
    }
    if (att && kin) {
        rb_xform X_BI, X_BF[2];
        double B_c[3], rI[3], wdot[3] = {0}, cdd[3];
        if ((rc = rb_dyn_frame_pose(m, s->ws, (size_t)s->imu, &X_BI, err)) ||
            (rc = rb_dyn_frame_pose(m, s->ws, (size_t)s->feet[0], &X_BF[0], err)) ||
            (rc = rb_dyn_frame_pose(m, s->ws, (size_t)s->feet[1], &X_BF[1], err)) ||
            (rc = rb_dyn_com(m, s->ws, B_c, err)))
            return rc;
        /* (3.6) A_b = A_I^w A_b^I: W_R_B = W_R_I (B_R_I)^T */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                R_WB[3 * i + j] = R_WI[3 * i] * X_BI.R[3 * j] + R_WI[3 * i + 1] * X_BI.R[3 * j + 1] +
                                  R_WI[3 * i + 2] * X_BI.R[3 * j + 2];
        /* r: the IMU relative to the CoM, base axes (given, or the kinematics'); c_off: the base origin's */
        double r_B[3];
        for (int j = 0; j < 3; j++)
            r_B[j] = s->r_given ? s->r_B[j] : X_BI.p[j] - B_c[j];
        for (int j = 0; j < 3; j++)
            c_off[j] = r_B[j] - X_BI.p[j];
        rb_m3t_mul_v(X_BI.R, r_B, rI);
        const double *gy = in[LC_GYRO];
        if (s->ang_diff && s->started && finite_n(s->w_prev, 3) && t > s->t_prev)
            for (int j = 0; j < 3; j++)
                wdot[j] = (gy[j] - s->w_prev[j]) / (t - s->t_prev);
        rb_lipm_com_acc(R_WI, in[LC_ACC], gy, wdot, rI, s->g, cdd);
        rb_m3_mul_v(R_WI, gy, w_W);
        double w_B[3], hG[6];
        rb_m3_mul_v(X_BI.R, gy, w_B);
        bool have_h = s->dq_given && finite_n(in[LC_DQ], m->n_dofs) && finite_n(gy, 3);
        if (have_h && (rc = momentum(s, in[LC_DQ], w_B, hG, err)))
            return rc;
        if (s->cm_kin)
            com_motion(s, t, B_c, w_B, have_h ? hG : NULL, R_WB, cdd);
        for (int i = 0; i < 2; i++)
            a[i] = cdd[i] + (t >= s->acc_err_t ? s->acc_err[i] : 0);
        /* the feet: CoP, normal force, world position */
        double fn[2], rho[4], rel[6], off[2][3];
        for (int i = 0; i < 2; i++) {
            double cop[3];
            rb_lipm_foot_cop(in[LC_WRENCHES] + 6 * i, s->h[i], cop, &fn[i]);
            if (s->mixed)
                memcpy(off[i], cop, sizeof cop);
            else {
                double RF[9];
                rb_m3_mul(R_WB, X_BF[i].R, RF);
                rb_m3_mul_v(RF, cop, off[i]);
            }
            rb_m3_mul_v(R_WB, X_BF[i].p, rel + 3 * i);
            use[i] = fn[i] > s->fn_min && (phase < 0 || phase == 0 || phase == i + 1);
        }
        const double *P = NULL;
        if (s->feet_given) {
            P = in[LC_FEET];
        } else {
            double Bc_W[3], base0[3];
            rb_m3_mul_v(R_WB, B_c, Bc_W);
            base0[0] = s->com0[0] - Bc_W[0], base0[1] = s->com0[1] - Bc_W[1], base0[2] = s->z_c - Bc_W[2];
            rb_lipm_anchor_step(&s->anchor, rel, use, base0);
            P = &s->anchor.foot[0][0];
        }
        for (int i = 0; i < 2; i++)
            rho[2 * i] = P[3 * i] + off[i][0], rho[2 * i + 1] = P[3 * i + 1] + off[i][1];
        double shift[2] = {0, 0};
        if (s->zmp_cent && have_h)
            zmp_shift(s, t, hG, R_WB, shift);
        if (rb_lipm_zmp(2, fn, rho, use, s->fn_min, p))
            p[0] += s->zmp_off[0] + shift[0], p[1] += s->zmp_off[1] + shift[1];
        if (s->cm_kin && have_h && isfinite(p[0])) {
            double u[3] = {p[0], p[1], 0};
            diff2_step(&s->pz_started, s->cm_w, s->pz_started ? t - s->t_prev : 0.0, u, s->pz_x, s->pz_v, s->pz_a);
            p[0] = s->pz_x[0], p[1] = s->pz_x[1];
        }
    }
    memcpy(s->w_prev, in[LC_GYRO], sizeof s->w_prev);
    s->t_prev = t, s->started = true;
    if ((rc = rb_lipm_step(s->est, k, t, p, a, err)))
        return tq_unname_sample(rc, k, err);
    rb_lipm_out o;
    rb_lipm_get_out(s->est, &o);
    size_t n = rb_lipm_dim(s->est);
    for (int i = 0; i < 2; i++) {
        const rb_lipm_axis_out *x = &o.axis[i];
        out[LC_POS][i] = x->pos, out[LC_VEL][i] = x->vel, out[LC_ACC_OUT][i] = x->acc;
        out[LC_ZMP][i] = x->zmp, out[LC_ZMP_ERR][i] = x->zmp_err, out[LC_OFFSET][i] = x->offset;
        out[LC_ACC_ERR][i] = x->acc_error, out[LC_CORR][i] = x->corrected;
        for (size_t j = 0; j < n; j++)
            out[LC_VAR][i * n + j] = x->var[j];
        out[LC_SUPPORT][i] = use[i];
    }
    /* (3.12), (3.13), (3.20) in world axes: the base origin is the CoM plus A_b c_off */
    double cw[3], wc[3];
    rb_m3_mul_v(R_WB, c_off, cw);
    rb_v3_cross(w_W, cw, wc);
    double com[3] = {o.axis[0].corrected, o.axis[1].corrected, s->z_c}, v[3] = {o.axis[0].vel, o.axis[1].vel, 0};
    for (int j = 0; j < 3; j++) {
        out[LC_BASE_POS][j] = att && kin ? com[j] + cw[j] : NAN;
        out[LC_BASE_VEL][j] = att && kin ? v[j] + wc[j] : NAN;
    }
    return RB_OK;
}

int lc_finish(void *state, rb_err *err)
{
    lc_stage *s = state;
    rb_lipm_diag d;
    rb_lipm_get_diag(s->est, &d);
    rb_free(s->note);
    s->note = NULL;
    if (d.zmp_undefined == 0 && d.acc_missing == 0)
        return RB_OK;
    char buf[320];
    snprintf(buf, sizeof buf,
             "%ld of %ld samples with no loaded foot (ZMP undefined: form 1 predicted, form 2 held its ZMP), %ld "
             "axis-samples without a CoM acceleration (a non-finite IMU reading, attitude or q)",
             d.zmp_undefined, d.steps, d.acc_missing);
    if (!(s->note = rb_strdup(buf)))
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    return RB_OK;
}

size_t lc_notes(void *state, const char *const **lines)
{
    lc_stage *s = state;
    *lines = (const char *const *)&s->note;
    return s->note ? 1 : 0;
}
