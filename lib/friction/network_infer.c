/* The friction network's inference form: every joint's network in one pass, hand-vectorised, with the
 * rounding of the unbatched form (cblas_dgemv and one cblas_saxpy per active unit on OpenBLAS 0.3.21's
 * Haswell/Zen kernels) kept sum by sum. See roboest/friction.h ("The inference form"). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "friction_internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_SIMD 1
#define SIMD_FN __attribute__((target("avx2,fma")))
#else
#define HAVE_SIMD 0
#endif

/* The separate multiply and add below must stay separate: the project builds in ISO C mode, where GCC
 * does not contract them (-ffp-contract=off); clang needs telling. The unit test compares bit by bit. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

enum { NBMAX = 2048 }; /* OpenBLAS dgemv_t's input block */

/* ---- the first layer: a1 += W1 xn over a block of nb inputs (nb a multiple of 4) ------------------- */

/* The last h1 mod 4 units: a pair by two lanes (even and odd inputs), a single one by four, each
 * product rounded before its add (OpenBLAS's SSE2 kernels for the leftover columns). */
static void layer1_rest(const double *W, size_t lda, const double *x, size_t nb, size_t j, size_t h1, double *a1)
{
    if (h1 - j >= 2)
        for (size_t end = j + 2; j < end; j++) {
            const double *w = W + j * lda;
            double e = 0, o = 0;
            for (size_t k = 0; k < nb; k += 2) {
                double p = w[k] * x[k], q = w[k + 1] * x[k + 1];
                e = e + p;
                o = o + q;
            }
            a1[j] += e + o;
        }
    if (j < h1) {
        const double *w = W + j * lda;
        double l[4] = {0, 0, 0, 0};
        for (size_t k = 0; k < nb; k += 4)
            for (int q = 0; q < 4; q++) {
                double p = w[k + q] * x[k + q];
                l[q] = l[q] + p;
            }
        a1[j] += (l[0] + l[2]) + (l[1] + l[3]);
    }
}

static void layer1_block_c(const double *W, size_t lda, const double *x, size_t nb, size_t h1, double *a1)
{
    size_t h4 = h1 & ~(size_t)3, j = 0;
    for (; j < h4; j++) {
        const double *w = W + j * lda;
        double l[4] = {0, 0, 0, 0};
        for (size_t k = 0; k < nb; k += 4)
            for (int q = 0; q < 4; q++)
                l[q] = fma(w[k + q], x[k + q], l[q]);
        a1[j] += (l[0] + l[2]) + (l[1] + l[3]);
    }
    layer1_rest(W, lda, x, nb, j, h1, a1);
}

#if HAVE_SIMD
SIMD_FN static inline double hsum4(__m256d s)
{
    __m128d t = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_hadd_pd(t, t));
}

/* Eight units at a time (eight independent chains), then four; each unit's lanes as in the C form. The
 * accumulators are spelled out: GCC at -O2 keeps an array of them in memory. */
#define FMA_UNIT(c) s##c = _mm256_fmadd_pd(_mm256_loadu_pd(w + (c)*lda + k), xv, s##c)
SIMD_FN static void layer1_block_simd(const double *W, size_t lda, const double *x, size_t nb, size_t h1, double *a1)
{
    size_t h4 = h1 & ~(size_t)3, j = 0;
    for (; j + 8 <= h4; j += 8) {
        const double *w = W + j * lda;
        __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
        for (size_t k = 0; k < nb; k += 4) {
            __m256d xv = _mm256_loadu_pd(x + k);
            FMA_UNIT(0), FMA_UNIT(1), FMA_UNIT(2), FMA_UNIT(3), FMA_UNIT(4), FMA_UNIT(5), FMA_UNIT(6), FMA_UNIT(7);
        }
        a1[j] += hsum4(s0), a1[j + 1] += hsum4(s1), a1[j + 2] += hsum4(s2), a1[j + 3] += hsum4(s3);
        a1[j + 4] += hsum4(s4), a1[j + 5] += hsum4(s5), a1[j + 6] += hsum4(s6), a1[j + 7] += hsum4(s7);
    }
    for (; j < h4; j += 4) {
        const double *w = W + j * lda;
        __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
        for (size_t k = 0; k < nb; k += 4) {
            __m256d xv = _mm256_loadu_pd(x + k);
            FMA_UNIT(0), FMA_UNIT(1), FMA_UNIT(2), FMA_UNIT(3);
        }
        a1[j] += hsum4(s0), a1[j + 1] += hsum4(s1), a1[j + 2] += hsum4(s2), a1[j + 3] += hsum4(s3);
    }
    layer1_rest(W, lda, x, nb, j, h1, a1);
}
#undef FMA_UNIT
#endif

/* a1 = b1 + W1 xn: the inputs in blocks of NBMAX (a multiple of 4 each), then the last n_in mod 4. */
static void layer1(const rb_friction_net_infer_net *p, bool simd)
{
    size_t m = p->n_in, h1 = p->h1, m3 = m & 3, x0 = 0, NB = NBMAX, m2 = (m & (NBMAX - 1)) - m3;
    ptrdiff_t m1 = (ptrdiff_t)(m & ~(size_t)3);
    double *a1 = p->a1;
    const double *xn = p->xn;
    memcpy(a1, p->b1, h1 * sizeof *a1);
    while (NB == NBMAX) {
        m1 -= NBMAX;
        if (m1 < 0) {
            if (!m2)
                break;
            NB = m2;
        }
#if HAVE_SIMD
        if (simd)
            layer1_block_simd(p->W1 + x0, m, xn + x0, NB, h1, a1);
        else
#endif
            layer1_block_c(p->W1 + x0, m, xn + x0, NB, h1, a1);
        x0 += NB;
    }
    (void)simd;
    if (!m3)
        return;
    /* OpenBLAS's C for these, as its compiler contracted it: y += a0 x0 (+ a1 x1 (+ a2 x2)) */
    const double *x = xn + x0;
    for (size_t j = 0; j < h1; j++) {
        const double *w = p->W1 + j * m + x0;
        if (m3 == 1) {
            a1[j] = fma(w[0], x[0], a1[j]);
            continue;
        }
        double t = w[1] * x[1];
        t = fma(w[0], x[0], t);
        if (m3 == 3)
            t = fma(w[2], x[2], t);
        a1[j] += t;
    }
}

/* ---- the second layer: a2 += sum over the active units k of alpha_k times their row of W2t -------- */

/* Fused for the first P = 32 floor(h2 / 32) entries, product then add for the rest. */
static void layer2_c(size_t na, const float *const *rows, const float *al, size_t h2, float *a2)
{
    size_t P = h2 & ~(size_t)31;
    for (size_t k = 0; k < na; k++) {
        const float *w = rows[k];
        for (size_t i = 0; i < P; i++)
            a2[i] = fmaf(al[k], w[i], a2[i]);
        for (size_t i = P; i < h2; i++) {
            float t = al[k] * w[i];
            a2[i] = a2[i] + t;
        }
    }
}

#if HAVE_SIMD
/* Four rows at a time over the whole of a2 (each row read once, front to back), their fused adds in row
 * order per entry; the tail entries after, per row in order. */
SIMD_FN static void layer2_simd(size_t na, const float *const *rows, const float *al, size_t h2, float *a2)
{
    size_t P = h2 & ~(size_t)31, k = 0;
    for (; k + 4 <= na; k += 4) {
        const float *w0 = rows[k], *w1 = rows[k + 1], *w2 = rows[k + 2], *w3 = rows[k + 3];
        __m256 c0 = _mm256_set1_ps(al[k]), c1 = _mm256_set1_ps(al[k + 1]), c2 = _mm256_set1_ps(al[k + 2]),
               c3 = _mm256_set1_ps(al[k + 3]);
        for (size_t i = 0; i < P; i += 8) {
            __m256 s = _mm256_loadu_ps(a2 + i);
            s = _mm256_fmadd_ps(c0, _mm256_loadu_ps(w0 + i), s);
            s = _mm256_fmadd_ps(c1, _mm256_loadu_ps(w1 + i), s);
            s = _mm256_fmadd_ps(c2, _mm256_loadu_ps(w2 + i), s);
            s = _mm256_fmadd_ps(c3, _mm256_loadu_ps(w3 + i), s);
            _mm256_storeu_ps(a2 + i, s);
        }
    }
    for (; k < na; k++) {
        const float *w0 = rows[k];
        __m256 c0 = _mm256_set1_ps(al[k]);
        for (size_t i = 0; i < P; i += 8)
            _mm256_storeu_ps(a2 + i, _mm256_fmadd_ps(c0, _mm256_loadu_ps(w0 + i), _mm256_loadu_ps(a2 + i)));
    }
    if (P == h2)
        return;
    /* the last h2 mod 32 entries: a rounded product, then an add (masked: the row may end the block) */
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), m[4];
    for (int v = 0; v < 4; v++)
        m[v] = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(h2 - P) - 8 * v), lane);
    __m256 t0 = _mm256_maskload_ps(a2 + P, m[0]), t1 = _mm256_maskload_ps(a2 + P + 8, m[1]);
    __m256 t2 = _mm256_maskload_ps(a2 + P + 16, m[2]), t3 = _mm256_maskload_ps(a2 + P + 24, m[3]);
    for (k = 0; k < na; k++) {
        const float *w = rows[k] + P;
        __m256 a = _mm256_set1_ps(al[k]);
        t0 = _mm256_add_ps(t0, _mm256_mul_ps(a, _mm256_maskload_ps(w, m[0])));
        if (h2 - P > 8) {
            t1 = _mm256_add_ps(t1, _mm256_mul_ps(a, _mm256_maskload_ps(w + 8, m[1])));
            t2 = _mm256_add_ps(t2, _mm256_mul_ps(a, _mm256_maskload_ps(w + 16, m[2])));
            t3 = _mm256_add_ps(t3, _mm256_mul_ps(a, _mm256_maskload_ps(w + 24, m[3])));
        }
    }
    _mm256_maskstore_ps(a2 + P, m[0], t0), _mm256_maskstore_ps(a2 + P + 8, m[1], t1);
    _mm256_maskstore_ps(a2 + P + 16, m[2], t2), _mm256_maskstore_ps(a2 + P + 24, m[3], t3);
}
#endif

/* ---- set-up and the pass ------------------------------------------------------------------------ */

void rb_friction_net_infer_free(rb_friction_net_infer *f)
{
    if (!f)
        return;
    rb_free(f->net);
    rb_free(f->block);
    rb_free(f->rows);
    rb_free(f->alpha);
    memset(f, 0, sizeof *f);
}

/* Carve `bytes` at *at from a block, 64-byte aligned (base NULL: count only). */
static void *carve(char *base, size_t *at, size_t bytes)
{
    size_t off = (*at + 63) & ~(size_t)63;
    *at = off + bytes;
    return base ? base + off : NULL;
}

/* Network src's place in the block (and, with a block, its copy there): every array on a cache line, the
 * rows of W2t too (their stride h2 rounded up to 16 floats), so that no vector load straddles two lines. */
static void place(rb_friction_net_infer_net *p, const rb_fnet *src, char *base, size_t *at)
{
    size_t m = src->n_in, h1 = src->h1, h2 = src->h2, ld = (h2 + 15) & ~(size_t)15;
    double *mean = carve(base, at, m * sizeof *mean), *iqr = carve(base, at, m * sizeof *iqr);
    double *W1 = carve(base, at, h1 * m * sizeof *W1), *b1 = carve(base, at, h1 * sizeof *b1);
    double *b2 = carve(base, at, h2 * sizeof *b2), *w3 = carve(base, at, h2 * sizeof *w3);
    float *W2t = carve(base, at, h1 * ld * sizeof *W2t);
    p->xn = carve(base, at, m * sizeof *p->xn);
    p->a1 = carve(base, at, h1 * sizeof *p->a1);
    p->a2 = carve(base, at, h2 * sizeof *p->a2);
    p->terms = carve(base, at, h2 * sizeof *p->terms);
    if (!base)
        return;
    rb_friction_net_parts w = rb_friction_net_parts_of(src);
    memcpy(mean, src->mean, m * sizeof *mean);
    memcpy(iqr, src->iqr, m * sizeof *iqr);
    memcpy(W1, w.W1, h1 * m * sizeof *W1);
    memcpy(b1, w.b1, h1 * sizeof *b1);
    memcpy(b2, w.b2, h2 * sizeof *b2);
    memcpy(w3, w.w3, h2 * sizeof *w3);
    memset(W2t, 0, h1 * ld * sizeof *W2t);
    for (size_t r = 0; r < h2; r++)
        for (size_t j = 0; j < h1; j++)
            W2t[j * ld + r] = (float)w.W2[r * h1 + j];
    p->n_in = m, p->h1 = h1, p->h2 = h2, p->ld2 = ld;
    p->mean = mean, p->iqr = iqr, p->W1 = W1, p->b1 = b1, p->b2 = b2, p->w3 = w3, p->W2t = W2t;
    p->b3 = *w.b3;
}

int rb_friction_net_infer_init(rb_friction_net_infer *f, const rb_fnet *const *nets, size_t n, rb_err *err)
{
    memset(f, 0, sizeof *f);
    if (!n)
        return rb_err_set(err, RB_EINVAL, "friction network inference: no network");
    size_t bytes = 0, h1max = 0;
    rb_friction_net_infer_net count;
    for (size_t i = 0; i < n; i++) {
        place(&count, nets[i], NULL, &bytes);
        h1max = nets[i]->h1 > h1max ? nets[i]->h1 : h1max;
    }
    f->net = rb_calloc(n, sizeof *f->net);
    f->block = rb_malloc(bytes + 64);
    f->rows = rb_malloc(h1max * sizeof *f->rows);
    f->alpha = rb_malloc(h1max * sizeof *f->alpha);
    if (!f->net || !f->block || !f->rows || !f->alpha) {
        rb_friction_net_infer_free(f);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    f->n = n;
    char *base = (char *)f->block + (64 - (uintptr_t)f->block % 64) % 64;
    bytes = 0;
    for (size_t i = 0; i < n; i++)
        place(&f->net[i], nets[i], base, &bytes);
#if HAVE_SIMD
    f->simd = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    return RB_OK;
}

/* The list of active units (a1_j > 0 and not 0 as a float: cblas_saxpy skipped alpha 0) with their a1 as
 * floats, without a branch (about half the units are off, unpredictably); the second layer's start. */
static size_t prepare_c(rb_friction_net_infer *f, rb_friction_net_infer_net *p)
{
    size_t na = 0;
    for (size_t j = 0; j < p->h1; j++) {
        float a = (float)p->a1[j];
        f->rows[na] = p->W2t + j * p->ld2, f->alpha[na] = a;
        na += p->a1[j] > 0 && a != 0;
    }
    for (size_t i = 0; i < p->h2; i++)
        p->a2[i] = (float)p->b2[i];
    return na;
}

/* The output layer's terms: w3_i a2_i where a2_i > 0, else +0. */
static void terms_c(rb_friction_net_infer_net *p)
{
    for (size_t i = 0; i < p->h2; i++)
        p->terms[i] = p->a2[i] > 0 ? p->w3[i] * (double)p->a2[i] : 0;
}

#if HAVE_SIMD
/* The same by a mask (about half the entries are off, unpredictably: no branch). */
SIMD_FN static void terms_simd(rb_friction_net_infer_net *p)
{
    size_t i = 0;
    for (; i + 4 <= p->h2; i += 4) {
        __m256d a = _mm256_cvtps_pd(_mm_loadu_ps(p->a2 + i));
        __m256d on = _mm256_cmp_pd(a, _mm256_setzero_pd(), _CMP_GT_OQ);
        _mm256_storeu_pd(p->terms + i, _mm256_and_pd(on, _mm256_mul_pd(_mm256_loadu_pd(p->w3 + i), a)));
    }
    for (; i < p->h2; i++)
        p->terms[i] = p->a2[i] > 0 ? p->w3[i] * (double)p->a2[i] : 0;
}
#endif

#if HAVE_SIMD
SIMD_FN static void normalize_simd(rb_friction_net_infer_net *p, const double *x)
{
    size_t i = 0;
    for (; i + 4 <= p->n_in; i += 4) {
        __m256d d = _mm256_sub_pd(_mm256_loadu_pd(x + i), _mm256_loadu_pd(p->mean + i));
        _mm256_storeu_pd(p->xn + i, _mm256_div_pd(d, _mm256_loadu_pd(p->iqr + i)));
    }
    for (; i < p->n_in; i++)
        p->xn[i] = (x[i] - p->mean[i]) / p->iqr[i];
}

SIMD_FN static size_t prepare_simd(rb_friction_net_infer *f, rb_friction_net_infer_net *p)
{
    size_t na = 0, j = 0, h1 = p->h1, h2 = p->h2, ld = p->ld2;
    float al[4];
    for (; j + 4 <= h1; j += 4) {
        __m256d a = _mm256_loadu_pd(p->a1 + j);
        __m128 af = _mm256_cvtpd_ps(a);
        _mm_storeu_ps(al, af);
        int on = _mm256_movemask_pd(_mm256_cmp_pd(a, _mm256_setzero_pd(), _CMP_GT_OQ)) &
                 _mm_movemask_ps(_mm_cmp_ps(af, _mm_setzero_ps(), _CMP_NEQ_UQ));
        for (int b = 0; b < 4; b++) {
            f->rows[na] = p->W2t + (j + (size_t)b) * ld, f->alpha[na] = al[b];
            na += (size_t)(on >> b) & 1;
        }
    }
    for (; j < h1; j++) {
        float a = (float)p->a1[j];
        f->rows[na] = p->W2t + j * ld, f->alpha[na] = a;
        na += p->a1[j] > 0 && a != 0;
    }
    size_t i = 0;
    for (; i + 4 <= h2; i += 4)
        _mm_storeu_ps(p->a2 + i, _mm256_cvtpd_ps(_mm256_loadu_pd(p->b2 + i)));
    for (; i < h2; i++)
        p->a2[i] = (float)p->b2[i];
    return na;
}
#endif

void rb_friction_net_infer_forward(rb_friction_net_infer *f, const double *const *x, double *y)
{
    bool simd = f->simd > 0;
    for (size_t r = 0; r < f->n; r++) {
        rb_friction_net_infer_net *p = &f->net[r];
#if HAVE_SIMD
        if (simd) {
            normalize_simd(p, x[r]);
            layer1(p, true);
            layer2_simd(prepare_simd(f, p), f->rows, f->alpha, p->h2, p->a2);
            terms_simd(p);
            continue;
        }
#endif
        for (size_t i = 0; i < p->n_in; i++)
            p->xn[i] = (x[r][i] - p->mean[i]) / p->iqr[i];
        layer1(p, false);
        layer2_c(prepare_c(f, p), f->rows, f->alpha, p->h2, p->a2);
        terms_c(p);
    }
    /* the output sums: one dependent chain of adds per network, four networks side by side in registers (a
     * group of fewer repeats its last network, and drops the copies) */
    for (size_t r = 0; r < f->n; r += 4) {
        const rb_friction_net_infer_net *p[4];
        size_t g = f->n - r < 4 ? f->n - r : 4, h2 = f->net[r].h2;
        for (size_t q = 0; q < 4; q++) {
            p[q] = &f->net[r + (q < g ? q : g - 1)];
            h2 = p[q]->h2 < h2 ? p[q]->h2 : h2;
        }
        double y0 = p[0]->b3, y1 = p[1]->b3, y2 = p[2]->b3, y3 = p[3]->b3;
        for (size_t i = 0; i < h2; i++)
            y0 += p[0]->terms[i], y1 += p[1]->terms[i], y2 += p[2]->terms[i], y3 += p[3]->terms[i];
        double yy[4] = {y0, y1, y2, y3};
        for (size_t q = 0; q < g; q++) { /* a network longer than the group's shortest goes on alone */
            for (size_t i = h2; i < p[q]->h2; i++)
                yy[q] += p[q]->terms[i];
            y[r + q] = yy[q];
        }
    }
}

/* TEMPORARY (lead's placeholder until the helper's block kernel merges) */
void rb_friction_net_infer_forward_many(rb_friction_net_infer *f, const double *const *X, size_t count, double *Y)
{
    const double *x[64];
    for (size_t b = 0; b < count; b++) {
        for (size_t i = 0; i < f->n; i++)
            x[i] = X[i] + b * f->net[i].n_in;
        rb_friction_net_infer_forward(f, x, Y + b * f->n);
    }
}
