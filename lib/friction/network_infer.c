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

/* The block form (rb_friction_net_infer_forward_many): samples per sub-block; first-layer units per group
 * (a multiple of 4: their weights, 64 x 40 doubles = 20 KB at the shipped sizes, stay in L1 over a sub-block);
 * second-layer entries per tile (32 floats: four vectors per sample, two samples side by side). */
enum { BLK = RB_FRICTION_NET_BLOCK, UNITS = 64, TILE = 32 };

/* An active unit of one sample: its a1 as a float and its W2t row's offset (floats). */
typedef struct act {
    float alpha;
    uint32_t off;
} act;

/* ---- the first layer: a1 += W1 xn over a block of nb inputs (nb a multiple of 4) ------------------- */

/* The last h1 mod 4 units: a pair by two lanes (even and odd inputs), a single one by four, each
 * product rounded before its add (OpenBLAS's SSE2 kernels for the leftover columns). */
static void layer1_rest(const double *W, size_t lda, const double *x, size_t nb, size_t j, size_t h1, const double *a0,
                        double *a1)
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
            a1[j] = a0[j] + (e + o);
        }
    if (j < h1) {
        const double *w = W + j * lda;
        double l[4] = {0, 0, 0, 0};
        for (size_t k = 0; k < nb; k += 4)
            for (int q = 0; q < 4; q++) {
                double p = w[k + q] * x[k + q];
                l[q] = l[q] + p;
            }
        a1[j] = a0[j] + ((l[0] + l[2]) + (l[1] + l[3]));
    }
}

static void layer1_block_c(const double *W, size_t lda, const double *x, size_t nb, size_t h1, const double *a0,
                           double *a1)
{
    size_t h4 = h1 & ~(size_t)3, j = 0;
    for (; j < h4; j++) {
        const double *w = W + j * lda;
        double l[4] = {0, 0, 0, 0};
        for (size_t k = 0; k < nb; k += 4)
            for (int q = 0; q < 4; q++)
                l[q] = fma(w[k + q], x[k + q], l[q]);
        a1[j] = a0[j] + ((l[0] + l[2]) + (l[1] + l[3]));
    }
    layer1_rest(W, lda, x, nb, j, h1, a0, a1);
}

#if HAVE_SIMD
SIMD_FN static inline double hsum4(__m256d s)
{
    __m128d t = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_hadd_pd(t, t));
}

/* layer1_rest with the same lanes in vectors: a pair's (even, odd) in one, a single unit's four in one. */
SIMD_FN static void layer1_rest_simd(const double *W, size_t lda, const double *x, size_t nb, size_t j, size_t h1,
                                     const double *a0, double *a1)
{
    if (h1 - j >= 2)
        for (size_t end = j + 2; j < end; j++) {
            const double *w = W + j * lda;
            __m128d s = _mm_setzero_pd();
            for (size_t k = 0; k < nb; k += 2)
                s = _mm_add_pd(s, _mm_mul_pd(_mm_loadu_pd(w + k), _mm_loadu_pd(x + k)));
            a1[j] = a0[j] + (_mm_cvtsd_f64(s) + _mm_cvtsd_f64(_mm_unpackhi_pd(s, s)));
        }
    if (j < h1) {
        const double *w = W + j * lda;
        __m256d s = _mm256_setzero_pd();
        for (size_t k = 0; k < nb; k += 4)
            s = _mm256_add_pd(s, _mm256_mul_pd(_mm256_loadu_pd(w + k), _mm256_loadu_pd(x + k)));
        a1[j] = a0[j] + hsum4(s);
    }
}

/* Eight units at a time (eight independent chains), then four; each unit's lanes as in the C form. The
 * accumulators are spelled out: GCC at -O2 keeps an array of them in memory. */
#define FMA_UNIT(c) s##c = _mm256_fmadd_pd(_mm256_loadu_pd(w + (c)*lda + k), xv, s##c)
SIMD_FN static void layer1_block_simd(const double *W, size_t lda, const double *x, size_t nb, size_t h1,
                                      const double *a0, double *a1)
{
    size_t h4 = h1 & ~(size_t)3, j = 0;
    for (; j + 8 <= h4; j += 8) {
        const double *w = W + j * lda;
        __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
        for (size_t k = 0; k < nb; k += 4) {
            __m256d xv = _mm256_loadu_pd(x + k);
            FMA_UNIT(0), FMA_UNIT(1), FMA_UNIT(2), FMA_UNIT(3), FMA_UNIT(4), FMA_UNIT(5), FMA_UNIT(6), FMA_UNIT(7);
        }
        a1[j] = a0[j] + hsum4(s0), a1[j + 1] = a0[j + 1] + hsum4(s1), a1[j + 2] = a0[j + 2] + hsum4(s2);
        a1[j + 3] = a0[j + 3] + hsum4(s3), a1[j + 4] = a0[j + 4] + hsum4(s4), a1[j + 5] = a0[j + 5] + hsum4(s5);
        a1[j + 6] = a0[j + 6] + hsum4(s6), a1[j + 7] = a0[j + 7] + hsum4(s7);
    }
    for (; j < h4; j += 4) {
        const double *w = W + j * lda;
        __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
        for (size_t k = 0; k < nb; k += 4) {
            __m256d xv = _mm256_loadu_pd(x + k);
            FMA_UNIT(0), FMA_UNIT(1), FMA_UNIT(2), FMA_UNIT(3);
        }
        a1[j] = a0[j] + hsum4(s0), a1[j + 1] = a0[j + 1] + hsum4(s1), a1[j + 2] = a0[j + 2] + hsum4(s2);
        a1[j + 3] = a0[j + 3] + hsum4(s3);
    }
    layer1_rest_simd(W, lda, x, nb, j, h1, a0, a1);
}
#undef FMA_UNIT
#endif

#if HAVE_SIMD
/* Four columns of lanes (units u..u+3, each lane l the sum of its inputs k = l mod 4) reduced each as
 * (l0 + l2) + (l1 + l3), the hsum4 above, four units at once, and added to a1[0..4). */
SIMD_FN static inline void reduce4(__m256d s0, __m256d s1, __m256d s2, __m256d s3, const double *a0, double *a1)
{
    __m256d t02 = _mm256_add_pd(_mm256_permute2f128_pd(s0, s2, 0x20), _mm256_permute2f128_pd(s0, s2, 0x31));
    __m256d t13 = _mm256_add_pd(_mm256_permute2f128_pd(s1, s3, 0x20), _mm256_permute2f128_pd(s1, s3, 0x31));
    _mm256_storeu_pd(a1, _mm256_add_pd(_mm256_loadu_pd(a0), _mm256_hadd_pd(t02, t13)));
}

/* layer1_block_simd for ns = 2 or 3 samples at once (the block form): four units by ns samples, each weight load
 * serving every sample (for three: twelve chains, seven loads per twelve multiply-adds); every unit's lanes and sum as
 * there. Always inlined with a constant ns: the loops over the accumulators unroll and they stay in registers (the
 * same instructions as the two kernels spelled out before). */
SIMD_FN static inline __attribute__((always_inline)) void
layer1_block_simdn(size_t ns, const double *W, size_t lda, const double *const *x, size_t x0, size_t nb, size_t h1,
                   const double *const *src, double *const *dst)
{
    size_t h4 = h1 & ~(size_t)3, j = 0;
    for (; j < h4; j += 4) {
        const double *w = W + j * lda;
        __m256d acc[3][4];
#pragma GCC unroll 4
        for (size_t s = 0; s < ns; s++)
#pragma GCC unroll 4
            for (size_t u = 0; u < 4; u++)
                acc[s][u] = _mm256_setzero_pd();
        for (size_t k = 0; k < nb; k += 4) {
            __m256d xv[3];
#pragma GCC unroll 4
            for (size_t s = 0; s < ns; s++)
                xv[s] = _mm256_loadu_pd(x[s] + x0 + k);
#pragma GCC unroll 4
            for (size_t u = 0; u < 4; u++) {
                __m256d wv = _mm256_loadu_pd(w + u * lda + k);
#pragma GCC unroll 4
                for (size_t s = 0; s < ns; s++)
                    acc[s][u] = _mm256_fmadd_pd(wv, xv[s], acc[s][u]);
            }
        }
#pragma GCC unroll 4
        for (size_t s = 0; s < ns; s++)
            reduce4(acc[s][0], acc[s][1], acc[s][2], acc[s][3], src[s] + j, dst[s] + j);
    }
    for (size_t s = 0; s < ns; s++)
        layer1_rest_simd(W, lda, x[s] + x0, nb, j, h1, src[s], dst[s]);
}

SIMD_FN static void layer1_block_simd2(const double *W, size_t lda, const double *const *x, size_t x0, size_t nb,
                                       size_t h1, const double *const *src, double *const *dst)
{
    layer1_block_simdn(2, W, lda, x, x0, nb, h1, src, dst);
}

SIMD_FN static void layer1_block_simd3(const double *W, size_t lda, const double *const *x, size_t x0, size_t nb,
                                       size_t h1, const double *const *src, double *const *dst)
{
    layer1_block_simdn(3, W, lda, x, x0, nb, h1, src, dst);
}
#endif

/* a1 = b1 + W1 xn for the units [j0, j1) of ns <= 3 samples (xs[s], a1s[s]; the vector kernels take 2 or 3
 * at once, sharing each weight load):
 * the inputs in blocks of NBMAX (a multiple of 4 each), then the last n_in mod 4. j0 is a multiple of 4
 * and so is j1 - j0 unless j1 = h1: every unit's sums are then those of the whole layer's pass. */
static void layer1_units(const rb_friction_net_infer_net *p, bool simd, size_t j0, size_t j1, size_t ns,
                         const double *const *xs, double *const *a1s)
{
    size_t m = p->n_in, g = j1 - j0, m3 = m & 3, x0 = 0, NB = NBMAX, m2 = (m & (NBMAX - 1)) - m3;
    ptrdiff_t m1 = (ptrdiff_t)(m & ~(size_t)3);
    const double *W = p->W1 + j0 * m, *b1 = p->b1 + j0;
    bool first = true; /* the first block adds its sums to b1, the others to a1 */
    while (NB == NBMAX) {
        m1 -= NBMAX;
        if (m1 < 0) {
            if (!m2)
                break;
            NB = m2;
        }
#if HAVE_SIMD
        if (simd && ns > 1) {
            const double *src[3];
            double *dst[3];
            for (size_t s = 0; s < ns; s++)
                src[s] = first ? b1 : a1s[s] + j0, dst[s] = a1s[s] + j0;
            (ns == 3 ? layer1_block_simd3 : layer1_block_simd2)(W + x0, m, xs, x0, NB, g, src, dst);
        } else if (simd)
            layer1_block_simd(W + x0, m, xs[0] + x0, NB, g, first ? b1 : a1s[0] + j0, a1s[0] + j0);
        else
#endif
            for (size_t s = 0; s < ns; s++)
                layer1_block_c(W + x0, m, xs[s] + x0, NB, g, first ? b1 : a1s[s] + j0, a1s[s] + j0);
        x0 += NB;
        first = false;
    }
    (void)simd;
    if (first) /* fewer than 4 inputs */
        for (size_t s = 0; s < ns; s++)
            memcpy(a1s[s] + j0, b1, g * sizeof *b1);
    if (!m3)
        return;
    /* OpenBLAS's C for these, as its compiler contracted it: y += a0 x0 (+ a1 x1 (+ a2 x2)) */
    for (size_t s = 0; s < ns; s++) {
        const double *x = xs[s] + x0;
        double *a1 = a1s[s] + j0;
        for (size_t j = 0; j < g; j++) {
            const double *w = W + j * m + x0;
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
}

/* a1 = b1 + W1 xn, the whole layer for one sample. */
static void layer1(const rb_friction_net_infer_net *p, bool simd)
{
    const double *xs[1] = {p->xn};
    double *a1s[1] = {p->a1};
    layer1_units(p, simd, 0, p->h1, 1, xs, a1s);
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
    rb_free(f->blk);
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
    float *W2t = carve(base, at, h1 * ld * sizeof *W2t), *b2f = carve(base, at, ld * sizeof *b2f);
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
    for (size_t r = 0; r < ld; r++)
        b2f[r] = r < h2 ? (float)w.b2[r] : 0.0f;
    p->n_in = m, p->h1 = h1, p->h2 = h2, p->ld2 = ld;
    p->mean = mean, p->iqr = iqr, p->W1 = W1, p->b1 = b1, p->b2 = b2, p->w3 = w3, p->W2t = W2t, p->b2f = b2f;
    p->b3 = *w.b3;
}

int rb_friction_net_infer_init(rb_friction_net_infer *f, const rb_fnet *const *nets, size_t n, rb_err *err)
{
    memset(f, 0, sizeof *f);
    if (!n)
        return rb_err_set(err, RB_EINVAL, "friction network inference: no network");
    size_t bytes = 0, h1max = 0, inmax = 0, ldmax = 0;
    rb_friction_net_infer_net count;
    for (size_t i = 0; i < n; i++) {
        place(&count, nets[i], NULL, &bytes);
        size_t ld = (nets[i]->h2 + 15) & ~(size_t)15;
        h1max = nets[i]->h1 > h1max ? nets[i]->h1 : h1max;
        inmax = nets[i]->n_in > inmax ? nets[i]->n_in : inmax;
        ldmax = ld > ldmax ? ld : ldmax;
        if (nets[i]->h1 > UINT32_MAX / ld) /* the block form's row offsets are 32-bit */
            return rb_err_set(err, RB_EINVAL, "friction network inference: network %zu too large (%zu x %zu units)", i,
                              nets[i]->h1, nets[i]->h2);
    }
    /* the block form's scratch, every array on a cache line */
    size_t blk = 0;
    carve(NULL, &blk, BLK * inmax * sizeof(double));
    carve(NULL, &blk, BLK * h1max * sizeof(double));
    carve(NULL, &blk, BLK * ldmax * sizeof(float));
    carve(NULL, &blk, BLK * ldmax * sizeof(double));
    carve(NULL, &blk, BLK * h1max * sizeof(act));
    f->net = rb_calloc(n, sizeof *f->net);
    f->block = rb_malloc(bytes + 64);
    f->rows = rb_malloc(h1max * sizeof *f->rows);
    f->alpha = rb_malloc(h1max * sizeof *f->alpha);
    f->blk = rb_calloc(blk + 64, 1);
    if (!f->net || !f->block || !f->rows || !f->alpha || !f->blk) {
        rb_friction_net_infer_free(f);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    f->n = n;
    char *base = (char *)f->block + (64 - (uintptr_t)f->block % 64) % 64;
    bytes = 0;
    for (size_t i = 0; i < n; i++)
        place(&f->net[i], nets[i], base, &bytes);
    base = (char *)f->blk + (64 - (uintptr_t)f->blk % 64) % 64;
    blk = 0;
    f->in_max = inmax, f->h1_max = h1max, f->ld2_max = ldmax;
    f->blk_xn = carve(base, &blk, BLK * inmax * sizeof(double));
    f->blk_a1 = carve(base, &blk, BLK * h1max * sizeof(double));
    f->blk_a2 = carve(base, &blk, BLK * ldmax * sizeof(float));
    f->blk_terms = carve(base, &blk, BLK * ldmax * sizeof(double));
    f->blk_act = carve(base, &blk, BLK * h1max * sizeof(act));
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
static void terms_row_c(const float *a2, const double *w3, size_t h2, double *terms)
{
    for (size_t i = 0; i < h2; i++)
        terms[i] = a2[i] > 0 ? w3[i] * (double)a2[i] : 0;
}

static void terms_c(rb_friction_net_infer_net *p) { terms_row_c(p->a2, p->w3, p->h2, p->terms); }

#if HAVE_SIMD
/* The same by a mask (about half the entries are off, unpredictably: no branch). */
SIMD_FN static void terms_row_simd(const float *a2, const double *w3, size_t h2, double *terms)
{
    size_t i = 0;
    for (; i + 4 <= h2; i += 4) {
        __m256d a = _mm256_cvtps_pd(_mm_loadu_ps(a2 + i));
        __m256d on = _mm256_cmp_pd(a, _mm256_setzero_pd(), _CMP_GT_OQ);
        _mm256_storeu_pd(terms + i, _mm256_and_pd(on, _mm256_mul_pd(_mm256_loadu_pd(w3 + i), a)));
    }
    for (; i < h2; i++)
        terms[i] = a2[i] > 0 ? w3[i] * (double)a2[i] : 0;
}

SIMD_FN static void terms_simd(rb_friction_net_infer_net *p) { terms_row_simd(p->a2, p->w3, p->h2, p->terms); }
#endif

#if HAVE_SIMD
SIMD_FN static void normalize_row_simd(const rb_friction_net_infer_net *p, const double *x, double *xn)
{
    size_t i = 0;
    for (; i + 4 <= p->n_in; i += 4) {
        __m256d d = _mm256_sub_pd(_mm256_loadu_pd(x + i), _mm256_loadu_pd(p->mean + i));
        _mm256_storeu_pd(xn + i, _mm256_div_pd(d, _mm256_loadu_pd(p->iqr + i)));
    }
    for (; i < p->n_in; i++)
        xn[i] = (x[i] - p->mean[i]) / p->iqr[i];
}

SIMD_FN static void normalize_simd(rb_friction_net_infer_net *p, const double *x) { normalize_row_simd(p, x, p->xn); }

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

/* ---- the block form: rb_friction_net_infer_forward_many ------------------------------------------------ */

/* A sample's active units, as prepare_c and prepare_simd pick them, into l (room for h1); their count. */
static size_t actives_c(const rb_friction_net_infer_net *p, const double *a1, act *l)
{
    size_t na = 0;
    for (size_t j = 0; j < p->h1; j++) {
        float a = (float)a1[j];
        l[na].alpha = a, l[na].off = (uint32_t)(j * p->ld2);
        na += a1[j] > 0 && a != 0;
    }
    return na;
}

/* The second layer's entries [i0, i0 + w) of one sample (W = W2t + i0, b2f + i0, y its row + i0): from b2,
 * each active unit's fused multiply-add (w = TILE, below P) or rounded product then add (the last h2 mod 32
 * entries), units in order: layer2_c's sums. */
static void layer2_cols_c(const float *W, const float *b2f, const act *l, size_t na, size_t w, bool fused, float *y)
{
    for (size_t i = 0; i < w; i++)
        y[i] = b2f[i];
    for (size_t k = 0; k < na; k++) {
        const float *r = W + l[k].off, a = l[k].alpha;
        if (fused)
            for (size_t i = 0; i < w; i++)
                y[i] = fmaf(a, r[i], y[i]);
        else
            for (size_t i = 0; i < w; i++) {
                float t = a * r[i];
                y[i] = y[i] + t;
            }
    }
}

#if HAVE_SIMD
/* The entries (alpha, offset) of four units, as eight 32-bit lanes, packed to the front for each pattern of
 * active units (bit q: unit q): the lanes to take, in order. */
static const int32_t COMPACT[16][8] = {
    {0, 0, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0, 0, 0}, {2, 3, 0, 0, 0, 0, 0, 0}, {0, 1, 2, 3, 0, 0, 0, 0},
    {4, 5, 0, 0, 0, 0, 0, 0}, {0, 1, 4, 5, 0, 0, 0, 0}, {2, 3, 4, 5, 0, 0, 0, 0}, {0, 1, 2, 3, 4, 5, 0, 0},
    {6, 7, 0, 0, 0, 0, 0, 0}, {0, 1, 6, 7, 0, 0, 0, 0}, {2, 3, 6, 7, 0, 0, 0, 0}, {0, 1, 2, 3, 6, 7, 0, 0},
    {4, 5, 6, 7, 0, 0, 0, 0}, {0, 1, 4, 5, 6, 7, 0, 0}, {2, 3, 4, 5, 6, 7, 0, 0}, {0, 1, 2, 3, 4, 5, 6, 7}};

/* As actives_c, four units at a time without a branch: their entries packed by COMPACT and stored whole (l
 * has room: the store at na ends by unit j + 4 <= h1). */
SIMD_FN static size_t actives_simd(const rb_friction_net_infer_net *p, const double *a1, act *l)
{
    size_t na = 0, j = 0, h1 = p->h1, ld = p->ld2;
    __m128i off = _mm_setr_epi32(0, (int)ld, (int)(2 * ld), (int)(3 * ld)), step = _mm_set1_epi32((int)(4 * ld));
    for (; j + 4 <= h1; j += 4, off = _mm_add_epi32(off, step)) {
        __m256d a = _mm256_loadu_pd(a1 + j);
        __m128 af = _mm256_cvtpd_ps(a), o = _mm_castsi128_ps(off);
        int on = _mm256_movemask_pd(_mm256_cmp_pd(a, _mm256_setzero_pd(), _CMP_GT_OQ)) &
                 _mm_movemask_ps(_mm_cmp_ps(af, _mm_setzero_ps(), _CMP_NEQ_UQ));
        __m256 e = _mm256_set_m128(_mm_unpackhi_ps(af, o), _mm_unpacklo_ps(af, o));
        e = _mm256_permutevar8x32_ps(e, _mm256_loadu_si256((const __m256i *)COMPACT[on]));
        _mm256_storeu_ps((float *)(l + na), e);
        na += (size_t)__builtin_popcount((unsigned)on);
    }
    for (; j < h1; j++) {
        float a = (float)a1[j];
        l[na].alpha = a, l[na].off = (uint32_t)(j * ld);
        na += a1[j] > 0 && a != 0;
    }
    return na;
}

/* Entry *l's row in W and its alpha in every lane of *c, by one 64-bit load (alpha the low half on this
 * little-endian CPU): the tile loops are bound by their loads, and this saves one per row. */
SIMD_FN static inline const float *entry(const float *W, const act *l, __m256 *c)
{
    uint64_t e;
    memcpy(&e, l, sizeof e);
    *c = _mm256_broadcastss_ps(_mm_castsi128_ps(_mm_cvtsi32_si128((int)(uint32_t)e)));
    return W + (e >> 32);
}

/* A tile of TILE entries below P for two samples (W = W2t + i0, b2f + i0, ya and yb their rows + i0): four
 * vectors each, eight independent chains; every entry's fused adds in unit order, as layer2_simd. */
#define ROW4(s, c, w)                                                                                                  \
    s##0 = _mm256_fmadd_ps(c, _mm256_loadu_ps(w), s##0), s##1 = _mm256_fmadd_ps(c, _mm256_loadu_ps(w + 8), s##1),      \
    s##2 = _mm256_fmadd_ps(c, _mm256_loadu_ps(w + 16), s##2), s##3 = _mm256_fmadd_ps(c, _mm256_loadu_ps(w + 24), s##3)
SIMD_FN static void layer2_tile_simd(const float *W, const float *b2f, const act *la, size_t na, const act *lb,
                                     size_t nb, float *ya, float *yb)
{
    __m256 s0 = _mm256_loadu_ps(b2f), s1 = _mm256_loadu_ps(b2f + 8), s2 = _mm256_loadu_ps(b2f + 16),
           s3 = _mm256_loadu_ps(b2f + 24), t0 = s0, t1 = s1, t2 = s2, t3 = s3;
    size_t n = na < nb ? na : nb, k = 0;
    __m256 ca, cb;
    for (; k < n; k++) {
        const float *wa = entry(W, la + k, &ca), *wb = entry(W, lb + k, &cb);
        ROW4(s, ca, wa);
        ROW4(t, cb, wb);
    }
    for (; k < na; k++) {
        const float *wa = entry(W, la + k, &ca);
        ROW4(s, ca, wa);
    }
    for (; k < nb; k++) {
        const float *wb = entry(W, lb + k, &cb);
        ROW4(t, cb, wb);
    }
    _mm256_storeu_ps(ya, s0), _mm256_storeu_ps(ya + 8, s1), _mm256_storeu_ps(ya + 16, s2);
    _mm256_storeu_ps(ya + 24, s3);
    _mm256_storeu_ps(yb, t0), _mm256_storeu_ps(yb + 8, t1), _mm256_storeu_ps(yb + 16, t2);
    _mm256_storeu_ps(yb + 24, t3);
}

/* The same for the last tile when the h2 mod 32 entries past it fit one vector (W, b2f, ya, yb + 32 are
 * theirs): that vector too, by a rounded product then an add per unit (layer2_tail_simd's sums), in the same
 * pass over the rows. */
SIMD_FN static void layer2_last_tile_simd(const float *W, const float *b2f, const act *la, size_t na, const act *lb,
                                          size_t nb, float *ya, float *yb)
{
    __m256 s0 = _mm256_loadu_ps(b2f), s1 = _mm256_loadu_ps(b2f + 8), s2 = _mm256_loadu_ps(b2f + 16),
           s3 = _mm256_loadu_ps(b2f + 24), s4 = _mm256_loadu_ps(b2f + 32), t0 = s0, t1 = s1, t2 = s2, t3 = s3, t4 = s4;
    size_t n = na < nb ? na : nb, k = 0;
    __m256 ca, cb;
    for (; k < n; k++) {
        const float *wa = entry(W, la + k, &ca), *wb = entry(W, lb + k, &cb);
        ROW4(s, ca, wa);
        s4 = _mm256_add_ps(s4, _mm256_mul_ps(ca, _mm256_loadu_ps(wa + 32)));
        ROW4(t, cb, wb);
        t4 = _mm256_add_ps(t4, _mm256_mul_ps(cb, _mm256_loadu_ps(wb + 32)));
    }
    for (; k < na; k++) {
        const float *wa = entry(W, la + k, &ca);
        ROW4(s, ca, wa);
        s4 = _mm256_add_ps(s4, _mm256_mul_ps(ca, _mm256_loadu_ps(wa + 32)));
    }
    for (; k < nb; k++) {
        const float *wb = entry(W, lb + k, &cb);
        ROW4(t, cb, wb);
        t4 = _mm256_add_ps(t4, _mm256_mul_ps(cb, _mm256_loadu_ps(wb + 32)));
    }
    _mm256_storeu_ps(ya, s0), _mm256_storeu_ps(ya + 8, s1), _mm256_storeu_ps(ya + 16, s2);
    _mm256_storeu_ps(ya + 24, s3), _mm256_storeu_ps(ya + 32, s4);
    _mm256_storeu_ps(yb, t0), _mm256_storeu_ps(yb + 8, t1), _mm256_storeu_ps(yb + 16, t2);
    _mm256_storeu_ps(yb + 24, t3), _mm256_storeu_ps(yb + 32, t4);
}
#undef ROW4

/* Eight entries at or past P for four samples (W = W2t + i, b2f + i, y[q] the rows + i): a rounded product
 * then an add per active unit, in order. The rows' padding (W2t, b2f and the scratch rows run to ld2, zero
 * past h2) makes every load whole; the entries past h2 are never read. */
#define TAIL(t, q, k)                                                                                                  \
    do {                                                                                                               \
        __m256 c_;                                                                                                     \
        const float *w_ = entry(W, l[q] + (k), &c_);                                                                   \
        t = _mm256_add_ps(t, _mm256_mul_ps(c_, _mm256_loadu_ps(w_)));                                                  \
    } while (0)
SIMD_FN static void layer2_tail_simd(const float *W, const float *b2f, const act *const *l, const size_t *na,
                                     float *const *y)
{
    __m256 t0 = _mm256_loadu_ps(b2f), t1 = t0, t2 = t0, t3 = t0;
    size_t n = na[0], k;
    for (int q = 1; q < 4; q++)
        n = na[q] < n ? na[q] : n;
    for (k = 0; k < n; k++) {
        TAIL(t0, 0, k);
        TAIL(t1, 1, k);
        TAIL(t2, 2, k);
        TAIL(t3, 3, k);
    }
    for (size_t j = k; j < na[0]; j++)
        TAIL(t0, 0, j);
    for (size_t j = k; j < na[1]; j++)
        TAIL(t1, 1, j);
    for (size_t j = k; j < na[2]; j++)
        TAIL(t2, 2, j);
    for (size_t j = k; j < na[3]; j++)
        TAIL(t3, 3, j);
    _mm256_storeu_ps(y[0], t0), _mm256_storeu_ps(y[1], t1), _mm256_storeu_ps(y[2], t2), _mm256_storeu_ps(y[3], t3);
}
#undef TAIL

/* The output sums of eight samples (terms rows r[q]): b3 then every term in order, one chain per sample,
 * four samples to a vector (their terms transposed four entries at a time). */
#define TRANSPOSE_ADD(y, r)                                                                                            \
    do {                                                                                                               \
        __m256d a_ = _mm256_loadu_pd(r[0] + i), b_ = _mm256_loadu_pd(r[1] + i);                                        \
        __m256d c_ = _mm256_loadu_pd(r[2] + i), d_ = _mm256_loadu_pd(r[3] + i);                                        \
        __m256d t0_ = _mm256_unpacklo_pd(a_, b_), t1_ = _mm256_unpackhi_pd(a_, b_);                                    \
        __m256d t2_ = _mm256_unpacklo_pd(c_, d_), t3_ = _mm256_unpackhi_pd(c_, d_);                                    \
        y = _mm256_add_pd(y, _mm256_permute2f128_pd(t0_, t2_, 0x20));                                                  \
        y = _mm256_add_pd(y, _mm256_permute2f128_pd(t1_, t3_, 0x20));                                                  \
        y = _mm256_add_pd(y, _mm256_permute2f128_pd(t0_, t2_, 0x31));                                                  \
        y = _mm256_add_pd(y, _mm256_permute2f128_pd(t1_, t3_, 0x31));                                                  \
    } while (0)
SIMD_FN static void sums8_simd(const double *const *r, size_t h2, double b3, double *out)
{
    __m256d y0 = _mm256_set1_pd(b3), y1 = y0;
    const double *const *r4 = r + 4;
    size_t i = 0;
    for (; i + 4 <= h2; i += 4) {
        TRANSPOSE_ADD(y0, r);
        TRANSPOSE_ADD(y1, r4);
    }
    _mm256_storeu_pd(out, y0), _mm256_storeu_pd(out + 4, y1);
    for (int q = 0; q < 8; q++)
        for (size_t j = i; j < h2; j++)
            out[q] += r[q][j];
}
#undef TRANSPOSE_ADD
#endif

/* Network p on ns <= BLK samples (X: their raw inputs, sample-major; Y[b f->n]: their outputs), stage by
 * stage over the sub-block: each group of first-layer units and each tile of the second layer's entries
 * goes over all the samples while its weights are in L1. Every sample's sums are those of the per-sample
 * pass, term by term. */
static void block_net(rb_friction_net_infer *f, const rb_friction_net_infer_net *p, bool simd, const double *X,
                      size_t ns, double *Y)
{
    size_t m = p->n_in, h1 = p->h1, h2 = p->h2, h4 = h1 & ~(size_t)3, P = h2 & ~(size_t)31;
    size_t sx = f->in_max, s1 = f->h1_max, s2 = f->ld2_max;
    double *xn = f->blk_xn, *a1 = f->blk_a1, *terms = f->blk_terms;
    float *a2 = f->blk_a2;
    act *acts = f->blk_act;
    size_t *na = f->blk_na;
    for (size_t b = 0; b < ns; b++) {
#if HAVE_SIMD
        if (simd) {
            normalize_row_simd(p, X + b * m, xn + b * sx);
            continue;
        }
#endif
        for (size_t i = 0; i < m; i++)
            xn[b * sx + i] = (X[b * m + i] - p->mean[i]) / p->iqr[i];
    }
    for (size_t j0 = 0, j1; j0 < h1; j0 = j1) {
        j1 = j0 + UNITS < h4 ? j0 + UNITS : h1;
        for (size_t b = 0, k; b < ns; b += k) {
            k = ns - b == 4 ? 2 : ns - b < 3 ? ns - b : 3; /* threes, then twos: no sample alone unless ns is 1 */
            const double *xs[3];
            double *a1s[3];
            for (size_t q = 0; q < k; q++)
                xs[q] = xn + (b + q) * sx, a1s[q] = a1 + (b + q) * s1;
            layer1_units(p, simd, j0, j1, k, xs, a1s);
        }
    }
    for (size_t b = 0; b < ns; b++) {
#if HAVE_SIMD
        if (simd) {
            na[b] = actives_simd(p, a1 + b * s1, acts + b * s1);
            continue;
        }
#endif
        na[b] = actives_c(p, a1 + b * s1, acts + b * s1);
    }
#if HAVE_SIMD
    if (simd) {
        bool fold = P && h2 > P && h2 - P <= 8; /* the tail in the last tile's pass */
        for (size_t i0 = 0; i0 < P; i0 += TILE)
            for (size_t b = 0; b < ns; b += 2) {
                size_t c = b + 1 < ns ? b + 1 : b; /* an odd last sample goes twice */
                (fold && i0 + TILE == P ? layer2_last_tile_simd
                                        : layer2_tile_simd)(p->W2t + i0, p->b2f + i0, acts + b * s1, na[b],
                                                            acts + c * s1, na[c], a2 + b * s2 + i0, a2 + c * s2 + i0);
            }
        for (size_t i = fold ? h2 : P; i < h2; i += 8)
            for (size_t b = 0; b < ns; b += 4) {
                const act *l[4];
                size_t n4[4];
                float *y[4];
                for (size_t q = 0; q < 4; q++) { /* a group of fewer repeats its last sample */
                    size_t c = b + q < ns ? b + q : ns - 1;
                    l[q] = acts + c * s1, n4[q] = na[c], y[q] = a2 + c * s2 + i;
                }
                layer2_tail_simd(p->W2t + i, p->b2f + i, l, n4, y);
            }
        for (size_t b = 0; b < ns; b++)
            terms_row_simd(a2 + b * s2, p->w3, h2, terms + b * s2);
        for (size_t b = 0; b < ns; b += 8) {
            const double *r[8];
            double out[8];
            for (size_t q = 0; q < 8; q++)
                r[q] = terms + (b + q < ns ? b + q : ns - 1) * s2;
            sums8_simd(r, h2, p->b3, out);
            for (size_t q = 0; q < 8 && b + q < ns; q++)
                Y[(b + q) * f->n] = out[q];
        }
        return;
    }
#endif
    for (size_t i0 = 0; i0 < P; i0 += TILE)
        for (size_t b = 0; b < ns; b++)
            layer2_cols_c(p->W2t + i0, p->b2f + i0, acts + b * s1, na[b], TILE, true, a2 + b * s2 + i0);
    for (size_t b = 0; b < ns; b++) {
        if (P < h2)
            layer2_cols_c(p->W2t + P, p->b2f + P, acts + b * s1, na[b], h2 - P, false, a2 + b * s2 + P);
        terms_row_c(a2 + b * s2, p->w3, h2, terms + b * s2);
        double y = p->b3;
        for (size_t i = 0; i < h2; i++)
            y += terms[b * s2 + i];
        Y[b * f->n] = y;
    }
}

void rb_friction_net_infer_forward_many(rb_friction_net_infer *f, const double *const *X, size_t count, double *Y)
{
    bool simd = f->simd > 0;
    /* network by network (its weights, 0.3 MB at the shipped sizes, stay in L2 over the sub-blocks) */
    for (size_t r = 0; r < f->n; r++) {
        const rb_friction_net_infer_net *p = &f->net[r];
        for (size_t b = 0; b < count; b += BLK)
            block_net(f, p, simd, X[r] + b * p->n_in, count - b < BLK ? count - b : BLK, Y + b * f->n + r);
    }
}
