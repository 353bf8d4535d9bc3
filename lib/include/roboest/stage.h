/*
 * roboest stage: what a stage writer needs, and nothing else (no simulator, no metrics, no runner).
 *
 * A stage type is a causal estimator with named input and output ports and a parameter schema; a pipeline
 * (roboest/pipeline.h) wires log channels and other stages' outputs to its inputs, validates its parameters
 * against the schema (defaults filled in) and steps it once per sample. The built-in types are in
 * lib/estimators (roboest/estimators.h); each is a thin adapter of ports and parameters over a module
 * (dynamics, filters, friction, ...), whose algorithm takes a model and a caller-owned workspace.
 *
 * Adding a stage type: write a `const rb_stage_type` (version RB_STAGE_TYPE_VERSION, name, summary, doc, ports
 * with their docs, the parameter schema, create / step / finish / destroy), register it with rb_registry_add
 * (the built-in ones: rb_estimators_register). The schema is the one place its parameters are written:
 * `roboest stages` lists them and `roboest stages --markdown` generates the reference (configs/stages.md).
 */
#ifndef ROBOEST_STAGE_H
#define ROBOEST_STAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roboest/core.h"
#include "roboest/model.h"

RB_API_BEGIN

/* ---- stage parameters --------------------------------------------------------------------- */
typedef enum rb_param_kind {
    RB_PARAM_NUMBER,       /* finite double */
    RB_PARAM_INTEGER,      /* integral number, |x| <= 2^53 */
    RB_PARAM_BOOLEAN,      /* true / false */
    RB_PARAM_STRING,       /* string, optionally one of `choices` */
    RB_PARAM_NUMBER_ARRAY, /* array of finite numbers */
    RB_PARAM_STRING_ARRAY  /* array of strings */
} rb_param_kind;

/* Name of a kind for messages and --help ("number", "string array", ...). */
const char *rb_param_kind_name(rb_param_kind kind);

/* One parameter of a stage type's schema. Zero-initialized fields mean "no bound / no default". */
typedef struct rb_param_spec {
    const char *name;
    rb_param_kind kind;
    bool required;
    double def_number;              /* default of NUMBER / INTEGER / BOOLEAN (0 or 1) */
    const char *def_string;         /* default of STRING (NULL: none) */
    const double *def_numbers;      /* default of NUMBER_ARRAY (def_count values) */
    const char *const *def_strings; /* default of STRING_ARRAY (def_count strings) */
    size_t def_count;
    bool has_min, min_exclusive; /* value (each array element) >= min, or > min */
    double min;
    bool has_max, max_exclusive; /* value (each array element) <= max, or < max */
    double max;
    size_t min_count, max_count; /* array length bounds; max_count 0: unbounded */
    const char *const *choices;  /* STRING / STRING_ARRAY: allowed values, NULL-terminated */
    bool file;                   /* STRING: a file's path, absolute or relative to the pipeline file's folder
                                    (rb_stage_file_path); its bytes are part of a run's identity (stored results) */
    const char *doc;             /* one line, with the unit: what `roboest stages` prints */
    const char *details;         /* what the reference adds after doc in the parameter's table row (one line of
                                    Markdown: conditions, interplay with other parameters); NULL: none */
} rb_param_spec;

/* A validated parameter value. Owned by the pipeline; read-only for stages. */
typedef struct rb_param_value {
    bool given;      /* set in the config; false: the default */
    double number;   /* NUMBER, INTEGER, BOOLEAN (0 or 1) */
    char *string;    /* STRING (NULL: optional and absent without default) */
    size_t count;    /* NUMBER_ARRAY / STRING_ARRAY length */
    double *numbers; /* count values */
    char **strings;  /* count strings */
} rb_param_value;

struct rb_stage_type;

/* The parameters of one stage: values[i] belongs to type->params[i]. */
typedef struct rb_params {
    const struct rb_stage_type *type;
    const rb_param_value *values;
} rb_params;

/* Value by name, NULL if the type's schema has no such parameter. */
const rb_param_value *rb_params_get(const rb_params *p, const char *name);
/* Typed shortcuts: NAN / 0 / false / NULL when the schema has no such parameter. */
double rb_params_number(const rb_params *p, const char *name);
long long rb_params_integer(const rb_params *p, const char *name);
bool rb_params_boolean(const rb_params *p, const char *name);
const char *rb_params_string(const rb_params *p, const char *name);

/* ---- stages ------------------------------------------------------------------------------------ */
/* One port of a stage at set-up: `width` elements per sample with their names and units. */
typedef struct rb_port {
    size_t width;
    const char *const *names; /* width element names; outputs: NULL gives "0", "1", ... */
    const char *const *units; /* width units ("" unknown); outputs: NULL gives "" */
} rb_port;

/* What a stage's create() gets. Everything is borrowed and stays valid until destroy(). */
typedef struct rb_stage_setup {
    const char *id;          /* the stage's id in the config, for messages */
    const rb_params *params; /* validated, defaults filled in */
    const rb_port *in;       /* type->n_inputs ports, in the type's order */
    rb_port *out;            /* type->n_outputs ports: create() sets width, names, units of every port,
                                wired or not; the name and unit strings must stay valid until destroy()
                                (input names may be reused) */
    double dt;               /* sample period, s: 1 / rate for a uniform clock, 1 / the channel's rate
                                from its span, gaps left out (rb_time_report.rate), for a channel clock */
    size_t n_samples;        /* clock length */
    const double *time;      /* n_samples clock times, s, strictly increasing */
    const rb_model *model;   /* the pipeline's model (config key "model"), NULL without one */
    const char *config_dir;  /* folder of the pipeline file: files named in params are relative to it */
} rb_stage_setup;

/* The path of a `file` parameter's value (its schema's `file`): absolute as given, else under config_dir (NULL or
 * "": as given). Caller frees; NULL: out of memory. */
char *rb_stage_file_path(const char *config_dir, const char *value);

/* What a filtering stage shows the pipeline's sensor-fault monitor (rb_stage_type.innovations): for each of its m
 * measurements, the input port and element it reads, and the last step's normalized innovation. */
typedef struct rb_stage_innovations {
    size_t m;
    const size_t *port;    /* m: the input port measurement j reads */
    const size_t *element; /* m: its element in that port */
    const double *z;       /* m: nu_j / sqrt(S_jj) of the last step's update (nu = z - zhat, S the innovation
                              covariance); NaN where the element was not used (missing, gated, no update) */
} rb_stage_innovations;

/*
 * A stage type. The runner calls create() once per run, then step() for k = 0 .. n_samples-1 in
 * order, then finish(), then destroy() (also after a failure once create() succeeded).
 *   create   allocate everything the stage needs and set the outputs' widths; returns RB_OK or an
 *            rb_status with a message (RB_ECONFIG for a parameter that does not fit the inputs);
 *            on failure nothing is left allocated.
 *   step     compute sample k from the inputs at sample k (in[i]: in port i's width values) and
 *            its own state only (causal); write every output value (out[j]: width values). The
 *            output rows are write-only: keep in the state whatever the next sample needs. An
 *            unwired output's row is the runner's scratch (distinct from every other row, same
 *            width): a stage writes all its outputs and never needs to know which are wired. Must
 *            not allocate or do I/O. A non-zero return (an rb_status with a message) stops the run.
 *   finish   end-of-run work (may be NULL).
 *   destroy  free the state (may be NULL when create allocates nothing).
 *   innovations  (optional) what a filter compares with its measurements, for the fault monitor.
 *   notes    (optional) lines for the run's warnings, read after finish().
 *   step_block  (optional) samples k0 .. k0 + count - 1 at once, exactly as count calls of step() would compute
 *            them (the same bits): in[i] + b * in_stride[i] is input port i's row of sample k0 + b (a stride may be
 *            0: the same row), out[j] + b * out_stride[j] output port j's; t[b] its time. For a stage that reuses
 *            what it reads per sample (a network's weights) across samples. The runner steps a pipeline in
 *            blocks of samples, each stage over the whole block before the next (exact: the stages are causal
 *            and form a DAG), and calls step_block when the type has one, for blocks of more than one sample
 *            (a stream steps one at a time: step()) and not while the fault monitor watches its innovations.
 *            On a non-zero return, *failed is the offset in the block of the failing sample, the samples
 *            before it done. Must not allocate or do I/O.
 */
/* A type whose start-up decays like exp(-t / tau) declares this many time constants as its settling time (its
 * rb_stage_type.settle): the start-up error is then down to exp(-5) = 0.7 % of where it began. */
#define RB_SETTLE_TIME_CONSTANTS 5.0

/* The runner's block of samples: a type's step_block sees at most this many at once. */
#define RB_STAGE_BLOCK 64

/* 2: rb_param_spec.details; 3: rb_stage_type.innovations; 4: .notes; 5: .settle; 6: .step_block */
#define RB_STAGE_TYPE_VERSION 6

typedef struct rb_stage_type {
    int version;         /* RB_STAGE_TYPE_VERSION: the registry refuses a type written against another layout */
    const char *name;    /* registry key, e.g. "lowpass" */
    const char *summary; /* one line for --help */
    const char *doc;     /* what it computes, for the generated reference: Markdown paragraphs (model, equations as
                            indented code blocks, units, start-up, NaN handling, errors), each line ending in "\n";
                            NULL: none */
    const char *const *inputs;
    const char *const *input_docs; /* n_inputs one-line Markdown docs (width, unit, meaning); NULL: none */
    size_t n_inputs;
    uint64_t optional_inputs; /* bit j set: input port j may be left unwired; create() then sees width 0
                                 (names, units NULL) and step() a non-NULL pointer to nothing */
    const char *const *outputs;
    const char *const *output_docs; /* n_outputs one-line Markdown docs (width, unit, meaning); NULL: none */
    size_t n_outputs;
    const rb_param_spec *params;
    size_t n_params;
    int (*create)(const rb_stage_setup *setup, void **state, rb_err *err);
    int (*step)(void *state, size_t k, double t, const double *const *in, double *const *out, rb_err *err);
    int (*finish)(void *state, rb_err *err);
    void (*destroy)(void *state);
    /* The stage's innovations for the sensor-fault monitor (may be NULL: it has none). Called at most once,
     * after create(); from then on every step() fills z. The pointers stay valid until destroy(). A NULL
     * return: this instance has none. */
    const rb_stage_innovations *(*innovations)(void *state);
    /* Lines the stage adds to the run's warnings after finish() (counts, findings it wants a user to read), each
     * printed as "<log>: stage <id>: <line>"; *lines (n entries) is owned by the state, valid until destroy().
     * May be NULL: no notes. */
    size_t (*notes)(void *state, const char *const **lines);
    /* The stage's start-up transient, s (may be NULL: none): how long its outputs take to forget the state it starts
     * from, from its parameters and the sample period dt (s, > 0), before any run (no state: a pure function). A
     * pipeline's metrics without a window skip the largest over its stages (rb_pipeline_settle). Finite, >= 0.
     * settle_doc says how, one line of Markdown for the reference ("Start-up: ..."). */
    double (*settle)(const rb_params *params, double dt);
    const char *settle_doc;
    int (*step_block)(void *state, size_t k0, size_t count, const double *t, const double *const *in,
                      const size_t *in_stride, double *const *out, const size_t *out_stride, size_t *failed,
                      rb_err *err);
} rb_stage_type;

/* ---- registry ------------------------------------------------------------------------------------ */
typedef struct rb_registry rb_registry;

/* Empty registry (caller frees with rb_registry_free). */
int rb_registry_new(rb_registry **out, rb_err *err);
void rb_registry_free(rb_registry *reg);
/* Add a type (borrowed: it must outlive the registry, normally a static). RB_EINVAL if the name is
 * taken or the type is malformed (another version, no step, duplicate port or parameter names, a default
 * outside its bounds or choices); RB_ENOMEM. */
int rb_registry_add(rb_registry *reg, const rb_stage_type *type, rb_err *err);
/* Type by exact name, NULL if absent (borrowed). */
const rb_stage_type *rb_registry_find(const rb_registry *reg, const char *name);
/* Iteration for listings, in name order: i < rb_registry_count(reg). */
size_t rb_registry_count(const rb_registry *reg);
const rb_stage_type *rb_registry_at(const rb_registry *reg, size_t i);

/* ---- documentation ------------------------------------------------------------------------------- */
/* A parameter's default and bounds as text, the same words in `roboest stages` and in rb_registry_markdown (numbers
 * "%g" under the C locale):
 *   rb_param_default_text  the default: 1, [0.001, 1e-05], "jerk" (quoted), false; "" when the listing shows none (a
 *                          required parameter, a string or number array without one, any string array)
 *   rb_param_bounds_text   the bounds, then the choices, joined by ", ": >= 1, <= 2, one of "jerk" "diagonal"; ""
 *                          when there are none
 * *out: caller frees with rb_free. RB_ENOMEM. */
int rb_param_default_text(const rb_param_spec *ps, char **out, rb_err *err);
int rb_param_bounds_text(const rb_param_spec *ps, char **out, rb_err *err);

/* The reference of every type in reg as Markdown, in name order. Per type: a heading "### `name`", the summary, the
 * doc, a table of the inputs (optional or not, input_docs), a table of the outputs (output_docs) and a table of the
 * parameters (kind, required or default, bounds and choices as above, doc then details); a type with a settle function
 * gets "Start-up settling time (the metrics' default `settle`): <settle_doc>" after its doc. Deterministic: the same
 * registry gives the same bytes in every locale. *out: caller frees with rb_free. RB_ENOMEM. */
int rb_registry_markdown(const rb_registry *reg, char **out, rb_err *err);

RB_API_END

#endif
