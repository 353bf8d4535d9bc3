/*
 * lib/pipeline internals shared between its files: not installed, not part of the API.
 *   config.c  JSON text -> typed rb_pipeline (the sections), and the loader's entry points
 *   graph.c   the signal graph: signal table, wiring, execution order, output and metric references
 *   engine.c  the stage graph stepped sample by sample, shared by run.c (a log) and stream.c (a caller)
 *   run.c, write.c, registry.c  the few helpers below that more than one of them needs
 */
#ifndef ROBOEST_PIPELINE_INTERNAL_H
#define ROBOEST_PIPELINE_INTERNAL_H

#include <cjson/cJSON.h>

#include "roboest/pipeline.h"

/* ---- the loader's context (config.c, graph.c) ------------------------------------------------ */
typedef struct cfg {
    const char *file; /* for messages */
    const char *text; /* NUL-terminated copy of the source */
    size_t len;
    const char *base_file;
    const rb_registry *reg;
    rb_pipeline *p;
    rb_err *err;
    size_t depth; /* may exceed RB_JSON_PATH_MAX: deeper steps are counted, not kept */
    rb_json_step path[RB_JSON_PATH_MAX];
    uint64_t stage_optional; /* the optional_inputs of the stage being parsed */
} cfg;

/* The key path of what is being checked names and locates every message: push on the way in, pop on
 * the way out. */
static inline void push_key(cfg *c, const char *key, size_t occurrence)
{
    if (c->depth < RB_JSON_PATH_MAX)
        c->path[c->depth] = (rb_json_step){key, occurrence};
    c->depth++;
}

static inline void push_index(cfg *c, size_t i)
{
    if (c->depth < RB_JSON_PATH_MAX)
        c->path[c->depth] = (rb_json_step){NULL, i};
    c->depth++;
}

static inline void pop(cfg *c) { c->depth--; }

static inline size_t path_depth(const cfg *c) { return c->depth < RB_JSON_PATH_MAX ? c->depth : RB_JSON_PATH_MAX; }

/* RB_ECONFIG "<file>:<line>:<col>: <key path>: <what>" at the current path. */
int rb_cfg_error(cfg *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* RB_ENOMEM "<file>: out of memory". */
int rb_cfg_nomem(cfg *c);

/* A name and its position in a list. */
typedef struct name_ref {
    const char *name;
    size_t index;
} name_ref;

/* qsort order: by name, then by position. */
int rb_cfg_cmp_name_ref(const void *a, const void *b);
/* In refs sorted with rb_cfg_cmp_name_ref: the lowest position whose name repeats an earlier one's
 * (*dup, with that earlier position in *first), or SIZE_MAX in both. */
void rb_cfg_first_repeat(const name_ref *refs, size_t n, size_t *dup, size_t *first);
/* The same for n names in any order (NULL names are skipped; `first` may be NULL). RB_ENOMEM. */
int rb_cfg_find_duplicate(cfg *c, const char *const *names, size_t n, size_t *dup, size_t *first);

/* graph.c, once every section is parsed: build p->signal_table, wire every stage port, output and
 * metric to it, put the stages in execution order, check that no two files share a path. */
int rb_cfg_check_graph(cfg *c);

/* ---- typed values and objects at the current path (config.c; also used by scenario.c) ------------ */
/* obj must be an object whose keys are unique and (allowed != NULL) among `allowed`; an unknown key is
 * reported with the closest allowed one as a suggestion. */
int rb_cfg_check_object(cfg *c, const cJSON *obj, const char *const *allowed, size_t n_allowed);
/* A string (a new copy in *out; empty only when allow_empty). */
int rb_cfg_want_string(cfg *c, const cJSON *v, bool allow_empty, char **out);
/* A finite number. */
int rb_cfg_want_number(cfg *c, const cJSON *v, double *out);
/* One of `choices` (NULL-terminated) with a suggestion for a near miss. */
int rb_cfg_want_choice(cfg *c, const cJSON *v, const char *const *choices, size_t *index);
/* Member `key` of obj read as a non-empty string (absent: an error when required, else *out untouched). */
int rb_cfg_member_string(cfg *c, const cJSON *obj, const char *key, bool required, char **out);
/* Optional member `key` of obj read as one of `choices` (*index untouched when absent). */
int rb_cfg_member_choice(cfg *c, const cJSON *obj, const char *key, const char *const *choices, size_t *index);
/* [t0, t1] in seconds, t0 < t1. */
int rb_cfg_want_window(cfg *c, const cJSON *v, double *t0, double *t1);
/* An array of non-empty strings (new copies; *n may be 0 only when allow_empty). On failure *out may hold
 * what was read (free with rb_pipe_free_strings(*out, *n)). */
int rb_cfg_want_strings(cfg *c, const cJSON *v, bool allow_empty, char ***out, size_t *n);
/* One log: a path or an array of paths (one session), resolved against c->base_file. */
int rb_cfg_want_session(cfg *c, const cJSON *v, rb_config_session *s);
/* Parse NUL-terminated text[0..len) as JSON into *root (caller frees with cJSON_Delete); a NUL byte inside
 * or malformed JSON gives "<file>:<line>:<col>: malformed JSON (...)" (RB_ECONFIG). */
int rb_cfg_parse_json(const char *file, const char *text, size_t len, cJSON **root, rb_err *err);
/* RB_ECONFIG "<file>:<line>:<col>: malformed JSON (...)" for text cJSON rejected at cjson_offset (why:
 * the reason when known, else NULL to find it). */
int rb_cfg_malformed(const char *file, const char *text, size_t len, size_t cjson_offset, const char *why, rb_err *err);
/* Read a whole configuration file (at most 64 MiB) into a new buffer (*text, *len). RB_ENOTFOUND,
 * RB_EINPUT, RB_ENOMEM. */
int rb_cfg_read_file(const char *path, char **text, size_t *len, rb_err *err);

/* ---- optional members (json_util.c; used by config.c, scenario.c, friction_spec.c, suite.c) -------- */
/* Member `key` of obj (case-sensitive), NULL when absent. */
const cJSON *rb_cfg_member(const cJSON *obj, const char *key);
/* What a number must satisfy; a violation is reported at the current path ("must be > 0", ...). */
typedef enum rb_cfg_rule {
    RB_CFG_ANY,
    RB_CFG_POSITIVE,     /* > 0 */
    RB_CFG_NON_NEGATIVE, /* >= 0 */
    RB_CFG_NON_ZERO,     /* != 0 */
    RB_CFG_UNIT_OPEN,    /* in [0, 1) */
    RB_CFG_UNIT_CLOSED   /* in [0, 1] */
} rb_cfg_rule;
/* x checked against `rule` (RB_ECONFIG at the current path). */
int rb_cfg_check_rule(cfg *c, double x, rb_cfg_rule rule);
/* Optional number member `key` of obj checked against `rule` (*out untouched when absent). */
int rb_cfg_member_number(cfg *c, const cJSON *obj, const char *key, rb_cfg_rule rule, double *out);

/* ---- shared by the suite and closed-loop loaders (suite.c) -------------------------------------------- */
/* A name made of letters, digits, '_' and '-', starting with a letter or '_' (variants, configurations). */
bool rb_cfg_valid_name(const char *s);
/* An integer in [lo, 2^53]. */
int rb_cfg_want_integer(cfg *c, const cJSON *v, double lo, double *out);
/* {samples, seed, level} into *bs (members absent: untouched). */
int rb_cfg_want_bootstrap(cfg *c, const cJSON *v, rb_bootstrap *bs);
/* An integer in [1, 1024]. */
int rb_cfg_want_threads(cfg *c, const cJSON *v, size_t *out);
/* RB_ECONFIG "signal 'x' is not in pipeline <file>" with the closest signal as a suggestion. */
int rb_cfg_signal_suggestion(cfg *c, const rb_pipeline *p, const char *name);

/* ---- cJSON builders (json_util.c; used by resolved.c, import_rde_json.c) ---------------------------- */
/* cJSON builders return NULL when out of memory; `ok` collects that so each call site stays one line. */
typedef struct rb_cfg_builder {
    bool ok;
} rb_cfg_builder;
/* item added to parent under key (key NULL: appended to the array parent); NULL item or a failed add
 * (item freed) clears b->ok and gives NULL. */
cJSON *rb_cfg_add(rb_cfg_builder *b, cJSON *parent, const char *key, cJSON *item);
/* A new array of copies of n strings, NULL when out of memory. */
cJSON *rb_cfg_strings(const char *const *s, size_t n);

/* ---- the stage engine (engine.c): the one way to step a stage graph, for run.c and stream.c --------- */
/* One signal while running: `data` holds n_rows x width values; stride is width for a clock-length
 * buffer and 0 for a single row rewritten every sample. */
typedef struct rb_live_signal {
    size_t width, stride;
    double *data;
    char **names, **units; /* width each, owned */
} rb_live_signal;

typedef int (*rb_stage_step_fn)(void *, size_t, double, const double *const *, double *const *, rb_err *);

/* The stages of a pipeline with the signals they read and write. Set-up, in order:
 *   rb_engine_init         the signal table (every entry empty) and the stage states;
 *   (the caller fills sig[i] of every binding i < p->n_signals: width, stride, data, names, units)
 *   rb_engine_create       the loop tables, every stage's create(), the wired outputs' signals, the
 *                          scratch rows of the unwired outputs and the pointer tables;
 * then rb_engine_steps (per sample, allocates nothing), rb_engine_finish, and rb_engine_free (always). */
typedef struct rb_engine {
    const rb_pipeline *p;
    const char *label;            /* starts the engine's own messages (borrowed) */
    rb_err *err;                  /* given to the stages (may be changed between calls) */
    rb_live_signal *sig;          /* per signal-table entry */
    void **state;                 /* per stage (execution order); NULL until created */
    /* loop tables: ports of every stage, inputs then outputs, stage by stage */
    size_t n_in_ptr, n_out_ptr;
    const double **in_ptr, **in_base;
    double **out_ptr, **out_base;
    size_t *in_stride, *out_stride, *in_off, *out_off;
    size_t *out_width;            /* per output port, as create() set it */
    rb_stage_step_fn *steps;      /* per stage */
    double *scratch;              /* one row per unwired output port, rewritten every sample, never read */
} rb_engine;

/* Zeroes *e and allocates the empty signal table and the state slots. RB_ENOMEM ("out of memory"). */
int rb_engine_init(rb_engine *e, const rb_pipeline *p, const char *label, rb_err *err);
/* Creates the stages on a clock of n_samples times (time, borrowed until rb_engine_free) with period dt.
 * A wired output gets `recorded_rows` rows (stride its width) when the signal table marks it recorded
 * and recorded_rows > 1, else one row (stride 0). When a stage's create() fails, *failed_stage is its
 * index and the message is create()'s own (the caller prefixes it); otherwise *failed_stage = SIZE_MAX
 * and errors (RB_ENOMEM) start with the label. */
int rb_engine_create(rb_engine *e, double dt, size_t n_samples, const double *time, size_t recorded_rows,
                     size_t *failed_stage);
/* Steps samples [k0, k1) at times time[k]: every stage in execution order, reading and writing the rows
 * base + k * stride. Allocates nothing. On a stage's non-zero return, stops and returns it with the
 * sample and stage in *failed_k, *failed_stage (the message is the stage's own). */
int rb_engine_steps(rb_engine *e, size_t k0, size_t k1, const double *time, size_t *failed_k, size_t *failed_stage);
/* Every stage's finish() in order; on failure *failed_stage is its index (the message is its own). */
int rb_engine_finish(rb_engine *e, size_t *failed_stage);
/* Destroys the created stages and frees everything (also after a failure; e zeroed is fine). */
void rb_engine_free(rb_engine *e);
/* Copies of n strings src[sel[i]] (sel NULL: src[i]); a NULL src gives "0", "1", ... when numbered, else
 * "". NULL when out of memory (nothing left allocated). */
char **rb_pipe_copy_strings(const char *const *src, const size_t *sel, size_t n, bool numbered);

/* ---- small helpers ---------------------------------------------------------------------------- */
/* registry.c: x within the bounds of a NUMBER / INTEGER / array-element parameter. */
bool rb_pipe_param_within(const rb_param_spec *ps, double x);

/* config.c: frees n strings and the array (s may be NULL). */
void rb_pipe_free_strings(char **s, size_t n);
/* config.c: the file name of `path` (borrowed) with *len set to the length of its stem: the name
 * without its extension, where a leading dot starts no extension (".hidden" is its own stem). */
const char *rb_pipe_stem(const char *path, size_t *len);

/* write.c: the provenance attributes every output file and report carries (tool version, pipeline
 * name, config file and SHA-256, input files and their SHA-256, model), set on `rep`, or on `log`
 * when rep is NULL. Absent values (no model) are left out. */
int rb_pipe_set_provenance(const rb_pipeline *p, const char *input, const char *input_sha256, rb_report *rep,
                           rb_log *log, rb_err *err);

/* write.c: one session: the n files read and concatenated in order (rb_log_append; an append error is prefixed
 * "<first>: appending <file>: "). *out untouched on failure. */
int rb_pipe_read_session(const char *const *paths, size_t n, rb_log **out, rb_err *err);

/* write.c: n texts into files dir/names[i] (dir created if missing, one level), all or nothing: every file goes
 * to a temporary first (a clash without overwrite fails before anything is written: RB_EEXISTS) and all are
 * renamed only when all were written. RB_EIO, RB_ENOMEM. */
int rb_pipe_write_texts(const char *dir, const char *const *names, const char *const *texts, size_t n, bool overwrite,
                        rb_err *err);

/* ---- a pool of threads over independent items (pool.c; used by suite_run.c, closed_loop.c) ------------ */
typedef struct rb_pipe_pool {
    void *ctx;
    int (*task)(void *ctx, size_t i, rb_err *err); /* item i; writes only its own slot of ctx */
    size_t n;                                      /* items */
    size_t threads;                                /* 0: one per online core; never more than n */
    /* After each finished item with the items done and n, from the workers but never two at a time; non-zero
     * cancels. May be NULL. */
    int (*progress)(void *user, size_t done, size_t total);
    void *user;
} rb_pipe_pool;

/* Run task(ctx, i) for i = 0..n-1 on a shared work queue. The calling thread works too; a thread that cannot
 * start only lowers the parallelism. After a failure no item beyond the failing one is started, so the lowest
 * failing item (every lower one was started before it) decides the error whatever the timing: its code and
 * message. When progress cancels: *cancelled = true and the return is the callback's value if it is a negative
 * rb_status, RB_EINVAL otherwise (err untouched). */
int rb_pipe_pool_run(const rb_pipe_pool *pl, bool *cancelled, rb_err *err);

#endif
