/* The engine's blocks of samples (lib/pipeline/engine.c): each stage steps a whole block before the next.
 * What a run computes and which error it reports must be what stepping sample by sample gives; a type's
 * step_block sees every sample once, in order, through rows of intermediate signals nobody keeps. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roboest/estimators.h"
#include "roboest/pipeline.h"
#include "pipeline_support.h"

/* ---- a running sum, with and without a block step ---------------------------------------------------- */

typedef struct sum_state {
    size_t n, next, calls, most; /* next: the sample it expects; calls, most: block steps and their largest count */
    bool out_of_order;
    double *sum;
} sum_state;

static sum_state last_sum; /* the tallies of the last one destroyed, for the test to read */

static void sum_destroy(void *state)
{
    sum_state *s = state;
    if (s) {
        last_sum = *s;
        free(s->sum);
    }
    free(s);
}

static int sum_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    sum_state *s = calloc(1, sizeof *s);
    if (!s || !(s->sum = calloc(setup->in[0].width + 1, sizeof *s->sum))) {
        sum_destroy(s);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    s->n = setup->in[0].width;
    setup->out[0] = setup->in[0];
    *state = s;
    return RB_OK;
}

static void sum_one(sum_state *s, size_t k, const double *x, double *y)
{
    s->out_of_order |= k != s->next++;
    for (size_t i = 0; i < s->n; i++)
        y[i] = s->sum[i] += x[i] * x[i];
}

static int sum_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)t, (void)err;
    sum_one(state, k, in[0], out[0]);
    return RB_OK;
}

static int sum_step_block(void *state, size_t k0, size_t count, const double *t, const double *const *in,
                          const size_t *in_stride, double *const *out, const size_t *out_stride, size_t *failed,
                          rb_err *err)
{
    (void)t, (void)failed, (void)err;
    sum_state *s = state;
    s->calls++;
    s->most = count > s->most ? count : s->most;
    for (size_t b = 0; b < count; b++)
        sum_one(s, k0 + b, in[0] + b * in_stride[0], out[0] + b * out_stride[0]);
    return RB_OK;
}

static const char *const x_in[] = {"x"};
static const char *const y_out[] = {"y"};
static const rb_stage_type sum_type = {.version = RB_STAGE_TYPE_VERSION,
                                       .name = "sumsq",
                                       .summary = "running sum of squares, sample by sample",
                                       .inputs = x_in,
                                       .n_inputs = 1,
                                       .outputs = y_out,
                                       .n_outputs = 1,
                                       .create = sum_create,
                                       .step = sum_step,
                                       .destroy = sum_destroy};
static rb_stage_type sum_block_type; /* the same with its block step */

/* ---- stages failing at a given sample ------------------------------------------------------------------ */

static int pass_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    (void)err;
    setup->out[0] = setup->in[0];
    *state = NULL;
    return RB_OK;
}

#define FAILING_AT(K)                                                                                                  \
    static int fail##K##_step(void *state, size_t k, double t, const double *const *in, double *const *out,            \
                              rb_err *err)                                                                             \
    {                                                                                                                  \
        (void)state, (void)t;                                                                                          \
        memcpy(out[0], in[0], 2 * sizeof *in[0]);                                                                      \
        return k == K ? rb_err_set(err, RB_ENUMERIC, "fails at %d", K) : RB_OK;                                        \
    }                                                                                                                  \
    static const rb_stage_type fail##K##_type = {.version = RB_STAGE_TYPE_VERSION,                                     \
                                                 .name = "fail" #K,                                                    \
                                                 .summary = "fails at sample " #K,                                     \
                                                 .inputs = x_in,                                                       \
                                                 .n_inputs = 1,                                                        \
                                                 .outputs = y_out,                                                     \
                                                 .n_outputs = 1,                                                       \
                                                 .create = pass_create,                                                \
                                                 .step = fail##K##_step};
FAILING_AT(35)
FAILING_AT(40)

static rb_registry *blocks_reg;

static void setup_blocks(void)
{
    rb_err err;
    sum_block_type = sum_type;
    sum_block_type.name = "sumsq_block";
    sum_block_type.step_block = sum_step_block;
    cr_assert_eq(rb_registry_new(&blocks_reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(blocks_reg, &err), RB_OK);
    cr_assert_eq(rb_registry_add(blocks_reg, &sum_type, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_registry_add(blocks_reg, &sum_block_type, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_registry_add(blocks_reg, &fail35_type, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_registry_add(blocks_reg, &fail40_type, &err), RB_OK, "%s", err.msg);
}

static void free_blocks(void) { rb_registry_free(blocks_reg); }

TestSuite(engine_blocks, .init = setup_blocks, .fini = free_blocks);

/* q -> stage a (type `a`, its params object `a_params`) -> qa, an intermediate nobody keeps -> stage b -> qb,
 * recorded; run on T samples of make_log. Returns the run's status (*res its result, NULL on a failure). */
static int run_pair(const char *a, const char *a_params, const char *b, size_t T, rb_run_result **res, rb_err *err)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"clock\": {\"rate\": 100}, \"signals\": {\"q\": {\"channel\": \"joints/q\"}},"
             " \"stages\": [{\"id\": \"a\", \"type\": \"%s\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"qa\"},"
             " \"params\": %s},"
             " {\"id\": \"b\", \"type\": \"%s\", \"in\": {\"x\": \"qa\"}, \"out\": {\"y\": \"qb\"}}],"
             " \"outputs\": [{\"path\": \"est.h5\", \"signals\": [\"qb\"]}]}",
             a, a_params, b);
    rb_pipeline *p;
    cr_assert_eq(rb_pipeline_load_text(text, strlen(text), "blocks.json", NULL, blocks_reg, &p, err), RB_OK, "%s",
                 err->msg);
    rb_log *log = make_log(T, 0.01, 0.0);
    *res = NULL;
    rb_err_clear(err);
    int rc = rb_pipeline_run_log(p, log, NULL, 0, NULL, res, err);
    rb_log_free(log);
    rb_pipeline_free(p);
    return rc;
}

/* q -> lowpass -> `type`, its output qb. */
static rb_run_result *run_chain(const char *type, size_t T)
{
    rb_run_result *res;
    rb_err err;
    cr_assert_eq(run_pair("lowpass", "{\"cutoff_hz\": 5}", type, T, &res, &err), RB_OK, "%s", err.msg);
    return res;
}

Test(engine_blocks, a_block_step_sees_every_sample_once_in_order_and_gives_the_sample_steps_bits)
{
    size_t T = 1025; /* blocks and a last block of one sample (stepped by step()) */
    rb_run_result *ref = run_chain("sumsq", T);
    cr_assert(!last_sum.out_of_order && last_sum.next == T && last_sum.calls == 0);
    rb_run_result *blk = run_chain("sumsq_block", T);
    cr_assert(!last_sum.out_of_order, "a block step saw its samples out of order");
    cr_assert_eq(last_sum.next, T, "%zu samples stepped of %zu", last_sum.next, T);
    cr_assert(last_sum.most > 1 && last_sum.calls < T, "%zu block steps of at most %zu samples", last_sum.calls,
              last_sum.most);
    const rb_run_signal *a = rb_run_result_signal(ref, "qb"), *b = rb_run_result_signal(blk, "qb");
    cr_assert(a && b && a->width == 2 && b->width == 2);
    cr_assert(memcmp(a->data, b->data, 2 * T * sizeof *a->data) == 0, "the block step's sums differ");
    cr_assert(a->data[2 * (T - 1)] > 0, "the sums are not trivial");
    rb_run_result_free(ref);
    rb_run_result_free(blk);
}

/* stage a -> stage b; the run's error is the earliest failing sample's, at it the first stage's. */
static void expect_failure(const char *a, const char *b, const char *want)
{
    rb_run_result *res;
    rb_err err;
    cr_assert_eq(run_pair(a, "{}", b, 101, &res, &err), RB_ENUMERIC);
    cr_assert_null(res);
    cr_assert(strstr(err.msg, want), "%s then %s: got \"%s\", want \"%s\"", a, b, err.msg, want);
}

Test(engine_blocks, the_error_reported_is_the_earliest_samples_as_sample_by_sample)
{
    /* a fails at 40 in the block b has not stepped yet; b fails earlier, at 35 */
    expect_failure("fail40", "fail35", "stage b (fail35): sample 35 (t = 0.34999999999999998 s): fails at 35");
    expect_failure("fail35", "fail40", "stage a (fail35): sample 35 (t = 0.34999999999999998 s): fails at 35");
    expect_failure("fail35", "fail35", "stage a (fail35): sample 35 (t = 0.34999999999999998 s): fails at 35");
}
