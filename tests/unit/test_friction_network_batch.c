/* The batched inference form (rb_friction_net_infer: all joints in one pass, hand-vectorised) against the
 * unbatched form the friction_pinn stage ran up to a661b3c (tests/bench/friction_reference.h: cblas_dgemv and
 * one cblas_saxpy per active unit): the same bits, on the shipped networks and on sizes that reach every
 * leftover path of the kernels, with the vector kernels and with the plain C ones; the stage itself; no
 * allocation per pass. Then the block form (rb_friction_net_infer_forward_many) against the per-sample pass on
 * the same struct, bit for bit, outputs and hidden layers, on the same networks, sizes and kernels, on 0, 1, a
 * sub-block less one, a sub-block and several sub-blocks and a remainder of samples, NaN inputs among them;
 * no allocation there either. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../bench/friction_reference.h"
#include "alloc_count.h"
#include "roboest/estimators.h"
#include "roboest/friction.h"
#include "support.h"

/* Compare the batch with the reference over `samples` random input sets (inputs around each network's mean,
 * spreads `scale` times its iqr, so that the ReLU patterns vary); returns the number of outputs and hidden
 * layers whose bits differ and the largest relative difference of the outputs in *worst. */
/* The reference's bits are those of OpenBLAS's Haswell/Zen kernels: on a CPU where OpenBLAS picks others (AVX-512:
 * SkylakeX, Cooperlake), the comparison needs them chosen at start-up, which make test does. */
static void need_reference_kernels(void)
{
    openblas_set_num_threads(1); /* as roboest runs: threaded, dgemv splits the units between other kernels */
    const char *core = openblas_get_corename();
    cr_assert(core && (strcasecmp(core, "haswell") == 0 || strcasecmp(core, "zen") == 0),
              "OpenBLAS runs its %s kernels: the reference is the Haswell/Zen kernels' rounding; run with "
              "OPENBLAS_CORETYPE=Haswell (make test sets it)",
              core ? core : "(unknown)");
}

static size_t compare(rb_friction_net_infer *f, const rb_fnet *const *nets, size_t n, size_t samples, uint64_t seed,
                      double *worst)
{
    need_reference_kernels();
    ref_infer *ref = calloc(n, sizeof *ref);
    double **x = calloc(n, sizeof *x), *y = calloc(n, sizeof *y);
    cr_assert(ref && x && y);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(ref_infer_init(&ref[i], nets[i]), 0);
        cr_assert(x[i] = calloc(nets[i]->n_in, sizeof *x[i]));
    }
    rb_rng rng;
    rb_rng_seed(&rng, seed);
    size_t differ = 0;
    *worst = 0;
    for (size_t k = 0; k < samples; k++) {
        double scale = k % 3 == 0 ? 0.3 : k % 3 == 1 ? 1 : 3;
        for (size_t i = 0; i < n; i++)
            for (size_t q = 0; q < nets[i]->n_in; q++)
                x[i][q] = nets[i]->mean[q] + scale * nets[i]->iqr[q] * rb_rng_normal(&rng);
        rb_friction_net_infer_forward(f, (const double *const *)x, y);
        for (size_t i = 0; i < n; i++) {
            double want = ref_infer_forward(&ref[i], x[i]);
            if (memcmp(&want, &y[i], sizeof want) != 0) {
                differ++;
                *worst = fmax(*worst, fabs(y[i] - want) / fmax(fabs(want), 1e-300));
            }
            /* the hidden layers too: a first-layer sum off by an ulp rarely changes the output (its float
             * rounding seldom moves), so the output alone would not show a summation order kept or not */
            const rb_friction_net_infer_net *p = &f->net[i];
            if (memcmp(p->a1, ref[i].work + p->n_in, p->h1 * sizeof *p->a1) != 0)
                differ++;
            if (memcmp(p->a2, ref[i].a2, p->h2 * sizeof *p->a2) != 0)
                differ++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        ref_infer_free(&ref[i]);
        free(x[i]);
    }
    free(ref);
    free(x);
    free(y);
    return differ;
}

/* Every joint's network of a shipped file in one batch: the same bits as the reference, with the vector
 * kernels (where the CPU has them) and with the plain C kernels. */
static void shipped(const char *path)
{
    rb_friction_net_file *file;
    rb_err err;
    cr_assert_eq(rb_friction_net_file_read(path, &file, &err), RB_OK, "%s", err.msg);
    const rb_fnet **nets = calloc(file->n_joints, sizeof *nets);
    for (size_t i = 0; i < file->n_joints; i++)
        nets[i] = &file->joints[i].net;
    rb_friction_net_infer f;
    cr_assert_eq(rb_friction_net_infer_init(&f, nets, file->n_joints, &err), RB_OK, "%s", err.msg);
    for (int simd = f.simd; simd >= 0; simd--) {
        f.simd = simd;
        double worst;
        size_t differ = compare(&f, nets, file->n_joints, 1500, 19, &worst);
        cr_log_info(
            "%s (%zu joints, %s kernels): %zu of %zu outputs and layers differ, largest relative difference %.3g", path,
            file->n_joints, simd ? "AVX2/FMA" : "plain C", differ, (size_t)1500 * 3 * file->n_joints, worst);
        cr_assert_eq(
            differ, 0,
            "%s, %s kernels: %zu outputs or hidden layers differ from the unbatched form (largest %.3g relative)", path,
            simd ? "vector" : "plain C", differ, worst);
    }
    rb_friction_net_infer_free(&f);
    free(nets);
    rb_friction_net_file_free(file);
}

Test(friction_network_batch, leg_networks_give_the_bits_of_the_unbatched_form)
{
    shipped("configs/paper/leg_friction_pinn.json");
}

Test(friction_network_batch, humanoid_networks_give_the_bits_of_the_unbatched_form)
{
    shipped("configs/paper/humanoid_friction_pinn.json");
}

Test(friction_network_batch, closed_loop_networks_give_the_bits_of_the_unbatched_form)
{
    shipped("configs/closed_loop/friction_pinn.json");
}

static void random_net(rb_fnet *net, size_t n_in, size_t h1, size_t h2, uint64_t seed)
{
    rb_err err;
    cr_assert_eq(rb_friction_net_alloc(net, n_in, h1, h2, &err), RB_OK, "%s", err.msg);
    rb_rng rng;
    rb_rng_seed(&rng, seed);
    rb_friction_net_init_weights(net, &rng);
    rb_friction_net_parts p = rb_friction_net_parts_of(net);
    for (size_t i = 0; i < h1; i++)
        p.b1[i] = 0.1 * rb_rng_normal(&rng);
    for (size_t i = 0; i < h2; i++)
        p.b2[i] = 0.1 * rb_rng_normal(&rng);
    *p.b3 = rb_rng_normal(&rng);
    for (size_t i = 0; i < n_in; i++)
        net->mean[i] = rb_rng_normal(&rng), net->iqr[i] = 0.5 + rb_rng_uniform(&rng);
}

/* n random networks (seeds seed, seed + 1, ...) of sizes[i] = {n_in, h1, h2}, or all of the shipped size (40, 233,
 * 229) when sizes is NULL; ptr[i] = &nets[i]. */
static void random_nets(rb_fnet *nets, const rb_fnet **ptr, size_t n, const size_t (*sizes)[3], uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        random_net(&nets[i], sizes ? sizes[i][0] : 40, sizes ? sizes[i][1] : 233, sizes ? sizes[i][2] : 229, seed + i);
        ptr[i] = &nets[i];
    }
}

/* Sizes of one batch reaching every leftover path: inputs 0-3 past a multiple of 4 and more than one
 * 2048-input block, hidden units 0-3 past a multiple of 4 (and of 8), second-layer widths below, at and
 * past multiples of 32 and 64. */
Test(friction_network_batch, every_size_gives_the_bits_of_the_unbatched_form)
{
    static const size_t sizes[][3] = {{40, 233, 229}, {42, 234, 64}, {41, 235, 31}, {43, 236, 97}, {4102, 9, 33},
                                      {2, 1, 1},      {44, 7, 32},   {4, 2, 96},    {6, 3, 160},   {20, 16, 250}};
    enum { N = sizeof sizes / sizeof sizes[0] };
    rb_fnet nets[N];
    const rb_fnet *ptr[N];
    random_nets(nets, ptr, N, sizes, 100);
    rb_friction_net_infer f;
    rb_err err;
    cr_assert_eq(rb_friction_net_infer_init(&f, ptr, N, &err), RB_OK, "%s", err.msg);
    for (int simd = f.simd; simd >= 0; simd--) {
        f.simd = simd;
        double worst;
        size_t differ = compare(&f, ptr, N, 400, 23, &worst);
        cr_assert_eq(differ, 0, "%s kernels: %zu outputs or hidden layers differ (largest %.3g relative)",
                     simd ? "vector" : "plain C", differ, worst);
    }
    rb_friction_net_infer_free(&f);
    for (size_t i = 0; i < N; i++)
        rb_friction_net_free(&nets[i]);
}

Test(friction_network_batch, forward_allocates_nothing_and_init_needs_a_network)
{
    rb_fnet nets[3];
    const rb_fnet *ptr[3];
    random_nets(nets, ptr, 3, NULL, 7);
    rb_friction_net_infer f;
    rb_err err;
    cr_assert_eq(rb_friction_net_infer_init(&f, ptr, 0, &err), RB_EINVAL);
    cr_assert_eq(rb_friction_net_infer_init(&f, ptr, 3, &err), RB_OK, "%s", err.msg);
    double x[40] = {0}, y[3], s = 0;
    const double *xs[3] = {x, x, x};
    rb_friction_net_infer_forward(&f, xs, y);
    if (test_alloc_count_works()) {
        test_alloc_count_init();
        test_alloc_counting = 1;
        test_alloc_count = 0;
        for (int k = 0; k < 50; k++) {
            x[k % 40] = 0.1 * k;
            rb_friction_net_infer_forward(&f, xs, y);
            s += y[0] + y[1] + y[2];
        }
        test_alloc_counting = 0;
        cr_assert(isfinite(s));
        cr_assert_eq(test_alloc_count, 0, "%ld allocations", test_alloc_count);
    }
    rb_friction_net_infer_free(&f);
    rb_friction_net_infer_free(&f); /* a zeroed struct is fine */
    for (size_t i = 0; i < 3; i++)
        rb_friction_net_free(&nets[i]);
}

/* The friction_pinn stage on the leg's file, stepped directly: each joint's output, once its history is full,
 * is the reference form's on the same history, bit for bit. */
Test(friction_network_batch, friction_pinn_stage_gives_the_bits_of_the_unbatched_form)
{
    need_reference_kernels();
    const char *path = "configs/paper/leg_friction_pinn.json";
    rb_friction_net_file *file;
    rb_err err;
    cr_assert_eq(rb_friction_net_file_read(path, &file, &err), RB_OK, "%s", err.msg);
    size_t n = file->n_joints, H = file->joints[0].H, T = 300;
    const char **names = calloc(n, sizeof *names);
    ref_infer *ref = calloc(n, sizeof *ref);
    for (size_t i = 0; i < n; i++) {
        names[i] = file->joints[i].joint;
        cr_assert_eq(file->joints[i].H, H);
        cr_assert_eq(ref_infer_init(&ref[i], &file->joints[i].net), 0);
    }
    rb_param_value vals[4] = {{.string = (char *)path}, {.count = 0}, {.string = "zero"}, {0}};
    rb_params params = {&rb_stage_friction_pinn, vals};
    rb_port in[2] = {{n, names, NULL}, {n, names, NULL}}, out[1];
    rb_stage_setup setup = {"pinn", &params, in, out, file->sample_period, 0, NULL, NULL, "."};
    void *state = NULL;
    cr_assert_eq(rb_stage_friction_pinn.create(&setup, &state, &err), RB_OK, "%s", err.msg);
    double *w = calloc(T * n, sizeof *w), *v = calloc(T * n, sizeof *v), *y = calloc(n, sizeof *y);
    double *x = calloc(2 * H, sizeof *x);
    rb_rng rng;
    rb_rng_seed(&rng, 5);
    for (size_t k = 0; k < T * n; k++) {
        v[k] = 0.8 * sin(0.013 * (double)k) + 0.05 * rb_rng_normal(&rng);
        w[k] = 100 * v[k] + rb_rng_normal(&rng);
    }
    size_t checked = 0;
    for (size_t k = 0; k < T; k++) {
        const double *ins[2] = {w + k * n, v + k * n};
        double *outs[1] = {y};
        cr_assert_eq(rb_stage_friction_pinn.step(state, k, (double)k * file->sample_period, ins, outs, &err), RB_OK);
        if (k + 1 < H)
            continue;
        for (size_t i = 0; i < n; i++) {
            for (size_t j = 0; j < H; j++) { /* oldest first */
                x[j] = w[(k + 1 - H + j) * n + i];
                x[H + j] = v[(k + 1 - H + j) * n + i];
            }
            double want = ref_infer_forward(&ref[i], x);
            cr_assert(memcmp(&want, &y[i], sizeof want) == 0, "k %zu joint %s: %.17g, the unbatched form %.17g", k,
                      names[i], y[i], want);
            checked++;
        }
    }
    cr_assert_eq(checked, (T - H + 1) * n);
    rb_stage_friction_pinn.destroy(state);
    for (size_t i = 0; i < n; i++)
        ref_infer_free(&ref[i]);
    free(ref);
    free(names);
    free(w);
    free(v);
    free(y);
    free(x);
    rb_friction_net_file_free(file);
}

/* ---- the block form (rb_friction_net_infer_forward_many) against the per-sample pass -------------------- */

/* count samples of inputs for nets[0..n) (X[i]: network i's, sample-major), spreads cycling 0.3, 1 and 3
 * times each network's iqr; with nan_every > 0 every nan_every-th sample's first input of every network NaN
 * (a history still filling). */
static double **block_inputs(const rb_fnet *const *nets, size_t n, size_t count, uint64_t seed, size_t nan_every)
{
    double **X = calloc(n, sizeof *X);
    cr_assert(X);
    rb_rng rng;
    rb_rng_seed(&rng, seed);
    for (size_t i = 0; i < n; i++)
        cr_assert(X[i] = calloc(count * nets[i]->n_in + 1, sizeof *X[i]));
    for (size_t k = 0; k < count; k++) {
        double scale = k % 3 == 0 ? 0.3 : k % 3 == 1 ? 1 : 3;
        for (size_t i = 0; i < n; i++) {
            double *x = X[i] + k * nets[i]->n_in;
            for (size_t q = 0; q < nets[i]->n_in; q++)
                x[q] = nets[i]->mean[q] + scale * nets[i]->iqr[q] * rb_rng_normal(&rng);
            if (nan_every && k % nan_every == nan_every - 1)
                x[0] = NAN;
        }
    }
    return X;
}

static void free_inputs(double **X, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(X[i]);
    free(X);
}

/* forward_many on count samples against count calls of forward on the same struct: the outputs bit for bit
 * (returns how many differ); Y is filled past count * n with a marker that must stay. */
static size_t many_against_single(rb_friction_net_infer *f, const rb_fnet *const *nets, size_t count, double *const *X)
{
    size_t n = f->n, differ = 0;
    double *Y = malloc((count * n + 8) * sizeof *Y), *y = calloc(n, sizeof *y);
    const double **x = calloc(n, sizeof *x);
    cr_assert(Y && y && x);
    for (size_t k = 0; k < count * n + 8; k++)
        Y[k] = -12345.0;
    rb_friction_net_infer_forward_many(f, (const double *const *)X, count, Y);
    for (size_t k = 0; k < 8; k++)
        cr_assert_eq(Y[count * n + k], -12345.0, "forward_many wrote past count x n outputs");
    for (size_t b = 0; b < count; b++) {
        for (size_t i = 0; i < n; i++)
            x[i] = X[i] + b * nets[i]->n_in;
        rb_friction_net_infer_forward(f, x, y);
        for (size_t i = 0; i < n; i++)
            differ += memcmp(&y[i], &Y[b * n + i], sizeof y[i]) != 0;
    }
    free(Y), free(y), free(x);
    return differ;
}

/* The hidden layers too, network by network (a first-layer sum off by an ulp rarely changes the output):
 * each network alone in a struct of its own with the same kernels; after forward_many the block scratch holds
 * the last sub-block's rows, compared with the per-sample pass's a1 and a2 on those samples. Returns how many
 * rows differ. */
static size_t hidden_against_single(const rb_fnet *const *nets, size_t n, int simd, size_t count, double *const *X)
{
    size_t differ = 0;
    if (!count)
        return 0;
    size_t first = RB_FRICTION_NET_BLOCK * ((count - 1) / RB_FRICTION_NET_BLOCK);
    for (size_t i = 0; i < n; i++) {
        rb_friction_net_infer g;
        rb_err err;
        cr_assert_eq(rb_friction_net_infer_init(&g, &nets[i], 1, &err), RB_OK, "%s", err.msg);
        g.simd = simd;
        double *Y = calloc(count, sizeof *Y), y;
        cr_assert(Y);
        const double *Xi[1] = {X[i]};
        rb_friction_net_infer_forward_many(&g, Xi, count, Y);
        size_t h1 = g.net[0].h1, h2 = g.net[0].h2;
        double *a1 = malloc((count - first) * g.h1_max * sizeof *a1);
        float *a2 = malloc((count - first) * g.ld2_max * sizeof *a2);
        cr_assert(a1 && a2);
        memcpy(a1, g.blk_a1, (count - first) * g.h1_max * sizeof *a1);
        memcpy(a2, g.blk_a2, (count - first) * g.ld2_max * sizeof *a2);
        for (size_t b = first; b < count; b++) {
            const double *x[1] = {X[i] + b * nets[i]->n_in};
            rb_friction_net_infer_forward(&g, x, &y);
            differ += memcmp(g.net[0].a1, a1 + (b - first) * g.h1_max, h1 * sizeof *a1) != 0;
            differ += memcmp(g.net[0].a2, a2 + (b - first) * g.ld2_max, h2 * sizeof *a2) != 0;
            differ += memcmp(&y, &Y[b], sizeof y) != 0;
        }
        free(a1), free(a2), free(Y);
        rb_friction_net_infer_free(&g);
    }
    return differ;
}

/* The counts every block test runs: none, one, a sub-block less one, a sub-block, several and a remainder. */
static const size_t block_counts[] = {0, 1, RB_FRICTION_NET_BLOCK - 1, RB_FRICTION_NET_BLOCK,
                                      3 * RB_FRICTION_NET_BLOCK + 5};

static void block_equal(const rb_fnet *const *nets, size_t n, const char *what, size_t nan_every)
{
    rb_friction_net_infer f;
    rb_err err;
    cr_assert_eq(rb_friction_net_infer_init(&f, nets, n, &err), RB_OK, "%s", err.msg);
    for (int simd = f.simd; simd >= 0; simd--) {
        f.simd = simd;
        for (size_t c = 0; c < sizeof block_counts / sizeof block_counts[0]; c++) {
            size_t count = block_counts[c];
            double **X = block_inputs(nets, n, count, 31 + count, nan_every);
            size_t out = many_against_single(&f, nets, count, X);
            size_t hidden = hidden_against_single(nets, n, simd, count, X);
            cr_log_info("%s, %s kernels, %zu samples: %zu outputs and %zu hidden rows differ", what,
                        simd ? "AVX2/FMA" : "plain C", count, out, hidden);
            cr_assert_eq(out, 0, "%s, %s kernels, %zu samples: %zu outputs differ from the per-sample pass", what,
                         simd ? "vector" : "plain C", count, out);
            cr_assert_eq(hidden, 0, "%s, %s kernels, %zu samples: %zu hidden rows or outputs differ", what,
                         simd ? "vector" : "plain C", count, hidden);
            free_inputs(X, n);
        }
    }
    rb_friction_net_infer_free(&f);
}

static void block_shipped(const char *path)
{
    need_reference_kernels(); /* not needed by the comparison itself; kept so that a run says which kernels */
    rb_friction_net_file *file;
    rb_err err;
    cr_assert_eq(rb_friction_net_file_read(path, &file, &err), RB_OK, "%s", err.msg);
    const rb_fnet **nets = calloc(file->n_joints, sizeof *nets);
    for (size_t i = 0; i < file->n_joints; i++)
        nets[i] = &file->joints[i].net;
    block_equal(nets, file->n_joints, path, 0);
    free(nets);
    rb_friction_net_file_free(file);
}

Test(friction_network_batch, block_form_gives_the_bits_of_the_per_sample_pass_on_the_leg)
{
    block_shipped("configs/paper/leg_friction_pinn.json");
}

Test(friction_network_batch, block_form_gives_the_bits_of_the_per_sample_pass_on_the_humanoid)
{
    block_shipped("configs/paper/humanoid_friction_pinn.json");
}

Test(friction_network_batch, block_form_gives_the_bits_of_the_per_sample_pass_on_the_closed_loop)
{
    block_shipped("configs/closed_loop/friction_pinn.json");
}

/* The sizes of every_size_... (every leftover path of the kernels) and NaN inputs on every fourth sample. */
Test(friction_network_batch, block_form_gives_the_bits_of_the_per_sample_pass_at_every_size)
{
    static const size_t sizes[][3] = {{40, 233, 229}, {42, 234, 64}, {41, 235, 31}, {43, 236, 97},
                                      {4102, 9, 33},  {2, 1, 1},     {44, 7, 32},   {4, 2, 96},
                                      {6, 3, 160},    {20, 16, 250}, {3, 21, 33},   {45, 18, 7}};
    enum { N = sizeof sizes / sizeof sizes[0] };
    rb_fnet nets[N];
    const rb_fnet *ptr[N];
    random_nets(nets, ptr, N, sizes, 300);
    block_equal(ptr, N, "every size", 0);
    block_equal(ptr, N, "every size, NaN inputs", 4);
    for (size_t i = 0; i < N; i++)
        rb_friction_net_free(&nets[i]);
}

Test(friction_network_batch, block_form_allocates_nothing_and_count_0_does_nothing)
{
    rb_fnet nets[3];
    const rb_fnet *ptr[3];
    random_nets(nets, ptr, 3, NULL, 17);
    rb_friction_net_infer f;
    rb_err err;
    cr_assert_eq(rb_friction_net_infer_init(&f, ptr, 3, &err), RB_OK, "%s", err.msg);
    enum { C = 3 * RB_FRICTION_NET_BLOCK + 5 };
    double **X = block_inputs(ptr, 3, C, 41, 0), Y[C * 3], s = 0;
    Y[0] = 7.0;
    rb_friction_net_infer_forward_many(&f, (const double *const *)X, 0, Y);
    cr_assert_eq(Y[0], 7.0, "count 0 wrote an output");
    rb_friction_net_infer_forward_many(&f, (const double *const *)X, C, Y);
    if (test_alloc_count_works()) {
        test_alloc_count_init();
        test_alloc_counting = 1;
        test_alloc_count = 0;
        for (int k = 0; k < 5; k++) {
            X[k % 3][k] += 0.1;
            rb_friction_net_infer_forward_many(&f, (const double *const *)X, C - (size_t)k, Y);
            s += Y[0] + Y[C * 3 - 1 - 3 * (size_t)k];
        }
        test_alloc_counting = 0;
        cr_assert(isfinite(s));
        cr_assert_eq(test_alloc_count, 0, "%ld allocations", test_alloc_count);
    }
    free_inputs(X, 3);
    rb_friction_net_infer_free(&f);
    for (size_t i = 0; i < 3; i++)
        rb_friction_net_free(&nets[i]);
}
