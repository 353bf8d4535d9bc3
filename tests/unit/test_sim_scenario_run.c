/* Scenario runs in the library (rb_scenario_run): the hook sees every logged channel as the log gets it, every
 * sample once, the newest measured rows; an estimate handed back through the hook drives the torque loop with
 * the same timing as the truth; the balance's CoM reference is in the truth. (The log's bytes are the ones
 * `roboest simulate` always wrote: datasets::regenerate_byte_for_byte_with_the_listed_checksums.) */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/sim.h"

#define ARM_POLE RB_SOURCE "/configs/scenarios/arm_pole.json"
#define BALANCE RB_SOURCE "/configs/scenarios/datasets/humanoid_balance.json"

static rb_scenario *load(const char *path)
{
    rb_scenario *s = NULL;
    rb_err err;
    cr_assert_eq(rb_scenario_load(path, &s, &err), RB_OK, "%s", err.msg);
    return s;
}

static rb_log *run(const rb_scenario *s, const rb_sim_scenario *sim, const rb_scenario_hook *hook)
{
    rb_log *log = NULL;
    rb_err err;
    cr_assert_eq(rb_scenario_run(s, sim, hook, &log, &err), RB_OK, "%s", err.msg);
    cr_assert_not_null(log);
    return log;
}

/* Same channels, element names, units, times and values, bit for bit. */
static bool same_logs(const rb_log *a, const rb_log *b)
{
    if (a->n_channels != b->n_channels)
        return false;
    for (size_t c = 0; c < a->n_channels; c++) {
        const rb_channel *x = &a->channels[c], *y = &b->channels[c];
        if (strcmp(x->name, y->name) || x->n_samples != y->n_samples || x->n_elements != y->n_elements ||
            memcmp(x->time, y->time, x->n_samples * sizeof *x->time) ||
            memcmp(x->data, y->data, x->n_samples * x->n_elements * sizeof *x->data))
            return false;
    }
    return true;
}

/* ---- a hook that checks what it is given and feeds the logged joint torque back ---- */
typedef struct watcher {
    const rb_log *log; /* the same run's log, to compare the channels with (NULL: not checked) */
    size_t n_channels, torque, next_k, fresh_torque;
    size_t *measured; /* per channel: samples seen fresh */
    double **last;    /* per channel: a copy of the newest row at the last sample */
    size_t *width;    /* per channel */
    bool feed;        /* hand truth/joints/torques back as tau_hat */
    size_t stop_at;   /* fail at this sample (SIZE_MAX: never) */
} watcher;

static int watch_start(void *user, const rb_channel_info *ch, size_t n, rb_err *err)
{
    (void)err;
    watcher *w = user;
    w->n_channels = n;
    w->torque = SIZE_MAX;
    w->measured = calloc(n, sizeof *w->measured);
    w->last = calloc(n, sizeof *w->last);
    w->width = calloc(n, sizeof *w->width);
    for (size_t c = 0; c < n; c++) {
        w->last[c] = calloc(ch[c].width, sizeof *w->last[c]);
        w->width[c] = ch[c].width;
        if (strcmp(ch[c].name, "truth/joints/torques") == 0)
            w->torque = c;
        if (!w->log)
            continue;
        const rb_channel *lc = &w->log->channels[c];
        cr_assert_str_eq(ch[c].name, lc->name, "channel %zu", c);
        cr_assert_eq(ch[c].width, lc->n_elements, "%s", lc->name);
        for (size_t e = 0; e < ch[c].width; e++) {
            cr_assert_str_eq(ch[c].elements[e], lc->element_names[e], "%s[%zu]", lc->name, e);
            cr_assert_str_eq(ch[c].units[e], lc->units[e], "%s[%zu]", lc->name, e);
        }
    }
    cr_assert_neq(w->torque, SIZE_MAX);
    if (w->log)
        cr_assert_eq(n, w->log->n_channels);
    return RB_OK;
}

static int watch_sample(void *user, rb_sim *sim, size_t k, double t, const double *const *latest, const bool *fresh,
                        rb_err *err)
{
    watcher *w = user;
    cr_assert_eq(k, w->next_k++, "every sample once, in order");
    cr_assert_eq(t, rb_sim_truth_get(sim)->t);
    if (k == w->stop_at)
        return rb_err_set(err, RB_EINPUT, "hook: stop at sample %zu", k);
    for (size_t c = 0; c < w->n_channels; c++) {
        if (fresh[c]) {
            cr_assert_not_null(latest[c]);
            w->measured[c]++;
        } else if (w->measured[c] == 0) {
            cr_assert_null(latest[c], "NULL before the first sample");
        }
        if (latest[c]) /* rows are valid during the call only */
            memcpy(w->last[c], latest[c], w->width[c] * sizeof *latest[c]);
    }
    const double *tau = latest[w->torque];
    if (fresh[w->torque]) {
        w->fresh_torque++;
        /* the noise-free truth channel at the simulation's rate: the true torque of this very sample */
        cr_assert_eq(memcmp(tau, rb_sim_truth_get(sim)->tau_j, rb_sim_truth_get(sim)->n * sizeof *tau), 0);
    }
    return w->feed ? rb_sim_set_torque_feedback(sim, tau, NULL, err) : RB_OK;
}

static watcher new_watcher(const rb_log *log, bool feed)
{
    return (watcher){.log = log, .feed = feed, .stop_at = SIZE_MAX};
}

static void watcher_free(watcher *w)
{
    for (size_t c = 0; w->last && c < w->n_channels; c++)
        free(w->last[c]);
    free(w->measured);
    free(w->last);
    free(w->width);
}

/* The hook's channels are the log's (names, element names, units, order); each channel is fresh exactly at its
 * logged samples, and its newest row at the last sample is the log's last row. With no log asked for, the hook
 * sees the same rows. */
Test(sim_scenario_run, hook_sees_the_logged_channels)
{
    rb_scenario *s = load(ARM_POLE);
    rb_sim_scenario sim = s->sim;
    sim.duration = 0.5;
    rb_log *plain = run(s, &sim, NULL);
    watcher w = new_watcher(plain, false);
    rb_scenario_hook hook = {watch_start, watch_sample, &w};
    rb_log *log = run(s, &sim, &hook);
    cr_assert(same_logs(log, plain), "a watching hook changes nothing");
    cr_assert_eq(w.next_k, 501, "k = 0 .. n_steps");
    cr_assert_eq(w.fresh_torque, 501);
    for (size_t c = 0; c < log->n_channels; c++) {
        const rb_channel *lc = &log->channels[c];
        cr_assert_eq(w.measured[c], lc->n_samples, "%s", lc->name);
        cr_assert_gt(lc->n_samples, 0);
        cr_assert_eq(
            memcmp(w.last[c], lc->data + (lc->n_samples - 1) * lc->n_elements, lc->n_elements * sizeof *lc->data), 0,
            "%s: newest row", lc->name);
    }
    /* no log: the same rows reach the hook */
    watcher v = new_watcher(plain, false);
    hook.user = &v;
    rb_err err;
    cr_assert_eq(rb_scenario_run(s, &sim, &hook, NULL, &err), RB_OK, "%s", err.msg);
    for (size_t c = 0; c < log->n_channels; c++) {
        cr_assert_eq(v.measured[c], w.measured[c], "%s", log->channels[c].name);
        cr_assert_eq(memcmp(v.last[c], w.last[c], log->channels[c].n_elements * sizeof *v.last[c]), 0, "%s",
                     log->channels[c].name);
    }
    watcher_free(&v);
    watcher_free(&w);
    rb_log_free(log);
    rb_log_free(plain);
    rb_scenario_free(s);
}

/* The logged true joint torque handed back through the hook as an external estimate at every sample gives
 * the run with the truth feedback, bit for bit (every channel of the log); no feedback differs. */
Test(sim_scenario_run, external_feedback_through_the_hook_is_the_truth_loop)
{
    rb_scenario *s = load(ARM_POLE);
    cr_assert_eq(s->sim.ctrl, RB_CTRL_TORQUE);
    cr_assert_eq(s->sim.torque_feedback, RB_TFB_TRUTH);
    rb_sim_scenario sim = s->sim;
    sim.duration = 0.5;
    rb_log *truth = run(s, &sim, NULL);
    sim.torque_feedback = RB_TFB_EXTERNAL;
    watcher w = new_watcher(NULL, true);
    rb_scenario_hook hook = {watch_start, watch_sample, &w};
    rb_log *ext = run(s, &sim, &hook);
    cr_assert(same_logs(ext, truth), "external feedback of the true torque = truth feedback");
    sim.torque_feedback = RB_TFB_NONE;
    rb_log *ff = run(s, &sim, NULL);
    cr_assert_not(same_logs(ff, truth), "the comparison sees a change of feedback");
    watcher_free(&w);
    rb_log_free(ff);
    rb_log_free(ext);
    rb_log_free(truth);
    rb_scenario_free(s);
}

/* A hook's error stops the run with its status and message; no log. */
Test(sim_scenario_run, hook_error_stops_the_run)
{
    rb_scenario *s = load(ARM_POLE);
    watcher w = new_watcher(NULL, false);
    w.stop_at = 10;
    rb_scenario_hook hook = {watch_start, watch_sample, &w};
    rb_log *log = (rb_log *)1;
    rb_err err;
    cr_assert_eq(rb_scenario_run(s, NULL, &hook, &log, &err), RB_EINPUT);
    cr_assert_null(log);
    cr_assert_str_eq(err.msg, "hook: stop at sample 10");
    cr_assert_eq(w.next_k, 11);
    cr_assert_eq(rb_scenario_run(NULL, NULL, NULL, &log, &err), RB_EINVAL);
    watcher_free(&w);
    rb_scenario_free(s);
}

/* ---- balance: the CoM reference ---- */
typedef struct com_check {
    double com0[3], amplitude, freq, worst_ref, worst_track;
    size_t n;
    size_t com_channel;
} com_check;

static int com_start(void *user, const rb_channel_info *ch, size_t n, rb_err *err)
{
    (void)err;
    com_check *cc = user;
    for (size_t c = 0; c < n; c++)
        if (strcmp(ch[c].name, "truth/com") == 0)
            cc->com_channel = c;
    return RB_OK;
}

static int com_sample(void *user, rb_sim *sim, size_t k, double t, const double *const *latest, const bool *fresh,
                      rb_err *err)
{
    com_check *cc = user;
    const rb_sim_truth *tr = rb_sim_truth_get(sim);
    int rc = rb_sim_truth_compute(sim, RB_SIM_TRUTH_COM, err);
    if (rc)
        return rc;
    if (fresh[cc->com_channel]) /* the logged CoM is the truth's */
        cr_assert_eq(memcmp(latest[cc->com_channel], tr->com, sizeof tr->com), 0, "sample %zu", k);
    if (k == 0)
        memcpy(cc->com0, tr->com, sizeof cc->com0);
    double want[3] = {cc->com0[0], cc->com0[1] + cc->amplitude * sin(2 * M_PI * cc->freq * t), cc->com0[2]};
    for (int i = 0; i < 3; i++) {
        cc->worst_ref = fmax(cc->worst_ref, fabs(tr->com_ref[i] - want[i]));
        cc->worst_track = fmax(cc->worst_track, fabs(tr->com[i] - tr->com_ref[i]));
    }
    cc->n++;
    return RB_OK;
}

/* com_ref = c(0) + [0, A sin(2 pi f t), 0] (c(0) the plant's CoM at the start: no payload, so the controller's
 * model is the plant's), and the plant's CoM follows it within a few millimetres. */
Test(sim_scenario_run, balance_com_reference_in_the_truth)
{
    rb_scenario *s = load(BALANCE);
    cr_assert(s->sim.balance.enabled);
    rb_sim_scenario sim = s->sim;
    sim.duration = 1.0;
    com_check cc = {.amplitude = sim.balance.amplitude, .freq = sim.balance.freq};
    rb_scenario_hook hook = {com_start, com_sample, &cc};
    rb_err err;
    cr_assert_eq(rb_scenario_run(s, &sim, &hook, NULL, &err), RB_OK, "%s", err.msg);
    cr_assert_eq(cc.n, 1001);
    cr_log_info("CoM reference within %.3g m of the closed form; CoM within %.3g m of it", cc.worst_ref,
                cc.worst_track);
    cr_assert_lt(cc.worst_ref, 1e-12);
    cr_assert_lt(cc.worst_track, 5e-3);
    rb_scenario_free(s);
}
