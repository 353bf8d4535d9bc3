/* UKF step time at the sizes of the joint-torque problem against the OpenBLAS floor. Never a timed
 * test: it prints a Markdown table.
 *
 * Cases: n = 42, m = 30 (one ergoCub leg: 85 sigma points) and n = 90, m = 60 (both legs: 181).
 * Filter: rb_ukf with alpha 1, beta 2, kappa 0, a trivial process model (x+ = x) and a cheap linear
 * measurement z_i = x_i + 0.5 x_{i + n - m} (every state observed), Q = 1e-4 I, R = 1e-2 I.
 * One step = rb_filter_predict + rb_filter_update.
 *
 * Floor: the BLAS / LAPACK calls one such step makes, timed alone on the same sizes in the same run:
 *   predict  dpotrf(n) [sigma points], dsyrk(n, k = 2n) [covariance of the propagated points]
 *   update   dpotrf(n) [fresh sigma points], dsyrk(m, k = 2n) [S], dtrmm(n x m) [cross covariance],
 *            dpotrf(m) [S = L L^T], dtrsm(n x m) [W = C L^-T], dsyrk(n, k = m) [P - W W^T]
 * (each dpotrf timed on a fresh copy, the copy's own time subtracted). The step's multiple of the floor
 * is the overhead of everything else (sigma points, 2 x (2n + 1) model calls, means, copies, checks).
 *
 * Each case runs with OpenBLAS's default thread count and with one thread (openblas_set_num_threads).
 * Timing: warm-up 0.2 s, then BATCHES batches of about 10 ms; the figure is the median per call.
 *
 * Usage: bench_filters [BATCHES]   (default 21) */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/core.h"
#include "roboest/filters.h"
#include "bench_timing.h"

typedef struct dims {
    size_t n, m;
} dims;

static int f_identity(void *user, const double *x, const double *u, double dt, double *out, rb_err *err)
{
    (void)u;
    (void)dt;
    (void)err;
    const dims *d = user;
    memcpy(out, x, d->n * sizeof(double));
    return RB_OK;
}

static int h_linear(void *user, const double *x, double *z, rb_err *err)
{
    (void)err;
    const dims *d = user;
    const double *tail = x + (d->n - d->m);
    for (size_t i = 0; i < d->m; i++)
        z[i] = x[i] + 0.5 * tail[i];
    return RB_OK;
}

/* Median over batches of seconds per call of fn(ctx). */
typedef void (*work_fn)(void *ctx);

static double time_median(work_fn fn, void *ctx, int batches)
{
    double t0 = rb_monotonic_seconds();
    long calls = 0;
    while (rb_monotonic_seconds() - t0 < 0.2) {
        fn(ctx);
        calls++;
    }
    double per = 0.2 / (double)calls;
    long per_batch = (long)(0.01 / per) + 1;
    double *t = malloc((size_t)batches * sizeof *t);
    for (int b = 0; b < batches; b++) {
        double s = rb_monotonic_seconds();
        for (long i = 0; i < per_batch; i++)
            fn(ctx);
        t[b] = (rb_monotonic_seconds() - s) / (double)per_batch;
    }
    qsort(t, (size_t)batches, sizeof *t, cmp_double);
    double med = t[batches / 2];
    free(t);
    return med;
}

/* ---- the filter step ---- */
typedef struct step_ctx {
    rb_filter *f;
    double *z;
    size_t m;
    long k;
} step_ctx;

static void ukf_step(void *p)
{
    step_ctx *c = p;
    rb_err err;
    for (size_t i = 0; i < c->m; i++)
        c->z[i] = 0.01 * (double)((c->k * 7 + (long)i * 13) % 17 - 8);
    c->k++;
    if (rb_filter_predict(c->f, NULL, 0.01, &err) != RB_OK || rb_filter_update(c->f, c->z, &err) != RB_OK) {
        fprintf(stderr, "bench_filters: %s\n", err.msg);
        exit(1);
    }
}

/* ---- the floor ---- */
typedef struct floor_ctx {
    int n, m, op;
    double *P, *L, *Y, *Z, *S, *Ssrc, *C, *W, *Pn;
} floor_ctx;

enum { OP_COPY_P, OP_POTRF_N, OP_SYRK_N2N, OP_SYRK_M2N, OP_TRMM, OP_COPY_S, OP_POTRF_M, OP_TRSM, OP_SYRK_NM, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"copy n x n",   "dpotrf(n)",    "dsyrk(n, 2n)",
                                               "dsyrk(m, 2n)", "dtrmm(n x m)", "copy m x m",
                                               "dpotrf(m)",    "dtrsm(n x m)", "dsyrk(n, m)"};

static void floor_op(void *p)
{
    floor_ctx *c = p;
    int n = c->n, m = c->m;
    switch (c->op) {
    case OP_COPY_P: memcpy(c->L, c->P, (size_t)n * (size_t)n * sizeof(double)); break;
    case OP_POTRF_N:
        memcpy(c->L, c->P, (size_t)n * (size_t)n * sizeof(double));
        LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, c->L, n);
        break;
    case OP_SYRK_N2N:
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, 2 * n, 0.01, c->Y, n, 1.0, c->Pn, n);
        break;
    case OP_SYRK_M2N:
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, m, 2 * n, 0.01, c->Z, m, 1.0, c->S, m);
        break;
    case OP_TRMM:
        cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n, m, 1.0, c->L, n, c->C, n);
        break;
    case OP_COPY_S: memcpy(c->S, c->Ssrc, (size_t)m * (size_t)m * sizeof(double)); break;
    case OP_POTRF_M:
        memcpy(c->S, c->Ssrc, (size_t)m * (size_t)m * sizeof(double));
        LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', m, c->S, m);
        break;
    case OP_TRSM:
        cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, n, m, 1.0, c->S, m, c->W, n);
        break;
    case OP_SYRK_NM: cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, m, -1e-6, c->W, n, 1.0, c->Pn, n); break;
    }
}

static void fill_spd(double *A, int n, unsigned seed)
{
    rb_rng rng;
    rb_rng_seed(&rng, seed);
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            double v = (i == j) ? (double)n : 0.1 * rb_rng_normal(&rng);
            A[i * n + j] = A[j * n + i] = v;
        }
}

static double floor_time(int n, int m, int batches, double per_op[OP_COUNT])
{
    size_t nn = (size_t)n * (size_t)n, mm = (size_t)m * (size_t)m, nm = (size_t)n * (size_t)m;
    size_t N2 = 2 * (size_t)n;
    floor_ctx c = {n,
                   m,
                   0,
                   malloc(nn * 8),
                   malloc(nn * 8),
                   malloc((size_t)n * N2 * 8),
                   malloc((size_t)m * N2 * 8),
                   malloc(mm * 8),
                   malloc(mm * 8),
                   malloc(nm * 8),
                   malloc(nm * 8),
                   malloc(nn * 8)};
    rb_rng rng;
    rb_rng_seed(&rng, 5);
    fill_spd(c.P, n, 1);
    fill_spd(c.Ssrc, m, 2);
    memcpy(c.Pn, c.P, nn * 8);
    memcpy(c.S, c.Ssrc, mm * 8);
    for (size_t i = 0; i < (size_t)n * N2; i++)
        c.Y[i] = rb_rng_normal(&rng);
    for (size_t i = 0; i < (size_t)m * N2; i++)
        c.Z[i] = rb_rng_normal(&rng);
    for (size_t i = 0; i < nm; i++)
        c.C[i] = c.W[i] = 1e-3 * rb_rng_normal(&rng);
    memcpy(c.L, c.P, nn * 8);
    LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, c.L, n);
    for (int op = 0; op < OP_COUNT; op++) {
        c.op = op;
        if (op == OP_TRMM || op == OP_TRSM) { /* keep the operands bounded across repetitions */
            for (size_t i = 0; i < nm; i++)
                c.C[i] = c.W[i] = 1e-3;
        }
        if (op == OP_TRSM) {
            memcpy(c.S, c.Ssrc, mm * 8);
            LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', m, c.S, m);
            for (int i = 0; i < m; i++) /* a unit-diagonal factor: repeated solves stay bounded */
                for (int j = 0; j < m; j++)
                    c.S[i + j * m] = i == j ? 1.0 : (i > j ? 1e-3 : 0.0);
        }
        per_op[op] = time_median(floor_op, &c, batches);
        if (op == OP_TRMM) {
            memcpy(c.L, c.P, nn * 8);
            LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, c.L, n);
        }
    }
    double potrf_n = fmax(per_op[OP_POTRF_N] - per_op[OP_COPY_P], 0.0);
    double potrf_m = fmax(per_op[OP_POTRF_M] - per_op[OP_COPY_S], 0.0);
    per_op[OP_POTRF_N] = potrf_n;
    per_op[OP_POTRF_M] = potrf_m;
    double total = 2 * potrf_n + per_op[OP_SYRK_N2N] + per_op[OP_SYRK_M2N] + per_op[OP_TRMM] + potrf_m +
                   per_op[OP_TRSM] + per_op[OP_SYRK_NM];
    free(c.P);
    free(c.L);
    free(c.Y);
    free(c.Z);
    free(c.S);
    free(c.Ssrc);
    free(c.C);
    free(c.W);
    free(c.Pn);
    return total;
}

static double ukf_time(size_t n, size_t m, int batches)
{
    dims d = {n, m};
    double *P0 = calloc(n * n, sizeof *P0), *Q = calloc(n * n, sizeof *Q), *R = calloc(m * m, sizeof *R);
    for (size_t i = 0; i < n; i++) {
        P0[i * n + i] = 1.0;
        Q[i * n + i] = 1e-4;
    }
    for (size_t i = 0; i < m; i++)
        R[i * m + i] = 1e-2;
    rb_filter_opts o;
    rb_filter_opts_init(&o);
    o.n = n;
    o.m = m;
    o.P0 = P0;
    o.Q = Q;
    o.R = R;
    o.f = f_identity;
    o.h = h_linear;
    o.user = &d;
    rb_filter *f;
    rb_err err;
    if (rb_ukf_create(&o, &f, &err) != RB_OK) {
        fprintf(stderr, "bench_filters: %s\n", err.msg);
        exit(1);
    }
    double *z = calloc(m, sizeof *z);
    step_ctx c = {f, z, m, 0};
    double t = time_median(ukf_step, &c, batches);
    rb_filter_free(f);
    free(z);
    free(P0);
    free(Q);
    free(R);
    return t;
}

int main(int argc, char **argv)
{
    int batches = argc > 1 ? atoi(argv[1]) : 21;
    if (batches < 1)
        batches = 21;
    const dims cases[] = {{42, 30}, {90, 60}};
    int threads_default = openblas_get_num_threads();
    printf("UKF predict + update (alpha 1, beta 2, kappa 0, trivial process model) against the OpenBLAS floor\n");
    printf("(%s; median of %d batches)\n\n", openblas_get_config(), batches);
    printf("| n | m | sigma points | BLAS threads | UKF step (us) | floor (us) | step / floor |\n");
    printf("|---:|---:|---:|---:|---:|---:|---:|\n");
    double per_op[2][2][OP_COUNT];
    for (int ti = 0; ti < 2; ti++) {
        int threads = ti == 0 ? threads_default : 1;
        openblas_set_num_threads(threads);
        for (int ci = 0; ci < 2; ci++) {
            double fl = floor_time((int)cases[ci].n, (int)cases[ci].m, batches, per_op[ci][ti]);
            double st = ukf_time(cases[ci].n, cases[ci].m, batches);
            printf("| %zu | %zu | %zu | %d | %.1f | %.1f | %.2f |\n", cases[ci].n, cases[ci].m, 2 * cases[ci].n + 1,
                   threads, 1e6 * st, 1e6 * fl, st / fl);
        }
    }
    openblas_set_num_threads(threads_default);
    printf("\nFloor breakdown (us per call; dpotrf without its copy):\n\n");
    printf("| operation | n=42 m=30, %d thr | n=42 m=30, 1 thr | n=90 m=60, %d thr | n=90 m=60, 1 thr |\n",
           threads_default, threads_default);
    printf("|---|---:|---:|---:|---:|\n");
    for (int op = 0; op < OP_COUNT; op++) {
        if (op == OP_COPY_P || op == OP_COPY_S)
            continue;
        printf("| %s | %.2f | %.2f | %.2f | %.2f |\n", op_names[op], 1e6 * per_op[0][0][op], 1e6 * per_op[0][1][op],
               1e6 * per_op[1][0][op], 1e6 * per_op[1][1][op]);
    }
    return 0;
}
