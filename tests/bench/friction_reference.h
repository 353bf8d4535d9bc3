/* The friction network's unbatched inference form as the friction_pinn stage ran it up to commit a661b3c
 * (rb_fnet_infer_forward there): one network per call, the first layer by cblas_dgemv and the second by one
 * cblas_saxpy per active unit into single-precision sums. Kept here, for the equality test
 * (tests/unit/test_friction_network_batch.c) and the benchmark (bench_friction.c) only: the library has one
 * inference form, rb_friction_net_infer. */
#ifndef ROBOEST_TESTS_FRICTION_REFERENCE_H
#define ROBOEST_TESTS_FRICTION_REFERENCE_H

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/friction.h"

typedef struct ref_infer {
    size_t n_in, h1, h2;
    double *mean, *iqr; /* n_in */
    double *W1, *b1;    /* h1 x n_in, h1 */
    float *W2t;         /* h1 x h2: W2 transposed */
    double *b2, *w3;    /* h2 each */
    double b3;
    float *a2;    /* h2 */
    double *work; /* n_in + h1 */
} ref_infer;

static inline void ref_infer_free(ref_infer *f)
{
    free(f->mean);
    free(f->W1);
    free(f->W2t);
    free(f->b2);
    free(f->a2);
    free(f->work);
    memset(f, 0, sizeof *f);
}

static inline int ref_infer_init(ref_infer *f, const rb_fnet *net)
{
    memset(f, 0, sizeof *f);
    size_t n = net->n_in, h1 = net->h1, h2 = net->h2;
    rb_friction_net_parts p = rb_friction_net_parts_of(net);
    f->mean = malloc(2 * n * sizeof *f->mean);
    f->W1 = malloc(h1 * (n + 1) * sizeof *f->W1);
    f->W2t = malloc(h1 * h2 * sizeof *f->W2t);
    f->b2 = malloc(2 * h2 * sizeof *f->b2);
    f->a2 = malloc(h2 * sizeof *f->a2);
    f->work = malloc((n + h1) * sizeof *f->work);
    if (!f->mean || !f->W1 || !f->W2t || !f->b2 || !f->a2 || !f->work) {
        ref_infer_free(f);
        return -1;
    }
    f->n_in = n, f->h1 = h1, f->h2 = h2;
    f->iqr = f->mean + n;
    f->b1 = f->W1 + h1 * n;
    f->w3 = f->b2 + h2;
    memcpy(f->mean, net->mean, n * sizeof *f->mean);
    memcpy(f->iqr, net->iqr, n * sizeof *f->iqr);
    memcpy(f->W1, p.W1, h1 * n * sizeof *f->W1);
    memcpy(f->b1, p.b1, h1 * sizeof *f->b1);
    for (size_t i = 0; i < h2; i++)
        for (size_t j = 0; j < h1; j++)
            f->W2t[j * h2 + i] = (float)p.W2[i * h1 + j];
    memcpy(f->b2, p.b2, h2 * sizeof *f->b2);
    memcpy(f->w3, p.w3, h2 * sizeof *f->w3);
    f->b3 = *p.b3;
    return 0;
}

static inline double ref_infer_forward(ref_infer *f, const double *x)
{
    size_t n = f->n_in, h1 = f->h1, h2 = f->h2;
    double *xn = f->work, *a1 = xn + n;
    float *a2 = f->a2;
    for (size_t i = 0; i < n; i++)
        xn[i] = (x[i] - f->mean[i]) / f->iqr[i];
    memcpy(a1, f->b1, h1 * sizeof *a1);
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)h1, (int)n, 1.0, f->W1, (int)n, xn, 1, 1.0, a1, 1);
    for (size_t i = 0; i < h2; i++)
        a2[i] = (float)f->b2[i];
    for (size_t j = 0; j < h1; j++)
        if (a1[j] > 0) /* a unit the ReLU switched off contributes nothing */
            cblas_saxpy((int)h2, (float)a1[j], f->W2t + j * h2, 1, a2, 1);
    double y = f->b3;
    for (size_t i = 0; i < h2; i++)
        y += a2[i] > 0 ? f->w3[i] * (double)a2[i] : 0;
    return y;
}

#endif
