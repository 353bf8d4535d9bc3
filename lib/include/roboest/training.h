/*
 * roboest training: offline fitting on logs, apart from the stages that use its results.
 *   - the friction network and the analytic friction models fitted on logs (`roboest train-friction`): the spec
 *     file, the data, the training;
 *   - the kf_derivative filter's process noise chosen on a log (`roboest tune kf-derivative`);
 *   - the ukf_torque stage's variances chosen on logs without truth (`roboest tune ukf-torque`).
 * Training is seeded and deterministic: the same inputs give the same bytes (on the same machine and OpenBLAS
 * build).
 */
#ifndef ROBOEST_TRAINING_H
#define ROBOEST_TRAINING_H

#include <stdbool.h>
#include <stddef.h>

#include "roboest/config.h"
#include "roboest/core.h"
#include "roboest/filters.h"
#include "roboest/friction.h"
#include "roboest/io.h"
#include "roboest/stage.h"

RB_API_BEGIN

/* ---- friction training specs (friction_spec.c) ----------------------------------------------------------------
 * A JSON file telling `roboest train-friction` (rb_friction_train below) where the data of a
 * friction network come from. Errors are RB_ECONFIG "<file>:<line>:<col>: <key path>: <what>" with
 * suggestions, as for pipelines; every key not listed is an error. Paths are relative to the spec's folder.
 *
 *   logs            non-empty array (optional when the logs come from the command line: a spec without logs
 *                   cannot train until rb_friction_spec_set_logs gives some); each entry a log path, an array
 *                   of paths (one session the
 *                   logger split over files, concatenated in order), or {"log": path or [paths],
 *                   "torques": path}: "torques" names a second file (e.g. the estimates `roboest run` wrote)
 *                   that holds the torque channel for this log; without it the torque channel is in the log.
 *   joints          required: element names of the joints to train, unique (one network each).
 *   joint_velocity  {"channel": name, "elements": [names], "kf_derivative": {"q": [...], "r": [...],
 *   motor_velocity   "p0": [3]}}. Default channels joints_state/velocities and motors_state/velocities.
 *                   "elements" (default: the joints) picks each joint's element, in joint order. With
 *                   "kf_derivative" the channel holds positions and the velocity is the x_dot output of the
 *                   kf_derivative stage's filter (process_noise "jerk"; q, r: 1 or one per joint, defaults
 *                   1e4 and 1e-6; p0 default [1, 1e2, 1e4]) run over the training clock, exactly what a
 *                   pipeline with that stage feeds friction_pinn at replay. Motor velocities are used as the
 *                   log has them (rotor side for motors_state).
 *                   Every signal also takes a pipeline binding's "scale" (finite, non-zero, default 1:
 *                   every value read is multiplied by it, e.g. 0.017453292519943295 for a deg/s log) and
 *                   "unit" (the unit after scaling, required with a scale other than 1; recorded in the
 *                   network file's provenance), read by rb_binding_scale_unit (roboest/pipeline.h).
 *   current         {"channel", "elements"}: motor currents, A (default motors_state/currents).
 *   torque          required {"channel", "elements"}: the joint torque tau_j, N m: "truth/joints/torques"
 *                   in a log of `roboest simulate`, or a signal of an estimates file (logs[].torques), e.g.
 *                   the rnea_torque stage's output (the paper's data pipeline).
 *   friction        {"channel", "elements"}: a channel holding the friction torque itself, N m, in friction.h's
 *                   sign (e.g. the measured friction of a friction data set's CSV): the target is that channel
 *                   instead of k_t R I_m - tau_j, and torque, current, k_t, R and motor_inertia are then
 *                   errors (not needed, so not silently ignored). Read from logs[].torques when a log has one.
 *   k_t, R          required (unless friction) number arrays, 1 value or one per joint: torque constant (N m/A, > 0) and the
 *                   signed gear ratio (non-zero). The friction target is tau_F = k_t R I_m - tau_j.
 *   motor_inertia   optional number array, 1 value or one per joint: rotor inertias J_m (kg m^2, rotor side,
 *                   >= 0; default none). The target becomes tau_F = k_t R I_m - tau_j - R^2 J_m a, with a the
 *                   joint acceleration: the kf_derivative filter's x_ddot when joint_velocity has
 *                   "kf_derivative", else the central difference of the joint velocity on the clock
 *                   (one-sided at a session's ends). The paper neglects this term (eq. 2); a simulated log
 *                   with rotor inertia needs it for the target to be the friction alone.
 *   clock           {"rate": Hz} or {"channel": name} as in a pipeline (default: the joint_velocity
 *                   channel's time stamps), limited to the span every used channel covers; friction_pinn
 *                   must later run on a clock of the same period.
 *   window          a time window (config.h rb_window: [t0, t1] absolute s, or {"from_start": [t0, t1]}), optional.
 *   network         {"H" (integer >= 1, default 20), "hidden" ([h1, h2], default [233, 229]), "dropout"
 *                   ([0, 1), 0.1), "lambda" ([0, 1], 0.12), "learning_rate" (> 0, 1e-3), "epochs" (>= 1,
 *                   200), "batch_size" (>= 1, 256), "patience" (>= 0, 20), "seed" (integer >= 0, 0),
 *                   "split_block" (samples >= 1, 500)}: rb_friction_net_train's options (roboest/friction.h).
 *   scv             {"v_eps" (>= 0, default 0), "v_s" (> 0 fixes it; default searched), "v_s_min",
 *                   "v_s_max", "grid"}: the fit of the physics model (rb_friction_fit).
 *   analytic        array of model names ("coulomb_viscous", "scv", "tanh6") also fitted by least squares
 *                   for the friction_model stage (with scv's v_eps and bracket options; tanh6 keeps its
 *                   default grid of 13 per scale).
 *   analytic_offset true or false (default): the analytic fits get a constant term c, tau_F = model(v) + c
 *                   (rb_friction_fit_offset), printed as the friction_model stage's "offset".
 */
typedef struct rb_friction_spec_signal {
    char *channel;
    char **elements;    /* n_joints element names (the joints by default) */
    double scale;       /* every value read is multiplied by it (default 1) */
    char *unit;         /* the unit after scaling, or NULL (required with a scale other than 1) */
    bool kf_derivative; /* the channel holds positions: velocities from the kf_derivative filter */
    double *q, *r;      /* n_joints each (expanded from 1 or n values); kf_derivative only */
    double p0[3];
} rb_friction_spec_signal;

typedef struct rb_friction_spec_log {
    size_t n_paths;
    char **paths;  /* resolved; one session, concatenated in order */
    char *torques; /* resolved path of the file with the torque channel, NULL: the log itself */
} rb_friction_spec_log;

typedef struct rb_friction_spec {
    char *path, *sha256; /* the spec file (as given) and the SHA-256 of its text */
    size_t n_logs;
    rb_friction_spec_log *logs;
    size_t n_joints;
    char **joints;
    rb_friction_spec_signal joint_velocity, motor_velocity, current, torque;
    rb_friction_spec_signal friction; /* the measured-friction target; channel NULL: k_t R I_m - tau_j instead */
    double *k_t, *R;                  /* n_joints each (NULL with friction) */
    double *J_m;                      /* n_joints rotor inertias (kg m^2), or NULL: none subtracted */
    double clock_rate;                /* Hz; 0: the clock follows clock_channel */
    char *clock_channel;              /* default: joint_velocity.channel */
    bool has_window;
    rb_window window; /* resolved per log: "from_start" counts from the log's first sample (not the torque file's) */
    size_t H, split_block;
    rb_friction_net_train_opts train; /* progress unset */
    rb_friction_fit_opts scv;
    size_t n_analytic;
    rb_friction_kind analytic[3];
    bool analytic_offset; /* the analytic fits get a constant term */
} rb_friction_spec;

/* Load and validate a spec (caller frees with rb_friction_spec_free; *out NULL on failure). RB_ENOTFOUND,
 * RB_ECONFIG, RB_ENOMEM. */
int rb_friction_spec_load(const char *path, rb_friction_spec **out, rb_err *err);
/* The same from text: name_for_messages starts messages, base_file anchors relative paths. */
int rb_friction_spec_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                               rb_friction_spec **out, rb_err *err);
void rb_friction_spec_free(rb_friction_spec *s);
/* Replace the spec's logs by n single-file sessions (paths copied as given, e.g. relative to the working folder;
 * the torque channel is then read from each log itself). RB_ENOMEM leaves the spec unchanged. */
int rb_friction_spec_set_logs(rb_friction_spec *s, const char *const *paths, size_t n, rb_err *err);

/* ---- friction training (friction_train.c; `roboest train-friction`) --------------------------------------------
 * From a spec (rb_friction_spec, above) to per-joint friction networks (roboest/friction.h) and
 * least-squares fits of the analytic models.
 *
 * Data (rb_friction_data_build), per log session (files concatenated with rb_log_append):
 *   1. the clock: the spec's rate or channel over the span every used channel covers (the latest first
 *      sample to the earliest last sample), limited to the window;
 *   2. every channel resampled onto it (linear; a non-finite sample the clock uses is RB_EINPUT naming the
 *      channel, element and sample, as in a pipeline run);
 *   3. velocities given as positions (kf_derivative) go through the kf_derivative stage's own filter
 *      (rb_kfd_run over the clock times): the same numbers a pipeline with that stage produces;
 *   4. the friction target tau_F = k_t R I_m - tau_j (- R^2 J_m a with the spec's motor_inertia), or the
 *      spec's friction channel, per joint and sample; a non-finite one is RB_ENUMERIC
 *      "<log>: joint <j>: friction target at sample <k> (t = <s> s) is not finite (k_t R I_m = .., tau_j = ..)".
 * The sample period is 1 / rate, or the median interval of the first session's channel clock; every
 * session's must agree within 2 % (RB_EINPUT otherwise).
 *
 * Training (rb_friction_train), per joint: the rows are the samples with a full history of H samples inside
 * their session, x_k = [w_{k-H+1..k}, v_{k-H+1..k}] (friction.h's layout), target tau_F_k, current joint
 * velocity v_k; the block split of rb_friction_net_split (split_block); the SCV model fitted (rb_friction_fit, the
 * spec's scv options; non-negative F_c, F_s - F_c, F_v) on the training rows; its value at v_k is the physics
 * term of the loss; then rb_friction_net_train with the spec's options. The analytic models need no history and
 * are fitted on every sample of every session (the clock's samples, none dropped).
 * Memory: about 16 H bytes per row of one joint at a time (rows and their normalized copy) plus 24 bytes per
 * sample and joint for the series.
 */
typedef struct rb_friction_data {
    size_t n_joints;
    size_t n_sessions;
    size_t *start;        /* n_sessions + 1: session s holds samples start[s] .. start[s + 1] - 1 */
    size_t T;             /* samples over all sessions */
    double *time;         /* T clock times, s */
    double *w, *v;        /* n_joints x T each (joint j at j T): motor and joint velocity as the network sees them */
    double *target;       /* n_joints x T: tau_F = k_t R I_m - tau_j (or the friction channel), N m */
    double sample_period; /* s */
    char **log_sha256;    /* n_sessions: SHA-256 of each session's files, comma-separated */
} rb_friction_data;

/* Read the spec's logs and build the series above (caller frees with rb_friction_data_free). Messages start
 * with the log's path. RB_ENOTFOUND (file, channel or element; naming the spec key), RB_EINPUT, RB_ENUMERIC,
 * RB_ENOMEM. */
int rb_friction_data_build(const rb_friction_spec *spec, rb_friction_data **out, rb_err *err);
/* The same; motor_velocity false: the motor velocity channel is not read (nor required) and w is all zeros
 * (for the analytic fits, which use the joint velocity alone). */
int rb_friction_data_load(const rb_friction_spec *spec, bool motor_velocity, rb_friction_data **out, rb_err *err);
void rb_friction_data_free(rb_friction_data *d);
/* The rows of joint j for history length H (caller frees *X, *target, *v_now with rb_free): X n x 2 H,
 * target and v_now n each. *n may be 0. RB_ENOMEM. */
int rb_friction_data_rows(const rb_friction_data *d, size_t j, size_t H, double **X, double **target, double **v_now,
                          size_t *n, rb_err *err);

typedef struct rb_friction_train_opts {
    bool network; /* train the networks (false: only the SCV and analytic fits) */
    /* Called after every epoch of joint `joint` (index into spec->joints); rb_friction_net_train_opts.progress's
     * rules. May be NULL. */
    int (*progress)(void *user, size_t joint, size_t epoch, size_t epochs, double train_loss, double val_loss);
    void *user;
} rb_friction_train_opts;

typedef struct rb_friction_train_result {
    rb_friction_net_file *file; /* the networks, with provenance (NULL unless opts.network) */
    size_t n_joints;
    double sample_period;   /* s */
    size_t *n_rows;         /* per joint */
    double *rms_target;     /* per joint: sqrt(mean tau_F^2) over the rows: the zero-friction RMSE */
    rb_friction_model *scv; /* per joint: the physics model */
    double *scv_rmse;       /* per joint, over all rows, N m */
    size_t n_analytic;
    rb_friction_kind analytic_kind[3];
    rb_friction_model *analytic; /* n_analytic x n_joints: model a of joint j at a n_joints + j */
    double *analytic_rmse;       /* likewise, over every sample (n_samples), N m */
    double *analytic_offset;     /* likewise: the constant term c, N m (0 unless spec->analytic_offset) */
    size_t n_samples;            /* samples over all sessions (the analytic fits' data) */
} rb_friction_train_result;

/* Build the data and fit / train every joint. Errors of rb_friction_data_build; then, prefixed with
 * "joint <name>: ", RB_EINPUT (fewer than 10 rows, or no validation row), the fits' and rb_friction_net_train's
 * errors. The caller frees *out with rb_friction_train_result_free. */
int rb_friction_train(const rb_friction_spec *spec, const rb_friction_train_opts *o, rb_friction_train_result **out,
                      rb_err *err);
void rb_friction_train_result_free(rb_friction_train_result *r);

/* ---- the kf_derivative filter's process noise from a log (kfd_tune.c; `roboest tune kf-derivative`) ----------
 * The filter is roboest/filters.h's rb_kfd. */
/* Measurement variance from the data: mean((z_k - 3 z_{k-1} + 3 z_{k-2} - z_{k-3})^2) / 20 over the
 * finite third differences (white noise of variance r gives 20 r; a smooth signal adds about
 * (dT^3 x''')^2, negligible at robot sample rates). NaN when there is none. */
double rb_kfd_estimate_r(const double *z, size_t T);

/*
 * Choosing q (the "jerk" model; `roboest tune kf-derivative`). The paper tunes the filter with a
 * genetic algorithm trading smoothness against lag; here one scalar, log10 q, is searched and the
 * criterion J(q) is computed on the samples after the warm-up (t >= t_0 + warmup), running the
 * stage's own filter (rb_kfd_run) from the first sample:
 *   - with a reference velocity v_ref (e.g. the truth a simulated log carries):
 *         J(q) = sqrt(mean_k (x_dot_k(q) - v_ref_k)^2)                    velocity RMSE, unit/s
 *   - without one: the one-step-ahead prediction error of the position,
 *         J(q) = sqrt(mean_k (z_k - x^-_k(q))^2),   x^-_k = (F s_{k-1})_0, unit
 *     (the prediction-error method). It is the smoothness-vs-lag trade-off measured on the data
 *     alone: too small a q makes the filter lag and its predictions trail the signal; too large a q
 *     makes it follow the noise, which the extrapolation over dT amplifies. For the model's own
 *     noise the minimum is the optimal (Kalman) predictor; on the noisy sinusoids of the tests it lands
 *     within half a decade of the q that minimizes the true velocity RMSE.
 * The filter depends on q / r only (up to the start-up transient), so q is searched for the given r
 * (opts->r, or rb_kfd_estimate_r rounded to 3 significant digits when 0). Search: a grid over log10 q
 * in half-decade steps over [q_min, q_max] (default: rho = q dT^5 / r from 1e-18 to 1e2, dT the median
 * interval), then a golden-section search between the best grid point's neighbours down to 0.01 decade;
 * q is then rounded to 3 significant digits and J is evaluated at the rounded q. Deterministic (no
 * randomness, fixed evaluation order). Cost: about 55 runs of the filter over the signal (1.1 us per
 * sample with the generic KF: 3.5 s for 60 000 samples).
 */
typedef struct rb_kfd_tune_opts {
    double r;            /* measurement variance, unit^2; 0: rb_kfd_estimate_r of the signal */
    double p0[3];        /* initial variances (defaults RB_KFD_DEFAULT_P0_*) */
    double q_min, q_max; /* search interval, unit^2/s^5; 0: the default above */
    double warmup;       /* seconds at the start not scored; < 0: 10 % of the duration (default) */
} rb_kfd_tune_opts;

/* Defaults: r 0 (estimated), p0 the stage's defaults, default interval, warmup -1. */
void rb_kfd_tune_opts_init(rb_kfd_tune_opts *o);

typedef struct rb_kfd_tune_result {
    double q;            /* chosen, 3 significant digits, unit^2/s^5 */
    double r;            /* measurement variance used (given or estimated), unit^2 */
    double criterion;    /* J(q) at the chosen q (unit/s with a reference, unit without) */
    bool with_reference; /* which criterion */
    double q_min, q_max; /* the interval searched */
    bool at_bound;       /* the minimum lies within half a decade of an end: widen the interval */
    size_t evaluations;  /* filter runs over the signal */
    size_t n_scored;     /* samples after the warm-up (NaN ones are skipped in J) */
    double t_scored;     /* time of the first scored sample, s */
    double dt;           /* median sample interval, s */
} rb_kfd_tune_result;

/* Tune q on one signal: times t (T, strictly increasing), positions z (T; NaN skipped), v_ref (T, or NULL
 * for the prediction-error criterion). T >= 8. RB_EINPUT (times, too few samples, nothing scored),
 * RB_EINVAL (an empty interval, bad p0), RB_ENUMERIC (r cannot be estimated: give it; a non-finite
 * criterion), RB_ENOMEM. */
int rb_kfd_tune(const double *t, const double *z, const double *v_ref, size_t T, const rb_kfd_tune_opts *o,
                rb_kfd_tune_result *res, rb_err *err);
/* The same on element `element` of a log channel (its own time stamps, checked with
 * rb_channel_check_time), with an optional reference channel resampled linearly onto those times (it
 * must cover them and be finite there: RB_EINPUT naming the reference otherwise). Messages start with
 * "channel <name>: element <name>: ". */
int rb_kfd_tune_channel(const rb_channel *x, size_t element, const rb_channel *ref, size_t ref_element,
                        const rb_kfd_tune_opts *o, rb_kfd_tune_result *res, rb_err *err);

/* ---- the ukf_torque stage's noise from a log (ukf_tune.c; `roboest tune ukf-torque`) ---------------------------
 * The variances of a pipeline's ukf_torque stage chosen from logs alone, no truth channel read. The pipeline runs
 * on each log (rb_pipeline_run_log) without its ukf_torque stage (and the stages fed by it) to give the stage's
 * input signals exactly as the stage would see them (after offsets, filters, the friction network), on the
 * pipeline's clock. Then, per element:
 *   still windows   stretches of at least still_duration s where every joint's |dq| (the stage's dq input) is at
 *                   most still_velocity and every joint's q moves by at most still_range (the window's max - min);
 *                   found as consecutive chunks of still_duration inside the runs of small |dq|.
 *   r_current, r_ft, r_acc, r_gyro
 *                   the sensor noise inside the still windows: mean((x_k - 2 x_(k-N) + x_(k-2N))^2) / 6 (a
 *                   second difference removes a slow drift; white noise of variance s gives 6 s), with N the
 *                   clock samples per sample of the element's log channel (round(channel interval / clock
 *                   period), >= 1), and r = N s: a reading held or interpolated over N clock samples is used
 *                   N times by the filter (the paper configs' IMU "times 10" at 100 Hz on a 1 kHz clock).
 *                   With allow_no_still and no still window: the whole log's third differences / 20 instead.
 *   q_tau_m         from the motor torque's increments: D(L) = mean((x_(k+L) - x_k)^2) of x = k_t R i (per joint,
 *                   k_t and the signed R from the stage's params) over every sample, L = 1 .. max_lag, fitted by
 *                   least squares as D(L) = c + a L^2: a smooth torque's increment grows with L, the current
 *                   noise adds c = 2 (k_t R)^2 r_current at every lag (reported beside the still-window value),
 *                   so a is the increment's variance per step without the noise (a <= 1e-6 c: no motion seen, a
 *                   = 1e-6 c). Then q = (4 a)^(2/3) R^(1/3), R = (k_t R)^2 r_current: a random walk of variance q
 *                   per step measured with noise R (q << R) has the gain sqrt(q / R); a ramp of a^(1/2) per step
 *                   leaves it a^(1/2) sqrt(R / q) behind and the noise adds sqrt(q R) / 2 of variance; that q
 *                   minimizes their sum. (q = a, the per-step increment, lets a smooth signal run away from the
 *                   filter: the hip pitch and the FT moments lagged; the truth-tuned values are 3-10x a.)
 *   q_ft            the same on each FT element, R = r_ft.
 *   q_tau_f         q_tau_m: the friction's own increments are not observable without truth (a friction input is
 *                   a model's smooth output).
 *   r_friction      (friction input wired) the friction measurement's error variance: the pipeline is run again
 *                   with the tuned variances and the friction input unwired, so the UKF estimates tau_F from
 *                   the currents, FT sensors and dynamics alone; then per joint mean((f - tau_F)^2) - mean(P_FF)
 *                   over the samples settle s after each log's clock start: the residual of the friction
 *                   input f against the UKF's own estimate, minus the estimate's variance (P_FF, the `var`
 *                   output), taking the two errors as independent. Floored at 1e-2 mean((f - tau_F)^2).
 * Everything else (q_dq, q_contact, r_dq, p0_*, ...) is kept. Values are rounded to 3 significant digits.
 * Messages name the pipeline, the stage and the log.
 */
typedef struct rb_ukft_tune_opts {
    const char *stage;     /* the ukf_torque stage's id; NULL: the pipeline's only one */
    double still_velocity; /* rad/s, default 0.05 */
    double still_range;    /* rad, default 0.01 */
    double still_duration; /* s, default 0.2 */
    size_t max_lag;        /* clock steps, >= 2, default 30 */
    double settle;         /* s, default 0.5 */
    bool allow_no_still;   /* no still window: whole-log third differences (default false: RB_EINPUT) */
} rb_ukft_tune_opts;

void rb_ukft_tune_opts_init(rb_ukft_tune_opts *o);

/* One tuned parameter: its values (the stage's per-element layout) and the statistic they came from. */
typedef struct rb_ukft_tune_param {
    const char *name; /* the stage parameter, e.g. "q_tau_m" */
    size_t count;
    double *values;
    char *why; /* one line: the statistic (with its numbers) the values came from */
} rb_ukft_tune_param;

typedef struct rb_ukft_tune_result {
    char *stage_id;
    size_t n_joints;
    char **joints; /* borrowed from the pipeline model until free */
    double dt;     /* the clock period of the first log, s */
    size_t n_logs;
    size_t n_still_windows, n_still_samples;
    size_t n_params;
    rb_ukft_tune_param params[8];
    size_t n_kept;
    char **kept; /* the ukf_torque params left as they were */
    void *doc;   /* the input pipeline (cJSON) with the tuned params in place */
    char *pipeline_path;
} rb_ukft_tune_result;

/* Tune the ukf_torque stage of the pipeline file `pipeline` on n_logs logs (each its own session). RB_ENOTFOUND
 * (files, channels), RB_ECONFIG (a bad pipeline, no or several ukf_torque stages), RB_EINPUT (no still window:
 * the message names the thresholds to relax; a log), RB_ENUMERIC, RB_ENOMEM. The caller frees *out with
 * rb_ukft_tune_result_free. */
int rb_ukft_tune(const char *pipeline, const rb_registry *reg, const char *const *logs, size_t n_logs,
                 const rb_ukft_tune_opts *o, rb_ukft_tune_result **out, rb_err *err);
/* Write the tuned pipeline to `path` (write-then-rename; an existing file only with overwrite, the input pipeline
 * never): the input's JSON with the stage's params replaced and its relative paths (model.urdf, logs,
 * friction_pinn.network, slip_predictor.thresholds_file) rewritten to resolve from path's folder. RB_EEXISTS,
 * RB_EIO, RB_ENOMEM. */
int rb_ukft_tune_write(const rb_ukft_tune_result *r, const char *path, bool overwrite, rb_err *err);
void rb_ukft_tune_result_free(rb_ukft_tune_result *r);

RB_API_END

#endif
