/* The friction network's inference per 1 kHz sample, side by side in one run: "before" is the unbatched form
 * the friction_pinn stage ran up to a661b3c (friction_reference.h: one network per call, cblas_dgemv and one
 * cblas_saxpy per active unit), "after" the per-sample pass of rb_friction_net_infer (every joint in one pass,
 * hand-vectorised kernels), and "block" its block form rb_friction_net_infer_forward_many on the same samples
 * (each network over many samples stage by stage, so that each slice of the weights is read once per
 * sub-block), called on 1000, 64 and 16 samples at a time (a caller's block length), with its speed-up over
 * "before". All run on the shipped networks (the leg's 6 joints, the humanoid's 6 of the paper and the closed
 * loop's 12) with the same inputs, and every output of "after" and "block" is checked bit for bit against
 * "before" ("same bits"). Then the friction_pinn stage's step (histories included) against a661b3c's step
 * (the same history code around the reference form). Never a timed test: it prints Markdown tables.
 *
 * Timing: the thread's CPU time over batches of 1000 samples (inputs made beforehand), "before", "after" and
 * the block form's three call lengths alternating batch by batch (so that load from other processes hits all
 * alike); medians over the batches, and the medians of the per-batch ratios. OpenBLAS runs single-threaded, as
 * the roboest command does.
 *
 * Usage: make bench-friction, or build/bench_friction ROOT [BATCHES]   (ROOT: the repository; default 15) */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_timing.h"
#include "friction_reference.h"
#include "roboest/estimators.h"
#include "roboest/friction.h"

enum { K = 1000 }; /* samples per batch */

typedef struct figures {
    double before, after, ratio; /* median us per sample, median of before / after per batch */
} figures;

static figures medians(double *before, double *after, int batches)
{
    double *ratio = malloc(batches * sizeof *ratio);
    for (int b = 0; b < batches; b++)
        ratio[b] = before[b] / after[b];
    qsort(before, batches, sizeof *before, cmp_double);
    qsort(after, batches, sizeof *after, cmp_double);
    qsort(ratio, batches, sizeof *ratio, cmp_double);
    figures f = {before[batches / 2], after[batches / 2], ratio[batches / 2]};
    free(ratio);
    return f;
}

/* Smooth inputs around each network's normalization: sample k, lag q of joint i. */
static double input(const rb_fnet *net, size_t i, size_t q, size_t k)
{
    return net->mean[q] + net->iqr[q] * sin(0.002 * (double)k + 0.05 * (double)q + (double)i);
}

/* What reading the weights one pass needs costs alone: every first-layer weight (double) and the second-layer
 * rows of the units the last pass found active (float), read by AVX2 loads (folded by xor, nearly free):
 * the memory floor of a pass (us). */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx2"))) static unsigned stream(const float *const *p, const size_t *len, size_t n)
{
    __m256i s0 = _mm256_setzero_si256(), s1 = s0;
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i + 16 <= len[r]; i += 16) {
            s0 = _mm256_xor_si256(s0, _mm256_loadu_si256((const __m256i *)(p[r] + i)));
            s1 = _mm256_xor_si256(s1, _mm256_loadu_si256((const __m256i *)(p[r] + i + 8)));
        }
    return (unsigned)_mm256_extract_epi32(_mm256_xor_si256(s0, s1), 0);
}
#else
static unsigned stream(const float *const *p, const size_t *len, size_t n)
{
    unsigned s = 0;
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < len[r]; i += 16) {
            unsigned u;
            memcpy(&u, p[r] + i, sizeof u);
            s ^= u;
        }
    return s;
}
#endif

static double floor_us(const rb_friction_net_infer *f, int batches)
{
    size_t n = 0;
    for (size_t r = 0; r < f->n; r++)
        n += 1 + f->net[r].h1;
    const float **p = calloc(n, sizeof *p);
    size_t *len = calloc(n, sizeof *len), m = 0;
    for (size_t r = 0; r < f->n; r++) {
        const rb_friction_net_infer_net *q = &f->net[r];
        p[m] = (const float *)q->W1, len[m++] = 2 * q->h1 * q->n_in; /* doubles as pairs of floats */
        for (size_t j = 0; j < q->h1; j++)
            if (q->a1[j] > 0)
                p[m] = q->W2t + j * q->ld2, len[m++] = q->h2;
    }
    double *per = calloc(batches, sizeof *per);
    unsigned sink = 0;
    for (int b = -1; b < batches; b++) {
        double t0 = thread_seconds();
        for (size_t k = 0; k < K; k++)
            sink ^= stream(p, len, m) + (unsigned)k;
        if (b >= 0)
            per[b] = (thread_seconds() - t0) / K * 1e6;
    }
    qsort(per, batches, sizeof *per, cmp_double);
    double med = per[batches / 2] + 0 * (double)sink;
    free(p), free(len), free(per);
    return med;
}

/* The median of v[0..batches) (sorts v). */
static double median(double *v, int batches)
{
    qsort(v, batches, sizeof *v, cmp_double);
    return v[batches / 2];
}

/* The networks alone: one pass over all joints per sample ("after"), and the block form on the same inputs in
 * calls of BLOCK_CALLS[c] samples. */
static const size_t BLOCK_CALLS[] = {K, 64, RB_FRICTION_NET_BLOCK};
enum { NCALLS = sizeof BLOCK_CALLS / sizeof BLOCK_CALLS[0] };

static void networks(const rb_friction_net_file *file, const char *name, int batches)
{
    size_t n = file->n_joints, n_in = file->joints[0].net.n_in;
    const rb_fnet **nets = calloc(n, sizeof *nets);
    ref_infer *ref = calloc(n, sizeof *ref);
    /* a batch's inputs (sample-major, then joint; and per joint for the block form) and the forms' outputs */
    double *X = calloc(K * n * n_in, sizeof *X), *y = calloc(K * n, sizeof *y), *z = calloc(K * n, sizeof *z);
    double *Xb = calloc(K * n * n_in, sizeof *Xb), *u = calloc(K * n, sizeof *u);
    double *before = calloc(batches, sizeof *before), *after = calloc(batches, sizeof *after), sink = 0;
    double *block = calloc(NCALLS * (size_t)batches, sizeof *block);
    double *ratio = calloc(NCALLS * (size_t)batches, sizeof *ratio);
    const double **x = calloc(K * n, sizeof *x), **xb = calloc(n, sizeof *xb);
    rb_friction_net_infer f;
    rb_err err;
    for (size_t i = 0; i < n; i++) {
        nets[i] = &file->joints[i].net;
        if (nets[i]->n_in != n_in || ref_infer_init(&ref[i], nets[i]))
            exit(1);
    }
    if (rb_friction_net_infer_init(&f, nets, n, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    size_t differ = 0, differ_block = 0;
    for (int b = -1; b < batches; b++) { /* batch -1 warms up */
        for (size_t k = 0; k < K; k++)
            for (size_t i = 0; i < n; i++) {
                x[k * n + i] = X + (k * n + i) * n_in;
                for (size_t q = 0; q < n_in; q++)
                    X[(k * n + i) * n_in + q] = Xb[(i * K + k) * n_in + q] =
                        input(nets[i], i, q, (size_t)(b + 1) * K + k);
            }
        double t0 = thread_seconds();
        for (size_t k = 0; k < K; k++)
            for (size_t i = 0; i < n; i++)
                y[k * n + i] = ref_infer_forward(&ref[i], x[k * n + i]);
        double t1 = thread_seconds();
        for (size_t k = 0; k < K; k++)
            rb_friction_net_infer_forward(&f, x + k * n, z + k * n);
        double t2 = thread_seconds();
        for (size_t k = 0; k < K * n; k++) {
            differ += memcmp(&z[k], &y[k], sizeof z[k]) != 0;
            sink += z[k];
        }
        if (b >= 0)
            before[b] = (t1 - t0) / K * 1e6, after[b] = (t2 - t1) / K * 1e6;
        for (size_t c = 0; c < NCALLS; c++) {
            memset(u, 0, K * n * sizeof *u);
            double t3 = thread_seconds();
            for (size_t k0 = 0; k0 < K; k0 += BLOCK_CALLS[c]) {
                size_t cnt = K - k0 < BLOCK_CALLS[c] ? K - k0 : BLOCK_CALLS[c];
                for (size_t i = 0; i < n; i++)
                    xb[i] = Xb + (i * K + k0) * n_in;
                rb_friction_net_infer_forward_many(&f, xb, cnt, u + k0 * n);
            }
            double t4 = thread_seconds();
            for (size_t k = 0; k < K * n; k++) {
                differ_block += memcmp(&u[k], &y[k], sizeof u[k]) != 0;
                sink += u[k];
            }
            if (b >= 0) {
                block[c * (size_t)batches + (size_t)b] = (t4 - t3) / K * 1e6;
                ratio[c * (size_t)batches + (size_t)b] = before[b] / block[c * (size_t)batches + (size_t)b];
            }
        }
    }
    figures m = medians(before, after, batches);
    printf("| %s | %zu | %.2f | %.2f | %.2fx |", name, n, m.before, m.after, m.ratio);
    for (size_t c = 0; c < NCALLS; c++)
        printf(" %.2f (%.2fx) |", median(block + c * (size_t)batches, batches),
               median(ratio + c * (size_t)batches, batches));
    printf(" %s | %.2f |\n", !isfinite(sink) ? "NaN" : differ || differ_block ? "NO" : "yes", floor_us(&f, batches));
    rb_friction_net_infer_free(&f);
    for (size_t i = 0; i < n; i++)
        ref_infer_free(&ref[i]);
    free(nets), free(ref), free(X), free(x), free(y), free(z), free(before), free(after);
    free(Xb), free(u), free(block), free(ratio), free(xb);
}

/* a661b3c's friction_pinn step around the reference form: push the newest pair, evaluate each full joint. */
typedef struct old_joint {
    ref_infer net;
    size_t H, filled;
    double *x;
} old_joint;

static void old_step(old_joint *j, size_t n, const double *w, const double *v, double *y)
{
    for (size_t i = 0; i < n; i++) {
        old_joint *o = &j[i];
        size_t H = o->H;
        memmove(o->x, o->x + 1, (H - 1) * sizeof *o->x);
        memmove(o->x + H, o->x + H + 1, (H - 1) * sizeof *o->x);
        o->x[H - 1] = w[i];
        o->x[2 * H - 1] = v[i];
        if (!isfinite(w[i]) || !isfinite(v[i]))
            o->filled = 0;
        else if (o->filled < H)
            o->filled++;
        y[i] = o->filled == H ? ref_infer_forward(&o->net, o->x) : 0.0;
    }
}

/* The stage's step per sample against a661b3c's, on the joints of `path`. */
static void stage(const rb_friction_net_file *file, const char *path, const char *name, int batches)
{
    size_t n = file->n_joints;
    const char **names = calloc(n, sizeof *names);
    old_joint *old = calloc(n, sizeof *old);
    for (size_t i = 0; i < n; i++) {
        names[i] = file->joints[i].joint;
        old[i].H = file->joints[i].H;
        old[i].x = calloc(2 * old[i].H, sizeof *old[i].x);
        if (ref_infer_init(&old[i].net, &file->joints[i].net))
            exit(1);
    }
    rb_param_value vals[4] = {{.string = (char *)path}, {.count = 0}, {.string = "zero"}, {0}};
    rb_params params = {&rb_stage_friction_pinn, vals};
    rb_port in[2] = {{n, names, NULL}, {n, names, NULL}}, out[1];
    rb_stage_setup setup = {"pinn", &params, in, out, file->sample_period, 0, NULL, NULL, "."};
    void *state = NULL, *bstate = NULL; /* stepped sample by sample, and in the runner's blocks */
    rb_err err;
    if (rb_stage_friction_pinn.create(&setup, &state, &err) || rb_stage_friction_pinn.create(&setup, &bstate, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    /* a batch's inputs and both steps' outputs, sample-major */
    double *w = calloc(K * n, sizeof *w), *v = calloc(K * n, sizeof *v), *y = calloc(K * n, sizeof *y),
           *z = calloc(K * n, sizeof *z), *zb = calloc(K * n, sizeof *zb), *tk = calloc(K, sizeof *tk);
    double *before = calloc(batches, sizeof *before), *after = calloc(batches, sizeof *after), sink = 0;
    double *block = calloc(batches, sizeof *block), *bratio = calloc(batches, sizeof *bratio);
    size_t differ = 0;
    for (int b = -1; b < batches; b++) {
        for (size_t k = 0; k < K * n; k++) {
            size_t s = (size_t)(b + 1) * K + k / n, i = k % n;
            v[k] = 0.5 * sin(0.01 * (double)s + (double)i);
            w[k] = -100 * v[k];
        }
        double t0 = thread_seconds();
        for (size_t k = 0; k < K; k++)
            old_step(old, n, w + k * n, v + k * n, y + k * n);
        double t1 = thread_seconds();
        for (size_t k = 0; k < K; k++) {
            size_t s = (size_t)(b + 1) * K + k;
            const double *ins[2] = {w + k * n, v + k * n};
            double *outs[1] = {z + k * n};
            rb_stage_friction_pinn.step(state, s, 0.001 * (double)s, ins, outs, &err);
        }
        double t2 = thread_seconds();
        const size_t stride[2] = {n, n};
        size_t failed;
        for (size_t k = 0; k < K; k += RB_STAGE_BLOCK) {
            size_t cnt = K - k < RB_STAGE_BLOCK ? K - k : RB_STAGE_BLOCK;
            const double *ins[2] = {w + k * n, v + k * n};
            double *outs[1] = {zb + k * n};
            rb_stage_friction_pinn.step_block(bstate, (size_t)(b + 1) * K + k, cnt, tk, ins, stride, outs, stride,
                                              &failed, &err);
        }
        double t3 = thread_seconds();
        for (size_t k = 0; k < K * n; k++) {
            differ += memcmp(&z[k], &y[k], sizeof z[k]) != 0 || memcmp(&zb[k], &y[k], sizeof zb[k]) != 0;
            sink += z[k] + zb[k];
        }
        if (b >= 0) {
            before[b] = (t1 - t0) / K * 1e6, after[b] = (t2 - t1) / K * 1e6, block[b] = (t3 - t2) / K * 1e6;
            bratio[b] = before[b] / block[b];
        }
    }
    figures m = medians(before, after, batches);
    qsort(block, batches, sizeof *block, cmp_double);
    qsort(bratio, batches, sizeof *bratio, cmp_double);
    double mb = block[batches / 2];
    printf("| %s | %zu | %.2f (%.0fx) | %.2f (%.0fx) | %.2fx | %.2f (%.0fx) | %.2fx | %s |\n", name, n, m.before,
           1000 / m.before, m.after, 1000 / m.after, m.ratio, mb, 1000 / mb, bratio[batches / 2],
           !isfinite(sink) ? "NaN"
           : differ        ? "NO"
                           : "yes");
    rb_stage_friction_pinn.destroy(state);
    rb_stage_friction_pinn.destroy(bstate);
    free(zb), free(tk), free(block), free(bratio);
    for (size_t i = 0; i < n; i++) {
        ref_infer_free(&old[i].net);
        free(old[i].x);
    }
    free(names), free(old), free(w), free(v), free(y), free(z), free(before), free(after);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s ROOT [BATCHES]\n", argv[0]);
        return 2;
    }
    int batches = argc > 2 ? atoi(argv[2]) : 15;
    if (batches < 1)
        batches = 15;
    openblas_set_num_threads(1);
    static const char *const files[][2] = {{"configs/paper/leg_friction_pinn.json", "leg (paper)"},
                                           {"configs/paper/humanoid_friction_pinn.json", "humanoid (paper)"},
                                           {"configs/closed_loop/friction_pinn.json", "humanoid legs (closed loop)"}};
    rb_friction_net_file *f[3];
    char path[3][4096];
    for (int i = 0; i < 3; i++) {
        rb_err err;
        snprintf(path[i], sizeof path[i], "%s/%s", argv[1], files[i][0]);
        if (rb_friction_net_file_read(path[i], &f[i], &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
    }
    rb_friction_net_infer probe;
    rb_err err;
    const rb_fnet *one = &f[0]->joints[0].net;
    if (rb_friction_net_infer_init(&probe, &one, 1, &err))
        return 1;
    printf(
        "Friction network inference per 1 kHz sample, all joints (us, thread CPU time, median of %d batches of "
        "%d samples; before: a661b3c's unbatched form, after: the per-sample pass of all joints, block: the block form "
        "on calls of that many samples; %s kernels)\n\n",
        batches, K, probe.simd ? "AVX2/FMA" : "plain C");
    rb_friction_net_infer_free(&probe);
    printf("| networks | joints | before | after | speed-up |");
    for (size_t c = 0; c < NCALLS; c++)
        printf(" block, calls of %zu (speed-up) |", BLOCK_CALLS[c]);
    printf(" same bits | reading the weights alone |\n|---|---|---|---|---|");
    for (size_t c = 0; c < NCALLS; c++)
        printf("---|");
    printf("---|---|\n");
    for (int i = 0; i < 3; i++)
        networks(f[i], files[i][1], batches);
    printf("\nThe friction_pinn stage per sample, histories included (us; real-time factor at 1 kHz): a661b3c's step, "
           "today's step, and its block step in the runner's blocks of %d samples (what `roboest run` calls)\n\n",
           RB_STAGE_BLOCK);
    printf("| networks | joints | before | step | speed-up | block step | speed-up | same bits |\n"
           "|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < 3; i += 2)
        stage(f[i], path[i], files[i][1], batches);
    for (int i = 0; i < 3; i++)
        rb_friction_net_file_free(f[i]);
    return 0;
}
