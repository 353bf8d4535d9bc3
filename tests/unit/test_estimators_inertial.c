/* The inertial_ekf stage outside a run: step() allocates nothing (rb_malloc and the C library) with every option
 * on (floating base, two contacts, the central difference, the gate, the bias window, both low-passes, the rate
 * limit), on the humanoid with arms of seed 001; and its outputs follow the truth of a changed torso. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "roboest/dynamics.h"
#include "roboest/pipeline.h"
#include "roboest/stage.h"
#include "torque_support.h"

#define ARMS RB_SOURCE "/datasets/humanoid_arms.urdf"
#define N_IN 9

static const char PIPE[] =
    "{\"model\": {\"urdf\": \"" ARMS "\", \"floating\": true}, \"clock\": {\"rate\": 1000},"
    " \"signals\": {\"q\": {\"channel\": \"q\"}},"
    " \"stages\": [{\"id\": \"iekf\", \"type\": \"inertial_ekf\","
    "  \"in\": {\"q\": \"q\", \"dq\": \"q\", \"tau\": \"q\", \"contacts\": \"q\", \"base_position\": \"q\","
    "   \"base_orientation\": \"q\", \"base_twist\": \"q\"},"
    "  \"out\": {\"pi\": \"pi\", \"mass\": \"m\", \"consistent\": \"ok\", \"gated\": \"g\"},"
    "  \"params\": {\"bodies\": [\"torso\", \"l_forearm\"], \"ddq\": \"central_difference\","
    "   \"contacts\": [\"l_foot_front_contact\", \"r_foot_front_contact\"], \"gate\": \"nis\", \"gate_nis\": 1e12,"
    "   \"bias_window\": 0.05, \"residual_cutoff\": 50, \"estimate_cutoff\": 20, \"rate_limit\": [30, 3, 1]}}]}";

Test(estimators_inertial, steps_allocate_nothing_and_follow_a_heavier_torso)
{
    rb_registry *reg = registry();
    rb_pipeline *p = NULL;
    rb_err err;
    cr_assert_eq(rb_pipeline_load_text(PIPE, strlen(PIPE), "t", NULL, reg, &p, &err), RB_OK, "%s", err.msg);
    const rb_model *m = p->model;
    size_t n = m->n_dofs, nv = m->nv;
    const rb_stage_type *ty = p->stages[0].type;
    rb_params params = {ty, p->stages[0].params};
    size_t widths[N_IN] = {n, n, n, 0, 12, 3, 4, 6, 0};
    rb_port in[N_IN], out[16];
    for (int i = 0; i < N_IN; i++)
        in[i] = (rb_port){widths[i], NULL, NULL};
    double t0 = 0;
    rb_stage_setup st = {"iekf", &params, in, out, 1e-3, 1, &t0, m, "."};
    void *state = NULL;
    cr_assert_eq(ty->create(&st, &state, &err), RB_OK, "%s", err.msg);

    /* the plant: the torso 20 % heavier than the model from 0.1 s (after the bias window, which takes what the
     * residual holds then as an offset); the robot held by a wrench at the left foot plate that the inputs give
     * exactly */
    rb_dyn *plant = NULL;
    cr_assert_eq(rb_dyn_alloc(m, &plant, &err), RB_OK);
    long torso = rb_model_body_index(m, "torso");
    double pi[10];
    memcpy(pi, m->bodies[torso].inertia, sizeof pi);
    for (int a = 0; a < 10; a++)
        pi[a] *= 1.2;
    long lf = rb_model_frame_index(m, "l_foot_front_contact"), rf = rb_model_frame_index(m, "r_foot_front_contact");
    cr_assert(lf >= 0 && rf >= 0);
    double *x[N_IN], *o[16];
    const double *cx[N_IN];
    for (int i = 0; i < N_IN; i++)
        cx[i] = x[i] = calloc(widths[i] + 1, sizeof(double));
    for (size_t j = 0; j < ty->n_outputs; j++)
        o[j] = calloc(out[j].width + 1, sizeof(double));
    double *q = calloc(m->nq, sizeof *q), *nu = calloc(nv, sizeof *nu), *acc = calloc(nv, sizeof *acc),
           *full = calloc(nv, sizeof *full), *J = calloc(6 * nv, sizeof *J);
    test_alloc_count_init();
    long counted = 0, rb_calls = 0;
    size_t T = 600;
    for (size_t k = 0; k < T; k++) {
        double t = 1e-3 * (double)k;
        if (k == 100)
            cr_assert_eq(rb_dyn_set_body_inertia(m, plant, (size_t)torso, pi, &err), RB_OK);
        rb_dyn_neutral(m, q);
        for (size_t j = 0; j < n; j++) {
            double w = 1 + 0.2 * (double)j, a = 0.15;
            q[m->nq - n + j] = a * sin(w * t);
            nu[6 + j] = a * w * cos(w * t), acc[6 + j] = -a * w * w * sin(w * t);
        }
        /* the contacts carry the base rows: the whole wrench at the left plate, in its MIXED axes */
        cr_assert_eq(rb_dyn_rnea(m, plant, q, nu, acc, NULL, 0, full, &err), RB_OK);
        cr_assert_eq(rb_dyn_kinematics(m, plant, q, nu, acc, &err), RB_OK);
        rb_mat Jm = {6, nv, nv, J};
        cr_assert_eq(rb_dyn_frame_jacobian(m, plant, (size_t)lf, RB_DYN_MIXED, &Jm, &err), RB_OK);
        /* J_b^T lam = base rows: J_b = [Ad 0] is square and invertible on the base block */
        double A[36], b[6];
        for (int r = 0; r < 6; r++) {
            b[r] = full[r];
            for (int c = 0; c < 6; c++)
                A[r * 6 + c] = J[c * nv + (size_t)r]; /* J^T restricted to the base columns */
        }
        /* Gaussian elimination (6 x 6, well conditioned) */
        for (int c = 0; c < 6; c++) {
            int piv = c;
            for (int r = c + 1; r < 6; r++)
                if (fabs(A[r * 6 + c]) > fabs(A[piv * 6 + c]))
                    piv = r;
            for (int k2 = 0; k2 < 6; k2++) {
                double tmp = A[c * 6 + k2];
                A[c * 6 + k2] = A[piv * 6 + k2], A[piv * 6 + k2] = tmp;
            }
            double tb = b[c];
            b[c] = b[piv], b[piv] = tb;
            for (int r = c + 1; r < 6; r++) {
                double f = A[r * 6 + c] / A[c * 6 + c];
                for (int k2 = c; k2 < 6; k2++)
                    A[r * 6 + k2] -= f * A[c * 6 + k2];
                b[r] -= f * b[c];
            }
        }
        double lam[6];
        for (int r = 5; r >= 0; r--) {
            double s = b[r];
            for (int c = r + 1; c < 6; c++)
                s -= A[r * 6 + c] * lam[c];
            lam[r] = s / A[r * 6 + r];
        }
        memcpy(x[0], q + (m->nq - n), n * sizeof(double));
        memcpy(x[1], nu + 6, n * sizeof(double));
        memcpy(x[2], full + 6, n * sizeof(double));
        memcpy(x[4], lam, 6 * sizeof(double));
        memset(x[4] + 6, 0, 6 * sizeof(double));
        memcpy(x[5], q, 3 * sizeof(double));
        memcpy(x[6], q + 3, 4 * sizeof(double));
        memcpy(x[7], nu, 6 * sizeof(double));
        rb_alloc_fail_after(-1);
        long before = test_alloc_count;
        test_alloc_counting = 1;
        int rc = ty->step(state, k, t, cx, o, &err);
        test_alloc_counting = 0;
        counted += test_alloc_count - before;
        rb_calls += rb_alloc_fail_after(-1);
        cr_assert_eq(rc, RB_OK, "sample %zu: %s", k, err.msg);
    }
    if (test_alloc_count_works())
        cr_assert_eq(counted, 0, "C library allocations in step(): %ld", counted);
    cr_assert_eq(rb_calls, 0, "rb_malloc calls in step(): %ld", rb_calls);
    /* the outputs in the stage's order: find mass (torso, l_forearm) and consistent */
    size_t om = 0, ook = 0;
    while (strcmp(ty->outputs[om], "mass") != 0)
        om++;
    while (strcmp(ty->outputs[ook], "consistent") != 0)
        ook++;
    cr_expect(fabs(o[om][0] - pi[0]) < 0.02 * pi[0], "torso mass %g, true %g", o[om][0], pi[0]);
    cr_expect(fabs(o[om][1] - m->bodies[rb_model_body_index(m, "l_forearm")].inertia[0]) < 0.05,
              "forearm mass %g (unchanged)", o[om][1]);
    cr_expect(o[ook][0] == 1 && o[ook][1] == 1, "consistent %g %g", o[ook][0], o[ook][1]);
    ty->destroy(state);
    for (int i = 0; i < N_IN; i++)
        free(x[i]);
    for (size_t j = 0; j < ty->n_outputs; j++)
        free(o[j]);
    free(q), free(nu), free(acc), free(full), free(J);
    rb_dyn_free(plant);
    rb_pipeline_free(p);
    rb_registry_free(reg);
}
