/* The friction network: forward pass against a plain transcription, backpropagation against central
 * differences, the split and the normalization against closed forms, training on a known friction law with
 * a velocity-history term, determinism, the file's round trip and its rejection of malformed files. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "roboest/friction.h"
#include "support.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A network with every parameter random (biases too, so no unit sits at a ReLU kink by construction). */
static void random_net(rb_fnet *net, size_t n_in, size_t h1, size_t h2, uint64_t seed)
{
    rb_err err;
    cr_assert_eq(rb_friction_net_alloc(net, n_in, h1, h2, &err), RB_OK, "%s", err.msg);
    rb_rng rng;
    rb_rng_seed(&rng, seed);
    for (size_t i = 0; i < net->n_params; i++)
        net->theta[i] = 0.6 * rb_rng_normal(&rng);
    for (size_t i = 0; i < n_in; i++) {
        net->mean[i] = 0.3 * rb_rng_normal(&rng);
        net->iqr[i] = 0.5 + rb_rng_uniform(&rng);
    }
}

/* The MLP written out with plain loops from its definition in friction.h (independent of network.c). */
static double plain_forward(const rb_fnet *net, const double *x)
{
    size_t n = net->n_in, h1 = net->h1, h2 = net->h2;
    const double *W1 = net->theta, *b1 = W1 + h1 * n, *W2 = b1 + h1, *b2 = W2 + h2 * h1, *w3 = b2 + h2, *b3 = w3 + h2;
    double a1[64], a2[64], y = *b3;
    for (size_t i = 0; i < h1; i++) {
        double z = b1[i];
        for (size_t j = 0; j < n; j++)
            z += W1[i * n + j] * (x[j] - net->mean[j]) / net->iqr[j];
        a1[i] = fmax(z, 0);
    }
    for (size_t i = 0; i < h2; i++) {
        double z = b2[i];
        for (size_t j = 0; j < h1; j++)
            z += W2[i * h1 + j] * a1[j];
        a2[i] = fmax(z, 0);
    }
    for (size_t i = 0; i < h2; i++)
        y += w3[i] * a2[i];
    return y;
}

Test(friction_network, forward_matches_a_plain_transcription)
{
    rb_fnet net;
    random_net(&net, 10, 13, 7, 3);
    double work[64], x[10];
    rb_rng rng;
    rb_rng_seed(&rng, 4);
    for (int trial = 0; trial < 50; trial++) {
        for (int i = 0; i < 10; i++)
            x[i] = rb_rng_normal(&rng);
        double got = rb_friction_net_forward(&net, x, work), want = plain_forward(&net, x);
        cr_assert(fabs(got - want) <= 1e-12 * fmax(1, fabs(want)), "trial %d: %.17g vs %.17g", trial, got, want);
    }
    rb_friction_net_free(&net);
}

/* Backpropagation against central differences of the loss on a 6-5-4 network, a batch of 7 with lambda 0.3
 * and dropout masks (zeros and 1 / (1 - p) scalings). Step h = 1e-6 relative: the truncation error is
 * O(h^2) and the rounding error ~1e-16 / h, so the differences agree with the exact gradient to ~1e-9;
 * required: the vector's relative error below 1e-6 and every component within 1e-6 max(|g|, 1e-3). */
Test(friction_network, backpropagation_matches_central_differences)
{
    enum { NI = 6, H1 = 5, H2 = 4, B = 7 };
    rb_fnet net;
    random_net(&net, NI, H1, H2, 11);
    rb_rng rng;
    rb_rng_seed(&rng, 12);
    double Xn[B * NI], t[B], p[B], m1[B * H1], m2[B * H2];
    for (int i = 0; i < B * NI; i++)
        Xn[i] = rb_rng_normal(&rng);
    for (int i = 0; i < B; i++) {
        t[i] = rb_rng_normal(&rng);
        p[i] = rb_rng_normal(&rng);
    }
    const double keep = 1 / (1 - 0.25);
    for (int i = 0; i < B * H1; i++)
        m1[i] = rb_rng_uniform(&rng) < 0.25 ? 0 : keep;
    for (int i = 0; i < B * H2; i++)
        m2[i] = rb_rng_uniform(&rng) < 0.25 ? 0 : keep;
    rb_friction_net_batch b = {B, Xn, t, p, m1, m2};
    size_t np = net.n_params;
    double *grad = malloc(np * sizeof *grad), *work = malloc(rb_friction_net_batch_work_size(&net, B) * sizeof *work);
    double L = rb_friction_net_batch_loss(&net, &b, 0.3, grad, work);
    cr_assert(isfinite(L) && L > 0);
    double num2 = 0, diff2 = 0;
    for (size_t i = 0; i < np; i++) {
        double keep_theta = net.theta[i], h = 1e-6 * fmax(1, fabs(keep_theta));
        net.theta[i] = keep_theta + h;
        double Lp = rb_friction_net_batch_loss(&net, &b, 0.3, NULL, work);
        net.theta[i] = keep_theta - h;
        double Lm = rb_friction_net_batch_loss(&net, &b, 0.3, NULL, work);
        net.theta[i] = keep_theta;
        double fd = (Lp - Lm) / (2 * h);
        cr_assert(fabs(fd - grad[i]) <= 1e-6 * fmax(fabs(grad[i]), 1e-3), "parameter %zu: backprop %.12g, fd %.12g", i,
                  grad[i], fd);
        num2 += fd * fd;
        diff2 += (fd - grad[i]) * (fd - grad[i]);
    }
    cr_log_info("gradient check: relative error %.3g over %zu parameters", sqrt(diff2 / num2), np);
    cr_assert(sqrt(diff2 / num2) < 1e-6);
    /* the loss itself: eq. 4 written out from a forward pass per sample (no dropout) */
    rb_friction_net_batch plain = {B, Xn, t, p, NULL, NULL};
    double Lb = rb_friction_net_batch_loss(&net, &plain, 0.3, NULL, work), want = 0;
    rb_fnet unit = net; /* the same weights with the identity normalization: Xn goes in as it is */
    double zero[NI] = {0}, one[NI] = {1, 1, 1, 1, 1, 1};
    unit.mean = zero, unit.iqr = one;
    double fw[64];
    for (int i = 0; i < B; i++) {
        double y = rb_friction_net_forward(&unit, Xn + i * NI, fw);
        want += (0.7 * (y - t[i]) * (y - t[i]) + 0.3 * (y - p[i]) * (y - p[i])) / B;
    }
    cr_assert(fabs(Lb - want) <= 1e-12 * want, "%.17g vs %.17g", Lb, want);
    free(grad);
    free(work);
    rb_friction_net_free(&net);
}

Test(friction_network, split_is_every_fifth_block)
{
    bool val[5000];
    rb_friction_net_split(5000, 100, val);
    size_t n_val = 0;
    for (size_t i = 0; i < 5000; i++) {
        cr_assert_eq(val[i], (i / 100) % 5 == 4, "sample %zu", i);
        n_val += val[i];
    }
    cr_assert_eq(n_val, 1000, "20 %%");
    rb_friction_net_split(23, 100,
                          val); /* fewer than 5 blocks: blocks of ceil(23 / 5) = 5, the 5th is samples 20..22 */
    for (size_t i = 0; i < 23; i++)
        cr_assert_eq(val[i], i >= 20, "sample %zu", i);
}

/* A velocity history and a friction law that needs it: SCV at the current velocity plus 0.1 times the
 * acceleration (which only the history reveals). Motor velocity R v with R = -100. */
typedef struct dataset {
    size_t n, H;
    double *X, *t, *p;
    bool *val;
} dataset;

static const rb_friction_model LAW = {.kind = RB_FRICTION_SCV, .scv = {0.306, 0.601, 0.673, 0.0094, 0.002}};

static void make_dataset(dataset *d, size_t n, size_t H, double dt)
{
    d->n = n, d->H = H;
    d->X = malloc(n * 2 * H * sizeof *d->X);
    d->t = malloc(n * sizeof *d->t);
    d->p = malloc(n * sizeof *d->p);
    d->val = malloc(n * sizeof *d->val);
    for (size_t k = 0; k < n; k++) {
        for (size_t j = 0; j < H; j++) {
            double t = (double)(k + j) * dt; /* sample k's history ends at time (k + H - 1) dt */
            double v = 0.8 * sin(M_PI * t) + 0.3 * sin(2 * M_PI * 1.7 * t + 1);
            d->X[k * 2 * H + j] = -100 * v;
            d->X[k * 2 * H + H + j] = v;
        }
        double t = (double)(k + H - 1) * dt, v = d->X[k * 2 * H + 2 * H - 1];
        double a = 0.8 * M_PI * cos(M_PI * t) + 0.3 * 2 * M_PI * 1.7 * cos(2 * M_PI * 1.7 * t + 1);
        d->p[k] = rb_friction_eval(&LAW, v);
        d->t[k] = d->p[k] + 0.1 * a;
    }
    rb_friction_net_split(n, 200, d->val);
}

static void free_dataset(dataset *d)
{
    free(d->X);
    free(d->t);
    free(d->p);
    free(d->val);
}

static void small_opts(rb_friction_net_train_opts *o)
{
    rb_friction_net_train_opts_init(o);
    o->hidden[0] = o->hidden[1] = 24;
    o->dropout = 0.0;
    o->lambda = 0.05;
    o->learning_rate = 3e-3;
    o->epochs = 150;
    o->batch_size = 64;
    o->patience = 15;
    o->seed = 5;
}

/* Trained on 20 s at 200 Hz (H 5, 24-24 hidden units, 150 epochs): the validation RMSE against the law must
 * be below 0.05 N m, a tenth of the law's spread (the acceleration term alone has an RMS of 0.32 N m), and
 * below a third of what the physics model alone achieves. lambda 0.05 pulls the optimum towards the SCV
 * curve by 5 % of the acceleration term (~0.016 N m RMS), which the bound leaves room for. */
Test(friction_network, learns_a_friction_law_with_a_history_term)
{
    test_deadline(60);
    dataset d;
    make_dataset(&d, 4000, 5, 0.005);
    rb_friction_net_train_opts o;
    small_opts(&o);
    rb_friction_net_data data = {d.n, 2 * d.H, d.X, d.t, d.p, d.val};
    rb_fnet net;
    rb_friction_net_train_result res;
    rb_err err;
    cr_assert_eq(rb_friction_net_train(&data, &o, &net, &res, &err), RB_OK, "%s", err.msg);
    cr_log_info("train %.4g, validation %.4g, physics only %.4g N m; epochs %zu (best %zu)", res.rmse_train,
                res.rmse_val, res.rmse_physics_val, res.epochs_run, res.best_epoch);
    cr_assert_eq(res.n_train + res.n_val, d.n);
    cr_assert_eq(res.n_val, 800);
    cr_assert(res.rmse_val < 0.05, "validation RMSE %g", res.rmse_val);
    cr_assert(res.rmse_val < res.rmse_physics_val / 3, "%g vs physics %g", res.rmse_val, res.rmse_physics_val);
    /* the reported RMSE is the stored network's, in N m: recompute it with the inference path */
    double *work = malloc(rb_friction_net_work_size(&net) * sizeof *work), s = 0;
    for (size_t k = 0; k < d.n; k++)
        if (d.val[k]) {
            double e = rb_friction_net_forward(&net, d.X + k * 2 * d.H, work) - d.t[k];
            s += e * e;
        }
    cr_assert(fabs(sqrt(s / 800) - res.rmse_val) <= 1e-9, "%.17g vs %.17g", sqrt(s / 800), res.rmse_val);
    /* normalization: the joint velocity's last feature against the quantiles of its sorted values */
    double *col = malloc(res.n_train * sizeof *col);
    size_t m = 0;
    for (size_t k = 0; k < d.n; k++)
        if (!d.val[k])
            col[m++] = d.X[k * 2 * d.H + 2 * d.H - 1];
    qsort(col, m, sizeof *col, cmp);
    double q1pos = 0.25 * (double)(m - 1), q3pos = 0.75 * (double)(m - 1);
    double q1 = col[(size_t)q1pos] + (q1pos - floor(q1pos)) * (col[(size_t)q1pos + 1] - col[(size_t)q1pos]);
    double q3 = col[(size_t)q3pos] + (q3pos - floor(q3pos)) * (col[(size_t)q3pos + 1] - col[(size_t)q3pos]);
    cr_assert(fabs(net.iqr[2 * d.H - 1] - (q3 - q1)) <= 1e-12, "iqr %.17g vs %.17g", net.iqr[2 * d.H - 1], q3 - q1);
    free(col);
    free(work);
    rb_friction_net_free(&net);
    free_dataset(&d);
}

/* The inter-quartile range of 0, 1, ..., n-1 is (n - 1) / 2; a constant feature gets iqr 1. */
Test(friction_network, normalization_uses_mean_and_interquartile_range)
{
    enum { N = 101 };
    double X[N * 2], t[N], p[N];
    bool val[N];
    for (int k = 0; k < N; k++) {
        X[2 * k] = (double)((k * 37) % N); /* a permutation of 0..100 */
        X[2 * k + 1] = 2.5;
        t[k] = p[k] = 0.1 * k;
        val[k] = k == 0 || k == 1;
    }
    /* the training samples are k >= 2: the values (37 k) mod 101 for k = 2..100, i.e. 0..100 without 0 and 37 */
    double vals[N - 2];
    for (int k = 2; k < N; k++)
        vals[k - 2] = (double)((k * 37) % N);
    qsort(vals, N - 2, sizeof *vals, cmp);
    double mean = 0;
    for (int i = 0; i < N - 2; i++)
        mean += vals[i] / (N - 2);
    rb_friction_net_train_opts o;
    small_opts(&o);
    o.epochs = 1;
    rb_friction_net_data d = {N, 2, X, t, p, val};
    rb_fnet net;
    rb_err err;
    cr_assert_eq(rb_friction_net_train(&d, &o, &net, NULL, &err), RB_OK, "%s", err.msg);
    /* 99 values: quartile positions 24.5 and 73.5 */
    double want_iqr = (vals[73] + vals[74]) / 2 - (vals[24] + vals[25]) / 2;
    cr_assert(fabs(net.iqr[0] - want_iqr) < 1e-12, "%.17g vs %.17g", net.iqr[0], want_iqr);
    cr_assert(fabs(net.mean[0] - mean) < 1e-12);
    cr_assert_eq(net.iqr[1], 1.0, "a constant feature is only centred");
    cr_assert_eq(net.mean[1], 2.5);
    rb_friction_net_free(&net);
}

Test(friction_network, training_is_deterministic)
{
    test_deadline(60);
    dataset d;
    make_dataset(&d, 1500, 4, 0.005);
    rb_friction_net_train_opts o;
    small_opts(&o);
    o.epochs = 8;
    o.dropout = 0.2; /* the masks come from the seed too */
    rb_friction_net_data data = {d.n, 2 * d.H, d.X, d.t, d.p, d.val};
    rb_fnet a, b, c;
    rb_err err;
    cr_assert_eq(rb_friction_net_train(&data, &o, &a, NULL, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_friction_net_train(&data, &o, &b, NULL, &err), RB_OK, "%s", err.msg);
    o.seed = 6;
    cr_assert_eq(rb_friction_net_train(&data, &o, &c, NULL, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(memcmp(a.theta, b.theta, a.n_params * sizeof *a.theta), 0, "same seed, same weight bytes");
    cr_assert_eq(memcmp(a.iqr, b.iqr, a.n_in * sizeof *a.iqr), 0);
    cr_assert_neq(memcmp(a.theta, c.theta, a.n_params * sizeof *a.theta), 0, "another seed, other weights");
    rb_friction_net_free(&a);
    rb_friction_net_free(&b);
    rb_friction_net_free(&c);
    free_dataset(&d);
}

/* Early stopping keeps the best epoch's weights: with patience 1 on a learning rate that makes the loss
 * jump around, the run stops early and the kept weights reproduce the lowest validation loss seen. */
static double seen_best;
static size_t seen_epochs;
static int record(void *user, size_t epoch, size_t epochs, double train, double val)
{
    (void)user, (void)epochs, (void)train;
    seen_epochs = epoch;
    if (val < seen_best)
        seen_best = val;
    return 0;
}

Test(friction_network, early_stopping_keeps_the_best_weights)
{
    dataset d;
    make_dataset(&d, 1500, 4, 0.005);
    rb_friction_net_train_opts o;
    small_opts(&o);
    o.epochs = 200;
    o.patience = 1;
    o.learning_rate = 0.05;
    o.progress = record;
    seen_best = INFINITY;
    rb_friction_net_data data = {d.n, 2 * d.H, d.X, d.t, d.p, d.val};
    rb_fnet net;
    rb_friction_net_train_result res;
    rb_err err;
    cr_assert_eq(rb_friction_net_train(&data, &o, &net, &res, &err), RB_OK, "%s", err.msg);
    cr_assert(res.epochs_run < 200 && seen_epochs == res.epochs_run, "stopped after %zu epochs", res.epochs_run);
    cr_assert_eq(res.epochs_run, res.best_epoch + 1, "patience 1: one epoch without improvement");
    cr_assert(fabs(sqrt(res.loss_val) - seen_best) <= 1e-9 * seen_best, "kept %.17g, best seen %.17g",
              sqrt(res.loss_val), seen_best);
    rb_friction_net_free(&net);
    free_dataset(&d);
}

Test(friction_network, training_rejects_bad_data_and_options)
{
    dataset d;
    make_dataset(&d, 100, 2, 0.01);
    d.t[37] = NAN;
    rb_friction_net_train_opts o;
    small_opts(&o);
    rb_friction_net_data data = {d.n, 4, d.X, d.t, d.p, d.val};
    rb_fnet net;
    rb_err err;
    cr_assert_eq(rb_friction_net_train(&data, &o, &net, NULL, &err), RB_ENUMERIC);
    cr_assert(strstr(err.msg, "sample 37") && strstr(err.msg, "friction target"), "%s", err.msg);
    cr_assert_null(net.theta);
    d.t[37] = 0;
    o.dropout = 1.0;
    cr_assert_eq(rb_friction_net_train(&data, &o, &net, NULL, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "dropout"), "%s", err.msg);
    small_opts(&o);
    memset(d.val, 0, d.n * sizeof *d.val);
    cr_assert_eq(rb_friction_net_train(&data, &o, &net, NULL, &err), RB_EINPUT);
    cr_assert(strstr(err.msg, "0 validation"), "%s", err.msg);
    free_dataset(&d);
}

Test(friction_network, forward_allocates_nothing)
{
    if (!test_alloc_count_works())
        cr_skip_test("under valgrind, which replaces malloc itself, C-library allocations are not counted");
    test_alloc_count_init();
    rb_fnet net;
    random_net(&net, 40, 60, 50, 8);
    double x[40] = {0}, work[150];
    rb_friction_net_forward(&net, x, work); /* OpenBLAS's first-call set-up is not a per-sample cost */
    test_alloc_counting = 1;
    test_alloc_count = 0;
    double s = 0;
    for (int k = 0; k < 100; k++) {
        x[k % 40] = 0.01 * k;
        s += rb_friction_net_forward(&net, x, work);
    }
    test_alloc_counting = 0;
    cr_assert(isfinite(s));
    cr_assert_eq(test_alloc_count, 0, "%ld allocations", test_alloc_count);
    rb_friction_net_free(&net);
}

/* The inference form (second layer in single precision) against the double forward pass at the paper's
 * sizes: within 1e-5 of the output's scale (the RMS of the outputs over the trials), allocation-free. */
Test(friction_network, inference_form_matches_the_double_forward_pass)
{
    rb_fnet net;
    rb_err err;
    cr_assert_eq(rb_friction_net_alloc(&net, 40, 233, 229, &err), RB_OK);
    rb_rng rng;
    rb_rng_seed(&rng, 17);
    rb_friction_net_init_weights(&net, &rng);
    rb_friction_net_parts p = rb_friction_net_parts_of(&net);
    for (size_t i = 0; i < 233; i++)
        p.b1[i] = 0.1 * rb_rng_normal(&rng);
    for (size_t i = 0; i < 229; i++)
        p.b2[i] = 0.1 * rb_rng_normal(&rng);
    for (size_t i = 0; i < 40; i++)
        net.mean[i] = 0.2 * rb_rng_normal(&rng), net.iqr[i] = 0.5 + rb_rng_uniform(&rng);
    double x[40];
    rb_friction_net_infer f;
    const rb_fnet *nets[1] = {&net};
    cr_assert_eq(rb_friction_net_infer_init(&f, nets, 1, &err), RB_OK);
    const double *xs[1] = {x};
    double *work = malloc(rb_friction_net_work_size(&net) * sizeof *work), y[200], z[200], scale = 0, worst = 0;
    for (int k = 0; k < 200; k++) {
        for (int i = 0; i < 40; i++)
            x[i] = rb_rng_normal(&rng);
        y[k] = rb_friction_net_forward(&net, x, work);
        rb_friction_net_infer_forward(&f, xs, &z[k]);
        scale += y[k] * y[k] / 200;
    }
    scale = sqrt(scale);
    for (int k = 0; k < 200; k++)
        worst = fmax(worst, fabs(y[k] - z[k]) / scale);
    cr_log_info("inference form: largest difference %.3g of the output scale %.3g", worst, scale);
    cr_assert(worst < 1e-5, "%g", worst);
    cr_assert(worst > 0, "single precision is expected to differ somewhat");
    if (test_alloc_count_works()) {
        test_alloc_count_init();
        test_alloc_counting = 1;
        test_alloc_count = 0;
        double s = 0;
        for (int k = 0; k < 100; k++) {
            rb_friction_net_infer_forward(&f, xs, &z[0]);
            s += z[0];
        }
        test_alloc_counting = 0;
        cr_assert(isfinite(s));
        cr_assert_eq(test_alloc_count, 0, "%ld allocations", test_alloc_count);
    }
    free(work);
    rb_friction_net_infer_free(&f);
    rb_friction_net_free(&net);
}

/* ---- the file ----------------------------------------------------------------------------------- */

static rb_friction_net_file *two_joint_file(void)
{
    rb_friction_net_file *f;
    rb_err err;
    cr_assert_eq(rb_friction_net_file_new(&f, &err), RB_OK);
    f->sample_period = 0.001;
    f->motor_velocity = strdup("motors_state/velocities");
    f->joint_velocity = strdup("kf_derivative of joints_state/positions");
    cr_assert_eq(rb_friction_net_file_set(f, "roboest_version", RB_VERSION, &err), RB_OK);
    cr_assert_eq(rb_friction_net_file_set(f, "note", "quote \" and backslash \\", &err), RB_OK);
    const char *names[2] = {"r_knee", "r_hip_pitch"};
    for (int i = 0; i < 2; i++) {
        rb_friction_net_joint *j;
        cr_assert_eq(rb_friction_net_file_add(f, names[i], &j, &err), RB_OK);
        j->H = 3 + (size_t)i;
        rb_fnet *n = &j->net;
        random_net(n, 2 * j->H, 5 + (size_t)i, 4, 20 + (uint64_t)i);
        n->theta[0] = 0.1; /* a value with no short exact decimal */
        n->theta[1] = 1e-300;
        cr_assert_eq(rb_friction_preset("ergocub_r_knee", &j->scv, &err), RB_OK);
        rb_friction_net_train_opts_init(&j->train);
        j->result.rmse_val = 0.0123;
        j->result.n_train = 800;
        j->split_block = 500;
    }
    return f;
}

Test(friction_network, file_round_trip_is_exact)
{
    char *dir = test_temp_dir(), path[512], path2[512];
    snprintf(path, sizeof path, "%s/net.json", dir);
    snprintf(path2, sizeof path2, "%s/net2.json", dir);
    rb_friction_net_file *f = two_joint_file(), *g = NULL;
    rb_err err;
    cr_assert_eq(rb_friction_net_file_write(f, path, false, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_friction_net_file_write(f, path, false, &err), RB_EEXISTS, "no overwrite without asking");
    cr_assert_eq(rb_friction_net_file_read(path, &g, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(g->n_joints, 2);
    cr_assert_eq(g->sample_period, 0.001);
    cr_assert_str_eq(g->joint_velocity, "kf_derivative of joints_state/positions");
    cr_assert_str_eq(g->provenance[1].value, "quote \" and backslash \\");
    for (int i = 0; i < 2; i++) {
        const rb_friction_net_joint *a = &f->joints[i], *b = rb_friction_net_file_find(g, a->joint);
        cr_assert_not_null(b);
        cr_assert_eq(a->H, b->H);
        cr_assert_eq(b->net.h1, a->net.h1);
        cr_assert_eq(memcmp(a->net.theta, b->net.theta, a->net.n_params * sizeof(double)), 0, "weights bit-exact");
        cr_assert_eq(memcmp(a->net.mean, b->net.mean, a->net.n_in * sizeof(double)), 0);
        cr_assert_eq(memcmp(a->net.iqr, b->net.iqr, a->net.n_in * sizeof(double)), 0);
        cr_assert_eq(memcmp(&a->scv.scv, &b->scv.scv, sizeof a->scv.scv), 0);
        cr_assert_eq(b->result.rmse_val, 0.0123);
        cr_assert_eq(b->result.n_train, 800);
    }
    cr_assert_null(rb_friction_net_file_find(g, "l_knee"));
    /* what was read writes the same bytes */
    cr_assert_eq(rb_friction_net_file_write(g, path2, false, &err), RB_OK, "%s", err.msg);
    size_t l1, l2;
    char *t1 = test_slurp(path, &l1), *t2 = test_slurp(path2, &l2);
    cr_assert(l1 == l2 && memcmp(t1, t2, l1) == 0, "rewritten file differs");
    free(t1);
    free(t2);
    rb_friction_net_file_free(f);
    rb_friction_net_file_free(g);
    test_remove_tree(dir);
}

/* Write the two-joint file, apply one text edit (the first occurrence of `from` becomes `to`), read it and
 * expect RB_EINPUT with every one of the NULL-terminated fragments in the message. */
static void expect_rejected(const char *from, const char *to, const char *const *fragments)
{
    char *dir = test_temp_dir(), path[512];
    snprintf(path, sizeof path, "%s/net.json", dir);
    rb_friction_net_file *f = two_joint_file(), *g = NULL;
    rb_err err;
    cr_assert_eq(rb_friction_net_file_write(f, path, false, &err), RB_OK, "%s", err.msg);
    size_t len;
    char *text = test_slurp(path, &len), *at = strstr(text, from);
    cr_assert_not_null(at, "no '%s' in the file", from);
    char *edited = malloc(len + strlen(to) + 1);
    memcpy(edited, text, (size_t)(at - text));
    strcpy(edited + (at - text), to);
    strcat(edited, at + strlen(from));
    FILE *fp = fopen(path, "w");
    fputs(edited, fp);
    fclose(fp);
    cr_assert_eq(rb_friction_net_file_read(path, &g, &err), RB_EINPUT, "edit '%s' -> '%s' accepted", from, to);
    cr_assert_null(g);
    cr_assert(strstr(err.msg, path), "message names the file: %s", err.msg);
    cr_assert_null(strchr(err.msg, '\n'));
    for (const char *const *s = fragments; *s; s++)
        cr_assert(strstr(err.msg, *s), "'%s' not in: %s", *s, err.msg);
    free(text);
    free(edited);
    rb_friction_net_file_free(f);
    test_remove_tree(dir);
}

Test(friction_network, file_rejects_malformed_content)
{
    /* a weight row one value short: the wrong input size */
    expect_rejected(
        "\"weights\": [\n          [0.1, ", "\"weights\": [\n          [",
        (const char *const[]){"joints[0] (r_knee)", "layers[0].weights row 0", "5 values", "2 H = 6", NULL});
    /* H that disagrees with the normalization and weights */
    expect_rejected("\"H\": 3", "\"H\": 4",
                    (const char *const[]){"joints[0] (r_knee)", "normalization.mean", "2 H = 8", NULL});
    expect_rejected("\"version\": 1", "\"version\": 2", (const char *const[]){"unsupported version 2", NULL});
    expect_rejected("roboest-friction-network", "something-else",
                    (const char *const[]){"not a friction network file", NULL});
    expect_rejected("\"r_hip_pitch\"", "\"r_knee\"", (const char *const[]){"joints[1] (r_knee)", "twice", NULL});
    expect_rejected("\"hidden\": [6, 4]", "\"hidden\": [6, 5]",
                    (const char *const[]){"joints[1] (r_hip_pitch)", "layers[1].weights", "5", NULL});
    expect_rejected("\"F_s\": ", "\"F_s\": -", (const char *const[]){"scv", "F_s", NULL});
    expect_rejected("\"iqr\": [", "\"iqr\": [-", (const char *const[]){"normalization.iqr[0]", "> 0", NULL});
    expect_rejected("\"joints\": [", "\"joints\": 7, \"x\": [", (const char *const[]){"joints: expected", NULL});
    expect_rejected("{", "[", (const char *const[]){"malformed JSON", NULL});
    /* a joint name cut short by \u0000 would be looked up as another name */
    expect_rejected("\"r_hip_pitch\"", "\"r_hip\\u0000pitch\"", (const char *const[]){"\\u0000", NULL});
}

Test(friction_network, devices_and_folders_are_refused_before_reading)
{
    rb_friction_net_file *g = NULL;
    rb_err err;
    const char *paths[] = {"/dev/zero", "/tmp"};
    for (size_t i = 0; i < 2; i++) {
        cr_assert_eq(rb_friction_net_file_read(paths[i], &g, &err), RB_EINPUT, "%s accepted", paths[i]);
        cr_assert_null(g);
        cr_assert(strstr(err.msg, paths[i]) && strstr(err.msg, "not a regular file"), "%s", err.msg);
    }
}

Test(friction_network, missing_file_is_not_found)
{
    rb_friction_net_file *g = NULL;
    rb_err err;
    cr_assert_eq(rb_friction_net_file_read("/nonexistent/net.json", &g, &err), RB_ENOTFOUND);
    cr_assert(strstr(err.msg, "/nonexistent/net.json"), "%s", err.msg);
}
