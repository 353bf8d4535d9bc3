/*
 * roboest experiments: what is run over many logs, seeds or configurations and judged as a whole.
 *   - comparison suites (`roboest compare`): every estimator variant on every log, scored against a
 *     reference channel, summarized across logs with bootstrap intervals, with figures;
 *   - CI rules over a comparison report (`roboest check`);
 *   - the closed loop (`roboest closed-loop`): estimator pipelines stepped inside the simulator's torque
 *     loop, the joint-torque paper's Tables I and II.
 * Every run reads shared immutable data and writes its own slot on a pool of threads; tables and figures are
 * made afterwards in a fixed order, so the bytes written do not depend on the thread count.
 */
#ifndef ROBOEST_EXPERIMENTS_H
#define ROBOEST_EXPERIMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roboest/core.h"
#include "roboest/metrics.h"
#include "roboest/pipeline.h"
#include "roboest/sim.h"

RB_API_BEGIN

/* ==== comparison suites (suite.c, suite_run.c) =====================================================================
 * A suite runs every (variant, log) pair: each variant is a pipeline file and the signal in it that holds the
 * estimate; every estimate is scored against one reference channel of the log, which the suite resamples onto
 * each run's clock itself (the pipelines need not bind it). Suite file (JSON; unknown or duplicated keys are
 * errors with suggestions; relative paths resolve against the suite file's folder):
 *
 *   name        string, optional (default: the file's stem): the report's title.
 *   variants    array, required, non-empty: {"name": [A-Za-z_][A-Za-z0-9_-]* unique (required), "pipeline":
 *               path (required; loaded and validated like `roboest run`'s), "estimate": a signal of that
 *               pipeline (required; bound or a stage output), "window": a time window (config.h rb_window;
 *               optional: this variant's statistics over its own window instead of the suite's)}. The pipeline's own "logs", "outputs",
 *               "metrics" and "reports" are ignored.
 *   logs        array, required, non-empty: paths, or arrays of paths forming one session; logs are named
 *               by the stem of their first file, which must be unique.
 *   reference   required: a channel name, or {"channel": name (required), "interp": "linear" | "hold"
 *               (default "linear")}. Simulated logs: e.g. "truth/joints/torques"; real logs: the desired
 *               torques, which turns the table into tracking errors.
 *   reference_log  optional: the reference channel is read from a separate file per log, a path template or
 *               {"path", "time_offset"} (roboest/pipeline.h rb_reference_log; the interpolation is
 *               reference.interp); clock samples it does not cover are not scored and counted in a warning.
 *   joints      array of element names, optional (default: every element of the reference channel, in its
 *               order): the joints scored, looked up by name in the reference channel and in each estimate.
 *               An estimate whose element names are the default "0", "1", ... is matched by position
 *               instead (it must then have as many elements as the reference channel).
 *   window      a time window (config.h rb_window: [t0, t1] absolute s, or {"from_start": [t0, t1]}, s after each
 *               log's first sample), optional: the log times scored; samples outside are never read. Scoring
 *               always keeps to the part of each run's clock that the reference channel covers.
 *   settle      number >= 0, s, optional (default: the largest rb_pipeline_settle of the variants' pipelines, each
 *               at its period on the log): without a window (the suite's or the variant's) every run is scored
 *               from its clock's first sample + settle (the filters' start-up excluded; the provenance's "log <name>:
 *               window" says so).
 *   statistics  array, optional (default ["mse", "rmse", "mae"]): shown statistics (rb_stat_key, metrics.h):
 *               the errors mse rmse mae max_abs mean_abs_est mean_abs_ref; the estimate alone min_est max_est
 *               mean_est count_zero_est (a 0/1 flag output: min_est == 1 means set on every sample, mean_est
 *               is the fraction, count_zero_est the samples where it is not), rms_est (sqrt(mean e^2): e.g. the
 *               size of a difference of two estimates); the step response rise_time
 *               (10-90 %) step_delay (to 50 %) steps_unsettled (need "steps"); the error around events
 *               event_peak event_max (need "events"). Showing rise_time or step_delay shows steps_unsettled
 *               too (appended when not listed): an unsettled step's rise time is a pessimistic bound.
 *   steps       {"min_jump": number > 0 (required), in the reference channel's unit}: a step is a jump of the
 *               reference larger than min_jump between consecutive samples of a run's clock (use "interp":
 *               "hold" so that a square wave's jump is not split over two samples). For each step, until the
 *               next one or the window's end, the first times the estimate gets 10 %, 50 %, 90 % of the way
 *               from the reference's value before the step to its value after: rise_time = t90 - t10,
 *               step_delay = t50 - the step's time, means over the steps of the (variant, log, joint);
 *               "all": over every joint's steps. A step never taken to 90 % is counted in steps_unsettled and
 *               its missing crossings are taken at the step's end: its rise time is then the time left, a
 *               pessimistic bound, never NaN (rb_metrics_steps). Every scored joint of every log must hold a
 *               step (an error names the log and joint otherwise: list in "joints" only those that step).
 *   events      {"channel": name (required), "window": [a, b] (required, s relative to each event, a < b)}:
 *               an event is a sample of that channel (of each log) at which any element changes value (e.g.
 *               "truth/contacts_active": a contact made or broken); event_peak is the mean over the events of
 *               max |estimate - reference| over the clock samples in [t_e + a, t_e + b] clipped to the scored
 *               window (events whose interval holds no scored sample are skipped; intervals may overlap),
 *               event_max the largest; "all": per event the max over the joints. A log without the channel,
 *               or without an event in its scored window, is an error naming the log and the channel.
 *   published   array, optional: [{"variant": a variant's name (required), "joint": a joint (optional,
 *               default all joints pooled), "statistic": a statistic key (required; a step or event one needs
 *               "steps" / "events"), "value": finite number (required), "source": string (required, e.g.
 *               "Table II, no adaptation")}]: a paper's numbers, shown beside ours (the mean across logs) in
 *               report.md's "Published beside ours" table (source, variant, joint, statistic, paper, ours,
 *               ratio = ours / paper; %.4g) and report.json's "published" array. A joint the suite does not
 *               list in "joints" is checked against the reference channel when the suite runs.
 *   bootstrap   {"samples": integer >= 1 (default 2000), "seed": integer >= 0 (default 0), "level": number
 *               in (0, 1) (default 0.95)}: percentile bootstrap of the mean across logs (logs resampled with
 *               replacement; with one log the interval is the value itself).
 *   figures     optional: {"traces": [{"joint": name (required), "log": log name or index (required),
 *               "window": a time window (optional; default the whole run)}], "contact": {"channel":
 *               name (required), "threshold": number >= 0 (default 0)}}. A contact sample is active when
 *               any element's magnitude exceeds the threshold (e.g. "truth/pushes" of a simulated log: the
 *               contacts no sensor measures); active stretches are shaded in the traces.
 *   outputs     folder, optional: where rb_suite_result_write puts the files (the CLI's -o wins).
 *   threads     integer >= 1, optional (default: one per online core).
 *
 * Loader errors: RB_ENOTFOUND (the suite file is missing), RB_ECONFIG "<file>:<line>:<col>: <key path>:
 * <what>" (also for a variant's pipeline that is missing or invalid, with the pipeline's own message, and for
 * an estimate that is not a signal of its pipeline), RB_ENOMEM. */
typedef struct rb_suite_variant {
    char *name;
    char *pipeline_path;   /* resolved */
    char *estimate;        /* signal name in the pipeline */
    rb_pipeline *pipeline; /* loaded (owned); the estimate signal is marked recorded */
    bool has_window;       /* the variant's own window (its "window"); false: the suite's */
    rb_window window;
} rb_suite_variant;

typedef struct rb_suite_trace {
    char *joint;
    size_t log; /* index into rb_suite.logs */
    bool has_window;
    rb_window window; /* [-INFINITY, INFINITY] without a window */
} rb_suite_trace;

typedef struct rb_suite_published {
    size_t variant; /* index into rb_suite.variants */
    char *joint;    /* NULL: all joints pooled */
    size_t stat;    /* rb_stat_key index */
    double value;
    char *source;
} rb_suite_published;

typedef struct rb_suite {
    char *name, *path, *sha256; /* name, file as given, SHA-256 of its text */
    size_t n_variants;
    rb_suite_variant *variants;
    size_t n_logs;
    rb_cfg_session *logs; /* paths resolved */
    char **log_names;     /* n_logs stems */
    char *reference;      /* channel */
    rb_interp reference_interp;
    rb_reference_log reference_log; /* "reference_log": path NULL when the reference is in each log */
    size_t n_joints;                /* 0: every element of the reference channel */
    char **joints;
    bool has_window;
    rb_window window; /* [-INFINITY, INFINITY] without a window */
    bool has_settle;  /* "settle" given; else the variants' pipelines' largest (rb_suite_settle) */
    double settle;
    size_t n_stats;
    size_t stats[RB_N_STATS]; /* shown statistics (rb_stat_key indices) */
    rb_bootstrap bootstrap;
    size_t n_traces;
    rb_suite_trace *traces;
    char *contact_channel; /* NULL: no shading */
    double contact_threshold;
    char *outputs;        /* resolved folder; NULL when not given */
    size_t threads;       /* 0: one per online core */
    double step_min_jump; /* > 0: the step statistics are computed ("steps"); 0: not */
    char *events_channel; /* NULL: no event statistics */
    double events_a, events_b;
    size_t n_published;
    rb_suite_published *published;
    size_t n_labels, n_reference_labels; /* "confusion": n_labels > 0 */
    char **labels, **reference_labels;
    char *confusion_where; /* NULL: every sample */
} rb_suite;

/* Load and validate a suite and every variant's pipeline (caller frees with rb_suite_free). */
int rb_suite_load(const char *path, const rb_registry *reg, rb_suite **out, rb_err *err);
int rb_suite_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                       const rb_registry *reg, rb_suite **out, rb_err *err);
void rb_suite_free(rb_suite *s);

typedef struct rb_suite_pair rb_suite_pair; /* one run's result (below) */

typedef struct rb_suite_opts {
    size_t threads; /* 0: the suite's "threads", else one per online core; never more than the pairs */
    /* Called after each finished pair with the pairs done and the total, from the worker threads but never
     * two at a time. Non-zero cancels (as rb_run_opts.progress). May be NULL. */
    int (*progress)(void *user, size_t done, size_t total);
    void *user;
    /* bytes; > 0: each (variant, log) run in windows (rb_pipeline_run_windowed), the same numbers, and the suite's own
     * channels read in parts. The limit is the process's, not a run's: a runner's part is memory_limit / memory_parts;
     * from it go first what the runner's job holds whole beside the runs (logs of layouts that cannot be read in parts,
     * a figure's trace of the reference, reference_log files: over the part, RB_EINPUT before any run, naming the
     * log), and the rest is shared equally by the runs at once (threads, capped at the runs): each run in windows
     * within its share, a run that needs more whole failing as it starts (RB_EINPUT, its message naming the share). */
    size_t memory_limit;
    size_t
        memory_parts; /* 0 or 1: this runner alone; N: one of N runners of the process at once (threads of their own) */
} rb_suite_opts;

typedef struct rb_suite_figure {
    char *name; /* file name: rmse_box.svg, magnitude_box.svg, trace_<log>_<joint>_<i>.svg (i: the trace's
                   index in figures.traces; characters other than [A-Za-z0-9_.-] become '_') */
    char *svg;
} rb_suite_figure;

typedef struct rb_suite_result {
    rb_comparison *table; /* summarized; provenance: roboest version, suite file and SHA-256, each
                                    variant's pipeline SHA-256, each log's files and SHA-256 */
    size_t n_figures;
    rb_suite_figure *figures;
    size_t n_warnings;
    char **warnings;           /* one line each (gaps, held samples), in pair order, repeats dropped */
    size_t n_pairs, n_samples; /* runs made, clock samples over all runs */
} rb_suite_result;

/* Read the logs on a pool of threads (one log per task; HDF5-based files take turns under HDF5's own lock
 * only for metadata and stored chunk bytes: the readers decompress our writers' chunks outside it), check in
 * log order that each has the reference channel with every joint (and the contact channel), then run the
 * (variant, log) pairs on the pool (a shared work queue; each pair reads only shared immutable data and writes
 * only its own slot), score each estimate, then summarize (with the bootstrap) and draw each figure as
 * separate pool tasks into fixed slots: the result does not depend on the thread count or timing. The first
 * failing log, then the first failing pair in (variant, log) order, then the table before the figures in
 * their order decides the error,
 * whatever the timing: a pair's
 * message starts with "variant <name>: " and names the log. Errors: those of rb_log_read / rb_log_append
 * (prefixed with the log path), RB_ENOTFOUND (reference, contact or events channel, joint, estimate element, a
 * published value's joint), RB_EINPUT (the reference covers no part of a run's clock; with "steps" a scored joint
 * without a step, with "events" a log without an event in its scored window), RB_EDIM, RB_ENUMERIC (a non-finite estimate in
 * the scored window), rb_pipeline_run_log's errors, RB_ENOMEM. The calling thread works too; a thread that
 * cannot start only lowers the parallelism. */
int rb_suite_run(const rb_suite *s, const rb_suite_opts *opts, rb_suite_result **out, rb_err *err);
void rb_suite_result_free(rb_suite_result *r);
/* report.md, report.json, report.csv and every figure into dir (created if missing, one level), all or
 * nothing: every file goes to a temporary first and all are renamed only when all were written.
 * RB_EEXISTS (a target exists and !overwrite, before anything is written), RB_EIO, RB_ENOMEM. */
int rb_suite_result_write(const rb_suite_result *r, const char *dir, bool overwrite, rb_err *err);

/* ---- a suite's runs as data: resumable, sharded and distributed suites (suite_store.c, suite_run.c,
 * suite_report.c) ----
 * Run i = v * n_logs + l (variant v on log l) leaves an rb_suite_pair: its statistics (not its samples), the facts
 * of the log the report shows, its warnings and its figure traces. The report is made from these alone
 * (rb_suite_report), so a report from runs made elsewhere (in other processes, stored, sent) has the same bytes as
 * rb_suite_run's, which goes through the byte form too.
 *
 * Byte form (version 1): "RBSUITE\x1a", u32 version, the key (64 hex characters), the fields (u64 counts and
 * lengths, doubles as their IEEE-754 bits, all little-endian; strings as length + 1 then the bytes, 0 for none),
 * then the SHA-256 of everything before it (32 bytes). */
void rb_suite_pair_free(rb_suite_pair *r);
/* The run's key (borrowed). */
const char *rb_suite_pair_key_of(const rb_suite_pair *r);
/* *bytes (caller frees with rb_free), *len. RB_ENOMEM. */
int rb_suite_pair_encode(const rb_suite_pair *r, unsigned char **bytes, size_t *len, rb_err *err);
/* The run in bytes (what names them in messages; caller frees *out with rb_suite_pair_free). RB_EINPUT "<what>: ..."
 * for anything but a whole, unaltered version-1 result: another file, truncated, corrupt (checksum), another
 * version, malformed; RB_ENOMEM. */
int rb_suite_pair_decode(const unsigned char *bytes, size_t len, const char *what, rb_suite_pair **out, rb_err *err);

/* The key of every run (n_variants x n_logs, variant-major; 64 hex characters each): the SHA-256 over the variant's
 * pipeline (resolved configuration, text, URDF bytes), estimate and window, the log's paths and bytes (and its
 * reference_log file's), and every setting of the suite a run's result depends on (reference, joints or the first
 * log that names them, window, settle, steps, events, contact, confusion, the log's traces; without a window and a
 * settle, every variant's pipeline: the start-up skipped is the largest of theirs). Reads every log file.
 * The readers' errors naming the file, RB_ENOMEM. */
int rb_suite_keys(const rb_suite *s, char (*keys)[65], rb_err *err);
/* dir/<key>.rbres: the stored run (*out, rb_suite_pair_free). RB_ENOTFOUND when there is none; RB_EINPUT naming the
 * file when it is not that run's whole result (rb_suite_pair_decode's, or "the result of another run"). */
int rb_suite_store_load(const char *dir, const char *key, rb_suite_pair **out, rb_err *err);
/* r into dir/<key>.rbres (dir must exist), through a temporary renamed into place. RB_EIO, RB_ENOMEM. */
int rb_suite_store_save(const char *dir, const rb_suite_pair *r, rb_err *err);

/* A runner makes runs of a suite in any order and any subset (a shard, a rank's share): the logs a call needs are
 * read on its pool, as rb_suite_run does, and freed before it returns. A suite without "joints" takes them from
 * the first log, which the runner then reads once (and keeps the names). Caller frees with rb_suite_runner_free. */
typedef struct rb_suite_runner rb_suite_runner;
int rb_suite_runner_new(const rb_suite *s, const rb_suite_opts *opts, rb_suite_runner **out, rb_err *err);
/* Runs items[0..n) (run indices, any order, no repeats) into runs[k] (caller frees each with rb_suite_pair_free; all
 * NULL on failure). Errors as rb_suite_run's, the first failing log, then the first failing item in the order
 * given. */
int rb_suite_runner_run(rb_suite_runner *r, const size_t *items, size_t n, rb_suite_pair **runs, rb_err *err);
void rb_suite_runner_free(rb_suite_runner *r);
/* A finished run's hook: fn(user, item, pair) for each run rb_suite_runner_run finishes (item: its run index; pair
 * borrowed until fn returns), from the worker threads, possibly two at a time; e.g. to store it at once. An error
 * fails the run. fn NULL: none. */
typedef int (*rb_suite_finished_fn)(void *user, size_t item, const rb_suite_pair *pair, rb_err *err);
void rb_suite_runner_on_finished(rb_suite_runner *r, rb_suite_finished_fn fn, void *user);
/* The table and figures from every run (n_variants x n_logs, variant-major; borrowed), on opts' pool. RB_EINPUT
 * when the runs do not score the same joints (runs of different suites), rb_suite_run's table and figure
 * errors, RB_ENOMEM. */
int rb_suite_report(const rb_suite *s, const rb_suite_opts *opts, rb_suite_pair *const *runs, rb_suite_result **out,
                    rb_err *err);

/* ---- rules over a comparison report, for CI (check.c) ----
 * A rule compares two operands:  OPERAND OP OPERAND  with OP one of < <= > >=; an operand is a number or
 * VARIANT.STAT[JOINT].FIELD where [JOINT] (a joint of the report; default: all joints pooled) and .FIELD
 * (mean (default), sd, lo, hi, min or max of the summary across logs, or the name of one of the report's logs: its
 * value on that log) are optional. Blanks between tokens
 * are ignored. Examples: "ukf_pinn.rmse < rnea.rmse", "ukf_pinn.rmse < 1.2", "ukf.mae[r_knee].hi <= 0.5".
 * Either side may be two operands joined by '*' or '/' (one level, no parentheses): "kf.rmse[torso] <= 0.1 * 5",
 * "noadapt.rmse / adapt.rmse >= 2.0"; a side that is not finite (a division by zero) makes the rule fail, its
 * message saying so. */
typedef struct rb_rule_result {
    char *rule;  /* the rule's text, trimmed */
    char *where; /* where it came from ("rules.txt:3", "--rule 1") */
    bool passed;
    double left, right;
    char *message; /* "ukf.rmse = 1.3 is not < rnea.rmse = 1.1" (failed) or "... < ..." (passed) */
} rb_rule_result;

typedef struct rb_check {
    size_t n_rules, n_failed;
    rb_rule_result *rules;
} rb_check;

/* Parse a comparison report (rb_comparison_render's JSON) and evaluate each rule in order. A bad rule stops
 * the check: RB_ECONFIG "<where>: '<rule>': <what>" for a syntax error (naming the column) or an unknown
 * variant, statistic or joint (with the closest name as a suggestion); RB_EINPUT "<report_name>: ..." for a
 * report that is not such JSON; RB_ENOMEM. A rule that does not hold is no error: (*out)->n_failed counts
 * them. Caller frees with rb_check_free. */
int rb_check_rules(const char *report_json, size_t len, const char *report_name, const char *const *rules,
                   const char *const *wheres, size_t n_rules, rb_check **out, rb_err *err);
void rb_check_free(rb_check *c);
/* Rules from a file: one per line, '#' starts a comment, blank lines skipped; wheres are "<path>:<line>".
 * Caller frees both arrays with rb_rules_free. RB_ENOTFOUND, RB_EINPUT (unreadable), RB_ECONFIG (no rule),
 * RB_ENOMEM. */
int rb_rules_read(const char *path, char ***rules, char ***wheres, size_t *n, rb_err *err);
void rb_rules_free(char **rules, char **wheres, size_t n);
/* JUnit XML: <testsuites> holding one <testsuite name tests failures errors="0"> with one <testcase
 * classname="roboest.check" name="<rule>"> per rule, a failing one holding <failure message="...">. Caller
 * frees *xml with rb_free. */
int rb_check_junit(const rb_check *c, const char *suite_name, char **xml, rb_err *err);

/* ==== the closed loop: estimators inside the simulator's torque loop (closed_loop.c, closed_loop_run.c) ========
 * The joint-torque paper's Tables I and II (../shared/seeds, section IV-C): the low-level torque controller of a
 * simulated robot (rb_sim RB_CTRL_TORQUE: inverse-dynamics feedforward tau_ref, PI on the torque error, friction
 * compensation) gets its torque feedback and its friction compensation from an estimator pipeline stepped inside
 * the loop (rb_stream over the channels rb_scenario_run measures), one configuration at a time:
 *     tau_m_des = tau_ref + R^2 J_m s_ddot_cmd + kp_tau e + ki_tau int e [+ tau_F_hat],  e = tau_ref - tau_hat
 * with tau_hat, tau_F_hat of sample k used at sample k + 1 (one control period of delay, as on the robot).
 * Every configuration runs the same scenario with the same seeds (same sensor noise, pushes); scores:
 *   torque tracking  tau_j (true joint torque) against tau_ref (the controller's desired joint torque) on the
 *                    scored joints over [settle, end]: MSE, RMSE, MAE, max |e|, mean |tau_j| (mean_abs_est, the
 *                    paper's Fig. 7 "torque magnitude"), per joint and pooled;
 *   CoM              the plant's CoM against the balance reference c_ref(t) per axis x, y, z over
 *                    [settle, disturbances_from) (Table I: before the disturbances; mean |e| = mae, max |e| =
 *                    max_abs) and over [settle, end];
 *   estimation       the estimate tau_hat against tau_j over [settle, end] (configurations with feedback), and
 *                    the compensation tau_F_hat against the true friction tau_F (configurations with compensation).
 * A run whose CoM leaves the reference by more than max_com_error, whose scored joint's drive stays at its current
 * limit longer than max_saturation, or whose simulation fails numerically, has diverged (status.cause says which):
 * it stops there, its scores cover what ran, and the report says when and why (the paper's RNEA-PINN
 * "necessitating early termination"). Seeds are the "logs" of the comparison tables (mean, sd, bootstrap).
 *
 * Configuration file (JSON; paths relative to it):
 *   name               string, optional (default: the file stem)
 *   scenario           path of a scenario file (rb_scenario_load) with controller kind "torque" and balance
 *   joints             [joint names], optional: torque tracking is scored on them (default: every joint)
 *   settle             s >= 0, default 0.5: the start every score ignores
 *   disturbances_from  s > settle, optional (default: the first push's start, else the end): Table I's window end
 *   max_com_error      m > 0, default 0.1: divergence threshold (max over the axes of |c - c_ref|)
 *   max_saturation     s >= 0, default 0.5 (0: off): a run also diverges when a scored joint's commanded motor current
 *                      is beyond its actuator's i_max for more than this long within the trailing saturation_window,
 *                      counted from settle on (configs/closed_loop/README.md, "Divergence by drive saturation")
 *   saturation_window  s > 0, >= max_saturation, default 1
 *   seeds              [integers >= 0], optional (default: [the scenario's seed]): one run per seed and
 *                      configuration
 *   threads            integer >= 1, optional (default: one per online core)
 *   mismatch_levels    [numbers >= 0, increasing], optional, needs the scenario's "mismatch": the experiment at
 *                      every level of it (rb_closed_loop_sweep)
 *   disturbance_scales [numbers > 0, increasing], optional: the experiment at every scale of the pushes' forces
 *   bootstrap          {samples, seed, level} over the seeds, as in comparison suites
 *   configurations     [{name (letters, digits, '_', '-'), label (optional, the table's row name; default
 *                      name), pipeline (path, optional), feedback (a signal of the pipeline: the torque
 *                      estimate, optional), torque_sensor (true: the feedback is the true joint torque, an
 *                      ideal joint torque sensor: a reference row; not with feedback), compensation (a
 *                      signal of the pipeline: the friction estimate, optional)}]: without feedback or
 *                      torque_sensor the loop is feedforward (no PI term), without
 *                      compensation nothing is added; feedback or compensation need a pipeline; the signals'
 *                      element names are joint names of the scenario's model (joints the signal lacks get no
 *                      feedback / compensation). The pipeline's clock rate, when it has one, must be 1 / the
 *                      scenario's dt: it is stepped every control period. inertia (a signal of the pipeline,
 *                      optional: inertial-parameter estimates, elements "<body>/<p>" with p one of m hx hy hz Ixx
 *                      Ixy Ixz Iyy Iyz Izz, e.g. the inertial_ekf stage's rate-limited "pi"): the controller's
 *                      model takes each body's estimate (rb_sim_set_model_inertia) one control period later, as
 *                      the torque feedback; a body whose ten values are not all finite and physically valid
 *                      (rb_inertia_is_physical) at a sample keeps its previous parameters (seed 001, Table II).
 *                      Or {"signal": name, "body": link}: a signal of one body's ten parameters, elements m hx hy
 *                      hz Ixx Ixy Ixz Iyy Iyz Izz (e.g. the simulator's truth/payload/<body>: an oracle).
 *   task               {"name": string (required: the table's title, e.g. "elbow angle (rad)"), "actual":
 *                      {"channel", "element"}, "reference": {"channel", "element"}} (both required; channels of
 *                      the scenario's log, e.g. truth/joints/positions and truth/joints/references with the
 *                      element "l_elbow"), optional: a task-tracking table (task.{md,json,csv}: actual against
 *                      reference over [settle, end], MSE RMSE MAE max |e|) for every configuration; the values
 *                      are the channels' newest rows at each control period (held between their samples).
 *   published          [{"configuration": name, "statistic": "mse" | "rmse" | "mae" | "max_abs", "value": number
 *                      (finite), "source": string}], optional, needs a task: a publication's task-tracking value
 *                      shown beside ours in task.md / task.json ("Published beside ours", rb_comparison_add_published:
 *                      the paper's value, ours, ratio ours / paper).
 * Errors: RB_ENOTFOUND (the file), RB_ECONFIG "<file>:<line>:<col>: <key path>: <what>" (also for a scenario or
 * pipeline that fails to load, with its own message), RB_ENOMEM. */
typedef struct rb_closed_loop_config {
    char *name, *label;
    char *pipeline_path;   /* resolved, NULL: none */
    rb_pipeline *pipeline; /* loaded (owned), NULL: none */
    char *feedback;        /* signal name, NULL: feedforward (or the torque sensor) */
    bool torque_sensor;    /* feedback from the true joint torque (an ideal joint torque sensor, RB_TFB_TRUTH) */
    char *compensation;    /* signal name, NULL: no friction compensation */
    char *inertia;         /* signal name, NULL: the controller keeps the nominal inertial parameters */
    char *inertia_body;    /* NULL: the signal's elements name their bodies; else the one body its m..Izz are of */
} rb_closed_loop_config;

/* A task scored by the closed loop: one element of a logged channel against one element of another. */
typedef struct rb_closed_loop_task {
    char *name;                            /* NULL: no task */
    char *actual_channel, *actual_element; /* e.g. truth/joints/positions, l_elbow */
    char *reference_channel, *reference_element;
} rb_closed_loop_task;

typedef struct rb_closed_loop {
    char *name, *path, *sha256; /* name, file as given, SHA-256 of its text */
    rb_scenario *scenario;      /* loaded (owned) */
    size_t n_joints;
    char **joints;     /* scored joints */
    size_t *joint_dof; /* their joint indices in the scenario's model (0 .. n_dofs-1) */
    double settle, disturbances_from, max_com_error;
    double max_saturation, saturation_window; /* s; max_saturation 0: no saturation test */
    size_t n_seeds;
    uint64_t *seeds;
    size_t threads; /* 0: one per online core */
    rb_bootstrap bootstrap;
    size_t n_levels, n_scales;
    double *levels; /* mismatch_levels (NULL: the scenario's own level only) */
    double *scales; /* disturbance_scales (NULL: 1 only) */
    size_t n_configs;
    rb_closed_loop_config *configs;
    rb_closed_loop_task task;
    size_t n_published;
    struct rb_closed_loop_published {
        size_t config, stat; /* configuration index, rb_stat_key index */
        double value;
        char *source;
    } * published; /* the task's published values, in file order */
} rb_closed_loop;

int rb_closed_loop_load(const char *path, const rb_registry *reg, rb_closed_loop **out, rb_err *err);
int rb_closed_loop_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                             const rb_registry *reg, rb_closed_loop **out, rb_err *err);
void rb_closed_loop_free(rb_closed_loop *cl);

typedef struct rb_closed_loop_opts {
    size_t threads; /* 0: the file's "threads", else one per online core */
    /* After each finished run (configuration x seed) with runs done / total, never two at a time; non-zero
     * cancels. May be NULL. */
    int (*progress)(void *user, size_t done, size_t total);
    void *user;
} rb_closed_loop_opts;

/* Why a run diverged. */
typedef enum rb_cl_divergence {
    RB_CL_STABLE = 0,     /* completed */
    RB_CL_DIV_NUMERIC,    /* the simulation or the estimator failed numerically */
    RB_CL_DIV_COM,        /* the CoM left its reference by more than max_com_error */
    RB_CL_DIV_SATURATION, /* a drive at its current limit longer than max_saturation within saturation_window */
} rb_cl_divergence;

/* "completed", "numeric", "CoM", "saturation" */
const char *rb_cl_divergence_name(rb_cl_divergence d);

typedef struct rb_closed_loop_status {
    bool diverged;
    rb_cl_divergence cause;
    double t_end; /* s: the end of the run (the scenario's duration, or where it diverged) */
    char *why;    /* diverged: one line ("CoM error 0.12 m > max_com_error at t = 6.2 s", or the sim's error) */
} rb_closed_loop_status;

typedef struct rb_closed_loop_result {
    rb_comparison *torque; /* tracking: variants = configurations, logs = "seed_<s>", joints = scored */
    /* tracking as a robot without joint torque sensors measures it (the paper's Table II, a [choice]): the loop's own
     * estimate tau_hat against tau_ref; variants = configurations with feedback; NULL if none */
    rb_comparison *torque_loop;
    rb_comparison *com_before;     /* CoM, joints = x, y, z, over [settle, disturbances_from) */
    rb_comparison *com_all;        /* CoM over [settle, end] */
    rb_comparison *estimation;     /* tau_hat vs tau_j; variants = configurations with feedback; NULL if none */
    rb_comparison *friction;       /* tau_F_hat vs tau_F; variants = configurations with compensation; NULL if none */
    rb_comparison *task;           /* the task's actual against its reference; NULL without a task */
    size_t n_runs;                 /* n_configs x n_seeds */
    rb_closed_loop_status *status; /* n_runs, configuration-major */
    size_t n_figures;
    rb_suite_figure *figures; /* rmse_box.svg, magnitude_box.svg, com_y.svg (first seed, pushes shaded) */
    size_t n_steps;           /* simulation steps over all runs (as scheduled; diverged runs stop earlier) */
    /* The sweep over mismatch_levels x disturbance_scales (closed_loop_sweep.c), NULL without those keys: per point
     * (level-major) and configuration, the torque RMSE (mean over the seeds of the pooled RMSE, of what ran),
     * the diverged runs and the earliest divergence (s, NAN: none). The tables and figures above are the point
     * at the scenario's own level (the last level when it is not listed) and scale 1 (the nearest). */
    struct rb_closed_loop_sweep {
        size_t n_levels, n_scales, n_configs, main; /* main: the point the tables above show */
        double *levels, *scales;                    /* copies */
        double *rmse;                               /* n_levels x n_scales x n_configs */
        double *rmse_loop;        /* the same, tau_hat against tau_ref (torque_loop; NAN without feedback) */
        size_t *diverged;         /* the same, runs (of n_seeds) */
        double *first_divergence; /* the same, s */
        size_t n_seeds;
        /* per run: n_levels x n_scales x n_configs x n_seeds (seed fastest): why it diverged (RB_CL_STABLE: it did
         * not), and where it ended (s) */
        unsigned char *cause;
        double *t_end;
    } * sweep;
} rb_closed_loop_result;

/* Run every (configuration, seed) on a pool of threads; each run reads only shared immutable data and writes
 * its own slot, and the tables and figures are made afterwards in a fixed order: the result does not depend on
 * the thread count. The lowest failing run decides the error ("configuration <name>: seed <s>: ..."); a
 * divergence is not an error. Errors: rb_scenario_run's and rb_stream's (set-up), a scored window without
 * samples (RB_EINPUT), RB_ENOMEM. */
int rb_closed_loop_run(const rb_closed_loop *cl, const rb_closed_loop_opts *opts, rb_closed_loop_result **out,
                       rb_err *err);
/* With mismatch_levels or disturbance_scales: rb_closed_loop_run at every level x scale (the scenario's mismatch
 * level set to the level, every push's and random push's or contact's force multiplied by the scale), the sweep's
 * summary in (*out)->sweep and the full tables of the main point; without them, rb_closed_loop_run. Progress counts
 * the runs of every point. Errors: rb_closed_loop_run's, with the point as prefix. */
int rb_closed_loop_sweep(const rb_closed_loop *cl, const rb_closed_loop_opts *opts, rb_closed_loop_result **out,
                         rb_err *err);
/* The sweep's stability table (per configuration, point: diverged / runs, earliest divergence) and sensitivity
 * table (per level at the main scale: RMSE per configuration, the paper's Table II ratios RNEA / UKF-PINN, UKF /
 * UKF-PINN, RNEA-PINN / RNEA when the configurations rnea, ukf, rnea_pinn, ukf_pinn exist, divergences) as
 * Markdown; stability.json (a comparison report `roboest check` reads: variants = configurations, joints = the
 * points "level_<l>_scale_<s>", statistics diverged, diverged_fraction, rmse, rmse_loop, and the ratios as variants
 * "ratio_rnea_ukf_pinn", "ratio_ukf_ukf_pinn", "ratio_rnea_pinn_rnea" with statistic "ratio" (against the truth)
 * and the same names with "_loop" appended (the loop's own estimate against tau_ref, the paper's reading));
 * sensitivity.svg (both readings' ratios against the level; needs two levels, else NULL). New strings (rb_free). RB_ENOMEM. */
int rb_closed_loop_sweep_render(const rb_closed_loop *cl, const rb_closed_loop_result *r, char **md, char **json,
                                char **svg, rb_err *err);
void rb_closed_loop_result_free(rb_closed_loop_result *r);
/* The paper's layout as Markdown (Table I: CoM mean and max error per axis in mm before the disturbances;
 * Table II: torque tracking MSE, RMSE, MAE; then the estimation error, the CoM over the whole run, the status of
 * every run), a new string (rb_free). RB_ENOMEM. */
int rb_closed_loop_markdown(const rb_closed_loop *cl, const rb_closed_loop_result *r, char **text, rb_err *err);
/* Into dir (created if missing, one level), all or nothing: report.md (rb_closed_loop_markdown), torque.{md,json,
 * csv}, torque_loop.* (when some configuration has feedback), com_before.*, com_all.*, estimation.*, friction.*, task.* (each rb_comparison_render, the last three only
 * when some configuration has feedback / compensation, or the file a task; `roboest check` reads the .json) and
 * the figures. RB_EEXISTS (a target exists and !overwrite, before anything is written), RB_EIO, RB_ENOMEM. */
int rb_closed_loop_write(const rb_closed_loop *cl, const rb_closed_loop_result *r, const char *dir, bool overwrite,
                         rb_err *err);

/* ==== the scale validation of thrust estimates (thrust_validation.c, thrust_validation_run.c) ====================
 * Seed 004 (momentum-based thrust EKF, iRonCub), section V-B: a jet humanoid stands on two weighing scales while its
 * jets thrust; each estimator variant gives the vertical support the feet should carry, W_jets . e3 = (m g e3 - A(q)
 * T) . e3 (N, eq. 9), as a signal of its pipeline; the scales (kg) measure it:
 *     E_T(t) = g (sum of the scales' readings at t - alpha (T_s(t) - T_s0)) - support(t)
 * with the scales' temperature drift W_scale(T_s) = W + alpha (T_s - T_s0) estimated from two jets-off windows (the
 * start and the end of the run): alpha = (W_1 - W_0) / (T_1 - T_0), W_i and T_i the mean summed reading and the mean
 * temperature over window i, and T_s0 = T_0. The acceptance is max |E_T| < min(bound.N, bound.percent % of m g)
 * (the paper: 35 N and 7 %; only both binding above about 51 kg, PAPERS.md 0.6).
 *
 * Configuration file (JSON; unknown or duplicated keys are errors with suggestions; relative paths resolve against
 * the file's folder):
 *   name         string, optional (default: the file's stem): the report's title.
 *   log          required: a path, or an array of paths forming one session (as a suite's logs); its stem names it.
 *   variants     array, required, non-empty: {"name": [A-Za-z_][A-Za-z0-9_-]* unique (required), "pipeline": path
 *                (required, loaded like `roboest run`'s), "support": a signal of that pipeline with one element (the
 *                vertical support W_jets . e3, N; required)}. The pipeline's "logs", "outputs", "metrics" and
 *                "reports" are ignored; its clock is the clock E_T is computed on.
 *   scales       array of channel names, required, non-empty: every element of every listed channel is summed (kg).
 *   temperature  {"channel": name (required), "element": name (optional; default the mean of the channel's
 *                elements)}: the scales' temperature (the paper: the feet FT sensors' temperature channels). Required
 *                unless temperature_correction is false.
 *   throttles    {"channel": name (required)}: one element per jet; every sample inside a jets-off window must be at
 *                most throttle_off_tolerance. Required with jets_off.
 *   jets_off     [[t0, t1], [t0, t1]], the start window then the end window (t0 < t1, the first ending before the
 *                second starts), each absolute s or {"from_start": [t0, t1]} (s after the log's first sample). Required unless temperature_correction is false (then optional: its
 *                means are still reported, alpha stays 0).
 *   temperature_correction  bool, optional (default true).
 *   ramp         [t0, t1] or {"from_start": [t0, t1]}, optional: the ramp phase (the paper's 100-300 s), scored
 *                separately.
 *   mass         kg > 0, required: for the bound's percent of m g.
 *   g            m/s^2 > 0, optional (default 9.81).
 *   bound        {"N": > 0 (default 35), "percent": > 0 (default 7)}, optional.
 *   throttle_off_tolerance  number >= 0, optional (default 0), in the throttle channel's unit.
 *
 * Loader errors: RB_ENOTFOUND (the file), RB_ECONFIG "<file>:<line>:<col>: <key path>: <what>" (also a variant's
 * pipeline that fails to load, with its message, and a support that is no signal of it), RB_ENOMEM. */
typedef struct rb_thrust_variant {
    char *name;
    char *pipeline_path;   /* resolved */
    char *support;         /* signal name in the pipeline (N) */
    rb_pipeline *pipeline; /* loaded (owned); the support signal is marked recorded */
} rb_thrust_variant;

typedef struct rb_thrust_validation {
    char *name, *path, *sha256; /* name, file as given, SHA-256 of its text */
    rb_cfg_session log;         /* paths resolved */
    char *log_name;             /* the stem of its first file */
    size_t n_variants;
    rb_thrust_variant *variants;
    size_t n_scales;
    char **scales;               /* channels (kg) */
    char *temperature;           /* channel, NULL: none (only without correction) */
    char *temperature_element;   /* NULL: the mean of the channel's elements */
    char *throttles;             /* channel, NULL: none (only without jets_off) */
    bool has_jets_off;           /* false only without correction */
    rb_interval jets_off[2];     /* start, end (s: absolute, or after the log's first sample) */
    bool jets_off_from_start[2]; /* that window counts from the log's first sample (resolved per run) */
    bool temperature_correction; /* default true */
    bool has_ramp;               /* false: no ramp statistics */
    rb_interval ramp;            /* s, as jets_off */
    bool ramp_from_start;
    double mass, g;                /* kg, m/s^2 */
    double bound_n, bound_percent; /* N, % of m g */
    double throttle_off_tolerance; /* the throttle channel's unit */
} rb_thrust_validation;

int rb_thrust_validation_load(const char *path, const rb_registry *reg, rb_thrust_validation **out, rb_err *err);
int rb_thrust_validation_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                                   const rb_registry *reg, rb_thrust_validation **out, rb_err *err);
void rb_thrust_validation_free(rb_thrust_validation *tv);

/* The acceptance bound min(bound_n, bound_percent / 100 m g) in N; *binds (may be NULL) says which side: "N" when
 * bound_n is the smaller, "percent" when the percent of m g is, "both" when they are equal. */
double rb_thrust_bound(double bound_n, double bound_percent, double mass, double g, const char **binds);

/* The scales' drift estimated from the jets-off windows. */
typedef struct rb_thrust_drift {
    bool corrected;         /* temperature_correction: alpha estimated; false: alpha 0 */
    bool has_windows;       /* jets_off given: the means below are set (else NaN) */
    double w0, w1;          /* mean summed scale reading over the start / end window, kg */
    double temp0, temp1;    /* mean temperature over them, the temperature channel's unit (NaN without a channel) */
    double alpha;           /* kg per temperature unit */
    rb_interval windows[2]; /* the jets-off windows in the log's time (a "from_start" one resolved) */
} rb_thrust_drift;

/* Check the log against the file and estimate the drift: every channel named (scales, temperature and its element,
 * throttles) must exist with samples; each window must lie inside every one of those channels' time spans and hold
 * a sample of each; no throttle element may exceed throttle_off_tolerance inside a jets-off window; with correction
 * the temperatures of the two windows must differ (by more than 1e-9 relative). Errors: RB_ENOTFOUND (a channel or
 * element), RB_EINPUT "jets_off[i] [t0, t1] s: jet '<element>' throttle <u> > throttle_off_tolerance <tol> at t = <t>
 * s", "... is outside the log ...", "... no temperature change between the jets-off windows ... (alpha is
 * undefined: set \"temperature_correction\": false ...)", a non-finite reading inside a window. */
int rb_thrust_drift_estimate(const rb_thrust_validation *tv, const rb_log *log, rb_thrust_drift *out, rb_err *err);

/* What one variant's run gives. Joints of the table (rb_thrust_result.table): */
enum { RB_THRUST_E_T = 0, RB_THRUST_E_T_RAMP, RB_THRUST_E_T_PERCENT, RB_THRUST_D_SUPPORT, RB_THRUST_N_ROWS };
typedef struct rb_thrust_variant_result {
    /* E_T against 0 over the clock samples the scales and the temperature cover (N): max_abs, rmse, mae, mean_est,
     * min_est, max_est; the same over the ramp (zero without a ramp); E_T as % of m g; d support / dt (N/s, finite
     * differences on the clock: rmse is the RMS, the smoothness). */
    rb_stats rows[RB_THRUST_N_ROWS];
    bool passed;     /* rows[E_T].max_abs < the bound */
    size_t n;        /* clock samples scored */
    double *t;       /* n times (s) */
    double *e_t;     /* n values of E_T (N) */
    double *support; /* n values of the support (N) */
    double *load;    /* n values of g times the corrected scale sum (N) */
} rb_thrust_variant_result;

typedef struct rb_thrust_result {
    rb_thrust_drift drift;
    rb_interval ramp;  /* the ramp in the log's time (with has_ramp) */
    double bound;      /* N */
    const char *binds; /* "N", "percent" or "both" (static) */
    size_t n_variants;
    rb_thrust_variant_result *variants;
    /* variants = the variants, logs = [the log's name], joints = "E_T", "E_T_ramp" (with a ramp), "E_T_percent",
     * "d_support"; shown: max_abs, rmse, mae, mean_est; "all" holds E_T's (so "v.max_abs < 28.4" reads the whole
     * run). Provenance: roboest version, the file and SHA-256, each variant's pipeline and SHA-256, the log's files
     * and SHA-256. */
    rb_comparison *table;
    size_t n_figures;
    rb_suite_figure *figures; /* E_T.svg (every variant), support.svg (every variant and the corrected scales),
                                 E_T_<variant>.svg per variant; the ramp shaded */
    size_t n_warnings;
    char **warnings; /* the runs' warnings (gaps, held samples), in variant order, repeats dropped */
} rb_thrust_result;

typedef struct rb_thrust_opts {
    size_t threads;                                         /* 0: one per online core */
    int (*progress)(void *user, size_t done, size_t total); /* after each variant's run, as rb_suite_opts' */
    void *user;
} rb_thrust_opts;

/* Read the log (or take `log` when not NULL: the file's log paths are then not read, the provenance says "memory"),
 * estimate the drift
 * (rb_thrust_drift_estimate), run every variant's pipeline on the log (a pool of threads; the lowest failing variant
 * decides the error, "variant <name>: ..."), compute E_T on its clock (the scales and the temperature resampled
 * linearly onto it, over the part they cover), the statistics, the table and the figures. Errors: rb_log_read's,
 * rb_thrust_drift_estimate's, rb_pipeline_run_log's, RB_EDIM (a support signal with more than one element),
 * RB_EINPUT (the scales cover no sample of a clock; a ramp holding no scored sample), RB_ENUMERIC (a non-finite
 * support or scale sample), RB_ENOMEM. */
int rb_thrust_validation_run(const rb_thrust_validation *tv, const rb_log *log, const rb_thrust_opts *opts,
                             rb_thrust_result **out, rb_err *err);
void rb_thrust_result_free(rb_thrust_result *r);
/* report.md: the drift (windows, means, alpha), the bound and which side binds, a summary table and one table per
 * variant; a new string (rb_free). RB_ENOMEM. */
int rb_thrust_validation_markdown(const rb_thrust_validation *tv, const rb_thrust_result *r, char **text, rb_err *err);
/* Into dir (created if missing, one level), all or nothing: report.md, report.json (rb_comparison_render's JSON, which
 * `roboest check` reads, with a "validation" object added: drift, bound, binds, and per variant max_abs, percent,
 * passed) and the figures. RB_EEXISTS (a target exists and !overwrite, before anything is written), RB_EIO,
 * RB_ENOMEM. */
int rb_thrust_validation_write(const rb_thrust_validation *tv, const rb_thrust_result *r, const char *dir,
                               bool overwrite, rb_err *err);

/* ==== in-situ calibration of a six-axis FT sensor (ft_calibration*.c) ===========================================
 * Seed 002 (CoDyCo WP1 slides; Traversaro, Pucci, Nori, ICRA 2015): a rigid body hangs on the sensor in static
 * poses, an accelerometer on the body gives gravity in the sensor frame, and data sets with known added masses fix
 * the scale. Model: w = C (r + o) (convention "plus", the slides') or w = C (r - o) ("minus"): r the raw reading
 * (counts), o the offset, C 6 x 6; w = M(c) g with M(c) = m [I3; S(c)] the body's load, g gravity in the sensor
 * frame (the reading's frame, moment about its origin), signed so that w is the reading in the model's FT
 * convention (roboest/model.h): g = s (-R a), a the accelerometer's proper acceleration, R its rotation into the
 * sensor frame, s = -sign for a body on the sensor's child side (+sign on the parent side).
 *   Step 1: per data set j, r = K_j g - o_raw (K_j = C^-1 M(c_j), 6 x 3): one linear least squares for every K_j
 *           and the raw offset o_raw (o = -o_raw in the plus convention, o_raw in the minus one). Or the ellipsoid:
 *           the data set's raw readings projected on their 3-D principal subspace lie on an ellipsoid centred on
 *           o_raw (its centres averaged over the sets).
 *   Step 2: C (r - o_raw) = G(g) (phi_body + phi_j), phi = [m, m c], G(g) = [[g, 0], [0, -S(g)]]: one least
 *           squares in C and phi_body, force rows (C's first three rows and m) and moment rows (the last three and
 *           m c) apart.
 * Rank needs: every data set's gravity directions span three dimensions and do not lie on one circle (else the
 * offset is undetermined); at least two different added masses (else the scale of C's force rows is); the added
 * loads' differences [m_j - m_1, m_j c_j - m_1 c_1] spanning two dimensions (three loads not on one line: else one
 * wrench direction is never excited and C is undetermined along it). Each is checked first and named. */
enum { RB_FTCAL_MAX_SETS = 16 };
typedef enum rb_ftcal_convention { RB_FTCAL_PLUS = 0, RB_FTCAL_MINUS } rb_ftcal_convention;
typedef enum rb_ftcal_offset_method { RB_FTCAL_OFFSET_LS = 0, RB_FTCAL_OFFSET_ELLIPSOID } rb_ftcal_offset_method;

/* The rows of the two least squares (static-window means, or samples). */
typedef struct rb_ftcal_data {
    size_t n;            /* rows */
    const double *r;     /* n x 6 raw readings */
    const double *g;     /* n x 3 signed gravity in the sensor frame, m/s^2 (w = M(c) g) */
    const size_t *set;   /* n data-set indices, < n_sets */
    size_t n_sets;       /* 1..RB_FTCAL_MAX_SETS */
    const double *added; /* n_sets x 4: [m, m cx, m cy, m cz] of each set's added mass (kg, kg m; sensor frame) */
} rb_ftcal_data;

typedef struct rb_ftcal_fit {
    rb_ftcal_convention convention;
    double C[36], o[6];                          /* row-major C; o in the convention */
    double offset_raw[6];                        /* o_raw: the reading at zero load */
    double K[RB_FTCAL_MAX_SETS][18];             /* step 1's K_j (6 x 3, row-major) */
    double phi[4];                               /* the body: [m, m c] */
    double mass, com[3];                         /* kg, m (sensor frame) */
    double rms_raw[6];                           /* step 1 residual RMS per raw channel (counts) */
    double rms_force, rms_moment;                /* step 2 residual RMS (N, N m) */
    double cond_offset, cond_force, cond_moment; /* condition numbers, columns scaled to unit norm */
    size_t rows;
} rb_ftcal_fit;

/* The rank needs above, in that order; set_names (n_sets, may be NULL) name the data sets. RB_EINPUT "data set
 * 'a': its N gravity directions span 2 dimensions ...", "... lie on one circle ...", "every data set carries the
 * same added mass (0.5 kg): the scale of C is undetermined; add a data set with another known mass (or none)",
 * "the added loads lie on one line ...: add a data set whose mass sits off it". */
int rb_ftcal_check_rank(const rb_ftcal_data *d, const char *const *set_names, rb_err *err);
/* Both steps (rb_ftcal_check_rank first). RB_EINPUT (rank), RB_ENUMERIC (a non-finite row, a singular system),
 * RB_ENOMEM. Allocates only its workspace (O(1) in n: the rows are reduced in chunks by QR). */
int rb_ftcal_solve(const rb_ftcal_data *d, rb_ftcal_convention conv, rb_ftcal_offset_method method, rb_ftcal_fit *fit,
                   rb_err *err);
/* The calibrated wrench of a raw reading: w = C (r + o) or C (r - o) as fit->convention says. */
void rb_ftcal_apply(const rb_ftcal_fit *fit, const double r[6], double w[6]);

/* Per data set: the ellipsoid (Result 1). mean (6), the principal directions U (6 x 3, row-major), the centre
 * (6, raw: mean + U y0), the RMS of sqrt((y - y0)' Q (y - y0)) - 1 over the rows (relative radial residual), and
 * the raw rows' covariance eigenvalues (descending). At least 9 rows. RB_EINPUT, RB_ENUMERIC, RB_ENOMEM. */
typedef struct rb_ftcal_ellipsoid {
    double mean[6], U[18], centre[6], residual, eig[6];
    size_t rows;
} rb_ftcal_ellipsoid;
int rb_ftcal_ellipsoid_fit(const double *r, size_t n, rb_ftcal_ellipsoid *e, rb_err *err);

/* Static windows from the gyroscope and the accelerometer: at each accelerometer sample t_k the window
 * [t_k - window, t_k] is static when every gyroscope sample in it has |w| <= gyro_max and the accelerometer's
 * spread in it (the norm of its per-axis standard deviations) is <= acc_std_max; overlapping static windows join
 * into one interval [t0, t1] (a pose), kept when at least min_duration long. n_gyro / n_acc samples, times
 * increasing. *out (rb_free) gets 2 x *n_out times. RB_EINPUT (a window without gyroscope samples: the channels do
 * not overlap), RB_ENOMEM. */
typedef struct rb_ftcal_static_opts {
    double window, gyro_max, acc_std_max, min_duration; /* s, rad/s, m/s^2, s */
} rb_ftcal_static_opts;
int rb_ftcal_static_intervals(const double *t_gyro, const double *gyro, size_t n_gyro, const double *t_acc,
                              const double *acc, size_t n_acc, const rb_ftcal_static_opts *o, double **out,
                              size_t *n_out, rb_err *err);

/* The command's configuration (JSON; unknown keys are errors with suggestions; paths relative to the file):
 *   name          string (default: the file's stem)
 *   model         URDF path (required)
 *   ft            the model's FT sensor (required)
 *   raw           channel of the raw readings, 6 elements (default "FTs_raw/<ft>")
 *   accelerometer {channel (required), frame (default: the channel's last component), a model frame or IMU sensor
 *                  on either body of the FT sensor}
 *   gyroscope     {channel (required)}
 *   convention    "plus" (default: w = C (r + o), the slides') or "minus" (w = C (r - o))
 *   offset        "least_squares" (default) or "ellipsoid"
 *   static        {window (s, default 0.3), gyro_max (rad/s, default 0.03), acc_std_max (m/s^2, default 0.1),
 *                  min_duration (s, default = window), trim (s, default 0.05: cut from both ends of each pose)}
 *   rows          "windows" (default: one row per static pose, its means) or "samples" (every raw sample, the
 *                 pose's mean gravity: the errors-in-variables bias of step 2 grows with the noise squared)
 *   holdout       integer >= 0 (default 4): every k-th pose of each data set is held out (0: none)
 *   datasets      [{name (default "set<i>"), log (path or session), added_mass (kg >= 0), added_com ([x, y, z] m,
 *                  default 0), frame (of added_com: a model frame on the calibration body; default the FT's
 *                  reading frame)}], 1..16
 *   truth         {scenario: a simulator scenario with an "ft_raw" sensor on this FT: the true C and o from its
 *                  gain and offset, the body's mass and CoM from the model}, optional: errors reported
 */
typedef struct rb_ftcal_set_cfg {
    char *name;
    rb_cfg_session log;
    double added_mass, added_com[3]; /* com in the sensor frame (resolved) */
} rb_ftcal_set_cfg;

typedef struct rb_ftcal_config {
    char *name, *path, *sha256;
    char *urdf, *ft, *raw, *acc, *acc_frame, *gyro, *truth_scenario;
    rb_ftcal_convention convention;
    rb_ftcal_offset_method offset;
    rb_ftcal_static_opts stat;
    double trim;
    bool per_sample;
    size_t holdout, n_sets;
    rb_ftcal_set_cfg *sets;
    /* resolved from the model */
    rb_model *model;
    double R_sa[9];        /* accelerometer frame -> sensor frame */
    double body_sign;      /* s above */
    bool truth_body_known; /* the body has no movable joint beyond it */
    double truth_phi[4];   /* the body's [m, m c] in the sensor frame (model) */
    bool has_truth_sensor;
    double truth_C[36], truth_o[6];
    double raw_range; /* of the truth sensor's saturation (hi - lo, counts; 0 unknown) */
} rb_ftcal_config;

int rb_ftcal_load(const char *path, rb_ftcal_config **out, rb_err *err);
int rb_ftcal_load_text(const char *text, size_t len, const char *name_for_messages, const char *base_file,
                       rb_ftcal_config **out, rb_err *err);
void rb_ftcal_config_free(rb_ftcal_config *cfg);

/* What a calibration run gives. */
typedef struct rb_ftcal_set_result {
    size_t poses, train_poses, held_poses, samples; /* samples: raw samples inside the training poses */
    rb_ftcal_ellipsoid ell;                         /* of the training rows */
    double eig[6]; /* covariance eigenvalues of the raw samples in the training poses (descending, counts^2) */
    double held_norm_mean, held_norm_min, held_norm_max; /* |f| over the held-out poses (N) */
    double mg, mg_true; /* (m_body + m_added) g with the estimated body, with the true one (NaN unknown) */
} rb_ftcal_set_result;

typedef struct rb_ftcal_result {
    rb_ftcal_fit fit;
    rb_ftcal_set_result sets[RB_FTCAL_MAX_SETS];
    size_t rows, samples;
    double g_norm; /* mean |g| over the rows */
    bool has_truth;
    double err_C_rel, err_o_rel_range, err_o_max, err_mass_rel, err_com; /* vs truth */
    double err_o_rel_span; /* max over channels of |o error| / the channel's span over the training rows */
    double raw_span[6];    /* max - min of each raw channel over the training rows */
    double seconds;        /* calibration time after reading */
    rb_provenance pv;
} rb_ftcal_result;

/* Read every data set's log, find the static poses, build the rows (training and held out), solve, check on the
 * held-out poses. logs (may be NULL): the data sets' logs already read (n_sets; the provenance then says "memory").
 * Errors name the data set: a missing channel or element count, no static pose, rank problems (rb_ftcal_check_rank),
 * RB_EINPUT, RB_ENUMERIC, RB_ENOMEM. */
int rb_ftcal_run(const rb_ftcal_config *cfg, const rb_log *const *logs, rb_ftcal_result **out, rb_err *err);
void rb_ftcal_result_free(rb_ftcal_result *r);
/* calibration.json and report.md as new strings (rb_free). RB_ENOMEM. */
int rb_ftcal_json(const rb_ftcal_config *cfg, const rb_ftcal_result *r, char **text, rb_err *err);
int rb_ftcal_markdown(const rb_ftcal_config *cfg, const rb_ftcal_result *r, char **text, rb_err *err);
/* Both into dir (created if missing), all or nothing (rb_texts_write). RB_EEXISTS, RB_EIO, RB_ENOMEM. */
int rb_ftcal_write(const rb_ftcal_config *cfg, const rb_ftcal_result *r, const char *dir, bool overwrite, rb_err *err);

RB_API_END

#endif
