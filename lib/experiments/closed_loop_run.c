/* Running a closed-loop experiment: every (configuration, seed) simulates the scenario with the configuration's
 * estimator stepped inside the torque loop (rb_scenario_run's hook + rb_stream), records the true joint torques,
 * the desired ones, the estimates and the CoM; afterwards, in a fixed order, the comparison tables and figures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments_internal.h"

static const char *const AXES[] = {"x", "y", "z"};

/* What one run leaves behind (its own slot, written by one thread only). */
typedef struct run_out {
    size_t n, cap;                     /* samples recorded / allocated (the scenario's steps + 1) */
    double *t;                         /* n */
    double *tau_j, *tau_ref, *tau_hat; /* n x n_joints each; tau_hat NULL without feedback */
    double *tau_f, *tau_f_hat;         /* n x n_joints each: true friction, its estimate; NULL without compensation */
    double *com, *com_ref;             /* n x 3 */
    double *task, *task_ref;           /* n each: the task's actual value and reference; NULL without a task */
    rb_closed_loop_status status;
} run_out;

typedef struct job {
    const rb_closed_loop *cl;
    const rb_closed_loop_opts *opts;
    run_out *out; /* n_configs x n_seeds, configuration-major */
    size_t n_runs, n_steps;
} job;

/* One run in flight: the hook's state. */
typedef struct loop {
    const rb_closed_loop *cl;
    const rb_closed_loop_config *cf;
    run_out *out;
    size_t n_samples;
    rb_stream *stream;
    size_t n_channels;
    size_t *width;             /* per channel */
    long *fb_elem, *comp_elem; /* per model joint: element of the feedback / compensation signal, -1: none */
    const double *fb_row, *comp_row;
    double *fb, *comp; /* per model joint, given to the simulator */
    rb_cl_inertia inertia;
    rb_cl_task_map task;
    /* the drive-saturation test: per scored joint, whether it was at its current limit in each of the last `win`
     * samples from settle on (a ring, sample-major), and how many of them were */
    size_t win, limit, ring_pos, n_counted;
    unsigned char *sat_ring; /* win x n_joints */
    size_t *sat_count;       /* n_joints */
} loop;

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

/* ---- one run ------------------------------------------------------------------------------------------------ */
/* Element e of `signal` -> model joint: every element must name a joint of the scenario's model. */
static int map_signal(loop *lp, const char *name, long *elem, const double **row, rb_err *err)
{
    const rb_model *m = lp->cl->scenario->model;
    long sig = rb_stream_find(lp->stream, name);
    size_t w = rb_stream_width(lp->stream, sig);
    const char *const *el = rb_stream_elements(lp->stream, sig);
    for (size_t j = 0; j < m->n_dofs; j++)
        elem[j] = -1;
    for (size_t e = 0; e < w; e++) {
        long j = rb_model_dof_index(m, el[e]);
        if (j < 0)
            return rb_err_set(err, RB_ENOTFOUND, "%s: signal '%s' element '%s' is not a joint of the scenario's model",
                              lp->cf->pipeline_path, name, el[e]);
        elem[j] = (long)e;
    }
    *row = rb_stream_row(lp->stream, sig);
    return RB_OK;
}

static int on_start(void *user, const rb_channel_info *channels, size_t n_channels, rb_err *err)
{
    loop *lp = user;
    const rb_closed_loop_config *cf = lp->cf;
    if (lp->cl->task.name) {
        int rc = rb_cl_task_map_channels(&lp->task, &lp->cl->task, channels, n_channels, err);
        if (rc)
            return rc;
    }
    if (!cf->pipeline)
        return RB_OK;
    size_t n = lp->cl->scenario->model->n_dofs;
    lp->n_channels = n_channels;
    lp->width = rb_calloc(n_channels ? n_channels : 1, sizeof *lp->width);
    lp->fb_elem = rb_calloc(n ? n : 1, sizeof *lp->fb_elem);
    lp->comp_elem = rb_calloc(n ? n : 1, sizeof *lp->comp_elem);
    if (!lp->width || !lp->fb_elem || !lp->comp_elem)
        return nomem(err);
    for (size_t c = 0; c < n_channels; c++)
        lp->width[c] = channels[c].width;
    int rc =
        rb_stream_open(cf->pipeline, channels, n_channels, lp->cl->scenario->sim.dt, lp->n_samples, &lp->stream, err);
    if (!rc && cf->feedback)
        rc = map_signal(lp, cf->feedback, lp->fb_elem, &lp->fb_row, err);
    if (!rc && cf->compensation)
        rc = map_signal(lp, cf->compensation, lp->comp_elem, &lp->comp_row, err);
    if (!rc && cf->inertia)
        rc = rb_cl_inertia_map(&lp->inertia, lp->cl->scenario->model, lp->stream, cf->inertia, cf->inertia_body,
                               cf->pipeline_path, err);
    return rc;
}

static void gather(const double *row, const long *elem, size_t n, double *out)
{
    for (size_t j = 0; j < n; j++)
        out[j] = elem[j] >= 0 ? row[elem[j]] : NAN;
}

/* The estimator sees the sample's measurements; its estimates drive the controller from the next sample on. */
static int step_estimator(loop *lp, rb_sim *sim, const double *const *latest, const bool *fresh, rb_err *err)
{
    for (size_t c = 0; c < lp->n_channels; c++)
        if (fresh[c])
            memcpy(rb_stream_channel_row(lp->stream, c), latest[c], lp->width[c] * sizeof(double));
    int rc = rb_stream_step(lp->stream, err);
    if (rc)
        return rc;
    size_t n = lp->cl->scenario->model->n_dofs;
    if (lp->fb_row)
        gather(lp->fb_row, lp->fb_elem, n, lp->fb);
    if (lp->comp_row)
        gather(lp->comp_row, lp->comp_elem, n, lp->comp);
    rc = rb_sim_set_torque_feedback(sim, lp->fb_row ? lp->fb : NULL, lp->comp_row ? lp->comp : NULL, err);
    return rc ? rc : rb_cl_inertia_feed(&lp->inertia, sim, err);
}

static double element_of(const double *const *latest, size_t channel, size_t element)
{
    return latest[channel] ? latest[channel][element] : NAN;
}

const char *rb_cl_divergence_name(rb_cl_divergence d)
{
    switch (d) {
    case RB_CL_STABLE: return "completed";
    case RB_CL_DIV_NUMERIC: return "numeric";
    case RB_CL_DIV_COM: return "CoM";
    case RB_CL_DIV_SATURATION: return "saturation";
    }
    return "?";
}

/* A drive is at its limit when the current loop clamps the commanded current (current != current_cmd). Counted per
 * scored joint over the trailing window, from settle on; more than `limit` samples in it is a divergence. */
static int saturation(loop *lp, const rb_sim_truth *tr, double t, rb_err *err)
{
    const rb_closed_loop *cl = lp->cl;
    if (!lp->sat_ring || t < cl->settle - 0.5 * cl->scenario->sim.dt)
        return RB_OK;
    size_t J = cl->n_joints;
    unsigned char *slot = lp->sat_ring + lp->ring_pos * J;
    long worst = -1;
    for (size_t j = 0; j < J; j++) {
        size_t d = cl->joint_dof[j];
        unsigned char at = tr->current_cmd[d] != tr->current[d];
        if (lp->n_counted == lp->win)
            lp->sat_count[j] -= slot[j];
        slot[j] = at;
        lp->sat_count[j] += at;
        if (lp->sat_count[j] > lp->limit && (worst < 0 || lp->sat_count[j] > lp->sat_count[worst]))
            worst = (long)j;
    }
    lp->ring_pos = (lp->ring_pos + 1) % lp->win;
    if (lp->n_counted < lp->win)
        lp->n_counted++;
    if (worst < 0)
        return RB_OK;
    lp->out->status.cause = RB_CL_DIV_SATURATION;
    return rb_err_set(err, RB_ENUMERIC,
                      "the %s drive at its current limit %.3g s of the last %g s (max_saturation %g s) at "
                      "t = %.4g s",
                      cl->joints[worst], (double)lp->sat_count[worst] * cl->scenario->sim.dt, cl->saturation_window,
                      cl->max_saturation, t);
}

static int record(loop *lp, rb_sim *sim, double t, const double *const *latest, rb_err *err)
{
    const rb_closed_loop *cl = lp->cl;
    run_out *o = lp->out;
    int rc = rb_sim_truth_compute(sim, RB_SIM_TRUTH_COM, err);
    if (rc)
        return rc;
    const rb_sim_truth *tr = rb_sim_truth_get(sim);
    if (o->n == o->cap) /* the hook runs once per sample of the scenario's clock: n_steps + 1 */
        return rb_err_set(err, RB_EINVAL, "closed loop: more samples than the scenario's %zu steps", o->cap - 1);
    size_t k = o->n++, J = cl->n_joints;
    o->t[k] = t;
    for (size_t j = 0; j < J; j++) {
        size_t d = cl->joint_dof[j];
        o->tau_j[k * J + j] = tr->tau_j[d];
        o->tau_ref[k * J + j] = tr->tau_ref[d];
        if (o->tau_hat)
            o->tau_hat[k * J + j] = lp->fb[d];
        if (o->tau_f_hat) {
            o->tau_f[k * J + j] = tr->tau_f[d];
            o->tau_f_hat[k * J + j] = lp->comp[d];
        }
    }
    if (o->task) {
        o->task[k] = element_of(latest, lp->task.actual_channel, lp->task.actual_element);
        o->task_ref[k] = element_of(latest, lp->task.reference_channel, lp->task.reference_element);
    }
    double worst = 0.0;
    for (size_t a = 0; a < 3; a++) {
        o->com[k * 3 + a] = tr->com[a];
        o->com_ref[k * 3 + a] = tr->com_ref[a];
        worst = fmax(worst, fabs(tr->com[a] - tr->com_ref[a]));
    }
    if (!(worst <= cl->max_com_error)) {
        o->status.cause = RB_CL_DIV_COM;
        return rb_err_set(err, RB_ENUMERIC, "CoM error %.3g m > max_com_error (%g m) at t = %.4g s", worst,
                          cl->max_com_error, t);
    }
    return saturation(lp, tr, t, err);
}

static int on_sample(void *user, rb_sim *sim, size_t k, double t, const double *const *latest, const bool *fresh,
                     rb_err *err)
{
    (void)k;
    loop *lp = user;
    int rc = lp->stream ? step_estimator(lp, sim, latest, fresh, err) : RB_OK;
    return rc ? rc : record(lp, sim, t, latest, err);
}

static int alloc_out(run_out *o, size_t cap, size_t J, bool with_hat, bool with_comp, bool with_task)
{
    o->cap = cap;
    o->t = rb_malloc(cap * sizeof *o->t);
    o->tau_j = rb_malloc(cap * J * sizeof *o->tau_j);
    o->tau_ref = rb_malloc(cap * J * sizeof *o->tau_ref);
    o->tau_hat = with_hat ? rb_malloc(cap * J * sizeof *o->tau_hat) : NULL;
    o->tau_f = with_comp ? rb_malloc(cap * J * sizeof *o->tau_f) : NULL;
    o->tau_f_hat = with_comp ? rb_malloc(cap * J * sizeof *o->tau_f_hat) : NULL;
    o->com = rb_malloc(cap * 3 * sizeof *o->com);
    o->com_ref = rb_malloc(cap * 3 * sizeof *o->com_ref);
    o->task = with_task ? rb_malloc(cap * sizeof *o->task) : NULL;
    o->task_ref = with_task ? rb_malloc(cap * sizeof *o->task_ref) : NULL;
    bool ok = o->t && o->tau_j && o->tau_ref && (o->tau_hat || !with_hat) && o->com && o->com_ref &&
              ((o->task && o->task_ref) || !with_task);
    return ok && ((o->tau_f && o->tau_f_hat) || !with_comp) ? RB_OK : RB_ENOMEM;
}

static void free_loop(loop *lp)
{
    rb_stream_free(lp->stream);
    rb_free(lp->width);
    rb_free(lp->fb_elem);
    rb_free(lp->comp_elem);
    rb_free(lp->fb);
    rb_free(lp->comp);
    rb_free(lp->sat_ring);
    rb_free(lp->sat_count);
    rb_cl_inertia_free(&lp->inertia);
}

/* Numeric failures of the plant or the estimator, and the CoM leaving its reference, end the run as diverged. */
static int run_one(void *ctx, size_t i, rb_err *err) /* a pool task */
{
    job *jb = ctx;
    const rb_closed_loop *cl = jb->cl;
    size_t c = i / cl->n_seeds, s = i % cl->n_seeds;
    const rb_closed_loop_config *cf = &cl->configs[c];
    run_out *o = &jb->out[i];
    size_t n = cl->scenario->model->n_dofs;
    rb_sim_scenario sc = cl->scenario->sim;
    sc.seed = cl->seeds[s];
    sc.torque_feedback = cf->torque_sensor ? RB_TFB_TRUTH : cf->feedback ? RB_TFB_EXTERNAL : RB_TFB_NONE;
    sc.friction_compensation = cf->compensation != NULL;
    loop lp = {.cl = cl, .cf = cf, .out = o, .n_samples = jb->n_steps + 1};
    lp.fb = rb_malloc((n ? n : 1) * sizeof *lp.fb);
    lp.comp = rb_malloc((n ? n : 1) * sizeof *lp.comp);
    if (cl->max_saturation > 0 && cl->n_joints) {
        double dt = sc.dt;
        lp.win = (size_t)fmax(1.0, round(cl->saturation_window / dt));
        lp.limit = (size_t)round(cl->max_saturation / dt);
        lp.sat_ring = rb_calloc(lp.win * cl->n_joints, 1);
        lp.sat_count = rb_calloc(cl->n_joints, sizeof *lp.sat_count);
    }
    bool ok = lp.fb && lp.comp && (cl->max_saturation <= 0 || !cl->n_joints || (lp.sat_ring && lp.sat_count)) &&
              alloc_out(o, lp.n_samples, cl->n_joints, cf->feedback != NULL, cf->compensation != NULL,
                        cl->task.name != NULL) == RB_OK;
    int rc = ok ? RB_OK : nomem(err);
    for (size_t j = 0; ok && j < n; j++)
        lp.fb[j] = lp.comp[j] = NAN;
    rb_scenario_hook hook = {on_start, on_sample, &lp};
    if (!rc)
        rc = rb_scenario_run(cl->scenario, &sc, &hook, NULL, err);
    if (lp.stream && !rc)
        rc = rb_stream_finish(lp.stream, err);
    if (rc == RB_ENUMERIC && o->n > 0) { /* diverged: keep what ran */
        o->status.diverged = true;
        if (o->status.cause == RB_CL_STABLE)
            o->status.cause = RB_CL_DIV_NUMERIC;
        o->status.why = rb_strdup(err->msg);
        rc = o->status.why ? RB_OK : nomem(err);
    }
    o->status.t_end = o->n ? o->t[o->n - 1] : 0.0;
    free_loop(&lp);
    return rc ? rb_err_prefix(err, rc, "configuration %s: seed %llu: ", cf->name, (unsigned long long)cl->seeds[s])
              : RB_OK;
}

/* ---- the tables ----------------------------------------------------------------------------------------------- */
static char **seed_names(const rb_closed_loop *cl)
{
    char **names = rb_calloc(cl->n_seeds, sizeof *names);
    for (size_t s = 0; names && s < cl->n_seeds; s++)
        if (!(names[s] = rb_asprintf("seed_%llu", (unsigned long long)cl->seeds[s]))) {
            rb_strings_free(names, s);
            return NULL;
        }
    return names;
}

static int provenance(const job *jb, rb_comparison *c, const char *window, rb_err *err)
{
    const rb_closed_loop *cl = jb->cl;
    const rb_scenario *sn = cl->scenario;
    rb_provenance pv;
    int rc = rb_experiments_provenance_open(&pv, "closed_loop", cl->path, cl->sha256, err);
    if (!rc)
        rc = rb_provenance_add(&pv, "scenario", rb_path_basename(sn->path), err);
    if (!rc)
        rc = rb_provenance_add(&pv, "scenario_sha256", sn->sha256, err);
    if (!rc)
        rc = rb_provenance_add(&pv, "window", window, err);
    for (size_t v = 0; !rc && v < cl->n_configs; v++) {
        const rb_closed_loop_config *cf = &cl->configs[v];
        rc = rb_provenance_addf(&pv, cf->label, err, "configuration %s: label", cf->name);
        if (!rc && cf->pipeline)
            rc = rb_provenance_addf(&pv, rb_path_basename(cf->pipeline_path), err, "configuration %s: pipeline",
                                    cf->name);
        if (!rc && cf->pipeline)
            rc = rb_provenance_addf(&pv, cf->pipeline->config_sha256, err, "configuration %s: config_sha256", cf->name);
        if (!rc)
            rc = rb_provenance_addf(&pv,
                                    cf->feedback        ? cf->feedback
                                    : cf->torque_sensor ? "torque sensor (true tau_j)"
                                                        : "none (feedforward)",
                                    err, "configuration %s: feedback", cf->name);
        if (!rc)
            rc = rb_provenance_addf(&pv, cf->compensation ? cf->compensation : "none", err,
                                    "configuration %s: compensation", cf->name);
        for (size_t s = 0; !rc && s < cl->n_seeds; s++) {
            const rb_closed_loop_status *st = &jb->out[v * cl->n_seeds + s].status;
            char status[600];
            if (st->diverged)
                snprintf(status, sizeof status, "diverged (%s, t = %.4g s): %s", rb_cl_divergence_name(st->cause),
                         st->t_end, st->why);
            else
                snprintf(status, sizeof status, "completed (%.4g s)", st->t_end);
            rc = rb_provenance_addf(&pv, status, err, "configuration %s: seed %llu", cf->name,
                                    (unsigned long long)cl->seeds[s]);
        }
    }
    return rb_experiments_provenance_close(&pv, rc, c, err);
}

/* What a table compares, per run: estimate and reference arrays of `width` elements, over [t0, t1]. */
typedef struct table_spec {
    const char *title, *estimate_name, *reference, *window;
    const char *const *elements;
    size_t width;
    const size_t *stats;
    size_t n_stats;
    bool (*takes)(const rb_closed_loop_config *); /* the configurations the table has (NULL: all) */
    const double *(*estimate)(const run_out *);
    const double *(*ref)(const run_out *);
    double t0, t1; /* t1 INFINITY: the run's end */
} table_spec;

static const double *est_tau_j(const run_out *o) { return o->tau_j; }
static const double *ref_tau_ref(const run_out *o) { return o->tau_ref; }
static const double *est_tau_hat(const run_out *o) { return o->tau_hat; }
static const double *est_tau_f_hat(const run_out *o) { return o->tau_f_hat; }
static const double *ref_tau_f(const run_out *o) { return o->tau_f; }
static const double *est_com(const run_out *o) { return o->com; }
static const double *ref_com(const run_out *o) { return o->com_ref; }
static const double *est_task(const run_out *o) { return o->task; }
static const double *ref_task(const run_out *o) { return o->task_ref; }

static int score(const job *jb, const table_spec *ts, size_t v, size_t s, rb_comparison *c, size_t row, rb_err *err)
{
    const rb_closed_loop *cl = jb->cl;
    const run_out *o = &jb->out[v * cl->n_seeds + s];
    rb_metric_input in = {.estimate_name = ts->estimate_name,
                          .reference_name = ts->reference,
                          .estimate = ts->estimate(o),
                          .reference = ts->ref(o),
                          .time = o->t,
                          .n_samples = o->n,
                          .n_elements = ts->width,
                          .t0 = ts->t0,
                          .t1 = ts->t1};
    rb_stats *per = rb_calloc(ts->width, sizeof *per), all;
    if (!per)
        return nomem(err);
    int rc = rb_metrics_compute(&in, per, &all, err);
    if (rc == RB_EINPUT && o->status.diverged)
        rc = rb_err_set(err, RB_EINPUT, "diverged at t = %.4g s, before the window [%g, %g] s of %s ended: %s",
                        o->status.t_end, ts->t0, ts->t1, ts->title, o->status.why);
    for (size_t j = 0; !rc && j <= ts->width; j++)
        *rb_comparison_at(c, row, j, s) = j < ts->width ? per[j] : all;
    rb_free(per);
    return rc ? rb_err_prefix(err, rc, "configuration %s: seed %llu: ", cl->configs[v].name,
                              (unsigned long long)cl->seeds[s])
              : RB_OK;
}

static int make_table(const job *jb, const table_spec *ts, rb_comparison **out, rb_err *err)
{
    const rb_closed_loop *cl = jb->cl;
    const char **variants = rb_calloc(cl->n_configs, sizeof *variants);
    size_t *rows = rb_calloc(cl->n_configs, sizeof *rows), n_rows = 0;
    char **seeds = seed_names(cl);
    int rc = variants && rows && seeds ? RB_OK : nomem(err);
    for (size_t v = 0; !rc && v < cl->n_configs; v++)
        if (!ts->takes || ts->takes(&cl->configs[v])) {
            rows[n_rows] = v;
            variants[n_rows++] = cl->configs[v].name;
        }
    *out = NULL;
    if (!rc && n_rows)
        rc = rb_comparison_new(out, ts->title, ts->reference, variants, n_rows, (const char *const *)seeds, cl->n_seeds,
                               ts->elements, ts->width, err);
    rb_comparison *c = *out;
    if (c) {
        c->bootstrap = cl->bootstrap;
        c->n_shown = ts->n_stats;
        memcpy(c->shown, ts->stats, ts->n_stats * sizeof *ts->stats);
    }
    for (size_t r = 0; !rc && c && r < n_rows; r++)
        for (size_t s = 0; !rc && s < cl->n_seeds; s++)
            rc = score(jb, ts, rows[r], s, c, r, err);
    if (!rc && c)
        rc = provenance(jb, c, ts->window, err);
    if (!rc && c)
        rc = rb_comparison_summarize(c, err);
    if (rc) {
        rb_comparison_free(*out);
        *out = NULL;
    }
    rb_free(variants);
    rb_free(rows);
    if (seeds)
        rb_strings_free(seeds, cl->n_seeds);
    return rc;
}

static int make_tables(const job *jb, rb_closed_loop_result *r, rb_err *err)
{
    static const size_t torque_stats[] = {ST_MSE, ST_RMSE, ST_MAE, ST_MAX_ABS, ST_MEAN_ABS_EST};
    static const size_t com_stats[] = {ST_MAE, ST_MAX_ABS};
    static const size_t est_stats[] = {ST_MSE, ST_RMSE, ST_MAE, ST_MAX_ABS};
    const rb_closed_loop *cl = jb->cl;
    double dt = cl->scenario->sim.dt, t0 = cl->settle, t_dist = cl->disturbances_from - 0.5 * dt;
    char w_all[64], w_before[64];
    snprintf(w_all, sizeof w_all, "[%g s, end]", t0);
    snprintf(w_before, sizeof w_before, "[%g s, %g s)", t0, cl->disturbances_from);
    const char *const *joints = (const char *const *)cl->joints;
    table_spec torque = {"torque tracking: true joint torque against the desired joint torque (N m)",
                         "tau_j",
                         "tau_ref",
                         w_all,
                         joints,
                         cl->n_joints,
                         torque_stats,
                         5,
                         NULL,
                         est_tau_j,
                         ref_tau_ref,
                         t0,
                         INFINITY};
    /* [choice] the paper's Table II on a robot without joint torque sensors: what its torque loop can measure */
    table_spec own = {"torque tracking as the loop sees it: the fed-back estimate against the desired joint torque "
                      "(N m)",
                      "tau_hat",
                      "tau_ref",
                      w_all,
                      joints,
                      cl->n_joints,
                      est_stats,
                      4,
                      rb_cl_with_feedback,
                      est_tau_hat,
                      ref_tau_ref,
                      t0,
                      INFINITY};
    table_spec before = {"CoM error before the disturbances (m)",
                         "com",
                         "com_ref",
                         w_before,
                         AXES,
                         3,
                         com_stats,
                         2,
                         NULL,
                         est_com,
                         ref_com,
                         t0,
                         t_dist};
    table_spec all = {"CoM error over the whole run (m)",
                      "com",
                      "com_ref",
                      w_all,
                      AXES,
                      3,
                      com_stats,
                      2,
                      NULL,
                      est_com,
                      ref_com,
                      t0,
                      INFINITY};
    table_spec est = {"torque estimation: the feedback estimate against the true joint torque (N m)",
                      "tau_hat",
                      "tau_j",
                      w_all,
                      joints,
                      cl->n_joints,
                      est_stats,
                      4,
                      rb_cl_with_feedback,
                      est_tau_hat,
                      est_tau_j,
                      t0,
                      INFINITY};
    table_spec fric = {"friction estimation: the compensation against the true friction torque (N m)",
                       "tau_f_hat",
                       "tau_f",
                       w_all,
                       joints,
                       cl->n_joints,
                       est_stats,
                       4,
                       rb_cl_with_compensation,
                       est_tau_f_hat,
                       ref_tau_f,
                       t0,
                       INFINITY};
    const char *const task_elements[] = {cl->task.actual_element};
    char task_title[512];
    snprintf(task_title, sizeof task_title, "task tracking: %s", cl->task.name ? cl->task.name : "");
    table_spec task = {task_title,
                       cl->task.actual_channel,
                       cl->task.reference_channel,
                       w_all,
                       task_elements,
                       1,
                       est_stats,
                       4,
                       NULL,
                       est_task,
                       ref_task,
                       t0,
                       INFINITY};
    int rc = make_table(jb, &torque, &r->torque, err);
    if (!rc)
        rc = make_table(jb, &own, &r->torque_loop, err);
    if (!rc)
        rc = make_table(jb, &before, &r->com_before, err);
    if (!rc)
        rc = make_table(jb, &all, &r->com_all, err);
    if (!rc)
        rc = make_table(jb, &est, &r->estimation, err);
    if (!rc)
        rc = make_table(jb, &fric, &r->friction, err);
    if (!rc && cl->task.name)
        rc = make_table(jb, &task, &r->task, err);
    for (size_t i = 0; !rc && i < cl->n_published; i++) {
        const struct rb_closed_loop_published *p = &cl->published[i];
        rc = rb_comparison_add_published(r->task, p->config, 0, p->stat, p->value, p->source, err);
    }
    return rc;
}

/* ---- figures ------------------------------------------------------------------------------------------------------
 */
static int add_figure(rb_closed_loop_result *r, const char *name, char *svg, rb_err *err)
{
    rb_suite_figure *grown = rb_realloc(r->figures, (r->n_figures + 1) * sizeof *grown);
    char *copy = rb_strdup(name);
    if (!grown || !copy) {
        rb_free(copy);
        rb_free(svg);
        if (grown)
            r->figures = grown;
        return nomem(err);
    }
    r->figures = grown;
    r->figures[r->n_figures++] = (rb_suite_figure){copy, svg};
    return RB_OK;
}

/* Per configuration, one value per (seed, joint): statistic k of the torque table (the paper's Figs. 6 and 7). */
static int box_figure(const rb_closed_loop *cl, rb_closed_loop_result *r, size_t k, const char *file, const char *title,
                      const char *y_label, rb_err *err)
{
    size_t S = cl->n_seeds, J = cl->n_joints, V = cl->n_configs;
    rb_box_series *series = rb_calloc(V, sizeof *series);
    double *values = rb_calloc(V * S * J, sizeof *values);
    int rc = series && values ? RB_OK : nomem(err);
    for (size_t v = 0; !rc && v < V; v++) {
        series[v] = (rb_box_series){cl->configs[v].label, values + v * S * J, S * J};
        for (size_t s = 0; s < S; s++)
            for (size_t j = 0; j < J; j++)
                values[(v * S + s) * J + j] = rb_stat_value(rb_comparison_at(r->torque, v, j, s), k);
    }
    char *svg = NULL;
    if (!rc)
        rc = rb_svg_boxplot(title, y_label, series, V, &svg, err);
    if (!rc)
        rc = add_figure(r, file, svg, err);
    rb_free(series);
    rb_free(values);
    return rc;
}

/* The CoM's y (the balancing direction) of every configuration on the first seed, the reference dashed, the
 * scenario's pushes shaded (the paper's Fig. 4). */
static int com_figure(const job *jb, rb_closed_loop_result *r, rb_err *err)
{
    const rb_closed_loop *cl = jb->cl;
    const rb_sim_scenario *sc = &cl->scenario->sim;
    size_t V = cl->n_configs, n_lines = V + 1;
    rb_trace_line *lines = rb_calloc(n_lines, sizeof *lines);
    double **y = rb_calloc(n_lines, sizeof *y);
    rb_interval *shade = rb_calloc(sc->n_pushes ? sc->n_pushes : 1, sizeof *shade);
    int rc = lines && y && shade ? RB_OK : nomem(err);
    for (size_t l = 0; !rc && l < n_lines; l++) {
        const run_out *o = &jb->out[(l ? l - 1 : 0) * cl->n_seeds];
        if (!(y[l] = rb_malloc((o->n ? o->n : 1) * sizeof *y[l]))) {
            rc = nomem(err);
            break;
        }
        for (size_t k = 0; k < o->n; k++)
            y[l][k] = l ? o->com[k * 3 + 1] : o->com_ref[k * 3 + 1];
        lines[l] = (rb_trace_line){l ? cl->configs[l - 1].label : "reference", o->t, y[l], o->n};
    }
    for (size_t i = 0; !rc && i < sc->n_pushes; i++)
        shade[i] = (rb_interval){sc->pushes[i].start, sc->pushes[i].start + sc->pushes[i].duration};
    char *svg = NULL,
         *title = rb_asprintf("%s: CoM y, seed %llu (pushes shaded)", cl->name, (unsigned long long)cl->seeds[0]);
    if (!rc && !title)
        rc = nomem(err);
    if (!rc)
        rc = rb_svg_traces(title, "CoM y (m)", lines, n_lines, shade, sc->n_pushes, 0.0, sc->duration, &svg, err);
    if (!rc)
        rc = add_figure(r, "com_y.svg", svg, err);
    for (size_t l = 0; y && l < n_lines; l++)
        rb_free(y[l]);
    rb_free(y);
    rb_free(lines);
    rb_free(shade);
    rb_free(title);
    return rc;
}

static int make_figures(const job *jb, rb_closed_loop_result *r, rb_err *err)
{
    const rb_closed_loop *cl = jb->cl;
    char title[512];
    snprintf(title, sizeof title, "%s: torque tracking RMSE per joint", cl->name);
    int rc = box_figure(cl, r, ST_RMSE, "rmse_box.svg", title, "RMSE (N m)", err);
    snprintf(title, sizeof title, "%s: mean |tau_j| per joint", cl->name);
    if (!rc)
        rc = box_figure(cl, r, ST_MEAN_ABS_EST, "magnitude_box.svg", title, "mean |tau_j| (N m)", err);
    return rc ? rc : com_figure(jb, r, err);
}

/* ---- running ---------------------------------------------------------------------------------------------------- */
static void free_out(run_out *o)
{
    rb_free(o->t);
    rb_free(o->tau_j);
    rb_free(o->tau_ref);
    rb_free(o->tau_hat);
    rb_free(o->tau_f);
    rb_free(o->tau_f_hat);
    rb_free(o->com);
    rb_free(o->com_ref);
    rb_free(o->task);
    rb_free(o->task_ref);
    rb_free(o->status.why);
}

void rb_closed_loop_result_free(rb_closed_loop_result *r)
{
    if (!r)
        return;
    rb_comparison_free(r->torque);
    rb_comparison_free(r->torque_loop);
    rb_comparison_free(r->com_before);
    rb_comparison_free(r->com_all);
    rb_comparison_free(r->estimation);
    rb_comparison_free(r->friction);
    rb_comparison_free(r->task);
    for (size_t i = 0; r->status && i < r->n_runs; i++)
        rb_free(r->status[i].why);
    rb_free(r->status);
    for (size_t i = 0; i < r->n_figures; i++) {
        rb_free(r->figures[i].name);
        rb_free(r->figures[i].svg);
    }
    rb_free(r->figures);
    if (r->sweep) {
        rb_free(r->sweep->levels);
        rb_free(r->sweep->scales);
        rb_free(r->sweep->rmse);
        rb_free(r->sweep->rmse_loop);
        rb_free(r->sweep->diverged);
        rb_free(r->sweep->first_divergence);
        rb_free(r->sweep->cause);
        rb_free(r->sweep->t_end);
        rb_free(r->sweep);
    }
    rb_free(r);
}

static size_t steps_of(const rb_sim_scenario *sc) { return (size_t)ceil(sc->duration / sc->dt - 1e-9); }

static int run_pool(job *jb, rb_err *err)
{
    const rb_closed_loop_opts *o = jb->opts;
    rb_pool pl = {jb,
                  run_one,
                  jb->n_runs,
                  o && o->threads ? o->threads : jb->cl->threads,
                  o ? o->progress : NULL,
                  o ? o->user : NULL};
    bool cancelled = false;
    int rc = rb_pool_run(&pl, &cancelled, err);
    return cancelled ? rb_err_set(err, rc, "%s: closed loop cancelled by the caller", jb->cl->path) : rc;
}

int rb_closed_loop_run(const rb_closed_loop *cl, const rb_closed_loop_opts *opts, rb_closed_loop_result **out,
                       rb_err *err)
{
    *out = NULL;
    job jb = {cl, opts, NULL, cl->n_configs * cl->n_seeds, steps_of(&cl->scenario->sim)};
    rb_closed_loop_result *r = rb_calloc(1, sizeof *r);
    jb.out = rb_calloc(jb.n_runs, sizeof *jb.out);
    int rc = r && jb.out ? RB_OK : nomem(err);
    if (!rc)
        rc = run_pool(&jb, err);
    if (!rc)
        rc = make_tables(&jb, r, err);
    if (!rc)
        rc = make_figures(&jb, r, err);
    if (!rc && !(r->status = rb_calloc(jb.n_runs, sizeof *r->status)))
        rc = nomem(err);
    for (size_t i = 0; !rc && i < jb.n_runs; i++) { /* the status moves into the result */
        r->status[i] = jb.out[i].status;
        jb.out[i].status.why = NULL;
        r->n_runs = i + 1;
    }
    if (!rc)
        r->n_steps = jb.n_runs * jb.n_steps;
    for (size_t i = 0; jb.out && i < jb.n_runs; i++)
        free_out(&jb.out[i]);
    rb_free(jb.out);
    if (rc)
        rb_closed_loop_result_free(r);
    else
        *out = r;
    return rc;
}
