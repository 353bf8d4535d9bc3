/* The ukf_torque stage's variances from logs alone (roboest/training.h; `roboest tune ukf-torque`): the pipeline
 * runs without the stage to give its inputs, then still windows, increments and the friction residual. */
#include <cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/pipeline.h"
#include "roboest/training.h"
#include "tune_internal.h"

/* the ukf_torque stage's input ports the tuner reads, looked up by name in the stage type */
enum { IN_Q, IN_DQ, IN_CURRENT, IN_FT, IN_ACC, IN_GYRO, IN_FRICTION, N_IN };
static const char *const port_names[N_IN] = {"q", "dq", "current", "ft", "acc", "gyro", "friction"};

void rb_ukft_tune_opts_init(rb_ukft_tune_opts *o)
{
    memset(o, 0, sizeof *o);
    o->still_velocity = 0.05;
    o->still_range = 0.01;
    o->still_duration = 0.2;
    o->max_lag = 30;
    o->settle = 0.5;
}

static int nomem(rb_err *err) { return rb_err_set(err, RB_ENOMEM, "out of memory"); }

/* ---- JSON edits on the pipeline document --------------------------------------------------------------------- */
static cJSON *stage_json(cJSON *doc, const char *id)
{
    cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(doc, "stages"))
    {
        const cJSON *sid = cJSON_GetObjectItemCaseSensitive(s, "id");
        if (cJSON_IsString(sid) && strcmp(sid->valuestring, id) == 0)
            return s;
    }
    return NULL;
}

static bool in_list(const cJSON *names, const char *s)
{
    const cJSON *n;
    cJSON_ArrayForEach(n, names) if (cJSON_IsString(n) && strcmp(n->valuestring, s) == 0) return true;
    return false;
}

static void delete_stage(cJSON *doc, const char *id)
{
    cJSON *stages = cJSON_GetObjectItemCaseSensitive(doc, "stages");
    for (int i = 0; i < cJSON_GetArraySize(stages); i++) {
        const cJSON *sid = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(stages, i), "id");
        if (cJSON_IsString(sid) && strcmp(sid->valuestring, id) == 0) {
            cJSON_DeleteItemFromArray(stages, i);
            return;
        }
    }
}

static bool add_outs(cJSON *gone, const cJSON *stage)
{
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(stage, "out"))
    {
        cJSON *c = cJSON_IsString(o) ? cJSON_CreateString(o->valuestring) : NULL;
        if (cJSON_IsString(o) && !(c && cJSON_AddItemToArray(gone, c)))
            return false;
    }
    return true;
}

/* Remove every stage fed, directly or not, by the outputs of stage `id` (and that stage too unless keep_it). */
static bool drop_downstream(cJSON *doc, const char *id, bool keep_it)
{
    cJSON *stages = cJSON_GetObjectItemCaseSensitive(doc, "stages"), *gone = cJSON_CreateArray();
    if (!gone || !add_outs(gone, stage_json(doc, id))) {
        cJSON_Delete(gone);
        return false;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < cJSON_GetArraySize(stages) && !changed; i++) {
            cJSON *s = cJSON_GetArrayItem(stages, i);
            const cJSON *in, *sid = cJSON_GetObjectItemCaseSensitive(s, "id");
            if (cJSON_IsString(sid) && strcmp(sid->valuestring, id) == 0)
                continue;
            bool fed = false;
            cJSON_ArrayForEach(in, cJSON_GetObjectItemCaseSensitive(s, "in")) fed |=
                cJSON_IsString(in) && in_list(gone, in->valuestring);
            if (fed) {
                if (!add_outs(gone, s)) {
                    cJSON_Delete(gone);
                    return false;
                }
                cJSON_DeleteItemFromArray(stages, i);
                changed = true;
            }
        }
    }
    cJSON_Delete(gone);
    if (!keep_it)
        delete_stage(doc, id);
    return true;
}

/* The run-only copy: no outputs, metrics, reports, faults or logs; one output recording `signals`. */
static char *probe_text(cJSON *doc, const char *const *signals, size_t n)
{
    static const char *const drop[] = {"outputs", "metrics", "reports", "faults", "logs"};
    for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
        cJSON_DeleteItemFromObjectCaseSensitive(doc, drop[i]);
    cJSON *outs = cJSON_AddArrayToObject(doc, "outputs"), *o = cJSON_CreateObject();
    cJSON *sig = cJSON_CreateStringArray(signals, (int)n);
    if (!outs || !o || !sig || !cJSON_AddItemToArray(outs, o) || !cJSON_AddStringToObject(o, "path", "tune.h5") ||
        !cJSON_AddItemToObject(o, "signals", sig)) {
        if (o && !cJSON_GetArraySize(outs))
            cJSON_Delete(o);
        return NULL;
    }
    return cJSON_PrintUnformatted(doc);
}

static bool set_numbers(cJSON *obj, const char *key, const double *v, size_t n)
{
    cJSON *a = cJSON_CreateDoubleArray(v, (int)n);
    if (!a)
        return false;
    if (cJSON_GetObjectItemCaseSensitive(obj, key))
        return cJSON_ReplaceItemInObjectCaseSensitive(obj, key, a);
    return cJSON_AddItemToObject(obj, key, a);
}

/* ---- statistics ---------------------------------------------------------------------------------------------- */
/* Sums of squared increments at lags step, 2 step, ..., M step over the logs, per element. */
typedef struct incr {
    size_t M, step;
    double *sum; /* M per element */
    size_t *cnt;
} incr;

static void incr_add(incr *a, size_t e, const double *x, size_t T, size_t w, size_t col)
{
    for (size_t L = 1; L <= a->M; L++) {
        size_t lag = L * a->step;
        for (size_t k = lag; k < T; k++) {
            double d = x[k * w + col] - x[(k - lag) * w + col];
            if (isfinite(d)) {
                a->sum[e * a->M + L - 1] += d * d;
                a->cnt[e * a->M + L - 1]++;
            }
        }
    }
}

/* D(L) = c + a L^2 by least squares over the lags (in clock steps); a per clock step. false: no data. */
static bool incr_fit(const incr *a, size_t e, double *c, double *slope)
{
    double ss = 0, sd = 0, n = 0;
    for (size_t L = 1; L <= a->M; L++) {
        if (!a->cnt[e * a->M + L - 1])
            return false;
        double s = (double)(L * L * a->step * a->step);
        ss += s;
        sd += a->sum[e * a->M + L - 1] / (double)a->cnt[e * a->M + L - 1];
        n++;
    }
    double ms = ss / n, md = sd / n, sxy = 0, sxx = 0;
    for (size_t L = 1; L <= a->M; L++) {
        double s = (double)(L * L * a->step * a->step) - ms;
        sxy += s * (a->sum[e * a->M + L - 1] / (double)a->cnt[e * a->M + L - 1] - md);
        sxx += s * s;
    }
    *slope = sxy / sxx;
    *c = md - *slope * ms;
    return true;
}

/* A still window: samples [s, e) of log l. */
typedef struct window {
    size_t log, s, e;
} window;

/* ---- the tuning ---------------------------------------------------------------------------------------------- */
typedef struct tuner {
    const rb_ukft_tune_opts *o;
    rb_err *err;
    const char *path;
    const char *const *log_paths;
    size_t n, n_ft, n_acc, n_gyro;
    double *ktr; /* n: k_t R per joint (signed) */
    const char *sig[N_IN];
    size_t n_logs;
    rb_log **logs;
    rb_run_result **runs;
    const rb_pipeline *probe;
    double dt;
    size_t n_win, cap_win;
    window *win;
    double quietest; /* the smallest max |dq| over any chunk of still_duration: what the thresholds missed */
} tuner;

static const double *sig_data(const tuner *t, size_t l, int port, size_t *w)
{
    const rb_run_signal *s = t->sig[port] ? rb_run_result_signal(t->runs[l], t->sig[port]) : NULL;
    *w = s ? s->width : 0;
    return s ? s->data : NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Clock samples per sample of the log channel behind element e of `name` (a binding, or a stage output traced
 * back through the stage's first input): round(channel interval / dt), >= 1. */
static size_t hold_factor(const tuner *t, size_t l, const char *name, size_t e, int depth)
{
    long si = rb_pipeline_signal_index(t->probe, name);
    if (si < 0 || depth > 16)
        return 1;
    const rb_signal_info *info = &t->probe->signal_table[si];
    if (info->from_stage) {
        const rb_config_stage *st = &t->probe->stages[info->index];
        return st->type->n_inputs && st->in[0] ? hold_factor(t, l, st->in[0], e, depth + 1) : 1;
    }
    const rb_config_signal *b = &t->probe->signals[info->index];
    const rb_channel *ch = NULL;
    for (size_t c = 0, first = 0; c < b->n_channels; c++) {
        const rb_channel *x = rb_log_find(t->logs[l], b->channels[c]);
        if (!x)
            return 1;
        size_t w = b->n_select ? b->n_select : x->n_elements;
        if (e < first + w) {
            ch = x;
            break;
        }
        first += w;
    }
    if (!ch || ch->n_samples < 3)
        return 1;
    double *d = rb_malloc((ch->n_samples - 1) * sizeof *d);
    if (!d)
        return 1;
    for (size_t k = 0; k + 1 < ch->n_samples; k++)
        d[k] = ch->time[k + 1] - ch->time[k];
    qsort(d, ch->n_samples - 1, sizeof *d, cmp_double);
    double hi = d[(ch->n_samples - 1) / 2];
    rb_free(d);
    double r = round(hi / t->dt);
    return r >= 1 ? (size_t)r : 1;
}

static int add_window(tuner *t, size_t l, size_t s, size_t e)
{
    if (t->n_win == t->cap_win) {
        size_t cap = t->cap_win ? 2 * t->cap_win : 16;
        window *w = rb_realloc(t->win, cap * sizeof *w);
        if (!w)
            return nomem(t->err);
        t->win = w, t->cap_win = cap;
    }
    t->win[t->n_win++] = (window){l, s, e};
    return RB_OK;
}

/* Chunks of still_duration inside the runs of small |dq| whose q range is small too. */
static int find_still(tuner *t, size_t l)
{
    size_t wq, wd, T = t->runs[l]->clock.n, n = t->n;
    const double *q = sig_data(t, l, IN_Q, &wq), *dq = sig_data(t, l, IN_DQ, &wd);
    size_t W = (size_t)ceil(t->o->still_duration / t->dt - 1e-9);
    if (W < 3)
        W = 3;
    for (size_t s = 0; s + W <= T; s += W) { /* the quietest chunk, for the message */
        double m = 0;
        for (size_t k = s; k < s + W; k++)
            for (size_t j = 0; j < n; j++)
                m = fmax(m, fabs(dq[k * wd + j]));
        t->quietest = fmin(t->quietest, m);
    }
    size_t k = 0;
    while (k < T) {
        bool quiet = true;
        for (size_t j = 0; j < n && quiet; j++)
            quiet = fabs(dq[k * wd + j]) <= t->o->still_velocity;
        if (!quiet) {
            k++;
            continue;
        }
        size_t s = k;
        while (k < T) {
            bool ok = true;
            for (size_t j = 0; j < n && ok; j++)
                ok = fabs(dq[k * wd + j]) <= t->o->still_velocity;
            if (!ok)
                break;
            k++;
        }
        for (size_t c = s; c + W <= k; c += W) {
            bool ok = true;
            for (size_t j = 0; j < n && ok; j++) {
                double lo = INFINITY, hi = -INFINITY;
                for (size_t i = c; i < c + W; i++)
                    lo = fmin(lo, q[i * wq + j]), hi = fmax(hi, q[i * wq + j]);
                ok = hi - lo <= t->o->still_range;
            }
            int rc = ok ? add_window(t, l, c, c + W) : RB_OK;
            if (rc)
                return rc;
        }
    }
    return RB_OK;
}

/* Sensor noise of every element of input `port`: in the still windows (second differences / 6) or, with no
 * window, over the whole logs (third differences / 20); times the hold factor. */
static int sensor_noise(tuner *t, int port, double *r, size_t width)
{
    enum { MAX_HOLD = 64 };
    for (size_t e = 0; e < width; e++) {
        /* per phase k mod N: a linearly interpolated slow channel shows its full noise only at the clock samples
         * that fall on its own samples (elsewhere the interpolation averages two readings), so the largest */
        double sums[MAX_HOLD] = {0};
        size_t cnts[MAX_HOLD] = {0}, N = hold_factor(t, 0, t->sig[port], e, 0);
        if (N > MAX_HOLD)
            N = MAX_HOLD;
        for (size_t i = 0; i < t->n_win; i++) {
            size_t w;
            const double *x = sig_data(t, t->win[i].log, port, &w);
            for (size_t k = t->win[i].s + 2 * N; k < t->win[i].e; k++) {
                double d = x[k * w + e] - 2 * x[(k - N) * w + e] + x[(k - 2 * N) * w + e];
                if (isfinite(d))
                    sums[k % N] += d * d / 6, cnts[k % N]++;
            }
        }
        for (size_t l = 0; !t->n_win && l < t->n_logs; l++) {
            size_t w, T = t->runs[l]->clock.n;
            const double *x = sig_data(t, l, port, &w);
            for (size_t k = 3 * N; k < T; k++) {
                double d = x[k * w + e] - 3 * x[(k - N) * w + e] + 3 * x[(k - 2 * N) * w + e] - x[(k - 3 * N) * w + e];
                if (isfinite(d))
                    sums[k % N] += d * d / 20, cnts[k % N]++;
            }
        }
        double sum = 0;
        size_t cnt = 0;
        for (size_t ph = 0; ph < N; ph++)
            if (cnts[ph] && (!cnt || sums[ph] / (double)cnts[ph] > sum / (double)cnt))
                sum = sums[ph], cnt = cnts[ph];
        if (!cnt)
            return rb_err_set(t->err, RB_EINPUT,
                              "%s: input %s (%s): the still windows are shorter than 2 samples of its channel; raise "
                              "--still-duration",
                              t->path, port_names[port], t->sig[port]);
        r[e] = rb_tune_round3((double)N * sum / (double)cnt);
        if (!(r[e] > 0))
            return rb_err_set(t->err, RB_ENUMERIC,
                              "%s: input %s (%s): element %zu does not vary in the still windows (noise 0); is it "
                              "stuck?",
                              t->path, port_names[port], t->sig[port], e);
    }
    return RB_OK;
}

/* "lo .. hi" (or the one value) of v, for the reasons printed. */
static const char *span(const double *v, size_t n, char buf[80])
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++)
        lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
    char a[32], b[32];
    if (lo == hi)
        snprintf(buf, 80, "%s", rb_format_double(rb_tune_round3(lo), a));
    else
        snprintf(buf, 80, "%s .. %s", rb_format_double(rb_tune_round3(lo), a), rb_format_double(rb_tune_round3(hi), b));
    return buf;
}

/* The increments' fit for every element of input `port` (times scale[e]^2 when scale is given): inc[e] = a,
 * c[e] = the fitted noise term, q[e] = (4 a)^(2/3) meas[e]^(1/3) (meas: the element's measurement variance in the
 * state's unit) or a without meas. *floored counts the elements whose growth over the lags is within 3 sd of
 * the noise (no motion): a = 1e-6 c there. */
static int process_noise(tuner *t, int port, size_t width, const double *scale, const double *meas, double *q,
                         double *c, double *inc, size_t *floored)
{
    incr a = {.M = t->o->max_lag};
    a.sum = rb_calloc(width * a.M, sizeof *a.sum);
    a.cnt = rb_calloc(width * a.M, sizeof *a.cnt);
    int rc = a.sum && a.cnt ? RB_OK : nomem(t->err);
    *floored = 0;
    for (size_t e = 0; rc == RB_OK && e < width; e++) {
        a.step = hold_factor(t, 0, t->sig[port], e, 0);
        for (size_t l = 0; l < t->n_logs; l++) {
            size_t w;
            const double *x = sig_data(t, l, port, &w);
            incr_add(&a, e, x, t->runs[l]->clock.n, w, e);
        }
        double s2 = scale ? scale[e] * scale[e] : 1, slope;
        if (!incr_fit(&a, e, &c[e], &slope))
            rc = rb_err_set(t->err, RB_EINPUT, "%s: input %s (%s): the logs are shorter than %zu samples", t->path,
                            port_names[port], t->sig[port], a.M * a.step + 1);
        else {
            c[e] *= s2;
            slope *= s2;
            if (!(slope > 1e-6 * fabs(c[e]))) /* no growth over the lags: no motion seen */
                slope = 1e-6 * fabs(c[e]), (*floored)++;
            inc[e] = slope;
            /* a random walk of variance q per step measured with noise R (q << R) has the gain K = sqrt(q / R):
             * a ramp of slope d per step leaves it d / K behind (squared: d^2 R / q) and the noise adds
             * R K / 2 = sqrt(q R) / 2; their sum is least at q = (4 d^2)^(2/3) R^(1/3), d^2 = a. The per-step
             * increment a alone lets a smooth signal run away from the filter. */
            q[e] = rb_tune_round3(meas ? cbrt(16 * slope * slope * meas[e]) : slope);
            if (!(q[e] > 0))
                rc = rb_err_set(t->err, RB_ENUMERIC, "%s: input %s (%s): element %zu does not move over the logs",
                                t->path, port_names[port], t->sig[port], e);
        }
    }
    rb_free(a.sum);
    rb_free(a.cnt);
    return rc;
}

static rb_ukft_tune_param *new_param(rb_ukft_tune_result *r, const char *name, size_t count)
{
    rb_ukft_tune_param *p = &r->params[r->n_params];
    p->values = rb_calloc(count ? count : 1, sizeof *p->values);
    if (!p->values)
        return NULL;
    p->name = name;
    p->count = count;
    r->n_params++;
    return p;
}

static int load_probe(tuner *t, cJSON *doc, const rb_registry *reg, const char *const *rec, size_t n_rec,
                      rb_pipeline **out)
{
    char *text = probe_text(doc, rec, n_rec);
    if (!text)
        return nomem(t->err);
    int rc = rb_pipeline_load_text(text, strlen(text), t->path, t->path, reg, out, t->err);
    cJSON_free(text);
    return rc;
}

/* r_friction: the friction input's residual against the UKF's own tau_F without it, minus the UKF's variance. */
static int friction_noise(tuner *t, const cJSON *doc, const char *id, const rb_registry *reg, double *r,
                          double *mean_res, double *mean_var)
{
    cJSON *d = cJSON_Duplicate(doc, true);
    rb_pipeline *p = NULL;
    int rc = d && drop_downstream(d, id, true) ? RB_OK : nomem(t->err);
    cJSON *st = rc ? NULL : stage_json(d, id), *outs = cJSON_GetObjectItemCaseSensitive(st, "out");
    if (rc == RB_OK) {
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "in"), "friction");
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "params"), "r_friction");
        cJSON_DeleteItemFromObjectCaseSensitive(outs, "tau_f");
        cJSON_DeleteItemFromObjectCaseSensitive(outs, "var");
        if (!cJSON_AddStringToObject(outs, "tau_f", "tune/tau_f") || !cJSON_AddStringToObject(outs, "var", "tune/var"))
            rc = nomem(t->err);
    }
    const char *rec[] = {"tune/tau_f", "tune/var", t->sig[IN_FRICTION]};
    if (rc == RB_OK)
        rc = load_probe(t, d, reg, rec, 3, &p);
    double *sr = rb_calloc(2 * t->n + 1, sizeof *sr), *sv = sr + t->n;
    size_t *cnt = rb_calloc(t->n + 1, sizeof *cnt);
    if (rc == RB_OK && (!sr || !cnt))
        rc = nomem(t->err);
    for (size_t l = 0; rc == RB_OK && l < t->n_logs; l++) {
        rb_run_result *res = NULL;
        rb_run_opts ro = {0};
        rc = rb_pipeline_run_log(p, t->logs[l], &t->log_paths[l], 1, &ro, &res, t->err);
        if (rc) {
            rb_err_prefix(t->err, rc, "%s: ", t->log_paths[l]);
            break;
        }
        const rb_run_signal *tf = rb_run_result_signal(res, "tune/tau_f"), *var = rb_run_result_signal(res, "tune/var"),
                            *f = rb_run_result_signal(res, t->sig[IN_FRICTION]);
        size_t T = res->clock.n;
        for (size_t k = 0; tf && var && f && k < T; k++) {
            if (res->clock.t[k] < res->clock.t[0] + t->o->settle)
                continue;
            for (size_t j = 0; j < t->n; j++) {
                double e = f->data[k * f->width + j] - tf->data[k * tf->width + j];
                double v = var->data[k * var->width + 2 * t->n + j]; /* state order: dq, tau_m, tau_F */
                if (isfinite(e) && isfinite(v))
                    sr[j] += e * e, sv[j] += v, cnt[j]++;
            }
        }
        rb_run_result_free(res);
    }
    for (size_t j = 0; rc == RB_OK && j < t->n; j++) {
        if (!cnt[j]) {
            rc = rb_err_set(t->err, RB_EINPUT, "%s: no sample after --settle %g s to score the friction input on",
                            t->path, t->o->settle);
            break;
        }
        mean_res[j] = sr[j] / (double)cnt[j];
        mean_var[j] = sv[j] / (double)cnt[j];
        r[j] = rb_tune_round3(fmax(mean_res[j] - mean_var[j], 1e-2 * mean_res[j]));
    }
    rb_free(sr);
    rb_free(cnt);
    rb_pipeline_free(p);
    cJSON_Delete(d);
    return rc;
}

static const rb_param_value *param(const rb_config_stage *cs, const char *name)
{
    for (size_t i = 0; i < cs->type->n_params; i++)
        if (strcmp(cs->type->params[i].name, name) == 0)
            return &cs->params[i];
    return NULL;
}

/* Find the stage, check the options. */
static int pick_stage(const rb_pipeline *p, const char *path, const rb_ukft_tune_opts *o, const rb_config_stage **out,
                      rb_err *err)
{
    *out = NULL;
    size_t found = 0;
    char names[512] = "";
    for (size_t i = 0; i < p->n_stages; i++) {
        const rb_config_stage *s = &p->stages[i];
        if (strcmp(s->type->name, "ukf_torque") == 0 && (!o->stage || strcmp(s->id, o->stage) == 0)) {
            *out = s;
            found++;
        }
        if (strcmp(s->type->name, "ukf_torque") == 0 && strlen(names) + strlen(s->id) + 3 < sizeof names)
            strcat(strcat(names, names[0] ? ", " : ""), s->id);
    }
    if (o->stage && !found)
        return rb_err_set(err, RB_ECONFIG, "%s: stages: no ukf_torque stage with id '%s' (ukf_torque stages: %s)", path,
                          o->stage, names[0] ? names : "none");
    if (!found)
        return rb_err_set(err, RB_ECONFIG, "%s: stages: no ukf_torque stage to tune", path);
    if (found > 1)
        return rb_err_set(err, RB_ECONFIG, "%s: stages: several ukf_torque stages (%s); choose one with --stage", path,
                          names);
    return RB_OK;
}

static int check_opts(const rb_ukft_tune_opts *o, size_t n_logs, rb_err *err)
{
    if (!(o->still_velocity >= 0) || !(o->still_range >= 0) || !(o->still_duration > 0) || o->max_lag < 2 ||
        !(o->settle >= 0) || !isfinite(o->still_velocity + o->still_range + o->still_duration + o->settle))
        return rb_err_set(err, RB_EINVAL, "ukf_torque tuning: bad options");
    if (!n_logs)
        return rb_err_set(err, RB_EINVAL, "ukf_torque tuning: no log");
    return RB_OK;
}

static int tune_all(tuner *t, cJSON *doc, const rb_config_stage *cs, const rb_registry *reg, rb_ukft_tune_result *r)
{
    rb_err *err = t->err;
    const rb_ukft_tune_opts *o = t->o;
    int rc = RB_OK;
    for (size_t l = 0; rc == RB_OK && l < t->n_logs; l++)
        rc = find_still(t, l);
    if (rc)
        return rc;
    if (!t->n_win && !o->allow_no_still)
        return rb_err_set(err, RB_EINPUT,
                          "%s: no still window in the log%s: no %g s with every joint's |dq| <= %g rad/s (the "
                          "quietest had %.3g rad/s) and q range <= %g rad; relax --still-velocity, --still-range or "
                          "--still-duration, or give --no-still-window",
                          t->path, t->n_logs > 1 ? "s" : "", o->still_duration, o->still_velocity, t->quietest,
                          o->still_range);
    for (size_t i = 0; i < t->n_win; i++)
        r->n_still_samples += t->win[i].e - t->win[i].s;
    r->n_still_windows = t->n_win;
    char where[160], b1[80], b2[80], b3[80];
    if (t->n_win)
        snprintf(where, sizeof where, "still windows (%zu of %g s, %.3g s; |dq| <= %g rad/s, q range <= %g rad)",
                 t->n_win, o->still_duration, (double)r->n_still_samples * t->dt, o->still_velocity, o->still_range);
    else
        snprintf(where, sizeof where, "whole log%s (no still window)", t->n_logs > 1 ? "s" : "");
    /* measurement noise */
    static const struct {
        int port;
        const char *name, *unit;
    } sensors[] = {{IN_CURRENT, "r_current", "A^2"},
                   {IN_FT, "r_ft", "N^2, (N m)^2"},
                   {IN_ACC, "r_acc", "(m/s^2)^2"},
                   {IN_GYRO, "r_gyro", "(rad/s)^2"}};
    double *rcur = NULL, *rft = NULL;
    for (size_t s = 0; rc == RB_OK && s < sizeof sensors / sizeof sensors[0]; s++) {
        int port = sensors[s].port;
        size_t w = 0;
        if (!t->sig[port] || (sig_data(t, 0, port, &w), w == 0))
            continue;
        rb_ukft_tune_param *p = new_param(r, sensors[s].name, w);
        if (!p)
            return nomem(err);
        rc = sensor_noise(t, port, p->values, w);
        size_t N = hold_factor(t, 0, t->sig[port], 0, 0);
        if (rc == RB_OK &&
            !(p->why = rb_asprintf("noise of %s in the %s: var(%s difference) / %s%s = %s %s", t->sig[port], where,
                                   t->n_win ? "2nd" : "3rd", t->n_win ? "6" : "20",
                                   N > 1 ? ", times the hold factor" : "", span(p->values, w, b1), sensors[s].unit)))
            rc = nomem(err);
        if (port == IN_CURRENT)
            rcur = p->values;
        if (port == IN_FT)
            rft = p->values;
    }
    size_t nb = 6 * t->n_ft + t->n + 1;
    double *c = rb_calloc(3 * nb, sizeof *c), *chk = c ? c + nb : NULL, *inc = c ? c + 2 * nb : NULL;
    if (rc == RB_OK && !c)
        rc = nomem(err);
    /* the motor torque's process noise; the friction's the same (its increments are not observable without
     * truth: a friction input is a model's smooth output, not the friction) */
    rb_ukft_tune_param *qm = rc ? NULL : new_param(r, "q_tau_m", t->n);
    size_t floored = 0;
    if (rc == RB_OK && !qm)
        rc = nomem(err);
    if (rc == RB_OK && !t->sig[IN_CURRENT])
        rc = rb_err_set(err, RB_ECONFIG, "%s: stage %s: the current input is not wired", t->path, cs->id);
    for (size_t j = 0; rc == RB_OK && j < t->n; j++) /* the current's variance in torque units */
        chk[j] = t->ktr[j] * t->ktr[j] * (rcur ? rcur[j] : 1);
    if (rc == RB_OK && !rcur)
        rc = rb_err_set(err, RB_ECONFIG, "%s: stage %s: the current input is empty", t->path, cs->id);
    if (rc == RB_OK)
        rc = process_noise(t, IN_CURRENT, t->n, t->ktr, chk, qm->values, c, inc, &floored);
    if (rc == RB_OK) {
        for (size_t j = 0; j < t->n; j++)
            chk[j] *= 2;
        if (!(qm->why = rb_asprintf("increments of k_t R i over 1..%zu steps fitted as c + a L^2: a = %s (N m)^2 per "
                                    "step%s, q = (4 a)^(2/3) ((k_t R)^2 r_current)^(1/3); c = %s against 2 (k_t R)^2 "
                                    "r_current = %s",
                                    o->max_lag, span(inc, t->n, b1),
                                    floored ? " (no motion detected in some: a = 1e-6 c)" : "", span(c, t->n, b2),
                                    span(chk, t->n, b3))))
            rc = nomem(err);
    }
    /* the FT sensors' */
    if (rc == RB_OK && t->n_ft && t->sig[IN_FT] && rft) {
        rb_ukft_tune_param *qf = new_param(r, "q_ft", 6 * t->n_ft);
        rc = qf ? process_noise(t, IN_FT, 6 * t->n_ft, NULL, rft, qf->values, c, inc, &floored) : nomem(err);
        for (size_t e = 0; rc == RB_OK && e < 6 * t->n_ft; e++)
            chk[e] = 2 * rft[e];
        if (rc == RB_OK && !(qf->why = rb_asprintf("increments of %s over 1..%zu steps fitted as c + a L^2: a = %s "
                                                   "per step%s, q = (4 a)^(2/3) r_ft^(1/3); c = %s against 2 r_ft = %s",
                                                   t->sig[IN_FT], o->max_lag, span(inc, 6 * t->n_ft, b1),
                                                   floored ? " (no motion detected in some: a = 1e-6 c)" : "",
                                                   span(c, 6 * t->n_ft, b2), span(chk, 6 * t->n_ft, b3))))
            rc = nomem(err);
    }
    rb_ukft_tune_param *qtf = rc ? NULL : new_param(r, "q_tau_f", t->n);
    if (rc == RB_OK && !qtf)
        rc = nomem(err);
    if (rc == RB_OK) {
        memcpy(qtf->values, qm->values, t->n * sizeof *qtf->values);
        if (!(qtf->why = rb_strdup("q_tau_m's (the friction's own increments are not observable without truth)")))
            rc = nomem(err);
    }
    rb_free(c);
    /* into the document, then the friction measurement's variance with them */
    cJSON *params = cJSON_GetObjectItemCaseSensitive(stage_json(doc, cs->id), "params");
    if (rc == RB_OK && !params && !(params = cJSON_AddObjectToObject(stage_json(doc, cs->id), "params")))
        rc = nomem(err);
    for (size_t i = 0; rc == RB_OK && i < r->n_params; i++)
        if (!set_numbers(params, r->params[i].name, r->params[i].values, r->params[i].count))
            rc = nomem(err);
    if (rc == RB_OK && t->sig[IN_FRICTION]) {
        rb_ukft_tune_param *rf = new_param(r, "r_friction", t->n);
        double *mr = rb_calloc(2 * t->n, sizeof *mr), *mv = mr ? mr + t->n : NULL;
        rc = rf && mr ? friction_noise(t, doc, cs->id, reg, rf->values, mr, mv) : nomem(err);
        if (rc == RB_OK &&
            !(rf->why = rb_asprintf("residual of %s against the UKF's tau_F without it (after %g s of "
                                    "each log): mean(res^2) = %s minus the UKF's mean P_FF = %s",
                                    t->sig[IN_FRICTION], o->settle, span(mr, t->n, b1), span(mv, t->n, b2))))
            rc = nomem(err);
        if (rc == RB_OK && !set_numbers(params, "r_friction", rf->values, t->n))
            rc = nomem(err);
        rb_free(mr);
    }
    return rc;
}

int rb_ukft_tune(const char *path, const rb_registry *reg, const char *const *logs, size_t n_logs,
                 const rb_ukft_tune_opts *o, rb_ukft_tune_result **out, rb_err *err)
{
    if (!path || !reg || !logs || !o || !out)
        return rb_err_set(err, RB_EINVAL, "ukf_torque tuning: NULL argument");
    *out = NULL;
    int rc = check_opts(o, n_logs, err);
    if (rc)
        return rc;
    char *text = NULL;
    size_t len = 0;
    rb_pipeline *p = NULL, *probe = NULL;
    cJSON *doc = NULL, *pd = NULL;
    const rb_config_stage *cs = NULL;
    tuner t = {.o = o, .err = err, .path = path, .log_paths = logs, .n_logs = n_logs, .quietest = INFINITY};
    rb_ukft_tune_result *r = rb_calloc(1, sizeof *r);
    if (!r)
        return nomem(err);
    rc = rb_cfg_read_file(path, &text, &len, err);
    if (rc == RB_OK)
        rc = rb_pipeline_load_text(text, len, path, path, reg, &p, err);
    if (rc == RB_OK)
        rc = pick_stage(p, path, o, &cs, err);
    if (rc == RB_OK && !(doc = cJSON_ParseWithLength(text, len)))
        rc = nomem(err);
    if (rc == RB_OK) {
        t.n = p->model ? p->n_model_joints : 0;
        const rb_param_value *kt = param(cs, "k_t"), *gr = param(cs, "gear_ratio");
        t.n_ft = param(cs, "ft_sensors")->count;
        t.ktr = rb_calloc(2 * t.n + 1, sizeof *t.ktr);
        r->joints = rb_calloc(t.n + 1, sizeof *r->joints);
        r->n_joints = r->joints ? t.n : 0;
        if (!t.ktr || !r->joints)
            rc = nomem(err);
        for (size_t j = 0; rc == RB_OK && j < t.n; j++) {
            t.ktr[j] =
                (kt->count == 1 ? kt->numbers[0] : kt->numbers[j]) * (gr->count == 1 ? gr->numbers[0] : gr->numbers[j]);
            if (!(r->joints[j] = rb_strdup(p->model_joints[j])))
                rc = nomem(err);
        }
        for (int k = 0; rc == RB_OK && k < N_IN; k++) { /* the ports by name: no copy of the type's order */
            size_t j = 0;
            while (j < cs->type->n_inputs && strcmp(cs->type->inputs[j], port_names[k]) != 0)
                j++;
            if (j == cs->type->n_inputs)
                rc = rb_err_set(err, RB_ECONFIG, "%s: stage %s: type %s has no input %s", path, cs->id, cs->type->name,
                                port_names[k]);
            else
                t.sig[k] = cs->in[j];
        }
        if (rc == RB_OK && (!t.sig[IN_Q] || !t.sig[IN_DQ]))
            rc = rb_err_set(err, RB_ECONFIG, "%s: stage %s: q and dq must be wired", path, cs->id);
    }
    /* the stage's inputs, from the pipeline without the stage */
    const char *rec[N_IN];
    size_t n_rec = 0;
    for (int k = 0; rc == RB_OK && k < N_IN; k++) {
        bool dup = !t.sig[k];
        for (size_t i = 0; i < n_rec && !dup; i++)
            dup = strcmp(rec[i], t.sig[k]) == 0;
        if (!dup)
            rec[n_rec++] = t.sig[k];
    }
    if (rc == RB_OK && !((pd = cJSON_Duplicate(doc, true)) && drop_downstream(pd, cs->id, false)))
        rc = nomem(err);
    if (rc == RB_OK)
        rc = load_probe(&t, pd, reg, rec, n_rec, &probe);
    t.probe = probe;
    t.logs = rb_calloc(n_logs, sizeof *t.logs);
    t.runs = rb_calloc(n_logs, sizeof *t.runs);
    if (rc == RB_OK && (!t.logs || !t.runs))
        rc = nomem(err);
    for (size_t l = 0; rc == RB_OK && l < n_logs; l++) {
        rb_run_opts ro = {0};
        rc = rb_log_read(logs[l], &t.logs[l], err);
        if (rc == RB_OK && (rc = rb_pipeline_run_log(probe, t.logs[l], &logs[l], 1, &ro, &t.runs[l], err)))
            rb_err_prefix(err, rc, "%s: ", logs[l]);
        if (rc == RB_OK && l == 0)
            t.dt = t.runs[0]->dt;
    }
    if (rc == RB_OK) {
        r->stage_id = rb_strdup(cs->id);
        r->pipeline_path = rb_strdup(path);
        r->n_joints = t.n;
        r->dt = t.dt;
        r->n_logs = n_logs;
        if (!r->stage_id || !r->pipeline_path)
            rc = nomem(err);
    }
    if (rc == RB_OK)
        rc = tune_all(&t, doc, cs, reg, r);
    if (rc == RB_OK) { /* what was kept */
        r->kept = rb_calloc(cs->type->n_params + 1, sizeof *r->kept);
        for (size_t i = 0; r->kept && i < cs->type->n_params; i++) {
            const char *nm = cs->type->params[i].name;
            bool tuned = false;
            for (size_t k = 0; k < r->n_params && !tuned; k++)
                tuned = strcmp(r->params[k].name, nm) == 0;
            if (!tuned && (strncmp(nm, "q_", 2) == 0 || strncmp(nm, "r_", 2) == 0) &&
                (strcmp(nm, "r_friction") != 0 || t.sig[IN_FRICTION]))
                r->kept[r->n_kept++] = (char *)nm; /* static: the stage type's schema */
        }
        if (!r->kept)
            rc = nomem(err);
    }
    for (size_t l = 0; l < n_logs; l++) {
        if (t.runs)
            rb_run_result_free(t.runs[l]);
        if (t.logs)
            rb_log_free(t.logs[l]);
    }
    rb_free(t.runs);
    rb_free(t.logs);
    rb_free(t.win);
    rb_free(t.ktr);
    rb_pipeline_free(probe);
    rb_pipeline_free(p);
    cJSON_Delete(pd);
    rb_free(text);
    r->doc = doc;
    if (rc) {
        rb_ukft_tune_result_free(r);
        return rc;
    }
    *out = r;
    return RB_OK;
}

void rb_ukft_tune_result_free(rb_ukft_tune_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_params; i++) {
        rb_free(r->params[i].values);
        rb_free(r->params[i].why);
    }
    for (size_t j = 0; r->joints && j < r->n_joints; j++)
        rb_free(r->joints[j]);
    rb_free(r->joints);
    rb_free(r->kept);
    rb_free(r->stage_id);
    rb_free(r->pipeline_path);
    cJSON_Delete(r->doc);
    rb_free(r);
}
