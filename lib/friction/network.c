/* The friction network: the MLP, its batch loss and backpropagation, and Adam training with dropout, a
 * block split and early stopping. See roboest/friction.h ("the friction network"). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "friction_internal.h"

/* ---- the network ------------------------------------------------------------------------------ */

static size_t param_count(size_t n_in, size_t h1, size_t h2) { return h1 * (n_in + 1) + h2 * (h1 + 1) + h2 + 1; }

int rb_friction_net_alloc(rb_fnet *net, size_t n_in, size_t h1, size_t h2, rb_err *err)
{
    memset(net, 0, sizeof *net);
    if (!n_in || !h1 || !h2)
        return rb_err_set(err, RB_EINVAL, "friction network: sizes must be > 0 (inputs %zu, hidden %zu and %zu)", n_in,
                          h1, h2);
    if (n_in > 1u << 20 || h1 > 1u << 16 || h2 > 1u << 16)
        return rb_err_set(err, RB_EINVAL, "friction network: sizes too large (inputs %zu, hidden %zu and %zu)", n_in,
                          h1, h2);
    size_t np = param_count(n_in, h1, h2);
    net->theta = rb_calloc(np, sizeof *net->theta);
    net->mean = rb_calloc(n_in, sizeof *net->mean);
    net->iqr = rb_malloc(n_in * sizeof *net->iqr);
    if (!net->theta || !net->mean || !net->iqr) {
        rb_friction_net_free(net);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n_in; i++)
        net->iqr[i] = 1.0;
    net->n_in = n_in, net->h1 = h1, net->h2 = h2, net->n_params = np;
    return RB_OK;
}

void rb_friction_net_free(rb_fnet *net)
{
    if (!net)
        return;
    rb_free(net->theta);
    rb_free(net->mean);
    rb_free(net->iqr);
    memset(net, 0, sizeof *net);
}

int rb_friction_net_copy(rb_fnet *dst, const rb_fnet *src, rb_err *err)
{
    int rc = rb_friction_net_alloc(dst, src->n_in, src->h1, src->h2, err);
    if (rc)
        return rc;
    memcpy(dst->theta, src->theta, src->n_params * sizeof *dst->theta);
    memcpy(dst->mean, src->mean, src->n_in * sizeof *dst->mean);
    memcpy(dst->iqr, src->iqr, src->n_in * sizeof *dst->iqr);
    return RB_OK;
}

rb_friction_net_parts rb_friction_net_parts_of(const rb_fnet *net)
{
    rb_friction_net_parts p;
    p.W1 = net->theta;
    p.b1 = p.W1 + net->h1 * net->n_in;
    p.W2 = p.b1 + net->h1;
    p.b2 = p.W2 + net->h2 * net->h1;
    p.w3 = p.b2 + net->h2;
    p.b3 = p.w3 + net->h2;
    return p;
}

void rb_friction_net_init_weights(rb_fnet *net, rb_rng *rng)
{
    rb_friction_net_parts p = rb_friction_net_parts_of(net);
    double s1 = sqrt(2.0 / (double)net->n_in), s2 = sqrt(2.0 / (double)net->h1), s3 = sqrt(1.0 / (double)net->h2);
    for (size_t i = 0; i < net->h1 * net->n_in; i++)
        p.W1[i] = s1 * rb_rng_normal(rng);
    for (size_t i = 0; i < net->h2 * net->h1; i++)
        p.W2[i] = s2 * rb_rng_normal(rng);
    for (size_t i = 0; i < net->h2; i++)
        p.w3[i] = s3 * rb_rng_normal(rng);
    memset(p.b1, 0, net->h1 * sizeof *p.b1);
    memset(p.b2, 0, net->h2 * sizeof *p.b2);
    *p.b3 = 0;
}

size_t rb_friction_net_work_size(const rb_fnet *net) { return net->n_in + net->h1 + net->h2; }

double rb_friction_net_forward(const rb_fnet *net, const double *x, double *work)
{
    rb_friction_net_parts p = rb_friction_net_parts_of(net);
    size_t n = net->n_in, h1 = net->h1, h2 = net->h2;
    double *xn = work, *a1 = xn + n, *a2 = a1 + h1;
    for (size_t i = 0; i < n; i++)
        xn[i] = (x[i] - net->mean[i]) / net->iqr[i];
    memcpy(a1, p.b1, h1 * sizeof *a1);
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)h1, (int)n, 1.0, p.W1, (int)n, xn, 1, 1.0, a1, 1);
    for (size_t i = 0; i < h1; i++)
        a1[i] = a1[i] > 0 ? a1[i] : 0;
    memcpy(a2, p.b2, h2 * sizeof *a2);
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)h2, (int)h1, 1.0, p.W2, (int)h1, a1, 1, 1.0, a2, 1);
    double y = *p.b3;
    for (size_t i = 0; i < h2; i++)
        y += a2[i] > 0 ? p.w3[i] * a2[i] : 0;
    return y;
}

/* ---- batch loss and backpropagation ----------------------------------------------------------- */

size_t rb_friction_net_batch_work_size(const rb_fnet *net, size_t B)
{
    /* Z1, A1 (B x h1), Z2, A2 (B x h2), y, gy (B) */
    return B * (2 * net->h1 + 2 * net->h2 + 2);
}

/* Z = X W^T + 1 b^T for X (B x k) and W (m x k): the pre-activations of one layer (B x m). */
static void affine(size_t B, size_t m, size_t k, const double *X, const double *W, const double *b, double *Z)
{
    for (size_t i = 0; i < B; i++)
        memcpy(Z + i * m, b, m * sizeof *Z);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)B, (int)m, (int)k, 1.0, X, (int)k, W, (int)k, 1.0, Z,
                (int)m);
}

/* A = relu(Z) times the dropout multipliers (NULL: none). */
static void activate(size_t count, const double *Z, const double *mask, double *A)
{
    for (size_t i = 0; i < count; i++) {
        double a = Z[i] > 0 ? Z[i] : 0;
        A[i] = mask ? a * mask[i] : a;
    }
}

/* Sum over the rows of G (B x m) into g (m). */
static void column_sums(size_t B, size_t m, const double *G, double *g)
{
    memset(g, 0, m * sizeof *g);
    for (size_t i = 0; i < B; i++)
        for (size_t j = 0; j < m; j++)
            g[j] += G[i * m + j];
}

double rb_friction_net_batch_loss(const rb_fnet *net, const rb_friction_net_batch *b, double lambda, double *grad,
                                  double *work)
{
    rb_friction_net_parts p = rb_friction_net_parts_of(net);
    size_t B = b->B, n = net->n_in, h1 = net->h1, h2 = net->h2;
    double *Z1 = work, *A1 = Z1 + B * h1, *Z2 = A1 + B * h1, *A2 = Z2 + B * h2, *y = A2 + B * h2, *gy = y + B;
    affine(B, h1, n, b->Xn, p.W1, p.b1, Z1);
    activate(B * h1, Z1, b->mask1, A1);
    affine(B, h2, h1, A1, p.W2, p.b2, Z2);
    activate(B * h2, Z2, b->mask2, A2);
    for (size_t i = 0; i < B; i++)
        y[i] = *p.b3;
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)B, (int)h2, 1.0, A2, (int)h2, p.w3, 1, 1.0, y, 1);
    double data = 0, phys = 0;
    for (size_t i = 0; i < B; i++) {
        double e = y[i] - b->target[i], f = lambda > 0 ? y[i] - b->physics[i] : 0;
        data += e * e;
        phys += f * f;
        gy[i] = 2.0 / (double)B * ((1 - lambda) * e + lambda * f);
    }
    double loss = ((1 - lambda) * data + lambda * phys) / (double)B;
    if (!grad)
        return loss;

    rb_friction_net_parts g = rb_friction_net_parts_of(&(rb_fnet){.n_in = n, .h1 = h1, .h2 = h2, .theta = grad});
    /* output layer */
    cblas_dgemv(CblasRowMajor, CblasTrans, (int)B, (int)h2, 1.0, A2, (int)h2, gy, 1, 0.0, g.w3, 1);
    double gb3 = 0;
    for (size_t i = 0; i < B; i++)
        gb3 += gy[i];
    *g.b3 = gb3;
    /* second hidden layer: G2 = (gy w3^T) . relu'(Z2) . mask2, stored over Z2 */
    double *G2 = Z2;
    for (size_t i = 0; i < B; i++)
        for (size_t j = 0; j < h2; j++) {
            size_t ij = i * h2 + j;
            double d = Z2[ij] > 0 ? gy[i] * p.w3[j] : 0;
            G2[ij] = b->mask2 ? d * b->mask2[ij] : d;
        }
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)h2, (int)h1, (int)B, 1.0, G2, (int)h2, A1, (int)h1, 0.0,
                g.W2, (int)h1);
    column_sums(B, h2, G2, g.b2);
    /* first hidden layer: G1 = (G2 W2) . relu'(Z1) . mask1, through A1's storage */
    double *D1 = A1;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)B, (int)h1, (int)h2, 1.0, G2, (int)h2, p.W2, (int)h1,
                0.0, D1, (int)h1);
    for (size_t ij = 0; ij < B * h1; ij++) {
        double d = Z1[ij] > 0 ? D1[ij] : 0;
        D1[ij] = b->mask1 ? d * b->mask1[ij] : d;
    }
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)h1, (int)n, (int)B, 1.0, D1, (int)h1, b->Xn, (int)n, 0.0,
                g.W1, (int)n);
    column_sums(B, h1, D1, g.b1);
    return loss;
}

/* ---- training --------------------------------------------------------------------------------- */

void rb_friction_net_split(size_t n, size_t block, bool *validation)
{
    if (!block)
        block = 500;
    if (n / block < 5)
        block = n ? (n + 4) / 5 : 1;
    for (size_t i = 0; i < n; i++)
        validation[i] = (i / block) % 5 == 4;
}

void rb_friction_net_train_opts_init(rb_friction_net_train_opts *o)
{
    memset(o, 0, sizeof *o);
    o->hidden[0] = 233;
    o->hidden[1] = 229;
    o->dropout = 0.1;
    o->lambda = 0.12;
    o->learning_rate = 1e-3;
    o->epochs = 200;
    o->batch_size = 256;
    o->patience = 20;
}

static int check_opts(const rb_friction_net_train_opts *o, rb_err *err)
{
    const char *what = NULL;
    if (!o->hidden[0] || !o->hidden[1])
        what = "hidden sizes must be > 0";
    else if (!(o->dropout >= 0 && o->dropout < 1))
        what = "dropout must be in [0, 1)";
    else if (!(o->lambda >= 0 && o->lambda <= 1))
        what = "lambda must be in [0, 1]";
    else if (!(o->learning_rate > 0 && isfinite(o->learning_rate)))
        what = "learning_rate must be finite and > 0";
    else if (!o->epochs)
        what = "epochs must be >= 1";
    else if (!o->batch_size)
        what = "batch_size must be >= 1";
    return what ? rb_err_set(err, RB_EINVAL, "friction network training: %s", what) : RB_OK;
}

static int check_data(const rb_friction_net_data *d, rb_err *err)
{
    if (!d->X || !d->target || !d->physics || !d->validation || !d->n_in)
        return rb_err_set(err, RB_EINVAL, "friction network training: NULL data or no input");
    for (size_t k = 0; k < d->n; k++) {
        if (!isfinite(d->target[k]))
            return rb_err_set(err, RB_ENUMERIC, "sample %zu: friction target is %g", k, d->target[k]);
        if (!isfinite(d->physics[k]))
            return rb_err_set(err, RB_ENUMERIC, "sample %zu: physics model value is %g", k, d->physics[k]);
        for (size_t i = 0; i < d->n_in; i++)
            if (!isfinite(d->X[k * d->n_in + i]))
                return rb_err_set(err, RB_ENUMERIC, "sample %zu: input %zu is %g", k, i, d->X[k * d->n_in + i]);
    }
    return RB_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* q-quantile of sorted s (n > 0), linear between order statistics. */
static double quantile(const double *s, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    double f = pos - (double)i;
    return i + 1 < n ? s[i] + f * (s[i + 1] - s[i]) : s[n - 1];
}

/* Feature means and inter-quartile ranges over the training rows; buf: n_train values. */
static void normalization(const rb_friction_net_data *d, const size_t *train, size_t n_train, double *buf, rb_fnet *net)
{
    for (size_t i = 0; i < d->n_in; i++) {
        double s = 0;
        for (size_t k = 0; k < n_train; k++)
            s += buf[k] = d->X[train[k] * d->n_in + i];
        qsort(buf, n_train, sizeof *buf, cmp_double);
        double iqr = quantile(buf, n_train, 0.75) - quantile(buf, n_train, 0.25);
        net->mean[i] = s / (double)n_train;
        net->iqr[i] = iqr < 1e-4 ? 1.0 : iqr;
    }
}

/* Everything one training run holds. */
typedef struct trainer {
    const rb_friction_net_data *d;
    const rb_friction_net_train_opts *o;
    size_t n_train, n_val, B;
    size_t *train, *val; /* sample indices */
    double *Xn;          /* n x n_in normalized inputs */
    double *t, *p;       /* n standardized targets and physics values */
    double mu_t, s_t;
    double *bX, *bt, *bp; /* a gathered batch */
    double *m1, *m2;      /* dropout multipliers */
    double *work, *grad, *m, *v, *best;
    rb_rng rng;
} trainer;

static void trainer_free(trainer *tr)
{
    void *blocks[] = {tr->train, tr->val, tr->Xn,   tr->t,    tr->p, tr->bX, tr->bt,  tr->bp,
                      tr->m1,    tr->m2,  tr->work, tr->grad, tr->m, tr->v,  tr->best};
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
        rb_free(blocks[i]);
}

static int trainer_alloc(trainer *tr, const rb_fnet *net, rb_err *err)
{
    const rb_friction_net_data *d = tr->d;
    size_t n = d->n, B = tr->B, np = net->n_params, n_in = d->n_in;
    size_t xn_count;
    if (!rb_size_mul(n, n_in, &xn_count) || xn_count > SIZE_MAX / sizeof(double))
        return rb_err_set(err, RB_ENOMEM, "friction network training: too many samples");
    tr->train = rb_malloc((n ? n : 1) * sizeof *tr->train);
    tr->val = rb_malloc((n ? n : 1) * sizeof *tr->val);
    tr->Xn = rb_malloc((xn_count ? xn_count : 1) * sizeof *tr->Xn);
    tr->t = rb_malloc((n ? n : 1) * sizeof *tr->t);
    tr->p = rb_malloc((n ? n : 1) * sizeof *tr->p);
    tr->bX = rb_malloc(B * n_in * sizeof *tr->bX);
    tr->bt = rb_malloc(B * sizeof *tr->bt);
    tr->bp = rb_malloc(B * sizeof *tr->bp);
    tr->m1 = rb_malloc(B * net->h1 * sizeof *tr->m1);
    tr->m2 = rb_malloc(B * net->h2 * sizeof *tr->m2);
    tr->work = rb_malloc(rb_friction_net_batch_work_size(net, B) * sizeof *tr->work);
    tr->grad = rb_malloc(np * sizeof *tr->grad);
    tr->m = rb_calloc(np, sizeof *tr->m);
    tr->v = rb_calloc(np, sizeof *tr->v);
    tr->best = rb_malloc(np * sizeof *tr->best);
    bool ok = tr->train && tr->val && tr->Xn && tr->t && tr->p && tr->bX && tr->bt && tr->bp && tr->m1 && tr->m2 &&
              tr->work && tr->grad && tr->m && tr->v && tr->best;
    return ok ? RB_OK : rb_err_set(err, RB_ENOMEM, "out of memory");
}

/* Rows idx[0..B) into the batch buffers. */
static void gather(trainer *tr, const size_t *idx, size_t B)
{
    size_t n_in = tr->d->n_in;
    for (size_t i = 0; i < B; i++) {
        memcpy(tr->bX + i * n_in, tr->Xn + idx[i] * n_in, n_in * sizeof *tr->bX);
        tr->bt[i] = tr->t[idx[i]];
        tr->bp[i] = tr->p[idx[i]];
    }
}

static void draw_mask(rb_rng *rng, double *mask, size_t count, double p)
{
    double keep = 1.0 / (1.0 - p);
    for (size_t i = 0; i < count; i++)
        mask[i] = rb_rng_uniform(rng) < p ? 0.0 : keep;
}

/* Mean loss (standardized units) over the samples idx (no dropout); *sq_data (may be NULL): the sum of
 * squared data errors. */
static double evaluate(trainer *tr, const rb_fnet *net, const size_t *idx, size_t count, double lambda, double *sq_data)
{
    double total = 0, data = 0;
    for (size_t s = 0; s < count; s += tr->B) {
        size_t B = count - s < tr->B ? count - s : tr->B;
        gather(tr, idx + s, B);
        rb_friction_net_batch b = {B, tr->bX, tr->bt, tr->bp, NULL, NULL};
        total += rb_friction_net_batch_loss(net, &b, lambda, NULL, tr->work) * (double)B;
        if (sq_data)
            data += rb_friction_net_batch_loss(net, &b, 0.0, NULL, tr->work) * (double)B;
    }
    if (sq_data)
        *sq_data = data;
    return total / (double)count;
}

/* One Adam step (bias-corrected) with the gradient in tr->grad; step counts from 1. */
static void adam(trainer *tr, rb_fnet *net, size_t step)
{
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8, lr = tr->o->learning_rate;
    double c1 = 1 - pow(b1, (double)step), c2 = 1 - pow(b2, (double)step);
    for (size_t i = 0; i < net->n_params; i++) {
        double g = tr->grad[i];
        tr->m[i] = b1 * tr->m[i] + (1 - b1) * g;
        tr->v[i] = b2 * tr->v[i] + (1 - b2) * g * g;
        net->theta[i] -= lr * (tr->m[i] / c1) / (sqrt(tr->v[i] / c2) + eps);
    }
}

/* Normalized inputs, standardized targets and physics values (training statistics). */
static void prepare(trainer *tr, rb_fnet *net)
{
    const rb_friction_net_data *d = tr->d;
    normalization(d, tr->train, tr->n_train, tr->t, net); /* tr->t as sort buffer before it is filled */
    double s = 0, ss = 0;
    for (size_t k = 0; k < tr->n_train; k++)
        s += d->target[tr->train[k]];
    tr->mu_t = s / (double)tr->n_train;
    for (size_t k = 0; k < tr->n_train; k++) {
        double e = d->target[tr->train[k]] - tr->mu_t;
        ss += e * e;
    }
    double sd = sqrt(ss / (double)tr->n_train);
    tr->s_t = sd < 1e-12 ? 1.0 : sd;
    for (size_t k = 0; k < d->n; k++) {
        for (size_t i = 0; i < d->n_in; i++)
            tr->Xn[k * d->n_in + i] = (d->X[k * d->n_in + i] - net->mean[i]) / net->iqr[i];
        tr->t[k] = (d->target[k] - tr->mu_t) / tr->s_t;
        tr->p[k] = (d->physics[k] - tr->mu_t) / tr->s_t;
    }
}

/* Epochs with early stopping; the kept weights end in net->theta (standardized output). */
static int run_epochs(trainer *tr, rb_fnet *net, rb_friction_net_train_result *res, rb_err *err)
{
    const rb_friction_net_train_opts *o = tr->o;
    double best = INFINITY, s2 = tr->s_t * tr->s_t;
    size_t step = 0, waited = 0;
    memcpy(tr->best, net->theta, net->n_params * sizeof *tr->best);
    for (size_t epoch = 1; epoch <= o->epochs; epoch++) {
        for (size_t i = tr->n_train; i > 1; i--) { /* Fisher-Yates */
            size_t j = (size_t)(rb_rng_uniform(&tr->rng) * (double)i), tmp = tr->train[i - 1];
            tr->train[i - 1] = tr->train[j];
            tr->train[j] = tmp;
        }
        double sum = 0;
        for (size_t s = 0; s < tr->n_train; s += tr->B) {
            size_t B = tr->n_train - s < tr->B ? tr->n_train - s : tr->B;
            gather(tr, tr->train + s, B);
            bool drop = o->dropout > 0;
            if (drop) {
                draw_mask(&tr->rng, tr->m1, B * net->h1, o->dropout);
                draw_mask(&tr->rng, tr->m2, B * net->h2, o->dropout);
            }
            rb_friction_net_batch b = {B, tr->bX, tr->bt, tr->bp, drop ? tr->m1 : NULL, drop ? tr->m2 : NULL};
            double loss = rb_friction_net_batch_loss(net, &b, o->lambda, tr->grad, tr->work);
            if (!isfinite(loss))
                return rb_err_set(err, RB_ENUMERIC,
                                  "epoch %zu: the training loss is not finite (lower the learning rate)", epoch);
            sum += loss * (double)B;
            adam(tr, net, ++step);
        }
        double val = evaluate(tr, net, tr->val, tr->n_val, o->lambda, NULL);
        if (!isfinite(val))
            return rb_err_set(err, RB_ENUMERIC,
                              "epoch %zu: the validation loss is not finite (lower the learning rate)", epoch);
        res->epochs_run = epoch;
        if (val < best) {
            best = val;
            res->best_epoch = epoch;
            memcpy(tr->best, net->theta, net->n_params * sizeof *tr->best);
            waited = 0;
        } else {
            waited++;
        }
        if (o->progress) {
            int c = o->progress(o->user, epoch, o->epochs, sqrt(sum / (double)tr->n_train * s2), sqrt(val * s2));
            if (c)
                return rb_err_set(err, c < 0 ? c : RB_EINVAL, "friction network training: cancelled at epoch %zu",
                                  epoch);
        }
        if (o->patience && waited >= o->patience)
            break;
    }
    memcpy(net->theta, tr->best, net->n_params * sizeof *tr->best);
    return RB_OK;
}

/* Fold the target standardization into the output layer and score the kept network in N m. */
static void finish(trainer *tr, rb_fnet *net, rb_friction_net_train_result *res)
{
    rb_friction_net_parts p = rb_friction_net_parts_of(net);
    for (size_t i = 0; i < net->h2; i++)
        p.w3[i] *= tr->s_t;
    *p.b3 = *p.b3 * tr->s_t + tr->mu_t;
    /* score against the raw targets: undo the standardization of the buffers */
    for (size_t k = 0; k < tr->d->n; k++) {
        tr->t[k] = tr->d->target[k];
        tr->p[k] = tr->d->physics[k];
    }
    double sq_train, sq_val, phys = 0;
    evaluate(tr, net, tr->train, tr->n_train, 0.0, &sq_train);
    res->loss_val = evaluate(tr, net, tr->val, tr->n_val, tr->o->lambda, &sq_val);
    for (size_t k = 0; k < tr->n_val; k++) {
        double e = tr->p[tr->val[k]] - tr->t[tr->val[k]];
        phys += e * e;
    }
    res->rmse_train = sqrt(sq_train / (double)tr->n_train);
    res->rmse_val = sqrt(sq_val / (double)tr->n_val);
    res->rmse_physics_val = sqrt(phys / (double)tr->n_val);
}

int rb_friction_net_train(const rb_friction_net_data *d, const rb_friction_net_train_opts *o, rb_fnet *net,
                          rb_friction_net_train_result *res, rb_err *err)
{
    rb_friction_net_train_result local;
    if (!res)
        res = &local;
    memset(res, 0, sizeof *res);
    if (!net || !d || !o)
        return rb_err_set(err, RB_EINVAL, "friction network training: NULL argument");
    memset(net, 0, sizeof *net);
    int rc = check_opts(o, err);
    if (rc || (rc = check_data(d, err)))
        return rc;
    trainer tr = {.d = d, .o = o, .B = o->batch_size};
    for (size_t k = 0; k < d->n; k++)
        d->validation[k] ? tr.n_val++ : tr.n_train++;
    if (!tr.n_train || !tr.n_val)
        return rb_err_set(err, RB_EINPUT,
                          "friction network training: %zu training and %zu validation samples (need both)", tr.n_train,
                          tr.n_val);
    if (tr.B > tr.n_train)
        tr.B = tr.n_train;
    if ((rc = rb_friction_net_alloc(net, d->n_in, o->hidden[0], o->hidden[1], err)) ||
        (rc = trainer_alloc(&tr, net, err)))
        goto done;
    for (size_t k = 0, a = 0, b = 0; k < d->n; k++) {
        if (d->validation[k])
            tr.val[b++] = k;
        else
            tr.train[a++] = k;
    }
    res->n_train = tr.n_train, res->n_val = tr.n_val;
    prepare(&tr, net);
    rb_rng_seed(&tr.rng, o->seed);
    rb_friction_net_init_weights(net, &tr.rng);
    if ((rc = run_epochs(&tr, net, res, err)))
        goto done;
    /* the scoring order of the training samples is the index order, not the last shuffle */
    for (size_t k = 0, a = 0; k < d->n; k++)
        if (!d->validation[k])
            tr.train[a++] = k;
    finish(&tr, net, res);
done:
    trainer_free(&tr);
    if (rc)
        rb_friction_net_free(net);
    return rc;
}

bool rb_friction_net_early_stopping(const rb_friction_net_train_result *r, char *buf, size_t n)
{
    bool first = r->best_epoch == 1 && r->epochs_run > 1;
    if (first)
        snprintf(buf, n,
                 "kept epoch 1 of %zu: the validation loss never improved after the first epoch (check the "
                 "learning rate or the data)",
                 r->epochs_run);
    else if (r->epochs_run > r->best_epoch)
        snprintf(buf, n, "kept epoch %zu of %zu (stopped %zu epoch%s after it)", r->best_epoch, r->epochs_run,
                 r->epochs_run - r->best_epoch, r->epochs_run - r->best_epoch == 1 ? "" : "s");
    else
        snprintf(buf, n, "kept epoch %zu of %zu", r->best_epoch, r->epochs_run);
    return first;
}
