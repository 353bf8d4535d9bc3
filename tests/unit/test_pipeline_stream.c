/* The stream: a pipeline stepped by the caller one sample at a time. The key check runs the same stages on the
 * same data twice, once through rb_pipeline_run_log on an in-memory log and once fed sample by sample through
 * rb_stream, and asks for every recorded signal to agree bit for bit; the rest covers bindings (concatenation,
 * element selection), the nonfinite policies, set-up errors, the end of the clock, allocation and look-ups. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "roboest/estimators.h"
#include "roboest/pipeline.h"

#define ARM_URDF RB_SOURCE "/datasets/arm_2ft.urdf"

static rb_registry *reg;

static void setup_registry(void)
{
    rb_err err;
    cr_assert_eq(rb_registry_new(&reg, &err), RB_OK);
    cr_assert_eq(rb_estimators_register(reg, &err), RB_OK, "%s", err.msg);
}

static void free_registry(void) { rb_registry_free(reg); }

TestSuite(pipeline_stream, .init = setup_registry, .fini = free_registry);

static rb_pipeline *load(const char *text)
{
    rb_pipeline *p = NULL;
    rb_err err;
    cr_assert_eq(rb_pipeline_load_text(text, strlen(text), "pipe.json", NULL, reg, &p, &err), RB_OK, "%s", err.msg);
    return p;
}

/* ---- an in-memory log of the arm (datasets/arm_2ft.urdf), on the clock t_k = k / 1024 -------------------------- */
enum { RATE = 1024 };
static const char *const JOINTS[] = {"shoulder_yaw", "shoulder_pitch", "elbow", "wrist_roll"};

/* Smooth motions, currents and sensor readings (each element its own phase); not physically consistent with each
 * other, which does not matter here: both runs see the same numbers. */
static double wave(size_t c, size_t i, double t)
{
    return sin(2 * M_PI * (0.3 + 0.2 * (double)i) * t + (double)(c + i));
}

static void add(rb_log *log, const char *name, size_t T, size_t n, const char *const *names, double scale,
                double offset, size_t c)
{
    double *t = malloc(T * sizeof *t), *x = malloc(T * n * sizeof *x);
    for (size_t k = 0; k < T; k++) {
        t[k] = (double)k / RATE;
        for (size_t i = 0; i < n; i++)
            x[k * n + i] = offset + scale * wave(c, i, t[k]);
    }
    rb_err err;
    cr_assert_eq(rb_log_add_channel_copy(log, name, T, n, t, x, names, NULL, &err), RB_OK, "%s", err.msg);
    free(t);
    free(x);
}

static rb_log *arm_log(size_t T)
{
    rb_log *log;
    rb_err err;
    cr_assert_eq(rb_log_new(&log, &err), RB_OK);
    add(log, "joints/q", T, 4, JOINTS, 0.4, 0.2, 0);
    add(log, "joints/dq", T, 4, JOINTS, 1.0, 0.0, 1);
    add(log, "joints/ddq", T, 4, JOINTS, 3.0, 0.0, 2);
    add(log, "motors/current", T, 4, JOINTS, 0.5, 0.0, 3);
    add(log, "ft/upper_arm_ft_sensor", T, 6, NULL, 2.0, 1.0, 4);
    add(log, "ft/wrist_ft_sensor", T, 6, NULL, 1.0, 0.5, 5);
    add(log, "acc/hand_acc", T, 3, NULL, 0.5, 3.0, 6);
    add(log, "acc/forearm", T, 3, NULL, 0.5, 3.0, 7);
    add(log, "gyro/hand_gyro", T, 3, NULL, 0.1, 0.0, 8);
    return log;
}

/* The log's channels as a stream's (borrowed from the log). */
static rb_channel_info *channels_of(const rb_log *log)
{
    rb_channel_info *ch = calloc(log->n_channels, sizeof *ch);
    for (size_t c = 0; c < log->n_channels; c++) {
        const rb_channel *lc = &log->channels[c];
        ch[c] = (rb_channel_info){lc->name, lc->n_elements, (const char *const *)lc->element_names,
                                  (const char *const *)lc->units};
    }
    return ch;
}

static rb_stream *open_on_log(const rb_pipeline *p, const rb_log *log, size_t T)
{
    rb_channel_info *ch = channels_of(log);
    rb_stream *s = NULL;
    rb_err err;
    cr_assert_eq(rb_stream_open(p, ch, log->n_channels, 1.0 / RATE, T, &s, &err), RB_OK, "%s", err.msg);
    free(ch);
    return s;
}

/* Sample k of every log channel into the stream's channel rows. */
static void feed(rb_stream *s, const rb_log *log, size_t k)
{
    for (size_t c = 0; c < log->n_channels; c++) {
        const rb_channel *lc = &log->channels[c];
        memcpy(rb_stream_channel_row(s, c), lc->data + k * lc->n_elements, lc->n_elements * sizeof(double));
    }
}

/* Every stage kind of the joint-torque chain on the arm, every signal written (so every one is recorded). */
static const char ARM_PIPE[] =
    "{\"model\": {\"urdf\": \"" ARM_URDF "\", \"base\": \"base_link\"}, \"clock\": {\"rate\": 1024},"
    " \"signals\": {\"q\": {\"channel\": \"joints/q\"}, \"cur\": {\"channel\": \"motors/current\"},"
    "  \"dq_true\": {\"channel\": \"joints/dq\"}, \"ddq_true\": {\"channel\": \"joints/ddq\"},"
    "  \"ft\": {\"channel\": [\"ft/upper_arm_ft_sensor\", \"ft/wrist_ft_sensor\"]},"
    "  \"acc\": {\"channel\": [\"acc/hand_acc\", \"acc/forearm\"]}, \"gyro\": {\"channel\": \"gyro/hand_gyro\"}},"
    " \"stages\": ["
    "  {\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"q\"}, \"out\": {\"y\": \"q_lp\"}, \"params\": "
    "{\"cutoff_hz\": 20}},"
    "  {\"id\": \"fd\", \"type\": \"finite_difference\", \"in\": {\"x\": \"q_lp\"}, \"out\": {\"dx\": \"dq_fd\"}},"
    "  {\"id\": \"kfd\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"}, \"out\": {\"x_dot\": \"dq_kf\", "
    "\"x_ddot\": \"ddq_kf\", \"nis\": \"kfd_nis\"}, \"params\": {\"q\": [1e4], \"r\": [1e-8]}},"
    "  {\"id\": \"mt\", \"type\": \"motor_torque\", \"in\": {\"current\": \"cur\"}, \"out\": {\"tau_m\": \"tau_m\"}, "
    "\"params\": {\"k_t\": [0.05, 0.05, 0.05, 0.04], \"R\": [-100, 160, -100, 100]}},"
    "  {\"id\": \"fm\", \"type\": \"friction_model\", \"in\": {\"velocity\": \"dq_kf\"}, \"out\": {\"tau_F\": "
    "\"tau_f\"}, \"params\": {\"model\": \"coulomb_viscous\", \"F_c\": [0.2], \"F_v\": [0.5]}},"
    "  {\"id\": \"diff\", \"type\": \"difference\", \"in\": {\"a\": \"tau_m\", \"b\": \"tau_f\"}, \"out\": {\"y\": "
    "\"tau_mf\"}},"
    "  {\"id\": \"rnea\", \"type\": \"rnea_torque\", \"in\": {\"q\": \"q\", \"dq\": \"dq_kf\", \"ddq\": \"ddq_kf\", "
    "\"ft\": \"ft\"}, \"out\": {\"tau\": \"tau_rnea\"}, \"params\": {\"ft_sensors\": [\"upper_arm_ft_sensor\", "
    "\"wrist_ft_sensor\"]}},"
    "  {\"id\": \"ukf\", \"type\": \"ukf_torque\", \"in\": {\"q\": \"q\", \"dq\": \"dq_kf\", \"current\": \"cur\", "
    "\"ft\": \"ft\", \"acc\": \"acc\", \"gyro\": \"gyro\", \"friction\": \"tau_f\"}, \"out\": {\"tau_j\": \"tau_ukf\", "
    "\"tau_f\": \"tau_f_ukf\"}, \"params\": {\"ft_sensors\": [\"upper_arm_ft_sensor\", \"wrist_ft_sensor\"], "
    "\"accelerometers\": [\"hand_acc\", \"forearm\"], \"gyroscopes\": [\"hand_gyro\"], \"k_t\": [0.05, 0.05, 0.05, "
    "0.04], \"gear_ratio\": [-100, 160, -100, 100], \"motor_inertia\": [1e-5, 1e-5, 8e-6, 5e-6]}}],"
    " \"outputs\": [{\"path\": \"all.h5\", \"signals\": [\"q\", \"cur\", \"dq_true\", \"ddq_true\", \"ft\", \"acc\", "
    "\"gyro\", \"q_lp\", \"dq_fd\", \"dq_kf\", \"ddq_kf\", \"kfd_nis\", \"tau_m\", \"tau_f\", \"tau_mf\", "
    "\"tau_rnea\", \"tau_ukf\", \"tau_f_ukf\"]}]}";

/* The key property: the log runner and the stream step the same stages on the same numbers, so every recorded
 * signal (bindings and stage outputs) agrees bit for bit at every sample. */
Test(pipeline_stream, a_stream_reproduces_the_log_run_bit_for_bit)
{
    const size_t T = 1500;
    rb_pipeline *p = load(ARM_PIPE);
    rb_log *log = arm_log(T);
    rb_run_result *res = NULL;
    rb_err err;
    cr_assert_eq(rb_pipeline_run_log(p, log, NULL, 0, NULL, &res, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(res->clock.n, T);
    cr_assert_eq(res->n_recorded, 18);
    rb_stream *s = open_on_log(p, log, T);
    long idx[18];
    for (size_t i = 0; i < res->n_recorded; i++) {
        const rb_run_signal *rs = &res->recorded[i];
        idx[i] = rb_stream_find(s, rs->name);
        cr_assert_geq(idx[i], 0, "%s", rs->name);
        cr_assert_eq(rb_stream_width(s, idx[i]), rs->width, "%s", rs->name);
        for (size_t e = 0; e < rs->width; e++)
            cr_assert_str_eq(rb_stream_elements(s, idx[i])[e], rs->names[e], "%s[%zu]", rs->name, e);
    }
    size_t nonzero = 0;
    for (size_t k = 0; k < T; k++) {
        feed(s, log, k);
        cr_assert_eq(rb_stream_step(s, &err), RB_OK, "sample %zu: %s", k, err.msg);
        for (size_t i = 0; i < res->n_recorded; i++) {
            const rb_run_signal *rs = &res->recorded[i];
            const double *row = rb_stream_row(s, idx[i]), *ref = rs->data + k * rs->width;
            cr_assert(memcmp(row, ref, rs->width * sizeof *row) == 0, "%s at sample %zu: %.17g vs %.17g", rs->name, k,
                      row[0], ref[0]);
            for (size_t e = 0; e < rs->width; e++)
                nonzero += ref[e] != 0 && isfinite(ref[e]);
        }
    }
    cr_assert_eq(rb_stream_finish(s, &err), RB_OK, "%s", err.msg);
    /* the comparison was not between two rows of zeros */
    cr_assert_gt(nonzero, T * 50, "%zu non-zero values", nonzero);
    const rb_run_signal *tu = rb_run_result_signal(res, "tau_ukf"), *tr = rb_run_result_signal(res, "tau_rnea");
    cr_assert(isfinite(tu->data[(T - 1) * 4 + 2]) && isfinite(tr->data[(T - 1) * 4 + 2]));
    rb_stream_free(s);
    rb_run_result_free(res);
    rb_log_free(log);
    rb_pipeline_free(p);
}

/* ---- bindings -------------------------------------------------------------------------------------------------- */
static const char *const AB[] = {"a", "b"};
static const char *const XYZ[] = {"x", "y", "z"};
static const char *const UNITS3[] = {"m", "m/s", "N"};

/* A binding of two channels is their elements one after the other; selections pick by name or by index (repeats
 * allowed), with the channel's names and units; the rows follow the caller's channel rows every sample. */
Test(pipeline_stream, bindings_concatenate_and_select)
{
    const char *text = "{\"clock\": {\"rate\": 100},"
                       " \"signals\": {\"both\": {\"channel\": [\"one\", \"three\"]},"
                       "  \"by_name\": {\"channel\": \"three\", \"elements\": [\"z\", \"x\"]},"
                       "  \"by_index\": {\"channel\": \"three\", \"elements\": [1, 0]}},"
                       " \"stages\": [{\"id\": \"d\", \"type\": \"difference\", \"in\": {\"a\": \"by_name\", "
                       "\"b\": \"by_index\"}, \"out\": {\"y\": \"d\"}}]}";
    rb_pipeline *p = load(text);
    rb_channel_info ch[] = {{"one", 2, AB, NULL}, {"three", 3, XYZ, UNITS3}};
    rb_stream *s = NULL;
    rb_err err;
    cr_assert_eq(rb_stream_open(p, ch, 2, 0.01, 3, &s, &err), RB_OK, "%s", err.msg);
    long both = rb_stream_find(s, "both"), by_name = rb_stream_find(s, "by_name"),
         by_index = rb_stream_find(s, "by_index"), d = rb_stream_find(s, "d");
    cr_assert_eq(rb_stream_width(s, both), 5);
    const char *want_both[] = {"a", "b", "x", "y", "z"}, *want_name[] = {"z", "x"}, *want_index[] = {"y", "x"};
    for (size_t e = 0; e < 5; e++)
        cr_assert_str_eq(rb_stream_elements(s, both)[e], want_both[e]);
    for (size_t e = 0; e < 2; e++) {
        cr_assert_str_eq(rb_stream_elements(s, by_name)[e], want_name[e]);
        cr_assert_str_eq(rb_stream_elements(s, by_index)[e], want_index[e]);
    }
    for (size_t k = 0; k < 3; k++) {
        double *one = rb_stream_channel_row(s, 0), *three = rb_stream_channel_row(s, 1);
        one[0] = 10 + (double)k, one[1] = 20 + (double)k;
        three[0] = 1 + (double)k, three[1] = 2 * (double)k, three[2] = -3 - (double)k;
        cr_assert_eq(rb_stream_step(s, &err), RB_OK, "%s", err.msg);
        const double want[] = {one[0], one[1], three[0], three[1], three[2]};
        cr_assert(memcmp(rb_stream_row(s, both), want, sizeof want) == 0, "sample %zu", k);
        cr_assert_eq(rb_stream_row(s, by_name)[0], three[2]);
        cr_assert_eq(rb_stream_row(s, by_name)[1], three[0]);
        cr_assert_eq(rb_stream_row(s, by_index)[0], three[1]);
        cr_assert_eq(rb_stream_row(s, by_index)[1], three[0]);
        /* the stage read the bindings of this very sample: z - y, x - x */
        cr_assert_eq(rb_stream_row(s, d)[0], three[2] - three[1]);
        cr_assert_eq(rb_stream_row(s, d)[1], 0.0);
    }
    rb_stream_free(s);
    rb_pipeline_free(p);
}

/* Values the caller does not rewrite keep the previous sample's (zero before the first write). */
Test(pipeline_stream, rows_keep_their_values_until_rewritten)
{
    rb_pipeline *p = load("{\"clock\": {\"rate\": 10}, \"signals\": {\"v\": {\"channel\": \"v\"}}}");
    rb_channel_info ch[] = {{"v", 2, AB, NULL}};
    rb_stream *s = NULL;
    rb_err err;
    cr_assert_eq(rb_stream_open(p, ch, 1, 0.1, 3, &s, &err), RB_OK, "%s", err.msg);
    long v = rb_stream_find(s, "v");
    cr_assert_eq(rb_stream_step(s, &err), RB_OK);
    cr_assert(rb_stream_row(s, v)[0] == 0 && rb_stream_row(s, v)[1] == 0);
    rb_stream_channel_row(s, 0)[1] = 7;
    cr_assert_eq(rb_stream_step(s, &err), RB_OK);
    cr_assert_eq(rb_stream_step(s, &err), RB_OK);
    cr_assert(rb_stream_row(s, v)[0] == 0 && rb_stream_row(s, v)[1] == 7);
    rb_stream_free(s);
    rb_pipeline_free(p);
}

/* ---- nonfinite policies ----------------------------------------------------------------------------------------- */
static const char NONFINITE_PIPE[] =
    "{\"clock\": {\"rate\": 10}, \"signals\": {\"x\": {\"channel\": [\"one\", \"three\"], \"nonfinite\": \"%s\"}},"
    " \"stages\": [{\"id\": \"lp\", \"type\": \"lowpass\", \"in\": {\"x\": \"x\"}, \"out\": {\"y\": \"y\"}, "
    "\"params\": {\"cutoff_hz\": 1}}]}";

static rb_stream *open_nonfinite(const char *policy, rb_pipeline **p)
{
    char text[512];
    snprintf(text, sizeof text, NONFINITE_PIPE, policy);
    *p = load(text);
    rb_channel_info ch[] = {{"one", 2, AB, NULL}, {"three", 3, XYZ, NULL}};
    rb_stream *s = NULL;
    rb_err err;
    cr_assert_eq(rb_stream_open(*p, ch, 2, 0.1, 10, &s, &err), RB_OK, "%s", err.msg);
    return s;
}

Test(pipeline_stream, nonfinite_error_names_binding_channel_element_and_sample)
{
    rb_pipeline *p;
    rb_stream *s = open_nonfinite("error", &p);
    rb_err err;
    for (size_t k = 0; k < 3; k++) {
        rb_stream_channel_row(s, 1)[1] = (double)k;
        cr_assert_eq(rb_stream_step(s, &err), RB_OK, "%s", err.msg);
    }
    rb_stream_channel_row(s, 1)[1] = NAN;
    cr_assert_eq(rb_stream_step(s, &err), RB_EINPUT);
    cr_assert_str_eq(err.msg, "pipe: binding 'x': channel 'three' element 'y': non-finite value at sample 3");
    /* a failed stream steps no more */
    rb_stream_channel_row(s, 1)[1] = 1;
    cr_assert_eq(rb_stream_step(s, &err), RB_EINVAL);
    cr_assert(strstr(err.msg, "an earlier step failed"), "%s", err.msg);
    rb_stream_free(s);
    rb_pipeline_free(p);
}

/* hold: the element's last finite value (0 before any), the others untouched; the stage sees the held value. */
Test(pipeline_stream, nonfinite_hold_holds_the_last_finite_value)
{
    rb_pipeline *p;
    rb_stream *s = open_nonfinite("hold", &p);
    long x = rb_stream_find(s, "x");
    rb_err err;
    double *one = rb_stream_channel_row(s, 0), *three = rb_stream_channel_row(s, 1);
    one[0] = INFINITY; /* nothing finite yet: 0 */
    one[1] = 1;
    cr_assert_eq(rb_stream_step(s, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_stream_row(s, x)[0], 0.0);
    cr_assert_eq(rb_stream_row(s, x)[1], 1.0);
    one[0] = 5, three[2] = 2.5;
    cr_assert_eq(rb_stream_step(s, &err), RB_OK);
    one[0] = NAN, one[1] = 4, three[2] = -INFINITY;
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(rb_stream_step(s, &err), RB_OK);
        const double *row = rb_stream_row(s, x);
        cr_assert(row[0] == 5 && row[1] == 4 && row[4] == 2.5, "%g %g %g", row[0], row[1], row[4]);
        cr_assert(isfinite(rb_stream_row(s, rb_stream_find(s, "y"))[4]));
    }
    one[0] = 6;
    cr_assert_eq(rb_stream_step(s, &err), RB_OK);
    cr_assert_eq(rb_stream_row(s, x)[0], 6.0);
    rb_stream_free(s);
    rb_pipeline_free(p);
}

/* ---- set-up errors --------------------------------------------------------------------------------------------- */
static int open_error(const char *text, const rb_channel_info *ch, size_t n, rb_err *err)
{
    rb_pipeline *p = load(text);
    rb_stream *s = (rb_stream *)1;
    int rc = rb_stream_open(p, ch, n, 0.01, 100, &s, err);
    cr_assert_null(s);
    rb_pipeline_free(p);
    return rc;
}

Test(pipeline_stream, missing_channels_and_elements_are_named_with_a_suggestion)
{
    rb_channel_info ch[] = {{"joints/q", 2, AB, NULL}, {"imu/acc", 3, XYZ, NULL}};
    rb_err err;
    cr_assert_eq(
        open_error("{\"clock\": {\"rate\": 1}, \"signals\": {\"q\": {\"channel\": \"joint/q\"}}}", ch, 2, &err),
        RB_ENOTFOUND);
    cr_assert_str_eq(err.msg, "pipe: binding 'q': channel 'joint/q' is not among the stream's channels "
                              "(signals.q.channel); did you mean 'joints/q'?");
    cr_assert_eq(open_error("{\"clock\": {\"rate\": 1}, \"signals\": {\"q\": {\"channel\": [\"joints/q\", "
                            "\"wrench\"]}}}",
                            ch, 2, &err),
                 RB_ENOTFOUND);
    cr_assert_str_eq(err.msg, "pipe: binding 'q': channel 'wrench' is not among the stream's channels "
                              "(signals.q.channel[1])");
    cr_assert_eq(open_error("{\"clock\": {\"rate\": 1}, \"signals\": {\"a\": {\"channel\": \"imu/acc\", "
                            "\"elements\": [\"x\", \"w\"]}}}",
                            ch, 2, &err),
                 RB_ENOTFOUND);
    cr_assert_str_eq(err.msg, "pipe: binding 'a': channel 'imu/acc' has no element 'w' (signals.a.elements[1])");
    cr_assert_eq(open_error("{\"clock\": {\"rate\": 1}, \"signals\": {\"a\": {\"channel\": \"imu/acc\", "
                            "\"elements\": [2, 3]}}}",
                            ch, 2, &err),
                 RB_EINPUT);
    cr_assert_str_eq(err.msg, "pipe: binding 'a': channel 'imu/acc' has 3 elements: index 3 is out of range "
                              "(signals.a.elements[1])");
    /* a stage that refuses its inputs: its message, prefixed with its id */
    cr_assert_eq(open_error("{\"clock\": {\"rate\": 1}, \"signals\": {\"a\": {\"channel\": \"imu/acc\"}, \"q\": "
                            "{\"channel\": \"joints/q\"}}, \"stages\": [{\"id\": \"minus\", \"type\": \"difference\", "
                            "\"in\": {\"a\": \"a\", \"b\": \"q\"}, \"out\": {\"y\": \"d\"}}]}",
                            ch, 2, &err),
                 RB_ECONFIG);
    cr_assert(strncmp(err.msg, "pipe: stage minus: ", 19) == 0, "%s", err.msg);
}

Test(pipeline_stream, bad_arguments)
{
    rb_pipeline *p = load("{\"clock\": {\"rate\": 1}, \"signals\": {\"v\": {\"channel\": \"v\"}}}");
    rb_channel_info ch[] = {{"v", 2, NULL, NULL}};
    rb_stream *s = NULL;
    rb_err err;
    cr_assert_eq(rb_stream_open(p, ch, 1, 0.0, 10, &s, &err), RB_EINVAL);
    cr_assert_eq(rb_stream_open(p, ch, 1, NAN, 10, &s, &err), RB_EINVAL);
    cr_assert_eq(rb_stream_open(NULL, ch, 1, 0.1, 10, &s, &err), RB_EINVAL);
    cr_assert_null(s);
    /* no element names: numbered */
    cr_assert_eq(rb_stream_open(p, ch, 1, 0.1, 10, &s, &err), RB_OK, "%s", err.msg);
    cr_assert_str_eq(rb_stream_elements(s, 0)[1], "1");
    cr_assert_null(rb_stream_channel_row(s, 1));
    rb_stream_free(s);
    rb_stream_free(NULL);
    rb_pipeline_free(p);
}

/* ---- the end of the clock ------------------------------------------------------------------------------------- */
/* The stages see the stream's clock at create(): dt, n_samples and t_k = k dt. */
static double seen_dt, seen_t[4];
static size_t seen_n;

static int clock_create(const rb_stage_setup *setup, void **state, rb_err *err)
{
    (void)err;
    seen_dt = setup->dt;
    seen_n = setup->n_samples;
    for (size_t k = 0; k < 4 && k < setup->n_samples; k++)
        seen_t[k] = setup->time[k];
    setup->out[0] = (rb_port){1, NULL, NULL};
    *state = NULL;
    return RB_OK;
}

static int clock_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)state, (void)in;
    out[0][0] = t;
    return k == 2 && t < 0 ? rb_err_set(err, RB_ENUMERIC, "never") : RB_OK;
}

static const char *const clock_in[] = {"x"}, *const clock_out[] = {"t"};
static const rb_stage_type clock_type = {.version = RB_STAGE_TYPE_VERSION,
                                         .name = "clock_probe",
                                         .summary = "records t",
                                         .inputs = clock_in,
                                         .n_inputs = 1,
                                         .outputs = clock_out,
                                         .n_outputs = 1,
                                         .create = clock_create,
                                         .step = clock_step};

Test(pipeline_stream, the_clock_is_the_callers_and_ends_after_n_samples)
{
    cr_assert_eq(rb_registry_add(reg, &clock_type, &(rb_err){0}), RB_OK);
    rb_pipeline *p =
        load("{\"clock\": {\"rate\": 1}, \"signals\": {\"v\": {\"channel\": \"v\"}}, \"stages\": [{\"id\": "
             "\"c\", \"type\": \"clock_probe\", \"in\": {\"x\": \"v\"}, \"out\": {\"t\": \"t\"}}]}");
    rb_channel_info ch[] = {{"v", 1, NULL, NULL}};
    rb_stream *s = NULL;
    rb_err err;
    cr_assert_eq(rb_stream_open(p, ch, 1, 0.003, 4, &s, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(seen_dt, 0.003);
    cr_assert_eq(seen_n, 4);
    long t = rb_stream_find(s, "t");
    for (size_t k = 0; k < 4; k++) {
        cr_assert_eq(seen_t[k], (double)k * 0.003);
        cr_assert_eq(rb_stream_step(s, &err), RB_OK, "%s", err.msg);
        cr_assert_eq(rb_stream_row(s, t)[0], (double)k * 0.003);
    }
    cr_assert_eq(rb_stream_step(s, &err), RB_EINVAL);
    cr_assert_str_eq(err.msg, "pipe: stream: all 4 samples were stepped");
    cr_assert_eq(rb_stream_finish(s, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(rb_stream_finish(s, &err), RB_EINVAL);
    rb_stream_free(s);
    rb_pipeline_free(p);
}

/* A stage's error at a step names the stage and the sample. */
static int failing_step(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err)
{
    (void)state, (void)t, (void)in;
    out[0][0] = 0;
    return k == 5 ? rb_err_set(err, RB_ENUMERIC, "boom") : RB_OK;
}

static const rb_stage_type failing_type = {.version = RB_STAGE_TYPE_VERSION,
                                           .name = "failing_at_5",
                                           .summary = "fails at sample 5",
                                           .inputs = clock_in,
                                           .n_inputs = 1,
                                           .outputs = clock_out,
                                           .n_outputs = 1,
                                           .create = clock_create,
                                           .step = failing_step};

Test(pipeline_stream, stage_errors_carry_stage_and_sample)
{
    cr_assert_eq(rb_registry_add(reg, &failing_type, &(rb_err){0}), RB_OK);
    rb_pipeline *p =
        load("{\"clock\": {\"rate\": 1}, \"signals\": {\"v\": {\"channel\": \"v\"}}, \"stages\": [{\"id\": "
             "\"f\", \"type\": \"failing_at_5\", \"in\": {\"x\": \"v\"}, \"out\": {\"t\": \"t\"}}]}");
    rb_channel_info ch[] = {{"v", 1, NULL, NULL}};
    rb_stream *s = NULL;
    rb_err err;
    cr_assert_eq(rb_stream_open(p, ch, 1, 0.01, 100, &s, &err), RB_OK, "%s", err.msg);
    for (size_t k = 0; k < 5; k++)
        cr_assert_eq(rb_stream_step(s, &err), RB_OK);
    cr_assert_eq(rb_stream_step(s, &err), RB_ENUMERIC);
    cr_assert_str_eq(err.msg, "pipe: stage f: sample 5: boom");
    cr_assert_eq(rb_stream_finish(s, &err), RB_EINVAL);
    rb_stream_free(s);
    rb_pipeline_free(p);
}

/* ---- look-ups ------------------------------------------------------------------------------------------------------
 */
Test(pipeline_stream, signals_are_found_by_name)
{
    rb_pipeline *p = load("{\"clock\": {\"rate\": 10}, \"signals\": {\"q\": {\"channel\": \"three\"}}, \"stages\": ["
                          "{\"id\": \"kfd\", \"type\": \"kf_derivative\", \"in\": {\"x\": \"q\"}, \"out\": {\"x_dot\": "
                          "\"qd\", \"nis\": \"nis\"}}]}");
    rb_channel_info ch[] = {{"three", 3, XYZ, UNITS3}};
    rb_stream *s = NULL;
    rb_err err;
    cr_assert_eq(rb_stream_open(p, ch, 1, 0.1, 10, &s, &err), RB_OK, "%s", err.msg);
    long q = rb_stream_find(s, "q"), qd = rb_stream_find(s, "qd"), nis = rb_stream_find(s, "nis");
    cr_assert(q >= 0 && qd >= 0 && nis >= 0 && q != qd && qd != nis);
    cr_assert_eq(rb_stream_width(s, q), 3);
    cr_assert_eq(rb_stream_width(s, qd), 3);
    cr_assert_str_eq(rb_stream_elements(s, qd)[2], "z");
    cr_assert_eq(rb_stream_width(s, nis), 3); /* one per element */
    /* absent: an unknown name, an unwired output port, a channel name */
    cr_assert_eq(rb_stream_find(s, "x_ddot"), -1);
    cr_assert_eq(rb_stream_find(s, "three"), -1);
    cr_assert_eq(rb_stream_find(s, "nope"), -1);
    cr_assert_eq(rb_stream_width(s, -1), 0);
    cr_assert_eq(rb_stream_width(s, 99), 0);
    cr_assert_null(rb_stream_elements(s, -1));
    cr_assert_null(rb_stream_row(s, 99));
    rb_stream_free(s);
    rb_pipeline_free(p);
}

/* ---- allocation
 * ------------------------------------------------------------------------------------------------------ */
/* Steps allocate nothing: the C library's allocations counted over 500 steps of the arm pipeline (rb_malloc's too). */
Test(pipeline_stream, steps_allocate_nothing)
{
    const size_t T = 600;
    rb_pipeline *p = load(ARM_PIPE);
    rb_log *log = arm_log(T);
    rb_stream *s = open_on_log(p, log, T);
    rb_err err;
    for (size_t k = 0; k < 100; k++) { /* past the stages' first samples (offsets, start-up) */
        feed(s, log, k);
        cr_assert_eq(rb_stream_step(s, &err), RB_OK, "%s", err.msg);
    }
    test_alloc_count_init();
    test_alloc_counting = 1;
    long before = test_alloc_count;
    rb_alloc_fail_after(-1); /* restarts rb_malloc's count */
    int rc = RB_OK;
    for (size_t k = 100; rc == RB_OK && k < T; k++) {
        feed(s, log, k);
        rc = rb_stream_step(s, &err);
    }
    test_alloc_counting = 0;
    long n_libc = test_alloc_count - before, n_rb = rb_alloc_fail_after(-1);
    cr_assert_eq(rc, RB_OK, "%s", err.msg);
    cr_assert_eq(n_rb, 0, "%ld rb_malloc calls", n_rb);
    if (test_alloc_count_works())
        cr_assert_eq(n_libc, 0, "%ld allocations in 500 steps", n_libc);
    else
        cr_log_warn("allocation counting is off here (valgrind): only rb_malloc was counted");
    rb_stream_free(s);
    rb_log_free(log);
    rb_pipeline_free(p);
}

/* Every allocation of the set-up fails in turn: RB_ENOMEM each time, nothing left (ASan). */
Test(pipeline_stream, allocation_failures_are_clean)
{
    rb_pipeline *p = load(ARM_PIPE);
    rb_log *log = arm_log(10);
    rb_channel_info *ch = channels_of(log);
    long n;
    for (n = 0; n < 100000; n++) {
        rb_stream *s = NULL;
        rb_err err;
        rb_err_clear(&err);
        rb_alloc_fail_after(n);
        int rc = rb_stream_open(p, ch, log->n_channels, 1.0 / RATE, 10, &s, &err);
        rb_alloc_fail_after(-1);
        if (rc == RB_OK) {
            rb_stream_free(s);
            break;
        }
        cr_assert_eq(rc, RB_ENOMEM, "allocation %ld: %s %s", n, rb_status_name(rc), err.msg);
        cr_assert_null(s);
    }
    cr_assert(n > 30, "the loop reached the end after %ld allocations", n);
    free(ch);
    rb_log_free(log);
    rb_pipeline_free(p);
}
