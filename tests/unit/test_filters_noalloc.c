/* The per-step path allocates nothing at all, not only through rb_malloc: the C library's allocations
 * are counted while a flag is set (alloc_count.h), so an allocating LAPACKE wrapper (the row-major ones
 * transpose into a malloc'd copy) would be caught.
 *
 * Threads: OpenBLAS's threaded level-3 drivers malloc a job array per call (0.3.21, level3_thread.c),
 * so a multi-threaded OpenBLAS allocates once it splits a call across threads: here from n = 90
 * (dpotrf of the UKF). Every case is therefore run with one OpenBLAS thread (which must give zero
 * calls) and with the default count (zero required up to n = 42; at n = 90 the count is logged). */
#include <cblas.h>
#include <criterion/criterion.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/core.h"
#include "roboest/filters.h"
#include "alloc_count.h"

typedef struct dims {
    size_t n, m;
} dims;

static int f_rot(void *user, const double *x, const double *u, double dt, double *out, rb_err *err)
{
    (void)u;
    (void)err;
    const dims *d = user;
    for (size_t i = 0; i < d->n; i++)
        out[i] = x[i] + dt * 0.1 * x[(i + 1) % d->n];
    return RB_OK;
}

static int h_sin(void *user, const double *x, double *z, rb_err *err)
{
    (void)err;
    const dims *d = user;
    for (size_t i = 0; i < d->m; i++)
        z[i] = sin(x[i]) + 0.5 * x[d->n - 1 - i];
    return RB_OK;
}

Test(filters_noalloc, interposer_sees_allocating_lapacke)
{
    if (!test_alloc_count_works())
        cr_skip_test("under valgrind, which replaces malloc itself, C-library allocations are not counted");
    test_alloc_count_init();
    double A[9] = {4, 1, 0, 1, 3, 0, 0, 0, 2};
    test_alloc_counting = 1;
    test_alloc_count = 0;
    lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', 3, A, 3); /* transposes through malloc */
    test_alloc_counting = 0;
    cr_assert_eq(info, 0);
    cr_assert(test_alloc_count > 0, "the interposer did not see LAPACKE's allocation");
}

Test(filters_noalloc, no_malloc_at_all_in_steps_at_joint_torque_sizes)
{
    if (!test_alloc_count_works())
        cr_skip_test("under valgrind, which replaces malloc itself, C-library allocations are not counted");
    test_alloc_count_init();
    /* {3, 2}: the kf_derivative shape, every kernel on its loop path (RB_FILT_SMALL_MAX). */
    const dims cases[] = {{42, 30}, {12, 7}, {90, 60}, {3, 2}};
    int threads_default = openblas_get_num_threads();
    for (int pass = 0; pass < 2; pass++) {
        openblas_set_num_threads(pass == 0 ? 1 : threads_default);
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            for (int kind = 0; kind < 4; kind++) { /* KF, EKF, UKF, UKF with hold (held and full steps) */
                dims d = cases[ci];
                size_t n = d.n, m = d.m;
                double *P0 = calloc(n * n, sizeof *P0), *Q = calloc(n * n, sizeof *Q), *R = calloc(m * m, sizeof *R);
                double *F = calloc(n * n, sizeof *F), *H = calloc(m * n, sizeof *H), *z = calloc(m, sizeof *z);
                for (size_t i = 0; i < n; i++) {
                    P0[i * n + i] = 1.0;
                    Q[i * n + i] = 1e-3;
                    F[i * n + i] = 1.0;
                }
                for (size_t i = 0; i < m; i++) {
                    R[i * m + i] = 0.1;
                    H[i * n + i] = 1.0;
                }
                rb_filter_opts o;
                rb_filter_opts_init(&o);
                o.n = n;
                o.m = m;
                o.P0 = P0;
                o.Q = Q;
                o.R = R;
                o.F = F;
                o.H = H;
                o.f = f_rot;
                o.h = h_sin;
                o.user = &d;
                o.gate.mode = kind == 3 ? RB_GATE_VECTOR : RB_GATE_ELEMENT;
                o.gate.probability = 0.999;
                o.hold = kind == 3 ? 4 : 0;
                rb_filter *f;
                rb_err err;
                int rc = kind == 0   ? rb_kf_create(&o, &f, &err)
                         : kind == 1 ? rb_ekf_create(&o, &f, &err)
                                     : rb_ukf_create(&o, &f, &err);
                cr_assert_eq(rc, RB_OK, "%s", err.msg);
                int steps = ci == 0 ? 2000 : ci == 2 ? 300 : 10000;
                test_alloc_counting = 1;
                test_alloc_count = 0;
                for (int t = 0; t < steps; t++) {
                    for (size_t i = 0; i < m; i++)
                        z[i] = 0.01 * (double)((t * 7 + (int)i * 13) % 17 - 8);
                    if (t % 3 == 0)
                        z[(size_t)t % m] = NAN;
                    rc = rb_filter_predict(f, NULL, 0.01, &err);
                    if (rc == RB_OK)
                        rc = rb_filter_update(f, z, &err);
                    if (rc != RB_OK)
                        break;
                }
                long made = test_alloc_count;
                test_alloc_counting = 0;
                cr_assert_eq(rc, RB_OK, "%s", err.msg);
                if (pass == 1 && n > 42 && made > 0)
                    cr_log_info("%d OpenBLAS threads, kind %d, n %zu: %ld malloc calls in %d steps (inside OpenBLAS's "
                                "threaded drivers)",
                                threads_default, kind, n, made, steps);
                else
                    cr_assert_eq(made, 0, "%d thread(s), kind %d n %zu: %ld malloc calls in %d steps",
                                 pass == 0 ? 1 : threads_default, kind, n, made, steps);
                rb_filter_free(f);
                free(P0);
                free(Q);
                free(R);
                free(F);
                free(H);
                free(z);
            }
        }
    }
    openblas_set_num_threads(threads_default);
}
