/* Friction training: the spec's logs -> velocity series and friction targets -> per-joint SCV fit, network
 * and analytic fits (see roboest/training.h, "friction training"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/training.h"

/* ---- the data --------------------------------------------------------------------------------------- */

void rb_friction_data_free(rb_friction_data *d)
{
    if (!d)
        return;
    for (size_t s = 0; d->log_sha256 && s < d->n_sessions; s++)
        rb_free(d->log_sha256[s]);
    rb_free(d->log_sha256);
    rb_free(d->start);
    rb_free(d->time);
    rb_free(d->w);
    rb_free(d->v);
    rb_free(d->target);
    rb_free(d);
}

/* One session's inputs while it is being turned into series. */
typedef struct session {
    const rb_friction_spec *spec;
    const char *name; /* the first path, for messages */
    rb_log *log, *tq; /* tq: the torque file, or NULL */
    bool used[5];     /* the signals read (SIGNAL_KEYS order) */
    rb_clock clk;
    double *w, *v, *I, *tau; /* clk.n x n_joints each, sample-major (w zero when not read) */
    double *F;               /* the friction channel's values, likewise (friction target only) */
    double *a;               /* joint accelerations, clk.n x n_joints, only with spec->J_m */
} session;

static void session_free(session *s)
{
    rb_log_free(s->log);
    rb_log_free(s->tq);
    rb_clock_free(&s->clk);
    rb_free(s->w);
    rb_free(s->v);
    rb_free(s->I);
    rb_free(s->tau);
    rb_free(s->F);
    rb_free(s->a);
}

static int read_session(const rb_friction_spec_log *L, session *s, char **sha, rb_err *err)
{
    rb_session_id id = {NULL, NULL};
    int rc = rb_log_read_session((const char *const *)L->paths, L->n_paths, &s->log, &id, err);
    if (rc == RB_OK && L->torques)
        rc = rb_log_read(L->torques, &s->tq, err);
    /* provenance: the files' SHA-256, comma-separated (the torque file last) */
    char hex[65] = "";
    if (rc == RB_OK && L->torques)
        rc = rb_sha256_file(L->torques, hex, err);
    if (rc == RB_OK && !(*sha = rb_asprintf("%s%s%s", id.sha256, hex[0] ? "," : "", hex)))
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    rb_session_id_free(&id);
    return rc;
}

/* The channel a signal binds (the torque in the torque file when the session has one). */
static int find_channel(session *s, const rb_friction_spec_signal *sig, const char *key, const rb_channel **ch,
                        rb_err *err)
{
    bool target = sig == &s->spec->torque || sig == &s->spec->friction;
    const rb_log *from = target && s->tq ? s->tq : s->log;
    *ch = rb_log_find(from, sig->channel);
    if (*ch)
        return RB_OK;
    const char *file = from == s->tq ? "the torque file" : s->name;
    return rb_err_set(err, RB_ENOTFOUND, "%s: no channel '%s' in %s (spec key %s.channel)", s->name, sig->channel, file,
                      key);
}

enum { N_SIGNALS = 5 };
static const char *const SIGNAL_KEYS[N_SIGNALS] = {"joint_velocity", "motor_velocity", "current", "torque", "friction"};

static const rb_friction_spec_signal *signal_of(const rb_friction_spec *spec, size_t i)
{
    const rb_friction_spec_signal *sigs[N_SIGNALS] = {&spec->joint_velocity, &spec->motor_velocity, &spec->current,
                                                      &spec->torque, &spec->friction};
    return sigs[i];
}

/* The clock: the spec's rate or channel over the span the channels read (and a clock channel) cover. */
static int make_clock(session *s, const rb_channel *const chans[N_SIGNALS], rb_err *err)
{
    const rb_friction_spec *spec = s->spec;
    double lo = -INFINITY, hi = INFINITY;
    for (size_t i = 0; i < N_SIGNALS; i++) {
        const rb_channel *ch = chans[i];
        if (!s->used[i])
            continue;
        if (ch->n_samples == 0)
            return rb_err_set(err, RB_EINPUT, "%s: channel %s has no samples", s->name, ch->name);
        lo = fmax(lo, ch->time[0]);
        hi = fmin(hi, ch->time[ch->n_samples - 1]);
    }
    if (spec->has_window) {
        double t0, t1;
        rb_window_resolve(&spec->window, rb_log_start(s->log), &t0, &t1);
        lo = fmax(lo, t0), hi = fmin(hi, t1);
    }
    if (!(lo <= hi))
        return rb_err_set(err, RB_EINPUT, "%s: the channels (and the window) share no time span", s->name);
    int rc;
    if (spec->clock_rate > 0) {
        rc = rb_clock_uniform(&s->clk, lo, hi, spec->clock_rate, err);
    } else {
        const rb_channel *cc = rb_log_find(s->log, spec->clock_channel);
        if (!cc)
            return rb_err_set(err, RB_ENOTFOUND, "%s: no clock channel '%s' (spec key clock.channel)", s->name,
                              spec->clock_channel);
        rc = rb_clock_from_channel(&s->clk, cc, lo, hi, err);
    }
    return rc ? rb_err_prefix(err, rc, "%s: ", s->name) : RB_OK;
}

/* Resample signal i's joint elements onto the clock into out (clk.n x n_joints). */
static int resample_signal(session *s, size_t i, const rb_channel *ch, double *out, rb_err *err)
{
    const rb_friction_spec_signal *sig = signal_of(s->spec, i);
    size_t n = s->spec->n_joints;
    size_t *sel = rb_malloc(n * sizeof *sel);
    if (!sel)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    int rc = RB_OK;
    for (size_t j = 0; j < n && rc == RB_OK; j++) {
        long e = rb_channel_element_index(ch, sig->elements[j]);
        if (e < 0)
            rc = rb_err_set(err, RB_ENOTFOUND, "%s: channel %s has no element '%s' (spec key %s.elements, joint %s)",
                            s->name, ch->name, sig->elements[j], SIGNAL_KEYS[i], s->spec->joints[j]);
        else
            sel[j] = (size_t)e;
    }
    if (rc == RB_OK && (rc = rb_resample(ch, sel, n, &s->clk, RB_INTERP_LINEAR, RB_NONFINITE_ERROR, out, NULL, err)))
        rb_err_prefix(err, rc, "%s: %s: ", s->name, SIGNAL_KEYS[i]);
    for (size_t k = 0; rc == RB_OK && sig->scale != 1 && k < s->clk.n * n; k++)
        out[k] *= sig->scale;
    rb_free(sel);
    return rc;
}

/* Positions -> the kf_derivative filter's velocity, per joint, in place; its acceleration into acc when
 * acc is not NULL (same layout). */
static int kf_velocity(session *s, const rb_friction_spec_signal *sig, const char *key, double *x, double *acc,
                       rb_err *err)
{
    size_t n = s->spec->n_joints, T = s->clk.n;
    double *z = rb_malloc(3 * (T ? T : 1) * sizeof *z), *xd = z + T, *xdd = xd + T;
    if (!z)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    int rc = RB_OK;
    for (size_t j = 0; j < n && rc == RB_OK; j++) {
        rb_kfd_params par = {.noise = RB_KFD_JERK, .q = sig->q[j], .r = sig->r[j]};
        memcpy(par.p0, sig->p0, sizeof par.p0);
        for (size_t k = 0; k < T; k++)
            z[k] = x[k * n + j];
        rc = rb_kfd_run(&par, s->clk.t, z, T, NULL, xd, acc ? xdd : NULL, NULL, err);
        if (rc)
            rb_err_prefix(err, rc, "%s: %s.kf_derivative: joint %s: ", s->name, key, s->spec->joints[j]);
        for (size_t k = 0; rc == RB_OK && k < T; k++) {
            x[k * n + j] = xd[k];
            if (acc)
                acc[k * n + j] = xdd[k];
        }
    }
    rb_free(z);
    return rc;
}

/* Joint accelerations by central differences of the velocities v on the clock (one-sided at the ends). */
static void difference_acceleration(const session *s, const double *v, double *acc)
{
    size_t n = s->spec->n_joints, T = s->clk.n;
    const double *t = s->clk.t;
    for (size_t k = 0; k < T; k++) {
        size_t lo = k ? k - 1 : 0, hi = k + 1 < T ? k + 1 : k;
        for (size_t j = 0; j < n; j++)
            acc[k * n + j] = hi > lo ? (v[hi * n + j] - v[lo * n + j]) / (t[hi] - t[lo]) : 0.0;
    }
}

/* motor_velocity: read it (the network's input; the analytic fits need only the joint velocity). */
static int load_session(session *s, const rb_friction_spec_log *L, bool motor_velocity, char **sha, rb_err *err)
{
    bool direct = s->spec->friction.channel != NULL;
    const bool used[N_SIGNALS] = {true, motor_velocity, !direct, !direct, direct};
    memcpy(s->used, used, sizeof used);
    int rc = read_session(L, s, sha, err);
    const rb_channel *chans[N_SIGNALS] = {NULL};
    for (size_t i = 0; rc == RB_OK && i < N_SIGNALS; i++)
        if (used[i])
            rc = find_channel(s, signal_of(s->spec, i), SIGNAL_KEYS[i], &chans[i], err);
    if (rc == RB_OK)
        rc = make_clock(s, chans, err);
    size_t cells = 0;
    if (rc == RB_OK && (!rb_size_mul(s->clk.n, s->spec->n_joints, &cells) || cells > SIZE_MAX / sizeof(double)))
        rc = rb_err_set(err, RB_ENOMEM, "%s: too many samples", s->name);
    if (rc == RB_OK && s->spec->J_m && !(s->a = rb_malloc((cells ? cells : 1) * sizeof *s->a)))
        rc = rb_err_set(err, RB_ENOMEM, "out of memory");
    double **dst[N_SIGNALS] = {&s->v, &s->w, &s->I, &s->tau, &s->F};
    for (size_t i = 0; rc == RB_OK && i < N_SIGNALS; i++) {
        if (!used[i] && i != 1)
            continue;
        if (!(*dst[i] = rb_calloc(cells ? cells : 1, sizeof **dst[i])))
            rc = rb_err_set(err, RB_ENOMEM, "out of memory");
        if (!used[i]) /* the motor velocity not read: zeros */
            continue;
        if (rc == RB_OK)
            rc = resample_signal(s, i, chans[i], *dst[i], err);
        if (rc == RB_OK && i < 2 && signal_of(s->spec, i)->kf_derivative)
            rc = kf_velocity(s, signal_of(s->spec, i), SIGNAL_KEYS[i], *dst[i], i == 0 ? s->a : NULL, err);
    }
    if (rc == RB_OK && s->a && !s->spec->joint_velocity.kf_derivative)
        difference_acceleration(s, s->v, s->a);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median interval of a clock of at least 2 samples (NaN when out of memory). */
static double median_interval(const rb_clock *clk)
{
    size_t n = clk->n - 1;
    double *d = rb_malloc(n * sizeof *d), med;
    if (!d)
        return NAN;
    for (size_t k = 0; k < n; k++)
        d[k] = clk->t[k + 1] - clk->t[k];
    qsort(d, n, sizeof *d, cmp_double);
    med = n % 2 ? d[n / 2] : 0.5 * (d[n / 2 - 1] + d[n / 2]);
    rb_free(d);
    return med;
}

/* Append a loaded session's series (and targets) to d. */
static int append_session(rb_friction_data *d, const session *s, const rb_friction_spec *spec, rb_err *err)
{
    size_t n = spec->n_joints, T0 = d->T, T = s->clk.n, total = T0 + T;
    double *time = rb_realloc(d->time, (total ? total : 1) * sizeof *time);
    if (time)
        d->time = time;
    double *w = rb_malloc(n * total * sizeof *w), *v = rb_malloc(n * total * sizeof *v),
           *tg = rb_malloc(n * total * sizeof *tg);
    if (!time || !w || !v || !tg) {
        rb_free(w), rb_free(v), rb_free(tg);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    for (size_t j = 0; j < n; j++) {
        if (T0) {
            memcpy(w + j * total, d->w + j * T0, T0 * sizeof *w);
            memcpy(v + j * total, d->v + j * T0, T0 * sizeof *v);
            memcpy(tg + j * total, d->target + j * T0, T0 * sizeof *tg);
        }
        for (size_t k = 0; k < T && s->F; k++) {
            w[j * total + T0 + k] = s->w[k * n + j];
            v[j * total + T0 + k] = s->v[k * n + j];
            tg[j * total + T0 + k] = s->F[k * n + j];
        }
        for (size_t k = 0; k < T && !s->F; k++) {
            double tau_m = spec->k_t[j] * spec->R[j] * s->I[k * n + j], tau_j = s->tau[k * n + j];
            if (spec->J_m) /* the rotor's reflected inertia: tau_m = tau_j + tau_F + R^2 J_m a */
                tau_m -= spec->R[j] * spec->R[j] * spec->J_m[j] * s->a[k * n + j];
            w[j * total + T0 + k] = s->w[k * n + j];
            v[j * total + T0 + k] = s->v[k * n + j];
            tg[j * total + T0 + k] = tau_m - tau_j;
            if (!isfinite(tau_m - tau_j)) {
                rb_free(w), rb_free(v), rb_free(tg);
                return rb_err_set(err, RB_ENUMERIC,
                                  "%s: joint %s: friction target at sample %zu (t = %.15g s) is not finite (k_t R I_m "
                                  "= %g, tau_j = %g)",
                                  s->name, spec->joints[j], k, s->clk.t[k], tau_m, tau_j);
            }
        }
    }
    memcpy(d->time + T0, s->clk.t, T * sizeof *d->time);
    rb_free(d->w), rb_free(d->v), rb_free(d->target);
    d->w = w, d->v = v, d->target = tg;
    d->T = total;
    return RB_OK;
}

int rb_friction_data_build(const rb_friction_spec *spec, rb_friction_data **out, rb_err *err)
{
    return rb_friction_data_load(spec, true, out, err);
}

int rb_friction_data_load(const rb_friction_spec *spec, bool motor_velocity, rb_friction_data **out, rb_err *err)
{
    *out = NULL;
    if (spec->n_logs == 0)
        return rb_err_set(err, RB_ECONFIG, "%s: no logs: list them in \"logs\" or give them on the command line",
                          spec->path);
    rb_friction_data *d = rb_calloc(1, sizeof *d);
    if (!d || !(d->start = rb_calloc(spec->n_logs + 1, sizeof *d->start)) ||
        !(d->log_sha256 = rb_calloc(spec->n_logs, sizeof *d->log_sha256))) {
        rb_friction_data_free(d);
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    d->n_joints = spec->n_joints;
    d->n_sessions = spec->n_logs;
    int rc = RB_OK;
    for (size_t i = 0; rc == RB_OK && i < spec->n_logs; i++) {
        session s = {.spec = spec, .name = spec->logs[i].paths[0]};
        rc = load_session(&s, &spec->logs[i], motor_velocity, &d->log_sha256[i], err);
        if (rc == RB_OK && s.clk.n < 2)
            rc = rb_err_set(err, RB_EINPUT, "%s: the clock has %zu sample(s)", s.name, s.clk.n);
        if (rc == RB_OK) {
            double dt = spec->clock_rate > 0 ? 1 / spec->clock_rate : median_interval(&s.clk);
            if (i == 0)
                d->sample_period = dt;
            else if (!(fabs(dt - d->sample_period) <= 0.02 * d->sample_period))
                rc = rb_err_set(err, RB_EINPUT, "%s: sample period %g s differs from the first log's %g s", s.name, dt,
                                d->sample_period);
        }
        if (rc == RB_OK)
            rc = append_session(d, &s, spec, err);
        d->start[i + 1] = d->T;
        session_free(&s);
    }
    if (rc)
        rb_friction_data_free(d);
    else
        *out = d;
    return rc;
}

int rb_friction_data_rows(const rb_friction_data *d, size_t j, size_t H, double **X, double **target, double **v_now,
                          size_t *n, rb_err *err)
{
    size_t rows = 0;
    for (size_t s = 0; s < d->n_sessions; s++) {
        size_t len = d->start[s + 1] - d->start[s];
        rows += len >= H ? len - H + 1 : 0;
    }
    *X = rb_malloc((rows ? rows : 1) * 2 * H * sizeof **X);
    *target = rb_malloc((rows ? rows : 1) * sizeof **target);
    *v_now = rb_malloc((rows ? rows : 1) * sizeof **v_now);
    if (!*X || !*target || !*v_now) {
        rb_free(*X), rb_free(*target), rb_free(*v_now);
        *X = *target = *v_now = NULL;
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    }
    const double *w = d->w + j * d->T, *v = d->v + j * d->T, *tg = d->target + j * d->T;
    size_t r = 0;
    for (size_t s = 0; s < d->n_sessions; s++)
        for (size_t k = d->start[s] + H - 1; k < d->start[s + 1]; k++, r++) {
            memcpy(*X + r * 2 * H, w + k + 1 - H, H * sizeof **X);
            memcpy(*X + r * 2 * H + H, v + k + 1 - H, H * sizeof **X);
            (*target)[r] = tg[k];
            (*v_now)[r] = v[k];
        }
    *n = rows;
    return RB_OK;
}

/* ---- training --------------------------------------------------------------------------------------- */

void rb_friction_train_result_free(rb_friction_train_result *r)
{
    if (!r)
        return;
    rb_friction_net_file_free(r->file);
    rb_free(r->n_rows);
    rb_free(r->rms_target);
    rb_free(r->scv);
    rb_free(r->scv_rmse);
    rb_free(r->analytic);
    rb_free(r->analytic_rmse);
    rb_free(r->analytic_offset);
    rb_free(r);
}

static double rmse_of(const rb_friction_model *m, const double *v, const double *t, size_t n)
{
    double s = 0;
    for (size_t k = 0; k < n; k++) {
        double e = t[k] - (m ? rb_friction_eval(m, v[k]) : 0);
        s += e * e;
    }
    return sqrt(s / (double)n);
}

/* Joint j's rows, split, physics values and training inputs. */
typedef struct joint_rows {
    double *X, *target, *v_now, *physics, *v_train, *t_train;
    bool *val;
    size_t n, n_train;
} joint_rows;

static void rows_free(joint_rows *r)
{
    rb_free(r->X);
    rb_free(r->target);
    rb_free(r->v_now);
    rb_free(r->physics);
    rb_free(r->v_train);
    rb_free(r->t_train);
    rb_free(r->val);
}

static int make_rows(const rb_friction_data *d, const rb_friction_spec *spec, size_t j, joint_rows *r, rb_err *err)
{
    int rc = rb_friction_data_rows(d, j, spec->H, &r->X, &r->target, &r->v_now, &r->n, err);
    if (rc)
        return rc;
    if (r->n < 10)
        return rb_err_set(err, RB_EINPUT, "%zu samples with a full history of H = %zu (need at least 10)", r->n,
                          spec->H);
    size_t n = r->n;
    r->val = rb_malloc(n * sizeof *r->val);
    r->physics = rb_malloc(n * sizeof *r->physics);
    r->v_train = rb_malloc(n * sizeof *r->v_train);
    r->t_train = rb_malloc(n * sizeof *r->t_train);
    if (!r->val || !r->physics || !r->v_train || !r->t_train)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    rb_friction_net_split(n, spec->split_block, r->val);
    for (size_t k = 0; k < n; k++)
        if (!r->val[k]) {
            r->v_train[r->n_train] = r->v_now[k];
            r->t_train[r->n_train++] = r->target[k];
        }
    return RB_OK;
}

typedef struct progress_ctx {
    const rb_friction_train_opts *o;
    size_t joint;
} progress_ctx;

static int joint_progress(void *user, size_t epoch, size_t epochs, double train, double val)
{
    progress_ctx *p = user;
    return p->o->progress(p->o->user, p->joint, epoch, epochs, train, val);
}

/* The network of joint j into the file. */
static int train_network(const rb_friction_spec *spec, const rb_friction_train_opts *o, size_t j, joint_rows *r,
                         const rb_friction_model *scv, rb_friction_net_file *f, rb_err *err)
{
    rb_friction_net_joint *e;
    int rc = rb_friction_net_file_add(f, spec->joints[j], &e, err);
    if (rc)
        return rc;
    e->H = spec->H;
    e->scv = *scv;
    e->split_block = spec->split_block;
    e->train = spec->train;
    progress_ctx pc = {o, j};
    rb_friction_net_train_opts to = spec->train;
    to.progress = o->progress ? joint_progress : NULL;
    to.user = &pc;
    rb_friction_net_data data = {r->n, 2 * spec->H, r->X, r->target, r->physics, r->val};
    return rb_friction_net_train(&data, &to, &e->net, &e->result, err);
}

static int train_joint(const rb_friction_spec *spec, const rb_friction_train_opts *o, const rb_friction_data *d,
                       size_t j, rb_friction_train_result *res, rb_err *err)
{
    joint_rows r = {0};
    int rc = make_rows(d, spec, j, &r, err);
    if (rc == RB_OK &&
        (rc = rb_friction_fit(RB_FRICTION_SCV, r.v_train, r.t_train, r.n_train, &spec->scv, &res->scv[j], NULL, err)))
        rb_err_prefix(err, rc, "physics model: ");
    if (rc == RB_OK) {
        for (size_t k = 0; k < r.n; k++)
            r.physics[k] = rb_friction_eval(&res->scv[j], r.v_now[k]);
        res->n_rows[j] = r.n;
        res->rms_target[j] = rmse_of(NULL, r.v_now, r.target, r.n);
        res->scv_rmse[j] = rmse_of(&res->scv[j], r.v_now, r.target, r.n);
    }
    /* the analytic models need no history: every sample of every session */
    for (size_t a = 0; rc == RB_OK && a < spec->n_analytic; a++) {
        size_t at = a * spec->n_joints + j;
        rb_friction_fit_opts fo = spec->scv;
        if (spec->analytic[a] == RB_FRICTION_TANH6)
            fo.grid = 0; /* scv's grid is per v_s; tanh6's default 13 per scale keeps its 3-D search affordable */
        rc = rb_friction_fit_offset(spec->analytic[a], d->v + j * d->T, d->target + j * d->T, d->T, &fo,
                                    &res->analytic[at], spec->analytic_offset ? &res->analytic_offset[at] : NULL,
                                    &res->analytic_rmse[at], err);
        if (rc)
            rb_err_prefix(err, rc, "%s fit: ", rb_friction_kind_name(spec->analytic[a]));
    }
    if (rc == RB_OK && o->network)
        rc = train_network(spec, o, j, &r, &res->scv[j], res->file, err);
    rows_free(&r);
    return rc ? rb_err_prefix(err, rc, "joint %s: ", spec->joints[j]) : RB_OK;
}

/* "motors_state/velocities", or "kf_derivative (q [..], r [..]) of joints_state/positions". */
static char *describe(const rb_friction_spec_signal *sig, size_t n)
{
    if (!sig->kf_derivative)
        return rb_strdup(sig->channel);
    char buf[512] = "";
    size_t len = 0;
    len += (size_t)snprintf(buf, sizeof buf, "x_dot of kf_derivative (process_noise jerk, q");
    for (size_t j = 0; j < n && len < sizeof buf; j++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%.17g", j ? ", " : " [", sig->q[j]);
    for (size_t j = 0; j < n && len < sizeof buf; j++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%.17g", j ? ", " : "], r [", sig->r[j]);
    if (len < sizeof buf)
        snprintf(buf + len, sizeof buf - len, "], p0 [%g, %g, %g]) of %s", sig->p0[0], sig->p0[1], sig->p0[2],
                 sig->channel);
    return rb_strdup(buf);
}

static int set_provenance(const rb_friction_spec *spec, const rb_friction_data *d, rb_friction_net_file *f, rb_err *err)
{
    f->sample_period = d->sample_period;
    f->motor_velocity = describe(&spec->motor_velocity, spec->n_joints);
    f->joint_velocity = describe(&spec->joint_velocity, spec->n_joints);
    if (!f->motor_velocity || !f->joint_velocity)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    size_t len = 1;
    for (size_t i = 0; i < spec->n_logs; i++)
        for (size_t p = 0; p < spec->logs[i].n_paths; p++)
            len +=
                strlen(spec->logs[i].paths[p]) + 2 + (spec->logs[i].torques ? strlen(spec->logs[i].torques) + 16 : 0);
    char *logs = rb_calloc(len, 1), *shas = NULL;
    for (size_t i = 0; logs && i < spec->n_logs; i++) {
        for (size_t p = 0; p < spec->logs[i].n_paths; p++) {
            strcat(logs, i || p ? (p ? "+" : ",") : "");
            strcat(logs, spec->logs[i].paths[p]);
        }
        if (spec->logs[i].torques) {
            strcat(logs, " (torques ");
            strcat(logs, spec->logs[i].torques);
            strcat(logs, ")");
        }
    }
    size_t slen = 1;
    for (size_t i = 0; i < d->n_sessions; i++)
        slen += strlen(d->log_sha256[i]) + 1;
    if (logs && (shas = rb_calloc(slen, 1)))
        for (size_t i = 0; i < d->n_sessions; i++) {
            strcat(shas, i ? ";" : "");
            strcat(shas, d->log_sha256[i]);
        }
    bool direct = spec->friction.channel != NULL;
    const char *kv[][2] = {{"created_by", "roboest train-friction"},
                           {"spec", spec->path},
                           {"spec_sha256", spec->sha256},
                           {"logs", logs},
                           {"logs_sha256", shas},
                           {direct ? "friction" : "torque", direct ? spec->friction.channel : spec->torque.channel},
                           {"current", spec->current.channel}};
    size_t n_kv = sizeof kv / sizeof kv[0] - (direct ? 1 : 0);
    rb_provenance pv = {0, NULL, NULL};
    int rc = logs && shas ? rb_provenance_init(&pv, err) : rb_err_set(err, RB_ENOMEM, "out of memory");
    for (size_t i = 0; rc == RB_OK && i < n_kv; i++)
        rc = rb_provenance_add(&pv, kv[i][0], kv[i][1], err);
    for (size_t i = 0; rc == RB_OK && i < N_SIGNALS; i++) { /* as a pipeline records a scaled binding */
        const rb_friction_spec_signal *sig = signal_of(spec, i);
        char num[32];
        if (sig->scale != 1)
            rc = rb_provenance_addf(&pv, rb_format_double(sig->scale, num), err, "%s.scale", SIGNAL_KEYS[i]);
        if (rc == RB_OK && sig->scale != 1 && sig->unit)
            rc = rb_provenance_addf(&pv, sig->unit, err, "%s.unit", SIGNAL_KEYS[i]);
    }
    if (rc == RB_OK)
        rc = rb_friction_net_file_set_provenance(f, &pv, err);
    rb_provenance_free(&pv);
    rb_free(logs);
    rb_free(shas);
    return rc;
}

static int alloc_result(const rb_friction_spec *spec, bool network, rb_friction_train_result **out, rb_err *err)
{
    size_t n = spec->n_joints, na = spec->n_analytic;
    rb_friction_train_result *r = rb_calloc(1, sizeof *r);
    if (r) {
        r->n_joints = n;
        r->n_analytic = na;
        memcpy(r->analytic_kind, spec->analytic, sizeof r->analytic_kind);
        r->n_rows = rb_calloc(n, sizeof *r->n_rows);
        r->rms_target = rb_calloc(n, sizeof *r->rms_target);
        r->scv = rb_calloc(n, sizeof *r->scv);
        r->scv_rmse = rb_calloc(n, sizeof *r->scv_rmse);
        r->analytic = rb_calloc(na ? na * n : 1, sizeof *r->analytic);
        r->analytic_rmse = rb_calloc(na ? na * n : 1, sizeof *r->analytic_rmse);
        r->analytic_offset = rb_calloc(na ? na * n : 1, sizeof *r->analytic_offset);
    }
    *out = r;
    if (!r || !r->n_rows || !r->rms_target || !r->scv || !r->scv_rmse || !r->analytic || !r->analytic_rmse ||
        !r->analytic_offset)
        return rb_err_set(err, RB_ENOMEM, "out of memory");
    return network ? rb_friction_net_file_new(&r->file, err) : RB_OK;
}

int rb_friction_train(const rb_friction_spec *spec, const rb_friction_train_opts *o, rb_friction_train_result **out,
                      rb_err *err)
{
    *out = NULL;
    rb_friction_train_opts none = {0};
    if (!o)
        o = &none;
    rb_friction_data *d = NULL;
    rb_friction_train_result *res = NULL;
    int rc = rb_friction_data_load(spec, o->network, &d, err);
    if (rc == RB_OK)
        rc = alloc_result(spec, o->network, &res, err);
    if (rc == RB_OK)
        res->sample_period = d->sample_period, res->n_samples = d->T;
    if (rc == RB_OK && o->network)
        rc = set_provenance(spec, d, res->file, err);
    for (size_t j = 0; rc == RB_OK && j < spec->n_joints; j++)
        rc = train_joint(spec, o, d, j, res, err);
    rb_friction_data_free(d);
    if (rc)
        rb_friction_train_result_free(res);
    else
        *out = res;
    return rc;
}
