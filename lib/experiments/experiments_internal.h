/*
 * lib/experiments internals shared between its files: not installed, not part of the API.
 *   suite.c, closed_loop.c  the suite and closed-loop files (the loader helpers below)
 *   suite_run.c, closed_loop_run.c  the runs, on the pool of threads (pool.c)
 *   check.c  rules over a comparison report
 *   closed_loop_report.c  the closed loop's Markdown report and files
 *   closed_loop_feed.c  what a closed-loop run reads besides the torque signals: the inertia feedback, the task
 */
#ifndef ROBOEST_EXPERIMENTS_INTERNAL_H
#define ROBOEST_EXPERIMENTS_INTERNAL_H

#include <cjson/cJSON.h>

#include "roboest/config.h"
#include "roboest/experiments.h"

/* ---- shared by the suite and closed-loop loaders (suite.c) -------------------------------------------- */
/* {samples, seed, level} into *bs (members absent: untouched). */
int rb_experiments_want_bootstrap(rb_cfg *c, const cJSON *v, rb_bootstrap *bs);
/* An integer in [1, 1024]. */
int rb_experiments_want_threads(rb_cfg *c, const cJSON *v, size_t *out);
/* Where a variant {"name", "pipeline", <key>} of a suite or a validation goes (each a field of the caller's struct);
 * with has_window and window (non-NULL) the variant may also have a "window" of its own (absent: untouched). */
typedef struct rb_experiments_variant {
    char **name, **pipeline_path, **signal;
    rb_pipeline **pipeline;
    bool *has_window;
    rb_window *window;
} rb_experiments_variant;
/* Parse one variant: the keys checked, the name valid, the pipeline (relative to the file) loaded, the signal named
 * by `key` found in it (with a suggestion) and marked recorded. RB_ECONFIG, RB_ENOMEM. */
int rb_experiments_parse_variant(rb_cfg *c, const rb_registry *reg, const cJSON *v, const char *key,
                                 rb_experiments_variant *var);
/* A variant's provenance: "variant <name>: pipeline", ": config_sha256", ": <key>" (its signal) and its pipeline's
 * files' checksums (rb_pipeline_files_provenance, keys prefixed "variant <name>: "). */
int rb_experiments_variant_provenance(rb_provenance *pv, const char *name, const rb_pipeline *p, const char *key,
                                      const char *signal, rb_err *err);
/* A comparison report's provenance (suite, validation, closed loop) opens with pv initialised, "<kind>" (path's
 * file name) and "<kind>_sha256"; the caller adds its variants' and inputs' entries (rc the first failure) and hands
 * both to rb_experiments_provenance_close, which sets pv on c unless rc is already a failure and frees pv: the
 * first failure's code. RB_ENOMEM. */
int rb_experiments_provenance_open(rb_provenance *pv, const char *kind, const char *path, const char *sha256,
                                   rb_err *err);
int rb_experiments_provenance_close(rb_provenance *pv, int rc, rb_comparison *c, rb_err *err);
/* RB_ECONFIG "unknown <what> 'name'" with the closest of `names` as a suggestion. */
int rb_experiments_unknown_name(rb_cfg *c, const char *what, const char *name, const char *const *names, size_t n);
/* RB_ECONFIG "signal 'x' is not in pipeline <file>" with the closest signal as a suggestion. */
int rb_experiments_signal_suggestion(rb_cfg *c, const rb_pipeline *p, const char *name);

/* ---- a pool of threads over independent items (pool.c) ------------ */
typedef struct rb_pool {
    void *ctx;
    int (*task)(void *ctx, size_t i, rb_err *err); /* item i; writes only its own slot of ctx */
    size_t n;                                      /* items */
    size_t threads;                                /* 0: one per online core; never more than n */
    /* After each finished item with the items done and n, from the workers but never two at a time; non-zero
     * cancels. May be NULL. */
    int (*progress)(void *user, size_t done, size_t total);
    void *user;
} rb_pool;

/* Run task(ctx, i) for i = 0..n-1 on a shared work queue. The calling thread works too; a thread that cannot
 * start only lowers the parallelism. After a failure no item beyond the failing one is started, so the lowest
 * failing item (every lower one was started before it) decides the error whatever the timing: its code and
 * message. When progress cancels: *cancelled = true and the return is the callback's value if it is a negative
 * rb_status, RB_EINVAL otherwise (err untouched). */
int rb_pool_run(const rb_pool *pl, bool *cancelled, rb_err *err);

/* ---- one (variant, log) run of a suite as data (suite_store.c; made by suite_run.c, read by suite_report.c) ---- */
/* A figure trace of the run: the estimate of the trace's joint inside its window, and the reference's samples of
 * that joint (all of them) with its unit. Empty (n 0) for a trace of another log. */
typedef struct rb_suite_pair_trace {
    size_t est_n, ref_n;
    double *est_t, *est_y, *ref_t, *ref_y;
    char *unit;
} rb_suite_pair_trace;

/* Everything the report needs from one run: the statistics (not the samples), the log's facts that the report
 * shows (the same in every variant's run of the log), the warnings and the figures' traces. */
struct rb_suite_pair {
    char key[65];       /* rb_suite_keys' key of the run */
    char *input_sha256; /* the log's files, comma-separated */
    size_t n_joints;
    char **joints; /* the joints scored, in the table's order */
    double t_start;
    char *settle_why; /* the start-up excluded on the log (provenance), NULL with the suite's window */
    size_t n_samples; /* clock samples of the run */
    rb_stats *stats;  /* n_joints + 1 ("all" last) */
    bool has_confusion;
    rb_confusion confusion;
    size_t n_warnings;
    char **warnings;
    size_t n_traces; /* the suite's figures.traces, by index */
    rb_suite_pair_trace *traces;
    size_t n_shaded; /* the contact channel's active stretches, with traces on the log */
    rb_interval *shaded;
};

/* A session's paths joined by sep, or (base) their file names (rb_free; NULL when out of memory). suite_report.c */
char *rb_suite_session_text(const rb_cfg_session *ses, const char *sep, bool base);
/* Every joint of the traces and the published values is scored: RB_ENOTFOUND naming the item. suite_report.c */
int rb_suite_check_joints(const rb_suite *s, char *const *joints, size_t n_joints, rb_err *err);
/* An empty run with n_joints + 1 stats and n_traces trace slots (NULL when out of memory). */
rb_suite_pair *rb_suite_pair_alloc(size_t n_joints, size_t n_traces);
/* The key of run (v, l) from the hashes of its inputs: pipeline_sha (rb_suite_pipeline_sha), the log's files'
 * (comma-separated), its reference_log file's (NULL: none) and, for a suite without "joints", the first log's
 * files' (they name the joints). */
void rb_suite_pair_key(const rb_suite *s, const char *const *pipeline_sha, size_t v, size_t l, const char *input_sha,
                       const char *ref_sha, const char *log0_sha, char key[65]);
/* The SHA-256 of a session's files, comma-separated as rb_run_result.input_sha256 (*out, rb_free). rb_sha256_file's
 * errors, RB_ENOMEM. */
int rb_suite_session_sha(const rb_cfg_session *ses, char **out, rb_err *err);
/* The hash of variant v's pipeline: its resolved configuration, its text and its URDF's bytes. RB_ENOMEM, the
 * URDF's read errors. */
int rb_suite_pipeline_sha(const rb_suite *s, size_t v, char sha[65], rb_err *err);

/* ---- the closed loop's tables (closed_loop_run.c makes them, closed_loop_report.c shows them) ---------------- */
/* Statistics of the closed-loop tables (rb_stat_key indices). */
enum { ST_MSE = 0, ST_RMSE, ST_MAE, ST_MAX_ABS, ST_MEAN_ABS_EST };

static inline bool rb_cl_with_feedback(const rb_closed_loop_config *cf) { return cf->feedback != NULL; }
static inline bool rb_cl_with_compensation(const rb_closed_loop_config *cf) { return cf->compensation != NULL; }

/* ---- the closed loop's inertia feedback and task (closed_loop_feed.c) ------------------------------------------ */
/* The inertia feedback of one run: the pipeline signal's elements "<body>/<p>" per model body (seed 001). */
typedef struct rb_cl_inertia {
    size_t n;          /* bodies fed */
    size_t *body;      /* n model bodies */
    long *elem;        /* 10 per body: the signal's element of each parameter */
    const double *row; /* the signal's current row (the stream's) */
    double *pi;        /* 10 per body: gathered values */
} rb_cl_inertia;

/* Map `signal` of the stream (elements "<body>/<p>", p in m hx hy hz Ixx Ixy Ixz Iyy Iyz Izz; or, with `body`
 * not NULL, elements "<p>" of that one body) onto the model's bodies: every element must name a body of the model
 * and a parameter, and every body named must have all ten. RB_ENOTFOUND / RB_EINPUT naming the element (prefixed
 * with `who`), RB_ENOMEM. */
int rb_cl_inertia_map(rb_cl_inertia *in, const rb_model *m, rb_stream *stream, const char *signal, const char *body,
                      const char *who, rb_err *err);
/* Give the controller's model every body whose ten values are finite and physically valid; the others keep their
 * parameters. rb_sim_set_model_inertia's errors. */
int rb_cl_inertia_feed(rb_cl_inertia *in, rb_sim *sim, rb_err *err);
void rb_cl_inertia_free(rb_cl_inertia *in);

/* The task's two values: channel and element index of the actual value and of the reference among the run's
 * channels. RB_ENOTFOUND naming the channel or element. */
typedef struct rb_cl_task_map {
    size_t actual_channel, actual_element, reference_channel, reference_element;
} rb_cl_task_map;
int rb_cl_task_map_channels(rb_cl_task_map *tm, const rb_closed_loop_task *task, const rb_channel_info *channels,
                            size_t n_channels, rb_err *err);

/* ---- a suite's log read in parts (suite_window.c; compare --memory-limit) --------------------------------------- */
/* Channel ch (of src's log) in parts of `part` samples: fn(user, times, values, count, err) for each, in order. */
typedef int (*rb_suite_part_fn)(void *user, const double *t, const double *x, size_t n, rb_err *err);
int rb_suite_channel_parts(rb_log_source *src, const rb_channel *ch, size_t part, rb_suite_part_fn fn, void *user,
                           rb_err *err);
/* Channel ch whole into copy (its times; with data its values too), RB_EINPUT up front when that is over limit bytes,
 * naming label, why it is needed whole and the memory it needs. rb_suite_channel_free. */
int rb_suite_channel_whole(rb_log_source *src, const rb_channel *ch, bool data, size_t limit, const char *label,
                           const char *why, rb_channel *copy, rb_err *err);
void rb_suite_channel_free(rb_channel *copy);
/* rb_resample of the file's channel onto clk (non-finite samples an error), the channel read window by window. */
int rb_suite_resample_parts(const char *path, size_t limit, const char *channel, const size_t *sel, size_t n_sel,
                            const rb_clock *clk, rb_interp interp, double *out, rb_err *err);

#endif
