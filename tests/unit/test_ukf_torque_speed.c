/* The torque UKF's faster paths against the plain computations (issues 18 and 19; the filter-level equality with the
 * dense UKF is test_torque_ukf_structured.c's):
 *   - the friction correction's regressors reused across a batch (a sigma point keeps the mean's velocity of every
 *     joint before its factor column, bit for bit): the batch measurement equals the one-state form at every sigma
 *     point, every correction term (scale and Stribeck included), sigma points built as the UKF builds them;
 *   - the tiled mirror of a lower triangle equals the element-by-element copy for every size up to 50. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/filters/filters_internal.h"
#include "dyn_support.h"
#include "roboest/dynamics.h"

#define ARM RB_SOURCE "/datasets/arm_2ft.urdf"

static int frame(const rb_model *m, const char *name)
{
    long f = rb_model_frame_index(m, name);
    cr_assert(f >= 0, "frame %s", name);
    return (int)f;
}

Test(ukf_torque_speed, correction_regressors_reused_across_a_batch)
{
    rb_model_opts o = {0};
    rb_model *m = NULL;
    rb_err err;
    cr_assert_eq(rb_model_load_urdf(ARM, &o, &m, &err), RB_OK, "%s", err.msg);
    size_t n = m->n_dofs;
    int ft[2] = {(int)rb_model_ft_index(m, "upper_arm_ft_sensor"), (int)rb_model_ft_index(m, "wrist_ft_sensor")};
    int contacts[1] = {frame(m, "wrist")}, acc[1] = {frame(m, "hand_acc")}, gyro[1] = {frame(m, "hand_gyro")};
    int corr[5] = {RB_TUKF_CORR_STRIBECK, RB_TUKF_CORR_COULOMB, RB_TUKF_CORR_SCALE, RB_TUKF_CORR_VISCOUS,
                   RB_TUKF_CORR_OFFSET};
    double kt[4] = {0.05, 0.05, 0.05, 0.04}, R[4] = {-100, 160, -100, 100};
    rb_tukf_config c = {.ft = ft,
                        .n_ft = 2,
                        .contacts = contacts,
                        .n_contacts = 1,
                        .acc = acc,
                        .n_acc = 1,
                        .gyro = gyro,
                        .n_gyro = 1,
                        .base_imu = -1,
                        .k_t = kt,
                        .gear_ratio = R,
                        .friction_meas = true,
                        .corr = corr,
                        .n_corr = 5,
                        .corr_v_c = 0.05,
                        .corr_v_s = 0.3};
    rb_tukf *tm = NULL;
    cr_assert_eq(rb_tukf_alloc(m, &c, &tm, &err), RB_OK, "%s", err.msg);
    const rb_tukf_layout *L = rb_tukf_get_layout(tm);
    size_t N = L->n_state, M = L->n_meas, l = L->x[RB_TUKF_DQ].len, Ns = 2 * l + 1;
    cr_assert_eq(l, n);
    double q[4], *X = calloc(N * Ns, sizeof(double)), *Z = calloc(M * Ns, sizeof(double)), *z = calloc(M, sizeof *z),
                 *Lf = calloc(N * l, sizeof(double));
    trng r = {11};
    random_state(&r, m, q, NULL, 0, NULL, 0);
    cr_assert_eq(rb_tukf_configure(tm, q, &err), RB_OK, "%s", err.msg);
    random_vector(&r, X, N, -1.0, 1.0);
    random_vector(&r, Lf, N * l, -0.2, 0.2);
    for (size_t j = 0; j < l; j++) /* a lower-triangular factor's first l columns */
        for (size_t i = 0; i < j; i++)
            Lf[i + j * N] = 0.0;
    for (size_t j = 1; j < Ns; j++) { /* the UKF's sigma points (ukf.c sigma_point) */
        size_t col = (j - 1) % l;
        double s = j <= l ? 1.7 : -1.7;
        memcpy(X + j * N, X, N * sizeof(double));
        for (size_t i = col; i < N; i++)
            X[j * N + i] += s * Lf[i + col * N];
    }
    cr_assert_eq(rb_tukf_measure_batch(tm, X, Ns, Z, &err), RB_OK, "%s", err.msg);
    size_t fo = L->z[RB_TUKF_Z_FRICTION].off;
    for (size_t j = 0; j < Ns; j++) {
        cr_assert_eq(rb_tukf_measure(tm, X + j * N, z, &err), RB_OK, "%s", err.msg);
        for (size_t i = 0; i < M; i++)
            cr_assert(fabs(Z[j * M + i] - z[i]) <= 1e-12 * fmax(1.0, fabs(z[i])),
                      "sigma point %zu measurement %zu: batch %.17g one state %.17g", j, i, Z[j * M + i], z[i]);
        for (size_t i = 0; i < n; i++) /* the friction rows: the same operations, the same bits */
            cr_assert_eq(Z[j * M + fo + i], z[fo + i], "sigma point %zu joint %zu", j, i);
    }
    free(X), free(Z), free(z), free(Lf);
    rb_tukf_free(tm);
    rb_model_free(m);
}

Test(ukf_torque_speed, tiled_mirror_equals_the_plain_copy)
{
    enum { NMAX = 50 };
    static double A[NMAX * NMAX], B[NMAX * NMAX];
    for (size_t n = 1; n <= NMAX; n++) {
        for (size_t i = 0; i < n * n; i++)
            A[i] = B[i] = sin(1.0 + (double)i);
        rb_filt_mirror_lower(A, n);
        for (size_t j = 0; j < n; j++)
            for (size_t i = j + 1; i < n; i++)
                B[j + i * n] = B[i + j * n];
        cr_assert_eq(memcmp(A, B, n * n * sizeof(double)), 0, "n %zu", n);
    }
}
