/* lib/dynamics torque UKF model (rb_tukf_*): the joint-torque UKF's process and measurement models against the whole
 * robot's algorithms, an independent computation. On arm_2ft (fixed base, cut at both FTs, an unknown contact at
 * the wrist, two accelerometers and a gyroscope, every bias, the friction measurement, the rate model and a
 * contact decay), at random states:
 *   - process: a sample of the whole robot (ABA with random joint torques and a random contact wrench, the FT
 *     readings from the RNEA's joint wrenches) put in the state with tau_m = tau + tau_F + R^2 J_m ddq gives the
 *     ABA's joint accelerations, tau_j = tau, dq + dt ddq, the rate model's and the decay's updates;
 *   - measurements: the accelerometers read rb_dyn_frame_proper_acceleration, the gyroscope rb_dyn_frame_velocity
 *     (BODY), the currents tau_m / (k_t R), each plus its bias;
 *   - the batch forms equal the one-state forms column by column; the orders, names and start (the FT readings
 *     the RNEA predicts for the still arm on its mounting, the offset), and no allocation per call. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "dyn_support.h"
#include "roboest/dynamics.h"

#define ARM RB_SOURCE "/datasets/arm_2ft.urdf"

typedef struct arm {
    rb_model *m;
    rb_tukf *tm;
    const rb_tukf_layout *L;
    int ft[2], contacts[1], acc[2], gyro[1];
    double kt[4], R[4], Jm[4], k0[4], k1[4], k2[4];
    rb_tukf_config c;
} arm;

static size_t frame_of(const rb_model *m, const char *name)
{
    long f = rb_model_frame_index(m, name);
    cr_assert(f >= 0, "frame %s", name);
    return (size_t)f;
}

/* The arm's model with every optional block; ft_offset as given. */
static void arm_make(arm *a, bool ft_offset)
{
    memset(a, 0, sizeof *a);
    rb_model_opts o = {0};
    rb_err err;
    cr_assert_eq(rb_model_load_urdf(ARM, &o, &a->m, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(a->m->n_dofs, 4);
    a->ft[0] = (int)rb_model_ft_index(a->m, "upper_arm_ft_sensor"),
    a->ft[1] = (int)rb_model_ft_index(a->m, "wrist_ft_sensor");
    cr_assert(a->ft[0] >= 0 && a->ft[1] >= 0);
    a->contacts[0] = (int)frame_of(a->m, "wrist");
    a->acc[0] = (int)frame_of(a->m, "hand_acc"), a->acc[1] = (int)frame_of(a->m, "forearm");
    a->gyro[0] = (int)frame_of(a->m, "hand_gyro");
    static const double kt[4] = {0.05, 0.05, 0.05, 0.04}, R[4] = {-100, 160, -100, 100},
                        Jm[4] = {1e-5, 1e-5, 8e-6, 5e-6};
    for (int i = 0; i < 4; i++)
        a->kt[i] = kt[i], a->R[i] = R[i], a->Jm[i] = Jm[i], a->k0[i] = 0.3 + 0.1 * i, a->k1[i] = 10 - i, a->k2[i] = 0.5;
    a->c = (rb_tukf_config){.ft = a->ft,
                            .n_ft = 2,
                            .contacts = a->contacts,
                            .n_contacts = 1,
                            .acc = a->acc,
                            .n_acc = 2,
                            .gyro = a->gyro,
                            .n_gyro = 1,
                            .base_imu = -1,
                            .k_t = a->kt,
                            .gear_ratio = a->R,
                            .motor_inertia = a->Jm,
                            .friction = RB_TUKF_RATE_MODEL,
                            .k0 = a->k0,
                            .k1 = a->k1,
                            .k2 = a->k2,
                            .contact_decay = 2.0,
                            .ft_bias = true,
                            .acc_bias = true,
                            .gyro_bias = true,
                            .friction_meas = true,
                            .ft_offset = ft_offset};
    cr_assert_eq(rb_tukf_alloc(a->m, &a->c, &a->tm, &err), RB_OK, "%s", err.msg);
    a->L = rb_tukf_get_layout(a->tm);
}

static void arm_free(arm *a)
{
    rb_tukf_free(a->tm);
    rb_model_free(a->m);
}

/* A sample of the whole robot: q, nu random, tau random, the contact wrench w (BODY at the wrist) random; nud by the
 * ABA; y the two FT readings by the RNEA. */
static void robot_sample(arm *a, rb_dyn *ws, trng *r, double *q, double *nu, double *tau, double *w, double *nud,
                         double *y)
{
    rb_err err;
    rb_ext_wrench ext = {.frame = a->contacts[0], .rep = RB_DYN_BODY};
    double ft_all[6 * 8], tchk[4];
    cr_assert(a->m->n_ft <= 8);
    random_state(r, a->m, q, nu, 2.0, NULL, 0);
    random_vector(r, tau, 4, -20.0, 20.0);
    random_vector(r, ext.w, 3, -40.0, 40.0);
    random_vector(r, ext.w + 3, 3, -4.0, 4.0);
    memcpy(w, ext.w, sizeof ext.w);
    cr_assert_eq(rb_dyn_aba(a->m, ws, q, nu, tau, &ext, 1, nud, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_dyn_rnea(a->m, ws, q, nu, nud, &ext, 1, tchk, &err), RB_OK);
    cr_assert(rel_err(tchk, tau, 4) < 1e-9);
    cr_assert_eq(rb_dyn_ft_wrenches(a->m, ws, ft_all, &err), RB_OK);
    for (int k = 0; k < 2; k++)
        memcpy(y + 6 * k, ft_all + 6 * a->ft[k], 6 * sizeof(double));
}

Test(dynamics_torque_ukf, models_against_the_whole_robot)
{
    arm a;
    arm_make(&a, true);
    const rb_tukf_layout *L = a.L;
    cr_assert_eq(L->n_state, 3 * 4 + 12 + 6 + 12 + 6 + 3);
    cr_assert_eq(L->n_meas, 3 * 4 + 12 + 6 + 3);
    rb_dyn *ws = NULL;
    rb_err err;
    cr_assert_eq(rb_dyn_alloc(a.m, &ws, &err), RB_OK);
    trng r = {2024};
    const double dt = 1e-3;
    double e_ddq = 0, e_tau = 0, e_acc = 0, e_gyro = 0;
    for (int rep = 0; rep < 20; rep++) {
        double q[4], nu[4], tau[4], w[6], nud[4], y[12], xp[64], x[64], xo[64], xop[64], z[64], tj[4], ddq[4];
        robot_sample(&a, ws, &r, q, nu, tau, w, nud, y);
        /* the state, published order */
        random_vector(&r, xp, L->n_state, -1.0, 1.0); /* biases (and everything overwritten below) */
        const rb_tukf_span *P = L->pub;
        for (size_t i = 0; i < 4; i++) {
            double tf = xp[P[RB_TUKF_TAU_F].off + i];
            xp[P[RB_TUKF_DQ].off + i] = nu[i];
            xp[P[RB_TUKF_TAU_M].off + i] = tau[i] + tf + a.R[i] * a.R[i] * a.Jm[i] * nud[i];
        }
        memcpy(xp + P[RB_TUKF_FT].off, y, sizeof y);
        memcpy(xp + P[RB_TUKF_CONTACT].off, w, sizeof w);
        cr_assert_eq(P[RB_TUKF_BASE_A].len + P[RB_TUKF_BASE_W].len, 0);

        cr_assert_eq(rb_tukf_configure(a.tm, q, &err), RB_OK, "%s", err.msg);
        rb_tukf_to_filter(a.tm, xp, x);
        cr_assert_eq(rb_tukf_process(a.tm, x, dt, xo, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_tukf_joint_torques(a.tm, x, tj, ddq, &err), RB_OK, "%s", err.msg);
        rb_tukf_to_published(a.tm, xo, xop);
        e_ddq = fmax(e_ddq, rel_err(ddq, nud, 4)), e_tau = fmax(e_tau, rel_err(tj, tau, 4));
        for (size_t i = 0; i < 4; i++) {
            size_t d = P[RB_TUKF_DQ].off + i, f = P[RB_TUKF_TAU_F].off + i;
            cr_assert_eq(xop[d], xp[d] + dt * ddq[i], "explicit Euler, joint %zu", i);
            double ch = cosh(a.k1[i] * nu[i]), want = xp[f] + dt * ddq[i] * (a.k2[i] + a.k0[i] * a.k1[i] / (ch * ch));
            cr_assert(fabs(xop[f] - want) <= 1e-14 * (1 + fabs(want)), "rate model, joint %zu", i);
        }
        for (size_t i = 0; i < 6; i++) {
            size_t c = P[RB_TUKF_CONTACT].off + i;
            cr_assert(fabs(xop[c] - (xp[c] - dt * 2.0 * xp[c])) <= 1e-14 * (1 + fabs(xp[c])), "decay %zu", i);
        }
        for (int b = RB_TUKF_TAU_M; b < RB_TUKF_N_BLOCKS; b++)
            for (size_t i = 0; b != RB_TUKF_TAU_F && b != RB_TUKF_CONTACT && i < P[b].len; i++)
                cr_assert_eq(xop[P[b].off + i], xp[P[b].off + i], "random walk block %d element %zu", b, i);

        /* measurements against the whole robot's kinematics at (q, nu, nud) */
        cr_assert_eq(rb_tukf_measure(a.tm, x, z, &err), RB_OK, "%s", err.msg);
        const rb_tukf_span *Z = L->z;
        for (size_t i = 0; i < 4; i++) {
            cr_assert_eq(z[Z[RB_TUKF_Z_DQ].off + i], nu[i]);
            cr_assert_eq(z[Z[RB_TUKF_Z_CURRENT].off + i], xp[P[RB_TUKF_TAU_M].off + i] / (a.kt[i] * a.R[i]));
            cr_assert_eq(z[Z[RB_TUKF_Z_FRICTION].off + i], xp[P[RB_TUKF_TAU_F].off + i]);
        }
        for (size_t i = 0; i < 12; i++)
            cr_assert_eq(z[Z[RB_TUKF_Z_FT].off + i], y[i] + xp[P[RB_TUKF_FT_BIAS].off + i]);
        cr_assert_eq(rb_dyn_kinematics(a.m, ws, q, nu, nud, &err), RB_OK);
        for (size_t s = 0; s < 2; s++) {
            double pa[6];
            cr_assert_eq(rb_dyn_frame_proper_acceleration(a.m, ws, (size_t)a.acc[s], RB_DYN_BODY, pa, &err), RB_OK);
            for (size_t k = 0; k < 3; k++) {
                double want = pa[k] + xp[P[RB_TUKF_ACC_BIAS].off + 3 * s + k];
                e_acc = fmax(e_acc, fabs(z[Z[RB_TUKF_Z_ACC].off + 3 * s + k] - want) / (1 + fabs(want)));
            }
        }
        double v[6];
        cr_assert_eq(rb_dyn_frame_velocity(a.m, ws, (size_t)a.gyro[0], RB_DYN_BODY, v, &err), RB_OK);
        for (size_t k = 0; k < 3; k++) {
            double want = v[3 + k] + xp[P[RB_TUKF_GYRO_BIAS].off + k];
            e_gyro = fmax(e_gyro, fabs(z[Z[RB_TUKF_Z_GYRO].off + k] - want) / (1 + fabs(want)));
        }
    }
    cr_log_info("torque UKF model on arm_2ft against ABA / RNEA: ddq %.3g, tau_j %.3g, acc %.3g, gyro %.3g (relative)",
                e_ddq, e_tau, e_acc, e_gyro);
    cr_assert(e_ddq < 1e-9 && e_tau < 1e-9, "ddq %g tau_j %g", e_ddq, e_tau);
    cr_assert(e_acc < 1e-9 && e_gyro < 1e-12, "acc %g gyro %g", e_acc, e_gyro);
    rb_dyn_free(ws);
    arm_free(&a);
}

/* The batch forms (one matrix product for all columns) against the one-state forms, on sigma-point-like columns:
 * some share the first column's velocities (the cache), some do not. */
Test(dynamics_torque_ukf, batch_forms_equal_the_one_state_forms)
{
    arm a;
    arm_make(&a, true);
    size_t N = a.L->n_state, M = a.L->n_meas, Ns = 2 * N + 1;
    trng r = {7};
    rb_err err;
    double q[4], *X = calloc(N * (Ns + 1), sizeof(double)), *Y = calloc(N * Ns, sizeof(double)),
                 *Z = calloc(M * Ns, sizeof(double)), y[64], z[64];
    random_state(&r, a.m, q, NULL, 0, NULL, 0);
    cr_assert_eq(rb_tukf_configure(a.tm, q, &err), RB_OK, "%s", err.msg);
    random_vector(&r, X, N, -1.0, 1.0);
    for (size_t j = 1; j < Ns; j++) {
        memcpy(X + j * N, X, N * sizeof(double));
        size_t col = (j - 1) % N;
        X[j * N + col] += (j <= N ? 0.1 : -0.1) * (1 + fabs(X[col]));
    }
    cr_assert_eq(rb_tukf_process_batch(a.tm, X, Ns, 2e-3, Y, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_tukf_measure_batch(a.tm, X, Ns, Z, &err), RB_OK, "%s", err.msg);
    double e_f = 0, e_h = 0;
    for (size_t j = 0; j < Ns; j++) {
        cr_assert_eq(rb_tukf_process(a.tm, X + j * N, 2e-3, y, &err), RB_OK);
        cr_assert_eq(rb_tukf_measure(a.tm, X + j * N, z, &err), RB_OK);
        e_f = fmax(e_f, rel_err(Y + j * N, y, N)), e_h = fmax(e_h, rel_err(Z + j * M, z, M));
    }
    cr_log_info("torque UKF model, batch against one state: f %.3g, h %.3g", e_f, e_h);
    cr_assert(e_f < 1e-13 && e_h < 1e-12, "f %g h %g", e_f, e_h);
    cr_assert_eq(rb_tukf_process_batch(a.tm, X, Ns + 1, 2e-3, Y, &err), RB_EDIM);
    cr_assert_eq(rb_tukf_measure_batch(a.tm, NULL, Ns, Z, &err), RB_EINVAL);
    free(X), free(Y), free(Z);
    arm_free(&a);
}

Test(dynamics_torque_ukf, orders_and_names)
{
    arm a;
    arm_make(&a, true);
    const rb_tukf_layout *L = a.L;
    size_t N = L->n_state, M = L->n_meas;
    /* the filter order starts with the velocities; both orders tile 0..N */
    cr_assert_eq(L->x[RB_TUKF_DQ].off, 0);
    cr_assert_eq(L->pub[RB_TUKF_DQ].off, 0);
    cr_assert_eq(L->pub[RB_TUKF_TAU_M].off, 4);
    size_t covered_x = 0, covered_p = 0;
    for (int b = 0; b < RB_TUKF_N_BLOCKS; b++)
        covered_x += L->x[b].len, covered_p += L->pub[b].len;
    cr_assert_eq(covered_x, N);
    cr_assert_eq(covered_p, N);
    double xp[64], x[64], back[64];
    for (size_t i = 0; i < N; i++)
        xp[i] = (double)i;
    rb_tukf_to_filter(a.tm, xp, x);
    rb_tukf_to_published(a.tm, x, back);
    cr_assert_arr_eq(back, xp, N * sizeof(double));
    cr_assert_eq(x[L->x[RB_TUKF_CONTACT].off], (double)L->pub[RB_TUKF_CONTACT].off);

    char buf[128];
    struct {
        size_t i;
        const char *name, *unit;
    } st[] = {{L->pub[RB_TUKF_DQ].off + 3, "dq/wrist_roll", "rad/s"},
              {L->pub[RB_TUKF_TAU_M].off + 2, "tau_m/elbow", "N m"},
              {L->pub[RB_TUKF_TAU_F].off, "tau_f/shoulder_yaw", "N m"},
              {L->pub[RB_TUKF_FT].off + 11, "ft/wrist_ft_sensor/mz", "N m"},
              {L->pub[RB_TUKF_CONTACT].off + 1, "contact/wrist/fy", "N"},
              {L->pub[RB_TUKF_FT_BIAS].off + 6, "ft_bias/wrist_ft_sensor/fx", "N"},
              {L->pub[RB_TUKF_ACC_BIAS].off + 5, "acc_bias/forearm/z", "m/s^2"},
              {L->pub[RB_TUKF_GYRO_BIAS].off + 1, "gyro_bias/hand_gyro/y", "rad/s"}};
    for (size_t k = 0; k < sizeof st / sizeof st[0]; k++) {
        rb_tukf_state_name(a.tm, st[k].i, buf, sizeof buf);
        cr_assert_str_eq(buf, st[k].name);
        cr_assert_str_eq(rb_tukf_state_unit(a.tm, st[k].i), st[k].unit);
    }
    rb_tukf_state_name(a.tm, N, buf, sizeof buf);
    cr_assert_str_eq(buf, "element 51");
    struct {
        size_t j;
        const char *name, *unit;
    } me[] = {{L->z[RB_TUKF_Z_DQ].off, "dq/shoulder_yaw", "rad/s"},
              {L->z[RB_TUKF_Z_CURRENT].off + 2, "current/elbow", "A"},
              {L->z[RB_TUKF_Z_FRICTION].off + 3, "friction/wrist_roll", "N m"},
              {L->z[RB_TUKF_Z_FT].off + 3, "ft/upper_arm_ft_sensor/mx", "N m"},
              {L->z[RB_TUKF_Z_ACC].off + 5, "acc/forearm/z", "m/s^2"},
              {L->z[RB_TUKF_Z_GYRO].off, "gyro/hand_gyro/x", "rad/s"}};
    for (size_t k = 0; k < sizeof me / sizeof me[0]; k++) {
        rb_tukf_meas_name(a.tm, me[k].j, buf, sizeof buf);
        cr_assert_str_eq(buf, me[k].name);
        cr_assert_str_eq(rb_tukf_meas_unit(a.tm, me[k].j), me[k].unit);
    }
    cr_assert_eq(L->z[RB_TUKF_Z_GYRO].off + 3, M);
    /* the messages' form, by filter-order index */
    rb_tukf_describe_state(a.tm, L->x[RB_TUKF_TAU_F].off + 2, buf, sizeof buf);
    cr_assert_str_eq(buf, "tau_f (joint elbow)");
    rb_tukf_describe_state(a.tm, L->x[RB_TUKF_CONTACT].off + 4, buf, sizeof buf);
    cr_assert_str_eq(buf, "contact (wrist/my)");
    rb_tukf_describe_state(a.tm, L->x[RB_TUKF_ACC_BIAS].off + 2, buf, sizeof buf);
    cr_assert_str_eq(buf, "acc_bias (hand_acc z)");
    arm_free(&a);
}

/* The start on a still arm at random q: dq measured, tau_m = k_t R i, the FT states the readings the RNEA predicts
 * for the arm on its mounting, and with the offset the measurement vector's FT part is that prediction; without,
 * the FT states are the readings. A missing reading starts at the prediction and stays missing. */
Test(dynamics_torque_ukf, start_and_measurement_vector)
{
    rb_err err;
    rb_dyn *ws = NULL;
    trng r = {99};
    for (int with_offset = 0; with_offset < 2; with_offset++) {
        arm a;
        arm_make(&a, with_offset);
        const rb_tukf_layout *L = a.L;
        if (!ws)
            cr_assert_eq(rb_dyn_alloc(a.m, &ws, &err), RB_OK);
        double q[4], dq[4] = {0}, cur[4], fric[4] = {0.1, 0.2, 0.3, 0.4}, ft_all[48], pred[12], ft[12], acc[6] = {0},
                     gyro[3] = {0}, tau[4], x[64], z[64];
        random_state(&r, a.m, q, NULL, 0, NULL, 0);
        random_vector(&r, cur, 4, -1.0, 1.0);
        cr_assert_eq(rb_dyn_rnea(a.m, ws, q, NULL, NULL, NULL, 0, tau, &err), RB_OK);
        cr_assert_eq(rb_dyn_ft_wrenches(a.m, ws, ft_all, &err), RB_OK);
        for (int k = 0; k < 2; k++)
            memcpy(pred + 6 * k, ft_all + 6 * a.ft[k], 6 * sizeof(double));
        for (size_t i = 0; i < 12; i++)
            ft[i] = pred[i] + 0.5 + 0.1 * (double)i; /* offset readings */
        ft[7] = NAN;
        rb_tukf_sample s = {.q = q, .dq = dq, .current = cur, .friction = fric, .ft = ft, .acc = acc, .gyro = gyro};
        cr_assert_eq(rb_tukf_configure(a.tm, q, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_tukf_initial_state(a.tm, &s, x, &err), RB_OK, "%s", err.msg);
        rb_tukf_measurement(a.tm, &s, z);
        for (size_t i = 0; i < 4; i++) {
            cr_assert_eq(x[L->x[RB_TUKF_DQ].off + i], 0.0);
            cr_assert_eq(x[L->x[RB_TUKF_TAU_M].off + i], a.kt[i] * a.R[i] * cur[i]);
            cr_assert_eq(x[L->x[RB_TUKF_TAU_F].off + i], 0.0);
            cr_assert_eq(z[L->z[RB_TUKF_Z_CURRENT].off + i], cur[i]);
            cr_assert_eq(z[L->z[RB_TUKF_Z_FRICTION].off + i], fric[i]);
        }
        for (size_t i = 0; i < 12; i++) {
            double xs = x[L->x[RB_TUKF_FT].off + i], zi = z[L->z[RB_TUKF_Z_FT].off + i];
            if (i == 7) {
                cr_assert(fabs(xs - pred[i]) < 1e-9 * (1 + fabs(pred[i])) && isnan(zi), "missing reading");
                continue;
            }
            double want = with_offset ? pred[i] : ft[i];
            cr_assert(fabs(xs - want) < 1e-9 * (1 + fabs(want)), "FT state %zu: %g vs %g", i, xs, want);
            cr_assert(fabs(zi - want) < 1e-9 * (1 + fabs(want)), "FT measurement %zu: %g vs %g", i, zi, want);
        }
        for (size_t i = L->x[RB_TUKF_CONTACT].off; i < L->n_state; i++)
            cr_assert_eq(x[i], 0.0, "contacts and biases start at 0");
        arm_free(&a);
    }
    rb_dyn_free(ws);
}

/* No call after rb_tukf_alloc allocates (rb_malloc, nor the C library: OpenBLAS and LAPACK included). */
Test(dynamics_torque_ukf, calls_allocate_nothing)
{
    arm a;
    arm_make(&a, true);
    size_t N = a.L->n_state, M = a.L->n_meas, Ns = 2 * N + 1;
    trng r = {5};
    rb_err err;
    double q[4], dq[4] = {0.1, 0.2, 0.3, 0.4}, cur[4] = {0.5, 0.5, 0.5, 0.5}, ft[12] = {0}, acc[6] = {0}, gyro[3] = {0};
    double *X = calloc(N * Ns, sizeof(double)), *Y = calloc(N * Ns, sizeof(double)),
           *Z = calloc(M * Ns, sizeof(double));
    double x[64], xo[64], z[64], tj[4], ddq[4];
    random_state(&r, a.m, q, NULL, 0, NULL, 0);
    random_vector(&r, X, N * Ns, -1.0, 1.0);
    rb_tukf_sample s = {.q = q, .dq = dq, .current = cur, .friction = dq, .ft = ft, .acc = acc, .gyro = gyro};
    test_alloc_count_init();
    rb_alloc_fail_after(-1);
    long before = test_alloc_count;
    test_alloc_counting = 1;
    for (int rep = 0; rep < 3; rep++) {
        cr_assert_eq(rb_tukf_configure(a.tm, q, &err), RB_OK);
        cr_assert_eq(rb_tukf_initial_state(a.tm, &s, x, &err), RB_OK);
        rb_tukf_measurement(a.tm, &s, z);
        cr_assert_eq(rb_tukf_process(a.tm, x, 1e-3, xo, &err), RB_OK);
        cr_assert_eq(rb_tukf_measure(a.tm, x, z, &err), RB_OK);
        cr_assert_eq(rb_tukf_process_batch(a.tm, X, Ns, 1e-3, Y, &err), RB_OK);
        cr_assert_eq(rb_tukf_measure_batch(a.tm, X, Ns, Z, &err), RB_OK);
        cr_assert_eq(rb_tukf_joint_torques(a.tm, x, tj, ddq, &err), RB_OK);
        q[0] += 0.01;
    }
    test_alloc_counting = 0;
    long counted = test_alloc_count - before, rb_calls = rb_alloc_fail_after(-1);
    if (test_alloc_count_works())
        cr_assert_eq(counted, 0, "C library allocations: %ld", counted);
    cr_assert_eq(rb_calls, 0, "rb_malloc calls: %ld", rb_calls);
    free(X), free(Y), free(Z);
    arm_free(&a);
}

/* Configurations that do not fit the model: RB_EINVAL with a message. */
Test(dynamics_torque_ukf, bad_configurations)
{
    arm a;
    arm_make(&a, true);
    rb_tukf *tm = NULL;
    rb_err err;
    rb_tukf_config c = a.c;
    double R0[4] = {-100, 0, -100, 100};
    c.gear_ratio = R0;
    cr_assert_eq(rb_tukf_alloc(a.m, &c, &tm, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "gear ratio 1 is 0"), "%s", err.msg);
    c = a.c, c.base_imu = a.acc[0];
    cr_assert_eq(rb_tukf_alloc(a.m, &c, &tm, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "base_imu"), "%s", err.msg);
    int bad_frame[1] = {(int)a.m->n_frames};
    c = a.c, c.contacts = bad_frame;
    cr_assert_eq(rb_tukf_alloc(a.m, &c, &tm, &err), RB_EINVAL);
    c = a.c, c.k_t = NULL;
    cr_assert_eq(rb_tukf_alloc(a.m, &c, &tm, &err), RB_EINVAL);
    cr_assert_null(tm);
    cr_assert_eq(rb_tukf_process(a.tm, NULL, 1e-3, NULL, &err), RB_EINVAL);
    arm_free(&a);
}
